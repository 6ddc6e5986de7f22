"""The executor's cluster kernels on the GPU (needs an sm_90 GPU): distributed shared memory through mapa,
barrier.cluster, remote mbarrier arrivals, and st.async / red.async completing on the receiver's mbarrier
give on the hardware what the executor gives and what the numpy expectation says."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from test_executor_cluster import (T, async_store_module, neighbour_expected, neighbour_module,  # noqa: E402
                                   reduce_module, remote_mbarrier_module)
from ptxgen.executor import Buffer, run_kernel  # noqa: E402

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def sm90():
    from ptxgen import runtime as R
    ctx = R.get_context()
    if ctx.compute_capability != (9, 0):
        pytest.skip(f"the cluster kernels are built for sm_90a; this device is {ctx.arch}")
    return R


def _on_gpu(R, module, name, grid, block, inputs, out_like, cluster):
    """Launch `name` of `module` with the given cluster shape; inputs are copied in, the output buffer
    (shaped and typed as out_like) is filled with 0xFF bytes first; returns the output."""
    f = R.load_module(module.emit()).function(name)
    bufs = [R.DeviceBuffer.from_numpy(np.ascontiguousarray(x)) for x in inputs]
    out = R.DeviceBuffer.empty(out_like.nbytes)
    out.fill_bytes(0xFF)
    try:
        f.launch(grid, block, bufs + [out], cluster=cluster)
        R.synchronize()
        return out.to_numpy(shape=out_like.shape, dtype=out_like.dtype)
    finally:
        for d in bufs + [out]:
            d.free()


def test_neighbour_reads_the_next_ctas_shared_memory_on_the_gpu(sm90):
    out = np.zeros((8, T), np.uint32)
    got = _on_gpu(sm90, neighbour_module(), "neighbour", (8,), (T,), [], out, (4, 1, 1))
    np.testing.assert_array_equal(got, neighbour_expected(8, 4))


@pytest.mark.parametrize("P", [2, 8])
def test_cluster_reduction_on_the_gpu_matches_the_executor_bit_for_bit(sm90, P):
    L, nclusters = 256, 2
    x = np.random.default_rng(100 + P).standard_normal((nclusters * P, L)).astype(np.float32)
    out = np.full((nclusters, L), np.nan, np.float32)
    got = _on_gpu(sm90, reduce_module(L), "cluster_reduce", (nclusters * P,), (32,), [x], out, (P, 1, 1))
    run_kernel(reduce_module(L), "cluster_reduce", grid=(nclusters * P,), block=(32,), args=[Buffer(x), Buffer(out)],
               cluster=(P,))
    np.testing.assert_array_equal(got, out)              # the same float32 adds in the same order
    np.testing.assert_allclose(got, x.reshape(nclusters, P, L).sum(1, dtype=np.float64), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("P", [2, 4])
def test_remote_mbarrier_arrive_on_the_gpu(sm90, P):
    out = np.zeros((2 * P, 32), np.uint32)
    got = _on_gpu(sm90, remote_mbarrier_module(P), "ring", (2 * P,), (32,), [], out, (P, 1, 1))
    prev = (np.arange(2 * P) % P - 1) % P
    np.testing.assert_array_equal(got, prev[:, None] * 1000 + np.arange(32)[None, :])


@pytest.mark.parametrize("P", [2, 4])
def test_async_stores_on_the_gpu_complete_on_the_receivers_mbarrier(sm90, P):
    out = np.zeros((2 * P, 32, 3), np.uint32)
    got = _on_gpu(sm90, async_store_module(P), "push", (2 * P,), (32,), [], out, (P, 1, 1))
    run_kernel(async_store_module(P), "push", grid=(2 * P,), block=(32,), args=[Buffer(out)], cluster=P)
    np.testing.assert_array_equal(got, out)
    prev = (np.arange(2 * P) % P - 1) % P
    np.testing.assert_array_equal(got[..., 0], prev[:, None] * 1000 + np.arange(32)[None, :])
    np.testing.assert_array_equal(got[..., 2], np.broadcast_to(32 * (prev[:, None] + 1), (2 * P, 32)))
