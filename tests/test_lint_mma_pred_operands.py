""".pred registers in the fragments of the integer and fp8 forms of mma.sync and mma.sp, as ptxas 13.0 takes them.

What ptxas 13.0 showed, where lint disagreed: A and B of the 8-bit integer forms (.s8/.u8, mixed too) of mma.sync at
m16n8k16 and m16n8k32 and of mma.sp, and of the .b1 forms with .and.popc, take .pred registers (lint refused them as
"holds .pred registers"); m8n8k16's A and B do not, nor those of .xor.popc, the 4-bit and the fp8 forms, nor any
form's C and D.
"""
from __future__ import annotations

import os
import shutil
import sys

import pytest

import ptxgen as pg
from ptxgen import LegalityError
from ptxgen.types import b32, pred, s32

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _ptxas_lines import agree_with_ptxas, lint_disagrees_with_ptxas, ptxas_verdict  # noqa: E402
from test_lint_vector_probes import needs_ptxas  # noqa: E402

# (opcode tail after mma / mma.sp::ordered_metadata, registers of A, B, C/D, whether sparse, whether A/B take .pred)
FORMS = []
for at in ("s8", "u8"):
    for bt in ("s8", "u8"):
        FORMS += [(f".sync.aligned.m8n8k16.row.col.s32.{at}.{bt}.s32", 1, 1, 2, False, False),
                  (f".sync.aligned.m16n8k16.row.col.s32.{at}.{bt}.s32", 2, 1, 4, False, True),
                  (f".sync.aligned.m16n8k32.row.col.satfinite.s32.{at}.{bt}.s32", 4, 2, 4, False, True),
                  (f".sync.aligned.m16n8k32.row.col.s32.{at}.{bt}.s32", 2, 2, 4, True, True),
                  (f".sync.aligned.m16n8k64.row.col.s32.{at}.{bt}.s32", 4, 4, 4, True, True)]
FORMS += [(".sync.aligned.m8n8k32.row.col.s32.s4.u4.s32", 1, 1, 2, False, False),
          (".sync.aligned.m16n8k32.row.col.s32.u4.u4.s32", 2, 1, 4, False, False),
          (".sync.aligned.m16n8k64.row.col.s32.s4.s4.s32", 4, 2, 4, False, False),
          (".sync.aligned.m16n8k64.row.col.s32.s4.s4.s32", 2, 2, 4, True, False),
          (".sync.aligned.m16n8k128.row.col.s32.u4.u4.s32", 4, 4, 4, True, False),
          (".sync.aligned.m8n8k128.row.col.xor.popc.s32.b1.b1.s32", 1, 1, 2, False, False),
          (".sync.aligned.m16n8k128.row.col.xor.popc.s32.b1.b1.s32", 2, 1, 4, False, False),
          (".sync.aligned.m16n8k256.row.col.xor.popc.s32.b1.b1.s32", 4, 2, 4, False, False),
          (".sync.aligned.m8n8k128.row.col.and.popc.s32.b1.b1.s32", 1, 1, 2, False, True),
          (".sync.aligned.m16n8k128.row.col.and.popc.s32.b1.b1.s32", 2, 1, 4, False, True),
          (".sync.aligned.m16n8k256.row.col.and.popc.s32.b1.b1.s32", 4, 2, 4, False, True),
          (".sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32", 4, 2, 4, False, False),
          (".sync.aligned.m16n8k64.row.col.f32.e4m3.e4m3.f32", 4, 4, 4, True, False)]


def vec(prefix, n, first):
    return "{" + ",".join(f"%{prefix}{first + i}" for i in range(n)) + "}"


def lines_and_verdicts():
    out = []
    for tail, na, nb, nd, sparse, pred_ab in FORMS:
        head = "mma.sp::ordered_metadata" if sparse else "mma"
        acc = "f" if ".f32." in tail else "r"
        extra = ", %r30, 0" if sparse else ""
        for where in ("", "a", "b", "c", "d"):
            d = vec("p" if where == "d" else acc, nd, 0)
            a = vec("p" if where == "a" else "r", na, 10)
            b = vec("p" if where == "b" else "r", nb, 20)
            c = vec("p" if where == "c" else acc, nd, 0)
            ok = where == "" or (where in ("a", "b") and pred_ab)
            out.append((f"{head}{tail} {d}, {a}, {b}, {c}{extra};", ok))
    return out


def module(lines):
    return (".version 8.7\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n"
            "\t.reg .pred %p<40>;\n\t.reg .b32 %r<40>;\n\t.reg .f32 %f<8>;\n"
            + "".join(f"\t{ln}\n" for ln in lines) + "\tret;\n}\n")


@needs_ptxas
def test_the_recorded_verdicts_are_ptxas_s():
    agree_with_ptxas(lines_and_verdicts(), module)


@needs_ptxas
def test_lint_takes_what_ptxas_takes_and_only_that():
    assert lint_disagrees_with_ptxas([ln for ln, _ in lines_and_verdicts()], module) == []


def test_the_matrix_has_pred_operands_on_both_sides_of_the_rule():
    cases = lines_and_verdicts()
    assert sum(ok for ln, ok in cases if "%p" in ln) == 2 * (4 * 4 + 3)    # (A, B) x (4 pairs x 4 forms + 3 .and forms)
    assert sum(not ok for ln, ok in cases if "%p" in ln) > 50


@pytest.mark.parametrize("shape,ok", [("m16n8k32", True), ("m16n8k16", True), ("m8n8k16", False)])
def test_the_builder_asks_the_same_rule(shape, ok):
    m = pg.Module("sm_90a")
    k = m.entry("k")
    op = f"mma.sync.aligned.{shape}.row.col.s32.s8.s8.s32"
    na = {"m16n8k32": 4, "m16n8k16": 2, "m8n8k16": 1}[shape]
    nb = {"m16n8k32": 2, "m16n8k16": 1, "m8n8k16": 1}[shape]
    nd = 2 if shape == "m8n8k16" else 4
    a, b, c = k.regs(pred, na), k.regs(b32, nb), k.regs(s32, nd)
    call = lambda: k.mma_sync(shape, c, a, b, c, atype="s8", ctype="s32")  # noqa: E731
    if ok:
        call()
        text = str(m.emit())
        assert op in text
        if shutil.which("ptxas"):
            assert ptxas_verdict(text) == "ok"
    else:
        with pytest.raises(LegalityError, match=r"operand 2 \(a\) holds \.pred registers"):
            call()


def test_the_builder_refuses_pred_in_a_4_bit_form():
    m = pg.Module("sm_90a")
    k = m.entry("k")
    a, b, c = k.regs(pred, 2), k.regs(b32, 1), k.regs(s32, 4)
    with pytest.raises(LegalityError, match=r"operand 2 \(a\) holds \.pred registers"):
        k.mma_sync("m16n8k32", c, a, b, c, atype="s4", ctype="s32")


def test_the_builder_takes_pred_in_b1_and_popc_only():
    m = pg.Module("sm_90a")
    k = m.entry("k")
    a, b, c = k.regs(pred, 2), k.regs(b32, 1), k.regs(s32, 4)
    k.mma_sync("m16n8k128", c, a, b, c, atype="b1", ctype="s32", bitop="and")
    text = str(m.emit())
    assert "mma.sync.aligned.m16n8k128.row.col.s32.b1.b1.s32.and.popc" in text
    if shutil.which("ptxas"):
        assert ptxas_verdict(text) == "ok"
    with pytest.raises(LegalityError, match=r"operand 2 \(a\) holds \.pred registers"):
        k.mma_sync("m16n8k128", c, a, b, c, atype="b1", ctype="s32", bitop="xor")
