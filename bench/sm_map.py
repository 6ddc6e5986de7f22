"""Where the CTAs of a persistent grid run: CTA index -> SM (%smid), and which SMs share a GPC.

A persistent GEMM hands tiles out by CTA index, so which CTAs land on neighbouring SMs decides which
tiles' operand requests can meet on the way to L2 (bench/LOG.md round 14). This launches one CTA per
SM (a large dynamic shared-memory request keeps a second CTA off each SM), as the GEMMs do, and records
each CTA's %smid; then it launches clusters, whose CTAs the hardware places within one GPC, and merges
the SMs seen together in a cluster into groups: each group lies within one GPC (two groups may still
share a GPC that no cluster happened to span).

    python3 bench/sm_map.py [--ctas 128] [--clusters 2,4,8] [--repeats 3] [--smem-kib 200]
"""
import argparse
import os
import sys

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ptxgen as pg  # noqa: E402
from _gpu import int_list  # noqa: E402

THREADS = 128


def build(target: str = "sm_90a") -> pg.Module:
    """sm_map(out): out[ctaid.x] = the %smid that CTA runs on."""
    m = pg.Module(target)
    k = m.entry("sm_map", reqntid=THREADS)
    out = k.cvta(k.ld_param(k.param_ptr("out", pg.u32, align=4)), "global", to=True)
    with k.if_(k.setp("eq", k.tid.x, 0)):
        sm = k.sreg("%smid")
        k.st(k.add(out, k.mul(k.cvt(k.ctaid.x, pg.u64), 4, mode="lo")), sm, space="global")
    k.ret()
    return m


def merge_groups(sets) -> list:
    """The SMs of overlapping sets merged (union-find): sorted lists, sorted by their first SM."""
    parent = {}

    def find(x):
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for s in sets:
        s = sorted(s)
        for x in s:
            find(x)
        for x in s[1:]:
            parent[find(x)] = find(s[0])
    groups = {}
    for x in parent:
        groups.setdefault(find(x), []).append(x)
    return sorted(sorted(g) for g in groups.values())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ctas", type=int, default=128, help="CTAs of the plain grid (default 128, the GEMMs' grid at "
                                                          "4096^3; at most one per SM)")
    ap.add_argument("--clusters", default="2,4,8", help="cluster sizes to launch for the GPC groups (default 2,4,8)")
    ap.add_argument("--repeats", type=int, default=3, help="launches of each grid (default 3)")
    ap.add_argument("--smem-kib", type=int, default=200,
                    help="dynamic shared memory per CTA, KiB (default 200: one CTA per SM)")
    args = ap.parse_args(argv)
    clusters = int_list(ap, "--clusters", args.clusters, 1, "comma-separated whole numbers >= 1")
    if args.ctas < 1 or args.repeats < 1 or not 1 <= args.smem_kib <= 227:
        ap.error("--ctas and --repeats must be >= 1, --smem-kib 1 to 227")

    from ptxgen.runtime import DeviceBuffer, get_context, load_module, no_gpu_reason
    reason = no_gpu_reason()
    if reason is not None:
        print(f"no GPU: {reason}")
        return 1
    ctx = get_context()
    if args.ctas > ctx.sm_count:
        ap.error(f"--ctas {args.ctas}: this GPU has {ctx.sm_count} SMs, and the map wants one CTA per SM")
    f = load_module(build("sm_90a" if ctx.arch.startswith("sm_90") else ctx.arch).emit()).function("sm_map")
    smem = args.smem_kib * 1024
    f.set_max_dynamic_shared(smem)

    def run(n, cluster=None):
        buf = DeviceBuffer.zeros(n, np.uint32)
        f.launch((n,), (THREADS,), [buf], shared_bytes=smem, cluster=cluster)
        return [int(x) for x in buf.to_numpy()]

    print(f"{ctx.name} ({ctx.arch}, {ctx.sm_count} SMs), {args.smem_kib} KiB of shared memory a CTA")
    for rep in range(args.repeats):
        sms = run(args.ctas)
        if len(set(sms)) != len(sms):
            print(f"grid of {args.ctas}, launch {rep + 1}: some SMs ran two CTAs; raise --smem-kib")
        print(f"grid of {args.ctas}, launch {rep + 1}: CTA -> SM, eight CTAs a row")
        for i in range(0, len(sms), 8):
            print(f"  CTAs {i:3d}-{min(i + 7, len(sms) - 1):3d}: " + " ".join(f"{s:3d}" for s in sms[i:i + 8]))
    seen = []
    for c in clusters:
        n = args.ctas - args.ctas % c
        if c > 1 and n:
            for _ in range(args.repeats):
                sms = run(n, cluster=(c, 1, 1))
                seen += [set(sms[i:i + c]) for i in range(0, n, c)]
    if seen:
        groups = merge_groups(seen)
        print(f"SMs that shared a cluster (merged over {len(seen)} clusters of {args.clusters}): "
              f"{len(groups)} groups, each within one GPC")
        for g in groups:
            print(f"  {len(g):2d} SMs: " + " ".join(str(s) for s in g))
    return 0


if __name__ == "__main__":
    sys.exit(main())
