"""The whole persistent warp-specialized Hopper GEMM (samples/gemm_hopper.py: TMA ring, full/empty
mbarriers, setmaxnreg, wgmma from descriptors with K-major and transposed B, the stmatrix epilogue)
runs in the CPU executor, one CTA walking every tile, and matches numpy; its GPU runs are in
tests/test_gemm_hopper.py."""
import time

import numpy as np
import pytest

from ptxgen.errors import UnsupportedInstructionError
from ptxgen.executor import Buffer, run_kernel, tensor_map
from ptxgen.harness import from_bf16_bits, to_bf16_bits

from _samples import load_sample

h = load_sample("gemm_hopper")


def _run(cfg, m, n, k, seed=0, m_split=None, record=(), stats=None):
    mod = h.build("sm_90a", [cfg])
    rng = np.random.default_rng(seed)
    a = to_bf16_bits(rng.standard_normal((m, k)).astype(np.float32))
    b = to_bf16_bits(rng.standard_normal((k, n) if cfg.layout == "nn" else (n, k)).astype(np.float32))
    c = np.full((m, n), 0xFFFF, np.uint16)            # bf16 NaN poison
    ba, bb = Buffer(a), Buffer(b)
    ta = tensor_map(ba, box=(cfg.a_box, cfg.bk), swizzle=cfg.k_swizzle, dtype="bf16")
    tb = tensor_map(bb, box=(cfg.bn, cfg.bk) if cfg.layout == "nt" else (cfg.bk, h.PANEL_N),
                    swizzle=cfg.k_swizzle if cfg.layout == "nt" else "128B", dtype="bf16")
    t0 = time.perf_counter()
    bc = Buffer(c)
    out = tensor_map(bc, box=(h.TMA_BOX, h.TMA_BOX), swizzle="128B", dtype="bf16") if cfg.epi in h.TMA_OUT else bc
    st = run_kernel(mod, cfg.name, grid=(1,), block=(cfg.threads,), dynamic_shared=h.smem_bytes(cfg),
                    args=[ta, tb, out, np.uint32(m), np.uint32(n), np.uint32(k)]
                    + ([np.uint32(m_split)] if cfg.bm == 192 else []), record=record)
    if stats is not None:
        stats.append(st)
    secs = time.perf_counter() - t0
    bm = from_bf16_bits(b).astype(np.float64)
    ref = from_bf16_bits(a).astype(np.float64) @ (bm if cfg.layout == "nn" else bm.T)
    return from_bf16_bits(c).astype(np.float64), ref, secs


@pytest.mark.parametrize("cfg, k", [(h.Config("nt", 1, epi="smem"), 456), (h.Config("nn", 1, epi="smem"), 456),
                                    (h.Config("nt", 1, epi="direct"), 456), (h.Config("nt", 1, 8, 1, 8, 32, epi="smem"), 456),
                                    (h.Config("nt", 1), 456), (h.Config("nn", 1), 136),
                                    (h.Config("nt", 1, epi="storer"), 456), (h.Config("nn", 1, epi="storer"), 136),
                                    (h.Config("nt", 1, 3, bm=256, bn=192), 456), (h.Config("nn", 1, 3, bm=256, bn=192), 136),
                                    (h.Config("nt", 1, 3, bm=192), 456), (h.Config("nn", 1, 3, bm=192), 136),
                                    (h.Config("nt", 1, 4, bk=32, bm=192), 456), (h.Config("nn", 1, 4, bk=32, bm=192), 136),
                                    (h.Config("nt", 1, 3, bm=192), 40), (h.Config("nt", 1, 3, bm=192, hold=0), 456),
                                    (h.Config("nt", 1, hold=0), 136), (h.Config("nt", 1, 4, bm=192, epi="ring"), 456),
                                    (h.Config("nn", 1, 4, bm=192, epi="ring"), 136),
                                    (h.Config("nt", 1, 4, bm=192, epi="ring"), 40),
                                    (h.Config("nt", 1, 4, bm=192, epi="ring", hold=0), 456),
                                    (h.Config("nt", 1, 4, bm=192, epi="ring", lead=3), 456),
                                    (h.Config("nn", 1, 4, bm=192, epi="ring", lead=2), 136),
                                    (h.Config("nn", 1, 3, bm=192, mix=1), 136),
                                    (h.Config("nt", 1, 4, bm=192, epi="ring", mix=1), 456),
                                    (h.Config("nt", 1, 3, bm=192, l2="abc"), 456), (h.Config("nn", 1, l2="bc"), 136),
                                    (h.Config("nt", 1, l2="auto"), 456),
                                    (h.Config("nt", 1, 3, bm=192, producer=0), 456),
                                    (h.Config("nn", 1, 3, bm=192, producer=0), 136),
                                    (h.Config("nt", 1, 3, bm=192, producer=0), 40),
                                    (h.Config("nt", 1, 3, bm=192, hold=0, producer=0), 456),
                                    (h.Config("nn", 1, 3, group=16, bm=192, mix=1, producer=0), 136),
                                    (h.Config("nt", 1, 3, bm=192, bn=192, producer=0), 456),
                                    (h.Config("nn", 1, 3, bm=192, bn=192, producer=0), 136),
                                    (h.Config("nt", 1, 3, bm=192, bn=192, producer=0, lwarp=1), 456),
                                    (h.Config("nn", 1, 3, bm=192, bn=192, producer=0, lwarp=1), 136),
                                    (h.Config("nt", 1, kdir=1), 456), (h.Config("nn", 1, kdir=1), 136),
                                    (h.Config("nt", 1, 3, bm=192, kdir=1), 456),
                                    (h.Config("nt", 1, lag=0, pdl=1), 456),
                                    (h.Config("nt", 1, group=1, serp=1), 456),
                                    (h.Config("nt", 1, 3, group=1, bm=192, serp=1), 456),
                                    (h.Config("nn", 1, 3, group=1, bm=192, bn=192, producer=0, lwarp=1, serp=1), 136),
                                    (h.Config("nn", 1, 3, bm=192, bn=192, producer=0, lwarp=1, pdl=1), 136),
                                    (h.Config("nt", 1, bn=128), 456), (h.Config("nn", 1, bn=128), 136),
                                    (h.Config("nt", 1, lag=0, bn=192, epi="direct"), 456),
                                    (h.Config("nn", 1, lag=0, bn=192, epi="direct"), 136),
                                    (h.auto_configs("nt")[10], 456), (h.auto_configs("nn")[10], 136)],
                         ids=lambda c: getattr(c, "name", str(c)))
def test_whole_kernel_matches_numpy(cfg, k):
    # ragged in every dimension, 6 tiles for the one CTA; K = 456: 8 k-blocks, the stage ring wraps
    # twice (and the hand-off epilogues, epi="tma" (the default) and "storer", write a tile's second pass inside
    # the next tile's k-loop); K = 136: 3 k-blocks, so the second pass is written just before the next tile's
    # epilogue (bm=256, bn=192: 2 x 3 tiles, both passes at each tile's end; bm=192: three consumer
    # warpgroups, 2 x 3 tiles, the second column half written between the two N parts of the next
    # tile's first k-block (K = 40: a tile of that k-block alone), with hold=0 both halves at each
    # tile's end, or with bk=32 the whole row in one pass whose barrier parity alternates from tile to
    # tile; hold=0 also for the 128 x 256 tile; epi="ring": the buffers in the stage of a tile's last
    # k-block, which the storers hand back to the producer; mix interleaves bm=192's 192-row and
    # 128-row tiles over the unit order; l2's cache hints change nothing here; producer=0: no producer
    # warpgroup, one consumer thread loads the ring and each warpgroup TMA-stores its own passes, the
    # second held into the next tile's first k-block, which then runs as two m64n128k16 halves; with
    # bn=192, 192 x 192 tiles of m64n192k16 written in one pass; bn=128: 3 x 5 tiles of 128 x 128, one
    # m64n128k16 a k-step and one TMA-stored pass a tile, whose barrier parity alternates from tile to tile;
    # 128 x 192 tiles: 3 x 3 tiles of m64n192k16, the last one 136 columns of its 192, stored from the
    # registers or in one TMA-stored pass of three 64-column boxes a tile)
    got, ref, secs = _run(cfg, 300, 520, k, m_split=192 if cfg.bm == 192 else None)
    assert not np.isnan(got).any(), "elements left unwritten"
    err = np.abs(got - ref)
    tol = 2.0 ** -8 * np.abs(ref) + 1e-3 * np.sqrt(k)   # bf16 rounding of C
    assert (err <= tol).all(), f"{int((err > tol).sum())} elements differ"
    assert secs < 60


@pytest.mark.parametrize("layout", ["nt", "nn"])
@pytest.mark.parametrize("m, n, k", [(1, 8, 8), (3, 24, 40), (130, 72, 200)])
def test_choose_narrow_picks_match_numpy_at_small_n(layout, m, n, k):
    """`choose`'s 128 x 128 tiles where N is far below one tile (N = 8, 24, 72; nn loads B in 64-column
    panels, most of them outside B): the kernel zero-fills and masks the edges like the 256-wide one."""
    cfg = h.choose(m, n, k, layout)
    assert (cfg.bm, cfg.bn, cfg.sk) == (128, 128, 0)
    got, ref, _ = _run(cfg, m, n, k, seed=m + n + k)
    assert not np.isnan(got).any(), "elements left unwritten"
    assert (np.abs(got - ref) <= 2.0 ** -8 * np.abs(ref) + 1e-3 * np.sqrt(k)).all()


@pytest.mark.parametrize("m, last_boxes", [(300, 1), (320, 1), (321, 2), (384, 2)])
def test_a_128_row_tile_leaves_out_a_box_of_a_wholly_past_m(m, last_boxes):
    """A 128-row tile loads A as two 64-row boxes, and its second only where some of its rows are below
    M (a box past M would only be filled with zeros): 256 + 44 and 256 + 64 rows load one box in the last
    block row, 256 + 65 and 384 two; the expect-tx bytes follow, and the product (stale rows of A give
    only rows of C past M) is right. Three 128 x 256 tiles on one CTA, K = 128 (2 k-blocks)."""
    cfg = h.Config("nt", 1, l2="c")
    stats = []
    got, ref, _ = _run(cfg, m, 256, 128, seed=m, record=("cp.async.bulk.tensor",), stats=stats)
    assert not np.isnan(got).any(), "elements left unwritten"
    assert (np.abs(got - ref) <= 2.0 ** -8 * np.abs(ref) + 1e-3 * np.sqrt(128)).all()
    loads = [r for r in stats[0].records                      # not the C stores; the loads issued
             if ".global.shared" not in r.instr.opcode and len(r.threads)]
    rows = []
    for r in loads:
        row = r.instr.operands[1].coords[1]    # [map, {k, row}]
        rows.append(int(r.values[row.name][0]) if row.name in r.values else int(row.value))
    # per k-block: A's boxes (rows of the tile), then B's (row 0 of B: one tile column)
    per_tile = [3, 3, last_boxes + 1]
    assert len(loads) == 2 * sum(per_tile)
    assert rows[-(last_boxes + 1):] == [256, 320][:last_boxes] + [0]


@pytest.mark.parametrize("kdir", [0, 1])
def test_kdir_walks_k_up_and_down_tile_by_tile(kdir):
    """Config.kdir: the K coordinates of the producer's TMA loads, in issue order, go up through the
    k-blocks in the CTA's first tile, down in its second, and so on (K = 456: 8 k-blocks, the last one
    ragged); without it every tile goes up. The product stays right either way. (l2="c": A's loads are
    issued once, not as the two predicated copies of l2="auto", which the record would list both of.)"""
    cfg = h.Config("nt", 1, l2="c", kdir=kdir)
    stats = []
    got, ref, _ = _run(cfg, 384, 520, 456, record=("cp.async.bulk.tensor",), stats=stats)
    assert np.allclose(got, ref, rtol=2.0 ** -7, atol=0.05)
    loads = [r for r in stats[0].records if ".global.shared" not in r.instr.opcode]    # not the C stores
    kx = []
    for r in loads:
        first = r.instr.operands[1].coords[0]  # [map, {k, row}]: K is the innermost coordinate of both maps
        kx.append(int(r.values[first.name][0]) if first.name in r.values else int(first.value))
    per_block = kx[::3]                         # each k-block: A's two 64-row boxes, then B, at the same K
    assert kx[1::3] == kx[2::3] == per_block
    ups, nk = list(range(0, 456, 64)), 8
    tiles = [per_block[i:i + nk] for i in range(0, len(per_block), nk)]
    assert len(tiles) == 9 and all(len(t) == nk for t in tiles)    # 3 x 3 tiles of 128 x 256 over 384 x 520
    for i, t in enumerate(tiles):
        assert t == (ups[::-1] if kdir and i % 2 else ups), (i, t)


def _load_coords(record):
    """(K, row) of each TMA load in a run's record, in issue order (not the C stores)."""
    out = []
    for r in record:
        if ".global.shared" in r.instr.opcode:
            continue
        xy = []
        for c in r.instr.operands[1].coords[:2]:   # [map, {k, row}]: K is the innermost coordinate of both maps
            xy.append(int(r.values[c.name][0]) if c.name in r.values else int(c.value))
        out.append(tuple(xy))
    return out


@pytest.mark.parametrize("serp", [0, 1])
def test_serp_walks_every_other_group_of_rows_backwards(serp):
    """Config.serp: the producer loads the tiles in `tile_order`'s order; with groups of one block row over
    3 x 3 tiles of 128 x 256 (384 x 520), the middle row's columns come last to first (serp=1) or first to last."""
    cfg = h.Config("nt", 1, l2="c", group=1, serp=serp)
    stats = []
    got, ref, _ = _run(cfg, 384, 520, 136, record=("cp.async.bulk.tensor",), stats=stats)
    assert np.allclose(got, ref, rtol=2.0 ** -7, atol=0.05)
    loads = _load_coords(stats[0].records)
    nk = 3
    assert len(loads) == 9 * nk * 3          # per k-block: A's two 64-row boxes, then one B load
    walked = [(loads[3 * nk * t][1], loads[3 * nk * t + 2][1]) for t in range(9)]   # (A row, B row) per tile
    expect = [(row, col) for row, _, col in h.tile_order(cfg, 384, 520)]
    assert walked == expect
    middle = [col for row, col in walked if row == 128]
    assert middle == ([512, 256, 0] if serp else [0, 256, 512])


def test_tile_order_copies_the_kernels_raster():
    """tile_order: every tile once; groups of block rows walked column by column; serp reverses the
    columns of the odd groups; bm=192 puts the 192-row tiles first, then the 128-row ones."""
    c = h.Config("nt", 1, group=2)
    plain = h.tile_order(c, 500, 600)                     # 4 block rows x 3 block columns
    assert plain[:4] == [(0, 128, 0), (128, 128, 0), (0, 128, 256), (128, 128, 256)]
    back = h.tile_order(h.Config("nt", 1, group=2, serp=1), 500, 600)
    assert sorted(back) == sorted(plain) and len(set(back)) == 12
    assert back[:6] == plain[:6] and back[6:8] == [(256, 128, 512), (384, 128, 512)]
    mixed = h.tile_order(h.Config("nt", 1, 3, bm=192, group=16, serp=1), 700, 520, m_split=384)
    assert [t[1] for t in mixed] == [192] * 6 + [128] * 9
    assert {(r, c) for r, _, c in mixed} == {(r, c) for r in (0, 192, 384, 512, 640) for c in (0, 256, 512)}
    with pytest.raises(ValueError, match="cluster 1"):
        h.tile_order(h.Config("nt", 2), 500, 600)
    with pytest.raises(ValueError, match="m_split"):
        h.tile_order(h.Config("nt", 1, 3, bm=192), 500, 600)


@pytest.mark.parametrize("layout", ["nt", "nn"])
@pytest.mark.parametrize("m, m_split", [(300, 0), (300, 384), (420, 192), (64, 0)])
@pytest.mark.parametrize("epi", ["tma", "ring", "mix", "p0", "p0n192", "p0n192lw"])
def test_bm192_tile_splits(layout, m, m_split, epi):
    # bm=192 with rows below m_split in 192-row tiles and the rest in 128-row tiles (in which consumer 2
    # and its storer sit out): all 128 (3 block rows, the last ragged), all 192 (2 block rows, the last
    # ragged), 192 + two 128-row tiles (the last ragged), and a lone ragged 128-row tile
    cfg = h.Config(layout, 1, 3, bm=192, mix=int(epi == "mix"), producer=int(not epi.startswith("p0")),
                   bn=192 if epi.startswith("p0n192") else 256, lwarp=int(epi.endswith("lw"))) \
        if epi != "ring" else h.Config(layout, 1, 4, bm=192, epi="ring")
    got, ref, _ = _run(cfg, m, 264, 200, seed=m + m_split, m_split=m_split)
    assert not np.isnan(got).any(), "elements left unwritten"
    err = np.abs(got - ref)
    assert (err <= 2.0 ** -8 * np.abs(ref) + 1e-3 * np.sqrt(200)).all(), f"{int((err > 0.1).sum())} elements differ"


def test_split_for_balances_rows():
    # 4096^2 on 132 SMs: 128 CTAs of two 192-row tiles and one 128-row tile, 512 rows each (as many as
    # four 128 x 256 tiles), 3/4 of the rows in 192-row tiles
    assert h.split_for(4096, 4096, 132) == (3072, 128)
    # 6144 = 32 x 192: all 192-row tiles, 6 a CTA on 128 CTAs
    assert h.split_for(6144, 6144, 132) == (6144, 128)
    for m, n in [(4096, 4096), (8192, 8192), (8192, 2048), (1000, 1000), (300, 520)]:
        split, grid = h.split_for(m, n, 132)
        tn = -(-n // 256)
        u1 = split // 192 * tn
        units = u1 + -(-max(0, m - split) // 128) * tn
        assert split % 192 == 0 and 1 <= grid <= min(132, units)
        assert 192 * (split // 192) + 128 * -(-max(0, m - split) // 128) >= m       # every row covered
        # never a busier CTA than the 128 x 256 tiling on its own balanced grid
        tiles = -(-m // 128) * tn
        assert h._makespan(u1, units, grid) <= 128 * -(-tiles // 132)


def test_makespan_matches_a_walk_over_every_cta():
    rng = np.random.default_rng(5)
    for _ in range(2000):
        units = int(rng.integers(1, 400))
        u1, grid = int(rng.integers(0, units + 1)), int(rng.integers(1, 140))
        walk = max(192 * len(range(c, u1, grid)) + 128 * len(range(max(c, u1 + (c - u1) % grid), units, grid))
                   for c in range(min(grid, units)))
        assert h._makespan(u1, units, grid) == walk, (u1, units, grid)


@pytest.mark.parametrize("ctas", [8, 33, 132])
def test_split_for_matches_an_exhaustive_search(ctas):
    # split_for tries only splits with at most 2 * ctas block rows of 128; against every split, the
    # busiest CTA's rows are the same
    for m in range(64, 9000, 611):
        for n in (256, 2048, 4096):
            tn = -(-n // 256)
            best = min(h._grid_for_split(m, 192 * a, tn, ctas)[0] for a in range(-(-m // 192) + 1))
            split, grid = h.split_for(m, n, ctas)
            u1, units = h._split_units(m, split, tn)
            assert h._makespan(u1, units, grid) == best, (m, n, ctas)


def test_split_for_refuses_no_ctas():
    with pytest.raises(ValueError, match="at least one CTA"):
        h.split_for(4096, 4096, 0)


def test_cluster_variant_is_reported_unsupported():
    with pytest.raises(UnsupportedInstructionError, match="barrier.cluster|mapa|cluster"):
        _run(h.Config("nt", 2), 128, 256, 64)


def test_mixed_unit_order_is_a_bijection_that_spreads_the_128_row_tiles():
    # the kernel's unit -> (kind, index) map with mix=1, replayed in Python: every tile of each kind once,
    # and in any run of units the 128-row tiles come at most one more than their share
    for u1, units in [(256, 384), (0, 7), (7, 7), (3, 9), (1066, 1088), (5, 1000)]:
        big = h.unit_kinds(u1, units, 1)
        assert int(big.sum()) == u1
        u2 = units - u1
        small_before = np.concatenate([[0], np.cumsum(~big)])
        for w in (x for x in (1, 3, 128) if x <= units):
            runs = small_before[w:] - small_before[:-w]
            assert runs.max() <= -(-w * u2 // units) and runs.min() >= w * u2 // units
    # 4096^2 on 128 CTAs: every CTA gets two 192-row tiles and one 128-row tile either way, and with
    # mix a third of each round's CTAs are in 128-row tiles instead of all of the last round's
    big = h.unit_kinds(256, 384, 1)
    per_cta = big.reshape(3, 128).sum(axis=0)
    assert (per_cta == 2).all() and h._makespan(256, 384, 128, 1) == 512
    assert [int((~big[r * 128:(r + 1) * 128]).sum()) for r in range(3)] == [42, 43, 43]
    assert [int((~h.unit_kinds(256, 384)[r * 128:(r + 1) * 128]).sum()) for r in range(3)] == [0, 0, 128]


def test_mixed_makespan_matches_a_walk():
    rng = np.random.default_rng(11)
    for _ in range(300):
        units = int(rng.integers(1, 300))
        u1, grid = int(rng.integers(0, units + 1)), int(rng.integers(1, 140))
        big = h.unit_kinds(u1, units, 1)
        walk = max(sum(192 if big[u] else 128 for u in range(c, units, grid)) for c in range(min(grid, units)))
        assert h._makespan(u1, units, grid, 1) == walk



@pytest.mark.parametrize("cfg, m, n, k, ctas", [
    # 3 x 3 tiles on 4 CTAs: one whole round, then 5 tiles' 8 k-blocks shared, 10 a CTA, so some tiles are
    # split between two CTAs (head stored and released, tail waits, adds and writes C)
    (h.Config("nt", 1, 3, bm=192, bn=192, hold=0, producer=0, sk=1), 420, 520, 456, 4),
    (h.Config("nn", 1, 3, bm=192, bn=192, hold=0, producer=0, sk=1), 420, 520, 136, 4),
    (h.Config("nt", 1, 3, bm=192, bn=192, hold=0, producer=0, sk=1), 300, 520, 456, 5),
    (h.Config("nn", 1, 3, group=16, bm=192, bn=192, hold=0, producer=0, sk=1), 200, 264, 200, 3),
    # fewer tiles than CTAs: one tile's 64 k-blocks streamed over 4 CTAs (sk_grid), so its owner adds
    # three partials; and 4 tiles of 32 k-blocks over 8 CTAs, every tile in two parts
    (h.Config("nt", 1, 3, bm=192, bn=192, hold=0, producer=0, sk=1), 150, 184, 4096, 4),
    (h.Config("nn", 1, 3, bm=192, bn=192, hold=0, producer=0, sk=1), 250, 200, 2048, 8),
    (h.Config("nt", 1, 3, bm=192, bn=192, hold=0, producer=0, sk=1, lwarp=1), 250, 200, 2048, 8),
    # 9 tiles on 3 CTAs: whole rounds only, no split tile
    (h.Config("nt", 1, 3, bm=192, bn=192, hold=0, producer=0, sk=1), 420, 520, 200, 3),
    # the producer warpgroup's 128 x 256 kernel: one tile streamed over 4 CTAs (the owner adds three
    # partials), 4 tiles in two parts each (nn, lag 1), and 3 x 3 tiles on 4 CTAs (a whole round, then
    # 5 tiles shared: the storer threads skip the heads, whose partials the owners add)
    (h.Config("nt", 1, lag=0, hold=0, sk=1), 100, 200, 4096, 4),
    (h.Config("nn", 1, lag=1, hold=0, sk=1), 250, 400, 2048, 8),
    (h.Config("nt", 1, lag=0, hold=0, sk=1), 300, 520, 456, 4),
    # sk=2, the same three shapes: every part parks its partial, then sums its slice of the tile (one tile
    # in 4 parts, 8 slices of the 32 groups each; 4 tiles in 2 parts; 5 tiles shared after a whole round)
    (h.Config("nt", 1, lag=0, hold=0, sk=2), 100, 200, 4096, 4),
    (h.Config("nn", 1, lag=1, hold=0, sk=2), 250, 400, 2048, 8),
    (h.Config("nt", 1, lag=0, hold=0, sk=2), 300, 520, 456, 4),
    # 2 x 2 tiles of 20 k-blocks over 12 CTAs: three parts a tile, ranges of 6 and 7 k-blocks
    (h.Config("nt", 1, lag=0, hold=0, sk=2), 130, 264, 1280, 12),
    # one tile in 5 and in 10 parts: slices of at most 7 groups read one part at a time, and of at most 4
    # read 4 parts at a time, the last batch running past the last part
    (h.Config("nt", 1, lag=0, hold=0, sk=2), 100, 200, 4096, 6),
    (h.Config("nt", 1, lag=0, hold=0, sk=2), 100, 200, 16384, 10),
    # 128 x 128 tiles (bn=128: one epilogue pass a tile, 16 accumulator groups a thread): one tile in 4
    # parts, 2 x 2 tiles in 2 parts (nn), 3 x 3 tiles after a whole round, one tile in 10 parts
    (h.Config("nt", 1, lag=0, hold=0, sk=1, bn=128), 100, 120, 4096, 4),
    (h.Config("nn", 1, lag=1, hold=0, sk=1, bn=128), 250, 200, 2048, 8),
    # a few rows (decode-like): the warps and the warpgroup whose rows lie past M store and add no partial
    (h.Config("nt", 1, lag=0, hold=0, sk=1, bn=128), 8, 120, 4096, 4),
    (h.Config("nn", 1, lag=1, hold=0, sk=1, bn=128), 40, 136, 2048, 6),
    (h.Config("nt", 1, lag=0, hold=0, sk=2, bn=128), 100, 120, 4096, 4),
    (h.Config("nt", 1, lag=0, hold=0, sk=2, bn=128), 300, 264, 456, 4),
    # a few rows: the warps whose rows lie past M park, read and sum nothing
    (h.Config("nt", 1, lag=0, hold=0, sk=2, bn=128), 24, 120, 4096, 4),
    (h.Config("nt", 1, lag=0, hold=0, sk=2, bn=128), 100, 128, 16384, 10),
    # one tile in 17 parts (sk_grid's pick on 21 CTAs): more parts than the 16 groups, so one part sums
    # nothing, the others one group each, reading the parts 24 at a time (one batch, past the last part);
    # each part finds the tile's first and last parts with `_SkWalk.owner`
    (h.Config("nt", 1, lag=0, hold=0, sk=2, bn=128), 100, 120, 10752, 21),
    # one tile in 32 and in 35 parts (sk_grid's picks over K = 32768 and 49152): twice the groups or more,
    # so 16 parts each sum one group over all the parts, in two batches of 24, and the others sum nothing
    (h.Config("nt", 1, lag=0, hold=0, sk=2, bn=128), 100, 120, 32768, 64),
    (h.Config("nt", 1, lag=0, hold=0, sk=2, bn=128), 100, 120, 49152, 48)],
    ids=lambda v: getattr(v, "name", str(v)))
def test_stream_k_matches_numpy(cfg, m, n, k, ctas):
    """Stream-K in the executor: every element written once, the split tiles summed, and the flags left
    at zero for the next launch. sk=1: CTAs one after another (the head of a split tile always runs
    before its tail, which is how the kernel orders them on the GPU too); sk=2, whose parts each wait for
    all the others: all CTAs resident, taking turns."""
    got, ref, ws, flag_bytes = _run_stream_k(cfg, m, n, k, ctas)
    assert not np.isnan(got).any(), "elements left unwritten"
    err = np.abs(got - ref)
    assert (err <= 2.0 ** -8 * np.abs(ref) + 1e-3 * np.sqrt(k)).all(), f"{int((err > 0.1).sum())} elements differ"
    assert not ws[:flag_bytes].any(), "flags left set"


def test_stream_k_moves_no_partial_of_rows_past_m():
    """sk=1 over a few rows (8 of a 128-row tile): only warp 0 of consumer 0 holds rows below M, so the
    heads store, and the owners read, only its part of a partial; the workspace's other bytes keep
    their poison. The product is right all the same."""
    cfg, m, n, k, ctas = h.Config("nt", 1, lag=0, hold=0, sk=1, bn=128), 8, 120, 4096, 4
    got, ref, ws, flag_bytes = _run_stream_k(cfg, m, n, k, ctas)
    err = np.abs(got - ref)
    assert (err <= 2.0 ** -8 * np.abs(ref) + 1e-3 * np.sqrt(k)).all()
    grid = h.sk_plan(m, n, k, ctas, cfg.bn, cfg.bm, cfg.sk)[0]
    slot = h.WG_M * cfg.bn * 4
    parts = ws[flag_bytes:flag_bytes + grid * cfg.consumers * slot].reshape(grid, cfg.consumers, slot // 16, 16)
    thread = np.arange(slot // 16) % 128                       # the thread of each 16-byte group
    assert (parts[:, 1] == 0x7F).all(), "consumer 1 (rows 64-127, all past M) stored a partial"
    assert (parts[:, 0][:, thread >= 32] == 0x7F).all(), "warps 1-3 of consumer 0 (rows 16-63) stored a partial"
    stored = (parts[:, 0][:, thread < 32] != 0x7F).any(axis=(1, 2))
    assert stored.sum() >= grid - 1, f"only {int(stored.sum())} of {grid} CTAs stored warp 0's partial"


@pytest.mark.parametrize("m, n, k, ctas, boxes, want", [
    # one tile of 64 k-blocks in two parts over 100 rows (two boxes of A a k-block): the owner takes SK_SKEW
    # k-blocks from its head; 2 x 2 tiles of 32 k-blocks in two parts, each owner as many more
    (100, 120, 4096, 2, 3, [30, 34]), (250, 200, 2048, 8, 3, [14, 18] * 4),
    # an even split: 24 rows (at most SK_SKEW_MIN_ROWS), one tile in 4 parts, and 10 tiles of 8 k-blocks on 4
    # CTAs (a whole round, then ranges across tiles)
    (24, 120, 4096, 2, 2, [32, 32]), (100, 120, 4096, 4, 3, [16] * 4), (8, 1160, 456, 4, 2, [20] * 4)],
    ids=["1-tile-2-parts", "4-tiles-2-parts", "24-rows", "4-parts", "rounds-then-ranges"])
def test_stream_k_owner_starts_earlier_than_an_even_split(m, n, k, ctas, boxes, want):
    """sk=1 in 128 x 128 tiles streamed in two parts over more than SK_SKEW_MIN_ROWS rows: the owner's part
    starts SK_SKEW k-blocks early, so its head's partial is stored when the owner's k-loop ends (bench/LOG.md
    round 32); elsewhere the split stays even. The k-blocks each CTA loads (its TMA loads over the boxes a
    k-block takes) show the split, and the product is right."""
    cfg = h.Config("nt", 1, lag=0, hold=0, sk=1, bn=128)
    stats = []
    got, ref, ws, flag_bytes = _run_stream_k(cfg, m, n, k, ctas, stats=stats, record=("cp.async.bulk.tensor",))
    assert (np.abs(got - ref) <= 2.0 ** -8 * np.abs(ref) + 1e-3 * np.sqrt(k)).all()
    loads = [r for r in stats[0].records if ".global.shared" not in r.instr.opcode and len(r.threads)]
    counts = np.bincount([r.ctaid[0] for r in loads], minlength=len(want))
    assert list(counts) == [w * boxes for w in want]


def _run_stream_k(cfg, m, n, k, ctas, stats=None, record=()):
    """Run a stream-K kernel in the executor on random inputs: (C as float64, the float64 product, the
    workspace's bytes after the launch, the bytes of its flags); `record` as run_kernel's, its RunStats
    appended to `stats`."""
    grid, split, sk_first, tiles = h.sk_plan(m, n, k, ctas, cfg.bn, cfg.bm, cfg.sk)
    mod = h.build("sm_90a", [cfg])
    rng = np.random.default_rng(m + n + k)
    a = to_bf16_bits(rng.standard_normal((m, k)).astype(np.float32))
    b = to_bf16_bits(rng.standard_normal((k, n) if cfg.layout == "nn" else (n, k)).astype(np.float32))
    c = np.full((m, n), 0xFFFF, np.uint16)
    ws = np.full(h.workspace_bytes(cfg, m, n, k, ctas), 0x7F, np.uint8)
    flag_bytes = h.sk_flag_bytes(cfg, grid, tiles)
    ws[:flag_bytes] = 0
    ba, bb, bc, bw = Buffer(a), Buffer(b), Buffer(c), Buffer(ws)
    ta = tensor_map(ba, box=(cfg.a_box, cfg.bk), swizzle=cfg.k_swizzle, dtype="bf16")
    tb = tensor_map(bb, box=(cfg.bn, cfg.bk) if cfg.layout == "nt" else (cfg.bk, h.PANEL_N),
                    swizzle=cfg.k_swizzle if cfg.layout == "nt" else "128B", dtype="bf16")
    out = tensor_map(bc, box=(h.TMA_BOX, h.TMA_BOX), swizzle="128B", dtype="bf16")
    run = run_kernel(mod, cfg.name, grid=(grid,), block=(cfg.threads,), dynamic_shared=h.smem_bytes(cfg),
                     args=[ta, tb, out, np.uint32(m), np.uint32(n), np.uint32(k)]
                     + ([] if cfg.producer else [np.uint32(split)]) + [bw, np.uint32(sk_first)]
                     + ([bc] if cfg.sk == 2 else []), concurrent=cfg.sk == 2, max_steps=10_000_000, record=record)
    if stats is not None:
        stats.append(run)
    got = from_bf16_bits(c).astype(np.float64)
    bm = from_bf16_bits(b).astype(np.float64)
    ref = from_bf16_bits(a).astype(np.float64) @ (bm if cfg.layout == "nn" else bm.T)
    return got, ref, bw.array, flag_bytes


@pytest.mark.parametrize("layout, m, n, k, ctas, want, bn", [
    ("nt", 100, 200, 4096, 4, 4, 256), ("nn", 250, 400, 2048, 8, 2, 256), ("nt", 130, 264, 1280, 12, 2, 256),
    ("nt", 100, 200, 4096, 8, 8, 256), ("nt", 130, 264, 64, 12, 1, 256), ("nt", 100, 512, 16384, 32, 16, 256),
    ("nt", 100, 120, 4096, 8, 8, 128), ("nn", 200, 128, 2048, 8, 4, 128), ("nt", 100, 256, 16384, 32, 16, 128),
    ("nt", 24, 120, 4096, 8, 8, 128)],
    ids=["1-tile-4-parts", "nn-4-tiles-2-parts", "4-tiles-on-12", "1-tile-8-parts", "whole-tiles", "2-tiles-16-parts",
         "n128-1-tile-8-parts", "n128-nn-2-tiles-4-parts", "n128-2-tiles-16-parts", "n128-24-rows-8-parts"])
def test_stream_k3_cluster_sum_matches_numpy(layout, m, n, k, ctas, want, bn):
    """sk=3 in the executor, launched as the host launches it (one cluster of P CTAs a tile, sk_plan's
    grid): every part parks its partial in its shared memory, meets its cluster, and sums its slice from
    the others' through mapa and ld.shared::cluster; every element is written once and matches numpy.
    The last case has one k-block a tile, so every tile is whole (clusters of one)."""
    cfg = h.Config(layout, 1, lag=0, hold=0, sk=3, bn=bn)
    grid, _, sk_first, tiles = h.sk_plan(m, n, k, ctas, cfg.bn, cfg.bm, cfg.sk)
    parts = grid // tiles if tiles else 1
    assert parts == want
    mod = h.build("sm_90a", [cfg])
    rng = np.random.default_rng(m + n + k)
    a = to_bf16_bits(rng.standard_normal((m, k)).astype(np.float32))
    b = to_bf16_bits(rng.standard_normal((k, n) if layout == "nn" else (n, k)).astype(np.float32))
    c = np.full((m, n), 0xFFFF, np.uint16)
    ba, bb, bc = Buffer(a), Buffer(b), Buffer(c)
    ta = tensor_map(ba, box=(cfg.a_box, cfg.bk), swizzle=cfg.k_swizzle, dtype="bf16")
    tb = tensor_map(bb, box=(cfg.bn, cfg.bk) if layout == "nt" else (cfg.bk, h.PANEL_N),
                    swizzle=cfg.k_swizzle if layout == "nt" else "128B", dtype="bf16")
    out = tensor_map(bc, box=(h.TMA_BOX, h.TMA_BOX), swizzle="128B", dtype="bf16")
    run_kernel(mod, cfg.name, grid=(grid,), block=(cfg.threads,), dynamic_shared=h.smem_bytes(cfg),
               args=[ta, tb, out, np.uint32(m), np.uint32(n), np.uint32(k), np.uint32(sk_first), bc],
               cluster=(parts,), max_steps=10_000_000)
    got = from_bf16_bits(c).astype(np.float64)
    bm = from_bf16_bits(b).astype(np.float64)
    ref = from_bf16_bits(a).astype(np.float64) @ (bm if layout == "nn" else bm.T)
    assert not np.isnan(got).any(), "elements left unwritten"
    err = np.abs(got - ref)
    assert (err <= 2.0 ** -8 * np.abs(ref) + 1e-3 * np.sqrt(k)).all(), f"{int((err > 0.1).sum())} elements differ"


def test_trace_stamps_each_phase_of_each_cta_in_order():
    """Config.trace on the executor (2 CTAs, 6 tiles of 128 x 256): the product is right, and each CTA's
    stamps come in the order the kernel passes those points (the executor's %globaltimer is its step
    count): start, setup, first stage, one hand-off per tile of its own, the consumers' end, and C
    written after the last hand-off; slots of tiles it did not have stay 0."""
    cfg = h.Config("nt", 1, lag=0, trace=1)
    m, n, k = 200, 520, 136                        # 2 x 3 tiles, 3 k-blocks each (the last one partial)
    mod = h.build("sm_90a", [cfg])
    rng = np.random.default_rng(5)
    a = to_bf16_bits(rng.standard_normal((m, k)).astype(np.float32))
    b = to_bf16_bits(rng.standard_normal((n, k)).astype(np.float32))
    c = np.full((m, n), 0xFFFF, np.uint16)
    ba, bb, bc = Buffer(a), Buffer(b), Buffer(c)
    tr = Buffer(np.zeros(h.trace_bytes(2) // 8, np.uint64))
    ta = tensor_map(ba, box=(cfg.a_box, cfg.bk), swizzle=cfg.k_swizzle, dtype="bf16")
    tb = tensor_map(bb, box=(cfg.bn, cfg.bk), swizzle=cfg.k_swizzle, dtype="bf16")
    out = tensor_map(bc, box=(h.TMA_BOX, h.TMA_BOX), swizzle="128B", dtype="bf16")
    run_kernel(mod, cfg.name, grid=(2,), block=(cfg.threads,), dynamic_shared=h.smem_bytes(cfg),
               args=[ta, tb, out, np.uint32(m), np.uint32(n), np.uint32(k), tr])
    got = from_bf16_bits(c).astype(np.float64)
    ref = from_bf16_bits(a).astype(np.float64) @ from_bf16_bits(b).astype(np.float64).T
    assert not np.isnan(got).any()
    assert (np.abs(got - ref) <= 2.0 ** -8 * np.abs(ref) + 1e-3 * np.sqrt(k)).all()
    t = h.read_trace(tr.array, 2)
    for cta in range(2):
        for stamps in (t, t["clock"]):          # %globaltimer and %clock64 (both the step count here)
            tiles = stamps["tiles"][cta]
            assert (tiles[3:] == 0).all() and (tiles[:3] > 0).all()      # tiles cta, cta + 2, cta + 4
            order = [stamps["start"][cta], stamps["setup"][cta], stamps["first_stage"][cta], *tiles[:3],
                     stamps["walk_done"][cta], stamps["consumers_done"][cta]]
            assert all(x < y for x, y in zip(order, order[1:])), order
            assert stamps["c_written"][cta] > tiles[2]
            # the loading thread's first stage issued after the start, before the first tile's hand-off
            assert stamps["start"][cta] < stamps["first_issue"][cta] < tiles[0]
    assert t["start"][1] > t["consumers_done"][0]                       # the executor runs CTA 0, then CTA 1
    assert t["sm"].tolist() == [0, 0]


@pytest.mark.parametrize("sk", [1, 2])
def test_trace_of_stream_k_stamps_each_item_and_the_sum_after_the_walk(sk):
    """Config.trace with stream-K (one 128 x 256 tile over 4 CTAs, all resident, taking turns): the product
    is right, and each CTA stamps its one work item when its k-blocks are done, then "walk_done" and
    "consumers_done" in that order; with sk=2 every CTA's slice sum of the parked tile lies between the
    two, which takes the executor more steps than sk=1's nothing there."""
    cfg = h.Config("nt", 1, lag=0, hold=0, sk=sk, trace=1).check()
    m, n, k, ctas = 100, 200, 4096, 4
    grid, _, sk_first, tiles = h.sk_plan(m, n, k, ctas, cfg.bn, cfg.bm, cfg.sk)
    assert (grid, sk_first, tiles) == (4, 0, 1)
    mod = h.build("sm_90a", [cfg])
    rng = np.random.default_rng(7 + sk)
    a = to_bf16_bits(rng.standard_normal((m, k)).astype(np.float32))
    b = to_bf16_bits(rng.standard_normal((n, k)).astype(np.float32))
    c = np.full((m, n), 0xFFFF, np.uint16)
    ws = np.zeros(h.workspace_bytes(cfg, m, n, k, ctas), np.uint8)
    ba, bb, bc, bw = Buffer(a), Buffer(b), Buffer(c), Buffer(ws)
    tr = Buffer(np.zeros(h.trace_bytes(grid) // 8, np.uint64))
    ta = tensor_map(ba, box=(cfg.a_box, cfg.bk), swizzle=cfg.k_swizzle, dtype="bf16")
    tb = tensor_map(bb, box=(cfg.bn, cfg.bk), swizzle=cfg.k_swizzle, dtype="bf16")
    out = tensor_map(bc, box=(h.TMA_BOX, h.TMA_BOX), swizzle="128B", dtype="bf16")
    run_kernel(mod, cfg.name, grid=(grid,), block=(cfg.threads,), dynamic_shared=h.smem_bytes(cfg),
               args=[ta, tb, out, np.uint32(m), np.uint32(n), np.uint32(k), bw, np.uint32(sk_first)]
               + ([bc] if sk == 2 else []) + [tr], concurrent=True, max_steps=10_000_000)
    got = from_bf16_bits(c).astype(np.float64)
    ref = from_bf16_bits(a).astype(np.float64) @ from_bf16_bits(b).astype(np.float64).T
    assert not np.isnan(got).any()
    assert (np.abs(got - ref) <= 2.0 ** -8 * np.abs(ref) + 1e-3 * np.sqrt(k)).all()
    t = h.read_trace(tr.array, grid)
    sums = []
    for cta in range(grid):
        for stamps in (t, t["clock"]):
            items = stamps["tiles"][cta]
            assert items[0] > 0 and (items[1:] == 0).all()
            order = [stamps["start"][cta], stamps["setup"][cta], stamps["first_stage"][cta], items[0],
                     stamps["walk_done"][cta], stamps["consumers_done"][cta]]
            assert all(x < y for x, y in zip(order, order[1:])), order
            assert stamps["start"][cta] < stamps["first_issue"][cta] < items[0]
        sums.append(int(t["consumers_done"][cta]) - int(t["walk_done"][cta]))
    # sk=2: every CTA sums a slice (loads, adds and stores); sk=1: the two stamps are back to back
    assert (min(sums) > 100) == (sk == 2), sums


def test_stream_k_division_takes_32_bits_only_where_the_numerator_fits():
    """_SkWalk's u64 quotients (range ends, owners) divide in 32 bits where the numerator is below 2^32
    and in 64 where it is not: the executor runs the walk's division on both sides of 2^32 against Python's."""
    import ptxgen as pg
    m = pg.Module("sm_90a")
    k = m.entry("skdiv")
    pn, pd, po = k.param("num", pg.u64), k.param("den", pg.u64), k.param_ptr("out", pg.u64, align=8)
    walk = h._SkWalk.__new__(h._SkWalk)
    walk.k = k
    q = walk._div(k.ld_param(pn), k.ld_param(pd))
    k.st(k.cvta(k.ld_param(po), "global", to=True), q)
    k.ret()
    cases = [(0, 7), (2**32 - 1, 132), (2**32, 132), (2**32 + 5, 3), (123456789 * 130, 131), (2**40 + 17, 2**32 - 1),
             (99, 100), (2**32 - 1, 2**32 - 1)]
    for num, den in cases:
        out = np.zeros(1, np.uint64)
        run_kernel(m, "skdiv", args=[np.uint64(num), np.uint64(den), Buffer(out)], block=(1,))
        assert int(out[0]) == num // den, (num, den, int(out[0]))


def test_udiv_matches_integer_division_on_both_paths():
    """_udiv (the tile order's and the stream-K walk's n / d) takes a float reciprocal and one correction
    each way below UDIV_FAST_LIMIT, div.u32 elsewhere: the executor runs it on a thread per (n, d), with
    quotients that land just either side of an integer, and both sides of the limit, against Python's."""
    import ptxgen as pg
    m = pg.Module("sm_90a")
    k = m.entry("udiv")
    pn, pd, po = k.param_ptr("num", pg.u32, align=4), k.param_ptr("den", pg.u32, align=4), \
        k.param_ptr("out", pg.u32, align=4)
    off = k.cvt(k.shl(k.tid.x, 2), pg.u64, pg.u32)
    at = [k.add(k.cvta(k.ld_param(p), "global", to=True), off) for p in (pn, pd, po)]
    k.st(at[2], h._udiv(k, k.ld(at[0], pg.u32), k.ld(at[1], pg.u32)))
    k.ret()
    lim = h.UDIV_FAST_LIMIT
    rng = np.random.default_rng(5)
    d = rng.integers(1, lim, 64)
    q = rng.integers(0, lim, 64) // d
    cases = [(0, 1), (1, 1), (lim - 1, 1), (lim - 1, lim - 1), (lim - 1, lim - 2), (lim - 2, lim - 1), (lim - 1, 3),
             (lim, 1), (lim, 3), (3, lim), (2**32 - 1, 7), (2**32 - 1, 2**31 + 1), (5, 2**31 + 1), (2**31, 2**31),
             (1 << 21, (1 << 21) + 1), ((1 << 21) + 1, 1 << 21), (4095, 64), (4096, 64), (131 * 64 - 1, 131)]
    cases += [(int(a), int(b)) for a, b in zip(rng.integers(0, lim, 64), rng.integers(1, lim, 64))]
    for delta in (-1, 0, 1):                      # just below, at and above a multiple of d
        cases += [(int(n_), int(b)) for n_, b in zip(np.clip(q * d + delta, 0, lim - 1), d)]
    cases += [(int(a), int(b)) for a, b in zip(rng.integers(0, 4096, 64), rng.integers(1, 300, 64))]
    num = np.array([c[0] for c in cases], np.uint32)
    den = np.array([c[1] for c in cases], np.uint32)
    out = np.zeros(len(cases), np.uint32)
    run_kernel(m, "udiv", args=[Buffer(num), Buffer(den), Buffer(out)], block=(len(cases),))
    want = num.astype(np.uint64) // den.astype(np.uint64)
    bad = [(int(a), int(b), int(o)) for a, b, o, w in zip(num, den, out, want) if o != w]
    assert not bad, bad[:8]
