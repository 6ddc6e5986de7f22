"""ptxas as the oracle of `ptxgen lint` on real PTX whose instructions' words and operand lists are mutated.

The nvcc corpus (sm_80, sm_90a, sm_100a) and the samples' own PTX are mutated line by line with fixed seeds: one
modifier dropped, written twice, swapped with its neighbour, or one added (a word the same instruction takes
elsewhere in the file, or any word of the file); or one operand dropped or written twice. Every mutated line goes
through ptxas 13.0 (rejected lines blanked until the file assembles) and through `lint_ptx`; the two verdicts must
agree line by line. (tests/test_lint_mutations.py swaps registers, literals and types instead.)

What this found (fixed, with a matrix test each): the arithmetic instructions' modifiers per type
(tests/test_lint_arith_modifiers.py), set/setp/slct types and .ftz (test_lint_compare_types.py), ld/st memory orders
(test_lint_memory_order.py), cvt's .ftz, .sat and packed forms (test_lint_cvt_modifiers.py), and the word groups of
membar, shf, redux, vote, shfl, match, bar, createpolicy and vector atom/red (test_lint_word_groups.py).
Left out as in test_lint_mutations.py: the texture and surface instructions, wmma and tcgen05.
"""
from __future__ import annotations

import collections
import os
import random
import re
import sys
from typing import Dict, Tuple

import pytest

from ptxgen import lint as L

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _ptxas_lines import ptxas_rejected  # noqa: E402
from _samples import load_sample  # noqa: E402
from test_lint_vector_probes import needs_ptxas  # noqa: E402

pytestmark = [pytest.mark.ptxas, needs_ptxas]

CORPUS = [f"nvcc/{name}.{arch}.O3.ptx" for arch in ("sm_90a", "sm_80", "sm_100a")
          for name in ("misc", "coop_cluster", "tma_mbarrier", "tensor_core", "bulk_store")]
SAMPLES = ("wgmma_tile", "tma_tile", "hgemm_mma", "block_reduce")
SEEDS = (3, 5)
SKIP = ("wmma", "tex", "tld4", "suld", "sust", "sured", "suq", "txq", "tcgen05")
KINDS = ("drop", "twice", "swap", "insert", "insert_any", "drop_operand", "operand_twice")
_INSTR = re.compile(r"^([a-z][\w.:]*)\s*(.*);$")


def mutate(text: str, seed: int) -> Tuple[str, Dict[int, str]]:
    """The text with about two in five of its plain instruction lines mutated; {line number: the new line}."""
    rnd = random.Random(seed)
    lines = text.split("\n")
    pool, every = collections.defaultdict(set), set()
    for line in lines:
        m = _INSTR.match(line.strip())
        if m:
            words = m.group(1).split(".")
            pool[words[0]].update(words[1:])
            every.update(words[1:])
    every_sorted = sorted(every)
    muts: Dict[int, str] = {}
    for i, line in enumerate(lines):
        s = line.strip()
        m = _INSTR.match(s)
        if not m or s.startswith(("@", "ret", "bra", "call", "exit")) or m.group(1).startswith(SKIP):
            continue
        if rnd.random() < 0.6:
            continue
        opc, ops = m.groups()
        w = opc.split(".")
        kind = rnd.choice(KINDS)
        if kind == "drop" and len(w) > 1:
            del w[rnd.randrange(1, len(w))]
        elif kind == "twice" and len(w) > 1:
            j = rnd.randrange(1, len(w))
            w.insert(j, w[j])
        elif kind == "swap" and len(w) > 2:
            j = rnd.randrange(1, len(w) - 1)
            w[j], w[j + 1] = w[j + 1], w[j]
        elif kind == "insert" and pool[w[0]]:
            w.insert(rnd.randrange(1, len(w) + 1), rnd.choice(sorted(pool[w[0]])))
        elif kind == "insert_any":
            w.insert(rnd.randrange(1, len(w) + 1), rnd.choice(every_sorted))
        elif kind in ("drop_operand", "operand_twice") and "," in ops and "{" not in ops:
            parts = [x.strip() for x in ops.split(",")]
            j = rnd.randrange(len(parts))
            if kind == "drop_operand":
                del parts[j]
            else:
                parts.insert(j, parts[j])
            ops = ", ".join(parts)
        else:
            continue
        out = ".".join(w) + (" " + ops if ops else "") + ";"
        if out != s:
            lines[i] = line[:len(line) - len(line.lstrip())] + out
            muts[i + 1] = out
    return "\n".join(lines), muts


def _disagreements(text: str, arch: str, name: str):
    wrong, total = [], 0
    for seed in SEEDS:
        mutated, muts = mutate(text, seed)
        diags = L.lint_ptx(mutated, name)
        by_lint = {d.loc.line: d.message for d in diags if d.severity == "error"}
        by_ptxas = ptxas_rejected(mutated, arch)
        total += len(muts)
        for ln, line in sorted(muts.items()):
            if (ln in by_ptxas) != (ln in by_lint):
                why = by_ptxas.get(ln) or by_lint.get(ln)
                wrong.append(f"seed {seed}: {'ptxas rejects' if ln in by_ptxas else 'ptxas accepts'}: {line}  ({why})")
    return wrong, total


@pytest.mark.parametrize("name", CORPUS)
def test_mutated_compiler_output_lints_as_ptxas_assembles_it(name):
    arch = re.search(r"\.(sm_\d+a?)\.", name).group(1)
    with open(os.path.join(HERE, "ptx", name)) as fh:
        wrong, total = _disagreements(fh.read(), arch, name)
    assert total > 50
    assert not wrong, f"{len(wrong)} of {total} mutated lines:\n" + "\n".join(wrong[:40])


@pytest.mark.parametrize("sample", SAMPLES)
def test_mutated_sample_ptx_lints_as_ptxas_assembles_it(sample):
    wrong, total = _disagreements(str(load_sample(sample).build().emit()), "sm_90a", sample + ".ptx")
    assert total > 20
    assert not wrong, f"{len(wrong)} of {total} mutated lines:\n" + "\n".join(wrong[:40])
