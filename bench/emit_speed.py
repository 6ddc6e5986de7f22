"""Builder and emitter speed: a kernel of 10,000 instructions (ALU, ld, st, setp, bra), built and emitted.

    python3 bench/emit_speed.py [--n 10000] [--runs 5]

Prints the median of `runs` timings (time.perf_counter) for building and for emitting, separately.
Building records the caller's source location for every instruction, so it is the costlier half.
"""
from __future__ import annotations

import argparse
import statistics
import time

import ptxgen as pg
from ptxgen import f32
from ptxgen.builder import mem


def build(n: int) -> pg.Module:
    """A kernel of about n instructions: a repeated 10-instruction mix."""
    m = pg.Module("sm_90a")
    k = m.entry("bench", maxntid=256)
    src = k.cvta(k.ld_param(k.param_ptr("src", f32)), "global", to=True)
    dst = k.cvta(k.ld_param(k.param_ptr("dst", f32)), "global", to=True)
    i = k.tid.x
    acc = k.mov(0.0, type=f32)
    skip = k.new_label("skip")
    emitted = 6  # the two ld.param + cvta pairs, the %tid.x read and the mov
    while emitted + 10 <= n:
        v = k.ld(mem(src, 16), f32)                 # ld
        w = k.fma(v, acc, 1.5)                       # ALU
        k.add(acc, w, dst=acc)
        j = k.add(i, 3)
        k.mul(j, 5, mode="lo", dst=i)
        p = k.setp("lt", i, 1000)                    # setp
        k.st(mem(dst, 8), w)                         # st
        k.and_(j, 0xFF)
        k.shl(j, 2)
        k.bra(skip, guard=p)                         # bra
        emitted += 10
    k.place(skip)
    while emitted < n:
        k.add(i, 1, dst=i)
        emitted += 1
    return m


def _median_ms(fn, runs: int):
    times = []
    out = None
    for _ in range(runs):
        t0 = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000, help="instructions in the kernel")
    ap.add_argument("--runs", type=int, default=5, help="timed runs; the median is printed")
    args = ap.parse_args(argv)

    build_ms, m = _median_ms(lambda: build(args.n), args.runs)
    n_instr = sum(1 for st in m.ir.functions[0].body if type(st).__name__ == "Instr")
    emit_ms, text = _median_ms(lambda: m.emit(), args.runs)
    lines = text.text.count("\n")

    rows = [("build", build_ms), ("emit", emit_ms), ("build+emit", build_ms + emit_ms)]
    print(f"kernel: {n_instr} instructions, {lines} PTX lines, median of {args.runs} runs")
    print(f"{'phase':<12}{'instructions':>14}{'ms':>10}{'instr/s':>14}")
    for name, ms in rows:
        print(f"{name:<12}{n_instr:>14}{ms:>10.2f}{n_instr / (ms / 1e3):>14,.0f}")


if __name__ == "__main__":
    main()
