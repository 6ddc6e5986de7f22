"""Kernels and inputs shared by the executor tests, its GPU cross-check and bench/executor_speed.py."""
from __future__ import annotations


import numpy as np

import ptxgen as pg
from ptxgen.harness import from_bf16_bits, to_bf16_bits

from _samples import load_sample  # noqa: F401  (re-exported for the executor tests)

M, N, K = 16, 8, 16


def hgemm_bad_ldmatrix(target: str = "sm_90a") -> pg.Module:
    """samples/hgemm_mma.py's kernel with the classic bug: A's ldmatrix row address uses lane % 8, not lane % 16."""
    m = pg.Module(target)
    for in_type in ("f16", "bf16"):
        k = m.entry(f"hgemm_bad_{in_type}", reqntid=32)
        pa, pb = k.param_ptr("a", align=16), k.param_ptr("b", align=16)
        pc = k.param_ptr("c", pg.f32, align=8)
        sa, sb = k.shared("sa", M * K * 2, align=128), k.shared("sb", K * N * 2, align=128)
        ga = k.cvta(k.ld_param(pa), "global", to=True)
        gb = k.cvta(k.ld_param(pb), "global", to=True)
        gc = k.cvta(k.ld_param(pc), "global", to=True)
        lane = k.tid.x
        off = k.shl(lane, 4)
        sa_base, sb_base = k.mov(sa, type=pg.u32), k.mov(sb, type=pg.u32)
        k.st(k.add(sa_base, off), k.ld(k.add(ga, k.cvt(off, pg.u64, pg.u32)), pg.b32, vec=4), pg.b32, space="shared")
        with k.if_(k.setp("lt", lane, 16)):
            vb = k.ld(k.add(gb, k.cvt(off, pg.u64, pg.u32)), pg.b32, vec=4)
            k.st(k.add(sb_base, off), vb, pg.b32, space="shared")
        k.bar_sync(0)
        bad_row = k.and_(lane, 7)                  # the bug: rows 8..15 of A are never addressed
        col = k.shl(k.shr(lane, 4), 3)
        afrag = k.ldmatrix(k.add(sa_base, k.shl(k.add(k.shl(bad_row, 4), col), 1)), num=4)
        bfrag = k.ldmatrix(k.add(sb_base, k.shl(k.and_(lane, 15), 4)), num=2, trans=True)
        acc = k.regs(pg.f32, 4, name="acc")
        for r in acc:
            k.mov(0.0, dst=r)
        k.mma_sync("m16n8k16", acc, afrag, bfrag, acc, atype=in_type, ctype="f32")
        idx = k.add(k.shl(k.shr(lane, 2), 3), k.shl(k.and_(lane, 3), 1))
        addr = k.add(gc, k.mul(idx, 4, mode="wide"))
        k.st(addr, [acc[0], acc[1]])
        k.st(pg.mem(addr, 8 * N * 4), [acc[2], acc[3]])
        k.ret()
    return m


def hgemm_inputs(rng, in_type: str):
    """(a_bits, b_bits, a_values, b_values) of random A (16x16) and B (16x8) as f16 or bf16."""
    a32 = rng.standard_normal((M, K)).astype(np.float32)
    b32 = rng.standard_normal((K, N)).astype(np.float32)
    if in_type == "f16":
        a_bits, b_bits = a32.astype(np.float16).view(np.uint16), b32.astype(np.float16).view(np.uint16)
    else:
        a_bits, b_bits = to_bf16_bits(a32), to_bf16_bits(b32)
    return a_bits, b_bits, _values(a_bits, in_type), _values(b_bits, in_type)


def _values(bits, in_type):
    if in_type == "f16":
        return bits.view(np.float16).astype(np.float64)
    return from_bf16_bits(bits).astype(np.float64)
