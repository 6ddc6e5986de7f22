"""mma.sync and mma.sp::ordered_metadata with a .kind (PTX ISA 9.0, "Warp Level Matrix Multiply-Accumulate
Instructions: mma" and "mma.sp", .kind::f8f6f4 and "Block scaling for mma.sync"), linted and built as ptxas 13.0
takes them: every line below runs through ptxas (the tests marked ptxas), through lint and, where the builder can
write it, through `FunctionBuilder.mma_sync` / `mma_sp`; the three verdicts must agree.

    mma.sync.aligned.shape.row.col.kind::f8f6f4.dtype.atype.btype.ctype  d, a, b, c;
    mma.sync.aligned.shape.row.col.kind.block_scale{.scale_vec_size}.f32.atype.btype.f32.stype
        d, a, b, c, scale-a-data, {byte-id-a, thread-id-a}, scale-b-data, {byte-id-b, thread-id-b};
    mma.sp::ordered_metadata.sync.aligned.shape.row.col.kind... d, a, b, c, e, f{, the four scale operands};

What ptxas 13.0 showed:
- the forms (.row.col only, no .satfinite, D and C of one type): .kind::f8f6f4 with .e4m3/.e5m2 inputs (each of A
  and B) at .m16n8k16 and .m16n8k32, D/C .f16 or .f32; with an .e3m2, .e2m3 or .e2m1 input (the other any of the
  five) at .m16n8k32 only ("Illegal matrix shape '.m16n8k16'"), D/C .f16 or .f32; .kind::mxf8f6f4.block_scale
  (the five types, each of A and B) at .m16n8k32 with .scale_vec::1X or none, .f32 D/C and .ue8m0;
  .kind::mxf4.block_scale (.e2m1 only) at .m16n8k64 with .scale_vec::2X or none and .ue8m0;
  .kind::mxf4nvf4.block_scale (.e2m1) at .m16n8k64 with .scale_vec::2X and .ue8m0 or ::4X and .ue4m3 (".scale_vec_size
  modifier required"). With .e4m3/.e5m2 inputs the other three kinds are taken without .block_scale too, as
  .kind::f8f6f4 (`.kind::mxf4.f32.e4m3.e5m2.f32`; an FP6/FP4 input there is "Illegal modifier '.kind::mxf4'"). No
  other kind (.kind::f16, ::tf32, ::i8 are refused), no .kind on the other types, .block_scale and a scale type only
  with the block-scaled kinds. The sparse forms: .sp::ordered_metadata only ("Illegal modifier '.sp'"), K twice the
  dense one (.m16n8k64, and .m16n8k128 for .kind::mxf4/::mxf4nvf4), the same types but .e4m3/.e5m2 inputs at
  .m16n8k64 only. 288 spellings.
- the words: the modifiers after `mma` in any order but for the layouts and types, the scale type the fifth type
  (`.ue8m0.f32.e4m3...` is "Unexpected instruction types"); one .kind, one .block_scale, one .scale_vec ("Multiple
  .kind modifiers specified"); .sync may be given twice.
- targets and versions: .kind::f8f6f4 with .e4m3/.e5m2 inputs at the sm_100f, sm_110f and sm_120f families (sm_100a
  and sm_100f, sm_103a/f, sm_110a/f, sm_120a/f, sm_121a/f; not sm_120 nor sm_90a: "Feature '.kind::f8f6f4' not
  supported on .target 'sm_90a'"), PTX ISA 8.6, 8.7 at .m16n8k16 or with an .f16 accumulator (and the sparse .f16
  accumulator at the sm_120f family only); an FP6/FP4 input or a block scale at the sm_120f family (sm_120a/f,
  sm_121a/f), PTX ISA 8.7 ("Instruction 'mma with block scale' not supported on .target 'sm_100a'"); the sparse
  .kind::mxf4 and .kind::mxf4nvf4 at sm_120a and sm_121a only ("Instruction 'Sparse mma with block scale' not
  supported on .target 'sm_120f'"); .kind::mxf4nvf4 without a block scale from PTX ISA 8.7, and the sparse
  .kind::mxf4/::mxf4nvf4 without one at the 'a' targets only ("Feature '.kind::mxf4 with .sp modifier' not supported
  on .target 'sm_100f'").
- fragments: each A and B element a byte with .kind::f8f6f4 and .kind::mxf8f6f4 (FP6 and FP4 too: A 4 and B 2
  registers at .m16n8k32), two .e2m1 a byte with .kind::mxf4/::mxf4nvf4 (A 4, B 2 at .m16n8k64); the sparse A half of
  the dense one at the same shape (4 registers, B 4). D and C as mma.sync's (.f32 or .b32; .f16x2 or .b32 for .f16).
  A and B of .kind::f8f6f4 take .b32, .u32, .s32, .f32, .f16x2 and .pred registers (no .pred with .e4m3/.e5m2 inputs
  below sm_120: "Arguments mismatch for instruction 'mov'"), those of the block-scaled kinds .b32 only. With
  .e4m3/.e5m2 inputs below sm_120 ptxas adds the accumulator with an add of its own, so D and C take only registers
  declared as their own fragment types and no literal but a 0f one with .f32 ("Arguments mismatch for instruction
  'add'"); and at .m16n8k16, B of 1, 2, 4 or 8 registers. The kind-less fp8 mma.sync and mma.sp follow the same
  .pred and accumulator rules (PLAIN_FP8).
- scale-a-data and scale-b-data: what mma.sp's e takes (a .b32, .u32, .s32, .f32, .f16x2 or .pred register, the
  bits of a 0f literal, a vector of 1, 2, 4 or 8 of them; no integer literal, no 16- or 64-bit register).
- {byte-id, thread-id}: two integer constants (constant expressions too), checked in all 64 bits: byte-id 0 to 3
  with .scale_vec::1X (and .kind::mxf8f6f4 without a size), 0 or 2 with ::2X (and .kind::mxf4 without), 0 with
  ::4X; thread-id-a 0 or 1, thread-id-b 0 to 3 ("Argument 5 of instruction 'mma': value '2' out of range, expected
  to be in range [0..1]"). Registers are taken too: the pair is typed by its first element, so after a constant any
  integer or bit register of 8 to 64 bits, and with a register first 16-bit ones (.b16, .u16, .s16, or .f16 beside
  a .b16) or a constant.
- the sparse forms' e as mma.sp's (.e4m3/.e5m2 inputs below sm_120: .b32, .u32, .s32, .f16x2 registers only) and f
  0, checked in its low 32 bits.
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
from ptxgen.ops.mma import mma_sp_opcode, mma_sync_opcode
from ptxgen.types import get_type

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _ptxas_lines import first_line, kernel, ptxas_rejected, reg_decls  # noqa: E402
import _three_way as three_way  # noqa: E402

needs_ptxas = pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas (CUDA toolkit) on PATH")

REG_TYPES = ("pred", "b8", "u8", "s8", "b16", "u16", "s16", "f16", "b32", "u32", "s32", "f32", "f16x2", "b64", "u64",
             "s64", "f64")
NREGS = 40
S = "mma.sync.aligned"
SP = "mma.sp::ordered_metadata.sync.aligned"
KIND_RULES = ("mma_kind_fp8", "mma_kind_f6f4", "mma_mxf8f6f4", "mma_mxf4", "mma_mxf4nvf4", "mma_sp_kind_fp8",
              "mma_sp_kind_f6f4", "mma_sp_mxf8f6f4", "mma_sp_mxf4", "mma_sp_mxf4nvf4")


def module(lines: Sequence[str], target: str, version: str) -> str:
    """A kernel with `lines` in its body, after registers %<type>_<0..39> of each type."""
    return kernel(lines, target, version, reg_decls(*((t, t + "_", NREGS) for t in REG_TYPES)))


FIRST = 6 + len(REG_TYPES)          # the line of the first body line


def vec(t: str, n: int, off: int = 0) -> str:
    return "{" + ", ".join(f"%{t}_{off + i}" for i in range(n)) + "}"


# ------------------------------------------------------------------------------------------------ spellings
_TYPES = ("f16", "f32", "s32", "bf16", "e4m3", "e5m2", "e3m2", "e2m3", "e2m1", "s8", "e2m1x2")
_ACC_REG = {"f16": "f16x2", "f32": "f32", "s32": "s32", "bf16": "b32"}


def fields(opcode: str) -> Dict[str, object]:
    """The fields of a spelling, whatever its order or legality: K, kind, sparse, block-scaled, D and C types."""
    toks = opcode.split(".")
    k = next((int(m.group(1)) for t in toks for m in [re.match(r"m\d+n\d+k(\d+)$", t)] if m), 32)
    kind = next((t[6:] for t in toks if t.startswith("kind::")), "")
    types = [t for t in toks if t in _TYPES] + ["f32"] * 4
    return {"k": k, "kind": kind, "sparse": any(t.startswith("sp") for t in toks), "block": "block_scale" in toks,
            "d": types[0], "c": types[3]}


def counts(opcode: str) -> Tuple[int, int, int, int]:
    """Registers of d, a, b, c as the PTX ISA's fragments give them (whether or not the spelling is legal)."""
    g = fields(opcode)
    bits = 4 if g["block"] and g["kind"] in ("mxf4", "mxf4nvf4") else 8
    a = max(16 * g["k"] // (64 if g["sparse"] else 32) * bits // 32, 1)
    b = max(g["k"] * 8 // 32 * bits // 32, 1)
    return 2 if g["d"] == "f16" else 4, a, b, 2 if g["c"] == "f16" else 4


def line(opcode: str, *, n: Optional[Tuple[int, int, int, int]] = None, dreg: Optional[str] = None, areg: str = "b32",
         breg: str = "b32", creg: Optional[str] = None, e: str = "%b32_30", f: str = "0", scale_a: str = "%b32_31",
         ids_a: str = "{0, 0}", scale_b: str = "%b32_32", ids_b: str = "{0, 0}", scales: Optional[bool] = None) -> str:
    """An instruction line of `opcode` with the operands its fields give it (or those given)."""
    g = fields(opcode)
    nd, na, nb, nc = n or counts(opcode)
    ops = [vec(dreg or _ACC_REG.get(g["d"], "f32"), nd, 0), vec(areg, na, 4), vec(breg, nb, 12),
           vec(creg or _ACC_REG.get(g["c"], "f32"), nc, 20)]
    if g["sparse"]:
        ops += [e, f]
    if g["block"] if scales is None else scales:
        ops += [scale_a, ids_a, scale_b, ids_b]
    return f"{opcode} {', '.join(ops)};"


def split(text: str) -> Tuple[str, List[str]]:
    opcode, ops = text[:-1].split(" ", 1)
    return opcode, [p.strip() for p in re.findall(r"\{[^}]*\}|[^,{}]+", ops) if p.strip()]


LEGAL = [f.opcode for f in LG.forms(mnemonic="mma") if f.rule in KIND_RULES]
# one spelling of each rule (and of the accumulators and scale sizes that change a minimum or an operand)
REPS = [f"{S}.m16n8k32.row.col.kind::f8f6f4.f32.e4m3.e5m2.f32", f"{S}.m16n8k16.row.col.kind::f8f6f4.f16.e5m2.e4m3.f16",
        f"{S}.m16n8k32.row.col.kind::f8f6f4.f32.e2m1.e3m2.f32", f"{S}.m16n8k32.row.col.kind::f8f6f4.f16.e4m3.e2m3.f16",
        f"{S}.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e2m3.e4m3.f32.ue8m0",
        f"{S}.m16n8k32.row.col.kind::mxf8f6f4.block_scale.f32.e4m3.e4m3.f32.ue8m0",
        f"{S}.m16n8k64.row.col.kind::mxf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue8m0",
        f"{S}.m16n8k64.row.col.kind::mxf4.block_scale.f32.e2m1.e2m1.f32.ue8m0",
        f"{S}.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3",
        f"{S}.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue8m0",
        f"{SP}.m16n8k64.row.col.kind::f8f6f4.f32.e4m3.e4m3.f32",
        f"{SP}.m16n8k64.row.col.kind::f8f6f4.f16.e5m2.e4m3.f16",
        f"{SP}.m16n8k64.row.col.kind::f8f6f4.f32.e3m2.e2m1.f32",
        f"{SP}.m16n8k64.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e2m1.e5m2.f32.ue8m0",
        f"{SP}.m16n8k128.row.col.kind::mxf4.block_scale.f32.e2m1.e2m1.f32.ue8m0",
        f"{SP}.m16n8k128.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3"]
BLOCK_REPS = [op for op in REPS if "block_scale" in op]


def _retype(op: str, **new: str) -> str:
    """`op` with its D, A, B, C or scale type (by name: d, a, b, c, s) replaced."""
    toks = op.split(".")
    idx = [i for i, t in enumerate(toks) if t in _TYPES or t in ("ue8m0", "ue4m3")]
    for name, i in zip("dabcs", idx):
        if name in new:
            toks[i] = new[name]
    return ".".join(t for t in toks if t)


def spelling_lines() -> List[str]:
    """Near misses of each of REPS: K, the A and B types, D and C, the kind, .block_scale, the scale vector size and
    type, the sparsity, .satfinite and the layouts, and the words in other orders."""
    out = []
    for op in REPS:
        k = fields(op)["k"]
        for shape in ("m16n8k8", "m16n8k16", "m16n8k32", "m16n8k64", "m16n8k128", "m8n8k32", "m16n16k32"):
            out.append(line(re.sub(r"m16n8k\d+", shape, op)))
        for t in ("e4m3", "e5m2", "e3m2", "e2m3", "e2m1", "f16", "s8", "e2m1x2"):
            out += [line(_retype(op, a=t)), line(_retype(op, b=t))]
        for d, c in (("f32", "f16"), ("f16", "f32"), ("f16", "f16"), ("f32", "f32"), ("s32", "s32"), ("bf16", "bf16")):
            out.append(line(_retype(op, d=d, c=c)))
        kind = "kind::" + str(fields(op)["kind"])
        for other in ("kind::f8f6f4", "kind::mxf8f6f4", "kind::mxf4", "kind::mxf4nvf4", "kind::f16", "kind::i8",
                      "kind::tf32", "kind::MXF4"):
            out.append(line(op.replace(kind, other)))
        out.append(line(op.replace("." + kind, "")))
        if "block_scale" in op:
            out.append(line(op.replace(".block_scale", "")))
            out.append(line(op.replace(".block_scale", ".block_scale.block_scale")))
            sv = next((t for t in op.split(".") if t.startswith("scale_vec")), None)
            bare = op.replace("." + sv, "") if sv else op
            out.append(line(bare))
            for size in ("1X", "2X", "4X", "1x", "8X"):
                out.append(line(bare.replace(".block_scale", f".block_scale.scale_vec::{size}")))
            for st in ("ue8m0", "ue4m3", "e8m0", "ue8m0x2", "f32"):
                out.append(line(_retype(op, s=st)))
            out += [line(_retype(op, s="")), line(op + ".ue8m0"), line(op.replace(".f32.", ".ue8m0.f32.", 1))]
        else:
            out += [line(op.replace(kind, kind + ".block_scale")), line(op + ".ue8m0"),
                    line(op.replace(kind, kind + ".scale_vec::1X"))]
        sparse = op.startswith(SP)
        out += [line(op.replace(SP, "mma.sp.sync.aligned")) if sparse else line(op.replace(S, SP), scales=None),
                line(op.replace(SP, S)) if sparse else line(op.replace(S, "mma.sp.sync.aligned")),
                line(op.replace(".row.col", ".row.col.satfinite")), line(op.replace(".row.col", ".col.row")),
                line(op.replace(".row.col", ".row.row")), line(op.replace(".row.col", ".col.col")),
                line(op.replace(".sync.aligned", ".sync")), line(op.replace(".sync.aligned", ".sync.sync.aligned")),
                line(op.replace(".sync.aligned", ".sync.aligned.aligned")),
                line(op.replace(kind, kind + "." + kind)), line(op.replace(".row.col", ".row.col.relu")),
                line(op.replace(f"m16n8k{k}.", f"m16n8k{k}.m16n8k{k}."))]
        # orders ptxas takes (the kind, .block_scale and the size anywhere after the name) and one it does not
        words = op.split(".")
        free = [w for w in words if w.startswith(("kind", "block_scale", "scale_vec"))]
        rest = [w for w in words if w not in free]
        n = 2 if sparse else 1
        out += [line(".".join(rest[:n] + free + rest[n:])), line(".".join(rest + free)),
                line(".".join(rest[:n + 3] + free[::-1] + rest[n + 3:]))]
    return out


# ------------------------------------------------------------------------------------------------ operands
FRAG_REGS = ("b32", "u32", "s32", "f32", "f16x2", "pred", "b16", "b64", "f64", "u16")
SCALE_DATA = ("%b32_33", "%u32_33", "%s32_33", "%f32_33", "%f16x2_33", "%pred_33", "%b16_33", "%u16_33", "%f16_33",
              "%b64_33", "%u64_33", "%b8_33", "0", "0x12345678", "-1", "0f3F800000", "0d3FF0000000000000", "1.5",
              "{%b32_33}", "{%b32_33, %b32_34}", vec("b32", 3, 33), vec("b32", 4, 33), vec("b32", 8, 30),
              vec("b32", 16, 20), "{%pred_33, %pred_34}", "{%b32_33, %f32_34}", "{%u32_33, %f32_34}", "{0f3F800000}",
              "{%b32_33, 0f3F800000}", "{%b32_33, 1}", "{1}", "{%b16_33}")
IDS = ["{%d, %d}" % (x, y) for x in (-1, 0, 1, 2, 3, 4) for y in (-1, 0, 1, 2, 3, 4)] + [
    "{0}", "{0, 0, 0}", "{4294967296, 0}", "{0, 4294967297}", "{18446744073709551616, 0}", "{-4294967296, 0}",
    "{0, 18446744073709551617}", "{1+1, 0}", "{0, 1-1}", "{(1), 0}", "{0x2, 0x1}", "{0U, 1U}", "{0f00000000, 0}",
    "{0, 0f00000000}", "{0.0, 0}"] + [
    "{%s, %s}" % (x, y) for x in ("%u16_1", "%b16_1", "%s16_1", "%f16_1", "%u32_1", "%b32_1", "%u8_1", "%b64_1", "0")
    for y in ("%u16_2", "%b16_2", "%s16_2", "%f16_2", "%u32_2", "%s32_2", "%b64_2", "%f32_2", "%pred_2",
              "%f16x2_2", "%u8_2", "0")]
METAS = ("%b32_30", "%u32_30", "%f32_30", "%f16x2_30", "%pred_30", "%b16_30", "%b64_30", "0", "0f3F800000",
         "{%b32_30}", "{%b32_30, %b32_31}", vec("b32", 3, 30), vec("b32", 4, 30))
SELECTORS = ("0", "1", "2", "-1", "4294967296", "4294967297", "1-1", "%b32_29", "0f00000000")


def operand_lines() -> List[str]:
    """On each of REPS: each fragment's register types and counts, one operand fewer and more; on the block-scaled
    ones every scale data operand above in either place and every {byte-id, thread-id} in either place; on the sparse
    ones e and f."""
    out = []
    for op in REPS:
        base = line(op)
        opcode, parts = split(base)
        out.append(base)
        nd, na, nb, nc = counts(op)
        for t in FRAG_REGS:
            out += [line(op, dreg=t), line(op, areg=t), line(op, breg=t), line(op, creg=t)]
        for i, dn in ((0, -1), (0, 1), (1, -1), (1, 1), (2, -1), (2, 1), (2, 2), (3, 1), (1, 4)):
            n = [nd, na, nb, nc]
            n[i] += dn
            if n[i]:        # (an empty vector is a syntax error, which ends lint's reading of the module)
                out.append(line(op, n=tuple(n)))
        out += [f"{opcode} {', '.join(parts[:-1])};", f"{opcode} {', '.join(parts + ['0'])};",
                f"{opcode} {', '.join(parts[:4])};", line(op, areg="b32", breg="f32"),
                f"{opcode} {', '.join(parts[:1] + ['{%u32_4, %f32_5, %b32_6, %b32_7}'] + parts[2:])};"]
        if fields(op)["sparse"]:
            out += [line(op, e=x) for x in METAS] + [line(op, f=x) for x in SELECTORS]
        if "block_scale" in op:
            out += [line(op, scale_a=x) for x in SCALE_DATA] + [line(op, scale_b=x) for x in SCALE_DATA[::3]]
            out += [line(op, ids_a=x) for x in IDS] + [line(op, ids_b=x) for x in IDS]
            out += [f"{opcode} {', '.join(parts[:-2])};", f"{opcode} {', '.join(parts[:-1] + ['0, 0'])};"]
    return out


# the kind-less fp8 forms, which follow the .kind::f8f6f4 forms' .pred and accumulator rules (legality._fp8_gate)
PLAIN_FP8 = [f"{S}.m16n8k32.row.col.f32.e4m3.e5m2.f32", f"{S}.m16n8k16.row.col.f16.e5m2.e4m3.f16",
             f"{SP}.m16n8k64.row.col.f32.e4m3.e4m3.f32", f"{SP}.m16n8k64.row.col.f16.e5m2.e5m2.f16"]
# (target, version) -> lines: everything at sm_120a and PTX ISA 8.8; REPS (and a few fragments) at the targets around
# each form's and the versions around each minimum
TARGETS = (("sm_90a", "8.8"), ("sm_100", "8.8"), ("sm_100a", "8.6"), ("sm_100a", "8.7"), ("sm_100f", "8.8"),
           ("sm_103a", "8.8"), ("sm_110a", "9.0"), ("sm_110f", "9.0"), ("sm_120", "8.8"), ("sm_120a", "8.7"),
           ("sm_120f", "8.8"), ("sm_121a", "8.8"), ("sm_121f", "9.0"), ("sm_89", "8.7"))


def cases() -> Dict[Tuple[str, str], List[str]]:
    out = {("sm_120a", "8.8"): [line(op) for op in LEGAL] + spelling_lines() + operand_lines()}
    for target, version in TARGETS:
        lines = [line(op) for op in REPS]
        # the other kinds without a block scale, on .e4m3/.e5m2 (.kind::mxf4nvf4 from PTX ISA 8.7)
        lines += [line(op.replace("kind::f8f6f4", k)) for op in (REPS[0], REPS[10])
                  for k in ("kind::mxf8f6f4", "kind::mxf4", "kind::mxf4nvf4")]
        for op in REPS[:2] + REPS[10:12] + PLAIN_FP8:
            lines += [line(op, areg="pred"), line(op, breg="f32"), line(op, areg="f16x2")]
            if op.startswith(SP):
                lines += [line(op, e=x) for x in ("%f32_30", "%pred_30", "{%b32_30}", "%u32_30")]
            # D and C of mixed register types and literals (the .f16 accumulator below sm_120)
            opcode, parts = split(line(op))
            two = fields(op)["d"] == "f16"
            for i, v in ((0, "{%b32_0, %f16x2_1}" if two else "{%b32_0, %f32_1, %f32_2, %f32_3}"),
                         (0, "{%b32_0, %u32_1}" if two else "{%b32_0, %u32_1, %b32_2, %b32_3}"),
                         (3, "{1, %b32_21}" if two else "{1, %b32_21, %b32_22, %b32_23}"),
                         (3, "{%f16x2_20, %b32_21}" if two else "{0f3F800000, %f32_21, %f32_22, %f32_23}"),
                         (3, "{%s32_20, %b32_21}" if two else "{%s32_20, %b32_21, %b32_22, %b32_23}")):
                lines.append(f"{opcode} {', '.join(parts[:i] + [v] + parts[i + 1:])};")
        out[(target, version)] = lines
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


def _int(text: str) -> Optional[int]:
    try:
        return int(text, 0)
    except ValueError:
        return None


def _declared_alike(parts: Sequence[str]) -> bool:
    """Whether the builder's registers would be declared as the line's are where that matters to ptxas: in a vector
    of several register types, or of registers and literals, and in a {byte-id, thread-id} pair (the builder declares
    .u32, .f16x2 ... registers .b32, .u16 and .f16 ones .b16)."""
    for i, p in enumerate(parts):
        if not p.startswith("{"):
            continue
        elems = [x.strip() for x in p.strip("{}").split(",")]
        regs = {x.lstrip("%").rsplit("_", 1)[0] for x in elems if x.startswith("%")}
        if (len(regs) > 1 or len(regs) < len(elems) or i >= 4) and \
                any(get_type(t).reg_decl != t for t in regs if t in REG_TYPES):
            return False
    return True


def builder_verdict(text: str, target: str, version: str) -> Tuple[bool, Optional[str]]:
    """(the builder can write the line, its error or None): mma_sync or mma_sp with the line's fields and operands.
    It writes the PTX ISA's order of the modifiers, registers or ints for e and the scale data, ints (of 64 bits) or
    registers for the {byte-id, thread-id} pairs and an int for f, and declares its registers as _declared_alike
    says."""
    opcode, parts = split(text)
    if not _declared_alike(parts):
        return False, None
    toks = opcode.split(".")
    shape = next((t for t in toks if re.match(r"m\d+n\d+k\d+$", t)), None)
    types = [t for t in toks if t in _TYPES]
    kind = next((t[6:] for t in toks if t.startswith("kind::")), None)
    sv = next((t[11:] for t in toks if t.startswith("scale_vec::")), None)
    st = next((t for t in toks if t in ("ue8m0", "ue4m3")), None)
    if shape is None or len(types) != 4 or kind is None:
        return False, None
    d, at, bt, c = types
    sparse = toks[1].startswith("sp")
    kw = dict(atype=at, btype=bt, ctype=c, dtype=d, kind=kind, scale_vec=sv, stype=st)
    try:
        want = (mma_sp_opcode(shape, ordered_metadata=toks[1] == "sp::ordered_metadata", **kw) if sparse
                else mma_sync_opcode(shape, **kw))
    except BuildError:      # (a type the builder has no name for: .e2m1x2)
        return False, None
    if want != opcode:
        return False, None
    block = "block_scale" in toks
    if len(parts) != 4 + 2 * sparse + 4 * block or not all(re.fullmatch(r"\{%\w+_\d+(, %\w+_\d+)*\}", p)
                                                            for p in parts[:4]):
        return False, None
    if sparse and not (re.fullmatch(r"%\w+_\d+", parts[4]) and _int(parts[5]) is not None):
        return False, None
    scale = parts[4 + 2 * sparse:]
    if block and not (re.fullmatch(r"%\w+_\d+", scale[0]) and re.fullmatch(r"%\w+_\d+", scale[2])
                      and all(_int(x) is not None or x.startswith("%") for p in (scale[1], scale[3])
                              for x in p.strip("{}").replace(" ", "").split(","))):
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

    def ids(p):
        return tuple(reg(x) if x.startswith("%") else _int(x) for x in p.strip("{}").replace(" ", "").split(","))
    if block and any(not x.startswith("%") and not -(1 << 63) <= _int(x) < 1 << 64 for p in (scale[1], scale[3])
                     for x in p.strip("{}").replace(" ", "").split(",")):
        return False, None
    try:            # (registers the builder does not declare: .b8)
        frags = [vec_of(p) for p in parts[:4]]
        extra = {}
        if block:
            extra = dict(scale_a=reg(scale[0]), scale_ids_a=ids(scale[1]), scale_b=reg(scale[2]),
                         scale_ids_b=ids(scale[3]))
        meta = reg(parts[4]) if sparse else None
    except BuildError:
        return False, None
    try:
        if sparse:
            k.mma_sp(shape, *frags, meta, _int(parts[5]), ordered_metadata=toks[1] == "sp::ordered_metadata", **kw,
                     **extra)
        else:
            k.mma_sync(shape, *frags, **kw, **extra)
    except BuildError as ex:
        return True, f"{ex.code}: {ex.message}"
    return True, None


@pytest.fixture(scope="module")
def verdicts():
    return three_way.collect(cases(), ptxas_verdicts, lint_verdicts, builder_verdict)


def _short(text: str) -> str:
    opcode, parts = split(text)
    return f"{opcode} {', '.join(parts)}"


@pytest.mark.ptxas
@needs_ptxas
def test_lint_agrees_with_ptxas(verdicts):
    bad = three_way.lint_misses(verdicts, _short)
    assert not bad, f"{len(bad)} of {len(verdicts)} lines:\n" + "\n".join(bad[:40])
    # the sample holds legal and illegal lines of every kind
    taken = sum(1 for *_, p, _li, _b in verdicts if p is None)
    assert 500 < taken < len(verdicts) - 500


@pytest.mark.ptxas
@needs_ptxas
def test_builder_agrees_with_ptxas(verdicts):
    bad = three_way.builder_misses(verdicts, _short)
    assert not bad, f"{len(bad)} lines:\n" + "\n".join(bad[:40])
    assert sum(1 for *_, b in verdicts if b[0]) > 0.35 * len(verdicts)


@pytest.mark.ptxas
@needs_ptxas
def test_every_kind_rule_is_taken(verdicts):
    """Each rule has lines ptxas takes at sm_120a, and ptxas takes no spelling the grammar lacks."""
    taken = {split(text)[0] for t, v, text, p, *_ in verdicts if p is None and (t, v) == ("sm_120a", "8.8")}
    rules = {LG.parse(op).rule for op in taken if LG.parse(op) is not None}
    assert rules >= set(KIND_RULES)
    spelled = {split(x)[0] for x in spelling_lines()}
    assert all(LG.parse(op) is not None for op in taken & spelled)
    # and of the spellings with a kind, every one ptxas takes is one of the grammar's 288
    assert {LG.canonical(op) for op in taken & spelled if "kind::" in op} <= set(LEGAL)


# ----------------------------------------------------------------------------------- without ptxas
def test_the_grammar_has_the_forms_ptxas_takes():
    """The counts of the docstring's forms and their fragments and operand lists, from the legality table."""
    by_rule: Dict[str, int] = {}
    for op in LEGAL:
        by_rule[LG.parse(op).rule] = by_rule.get(LG.parse(op).rule, 0) + 1
    # (kinds x) shapes x accumulators x type pairs (x with and without the scale vector size)
    assert by_rule == {"mma_kind_fp8": 4 * 2 * 2 * 4, "mma_kind_f6f4": 2 * 21, "mma_mxf8f6f4": 25 * 2, "mma_mxf4": 2,
                       "mma_mxf4nvf4": 2, "mma_sp_kind_fp8": 4 * 2 * 4, "mma_sp_kind_f6f4": 2 * 21,
                       "mma_sp_mxf8f6f4": 25 * 2, "mma_sp_mxf4": 2, "mma_sp_mxf4nvf4": 2}
    assert len(LEGAL) == 288
    for op in LEGAL:
        regs = LG.fragment_regs(op)
        assert tuple(regs[x][0] for x in "dabc") == counts(op), op
        sizes = [len(s.slots) for s in LG.signatures(op)]
        g = fields(op)
        assert sizes == [4 + 2 * g["sparse"] + 4 * g["block"]], op
    f = LG.parse(f"{S}.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3")
    assert LG.scale_ids(f) == ((0,), (0, 1), (0, 1, 2, 3))
    assert LG.scale_ids(LG.parse(f"{S}.m16n8k64.row.col.kind::mxf4.block_scale.f32.e2m1.e2m1.f32.ue8m0"))[0] == (0, 2)
    # the modifiers after the name in any order, the scale type last of the types
    assert LG.canonical("mma.kind::f8f6f4.sync.aligned.m16n8k32.row.col.f32.e2m1.e3m2.f32") == \
        f"{S}.m16n8k32.row.col.kind::f8f6f4.f32.e2m1.e3m2.f32"
    assert LG.parse(f"{S}.m16n8k32.row.col.kind::mxf8f6f4.block_scale.ue8m0.f32.e4m3.e4m3.f32") is None


def test_lint_messages():
    """What lint says of a few of the lines above."""
    lines = [line(f"{S}.m16n8k16.row.col.kind::f8f6f4.f32.e2m1.e4m3.f32"),
             line(f"{S}.m16n8k32.row.col.f32.e2m1.e4m3.f32"),
             line(f"{S}.m16n8k64.row.col.kind::mxf4nvf4.block_scale.f32.e2m1.e2m1.f32.ue8m0"),
             line(f"{S}.m16n8k32.row.col.kind::f16.f32.f16.f16.f32"),
             line(REPS[4], ids_a="{0, 2}"), line(REPS[6], ids_b="{1, 0}"), line(REPS[4], scale_a="0"),
             line(REPS[4], areg="u32"), line("mma.sp.sync.aligned.m16n8k64.row.col.kind::f8f6f4.f32.e3m2.e2m1.f32")]
    got = {d.loc.line - FIRST: d for d in L.lint_ptx(module(lines, "sm_120a", "8.8"), "t.ptx")
           if d.severity == "error"}
    assert (got[0].code, got[0].message) == ("PTX-E-SHAPE", "K=16 is not legal for mma.sync .kind::f8f6f4 with "
                                                            "FP6/FP4 inputs; K must be 32")
    assert got[1].code == "PTX-E-MODIFIER" and got[1].message.startswith(
        "mma.sync with .e2m1 A and .e4m3 B needs a kind: .kind::f8f6f4 or .kind::mxf8f6f4")
    assert got[1].notes[-1] == f"the nearest legal spelling: {S}.m16n8k32.row.col.kind::f8f6f4.f32.e2m1.e4m3.f32"
    assert (got[2].code, got[2].message) == (
        "PTX-E-MODIFIER", "mma.sync .kind::mxf4nvf4.block_scale needs a scale vector size: .scale_vec::2X with .ue8m0 "
                          "or .scale_vec::4X with .ue4m3 (ptxas: \".scale_vec_size modifier required\")")
    assert got[3].message.startswith(".kind::f16 is not a kind of mma.sync; the kind must be one of .kind::f8f6f4")
    assert (got[4].code, got[4].message) == (
        "PTX-E-OPERANDS", "mma.sync .kind::mxf8f6f4.block_scale: operand 6 ({byte-id-a, thread-id-a}): thread-id-a "
                          "must be 0 or 1, not 2")
    assert got[5].message.endswith("operand 8 ({byte-id-b, thread-id-b}): byte-id-b must be 0 or 2, not 1")
    assert got[6].message.endswith("operand 5 (scale-a-data) is an integer literal; the scale data is a 32-bit "
                                   "register (or its bits as a 0f literal)")
    assert got[7].code == "PTX-E-TYPE" and "operand 2 (a) holds .u32 registers; .b32 expected" in got[7].message
    assert got[8].message.startswith("mma.sp .kind::f8f6f4 with FP6/FP4 inputs needs .sp::ordered_metadata, not .sp")
    for target, version, want in (("sm_100a", "8.7", "mma.sync .kind::f8f6f4 with FP6/FP4 inputs needs target "
                                                     "sm_120a/sm_120f (or a later a/f target of the same family)"),
                                  ("sm_120f", "8.8", "mma.sp .kind::mxf4.block_scale needs target sm_120a or sm_121a")):
        diags = [d for d in L.lint_ptx(module([line(REPS[2]), line(REPS[14])], target, version))
                 if d.severity == "error"]
        assert any(d.code == "PTX-E-TARGET" and d.message.startswith(want) for d in diags), diags
    diags = [d for d in L.lint_ptx(module([line(REPS[1])], "sm_100a", "8.6")) if d.severity == "error"]
    assert [(d.code, d.message) for d in diags][:1] == [
        ("PTX-E-VERSION", "mma.sync .kind::f8f6f4 with .e4m3/.e5m2 inputs with .m16n8k16 needs PTX ISA 8.7 (module "
                          ".version is 8.6)")]


def test_the_reported_kernel_lints_clean():
    text = """.version 8.8
.target sm_120a
.address_size 64
.visible .entry k()
{
  .reg .b32 %r<20>;
  .reg .f32 %f<8>;
  mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.e4m3.e4m3.f32 {%f0,%f1,%f2,%f3}, {%r0,%r1,%r2,%r3}, {%r4,%r5}, \
{%f4,%f5,%f6,%f7};
  mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.e2m1.e3m2.f32 {%f0,%f1,%f2,%f3}, {%r0,%r1,%r2,%r3}, {%r4,%r5}, \
{%f4,%f5,%f6,%f7};
  ret;
}
"""
    assert [(d.code, d.message) for d in L.lint_ptx(text)] == []


def test_the_executor_refuses_them():
    from ptxgen.errors import UnsupportedInstructionError
    from ptxgen.executor import run_kernel
    for kind, shape, at, extra in (("f8f6f4", "m16n8k32", "e2m1", {}), ("mxf4", "m16n8k64", "e2m1", {"sa": 1})):
        m = pg.Module("sm_120a", version="8.8")
        k = m.entry("k")
        frags = [k.mma_fragment(x, shape, atype=at, kind=kind) for x in "abc"]
        scales = dict(scale_a=k.reg(pg.b32), scale_b=k.reg(pg.b32)) if extra else {}
        k.mma_sync(shape, None, *frags, atype=at, kind=kind, **scales)
        k.ret()
        with pytest.raises(UnsupportedInstructionError, match=f"kind::{kind}.* is not modelled"):
            run_kernel(m, "k", grid=(1,), block=(32,))


def test_builder_writes_and_refuses():
    m = pg.Module("sm_120a", version="8.8")
    k = m.entry("k")
    a = k.mma_fragment("a", "m16n8k64", atype="e2m1", kind="mxf4")
    b = k.mma_fragment("b", "m16n8k64", atype="e2m1", kind="mxf4")
    c = k.mma_fragment("c", "m16n8k64", atype="e2m1", kind="mxf4")
    assert (len(a), len(b), len(c)) == (4, 2, 4)
    sa, sb = k.reg(pg.b32), k.reg(pg.b32)
    k.mma_sync("m16n8k64", None, a, b, c, atype="e2m1", kind="mxf4nvf4", scale_vec="4X", scale_a=sa, scale_b=sb,
               scale_ids_b=(0, 3))
    ap = k.mma_sp_fragment("a", "m16n8k64", atype="e3m2", btype="e4m3", kind="f8f6f4")
    bp = k.mma_sp_fragment("b", "m16n8k64", atype="e3m2", btype="e4m3", kind="f8f6f4")
    k.mma_sp("m16n8k64", None, ap, bp, c, k.reg(pg.b32), 0, atype="e3m2", btype="e4m3", kind="f8f6f4")
    k.ret()
    text = str(m.emit())
    assert (f"{S}.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3 " in text
            and ", {0, 0}, " in text and ", {0, 3};" in text)
    assert f"{SP}.m16n8k64.row.col.kind::f8f6f4.f32.e3m2.e4m3.f32 " in text
    refusals = [dict(kind="mxf4"), dict(kind="f8f6f4", scale_a=sa, scale_b=sb),
                dict(kind="mxf4", scale_a=sa, scale_b=sb, scale_ids_a=(1, 0)),
                dict(kind="mxf4", scale_a=sa, scale_b=sb, scale_ids_a=[0]), dict(kind="mxf4", scale_vec="4X"),
                dict(kind=4), dict(kind="mxf4", scale_vec=2), dict(kind="mxf4", stype="ue9m9"),
                dict(kind="mxf4", scale_a=sa, scale_b=sb, scale_ids_b=(0, "x"))]
    for kw in refusals:
        with pytest.raises(BuildError):
            k.mma_sync("m16n8k64", None, a, b, c, atype="e2m1", **kw)
    m100 = pg.Module("sm_100a", version="8.8")
    with pytest.raises(BuildError, match="needs target sm_120a/sm_120f"):
        m100.entry("k").mma_fragment("a", "m16n8k32", atype="e2m1", kind="f8f6f4")
    assert len(m100.entry("j").mma_fragment("a", "m16n8k32", atype="e4m3", kind="f8f6f4")) == 4


if __name__ == "__main__":     # counts and disagreements: python3 tests/test_lint_mma_kind.py
    rows = three_way.collect(cases(), ptxas_verdicts, lint_verdicts, builder_verdict)
    print(len(rows), "lines;", sum(1 for r in rows if r[3] is None), "taken by ptxas;",
          sum(1 for r in rows if r[5][0]), "written by the builder")
    for t, v, text, p, li, b in rows:
        if (p is None) != (li is None) or (b[0] and (p is None) != (b[1] is None)):
            print(t, v, _short(text), "| ptxas:", p, "| lint:", li, "| builder:", b)


# plain (kind-less) fp8 mma.sync at m16n8k16 takes B of 1, 2, 4 or 8 registers too, as ptxas 13.0 has it (lint
# refused all but 1)
FP8_B = [f"mma.sync.aligned.m16n8k16.row.col.f32.e4m3.e5m2.f32 {vec('f32', 4)}, {vec('b32', 2)}, "
         f"{vec('b32', n, 8)}, {vec('f32', 4, 4)};" for n in (1, 2, 3, 4, 5, 8)]


def test_plain_fp8_mma_takes_b_of_1_2_4_or_8_registers():
    text = module(FP8_B, "sm_90a", "8.7")
    first = first_line(text, FP8_B)
    errs = {d.loc.line - first for d in L.lint_ptx(text, "t.ptx") if d.severity == "error"}
    assert errs == {2, 4}         # 3 and 5 registers


@needs_ptxas
@pytest.mark.ptxas
def test_plain_fp8_mma_b_counts_as_ptxas_has_them():
    text = module(FP8_B, "sm_90a", "8.7")
    first = first_line(text, FP8_B)
    assert {k - first for k in ptxas_rejected(text, "sm_90a")} == {2, 4}
