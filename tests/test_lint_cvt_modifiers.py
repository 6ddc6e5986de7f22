"""cvt's .ftz and .sat, and the .bf16 conversions with 8-bit integers, as ptxas 13.0 takes them
(isa_core.cvt_modifier_error and cvt_form_error, which the builder asked in its own copy before and lint not at all).

What ptxas 13.0 showed (375 of the 2,160 spellings below lint took and ptxas refuses): .ftz needs an .f32 source or
destination (cvt.ftz.u64.u32, cvt.rni.ftz.s32.f64, cvt.rni.ftz.f64.f64 are refused); .sat takes no .bf16 side, and
between integers it needs a destination that cannot hold every source value (cvt.sat.u64.u32 and cvt.sat.s32.u16 are
refused, cvt.sat.u32.s8 and cvt.sat.s16.u16 assemble); .bf16 has no conversion to or from .u8 and .s8. Between the
packed types (isa_core.PACKED_CVT; 246 of 544 spellings lint took and ptxas refuses): .f16x2 and .bf16x2 from two .f32
take .rn or .rz, .relu and .satfinite; .f16x2 from one .e4m3x2/.e5m2x2 .rn and .relu; .e4m3x2/.e5m2x2 from two .f32
or one .f16x2 need .rn.satfinite and take .relu; every other pair, and any other count of sources, is refused.
"""
from __future__ import annotations

import itertools
import os
import sys

import pytest

import ptxgen as pg

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _ptxas_lines import agree_with_ptxas, kernel, lint_disagrees_with_ptxas, lint_errors, reg_decls  # noqa: E402
from test_lint_vector_probes import needs_ptxas  # noqa: E402

TYPES = ("u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64", "f16", "bf16", "f32", "f64")
REG = {"u8": "%h", "s8": "%h", "u16": "%h", "s16": "%h", "bf16": "%h", "u32": "%r", "s32": "%r", "u64": "%rd",
       "s64": "%rd", "f16": "%hf", "f32": "%f", "f64": "%fd"}
MODS = ("", "rn", "rni", "rz", "ftz", "sat", "rn.ftz", "rni.ftz", "rn.sat", "rni.sat", "ftz.sat", "rn.ftz.sat",
        "rni.ftz.sat", "rzi.ftz", "rz.ftz.sat")


def module(lines):
    return kernel(lines, decls=reg_decls(*((t, n, 5) for t, n in (("b16", "h"), ("f16", "hf"), ("b32", "r"), ("f32", "f"),
                                                               ("b64", "rd"), ("f64", "fd")))))


PACKED = {"f16x2": "%r", "bf16x2": "%r", "e4m3x2": "%h", "e5m2x2": "%h", "f32": "%f"}
PACKED_MODS = ("", "rn", "rz", "rm", "rn.relu", "rz.relu", "rn.satfinite", "rz.satfinite", "rn.relu.satfinite",
               "satfinite", "rn.rzi", "rni", "rn.rz", "rn.ftz", "rn.sat", "relu")


def matrix():
    out = [f"cvt{'.' + m if m else ''}.{d}.{a} {REG[d]}1, {REG[a]}2;" for d in TYPES for a in TYPES for m in MODS]
    for d, a, m, n in itertools.product(("f16x2", "bf16x2", "e4m3x2", "e5m2x2"), PACKED, PACKED_MODS, (1, 2, 3)):
        srcs = ", ".join(f"{PACKED[a]}{i + 2}" for i in range(n))
        out.append(f"cvt{'.' + m if m else ''}.{d}.{a} {PACKED[d]}1, {srcs};")
    return out



LINES = [
    ("cvt.ftz.u64.u32 %rd1, %r1;", False), ("cvt.rni.ftz.s32.f64 %r1, %fd1;", False),
    ("cvt.rni.ftz.s32.f32 %r1, %f1;", True), ("cvt.rn.ftz.f32.s32 %f1, %r1;", True),
    ("cvt.rni.ftz.f64.f64 %fd1, %fd2;", False), ("cvt.sat.u64.u32 %rd1, %r1;", False),
    ("cvt.sat.s32.u16 %r1, %h1;", False), ("cvt.sat.s16.u16 %h1, %h2;", True), ("cvt.sat.u32.s8 %r1, %h1;", True),
    ("cvt.rni.sat.u16.bf16 %h1, %h2;", False), ("cvt.rn.f16.bf16 %hf1, %h2;", True),
    ("cvt.rn.bf16.u8 %h1, %h2;", False), ("cvt.ftz.sat.f32.f16 %f1, %hf1;", True),
    ("cvt.rn.bf16x2.f32 %r1, %f2;", False), ("cvt.rn.bf16x2.f32 %r1, %f2, %f3;", True),
    ("cvt.rz.satfinite.f16x2.f32 %r1, %f2, %f3;", True), ("cvt.rn.rzi.bf16x2.f32 %r1, %f2, %f3;", False),
    ("cvt.rn.e4m3x2.f32 %h1, %f2, %f3;", False), ("cvt.rn.satfinite.e4m3x2.e5m2x2 %h1, %h2;", False),
]


@pytest.mark.parametrize("text,ok", LINES, ids=[ln for ln, _ in LINES])
def test_lint_verdict(text, ok):
    errs = lint_errors(module([text]))
    assert (not errs) == ok, [str(d) for d in errs.values()]


def test_lint_and_the_builder_say_the_same():
    (d,) = lint_errors(module(["cvt.sat.u64.u32 %rd1, %r1;"])).values()
    assert (d.code, d.message) == ("PTX-E-MODIFIER", "cvt.u64.u32 takes no .sat: every .u32 value fits .u64")
    k = pg.Module("sm_90a").entry("k")
    with pytest.raises(pg.LegalityError, match=r"cvt.u64.u32 takes no \.sat: every \.u32 value fits \.u64"):
        k.cvt(k.reg(pg.u32), pg.u64, sat=True)
    (d,) = lint_errors(module(["cvt.ftz.u64.u32 %rd1, %r1;"])).values()
    assert d.message == "cvt.u64.u32 takes no .ftz: .ftz needs an .f32 source or destination"
    with pytest.raises(pg.LegalityError, match=r"\.ftz needs an \.f32 source or destination"):
        k.cvt(k.reg(pg.u32), pg.u64, ftz=True)
    (d,) = lint_errors(module(["cvt.rn.bf16.u8 %h1, %h2;"])).values()
    assert d.code == "PTX-E-TYPE" and "does not exist" in d.message


@pytest.mark.ptxas
@needs_ptxas
def test_recorded_verdicts_are_ptxas_verdicts():
    agree_with_ptxas(LINES, module)


@pytest.mark.ptxas
@needs_ptxas
def test_every_conversion_lints_as_ptxas_assembles_it():
    lines = matrix()
    wrong = lint_disagrees_with_ptxas(lines, module)
    assert len(lines) == 2160 + 960 and not wrong, f"{len(wrong)} of {len(lines)}:\n" + "\n".join(wrong[:40])
