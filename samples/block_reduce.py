"""block_reduce: per-block sums of a float32 vector, with shfl.sync inside warps and shared memory across warps.

Each block of 256 threads sums 1024 elements (4 per thread, predicated at the tail), reduces each
warp with `shfl.sync.bfly`, parks the 8 warp sums in shared memory, and warp 0 reduces those.

    python3 samples/block_reduce.py [--target sm_80] [--no-run]
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import ptxgen as pg  # noqa: E402
from ptxgen.harness import assert_close, main  # noqa: E402

BLOCK = 256
ITEMS = 4
WARPS = BLOCK // 32


def _warp_sum(k, v):
    for offset in (16, 8, 4, 2, 1):
        other = k.shfl_sync(v, offset, 0x1F, "bfly")
        k.add(v, other, dst=v)


def build(target: str = "sm_90a") -> pg.Module:
    m = pg.Module(target)
    k = m.entry("block_reduce", reqntid=BLOCK)
    px = k.param_ptr("x", pg.f32, align=16)
    pout = k.param_ptr("partial", pg.f32, align=4)
    pn = k.param("n", pg.u32)
    warp_sums = k.shared("warp_sums", 4 * WARPS, align=16)

    x = k.cvta(k.ld_param(px), "global", to=True)
    out = k.cvta(k.ld_param(pout), "global", to=True)
    n = k.ld_param(pn)
    tid = k.tid.x
    cta = k.ctaid.x
    base = k.mul(cta, BLOCK * ITEMS, mode="lo")
    acc = k.mov(0.0, type=pg.f32, dst=k.reg(pg.f32, "acc"))
    for j in range(ITEMS):
        i = k.add(k.add(base, tid), j * BLOCK)
        inside = k.setp("lt", i, n)
        v = k.ld(k.add(x, k.mul(i, 4, mode="wide")), pg.f32, guard=inside)
        # a predicated-off load leaves v undefined: select 0 for it
        k.add(acc, k.selp(v, 0.0, inside), dst=acc)

    _warp_sum(k, acc)
    lane = k.and_(tid, 31)
    warp = k.shr(tid, 5)
    is_lane0 = k.setp("eq", lane, 0)
    slot = k.add(k.mov(warp_sums, type=pg.u32), k.shl(warp, 2))
    k.st(slot, acc, space="shared", guard=is_lane0)
    k.bar_sync(0)

    with k.if_(k.setp("eq", warp, 0)):
        lane_ok = k.setp("lt", lane, WARPS)
        w = k.mov(0.0, type=pg.f32, dst=k.reg(pg.f32, "w"))
        k.ld(k.add(k.mov(warp_sums, type=pg.u32), k.shl(lane, 2)), pg.f32, space="shared", dst=w, guard=lane_ok)
        _warp_sum(k, w)
        with k.if_(is_lane0):
            k.st(k.add(out, k.mul(cta, 4, mode="wide")), w)
    k.ret()
    return m


def run(module, rng):
    from ptxgen.runtime import DeviceBuffer
    f = module.function("block_reduce")
    per_block = BLOCK * ITEMS
    checks = []
    for n in (1, 1023, 1024, 1000003):
        x = rng.standard_normal(n).astype(np.float32)
        blocks = (n + per_block - 1) // per_block
        dx = DeviceBuffer.from_numpy(x)
        dout = DeviceBuffer.empty(blocks * 4)
        dout.fill_bytes(0xFF)  # poison: NaN wherever the kernel fails to write
        f.launch((blocks,), (BLOCK,), [dx, dout, np.uint32(n)])
        got = dout.to_numpy(shape=(blocks,), dtype=np.float32)
        pad = np.zeros(blocks * per_block, np.float64)
        pad[:n] = x
        ref = pad.reshape(blocks, per_block).sum(axis=1)
        checks.append(assert_close(f"block sums n={n}", got, ref, rtol=1e-5, atol=1e-4))
        total = got.astype(np.float64).sum()
        checks.append(assert_close(f"total n={n}", np.array([total]), np.array([x.astype(np.float64).sum()]),
                                   rtol=1e-5, atol=1e-3))
        dx.free()
        dout.free()
    return checks


if __name__ == "__main__":
    sys.exit(main("block_reduce", build, run))
