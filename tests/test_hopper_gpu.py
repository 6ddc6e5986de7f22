"""Hopper kernels from samples/wgmma_tile.py and samples/tma_tile.py: the layout models they rely on
(pure), their assembly for sm_90a (ptxas), and their results on an sm_90 GPU (gpu).

With PTXGEN_GPU_DUMP=DIR a failing GPU check leaves its arrays in DIR as .npy files.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

from ptxgen.ops.wgmma_desc import decode_descriptor
from ptxgen.tma import swizzle_byte_offset

from _samples import load_sample


wgmma_tile = load_sample("wgmma_tile")
tma_tile = load_sample("tma_tile")


def _dump(name: str, **arrays) -> None:
    where = os.environ.get("PTXGEN_GPU_DUMP")
    if where:
        os.makedirs(where, exist_ok=True)
        for k, v in arrays.items():
            np.save(os.path.join(where, f"{name}.{k}.npy"), np.asarray(v))


# ------------------------------------------------------------------------------------------ layout models
def _stage_like_the_kernel(tile_bytes: np.ndarray, rows: int) -> np.ndarray:
    """The wgmma sample's staging loop in numpy: 16-byte chunk q of the dense tile -> shared memory."""
    smem = np.zeros(rows * 128, np.uint8)
    for q in range(rows * 8):
        row, chunk = q >> 3, q & 7
        dst = (row << 7) | ((chunk ^ (row & 7)) << 4)
        smem[dst:dst + 16] = tile_bytes[q * 16:q * 16 + 16]
    return smem


def _read_like_wgmma(smem: np.ndarray, desc: int, rows: int) -> np.ndarray:
    """The rows x 16 bf16 K-slice a K-major 128B-swizzled descriptor names (model of the PTX ISA's
    canonical layout): element (m, k) at start + (m // 8) * SBO + (m % 8) * 128 + 2k, then swizzled."""
    d = decode_descriptor(desc)
    assert d.swizzle == "128B" and d.base_offset == 0
    out = np.zeros((rows, 16), np.uint16)
    for m in range(rows):
        for k in range(16):
            addr = d.start_address + (m // 8) * d.sbo + (m % 8) * 128 + 2 * k
            p = swizzle_byte_offset(addr, "128B")
            out[m, k] = smem[p] | (smem[p + 1].astype(np.uint16) << 8)
    return out


def test_descriptor_fields_of_the_wgmma_sample():
    d = decode_descriptor(wgmma_tile.DESC_FIXED)
    assert (d.start_address, d.lbo, d.sbo, d.base_offset, d.swizzle) == (0, 16, 1024, 0, "128B")
    assert wgmma_tile.DESC_FIXED == 0x4000004000010000


@pytest.mark.parametrize("rows", [64, 8, 256])
def test_staged_operand_reads_back_through_the_descriptors(rows):
    rng = np.random.default_rng(rows)
    tile = rng.integers(0, 1 << 16, size=(rows, wgmma_tile.K), dtype=np.uint16)
    smem = _stage_like_the_kernel(tile.view(np.uint8).ravel(), rows)
    for step in range(wgmma_tile.K // 16):
        start = step * 32  # the tile sits at shared address 0 here (any 1024-byte boundary is the same)
        desc = ((start >> 4) & 0x3FFF) | wgmma_tile.DESC_FIXED
        got = _read_like_wgmma(smem, desc, rows)
        assert np.array_equal(got, tile[:, 16 * step:16 * step + 16]), f"K step {step}"


def test_sample_swizzle_formula_is_the_tma_one():
    rows, ks = np.meshgrid(np.arange(64), np.arange(64), indexing="ij")
    assert np.array_equal(wgmma_tile.swizzled_offset(rows, ks), swizzle_byte_offset(rows * 128 + ks * 2, "128B"))


@pytest.mark.parametrize("n", wgmma_tile.N_VALUES)
def test_accumulator_stores_cover_c_once(n):
    """The sample's store addresses (thread t, register i) hit every element of the 64 x n tile once."""
    seen = np.zeros((64, n), int)
    for t in range(128):
        w, lane = t >> 5, t & 31
        row0, col0 = 16 * w + lane // 4, 2 * (lane % 4)
        for j in range(n // 8):
            for i, (dr, dc) in enumerate(((0, 0), (0, 1), (8, 0), (8, 1))):
                seen[row0 + dr, 8 * j + col0 + dc] += 1
    assert (seen == 1).all()


def test_tma_expected_images():
    m = np.arange(128 * 256, dtype=np.uint16).reshape(128, 256)
    img = tma_tile.expected_tile(m, "none", 32, 40, 24, 5)
    assert np.array_equal(img.reshape(32, 40), m[5:37, 24:64])
    img = tma_tile.expected_tile(m, "128B", 64, 64, 72, 33).reshape(64, 8, 8)  # rows x chunks x elements
    for r in range(64):
        for c in range(8):
            assert np.array_equal(img[r, c ^ (r % 8)], m[33 + r, 72 + 8 * c:80 + 8 * c])
    img = tma_tile.expected_tile(m, "64B", 64, 32, 40, 17).reshape(64, 4, 8)
    for r in range(64):
        for c in range(4):
            assert np.array_equal(img[r, c ^ ((r >> 1) & 3)], m[17 + r, 40 + 8 * c:48 + 8 * c])
    img = tma_tile.expected_tile(m, "128B", 64, 64, 256 - 40, 128 - 20).reshape(64, 64)
    assert (img[20:] == 0).all()                                   # rows below the matrix
    assert img[0].tolist().count(0) == 24                          # 24 columns right of it


def test_tile_check_names_misplaced_elements():
    from ptxgen.harness import SampleCheckError
    want = np.arange(64, dtype=np.uint16)
    got = want.copy()
    got[[3, 5]] = got[[5, 3]]
    with pytest.raises(SampleCheckError) as ei:
        tma_tile.check_tile("t", got, want, 8)
    assert "2 of 64" in str(ei.value) and "element 3" in str(ei.value) and "expected at element 5" in str(ei.value)


# ------------------------------------------------------------------------------------------ ptxas
@pytest.mark.ptxas
@pytest.mark.parametrize("sample", [wgmma_tile, tma_tile], ids=["wgmma_tile", "tma_tile"])
def test_samples_assemble_for_sm_90a_without_spills_or_warnings(sample):
    from ptxgen.ptxas import assemble
    res = assemble(sample.build("sm_90a").emit(), "sm_90a", cache=False)
    assert res.resources
    for fn, r in res.resources.items():
        assert r.spill_stores == 0 and r.spill_loads == 0, fn
    # C7510/C7511/C7515: wgmma serialised (would make the sample a poor example, not a wrong one)
    assert not res.warnings, [str(w) for w in res.warnings]
    assert "warning" not in res.log.lower(), res.log


def test_samples_map_every_instruction_to_the_sample():
    for sample in (wgmma_tile, tma_tile):
        ptx = sample.build("sm_90a").emit()
        lines = [i + 1 for i, ln in enumerate(ptx.text.split("\n"))
                 if ln.startswith("\t") and not ln.lstrip().startswith((".reg", ".shared", ".param", "//"))]
        assert lines and all(n in ptx.line_map for n in lines)
        assert {os.path.realpath(ptx.line_map[n].file) for n in lines} == {os.path.realpath(sample.__file__)}


# ------------------------------------------------------------------------------------------ GPU
@pytest.fixture(scope="module")
def wgmma_module():
    from ptxgen.runtime import get_context, load_module
    if get_context().compute_capability[0] != 9:
        pytest.skip("wgmma needs an sm_90 GPU")
    return load_module(wgmma_tile.build("sm_90a").emit())


@pytest.fixture(scope="module")
def tma_module():
    from ptxgen.runtime import get_context, load_module
    if get_context().compute_capability < (9, 0):
        pytest.skip("TMA needs sm_90 or later")
    return load_module(tma_tile.build(get_context().arch).emit())


@pytest.mark.gpu
@pytest.mark.parametrize("n", wgmma_tile.N_VALUES)
def test_wgmma_tile_matches_numpy(wgmma_module, n):
    rng = np.random.default_rng(1000 + n)
    got, ref = wgmma_tile.multiply(wgmma_module, rng, n)
    try:
        print(wgmma_tile.check(n, got, ref))
    except Exception:
        _dump(f"wgmma_n{n}", got=got, ref=ref)
        raise


@pytest.mark.gpu
@pytest.mark.parametrize("case", tma_tile.CASES, ids=[c[0] for c in tma_tile.CASES])
def test_tma_tile_lands_where_the_swizzle_says(tma_module, case):
    swizzle, rows, cols, origins = case
    matrix = tma_tile.make_matrix(np.random.default_rng(rows * cols))
    for x, y, got, want in tma_tile.load_tiles(tma_module, matrix, swizzle, rows, cols, origins):
        try:
            print(tma_tile.check_tile(tma_tile.case_name(swizzle, rows, cols, x, y), got, want, cols))
        except Exception:
            _dump(f"tma_{swizzle}_{x}_{y}", got=got, want=want)
            raise


@pytest.mark.gpu
def test_tma_bad_box_is_refused_before_the_driver(tma_module, monkeypatch):
    from cuda.bindings import driver
    from ptxgen.errors import TensorMapError
    from ptxgen.runtime import DeviceBuffer
    from ptxgen.tma import encode_tiled
    real = driver.cuTensorMapEncodeTiled
    calls = []
    monkeypatch.setattr(driver, "cuTensorMapEncodeTiled", lambda *a: calls.append(a) or real(*a))
    matrix = tma_tile.make_matrix(np.random.default_rng(7))
    with DeviceBuffer.from_numpy(matrix) as src:
        for box, rule in (((300, 64), "box-dim"), ((64, 128), "swizzle-span"), ((64, 4), "inner-box-bytes")):
            with pytest.raises(TensorMapError) as ei:
                encode_tiled(src, box=box, swizzle="128B")
            assert ei.value.rule == rule
        assert calls == [], "the driver was called for a refused tensor map"
    # the corrected box goes through the driver once and loads as expected
    (x, y, got, want), = tma_tile.load_tiles(tma_module, matrix, "128B", 64, 64, [(8, 9)])
    assert len(calls) == 1
    tma_tile.check_tile("corrected box", got, want, 64)
