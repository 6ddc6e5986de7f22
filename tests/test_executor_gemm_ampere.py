"""samples/gemm_ampere.py (cp.async ring, swizzled ldmatrix, mma.sync) runs in the CPU executor on
ragged problems, every tile option, and matches numpy; its GPU runs are in tests/test_gemm_ampere.py."""
import numpy as np
import pytest

from ptxgen.executor import Buffer, run_kernel
from ptxgen.harness import from_bf16_bits, to_bf16_bits

from _samples import load_sample

g = load_sample("gemm_ampere")


def _run(layout, m, n, k, bn, bk, stages, epi="direct", seed=0):
    mod = g.build("sm_90a", bn=bn, bk=bk, stages=stages, epi=epi)
    rng = np.random.default_rng(seed)
    a = to_bf16_bits(rng.standard_normal((m, k)).astype(np.float32))
    b = to_bf16_bits(rng.standard_normal((k, n) if layout == "nn" else (n, k)).astype(np.float32))
    c = np.full((m, n), 0xFFFF, np.uint16)            # bf16 NaN poison
    run_kernel(mod, g.KERNELS[layout], grid=g.grid_for(m, n, bn), block=(g.THREADS,),
               dynamic_shared=g.smem_bytes(bn, bk, stages),
               args=[Buffer(a), Buffer(b), Buffer(c), np.uint32(m), np.uint32(n), np.uint32(k)])
    bm = from_bf16_bits(b).astype(np.float64)
    ref = from_bf16_bits(a).astype(np.float64) @ (bm if layout == "nn" else bm.T)
    return from_bf16_bits(c).astype(np.float64), ref


@pytest.mark.parametrize("layout", ["nn", "nt"])
@pytest.mark.parametrize("bn, bk, stages, epi, shape", [
    (128, 32, 4, "direct", (130, 136, 40)),   # the default tile: ragged M and N, a partial second k-tile
    (256, 64, 3, "direct", (130, 264, 200)),  # 4 tiles, 4 k-tiles (the last partial): the 3-stage ring wraps
    (128, 64, 4, "direct", (72, 128, 520)),   # 9 k-tiles through 4 stages
    (256, 32, 2, "smem", (130, 264, 200)),    # the staged epilogue: a tile larger than the 2-stage ring
    (128, 32, 4, "smem", (200, 136, 72)),
])
def test_kernel_matches_numpy(layout, bn, bk, stages, epi, shape):
    got, ref = _run(layout, *shape, bn, bk, stages, epi)
    assert not np.isnan(got).any(), "elements left unwritten"
    err = np.abs(got - ref)
    tol = 2.0 ** -8 * np.abs(ref) + 1e-3 * np.sqrt(shape[2])   # bf16 rounding of C
    assert (err <= tol).all(), f"{int((err > tol).sum())} elements differ"
