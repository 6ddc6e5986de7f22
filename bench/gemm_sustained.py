"""Sustained bf16 GEMM throughput with the SM clock and board power it runs at.

bench/gemm.py times short bursts in alternation with cuBLAS; this script runs each kernel back to back
for --seconds (input sets rotated) after --warm seconds of the same work, so the GPU settles at the
clock its power limit allows for that kernel, and samples `nvidia-smi` (SM clock, power draw,
temperature) every 50 ms meanwhile. It prints, per size and kernel, the sustained TFLOP/s, the ratio
to cuBLAS's sustained TFLOP/s (the mean of its passes when --kernels names cublas more than once),
the median SM clock and power over the timed window, and the TFLOP/s per GHz (what the kernel does
with the clock it gets).

    python3 bench/gemm_sustained.py [--sizes 4096x4096x4096,...] [--seconds 2] [--warm 1]
           [--kernels cublas,hopper,hopper-full,ampere,ampere-pers] [--layout nt|nn]

--layout picks the product every kernel computes: nt (the default), C = A @ B^T with B stored N x K,
or nn, C = A @ B with B stored K x N (row-major); cuBLAS, the named kernels, hopper-auto and the
ampere kinds follow it, and a hopper:FIELDS kind must name the same layout.

hopper is gemm_hopper's default kernel on its balanced persistent grid (the fewest CTAs that finish
in the same number of rounds: 128 for the square sizes), hopper-auto the configuration
gemm_hopper.choose picks for each size (named under the table), hopper-full the same kernel on one CTA per SM,
hopper-storer the variant whose epilogue two producer warps copy out with 16-byte stores
(epi="storer") instead of the default's TMA stores, hopper-c2 the default kernel in clusters of 2 CTAs
that multicast B (a third less L2-to-SM traffic per FLOP), hopper-m256 the 256 x 192 block tile
(bm=256, bn=192, 3 stages: a fifth fewer operand bytes into each SM per FLOP), hopper-m192 the
192 x 256 block tile of three consumer warpgroups (the same bytes per FLOP; rows split between 192-
and 128-row tiles by gemm_hopper.split_for; a tile's second epilogue pass waits in registers through
the first N part of the next tile's first k-block), hopper-m192h0 the same with both passes written at
the tile's end (hold=0), hopper-m192ring the same with the epilogue buffers in the stage of a
tile's last k-block (epi="ring", 4 stages instead of 3), hopper-m192k32 the same with 4 stages of
K 32, which leaves room for a whole 64 x 256 epilogue buffer per consumer (one pass a tile),
hopper-p0 the 192 x 256 tile in raster groups of 16 without a producer warpgroup (producer=0: three
consumer warpgroups of whole m64n256k16, one of whose threads issues the loads), hopper-p0h0 the same
with both epilogue passes at the tile's end, hopper-p0n192 its 192 x 192 tiles (m64n192k16, one
epilogue pass a tile), hopper-sk those tiles in stream-K (Config.sk: whole rounds, then the rest of
the k-blocks shared evenly, split tiles summed through a workspace), hopper-sk128 stream-K in the
128 x 256 kernel with a producer warpgroup (lag 0, both epilogue passes at a tile's end), hopper-sk2 the
same with every part of a split tile summing a slice of it through the workspace, hopper-sk3 the same with a
tile's parts launched as one cluster that sums through distributed shared memory (no workspace; shapes with
at most as many tiles as CTAs), hopper-p0n192c2 and
hopper-p0c2 the 192 x 192 and 192 x 256 (hold=0) producer-less kernels in clusters of 2 CTAs that share A
through TMA multicast, hopper-p0n192lw and hopper-p0n192c2lw the 192 x 192 kernel (without and with
the cluster) with a loading warp of its own (Config.lwarp), and
hopper:FIELDS any gemm_hopper Config on
its balanced grid, FIELDS as Config.parse takes them (e.g. hopper:nt:1:6:1:8:32:256:tma:192), with
@SPLIT after them a bm=192 kernel's m_split instead of split_for's choice;
ampere is gemm_ampere's default tile with one CTA per tile, ampere-pers the same on its persistent grid,
and ampere:FIELDS / ampere-pers:FIELDS any gemm_ampere Tile (its fields in order, e.g.
ampere-pers:256:64:3:8:smem:1) on those grids.
Per-call CUDA-event times over the window give the median; input sets rotate. With --batch N the
events bracket N consecutive calls and a call's time is their mean, so kernels launched with
programmatic dependent launch (hopper:FIELDS with Config.pdl=1) can overlap their neighbours as they
would in a stream without events between them.
"""
import argparse
import os
import statistics
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "samples"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _gpu import (HOPPER_NAMED, add_layout_option, ampere_kernels, as_kn, b_shape, gpu_or_reason,  # noqa: E402
                  hopper_named, mnk, parse_kinds)
from gpuclock import Sampler  # noqa: E402

SETS = 3            # input sets rotated (--sets)
KINDS = ("cublas", "hopper", "hopper-auto", "hopper-full", *[x for x in HOPPER_NAMED if x != "hopper"], "ampere",
         "ampere-pers")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="4096x4096x4096,6144x6144x6144,8192x8192x8192,8192x2048x16384")
    ap.add_argument("--seconds", type=float, default=2.0, help="timed window per kernel (default 2)")
    ap.add_argument("--warm", type=float, default=1.0, help="untimed run-up per kernel (default 1)")
    ap.add_argument("--sets", type=int, default=SETS,
                    help=f"input sets rotated between calls (default {SETS}; 1 lets small operands stay in L2)")
    ap.add_argument("--kernels", default=",".join(KINDS),
                    help=f"comma-separated, from {', '.join(KINDS)}, hopper:FIELDS[@SPLIT] (any gemm_hopper Config), "
                         "or ampere:FIELDS / ampere-pers:FIELDS (any gemm_ampere Tile, one CTA per tile / persistent)")
    ap.add_argument("--batch", type=int, default=1,
                    help="calls timed together between two CUDA events, ms being their mean (default 1: each "
                         "call on its own; more lets consecutive kernels overlap, as programmatic dependent "
                         "launch (gemm_hopper Config.pdl) needs, since an event between them keeps them apart)")
    add_layout_option(ap)
    args = ap.parse_args(argv)
    layout = args.layout
    kinds, extra, ampere_extra = parse_kinds(ap, args.kernels, KINDS, layout)
    extra = {x: (cfg, split, True) for x, (cfg, split) in extra.items()}     # on the balanced grid
    import gemm_hopper as h
    if args.seconds <= 0 or args.warm < 0:
        ap.error("--seconds must be > 0 and --warm >= 0")
    if args.sets < 1:
        ap.error("--sets must be >= 1")
    if args.batch < 1:
        ap.error("--batch must be >= 1")
    sets = args.sets
    try:
        sizes = [mnk(t) for t in args.sizes.split(",")]
    except ValueError:
        ap.error(f"--sizes takes MxNxK,...; got {args.sizes!r}")

    gpu = gpu_or_reason()
    if gpu is None:
        return 1
    torch, ctx = gpu
    import gemm_ampere as g
    from ptxgen.runtime import load_module
    hopper_ok = ctx.arch.startswith("sm_90")
    # kind -> (config, m_split or None for split_for's, balanced grid); hopper and hopper-full are the same kernel on two grids
    named = hopper_named(layout)
    hopper_kinds = {**{kind: (cfg, None, True) for kind, cfg in named.items()},
                    "hopper-full": (named["hopper"], None, False), **extra}
    if hopper_ok:
        # hopper-auto: per size, the configuration gemm_hopper.choose picks from auto_configs
        cfgs = list(dict.fromkeys([c_ for c_, _, _ in hopper_kinds.values()] + list(h.auto_configs(layout))))
        hmod = load_module(h.build("sm_90a", cfgs).emit())
        funcs = {c_: h.prepare(hmod, c_) for c_ in cfgs}
        slots = {c_: h.resident_ctas(f_, c_, ctx.sm_count) for c_, f_ in funcs.items()}
    ampere_kinds = {"ampere": (g.TILE, False), "ampere-pers": (g.TILE, True), **ampere_extra}
    ampere_funcs = ampere_kernels(ctx.arch, {x: v for x, v in ampere_kinds.items() if x in kinds}, layout)
    sampler = Sampler()
    rows = []
    chosen = {}     # size -> the configuration hopper-auto ran
    try:
        for (m, n, k) in sizes:
            gen = torch.Generator(device="cuda").manual_seed(m + n + k)
            A = [torch.randn(m, k, device="cuda", generator=gen).to(torch.bfloat16) for _ in range(sets)]
            # B as stored: N x K for nt (used transposed), K x N for nn
            B = [torch.randn(b_shape(layout, n, k), device="cuda", generator=gen).to(torch.bfloat16)
                 for _ in range(sets)]
            C = [torch.empty(m, n, device="cuda", dtype=torch.bfloat16) for _ in range(sets)]
            calls = {"cublas": lambda i: torch.matmul(A[i], as_kn(B[i], layout), out=C[i])}
            # the kernels' launches are checked and packed once per input set (bind), outside the timing
            for kind, (ft, tile, pers) in ampere_funcs.items():
                ctas = g.resident_ctas(ctx.sm_count, tile) if pers else None
                bound = [g.bind(ft, A[i], B[i], C[i], m, n, k, tile, ctas=ctas) for i in range(sets)]
                calls[kind] = lambda i, bound=bound: bound[i]()
            if hopper_ok:
                c_auto = h.choose(m, n, k, layout, ctx.sm_count, ctx.l2_bytes)
                chosen[f"{m}x{n}x{k}"] = c_auto.name
                maps, workspaces = {}, []
                for kind, (c_, split, balanced) in list(hopper_kinds.items()) + [("hopper-auto", (c_auto, None, True))]:
                    if kind not in kinds:
                        continue
                    if c_ not in maps:
                        maps[c_] = [h.tensor_maps(c_, A[i], B[i], m, n, k, c=C[i]) for i in range(sets)]
                    # stream-K: one workspace serves every input set (the launches run one after another)
                    ws = h.workspace(c_, m, n, k, slots[c_])
                    bound = [h.bind(funcs[c_], c_, maps[c_][i], C[i], m, n, k, slots[c_], balanced=balanced,
                                    m_split=split, workspace=ws) for i in range(sets)]
                    workspaces.append(ws)
                    calls[kind] = lambda i, bound=bound: bound[i]()
            flops = 2.0 * m * n * k
            for kind in kinds:
                if kind not in calls:
                    print(f"{kind}: skipped (needs sm_90a)")
                    continue
                call = calls[kind]
                t_end = time.time() + args.warm
                i = 0
                while time.time() < t_end:            # run-up: the clock settles for this kernel
                    call(i % sets)
                    i += 1
                    if i % 20 == 0:
                        torch.cuda.synchronize()
                torch.cuda.synchronize()
                evs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                       for _ in range(10)]
                times = []
                w0 = time.time()
                n_calls = 0
                while time.time() - w0 < args.seconds:
                    for e0, e1 in evs:
                        e0.record()
                        for _ in range(args.batch):   # --batch calls back to back between two events
                            call(n_calls % sets)
                            n_calls += 1
                        e1.record()
                    torch.cuda.synchronize()          # keeps the queue short, so the wall window is the GPU's
                    times += [e0.elapsed_time(e1) / args.batch for e0, e1 in evs]
                w1 = time.time()
                ms = statistics.median(times)
                # the last call wrote C[(n_calls - 1) % sets]; check it against float32
                j = (n_calls - 1) % sets
                ref = A[j].float() @ as_kn(B[j].float(), layout)
                err = float(torch.linalg.norm(C[j].float() - ref) / torch.linalg.norm(ref))
                clk = sampler.window(w0 + 0.2 * (w1 - w0), w1)
                rows.append(dict(size=f"{m}x{n}x{k}", kernel=kind, calls=n_calls, ms=ms, tflops=flops / ms / 1e9,
                                 err=err, clk=clk))
                del ref
            A = B = C = calls = None   # release this size's tensors (the call table's launches hold their pointers)
            torch.cuda.empty_cache()
    finally:
        sampler.stop()
    product = "nt: C = A @ B^T" if layout == "nt" else "nn: C = A @ B"
    print(f"\nsustained bf16 GEMM ({product}) on {ctx.name} ({ctx.arch}, {ctx.sm_count} SMs): "
          f"{args.seconds:g} s back to back per kernel after {args.warm:g} s of run-up"
          + (f", timed in batches of {args.batch} calls" if args.batch > 1 else "") + "; clock, power and "
          "temperature are nvidia-smi medians over the last 80 % of the window; ms is the median per call; x cuBLAS "
          "is against the mean of the size's cublas passes")
    width = max([10] + [len(x) for x in kinds])
    print(f"{'M x N x K':>16} {'kernel':<{width}} {'calls':>6} {'ms':>7} {'TFLOP/s':>8} {'x cuBLAS':>9} {'SM MHz':>7} "
          f"{'W':>6} {'C':>4} {'TF/GHz':>7} {'rel err':>9}")
    # cuBLAS's own sustained rate moves by a few % between passes of one run: with several cublas passes
    # per size (e.g. first and last, to bracket the others) the ratio is to their mean
    passes = {}
    for r in rows:
        if r["kernel"] == "cublas":
            passes.setdefault(r["size"], []).append(r["tflops"])
    base = {size: statistics.mean(v) for size, v in passes.items()}
    for r in rows:
        ratio = f"{r['tflops'] / base[r['size']]:9.3f}" if r["size"] in base else f"{'-':>9}"
        if r["clk"] is None:
            clk = f"{'n/a':>7} {'n/a':>6} {'n/a':>4} {'n/a':>7}"
        else:
            mhz, watts, temp = r["clk"]
            clk = f"{mhz:7.0f} {watts:6.0f} {temp:4.0f} {r['tflops'] / (mhz / 1000):7.1f}"
        print(f"{r['size']:>16} {r['kernel']:<{width}} {r['calls']:6d} {r['ms']:7.3f} {r['tflops']:8.1f} {ratio} {clk} "
              f"{r['err']:9.2e}")
    if "hopper-auto" in kinds and chosen:
        print(f"hopper-auto (gemm_hopper.choose, L2 {ctx.l2_bytes / 2**20:g} MiB): "
              + ", ".join(f"{size} {name}" for size, name in chosen.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
