"""bench/gemm_timeline.py without a GPU: the phases it reads from a decoded Config.trace, and its
command-line errors."""
import numpy as np
import pytest

from _samples import SAMPLES_DIR, load_bench, load_sample

h = load_sample("gemm_hopper")
tl = load_bench("gemm_timeline")


def _trace(starts, tiles_per_cta, tile_ns=1000, setup=50, first=300, last_epi=40, written=200, sk_sum=0, issue=120):
    """A decoded trace of CTAs starting at `starts` (ns), each with its count of tiles of tile_ns; sk_sum:
    the consumers' time between their last tile and their end (Config(sk=2)'s sums of parked tiles)."""
    ctas = len(starts)
    t = {name: np.zeros(ctas, np.uint64) for name in h.TRACE_FIELDS}
    t["tiles"] = np.zeros((ctas, h.TRACE_TILES), np.uint64)
    for i, (s, nt) in enumerate(zip(starts, tiles_per_cta)):
        t["start"][i] = s
        t["setup"][i] = s + setup
        t["first_issue"][i] = s + issue
        t["first_stage"][i] = s + setup + first
        stamps = s + setup + first + tile_ns * np.arange(1, nt + 1)
        t["tiles"][i, :nt] = stamps
        end = stamps[-1] if nt else s + setup
        t["walk_done"][i] = end + last_epi
        t["consumers_done"][i] = end + last_epi + sk_sum
        t["c_written"][i] = end + last_epi + sk_sum + written
        t["sm"][i] = 2 * i
    # %clock64 at 2 GHz, from an SM counter that started at 10^6 (SMs' counters do not agree)
    t["clock"] = {name: (10 ** 6 + 2 * t[name]).astype(np.uint64) for name in h.TRACE_FIELDS if name != "sm"}
    t["clock"]["tiles"] = np.where(t["tiles"] > 0, 10 ** 6 + 2 * t["tiles"], 0).astype(np.uint64)
    return t


def test_phases_split_the_span():
    t = _trace([1000, 1000, 1600], [3, 3, 2])
    p = tl.phases(t)
    assert p["start skew"] == (600.0, 600.0)
    assert p["setup"] == (50.0, 50.0) and p["first stage"] == (300.0, 300.0)
    assert p["first issue"] == (120.0, 120.0)
    assert p["first tile"] == (1000.0, 1000.0) and p["later tiles"] == (1000.0, 1000.0)
    assert p["last epilogue"] == (40.0, 40.0) and p["C written"] == (200.0, 200.0)
    assert p["stream-K sum"] == (0.0, 0.0)
    # span: first start (1000) to the last C written (a 3-tile CTA: 1000 + 50 + 300 + 3000 + 40 + 200)
    assert p["span"] == (3590.0, 3590.0)
    ends = [1000 + 3590, 1000 + 3590, 1600 + 50 + 300 + 2000 + 240]
    assert p["end skew"] == (float(max(ends) - min(ends)),) * 2
    assert set(p) == set(tl.PHASES)


def test_the_stream_k_sum_is_its_own_phase_and_may_end_the_cta():
    """Config(sk=2): the consumers sum and store their slices of the parked tiles after their walk; that
    time is the "stream-K sum" phase, and where their stores end after the storers' last TMA store (the
    storers had nothing left to write), the CTA's end is the consumers' end."""
    t = _trace([0, 0], [2, 2], sk_sum=700)
    t["walk_done"][1] += 100                      # CTA 1's last epilogue took 100 ns longer ...
    t["consumers_done"][1] += 100
    t["c_written"][1] = t["walk_done"][1]         # ... and its storers were done before its sum began
    p = tl.phases(t)
    assert p["last epilogue"] == (90.0, 140.0) and p["stream-K sum"] == (700.0, 700.0)
    assert p["C written"] == (100.0, 200.0)       # CTA 0: 200 ns of TMA stores after its sum; CTA 1: none
    end0 = 50 + 300 + 2000 + 40 + 700 + 200
    end1 = 50 + 300 + 2000 + 140 + 700
    assert p["span"] == (float(end0),) * 2 and p["end skew"] == (float(end0 - end1),) * 2


def test_phases_take_the_median_and_max_over_ctas_and_skip_idle_ones():
    t = _trace([0, 0, 0, 0], [2, 2, 2, 0], first=300)
    t["first_stage"][2] += 900                    # one CTA waited 900 ns longer for its first stage
    t["tiles"][2, :2] += 900
    t["walk_done"][2] += 900
    t["consumers_done"][2] += 900
    t["c_written"][2] += 900
    p = tl.phases(t)
    assert p["first stage"] == (300.0, 1200.0)   # over the three CTAs with tiles
    assert p["later tiles"] == (1000.0, 1000.0)
    with pytest.raises(ValueError, match="no CTA recorded a tile"):
        tl.phases(_trace([0, 0], [0, 0]))


def test_phase_cycles_come_from_the_clock_stamps():
    t = _trace([0, 0, 500], [3, 3, 2])
    t["clock"]["tiles"][1, 1] += 100              # CTA 1's second tile took 100 more cycles, its third 100 fewer
    cyc = tl.phase_cycles(t)
    assert set(cyc) == set(tl.CTA_PHASES)
    assert cyc["setup"] == 100.0 and cyc["first stage"] == 600.0 and cyc["first tile"] == 2000.0
    assert cyc["first issue"] == 240.0
    assert cyc["later tiles"] == 2000.0 and cyc["last epilogue"] == 80.0 and cyc["C written"] == 400.0
    assert cyc["stream-K sum"] == 0.0
    later = tl._cta_phases(t["clock"])["later tiles"]
    assert sorted(later.tolist()) == [1900, 2000, 2000, 2000, 2100]


def test_cta_work_and_the_sm_ranking_find_the_slow_sm():
    launches = []
    for extra in (700, 900, 0, 800):              # CTA 1 (SM 2) is slow in three launches of four
        t = _trace([0, 0, 0, 0], [2, 2, 2, 0])
        t["consumers_done"][1] += extra
        t["clock"]["consumers_done"][1] += 2 * extra
        launches.append(tl.cta_work(t))
    sm, ns, cyc = launches[0]
    assert sm.tolist() == [0, 2, 4]              # the idle CTA 3 is left out
    assert ns.tolist() == [2040, 2740, 2040] and cyc.tolist() == [4080, 5480, 4080]
    rows = tl.sm_ranking(launches)
    assert [r[0] for r in rows][0] == 2
    assert rows[0][1] == pytest.approx(750 / 2040)   # the median of its excesses 0, 700, 800 and 900 ns
    assert rows[0][2] == pytest.approx(750 / 2040)   # and the same in cycles (one clock for all CTAs here)
    assert rows[0][3] == pytest.approx(2000.0) and rows[-1][3] == pytest.approx(2000.0)
    assert rows[0][4] == 0.75 and rows[-1][4] == 0.0


def test_the_sm_ranking_tells_a_slower_clock_from_more_cycles():
    """A CTA that took longer in time for the same cycles ran on a slower clock; one that took more
    cycles at the same clock did more (or waited longer)."""
    t = _trace([0] * 5, [2] * 5)
    t["consumers_done"][0] += 204               # CTA 0 (SM 0): 10 % longer in time, the same cycles
    t["consumers_done"][1] += 204               # CTA 1 (SM 2): 10 % longer in time and in cycles
    t["clock"]["consumers_done"][1] += 408
    rows = {r[0]: r for r in tl.sm_ranking([tl.cta_work(t)])}
    assert rows[0][1] == pytest.approx(0.1) and rows[0][2] == 0.0 and rows[0][3] == pytest.approx(4080 / 2244 * 1e3)
    assert rows[2][1] == pytest.approx(0.1) and rows[2][2] == pytest.approx(0.1) and rows[2][3] == pytest.approx(2000.0)
    assert rows[4][1:4] == (0.0, 0.0, pytest.approx(2000.0))


def test_ends_lists_both_ends_of_the_ranking():
    rows = list(range(10))
    assert tl.ends(rows, 3) == [0, 1, 2, None, 7, 8, 9]
    assert tl.ends(rows, 5) == rows and tl.ends(rows, 9) == rows
    assert tl.ends(rows, 0) == [] and tl.ends([], 4) == []


def test_save_writes_the_raw_stamps_only_into_an_existing_directory(tmp_path, capsys, monkeypatch):
    monkeypatch.syspath_prepend(SAMPLES_DIR)
    with pytest.raises(SystemExit) as e:
        tl.main(["--save", str(tmp_path / "no" / "such.npz")])
    assert e.value.code == 2 and "no such directory" in capsys.readouterr().err


@pytest.mark.parametrize("argv, match", [
    (["--size", "4096x4096"], "--size takes MxNxK"), (["--size", "0x8x8"], "positive"),
    (["--launches", "0"], "--launches and --sets must be >= 1"),
    (["--sets", "0"], "--launches and --sets must be >= 1"), (["--config", "nt:1:3:1:16:64:256:tma:192"], "trace = 1"),
    (["--config", "nt:x"], "cluster must be a whole number"), (["--size", "8x12x8"], "multiples of 8")])
def test_bad_arguments_end_with_a_usage_error(argv, match, capsys, monkeypatch):
    monkeypatch.syspath_prepend(SAMPLES_DIR)
    with pytest.raises(SystemExit) as e:
        tl.main(argv)
    assert e.value.code == 2 and match in capsys.readouterr().err
