"""The builder, one instruction method at a time: the PTX each call writes, and the errors it raises.

Pure unit tests (no toolchain). Every error test checks the exception class, its stable `.code`, the
message verbatim and that `.loc` is this file at the line of the offending call.
"""
import functools

import numpy as np
import pytest

import ptxgen as pg
from ptxgen import (BuildError, LegalityError, b16, b32, b64, b128, bf16, bf16x2, e4m3x2, f16, f16x2, f32, f64,
                    pred, s16, s32, s64, tf32, u8, u16, u32, u64)
from ptxgen.builder import mem

from _build_checks import here, raises_at, texts


def kernel(target="sm_90a", version=None):
    m = pg.Module(target, version=version)
    return m, m.entry("k")


def last(k):
    return texts(k)[-1]


# fn() must raise exactly `cls` with this code and message, located at `line` of this file
raises = functools.partial(raises_at, __file__)


# ----------------------------------------------------------------------------------------------- registers
def test_registers_of_each_class():
    m, k = kernel()
    regs = [k.reg(t) for t in (pred, b16, u16, s16, f16, bf16, b32, u32, s32, f32, f16x2, tf32, b64, u64, s64,
                               f64)]
    assert [r.name for r in regs] == ["%p0", "%rs0", "%rs1", "%rs2", "%h0", "%h1", "%r0", "%r1", "%r2", "%f0",
                                      "%hh0", "%r3", "%rd0", "%rd1", "%rd2", "%fd0"]
    assert [r.type for r in regs][:3] == [pred, b16, u16]
    frag = k.regs(f32, 3)
    assert isinstance(frag, pg.RegArray) and frag.type is f32 and [r.name for r in frag] == ["%f1", "%f2", "%f3"]


# ----------------------------------------------------------------------------------------------- arithmetic
def test_integer_and_float_arithmetic_text():
    m, k = kernel()
    u, s, f, d = k.reg(u32), k.reg(s32), k.reg(f32), k.reg(f64)
    h, h2, b = k.reg(f16), k.reg(f16x2), k.reg(bf16)
    n = len(k.fn.body)
    k.add(u, 1)
    k.sub(s, s, sat=True)
    k.add(f, f, rnd="rz", ftz=True, sat=True)
    k.add(h, h, rnd="rn")
    k.add(b, b)                              # bf16 add is sm_90
    k.mul(u, u, mode="hi")
    k.mul(s, 8, mode="wide")
    k.mul(h2, h2, ftz=True)
    k.mad(u, u, u, mode="lo")
    k.mad(s, s, s, mode="hi", sat=True)
    k.mad(f, f, f, rnd="rm")
    k.fma(d, d, d, rnd="rp")
    k.fma(b, b, b, rnd="rz")                 # every rounding exists for fma.bf16
    k.div(s, 3)
    k.div(f, f, approx=True, ftz=True)
    k.div(f, f, full=True)
    k.div(d, d, rnd="rn")
    k.rem(u, 10)
    k.min(h2, h2)
    k.max(f, 0.0, ftz=True)
    k.abs(s)
    k.neg(d)
    k.rcp(f, approx=True)
    k.rcp(d, approx=True, ftz=True)
    k.sqrt(f, rnd="rn")
    k.ex2(f, ftz=True)
    k.ex2(b, ftz=True)
    assert texts(k, n) == [
        "add.u32 %r2, %r0, 1;",
        "sub.sat.s32 %r3, %r1, %r1;",
        "add.rz.ftz.sat.f32 %f1, %f0, %f0;",
        "add.rn.f16 %h2, %h0, %h0;",
        "add.bf16 %h3, %h1, %h1;",
        "mul.hi.u32 %r4, %r0, %r0;",
        "mul.wide.s32 %rd0, %r1, 8;",
        "mul.ftz.f16x2 %hh1, %hh0, %hh0;",
        "mad.lo.u32 %r5, %r0, %r0, %r0;",
        "mad.hi.sat.s32 %r6, %r1, %r1, %r1;",
        "mad.rm.f32 %f2, %f0, %f0, %f0;",
        "fma.rp.f64 %fd1, %fd0, %fd0, %fd0;",
        "fma.rz.bf16 %h4, %h1, %h1, %h1;",
        "div.s32 %r7, %r1, 3;",
        "div.approx.ftz.f32 %f3, %f0, %f0;",
        "div.full.f32 %f4, %f0, %f0;",
        "div.rn.f64 %fd2, %fd0, %fd0;",
        "rem.u32 %r8, %r0, 10;",
        "min.f16x2 %hh2, %hh0, %hh0;",
        "max.ftz.f32 %f5, %f0, 0f00000000;",
        "abs.s32 %r9, %r1;",
        "neg.f64 %fd3, %fd0;",
        "rcp.approx.f32 %f6, %f0;",
        "rcp.approx.ftz.f64 %fd4, %fd0;",
        "sqrt.rn.f32 %f7, %f0;",
        "ex2.approx.ftz.f32 %f8, %f0;",
        "ex2.approx.ftz.bf16 %h5, %h1;",
    ]


@pytest.mark.parametrize("call, hint", [
    (lambda k: k.add(k.reg(f64), k.reg(f64), ftz=True), "drop ftz=True"),          # .ftz: not on .f64
    (lambda k: k.add(k.reg(u32), k.reg(u32), sat=True), "drop sat=True"),          # .sat: .s32 only
    (lambda k: k.mad(k.reg(f32), k.reg(f32), k.reg(f32)), "pass e.g. rnd='rn'"),   # mad.f32 needs a rounding
])
def test_arith_modifier_errors_name_the_argument(call, hint):
    """The shared modifier rule (isa_core.ModError) says which words broke it; the builder turns them into the
    keyword argument to drop or to pass."""
    m, k = kernel()
    with pytest.raises(LegalityError) as ei:
        call(k)
    assert ei.value.notes[-1] == hint, ei.value.notes


def test_mod_error_kinds_and_words():
    from ptxgen import isa_core as C
    e = C.arith_modifier_error("add", "f64", ["ftz"])
    assert (e.kind, e.words, e.message) == ("extra", ("ftz",), "add.f64 takes no .ftz")
    e = C.arith_modifier_error("add", "f32", ["rn", "rz"])
    assert (e.kind, e.words) == ("choice", ("rn", "rz"))
    e = C.arith_modifier_error("mad", "f32", [])
    assert (e.kind, e.words) == ("missing", ("rn", "rz", "rm", "rp"))
    assert C.arith_modifier_error("add", "f32", ["rn", "ftz", "sat"]) is None
    e = C.packed_cvt_error("f16x2", "f64", ["rn"])
    assert (e.kind, e.words) == ("form", ()) and "does not exist" in e.message


def test_logic_and_bit_instructions_text():
    m, k = kernel()
    u, d, p, q = k.reg(u32), k.reg(u64), k.reg(pred), k.reg(pred)
    n = len(k.fn.body)
    x = k.and_(u, 0xFF)                      # integer registers are used through their .bN view
    k.or_(d, d)
    k.xor(p, q)
    k.and_(p, 1)
    k.not_(u)
    k.shl(u, 3)
    k.shr(k.reg(s32), u)
    k.bfe(u, 8, 4)
    k.bfi(u, u, 0, 8)
    k.prmt(u, u, 0x3210, mode="f4e")
    k.popc(d)
    k.clz(u)
    k.brev(d)
    assert x.type is u32                     # ... and keep their own type for the result
    assert texts(k, n) == [
        "and.b32 %r1, %r0, 255;",
        "or.b64 %rd1, %rd0, %rd0;",
        "xor.pred %p2, %p0, %p1;",
        "and.pred %p3, %p0, 1;",
        "not.b32 %r2, %r0;",
        "shl.b32 %r3, %r0, 3;",
        "shr.s32 %r5, %r4, %r0;",
        "bfe.u32 %r6, %r0, 8, 4;",
        "bfi.b32 %r7, %r0, %r0, 0, 8;",
        "prmt.b32.f4e %r8, %r0, %r0, 12816;",
        "popc.b64 %r9, %rd0;",
        "clz.b32 %r10, %r0;",
        "brev.b64 %rd2, %rd0;",
    ]


def test_comparison_and_selection_text():
    m, k = kernel()
    u, s, f, h, p = k.reg(u32), k.reg(s32), k.reg(f32), k.reg(f16), k.reg(pred)
    n = len(k.fn.body)
    k.setp("hs", u, 4)
    k.setp("lt", s, s, bool_op="and", c=~p, dst_neg=k.reg(pred))
    k.setp("nan", f, f, ftz=True)
    k.setp("ltu", h, h, ftz=True)
    k.selp(f, 1.0, p)
    k.selp(h, h, ~p)                         # there is no selp.f16: halves are selected as .b16
    k.set("gt", s, 0, dtype=f32)
    assert texts(k, n) == [
        "setp.hs.u32 %p1, %r0, 4;",
        "setp.lt.and.s32 %p3|%p2, %r1, %r1, !%p0;",
        "setp.nan.ftz.f32 %p4, %f0, %f0;",
        "setp.ltu.ftz.f16 %p5, %h0, %h0;",
        "selp.f32 %f1, %f0, 0f3F800000, %p0;",
        "selp.b16 %h1, %h0, %h0, !%p0;",
        "set.gt.f32.s32 %f2, %r1, 0;",
    ]


# ----------------------------------------------------------------------------------------------- data movement
def test_guarded_mov():
    m, k = kernel()
    r, p = k.reg(u32), k.setp("eq", k.tid.x, 0)
    n = len(k.fn.body)
    k.mov(0, dst=r, guard=p)
    k.mov(r, dst=r, guard=~p)
    assert texts(k, n) == ["@%p0 mov.u32 %r0, 0;", "@!%p0 mov.u32 %r0, %r0;"]
    from ptxgen.ir import SpecialReg
    with pytest.raises(BuildError, match="special register"):
        k.mov(SpecialReg("%tid.x", u32), dst=r, guard=p)


def test_mov_pack_unpack_cvta_text():
    m, k = kernel()
    sm = k.shared("buf", 64)
    n = len(k.fn.body)
    k.mov(-1, type=s32)
    k.mov(1, type=pred)
    k.mov(sm)                                # the address of a shared variable
    k.mov(sm, type=u32)
    w = k.pack([k.reg(f32), k.reg(f32)])
    parts = k.unpack(w)
    k.unpack(k.reg(b32), type=f16)
    g = k.cvta(k.reg(u64), "global", to=True)
    k.cvta(sm, "shared")
    assert w.type is b64 and [r.type for r in parts] == [b32, b32]
    assert g.type is u64
    assert texts(k, n) == [
        "mov.s32 %r0, -1;",
        "mov.pred %p0, 1;",
        "mov.u64 %rd0, buf;",
        "mov.u32 %r1, buf;",
        "mov.b64 %rd1, {%f0, %f1};",
        "mov.b64 {%r2, %r3}, %rd1;",
        "mov.b32 {%h0, %h1}, %r4;",
        "cvta.to.global.u64 %rd3, %rd2;",
        "cvta.shared.u64 %rd4, buf;",
    ]


def test_ld_st_forms_text():
    m, k = kernel()
    g = k.reg(u64)
    sa = k.mov(k.shared("buf", 256), type=u32)
    n = len(k.fn.body)
    k.ld(g, u8)
    k.ld(mem(g, 8), f32, vec=4)
    k.ld(g, f16, vec=2, cache="cs")
    k.ld(g, u32, nc=True, cache="ca")
    k.ld(g, u32, sem="acquire", scope="gpu")
    k.ld(mem(sa, -4), u16, space="shared")
    k.st(g, 7, type=u8)
    k.st(mem(g, 16), [k.reg(f64), 0.5], cache="wt")
    k.st(g, k.reg(bf16x2), sem="release", scope="cluster")
    k.st(sa, k.reg(u32), space="shared::cta", sem="volatile")
    assert texts(k, n) == [
        "ld.global.u8 %r1, [%rd0];",
        "ld.global.v4.f32 {%f0, %f1, %f2, %f3}, [%rd0+8];",
        "ld.global.cs.v2.b16 {%h0, %h1}, [%rd0];",
        "ld.global.nc.ca.u32 %r2, [%rd0];",
        "ld.acquire.gpu.global.u32 %r3, [%rd0];",
        "ld.shared.u16 %rs0, [%r0+-4];",
        "st.global.u8 [%rd0], 7;",
        "st.global.wt.v2.f64 [%rd0+16], {%fd0, 0d3FE0000000000000};",
        "st.release.cluster.global.b32 [%rd0], %hh0;",
        "st.volatile.shared::cta.u32 [%r0], %r4;",
    ]


def test_cvt_forms_text():
    m, k = kernel()
    f, d, h, s, u = k.reg(f32), k.reg(f64), k.reg(f16), k.reg(s32), k.reg(u32)
    n = len(k.fn.body)
    k.cvt(f, s32, rnd="rni")                 # float -> int: an integer rounding
    k.cvt(s, f32, rnd="rn")                  # int -> float: a float rounding
    k.cvt(f, f16, rnd="rn", relu=True)       # narrowing float: a float rounding
    k.cvt(h, f32)                            # widening float: exact, no rounding
    k.cvt(f, f32, rnd="rzi", ftz=True)       # same type: round to an integral value
    k.cvt(d, u8, rnd="rzi", sat=True)        # 8-bit results live in 32-bit registers
    k.cvt(u, u16, sat=True)
    k.cvt(f, f16x2, b=f, rnd="rz")           # a goes to the upper half
    k.cvt(f, e4m3x2, b=f, rnd="rn", satfinite=True)
    k.cvt(k.reg(e4m3x2), f16x2, rnd="rn", relu=True)
    k.cvt(f, tf32, rnd="rna")
    assert texts(k, n) == [
        "cvt.rni.s32.f32 %r2, %f0;",
        "cvt.rn.f32.s32 %f1, %r0;",
        "cvt.rn.relu.f16.f32 %h1, %f0;",
        "cvt.f32.f16 %f2, %h0;",
        "cvt.rzi.ftz.f32.f32 %f3, %f0;",
        "cvt.rzi.sat.u8.f64 %r3, %fd0;",
        "cvt.sat.u16.u32 %rs0, %r1;",
        "cvt.rz.f16x2.f32 %hh0, %f0, %f0;",
        "cvt.rn.satfinite.e4m3x2.f32 %rs1, %f0, %f0;",
        "cvt.rn.relu.f16x2.e4m3x2 %hh1, %rs2;",
        "cvt.rna.tf32.f32 %r4, %f0;",
    ]


# ----------------------------------------------------------------------------------------------- warp, atomics, sync
def test_warp_atomic_barrier_text():
    m, k = kernel()
    u, f, d, p, g = k.reg(u32), k.reg(f32), k.reg(u64), k.reg(pred), k.reg(u64)
    n = len(k.fn.body)
    v, q = k.shfl_sync(f, 1, 31, "bfly", pred_out=True)
    k.vote_sync("ballot", ~p)
    k.vote_sync("any", p, membermask=0xF)
    mask, same = k.match_sync("all", d)
    k.atom("add", g, 1, type=u32)
    k.atom("cas", g, u, 0)                   # compare-and-swap is typed .b32
    k.atom("add", g, k.reg(f16x2), sem="relaxed", scope="gpu")
    k.atom("max", mem(k.reg(u32), 4), u, space="shared")
    k.red("add", g, f, sem="release", scope="sys")
    k.red("or", g, d)
    k.bar_sync(0)
    k.bar_sync(1, 64)
    k.barrier_sync(2, u)
    k.bar_arrive(3, 32)
    k.barrier_arrive(3, 32, aligned=False)
    k.membar("sys")
    k.fence("acq_rel", "cluster")
    k.fence("sc", "cta")
    assert (v.type, q.type, mask.type, same.type) == (f32, pred, b32, pred)
    assert texts(k, n) == [
        "shfl.sync.bfly.b32 %f1|%p1, %f0, 1, 31, 4294967295;",
        "vote.sync.ballot.b32 %r1, !%p0, 4294967295;",
        "vote.sync.any.pred %p2, %p0, 15;",
        "match.all.sync.b64 %r2|%p3, %rd0, 4294967295;",
        "atom.global.add.u32 %r3, [%rd1], 1;",
        "atom.global.cas.b32 %r4, [%rd1], %r0, 0;",
        "atom.relaxed.gpu.global.add.noftz.f16x2 %hh1, [%rd1], %hh0;",
        "atom.shared.max.u32 %r6, [%r5+4], %r0;",
        "red.release.sys.global.add.f32 [%rd1], %f0;",
        "red.global.or.b64 [%rd1], %rd0;",
        "bar.sync 0;",
        "bar.sync 1, 64;",
        "barrier.sync.aligned 2, %r0;",
        "bar.arrive 3, 32;",
        "barrier.arrive 3, 32;",
        "membar.sys;",
        "fence.acq_rel.cluster;",
        "fence.sc.cta;",
    ]


def test_a_label_is_placed_once_and_only_in_its_own_function():
    m, k = kernel()
    end = k.label("end")                    # made and placed here
    first = here() - 1
    dup = f"label {end} is already placed (at {__file__}:{first})"
    e = raises(BuildError, "PTX-E-DUP-LABEL", dup, here() + 1,
               lambda: k.place(end))
    assert any("new_label()" in n for n in e.notes)
    later = k.new_label("later")
    k.place(later)
    placed = here() - 1
    raises(BuildError, "PTX-E-DUP-LABEL", f"label {later} is already placed (at {__file__}:{placed})", here() + 1,
           lambda: k.place(later))
    other = m.entry("other")
    raises(BuildError, "PTX-E-BUILD", f"label {later} was not made by other's new_label() or label()", here() + 1,
           lambda: other.place(later))
    k.ret()
    assert [str(st.label) for st in k.fn.body if type(st).__name__ == "LabelDef"] == [end.name, later.name]


def test_emit_refuses_a_branch_to_a_label_never_placed():
    m, k = kernel()
    lost = k.new_label("lost")
    p = k.setp("lt", k.tid.x, 4)
    line = here() + 1
    k.bra(lost, guard=p)
    k.ret()
    e = raises(BuildError, "PTX-E-LABEL", f"bra goes to label {lost}, which k never places", line,
               lambda: m.emit())
    assert any("new_label()" in n for n in e.notes)
    # a label that raw() text defines counts as placed
    m2, k2 = kernel()
    there = k2.new_label("there")
    k2.bra(there)
    k2.raw(f"{there}:")
    k2.ret()
    assert f"{there}:" in m2.emit().text


def test_special_registers_and_control_text():
    m, k = kernel()
    n = len(k.fn.body)
    k.tid.x
    k.nctaid.z
    k.sreg("%clock64")
    k.sreg("%cluster_ctarank")
    p = k.sreg("%is_explicit_cluster")
    lb = k.new_label("top")
    k.place(lb)
    k.bra(lb, guard=p, uni=True)
    k.exit(guard=~p)
    k.trap()
    k.ret(uni=True)
    assert p.type is pred
    assert texts(k, n) == [
        "mov.u32 %r0, %tid.x;",
        "mov.u32 %r1, %nctaid.z;",
        "mov.u64 %rd0, %clock64;",
        "mov.u32 %r2, %cluster_ctarank;",
        "mov.pred %p0, %is_explicit_cluster;",
        "@%p0 bra.uni $L_top_0;",
        "@!%p0 exit;",
        "trap;",
        "ret.uni;",
    ]


def test_every_special_register_reads_on_sm_90a():
    from ptxgen import SPECIAL_REGS
    m, k = kernel(version="8.1")
    for name, (ty, _) in SPECIAL_REGS.items():
        r = k.sreg(name)
        assert r.type is ty and last(k) == f"mov{ty.ptx} {r.name}, {name};"


# ----------------------------------------------------------------------------------------------- errors
def test_f32_register_in_an_add_u32():
    m, k = kernel()
    u, f = k.reg(u32), k.reg(f32)
    e = raises(BuildError, "PTX-E-TYPE", "b %f0 is a .f32 register; .u32 expected", here() + 1,
               lambda: k.add(u, f))
    assert e.notes == ("convert it first, e.g. cvt or mov.b32",)


def test_u64_register_in_a_u32_slot():
    m, k = kernel()
    u, d = k.reg(u32), k.reg(u64)
    raises(BuildError, "PTX-E-TYPE", "b %rd0 is a .u64 register; .u32 expected", here() + 1,
           lambda: k.add(u, d))
    raises(BuildError, "PTX-E-TYPE", "destination %rd0 is .u64; this instruction writes .u32", here() + 1,
           lambda: k.add(u, u, dst=d))


def test_register_from_another_kernel():
    m = pg.Module("sm_80")
    k1, k2 = m.entry("k1"), m.entry("k2")
    r = k1.reg(u32)
    raises(BuildError, "PTX-E-REG",
           "register %r0 belongs to .entry k1, not to .entry k2; registers cannot cross functions", here() + 1,
           lambda: k2.add(r, 1))


def test_mma_sync_with_wrong_register_type_and_count():
    m, k = kernel()
    a, b, c = k.regs(f32, 4), k.regs(b32, 2), k.regs(f32, 4)
    raises(LegalityError, "PTX-E-TYPE",
           "mma.sync with .f16 inputs: operand 2 (a) holds .f32 registers; .f16x2/.b32 expected", here() + 1,
           lambda: k.mma_sync("m16n8k16", c, a, b, c, atype="f16", ctype="f32"))
    a3 = k.regs(b32, 3)
    raises(LegalityError, "PTX-E-OPERANDS", "mma.sync with .f16 inputs: operand 2 (a) takes 4 registers, 3 given",
           here(), lambda: k.mma_sync("m16n8k16", c, a3, b, c, atype="f16", ctype="f32"))


@pytest.mark.parametrize("case", [
    ("mul without a mode", "PTX-E-FORM", "integer mul.s32 needs mode='lo', 'hi' or 'wide'",
     lambda k: k.mul(k.reg(s32), 2)),
    ("float mad without rounding", "PTX-E-FORM", "mad.f32 needs one of .rn, .rz, .rm or .rp",
     lambda k: k.mad(k.reg(f32), 2.0, 1.0)),
    ("cvt.rzi.f32.s32", "PTX-E-FORM", "cvt.f32.s32: rounding 'rzi' not allowed",
     lambda k: k.cvt(k.reg(s32), f32, rnd="rzi")),
    ("cvt.f32.f16 with a rounding", "PTX-E-FORM", "cvt.f32.f16: rounding 'rn' not allowed",
     lambda k: k.cvt(k.reg(f16), f32, rnd="rn")),
    ("cvt.f16.f32 without a rounding", "PTX-E-FORM", "cvt.f16.f32 needs a rounding mode",
     lambda k: k.cvt(k.reg(f32), f16)),
    ("shfl mode foo", "PTX-E-FORM", "shfl.sync mode must be one of up, down, bfly, idx, not 'foo'",
     lambda k: k.shfl_sync(k.reg(u32), 1, 31, "foo")),
    ("setp.lo on f32", "PTX-E-FORM", "setp.lo is not a comparison for .f32",
     lambda k: k.setp("lo", k.reg(f32), 1.0)),
    ("setp.lo on s32", "PTX-E-FORM", "setp.lo is not a comparison for .s32",
     lambda k: k.setp("lo", k.reg(s32), 1)),
    (".sat on add.u32", "PTX-E-FORM", "add.sat.u32: add.u32 takes no .sat",
     lambda k: k.add(k.reg(u32), 1, sat=True)),
    ("sqrt.approx.f64", "PTX-E-FORM", "sqrt.approx is .f32 only; use a rounding mode for .f64",
     lambda k: k.sqrt(k.reg(f64), approx=True)),
    ("e4m3x2 without satfinite", "PTX-E-FORM", "cvt.rn.e4m3x2.f32 requires .satfinite",
     lambda k: k.cvt(k.reg(f32), e4m3x2, b=k.reg(f32), rnd="rn")),
    ("red.acquire", "PTX-E-FORM", "red: semantic must be one of relaxed, release, not 'acquire'",
     lambda k: k.red("add", k.reg(u64), 1, type=u32, sem="acquire", scope="gpu")),
    ("ld.relaxed.nc", "PTX-E-FORM", "ld.relaxed cannot be combined with .nc",
     lambda k: k.ld(k.reg(u64), u32, sem="relaxed", scope="gpu", nc=True)),
    ("ld.v8.f16", "PTX-E-FORM", "ld.v8.b16 is not in the PTX ISA: .v8 is for 32-bit elements (a 256-bit access)",
     lambda k: k.ld(k.reg(u64), f16, vec=8)),
    ("st.v8.u8", "PTX-E-FORM", "st.v8.u8 is not in the PTX ISA: .v8 is for 32-bit elements (a 256-bit access)",
     lambda k: k.st(k.reg(u64), [k.reg(u16)] * 8, type=u8)),
    ("st.v8.f64", "PTX-E-FORM", "st.v8 of 64-bit elements is 512 bits; a load or store is at most 256 bits (ptxas: "
     "\"Vector type too large, exceeds 128 bit limit\"); use st.v4 (256 bits, sm_100) or st.v2 (128 bits)",
     lambda k: k.st(k.reg(u64), [k.reg(f64)] * 8)),
    ("ld.shared.v4.b64", "PTX-E-FORM", "ld.shared of 256 bits: a 256-bit load or store is of .global or a generic "
     "address (ptxas: \"global state space expected for feature '256 bit wide load/store'\"); write ld.global, "
     "or two 128-bit accesses", lambda k: k.ld(k.reg(u32), b64, vec=4, space="shared")),
    ("two return values", "PTX-E-FORM", "a .func returns at most one .param value, not 2",
     lambda k: k.module.func("f", rets=[("a", u32), ("b", u32)])),
])
def test_illegal_forms_raise_legality_errors(case):
    what, code, message, call = case
    m, k = kernel("sm_90a")
    # the offending builder call is the one in the case's lambda
    raises(LegalityError, code, message, call.__code__.co_firstlineno, lambda: call(k))


@pytest.mark.parametrize("case", [
    ("bf16 add on sm_80", "sm_80", None, "PTX-E-TARGET", "add.bf16 needs sm_90 or later (target is sm_80)",
     lambda k: k.add(k.reg(bf16), k.reg(bf16))),
    ("cluster register on sm_80", "sm_80", None, "PTX-E-TARGET", "%cluster_ctarank needs sm_90 (target is sm_80)",
     lambda k: k.sreg("%cluster_ctarank")),
    ("256-bit load on sm_90a", "sm_90a", None, "PTX-E-TARGET",
     "ld.v4.f64 (256-bit access) needs target sm_100 (module target is sm_90a)",
     lambda k: k.ld(k.reg(u64), f64, vec=4)),
    ("b128 at PTX 8.0", "sm_90a", None, "PTX-E-VERSION", ".b128 registers needs PTX ISA 8.3 (module .version is 8.0)",
     lambda k: k.reg(b128)),
    ("aggr_smem_size at PTX 8.0", "sm_90a", None, "PTX-E-VERSION",
     "%aggr_smem_size needs PTX ISA 8.1 (module .version is 8.0)", lambda k: k.sreg("%aggr_smem_size")),
    ("cvt.rn.tf32 on sm_80", "sm_80", None, "PTX-E-TARGET",
     "cvt.rn.tf32.f32 needs target sm_90 (module target is sm_80)",
     lambda k: k.cvt(k.reg(f32), tf32, rnd="rn")),
    ("shared::cluster on sm_80", "sm_80", None, "PTX-E-TARGET",
     ".shared::cluster needs target sm_90 (module target is sm_80)",
     lambda k: k.ld(k.reg(u32), u32, space="shared::cluster")),
    ("prefetch.tensormap on sm_80", "sm_80", None, "PTX-E-TARGET",
     "prefetch.tensormap needs target sm_90 or later (module target is sm_80)",
     lambda k: k.prefetch_tensormap(k.reg(u64))),
])
def test_target_and_version_gates(case):
    what, target, version, code, message, call = case
    m, k = kernel(target, version)
    raises(LegalityError, code, message, call.__code__.co_firstlineno, lambda: call(k))


def test_builder_errors_for_bad_values():
    m, k = kernel()
    raises(BuildError, "PTX-E-TYPE", "immediate 4294967296 does not fit in .u32", here() + 1,
           lambda: k.add(k.reg(u32), 1 << 32))
    raises(BuildError, "PTX-E-TYPE", "a .pred immediate is 0 or 1, not 2", here() + 1,
           lambda: k.mov(2, type=pred))
    raises(BuildError, "PTX-E-TYPE",
           "source: 1e+39 does not fit in .f32 (largest finite value 3.4028234663852886e+38)", here() + 1,
           lambda: k.mov(1e39, type=f32))
    raises(BuildError, "PTX-E-TYPE", "PTX has no .f16 immediates; mov the bit pattern into a register first",
           here(), lambda: k.add(k.reg(f16), 1.0))
    raises(BuildError, "PTX-E-TYPE",
           "there are no .u8 registers; use a wider type (e.g. u16/u32) for 8-bit and fp8 data", here() + 1,
           lambda: k.reg(u8))
    m2, k2 = kernel()
    raises(BuildError, "PTX-E-TYPE",
           "address register %r0 is 32-bit; a .global address in a module with .address_size 64 is a "
           "64-bit register", here(), lambda: k2.ld(k2.reg(u32), u32))
    raises(BuildError, "PTX-E-TYPE", "cvta works on .u64 addresses in a module with .address_size 64",
           here(), lambda: k.cvta(k.reg(u32), "shared", type=u32))
    raises(BuildError, "PTX-E-SPACE", "st.param needs a .param variable's address, not a register",
           here(), lambda: k.st(k.reg(u64), k.reg(f32), space="param"))
    raises(BuildError, "PTX-E-BUILD", "kernel name 'k' is already used in this module", here() + 1,
           lambda: m.entry("k"))
    raises(BuildError, "PTX-E-BUILD", "kernel name 'bad name' is not a PTX identifier ([A-Za-z_][A-Za-z0-9_$]*)",
           here(), lambda: m.entry("bad name"))


def test_a_refused_kernel_leaves_its_name_free():
    m = pg.Module("sm_90a")
    raises(BuildError, "PTX-E-BUILD", ".maxntid and .reqntid cannot both be given", here() + 1,
           lambda: m.entry("k", maxntid=256, reqntid=256))
    raises(BuildError, "PTX-E-BUILD", ".reqnctapercluster and .maxclusterrank cannot both be given", here() + 1,
           lambda: m.entry("k", reqnctapercluster=2, maxclusterrank=8))
    k = m.entry("k", maxntid=256)
    assert [f.name for f in m.ir.functions] == ["k"] and k.fn.directives == [".maxntid 256"]


def test_module_target_and_version_errors():
    raises(BuildError, "PTX-E-TARGET",
           "bad target 'sm90': expected sm_XY with an optional 'a' or 'f' suffix, e.g. 'sm_90a'", here() + 1,
           lambda: pg.Module("sm90"))
    raises(BuildError, "PTX-E-VERSION", "PTX ISA 7.0 does not know target sm_90a; it needs .version 8.0 or later",
           here(), lambda: pg.Module("sm_90a", version="7.0"))


def test_module_variables_and_their_initialisers():
    m = pg.Module("sm_80")
    a = m.global_var("a", u32, init=3)
    b = m.global_var("b", f64, 2, init=[0.5, float("inf")], space="const", align=16)
    assert a.decl() == ".visible .global .u32 a = 3;"
    assert b.decl() == ".const .align 16 .f64 b[2] = {0d3FE0000000000000, 0d7FF0000000000000};"
    e = raises(BuildError, "PTX-E-DECL", "a floating-point initial value for a .u32 variable (ptxas: \"Initial "
               "value type mismatch\")", here(), lambda: m.global_var("c", u32, 2, init=[1, 1.5]))
    assert e.notes == ("write an integer (1, not 1.0); a .b32 variable takes either",), e.notes
    raises(BuildError, "PTX-E-DECL", "3 elements in a list for a dimension of 2 of array c (ptxas: \"Greater number "
           "of elements in array initializer\")", here(), lambda: m.global_var("c", u32, 2, init=[1, 2, 3]))
    raises(BuildError, "PTX-E-DECL", "a {...} list where d takes a single value (ptxas: \"Initial value type "
           "mismatch\")", here(), lambda: m.global_var("d", u32, init=[1, 2]))
    raises(BuildError, "PTX-E-BUILD", "module variables live in .global or .const, not .shared", here() + 1,
           lambda: m.global_var("c", u32, space="shared"))
    assert m.global_var("c", u32, 2, init=[1, 2.0]).decl() == ".visible .global .u32 c[2] = {1, 2};"
    # checked as the declaration writes them: an integer for .f32 is written 0f...
    assert m.global_var("e", f32, 2, init=[1, 2]).decl() == ".visible .global .f32 e[2] = {0f3F800000, 0f40000000};"


def test_array_sizes_that_are_not_counts_are_refused():
    """A variable's size is a count: a name, a bool, a float or a negative number would be written into the
    declaration's brackets (`.local .b8 l[texref];`), which ptxas cannot read."""
    m, k = kernel()
    for bad in ("texref", True, 2.0, -4):
        raises(BuildError, "PTX-E-DECL", f"local array l: its size must be an int of at least 0, not {bad!r}", here() + 1,
               lambda: k.local("l", bad))
        raises(BuildError, "PTX-E-DECL", f"global array g: its size must be an int of at least 0, not {bad!r}", here() + 1,
               lambda: m.global_var("g", u32, bad))
    assert m.global_var("g", u32, np.int64(4)).decl() == ".visible .global .u32 g[4];"
    assert k.local("l", np.uint16(16)).decl() == ".local .align 8 .b8 l[16];"


def test_variable_types_ptxas_can_declare():
    m, k = kernel()
    e = raises(BuildError, "PTX-E-DECL", ".bf16 is an instruction type only; a .global declaration cannot have it "
               "(ptxas: syntax error)", here(), lambda: m.global_var("v", bf16, 4))
    assert e.notes == ("write .b16 instead: .bf16 values live in .b16 variables",), e.notes
    e = raises(BuildError, "PTX-E-DECL", ".bf16x2 is an instruction type only; a .shared declaration cannot have it "
               "(ptxas: syntax error)", here(), lambda: k.shared("v", 64, type=bf16x2))
    assert e.notes == ("write .b32 instead: .bf16x2 values live in .b32 variables",), e.notes
    e = raises(BuildError, "PTX-E-DECL", "a .const variable cannot be .pred: a predicate lives in a register (ptxas: "
               "\"Predicate variable must be in register state space\")", here() + 1,
               lambda: m.global_var("v", pred, space="const"))
    assert "declare it .reg .pred" in e.notes[0], e.notes
    raises(BuildError, "PTX-E-DECL", ".e4m3 is an instruction type only; a .shared declaration cannot have it (ptxas: "
           "\"Type .e4m3 may only be used as an instruction type\")", here(), lambda: k.shared("v", 64, type="e4m3"))
    raises(BuildError, "PTX-E-DECL", "a .param cannot be .pred: a predicate lives in a register (ptxas: \"Predicate "
           "variable must be in register space\")", here(), lambda: k.param("p", pred))
    # legality.initializer_error's .f16 rule, as lint reports it
    e = raises(BuildError, "PTX-E-DECL", "a .f16 variable takes no initial value (ptxas: \"No initial value is "
               "allowed for .f16 type\")", here(), lambda: m.global_var("v", f16, init=[1.0]))
    assert e.notes == ("declare it .b16 and give the bit pattern (0x3C00 is 1.0 in .f16)",), e.notes
    assert m.global_var("h", b16, init=[0x3C00]).decl() == ".visible .global .b16 h = 15360;"
    assert k.shared("hs", 64, type=f16).decl() == ".shared .align 16 .f16 hs[32];"


def test_f16x2_variables_take_each_elements_32_bits_as_ptxas_writes_them():
    """An .f16x2 element's initial value is one integer, its 32 bits, in braces (ptxas 13.0 takes a list per
    element and writes its values as 32-bit words: tests/test_lint_init_probes.py); a floating-point value or a
    second value per element it writes otherwise, so the builder refuses them as lint warns of them."""
    m = pg.Module("sm_90a")
    assert m.global_var("h", f16x2, init=0x40003C00).decl() == ".visible .global .f16x2 h = {1073757184};"
    assert m.global_var("t", f16x2, 2, init=[0x40003C00, 0], space="const").decl() == \
        ".const .f16x2 t[2] = {{1073757184}, {0}};"
    assert m.global_var("z", f16x2, init=[]).decl() == ".visible .global .f16x2 z = {};"
    e = raises(LegalityError, "PTX-W-MISCOMPILE", "ptxas 13.0 does not pack an .f16x2 initializer into halves: it "
               "writes its values one after another as 32-bit words, whatever the braces, a floating-point value as "
               "its .f32 bits (1.0 is 0x3F800000), not as two halves", here() + 1,
               lambda: m.global_var("v", f16x2, 2, init=[1.0, 2.0]))
    assert e.notes == ("give each element its 32 bits as one integer in braces, the first half low: `{0x40003C00}` "
                       "is (1.0, 2.0)",), e.notes
    raises(LegalityError, "PTX-W-MISCOMPILE", "ptxas 13.0 does not pack an .f16x2 initializer into halves: it writes "
           "its values one after another as 32-bit words, whatever the braces; a second value goes into the next "
           "element's word, or past the variable's end is dropped (`v[2] = {{1, 2}, {3}}` holds 1 and 2, and drops "
           "3)", here(), lambda: m.global_var("v", f16x2, init=[0x3C00, 0x4000]))
    raises(BuildError, "PTX-E-DECL", "3 elements in a list for a dimension of 2 of array v (ptxas: \"Greater number "
           "of elements in array initializer\")", here(), lambda: m.global_var("v", f16x2, 2, init=[1, 2, 3]))
    assert ".f16x2 v" not in m.emit().text


# ----------------------------------------------------------------------------------- composite helpers
def test_wgmma_descriptor_from_a_tile_or_its_fixed_bits():
    from ptxgen.ops.wgmma_desc import SmemTile
    tile = SmemTile(64, 64, "bf16", "K", "128B")
    m, k = kernel()
    a = k.reg(u32)
    n = len(k.fn.body)
    d = k.wgmma_descriptor(a, tile)
    assert d.type is b64
    assert texts(k, n) == ["shr.u32 %r1, %r0, 4;", "and.b32 %r2, %r1, 16383;", "cvt.u64.u32 %rd0, %r2;",
                           f"or.b64 %rd1, %rd0, {tile.fixed_bits()};"]
    n = len(k.fn.body)
    k.wgmma_descriptor(a, tile.fixed_bits())
    assert texts(k, n)[-1] == f"or.b64 %rd3, %rd2, {tile.fixed_bits()};"
    for bad in ("128B", -1, 1 << 64, True):
        with pytest.raises(BuildError, match="SmemTile"):
            k.wgmma_descriptor(a, bad)


def test_mbarrier_wait_loops_and_traps_after_the_timeout():
    m, k = kernel()
    bar = k.reg(u32)
    n = len(k.fn.body)
    k.mbarrier_wait(bar, parity=1)
    top = k.fn.body[n]
    assert type(top).__name__ == "LabelDef"
    assert texts(k, n) == ["mbarrier.try_wait.parity.shared.b64 %p0, [%r0], 1;", f"@!%p0 bra {top.label};"]
    n = len(k.fn.body)
    k.mbarrier_wait(bar, parity=k.reg(u32), timeout_cycles=1000)
    got = texts(k, n)
    assert got[0] == "mov.u64 %rd0, %clock64;" and got[1].startswith("mbarrier.try_wait.parity")
    assert "setp.gt.u64 %p2, %rd2, 1000;" in got and "@%p2 trap;" in got
    assert got[-1].startswith("bra ")            # back to the try_wait until the phase completes
    for bad in (0, -5, 1.5, True):
        with pytest.raises(BuildError, match="timeout_cycles"):
            k.mbarrier_wait(bar, parity=0, timeout_cycles=bad)


def test_mbarrier_wait_takes_a_memory_semantic_and_scope():
    # a wait for arrivals released by other CTAs of a cluster acquires at cluster scope
    m, k = kernel()
    bar = k.reg(u32)
    n = len(k.fn.body)
    k.mbarrier_wait(bar, parity=0, sem="acquire", scope="cluster")
    assert texts(k, n)[0] == "mbarrier.try_wait.parity.acquire.cluster.shared.b64 %p0, [%r0], 0;"
    for kw in ({"sem": "acquire"}, {"scope": "cluster"}):
        with pytest.raises(LegalityError, match="go together"):
            k.mbarrier_wait(bar, parity=0, **kw)
    with pytest.raises(LegalityError):
        k.mbarrier_wait(bar, parity=0, sem="release", scope="cluster")      # a wait does not release



def test_st_async_and_red_async_emit_their_forms():
    m, k = kernel(version="8.1")
    a, bar = k.reg(u32), k.reg(u32)
    v, f = k.reg(u32), k.regs(f32, 4)
    n = len(k.fn.body)
    k.st_async(a, v, bar, b32)
    k.st_async(a, list(f), bar, f32, weak=True)
    k.st_async(a, 7, bar, "u32")
    k.red_async("add", a, v, bar, u32)
    k.red_async("max", a, v, bar, "s32")
    k.st_async(a, 1.5, bar, f32)
    tx = "shared::cluster.mbarrier::complete_tx::bytes"
    assert texts(k, n) == [f"st.async.{tx}.b32 [%r0], %r2, [%r1];",
                           f"st.async.weak.{tx}.v4.f32 [%r0], {{%f0, %f1, %f2, %f3}}, [%r1];",
                           f"st.async.{tx}.u32 [%r0], 7, [%r1];",
                           f"red.async.relaxed.cluster.{tx}.add.u32 [%r0], %r2, [%r1];",
                           f"red.async.relaxed.cluster.{tx}.max.s32 [%r0], %r2, [%r1];",
                           f"st.async.{tx}.f32 [%r0], 0f3FC00000, [%r1];"]


def test_st_async_and_red_async_refuse_what_ptxas_refuses():
    m, k = kernel(version="8.1")
    a, bar, d = k.reg(u32), k.reg(u32), k.reg(b64)
    with pytest.raises(LegalityError, match="element type"):
        k.st_async(a, [d, d, d, d], bar, b64)                # .v4 of 64-bit values: 256 bits
    with pytest.raises(LegalityError, match="element type"):
        k.red_async("add", a, k.reg(f32), bar, f32)           # red.async adds integers only
    with pytest.raises(LegalityError, match="element type"):
        k.red_async("inc", a, k.reg(u32), bar, "s32")         # inc and dec: .u32
    with pytest.raises(LegalityError):
        k.st_async(a, k.reg(b16), bar, b16)
    with pytest.raises(BuildError, match="is a .f32 register; .u32 expected"):
        k.st_async(a, k.reg(f32), bar, u32)
    with pytest.raises(BuildError, match="not an integer"):
        k.red_async("add", a, 2.5, bar, u32)
    m, k = kernel(version="8.0")
    with pytest.raises(LegalityError, match="needs PTX ISA 8.1"):
        k.st_async(k.reg(u32), k.reg(u32), k.reg(u32), u32)
    m, k = kernel("sm_80", version="8.1")
    with pytest.raises(LegalityError, match="sm_90"):
        k.red_async("add", k.reg(u32), k.reg(u32), k.reg(u32), u32)


def test_mbarrier_wait_spins_on_test_wait_before_sm90():
    # sm_80-sm_89 have mbarrier.test_wait but not try_wait; the wait loop uses what the target has
    # (tests/test_gemm_ampere.py assembles an sm_80 kernel that waits this way)
    for target, op in (("sm_80", "mbarrier.test_wait.parity"), ("sm_86", "mbarrier.test_wait.parity"),
                       ("sm_90a", "mbarrier.try_wait.parity")):
        m = pg.Module(target=target)
        k = m.entry("w")
        bar = k.shared("bar", 8, align=8)
        k.mbarrier_init(bar, 1)
        k.mbarrier_arrive(bar)
        n = len(k.fn.body)
        k.mbarrier_wait(bar, parity=0)
        got = texts(k, n)
        assert got[0].startswith(op + ".shared.b64 ") and got[1].startswith("@!%p")


def test_bar_warp_sync_takes_a_nonzero_lane_mask():
    m, k = kernel()
    k.bar_warp_sync()
    assert last(k) == "bar.warp.sync 4294967295;"
    k.bar_warp_sync(0x0000FFFF)
    assert last(k) == "bar.warp.sync 65535;"
    k.bar_warp_sync(k.reg(u32))
    assert last(k).startswith("bar.warp.sync %r")
    for bad in (0, 1 << 32, -2):
        with pytest.raises(BuildError, match="membermask"):
            k.bar_warp_sync(bad)

# ----------------------------------------------------------------------------------------------- createpolicy
def test_createpolicy_text_and_refusals():
    m, k = kernel("sm_80", version="7.4")
    p = k.createpolicy("evict_last", secondary="evict_first", fraction=0.5)
    assert p.type is b64 and last(k) == f"createpolicy.fractional.L2::evict_last.L2::evict_first.b64 {p}, 0f3F000000;"
    k.createpolicy()
    assert last(k).startswith("createpolicy.fractional.L2::evict_normal.b64 %rd")
    g = k.reg(u64)
    q = k.createpolicy("evict_first", range=(g, 1024, 4096))
    assert last(k) == f"createpolicy.range.global.L2::evict_first.b64 {q}, [{g}], 1024, 4096;"
    raises(LegalityError, "PTX-E-MODIFIER", "createpolicy: primary must be one of evict_last, evict_normal, "
           "evict_first, evict_unchanged, not 'keep'", here(), lambda: k.createpolicy("keep"))
    raises(LegalityError, "PTX-E-MODIFIER", "createpolicy: secondary must be one of evict_first, evict_unchanged, "
           "not 'evict_last'", here(), lambda: k.createpolicy(secondary="evict_last"))
    raises(LegalityError, "PTX-E-OPERANDS", "createpolicy: fraction must be a number in (0, 1], not 0", here() + 1,
           lambda: k.createpolicy(fraction=0))
    raises(LegalityError, "PTX-E-OPERANDS", "createpolicy: fraction must be a number in (0, 1], not 1.5", here() + 1,
           lambda: k.createpolicy(fraction=1.5))
    raises(BuildError, "PTX-E-OPERANDS", "createpolicy: a range policy takes no fraction", here() + 1,
           lambda: k.createpolicy(fraction=0.5, range=(g, 1, 2)))
    raises(BuildError, "PTX-E-OPERANDS", "createpolicy: range must be (address, primary_size, total_size)", here() + 1,
           lambda: k.createpolicy(range=(g, 1)))
    _, k73 = kernel("sm_80", version="7.3")
    raises(LegalityError, "PTX-E-VERSION", "createpolicy needs PTX ISA 7.4 (module .version is 7.3)", here() + 1,
           lambda: k73.createpolicy())
    _, k75 = kernel("sm_75")
    raises(LegalityError, "PTX-E-TARGET", "createpolicy needs target sm_80 (module target is sm_75)", here() + 1,
           lambda: k75.createpolicy())


def test_prefetch_tensormap_text_and_errors():
    """A parameter holding a tensor map is prefetched through its generic address (as the TMA instructions
    take it); a register may name its .param or .const space; a parameter with a space is refused."""
    m, k = kernel("sm_90a")
    tm = k.param_bytes("tmap", 128, align=64)
    k.prefetch_tensormap(tm)
    assert texts(k)[-2:] == ["cvta.param.u64 %rd0, k_param_tmap;", "prefetch.tensormap [%rd0];"]
    r = k.reg(u64, "map")
    k.mov(0, dst=r)
    k.prefetch_tensormap(r, space="param")
    assert last(k) == "prefetch.param.tensormap [%map];"
    k.prefetch_tensormap(r, space="const", guard=k.reg(pred, "first"))
    assert last(k) == "@%first prefetch.const.tensormap [%map];"
    raises(BuildError, "PTX-E-OPERANDS", "a Param is prefetched through its generic address: leave space out, "
           "or pass a register holding its .param address", here() + 1,
           lambda: k.prefetch_tensormap(tm, space="param"))
    raises(BuildError, "PTX-E-OPERANDS", "space must be None (generic), 'const' or 'param', not 'global'",
           here(), lambda: k.prefetch_tensormap(r, space="global"))


def test_cvt_of_bit_types_and_float_member_masks_are_refused_at_the_call():
    # ptxas 13.0: "Unexpected instruction types specified for 'cvt'" for .bN types; "Arguments mismatch"
    # for an .f32 register or a float literal as a warp's member mask (a register declared .b32 is fine)
    m = pg.Module("sm_90a", version="8.5")
    k = m.entry("k")
    r, f = k.reg(pg.u32), k.reg(pg.f32)
    with pytest.raises(pg.LegalityError, match=r"cvt\.u32\.b32 does not exist"):
        k.cvt(r, pg.u32, pg.b32)
    with pytest.raises(pg.BuildError, match="membermask %f0 is a .f32 register"):
        k.shfl_sync(r, 1, 31, "bfly", membermask=f)
    with pytest.raises(pg.BuildError, match="membermask 1.5 is not an integer"):
        k.vote_sync("any", k.reg(pg.pred), membermask=1.5)
    k.shfl_sync(r, 1, 31, "bfly", membermask=k.reg(pg.f16x2))     # declared .b32: ptxas takes it
    k.cvt(r, pg.u64, pg.u32)
    k.ret()
    from ptxgen import lint as L
    assert [d for d in L.lint_ptx(m.emit().text, "k.ptx") if d.severity == "error"] == []


@pytest.mark.parametrize("ty, ftz, want", [("f16", True, "ex2.approx.f16"), ("f16x2", True, "ex2.approx.f16x2"),
                                           ("bf16", False, "ex2.approx.ftz.bf16"),
                                           ("bf16x2", False, "ex2.approx.ftz.bf16x2")])
def test_ex2_refuses_what_ptxas_refuses_with_lints_words(ty, ftz, want):
    """The builder's ex2 and lint share one rule (isa_core.ex2_modifier_error): the same message, and the
    spelling to write."""
    from ptxgen.lint import lint_ptx
    m = pg.Module("sm_90a")
    k = m.entry("e")
    r = k.reg(getattr(pg, ty))
    with pytest.raises(pg.LegalityError) as e:
        k.ex2(r, ftz=ftz)
    reg = "%r1" if ty.endswith("x2") else "%h1"
    decl = ".reg .b32 %r<2>;" if ty.endswith("x2") else ".reg .b16 %h<2>;"
    text = (".version 8.7\n.target sm_90a\n.address_size 64\n.visible .entry e()\n{\n" + decl + "\n"
            + f"ex2.approx{'.ftz' if ftz else ''}.{ty} {reg}, {reg};\nret;\n}}\n")
    (d,) = [d for d in lint_ptx(text) if d.severity == "error"]
    assert d.message in str(e.value) and f"write {want}" in str(e.value) and d.notes == (f"write {want}",)
