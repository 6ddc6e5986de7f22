"""bench/dsmem_bw.py's kernels (distributed shared memory pulled and pushed within a cluster): they lint
clean, assemble without spills, and on the executor every thread's sum is what its pieces hold, so the
pulls read the peers the table says and the pushes complete before the clock stops."""
import numpy as np
import pytest

from _build_checks import assembles_without_spills
from _samples import load_bench

ds = load_bench("dsmem_bw")


@pytest.fixture(scope="module")
def module():
    return ds.build("sm_90a")


def test_lints_clean(module):
    from ptxgen.lint import lint_ptx
    assert lint_ptx(str(module.emit())) == []


@pytest.mark.ptxas
def test_assembles_without_spills(module):
    assembles_without_spills(module, {ds.kernel_name(mode, p) for mode in ds.MODES for p in ds.SIZES})


@pytest.mark.parametrize("mode, parts", [("local", 2), ("pull", 2), ("pull", 4), ("push", 4)])
def test_sums_on_the_executor(module, mode, parts):
    from ptxgen.executor import Buffer, run_kernel
    loops, grid = 2, 2 * parts
    out = Buffer(np.full(grid * ds.THREADS, np.nan, dtype=np.float32))
    cyc = Buffer(np.zeros(grid, dtype=np.uint64))
    run_kernel(module, ds.kernel_name(mode, parts), grid=(grid,), block=(ds.THREADS,),
               args=[out, cyc, np.uint32(loops), np.uint32(0)], dynamic_shared=ds.BUF_BYTES,
               cluster=(parts,), max_steps=50_000_000)
    np.testing.assert_array_equal(out.array, ds.expected_sums(mode, parts, grid, loops).astype(np.float32))
    assert (cyc.array > 0).all()


def test_expected_sums_tell_the_peers_apart():
    """A pull from the wrong peer would give another sum: the expected sums of pull and local differ for
    every thread, and pull's differ between cluster sizes."""
    local, pull2, pull4 = (ds.expected_sums(mo, p, 4, 1) for mo, p in (("local", 2), ("pull", 2), ("pull", 4)))
    assert (local != pull2).mean() > 0.9 and (pull2 != pull4).mean() > 0.5


def test_rejects_bad_arguments(capsys):
    for argv in (["--sizes", "3"], ["--sizes", "2,x"], ["--loops", "0"], ["--clusters", "none"]):
        with pytest.raises(SystemExit) as e:
            ds.main(argv)
        assert e.value.code == 2, argv
        assert "error" in capsys.readouterr().err
