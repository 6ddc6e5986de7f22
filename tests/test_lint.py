"""ptxgen.lint: every diagnostic code on a rejected and an accepted example, the corpus lints clean, the
CLI, builder output, the legality wiring, agreement with ptxas's recorded verdicts, and a fuzz run.

No toolchain needed except for the test marked `ptxas` (it re-runs ptxas on the differential cases).
"""
import gzip
import json
import os
import random
import shutil
import subprocess
import sys

import pytest

import ptxgen as pg
from ptxgen import lint as L
from ptxgen.cli import main as cli_main
from ptxgen.asynccheck import ASYNC_CODES
from ptxgen.diag import Diagnostic

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = sorted(__import__("glob").glob(os.path.join(HERE, "ptx", "**", "*.ptx*"), recursive=True))
sys.path.insert(0, os.path.join(HERE, "differential"))
import bases  # noqa: E402
import gen_cases  # noqa: E402

DECLS = (".reg .pred %p<4>;\n.reg .b16 %rs<4>;\n.reg .b32 %r<16>;\n.reg .f32 %f<8>;\n.reg .f64 %fd<4>;\n"
         ".reg .b64 %rd<8>;\n")


def module(body: str, target="sm_90a", version="8.0", head_extra="", params="(.param .u64 out)", decls=DECLS):
    return (f".version {version}\n.target {target}\n.address_size 64\n{head_extra}"
            f".visible .entry k{params}\n{{\n{decls}{body}\nret;\n}}\n")


def codes(text, target=None):
    return [d.code for d in L.lint_ptx(text, "t.ptx", target) if d.severity == "error"]


# code -> (rejected module, accepted module); each rejected one was checked against ptxas 13.0
EXAMPLES = {
    "PTX-E-SYNTAX": (module("add.s32 %r1, %r2 %r3;"), module("add.s32 %r1, %r2, %r3;")),
    "PTX-E-OPCODE": (module("addx.s32 %r1, %r2, %r3;"), module("add.s32 %r1, %r2, %r3;")),
    "PTX-E-MODIFIER": (module("st.global.ca.u32 [%rd1], %r1;"), module("st.global.cg.u32 [%rd1], %r1;")),
    "PTX-E-TYPE": (module("add.s32 %r1, %rd1, %r2;"), module("add.s32 %r1, %r3, %r2;")),
    "PTX-E-OPERANDS": (module("add.s32 %r1, %r2;"), module("add.s32 %r1, %r2, %r3;")),
    "PTX-E-SHAPE": (module("ldmatrix.sync.aligned.m8n8.x3.shared.b16 {%r1, %r2, %r3}, [%r4];"),
                    module("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%r4];")),
    "PTX-E-UNKNOWN": (module("ldmatrix.x4 {%r1, %r2, %r3, %r4}, [%r5];"),
                      module("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%r5];")),
    "PTX-E-LAYOUT": (module("mma.sync.aligned.m16n8k16.row.row.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, "
                            "{%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f0, %f1, %f2, %f3};"),
                     module("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, "
                            "{%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f0, %f1, %f2, %f3};")),
    "PTX-E-TARGET": (module("wgmma.fence.sync.aligned;", target="sm_80"), module("wgmma.fence.sync.aligned;")),
    "PTX-E-VERSION": (module("elect.sync %r1|%p1, -1;", version="7.8"), module("elect.sync %r1|%p1, -1;")),
    "PTX-E-UNDECLARED": (module("mov.u32 %r16, 0;"), module("mov.u32 %r15, 0;")),
    "PTX-E-UNDEFINED": (module("ld.global.u32 %r1, [counter];"),
                        module("ld.global.u32 %r1, [counter];", head_extra=".global .u32 counter;\n")),
    "PTX-E-REDECLARED": (module("", decls=DECLS + ".reg .b32 %r1;\n"), module("", decls=DECLS + ".reg .b32 %q1;\n")),
    "PTX-E-LABEL": (module("bra $L_done;\nadd.s32 %r1, %r2, %r3;"),
                    module("bra $L_done;\nadd.s32 %r1, %r2, %r3;\n$L_done:")),
    "PTX-E-DUP-LABEL": (module("$L1:\n$L1:"), module("$L1:\n$L2:\nbra $L1;\nbra $L2;")),
    "PTX-E-CALL": (module("{\n.param .b32 a;\n.param .b32 b;\n.param .b32 r;\ncall.uni (r), f, (a, b);\n}",
                          head_extra=".func (.param .b32 r) f(.param .b32 a) { ret; }\n"),
                   module("{\n.param .b32 a;\n.param .b32 r;\ncall.uni (r), f, (a);\n}",
                          head_extra=".func (.param .b32 r) f(.param .b32 a) { ret; }\n")),
    "PTX-E-DIRECTIVE": (module("", version="6.0", target="sm_80"), module("", version="7.0", target="sm_80")),
    "PTX-E-DECL": (module("", head_extra=".local .b32 scratch;\n"), module("", head_extra=".global .b32 scratch;\n")),
}


@pytest.mark.parametrize("code", sorted(EXAMPLES))
def test_each_code_on_a_rejected_and_an_accepted_example(code):
    bad, good = EXAMPLES[code]
    assert code in codes(bad), [str(d) for d in L.lint_ptx(bad, "bad.ptx")]
    assert codes(good) == [], [str(d) for d in L.lint_ptx(good, "good.ptx")]


@pytest.mark.ptxas
@pytest.mark.parametrize("code", sorted(EXAMPLES))
def test_examples_agree_with_ptxas(code, tmp_path):
    """ptxas rejects each rejected example (at the line lint reports) and accepts each accepted one."""
    bad, good = EXAMPLES[code]
    got_bad = gen_cases.run_ptxas(bad)
    assert got_bad["rc"] != 0, code
    lines = {d.loc.line for d in L.lint_ptx(bad, "bad.ptx") if d.severity == "error"}
    assert got_bad["error_line"] in lines, (code, got_bad)
    assert gen_cases.run_ptxas(good)["rc"] == 0, code


_ASYNC_TX = "shared::cluster.mbarrier::complete_tx::bytes"
# st.async / red.async: (rejected line, the code lint gives it, a line ptxas takes in its place)
ASYNC_STORES = [
    (f"st.async.{_ASYNC_TX}.v4.b64 [%r1], {{%rd1, %rd2, %rd3, %rd4}}, [%r2];", "PTX-E-TYPE",
     f"st.async.{_ASYNC_TX}.v2.b64 [%r1], {{%rd1, %rd2}}, [%r2];"),
    (f"red.async.relaxed.cluster.{_ASYNC_TX}.add.f32 [%r1], %f1, [%r2];", "PTX-E-TYPE",
     f"red.async.relaxed.cluster.{_ASYNC_TX}.add.u32 [%r1], %r3, [%r2];"),
    (f"red.async.{_ASYNC_TX}.inc.u32 [%r1], %r3, [%r2];", "PTX-E-MODIFIER",
     f"red.async.relaxed.cluster.{_ASYNC_TX}.inc.u32 [%r1], %r3, [%r2];"),
    ("st.async.shared::cluster.b32 [%r1], %r3, [%r2];", "PTX-E-MODIFIER",
     f"st.async.{_ASYNC_TX}.b32 [%r1], %r3, [%r2];"),
    (f"st.async.{_ASYNC_TX}.v4.f32 [%r1], {{%f1, %f2, %f3, %f4}};", "PTX-E-OPERANDS",
     f"st.async.{_ASYNC_TX}.v4.f32 [%r1], {{%f1, %f2, %f3, %f4}}, [%r2];"),
    (f"st.async.{_ASYNC_TX}.b16 [%r1], %rs1, [%r2];", "PTX-E-TYPE", f"st.async.{_ASYNC_TX}.b32 [%r1], %r3, [%r2];"),
]


@pytest.mark.parametrize("bad, code, good", ASYNC_STORES, ids=[c[0].split(" ")[0] for c in ASYNC_STORES])
def test_async_stores_lint_as_ptxas_takes_them(bad, code, good):
    """st.async and red.async (PTX ISA 8.1, sm_90): what ptxas 13.0 rejects is an error at its line, what it
    takes is clean."""
    b, g = module(bad, version="8.1"), module(good, version="8.1")
    assert codes(b) == [code], [str(d) for d in L.lint_ptx(b, "bad.ptx")]
    assert codes(g) == [], [str(d) for d in L.lint_ptx(g, "good.ptx")]


@pytest.mark.ptxas
@pytest.mark.parametrize("bad, code, good", ASYNC_STORES, ids=[c[0].split(" ")[0] for c in ASYNC_STORES])
def test_async_store_examples_agree_with_ptxas(bad, code, good):
    b, g = module(bad, version="8.1"), module(good, version="8.1")
    got = gen_cases.run_ptxas(b)
    assert got["rc"] != 0 and got["error_line"] in {d.loc.line for d in L.lint_ptx(b, "bad.ptx")}, got
    assert gen_cases.run_ptxas(g)["rc"] == 0


# operands whose kind or type ptxas 13.0 decides its own way (tests/test_legality_ptxas.py's probes found
# them): (rejected body, the code lint gives it, a body ptxas takes in its place, target, rejected
# version, accepted version)
OPERAND_CASES = [
    (f"st.async.{_ASYNC_TX}.f32 [%r1], 1, [%r2];", "PTX-E-TYPE",
     f"st.async.{_ASYNC_TX}.f32 [%r1], 0f3F800000, [%r2];", "sm_90a", "8.1", "8.1"),
    ("mbarrier.try_wait.shared::cta.b64 %p1, [%rd1], %fd1;", "PTX-E-TYPE",
     "mbarrier.try_wait.shared::cta.b64 %p1, [%rd1], 0;", "sm_90a", "8.0", "8.0"),
    ("mbarrier.arrive.shared.b64 _, [%rd1];", "PTX-E-VERSION", "mbarrier.arrive.shared.b64 _, [%rd1];",
     "sm_80", "7.0", "7.1"),
    ("cp.async.ca.shared.global [%rd1], [%rd2], 16, %p1;", "PTX-E-VERSION",
     "cp.async.ca.shared.global [%rd1], [%rd2], 16, %p1;", "sm_80", "7.0", "7.5"),
    ("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%rd1], [%rd2], 8, [%rd3];", "PTX-E-OPERANDS",
     "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%rd1], [%rd2], 16, %rd3;",
     "sm_90a", "8.0", "8.0"),
    ("cp.async.bulk.prefetch.L2.global.L2::cache_hint [%rd1], %r1, %fd1;", "PTX-E-TYPE",
     "cp.async.bulk.prefetch.L2.global.L2::cache_hint [%rd1], %r1, 0;", "sm_90a", "8.0", "8.0"),
    ("mapa.shared::cluster.u32 %r1, %rd1, %r2;", "PTX-E-TYPE", "mapa.shared::cluster.u32 %r1, 0, %r2;",
     "sm_90a", "8.0", "8.0"),
    ("", "PTX-E-DECL", "", "sm_90a", "8.0", "8.0"),
    ("ld.global.u32 %r1, [16];", "PTX-E-OPERANDS", "ld.local.u32 %r1, [16];", "sm_90a", "8.0", "8.0"),
    ("mbarrier.init.shared.b64 [16], 1;", "PTX-E-OPERANDS", "mbarrier.init.shared.b64 [%rd1+16], 1;",
     "sm_90a", "8.0", "8.0"),
    ("ld.shared.f16 %rs1, [%rd1];", "PTX-E-TYPE", "ld.shared.b16 %rs1, [%rd1];", "sm_90a", "8.0", "8.0"),
    ("st.global.f16 [%rd1], %rs1;", "PTX-E-TYPE", "st.global.b16 [%rd1], %rs1;", "sm_90a", "8.0", "8.0"),
    ("add.rn.f16 %rs1, %rs2, 1;", "PTX-E-TYPE", "add.rn.f16 %rs1, %rs2, %rs3;", "sm_90a", "8.0", "8.0"),
    ("fma.rn.f16x2 %r1, %r2, %r3, 0;", "PTX-E-TYPE", "fma.rn.f16x2 %r1, %r2, %r3, %r4;", "sm_90a", "8.0", "8.0"),
    ("cvta.to.global.u64 %rd1, %r1;", "PTX-E-TYPE", "cvta.to.global.u64 %rd1, %rd2;", "sm_90a", "8.0", "8.0"),
    # the state space of a variable an address names ("State space mismatch", "Illegal state space")
    (".local .align 8 .b64 lb;\nmbarrier.init.shared.b64 [lb], 1;", "PTX-E-OPERANDS",
     ".shared .align 8 .b64 sb;\nmbarrier.init.shared.b64 [sb], 1;", "sm_90a", "8.0", "8.0"),
    (".shared .align 16 .b8 sb[64];\ncp.async.bulk.global.shared::cta.bulk_group [sb], [%rd1], 16;", "PTX-E-OPERANDS",
     ".shared .align 16 .b8 sb[64];\ncp.async.bulk.global.shared::cta.bulk_group [%rd1], [sb], 16;",
     "sm_90a", "8.0", "8.0"),
    (".local .align 16 .b8 lb[64];\nldmatrix.sync.aligned.m8n8.x1.b16 {%r1}, [out];", "PTX-E-OPERANDS",
     ".local .align 16 .b8 lb[64];\nldmatrix.sync.aligned.m8n8.x1.b16 {%r1}, [lb];", "sm_90a", "8.0", "8.0"),
    ("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%rd1], [out, {%r1}], [%rd2];",
     "PTX-E-OPERANDS", "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%rd1], [%rd3, {%r1}], [%rd2];",
     "sm_90a", "8.0", "8.0"),
]
_BF16_DECL = ".reg .bf16x2 %bh<2>;\n"


def _operand_case_modules(case):
    bad, code, good, target, v_bad, v_good = case
    extra = _BF16_DECL if code == "PTX-E-DECL" else ""
    return (module(bad, target=target, version=v_bad, decls=DECLS + extra),
            module(good, target=target, version=v_good))


@pytest.mark.parametrize("case", OPERAND_CASES, ids=[f"{c[1]}-{c[0].split(' ')[0] or 'decl'}" for c in OPERAND_CASES])
def test_operand_kinds_and_types_lint_as_ptxas_takes_them(case):
    b, g = _operand_case_modules(case)
    assert codes(b) == [case[1]], [str(d) for d in L.lint_ptx(b, "bad.ptx")]
    assert codes(g) == [], [str(d) for d in L.lint_ptx(g, "good.ptx")]


@pytest.mark.ptxas
@pytest.mark.parametrize("case", OPERAND_CASES, ids=[f"{c[1]}-{c[0].split(' ')[0] or 'decl'}" for c in OPERAND_CASES])
def test_operand_cases_agree_with_ptxas(case):
    b, g = _operand_case_modules(case)
    got = gen_cases.run_ptxas(b)
    assert got["rc"] != 0 and got["error_line"] in {d.loc.line for d in L.lint_ptx(b, "bad.ptx")}, got
    assert gen_cases.run_ptxas(g)["rc"] == 0, gen_cases.run_ptxas(g)


_F16X2 = DECLS + ".reg .f16x2 %h<4>;\n.reg .u32 %u<4>;\n"
# ptxas 13.0 takes a .f16x2 register for a 32-bit integer in the core instructions (not the other way
# round, nor for .f32): rejected body, accepted body
F16X2_AS_INT = [
    ("add.f32 %f1, %h1, %h2;", "add.u32 %u1, %h1, %h2;\nsetp.lt.s32 %p1, %h1, %u2;\nld.shared.u32 %h1, [%rd1];\n"
     "atom.shared.add.u32 %u1, [%rd1], %h1;\nshfl.sync.bfly.b32 %r1, %h1, 1, 31, -1;"),
    ("add.rn.f16x2 %h1, %u1, %u2;", "add.rn.f16x2 %h1, %r1, %r2;\nmov.u32 %h1, %u1;"),
]


@pytest.mark.parametrize("bad, good", F16X2_AS_INT)
def test_f16x2_registers_in_integer_instructions(bad, good):
    b, g = module(bad, decls=_F16X2), module(good, decls=_F16X2)
    assert codes(b) == ["PTX-E-TYPE"] * 2, [str(d) for d in L.lint_ptx(b, "bad.ptx")]
    assert codes(g) == [], [str(d) for d in L.lint_ptx(g, "good.ptx")]


@pytest.mark.ptxas
@pytest.mark.parametrize("bad, good", F16X2_AS_INT)
def test_f16x2_registers_in_integer_instructions_agree_with_ptxas(bad, good):
    b, g = module(bad, decls=_F16X2), module(good, decls=_F16X2)
    assert gen_cases.run_ptxas(b)["rc"] != 0
    assert gen_cases.run_ptxas(g)["rc"] == 0, gen_cases.run_ptxas(g)


# a vector whose registers are of two widths: ptxas rejects the line (an error for each odd element); lint
# names the first odd register and the first register's width, once a vector
MIXED_VECTOR = "wmma.load.c.sync.aligned.row.m16n16k16.global.f32 {%rd1, %rd2, %f3, %f4, %f5, %f6, %f7, %f0}, [%rd1];"


def test_a_vector_of_mixed_widths_is_one_error_naming_the_first_width():
    diags = [d for d in L.lint_ptx(module(MIXED_VECTOR), "t.ptx") if d.severity == "error"]
    widths = [d.message for d in diags if "first register" in d.message]
    assert widths == ["%f3 is .f32, but the vector's first register is 64-bit; the elements of a vector have one "
                      "width"], [str(d) for d in diags]
    # (and the fragment's first register is of the wrong type: WMMA_FRAGMENTS)
    assert [d.code for d in diags] == ["PTX-E-TYPE"] * 2, [str(d) for d in diags]


@pytest.mark.ptxas
def test_a_vector_of_mixed_widths_agrees_with_ptxas():
    assert gen_cases.run_ptxas(module(MIXED_VECTOR))["rc"] != 0
    assert gen_cases.run_ptxas(module(MIXED_VECTOR.replace("%rd1, %rd2", "%f1, %f2", 1)))["rc"] == 0


# wmma fragments: (instruction with {R} for the fragment registers' type, ptxas 13.0's verdict); the
# registers a fragment takes depend on its element type, not on the fragment (probed with ptxas 13.0)
def _wmma(frag, ty, shape, n, reg, kind="load"):
    regs = "{" + ", ".join(f"%q{i}" for i in range(n)) + "}"
    text = f"wmma.{kind}.{frag}.sync.aligned.row.{shape}.global.{ty} "
    text += f"{regs}, [%rd1];" if kind == "load" else f"[%rd1], {regs};"
    return text, reg


WMMA_FRAGMENTS = [
    (_wmma("a", "f16", "m16n16k16", 8, "b32"), True), (_wmma("a", "f16", "m16n16k16", 8, "f16x2"), True),
    (_wmma("a", "f16", "m16n16k16", 8, "f32"), False), (_wmma("a", "f16", "m16n16k16", 8, "u32"), False),
    (_wmma("b", "f16", "m16n16k16", 8, "f32"), False), (_wmma("c", "f32", "m16n16k16", 8, "f32"), True),
    (_wmma("c", "f32", "m16n16k16", 8, "b32"), True), (_wmma("c", "f32", "m16n16k16", 8, "u32"), False),
    (_wmma("d", "f32", "m16n16k16", 8, "f16x2", "store"), False), (_wmma("c", "f16", "m16n16k16", 4, "f16x2"), True),
    (_wmma("c", "f16", "m16n16k16", 4, "f32"), False), (_wmma("a", "bf16", "m16n16k16", 4, "b32"), True),
    (_wmma("a", "bf16", "m16n16k16", 4, "u32"), False), (_wmma("a", "tf32", "m16n16k8", 4, "f32"), False),
    (_wmma("a", "s8", "m16n16k16", 2, "s32"), True), (_wmma("a", "u8", "m16n16k16", 2, "u32"), True),
    (_wmma("a", "s8", "m16n16k16", 2, "f16x2"), False), (_wmma("c", "s32", "m16n16k16", 8, "u32"), True),
    (_wmma("c", "s32", "m16n16k16", 8, "f32"), False), (_wmma("a", "b1", "m8n8k128", 1, "s32"), True),
    (_wmma("a", "f64", "m8n8k4", 1, "b64"), True), (_wmma("a", "f64", "m8n8k4", 1, "u64"), False),
    (_wmma("c", "f64", "m8n8k4", 2, "f64"), True),
    (("wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7}, "
      "{%q0, %q1, %q2, %q3, %q4, %q5, %q6, %q7}, {%q0, %q1, %q2, %q3, %q4, %q5, %q6, %q7}, "
      "{%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7};", "f16x2"), True),
    (("wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7}, "
      "{%q0, %q1, %q2, %q3, %q4, %q5, %q6, %q7}, {%q0, %q1, %q2, %q3, %q4, %q5, %q6, %q7}, "
      "{%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7};", "f32"), False),
    (("wmma.mma.sync.aligned.row.col.m16n16k16.f32.bf16.bf16.f32 {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}, "
      "{%q0, %q1, %q2, %q3}, {%q4, %q5, %q6, %q7}, {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7};", "b32"), True),
    (("wmma.mma.sync.aligned.row.col.m16n16k16.f32.bf16.bf16.f32 {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}, "
      "{%q0, %q1, %q2, %q3}, {%q4, %q5, %q6, %q7}, {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7};", "f16x2"), False),
]


# wmma.load/store element types by fragment (ptxas 13.0: "Unexpected instruction types" or "Illegal
# type" for the others), in .b32 registers
WMMA_TYPES = [(_wmma("a", "u32", "m16n16k16", 8, "b32"), False), (_wmma("c", "u32", "m16n16k16", 8, "b32"), False),
              (_wmma("a", "f32", "m16n16k16", 8, "b32"), False), (_wmma("c", "bf16", "m16n16k16", 8, "b32"), False),
              (_wmma("a", "s32", "m16n16k16", 8, "b32"), False), (_wmma("c", "s8", "m16n16k16", 8, "b32"), False),
              (_wmma("a", "f16", "m16n16k16", 8, "b32"), True), (_wmma("b", "bf16", "m16n16k16", 4, "b32"), True),
              (_wmma("d", "s32", "m16n16k16", 8, "b32", "store"), True), (_wmma("c", "f32", "m16n16k16", 8, "b32"), True)]


@pytest.mark.parametrize("case", WMMA_TYPES, ids=lambda c: c[0][0].split()[0])
def test_wmma_fragment_types_lint_as_ptxas_takes_them(case):
    diags = [d for d in L.lint_ptx(_wmma_module(case), "t.ptx") if d.severity == "error"]
    assert (not diags) == case[1], [str(d) for d in diags]
    assert all(d.code == "PTX-E-TYPE" and "form" in d.message for d in diags)


@pytest.mark.ptxas
@pytest.mark.parametrize("case", WMMA_TYPES, ids=lambda c: c[0][0].split()[0])
def test_wmma_fragment_types_agree_with_ptxas(case):
    assert (gen_cases.run_ptxas(_wmma_module(case))["rc"] == 0) == case[1]


# registers a wmma fragment holds, by element type and shape (PTX ISA: wmma fragments): (a, b) and c/d
_AB_REGS = {"f16": {"m16n16k16": (8, 8), "m8n32k16": (8, 8), "m32n8k16": (8, 8)},
            "bf16": {"m16n16k16": (4, 4), "m8n32k16": (2, 8), "m32n8k16": (8, 2)}, "tf32": {"m16n16k8": (4, 4)},
            "s8": {"m16n16k16": (2, 2), "m8n32k16": (1, 4), "m32n8k16": (4, 1)},
            "u8": {"m16n16k16": (2, 2), "m8n32k16": (1, 4), "m32n8k16": (4, 1)},
            "s4": {"m8n8k32": (1, 1)}, "u4": {"m8n8k32": (1, 1)}, "b1": {"m8n8k128": (1, 1)}, "f64": {"m8n8k4": (1, 1)}}
_CD_REGS = {"f16": {"m16n16k16": 4, "m8n32k16": 4, "m32n8k16": 4},
            "f32": {"m16n16k16": 8, "m8n32k16": 8, "m32n8k16": 8, "m16n16k8": 8, "m8n8k32": 2, "m8n8k128": 2},
            "s32": {"m16n16k16": 8, "m8n32k16": 8, "m32n8k16": 8, "m8n8k32": 2, "m8n8k128": 2}, "f64": {"m8n8k4": 2}}


def _wmma_count_cases():
    """(instruction, register type, legal): every fragment of every element type and shape with its
    register count and one fewer and one more; every a fragment type at every shape; and every c
    and d fragment type at every shape (.f32 c and d at the sub-byte shapes are not in the PTX ISA, but ptxas
    takes them, in 2 registers)."""
    out = []
    for ty, shapes in _AB_REGS.items():
        for shape, counts in shapes.items():
            for frag, n in zip("ab", counts):
                layout = ("row" if frag == "a" else "col") if ty in ("s4", "u4", "b1") else "row"
                for d in (0, -1, 1):
                    if n + d:
                        out.append((_wmma(frag, ty, shape, n + d, "b32")[0].replace(".row.", f".{layout}."),
                                    "b64" if ty == "f64" else "b32", d == 0))
        for shape in sorted({sh for v in _AB_REGS.values() for sh in v} - set(shapes)):
            out.append((_wmma("a", ty, shape, 1, "b32")[0], "b64" if ty == "f64" else "b32", False))
    for ty, shapes in _CD_REGS.items():
        for shape, n in shapes.items():
            for d in (0, -1, 1):
                for frag, kind in (("c", "load"), ("d", "store")):
                    out.append((_wmma(frag, ty, shape, n + d, "b32", kind)[0], "b64" if ty == "f64" else "b32", d == 0))
        for shape in sorted({sh for v in _AB_REGS.values() for sh in v} - set(shapes)):
            for frag, kind in (("c", "load"), ("d", "store")):
                out.append((_wmma(frag, ty, shape, 2, "b32", kind)[0], "b64" if ty == "f64" else "b32", False))
    return out


WMMA_COUNTS = _wmma_count_cases()


def test_wmma_fragment_counts_and_shapes_lint_as_the_isa_says():
    wrong = []
    for text, reg, legal in WMMA_COUNTS:
        diags = [d for d in L.lint_ptx(_wmma_module(((text, reg), legal)), "t.ptx") if d.severity == "error"]
        if (not diags) != legal or not all(d.code in ("PTX-E-OPERANDS", "PTX-E-SHAPE") for d in diags):
            wrong.append((text, reg, legal, [str(d) for d in diags]))
    assert not wrong and len(WMMA_COUNTS) == 252, wrong[:5]
    msg = [str(d) for d in L.lint_ptx(_wmma_module((_wmma("a", "bf16", "m8n32k16", 4, "b32"), False)), "t.ptx")]
    assert any("wmma fragment a of .bf16 elements at .m8n32k16 is 2 registers, 4 given" in m for m in msg), msg
    msg = [str(d) for d in L.lint_ptx(_wmma_module((_wmma("c", "f32", "m8n8k32", 8, "b32"), False)), "t.ptx")]
    assert any("wmma fragment c of .f32 elements at .m8n8k32 is 2 registers, 8 given" in m for m in msg), msg
    msg = [str(d) for d in L.lint_ptx(_wmma_module((_wmma("d", "f16", "m8n8k128", 4, "b32", "store"), False)), "t.ptx")]
    assert any("wmma has no .m8n8k128 form for .f16 d fragments" in m and "have the shapes .m16n16k16, .m32n8k16, "
               ".m8n32k16" in m for m in msg), msg


@pytest.mark.ptxas
def test_wmma_fragment_counts_and_shapes_agree_with_ptxas():
    wrong = [(text, legal) for text, reg, legal in WMMA_COUNTS
             if (gen_cases.run_ptxas(_wmma_module(((text, reg), legal)))["rc"] == 0) != legal]
    assert not wrong, wrong[:5]


def _wmma_module(case):
    (text, reg), _ = case
    return module(text, decls=DECLS + f".reg .{reg} %q<12>;\n")


@pytest.mark.parametrize("case", WMMA_FRAGMENTS, ids=lambda c: c[0][0].split()[0] + "-" + c[0][1])
def test_wmma_fragment_registers_lint_as_ptxas_takes_them(case):
    diags = [d for d in L.lint_ptx(_wmma_module(case), "t.ptx") if d.severity == "error"]
    assert (not diags) == case[1], [str(d) for d in diags]
    assert all(d.code == "PTX-E-TYPE" and "fragment" in d.message for d in diags)


@pytest.mark.ptxas
@pytest.mark.parametrize("case", WMMA_FRAGMENTS, ids=lambda c: c[0][0].split()[0] + "-" + c[0][1])
def test_wmma_fragment_registers_agree_with_ptxas(case):
    assert (gen_cases.run_ptxas(_wmma_module(case))["rc"] == 0) == case[1]


# wmma's modifiers beyond its groups: (instruction with %q<12> .b32 registers, the code lint answers or
# None where ptxas 13.0 takes it, .version); rounding only on .f64 wmma.mma, .satfinite only on integer
# wmma.mma (and .f16 before PTX ISA 6.5), .xor.popc/.and.popc on .b1 wmma.mma only and always there,
# .row A and .col B for the sub-byte inputs, wmma.load of a, b or c and wmma.store of d
_Q8 = "{%q0, %q1, %q2, %q3, %q4, %q5, %q6, %q7}"
_F8 = "{%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}"
_W = "wmma.mma.sync.aligned.row.col"
WMMA_MODIFIERS = [
    (f"wmma.load.d.sync.aligned.row.m16n16k16.global.f32 {_F8}, [%rd1];", "PTX-E-MODIFIER", "8.0"),
    (f"wmma.store.a.sync.aligned.row.m16n16k16.global.f16 [%rd1], {_Q8};", "PTX-E-MODIFIER", "8.0"),
    (f"wmma.store.d.sync.aligned.col.m16n16k16.shared.f32 [%rd1], {_F8}, %r1;", None, "8.0"),
    (f"{_W}.m16n16k16.rn.f32.f32 {_F8}, {_Q8}, {_Q8}, {_F8};", "PTX-E-MODIFIER", "8.0"),
    (f"{_W}.m16n16k16.rz.s32.s8.s8.s32 {_Q8}, {{%q0, %q1}}, {{%q2, %q3}}, {_Q8};", "PTX-E-MODIFIER", "8.0"),
    (f"{_W}.m8n8k4.rn.f64.f64.f64.f64 {{%fd0, %fd1}}, {{%fd2}}, {{%fd3}}, {{%fd0, %fd1}};", None, "8.0"),
    ("wmma.mma.sync.aligned.col.row.m8n8k4.rm.f64.f64.f64.f64 {%fd0, %fd1}, {%fd2}, {%fd3}, {%fd0, %fd1};", None,
     "8.0"),
    ("wmma.load.c.sync.aligned.row.m8n8k4.global.rz.f64 {%fd0, %fd1}, [%rd1];", "PTX-E-MODIFIER", "8.0"),
    (f"{_W}.m16n16k16.f32.f32.satfinite {_F8}, {_Q8}, {_Q8}, {_F8};", "PTX-E-MODIFIER", "8.0"),
    (f"{_W}.m16n16k16.f32.f32.satfinite {_F8}, {_Q8}, {_Q8}, {_F8};", None, "6.4"),
    (f"{_W}.m16n16k16.f32.bf16.bf16.f32.satfinite {_F8}, {{%q0, %q1, %q2, %q3}}, {{%q4, %q5, %q6, %q7}}, {_F8};",
     "PTX-E-MODIFIER", "8.0"),
    (f"{_W}.m16n16k16.s32.s8.s8.s32.satfinite {_Q8}, {{%q0, %q1}}, {{%q2, %q3}}, {_Q8};", None, "8.0"),
    (f"{_W}.m8n8k32.s32.u4.u4.s32.satfinite {{%q0, %q1}}, {{%q2}}, {{%q3}}, {{%q0, %q1}};", None, "8.0"),
    (f"{_W}.m8n8k4.f64.f64.f64.f64.satfinite {{%fd0, %fd1}}, {{%fd2}}, {{%fd3}}, {{%fd0, %fd1}};", "PTX-E-MODIFIER",
     "8.0"),
    ("wmma.load.a.sync.aligned.row.m16n16k16.global.satfinite.f16 " + _Q8 + ", [%rd1];", "PTX-E-MODIFIER", "8.0"),
    (f"{_W}.m8n8k128.s32.b1.b1.s32 {{%q0, %q1}}, {{%q2}}, {{%q3}}, {{%q0, %q1}};", "PTX-E-MODIFIER", "8.0"),
    ("wmma.mma.xor.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32 {%q0, %q1}, {%q2}, {%q3}, {%q0, %q1};",
     "PTX-E-MODIFIER", "8.0"),
    ("wmma.mma.xor.popc.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32 {%q0, %q1}, {%q2}, {%q3}, {%q0, %q1};", None,
     "8.0"),
    ("wmma.mma.and.popc.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32 {%q0, %q1}, {%q2}, {%q3}, {%q0, %q1};", None,
     "8.0"),
    ("wmma.mma.xor.popc.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32.satfinite {%q0, %q1}, {%q2}, {%q3}, {%q0, %q1};",
     "PTX-E-MODIFIER", "8.0"),
    ("wmma.mma.xor.popc.sync.aligned.row.col.m8n8k32.s32.s4.s4.s32 {%q0, %q1}, {%q2}, {%q3}, {%q0, %q1};",
     "PTX-E-MODIFIER", "8.0"),
    ("wmma.mma.and.popc.sync.aligned.row.col.m16n16k16.f32.f32 " + f"{_F8}, {_Q8}, {_Q8}, {_F8};", "PTX-E-MODIFIER",
     "8.0"),
    ("wmma.mma.sync.aligned.col.col.m8n8k32.s32.s4.s4.s32 {%q0, %q1}, {%q2}, {%q3}, {%q0, %q1};", "PTX-E-LAYOUT",
     "8.0"),
    ("wmma.mma.xor.popc.sync.aligned.row.row.m8n8k128.s32.b1.b1.s32 {%q0, %q1}, {%q2}, {%q3}, {%q0, %q1};",
     "PTX-E-LAYOUT", "8.0"),
    ("wmma.mma.sync.aligned.col.row.m16n16k16.s32.u8.u8.s32 " + f"{_Q8}, {{%q0, %q1}}, {{%q2, %q3}}, {_Q8};", None,
     "8.0"),
    ("wmma.load.a.sync.aligned.col.m8n8k32.global.s4 {%q0}, [%rd1];", "PTX-E-LAYOUT", "8.0"),
    ("wmma.load.b.sync.aligned.row.m8n8k128.shared.b1 {%q0}, [%rd1];", "PTX-E-LAYOUT", "8.0"),
    ("wmma.load.b.sync.aligned.col.m8n8k128.shared.b1 {%q0}, [%rd1];", None, "8.0"),
    ("wmma.load.a.sync.aligned.col.m16n16k16.global.s8 {%q0, %q1}, [%rd1];", None, "8.0"),
    ("wmma.load.c.sync.aligned.col.m8n8k32.global.s32 {%q0, %q1}, [%rd1];", None, "8.0"),
]


def _wmma_modifier_module(text, version):
    return module(text, target="sm_75" if version < "7.0" else "sm_90a", version=version,
                  decls=DECLS + ".reg .b32 %q<12>;\n")


@pytest.mark.parametrize("text, code, version", WMMA_MODIFIERS, ids=[f"{i}" for i in range(len(WMMA_MODIFIERS))])
def test_wmma_modifiers_lint_as_ptxas_takes_them(text, code, version):
    diags = [d for d in L.lint_ptx(_wmma_modifier_module(text, version), "t.ptx") if d.severity == "error"]
    assert [d.code for d in diags] == ([code] if code else []), [str(d) for d in diags]


@pytest.mark.ptxas
@pytest.mark.parametrize("text, code, version", WMMA_MODIFIERS, ids=[f"{i}" for i in range(len(WMMA_MODIFIERS))])
def test_wmma_modifiers_agree_with_ptxas(text, code, version):
    assert (gen_cases.run_ptxas(_wmma_modifier_module(text, version))["rc"] == 0) == (code is None)


def test_wmma_modifier_messages_say_what_is_legal():
    def msg(text, version="8.0"):
        ds = [d for d in L.lint_ptx(_wmma_modifier_module(text, version), "t.ptx") if d.severity == "error"]
        return " / ".join(d.message + " (" + "; ".join(d.notes) + ")" for d in ds)
    m = msg(WMMA_MODIFIERS[3][0])
    assert "wmma.mma with .f16 inputs takes no rounding modifier (.rn)" in m and "only wmma.mma of .f64" in m, m
    m = msg(WMMA_MODIFIERS[8][0])
    assert "takes no .satfinite since PTX ISA 6.5" in m and ".s8, .u8, .s4 or .u4" in m, m
    m = msg(WMMA_MODIFIERS[15][0])
    assert "needs its bit operation: .xor.popc or .and.popc" in m, m
    m = msg(WMMA_MODIFIERS[22][0])
    assert "takes the layouts .row.col only, not .col.col" in m, m
    m = msg(WMMA_MODIFIERS[0][0])
    assert "wmma.load has no .d fragment" in m and "wmma.store stores .d" in m, m


# wmma forms at the targets and PTX ISA versions around each one's minimum: (instruction with %q<12>
# .b32 registers, .target, .version, the codes lint answers; [] where ptxas 13.0 takes it). ptxas 13.0
# gates (probed at sm_70 ... sm_90a and PTX ISA 6.0 ... 9.0): .m16n16k16 .f16/.f32 sm_70 and 6.0;
# .m8n32k16/.m32n8k16 6.1; .s8/.u8 and .s32 c/d sm_72 and 6.3; .s4/.u4/.b1 and .m8n8k32/.m8n8k128 (.f32 and
# .s32 c/d too) sm_75 and 6.3; .bf16, .tf32 and .m16n16k8 (.f32 c/d too), .f64 sm_80 and 7.0; .and.popc
# sm_80 and 7.1; .aligned 6.3 (before it wmma is .sync alone; from it on .sync.aligned)
_Q2, _Q4 = "{%q0, %q1}", "{%q0, %q1, %q2, %q3}"
_LA = "wmma.load.a.sync.aligned.row"
_T, _V, _M = "PTX-E-TARGET", "PTX-E-VERSION", "PTX-E-MODIFIER"
_B1 = "wmma.mma.{}.popc.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32 {{%q0, %q1}}, {{%q2}}, {{%q3}}, {{%q0, %q1}};"
_F64 = f"{_W}.m8n8k4.rn.f64.f64.f64.f64 {{%fd0, %fd1}}, {{%fd2}}, {{%fd3}}, {{%fd0, %fd1}};"
_BF16 = f"{_W}.m16n16k16.f32.bf16.bf16.f32 {_F8}, {_Q4}, {{%q4, %q5, %q6, %q7}}, {_F8};"
WMMA_GATES = [
    # .aligned: PTX ISA 6.3
    (f"wmma.load.a.sync.row.m16n16k16.global.f16 {_Q8}, [%rd1];", "sm_70", "6.0", []),
    (f"{_LA}.m16n16k16.global.f16 {_Q8}, [%rd1];", "sm_70", "6.0", [_V]),
    (f"{_LA}.m16n16k16.global.f16 {_Q8}, [%rd1];", "sm_70", "6.3", []),
    (f"wmma.load.a.sync.row.m16n16k16.global.f16 {_Q8}, [%rd1];", "sm_70", "6.3", [_M]),
    (f"wmma.mma.sync.row.col.m16n16k16.f32.f32.satfinite {_F8}, {_Q8}, {_Q8}, {_F8};", "sm_70", "6.2", []),
    # .m8n32k16, .m32n8k16: PTX ISA 6.1
    (f"wmma.load.a.sync.row.m8n32k16.global.f16 {_Q8}, [%rd1];", "sm_70", "6.0", [_V]),
    (f"wmma.store.d.sync.row.m32n8k16.shared.f32 [%rd1], {_F8};", "sm_70", "6.0", [_V]),
    (f"wmma.load.a.sync.row.m8n32k16.global.f16 {_Q8}, [%rd1];", "sm_70", "6.1", []),
    # .s8, .u8, .s32: sm_72, PTX ISA 6.3
    (f"{_LA}.m16n16k16.global.s8 {_Q2}, [%rd1];", "sm_70", "6.3", [_T]),
    (f"{_LA}.m16n16k16.global.s8 {_Q2}, [%rd1];", "sm_72", "6.3", []),
    (f"wmma.load.a.sync.row.m16n16k16.global.s8 {_Q2}, [%rd1];", "sm_72", "6.2", [_V]),
    (f"wmma.load.c.sync.aligned.row.m16n16k16.global.s32 {_Q8}, [%rd1];", "sm_70", "7.0", [_T]),
    (f"wmma.store.d.sync.aligned.col.m32n8k16.global.s32 [%rd1], {_Q8};", "sm_72", "6.3", []),
    (f"{_W}.m16n16k16.s32.u8.u8.s32 {_Q8}, {_Q2}, {{%q2, %q3}}, {_Q8};", "sm_70", "6.5", [_T]),
    (f"{_W}.m16n16k16.s32.u8.u8.s32.satfinite {_Q8}, {_Q2}, {{%q2, %q3}}, {_Q8};", "sm_72", "6.3", []),
    # .s4, .u4, .b1, .m8n8k32, .m8n8k128: sm_75, PTX ISA 6.3
    (f"{_LA}.m8n8k32.global.s4 {{%q0}}, [%rd1];", "sm_72", "6.3", [_T]),
    (f"{_LA}.m8n8k32.global.s4 {{%q0}}, [%rd1];", "sm_75", "6.3", []),
    (f"{_W}.m8n8k32.s32.u4.u4.s32.satfinite {_Q2}, {{%q2}}, {{%q3}}, {_Q2};", "sm_72", "6.5", [_T]),
    (f"{_W}.m8n8k32.s32.u4.u4.s32.satfinite {_Q2}, {{%q2}}, {{%q3}}, {_Q2};", "sm_75", "6.3", []),
    (_B1.format("xor"), "sm_72", "7.0", [_T]),
    (_B1.format("xor"), "sm_75", "6.3", []),
    (f"wmma.load.c.sync.aligned.row.m8n8k32.global.f32 {_Q2}, [%rd1];", "sm_72", "6.3", [_T]),
    (f"wmma.load.c.sync.aligned.row.m8n8k32.global.f32 {_Q2}, [%rd1];", "sm_75", "6.3", []),
    (f"wmma.store.d.sync.aligned.row.m8n8k128.global.s32 [%rd1], {_Q2};", "sm_72", "6.3", [_T]),
    # .bf16, .tf32, .m16n16k8, .f64: sm_80, PTX ISA 7.0
    (f"{_LA}.m16n16k16.global.bf16 {_Q4}, [%rd1];", "sm_75", "6.5", [_T, _V]),
    (f"{_LA}.m16n16k16.global.bf16 {_Q4}, [%rd1];", "sm_75", "7.0", [_T]),
    (f"{_LA}.m16n16k16.global.bf16 {_Q4}, [%rd1];", "sm_80", "7.0", []),
    (_BF16, "sm_75", "7.8", [_T]),
    (_BF16, "sm_80", "7.0", []),
    (_BF16, "sm_90a", "9.0", []),
    (f"wmma.load.b.sync.aligned.col.m16n16k8.global.tf32 {_Q4}, [%rd1];", "sm_75", "7.0", [_T]),
    (f"{_W}.m16n16k8.f32.tf32.tf32.f32 {_F8}, {_Q4}, {{%q4, %q5, %q6, %q7}}, {_F8};", "sm_75", "6.5", [_T, _V]),
    (f"{_W}.m16n16k8.f32.tf32.tf32.f32 {_F8}, {_Q4}, {{%q4, %q5, %q6, %q7}}, {_F8};", "sm_80", "7.0", []),
    (f"wmma.load.c.sync.aligned.row.m16n16k8.global.f32 {_F8}, [%rd1];", "sm_75", "7.0", [_T]),
    (f"wmma.load.c.sync.aligned.row.m16n16k8.global.f32 {_F8}, [%rd1];", "sm_80", "7.0", []),
    ("wmma.load.a.sync.aligned.row.m8n8k4.global.f64 {%fd0}, [%rd1];", "sm_75", "6.5", [_T, _V]),
    ("wmma.store.d.sync.aligned.row.m8n8k4.global.f64 [%rd1], {%fd0, %fd1};", "sm_75", "7.0", [_T]),
    (_F64, "sm_75", "7.8", [_T]),
    (_F64, "sm_80", "7.0", []),
    # .and: sm_80, PTX ISA 7.1
    (_B1.format("and"), "sm_75", "7.1", [_T]),
    (_B1.format("and"), "sm_80", "7.0", [_V]),
    (_B1.format("and"), "sm_80", "7.1", []),
    (_B1.format("xor"), "sm_80", "7.0", []),
]


def _wmma_gate_module(text, target, version):
    return module(text, target=target, version=version, decls=DECLS + ".reg .b32 %q<12>;\n")


@pytest.mark.parametrize("text, target, version, want", WMMA_GATES,
                         ids=[f"{i}-{t}-{v}" for i, (_, t, v, _) in enumerate(WMMA_GATES)])
def test_wmma_forms_are_gated_at_their_target_and_version(text, target, version, want):
    diags = [d for d in L.lint_ptx(_wmma_gate_module(text, target, version), "t.ptx") if d.severity == "error"]
    assert [d.code for d in diags] == want, [str(d) for d in diags]


@pytest.mark.ptxas
@pytest.mark.parametrize("text, target, version, want", WMMA_GATES,
                         ids=[f"{i}-{t}-{v}" for i, (_, t, v, _) in enumerate(WMMA_GATES)])
def test_wmma_form_gates_agree_with_ptxas(text, target, version, want):
    # ptxas 13.0 has no -arch=sm_70 or sm_72 any more; it checks a module's .target sm_70/sm_72 all the same
    arch = "sm_75" if target in ("sm_70", "sm_72") else target
    text = _wmma_gate_module(text, target, version)
    took = gen_cases.run_ptxas(text, arch=arch)["rc"] == 0
    assert took == (not want)
    assert took == (not [d for d in L.lint_ptx(text, "t.ptx") if d.severity == "error"])


def test_wmma_gate_messages_name_the_form_its_minimum_and_the_module():
    def msg(k):
        text, target, version, _ = WMMA_GATES[k]
        return [d.message for d in L.lint_ptx(_wmma_gate_module(text, target, version), "t.ptx")
                if d.severity == "error"]
    assert msg(1) == ["wmma.load.a with .aligned needs PTX ISA 6.3 (module .version is 6.0)"], msg(1)
    assert msg(5) == ["wmma.load.a with .m8n32k16 needs PTX ISA 6.1 (module .version is 6.0)"], msg(5)
    assert msg(8) == ["wmma.load.a with .s8 needs target sm_72 or later (module target is sm_70)"], msg(8)
    assert msg(23) == ["wmma.store.d with .m8n8k128 needs target sm_75 or later (module target is sm_72)"], msg(23)
    assert msg(24) == ["wmma.load.a with .bf16 needs target sm_80 or later (module target is sm_75)",
                       "wmma.load.a with .bf16 needs PTX ISA 7.0 (module .version is 6.5)"], msg(24)
    assert msg(27) == ["wmma.mma with .bf16 needs target sm_80 or later (module target is sm_75)"], msg(27)
    # one diagnostic for .f64, not one more for .m8n8k4 and for each .f64
    assert msg(37) == ["wmma.mma with .f64 needs target sm_80 or later (module target is sm_75)"], msg(37)
    assert msg(39) == ["wmma.mma.and.popc needs target sm_80 or later (module target is sm_75)"], msg(39)
    assert msg(40) == ["wmma.mma.and.popc needs PTX ISA 7.1 (module .version is 7.0)"], msg(40)


_FRACTIONS = ["1.0", "0.5", "0f3F800000", "1e-30", "%f1", "0.0", "1.5", "-0.5", "0f00000000", "0f3F800001", "1"]


def _createpolicy_module(frac):
    return module(f"createpolicy.fractional.L2::evict_first.b64 %rd1, {frac};\nst.global.u64 [%rd0], %rd1;",
                  head_extra="", decls=DECLS)


@pytest.mark.parametrize("frac", _FRACTIONS)
def test_createpolicy_fraction_range(frac):
    # ptxas: "value ... out of range, expected to be in range (0.000000 .. 1.000000]"; an integer literal
    # draws "Arguments mismatch" (PTX-E-TYPE here); a register is taken as it is
    cs = codes(_createpolicy_module(frac))
    want = [] if frac in ("1.0", "0.5", "0f3F800000", "1e-30", "%f1") else \
        ["PTX-E-TYPE"] if frac == "1" else ["PTX-E-OPERANDS"]
    assert cs == want, (frac, cs)


@pytest.mark.ptxas
@pytest.mark.parametrize("frac", _FRACTIONS)
def test_createpolicy_fraction_agrees_with_ptxas(frac):
    text = _createpolicy_module(frac)
    assert (gen_cases.run_ptxas(text)["rc"] == 0) == (codes(text) == []), frac


# prefetch: the tensor-map form is a legality form (sm_90, PTX 8.0, generic / .const / .param address);
# the plain prefetches stay in the core table
_PREFETCHES = {
    "prefetch.tensormap [%rd1];": [], "prefetch.param.tensormap [%rd1];": [],
    "prefetch.const.tensormap [%rd1];": [], "prefetch.local.tensormap [%rd1];": ["PTX-E-MODIFIER"],
    "prefetch.global.L2 [%rd1];": [], "prefetch.L1 [%rd1];": [], "prefetch.global.L2::evict_last [%rd1];": [],
    "prefetch.shared.tensormap [%rd1];": ["PTX-E-MODIFIER"],
}


@pytest.mark.parametrize("line", sorted(_PREFETCHES))
def test_prefetch_forms(line):
    assert codes(module(line)) == _PREFETCHES[line]
    if "tensormap" in line and not _PREFETCHES[line]:
        assert set(codes(module(line, version="7.8"))) == {"PTX-E-VERSION", "PTX-E-DIRECTIVE"}
        assert codes(module(line, target="sm_80")) == ["PTX-E-TARGET"]


@pytest.mark.ptxas
@pytest.mark.parametrize("line", sorted(_PREFETCHES))
def test_prefetch_forms_agree_with_ptxas(line):
    for text in (module(line), module(line, version="7.8", target="sm_80")):
        assert (gen_cases.run_ptxas(text)["rc"] == 0) == (codes(text) == []), (line, text)


def test_every_code_is_documented_and_exercised():
    for code in L.CODES:
        assert f"| {code} |" in L.__doc__
    # the async-protocol codes are exercised by tests/test_asynccheck.py (tests/async/*.ptx)
    exercised = set(EXAMPLES) | {"PTX-W-UNUSED-LABEL", "PTX-W-DIRECTIVE", "PTX-W-MISCOMPILE", "PTX-W-ADVISORY",
                                  "PTX-W-EXTERN", "PTX-W-PRAGMA", "PTX-E-INTERNAL"} \
        | set(ASYNC_CODES)
    assert set(L.CODES) <= exercised


_HINTED_CP_ASYNC = "cp.async.cg.shared.global.L2::cache_hint [%r1], [%rd1], 16, %rd2;"


_SPARSE = ("mma.sp{}.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 {{%f0, %f1, %f2, %f3}}, {{%r0, %r1, %r2, %r3}}, "
           "{{%r4, %r5, %r6, %r7}}, {{%f4, %f5, %f6, %f7}}, %r8, 0;")


def test_plain_mma_sp_draws_ptxas_advisory_as_a_note():
    """ptxas assembles plain mma.sp with an "Advisory" to use .sp::ordered_metadata (tests/test_legality_ptxas.py
    compares every legal form's advisories with ptxas's)."""
    text = module(_SPARSE.format(""), version="8.5")
    (d,) = L.lint_ptx(text, "t.ptx")
    assert (d.code, d.severity, d.loc.line, d.loc.col) == ("PTX-W-ADVISORY", "note", 12, 1)
    assert d.notes[0].startswith("write mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 ")
    assert L.lint_ptx(module(_SPARSE.format("::ordered_metadata"), version="8.5"), "t.ptx") == []
    # under an older .version too, where ptxas still advises it (with the version the other form needs)
    (d,) = L.lint_ptx(module(_SPARSE.format(""), version="7.1", target="sm_80"), "t.ptx")
    assert d.code == "PTX-W-ADVISORY" and "(PTX ISA 8.5)" in d.notes[0]


def _cp_async_module(copy, target="sm_90a"):
    return module(f"createpolicy.fractional.L2::evict_first.b64 %rd2;\n{copy}\ncp.async.wait_all;", target=target)


@pytest.mark.parametrize("copy", [_HINTED_CP_ASYNC, "cp.async.ca.shared.global.L2::cache_hint [%r1], [%rd1], 8, %r2, %rd2;",
                                  "@%p1 cp.async.cg.shared.global.L2::cache_hint.L2::128B [%r1], [%rd1], 16, %rd2;"])
def test_hinted_cp_async_on_sm90_is_a_miscompile_warning(copy):
    """ptxas takes cp.async with .L2::cache_hint for sm_90a, but the kernel traps (tests/test_gpu_miscompile.py)."""
    text = _cp_async_module(copy)
    ds = L.lint_ptx(text, "t.ptx")
    assert [(d.code, d.severity) for d in ds] == [("PTX-W-MISCOMPILE", "warning")]
    line = text.split("\n")[ds[0].loc.line - 1]
    assert line[ds[0].loc.col - 1:].startswith("cp.async"), "points at the opcode"
    assert "illegal instruction" in ds[0].message and "drop .L2::cache_hint" in ds[0].notes[0]
    # the same module for sm_80 (A100) is fine, unless linted for the sm_90 GPU that will JIT it
    assert L.lint_ptx(_cp_async_module(copy, "sm_80"), "t.ptx") == []
    assert [d.code for d in L.lint_ptx(_cp_async_module(copy, "sm_80"), "t.ptx", "sm_90a")] == ["PTX-W-MISCOMPILE"]


@pytest.mark.parametrize("copy", ["cp.async.cg.shared.global [%r1], [%rd1], 16;",
                                  "ld.global.L2::cache_hint.v4.u32 {%r4, %r5, %r6, %r7}, [%rd1], %rd2;",
                                  "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                                  ".L2::cache_hint [%r1], [%rd1, {%r2, %r3}], [%r4], %rd2;"])
def test_other_hinted_copies_draw_no_miscompile_warning(copy):
    assert L.lint_ptx(_cp_async_module(copy), "t.ptx") == []


@pytest.mark.ptxas
def test_ptxas_accepts_the_hinted_cp_async_it_miscompiles():
    # a warning, not an error: ptxas assembles it without a word
    got = gen_cases.run_ptxas(_cp_async_module(_HINTED_CP_ASYNC))
    assert got["rc"] == 0, got


def test_builder_refuses_hinted_cp_async_for_sm90_only():
    import ptxgen as pg
    from ptxgen.errors import LegalityError

    def kernel(target):
        m = pg.Module(target)
        k = m.entry("k")
        return m, k, k.createpolicy("evict_first"), k.mov(0, type=pg.u32), k.mov(0, type=pg.u64)

    m, k, pol, dst, src = kernel("sm_80")
    k.cp_async(dst, src, 16, cache_policy=pol)
    assert "cp.async.cg.shared.global.L2::cache_hint" in m.emit().text
    m, k, pol, dst, src = kernel("sm_90a")
    k.cp_async(dst, src, 16)                                   # no hint: fine
    k.cp_async_bulk_prefetch(src, 128, cache_policy=pol)       # the bulk forms take their policy
    with pytest.raises(LegalityError) as e:
        k.cp_async(dst, src, 16, cache_policy=pol)
    assert e.value.code == "PTX-W-MISCOMPILE" and "illegal instruction" in str(e.value)
    assert ".L2::cache_hint" not in m.emit().text.split("cp.async.bulk.prefetch")[0]


def test_unused_label_is_a_warning():
    ds = L.lint_ptx(module("$L_unused:"), "t.ptx")
    assert [(d.code, d.severity) for d in ds] == [("PTX-W-UNUSED-LABEL", "warning")]


def test_a_label_is_used_only_by_branches_of_its_own_function():
    """Labels are function-scoped: kernel a's branch to $L_x does not use kernel b's $L_x (ptxas takes
    both), so b's is reported, at its own line."""
    text = (".version 8.0\n.target sm_90\n.address_size 64\n\n"
            ".visible .entry a()\n{\n\tbra $L_x;\n$L_x:\n\tret;\n}\n\n"
            ".visible .entry b()\n{\n$L_x:\n\tret;\n}\n")
    ds = L.lint_ptx(text, "t.ptx")
    assert [(d.code, d.loc.line) for d in ds] == [("PTX-W-UNUSED-LABEL", 14)]
    assert not L.lint_ptx(text.replace("{\n$L_x:", "{\n\tbra $L_x;\n$L_x:"), "t.ptx")


def test_oversized_cta_is_a_warning():
    text = module("").replace("{\n", ".maxntid 2048, 1, 1\n{\n", 1)
    ds = L.lint_ptx(text, "t.ptx")
    assert [(d.code, d.severity) for d in ds] == [("PTX-W-DIRECTIVE", "warning")]


def _reqntid_maxnreg(threads, regs, target="sm_90a"):
    return module("", target=target).replace("{\n", f".reqntid {threads}\n.maxnreg {regs}\n{{\n", 1)


def test_maxnreg_above_what_a_reqntid_cta_launches_with_is_a_warning():
    """13 warps put 4 on one of the SM's four 16384-register files: at 130 registers a thread the driver allows
    384 threads (measured on an H200), so .maxnreg 152 lets ptxas make the kernel unlaunchable."""
    text = _reqntid_maxnreg(416, 152)
    ds = L.lint_ptx(text, "t.ptx")
    assert [(d.code, d.severity) for d in ds] == [("PTX-W-DIRECTIVE", "warning")]
    d = ds[0]
    assert text.split("\n")[d.loc.line - 1] == ".maxnreg 152" and d.loc.col == 1 and d.span == len(".maxnreg")
    assert d.message == ("a CTA of 416 threads puts 4 warps on one of the SM's four 16384-register files, so it "
                         "launches only at 128 registers a thread or fewer; .maxnreg 152 lets ptxas use more")
    assert d.notes == ("write .maxnreg 128",)
    # the same CTA as 208 x 2, and with the directives the other way round
    text = module("").replace("{\n", ".maxnreg 136\n.reqntid 208, 2\n{\n", 1)
    assert [(d.code, d.loc.line, d.notes) for d in L.lint_ptx(text, "t.ptx")] == \
        [("PTX-W-DIRECTIVE", 5, ("write .maxnreg 128",))]
    assert "1024 threads puts 8 warps" in L.lint_ptx(_reqntid_maxnreg(1024, 72), "t.ptx")[0].message


@pytest.mark.parametrize("threads, regs", [(416, 128), (384, 168), (512, 128), (1024, 64), (256, 255)])
def test_maxnreg_a_reqntid_cta_launches_with_draws_no_warning(threads, regs):
    assert L.lint_ptx(_reqntid_maxnreg(threads, regs), "t.ptx") == []


def test_maxnreg_without_reqntid_or_before_sm70_draws_no_warning():
    # .maxntid is an upper bound: a smaller block may launch; the rule is known for sm_70 and later only
    assert L.lint_ptx(module("").replace("{\n", ".maxntid 416\n.maxnreg 152\n{\n", 1), "t.ptx") == []
    assert L.lint_ptx(_reqntid_maxnreg(416, 152, target="sm_60"), "t.ptx") == []
    # ... unless linted for the GPU that will run it
    assert [d.code for d in L.lint_ptx(_reqntid_maxnreg(416, 152, target="sm_60"), "t.ptx", "sm_90a")] == \
        ["PTX-W-DIRECTIVE"]


def test_builder_refuses_a_maxnreg_no_reqntid_cta_launches_with():
    """Builder output gets this check where it gets the 1024-thread one: Module.entry refuses the directives
    (tests/test_core_ptxas.py: BUILDER_STRICTER, where ptxas takes them)."""
    from ptxgen.errors import BuildError
    m = pg.Module("sm_90a")
    with pytest.raises(BuildError) as e:
        m.entry("k", reqntid=416, maxnreg=152)
    assert e.value.message == ("a CTA of 416 threads puts 4 warps on one of the SM's four 16384-register files, so "
                               "it launches only at 128 registers a thread or fewer; .maxnreg 152 lets ptxas use "
                               "more")
    assert e.value.notes == ("write maxnreg=128",) and e.value.loc.file == __file__
    with pytest.raises(BuildError, match="a CTA of 416 threads"):
        m.entry("k", reqntid=(208, 2), maxnreg=136)
    for kw in ({"reqntid": 416, "maxnreg": 128}, {"reqntid": 384, "maxnreg": 168}, {"reqntid": 512, "maxnreg": 128},
               {"maxntid": 416, "maxnreg": 152}):
        k = m.entry(f"k{len(m.ir.functions)}", **kw)
        k.ret()
    pg.Module("sm_80").entry("k", reqntid=416, maxnreg=128)
    assert L.lint_module(m.ir) == [] and L.lint_ptx(m.emit().text, "t.ptx") == []


def test_diagnostic_points_at_the_operand_with_a_caret():
    text = module("add.s32 %r1, %r2, %rd3;")
    d = next(d for d in L.lint_ptx(text, "t.ptx") if d.code == "PTX-E-TYPE")
    line = text.split("\n")[d.loc.line - 1]
    assert line[d.loc.col - 1:].startswith("%rd3")
    out = str(d)
    assert out.splitlines()[0] == f"t.ptx:{d.loc.line}:{d.loc.col}: error[PTX-E-TYPE]: " + d.message
    assert out.splitlines()[2].strip() == "^~~~"
    assert any(n.startswith("a .s32 operand needs") for n in d.notes)


# ------------------------------------------------------------------------------------------------ corpus
@pytest.mark.parametrize("path", CORPUS, ids=lambda p: os.path.relpath(p, HERE))
def test_corpus_lints_without_errors(path):
    ds = L.lint_file(path)
    assert [str(d) for d in ds if d.severity == "error"] == []


def test_target_override():
    path = os.path.join(HERE, "ptx", "nvcc", "tensor_core.sm_90a.O3.ptx")
    assert codes(open(path).read(), "sm_90a") == []
    assert "PTX-E-TARGET" in codes(open(path).read(), "sm_80")  # the module is for sm_90a


# -------------------------------------------------------------------------------------------------- CLI
def run_cli(args, stdin=None, capsys=None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", __import__("io").StringIO(stdin))
    rc = cli_main(args)
    out, err = capsys.readouterr()
    return rc, out, err


def test_cli_text_json_stdin_and_exit_codes(tmp_path, capsys, monkeypatch):
    bad = tmp_path / "bad.ptx"
    bad.write_text(module("add.s32 %r1, %r2, %rd3;"))
    good = tmp_path / "good.ptx"
    good.write_text(module("add.s32 %r1, %r2, %r3;"))
    rc, out, _ = run_cli(["lint", str(good)], capsys=capsys)
    assert rc == 0 and out == ""
    rc, out, err = run_cli(["lint", str(bad)], capsys=capsys)
    assert rc == 1 and f"{bad}:" in out and "error[PTX-E-TYPE]" in out and "^~~~" in out and "1 error" in err
    rc, out, _ = run_cli(["lint", "--format", "json", str(bad), str(good)], capsys=capsys)
    data = json.loads(out)
    assert rc == 1 and data[0]["code"] == "PTX-E-TYPE" and data[0]["file"] == str(bad)
    assert set(data[0]) >= {"file", "line", "col", "severity", "code", "message"}
    rc, out, _ = run_cli(["lint", "-"], stdin=bad.read_text(), capsys=capsys, monkeypatch=monkeypatch)
    assert rc == 1 and out.startswith("<stdin>:")
    rc, _, err = run_cli(["lint", str(tmp_path / "missing.ptx")], capsys=capsys)
    assert rc == 2 and "cannot read" in err
    rc, _, err = run_cli(["lint", "--target", "sm_99", str(good)], capsys=capsys)
    assert rc == 2 and "sm_99" in err
    warn = tmp_path / "warn.ptx"
    warn.write_text(module("$L_unused:"))
    assert run_cli(["lint", str(warn)], capsys=capsys)[0] == 0
    assert run_cli(["lint", "--werror", str(warn)], capsys=capsys)[0] == 1
    gz = tmp_path / "bad.ptx.gz"
    gz.write_bytes(gzip.compress(bad.read_bytes()))
    assert run_cli(["lint", str(gz)], capsys=capsys)[0] == 1
    with pytest.raises(SystemExit) as e:
        cli_main(["lint"])
    assert e.value.code == 2


def test_cli_runs_as_a_program(tmp_path):
    bad = tmp_path / "bad.ptx"
    bad.write_text(module("bra $L_nowhere;"))
    r = subprocess.run([sys.executable, "-m", "ptxgen", "lint", str(bad)], capture_output=True, text=True,
                       cwd=os.path.join(HERE, ".."))
    assert r.returncode == 1 and "PTX-E-LABEL" in r.stdout and "Traceback" not in r.stderr


def test_cli_output_into_a_closed_pipe_stops_quietly(tmp_path):
    """`ptxgen lint big.ptx | head`: the reader goes away after one line; no traceback, exit 141 (SIGPIPE's)."""
    bad = tmp_path / "bad.ptx"
    bad.write_text(module("\n".join("addx.s32 %r1, %r2, %r3;" for _ in range(3000))))
    p = subprocess.Popen([sys.executable, "-m", "ptxgen", "lint", str(bad)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, cwd=os.path.join(HERE, ".."))
    assert b"PTX-E-OPCODE" in p.stdout.readline()
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 141 and "Traceback" not in err and "BrokenPipe" not in err, err


# ----------------------------------------------------------------------------------------- builder output
def test_builder_output_lints_clean_through_text_and_ir():
    m = pg.Module("sm_90a")
    k = m.entry("axpy", maxntid=256)
    px, py = k.param_ptr("x", pg.f32), k.param_ptr("y", pg.f32)
    pa, pn = k.param("a", pg.f32), k.param("n", pg.u32)
    i = k.mad(k.ctaid.x, k.ntid.x, k.tid.x, mode="lo")
    k.exit(guard=k.setp("ge", i, k.ld_param(pn)))
    off = k.mul(i, 4, mode="wide")
    x = k.add(k.cvta(k.ld_param(px), "global", to=True), off)
    y = k.add(k.cvta(k.ld_param(py), "global", to=True), off)
    k.st(y, k.fma(k.ld_param(pa), k.ld(x, pg.f32), k.ld(y, pg.f32)))
    k.ret()
    assert L.lint_ptx(m.emit().text, "axpy.ptx") == []
    assert L.lint_module(m.ir) == []


@pytest.mark.parametrize("name", ["tma_tile", "wgmma_tile"])
def test_lint_module_agrees_with_lint_ptx_on_tma_and_wgmma_samples(name):
    """Builder IR holds operands the parser never makes (a TensorRef `[tmap, {c0, c1}]` of a TMA copy);
    lint_module must take them as the tensor operands they are, as lint_ptx does for the emitted text."""
    from _samples import load_sample
    m = load_sample(name).build("sm_90a")
    assert L.lint_ptx(m.emit().text, f"{name}.ptx") == []
    assert L.lint_module(m.ir) == []


def test_lint_module_checks_a_tensor_copy_s_coordinates():
    """The TensorRef operand is checked, not waved through: a 2-D copy with three coordinates is caught."""
    from ptxgen.ops.operands import TensorRef
    m = pg.Module("sm_90a")
    k = m.entry("k")
    tmap = k.param_bytes("tmap", 128, align=64)
    dyn = m.extern_shared("smem", align=128)
    bar = k.add(k.mov(dyn, type=pg.u32), 4096)
    k.mbarrier_init(bar, 1)
    k.fence_mbarrier_init()
    k.bar_sync(0)
    k.cp_async_bulk_tensor(k.mov(dyn, type=pg.u32), tmap, [0, 0], mbarrier=bar)
    k.ret()
    assert L.lint_module(m.ir) == []
    copy = next(st for st in k.fn.body if getattr(st, "opcode", "").startswith("cp.async.bulk.tensor"))
    i = next(j for j, o in enumerate(copy.operands) if isinstance(o, TensorRef))
    ops = list(copy.operands)
    ops[i] = TensorRef(ops[i].base, ops[i].coords + (ops[i].coords[0],))
    copy.operands = tuple(ops)
    assert "PTX-E-OPERANDS" in [d.code for d in L.lint_module(m.ir)]


def test_lint_module_finds_problems_in_ir():
    from ptxgen.ir import Instr, Reg
    m = pg.Module("sm_80")
    k = m.entry("k")
    r = k.reg(pg.u32)
    k.ret()
    stray = Reg("%stray", pg.f32, k.fn)
    k.fn.body.insert(0, Instr("add.u32", (r, r, stray)))
    k.fn.body.insert(0, Instr("wgmma.fence.sync.aligned", ()))
    got = [d.code for d in L.lint_module(m.ir)]
    assert "PTX-E-TYPE" in got and "PTX-E-TARGET" in got


# --------------------------------------------------------------------------------------- legality wiring
def test_tensor_core_forms_go_through_legality():
    bad = module("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, "
                 "{%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f0, %f1, %f2};")
    ds = [d for d in L.lint_ptx(bad, "t.ptx") if d.severity == "error"]
    assert [d.code for d in ds] == ["PTX-E-OPERANDS"] and "3 given" in ds[0].message
    assert bad.split("\n")[ds[0].loc.line - 1][ds[0].loc.col - 1] == "{"  # the operand it names
    assert L.legality.covers("wgmma.fence.sync.aligned") and not L.legality.covers("add.s32")


# ----------------------------------------------------------------------------------------- differential
def _cases():
    with open(os.path.join(HERE, "differential", "cases.json")) as f:
        return json.load(f)["cases"]


# (case id -> why lint and ptxas disagree); every entry is explained in the final report
KNOWN_DISAGREEMENTS = json.load(open(os.path.join(HERE, "differential", "known_disagreements.json")))


def test_lint_agrees_with_recorded_ptxas_verdicts():
    """Lint's verdict (any error?) matches ptxas's recorded one on every case but the known, explained ones.

    By default every case of the hand-written bases, the known disagreements and every third other case
    (the whole set, 2700 cases and 50 s, with PTXGEN_SLOW_TESTS=1)."""
    cases = _cases()
    if not os.environ.get("PTXGEN_SLOW_TESTS"):
        cases = [c for i, c in enumerate(cases) if c["set"] == "dev" or c["id"] in KNOWN_DISAGREEMENTS or i % 3 == 0]
    agree = 0
    wrong = []
    for c in cases:
        text = gen_cases.apply(gen_cases.base_text(c["base"]), c["edits"])
        errs = [d for d in L.lint_ptx(text, c["id"]) if d.severity == "error"]
        if bool(errs) == (c["ptxas"]["rc"] != 0):
            agree += 1
            assert c["id"] not in KNOWN_DISAGREEMENTS, f"{c['id']} now agrees: drop it from the known list"
        elif c["id"] not in KNOWN_DISAGREEMENTS:
            wrong.append((c["id"], c["mutation"], c["what"], c["ptxas"]["first_error"],
                          [str(d).splitlines()[0] for d in errs]))
    assert not wrong, "\n".join(map(str, wrong))
    assert agree >= 0.9 * len(cases)


@pytest.mark.ptxas
def test_recorded_ptxas_verdicts_still_hold():
    ptxas = shutil.which("ptxas")
    assert ptxas
    rng = random.Random(7)
    for c in rng.sample(_cases(), 60):
        text = gen_cases.apply(gen_cases.base_text(c["base"]), c["edits"])
        got = gen_cases.run_ptxas(text)
        assert (got["rc"] != 0) == (c["ptxas"]["rc"] != 0), (c["id"], got, c["ptxas"])


# ------------------------------------------------------------------------------------------------- fuzz
FUZZ_COUNT = int(os.environ.get("PTXGEN_FUZZ_COUNT", "2000"))  # PTXGEN_FUZZ_COUNT=30000 for a long run
FUZZ_SEED = int(os.environ.get("PTXGEN_FUZZ_SEED", "1234"))


def _fuzz_seeds():
    out = []
    for p in CORPUS:
        if ".O3." in p or "hand" in p:
            text = L.read_ptx(p)
            if len(text) < 60000:
                out.append(text)
    out.extend(bases.BASES.values())
    return out


def _mutate(rng: random.Random, text: str) -> str:
    lines = text.split("\n")
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(7)
        i = rng.randrange(len(lines))
        if op == 0:  # delete a line
            del lines[i]
        elif op == 1:  # duplicate a line
            lines.insert(i, lines[i])
        elif op == 2:  # swap two lines
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        else:
            toks = lines[i].replace(",", " , ").replace(";", " ; ").split(" ")
            if not toks:
                continue
            k = rng.randrange(len(toks))
            if op == 3:  # delete a token
                del toks[k]
            elif op == 4:  # duplicate a token
                toks.insert(k, toks[k])
            elif op == 5:  # swap tokens
                m = rng.randrange(len(toks))
                toks[k], toks[m] = toks[m], toks[k]
            else:  # random bytes
                junk = "".join(chr(rng.choice([rng.randrange(32, 127), rng.randrange(0, 32), rng.randrange(128, 0x2fff)]))
                               for _ in range(rng.randint(1, 4)))
                toks[k] = toks[k][:len(toks[k]) // 2] + junk + toks[k][len(toks[k]) // 2:]
            lines[i] = " ".join(toks)
        if not lines:
            lines = [""]
    return "\n".join(lines)


def _cut(rng: random.Random, text: str) -> str:
    """A window of the text around a random function, so that each fuzz input stays small."""
    lines = text.split("\n")
    if len(lines) <= 160:
        return text
    start = rng.randrange(len(lines) - 120)
    head = [l for l in lines[:12] if l.startswith((".version", ".target", ".address_size"))]
    return "\n".join(head + lines[start:start + 120])


def test_fuzz_lint_never_raises():
    rng = random.Random(FUZZ_SEED)
    seeds = _fuzz_seeds()
    tried = 0
    with_errors = 0
    for _ in range(FUZZ_COUNT):
        text = _mutate(rng, _cut(rng, rng.choice(seeds)))
        ds = L.lint_ptx(text, "fuzz.ptx")  # must return, whatever the input
        assert all(isinstance(d, Diagnostic) and d.code in L.CODES for d in ds)
        assert all(d.code != "PTX-E-INTERNAL" for d in ds), [str(d) for d in ds]
        tried += 1
        with_errors += any(d.severity == "error" for d in ds)
    assert tried == FUZZ_COUNT
    assert with_errors > FUZZ_COUNT // 2


def test_version_note_of_a_legality_form_speaks_to_ptx_and_the_builder():
    """A hand-written file below a form's PTX ISA minimum is told which .version to write (and how the
    builder spells it), for a core instruction and a tensor-core/async form alike."""
    for line, need in (("elect.sync %r1|%p1, -1;", "8.0"), ("prefetch.tensormap [%rd1];", "8.0")):
        diags = [d for d in L.lint_ptx(module(line, version="7.8", target="sm_90"), "t.ptx") if d.code == "PTX-E-VERSION"]
        assert len(diags) == 1, (line, diags)
        assert diags[0].notes[0].startswith(f"write .version {need} or later"), diags[0].notes


# constant expressions, as ptxas 13.0 evaluates them: both operands of a binary operator are integers or both
# floating-point ("Constant expression type mismatch", comparisons included); a comparison of two
# floating-point values is an integer; bitwise, logical and shift operators and unary ! and ~ take integers
# only ("Integer constant expression expected"). (the expression, the code lint gives, or None where ptxas
# takes it, in an instruction of the operand type given)
CEXPR_CASES = [
    ("mov.f32 %f1, 1.0+2;", "PTX-E-SYNTAX"),
    ("add.f64 %fd1, %fd2, 2*1.5;", "PTX-E-SYNTAX"),
    ("mov.f32 %f1, (1+2)*3.0;", "PTX-E-SYNTAX"),
    ("mov.f32 %f1, 1.0+2.0*3;", "PTX-E-SYNTAX"),
    ("mov.u32 %r1, 1U<2.0;", "PTX-E-SYNTAX"),
    ("mov.u32 %r1, 1.0==2;", "PTX-E-SYNTAX"),
    ("mov.u32 %r1, 1&&2.0;", "PTX-E-SYNTAX"),
    ("mov.u32 %r1, 1.0|2.0;", "PTX-E-SYNTAX"),
    ("mov.u32 %r1, 1.0^2.0;", "PTX-E-SYNTAX"),
    ("mov.u32 %r1, !1.0;", "PTX-E-SYNTAX"),
    ("mov.u32 %r1, ~(1.5);", "PTX-E-SYNTAX"),
    ("mov.f32 %f1, -(1.5)*2.0;", None),
    ("mov.f32 %f1, 1.0/4.0;", None),
    ("mov.u32 %r1, 1&&2;", None),
    ("mov.u32 %r1, 6|1^3&5;", None),
    ("mov.u32 %r1, 1U||0;", None),
    ("mov.u32 %r1, 1<2;", None),
    ("mov.u32 %r1, 1<<2 >= 3;", None),
    ("mov.u32 %r1, 2!=2==0;", None),
    ("mov.u32 %r1, (1.0<2.5)+1;", None),
    ("add.u32 %r1, %r2, 1.0>=2.0;", None),
    ("mov.f32 %f1, 1&&2;", "PTX-E-TYPE"),
]


@pytest.mark.parametrize("line, code", CEXPR_CASES, ids=[c[0] for c in CEXPR_CASES])
def test_constant_expressions_evaluate_as_ptxas_does(line, code):
    text = module(line)
    assert codes(text) == ([code] if code else []), [str(d) for d in L.lint_ptx(text, "t.ptx")]


@pytest.mark.ptxas
@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas (CUDA toolkit) on PATH")
@pytest.mark.parametrize("line, code", CEXPR_CASES, ids=[c[0] for c in CEXPR_CASES])
def test_constant_expression_cases_agree_with_ptxas(line, code):
    text = module(line)
    got = gen_cases.run_ptxas(text)
    assert (got["rc"] != 0) == (code is not None), got
    if code:
        assert got["error_line"] in {d.loc.line for d in L.lint_ptx(text, "t.ptx") if d.severity == "error"}


def test_a_constant_expression_error_points_at_its_operator_and_says_what_to_write():
    text = module("mov.f32 %f1, 1.5 + (2.0 *\n  3);")
    (d,) = [d for d in L.lint_ptx(text, "t.ptx") if d.severity == "error"]
    assert "type mismatch" in d.message and "2.0" in d.notes[0], str(d)
    # ptxas 13.0 names the line of the last token it has read when it takes `2.0 * 3` as a whole: the `3`'s
    # (nothing after a `*`'s right operand can extend it); the error is there, the operator being on another line
    assert text.split("\n")[d.loc.line - 1][d.loc.col - 1:].startswith("3);"), str(d)
    text = module("mov.u32 %r1, 1 &&  2.0;")
    (d,) = [d for d in L.lint_ptx(text, "t.ptx") if d.severity == "error"]
    assert text.split("\n")[d.loc.line - 1][d.loc.col - 1:].startswith("&&  2.0"), str(d)
    text = module("mov.u32 %r1, 3.0 | 1.0;")
    (d,) = [d for d in L.lint_ptx(text, "t.ptx") if d.severity == "error"]
    assert "Integer constant expression expected" in d.message and d.notes, str(d)
    assert text.split("\n")[d.loc.line - 1][d.loc.col - 1:].startswith("| 1.0"), str(d)


# .align in declarations, as ptxas 13.0 takes it: before the vector size and type, or before the state
# space; after the type a syntax error. A kernel parameter takes .ptr and .align after its type (not an .align
# before the .ptr); a .func parameter takes none there ("Illegal placement of kernel parameter attribute").
# (a module, the code lint gives, or None where ptxas takes it)
_AHDR = ".version 8.7\n.target sm_90a\n.address_size 64\n"
ALIGN_CASES = [
    (".visible .entry k() { .reg .f32 .align 8 %v; ret; }", "PTX-E-SYNTAX"),
    (".visible .entry k() { .reg .align 8 .f32 %v; ret; }", None),
    (".visible .entry k() { .local .v2 .f32 .align 16 x[4]; ret; }", "PTX-E-SYNTAX"),
    (".visible .entry k() { .shared .b8 .align 8 x[16]; ret; }", "PTX-E-SYNTAX"),
    (".visible .entry k() { .param .b8 .align 8 x[16]; ret; }", "PTX-E-SYNTAX"),
    (".global .f32 .align 8 g;", "PTX-E-SYNTAX"),
    (".const .align 8 .f32 g[2];", None),
    (".align 8 .global .f32 g;", None),
    (".visible .entry k() { .align 16 .shared .v2 .f32 x[4]; ret; }", None),
    (".visible .entry k(.param .b8 .align 8 p[8]) { ret; }", None),
    (".visible .entry k(.param .u64 .ptr .global .align 8 p) { ret; }", None),
    (".visible .entry k(.param .u64 .align 8 .ptr p) { ret; }", "PTX-E-SYNTAX"),
    (".func f(.param .b8 .align 8 p[8]) { ret; }", "PTX-E-SYNTAX"),
    (".func f(.reg .b32 .align 4 r) { ret; }", "PTX-E-SYNTAX"),
    (".func (.param .u64 .ptr .align 8 r) f() { ret; }", "PTX-E-SYNTAX"),
    (".func f(.param .align 8 .b8 p[8]) { ret; }", None),
    (".visible .entry k() { P: .callprototype _ (.param .b8 .align 8 _[8]); ret; }", None),
]


@pytest.mark.parametrize("text, code", ALIGN_CASES, ids=[c[0] for c in ALIGN_CASES])
def test_align_in_declarations_lints_as_ptxas_takes_it(text, code):
    assert codes(_AHDR + text) == ([code] if code else []), [str(d) for d in L.lint_ptx(_AHDR + text, "t.ptx")]


@pytest.mark.ptxas
@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas (CUDA toolkit) on PATH")
@pytest.mark.parametrize("text, code", ALIGN_CASES, ids=[c[0] for c in ALIGN_CASES])
def test_align_cases_agree_with_ptxas(text, code):
    assert (gen_cases.run_ptxas(_AHDR + text)["rc"] != 0) == (code is not None)


def test_an_align_after_the_type_points_at_the_align_and_the_declaration_still_counts():
    text = module(".reg .f32 .align 8 %v;\nmov.f32 %v, 0f3F800000;")
    ds = [d for d in L.lint_ptx(text, "t.ptx") if d.severity == "error"]
    (d,) = ds  # %v is declared all the same: no "undeclared" error follows
    line = text.split("\n")[d.loc.line - 1]
    assert line[d.loc.col - 1:].startswith(".align 8 %v") and "`.reg .align 8 .f32 ...`" in d.notes[0], str(d)
    text = _AHDR + ".func f(.param .u64 .ptr .global p)\n{\nret;\n}\n"
    (d,) = [d for d in L.lint_ptx(text, "t.ptx") if d.severity == "error"]
    assert text.split("\n")[d.loc.line - 1][d.loc.col - 1:].startswith(".ptr .global p"), str(d)


# call shapes, as ptxas 13.0 takes them: an indirect call goes through a 32- or 64-bit integer register and
# names, last, a .callprototype or .calltargets label declared before it; a direct call names none.
# (the statements before `ret;` in a kernel that has %rd1, %r1, %f1, %h1, .param pa and pr, and a function g;
# the code lint gives, or None where ptxas takes it)
_CALL_HEAD = (".version 8.7\n.target sm_90a\n.address_size 64\n"
              ".func (.param .b32 r) g(.param .b32 x)\n{\nret;\n}\n.visible .entry k()\n{\n"
              ".reg .b64 %rd<3>;\n.reg .b32 %r<2>;\n.reg .f32 %f<2>;\n.reg .b16 %h<2>;\n.param .b32 pa;\n"
              ".param .b32 pr;\n")
_PROTO = "P: .callprototype (.param .b32 _) _ (.param .b32 _);\n"
CALL_SHAPE_CASES = [
    (_PROTO + "call (pr), %rd1, (pa);", "PTX-E-CALL"),
    (_PROTO + "call (pr), %rd1, (pa), P;", None),
    (_PROTO + "call (pr), %r1, (pa), P;", None),
    (_PROTO + "call (pr), g, (pa), P;", "PTX-E-CALL"),
    ("T: .calltargets g;\ncall (pr), g, (pa), T;", "PTX-E-CALL"),
    ("call (pr), g, (pa);", None),
    ("L:\ncall (pr), %rd1, (pa), L;", "PTX-E-CALL"),
    (_PROTO + "call (pr), %f1, (pa), P;", "PTX-E-CALL"),
    (_PROTO + "call (pr), %h1, (pa), P;", "PTX-E-CALL"),
    ("call (pr), %rd1, (pa), P;\n" + _PROTO, "PTX-E-CALL"),
    ("call (pr), %rd1, (pa), T;\nT: .calltargets g;", "PTX-E-CALL"),
    ("T: .calltargets g;\ncall (pr), %rd1, (pa), T;", None),
    (_PROTO + "call (pr), %rd1, (pa), %rd2;", "PTX-E-CALL"),
    (_PROTO + "call (pr), pa, (pa), P;", "PTX-E-CALL"),
]


def _call_text(body):
    return _CALL_HEAD + body + "\nret;\n}\n"


@pytest.mark.parametrize("body, code", CALL_SHAPE_CASES, ids=[c[0].replace("\n", " ") for c in CALL_SHAPE_CASES])
def test_call_shapes_lint_as_ptxas_takes_them(body, code):
    text = _call_text(body)
    assert codes(text) == ([code] if code else []), [str(d) for d in L.lint_ptx(text, "t.ptx")]


@pytest.mark.ptxas
@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas (CUDA toolkit) on PATH")
@pytest.mark.parametrize("body, code", CALL_SHAPE_CASES, ids=[c[0].replace("\n", " ") for c in CALL_SHAPE_CASES])
def test_call_shape_cases_agree_with_ptxas(body, code):
    text = _call_text(body)
    got = gen_cases.run_ptxas(text)
    assert (got["rc"] != 0) == (code is not None), got
    if code:
        assert got["error_line"] in {d.loc.line for d in L.lint_ptx(text, "t.ptx") if d.severity == "error"}, got


def test_call_shape_errors_point_at_the_operand():
    for body, at in [(_PROTO + "call (pr), %rd1, (pa);", "%rd1"), (_PROTO + "call (pr), g, (pa), P;", "P;"),
                     ("L:\ncall (pr), %rd1, (pa), L;", "L;"), ("call (pr), %rd1, (pa), P;\n" + _PROTO, "P;"),
                     (_PROTO + "call (pr), %f1, (pa), P;", "%f1")]:
        text = _call_text(body)
        (d,) = [d for d in L.lint_ptx(text, "t.ptx") if d.severity == "error"]
        assert text.split("\n")[d.loc.line - 1][d.loc.col - 1:].startswith(at) and d.notes, (body, str(d))
