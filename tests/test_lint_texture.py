"""The texture and surface instructions (tex, tld4, txq, istypep, suld, sust, sured, suq) in ptxgen.legality,
linted and checked against ptxas 13.0.

Each case is one instruction in a kernel that declares a .texref, a .surfref and (under
texmode_independent) a .samplerref, with the verdict `ptxgen lint` gives it and, for a rejected one, the
code of the first error. The `ptxas` test assembles every case and asserts ptxas agrees.

What probing found (ptxas 13.0, sm_90a): .v2 goes with .f16x2 only and .v4 with the other result types;
.cube/.acube need .f32 coordinates, .2dms/.a2dms .s32 ones and no .level/.grad; a texture, sampler or
surface is a reference variable or a 64-bit integer register (istypep takes only the register); unified
mode takes a sampler operand too (any reference), independent mode needs a .samplerref or a register;
the coordinates may be a longer vector of 2 or 4 (never 3), or one register without braces; the array
index of an array geometry is a 32-bit integer; .level's LOD has the coordinates' type; the depth compare
needs .f32 coordinates and .3d takes none (nor, with .base/.level/.grad, an offset); `d|p` needs PTX ISA
7.1; suld/sust need a clamp mode and have no .v4.b64; a surface element goes in any register at least
as wide; sured.b is .add of .u32/.s32/.u64, .min/.max of .u32/.s32, .and/.or of .b32.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

import pytest

from ptxgen.lint import lint_ptx

_HEAD = """.version 8.0
.target sm_90a{mode}
.address_size 64
.global .texref tex_a;
{samp}.global .surfref surf_a;
.visible .entry k()
{{
.reg .f32 %f<20>; .reg .b32 %r<20>; .reg .b64 %rd<8>; .reg .pred %p<3>; .reg .u32 %u<9>; .reg .s32 %s<9>;
.reg .f16 %h<9>; .reg .f16x2 %hh<9>; .reg .b16 %rs<9>; .reg .u64 %ud<9>; .reg .f64 %fd<9>; .reg .b8 %c<3>;
{line}
ret;
}}
"""
LINE = 10  # the case's line in the kernel (11 with the .samplerref)

D = "{%f4, %f5, %f6, %f7}"
OK = None
# (instruction, texmode_independent, None when lint accepts it, else the code of its first error)
CASES = [
    # tex: modifiers
    (f"tex.2d.v4.f32.f32 {D}, [tex_a, {{%f1, %f2}}];", False, OK),
    (f"tex.2d.v4.f32 {D}, [tex_a, {{%f1, %f2}}];", False, "PTX-E-TYPE"),            # no coordinate type
    (f"tex.foo.2d.v4.f32.f32 {D}, [tex_a, {{%f1, %f2}}];", False, "PTX-E-MODIFIER"),
    (f"tex.2d.f32.f32 {D}, [tex_a, {{%f1, %f2}}];", False, "PTX-E-TYPE"),            # no .v4
    ("tex.2d.v2.f32.f32 {%f4, %f5}, [tex_a, {%f1, %f2}];", False, "PTX-E-TYPE"),
    ("tex.2d.v2.f16x2.f32 {%hh4, %hh5}, [tex_a, {%f1, %f2}];", False, OK),
    ("tex.2d.v4.f16x2.f32 {%r4, %r5, %r6, %r7}, [tex_a, {%f1, %f2}];", False, "PTX-E-TYPE"),
    ("tex.2d.v4.f16.f32 {%h4, %h5, %h6, %h7}, [tex_a, {%f1, %f2}];", False, OK),
    (f"tex.cube.v4.f32.s32 {D}, [tex_a, {{%r1, %r2, %r3, %r4}}];", False, "PTX-E-TYPE"),
    (f"tex.2dms.v4.f32.s32 {D}, [tex_a, {{%r1, %r2, %r3, %r4}}];", False, OK),
    (f"tex.2dms.v4.f32.f32 {D}, [tex_a, {{%r1, %f2, %f3, %f4}}];", False, "PTX-E-TYPE"),
    (f"tex.level.2dms.v4.f32.s32 {D}, [tex_a, {{%r1, %r2, %r3, %r4}}], %r5;", False, "PTX-E-MODIFIER"),
    (f"tex.base.2d.v4.f32.f32 {D}, [tex_a, {{%f1, %f2}}];", False, OK),
    (f"tex.level.2d.v4.f32.f32 {D}, [tex_a, {{%f1, %f2}}], %f3;", False, OK),
    (f"tex.level.2d.v4.f32.s32 {D}, [tex_a, {{%r1, %r2}}], %f3;", False, "PTX-E-TYPE"),
    (f"tex.grad.2d.v4.f32.f32 {D}, [tex_a, {{%f1, %f2}}], {{%f8, %f9}}, {{%f10, %f11}};", False, OK),
    (f"tex.grad.2d.v4.f32.f32 {D}, [tex_a, {{%f1, %f2}}], {{%f8}}, {{%f9}};", False, "PTX-E-OPERANDS"),
    # tex: operands
    (f"tex.2d.v4.f32.f32 {D}, [tex_a, {{%f1, %f2}}], [tex_a, {{%f1, %f2}}];", False, "PTX-E-OPERANDS"),
    (f"tex.level.2d.v4.f32.f32 {D}, [tex_a, {{%f1, %f2}}];", False, "PTX-E-OPERANDS"),   # no LOD
    (f"tex.2d.v4.f32.f32 {D}, [%rd1, {{%f1, %f2}}];", False, OK),
    (f"tex.2d.v4.f32.f32 {D}, [%ud1, {{%f1, %f2}}];", False, OK),
    (f"tex.2d.v4.f32.f32 {D}, [%r1, {{%f1, %f2}}];", False, "PTX-E-OPERANDS"),
    (f"tex.2d.v4.f32.f32 {D}, [surf_a, {{%f1, %f2}}];", False, "PTX-E-OPERANDS"),
    (f"tex.2d.v4.f32.f32 {D}, [tex_a, tex_a, {{%f1, %f2}}];", False, OK),            # unified: a sampler too
    (f"tex.2d.v4.f32.f32 {D}, [tex_a, samp_a, {{%f1, %f2}}];", True, OK),
    (f"tex.2d.v4.f32.f32 {D}, [%rd1, %rd2, {{%f1, %f2}}];", True, OK),
    (f"tex.2d.v4.f32.f32 {D}, [tex_a, {{%f1, %f2}}];", True, "PTX-E-OPERANDS"),       # independent: no sampler
    (f"tex.2d.v4.f32.f32 {D}, [tex_a, tex_a, {{%f1, %f2}}];", True, "PTX-E-OPERANDS"),
    (f"tex.2d.v4.f32.f32 {D}|%p1, [tex_a, {{%f1, %f2}}];", False, OK),
    (f"tex.2d.v4.f32.f32 {D}|%p1, [tex_a, {{%f1, %f2}}], {{%r1, %r2}}, %f3;", False, OK),
    ("tex.2d.v4.s32.f32 {%f4, %f5, %f6, %f7}, [tex_a, {%f1, %f2}];", False, "PTX-E-TYPE"),
    (f"tex.2d.v4.f32.f32 {D}, [tex_a, {{%r1, %r2}}];", False, OK),                    # .b32 coordinates
    (f"tex.2d.v4.f32.s32 {D}, [tex_a, {{%f1, %f2}}];", False, "PTX-E-TYPE"),
    (f"tex.3d.v4.f32.f32 {D}, [tex_a, {{%f1, %f2, %f3}}];", False, "PTX-E-OPERANDS"),
    (f"tex.2d.v4.f32.f32 {D}, [tex_a, {{%f1, %f2, %f3, %f8}}];", False, OK),          # a longer vector
    (f"tex.1d.v4.f32.s32 {D}, [tex_a, %r1];", False, OK),                            # no braces
    (f"tex.a1d.v4.f32.f32 {D}, [tex_a, {{%r1, %f1}}];", False, OK),
    (f"tex.a1d.v4.f32.f32 {D}, [tex_a, {{%f2, %f1}}];", False, "PTX-E-TYPE"),         # a float array index
    (f"tex.2d.v4.f32.f32 {D}, [tex_a, {{%f1, %f2}}], {{%r1, %r2}};", False, OK),      # offset
    (f"tex.2d.v4.f32.f32 {D}, [tex_a, {{%f1, %f2}}], {{%r1, %r2, %r3}};", False, "PTX-E-OPERANDS"),
    (f"tex.2d.v4.f32.f32 {D}, [tex_a, {{%f1, %f2}}], {{%r1, %r2}}, %f3;", False, OK),  # depth compare
    (f"tex.2d.v4.f32.f32 {D}, [tex_a, {{%f1, %f2}}], {{%r1, %r2}}, %f3, %f3;", False, "PTX-E-OPERANDS"),
    # tld4
    (f"tld4.r.2d.v4.f32.f32 {D}, [tex_a, {{%f1, %f2}}];", False, OK),
    (f"tld4.x.2d.v4.f32.f32 {D}, [tex_a, {{%f1, %f2}}];", False, "PTX-E-MODIFIER"),
    (f"tld4.r.1d.v4.f32.f32 {D}, [tex_a, {{%f1}}];", False, "PTX-E-MODIFIER"),
    (f"tld4.r.2d.v4.f32.s32 {D}, [tex_a, {{%r1, %r2}}];", False, "PTX-E-TYPE"),
    (f"tld4.r.2d.v4.f32.f32 {D}, [tex_a, samp_a, {{%f1, %f2}}];", True, OK),
    # txq, suq, istypep
    ("txq.width.b32 %r1, [tex_a];", False, OK),
    ("txq.width.b32 %r1, [%rd1];", False, OK),
    ("txq.width.b32 %r1, [surf_a];", False, "PTX-E-OPERANDS"),
    ("txq.width.b32 %rd1, [tex_a];", False, "PTX-E-TYPE"),
    ("txq.foo.b32 %r1, [tex_a];", False, "PTX-E-MODIFIER"),
    ("txq.level.width.b32 %r1, [tex_a], %r2;", False, OK),
    ("txq.level.num_samples.b32 %r1, [tex_a], %r2;", False, "PTX-E-MODIFIER"),
    ("txq.filter_mode.b32 %r1, [samp_a];", True, OK),
    ("txq.filter_mode.b32 %r1, [tex_a];", True, "PTX-E-OPERANDS"),
    ("suq.width.b32 %r1, [surf_a];", False, OK),
    ("suq.width.b32 %r1, [tex_a];", False, "PTX-E-OPERANDS"),
    ("suq.num_samples.b32 %r1, [surf_a];", False, "PTX-E-MODIFIER"),
    ("istypep.texref %p1, %rd1;", False, OK),
    ("istypep.texref %p1, tex_a;", False, "PTX-E-OPERANDS"),
    ("istypep.foo %p1, %rd1;", False, "PTX-E-TYPE"),
    # suld, sust, sured
    ("suld.b.2d.b32.trap %r1, [surf_a, {%r2, %r3}];", False, OK),
    ("suld.b.2d.b32.trap {%r1}, [%rd1, {%r2, %r3}];", False, OK),
    ("suld.b.2d.b32 %r1, [surf_a, {%r2, %r3}];", False, "PTX-E-MODIFIER"),           # no clamp mode
    ("suld.b.2d.v4.b64.trap {%rd1, %rd2, %rd3, %rd4}, [surf_a, {%r2, %r3}];", False, "PTX-E-TYPE"),
    ("suld.b.2d.wb.b32.trap %r1, [surf_a, {%r2, %r3}];", False, "PTX-E-MODIFIER"),   # a store cache op
    ("suld.b.2d.b32.trap %r1, [tex_a, {%r2, %r3}];", False, "PTX-E-OPERANDS"),
    ("suld.b.2d.b32.trap %r1, [surf_a, {%f2, %f3}];", False, "PTX-E-TYPE"),
    ("suld.b.2d.b16.trap %r1, [surf_a, {%r2, %r3}];", False, OK),                      # a wider register
    ("suld.b.2d.b32.trap %rs1, [surf_a, {%r2, %r3}];", False, "PTX-E-TYPE"),
    ("suld.p.2d.b32.trap %r1, [surf_a, {%r2, %r3}];", False, "PTX-E-MODIFIER"),
    ("sust.b.2d.b32.trap [surf_a, {%r2, %r3}], %r4;", False, OK),
    ("sust.b.2d.ca.b32.trap [surf_a, {%r2, %r3}], %r4;", False, "PTX-E-MODIFIER"),   # a load cache op
    ("sust.b.2d.v2.b32.trap [surf_a, {%r2, %r3}], {%r4};", False, "PTX-E-OPERANDS"),
    ("sust.p.2d.v4.b32.trap [surf_a, {%r2, %r3}], {%r4, %r5, %r6, %r7};", False, OK),
    ("sust.p.2d.b16.trap [surf_a, {%r2, %r3}], %rs1;", False, "PTX-E-TYPE"),
    ("sured.b.add.2d.u32.trap [surf_a, {%r2, %r3}], %r4;", False, OK),
    ("sured.b.and.2d.u32.trap [surf_a, {%r2, %r3}], %r4;", False, "PTX-E-TYPE"),
    ("sured.b.add.a1d.u32.trap [surf_a, {%r2, %r3}], %r4;", False, "PTX-E-MODIFIER"),
    ("sured.b.add.2d.u32.trap [surf_a, {%r2, %r3}], %f4;", False, "PTX-E-TYPE"),
    ("sured.p.or.2d.b32.zero [surf_a, {%r2, %r3}], %r4;", False, OK),
]


def _kernel(line: str, independent: bool) -> str:
    return _HEAD.format(mode=", texmode_independent" if independent else "",
                        samp=".global .samplerref samp_a;\n" if independent else "", line=line)


def _ids():
    return [f"{i:02d}" for i in range(len(CASES))]


@pytest.mark.parametrize("line,independent,code", CASES, ids=_ids())
def test_lint_verdict(line, independent, code):
    errs = [d for d in lint_ptx(_kernel(line, independent)) if d.severity == "error"]
    if code is None:
        assert not errs, [str(d) for d in errs]
    else:
        assert errs, f"lint accepts {line}"
        assert errs[0].code == code, [str(d) for d in errs]
        assert errs[0].loc.line == LINE + independent and errs[0].loc.col >= 1


def test_messages_name_what_is_legal():
    d = [x for x in lint_ptx(_kernel(f"tex.2d.f32.f32 {D}, [tex_a, {{%f1, %f2}}];", False))
         if x.severity == "error"][0]
    assert "v4" in d.message + " ".join(d.notes)
    d = [x for x in lint_ptx(_kernel(f"tex.2d.v4.f32.f32 {D}, [tex_a, {{%f1, %f2}}];", True))
         if x.severity == "error"][0]
    assert "sampler" in d.message and d.loc.col == D.__len__() + len("tex.2d.v4.f32.f32 ") + 3


def test_vector_result_with_predicate_parses():
    errs = lint_ptx(_kernel(f"tex.2d.v4.f32.f32 {D}|%p1, [tex_a, {{%f1, %f2}}];", False))
    assert not errs, [str(x) for x in errs]
    bad = [x for x in lint_ptx(_kernel(f"tex.2d.v4.f32.f32 {D}|%p9, [tex_a, {{%f1, %f2}}];", False))
           if x.severity == "error"]
    assert bad and bad[0].code == "PTX-E-UNDECLARED"


@pytest.mark.ptxas
@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas (CUDA toolkit) on PATH")
def test_ptxas_agrees_on_every_case():
    wrong = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, (line, independent, code) in enumerate(CASES):
            path = os.path.join(tmp, f"c{i}.ptx")
            with open(path, "w") as fh:
                fh.write(_kernel(line, independent))
            p = subprocess.run(["ptxas", "-arch=sm_90a", path, "-o", os.devnull], capture_output=True, text=True)
            if (p.returncode == 0) != (code is None):
                wrong.append(f"{line} (independent={independent}): lint {'accepts' if code is None else code}, "
                             f"ptxas {'accepts' if p.returncode == 0 else p.stdout + p.stderr}")
    assert not wrong, "\n".join(wrong)
