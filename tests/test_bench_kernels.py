"""The kernels of bench/mma_peak.py (the ceilings the GEMM tables are held against): they lint clean,
assemble without spills, keep the fragments random, and the TMA stream's ring never deadlocks."""
import numpy as np
import pytest

from _samples import load_bench

mp = load_bench("mma_peak")


@pytest.fixture(scope="module")
def module():
    return mp.build("sm_90a")[0]


def test_lints_clean(module):
    from ptxgen.lint import lint_ptx
    assert lint_ptx(str(module.emit())) == []


@pytest.mark.ptxas
def test_assembles_without_spills(module):
    from ptxgen.ptxas import assemble
    res = assemble(module.emit(), "sm_90a", cache=False)
    assert not res.warnings, [str(w) for w in res.warnings]
    names = {"wgmma_peak", "wgmma_peak_pattern", "tma_stream"} | {f"mma_sync_peak_w{w}_c{c}" for w, c in mp.MMA_SHAPES} \
        | {mp.wgmma_name("random", w, s, n) for w, s, n in mp.WGMMA_SPLITS}
    assert names <= set(res.resources)
    for name in names:
        assert res.resources[name].spill_stores == 0 and res.resources[name].spill_loads == 0, name


def test_random_fragments_are_bf16_of_the_intended_range():
    """_random_bf16x2 replayed on the executor: distinct words, random signs, magnitudes 0.125-2."""
    import ptxgen as pg
    from ptxgen.executor import Buffer, run_kernel
    m = pg.Module("sm_90a")
    k = m.entry("rnd", reqntid=128)
    out = k.cvta(k.ld_param(k.param_ptr("out", pg.u32, align=4)), "global", to=True)
    tid = k.tid.x
    k.st(k.add(out, k.mul(tid, 4, mode="wide")), mp._random_bf16x2(k, tid))
    k.ret()
    buf = Buffer(np.zeros(128, np.uint32))
    run_kernel(m, "rnd", grid=(1,), block=(128,), args=[buf])
    words = buf.array
    halves = np.concatenate([words & 0xFFFF, words >> 16]).astype(np.uint32)
    vals = (halves << 16).view(np.float32)
    assert len(set(words.tolist())) > 120
    assert 0.3 < (vals < 0).mean() < 0.7
    assert np.all((np.abs(vals) >= 0.125) & (np.abs(vals) < 2.0))


@pytest.mark.parametrize("loops", [4, 5, 11])
def test_tma_stream_ring_completes(module, loops):
    """The stream's ring on the CPU executor: every stage's expect_tx is met and every wait ends
    (a wrong parity would be reported as a deadlock)."""
    from ptxgen.executor import Buffer, run_kernel, tensor_map
    rng = np.random.default_rng(loops)
    a = Buffer(rng.integers(0, 2 ** 16, (128, 256), dtype=np.uint16))
    b = Buffer(rng.integers(0, 2 ** 16, (256, 256), dtype=np.uint16))
    ta = tensor_map(a, box=(128, 64), swizzle="128B", dtype="bf16")
    tb = tensor_map(b, box=(256, 64), swizzle="128B", dtype="bf16")
    run_kernel(module, "tma_stream", grid=(1,), block=(32,),
               dynamic_shared=mp.TMA_STAGES * mp.TMA_STAGE_BYTES + 8 * mp.TMA_STAGES + 1024,
               args=[ta, tb, np.uint32(loops), np.uint32(4)])   # raises DeadlockError on a wrong parity
