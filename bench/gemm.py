"""bf16 GEMM: samples/gemm_hopper.py (TMA + wgmma, warp-specialized) and samples/gemm_ampere.py
(mma.sync, cp.async pipeline) against torch.matmul (cuBLAS).

For each size (M x N x K): random normal bf16 inputs, several input sets rotated between calls so
the 50 MB L2 cannot keep one set resident, warm-up, then CUDA-event timing of each call (median of
ITERS). Each kernel's calls alternate with cuBLAS calls of the same B layout and the ratio uses those
cuBLAS timings: clocks fall as the GPU heats up over a run, and a reference measured once at the
start flatters it. Error: relative Frobenius norm of (C - ref) against a float32 reference (TF32 off).
Prints one table; `--json PATH` also writes the raw numbers.

    python3 bench/gemm.py [--iters 40] [--kernels hopper,ampere] [--settle 2] [--json out.json]

Before each size's timings cuBLAS runs back to back for --settle seconds (untimed): the board's
clock and temperature after an idle spell flatter whichever kernel is timed first (bench/LOG.md
round 19: about 2.5 % at 6144^3).
"""
import argparse
import json
import os
import statistics
import sys
import time


ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "samples"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _gpu import gpu_or_reason  # noqa: E402

SIZES = [(4096, 4096, 4096), (6144, 6144, 6144), (8192, 8192, 8192), (8192, 2048, 16384)]
SETS = 3            # input sets rotated per call
KINDS = ("hopper", "hopper-auto", "ampere", "ampere-all")
# gemm_ampere tiles as Tile fields (bn, bk, stages, warps, epi, min_blocks[, group]): "ampere" times the
# sample's default tile, "ampere-all" every one of AMPERE_ALL; GEMM_AMPERE_CONFIGS="256:32:4:8:smem:1:16,..."
# overrides both
AMPERE_ALL = [(128, 32, 4, 8, "direct", 1), (128, 32, 4, 8, "direct", 2), (256, 32, 4, 8, "direct", 1),
              (256, 64, 3, 8, "direct", 1), (256, 64, 4, 8, "direct", 1), (256, 32, 4, 8, "smem", 1),
              (256, 32, 4, 8, "smem", 1, 16), (128, 32, 4, 4, "smem", 2)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iters", type=int, default=40)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--json", default=None)
    ap.add_argument("--kernels", default="hopper,ampere",
                    help="comma-separated: hopper (every gemm_hopper config; GEMM_HOPPER_CONFIGS="
                         "'nt:1:4:1:8:64:256:tma[:256],...', Config's fields in order, picks others), hopper-auto "
                         "(nt, the configuration gemm_hopper.choose picks for each size), ampere (gemm_ampere's default tile), ampere-all "
                         "(every tile of AMPERE_ALL; GEMM_AMPERE_CONFIGS='256:32:4:8:smem:1:16,...' picks others)")
    ap.add_argument("--sizes", default=None, help="MxNxK,... (default: the four sizes of the table)")
    ap.add_argument("--settle", type=float, default=2.0,
                    help="seconds of back-to-back cuBLAS calls before each size's timings, untimed, so the "
                         "first kernel timed is not run on a board still cool from idling (bench/LOG.md round "
                         "19: about 2.5 %% higher ratios than the same kernel later in the run); 0: none "
                         "(default %(default)s)")
    ap.add_argument("--ampere-grid", default="tiles", choices=("tiles", "persistent", "both"),
                    help="gemm_ampere launch: one CTA per tile, a persistent grid (gemm_ampere.persistent_grid), "
                         "or both (default %(default)s)")
    args = ap.parse_args(argv)
    if not args.settle >= 0:
        ap.error(f"--settle takes seconds >= 0; got {args.settle}")
    unknown = sorted(set(args.kernels.split(",")) - set(KINDS))
    if unknown:
        ap.error(f"--kernels: unknown {', '.join(unknown)} (known: {', '.join(KINDS)})")

    import gemm_hopper as h
    try:
        hopper_configs = h.CONFIGS if not os.environ.get("GEMM_HOPPER_CONFIGS") else \
            [h.Config.parse(c) for c in os.environ["GEMM_HOPPER_CONFIGS"].split(",")]
    except ValueError as e:
        ap.error(f"GEMM_HOPPER_CONFIGS: {e}")
    gpu = gpu_or_reason()
    if gpu is None:
        return 1
    torch, ctx = gpu
    import gemm_ampere as g
    import gemm_hopper as h
    from ptxgen.ptxas import assemble
    from ptxgen.runtime import Event, load_module, time_kernel
    target = ctx.arch

    kinds = set(args.kernels.split(","))
    sizes = SIZES if args.sizes is None else [tuple(int(v) for v in t.split("x")) for t in args.sizes.split(",")]
    sms = ctx.sm_count
    variants = {}   # label -> (launch(i, A, B, BT, C, m, n, k) for input set i, layout)
    bound_caches = []  # per-variant caches of bound launches keyed by (input set, M, N, K), emptied after each size

    def bound_per_set(make):
        """A variant's launch(i, A, B, BT, C, m, n, k) that calls make(...) once per input set and shape,
        outside the timing, and then only issues the (BoundLaunch, what it must keep alive) it returned."""
        cache = {}
        bound_caches.append(cache)

        def run(i, A, B, BT, C, m, n, k):
            key = (i, m, n, k)
            if key not in cache:
                cache[key] = make(i, A, B, BT, C, m, n, k)
            cache[key][0]()
        return run

    # gemm_ampere tiles as (min_blocks, bn, bk, stages)
    if os.environ.get("GEMM_AMPERE_CONFIGS"):
        ampere = [g.Tile(*(int(x) if x.isdigit() else x for x in c.split(":")))
                  for c in os.environ["GEMM_AMPERE_CONFIGS"].split(",")]
    else:
        ampere = [] if not kinds & {"ampere", "ampere-all"} else \
            [g.Tile(*t) for t in AMPERE_ALL] if "ampere-all" in kinds else [g.TILE]
    for tile in ampere:
        ptx = g.build(target, tile).emit()
        res = assemble(ptx, target)
        mod = load_module(ptx)
        slots = g.resident_ctas(sms, tile)
        grids = {"tiles": [None], "persistent": [slots], "both": [None, slots]}
        for layout in ("nn", "nt"):
            f = g.prepare(mod, layout, tile)
            r = res.resources[g.KERNELS[layout]]
            for ctas in grids[args.ampere_grid]:
                label = f"mma.sync {layout} {tile.name}" + ("" if ctas is None else " pers")
                variants[label] = (bound_per_set(
                    lambda i, A, B, BT, C, m, n, k, f=f, layout=layout, tile=tile, ctas=ctas:
                    (g.bind(f, A[i], (B if layout == "nn" else BT)[i], C[i], m, n, k, tile, ctas=ctas),)), layout)
                print(f"[ptxas] {label}: {r.registers} regs, {r.spill_stores} B spill st, {r.spill_loads} B spill "
                      f"ld, {tile.smem_bytes} B dynamic smem, {tile.threads} threads")
    if "hopper" in kinds and target.startswith("sm_90"):
        configs = hopper_configs
        ptx = h.build("sm_90a", configs).emit()
        res = assemble(ptx, "sm_90a")
        mod = load_module(ptx)
        for cfg in configs:
            f = h.prepare(mod, cfg)
            ctas = h.resident_ctas(f, cfg, sms)
            r = res.resources[cfg.name]
            label = "wgmma " + cfg.name[len("gemm_hopper_"):].replace("_", " ")
            def make_h(i, A, B, BT, C, m, n, k, f=f, cfg=cfg, ctas=ctas):
                maps = h.tensor_maps(cfg, A[i], (B if cfg.layout == "nn" else BT)[i], m, n, k, c=C[i])
                ws = h.workspace(cfg, m, n, k, ctas)     # stream-K (Config.sk) only; kept with the launch
                return h.bind(f, cfg, maps, C[i], m, n, k, ctas, workspace=ws), ws
            variants[label] = (bound_per_set(make_h), cfg.layout)
            print(f"[ptxas] {label}: {r.registers} regs, {r.spill_stores} B spill st, {r.spill_loads} B spill ld, "
                  f"{h.smem_bytes(cfg)} B dynamic smem, {cfg.threads} threads, {ctas} resident CTAs")

    if "hopper-auto" in kinds and target.startswith("sm_90"):
        # one variant that runs, for each size, the configuration gemm_hopper.choose picks
        autos = h.auto_configs("nt")
        mod = load_module(h.build("sm_90a", list(autos)).emit())
        auto_f = {cfg: h.prepare(mod, cfg) for cfg in autos}
        auto_ctas = {cfg: h.resident_ctas(f, cfg, sms) for cfg, f in auto_f.items()}
        picks = {(m, n, k): h.choose(m, n, k, "nt", sms, ctx.l2_bytes) for (m, n, k) in sizes}   # outside the timing
        def make_auto(i, A, B, BT, C, m, n, k):
            cfg = picks[(m, n, k)]
            maps = h.tensor_maps(cfg, A[i], BT[i], m, n, k, c=C[i])
            ws = h.workspace(cfg, m, n, k, auto_ctas[cfg])      # the stream-K pick only; kept with the launch
            return h.bind(auto_f[cfg], cfg, maps, C[i], m, n, k, auto_ctas[cfg], workspace=ws), ws
        variants["wgmma auto (gemm_hopper.choose)"] = (bound_per_set(make_auto), "nt")
        for (m, n, k), cfg in picks.items():
            print(f"[choose] {m}x{n}x{k}: {cfg.name}")

    rows = []
    for (m, n, k) in sizes:
        gen = torch.Generator(device="cuda").manual_seed(m * 31 + n * 7 + k)
        A = [torch.randn(m, k, device="cuda", generator=gen).to(torch.bfloat16) for _ in range(SETS)]
        B = [torch.randn(k, n, device="cuda", generator=gen).to(torch.bfloat16) for _ in range(SETS)]
        BT = [b.t().contiguous() for b in B]                      # N x K: the "nt" layout of the same B
        C = [torch.empty(m, n, device="cuda", dtype=torch.bfloat16) for _ in range(SETS)]
        ref = A[0].float() @ B[0].float()
        ref_norm = torch.linalg.norm(ref)
        flops = 2.0 * m * n * k

        def settle(call):
            """call(i) back to back for --settle seconds of wall time (untimed; the GPU synchronised
            every 16 calls, so the queue stays short)."""
            end, i = time.perf_counter() + args.settle, 0
            while time.perf_counter() < end:
                call(i % SETS)
                i += 1
                if i % 16 == 0:
                    torch.cuda.synchronize()
            torch.cuda.synchronize()

        def timed(call):
            state = {"i": 0}

            def fn():
                i = state["i"] % SETS
                state["i"] += 1
                call(i)
            ms = time_kernel(fn, warmup=args.warmup, iters=args.iters)
            return statistics.median(ms)

        def paired(ref_call, call):
            """Median ms of ref_call and of call, timed alternately (each call between its own pair
            of events, input sets rotated), so both see the same clocks and temperature."""
            def one(f, i, ev):
                ev[0].record()
                f(i % SETS)
                ev[1].record()
            evs = [[(Event(context=ctx), Event(context=ctx)) for _ in range(args.iters)] for _ in range(2)]
            try:
                for i in range(args.warmup):
                    ref_call(i % SETS)
                    call(i % SETS)
                for i in range(args.iters):
                    one(ref_call, i, evs[0][i])
                    one(call, i, evs[1][i])
                evs[1][-1][1].synchronize()
                return [statistics.median(s.elapsed_ms(e) for s, e in evs[j]) for j in (0, 1)]
            finally:
                for pair in evs[0] + evs[1]:
                    for ev in pair:
                        ev.destroy()

        cublas = {"nn": lambda i: torch.matmul(A[i], B[i], out=C[i]),
                  "nt": lambda i: torch.matmul(A[i], BT[i].t(), out=C[i])}
        settle(cublas["nt"])
        results = {}
        for lay in ("nn", "nt"):
            ms = timed(cublas[lay])
            results[f"cuBLAS {lay}"] = (ms, float(torch.linalg.norm(C[0].float() - ref) / ref_norm), ms)
        for label, (call, layout) in variants.items():
            C[0].fill_(float("nan"))
            ref_ms, ms = paired(cublas[layout], lambda i, call=call: call(i, A, B, BT, C, m, n, k))
            torch.cuda.synchronize()
            # C[0] last came from the kernel (the last call of the pair used set (iters - 1) % SETS)
            C[0].fill_(float("nan"))
            call(0, A, B, BT, C, m, n, k)
            torch.cuda.synchronize()
            results[label] = (ms, float(torch.linalg.norm(C[0].float() - ref) / ref_norm), ref_ms)
        for label, (ms, err, ref_ms) in results.items():
            rows.append({"size": f"{m}x{n}x{k}", "kernel": label, "ms": ms, "tflops": flops / ms / 1e9,
                         "cublas_tflops": flops / ref_ms / 1e9, "vs_cublas": ref_ms / ms, "rel_fro_err": err})
        A = B = BT = C = ref = None   # the lambdas above close over these names: drop the tensors, not the names
        for cache in bound_caches:      # their pointers name the tensors just dropped; a size named again binds anew
            cache.clear()
        torch.cuda.empty_cache()

    print(f"\nbf16 GEMM on {ctx.name} ({target}), median of {args.iters} CUDA-event timings after "
          f"{args.warmup} warm-up calls, {SETS} input sets rotated, each size after {args.settle:g} s of cuBLAS "
          "calls; each kernel's calls alternate with cuBLAS calls of the same layout, whose median is the "
          "'cuBLAS' column")
    print(f"{'M x N x K':>18}  {'kernel':<32} {'ms':>8} {'TFLOP/s':>8} {'cuBLAS':>8} {'x cuBLAS':>9} {'rel err':>9}")
    for r in rows:
        print(f"{r['size']:>18}  {r['kernel']:<32} {r['ms']:8.3f} {r['tflops']:8.1f} {r['cublas_tflops']:8.1f} "
              f"{r['vs_cublas']:9.3f} {r['rel_fro_err']:9.2e}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
