"""Distributed shared memory bandwidth: how many bytes a cycle reach an SM from the other CTAs of its
thread-block cluster, read (pulled) against written (pushed), next to its own shared memory.

Every CTA has 256 threads and BUF_BYTES (128 KiB, gemm_hopper sk=3's two parked 64 x 256 f32 partials)
of shared memory. Per loop iteration each CTA moves BUF_BYTES in 16-byte pieces, thread-linear (piece g
of thread t at (g * 256 + t) * 16, coalesced as sk=3's sum reads them):

- local: `ld.shared.v4.f32` from its own buffer (the SM's own shared-memory bandwidth);
- pull: `ld.shared::cluster.v4.f32` from its peers' buffers through `mapa`, piece g from the CTA
  1 + g mod (P - 1) ranks after it (only remote bytes, every peer asked equally, no two readers on one
  peer at once), the loads of BATCH pieces in flight before they are added;
- push: `st.shared::cluster.v4.f32` into its peers' buffers, the same pieces to the same CTAs (no two
  writers on one address); the clock stops after a `barrier.cluster` whose arrive releases the writes.

Thread 0 reads %clock64 after the CTA (pull, local) or the cluster (push) has met before and after the
loop; bytes a cycle = loops x BUF_BYTES / cycles for each CTA, median over the CTAs and launches. The
grid is one cluster alone (--clusters 1) or as many clusters as fit at once (cuOccupancyMaxActiveClusters,
the default, "full"). Pulled sums are checked against what the buffers hold, so nothing is optimised away
and a wrong address shows.

    python3 bench/dsmem_bw.py [--sizes 2,4,8,16] [--loops 64] [--launches 5] [--clusters full|1]

16 is a non-portable cluster size (allowed per kernel through Function.allow_nonportable_clusters).
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
from _gpu import int_list  # noqa: E402

THREADS = 256
BUF_BYTES = 128 * 1024
PIECES = BUF_BYTES // (16 * THREADS)     # 16-byte pieces per thread per iteration (32)
BATCH = 16                                # pieces whose loads are in flight together (64 registers)
MODES = ("local", "pull", "push")
SIZES = (2, 4, 8, 16)


def kernel_name(mode: str, parts: int) -> str:
    return f"dsmem_{mode}_p{parts}"


def _value(rank, t, g):
    """The f32 that thread t of the CTA of rank `rank` writes into piece g's four words at set-up: a
    small integer, so sums of many are exact in f32."""
    return float((rank * 7 + t * 3 + g) % 13)


def build(target: str = "sm_90a", sizes=SIZES) -> pg.Module:
    """One kernel per mode and cluster size: name(out f32[grid * 256], cycles u64[grid], loops u32,
    zero u32 = 0)."""
    m = pg.Module(target=target)
    for parts in sizes:
        for mode in MODES:
            _kernel(m, mode, parts)
    return m


def _kernel(m: pg.Module, mode: str, parts: int):
    k = m.entry(kernel_name(mode, parts), reqntid=THREADS, maxnreg=128)
    pout = k.param_ptr("out", pg.f32, align=4)
    pcyc = k.param_ptr("cycles", pg.u64, align=8)
    ploops = k.param("loops", pg.u32)
    pzero = k.param("zero", pg.u32)
    dyn = m.extern_shared(f"smem_{kernel_name(mode, parts)}", align=16)
    base = k.mov(dyn, type=pg.u32)
    tid = k.tid.x
    rank = k.sreg("%cluster_ctarank")
    me = k.add(base, k.shl(tid, 4))                  # piece 0 of this thread; piece g at + g * 4096
    # set-up: piece g of thread t holds four copies of _value(rank, t, g)
    for g in range(PIECES):
        v = k.cvt(k.rem(k.add(k.mad(rank, 7, k.mul(tid, 3, mode="lo"), mode="lo"), g), 13), pg.f32, pg.u32,
                  rnd="rn")
        k.st(pg.mem(me, g * THREADS * 16), [v, v, v, v], pg.f32, space="shared")
    k.barrier_cluster_arrive(sem="release")
    k.barrier_cluster_wait(acquire=True)
    # piece g's peer: 1 + g mod (parts - 1) ranks after this one
    peers = {}
    if mode != "local":
        for d in range(1, parts):
            peers[d] = k.mapa(me, k.and_(k.add(rank, d), parts - 1), space="shared::cluster", type=pg.u32)
    acc = [k.mov(0.0, type=pg.f32) for _ in range(4)]
    leader = k.setp("eq", tid, 0)
    k.bar_sync(0)
    t0 = k.sreg("%clock64")
    zero = k.ld_param(pzero)
    with k.for_range(0, k.ld_param(ploops), name="it") as it:
        # + it x zero (0 at run time): the loads' addresses vary with the iteration as far as ptxas can
        # tell, so it cannot hoist them out of the loop
        off = k.mul(it, zero, mode="lo")
        here = k.add(me, off)
        there = {d: k.add(a, off) for d, a in peers.items()}
        for g0 in range(0, PIECES, BATCH):
            if mode == "push":
                for g in range(g0, g0 + BATCH):
                    k.st(pg.mem(there[1 + g % (parts - 1)], g * THREADS * 16), acc, pg.f32, space="shared::cluster")
                continue
            vs = []
            for g in range(g0, g0 + BATCH):
                if mode == "local":
                    vs.append(k.ld(pg.mem(here, g * THREADS * 16), pg.f32, vec=4, space="shared"))
                else:
                    vs.append(k.ld(pg.mem(there[1 + g % (parts - 1)], g * THREADS * 16), pg.f32, vec=4,
                                   space="shared::cluster"))
            for v in vs:
                for e in range(4):
                    k.add(acc[e], v[e], dst=acc[e])
        if mode == "push":
            k.add(acc[0], 1.0, dst=acc[0])               # the next iteration writes other values
    if mode == "push":
        k.barrier_cluster_arrive(sem="release")
        k.barrier_cluster_wait(acquire=True)
    else:
        k.bar_sync(0)
    t1 = k.sreg("%clock64")
    cyc = k.add(k.cvta(k.ld_param(pcyc), "global", to=True), k.mul(k.ctaid.x, 8, mode="wide"))
    k.st(cyc, k.sub(t1, t0), pg.u64, guard=leader)
    gid = k.mad(k.ctaid.x, THREADS, tid, mode="lo")
    total = k.add(k.add(acc[0], acc[1]), k.add(acc[2], acc[3]))
    k.st(k.add(k.cvta(k.ld_param(pout), "global", to=True), k.mul(gid, 4, mode="wide")), total)
    if mode != "push":
        # no CTA leaves while a peer may still read its shared memory
        k.barrier_cluster_arrive(sem="release")
        k.barrier_cluster_wait(acquire=True)
    k.ret()
    return k


def expected_sums(mode: str, parts: int, grid: int, loops: int) -> np.ndarray:
    """What each thread's `out` must hold (local and pull: loops x its pieces' four words; push: the
    values it wrote, 0 + 1 + ... over the iterations, four words of which one grows)."""
    out = np.zeros(grid * THREADS)
    for cta in range(grid):
        rank = cta % parts
        for t in range(THREADS):
            if mode == "push":
                out[cta * THREADS + t] = loops
                continue
            s = 0.0
            for g in range(PIECES):
                src = rank if mode == "local" else (rank + 1 + g % (parts - 1)) % parts
                s += 4 * _value(src, t, g)
            out[cta * THREADS + t] = loops * s
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)), help="cluster sizes (powers of two, 2-16)")
    ap.add_argument("--loops", type=int, default=64, help="iterations per launch (default 64)")
    ap.add_argument("--launches", type=int, default=5, help="timed launches per row (default 5)")
    ap.add_argument("--clusters", default="full", help='"full" (as many as fit at once, default) or a count')
    args = ap.parse_args(argv)
    sizes = int_list(ap, "--sizes", args.sizes, 2, "cluster sizes from 2 to 16")
    if any(s not in SIZES for s in sizes):
        ap.error(f"--sizes takes cluster sizes among {', '.join(map(str, SIZES))}; got {args.sizes!r}")
    if args.loops < 1 or args.launches < 1:
        ap.error("--loops and --launches take positive counts")
    if args.clusters != "full" and not (args.clusters.isdigit() and int(args.clusters) >= 1):
        ap.error(f"--clusters takes 'full' or a positive count; got {args.clusters!r}")

    from _gpu import gpu_or_reason
    got = gpu_or_reason()
    if got is None:
        return 0
    torch, ctx = got
    from ptxgen.runtime import load_module
    mod = load_module(build("sm_90a", sizes).emit())
    print(f"{ctx.name}: {THREADS} threads a CTA, {BUF_BYTES // 1024} KiB moved a CTA per iteration, "
          f"{args.loops} iterations, {args.launches} launches; bytes a cycle into (local, pull) or out of "
          f"(push) each SM, median over CTAs and launches")
    print(f"{'cluster':>8} {'clusters':>9} {'mode':>6} {'B/cycle':>8} {'min':>7} {'max':>7}")
    for parts in sizes:
        for mode in MODES:
            f = mod.function(kernel_name(mode, parts))
            f.set_max_dynamic_shared(BUF_BYTES)
            if parts > 8:
                f.allow_nonportable_clusters()
            fit = f.max_active_clusters((parts, 1, 1), THREADS, BUF_BYTES)
            n = fit if args.clusters == "full" else min(int(args.clusters), fit)
            grid = n * parts
            out = torch.empty(grid * THREADS, dtype=torch.float32, device="cuda")
            cyc = torch.zeros(grid, dtype=torch.int64, device="cuda")
            want = torch.tensor(expected_sums(mode, parts, grid, args.loops), dtype=torch.float32, device="cuda")
            rates = []
            for i in range(args.launches + 1):
                out.fill_(float("nan"))
                f.launch(grid, THREADS, [np.uint64(out.data_ptr()), np.uint64(cyc.data_ptr()), np.uint32(args.loops),
                                         np.uint32(0)], shared_bytes=BUF_BYTES, cluster=(parts, 1, 1))
                torch.cuda.synchronize()
                if not torch.equal(out, want):
                    bad = int((out != want).sum())
                    print(f"{kernel_name(mode, parts)}: {bad} of {out.numel()} sums wrong")
                    return 1
                if i:                                   # the first launch warms up
                    c = cyc.cpu().numpy().astype(np.float64)
                    rates.extend((args.loops * BUF_BYTES / c).tolist())
            print(f"{parts:8d} {n:9d} {mode:>6} {statistics.median(rates):8.1f} {min(rates):7.1f} {max(rates):7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
