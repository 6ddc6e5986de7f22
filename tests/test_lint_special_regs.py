"""Special registers (%laneid, %tid.x, %globaltimer ...) as operands of the legality families, as ptxas 13.0 takes them.

- As an operand of its own, a special register is refused by every instruction of the families legality covers
  ("Special register argument not allowed for instruction ..."): mma, wgmma, the bulk and tensor copies, mbarrier,
  mapa, getctarank, st.async, red.async, multimem, textures and surfaces (tests/test_legality_ptxas.py probes a
  32-bit and a 64-bit one in every register operand of every form).
- As an element of a vector {...} it is taken, but where ptxas runs the instruction through code of its own: the A,
  B and C of m8n8k4 from sm_80 on, of the 4-bit forms and .b1 .xor.popc from sm_90 on and .b1 .and.popc from sm_100
  on ("Call argument '%laneid' has illegal state space"); the .f64 D of m16n8k4/k8/k16 from sm_100 on; the D and C
  of fp8 mma on sm_90 to sm_110 ("Special register argument not allowed for instruction 'add'").
- As the base of an address (`[%laneid]`): a scalar ld or ldu reads through one in every state space, and ldmatrix,
  stmatrix, cp.async and the bulk copies take one; the mbarrier family refuses it ("Illegal space for address
  operand"), prefetchu too; a vector ld, st, atom, red and prefetch crash ptxas (a segmentation fault).
- isspacep and cvta refuse a special register operand.
The cases below are ptxas's verdicts, recorded; with ptxas on PATH they are checked against it too.
"""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _ptxas_lines import (agree_with_ptxas, first_line, kernel, lint_disagrees_with_recorded, lint_errors,  # noqa: E402
                          ptxas_crashes, reg_decls)
from test_lint_vector_probes import needs_ptxas  # noqa: E402

DECLS = reg_decls(("b32", "r", 16), ("f32", "f", 16), ("b64", "rd", 8), ("f64", "fd", 8), ("s32", "s", 16),
                  ("f16x2", "h", 8), ("pred", "p", 4))
MMA_B1 = "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.{op}.popc {{%s0, %s1, %s2, %s3}}, {a}, {{%r4, %r5}}, " \
         "{{%s4, %s5, %s6, %s7}};"
M8N8K4 = "mma.sync.aligned.m8n8k4.row.row.f16.f16.f16.f16 {{%h0, %h1, %h2, %h3}}, {a}, {{%h4, %h5}}, {{%h0, %h1, %h2, %h3}};"
F64 = "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {d}, {{%fd4, %fd5}}, {{%fd6}}, {{%fd0, %fd1, %fd2, %fd3}};"
FP8 = "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {d}, {{%r0, %r1, %r2, %r3}}, {{%r4, %r5}}, " \
      "{{%f4, %f5, %f6, %f7}};"

# (line, ptxas 13.0 takes it) per target
CASES = {
    "sm_90a": [
        ("mapa.shared::cluster.u32 %r0, %r1, %laneid;", False),
        ("mapa.shared::cluster.u32 %r0, %r1, %r2;", True),
        ("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%r1], %laneid, [%r2];", False),
        ("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.b32 [%r1], {%laneid, %r3}, [%r2];", True),
        ("red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%r1], %laneid, [%r2];",
         False),
        ("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], %laneid, [%r2];", False),
        ("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], 256, [%r2];", True),
        ("mbarrier.arrive.shared::cta.b64 %rd0, [%r1], %laneid;", False),
        ("multimem.st.global.b64 [%rd1], %globaltimer;", False),
        (MMA_B1.format(op="xor", a="{%laneid, %r1, %r2, %r3}"), False),
        (MMA_B1.format(op="and", a="{%laneid, %r1, %r2, %r3}"), True),
        (M8N8K4.format(a="{%laneid, %h5}"), False),
        (F64.format(d="{%globaltimer, %fd1, %fd2, %fd3}"), True),
        (FP8.format(d="{%laneid, %f1, %f2, %f3}"), False),
        (FP8.format(d="{%r0, %f1, %f2, %f3}"), True),
        ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%laneid, %f1, %f2, %f3}, {%r0, %r1, %r2, %r3}, "
         "{%r4, %r5}, {%f4, %f5, %f6, %f7};", True),
        # as the base of an address
        ("ld.shared.u32 %r2, [%laneid];", True),
        ("ld.global.nc.u32 %r2, [%globaltimer+8];", True),
        ("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r2}, [%laneid];", True),
        ("cp.async.ca.shared.global [%laneid], [%rd1], 4;", True),
        ("mbarrier.init.shared.b64 [%laneid], 1;", False),
        ("mbarrier.try_wait.parity.shared.b64 %p1, [%laneid], 0;", False),
        ("prefetchu.L1 [%globaltimer];", False),
        ("isspacep.global %p1, %globaltimer;", False),
        ("cvta.global.u64 %rd2, %globaltimer;", False),
    ],
    "sm_100a": [
        (MMA_B1.format(op="and", a="{%laneid, %r1, %r2, %r3}"), False),
        (F64.format(d="{%globaltimer, %fd1, %fd2, %fd3}"), False),
        (F64.format(d="{%fd0, %fd1, %fd2, %fd3}"), True),
        (FP8.format(d="{%laneid, %f1, %f2, %f3}"), False),
    ],
    "sm_120a": [
        (FP8.format(d="{%laneid, %f1, %f2, %f3}"), True),
        (M8N8K4.format(a="{%laneid, %h5}"), False),
    ],
}


# a special register as the base of these addresses crashes ptxas 13.0 (a segmentation fault, no message), so each
# line is assembled on its own; lint refuses them
CRASH_LINES = ["st.shared.u32 [%laneid], %r1;", "st.global.v2.u32 [%globaltimer], {%r1, %r2};",
               "ld.global.v2.u32 {%r2, %r3}, [%globaltimer];", "atom.add.u32 %r2, [%laneid], 1;",
               "red.shared.add.u32 [%laneid+4], 1;", "prefetch.global.L2 [%globaltimer];"]


def make_for(target):
    return lambda lines: kernel(lines, target, "8.8" if target != "sm_120a" else "8.7", DECLS)


@pytest.mark.parametrize("target", sorted(CASES))
def test_lint_takes_what_ptxas_takes(target):
    wrong = lint_disagrees_with_recorded(CASES[target], make_for(target))
    assert not wrong, "\n".join(wrong)


@needs_ptxas
@pytest.mark.ptxas
@pytest.mark.parametrize("target", sorted(CASES))
def test_recorded_verdicts_are_ptxas(target):
    agree_with_ptxas(CASES[target], make_for(target), target)


def test_message_names_the_operand_and_what_to_do():
    text = make_for("sm_90a")(["mapa.shared::cluster.u32 %r0, %r1, %laneid;"])
    d = lint_errors(text)[first_line(text, ["mapa.shared::cluster.u32 %r0, %r1, %laneid;"])]
    assert d.code == "PTX-E-OPERANDS"
    assert "operand 3" in d.message and "special register" in d.message, d.message
    assert any("mov it into a register" in n for n in d.notes), d.notes
    assert d.loc.col == len("\tmapa.shared::cluster.u32 %r0, %r1, ") + 1, d.loc


def test_lint_refuses_what_crashes_ptxas():
    for ln in CRASH_LINES:
        text = make_for("sm_90a")([ln])
        d = lint_errors(text).get(first_line(text, [ln]))
        assert d is not None and "special register" in d.message and "crashes" in d.message, (ln, d)


@needs_ptxas
@pytest.mark.ptxas
def test_crash_lines_crash_ptxas():
    for ln in CRASH_LINES:
        assert ptxas_crashes(make_for("sm_90a")([ln]), "sm_90a"), ln
