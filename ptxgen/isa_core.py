"""Operand-type rules of the core (non tensor-core) instructions, as data.

The builder checks its calls against these tables and the linter checks parsed instructions with the
same tables, so each rule is written once. Facts from the PTX ISA 9.0 instruction pages; where ptxas
13.0 and the manual differ, the tables follow ptxas (tests/test_core_ptxas.py holds the evidence).
Also how ptxas reads an opcode's words (its instruction name first, then modifiers in any order but for the
words whose order says which is which: order_key), which ptxgen.legality and the linter share.
"""
from __future__ import annotations

import re
from typing import Dict, FrozenSet, Optional, Sequence, Tuple

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
# not cvt.s32.f32; mma's D, A, B and C types), the state spaces (cp.async.bulk's destination, then its source),
# the layouts (mma's A, then B), a bit operation before .popc, and createpolicy's primary priority before its
# secondary one. So `cp.reduce.async.bulk.global.shared::cta.add.bulk_group.u32`, `ld.u32.global` and
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
    "f16", "f16x2", "bf16", "bf16x2", "tf32", "f32", "f64", "e4m3", "e5m2", "e4m3x2", "e5m2x2", "e2m1x2", "e2m3x2",
    "e3m2x2", "ue8m0x2", "b8x16", "b6x16_p32", "b4x16_p64"))
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
