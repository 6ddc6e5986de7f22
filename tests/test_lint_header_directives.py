"""A function header's directives as ptxas 13.0 takes them (the test marked ptxas runs every case through it).

What ptxas 13.0 showed, and lint did not know: a kernel definition's header takes `.pragma "...";` (any number,
before or after the other directives; lint gave a syntax error), a .func's header and a declaration's do not;
.noreturn, .abi_preserve and .abi_preserve_control are a .func's only (a syntax error on a kernel); .maxnctapersm is
an error at every .version ("Deprecated feature ... as of PTX version 2.1"); .minnctapersm without .maxntid or
.reqntid is ignored, with a warning; .blocksareclusters needs both .reqntid and .reqnctapercluster. And a .pragma's
string: "nounroll" anywhere; "enable_smem_spilling", "used_bytes_mask N" and "frequency N" only in a body ("is
allowed only within function scope"), N given ("cannot be empty") and valid ("Invalid value"); "coroutine" ignored
with a warning; any other string "not supported" (an error) at module scope and "unsupported" (a warning) in a
function. lint checked none of these strings. Nor these of .file and .loc: a .file index given twice ("Duplicate
file index"), .loc in a module without .file (a warning), and an inlined_at location that no earlier .loc gave.
"""
from __future__ import annotations

import pytest

from ptxgen import lint as L
from ptxgen.parse import parse
from _ptxas_lines import ptxas_verdict
from test_lint_vector_probes import needs_ptxas

P = '.pragma "nounroll";'
# (kind, directives, ptxas verdict, lint code or None)
CASES = [
    ("entry", P, True, None), ("entry", f"{P} .maxntid 128", True, None), ("entry", f".maxntid 128 {P}", True, None),
    ("entry", f"{P} {P}", True, None), ("func", P, False, "PTX-E-DIRECTIVE"),
    ("entry", ".noreturn", False, "PTX-E-DIRECTIVE"), ("func", ".noreturn", True, None),
    ("entry", ".abi_preserve 8", False, "PTX-E-DIRECTIVE"), ("func", ".abi_preserve 8", True, None),
    ("entry", ".abi_preserve_control 8", False, "PTX-E-DIRECTIVE"), ("func", ".abi_preserve_control 8", True, None),
    ("entry", ".maxnctapersm 1", False, "PTX-E-DIRECTIVE"), ("entry", ".maxnctapersm 1 .maxntid 128", False,
                                                             "PTX-E-DIRECTIVE"),
    ("func", ".maxnctapersm 1", False, "PTX-E-DIRECTIVE"),
    ("entry", ".minnctapersm 1", True, "PTX-W-DIRECTIVE"), ("entry", ".minnctapersm 1 .maxntid 128", True, None),
    ("entry", ".minnctapersm 1 .reqntid 128", True, None), ("entry", ".minnctapersm 1 .maxnreg 32", True,
                                                            "PTX-W-DIRECTIVE"),
    ("entry", ".blocksareclusters", False, "PTX-E-DIRECTIVE"),
    ("entry", ".blocksareclusters .reqntid 128", False, "PTX-E-DIRECTIVE"),
    ("entry", ".blocksareclusters .reqnctapercluster 2", False, "PTX-E-DIRECTIVE"),
    ("entry", ".blocksareclusters .maxntid 128 .reqnctapercluster 2", False, "PTX-E-DIRECTIVE"),
    ("entry", ".reqntid 128 .reqnctapercluster 2 .blocksareclusters", True, None),
    ("entry", ".maxntid 128", True, None), ("func", ".maxntid 128", False, "PTX-E-DIRECTIVE"),
]


def module(kind, dirs, body="\n{\n\tret;\n}"):
    return (f".version 9.0\n.target sm_90a\n.address_size 64\n.visible .{kind} g() {dirs}{body}\n"
            ".visible .entry k()\n{\n\tret;\n}\n")


@pytest.mark.parametrize("kind,dirs,ok,code", CASES, ids=[f"{k} {d}" for k, d, _, _ in CASES])
def test_lint_verdict(kind, dirs, ok, code):
    got = {d.code for d in L.lint_ptx(module(kind, dirs), "t.ptx")}
    assert got == ({code} if code else set()), got


def test_a_pragma_in_a_declaration_is_refused_and_one_in_a_definition_kept():
    text = module("entry", P, ";") + ".visible .entry g()\n{\n\tret;\n}\n"
    assert "PTX-E-DIRECTIVE" in {d.code for d in L.lint_ptx(text, "t.ptx")}
    (fn,) = [f for f in parse(module("entry", f".maxntid 128 {P}"), "t.ptx").module.functions if f.name == "g"]
    assert fn.directives == [".maxntid 128", '.pragma "nounroll";']


@pytest.mark.ptxas
@needs_ptxas
def test_every_case_agrees_with_ptxas():
    # a warning counts as "not taken as written" here, as lint's PTX-W-DIRECTIVE does
    wrong = [(k, d) for k, d, ok, code in CASES if (ptxas_verdict(module(k, d)) == "ok") != (ok and code is None)]
    assert not wrong, wrong
    assert ptxas_verdict(module("entry", P, ";") + ".visible .entry g()\n{\n\tret;\n}\n") == "error"


# .pragma strings at module scope, in a kernel's header and in a body (isa_core.pragma_error): what ptxas 13.0 says
# of each, "ok", "warning" (it ignores it) or "error"
PRAGMA_STRINGS = {
    "nounroll": ("ok", "ok", "ok"), "bogus": ("error", "warning", "warning"), "unroll 4": ("error", "warning", "warning"),
    "nounroll 2": ("error", "warning", "warning"), "nounroll ": ("error", "warning", "warning"),
    " nounroll": ("error", "warning", "warning"), "NOUNROLL": ("error", "warning", "warning"),
    "coroutine": ("warning", "warning", "warning"), "coroutine 3": ("warning", "warning", "warning"),
    "enable_smem_spilling": ("error", "error", "ok"), "enable_smem_spilling 1": ("error", "error", "ok"),
    "frequency": ("error", "error", "error"), "frequency 3": ("error", "error", "ok"),
    "frequency 0x10": ("error", "error", "ok"), "frequency\t3": ("error", "error", "ok"),
    "frequency 0": ("error", "error", "error"), "frequency -1": ("error", "error", "error"),
    "frequency x": ("error", "error", "error"), "frequency 1.5": ("error", "error", "error"),
    "frequency 3 4": ("error", "error", "error"),
    "used_bytes_mask": ("error", "error", "error"), "used_bytes_mask 0xf": ("error", "error", "ok"),
    "used_bytes_mask -1": ("error", "error", "ok"), "used_bytes_mask 1,2": ("error", "error", "error"),
    "used_bytes_mask 0x1ffffffffffffffff": ("error", "error", "ok"),
}
WHERE = ("module", "header", "body")


def pragma_module(text, where):
    p = f'.pragma "{text}";'
    return (f".version 9.0\n.target sm_90a\n.address_size 64\n{p if where == 'module' else ''}\n"
            f".visible .entry k() {p if where == 'header' else ''}\n{{\n\t.reg .b32 %r<2>;\n"
            f"\t{p if where == 'body' else ''}\n\tmov.u32 %r1, 0;\n\tret;\n}}\n")


def _verdict(diags):
    sev = {d.severity for d in diags}
    return "error" if "error" in sev else "warning" if "warning" in sev else "ok"


def test_pragma_strings():
    wrong = [(t, w, want[i], _verdict(L.lint_ptx(pragma_module(t, w), "t.ptx")))
             for t, want in PRAGMA_STRINGS.items() for i, w in enumerate(WHERE)
             if _verdict(L.lint_ptx(pragma_module(t, w), "t.ptx")) != want[i]]
    assert not wrong, wrong
    (d,) = L.lint_ptx(pragma_module("frequency 0", "body"), "t.ptx")
    assert (d.code, d.loc.line, d.loc.col) == ("PTX-E-DIRECTIVE", 8, 2) and "Invalid value '0'" in d.message
    (d,) = L.lint_ptx(pragma_module("unroll 4", "body"), "t.ptx")
    assert d.code == "PTX-W-PRAGMA" and "nounroll" in d.notes[0]


def test_the_builder_takes_the_pragmas_ptxas_takes_in_a_body():
    import ptxgen as pg
    from ptxgen.errors import BuildError
    for text, want in PRAGMA_STRINGS.items():
        m = pg.Module("sm_90a")
        k = m.entry("k")
        if want[2] == "ok":
            k.pragma(text)
            assert L.lint_ptx(m.emit().text, "t.ptx") == [], text
        else:
            with pytest.raises(BuildError) as e:
                k.pragma(text)
            assert e.value.code == "PTX-E-DIRECTIVE", text
    with pytest.raises(BuildError):
        pg.Module("sm_90a").entry("k").pragma('nounroll"; trap; .pragma "nounroll')


@pytest.mark.ptxas
@needs_ptxas
def test_pragma_strings_agree_with_ptxas():
    wrong = [(t, w, want[i]) for t, want in PRAGMA_STRINGS.items() for i, w in enumerate(WHERE)
             if ptxas_verdict(pragma_module(t, w)) != want[i]]
    assert not wrong, wrong


# .file and .loc (whole-program verdict "ok", "warning" or "error"): a .file index given twice is an error
# ("Duplicate file index"); .loc in a module without .file a warning; inlined_at names a location an earlier .loc
# in the module gave, as a value (0x3 is 3), in any function
_STR = ".section .debug_str\n{\n$L__s:\n.b8 0\n}\n"
_INL = ".loc 1 1 1, function_name $L__s, inlined_at 1 2 {}"
DEBUG_CASES = [
    ('.file 1 "a.cu"', ".loc 1 10 0", "", "ok"), ("", ".loc 1 10 0", "", "warning"),
    ('.file 1 "a.cu"\n.file 1 "b.cu"', "", "", "error"), ('.file 1 "a.cu"\n.file 1 "a.cu"', "", "", "error"),
    ('.file 1 "a.cu"\n.file 2 "a.cu"', "", "", "ok"), ('.file 1 "a.cu"', ".loc 2 10 0", "", "ok"),
    ('.file 1 "a.cu"', ".loc 1 2 3\n\t" + _INL.format(3), _STR, "ok"),
    ('.file 1 "a.cu"', ".loc 1 2 3\n\t" + _INL.format("0x3"), _STR, "ok"),
    ('.file 1 "a.cu"', _INL.format(3) + "\n\t.loc 1 2 3", _STR, "error"),
    ('.file 1 "a.cu"', ".loc 1 2 4\n\t" + _INL.format(3), _STR, "error"),
    ('.file 1 "a.cu"\n.visible .entry j()\n{\n\t.loc 1 2 3\n\tret;\n}', _INL.format(3), _STR, "ok"),
]


def debug_module(top, body, tail):
    return (f".version 8.6\n.target sm_90a\n.address_size 64\n{top}\n.visible .entry k()\n{{\n\t{body}\n\tret;\n}}\n"
            + tail)


def test_file_and_loc_directives():
    wrong = [(top, body, want, _verdict(L.lint_ptx(debug_module(top, body, tail), "t.ptx")))
             for top, body, tail, want in DEBUG_CASES
             if _verdict(L.lint_ptx(debug_module(top, body, tail), "t.ptx")) != want]
    assert not wrong, wrong
    (d,) = L.lint_ptx(debug_module('.file 1 "a.cu"\n.file 1 "b.cu"', "", ""), "t.ptx")
    assert (d.code, d.loc.line, d.loc.col) == ("PTX-E-DIRECTIVE", 5, 1) and "Duplicate file index #1" in d.message


@pytest.mark.ptxas
@needs_ptxas
def test_file_and_loc_directives_agree_with_ptxas():
    wrong = [(top, body, want) for top, body, tail, want in DEBUG_CASES
             if ptxas_verdict(debug_module(top, body, tail)) != want]
    assert not wrong, wrong
