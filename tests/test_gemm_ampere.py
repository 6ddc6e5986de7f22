"""samples/gemm_ampere.py: builds, assembles for sm_80 and sm_90a without spills, and on a GPU
computes bf16 GEMMs (both B layouts, ragged edges) that match a float64 reference."""
import re

import numpy as np
import pytest

from _samples import RecordingFunction, load_sample


g = load_sample("gemm_ampere")


MBAR_TILES = [g.Tile(256, 32, 4, epi="smem", group=16, sync="mbar"), g.Tile(256, 32, 5, epi="smem", group=16,
                                                                           sync="mbar", lag=1),
              g.Tile(256, 64, 3, sync="mbar", lag=1)]


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("tile", [g.Tile(), g.Tile(128, 64, 3), g.TILE, g.Tile(128, 32, 3, 4),
                                  g.Tile(256, 32, 4, epi="smem", overlap=True), g.Tile(overlap=True)],
                         ids=lambda t: t.name)
def test_ptx_has_the_pipeline_pieces(target, tile):
    text = g.build(target, tile).emit().text
    stages, bk = tile.stages, tile.bk
    for name in g.KERNELS.values():
        assert re.search(rf"\.entry {name}\([^)]*\)\n\.maxntid {tile.threads}\n", text)
        body = text.split(f".entry {name}(")[1].split("\n}\n")[0]
        # the wait depth keeps STAGES-1 tiles in flight; a 0 here would serialise copy and compute
        assert f"cp.async.wait_group {stages - 2};" in body
        assert body.count("cp.async.commit_group;") >= 2
        assert re.search(r"cp\.async\.cg\.shared\.global \[[^\]]+\], \[[^\]]+\], 16, %r\d+;", body), \
            "16-byte cp.async with a register src-size (zero fill) expected"
        assert "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32" in body
        # 4 x wn/8 mma tiles per warp, bk/16 k-steps per k-tile, in the loop body (prologue has none)
        assert body.count("mma.sync.aligned") == g.MI * tile.wn // 8 * (bk // 16)
        # one barrier per k-tile, plus the prologue's, the smem epilogue's two, and one before the
        # next tile of a persistent CTA refills the ring; with overlap the one after the k-loop lets the
        # next tile's prologue in before the epilogue, whose C tile has its own buffer (one barrier)
        if tile.overlap:
            assert body.count("bar.sync 0;") == 3 + (1 if tile.epi == "smem" else 0)
            # the prologue is issued before the first tile and again before each further tile's epilogue
            assert body.count("cp.async.commit_group;") == 2 * (stages - 1) + 1
        else:
            assert body.count("bar.sync 0;") == 3 + (2 if tile.epi == "smem" else 0)
    nn = text.split(f".entry {g.KERNELS['nn']}(")[1]
    assert "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" in nn.split("\n}\n")[0]
    nt = text.split(f".entry {g.KERNELS['nt']}(")[1].split("\n}\n")[0]
    assert ".trans" not in nt


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("tile", MBAR_TILES, ids=lambda t: t.name)
def test_mbarrier_ring_replaces_the_per_ktile_barrier(target, tile):
    text = g.build(target, tile).emit().text
    wait = "mbarrier.try_wait.parity" if target == "sm_90a" else "mbarrier.test_wait.parity"
    for name in g.KERNELS.values():
        body = text.split(f".entry {name}(")[1].split("\n}\n")[0]
        assert "cp.async.wait_group" not in body and "cp.async.commit_group" not in body
        # a full and an empty barrier a stage, initialised once for the CTA's whole life
        assert body.count("mbarrier.init.shared.b64") == 2 * tile.stages
        # the copies of the prologue (stages-1-lag k-tiles) and of the k-loop each complete a full barrier
        assert body.count("cp.async.mbarrier.arrive.noinc.shared.b64") == tile.stages - tile.lag
        # waits: full before k-tile 0 and before each next k-tile; empty before each issue
        assert body.count(wait) == 2 + (tile.stages - tile.lag)
        assert "mbarrier.try_wait" not in body if target == "sm_80" else "mbarrier.test_wait" not in body
        # a stage released once a k-tile, by every thread
        assert len(re.findall(r"\n\s*mbarrier\.arrive\.shared\.b64 ", body)) == 1
        # bar.sync only around the barriers' init, the smem epilogue and the refill of the next tile
        assert body.count("bar.sync 0;") == 2 + (2 if tile.epi == "smem" else 0)


@pytest.mark.parametrize("bn", [128, 256])
def test_mma_operands_are_whole_ldmatrix_register_runs(bn):
    # an mma.sync operand that is not a consecutive run of one ldmatrix destination costs register
    # moves in SASS (the nt kernel once executed 50 % more instructions than nn for that reason)
    text = g.build("sm_90a", g.Tile(bn)).emit().text
    for name in g.KERNELS.values():
        body = text.split(f".entry {name}(")[1].split("\n}\n")[0]
        dests = [m.split(", ") for m in re.findall(r"ldmatrix[^{]*\{([^}]*)\}", body)]
        runs = {tuple(d[i:i + n]) for d in dests for n in (2, 4) for i in range(0, 4, n)}
        for a_op, b_op in re.findall(r"mma\.sync[^{]*\{[^}]*\}, \{([^}]*)\}, \{([^}]*)\}", body):
            assert tuple(a_op.split(", ")) in runs, (name, a_op)
            assert tuple(b_op.split(", ")) in runs, (name, b_op)


def test_smem_epilogue_stores_whole_chunks():
    text = g.build("sm_90a", g.Tile(256, epi="smem")).emit().text
    for name in g.KERNELS.values():
        body = text.split(f".entry {name}(")[1].split("\n}\n")[0]
        # 128 rows x 32 chunks of C over 256 threads: 16 16-byte stores each, no 4-byte ones
        assert body.count("st.global.v4.b32") == 16 and "st.global.b32" not in body
        assert body.count("st.shared.b32") == g.MI * 8 * 2 and body.count("ld.shared.v4.b32") == 16


def _bank_groups(offsets):
    return {(o // 16) % 8 for o in offsets}


@pytest.mark.parametrize("row_bytes, chunk", [(64, 0), (64, 1), (64, 3), (128, 0), (128, 1), (128, 5), (128, 7)])
@pytest.mark.parametrize("row0", [0, 8, 16, 40, 120])
def test_swizzle_k_ldmatrix_phase_is_conflict_free(row_bytes, row0, chunk):
    # mirror of _swz_k in plain integers: bk=32 (64-byte rows, two to a 128-byte line) and bk=64
    # (128-byte rows, where it is the 128-byte swizzle: chunk XOR row % 8)
    chunks = row_bytes // 16
    swz = lambda o: o ^ ((o >> 3) & 0x70)  # noqa: E731
    offs = [swz(r * row_bytes + chunk * 16) for r in range(row0, row0 + 8)]   # one ldmatrix phase
    assert len(_bank_groups(offs)) == 8
    # a permutation of the 16-byte chunks of the tile (no two collide)
    tile = {swz(r * row_bytes + c * 16) for r in range(128) for c in range(chunks)}
    assert len(tile) == 128 * chunks and max(tile) < 128 * row_bytes
    if row_bytes == 128:
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


@pytest.mark.parametrize("m, n, ctas, want", [(4096, 4096, 132, 128), (6144, 6144, 132, 128), (8192, 8192, 132, 128),
                                            (1000, 1000, 132, 32), (4096, 4352, 132, 109), (128, 256, 132, 1)])
def test_persistent_grid_keeps_the_rounds_with_the_fewest_ctas(m, n, ctas, want):
    assert g.persistent_grid(m, n, ctas) == (want,)
    tiles = g.grid_for(m, n)[0]
    assert -(-tiles // want) == -(-tiles // ctas)
    with pytest.raises(ValueError, match="ctas"):
        g.persistent_grid(m, n, 0)


def test_resident_ctas_count_min_blocks_per_sm():
    assert g.resident_ctas(132) == 132 * g.TILE.min_blocks == 132
    assert g.resident_ctas(132, g.Tile(128, 32, 4, 4, "smem", 2)) == 264


def test_grid_covers_ragged_sizes():
    assert g.grid_for(1000, 1000, g.Tile()) == (8 * 8,)
    assert g.grid_for(1, 8) == (1,)
    assert g.grid_for(129, 256, g.Tile()) == (4,)
    assert g.grid_for(129, 257, g.TILE) == (4,)


@pytest.mark.ptxas
@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("tile", [g.Tile(), g.TILE, g.Tile(256, 32, 4), g.Tile(256, 64, 3), g.Tile(128, 64, 4),
                                  g.Tile(128, 32, 4, 4, "smem", 2), g.Tile(256, 32, 4, epi="smem", group=16)]
                         + MBAR_TILES, ids=lambda t: t.name)
def test_assembles_without_spills(target, tile):
    from ptxgen.ptxas import assemble
    res = assemble(g.build(target, tile).emit(), target)
    assert set(res.resources) == set(g.KERNELS.values())
    for fn, r in res.resources.items():
        assert r.spill_stores == 0 and r.spill_loads == 0, f"{fn} ({tile.name}) spills on {target}"
        # the accumulators (64 x wn / 32 a lane) and 2 x fragment sets need more than 112 registers
        assert 112 < r.registers <= 255, (fn, r.registers)
        # two 4-warp CTAs must fit one SM's 64K registers
        assert r.registers * tile.threads * tile.min_blocks <= 65536
        assert r.shared_bytes == 0   # all shared memory is the dynamic window


@pytest.mark.parametrize("tile", [g.Tile(bn=192), g.Tile(bk=16), g.Tile(stages=1), g.Tile(stages=9),
                                  g.Tile(256, warps=4), g.Tile(epi="tma"), g.Tile(min_blocks=3),
                                  g.Tile(group=0), g.Tile(group=65), g.Tile(group=True), g.Tile(group=2.0),
                                  g.Tile(overlap=2), g.Tile(256, 64, 4, epi="smem", overlap=True),
                                  g.Tile(lag=1), g.Tile(sync="mbar", lag=3), g.Tile(sync="mbar", lag=-1),
                                  g.Tile(sync="mbar", lag=True), g.Tile(sync="wait"),
                                  g.Tile(sync="mbar", overlap=True)], ids=str)
def test_build_rejects_tile_options_it_cannot_make(tile):
    with pytest.raises(ValueError, match="tile options"):
        g.build("sm_90a", tile)
    with pytest.raises(ValueError, match="must be a gemm_ampere.Tile"):
        g.build("sm_90a", 256)


def test_smem_bytes_follow_the_tile():
    assert g.Tile().smem_bytes == 4 * (8192 + 8192)
    assert g.Tile(256, 64, 3).smem_bytes == 3 * (128 + 256) * 64 * 2 == 147456   # fits A100's 163 KiB
    assert g.Tile(256, 64, 4).smem_bytes == 196608                               # Hopper only (227 KiB)
    assert g.Tile(256, 32, 2, epi="smem").smem_bytes == 128 * 256 * 2            # the staged C tile
    assert g.Tile(256, 32, 4, epi="smem", overlap=True).smem_bytes == 4 * 24576 + 65536   # C after the ring
    assert g.Tile(256, 32, 4, overlap=True).smem_bytes == 4 * 24576                      # direct: no staging
    # mbarriers after the ring: 24 KiB stages = 3 * 2^13, so stage s's pair sits 24 * s bytes in
    assert g.Tile(256, 32, 4, sync="mbar").smem_bytes == 4 * 24576 + 2 * 8 * 4 * 3
    assert g.Tile(128, 32, 4, sync="mbar").smem_bytes == 4 * 16384 + 2 * 8 * 4


@pytest.mark.gpu
@pytest.mark.parametrize("tile", [g.Tile(), g.TILE, g.Tile(256, 32, 4), g.Tile(256, 64, 3), g.Tile(256, 64, 4),
                                  g.Tile(128, 32, 2, epi="smem"), g.Tile(128, 32, 4, 4, "smem", 2),
                                  g.Tile(256, 32, 4, epi="smem"), g.Tile(256, 32, 4, epi="smem", group=3),
                                  g.Tile(256, 32, 4, epi="smem", group=16, overlap=True),
                                  g.Tile(256, 32, 4, group=16, overlap=True), g.Tile(256, 32, 4, epi="smem", group=16)]
                         + MBAR_TILES,
                         ids=lambda t: t.name)
@pytest.mark.parametrize("layout", ["nn", "nt"])
def test_gemm_matches_reference_on_gpu(layout, tile):
    _gpu_check(layout, tile, None)


@pytest.mark.gpu
@pytest.mark.parametrize("tile", MBAR_TILES[:2], ids=lambda t: t.name)
def test_sm80_mbarrier_build_matches_reference_on_gpu(tile):
    # the sm_80 build waits with mbarrier.test_wait (sm_80 has no try_wait); the driver JIT-compiles it
    _gpu_check("nt", tile, "sm_80")


def _gpu_check(layout, tile, target):
    torch = pytest.importorskip("torch")
    from ptxgen.runtime import get_context, load_module
    target = target or get_context().arch
    f = g.prepare(load_module(g.build(target, tile).emit()), layout, tile)
    rng = np.random.default_rng(1234)
    for (m, n, k) in [(1, 8, 8), (128, 128, 32), (130, 136, 40), (200, 264, 296), (333, 128, 1000),
                      (256, 520, 72)]:
        a = torch.from_numpy(rng.standard_normal((m, k), dtype=np.float32)).cuda().to(torch.bfloat16)
        bk = torch.from_numpy(rng.standard_normal((k, n), dtype=np.float32)).cuda().to(torch.bfloat16)
        b = bk if layout == "nn" else bk.t().contiguous()
        c = torch.full((m, n), -1, dtype=torch.int16, device="cuda").view(torch.bfloat16)  # NaN poison
        # a persistent grid of 3 CTAs: several tiles per CTA where the problem has them
        g.launch(f, a, b, c, m, n, k, tile, ctas=3 if m * n > 128 * 256 else None)
        torch.cuda.synchronize()
        ref = a.double() @ bk.double()
        got = c.double()
        assert bool(torch.isfinite(got).all()), f"{m}x{n}x{k}: unwritten (NaN) outputs"
        err = (got - ref).abs()
        tol = 2.0 ** -8 * ref.abs() + 1e-3 * max(1.0, k ** 0.5)
        assert bool((err <= tol).all()), f"{m}x{n}x{k}: max abs err {err.max().item()}"


def test_tile_parse_takes_the_fields_in_order():
    assert g.Tile.parse("256:64:3:8:smem:1:16") == g.Tile(256, 64, 3, 8, "smem", 1, 16)
    assert g.Tile.parse("256:32:4:8:smem:1:16:1") == g.Tile(256, 32, 4, 8, "smem", 1, 16, overlap=True)
    assert g.Tile.parse("256:32:5:8:smem:1:16:0:mbar:1") == g.Tile(256, 32, 5, epi="smem", group=16, sync="mbar",
                                                                    lag=1)
    assert g.Tile.parse("128") == g.Tile()
    n = len(g.Tile.__dataclass_fields__)
    for bad, match in (("", "expected 1 to"), (":".join(["256"] * (n + 1)), f"expected 1 to {n}"),
                       ("256:x", "bk must be a whole number"), ("256:32:4:8:smem:1:16:yes", "overlap must be 0 or 1"),
                       ("192", "tile options"), ("256:32:4:8:tma", "tile options")):
        with pytest.raises(ValueError, match=match):
            g.Tile.parse(bad)


@pytest.mark.parametrize("env, want", [("256:32:4:8:smem:1:16", "128x256x32_s4_w8_smem_g16"),
                                       ("256:64:9", "GEMM_AMPERE_TILE: ")])
def test_sample_takes_its_tile_from_the_environment(env, want, tmp_path):
    import os
    import subprocess
    import sys
    from _samples import SAMPLES_DIR
    r = subprocess.run([sys.executable, os.path.join(SAMPLES_DIR, "gemm_ampere.py"), "--no-run", "--out", str(tmp_path)],
                       env=dict(os.environ, GEMM_AMPERE_TILE=env), capture_output=True, text=True, timeout=300)
    out = r.stdout + r.stderr
    assert want in out, out
    if env.endswith(":16"):
        assert r.returncode == 0
        # the emitted PTX is that tile's, not the default's (3 stages): 4 stages of 24 KiB, so the copy
        # wait keeps two groups pending
        assert g.TILE.stages != 4
        assert "cp.async.wait_group 2;" in (tmp_path / "gemm_bf16.ptx").read_text()
    else:
        assert r.returncode == 2 and "Traceback" not in out


@pytest.mark.parametrize("ctas", [None, 132])
def test_bind_makes_the_launch_that_launch_makes(ctas):
    """bind checks and packs the same grid, block, arguments and shared memory as launch (only the
    stream is left to the bound call), and refuses a bad shape the same way."""
    f = RecordingFunction()
    g.launch(f, 0x1000, 0x2000, 0x3000, 1000, 520, 264, g.TILE, stream=None, ctas=ctas)
    assert g.bind(f, 0x1000, 0x2000, 0x3000, 1000, 520, 264, g.TILE, ctas=ctas) == "bound"
    (_, la, lkw), (_, ba, bkw) = f.calls
    assert repr(la) == repr(ba) and lkw.pop("stream") is None and lkw == bkw
    assert la[0] == (g.grid_for(1000, 520, g.TILE) if ctas is None else g.persistent_grid(1000, 520, ctas, g.TILE))
    with pytest.raises(ValueError, match="N and K"):
        g.bind(f, 0, 0, 0, 10, 12, 16)


@pytest.mark.gpu
def test_bound_launch_matches_reference_on_gpu():
    """A BoundLaunch from bind, issued twice (the output poisoned in between), writes the product both times."""
    torch = pytest.importorskip("torch")
    from ptxgen.runtime import get_context, load_module
    tile = g.TILE
    f = g.prepare(load_module(g.build(get_context().arch, tile).emit()), "nt", tile)
    rng = np.random.default_rng(99)
    m, n, k = 333, 520, 264
    a = torch.from_numpy(rng.standard_normal((m, k), dtype=np.float32)).cuda().to(torch.bfloat16)
    b = torch.from_numpy(rng.standard_normal((n, k), dtype=np.float32)).cuda().to(torch.bfloat16)
    c = torch.empty((m, n), dtype=torch.bfloat16, device="cuda")
    bound = g.bind(f, a, b, c, m, n, k, tile, ctas=4)
    ref = a.double() @ b.double().t()
    for _ in range(2):
        c.view(torch.int16).fill_(-1)                        # NaN poison
        bound()
        torch.cuda.synchronize()
        got = c.double()
        assert bool(torch.isfinite(got).all())
        rel = float(torch.linalg.norm(got - ref) / torch.linalg.norm(ref))
        assert rel < 4e-3, rel
