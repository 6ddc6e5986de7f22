"""Time the CPU executor (ptxgen.executor) on the sample kernels and print a table.

    python3 bench/executor_speed.py [--repeat 5]
"""
import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

from _executor_kernels import M, N, hgemm_bad_ldmatrix, hgemm_inputs, load_sample  # noqa: E402
from ptxgen.executor import Buffer, run_kernel  # noqa: E402
from ptxgen.parse import parse_ptx  # noqa: E402


def _cases(rng):
    hg = load_sample("hgemm_mma").build()
    for in_type in ("f16", "bf16"):
        a_bits, b_bits, _, _ = hgemm_inputs(rng, in_type)
        yield (f"hgemm_mma {in_type}", hg, f"hgemm_mma_m16n8k16_{in_type}", (1,), (32,),
               lambda a=a_bits, b=b_bits: [Buffer(a), Buffer(b), Buffer(np.zeros((M, N), np.float32))])
    a_bits, b_bits, _, _ = hgemm_inputs(rng, "f16")
    yield ("hgemm_mma f16 (parsed PTX)", parse_ptx(hg.emit().text, "hgemm.ptx"), "hgemm_mma_m16n8k16_f16", (1,),
           (32,), lambda: [Buffer(a_bits), Buffer(b_bits), Buffer(np.zeros((M, N), np.float32))])
    yield ("hgemm bad ldmatrix f16", hgemm_bad_ldmatrix(), "hgemm_bad_f16", (1,), (32,),
           lambda: [Buffer(a_bits), Buffer(b_bits), Buffer(np.zeros((M, N), np.float32))])
    w = load_sample("wgmma_tile")
    wm = w.build()
    for n in (64, 256):
        a = np.zeros((64, 64), np.uint16)
        b = np.zeros((n, 64), np.uint16)
        yield (f"wgmma_tile m64n{n}k16", wm, w.kernel_name(n), (1,), (128,),
               lambda a=a, b=b, n=n: [Buffer(a), Buffer(b), Buffer(np.zeros((64, n), np.float32))])
    import _tma_kernels as T
    tm = T.build()
    for name, (n, swz, store) in T.CASES.items():
        a, b, _ = T.inputs(rng, n)
        yield (f"TMA+wgmma m64n{n}k64 {swz}{' tma-st' if store == 'tma' else ''}", tm, name, (1,), (128,),
               lambda a=a, b=b, name=name: _tma_args(T, name, a, b))
    ax = load_sample("axpy").build()
    for n in (1000, 1 << 16):
        x = rng.standard_normal(n).astype(np.float32)
        yield (f"axpy n={n}", ax, "axpy", ((n + 255) // 256,), (256,),
               lambda x=x, n=n: [Buffer(x), Buffer(x.copy()), np.float32(2.0), n])
    br = load_sample("block_reduce").build()
    for n in (1024, 1 << 16):
        x = rng.standard_normal(n).astype(np.float32)
        blocks = (n + 1023) // 1024
        yield (f"block_reduce n={n}", br, "block_reduce", (blocks,), (256,),
               lambda x=x, n=n, blocks=blocks: [Buffer(x), Buffer(np.zeros(blocks, np.float32)), n])


def _tma_args(T, name, a_bits, b_bits):
    from ptxgen.executor import tensor_map
    n, swz, store = T.CASES[name]
    pe = T.panel_elems(swz)
    c = Buffer(np.zeros((T.M, n), np.float32))
    return [tensor_map(Buffer(a_bits), box=(T.M, pe), swizzle=swz), tensor_map(Buffer(b_bits), box=(n, pe), swizzle=swz),
            tensor_map(c, box=(T.M, n)) if store == "tma" else c]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per kernel; the best is reported")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    print(f"{'kernel':34s} {'CTAs':>5s} {'threads':>8s} {'steps':>7s} {'thread-instr':>12s} {'best ms':>9s} "
          f"{'M thread-instr/s':>16s}")
    for label, mod, name, grid, block, make_args in _cases(rng):
        best = float("inf")
        for _ in range(args.repeat):
            a = make_args()
            t0 = time.perf_counter()
            stats = run_kernel(mod, name, grid=grid, block=block, args=a)
            best = min(best, time.perf_counter() - t0)
        threads = int(np.prod(grid)) * int(np.prod(block))
        print(f"{label:34s} {stats.ctas:5d} {threads:8d} {stats.steps:7d} {stats.thread_instructions:12d} "
              f"{best * 1e3:9.2f} {stats.thread_instructions / best / 1e6:16.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
