"""bench/l2_model.py: the DRAM reads of a gemm_hopper tile order through a lockstep LRU cache."""
import re

import pytest

from _samples import SAMPLES_DIR, load_bench

l2 = load_bench("l2_model")


@pytest.fixture(autouse=True)
def _samples_importable(monkeypatch):
    monkeypatch.syspath_prepend(SAMPLES_DIR)


def _tiles(rows, cols, bm=128, bn=256):
    return [(r * bm, bm, c * bn) for c in range(cols) for r in range(rows)]


def test_a_cache_that_holds_everything_reads_each_operand_chunk_once():
    tiles = _tiles(4, 3)                                     # 512 rows of A, 768 of B, K = 640: 10 k-blocks
    got = l2.dram_bytes(tiles, 4, 640, 64, 256, capacity=1 << 40)
    assert got == (512 + 768) * 640 * 2


def test_a_cache_of_nothing_reads_every_chunk_every_time():
    tiles = _tiles(4, 3)
    assert l2.dram_bytes(tiles, 4, 640, 64, 256, capacity=0) == 12 * 10 * (128 + 256) * 64 * 2


def test_rounds_of_one_block_row_read_a_once_per_round_and_b_once_per_round():
    # grid 3: each round is one block row across the 3 columns; a cache of one k-step's chunks keeps
    # A's chunk for the whole step (3 hits after the first) but nothing across steps or rounds
    tiles = [(r * 128, 128, c * 256) for r in range(4) for c in range(3)]
    step = (128 + 3 * 256) * 64 * 2
    assert l2.dram_bytes(tiles, 3, 640, 64, 256, capacity=step) == 4 * 10 * step


def test_walking_k_down_in_odd_rounds_reuses_what_the_last_round_left():
    # two rounds sharing every B column: K upwards both times evicts what the second round needs first
    tiles = [(r * 128, 128, c * 256) for r in range(2) for c in range(4)]
    cap = 20 * 256 * 64 * 2                                  # half of B's 40 chunks
    up = l2.dram_bytes(tiles, 4, 640, 64, 256, capacity=cap)
    down = l2.dram_bytes(tiles, 4, 640, 64, 256, capacity=cap, kdir=1)
    assert down < up


def test_the_model_follows_the_kernels_unit_order():
    import gemm_hopper as h
    plain = h.Config("nt", 1, 3, group=16, bm=192)
    tiles, grid, split = l2.plan(plain, None, 6144, 6144, 132)
    assert (grid, split, len(tiles)) == (128, 6144, 768) and tiles == h.tile_order(plain, 6144, 6144, 6144)
    # an explicit row split: the grid the launch takes for it (at 8192^2 all 64 block rows in 128-row tiles:
    # 2048 units, 16 rounds on 128 CTAs), not split_for's (132 CTAs)
    assert l2.plan(plain, None, 8192, 8192, 132)[1] == 132
    tiles, grid, split = l2.plan(plain, 0, 8192, 8192, 132)
    assert (grid, split, len(tiles)) == (128, 0, 2048) and {t[1] for t in tiles} == {128}
    with pytest.raises(ValueError, match="stream-K"):
        l2.plan(h.auto_configs("nt")[3], None, 1024, 1024, 132)


def test_check_reproduces_the_measured_dram_reads(capsys):
    # bench/LOG.md rounds 14 and 19: the model at 25 MiB against ncu's DRAM reads on the H200
    assert l2.main(["--check"]) == 0
    ratios = [float(x) for x in re.findall(r"\| (\d\.\d{3}) \|$", capsys.readouterr().out, re.M)]
    assert len(ratios) == len(l2.CHECKS) and all(0.98 <= r <= 1.07 for r in ratios)
    assert sum(abs(r - 1) <= 0.012 for r in ratios) >= len(ratios) - 1


@pytest.mark.parametrize("argv, msg", [(["--sizes", "4096x4096"], "--sizes"), (["--ctas", "0"], "--ctas"),
                                       (["--kernels", "hopper:nt:9"], "hopper:nt:9"),
                                       (["--capacity-mib", "1,2"], "one number each")])
def test_bad_arguments_end_with_a_usage_error(argv, msg, capsys):
    with pytest.raises(SystemExit) as e:
        l2.main(argv)
    assert e.value.code == 2 and msg in capsys.readouterr().err
