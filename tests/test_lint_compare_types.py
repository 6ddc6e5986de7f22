"""setp, set and slct's types and .ftz, and the .pred ptxas ignores beside an instruction type, as ptxas 13.0 takes
them (isa_core.SET_TYPES, SLCT_TYPES, COMPARE_FTZ, PRED_IGNORED).

What ptxas 13.0 showed, where lint disagreed: .ftz on setp and set only with .f32, .f16 or .f16x2 sources (lint took
it on every type), and on slct only with an .f32 selector; setp.f16x2 and setp.bf16x2 assemble (lint refused them),
with one predicate or a pair; set's destination type decides its source types (set.f32.f16 and set.b32.u32 are
"Unexpected instruction types", set.bf16.f16 assembles and set.f16.bf16 does not) and set needs both types; slct
selects 16- to 64-bit integers and bits, .f32 and .f64 (no halves) on an .s32 or .f32 selector. A .pred written beside
the instruction type is taken and ignored on add, sub, mul (not mul.lo/.hi/.wide), fma, abs, neg, min, max, setp, set,
rcp, sqrt, rsqrt, sin, cos, lg2, ex2 and tanh (lint refused it: "several instruction types"), and refused on the rest.
"""
from __future__ import annotations

import os
import sys

import pytest


HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _ptxas_lines import agree_with_ptxas, kernel, lint_disagrees_with_ptxas, lint_errors, reg_decls  # noqa: E402
from test_lint_vector_probes import needs_ptxas  # noqa: E402

TYPES = ("u16", "s16", "u32", "s32", "u64", "s64", "b16", "b32", "b64", "f16", "f16x2", "bf16", "bf16x2", "f32",
         "f64", "b8", "u8", "s8", "pred")
REG = {"u16": "%h", "s16": "%h", "b16": "%h", "bf16": "%h", "b8": "%h", "u8": "%h", "s8": "%h", "f16": "%hf",
       "u32": "%r", "s32": "%r", "b32": "%r", "f16x2": "%r", "bf16x2": "%r", "u64": "%rd", "s64": "%rd", "b64": "%rd",
       "f32": "%f", "f64": "%fd", "pred": "%p"}


def module(lines):
    return kernel(lines, decls=reg_decls(*((t, n, 5) for t, n in (("pred", "p"), ("b16", "h"), ("f16", "hf"), ("b32", "r"),
                                                               ("f32", "f"), ("b64", "rd"), ("f64", "fd")))))


def matrix():
    out = []
    for st in TYPES:
        r = REG[st]
        for mods in ("", ".ftz", ".ftz.and", ".and"):
            c = ", %p3" if "and" in mods else ""
            out.append(f"setp.eq{mods}.{st} %p1, {r}2, {r}3{c};")
            out.append(f"setp.eq{mods}.{st} %p1|%p2, {r}2, {r}3{c};")
        for dt in TYPES:
            for mods in ("", ".ftz"):
                out.append(f"set.eq{mods}.{dt}.{st} {REG[dt]}1, {r}2, {r}3;")
                out.append(f"slct{mods}.{dt}.{st} {REG[dt]}1, {REG[dt]}2, {REG[dt]}3, {r}4;")
        out.append(f"set.eq.{st} {r}1, {r}2, {r}3;")
        out.append(f"slct.{st} {r}1, {r}2, {r}3, %r4;")
    for op, n, words in (("add", 2, ""), ("sub", 2, ""), ("mul", 2, ".lo"), ("mul", 2, ".rn"), ("mad", 3, ".rn"),
                         ("fma", 3, ".rn"), ("div", 2, ".rn"), ("min", 2, ""), ("abs", 1, ""), ("rcp", 1, ".rn"),
                         ("rsqrt", 1, ".approx"), ("sin", 1, ".approx"), ("tanh", 1, ".approx"),
                         ("copysign", 2, ""), ("testp", 1, ".finite"), ("selp", 2, "")):
        for t in ("f32", "s32"):
            r = REG[t]
            d = "%p1" if op == "testp" else f"{r}1"
            tail = ", %p1" if op == "selp" else ""
            for ty in (f".pred.{t}", f".{t}.pred", f".pred.pred.{t}"):
                out.append(f"{op}{words}{ty} {d}, {', '.join(f'{r}{i}' for i in range(2, 2 + n))}{tail};")
    return list(dict.fromkeys(out))



LINES = [
    ("setp.eq.ftz.s32 %p1, %r2, %r3;", False), ("setp.eq.ftz.f64 %p1, %fd2, %fd3;", False),
    ("setp.eq.ftz.f32 %p1, %f2, %f3;", True), ("setp.eq.f16x2 %p1|%p2, %r2, %r3;", True),
    ("setp.eq.ftz.bf16x2 %p1|%p2, %r2, %r3;", False), ("set.eq.ftz.f16x2.f16x2 %r1, %r2, %r3;", True),
    ("set.eq.ftz.bf16.bf16 %h1, %h2, %h3;", False), ("set.eq.f32.f16 %f1, %hf2, %hf3;", False),
    ("set.eq.b32.u32 %r1, %r2, %r3;", False), ("set.eq.bf16.f16 %h1, %hf2, %hf3;", True),
    ("set.eq.u32 %r1, %r2, %r3;", False), ("slct.ftz.u32.s32 %r1, %r2, %r3, %r4;", False),
    ("slct.ftz.f64.f32 %fd1, %fd2, %fd3, %f4;", True), ("slct.f16.s32 %hf1, %hf2, %hf3, %r4;", False),
    ("add.pred.f32 %f1, %f2, %f3;", True), ("add.s32.pred %r1, %r2, %r3;", True),
    ("mul.lo.pred.s32 %r1, %r2, %r3;", False), ("div.rn.pred.f32 %f1, %f2, %f3;", False),
    ("setp.pred.eq.s32 %p1, %r1, %r2;", True), ("add.pred %f1, %f2, %f3;", False),
]


@pytest.mark.parametrize("text,ok", LINES, ids=[ln for ln, _ in LINES])
def test_lint_verdict(text, ok):
    errs = lint_errors(module([text]))
    assert (not errs) == ok, [str(d) for d in errs.values()]


def test_messages():
    (d,) = lint_errors(module(["set.eq.f32.f16 %f1, %hf2, %hf3;"])).values()
    assert (d.code, d.message) == ("PTX-E-TYPE", "set.f32 cannot compare .f16 sources")
    assert d.notes[0].startswith("set.f32 compares .u16, .s16")
    (d,) = lint_errors(module(["setp.eq.ftz.s32 %p1, %r2, %r3;"])).values()
    assert (d.code, d.message) == ("PTX-E-MODIFIER", "setp takes no .ftz with .s32 sources")
    (d,) = lint_errors(module(["slct.ftz.u32.s32 %r1, %r2, %r3, %r4;"])).values()
    assert d.message == "slct takes .ftz only with an .f32 selector c"


@pytest.mark.ptxas
@needs_ptxas
def test_recorded_verdicts_are_ptxas_verdicts():
    agree_with_ptxas(LINES, module)


@pytest.mark.ptxas
@needs_ptxas
def test_every_type_pair_lints_as_ptxas_assembles_it():
    lines = matrix()
    wrong = lint_disagrees_with_ptxas(lines, module)
    assert len(lines) > 1400 and not wrong, f"{len(wrong)} of {len(lines)}:\n" + "\n".join(wrong[:40])
