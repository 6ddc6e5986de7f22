"""Modifiers and types written twice, as ptxas 13.0 takes them (the test marked ptxas runs every line through it).

What ptxas 13.0 showed: it takes .sync, .sat, .satfinite, .cc, .approx, .uni, .relu, .NaN and .shiftamt twice, as
flags (`bar.sync.sync`, `add.sat.sat.s32`, `mma.sync.sync.aligned...`, `elect.sync.sync`), and refuses every other
word given twice: "Duplicate .ftz modifier", "Duplicate .volatile modifier", "Multiple rounding modifiers specified",
"Multiple scope modifiers specified", "Multiple cache operation modifiers specified", "Multiple vector modifiers
specified", "Unknown modifier '.wide'", "Comparison qualifier is not allowed for instruction 'mul.lo'", and a type
twice ("Unexpected instruction types specified for 'brev'") but in the instructions that name two types
(`cvt.f32.f32`). lint took the repeated modifiers of the core instructions and refused a repeated .sync in the
tensor-core and async families. A third type on cvt, set, slct, dp4a or dp2a is "Unexpected instruction types"
(lint took it), and cvt.pack.sat takes .u16/.s16 from .s32 or .u2/.s2/.u4/.s4/.u8/.s8 from .s32 with .b32 (lint
refused every cvt.pack: "cvt has no modifier .pack"), with d, a and b 32- or 64-bit integer, bit or .f16x2 registers
(a and b literals too) and c any register of 32 bits or more (lint did not check them).
"""
from __future__ import annotations

import os
import sys

import pytest

from ptxgen import lint as L

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _ptxas_lines import agree_with_ptxas, kernel, reg_decls  # noqa: E402
from test_lint_vector_probes import needs_ptxas  # noqa: E402

# (line, ptxas 13.0 takes it)
LINES = [
    ('ld.global.global.ca.u32 %r1, [%rd9];', False),
    ('ld.global.ca.ca.u32 %r1, [%rd9];', False),
    ('ld.global.ca.u32.u32 %r1, [%rd9];', False),
    ('ld.volatile.volatile.global.u32 %r1, [%rd9];', False),
    ('ld.volatile.global.global.u32 %r1, [%rd9];', False),
    ('ld.volatile.global.u32.u32 %r1, [%rd9];', False),
    ('ld.relaxed.relaxed.gpu.global.u32 %r1, [%rd9];', False),
    ('ld.relaxed.gpu.gpu.global.u32 %r1, [%rd9];', False),
    ('ld.relaxed.gpu.global.global.u32 %r1, [%rd9];', False),
    ('ld.relaxed.gpu.global.u32.u32 %r1, [%rd9];', False),
    ('ld.global.global.nc.u32 %r1, [%rd9];', False),
    ('ld.global.nc.nc.u32 %r1, [%rd9];', False),
    ('ld.global.nc.u32.u32 %r1, [%rd9];', False),
    ('ld.global.global.v4.u32 {%r1,%r2,%r3,%r4}, [%rd9];', False),
    ('ld.global.v4.v4.u32 {%r1,%r2,%r3,%r4}, [%rd9];', False),
    ('ld.global.v4.u32.u32 {%r1,%r2,%r3,%r4}, [%rd9];', False),
    ('ld.global.global.L1::evict_last.u32 %r1, [%rd9];', False),
    ('ld.global.L1::evict_last.L1::evict_last.u32 %r1, [%rd9];', False),
    ('ld.global.L1::evict_last.u32.u32 %r1, [%rd9];', False),
    ('st.global.global.wb.u32 [%rd9], %r1;', False),
    ('st.global.wb.wb.u32 [%rd9], %r1;', False),
    ('st.global.wb.u32.u32 [%rd9], %r1;', False),
    ('st.release.release.gpu.global.u32 [%rd9], %r1;', False),
    ('st.release.gpu.gpu.global.u32 [%rd9], %r1;', False),
    ('st.release.gpu.global.global.u32 [%rd9], %r1;', False),
    ('st.release.gpu.global.u32.u32 [%rd9], %r1;', False),
    ('ld.global.global.L2::128B.u32 %r1, [%rd9];', False),
    ('ld.global.L2::128B.L2::128B.u32 %r1, [%rd9];', False),
    ('ld.global.L2::128B.u32.u32 %r1, [%rd9];', False),
    ('mul.wide.wide.u32 %rd1, %r1, %r2;', False),
    ('mul.wide.u32.u32 %rd1, %r1, %r2;', False),
    ('mul.lo.lo.u32 %r1, %r2, %r3;', False),
    ('mul.lo.u32.u32 %r1, %r2, %r3;', False),
    ('mad.hi.hi.u32 %r1, %r2, %r3, %r4;', False),
    ('mad.hi.u32.u32 %r1, %r2, %r3, %r4;', False),
    ('add.sat.sat.s32 %r1, %r2, %r3;', True),
    ('add.sat.s32.s32 %r1, %r2, %r3;', False),
    ('add.cc.cc.u32 %r1, %r2, %r3;', True),
    ('add.cc.u32.u32 %r1, %r2, %r3;', False),
    ('add.rn.rn.ftz.f32 %f1, %f2, %f3;', False),
    ('add.rn.ftz.ftz.f32 %f1, %f2, %f3;', False),
    ('add.rn.ftz.f32.f32 %f1, %f2, %f3;', False),
    ('div.approx.approx.ftz.f32 %f1, %f2, %f3;', True),
    ('div.approx.ftz.ftz.f32 %f1, %f2, %f3;', False),
    ('div.approx.ftz.f32.f32 %f1, %f2, %f3;', False),
    ('div.full.full.f32 %f1, %f2, %f3;', False),
    ('div.full.f32.f32 %f1, %f2, %f3;', False),
    ('rcp.rn.rn.f32 %f1, %f2;', False),
    ('rcp.rn.f32.f32 %f1, %f2;', False),
    ('cvt.rn.rn.sat.f32.f64 %f1, %fd1;', False),
    ('cvt.rn.sat.sat.f32.f64 %f1, %fd1;', True),
    ('cvt.rzi.rzi.s32.f32 %r1, %f1;', False),
    ('shf.l.l.wrap.b32 %r1, %r2, %r3, %r4;', False),
    ('shf.l.wrap.wrap.b32 %r1, %r2, %r3, %r4;', False),
    ('shf.l.wrap.b32.b32 %r1, %r2, %r3, %r4;', False),
    ('bra.uni.uni L1;', True),
    ('setp.lt.lt.and.s32 %p1, %r1, %r2, %p2;', False),
    ('setp.lt.and.and.s32 %p1, %r1, %r2, %p2;', False),
    ('setp.lt.and.s32.s32 %p1, %r1, %r2, %p2;', False),
    ('atom.global.global.add.u32 %r1, [%rd9], %r2;', False),
    ('atom.global.add.add.u32 %r1, [%rd9], %r2;', False),
    ('atom.global.add.u32.u32 %r1, [%rd9], %r2;', False),
    ('atom.relaxed.gpu.gpu.global.cas.b32 %r1, [%rd9], %r2, %r3;', False),
    ('atom.relaxed.gpu.global.cas.cas.b32 %r1, [%rd9], %r2, %r3;', False),
    ('atom.relaxed.gpu.global.cas.b32.b32 %r1, [%rd9], %r2, %r3;', False),
    ('red.global.global.add.u32 [%rd9], %r2;', False),
    ('red.global.add.add.u32 [%rd9], %r2;', False),
    ('red.global.add.u32.u32 [%rd9], %r2;', False),
    ('membar.gl.gl;', False),
    ('fence.acq_rel.acq_rel.gpu;', False),
    ('fence.acq_rel.gpu.gpu;', False),
    ('cvta.to.to.global.u64 %rd1, %rd9;', False),
    ('cvta.to.global.global.u64 %rd1, %rd9;', False),
    ('cvta.to.global.u64.u64 %rd1, %rd9;', False),
    ('shfl.sync.sync.bfly.b32 %r1, %r2, 1, 31, -1;', True),
    ('shfl.sync.bfly.bfly.b32 %r1, %r2, 1, 31, -1;', False),
    ('shfl.sync.bfly.b32.b32 %r1, %r2, 1, 31, -1;', False),
    ('vote.sync.sync.ballot.b32 %r1, %p1, -1;', True),
    ('vote.sync.ballot.ballot.b32 %r1, %p1, -1;', False),
    ('vote.sync.ballot.b32.b32 %r1, %p1, -1;', False),
    ('bar.sync.sync 0;', True),
    ('min.relu.relu.s32 %r1, %r2, %r3;', True),
    ('min.relu.s32.s32 %r1, %r2, %r3;', False),
    ('ex2.approx.approx.ftz.f32 %f1, %f2;', True),
    ('ex2.approx.ftz.ftz.f32 %f1, %f2;', False),
    ('ex2.approx.ftz.f32.f32 %f1, %f2;', False),
    ('sqrt.rn.rn.f32 %f1, %f2;', False),
    ('sqrt.rn.f32.f32 %f1, %f2;', False),
    ('prmt.b32.b32.f4e %r1, %r2, %r3, %r4;', False),
    ('prmt.b32.f4e.f4e %r1, %r2, %r3, %r4;', False),
    ('redux.sync.sync.add.u32 %r1, %r2, -1;', True),
    ('redux.sync.add.add.u32 %r1, %r2, -1;', False),
    ('redux.sync.add.u32.u32 %r1, %r2, -1;', False),
    ('mov.b32.b32 %r1, %r2;', False),
    ('selp.b32.b32 %r1, %r2, %r3, %p1;', False),
    ('testp.finite.finite.f32 %p1, %f1;', False),
    ('testp.finite.f32.f32 %p1, %f1;', False),
    ('abs.ftz.ftz.f32 %f1, %f2;', False),
    ('abs.ftz.f32.f32 %f1, %f2;', False),
    ('elect.sync.sync %r1|%p1, -1;', True),
    ('wgmma.fence.fence.sync.aligned;', False),
    ('wgmma.fence.sync.sync.aligned;', True),
    ('wgmma.fence.sync.aligned.aligned;', False),
    ('mbarrier.init.init.shared.b64 [%r1], 1;', False),
    ('mbarrier.init.shared.shared.b64 [%r1], 1;', False),
    ('mbarrier.init.shared.b64.b64 [%r1], 1;', False),
    ('fence.proxy.proxy.async.shared::cta;', False),
    ('fence.proxy.async.async.shared::cta;', False),
    ('fence.proxy.async.shared::cta.shared::cta;', False),
    ('cp.async.async.ca.shared.global [%r1], [%rd9], 4;', False),
    ('cp.async.ca.ca.shared.global [%r1], [%rd9], 4;', False),
    ('cp.async.ca.shared.shared.global [%r1], [%rd9], 4;', False),
    ('cp.async.ca.shared.global.global [%r1], [%rd9], 4;', False),
    ('ldmatrix.sync.sync.aligned.m8n8.x1.shared.b16 {%r1}, [%r2];', True),
    ('ldmatrix.sync.aligned.m8n8.m8n8.x1.shared.b16 {%r1}, [%r2];', False),
    ('ldmatrix.sync.aligned.m8n8.x1.x1.shared.b16 {%r1}, [%r2];', False),
    ('ldmatrix.sync.aligned.m8n8.x1.shared.b16.b16 {%r1}, [%r2];', False),
    ('barrier.cluster.cluster.arrive.relaxed.aligned;', False),
    ('barrier.cluster.arrive.arrive.relaxed.aligned;', False),
    ('barrier.cluster.arrive.relaxed.relaxed.aligned;', False),
    ('barrier.cluster.arrive.relaxed.aligned.aligned;', False),
    ('setmaxnreg.inc.inc.sync.aligned.u32 200;', False),
    ('setmaxnreg.inc.sync.sync.aligned.u32 200;', True),
    ('setmaxnreg.inc.sync.aligned.aligned.u32 200;', False),
    ('setmaxnreg.inc.sync.aligned.u32.u32 200;', False),
    ('griddepcontrol.wait.wait;', False),
    ('cvt.rn.satfinite.satfinite.e4m3x2.f32 %h1, %f1, %f2;', True),
    ('min.NaN.NaN.f32 %f1, %f2, %f3;', True),
    ('min.xorsign.xorsign.abs.bf16 %h1, %h2, %h3;', False),
    ('min.xorsign.abs.abs.bf16 %h1, %h2, %h3;', False),
    ('bfind.shiftamt.shiftamt.u32 %r1, %r2;', True),
    ('add.noftz.noftz.bf16 %h1, %h2, %h3;', False),
    ('shf.r.clamp.clamp.b32 %r1, %r2, %r3, %r4;', False),
    ('call.uni.uni f;', True),
    ('ret.uni.uni;', True),
    ('bar.sync.aligned.aligned 0;', False),
    ('bar.warp.sync.sync -1;', True),
    ('mul24.lo.lo.u32 %r1, %r2, %r3;', False),
    ('mad.lo.cc.cc.u32 %r1, %r2, %r3, %r4;', True),
    ('addc.cc.cc.u32 %r1, %r2, %r3;', True),
    ('cvt.rni.rni.f32.f32 %f1, %f2;', False),
    ('cvt.ftz.ftz.f32.f16 %f1, %h1;', False),
    ('tanh.approx.approx.f32 %f1, %f2;', True),
    ('fma.rn.sat.sat.f32 %f1, %f2, %f3, %f4;', True),
    ('set.eq.eq.u32.u32 %r1, %r2, %r3;', False),
    ('isspacep.global.global %p1, %rd1;', False),
    ('prefetch.global.global.L2 [%rd1];', False),
    ('prefetch.global.L2.L2 [%rd1];', False),
    ('activemask.b32.b32 %r1;', False),
    ('match.any.sync.sync.b32 %r1, %r2, -1;', True),
    ('fns.b32.b32 %r1, %r2, %r3, %r4;', False),
    ('brev.b32.b32 %r1, %r2;', False),
    ('cp.async.wait_all.wait_all;', False),
    ('nanosleep.u32.u32 %r1;', False),
    ('membar.sys.sys;', False),
    ('atom.global.exch.exch.b32 %r1, [%rd1], %r2;', False),
    ('red.add.add.global.u32 [%rd1], %r2;', False),
    ('ldu.global.global.u32 %r1, [%rd1];', False),
    ('st.global.L1::no_allocate.L1::no_allocate.u32 [%rd1], %r1;', False),
    ('mov.pred.pred %p1, %p2;', False),
    ('copysign.f32.f32 %f1, %f2, %f3;', False),
    ('lg2.approx.ftz.ftz.f32 %f1, %f2;', False),
    ('sin.approx.approx.f32 %f1, %f2;', True),
    ('rsqrt.approx.approx.f32 %f1, %f2;', True),
    ('cvt.rn.relu.relu.f16x2.f32 %r1, %f1, %f2;', True),
    ('vote.sync.sync.all.pred %p1, %p2, -1;', True),
    ('st.volatile.volatile.global.u32 [%rd1], %r1;', False),
    ('ld.global.nc.L1::no_allocate.L1::no_allocate.u32 %r1, [%rd1];', False),
    ('ld.global.L2::cache_hint.L2::cache_hint.u32 %r1, [%rd1], %rd2;', False),
    ('st.async.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%r1], %r2, [%r3];', False),
    ('cvta.global.global.u64 %rd1, %rd2;', False),
    ('abs.relu.relu.s16 %h1, %h2;', False),
]


# cvt.pack (which lint refused as "cvt has no modifier .pack") and instructions of two types given a third
LINES += [
    ("cvt.pack.sat.u8.s32.b32 %r1, %r2, %r3, %r4;", True), ("cvt.pack.sat.s8.s32.b32 %r1, %r2, %r3, %r4;", True),
    ("cvt.pack.sat.u4.s32.b32 %r1, %r2, %r3, %r4;", True), ("cvt.pack.sat.s2.s32.b32 %r1, %r2, %r3, %r4;", True),
    ("cvt.pack.sat.u16.s32 %r1, %r2, %r3;", True), ("cvt.pack.sat.s16.s32 %r1, %r2, %r3;", True),
    ("cvt.pack.u8.s32.b32 %r1, %r2, %r3, %r4;", False), ("cvt.sat.pack.u8.s32.b32 %r1, %r2, %r3, %r4;", False),
    ("cvt.pack.sat.u16.s32.b32 %r1, %r2, %r3, %r4;", False), ("cvt.pack.sat.u8.u32.b32 %r1, %r2, %r3, %r4;", False),
    ("cvt.pack.sat.f16.s32 %r1, %r2, %r3;", False), ("cvt.pack.sat.rn.u8.s32.b32 %r1, %r2, %r3, %r4;", False),
    ("cvt.pack.sat.u8.s32.b32 %r1, %r2, %r3;", False), ("cvt.pack.sat.u16.s32 %r1, %r2, %r3, %r4;", False),
    ("cvt.pack.sat.s4.s32.b32 %r1, %r2;", False),
    ("cvt.rzi.s32.s32.f32 %r1, %f1;", False), ("cvt.rzi.s32.u32.f32 %r1, %f1;", False),
    ("cvt.u32.u32.u32 %r1, %r2;", False), ("cvt.f32.f32 %f1, %f2;", True), ("cvt.rn.f16x2.f32 %r1, %f1, %f2;", True),
    ("set.eq.u32.u32.u32 %r1, %r2, %r3;", False), ("set.eq.u32.u32 %r1, %r2, %r3;", True),
    ("slct.u32.s32.s32 %r1, %r2, %r3, %r4;", False), ("slct.u32.s32 %r1, %r2, %r3, %r4;", True),
    ("dp4a.u32.u32.u32 %r1, %r2, %r3, %r4;", False), ("dp4a.u32.u32 %r1, %r2, %r3, %r4;", True),
    ("dp2a.lo.u32.u32.u32 %r1, %r2, %r3, %r4;", False), ("dp2a.lo.u32.u32 %r1, %r2, %r3, %r4;", True),
]


def test_cvt_pack_needs_ptx_isa_6_5_and_says_what_to_write():
    text = module(["cvt.pack.sat.u8.s32.b32 %r1, %r2, %r3, %r4;"]).replace(".version 8.6", ".version 6.4").replace(
        "sm_90a", "sm_75")
    (d,) = [d for d in L.lint_ptx(text, "t.ptx") if d.severity == "error"]
    assert d.code == "PTX-E-VERSION" and "cvt.pack needs PTX ISA 6.5" in d.message
    (d,) = [d for d in L.lint_ptx(module(["cvt.pack.u8.s32.b32 %r1, %r2, %r3, %r4;"]), "t.ptx") if d.severity == "error"]
    assert d.notes == ("write cvt.pack.sat.u8.s32.b32",)


def module(lines):
    return (".version 8.6\n.target sm_90a\n.address_size 64\n.visible .func f() { ret; }\n"
            ".visible .entry k(.param .u64 p)\n{\n"
            "\t.reg .b16 %h<4>;\n\t.reg .b32 %r<9>;\n\t.reg .f32 %f<9>;\n\t.reg .b64 %rd<10>;\n\t.reg .f64 %fd<3>;\n"
            "\t.reg .pred %p<3>;\n\tld.param.u64 %rd9, [p];\n\tmov.u64 %rd1, %rd9;\nL1:\n"
            + "".join(f"\t{ln}\n" for ln in lines) + "\tret;\n}\n")


@pytest.mark.parametrize("line,ok", LINES, ids=[ln for ln, _ in LINES])
def test_lint_verdict(line, ok):
    errs = [d for d in L.lint_ptx(module([line]), "t.ptx") if d.severity == "error"]
    assert (not errs) == ok, [str(d) for d in errs]


def test_the_message_names_the_word_and_says_write_it_once():
    (d,) = [d for d in L.lint_ptx(module(["ld.global.nc.nc.u32 %r1, [%rd9];"]), "t.ptx") if d.severity == "error"]
    assert d.code == "PTX-E-MODIFIER" and ".nc is written twice" in d.message and d.notes == ("write .nc once",)
    assert (d.loc.line, d.loc.col) == (16, 2)


@pytest.mark.ptxas
@needs_ptxas
def test_every_line_agrees_with_ptxas():
    agree_with_ptxas(LINES, module)


# cvt.pack's operand registers, as ptxas 13.0 takes them: d, a and b a 32- or 64-bit integer or bit register or a
# .f16x2 one (no .f32, .f64, 16-bit or .pred register), a and b an integer literal too; c any register of 32 bits or
# more (.f32 and .f64 too) or a literal; d no literal ("Result register required"). lint checked none of them.
PACK_REGS = {"b16": "%hb", "u16": "%hu", "s16": "%hs", "b32": "%rb", "u32": "%ru", "s32": "%rs", "f32": "%fs",
             "b64": "%db", "u64": "%du", "s64": "%ds", "f64": "%fd", "pred": "%p", "f16": "%fh", "f16x2": "%fx"}
_INT = {"b32", "u32", "s32", "b64", "u64", "s64", "f16x2"}
PACK_TAKES = ({"d": _INT, "a": _INT | {"imm"}, "b": _INT | {"imm"}, "c": _INT | {"f32", "f64", "imm"}})


def _pack_lines():
    out = []
    for form, base in (("cvt.pack.sat.s16.s32", ["%rb0", "%rs1", "%rs2"]),
                       ("cvt.pack.sat.u8.s32.b32", ["%rb0", "%rs1", "%rs2", "%rb3"]),
                       ("cvt.pack.sat.s2.s32.b32", ["%rb0", "%rs1", "%rs2", "%rb3"])):
        for k, slot in enumerate("dabc"[:len(base)]):
            for t in [*PACK_REGS, "imm"]:
                ops = list(base)
                ops[k] = "7" if t == "imm" else PACK_REGS[t] + "1"
                out.append((f"{form} {', '.join(ops)};", t in PACK_TAKES[slot]))
    return out


PACK_LINES = _pack_lines()


def pack_module(lines):
    return kernel(lines, "sm_90a", "8.6", reg_decls(*((t, r.lstrip("%"), 4) for t, r in PACK_REGS.items())))


def test_cvt_pack_operand_registers():
    wrong = []
    for line, ok in PACK_LINES:
        errs = [d for d in L.lint_ptx(pack_module([line]), "t.ptx") if d.severity == "error"]
        if (not errs) != ok or errs and errs[0].code not in ("PTX-E-TYPE", "PTX-E-OPERANDS"):
            wrong.append((line, [str(d) for d in errs]))
    assert not wrong, wrong[:5]
    (d,) = L.lint_ptx(pack_module(["cvt.pack.sat.u8.s32.b32 %rb0, %fs1, %rs2, %rb3;"]), "t.ptx")
    assert d.code == "PTX-E-TYPE" and "%fs1 is a .f32 register" in d.message and (d.loc.line, d.loc.col) == (20, 32)


@pytest.mark.ptxas
@needs_ptxas
def test_cvt_pack_operand_registersagree_with_ptxas():
    agree_with_ptxas(PACK_LINES, pack_module)
