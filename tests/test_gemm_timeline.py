"""bench/gemm_timeline.py without a GPU: the phases it reads from a decoded Config.trace, and its
command-line errors."""
import numpy as np
import pytest

from _samples import SAMPLES_DIR, load_bench, load_sample

h = load_sample("gemm_hopper")
tl = load_bench("gemm_timeline")


def _trace(starts, tiles_per_cta, tile_ns=1000, setup=50, first=300, last_epi=40, written=200):
    """A decoded trace of CTAs starting at `starts` (ns), each with its count of tiles of tile_ns."""
    ctas = len(starts)
    t = {name: np.zeros(ctas, np.uint64) for name in h.TRACE_FIELDS}
    t["tiles"] = np.zeros((ctas, h.TRACE_TILES), np.uint64)
    for i, (s, nt) in enumerate(zip(starts, tiles_per_cta)):
        t["start"][i] = s
        t["setup"][i] = s + setup
        t["first_stage"][i] = s + setup + first
        stamps = s + setup + first + tile_ns * np.arange(1, nt + 1)
        t["tiles"][i, :nt] = stamps
        end = stamps[-1] if nt else s + setup
        t["consumers_done"][i] = end + last_epi
        t["c_written"][i] = end + last_epi + written
    return t


def test_phases_split_the_span():
    t = _trace([1000, 1000, 1600], [3, 3, 2])
    p = tl.phases(t)
    assert p["start skew"] == (600.0, 600.0)
    assert p["setup"] == (50.0, 50.0) and p["first stage"] == (300.0, 300.0)
    assert p["first tile"] == (1000.0, 1000.0) and p["later tiles"] == (1000.0, 1000.0)
    assert p["last epilogue"] == (40.0, 40.0) and p["C written"] == (200.0, 200.0)
    # span: first start (1000) to the last C written (a 3-tile CTA: 1000 + 50 + 300 + 3000 + 40 + 200)
    assert p["span"] == (3590.0, 3590.0)
    ends = [1000 + 3590, 1000 + 3590, 1600 + 50 + 300 + 2000 + 240]
    assert p["end skew"] == (float(max(ends) - min(ends)),) * 2
    assert set(p) == set(tl.PHASES)


def test_phases_take_the_median_and_max_over_ctas_and_skip_idle_ones():
    t = _trace([0, 0, 0, 0], [2, 2, 2, 0], first=300)
    t["first_stage"][2] += 900                    # one CTA waited 900 ns longer for its first stage
    t["tiles"][2, :2] += 900
    t["consumers_done"][2] += 900
    t["c_written"][2] += 900
    p = tl.phases(t)
    assert p["first stage"] == (300.0, 1200.0)   # over the three CTAs with tiles
    assert p["later tiles"] == (1000.0, 1000.0)
    with pytest.raises(ValueError, match="no CTA recorded a tile"):
        tl.phases(_trace([0, 0], [0, 0]))


@pytest.mark.parametrize("argv, match", [
    (["--size", "4096x4096"], "--size takes MxNxK"), (["--size", "0x8x8"], "positive"),
    (["--launches", "0"], "--launches must be >= 1"), (["--config", "nt:1:3:1:16:64:256:tma:192"], "trace = 1"),
    (["--config", "nt:x"], "cluster must be a whole number"), (["--size", "8x12x8"], "multiples of 8")])
def test_bad_arguments_end_with_a_usage_error(argv, match, capsys, monkeypatch):
    monkeypatch.syspath_prepend(SAMPLES_DIR)
    with pytest.raises(SystemExit) as e:
        tl.main(argv)
    assert e.value.code == 2 and match in capsys.readouterr().err
