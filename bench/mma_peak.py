"""Tensor-core ceilings on this GPU: how many TFLOP/s `mma.sync.m16n8k16` (the Ampere path's
instruction) and `wgmma.mma_async.m64n256k16` (the Hopper path's) sustain with no memory traffic at
all, next to cuBLAS on a GEMM, all in one run (the same clocks and temperature).

- mma.sync: every warp of a persistent grid issues CHAINS independent bf16 -> f32 mma.sync per loop
  iteration on fragments that stay in registers (CHAINS accumulator tiles, so no instruction waits
  for the one before it); warps per SM and chains are swept.
- wgmma: two warpgroups per CTA (one CTA per SM) each issue 4 x m64n256k16 per iteration from
  128-byte-swizzled shared-memory descriptors (A 64 x 64, B 256 x 64, filled once), commit, and
  wait with one group in flight, like gemm_hopper's consumers without the data movement.
- cuBLAS: torch.matmul on random bf16 inputs of the given size, timed in alternation with nothing.

Every kernel stores its accumulators' sum, so nothing is optimised away; the sums are checked to
be finite. Each row runs batches of --iters CUDA-event timings (after warm-up) for at least
--seconds and reports the median call, the median SM clock nvidia-smi saw over the last 80 % of that
window with the board power, and TFLOP/s per GHz: the ceiling per clock that a GEMM's own TFLOP/s per GHz
(bench/gemm_sustained.py) can be held against, whatever clock the power limit leaves each of them.

    python3 bench/mma_peak.py [--iters 20] [--seconds 1] [--size 4096]
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ptxgen as pg  # noqa: E402
from gpuclock import Sampler  # noqa: E402
from ptxgen.ops.wgmma_desc import SmemTile  # noqa: E402

LOOP = 256                 # loop iterations per launch (each kernel runs ~0.5-2 ms)
MMA_FLOP = 16 * 8 * 16 * 2
WGMMA_FLOP = 64 * 256 * 16 * 2
TILE_A = SmemTile(64, 64, "bf16", "K", "128B")
TILE_B = SmemTile(256, 64, "bf16", "K", "128B")


def mma_sync_kernel(m: pg.Module, warps: int, chains: int):
    """mma_sync_peak_w{warps}_c{chains}(out, loops): out[thread] = sum of its accumulators."""
    k = m.entry(f"mma_sync_peak_w{warps}_c{chains}", maxntid=32 * warps)
    pout = k.param_ptr("out", pg.f32, align=4)
    ploops = k.param("loops", pg.u32)
    tid = k.tid.x
    # fragments: small bf16 values derived from the thread index (not zeros: the data path's power
    # depends on the bits)
    seed = k.add(k.and_(tid, 63), 0x3E00)                        # bf16 bit patterns around 0.125
    pair = k.or_(seed, k.shl(k.xor(seed, 5), 16), type=pg.b32)
    fa = [k.xor(pair, i, type=pg.b32) for i in range(4)]
    fb = [k.xor(pair, 7 + i, type=pg.b32) for i in range(2)]
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


def wgmma_kernel(m: pg.Module):
    """wgmma_peak(out, loops): 2 warpgroups, 4 x m64n256k16 per iteration, one group in flight."""
    k = m.entry("wgmma_peak", reqntid=256)
    pout = k.param_ptr("out", pg.f32, align=4)
    ploops = k.param("loops", pg.u32)
    dyn = m.extern_shared("smem_peak", align=1024)
    tid = k.tid.x
    base = k.and_(k.add(k.mov(dyn, type=pg.u32), 1023), ~1023 & 0xFFFFFFFF)
    # fill A (2 x 8 KiB, one per warpgroup) and B (32 KiB) with small bf16 values, 16 bytes a store
    nbytes = 2 * TILE_A.nbytes + TILE_B.nbytes
    val = k.or_(k.add(k.and_(tid, 63), 0x3E00), k.shl(k.add(k.and_(tid, 31), 0x3D80), 16), type=pg.b32)
    vec = [val, k.xor(val, 1, type=pg.b32), k.xor(val, 2, type=pg.b32), k.xor(val, 3, type=pg.b32)]
    with k.for_range(0, nbytes // (256 * 16), name="f") as f:
        off = k.shl(k.mad(f, 256, tid, mode="lo"), 4)
        k.st(k.add(base, off), vec, pg.b32, space="shared")
    k.fence_proxy_async("shared::cta")
    k.bar_sync(0)
    wg = k.shr(tid, 7)
    da = k.wgmma_descriptor(k.mad(wg, TILE_A.nbytes, base, mode="lo"), TILE_A)
    db = k.wgmma_descriptor(k.add(base, 2 * TILE_A.nbytes), TILE_B)
    acc = k.wgmma_fragment("d", "m64n256k16", dtype="f32", atype="bf16", name="acc")
    for r in acc:
        k.mov(0.0, dst=r)
    with k.for_range(0, k.ld_param(ploops), name="it"):
        k.wgmma_fence()
        for step in range(4):
            a_off, b_off = TILE_A.slice_offset(step) >> 4, TILE_B.slice_offset(step) >> 4
            k.wgmma_mma_async("m64n256k16", acc, k.add(da, a_off, type=pg.u64) if a_off else da,
                              k.add(db, b_off, type=pg.u64) if b_off else db,
                              dtype="f32", atype="bf16", btype="bf16")
        k.wgmma_commit_group()
        k.wgmma_wait_group(1)
    k.wgmma_wait_group(0)
    total = k.mov(0.0, type=pg.f32)
    for r in acc:
        k.add(total, r, dst=total)
    gid = k.mad(k.ctaid.x, 256, tid, mode="lo")
    k.st(k.add(k.cvta(k.ld_param(pout), "global", to=True), k.mul(gid, 4, mode="wide")), total)
    k.ret()
    return k, nbytes + 1024


MMA_SHAPES = [(8, 32), (8, 16), (16, 16), (4, 32)]     # (warps per CTA, chains per warp)


def build(target: str):
    m = pg.Module(target)
    for w, c in MMA_SHAPES:
        mma_sync_kernel(m, w, c)
    smem = None
    if target.startswith("sm_90"):
        smem = wgmma_kernel(m)[1]
    return m, smem


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=1.0,
                    help="time each row for at least this long (clock samples need a window; default 1)")
    ap.add_argument("--size", type=int, default=4096, help="cuBLAS reference: an N x N x N bf16 GEMM")
    args = ap.parse_args(argv)
    if args.iters < 1 or args.warmup < 0 or args.seconds < 0 or args.size < 16:
        ap.error("--iters must be >= 1, --warmup and --seconds >= 0, --size >= 16")

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
    if wg_smem is not None:
        f = mod.function("wgmma_peak")
        f.set_max_dynamic_shared(wg_smem)
        flop = sms * 2 * LOOP * 4 * WGMMA_FLOP
        ms, tf, clk = timed(lambda: f.launch((sms,), (256,), [out, np.uint32(LOOP)], shared_bytes=wg_smem), flop)
        rows.append(("wgmma m64n256k16 bf16, 2 warpgroups/SM", ms, tf, clk, res.resources["wgmma_peak"].registers))
    sums = out.to_numpy()
    finite = bool(np.isfinite(sums[:sms * 256]).all())
    try:
        import torch
        n = args.size
        a = torch.randn(n, n, device="cuda").to(torch.bfloat16)
        b = torch.randn(n, n, device="cuda").to(torch.bfloat16)
        c = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
        ms, tf, clk = timed(lambda: torch.matmul(a, b, out=c), 2.0 * n ** 3)
        rows.append((f"cuBLAS bf16 GEMM {n}^3", ms, tf, clk, None))
    except ImportError:
        print("torch not found: no cuBLAS row")
    print(f"tensor-core ceilings on {ctx.name} ({ctx.arch}, {sms} SMs), median of {args.iters}; "
          f"accumulator sums finite: {finite}")
    sampler.stop()
    print(f"  {'kernel':<52} {'ms':>8} {'TFLOP/s':>9} {'SM MHz':>7} {'W':>5} {'TF/GHz':>7} {'regs':>5}")
    for label, ms, tf, clk, regs in rows:
        clock = f"{clk[0]:7.0f} {clk[1]:5.0f} {tf / clk[0] * 1e3:7.1f}" if clk else f"{'-':>7} {'-':>5} {'-':>7}"
        print(f"  {label:<52} {ms:8.3f} {tf:9.1f} {clock} {'' if regs is None else regs:>5}")
    return 0 if finite else 1


if __name__ == "__main__":
    sys.exit(main())
