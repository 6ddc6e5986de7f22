"""samples/gemm_ampere.py (cp.async ring, swizzled ldmatrix, mma.sync) runs in the CPU executor on
ragged problems, every tile option, and matches numpy; its GPU runs are in tests/test_gemm_ampere.py."""
import numpy as np
import pytest

from ptxgen.executor import Buffer, run_kernel
from ptxgen.harness import from_bf16_bits, to_bf16_bits

from _samples import load_sample

g = load_sample("gemm_ampere")


def _run(layout, m, n, k, tile, seed=0, grid=None, target="sm_90a"):
    mod = g.build(target, tile)
    rng = np.random.default_rng(seed)
    a = to_bf16_bits(rng.standard_normal((m, k)).astype(np.float32))
    b = to_bf16_bits(rng.standard_normal((k, n) if layout == "nn" else (n, k)).astype(np.float32))
    c = np.full((m, n), 0xFFFF, np.uint16)            # bf16 NaN poison
    run_kernel(mod, g.KERNELS[layout], grid=grid or g.grid_for(m, n, tile), block=(tile.threads,),
               dynamic_shared=tile.smem_bytes,
               args=[Buffer(a), Buffer(b), Buffer(c), np.uint32(m), np.uint32(n), np.uint32(k)])
    bm = from_bf16_bits(b).astype(np.float64)
    ref = from_bf16_bits(a).astype(np.float64) @ (bm if layout == "nn" else bm.T)
    return from_bf16_bits(c).astype(np.float64), ref


@pytest.mark.parametrize("layout", ["nn", "nt"])
@pytest.mark.parametrize("tile, shape", [
    (g.Tile(), (130, 136, 40)),                          # 128 x 128 x 32: ragged M and N, a partial second k-tile
    (g.Tile(256, 64, 3), (130, 264, 200)),               # 4 tiles, 4 k-tiles (the last partial): the ring wraps
    (g.Tile(128, 64, 4), (72, 128, 520)),                # 9 k-tiles through 4 stages
    (g.Tile(256, 32, 2, epi="smem"), (130, 264, 200)),   # the staged epilogue: a tile larger than the ring
    (g.TILE, (200, 264, 200)),                           # the default (bk=64: 4 k-steps a tile), C staged in the ring
    (g.Tile(256, 32, 4, epi="smem", group=16), (200, 264, 72)),   # the former default: bk=32, 4 stages
    (g.Tile(128, 32, 4, 4, "smem", 2), (136, 264, 104)),  # 4 warps (2 x 2), two CTAs per SM
    (g.Tile(128, 64, 3, 4), (130, 128, 200)),
    (g.Tile(256, 32, 4, epi="smem", group=16, overlap=True), (200, 264, 72)),   # one CTA a tile, overlap
    # mbarrier stages: 3 k-tiles through 4 stages (the loads past K are skipped), 13 through 5 with lag 1
    # (two k-tiles in flight while a stage waits for its release), one partial k-tile with lag 2
    (g.Tile(256, 32, 4, epi="smem", group=16, sync="mbar"), (200, 264, 72)),
    (g.Tile(256, 32, 5, epi="smem", sync="mbar", lag=1), (130, 264, 400)),
    (g.Tile(128, 64, 4, sync="mbar", lag=2), (72, 136, 24)),
], ids=lambda t: t.name if isinstance(t, g.Tile) else "x".join(map(str, t)))
def test_kernel_matches_numpy(layout, tile, shape):
    got, ref = _run(layout, *shape, tile)
    assert not np.isnan(got).any(), "elements left unwritten"
    err = np.abs(got - ref)
    tol = 2.0 ** -8 * np.abs(ref) + 1e-3 * np.sqrt(shape[2])   # bf16 rounding of C
    assert (err <= tol).all(), f"{int((err > tol).sum())} elements differ"


@pytest.mark.parametrize("group", [1, 2, 16])
def test_raster_group_covers_every_tile_once(group):
    # 3 x 3 tiles on 2 persistent CTAs: a group of 2 block rows leaves a partial group of 1 at the bottom,
    # 16 is taller than the matrix
    tile = g.Tile(128, 32, 3, epi="smem", group=group)
    got, ref = _run("nt", 300, 384, 40, tile, grid=g.persistent_grid(300, 384, 2, tile))
    assert not np.isnan(got).any(), "elements left unwritten"
    assert (np.abs(got - ref) <= 2.0 ** -8 * np.abs(ref) + 1e-3 * np.sqrt(40)).all()


@pytest.mark.parametrize("overlap", [False, True], ids=["", "overlap"])
@pytest.mark.parametrize("epi", ["smem", "direct"])
@pytest.mark.parametrize("layout", ["nn", "nt"])
def test_persistent_ctas_walk_several_tiles(layout, epi, overlap):
    # 2 CTAs for 6 tiles: each runs the prologue, k-loop and epilogue three times over one ring (with
    # overlap, a tile's prologue is issued before the previous tile's epilogue)
    tile = g.Tile(128, 32, 3, epi=epi, overlap=overlap)
    got, ref = _run(layout, 260, 384, 72, tile, grid=g.persistent_grid(260, 384, 2, tile))
    assert not np.isnan(got).any(), "elements left unwritten"
    err = np.abs(got - ref)
    assert (err <= 2.0 ** -8 * np.abs(ref) + 1e-3 * np.sqrt(72)).all()


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("lag", [0, 1])
@pytest.mark.parametrize("layout", ["nn", "nt"])
def test_mbarrier_ring_keeps_its_phases_across_persistent_tiles(layout, lag, target):
    # 2 CTAs for 6 tiles of 4 k-tiles through 3 stages: each CTA's stages see 4 uses a tile, so a stage's
    # phase parity differs between the tiles a CTA runs; sm_80 waits with mbarrier.test_wait, sm_90a with
    # try_wait. A parity or arrival count that is off stalls the run (or fails on more arrivals than expected)
    tile = g.Tile(128, 32, 3, epi="smem", sync="mbar", lag=lag)
    got, ref = _run(layout, 260, 384, 104, tile, grid=g.persistent_grid(260, 384, 2, tile), target=target)
    assert not np.isnan(got).any(), "elements left unwritten"
    assert (np.abs(got - ref) <= 2.0 ** -8 * np.abs(ref) + 1e-3 * np.sqrt(104)).all()


def test_bk64_smem_tile_on_persistent_ctas():
    # the bk=64 build with C staged in the ring (measured faster than the default under sustained load,
    # bench/LOG.md round 8): 6 tiles on 2 CTAs, 3 k-tiles the last partial, ragged M and N
    tile = g.Tile(256, 64, 3, epi="smem", group=16)
    got, ref = _run("nt", 260, 264, 136, tile, grid=g.persistent_grid(260, 264, 2, tile))
    assert not np.isnan(got).any(), "elements left unwritten"
    assert (np.abs(got - ref) <= 2.0 ** -8 * np.abs(ref) + 1e-3 * np.sqrt(136)).all()
