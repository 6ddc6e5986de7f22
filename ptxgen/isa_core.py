"""Operand-type rules of the core (non tensor-core) instructions, as data.

The builder checks its calls against these tables and the linter checks parsed instructions with the
same tables, so each rule is written once. Facts from the PTX ISA 9.0 instruction pages; where ptxas
13.0 and the manual differ, the tables follow ptxas (tests/test_core_ptxas.py holds the evidence).
"""
from __future__ import annotations

from .types import (b8, b16, b32, b64, bf16, bf16x2, f16, f16x2, f32, f64, pred, s16, s32, s64, tf32, u16, u32,
                    u64)

INT = (s16, u16, s32, u32, s64, u64)
BITS = (b16, b32, b64)
HALF = (f16, f16x2, bf16, bf16x2)
FLOAT = (f32, f64)
ROUND_F = ("rn", "rz", "rm", "rp")
ROUND_I = ("rni", "rzi", "rmi", "rpi")

# op -> allowed instruction types
TYPES = {
    "add": INT + FLOAT + HALF,
    "sub": INT + FLOAT + HALF,
    "mul": INT + FLOAT + HALF,
    "mad": INT + FLOAT,
    "fma": FLOAT + HALF,
    "div": INT + FLOAT,
    "rem": INT,
    "min": INT + FLOAT + HALF,
    "max": INT + FLOAT + HALF,
    "abs": (s16, s32, s64) + FLOAT + HALF,
    "neg": (s16, s32, s64) + FLOAT + HALF,
    "and": (pred,) + BITS,
    "or": (pred,) + BITS,
    "xor": (pred,) + BITS,
    "not": (pred,) + BITS,
    "shl": BITS,
    "shr": BITS + INT,
    "bfe": (u32, u64, s32, s64),
    "bfi": (b32, b64),
    "prmt": (b32,),
    "popc": (b32, b64),
    "clz": (b32, b64),
    "brev": (b32, b64),
    "setp": BITS + INT + FLOAT + (f16, bf16),
    "selp": BITS + INT + FLOAT,
    "mov": (pred,) + BITS + INT + FLOAT,  # no mov.f16 in ptxas: halves move as .b16
    "rcp": FLOAT,
    "sqrt": FLOAT,
    "ex2": (f32, f16, f16x2, bf16, bf16x2),
    "lg2": (f32,),
    "sin": (f32,),
    "cos": (f32,),
}

# .bf16/.bf16x2 forms that ptxas 13.0 accepts only from sm_90 (fma/min/max/abs/neg have them on sm_80)
NEEDS_SM90_BF16 = ("add", "sub", "mul", "setp", "ex2")

MUL_MODES = ("lo", "hi", "wide")
CMP_SIGNED = ("eq", "ne", "lt", "le", "gt", "ge")
# lo/ls/hi/hs are the unsigned spellings; ptxas rejects them on .sN ("Mismatch between instruction type
# and comparison qualifier") but takes lt/le/gt/ge on .uN
CMP_UNSIGNED = CMP_SIGNED + ("lo", "ls", "hi", "hs")
CMP_INT = CMP_UNSIGNED
CMP_BITS = ("eq", "ne")
CMP_FLOAT = ("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")
BOOL_OPS = ("and", "or", "xor")
PRMT_MODES = ("f4e", "b4e", "rc8", "ecl", "ecr", "rc16")
SHFL_MODES = ("up", "down", "bfly", "idx")
VOTE_MODES = ("all", "any", "uni", "ballot")

ATOM_OPS = {
    "and": (b32, b64), "or": (b32, b64), "xor": (b32, b64),
    "cas": (b16, b32, b64), "exch": (b32, b64),
    # ptxas has no atom.add.s64; the half forms are spelled add.noftz (the builder adds .noftz)
    "add": (u32, s32, u64, f32, f64, f16, f16x2, bf16, bf16x2),
    "inc": (u32,), "dec": (u32,),
    "min": (u32, s32, u64, s64), "max": (u32, s32, u64, s64),
}
MEM_SEMS = ("relaxed", "acquire", "release", "acq_rel")
RED_SEMS = ("relaxed", "release")  # red has no read side: ptxas rejects red.acquire / red.acq_rel
BIT_ATOM_OPS = ("and", "or", "xor", "cas", "exch")  # atom ops typed .bN only
FENCE_SEMS = ("sc", "acq_rel", "acquire", "release")
SCOPES = ("cta", "cluster", "gpu", "sys")
LD_SPACES = ("global", "shared", "shared::cta", "shared::cluster", "local", "param", "const", "generic")
ST_SPACES = ("global", "shared", "shared::cta", "shared::cluster", "local", "param", "generic")
LD_CACHE = ("ca", "cg", "cs", "lu", "cv")
LD_NC_CACHE = ("ca", "cg", "cs")  # ptxas: "Illegal cache operation for instruction 'ld.nc'" for .lu/.cv
ST_CACHE = ("wb", "cg", "cs", "wt")
CVTA_SPACES = ("global", "shared", "shared::cta", "shared::cluster", "local", "const", "param")


def cmp_ops_for(t) -> tuple:
    if t.kind == "f":
        return CMP_FLOAT
    if t.kind == "b":
        return CMP_BITS
    return CMP_SIGNED if t.kind == "s" else CMP_UNSIGNED


# Types of the storage (ld/st/mov/selp) view of a register: PTX has no ld.f16 / mov.bf16 / selp.f16x2,
# these values move as their bit pattern.
def storage_type(t):
    if t.kind == "fp8":
        return b8
    if t.kind == "packed" or t in (f16, bf16, tf32):
        return {16: b16, 32: b32}[t.bits]
    return t


def cvt_bit_type(dst, src):
    """The bit type (.bN) of a scalar cvt.dst.src, which has no such form (ptxas 13.0: "Unexpected
    instruction types specified for 'cvt'": cvt converts numbers), or None."""
    return next((t for t in (dst, src) if t.kind == "b"), None)


def cvt_rounding(dst, src) -> tuple:
    """(required?, allowed rounding modes) for scalar cvt.dtype.atype, as ptxas 13.0 applies them.

    Float rounding is required where precision is lost (narrowing float, int -> float), integer
    rounding where a float becomes an integer (and it may round a float to an integral value of the
    same type); every other rounding is "Illegal rounding modifier" (cvt.rn.f32.f16, cvt.rn.f32.f32,
    cvt.rni.f64.f32). Same-size f16 <-> bf16 takes an optional float rounding.
    """
    df, sf = dst.kind == "f", src.kind == "f"
    if dst is tf32:
        return True, ("rna", "rn", "rz")  # only from .f32; .rn/.rz need sm_90 (builder gates)
    if df and sf:
        if dst is src:
            return False, ROUND_I
        if dst.bits < src.bits:
            return True, ROUND_F
        if dst.bits == src.bits:
            return False, ROUND_F
        # widening is exact and takes no rounding, except that ptxas 13.0 accepts (and ignores) a
        # float rounding on conversions from .bf16 (cvt.rn.f32.bf16), though not from .f16
        return False, (ROUND_F if src is bf16 else ())
    if sf:
        return True, ROUND_I
    if df:
        return True, ROUND_F
    return False, ()


# Immediates whose value ptxas 13.0 checks, as their literal reads (64 bits; ptxgen.legality's literal rules):
# a barrier's number (bar, barrier: the first source) is 0..15 in its low 32 bits ("Barrier number '16' out of
# range", 4294967311 is 15); its thread count (the next operand where the instruction has one) a multiple of the
# warp size, and not 0 for an arrive ("requires a non-zero thread count argument"); bfe's and bfi's bit position
# and length are 0..255 ("value '256' out of range, expected to be in range [0..255]"). (applypriority's and
# discard's size, 128, is ptxgen.legality's: their forms and operands are there.) Other integer immediates of
# the core instructions are taken at any value and cut to the instruction's type (mov.u16 %h, 65536; shl.b32
# %r, %r, 99; prmt.b32 %r, %r, %r, 0x10000).
BARRIER_IDS = 16
WARP_SIZE = 32
BIT_FIELD_MAX = 255


def imm_value_error(base: str, mods, k: int, n: int, value: int):
    """(message, note) where ptxas 13.0 refuses the integer immediate `value` as operand k (of n) of an instruction
    `base` (bar, barrier, bfe, bfi) with the modifiers `mods`, else None."""
    v = value & 0xFFFFFFFFFFFFFFFF
    if base in ("bar", "barrier") and "warp" not in mods:
        first = 1 if "red" in mods else 0
        if k == first and v & 0xFFFFFFFF >= BARRIER_IDS:
            return (f"barrier number {value} is out of range 0..15 (ptxas: \"Barrier number '{v}' out of range\")",
                    "a CTA has 16 named barriers, 0 to 15")
        if k == first + 1 and n == (4 if first else 2):  # a count before `c` of .red, or after `a`
            if v == 0 and "arrive" in mods:
                return (f"{base}.arrive with a thread count of 0 (ptxas: \"Instruction '{base}.arrive' requires a "
                        "non-zero thread count argument\")", "give the number of threads that take part, a "
                        "multiple of 32")
            if v % WARP_SIZE:
                return (f"a barrier's thread count of {value} is not a multiple of the warp size (ptxas: \"Number of "
                        "threads participating in barrier must be in multiple of warp size\")",
                        f"write {max(v - v % WARP_SIZE, WARP_SIZE) if v < 1 << 32 else WARP_SIZE}, a multiple of 32")
    elif (base == "bfe" and k in (2, 3)) or (base == "bfi" and k in (3, 4)):
        if v > BIT_FIELD_MAX:
            what = "position" if k == (2 if base == "bfe" else 3) else "length"
            return (f"{base}'s bit field {what} {value} is out of range 0..255 (ptxas: \"value '{value}' out of "
                    "range, expected to be in range [0..255]\")", f"give a {what} from 0 to 255")
    return None
