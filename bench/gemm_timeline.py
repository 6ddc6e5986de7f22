"""Where a launch of gemm_hopper's 128 x 256 kernel spends its time, CTA by CTA (Config.trace).

The traced kernel stamps %globaltimer (ns) at points of each CTA's life: its start, the consumers
holding their registers, the loading thread's first stage of TMA loads issued, that stage arriving, each tile's epilogue handed off (stream-K: each
work item's last k-block done), the consumers past their last tile, the consumers done, and the last
TMA store of C complete. This script launches it --launches times on random bf16
inputs (after --warmup launches), checks the product against float32, and prints, as medians over
the launches, how the kernel's span (first CTA start to last C written) splits into phases:

    start skew        the last CTA's start after the first's
    setup             a CTA's start to its consumers holding their registers (median / max over CTAs)
    first issue       a CTA's start to its loading thread's first stage of TMA loads issued (beside setup:
                      another thread's)
    first stage       the consumers holding their registers to their first stage of operands arriving
    first tile        ... to the first tile's hand-off
    later tiles       the time between hand-offs
    last epilogue     the last hand-off to the consumers past their last tile (the held pass written)
    stream-K sum      ... to the consumers' end: with Config(sk=2), waiting for the parts of the parked
                      tiles and summing and storing this CTA's slices of them (0 otherwise)
    C written         the consumers' end to the last TMA store complete (0 where the consumers store last)
    end skew          the last CTA's C written after the first's

next to the launch's CUDA-event time (which also holds the launch's own overhead).

    python3 bench/gemm_timeline.py [--size 4096x4096x4096] [--config nt:1:4:0:8:64:256:tma]
           [--launches 20] [--warmup 3] [--sets 1] [--save stamps.npz]

--sets N rotates the launches over N sets of inputs (each with its own A, B and C), so that a shape whose
operands fit in L2 is not timed on operands the launch before left there: with one set, a launch of
8 x 4096 x 4096 reads its 32 MB of B from L2, not DRAM. Every set's product is checked.

--config takes gemm_hopper Config fields as Config.parse does (trace=1 is added), or "sk1" / "sk2" / "sk3" for
the 128 x 256 stream-K kernels `choose` picks from (sk=3 sums in its clusters' shared memory); the
default is the 128 x 256 kernel `choose` picks (its configuration with trace=1). A stream-K kernel runs on
sk_plan's grid with a workspace of its own (sk=3: none).
%globaltimer's resolution is the GPU's (tens of ns to 1 µs); the phases are medians over CTAs and
launches, so they are finer than one tick.

Each stamp also reads the SM's %clock64, so the phases inside a CTA are given in SM cycles too, and
their ratio is the clock the SMs ran at in that phase. A second table ranks the SMs by how long their
CTA took from its first stage to its consumers' end, against the launch's median CTA: the CTAs that
end last set the span ("end skew"), and an SM that is slow in most launches points at the chip, not
at chance. --save writes every launch's raw stamps (read_trace's words) to an .npz file.
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

from _gpu import as_kn, b_shape, gpu_or_reason, mnk  # noqa: E402

PHASES = ("span", "start skew", "setup", "first issue", "first stage", "first tile", "later tiles", "last epilogue",
          "stream-K sum", "C written", "end skew")
CTA_PHASES = PHASES[2:-1]          # the phases inside one CTA, which %clock64 also measures


def _busy(t: dict):
    """(rows of the CTAs that had a tile, each one's last tile stamp, each one's tile count) of a decoded
    trace (its "tiles" in ns or cycles)."""
    tiles = t["tiles"].astype(np.int64)
    counts = (tiles > 0).sum(axis=1)
    rows = np.flatnonzero(counts > 0)
    if not rows.size:
        raise ValueError("no CTA recorded a tile: not a trace of a launch that did work")
    return rows, tiles[rows, counts[rows] - 1], counts


def _cta_phases(t: dict) -> dict:
    """{phase of CTA_PHASES: the int64 array of its lengths} of a decoded trace's stamps (t itself for
    %globaltimer, t["clock"] for %clock64): "setup" over all CTAs, "later tiles" over every tile after a
    CTA's first, the others over the CTAs that had a tile."""
    rows, last, counts = _busy(t)
    tiles = t["tiles"].astype(np.int64)
    at = {name: t[name].astype(np.int64) for name in ("start", "setup", "first_issue", "first_stage", "walk_done",
                                                        "consumers_done")}
    return {
        "setup": at["setup"] - at["start"],
        "first issue": at["first_issue"][rows] - at["start"][rows],
        "first stage": at["first_stage"][rows] - at["setup"][rows],
        "first tile": tiles[rows, 0] - at["first_stage"][rows],
        "later tiles": np.concatenate([np.diff(tiles[r, :counts[r]]) for r in rows]),
        "last epilogue": at["walk_done"][rows] - last,
        "stream-K sum": at["consumers_done"][rows] - at["walk_done"][rows],
        "C written": _written(t)[rows] - at["consumers_done"][rows],
    }


def _written(t: dict):
    """Each CTA's last write of C (int64): its last TMA store complete or, where the consumers store
    after that (Config(sk=2)'s slices of parked tiles), their end."""
    return np.maximum(t["c_written"].astype(np.int64), t["consumers_done"].astype(np.int64))


def phases(t: dict) -> dict:
    """{phase: (median, max) over the CTAs, in ns} of one launch's decoded trace (gemm_hopper.read_trace);
    "span", "start skew" and "end skew" are one number each (median = max). CTAs without a tile count
    only in the skews and setup. Raises ValueError for a trace in which no CTA had a tile."""
    start = t["start"].astype(np.int64)
    written = _written(t)
    per_cta = _cta_phases(t)

    def stat(x):
        x = np.asarray(x, dtype=np.int64)
        return (float(np.median(x)), float(x.max())) if x.size else (0.0, 0.0)

    span = float(written.max() - start.min())
    out = {"span": (span, span), "start skew": (float(start.max() - start.min()),) * 2}
    out.update({name: stat(v) for name, v in per_cta.items()})
    out["end skew"] = (float(written.max() - written.min()),) * 2
    return out


def phase_cycles(t: dict) -> dict:
    """{phase of CTA_PHASES: median SM cycles over the CTAs} of one launch's decoded trace, from the
    %clock64 stamps (t["clock"])."""
    return {name: float(np.median(v)) if v.size else 0.0 for name, v in _cta_phases(t["clock"]).items()}


def cta_work(t: dict):
    """(SM of each CTA that had a tile, its ns from its first stage to its consumers' end, the same in
    SM cycles) of one launch's decoded trace."""
    rows, _, _ = _busy(t)
    clk = t["clock"]
    ns = t["consumers_done"].astype(np.int64)[rows] - t["first_stage"].astype(np.int64)[rows]
    cyc = clk["consumers_done"].astype(np.int64)[rows] - clk["first_stage"].astype(np.int64)[rows]
    return t["sm"].astype(np.int64)[rows], ns, cyc


def sm_ranking(launches: list) -> list:
    """Rows (sm, median excess in time, median excess in SM cycles, median MHz, share of launches in
    the slowest quarter) sorted slowest first, over the launches' cta_work results: an SM's excess in
    one launch is its CTA's work over that launch's median CTA, as a fraction; its MHz is its CTA's
    cycles over its ns."""
    per_sm = {}
    for sm, ns, cyc in launches:
        med_ns, med_cyc = float(np.median(ns)), float(np.median(cyc))
        cut = np.quantile(ns, 0.75)
        for s, v, c in zip(sm.tolist(), ns.tolist(), cyc.tolist()):
            per_sm.setdefault(s, []).append((v / med_ns - 1.0, c / med_cyc - 1.0, c / v * 1e3, v > cut))
    rows = []
    for s, vals in per_sm.items():
        t, c, mhz, slow = zip(*vals)
        rows.append((s, float(np.median(t)), float(np.median(c)), float(np.median(mhz)), float(np.mean(slow))))
    return sorted(rows, key=lambda r: -r[1])


def ends(rows: list, n: int) -> list:
    """The first and last n rows with None between them where rows are left out; all rows when there
    are at most 2n; none for n = 0."""
    if not n:
        return []
    return list(rows) if len(rows) <= 2 * n else list(rows[:n]) + [None] + list(rows[-n:])


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
                    help="gemm_hopper Config fields (Config.parse), or sk1 / sk2 / sk3 for the 128 x 256 stream-K "
                         "kernels; default: choose's 128 x 256 kernel")
    ap.add_argument("--launches", type=int, default=20, help="traced launches (default %(default)s)")
    ap.add_argument("--warmup", type=int, default=3, help="launches before them (default %(default)s)")
    ap.add_argument("--sets", type=int, default=1,
                    help="input sets the launches rotate over, so operands that fit in L2 are read from DRAM "
                         "(default %(default)s)")
    ap.add_argument("--save", default=None, metavar="PATH",
                    help="write the traced launches' raw stamps (uint64, one row per launch) to this .npz "
                         "(the suffix is added when missing)")
    ap.add_argument("--show-sms", type=int, default=6, metavar="N",
                    help="SMs to list at each end of the ranking (default %(default)s)")
    args = ap.parse_args(argv)
    m, n, k = parse_size(ap, args.size)
    if args.launches < 1 or args.sets < 1 or args.warmup < 0 or args.show_sms < 0:
        ap.error("--launches and --sets must be >= 1, --warmup and --show-sms >= 0")
    if args.save is not None and not os.path.isdir(os.path.dirname(os.path.abspath(args.save))):
        ap.error(f"--save {args.save}: no such directory")
    import gemm_hopper as h
    try:
        named = {f"sk{c.sk}": c for c in h.auto_configs("nt") if c.sk and c.bn == h.BN}
        cfg = named.get(args.config) or (h.Config.parse(args.config) if args.config else h.auto_configs("nt")[0])
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
    grid = h.sk_plan(m, n, k, ctas, cfg.bn, cfg.bm, cfg.sk)[0] if cfg.sk else h.grid_for(cfg, m, n, ctas)
    gen = torch.Generator(device="cuda").manual_seed(m + n + k)
    tr = torch.zeros(h.trace_bytes(grid) // 8, device="cuda", dtype=torch.int64)
    ws = h.workspace(cfg, m, n, k, ctas)                  # stream-K's flags and partials; None otherwise
    sets = []
    for _ in range(args.sets):
        a = torch.randn(m, k, device="cuda", generator=gen).to(torch.bfloat16)
        bt = torch.randn(b_shape(cfg.layout, n, k), device="cuda", generator=gen).to(torch.bfloat16)
        c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        maps = h.tensor_maps(cfg, a, bt, m, n, k, c=c)
        sets.append((a, bt, c, maps, h.bind(f, cfg, maps, c, m, n, k, ctas, trace=tr, workspace=ws)))
    for i in range(args.warmup):
        sets[i % len(sets)][-1]()
    per_launch, cycles, work, raw, ms = [], [], [], [], []
    for i in range(args.launches):
        _, _, c, _, call = sets[(args.warmup + i) % len(sets)]
        tr.zero_()
        c.fill_(float("nan"))
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        call()
        e1.record()
        torch.cuda.synchronize()
        ms.append(e0.elapsed_time(e1))
        words = tr.cpu().numpy().view(np.uint64)
        raw.append(words.copy())
        t = h.read_trace(words, grid)
        per_launch.append(phases(t))
        cycles.append(phase_cycles(t))
        work.append(cta_work(t))
    err = 0.0
    for i in range(min(args.sets, args.launches)):           # the sets the traced launches wrote last
        a, bt, c = sets[(args.warmup + args.launches - 1 - i) % len(sets)][:3]
        ref = a.float() @ as_kn(bt.float(), cfg.layout)
        err = max(err, float(torch.linalg.norm(c.float() - ref) / torch.linalg.norm(ref)))
    print(f"{cfg.name} on {ctx.name}: {m}x{n}x{k}, {grid} CTAs, {args.launches} traced launches over "
          f"{args.sets} input set{'s' if args.sets > 1 else ''}; largest relative Frobenius error {err:.2e}")
    span = statistics.median(p["span"][0] for p in per_launch)
    print(f"CUDA-event time per launch (median): {statistics.median(ms) * 1e3:.1f} us")
    print(f"  {'phase':<14} {'median us':>10} {'max us':>8} {'of span':>8} {'k cycles':>9} {'MHz':>6}")
    for name in PHASES:
        med = statistics.median(p[name][0] for p in per_launch)
        mx = statistics.median(p[name][1] for p in per_launch) / 1e3
        if name in CTA_PHASES:
            cyc = statistics.median(c[name] for c in cycles)
            clock = f"{cyc / 1e3:9.2f} {cyc / med * 1e3:6.0f}" if med > 0 else f"{cyc / 1e3:9.2f} {'-':>6}"
        else:
            clock = f"{'':9} {'':6}"
        print(f"  {name:<14} {med / 1e3:10.2f} {mx:8.2f} {med / span:8.1%} {clock}")
    spread = [(float(ns.max()) / float(np.median(ns)) - 1.0, float(cyc.max()) / float(np.median(cyc)) - 1.0)
              for _, ns, cyc in work]
    print(f"CTA work (first stage to consumers' end), slowest over the median CTA: "
          f"{statistics.median(s[0] for s in spread):.2%} in time, {statistics.median(s[1] for s in spread):.2%}"
          f" in SM cycles (medians over the launches)")
    ranking = sm_ranking(work)
    shown = ends(ranking, args.show_sms)
    if shown:
        print(f"  {'SM':>4} {'excess':>8} {'in cycles':>9} {'MHz':>7} {'in slowest quarter':>19}")
        for row in shown:
            if row is None:
                print(f"  {'...':>4}")
            else:
                s, e, ec, mhz, q = row
                print(f"  {s:4d} {e:8.2%} {ec:9.2%} {mhz:7.1f} {q:19.0%}")
    if args.save is not None:
        path = args.save if args.save.endswith(".npz") else args.save + ".npz"     # as np.savez names it
        np.savez(path, words=np.stack(raw), grid=grid, size=np.array([m, n, k]), config=cfg.name,
                 event_ms=np.array(ms))
        print(f"raw stamps of {len(raw)} launches written to {path} (gemm_hopper.read_trace decodes a row)")
    if not err < 1e-2:
        print("wrong result")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
