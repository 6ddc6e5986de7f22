"""The order of an opcode's modifiers, linted as ptxas 13.0 takes it: each family's and core instruction's valid
spellings with their modifiers reordered (every order of up to 4 modifiers after the mnemonic, every move of one
modifier to another place beyond that), asked of ptxas and lint line by line: 6,888 orders of 232 spellings (135
family forms, each form rule's longest spelling of each instruction name, and 97 lines of the core instructions
and of other family spellings), in one ptxas run per target (it names each line it refuses and goes on).

What ptxas 13.0 showed (test_orders_agree_with_ptxas runs every order below through it; SURVEY holds the counts):
- an opcode is an instruction name, the longest run of its leading words that ptxas has a name for
  (isa_core.INSTRUCTION_NAMES: cp.async.bulk.tensor, cp.reduce.async.bulk, mbarrier.arrive.expect_tx,
  mbarrier.try_wait.parity, fence.proxy, wgmma.mma_async, setmaxnreg.inc, tex.level, suld.b, mul.wide, mad.lo,
  cvta.to, div.full, bar.red, barrier.cta.arrive, wmma.load.a, createpolicy.fractional, ...; or the mnemonic alone:
  mma, ldmatrix, fence, ld, atom, cvt ...), then its modifiers in any order: `mma.aligned.sync.row.col.m16n8k16
  .f32.f16.f16.f32`, `cp.reduce.async.bulk.global.shared::cta.add.bulk_group.u32`, `.noftz.add.f16`,
  `cp.async.bulk.global.shared::cta.L2::cache_hint.bulk_group`, `ld.u32.global.nc.L1::no_allocate`,
  `ld.gpu.relaxed.global`, `atom.add.gpu.global.u32`, `wgmma.mma_async.aligned.sync`, `barrier.aligned.sync`.
- except that the words of one group keep their order, which says which is which (isa_core.ORDERED_WORDS): the
  types (cvt.f32.s32 is not cvt.s32.f32; mma's D, A, B, C and the block-scaled forms' scale type), the state
  spaces (destination, then source: cp.async.global.shared is "State space incorrect"), the layouts (mma's and
  wmma's A, then B), a bit operation before .popc ("Illegal reduction operation"), createpolicy's primary priority
  before its secondary one ("Unsupported modifier '.evict_last' as secondary_priority"). Swapping two of a group
  gives another spelling, legal or not (mma .m8n8k4 takes .col.row as well as .row.col; .s8.u8 and .u8.s8 are
  both mixed-sign mma).
- a word of an instruction name anywhere else is "Unknown modifier" (or "Not a name of any known instruction"):
  `mul.u32.wide`, `mad.cc.lo.u32`, `cvta.global.to.u64`, `mbarrier.release.arrive.b64`, `fence.async.proxy`,
  `setmaxnreg.sync.inc`, `tex.2d.level`, `bar.sync.cta`, `wmma.a.load`, `multimem.relaxed.ld_reduce`.
- lint reads an opcode the same way: ptxgen.legality finds a family's form by isa_core.order_key (the name, the
  groups in order, the other words as a multiset), so its checks and diagnostics speak of the grammar's spelling;
  a name word out of place is PTX-E-MODIFIER at the opcode, with the spelling to write; an illegal spelling in
  another order is diagnosed in the order of its nearest legal spelling. The builder writes the grammar's order.

Where lint and ptxas still differ (`known`, asserted to stay as they are): nowhere. (mma.sp's 25 orders of its
layouts and types, which lint took while ptxgen.legality left mma.sp to ptxas, are refused by both since mma.sp is
a family of the legality grammar; mma.sp's .sp and .sp::ordered_metadata go anywhere after `mma`, as ptxas takes
them: `mma.sync.aligned.sp.m16n8k16.row.col.f32.f16.f16.f32`.)
"""
from __future__ import annotations

import collections
import itertools
import os
import re
import sys
from typing import Dict, List, Tuple

import pytest

from ptxgen import isa_core as C
from ptxgen import legality as LG
from ptxgen.target import Target

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _ptxas_lines import ptxas_rejected  # noqa: E402
from test_lint_vector_probes import errors, needs_ptxas  # noqa: E402

M = "PTX-E-MODIFIER"
_REG_TYPES = ("pred", "b8", "u8", "s8", "b16", "u16", "s16", "f16", "b32", "u32", "s32", "f32", "f16x2", "b64", "u64",
              "s64", "f64")


def module(lines: List[str], target: str = "sm_90a", version: str = "8.7") -> str:
    """A kernel with `lines` in its body, after %<type>_<0..129> registers of each type, a label $L, a .global g,
    a .shared s and a function f to call."""
    regs = "".join(f".reg .{t} %{t}_<130>;\n" for t in _REG_TYPES)
    return (f".version {version}\n.target {target}\n.address_size 64\n.func f()\n{{\nret;\n}}\n"
            f".visible .entry k(.param .u64 p)\n{{\n{regs}$L:\n.global .align 16 .b8 g[256];\n"
            ".shared .align 16 .b8 s[256];\n" + "\n".join(lines) + "\nret;\n}\n")


# ----------------------------------------------------------------------------------------------------- seeds
def _imm(values) -> int:
    if values is None:
        return 1
    for v in (1, 16, 128, 0, 8):
        if v in values:
            return v
    return values[-1] if isinstance(values, range) else max(values)


def operands(opcode: str) -> str:
    """The operands of a legal family opcode, from its first operand list (optional operands left out)."""
    out: List[str] = []
    for s in LG.signatures(opcode)[0].slots:
        if s.optional:
            continue
        t = s.type.name if s.type is not None else "b32"
        t = {"bf16x2": "b32", "tf32": "b32"}.get(t, t)      # instruction-only types: no registers of their own
        if LG.VEC in s.kinds and not (s.name == "e" and opcode.startswith("mma")):   # (mma.sp's metadata: one)
            out.append("{" + ", ".join(f"%{t}_{i}" for i in range(s.count)) + "}")
        elif LG.TENSOR in s.kinds:
            out.append("[%u64_0, {" + ", ".join(f"%b32_{i}" for i in range(s.count)) + "}]")
        elif LG.ADDR in s.kinds:
            out.append("[%u64_0]")
        elif LG.SINK in s.kinds and LG.REG not in s.kinds:
            out.append("_")
        elif LG.REG in s.kinds:
            if s.name == "p" and s.role == "dst" and out:   # d|p
                out[-1] += f"|%{t}_0"
            else:
                out.append(f"%{t}_0")
        else:
            out.append(str(_imm(s.values)))
    return ", ".join(out)


def family_seeds() -> List[Tuple[str, str]]:
    """(target, line) of each form rule's longest spelling per instruction name (tex, tex.base, tex.level, ...)."""
    best: Dict[Tuple[str, str], LG.Form] = {}
    for f in LG.forms():
        key = (f.rule, C.order_key(f.opcode.split("."))[0])
        if key not in best or len(f.tokens) > len(best[key].tokens):
            best[key] = f
    out = []
    for f in best.values():
        needs, _ = LG.requirement(f.opcode)
        target = next(t for t in _VERSION if all(n.met_by(Target.parse(t)) for n in needs))
        out.append((target, f"{f.opcode} {operands(f.opcode)};"))
    return out


# the core instructions, and family spellings the longest ones leave out
CORE_SEEDS = (
    "ld.global.nc.L1::no_allocate.v4.u32 {%u32_0, %u32_1, %u32_2, %u32_3}, [%u64_0];",
    "ld.relaxed.gpu.global.L1::evict_last.u32 %u32_0, [%u64_0];",
    "ld.acquire.sys.shared::cta.v2.u64 {%u64_0, %u64_1}, [%u64_0];",
    "ld.global.ca.L2::128B.v2.f32 {%f32_0, %f32_1}, [%u64_0];",
    "ld.global.L1::evict_last.L2::cache_hint.u32 %u32_0, [%u64_0], %u64_1;",
    "ld.weak.global.cg.u16 %u16_0, [%u64_0];",
    "ld.mmio.relaxed.sys.global.u32 %u32_0, [%u64_0];",
    "ld.global.cs.L2::64B.v2.u64 {%u64_0, %u64_1}, [%u64_0];",
    "ldu.global.v2.u32 {%u32_0, %u32_1}, [%u64_0];",
    "st.global.wb.v4.u32 [%u64_0], {%u32_0, %u32_1, %u32_2, %u32_3};",
    "st.release.sys.global.u32 [%u64_0], %u32_0;",
    "st.relaxed.cta.shared.v2.f32 [%u64_0], {%f32_0, %f32_1};",
    "st.global.L1::no_allocate.L2::cache_hint.b32 [%u64_0], %b32_0, %u64_1;",
    "st.local.cs.v2.u64 [%u64_0], {%u64_0, %u64_1};",
    "atom.relaxed.gpu.global.add.u32 %u32_0, [%u64_0], %u32_1;",
    "atom.acq_rel.sys.shared::cta.cas.b32 %b32_0, [%u64_0], %b32_1, %b32_2;",
    "atom.global.add.noftz.f16 %f16_0, [%u64_0], %f16_1;",
    "atom.acquire.gpu.global.add.L2::cache_hint.u64 %u64_0, [%u64_0], %u64_1, %u64_2;",
    "atom.global.v4.f32.add {%f32_0, %f32_1, %f32_2, %f32_3}, [%u64_0], {%f32_0, %f32_1, %f32_2, %f32_3};",
    "red.release.gpu.global.add.u64 [%u64_0], %u64_0;",
    "red.global.add.noftz.f16x2 [%u64_0], %f16x2_0;",
    "red.relaxed.cluster.shared::cluster.max.s32 [%u64_0], %s32_0;",
    "red.global.add.L2::cache_hint.u32 [%u64_0], %u32_0, %u64_1;",
    "cvt.rzi.ftz.sat.s32.f32 %s32_0, %f32_0;",
    "cvt.rn.ftz.sat.f32.f64 %f32_0, %f64_0;",
    "cvt.rn.satfinite.e4m3x2.f32 %b16_0, %f32_0, %f32_1;",
    "cvt.rn.satfinite.relu.f16x2.f32 %f16x2_0, %f32_0, %f32_1;",
    "cvta.to.global.u64 %u64_0, %u64_1;",
    "cvta.to.shared::cluster.u64 %u64_0, %u64_1;",
    "cvta.shared::cta.u64 %u64_0, %u64_1;",
    "setp.ne.or.ftz.f32 %pred_0|%pred_1, %f32_0, %f32_1, %pred_2;",
    "set.eq.xor.ftz.u32.f32 %u32_0, %f32_0, %f32_1, %pred_0;",
    "slct.ftz.f32.f32 %f32_0, %f32_0, %f32_1, %f32_2;",
    "mul.wide.u32 %u64_0, %u32_0, %u32_1;",
    "mul.hi.s32 %s32_0, %s32_0, %s32_1;",
    "mul.rn.ftz.sat.f32 %f32_0, %f32_0, %f32_1;",
    "mad.lo.cc.u32 %u32_0, %u32_0, %u32_1, %u32_2;",
    "mad.hi.sat.s32 %s32_0, %s32_0, %s32_1, %s32_2;",
    "mad.wide.u32 %u64_0, %u32_0, %u32_1, %u64_1;",
    "madc.hi.cc.u32 %u32_0, %u32_0, %u32_1, %u32_2;",
    "mul24.hi.u32 %u32_0, %u32_0, %u32_1;",
    "mad24.hi.sat.s32 %s32_0, %s32_0, %s32_1, %s32_2;",
    "fma.rn.ftz.sat.f32 %f32_0, %f32_0, %f32_1, %f32_2;",
    "fma.rn.oob.relu.f16 %f16_0, %f16_0, %f16_1, %f16_2;",
    "add.rz.ftz.sat.f32 %f32_0, %f32_0, %f32_1;",
    "sub.rn.ftz.sat.f16x2 %f16x2_0, %f16x2_0, %f16x2_1;",
    "addc.cc.u32 %u32_0, %u32_0, %u32_1;",
    "min.ftz.NaN.xorsign.abs.f16x2 %f16x2_0, %f16x2_0, %f16x2_1;",
    "div.rn.ftz.f32 %f32_0, %f32_0, %f32_1;",
    "div.full.ftz.f32 %f32_0, %f32_0, %f32_1;",
    "rcp.approx.ftz.f64 %f64_0, %f64_1;",
    "ex2.approx.ftz.f32 %f32_0, %f32_1;",
    "shf.r.clamp.b32 %b32_0, %b32_1, %b32_2, %u32_0;",
    "dp2a.hi.s32.s32 %s32_0, %s32_1, %s32_1, %s32_2;",
    "dp4a.u32.s32 %u32_0, %u32_1, %s32_1, %u32_2;",
    "prmt.b32.f4e %b32_0, %b32_1, %b32_2, %b32_3;",
    "bfind.shiftamt.u32 %u32_0, %u32_1;",
    "testp.finite.f32 %pred_0, %f32_0;",
    "shfl.sync.bfly.b32 %b32_0|%pred_0, %b32_1, 1, 31, -1;",
    "vote.sync.ballot.b32 %b32_0, %pred_0, -1;",
    "match.any.sync.b32 %b32_0, %b32_1, -1;",
    "redux.sync.min.u32 %u32_0, %u32_1, -1;",
    "bar.red.popc.u32 %u32_0, 0, %pred_0;",
    "bar.cta.red.popc.u32 %u32_0, 0, %pred_0;",
    "bar.cta.sync 0;",
    "bar.cta.arrive 0, 64;",
    "bar.warp.sync -1;",
    "barrier.sync.aligned 0;",
    "barrier.arrive.aligned 0, 64;",
    "barrier.red.or.aligned.pred %pred_0, 0, %pred_1;",
    "barrier.cta.sync.aligned 0;",
    "barrier.cta.arrive.aligned 0, 64;",
    "barrier.cta.red.popc.aligned.u32 %u32_0, 0, %pred_0;",
    "membar.proxy.alias;",
    "prefetch.global.L2::evict_last [%u64_0];",
    "createpolicy.fractional.L2::evict_last.L2::evict_unchanged.b64 %b64_0, 0f3F800000;",
    "createpolicy.range.L2::evict_last.L2::evict_first.b64 %b64_0, [%u64_0], 64, 128;",
    "createpolicy.cvt.L2.b64 %b64_0, %b64_1;",
    "wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%b32_0, %b32_1, %b32_2, %b32_3, %b32_4, %b32_5, %b32_6, "
    "%b32_7}, [%u64_0];",
    "wmma.store.d.sync.aligned.col.m16n16k16.shared.f32 [%u64_0], {%f32_0, %f32_1, %f32_2, %f32_3, %f32_4, %f32_5, "
    "%f32_6, %f32_7};",
    "wmma.mma.sync.aligned.row.col.m8n8k32.s32.s4.s4.s32.satfinite {%s32_0, %s32_1}, {%b32_0}, {%b32_0}, "
    "{%s32_0, %s32_1};",
    "wmma.mma.xor.popc.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32 {%s32_0, %s32_1}, {%b32_0}, {%b32_0}, "
    "{%s32_0, %s32_1};",
    "mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f32_0, %f32_1, %f32_2, %f32_3}, {%b32_0, %b32_1}, "
    "{%b32_0, %b32_1}, {%f32_0, %f32_1, %f32_2, %f32_3}, %b32_0, 0;",
    "multimem.ld_reduce.relaxed.sys.global.add.u32 %u32_0, [%u64_0];",
    "multimem.st.relaxed.sys.global.b32 [%u64_0], %b32_0;",
    "tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%u64_0], %b64_0;",
    # family spellings besides each rule's longest
    "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%u64_0, {%b32_0, %b32_1}], [%u64_0];",
    "cp.async.cg.shared.global.L2::256B [%u64_0], [%u64_0], 16;",
    "mbarrier.arrive_drop.expect_tx.relaxed.cluster.shared::cluster.b64 _, [%u64_0], %u32_0;",
    "mbarrier.complete_tx.relaxed.cluster.shared::cluster.b64 [%u64_0], %u32_0;",
    "mbarrier.try_wait.relaxed.cta.shared.b64 %pred_0, [%u64_0], %b64_0;",
    "fence.proxy.async.shared::cta;",
    "ldmatrix.sync.aligned.m8n8.x2.b16 {%b32_0, %b32_1}, [%u64_0];",
    "wgmma.mma_async.sync.m64n16k16.f32.f16.f16 {%f32_0, %f32_1, %f32_2, %f32_3, %f32_4, %f32_5, %f32_6, %f32_7}, "
    "%u64_0, %u64_0, 1, 1, 1, 0, 0;",
    "mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32 {%s32_0, %s32_1, %s32_2, %s32_3}, {%b32_0, %b32_1, %b32_2, "
    "%b32_3}, {%b32_0, %b32_1}, {%s32_0, %s32_1, %s32_2, %s32_3};",
    "tex.grad.2d.v4.f32.f32 {%f32_0, %f32_1, %f32_2, %f32_3}, [%u64_0, {%f32_0, %f32_1}], {%f32_0, %f32_1}, "
    "{%f32_0, %f32_1};",
    "tex.2d.v4.f32.s32 {%f32_0, %f32_1, %f32_2, %f32_3}, [%u64_0, {%s32_0, %s32_1}];",
)

def known(opcode: str) -> bool:
    """Is this an order ptxas refuses and lint takes, as it is (see the module docstring)? None is, now."""
    return False


def orders(opcode: str) -> List[str]:
    """The opcode with its words after the mnemonic in other orders: every order of up to 4, else each word moved
    to each other place (every swap of neighbours among them)."""
    head, *mods = opcode.split(".")
    if len(mods) <= 4:
        cands = list(itertools.permutations(mods))
    else:
        cands = []
        for i, j in itertools.permutations(range(len(mods)), 2):
            m = mods[:i] + mods[i + 1:]
            m.insert(j, mods[i])
            cands.append(m)
    out = dict.fromkeys(".".join([head, *m]) for m in cands)
    out.pop(opcode, None)
    return list(out)


def _family(opcode: str) -> str:
    """The SURVEY row of a seed: the family's instruction name where families share a mnemonic, else the mnemonic."""
    words = opcode.split(".")
    if words[0] == "cp":
        return re.sub(r"\.(commit_group|wait_group|wait_all|mbarrier\.arrive|prefetch)\b", "",
                      C.order_key(words)[0])
    if words[0] in ("wgmma", "fence"):
        return C.order_key(words)[0]
    if words[0] in ("tex", "tld4", "txq", "suld", "sust", "sured", "suq", "istypep"):
        return "textures and surfaces"
    return "barrier.cluster" if opcode.startswith("barrier.cluster") else words[0]


def probes() -> Dict[str, List[Tuple[str, str, str]]]:
    """{target: [(family, seed opcode, line), ...]}: each seed, then its other orders."""
    seeds = family_seeds() + [("sm_90a", line) for line in CORE_SEEDS]
    out: Dict[str, List[Tuple[str, str, str]]] = collections.defaultdict(list)
    for target, line in seeds:
        opcode, ops = line.split(" ", 1) if " " in line else (line[:-1], ";")
        opcode = opcode.rstrip(";")
        ops = " " + ops if ops != ";" else ";"
        out[target].append((_family(opcode), opcode, opcode + ops))
        out[target].extend((_family(opcode), opcode, o + ops) for o in orders(opcode))
    return out


_VERSION = {"sm_90a": "8.7", "sm_100a": "8.8", "sm_120a": "8.8"}


def _first(text: str) -> int:
    return text.split("\n").index("$L:") + 4       # the line of the first probe


def lint_verdicts(batch: List[Tuple[str, str, str]], target: str) -> List[bool]:
    """For each line of `batch`: does lint take it?"""
    text = module([line for _, _, line in batch], target, _VERSION[target])
    first = _first(text)
    flagged = {d.loc.line for d in errors(text)}
    return [first + i not in flagged for i in range(len(batch))]


def ptxas_verdicts(batch: List[Tuple[str, str, str]], target: str) -> List[bool]:
    text = module([line for _, _, line in batch], target, _VERSION[target])
    first = _first(text)
    rejected = ptxas_rejected(text, target)
    return [first + i not in rejected for i in range(len(batch))]


# family -> (orders probed, orders ptxas takes), of the last run (ptxas 13.0.88; `python3
# tests/test_lint_modifier_order.py` prints it); the seeds themselves are not counted
SURVEY: Dict[str, Tuple[int, int]] = {
    "mma": (2331, 1531), "ldmatrix": (137, 124), "stmatrix": (72, 72), "wgmma.mma_async": (562, 312),
    "wgmma.fence": (5, 1), "wgmma.commit_group": (5, 1), "wgmma.wait_group": (5, 1), "cp.async": (69, 22),
    "cp.async.bulk": (166, 36), "cp.async.bulk.tensor": (546, 172), "prefetch": (2, 2),
    "cp.reduce.async.bulk": (130, 42), "applypriority": (1, 1), "discard": (1, 1), "mbarrier": (396, 187),
    "fence": (11, 11), "fence.proxy": (73, 21), "barrier.cluster": (46, 2), "mapa": (1, 1), "getctarank": (1, 1),
    "setmaxnreg": (46, 10), "st": (133, 124), "red": (114, 103), "textures and surfaces": (338, 167),
    "ld": (142, 142), "ldu": (5, 5), "atom": (103, 103), "cvt": (71, 47), "cvta": (11, 3), "setp": (23, 23),
    "set": (16, 12), "slct": (2, 2), "mul": (25, 23), "mad": (11, 2), "madc": (5, 1), "mul24": (1, 0),
    "mad24": (5, 1), "fma": (46, 46), "add": (23, 23), "sub": (23, 23), "addc": (1, 1), "min": (16, 16),
    "div": (10, 6), "rcp": (5, 5), "ex2": (5, 5), "shf": (5, 1), "dp2a": (2, 0), "dp4a": (1, 1), "prmt": (1, 1),
    "bfind": (1, 1), "testp": (1, 1), "shfl": (5, 5), "vote": (5, 5), "match": (5, 5), "redux": (5, 5),
    "bar": (31, 2), "barrier": (51, 11), "membar": (1, 0), "createpolicy": (51, 5), "wmma": (294, 145),
    "multimem": (151, 102), "tensormap": (25, 16), "cp.reduce.async.bulk.tensor": (281, 80),
}


# family -> the orders of it that lint takes and ptxas refuses (`known`)
KNOWN_TAKEN: Dict[str, int] = {}


def survey(verdicts) -> Dict[str, Tuple[int, int]]:
    """{family: (orders probed, orders taken)} of [(family, seed, line, taken)], the seeds left out."""
    out: Dict[str, List[int]] = {}
    for fam, seed, line, ok in verdicts:
        if line.split(" ")[0].rstrip(";") == seed:
            continue
        row = out.setdefault(fam, [0, 0])
        row[0] += 1
        row[1] += ok
    return {k: (v[0], v[1]) for k, v in out.items()}


@pytest.fixture(scope="module")
def lint_run():
    return [(f, s, line, ok) for target, batch in probes().items()
            for (f, s, line), ok in zip(batch, lint_verdicts(batch, target))]


# ----------------------------------------------------------------------------------------------------- tests
def test_every_seed_lints_clean(lint_run):
    bad = [line for _, seed, line, ok in lint_run if line.split(" ")[0].rstrip(";") == seed and not ok]
    assert not bad, bad


def test_lint_takes_the_orders_the_survey_recorded(lint_run):
    """Without ptxas: lint takes as many orders of each family as ptxas did in the recorded run."""
    got = survey(lint_run)
    want = {k: (n, ok + KNOWN_TAKEN.get(k, 0)) for k, (n, ok) in SURVEY.items()}
    assert got == want, {k: (got.get(k), want.get(k)) for k in set(got) | set(want) if got.get(k) != want.get(k)}


@pytest.mark.ptxas
@needs_ptxas
def test_orders_agree_with_ptxas(lint_run):
    ptx = [(f, s, line, ok) for target, batch in probes().items()
           for (f, s, line), ok in zip(batch, ptxas_verdicts(batch, target))]
    assert [x[2] for x in ptx] == [x[2] for x in lint_run]
    seeds = [line for _, seed, line, ok in ptx if line.split(" ")[0].rstrip(";") == seed and not ok]
    assert not seeds, seeds
    wrong = [(line, "ptxas takes it" if p[3] else "ptxas refuses it") for p, (_, _, line, ok) in zip(ptx, lint_run)
             if p[3] != ok and not (ok and known(line.split(" ")[0].rstrip(";")))]
    assert not wrong, (len(wrong), wrong[:20])
    assert collections.Counter(x[0] for p, x in zip(ptx, lint_run) if p[3] != x[3]) == KNOWN_TAKEN
    assert survey(ptx) == SURVEY


# the known cases, and one of each kind of order
TAKEN = [
    "cp.reduce.async.bulk.global.shared::cta.add.bulk_group.u32 [%u64_0], [s], 16;",
    "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.L2::cache_hint.u32 [%u64_0], [s], 16, %u64_1;",
    "cp.reduce.async.bulk.global.shared::cta.bulk_group.noftz.add.f16 [%u64_0], [s], 16;",
    "cp.async.bulk.global.shared::cta.L2::cache_hint.bulk_group [%u64_0], [s], 16, %u64_1;",
    "mma.aligned.sync.row.col.m16n8k16.f32.f16.f16.f32 {%f32_0, %f32_1, %f32_2, %f32_3}, {%b32_0, %b32_1, %b32_2, "
    "%b32_3}, {%b32_0, %b32_1}, {%f32_0, %f32_1, %f32_2, %f32_3};",
    "mbarrier.try_wait.parity.shared::cta.cta.acquire.b64 %pred_0, [s], %u32_0;",
    "ld.u32.global.L1::no_allocate.nc %u32_0, [%u64_0];",
    "ld.global.gpu.relaxed.v4.u32 {%u32_0, %u32_1, %u32_2, %u32_3}, [%u64_0];",
    "atom.add.gpu.global.u32 %u32_0, [%u64_0], %u32_1;",
    "barrier.aligned.sync 0;",
    "barrier.cta.sync.aligned 0;",
    "mma.sync.aligned.sp.m16n8k16.row.col.f32.f16.f16.f32 {%f32_0, %f32_1, %f32_2, %f32_3}, {%b32_0, %b32_1}, "
    "{%b32_0, %b32_1}, {%f32_0, %f32_1, %f32_2, %f32_3}, %b32_0, 0;",
]


@pytest.mark.parametrize("line", TAKEN, ids=[t.split(" ")[0] for t in TAKEN])
def test_lint_takes_these_orders(line):
    assert errors(module([line])) == []


def test_a_legal_order_is_checked_as_the_grammars_spelling():
    """Operands, target and version of a reordered spelling are its form's; the notes name the PTX ISA's order."""
    line = "cp.reduce.async.bulk.global.shared::cta.add.bulk_group.u32 [%u64_0], [s], 15;"
    text = module([line])
    (d,) = errors(text)
    assert "multiple of 16 from 0 to 1048560, not 15" in d.message
    assert text.split("\n")[d.loc.line - 1][d.loc.col - 1:] == "15;"
    (d,) = errors(module(["wgmma.fence.aligned.sync;"], "sm_80", "8.0"))
    assert d.code == "PTX-E-TARGET" and d.notes == ("`wgmma.fence.sync.aligned`",), str(d)
    assert LG.canonical("mbarrier.arrive.b64.shared.cta.release") == "mbarrier.arrive.release.cta.shared.b64"
    assert LG.check("mma.aligned.sync.row.col.m16n8k16.f32.f16.f16.f32") == []


# (line ptxas refuses, the code, text in the message, the note)
REFUSED = [
    ("mul.u32.wide %u64_0, %u32_0, %u32_1;", M, ".wide is part of the instruction name mul.wide",
     "write mul.wide.u32"),
    ("mad.cc.lo.u32 %u32_0, %u32_0, %u32_1, %u32_2;", M, ".lo is part of the instruction name mad.lo",
     "write mad.lo.cc.u32"),
    ("cvta.global.to.u64 %u64_0, %u64_1;", M, "ptxas reads cvta with .to among its modifiers",
     "write cvta.to.global.u64"),
    ("bar.cta.popc.red.u32 %u32_0, 0, %pred_0;", M, ".red is part of the instruction name bar.cta.red",
     "write bar.cta.red.popc.u32"),
    ("wmma.a.load.sync.aligned.row.m16n16k16.global.f16 {%b32_0, %b32_1, %b32_2, %b32_3, %b32_4, %b32_5, %b32_6, "
     "%b32_7}, [%u64_0];", M, ".a, .load are part of the instruction name wmma.load.a",
     "write wmma.load.a.sync.aligned.row.m16n16k16.global.f16"),
    ("mbarrier.release.arrive.cta.shared.b64 %b64_0, [s];", M, "ptxas reads mbarrier with .arrive among its modifiers",
     "write mbarrier.arrive.release.cta.shared.b64"),
    ("cp.async.reduce.bulk.global.shared::cta.bulk_group.add.u32 [%u64_0], [s], 16;", M,
     ".reduce, .bulk are part of the instruction name cp.reduce.async.bulk",
     "write cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32"),
    ("fence.async.proxy.shared::cta;", M, "part of the instruction name fence.proxy",
     "write fence.proxy.async.shared::cta"),
    ("setmaxnreg.sync.inc.aligned.u32 64;", M, "setmaxnreg.inc", "write setmaxnreg.inc.sync.aligned.u32"),
    ("createpolicy.fractional.L2::evict_first.L2::evict_last.b64 %b64_0, 0f3F800000;", M,
     "secondary priority (the second) cannot be .L2::evict_last",
     "the primary priority comes first; the secondary one is .L2::evict_first or .L2::evict_unchanged"),
    ("wmma.mma.popc.xor.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32 {%s32_0, %s32_1}, {%b32_0}, {%b32_0}, "
     "{%s32_0, %s32_1};", M, "comes after its bit operation", None),
    ("mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.popc.xor {%s32_0, %s32_1}, {%b32_0}, {%b32_0}, {%s32_0, "
     "%s32_1};", M, "not .popc.xor", "the nearest legal spelling: mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.xor.popc"),
    ("cp.async.ca.global.shared [%u64_0], [%u64_0], 16;", M, "nearest legal spellings differ in 2 places", None),
]


@pytest.mark.parametrize("line,code,text,note", REFUSED, ids=[r[0].split(" ")[0] for r in REFUSED])
def test_a_refused_order_is_reported_at_the_opcode(line, code, text, note):
    src = module(["  @%pred_3 " + line])
    (d,) = errors(src)
    assert (d.code, d.loc.line) == (code, src.split("\n").index("  @%pred_3 " + line) + 1), str(d)
    assert d.loc.col == len("  @%pred_3 ") + 1 and d.span == len(line.split(" ")[0].rstrip(";")), str(d)
    assert text in d.message, str(d)
    assert note is None or note in d.notes, str(d)


def test_an_illegal_spelling_is_diagnosed_in_the_grammars_order():
    (d,) = LG.check("cp.reduce.async.bulk.global.shared::cta.add.bulk_group.s8")
    assert d.code == "PTX-E-TYPE" and d.message.startswith(".s8 is not a legal element type"), str(d)
    assert d.notes[-1].endswith("in the PTX ISA's order this is cp.reduce.async.bulk.global.shared::cta.bulk_group"
                                ".add.s8"), str(d)
    (d,) = LG.check("wgmma.mma_async.aligned.sync.m64n12k16.f32.bf16.bf16")
    assert d.code == "PTX-E-SHAPE" and d.message.startswith("N=12 is not legal for .bf16 wgmma"), str(d)


def test_the_order_key_is_what_ptxas_reads():
    key = C.order_key
    assert key("mul.wide.u32".split(".")) != key("mul.u32.wide".split("."))
    assert C.misplaced_name_words("mul.u32.wide".split(".")) == ("wide",)
    assert key("cvt.rn.f32.s32".split(".")) == key("cvt.f32.rn.s32".split(".")) != key("cvt.rn.s32.f32".split("."))
    assert key("cp.async.ca.shared.global".split(".")) != key("cp.async.ca.global.shared".split("."))
    assert C.name_length("cp.async.bulk.prefetch.tensor.2d.L2.global".split(".")) == 5
    assert C.name_length("mbarrier.try_wait.parity.b64".split(".")) == 3
    assert C.name_first("barrier.arrive.cta.aligned".split(".")) == "barrier.cta.arrive.aligned"


def test_every_form_is_read_as_itself():
    """No two forms are one instruction to ptxas (legality's catalogue refuses them), so each spelling the grammar
    (and the builder) writes is its own reading."""
    assert all(LG.canonical(f.opcode) == f.opcode for f in LG.forms())


if __name__ == "__main__":     # print the survey: python3 tests/test_lint_modifier_order.py
    runs = {t: (b, ptxas_verdicts(b, t), lint_verdicts(b, t)) for t, b in probes().items()}
    ptx = [(f, s, line, ok) for b, pv, _ in runs.values() for (f, s, line), ok in zip(b, pv)]
    lnt = [(f, s, line, ok) for b, _, lv in runs.values() for (f, s, line), ok in zip(b, lv)]
    print("SURVEY = {")
    for fam, row in survey(ptx).items():
        print(f'    "{fam}": {row},')
    print("}")
    diff = collections.Counter(f for (f, s, line, a), (_, _, _, b) in zip(ptx, lnt) if a != b)
    print("disagreements:", dict(diff))
