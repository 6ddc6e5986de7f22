"""Initial values of variables linted as ptxas 13.0 takes them, probed spelling by spelling.

What ptxas 13.0 showed (each case below is a module of its own; the tests marked ptxas run them through it):
- it checks an initializer from the outside in, in the order it is written, and stops at the first of: a
  list where a value belongs or a list of the wrong count (before the values it holds, which it does not
  check), a value where a list belongs, a value of the wrong kind. It reports a list's error at the line of
  its closing brace, a value's at the line of the value, so `.global .f32 h = {1,\\n 1};` is an error at the
  second line (a list where the value belongs), not at the integer 1 on the first.
- .f16 takes no value, also where a list stands for the value ("No initial value is allowed for .f16 type").
- an address, in a function's body as at module scope, is of a .global or .const variable or of a function that
  an earlier statement declares where the initializer stands: at module scope, or in the function's block or
  one around it (not a block that has closed, not the variable itself or another of its statement, not a
  register or a label): "Invalid initial value symbol 'x'" (with an offset "Initial value type mismatch", in
  generic() "Invalid initial value expression"). A .shared, .local or .param variable, a kernel's parameter
  among them, is "Variable used as initial value not in .global or .const state space". A function takes
  neither generic() ("Invalid initial value expression") nor an offset (`f+4`, `f+0`: "Initial value type
  mismatch"). An integer and an address may share a list (`{1, g}`). ptxas checks an address where its walk
  meets it, before the kind of the value.
- an offset is added (`g+4`, `g+-4`, `g+(-4)`); `g-4` and `generic(g)-4` are a syntax error, and so is any
  conversion but generic() in lower case (`foo(g)`, `GENERIC(g)`).
- an .f16x2 variable's value is a {...} list for each element (a value there is "Initial value type mismatch"),
  and ptxas checks nothing in that list (any count, lists in it, any value). It writes the values of the whole
  initializer one after another as 32-bit words, whatever the braces, and drops those past the variable's end:
  `{1.0, 2.0}` holds 0x3F800000, `h[2] = {{1, 2}, {3}}` the words 1 and 2; only one integer per element,
  `{0x40003C00}`, holds what it says, and lint warns of the rest (PTX-W-MISCOMPILE; the test reads the words
  from the cubin). An address there stops it with no line past the variable's last word ("Internal error:
  relocation is past end of offset", "reloc address not found"), or at module scope with an offset from a
  function ("Cannot take address of function 'f' in arithmetic expressions"); the address of a .shared
  variable or of a name no earlier statement declares crashes it (a segmentation fault).
- a .pred (or .bf16) variable is the declaration's error, with an initial value or not. For a .pred one with
  an initializer that runs over lines, ptxas reports the initializer first (at its closing brace), lint the
  declaration's type (at the type, the line before).
- whole-program ptxas refuses, with no line, the address of an .extern function that the module never
  defines in a module variable's initializer ("Cannot take address of function 'f'"); `ptxas -c` takes it,
  and so does lint (in a function's body whole-program ptxas takes it too). A texture field as the value of
  another variable (`.global .u64 p = a=b;`) is refused where the field's value is not one ptxas knows
  ("Unrecognized initial value symbol 'b'") and taken where it is (`= filter_mode=nearest`), as lint does
  (tests/test_lint_texref_probes.py).
- an empty list `{}` stands where a list of array elements of a sized array does (`v[2] = {}`,
  `v[2][2] = {{}, {1, 2}}`), and as an .f16x2 element's list; for an array whose size its initializer gives
  (`v[] = {}`, `v[0] = {}`) it is "Initial value type mismatch", and it counts as an initial value for an
  .extern, .shared or .local variable.
"""
from __future__ import annotations

import os
import struct
import subprocess
import sys

import pytest

from ptxgen import lint as L

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_lint_vector_probes import (_PHDR, _case_agrees_with_ptxas, _case_lints_as, errors, gen_cases,  # noqa: E402
                                     needs_ptxas)


def _in_kernel(decl: str) -> str:
    return f".visible .entry k()\n{{\n{decl}\nret;\n}}"


def _module_cases(cases):
    """Each (declaration, where lint's error starts or None) case as (module, code, where), the declaration at
    module scope: a PTX-E-DECL error where `where` is given, else none."""
    return [(_PHDR + d + "\n", "PTX-E-DECL" if at else None, at) for d, at in cases]


def _both_scopes(cases):
    """_module_cases, with each declaration at module scope and in a kernel's body."""
    return _module_cases([(x, at) for d, at in cases for x in (d, _in_kernel(d))])


def _lints_at(text, code, at):
    """_case_lints_as, and the error starts at the text `at` (which may run over lines)."""
    for d in _case_lints_as(text, code):
        assert "\n".join(text.split("\n")[d.loc.line - 1:])[d.loc.col - 1:].startswith(at), str(d)
        assert d.notes, str(d)


def _ids(cases):
    return [c[0][len(_PHDR):] for c in cases]


# the order of ptxas's checks, told apart by lines: (declaration, where lint's error starts, None where ptxas
# takes the declaration)
ORDER = [
    (".global .f32 h = {1,\n 1};", "};"),             # the list, at its `}`, before the integer in it
    (".global .u64 h = {1.0,\n 1};", "};"),
    (".global .f16 h = {1,\n 1};", "};"),
    (".global .u32 h[1] = {1.0,\n 2};", "};"),         # the list's count before its values
    (".global .f16 h[1] = {1,\n 2};", "};"),
    (".global .v2 .f32 h = {1,\n 2.0, 3.0};", "};"),
    (".global .f16 h[2] = {1,\n 2};", "1,"),           # the first value
    (".global .u32 h[2][1] = {{1.0},\n {2, 3}};", "1.0}"),
    (".global .f32 h[2] = {{1},\n 2.0};", "},"),
    (".global .v2 .f32 h[2] = {{1.0, 2.0},\n 3.0};", "3.0}"),
    (".global .f32 h[2] = {1.0,\n 2.0};", None),
    (".global .b32 h[2] = {1.0,\n 2};", None),
]
ORDER_CASES = _both_scopes(ORDER)


@pytest.mark.parametrize("text,code,at", ORDER_CASES, ids=_ids(ORDER_CASES))
def test_initializers_lint_in_the_order_ptxas_checks_them(text, code, at):
    _lints_at(text, code, at)


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("text,code,at", ORDER_CASES, ids=_ids(ORDER_CASES))
def test_initializer_order_cases_agree_with_ptxas(text, code, at):
    _case_agrees_with_ptxas(text, code)


def test_a_list_where_a_value_belongs_is_an_error_at_its_closing_brace():
    for decl, msg in ((".global .f32 h = {1,\n 1};", "a {...} list where h takes a single value"),
                      (".global .f16 h = {1,\n 1};", "a .f16 variable takes no initial value")):
        (d,) = errors(_PHDR + decl + "\n")
        assert (d.loc.line, d.loc.col) == (5, 3) and d.message.startswith(msg) and d.notes, str(d)


# addresses in an initializer, in a function's body as at module scope: only of a .global or .const variable or
# a function that an earlier statement declares where the initializer stands; no generic() of a function and
# no offset from one. (module after _PHDR, where lint's error starts, None where ptxas takes the module)
ADDRESSES = [
    (".visible .entry k()\n{\n.global .u64 p = later;\nret;\n}\n.global .u32 later;", "later;"),
    (".visible .entry k()\n{\n.global .u64 p = later+4;\n.global .u32 later;\nret;\n}", "later+4"),
    (".visible .entry k()\n{\n.global .u32 g;\n.global .u64 p = g;\nret;\n}", None),
    (".visible .entry k()\n{\n.const .u32 c;\n{\n.const .u64 p = generic(c)+8;\n}\nret;\n}", None),
    (".visible .entry k()\n{\n{\n.global .u32 g;\n}\n.global .u64 p = g;\nret;\n}", "g;"),
    (".visible .entry k()\n{\n.global .u64 p = p;\nret;\n}", "p;"),
    (".func f()\n{\n.global .u32 a, b = a;\nret;\n}", "a;"),
    (".func f() { ret; }\n.visible .entry k()\n{\n.global .u64 p = generic(f);\nret;\n}", "generic(f)"),
    (".visible .entry k()\n{\n.global .u64 p[2] = {k, k};\nret;\n}", None),
    (".visible .entry k()\n{\n.global .u64 p = k+4;\nret;\n}", "k+4"),
    (".visible .entry k()\n{\n.const .u64 p = f;\nret;\n}\n.func f() { ret; }", "f;"),
    (".visible .entry k()\n{\n.shared .u32 s;\n.global .u64 p = s;\nret;\n}", "s;"),
    (".visible .entry k()\n{\n.local .u32 l;\n.const .u64 p[2] = {0, generic(l)};\nret;\n}", "generic(l)"),
    (".visible .entry k(.param .u64 a)\n{\n.global .u64 p = a;\nret;\n}", "a;"),
    (".func f(.param .u64 a)\n{\n.global .u64 p = a+8;\nret;\n}", "a+8"),
    (".visible .entry k()\n{\n.reg .u64 r;\n.global .u64 p = r;\nret;\n}", "r;"),
    (".visible .entry k()\n{\nL:\n.global .u64 p = L;\nret;\n}", "L;"),
    (".extern .global .u32 e;\n.func f()\n{\n.const .u64 p = e+4;\nret;\n}", None),
    (".extern .func x();\n.visible .entry k()\n{\n.global .u64 p = x;\nret;\n}", None),
    (".shared .u32 s;\n.global .u64 p = s;", "s;"),
    (".extern .shared .u32 s[];\n.const .u64 p = generic(s)+4;", "generic(s)+4"),
    (".func f() { ret; }\n.global .u64 p = f+4;", "f+4"),
    (".func f() { ret; }\n.global .u64 p[2] = {1, f+0};", "f+0"),
    (".func f() { ret; }\n.global .u64 p = generic(f)+8;", "generic(f)+8"),
    (".global .u32 g;\n.global .u64 p[2] = {1, g};", None),           # an integer and an address in one list
    (".global .u32 g;\n.global .u32 p[3] = {g, 0, g+4};", None),
    (".func f() { ret; }\n.global .u64 p[2][2] = {{f, 1}, {0, f}};", None),
    # the order of the checks: an address where ptxas meets it, before the kind of the values after it
    (".global .u64 p[2] = {later,\n 1.0};\n.global .u32 later;", "later,"),
    (".shared .u32 s;\n.global .u64 p[2] = {s,\n 1.0};", "s,"),
    (".global .u64 p[2][1] = {{later},\n 1};", "later}"),
    (".global .u64 p[1] = {later,\n 2};", "};"),                   # a list's count before its values
    (".global .f32 p = {later,\n 1.0};", "};"),                    # a list where the value belongs
    (".func f() { ret; }\n.global .b32 p = f+4;", "f+4"),
]
ADDRESS_CASES = _module_cases(ADDRESSES)


@pytest.mark.parametrize("text,code,at", ADDRESS_CASES, ids=_ids(ADDRESS_CASES))
def test_addresses_in_initializers_lint_as_ptxas_takes_them(text, code, at):
    _lints_at(text, code, at)


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("text,code,at", ADDRESS_CASES, ids=_ids(ADDRESS_CASES))
def test_address_cases_agree_with_ptxas(text, code, at):
    _case_agrees_with_ptxas(text, code)


def test_address_errors_say_what_ptxas_says_and_what_to_write():
    def one(body):
        (d,) = errors(_PHDR + body + "\n")
        return d.message, d.notes[0]
    msg, note = one(".visible .entry k()\n{\n.global .u64 p = later+4;\nret;\n}\n.global .u32 later;")
    assert msg == "'later' is not declared before this initializer takes its address (ptxas: \"Initial value type " \
                  "mismatch\")" and "a statement above this one, in this block or one around it" in note
    msg, note = one(".visible .entry k()\n{\n.shared .u32 s;\n.global .u64 p = s;\nret;\n}")
    assert msg.startswith("'s' is a .shared variable") and "Variable used as initial value not in .global or " \
        ".const state space" in msg and note.startswith("declare s .global or .const"), (msg, note)
    msg, note = one(".func f() { ret; }\n.global .u64 p = f+4;")
    assert msg == "an offset from the function 'f' (ptxas: \"Initial value type mismatch\")" and "`f` alone" in note


# spellings of an address: ptxas 13.0 adds an offset (`g+4`, `g+-4`, `g+(-4)`) but takes no `-` after the
# symbol, and knows generic() only, in lower case (both "Parsing error near ...: syntax error")
SPELLINGS = [
    (".global .u32 g;\n.global .u64 p = g-4;", "PTX-E-SYNTAX", "-4;"),
    (".global .u32 g;\n.global .u64 p[2] = {1, generic(g) - 8};", "PTX-E-SYNTAX", "- 8}"),
    (".global .u32 g;\n.visible .entry k()\n{\n.const .u64 p = foo(g);\nret;\n}", "PTX-E-SYNTAX", "foo(g)"),
    (".global .u32 g;\n.global .u64 p = GENERIC(g)+4;", "PTX-E-SYNTAX", "GENERIC(g)"),
    (".global .u32 g;\n.global .u64 p = g+-4;", None, None),
    (".global .u32 g;\n.global .u64 p[2] = {g+(-4), generic (g)+(4-8)};", None, None),
]
SPELLING_CASES = [(_PHDR + t + "\n", code, at) for t, code, at in SPELLINGS]


@pytest.mark.parametrize("text,code,at", SPELLING_CASES, ids=_ids(SPELLING_CASES))
def test_address_spellings_lint_as_ptxas_takes_them(text, code, at):
    _lints_at(text, code, at)


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("text,code,at", SPELLING_CASES, ids=_ids(SPELLING_CASES))
def test_address_spelling_cases_agree_with_ptxas(text, code, at):
    _case_agrees_with_ptxas(text, code)


def test_a_subtracted_offset_gets_a_note_with_the_offset_added():
    (d,) = errors(_PHDR + ".global .u32 g;\n.global .u64 p = g - (2*2);\n")
    assert "Parsing error near '-'" in d.message and "`g+(-(2*2))`" in d.notes[0], str(d)


# .f16x2 variables: a {...} list for each element's value, whose contents ptxas 13.0 does not check; and a
# variable of a type no declaration takes (.pred, .bf16) is the declaration's one error, initial value or not
PACKED = [
    (".global .f16x2 h = 1.0;", "1.0;"),
    (".const .f16x2 h[2] = {1, 2};", "1,"),
    (".global .v2 .f16x2 h = {{1}, 2};", "2}"),
    (".global .f16x2 h[2] = {{1}, {2},\n {3}};", "};"),
    (".extern .global .f16x2 h = {1};", "1}"),
    (".global .f16x2 h = {0x40003C00};", None),
    (".global .f16x2 h = {{1}};", None),
    (".global .f16x2 h[] = {{1}, {2}, {0x3C00}};", None),
    (".global .f16x2 h[2] = {{1.0, 2.0, 3.0}, {7}};", None),
    (".global .u32 g;\n.global .f16x2 h[2] = {{g}, {1}};", None),
    (".func f() { ret; }\n.global .f16x2 h = {generic(f), 2};", None),
    (".func f() { ret; }\n.visible .entry k()\n{\n.global .f16x2 h = {f+4};\nret;\n}", None),
    (".global .v2 .f16x2 h = {{1, 2}, {3.0}};", None),
    (".visible .entry k()\n{\n.global .f16x2 h[2] = {{1}, {2}};\nret;\n}", None),
    (".global .pred p = 1;", ".pred p"),
    (".global .pred p = {1};", ".pred p"),
    (".const .pred p[2] = {1, 0};", ".pred p"),
    (".visible .entry k()\n{\n.global .pred p = {1, 0};\nret;\n}", ".pred p"),
    (".global .bf16 b = {1};", ".bf16 b"),
]
PACKED_CASES = _module_cases(PACKED)


@pytest.mark.parametrize("text,code,at", PACKED_CASES, ids=_ids(PACKED_CASES))
def test_f16x2_and_pred_initial_values_lint_as_ptxas_takes_them(text, code, at):
    _lints_at(text, code, at)


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("text,code,at", PACKED_CASES, ids=_ids(PACKED_CASES))
def test_f16x2_and_pred_cases_agree_with_ptxas(text, code, at):
    _case_agrees_with_ptxas(text, code)


# addresses that stop ptxas 13.0 with no line where it lays an .f16x2 initializer out: past the variable's last
# 32-bit word, or a function's with an offset; and addresses that crash it (a segmentation fault, no message):
# of a .shared variable, of a name no earlier statement declares
PACKED_FAILS = [
    (".shared .u32 s;\n.global .f16x2 h = {1, s, 2};", "s,", None),
    (".global .f16x2 h[2] = {{1.0, 2.0, 3.0}, {nosuch}};", "nosuch}", None),
    (".global .f16x2 h = {generic(h)};", "generic(h)", None),
    (".global .u32 g;\n.global .f16x2 h = {1, g};", "g}", "relocation is past end of offset"),
    (".global .u32 g;\n.global .f16x2 h[2] = {{1}, {2, g}};", "g}}", "relocation is past end of offset"),
    (".const .u32 c;\n.global .v2 .f16x2 h = {{1.0, 2.0}, {c}};", "c}}", "reloc address not found"),
    (".func f() { ret; }\n.global .f16x2 h = {1, f};", "f}", "reloc address not found"),
    (".func f() { ret; }\n.global .f16x2 h = {f+4};", "f+4", "Cannot take address of function 'f' in arithmetic"),
]
PACKED_FAIL_CASES = [(_PHDR + t + "\n", at, said) for t, at, said in PACKED_FAILS]


@pytest.mark.parametrize("text,at,said", PACKED_FAIL_CASES, ids=_ids(PACKED_FAIL_CASES))
def test_f16x2_addresses_that_stop_ptxas_are_errors(text, at, said):
    _lints_at(text, "PTX-E-DECL", at)
    (d,) = errors(text)
    assert (said or "a segmentation fault").split(" in ")[0] in d.message, str(d)


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("text,at,said", PACKED_FAIL_CASES, ids=_ids(PACKED_FAIL_CASES))
def test_f16x2_addresses_that_stop_ptxas_do(text, at, said):
    got = gen_cases.run_ptxas(text)
    assert (said in got["first_error"]) if said else got["rc"] == -11, got
    _lints_at(text, "PTX-E-DECL", at)


# empty lists `{}`: ptxas 13.0 takes one wherever a list for array elements may stand and the array has its size
# (`v[2] = {}`, `v[2][2] = {{}, {1, 2}}`, `.v2 .u32 v[2] = {}`), and an .f16x2 element's; it refuses one for an
# array whose size the initializer gives (`v[] = {}`, `v[0] = {}`: "Initial value type mismatch"), where a value
# belongs, as a vector's list, and as the initial value of an .extern, .shared or .local variable.
# (declaration, where lint's error starts or None)
EMPTY = [
    (".global .u32 v[2] = {};", None),
    (".const .f32 v[2][2] = {};", None),
    (".global .b8 v[2][2] = {{},\n {1, 2}};", None),
    (".global .u64 v[][2] = {{}, {1}};", None),
    (".global .u32 v[2][2][2] = {{}, {{}, {1}}};", None),
    (".global .v2 .u32 v[2] = {};", None),
    (".global .f16 v[2] = {};", None),
    (".global .f16x2 v = {};", None),
    (".const .f16x2 v[2] = {{}, {}};", None),
    (".global .f16x2 v = {1, {}};", None),
    (".global .u32 v[2] = { };", None),
    (".global .u32 a, v[2] = {};", None),
    (".global .u32 v[] = {\n};", "}"),
    (".const .b8 v[0] = {};", "};"),
    (".global .u32 v[][2] = {};", "};"),
    (".global .u32 v = {};", "};"),
    (".global .u32 v[2] = {1, {}};", "}}"),
    (".global .u32 v[2][2] = {{}, 1};", "1}"),
    (".global .v2 .f32 v = {};", "};"),
    (".global .v2 .u32 v[2] = {{}, {}};", "}, {}"),
    (".global .f16 v[2][2] = {{}, {1, 2}};", "1,"),
    (".global .pred v[2] = {};", ".pred v"),
]
EMPTY_CASES = _both_scopes(EMPTY) + _module_cases((
    (".extern .global .u32 v[2] = {};", "};"),       # a syntax error in a function's body, as without `= {}`
    (".extern .const .f16x2 v = {};", "};"),
    (".extern .global .u32 v[] = {};", "};"))) + [
    (_PHDR + ".shared .u32 v[2] = {};\n", "PTX-E-DECL", "};"),
    (_PHDR + _in_kernel(".local .u32 v[2] = {};") + "\n", "PTX-E-DECL", "};"),
]


@pytest.mark.parametrize("text,code,at", EMPTY_CASES, ids=_ids(EMPTY_CASES))
def test_empty_initializer_lists_lint_as_ptxas_takes_them(text, code, at):
    _lints_at(text, code, at)


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("text,code,at", EMPTY_CASES, ids=_ids(EMPTY_CASES))
def test_empty_initializer_list_cases_agree_with_ptxas(text, code, at):
    _case_agrees_with_ptxas(text, code)
    _lints_at(text, code, at)  # as the declaration's error, not a syntax error: ptxas's line is the same


def test_an_empty_list_for_an_array_of_no_size_says_to_give_the_size():
    (d,) = errors(_PHDR + ".global .u32 v[] = {};\n")
    assert "Initial value type mismatch" in d.message and d.notes[0].startswith("give its size (`v[N] = {}`"), str(d)


# .f16x2 initial values ptxas 13.0 takes but writes otherwise than they say (PTX-W-MISCOMPILE): the values of
# the whole initializer one after another as 32-bit words. (declaration, where the warning starts or None,
# the 32-bit words ptxas writes)
PACKED_WORDS = [
    (".f16x2 v = {1.0, 2.0};", "1.0,", (0x3F800000,)),
    (".f16x2 v = {0x3C00, 0x4000};", "0x4000", (0x3C00,)),
    (".f16x2 v[2] = {{1, 2}, {3}};", "2}", (1, 2)),
    (".f16x2 v[3] = {{1}, {2, 3}, {4}};", "3}", (1, 2, 3)),
    (".v2 .f16x2 v = {{1, 5}, {2}};", "5}", (1, 5)),
    (".f16x2 v = {1.5};", "1.5", (0x3FC00000,)),
    (".f16x2 v = {0x40003C00};", None, (0x40003C00,)),
    (".f16x2 v[2] = {{0x40003C00}, {-1}};", None, (0x40003C00, 0xFFFFFFFF)),
    (".f16x2 v[3] = {{1}};", None, (1, 0, 0)),
    (".f16x2 v[2] = {{{1}}, {2}};", None, (1, 2)),
]


def _miscompile_warned_at(decl, at):
    """Lint's diagnostics of a module variable `decl`: one PTX-W-MISCOMPILE warning starting at the text `at`, or
    none where `at` is None."""
    text = f"{_PHDR}.visible .global .align 8 {decl}\n"
    ds = L.lint_ptx(text, "t.ptx")
    assert [(d.code, d.severity) for d in ds] == ([("PTX-W-MISCOMPILE", "warning")] if at else []), [str(d) for d in ds]
    if at:
        assert text.split("\n")[ds[0].loc.line - 1][ds[0].loc.col - 1:].startswith(at), str(ds[0])
    return ds


def _ptxas_writes(decl, at, words, tmp_path):
    """ptxas takes the module variable `decl` (which lint warns of where `at` is given) and writes the 32-bit
    words `words` for it, read from the cubin."""
    src = tmp_path / "v.ptx"
    src.write_text(f"{_PHDR}.visible .global .align 8 {decl}\n")
    warned = [d.code for d in L.lint_ptx(src.read_text(), "v.ptx")]
    assert warned == (["PTX-W-MISCOMPILE"] if at else []), warned
    r = subprocess.run(["ptxas", "-arch=sm_90a", str(src), "-o", str(tmp_path / "v.cubin")], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    data = _symbol_bytes((tmp_path / "v.cubin").read_bytes(), "v")
    assert struct.unpack(f"<{len(words)}I", data) == words, data.hex()


@pytest.mark.parametrize("decl,at,words", PACKED_WORDS, ids=[c[0] for c in PACKED_WORDS])
def test_f16x2_initial_values_ptxas_writes_otherwise_are_miscompile_warnings(decl, at, words):
    ds = _miscompile_warned_at(decl, at)
    if at:
        assert "32-bit words" in ds[0].message and "`{0x40003C00}` is (1.0, 2.0)" in ds[0].notes[0], str(ds[0])


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("decl,at,words", PACKED_WORDS, ids=[c[0] for c in PACKED_WORDS])
def test_ptxas_writes_f16x2_initial_values_as_32_bit_words(decl, at, words, tmp_path):
    """ptxas takes each, and writes `words`: what lint warns of where they are not one integer per element."""
    _ptxas_writes(decl, at, words, tmp_path)


def _symbol_bytes(elf: bytes, name: str) -> bytes:
    """The initial bytes of the variable `name` in a cubin (a 64-bit little-endian ELF file)."""
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", elf, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    for sh in sections:
        if sh[1] != 2:  # SHT_SYMTAB
            continue
        names = sections[sh[6]][4]
        for i in range(sh[5] // 24):
            st_name, _info, _other, shndx, value, size = struct.unpack_from("<IBBHQQ", elf, sh[4] + i * 24)
            if elf[names + st_name:elf.index(b"\0", names + st_name)].decode() == name:
                return elf[sections[shndx][4] + value:sections[shndx][4] + value + size]
    raise KeyError(name)


@pytest.mark.ptxas
@needs_ptxas
def test_the_builders_f16x2_initial_values_are_the_words_ptxas_writes(tmp_path):
    import ptxgen as pg
    m = pg.Module("sm_90a")
    m.global_var("v", "f16x2", 3, init=[0x40003C00, 0xFFFF0000], align=8)
    text = m.emit().text
    assert L.lint_ptx(text, "v.ptx") == []
    (tmp_path / "v.ptx").write_text(text)
    r = subprocess.run(["ptxas", "-arch=sm_90a", str(tmp_path / "v.ptx"), "-o", str(tmp_path / "v.cubin")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert struct.unpack("<3I", _symbol_bytes((tmp_path / "v.cubin").read_bytes(), "v")) == (0x40003C00, 0xFFFF0000, 0)


def test_the_builder_refuses_the_initial_values_lint_refuses_or_warns_of():
    """global_var() and lint share legality's rules: the builder raises exactly where lint reports an error or a
    miscompile in the declaration it would write; and for a Python float as an .f16x2 element's value, which
    the declaration would write as an integer where it is one (2.0 as 2) but ptxas writes as .f32 bits."""
    import itertools

    import ptxgen as pg
    from ptxgen.errors import BuildError
    from ptxgen.ir import Var
    from ptxgen.types import get_type
    wrong = []
    for t, init, count in itertools.product(("u32", "s64", "f32", "f64", "b16", "f16", "f16x2"),
                                            ([1], [1.5], [2.0], [1, 2], [0x40003C00, -1], [1, 2, 3]), (None, 2)):
        try:
            pg.Module("sm_90a").global_var("v", t, count, init=init)
            built = True
        except BuildError:
            built = False
        try:
            decl = Var("v", "global", get_type(t), count, None, init=init).decl()
        except ValueError:  # the value cannot be written for the type
            flagged = True
        else:
            ds = L.lint_ptx(f"{_PHDR}{decl}\n", "v.ptx")
            flagged = any(d.severity == "error" or d.code == "PTX-W-MISCOMPILE" for d in ds)
        flagged = flagged or (t == "f16x2" and any(isinstance(x, float) for x in init))
        if built == flagged:
            wrong.append((t, init, count, built))
    assert not wrong, wrong


def test_the_builder_takes_an_empty_initial_value_where_ptxas_does():
    """global_var(..., init=[]) writes `= {}`: lint passes it for an array of a size and an .f16x2 scalar, and
    the builder refuses it where ptxas does (an array of size 0, a scalar)."""
    import ptxgen as pg
    from ptxgen.errors import BuildError
    for t, count in (("u32", 2), ("f32", 4), ("f16x2", None), ("f16x2", 2)):
        m = pg.Module("sm_90a")
        m.global_var("v", t, count, init=[])
        text = m.emit().text
        assert " = {};" in text and L.lint_ptx(text, "v.ptx") == [], text
    for t, count in (("u32", 0), ("u32", None), ("b8", 0)):
        with pytest.raises(BuildError, match="Initial value type mismatch"):
            pg.Module("sm_90a").global_var("v", t, count, init=[])


# lists ptxas 13.0 takes but does not pad with zeros (PTX-W-MISCOMPILE): an inner array dimension's list that
# is short, `{}` among them, or an empty .f16x2 element's list, with a value after it; the values after it are
# written right after its last. (declaration, where the warning starts or None, the 32-bit words ptxas writes)
SHORT_WORDS = [
    (".u32 v[2][2] = {{}, {1, 2}};", "}, {1", (1, 2, 0, 0)),
    (".u32 v[2][2] = {{1}, {2, 3}};", "}, {2", (1, 2, 3, 0)),
    (".u32 v[2][2][2] = {{}, {{}, {1}}};", "}, {{", (1, 0, 0, 0, 0, 0, 0, 0)),
    (".f16x2 v[2] = {{}, {1}};", "1}", (1, 0)),
    (".u32 v[2][2] = {{1, 2}, {}};", None, (1, 2, 0, 0)),
    (".u32 v[2] = {};", None, (0, 0)),
    (".f16x2 v[2] = {{1}, {}};", None, (1, 0)),
]


@pytest.mark.parametrize("decl,at,words", SHORT_WORDS, ids=[c[0] for c in SHORT_WORDS])
def test_short_lists_ptxas_does_not_pad_are_miscompile_warnings(decl, at, words):
    _miscompile_warned_at(decl, at)


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("decl,at,words", SHORT_WORDS, ids=[c[0] for c in SHORT_WORDS])
def test_ptxas_writes_short_lists_unpadded(decl, at, words, tmp_path):
    _ptxas_writes(decl, at, words, tmp_path)
