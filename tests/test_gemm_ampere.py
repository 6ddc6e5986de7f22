"""samples/gemm_ampere.py: builds, assembles for sm_80 and sm_90a without spills, and on a GPU
computes bf16 GEMMs (both B layouts, ragged edges) that match a float64 reference."""
import re

import numpy as np
import pytest

from _samples import load_sample


g = load_sample("gemm_ampere")


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_ptx_has_the_pipeline_pieces(target):
    text = g.build(target).emit().text
    for name in g.KERNELS.values():
        body = text.split(f".entry {name}(")[1].split("\n}\n")[0]
        # the wait depth keeps STAGES-1 tiles in flight; a 0 here would serialise copy and compute
        assert f"cp.async.wait_group {g.STAGES - 2};" in body
        assert body.count("cp.async.commit_group;") >= 2
        assert re.search(r"cp\.async\.cg\.shared\.global \[[^\]]+\], \[[^\]]+\], 16, %r\d+;", body), \
            "16-byte cp.async with a register src-size (zero fill) expected"
        assert "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32" in body
        # 4 x 4 mma tiles per warp, 2 k-steps per 32-wide k-tile, in the loop body (prologue has none)
        assert body.count("mma.sync.aligned") == g.MI * g.NI * 2
    nn = text.split(f".entry {g.KERNELS['nn']}(")[1]
    assert "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" in nn.split("\n}\n")[0]
    nt = text.split(f".entry {g.KERNELS['nt']}(")[1].split("\n}\n")[0]
    assert ".trans" not in nt


def _bank_groups(offsets):
    return {(o // 16) % 8 for o in offsets}


@pytest.mark.parametrize("row0", [0, 8, 16, 40, 120])
@pytest.mark.parametrize("chunk", [0, 1, 2, 3])
def test_swizzle64_ldmatrix_phase_is_conflict_free(row0, chunk):
    # mirror of _swz64 in plain integers: the 8 row addresses of one ldmatrix phase
    swz = lambda o: o ^ ((o >> 3) & 0x70)  # noqa: E731
    offs = [swz(r * 64 + chunk * 16) for r in range(row0, row0 + 8)]
    assert len(_bank_groups(offs)) == 8
    # the swizzle is a permutation of 16-byte chunks inside the tile (no two chunks collide)
    tile = {swz(r * 64 + c * 16) for r in range(128) for c in range(4)}
    assert len(tile) == 512 and max(tile) < 128 * 64


@pytest.mark.parametrize("row0", [0, 8, 16, 24])
@pytest.mark.parametrize("chunk", [0, 3, 8, 15])
def test_swizzle256_ldmatrix_phase_is_conflict_free(row0, chunk):
    swz = lambda o: o ^ ((o >> 4) & 0x70)  # noqa: E731
    offs = [swz(r * 256 + chunk * 16) for r in range(row0, row0 + 8)]
    assert len(_bank_groups(offs)) == 8
    tile = {swz(r * 256 + c * 16) for r in range(32) for c in range(16)}
    assert len(tile) == 512 and max(tile) < 32 * 256


def test_swizzle_helpers_emit_the_checked_formula():
    import ptxgen as pg
    m = pg.Module("sm_80")
    k = m.entry("t")
    o = k.mov(0, type=pg.u32)
    g._swz64(k, o)
    g._swz256(k, o)
    text = m.emit().text
    assert "shr.u32" in text and "and.b32" in text and "xor.b32" in text
    assert ", 3;" in text and ", 4;" in text and ", 112;" in text


@pytest.mark.parametrize("shape, bad", [((10, 12, 16), "N and K"), ((10, 16, 4), "N and K"),
                                        ((0, 8, 8), "M must"), ((2**16, 2**16, 8), "M\\*N")])
def test_check_shape_rejects(shape, bad):
    with pytest.raises(ValueError, match=bad):
        g.check_shape(*shape)


def test_grid_covers_ragged_sizes():
    assert g.grid_for(1000, 1000) == (8 * 8,)
    assert g.grid_for(1, 8) == (1,)
    assert g.grid_for(129, 256) == (4,)


@pytest.mark.ptxas
@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_assembles_without_spills(target):
    from ptxgen.ptxas import assemble
    res = assemble(g.build(target).emit(), target, cache=False)
    assert set(res.resources) == set(g.KERNELS.values())
    for fn, r in res.resources.items():
        assert r.spill_stores == 0 and r.spill_loads == 0, f"{fn} spills on {target}"
        # 64 accumulators + 2 x 24 fragment registers need > 112; more than 255 cannot exist
        assert 112 < r.registers <= 255, (fn, r.registers)
        assert r.shared_bytes == 0   # all shared memory is the dynamic window


@pytest.mark.ptxas
@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_wide_tile_variant_assembles_without_spills(target):
    from ptxgen.ptxas import assemble
    res = assemble(g.build(target, bn=256).emit(), target)
    for fn, r in res.resources.items():
        assert r.spill_stores == 0 and r.spill_loads == 0, f"{fn} (bn=256) spills on {target}"


@pytest.mark.gpu
@pytest.mark.parametrize("bn", [128, 256])
@pytest.mark.parametrize("layout", ["nn", "nt"])
def test_gemm_matches_reference_on_gpu(layout, bn):
    torch = pytest.importorskip("torch")
    from ptxgen.runtime import get_context, load_module
    target = get_context().arch
    f = g.prepare(load_module(g.build(target, bn=bn).emit()), layout, bn=bn)
    rng = np.random.default_rng(1234)
    for (m, n, k) in [(1, 8, 8), (128, 128, 32), (130, 136, 40), (200, 264, 296), (333, 128, 1000),
                      (256, 520, 72)]:
        a = torch.from_numpy(rng.standard_normal((m, k), dtype=np.float32)).cuda().to(torch.bfloat16)
        bk = torch.from_numpy(rng.standard_normal((k, n), dtype=np.float32)).cuda().to(torch.bfloat16)
        b = bk if layout == "nn" else bk.t().contiguous()
        c = torch.full((m, n), -1, dtype=torch.int16, device="cuda").view(torch.bfloat16)  # NaN poison
        g.launch(f, a, b, c, m, n, k, bn=bn)
        torch.cuda.synchronize()
        ref = a.double() @ bk.double()
        got = c.double()
        assert bool(torch.isfinite(got).all()), f"{m}x{n}x{k}: unwritten (NaN) outputs"
        err = (got - ref).abs()
        tol = 2.0 ** -8 * ref.abs() + 1e-3 * max(1.0, k ** 0.5)
        assert bool((err <= tol).all()), f"{m}x{n}x{k}: max abs err {err.max().item()}"
