"""bench/fence_latency.py's kernels (a fence or a load timed while bulk copies are in flight): they lint
clean, assemble without spills, and on the executor every CTA's copies land where they were sent (the sum
of their first words), the timed load reads the flag, and the clocks give positive spans."""
import numpy as np
import pytest

from _build_checks import assembles_without_spills
from _samples import load_bench

fl = load_bench("fence_latency")


@pytest.fixture(scope="module")
def module():
    return fl.build("sm_90a")


def test_lints_clean(module):
    from ptxgen.lint import lint_ptx
    assert lint_ptx(str(module.emit())) == []


@pytest.mark.ptxas
def test_assembles_without_spills(module):
    assembles_without_spills(module, {fl.kernel_name(op) for op in fl.OPS})


@pytest.mark.parametrize("op, copies", [("fence", 3), ("acquire", 1), ("none", 0)])
def test_copies_and_clocks_on_the_executor(module, op, copies):
    from ptxgen.executor import Buffer, run_kernel
    grid, sets = 2, 2
    rng = np.random.default_rng(7)
    words = rng.integers(0, 1 << 20, sets * grid * fl.MAX_COPIES * fl.COPY_BYTES // 4, dtype=np.uint32)
    off = grid * fl.MAX_COPIES * fl.COPY_BYTES           # the second set
    out = Buffer(np.full(grid * fl.SLOTS, 0xFFFF, dtype=np.uint64))
    run_kernel(module, fl.kernel_name(op), grid=(grid,), block=(fl.THREADS,),
               args=[Buffer(words), Buffer(np.ones(1, dtype=np.uint32)), out, np.uint64(off), np.uint32(copies)],
               dynamic_shared=fl.MAX_COPIES * fl.COPY_BYTES + 8, max_steps=5_000_000)
    o = out.array.reshape(grid, fl.SLOTS)
    np.testing.assert_array_equal(o[:, 3], fl.expected_sums(words, off, grid, copies))
    assert (o[:, 2] == (1 if op == "acquire" else 0)).all()
    assert (o[:, 0] > 0).all() and (o[:, 1] > 0).all() and (o[:, 0] < 0xFFFF).all()


@pytest.mark.parametrize("argv, message", [
    (["--copies", "5"], "--copies takes 1 to 4; got 5"), (["--copies", "0"], "--copies takes 1 to 4; got 0"),
    (["--ops", "fence,membar"], "--ops takes operations among"), (["--launches", "0"], "take positive counts"),
    (["--sets", "-1"], "take positive counts")])
def test_bad_arguments_are_refused_before_touching_a_gpu(argv, message, capsys):
    with pytest.raises(SystemExit) as ei:
        fl.main(argv)
    assert ei.value.code == 2 and message in capsys.readouterr().err
