"""wgmma.mma_async.sp (PTX ISA 9.0, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions:
wgmma.mma_async.sp"), linted and built as ptxas 13.0 takes it: every line below runs through ptxas (the tests marked
ptxas), through lint and, where the builder can write it, through `FunctionBuilder.wgmma_mma_async_sp`; the three
verdicts must agree.

    wgmma.mma_async.sp.sync.aligned.shape{.satfinite}.dtype.atype.btype
        d, a-desc|{a}, b-desc, sp-meta, sp-sel, scale-d{, imm-scale-a, imm-scale-b}{, imm-trans-a}{, imm-trans-b};

What ptxas 13.0 showed:
- the forms: K is twice the dense form's, M is 64 and N is the dense form's: .f16 at .m64nNk32 with an .f16 or
  .f32 D, .bf16 at .m64nNk32 and .tf32 at .m64nNk16 with an .f32 D, .e4m3/.e5m2 (each of A and B) at .m64nNk64
  with an .f16 or .f32 D, N every multiple of 8 from 8 to 256; .s8/.u8 (each of A and B, mixed signedness too) at
  .m64nNk64 with an .s32 D, .satfinite or not, N 8, 16, 24 and every multiple of 16 from 32 to 256. No .b1 form
  ("Illegal modifier '.sp' for instruction 'wgmma.mma_async'"), no .sp::ordered_metadata, .satfinite on the
  integer forms only; K 128 and 512 are no shapes at all ("Unknown modifier '.m64n64k128'").
- targets and versions: sm_90a only ("Instruction 'Sparse wgmma.mma_async with floating point types' not supported
  on .target 'sm_90'", and so for sm_100a, sm_100f, sm_103a, sm_110a, sm_120a, sm_121a); PTX ISA 8.2 ("Feature
  'Sparse WGMMA with floating point types' requires PTX ISA .version 8.2 or later", and so with FP8 and integer
  types), 8.4 with mixed signedness ("Sparse WGMMA with mixed integer types").
- the modifiers go in any order after `wgmma.mma_async` (.sp too) but for the types; .sync is required (.aligned
  is not); .sync and .satfinite may be given twice, .aligned and .sp may not ("Multiple sparsity modifiers").
- operands: those of the dense form at the same N with sp-meta and sp-sel after b-desc: 10 (descriptor A) or 9
  (register A, no imm-trans-a) with .f16/.bf16 inputs, 8 with .tf32 and .e4m3/.e5m2 (no transposes), 6 with
  .s8/.u8 (no scales either). The fragments are the dense form's: D of N/2 .f32/.s32 or N/4 .f16x2 registers
  (.b32 too; .u32 for .s32), A in registers 4 of .b32 or .f16x2 (any 32-bit register with .s8/.u8); the
  descriptors a 64-bit integer register or any integer literal.
- sp-meta: a .b32, .u32, .s32, .f32, .f16x2 or .pred register, the bits of a 0f literal, or a vector of 1 to 128 of
  these (ptxas crashes on 129 to 255, and takes 256 and longer again: lint refuses those); no integer literal
  (nor a vector of literals with one among them), no 16- or 64-bit register, no 0d or decimal literal.
- sp-sel: an integer constant, checked in the literal's low 32 bits (4294967297 reads as 1): 0 or 1 with .f16,
  .bf16 and .tf32 inputs, 0 with .e4m3/.e5m2 and .s8/.u8 ("unexpected value '1', expected to be 0").
  scale-d (a .pred register, 0 or 1), imm-scale-a/b (-1 or 1) and imm-trans-a/b (0 or 1) are the dense form's,
  checked in all 64 bits.
"""
from __future__ import annotations

import os
import re
import shutil
import sys
from typing import Dict, List, Optional, Sequence, Tuple

import pytest

import ptxgen as pg
from ptxgen import legality as LG
from ptxgen import lint as L
from ptxgen.errors import BuildError
from ptxgen.ops.wgmma import wgmma_opcode
from ptxgen.types import get_type

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _ptxas_lines import kernel, ptxas_rejected, reg_decls  # noqa: E402
import _three_way as three_way  # noqa: E402

needs_ptxas = pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas (CUDA toolkit) on PATH")

REG_TYPES = ("pred", "b16", "u16", "f16", "b32", "u32", "s32", "f32", "f16x2", "b64", "u64", "s64", "f64")
NREGS = 130
SP = "wgmma.mma_async.sp.sync.aligned"


def module(lines: Sequence[str], target: str, version: str) -> str:
    """A kernel with `lines` in its body, after registers %<type>_<0..129> of each type."""
    return kernel(lines, target, version, reg_decls(*((t, t + "_", NREGS) for t in REG_TYPES)))


FIRST = 6 + len(REG_TYPES)          # the line of the first body line


def vec(t: str, n: int, off: int = 0) -> str:
    return "{" + ", ".join(f"%{t}_{off + i}" for i in range(n)) + "}"


# ------------------------------------------------------------------------------------------------ spellings
_TYPES = ("f16", "f32", "s32", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8", "b1")
_ACC_REG = {"f16": "f16x2", "f32": "f32", "s32": "s32"}
# the immediates after scale-d that the PTX ISA gives each input type (descriptor A; register A has no imm-trans-a)
_TAIL = {"f16": ("1", "1", "0", "0"), "bf16": ("1", "1", "0", "0"), "tf32": ("1", "1"), "e4m3": ("1", "1"),
         "e5m2": ("1", "1")}


def kdim(opcode: str) -> int:
    """K of a spelling's shape."""
    return next(int(m.group(1)) for t in opcode.split(".") for m in [re.match(r"m\d+n\d+k(\d+)$", t)] if m)


def fields(opcode: str) -> Tuple[int, str, str]:
    """(N, D type, A type) of a spelling, whatever its order or legality."""
    toks = opcode.split(".")
    n = next((int(m.group(1)) for t in toks for m in [re.match(r"m\d+n(\d+)k\d+$", t)] if m), 64)
    types = [t for t in toks if t in _TYPES] + ["f32", "f16"]
    return n, types[0], types[1]


def line(opcode: str, *, reg_a: bool = False, meta: str = "%b32_0", sel: str = "0", scale: str = "1",
         tail: Optional[Sequence[str]] = None, dcount: Optional[int] = None, dreg: Optional[str] = None,
         a: Optional[str] = None) -> str:
    """An instruction line of `opcode` with the operands the PTX ISA gives its types (or those given)."""
    n, d, at = fields(opcode)
    count = dcount if dcount is not None else max(n // 4 if d == "f16" else n // 2, 1)
    if tail is None:
        tail = _TAIL.get(at, ())
        if reg_a and len(tail) == 4:
            tail = tail[:2] + tail[3:]
    a_op = (a or vec("b32", 4, 120)) if reg_a else "%u64_0"
    ops = [vec(dreg or _ACC_REG.get(d, "f32"), count), a_op, "%u64_1", meta, sel, scale, *tail]
    return f"{opcode} {', '.join(ops)};"


def split(text: str) -> Tuple[str, List[str]]:
    opcode, ops = text[:-1].split(" ", 1)
    return opcode, [p.strip() for p in re.findall(r"\{[^}]*\}|[^,{}]+", ops) if p.strip()]


LEGAL = [f.opcode for f in LG.forms() if f.rule.startswith("wgmma_sp_")]
# one form of each input family (the N of every family's set)
REPS = [f"{SP}.m64n64k32.f16.f16.f16", f"{SP}.m64n64k32.f32.f16.f16", f"{SP}.m64n64k32.f32.bf16.bf16",
        f"{SP}.m64n64k16.f32.tf32.tf32", f"{SP}.m64n64k64.f32.e4m3.e5m2", f"{SP}.m64n64k64.f16.e5m2.e5m2",
        f"{SP}.m64n64k64.s32.s8.s8", f"{SP}.m64n64k64.satfinite.s32.u8.s8"]
N_SAMPLE = (8, 24, 48, 136, 200, 256)
PAIRS = (("f16", "f16"), ("bf16", "bf16"), ("tf32", "tf32"), ("e4m3", "e4m3"), ("e5m2", "e4m3"), ("s8", "s8"),
         ("u8", "s8"), ("b1", "b1"), ("f16", "bf16"))


def legal_lines() -> List[str]:
    """A sample of the legal spellings (every type, D type, .satfinite, with and without .aligned, N_SAMPLE), with A
    from a descriptor and from registers."""
    out = []
    for op in LEGAL:
        if fields(op)[0] in N_SAMPLE and (".aligned" in op or fields(op)[0] == 8):
            out += [line(op), line(op, reg_a=True)]
    return out


def spelling_lines() -> List[str]:
    """Every type pair with every D type, K from 8 to 256 (and .satfinite), at N 64, and N off the legal sets."""
    out = []
    for a, b in PAIRS:
        bit = ".and.popc" if a == "b1" else ""
        for d in ("f16", "f32", "s32"):
            for k in (8, 16, 32, 64, 128, 256):
                for sat in ("", ".satfinite"):
                    out.append(line(f"{SP}.m64n64k{k}{sat}.{d}.{a}.{b}{bit}"))
    for op in REPS:
        k = kdim(op)
        for n in (4, 12, 40, 72, 264, 512):
            out.append(line(op.replace(".m64n64k", f".m64n{n}k")))
        out += [line(op.replace(".m64n64", ".m128n64")), line(op.replace(".m64n64", ".m32n64"))]
        out.append(line(op.replace(f"k{k}.", f"k{k // 2}.")))       # the dense K
    return out


def _near(op: str) -> List[str]:
    """Near misses and other orders of one spelling."""
    toks = op.split(".")
    rest = ".".join(toks[5:])
    return [f"wgmma.mma_async.sync.aligned.sp.{rest}", f"wgmma.mma_async.sync.aligned.{rest}.sp",
            f"wgmma.sp.mma_async.sync.aligned.{rest}", f"wgmma.mma_async.sp.sync.{rest}",
            f"wgmma.mma_async.sp.aligned.{rest}", f"wgmma.mma_async.sp.{rest}", f"wgmma.mma_async.sp.aligned.sync.{rest}",
            f"wgmma.mma_async.sp.sp.sync.aligned.{rest}", f"wgmma.mma_async.sp::ordered_metadata.sync.aligned.{rest}",
            f"wgmma.mma_async.sp.sync.sync.aligned.{rest}", f"wgmma.mma_async.sp.sync.aligned.aligned.{rest}",
            op + ".and.popc", op + ".relu", op.replace(".m64", ".satfinite.satfinite.m64"),
            ".".join(toks[:-3] + toks[-3:][::-1])]


def near_lines() -> List[str]:
    return [line(x) for op in (REPS[1], REPS[6]) for x in _near(op)]


META = ("%b32_5", "%u32_5", "%s32_5", "%f32_5", "%f16x2_5", "%pred_5", "%b16_5", "%u16_5", "%f16_5", "%b64_5",
        "%u64_5", "%f64_5", "0", "0x12345678", "0f3F800000", "0d3FF0000000000000", "1.5", "{%b32_5}", vec("b32", 3, 5),
        vec("b32", 8, 5), vec("b32", 128, 0), "{%pred_5, %pred_6}", "{%b32_5, %u32_6}", "{%u32_5, %f32_6}",
        "{%b32_5, 1}", "{1}", "{0f3F800000, 1}", "{%b32_5, %b64_6}", "{%b16_5}")
SEL = ("0", "1", "2", "3", "-1", "4294967296", "4294967297", "4294967295", "18446744073709551616", "1+1", "0x1",
       "%b32_6", "%u32_6", "0f3F800000")


def operand_lines() -> List[str]:
    """On each of REPS, with A from a descriptor and from registers: the metadata, the selector, scale-d and the
    immediates, every 32-bit register type in D and A, the register counts, and an operand fewer or more (the
    transposes where the input type has none)."""
    out = []
    for op in REPS:
        for reg_a in (False, True):
            base = line(op, reg_a=reg_a)
            opcode, parts = split(base)
            out += [base]
            out += [line(op, reg_a=reg_a, meta=m) for m in META]
            out += [line(op, reg_a=reg_a, sel=s) for s in SEL]
            out += [line(op, reg_a=reg_a, scale=s) for s in ("0", "2", "-1", "%pred_7", "%b32_7")]
            for j in range(6, len(parts)):
                for v in ("-1", "0", "1", "2"):
                    out.append(f"{opcode} {', '.join(parts[:j] + [v] + parts[j + 1:])};")
            out += [f"{opcode} {', '.join(parts[:-1])};", f"{opcode} {', '.join(parts + ['0'])};",
                    f"{opcode} {', '.join(parts + ['0', '0'])};"]
            n = fields(op)[0]
            count = n // 4 if fields(op)[1] == "f16" else n // 2
            out += [line(op, reg_a=reg_a, dcount=count + dn, dreg="b32") for dn in (-1, 1)]
            out += [line(op, reg_a=reg_a, dreg=t) for t in ("b32", "u32", "s32", "f32", "f16x2", "b64")]
            for desc in ("%b64_9", "%s64_9", "%f64_9", "%b32_9", "7"):
                out.append(f"{opcode} {', '.join(parts[:2] + [desc] + parts[3:])};")
                if not reg_a:
                    out.append(f"{opcode} {', '.join(parts[:1] + [desc] + parts[2:])};")
            if reg_a:
                out += [line(op, reg_a=True, a=vec(t, 4, 120)) for t in ("b32", "u32", "s32", "f32", "f16x2", "b64")]
                out += [line(op, reg_a=True, a=vec("b32", c, 120)) for c in (2, 3, 5, 8)]
    return out


# (target, version) -> lines: every line at sm_90a and PTX ISA 8.5, and each of REPS (and a mixed-signedness form)
# at the versions around its minimum and at targets without the instruction
def cases() -> Dict[Tuple[str, str], List[str]]:
    out = {("sm_90a", "8.5"): legal_lines() + spelling_lines() + near_lines() + operand_lines()}
    reps = REPS + [f"{SP}.m64n64k64.s32.u8.s8", f"{SP}.m64n8k64.satfinite.s32.s8.u8"]
    for target, version in (("sm_90a", "8.0"), ("sm_90a", "8.1"), ("sm_90a", "8.2"), ("sm_90a", "8.3"),
                            ("sm_90a", "8.4"), ("sm_90", "8.5"), ("sm_100a", "8.8"), ("sm_120a", "8.8")):
        out[(target, version)] = [line(op) for op in reps] + [line(op, reg_a=True) for op in reps]
    return out


# ---------------------------------------------------------------------------------------------- the verdicts
def lint_verdicts(lines: Sequence[str], target: str, version: str) -> List[Optional[str]]:
    """Per line, lint's first error (code and message), or None where lint takes it."""
    return three_way.lint_first_errors(module(lines, target, version), FIRST, len(lines))


def ptxas_verdicts(lines: Sequence[str], target: str, version: str) -> List[Optional[str]]:
    """Per line, ptxas's first error, or None where it assembles (one batch; rejected lines are blanked and the text
    assembled again until it assembles)."""
    bad = ptxas_rejected(module(lines, target, version), target)
    return [bad.get(FIRST + i) for i in range(len(lines))]


# the builder's keywords of the immediates after scale-d
_IMM_NAMES = {"imm-scale-a": "imm_scale_a", "imm-scale-b": "imm_scale_b", "imm-trans-a": "trans_a",
              "imm-trans-b": "trans_b"}


def _int(text: str) -> Optional[int]:
    try:
        return int(text, 0)
    except ValueError:
        return None


def builder_verdict(text: str, target: str, version: str) -> Tuple[bool, Optional[str]]:
    """(the builder can write the line, its error or None): wgmma_mma_async_sp with the line's fields and operands.
    It writes the PTX ISA's order of the modifiers and every one of them, the descriptors as registers, sp-meta as
    a register or an integer, sp-sel as an integer, and the immediates after scale-d that the form has."""
    opcode, parts = split(text)
    toks = opcode.split(".")
    shape = next((t for t in toks if re.match(r"m\d+n\d+k\d+$", t)), None)
    types = [t for t in toks if t in _TYPES]
    if shape is None or len(types) != 3 or "b1" in types or len(parts) < 6:
        return False, None
    d, at, bt = types
    sat = "satfinite" in toks
    if wgmma_opcode(shape, dtype=d, atype=at, btype=bt, satfinite=sat, sparse=True) != opcode:
        return False, None
    meta, sel, scale, tail = parts[3], _int(parts[4]), parts[5], parts[6:]
    if sel is None or not -(1 << 63) <= sel < 1 << 64 or not (meta.startswith("%") or _int(meta) is not None):
        return False, None
    if not parts[2].startswith("%") or not (parts[1].startswith(("%", "{"))) or \
            not (scale.startswith("%") or _int(scale) is not None) or any(_int(x) is None for x in tail):
        return False, None
    kw = {}
    f = LG.parse(opcode)
    if f is not None:
        sig = LG.signatures(opcode)[1 if parts[1].startswith("{") else 0]
        names = [_IMM_NAMES[s.name] for s in sig.slots[6:]]
        if len(names) != len(tail):
            return False, None
        kw = {nm: int(v, 0) for nm, v in zip(names, tail)}
    elif tail:
        return False, None
    m = pg.Module(target, version=version)
    k = m.entry("b")
    regs: Dict[str, object] = {}

    def reg(name):
        t, i = name.lstrip("%").rsplit("_", 1)
        if name not in regs:
            regs[name] = k.reg(get_type(t), name=f"{t}_{i}")
        return regs[name]

    def vec_of(p):
        return [reg(x.strip()) for x in p.strip("{}").split(",")]
    try:
        k.wgmma_mma_async_sp(shape, vec_of(parts[0]), vec_of(parts[1]) if parts[1].startswith("{") else reg(parts[1]),
                             reg(parts[2]), reg(meta) if meta.startswith("%") else int(meta, 0), sel, dtype=d,
                             atype=at, btype=bt, satfinite=sat,
                             scale_d=reg(scale) if scale.startswith("%") else int(scale, 0), **kw)
    except BuildError as ex:
        return True, f"{ex.code}: {ex.message}"
    return True, None


@pytest.fixture(scope="module")
def verdicts():
    return three_way.collect(cases(), ptxas_verdicts, lint_verdicts, builder_verdict)


def _short(text: str) -> str:
    opcode, parts = split(text)
    return f"{opcode} {{{parts[0].count(',') + 1} regs}}, {', '.join(parts[1:])}"


@pytest.mark.ptxas
@needs_ptxas
def test_lint_agrees_with_ptxas(verdicts):
    bad = three_way.lint_misses(verdicts, _short)
    assert not bad, f"{len(bad)} of {len(verdicts)} lines:\n" + "\n".join(bad[:40])
    # the sample holds legal and illegal lines of every kind
    taken = sum(1 for *_, p, _li, _b in verdicts if p is None)
    assert 300 < taken < len(verdicts) - 300


@pytest.mark.ptxas
@needs_ptxas
def test_builder_agrees_with_ptxas(verdicts):
    bad = three_way.builder_misses(verdicts, _short)
    assert not bad, f"{len(bad)} lines:\n" + "\n".join(bad[:40])
    assert sum(1 for *_, b in verdicts if b[0]) > 0.5 * len(verdicts)


@pytest.mark.ptxas
@needs_ptxas
def test_every_legal_family_is_taken(verdicts):
    """Each sparse form rule has lines ptxas takes, and ptxas takes no spelling the grammar lacks."""
    taken = {split(text)[0] for t, v, text, p, *_ in verdicts if p is None and t == "sm_90a"}
    rules = {LG.parse(op).rule for op in taken if LG.parse(op) is not None}
    assert rules == {r for r in LG.FORMS if r.startswith("wgmma_sp_")}
    spelled = {split(x)[0] for x in spelling_lines()}
    assert taken & spelled <= set(LEGAL)


# the line that lint once refused (".bf16 is written twice"), in a kernel of its own
REPORTED = """.version 8.5
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 p)
{
  .reg .f32 %f<65>;
  .reg .b64 %rd<4>;
  .reg .b32 %r<4>;
  mov.b64 %rd1, 0;
  mov.b64 %rd2, 0;
  mov.b32 %r1, 0;
  wgmma.fence.sync.aligned;
  wgmma.mma_async.sp.sync.aligned.m64n64k32.f32.bf16.bf16 {%f1,%f2,%f3,%f4,%f5,%f6,%f7,%f8,%f9,%f10,%f11,%f12,%f13,\
%f14,%f15,%f16,%f17,%f18,%f19,%f20,%f21,%f22,%f23,%f24,%f25,%f26,%f27,%f28,%f29,%f30,%f31,%f32}, %rd1, %rd2, %r1, 0, \
1, 1, 1, 0, 0;
  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned 0;
  ret;
}
"""


def test_the_reported_kernel_lints_clean():
    assert [(d.code, d.message) for d in L.lint_ptx(REPORTED)] == []
    # a spelling with a modifier ptxgen.legality does not model is left to ptxas, its three types not "written twice"
    text = REPORTED.replace(".f32.bf16.bf16 ", ".f32.bf16.bf16.cta_group::1 ")
    assert LG.covers("wgmma.mma_async.sp.sync.aligned.m64n64k32.f32.bf16.bf16.cta_group::1") is False
    assert not [d for d in L.lint_ptx(text) if "twice" in d.message]
    bad = REPORTED.replace("m64n64k32", "m64n64k16")
    assert [(d.code, d.loc.line) for d in L.lint_ptx(bad)] == [("PTX-E-SHAPE", 13)]


@pytest.mark.ptxas
@needs_ptxas
def test_the_reported_kernel_assembles():
    assert ptxas_rejected(REPORTED, "sm_90a") == {}
    assert list(ptxas_rejected(REPORTED.replace("m64n64k32", "m64n64k16"), "sm_90a")) == [13]


# ----------------------------------------------------------------------------------- without ptxas
def test_the_grammar_has_the_forms_ptxas_takes():
    """The counts of the docstring's forms, their fragments and their operand lists, from the legality table."""
    by_rule: Dict[str, int] = {}
    for op in LEGAL:
        by_rule[LG.parse(op).rule] = by_rule.get(LG.parse(op).rule, 0) + 1
    # N values (32 or 18) x D types x type pairs x .satfinite, with and without .aligned
    assert by_rule == {"wgmma_sp_f16": 32 * 2 * 2, "wgmma_sp_bf16": 32 * 2, "wgmma_sp_tf32": 32 * 2,
                       "wgmma_sp_fp8": 32 * 2 * 4 * 2, "wgmma_sp_int": 18 * 2 * 2 * 2,
                       "wgmma_sp_int_mixed": 18 * 2 * 2 * 2}
    ks = {(LG.parse(op).fields["atype"], kdim(op)) for op in LEGAL}
    assert ks == {(".f16", 32), (".bf16", 32), (".tf32", 16), (".e4m3", 64), (".e5m2", 64), (".s8", 64), (".u8", 64)}
    for op in REPS:
        n, d, at = fields(op)
        regs = LG.fragment_regs(op)
        assert regs["d"][0] == (n // 4 if d == "f16" else n // 2) and regs["a"][0] == 4
        sizes = [len(s.slots) for s in LG.signatures(op)]
        assert sizes == ({"f16": [10, 9], "bf16": [10, 9]}.get(at) or ([6, 6] if at in ("s8", "u8") else [8, 8]))


def test_lint_messages():
    """What lint says of a few of the lines above, where it says it."""
    lines = [line(f"{SP}.m64n64k16.f32.bf16.bf16"), line(REPS[6], sel="1"), line(REPS[2], meta="0"),
             line(REPS[3], tail=("1", "1", "0", "0")), line(f"{SP}.m64n64k256.s32.b1.b1.and.popc")]
    text = module(lines, "sm_90a", "8.5")
    got = {d.loc.line - FIRST: d for d in L.lint_ptx(text, "t.ptx") if d.severity == "error"}
    assert (got[0].code, got[0].message) == ("PTX-E-SHAPE", "K=16 is not legal for .bf16 wgmma.mma_async.sp; K must "
                                                            "be 32")
    assert got[0].notes[-1] == f"write {SP}.m64n64k32.f32.bf16.bf16"
    assert (got[1].code, got[1].message, got[1].notes) == (
        "PTX-E-OPERANDS", ".s8/.u8 wgmma.mma_async.sp: operand 5 (sp-sel) must be 0, not 1", ("write 0",))
    assert (got[2].code, got[2].message) == (
        "PTX-E-OPERANDS", ".bf16 wgmma.mma_async.sp: operand 4 (sp-meta) is an integer literal; the sparsity metadata "
                          "is a 32-bit register (or its bits as a 0f literal)")
    assert got[3].code == "PTX-E-OPERANDS" and got[3].message.startswith(
        ".tf32 wgmma.mma_async.sp takes 8 (d, a-desc, b-desc, sp-meta, sp-sel, scale-d, imm-scale-a, imm-scale-b) "
        "with A in shared memory (a descriptor) or 8 (d, a, b-desc, sp-meta, sp-sel, scale-d, imm-scale-a, "
        "imm-scale-b) with A in registers; 10 operands given")
    assert (got[4].code, got[4].message, got[4].notes) == (
        "PTX-E-MODIFIER", ".sp is not allowed in .b1 wgmma", (f"write {SP[:15]}.sync.aligned.m64n64k256.s32.b1.b1"
                                                              ".and.popc",))
    for version, want in (("8.1", "8.2"), ("8.3", None)):
        diags = [d for d in L.lint_ptx(module([line(REPS[0]), line(f"{SP}.m64n8k64.s32.u8.s8")], "sm_90a", version))
                 if d.severity == "error"]
        assert [(d.code, d.message) for d in diags][:1] == (
            [("PTX-E-VERSION", f".f16 wgmma.mma_async.sp needs PTX ISA {want} (module .version is {version})")]
            if want else [("PTX-E-VERSION", ".s8/.u8 wgmma.mma_async.sp with mixed signedness needs PTX ISA 8.4 "
                                            "(module .version is 8.3)")])


if __name__ == "__main__":     # counts and disagreements: python3 tests/test_lint_wgmma_sp.py
    rows = three_way.collect(cases(), ptxas_verdicts, lint_verdicts, builder_verdict)
    print(len(rows), "lines;", sum(1 for r in rows if r[3] is None), "taken by ptxas;",
          sum(1 for r in rows if r[5][0]), "written by the builder")
    for t, v, text, p, li, b in rows:
        if (p is None) != (li is None) or (b[0] and (p is None) != (b[1] is None)):
            print(t, v, _short(text), "| ptxas:", p, "| lint:", li, "| builder:", b)
