"""Which lines of a PTX text ptxas rejects, for the tests that use ptxas as an oracle line by line."""
from __future__ import annotations

import os
import re
import subprocess
import tempfile
from typing import Dict


def kernel(lines, target: str = "sm_90a", version: str = "8.8", decls: str = "", end: str = "") -> str:
    """A module of one kernel k() whose body holds `decls` (declaration lines, each with its tab and newline), then
    `lines`, one a line after a tab, then `end` (such as a label line) and ret. Tests that count lines count from
    here: the body starts on line 6."""
    return (f".version {version}\n.target {target}\n.address_size 64\n.visible .entry k()\n{{\n{decls}"
            + "".join(f"\t{ln}\n" for ln in lines) + f"{end}\tret;\n}}\n")


def reg_decls(*regs) -> str:
    """Declaration lines of (type, name, count) register ranges: `.reg .b32 %r<8>;`."""
    return "".join(f"\t.reg .{t} %{name}<{n}>;\n" for t, name, n in regs)


def ptxas_rejected(text: str, arch: str) -> Dict[int, str]:
    """{line: ptxas's first message} of the lines ptxas rejects: each rejected line is blanked and the
    text assembled again until it assembles."""
    lines = text.split("\n")
    bad: Dict[int, str] = {}
    while True:
        rc, hit, out = ptxas_error_lines("\n".join(lines), arch)
        hit = {k: v for k, v in hit.items() if k not in bad and 0 < k <= len(lines)}
        if not hit:
            assert rc == 0, out
            return bad
        bad.update(hit)
        for k in hit:
            lines[k - 1] = "\t// rejected"


def ptxas_verdict(text: str, arch: str = "sm_90a", compile_only: bool = False) -> str:
    """"error" where ptxas rejects `text`, "warning" where it assembles it with a warning, else "ok"
    (`compile_only`: ptxas -c, no whole-program resolution)."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "k.ptx")
        with open(path, "w") as fh:
            fh.write(text)
        p = subprocess.run(["ptxas", *(["-c"] if compile_only else []), f"-arch={arch}", path, "-o", os.devnull],
                           capture_output=True, text=True, timeout=600)
    return "error" if p.returncode else "warning" if "warning" in p.stdout + p.stderr else "ok"


def lint_errors(text: str) -> dict:
    """{line: diagnostic} of the errors `ptxgen lint` reports on `text` (the last on each line)."""
    from ptxgen import lint
    return {d.loc.line: d for d in lint.lint_ptx(text, "t.ptx") if d.severity == "error"}


def first_line(text: str, lines) -> int:
    """The line number of `lines[0]`, the first of the lines a module holds in its body, one a line after a tab."""
    return text.split("\n").index("\t" + lines[0]) + 1


def agree_with_ptxas(cases, make, arch: str = "sm_90a") -> None:
    """The lines of `cases` ((line, ptxas takes it)) that ptxas rejects in modules `make(lines)` of them
    (rejected_lines) are exactly those recorded as not taken."""
    lines = [ln for ln, _ in cases]
    rejected = {lines[i] for i in rejected_lines(lines, make, arch)}
    want = {ln for ln, ok in cases if not ok}
    assert rejected == want, (sorted(rejected - want)[:10], sorted(want - rejected)[:10])


def ptxas_error_lines(text: str, arch: str):
    """(ptxas's exit status, {line: its first message} of the text's own lines, its output): ptxas reports errors
    inside the code it expands an instruction into at "<builtin>, line 7" or "<macro util>, line 9", which are not
    the text's."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "k.ptx")
        with open(path, "w") as fh:
            fh.write(text)
        p = subprocess.run(["ptxas", f"-arch={arch}", path, "-o", os.devnull], capture_output=True, text=True,
                           timeout=600)
    hit: Dict[int, str] = {}
    for m in re.finditer(re.escape(path) + r", line (\d+); (?:error|fatal)\s*:\s*(.*)", p.stdout + p.stderr):
        hit.setdefault(int(m.group(1)), m.group(2))
    return p.returncode, hit, p.stdout + p.stderr


def rejected_lines(lines, make, arch: str = "sm_90a") -> Dict[int, str]:
    """{index: ptxas's first message} of the `lines` ptxas rejects, each in a module `make(...)` of some of them:
    as ptxas_rejected, but that an error ptxas reports at none of the text's lines (inside code of its own it
    expands an instruction into, "<builtin>, line 7") or a crash ("crash") is found by halving the lines."""
    if not lines:
        return {}
    text = make(list(lines))
    first = first_line(text, list(lines))
    rc, hit, _ = ptxas_error_lines(text, arch)
    if rc == 0:
        return {}
    own = {i - first: m for i, m in hit.items() if 0 <= i - first < len(lines)}
    if not own:
        if len(lines) == 1:
            return {0: "crash" if rc < 0 else "an error at no line of the text"}
        h = len(lines) // 2
        out = rejected_lines(lines[:h], make, arch)
        out.update({i + h: m for i, m in rejected_lines(lines[h:], make, arch).items()})
        return out
    rest = [i for i in range(len(lines)) if i not in own]
    own.update({rest[i]: m for i, m in rejected_lines([lines[i] for i in rest], make, arch).items()})
    return own


def lint_disagrees_with_ptxas(lines, make, arch: str = "sm_90a") -> list:
    """The lines of one module `make(lines)` (its body holds them in order, one a line) on which lint's verdict is
    not ptxas's (rejected_lines), each with the side that rejects it and why."""
    text = make(lines)
    first = first_line(text, lines)
    by_ptxas = {i + first: m for i, m in rejected_lines(list(lines), make, arch).items()}
    by_lint = lint_errors(text)
    return [f"{'ptxas rejects' if i in by_ptxas else 'ptxas takes'}: {ln}  ({by_ptxas.get(i) or by_lint[i].message})"
            for i, ln in enumerate(lines, first) if (i in by_ptxas) != (i in by_lint)]


def lint_disagrees_with_recorded(cases, make) -> list:
    """The cases ((line, ptxas takes it), ptxas's verdict recorded) on which lint's verdict differs, in one module
    `make(lines)` whose body holds the lines in order, one a line: each with what lint said of it."""
    lines = [ln for ln, _ in cases]
    text = make(lines)
    errs = lint_errors(text)
    return [f"{'takes' if ok else 'refuses'} {ln}: {errs[i].message if i in errs else 'lint takes it'}"
            for i, (ln, ok) in enumerate(cases, first_line(text, lines)) if (i not in errs) != ok]


def ptxas_crashes(text: str, target: str, tries: int = 1) -> bool:
    """Whether ptxas dies of a signal (a segmentation fault) on `text` in one of `tries` runs; False where it rejected
    or took it."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "k.ptx")
        with open(path, "w") as fh:
            fh.write(text)
        for _ in range(tries):
            p = subprocess.run(["ptxas", f"-arch={target}", path, "-o", os.devnull], capture_output=True, text=True,
                               timeout=120)
            if p.returncode < 0:
                return True
            if p.returncode != 0:
                return False
    return False


def lint_reports_crashes(lines, make) -> dict:
    """lint reports an error at each of `lines` (a module `make(lines)` holds them in order, one a line) and at no
    other line, each saying that ptxas crashes; {line: diagnostic}."""
    text = make(lines)
    first = first_line(text, lines)
    errs = lint_errors(text)
    assert sorted(errs) == list(range(first, first + len(lines))), errs
    assert all("crashes" in d.message for d in errs.values()), [d.message for d in errs.values()]
    return errs


def each_crashes_ptxas(lines, make, arch: str = "sm_90a") -> None:
    """ptxas dies of a signal on each of `lines`, alone in a module `make([line])`."""
    for ln in lines:
        assert ptxas_crashes(make([ln]), arch), ln
