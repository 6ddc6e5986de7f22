"""wgmma_tile: one warpgroup computes C[64 x N] = A[64 x 64] @ B[N x 64]^T with wgmma.mma_async (bf16 -> f32).

Both operands are K-major (A row-major 64 x K, B stored N x K) and live in shared memory in the
128-byte swizzled layout that wgmma reads through descriptors: each 128-byte row (64 bf16 of K)
keeps its eight 16-byte chunks, chunk c stored at chunk c ^ (row % 8), and every tile starts on a
1024-byte boundary so that the pattern (a function of the address) starts at row 0. The threads
place the elements themselves with plain loads and stores, then `fence.proxy.async.shared::cta`
(their generic-proxy stores become visible to the async proxy that wgmma reads with) and bar.sync.

Descriptors (ptxgen.ops.wgmma_desc): start address >> 4, LBO 16 (unused by a swizzled K-major
operand), SBO 1024 (the step between 8-row groups: 8 rows x 128 bytes), swizzle 128B, base offset 0.
Each wgmma consumes K = 16 (32 bytes of a row), so the K loop advances the start address by 32
bytes inside the swizzled row, as CUTLASS does; the hardware applies the XOR to the final address.

The accumulator fragment of m64nNk16: thread t of warp w holds d[i] at row 16w + t/4 + 8*((i/2)%2),
column 8*(i/4) + 2*(t%4) + i%2.

    python3 samples/wgmma_tile.py [--no-run] [--seed N]
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import ptxgen as pg  # noqa: E402
from ptxgen.harness import assert_close, from_bf16_bits, main, to_bf16_bits  # noqa: E402
from ptxgen.ops.wgmma_desc import SmemTile  # noqa: E402

M, K = 64, 64                 # one 128-byte swizzled row holds all of K
K_STEP = 16                   # K of one wgmma.m64nNk16
ROW_BYTES = K * 2
N_VALUES = (8, 64, 128, 256)
# every field but the start address: LBO 16, SBO 1024, 128B swizzle, base offset 0
TILE_A = SmemTile(M, K, "bf16", "K", "128B")
DESC_FIXED = TILE_A.fixed_bits()


def kernel_name(n: int) -> str:
    return f"wgmma_m64n{n}k16_bf16_f32"


def swizzled_offset(row, k):
    """Byte offset of element (row, k) of a K-major bf16 tile in the 128B-swizzled layout (numpy-friendly)."""
    chunk = (k * 2) >> 4
    return row * ROW_BYTES + ((chunk ^ (row % 8)) << 4) + (k * 2) % 16


def _stage(k, gbase, sbase, rows: int, tid):
    """Copy a rows x 128-byte tile from global (dense) to shared (128B-swizzled), 16 bytes per step."""
    with k.for_range(tid, rows * (ROW_BYTES // 16), 128, name="q") as q:
        row = k.shr(q, 3)
        chunk = k.and_(q, 7)
        v = k.ld(k.add(gbase, k.cvt(k.shl(q, 4), pg.u64, pg.u32)), pg.b32, vec=4)
        soff = k.or_(k.shl(row, 7), k.shl(k.xor(chunk, k.and_(row, 7)), 4))
        k.st(k.add(sbase, soff), v, pg.b32, space="shared")


def _kernel(m: pg.Module, n: int):
    k = m.entry(kernel_name(n), reqntid=128)
    pa = k.param_ptr("a", align=16)
    pb = k.param_ptr("b", align=16)
    pc = k.param_ptr("c", pg.f32, align=16)
    sa = k.shared("sa", M * ROW_BYTES, align=1024)
    sb = k.shared("sb", n * ROW_BYTES, align=1024)
    ga = k.cvta(k.ld_param(pa), "global", to=True)
    gb = k.cvta(k.ld_param(pb), "global", to=True)
    gc = k.cvta(k.ld_param(pc), "global", to=True)
    tid = k.tid.x
    sa_base = k.mov(sa, type=pg.u32)
    sb_base = k.mov(sb, type=pg.u32)

    _stage(k, ga, sa_base, M, tid)
    _stage(k, gb, sb_base, n, tid)
    # the stores above are generic-proxy writes; wgmma reads shared memory through the async proxy
    k.fence_proxy_async("shared::cta")
    k.bar_sync(0)

    shape = f"m64n{n}k16"
    acc = k.wgmma_fragment("d", shape, dtype="f32", atype="bf16", name="acc")
    for r in acc:
        k.mov(0.0, dst=r)
    k.wgmma_fence()  # orders the accumulator writes above before the first wgmma reads them
    for step in range(K // K_STEP):
        off = TILE_A.slice_offset(step)  # the same for B: both tiles are K-major 128B with K = 64
        da = k.wgmma_descriptor(k.add(sa_base, off), DESC_FIXED)
        db = k.wgmma_descriptor(k.add(sb_base, off), DESC_FIXED)
        k.wgmma_mma_async(shape, acc, da, db, dtype="f32", atype="bf16", btype="bf16")
    k.wgmma_commit_group()
    k.wgmma_wait_group(0)

    lane = k.and_(tid, 31)
    row = k.add(k.shl(k.shr(tid, 5), 4), k.shr(lane, 2))         # 16 * warp + lane / 4
    col = k.shl(k.and_(lane, 3), 1)                             # 2 * (lane % 4)
    idx = k.mad(row, n, col, mode="lo")
    addr = k.add(gc, k.mul(idx, 4, mode="wide"))
    for j in range(n // 8):
        k.st(pg.mem(addr, 32 * j), [acc[4 * j], acc[4 * j + 1]])
        k.st(pg.mem(addr, 32 * j + 8 * n * 4), [acc[4 * j + 2], acc[4 * j + 3]])
    k.ret()


def build(target: str = "sm_90a") -> pg.Module:
    m = pg.Module(target)
    for n in N_VALUES:
        _kernel(m, n)
    return m


def multiply(module, rng, n: int):
    """Launch the m64n{n} kernel on fresh random bf16 A (64 x K) and B (n x K); return (C, float64 A @ B^T)."""
    from ptxgen.runtime import DeviceBuffer, synchronize
    f = module.function(kernel_name(n))
    a_bits = to_bf16_bits(rng.standard_normal((M, K)).astype(np.float32))
    b_bits = to_bf16_bits(rng.standard_normal((n, K)).astype(np.float32))
    ref = from_bf16_bits(a_bits).astype(np.float64) @ from_bf16_bits(b_bits).astype(np.float64).T
    with DeviceBuffer.from_numpy(a_bits) as da, DeviceBuffer.from_numpy(b_bits) as db, \
            DeviceBuffer.empty(M * n * 4) as dc:
        dc.fill_bytes(0xFF)  # poison: NaN in every float that the kernel fails to write
        f.launch((1,), (128,), [da, db, dc])
        synchronize()
        got = dc.to_numpy(shape=(M, n), dtype=np.float32)
    return got, ref


def check(n: int, got, ref) -> str:
    """assert_close with the tolerance of f32 accumulation of K bf16 products."""
    return assert_close(f"wgmma m64n{n}k16 bf16->f32, K={K}, 128B-swizzled A and B", got, ref,
                        rtol=1e-3, atol=1e-3)


def run(module, rng):
    return [check(n, *multiply(module, rng, n)) for n in N_VALUES]


if __name__ == "__main__":
    sys.exit(main("wgmma_tile", build, run, default_target="sm_90a"))
