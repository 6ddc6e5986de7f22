"""hgemm_mma_m16n8k16: the naive one-warp tensor-core product C[16x8] = A[16x16] @ B[16x8].

A (row-major) and B (row-major K x N) are staged in shared memory; `ldmatrix.x4` loads the A
fragment with per-lane row addresses [lane % 16][(lane / 16) * 8], `ldmatrix.x2.trans` loads B, one
`mma.sync.aligned.m16n8k16.row.col` multiplies (f16 and bf16 inputs, f32 accumulators), and each
lane writes C[lane/4][(lane%4)*2 + {0,1}] and the same columns of row lane/4 + 8.

    python3 samples/hgemm_mma.py [--target sm_80] [--no-run]
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import ptxgen as pg  # noqa: E402
from ptxgen.harness import assert_close, from_bf16_bits, main, to_bf16_bits  # noqa: E402

M, N, K = 16, 8, 16


def _kernel(m: pg.Module, name: str, in_type: str):
    k = m.entry(name, reqntid=32)
    pa = k.param_ptr("a", align=16)
    pb = k.param_ptr("b", align=16)
    pc = k.param_ptr("c", pg.f32, align=8)
    sa = k.shared("sa", M * K * 2, align=128)
    sb = k.shared("sb", K * N * 2, align=128)

    ga = k.cvta(k.ld_param(pa), "global", to=True)
    gb = k.cvta(k.ld_param(pb), "global", to=True)
    gc = k.cvta(k.ld_param(pc), "global", to=True)
    lane = k.tid.x

    # A: lane t copies 8 halves (16 bytes) of row t/2 starting at column (t%2)*8: byte offset 16*t
    off_a = k.shl(lane, 4)
    va = k.ld(k.add(ga, k.cvt(off_a, pg.u64, pg.u32)), pg.b32, vec=4)
    sa_base = k.mov(sa, type=pg.u32)
    k.st(k.add(sa_base, off_a), va, pg.b32, space="shared")
    # B: lanes 0..15 copy one 16-byte row each
    sb_base = k.mov(sb, type=pg.u32)
    with k.if_(k.setp("lt", lane, 16)):
        vb = k.ld(k.add(gb, k.cvt(off_a, pg.u64, pg.u32)), pg.b32, vec=4)
        k.st(k.add(sb_base, off_a), vb, pg.b32, space="shared")
    k.bar_sync(0)

    # ldmatrix A: lane l gives the address of row l%16, column (l/16)*8 (elements of 2 bytes)
    row = k.and_(lane, 15)
    col = k.shl(k.shr(lane, 4), 3)
    a_elem = k.add(k.shl(row, 4), col)            # row * 16 + col
    afrag = k.ldmatrix(k.add(sa_base, k.shl(a_elem, 1)), num=4)
    # ldmatrix B (trans): lanes 0..15 give rows 0..15 of the K x N tile (8 elements = 16 bytes each)
    bfrag = k.ldmatrix(k.add(sb_base, k.shl(row, 4)), num=2, trans=True)

    acc = k.regs(pg.f32, 4, name="acc")
    for r in acc:
        k.mov(0.0, dst=r)
    k.mma_sync("m16n8k16", acc, afrag, bfrag, acc, atype=in_type, ctype="f32")

    # C: c0,c1 at [lane/4][(lane%4)*2 + 0,1]; c2,c3 at row lane/4 + 8
    crow = k.shr(lane, 2)
    ccol = k.shl(k.and_(lane, 3), 1)
    idx = k.add(k.shl(crow, 3), ccol)             # row * 8 + col
    addr = k.add(gc, k.mul(idx, 4, mode="wide"))
    k.st(addr, [acc[0], acc[1]])
    k.st(pg.mem(addr, 8 * N * 4), [acc[2], acc[3]])
    k.ret()


def build(target: str = "sm_90a") -> pg.Module:
    m = pg.Module(target)
    _kernel(m, "hgemm_mma_m16n8k16_f16", "f16")
    _kernel(m, "hgemm_mma_m16n8k16_bf16", "bf16")
    return m


def run(module, rng):
    from ptxgen.runtime import DeviceBuffer
    checks = []
    for in_type in ("f16", "bf16"):
        f = module.function(f"hgemm_mma_m16n8k16_{in_type}")
        for trial in range(3):
            a32 = rng.standard_normal((M, K)).astype(np.float32)
            b32 = rng.standard_normal((K, N)).astype(np.float32)
            if in_type == "f16":
                a_bits, b_bits = a32.astype(np.float16).view(np.uint16), b32.astype(np.float16).view(np.uint16)
                a_val, b_val = a32.astype(np.float16).astype(np.float64), b32.astype(np.float16).astype(np.float64)
            else:
                a_bits, b_bits = to_bf16_bits(a32), to_bf16_bits(b32)
                a_val, b_val = from_bf16_bits(a_bits).astype(np.float64), from_bf16_bits(b_bits).astype(np.float64)
            da, db = DeviceBuffer.from_numpy(a_bits), DeviceBuffer.from_numpy(b_bits)
            dc = DeviceBuffer.empty(M * N * 4)
            dc.fill_bytes(0xFF)  # poison
            f.launch((1,), (32,), [da, db, dc])
            got = dc.to_numpy(shape=(M, N), dtype=np.float32)
            checks.append(assert_close(f"{in_type} 16x16 @ 16x8 trial {trial}", got, a_val @ b_val,
                                       rtol=1e-5, atol=1e-5))
            for d in (da, db, dc):
                d.free()
    return checks


if __name__ == "__main__":
    sys.exit(main("hgemm_mma_m16n8k16", build, run))
