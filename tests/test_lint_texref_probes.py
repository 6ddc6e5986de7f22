""".texref, .samplerref and .surfref variables and parameters, linted as ptxas 13.0 takes them, probed spelling by
spelling (each case below is a module of its own; the tests marked ptxas run them through it).

What ptxas 13.0 showed:
- a reference is a scalar .global variable at module scope, with .extern, .visible or .weak or none, or a
  kernel's .param parameter (of a definition or a declaration). In a function's body it is refused in every state
  space, with an initial value or not, an array or not, in a nested block or not ("Texture/surface variable must
  be at module or entry parameter scope", at the line of its type); so is a .tex variable there ("Texture
  variables must be declared at module scope", "Variable 'x' must be type .u32 or .u64"). Only a vector size is
  checked before ("Vector type only allowed over basic types", also at module scope and of a parameter).
- a scalar one of .const or .shared is "Texture and surface variables must be declared in .global space", a
  .common one "Illegal type for .common symbol"; an array of references is plain memory: any state space,
  .common, .extern .shared `t[]`, a .samplerref array without texmode_independent, a .func's .param array.
- a .func's .param or .reg parameter, return parameters too, is "Variable 't' cannot be allocated in .param
  state space" ("... into a register"), but in an .extern declaration or a .callprototype; a kernel's scalar
  .samplerref parameter, as a scalar .samplerref variable, "violates .target texmode_unified setting" without
  texmode_independent.
- the initial value is a {...} list of the reference's fields, `name = value`, one for each element of an array
  (`t[2] = {{width = 1}, {height = 2}}`; a field alone stands for an element's list, `t[2] = {width = 1, width
  = 2}`); the value is any constant (`64`, `1.5`, `0f3F800000`, `-(2)`) or one of nearest, linear, wrap,
  mirror, clamp_ogl, clamp_to_edge, clamp_to_border, for any field and of any variable (`.global .u32 x = a =
  1;` is taken): another name is "Unrecognized initial value symbol 'x'" (at the value, before any other error
  of the statement's initializers; ptxas often crashes after it). ptxas checks the list's length against the
  type's field count (13, 5, 7: "Too many elements in opaque struct initializer"), then each element in order:
  a field ("Opaque structure initializer requires named fields") of the type ("Unrecognized field name 'x' in
  opaque struct initializer"), each at the list's closing brace; a value or an address where a list belongs is
  "Initial value type mismatch" (an address ptxas does not know first "Invalid initial value symbol"). Then an
  .extern reference takes none, then the state space and .common rules above. A field as the whole initial value
  crashes ptxas (but of a one-dimensional array of a size), and so does one where a non-reference array's list
  belongs (`.global .b32 x[2] = a = 1;`).
- an instruction names a reference through tex, tld4, txq, suld, sust, sured and suq, a kernel's .param one too
  (which takes no .global space); an array of them is no reference there ("Arguments mismatch"), nor `[t+4]`.
  mov takes its handle as .u64 only ("Indirect access to texture requires .u64 type"); ld, st and the other
  memory instructions do not address it ("Illegal operand type to instruction 'ld'"; atom and prefetch crash).
"""
from __future__ import annotations

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_lint_vector_probes import _PHDR, _case_agrees_with_ptxas, errors, needs_ptxas  # noqa: E402
from test_lint_init_probes import _lints_at  # noqa: E402

_IHDR = _PHDR.replace(".target sm_90a", ".target sm_90a, texmode_independent")
U, I = _PHDR, _IHDR
OK = None
DECL, DIR = "PTX-E-DECL", "PTX-E-DIRECTIVE"


def _cases(table):
    """(module, code, where lint's error starts, ptxas crashes on it) of each (header, text, code, at[, crashes])."""
    return [(h + t + "\n", code, at, bool(rest and rest[0])) for h, t, code, at, *rest in table]


def _ids(cases):
    return [("I " if c[0].startswith(_IHDR) else "") + c[0].split("\n", 3)[3].strip() for c in cases]


# module-scope variables and their initial values
MODULE = [
    (U, ".global .texref t = { width = 64, filter_mode = linear };", OK, None),
    (U, ".global .texref t = { normalized_coords = 1, width = 0f3F800000, height = -(2), depth = 0x10, "
        "array_size = 1.5 };", OK, None),
    (U, ".global .surfref s = { width = 4, height = 4, depth = 1, channel_data_type = 1, channel_order = 1, "
        "array_size = 1, memory_layout = 1 };", OK, None),
    (I, ".global .samplerref s = { force_unnormalized_coords = 1, filter_mode = linear, addr_mode_0 = "
        "clamp_to_border, addr_mode_1 = wrap, addr_mode_2 = mirror };", OK, None),
    (U, ".global .texref t = { filter_mode = foo };", DECL, "foo }", True),
    (U, ".global .texref t = {\n filter_mode = nearest,\n width = bar\n};", DECL, "bar", True),
    (U, ".global .u32 x = 1.0, y = a = b;", DECL, "b;"),              # before the value of x
    (U, ".global .texref t = { width = 1, foo = 2 };", DECL, "};"),
    (U, ".global .texref t = {\n filter_mode = nearest,\n foo = 1\n};", DECL, "};"),
    (U, ".global .surfref s = { filter_mode = nearest };", DECL, "};"),
    (I, ".global .samplerref s = { width = 4 };", DECL, "};"),
    (U, ".global .texref t = { 1 };", DECL, "};"),
    (U, ".global .texref t = { filter_mode = nearest,\n {} };", DECL, "};", True),
    (U, ".global .texref t = " + "{" + ", ".join(["width = 1"] * 14) + "};", DECL, "};"),
    (U, ".global .texref t = 0;", DECL, "0;"),
    (U, ".global .u32 g;\n.global .texref t = g;", DECL, "g;"),
    (U, ".global .texref t = filter_mode = nearest;", DECL, "nearest;", True),
    (U, ".global .texref t[2] = {{width = 1}, {width = 2}, {width = 3}};", DECL, "};"),
    (U, ".global .texref t[2] = {width = 1, height = 2};", OK, None),
    (U, ".global .texref t[4] = width = 4;", OK, None),
    (U, ".global .texref t[2][2] = {{{width = 1}}, {{width = 2}, {height = 3}}};", OK, None),
    (U, ".global .texref t[2] = {{width = 1}, 2};", DECL, "2}"),
    (U, ".global .texref t[2] = {{{width = 1}\n}\n};", DECL, "}\n};"),
    (U, ".global .texref t[] = {};", DECL, "};"),
    (U, ".global .b32 x[2] = a = 1;", DECL, "1;", True),
    (U, ".global .v2 .b32 x = {a = 1, 2};", OK, None),
    (U, ".global .f16x2 x = a = 1;", OK, None),
    (U, ".global .f16 x = a = 1;", DECL, "1;"),
    (U, ".extern .global .texref t = { filter_mode = nearest };", DECL, "nearest }"),
    (U, ".extern .global .texref t = { foo = 1 };", DECL, "};"),      # the field before the .extern
    (U, ".const .texref t;", DECL, "t;"),
    (U, ".shared .surfref s;", DECL, "s;"),
    (U, ".const .texref t = { 1 };", DECL, "};"),                    # the initializer before the state space
    (U, ".const .texref t[2] = {{width = 1}, {height = 2}};", OK, None),
    (U, ".common .global .texref t;", DECL, "t;"),
    (U, ".common .global .texref t[2] = {width = 1};", OK, None),
    (U, ".global .v2 .texref t;", DECL, ".v2"),
    (U, ".global .samplerref s[2];", OK, None),
    (U, ".global .samplerref s = { 1 };", DECL, "};"),               # the initializer before the mode
    (U, ".extern .shared .samplerref s[];", OK, None),
]
MODULE_CASES = _cases(MODULE)


@pytest.mark.parametrize("text,code,at,crashes", MODULE_CASES, ids=_ids(MODULE_CASES))
def test_reference_variables_lint_as_ptxas_takes_them(text, code, at, crashes):
    _lints_at(text, code, at)


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("text,code,at,crashes", MODULE_CASES, ids=_ids(MODULE_CASES))
def test_reference_variable_cases_agree_with_ptxas(text, code, at, crashes):
    _case_agrees_with_ptxas(text, code, crashes)
    _lints_at(text, code, at)  # lint's error where ptxas's is, and what it says


# references and .tex variables in a function's body, and parameters
BODY = [
    (U, ".visible .entry k()\n{\n.global .texref t;\nret;\n}", DECL, ".texref t;"),
    (U, ".func f()\n{\n{\n.global .texref t = { filter_mode = nearest };\n}\nret;\n}", DECL, ".texref t"),
    (U, ".visible .entry k()\n{\n.shared .surfref s[2];\nret;\n}", DECL, ".surfref"),
    (U, ".visible .entry k()\n{\n.reg .texref t<2>;\nret;\n}", DECL, ".texref"),
    (I, ".visible .entry k()\n{\n.param .samplerref s;\nret;\n}", DECL, ".samplerref"),
    (U, ".visible .entry k()\n{\n.local .texref t = { foo = 1 };\nret;\n}", DECL, ".texref"),
    (U, ".visible .entry k()\n{\n.global\n.texref t;\nret;\n}", DECL, ".texref t;"),
    (U, ".visible .entry k()\n{\n.tex .u32 t;\nret;\n}", DECL, ".u32 t;"),
    (U, ".func f()\n{\n.tex .b8 t[2];\nret;\n}", DECL, ".b8"),
    (U, ".visible .entry k()\n{\n.global .v2 .texref t;\nret;\n}", DECL, ".v2"),
    (U, ".func f(.param .texref t)\n{\nret;\n}", DECL, "t)"),
    (U, ".func (.reg .surfref r) f()\n{\nret;\n}", DECL, "r)"),
    (U, ".visible .entry k(.param .u32 a,\n.param .samplerref s)\n{\nret;\n}", DIR, "s)"),
    (U, ".visible .entry k(.param .v2 .texref t)\n{\nret;\n}", DECL, ".v2"),
]
BODY_CASES = _cases(BODY)


@pytest.mark.parametrize("text,code,at,crashes", BODY_CASES, ids=_ids(BODY_CASES))
def test_references_in_bodies_and_parameters_lint_as_ptxas_takes_them(text, code, at, crashes):
    _lints_at(text, code, at)


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("text,code,at,crashes", BODY_CASES, ids=_ids(BODY_CASES))
def test_body_and_parameter_cases_agree_with_ptxas(text, code, at, crashes):
    _case_agrees_with_ptxas(text, code, crashes)
    _lints_at(text, code, at)  # lint's error where ptxas's is, and what it says


_K = (".global .texref t;\n.global .texref ta[2];\n.global .surfref s;\n.visible .entry k(.param .texref pt)\n{{\n"
      ".reg .b64 %rd;\n.reg .b32 %r;\n.reg .f32 %f<6>;\n{}\nret;\n}}")
_KI = (".global .texref t;\n.global .samplerref sa[2];\n.visible .entry k(.param .texref pt, .param .samplerref ps)\n"
       "{{\n.reg .b64 %rd;\n.reg .b32 %r;\n.reg .f32 %f<6>;\n{}\nret;\n}}")
_D = "{%f0, %f1, %f2, %f3}"
OPS, TYPE = "PTX-E-OPERANDS", "PTX-E-TYPE"
# references named by instructions
USES = [
    (U, _K.format(f"tex.2d.v4.f32.f32 {_D}, [pt, {{%f4, %f5}}];"), OK, None),
    (U, _K.format("txq.width.b32 %r, [pt];"), OK, None),
    (I, _KI.format(f"tex.2d.v4.f32.f32 {_D}, [pt, ps, {{%f4, %f5}}];"), OK, None),
    (U, _K.format(f"tex.2d.v4.f32.f32 {_D}, [ta, {{%f4, %f5}}];"), OPS, "[ta"),
    (I, _KI.format(f"tex.2d.v4.f32.f32 {_D}, [t, sa, {{%f4, %f5}}];"), OPS, "[t, sa"),
    (U, _K.format("txq.width.b32 %r, [t+4];"), OPS, "[t+4]"),
    (U, _K.format("mov.b64 %rd, t;"), TYPE, "t;"),
    (U, _K.format("mov.u32 %r, s;"), TYPE, "s;"),
    (U, _K.format("ld.global.u64 %rd, [t];"), OPS, "[t]"),
    (U, _K.format("ld.param.u64 %rd, [pt];"), OPS, "[pt]"),
    (U, _K.format("st.global.b32 [t+4], %r;"), OPS, "[t+4]"),
    (U, _K.format("atom.global.add.u64 %rd, [t], 1;"), OPS, "[t]", True),
]
USE_CASES = _cases(USES)


@pytest.mark.parametrize("text,code,at,crashes", USE_CASES, ids=[c[0].split("\n")[-4] for c in USE_CASES])
def test_references_in_instructions_lint_as_ptxas_takes_them(text, code, at, crashes):
    _lints_at(text, code, at)


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("text,code,at,crashes", USE_CASES, ids=[c[0].split("\n")[-4] for c in USE_CASES])
def test_reference_use_cases_agree_with_ptxas(text, code, at, crashes):
    _case_agrees_with_ptxas(text, code, crashes)
    _lints_at(text, code, at)  # lint's error where ptxas's is, and what it says


def test_reference_errors_say_what_ptxas_says_and_what_to_write():
    def one(text):
        (d,) = errors(text)
        return d.message, d.notes[0]
    msg, note = one(U + ".visible .entry k()\n{\n.global .texref tex;\nret;\n}\n")
    assert "Texture/surface variable must be at module or entry parameter scope" in msg and \
        "`.global .texref tex;` at module scope" in note, (msg, note)
    msg, note = one(U + ".global .texref t = { filter_mod = nearest };\n")
    assert "Unrecognized field name 'filter_mod'" in msg and note.startswith("did you mean filter_mode?"), (msg, note)
    msg, note = one(U + ".global .texref t = { filter_mode = naerest };\n")
    assert "Unrecognized initial value symbol 'naerest'" in msg and note.startswith("did you mean nearest?"), \
        (msg, note)
    msg, note = one(U + ".func f(.param .texref t)\n{\nret;\n}\n")
    assert "cannot be allocated in .param state space" in msg and ".u64 parameter" in note, (msg, note)
    msg, note = one(U + _K.format("mov.b64 %rd, t;") + "\n")
    assert "Indirect access to texture requires .u64 type" in msg and note == "write mov.u64 %rd, t", (msg, note)
