"""Function declarations and definitions as ptxas 13.0 takes them (the tests marked ptxas run every case through it,
whole-program and with -c).

What ptxas 13.0 showed, and lint said nothing of:
- a declaration after the function's definition: "Duplicate definition of function";
- declarations and the definition that differ in the number of parameters or return parameters, a parameter's type
  (.b32 and .u32 differ, so do a vector, an array and its length), state space (.reg/.param) or alignment (where none
  is written, its element's size): "Inconsistent prototypes of 'g', ... differ"; the names may differ;
- a later declaration with another linkage than the first (one without a linkage directive is fine, but after an
  .extern one nothing but more .extern declarations): "Inconsistent redefinition of variable"; a .func declared
  as an .entry or the other way: "Inconsistent redefinition of 'g' as entry and function"; .noreturn on some and not
  others: "Inconsistent redefinition of variable";
- a function (or kernel) declared without .extern and not defined: "Unresolved extern function", with -c too;
  an .extern one only once it is called or its address taken (not through a .calltargets list), and only in
  whole-program compilation (warning PTX-W-EXTERN); vprintf, malloc, free, __assertfail and __cuda_syscall*
  ptxas provides itself; an .extern .global or .const variable not defined in the module: whole-program
  compilation defines a sized one here ("ignoring extern qualifier", a warning) and stops at an unsized one
  (PTX-W-EXTERN both; -c takes them), and it warns the same of one whose definition follows its first .extern
  declaration;
- `.alias a, b;` (PTX ISA 6.3): "Unknown symbol" for a or b not declared before it, "Cannot define alias to
  variable object", "Cannot define alias to entry function", "Cannot alias a function to itself", "Illegal
  redefinition of function 'a' as alias" when a is defined above it, "'a' is already aliased to 'b' and cannot be
  redefined", "Function 'b' with .weak (.extern) scope cannot be aliased", and "Mismatch in prototype of alias 'a'
  and aliasee 'b'. ... differ(s)" as for declarations, .noreturn included; a's linkage does not matter, a definition
  of a after the .alias is taken, and an alias of an alias too.
"""
from __future__ import annotations

import pytest

from ptxgen import lint as L
from _ptxas_lines import ptxas_verdict
from test_lint_vector_probes import needs_ptxas

_LINKS = ["", ".visible ", ".weak ", ".extern "]
_SIGS = ["()", "(.param .b32 a)", "(.param .u32 a)", "(.param .f32 a)", "(.param .b64 a)", "(.param .b32 b)",
         "(.param .align 4 .b8 a[4])", "(.param .align 8 .b8 a[4])", "(.param .align 4 .b8 a[8])",
         "(.param .b32 a, .param .b32 b)", "(.reg .b32 a)", "(.param .align 4 .b32 a)", "(.param .align 8 .b32 a)",
         "(.param .b32 a[1])", "(.param .b8 a[4])", "(.param .align 1 .b8 a[4])", "(.param .f16 a)",
         "(.param .b16 a)"]
_RETS = ["", "(.param .b32 r) ", "(.param .b64 r) ", "(.reg .b32 r) "]
_DEF = "{ ret; }"


def _same_sig(a, b):
    """The parameter lists ptxas takes as one (each kept as written: a name, or a written default alignment)."""
    norm = {"(.param .b32 b)": "(.param .b32 a)", "(.param .align 4 .b32 a)": "(.param .b32 a)",
            "(.param .align 1 .b8 a[4])": "(.param .b8 a[4])"}
    return norm.get(a, a) == norm.get(b, b)


def _cases():
    out = []        # (top-level text, kernel body, whole-program verdict, -c verdict, lint code or None)
    for a in _LINKS:
        for b in _LINKS[:3]:
            ok = a != ".extern " and (not b or a == b)
            out.append((f"{a}.func g();\n{b}.func g()\n{_DEF}", "call g;", ok, ok, None if ok else "PTX-E-REDECLARED"))
        for b in _LINKS:
            ok = a != ".extern " and (not b or a == b)
            out.append((f"{a}.func g();\n{b}.func g();\n.func g()\n{_DEF}", "call g;", ok, ok,
                        None if ok else "PTX-E-REDECLARED"))
    for s1 in _SIGS:
        for s2 in _SIGS:
            ok = _same_sig(s1, s2)
            out.append((f".func g{s1};\n.func g{s2}\n{_DEF}", "", ok, ok, None if ok else "PTX-E-REDECLARED"))
    for r1 in _RETS:
        for r2 in _RETS:
            ok = r1 == r2
            out.append((f".func {r1}g();\n.func {r2}g()\n{_DEF}", "", ok, ok, None if ok else "PTX-E-REDECLARED"))
    bad = "PTX-E-REDECLARED"
    out += [
        (f".func g()\n{_DEF}\n.func g();", "", False, False, bad),
        (f".func g(.param .b32 a)\n{_DEF}\n.extern .func g();", "", False, False, bad),
        (f".func g();\n.entry g()\n{_DEF}", "", False, False, bad),
        (f".entry e();\n.entry e()\n{_DEF}", "", True, True, None),
        (f".func g() .noreturn;\n.func g()\n{_DEF}", "", False, False, bad),
        (f".func g();\n.func g() .noreturn\n{_DEF}", "", False, False, bad),
        (f".func g() .noreturn;\n.func g() .noreturn\n{_DEF}", "", True, True, None),
        (f".func g(.param .b32 a);\n.func g(.param .b64 a);\n.func g(.param .b32 a)\n{_DEF}", "", False, False, bad),
        (".func g();", "", False, False, "PTX-E-DECL"),
        (".func g();\n.func g();", "", False, False, "PTX-E-DECL"),
        (".weak .func g();", "call g;", False, False, "PTX-E-DECL"),
        (".entry e();", "", False, False, "PTX-E-DECL"),
        (".visible .entry e();", "", False, False, "PTX-E-DECL"),
        (".extern .entry e();", "", True, True, None),
        (".extern .func g();", "", True, True, None),
        (".extern .func g();\n.extern .func g();", "", True, True, None),
        (".extern .func g();\n.func g();", "", False, False, bad),
        (".extern .func g();", "call g;", False, True, "PTX-W-EXTERN"),
        (".extern .func g();\n.extern .func g();", "call g;", False, True, "PTX-W-EXTERN"),
        (".extern .func g();", "mov.u64 %rd1, g;", False, True, "PTX-W-EXTERN"),
        (".extern .func g();\n.global .u64 tbl[1] = {g};", "", False, True, "PTX-W-EXTERN"),
        (".extern .func g();\n.func h()\n{ call g; ret; }", "", False, True, "PTX-W-EXTERN"),
        (".extern .func g();", "ld.param.u64 %rd1, [p];\n\tt: .calltargets g;\n\tcall %rd1, (), t;", True, True,
         None),
        (".extern .func (.param .b32 r) vprintf(.param .b64 f, .param .b64 a);",
         ".param .b64 pf; .param .b64 pa; .param .b32 pr;\n\tcall.uni (pr), vprintf, (pf, pa);", True, True, None),
        *[(f"{link}.func {n}();", "call " + n + ";", True, True, None)
          for n in ("malloc", "free", "__assertfail", "__cuda_syscall", "__cuda_syscall_0a") for link in ("", ".extern ")],
        (".extern .func memcpy();", "call memcpy;", False, True, "PTX-W-EXTERN"),
    ]
    return out


CASES = _cases()

# `.alias a, b;` (whole-program verdict, lint code or None); ptxas 13.0's messages in the module docstring
_G = ".func g(.param .b32 a)\n{ ret; }\n"
_H = ".func h(.param .b32 a);\n"
ALIAS_CASES = [
    (_G + _H + ".alias h, g;", True, None),
    (_G + ".func h(.param .b32 b);\n.alias h, g;", True, None),
    (_G + ".func h(.param .u32 a);\n.alias h, g;", False, "PTX-E-DECL"),
    (_G + ".func h(.param .b64 a);\n.alias h, g;", False, "PTX-E-DECL"),
    (_G + ".func h(.param .align 8 .b32 a);\n.alias h, g;", False, "PTX-E-DECL"),
    (_G + ".func h(.param .align 4 .b32 a);\n.alias h, g;", True, None),
    (_G + ".func (.param .b32 r) h(.param .b32 a);\n.alias h, g;", False, "PTX-E-DECL"),
    (_G + ".func h(.param .b32 a) .noreturn;\n.alias h, g;", False, "PTX-E-DECL"),
    (".func g(.param .b32 a) .noreturn\n{ ret; }\n" + _H + ".alias h, g;", False, "PTX-E-DECL"),
    *[(_G + link + _H + ".alias h, g;", True, None) for link in (".visible ", ".weak ", ".extern ")],
    (_G + ".alias h, g;", False, "PTX-E-UNDEFINED"),
    (_G + ".alias h, g;\n" + _H, False, "PTX-E-UNDEFINED"),
    (_H + ".alias h, g;\n" + _G, False, "PTX-E-UNDEFINED"),
    (_H + ".alias h, nosuch;", False, "PTX-E-UNDEFINED"),
    (".func g(.param .b32 a);\n" + _H + ".alias h, g;\n" + _G, True, None),
    (_G + _H + ".alias h, g;\n" + _H, True, None),
    (_G + _H + ".alias h, g;\n.func h(.param .b32 a)\n{ ret; }", True, None),
    (_G + ".func h(.param .b32 a)\n{ ret; }\n.alias h, g;", False, "PTX-E-REDECLARED"),
    (_G + _H + ".alias g, h;", False, ("PTX-E-REDECLARED", "PTX-E-DECL")),   # (and h is never defined)
    (_G + _H + ".alias h, g;\n.alias h, g;", False, "PTX-E-REDECLARED"),
    (_G + _H + ".func i(.param .b32 a);\n.alias h, g;\n.alias i, h;", True, None),
    (_G + _H + ".func i(.param .b32 a);\n.alias i, h;\n.alias h, g;", True, None),
    (_G + _H + ".alias h, h;", False, "PTX-E-DECL"),
    (_G + ".global .b32 v;\n.alias v, g;", False, "PTX-E-DECL"),
    (_G + ".global .b32 v;\n" + _H + ".alias h, v;", False, "PTX-E-DECL"),
    (".visible .func g(.param .b32 a)\n{ ret; }\n" + _H + ".alias h, g;", True, None),
    (".weak .func g(.param .b32 a)\n{ ret; }\n" + _H + ".alias h, g;", False, "PTX-E-DECL"),
    (".extern .func g(.param .b32 a);\n" + _H + ".alias h, g;", False, "PTX-E-DECL"),
    (".func g(.param .b32 a);\n" + _H + ".alias h, g;", False, "PTX-E-DECL"),
    (".entry g(.param .b32 a)\n{ ret; }\n" + _H + ".alias h, g;", False, "PTX-E-DECL"),
    (_G + ".entry h(.param .b32 a);\n.alias h, g;", False, "PTX-E-DECL"),
]


def module(top, body):
    return (f".version 8.6\n.target sm_90a\n.address_size 64\n{top}\n.visible .entry k(.param .u64 p)\n{{\n"
            f"\t.reg .b64 %rd<3>;\n\t{body}\n\tret;\n}}\n")


def test_lint_verdicts():
    wrong = []
    for top, body, _, _, code in CASES:
        got = [d.code for d in L.lint_ptx(module(top, body), "t.ptx") if d.severity != "note"]
        if set(got) != ({code} if code else set()):
            wrong.append((top, body, got, code))
    assert not wrong, (len(wrong), wrong[:5])


def test_alias_verdicts():
    wrong = []
    for top, _, code in ALIAS_CASES:
        got = {d.code for d in L.lint_ptx(module(top, ""), "t.ptx") if d.severity != "note"}
        if got != (set(code) if isinstance(code, tuple) else {code} if code else set()):
            wrong.append((top, got, code))
    assert not wrong, (len(wrong), wrong[:5])
    (d,) = L.lint_ptx(module(_G + ".func h(.param .u32 a);\n.alias h, g;", ""), "t.ptx")
    assert (d.loc.line, d.loc.col) == (7, 8) and "differ in parameter types" in d.message
    (d,) = L.lint_ptx(module(_G + ".extern .func x(.param .b32 a);\n" + _H + ".alias h, x;", ""), "t.ptx")
    assert (d.loc.line, d.loc.col) == (8, 11) and "x is .extern" in d.message
    old = module(_G + _H + ".alias h, g;", "").replace(".version 8.6", ".version 6.2").replace("sm_90a", "sm_50")
    assert "PTX-E-VERSION" in {d.code for d in L.lint_ptx(old, "t.ptx")}


# .extern variables without a definition in the module (whole-program verdict: "ok", "warning" or "error"; -c
# takes them all): ptxas defines a sized one here, ignoring .extern, with a warning, and stops at an unsized one
EXTERN_VARS = [
    (".extern .global .b32 x;", "warning"), (".extern .const .b8 x[4];", "warning"),
    (".extern .global .b32 x[2][3];", "warning"), (".extern .global .b32 x[];", "error"),
    (".extern .const .b32 x[];", "error"), (".extern .global .b32 x[][3];", "error"),
    (".extern .global .b32 x[];\n.extern .global .b32 x[];", "error"),
    (".extern .shared .align 16 .b8 x[];", "ok"), (".visible .global .b32 x;\n.extern .global .b32 x;", "ok"),
    # a definition after the .extern declaration: ptxas warns all the same
    (".extern .global .b32 x;\n.visible .global .b32 x;", "warning"),
    (".extern .global .b32 x;\n.weak .global .b32 x;", "warning"),
    (".extern .global .b32 x;\n.visible .global .b32 x = 5;", "warning"),
]


def test_extern_variables_without_a_definition_warn():
    for top, want in EXTERN_VARS:
        got = [(d.code, d.severity) for d in L.lint_ptx(module(top, ""), "t.ptx")]
        assert got == ([] if want == "ok" else [("PTX-W-EXTERN", "warning")]), (top, got)
    (d,) = L.lint_ptx(module(".extern .global .b32 x[];", ""), "t.ptx")
    assert (d.loc.line, d.loc.col) == (4, 22) and "no size" in d.message


def test_messages_and_places():
    (d,) = L.lint_ptx(module(".func g(.param .b32 a);\n.func g(.param .u32 b)\n{ ret; }", ""), "t.ptx")
    assert (d.loc.line, d.loc.col) == (5, 7) and "differ in parameter types" in d.message
    assert d.notes[-1] == "first declared at line 4"
    (d,) = L.lint_ptx(module(".func g()\n{ ret; }\n.func g();", ""), "t.ptx")
    assert (d.loc.line, d.loc.col) == (6, 7) and "declared after its definition" in d.message
    (d,) = L.lint_ptx(module(".func g();", ""), "t.ptx")
    assert (d.loc.line, d.code) == (4, "PTX-E-DECL") and "Unresolved extern function 'g'" in d.message
    (d,) = L.lint_ptx(module(".extern .func g();", "mov.u64 %rd1, g;"), "t.ptx")
    assert d.severity == "warning" and "taken by address" in d.message and "ptxas -c" in d.notes[0]


def _ptxas_ok(text, compile_only):
    return ptxas_verdict(text, compile_only=compile_only) != "error"


@pytest.mark.ptxas
@needs_ptxas
def test_extern_variables_agree_with_ptxas():
    wrong = [(top, want) for top, want in EXTERN_VARS
             if ptxas_verdict(module(top, "")) != want or not _ptxas_ok(module(top, ""), True)]
    assert not wrong, wrong


@pytest.mark.ptxas
@needs_ptxas
def test_every_alias_case_agrees_with_ptxas():
    wrong = [(top, ok) for top, ok, _ in ALIAS_CASES if _ptxas_ok(module(top, ""), False) != ok]
    assert not wrong, (len(wrong), wrong[:5])


@pytest.mark.ptxas
@needs_ptxas
def test_every_case_agrees_with_ptxas():
    wrong = [(top, body, whole, sep) for top, body, whole, sep, _ in CASES
             if (_ptxas_ok(module(top, body), False), _ptxas_ok(module(top, body), True)) != (whole, sep)]
    assert not wrong, (len(wrong), wrong[:5])
