"""Tensor-core ceilings on this GPU: how many TFLOP/s `mma.sync.m16n8k16` (the Ampere path's
instruction) and `wgmma.mma_async.m64n256k16` (the Hopper path's) sustain with no memory traffic at
all, next to cuBLAS on a GEMM, all in one run (the same clocks and temperature).

- mma.sync: every warp of a persistent grid issues CHAINS independent bf16 -> f32 mma.sync per loop
  iteration on fragments that stay in registers (CHAINS accumulator tiles, so no instruction waits
  for the one before it); warps per SM and chains are swept.
- wgmma: two warpgroups per CTA (one CTA per SM) each issue 4 x m64n256k16 per iteration from
  128-byte-swizzled shared-memory descriptors (A 64 x 64, B 256 x 64, filled once), commit, and
  wait with one group in flight, like gemm_hopper's consumers without the data movement; once with
  random operand bits (as a GEMM's) and once with a repeating pattern; once more with random bits while
  a ninth warp copies 48 KiB into shared memory per iteration (the 128 x 256 GEMM's operand bytes per
  FLOP, written beside the operands): whether those writes slow the wgmma reads.
- TMA: gemm_hopper's operand delivery without the math (one thread per SM keeps a 4-stage ring of
  128 x 64 + 256 x 64 bf16 boxes loading), in TB/s delivered into shared memory.
- cuBLAS: torch.matmul on random bf16 inputs of each --sizes N x N x N, timed in alternation with nothing.

Every kernel stores its accumulators' sum, so nothing is optimised away; the sums are checked to
be finite. Each row runs batches of --iters CUDA-event timings (after warm-up) for at least
--seconds and reports the median call, the median SM clock nvidia-smi saw over the last 80 % of that
window with the board power, and TFLOP/s per GHz: the ceiling per clock that a GEMM's own TFLOP/s per GHz
(bench/gemm_sustained.py) can be held against, whatever clock the power limit leaves each of them.

Last, per cuBLAS size, the bound that follows at a shared clock (as in bench/gemm.py, where each
kernel's calls alternate with cuBLAS's): a kernel of wgmma (mma.sync) at the clock cuBLAS runs at
can do at most the instruction's ceiling per GHz, so it reaches at most (ceiling per GHz) / (cuBLAS's
per GHz) times cuBLAS's rate there, however well it is balanced and fed.

    python3 bench/mma_peak.py [--iters 20] [--seconds 1] [--sizes 4096,6144,8192]
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "samples"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ptxgen as pg  # noqa: E402
from _gpu import int_list  # noqa: E402
from gpuclock import Sampler  # noqa: E402
from ptxgen.ops.wgmma_desc import SmemTile  # noqa: E402

LOOP = 256                 # loop iterations per launch (each kernel runs ~0.5-2 ms)
MMA_FLOP = 16 * 8 * 16 * 2
WGMMA_FLOP = 64 * 256 * 16 * 2
TILE_A = SmemTile(64, 64, "bf16", "K", "128B")
TILE_B = SmemTile(256, 64, "bf16", "K", "128B")


def _random_bf16x2(k, x):
    """Two bf16 values from a hash of the u32 x: random sign, exponent 124-127 and mantissa bits
    (magnitudes 0.125-2, like the normal inputs of the GEMM benchmarks once scaled), so the tensor
    cores see random bits, as in a GEMM, not a repeating pattern that switches fewer gates."""
    h = k.mul(x, 0x9E3779B1, mode="lo")
    h = k.xor(h, k.shr(h, 16), type=pg.b32)
    h = k.mul(h, 0x85EBCA6B, mode="lo", type=pg.u32)
    h = k.xor(h, k.shr(h, 13), type=pg.b32)
    return k.or_(k.and_(h, 0x81FF81FF, type=pg.b32), 0x3E003E00, type=pg.b32)


def mma_sync_kernel(m: pg.Module, warps: int, chains: int):
    """mma_sync_peak_w{warps}_c{chains}(out, loops): out[thread] = sum of its accumulators."""
    k = m.entry(f"mma_sync_peak_w{warps}_c{chains}", maxntid=32 * warps)
    pout = k.param_ptr("out", pg.f32, align=4)
    ploops = k.param("loops", pg.u32)
    tid = k.tid.x
    # fragments: random bf16 bits (the data path's power depends on them; see _random_bf16x2)
    gid0 = k.mad(k.ctaid.x, k.ntid.x, tid, mode="lo")
    fa = [_random_bf16x2(k, k.mad(gid0, 8, i, mode="lo")) for i in range(4)]
    fb = [_random_bf16x2(k, k.mad(gid0, 8, 4 + i, mode="lo")) for i in range(2)]
    acc = [k.regs(pg.f32, 4, name=f"c{i}") for i in range(chains)]
    for a in acc:
        for r in a:
            k.mov(0.0, dst=r)
    with k.for_range(0, k.ld_param(ploops), name="it"):
        for a in acc:
            k.mma_sync("m16n8k16", a, fa, fb, a, atype="bf16", ctype="f32")
    total = k.mov(0.0, type=pg.f32)
    for a in acc:
        for r in a:
            k.add(total, r, dst=total)
    gid = k.mad(k.ctaid.x, k.ntid.x, tid, mode="lo")
    k.st(k.add(k.cvta(k.ld_param(pout), "global", to=True), k.mul(gid, 4, mode="wide")), total)
    k.ret()
    return k


def wgmma_name(data: str = "random", wgs: int = 2, split: int = 1, n: int = 256) -> str:
    return "wgmma_peak" + ("" if data == "random" else "_" + data) + \
        ("" if (wgs, split, n) == (2, 1, 256) else f"_wg{wgs}_n{n // split}")


COPY_CHUNK = 16384                  # bytes of one cp.async.bulk of data="copies"
COPY_CHUNKS = 3                     # 48 KiB a copy: gemm_hopper's 128 x 256 stage (128 + 256 rows of 128 bytes)
COPY_SOURCES = 16                   # the copies cycle over 16 x 48 KiB of global memory (stays in L2)


def wgmma_kernel(m: pg.Module, data: str = "random", wgs: int = 2, split: int = 1, n: int = 256):
    """wgmma_peak[_pattern][_wg{wgs}_n{n / split}](out, loops): `wgs` warpgroups, each 4 k-steps of
    m64 x n per iteration (one m64n{n}k16 a k-step, or `split` m64n{n / split}k16 on the N parts
    of B, as gemm_hopper's bm=192 consumers issue them), one group in flight; n < 256 reads the first
    n rows of the same 256-row B tile. data="random": the
    operands are random bf16 bits (as a GEMM's); "pattern": a few values that repeat (what this
    benchmark used first: the same TFLOP/s at a lower power); "regs": random bits, with A's fragments
    (4 registers a k-step) in registers instead of shared memory (the instruction's other form);
    "copies": random bits, and a ninth warp that meanwhile streams a 48 KiB bulk copy (cp.async.bulk,
    one in flight, completing on an mbarrier) from global memory into shared memory beside the
    operands per iteration: gemm_hopper's 128 x 256 stage per 4 k-steps of two warpgroups, so the
    row shows what the operand writes into shared memory cost the wgmma reads. Its third parameter
    is the source (COPY_SOURCES x 48 KiB, 16-byte aligned)."""
    copies = data == "copies"
    k = m.entry(wgmma_name(data, wgs, split, n), reqntid=128 * wgs + (32 if copies else 0),
                maxnreg=65536 // (128 * wgs) // 8 * 8 if wgs > 2 else None)
    pout = k.param_ptr("out", pg.f32, align=4)
    ploops = k.param("loops", pg.u32)
    psrc = k.param_ptr("src", pg.u8, align=16) if copies else None
    dyn = m.extern_shared("smem_" + wgmma_name(data, wgs, split, n), align=1024)
    tid = k.tid.x
    base = k.and_(k.add(k.mov(dyn, type=pg.u32), 1023), ~1023 & 0xFFFFFFFF)
    # fill A (8 KiB per warpgroup) and B (32 KiB), 16 bytes a store, 256 threads at a time
    nbytes = wgs * TILE_A.nbytes + TILE_B.nbytes
    copy_bytes = COPY_CHUNKS * COPY_CHUNK
    fill = k.setp("lt", tid, 256)
    if data == "pattern":
        val = k.or_(k.add(k.and_(tid, 63), 0x3E00), k.shl(k.add(k.and_(tid, 31), 0x3D80), 16), type=pg.b32)
        vec = [val, k.xor(val, 1, type=pg.b32), k.xor(val, 2, type=pg.b32), k.xor(val, 3, type=pg.b32)]
    with k.for_range(0, nbytes // (256 * 16), name="f") as f:
        word = k.mad(f, 256, tid, mode="lo")
        off = k.shl(word, 4)
        if data != "pattern":
            vec = [_random_bf16x2(k, k.mad(word, 4, j, mode="lo")) for j in range(4)]
        k.st(k.add(base, off), vec, pg.b32, space="shared", guard=fill)
    if copies:
        bar = k.add(base, nbytes + copy_bytes)
        k.mbarrier_init(bar, 1, guard=k.setp("eq", tid, 0))
    k.fence_proxy_async("shared::cta")
    k.bar_sync(0)
    if copies:
        # the copying warp: one 48 KiB copy per iteration of the warpgroups' loop, the next issued when
        # the last has landed; it leaves no result, so it returns here
        with k.if_(k.setp("ge", tid, 128 * wgs)):
            lane0 = k.setp("eq", tid, 128 * wgs)
            src = k.cvta(k.ld_param(psrc), "global", to=True)
            with k.for_range(0, k.ld_param(ploops), name="c") as c:
                k.mbarrier_arrive_expect_tx(bar, copy_bytes, guard=lane0)
                off = k.mul(k.rem(c, COPY_SOURCES), copy_bytes, mode="wide", type=pg.u32)
                for j in range(COPY_CHUNKS):
                    k.cp_async_bulk(k.add(base, nbytes + j * COPY_CHUNK), k.add(src, k.add(off, j * COPY_CHUNK, type=pg.u64)),
                                    COPY_CHUNK, mbarrier=bar, guard=lane0)
                k.mbarrier_wait(bar, parity=k.and_(c, 1))
            k.ret()
    wg = k.shr(tid, 7)
    da = k.wgmma_descriptor(k.mad(wg, TILE_A.nbytes, base, mode="lo"), TILE_A)
    db = k.wgmma_descriptor(k.add(base, 2 * TILE_A.nbytes), TILE_B)
    shape = f"m64n{n // split}k16"
    frags = [k.wgmma_fragment("d", shape, dtype="f32", atype="bf16", name=f"acc{h}") for h in range(split)]
    for f in frags:
        for r in f:
            k.mov(0.0, dst=r)
    part = TILE_B.nbytes // 256 * n // split             # N part h: n / split rows of B further on
    # data="regs": each k-step's A fragment, random bits held in registers for the whole loop
    a_regs = [[_random_bf16x2(k, k.mad(tid, 16, 4 * step + j, mode="lo")) for j in range(4)]
              for step in range(4)] if data == "regs" else None
    with k.for_range(0, k.ld_param(ploops), name="it"):
        k.wgmma_fence()
        for step in range(4):
            a_off = TILE_A.slice_offset(step) >> 4
            for h, f in enumerate(frags):
                b_off = (TILE_B.slice_offset(step) + h * part) >> 4
                a = a_regs[step] if a_regs else (k.add(da, a_off, type=pg.u64) if a_off else da)
                k.wgmma_mma_async(shape, f, a,
                                  k.add(db, b_off, type=pg.u64) if b_off else db,
                                  dtype="f32", atype="bf16", btype="bf16")
        k.wgmma_commit_group()
        k.wgmma_wait_group(1)
    k.wgmma_wait_group(0)
    total = k.mov(0.0, type=pg.f32)
    for f in frags:
        for r in f:
            k.add(total, r, dst=total)
    gid = k.mad(k.ctaid.x, 128 * wgs, tid, mode="lo")
    k.st(k.add(k.cvta(k.ld_param(pout), "global", to=True), k.mul(gid, 4, mode="wide")), total)
    k.ret()
    return k, nbytes + (copy_bytes + 8 if copies else 0) + 1024


# (warpgroups, N parts, N) of the wgmma ceiling rows beyond the default (2, 1, 256): gemm_hopper bm=192's
# consumers (3 warpgroups of two m64n128k16 a k-step), its 128-row tiles (2 of them), 3 warpgroups of
# m64n256k16 (168 registers each: only possible without a producer warpgroup), and the narrower
# m64n240k16 and m64n224k16 (whether a tile 16 or 32 columns narrower costs proportionally less time)
WGMMA_SPLITS = [(3, 2, 256), (2, 2, 256), (3, 1, 256), (2, 1, 240), (2, 1, 224)]


MMA_SHAPES = [(8, 32), (8, 16), (16, 16), (4, 32)]     # (warps per CTA, chains per warp)


TMA_STAGES = 4
TMA_STAGE_BYTES = (128 + 256) * 64 * 2       # gemm_hopper's stage: a 128 x 64 A box and a 256 x 64 B box


def tma_stream_kernel(m: pg.Module):
    """tma_stream(tmap_a, tmap_b, loops, k_blocks): gemm_hopper's operand delivery without the math.
    One thread per CTA (one CTA per SM) keeps TMA_STAGES stages of loads in flight: each stage is a
    128 x 64 box of A and a 256 x 64 box of B (128-byte swizzle) at the CTA's tile, k-block after
    k-block, and is loaded again as soon as its mbarrier says the previous load landed."""
    k = m.entry("tma_stream", reqntid=32)
    tmap_a = k.param_bytes("tmap_a", 128, align=64)
    tmap_b = k.param_bytes("tmap_b", 128, align=64)
    loops = k.ld_param(k.param("loops", pg.u32))
    kblocks = k.ld_param(k.param("k_blocks", pg.u32))
    dyn = m.extern_shared("smem_tma_stream", align=1024)
    base = k.and_(k.add(k.mov(dyn, type=pg.u32), 1023), ~1023 & 0xFFFFFFFF)
    bars = k.add(base, TMA_STAGES * TMA_STAGE_BYTES)
    with k.if_(k.setp("eq", k.tid.x, 0)):
        for st in range(TMA_STAGES):
            k.mbarrier_init(k.add(bars, 8 * st), 1)
        k.fence_mbarrier_init()
        cta = k.ctaid.x
        row_a = k.shl(k.and_(cta, 31), 7)                      # A rows of block row cta % 32
        col_b = k.shl(k.and_(k.shr(cta, 5), 15), 8)           # B rows of block column cta / 32 % 16
        ring = k.stage_ring(TMA_STAGES)

        def issue(i):
            full = ring.addr(bars, 8)
            k.mbarrier_arrive_expect_tx(full, TMA_STAGE_BYTES)
            stage = ring.addr(base, TMA_STAGE_BYTES)
            kx = k.shl(k.rem(i, kblocks), 6)
            k.cp_async_bulk_tensor(stage, tmap_a, [kx, row_a], mbarrier=full)
            k.cp_async_bulk_tensor(k.add(stage, 128 * 64 * 2), tmap_b, [kx, col_b], mbarrier=full)

        for i in range(TMA_STAGES):                            # fill the ring (loops >= TMA_STAGES)
            issue(k.mov(i, type=pg.u32))
            ring.advance()
        # iteration i reuses stage i % S after the load of iteration i - S, which completed phase
        # (i - S) / S of that stage's barrier: parity phase ^ 1 (wait(flip=True)), phase being (i / S) % 2
        with k.for_range(TMA_STAGES, loops, name="it") as it:
            ring.wait(bars, flip=True)
            issue(it)
            ring.advance()
        for _ in range(TMA_STAGES):                            # the last loads land before exit
            ring.wait(bars, flip=True)
            ring.advance()
    k.ret()
    return k


def build(target: str):
    m = pg.Module(target)
    for w, c in MMA_SHAPES:
        mma_sync_kernel(m, w, c)
    smem = None
    if target.startswith("sm_90"):
        smem = wgmma_kernel(m)[1]
        wgmma_kernel(m, "pattern")
        wgmma_kernel(m, "regs")
        smem = max(smem, wgmma_kernel(m, "copies")[1])
        for wgs, split, n in WGMMA_SPLITS:
            smem = max(smem, wgmma_kernel(m, "random", wgs, split, n)[1])
        tma_stream_kernel(m)
    return m, smem


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=1.0,
                    help="time each row for at least this long (clock samples need a window; default 1)")
    ap.add_argument("--sizes", default="4096,6144,8192",
                    help="cuBLAS references: N x N x N bf16 GEMMs, comma-separated N (default 4096,6144,8192)")
    ap.add_argument("--size", type=int, help="one cuBLAS reference size (the same as --sizes N)")
    args = ap.parse_args(argv)
    if args.iters < 1 or args.warmup < 0 or args.seconds < 0:
        ap.error("--iters must be >= 1, --warmup and --seconds >= 0")
    sizes = int_list(ap, "--sizes", args.sizes if args.size is None else str(args.size), 16,
                     "comma-separated N >= 16 (an N x N x N GEMM each)")

    from ptxgen.ptxas import assemble
    from ptxgen.runtime import DeviceBuffer, get_context, load_module, no_gpu_reason, time_kernel  # noqa: F401
    reason = no_gpu_reason()
    if reason is not None:
        print(f"no GPU: {reason}")
        return 1
    ctx = get_context()
    sms = ctx.sm_count
    target = "sm_90a" if ctx.arch.startswith("sm_90") else ctx.arch
    module, wg_smem = build(target)
    ptx = module.emit()
    res = assemble(ptx, target)
    mod = load_module(ptx)
    rows = []

    sampler = Sampler()

    def timed(fn, flop):
        times = time_kernel(fn, warmup=args.warmup, iters=args.iters)
        t0 = time.time()
        while time.time() - t0 < args.seconds:
            times += time_kernel(fn, warmup=0, iters=args.iters)
        t1 = time.time()
        ms = statistics.median(times)
        clk = sampler.window(t0 + 0.2 * (t1 - t0), t1)
        return ms, flop / ms / 1e9, clk

    out = DeviceBuffer.zeros(sms * 2048, np.float32)     # one float per thread, at most 2048 a SM
    for w, c in MMA_SHAPES:
        name = f"mma_sync_peak_w{w}_c{c}"
        f = mod.function(name)
        r = res.resources[name]
        per_sm = max(1, min(2048 // (32 * w), 65536 // (32 * w * max(r.registers, 1))))
        grid = sms * per_sm
        flop = grid * w * LOOP * c * MMA_FLOP
        ms, tf, clk = timed(lambda f=f, grid=grid, w=w: f.launch((grid,), (32 * w,), [out, np.uint32(LOOP)]), flop)
        rows.append((f"mma.sync m16n8k16 bf16, {w * per_sm} warps/SM, {c} chains", ms, tf, clk, r.registers))
    stream = None
    if wg_smem is not None:
        wg_rows = [("random", 2, 1, 256), ("pattern", 2, 1, 256), ("regs", 2, 1, 256), ("copies", 2, 1, 256)] + \
            [("random", *x) for x in WGMMA_SPLITS]
        copy_src = DeviceBuffer.zeros(COPY_SOURCES * COPY_CHUNKS * COPY_CHUNK // 4, np.float32)
        for data, wgs, split, n in wg_rows:
            name = wgmma_name(data, wgs, split, n)
            f = mod.function(name)
            f.set_max_dynamic_shared(wg_smem)
            flop = sms * wgs * LOOP * 4 * WGMMA_FLOP // 256 * n
            extra = (32, [copy_src]) if data == "copies" else (0, [])
            ms, tf, clk = timed(lambda f=f, wgs=wgs, extra=extra: f.launch(
                (sms,), (128 * wgs + extra[0],), [out, np.uint32(LOOP)] + extra[1], shared_bytes=wg_smem), flop)
            what = {"random": "random bf16", "pattern": "repeating bf16 pattern",
                    "regs": "random bf16, A in registers", "copies": "random bf16, 48 KiB copied in per 4 k-steps"}[data]
            inst = f"m64n{n}k16" if split == 1 else f"{split} x m64n{n // split}k16"
            rows.append((f"wgmma {inst} bf16, {wgs} warpgroups/SM, {what}", ms, tf, clk, res.resources[name].registers))
        # operand delivery alone: random 4096 x 4096 bf16 A and B, gemm_hopper's boxes and ring
        from ptxgen.tma import encode_tiled
        rng = np.random.default_rng(0)
        srcs = [DeviceBuffer.from_numpy(rng.integers(0, 2 ** 16, (4096, 4096), dtype=np.uint16)) for _ in range(2)]
        maps = [encode_tiled(buf, box=box, dtype="bf16", swizzle="128B", l2_promotion="256B")
                for buf, box in zip(srcs, ((128, 64), (256, 64)))]
        f = mod.function("tma_stream")
        tma_smem = TMA_STAGES * TMA_STAGE_BYTES + 8 * TMA_STAGES + 1024
        f.set_max_dynamic_shared(tma_smem)
        loops = 8 * LOOP
        nbytes = sms * loops * TMA_STAGE_BYTES
        ms, _, clk = timed(lambda: f.launch((sms,), (32,), [maps[0], maps[1], np.uint32(loops), np.uint32(64)],
                                            shared_bytes=tma_smem), 0.0)
        stream = (f"TMA loads into a {TMA_STAGES} x {TMA_STAGE_BYTES // 1024} KiB ring per SM, no math", ms,
                  nbytes / ms / 1e9, clk)
    sums = out.to_numpy()
    finite = bool(np.isfinite(sums[:sms * 256]).all())
    try:
        import torch
        for n in sizes:
            a = torch.randn(n, n, device="cuda").to(torch.bfloat16)
            b = torch.randn(n, n, device="cuda").to(torch.bfloat16)
            c = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
            ms, tf, clk = timed(lambda: torch.matmul(a, b, out=c), 2.0 * n ** 3)
            rows.append((f"{CUBLAS_LABEL} {n}^3", ms, tf, clk, None))
            a = b = c = None
    except ImportError:
        print("torch not found: no cuBLAS row")
    print(f"tensor-core ceilings on {ctx.name} ({ctx.arch}, {sms} SMs), median of {args.iters}; "
          f"accumulator sums finite: {finite}")
    sampler.stop()
    print(f"  {'kernel':<52} {'ms':>8} {'TFLOP/s':>9} {'SM MHz':>7} {'W':>5} {'TF/GHz':>7} {'regs':>5}")
    for label, ms, tf, clk, regs in rows:
        clock = f"{clk[0]:7.0f} {clk[1]:5.0f} {tf / clk[0] * 1e3:7.1f}" if clk else f"{'-':>7} {'-':>5} {'-':>7}"
        print(f"  {label:<52} {ms:8.3f} {tf:9.1f} {clock} {'' if regs is None else regs:>5}")
    if stream is not None:
        label, ms, tbs, clk = stream
        clock = f"{clk[0]:7.0f} {clk[1]:5.0f}" if clk else f"{'-':>7} {'-':>5}"
        print(f"  {'operand delivery':<52} {'ms':>8} {'TB/s':>9} {'SM MHz':>7} {'W':>5}")
        print(f"  {label:<52} {ms:8.3f} {tbs:9.2f} {clock}")
    bounds = shared_clock_bounds(rows)
    if bounds:
        print("  at cuBLAS's clock, a kernel of the instruction reaches at most (ceiling per GHz / cuBLAS's per GHz):")
        print(f"  {'cuBLAS GEMM':<16} {'TF/GHz':>7} {'wgmma':>7} {'mma.sync':>9}")
        for n, per_ghz, wg, ms_ in bounds:
            cell = lambda x, w: f"{x:{w}.3f}x" if x is not None else f"{'-':>{w + 1}}"    # noqa: E731
            print(f"  {f'{n}^3':<16} {per_ghz:7.1f} {cell(wg, 6)} {cell(ms_, 8)}")
    return 0 if finite else 1


CUBLAS_LABEL = "cuBLAS bf16 GEMM"


def shared_clock_bounds(rows) -> list:
    """(N, cuBLAS's TFLOP/s per GHz, wgmma bound, mma.sync bound) for each cuBLAS row with a clock, where a
    bound is the best random-operand ceiling row of that instruction per GHz over cuBLAS's per GHz (None
    where no such row has a clock). rows are main's (label, ms, TFLOP/s, (MHz, W, C) or None, regs)."""
    def per_ghz(r):
        return r[2] / r[3][0] * 1e3

    def best(prefix):
        got = [per_ghz(r) for r in rows if r[0].startswith(prefix) and r[3] and "pattern" not in r[0]
               and "copied" not in r[0]]
        return max(got) if got else None

    wg, ms_ = best("wgmma "), best("mma.sync ")
    out = []
    for r in rows:
        if r[0].startswith(CUBLAS_LABEL + " ") and r[3]:
            n = int(r[0][len(CUBLAS_LABEL) + 1:].split("^")[0])
            g = per_ghz(r)
            out.append((n, g, None if wg is None else wg / g, None if ms_ is None else ms_ / g))
    return out


if __name__ == "__main__":
    sys.exit(main())
