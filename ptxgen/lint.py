"""Report what ptxas would reject in a PTX module, at the right line, without running any NVIDIA tool.

`lint_ptx(text)` parses with ptxgen.parse and checks the IR; `lint_module(module)` checks builder
output with the same code. Instruction legality comes from two shared sources and is never restated
here: ptxgen.legality (tensor-core and async families: shapes, types, operand fragments, target and
PTX ISA gating) and ptxgen.isa_core (operand types, comparison, rounding and atomic tables of the core
instructions). This module adds what those tables do not say: which instruction names and modifier
words exist, where each operand's register type comes from, declarations, labels and calls.

Diagnostic codes (stable; each with a rejected and an accepted example):
"""
from __future__ import annotations

import difflib
import gc
import math
import re
from dataclasses import dataclass, replace
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from . import isa_core as C
from .asynccheck import ASYNC_CODES, check_function as _check_async
from .diag import Diagnostic, SourceLoc
from . import legality
from .legality import OperandInfo
from .ops.operands import operand_info, operand_infos, register_operand_info, tensor_info, var_space
from .errors import InternalError
from .ir import Addr, Function, Guard, Imm, Instr, Label, LabelDef, Module, Raw, Reg, SpecialReg, Sym, Vec
from .parse import (AddrList, CallArgs, Decl, FloatImm, ParamSym, ParseResult, PredPair, SymOffset, TargetList,
                    loc_numbers, parse, parse_target_list, undeclarable_type)
from .target import (LATEST_PTX, REGISTER_RULE_MIN_SM, PtxVersion, Target, cta_register_limit, max_regs_for_threads,
                     read_version, version_error, version_str)
from .types import (VECTOR_KIND, Type, b32, clashing_neighbour, compatible, f16x2, f32, get_type, pred, s32, tf32,
                    u32, u64, vector_bits)

__all__ = ["lint_ptx", "lint_file", "lint_module", "lint_result", "read_ptx", "CODES", "legality_check"]

# code -> (what it means, a line ptxas rejects, the line it accepts)
CODES: Dict[str, Tuple[str, str, str]] = {
    "PTX-E-SYNTAX": ("not PTX syntax (reported at the offending token), or a number ptxas cannot read: an integer "
                     "literal past 64 bits, a decimal one out of the range of .f64, above 32 bits where a directive "
                     "reads 32 (\"Constant overflow\")",
                     "add.s32 %r1, %r2 %r3;", "add.s32 %r1, %r2, %r3;"),
    "PTX-E-OPCODE": ("no instruction has this name",
                     "addx.s32 %r1, %r2, %r3;", "add.s32 %r1, %r2, %r3;"),
    "PTX-E-MODIFIER": ("a modifier the instruction does not have, or a required one missing",
                       "st.global.ca.u32 [%rd1], %r1;", "st.global.cg.u32 [%rd1], %r1;"),
    "PTX-E-TYPE": ("instruction type not legal for the instruction, or an operand of the wrong type/width",
                   "add.s32 %r1, %rd1, %r2;   // %rd1 is .b64", "add.s32 %r1, %r3, %r2;"),
    "PTX-E-OPERANDS": ("wrong number or kind of operands",
                       "add.s32 %r1, %r2;", "add.s32 %r1, %r2, %r3;"),
    "PTX-E-SHAPE": ("a tensor-core shape or matrix count that does not exist (ptxgen.legality)",
                    "ldmatrix.sync.aligned.m8n8.x3.shared.b16 ...", "ldmatrix.sync.aligned.m8n8.x4.shared.b16 ..."),
    "PTX-E-LAYOUT": ("a layout the form does not take (ptxgen.legality)",
                     "mma.sync.aligned.m16n8k16.row.row.f32.f16.f16.f32 ...",
                     "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 ..."),
    "PTX-E-UNKNOWN": ("a tensor-core/async opcode spelling that no form has (ptxgen.legality)",
                      "ldmatrix.x4 {...}, [%r1];", "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {...}, [%r1];"),
    "PTX-E-TARGET": ("needs a later (or an arch-specific) target than the module's .target",
                     ".target sm_80 ... wgmma.fence.sync.aligned;", ".target sm_90a ... wgmma.fence.sync.aligned;"),
    "PTX-E-VERSION": ("needs a later PTX ISA .version",
                      ".version 7.8 ... elect.sync %r1|%p1, -1;", ".version 8.0 ... elect.sync %r1|%p1, -1;"),
    "PTX-E-UNDECLARED": ("a register that is not declared in this scope (or declared after its use)",
                         ".reg .b32 %r<3>;  mov.u32 %r3, 0;", ".reg .b32 %r<4>;  mov.u32 %r3, 0;"),
    "PTX-E-UNDEFINED": ("a variable, parameter or function name that is not declared before its use",
                        "ld.global.u32 %r1, [counter];  // no .global counter", ".global .u32 counter; ..."),
    "PTX-E-REDECLARED": ("a name declared twice in one scope",
                         ".reg .b32 %r<3>; .reg .b32 %r1;", ".reg .b32 %r<3>; .reg .b32 %q1;"),
    "PTX-E-DECL": ("a declaration PTX does not allow (module-scope .reg/.local/.param, a kernel with return "
                   "values, the old .tex space, a type only instructions take: .bf16, .bf16x2, .tf32, and the fp8, "
                   "fp6 and fp4 types for variables and a function definition's parameters, an initial value of the "
                   "wrong kind or where none is allowed: `.global .f32 "
                   "x = 1;`, `.shared .u32 s = 0;`, an array of no size: `.global .b8 g[];`, an 8- or 16-bit "
                   "integer or .pred parameter of a function a kernel reaches, which the ABI cannot pass; a "
                   "section's data out of its type's range, `.b8 256`, or a label in .b8 or .b16 data)",
                   ".reg .b32 r;  // at module scope",
                   ".global .b32 r;"),
    "PTX-E-LABEL": ("a branch (or jump table) to a label that this function does not define where it is visible",
                    "bra $L_done;   // no $L_done:", "bra $L_done; ... $L_done:"),
    "PTX-E-DUP-LABEL": ("a label defined twice in one scope", "L1: L1: ret;", "L1: L2: ret;"),
    "PTX-W-UNUSED-LABEL": ("(warning) a label nothing refers to", "L_unused: ret;", "ret;"),
    "PTX-E-CALL": ("a call to something that is not a declared function, or with arguments that do not match",
                   "call.uni (r), f, (a, b);   // f takes one .param", "call.uni (r), f, (a);"),
    "PTX-E-DIRECTIVE": ("a missing or bad module directive (.version/.target/.address_size), or a bad "
                        "performance directive",
                        ".version 6.0\n.target sm_80", ".version 7.0\n.target sm_80"),
    "PTX-W-DIRECTIVE": ("(warning) a performance directive ptxas takes but a launch cannot meet: a CTA of more "
                        "than 1024 threads, or a .maxnreg that lets ptxas use more registers than a CTA of "
                        ".reqntid threads launches with (ptxgen.target.max_regs_for_threads); a .maxnreg above "
                        "255, which ptxas ignores",
                        ".maxntid 2048, 1, 1", ".maxntid 1024, 1, 1"),
    "PTX-W-MISCOMPILE": ("(warning) legal PTX that ptxas (CUDA 13.0) compiles into a kernel that fails at run time, "
                         "or into other data than it says (an .f16x2 variable's initial value that is not one "
                         "integer per element) (ptxgen.legality)",
                         ".target sm_90a ... cp.async.cg.shared.global.L2::cache_hint [%r1], [%rd1], 16, %rd2;",
                         ".target sm_90a ... cp.async.cg.shared.global [%r1], [%rd1], 16;"),
    "PTX-W-EXTERN": ("(warning) an .extern function called or taken by address, or an .extern .global/.const "
                     "variable, that the module does not define: ptxas without -c and cuModuleLoadData stop "
                     "(\"Unresolved extern function\") or define the variable here; it needs linking",
                     ".extern .func g(); ... call g;", ".func g()\n{ ret; }\n... call g;"),
    "PTX-W-PRAGMA": ("(warning) a .pragma in a function that ptxas does not know and ignores",
                     '.pragma "unroll 4";', '.pragma "nounroll";'),
    "PTX-W-ADVISORY": ("(note) legal PTX that ptxas (CUDA 13.0) assembles with an \"Advisory\" of its own: plain "
                       "mma.sp, which ptxas expects to be much slower on future architectures than "
                       ".sp::ordered_metadata (ptxgen.legality)",
                       "mma.sp.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 ...",
                       "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 ..."),
    "PTX-E-INTERNAL": ("a bug in ptxgen's own checks (please report it); the file may well be fine", "-", "-"),
}
CODES.update(ASYNC_CODES)  # the async-protocol checks over each function's CFG (ptxgen.asynccheck)


def _codes_table() -> str:
    rows = ["| code | meaning | rejected | accepted |", "| --- | --- | --- | --- |"]
    for code, (what, bad, good) in CODES.items():
        rows.append(f"| {code} | {what} | `{bad}` | `{good}` |".replace("\n", " \\n "))
    return "\n".join(rows)


__doc__ = (__doc__ or "") + "\n" + _codes_table() + "\n"

# -------------------------------------------------------------------------------------------- instructions
# Every PTX ISA 9.0 instruction name, with the first target and PTX ISA version that have it where that is
# later than what every supported target has anyway (sm_50, PTX 4.0). Keys are the first opcode token, or
# the first tokens where a form is newer than its mnemonic (the longest key that matches wins). Families
# that ptxgen.legality covers are gated there and are listed here only so that their names exist.
_NONE = (None, None)
INSTRUCTIONS: Dict[str, Tuple[Optional[str], Optional[PtxVersion]]] = {
    **{op: _NONE for op in (
        "add", "sub", "mul", "mad", "mul24", "mad24", "sad", "div", "rem", "abs", "neg", "min", "max", "popc",
        "clz", "bfind", "brev", "bfe", "bfi", "prmt", "testp", "copysign", "fma", "rcp", "sqrt", "rsqrt", "sin",
        "cos", "lg2", "ex2", "set", "setp", "selp", "slct", "and", "or", "xor", "not", "cnot", "shf", "shl",
        "shr", "mov", "ld", "ldu", "st", "prefetch", "prefetchu", "isspacep", "cvta", "cvt", "tex", "tld4",
        "txq", "istypep", "suq", "bra", "call", "ret", "exit", "bar",
        "barrier", "membar", "atom", "red", "vote", "shfl", "trap", "brkpt", "pmevent", "addc", "subc", "madc",
        "vadd", "vsub", "vabsdiff", "vmin", "vmax", "vshl", "vshr", "vmad", "vset", "vadd2", "vsub2", "vavrg2",
        "vabsdiff2", "vmin2", "vmax2", "vset2", "vadd4", "vsub4", "vavrg4", "vabsdiff4", "vmin4", "vmax4",
        "vset4",
        # gated by ptxgen.legality
        "ldmatrix", "stmatrix", "wgmma", "mbarrier", "fence", "mapa", "getctarank", "setmaxnreg", "elect",
        "griddepcontrol", "cp")},
    "lop3": (None, (4, 3)),
    "fns": (None, (6, 0)),
    "activemask": (None, (6, 2)),
    "shfl.sync": (None, (6, 0)),
    "vote.sync": (None, (6, 0)),
    "bar.warp": (None, (6, 0)),
    "barrier.sync": (None, (6, 0)),
    "barrier.arrive": (None, (6, 0)),
    "barrier.red": (None, (6, 0)),
    # ptxas 13.0: "Feature 'barrier.cta' requires PTX ISA .version 7.8 or later" (bar.cta too)
    "barrier.cta": (None, (7, 8)),
    "bar.cta": (None, (7, 8)),
    "brx.idx": (None, (6, 0)),
    # the surface instructions' names include their first modifier
    "suld.b": _NONE, "sust.b": _NONE, "sust.p": _NONE, "sured.b": _NONE, "sured.p": _NONE,
    "dp4a": ("sm_61", (5, 0)),
    "dp2a": ("sm_61", (5, 0)),
    "match": ("sm_70", (6, 0)),
    "wmma": ("sm_70", (6, 0)),
    "mma": ("sm_70", (6, 4)),
    "mma.sp": ("sm_80", (7, 1)),
    "nanosleep": ("sm_70", (6, 3)),
    "bmsk": ("sm_70", (7, 6)),
    "szext": ("sm_70", (7, 6)),
    "movmatrix": ("sm_75", (7, 8)),
    "tanh": ("sm_75", (7, 0)),
    "cvt.pack": ("sm_72", (6, 5)),
    "redux": ("sm_80", (7, 0)),
    "applypriority": ("sm_80", (7, 4)),
    "discard": ("sm_80", (7, 4)),
    "createpolicy": ("sm_80", (7, 4)),
    "alloca": ("sm_52", (7, 3)),
    "stacksave": ("sm_52", (7, 3)),
    "stackrestore": ("sm_52", (7, 3)),
    "st.async": ("sm_90", (8, 1)),
    "red.async": ("sm_90", (8, 1)),
    "multimem": ("sm_90", (8, 1)),
    "cp.reduce": ("sm_90", (8, 0)),
    "prefetch.tensormap": ("sm_90", (8, 0)),
    "tensormap": ("sm_90", (8, 3)),
    "tensormap.replace": ("sm_90a", (8, 3)),
    "st.bulk": ("sm_100", (8, 6)),
    "clusterlaunchcontrol": ("sm_100", (8, 6)),
    "tcgen05": ("sm_100f", (8, 6)),
    "wgmma.mma_async.sp": ("sm_90a", (8, 2)),
}

# opcode modifiers that raise the target or version of any instruction that carries them; a key
# "op.modifier" raises only op's (`_OP_MODIFIER_NEEDS`), and of those an instruction reports its highest
# unmet target and its highest unmet version once each, naming the first such modifier in this table
MODIFIER_NEEDS: Dict[str, Tuple[Optional[str], Optional[PtxVersion]]] = {
    "shared::cluster": ("sm_90", (7, 8)),
    "cluster": ("sm_90", (7, 8)),
    "L2::cache_hint": ("sm_80", (7, 4)),
    "L2::64B": ("sm_75", (7, 4)),
    "L2::128B": ("sm_75", (7, 4)),
    "L2::256B": ("sm_80", (7, 4)),
    "L1::evict_normal": ("sm_70", (7, 4)),
    "L1::evict_unchanged": ("sm_70", (7, 4)),
    "L1::evict_first": ("sm_70", (7, 4)),
    "L1::evict_last": ("sm_70", (7, 4)),
    "L1::no_allocate": ("sm_70", (7, 4)),
    "relaxed": ("sm_70", (6, 0)),
    "acquire": ("sm_70", (6, 0)),
    "release": ("sm_70", (6, 0)),
    "acq_rel": ("sm_70", (6, 0)),
    "mmio": ("sm_70", (8, 2)),
    "v8": ("sm_100", (8, 8)),
    # the .b128 type (ld, st, ldu, mov, atom.cas/.exch): PTX ISA 8.3; atom's from sm_90 (C.ATOM_B128_NEEDS)
    "b128": (None, legality.B128_VERSION),
    "atom.b128": (C.ATOM_B128_NEEDS[0], None),
    "atom.bf16": C.ATOM_BF16_NEEDS, "atom.bf16x2": C.ATOM_BF16_NEEDS,
    "red.bf16": C.ATOM_BF16_NEEDS, "red.bf16x2": C.ATOM_BF16_NEEDS,
    # wmma's forms beyond .m16n16k16 .f16/.f32 (sm_70, PTX ISA 6.0), as ptxas 13.0 gates them (probed at
    # sm_70 ... sm_90a and PTX ISA 6.0 ... 9.0): the element types first, which say the most ...
    "wmma.s8": ("sm_72", (6, 3)), "wmma.u8": ("sm_72", (6, 3)),
    "wmma.s4": ("sm_75", (6, 3)), "wmma.u4": ("sm_75", (6, 3)), "wmma.b1": ("sm_75", (6, 3)),
    # (ptxas reports no version of its own for .bf16 and .tf32, which need sm_80 and so PTX ISA 7.0 anyway;
    # 7.0 is the PTX ISA's)
    "wmma.bf16": ("sm_80", (7, 0)), "wmma.tf32": ("sm_80", (7, 0)), "wmma.f64": ("sm_80", (7, 0)),
    "wmma.s32": ("sm_72", (6, 3)),
    "wmma.and": ("sm_80", (7, 1)),
    # ... then the shapes, which matter for the .f32 (and .s32) c and d fragments they share
    "wmma.m8n32k16": (None, (6, 1)), "wmma.m32n8k16": (None, (6, 1)),
    "wmma.m8n8k32": ("sm_75", (6, 3)), "wmma.m8n8k128": ("sm_75", (6, 3)),
    "wmma.m16n16k8": ("sm_80", (7, 0)), "wmma.m8n8k4": ("sm_80", (7, 0)),
    # .aligned, which wmma takes from PTX ISA 6.3 on and needs from then on (_wmma_rules)
    "wmma.aligned": (None, (6, 3)),
}
# the "op.modifier" keys of MODIFIER_NEEDS by op, in table order
_OP_MODIFIER_NEEDS: Dict[str, List[Tuple[str, Tuple[Optional[str], Optional[PtxVersion]]]]] = {}
for _key, _need in MODIFIER_NEEDS.items():
    if "." in _key and "::" not in _key:
        _OP_MODIFIER_NEEDS.setdefault(_key.split(".")[0], []).append((_key.split(".", 1)[1], _need))
del _key, _need

_TYPE_WORDS = frozenset(("pred", "b8", "b16", "b32", "b64", "b128", "u8", "u16", "u32", "u64", "s8", "s16", "s32",
                         "s64", "f16", "f16x2", "bf16", "bf16x2", "tf32", "f32", "f64", "e4m3", "e5m2", "e4m3x2",
                         "e5m2x2", "e2m1x2", "e2m3x2", "e3m2x2", "ue8m0x2", "s2f6x2", "f8x2", "f6x2", "f4x2"))
# the state spaces whose memory an instruction that writes it cannot name (ptxas 13.0: "State space incorrect")
_NO_WRITE_SPACES = {"st": ("const",), "atom": ("const", "param", "local"), "red": ("const", "param", "local")}
_SPACES = frozenset(("global", "shared", "shared::cta", "shared::cluster", "local", "param", "param::entry",
                     "param::func", "const", "generic"))
_ROUND = frozenset(C.ROUND_F)
_ROUND_I = frozenset(C.ROUND_I)
_SEMS = frozenset(C.MEM_SEMS) | {"weak", "volatile", "mmio"}
_SCOPES = frozenset(C.SCOPES)
_EVICT = frozenset(("L1::evict_normal", "L1::evict_unchanged", "L1::evict_first", "L1::evict_last",
                    "L1::no_allocate", "L2::evict_first", "L2::evict_last", "L2::evict_normal", "L2::cache_hint",
                    "L2::64B", "L2::128B", "L2::256B"))
_VEC = frozenset(("v2", "v4", "v8"))
_VECTOR_OPS = ("ld", "ldu", "st")    # whose vector sizes isa_core.vector_access rules on

# modifier words (besides the instruction type(s)) each core instruction takes, in any order as ptxas
# takes them; a word outside the set is PTX-E-MODIFIER
_MODS: Dict[str, frozenset] = {}


def _mods(ops: Iterable[str], words: Iterable[str]):
    s = frozenset(words)
    for op in ops:
        _MODS[op] = s


_mods(("add", "sub"), _ROUND | {"ftz", "sat", "cc", "relu", "oob"})
_mods(("addc", "subc"), {"cc", "sat"})
_mods(("mul",), _ROUND | {"ftz", "sat", "lo", "hi", "wide", "relu"})
_mods(("mad",), _ROUND | {"ftz", "sat", "lo", "hi", "wide", "cc"})
_mods(("madc",), {"lo", "hi", "cc", "sat"})
_mods(("mul24", "mad24"), {"lo", "hi", "sat"})
_mods(("fma",), _ROUND | {"ftz", "sat", "relu", "oob"})
_mods(("div",), _ROUND | {"ftz", "approx", "full"})
_mods(("rem", "sad", "popc", "clz", "brev", "and", "or", "xor", "not", "cnot", "shl", "selp", "copysign",
       "activemask", "bfe", "bfi", "fns"), ())
_mods(("szext",), {"clamp", "wrap"})
_mods(("bmsk",), {"clamp", "wrap"})
_mods(("shr",), ())
_mods(("shf",), {"l", "r", "clamp", "wrap"})
_mods(("abs", "neg"), {"ftz"})   # (ptxas 13.0: "Illegal modifier '.relu' for instruction 'abs'")
_mods(("min", "max"), {"ftz", "NaN", "xorsign", "abs", "relu"})
_mods(("rcp", "sqrt"), _ROUND | {"ftz", "approx"})
_mods(("rsqrt",), {"ftz", "approx"})
_mods(("sin", "cos", "lg2", "ex2", "tanh"), {"ftz", "approx"})
_mods(("bfind",), {"shiftamt"})
_mods(("prmt",), set(C.PRMT_MODES))
_mods(("testp",), {"finite", "infinite", "number", "notanumber", "normal", "subnormal"})
_mods(("setp", "set"), set(C.CMP_FLOAT) | set(C.CMP_INT) | set(C.BOOL_OPS) | {"ftz"})
_mods(("slct",), {"ftz"})
_mods(("mov",), {"v2", "v4"})
_mods(("lop3",), set())
_mods(("dp4a", "dp2a"), {"lo", "hi"})
_mods(("cvta",), _SPACES | {"to"})
_mods(("cvt",), _ROUND | _ROUND_I | {"rna", "rs", "ftz", "sat", "relu", "satfinite"})
_mods(("isspacep",), _SPACES)
_mods(("ld",), _SPACES | _SEMS | _SCOPES | _EVICT | _VEC | set(C.LD_CACHE) | {"nc", "unified"})
_mods(("ldu",), {"global"} | _VEC)
_mods(("st",), _SPACES | _SEMS | _SCOPES | _EVICT | _VEC | set(C.ST_CACHE))
_mods(("prefetch", "prefetchu"), {"global", "local", "L1", "L2", "L2::evict_last", "L2::evict_normal"})
_mods(("atom", "red"), _SPACES | _SEMS | _SCOPES | set(C.ATOM_OPS) | {"noftz", "L2::cache_hint"} | _VEC)
_mods(("bra", "ret", "call"), {"uni"})
_mods(("brx",), {"idx", "uni"})
_mods(("exit", "trap", "brkpt"), ())
_mods(("bar",), {"sync", "arrive", "red", "popc", "and", "or", "cta", "warp", "all", "any"})
_mods(("barrier",), {"sync", "arrive", "red", "popc", "and", "or", "aligned", "cta"})
_mods(("membar",), {"cta", "gl", "sys", "proxy", "alias"})
_mods(("vote",), set(C.VOTE_MODES) | {"sync"})
_mods(("shfl",), set(C.SHFL_MODES) | {"sync"})
_mods(("match",), {"any", "all", "sync"})
_mods(("redux",), {"sync", "add", "min", "max", "and", "or", "xor", "abs", "NaN"})
_mods(("nanosleep",), ())
_mods(("alloca",), {"local"})
_WMMA_SHAPES = frozenset(("m16n16k16", "m8n32k16", "m32n8k16", "m16n16k8", "m8n8k4", "m8n8k32", "m8n8k128"))
# the register types a wmma fragment of each element type is held in, as ptxas 13.0 takes them (probed:
# .f16 fragments in .b32 or .f16x2, .f32 in .b32 or .f32, .bf16 and .tf32 only in .b32, the integer and
# bit types in any 32-bit integer register, .f64 in .b64 or .f64; anything else is "Arguments mismatch")
_WMMA_FRAG_REGS = {"f16": ("b32", "f16x2"), "f32": ("b32", "f32"), "bf16": ("b32",), "tf32": ("b32",),
                   "f64": ("b64", "f64")}
_WMMA_FRAG_REGS.update((t, ("b32", "s32", "u32")) for t in ("s8", "u8", "s4", "u4", "b1", "s32"))
_WMMA_AB_TYPES = ("f16", "bf16", "tf32", "s8", "u8", "s4", "u4", "b1", "f64")    # a and b fragments' elements
_WMMA_CD_TYPES = ("f16", "f32", "s32", "f64")                                    # c and d fragments'
# registers a fragment holds (PTX ISA's wmma fragments; ptxas 13.0 takes exactly these counts and no other
# shape for an a or b element type, 168 + 63 cases probed): (a or b element type, shape) -> (a, b) ...
_WMMA_AB_REGS = {("f16", "m16n16k16"): (8, 8), ("f16", "m8n32k16"): (8, 8), ("f16", "m32n8k16"): (8, 8),
                 ("bf16", "m16n16k16"): (4, 4), ("bf16", "m8n32k16"): (2, 8), ("bf16", "m32n8k16"): (8, 2),
                 ("tf32", "m16n16k8"): (4, 4), ("s4", "m8n8k32"): (1, 1), ("u4", "m8n8k32"): (1, 1),
                 ("b1", "m8n8k128"): (1, 1), ("f64", "m8n8k4"): (1, 1)}
_WMMA_AB_REGS.update(((t, sh), n) for t in ("s8", "u8")
                     for sh, n in (("m16n16k16", (2, 2)), ("m8n32k16", (1, 4)), ("m32n8k16", (4, 1))))
# ... and (c or d element type, shape) -> registers. The PTX ISA gives the sub-byte shapes .s32 c and d
# only; ptxas 13.0 takes .f32 there too, in 2 registers (.b32 or .f32), for wmma.load.c and wmma.store.d
# (wmma.mma with those inputs accumulates in .s32 only). Every other count, and a c or d type at a shape
# not listed, ptxas refuses (378 loads and stores probed: each type at each shape, 1 to 9 registers).
_WMMA_CD_REGS = {("s32", "m8n8k32"): 2, ("s32", "m8n8k128"): 2, ("f32", "m8n8k32"): 2, ("f32", "m8n8k128"): 2,
                 ("f64", "m8n8k4"): 2}
_WMMA_CD_REGS.update(((t, sh), n) for t, n in (("f16", 4), ("f32", 8), ("s32", 8))
                     for sh in ("m16n16k16", "m8n32k16", "m32n8k16"))
_WMMA_CD_REGS[("f32", "m16n16k8")] = 8
_mods(("wmma",), {"load", "store", "mma", "a", "b", "c", "d", "sync", "aligned", "row", "col", "global", "shared",
                  "shared::cta", "satfinite", "xor", "and", "popc", "rn", "rz", "rm", "rp", "s4", "u4", "b1"}
      | _WMMA_SHAPES)

_BIT_TYPES = {n: get_type(f"b{n}") for n in (8, 16, 32, 64, 128)}
_STORAGE = ("b8", "b16", "b32", "b64", "b128", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "f32", "f64")
_INT_TYPES = ("u16", "s16", "u32", "s32", "u64", "s64")   # (addc.u16, madc.hi.u16: ptxas 13.0 takes 16 bits too)
# the instruction types each op takes when isa_core.TYPES has no row for it
_EXTRA_TYPES: Dict[str, Tuple[str, ...]] = {
    "addc": _INT_TYPES, "subc": _INT_TYPES, "madc": _INT_TYPES,
    "mul24": ("u32", "s32"), "mad24": ("u32", "s32"), "sad": ("u16", "u32", "u64", "s16", "s32", "s64"),
    "cnot": ("b16", "b32", "b64"), "rsqrt": ("f32", "f64"), "tanh": ("f32", "f16", "f16x2", "bf16", "bf16x2"),
    "copysign": ("f32", "f64"), "bfind": ("u32", "u64", "s32", "s64"), "testp": ("f32", "f64"),
    "lop3": ("b32", "b64"), "slct": (), "popc": ("b32", "b64"), "activemask": ("b32",), "fns": ("b32",),
    "bmsk": ("b32",), "szext": ("u32", "s32"), "shf": ("b32",), "nanosleep": ("u32",),
    "cvta": ("u32", "u64"), "redux": ("u32", "s32", "b32", "f32"), "match": ("b32", "b64"),
    # the storage types: no .f16/.bf16/.f16x2 ld or st ("Unexpected instruction types"), halves move as .b16
    "ld": _STORAGE, "st": _STORAGE, "ldu": _STORAGE,
}


@dataclass
class _Op:
    """What one opcode string means, computed once per lint run (target and version are fixed)."""

    base: str
    mods: Tuple[str, ...]
    diags: List[Tuple[str, str, Tuple[str, ...]]]  # (code, message, notes) about the opcode itself
    sig: Optional[list]  # expected operands, or None: types not checked
    family: bool  # ptxgen.legality checks this one
    ty: Optional[Type] = None
    counts: Optional[Tuple[int, int]] = None
    fast: Optional[tuple] = None  # per operand: (type, wider_ok) of a plain register slot, else None
    wide_addr: bool = False  # generic or .global [addresses]: 64-bit registers under .address_size 64
    plain: Optional[tuple] = None  # `fast` when every slot is a plain register slot and nothing else is checked
    space: Optional[str] = None  # the state space among the modifiers (shared::cta -> shared), None: generic
    wmma: Optional[tuple] = None  # wmma with valid modifiers: (shape, ((operand, fragment, element type), ...))


# operand slot kinds
_D, _S, _P, _PD, _A, _X, _DV, _SV, _L = "d", "s", "p", "pd", "a", "x", "dv", "sv", "l"
# the instructions outside legality's families whose destination may be the sink `_` (ptxas 13.0), and those whose
# `d|p` may have it for d (setp and match.all.sync; shfl.sync takes it for p only)
_SINK_D = frozenset(("atom", "setp"))
_SINK_PAIR_D = frozenset(("setp", "match"))
_SINK_NONE = frozenset(("mov", "isspacep", "bar", "barrier"))  # no operand signature: only their sinks checked


def _slot(kind, ty=None, wide=False, n=1, imm=True, strict=False):
    """strict: a type of its own, not the instruction's (a shift amount, clz's count); ptxas 13.0 takes a
    .f16x2 register for a 32-bit integer only where the instruction's type names it."""
    return (kind, ty, wide, n, imm, strict)


# a warp's member mask (shfl.sync, vote.sync, match.sync, redux.sync, bar.warp.sync): a 32-bit integer
# or bit register or an integer literal; ptxas 13.0 takes no .f32 or .f16x2 register and no float literal
_MEMBERMASK = _slot(_S, u32, strict=True)


def _signature(base: str, mods: Sequence[str], types: List[Type]):
    """Operand slots of a core instruction, or None where operand types are not checked."""
    T = types[-1] if types else None
    m = set(mods)
    if T is None:
        return None
    d, s = _slot(_D, T), _slot(_S, T)
    u = _slot(_S, u32, strict=True)
    if base in ("add", "sub", "min", "max", "and", "or", "xor", "div", "rem", "copysign", "addc", "subc"):
        if base in ("min", "max") and len([x for x in mods if x in ("abs", "xorsign")]):
            return None
        return [d, s, s]
    if base == "mul" or base == "mul24":
        if "wide" in m:
            return [_slot(_D, _widen(T)), s, s]
        return [d, s, s]
    if base in ("mad", "madc", "mad24"):
        if "wide" in m:
            w = _widen(T)
            return [_slot(_D, w), s, s, _slot(_S, w)]
        return [d, s, s, s]
    if base == "fma":
        return [d, s, s, s]
    if base in ("abs", "neg", "not", "cnot", "rcp", "sqrt", "rsqrt", "sin", "cos", "lg2", "ex2", "tanh", "brev"):
        return [d, s]
    if base in ("popc", "clz", "bfind"):
        return [_slot(_D, u32, strict=True), s]
    if base in ("shl", "shr"):
        return [d, s, u]
    if base == "bfe":
        return [d, s, u, u]
    if base == "bfi":
        return [d, s, s, u, u]
    if base == "prmt":
        return [_slot(_D, b32), _slot(_S, b32), _slot(_S, b32), _slot(_S, b32)]
    if base == "setp":
        if m & set(C.BOOL_OPS):
            return [_slot(_PD), s, s, _slot(_P)]
        return [_slot(_PD), s, s]
    if base == "selp":
        return [d, s, s, _slot(_P)]
    if base == "set" and len(types) >= 2:
        dt, st = types[-2], types[-1]
        out = [_slot(_D, dt), _slot(_S, st), _slot(_S, st)]
        return out + [_slot(_P)] if m & set(C.BOOL_OPS) else out
    if base == "testp":
        return [_slot(_PD), s]
    if base == "lop3":
        return [d, s, s, s, _slot(_S, b32, imm=True)]
    if base == "activemask":
        return [_slot(_D, b32)]
    if base == "cvt" and len(types) >= 2:
        dt, at = types[-2], types[-1]
        if dt.kind == "packed" and at is f32:
            # ptxas 13.0 takes wider (.b64) registers in cvt.rn.f16x2.f32, not in cvt.rn.bf16x2.f32
            w = dt is f16x2
            return [_slot(_D, dt, w), _slot(_S, at, w), _slot(_S, at, w)]
        return [_slot(_D, dt, True), _slot(_S, at, True)]
    if base == "cvta":
        # the source: a variable, an immediate or a register of the instruction's size (ptxas 13.0 refuses
        # cvta.to.global.u64 from a .u32 register)
        return [d, s]
    if base in ("ld", "ldu"):
        n = next((int(x[1:]) for x in mods if x in _VEC), 1)
        return [_slot(_DV, T, True, n), _slot(_A)]
    if base == "st":
        n = next((int(x[1:]) for x in mods if x in _VEC), 1)
        return [_slot(_A), _slot(_SV, T, True, n)]
    if base == "atom" and not m & _VEC:
        if "cas" in m:
            return [d, _slot(_A), s, s]
        return [d, _slot(_A), s]
    if base == "red" and not m & _VEC:
        return [_slot(_A), s]
    if base in ("atom", "red") and m & _VEC:
        n = next(int(x[1:]) for x in mods if x in _VEC)
        vec = [_slot(_A), _slot(_SV, T, True, n)]
        return [_slot(_DV, T, True, n)] + vec if base == "atom" else vec
    if base == "shfl" and "sync" in m:
        return [_slot(_D, b32), _slot(_S, b32), _slot(_S, b32), _slot(_S, b32), _MEMBERMASK]
    if base == "vote" and "sync" in m:
        return [_slot(_D, T) if T is not pred else _slot(_PD), _slot(_P), _MEMBERMASK]
    if base == "redux" and "sync" in m:
        return [_slot(_D, T, strict=True), _slot(_S, T, strict=True), _MEMBERMASK]
    if base == "shf":
        return [d, s, s, u]
    if base == "sad":
        return [d, s, s, s]
    if base == "bmsk":
        return [_slot(_D, u32, strict=True), u, u]
    if base == "szext":
        return [d, s, u]
    if base == "fns":
        return [d, _slot(_S, b32, strict=True), s, s]
    if base == "slct" and len(types) == 2:
        t = types[0]
        return [_slot(_D, t), _slot(_S, t), _slot(_S, t), s]
    if base == "match" and "sync" in m:
        return [_slot(_D, u32, strict=True), s, _MEMBERMASK]
    if base == "nanosleep":
        return [u]
    return None


def _untyped_signature(base: str, mods: Sequence[str]):
    """Operand slots of core instructions that have no type modifier: (slots, min count)."""
    m = set(mods)
    u = _slot(_S, u32)
    if base in ("bar", "barrier") and m & {"sync", "arrive"} and not m & {"warp", "cluster"}:
        return [u, u], (2 if "arrive" in m else 1)
    if base == "bar" and "warp" in m:
        return [_MEMBERMASK], 1
    if base == "bra":
        return [_slot(_L)], 1
    if base in ("ret", "exit", "trap", "brkpt"):
        return [], 0
    if base == "activemask":
        return [_slot(_D, b32)], 1
    return None, 0


def _widen(t: Type) -> Type:
    name = t.name
    bits = t.bits * 2
    return get_type(f"{name[0]}{bits}") if name[0] in "usb" and bits <= 64 else t


class _Ctx:
    """One lint run: the module's target and version and the diagnostics found so far."""

    def __init__(self, filename: str, lines: Optional[List[str]], target: Optional[Target],
                 version: Optional[PtxVersion], address_size: int):
        self.filename = filename
        self.lines = lines
        self.target = target
        self.version = version
        self.address_size = address_size
        self.out: List[Diagnostic] = []
        self.ops: Dict[str, _Op] = {}
        self.compat: Dict[tuple, bool] = {}

    def src(self, line: Optional[int]) -> Optional[str]:
        if self.lines is not None and line is not None and 1 <= line <= len(self.lines):
            return self.lines[line - 1]
        return None

    def add(self, code: str, message: str, loc: Optional[SourceLoc], notes=(), span: int = 1,
            severity: str = "error"):
        line = loc.line if loc is not None else None
        self.out.append(Diagnostic(code, severity, message, loc, tuple(notes), self.src(line), max(span, 1)))


# ------------------------------------------------------------------------------------ opcode analysis
# INSTRUCTIONS's keys by mnemonic, with the words after it: most words first, then the latest PTX ISA version
_KEYS: Dict[str, List[Tuple[str, frozenset]]] = {}
for _key in sorted(INSTRUCTIONS, key=lambda k: (-k.count("."), tuple(-x for x in INSTRUCTIONS[k][1] or (0, 0)))):
    _KEYS.setdefault(_key.split(".")[0], []).append((_key, frozenset(_key.split(".")[1:])))
del _key


def _gate_key(toks: Sequence[str]) -> Optional[str]:
    """The INSTRUCTIONS key of an opcode: the one of most words that are all among the opcode's, wherever they
    stand (ptxas takes most modifiers in any order, isa_core.order_key: barrier.aligned.sync is barrier.sync)."""
    have = set(toks[1:])
    for key, words in _KEYS.get(toks[0], ()):
        if words <= have:
            return key
    return None


def _pred_ignored(toks: List[str]) -> bool:
    """A .pred that ptxas ignores beside another instruction type (isa_core.PRED_IGNORED; not on mul.lo/hi/wide)."""
    need = 2 if toks[0] in ("set", "cvt") else 1      # the instruction's own types besides it
    return (sum(1 for w in toks[1:] if w in _TYPE_WORDS and w != "pred") >= need
            and not (toks[0] == "mul" and toks[1] in C.MUL_MODES))


def _analyze(ctx: _Ctx, opcode: str) -> _Op:
    toks = opcode.split(".")
    if "pred" in toks and toks[0] in C.PRED_IGNORED and _pred_ignored(toks):
        toks = [w for w in toks if w != "pred"]     # add.pred.f32: ptxas takes the .pred and ignores it
    base, mods = toks[0], tuple(toks[1:])
    diags: List[Tuple[str, str, Tuple[str, ...]]] = []
    key = _gate_key(toks)
    if key is None:
        longer = sorted(k for k in INSTRUCTIONS if k.startswith(base + "."))
        if longer:  # suld.b, sust.p ...: the name includes its first modifier
            return _Op(base, mods, [("PTX-E-MODIFIER", f"{base} must start " + " or ".join(longer), ())], None, False)
        near = difflib.get_close_matches(base, [k for k in INSTRUCTIONS if "." not in k], 3, 0.6)
        notes = (("did you mean " + " or ".join(near) + "?",) if near else ())
        return _Op(base, mods, [("PTX-E-OPCODE", f"'{base}' is not a PTX instruction", notes)], None, False)
    family = legality.covers(opcode)
    if not family:
        need_t, need_v = INSTRUCTIONS[key]
        _gate(ctx, diags, key, need_t, need_v)
        for mod in mods:
            n = MODIFIER_NEEDS.get(mod)
            # (ld/st/ldu: C.vector_access; atom/red: C.atom_vector_error)
            if n is not None and not (mod == "v8" and base in _VECTOR_OPS + ("atom", "red")):
                _gate(ctx, diags, f"{base} with .{mod}", n[0], n[1])
        if base in _OP_MODIFIER_NEEDS:
            _gate_op_modifiers(ctx, diags, base, mods)
    types = [get_type(x) for x in mods if x in _TYPE_WORDS and _known_type(x)]
    op = _Op(base, mods, diags, None, family, types[-1] if types else None)
    spaces = [x for x in mods if x.split("::")[0] in _SPACE_WORDS]
    # generic addresses of the async families (mbarrier.init [a] without .shared) are 64-bit too; ldmatrix
    # and stmatrix without a space still address shared memory
    # (cp.async.mbarrier.arrive without .shared: ptxas 13.0 takes a 32-bit register too, tests/test_lint_word_groups.py;
    # so do multimem.ld_reduce and multimem.st, generic or .global, where multimem.red takes a 64-bit one only:
    # tests/test_lint_multimem.py)
    op.wide_addr = (base in _MEMORY_OPS and (not spaces or spaces == ["global"])
                    and (base != "multimem" or "red" in mods)) or (
        family and not spaces and base in ("mbarrier", "cp") and "mbarrier" not in mods)
    op.space = spaces[0].split("::")[0] if len(spaces) == 1 else None if not spaces else "?"
    if family:
        return op
    bad = C.misplaced_name_words(toks)
    fixed = C.name_first(toks) if bad else None
    if fixed:  # mul.u32.wide, cvta.global.to.u64: ptxas reads the name first ("Unknown modifier '.wide'")
        want = ".".join(fixed.split(".")[:C.name_length(fixed.split("."))])
        diags.append(("PTX-E-MODIFIER", C.name_order_message(".".join(toks[:C.name_length(toks)]), bad, want),
                      (f"write {fixed}",)))
        return op
    if base == "cvt" and "pack" in mods:
        _cvt_pack(op)
        return op
    if any(x in _TYPE_WORDS and not _known_type(x) for x in mods):
        return op  # a type ptxgen.types does not model yet (.e2m1x2 ...): only the name and gating are checked
    if key == base and base in _family_mnemonics():
        # a tensor-core/async mnemonic whose modifiers make no form ptxgen.legality knows
        second = mods[0] if mods else ""
        diags.append(("PTX-E-MODIFIER", f"{base} has no form starting {base}.{second}" if second else
                      f"{base} needs modifiers", ("see the PTX ISA section on " + base,)))
        return op
    _core_rules(ctx, op, types)
    if not op.diags:
        _repeated_word(op)
    if not op.diags and base in _TWO_TYPED and sum(1 for w in mods if _TYPE_LIKE(w)) > 2:
        words = [base, *(w for w in mods if not _TYPE_LIKE(w)), "dtype", "atype"]
        diags.append(("PTX-E-TYPE", f"{base} takes two instruction types, the destination's and the sources' (ptxas: "
                                    f"\"Unexpected instruction types specified for '{base}'\")",
                      ("write " + ".".join(words),)))
    return op


# modifiers ptxas 13.0 takes twice, as flags (`bar.sync.sync`, `add.sat.sat`); any other word given twice it refuses
# ("Duplicate .ftz modifier", "Multiple rounding modifiers specified", "Unexpected instruction types specified for
# 'brev'", ...), a type word too but in the instructions that name several types (`cvt.f32.f32`)
# (tests/test_lint_repeated.py)
_TWICE_OK = frozenset(("sync", "sat", "satfinite", "cc", "approx", "uni", "relu", "NaN", "shiftamt"))
# instructions of two instruction types (d's, then the sources'), which ptxas refuses with a third
_TWO_TYPED = frozenset(("cvt", "set", "slct", "dp4a", "dp2a"))
# ... and all that name several (the video instructions three; wgmma.mma_async{.sp} D's, A's and B's, where
# ptxgen.legality leaves a spelling to ptxas: one with a modifier it does not model)
_MANY_TYPED = _TWO_TYPED | frozenset((
    "wgmma", "tex", "tld4", "suld", "sust", "sured", "vadd", "vsub", "vabsdiff", "vmin", "vmax", "vshl", "vshr", "vmad",
    "vset", "vadd2", "vsub2", "vavrg2", "vabsdiff2", "vmin2", "vmax2", "vset2", "vadd4", "vsub4", "vavrg4", "vabsdiff4",
    "vmin4", "vmax4", "vset4"))
_TYPE_LIKE = re.compile(r"[a-z]+\d+(x\d+)?").fullmatch          # .u4 .s32 .e4m3 .f16x2 ...


# cvt.pack.sat.convertType.abType{.cType} as ptxas 13.0 takes it: .u16/.s16 from .s32 (d, a, b), or .u2 .s2 .u4 .s4 .u8
# .s8 from .s32 with .b32 (d, a, b, c); PTX ISA 6.5 (tests/test_lint_repeated.py)
_PACK_FORMS = frozenset([("u16", "s32"), ("s16", "s32")]
                        + [(t, "s32", "b32") for t in ("u2", "s2", "u4", "s4", "u8", "s8")])


def _cvt_pack(op: _Op):
    diags, mods = op.diags, op.mods           # (its target and version: INSTRUCTIONS["cvt.pack"])
    types = tuple(w for w in mods if _TYPE_LIKE(w))
    if mods[0] != "pack":
        diags.append(("PTX-E-MODIFIER", "cvt.pack is the instruction's name: .pack comes right after cvt (ptxas: "
                                        "\"Unknown modifier '.pack'\")", ("write cvt.pack.sat." + ".".join(types),)))
        return
    other = [w for w in mods[1:] if w != "sat" and not _TYPE_LIKE(w)]
    if other:
        diags.append(("PTX-E-MODIFIER", f"cvt.pack has no modifier .{other[0]}",
                      ("cvt.pack takes .sat and its types",)))
    elif "sat" not in mods:
        diags.append(("PTX-E-MODIFIER", "cvt.pack needs .sat (ptxas: \".sat modifier required for instruction "
                                        "'cvt.pack'\")", ("write cvt.pack.sat." + ".".join(types),)))
    if types not in _PACK_FORMS:
        diags.append(("PTX-E-TYPE", f"cvt.pack has no .{'.'.join(types)} form (ptxas: \"Unexpected instruction types "
                                    f"specified for 'cvt.pack'\")",
                      ("cvt.pack.sat takes .u16 or .s16 from .s32 (d, a, b), or .u2, .s2, .u4, .s4, .u8 or .s8 from "
                       ".s32 with .b32 (d, a, b, c)",)))
    if not diags:
        # ptxas 13.0: d, a and b a 32- or 64-bit integer or bit register (or .f16x2), a and b an integer literal too,
        # c any register of 32 bits or more (.f32 and .f64 too) or a literal
        i = _slot(_S, s32, True)
        op.sig = [_slot(_D, u32, True), i, i] + ([_slot(_S, b32, True)] if len(types) == 3 else [])
        op.counts = (len(op.sig), len(op.sig))
        op.fast = tuple((sl[1], sl[2]) for sl in op.sig)


def _repeated_word(op: _Op):
    if op.base == "wmma":                   # two layouts and types of its own rules (.row.row, .s32.u4.u4.s32)
        return
    seen = set()
    for w in op.mods:
        if op.base == "createpolicy" and w.startswith("L2::evict_"):
            continue        # the primary and the secondary priority: createpolicy's rules above
        if w in seen and w not in _TWICE_OK and not (op.base in _MANY_TYPED and _TYPE_LIKE(w)):
            op.diags.append(("PTX-E-MODIFIER", f"{op.base}: .{w} is written twice (ptxas: \"Duplicate .{w} modifier\" "
                                               "or \"Multiple ... modifiers specified\")", (f"write .{w} once",)))
            return
        seen.add(w)


def _known_type(name: str) -> bool:
    try:
        get_type(name)
        return True
    except ValueError:
        return False


def _gate(ctx: _Ctx, diags, what: str, need_t: Optional[str], need_v: Optional[PtxVersion]):
    if need_t is not None and ctx.target is not None and not ctx.target.satisfies(need_t):
        req = Target.parse(need_t)
        txt = f"{need_t} or later" if not req.suffix else (need_t if req.suffix == "a" else
                                                           f"an sm_{req.sm // 10}x 'a'/'f' target from sm_{req.sm}")
        diags.append(("PTX-E-TARGET", f"{what} needs target {txt} (module target is {ctx.target})", ()))
    if need_v is not None and ctx.version is not None and ctx.version < need_v:
        diags.append(("PTX-E-VERSION", f"{what} needs PTX ISA {version_str(need_v)} (module .version is "
                                       f"{version_str(ctx.version)})",
                      (f"write .version {version_str(need_v)} or later",)))


def _gate_op_modifiers(ctx: _Ctx, diags, base: str, mods: Tuple[str, ...]):
    """The "op.modifier" needs of MODIFIER_NEEDS: the highest unmet target and the highest unmet version,
    each once, named after the first modifier in the table that asks for it (wmma.mma with .f64, not with
    .m8n8k4 and each .f64 again)."""
    present = set(mods)
    worst_t = worst_v = None
    for mod, (need_t, need_v) in _OP_MODIFIER_NEEDS[base]:
        if mod not in present:
            continue
        if need_t is not None and ctx.target is not None and not ctx.target.satisfies(need_t):
            if worst_t is None or Target.parse(need_t).sm > Target.parse(worst_t[1]).sm:
                worst_t = (mod, need_t)
        if need_v is not None and ctx.version is not None and ctx.version < need_v:
            if worst_v is None or need_v > worst_v[1]:
                worst_v = (mod, need_v)
    if worst_t is None and worst_v is None:
        return
    # the form is named by its words before .sync (wmma.load.a, wmma.mma.and.popc), and the modifier
    # that raises its needs where that is not one of them
    lead = mods[:mods.index("sync")] if "sync" in mods else mods[:1]
    name = ".".join((base,) + lead)
    if worst_t is not None:
        _gate(ctx, diags, name if worst_t[0] in lead else f"{name} with .{worst_t[0]}", worst_t[1], None)
    if worst_v is not None:
        _gate(ctx, diags, name if worst_v[0] in lead else f"{name} with .{worst_v[0]}", None, worst_v[1])


def _core_rules(ctx: _Ctx, op: _Op, types: List[Type]):
    """Modifier words, instruction types and operand slots of the core instructions (isa_core tables)."""
    base, mods, diags = op.base, op.mods, op.diags
    vocab = _MODS.get(base)
    tnames = [x for x in mods if x in _TYPE_WORDS]
    if vocab is not None:
        for x in mods:
            if x in _TYPE_WORDS or x in vocab:
                continue
            legal = sorted(vocab)
            note = ("." + base + " takes " + ", ".join("." + w for w in legal),) if legal else \
                (f"{base} takes no modifiers besides its type",)
            diags.append(("PTX-E-MODIFIER", f"{base} has no modifier .{x}", note))
    allowed = C.TYPES.get(base)
    if allowed is None and base in _EXTRA_TYPES and _EXTRA_TYPES[base]:
        allowed = tuple(get_type(t) for t in _EXTRA_TYPES[base])
    ty = types[-1] if types else None
    m = set(mods)
    if allowed is not None:
        if len(tnames) != 1:
            what = "no instruction type" if not tnames else "several instruction types"
            diags.append(("PTX-E-TYPE", f"{base} needs exactly one instruction type; {what} given",
                          (f"{base} takes " + ", ".join("." + t.name for t in allowed),)))
            return
        if ty not in allowed:
            diags.append(("PTX-E-TYPE", f"{base} has no .{tnames[0]} form",
                          (f"{base} takes " + ", ".join("." + t.name for t in allowed),)))
            return
        if ty.name in ("bf16", "bf16x2") and base in C.NEEDS_SM90_BF16 and ctx.target is not None \
                and not ctx.target.satisfies("sm_90"):
            diags.append(("PTX-E-TARGET", f"{base}.{ty.name} needs target sm_90 or later (module target is "
                                          f"{ctx.target})", ()))
    _mode_rules(ctx, op, types, m)
    if any(d[0] in ("PTX-E-TYPE", "PTX-E-MODIFIER") for d in diags):
        return
    if base == "wmma":
        return
    if not types:
        sig, lo = _untyped_signature(base, mods)
        if sig is not None:
            op.sig = sig
            op.counts = (lo, len(sig))
            op.fast = tuple((sl[1], sl[2]) if sl[0] in (_D, _S) and not sl[5] else None for sl in sig)
        return
    op.sig = _signature(base, mods, types)
    if op.sig is not None and "L2::cache_hint" in m:
        op.sig = op.sig + [_slot(_S, u64)]  # the cache-policy operand
    if op.sig is not None:
        op.fast = tuple((sl[1], sl[2]) if (sl[0] in (_D, _S) or sl[0] in (_DV, _SV) and sl[3] == 1) and not sl[5]
                        else None
                        for sl in op.sig)
        if (all(f is not None for f in op.fast) and not op.diags and base not in ("call", "mov")
                and base not in _MEMORY_OPS and op.counts == (len(op.sig), len(op.sig))):
            op.plain = op.fast
        n = len(op.sig)
        op.counts = (n, n)


def _wmma_rules(op: _Op, m: set, diags, version: Optional[PtxVersion] = None):
    """wmma.load/store/mma: the modifier groups each needs (ptxgen.legality has no wmma forms)."""
    kinds = [x for x in op.mods if x in ("load", "store", "mma")]
    if len(kinds) != 1:
        diags.append(("PTX-E-MODIFIER", "wmma needs exactly one of .load, .store, .mma", ()))
        return
    kind = kinds[0]
    # .aligned came with PTX ISA 6.3 (before it, MODIFIER_NEEDS's "wmma.aligned" gates it), and ptxas
    # needs it from then on
    if version is not None and version < (6, 3):
        if "sync" not in m:
            diags.append(("PTX-E-MODIFIER", f"wmma.{kind} needs .sync", ()))
    elif not {"sync", "aligned"} <= m:
        diags.append(("PTX-E-MODIFIER", f"wmma.{kind} needs .sync.aligned", ()))
    shapes = m & _WMMA_SHAPES
    if len(shapes) != 1:
        diags.append(("PTX-E-MODIFIER", f"wmma.{kind} needs one shape",
                      ("shapes: " + ", ".join("." + x for x in sorted(_WMMA_SHAPES)),)))
    layouts = [x for x in op.mods if x in ("row", "col")]
    want = 2 if kind == "mma" else 1
    if len(layouts) != want:
        diags.append(("PTX-E-MODIFIER", f"wmma.{kind} needs {want} layout{'s' if want > 1 else ''} (.row or .col)", ()))
    frags = [x for x in op.mods if x in ("a", "b", "c", "d")]
    if kind != "mma" and len(frags) != 1:
        diags.append(("PTX-E-MODIFIER", f"wmma.{kind} needs a fragment (.a, .b, .c or .d)", ()))
    types = [x for x in op.mods if x in _TYPE_WORDS or x in ("s4", "u4", "b1")]
    if kind != "mma" and len(types) != 1 or kind == "mma" and len(types) not in (2, 4):
        diags.append(("PTX-E-TYPE", f"wmma.{kind} has {'no' if not types else 'the wrong number of'} types", ()))
    elif kind != "mma" and len(frags) == 1:
        # ptxas 13.0: "Unexpected instruction types" / "Illegal type" for any other
        ok = _WMMA_AB_TYPES if frags[0] in ("a", "b") else _WMMA_CD_TYPES
        if types[0] not in ok:
            diags.append(("PTX-E-TYPE", f"wmma.{kind}.{frags[0]} has no .{types[0]} form",
                          (f"a .{frags[0]} fragment's elements are " + ", ".join("." + t for t in ok),)))
    elif kind == "mma":
        dt, ct = types[0], types[-1]
        ab = types[1] if len(types) == 4 else "f16"
        acc = {"f16": ("f16", "f32"), "s8": ("s32",), "u8": ("s32",), "s4": ("s32",), "u4": ("s32",), "b1": ("s32",),
               "bf16": ("f32",), "tf32": ("f32",), "f64": ("f64",)}.get(ab, ())
        if dt not in acc or ct not in acc:
            diags.append(("PTX-E-TYPE", f"wmma.mma with .{ab} inputs accumulates in "
                                        + " or ".join("." + a for a in acc) + f", not .{dt}/.{ct}", ()))
    if len(types) in ((2, 4) if kind == "mma" else (1,)) and len(frags) == (0 if kind == "mma" else 1):
        _wmma_modifier_rules(kind, frags[0] if frags else None, types, layouts, m, version, diags)
        if "popc" in m and m & {"xor", "and"} and op.mods.index("popc") < min(op.mods.index(x) for x in
                                                                         m & {"xor", "and"}):
            # the bit operation, then .popc (isa_core.ORDERED_WORDS; ptxas: "Illegal reduction operation")
            diags.append(("PTX-E-MODIFIER", "wmma.mma's .popc comes after its bit operation: .xor.popc or .and.popc",
                          ()))
    # operands: load d, [a]{, stride}; store [d], r{, stride}; mma d, a, b, c
    op.counts = (4, 4) if kind == "mma" else (2, 3)
    op.sig = [_slot(_X)] * op.counts[1]
    op.fast = (None,) * op.counts[1]
    if diags:
        return
    # the fragment operands `_FnCheck.wmma_fragments` checks: load's first, store's second, mma's d, a, b, c
    if kind == "mma":
        ab = types[1] if len(types) == 4 else "f16"
        frag_ops = ((0, "d", types[0]), (1, "a", ab), (2, "b", types[2] if len(types) == 4 else ab),
                    (3, "c", types[-1]))
    else:
        frag_ops = ((0 if kind == "load" else 1, frags[0], types[0]),)
    if all(et in _WMMA_FRAG_REGS for _, _, et in frag_ops):
        op.wmma = (next(iter(shapes)), frag_ops)


# wmma's modifiers beyond its groups, as ptxas 13.0 takes them (probed): a rounding modifier only on
# wmma.mma of .f64; .satfinite only on wmma.mma of 8- and 4-bit integers (of .f16 too before PTX ISA 6.5,
# which dropped it there); .xor.popc or .and.popc on wmma.mma of .b1, which needs one; the sub-byte
# inputs (.s4, .u4, .b1) only as a row-major A and a column-major B
_WMMA_ROUND = ("rn", "rz", "rm", "rp")
_WMMA_SAT = ("s8", "u8", "s4", "u4")
_WMMA_SUB_BYTE = ("s4", "u4", "b1")


def _wmma_modifier_rules(kind: str, frag: Optional[str], types: List[str], layouts: List[str], m: set,
                         version: Optional[PtxVersion], diags):
    """wmma's rounding, .satfinite, bit operation, fragment and sub-byte layout rules (_WMMA_ROUND ...)."""
    ab = (types[1] if len(types) == 4 else "f16") if kind == "mma" else types[0]
    what = f"wmma.mma with .{ab} inputs" if kind == "mma" else f"wmma.{kind}.{frag}"
    if kind == "load" and frag == "d" or kind == "store" and frag != "d":
        diags.append(("PTX-E-MODIFIER", f"wmma.{kind} has no .{frag} fragment",
                      ("wmma.load loads .a, .b or .c; wmma.store stores .d",)))
    rnd = sorted(m & set(_WMMA_ROUND))
    if rnd and (kind != "mma" or ab != "f64"):
        diags.append(("PTX-E-MODIFIER", f"{what} takes no rounding modifier (.{rnd[0]})",
                      ("only wmma.mma of .f64 takes .rn, .rz, .rm or .rp",)))
    if "satfinite" in m and not (kind == "mma" and (ab in _WMMA_SAT or
                                                    ab == "f16" and version is not None and version < (6, 5))):
        why = " since PTX ISA 6.5" if kind == "mma" and ab == "f16" else ""
        diags.append(("PTX-E-MODIFIER", f"{what} takes no .satfinite{why}",
                      ("only wmma.mma of .s8, .u8, .s4 or .u4 inputs takes .satfinite",)))
    bitops = [x for x in ("xor", "and") if x in m]
    if kind == "mma" and ab == "b1":
        if len(bitops) != 1 or "popc" not in m:
            diags.append(("PTX-E-MODIFIER", "wmma.mma with .b1 inputs needs its bit operation: .xor.popc or "
                                            ".and.popc", ("wmma.mma.xor.popc.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32",)))
    elif bitops or "popc" in m:
        bad = "." + ".".join(bitops + (["popc"] if "popc" in m else []))
        diags.append(("PTX-E-MODIFIER", f"{what} takes no bit operation ({bad})",
                      ("only wmma.mma of .b1 inputs takes .xor.popc or .and.popc",)))
    if ab in _WMMA_SUB_BYTE and (kind == "mma" or frag in ("a", "b")):
        want = ["row", "col"] if kind == "mma" else ["row" if frag == "a" else "col"]
        if len(layouts) == len(want) and layouts != want:
            text = "." + ".".join(want)
            diags.append(("PTX-E-LAYOUT", f"{what} takes the layout{'s' if kind == 'mma' else ''} {text} only, "
                                          f"not .{'.'.join(layouts)}",
                          ("the sub-byte inputs (.s4, .u4, .b1) are a row-major A and a column-major B",)))


_CACHE_OPS = frozenset(C.LD_CACHE + C.ST_CACHE)


def _cache_rules(base: str, op: _Op, ty: Type, m: set, diags):
    """ld's and st's eviction priorities as ptxas 13.0 takes them (tests/test_lint_misc_probes.py): an L1
    priority (.L1::evict_*, .L1::no_allocate) with no cache operator, an L2 one (.L2::evict_*) on a 256-bit vector
    only (.v8 of a 32-bit type, .v4 of a 64-bit one: sm_100)."""
    l1 = next((x for x in op.mods if x.startswith("L1::")), None)
    cache = next((x for x in op.mods if x in _CACHE_OPS), None)
    if l1 is not None and cache is not None:
        diags.append(("PTX-E-MODIFIER", f"{base}.{l1} cannot be combined with the cache operator .{cache} (ptxas: "
                                        f"\"Modifier '.{l1[4:]}' cannot be combined with modifier '.{cache}'\")",
                      ("write an L1 eviction priority or a cache operator, not both",)))
    l2 = next((x for x in op.mods if x.startswith("L2::evict_")), None)
    if l2 is not None and not ("v8" in m and ty.bits == 32 or "v4" in m and ty.bits == 64):
        diags.append(("PTX-E-MODIFIER", f"{base}.{l2} is for a 256-bit vector: .v8 of a 32-bit type or .v4 of a "
                                        f"64-bit one (ptxas: \"Instruction '{base}' requires '.v8.b32/.v4.b64' type "
                                        f"with '.{l2}' modifier\")",
                      ("drop it, or give the access an L2 cache policy with .L2::cache_hint and createpolicy",)))


_TYPE_NOTE = {"vote": ("vote.sync.ballot.b32, or .pred for .all, .any and .uni",), "shfl": ("shfl.sync moves .b32",),
              "redux": ("redux.sync.add.u32, for one",), "createpolicy": ("a cache policy is .b64",)}
# core instructions that take no instruction type (ptxas 13.0, tests/test_lint_word_groups.py)
_UNTYPED = frozenset(("membar", "trap", "exit", "brkpt", "pmevent", "prefetch", "prefetchu", "bra", "brx", "ret"))
# (ptxas 13.0, tests/test_lint_word_groups.py) modifier groups of which an instruction takes exactly one
_ONE_OF = {"membar": ("cta", "gl", "sys", "proxy"), "shf": ("clamp", "wrap"), "redux": ("add", "min", "max", "and",
           "or", "xor"), "vote": C.VOTE_MODES, "shfl": C.SHFL_MODES, "match": ("any", "all")}


def _word_groups(op: _Op, types: List[Type], m: set):
    """The words ptxas needs exactly one of (membar's level, shf's .clamp/.wrap, redux's operation, vote's and shfl's
    mode), and the instructions that take no instruction type (bar, barrier but bar.red.popc.u32 and bar.red's
    .and/.or.pred) or exactly one (atom and red: a .pred beside it is ignored)."""
    base, diags = op.base, op.diags
    group = _ONE_OF.get(base)
    if base in ("bar", "match", "redux") and ("warp" in m or base != "bar") and "sync" not in m:
        diags.append(("PTX-E-MODIFIER", f"{base}{'.warp' if base == 'bar' else ''} needs .sync",
                      (f"write {'bar.warp.sync' if base == 'bar' else base + '.sync'}",)))
    if base == "bar" and m & {"all", "any"} and (m & {"arrive", "red", "warp"} or "sync" not in m or
                                                 len(m & {"all", "any"}) > 1):
        diags.append(("PTX-E-MODIFIER", f"bar takes .{sorted(m & {'all', 'any'})[0]} only as bar.sync.all or "
                                        "bar.sync.any", ()))
    if group is not None and len(m & set(group)) != 1 and (base not in ("vote", "shfl") or "sync" in m):
        have = [w for w in op.mods if w in group]
        what = "one of " + ", ".join("." + w for w in group)
        diags.append(("PTX-E-MODIFIER", f"{base} needs exactly {what}" if not have else
                      f"{base} takes exactly {what}, not " + " and ".join("." + w for w in have), ()))
    if base == "shf" and len(m & {"l", "r"}) != 1:
        diags.append(("PTX-E-MODIFIER", "shf needs one direction: shf.l or shf.r", ("write shf.l.clamp.b32 or "
                                                                                     "shf.r.wrap.b32 ...",)))
    if base == "vote" and "sync" in m and types and len(types) == 1:
        want = "b32" if "ballot" in m else "pred"
        if types[0].name != want:
            diags.append(("PTX-E-TYPE", f"vote{'.ballot' if want == 'b32' else ''} has no .{types[0].name} form",
                          (f"write .{want}",)))
    if base in ("bar", "barrier") and "red" in m and not types:
        diags.append(("PTX-E-TYPE", f"{base}.red needs its type: .popc.u32, .and.pred or .or.pred", ()))
    if base in ("bar", "barrier") and types:
        red = "red" in m
        ok = red and ("popc" in m and [t.name for t in types] == ["u32"] or
                      m & {"and", "or"} and [t.name for t in types] == ["pred"])
        if not ok:
            diags.append(("PTX-E-TYPE", f"{base} takes no instruction type" if not red else
                          f"{base}.red takes .popc.u32, .and.pred or .or.pred", ()))
    if base in _UNTYPED and types:
        diags.append(("PTX-E-TYPE", f"{base} takes no instruction type (ptxas: \"Unexpected instruction types "
                                    f"specified for '{base}'\")", (f"drop .{types[0].name}",)))
    if base in ("atom", "red", "vote", "shfl", "redux") and len(types) > 1:
        diags.append(("PTX-E-TYPE", f"{base} takes one instruction type, not " +
                      " and ".join("." + t.name for t in types), ()))


def _mode_rules(ctx: _Ctx, op: _Op, types: List[Type], m: set):
    base, diags = op.base, op.diags
    ty = types[-1] if types else None
    if base == "createpolicy":
        prio = [x for x in op.mods if x.startswith("L2::evict_")]
        kind = [x for x in op.mods if x in ("fractional", "range", "cvt")]
        if len(kind) != 1:
            diags.append(("PTX-E-MODIFIER", "createpolicy needs one of .fractional, .range, .cvt (ptxas: \"Not a name "
                                            "of any known instruction: 'createpolicy'\")",
                          ("write createpolicy.fractional.L2::evict_last.b64 ...",)))
        elif kind[0] != "cvt" and not prio:
            diags.append(("PTX-E-MODIFIER", f"createpolicy.{kind[0]} needs an eviction priority",
                          ("e.g. .L2::evict_last or .L2::evict_first",)))
        if ty is not None and ty.name != "b64":
            diags.append(("PTX-E-TYPE", f"createpolicy has no .{ty.name} form", ("a cache policy is .b64",)))
        if len(prio) > 2:
            diags.append(("PTX-E-MODIFIER", f"createpolicy takes a primary and a secondary priority, not {len(prio)}",
                          ()))
        if len(prio) == 2 and prio[1] not in ("L2::evict_first", "L2::evict_unchanged"):
            # the order of the two says which is which (isa_core.ORDERED_WORDS)
            diags.append(("PTX-E-MODIFIER", f"createpolicy's secondary priority (the second) cannot be .{prio[1]} "
                                            f"(ptxas: \"Unsupported modifier '.{prio[1][4:]}' as secondary_priority\")",
                          ("the primary priority comes first; the secondary one is .L2::evict_first or "
                           ".L2::evict_unchanged",)))
    if base in ("bar", "barrier") and not m & {"sync", "arrive", "red", "warp", "cluster"}:
        diags.append(("PTX-E-MODIFIER", f"{base} needs one of .sync, .arrive, .red", ()))
    if base == "wmma":
        _wmma_rules(op, m, diags, ctx.version)
        return
    _word_groups(op, types, m)
    if ty is None:
        if base in ("ld", "st", "cvt", "cvta", "atom", "red", "ldu", "setp", "set", "selp", "mov", "vote", "shfl",
                    "redux", "createpolicy"):
            diags.append(("PTX-E-TYPE", f"{base} needs an instruction type", _TYPE_NOTE.get(base, ())))
        return
    if base in C.ARITH_MODS and not any(d[0] == "PTX-E-MODIFIER" for d in diags):
        err = C.arith_modifier_error(base, ty.name, op.mods)
        if err is not None:
            diags.append(("PTX-E-MODIFIER", err.message, (err.note,)))
            return
    if base == "ex2" and ty.kind in ("f", "packed"):
        err = C.ex2_modifier_error(ty.name, "approx" in m, "ftz" in m)
        if err is not None:
            diags.append(("PTX-E-MODIFIER", err[0], (f"write {err[1]}",)))
    if base in ("setp", "set"):
        cmp = [x for x in op.mods if x in set(C.CMP_FLOAT) | set(C.CMP_INT)]
        if len(cmp) != 1:
            diags.append(("PTX-E-MODIFIER", f"{base} needs exactly one comparison operator",
                          ("legal for ." + ty.name + ": " + ", ".join(C.cmp_ops_for(ty)),)))
        elif cmp[0] not in C.cmp_ops_for(ty):
            diags.append(("PTX-E-MODIFIER", f"{base}.{cmp[0]} is not a comparison for .{ty.name}",
                          ("legal: " + ", ".join(C.cmp_ops_for(ty)),)))
        if len(m & set(C.BOOL_OPS)) > 1:
            diags.append(("PTX-E-MODIFIER", f"{base} takes at most one of .and, .or, .xor", ()))
        if "ftz" in m and ty.name not in C.COMPARE_FTZ:
            diags.append(("PTX-E-MODIFIER", f"{base} takes no .ftz with .{ty.name} sources",
                          (f"{base}.ftz is for .f32, .f16 and .f16x2 sources",)))
        elif "ftz" in m and base == "set" and len(types) == 2 and types[0].name == "bf16":
            diags.append(("PTX-E-MODIFIER", "set.bf16 takes no .ftz", ("drop .ftz",)))
        if base == "set" and len(types) != 2:
            diags.append(("PTX-E-TYPE", "set needs a destination and a source type", ("write set.CmpOp.dtype.stype",)))
        elif base == "set" and not diags:
            err = C.set_types_error(types[-2].name, ty.name)
            if err is not None:
                diags.append(("PTX-E-TYPE", err[0], (err[1],)))
    if base == "slct" and len(types) != 2:
        diags.append(("PTX-E-TYPE", "slct needs the type of d, a and b and the type of c",
                      ("write slct.dtype.s32 or slct.dtype.f32",)))
    elif base == "slct":
        err = C.slct_types_error(types[0].name, ty.name)
        if err is not None:
            diags.append(("PTX-E-TYPE", err[0], (err[1],)))
        elif "ftz" in m and ty.name != "f32":
            diags.append(("PTX-E-MODIFIER", "slct takes .ftz only with an .f32 selector c",
                          ("drop .ftz, or select on an .f32 c: slct.ftz.dtype.f32",)))
    bad = C.cvt_bit_type(types[-2], types[-1]) if base == "cvt" and len(types) >= 2 else None
    if bad is not None:
        diags.append(("PTX-E-TYPE", f"cvt has no .{bad.name} form: it converts numbers, and a bit type is none",
                      (f"write .u{bad.bits} or .s{bad.bits}" + (f" (or .f{bad.bits})" if bad.bits >= 16 else ""),)))
    elif base == "cvt" and len(types) >= 2:
        dt, at = types[-2], types[-1]
        err = None
        if dt.kind not in ("packed", "fp8") and at.kind not in ("packed", "fp8") and tf32 not in (dt, at):
            err = C.cvt_form_error(dt, at)
            code = "PTX-E-TYPE"
            if err is None:
                err, code = C.cvt_modifier_error(dt, at, "ftz" in m, "sat" in m), "PTX-E-MODIFIER"
            if err is not None:
                diags.append((code, err[0], (err[1],)))
        if "packed" in (dt.kind, at.kind) and "fp8" not in (dt.kind, at.kind):
            err = C.packed_cvt_error(dt.name, at.name, op.mods)
            if err is not None:
                diags.append(("PTX-E-TYPE" if err.kind == "form" else "PTX-E-MODIFIER", err.message, (err.note,)))
        if err is None and dt.kind != "packed" and dt.kind != "fp8" and at.kind != "packed" and at.kind != "fp8":
            req, allowed = C.cvt_rounding(dt, at)
            rounding = [x for x in op.mods if x in _ROUND or x in _ROUND_I or x == "rna"]
            if len(rounding) > 1:
                diags.append(("PTX-E-MODIFIER", "cvt takes at most one rounding modifier", ()))
            elif rounding and rounding[0] not in allowed:
                diags.append(("PTX-E-MODIFIER", f"cvt.{dt.name}.{at.name} does not take .{rounding[0]}",
                              ("allowed: " + (", ".join("." + r for r in allowed) or "no rounding modifier"),)))
            elif not rounding and req:
                diags.append(("PTX-E-MODIFIER", f"cvt.{dt.name}.{at.name} needs a rounding modifier",
                              ("allowed: " + ", ".join("." + r for r in allowed),)))
    elif base == "cvt" and len(types) < 2:
        diags.append(("PTX-E-TYPE", "cvt needs a destination and a source type", ()))
    if base in ("atom", "red"):
        ops = [x for x in op.mods if x in C.ATOM_OPS]
        if len(ops) != 1:
            diags.append(("PTX-E-MODIFIER", f"{base} needs exactly one operation",
                          ("one of " + ", ".join("." + o for o in C.ATOM_OPS),)))
        elif base == "red" and ops[0] in ("exch", "cas"):
            diags.append(("PTX-E-MODIFIER", f"red has no .{ops[0]}: it returns nothing to exchange or compare",
                          (f"write atom.{ops[0]}",)))
        elif not m & _VEC and ty not in C.ATOM_OPS[ops[0]]:
            diags.append(("PTX-E-TYPE", f"{base}.{ops[0]} has no .{ty.name} form",
                          (f"{base}.{ops[0]} takes " + ", ".join("." + t.name for t in C.ATOM_OPS[ops[0]]),)))
        elif m & _VEC:
            vec = int(next(x for x in op.mods if x in _VEC)[1:])
            space = next((x for x in op.mods if x in _SPACES and x != "generic"), None)
            err = C.atom_vector_error(base, ops[0], ty.name, vec, space)
            if err is not None:
                diags.append(("PTX-E-TYPE", err[0], (err[1],)))
            else:
                _gate(ctx, diags, f"{base} on vectors", *C.ATOM_VECTORS_NEED)
        if base == "red" and m & {"acquire", "acq_rel"}:
            diags.append(("PTX-E-MODIFIER", f"red cannot be .{sorted(m & {'acquire', 'acq_rel'})[0]}",
                          ("use .relaxed or .release",)))
    if base in ("ld", "st", "ldu", "atom", "red", "cvta", "isspacep"):
        sp = [x for x in op.mods if x in _SPACES]
        if len(sp) > 1:
            diags.append(("PTX-E-MODIFIER", f"{base} takes one state space, {len(sp)} given", ()))
        elif sp and (sp[0] in _NO_WRITE_SPACES.get(base, ())):
            diags.append(("PTX-E-MODIFIER", f"{base} cannot write .{sp[0]} memory (ptxas: \"State space incorrect "
                                            f"for instruction '{base}'\")",
                          (f"{base} takes .global, .shared (::cta, ::cluster) or a generic address"
                           + (", and st .local" if base == "st" else ""),)))
        if base == "st" and m & set(C.LD_CACHE) - set(C.ST_CACHE):
            diags.append(("PTX-E-MODIFIER", f"st has no cache operator .{sorted(m & (set(C.LD_CACHE) - set(C.ST_CACHE)))[0]}",
                          ("st takes " + ", ".join("." + c for c in C.ST_CACHE),)))
        if base == "ld" and m & (set(C.ST_CACHE) - set(C.LD_CACHE)):
            diags.append(("PTX-E-MODIFIER", f"ld has no cache operator .{sorted(m & (set(C.ST_CACHE) - set(C.LD_CACHE)))[0]}",
                          ("ld takes " + ", ".join("." + c for c in C.LD_CACHE),)))
        if base == "ld" and m & {"release", "acq_rel"}:
            diags.append(("PTX-E-MODIFIER", "ld cannot be .release or .acq_rel", ("use .acquire or .relaxed",)))
        if base == "st" and m & {"acquire", "acq_rel"}:
            diags.append(("PTX-E-MODIFIER", "st cannot be .acquire or .acq_rel", ("use .release or .relaxed",)))
        if m & {"relaxed", "acquire", "release", "acq_rel"} and not m & _SCOPES and base in ("ld", "st"):
            diags.append(("PTX-E-MODIFIER", f"{base} with a memory semantic needs a scope",
                          ("add one of " + ", ".join("." + s for s in C.SCOPES),)))

        if len(m & _VEC) > 1:
            diags.append(("PTX-E-MODIFIER", f"{base} takes one vector size", ()))
        if base in ("ld", "st"):
            _cache_rules(base, op, ty, m, diags)
        vec = [x for x in op.mods if x in _VEC]
        if base in _VECTOR_OPS and ty is not None and len(vec) == 1:
            problems, wide, _ = C.vector_access(base, sp[0].split("::")[0] if sp else None, ty.bits, int(vec[0][1:]))
            if wide:
                _gate(ctx, diags, f"{base}.{vec[0]} of .{ty.name} (a 256-bit access)", *C.WIDE_ACCESS_NEEDS)
            for kind, message, hint in problems:
                if kind != "crash" or not diags:        # ptxas reports an error first where there is one
                    diags.append(("PTX-E-MODIFIER", message, (hint,)))
        if base in ("ld", "st") and not diags:
            err = C.memory_order_error(base, op.mods)
            if err is not None:
                diags.append(("PTX-E-MODIFIER", err[0], (err[1],)))
    if base == "redux" and ty is f32:
        if ctx.target is not None and not ctx.target.satisfies("sm_100a"):
            diags.append(("PTX-E-TARGET", f"redux.sync on .f32 needs target sm_100a (module target is {ctx.target})",
                          ()))
        if not m & {"min", "max"}:
            diags.append(("PTX-E-TYPE", "redux.sync takes .f32 only with .min or .max", ()))
    if base == "redux" and m & {"and", "or", "xor"} and ty is not None and ty.name != "b32":
        diags.append(("PTX-E-TYPE", f"redux.sync.{sorted(m & {'and', 'or', 'xor'})[0]} is .b32 only", ()))
    if base == "redux" and m & {"add", "min", "max"} and ty is not None and ty.name == "b32":
        diags.append(("PTX-E-TYPE", "redux.sync .add/.min/.max take .u32 or .s32", ()))
    if base == "cvta" and not m & (_SPACES - {"generic"}):
        diags.append(("PTX-E-MODIFIER", "cvta needs a state space", ("e.g. cvta.to.global.u64",)))
    if base in ("shfl", "vote") and "sync" not in m and ctx.target is not None and ctx.target.sm >= 70:
        diags.append(("PTX-E-MODIFIER", f"{base} without .sync is not supported on sm_70 and later",
                      (f"write {base}.sync with a member mask",)))
    if base == "shfl" and ty is not None and ty is not b32:
        # ptxas 13.0: "Unexpected instruction types specified for 'shfl'"
        diags.append(("PTX-E-TYPE", f"shfl has no .{ty.name} form", ("shfl moves .b32 values",)))


_TEXTURE_OPS = frozenset(("tex", "tld4", "suld", "sust", "sured"))
_SPACE_WORDS = frozenset(("global", "shared", "local", "param", "const", "tex", "surf"))
_MEMORY_OPS = frozenset(("ld", "st", "atom", "red", "ldu", "prefetch", "prefetchu", "multimem"))
# instructions whose [..] operands are not memory addresses (textures, surfaces) or are always 64-bit
_NO_GENERIC = frozenset(("tex", "tld4", "txq", "suld", "sust", "sured", "suq", "call", "prefetch", "prefetchu",
                         "cvta", "isspacep", "applypriority", "discard", "createpolicy", "tensormap", "istypep"))


def _family_mnemonics() -> frozenset:
    """First opcode tokens of the forms ptxgen.legality knows (derived from its table, once)."""
    global _FAMILIES
    if _FAMILIES is None:
        # (prefetch, st, red: only prefetch.tensormap, st.async and red.async are legality forms; the other
        # prefetches, stores and reductions are core)
        _FAMILIES = frozenset(f.opcode.split(".")[0] for f in legality.forms()) - {"prefetch", "st", "red"}
    return _FAMILIES


_FAMILIES: Optional[frozenset] = None


# ------------------------------------------------------------------------------------------- legality hook
def legality_check(instr: Instr, target: Optional[Target], version: Optional[PtxVersion],
                   vec_len: Optional[Callable[[str], Optional[int]]] = None) -> List[Diagnostic]:
    """The one call into ptxgen.legality for an instruction of a tensor-core/async family.

    Converts the IR operands into legality.OperandInfo (register types, vector lengths, immediates) with
    the builder's own translation (ops.operands.operand_infos, which also knows the parser's shapes) and
    returns legality.check's diagnostics (without locations; the caller adds them). `vec_len` gives the length of a
    vector register (`.reg .v4 .b32 %v`) by name, None for a scalar one: an operand that names one whole goes to
    legality as such (OperandInfo.whole).
    """
    handles = instr.opcode.startswith(_HANDLE_OPS)
    infos = []
    for o in instr.operands:
        t = type(o)
        n = _whole_coordinates(o, vec_len) if t is AddrList and vec_len is not None else 0
        if n:
            # `[tmap, %v]`, `[tex, %v]`: a whole vector register as the coordinates, as ptxas reads it: {%v.x, ...}
            info = _texture_ref_info(o) if handles else OperandInfo("tensor", space=var_space(o.items[0].base))
            infos.append(replace(info, count=n, elems=(o.items[-1].base.type,) * n, bare=False, whole=n))
        elif handles and t is AddrList:
            infos.append(_texture_ref_info(o))
        elif handles and t is Addr:  # txq/suq [a]: what a names (a .texref ... variable or a handle register)
            h = _handle_name(o.base) if o.offset == 0 else None
            info = operand_info(o)
            infos.append(replace(info, handles=(h,), space=None if h in _REF_TYPES else info.space))
        elif t is Reg and vec_len is not None and _whole_len(o, vec_len):
            infos.append(replace(operand_info(o), whole=_whole_len(o, vec_len)))
        else:
            infos.extend(operand_infos((o,)))
    out = legality.check(instr.opcode, infos, target, version)
    if vec_len is not None and not any(d.severity == "error" for d in out):
        where = legality.whole_vector_crash(instr.opcode, infos)
        if where is not None:
            out.append(Diagnostic("PTX-E-OPERANDS", "error",
                                  f"{instr.opcode.split('.')[0]}: {where} is a whole vector register; ptxas 13.0 takes "
                                  "it in its checks and then crashes (a segmentation fault) generating code for it",
                                  None, ("name its elements: {%v.x, %v.y, ...}",)))
    return out


# the instructions whose operands name a texture, sampler or surface
_HANDLE_OPS = ("tex", "tld4", "txq", "suq", "suld", "sust", "sured")
_REF_TYPES = legality.REF_TYPES


def _ref_var(base) -> Optional[str]:
    """The type name of a variable that is a texture, sampler or surface reference (a scalar .texref,
    .samplerref or .surfref variable or kernel parameter; an array of them is plain memory), else None."""
    if isinstance(base, Sym) and base.space not in ("?", "func") and getattr(base, "count", None) is None:
        ty = getattr(base, "type", None)
        if ty is not None and ty.name in _REF_TYPES:
            return ty.name
    return None


def _handle_name(base) -> Optional[str]:
    """The type name of a texture/sampler/surface operand: a register's, a .texref/.samplerref/.surfref
    variable's or kernel parameter's, 'array' for an array of them, 'variable' for any other variable; None
    for anything else."""
    t = type(base)
    if t is Reg:
        return base.type.name if base.type is not None else None
    if isinstance(base, Sym) and base.space not in ("?", "func"):
        ty = getattr(base, "type", None)
        if ty is not None and ty.name in _REF_TYPES:
            return "array" if getattr(base, "count", None) is not None else ty.name
        return "variable"
    return None


def _texture_ref_info(o: AddrList) -> OperandInfo:
    """A texture or surface reference `[tex, {smp,} {x, y}]` as a tensor reference with the names or
    registers before the coordinates as its handles, also `[tex, %r1]` with one coordinate without braces;
    anything else an address."""
    items = o.items
    last = items[-1]
    if len(items) >= 2 and all(type(x) is Addr and x.offset == 0 for x in items[:-1]):
        handles = tuple(_handle_name(x.base) for x in items[:-1])
        base = items[0].base
        space = None if handles[0] in _REF_TYPES else var_space(base)  # a kernel's .param .texref is one too
        if type(last) is Vec:
            coords = operand_info(last)                  # the vector's count, element types and literals
            return replace(coords, kind="tensor", space=space, handles=handles)
        if type(last) is Addr and last.offset == 0 and type(last.base) is Reg:
            return OperandInfo("tensor", count=1, elems=(last.base.type,), space=space, handles=handles, bare=True)
    return OperandInfo("addr")


def _literal_first(v: Vec) -> bool:
    """Whether `v` starts with a literal and holds only literals and declared registers: ptxas 13.0 types such a
    vector by one of its elements (legality._literal_first_typing) rather than element by element."""
    return bool(v.elems) and type(v.elems[0]) in (Imm, FloatImm) and all(
        type(e) in (Imm, FloatImm) or type(e) is Reg and e.type is not None for e in v.elems)


def _typed_by_an_element(op, v: Vec) -> bool:
    """Whether `v` is a st vector that starts with a literal (_literal_first; _FnCheck.literal_first), or a pack
    of mov (_FnCheck.pack), the value of atom, red (_FnCheck.red_vector), multimem.st and multimem.red
    (legality._multimem_literal_first), a vector of a bulk tensor copy (its coordinates:
    legality.coordinates_literal_first_problem) or a texture's or surface's coordinates
    (legality.tex_coordinates_literal_first_problem), typed so too."""
    return (op.base in ("st", "mov", "atom", "red", "tex", "tld4") or op.base.startswith("su")
            or op.base == "multimem" and op.mods[:1] in (("st",), ("red",)) or "tensor" in op.mods) \
        and _literal_first(v)


def _whole_len(o, vec_len: Callable[[str], Optional[int]]) -> int:
    """The length of the vector register operand `o` names whole (`%v`, not `%v.x`); 0: it names none."""
    if type(o) is not Reg or o.type is None or "." in o.name:
        return 0
    return vec_len(o.name) or 0


def _whole_coordinates(o: AddrList, vec_len: Callable[[str], Optional[int]]) -> int:
    """The length of the whole vector register that is the last item of `[a, %v]` (or `[tex, smp, %v]`); 0: none."""
    items = o.items
    last = items[-1]
    if len(items) < 2 or type(last) is not Addr or last.offset != 0 or \
            not all(type(x) is Addr and x.offset == 0 for x in items[:-1]):
        return 0
    return _whole_len(last.base, vec_len)


def _addr_list_info(o: AddrList) -> OperandInfo:
    """A parsed multi-part address: `[tmap, {c0, c1}]` is a tensor reference (the builder's TensorRef),
    anything else (`[tex, sampler, ...]`) an address (legality_check reads texture references itself)."""
    items = o.items
    if len(items) == 2 and type(items[1]) is Vec:
        return tensor_info(items[1], items[0].base if type(items[0]) is Addr else None)
    return OperandInfo("addr")


register_operand_info(AddrList, _addr_list_info)


# ----------------------------------------------------------------------------------------------- checker
_OPERAND_N = re.compile(r"\boperand (\d+)\b")
_NAME = re.compile(r"[A-Za-z_$%][\w$]*")
_COMPONENTS = {"x": 0, "y": 1, "z": 2, "w": 3, "r": 0, "g": 1, "b": 2, "a": 3}


def _vec_elem_ok(e: Type, t: Type) -> bool:
    """An element of a vector register or of a {...} list in mov.vN.T, as ptxas 13.0 types it (probed in
    tests/test_lint_vector_probes.py): the width of T, and a floating-point element only for .bN or .fN (an
    integer or bit element takes any T of its width: mov.v2.f32 moves .v2 .u32 registers), a packed one
    (.f16x2) only for .bN, .uN or .sN."""
    return e.bits == t.bits and not (e.kind == "f" and t.kind in ("u", "s") or e.kind == "packed" and t.kind == "f")


# the special registers that are .v4 .u32 vectors: `mov.v4.u32 {%r1, %r2, %r3, %r4}, %tid;`
_VECTOR_SREGS = frozenset(("%tid", "%ntid", "%ctaid", "%nctaid", "%clusterid", "%nclusterid", "%cluster_ctaid",
                           "%cluster_nctaid"))


class _FnCheck:
    """Labels, scopes and instructions of one function."""

    def __init__(self, ctx: _Ctx, fn: Function, res: Optional[ParseResult], label_uses_out: dict):
        self.ctx = ctx
        self.fn = fn
        self.res = res
        self.blocks: List[Optional[int]] = [None]  # parent of each block; 0 is the body
        self.labels: List[Dict[str, SourceLoc]] = [{}]
        self.uses: List[tuple] = []  # (label, block, statement loc, operand index; None: the loc is the label's)
        self.global_uses = label_uses_out  # label name -> count, also from sections and jump tables
        self.stack = [0]
        # vector registers (`.reg .v2 .f32 %v;`), per block: name -> length, or 'prefix<' -> (length, count),
        # length 0 for scalar registers declared after them (which hide an outer vector register of their
        # name); empty in most functions, where instructions keep the fast path below
        self.vregs: Dict[int, dict] = {}
        self.calltargets: Dict[str, List[str]] = {}  # `$L: .calltargets f, g;`: '$L' -> ['f', 'g']
        self.protos_seen: set = set()  # labels of the .callprototype statements read so far
        self.call_labels: List[tuple] = []  # (label, block, loc, operand index, callee): a call's last operand
        self.branch_lists: Dict[str, SourceLoc] = {}  # `$L: .branchtargets ...`: '$L' -> where, those read so far
        self.brx_later: List[tuple] = []  # (label, loc, operand index): brx.idx lists not declared before it
        # texmode_independent: tex and tld4 name their sampler ([tex, sampler, coordinates])
        self.independent = res is not None and any(n == "texmode_independent" for n, _ in res.targets)
        # whole vector registers named by mma and st instructions, in order (mma_whole_results): name -> [(loc,
        # 'd' for mma's D, 'src' for another operand of an mma, 'st')]
        self.whole_named: Dict[str, List[tuple]] = {}

    def run(self):
        ctx = self.ctx
        ops = ctx.ops
        compat = ctx.compat
        decl_of = self.res.decl_of if self.res is not None else None
        for st in self.fn.body:
            cls = type(st)
            if cls is Instr:
                op = ops.get(st.opcode)
                if op is None:
                    op = ops[st.opcode] = _analyze(ctx, st.opcode)
                plain = op.plain
                if plain is not None and st.guard is None and len(st.operands) == len(plain) and not self.vregs:
                    # most instructions: registers only, each of a type its slot takes
                    for o, ft in zip(st.operands, plain):
                        if type(o) is not Reg or o.type is None or not compat.get((o.type, ft[0], ft[1])):
                            break
                    else:
                        continue
                self.instr(st, op)
            elif cls is LabelDef:
                blk = self.stack[-1]
                name = st.label.name
                prev = self.labels[blk].get(name)
                if prev is not None:
                    ctx.add("PTX-E-DUP-LABEL", f"label '{name}' is defined twice in this scope", st.loc,
                            (f"first defined at line {prev.line}",) if prev.line else (), len(name))
                else:
                    self.labels[blk][name] = st.loc
            elif cls is Raw:
                t = st.text
                if t == "{":
                    self.blocks.append(self.stack[-1])
                    self.labels.append({})
                    self.stack.append(len(self.blocks) - 1)
                elif t == "}":
                    if len(self.stack) > 1:
                        self.stack.pop()
                elif t.startswith(".callprototype"):
                    label = self.last_label()
                    if label is not None:
                        self.protos_seen.add(label)
                elif t.startswith((".branchtargets", ".calltargets")):
                    tl = self.target_list(st)
                    if tl is not None:
                        if tl.kind == "branchtargets" and tl.label is not None:
                            self.branch_lists[tl.label] = st.loc
                        for name, at in tl.names:
                            if tl.kind == "branchtargets":
                                self.uses.append((name, self.stack[-1], at, None))
                                continue
                            if tl.label is not None:
                                self.calltargets.setdefault(tl.label, []).append(name)
                            if self.res is not None and name not in self.res.functions:
                                ctx.add("PTX-E-UNDEFINED", f".calltargets names '{name}', which is not a "
                                                           "declared function (ptxas: \"Illegal call target, device "
                                                           "function expected\")", at, (), len(name))
                elif decl_of is not None:
                    decl = decl_of(st)
                    if decl is not None and decl.space == "reg":
                        if decl.vector is not None:
                            self.vector_decl(decl, st.loc)
                        elif self.vregs:
                            self.scalar_decl(decl)
        if self.whole_named:
            self.mma_whole_results()
        self.finish_labels()

    def mma_whole_results(self):
        """mma's D as a whole vector register %v (`mma ... %v, %a, %b, %c;`) where the function also has another mma
        whose D is %v, a st of %v whole (before or after), or an mma that reads %v whole before this one writes it:
        ptxas 13.0 crashes (a segmentation fault) generating code for the function (tests/test_lint_whole_vregs.py
        records each case). An mma reading %v whole after it, ld, mov and reads of its elements (%v.x) it takes."""
        for name, uses in self.whole_named.items():
            for i, (loc, kind) in enumerate(uses):
                if kind != "d":
                    continue
                other = next((u for j, u in enumerate(uses) if u[0] is not loc and
                              (u[1] in ("d", "st") or u[1] == "src" and j < i)), None)
                if other is None:
                    continue
                at = f"line {other[0].line}" if other[0] is not None and other[0].line else "another instruction"
                what = {"d": "writes it whole too (an mma's D)", "st": "stores it whole",
                        "src": "reads it whole before"}[other[1]]
                self.ctx.add("PTX-E-OPERANDS", f"mma: D is the whole vector register {name}, and {at} {what}; "
                                               "ptxas 13.0 crashes (a segmentation fault) generating code for this "
                                               "function", _tok_loc(self.ctx, loc, 0),
                             (f"name D's elements: {{{name}.x, {name}.y, ...}}",), len(name))

    def vector_decl(self, decl: Decl, loc: Optional[SourceLoc]):
        """`.reg .v2 .f32 %v, %w<4>;` (its parsed declaration): the names are recorded for mov.vN and vector
        operands; the vector's shape is checked as any declaration's (legality.vector_error: .v2 or .v4 of at
        most 128 bits, no predicates)."""
        n, tname = decl.vector, decl.type
        where = loc
        if loc is not None and decl.vector_at is not None:
            where = replace(loc, line=decl.vector_at[0], col=decl.vector_at[1])
        # the rule parameters and variables of other spaces follow too (legality.vector_error); a type no
        # register has is the parser's report
        bad = legality.vector_error(n, tname, "register") if undeclarable_type(tname, "reg") is None else None
        if bad is not None:
            self.ctx.add("PTX-E-DECL", bad[0], where, (bad[1],), len(f".v{n} .{tname}"))
        try:
            get_type(tname)
        except (KeyError, ValueError):
            return  # not a vector register lint can check the operands of
        d = self.vregs.setdefault(self.stack[-1], {})
        for it in decl.items:
            if it.count is not None:
                d[it.name + "<"] = (n, it.count)
            else:
                d[it.name] = n

    def scalar_decl(self, decl: Decl):
        """Scalar registers declared in a function with vector registers: recorded as length 0, so that one
        in an inner block hides an outer vector register of its name."""
        d = self.vregs.setdefault(self.stack[-1], {})
        for it in decl.items:
            if it.count is not None:
                d.setdefault(it.name + "<", (0, it.count))
            else:
                d.setdefault(it.name, 0)

    def vec_len(self, name: str) -> Optional[int]:
        """The length of vector register `name` (not of a component `%v.x`), or None: not a vector register."""
        b = self.stack[-1]
        while b is not None:
            d = self.vregs.get(b)
            if d:
                n = d.get(name)
                if n is not None:
                    return n or None
                p = name.rstrip("0123456789")
                if p != name:
                    a = d.get(p + "<")
                    if a is not None and int(name[len(p):]) < a[1]:
                        return a[0] or None
            b = self.blocks[b]
        return None

    def vector_operands(self, ins: Instr, op: _Op, loc):
        """Vector registers among the operands (a function that declares some): a component beyond the
        vector read (`%v.z` of a .v2: ptxas 13.0 crashes or rejects it), and a whole vector register where the
        instruction takes one value ("Vector operand is not allowed"). mov and ld/st vector slots check the
        whole vectors themselves; instructions whose operands are not typed here are left alone."""
        sig = op.sig
        for k, o in enumerate(ins.operands):
            elems = o.elems if type(o) is Vec else (o,)
            for e in elems:
                if type(e) is not Reg or e.type is None:
                    continue
                name = e.name
                if "." in name:
                    b, c = name.rsplit(".", 1)
                    n = self.vec_len(b)
                    if n is not None and k > 0 and _COMPONENTS.get(c, 0) >= n:
                        self.ctx.add("PTX-E-OPERANDS", f"{name}: {b} is a .v{n} register and has no component .{c}",
                                     _tok_loc(self.ctx, loc, k),
                                     (f"its components are {', '.join('.' + x for x in 'xyzw'[:n])} (or "
                                      f"{', '.join('.' + x for x in 'rgba'[:n])})",), len(name))
                    continue
                if o is not e or op.base == "mov" or sig is None or k >= len(sig):
                    continue
                n = self.vec_len(name)
                if n is not None and not (sig[k][0] in (_DV, _SV) and sig[k][3] > 1):
                    self.ctx.add("PTX-E-OPERANDS", f"{name} is a .v{n} vector register; operand {k + 1} of {op.base} "
                                                   f"takes one value", _tok_loc(self.ctx, loc, k),
                                 (f"name one element ({name}.x ... ) or move it with mov.v{n}",), len(name))

    def mov_vector(self, ins: Instr, op: _Op, loc, n: int):
        """mov.vN.T: each operand a .vN vector register or a {...} of N (the source may also be one register
        or immediate), whose elements `_vec_elem_ok` takes for T (ptxas 13.0: "Arguments mismatch"; a vector
        of another length: "Argument vector size mismatch")."""
        ctx = self.ctx
        ty = op.ty
        if ty is pred:
            ctx.add("PTX-E-TYPE", f"mov.v{n} takes no .pred", _tok_loc(ctx, loc, OPCODE),
                    ("a vector of predicates does not exist; move each .pred with mov.pred",), len(ins.opcode))
            return
        before = len(ctx.out)
        for k, o in enumerate(ins.operands):
            if len(ctx.out) > before:
                return  # one report a mov, as ptxas gives
            t = type(o)
            if t is Vec:
                if len(o.elems) != n:
                    ctx.add("PTX-E-OPERANDS", f"mov.v{n} takes a vector of {n}, {len(o.elems)} given",
                            _tok_loc(ctx, loc, k), (), 1)
                    continue
                if k == 1 and _literal_first(o):
                    self.literal_first(o, ty, op, loc, k, wider=False)    # typed by one element, as st's
                    continue
                bad = False
                for e in o.elems:
                    te = type(e)
                    if te is Reg and e.type is not None and not _vec_elem_ok(e.type, ty):
                        self.vec_elem_type(e.name, e.type, ty, op, loc, k, n)
                        bad = True
                        break
                    if k == 0 and te in (Imm, FloatImm):
                        ctx.add("PTX-E-OPERANDS", f"mov.v{n} {{...}} writes registers, not {e}", _tok_loc(ctx, loc, k))
                        bad = True
                        break
                    if k == 1 and te in (Imm, FloatImm):
                        self.imm_type(e, ty, op, loc, k)
                if not bad:
                    self.vector_kinds(o, ty, op, loc, k, whole=False)
            elif t is Reg:
                if o.type is None:
                    if k == 1 and o.name in _VECTOR_SREGS and (n != 4 or ty.kind not in ("b", "u", "s") or ty.bits != 32):
                        ctx.add("PTX-E-OPERANDS", f"{o.name} is a .v4 .u32 special register; mov.v{n}.{ty.name} "
                                                  f"cannot read it", _tok_loc(ctx, loc, k),
                                (f"write mov.v4.u32, or read one component ({o.name}.x)",), len(o.name))
                    continue
                vn = self.vec_len(o.name) if "." not in o.name else None
                if vn is None:
                    if k == 0:
                        ctx.add("PTX-E-OPERANDS", f"the destination of mov.v{n} must be a .v{n} vector register or a "
                                                  f"{{...}} of {n} registers; {o.name} is one .{o.type.name}",
                                _tok_loc(ctx, loc, k), (), len(o.name))
                    elif not _vec_elem_ok(o.type, ty):      # one register, copied to each element
                        self.vec_elem_type(o.name, o.type, ty, op, loc, k, n)
                elif vn != n:
                    ctx.add("PTX-E-OPERANDS", f"{o.name} is a .v{vn} register; mov.v{n} moves vectors of {n}",
                            _tok_loc(ctx, loc, k), (f"write mov.v{vn}",), len(o.name))
                elif not _vec_elem_ok(o.type, ty):
                    self.vec_elem_type(o.name, o.type, ty, op, loc, k, n)
            elif t in (Imm, FloatImm):
                if k == 0:
                    ctx.add("PTX-E-OPERANDS", "the destination of mov must be a register", _tok_loc(ctx, loc, 0))
                else:
                    self.imm_type(o, ty, op, loc, k)
            elif k == 1 and (isinstance(o, Sym) or t is SymOffset):   # an address, copied to each element
                if ty.kind not in ("b", "u", "s") or ty.bits < 32:
                    name = o.name if isinstance(o, Sym) else o.sym.name
                    ctx.add("PTX-E-TYPE", f"the address of {name} needs a 32- or 64-bit integer mov, not "
                                          f"mov.v{n}.{ty.name}", _tok_loc(ctx, loc, 1), (), len(name))
            else:
                ctx.add("PTX-E-OPERANDS", f"operand {k + 1} of mov.v{n} must be a vector register, a {{...}} of {n}"
                                          f"{' or a value' if k else ''}", _tok_loc(ctx, loc, k))

    def vec_elem_type(self, name: str, et: Type, ty: Type, op: _Op, loc, k, n: int):
        ok = [x for x in ("b", "u", "s", "f") if _vec_elem_ok(et, get_type(f"{x}{et.bits}"))] \
            if et.bits in (16, 32, 64) else []
        legal = ", ".join(f".{x}{et.bits}" for x in ok if x != "f" or et.bits > 16)
        what = f"holds .{et.name} elements" if self.vec_len(name) else f"is .{et.name}"
        self.ctx.add("PTX-E-TYPE", f"{name} {what}; mov.v{n}.{ty.name} moves "
                                   f"{ty.bits}-bit {'integer' if ty.kind in ('u', 's') else 'bit' if ty.kind == 'b' else 'floating-point'} elements",
                     _tok_loc(self.ctx, loc, k), (f"for .{et.name} elements write mov.v{n} with {legal}",) if legal else (),
                     len(name))

    def visible(self, name: str, blk: int) -> bool:
        """Whether label `name` is defined in block `blk` or a block around it."""
        while blk is not None:
            if name in self.labels[blk]:
                return True
            blk = self.blocks[blk]
        return False

    def target_list(self, st: Raw) -> Optional[TargetList]:
        """The `.branchtargets` or `.calltargets` list of statement `st`: as parse() read it, or (a builder
        module's raw() text) read by the grammar now, its label the one defined last in this block."""
        if self.res is not None:
            return self.res.target_list_of(st)
        got = parse_target_list(st.text)
        return None if got is None else TargetList(got[0], self.last_label(), tuple((n, st.loc) for n in got[1]))

    def last_label(self) -> Optional[str]:
        """The label defined last in the current block: that of a `.callprototype` or `.calltargets` just read."""
        blk_labels = self.labels[self.stack[-1]]
        return next(reversed(blk_labels)) if blk_labels else None

    def finish_labels(self):
        ctx = self.ctx
        defined_anywhere = set()
        for d in self.labels:
            defined_anywhere.update(d)
        for name, blk, sloc, k in self.uses:
            self.global_uses[name] = self.global_uses.get(name, 0) + 1
            if self.visible(name, blk):
                continue
            loc = _tok_loc(ctx, sloc, k) if k is not None else sloc
            if name in defined_anywhere:
                ctx.add("PTX-E-LABEL", f"label '{name}' is not visible here (it is defined inside another "
                                       f"{{ }} block)", loc, (), len(name))
            else:
                near = difflib.get_close_matches(name, sorted(defined_anywhere), 1, 0.8)
                ctx.add("PTX-E-LABEL", f"branch to undefined label '{name}'", loc,
                        (f"did you mean '{near[0]}'?",) if near else (), len(name))
        self.defined = [(name, loc) for d in self.labels for name, loc in d.items()]
        for name, sloc, k in self.brx_later:
            if name in self.branch_lists:
                ctx.add("PTX-E-LABEL", f"the .branchtargets list {name} is declared after this brx.idx (ptxas: \"Label "
                                       f"expected for forward reference of '{name}'\")", _tok_loc(ctx, sloc, k),
                        (f"declare `{name}: .branchtargets ...;` before the brx.idx",), len(name))
        for name, blk, sloc, k, callee in self.call_labels:
            if not self.visible(name, blk):
                continue  # reported above
            loc = _tok_loc(ctx, sloc, k)
            if name in self.calltargets or self.res is not None and (self.fn.name, name) in self.res.protos:
                what = ".calltargets list" if name in self.calltargets else "prototype"
                ctx.add("PTX-E-CALL", f"the {what} {name} is declared after the call (ptxas: \"Unknown symbol\")",
                        loc, (f"declare `{name}: ...` before the call",), len(name))
            elif isinstance(callee, Reg):
                ctx.add("PTX-E-CALL", f"'{name}' is a label, not a .callprototype or .calltargets label (ptxas: "
                                      "\"Call target not recognized\")", loc,
                        (f"declare `{name}: .callprototype (...) _ (...);` and call through it",), len(name))

    # -- instructions
    def sampler(self, ins: Instr, loc):
        """tex/tld4 under texmode_independent: a texture without its sampler (ptxas 13.0: "Argument 2 of
        instruction 'tex': .samplerref or .u64 register expected")."""
        for k, o in enumerate(ins.operands):
            if type(o) is AddrList and len(o.items) == 3 and type(o.items[1]) is Addr:
                h = _handle_name(o.items[1].base)
                if h is not None and h not in ("samplerref", "b64", "u64", "s64", "array"):  # an array: legality's
                    self.ctx.add("PTX-E-OPERANDS", f"{ins.opcode.split('.')[0]}: operand {k + 1}: the sampler is "
                                                   f"{'a .' + h if h != 'variable' else 'a variable of another type'}; "
                                                   ".target texmode_independent takes a .samplerref or a 64-bit "
                                                   "register", _tok_loc(self.ctx, loc, k))
            if type(o) is AddrList and len(o.items) == 2:
                self.ctx.add("PTX-E-OPERANDS", f"{ins.opcode.split('.')[0]}: operand {k + 1} names no sampler; "
                                               ".target texmode_independent takes [texture, sampler, coordinates]",
                             _tok_loc(self.ctx, loc, k), ("name a .samplerref or a 64-bit sampler handle after the "
                                                          "texture",))

    def multimem_operands(self, ins: Instr, op: _Op, loc):
        """What ptxas 13.0 refuses in multimem's operands besides legality's slots (which refuse a special register
        and a whole vector register): a 32-bit address register of multimem.ld_reduce or multimem.st, which crashes
        it in a kernel of its own (a segmentation fault; it takes a 16- or a 64-bit one there, and multimem.red a
        64-bit one only: generic_addresses)."""
        ctx = self.ctx
        word = next((w for w in op.mods if w in ("ld_reduce", "st", "red")), None)
        if word is None:
            return                              # (no multimem instruction: legality's diagnosis says so)
        name = "multimem." + word
        for k, o in enumerate(ins.operands):
            t = type(o)
            if t is Addr and "red" not in op.mods and ctx.address_size == 64 and type(o.base) is Reg \
                    and o.base.type is not None and o.base.type.bits == 32:
                ctx.add("PTX-E-OPERANDS", f"{o.base.name} is a 32-bit address register; ptxas 13.0 crashes (a "
                                          f"segmentation fault) on {name} with one",
                        _tok_loc(ctx, loc, k), ("give the address in a 64-bit register (cvt.u64.u32)",),
                        len(o.base.name))

    def note_whole(self, ins: Instr, loc, st: bool):
        """Record the whole vector registers an mma (taken by legality) or a st names, for mma_whole_results."""
        for k, o in enumerate(ins.operands):
            if _whole_len(o, self.vec_len):
                self.whole_named.setdefault(o.name, []).append((loc, "st" if st else "d" if k == 0 else "src"))

    def mma_result_read(self, ins: Instr, loc):
        """mma's D as a whole vector register that the instruction also reads (`mma ... %acc, %a, %b, %acc;`, or an
        element of it in A, B or C): ptxas 13.0 takes it in its checks and then crashes (a segmentation fault)
        generating code for it. Another vector register as C, or D written {%acc.x, ...}, it assembles."""
        ops = ins.operands
        d = ops[0] if ops else None
        if not _whole_len(d, self.vec_len):
            return
        for k, o in enumerate(ops[1:], 1):
            for e in (o.elems if type(o) is Vec else (o,)):
                if type(e) is Reg and (e.name == d.name or e.name.rsplit(".", 1)[0] == d.name):
                    self.ctx.add("PTX-E-OPERANDS", f"mma: D is the whole vector register {d.name}, which operand {k + 1} "
                                                   "reads too; ptxas 13.0 crashes (a segmentation fault) generating "
                                                   "code for it", _tok_loc(self.ctx, loc, 0),
                                 (f"name D's elements: {{{d.name}.x, {d.name}.y, ...}}, or accumulate in another "
                                  "vector register",), len(d.name))
                    return

    def instr(self, ins: Instr, op: _Op):
        ctx = self.ctx
        loc = ins.loc
        if op.diags:
            for code, msg, notes in op.diags:
                ctx.add(code, msg, _tok_loc(ctx, loc, OPCODE), notes, len(ins.opcode))
        if op.family:
            ops = ins.operands
            if op.base == "elect" and len(ops) == 3 and not hasattr(ops[0], "b"):
                # legality sees `d|p` as two operands; ptxas: "Arguments mismatch for instruction 'elect'"
                ctx.add("PTX-E-OPERANDS", f"{ins.opcode} writes d|p: join the destination and the predicate with "
                                          f"'|', not ','", _tok_loc(ctx, loc, 0), (f"{ins.opcode} {ops[0]}|{ops[1]}, "
                                                                                   f"{ops[2]};",))
            had = len(ctx.out)
            try:
                for d in legality_check(ins, ctx.target, ctx.version, self.vec_len if self.vregs else None):
                    # point at the operand when the message names one ("operand 4 (c) takes ...")
                    m = _OPERAND_N.search(d.message)
                    k = int(m.group(1)) - 1 if m else OPCODE
                    where = _tok_loc(ctx, loc, k) if k is OPCODE or k < len(ins.operands) else loc
                    span = len(ins.opcode) if k is OPCODE else 1
                    ctx.add(d.code, d.message, where, d.notes, span, d.severity)
            except Exception as e:  # a bug in the shared legality code must not hide the other findings
                ctx.add("PTX-E-INTERNAL", str(InternalError(f"legality.check({ins.opcode!r}) raised "
                                                            f"{type(e).__name__}: {e}")), loc)
            if self.independent and op.base in ("tex", "tld4"):
                self.sampler(ins, loc)
            if op.base == "multimem":
                self.multimem_operands(ins, op, loc)
            if op.base == "mma" and self.vregs and len(ctx.out) == had:
                self.mma_result_read(ins, loc)
                self.note_whole(ins, loc, st=False)
        if op.base == "st" and self.vregs:
            self.note_whole(ins, loc, st=True)
        g = ins.guard
        if g is not None:
            r = g.reg
            if type(r) is Reg:
                if r.type is None:
                    self.undeclared(r, loc, GUARD)
                elif r.type is not pred:
                    ctx.add("PTX-E-TYPE", f"guard {r.name} is a .{r.type.name} register; a guard is a .pred",
                            _tok_loc(ctx, loc, GUARD), (), len(r.name))
        ops = ins.operands
        sig = op.sig
        if sig is not None and op.counts is not None and not (op.counts[0] <= len(ops) <= op.counts[1]):
            lo, hi = op.counts
            n = str(lo) if lo == hi else f"{lo} or {hi}"
            if op.base == "cvt":                # cvt.pack (_cvt_pack)
                ctx.add("PTX-E-OPERANDS", f"{ins.opcode} takes {n} operands (d, a, b{', c' if hi == 4 else ''}), "
                                          f"{len(ops)} given (ptxas: \"Arguments mismatch for instruction "
                                          "'cvt.pack'\")",
                        _tok_loc(ctx, loc, OPCODE), (), len(ins.opcode))
            else:
                ctx.add("PTX-E-OPERANDS", f"{op.base} takes {n} operands, {len(ops)} given",
                        _tok_loc(ctx, loc, OPCODE), (), len(ins.opcode))
            sig = None
        fast = op.fast if sig is not None else None
        compat = ctx.compat
        for k, o in enumerate(ops):
            t = type(o)
            if t is Reg:
                rt = o.type
                if rt is None:
                    if not (k == 1 and o.name in _VECTOR_SREGS and op.base == "mov" and "v4" in op.mods):
                        self.undeclared(o, loc, k)
                    continue
                if sig is not None:
                    # most operands: a register of a scalar slot, checked through the compatibility cache
                    ft = fast[k]
                    if ft is not None and compat.get((rt, ft[0], ft[1])):
                        continue
                    self.slot(o, sig[k], op, loc, k)
            elif t is Imm or t is FloatImm:
                if sig is not None:
                    self.slot(o, sig[k], op, loc, k)
            elif t is Label:
                self.uses.append((o.name, self.stack[-1], loc, k))
                if op.base == "brx" and k == 1 and o.name not in self.branch_lists:
                    self.brx_later.append((o.name, loc, k))
            else:
                self.nested(o, loc, k, ins, op)
                if sig is not None:
                    self.slot(o, sig[k], op, loc, k)
                elif t is str and o == "_" and op.base in _SINK_NONE:
                    self.sink(op, _D if k == 0 else _S, loc, k)
        if op.base == "call":
            self.call(ins, loc)
        elif op.wmma is not None and sig is not None:
            self.wmma_fragments(ins, op, loc)
        elif op.base == "mov" and op.ty is not None and not op.diags:
            vec = set(op.mods) & _VEC
            if len(ops) != 2:
                ctx.add("PTX-E-OPERANDS", f"mov takes 2 operands, {len(ops)} given", _tok_loc(ctx, loc, OPCODE),
                        (), len(ins.opcode))
            elif not vec:
                self.mov(ins, op, loc)
            else:
                self.mov_vector(ins, op, loc, int(min(vec)[1:]))
        if self.vregs:
            self.vector_operands(ins, op, loc)
        if op.base == "createpolicy" and "fractional" in op.mods and len(ops) == 2 and type(ops[1]) in (Imm, FloatImm):
            frac = ops[1]
            v = frac.value
            if type(frac) is Imm:                       # ptxas: "Arguments mismatch"
                ctx.add("PTX-E-TYPE", f"createpolicy.fractional: the fraction {v} is an integer literal; it takes "
                                      "a floating-point one", _tok_loc(ctx, loc, 1), (f"write {float(v)!r}",),
                        len(str(v)))
            elif not 0 < v <= 1:                         # (a NaN fails the comparison too)
                ctx.add("PTX-E-OPERANDS", f"createpolicy.fractional: the fraction {frac.text} is out of range (0, 1]",
                        _tok_loc(ctx, loc, 1), ("the fraction of the accessed lines that get the primary "
                                                "priority: greater than 0, at most 1.0",), len(frac.text))
        if op.base in _IMM_VALUE_OPS:
            self.immediate_values(ins, op, loc)
        if op.wide_addr and ctx.address_size == 64:
            self.generic_addresses(ins, op, loc)
        if op.base in _MEMORY_OPS and not op.family:
            self.special_address(ins, op, loc)
        if op.base == "isspacep" and len(ops) == 2 and type(ops[1]) is SpecialReg:
            ctx.add("PTX-E-OPERANDS", f"special register {ops[1].name} can only be read by mov or cvt, not by "
                                      "isspacep", _tok_loc(ctx, loc, 1), ("mov it into a register first",),
                    len(ops[1].name))
        if op.base in _MEMORY_OPS and op.space != "?":
            self.symbol_spaces(ins, op, loc)
            if op.base == "st" and op.space == "param" and self.fn.is_entry and not op.diags:
                self.kernel_param_store(ins, loc)
        elif op.base in ("cvta", "isspacep") and len(ops) == 2:
            self.conversion_symbol(ins, op, loc)

    def special_address(self, ins: Instr, op: _Op, loc):
        """A special register as the base of an address (`[%laneid]`), as ptxas 13.0 takes it in the core memory
        instructions: a scalar ld or ldu reads through one, in every state space; a vector ld, st, atom, red and
        prefetch crash ptxas (a segmentation fault, no message); prefetchu is refused ("Non-generic address")."""
        if op.base in ("ld", "ldu") and not any(m in op.mods for m in ("v2", "v4", "v8")):
            return
        for k, o in enumerate(ins.operands):
            if type(o) is Addr and type(o.base) is SpecialReg:
                what = "refuses" if op.base == "prefetchu" else "crashes (a segmentation fault) on"
                self.ctx.add("PTX-E-OPERANDS", f"the address's base {o.base.name} is a special register; ptxas 13.0 "
                                               f"{what} {op.base} with one", _tok_loc(self.ctx, loc, k),
                             (f"mov {o.base.name} into a register and address through that",), len(o.base.name) + 1)

    def kernel_param_store(self, ins: Instr, loc):
        """st.param through a register in a kernel: ptxas 13.0 crashes (SIGSEGV) on it from sm_90 on, however the
        register got its address (mov or cvta.param of a parameter, ld.param of a pointer, a constant); sm_80 and
        sm_89 take it, as does a .func at any target (tests/test_lint_vectors.py)."""
        t = self.ctx.target
        a = ins.operands[0] if ins.operands else None
        if t is None or t.sm < 90 or type(a) is not Addr or type(a.base) is not Reg:
            return
        self.ctx.add("PTX-E-OPERANDS", f"ptxas 13.0 crashes (segmentation fault) on st.param through a register "
                                       f"({a.base.name}) in a kernel at {t}", _tok_loc(self.ctx, loc, 0),
                     ("a kernel's .param variables are its inputs, which it cannot write, and the arguments of its "
                      "calls, which st.param names: `st.param.b32 [arg], %r;`",), len(a.base.name) + 2)

    def immediate_values(self, ins: Instr, op: _Op, loc):
        """PTX-E-OPERANDS at an integer immediate of a value ptxas 13.0 refuses there (isa_core.imm_value_error: a
        barrier's number and thread count, bfe's and bfi's bit position and length; applypriority's and discard's size
        is their legality form's)."""
        ops = ins.operands
        for k, o in enumerate(ops):
            if type(o) is Imm and type(o.value) is int:
                bad = C.imm_value_error(op.base, op.mods, k, len(ops), o.value)
                if bad is not None:
                    at = _tok_loc(self.ctx, loc, k)
                    line = self.ctx.src(at.line) if at is not None else None
                    m = _IMM_TEXT.match(line or "", at.col - 1) if at is not None and at.col else None
                    self.ctx.add("PTX-E-OPERANDS", bad[0], at, (bad[1],), len(m.group()) if m else 1)

    def wmma_fragments(self, ins: Instr, op: _Op, loc):
        """wmma's fragment operands (`op.wmma`, from `_wmma_rules`): an a or b element type at a shape it
        has no form for, the count of registers (_WMMA_AB_REGS, _WMMA_CD_REGS), and the first register of a
        type the element type is not held in (_WMMA_FRAG_REGS)."""
        shape, frags = op.wmma
        for k, name, et in frags:
            if k >= len(ins.operands):
                continue
            o = ins.operands[k]
            regs = o.elems if type(o) is Vec else (o,)
            table = _WMMA_AB_REGS if name in ("a", "b") else _WMMA_CD_REGS
            want = table.get((et, shape))
            if want is None:
                ok_shapes = ", ".join("." + sh for sh in sorted(sh for t, sh in table if t == et))
                self.ctx.add("PTX-E-SHAPE", f"wmma has no .{shape} form for .{et} {name} fragments",
                             _tok_loc(self.ctx, loc, OPCODE),
                             (f"wmma's .{et} {name} fragments have the shapes {ok_shapes}",), len(ins.opcode))
                return
            if name in ("a", "b"):
                want = want[name == "b"]
            if len(regs) != want:
                self.ctx.add("PTX-E-OPERANDS", f"wmma fragment {name} of .{et} elements at .{shape} is {want} "
                                               f"register{'s' if want > 1 else ''}, {len(regs)} given",
                             _tok_loc(self.ctx, loc, k), (), 1)
            ok = _WMMA_FRAG_REGS[et]
            for r in regs:
                if type(r) is Reg and r.type is not None and r.type.name not in ok:
                    self.ctx.add("PTX-E-TYPE", f"wmma fragment {name} of .{et} elements: {r.name} is .{r.type.name}, "
                                               f"and a .{et} fragment is held in "
                                               + " or ".join("." + t for t in ok) + " registers",
                                 _tok_loc(self.ctx, loc, k), (), 1)
                    break

    def undeclared(self, r: Reg, loc, k):
        name = r.name
        where = _tok_loc(self.ctx, loc, k)
        decl = _REG_PREFIX_DECL.get(name.rstrip("0123456789"))
        note = (f"declare it before its use, e.g. `.reg .{decl} {name};`",) if decl else \
            ("declare it with .reg before its use",)
        self.ctx.add("PTX-E-UNDECLARED", f"register {name} is not declared", where, note, len(name))

    def nested(self, o, loc, k, ins, op):
        """Declaration checks of the registers and names inside an operand."""
        t = type(o)
        if t is Vec:
            # (a vector that starts with a literal is typed by one of its elements: `_typed_by_an_element`)
            width, mixed = None, op is not None and _typed_by_an_element(op, o)
            for e in o.elems:
                if type(e) is Reg:
                    if e.type is None:
                        self.undeclared(e, loc, k)
                    elif width is None:
                        width = vector_bits(e.type)
                    elif vector_bits(e.type) != width and not mixed:    # one report a vector: its first odd one
                        # (a .pred register counts as 32 bits in a vector: ptxas 13.0 takes {%r1, %p2})
                        self.ctx.add("PTX-E-TYPE", f"{e.name} is .{e.type.name}, but the vector's first register is "
                                                   f"{width}-bit; the elements of a vector have one width",
                                     _tok_loc(self.ctx, loc, k), (), 1)
                        mixed = True
                elif isinstance(e, Sym) and e.space == "?":
                    self.unknown_sym(e, loc, k)
        elif t is Addr:
            b = o.base
            if type(b) is Reg:
                if b.type is None:
                    self.undeclared(b, loc, k)
                elif b.type.kind not in ("b", "u", "s"):
                    self.ctx.add("PTX-E-TYPE", f"address register {b.name} is .{b.type.name}; addresses are "
                                               "integer or bit registers", _tok_loc(self.ctx, loc, k), (), len(b.name))
            elif isinstance(b, Sym) and b.space == "?":
                self.unknown_sym(b, loc, k)
            elif type(b) is Imm and (op.family or op.space != "local"):
                self.ctx.add("PTX-E-OPERANDS", f"{o} is an immediate address; ptxas takes those only in the .local "
                                               "state space", _tok_loc(self.ctx, loc, k),
                             ("put the address in a register, or name a variable ([buf+16])",), len(str(o)))
        elif t is AddrList:
            items = o.items
            last = items[-1]
            if op.base in _TEXTURE_OPS and type(last) is Addr and type(last.base) is Reg:
                # `[tex, %f1]`: a coordinate without braces, not an address (legality checks its type)
                if last.base.type is None:
                    self.undeclared(last.base, loc, k)
                items = items[:-1]
            first = items[0]
            if op.base == "cp" and type(first) is Addr and type(first.base) is Reg and first.base.type is not None \
                    and first.base.type.kind in ("f", "packed"):
                # a tensor map `[%f1, {c}]` of the tensor copies: ptxas 13.0 takes a register of any type but .pred
                # there, where an address of theirs is an integer or bit register
                items = items[1:]
            for it in items:
                self.nested(it, loc, k, ins, op)
        elif t is PredPair:
            for e in (o.a, o.b):
                if type(e) is Reg and e.type is None:
                    self.undeclared(e, loc, k)
                elif type(e) is Vec:  # tex's `{d0, d1, d2, d3}|p`
                    self.nested(e, loc, k, ins, op)
        elif t is Guard:
            r = o.reg
            if type(r) is Reg and r.type is None:
                self.undeclared(r, loc, k)
        elif t is CallArgs:
            if op.base != "call":
                self.ctx.add("PTX-E-SYNTAX", f"{o} is a parenthesised list, which only a call takes (its arguments "
                                             "or return values)", _tok_loc(self.ctx, loc, k), (), len(str(o)))
            for e in o.items:
                if type(e) is Reg and e.type is None:
                    self.undeclared(e, loc, k)
                elif isinstance(e, Sym) and e.space == "?":
                    self.unknown_sym(e, loc, k)
        elif t is SymOffset:
            if o.sym.space == "?":
                self.unknown_sym(o.sym, loc, k)
        elif isinstance(o, Sym):
            if o.space == "?":
                self.unknown_sym(o, loc, k)

    def unknown_sym(self, s: Sym, loc, k):
        notes = ()
        if self.res is not None:
            f = self.res.functions.get(s.name)
            v = next((v for v in self.res.module.vars if v.name == s.name), None) if self.res.module else None
            later = f.loc if f is not None else v.loc if v is not None else None
            if later is not None:
                notes = (f"'{s.name}' is declared at line {later.line}, after this use; declare it first",)
        self.ctx.add("PTX-E-UNDEFINED", f"'{s.name}' is not declared", _tok_loc(self.ctx, loc, k), notes,
                     len(s.name))

    def sink(self, op: _Op, kind, loc, k):
        """The sink `_` where the slot is not one: ptxas 13.0 takes it as the destination of atom and setp (and
        of the families legality covers, mbarrier.arrive's state, elect.sync's d, ...), either side of setp's
        and match.all.sync's `p|q`, shfl.sync's p; it refuses it as another destination ("Result discard mode
        is not allowed for instruction 'add'") and as a source (a syntax error)."""
        if kind in (_D, _DV, _PD):
            if op.base not in _SINK_D:
                self.ctx.add("PTX-E-OPERANDS", f"{op.base} writes no sink: the destination _ is taken by atom and "
                                               f"setp only (ptxas: \"Result discard mode is not allowed for "
                                               f"instruction '{op.base}'\")", _tok_loc(self.ctx, loc, k),
                             ("write a register",))
        else:
            self.ctx.add("PTX-E-OPERANDS", f"operand {k + 1} of {op.base} is a source; the sink _ is only a "
                                           "destination (ptxas: a syntax error)", _tok_loc(self.ctx, loc, k))

    def slot(self, o, slot, op: _Op, loc, k):
        """Type checks of operand k against its slot (PTX ISA "Operand type checking")."""
        ctx = self.ctx
        kind, ty, wide, n, imm, strict = slot
        t = type(o)
        if kind == _X:
            return
        if t is str and o == "_" or t is PredPair and o.a == "_" and op.base not in _SINK_PAIR_D:
            self.sink(op, kind, loc, k)
            return
        if kind == _L:
            if t is not Label and not (t is Reg and o.type is not None):
                ctx.add("PTX-E-OPERANDS", f"{op.base} takes a label", _tok_loc(ctx, loc, k))
            return
        if kind in (_P, _PD):
            r = o.reg if t is Guard else o
            if (t is PredPair or hasattr(o, "a") and hasattr(o, "b")) and kind == _PD:
                if op.base == "setp" and op.ty is not None and op.ty.name in ("f16", "bf16"):
                    ctx.add("PTX-E-OPERANDS", f"setp.{op.ty.name} writes one predicate, not a pair (ptxas: "
                            "\"Predicate output not allowed for instruction 'setp'\")", _tok_loc(ctx, loc, k),
                            ("compare .f16x2/.bf16x2 pairs for two predicates, or drop |q",))
                    return
                for e in (o.a, o.b):
                    if type(e) is Reg and e.type is not None and e.type is not pred:
                        ctx.add("PTX-E-TYPE", f"{e.name} is .{e.type.name}; {op.base} writes a .pred here",
                                _tok_loc(ctx, loc, k), (), len(e.name))
                return
            if type(r) is Reg:
                if r.type is not None and r.type is not pred:
                    ctx.add("PTX-E-TYPE", f"operand {k + 1} of {op.base} is .pred; {r.name} is .{r.type.name}",
                            _tok_loc(ctx, loc, k), (), len(r.name))
            elif t is Guard and kind == _PD:
                ctx.add("PTX-E-OPERANDS", f"operand {k + 1} of {op.base} is a destination and cannot be negated",
                        _tok_loc(ctx, loc, k))
            elif kind == _PD or not (t is Imm):
                ctx.add("PTX-E-OPERANDS", f"operand {k + 1} of {op.base} must be a predicate register",
                        _tok_loc(ctx, loc, k))
            return
        if kind == _A:
            if t not in (Addr, AddrList):
                ctx.add("PTX-E-OPERANDS", f"operand {k + 1} of {op.base} must be an address [..]", _tok_loc(ctx, loc, k))
            return
        if kind in (_DV, _SV):
            if n > 1:
                vn = self.vec_len(o.name) if t is Reg and self.vregs and "." not in o.name else None
                if vn is not None:                       # a vector register: `ld.global.v2.f32 %v, [a]`
                    if vn != n:
                        ctx.add("PTX-E-OPERANDS", f"{o.name} is a .v{vn} register; {op.base}.v{n} takes a vector "
                                                  f"of {n}", _tok_loc(ctx, loc, k), (f"write {op.base}.v{vn}",),
                                len(o.name))
                    elif o.type is not None:
                        self.reg_type(o, _BIT_TYPES.get(ty.bits, ty), wide, op, loc, k, strict=True)
                        self.vector_kinds(Vec((o,) * vn), ty, op, loc, k)   # typed as its elements
                    return
                if t is not Vec:
                    ctx.add("PTX-E-OPERANDS", f"operand {k + 1} of {op.base}.v{n} must be a vector of {n}",
                            _tok_loc(ctx, loc, k))
                    return
                if len(o.elems) != n:
                    ctx.add("PTX-E-OPERANDS", f"{op.base}.v{n} takes a vector of {n}, {len(o.elems)} given",
                            _tok_loc(ctx, loc, k))
                    return
                # ptxas 13.0 types a vector by its registers, not each one by the instruction: a register
                # of any kind of the width (each checked as .bN), then `vector_kinds`
                if kind == _SV and op.base == "st" and _literal_first(o):
                    self.literal_first(o, ty, op, loc, k)
                    return
                if kind == _SV and op.base in ("atom", "red"):
                    self.red_vector(o, ty, n, op, loc, k)
                    return
                bits_ty = _BIT_TYPES.get(ty.bits, ty)
                # a .pred register beside others is a 32-bit element ({%r1, %p2}: types.vector_bits); an .f32
                # access takes no wider register in a vector but a .bN one ("Arguments mismatch" for ld.v2.f32
                # {%rd1, %rd2} with .u64 or .f64 registers)
                preds = sum(1 for e in o.elems if type(e) is Reg and e.type is not None and e.type.kind == "pred")
                uniform = legality.uniform_vector(operand_info(o)) if ty is f32 and wide else None
                for e in o.elems:
                    vwide = wide and (ty is not f32 or not uniform or type(e) is Reg and e.type is not None
                                      and e.type.kind == "b")
                    if type(e) is Reg and e.type is not None and e.type.kind == "pred" and preds < len(o.elems):
                        if not compatible(b32, bits_ty, wider_ok=vwide):
                            self.ctx.add("PTX-E-TYPE", f"{e.name} is a .pred register, a 32-bit element in a vector; "
                                                       f"{op.base} needs .{bits_ty.name} here",
                                         _tok_loc(self.ctx, loc, k), (), len(e.name))
                    elif type(e) is Reg and e.type is not None:
                        self.reg_type(e, bits_ty, vwide, op, loc, k, strict=True)
                    elif kind == _DV and type(e) in (Imm, FloatImm):
                        ctx.add("PTX-E-OPERANDS", f"{op.base} cannot write to an immediate", _tok_loc(ctx, loc, k))
                    elif type(e) is Imm or type(e) is FloatImm and ty.kind == "b" and not any(
                            type(x) is Reg for x in o.elems):
                        self.imm_type(e, ty, op, loc, k)
                    # (a float literal beside registers: ptxas 13.0 takes one of any width; `vector_kinds`; in a
                    # vector of literals only, a .bN access takes those of its width: {0f3F800000, 0f3F800000})
                self.vector_kinds(o, ty, op, loc, k, uniform=uniform)
                return
            if t is Vec:
                ctx.add("PTX-E-OPERANDS", f"operand {k + 1} of {op.base} is a vector; this form takes one value "
                                          f"(write .v{len(o.elems)} for a vector access)", _tok_loc(ctx, loc, k))
                return
            kind = _D if kind == _DV else _S
        if kind == _D:
            if t is Reg:
                self.reg_type(o, ty, wide, op, loc, k, strict)
            elif t is PredPair or hasattr(o, "a") and hasattr(o, "b"):  # shfl.sync d|p
                if type(o.a) is Reg and o.a.type is not None:
                    self.reg_type(o.a, ty, wide, op, loc, k)
                if type(o.b) is Reg and o.b.type is not None and o.b.type is not pred:
                    ctx.add("PTX-E-TYPE", f"{o.b.name} is .{o.b.type.name}; {op.base} writes a .pred after '|'",
                            _tok_loc(ctx, loc, k), (), len(o.b.name))
            elif t in (Imm, FloatImm):
                ctx.add("PTX-E-OPERANDS", f"the destination of {op.base} must be a register", _tok_loc(ctx, loc, k))
            elif t is SpecialReg:
                ctx.add("PTX-E-OPERANDS", f"special register {o.name} is read-only", _tok_loc(ctx, loc, k),
                        (), len(o.name))
            return
        # sources
        if t is Reg:
            self.reg_type(o, ty, wide, op, loc, k, strict)
        elif t is Imm or t is FloatImm:
            if not imm:
                ctx.add("PTX-E-OPERANDS", f"operand {k + 1} of {op.base} must be a register", _tok_loc(ctx, loc, k))
            else:
                self.imm_type(o, ty, op, loc, k)
        elif t is SpecialReg and op.base not in ("mov", "cvt"):
            ctx.add("PTX-E-OPERANDS", f"special register {o.name} can only be read by mov or cvt",
                    _tok_loc(ctx, loc, k), ("mov.u32 it into a register first",), len(o.name))
        elif isinstance(o, Sym) and op.base not in ("mov", "cvta", "cvt"):
            ctx.add("PTX-E-OPERANDS", f"operand {k + 1} of {op.base} must be a register or immediate, not the "
                                      f"symbol {o.name}", _tok_loc(ctx, loc, k), (), len(o.name))

    def vector_kinds(self, v: Vec, ty: Type, op: _Op, loc, k, whole: bool = True, uniform: Optional[bool] = None):
        """ld/st/ldu vectors as ptxas 13.0 types them (probed in tests/test_lint_core_probes.py): registers
        of integer (.u/.s), floating-point and packed (.f16x2) kinds do not stand next to each other
        ("Vector with elements of different types"), a .bN register stands next to any; and a vector of
        floating-point registers only (no .bN) is not an integer value, nor one of packed registers only
        a floating-point value ("Arguments mismatch"). Integer registers make a floating-point value. An
        integer literal counts as an integer register, a float literal (0f, 0d or decimal, any width) as
        a floating-point one. (whole=False: the neighbours only, for mov's packs.)"""
        kinds = [VECTOR_KIND.get(e.type.kind) if type(e) is Reg and e.type is not None
                 else "i" if type(e) is Imm and isinstance(e.value, int) else "f" if type(e) is FloatImm else None
                 for e in v.elems]
        j = clashing_neighbour(kinds)
        if j is not None:
            a, b = v.elems[j - 1], v.elems[j]
            desc = lambda e: f"{e.name} (.{e.type.name})" if type(e) is Reg else f"the literal {e}"
            self.ctx.add("PTX-E-TYPE", f"{desc(b)} stands next to {desc(a)} in the vector; ptxas takes no "
                                       f"vector whose neighbours mix integer, floating-point, packed and .pred values",
                         _tok_loc(self.ctx, loc, k), ("a .bN register stands next to any kind",), 1)
            return
        # (a vector of one register type and literals but .f32 ones with 0f literals is typed by its elements,
        # not as a whole: st.v4.u32 takes {%f1, %f2, %f3, 0d3FF0000000000000})
        if whole and None not in kinds and len(set(kinds)) == 1 and (
                uniform if uniform is not None else legality.uniform_vector(operand_info(v))):
            kind = kinds[0]
            if kind == "f" and ty.kind in ("u", "s") or kind == "h" and ty.kind == "f":
                what = "floating-point" if kind == "f" else "packed"
                self.ctx.add("PTX-E-TYPE", f"the vector holds {what} values only; {op.base}.{ty.name} needs "
                                           f"{'integer' if ty.kind != 'f' else 'floating-point or integer'} ones "
                                           f"(or .b{ty.bits})", _tok_loc(self.ctx, loc, k), (), 1)

    def literal_first(self, v: Vec, ty: Type, op: _Op, loc, k, wider: bool = True):
        """A st vector that starts with a literal (`_literal_first`), which ptxas 13.0 types by one of its elements
        (`legality.literal_first_problem`, st's reading: a .uN/.sN access takes wider elements), not element by
        element; and an integer literal after the first element of an .f32/.f64 vector, which ptxas takes in its
        checks and crashes on generating code, as after a register. (wider=False: the source of mov.vN, which
        takes no wider element, and 64-bit integer values for .f32.)"""
        ctx = self.ctx
        if ty.kind == "f":
            for e in v.elems[1:]:
                if type(e) is Imm:
                    # (mov.vN of literals only: "Arguments mismatch")
                    what = "refuses it" if op.base == "mov" and not any(type(x) is Reg for x in v.elems) else \
                        "takes it in its checks and then crashes (a segmentation fault) generating code"
                    ctx.add("PTX-E-TYPE", f"integer literal {e} after the first element of an .{ty.name} vector: "
                                          f"ptxas 13.0 {what}", _tok_loc(ctx, loc, k),
                            (f"write it as a float literal, e.g. {Imm(float(e.value), ty)}",), 1)
                    return
        bad = legality.literal_first_problem(operand_info(v), ty, wider=wider, int_f32=wider)
        if bad:
            ctx.add("PTX-E-TYPE", f"{op.base}.{ty.name}: operand {k + 1} {bad}", _tok_loc(ctx, loc, k),
                    ("put the literal in a register, or a register first",), 1)

    def red_vector(self, v: Vec, ty: Type, n: int, op: _Op, loc, k):
        """The vector value of atom or red, which ptxas 13.0 types as multimem.red's
        (legality.red_vector_value_problem); an integer literal after its first element, where it holds a
        register, it refuses or crashes on (a segmentation fault)."""
        ctx = self.ctx
        if any(type(e) is Reg for e in v.elems):
            for e in v.elems[1:]:
                if type(e) is Imm:
                    ctx.add("PTX-E-TYPE", f"integer literal {e} after the first element of a {op.base} vector of "
                                          "registers: ptxas 13.0 refuses it or crashes (a segmentation fault)",
                            _tok_loc(ctx, loc, k), ("put it in a register",), 1)
                    return
        if any(type(e) is Reg and e.type is None for e in v.elems):
            return      # an undeclared register: `nested` reports it
        bad = legality.red_vector_value_problem(operand_info(v), ty.name, n)
        if bad:
            ctx.add("PTX-E-TYPE", f"{op.base}.v{n}.{ty.name}: operand {k + 1} {bad}", _tok_loc(ctx, loc, k), (), 1)

    def reg_type(self, r: Reg, ty: Type, wide: bool, op: _Op, loc, k, strict: bool = False):
        # strict: a vector's element or a strict slot (`_slot`), where ptxas 13.0 takes no .f16x2 register for
        # a 32-bit integer (ld.v2.u32, shl's shift amount)
        key = (r.type, ty, wide, "strict") if strict else (r.type, ty, wide)
        ok = self.ctx.compat.get(key)
        if ok is None:
            ok = self.ctx.compat[key] = compatible(r.type, ty, wider_ok=wide, f16x2_as_int=not strict)
        if not ok:
            self.ctx.add("PTX-E-TYPE", f"{r.name} is a .{r.type.name} register; {op.base} needs .{ty.name} here",
                         _tok_loc(self.ctx, loc, k), _type_notes(r.type, ty), len(r.name))

    def imm_type(self, o, ty: Type, op: _Op, loc, k):
        if type(o) is FloatImm:
            # bit types take a float literal's bits when the widths agree (and.b32 %r1, %r2, 0f7FFFFFFF;
            # mov.b64 a 0d literal or a decimal one, which is double precision); integer types take none
            bits = o.type.bits if o.type is not None else 64
            if not (ty.kind == "f" and ty.bits >= 32 or ty.kind == "b" and bits == ty.bits):
                note = (f"the bits of a .{ty.name} are a {'0f' if ty.bits == 32 else '0d'} literal",) \
                    if ty.kind == "b" and ty.bits in (32, 64) else ()
                self.ctx.add("PTX-E-TYPE", f"{o.text} is a floating-point literal; operand {k + 1} of {op.base} is "
                                           f".{ty.name}", _tok_loc(self.ctx, loc, k), note, len(o.text))
        elif ty in C.HALF:
            # ptxas 13.0 takes no immediate for a half-precision operand ("Arguments mismatch")
            txt = str(o.value)
            self.ctx.add("PTX-E-TYPE", f"{op.base}.{ty.name} takes no immediate operands ({txt})",
                         _tok_loc(self.ctx, loc, k), (f"put the bits in a register first (mov.b{ty.bits} with a "
                                                      f"0x literal)",), len(txt))
        elif isinstance(o.value, int) and ty.kind == "f" and ty.bits >= 32:
            txt = str(o.value)
            self.ctx.add("PTX-E-TYPE", f"integer literal {txt} where {op.base} needs an .{ty.name} value",
                         _tok_loc(self.ctx, loc, k), (f"write it as a float literal, e.g. {Imm(float(o.value), ty)}",),
                         len(txt))

    def generic_addresses(self, ins: Instr, op: _Op, loc):
        """A generic address is 64 bits wide in a module with .address_size 64."""
        for k, o in enumerate(ins.operands):
            if type(o) is Addr and type(o.base) is Reg and o.base.type is not None and o.base.type.bits < 64:
                what = "global" if "global" in op.mods else "generic"
                self.ctx.add("PTX-E-TYPE", f"{o.base.name} is a {o.base.type.bits}-bit {what} address, but this "
                                           "module's .address_size is 64", _tok_loc(self.ctx, loc, k),
                             (f"give a state space ({op.base}.shared ...) or use a 64-bit register",),
                             len(o.base.name))
                return

    def symbol_spaces(self, ins: Instr, op: _Op, loc):
        """`ld.global [shared_var]`, generic `ld [param]` and `st.param [kernel_param]` are rejected."""
        for k, o in enumerate(ins.operands):
            if type(o) is not Addr or not isinstance(o.base, Sym):
                continue
            sym = o.base
            sp = sym.space
            if sp in ("?", "func"):
                continue
            ref = _ref_var(sym)
            if ref is not None:  # memory of no instruction (ld, st: "Illegal operand type"; atom, prefetch crash)
                self.ctx.add("PTX-E-OPERANDS", f"{sym.name} is a .{ref}, which {op.base} cannot address (ptxas: "
                                               f"\"Illegal operand type to instruction '{op.base}'\")",
                             _tok_loc(self.ctx, loc, k), (f"tex, tld4, txq, suld, sust, sured and suq name a .{ref}; "
                                                          f"its 64-bit handle is `mov.u64 %rd, {sym.name};`",),
                             len(sym.name))
                return
            if op.space is None:
                if sp in ("const", "param"):
                    self.ctx.add("PTX-E-OPERANDS", f"{sym.name} is a .{sp} variable; generic {op.base} cannot "
                                                   f"address it", _tok_loc(self.ctx, loc, k),
                                 (f"write {op.base}.{sp}",), len(sym.name))
            elif op.space != sp:
                self.ctx.add("PTX-E-OPERANDS", f"{sym.name} is a .{sp} variable, but this is {op.base}.{op.space}",
                             _tok_loc(self.ctx, loc, k), (f"write {op.base}.{sp}",), len(sym.name))
            elif sp == "param" and getattr(sym, "input", False) and op.base != "ld" and k == 0:
                self.ctx.add("PTX-E-OPERANDS", f"{sym.name} is an input parameter; {op.base} cannot write it",
                             _tok_loc(self.ctx, loc, k), (), len(sym.name))

    def conversion_symbol(self, ins: Instr, op: _Op, loc):
        """cvta and isspacep of a variable's address, as ptxas 13.0 takes them: cvta.space converts the address
        of a variable of that space ("State space mismatch between instruction and address"), cvta.to.space
        and isspacep a register ("must be register", "Arguments mismatch"; isspacep takes `g+4`)."""
        o = ins.operands[1]
        if not isinstance(o, Sym) or o.space == "?":
            if type(o) is not SymOffset or op.base == "isspacep" or "to" in op.mods or o.sym.space == "?":
                return
            o = o.sym
        name = o.name
        if op.base == "isspacep" or "to" in op.mods:
            self.ctx.add("PTX-E-OPERANDS", f"{op.base}{'.to' if 'to' in op.mods else ''} takes a register, not the "
                                           f"variable {name}", _tok_loc(self.ctx, loc, 1),
                         (f"put its address in a register first: `mov.u64 %rd, {name};`",), len(name))
            return
        sp = op.space
        if sp and o.space != sp:
            what = "the function" if o.space == "func" else f"a .{o.space} variable"
            self.ctx.add("PTX-E-OPERANDS", f"{name} is {what}, but this is cvta.{op.space} (ptxas: \"State space "
                                           "mismatch between instruction and address\")", _tok_loc(self.ctx, loc, 1),
                         (f"write cvta.{o.space}" if o.space != "func" else "a function's address is generic already: "
                          f"mov.u64 %rd, {name};",), len(name))

    def mov(self, ins: Instr, op: _Op, loc):
        """mov: a register, immediate, special register, variable address, or a vector to (un)pack."""
        ctx = self.ctx
        ty = op.ty
        d, s = ins.operands
        if type(d) is Vec:
            self.pack(d, ty, op, loc, 0)
        elif type(d) is Reg:
            if d.type is not None and not (self.vregs and self.whole_vector(d, ty, loc, 0)):
                self.reg_type(d, ty, False, op, loc, 0)
        elif type(d) in (Imm, FloatImm, SpecialReg):
            ctx.add("PTX-E-OPERANDS", "the destination of mov must be a register", _tok_loc(ctx, loc, 0))
        t = type(s)
        if t is Reg:
            if s.type is not None and not (self.vregs and self.whole_vector(s, ty, loc, 1)):
                self.reg_type(s, ty, False, op, loc, 1)
        elif t is Imm or t is FloatImm:
            self.imm_type(s, ty, op, loc, 1)
        elif t is SpecialReg:
            st = s.type
            if ty.kind not in ("b", "u", "s") or ty.bits > st.bits and st.kind != "pred":
                ctx.add("PTX-E-TYPE", f"{s.name} is .{st.name}; mov.{ty.name} cannot read it",
                        _tok_loc(ctx, loc, 1), (f"write mov.{st.name}",), len(s.name))
        elif t is Vec:
            self.pack(s, ty, op, loc, 1)
        elif isinstance(s, Sym) or t is SymOffset:
            name = s.name if isinstance(s, Sym) else s.sym.name
            ref = _ref_var(s)
            if ref is not None and ty.name != "u64":
                what = {"texref": "texture", "samplerref": "sampler", "surfref": "surface"}[ref]
                ctx.add("PTX-E-TYPE", f"{name} is a .{ref}: mov.{ty.name} cannot take its handle (ptxas: \"Indirect "
                                      f"access to {what} requires .u64 type\")", _tok_loc(ctx, loc, 1),
                        (f"write mov.u64 %rd, {name}",), len(name))
            elif ty.kind not in ("b", "u", "s") or ty.bits < 32:
                ctx.add("PTX-E-TYPE", f"the address of {name} needs a 32- or 64-bit integer mov, not "
                                      f"mov.{ty.name}", _tok_loc(ctx, loc, 1), (), len(name))

    def whole_vector(self, r: Reg, ty: Type, loc, k) -> bool:
        """A whole vector register in a scalar mov (True: it is one, and checked here): ptxas 13.0 moves its
        bits as one .bN of the vector's size, like `mov.b64 %rd1, {%r1, %r2}`."""
        n = self.vec_len(r.name) if "." not in r.name else None
        if n is None:
            return False
        size = n * r.type.bits
        if ty.kind != "b" or ty.bits != size:
            self.ctx.add("PTX-E-TYPE", f"{r.name} is a .v{n} .{r.type.name} vector register ({size} bits); "
                                       f"mov.{ty.name} cannot move it", _tok_loc(self.ctx, loc, k),
                         ((f"write mov.b{size} to move its bits as one value, or " if size in (16, 32, 64) else
                           "write ") + f"mov.v{n}.{r.type.name} to move the vector",), len(r.name))
        return True

    def pack(self, v: Vec, ty: Type, op: _Op, loc, k):
        """`mov.b64 %rd1, {%r1, %r2}` and back: equal-width parts that add up to the mov type, which is a
        bit type (ptxas 13.0: "Arguments mismatch" for mov.u64/.f64 with a vector)."""
        elems = v.elems
        if ty.kind != "b":
            self.ctx.add("PTX-E-TYPE", f"mov.{ty.name} cannot {'unpack' if k == 0 else 'pack'} a vector; only a bit "
                                       f"type can", _tok_loc(self.ctx, loc, OPCODE), (f"write mov.b{ty.bits}",),
                         len(f"mov.{ty.name}"))
            return
        n = len(elems)
        part = ty.bits // n if n else 0
        if n not in (2, 4) or part < 8 or part * n != ty.bits:
            # (ptxas 13.0: "Illegal vector size: 8" for mov.b64 of eight .b8 parts and mov.b128 of eight .b16)
            self.ctx.add("PTX-E-OPERANDS", f"mov.{ty.name} cannot split into {n} parts"
                         + (" (ptxas: \"Illegal vector size\"; a pack has 2 or 4)" if n > 4 else ""),
                         _tok_loc(self.ctx, loc, k))
            return
        if k == 1 and _literal_first(v):
            # a pack that starts with a literal is typed by one of its elements, not part by part
            bad = legality.pack_literal_first_problem(operand_info(v), part)
            if bad:
                self.ctx.add("PTX-E-TYPE", f"mov.{ty.name}: the pack {bad}", _tok_loc(self.ctx, loc, k),
                             ("put the literal in a register, or a register first",), 1)
            return
        mixed = not all(type(e) is Reg and e.type is not None and e.type.kind == "pred" for e in elems)
        for e in elems:
            # a .pred part beside others counts as 32 bits (mov.b64 %rd1, {%r1, %p2}; not {%p1, %p2})
            if type(e) is Reg and e.type is not None and (vector_bits(e.type) if mixed else e.type.bits) != part:
                self.ctx.add("PTX-E-TYPE", f"{e.name} is .{e.type.name}; each part of mov.{ty.name} {{...}} is "
                                           f"{part} bits", _tok_loc(self.ctx, loc, k), (), len(e.name))
                return
            if k == 0 and type(e) in (Imm, FloatImm):
                # unpacking into an immediate (mov.b64 {1, %r2}, %rd1): ptxas 13.0 "Arguments mismatch";
                # a pack takes immediates (mov.b64 %rd1, {1, %r2})
                self.ctx.add("PTX-E-OPERANDS", f"mov.{ty.name} {{...}} unpacks into registers, not into {e}",
                             _tok_loc(self.ctx, loc, k))
                return
        self.vector_kinds(v, ty, op, loc, k, whole=False)

    # -- calls
    def call(self, ins: Instr, loc):
        res = self.res
        ops = ins.operands
        shape = ["l" if type(o) is CallArgs else "x" for o in ops]
        ok = {"x", "xl", "lxl", "xlx", "lxlx"}
        if "".join(shape) not in ok:
            self.ctx.add("PTX-E-CALL", "call takes (return values), function, (arguments) and for an indirect "
                                       "call a prototype or .calltargets label, in that order",
                         _tok_loc(self.ctx, loc, OPCODE), (), len(ins.opcode))
            return
        k = 0
        rets = None
        if ops and type(ops[0]) is CallArgs and len(ops) > 1 and type(ops[1]) is not CallArgs:
            rets = ops[0]
            k = 1
        if k >= len(ops):
            self.ctx.add("PTX-E-CALL", "call needs a function", _tok_loc(self.ctx, loc, OPCODE))
            return
        callee = ops[k]
        args = ops[k + 1] if k + 1 < len(ops) and type(ops[k + 1]) is CallArgs else CallArgs(())
        last = ops[-1] if len(ops) > k + 1 and type(ops[-1]) is not CallArgs else None
        if not self.call_shape(callee, last, loc, k, len(ops) - 1):
            return
        if type(ops[-1]) is Label and res is not None:
            label = ops[-1].name
            if label not in self.protos_seen and label not in self.calltargets:
                # a plain label, or a prototype or .calltargets list declared after the call: at the end
                self.call_labels.append((label, self.stack[-1], loc, len(ops) - 1, callee))
                return
            proto = res.protos.get((self.fn.name, label))
            if proto is not None:
                rets_p, params_p = proto
                nr = len(rets.items) if rets is not None else 0
                if nr != len(rets_p) or not _takes_count(len(args.items), params_p):
                    self.ctx.add("PTX-E-CALL", f"call with {nr} return value(s) and {len(args.items)} argument(s) "
                                               f"through prototype {label}, which has {len(rets_p)} and "
                                               f"{len(params_p)}", _tok_loc(self.ctx, loc, k), ())
                else:
                    self.param_types(f"prototype {label}", rets_p, params_p, rets, args, loc, k)
                return
            targets = self.calltargets.get(label)
            if targets is not None:
                # ptxas 13.0 checks the call against each function of the list, as if it called that one;
                # except that a call without return values passes the return count of every function when
                # the list's last function returns nothing (`$L: .calltargets f, g;` with g returning nothing
                # takes `call %rd1, (a), $L;` though f returns a value)
                n = len(self.ctx.out)
                fns = [res.functions[name].fn for name in targets if name in res.functions]
                lenient = rets is None and bool(fns) and not fns[-1].rets
                for f in fns:
                    self.call_args(f, rets, args, loc, k, via=label, any_rets=lenient)
                    if len(self.ctx.out) > n:
                        break
                return
        if isinstance(callee, Sym):
            if callee.space == "?":
                return  # reported as PTX-E-UNDEFINED
            if callee.space != "func":
                self.ctx.add("PTX-E-CALL", f"'{callee.name}' is a variable, not a function", _tok_loc(self.ctx, loc, k),
                             (), len(callee.name))
                return
            f = None
            if res is not None:
                info = res.functions.get(callee.name)
                f = info.fn if info is not None else None
            else:
                f = next((x for x in self.fn.module.functions if x.name == callee.name), None)
            if f is None:
                return
            if f.is_entry:
                self.ctx.add("PTX-E-CALL", f"'{callee.name}' is a kernel (.entry); only .func can be called",
                             _tok_loc(self.ctx, loc, k), (), len(callee.name))
                return
            self.call_args(f, rets, args, loc, k, listed=k + 1 < len(ops))

    def call_shape(self, callee, last, loc, k: int, lk: int) -> bool:
        """The callee and last operand of a call, as ptxas 13.0 takes them: an indirect call (through a
        register) names a prototype or .calltargets label last ("Label expected"), through a 32- or 64-bit
        integer register ("Arguments mismatch" for a floating-point one, "Illegal target" for another size);
        a direct call (a function's name) names none ("must be register"). False where it reported."""
        ctx = self.ctx
        if isinstance(last, Reg):
            ctx.add("PTX-E-CALL", f"the last operand {last.name} of a call is a register; it is a .callprototype or "
                                  ".calltargets label (ptxas: \"Label ... expected\")", _tok_loc(ctx, loc, lk),
                    ("write `call (r), %rd1, (a), proto;` with `proto: .callprototype ...;` declared before",),
                    len(last.name))
            return False
        if isinstance(callee, Sym) and callee.space not in ("func", "?"):
            ctx.add("PTX-E-CALL", f"'{callee.name}' is a variable, not a function", _tok_loc(ctx, loc, k),
                    ("call a .func by name, or through a register holding its address",), len(callee.name))
            return False
        if isinstance(callee, Reg):
            t = callee.type
            if t is not None and (t.bits not in (32, 64) or t.kind not in ("b", "u", "s")):
                ctx.add("PTX-E-CALL", f"the callee {callee.name} is a .{t.name} register; an indirect call goes "
                                      "through a .b32/.b64 (.u, .s) register holding the function's address",
                        _tok_loc(ctx, loc, k), ("mov.u64 %rd1, fn; call ..., %rd1, ..., proto;",), len(callee.name))
                return False
            if last is None:
                ctx.add("PTX-E-CALL", f"an indirect call through {callee.name} names no prototype (ptxas: \"Label "
                                      "expected\")", _tok_loc(ctx, loc, k),
                        ("add a .callprototype or .calltargets label as the last operand: "
                         "`call (r), %rd1, (a), proto;`",), len(callee.name))
                return False
        elif isinstance(callee, Sym) and callee.space == "func" and last is not None:
            name = getattr(last, "name", "")
            ctx.add("PTX-E-CALL", f"a direct call of {callee.name} names no prototype or .calltargets list (ptxas: "
                                  "\"must be register\")", _tok_loc(ctx, loc, lk),
                    (f"drop `, {name}`; or call through a register holding {callee.name}'s address",),
                    len(name) or 1)
            return False
        return True

    def call_args(self, f: Function, rets: Optional[CallArgs], args: CallArgs, loc, k, via: Optional[str] = None,
                  any_rets: bool = False, listed: bool = True):
        """A call's return values and arguments against f's parameters: their count, then `param_types`.
        via: the .calltargets label of an indirect call that names f; listed: the call has an argument list."""
        ctx = self.ctx
        nr = len(rets.items) if rets is not None else 0
        if nr != len(f.rets) and not any_rets or not _takes_count(len(args.items), f.params, listed):
            sig = f"{f.name}(" + ", ".join(p.decl() for p in f.params) + ")"
            if f.rets:
                sig = "(" + ", ".join(p.decl() for p in f.rets) + ") " + sig
            what = f"call of {f.name}" if via is None else f"call through {via}, which names {f.name},"
            span = len(f.name) if via is None else 1
            ctx.add("PTX-E-CALL", f"{what} with {nr} return value(s) and {len(args.items)} argument(s); "
                                  f"{f.name} has {len(f.rets)} and {len(f.params)}", _tok_loc(ctx, loc, k),
                    (sig,) if via is None else (sig, f"every function of {via}'s .calltargets list must take the "
                                                     f"call's arguments"), span)
            return
        self.param_types(f.name, f.rets, f.params, rets, args, loc, k)

    def param_types(self, owner: str, f_rets, f_params, rets: Optional[CallArgs], args: CallArgs, loc, k,
                    poss: str = "'s"):
        """Each argument and return value against its formal parameter, in the order ptxas 13.0 checks them
        (arguments, then return values), reporting the first mismatch only, as ptxas does (`call_item`)."""
        ctx = self.ctx
        before = len(ctx.out)
        pairs = [(formal, actual, k + 1, j, False) for j, (formal, actual) in enumerate(zip(f_params, args.items))]
        if rets is not None:
            pairs += [(formal, actual, 0, j, True) for j, (formal, actual) in enumerate(zip(f_rets, rets.items))]
        for formal, actual, lk, j, is_ret in pairs:
            self.call_item(owner + poss, formal, actual, is_ret, loc, lk, j)
            if len(ctx.out) > before:
                return

    def call_item(self, owner: str, formal, actual, is_ret: bool, loc, lk: int, j: int):
        """One argument (or return value, is_ret) of a call against its formal parameter, as ptxas 13.0 takes
        them (probed in tests/test_lint_vector_probes.py):
        - a .param variable declared in a function body: the same size, both arrays or both scalars, arrays
          of one alignment, and no integer (.u/.s) value for a floating-point parameter or back (a .bN side
          matches either); another state space ("illegal state space") or a function's own parameter is
          not an argument;
        - a register: a scalar parameter ("Inconsistent state space" for an array) of the register's size,
          with the same integer/floating-point rule; a vector register counts as one .bN of its whole size;
          no .pred but for a .pred parameter (which no call a kernel reaches passes: _abi_parameters), special
          register or vector component (`%v.x`: a syntax error);
        - an integer immediate: a .bN, .uN or .sN parameter of any size; a floating-point one: .bN or .fN;
          neither for an array, nor one for an fp8 or .pred parameter, only a 0f literal for a 32-bit packed
          one. A return value may also be `_` or, oddly, a floating-point literal (of the same rule); an
          integer literal there crashes ptxas 13.0, and `_` is no argument."""
        ctx = self.ctx
        what = "return value" if is_ret else "argument"
        fwhat = f"{owner} {'return parameter' if is_ret else 'parameter'} {formal.name}"
        ft = formal.type
        if ft is None:
            return
        where, span = _item_loc(ctx, loc, lk, j)
        t = type(actual)
        fshape = _shape_text(ft, formal.array)
        if t is str:  # `_`
            if not is_ret:
                ctx.add("PTX-E-CALL", f"argument _ for {fwhat}: only a return value can be discarded with _",
                        where, ("pass a register, an immediate or a .param variable",), span)
            return
        if t is Imm or t is FloatImm:
            text = actual.text if t is FloatImm else str(actual.value)
            is_float = t is FloatImm
            if is_ret and not is_float:
                ctx.add("PTX-E-CALL", f"return value {text} is an integer immediate; {fwhat} goes to a register, a "
                                      ".param variable or _", where,
                        ("ptxas 13.0 crashes on an integer immediate in a call's return list",), span)
            elif formal.array is not None:
                ctx.add("PTX-E-CALL", f"{what} {text} is an immediate; {fwhat} is {fshape}, an array, which takes a "
                                      ".param array", where, (), span)
            elif ft.kind == "f" and not is_float:
                ctx.add("PTX-E-CALL", f"argument {text} is an integer immediate; {fwhat} is .{ft.name}", where,
                        (f"write a floating-point literal ({float(actual.value)!r})",), span)
            elif ft.kind in ("u", "s") and is_float:
                ctx.add("PTX-E-CALL", f"{what} {text} is a floating-point immediate; {fwhat} is .{ft.name}", where,
                        () if is_ret else ("write an integer literal",), span)
            elif ft.kind in ("packed", "fp8", "pred") and not (_is_0f(actual) if ft.bits == 32 else
                                                                ft.bits == 64 and not _is_0f(actual)):
                # .f16x2, .e4m3x4 and the like take a 0f literal (its 32 bits), .f32x2 any immediate of 64 bits (an
                # integer, a decimal or 0d literal), the others no immediate at all
                note = ("write its 32 bits as a 0f literal (0f3C003C00 is .f16x2 {1.0, 1.0})" if ft.bits == 32
                        else "write its 64 bits as a 0d literal or an integer" if ft.bits == 64
                        else "declare the parameter .b32 and pass 0 or 1" if ft.kind == "pred"
                        else f"pass a .b{ft.bits} register holding its bits")
                takes = "only a 0f literal" if ft.bits == 32 else "no 0f literal" if ft.bits == 64 else "none"
                ctx.add("PTX-E-CALL", f"{what} {text} is an immediate; {fwhat} is .{ft.name}, which takes "
                                      f"{takes} (ptxas: \"Type of argument does not match\")", where,
                        () if is_ret else (note,), span)
            return
        if t is SpecialReg:
            ctx.add("PTX-E-CALL", f"{what} {actual.name} is a special register; a call passes registers, immediates "
                                  "and .param variables", where,
                    () if is_ret else (f"copy it into a register first (mov.{actual.type.name} ...)",), span)
            return
        if t is Reg:
            name = actual.name
            if actual.type is None:
                return  # reported as PTX-E-UNDECLARED
            if "." in name:
                base = name.rsplit(".", 1)[0]
                ctx.add("PTX-E-CALL", f"{what} {name} is a component of vector register {base}; a call takes whole "
                                      "registers", where, ("copy the component into a scalar register first",), span)
                return
            at = actual.type
            vn = self.vec_len(name) if self.vregs else None
            if formal.array is not None:
                ctx.add("PTX-E-CALL", f"{what} {name} is a register; {fwhat} is {fshape}, an array, which takes a "
                                      ".param array", where, (), span)
            elif vn is not None:
                if vn * at.bits != ft.bits:
                    ctx.add("PTX-E-CALL", f"{what} {name} is a .v{vn} .{at.name} vector register, {vn * at.bits} bits; "
                                          f"{fwhat} is .{ft.name}", where,
                            ("a vector register passes as one value of its whole size",), span)
            elif at is pred and ft is pred:
                pass  # a kernel that reaches the call cannot pass it, which _abi_parameters reports
            elif at is pred:
                ctx.add("PTX-E-CALL", f"{what} {name} is a .pred register; {fwhat} is .{ft.name}", where,
                        () if is_ret else (f"a predicate is not passed; selp.b{ft.bits} a value into a register "
                                           "instead",), span)
            elif at.bits != ft.bits:
                ctx.add("PTX-E-CALL", f"{what} {name} is .{at.name}; {fwhat} is .{ft.name}, and a register {what} has "
                                      "its parameter's size", where,
                        (f"cvt it into a {ft.bits}-bit register first",) if not is_ret else (), span)
            elif {ft.kind, at.kind} in ({"f", "u"}, {"f", "s"}):
                ctx.add("PTX-E-CALL", f"{what} {name} is .{at.name}; {fwhat} is .{ft.name}, and integer and "
                                      "floating-point parameters do not mix", where,
                        (f"use a .b{ft.bits} or .{ft.name} register",), span)
            return
        if not isinstance(actual, Sym) or actual.space == "?":
            return  # an undefined name is PTX-E-UNDEFINED
        name = actual.name
        if actual.space == "func":
            ctx.add("PTX-E-CALL", f"{what} {name} is a function; a call passes registers, immediates and .param "
                                  "variables", where,
                    () if is_ret else (f"pass its address in a register (mov.u64 %rd1, {name};)",), span)
            return
        if not isinstance(actual, ParamSym):
            return
        if actual.space != "param":
            ctx.add("PTX-E-CALL", f"{what} {name} is a .{actual.space} variable; a call passes registers, "
                                  "immediates and .param variables", where,
                    () if is_ret else ("pass its value or its address in a register",), span)
            return
        if actual.input or actual.ret:
            ctx.add("PTX-E-CALL", f"{what} {name} is a parameter of {self.fn.name} itself; a call passes .param "
                                  "variables declared in the body", where,
                    ("copy it into a .param variable declared in the body (ld.param, st.param)",), span)
            return
        at = actual.type
        if at is None:
            return
        if formal.array is not None and ft.name in legality.INSTRUCTION_ONLY_ALLOCATED:
            ctx.add("PTX-E-CALL", f"{what} {name} for {fwhat}, an array of .{ft.name}, which no .param array "
                                  "matches (ptxas: \"Type of argument does not match\")", where,
                    (f"declare the parameter .{legality.INSTRUCTION_ONLY_ALLOCATED[ft.name]} to pass the values' "
                     "bits",), span)
            return
        fsize = ft.bits // 8 * (formal.array or 1)
        asize = at.bits // 8 * (actual.count or 1)
        if formal.array == 0 and actual.count is not None:
            fsize = asize  # `x[]`: an array of any size
        if fsize != asize or (formal.array is None) != (actual.count is None):
            ctx.add("PTX-E-CALL", f"{what} {name} is {_shape_text(at, actual.count)}; {fwhat} is {fshape}", where, (),
                    span)
        elif (formal.align or ft.bytes) != (actual.align or at.bytes) and formal.array is not None:
            ctx.add("PTX-E-CALL", f"{what} {name} is aligned to {actual.align or at.bytes}; {fwhat} to "
                                  f"{formal.align or ft.bytes}", where, (), span)
        elif {ft.kind, at.kind} in ({"f", "u"}, {"f", "s"}):
            ctx.add("PTX-E-CALL", f"{what} {name} is .{at.name}; {fwhat} is .{ft.name}, and integer and floating-point "
                                  "parameters do not mix", where, (f"declare {name} .{ft.name} or .b{ft.bits}",), span)
        elif {ft.kind, at.kind} == {"u", "s"} and formal.array is not None:
            ctx.add("PTX-E-CALL", f"{what} {name} is {_shape_text(at, actual.count)}; {fwhat} is {fshape}, and an "
                                  "array's elements are signed or unsigned alike", where,
                    (f"declare {name} .{ft.name} or .b{ft.bits}",), span)


# '%rd' -> 'b64': the declaration type of the builder's automatically named registers, for hints
_REG_PREFIX_DECL = {"%" + get_type(n).reg_prefix: get_type(n).reg_decl
                    for n in ("pred", "b16", "b32", "f32", "b64", "f64", "b128", "f16x2")}


def _item_loc(ctx: _Ctx, loc: Optional[SourceLoc], k: int, j: int) -> Tuple[Optional[SourceLoc], int]:
    """Where item j of operand k, a parenthesised call list, is, and its length; else where operand k is."""
    at = _tok_loc(ctx, loc, k)
    line = ctx.src(at.line) if at is not None and at is not loc else None
    if line is None or at.col is None or line[at.col - 1:at.col] != "(":
        return at, 1
    i, idx, depth, start = at.col, 0, 0, None
    while i < len(line):
        c = line[i]
        if start is None and idx == j and c not in " \t":
            start = i
        if c == "(":
            depth += 1
        elif c == ")" and depth > 0:
            depth -= 1
        elif c in "),;" and depth == 0:
            if start is not None:
                return SourceLoc(at.file, at.line, start + 1), max(len(line[start:i].rstrip()), 1)
            if c != ",":
                break
            idx += 1
        i += 1
    return at, 1


def _shape_text(t: Type, count: Optional[int]) -> str:
    return f".{t.name}" + (f"[{count or ''}]" if count is not None else "")


def _is_0f(o) -> bool:
    """A 0f literal (`0f3F800000`): the 32 bits of a .f32 as written."""
    return type(o) is FloatImm and len(o.text) == 10 and o.text[:2] in ("0f", "0F")


def _takes_count(n: int, params, listed: bool = True) -> bool:
    """Whether a call may pass n arguments to `params`: one each, or one less where the last is an array of no
    size (`.param .b8 x[]`), which ptxas 13.0 lets a call leave out of its list (`call f, (a);`), not a call
    without one (`call f;`), and crashes on where it is an array of an fp8 type. `listed`: the call has an
    argument list."""
    return n == len(params) or (listed and n == len(params) - 1 and params[-1].array == 0
                                and params[-1].type.name not in legality.INSTRUCTION_ONLY_ALLOCATED)


def _type_notes(have: Type, want: Type) -> Tuple[str, ...]:
    if have.bits != want.bits:
        return (f"a .{want.name} operand needs a {want.bits}-bit register; convert with cvt first",)
    return (f"same width, but .{have.name} and .{want.name} do not mix; use a .b{have.bits} view (mov.b{have.bits})",)


# --------------------------------------------------------------------------------- token positions in lines
OPCODE, GUARD = None, -1  # the k of _tok_loc for the opcode and the guard register


_IMM_VALUE_OPS = frozenset(("bar", "barrier", "bfe", "bfi"))  # isa_core.imm_value_error
_IMM_TEXT = re.compile(r"-?[0-9A-Za-z]+")


def _tok_loc(ctx: _Ctx, loc: Optional[SourceLoc], k: Optional[int]) -> Optional[SourceLoc]:
    """Where the opcode (k=OPCODE), the guard register (k=GUARD) or operand k of a statement is."""
    if loc is None or ctx.lines is None or loc.col is None:
        return loc
    line = ctx.src(loc.line)
    if line is None:
        return loc
    col = _find_token(line, loc.col - 1, k)
    return SourceLoc(loc.file, loc.line, col + 1) if col is not None else loc


def _find_token(line: str, i: int, k: Optional[int]) -> Optional[int]:
    n = len(line)
    if i >= n:
        return None
    if line[i] == "@":
        j = i + 1
        while j < n and line[j] in " \t!":
            j += 1
        if k == GUARD:
            return j
        while j < n and line[j] not in " \t":
            j += 1
        while j < n and line[j] in " \t":
            j += 1
        i = j
    elif k == GUARD:
        return None
    if k is OPCODE:
        return i
    # operand k: skip the opcode, then count top-level commas
    j = i
    while j < n and line[j] not in " \t;":
        j += 1
    while j < n and line[j] in " \t":
        j += 1
    if k == 0:
        return j if j < n and line[j] != ";" else None
    idx = depth = 0
    while j < n:
        c = line[j]
        if c in "[{(":
            depth += 1
        elif c in "]})":
            depth -= 1
        elif c == ";" and depth <= 0:
            return None
        elif c == "," and depth == 0:
            idx += 1
            j += 1
            while j < n and line[j] in " \t":
                j += 1
            if idx == k:
                return j if j < n else None
            continue
        j += 1
    return None


# ------------------------------------------------------------------------------------------------ module
def _module_checks(ctx: _Ctx, res: ParseResult, override: Optional[Target]):
    """.version / .target / .address_size and the module's own target-version pairing."""
    m = res.module
    if res.version is None:
        ctx.add("PTX-E-DIRECTIVE", "the module has no .version directive", SourceLoc(res.filename, 1, 1),
                ("the first statement must be e.g. `.version 8.0`",))
    elif m.version is None:
        text, loc = res.version
        try:
            bad = version_error(read_version(text), text)
        except ValueError:
            bad = (f"bad PTX ISA version {text}", f"write MAJOR.MINOR, e.g. `.version {version_str(LATEST_PTX)}`")
        ctx.add("PTX-E-DIRECTIVE", bad[0], loc, (bad[1],), len(text))
    if not res.targets:
        if override is None:
            ctx.add("PTX-E-DIRECTIVE", "the module has no .target directive", SourceLoc(res.filename, 1, 1),
                    ("add e.g. `.target sm_90a` after .version",))
    else:
        sm = [(n, loc) for n, loc in res.targets if n.startswith(("sm_", "compute_"))]
        for n, loc in res.targets:
            if n.startswith(("sm_", "compute_")):
                try:
                    Target.parse(n)
                except ValueError as e:
                    ctx.add("PTX-E-DIRECTIVE", str(e), loc, (), len(n))
            elif n not in ("texmode_unified", "texmode_independent", "debug", "map_f64_to_f32"):
                ctx.add("PTX-E-DIRECTIVE", f"unknown .target option '{n}'", loc,
                        ("options: texmode_unified, texmode_independent, debug, map_f64_to_f32",), len(n))
        if len(sm) > 1:
            ctx.add("PTX-E-DIRECTIVE", "several architectures in one .target", sm[1][1], (), len(sm[1][0]))
        if not sm and override is None:
            ctx.add("PTX-E-DIRECTIVE", ".target names no architecture", res.targets[0][1],
                    ("add e.g. sm_90a",))
        if m.target is not None and m.version is not None and m.version < m.target.min_ptx:
            loc = next(loc for n, loc in sm)
            ctx.add("PTX-E-DIRECTIVE", f"PTX ISA .version {res.version[0]} does not support .target "
                                       f"{m.target}", loc, (f"{m.target} needs .version {version_str(m.target.min_ptx)}"
                                                            " or later",), len(str(m.target)))
        if override is not None and m.target is not None and m.target.sm > override.sm:
            loc = sm[0][1]
            ctx.add("PTX-E-TARGET", f"the module is written for {m.target}, later than the target {override} "
                                    "it is linted for", loc, (), len(str(m.target)))
        if "texmode_independent" in {n for n, _ in res.targets} and "texmode_unified" in {n for n, _ in res.targets}:
            ctx.add("PTX-E-DIRECTIVE", "texmode_unified and texmode_independent exclude each other",
                    res.targets[0][1])
    for v in m.vars:
        bad = undeclarable_type(v.type.name if v.type is not None else None, v.space)
        if bad is not None:
            tloc = getattr(v, "type_loc", None)
            ctx.add("PTX-E-DECL", bad[0], tloc or v.loc, (bad[1],), len(v.type.name) + 1 if tloc else len(v.name))
        if v.space == "tex":
            ctx.add("PTX-E-DECL", f"the .tex state space is gone since PTX ISA 1.5 ({v.name})", v.loc,
                    (f"declare it as `.global .texref {v.name};`",), len(v.name))
        elif v.space in ("reg", "sreg", "local", "param"):
            ctx.add("PTX-E-DECL", f".{v.space} variables cannot be declared at module scope ({v.name})", v.loc,
                    ("declare it inside a function, or use .global",), len(v.name))
    for info in res.declarations:
        if info.header.is_entry and info.header.rets:
            ctx.add("PTX-E-DECL", f"kernel {info.header.name} cannot return values (only .func can)", info.loc,
                    ("write results through a pointer parameter",), len(info.header.name))
    if res.address_size is not None and res.address_size[0] not in (32, 64) and res.address_size[0] <= 0xFFFFFFFF:
        ctx.add("PTX-E-DIRECTIVE", f".address_size must be 32 or 64, not {res.address_size[0]}", res.address_size[1])
    if res.address_size is not None and m.version is not None and m.version < _ADDRESS_SIZE_PTX:
        ctx.add("PTX-E-VERSION", f".address_size needs PTX ISA {version_str(_ADDRESS_SIZE_PTX)} (module .version is "
                                 f"{res.version[0]})", res.address_size[1],
                (f"write .version {version_str(_ADDRESS_SIZE_PTX)} or later",))


def _linkage(h) -> str:
    return next((x for x in h.linkage if x in ("extern", "visible", "weak")), "")


def _noreturn(h) -> bool:
    return any(d[0] == ".noreturn" for d in h.directives)


def _before(a: SourceLoc, b: SourceLoc) -> bool:
    """a is written before b in the module."""
    return (a.line, a.col or 0) < (b.line, b.col or 0)


# how a module gets what it declares .extern and does not define (PTX-W-EXTERN)
_LINK_NOTE = "compile with ptxas -c and link the module that defines it (nvlink, or cuLinkAddData ... cuLinkComplete)"


def _param_mismatch(a, b) -> Optional[str]:
    """What ptxas 13.0 calls the difference of two declarations' parameter (or return parameter) lists: their
    count, then a parameter's type (with its vector and array dimensions), state space and alignment (where
    none is written, the size of its element); its name may differ."""
    if len(a) != len(b):
        return "number of parameters"
    for x, y in zip(a, b):
        if (x.type, x.vector, x.dims) != (y.type, y.vector, y.dims):
            return "parameter types"
    for x, y in zip(a, b):
        if x.space != y.space:
            return "parameter state space"

    def align(q):
        return q.align or max(1, q.type.bits // 8) * (q.vector or 1) if q.type is not None else q.align
    for x, y in zip(a, b):
        if align(x) != align(y):
            return "parameter alignment"
    return None


def _function_declarations(ctx: _Ctx, res: ParseResult):
    """The declarations and the definition of one function agree as ptxas 13.0 asks (tests/test_lint_fdecl.py):
    none after the definition, the same kind (.entry or .func), linkage (a later one may leave it out; nothing
    but more .extern declarations after an .extern one), .noreturn and parameters; and a function declared in
    this module is defined in it (or is an `.alias` of one that is), or declared .extern, which whole-program
    compilation (ptxas without -c, cuModuleLoadData) still refuses once it is called or its address taken."""
    first: Dict[str, object] = {}
    defined: Dict[str, object] = {}
    for info in res.declarations:
        h = info.header
        name, span = h.name, len(h.name)
        f = first.get(name)
        if f is None:
            first[name] = info
            if info.defined:
                defined[name] = info
            continue
        fh = f.header
        at = f"first declared at line {f.loc.line}"
        if name in defined and not info.defined:
            ctx.add("PTX-E-REDECLARED", f"function '{name}' is declared after its definition (ptxas: \"Duplicate "
                                        f"definition of function '{name}'\")", info.loc,
                    (f"defined at line {defined[name].loc.line}; declare it before that, or not at all",), span)
            continue
        if info.defined:
            defined.setdefault(name, info)
        if h.is_entry != fh.is_entry:
            ctx.add("PTX-E-REDECLARED", f"'{name}' is declared as {'a .func' if fh.is_entry is False else 'an .entry'} "
                                        f"and here as {'an .entry' if h.is_entry else 'a .func'} (ptxas: "
                                        f"\"Inconsistent redefinition of '{name}' as entry and function\")",
                    info.loc, (at,), span)
            continue
        x, y = _linkage(fh), _linkage(h)
        if x == "extern" and (y != "extern" or info.defined) or y and y != x:
            was = f".{x}" if x else "no linkage directive"
            why = ("an .extern function is defined in another module: no definition or other declaration "
                   "of it may follow" if x == "extern" else f"write {'.' + x if x else 'no linkage directive'} "
                   "here too, or none")
            ctx.add("PTX-E-REDECLARED", f"'{name}' was first declared with {was}, here "
                                        f"{'.' + y if y else 'without it'}{' and defined' if info.defined else ''} "
                                        f"(ptxas: \"Inconsistent redefinition of variable '{name}'\")", info.loc,
                    (why, at), span)
            continue
        nr = _noreturn(fh)
        if _noreturn(h) != nr:
            ctx.add("PTX-E-REDECLARED", f"'{name}' was first declared {'with' if nr else 'without'} .noreturn, here "
                                        f"{'without' if nr else 'with'} it (ptxas: \"Inconsistent redefinition of "
                                        f"variable '{name}'\")",
                    info.loc, ("every declaration and the definition give .noreturn, or none", at), span)
            continue
        what = _param_mismatch(fh.rets, h.rets) or _param_mismatch(fh.params, h.params)
        if what is not None:
            ctx.add("PTX-E-REDECLARED", f"the declarations of '{name}' differ in {what} (ptxas: \"Inconsistent "
                                        f"prototypes of '{name}', {what} differ\")", info.loc,
                    ("give every declaration and the definition the same parameters (their names may differ)", at),
                    span)
    used = None
    for name, f in first.items():
        if (name in defined or name in res.aliases or name in _SYSTEM_FUNCTIONS
                or name.startswith("__cuda_syscall")):
            continue
        if _linkage(f.header) != "extern":
            ctx.add("PTX-E-DECL", f"function '{name}' is declared but not defined in this module (ptxas: "
                                  f"\"Unresolved extern function '{name}'\")", f.loc,
                    ("define it here, or declare it .extern and link the module that defines it",), len(name))
            continue
        if used is None:
            used = _referenced_functions(res)
        if name in used:
            ctx.add("PTX-W-EXTERN", f"the .extern function '{name}' is {used[name]} but not defined here: "
                                    f"ptxas without -c, and a driver that loads this module alone "
                                    f"(cuModuleLoadData), stop (\"Unresolved extern function '{name}'\")",
                    f.loc, (_LINK_NOTE,), len(name), "warning")


# the functions ptxas 13.0 provides itself, declared in a module with any linkage (and names starting __cuda_syscall)
_SYSTEM_FUNCTIONS = frozenset(("vprintf", "malloc", "free", "__assertfail"))


_ALIAS_PTX = (6, 3)  # ptxas 13.0: "Feature '.alias' requires PTX ISA .version 6.3 or later"


def _alias_directives(ctx: _Ctx, res: ParseResult):
    """`.alias a, b;` as ptxas 13.0 takes it (tests/test_lint_fdecl.py): PTX ISA 6.3; a and b functions (not
    variables, not kernels) declared before it, not the same one; a not defined before it and aliased once; b
    neither .weak nor .extern; the two with one prototype (as _param_mismatch, and .noreturn)."""
    variables = {v.name for v in res.module.vars}
    done: Dict[str, str] = {}
    for a, b, at, bat in res.alias_dirs:
        if res.module.version is not None and res.module.version < _ALIAS_PTX:
            ctx.add("PTX-E-VERSION", f".alias needs PTX ISA {version_str(_ALIAS_PTX)} (module .version is "
                                     f"{res.version[0]})", at, (f"write .version {version_str(_ALIAS_PTX)} or later",),
                    len(a))
            continue
        if a == b:
            ctx.add("PTX-E-DECL", f".alias {a}, {b}: a function cannot be an alias of itself (ptxas: \"Cannot alias a "
                                  "function to itself\")", bat, (), len(b))
            continue
        infos = {}
        bad = None
        for name, loc in ((a, at), (b, bat)):
            if name in variables:
                bad = (f".alias {a}, {b}: {name} is a variable; only functions have aliases (ptxas: \"Cannot define "
                       f"alias to variable object '{name}'\")", loc, name, "PTX-E-DECL")
                break
            decls = [i for i in res.declarations if i.header.name == name and _before(i.loc, at)]
            if not decls:
                bad = (f".alias {a}, {b}: {name} is not declared before the .alias (ptxas: \"Unknown symbol "
                       f"'{name}'\")", loc, name, "PTX-E-UNDEFINED")
                break
            if decls[0].header.is_entry:
                bad = (f".alias {a}, {b}: {name} is a kernel; only a .func has aliases (ptxas: \"Cannot define alias "
                       f"to entry function '{name}'\")", loc, name, "PTX-E-DECL")
                break
            infos[name] = decls
        if bad is not None:
            ctx.add(bad[3], bad[0], bad[1], (), len(bad[2]))
            continue
        if any(i.defined for i in infos[a]):
            ctx.add("PTX-E-REDECLARED", f".alias {a}, {b}: {a} is defined above, so it cannot be an alias (ptxas: "
                                        f"\"Illegal redefinition of function '{a}' as alias\")", at,
                    (f"declare {a} without a body, or call {b} itself",), len(a))
            continue
        if a in done:
            ctx.add("PTX-E-REDECLARED", f".alias {a}, {b}: {a} is already an alias of {done[a]} (ptxas: \"'{a}' is "
                                        f"already aliased to '{done[a]}' and cannot be redefined\")", at, (), len(a))
            continue
        done[a] = b
        link = _linkage(infos[b][0].header)
        if link in ("weak", "extern"):
            ctx.add("PTX-E-DECL", f".alias {a}, {b}: {b} is .{link}, which cannot have an alias (ptxas: \"Function "
                                  f"'{b}' with .{link} scope cannot be aliased\")", bat,
                    ("the aliasee is a function of this module, .visible or without a linkage directive",), len(b))
            continue
        ha, hb = infos[a][0].header, infos[b][0].header
        what = _param_mismatch(hb.rets, ha.rets) or _param_mismatch(hb.params, ha.params)
        if what is None and _noreturn(ha) != _noreturn(hb):
            what = ".noreturn directive"
        if what is not None:
            ctx.add("PTX-E-DECL", f".alias {a}, {b}: the two differ in {what} (ptxas: \"Mismatch in prototype of "
                                  f"alias '{a}' and aliasee '{b}'. {what} differ(s)\")", at,
                    (f"declare {a} with {b}'s return parameters, parameters and directives (names may differ)",),
                    len(a))


def _pragma_strings(ctx: _Ctx, res: ParseResult):
    """Each `.pragma` string as ptxas 13.0 reads it (isa_core.pragma_error)."""
    found = list(res.pragmas)
    for info in res.declarations:
        for strings, line, col in info.header.pragmas:
            found.append((strings, SourceLoc(res.filename, line, col), "header"))
    for strings, loc, where in found:
        for text in strings:
            bad = C.pragma_error(text, where)
            if bad is not None:
                severity, message, notes = bad
                ctx.add("PTX-E-DIRECTIVE" if severity == "error" else "PTX-W-PRAGMA", message, loc, notes,
                        len(".pragma"), severity)


def _loc_directives(ctx: _Ctx, res: ParseResult):
    """`.loc` as ptxas 13.0 takes it: a module with .loc and no .file draws a warning ("line information in
    generated binary may not be complete"); an inlined_at location is one an earlier .loc in the module gave
    ("Source location ... used in inlined_at directive must be used in a preceding .loc directive")."""
    if not res.files:
        ctx.add("PTX-W-DIRECTIVE", ".loc without any .file directive: ptxas warns that the line information may "
                                   "not be complete", res.loc_dirs[0][1],
                ("declare the source file: .file 1 \"k.cu\"",), len(".loc"), "warning")
    if not any("inlined_at" in text for text, _ in res.loc_dirs):
        return
    seen = set()
    for text, loc in res.loc_dirs:
        got = loc_numbers(text)
        if got is None:
            continue
        where, inlined = got
        if inlined is not None and inlined not in seen:
            shown = " ".join(map(str, inlined))
            ctx.add("PTX-E-DIRECTIVE", f"inlined_at {shown} names a source location no earlier .loc gives (ptxas: "
                                       f"\"Source location {shown} used in inlined_at directive must be used in a "
                                       "preceding .loc directive\")", loc, (f"place `.loc {shown}` before it",),
                    len(".loc"))
        seen.add(where)


_UNSIZED = re.compile(r"\[\s*\]")


def _extern_variables(ctx: _Ctx, res: ParseResult):
    """PTX-W-EXTERN at an .extern .global or .const variable that the module does not define: whole-program
    compilation (ptxas without -c, cuModuleLoadData) defines it here, ignoring .extern, or stops where it has no
    size ("Unresolved extern variable"); a separately compiled and linked module can have it from another. Also
    where the definition follows the first .extern declaration, which ptxas warns of the same way.
    (.extern .shared is the dynamic shared memory.)"""
    defined: Dict[str, SourceLoc] = {}
    for v in res.module.vars:
        if not v.extern:
            defined.setdefault(v.name, v.loc)
    seen = set()
    for v in res.module.vars:
        if not v.extern or v.space not in ("global", "const") or v.name in seen:
            continue
        seen.add(v.name)
        at = defined.get(v.name)
        if at is not None:
            if v.loc is not None and _before(v.loc, at):
                # ptxas resolves the declaration where it stands, and warns though the definition follows
                ctx.add("PTX-W-EXTERN", f"'{v.name}' is declared .extern before its definition (line {at.line}): "
                                        f"ptxas warns \"Unresolved extern variable '{v.name}' in whole program "
                                        "compilation, ignoring extern qualifier\" (harmless: the definition is "
                                        "used)", v.loc, ("define it first, or leave this declaration out",),
                        len(v.name), "warning")
            continue
        if _UNSIZED.search(v.text or ""):
            msg = (f"the .extern variable '{v.name}' has no size and no definition here: ptxas without -c, and a "
                   f"driver that loads this module alone (cuModuleLoadData), stop (\"Unresolved extern variable "
                   f"'{v.name}'\")")
        else:
            msg = (f"the .extern variable '{v.name}' is not defined here: ptxas without -c, and a driver that loads "
                   f"this module alone, define it in this module instead (\"Unresolved extern variable '{v.name}' in "
                   "whole program compilation, ignoring extern qualifier\")")
        ctx.add("PTX-W-EXTERN", msg, v.loc, (_LINK_NOTE + ", or define it here",), len(v.name), "warning")


def _referenced_functions(res: ParseResult) -> Dict[str, str]:
    """{name: how} of the names a direct call or an address (an operand, a variable's initializer) refers to,
    in any function; a `.calltargets` list does not count (ptxas resolves it without the definition)."""
    out: Dict[str, str] = {}
    for fn in res.module.functions:
        for st in fn.body:
            if type(st) is Instr:
                names: list = []
                for o in st.operands:
                    _operand_names(o, names)
                how = "called" if st.opcode == "call" else "taken by address"
                for n in names:
                    out.setdefault(n, how)
    for refs in res.init_refs.values():
        for n in refs:
            out.setdefault(n, "taken by address")
    return out


_ADDRESS_SIZE_PTX = (2, 3)  # ptxas 13.0: "Feature '.address_size directive' requires PTX ISA .version 2.3 or later"


_PERF = {".maxntid": (1, 3), ".reqntid": (1, 3), ".minnctapersm": (1, 1), ".maxnctapersm": (1, 1),
         ".maxnreg": (1, 1), ".reqnctapercluster": (1, 3), ".explicitcluster": (0, 0), ".maxclusterrank": (1, 1),
         ".noreturn": (0, 0), ".blocksareclusters": (0, 0), ".pragma": (0, 0), ".abi_preserve": (1, 1),
         ".abi_preserve_control": (1, 1)}
# directives whose values ptxas 13.0 refuses to be 0, what they are and one it takes
_PERF_POSITIVE = {".maxntid": "a CTA's size is at least 1 in each dimension", ".reqntid": "a CTA's size is at least 1 in "
                  "each dimension", ".minnctapersm": "the CTAs per SM it asks for are at least 1",
                  ".maxnreg": "a thread has at least one register"}
_PERF_EXAMPLE = {".maxntid": "256, 1, 1", ".reqntid": "256, 1, 1", ".minnctapersm": "1", ".maxnreg": "64"}
_PERF_NEEDS = {".reqnctapercluster": ("sm_90", (7, 8)), ".explicitcluster": ("sm_90", (7, 8)),
               ".maxclusterrank": ("sm_90", (7, 8)), ".noreturn": (None, (6, 4)),
               ".blocksareclusters": ("sm_90", (9, 0)), ".maxnctapersm": (None, None)}


# the header directives of a .func, which a kernel's header does not take (ptxas 13.0: syntax error); a header's
# .pragma only a kernel definition's
_FUNC_DIRECTIVES = frozenset((".noreturn", ".abi_preserve", ".abi_preserve_control"))


def _function_directives(ctx: _Ctx, res: ParseResult):
    for info in res.declarations:
        h = info.header
        seen = {}
        values = {}
        threads = None                                   # the CTA size .reqntid gives
        for name, vals, line, col, at in h.directives:
            loc = SourceLoc(res.filename, line, col)
            lim = _PERF.get(name)
            if lim is None:
                near = difflib.get_close_matches(name, list(_PERF), 1, 0.7)
                ctx.add("PTX-E-DIRECTIVE", f"unknown directive {name}", loc,
                        (f"did you mean {near[0]}?",) if near else (), len(name))
                continue
            if not lim[0] <= len(vals) <= lim[1]:
                ctx.add("PTX-E-DIRECTIVE", f"{name} takes {lim[0] if lim[0] == lim[1] else f'{lim[0]} to {lim[1]}'} "
                                           f"value(s), {len(vals)} given", loc, (), len(name))
            if name in seen and name != ".pragma":
                ctx.add("PTX-E-DIRECTIVE", f"{name} is given twice", loc, (), len(name))
            seen[name] = loc
            values[name] = vals
            if any(v > 0xFFFFFFFF for v in vals):
                vals = values[name] = ()  # "Constant overflow", reported where the parser read it
            zero = next((i for i, v in enumerate(vals) if v == 0), None)
            if zero is not None and name in _PERF_POSITIVE:
                m = _IMM_TEXT.match(ctx.src(at[zero][0]) or "", at[zero][1] - 1)
                ctx.add("PTX-E-DIRECTIVE", f"{name} 0: {_PERF_POSITIVE[name]} (ptxas: \"Positive non-zero value "
                                           f"expected for {name[1:]}\")", SourceLoc(res.filename, *at[zero]),
                        (f"write {name} {_PERF_EXAMPLE[name]}, or leave it out",), len(m.group()) if m else 1)
            elif name in (".maxntid", ".reqntid") and vals:
                tot = math.prod(vals)
                if name == ".reqntid":
                    threads = tot
                if tot % (1 << 32) >= (1 << 32) - 31:
                    ctx.add("PTX-E-DIRECTIVE", f"{name} {', '.join(map(str, vals))}: ptxas 13.0 crashes on a CTA of "
                                               f"{tot} threads (a floating-point exception; their count modulo 2^32 "
                                               "is within 31 of 2^32)", loc,
                            ("a CTA has at most 1024 threads: write sizes whose product is at most 1024",), len(name))
                elif tot > 1024:  # ptxas takes it (the launch fails); worth a warning
                    ctx.add("PTX-W-DIRECTIVE", f"{name} {', '.join(map(str, vals))} is {tot} threads; a CTA has "
                                               "at most 1024", loc, (), len(name), "warning")
            if name == ".maxnreg" and vals and vals[0] > 255:  # ptxas warns that it ignores it
                ctx.add("PTX-W-DIRECTIVE", f".maxnreg {vals[0]} is more than the 255 registers a thread has: ptxas "
                                           "ignores it (\"Too many maxnreg specified\")", loc,
                        ("write .maxnreg 255 at most, or leave it out",), len(name), "warning")
            need = _PERF_NEEDS.get(name)
            if need is not None:
                diags: list = []
                _gate(ctx, diags, name, need[0], need[1])
                for code, msg, notes in diags:
                    ctx.add(code, msg, loc, notes, len(name))
            if name == ".pragma":
                if not h.is_entry or not info.defined:
                    ctx.add("PTX-E-DIRECTIVE", "a .pragma in a header belongs to a kernel's definition, before its "
                                               f"body, not to a {'declaration' if h.is_entry else '.func'} (ptxas: "
                                               "syntax error)", loc, ("put it in the body, or at module scope",),
                            len(name))
            elif not h.is_entry and name not in _FUNC_DIRECTIVES:
                ctx.add("PTX-E-DIRECTIVE", f"{name} applies to kernels (.entry), not to .func", loc, (), len(name))
            elif h.is_entry and name in _FUNC_DIRECTIVES:
                ctx.add("PTX-E-DIRECTIVE", f"{name} applies to device functions (.func), not to kernels (ptxas: "
                                           "syntax error)", loc, (), len(name))
            elif name == ".maxnctapersm":
                ctx.add("PTX-E-DIRECTIVE", ".maxnctapersm is gone since PTX ISA 2.1 (ptxas: \"Deprecated feature: "
                                           "'.maxnctapersm directive' not supported as of PTX version 2.1\")", loc,
                        (f"write .minnctapersm {vals[0] if vals else 1}, with .maxntid or .reqntid",), len(name))
        if ".minnctapersm" in seen and h.is_entry and ".maxntid" not in seen and ".reqntid" not in seen:
            ctx.add("PTX-W-DIRECTIVE", ".minnctapersm without .maxntid or .reqntid: ptxas ignores it (\".minnctapersm "
                                       "is ignored when neither .maxntid nor .reqntid is specified\")",
                    seen[".minnctapersm"], ("give the CTA's size too, e.g. .maxntid 256, 1, 1",), len(".minnctapersm"),
                    "warning")
        if ".blocksareclusters" in seen and h.is_entry and not (".reqntid" in seen and ".reqnctapercluster" in seen):
            ctx.add("PTX-E-DIRECTIVE", ".blocksareclusters needs both .reqntid and .reqnctapercluster (ptxas: "
                                       "\".reqntid and .reqnctapercluster directive(s) required for directive "
                                       "'.blocksareclusters'\")", seen[".blocksareclusters"],
                    ("e.g. .reqntid 128, 1, 1 .reqnctapercluster 2, 1, 1 .blocksareclusters",),
                    len(".blocksareclusters"))
        if ".maxntid" in seen and ".reqntid" in seen:
            ctx.add("PTX-E-DIRECTIVE", ".maxntid and .reqntid cannot both be given", seen[".reqntid"])
        elif threads is not None and ".maxnreg" in seen and h.is_entry:
            _maxnreg_fits_reqntid(ctx, threads, values[".maxnreg"], seen[".maxnreg"])
        if ".reqnctapercluster" in seen and ".maxclusterrank" in seen:
            ctx.add("PTX-E-DIRECTIVE", ".reqnctapercluster and .maxclusterrank cannot both be given",
                    seen[".maxclusterrank"])


def _maxnreg_fits_reqntid(ctx: _Ctx, threads: int, maxnreg, loc: SourceLoc):
    """PTX-W-DIRECTIVE at .maxnreg when it lets ptxas use more registers than a CTA of .reqntid's `threads`
    threads can launch with (ptxgen.target.cta_register_limit); ptxas takes it, and may use fewer."""
    if ctx.target is None or ctx.target.sm < REGISTER_RULE_MIN_SM or len(maxnreg) != 1:
        return
    if not 1 <= threads <= 1024 or not 1 <= maxnreg[0] <= 255:
        return  # reported above
    why = cta_register_limit(threads, maxnreg[0])
    if why is not None:
        ctx.add("PTX-W-DIRECTIVE", f"{why}; .maxnreg {maxnreg[0]} lets ptxas use more", loc,
                (f"write .maxnreg {max_regs_for_threads(threads)}",), len(".maxnreg"), "warning")


# ptxas 13.0 compiles every device function a kernel can reach to the ABI, which passes and returns no 8- or
# 16-bit integer and no predicate ("In ABI compilation, passing predicate, 8-bit and 16-bit parameters to device
# functions is not supported", "... returning ... values ..."; no line). It refuses a scalar .u8, .s8, .u16,
# .s16 or .pred parameter or return parameter, .param or .reg, of each function that code reachable from a
# kernel calls (directly or through a .calltargets list) or takes the address of, also through a variable
# whose initializer holds it, and of each prototype such code calls through. .b8, .b16, .f16, arrays and
# vectors pass; a function no kernel reaches is not compiled so. ptxas compiles only a module it has read
# without error, so it says this only of one that has none other.
_ABI_NARROW = frozenset(("u8", "s8", "u16", "s16", "pred"))


def _abi_narrow(params) -> list:
    return [p for p in params if p.type is not None and p.type.name in _ABI_NARROW and p.array is None
            and getattr(p, "vector", None) is None]


def _operand_names(o, out: list) -> None:
    """The names of symbols (variables, functions) operand `o` refers to, into `out`."""
    t = type(o)
    if isinstance(o, Sym):
        out.append(o.name)
    elif t is Addr:
        if isinstance(o.base, Sym):
            out.append(o.base.name)
    elif t is SymOffset:
        out.append(o.sym.name)
    elif t is Vec:
        for e in o.elems:
            _operand_names(e, out)
    elif t is AddrList:
        for e in o.items:
            _operand_names(e, out)


def _abi_parameters(ctx: _Ctx, res: ParseResult):
    """PTX-E-DECL at each parameter the ABI cannot pass (above) of the functions and prototypes a kernel
    reaches."""
    fns = {name: info for name, info in res.functions.items() if not info.header.is_entry
           and (_abi_narrow(info.header.params) or _abi_narrow(info.header.rets))}
    protos = {key for key, (rets, params) in res.protos.items() if _abi_narrow(rets) or _abi_narrow(params)}
    if not fns and not protos:
        return
    kernels = [fn for fn in res.module.functions if fn.is_entry]
    root = {fn.name: fn.name for fn in kernels}  # function reached -> the kernel it was reached from
    todo = list(kernels)
    used_protos: Dict[Tuple[str, str], str] = {}
    while todo:
        fn = todo.pop()
        names: list = []
        targets: Dict[str, List[str]] = {}  # `$L: .calltargets f, g;`
        for st in fn.body:
            cls = type(st)
            if cls is Instr:
                for o in st.operands:
                    _operand_names(o, names)
                if st.opcode == "call" and st.operands and type(st.operands[-1]) is Label:
                    key = (fn.name, st.operands[-1].name)
                    if key in res.protos:
                        used_protos.setdefault(key, root[fn.name])
                    else:
                        names.append(("targets", st.operands[-1].name))
            elif cls is Raw:
                tl = res.target_list_of(st)
                if tl is not None and tl.kind == "calltargets" and tl.label is not None:
                    targets[tl.label] = [n for n, _ in tl.names]
        reached = []
        for n in names:
            if type(n) is tuple:
                reached += targets.get(n[1], ())
            else:
                reached.append(n)
                reached += res.init_refs.get(n, ())  # the functions a variable's initializer holds, one level
        for n in reached:
            info = res.functions.get(n)
            if info is not None and n not in root:
                root[n] = root[fn.name]
                if info.defined:
                    todo.append(info.fn)
    for name, info in fns.items():
        if name in root:
            h = info.header
            _abi_report(ctx, h.rets, h.params, f"{name}'s", f"kernel {root[name]} reaches {name}", info.defined)
    for key, kernel in used_protos.items():
        if key in protos:
            rets, params = res.protos[key]
            _abi_report(ctx, rets, params, f"prototype {key[1]}'s",
                        f"{key[0]}, which kernel {kernel} reaches, calls through {key[1]}", False)


def _abi_report(ctx: _Ctx, rets, params, owner: str, why: str, defined: bool):
    for ret, ps in ((True, rets), (False, params)):
        for p in _abi_narrow(ps):
            t = p.type.name
            if defined and p.space == "param" and t == "pred":
                continue  # undeclarable_type reports it
            what = "returning" if ret else "passing"
            thing = "values from" if ret else "parameters to"
            if t == "pred":
                note = ("declare it .b32 and pass the predicate as 0 or 1 (selp.u32 in, setp.ne.u32 out)",)
            else:
                wide = ("s" if t[0] == "s" else "u") + "32"
                note = (f"declare it .{wide} and widen the value (cvt.{wide}.{t}), or .b{t[1:]}, which passes as it "
                        "is",)
            loc = SourceLoc(ctx.filename, p.type_at[0], p.type_at[1]) if p.type_at else p.loc
            ctx.add("PTX-E-DECL", f"{owner} {'return parameter' if ret else 'parameter'} {p.name} is .{t}, and {why}: "
                                  f"ptxas compiles it to the ABI, which passes no 8- or 16-bit integer or .pred (ptxas: "
                                  f"\"In ABI compilation, {what} predicate, 8-bit and 16-bit {thing} device functions "
                                  "is not supported\")", loc, note, len(t) + 1)


def _section_refs(ctx: _Ctx, res: ParseResult, label_uses: dict, all_labels: set):
    # DWARF location expressions name function-scope variables and parameters too
    known = (set(all_labels) | set(res.module_labels) | set(res.functions) | {v.name for v in res.module.vars}
             | res.local_names)
    sections = {s.name for s in res.sections}
    for s in res.sections:
        for name, line, col in s.refs:
            label_uses[name] = label_uses.get(name, 0) + 1
            if name not in known and "." + name not in sections:
                ctx.add("PTX-E-UNDEFINED", f"section {s.name} refers to undefined '{name}'",
                        SourceLoc(res.filename, line, col), (), len(name))


# A section's data as ptxas 13.0 checks it past its syntax (probed in tests/test_lint_section_data.py):
# - an integer's range by the type: with a `-`, 1 to 2^(N-1) for .b8, .b16 and .b32 (`-0` too is "Value out of
#   range for type .b8"); without one, the literal's low 32 bits at most 2^N - 1 for .b8 and .b16 (.b16 4294967296
#   is taken, .b16 18446744073709551615 is not); .b32 and .b64 take any other value. Reported at the line of the
#   token after the directive's last value.
# - a label or section name only in .b32 and .b64 data ("Illegal type for dwarf data", at the line of the token
#   after the name), and only as the directive's one value (`.b32 1, L1` and `.b32 L1, 1` are syntax errors, at
#   the name and at the `,`).
_SEC_TOKEN = re.compile(r"//[^\n]*|/\*.*?\*/|(\.b(?:8|16|32|64))(?![\w$])|(-)|([0-9][0-9A-Za-z_]*)|"
                        r"([A-Za-z_$%.][\w$.]*)|(\S)", re.S)


# a line of a section that none of those errors can be in: a label, or data of decimal integers 0 to 255 (.b32 and
# .b64: any decimal integer, one name, name+N or name-name), or nothing; a section of such lines only is not read
# token by token. The verdict of each distinct line text is kept (a -G file's debug_info has a few thousand).
_SEC_SMALL = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_SEC_NAME = r"[A-Za-z_$.][\w$.]*"
_SEC_LINE_OK = re.compile(rf"[ \t]*(?:\.b(?:8|16|32|64)[ \t]+{_SEC_SMALL}(?:[ \t]*,[ \t]*{_SEC_SMALL})*|"
                          rf"\.b(?:32|64)[ \t]+(?:[1-9][0-9]*|{_SEC_NAME}(?:[ \t]*\+[ \t]*[0-9]+|"
                          rf"[ \t]*-[ \t]*{_SEC_NAME})?)|"
                          rf"{_SEC_NAME}[ \t]*:|[{{}}])?[ \t]*(?://.*)?")
_sec_line_ok: Dict[str, bool] = {}


def _sec_plain(lines: List[str]) -> bool:
    cache = _sec_line_ok
    for ln in lines:
        ok = cache.get(ln)
        if ok is None:
            if len(cache) > 20000:
                cache.clear()
            ok = cache[ln] = _SEC_LINE_OK.fullmatch(ln) is not None
        if not ok:
            return False
    return True


def _section_data(ctx: _Ctx, res: ParseResult, syntax_lines: set):
    lines = res.lines
    for sec in res.sections:
        first = sec.loc.line - 1  # the `.section` line; the body runs to the first line with a `}`
        end = first
        n = len(lines)
        while end < n and ("}" not in lines[end] or "}" not in lines[end].split("//", 1)[0]):
            end += 1
        if any(first < ln <= end + 1 for ln in syntax_lines):
            continue  # its syntax errors say it
        if end == first or not _sec_plain(lines[first + 1:end + 1]):
            _section_body(ctx, res.filename, "\n".join(lines[first:end + 1]), first + 1)


def _section_body(ctx: _Ctx, filename: str, text: str, line0: int):
    toks = []  # (group, text, line, col)
    line, last, bol = line0, 0, 0
    for m in _SEC_TOKEN.finditer(text):
        g = m.lastindex
        if g is None:
            continue  # a comment
        pos = m.start()
        nl = text.count("\n", last, pos)
        if nl:
            line += nl
            bol = text.rfind("\n", 0, pos) + 1
        last = pos
        toks.append((g, m.group(g), line, pos - bol + 1))
    if not toks:
        return
    TY, NEG, INT, NAME = 1, 2, 3, 4
    i, n = 0, len(toks)

    def at(j):
        t = toks[j] if j < n else toks[-1]
        return SourceLoc(filename, t[2], t[3])
    while i < n:
        if toks[i][0] != TY:
            i += 1
            continue
        ty = toks[i][1]
        bits = int(ty[2:])
        i += 1
        vals = []  # (kind 'int'/'name', value or name, index of its first token, index past it)
        while i < n:
            j = i
            if toks[j][0] == NEG and j + 1 < n and toks[j + 1][0] == INT:
                vals.append(("neg", toks[j + 1][1], j, j + 2))
                i = j + 2
            elif toks[j][0] == INT:
                vals.append(("int", toks[j][1], j, j + 1))
                i = j + 1
            elif toks[j][0] == NAME and not (j + 1 < n and toks[j + 1][1] == ":"):  # not a label's definition
                k = j + 1
                if k + 1 < n and toks[k][1] in ("+", "-") and toks[k + 1][0] in (INT, NAME):
                    k += 2
                vals.append(("name", toks[j][1], j, k))
                i = k
            else:
                break
            if i < n and toks[i][1] == ",":
                i += 1
            else:
                break
        if not vals:
            continue
        after = vals[-1][3]
        if len(vals) > 1 and any(v[0] == "name" for v in vals):
            if vals[0][0] == "name":
                ctx.add("PTX-E-SYNTAX", f"a label in {ty} data is the directive's one value: a `,` after it is "
                                        "ptxas 13.0's \"syntax error\"", at(vals[0][3]),
                        (f"write each label in a {ty} directive of its own",))
            else:
                k = next(v for v in vals if v[0] == "name")
                ctx.add("PTX-E-SYNTAX", f"a label in {ty} data is the directive's one value, not after an integer: "
                                        "ptxas 13.0's \"syntax error\"", at(k[2]),
                        (f"write each label in a {ty} directive of its own",), len(k[1]))
            continue
        for kind, v, j, k in vals:
            if kind == "name":
                if bits < 32:
                    ctx.add("PTX-E-DECL", f"{v} in {ty} data: a label or section name is an address, of .b32 or "
                                          ".b64 (ptxas: \"Illegal type for dwarf data\")", at(j + 1),
                            ("write it in .b32 or .b64 data",))
                continue
            if bits == 64 or legality.int_literal_overflows(v):
                continue
            base, digits = legality._int_digits(v)
            x = int(digits, base)
            if kind == "neg":
                if x >> 63:
                    continue  # a syntax error already
                if not 1 <= x <= 1 << (bits - 1):
                    ctx.add("PTX-E-DECL", f"-{v} is out of range for {ty} data (ptxas: \"Value out of range for "
                                           f"type {ty} {-x}\")", at(after),
                            (f"{ty} data takes -{1 << (bits - 1)} to -1, or 0 to {(1 << bits) - 1} without a `-`",))
            elif bits < 32 and (x & 0xFFFFFFFF) >> bits:
                low = ", of its low 32 bits" if x >> 32 else ""
                ctx.add("PTX-E-DECL", f"{v} is out of range for {ty} data (ptxas: \"Value out of range for type "
                                       f"{ty} {x & 0xFFFFFFFF}\"{low})", at(after),
                        (f"{ty} data takes 0 to {(1 << bits) - 1}, or -{1 << (bits - 1)} to -1",))


# ------------------------------------------------------------------------------------------------- entry
def _async_checks(ctx: _Ctx, fn: Function, box_bytes):
    try:
        _check_async(fn, ctx.add, box_bytes)
    except Exception as e:  # a bug in the checks must not hide the other diagnostics
        ctx.add("PTX-E-INTERNAL", f"async-protocol checks failed on {fn.name}: {type(e).__name__}: {e}", fn.loc,
                severity="warning")


def lint_result(res: ParseResult, target=None, box_bytes=None) -> List[Diagnostic]:
    """Diagnostics for a ParseResult (from ptxgen.parse.parse): its own, then the linter's, by line.

    `box_bytes` ({tensor-map parameter name: bytes of one box}) lets the mbarrier expect_tx check count
    TMA tensor copies."""
    was_enabled = gc.isenabled()
    gc.disable()  # as in parse(): many small objects, none freed; the collector would only rescan them
    try:
        return _lint_result(res, target, box_bytes)
    finally:
        if was_enabled:
            gc.enable()


def _lint_result(res: ParseResult, target, box_bytes=None) -> List[Diagnostic]:
    diags = list(res.diagnostics)
    if res.module is None:
        return _sorted(diags)
    override = _as_target(target)
    m = res.module
    ctx = _Ctx(res.filename, res.lines, override or m.target, m.version, m.address_size)
    _module_checks(ctx, res, override)
    _function_declarations(ctx, res)
    if res.alias_dirs:
        _alias_directives(ctx, res)
    _extern_variables(ctx, res)
    if res.loc_dirs:
        _loc_directives(ctx, res)
    if res.pragmas or any(info.header.pragmas for info in res.declarations):
        _pragma_strings(ctx, res)
    _function_directives(ctx, res)
    # labels are function-scoped: a branch in one kernel does not use a label of the same name in
    # another; the debug sections may name a label of any function
    per_fn: List[Tuple[list, Dict[str, int]]] = []
    uses_of: Dict[str, Dict[str, int]] = {}          # function name -> its label uses
    for fn in m.functions:
        uses = uses_of.setdefault(fn.name, {})
        fc = _FnCheck(ctx, fn, res, uses)
        fc.run()
        per_fn.append((fc.defined, uses))
        _async_checks(ctx, fn, box_bytes)
    for fname, label in res.protos:                  # a call's prototype label, in the calling function
        uses = uses_of.get(fname)
        if uses is not None:
            uses[label] = uses.get(label, 0) + 1
    section_uses: Dict[str, int] = {}
    _section_refs(ctx, res, section_uses, {n for defs, _ in per_fn for n, _ in defs})
    _section_data(ctx, res, {d.loc.line for d in diags if d.code == "PTX-E-SYNTAX" and d.loc is not None})
    if not any(d.severity == "error" for d in diags) and not any(d.severity == "error" for d in ctx.out):
        _abi_parameters(ctx, res)  # as ptxas, which compiles to the ABI only a module it has read without error
    for defs, uses in per_fn:
        for name, loc in defs:
            # compilers place $L__tmp / $L__func labels for debug information whether or not it is emitted
            if not uses.get(name) and not section_uses.get(name) and not name.startswith(("$L__tmp", "$L__func")):
                ctx.add("PTX-W-UNUSED-LABEL", f"label '{name}' is never used", loc, (), len(name), "warning")
    return _sorted(diags + ctx.out)


def _sorted(diags: List[Diagnostic]) -> List[Diagnostic]:
    def key(d: Diagnostic):
        if d.loc is None:
            return (0, 0)
        return (d.loc.line, d.loc.col or 0)
    return sorted(diags, key=key)


def _as_target(t) -> Optional[Target]:
    if t is None or isinstance(t, Target):
        return t
    return Target.parse(t)


def lint_ptx(text: str, filename: str = "<ptx>", target=None, box_bytes=None) -> List[Diagnostic]:
    """Lint PTX text: parse errors and everything the checks find, sorted by position.

    `target` ('sm_90a' or a Target) overrides the module's own .target for gating; a bad target string
    raises ptxgen.errors.TargetError.
    """
    if target is not None and not isinstance(target, Target):
        from .errors import TargetError
        try:
            target = Target.parse(target)
        except ValueError as e:
            raise TargetError(str(e)) from None
    return lint_result(parse(text, filename), target, box_bytes)


def lint_file(path: str, target=None, box_bytes=None) -> List[Diagnostic]:
    """Lint a PTX file (gzip-compressed when it ends in .gz); OSError propagates for unreadable files."""
    text = read_ptx(path)
    return lint_ptx(text, path, target, box_bytes)


def read_ptx(path: str) -> str:
    """The text of a PTX file (gunzipped when it ends in .gz; bytes that are not UTF-8 become U+FFFD)."""
    if path.endswith(".gz"):
        import gzip
        with gzip.open(path, "rb") as f:
            data = f.read()
    else:
        with open(path, "rb") as f:
            data = f.read()
    return data.decode("utf-8", errors="replace")


def lint_module(module: Module, target=None, box_bytes=None) -> List[Diagnostic]:
    """Lint builder output: the same instruction, register, label and async-protocol checks on an IR Module
    (or a ptxgen.builder Module, whose `.ir` is used)."""
    module = getattr(module, "ir", module)
    override = _as_target(target)
    ctx = _Ctx("<ir>", None, override or module.target, module.version, module.address_size)
    uses: Dict[str, int] = {}
    for fn in module.functions:
        fc = _FnCheck(ctx, fn, None, uses)
        fc.run()
        _async_checks(ctx, fn, box_bytes)
    return _sorted(ctx.out)
