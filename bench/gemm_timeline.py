"""Where a launch of gemm_hopper's 128 x 256 kernel spends its time, CTA by CTA (Config.trace).

The traced kernel stamps %globaltimer (ns) at points of each CTA's life: its start, the consumers
holding their registers, their first stage arriving, each tile's epilogue handed off, the consumers
done, and the last TMA store of C complete. This script launches it --launches times on random bf16
inputs (after --warmup launches), checks the product against float32, and prints, as medians over
the launches, how the kernel's span (first CTA start to last C written) splits into phases:

    start skew        the last CTA's start after the first's
    setup             a CTA's start to its consumers holding their registers (median / max over CTAs)
    first stage       ... to their first stage of operands arriving
    first tile        ... to the first tile's hand-off
    later tiles       the time between hand-offs
    last epilogue     the last hand-off to the consumers' end (the held pass written)
    C written         the consumers' end to the last TMA store complete
    end skew          the last CTA's C written after the first's

next to the launch's CUDA-event time (which also holds the launch's own overhead).

    python3 bench/gemm_timeline.py [--size 4096x4096x4096] [--config nt:1:4:0:8:64:256:tma]
           [--launches 20] [--warmup 3]

--config takes gemm_hopper Config fields as Config.parse does (trace=1 is added); the default is
the 128 x 256 kernel `choose` picks (its configuration with trace=1). %globaltimer's resolution is the
GPU's (tens of ns to 1 µs); the phases are medians over CTAs and launches, so they are finer than one tick.
"""
import argparse
import dataclasses
import os
import statistics
import sys

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "samples"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _gpu import gpu_or_reason, mnk  # noqa: E402

PHASES = ("span", "start skew", "setup", "first stage", "first tile", "later tiles", "last epilogue",
          "C written", "end skew")


def phases(t: dict) -> dict:
    """{phase: (median, max) over the CTAs, in ns} of one launch's decoded trace (gemm_hopper.read_trace);
    "span", "start skew" and "end skew" are one number each (median = max). CTAs without a tile count
    only in the skews and setup. Raises ValueError for a trace in which no CTA had a tile."""
    start = t["start"].astype(np.int64)
    written = t["c_written"].astype(np.int64)
    tiles = t["tiles"].astype(np.int64)
    counts = (tiles > 0).sum(axis=1)
    busy = counts > 0
    if not busy.any():
        raise ValueError("no CTA recorded a tile: not a trace of a launch that did work")
    rows = np.flatnonzero(busy)
    last = tiles[rows, counts[rows] - 1]

    def stat(x):
        x = np.asarray(x, dtype=np.int64)
        return (float(np.median(x)), float(x.max())) if x.size else (0.0, 0.0)

    later = np.concatenate([np.diff(tiles[r, :counts[r]]) for r in rows])
    span = float(written.max() - start.min())
    return {
        "span": (span, span),
        "start skew": (float(start.max() - start.min()),) * 2,
        "setup": stat(t["setup"].astype(np.int64) - start),
        "first stage": stat(t["first_stage"].astype(np.int64)[rows] - t["setup"].astype(np.int64)[rows]),
        "first tile": stat(tiles[rows, 0] - t["first_stage"].astype(np.int64)[rows]),
        "later tiles": stat(later),
        "last epilogue": stat(t["consumers_done"].astype(np.int64)[rows] - last),
        "C written": stat(written[rows] - t["consumers_done"].astype(np.int64)[rows]),
        "end skew": (float(written.max() - written.min()),) * 2,
    }


def parse_size(ap, text: str):
    try:
        m, n, k = mnk(text)
    except ValueError:
        ap.error(f"--size takes MxNxK; got {text!r}")
    if min(m, n, k) < 1:
        ap.error(f"--size takes positive MxNxK; got {text!r}")
    return m, n, k


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", default="4096x4096x4096", help="MxNxK (default %(default)s)")
    ap.add_argument("--config", default=None,
                    help="gemm_hopper Config fields (Config.parse); default: choose's 128 x 256 kernel")
    ap.add_argument("--launches", type=int, default=20, help="traced launches (default %(default)s)")
    ap.add_argument("--warmup", type=int, default=3, help="launches before them (default %(default)s)")
    args = ap.parse_args(argv)
    m, n, k = parse_size(ap, args.size)
    if args.launches < 1 or args.warmup < 0:
        ap.error("--launches must be >= 1 and --warmup >= 0")
    import gemm_hopper as h
    try:
        cfg = h.Config.parse(args.config) if args.config else h.auto_configs("nt")[0]
        cfg = dataclasses.replace(cfg, trace=1).check()
        h.check_shape(m, n, k)
    except ValueError as e:
        ap.error(str(e))

    gpu = gpu_or_reason()
    if gpu is None:
        return 1
    torch, ctx = gpu
    from ptxgen.runtime import load_module
    f = h.prepare(load_module(h.build("sm_90a", [cfg]).emit()), cfg)
    ctas = h.resident_ctas(f, cfg, ctx.sm_count)
    grid = h.grid_for(cfg, m, n, ctas)
    gen = torch.Generator(device="cuda").manual_seed(m + n + k)
    a = torch.randn(m, k, device="cuda", generator=gen).to(torch.bfloat16)
    bt = torch.randn((n, k) if cfg.layout == "nt" else (k, n), device="cuda", generator=gen).to(torch.bfloat16)
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    tr = torch.zeros(h.trace_bytes(grid) // 8, device="cuda", dtype=torch.int64)
    maps = h.tensor_maps(cfg, a, bt, m, n, k, c=c)
    call = h.bind(f, cfg, maps, c, m, n, k, ctas, trace=tr)
    for _ in range(args.warmup):
        call()
    per_launch, ms = [], []
    for _ in range(args.launches):
        tr.zero_()
        c.fill_(float("nan"))
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        call()
        e1.record()
        torch.cuda.synchronize()
        ms.append(e0.elapsed_time(e1))
        per_launch.append(phases(h.read_trace(tr.cpu().numpy().view(np.uint64), grid)))
    ref = a.float() @ (bt.float().t() if cfg.layout == "nt" else bt.float())
    err = float(torch.linalg.norm(c.float() - ref) / torch.linalg.norm(ref))
    print(f"{cfg.name} on {ctx.name}: {m}x{n}x{k}, {grid} CTAs, {args.launches} traced launches; "
          f"relative Frobenius error of the last {err:.2e}")
    span = statistics.median(p["span"][0] for p in per_launch)
    print(f"CUDA-event time per launch (median): {statistics.median(ms) * 1e3:.1f} us")
    print(f"  {'phase':<14} {'median us':>10} {'max us':>8} {'of span':>8}")
    for name in PHASES:
        med = statistics.median(p[name][0] for p in per_launch) / 1e3
        mx = statistics.median(p[name][1] for p in per_launch) / 1e3
        print(f"  {name:<14} {med:10.2f} {mx:8.2f} {med * 1e3 / span:8.1%}")
    if not err < 1e-2:
        print("wrong result")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
