"""samples/gemm_ampere.py: builds, assembles for sm_80 and sm_90a without spills, and on a GPU
computes bf16 GEMMs (both B layouts, ragged edges) that match a float64 reference."""
import re

import numpy as np
import pytest

from _samples import load_sample


g = load_sample("gemm_ampere")


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("bk, stages", [(32, 4), (64, 3)])
def test_ptx_has_the_pipeline_pieces(target, bk, stages):
    text = g.build(target, bk=bk, stages=stages).emit().text
    for name in g.KERNELS.values():
        body = text.split(f".entry {name}(")[1].split("\n}\n")[0]
        # the wait depth keeps STAGES-1 tiles in flight; a 0 here would serialise copy and compute
        assert f"cp.async.wait_group {stages - 2};" in body
        assert body.count("cp.async.commit_group;") >= 2
        assert re.search(r"cp\.async\.cg\.shared\.global \[[^\]]+\], \[[^\]]+\], 16, %r\d+;", body), \
            "16-byte cp.async with a register src-size (zero fill) expected"
        assert "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32" in body
        # 4 x 4 mma tiles per warp, bk/16 k-steps per k-tile, in the loop body (prologue has none)
        assert body.count("mma.sync.aligned") == g.MI * g.NI * (bk // 16)
        # one barrier per k-tile (plus the prologue's)
        assert body.count("bar.sync 0;") == 2
    nn = text.split(f".entry {g.KERNELS['nn']}(")[1]
    assert "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" in nn.split("\n}\n")[0]
    nt = text.split(f".entry {g.KERNELS['nt']}(")[1].split("\n}\n")[0]
    assert ".trans" not in nt


@pytest.mark.parametrize("bn", [128, 256])
def test_mma_operands_are_whole_ldmatrix_register_runs(bn):
    # an mma.sync operand that is not a consecutive run of one ldmatrix destination costs register
    # moves in SASS (the nt kernel once executed 50 % more instructions than nn for that reason)
    text = g.build("sm_90a", bn=bn).emit().text
    for name in g.KERNELS.values():
        body = text.split(f".entry {name}(")[1].split("\n}\n")[0]
        dests = [m.split(", ") for m in re.findall(r"ldmatrix[^{]*\{([^}]*)\}", body)]
        runs = {tuple(d[i:i + n]) for d in dests for n in (2, 4) for i in range(0, 4, n)}
        for a_op, b_op in re.findall(r"mma\.sync[^{]*\{[^}]*\}, \{([^}]*)\}, \{([^}]*)\}", body):
            assert tuple(a_op.split(", ")) in runs, (name, a_op)
            assert tuple(b_op.split(", ")) in runs, (name, b_op)


def test_smem_epilogue_stores_whole_chunks():
    text = g.build("sm_90a", bn=256, epi="smem").emit().text
    for name in g.KERNELS.values():
        body = text.split(f".entry {name}(")[1].split("\n}\n")[0]
        # 128 rows x 32 chunks of C over 256 threads: 16 16-byte stores each, no 4-byte ones
        assert body.count("st.global.v4.b32") == 16 and "st.global.b32" not in body
        assert body.count("st.shared.b32") == g.MI * 8 * 2 and body.count("ld.shared.v4.b32") == 16
    with pytest.raises(ValueError, match="epi"):
        g.build("sm_90a", epi="tma")


def _bank_groups(offsets):
    return {(o // 16) % 8 for o in offsets}


@pytest.mark.parametrize("row0", [0, 8, 16, 40, 120])
@pytest.mark.parametrize("chunk", [0, 1, 2, 3])
def test_swizzle64_ldmatrix_phase_is_conflict_free(row0, chunk):
    # mirror of _swz_k in plain integers, 64-byte rows: the 8 row addresses of one ldmatrix phase
    swz = lambda o: o ^ ((o >> 3) & 0x70)  # noqa: E731
    offs = [swz(r * 64 + chunk * 16) for r in range(row0, row0 + 8)]
    assert len(_bank_groups(offs)) == 8
    # the swizzle is a permutation of 16-byte chunks inside the tile (no two chunks collide)
    tile = {swz(r * 64 + c * 16) for r in range(128) for c in range(4)}
    assert len(tile) == 512 and max(tile) < 128 * 64


@pytest.mark.parametrize("row0", [0, 8, 16, 40, 120])
@pytest.mark.parametrize("chunk", [0, 1, 5, 7])
def test_swizzle_k_with_128_byte_rows_is_conflict_free(row0, chunk):
    # bk=64: the same formula on 128-byte rows is the 128-byte swizzle (chunk XOR row % 8)
    swz = lambda o: o ^ ((o >> 3) & 0x70)  # noqa: E731
    offs = [swz(r * 128 + chunk * 16) for r in range(row0, row0 + 8)]
    assert len(_bank_groups(offs)) == 8
    assert all(swz(r * 128 + c * 16) == r * 128 + ((c ^ (r % 8)) * 16) for r in range(128) for c in range(8))


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
    g._swz_k(k, o)
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
@pytest.mark.parametrize("bn, bk, stages", [(256, 32, 4), (256, 64, 3), (128, 64, 4)])
def test_wide_tile_variants_assemble_without_spills(target, bn, bk, stages):
    from ptxgen.ptxas import assemble
    res = assemble(g.build(target, bn=bn, bk=bk, stages=stages).emit(), target)
    for fn, r in res.resources.items():
        assert r.spill_stores == 0 and r.spill_loads == 0, f"{fn} ({bn}x{bk}, {stages} stages) spills on {target}"


@pytest.mark.parametrize("opts", [dict(bn=192), dict(bk=16), dict(stages=1), dict(stages=9)])
def test_build_rejects_tile_options_it_cannot_make(opts):
    with pytest.raises(ValueError, match="tile options"):
        g.build("sm_90a", **opts)


def test_smem_bytes_follow_the_tile():
    assert g.smem_bytes() == 4 * (8192 + 8192)
    assert g.smem_bytes(256, 64, 3) == 3 * (128 + 256) * 64 * 2 == 147456   # fits A100's 163 KiB
    assert g.smem_bytes(256, 64, 4) == 196608                               # Hopper only (227 KiB)


@pytest.mark.gpu
@pytest.mark.parametrize("bn, bk, stages, epi", [(128, 32, 4, "direct"), (256, 32, 4, "direct"), (256, 64, 3, "direct"),
                                                 (256, 64, 4, "direct"), (256, 32, 4, "smem"), (128, 32, 2, "smem")])
@pytest.mark.parametrize("layout", ["nn", "nt"])
def test_gemm_matches_reference_on_gpu(layout, bn, bk, stages, epi):
    torch = pytest.importorskip("torch")
    from ptxgen.runtime import get_context, load_module
    target = get_context().arch
    opts = dict(bn=bn, bk=bk, stages=stages)
    f = g.prepare(load_module(g.build(target, epi=epi, **opts).emit()), layout, **opts)
    rng = np.random.default_rng(1234)
    for (m, n, k) in [(1, 8, 8), (128, 128, 32), (130, 136, 40), (200, 264, 296), (333, 128, 1000),
                      (256, 520, 72)]:
        a = torch.from_numpy(rng.standard_normal((m, k), dtype=np.float32)).cuda().to(torch.bfloat16)
        bk = torch.from_numpy(rng.standard_normal((k, n), dtype=np.float32)).cuda().to(torch.bfloat16)
        b = bk if layout == "nn" else bk.t().contiguous()
        c = torch.full((m, n), -1, dtype=torch.int16, device="cuda").view(torch.bfloat16)  # NaN poison
        g.launch(f, a, b, c, m, n, k, **opts)
        torch.cuda.synchronize()
        ref = a.double() @ bk.double()
        got = c.double()
        assert bool(torch.isfinite(got).all()), f"{m}x{n}x{k}: unwritten (NaN) outputs"
        err = (got - ref).abs()
        tol = 2.0 ** -8 * ref.abs() + 1e-3 * max(1.0, k ** 0.5)
        assert bool((err <= tol).all()), f"{m}x{n}x{k}: max abs err {err.max().item()}"
