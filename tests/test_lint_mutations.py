"""ptxas as the oracle of `ptxgen lint` on mutated real PTX.

Compiler output (the nvcc corpus for sm_80, sm_89, sm_90a and sm_100a, and the Triton-style file) is mutated line by line with a
fixed seed: one register operand swapped for a register of another declared type or for a literal
(integer, 0f, 0d, decimal), or the instruction's type swapped for another. Every mutated line goes
through ptxas 13.0 (rejected lines blanked until the file assembles) and through `lint_ptx`; the two
verdicts must agree line by line.

Left out, as the linter does not model them: the texture and surface instructions, wmma and sm_100's
tcgen05 (their operand types), registers inside an address (a 32-bit one makes ptxas stop without a line number)
and in a predicate pair (`%r1|%p1`, no place for a literal). ptxas takes a .pred register inside a mov.b64 vector, which no rule of the PTX ISA allows; the
linter refuses it (KNOWN, as in tests/test_lint_core_probes.py).

What this found (fixed): cvt of .bN types, shfl of types other than .b32, mov packs of non-bit types,
decimal float literals for .b32 operands, literals in written tensor-core vectors, mixed register kinds
in mov's packs, float registers and literals as a warp's member mask, match's types, atom/red.add.s64.
"""
from __future__ import annotations

import os
import random
import re
import shutil
import sys
from typing import Dict, List, Tuple

import pytest

from ptxgen import lint as L

sys.path.insert(0, os.path.dirname(__file__))
from _ptxas_lines import ptxas_rejected  # noqa: E402

pytestmark = [pytest.mark.ptxas, pytest.mark.skipif(shutil.which("ptxas") is None,
                                                    reason="needs ptxas (CUDA toolkit) on PATH")]

HERE = os.path.dirname(__file__)
FILES = [f"nvcc/{name}.{arch}.O3.ptx" for arch in ("sm_90a", "sm_80", "sm_89", "sm_100a")
         for name in ("misc", "coop_cluster", "tma_mbarrier", "tensor_core")] + ["hand/triton_style.sm_90a.ptx"]
SEEDS = tuple(range(8))
REG_TYPES = ("b16", "u16", "s16", "f16", "b32", "u32", "s32", "f32", "b64", "u64", "s64", "f64", "pred", "f16x2")
LITERALS = ("1", "-1", "0f3F800000", "1.5", "0d3FF0000000000000")
INSTR_TYPES = ("b8", "u8", "s8", "b16", "u16", "s16", "f16", "b32", "u32", "s32", "f32", "b64", "u64", "s64", "f64")
SKIP = ("wmma", "tex", "tld4", "suld", "sust", "sured", "suq", "txq", "tcgen05")
KNOWN = re.compile(r"^mov\.b64 .*%z_pred_1|^(and|or|xor|not)\.pred .*%z_f16x2_1|^(ld|st)\.\S*\.v[24]\.\S* .*%z_pred_1"
                   r"|\{(?:-?[0-9.]+|0[fd][0-9A-Fa-f]+)\}")

_INSTR = re.compile(r"^([a-z][\w.:]*)\s+(.*);$")
_REG = re.compile(r"%[a-z]+\d+")
_TYPE = re.compile(r"\.(b|u|s|f)(8|16|32|64)\b")


def mutate(text: str, seed: int) -> Tuple[str, Dict[int, str]]:
    """The text with probe registers %z_<type>_<n> declared in each function and about half its plain
    instruction lines mutated; {line number: what was done}."""
    rnd = random.Random(seed)
    src = text.split("\n")
    lines: List[str] = []
    for i, line in enumerate(src):
        lines.append(line)
        if line.strip() == "{" and i and src[i - 1].strip().endswith(")"):
            lines += [f"\t.reg .{t} %z_{t}_<4>;" for t in REG_TYPES]
    muts: Dict[int, str] = {}
    for i, line in enumerate(lines):
        s = line.strip()
        m = _INSTR.match(s)
        if not m or s.startswith(("@", "ret", "bra", "call", "exit")) or m.group(1).startswith(SKIP):
            continue
        if rnd.random() < 0.5:
            continue
        opc, ops = m.groups()
        free = [r for r in _REG.finditer(ops) if ops[:r.start()].count("[") == ops[:r.start()].count("]")
                and "|" not in ops[max(r.start() - 1, 0):r.end() + 1]]
        kind = rnd.choice(("reg", "lit", "type"))
        if kind in ("reg", "lit") and free:
            r = rnd.choice(free)
            new = f"%z_{rnd.choice(REG_TYPES)}_1" if kind == "reg" else rnd.choice(LITERALS)
            out = f"{opc} {ops[:r.start()]}{new}{ops[r.end():]};"
        elif kind == "type" and _TYPE.search(opc):
            t = rnd.choice(list(_TYPE.finditer(opc)))
            out = f"{opc[:t.start()]}.{rnd.choice(INSTR_TYPES)}{opc[t.end():]} {ops};"
        else:
            continue
        if out != s:
            lines[i] = line[:len(line) - len(line.lstrip())] + out
            muts[i + 1] = out
    return "\n".join(lines), muts


@pytest.mark.parametrize("name", FILES)
def test_mutated_compiler_output_lints_as_ptxas_assembles_it(name):
    arch = re.search(r"\.(sm_\d+a?)\.", name).group(1)
    with open(os.path.join(HERE, "ptx", name)) as fh:
        text = fh.read()
    wrong, total = [], 0
    for seed in SEEDS:
        mutated, muts = mutate(text, seed)
        diags = L.lint_ptx(mutated, name)
        assert not any(d.code == "PTX-E-SYNTAX" for d in diags), [str(d) for d in diags][:3]
        by_lint = {d.loc.line: d.message for d in diags if d.severity == "error"}
        by_ptxas = ptxas_rejected(mutated, arch)
        total += len(muts)
        for ln, line in sorted(muts.items()):
            if (ln in by_ptxas) != (ln in by_lint) and not KNOWN.search(line):
                why = by_ptxas.get(ln) or by_lint.get(ln)
                wrong.append(f"{'ptxas rejects' if ln in by_ptxas else 'ptxas accepts'}: {line}  ({why})")
    assert total > 150
    assert not wrong, f"{len(wrong)} of {total} mutated lines:\n" + "\n".join(wrong[:40])
