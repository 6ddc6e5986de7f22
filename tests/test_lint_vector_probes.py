"""Vector registers with mov.vN, and indirect calls through .calltargets, linted as ptxas 13.0 takes them.

What ptxas 13.0 showed (each rule has a case below):
- mov.vN.T moves a .vN vector register or a {...} of N registers: each element of the width of T; an
  integer or bit element for any T of its width (mov.v2.f32 moves .v2 .u32 registers), a floating-point
  one only for .bN or .fN, a packed (.f16x2) one not for .fN ("Arguments mismatch"); a vector of another
  length is "Argument vector size mismatch"; the source may be one register or immediate.
- a scalar mov moves a whole vector register as one .bN of its size (mov.b64 %rd1, %v of .v2 .b32), a
  component (%v.x .. %v.w, %v.r .. %v.a) as a register of the element type; reading a component the
  vector lacks (%v.z of a .v2) crashes ptxas or is rejected.
- ld/st.vN take a vector register of N in place of {...}; other instructions take none ("Vector operand
  is not allowed").
- a vector register holds at most 128 bits and no .pred ("Vector type too large").
- an indirect call through `$L: .calltargets f, g;` is checked against each function of the list as a
  direct call of it (count, then each .param: size, array or scalar, array alignment, and no integer
  value for a floating-point parameter or back); a call without return values passes the return count
  when the list's last function returns nothing. Prototypes (.callprototype) compare types the same way.
"""
from __future__ import annotations

import os
import shutil
import sys

import pytest

from ptxgen import lint as L

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "differential"))
import gen_cases  # noqa: E402
from _ptxas_lines import ptxas_rejected  # noqa: E402

needs_ptxas = pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas (CUDA toolkit) on PATH")

ELEMS = ("b16", "u16", "s16", "b32", "u32", "s32", "f32", "b64", "u64", "s64", "f64")
_TAG = {"b16": "bh", "u16": "uh", "s16": "sh", "b32": "bw", "u32": "uw", "s32": "sw", "f32": "fw", "b64": "bd",
        "u64": "ud", "s64": "sd", "f64": "fd"}
# scalar registers %s<tag><i>, vector registers %v2<tag><i> (and %v4<tag><i> up to 32-bit elements)
VDECLS = "".join(f".reg .{t} %s{_TAG[t]}<5>;\n.reg .v2 .{t} %v2{_TAG[t]}<2>;\n"
                 + (f".reg .v4 .{t} %v4{_TAG[t]}<2>;\n" if t.endswith(("16", "32")) else "") for t in ELEMS)
VDECLS += ".reg .v2 .f16x2 %vx<2>;\n.reg .pred %p;\n"


def vmodule(body: str) -> str:
    return f".version 8.7\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{{\n{VDECLS}{body}\nret;\n}}\n"


def errors(text):
    return [d for d in L.lint_ptx(text, "t.ptx") if d.severity == "error"]


# (body ptxas rejects, the code lint gives it, a body ptxas takes in its place)
VECTOR_CASES = [
    ("mov.v2.s32 %v2fw0, {%sfw1, %sfw2};", "PTX-E-TYPE", "mov.v2.f32 %v2fw0, {%sfw1, %sfw2};"),
    ("mov.v2.u32 %v2fw0, %v2fw1;", "PTX-E-TYPE", "mov.v2.b32 %v2fw0, %v2fw1;"),
    ("mov.v2.s32 {%sfw0, %sfw1}, %v2sw0;", "PTX-E-TYPE", "mov.v2.f32 {%ssw0, %ssw1}, %v2fw0;"),
    ("mov.v2.u64 %v2fd0, %v2fd1;", "PTX-E-TYPE", "mov.v2.f64 %v2ud0, %v2ud1;"),
    ("mov.v2.b32 %v2bh0, %v2bh1;", "PTX-E-TYPE", "mov.v2.u16 %v2bh0, %v2sh1;"),
    ("mov.v2.f32 %vx0, %vx1;", "PTX-E-TYPE", "mov.v2.u32 %vx0, %vx1;"),
    ("mov.v4.f32 %v4fw0, %v2fw1;", "PTX-E-OPERANDS", "mov.v4.f32 %v4fw0, %v4uw1;"),
    ("mov.v2.f32 %v2fw0, {%sfw0, %sfw1, %sfw2};", "PTX-E-OPERANDS", "mov.v2.f32 %v2fw0, %sfw0;"),
    ("mov.v2.f32 %sfw0, %v2fw1;", "PTX-E-OPERANDS", "mov.v2.f32 %v2fw0, 0f3F800000;"),
    ("mov.v2.pred %v2fw0, %v2fw1;", "PTX-E-TYPE", "mov.v2.b32 %v2fw0, %v2fw1;"),
    ("mov.v2.f32 %v2fw0, {%sfw0, %suw0};", "PTX-E-TYPE", "mov.v2.f32 %v2fw0, {%sfw0, %sbw0};"),
    ("mov.b32 %sbw0, %v2bw0;", "PTX-E-TYPE", "mov.b64 %sbd0, %v2bw0;"),
    ("mov.u32 %suw0, %v2bh0;", "PTX-E-TYPE", "mov.b32 %suw0, %v2bh0;"),
    ("add.f32 %sfw0, %v2fw0, %sfw1;", "PTX-E-OPERANDS", "add.f32 %sfw0, %v2fw0.y, %sfw1;"),
    ("setp.eq.f32 %p, %v2fw0, %sfw1;", "PTX-E-OPERANDS", "setp.eq.f32 %p, %v4fw0.w, %sfw1;"),
    ("ld.global.v4.f32 %v2fw0, [%sud0];", "PTX-E-OPERANDS", "ld.global.v2.f32 %v2fw0, [%sud0];"),
    ("st.global.v2.u32 [%sud0], %v2fw0;", "PTX-E-TYPE", "st.global.v2.f32 [%sud0], %v2uw0;"),
    (".reg .v4 .f64 %big;", "PTX-E-DECL", ".reg .v2 .f64 %big;"),
    (".reg .v2 .pred %vp;", "PTX-E-DECL", ".reg .v4 .b32 %vp;"),
]


@pytest.mark.parametrize("bad,code,good", VECTOR_CASES, ids=[c[0] for c in VECTOR_CASES])
def test_vector_registers_lint_as_ptxas_takes_them(bad, code, good):
    ds = errors(vmodule(bad))
    assert [d.code for d in ds] == [code], [str(d) for d in ds]
    assert errors(vmodule(good)) == [], [str(d) for d in errors(vmodule(good))]


def test_vector_register_diagnostics_point_at_the_register():
    text = vmodule("mov.v2.s32 %v2fw0, %v2fw1;")
    (d,) = errors(text)
    line = text.split("\n")[d.loc.line - 1]
    assert line[d.loc.col - 1:].startswith("%v2fw0")
    assert "holds .f32 elements" in d.message and ".b32, .f32" in d.notes[0], str(d)
    text = vmodule("mov.f32 %sfw0, %v2fw1.z;")
    (d,) = errors(text)
    assert d.code == "PTX-E-OPERANDS" and "no component .z" in d.message and ".x, .y" in d.notes[0]
    assert text.split("\n")[d.loc.line - 1][d.loc.col - 1:].startswith("%v2fw1.z")
    (d,) = errors(vmodule(".reg .v4 .b64 %big;"))
    assert "256 bits" in d.message and "declare .v2 .b64" in d.notes[0]


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("bad,code,good", VECTOR_CASES, ids=[c[0] for c in VECTOR_CASES])
def test_vector_register_cases_agree_with_ptxas(bad, code, good):
    b = vmodule(bad)
    got = gen_cases.run_ptxas(b)
    assert got["rc"] != 0 and got["error_line"] in {d.loc.line for d in errors(b)}, got
    assert gen_cases.run_ptxas(vmodule(good))["rc"] == 0, gen_cases.run_ptxas(vmodule(good))


def _mov_matrix():
    """mov.vN.T between vector registers, from and into {...} lists, of each element type and T."""
    out = []
    for e in ELEMS:
        for t in ELEMS:
            for n in ((2, 4) if e.endswith(("16", "32")) and t.endswith(("16", "32")) else (2,)):
                sc = ", ".join(f"%s{_TAG[e]}{i}" for i in range(n))
                out += [f"mov.v{n}.{t} %v{n}{_TAG[e]}0, %v{n}{_TAG[e]}1;", f"mov.v{n}.{t} %v{n}{_TAG[e]}0, {{{sc}}};",
                        f"mov.v{n}.{t} {{{sc}}}, %v{n}{_TAG[e]}0;"]
            out += [f"mov.{t} %s{_TAG[t]}0, %v2{_TAG[e]}0.y;", f"mov.{t} %v2{_TAG[e]}0.x, %s{_TAG[t]}0;",
                    f"mov.{t} %s{_TAG[t]}0, %v2{_TAG[e]}0;"]
    return out


@pytest.mark.ptxas
@needs_ptxas
def test_mov_vector_type_matrix_agrees_with_ptxas():
    """Every line of the matrix: lint reports an error on it exactly where ptxas rejects it."""
    body = _mov_matrix()
    text = vmodule("\n".join(body))
    first = text.split("\n").index(body[0]) + 1
    rejected = set(ptxas_rejected(text, "sm_90a"))
    flagged = {d.loc.line for d in errors(text)}
    wrong = [(body[i - first], i in rejected) for i in range(first, first + len(body)) if (i in rejected) != (i in flagged)]
    assert not wrong, wrong[:20]
    assert 100 < len(rejected) < len(body) - 100  # both verdicts are well represented


FUNCS = """.func (.param .b32 r) f1(.param .b32 x) { ret; }
.func (.param .b32 r) f2(.param .b32 x) { ret; }
.func (.param .b64 r) g64(.param .b64 x) { ret; }
.func (.param .b32 r) fu(.param .u32 x) { ret; }
.func (.param .f32 r) ff(.param .f32 x) { ret; }
.func (.param .align 8 .b8 r[8]) fa(.param .align 8 .b8 x[8]) { ret; }
.func nor(.param .b32 x) { ret; }
.func h2(.param .b32 x, .param .b32 y) { ret; }
"""
CALL_DECLS = """.reg .b64 %rd1;
mov.u64 %rd1, f1;
.param .b32 a0; .param .b32 a1; .param .b32 r0; .param .b32 r1; .param .u32 au; .param .s32 as; .param .f32 af;
.param .b64 a64; .param .b64 r64; .param .b16 a16; .param .f32 rf; .param .u32 ru;
.param .align 8 .b8 ab8[8]; .param .align 4 .b8 ab4[8]; .param .align 8 .b8 rb8[8]; .param .align 4 .b8 a4arr[4];
"""


def cmodule(body: str) -> str:
    return (f".version 8.7\n.target sm_90a\n.address_size 64\n{FUNCS}.visible .entry k()\n{{\n{CALL_DECLS}{body}\n"
            f"ret;\n}}\n")


# (body ptxas rejects, the code lint gives it, a body ptxas takes in its place)
CALL_CASES = [
    ("$L: .calltargets f1, f2;\ncall (r0), %rd1, (a0, a1), $L;", "PTX-E-CALL",
     "$L: .calltargets f1, f2;\ncall (r0), %rd1, (a0), $L;"),
    ("$L: .calltargets f1, h2;\ncall (r0), %rd1, (a0), $L;", "PTX-E-CALL",
     "$L: .calltargets h2;\ncall %rd1, (a0, a1), $L;"),
    ("$L: .calltargets f1;\ncall %rd1, (a0), $L;", "PTX-E-CALL",
     "$L: .calltargets f1, nor;\ncall %rd1, (a0), $L;"),
    ("$L: .calltargets nor, f1;\ncall %rd1, (a0), $L;", "PTX-E-CALL",
     "$L: .calltargets nor;\ncall %rd1, (au), $L;"),
    ("$L: .calltargets f1, f2;\ncall (r0, r1), %rd1, (a0), $L;", "PTX-E-CALL",
     "$L: .calltargets f1, f2;\ncall (rf), %rd1, (af), $L;"),
    ("$L: .calltargets f1, g64;\ncall (r0), %rd1, (a0), $L;", "PTX-E-CALL",
     "$L: .calltargets g64;\ncall (r64), %rd1, (a64), $L;"),
    ("$L: .calltargets f1;\ncall (r0), %rd1, (a16), $L;", "PTX-E-CALL",
     "$L: .calltargets f1;\ncall (ru), %rd1, (au), $L;"),
    ("$L: .calltargets f1;\ncall (r0), %rd1, (a4arr), $L;", "PTX-E-CALL",
     "$L: .calltargets f1;\ncall (r0), %rd1, (as), $L;"),
    ("$L: .calltargets f1, ff;\ncall (r0), %rd1, (au), $L;", "PTX-E-CALL",
     "$L: .calltargets f1, ff;\ncall (r0), %rd1, (a0), $L;"),
    ("$L: .calltargets ff;\ncall (ru), %rd1, (af), $L;", "PTX-E-CALL",
     "$L: .calltargets ff;\ncall (rf), %rd1, (af), $L;"),
    ("$L: .calltargets fu;\ncall (r0), %rd1, (af), $L;", "PTX-E-CALL",
     "$L: .calltargets fu;\ncall (r0), %rd1, (as), $L;"),
    ("$L: .calltargets fa;\ncall (rb8), %rd1, (ab4), $L;", "PTX-E-CALL",
     "$L: .calltargets fa;\ncall (rb8), %rd1, (ab8), $L;"),
    ("call (r0), ff, (au);", "PTX-E-CALL", "call (r0), ff, (a0);"),
    ("call (ru), ff, (af);", "PTX-E-CALL", "call (r0), ff, (af);"),
    ("pp: .callprototype (.param .b32 _) _ (.param .b32 _);\ncall (r0), %rd1, (a64), pp;", "PTX-E-CALL",
     "pp: .callprototype (.param .b32 _) _ (.param .b32 _);\ncall (r0), %rd1, (af), pp;"),
    ("pp: .callprototype (.param .b32 _) _ (.param .u32 _);\ncall (r0), %rd1, (af), pp;", "PTX-E-CALL",
     "pp: .callprototype (.param .b32 _) _ (.param .u32 _);\ncall (rf), %rd1, (a0), pp;"),
]


@pytest.mark.parametrize("bad,code,good", CALL_CASES, ids=[c[0].replace("\n", " ") for c in CALL_CASES])
def test_indirect_calls_lint_as_ptxas_takes_them(bad, code, good):
    ds = errors(cmodule(bad))
    assert [d.code for d in ds] == [code], [str(d) for d in ds]
    assert errors(cmodule(good)) == [], [str(d) for d in errors(cmodule(good))]


def test_calltargets_diagnostic_names_the_function_and_its_signature():
    text = cmodule("$L: .calltargets f1, h2;\ncall (r0), %rd1, (a0), $L;")
    (d,) = errors(text)
    assert "call through $L, which names h2," in d.message and "h2 has 0 and 2" in d.message, str(d)
    assert d.notes[0].startswith("h2(") and "calltargets" in d.notes[1]
    assert text.split("\n")[d.loc.line - 1][d.loc.col - 1:].startswith("%rd1")
    (d,) = errors(cmodule("$L: .calltargets f1, ff;\ncall (r0), %rd1, (au), $L;"))
    assert "argument au is .u32; ff's parameter x is .f32" in d.message, str(d)


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("bad,code,good", CALL_CASES, ids=[c[0].replace("\n", " ") for c in CALL_CASES])
def test_indirect_call_cases_agree_with_ptxas(bad, code, good):
    b = cmodule(bad)
    got = gen_cases.run_ptxas(b)
    assert got["rc"] != 0 and got["error_line"] in {d.loc.line for d in errors(b)}, got
    assert gen_cases.run_ptxas(cmodule(good))["rc"] == 0, gen_cases.run_ptxas(cmodule(good))
