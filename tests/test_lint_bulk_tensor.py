"""The operands of the tensor copies (cp.async.bulk.tensor, cp.async.bulk.prefetch.tensor), linted as ptxas 13.0
takes them, probed line by line (the test marked ptxas runs every line below through it and compares with lint).

What ptxas 13.0 showed:
- the shared-memory address of a tensor copy ([dst] and [mbar] of a load, [src] of a store) written without
  brackets is a register of any type, .b8 to .f64 (lint took 32- and 64-bit integer ones only); in brackets it is an
  integer or bit register ("Use integer or bit only" for .f16, .f16x2, .f32, .f64). A .pred register there crashes
  ptxas (segmentation fault), as it does as the tensor map; lint refuses it.
- the tensor map of `[tensorMap, {c0, ...}]` is a register of any type but .pred (lint refused float ones as an
  address register); the coordinates are .b32, .u32 or .s32 registers or integer literals.
"""
from __future__ import annotations

import os
import sys
from typing import List, Tuple

import pytest

from ptxgen import lint as L

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _ptxas_lines import ptxas_rejected  # noqa: E402
from test_lint_vector_probes import needs_ptxas  # noqa: E402

M, O, T, TY, V = "PTX-E-MODIFIER", "PTX-E-OPERANDS", "PTX-E-TARGET", "PTX-E-TYPE", "PTX-E-VERSION"
REG_TYPES = ("pred", "b8", "u8", "s8", "b16", "u16", "s16", "f16", "f16x2", "b32", "u32", "s32", "f32", "b64", "u64",
             "s64", "f64")
_FLOAT = ("f16", "f16x2", "f32", "f64")


def module(lines: List[str], target: str = "sm_90a", version: str = "8.0") -> str:
    """A kernel with `lines` in its body, after registers %<type>_<0..3> of each type, a tensor map parameter tm, a
    .shared array s and a .global array g."""
    regs = "".join(f"\t.reg .{t} %{t}_<4>;\n" for t in REG_TYPES)
    return (f".version {version}\n.target {target}\n.address_size 64\n"
            f".visible .entry k(.param .align 64 .b8 tm[128])\n{{\n{regs}"
            "\t.shared .align 128 .b8 s[1024];\n\t.global .align 128 .b8 g[1024];\n"
            + "".join(f"\t{ln}\n" for ln in lines) + "\tret;\n}\n")


STORE = "cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group"
LOAD = "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
PREFETCH = "cp.async.bulk.prefetch.tensor.1d.L2.global.tile"


def _register_cases() -> List[Tuple[str, str, str, object]]:
    """(target, version, line, the error code lint gives or None) of each register type in each register operand of
    the tensor copies (.pred, on which ptxas crashes where it is taken without brackets, is in PRED_LINES)."""
    out = []
    for t in REG_TYPES:
        if t == "pred":
            continue
        r = f"%{t}_1"
        addr = TY if t in _FLOAT else None          # (lint's address-register rule, ptxas's "Use integer or bit")
        coord = None if t in ("b32", "u32", "s32") else TY
        for line, code in (
                (f"{STORE} [%u64_0, {{%b32_0}}], {r};", None),
                (f"{STORE} [%u64_0, {{%b32_0}}], [{r}];", addr),
                (f"{STORE} [{r}, {{%b32_0}}], [%b32_1];", None),
                (f"{STORE} [%u64_0, {{{r}}}], [%b32_1];", coord),
                (f"{LOAD} {r}, [%u64_0, {{%b32_0}}], [%b32_1];", None),
                (f"{LOAD} [%b32_1], [%u64_0, {{%b32_0}}], {r};", None),
                (f"{LOAD} [%b32_1], [{r}, {{%b32_0}}], [%b32_1];", None),
                (f"{PREFETCH} [{r}, {{%b32_0}}];", None)):
            out.append(("sm_90a", "8.0", line, code))
    out += [("sm_90a", "8.0", f"{STORE} [%u64_0, {{%b32_0}}], [%pred_1];", TY),
            ("sm_90a", "8.0", f"{STORE} [%u64_0, {{%b32_0}}], s;", None),
            ("sm_90a", "8.0", f"{STORE} [%u64_0, {{%b32_0}}], [s+16];", None),
            ("sm_90a", "8.0", f"{STORE} [%u64_0, {{%b32_0}}], [g];", O),
            ("sm_90a", "8.0", f"{STORE} [g, {{%b32_0}}], [%b32_1];", None),
            ("sm_90a", "8.0", f"{STORE} [s, {{%b32_0}}], [%b32_1];", O),
            ("sm_90a", "8.0", f"{STORE} [%u64_0, {{7}}], [%b32_1];", None)]
    return out


# where ptxas 13.0 crashes (a .pred register as a bare shared-memory address or as the tensor map): lint refuses them
PRED_LINES = [f"{STORE} [%u64_0, {{%b32_0}}], %pred_1;", f"{STORE} [%pred_1, {{%b32_0}}], [%b32_1];",
              f"{LOAD} %pred_1, [%u64_0, {{%b32_0}}], [%b32_1];"]

CASES = _register_cases()


def _errors(text):
    return [d for d in L.lint_ptx(text, "t.ptx") if d.severity == "error"]


@pytest.mark.parametrize("target,version,line,code", CASES, ids=[f"{t}:{v}:{ln}" for t, v, ln, _ in CASES])
def test_lint_verdict(target, version, line, code):
    ds = _errors(module([line], target, version))
    assert [d.code for d in ds] == ([code] if code else []), [str(d) for d in ds]


@pytest.mark.parametrize("line", PRED_LINES)
def test_a_predicate_is_no_shared_memory_address_or_tensor_map(line):
    (d,) = _errors(module([line]))
    assert d.code == TY and "%pred_1" in str(d) and ".pred" in d.message, str(d)


@pytest.mark.ptxas
@needs_ptxas
def test_every_line_agrees_with_ptxas():
    groups = {}
    for t, v, ln, code in CASES:
        groups.setdefault((t, v), []).append((ln, code))
    for (target, version), items in groups.items():
        lines = [ln for ln, _ in items]
        text = module(lines, target, version)
        first = text.split("\n").index("\t" + lines[0]) + 1
        rejected = {lines[i - first] for i in ptxas_rejected(text, target) if first <= i < first + len(lines)}
        want = {ln for ln, code in items if code}
        assert rejected == want, (target, version, sorted(rejected - want)[:10], sorted(want - rejected)[:10])
