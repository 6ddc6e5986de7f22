"""Constant expressions as ptxas 13.0 takes them, probed spelling by spelling against `lint_ptx`.

What ptxas 13.0 showed (each spelling in a module of its own):
- a 0d literal is an atom of any expression (`0d3FF8000000000000*2.0`, `-0d3FF8000000000000`,
  `(0d3FF8000000000000)<1.5`), typed as a decimal float is;
- a 0f literal is an operand by itself, or an atom of an expression in its own parentheses only:
  `-(0f3FC00000)`, `2.0*(0f3FC00000)`, `((0f3FC00000))` assemble, `-0f3FC00000`, `1.0+0f3FC00000`,
  `0f3FC00000*2.0` and `(0f3FC00000+1.0)` are syntax errors;
- `%` right before a digit or letter starts a register: `7%2` is a syntax error, `7 % 2` and `(7)%(2)` are not;
- an array dimension is an integer literal (`[8]`, `[0x8]`, `[8U]`); `[2*4]`, `[(8)]`, `[-1]` are syntax
  errors;
- a symbol's offset (`g+8`) is an integer ("Integer constant expression expected" for `g+1.5`);
- an initial value has the variable's kind ("Initial value type mismatch"): integers for .uN and .sN,
  floating-point values (a comparison is an integer) for .f32 and .f64, either for .bN; an address (`g`,
  `g+4`, `generic(g)`) for .u32 and .u64 only; none for .f16, an .extern variable or one of .reg, .local,
  .shared or .param ("No initial value is allowed ...");
- an initializer has a list in braces for each array dimension and for a vector, around its values; an
  array's list at most its dimension's count of elements ("Greater number of elements in array
  initializer"), any count where the dimension is [] or [0]; a vector's exactly its length ("Incorrect number
  of elements in vector initializer"); a list where a value belongs or a value where a list does is "Initial
  value type mismatch" (`.global .b8 g[] = 1;` crashes ptxas). ptxas reports the error at the line where the
  list too long or too deep ends, the line of a value where a list belongs.
"""
from __future__ import annotations

import os
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from ptxgen import lint as L

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "differential"))
import gen_cases  # noqa: E402

F32, F64 = "0f3FC00000", "0d3FF8000000000000"
ATOMS = ("1", "2U", "1.5", F32, F64, f"({F32})", f"({F64})")
BINARY = ("+", "*", "/", "%", "<<", "&", "&&", "<", "==")
UNARY = ("-", "+", "~", "!")
DECLS = ".reg .pred %p;\n.reg .f32 %f<4>;\n.reg .f64 %fd<4>;\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n"


def _kernel(body: str, pre: str = "") -> str:
    return (f".version 9.0\n.target sm_90a\n.address_size 64\n.global .b8 g[64];\n{pre}.visible .entry k()\n{{\n"
            f"{DECLS}{body}\nret;\n}}\n")


# where ptxas takes a constant expression: (name, module of an expression)
CONTEXTS = {
    "mov.u32": lambda e: _kernel(f"mov.u32 %r1, {e};"),
    "mov.f32": lambda e: _kernel(f"mov.f32 %f1, {e};"),
    "add.f64": lambda e: _kernel(f"add.f64 %fd1, %fd2, {e};"),
    "setp.f32": lambda e: _kernel(f"setp.lt.f32 %p, %f1, {e};"),
    "vector": lambda e: _kernel(f"mov.v2.f32 {{%f1, %f2}}, {{%f3, {e}}};"),
    "address": lambda e: _kernel(f"ld.global.u32 %r1, [%rd1+{e}];"),
    "symbol": lambda e: _kernel(f"mov.u64 %rd1, g+{e};"),
    "dimension": lambda e: _kernel("", f".global .b8 h[{e}];\n"),
    "init.u32": lambda e: _kernel("", f".global .u32 h = {e};\n"),
    "init.f32": lambda e: _kernel("", f".const .f32 h = {e};\n"),
    "init.b64": lambda e: _kernel("", f".global .b64 h = {e};\n"),
    "init.f64[]": lambda e: _kernel("", f".global .f64 h[2] = {{1.0, {e}}};\n"),
    "init.s16 in a body": lambda e: _kernel(f".global .s16 h = {e};"),
}


def expressions(binary: bool):
    out = []
    for a in ATOMS:
        out.append(a)
        for u in UNARY:
            out += [f"{u}{a}", f"{u}({a})"]
    for x in (F32, F64):
        out += [f"({x})*2.0", f"-({x})*2.0", f"--({x})", f"-(-({x}))", f"(({x}))", f"-(({x}))", f"({x}+1.0)",
                f"(-{x})", f"- ( {x} )", f"({x}) - ({x})", f"{x} + {x}", f"(1.0)+({x})"]
    out += ["7%2", "7 % 2", "(7)%(2)", "7%(2)", "1.5%1.5", "0x10", "(8)", "2*4", "-1", "~0"]
    if binary:
        out += [f"{a}{op}{b}" for a in ATOMS for b in ATOMS for op in BINARY]
    return list(dict.fromkeys(out))


def spellings():
    """(context, expression, module) of every probed spelling: every operator over every atom in the three
    instruction contexts, atoms, unary operators and nestings everywhere."""
    out = []
    for name, make in CONTEXTS.items():
        for e in expressions(name in ("mov.u32", "mov.f32", "add.f64")):
            out.append((name, e, make(e)))
    return out


def errors(text):
    return [d for d in L.lint_ptx(text, "t.ptx") if d.severity == "error"]


# (body, or a module-scope declaration when it starts with '.', that ptxas 13.0 takes)
ACCEPTED = [
    "add.f64 %fd1, %fd2, (0d3FF0000000000000);",
    "add.f64 %fd1, %fd2, 0d3FF0000000000000+1.0;",
    "add.f32 %f1, %f2, -(0f3F800000);",
    "mov.f32 %f1, 2.0*(0f3F800000);",
    "mov.f32 %f1, (0f3F800000);",
    "mov.f64 %fd1, -0d3FF0000000000000*2.0;",
    "mov.u32 %r1, (0f3F800000)<(0d3FF0000000000000);",
    "mov.u32 %r1, 7 % 2;",
    ".global .f64 h = -(0d3FF0000000000000);",
]


@pytest.mark.parametrize("line", ACCEPTED)
def test_hexadecimal_floats_in_expressions_lint_clean(line):
    text = _kernel("", line + "\n") if line.startswith(".") else _kernel(line)
    assert errors(text) == [], [str(d) for d in errors(text)]


# (body, or a declaration, that ptxas 13.0 rejects; the start of the text lint's error points at)
REJECTED = [
    ("mov.f32 %f1, -0f3F800000;", "0f3F800000;"),
    ("mov.f32 %f1, 1.0+0f3F800000;", "0f3F800000;"),
    ("mov.f32 %f1, 0f3F800000*2.0;", "*2.0"),
    ("mov.u32 %r1, 7%2;", "%2;"),
    ("mov.u64 %rd1, g+1.5;", "+1.5"),
    (".global .b8 h[2*4];", "2*4]"),
    (".global .b8 h[(8)];", "(8)]"),
]


@pytest.mark.parametrize("line, at", REJECTED)
def test_expressions_ptxas_rejects_are_errors_at_their_token(line, at):
    text = _kernel("", line + "\n") if line.startswith(".") else _kernel(line)
    (d,) = errors(text)
    assert d.code == "PTX-E-SYNTAX" and d.notes, str(d)
    assert text.split("\n")[d.loc.line - 1][d.loc.col - 1:].startswith(at), str(d)


def test_a_0f_literal_in_an_expression_gets_a_note_saying_to_parenthesise_it():
    for body in ("mov.f32 %f1, -0f3F800000;", "mov.f32 %f1, 0f3F800000 + 1.0;"):
        (d,) = errors(_kernel(body))
        assert any("(0f3F800000)" in n for n in d.notes), str(d)


@pytest.mark.ptxas
def test_every_probed_spelling_agrees_with_ptxas():
    cases = spellings()
    with ThreadPoolExecutor(max(2, os.cpu_count() or 2)) as ex:
        verdicts = list(ex.map(lambda c: gen_cases.run_ptxas(c[2]), cases))
    wrong = []
    for (name, e, text), got in zip(cases, verdicts):
        lines = {d.loc.line for d in errors(text)}
        if (got["rc"] != 0) != bool(lines) or (got["rc"] != 0 and got["error_line"] not in lines):
            wrong.append((name, e, got["first_error"]))
    assert not wrong, (len(wrong), wrong[:20])
    taken = [c[1] for c, got in zip(cases, verdicts) if got["rc"] == 0]
    assert len(cases) > 1000 and 300 < len(taken) < len(cases) - 300, (len(cases), len(taken))
    # both hexadecimal families are among what ptxas takes
    assert f"-({F32})" in taken and f"{F64}*{F64}" in taken and f"({F32})<({F64})" in taken


# (declarations ptxas 13.0 rejects, the start of the text lint's PTX-E-DECL points at, the same declared
# as ptxas takes it)
INITIALIZERS = [
    (".global .f32 h = 1;", "1;", ".global .f32 h = 1.0;"),
    (".global .f64 h[3] = {1.0, 2.0,\n 3};", "3};", ".global .f64 h[3] = {1.0, 2.0,\n 3.0};"),
    (".global .f32 h = 1.0<2.0;", "1.0<2.0", ".global .b32 h = 1.0<2.0;"),
    (".const .u8 h = -(0f3F800000);", "-(0f3F800000)", ".const .b8 h = -(0f3F800000);"),
    (".global .s32 h[2] = {1, 0d3FF0000000000000};", "0d3FF", ".global .s32 h[2] = {1, 0x3FF};"),
    (".global .b64 h = generic(g)+4;", "generic(g)+4", ".global .u64 h = generic(g)+4;"),
    (".global .f16 h = 0x3C00;", "0x3C00", ".global .b16 h = 0x3C00;"),
    (".extern .global .u32 h = 1;", "1;", ".extern .global .u32 h;"),
    (".shared .u32 h = 1;", "1;", ".global .u32 h = 1;"),
]


def _decl_module(decl: str, in_body: bool) -> str:
    return _kernel(decl) if in_body else _kernel("", decl + "\n")


def _decl_error_at(bad: str, at: str, good: str, in_body: bool):
    """Lint gives the declaration `bad` one PTX-E-DECL, with a note, at the text `at` (which may run over
    lines), and nothing for `good`; at module scope or in a kernel's body."""
    text = _decl_module(bad, in_body)
    (d,) = errors(text)
    assert d.code == "PTX-E-DECL" and d.notes, str(d)
    assert "\n".join(text.split("\n")[d.loc.line - 1:])[d.loc.col - 1:].startswith(at), str(d)
    assert errors(_decl_module(good, in_body)) == [], [str(x) for x in errors(_decl_module(good, in_body))]


@pytest.mark.parametrize("bad, at, good", INITIALIZERS, ids=[c[0] for c in INITIALIZERS])
def test_initial_values_of_the_wrong_kind_are_errors_at_the_value(bad, at, good):
    for in_body in (False, True):
        if not (in_body and bad.startswith((".extern", ".shared"))):
            _decl_error_at(bad, at, good, in_body)


def test_registers_local_and_param_variables_take_no_initial_value():
    for decl in (".reg .f32 %x = 1.0;", ".local .u32 h = 1;", ".param .u32 h = 1;", ".shared .b8 h[2] = {1, 2};"):
        (d,) = errors(_kernel(decl))
        assert d.code == "PTX-E-DECL" and "no initial value" in d.message and d.loc.line == 12, str(d)


@pytest.mark.ptxas
@pytest.mark.parametrize("bad, at, good", INITIALIZERS, ids=[c[0] for c in INITIALIZERS])
def test_initializer_cases_agree_with_ptxas(bad, at, good):
    got = gen_cases.run_ptxas(_decl_module(bad, False))
    assert got["rc"] != 0 and got["error_line"] in {d.loc.line for d in errors(_decl_module(bad, False))}, got
    assert gen_cases.run_ptxas(_decl_module(good, False))["rc"] == 0


# initializers of the wrong shape: (declaration ptxas 13.0 rejects, the start of the text lint's PTX-E-DECL
# points at, the same declared as ptxas takes it)
INIT_SHAPES = [
    (".global .b8 h[2] = {1, 2, 3};", "};", ".global .b8 h[3] = {1, 2, 3};"),
    (".global .u32 h[1] = {1,\n 2};", "};", ".global .u32 h[] = {1,\n 2};"),
    (".global .b8 h[2][2] = {{1, 2}, {3, 4}, {5}};", "};", ".global .b8 h[][2] = {{1, 2}, {3, 4}, {5}};"),
    (".global .b8 h[2][2] = {\n{1, 2, 3},\n{4}};", "},\n{4}", ".global .b8 h[2][3] = {\n{1, 2, 3},\n{4}};"),
    (".global .b8 h[2][2] = {1, 2};", "1, 2}", ".global .b8 h[2][2] = {{1, 2}};"),
    (".global .b8 h[2] = {1, {2}};", "}};", ".global .b8 h[2] = {1, 2};"),
    (".const .f32 h = {1.0};", "};", ".const .f32 h = 1.0;"),
    (".global .b8 h[4] = 7;", "7;", ".global .b8 h[4] = {7};"),
    (".global .v2 .u32 h = {1, 2, 3};", "};", ".global .v4 .u32 h = {1, 2, 3, 0};"),
    (".global .v4 .f32 h[2] = {{1.0, 2.0, 3.0, 4.0}, {5.0}};", "}};", ".global .v4 .f32 h[2] = {{1.0, 2.0, 3.0, 4.0}};"),
    (".global .v2 .b16 h = 1;", "1;", ".global .v2 .b16 h = {1, 1};"),
]


@pytest.mark.parametrize("bad, at, good", INIT_SHAPES, ids=[c[0] for c in INIT_SHAPES])
def test_initializers_of_the_wrong_shape_are_errors_where_ptxas_says(bad, at, good):
    for in_body in (False, True):
        _decl_error_at(bad, at, good, in_body)


def test_an_initializer_shape_error_says_what_shape_to_write():
    (d,) = errors(_decl_module(".global .b8 h[2][2] = {1, 2};", False))
    assert d.message == "a single value where h takes a {...} list of values (ptxas: \"Initial value type mismatch\")"
    assert d.notes == ("write it shaped `{{1, 1}, {1, 1}}`: a list in braces per array dimension",), d.notes
    (d,) = errors(_decl_module(".global .v2 .u32 h[] = {{1, 2}, {3}};", False))
    assert d.message.startswith("1 value for a .v2 vector") and d.notes == ("give 2, one per element",), str(d)


@pytest.mark.ptxas
@pytest.mark.parametrize("bad, at, good", INIT_SHAPES, ids=[c[0] for c in INIT_SHAPES])
def test_initializer_shape_cases_agree_with_ptxas(bad, at, good):
    """ptxas rejects each bad declaration at the line of lint's error, and takes each good one."""
    for in_body in (False, True):
        got = gen_cases.run_ptxas(_decl_module(bad, in_body))
        assert got["rc"] != 0 and {got["error_line"]} == {d.loc.line for d in errors(_decl_module(bad, in_body))}, got
        assert gen_cases.run_ptxas(_decl_module(good, in_body))["rc"] == 0
