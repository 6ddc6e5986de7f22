"""A/B timing of gemm_hopper configurations against each other and cuBLAS, shape by shape.

Each variant is launched as bench/gemm.py launches `choose`'s pick (a bound launch: `gemm_hopper.bind`,
with the stream-K workspace where the configuration needs one) on three rotated input sets of random
normal bf16; CUDA events bracket batches of --batch back-to-back calls, and a pass's time is the median
over --reps batches of the mean call. Every shape runs --passes passes of all its variants, in
alternating order (forward, then backward, ...), with C poisoned (NaN) before each pass and its last
product checked against a float32 reference (relative Frobenius error, printed; above 1e-2 the script
says so and exits with 1), and cuBLAS (`torch.matmul`) timed the same way before the first pass and
after each. The ratio is the mean of the cuBLAS passes over the variant's mean.

With --graph each batch is one replay of a CUDA graph that holds its --batch calls (`ptxgen.runtime.capture`
for the variants, torch.cuda.CUDAGraph for cuBLAS), so the times are the GPU's alone: without it a call
from Python costs several microseconds of host time, which is most of a small GEMM's (bench/LOG.md
round 29).

    python3 bench/gemm_variants.py --sizes 8192x384x8192,1536x1536x1536
           --variants choose,hopper:nt:1:4:0:8:64:256,hopper:nt:1:4:0:8:64:192:direct [--passes 3]
           [--batch 20] [--reps 25] [--layout nt|nn] [--graph]

Variants: `choose` (gemm_hopper.choose's pick for each shape), `auto:I` (auto_configs()[I]), or
hopper:FIELDS (any Config, FIELDS as Config.parse takes them; bench/gemm.py's hopper kinds), any of
them with +pdl (the same configuration launched with programmatic dependent launch, Config.pdl). Each is
planned for the resident CTAs of its kernel on this GPU (`resident_ctas`). bench/LOG.md round 24's
tables of tile widths were measured this way.

A change to gemm_hopper is timed against the code before it in the same process: --baseline FILE loads
another copy of the module (e.g. `git show REV:samples/gemm_hopper.py > FILE`), and a variant written
base:VARIANT (base:choose, base:auto:3, base:hopper:FIELDS, each may end in +pdl) is resolved, built,
planned and bound by that copy:

    git show HEAD:samples/gemm_hopper.py > /tmp/gemm_hopper_head.py
    python3 bench/gemm_variants.py --sizes 8x4096x4096 --variants base:choose,choose --graph
           --baseline /tmp/gemm_hopper_head.py
"""
import importlib.machinery
import importlib.util
import argparse
import dataclasses
import os
import statistics
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "samples"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _gpu import add_layout_option, as_kn, b_shape, gpu_or_reason, hopper_kind, int_list, mnk  # noqa: E402

ERR_LIMIT = 1e-2


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", required=True, help="MxNxK,... (e.g. 8192x384x8192,1536x1536x1536)")
    ap.add_argument("--variants", default="choose",
                    help="comma-separated: choose, auto:I, hopper:FIELDS (default: choose)")
    ap.add_argument("--passes", default="3", help="passes over the variants per shape (default 3)")
    ap.add_argument("--batch", default="20", help="calls between two CUDA events (default 20)")
    ap.add_argument("--reps", default="25", help="batches per pass; the pass takes their median (default 25)")
    ap.add_argument("--graph", action="store_true",
                    help="time each batch as one CUDA graph replay (no host time per call)")
    ap.add_argument("--baseline", metavar="FILE",
                    help="another copy of gemm_hopper.py (e.g. an earlier revision's), which resolves, builds "
                         "and launches the variants written base:VARIANT")
    add_layout_option(ap)
    args = ap.parse_args(argv)
    import gemm_hopper as h
    if args.baseline is not None:
        try:
            args.baseline = load_baseline(args.baseline)
        except (OSError, ImportError, SyntaxError) as e:
            ap.error(f"--baseline {args.baseline}: cannot load it as gemm_hopper: {e}")
    try:
        args.sizes = [mnk(s) for s in args.sizes.split(",")]
        for size in args.sizes:
            h.check_shape(*size)
    except ValueError as e:
        ap.error(f"--sizes takes MxNxK,... that gemm_hopper can run: {e}")
    args.passes = int_list(ap, "--passes", args.passes, 1, "a whole number >= 1")[0]
    args.batch = int_list(ap, "--batch", args.batch, 1, "a whole number >= 1")[0]
    args.reps = int_list(ap, "--reps", args.reps, 1, "a whole number >= 1")[0]
    args.variants = args.variants.split(",")
    for v in args.variants:
        try:
            variant_config(v, *args.sizes[0], args.layout, base=args.baseline)
        except ValueError as e:
            ap.error(str(e))
    if len(set(args.variants)) != len(args.variants):
        ap.error("--variants names a variant twice")
    return args


def load_baseline(path: str):
    """Another copy of gemm_hopper.py (an earlier revision's, say) as a module of its own
    (gemm_hopper_baseline) beside the one imported as gemm_hopper."""
    if not os.path.isfile(path):
        raise OSError("no such file")
    loader = importlib.machinery.SourceFileLoader("gemm_hopper_baseline", path)   # whatever the file's suffix
    spec = importlib.util.spec_from_loader(loader.name, loader)
    mod = importlib.util.module_from_spec(spec)
    try:
        loader.exec_module(mod)
    except (SyntaxError, ImportError):
        raise
    except Exception as e:                                  # the file ran and failed: say how
        raise ImportError(f"running it raised {type(e).__name__}: {e}") from e
    for name in ("choose", "auto_configs", "Config", "build", "prepare", "bind", "resident_ctas", "workspace",
                 "tensor_maps"):
        if not hasattr(mod, name):
            raise ImportError(f"it has no {name}")
    return mod


def variant_module(text: str, base=None):
    """(the gemm_hopper module that resolves and launches variant `text`, the variant without its base:
    prefix): --baseline's copy for base:VARIANT, else gemm_hopper."""
    import gemm_hopper as h
    if not text.startswith("base:"):
        return h, text
    if base is None:
        raise ValueError(f"{text!r}: base:VARIANT needs --baseline FILE")
    return base, text[len("base:"):]


def variant_config(text: str, m: int, n: int, k: int, layout: str = "nt", ctas: int = 132, base=None):
    """The gemm_hopper Config that variant `text` names for an M x N x K problem in `layout` (base:VARIANT:
    --baseline's copy `base`, see `variant_module`); ValueError naming what is wrong for anything else."""
    h, rest = variant_module(text, base)
    return _resolve(h, rest, m, n, k, layout, ctas)


def _resolve(h, text: str, m: int, n: int, k: int, layout: str, ctas: int):
    """variant_config's work in the gemm_hopper module h, `text` without its base: prefix."""
    if text.startswith("base:"):
        raise ValueError(f"{text!r}: base: is written once, at the front")
    if text.endswith("+pdl"):
        cfg = _resolve(h, text[:-len("+pdl")], m, n, k, layout, ctas)
        if cfg.trace:
            raise ValueError(f"{text!r}: +pdl does not take a traced configuration")
        return dataclasses.replace(cfg, pdl=1).check()
    if text == "choose":
        return h.choose(m, n, k, layout, ctas)
    if text.startswith("auto:"):
        autos = h.auto_configs(layout)
        idx = text[len("auto:"):]
        if not idx.isdigit() or int(idx) >= len(autos):
            raise ValueError(f"{text!r}: auto:I takes an index of auto_configs, 0 to {len(autos) - 1}")
        return autos[int(idx)]
    if text.startswith("hopper:"):
        cfg, split = hopper_kind(text, h)
        if split is not None:
            raise ValueError(f"{text!r}: @SPLIT is not taken here")
        if cfg.layout != layout:
            raise ValueError(f"{text!r}: a {cfg.layout} kernel, but --layout is {layout}")
        return cfg
    raise ValueError(f"unknown variant {text!r}; choose from choose, auto:I, hopper:FIELDS (each may end in +pdl, "
                     f"and with --baseline be written base:VARIANT)")


def _median_us(torch, batch: int, reps: int, run_batch) -> float:
    """µs per call: the median over `reps` of `run_batch()` (a batch of `batch` calls) between two CUDA
    events."""
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        run_batch()
        e1.record()
        torch.cuda.synchronize()
        ts.append(e0.elapsed_time(e1) / batch * 1000)
    return statistics.median(ts)


def _timer(torch, batch: int, reps: int):
    def timeit(call, sets=3):
        for i in range(2 * batch):                   # warm-up
            call(i % sets)
        done = 0

        def run_batch():
            nonlocal done
            for _ in range(batch):
                call(done % sets)
                done += 1
        return _median_us(torch, batch, reps, run_batch), (done - 1) % sets   # µs, the set of the last call
    return timeit


def _graph_timer(torch, batch: int, reps: int):
    """timeit(replay, last): µs per call of `replay()`, which runs a batch of `batch` calls (a CUDA graph's
    launch), as the median over `reps` batches after two untimed ones; with `last`, the set of the batch's
    last call."""
    def timeit(replay, last):
        for _ in range(2):
            replay()
        return _median_us(torch, batch, reps, replay), last
    return timeit


def _cublas_graph(torch, A, B, C, layout: str, batch: int):
    """A torch.cuda.CUDAGraph of `batch` torch.matmul calls over the rotated sets (a warm-up on a side
    stream first, as torch's capture needs), and the set its last call writes."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for i in range(3):
            torch.matmul(A[i], as_kn(B[i], layout), out=C[i])
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for j in range(batch):
            torch.matmul(A[j % 3], as_kn(B[j % 3], layout), out=C[j % 3])
    return g, (batch - 1) % 3


def _variant_graph(rt, bound, batch: int):
    """A ptxgen.runtime Graph of `batch` calls of the bound launches over the rotated sets, and the set its
    last call writes."""
    with rt.capture() as cap:
        for j in range(batch):
            bound[j % 3](stream=cap.stream)
    return cap.graph, (batch - 1) % 3


def main(argv=None) -> int:
    args = parse_args(argv)
    got = gpu_or_reason()
    if got is None:
        return 0
    torch, ctx = got
    from ptxgen.runtime import load_module
    if ctx.compute_capability != (9, 0):
        print(f"gemm_hopper needs sm_90a; this GPU is {ctx.arch}")
        return 0
    sms, timeit = ctx.sm_count, _timer(torch, args.batch, args.reps)
    gtimeit = _graph_timer(torch, args.batch, args.reps)
    import ptxgen.runtime as rt
    print(f"{ctx.name}, {sms} SMs; layout {args.layout}; {args.passes} passes of {args.reps} batches of "
          f"{args.batch} calls" + ("; each batch one CUDA graph replay" if args.graph else ""))
    print(f"{'M x N x K':>17} {'variant':>30} {'kernel':>46} {'grid':>5} {'passes (us)':>24} {'mean':>7} "
          f"{'x cuBLAS':>8} {'rel err':>8}")
    bad = 0
    built = {}
    for (m, n, k) in args.sizes:
        g = torch.Generator(device="cuda").manual_seed(m * 31 + n * 7 + k)
        A = [torch.randn(m, k, device="cuda", generator=g).to(torch.bfloat16) for _ in range(3)]
        B = [torch.randn(*b_shape(args.layout, n, k), device="cuda", generator=g).to(torch.bfloat16)
             for _ in range(3)]
        C = [torch.empty(m, n, device="cuda", dtype=torch.bfloat16) for _ in range(3)]

        def cublas(i):
            torch.matmul(A[i], as_kn(B[i], args.layout), out=C[i])
        calls, info = {}, {}
        for v in args.variants:
            try:
                hv = variant_module(v, args.baseline)[0]            # gemm_hopper, or --baseline's copy
                cfg = variant_config(v, m, n, k, args.layout, sms, base=args.baseline)
                if (hv, cfg) not in built:
                    built[hv, cfg] = hv.prepare(load_module(hv.build("sm_90a", [cfg]).emit()), cfg)
                f = built[hv, cfg]
                ctas = hv.resident_ctas(f, cfg, sms)
                # (a kernel that cannot take the shape, sk=3 with more tiles than its clusters hold,
                # says so here)
                ws = hv.workspace(cfg, m, n, k, ctas)
                maps = [hv.tensor_maps(cfg, A[i], B[i], m, n, k, c=C[i]) for i in range(3)]
                calls[v] = [hv.bind(f, cfg, maps[i], C[i], m, n, k, ctas, workspace=ws) for i in range(3)]
            except ValueError as e:
                print(f"{f'{m}x{n}x{k}':>17} {v[-30:]:>30} cannot run: {e}")
                calls.pop(v, None)
                continue
            info[v] = (cfg.name, calls[v][0].grid[0], ws)     # the grid bind planned; ws kept with its launches
        res = {v: [] for v in calls}
        if args.graph:
            cub_graph = _cublas_graph(torch, A, B, C, args.layout, args.batch)
            graphs = {v: _variant_graph(rt, calls[v], args.batch) for v in calls}

            def time_cublas():
                return gtimeit(cub_graph[0].replay, cub_graph[1])[0]

            def time_variant(v):
                return gtimeit(graphs[v][0], graphs[v][1])
        else:
            def time_cublas():
                return timeit(cublas)[0]

            def time_variant(v):
                return timeit(lambda i, b=calls[v]: b[i]())
        cub = [time_cublas()]
        order = list(calls)
        for p in range(args.passes):
            for v in (order if p % 2 == 0 else order[::-1]):
                for c in C:
                    c.fill_(float("nan"))
                t, j = time_variant(v)
                ref = A[j].float() @ as_kn(B[j], args.layout).float()
                err = float((C[j].float() - ref).norm() / ref.norm())
                res[v].append((t, err))
            cub.append(time_cublas())
        base = statistics.mean(cub)
        for v, r in res.items():
            mean = statistics.mean(t for t, _ in r)
            # an element left unwritten makes the error NaN, which fails the comparison
            ok = all(e <= ERR_LIMIT for _, e in r)
            err = max(e for _, e in r) if ok else next(e for _, e in r if not e <= ERR_LIMIT)
            bad += not ok
            passes = " ".join(f"{t:6.1f}" for t, _ in r)
            print(f"{f'{m}x{n}x{k}':>17} {v[-30:]:>30} {info[v][0][-46:]:>46} {info[v][1]:5d} {passes:>24} "
                  f"{mean:7.1f} {base / mean:8.3f} {err:8.1e}{'' if ok else '  WRONG'}")
        print(f"{'':>17} {'cuBLAS':>30} {'(before the first pass and after each)':>46} {'':>5} "
              + " / ".join(f"{t:.1f}" for t in cub) + " us", flush=True)
    if bad:
        print(f"{bad} result(s) above the relative error limit {ERR_LIMIT}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
