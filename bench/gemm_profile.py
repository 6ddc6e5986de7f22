"""Launch each GEMM a few times on one shape, for a profiler to attach to (ncu, compute-sanitizer).

Every kernel (cuBLAS through torch.matmul, gemm_hopper configurations, gemm_ampere) runs `--launches`
times on the same random normal bf16 inputs, and its result is checked against a float32 reference
(relative Frobenius error), so a profile is always of a kernel that computed the right thing.

    ncu --clock-control none --kernel-name regex:'gemm_|nvjet|xmma' --launch-skip 1 \\
        --section SpeedOfLight --section WarpStateStats --csv python3 bench/gemm_profile.py --size 6144x6144x6144

--layout nn makes B row-major (K x N) and every kernel compute C = A @ B (cuBLAS as torch.matmul(A, B));
the default nt stores B as N x K and computes C = A @ B^T.

`--clock-control none` leaves the clocks to the board's power management, as in a real run (ncu locks
them to base clock otherwise). With --launch-skip 1 each kernel's first (cold) launch is not profiled
when --launches is 2: the kernel-name filter counts launches of all matching kernels, so ask for
--launch-count (kernels x (launches - 1)) or leave it unbounded.
"""
import argparse
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "samples"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _gpu import (HOPPER_NAMED, add_layout_option, ampere_kernels, as_kn, b_shape, gpu_or_reason,  # noqa: E402
                  hopper_named, mnk, parse_kinds)

KINDS = ("cublas", *HOPPER_NAMED, "ampere")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", default="6144x6144x6144", help="MxNxK (default %(default)s)")
    ap.add_argument("--launches", type=int, default=2, help="launches of each kernel (default %(default)s)")
    ap.add_argument("--ctas", type=int, default=None,
                    help="resident CTAs the gemm_hopper grids are planned for, at most as many as fit (default: as many as fit)")
    ap.add_argument("--kernels", default="cublas,hopper,ampere",
                    help=f"comma-separated, from {', '.join(KINDS)} (default %(default)s), hopper:FIELDS[@SPLIT] "
                         "(a gemm_hopper Config's fields, as Config.parse takes them, and for bm=192 an m_split), "
                         "or ampere:FIELDS / ampere-pers:FIELDS (a gemm_ampere Tile's fields in order, one CTA per "
                         "tile / the persistent grid); all in --layout")
    add_layout_option(ap)
    args = ap.parse_args(argv)
    layout = args.layout
    kinds, extra, ampere_extra = parse_kinds(ap, args.kernels, KINDS, layout)
    try:
        m, n, k = mnk(args.size)
    except ValueError:
        ap.error(f"--size {args.size!r} is not MxNxK")
    if args.launches < 1:
        ap.error("--launches must be at least 1")
    if args.ctas is not None and args.ctas < 1:
        ap.error("--ctas must be at least 1")

    gpu = gpu_or_reason()
    if gpu is None:
        return 1
    torch, ctx = gpu
    import gemm_ampere as g
    import gemm_hopper as h
    from ptxgen.runtime import load_module
    gen = torch.Generator(device="cuda").manual_seed(1)
    a = torch.randn(m, k, device="cuda", generator=gen).to(torch.bfloat16)
    b = torch.randn(b_shape(layout, n, k), device="cuda", generator=gen).to(torch.bfloat16)
    ref = a.float() @ as_kn(b.float(), layout)
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)

    hopper_cfgs = {**{kind: (cfg, None) for kind, cfg in hopper_named(layout).items()}, **extra}
    calls = {}
    want = list(dict.fromkeys(hopper_cfgs[x][0] for x in kinds if x in hopper_cfgs))
    if want:
        if not ctx.arch.startswith("sm_90"):
            print(f"gemm_hopper needs sm_90a, this GPU is {ctx.arch}")
            return 1
        mod = load_module(h.build("sm_90a", want).emit())
        for kind in kinds:
            if kind in hopper_cfgs:
                cfg, split = hopper_cfgs[kind]
                f = h.prepare(mod, cfg)
                maps = h.tensor_maps(cfg, a, b, m, n, k, c=c)
                ctas = h.resident_ctas(f, cfg, ctx.sm_count)
                if args.ctas is not None:
                    ctas = min(ctas, args.ctas)
                ws = h.workspace(cfg, m, n, k, ctas)     # stream-K's flags and partials; None otherwise
                calls[kind] = (lambda f=f, cfg=cfg, maps=maps, split=split, ctas=ctas, ws=ws:
                               h.launch(f, cfg, maps, c, m, n, k, ctas, m_split=split, workspace=ws))
    ampere_kinds = {"ampere": (g.TILE, False), **ampere_extra}
    ampere_funcs = ampere_kernels(ctx.arch, {x: v for x, v in ampere_kinds.items() if x in kinds}, layout)
    for kind, (ft, tile, pers) in ampere_funcs.items():
        ctas = g.resident_ctas(ctx.sm_count, tile) if pers else None
        calls[kind] = lambda ft=ft, tile=tile, ctas=ctas: g.launch(ft, a, b, c, m, n, k, tile, ctas=ctas)
    if "cublas" in kinds:
        calls["cublas"] = lambda: torch.matmul(a, as_kn(b, layout), out=c)

    for kind in kinds:
        for _ in range(args.launches):
            c.fill_(float("nan"))
            calls[kind]()
        torch.cuda.synchronize()
        err = float(torch.linalg.norm(c.float() - ref) / torch.linalg.norm(ref))
        print(f"{kind:12s} {m}x{n}x{k}: {args.launches} launches, relative Frobenius error {err:.2e}")
        if not err < 1e-2:
            print(f"{kind}: wrong result")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
