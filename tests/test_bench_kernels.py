"""The kernels of bench/mma_peak.py (the ceilings the GEMM tables are held against): they lint clean,
assemble without spills, keep the fragments random, and the TMA stream's ring never deadlocks."""
import numpy as np
import pytest

from _build_checks import assembles_without_spills
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
    assembles_without_spills(module, {"wgmma_peak", "wgmma_peak_pattern", "wgmma_peak_regs", "wgmma_peak_copies",
                                      "tma_stream"} | {f"mma_sync_peak_w{w}_c{c}" for w, c in mp.MMA_SHAPES}
                             | {mp.wgmma_name("random", w, s, n) for w, s, n in mp.WGMMA_SPLITS})


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


@pytest.mark.parametrize("extra, ok", [(0, True), (16, False)])
def test_copies_row_meets_every_expect_tx(monkeypatch, extra, ok):
    """The "copies" ceiling kernel on the CPU executor, three iterations: the copying warp's expect_tx is
    met each time and its parity waits end, while the warpgroups' sums come out finite; with an expect_tx
    `extra` bytes above what the copies bring, the executor reports the wait that cannot end."""
    import ptxgen as pg
    from ptxgen.executor import Buffer, DeadlockError, run_kernel
    orig = pg.KernelBuilder.mbarrier_arrive_expect_tx
    monkeypatch.setattr(pg.KernelBuilder, "mbarrier_arrive_expect_tx",
                        lambda self, addr, tx, **kw: orig(self, addr, tx + extra, **kw))
    m = pg.Module("sm_90a")
    smem = mp.wgmma_kernel(m, "copies")[1]
    src = np.random.default_rng(3).integers(0, 256, mp.COPY_SOURCES * mp.COPY_CHUNKS * mp.COPY_CHUNK, dtype=np.uint8)
    out = Buffer(np.full(256, np.nan, np.float32))
    run = lambda: run_kernel(m, mp.wgmma_name("copies"), grid=(1,), block=(288,), dynamic_shared=smem,  # noqa: E731
                             args=[out, np.uint32(3), Buffer(src)])
    if ok:
        run()
        assert np.isfinite(out.array).all() and (out.array != 0).any()
    else:
        with pytest.raises(DeadlockError):
            run()


def test_shared_clock_bounds_divide_the_best_random_ceiling_by_cublas_per_ghz():
    """The bound table: the best random-operand row of each instruction per GHz over each cuBLAS row's;
    pattern rows (fewer gates switching), the row with copies beside the math, and rows without a clock
    sample do not count."""
    rows = [("mma.sync m16n8k16 bf16, 8 warps/SM, 32 chains", 1.0, 600.0, (2000.0, 500.0, 60.0), 40),
            ("mma.sync m16n8k16 bf16, 16 warps/SM, 16 chains", 1.0, 620.0, (2000.0, 520.0, 60.0), 40),
            ("wgmma m64n256k16 bf16, 2 warpgroups/SM, random bf16", 1.0, 900.0, (1875.0, 690.0, 70.0), 168),
            ("wgmma m64n256k16 bf16, 2 warpgroups/SM, repeating bf16 pattern", 1.0, 990.0, (1980.0, 530.0, 60.0), 168),
            ("wgmma m64n240k16 bf16, 2 warpgroups/SM, random bf16", 1.0, 950.0, None, 168),
            ("wgmma m64n256k16 bf16, 2 warpgroups/SM, random bf16, 48 KiB copied in per 4 k-steps", 1.0, 990.0,
             (1875.0, 700.0, 70.0), 168),
            (f"{mp.CUBLAS_LABEL} 4096^3", 1.0, 700.0, (1600.0, 700.0, 70.0), None),
            (f"{mp.CUBLAS_LABEL} 6144^3", 1.0, 690.0, None, None),
            (f"{mp.CUBLAS_LABEL} 8192^3", 1.0, 675.0, (1500.0, 700.0, 70.0), None)]
    got = mp.shared_clock_bounds(rows)
    assert [n for n, *_ in got] == [4096, 8192]
    wg, ms = 900.0 / 1.875, 620.0 / 2.0
    for (n, per_ghz, b_wg, b_ms), clk, tf in zip(got, (1.6, 1.5), (700.0, 675.0)):
        assert per_ghz == pytest.approx(tf / clk)
        assert b_wg == pytest.approx(wg / (tf / clk)) and b_ms == pytest.approx(ms / (tf / clk))
    # without any wgmma row (a GPU before sm_90) the wgmma bound is missing, not zero
    only_mma = [r for r in rows if not r[0].startswith("wgmma")]
    assert [b[2] for b in mp.shared_clock_bounds(only_mma)] == [None, None]


@pytest.mark.parametrize("argv, match", [(["--sizes", "4096,x"], "--sizes takes"), (["--sizes", ""], "--sizes takes"),
                                          (["--size", "8"], "got '8'")])
def test_bad_sizes_end_with_a_usage_error(argv, match, capsys):
    with pytest.raises(SystemExit) as e:
        mp.main(argv)
    assert e.value.code == 2 and match in capsys.readouterr().err
