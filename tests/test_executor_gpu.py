"""The CPU executor and the GPU agree on the same kernels and inputs (needs a GPU)."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _executor_kernels import M, N, hgemm_bad_ldmatrix, hgemm_inputs, load_sample  # noqa: E402
from ptxgen.executor import Buffer, run_kernel  # noqa: E402

pytestmark = pytest.mark.gpu


def _on_gpu(module, name, a_bits, b_bits):
    from ptxgen.runtime import DeviceBuffer, load_module
    f = load_module(module.emit()).function(name)
    da, db = DeviceBuffer.from_numpy(a_bits), DeviceBuffer.from_numpy(b_bits)
    dc = DeviceBuffer.empty(M * N * 4)
    dc.fill_bytes(0xFF)
    try:
        f.launch((1,), (32,), [da, db, dc])
        return dc.to_numpy(shape=(M, N), dtype=np.float32)
    finally:
        for d in (da, db, dc):
            d.free()


def _on_cpu(module, name, a_bits, b_bits):
    c = np.full((M, N), np.nan, np.float32)
    run_kernel(module, name, grid=(1,), block=(32,), args=[Buffer(a_bits), Buffer(b_bits), Buffer(c)])
    return c


@pytest.mark.parametrize("in_type", ["f16", "bf16"])
@pytest.mark.parametrize("variant", ["sample", "bad_ldmatrix"])
def test_executor_matches_gpu(in_type, variant):
    if variant == "sample":
        mod, name = load_sample("hgemm_mma").build(), f"hgemm_mma_m16n8k16_{in_type}"
    else:
        mod, name = hgemm_bad_ldmatrix(), f"hgemm_bad_{in_type}"
    rng = np.random.default_rng(5)
    for _ in range(3):
        a_bits, b_bits, a, b = hgemm_inputs(rng, in_type)
        gpu = _on_gpu(mod, name, a_bits, b_bits)
        cpu = _on_cpu(mod, name, a_bits, b_bits)
        # the executor accumulates in float64; the tensor core's f32 accumulation may differ in the last bits
        np.testing.assert_allclose(cpu, gpu, rtol=1e-5, atol=1e-5)
        if variant == "bad_ldmatrix":
            assert not np.allclose(gpu, a @ b, rtol=1e-3, atol=1e-3)  # the bug is real on the hardware too


@pytest.mark.parametrize("n", [8, 64, 256])
def test_wgmma_tile_executor_matches_gpu(n):
    from ptxgen.harness import to_bf16_bits
    from ptxgen.runtime import DeviceBuffer, load_module, synchronize
    w = load_sample("wgmma_tile")
    mod = w.build()
    rng = np.random.default_rng(n)
    a = to_bf16_bits(rng.standard_normal((64, 64)).astype(np.float32))
    b = to_bf16_bits(rng.standard_normal((n, 64)).astype(np.float32))
    f = load_module(mod.emit()).function(w.kernel_name(n))
    with DeviceBuffer.from_numpy(a) as da, DeviceBuffer.from_numpy(b) as db, DeviceBuffer.empty(64 * n * 4) as dc:
        dc.fill_bytes(0xFF)
        f.launch((1,), (128,), [da, db, dc])
        synchronize()
        gpu = dc.to_numpy(shape=(64, n), dtype=np.float32)
    cpu = np.full((64, n), np.nan, np.float32)
    run_kernel(mod, w.kernel_name(n), grid=(1,), block=(128,), args=[Buffer(a), Buffer(b), Buffer(cpu)])
    np.testing.assert_allclose(cpu, gpu, rtol=1e-4, atol=1e-4)
