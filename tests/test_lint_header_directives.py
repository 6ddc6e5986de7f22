"""A function header's directives as ptxas 13.0 takes them (the test marked ptxas runs every case through it).

What ptxas 13.0 showed, and lint did not know: a kernel definition's header takes `.pragma "...";` (any number,
before or after the other directives; lint gave a syntax error), a .func's header and a declaration's do not;
.noreturn, .abi_preserve and .abi_preserve_control are a .func's only (a syntax error on a kernel); .maxnctapersm is
an error at every .version ("Deprecated feature ... as of PTX version 2.1"); .minnctapersm without .maxntid or
.reqntid is ignored, with a warning; .blocksareclusters needs both .reqntid and .reqnctapercluster.
"""
from __future__ import annotations

import os
import subprocess
import tempfile

import pytest

from ptxgen import lint as L
from ptxgen.parse import parse
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


def _ptxas_ok(text):
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "k.ptx")
        with open(p, "w") as fh:
            fh.write(text)
        r = subprocess.run(["ptxas", "-arch=sm_90a", p, "-o", os.devnull], capture_output=True, text=True,
                           timeout=120)
    return r.returncode == 0 and "warning" not in r.stdout + r.stderr


@pytest.mark.ptxas
@needs_ptxas
def test_every_case_agrees_with_ptxas():
    # a warning counts as "not taken as written" here, as lint's PTX-W-DIRECTIVE does
    wrong = [(k, d) for k, d, ok, code in CASES if _ptxas_ok(module(k, d)) != (ok and code is None)]
    assert not wrong, wrong
    assert not _ptxas_ok(module("entry", P, ";") + ".visible .entry g()\n{\n\tret;\n}\n")
