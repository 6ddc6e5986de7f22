"""The three-way differential tests' common part (tests/test_lint_mma_sp.py, _wgmma_sp.py, _mma_kind.py): every line
of each (target, version) case through ptxas, lint and the builder, and the lines on which lint or the builder
disagrees with ptxas."""
from typing import Callable, Dict, List, Optional, Sequence

from ptxgen import lint as L


def lint_first_errors(text: str, first: int, n: int) -> List[Optional[str]]:
    """For the n body lines of `text` from line `first` on, lint's first error (code and message), or None."""
    out: Dict[int, str] = {}
    for d in L.lint_ptx(text, "t.ptx"):
        if d.severity == "error":
            out.setdefault(d.loc.line, f"{d.code}: {d.message}")
    return [out.get(first + i) for i in range(n)]


def collect(cases: Dict, ptxas_verdicts: Callable, lint_verdicts: Callable, builder_verdict: Callable) -> list:
    """(target, version, line, ptxas's error, lint's error, (the builder can write it, its error)) for each case's
    lines, once each."""
    rows = []
    for (target, version), lines in sorted(cases.items()):
        lines = list(dict.fromkeys(lines))
        for text, by_ptxas, by_lint in zip(lines, ptxas_verdicts(lines, target, version),
                                           lint_verdicts(lines, target, version)):
            rows.append((target, version, text, by_ptxas, by_lint, builder_verdict(text, target, version)))
    return rows


def _says(p: Optional[str], yes: str) -> str:
    return yes if p is None else f"refuses it ({p})"


def lint_misses(rows: Sequence[tuple], short: Callable[[str], str] = str) -> List[str]:
    """The rows on which lint and ptxas disagree, in words."""
    return [f"{t} {v}: {short(text)}: ptxas {_says(p, 'takes it')}, lint {_says(li, 'takes it')}"
            for t, v, text, p, li, _ in rows if (p is None) != (li is None)]


def builder_misses(rows: Sequence[tuple], short: Callable[[str], str] = str) -> List[str]:
    """The rows the builder can write on which it and ptxas disagree, in words."""
    return [f"{t} {v}: {short(text)}: ptxas {_says(p, 'takes it')}, the builder {_says(b[1], 'writes it')}"
            for t, v, text, p, _, b in rows if b[0] and (p is None) != (b[1] is None)]
