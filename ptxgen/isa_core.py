"""Operand-type rules of the core (non tensor-core) instructions, as data.

The builder checks its calls against these tables and the linter checks parsed instructions with the
same tables, so each rule is written once. Facts from the PTX ISA 9.0 instruction pages; where ptxas
13.0 and the manual differ, the tables follow ptxas (tests/test_core_ptxas.py holds the evidence).
"""
from __future__ import annotations

from .types import (b16, b32, b64, bf16, bf16x2, f16, f16x2, f32, f64, pred, s16, s32, s64, u16, u32, u64)

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
    "mov": (pred,) + BITS + INT + FLOAT + (f16, bf16),
    "rcp": FLOAT,
    "sqrt": FLOAT,
    "ex2": (f32, f16, f16x2, bf16, bf16x2),
    "lg2": (f32,),
    "sin": (f32,),
    "cos": (f32,),
}

# bf16 arithmetic (add/sub/mul/fma/min/max on .bf16/.bf16x2 without .rn fused forms) needs sm_90
NEEDS_SM90_BF16 = ("add", "sub", "mul")

MUL_MODES = ("lo", "hi", "wide")
CMP_INT = ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs")
CMP_BITS = ("eq", "ne")
CMP_FLOAT = ("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")
BOOL_OPS = ("and", "or", "xor")
PRMT_MODES = ("f4e", "b4e", "rc8", "ecl", "ecr", "rc16")
SHFL_MODES = ("up", "down", "bfly", "idx")
VOTE_MODES = ("all", "any", "uni", "ballot")

ATOM_OPS = {
    "and": (b32, b64), "or": (b32, b64), "xor": (b32, b64),
    "cas": (b16, b32, b64), "exch": (b32, b64),
    "add": (u32, s32, u64, f32, f64, f16, f16x2, bf16, bf16x2),
    "inc": (u32,), "dec": (u32,),
    "min": (u32, s32, u64, s64), "max": (u32, s32, u64, s64),
}
MEM_SEMS = ("relaxed", "acquire", "release", "acq_rel")
SCOPES = ("cta", "cluster", "gpu", "sys")
LD_SPACES = ("global", "shared", "shared::cta", "shared::cluster", "local", "param", "const", "generic")
ST_SPACES = ("global", "shared", "shared::cta", "shared::cluster", "local", "param", "generic")
LD_CACHE = ("ca", "cg", "cs", "lu", "cv")
ST_CACHE = ("wb", "cg", "cs", "wt")
CVTA_SPACES = ("global", "shared", "shared::cta", "shared::cluster", "local", "const", "param")


def cmp_ops_for(t) -> tuple:
    if t.kind == "f":
        return CMP_FLOAT
    if t.kind == "b":
        return CMP_BITS
    return CMP_INT


def cvt_rounding(dst, src) -> tuple:
    """(required?, allowed rounding modes) for cvt.dtype.atype (PTX ISA, cvt: "Rounding modifiers")."""
    df, sf = dst.kind == "f" or dst.kind == "packed", src.kind == "f"
    if df and sf:
        if dst.bits < src.bits:
            return True, ROUND_F  # narrowing float conversion must round
        if dst.bits == src.bits and dst is not src:
            return True, ROUND_F  # f16 <-> bf16 style changes
        return False, ROUND_F + ROUND_I  # widening: optional rounding (integer rounding keeps the type)
    if sf and not df:
        return True, ROUND_I  # float -> int needs an integer rounding mode
    if df and not sf:
        return True, ROUND_F  # int -> float
    return False, ()
