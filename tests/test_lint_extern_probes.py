""".extern arrays of no size (`.extern .global .b8 x[];`, `.extern .shared .align 16 .b8 s[];`, `x[][4]`), linted as
ptxas 13.0 takes them, whole-program and with -c, probed spelling by spelling (each case below is a module of its
own; the tests marked ptxas run them through it).

What ptxas 13.0 showed:
- an .extern array of no size (`[]`, `[0]`, `[][4]`; a later dimension of 0 or `[]` is refused as for any array)
  is a declaration of .global, .const or .shared memory at module scope, with an .align or not, of any type a
  variable takes. Whole-program ptxas refuses an unsized .global or .const one that the module does not define,
  with no line ("Unresolved extern variable 'x'"; a sized one only gets a warning), and so does its use in an
  instruction or in another variable's initial value; `ptxas -c` takes all of it. That is the linker's matter,
  which lint leaves alone (tests/test_lint_vector_probes.py's array dimension cases hold the rest: no other state
  space, no initial value, no `.extern` in a function's body, where it is a syntax error). lint agreed on each of
  these before; what it did not:
- a declaration takes one linkage directive: `.visible .extern`, `.extern .weak`, `.extern .extern` are "Parsing
  error near '.weak': syntax error", of a function too.
- a module variable may be declared again: any number of .extern declarations and one definition, in any order,
  each of the first's type, vector and array dimensions (`x[]` matches any size; a size its initializer counts is
  its size), else "Inconsistent redefinition of variable 'x'". The state space and the alignment are not compared
  (`.extern .const .b8 x[];` then `.extern .global .align 8 .b8 x[4];` is taken). A second definition is
  "Duplicate definition of variable 'x'", a definition after an .extern declaration without .visible, .weak or
  .common "'.extern' variable 'x' cannot be resolved by a '.static'".
- a .common variable is "declared in .global space" (`.common .const .b8 x[4];`: ".common variables must be
  declared in .global space", after its initializer and array dimensions).
- in instructions: isspacep takes a register or `x+N`, not a variable's name ("Arguments mismatch"), cvta.to a
  register ("Argument 1 of instruction 'cvta.to': must be register"), cvta.space the address of a variable of
  that space ("State space mismatch between instruction and address"); st does not write .const memory, atom and
  red neither .const, .param nor .local ("State space incorrect for instruction 'atom'").
"""
from __future__ import annotations

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_lint_vector_probes import _PHDR, errors, gen_cases, needs_ptxas  # noqa: E402
from test_lint_init_probes import _lints_at  # noqa: E402

OK = None
REDECL, SYNTAX, OPS, MOD, DECL = "PTX-E-REDECLARED", "PTX-E-SYNTAX", "PTX-E-OPERANDS", "PTX-E-MODIFIER", "PTX-E-DECL"

# (text after the header, the code of lint's error or None, where it starts)
DECLS = [
    (".extern .global .b8 x[];\n.extern .global .b8 x[];", OK, None),
    (".extern .const .align 4 .b8 x[];\n.extern .global .align 8 .b8 x[4];", OK, None),
    (".extern .global .b8 x[];\n.visible .global .b8 x[4] = {1, 2};", OK, None),
    (".global .b8 x[4];\n.extern .global .b8 x[];", OK, None),
    (".extern .shared .align 16 .b8 s[];\n.extern .shared .align 16 .b8 s[];", OK, None),
    (".visible .global .b8 x[] = {1, 2};\n.extern .global .b8 x[];\n.extern .global .b8 x[2];", OK, None),
    (".extern .global .u32 x[][4];\n.weak .global .u32 x[2][4];", OK, None),
    (".extern .global .b8 x[];\n.global .b8 x[4];", REDECL, "x[4]"),
    (".extern .shared .b8 s[];\n.shared .b8 s[4];", REDECL, "s[4]"),
    (".extern .global .b8 x[][4];\n.extern .global .b8 x[][2];", REDECL, "x[][2]"),
    (".extern .global .b8 x[4];\n.extern .global .b8 x[8];", REDECL, "x[8]"),
    (".extern .global .u32 x[];\n.extern .global .b32 x[];", REDECL, "x[];"),
    (".extern .global .b8 x;\n.extern .global .b8 x[];", REDECL, "x[];"),
    (".global .b8 x[4];\n.extern .global .b8 x[];\n.weak .global .b8 x[4];", REDECL, "x[4]"),
    (".extern .global .b8 x[];\n.visible .global .b8 x[] = {1, 2, 3};\n.extern .global .b8 x[2];", REDECL, "x[2]"),
    (".visible .extern .global .b8 x[];", SYNTAX, ".extern .global"),
    (".extern .weak .shared .b8 s[];", SYNTAX, ".weak"),
    (".extern\n.extern .const .b8 c[];", SYNTAX, ".extern .const"),
    (".weak .visible .func f()\n{\nret;\n}", SYNTAX, ".visible"),
    (".common .const .b8 x[4];", DECL, "x[4]"),
    (".common .shared .align 16 .b8 s[4];", DECL, "s[4]"),
    (".common .const .texref t[2];", DECL, "t[2]"),
]

_K = (".extern .global .align 16 .b8 g[];\n.extern .const .align 8 .u32 c[][4];\n.extern .shared .align 16 .b8 s[];\n"
      ".visible .entry k()\n{{\n.reg .b64 %rd;\n.reg .b32 %r;\n.reg .pred %p;\n{}\nret;\n}}")
# extern arrays in instructions
USES = [
    (_K.format("isspacep.global %p, g;"), OPS, "g;"),
    (_K.format("isspacep.shared %p, s;"), OPS, "s;"),
    (_K.format("cvta.shared.u64 %rd, g;"), OPS, "g;"),
    (_K.format("cvta.global.u64 %rd, c+16;"), OPS, "c+16"),
    (_K.format("cvta.to.global.u64 %rd, g;"), OPS, "g;"),
    (_K.format("st.const.u32 [c], %r;"), MOD, "st.const"),
    (_K.format("atom.const.add.u32 %r, [c+4], 1;"), MOD, "atom.const"),
    (_K.format("red.local.add.u32 [%rd], 1;"), MOD, "red.local"),
    (_K.format("atom.param.exch.b32 %r, [%rd], 1;"), MOD, "atom.param"),
]
CASES = [(_PHDR + t + "\n", code, at) for t, code, at in DECLS + USES]


def _ids(cases):
    """A case's text, or for one of the kernel _K its instruction."""
    return [c[0].split("\n")[-4] if ".reg .pred %p;" in c[0] else c[0][len(_PHDR):].strip() for c in cases]


@pytest.mark.parametrize("text,code,at", CASES, ids=_ids(CASES))
def test_extern_arrays_lint_as_ptxas_takes_them(text, code, at):
    _lints_at(text, code, at)


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("text,code,at", CASES, ids=_ids(CASES))
def test_extern_array_cases_agree_with_ptxas(text, code, at):
    """`ptxas -c` refuses each case lint gives an error, at the line of that error, and takes the others;
    whole-program ptxas too, or refuses them only for an .extern variable the module does not define."""
    flagged = {d.loc.line for d in errors(text)}
    part = gen_cases.run_ptxas(text, flags=("-c",))
    assert (part["rc"] != 0) == (code is not None), part
    assert flagged == ({part["error_line"]} if code else set()), part
    whole = gen_cases.run_ptxas(text)
    if whole["rc"] != 0 and whole["error_line"] is None:
        assert code is None and whole["first_error"].startswith("Unresolved extern variable"), whole
    else:
        assert (whole["rc"], whole["error_line"]) == (part["rc"], part["error_line"]), (whole, part)
    _lints_at(text, code, at)


def test_redeclaration_errors_say_what_ptxas_says():
    def one(body):
        (d,) = errors(_PHDR + body + "\n")
        return d.message, d.notes
    msg, notes = one(".extern .global .b8 x[];\n.global .b8 x[4];")
    assert "cannot be resolved by a '.static'" in msg and notes[0].startswith("define it `.visible`") and \
        notes[1] == "first declared at line 4", (msg, notes)
    msg, notes = one(".extern .global .b8 x[][4];\n.extern .global .b8 x[][2];")
    assert "Inconsistent redefinition of variable 'x'" in msg and "`x[]`" in notes[0], (msg, notes)
    msg, notes = one(".global .b8 x[4];\n.visible .global .b8 x[4];")
    assert "Duplicate definition of variable 'x'" in msg, (msg, notes)
    msg, notes = one(".extern .visible .global .b8 x[];")
    assert msg.startswith("a second linkage directive '.visible'") and notes[0].startswith("keep one of"), (msg, notes)
