"""Checks of the asynchronous protocols that fail silently (wrong results, hangs), over a function's CFG.

`check_function(fn, add, box_bytes=None)` builds the control-flow graph of one function body (basic blocks
split at labels and after bra/brx/ret/exit/trap), runs a forward dataflow over it and reports through
`add(code, message, loc, notes, span, severity)` (lint._Ctx.add). ptxgen.lint runs it on every function of
parsed PTX and of builder output; every finding is a warning (or a note) that `--werror` can promote.

The analysis follows one thread's paths: a finding means some path through the function breaks the
protocol. Registers are matched by name; an mbarrier is known when its address is a shared symbol (or a
register set once from one, `mov.u32 %r1, bar;`), otherwise it is not checked.

The block size comes from the function's `.reqntid` (exact) or `.maxntid` (an upper bound): it bounds which
%tid.x comparisons can split the block (PTX-W-DIVERGENT, PTX-W-WARPGROUP-ALIGN) and gives the arrivals per
phase of barriers that every thread arrives on (PTX-W-MBAR-COUNT). Comparisons of %tid.x (or %tid.x/2^k) with
constants are decided exactly. Generic-proxy shared stores and async-proxy reads are matched per shared symbol
when their addresses trace back to one (PTX-W-PROXY-FENCE).

A thread's bulk copies and reductions from shared to global memory with .bulk_group completion are followed from
issue through cp.async.bulk.commit_group to cp.async.bulk.wait_group(.read) (PTX-W-BULK-*, section 2b); there
a path keeps what it knows of the predicates that guard them or branch around them, so an elected thread's
`@!%p bra` around its copies and again around its wait is one decision, not two.

Codes (stable; each with a bad and a good example in ASYNC_CODES and in README "Async-protocol checks"):
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Callable, Dict, FrozenSet, List, Mapping, Optional, Tuple

from . import legality
from .ir import Addr, Function, Guard, Imm, Instr, Label, LabelDef, Pair, Reg, Sym, Vec

__all__ = ["ASYNC_CODES", "check_function", "build_cfg", "BasicBlock"]

# code -> (what it means, a bad sequence, the good one)
ASYNC_CODES: Dict[str, Tuple[str, str, str]] = {
    "PTX-W-WGMMA-FENCE": (
        "(warning) wgmma.mma_async reads accumulator (or register A) registers that other instructions wrote "
        "with no wgmma.fence in between (or no wgmma.fence before the first wgmma.mma_async)",
        "wgmma.fence.sync.aligned; mov.f32 %f1, 0f00000000; wgmma.mma_async... {%f1,...}, ...",
        "mov.f32 %f1, 0f00000000; wgmma.fence.sync.aligned; wgmma.mma_async... {%f1,...}, ..."),
    "PTX-W-WGMMA-ACCESS": (
        "(warning) an accumulator of a wgmma.mma_async that no wgmma.wait_group has retired yet is read or "
        "written by another instruction (uncommitted, or committed in a group that is still in flight)",
        "wgmma.mma_async... {%f1,...}; wgmma.commit_group.sync.aligned; st.global.f32 [%rd1], %f1;",
        "wgmma.mma_async... {%f1,...}; wgmma.commit_group.sync.aligned; wgmma.wait_group.sync.aligned 0; "
        "st.global.f32 [%rd1], %f1;"),
    "PTX-W-WGMMA-WAIT": (
        "(note) wgmma.wait_group N where fewer than N groups can be in flight: it waits for nothing",
        "wgmma.commit_group.sync.aligned; wgmma.wait_group.sync.aligned 1; // only 1 group",
        "wgmma.commit_group.sync.aligned; wgmma.wait_group.sync.aligned 0;"),
    "PTX-W-WGMMA-COMMIT": (
        "(warning) a wgmma.mma_async is not committed (wgmma.commit_group) on some path to ret/exit",
        "wgmma.mma_async... ; ret;",
        "wgmma.mma_async... ; wgmma.commit_group.sync.aligned; wgmma.wait_group.sync.aligned 0; ret;"),
    "PTX-W-PROXY-FENCE": (
        "(warning) shared memory written through the generic proxy (st.shared, stmatrix, cp.async, atom/red "
        ".shared) is then read through the async proxy (wgmma descriptors, a TMA/bulk store to global) with "
        "no fence.proxy.async on some path in between",
        "st.shared.b32 [%r1], %r2; bar.sync 0; wgmma.mma_async ... %rd1, %rd2, ...;",
        "st.shared.b32 [%r1], %r2; fence.proxy.async.shared::cta; bar.sync 0; wgmma.mma_async ...;"),
    "PTX-W-PROXY-PUBLISH": (
        "(warning) shared memory written through the generic proxy is handed to other threads by an "
        "mbarrier.arrive with no fence.proxy.async in between on some path, while the function reads shared "
        "memory through the async proxy (a TMA/bulk store, wgmma) after an mbarrier wait: the waiting thread's "
        "async-proxy read may miss the writes, since the barrier orders only the generic proxy",
        "stmatrix.sync.aligned.m8n8.x4.shared.b16 [%r1], {...}; mbarrier.arrive.shared.b64 %rd1, [bar];\n"
        "// another thread: mbarrier.try_wait...; cp.async.bulk.tensor.2d.global.shared::cta... [%r1];",
        "stmatrix.sync.aligned.m8n8.x4.shared.b16 [%r1], {...}; fence.proxy.async.shared::cta; "
        "mbarrier.arrive.shared.b64 %rd1, [bar];"),
    "PTX-W-BULK-ACCESS": (
        "(warning) shared memory is written through the generic proxy (st.shared, stmatrix, cp.async, atom/red "
        ".shared, a generic st to a shared address) while a bulk copy or reduction from shared to global "
        "(.bulk_group) of the thread may still read it: uncommitted, or committed with no "
        "cp.async.bulk.wait_group since (a wait that leaves it pending by its count is trusted to mean another "
        "buffer; a write to another .shared array is fine)",
        "L: st.shared.u32 [%r5], %r6; fence.proxy.async.shared::cta; bar.sync 0; "
        "cp.async.bulk.global.shared::cta.bulk_group [%rd4], [tile], 512; cp.async.bulk.commit_group; "
        "bar.sync 0; @%p2 bra L;",
        "L: st.shared.u32 [%r5], %r6; fence.proxy.async.shared::cta; bar.sync 0; "
        "cp.async.bulk.global.shared::cta.bulk_group [%rd4], [tile], 512; cp.async.bulk.commit_group; "
        "cp.async.bulk.wait_group.read 0; bar.sync 0; @%p2 bra L;"),
    "PTX-W-BULK-COMMIT": (
        "(warning) a bulk copy or reduction with .bulk_group completion is not committed "
        "(cp.async.bulk.commit_group) on some path before a cp.async.bulk.wait_group, which counts committed "
        "groups only, or before ret/exit",
        "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd1, {%r3, %r3}], [%r1]; "
        "cp.async.bulk.wait_group.read 0;",
        "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd1, {%r3, %r3}], [%r1]; "
        "cp.async.bulk.commit_group; cp.async.bulk.wait_group.read 0;"),
    "PTX-W-BULK-WAIT": (
        "(warning) the thread exits (ret/exit) while a committed bulk async-group may still read its shared "
        "memory: no cp.async.bulk.wait_group (.read or not) since its commit, or the last one's count lets it "
        "stay pending",
        "cp.async.bulk.global.shared::cta.bulk_group [%rd4], [%r8], 512; cp.async.bulk.commit_group; "
        "cp.async.bulk.wait_group.read 1; ret;",
        "cp.async.bulk.global.shared::cta.bulk_group [%rd4], [%r8], 512; cp.async.bulk.commit_group; "
        "cp.async.bulk.wait_group.read 0; ret;"),
    "PTX-W-BULK-VISIBLE": (
        "(warning) the thread reads (ld/ldu/atom) global memory that its bulk copy or reduction writes, through "
        "the register (or symbol) and offset the copy's destination names, before a cp.async.bulk.wait_group "
        "without .read has waited for the copy: .read waits only for the source to be read",
        "cp.async.bulk.global.shared::cta.bulk_group [%rd2], [%r2], 256; cp.async.bulk.commit_group; "
        "cp.async.bulk.wait_group.read 0; ld.global.u32 %r3, [%rd2];",
        "cp.async.bulk.global.shared::cta.bulk_group [%rd2], [%r2], 256; cp.async.bulk.commit_group; "
        "cp.async.bulk.wait_group 0; ld.global.u32 %r3, [%rd2];"),
    "PTX-W-MBAR-INIT-FENCE": (
        "(warning) an mbarrier initialised by mbarrier.init is used (arrive, wait, expect_tx, TMA completion) "
        "with no fence.mbarrier_init, fence.proxy.async or barrier in between on some path",
        "mbarrier.init.shared.b64 [bar], 1; cp.async.bulk.tensor... [bar];",
        "mbarrier.init.shared.b64 [bar], 1; fence.mbarrier_init.release.cluster; bar.sync 0; "
        "cp.async.bulk.tensor... [bar];"),
    "PTX-W-MBAR-UNINIT": (
        "(warning) an mbarrier (a shared symbol) is used where no mbarrier.init of it can have run before",
        "mbarrier.arrive.shared.b64 %rd1, [bar];  // no mbarrier.init [bar] before",
        "mbarrier.init.shared.b64 [bar], 1; bar.sync 0; mbarrier.arrive.shared.b64 %rd1, [bar];"),
    "PTX-W-MBAR-TX": (
        "(warning) the constant expect_tx byte count of an mbarrier differs from the constant bytes of the bulk "
        "copies completing on it in the same basic block",
        "mbarrier.arrive.expect_tx.shared.b64 _, [bar], 2048; cp.async.bulk... [dst], [src], 4096, [bar];",
        "mbarrier.arrive.expect_tx.shared.b64 _, [bar], 4096; cp.async.bulk... [dst], [src], 4096, [bar];"),
    "PTX-W-MBAR-COUNT": (
        "(warning) a constant arrival count larger than the mbarrier's constant init count; or, with the block "
        "size known (.reqntid; .maxntid for too few), every thread arrives unconditionally and threads x the "
        "arrivals each makes between waits differ from the init count",
        "mbarrier.init.shared.b64 [bar], 1; mbarrier.arrive.shared.b64 %rd1, [bar], 2;",
        "mbarrier.init.shared.b64 [bar], 2; mbarrier.arrive.shared.b64 %rd1, [bar], 2;"),
    "PTX-W-MBAR-PARITY": (
        "(warning) mbarrier.try_wait.parity / test_wait.parity in a loop that does other work (copies, wgmma, "
        "arrives; not the retry loop around the wait) where the parity operand never changes across "
        "iterations while the same barrier (or a ring of barriers) is waited on again",
        "mov.u32 %r9, 0;\nL_k: ... mbarrier.try_wait.parity.shared.b64 %p1, [bar], %r9; ... @%p2 bra L_k;",
        "mov.u32 %r9, 0;\nL_k: ... mbarrier.try_wait.parity.shared.b64 %p1, [bar], %r9; ... "
        "xor.b32 %r9, %r9, 1; @%p2 bra L_k;"),
    "PTX-W-WARPGROUP-ALIGN": (
        "(warning) a warpgroup instruction (wgmma, setmaxnreg) under a guard or branch whose condition compares "
        "%tid.x (or %tid.x/32, the warp index) with constants and splits the threads at a whole warp that is "
        "not a multiple of 4 (128 threads): the warps that run it are not aligned warpgroups",
        "shr.u32 %r2, %r1, 5; setp.eq.u32 %p1, %r2, 0;  // %r1 = %tid.x\n@%p1 bra L_producer; "
        "wgmma.fence.sync.aligned;",
        "shr.u32 %r2, %r1, 7; setp.eq.u32 %p1, %r2, 0;  // a whole warpgroup produces\n@%p1 bra L_producer; "
        "wgmma.fence.sync.aligned;"),
    "PTX-W-DIVERGENT": (
        "(warning) a .sync.aligned collective (wgmma, setmaxnreg: per warpgroup; ldmatrix, stmatrix, mma.sync, "
        "wmma, elect.sync: per warp) under a guard or inside a branch whose condition can differ between the "
        "threads that must execute it together (derived from %tid/%laneid; %tid.x/32 is warp-uniform, "
        "%tid.x/128 warpgroup-uniform)",
        "setp.eq.u32 %p1, %r1, 0;  // %r1 = %tid.x\n@!%p1 bra L_skip; wgmma.fence.sync.aligned; L_skip:",
        "shr.u32 %r2, %r1, 7; setp.eq.u32 %p1, %r2, 0;\n@!%p1 bra L_skip; wgmma.fence.sync.aligned; L_skip:"),
}


def _codes_table() -> str:
    rows = ["| code | meaning | bad | good |", "| --- | --- | --- | --- |"]
    for code, (what, bad, good) in ASYNC_CODES.items():
        rows.append(f"| {code} | {what} | `{bad}` | `{good}` |".replace("\n", " \\n "))
    return "\n".join(rows)


__doc__ = (__doc__ or "") + "\n" + _codes_table() + "\n"

_ENDS = ("bra", "brx", "ret", "exit", "trap")
_MAX_GROUPS = 16


# ------------------------------------------------------------------------------------------------ CFG
class BasicBlock:
    """Instructions with one entry (the first) and one exit (the last); `succs` are block indices."""

    __slots__ = ("index", "instrs", "succs", "preds")

    def __init__(self, index: int):
        self.index = index
        self.instrs: List[Instr] = []
        self.succs: List[int] = []
        self.preds: List[int] = []

    def __repr__(self) -> str:
        return f"BasicBlock({self.index}, {len(self.instrs)} instrs, succs={self.succs})"


@functools.lru_cache(maxsize=4096)
def _canonical(opcode: str) -> str:
    """The PTX ISA's spelling of an opcode whose modifiers ptxas takes in another order (legality.canonical:
    `fence.proxy.shared::cta.async` is fence.proxy.async.shared::cta); any other opcode as written."""
    return legality.canonical(opcode) or opcode


def build_cfg(body) -> List[BasicBlock]:
    """Basic blocks of a function body; block 0 is the entry. Labels start blocks; bra/brx/ret/exit/trap
    end them. `{ }` scopes and pragmas are transparent. An instruction whose modifiers are in another order
    that ptxas takes is in the blocks as a copy with the PTX ISA's spelling, which the checks below match."""
    blocks: List[BasicBlock] = [BasicBlock(0)]
    label_block: Dict[str, int] = {}
    cur = blocks[0]
    for st in body:
        cls = type(st)
        if cls is LabelDef:
            if cur.instrs:
                nb = BasicBlock(len(blocks))
                blocks.append(nb)
                cur = nb
            label_block[st.label.name] = cur.index
        elif cls is Instr:
            op = _canonical(st.opcode)
            if op != st.opcode:
                st = dataclasses.replace(st, opcode=op)   # the same length: a finding's span is unchanged
            cur.instrs.append(st)
            if st.opcode.split(".", 1)[0] in _ENDS:
                nb = BasicBlock(len(blocks))
                blocks.append(nb)
                cur = nb
    n = len(blocks)
    for b in blocks:
        last = b.instrs[-1] if b.instrs else None
        base = last.opcode.split(".", 1)[0] if last is not None else ""
        fall = b.index + 1 < n
        succs: List[int] = []
        if base == "bra":
            tgt = next((o for o in last.operands if type(o) is Label), None)
            if tgt is not None and tgt.name in label_block:
                succs.append(label_block[tgt.name])
            elif tgt is None or tgt.name not in label_block:
                succs.extend(range(n))  # unknown target: anywhere (keeps the analysis sound)
            fall = fall and last.guard is not None
        elif base == "brx":
            succs.extend(sorted(set(label_block.values())))
            fall = fall and last.guard is not None
        elif base in ("ret", "exit", "trap"):
            fall = fall and last.guard is not None
        if fall:
            succs.append(b.index + 1)
        b.succs = sorted(set(succs))
        for s in b.succs:
            blocks[s].preds.append(b.index)
    return blocks


# ------------------------------------------------------------------------------------ operand helpers
def _regs(o, out: list):
    t = type(o)
    if t is Reg:
        out.append(o.name)
    elif t is Vec:
        for e in o.elems:
            _regs(e, out)
    elif t is Addr:
        if type(o.base) is Reg:
            out.append(o.base.name)
    elif t is Guard:
        out.append(o.reg.name)
    elif t is Pair:
        _regs(o.a, out)
        _regs(o.b, out)
    else:
        items = getattr(o, "items", None)  # parse.AddrList / CallArgs
        if isinstance(items, tuple):
            for e in items:
                _regs(e, out)


_READS_FIRST = frozenset(("st", "red", "bra", "call", "stmatrix", "wgmma", "prefetch"))  # a register first is read


def _writes_reads(ins: Instr) -> Tuple[List[str], List[str]]:
    """Register names an instruction writes and reads (the first operand is the destination when it is a
    register, a vector of registers or a `p|q` pair; memory operands are read)."""
    w: List[str] = []
    r: List[str] = []
    ops = ins.operands
    if ins.guard is not None:
        r.append(ins.guard.reg.name)
    if not ops:
        return w, r
    first = ops[0]
    tf = type(first)
    base = ins.opcode.split(".", 1)[0]
    if tf in (Reg, Vec, Pair) and base not in _READS_FIRST:
        _regs(first, w)
    else:
        _regs(first, r)
    for o in ops[1:]:
        _regs(o, r)
    return w, r


def _is_wgmma_mma(op: str) -> bool:
    return op.startswith("wgmma.mma_async")


def _mma_regs(ins: Instr) -> Tuple[FrozenSet[str], FrozenSet[str], bool]:
    """(accumulator registers, register-A registers, A is a descriptor) of a wgmma.mma_async."""
    acc: list = []
    ops = ins.operands
    if ops:
        _regs(ops[0], acc)
    a: list = []
    a_desc = True
    if len(ops) > 1 and type(ops[1]) is Vec:
        _regs(ops[1], a)
        a_desc = False
    return frozenset(acc), frozenset(a), a_desc


def _line(ins) -> Optional[int]:
    return ins.loc.line if ins.loc is not None else None


# ------------------------------------------------------------------------------------------ dataflow
def _solve(blocks: List[BasicBlock], entry_state, transfer, join, edge=None):
    """Forward worklist to a fixed point; returns the state at the entry of each reachable block.
    `edge(block, out_state, successor)` (optional) gives the state along one edge, None where the path
    cannot take it."""
    ins_state: List[object] = [None] * len(blocks)
    ins_state[0] = entry_state
    work = [0]
    queued = {0}
    steps = 0
    limit = 50 * len(blocks) + 1000
    while work and steps < limit:
        steps += 1
        i = work.pop()
        queued.discard(i)
        out = transfer(blocks[i], ins_state[i], None)
        for s in blocks[i].succs:
            o = out if edge is None else edge(blocks[i], out, s)
            if o is None:
                continue
            old = ins_state[s]
            new = o if old is None else join(old, o)
            if new != old:
                ins_state[s] = new
                if s not in queued:
                    queued.add(s)
                    work.append(s)
    return ins_state


class _Reporter:
    """Collects findings keyed by (code, instruction) so a loop's fixed point reports each once."""

    def __init__(self, add: Callable):
        self.add = add
        self.seen = set()

    def __call__(self, code: str, ins, message: str, notes=(), severity: str = "warning", key=None):
        key = (code, id(ins)) if key is None else (code, key)
        if key in self.seen:
            return
        self.seen.add(key)
        span = len(ins.opcode) if isinstance(ins, Instr) else 1
        self.add(code, message, ins.loc, tuple(notes), span, severity)


# -------------------------------------------------------------------------------------- 1. wgmma
# state: (unfenced: None = no wgmma.fence yet on some path, else frozenset of tracked registers written since
#          the last wgmma.fence, with the line of the first write),
#         pending: frozenset of accumulators of uncommitted mma_async,
#         groups: tuple of frozensets (committed groups, oldest first), may-union aligned at the newest)
def _wgmma_join(a, b):
    ua, pa, ga = a
    ub, pb, gb = b
    if ua is None or ub is None:
        u = None
    else:
        u = dict(ua)
        for k, v in ub.items():
            if k not in u or v < u[k]:
                u[k] = v
        u = _Frozen(u)
    n = max(len(ga), len(gb))
    ga2 = (frozenset(),) * (n - len(ga)) + ga
    gb2 = (frozenset(),) * (n - len(gb)) + gb
    return (u, pa | pb, tuple(x | y for x, y in zip(ga2, gb2)))


class _Frozen(dict):
    """A hashable dict (register -> line of its first write) for dataflow states."""

    def __hash__(self):
        return hash(frozenset(self.items()))

    def set(self, k, v):
        if k in self:
            return self
        d = _Frozen(self)
        d[k] = v
        return d


def _check_wgmma(blocks, report, is_entry: bool = True):
    tracked = set()
    for b in blocks:
        for ins in b.instrs:
            if _is_wgmma_mma(ins.opcode):
                acc, a, _ = _mma_regs(ins)
                tracked |= acc | a
    if not tracked:
        return

    def transfer(b, state, rep):
        unf, pending, groups = state
        for ins in b.instrs:
            op = ins.opcode
            if op.startswith("wgmma."):
                kind = op.split(".")[1]
                if kind == "fence":
                    unf = _Frozen()
                elif kind == "mma_async":
                    acc, a, _ = _mma_regs(ins)
                    if rep is not None:
                        if unf is None:
                            rep("PTX-W-WGMMA-FENCE", ins, "wgmma.mma_async with no wgmma.fence before it on some "
                                "path", ("issue wgmma.fence.sync.aligned before the first wgmma.mma_async and "
                                         "after writing its accumulators",))
                        else:
                            bad = sorted((r for r in (acc | a) if r in unf), key=lambda r: unf[r])
                            if bad:
                                rep("PTX-W-WGMMA-FENCE", ins,
                                    f"wgmma.mma_async reads {', '.join(bad[:4])}{' ...' if len(bad) > 4 else ''}, "
                                    f"written at line {unf[bad[0]]} after the last wgmma.fence",
                                    ("move wgmma.fence.sync.aligned after the writes, just before the "
                                     "wgmma.mma_async",))
                    if unf is None:
                        unf = _Frozen()
                    pending = pending | acc
                elif kind == "commit_group":
                    if pending:
                        groups = groups + (pending,)
                        if len(groups) > _MAX_GROUPS:
                            groups = (groups[0] | groups[1],) + groups[2:]
                    else:
                        groups = groups + (frozenset(),)
                        if len(groups) > _MAX_GROUPS:
                            groups = groups[1:]
                    pending = frozenset()
                elif kind == "wait_group":
                    n = next((o.value for o in ins.operands if type(o) is Imm), None)
                    if isinstance(n, int):
                        if rep is not None and n > 0 and len(groups) < n and is_entry:
                            rep("PTX-W-WGMMA-WAIT", ins, f"wgmma.wait_group {n} with at most {len(groups)} "
                                f"group{'s' if len(groups) != 1 else ''} in flight waits for nothing",
                                (f"wgmma.wait_group {max(len(groups) - 1, 0)} retires all but the newest "
                                 f"{max(len(groups) - 1, 0)}",), "note")
                        groups = groups[len(groups) - n:] if n < len(groups) else groups
                        if n == 0:
                            groups = ()
                continue
            w, r = _writes_reads(ins)
            if rep is not None and (pending or groups):
                touched = [x for x in w + r if x in pending or any(x in g for g in groups)]
                if touched:
                    x = touched[0]
                    if x in pending:
                        why = "its wgmma.mma_async is not even committed"
                        need = "wgmma.commit_group then wgmma.wait_group 0"
                    else:
                        k = next(i for i in range(len(groups)) if x in groups[len(groups) - 1 - i])
                        why = f"its group is still in flight ({k} newer group{'s' if k != 1 else ''} committed)"
                        need = f"wgmma.wait_group {k}"
                    what = "writes" if x in w else "reads"
                    rep("PTX-W-WGMMA-ACCESS", ins, f"{op} {what} accumulator {x} before wgmma.wait_group "
                        f"retires it: {why}", (f"insert {need} before this instruction",))
            if unf is not None:
                for x in w:
                    if x in tracked and x not in unf:
                        unf = unf.set(x, _line(ins) or 0)
            base = op.split(".", 1)[0]
            if base in ("ret", "exit") and rep is not None and pending and (is_entry or base == "exit"):
                rep("PTX-W-WGMMA-COMMIT", ins, f"{base} with wgmma.mma_async not committed on some path",
                    ("add wgmma.commit_group.sync.aligned and wgmma.wait_group.sync.aligned 0 before it",))
        return (unf, pending, groups)

    # a .func may run after its caller's wgmma.fence, and its caller may commit and wait for it
    states = _solve(blocks, (None if is_entry else _Frozen(), frozenset(), ()), transfer, _wgmma_join)
    for b, st in zip(blocks, states):
        if st is not None:
            transfer(b, st, report)


# ---------------------------------------------------------------------------------- 2. async proxy
def _shared_generic_write(op: str) -> bool:
    toks = op.split(".")
    base = toks[0]
    if base in ("st", "atom", "red") and any(t.startswith("shared") for t in toks[1:]):
        return "async" not in toks
    if base == "stmatrix":
        return True
    if base == "cp" and len(toks) > 1 and toks[1] == "async" and "shared" in " ".join(toks) \
            and not any(t in ("bulk", "commit_group", "wait_group", "wait_all", "mbarrier") for t in toks):
        return True
    return False


def _async_shared_read(op: str) -> Optional[str]:
    if _is_wgmma_mma(op):
        return "wgmma.mma_async (descriptor operands)"
    if op.startswith("cp.async.bulk") and ".global.shared" in op:
        return "a bulk/TMA copy from shared to global"
    if op.startswith("cp.reduce.async.bulk") and ".global.shared" in op:
        return "a bulk/TMA reduction from shared into global"
    return None


def _proxy_fence(op: str) -> bool:
    if op.startswith("fence.proxy.async"):
        rest = op[len("fence.proxy.async"):]
        return rest == "" or "shared" in rest
    return False


def _is_barrier(op: str) -> bool:
    toks = op.split(".")
    return (toks[0] in ("bar", "barrier") and ("sync" in toks or "red" in toks or "wait" in toks)) \
        or op.startswith("fence.mbarrier_init") or _proxy_fence(op)


# arithmetic that carries an address through (its result points where its operands point)
_ADDR_ARITH = frozenset(("mov", "cvt", "cvta", "add", "sub", "mul", "mad", "mul24", "mad24", "shl", "shr", "and",
                         "or", "xor", "not", "selp", "slct", "min", "max", "neg", "abs", "rem", "div", "bfe", "bfi",
                         "prmt", "mapa"))
_UNKNOWN = "?"


def _shared_origins(blocks, extern: FrozenSet[str]) -> Optional[Dict[str, FrozenSet[str]]]:
    """For each register, the shared symbols its value may be derived from (all `.extern .shared` arrays
    are one: they share the dynamic shared memory), over all its definitions; '?' marks values from loads
    and other instructions that may produce any address. None when the fixed point is not reached."""
    orig: Dict[str, FrozenSet[str]] = {}
    unknown = frozenset((_UNKNOWN,))
    defs = []
    for b in blocks:
        for ins in b.instrs:
            w, _ = _writes_reads(ins)
            if w:
                defs.append((ins, w))

    def of(o) -> FrozenSet[str]:
        t = type(o)
        if t is Reg:
            return orig.get(o.name, frozenset())
        if isinstance(o, Sym):
            return frozenset(("<dynamic shared>" if o.name in extern else o.name,))
        sym = getattr(o, "sym", None)
        if isinstance(sym, Sym):
            return of(sym)
        if t is Addr:
            return of(o.base)
        if t is Vec:
            return frozenset().union(*(of(e) for e in o.elems))
        return frozenset()

    for _round in range(12):
        changed = False
        for ins, w in defs:
            base = ins.opcode.split(".", 1)[0]
            if base in _ADDR_ARITH:
                src = frozenset().union(*(of(o) for o in ins.operands[1:]))
            else:
                src = unknown
            for x in w:
                cur = orig.get(x, frozenset())
                if not src <= cur:
                    orig[x] = cur | src
                    changed = True
        if not changed:
            return orig
    return None


def _address_keys(o, orig, extern: FrozenSet[str]) -> Optional[FrozenSet[str]]:
    """The shared symbols an address/descriptor operand can point into, None when unknown."""
    if orig is None or o is None:
        return None
    t = type(o)
    if t is Addr:
        o = o.base
        t = type(o)
    if t is Reg:
        k = orig.get(o.name, frozenset())
    else:
        sym = o if isinstance(o, Sym) else getattr(o, "sym", None)
        if not isinstance(sym, Sym):
            return None
        k = frozenset(("<dynamic shared>" if sym.name in extern else sym.name,))
    if not k or _UNKNOWN in k:
        return None
    return k


def _async_read_operands(ins: Instr) -> list:
    """The operands through which an async-proxy consumer reads shared memory: wgmma's descriptors (A only
    when it is one), a bulk store's shared source."""
    ops = ins.operands
    if _is_wgmma_mma(ins.opcode):
        return [o for o in ops[1:3] if type(o) is not Vec]
    return list(ops[1:2])


def _extern_shared(fn) -> FrozenSet[str]:
    names = set()
    vars_ = list(getattr(fn, "locals", None) or ()) + list(getattr(getattr(fn, "module", None), "vars", None) or ())
    vars_ += [st for st in (getattr(fn, "body", None) or ()) if type(st).__name__ == "Var"]
    for v in vars_:
        if getattr(v, "space", "") == "shared" and (getattr(v, "extern", False) or getattr(v, "linkage", "") == "extern"):
            names.add(v.name)
    return frozenset(names)


class _FnFacts:
    """What several checks of one function ask about it, computed once when first asked: which shared
    symbols registers point into (_shared_origins), the shared symbols it names, the single definition of
    each register (_defs)."""

    def __init__(self, blocks, fn):
        self.blocks = blocks
        self.extern = _extern_shared(fn)
        self._orig = False
        self._names = None
        self._defs = None

    def orig(self):
        if self._orig is False:
            self._orig = _shared_origins(self.blocks, self.extern)
        return self._orig

    def defs(self) -> Dict[str, Optional[Instr]]:
        if self._defs is None:
            self._defs = _defs(self.blocks)
        return self._defs

    def shared_names(self) -> FrozenSet[str]:
        """Every shared symbol an instruction names ('<dynamic shared>' for the .extern ones)."""
        if self._names is None:
            names = {"<dynamic shared>"}
            for b in self.blocks:
                for ins in b.instrs:
                    for o in ins.operands:
                        o = o.base if type(o) is Addr else getattr(o, "sym", o)
                        if isinstance(o, Sym) and o.space == "shared":
                            names.add(o.name)
            self._names = frozenset(names)
        return self._names


def _check_proxy(blocks, report, fn=None, fnf=None):
    consumers = any(_async_shared_read(i.opcode) for b in blocks for i in b.instrs)
    inits = any(i.opcode.startswith("mbarrier.init") for b in blocks for i in b.instrs)
    if not consumers and not inits:
        return
    fnf = fnf or _FnFacts(blocks, fn)
    orig = None
    extern = fnf.extern
    if consumers:
        orig = fnf.orig()

    # state: (generic shared writes not yet fenced: {shared symbol or None (unknown): line of the first},
    #         init not yet fenced: line or 0)
    def join(a, b):
        d = a[0]
        if b[0]:
            d = _Frozen(d)
            for k, v in b[0].items():
                if k not in d or v < d[k]:
                    d[k] = v
        return (d, min(x for x in (a[1], b[1]) if x) if (a[1] or b[1]) else 0)

    empty = _Frozen()
    published = []                  # (arrive, its unfenced writes {key: first line}) for PTX-W-PROXY-PUBLISH

    def transfer(b, state, rep):
        dirty, init = state
        for ins in b.instrs:
            op = ins.opcode
            if _proxy_fence(op):
                dirty = empty
            if _is_barrier(op):
                init = 0
            if _shared_generic_write(op):
                addr = next((o for o in ins.operands if type(o) is Addr), None)
                keys = _address_keys(addr, orig, extern)
                for k in (keys if keys is not None else (None,)):
                    dirty = dirty.set(k, _line(ins) or -1)
            what = _async_shared_read(op)
            if what is not None and dirty and rep is not None:
                reads = [_address_keys(o, orig, extern) for o in _async_read_operands(ins)]
                if not reads or any(r is None for r in reads):
                    hit = list(dirty.values())
                else:
                    rk = frozenset().union(*reads)
                    hit = [v for k, v in dirty.items() if k is None or k in rk]
                if hit:
                    first = min(hit, key=lambda v: (v < 0, v))
                    rep("PTX-W-PROXY-FENCE", ins, f"{what} reads shared memory written by generic-proxy "
                        f"stores{f' (line {first})' if first > 0 else ''} with no fence.proxy.async in between on "
                        "some path", ("insert fence.proxy.async.shared::cta after the stores (and a barrier if "
                                      "other threads wrote them)",))
            if dirty and rep is not None and op.startswith("mbarrier.arrive"):
                published.append((ins, dirty))
            if op.startswith("mbarrier.init"):
                init = _line(ins) or -1
            elif init and rep is not None and _mbar_use(op):
                rep("PTX-W-MBAR-INIT-FENCE", ins, f"mbarrier initialised{f' at line {init}' if init > 0 else ''} is used here with no "
                    f"fence.mbarrier_init, fence.proxy.async or barrier in between on some path",
                    ("after mbarrier.init: fence.mbarrier_init.release.cluster (or fence.proxy.async) and "
                     "bar.sync before other threads or the TMA unit use the barrier",), key=("init", init))
        return (dirty, init)

    states = _solve(blocks, (empty, 0), transfer, join)
    for b, st in zip(blocks, states):
        if st is not None:
            transfer(b, st, report)
    if published and consumers:
        _check_publish(blocks, published, orig, extern, report)


def _check_publish(blocks, published, orig, extern, report):
    """PTX-W-PROXY-PUBLISH: generic-proxy writes still unfenced at an mbarrier.arrive, where some path reads
    shared memory through the async proxy after an mbarrier wait (the other side of such a hand-off) from
    the same shared symbol (or one not traced to a symbol)."""
    def transfer(b, waited, rep):
        for ins in b.instrs:
            op = ins.opcode
            if op.startswith("mbarrier.") and any(w in op for w in _WAIT_KINDS):
                waited = True
            elif waited and rep is not None and _async_shared_read(op) is not None:
                rep(ins)
        return waited

    readers = []
    states = _solve(blocks, False, transfer, lambda a, b: a or b)
    for b, st in zip(blocks, states):
        if st is not None:
            transfer(b, st, readers.append)
    if not readers:
        return
    read_keys = set()
    for ins in readers:
        for o in _async_read_operands(ins):
            read_keys.add(_address_keys(o, orig, extern))
    reader = min(readers, key=lambda r: _line(r) or 0)
    for ins, dirty in published:        # the reporting pass visits each instruction once
        hit = [v for k, v in dirty.items()
               if k is None or None in read_keys or any(k in r for r in read_keys if r is not None)]
        if not hit:
            continue
        first = min(hit, key=lambda v: (v < 0, v))
        where = f" (line {_line(reader)})" if _line(reader) else ""
        report("PTX-W-PROXY-PUBLISH", ins,
               f"mbarrier.arrive hands over shared memory written by generic-proxy stores"
               f"{f' (line {first})' if first > 0 else ''} with no fence.proxy.async in between on some path; "
               f"{_async_shared_read(reader.opcode)} after an mbarrier wait{where} may read it without seeing them",
               ("insert fence.proxy.async.shared::cta after the stores, before the arrive",))


def _mbar_use(op: str) -> bool:
    if op.startswith("mbarrier."):
        kind = op.split(".")[1]
        return kind not in ("init", "inval", "pending_count")
    return "mbarrier::complete_tx" in op or op.startswith("cp.async.mbarrier.arrive")


# ----------------------------------------------------------------------------- 2b. bulk async-groups
# One thread's bulk async-groups (PTX ISA 9.0, 9.7.9.25.6): a cp{.reduce}.async.bulk{.tensor} with .bulk_group
# completion stays uncommitted until cp.async.bulk.commit_group batches every such copy of the thread into a
# new group (an empty one when there are none); cp.async.bulk.wait_group N waits until at most the N most
# recent groups are pending and the older ones complete: the tensor map and the source read, the destination
# written, the writes visible to the thread; with .read only until the older ones have read their tensor map
# and source. Every .bulk_group copy reads shared::cta memory and writes global memory (the copies into shared
# memory complete on an mbarrier, the prefetch forms take no completion mechanism), so they are followed as
# readers of shared memory until a wait lets them go.
#
# A record is one copy's read of one shared symbol: (symbol, or None when its address is not traced to one;
# the copy's index; its global destination (base, offset, bytes or None) when the copy names it by address
# and the register still holds it, else None; how far it is: 0 committed with no wait since, 1 left pending
# by a wait's count, 2 source read (.read), its writes not waited for). Uncommitted records leave out the
# last field. Sub-state: (uncommitted records, committed groups oldest first, aligned at the newest as for
# wgmma). State: {facts: sub-state}, where facts are predicate values the path has branched on (below).
_B_ISSUE, _B_COMMIT, _B_WAIT, _B_WRITE, _B_READ, _B_END, _B_CALL, _B_KILL = range(8)
_B_EMPTY = (frozenset(), ())
_MAX_PARTS = 8
_NOT_GLOBAL = frozenset(("shared", "local", "param", "const", "tex", "sreg"))
_STATE_SPACES = frozenset(("global", "shared", "local", "param", "const"))


def _is_bulk_group_copy(op: str) -> bool:
    return op.startswith(("cp.async.bulk.", "cp.reduce.async.bulk.")) and "bulk_group" in op.split(".")


def _bulk_what(op: str) -> str:
    """The copy's opcode up to its destination state space: `cp.async.bulk.tensor.2d`."""
    return op.split(".global", 1)[0]


def _bulk_shared_write(ins: Instr, toks: List[str], fnf: "_FnFacts") -> Optional[FrozenSet]:
    """The shared symbols (None: any) a generic-proxy write to this CTA's shared memory may write, None when
    the instruction is not one: st/atom/red .shared(::cta), stmatrix, cp.async into shared memory, and a
    st/atom/red through a generic address that is traced only to shared symbols. A write to .shared::cluster
    is left out: it may be another CTA's memory."""
    base = toks[0]
    if base not in ("st", "atom", "red", "stmatrix", "cp"):
        return None
    if "shared::cluster" in toks:
        return None
    if _shared_generic_write(ins.opcode):
        addr = next((o for o in ins.operands if type(o) is Addr), None)
        keys = _address_keys(addr, fnf.orig(), fnf.extern)
        return frozenset((None,)) if keys is None else keys
    if base in ("st", "atom", "red") and "async" not in toks \
            and not any(t.split("::", 1)[0] in _STATE_SPACES for t in toks[1:]):
        addr = next((o for o in ins.operands if type(o) is Addr), None)
        keys = _address_keys(addr, fnf.orig(), fnf.extern)
        if keys and keys <= fnf.shared_names():
            return keys
    return None


_PRED_DEFS = ("setp.", "and.pred", "or.pred", "not.pred", "mov.pred")


class _PredFacts:
    """Path sensitivity for predicates that several branches (or guards of bulk-group instructions) test:
    a path that branched on `@%p` knows %p until %p is written again, and takes no later edge that needs
    the other value. `if (elected) { copy; commit; } ... if (elected) wait_group;` then has no path that
    copies and skips the wait. Predicates are matched by value where that is plain: two setp of the same
    comparison of the same single-definition values are one predicate; and.pred/or.pred/not.pred/mov.pred
    and setp's .and/.or combine pass what one value says about their inputs on."""

    def __init__(self, blocks, sites, defs):
        self.defs = defs
        self._cls: Dict[str, object] = {}
        self.deps: Dict[str, set] = {}          # register -> classes whose value it goes into
        impl: Dict[Tuple[object, bool], List[Tuple[object, bool]]] = {}
        for name, ins in defs.items():
            if ins is None or ins.guard is not None or not ins.opcode.startswith(_PRED_DEFS):
                continue
            toks = ins.opcode.split(".")
            ops = ins.operands
            if toks[0] == "setp" and len(ops) == 4 and ("and" in toks or "or" in toks):
                c = self._lit(ops[3])
                if c is not None:
                    v = "and" in toks
                    dsts = [ops[0].a, ops[0].b] if type(ops[0]) is Pair else [ops[0]]
                    for d in dsts:
                        if type(d) is Reg and d.name == name:
                            impl.setdefault((self.cls(name), v), []).append((c[0], v ^ c[1]))
            elif len(toks) == 2 and toks[1] == "pred" and toks[0] in ("and", "or", "not", "mov") and len(ops) >= 2:
                lits = [self._lit(o) for o in ops[1:]]
                if any(x is None for x in lits):
                    continue
                me = self.cls(name)
                if toks[0] == "and":
                    impl.setdefault((me, True), []).extend((c, not n) for c, n in lits)
                elif toks[0] == "or":
                    impl.setdefault((me, False), []).extend((c, n) for c, n in lits)
                else:
                    c, n = lits[0]
                    flip = toks[0] == "not"
                    for v in (True, False):
                        impl.setdefault((me, v), []).append((c, v ^ flip ^ n))
        self.impl = impl
        count: Dict[object, int] = {}
        for g in sites:
            seen = set()
            for v in (True, False):
                todo = [(self.cls(g.reg.name), v)]
                while todo:
                    c, w = todo.pop()
                    if (c, w) in seen:
                        continue
                    seen.add((c, w))
                    todo.extend(impl.get((c, w), ()))
            for c in {c for c, _ in seen}:
                count[c] = count.get(c, 0) + 1
        # a flag set to a constant on one path and tested after the paths join (nvcc keeps `if (leader)` so)
        for b in blocks:
            for ins in b.instrs:
                if ins.opcode == "mov.pred" and len(ins.operands) == 2 and type(ins.operands[1]) is Imm \
                        and type(ins.operands[0]) is Reg:
                    c = self.cls(ins.operands[0].name)
                    if c in count:
                        count[c] += 1
        self.relevant = frozenset(c for c, n in count.items() if n >= 2)
        # what a write of each register makes the paths forget: its own predicate, unless that is a comparison of
        # values that are the same whenever it runs again, and the comparisons its value goes into
        self.kills: Dict[str, FrozenSet] = {}
        for name in set(self._cls).union(self.deps):
            ks = {c for c in self.deps.get(name, ()) if c in self.relevant}
            c = self.cls(name)
            if c in self.relevant and type(c) is not tuple:
                ks.add(c)
            if ks:
                self.kills[name] = frozenset(ks)
        self._learn: Dict[tuple, Optional[FrozenSet]] = {}

    def constant(self, ins: Instr):
        """(class, value) that an unguarded `mov.pred %p, 1` gives a relevant predicate, else None."""
        ops = ins.operands
        if ins.opcode == "mov.pred" and ins.guard is None and len(ops) == 2 and type(ops[1]) is Imm \
                and type(ops[0]) is Reg and self.cls(ops[0].name) in self.relevant:
            return (self.cls(ops[0].name), bool(ops[1].value))
        return None

    def _lit(self, o):
        """(class, negated) of a predicate operand `%p` or `!%p`."""
        if type(o) is Reg:
            return (self.cls(o.name), False)
        if type(o) is Guard:
            return (self.cls(o.reg.name), o.negate)
        return None

    def _val(self, o, depth=0):
        t = type(o)
        if t is Imm:
            return ("imm", o.value)
        if t.__name__ == "SpecialReg":
            return None if o.name.startswith(("%clock", "%globaltimer", "%pm")) else ("sreg", o.name)
        if t is Reg:
            ins = self.defs.get(o.name)
            if ins is None or ins.guard is not None:
                return None
            if depth < 4 and len(ins.operands) == 2 and ins.opcode.split(".", 1)[0] in ("mov", "cvt"):
                v = self._val(ins.operands[1], depth + 1)
                if v is not None:
                    return v
            return ("reg", o.name)
        return None

    def cls(self, name: str):
        c = self._cls.get(name)
        if c is None:
            c = name
            ins = self.defs.get(name)
            if ins is not None and ins.guard is None and ins.opcode.startswith("setp.") \
                    and len(ins.operands) == 3 and type(ins.operands[0]) is Reg:
                vals = [self._val(o) for o in ins.operands[1:]]
                if all(v is not None for v in vals):
                    c = ("setp", ins.opcode, tuple(vals))
                    for v in vals:
                        if v[0] == "reg":
                            self.deps.setdefault(v[1], set()).add(c)
            self._cls[name] = c
        return c

    def learn(self, facts: FrozenSet, c, v: bool) -> Optional[FrozenSet]:
        """facts with c == v and what it implies; None when they contradict."""
        key = (facts, c, v)
        if key in self._learn:
            return self._learn[key]
        out = set(facts)
        todo = [(c, v)]
        seen = set()
        res: Optional[FrozenSet] = None
        while todo:
            c, v = todo.pop()
            if (c, v) in seen:
                continue
            seen.add((c, v))
            if c in self.relevant:
                if (c, not v) in out:
                    break
                out.add((c, v))
            todo.extend(self.impl.get((c, v), ()))
        else:
            res = frozenset(out)
        self._learn[key] = res
        return res


def _bulk_join_sub(a, b):
    if a == b:
        return a
    ua, ga = a
    ub, gb = b
    n = max(len(ga), len(gb))
    e = frozenset()
    ga2 = (e,) * (n - len(ga)) + ga
    gb2 = (e,) * (n - len(gb)) + gb
    return (ua | ub, _bulk_norm(tuple(x | y for x, y in zip(ga2, gb2))))


def _bulk_norm(groups):
    """Groups without the empty ones at the old end (a wait's count never needs them), at most _MAX_GROUPS."""
    i = 0
    while i < len(groups) and not groups[i]:
        i += 1
    if i:
        groups = groups[i:]
    while len(groups) > _MAX_GROUPS:
        groups = (groups[0] | groups[1],) + groups[2:]
    return groups


def _bulk_parts_join(a: dict, b: dict) -> dict:
    if a == b:
        return a
    out = dict(a)
    for f, sub in b.items():
        old = out.get(f)
        out[f] = sub if old is None else _bulk_join_sub(old, sub)
    return _bulk_cap(out)


def _bulk_subsume(parts: dict) -> dict:
    """parts without those another part covers: one that knows less (its facts a subset) with a sub-state that
    already holds everything theirs does. The covering part's paths take every branch theirs would, with at
    least their records, so nothing is lost."""
    items = sorted(parts.items(), key=lambda kv: len(kv[0]))
    kept: List[tuple] = []
    for f, sub in items:
        if not any(g < f and _bulk_join_sub(sub, s) == s for g, s in kept):
            kept.append((f, sub))
    return dict(kept) if len(kept) < len(parts) else parts


def _bulk_cap(parts: dict) -> dict:
    """At most _MAX_PARTS parts: first those another covers go (no loss), then the facts of one predicate at a time
    are forgotten, each time the predicate whose forgetting joins the fewest different sub-states (ties: the
    one that leaves the fewest parts), so the facts that keep sub-states apart (an elected thread's predicate,
    a pending flag) are the last to go."""
    if len(parts) <= _MAX_PARTS:
        return parts
    parts = _bulk_subsume(parts)
    while len(parts) > _MAX_PARTS:
        best = None
        for c in sorted({c for f in parts for c, _v in f}, key=repr):
            merged: Dict[FrozenSet, set] = {}
            for f, sub in parts.items():
                merged.setdefault(frozenset(x for x in f if x[0] != c), set()).add(sub)
            score = (sum(len(subs) > 1 for subs in merged.values()), len(merged))
            if best is None or score < best[0]:
                best = (score, c)
        if best is None:
            break                   # unreachable: parts with the same facts are one part
        c = best[1]
        out: dict = {}
        for f, sub in parts.items():
            f = frozenset(x for x in f if x[0] != c)
            old = out.get(f)
            out[f] = sub if old is None else _bulk_join_sub(old, sub)
        parts = _bulk_subsume(out)
    return parts


def _live_facts(blocks, events, branch, pf: _PredFacts) -> List[FrozenSet]:
    """The predicate classes whose facts a path may still read at the entry of each block: a later guard of a
    bulk event or branch tests them (or a predicate whose value implies one of them, as and.pred's does)
    before a write makes the path forget them. A fact that no test can read only splits the paths, and so
    many paths (loop-local conditions, the flags of one round) would reach _MAX_PARTS, where they merge and
    forget the facts that are still needed (the elected thread's predicate, a pending flag)."""
    reads: Dict[object, FrozenSet] = {}

    def read_by(c) -> FrozenSet:
        r = reads.get(c)
        if r is None:
            seen = set()
            todo = [(c, True), (c, False)]
            while todo:
                x = todo.pop()
                if x not in seen:
                    seen.add(x)
                    todo.extend(pf.impl.get(x, ()))
            r = reads[c] = frozenset(x for x, _v in seen if x in pf.relevant)
        return r

    use: List[FrozenSet] = []
    kill: List[FrozenSet] = []
    for b in blocks:
        u: set = set()
        k: set = set()
        for kind, ins, arg in events[b.index]:
            if kind == _B_KILL:
                k |= arg[1]
            elif ins.guard is not None:
                u |= read_by(pf.cls(ins.guard.reg.name)) - k
        br = branch.get(b.index)
        if br is not None:
            u |= read_by(br[0]) - k
        use.append(frozenset(u))
        kill.append(frozenset(k))
    live = list(use)
    changed = True
    while changed:
        changed = False
        for b in reversed(blocks):
            out = frozenset().union(*(live[s] for s in b.succs)) if b.succs else frozenset()
            new = use[b.index] | (out - kill[b.index])
            if new != live[b.index]:
                live[b.index] = new
                changed = True
    return live


def _check_bulk(blocks, report, fn, fnf: _FnFacts):
    """PTX-W-BULK-ACCESS, -COMMIT, -WAIT, -VISIBLE: one thread's bulk async-groups (section note above)."""
    copies: List[Instr] = []
    for b in blocks:
        for ins in b.instrs:
            if _is_bulk_group_copy(ins.opcode):
                copies.append(ins)
    if not copies:
        return
    is_entry = getattr(fn, "is_entry", True)
    table = []                      # index -> (copy, what, destination)
    dest_regs = set()
    for ins in copies:
        dest = None
        op = ins.opcode
        ops = ins.operands
        if ".tensor" not in op and ops and type(ops[0]) is Addr and isinstance(ops[0].base, (Reg, Sym)):
            size = _const(ops[2], fnf.defs()) if len(ops) > 2 else None
            base = ops[0].base
            dest = (base.name, ops[0].offset, size)
            if type(base) is Reg:
                dest_regs.add(base.name)
        table.append((ins, _bulk_what(op), dest))
    index = {id(ins): i for i, (ins, _w, _d) in enumerate(table)}
    dest_bases = {d[0] for _i, _w, d in table if d is not None}

    # predicates that guard a bulk-group instruction or a forward branch over one (in the order of the
    # blocks: an if's body): where one is tested twice, the paths keep what they know of it (_PredFacts)
    sites = []
    before = [0]                    # blocks with a bulk-group instruction before each block
    for b in blocks:
        n = 0
        for ins in b.instrs:
            if id(ins) in index or ins.opcode.startswith(("cp.async.bulk.commit_group", "cp.async.bulk.wait_group")):
                n = 1
                if ins.guard is not None:
                    sites.append(ins.guard)
        before.append(before[-1] + n)
    for b in blocks:
        last = b.instrs[-1] if b.instrs else None
        if last is not None and last.guard is not None and last.opcode.split(".", 1)[0] == "bra" \
                and len(b.succs) == 2 and b.index + 1 in b.succs:
            taken = max(b.succs)
            if taken > b.index + 1 and before[taken] > before[b.index + 1]:
                sites.append(last.guard)
    pf = _PredFacts(blocks, sites, fnf.defs()) if len(sites) > 1 else None
    if pf is not None and not pf.relevant:
        pf = None
    kill_facts = pf.kills if pf is not None else {}

    # the events of each block, in order; instructions nothing here cares about are left out
    events: List[list] = []
    watched = dest_regs.union(kill_facts)       # registers whose writes matter
    for b in blocks:
        evs = []
        for ins in b.instrs:
            op = ins.opcode
            toks = op.split(".")
            base = toks[0]
            if base == "cp" and op.startswith("cp.async.bulk.commit_group"):
                evs.append((_B_COMMIT, ins, None))
            elif base == "cp" and op.startswith("cp.async.bulk.wait_group"):
                n = next((o.value for o in ins.operands if type(o) is Imm), None)
                evs.append((_B_WAIT, ins, (n if isinstance(n, int) and n >= 0 else 0, "read" in toks)))
            elif id(ins) in index:
                i = index[id(ins)]
                keys = _address_keys(ins.operands[1], fnf.orig(), fnf.extern) if len(ins.operands) > 1 else None
                d = table[i][2]
                evs.append((_B_ISSUE, ins, frozenset((k, i, d) for k in (keys if keys is not None else (None,)))))
            elif base in ("ret", "exit"):
                evs.append((_B_END, ins, base))
            elif base == "call":
                evs.append((_B_CALL, ins, None))
            else:
                keys = _bulk_shared_write(ins, toks, fnf)
                if keys is not None:
                    evs.append((_B_WRITE, ins, keys))
                elif dest_bases and base in ("ld", "ldu", "atom") and not any(t in _NOT_GLOBAL for t in toks):
                    a = next((o for o in ins.operands if type(o) is Addr), None)
                    if a is not None and getattr(a.base, "name", None) in dest_bases:
                        evs.append((_B_READ, ins, (a.base.name, a.offset)))
            if watched and ins.operands and type(ins.operands[0]) in (Reg, Vec, Pair) \
                    and base not in _READS_FIRST:
                w: list = []
                _regs(ins.operands[0], w)
                if watched.intersection(w):
                    regs = frozenset(x for x in w if x in dest_regs)
                    facts = frozenset().union(*(kill_facts[x] for x in w if x in kill_facts)) \
                        if kill_facts else frozenset()
                    if regs or facts:
                        evs.append((_B_KILL, ins, (regs, facts, pf.constant(ins) if facts else None)))
        events.append(evs)

    branch = {}                     # block -> (class, taken successor, value on the taken edge)
    if pf is not None:
        for b in blocks:
            last = b.instrs[-1] if b.instrs else None
            if last is not None and last.guard is not None and last.opcode.split(".", 1)[0] == "bra" \
                    and len(b.succs) == 2 and b.index + 1 in b.succs:
                taken = b.succs[0] if b.succs[1] == b.index + 1 else b.succs[1]
                branch[b.index] = (pf.cls(last.guard.reg.name), taken, not last.guard.negate)
    live = _live_facts(blocks, events, branch, pf) if pf is not None else None

    def newest_k(groups, gi):
        return len(groups) - 1 - gi

    def hits_of(sub, match, states):
        """(line, group position from the newest or -1 when uncommitted, state, copy index) of the records
        `match` accepts whose state is in `states` ('u' for uncommitted)."""
        unc, groups = sub
        out = []
        if "u" in states:
            for r in unc:
                if match(r):
                    out.append((_line(table[r[1]][0]) or 0, -1, "u", r[1]))
        for gi, g in enumerate(groups):
            for r in g:
                if r[3] in states and match(r):
                    out.append((_line(table[r[1]][0]) or 0, newest_k(groups, gi), r[3], r[1]))
        return out

    def first(hits):
        return min(hits, key=lambda h: (h[0] <= 0, h[0], h[1]))

    def at(i):
        ins, what, _d = table[i]
        ln = _line(ins)
        return f"{what} (line {ln})" if ln else what

    def do(kind, ins, arg, sub, rep):
        unc, groups = sub
        if kind == _B_ISSUE:
            return (unc | arg, groups)
        if kind == _B_COMMIT:
            g = frozenset((k, i, d, 0) for k, i, d in unc)
            return (frozenset(), _bulk_norm(groups + (g,)))
        if kind == _B_WAIT:
            n, read = arg
            if rep is not None and unc:
                i = min((r[1] for r in unc), key=lambda i: _line(table[i][0]) or 0)
                rep("PTX-W-BULK-COMMIT", ins, f"{ins.opcode} does not wait for {at(i)}: the copy is not committed to "
                    "a bulk async-group on some path, and a wait only counts committed groups",
                    ("insert cp.async.bulk.commit_group between the copy and the wait",), key=("copy", i))
            keep = len(groups) - n if n < len(groups) else 0
            old, new = groups[:keep], groups[keep:]
            new = tuple(frozenset((k, i, d, 1 if s == 0 else s) for k, i, d, s in g) for g in new)
            if read:
                old = tuple(frozenset((k, i, d, 2) for k, i, d, _s in g if d is not None) for g in old)
                return (unc, _bulk_norm(old + new))
            return (unc, _bulk_norm(new))
        if kind == _B_WRITE:
            if rep is not None and (unc or groups):
                keys = arg
                anywhere = None in keys

                def match(r):
                    return anywhere or r[0] is None or r[0] in keys
                hits = hits_of(sub, match, ("u", 0))
                if hits:
                    _ln, k, s, i = first(hits)
                    if s == "u":
                        why = "the copy is not committed yet, so no cp.async.bulk.wait_group covers it"
                        need = ("commit it with cp.async.bulk.commit_group, and insert cp.async.bulk.wait_group.read 0 "
                                "before this write")
                    else:
                        why = "no cp.async.bulk.wait_group has run since its group was committed"
                        need = (f"insert cp.async.bulk.wait_group.read {k} before this write"
                                + (f" (the {k} newer group{'s' if k != 1 else ''} may stay pending)" if k else ""))
                    # one finding per copy: its first write (a tile is written by many stores)
                    rep("PTX-W-BULK-ACCESS", ins, f"{ins.opcode} writes shared memory that {at(i)} may still be "
                        f"reading on some path: {why}", (need,), key=("copy", i))
            return sub
        if kind == _B_READ:
            if rep is not None and (unc or groups):
                name, off = arg

                def match(r):
                    d = r[2]
                    return d is not None and d[0] == name and (d[2] is None or d[1] - 32 < off < d[1] + d[2])
                hits = hits_of(sub, match, ("u", 0, 1, 2))
                if hits:
                    _ln, k, s, i = first(hits)
                    if s == 2:
                        why = ("after only cp.async.bulk.wait_group.read, which waits for the copy to read its "
                               "source, not for its writes")
                    elif s == "u":
                        why = "before the copy is even committed"
                    else:
                        why = "before any cp.async.bulk.wait_group has waited for its writes"
                    rep("PTX-W-BULK-VISIBLE", ins, f"{ins.opcode} reads global memory that {at(i)} writes, {why}: "
                        "it may read the old data", (f"insert cp.async.bulk.wait_group {max(k, 0)} (without .read) "
                                                     "before this load" if s != "u" else
                                                     "commit the copy with cp.async.bulk.commit_group, then "
                                                     "cp.async.bulk.wait_group 0 (without .read) before this load",))
            return sub
        if kind == _B_END:
            if rep is not None and (is_entry or arg == "exit"):
                if unc:
                    i = min((r[1] for r in unc), key=lambda i: _line(table[i][0]) or 0)
                    rep("PTX-W-BULK-COMMIT", ins, f"{arg} with {at(i)} not committed (cp.async.bulk.commit_group) on "
                        "some path", ("add cp.async.bulk.commit_group and cp.async.bulk.wait_group.read 0 before it",),
                        key=("copy", i))
                hits = hits_of(sub, lambda r: True, (0, 1))
                if hits:
                    _ln, k, s, i = first(hits)
                    why = ("no cp.async.bulk.wait_group has waited for its group" if s == 0 else
                           "the count of the last cp.async.bulk.wait_group lets its group stay pending")
                    rep("PTX-W-BULK-WAIT", ins, f"{arg} while {at(i)} may still be reading shared memory on some "
                        f"path: {why}; the CTA's shared memory must stay valid until the copy has read it",
                        ("insert cp.async.bulk.wait_group.read 0 before it (cp.async.bulk.wait_group 0 where this "
                         "thread must also see the copy's global writes)",))
            return sub
        if kind == _B_CALL:
            return _B_EMPTY         # the callee may commit and wait for the caller's copies
        if kind == _B_KILL:
            regs = arg[0]
            if not regs:
                return sub
            unc = frozenset((k, i, None if d is not None and d[0] in regs else d) for k, i, d in unc)
            groups = tuple(frozenset((k, i, None if d is not None and d[0] in regs else d, s) for k, i, d, s in g
                                     if not (s == 2 and d is not None and d[0] in regs)) for g in groups)
            return (unc, _bulk_norm(groups))
        return sub

    def apply(ev, f, sub, rep, out):
        kind, ins, arg = ev
        if kind == _B_KILL:
            if arg[1]:
                f = frozenset(x for x in f if x[0] not in arg[1])
                if arg[2] is not None:
                    f = pf.learn(f, *arg[2]) or f
            out.append((f, do(kind, ins, arg, sub, rep)))
            return
        g = ins.guard
        if g is not None and pf is not None:
            c = pf.cls(g.reg.name)
            if c in pf.relevant:
                want = not g.negate
                known = True if (c, True) in f else False if (c, False) in f else None
                if known is not None:
                    if known != want:
                        out.append((f, sub))
                        return
                elif kind in (_B_ISSUE, _B_COMMIT, _B_WAIT, _B_CALL):
                    f0 = pf.learn(f, c, not want)
                    if f0 is not None:
                        out.append((f0, sub))
                    f1 = pf.learn(f, c, want)
                    if f1 is not None:
                        out.append((f1, do(kind, ins, arg, sub, rep)))
                    return
        out.append((f, do(kind, ins, arg, sub, rep)))

    def transfer(b, parts, rep):
        for ev in events[b.index]:
            out = []
            for f, sub in parts.items():
                apply(ev, f, sub, rep, out)
            if len(out) == 1:
                parts = {out[0][0]: out[0][1]}
            else:
                parts = {}
                for f, sub in out:
                    old = parts.get(f)
                    parts[f] = sub if old is None else _bulk_join_sub(old, sub)
                parts = _bulk_cap(parts)
        return parts

    def edge(b, out, s):
        br = branch.get(b.index)
        keep = live[s]
        parts = {}
        for f, sub in out.items():
            if br is not None:
                c, taken, v = br
                f = pf.learn(f, c, v if s == taken else not v)
                if f is None:
                    continue
            # what no later test can read is forgotten: the paths that differ only in it are one
            f = frozenset(x for x in f if x[0] in keep)
            old = parts.get(f)
            parts[f] = sub if old is None else _bulk_join_sub(old, sub)
        return _bulk_cap(parts) if parts else None

    states = _solve(blocks, {frozenset(): _B_EMPTY}, transfer, _bulk_parts_join, edge if pf is not None else None)
    for b, st in zip(blocks, states):
        if st is not None:
            transfer(b, st, report)


# -------------------------------------------------------------------------------------- 3. mbarrier
def _defs(blocks):
    """name -> the only instruction that writes it (None when written more than once)."""
    d: Dict[str, Optional[Instr]] = {}
    for b in blocks:
        for ins in b.instrs:
            w, _ = _writes_reads(ins)
            for x in w:
                d[x] = None if x in d else ins
    return d


def _resolve_sym(o, defs, depth=0) -> Optional[Tuple[str, int]]:
    """The (symbol, byte offset) an address or register operand names, when it is statically known."""
    if depth > 4:
        return None
    t = type(o)
    if t is Addr:
        base = _resolve_sym(o.base, defs, depth + 1)
        return (base[0], base[1] + o.offset) if base else None
    if isinstance(o, Sym):
        return (o.name, 0)
    if hasattr(o, "sym") and hasattr(o, "offset") and isinstance(getattr(o, "sym"), Sym):  # parse.SymOffset
        return (o.sym.name, o.offset)
    if t is Reg:
        ins = defs.get(o.name)
        if ins is None or len(ins.operands) < 2:
            return None
        base = ins.opcode.split(".", 1)[0]
        if base in ("mov", "cvta"):
            return _resolve_sym(ins.operands[1], defs, depth + 1)
        if base == "add" and len(ins.operands) == 3 and type(ins.operands[2]) is Imm \
                and isinstance(ins.operands[2].value, int):
            s = _resolve_sym(ins.operands[1], defs, depth + 1)
            return (s[0], s[1] + ins.operands[2].value) if s else None
    return None


def _const(o, defs) -> Optional[int]:
    if type(o) is Imm and isinstance(o.value, int):
        return o.value
    if type(o) is Reg:
        ins = defs.get(o.name)
        if ins is not None and ins.opcode.startswith("mov") and len(ins.operands) == 2 \
                and type(ins.operands[1]) is Imm and isinstance(ins.operands[1].value, int):
            return ins.operands[1].value
    return None


def _mbar_operand(ins: Instr):
    """The mbarrier address operand of an mbarrier op or a bulk copy that completes on one."""
    op = ins.opcode
    if op.startswith("mbarrier."):
        return next((o for o in ins.operands if type(o) is Addr), None)
    if "mbarrier::complete_tx" in op or op.startswith("cp.async.mbarrier.arrive"):
        addrs = [o for o in ins.operands if type(o) is Addr]
        return addrs[-1] if addrs else None
    return None


def _copy_bytes(ins: Instr, defs, box_bytes: Mapping[str, int]) -> Optional[int]:
    op = ins.opcode
    if op.startswith("cp.async.bulk.tensor"):
        if len(ins.operands) < 2:
            return None
        src = ins.operands[1]
        items = getattr(src, "items", None)
        tmap = items[0] if isinstance(items, tuple) and items else None
        s = _resolve_sym(tmap, defs) if tmap is not None else None
        if s is None:
            return None
        for k, v in box_bytes.items():
            if s[0] == k or s[0].endswith("_param_" + k) or s[0].endswith("_" + k):
                return v
        return None
    if op.startswith("cp.async.bulk") and len(ins.operands) >= 3:
        return _const(ins.operands[2], defs)
    return None


def _check_mbarrier(blocks, report, is_entry: bool, box_bytes: Mapping[str, int], threads=None, defs=None):
    defs = _defs(blocks) if defs is None else defs
    uses = []  # (block index, position, instr, symbol)
    for b in blocks:
        for i, ins in enumerate(b.instrs):
            a = _mbar_operand(ins)
            if a is None:
                continue
            s = _resolve_sym(a, defs)
            if s is not None:
                uses.append((b.index, i, ins, s))
    if not uses:
        return
    init_count: Dict[Tuple[str, int], Optional[int]] = {}
    for _bi, _i, ins, s in uses:
        if ins.opcode.startswith("mbarrier.init") and len(ins.operands) >= 2:
            c = _const(ins.operands[1], defs)
            init_count[s] = c if s not in init_count or init_count[s] == c else None

    # use before init: a may-analysis of which barriers some path has initialised; an init whose address is
    # not known (a loop over an array of barriers) could be any barrier, so then the check is off
    by_instr = {id(ins): s for _bi, _i, ins, s in uses}
    all_known = all(id(ins) in by_instr for b in blocks for ins in b.instrs if ins.opcode.startswith("mbarrier.init"))
    is_entry = is_entry and all_known

    def transfer(b, state, rep):
        for ins in b.instrs:
            s = by_instr.get(id(ins))
            if s is None:
                continue
            if ins.opcode.startswith("mbarrier.init"):
                state = state | {s}
            elif rep is not None and s not in state and is_entry and _mbar_use(ins.opcode):
                rep("PTX-W-MBAR-UNINIT", ins, f"mbarrier {s[0]}{'+%d' % s[1] if s[1] else ''} is used before any "
                    "mbarrier.init of it", ("initialise it (mbarrier.init, then a fence and a barrier) first",))
        return state

    states = _solve(blocks, frozenset(), transfer, lambda a, b: a | b)
    for b, st in zip(blocks, states):
        if st is not None:
            transfer(b, st, report)

    # arrival counts against the init count
    over = set()
    for _bi, _i, ins, s in uses:
        op = ins.opcode
        if op.startswith("mbarrier.arrive") and init_count.get(s):
            addr_i = next(k for k, o in enumerate(ins.operands) if type(o) is Addr)
            rest = ins.operands[addr_i + 1:]
            if "expect_tx" in op:
                rest = rest[1:]
            if rest:
                c = _const(rest[0], defs)
                if c is not None and c > init_count[s]:
                    over.add(s)
                    report("PTX-W-MBAR-COUNT", ins, f"arrive with count {c} on an mbarrier initialised with "
                           f"count {init_count[s]}: the phase completes early or the count underflows",
                           ("arrive counts per phase must add up to the count given to mbarrier.init",))

    if threads is not None and is_entry:
        _check_arrival_totals(blocks, report, uses, init_count, defs, threads, over)

    # expect_tx bytes against the bulk copies completing on the barrier, per basic block
    for b in blocks:
        expect: Dict[Tuple[str, int], list] = {}
        copies: Dict[Tuple[str, int], list] = {}
        for ins in b.instrs:
            s = by_instr.get(id(ins))
            if s is None:
                continue
            op = ins.opcode
            if op.startswith("mbarrier.") and "expect_tx" in op:
                addr_i = next(k for k, o in enumerate(ins.operands) if type(o) is Addr)
                tx = ins.operands[addr_i + 1] if addr_i + 1 < len(ins.operands) else None
                expect.setdefault(s, []).append((ins, _const(tx, defs) if tx is not None else None))
            elif "mbarrier::complete_tx" in op and op.startswith("cp."):
                copies.setdefault(s, []).append((ins, _copy_bytes(ins, defs, box_bytes)))
        if any("multicast" in ins.opcode for ins in b.instrs):
            continue  # other CTAs of the cluster deliver bytes to this barrier too
        for s, ex in expect.items():
            cp = copies.get(s)
            if not cp or any(v is None for _, v in ex) or any(v is None for _, v in cp):
                continue
            want = sum(v for _, v in ex)
            got = sum(v for _, v in cp)
            if want != got:
                report("PTX-W-MBAR-TX", ex[0][0], f"expect_tx announces {want} bytes but the bulk copies "
                       f"completing on this mbarrier in this block bring {got}",
                       ("the phase never completes (too many) or completes before the data lands (too few)",))


def _block_dims(directives) -> Optional[Tuple[Tuple[int, int, int], bool]]:
    """((x, y, z) threads per CTA, exact) from `.reqntid` (exact) or `.maxntid` (an upper bound), else None."""
    found = None
    for d in directives or ():
        toks = d.replace(",", " ").split()
        if not toks or toks[0] not in (".reqntid", ".maxntid"):
            continue
        try:
            dims = [int(t, 0) for t in toks[1:4]]
        except ValueError:
            continue
        if not dims or any(x <= 0 for x in dims):
            continue
        dims3 = (tuple(dims) + (1, 1))[:3]
        if toks[0] == ".reqntid":
            return (dims3, True)
        found = (dims3, False)
    return found


def _arrive_count(ins: Instr, defs) -> Optional[int]:
    """Arrivals one thread makes with this mbarrier.arrive (its count operand, 1 without one)."""
    addr_i = next((k for k, o in enumerate(ins.operands) if type(o) is Addr), None)
    if addr_i is None:
        return None
    rest = ins.operands[addr_i + 1:]
    if "expect_tx" in ins.opcode:
        rest = rest[1:]
    return _const(rest[0], defs) if rest else 1


def _check_arrival_totals(blocks, report, uses, init_count, defs, threads, over):
    """Arrivals per phase against a constant init count, where every thread of the CTA makes every arrive on
    the barrier (no guard, outside branches that differ between threads): threads x the arrives each thread
    makes between two waits on it. With `.maxntid` only, fewer arrivals than the init count are certain."""
    n_threads, exact = threads
    cands = {s for s, c in init_count.items() if c and s not in over}
    if not cands:
        return
    for b in blocks:
        for ins in b.instrs:
            op = ins.opcode
            base = op.split(".", 1)[0]
            if base in ("mapa", "call") or (base in ("ret", "exit") and ins.guard is not None):
                return  # other CTAs or a callee may arrive too; a guarded exit may leave threads out
            if (op.startswith(("mbarrier.arrive", "cp.async.mbarrier.arrive"))) and _mbar_operand(ins) is not None \
                    and _resolve_sym(_mbar_operand(ins), defs) is None:
                return  # an arrive on an unknown barrier may be on any of them
    by_sym: Dict[Tuple[str, int], List[Tuple[int, Instr]]] = {}
    for bi, _i, ins, s in uses:
        if s in cands:
            by_sym.setdefault(s, []).append((bi, ins))
    var = region = None
    for s, lst in by_sym.items():
        arrives = [(bi, ins) for bi, ins in lst if ins.opcode.startswith("mbarrier.arrive")]
        waits = [ins for _bi, ins in lst if ins.opcode.split(".")[1] in _WAIT_KINDS + ("wait",)]
        if not arrives or not waits or any(ins.opcode.startswith(("cp.async.mbarrier", "mbarrier.arrive_drop"))
                                           or "arrive_drop" in ins.opcode for _bi, ins in lst):
            continue
        if any(ins.guard is not None for _bi, ins in arrives):
            continue
        counts = {id(ins): _arrive_count(ins, defs) for _bi, ins in arrives}
        if any(c is None for c in counts.values()):
            continue
        if var is None:
            var = _variances(blocks)
            region, complete = _divergent_regions(blocks, var)
            if not complete:
                return
        if any(bi in region for bi, _ins in arrives):
            continue
        kinds = {id(ins): ("a", counts[id(ins)]) for _bi, ins in arrives}
        kinds.update({id(ins): ("w", 0) for ins in waits})
        seen_at_wait: set = set()
        unknown = frozenset((-1,))

        def transfer(b, state, rep, kinds=kinds, seen_at_wait=seen_at_wait):
            for ins in b.instrs:
                k = kinds.get(id(ins))
                if k is None:
                    continue
                if k[0] == "a":
                    state = unknown if -1 in state else frozenset(v + k[1] for v in state)
                else:
                    if rep is not None:
                        seen_at_wait.update(v for v in state if v)
                    state = frozenset((0,))
            if -1 not in state and (len(state) > 4 or max(state, default=0) > 1 << 16):
                state = unknown
            return state

        def join(a, b):
            u = a | b
            return unknown if -1 in u or len(u) > 4 else u

        states = _solve(blocks, frozenset((0,)), transfer, join)
        for b, st in zip(blocks, states):
            if st is not None:
                transfer(b, st, True)
        if len(seen_at_wait) != 1 or -1 in seen_at_wait:
            continue
        per_thread = next(iter(seen_at_wait))
        total = n_threads * per_thread
        want = init_count[s]
        if total == want or (not exact and total > want):
            continue
        init = next((ins for _bi, ins in lst if ins.opcode.startswith("mbarrier.init")), None)
        if init is None:
            continue
        name = f"{s[0]}{'+%d' % s[1] if s[1] else ''}"
        how = f"{'.reqntid' if exact else 'at most (.maxntid)'} {n_threads} threads"
        report("PTX-W-MBAR-COUNT", init, f"mbarrier {name} is initialised with count {want}, but every phase gets "
               f"{total} arrivals ({how} x {per_thread} arrival{'s' if per_thread != 1 else ''} each between "
               f"waits): the phase {'completes early' if total > want else 'never completes'}",
               (f"initialise it with count {total}" + (f", or let only {want // per_thread} threads arrive"
                                                          if want % per_thread == 0 else ""),))


# ------------------------------------------------------------------------------ 3b. phase parity in loops
def _dominators(blocks):
    """Bitset of the dominators of each block (block 0 is the entry; unreachable blocks keep all bits)."""
    n = len(blocks)
    full = (1 << n) - 1
    dom = [full] * n
    dom[0] = 1
    changed = True
    rounds = 0
    while changed and rounds < 4 * n + 10:
        changed = False
        rounds += 1
        for b in blocks[1:]:
            acc = full
            for p in b.preds:
                acc &= dom[p]
            new = acc | (1 << b.index)
            if new != dom[b.index]:
                dom[b.index] = new
                changed = True
    return dom


def _natural_loops(blocks, dom) -> List[Tuple[int, FrozenSet[int], Tuple[int, ...]]]:
    """(header, body blocks, latches) of each natural loop (back edges to one header merged), smallest first."""
    latches: Dict[int, List[int]] = {}
    for b in blocks:
        for s in b.succs:
            if dom[b.index] >> s & 1:
                latches.setdefault(s, []).append(b.index)
    loops = []
    for h, ls in latches.items():
        body = {h}
        work = [x for x in ls if x != h]
        body.update(work)
        while work:
            x = work.pop()
            for p in blocks[x].preds:
                if p not in body:
                    body.add(p)
                    work.append(p)
        loops.append((h, frozenset(body), tuple(ls)))
    loops.sort(key=lambda t: len(t[1]))
    return loops


_WAIT_KINDS = ("try_wait", "test_wait")


def _is_parity_wait(op: str) -> bool:
    toks = op.split(".")
    return len(toks) > 2 and toks[0] == "mbarrier" and toks[1] in _WAIT_KINDS and "parity" in toks


def _is_loop_work(op: str) -> bool:
    """An instruction that makes a loop more than a retry loop around an mbarrier wait (which only spins,
    reads %clock, sleeps or traps)."""
    base = op.split(".", 1)[0]
    if base == "mbarrier":
        return op.split(".")[1] not in _WAIT_KINDS + ("wait",)
    return base in ("ld", "st", "cp", "wgmma", "mma", "wmma", "ldmatrix", "stmatrix", "atom", "red", "bar",
                    "barrier", "call", "tcgen05", "tensormap", "movmatrix")


def _wait_operands(ins: Instr):
    """(mbarrier address, parity operand) of an mbarrier.try_wait.parity / test_wait.parity."""
    addr_i = next((k for k, o in enumerate(ins.operands) if type(o) is Addr), None)
    if addr_i is None or addr_i + 1 >= len(ins.operands):
        return None, None
    return ins.operands[addr_i], ins.operands[addr_i + 1]


def _same_operand(a, b) -> bool:
    ta = type(a)
    if ta is not type(b):
        return False
    if ta is Imm:
        return a.value == b.value
    if ta is Addr:
        return a.offset == b.offset and _same_operand(a.base, b.base)
    name = getattr(a, "name", None)
    if name is not None:
        return name == getattr(b, "name", None)
    return str(a) == str(b)


def _wraps(reg: str, defs_in_loop: Dict[str, List[Instr]], depth: int = 0, seen=None) -> bool:
    """Whether a register written in the loop is computed there through a ring-index wrap (rem, and with
    2^k-1, selp, min, a reset to a constant) from its loop-carried inputs: the loop goes round a ring of
    barriers."""
    seen = set() if seen is None else seen
    if depth > 6 or reg in seen:
        return False
    seen.add(reg)
    for ins in defs_in_loop.get(reg, ()):
        base = ins.opcode.split(".", 1)[0]
        if base in ("rem", "selp", "min"):
            return True
        if base == "mov" and len(ins.operands) == 2 and type(ins.operands[1]) is Imm:
            return True  # reset to a constant in the loop (`@%p mov.u32 %stage, 0;` when the ring wraps)
        if base == "and" and any(type(o) is Imm and isinstance(o.value, int) and o.value > 0
                                 and (o.value + 1) & o.value == 0 for o in ins.operands[1:]):
            return True
        _, r = _writes_reads(ins)
        if any(_wraps(x, defs_in_loop, depth + 1, seen) for x in r if x in defs_in_loop):
            return True
    return False


def _invariant_in_loop(written: Dict[str, List[Instr]]) -> FrozenSet[str]:
    """Registers written in a loop whose value is nevertheless the same every iteration: one unguarded
    arithmetic definition there whose register operands are not written in the loop or are such too."""
    inv: set = set()
    changed = True
    while changed:
        changed = False
        for x, ds in written.items():
            if x in inv or len(ds) != 1 or ds[0].guard is not None:
                continue
            ins = ds[0]
            if ins.opcode.split(".", 1)[0] not in _ADDR_ARITH:
                continue
            ok = True
            for o in ins.operands[1:]:
                if type(o).__name__ == "SpecialReg" and o.name.startswith(("%clock", "%globaltimer")):
                    ok = False
                _r: list = []
                _regs(o, _r)
                if any(r in written and r not in inv for r in _r):
                    ok = False
            if ok:
                inv.add(x)
                changed = True
    return frozenset(inv)


def _check_parity(blocks, report):
    waits = [(b, ins) for b in blocks for ins in b.instrs if _is_parity_wait(ins.opcode)]
    if not waits:
        return
    dom = _dominators(blocks)
    loops = _natural_loops(blocks, dom)
    if not loops:
        return
    cache: Dict[int, tuple] = {}

    def loop_facts(k):
        if k not in cache:
            _h, body, _l = loops[k]
            written: Dict[str, List[Instr]] = {}
            work = reinit = False
            for i in body:
                for ins in blocks[i].instrs:
                    op = ins.opcode
                    work = work or _is_loop_work(op)
                    reinit = reinit or op.startswith(("mbarrier.init", "mbarrier.inval"))
                    for x in _writes_reads(ins)[0]:
                        written.setdefault(x, []).append(ins)
            cache[k] = (work, reinit, written, _invariant_in_loop(written))
        return cache[k]

    for b, ins in waits:
        addr, parity = _wait_operands(ins)
        if addr is None or type(parity) not in (Imm, Reg):
            continue
        for k, (_h, body, latches) in enumerate(loops):
            if b.index not in body:
                continue
            work, reinit, written, inv = loop_facts(k)
            if not work:
                continue  # a retry loop around the wait: its parity is rightly the same every time round
            if type(parity) is Reg and parity.name in written and parity.name not in inv:
                break  # the parity changes in this loop (and so in every loop around it)
            if reinit or not all(dom[x] >> b.index & 1 for x in latches):
                break  # the barrier is initialised again, or the wait does not run on every iteration
            # another wait in the loop on the same barrier with another parity: two phases per iteration
            if any(_is_parity_wait(o.opcode) and o is not ins and _same_operand(_wait_operands(o)[0], addr)
                   and not _same_operand(_wait_operands(o)[1], parity)
                   for i in body for o in blocks[i].instrs):
                break
            base = addr.base
            if type(base) is Reg and base.name in written and base.name not in inv:
                if not _wraps(base.name, written):
                    break  # a different barrier each iteration, not known to come round again
                where = "the same ring of barriers comes round again"
            else:
                where = "the loop waits on the same barrier every iteration"
            what = f"parity {parity.value}" if type(parity) is Imm else f"parity register {parity.name}"
            hl = blocks[_h].instrs[0] if blocks[_h].instrs else None
            at = f" at line {hl.loc.line}" if hl is not None and hl.loc is not None else ""
            report("PTX-W-MBAR-PARITY", ins, f"{ins.opcode} inside a loop{at} with {what}, which the loop never "
                   f"changes, but {where}: from the second round on the wait passes on an old phase (or "
                   "hangs)", ("flip the phase bit when the ring wraps (xor.b32 %phase, %phase, 1), or "
                              "derive it from the iteration (k / stages) & 1",))
            break


# ------------------------------------------------------------------------------------ 4. convergence
# how far a value can differ: the same in the CTA, per warpgroup, per warp, per thread
_U, _WG, _W, _T = 0, 1, 2, 3
_LEVEL_NAME = {_WG: "differ between warpgroups", _W: "differ between warps", _T: "differ between threads"}
_UNIFORM_SREGS = ("%ctaid", "%nctaid", "%ntid", "%nctarank", "%cluster", "%nclusterid", "%is_explicit_cluster",
                  "%dynamic_smem_size", "%total_smem_size", "%gridid", "%envreg", "%nwarpid", "%nsmid")
_WARPGROUP_OPS = ("wgmma", "setmaxnreg")
_WARP_OPS = ("ldmatrix", "stmatrix", "mma", "wmma", "elect", "movmatrix")


def _collective(op: str) -> int:
    """The variance a guard/branch may have around this instruction without breaking it (-1: not one)."""
    base = op.split(".", 1)[0]
    if base in _WARPGROUP_OPS:
        return _W
    if base in _WARP_OPS and (".sync" in op):
        return _T
    return -1


def _sreg_level(name: str) -> int:
    if name.startswith(_UNIFORM_SREGS):
        return _U
    if name == "%warpid":
        return _W
    return _T


_CMP_FLIP = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le", "eq": "eq", "ne": "ne",
             "lo": "hi", "hi": "lo", "ls": "hs", "hs": "ls"}


def _tid_scale(o, defs, depth=0) -> Optional[int]:
    """s when the operand is floor(%tid.x / s) (%tid.x itself: 1), through single definitions."""
    if type(o).__name__ == "SpecialReg":
        return 1 if o.name == "%tid.x" else None
    if type(o) is not Reg or depth > 6:
        return None
    ins = defs.get(o.name)
    if ins is None or ins.guard is not None:
        return None
    ops = ins.operands
    base = ins.opcode.split(".", 1)[0]
    if base in ("mov", "cvt") and len(ops) == 2:
        return _tid_scale(ops[1], defs, depth + 1)
    if base in ("shr", "div") and len(ops) == 3 and type(ops[2]) is Imm and isinstance(ops[2].value, int) \
            and ops[2].value >= 0 and (base == "shr" and ops[2].value < 31 or base == "div" and ops[2].value > 0):
        inner = _tid_scale(ops[1], defs, depth + 1)
        if inner is None:
            return None
        return inner * ((1 << ops[2].value) if base == "shr" else ops[2].value)
    return None


def _tid_bounds(blocks, xdim: Optional[int] = None) -> Dict[str, FrozenSet[int]]:
    """Predicates that compare floor(%tid.x / s) with a constant (and and/or/xor/not of them), each with the
    %tid.x values where it changes (inside 0 < t < xdim): decidable from constants."""
    defs = _defs(blocks)
    out: Dict[str, FrozenSet[int]] = {}
    memo: Dict[str, Optional[FrozenSet[int]]] = {}

    def of(name: str, depth=0) -> Optional[FrozenSet[int]]:
        if name in memo:
            return memo[name]
        memo[name] = None
        ins = defs.get(name)
        res = None
        if ins is not None and ins.guard is None and depth < 8:
            toks = ins.opcode.split(".")
            ops = ins.operands
            if toks[0] == "setp" and len(toks) >= 3 and len(ops) == 3 and toks[1] in _CMP_FLIP:
                cmp, a, b = toks[1], ops[1], ops[2]
                if type(a) is not Reg and type(a).__name__ != "SpecialReg":
                    a, b, cmp = b, a, _CMP_FLIP[cmp]
                sc = _tid_scale(a, defs)
                c = _const(b, defs)
                if sc is not None and c is not None:
                    vs = {"lt": (c,), "ge": (c,), "lo": (c,), "hs": (c,), "le": (c + 1,), "gt": (c + 1,),
                          "ls": (c + 1,), "hi": (c + 1,), "eq": (c, c + 1), "ne": (c, c + 1)}[cmp]
                    res = frozenset(v * sc for v in vs if v * sc > 0 and (xdim is None or v * sc < xdim))
            elif toks[0] in ("and", "or", "xor", "not") and len(toks) > 1 and toks[1] == "pred":
                parts = [of(o.name, depth + 1) if type(o) is Reg else None for o in ops[1:]]
                if parts and all(p is not None for p in parts):
                    res = frozenset().union(*parts)
        memo[name] = res
        return res

    for b in blocks:
        for ins in b.instrs:
            if ins.opcode.startswith(("setp.", "and.pred", "or.pred", "xor.pred", "not.pred")) and ins.operands:
                w, _ = _writes_reads(ins)
                if len(w) == 1:
                    r = of(w[0])
                    if r is not None:
                        out[w[0]] = r
    return out


def _bounds_level(bs: FrozenSet[int]) -> int:
    if not bs:
        return _U
    if all(x % 128 == 0 for x in bs):
        return _WG
    if all(x % 32 == 0 for x in bs):
        return _W
    return _T


def _variances(blocks, bounds: Optional[Mapping[str, FrozenSet[int]]] = None):
    """Flow-insensitive variance of every register (a fixed point over all definitions). A predicate with
    known %tid.x boundaries (`bounds`, from _tid_bounds) takes the variance those boundaries give."""
    bounds = bounds or {}
    var: Dict[str, int] = {}
    tidx = set()  # registers that hold %tid.x itself (mov/cvt of it)
    instrs = [ins for b in blocks for ins in b.instrs]

    def level(o) -> int:
        t = type(o)
        if t is Reg:
            return var.get(o.name, _U)
        if t is Guard:
            return var.get(o.reg.name, _U)
        if t is Vec:
            return max((level(e) for e in o.elems), default=_U)
        if t is Addr:
            return level(o.base)
        if t.__name__ == "SpecialReg":
            return _sreg_level(o.name)
        items = getattr(o, "items", None)
        if isinstance(items, tuple):
            return max((level(e) for e in items), default=_U)
        return _U

    def is_tidx(o) -> bool:
        return (type(o) is Reg and o.name in tidx) or (type(o).__name__ == "SpecialReg" and o.name == "%tid.x")

    changed = True
    rounds = 0
    while changed and rounds < 20:
        changed = False
        rounds += 1
        for ins in instrs:
            w, _ = _writes_reads(ins)
            if not w:
                continue
            op = ins.opcode
            base = op.split(".", 1)[0]
            ops = ins.operands
            g = level(ins.guard) if ins.guard is not None else _U
            if base in ("mov", "cvt") and len(ops) == 2 and is_tidx(ops[1]) and ins.guard is None:
                if w[0] not in tidx:
                    tidx.add(w[0])
                    changed = True
            lv = max((level(o) for o in ops[1:]), default=_U)
            if base in ("shr", "div") and len(ops) == 3 and is_tidx(ops[1]) and type(ops[2]) is Imm \
                    and isinstance(ops[2].value, int) and ops[2].value > 0:
                c = ops[2].value
                if base == "shr":
                    lv = _WG if c >= 7 else _W if c >= 5 else _T
                else:
                    lv = _WG if c % 128 == 0 else _W if c % 32 == 0 else _T
            elif base in ("atom", "shfl", "match", "mbarrier", "elect") or op.startswith("ld.volatile"):
                lv = _T
            elif w[0] in bounds:
                lv = _bounds_level(bounds[w[0]])
            elif base in ("vote", "redux", "activemask"):
                lv = min(max(lv, _U), _W) if base != "vote" or ".ballot" in op or ".all" in op or ".any" in op \
                    or ".uni" in op else _W
            lv = max(lv, g)
            for x in w:
                if var.get(x, _U) < lv:
                    var[x] = lv
                    changed = True
    return var


def _post_dominators(blocks):
    n = len(blocks)
    full = (1 << (n + 1)) - 1
    exit_bit = 1 << n
    pdom = [full] * n
    changed = True
    rounds = 0
    while changed and rounds < 4 * n + 10:
        changed = False
        rounds += 1
        for b in reversed(blocks):
            if b.succs:
                acc = full
                for s in b.succs:
                    acc &= pdom[s]
            else:
                acc = exit_bit
            new = acc | (1 << b.index)
            if new != pdom[b.index]:
                pdom[b.index] = new
                changed = True
    return pdom


def _divergent_regions(blocks, var):
    """Blocks inside a branch on a varying condition, up to the branch's immediate post-dominator:
    ({block: (variance level, the branch)}, whether the search finished within its budget)."""
    def cond_level(ins) -> int:
        if ins.guard is not None:
            return var.get(ins.guard.reg.name, _U)
        return _U

    region: Dict[int, Tuple[int, Instr]] = {}
    pdom = None
    budget = [2_000_000]  # block visits over all regions: huge generated functions stay fast
    for b in blocks:
        if not b.instrs:
            continue
        last = b.instrs[-1]
        base = last.opcode.split(".", 1)[0]
        if base == "bra" and last.guard is not None:
            lv = cond_level(last)
        elif base == "brx":
            lv = max((var.get(o.name, _U) for o in last.operands if type(o) is Reg), default=_U)
        else:
            continue
        if lv == _U or len(b.succs) < 2:
            continue
        if pdom is None:
            pdom = _post_dominators(blocks)
            by_pdom = {v: i for i, v in enumerate(pdom)}
        # the immediate post-dominator p is the one whose own post-dominators are exactly b's strict ones
        ip = by_pdom.get(pdom[b.index] & ~(1 << b.index))
        seen = set()
        work = list(b.succs)
        while work and budget[0] > 0:
            budget[0] -= 1
            x = work.pop()
            if x == ip or x in seen:
                continue
            seen.add(x)
            if region.get(x, (-1, None))[0] < lv:
                region[x] = (lv, last)
            work.extend(blocks[x].succs)
    return region, budget[0] > 0


def _check_convergence(blocks, report, xdim: Optional[int] = None):
    colls = [(b, ins, need) for b in blocks for ins in b.instrs for need in (_collective(ins.opcode),) if need >= 0]
    if not colls:
        return
    bounds = _tid_bounds(blocks, xdim)
    var = _variances(blocks, bounds)

    def cond_level(ins) -> int:
        if ins.guard is not None:
            return var.get(ins.guard.reg.name, _U)
        return _U

    def misaligned(ins, cond: Instr, lv: int, need: int, how: str) -> bool:
        """A warpgroup op under a condition on %tid.x known to split warpgroups at whole warps."""
        if need != _W or lv != _W or cond.guard is None or cond.guard.reg.name not in bounds:
            return False
        warps = sorted({x // 32 for x in bounds[cond.guard.reg.name] if x % 128})
        at = f" at line {cond.loc.line}" if cond.loc is not None and cond is not ins else ""
        report("PTX-W-WARPGROUP-ALIGN", ins, f"{ins.opcode.split('.sync')[0]} must be issued by whole warpgroups "
               f"(warps 4k..4k+3), but {how}{at} splits the threads at warp "
               f"{', '.join(map(str, warps))} (%tid.x {', '.join(str(w * 32) for w in warps)}), which is not "
               "a multiple of 4: the warps that run it are not aligned warpgroups",
               ("move the boundary to a multiple of 128 threads (warp index a multiple of 4), e.g. give the "
                "producer a whole warpgroup",))
        return True

    region, _complete = _divergent_regions(blocks, var)
    reported = set()
    for b, ins, need in colls:
        what = "warpgroup" if need == _W else "warp"
        g = cond_level(ins)
        if g >= need:
            if misaligned(ins, ins, g, need, f"its guard {ins.guard}"):
                continue
            report("PTX-W-DIVERGENT", ins, f"{ins.opcode.split('.sync')[0]} must be executed by every thread of "
                   f"the {what} together, but its guard {ins.guard} can {_LEVEL_NAME[g]}",
                   ("compute the guard from a value that is the same across the "
                    f"{what} (e.g. %tid.x/{128 if need == _W else 32}), or branch around it uniformly",))
            continue
        r = region.get(b.index)
        if r is not None and r[0] >= need and id(r[1]) not in reported:
            reported.add(id(r[1]))  # one finding per divergent branch: its first collective
            if misaligned(ins, r[1], r[0], need, "the branch"):
                continue
            at = f" at line {r[1].loc.line}" if r[1].loc is not None else ""
            report("PTX-W-DIVERGENT", ins, f"{ins.opcode.split('.sync')[0]} must be executed by every thread of "
                   f"the {what} together, but it is inside a branch{at} whose condition can {_LEVEL_NAME[r[0]]}",
                   (f"make the condition uniform across the {what} (derive it from %tid.x/"
                    f"{128 if need == _W else 32}, not %tid.x)",))


# ----------------------------------------------------------------------------------------------- entry
_INTERESTING = ("wgmma", "mbarrier", "cp.async.bulk", "cp.reduce.async.bulk", "ldmatrix", "stmatrix", "mma",
                "wmma", "elect", "setmaxnreg", "movmatrix")


def check_function(fn: Function, add: Callable, box_bytes: Optional[Mapping[str, int]] = None) -> None:
    """Run the async-protocol checks on one function; findings go to `add` (lint._Ctx.add's signature).

    `box_bytes` maps a tensor-map parameter name (or its suffix after `_param_`) to the bytes of one box,
    so TMA tensor copies take part in the expect_tx byte check."""
    for st in fn.body:
        if type(st) is Instr and st.opcode.startswith(_INTERESTING):
            break
    else:
        return
    blocks = build_cfg(fn.body)
    report = _Reporter(add)
    _check_wgmma(blocks, report, fn.is_entry)
    fnf = _FnFacts(blocks, fn)
    _check_proxy(blocks, report, fn, fnf)
    _check_bulk(blocks, report, fn, fnf)
    dims = _block_dims(fn.directives)
    threads = (dims[0][0] * dims[0][1] * dims[0][2], dims[1]) if dims is not None else None
    _check_mbarrier(blocks, report, fn.is_entry, box_bytes or {}, threads, fnf.defs())
    _check_parity(blocks, report)
    _check_convergence(blocks, report, dims[0][0] if dims is not None else None)
