"""ld, ldu and st of vectors (isa_core.vector_access, which the builder and lint share) against ptxas 13.0: every
op and state space, every element type, .v2/.v4/.v8, at sm_80, sm_90a and sm_100a.

What ptxas 13.0 showed:
- .v8 of 8- and 16-bit integer elements (.b8 .u8 .s8 .b16 .u16 .s16), which the PTX ISA does not define, is taken
  from sm_75 and PTX ISA 6.3 on: st in .global, .shared, .local and a generic address, ld of 8-bit elements in
  those spaces (and ld.global.nc). lint refused them all below sm_100 as "ld with .v8 needs target sm_100".
- ptxas crashes (SIGSEGV) on ld.v8 of 16-bit elements in every space, at every target, and on ld.v8 of any of
  these in .param and .const in some runs and not others (st.param too). lint now says so.
- ldu reads 128 bits at most: ldu.v4 of 64-bit elements is "Vector type too large, exceeds 128 bit limit" and
  ldu.v8 of anything "Illegal vector size: 8", also at sm_100a, where lint took them.
- .v8 of 64-bit elements (512 bits) is refused at sm_100a as well ("Vector type too large"), where lint took it.
"""
from __future__ import annotations

import os
import sys

import pytest

from ptxgen import isa_core as C
from ptxgen import lint as L

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _ptxas_lines import ptxas_crashes, ptxas_rejected  # noqa: E402
from test_lint_vector_probes import needs_ptxas  # noqa: E402

TARGETS = ("sm_80", "sm_90a", "sm_100a")
TYPES = ("b8", "u8", "s8", "b16", "u16", "s16", "f16", "bf16", "b32", "u32", "s32", "f32", "b64", "u64", "f64",
         "f16x2", "bf16x2")
_REG = {"b8": "h", "u8": "h", "s8": "h", "b16": "h", "u16": "h", "s16": "h", "f16": "h", "bf16": "h", "b32": "r",
        "u32": "r", "s32": "r", "f32": "f", "b64": "rd", "u64": "rd", "f64": "fd", "f16x2": "r", "bf16x2": "r"}
OPS = (("ld", "global"), ("ld", "shared"), ("ld", "shared::cta"), ("ld", "local"), ("ld", "param"), ("ld", "const"),
       ("ld", ""), ("ld", "global.nc"), ("ldu", "global"), ("ldu", ""), ("st", "global"), ("st", "shared"),
       ("st", "local"), ("st", "param"), ("st", ""))


def line(op, space, ty, vec):
    r = _REG[ty]
    regs = "{" + ", ".join(f"%{r}{i}" for i in range(1, vec + 1)) + "}"
    opc = f"{op}{'.' + space if space else ''}.v{vec}.{ty}"
    return f"{opc} {regs}, [%rd9];" if op != "st" else f"{opc} [%rd9], {regs};"


def module(lines, target):
    body = "\n".join("\t" + ln for ln in lines)
    return (f".version 9.0\n.target {target}\n.address_size 64\n\n.visible .entry k(.param .u64 p)\n{{\n"
            "\t.reg .b16 %h<9>;\n\t.reg .b32 %r<9>;\n\t.reg .f32 %f<9>;\n\t.reg .b64 %rd<10>;\n\t.reg .f64 %fd<9>;\n"
            f"\tld.param.u64 %rd9, [p];\n{body}\n\tret;\n}}\n")


def lint_errors(lines, target):
    return [d for d in L.lint_ptx(module(lines, target), "t.ptx") if d.severity == "error"]


ALL = [(t, line(op, sp, ty, v)) for t in TARGETS for op, sp in OPS for ty in TYPES for v in (2, 4, 8)]


# ------------------------------------------------------------------------------------------ no ptxas needed
@pytest.mark.parametrize("target,text,want", [
    # .v8 of 8- and 16-bit elements that ptxas takes below sm_100
    ("sm_90a", "st.global.v8.b16 [%rd9], {%h1, %h2, %h3, %h4, %h5, %h6, %h7, %h8};", None),
    ("sm_80", "st.shared.v8.u8 [%rd9], {%h1, %h2, %h3, %h4, %h5, %h6, %h7, %h8};", None),
    ("sm_90a", "ld.global.nc.v8.s8 {%h1, %h2, %h3, %h4, %h5, %h6, %h7, %h8}, [%rd9];", None),
    ("sm_100a", "ld.local.v8.b8 {%h1, %h2, %h3, %h4, %h5, %h6, %h7, %h8}, [%rd9];", None),
    # ... and those it crashes on
    ("sm_90a", "ld.global.v8.b16 {%h1, %h2, %h3, %h4, %h5, %h6, %h7, %h8}, [%rd9];",
     "ptxas 13.0 crashes (segmentation fault) on ld.v8 of 16-bit elements"),
    ("sm_100a", "ld.v8.u16 {%h1, %h2, %h3, %h4, %h5, %h6, %h7, %h8}, [%rd9];",
     "ptxas 13.0 crashes (segmentation fault) on ld.v8 of 16-bit elements"),
    ("sm_90a", "ld.param.v8.u8 {%h1, %h2, %h3, %h4, %h5, %h6, %h7, %h8}, [%rd9];",
     "ptxas 13.0 crashes (segmentation fault) on ld.v8 of 8-bit elements in .param"),
    ("sm_80", "st.param.v8.b16 [%rd9], {%h1, %h2, %h3, %h4, %h5, %h6, %h7, %h8};", None),
    ("sm_90a", "st.param.v8.b16 [%rd9], {%h1, %h2, %h3, %h4, %h5, %h6, %h7, %h8};",     # any st.param through a
     "ptxas 13.0 crashes (segmentation fault) on st.param through a register (%rd9) in a kernel at sm_90a"),  # register
    # ldu: 128 bits at most, at every target
    ("sm_100a", "ldu.global.v4.b64 {%rd1, %rd2, %rd3, %rd4}, [%rd9];",
     "ldu.v4 of 64-bit elements is 256 bits; ldu reads at most 128"),
    ("sm_100a", "ldu.global.v8.b32 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd9];",
     "ldu.v8 of 32-bit elements is 256 bits; ldu reads at most 128 (ptxas: \"Illegal vector size: 8\")"),
    ("sm_90a", "ldu.global.v2.b64 {%rd1, %rd2}, [%rd9];", None),
    # 512 bits
    ("sm_100a", "st.global.v8.f64 [%rd9], {%fd1, %fd2, %fd3, %fd4, %fd5, %fd6, %fd7, %fd8};",
     "st.v8 of 64-bit elements is 512 bits; a load or store is at most 256 bits"),
    # 256 bits: sm_100, of .global or a generic address
    ("sm_100a", "ld.global.v8.b32 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd9];", None),
    ("sm_90a", "ld.global.v8.b32 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd9];",
     "ld.v8 of .b32 (a 256-bit access) needs target sm_100 or later (module target is sm_90a)"),
    ("sm_100a", "st.shared.v4.b64 [%rd9], {%rd1, %rd2, %rd3, %rd4};", "st.shared of 256 bits"),
])
def test_lint_verdicts_and_messages(target, text, want):
    errs = lint_errors([text], target)
    if want is None:
        assert errs == [], [str(d) for d in errs]
    else:
        assert len(errs) == 1 and want in errs[0].message, [str(d) for d in errs]
        # the instruction's line; the opcode after its tab, or the address for an operand's error
        col = 2 + text.index("[") if errs[0].code == "PTX-E-OPERANDS" else 2
        assert (errs[0].loc.line, errs[0].loc.col) == (13, col)
        if errs[0].code != "PTX-E-TARGET":
            assert errs[0].notes, "each says what to write instead"


def test_a_crash_is_not_reported_over_an_error_ptxas_gives_first():
    # ptxas stops at the L2 priority's error before the code generation that would crash
    (d,) = lint_errors(["ld.global.L2::evict_last.v8.b16 {%h1, %h2, %h3, %h4, %h5, %h6, %h7, %h8}, [%rd9];"],
                       "sm_90a")
    assert "requires '.v8.b32/.v4.b64' type" in d.message


def test_the_builder_and_lint_share_the_rule():
    import ptxgen as pg
    from ptxgen.errors import LegalityError
    m = pg.Module("sm_100a", version="8.8")
    k = m.entry("k")
    p = k.param_ptr("p", pg.u32)
    a = k.cvta(k.ld_param(p), "global", to=True)
    k.ld(a, pg.u32, vec=8)                                  # 256 bits of .global at sm_100a
    for call, want in ((lambda: k.ld(a, pg.b16, vec=8), "ld.v8.b16 is not in the PTX ISA"),
                       (lambda: k.st(a, [k.reg(pg.u16)] * 8, type=pg.u8), "st.v8.u8 is not in the PTX ISA"),
                       (lambda: k.st(a, [k.reg(pg.f64)] * 8), C.vector_access("st", "global", 64, 8)[0][0][1]),
                       (lambda: k.ld(a, pg.b32, vec=8, space="shared"),
                        C.vector_access("ld", "shared", 32, 8)[0][0][1])):
        with pytest.raises(LegalityError) as ei:
            call()
        assert want in ei.value.message


# ------------------------------------------------------------------------------------------ against ptxas
@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("target", TARGETS)
def test_every_line_agrees_with_ptxas(target):
    """lint's verdict on each line is ptxas's: the lines lint says crash ptxas, one file each; the others in one
    file, whose rejected lines must be lint's errors and nothing else."""
    lines = [ln for t, ln in ALL if t == target]
    crash, rest = [], []
    for ln in lines:
        errs = lint_errors([ln], target)
        (crash if any("crashes" in d.message for d in errs) else rest).append((ln, bool(errs)))
    assert len(crash) >= 30                            # 16-bit loads in 7 spaces, 8- and 16-bit .param and .const
    text = module([ln for ln, _ in rest], target)
    first = 13
    rejected = {rest[i - first][0] for i in ptxas_rejected(text, target) if first <= i < first + len(rest)}
    wrong = [(ln, "lint rejects" if bad else "lint takes") for ln, bad in rest if bad != (ln in rejected)]
    assert not wrong, wrong[:10]
    # .param and .const crash in some runs only
    flaky = [ln for ln, _ in crash if ".param." in ln or ".const." in ln]
    for ln, _ in crash:
        assert ptxas_crashes(module([ln], target), target, 16 if ln in flaky else 1), ln


# ------------------------------------------------------------------------ st.param through a register
def _param_store_module(target, body, func):
    if func:
        return (f".version 9.0\n.target {target}\n.address_size 64\n\n.visible .func f(.param .b64 p)\n{{\n"
                f"\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n\t{body}\n\tret;\n}}\n")
    return (f".version 9.0\n.target {target}\n.address_size 64\n\n.visible .entry k(.param .u64 p)\n{{\n"
            f"\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n\t{body}\n\tret;\n}}\n")


PARAM_STORES = [(t, body, func) for t in ("sm_80", "sm_89", "sm_90", "sm_90a", "sm_100a") for func in (False, True)
                for body in ("mov.u64 %rd1, p; st.param.b32 [%rd1], %r1;",
                             "cvta.param.u64 %rd1, p; st.param.b32 [%rd1+4], %r1;",
                             "ld.param.u64 %rd1, [p]; st.param.v2.b32 [%rd1], {%r1, %r2};",
                             "mov.u64 %rd1, 0; st.param.b32 [%rd1], %r1;",
                             "{ .param .b32 arg; st.param.b32 [arg], %r1; }")]


def _param_store_errors(target, body, func):
    return [d for d in L.lint_ptx(_param_store_module(target, body, func), "t.ptx") if d.severity == "error"]


def test_st_param_through_a_register_in_a_kernel():
    for target, body, func in PARAM_STORES:
        errs = _param_store_errors(target, body, func)
        crash = not func and target not in ("sm_80", "sm_89") and "[arg]" not in body
        assert [d.code for d in errs] == (["PTX-E-OPERANDS"] if crash else []), (target, body, func, errs)
        if crash:
            (d,) = errs
            assert d.message == (f"ptxas 13.0 crashes (segmentation fault) on st.param through a register (%rd1) in a "
                                 f"kernel at {target}")
            assert (d.loc.line, d.loc.col) == (9, 1 + body.index("[%rd1") + 1)   # at the address, after the tab


@pytest.mark.ptxas
@needs_ptxas
def test_st_param_through_a_register_against_ptxas():
    for target, body, func in PARAM_STORES:
        text = _param_store_module(target, body, func)
        lint_says = bool(_param_store_errors(target, body, func))
        assert ptxas_crashes(text, target, 1) == lint_says, (target, body, func)
        if not lint_says:
            assert not ptxas_rejected(text, target), (target, body, func)
