"""What a gpu-scope fence or acquire costs in a CTA whose bulk copies are still in flight.

bench/LOG.md round 33: every form of gemm_hopper's stream-K owner that watched its head's flag while the
CTA's TMA loads were in flight ran 0.5-1.4 us slower than the form that acquires the flag after its
k-loop, and in SASS `fence.acq_rel.gpu` is `MEMBAR.ALL.CTA; MEMBAR.ALL.GPU; ERRBAR; CGAERRBAR; CCTL.IVALL`
while `ld.acquire.gpu` is `LDG.E.STRONG.GPU; CCTL.IVALL`. This measures, in SM cycles, one such operation
issued by lane 0 of warp 1 of a 64-thread CTA right after lane 0 of warp 0 has issued COPIES bulk copies
(`cp.async.bulk` global -> shared, COPY_BYTES each, completing on one mbarrier) ("busy"), against the same
CTA with no copies ("idle"); and how long the copies take from their issue to the mbarrier's completion.
If an operation waits for the copies, its busy time approaches the copies' time.

Operations (one kernel each): none (two clock reads), relaxed (`ld.relaxed.gpu`), acquire
(`ld.acquire.gpu`), fence_cta (`fence.acq_rel.cta`), fence (`fence.acq_rel.gpu`), fence_sc
(`fence.sc.gpu`). The copies' sources rotate over --sets disjoint regions, so they come from DRAM. Every
copy's bytes are checked (each CTA sums a word per copy), so no copy can be skipped unnoticed.

    python3 bench/fence_latency.py [--launches 20] [--sets 4] [--copies 4]
"""
import argparse
import os
import statistics
import sys

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ptxgen as pg  # noqa: E402

THREADS = 64
COPY_BYTES = 48 * 1024             # one gemm_hopper 128 x 256 stage
MAX_COPIES = 4
OPS = ("none", "relaxed", "acquire", "fence_cta", "fence", "fence_sc")
SLOTS = 4                          # u64 words a CTA writes: op cycles, copy cycles, loaded word, copied words' sum


def kernel_name(op: str) -> str:
    return f"fence_probe_{op}"


def build(target: str = "sm_90a", ops=OPS) -> pg.Module:
    """One kernel per operation: name(src u32[], flag u32[], out u64[grid * SLOTS], set_offset u64,
    copies u32) with COPY_BYTES x MAX_COPIES of dynamic shared memory."""
    m = pg.Module(target=target)
    for op in ops:
        _kernel(m, op)
    return m


def _kernel(m: pg.Module, op: str):
    k = m.entry(kernel_name(op), reqntid=THREADS)
    psrc = k.param_ptr("src", pg.u32, align=16)
    pflag = k.param_ptr("flag", pg.u32, align=4)
    pout = k.param_ptr("out", pg.u64, align=8)
    poff = k.param("set_offset", pg.u64)
    pcopies = k.param("copies", pg.u32)
    dyn = m.extern_shared(f"smem_{kernel_name(op)}", align=128)
    base = k.mov(dyn, type=pg.u32)
    bar = k.add(base, MAX_COPIES * COPY_BYTES)
    tid = k.tid.x
    copies = k.ld_param(pcopies)
    out = k.add(k.cvta(k.ld_param(pout), "global", to=True), k.mul(k.ctaid.x, SLOTS * 8, mode="wide"))
    with k.if_(k.setp("eq", tid, 0)):
        k.mbarrier_init(bar, 1)
        k.fence_mbarrier_init()
    k.bar_sync(0)
    issuer = k.setp("eq", tid, 0)
    t_issue = k.reg(pg.u64, "t_issue")
    with k.if_(issuer):
        # this CTA's MAX_COPIES x COPY_BYTES of the set the launch reads
        src = k.add(k.add(k.cvta(k.ld_param(psrc), "global", to=True), k.ld_param(poff)),
                    k.mul(k.ctaid.x, MAX_COPIES * COPY_BYTES, mode="wide"))
        k.mbarrier_arrive_expect_tx(bar, k.mul(copies, COPY_BYTES, mode="lo"))
        k.sreg("%clock64", dst=t_issue)
        for i in range(MAX_COPIES):
            k.cp_async_bulk(k.add(base, i * COPY_BYTES), k.add(src, i * COPY_BYTES, type=pg.u64), COPY_BYTES,
                            mbarrier=bar, guard=k.setp("gt", copies, i))
    k.bar_sync(1, THREADS)                               # the copies are issued
    with k.if_(k.setp("eq", tid, 32)):
        flag = k.cvta(k.ld_param(pflag), "global", to=True)
        t0 = k.sreg("%clock64")
        if op == "relaxed":
            v = k.ld(flag, pg.u32, sem="relaxed", scope="gpu")
        elif op == "acquire":
            v = k.ld(flag, pg.u32, sem="acquire", scope="gpu")
        else:
            if op == "fence_cta":
                k.fence("acq_rel", "cta")
            elif op == "fence":
                k.fence("acq_rel", "gpu")
            elif op == "fence_sc":
                k.fence("sc", "gpu")
            v = None
        # the loaded word is stored before the clock is read, so the store (which waits for the load to
        # return) comes first in the in-order issue
        k.st(pg.mem(out, 16), k.cvt(v, pg.u64, pg.u32) if v is not None else k.mov(0, type=pg.u64), pg.u64)
        t1 = k.sreg("%clock64")
        k.st(out, k.sub(t1, t0), pg.u64)
    with k.if_(issuer):
        k.mbarrier_wait(bar, parity=0, timeout_cycles=4_000_000_000)
        k.st(pg.mem(out, 8), k.sub(k.sreg("%clock64"), t_issue), pg.u64)
        # the first word of every copy, summed: the copies landed where they were sent
        s = k.mov(0, type=pg.u64)
        for i in range(MAX_COPIES):
            w = k.ld(k.add(base, i * COPY_BYTES), pg.u32, space="shared", guard=k.setp("gt", copies, i))
            k.add(s, k.cvt(w, pg.u64, pg.u32), dst=s, guard=k.setp("gt", copies, i))
        k.st(pg.mem(out, 24), s, pg.u64)
    k.ret()
    return k


def expected_sums(src_words: np.ndarray, offset_bytes: int, grid: int, copies: int) -> np.ndarray:
    """The copied words' sum each CTA must report: the first u32 of each of its `copies` copies."""
    per_cta = MAX_COPIES * COPY_BYTES // 4
    base = offset_bytes // 4
    return np.array([sum(int(src_words[base + c * per_cta + i * COPY_BYTES // 4]) for i in range(copies))
                     for c in range(grid)], dtype=np.uint64)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--launches", type=int, default=20, help="timed launches per row (default 20)")
    ap.add_argument("--sets", type=int, default=4,
                    help="disjoint source regions the launches rotate over, so the copies read DRAM (default 4)")
    ap.add_argument("--copies", type=int, default=MAX_COPIES,
                    help=f"bulk copies of {COPY_BYTES // 1024} KiB in flight in a busy CTA, 1-{MAX_COPIES} "
                         f"(default {MAX_COPIES})")
    ap.add_argument("--ops", default=",".join(OPS), help=f"comma-separated, from {', '.join(OPS)} (default all)")
    args = ap.parse_args(argv)
    if args.launches < 1 or args.sets < 1:
        ap.error("--launches and --sets take positive counts")
    if not 1 <= args.copies <= MAX_COPIES:
        ap.error(f"--copies takes 1 to {MAX_COPIES}; got {args.copies}")
    ops = args.ops.split(",")
    if not ops or any(o not in OPS for o in ops):
        ap.error(f"--ops takes operations among {', '.join(OPS)}; got {args.ops!r}")

    from _gpu import gpu_or_reason
    got = gpu_or_reason()
    if got is None:
        return 0
    torch, ctx = got
    from ptxgen.runtime import load_module
    mod = load_module(build("sm_90a", ops).emit())
    grid = ctx.sm_count
    set_bytes = grid * MAX_COPIES * COPY_BYTES
    g = torch.Generator(device="cuda").manual_seed(1)
    src = torch.randint(0, 1 << 20, (args.sets * set_bytes // 4,), dtype=torch.int32, device="cuda", generator=g)
    src_host = src.cpu().numpy().view(np.uint32)
    flag = torch.ones(1, dtype=torch.int32, device="cuda")
    out = torch.zeros(grid * SLOTS, dtype=torch.int64, device="cuda")
    shared = MAX_COPIES * COPY_BYTES + 8
    print(f"{ctx.name}: {grid} CTAs of {THREADS} threads, one a SM; busy = {args.copies} bulk copies of "
          f"{COPY_BYTES // 1024} KiB in flight when warp 1 times the operation; SM cycles, over CTAs and "
          f"{args.launches} launches")
    print(f"{'operation':>10} {'CTA':>5} {'median':>8} {'p10':>8} {'p90':>8} {'copies took':>12}")
    launch = 0
    for op in ops:
        f = mod.function(kernel_name(op))
        f.set_max_dynamic_shared(shared)
        for busy in (False, True):
            n = args.copies if busy else 0
            cyc, took = [], []
            for i in range(args.launches + 1):
                off = (launch % args.sets) * set_bytes
                launch += 1
                out.fill_(-1)
                f.launch(grid, THREADS, [np.uint64(src.data_ptr()), np.uint64(flag.data_ptr()),
                                         np.uint64(out.data_ptr()), np.uint64(off), np.uint32(n)],
                         shared_bytes=shared)
                torch.cuda.synchronize()
                o = out.cpu().numpy().view(np.uint64).reshape(grid, SLOTS)
                want = expected_sums(src_host, off, grid, n)
                if not np.array_equal(o[:, 3], want):
                    print(f"{kernel_name(op)}: {int((o[:, 3] != want).sum())} of {grid} CTAs copied wrong bytes")
                    return 1
                if op in ("relaxed", "acquire") and not (o[:, 2] == 1).all():
                    print(f"{kernel_name(op)}: the flag read back wrong")
                    return 1
                if i:                                     # the first launch warms up
                    cyc.extend(o[:, 0].astype(np.float64).tolist())
                    took.extend(o[:, 1].astype(np.float64).tolist())
            q = np.percentile(cyc, [10, 90])
            print(f"{op:>10} {'busy' if busy else 'idle':>5} {statistics.median(cyc):8.0f} {q[0]:8.0f} {q[1]:8.0f} "
                  f"{statistics.median(took) if busy else float('nan'):12.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
