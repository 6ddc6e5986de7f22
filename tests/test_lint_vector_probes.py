"""Vector registers with mov.vN, and call arguments and indirect calls, linted as ptxas 13.0 takes them.

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
- a call's arguments and return values may be registers and immediates too, for .param and .reg
  parameters alike: a register of the parameter's size, no integer one for a floating-point parameter or
  back, a vector register as one .bN of its whole size, no .pred, special register or vector component;
  an integer immediate for .bN/.uN/.sN, a floating-point one for .bN/.fN; neither for an array
  ("Inconsistent state space"). `_` discards a return value and is no argument; a floating-point literal
  as a return value passes the argument rule, an integer one crashes ptxas, and so do some vector register
  return values (one written twice, or read by the same call; lint takes them). Variables of other state spaces, function names
  and the function's own parameters are no arguments ("illegal state space").
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


def _bad_and_good_lint(bad, code, good):
    """Lint gives `bad` exactly one error, of `code`, and passes `good`."""
    ds = errors(bad)
    assert [d.code for d in ds] == [code], [str(d) for d in ds]
    assert errors(good) == [], [str(d) for d in errors(good)]


def _bad_and_good_agree_with_ptxas(bad, good):
    """ptxas refuses `bad` at a line lint reports, and takes `good`, which lint passes."""
    got = gen_cases.run_ptxas(bad)
    assert got["rc"] != 0 and got["error_line"] in {d.loc.line for d in errors(bad)}, got
    assert gen_cases.run_ptxas(good)["rc"] == 0, gen_cases.run_ptxas(good)
    assert errors(good) == []


def _case_lints_as(text, code):
    """Lint reports exactly one error of `code` on the module `text`, or nothing where code is None;
    returns the errors."""
    ds = errors(text)
    assert [d.code for d in ds] == ([code] if code else []), [str(d) for d in ds]
    return ds


def _case_agrees_with_ptxas(text, code, crashes=False):
    """ptxas rejects the module `text` where `code` is an error code, at the one line lint reports, and
    takes it where code is None (and lint reports nothing). `crashes`: ptxas may also crash on it (a signal,
    which says no line) where code is an error code."""
    got = gen_cases.run_ptxas(text)
    assert (got["rc"] != 0) == (code is not None), got
    if crashes and got["rc"] < 0:
        assert [d.code for d in errors(text)] == [code], got
        return got
    assert {d.loc.line for d in errors(text)} == ({got["error_line"]} if code else set()), got
    return got


def _matrix_agrees_with_ptxas(text, lines, both, arch="sm_90a"):
    """Every one of `lines` (each once in `text`, one after the other): lint reports an error on it exactly
    where ptxas (for `arch`) rejects it, and more than `both` lines get each verdict."""
    first = text.split("\n").index(lines[0]) + 1
    rejected = set(ptxas_rejected(text, arch))
    flagged = {d.loc.line for d in errors(text)}
    wrong = [(lines[i - first], i in rejected) for i in range(first, first + len(lines))
             if (i in rejected) != (i in flagged)]
    assert not wrong, wrong[:20]
    assert both < len(rejected) < len(lines) - both  # both verdicts are well represented


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
    _bad_and_good_lint(vmodule(bad), code, vmodule(good))


# vector register declarations spelt with comments, without spaces, over lines or with a hex count: lint reads
# each from its parsed declaration. (declaration, body, the code lint gives, or None where ptxas takes it)
VECTOR_DECL_CASES = [
    (".reg /* .v4 .b64 */ .b32 %r9;", "mov.b32 %r9, 1;", None),
    (".reg .v4 /* .v2 */ .f32 %x;", "ld.global.v4.f32 %x, [%sud0];", None),
    (".reg .v2 /* pair */ .f32 %v;", "add.f32 %sfw0, %v, %sfw1;", "PTX-E-OPERANDS"),
    (".reg .v2.f32 %v;", "add.f32 %sfw0, %v, %sfw1;", "PTX-E-OPERANDS"),
    (".reg .v2 .f32 %a, // the first\n  %b;", "add.f32 %sfw0, %b, %sfw1;", "PTX-E-OPERANDS"),
    (".reg .v2 .f32 %a, /* %w, */ %b;", "mov.v2.f32 %b, %v2fw0;", None),
    (".reg .v4 .f32 %w<0x4>;", "add.f32 %sfw0, %w3, %sfw1;", "PTX-E-OPERANDS"),
    (".reg\n  .v4 /* */ .f64\n  %big;", "", "PTX-E-DECL"),
    (".reg .v2 .f32 %v;", "{\n.reg .f32 %v;\nadd.f32 %sfw0, %v, %sfw1;\n}", None),
    (".reg .v4 .b32 %q<2>;", "{\n.reg .b32 %q<2>;\nadd.u32 %suw0, %q1, 1;\n}", None),
]


_DECL_IDS = [f"{c[0]} {c[1]}".replace("\n", " ") for c in VECTOR_DECL_CASES]


@pytest.mark.parametrize("decl,body,code", VECTOR_DECL_CASES, ids=_DECL_IDS)
def test_vector_register_declarations_are_read_from_the_parse(decl, body, code):
    ds = errors(vmodule(decl + "\n" + body))
    assert [d.code for d in ds] == ([code] if code else []), [str(d) for d in ds]


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("decl,body,code", VECTOR_DECL_CASES, ids=_DECL_IDS)
def test_vector_register_declaration_cases_agree_with_ptxas(decl, body, code):
    """ptxas rejects the case at the one line lint reports, or takes it where lint reports nothing."""
    _case_agrees_with_ptxas(vmodule(decl + "\n" + body), code)


def test_a_scalar_register_hides_an_outer_vector_register_in_its_block_only():
    inner = "{\n.reg .f32 %v, %w<2>;\nadd.f32 %sfw0, %v, %w1;\n}"
    assert errors(vmodule(".reg .v2 .f32 %v, %w<2>;\n" + inner)) == []
    text = vmodule(".reg .v2 .f32 %v, %w<2>;\n" + inner + "\nadd.f32 %sfw1, %v, %w1;")
    outer = text.split("\n").index("add.f32 %sfw1, %v, %w1;") + 1
    assert [(d.code, d.loc.line) for d in errors(text)] == [("PTX-E-OPERANDS", outer)] * 2


def test_a_vector_declaration_error_points_at_its_vector_size():
    text = vmodule(".reg /* .v4 */ .v4 .f64 %big;")
    (d,) = errors(text)
    line = text.split("\n")[d.loc.line - 1]
    assert d.code == "PTX-E-DECL" and line[d.loc.col - 1:].startswith(".v4 .f64 %big"), (str(d), d.loc.col)
    text = vmodule(".reg\n  .v4 .f64\n  %big;")
    (d,) = errors(text)
    assert text.split("\n")[d.loc.line - 1] == "  .v4 .f64" and d.loc.col == 3, str(d)


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
    _bad_and_good_agree_with_ptxas(vmodule(bad), vmodule(good))


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
    _matrix_agrees_with_ptxas(vmodule("\n".join(body)), body, 100)


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
    _bad_and_good_lint(cmodule(bad), code, cmodule(good))


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
    _bad_and_good_agree_with_ptxas(cmodule(bad), cmodule(good))


# `.calltargets` and `.branchtargets` lists, read by the grammar (comments and line breaks anywhere between the
# names), as ptxas 13.0 takes them: each name of a .calltargets list a declared function ("Illegal call target,
# device function expected"), of a .branchtargets list a label visible there ("Unknown symbol", "Illegal
# branch target, label expected"), reported at the name; the list (and a .callprototype) right after its label,
# on its line or the lines above, with nothing between (else a syntax error). (body, the code lint gives or
# None where ptxas takes it, what the error points at)
TFUNCS = ".func (.param .b32 r) f(.param .b32 x) { ret; }\n.func (.param .b32 r) g(.param .b32 x) { ret; }\n" \
         ".global .u32 gv;\n"


def tmodule(body: str) -> str:
    return (f"{_PHDR}{TFUNCS}.visible .entry k()\n{{\n.reg .b64 %fp;\n.reg .b32 %i;\n.param .b32 a;\n.param .b32 r;\n"
            f"mov.u64 %fp, f;\nmov.u32 %i, 0;\n{body}\nret;\n}}\n")


TARGET_LIST_CASES = [
    ("$L: .calltargets f, /* h, */\n    g;\ncall (r), %fp, (a), $L;", None, None),
    ("$L: .calltargets f,\n  // g\n  nosuch;\ncall (r), %fp, (a), $L;", "PTX-E-UNDEFINED", "nosuch;"),
    ("$L: .calltargets f, gv;", "PTX-E-UNDEFINED", "gv;"),
    ("$T: .branchtargets $A,\n\t$C;\nbrx.idx %i, $T;\n$A:", "PTX-E-LABEL", "$C;"),
    ("$T: .branchtargets $A, f;\nbrx.idx %i, $T;\n$A:", "PTX-E-LABEL", "f;"),
    ("$T: .branchtargets $A;\nbrx.idx %i, $T;\n{\n$A:\nret;\n}", "PTX-E-LABEL", "$A;"),
    (".calltargets f, g;", "PTX-E-SYNTAX", ".calltargets f"),
    ("$T:\nmov.u32 %i, 1;\n.branchtargets $A;\nbrx.idx %i, $T;\n$A:", "PTX-E-SYNTAX", ".branchtargets $A"),
    ("$L:\n.pragma \"nounroll\";\n.calltargets f, g;", "PTX-E-SYNTAX", ".calltargets f"),
    (".callprototype (.param .b32 _) _ (.param .b32 _);", "PTX-E-SYNTAX", ".callprototype ("),
]


@pytest.mark.parametrize("body,code,at", TARGET_LIST_CASES, ids=[c[0].replace("\n", " ") for c in TARGET_LIST_CASES])
def test_target_lists_lint_as_ptxas_takes_them(body, code, at):
    text = tmodule(body)
    ds = _case_lints_as(text, code)
    assert not ds or _at(text, ds[0]).startswith(at), (str(ds[0]), ds[0].loc)


@pytest.mark.ptxas
@needs_ptxas
def test_target_list_cases_agree_with_ptxas():
    """ptxas rejects each case lint gives an error, at the line of that error (the line of the name, in a list
    over lines), and takes the others."""
    for body, code, _ in TARGET_LIST_CASES:
        _case_agrees_with_ptxas(tmodule(body), code)


def test_a_target_list_in_builder_raw_text_is_read_by_the_grammar():
    import ptxgen as pg
    m = pg.Module("sm_90a")
    k = m.entry("k")
    k.label("T")
    k.raw(".branchtargets /* $A, */\n  $nowhere;")
    k.ret()
    ds = [d for d in L.lint_module(m) if d.severity == "error"]
    assert [d.code for d in ds] == ["PTX-E-LABEL"] and "undefined label '$nowhere'" in ds[0].message, \
        [str(d) for d in ds]


# register and immediate arguments and return values: functions of .param and .reg parameters, called with
# the scalar (%s..) and vector (%v2.., %v4..) registers of VDECLS
RFUNCS = """.func (.param .b32 r) fb(.param .b32 x) { ret; }
.func (.param .f32 r) ff(.param .f32 x) { ret; }
.func (.param .u32 r) fu(.param .u32 x) { ret; }
.func (.param .b64 r) fd(.param .b64 x) { ret; }
.func (.param .b128 r) fq(.param .b128 x) { ret; }
.func (.param .align 4 .b8 r[4]) fa(.param .align 4 .b8 x[4]) { ret; }
.func (.param .b32 r) f2(.param .b32 x, .param .f32 y) { ret; }
.func (.reg .b32 r) gb(.reg .b32 x) { ret; }
.func (.reg .f32 r) gf(.reg .f32 x) { ret; }
.func fn_other() { ret; }
.global .b32 gv;
"""
RDECLS = """.reg .b128 %q<2>;
.reg .b64 %fp;
.param .b32 pa; .param .b32 pr; .param .align 4 .b8 parr[4];
"""


def rmodule(body: str) -> str:
    return (f".version 8.7\n.target sm_90a\n.address_size 64\n{RFUNCS}.visible .entry k(.param .b32 kp)\n{{\n{VDECLS}"
            f"{RDECLS}mov.u64 %fp, fb;\n{body}\nret;\n}}\n")


# (body ptxas rejects, the code lint gives it, a body ptxas takes in its place)
REG_CALL_CASES = [
    ("call (%sbw0), fb, (%sbh1);", "PTX-E-CALL", "call (%sbw0), fb, (%suw1);"),
    ("call (%sfw0), ff, (%suw1);", "PTX-E-CALL", "call (%sfw0), ff, (%sbw1);"),
    ("call (%sfw0), ff, (1);", "PTX-E-CALL", "call (%sfw0), ff, (1.0);"),
    ("call (%suw0), fu, (0f3F800000);", "PTX-E-CALL", "call (%suw0), fu, (7);"),
    ("call (%suw0), fu, (1.5);", "PTX-E-CALL", "call (%suw0), fu, (0x10);"),
    ("call (%sbw0), fb, (%p);", "PTX-E-CALL", "call (%sbw0), fb, (-1);"),
    ("call (%sbw0), fb, (%v2bw0);", "PTX-E-CALL", "call (%sbd0), fd, (%v2fw0);"),
    ("call (%q0), fq, (%v2fw0);", "PTX-E-CALL", "call (%q0), fq, (%v4fw0);"),
    ("call (%sbw0), fb, (%v2bw0.x);", "PTX-E-CALL", "call (%sbw0), fb, (%sbw1);"),
    ("call (%sbw0), fb, (%tid.x);", "PTX-E-CALL", "mov.u32 %sbw1, %tid.x;\ncall (%sbw0), fb, (%sbw1);"),
    ("call (%sbw0), fb, (_);", "PTX-E-CALL", "call (_), fb, (%sbw1);"),
    ("call (parr), fa, (%sbw1);", "PTX-E-CALL", "call (_), fa, (parr);"),
    ("call (parr), fa, (1);", "PTX-E-CALL", "call (_), fa, (parr);"),
    ("call (%sbw0), f2, (%sbw1);", "PTX-E-CALL", "call (%sbw0), f2, (%sbw1, 2.5);"),
    ("call (%sbw0), f2, (%sbw1, 1);", "PTX-E-CALL", "call (%sbw0), f2, (5, 0d3FF0000000000000);"),
    ("call (%sfw0), gf, (%ssw1);", "PTX-E-CALL", "call (%sfw0), gf, (%sbw1);"),
    ("call (%sbd0), gb, (%sbw1);", "PTX-E-CALL", "call (%sbw0), gb, (pa);"),
    ("call (%suw0), ff, (%sfw1);", "PTX-E-CALL", "call (%sbw0), ff, (%sfw1);"),
    ("call (1.5), fu, (%suw1);", "PTX-E-CALL", "call (1.5), ff, (%sfw1);"),
    ("call (pr), fb, (gv);", "PTX-E-CALL", "call (pr), fb, (pa);"),
    ("call (pr), fb, (kp);", "PTX-E-CALL", "call (pr), fb, (-2);"),
    ("call (pr), fb, (fn_other);", "PTX-E-CALL", "call (pr), fb, (%sbw1);"),
    ("pp: .callprototype (.param .b32 _) _ (.param .f32 _);\ncall (%sbw0), %fp, (%suw1), pp;", "PTX-E-CALL",
     "pp: .callprototype (.param .b32 _) _ (.param .f32 _);\ncall (%sbw0), %fp, (%sfw1), pp;"),
    ("pp: .callprototype (.reg .b32 _) _ (.reg .b32 _);\ncall (%sbw0), %fp, (%sbd1), pp;", "PTX-E-CALL",
     "pp: .callprototype (.reg .b32 _) _ (.reg .b32 _);\ncall (%sbw0), %fp, (%v2bh1), pp;"),
    ("$L: .calltargets fb;\ncall (%sbw0), %fp, (%sbd1), $L;", "PTX-E-CALL",
     "$L: .calltargets fb;\ncall (%sbw0), %fp, (%v2bh1), $L;"),
    ("$L: .calltargets fb, f2;\ncall (%sbw0), %fp, (%sbw1), $L;", "PTX-E-CALL",
     "$L: .calltargets fb, fu;\ncall (%sbw0), %fp, (%sbw1), $L;"),
    ("add.u32 %suw0, %suw1, (pa);", "PTX-E-SYNTAX", "add.u32 %suw0, %suw1, (4)*2;"),
]


@pytest.mark.parametrize("bad,code,good", REG_CALL_CASES, ids=[c[0].replace("\n", " ") for c in REG_CALL_CASES])
def test_register_and_immediate_call_arguments_lint_as_ptxas_takes_them(bad, code, good):
    _bad_and_good_lint(rmodule(bad), code, rmodule(good))


def _at(text: str, d) -> str:
    return text.split("\n")[d.loc.line - 1][d.loc.col - 1:]


def test_call_argument_diagnostics_name_the_argument_and_point_at_it():
    text = rmodule("call (%sbw0), f2, (%sbw1,  1);")
    (d,) = errors(text)
    assert d.message == "argument 1 is an integer immediate; f2's parameter y is .f32", str(d)
    assert d.notes == ("write a floating-point literal (1.0)",) and _at(text, d).startswith("1);")
    text = rmodule("call (%sbh0), fb, (%sbw1);")
    (d,) = errors(text)
    assert d.message.startswith("return value %sbh0 is .b16; fb's return parameter r is .b32"), str(d)
    assert _at(text, d).startswith("%sbh0") and d.span == len("%sbh0")
    (d,) = errors(rmodule("call (%sbw0), fb, (%v2bw0);"))
    assert "%v2bw0 is a .v2 .b32 vector register, 64 bits; fb's parameter x is .b32" in d.message, str(d)
    (d,) = errors(rmodule("call (parr), fa, (%sbw1);"))
    assert "fa's parameter x is .b8[4], an array" in d.message, str(d)
    (d,) = errors(rmodule("pp: .callprototype (.param .b32 _) _ (.param .f32 _);\ncall (%sbw0), %fp, (%suw1), pp;"))
    assert "argument %suw1 is .u32; prototype pp's parameter _ is .f32" in d.message, str(d)
    (d,) = errors(rmodule("call (pr), fb, (kp);"))
    assert "kp is a parameter of k itself" in d.message, str(d)
    (d,) = errors(rmodule("call (pr), fb, (gv);"))
    assert "gv is a .global variable" in d.message, str(d)


def test_an_integer_immediate_is_no_return_value():
    """ptxas 13.0 crashes on `call (7), f, ...` (a floating-point literal there it takes, by the argument
    rule); lint reports it."""
    text = rmodule("call (7), fb, (pa);")
    (d,) = errors(text)
    assert d.code == "PTX-E-CALL" and "return value 7 is an integer immediate" in d.message, str(d)
    assert _at(text, d).startswith("7)")
    assert errors(rmodule("call (1.5), fb, (pa);")) == []


@pytest.mark.ptxas
@needs_ptxas
def test_an_integer_immediate_return_value_fails_ptxas():
    assert gen_cases.run_ptxas(rmodule("call (7), fb, (pa);"))["rc"] != 0
    for good in ("call (_), fb, (pa);", "call (1.5), fb, (pa);", "call (0f3F800000), ff, (pa);"):
        assert gen_cases.run_ptxas(rmodule(good))["rc"] == 0 and errors(rmodule(good)) == [], good


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("bad,code,good", REG_CALL_CASES, ids=[c[0].replace("\n", " ") for c in REG_CALL_CASES])
def test_register_and_immediate_call_cases_agree_with_ptxas(bad, code, good):
    _bad_and_good_agree_with_ptxas(rmodule(bad), rmodule(good))


# every formal type of .param and .reg parameters, called directly, through a .callprototype and through a
# .calltargets list, with each kind of register and immediate as its argument and as its return value
_FORMALS = ("b16", "f16", "b32", "u32", "s32", "f32", "b64", "u64", "s64", "f64", "b128", "arr")
_ACTUAL_REGS = tuple(f"%s{_TAG[t]}1" for t in ELEMS) + ("%sh1", "%q1", "%p", "%v2bh1", "%v2bw1", "%v2fw1", "%v2ud1",
                                                        "%v4bw1", "%v4sh1", "%vx1")
_IMMS = ("7", "-1", "0x10", "1.5", "0f3F800000", "0d3FF0000000000000")


def _call_matrix():
    """(functions, prototypes and target lists, probed call lines)."""
    funcs, heads, calls = [], [".reg .f16 %sh<2>;", "mov.u64 %fp, g_param_b32;"], []
    for space in ("param", "reg"):
        for t in _FORMALS:
            if t == "arr" and space == "reg":
                continue
            decl = lambda n: (f".{space} .align 4 .b8 {n}[4]" if t == "arr" else f".{space} .{t} {n}")  # noqa: E731
            g = f"g_{space}_{t}"
            funcs.append(f".func ({decl('r')}) {g}({decl('x')}) {{ ret; }}")
            heads += [f"pp_{g}: .callprototype ({decl('_')}) _ ({decl('_')});", f"$L_{g}: .calltargets {g};"]
            ok_arg = "parr" if t == "arr" else "0.0" if t.startswith("f") else "0"
            for how in ("{g}", "%fp, ({a}), pp_{g}", "%fp, ({a}), $L_{g}"):
                for a in _ACTUAL_REGS + _IMMS + ("_",):
                    callee = how.format(g=g, a=a)
                    calls.append(f"call (_), {callee}{'' if how != '{g}' else f', ({a})'};")
                    # as a return value, an integer immediate crashes ptxas 13.0, and so do vector registers
                    # written twice or also read (a lone one it takes), as two lines of this kernel would be
                    if a not in ("7", "-1", "0x10") and not a.startswith("%v"):
                        callee = how.format(g=g, a=ok_arg)
                        calls.append(f"call ({a}), {callee}{'' if how != '{g}' else f', ({ok_arg})'};")
    return "\n".join(funcs) + "\n", "\n".join(heads), calls


@pytest.mark.ptxas
@needs_ptxas
def test_call_argument_matrix_agrees_with_ptxas():
    """Every call line of the matrix: lint reports an error on it exactly where ptxas rejects it."""
    funcs, heads, calls = _call_matrix()
    text = (f".version 8.7\n.target sm_90a\n.address_size 64\n{funcs}.visible .entry k()\n{{\n{VDECLS}{RDECLS}"
            f"{heads}\n" + "\n".join(calls) + "\nret;\n}\n")
    _matrix_agrees_with_ptxas(text, calls, 500)


# .param declarations, as ptxas 13.0 takes them: a .pred is a scalar register only ("Predicate type can only
# be used to define scalar register variables"; a scalar .param .pred that is allocated: "must be in register
# space"); a vector or packed (.f16x2) .param that is allocated, not an array, "cannot be allocated in .param
# state space" (`.param .v2 .f32 x[1]` can); a vector holds at most 128 bits and is .v2 or .v4. Allocated are
# the parameters of a definition and .param variables of a body, not those of a declaration or a
# .callprototype. A kernel's parameters are .param. (a module, the code lint gives, or None where ptxas takes it)
_PHDR = ".version 8.7\n.target sm_90a\n.address_size 64\n"
PARAM_DECL_CASES = [
    (".visible .entry k(.param .pred p) { ret; }", "PTX-E-DECL"),
    (".func f(.param .pred p) { ret; }", "PTX-E-DECL"),
    (".func (.param .pred r) f() { ret; }", "PTX-E-DECL"),
    (".func f(.reg .pred p) { ret; }", None),
    (".extern .func f(.param .pred p);", None),
    (".visible .entry k() { P: .callprototype _ (.param .pred p); ret; }", None),
    (".visible .entry k() { .param .pred p; ret; }", "PTX-E-DECL"),
    (".extern .func f(.param .pred p[2]);", "PTX-E-DECL"),
    (".func f(.reg .v2 .pred p) { ret; }", "PTX-E-DECL"),
    (".visible .entry k(.param .f16x2 h) { ret; }", "PTX-E-DECL"),
    (".visible .entry k(.param .f16x2 h[1]) { ret; }", None),
    (".visible .entry k(.param .f16 h) { ret; }", None),
    (".func (.param .f16x2 r) f() { ret; }", "PTX-E-DECL"),
    (".extern .func f(.param .f16x2 h);", None),
    (".visible .entry k() { .param .f16x2 h; ret; }", "PTX-E-DECL"),
    (".visible .entry k(.param .v2 .f32 v) { ret; }", "PTX-E-DECL"),
    (".visible .entry k(.param .align 8 .v2 .f32 v[1]) { ret; }", None),
    (".func f(.param .v4 .b32 v) { ret; }", "PTX-E-DECL"),
    (".func (.param .v2 .b64 r) f() { ret; }", "PTX-E-DECL"),
    (".func f(.reg .v2 .b64 v) { ret; }", None),
    (".visible .entry k() { .param .v4 .b8 v; ret; }", "PTX-E-DECL"),
    (".visible .entry k() { .param .v4 .b8 v[3]; ret; }", None),
    (".visible .entry k() { P: .callprototype (.param .v2 .f32 r) _ (.param .v4 .u32 x); ret; }", None),
    (".extern .func f(.param .v4 .f64 v[1]);", "PTX-E-DECL"),
    (".func f(.reg .v2 .b128 v) { ret; }", "PTX-E-DECL"),
    (".visible .entry k() { P: .callprototype _ (.param .v8 .b32 x); ret; }", "PTX-E-DECL"),
    (".visible .entry k(.reg .u32 r) { ret; }", "PTX-E-DECL"),
    (".func f(.param .bf16 b) { ret; }", "PTX-E-DECL"),
    (".visible .entry k() { .param .bf16x2 b[1]; ret; }", "PTX-E-DECL"),
]


@pytest.mark.parametrize("text,code", PARAM_DECL_CASES, ids=[c[0] for c in PARAM_DECL_CASES])
def test_param_declarations_lint_as_ptxas_takes_them(text, code):
    _case_lints_as(_PHDR + text, code)


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("text,code", PARAM_DECL_CASES, ids=[c[0] for c in PARAM_DECL_CASES])
def test_param_declaration_cases_agree_with_ptxas(text, code):
    got = gen_cases.run_ptxas(_PHDR + text)
    assert (got["rc"] != 0) == (code is not None), got


def test_param_declaration_errors_point_at_the_token_they_are_about():
    text = _PHDR + ".visible .entry k(.param .u64 a, .param .v2 .f32 v,\n  .param .pred p, .param .v8 .b8 w) { ret; }"
    ds = errors(text)
    got = [(d.loc.line, text.split("\n")[d.loc.line - 1][d.loc.col - 1:][:6]) for d in ds]
    assert got == [(4, "v,"), (5, ".pred "), (5, ".v8 .b")], [str(d) for d in ds]
    assert "v[1]" in ds[0].notes[0] and "register" in ds[1].message and "is not a vector size" in ds[2].message
    (d,) = errors(_PHDR + ".visible .entry k()\n{\n  .param /* c */ .v4 .b16 q;\nret;\n}")
    assert (d.loc.line, d.loc.col) == (6, 27) and "cannot be allocated" in d.message, str(d)


def _param_matrix():
    """Parameters of each shape in each position, one line each: kernel and .func parameters, return
    parameters, .param variables of a body, an .extern declaration's and a prototype's parameters."""
    lines = []
    i = 0
    for t in ("pred", "f16x2", "f16", "b8", "u16", "b32", "f32", "f64", "b128"):
        for v in ("", ".v2 ", ".v4 "):
            for arr in ("", "[2]"):
                for space in ("param", "reg"):
                    if space == "reg" and arr:
                        continue
                    p = f".{space} {v}.{t} x{arr}"
                    i += 1
                    lines += [f".func f{i}({p}) {{ ret; }}", f".func ({p}) g{i}() {{ ret; }}",
                              f".visible .entry k{i}({p}) {{ ret; }}", f".extern .func e{i}({p});"]
                    if space == "param":
                        lines += [f".visible .entry b{i}() {{ {p}; ret; }}",
                                  f".visible .entry c{i}() {{ P: .callprototype ({p}) _ ({p}); ret; }}"]
    return lines


@pytest.mark.ptxas
@needs_ptxas
def test_param_declaration_matrix_agrees_with_ptxas():
    """Every line of the matrix: lint reports an error on it exactly where ptxas rejects it."""
    body = _param_matrix()
    _matrix_agrees_with_ptxas(_PHDR + "\n".join(body) + "\n", body, 100)


# fp8, fp6 and fp4 types in declarations, as ptxas 13.0 takes them at sm_90a, sm_100a and sm_120a alike:
# .e4m3, .e5m2 and the packed .e4m3x2, .e5m2x2, .e2m3x2, .e3m2x2, .e2m1x2, .ue8m0x2, .e4m3x4, .e5m2x4 "may only
# be used as an instruction type" wherever ptxas allocates the declaration: a .reg, .param, .local, .shared,
# .global or .const variable, a parameter or return value of a kernel or function definition (.param or
# .reg); an array of them crashes ptxas. A function declaration's or a .callprototype's parameters take them
# (a vector of them: "Vector type only allowed over basic types"). .e2m3, .e3m2, .e2m1, .ue8m0, .ue4m3 and
# .s2f6x2, like .bf16 and .tf32, are a syntax error in any declaration.
FP8_ALLOCATED = ("e4m3", "e5m2", "e4m3x2", "e5m2x2", "e2m3x2", "e3m2x2", "e2m1x2", "ue8m0x2", "e4m3x4", "e5m2x4")
FP8_SYNTAX = ("e2m3", "e3m2", "e2m1", "ue8m0", "ue4m3", "s2f6x2")
_F8HDR = ".version 9.0\n.target {}\n.address_size 64\n"

# (a module after the header, the code lint gives, or None where ptxas takes it)
FP8_DECL_CASES = [
    (".visible .entry k(.param .e4m3 x) { ret; }", "PTX-E-DECL"),
    (".visible .entry k() { .param .e5m2 x; ret; }", "PTX-E-DECL"),
    (".func f(.param .e4m3x2 x) { ret; }", "PTX-E-DECL"),
    (".func (.param .e2m1x2 r) f() { ret; }", "PTX-E-DECL"),
    (".func f(.reg .ue8m0x2 x) { ret; }", "PTX-E-DECL"),
    (".global .e4m3 g;", "PTX-E-DECL"),
    (".const .e5m2x2 c;", "PTX-E-DECL"),
    (".visible .entry k() { .shared .e3m2x2 s; ret; }", "PTX-E-DECL"),
    (".visible .entry k() { .local .e4m3x4 l; ret; }", "PTX-E-DECL"),
    (".visible .entry k(.param .e2m1 x) { ret; }", "PTX-E-DECL"),
    (".extern .func f(.param .e4m3 x);", None),
    (".extern .func f(.reg .e5m2x2 x);", None),
    (".extern .func (.param .e4m3x4 r) f(.param .e2m3x2 x[2]);", None),
    (".visible .entry k() { P: .callprototype (.param .e5m2 r) _ (.reg .e4m3 x, .param .ue8m0x2 y); ret; }", None),
    (".extern .func f(.param .v2 .e4m3 x);", "PTX-E-DECL"),
    (".extern .func f(.param .e2m1 x);", "PTX-E-DECL"),
    (".visible .entry k(.param .b8 x) { .param .b16 y; ret; }", None),
]


@pytest.mark.parametrize("text,code", FP8_DECL_CASES, ids=[c[0] for c in FP8_DECL_CASES])
def test_fp8_declarations_lint_as_ptxas_takes_them(text, code):
    ds = errors(_F8HDR.format("sm_90a") + text)
    assert [d.code for d in ds] == ([code] if code else []), [str(d) for d in ds]


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("text,code", FP8_DECL_CASES, ids=[c[0] for c in FP8_DECL_CASES])
def test_fp8_declaration_cases_agree_with_ptxas(text, code):
    """ptxas rejects each case lint gives an error, at the line of that error, and takes the others."""
    _case_agrees_with_ptxas(_F8HDR.format("sm_90a") + text, code)


def test_fp8_declaration_errors_point_at_the_type_and_say_what_to_write():
    text = _F8HDR.format("sm_90a") + (".global .e4m3x4 g;\n.visible .entry k(.param .u64 a,\n  .param .e4m3 f)\n"
                                      "{\n  .param /* c */ .e5m2x2 h;\n  .reg .e2m1x2 %r<3>;\n  .local .e4m3 l[4];\n"
                                      "ret;\n}\n")
    ds = errors(text)
    got = [(d.loc.line, text.split("\n")[d.loc.line - 1][d.loc.col - 1:][:8], d.notes[0].split(":")[0]) for d in ds]
    assert got == [(4, ".e4m3x4 ", "write .b32 instead"), (6, ".e4m3 f)", "write .b8 instead"),
                   (8, ".e5m2x2 ", "write .b16 instead"), (9, ".e2m1x2 ", "write .b8 instead"),
                   (10, ".e4m3 l[", "write .b8 instead")], [str(d) for d in ds]
    assert all(d.code == "PTX-E-DECL" and "may only be used as an instruction type" in d.message for d in ds)


def test_the_builder_refuses_fp8_parameters_with_the_same_rule():
    import ptxgen as pg
    m = pg.Module("sm_90a")
    k = m.entry("k")
    with pytest.raises(pg.BuildError, match=r"\.e4m3 is an instruction type only") as e:
        k.param("x", "e4m3")
    assert e.value.code == "PTX-E-DECL" and "write .b8" in e.value.notes[0]
    with pytest.raises(pg.BuildError, match=r"\.e5m2x2 is an instruction type only"):
        m.func("f", rets=[("r", "e5m2x2")])
    k.param("y", "b8")


def _fp8_matrix():
    """Each type in each place, one line each: module variables, kernel and .func parameters, return
    parameters, variables of a body, a declaration's and a prototype's parameters (arrays only there, where
    ptxas does not crash), vectors."""
    lines = []
    for i, t in enumerate(FP8_ALLOCATED + FP8_SYNTAX + ("b8", "b16", "f16")):
        lines += [f".global .{t} gv{i};", f".shared .{t} sv{i};", f".const .{t} cv{i};",
                  f".func f{i}(.param .{t} x) {{ ret; }}", f".func (.param .{t} r) g{i}() {{ ret; }}",
                  f".func h{i}(.reg .{t} x) {{ ret; }}", f".visible .entry k{i}(.param .{t} x) {{ ret; }}",
                  f".extern .func e{i}(.param .{t} x, .reg .{t} y, .param .{t} z[2]);",
                  f".extern .func (.reg .{t} r) d{i}();", f".extern .func v{i}(.param .v2 .{t} x);"]
        lines += [f".visible .entry {s}{i}() {{ .{s} .{t} x; ret; }}" for s in ("reg", "param", "local", "shared")]
        lines.append(f".visible .entry c{i}() {{ P: .callprototype (.param .{t} r) _ (.param .{t} x[2]); ret; }}")
    return lines


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a", "sm_120a"])
def test_fp8_declaration_matrix_agrees_with_ptxas(arch):
    """Every line of the matrix: lint reports an error on it exactly where ptxas rejects it."""
    body = _fp8_matrix()
    _matrix_agrees_with_ptxas(_F8HDR.format(arch) + "\n".join(body) + "\n", body, 40, arch)


# the packed types ptxas 13.0 reads as types but no declaration it allocates may have, the same at every target
# and .version (probed at sm_90a, sm_100a and sm_120a, PTX ISA 8.6 to 9.0): .u16x2, .s16x2 and .f32x2 "may only
# be used as an instruction type", as the fp8 ones; .e2m1x4 (16 bits), .e2m3x4, .e3m2x4 and .ue8m0x4 (32), the x4
# types of cvt.rs, crash it (a segmentation fault, no message) where it compiles the declaration, or are refused
# before: a scalar .param ("cannot be allocated in .param state space"), a vector ("Vector type only allowed over
# basic types"), an initial value ("Initial value type mismatch"). A declaration's or a prototype's parameters
# and a .func's .param array take them all. Other spellings (.e2m1x8, .e5m3x2) are a syntax error.
PACKED_TYPES = ("e2m1x4", "e2m3x4", "e3m2x4", "ue8m0x4", "u16x2", "s16x2", "f32x2")
PACKED_DECL_CASES = [
    (".visible .entry k() { .reg .e2m1x4 r; ret; }", "PTX-E-DECL"),
    (".visible .entry k() { .reg .ue8m0x4 r<4>; mov.b32 r0, 0; ret; }", "PTX-E-DECL"),
    (".global .e2m3x4 g;", "PTX-E-DECL"),
    (".visible .const .e3m2x4 c;", "PTX-E-DECL"),
    (".extern .shared .e2m1x4 s[];", "PTX-E-DECL"),
    (".shared .e2m3x4 s;\n.visible .entry k() { .reg .b64 %r; mov.u64 %r, s; ret; }", "PTX-E-DECL"),
    (".visible .entry k() { .local .e3m2x4 l[2]; ret; }", "PTX-E-DECL"),
    (".visible .entry k(.param .e2m1x4 x) { ret; }", "PTX-E-DECL"),
    (".visible .entry k(.param .ue8m0x4 x[2]) { ret; }", "PTX-E-DECL"),
    (".func (.param .e2m3x4 r) f() { ret; }", "PTX-E-DECL"),
    (".func f(.reg .e2m1x4 x) { ret; }\n.visible .entry k() { .reg .b16 %a; call f, (%a); ret; }", "PTX-E-DECL"),
    (".func f() { .reg .e3m2x4 r; ret; }\n.visible .entry k() { call f; ret; }", "PTX-E-DECL"),
    (".visible .entry k() { .reg .v2 .e2m1x4 v; ret; }", "PTX-E-DECL"),
    (".global .e2m1x4 g = 1;", "PTX-E-DECL"),
    (".global .u16x2 g;", "PTX-E-DECL"),
    (".visible .entry k() { .reg .s16x2 r; ret; }", "PTX-E-DECL"),
    (".func f(.param .f32x2 x) { ret; }", "PTX-E-DECL"),
    (".extern .func f(.param .e2m1x4 x, .reg .e2m3x4 y);", None),
    (".extern .func (.param .ue8m0x4 r) f(.param .e3m2x4 x[2]);", None),
    (".visible .entry k() { P: .callprototype (.param .f32x2 r) _ (.reg .u16x2 x, .param .s16x2 y[2]); ret; }", None),
    (".func f(.param .e2m1x4 x[2]) { ret; }", None),
    (".extern .func f(.param .v2 .e2m1x4 x);", "PTX-E-DECL"),
    (".extern .func f(.param .e5m3x2 x);", "PTX-E-SYNTAX"),
]


@pytest.mark.parametrize("text,code", PACKED_DECL_CASES, ids=[c[0] for c in PACKED_DECL_CASES])
def test_packed_type_declarations_lint_as_ptxas_takes_them(text, code):
    _case_lints_as(_F8HDR.format("sm_100a") + text, code)


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("text,code", PACKED_DECL_CASES, ids=[c[0] for c in PACKED_DECL_CASES])
def test_packed_type_declaration_cases_agree_with_ptxas(text, code):
    """ptxas rejects each case lint gives an error, at the line of that error, or crashes on it, and takes the
    others; lint's error (of `code`) is a syntax error exactly where ptxas's is."""
    _case_lints_as(_F8HDR.format("sm_100a") + text, code)
    got = _case_agrees_with_ptxas(_F8HDR.format("sm_100a") + text, code, crashes=True)
    assert ("syntax error" in got["first_error"]) == (code == "PTX-E-SYNTAX"), got


# declarations of the crashing x4 types that whole-program ptxas does not compile: a .func no kernel reaches (its
# .reg parameters and variables) and a .shared variable no kernel uses. It takes them; `ptxas -c`, which compiles
# every function and variable, crashes on each, as whole-program ptxas does once a kernel reaches it. Lint
# reports them.
PACKED_UNCOMPILED = [
    ".func f(.reg .e2m1x4 x) { ret; }",
    ".visible .func (.reg .ue8m0x4 r) f() { ret; }",
    ".func f() { .reg .e2m3x4 r; ret; }",
    ".visible .func f() { .local .e3m2x4 l; ret; }",
    ".shared .e2m1x4 s;",
]


@pytest.mark.parametrize("text", PACKED_UNCOMPILED)
def test_uncompiled_packed_type_declarations_lint_as_errors(text):
    _case_lints_as(_F8HDR.format("sm_100a") + text, "PTX-E-DECL")


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("text", PACKED_UNCOMPILED)
def test_uncompiled_packed_type_declarations_crash_ptxas_c(text):
    """Whole-program ptxas takes the case, `ptxas -c` crashes on it, and lint reports it."""
    text = _F8HDR.format("sm_100a") + text
    assert gen_cases.run_ptxas(text)["rc"] == 0
    assert gen_cases.run_ptxas(text, flags=("-c",))["rc"] < 0
    assert [d.code for d in errors(text)] == ["PTX-E-DECL"], [str(d) for d in errors(text)]


def test_packed_type_declaration_errors_point_at_the_type_and_say_what_to_write():
    text = _F8HDR.format("sm_100a") + (".global .u16x2 g;\n.visible .entry k(.param .e2m3x4 x)\n{\n"
                                       "  .reg /* r */ .e2m1x4 %r<2>;\n  .local .f32x2 l;\nret;\n}\n")
    ds = errors(text)
    got = [(d.loc.line, text.split("\n")[d.loc.line - 1][d.loc.col - 1:][:7], d.notes[0].split(":")[0]) for d in ds]
    assert got == [(4, ".u16x2 ", "write .b32 instead"), (5, ".e2m3x4", "write .b32 instead"),
                   (7, ".e2m1x4", "write .b16 instead"), (8, ".f32x2 ", "write .b64 instead")], [str(d) for d in ds]
    assert "may only be used as an instruction type" in ds[0].message
    assert "cannot be allocated in .param state space" in ds[1].message
    assert "crashes on it" in ds[2].message


# (declaration, whether ptxas 13.0 refuses it, or crashes on it): the same for each of PACKED_TYPES
_PACKED_PLACES = (
    (".visible .entry k() {{ .reg .{t} r; ret; }}", True),
    (".visible .entry k() {{ .reg .{t} r<4>; ret; }}", True),
    (".visible .entry k(.param .{t} x) {{ ret; }}", True),
    (".visible .entry k(.param .{t} x[2]) {{ ret; }}", True),
    (".func f(.param .{t} x) {{ ret; }}", True),
    (".func (.param .{t} r) f() {{ ret; }}", True),
    (".func f(.param .{t} x[2]) {{ ret; }}", False),
    (".func f(.reg .{t} x) {{ ret; }}\n.visible .entry k() {{ .reg .b64 %r; mov.u64 %r, f; ret; }}", True),
    (".extern .func f(.param .{t} x, .reg .{t} y);", False),
    (".extern .func (.param .{t} r) f(.param .{t} x[2]);", False),
    (".visible .entry k() {{ P: .callprototype (.param .{t} r) _ (.reg .{t} x, .param .{t} y[2]); ret; }}", False),
    (".global .{t} g;", True),
    (".weak .global .{t} g[4];", True),
    (".global .{t} g = 1;", True),
    (".global .{t} g[2] = {{1, 2}};", True),
    (".const .{t} c = 0f3F800000;", True),
    (".extern .global .{t} e;", True),
    (".extern .shared .{t} s[];", True),
    (".visible .entry k() {{ .shared .{t} s[4]; ret; }}", True),
    (".visible .entry k() {{ .local .{t} l; ret; }}", True),
    (".visible .entry k() {{ .local .{t} l[2]; ret; }}", True),
    (".visible .entry k() {{ .param .{t} p; ret; }}", True),
    (".visible .entry k() {{ .reg .v2 .{t} v; ret; }}", True),
    (".global .v4 .{t} g;", True),
    (".extern .func f(.param .v2 .{t} x);", True),
)


def _packed_matrix():
    """(declaration, refused) for each type in each place."""
    return [(place.format(t=t), refused) for t in PACKED_TYPES for place, refused in _PACKED_PLACES]


def test_packed_type_matrix_lints_as_ptxas_takes_it():
    wrong = [(text, refused, [str(d) for d in errors(_F8HDR.format("sm_100a") + text)]) for text, refused in
             _packed_matrix() if bool(errors(_F8HDR.format("sm_100a") + text)) != refused]
    assert not wrong, wrong[:10]


@pytest.mark.ptxas
@needs_ptxas
def test_packed_type_matrix_agrees_with_ptxas():
    """Each declaration of the matrix, one module each (ptxas crashes on some), at each target at .version 9.0 and
    at each .version at sm_100a: ptxas refuses it or crashes exactly where lint reports an error."""
    from concurrent.futures import ThreadPoolExecutor
    heads = [_F8HDR.format(a) for a in ("sm_90a", "sm_100a", "sm_120a")]
    heads += [f".version {v}\n.target sm_100a\n.address_size 64\n" for v in ("8.6", "8.7", "8.8")]
    texts = [h + text + "\n" for h in heads for text, _ in _packed_matrix()]
    with ThreadPoolExecutor(2) as ex:
        verdicts = list(ex.map(gen_cases.run_ptxas, texts))
    wrong = [(t, got["rc"], got["first_error"]) for t, got in zip(texts, verdicts) if (got["rc"] != 0) != bool(errors(t))]
    assert not wrong, wrong[:10]
    crashed = sum(got["rc"] < 0 for got in verdicts)
    assert 100 < crashed < len(texts) - 100, crashed


# array dimensions, as ptxas 13.0 takes them: a variable's first dimension may be `[]` or `[0]` only where an
# initializer counts it or for an .extern .shared array ("Non-external variable 'g' has incomplete type"); a
# later one of 0 is "Array of incomplete type", a later `[]` a syntax error. A parameter takes one dimension
# (`x[2][2]`: syntax error); an unsized one only as the last input parameter of a .func or prototype ("Parameter
# to entry function cannot be an incomplete array", "Output parameter ...", "Only the last input parameter
# ..."), in .param space ("Incomplete array parameters must be in '.param' space"). A call may leave an unsized
# last parameter out of its list, or pass it a .param array of any size of its alignment. An .extern .global
# or .const array of no size is the linker's matter (ptxas -c takes it; whole-program ptxas: "Unresolved extern
# variable"), which lint leaves alone as it does an unresolved .extern function.
ARRAY_DECL_CASES = [
    (".global .b8 g[0];", "PTX-E-DECL"),
    (".visible .const .u32 g[];", "PTX-E-DECL"),
    (".shared .b8 g[][4];", "PTX-E-DECL"),
    (".extern .shared .b8 g[];", None),
    (".extern .shared .align 16 .b8 g[0][4];", None),
    (".extern .shared .b8 g[4][0];", "PTX-E-DECL"),
    (".global .b8 g[2][];", "PTX-E-DECL"),
    (".global .b8 g[] = {1, 2};", None),
    (".const .u32 g[0] = {1, 2};", None),
    (".visible .entry k() { .local .b8 l[0]; ret; }", "PTX-E-DECL"),
    (".visible .entry k() { .param .b8 p[]; ret; }", "PTX-E-DECL"),
    (".visible .entry k() { .global .b8 g[] = {1}; ret; }", None),
    (".visible .entry k(.param .b8 x[]) { ret; }", "PTX-E-DECL"),
    (".extern .entry k(.param .u32 a, .param .b8 x[0]);", "PTX-E-DECL"),
    (".func (.param .b8 r[]) f() { ret; }", "PTX-E-DECL"),
    (".func f(.param .b8 x[], .param .b32 y) { ret; }", "PTX-E-DECL"),
    (".func f(.param .b32 y, .param .align 8 .b8 x[]) { ret; }", None),
    (".func f(.param .v2 .b32 x[]) { ret; }", None),
    (".extern .func f(.reg .b32 x[]);", "PTX-E-DECL"),
    (".extern .func f(.param .pred x[]);", "PTX-E-DECL"),
    (".extern .func f(.param .b8 x[2][2]);", "PTX-E-DECL"),
    (".visible .entry k() { P: .callprototype _ (.param .b8 x[], .param .b8 y); ret; }", "PTX-E-DECL"),
    (".visible .entry k() { P: .callprototype _ (.param .b8 y, .param .b8 x[0]); ret; }", None),
]


@pytest.mark.parametrize("text,code", ARRAY_DECL_CASES, ids=[c[0] for c in ARRAY_DECL_CASES])
def test_array_dimensions_lint_as_ptxas_takes_them(text, code):
    _case_lints_as(_PHDR + text, code)


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("text,code", ARRAY_DECL_CASES, ids=[c[0] for c in ARRAY_DECL_CASES])
def test_array_dimension_cases_agree_with_ptxas(text, code):
    """ptxas rejects each case lint gives an error, at the line of that error, and takes the others."""
    _case_agrees_with_ptxas(_PHDR + text, code)


def test_array_dimension_errors_point_at_the_name_and_say_what_to_write():
    text = _PHDR + ".global .b8 tile[0];\n.func f(.param .u32 a,\n  .param .b8 rest[], .param .b32 y) { ret; }\n"
    ds = errors(text)
    got = [(d.loc.line, text.split("\n")[d.loc.line - 1][d.loc.col - 1:][:6]) for d in ds]
    assert got == [(4, "tile[0"), (6, "rest[]")], [str(d) for d in ds]
    assert "incomplete type" in ds[0].message and "tile[256]" in ds[0].notes[0]
    assert "Only the last input parameter" in ds[1].message and "end of the list" in ds[1].notes[0]


def test_the_builder_refuses_arrays_of_no_size_with_the_same_rule():
    import ptxgen as pg
    m = pg.Module("sm_90a")
    k = m.entry("k")
    with pytest.raises(pg.BuildError, match="incomplete type") as e:
        m.global_var("g", "b8", 0)
    assert e.value.code == "PTX-E-DECL" and "g[256]" in e.value.notes[0]
    with pytest.raises(pg.BuildError, match="incomplete type"):
        k.local("l", 0)
    m.global_var("h", "b8", 4)
    k.local("l", 8)


def _array_matrix():
    """Each array shape in each place, one line each: module and body variables of each state space, with and
    without an initializer, kernel, .func and return parameters, a declaration's and a prototype's
    parameters, .param and .reg."""
    lines = []
    for i, d in enumerate(("[0]", "[]", "[0][2]", "[2][0]", "[][2]", "[2][]", "[1]", "[2][2]")):
        init = " = {1, 2}" if d.count("[") == 1 else " = {{1, 2}}"
        lines += [f".global .b8 g{i}{d};", f".const .u32 c{i}{d};", f".shared .b8 s{i}{d};",
                  f".extern .shared .b8 e{i}{d};", f".global .b8 gi{i}{d}{init};",
                  f".visible .entry k{i}(.param .b8 x{d}) {{ ret; }}", f".func f{i}(.param .b8 x{d}) {{ ret; }}",
                  f".func h{i}(.param .b8 x{d}, .param .b32 y) {{ ret; }}",
                  f".func (.param .b8 r{d}) g{i}() {{ ret; }}", f".extern .func d{i}(.reg .b32 x{d});",
                  f".extern .func u{i}(.param .u32 a, .param .b8 x{d});",
                  f".visible .entry c{i}() {{ P: .callprototype (.param .b8 r{d}) _ (.param .b8 x{d}); ret; }}"]
        lines += [f".visible .entry b{s}{i}() {{ .{s} .b8 v{d}; ret; }}" for s in ("global", "const", "shared", "local",
                                                                                    "param")]
    return lines


@pytest.mark.ptxas
@needs_ptxas
def test_array_dimension_matrix_agrees_with_ptxas():
    """Every line of the matrix: lint reports an error on it exactly where ptxas rejects it."""
    body = _array_matrix()
    _matrix_agrees_with_ptxas(_PHDR + "\n".join(body) + "\n", body, 30)


AFUNCS = """.func fz(.param .b32 y, .param .b8 x[]) { ret; }
.func fw(.param .align 4 .b8 x[0]) { ret; }
.func fs(.param .s32 x[]) { ret; }
.func fa(.param .u32 x[2]) { ret; }
"""


def amodule(body: str) -> str:
    return (f"{_PHDR}{AFUNCS}.visible .entry k()\n{{\n.reg .b64 %fp;\n.reg .b8 %rb;\n.param .b32 b;\n.param .b8 a4[4];\n"
            f".param .align 4 .b8 w3[3];\n.param .s32 s3[3];\n.param .u32 u2[2];\n.param .b8 one;\nmov.u64 %fp, fz;\n"
            f"{body}\nret;\n}}\n")


# calls of functions with array parameters (body ptxas rejects, the code lint gives it, a body ptxas takes)
ARRAY_CALL_CASES = [
    ("call fz, (b, one);", "PTX-E-CALL", "call fz, (b, a4);"),
    ("call fz, (b, %rb);", "PTX-E-CALL", "call fz, (b);"),
    ("call fz, (b, 1);", "PTX-E-CALL", "call fz, (b, a4);"),
    ("call fz, (b, a4, a4);", "PTX-E-CALL", "call fz, (b, a4);"),
    ("call fw;", "PTX-E-CALL", "call fw, ();"),
    ("call fw, (a4);", "PTX-E-CALL", "call fw, (w3);"),
    ("call fs, (u2);", "PTX-E-CALL", "call fs, (s3);"),
    ("call fa, (s3);", "PTX-E-CALL", "call fa, (u2);"),
    ("P: .callprototype _ (.param .b32 y, .param .b8 x[]);\ncall %fp, (b, b), P;", "PTX-E-CALL",
     "P: .callprototype _ (.param .b32 y, .param .b8 x[]);\ncall %fp, (b), P;"),
    ("$L: .calltargets fz;\ncall %fp, (b, u2), $L;", "PTX-E-CALL", "$L: .calltargets fz;\ncall %fp, (b, a4), $L;"),
]


@pytest.mark.parametrize("bad,code,good", ARRAY_CALL_CASES, ids=[c[0].replace("\n", " ") for c in ARRAY_CALL_CASES])
def test_calls_with_array_parameters_lint_as_ptxas_takes_them(bad, code, good):
    _bad_and_good_lint(amodule(bad), code, amodule(good))


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("bad,code,good", ARRAY_CALL_CASES, ids=[c[0].replace("\n", " ") for c in ARRAY_CALL_CASES])
def test_array_parameter_call_cases_agree_with_ptxas(bad, code, good):
    _bad_and_good_agree_with_ptxas(amodule(bad), amodule(good))


# arrays of registers, as ptxas 13.0 takes them: no .reg variable is an array, of any size or type ("Variable
# 'r' cannot be allocated into a register"; for .pred, of any state space: "Predicate type can only be used to
# define scalar register variables"), nor a .reg parameter of a definition; a declaration's or a prototype's
# .reg parameter may be one. .local and .param arrays are memory and take any of them.
REG_ARRAY_CASES = [
    (".visible .entry k() { .reg .b32 r[8]; ret; }", "PTX-E-DECL"),
    (".visible .entry k() { .reg .f32 %f[1]; ret; }", "PTX-E-DECL"),
    (".visible .entry k() { .reg .v2 .b32 %v[2][2]; ret; }", "PTX-E-DECL"),
    (".visible .entry k() { .reg .pred %p[2]; ret; }", "PTX-E-DECL"),
    (".visible .entry k() { .local .pred p[2]; ret; }", "PTX-E-DECL"),
    (".func f() { .reg .b8 r[]; ret; }", "PTX-E-DECL"),
    (".func f(.reg .b32 x[2]) { ret; }", "PTX-E-DECL"),
    (".func (.reg .u64 r[1]) f() { ret; }", "PTX-E-DECL"),
    (".extern .func f(.reg .b32 x[2]);", None),
    (".visible .entry k() { P: .callprototype (.reg .b32 r[2]) _ (.reg .f32 x[4]); ret; }", None),
    (".visible .entry k() { .reg .b32 r<8>; .local .b32 l[8]; .param .b32 p[8]; ret; }", None),
    (".func f(.param .b32 x[2]) { .local .align 8 .b8 l[2][4]; ret; }", None),
]


@pytest.mark.parametrize("text,code", REG_ARRAY_CASES, ids=[c[0] for c in REG_ARRAY_CASES])
def test_register_arrays_lint_as_ptxas_takes_them(text, code):
    _case_lints_as(_PHDR + text, code)


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("text,code", REG_ARRAY_CASES, ids=[c[0] for c in REG_ARRAY_CASES])
def test_register_array_cases_agree_with_ptxas(text, code):
    """ptxas rejects each case lint gives an error, at the line of that error, and takes the others."""
    _case_agrees_with_ptxas(_PHDR + text, code)


def test_a_register_array_error_points_at_the_name_and_says_what_to_write():
    text = _PHDR + ".visible .entry k()\n{\n  .reg .b32 %r<2>, %acc[8];\n  ret;\n}\n.func f(.reg .f32 x,\n  .reg .f32 y[4]) { ret; }\n"
    ds = errors(text)
    got = [(d.loc.line, text.split("\n")[d.loc.line - 1][d.loc.col - 1:][:6]) for d in ds]
    assert got == [(6, "%acc[8"), (10, "y[4]) ")], [str(d) for d in ds]
    assert "cannot be allocated into a register" in ds[0].message and "`%acc<8>`" in ds[0].notes[0], str(ds[0])
    assert ds[1].message.startswith(".reg parameter y") and "4 scalar .reg parameters" in ds[1].notes[0], str(ds[1])


def _reg_array_matrix():
    """Registers and memory of each type and array shape, one line each: .reg, .local and .param variables of a
    body, .func and return parameters, a declaration's and a prototype's .reg parameters."""
    lines = []
    i = 0
    for t in ("b32", "f32", "b8", "pred", "v2 .b32"):
        for d in ("", "[8]", "[1]", "[]", "[0]", "[2][2]"):
            i += 1
            lines += [f".visible .entry r{i}() {{ .reg .{t} %r{d}; ret; }}",
                      f".visible .entry l{i}() {{ .local .{t} l{d}; ret; }}",
                      f".visible .entry p{i}() {{ .param .{t} p{d}; ret; }}",
                      f".func f{i}(.reg .{t} x{d}) {{ ret; }}", f".func (.reg .{t} r{d}) g{i}() {{ ret; }}",
                      f".extern .func e{i}(.reg .{t} x{d});",
                      f".visible .entry c{i}() {{ P: .callprototype (.reg .{t} r{d}) _ (.reg .{t} x{d}); ret; }}"]
    return lines


@pytest.mark.ptxas
@needs_ptxas
def test_register_array_matrix_agrees_with_ptxas():
    """Every line of the matrix: lint reports an error on it exactly where ptxas rejects it."""
    body = _reg_array_matrix()
    _matrix_agrees_with_ptxas(_PHDR + "\n".join(body) + "\n", body, 40)


# fp8, fp6 and fp4 arrays as parameters, as ptxas 13.0 takes them: a .func definition's .param array parameter
# or return value may have such a type (ptxas does not allocate it as it does a scalar one), though a call
# passes it nothing ("Type of argument does not match formal parameter", for any .param array) and crashes
# where the call leaves an unsized one out. A kernel's such array crashes ptxas, and a .reg one is a register.
FP8_ARRAY_CASES = [
    (".func f(.param .e4m3 x[2]) { ret; }", None),
    (".func (.param .e5m2x2 r[1]) f() { ret; }", None),
    (".visible .func f(.param .b32 a, .param .e2m1x2 x[]) { ret; }", None),
    (".func f(.param .e4m3x4 x[2]) { .reg .b64 %rd1; mov.u64 %rd1, x; ret; }", None),
    (".func f(.reg .e4m3 x[2]) { ret; }", "PTX-E-DECL"),
    (".func f(.param .v2 .e4m3 x[2]) { ret; }", "PTX-E-DECL"),
    (".visible .entry k(.param .e4m3 x[2]) { ret; }", "PTX-E-DECL"),
    (".visible .entry k() { .param .e4m3 l[2]; ret; }", "PTX-E-DECL"),
    (".func f(.param .e4m3 x[2]) { ret; }\n.visible .entry k() { .param .b8 a[2]; call f, (a); ret; }",
     "PTX-E-CALL"),
    (".func (.param .e4m3x2 r[2]) f() { ret; }\n.visible .entry k() { .param .b16 a[2]; call (a), f, (); ret; }",
     "PTX-E-CALL"),
    (".func f(.param .e2m1x2 x[]) { ret; }\n.visible .entry k() { call f, (); ret; }", "PTX-E-CALL"),
    (".func f(.param .b8 x[]) { ret; }\n.visible .entry k() { call f, (); ret; }", None),
]


@pytest.mark.parametrize("text,code", FP8_ARRAY_CASES, ids=[c[0] for c in FP8_ARRAY_CASES])
def test_fp8_array_parameters_lint_as_ptxas_takes_them(text, code):
    ds = errors(_F8HDR.format("sm_90a") + text)
    assert [d.code for d in ds] == ([code] if code else []), [str(d) for d in ds]


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("text,code", FP8_ARRAY_CASES, ids=[c[0] for c in FP8_ARRAY_CASES])
def test_fp8_array_parameter_cases_agree_with_ptxas(text, code):
    """ptxas rejects (or crashes on) each case lint gives an error, and takes the others; where it says a
    line, it is the line of lint's error."""
    text = _F8HDR.format("sm_90a") + text
    got = gen_cases.run_ptxas(text)
    assert (got["rc"] != 0) == (code is not None), got
    if got["error_line"] is not None:
        assert {d.loc.line for d in errors(text)} == {got["error_line"]}, got


def test_an_fp8_array_argument_error_says_what_to_declare():
    text = _F8HDR.format("sm_90a") + ".func f(.param .e4m3 x[2]) { ret; }\n.visible .entry k() { .param .b8 a[2]; call f, (a); ret; }"
    (d,) = errors(text)
    assert "an array of .e4m3, which no .param array matches" in d.message and "declare the parameter .b8" in d.notes[0]
    assert _at(text, d).startswith("a); ret;"), str(d)


def _fp8_array_matrix():
    """Each type in each array place, one line each: .func parameters and return values, sized and unsized,
    alone and last of two, .reg arrays, vectors of them."""
    lines = []
    for i, t in enumerate(FP8_ALLOCATED + ("b8", "b16")):
        lines += [f".func f{i}(.param .{t} x[2]) {{ ret; }}", f".func (.param .{t} r[1]) g{i}() {{ ret; }}",
                  f".func h{i}(.param .b32 a, .param .{t} x[]) {{ ret; }}", f".func r{i}(.reg .{t} x[2]) {{ ret; }}",
                  f".func v{i}(.param .v2 .{t} x[2]) {{ ret; }}"]
    return lines


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_fp8_array_parameter_matrix_agrees_with_ptxas(arch):
    """Every line of the matrix: lint reports an error on it exactly where ptxas rejects it."""
    body = _fp8_array_matrix()
    _matrix_agrees_with_ptxas(_F8HDR.format(arch) + "\n".join(body) + "\n", body, 15, arch)


# fp8, fp6 and fp4 parameters of prototypes (and declarations) in calls, as ptxas 13.0 takes them: each is an
# opaque value of its size, .e2m1x2 8 bits (two 4-bit values), .e4m3 8, .e4m3x2 16, .e4m3x4 32; a register or
# .param argument of that size passes (.b8, .u8 for .e2m1x2; not .b16), an immediate none, but for a 32-bit
# one (.e4m3x4, as .f16x2) a 0f literal ("Type of argument does not match formal parameter"); a .pred
# parameter takes no immediate either. The packed types are values of their size as well (.e2m1x4 16 bits,
# .e2m3x4 and .u16x2 32, .f32x2 64); a .f32x2 one takes any immediate but a 0f literal.
_OPAQUE_FORMALS = FP8_ALLOCATED + PACKED_TYPES + ("f16x2", "b8", "b16")
# a return value's call passes the formal an argument it takes
_OPAQUE_ARG = {"e4m3": "pb8", "e5m2": "pb8", "e2m1x2": "pb8", "f16x2": "0f3F800000", "e4m3x4": "0f3F800000",
               "e5m2x4": "0f3F800000", "b8": "0f3F800000", "b16": "0f3F800000", "e2m3x4": "pb32", "e3m2x4": "pb32",
               "ue8m0x4": "pb32", "u16x2": "pb32", "s16x2": "pb32", "f32x2": "1"}
_OPAQUE_ACTUALS = ("pb8", "pu8", "pb16", "pf16", "pb32", "pf32", "%rb8", "%ru8", "%rb16", "%rh", "%rb32", "%rf32")
_OPAQUE_IMMS = ("1", "0x10", "1.0", "0f3F800000", "0d3FF0000000000000")
_ODECLS = (".reg .b64 %fp;\n.param .b8 pb8;\n.param .u8 pu8;\n.param .b16 pb16;\n.param .f16 pf16;\n.param .b32 pb32;\n"
           ".param .f32 pf32;\n.reg .b8 %rb8;\n.reg .u8 %ru8;\n.reg .b16 %rb16;\n.reg .f16 %rh;\n.reg .b32 %rb32;\n"
           ".reg .f32 %rf32;\nmov.u64 %fp, 0;\n")


def _opaque_call_matrix():
    """(prototypes, probed call lines): each formal type, .param and .reg, with each argument and return value."""
    heads, calls = [], []
    for sp in ("param", "reg"):
        for t in _OPAQUE_FORMALS + ("pred",):
            p = f"P_{sp}_{t}"
            heads.append(f"{p}: .callprototype (.{sp} .{t} r) _ (.{sp} .{t} x);")
            for a in (_OPAQUE_ACTUALS if t != "pred" else ()) + _OPAQUE_IMMS:
                calls.append(f"call (_), %fp, ({a}), {p};")
                if t != "pred" and not a[0].isdigit():
                    calls.append(f"call ({a}), %fp, ({_OPAQUE_ARG.get(t, 'pb16')}), {p};")
    return heads, calls


@pytest.mark.ptxas
@needs_ptxas
def test_opaque_parameter_call_matrix_agrees_with_ptxas():
    """Every call line of the matrix: lint reports an error on it exactly where ptxas rejects it."""
    heads, calls = _opaque_call_matrix()
    text = (_F8HDR.format("sm_90a") + ".visible .entry k()\n{\n" + _ODECLS + "\n".join(heads) + "\n" + "\n".join(calls)
            + "\nret;\n}\n")
    _matrix_agrees_with_ptxas(text, calls, 100)


# (body ptxas rejects, the code lint gives it, a body ptxas takes in its place)
OPAQUE_CALL_CASES = [
    ("P: .callprototype _ (.param .e2m1x2 x);\ncall %fp, (pb16), P;", "PTX-E-CALL",
     "P: .callprototype _ (.param .e2m1x2 x);\ncall %fp, (pb8), P;"),
    ("P: .callprototype (.reg .e2m1x2 r) _ ();\ncall (%rb16), %fp, (), P;", "PTX-E-CALL",
     "P: .callprototype (.reg .e2m1x2 r) _ ();\ncall (%ru8), %fp, (), P;"),
    ("P: .callprototype _ (.param .e4m3 x);\ncall %fp, (1), P;", "PTX-E-CALL",
     "P: .callprototype _ (.param .e4m3 x);\ncall %fp, (%rb8), P;"),
    ("P: .callprototype _ (.reg .e4m3x2 x);\ncall %fp, (0f3F800000), P;", "PTX-E-CALL",
     "P: .callprototype _ (.reg .e4m3x2 x);\ncall %fp, (%rh), P;"),
    ("P: .callprototype _ (.param .e4m3x4 x);\ncall %fp, (1.0), P;", "PTX-E-CALL",
     "P: .callprototype _ (.param .e4m3x4 x);\ncall %fp, (0f3F800000), P;"),
    ("P: .callprototype _ (.param .f16x2 x);\ncall %fp, (0x10), P;", "PTX-E-CALL",
     "P: .callprototype _ (.param .f16x2 x);\ncall %fp, (0f3C003C00), P;"),
    ("P: .callprototype _ (.reg .pred x);\ncall %fp, (1), P;", "PTX-E-CALL",
     "P: .callprototype _ (.reg .b32 x);\ncall %fp, (1), P;"),
    ("P: .callprototype _ (.param .f32x2 x);\ncall %fp, (0f3F800000), P;", "PTX-E-CALL",
     "P: .callprototype _ (.param .f32x2 x);\ncall %fp, (0d3FF0000000000000), P;"),
    ("P: .callprototype _ (.reg .e2m1x4 x);\ncall %fp, (%rb32), P;", "PTX-E-CALL",
     "P: .callprototype _ (.reg .e2m1x4 x);\ncall %fp, (%rb16), P;"),
]


@pytest.mark.parametrize("bad,code,good", OPAQUE_CALL_CASES, ids=[c[0].replace("\n", " ") for c in OPAQUE_CALL_CASES])
def test_calls_with_opaque_parameters_lint_as_ptxas_takes_them(bad, code, good):
    module = lambda b: _F8HDR.format("sm_90a") + ".visible .entry k()\n{\n" + _ODECLS + b + "\nret;\n}\n"  # noqa: E731
    _bad_and_good_lint(module(bad), code, module(good))


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("bad,code,good", OPAQUE_CALL_CASES, ids=[c[0].replace("\n", " ") for c in OPAQUE_CALL_CASES])
def test_opaque_parameter_call_cases_agree_with_ptxas(bad, code, good):
    module = lambda b: _F8HDR.format("sm_90a") + ".visible .entry k()\n{\n" + _ODECLS + b + "\nret;\n}\n"  # noqa: E731
    _bad_and_good_agree_with_ptxas(module(bad), module(good))


def test_an_e2m1x2_parameter_is_8_bits_and_an_immediate_for_it_says_what_to_pass():
    text = (_F8HDR.format("sm_90a") + ".visible .entry k()\n{\n" + _ODECLS
            + "P: .callprototype _ (.param .e2m1x2 x);\ncall %fp, (pb16), P;\ncall %fp, (7), P;\nret;\n}\n")
    d1, d2 = errors(text)
    assert "prototype P's parameter x is .e2m1x2" in d1.message and "pb16 is .b16" in d1.message, str(d1)
    assert "7 is an immediate" in d2.message and d2.notes == ("pass a .b8 register holding its bits",), str(d2)


# the types a variable can have, one rule (legality.undeclarable_type) for the builder and lint: no type only
# instructions take (.bf16, .tf32, the fp8, fp6 and fp4 ones), and .pred only in a register ("Predicate variable
# 'g' must be in register state space", at module scope and in a body, .extern too)
PRED_VAR_CASES = [
    (".global .pred g;", "PTX-E-DECL"),
    (".extern .const .pred g;", "PTX-E-DECL"),
    (".visible .entry k() { .shared .pred s; ret; }", "PTX-E-DECL"),
    (".visible .entry k() { .local .pred l; ret; }", "PTX-E-DECL"),
    (".visible .entry k() { .local .pred l[2]; ret; }", "PTX-E-DECL"),
    (".visible .entry k() { .param .pred p; ret; }", "PTX-E-DECL"),
    (".visible .entry k() { .reg .pred p, q<2>; ret; }", None),
    (".func f(.reg .pred p) { .reg .pred q; ret; }", None),
]


@pytest.mark.parametrize("text,code", PRED_VAR_CASES, ids=[c[0] for c in PRED_VAR_CASES])
def test_pred_variables_lint_as_ptxas_takes_them(text, code):
    ds = _case_lints_as(_PHDR + text, code)
    if code:
        line = (_PHDR + text).split("\n")[ds[0].loc.line - 1]
        assert line[ds[0].loc.col - 1:].startswith(".pred"), str(ds[0])


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("text,code", PRED_VAR_CASES, ids=[c[0] for c in PRED_VAR_CASES])
def test_pred_variable_cases_agree_with_ptxas(text, code):
    _case_agrees_with_ptxas(_PHDR + text, code)


def test_the_builder_and_lint_refuse_the_same_variable_types():
    """For each type and state space, the builder's global_var() and shared() raise exactly where lint reports
    the declaration, with the same message."""
    import ptxgen as pg
    names = ("pred", "b8", "b16", "u32", "f16", "f16x2", "bf16", "bf16x2", "tf32", "f32", "f64", "b128", "e4m3", "e5m2",
             "e4m3x2", "e5m2x2")
    both = 0
    for space in ("global", "const", "shared"):
        for t in names:
            m = pg.Module("sm_90a")
            k = m.entry("k")
            try:
                (k.shared("v", 64, type=t) if space == "shared" else m.global_var("v", t, 4, space=space))
                built = None
            except pg.BuildError as e:
                built = e.message
            ds = errors(_PHDR + f".{space} .{t} v[4];")
            assert [d.message for d in ds] == ([built] if built else []), (space, t, built, [str(d) for d in ds])
            both += built is not None
    assert 15 < both < 40, both


# parameters the ABI cannot pass, as ptxas 13.0 takes them: it compiles each device function a kernel reaches
# to the ABI, which passes and returns no .u8, .s8, .u16, .s16 or .pred scalar ("In ABI compilation, passing
# predicate, 8-bit and 16-bit parameters to device functions is not supported", "... returning ... values
# from ...", with no line), whether the parameter is .param or .reg, the function defined, declared or
# .visible, reached through a call, a .calltargets list, its address (also in a variable's initializer) or
# another function; so is a prototype such code calls through. A function no kernel reaches is not compiled
# so; .b8, .b16, .f16, arrays and vectors pass. (module after the header, where lint's errors point, in order)
ABI_CASES = [
    (".func f(.param .u8 x)\n{ ret; }\n.visible .entry k() { .param .u8 a; call f, (a); ret; }", [".u8 x"]),
    (".func (.reg .s16 r) f(.reg .pred p,\n .param .b32 y) { ret; }\n.visible .entry k() { .reg .b64 %fp; mov.u64 %fp, f; ret; }",
     [".s16 r", ".pred p"]),
    (".func f(.param .u16 x) { ret; }\n.func g() { .param .u16 a; call f, (a); ret; }\n.visible .entry k() { call g; ret; }",
     [".u16 x"]),
    (".visible .func f(.param .s8 x) { ret; }\n.global .u64 tbl[2] = {0, f};\n"
     ".visible .entry k() { .reg .b64 %r; ld.global.u64 %r, [tbl]; ret; }", [".s8 x"]),
    (".func f(.reg .u8 x) { ret; }\n.visible .entry k() { .reg .b64 %fp; .reg .u8 %a; mov.u64 %fp, 0;\n"
     "$L: .calltargets f;\ncall %fp, (%a), $L; ret; }", [".u8 x"]),
    (".visible .entry k() { .reg .b64 %fp; .reg .u16 %a; mov.u64 %fp, 0;\nP: .callprototype (.reg .u16 r) _ ();\n"
     "call (%a), %fp, (), P; ret; }", [".u16 r"]),
    (".func (.reg .pred r) f() { ret; }\n.visible .entry k() { .reg .pred %p; call (%p), f, (); ret; }", [".pred r"]),
    (".func f(.param .u8 x) { ret; }\n.func g() { .param .u8 a; call f, (a); ret; }", []),
    (".func f(.param .u8 x) { ret; }\n.visible .func g() { .reg .b64 %fp; mov.u64 %fp, f; ret; }", []),
    (".func f(.reg .pred x) { ret; }\n.func g() { .reg .pred %p; call f, (%p); ret; }", []),
    (".func f(.param .u8 x) { ret; }\n.global .u64 tbl = f;\n.global .u64 t2 = tbl;\n"
     ".visible .entry k() { .reg .b64 %r; ld.global.u64 %r, [t2]; ret; }", []),
    (".func f(.param .u8 x) { ret; }\n.visible .entry k() { $L: .calltargets f; ret; }", []),
    (".func (.param .b16 r) f(.param .b8 x, .reg .f16 h, .param .u8 a[2], .reg .v2 .u16 v) { ret; }\n"
     ".visible .entry k(.param .u8 kp) { .reg .b64 %fp; mov.u64 %fp, f; ret; }", []),
    (".visible .entry k() { .reg .b64 %fp; mov.u64 %fp, 0;\nP: .callprototype _ (.param .u8 x); ret; }", []),
]


@pytest.mark.parametrize("text,at", ABI_CASES, ids=[c[0].replace("\n", " ") for c in ABI_CASES])
def test_parameters_the_abi_cannot_pass_lint_as_ptxas_takes_them(text, at):
    text = _PHDR + text
    ds = errors(text)
    got = [text.split("\n")[d.loc.line - 1][d.loc.col - 1:][:len(a)] for d, a in zip(ds, at)]
    assert [d.code for d in ds] == ["PTX-E-DECL"] * len(at) and got == at, [str(d) for d in ds]


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("text,at", ABI_CASES, ids=[c[0].replace("\n", " ") for c in ABI_CASES])
def test_abi_parameter_cases_agree_with_ptxas(text, at):
    """ptxas refuses the ABI (and nothing else) of each case lint reports, and takes the others."""
    got = gen_cases.run_ptxas(_PHDR + text)
    assert (got["rc"] != 0) == bool(at), got
    assert not at or got["first_error"].startswith("In ABI compilation, "), got


def test_an_abi_parameter_error_names_the_kernel_and_says_what_to_write():
    text = _PHDR + ".func f(.reg .s16 x) { ret; }\n.func g() { .reg .s16 %a; call f, (%a); ret; }\n.visible .entry k() { call g; ret; }"
    (d,) = errors(text)
    assert d.message.startswith("f's parameter x is .s16, and kernel k reaches f:") and "In ABI compilation" in d.message
    assert d.notes == ("declare it .s32 and widen the value (cvt.s32.s16), or .b16, which passes as it is",), d.notes
    assert (d.loc.line, d.loc.col, d.span) == (4, 14, 4), (d.loc, d.span)


def _abi_matrix():
    """Each parameter type in each place, one module each: .func parameters and return values, .param and
    .reg, of a function a kernel calls, one whose address it takes, one only another function calls, and
    prototypes a kernel calls through."""
    out = []
    for t in ("u8", "s8", "b8", "u16", "s16", "b16", "f16", "u32", "pred"):
        for sp in ("param", "reg"):
            if not (t == "pred" and sp == "param"):
                a = f".{sp} .{t} a;" if sp == "param" else f".reg .{t} %a;"
                arg = "a" if sp == "param" else "%a"
                out += [f".func f(.{sp} .{t} x) {{ ret; }}\n.visible .entry k() {{ {a} call f, ({arg}); ret; }}",
                        f".func (.{sp} .{t} r) f() {{ ret; }}\n.visible .entry k() {{ {a} call ({arg}), f, (); ret; }}",
                        f".func f(.{sp} .{t} x) {{ ret; }}\n.visible .entry k() {{ .reg .b64 %fp; mov.u64 %fp, f; ret; }}",
                        f".func f(.{sp} .{t} x) {{ ret; }}\n.func g() {{ {a} call f, ({arg}); ret; }}",
                        f".visible .entry k() {{ .reg .b64 %fp; {a} mov.u64 %fp, 0;\nP: .callprototype _ (.{sp} .{t} x);\n"
                        f"call %fp, ({arg}), P; ret; }}"]
    return out


@pytest.mark.ptxas
@needs_ptxas
def test_abi_parameter_matrix_agrees_with_ptxas():
    """Each module of the matrix: lint reports an error exactly where ptxas refuses the ABI."""
    from concurrent.futures import ThreadPoolExecutor
    texts = [_PHDR + t for t in _abi_matrix()]
    with ThreadPoolExecutor(2) as ex:
        verdicts = list(ex.map(gen_cases.run_ptxas, texts))
    wrong = [(t, got["first_error"]) for t, got in zip(texts, verdicts) if (got["rc"] != 0) != bool(errors(t))]
    assert not wrong, wrong[:10]
    refused = sum(got["rc"] != 0 for got in verdicts)
    assert 20 < refused < len(texts) - 20, refused


# vectors in declarations, one rule (legality.vector_error) for registers, parameters and variables of every
# state space, as ptxas 13.0 takes them: .v2 or .v4 (.v8, .v16: syntax error) of at most 128 bits ("Vector
# type too large"), no .pred, no fp8 type; each message names what is declared.
def _vector_decl_matrix():
    """Each vector of each type in each place, one line each: module and body variables of each state space,
    registers, .func and declaration parameters, .param arrays."""
    lines = []
    i = 0
    for t in ("b8", "b16", "b32", "f32", "b64", "f64", "b128", "pred", "f16x2", "e4m3", "e4m3x2"):
        for v in (".v2", ".v4", ".v8", ".v16"):
            i += 1
            lines += [f".global {v} .{t} g{i};", f".const {v} .{t} c{i};", f".shared {v} .{t} s{i}[2];",
                      f".extern .shared {v} .{t} e{i}[];", f".visible .entry l{i}() {{ .local {v} .{t} g; ret; }}",
                      f".visible .entry r{i}() {{ .reg {v} .{t} %g; ret; }}",
                      f".visible .entry p{i}() {{ .param {v} .{t} g[1]; ret; }}",
                      f".func f{i}(.reg {v} .{t} x) {{ ret; }}", f".extern .func d{i}(.param {v} .{t} x);"]
    return lines


@pytest.mark.ptxas
@needs_ptxas
def test_vector_declaration_matrix_agrees_with_ptxas():
    """Every line of the matrix: lint reports an error on it exactly where ptxas rejects it."""
    body = _vector_decl_matrix()
    _matrix_agrees_with_ptxas(_F8HDR.format("sm_90a") + "\n".join(body) + "\n", body, 100)


def test_vector_declaration_errors_name_what_is_declared():
    text = _PHDR + (".global .v4 .f64 g;\n.visible .entry k()\n{\n.local .v8 .b32 l;\n.reg .v4 .b64 %r;\n"
                    ".param .v2 .b128 p[1];\nret;\n}\n.extern .func f(.param .v16 .b8 x);\n")
    got = [(d.loc.line, d.message.split(" (ptxas")[0], d.notes[0]) for d in errors(text)]
    assert got == [(4, ".v4 .f64 is 256 bits; a vector variable holds at most 128", "declare .v2 .f64"),
                   (7, ".v8 is not a vector size of a variable", "a vector variable is .v2 or .v4"),
                   (8, ".v4 .b64 is 256 bits; a vector register holds at most 128", "declare .v2 .b64"),
                   (9, ".v2 .b128 is 256 bits; a vector parameter holds at most 128", "declare scalar .b128 parameters"),
                   (12, ".v16 is not a vector size of a parameter", "a vector parameter is .v2 or .v4")], got
    assert all(text.split("\n")[d.loc.line - 1][d.loc.col - 1:].startswith(".v") for d in errors(text))


# addresses in a module variable's initializer: only of what an earlier statement declares, and generic()
# only of a variable (ptxas 13.0: "Invalid initial value symbol", "Invalid initial value expression")
INIT_SYMBOL_CASES = [
    (".global .u64 p = g;\n.global .u32 g;", "PTX-E-DECL"),
    (".global .u32 g;\n.global .u64 p = g;", None),
    (".global .u64 p = nosuch;", "PTX-E-DECL"),
    (".global .u64 p = generic(g);\n.global .u32 g;", "PTX-E-DECL"),
    (".global .u32 g;\n.global .u64 p = generic(g);", None),
    (".global .u32 g;\n.global .u64 p = g+4;", None),
    (".global .u32 g;\n.global .u64 p[2] = {g, generic(g)+8};", None),
    (".global .u32 g;\n.global .u64 p[2] = {g, generic(h)+8};", "PTX-E-DECL"),
    (".global .u64 p = p;", "PTX-E-DECL"),
    (".global .u32 a, b = a;", "PTX-E-DECL"),
    (".global .u32 a;\n.global .u32 b = a;", None),
    (".func f() { ret; }\n.global .u64 p = f;", None),
    (".global .u64 p = f;\n.func f() { ret; }", "PTX-E-DECL"),
    (".func f() { ret; }\n.global .u64 p = generic(f);", "PTX-E-DECL"),
    (".extern .func f();\n.global .u64 p = generic(f);", "PTX-E-DECL"),
    (".visible .entry k() { ret; }\n.global .u64 p = k;", None),
]


@pytest.mark.parametrize("text,code", INIT_SYMBOL_CASES, ids=[c[0] for c in INIT_SYMBOL_CASES])
def test_initializer_addresses_lint_as_ptxas_takes_them(text, code):
    _case_lints_as(_PHDR + text, code)


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("text,code", INIT_SYMBOL_CASES, ids=[c[0] for c in INIT_SYMBOL_CASES])
def test_initializer_address_cases_agree_with_ptxas(text, code):
    _case_agrees_with_ptxas(_PHDR + text, code)


def test_initializer_address_errors_point_at_the_value_and_say_what_to_write():
    text = _PHDR + ".global .u32 g;\n.global .u64 tab[2] = {g, later};\n.func f() { ret; }\n" \
        ".global .u64 q = generic(f);\n.global .u32 later;\n"
    ds = errors(text)
    got = [(d.loc.line, text.split("\n")[d.loc.line - 1][d.loc.col - 1:][:8]) for d in ds]
    assert got == [(5, "later};"), (7, "generic(")], [str(d) for d in ds]
    assert "'later' is not declared before" in ds[0].message and "a statement above" in ds[0].notes[0]
    assert "generic() of the function 'f'" in ds[1].message and "`f` alone" in ds[1].notes[0]
