"""Operand-type rules of the core (non tensor-core) instructions, as data.

The builder checks its calls against these tables and the linter checks parsed instructions with the
same tables, so each rule is written once. Facts from the PTX ISA 9.0 instruction pages; where ptxas
13.0 and the manual differ, the tables follow ptxas (tests/test_core_ptxas.py holds the evidence).
Also how ptxas reads an opcode's words (its instruction name first, then modifiers in any order but for the
words whose order says which is which: order_key), which ptxgen.legality and the linter share.
"""
from __future__ import annotations

import re
from typing import Dict, FrozenSet, NamedTuple, Optional, Sequence, Tuple

from .types import (b8, b16, b32, b64, b128, bf16, bf16x2, f16, f16x2, f32, f64, pred, s16, s32, s64, tf32, u16, u32,
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
    "setp": BITS + INT + FLOAT + HALF,
    "selp": BITS + INT + FLOAT,
    "mov": (pred,) + BITS + (b128,) + INT + FLOAT,  # no mov.f16 in ptxas: halves move as .b16
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
    "cas": (b16, b32, b64, b128), "exch": (b32, b64, b128),     # .b128: sm_90 (ATOM_B128_NEEDS)
    # ptxas has no atom.add.s64; the half forms are spelled add.noftz (the builder adds .noftz)
    "add": (u32, s32, u64, f32, f64, f16, f16x2, bf16, bf16x2),
    "inc": (u32,), "dec": (u32,),
    "min": (u32, s32, u64, s64), "max": (u32, s32, u64, s64),
}
# atom.cas.b128 and atom.exch.b128 (ptxas 13.0: "Instruction 'atom.cas.b128.global' requires .target sm_90 or
# higher"), besides PTX ISA 8.3 as any .b128 instruction (legality.B128_VERSION)
ATOM_B128_NEEDS = ("sm_90", (8, 3))
# atom and red on .bf16/.bf16x2 ("Instruction 'atom.add.bf16.global' requires .target sm_90 or higher")
ATOM_BF16_NEEDS = ("sm_90", (7, 8))
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

# A 256-bit ld/st (.v8 of 32-bit elements, .v4 of 64-bit ones): sm_100 and PTX ISA 8.8 (ptxas 13.0: "Feature '256
# bit wide load/store' requires .target sm_100 or higher" / "requires PTX ISA .version 8.8 or later").
WIDE_ACCESS_NEEDS = ("sm_100", (8, 8))


def vector_access(op: str, space: Optional[str], bits: int, vec: int):
    """ld, ldu and st of a vector of `vec` elements of `bits` bits in `space` (its first word: "shared" for
    .shared::cta; None or "generic" for a generic address), as ptxas 13.0 takes them (tests/test_lint_vectors.py
    runs every op, space, element type and size at sm_80, sm_90a and sm_100a). Returns (problems, wide,
    documented): problems, (kind, message, hint) for what ptxas rejects ("reject") or crashes on ("crash": only
    where the file is otherwise legal, as ptxas stops before code generation on an error); wide, whether it is a
    256-bit access (WIDE_ACCESS_NEEDS, the caller's gate); documented, False for .v8 of 8- and 16-bit
    elements, which the PTX ISA does not define but ptxas takes where it does not crash on them."""
    total = bits * vec
    space = None if space == "generic" else space
    name = f"{op}.v{vec} of {bits}-bit elements"
    problems = []
    if op == "ldu" and (vec == 8 or total > 128):
        why = "Illegal vector size: 8" if vec == 8 else "Vector type too large, exceeds 128 bit limit"
        problems.append(("reject", f"{name} is {total} bits; ldu reads at most 128 (ptxas: \"{why}\")",
                         "use two ldu of 128 bits, or ld.global.nc" + (" (256 bits from sm_100)" if total == 256 else "")))
        return problems, False, True
    if total > 256:
        problems.append(("reject", f"{name} is {total} bits; a load or store is at most 256 bits (ptxas: \"Vector type too "
                         f"large, exceeds 128 bit limit\")", f"use {op}.v{256 // bits} (256 bits, sm_100) or "
                                                               f"{op}.v{128 // bits} (128 bits)"))
        return problems, False, True
    if vec == 8 and bits < 32:
        # ptxas parses these and takes the 8-bit loads and every store, but crashes (SIGSEGV) on the 16-bit
        # loads in any space, and on the loads of .param and .const in some runs and not others
        if op == "ld" and (space in ("param", "const") or bits == 16):
            where = f" in .{space}" if space in ("param", "const") else ""
            problems.append(("crash", f"ptxas 13.0 crashes (segmentation fault) on {name}{where}; .v8 is the PTX ISA's "
                             f"256-bit form of 32-bit elements only",
                             f"use {op}.v{total // 32}.b32, the same bytes, " + (
                                 ("unpacked" if op == "ld" else "packed") + " with prmt.b32" if bits == 8 else
                                 "unpacked with mov.b32 {a, b}, r" if op == "ld" else "packed with mov.b32 r, {a, b}")))
        return problems, False, False
    wide = total == 256
    if wide and space not in (None, "global"):
        problems.append(("reject", f"{op}.{space} of 256 bits: a 256-bit load or store is of .global or a generic address "
                         f"(ptxas: \"global state space expected for feature '256 bit wide load/store'\")",
                         f"write {op}.global, or two 128-bit accesses"))
    return problems, wide, True


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


def int_range_fits(src, dst) -> bool:
    """Does every value of integer type `src` fit in integer type `dst`?"""
    if src.kind == dst.kind:
        return dst.bits >= src.bits
    return src.kind == "u" and dst.kind == "s" and dst.bits > src.bits


def cvt_form_error(dst, src) -> Optional[Tuple[str, str]]:
    """(message, note) where scalar cvt.dtype.atype does not exist in ptxas 13.0 for these reasons, else None: .bf16
    converts to and from 16- to 64-bit integers and the floats, not 8-bit integers (tests/test_lint_cvt_modifiers.py)."""
    if bf16 in (dst, src) and 8 in (dst.bits, src.bits):
        return (f"cvt.{dst.name}.{src.name} does not exist: .bf16 converts to and from 16- to 64-bit integers",
                "convert through .s16/.u16")
    return None


def cvt_modifier_error(dst, src, ftz: bool, sat: bool) -> Optional[Tuple[str, str]]:
    """(message, note) where ptxas 13.0 refuses scalar cvt.dtype.atype's .ftz or .sat, else None: .ftz needs an
    .f32 source or destination; .sat takes no .bf16 side, and between integers a destination that cannot hold every
    source value (tests/test_lint_cvt_modifiers.py)."""
    name = f"cvt.{dst.name}.{src.name}"
    if ftz and f32 not in (dst, src):
        return f"{name} takes no .ftz: .ftz needs an .f32 source or destination", "drop .ftz"
    if sat and bf16 in (dst, src):
        return f"{name} takes no .sat: .sat does not apply to .bf16 conversions", "drop .sat"
    if sat and dst.is_int and src.is_int and int_range_fits(src, dst):
        return (f"{name} takes no .sat: every .{src.name} value fits .{dst.name}", "drop .sat")
    return None


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


def ex2_modifier_error(type_name: str, approx: bool, ftz: bool):
    """(message, the spelling to write) where ptxas 13.0 refuses ex2's modifiers on the floating-point type
    `type_name`, else None: .approx always; .ftz refused for .f16/.f16x2 and required for .bf16/.bf16x2. The
    builder (which always writes .approx) and lint both ask this."""
    bf = type_name in ("bf16", "bf16x2")
    right = f"ex2.approx{'.ftz' if bf or (ftz and type_name == 'f32') else ''}.{type_name}"
    if not approx:
        return f"ex2.{type_name} needs .approx", right
    if ftz and type_name in ("f16", "f16x2"):
        return (f"ex2.{type_name} takes no .ftz (ptxas: \"Illegal modifier '.ftz' for instruction 'ex2'\")",
                right)
    if not ftz and bf:
        return f"ex2.{type_name} needs .ftz", right
    return None


# ------------------------------------------------------------------------------------ arithmetic modifiers
# The modifiers each arithmetic instruction takes, per instruction type, as ptxas 13.0 takes them
# (tests/test_lint_arith_modifiers.py runs every subset of the words below, and each word ptxas refuses, through
# ptxas). A spec is space-separated: a group of words of which at most one is written ("rn|rz|rm|rp"), required
# unless it ends in "?"; "a:b|c" says .a needs .b or .c; "!a,b" says .a and .b cannot be combined. "R" is the
# group of the four float roundings. An instruction type an instruction has no entry for is the type rules'.
# Where ptxas and the manual differ the table follows ptxas: fma.bf16 takes every rounding, min/max.xorsign.abs
# .f32 assembles, rcp.f64 takes .ftz.
_FLOAT_ARITH = {"f32": "R? ftz? sat?", "f16 f16x2": "rn? ftz? sat?", "f64": "R?", "bf16 bf16x2": "rn?"}
_MINMAX = {"f32 f16 f16x2": "ftz? NaN? xorsign? abs? xorsign:abs abs:xorsign",
           "bf16 bf16x2": "NaN? xorsign? abs? xorsign:abs abs:xorsign", "s32": "relu?",
           "u16 s16 u32 u64 s64 f64": ""}
_ARITH_SPECS = {
    "add sub": {**_FLOAT_ARITH, "s32": "cc|sat?", "u32 u64 s64": "cc?", "u16 s16": ""},
    "addc subc": {"s32": "cc|sat?", "u32 u64 s64": "cc?", "u16 s16": ""},
    "mul": {**_FLOAT_ARITH, "u16 s16 u32 s32": "lo|hi|wide", "u64 s64": "lo|hi"},
    "mad": {"f32": "R ftz? sat?", "f64": "R", "u16 s16": "lo|hi|wide", "u32": "lo|hi|wide cc? cc:lo|hi",
            "s32": "lo|hi|wide cc|sat? cc:lo|hi sat:hi", "u64 s64": "lo|hi cc?"},
    "madc": {"u16 s16": "lo|hi", "u32 u64 s64": "lo|hi cc?", "s32": "lo|hi cc|sat? sat:hi"},
    "fma": {"f32": "R ftz? sat?", "f64": "R", "f16 f16x2": "rn ftz? sat|relu? oob? !ftz,oob",
            "bf16 bf16x2": "R relu? oob?"},
    "min max": _MINMAX,
    "abs neg": {"f32 f16 f16x2": "ftz?", "bf16 bf16x2 f64 s16 s32 s64": ""},
    "div": {"f32": "approx|full|R ftz?", "f64": "R", "u16 s16 u32 s32 u64 s64": ""},
    "rcp": {"f32": "approx|R ftz?", "f64": "approx|R ftz? approx:ftz"},
    "sqrt": {"f32": "approx|R ftz?", "f64": "R"},
    "rsqrt": {"f32 f64": "approx ftz?"},
    "sin cos lg2": {"f32": "approx ftz?"},
    "tanh": {"f32 f16 f16x2 bf16 bf16x2": "approx"},
    "mul24": {"u32 s32": "lo|hi"},
    "mad24": {"u32": "lo|hi", "s32": "lo|hi sat? sat:hi"},
}


class _ModSpec:
    """One instruction type's modifier groups and the constraints between them (see _ARITH_SPECS)."""

    def __init__(self, spec: str):
        self.groups: Tuple[Tuple[Tuple[str, ...], bool], ...] = ()
        self.needs: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
        self.excl: Tuple[Tuple[str, str], ...] = ()
        for tok in spec.split():
            if tok.startswith("!"):
                a, b = tok[1:].split(",")
                self.excl += ((a, b),)
            elif ":" in tok:
                a, b = tok.split(":")
                self.needs += ((a, tuple(b.split("|"))),)
            else:
                opt = tok.endswith("?")
                words = tuple(w for x in tok.rstrip("?").split("|") for w in (ROUND_F if x == "R" else (x,)))
                self.groups += ((words, not opt),)
        self.words = frozenset(w for g, _ in self.groups for w in g)

    def takes(self) -> str:
        """The modifiers in words, for a note."""
        if not self.groups:
            return "no modifiers"
        return ", ".join(("" if req else "optionally ") + _alternatives(words) for words, req in self.groups)


def _alternatives(words: Sequence[str]) -> str:
    return "." + words[0] if len(words) == 1 else \
        "one of " + " or ".join(", ".join("." + w for w in words).rsplit(", ", 1))


ARITH_MODS: Dict[str, Dict[str, _ModSpec]] = {}
for _ops, _by_type in _ARITH_SPECS.items():
    for _op in _ops.split():
        ARITH_MODS[_op] = {t: _ModSpec(spec) for types, spec in _by_type.items() for t in types.split()}
del _ops, _by_type, _op


def _words(ws) -> str:
    return " and ".join("." + w for w in ws)


class ModError(NamedTuple):
    """A modifier rule broken: `message` and `note` for a diagnostic, `kind` saying how, and `words` the modifiers
    concerned. kind "extra": words = the one the form does not take; "choice": the several written where one is
    allowed; "missing": the alternatives of a required group, none written; "needs": the alternatives one written
    word needs; "exclusive": the two that cannot be combined; "form": no such instruction form (words empty)."""
    message: str
    note: str
    kind: str
    words: Tuple[str, ...] = ()


def arith_modifier_error(op: str, type_name: str, words: Sequence[str]) -> Optional[ModError]:
    """The ModError where ptxas 13.0 refuses the modifier `words` (the opcode's words but its name and types) on the
    arithmetic instruction `op` of instruction type `type_name`, else None (also where ARITH_MODS has no rule for
    the pair). The builder and the linter both ask this."""
    spec = ARITH_MODS.get(op, {}).get(type_name)
    return None if spec is None else _spec_error(f"{op}.{type_name}", spec, words)


def _spec_error(name: str, spec: "_ModSpec", words: Sequence[str]) -> Optional[ModError]:
    """The ModError where the modifier `words` break `spec`, the rule of the instruction form `name`."""
    note = f"{name} takes {spec.takes()}"
    present = list(dict.fromkeys(w for w in words if w not in TYPE_WORDS))
    for w in present:
        if w not in spec.words:
            return ModError(f"{name} takes no .{w}", note, "extra", (w,))
    for group, required in spec.groups:
        have = [w for w in present if w in group]
        if len(have) > 1:
            return ModError(f"{name} takes {_alternatives(group)}, not {_words(have)}", note, "choice", tuple(have))
        if required and not have:
            return ModError(f"{name} needs {_alternatives(group)}", note, "missing", tuple(group))
    for a, alts in spec.needs:
        if a in present and not any(b in present for b in alts):
            return ModError(f"{name}: .{a} needs {' or '.join('.' + b for b in alts)}", note, "needs", tuple(alts))
    for a, b in spec.excl:
        if a in present and b in present:
            return ModError(f"{name}: .{a} cannot be combined with .{b}", note, "exclusive", (a, b))
    return None


# cvt between packed types (ptxas 13.0, tests/test_lint_cvt_modifiers.py): (d, a) -> (sources, modifiers)
PACKED_CVT = {("f16x2", "f32"): (2, "rn|rz relu? satfinite?"), ("bf16x2", "f32"): (2, "rn|rz relu? satfinite?"),
              ("f16x2", "e4m3x2"): (1, "rn relu?"), ("f16x2", "e5m2x2"): (1, "rn relu?"),
              ("e4m3x2", "f32"): (2, "rn satfinite relu?"), ("e5m2x2", "f32"): (2, "rn satfinite relu?"),
              ("e4m3x2", "f16x2"): (1, "rn satfinite relu?"), ("e5m2x2", "f16x2"): (1, "rn satfinite relu?")}
_PACKED_SPECS = {k: _ModSpec(v[1]) for k, v in PACKED_CVT.items()}


def packed_cvt_error(dtype: str, atype: str, words: Sequence[str]) -> Optional[ModError]:
    """The ModError where ptxas 13.0 refuses cvt.dtype.atype between the packed types of PACKED_CVT (and .f32) with
    the modifier `words`, else None; a pair outside the table is kind "form" (no such conversion)."""
    spec = _PACKED_SPECS.get((dtype, atype))
    if spec is None:
        return ModError(f"cvt.{dtype}.{atype} does not exist", "the packed conversions: " +
                        ", ".join(f"cvt.{d}.{a}" for d, a in PACKED_CVT), "form")
    return _spec_error(f"cvt.{dtype}.{atype}", spec, words)


# ------------------------------------------------------------------------------ comparisons and selections
# (ptxas 13.0, tests/test_lint_compare_types.py.) set.CmpOp.dtype.stype: the source types each destination type
# takes; .ftz on setp and set only with .f32, .f16 or .f16x2 sources, on slct only with an .f32 selector.
_INT_BITS = ("u16", "s16", "u32", "s32", "u64", "s64", "b16", "b32", "b64")
SET_TYPES: Dict[str, Tuple[str, ...]] = {
    "u32": _INT_BITS + ("f16", "f16x2", "bf16", "bf16x2", "f32", "f64"),
    "s32": _INT_BITS + ("f16", "f16x2", "bf16", "bf16x2", "f32", "f64"),
    "u16": ("f16", "bf16"), "s16": ("f16", "bf16"),
    "f16": _INT_BITS + ("f16", "f32", "f64"),
    "bf16": _INT_BITS + ("f16", "bf16", "f32", "f64"),
    "f16x2": ("f16x2",), "bf16x2": ("bf16x2",),
    "f32": _INT_BITS + ("f32", "f64"),
}
SLCT_TYPES = (_INT_BITS + ("f32", "f64"), ("s32", "f32"))      # (d, a and b's types; c's)
COMPARE_FTZ = ("f32", "f16", "f16x2")
# a .pred beside the instruction type, which ptxas 13.0 takes and ignores on these (on mul without .lo/.hi/.wide),
# and refuses on the others ("Unexpected instruction types specified")
PRED_IGNORED = frozenset(("add", "sub", "mul", "fma", "abs", "neg", "min", "max", "setp", "set", "rcp", "sqrt",
                          "rsqrt", "sin", "cos", "lg2", "ex2", "tanh", "cvt", "atom", "red"))


def set_types_error(dtype: str, stype: str) -> Optional[Tuple[str, str]]:
    """(message, note) where ptxas refuses set's destination type `dtype` with source type `stype`, else None."""
    srcs = SET_TYPES.get(dtype)
    if srcs is None:
        return (f"set has no .{dtype} destination",
                "set writes " + ", ".join("." + t for t in SET_TYPES))
    if stype not in srcs:
        return (f"set.{dtype} cannot compare .{stype} sources",
                f"set.{dtype} compares " + ", ".join("." + t for t in srcs))
    return None


def slct_types_error(dtype: str, ctype: str) -> Optional[Tuple[str, str]]:
    """(message, note) where ptxas refuses slct.dtype.ctype, else None."""
    if dtype not in SLCT_TYPES[0]:
        return f"slct has no .{dtype} form", "slct selects " + ", ".join("." + t for t in SLCT_TYPES[0])
    if ctype not in SLCT_TYPES[1]:
        return f"slct's selector c cannot be .{ctype}", "c is .s32 or .f32: slct.dtype.s32 or slct.dtype.f32"
    return None


# ------------------------------------------------------------------------------ ld and st memory orders
# (ptxas 13.0, tests/test_lint_memory_order.py.) One of .weak .volatile .relaxed .acquire (ld) .release (st); a scope
# only with .relaxed/.acquire/.release (which need one); those and .volatile not on .local, .param or .const memory;
# .mmio only as .mmio.relaxed.sys on global or generic memory; .nc only on .global and with no memory order; a
# cache operator with none of them but .weak; an eviction priority on global or generic memory, not .volatile or .mmio.
_ORDERS = ("weak", "volatile", "relaxed", "acquire", "release", "acq_rel")


def memory_order_error(op: str, words: Sequence[str]) -> Optional[Tuple[str, str]]:
    """(message, note) where ptxas refuses ld's or st's memory order, scope, state space, .nc or cache operator
    words together, else None. The builder and the linter both ask this."""
    w = set(words)
    orders = list(dict.fromkeys(x for x in words if x in _ORDERS))
    if len(orders) > 1:
        return (f"{op} takes one memory order, not {_words(orders)}",
                "one of .weak, .volatile, .relaxed, " + (".acquire" if op == "ld" else ".release"))
    order = orders[0] if orders else None
    scope = next((x for x in words if x in SCOPES), None)
    space = next((x for x in words if x.split("::")[0] in ("global", "shared", "local", "param", "const")), None)
    sp = space.split("::")[0] if space else None
    if "mmio" in w:
        if order != "relaxed" or scope not in (None, "sys") or sp not in (None, "global"):
            return f"{op}.mmio is {op}.mmio.relaxed.sys on global or generic memory", f"write {op}.mmio.relaxed.sys.global"
    if scope is not None and order in (None, "weak", "volatile"):
        strong = ".relaxed or ." + ("acquire" if op == "ld" else "release")
        return ((f"{op}.{scope} needs a memory order ({strong})", f"write {op}.relaxed.{scope}") if order is None else
                (f"{op}.{order} cannot be combined with a scope (.{scope})", f"drop .{scope}, or write {strong}"))
    if order not in (None, "weak") and sp in ("local", "param", "const"):
        return (f"{op}.{order} cannot be applied to .{space} memory",
                f".{order} is for global, shared and generic addresses")
    if "nc" in w:
        if sp != "global":
            return "ld.nc is for .global memory only", "write ld.global.nc"
        if order is not None:
            return f"ld.{order} cannot be combined with .nc", "drop one of them"
    cache = next((x for x in words if x in LD_CACHE or x in ST_CACHE), None)
    if cache is not None and order not in (None, "weak"):
        return f"{op}.{order} takes no cache operator (.{cache})", f"drop .{cache}"
    evict = next((x for x in words if x.startswith(("L1::", "L2::evict"))), None)
    if evict is not None:
        if sp not in (None, "global"):
            return f"{op}.{evict} cannot be applied to .{space} memory", "eviction priorities are for global memory"
        if order == "volatile" or "mmio" in w:
            return (f"{op}.{evict} cannot be combined with .{'mmio' if 'mmio' in w else order}",
                    f"drop .{evict}")
    return None


# vector atom/red (sm_90): .add only, on global or generic memory, of these types and sizes (ptxas 13.0: "Vector
# qualifier is not allowed for instruction 'atom'" for the rest; tests/test_lint_word_groups.py)
ATOM_VECTORS = {"f32": (2, 4), "f16": (2, 4, 8), "bf16": (2, 4, 8), "f16x2": (2, 4), "bf16x2": (2, 4)}
ATOM_VECTORS_NEED = ("sm_90", (8, 1))


def atom_vector_error(base: str, op: str, type_name: str, vec: int, space: Optional[str]) -> Optional[Tuple[str, str]]:
    """(message, note) where ptxas 13.0 refuses atom/red.op.vN.type on `space` (None: generic), else None."""
    sizes = ATOM_VECTORS.get(type_name, ())
    takes = "vectors are for .add of " + ", ".join(f".v{'/.v'.join(map(str, v))}.{t}" for t, v in ATOM_VECTORS.items())
    if op != "add" or vec not in sizes:
        return f"{base}.{op}.v{vec}.{type_name} does not exist", takes
    if space not in (None, "global"):
        return f"{base} on vectors is for global memory, not .{space}", f"write {base}.global.add.v{vec}.{type_name}"
    return None


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


# ------------------------------------------------------------------------------------------- modifier order
# How ptxas 13.0 reads an opcode (tests/test_lint_modifier_order.py probes every family and the core instructions
# with their modifiers reordered): the instruction's name is the longest run of its leading words that is one of
# its names (INSTRUCTION_NAMES, or the mnemonic alone), and the modifiers after it are taken in any order, except
# that the words of one ORDERED_WORDS group keep their order, which says which is which: the types (cvt.f32.s32 is
# not cvt.s32.f32; mma's D, A, B and C types, and the scale type after them in the block-scaled forms), the state
# spaces (cp.async.bulk's destination, then its source), the layouts (mma's A, then B), a bit operation before
# .popc, and createpolicy's primary priority before its secondary one. So
# `cp.reduce.async.bulk.global.shared::cta.add.bulk_group.u32`, `ld.u32.global` and
# `mma.sync.aligned.row.col.m16n8k16.f32.f16.f16.f32` assemble; a word of a name anywhere but right after the
# words before it in that name does not: `mul.u32.wide`, `cvta.global.to.u64`, `mbarrier.release.arrive.b64`
# ("Unknown modifier '.wide'").
INSTRUCTION_NAMES = frozenset((
    # tensor-core and async families (ptxgen.legality)
    "wgmma.mma_async", "wgmma.fence", "wgmma.commit_group", "wgmma.wait_group",
    "cp.async", "cp.async.commit_group", "cp.async.wait_group", "cp.async.wait_all", "cp.async.mbarrier.arrive",
    "cp.async.bulk", "cp.async.bulk.prefetch", "cp.async.bulk.tensor", "cp.async.bulk.prefetch.tensor",
    "cp.async.bulk.commit_group", "cp.async.bulk.wait_group", "cp.reduce.async.bulk", "cp.reduce.async.bulk.tensor",
    "mbarrier.init", "mbarrier.inval", "mbarrier.arrive", "mbarrier.arrive_drop", "mbarrier.arrive.expect_tx",
    "mbarrier.arrive_drop.expect_tx", "mbarrier.expect_tx", "mbarrier.complete_tx", "mbarrier.test_wait",
    "mbarrier.test_wait.parity", "mbarrier.try_wait", "mbarrier.try_wait.parity", "mbarrier.pending_count",
    "fence.proxy", "barrier.cluster.arrive", "barrier.cluster.wait", "setmaxnreg.inc", "setmaxnreg.dec",
    "st.async", "red.async", "tex.base", "tex.level", "tex.grad", "txq.level",
    "suld.b", "sust.b", "sust.p", "sured.b", "sured.p",
    # core instructions
    "mul.lo", "mul.hi", "mul.wide", "mad.lo", "mad.hi", "mad.wide", "madc.lo", "madc.hi", "mul24.lo", "mul24.hi",
    "mad24.lo", "mad24.hi", "dp2a.lo", "dp2a.hi", "div.full", "shf.l", "shf.r", "cvta.to", "membar.proxy",
    "bar.arrive", "bar.red", "bar.warp", "bar.cta", "bar.cta.arrive", "bar.cta.red",
    "barrier.arrive", "barrier.red", "barrier.cta", "barrier.cta.arrive", "barrier.cta.red",
    "createpolicy.fractional", "createpolicy.range", "createpolicy.cvt",
    "wmma.load.a", "wmma.load.b", "wmma.load.c", "wmma.store.d", "wmma.mma",
    "multimem.ld_reduce", "multimem.red", "multimem.st", "tensormap.replace",
))
_LONGEST_NAME = max(n.count(".") + 1 for n in INSTRUCTION_NAMES)
# mnemonic -> the words that only its names have after it (a word of a name that is also a modifier of the
# mnemonic would be a name word only where it comes right after the words before it: none is, so far)
NAME_WORDS: Dict[str, FrozenSet[str]] = {}
for _name in INSTRUCTION_NAMES:
    _w = _name.split(".")
    NAME_WORDS[_w[0]] = NAME_WORDS.get(_w[0], frozenset()) | frozenset(_w[1:])
del _name, _w

TYPE_WORDS = frozenset((
    "pred", "b1", "b8", "b16", "b32", "b64", "b128", "u4", "u8", "u16", "u32", "u64", "s4", "s8", "s16", "s32", "s64",
    "f16", "f16x2", "bf16", "bf16x2", "tf32", "f32", "f64", "e4m3", "e5m2", "e3m2", "e2m3", "e2m1", "ue8m0", "ue4m3",
    "e4m3x2", "e5m2x2", "e2m1x2", "e2m3x2", "e3m2x2", "ue8m0x2", "b8x16", "b6x16_p32", "b4x16_p64"))
SPACE_WORDS = frozenset(("global", "shared", "shared::cta", "shared::cluster", "local", "const", "param"))
# the groups whose words keep their order; a word in none of them goes anywhere after the name
ORDERED_WORDS = (TYPE_WORDS, SPACE_WORDS, frozenset(("row", "col")), frozenset(("and", "xor", "popc")),
                 frozenset(("L2::evict_last", "L2::evict_normal", "L2::evict_first", "L2::evict_unchanged")))
_GROUP_OF = {w: i for i, g in enumerate(ORDERED_WORDS) for w in g}


def name_length(words: Sequence[str]) -> int:
    """How many of an opcode's words (its text split at the dots) ptxas reads as the instruction's name."""
    n = 1
    for k in range(2, min(len(words), _LONGEST_NAME) + 1):
        if ".".join(words[:k]) in INSTRUCTION_NAMES:
            n = k
    return n


def group_of(word: str) -> Optional[int]:
    """The index in ORDERED_WORDS of the group a modifier word belongs to, or None."""
    return _GROUP_OF.get(word)


def order_key(words: Sequence[str]) -> tuple:
    """What ptxas reads an opcode's words as: its name, the words of each ORDERED_WORDS group in their order and
    the other modifiers as a multiset. Two spellings with one key are one instruction."""
    n = name_length(words)
    rest = words[n:]
    groups = [[] for _ in ORDERED_WORDS]
    free = []
    for w in rest:
        g = _GROUP_OF.get(w)
        if g is None:
            free.append(w)
        else:
            groups[g].append(w)
    return ".".join(words[:n]), tuple(tuple(g) for g in groups), tuple(sorted(free))


def misplaced_name_words(words: Sequence[str]) -> Tuple[str, ...]:
    """The words after an opcode's name that belong to names of its mnemonic only (`wide` in mul.u32.wide): ptxas
    refuses them there ("Unknown modifier")."""
    own = NAME_WORDS.get(words[0])
    if not own:
        return ()
    return tuple(w for w in words[name_length(words):] if w in own)


def name_first(words: Sequence[str]) -> Optional[str]:
    """The spelling of an opcode with its name words moved to the front, in the order of the one name they make
    (`mul.wide.u32` for mul.u32.wide), or None where they make no name."""
    own = NAME_WORDS.get(words[0], frozenset())
    mine = [w for w in words[1:] if w in own]
    for name in INSTRUCTION_NAMES:
        nw = name.split(".")
        if nw[0] == words[0] and sorted(nw[1:]) == sorted(mine):
            return ".".join([name] + [w for w in words[1:] if w not in own])
    return None


def name_order_message(read: str, bad: Sequence[str], name: str) -> str:
    """The error of the name words `bad` (misplaced_name_words) after the instruction name `read` that ptxas reads,
    where they belong in the name `name`."""
    words = ", ".join("." + w for w in bad)
    verb = "is" if len(bad) == 1 else "are"
    return (f"{words} {verb} part of the instruction name {name}, which opens the opcode, its words in that order: "
            f"ptxas reads {read} with {words} among its modifiers (\"Unknown modifier '.{bad[0]}'\")")


# ---- .pragma strings (lint and the builder's pragma())
_PRAGMA_WORDS = re.compile(r"(\S+)\s*(.*?)\s*").fullmatch     # the name, then the rest (no leading space)
_FREQUENCY = re.compile(r"(0[xX][0-9a-fA-F]+|[0-9]+)").fullmatch
_MASK = re.compile(r"-?(0[xX][0-9a-fA-F]+|[0-9]+)").fullmatch
PRAGMAS_NOTE = "the pragmas are nounroll, enable_smem_spilling, used_bytes_mask N and frequency N"


def pragma_error(text: str, where: str):
    """What ptxas 13.0 says of the `.pragma` string `text` at `where` ("module", "header": a kernel's header, or
    "body"), as (severity, message, notes), or None where it takes it (tests/test_lint_header_directives.py):
    "nounroll" anywhere; "enable_smem_spilling ...", "used_bytes_mask N" (an integer) and "frequency N" (N > 0)
    only in a body; "coroutine ..." ignored with a warning; any other string an error at module scope and ignored
    with a warning in a function."""
    m = _PRAGMA_WORDS(text)
    name, arg = (m.group(1), m.group(2)) if m else ("", text)
    if text == "nounroll":
        return None
    if name in ("enable_smem_spilling", "used_bytes_mask", "frequency"):
        if where != "body":
            return ("error", f".pragma \"{text}\" belongs in a function's body (ptxas: \"Pragma '{text}' is allowed "
                             "only within function scope\")", ())
        if name != "enable_smem_spilling" and not arg:
            return ("error", f".pragma \"{text}\" needs a value (ptxas: \"Argument(s) to pragma '{name}' cannot be "
                             "empty\")", (f"write \"{name} {'1' if name == 'frequency' else '0xf'}\"",))
        if name == "frequency" and not (_FREQUENCY(arg) and int(arg, 0) > 0) \
                or name == "used_bytes_mask" and not _MASK(arg):
            return ("error", f".pragma \"{text}\": {arg!r} is not a value it takes (ptxas: \"Invalid value '{arg}' "
                             f"specified for .pragma '{text}'\")",
                    ("frequency takes one positive integer" if name == "frequency" else
                     "used_bytes_mask takes one integer",))
        return None
    if name == "coroutine":
        return ("warning", f".pragma \"{text}\": ptxas 13.0 ignores it (\"Unknown pragma '{text}'. Ignoring "
                           "pragma\")", ())
    if where == "module":
        return ("error", f".pragma \"{text}\" is not one ptxas knows (ptxas: \"Pragma '{text}' not supported\")",
                (PRAGMAS_NOTE,))
    return ("warning", f".pragma \"{text}\" is not one ptxas knows; it ignores it (\"Pragma '{text}' "
                       "unsupported\")", (PRAGMAS_NOTE,))
