"""The modifiers of the arithmetic instructions, per instruction type, as ptxas 13.0 takes them
(isa_core.ARITH_MODS, which lint and the builder both read).

What ptxas 13.0 showed, where lint took what it refuses: .cc only on integer add/sub of 32 and 64 bits and on
mad.lo/.hi of them (not mad.wide, not 16 bits), .sat on integers only as add/sub/addc/subc.s32 and mad/madc.hi.s32
(mad24.hi.s32), and never with .cc; .ftz on .f32, .f16 and .f16x2 (and rcp.f64) only: add/sub/mul/fma/mad/min/max
/div/sqrt.f64 take none; .relu only on fma's halves and min/max.s32; .oob only on fma's halves, and not with .ftz;
.xorsign and .abs together or not at all; rsqrt, sin, cos, lg2 and tanh need .approx (tanh takes no .ftz);
rcp.approx.f64 needs .ftz; sqrt.f64 takes no .approx; mul24/mad24 (and madc) need .lo or .hi; one rounding at most.
Where the manual and ptxas differ the table follows ptxas: fma.bf16 takes every rounding, min.xorsign.abs.f32
assembles, addc.sat.s32 and madc.hi.u16 assemble.

The test marked ptxas writes every subset (of up to three words) of each instruction type's words and a pool of
others, for each instruction and type, and asks ptxas and lint about each line.
"""
from __future__ import annotations

import itertools
import os
import sys

import pytest

from ptxgen import isa_core as C
from ptxgen import lint as L

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _ptxas_lines import agree_with_ptxas, kernel, lint_disagrees_with_ptxas, lint_errors, reg_decls  # noqa: E402
from test_lint_vector_probes import needs_ptxas  # noqa: E402

REG = {"u16": "%h", "s16": "%h", "b16": "%h", "bf16": "%h", "f16": "%hf", "u32": "%r", "s32": "%r", "b32": "%r",
       "f16x2": "%r", "bf16x2": "%r", "u64": "%rd", "s64": "%rd", "b64": "%rd", "f32": "%f", "f64": "%fd"}
WIDE = {"%h": "%r", "%r": "%rd"}
SOURCES = {"abs": 1, "neg": 1, "rcp": 1, "sqrt": 1, "rsqrt": 1, "sin": 1, "cos": 1, "lg2": 1, "tanh": 1,
           "mad": 3, "fma": 3, "mad24": 3, "madc": 3}
NAME_WORDS = ("full", "lo", "hi", "wide")       # words of an instruction's name, which come first
POOL = ("rn", "rz", "ftz", "sat", "cc", "approx", "full", "lo", "hi", "wide", "relu", "oob", "NaN", "xorsign", "abs")


def line(op: str, words, t: str) -> str:
    r = REG[t]
    d = WIDE.get(r, r) if "wide" in words else r
    srcs = [f"{r}2", f"{r}3", f"{d if op == 'mad' else r}4"][:SOURCES.get(op, 2)]
    return f"{op}{''.join('.' + w for w in words)}.{t} {d}1, {', '.join(srcs)};"


def module(lines):
    return kernel(lines, decls=reg_decls(*((t, n, 5) for t, n in (("b16", "h"), ("f16", "hf"), ("b32", "r"), ("f32", "f"),
                                                               ("b64", "rd"), ("f64", "fd")))))


def matrix():
    """Every instruction and type of ARITH_MODS with every subset of up to three of its words and the pool's."""
    out = []
    for op, by_type in sorted(C.ARITH_MODS.items()):
        for t, spec in sorted(by_type.items()):
            words = sorted(spec.words | set(POOL), key=lambda w: (w not in NAME_WORDS, w))
            for n in range(4):
                out += [line(op, combo, t) for combo in itertools.combinations(words, n)]
    return list(dict.fromkeys(out))



# (line, ptxas 13.0 takes it): a few of each kind, checked without ptxas too
LINES = [
    ("add.cc.u32 %r1, %r2, %r3;", True), ("add.cc.f32 %f1, %f2, %f3;", False), ("add.cc.u16 %h1, %h2, %h3;", False),
    ("add.sat.s32 %r1, %r2, %r3;", True), ("add.cc.sat.s32 %r1, %r2, %r3;", False),
    ("add.ftz.f64 %fd1, %fd2, %fd3;", False), ("add.rn.ftz.sat.f32 %f1, %f2, %f3;", True),
    ("add.sat.f64 %fd1, %fd2, %fd3;", False), ("sub.rz.f16 %hf1, %hf2, %hf3;", False),
    ("mul.rn.ftz.f64 %fd1, %fd2, %fd3;", False), ("mul.hi.sat.s32 %r1, %r2, %r3;", False),
    ("mad.hi.sat.s32 %r1, %r2, %r3, %r4;", True), ("mad.lo.sat.s32 %r1, %r2, %r3, %r4;", False),
    ("mad.hi.sat.u32 %r1, %r2, %r3, %r4;", False), ("mad.lo.cc.u32 %r1, %r2, %r3, %r4;", True),
    ("mad.wide.cc.s32 %rd1, %r2, %r3, %rd4;", False), ("mad.hi.cc.sat.s32 %r1, %r2, %r3, %r4;", False),
    ("mad.rn.ftz.f64 %fd1, %fd2, %fd3, %fd4;", False), ("fma.rn.ftz.f64 %fd1, %fd2, %fd3, %fd4;", False),
    ("fma.rn.ftz.oob.f16 %hf1, %hf2, %hf3, %hf4;", False), ("fma.rn.oob.relu.f16 %hf1, %hf2, %hf3, %hf4;", True),
    ("fma.rn.sat.relu.f16 %hf1, %hf2, %hf3, %hf4;", False), ("fma.rz.relu.bf16 %h1, %h2, %h3, %h4;", True),
    ("min.relu.s16 %h1, %h2, %h3;", False), ("min.relu.s32 %r1, %r2, %r3;", True),
    ("max.xorsign.f32 %f1, %f2, %f3;", False), ("max.NaN.xorsign.abs.f32 %f1, %f2, %f3;", True),
    ("min.ftz.f64 %fd1, %fd2, %fd3;", False), ("div.rn.ftz.f64 %fd1, %fd2, %fd3;", False),
    ("div.full.ftz.f32 %f1, %f2, %f3;", True), ("div.rn.rz.f64 %fd1, %fd2, %fd3;", False),
    ("rcp.approx.f64 %fd1, %fd2;", False), ("rcp.approx.ftz.f64 %fd1, %fd2;", True),
    ("sqrt.rn.ftz.f64 %fd1, %fd2;", False), ("sqrt.approx.f64 %fd1, %fd2;", False),
    ("rsqrt.f32 %f1, %f2;", False), ("rsqrt.approx.ftz.f64 %fd1, %fd2;", True), ("sin.f32 %f1, %f2;", False),
    ("lg2.ftz.approx.f32 %f1, %f2;", True), ("tanh.approx.ftz.f32 %f1, %f2;", False),
    ("mul24.u32 %r1, %r2, %r3;", False), ("mad24.hi.sat.s32 %r1, %r2, %r3, %r4;", True),
    ("mad24.lo.sat.s32 %r1, %r2, %r3, %r4;", False), ("madc.u32 %r1, %r2, %r3, %r4;", False),
    ("madc.hi.sat.s32 %r1, %r2, %r3, %r4;", True), ("madc.hi.u16 %h1, %h2, %h3, %h4;", True),
    ("addc.sat.s32 %r1, %r2, %r3;", True), ("abs.ftz.f64 %fd1, %fd2;", False),
]


@pytest.mark.parametrize("text,ok", LINES, ids=[ln for ln, _ in LINES])
def test_lint_verdict(text, ok):
    errs = lint_errors(module([text]))
    assert (not errs) == ok, [str(d) for d in errs.values()]


def test_messages_name_the_word_and_what_the_type_takes():
    (d,) = lint_errors(module(["add.ftz.f64 %fd1, %fd2, %fd3;"])).values()
    assert d.code == "PTX-E-MODIFIER" and d.message == "add.f64 takes no .ftz"
    assert d.notes == ("add.f64 takes optionally one of .rn, .rz, .rm or .rp",)
    assert (d.loc.line, d.loc.col) == (12, 2)
    (d,) = lint_errors(module(["rsqrt.ftz.f32 %f1, %f2;"])).values()
    assert d.message == "rsqrt.f32 needs .approx" and d.notes == ("rsqrt.f32 takes .approx, optionally .ftz",)
    (d,) = lint_errors(module(["fma.rn.ftz.oob.f16 %hf1, %hf2, %hf3, %hf4;"])).values()
    assert d.message == "fma.f16: .ftz cannot be combined with .oob"
    (d,) = lint_errors(module(["mad.lo.sat.s32 %r1, %r2, %r3, %r4;"])).values()
    assert d.message == "mad.s32: .sat needs .hi"
    (d,) = lint_errors(module(["div.rn.approx.f32 %f1, %f2, %f3;"])).values()
    assert d.message == "div.f32 takes one of .approx, .full, .rn, .rz, .rm or .rp, not .rn and .approx"


def test_one_diagnostic_for_an_unknown_word():
    # the vocabulary check reports a word no instruction of the name takes; the table does not add a second
    errs = [d for d in L.lint_ptx(module(["add.wrap.f32 %f1, %f2, %f3;"]), "t.ptx") if d.severity == "error"]
    assert len(errs) == 1 and "no modifier .wrap" in errs[0].message


@pytest.mark.ptxas
@needs_ptxas
def test_recorded_verdicts_are_ptxas_verdicts():
    agree_with_ptxas(LINES, module)


@pytest.mark.ptxas
@needs_ptxas
def test_every_subset_of_words_lints_as_ptxas_assembles_it():
    lines = matrix()
    assert len(lines) > 20000
    wrong = lint_disagrees_with_ptxas(lines, module)
    assert not wrong, f"{len(wrong)} of {len(lines)}:\n" + "\n".join(wrong[:40])


# ------------------------------------------------------------------------------------------------ the builder
def _builder_calls():
    """(method, type, kwargs) for the builder's arithmetic calls over every type of ARITH_MODS and its options."""
    import ptxgen as pg
    rnd = (None, "rn", "rz")
    out = []
    for t in ("u16", "s16", "u32", "s32", "u64", "s64", "f16", "f16x2", "bf16", "bf16x2", "f32", "f64"):
        ty = pg.types.get_type(t)
        for r, ftz, sat in itertools.product(rnd, (False, True), (False, True)):
            for op in ("add", "sub"):
                out.append((op, ty, dict(rnd=r, ftz=ftz, sat=sat)))
            for mode in ((None, "lo", "hi", "wide") if ty.is_int else (None,)):
                out.append(("mul", ty, dict(mode=mode, rnd=r, ftz=ftz, sat=sat)))
                out.append(("mad", ty, dict(mode=mode, rnd=r, ftz=ftz, sat=sat)))
            out.append(("fma", ty, dict(rnd=r or "rn", ftz=ftz, sat=sat)))
        for ftz in (False, True):
            for op in ("min", "max", "abs", "neg"):
                out.append((op, ty, dict(ftz=ftz)))
            for r, approx, full in ((None, True, False), (None, False, True), ("rn", False, False),
                                    ("rz", False, False), (None, False, False)):
                out.append(("div", ty, dict(rnd=r, approx=approx, full=full, ftz=ftz)))
                if not full:
                    out.append(("rcp", ty, dict(rnd=r, approx=approx, ftz=ftz)))
                    out.append(("sqrt", ty, dict(rnd=r, approx=approx, ftz=ftz)))
    return out


def _build(k, op, ty, kw):
    import ptxgen as pg
    a = k.reg(ty)
    srcs = {"abs": 1, "neg": 1, "rcp": 1, "sqrt": 1, "mad": 3, "fma": 3}.get(op, 2)
    args = [a] * srcs
    if op == "mad" and kw.get("mode") == "wide" and ty.bits < 64:
        args[2] = k.reg(pg.types.get_type(ty.kind + str(2 * ty.bits)))
    return getattr(k, op)(*args, type=ty, **kw)


def test_the_builder_refuses_what_the_rule_refuses_and_emits_what_lint_takes():
    import ptxgen as pg
    m = pg.Module("sm_90a")
    k = m.entry("k")
    took, refused = 0, 0
    for op, ty, kw in _builder_calls():
        before = len(k.fn.body)
        try:
            _build(k, op, ty, kw)
        except pg.BuildError:
            refused += 1
            del k.fn.body[before:]
            continue
        took += 1
        words = k.fn.body[-1].opcode.split(".")[1:]
        assert C.arith_modifier_error(op, ty.name, words) is None, k.fn.body[-1].text()
    k.ret()
    assert took > 200 and refused > 200
    assert not [str(d) for d in L.lint_ptx(str(m.emit()), "b.ptx") if d.severity == "error"]


@pytest.mark.ptxas
@needs_ptxas
def test_what_the_builder_emits_assembles():
    import ptxgen as pg
    from ptxgen.ptxas import assemble
    m = pg.Module("sm_90a")
    k = m.entry("k")
    for op, ty, kw in _builder_calls():
        before = len(k.fn.body)
        try:
            _build(k, op, ty, kw)
        except pg.BuildError:
            del k.fn.body[before:]
    k.ret()
    res = assemble(m.emit(), "sm_90a", cache=False)       # raises AssemblyError where ptxas refuses a line
    assert res.cubin and not res.warnings
