"""axpy: y[i] = a * x[i] + y[i] for i < n, one thread per element, with a bounds check.

    python3 samples/axpy.py [--target sm_80] [--no-run]
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import ptxgen as pg  # noqa: E402
from ptxgen.harness import assert_close, main  # noqa: E402

BLOCK = 256


def build(target: str = "sm_90a") -> pg.Module:
    m = pg.Module(target)
    k = m.entry("axpy", maxntid=BLOCK)
    px = k.param_ptr("x", pg.f32, align=4)
    py = k.param_ptr("y", pg.f32, align=4)
    pa = k.param("a", pg.f32)
    pn = k.param("n", pg.u32)

    i = k.mad(k.ctaid.x, k.ntid.x, k.tid.x, mode="lo")
    n = k.ld_param(pn)
    out_of_range = k.setp("ge", i, n)
    k.exit(guard=out_of_range)  # the bounds check: threads past n do nothing

    x = k.cvta(k.ld_param(px), "global", to=True)
    y = k.cvta(k.ld_param(py), "global", to=True)
    off = k.mul(i, 4, mode="wide")
    xi = k.ld(k.add(x, off), pg.f32)
    yaddr = k.add(y, off)
    yi = k.ld(yaddr, pg.f32)
    r = k.fma(k.ld_param(pa), xi, yi, rnd="rn")
    k.st(yaddr, r)
    k.ret()
    return m


def run(module, rng):
    from ptxgen.runtime import DeviceBuffer
    f = module.function("axpy")
    checks = []
    for n in (1, 1000, 1 << 20, (1 << 20) + 37):
        x = rng.standard_normal(n).astype(np.float32)
        y = rng.standard_normal(n).astype(np.float32)
        a = np.float32(rng.standard_normal())
        # one guard element past n: the bounds check must leave it untouched
        dy = DeviceBuffer.from_numpy(np.concatenate([y, np.array([12345.0], np.float32)]))
        dx = DeviceBuffer.from_numpy(x)
        f.launch(((n + BLOCK - 1) // BLOCK,), (BLOCK,), [dx, dy, a, np.uint32(n)])
        got = dy.to_numpy(shape=(n + 1,), dtype=np.float32)
        ref = a.astype(np.float64) * x.astype(np.float64) + y.astype(np.float64)
        checks.append(assert_close(f"axpy n={n}", got[:n], ref, rtol=1e-6, atol=1e-6))
        if got[n] != np.float32(12345.0):
            from ptxgen.harness import SampleCheckError
            raise SampleCheckError(f"axpy n={n}: element past the end was overwritten ({got[n]})")
        dx.free()
        dy.free()
    checks.append("axpy: the element past n was left untouched in every run (bounds check)")
    return checks


if __name__ == "__main__":
    sys.exit(main("axpy", build, run))
