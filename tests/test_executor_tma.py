"""ptxgen.executor runs TMA (cp.async.bulk.tensor) kernels: tensor maps by value, swizzle, OOB fill,
complete_tx on mbarriers, TMA stores, and a TMA -> wgmma -> C tile that matches numpy (no GPU needed)."""
from __future__ import annotations

import json
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _tma_kernels as T  # noqa: E402
from _executor_kernels import load_sample  # noqa: E402
from ptxgen.errors import DeadlockError, UsageError  # noqa: E402
from ptxgen.executor import Buffer, TensorMapArg, _encode_tensor_map, run_kernel, tensor_map  # noqa: E402
from ptxgen.parse import parse_ptx  # noqa: E402
from ptxgen.tma import TiledTensorMapSpec, decode_tensor_map, tiled_spec  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tma_encodings_h200.json")


@pytest.fixture(scope="module")
def gemm_module():
    return T.build()


@pytest.fixture(scope="module")
def copy_module():
    return T.build_copy()


# ------------------------------------------------------------------------------------------ tensor maps
def test_encoder_reproduces_the_driver_bytes():
    """The 128 bytes the executor passes are byte-identical to the CUDA 13.0 driver's encodings."""
    with open(DATA) as f:
        valid = json.load(f)["valid"]
    assert len(valid) > 40
    for name, e in valid.items():
        s = e["spec"]
        spec = TiledTensorMapSpec(s["dtype"], s["addr"], tuple(s["global_dim"]), tuple(s["global_strides"]),
                                  tuple(s["box_dim"]), tuple(s["element_strides"]), s["interleave"], s["swizzle"],
                                  s["l2_promotion"], s["oob_fill"])
        assert _encode_tensor_map(spec, s["addr"]).hex() == e["hex"], name


def test_tensor_map_arg_rebinds_the_address_and_round_trips():
    a = Buffer(np.zeros((64, 64), np.uint16))
    tm = tensor_map(a, box=(64, 64), dtype="bf16", swizzle="128B")
    a.address = 1 << 40
    dec = decode_tensor_map(tm.encode()).spec
    assert dec.global_address == 1 << 40 and dec.dtype == "bf16" and dec.swizzle == "128B"
    assert dec.global_dim == (64, 64) and dec.box_dim == (64, 64) and dec.global_strides == (128,)
    # a map made for the GPU (a spec or raw bytes) is rebound to the Buffer given
    spec = tiled_spec(ptr=0x7F0000000000, dtype="u16", shape=(64, 64), box=(8, 64), swizzle="none")
    for m in (spec, _encode_tensor_map(spec, spec.global_address)):
        arg = TensorMapArg(a, m, offset=256)
        assert decode_tensor_map(arg.encode()).spec.global_address == (1 << 40) + 256
    with pytest.raises(UsageError):
        TensorMapArg(np.zeros(4), spec)


def test_tensor_map_needs_a_128_byte_parameter(copy_module):
    src = T.copy_tensor("tma_copy_1d")
    args = T.copy_args_cpu("tma_copy_1d", (0,), src, src.copy(), np.zeros(T.COPY_SMEM, np.uint8))
    args[2] = args[0]  # a tensor map where the kernel takes a pointer
    with pytest.raises(UsageError, match="128"):
        run_kernel(copy_module, "tma_copy_1d", grid=(1,), block=(128,), args=args)


# ------------------------------------------------------------------------------------------ N-d copies
@pytest.mark.parametrize("name", list(T.COPY_CASES))
def test_tma_copy_places_every_byte(copy_module, name):
    """1D-5D loads: the shared image equals the packed, swizzled box (zero outside the tensor); the TMA
    store writes back exactly the in-bounds part."""
    for origin in T.COPY_CASES[name][4]:
        img, out = T.run_copy_cpu(copy_module, name, origin)
        want_img, want_out = T.expected_copy(name, origin)
        np.testing.assert_array_equal(img, want_img, err_msg=f"{name} at {origin}: shared image")
        np.testing.assert_array_equal(out.view(np.uint8), want_out.view(np.uint8), err_msg=f"{name} at {origin}")


def test_tma_copy_from_parsed_ptx(copy_module):
    mod = parse_ptx(copy_module.emit().text, "tma_copy.ptx")   # [map, {c}] arrives as a parsed address list
    img, out = T.run_copy_cpu(mod, "tma_copy_3d", (16, 8, 4))
    want_img, want_out = T.expected_copy("tma_copy_3d", (16, 8, 4))
    np.testing.assert_array_equal(img, want_img)
    np.testing.assert_array_equal(out, want_out)


def test_expect_tx_larger_than_the_box_deadlocks_with_the_pending_bytes(copy_module):
    with pytest.raises(DeadlockError, match="16 transaction bytes"):
        T.run_copy_cpu(copy_module, "tma_copy_2d", (8, 3), extra_tx=16)


@pytest.mark.parametrize("swizzle, rows, cols", [(c[0], c[1], c[2]) for c in load_sample("tma_tile").CASES])
def test_tma_tile_sample_in_the_executor(swizzle, rows, cols):
    """samples/tma_tile.py (checked on the GPU by its own run) gives the images it expects here too."""
    s = load_sample("tma_tile")
    mod = s.build()
    mat = s.make_matrix(np.random.default_rng(2))
    origins = next(c[3] for c in s.CASES if c[0] == swizzle)
    for x, y in origins:
        out = np.full(s.SMEM_BYTES // 2, 0xA5A5, np.uint16)
        run_kernel(mod, s.KERNEL, grid=(1,), block=(128,),
                   args=[tensor_map(Buffer(mat), box=(rows, cols), swizzle=swizzle), Buffer(out), x, y, rows * cols * 2])
        np.testing.assert_array_equal(out[:rows * cols], s.expected_tile(mat, swizzle, rows, cols, x, y))


# ------------------------------------------------------------------------------------------ TMA + wgmma
@pytest.mark.parametrize("name", list(T.CASES))
def test_tma_wgmma_tile_matches_numpy(gemm_module, name):
    n = T.CASES[name][0]
    rng = np.random.default_rng(11)
    a, b, ref = T.inputs(rng, n)
    c, stats = T.run_cpu(gemm_module, name, a, b)
    assert not np.isnan(c).any()
    # exact products, float64 accumulation rounded once to f32
    np.testing.assert_allclose(c, ref, rtol=1e-6, atol=1e-6)
    assert stats.ctas == 1


def test_tma_wgmma_tile_from_parsed_ptx(gemm_module):
    name = "tma_wgmma_n64_128B_tmastore"
    mod = parse_ptx(gemm_module.emit().text, "tma_wgmma.ptx")
    a, b, ref = T.inputs(np.random.default_rng(3), 64)
    c, _ = T.run_cpu(mod, name, a, b)
    np.testing.assert_allclose(c, ref, rtol=1e-6, atol=1e-6)


# (kernel, map swizzle): the map's inner box is the descriptors' span, so only no swizzle or a wider one is legal
WRONG_SWIZZLE = [("tma_wgmma_n64_128B_tmastore", "none"), ("tma_wgmma_n32_64B_st", "none")]
# a wider swizzle than the box row: each row takes a whole span in shared memory, so the box overruns
# the kernel's shared memory (an illegal-address fault on the H200)
OVERRUN_SWIZZLE = [("tma_wgmma_n32_64B_st", "128B"), ("tma_wgmma_n16_32B_st", "64B"),
                   ("tma_wgmma_n16_32B_st", "128B")]


@pytest.mark.parametrize("name, tma_swizzle", OVERRUN_SWIZZLE)
def test_swizzle_wider_than_the_box_row_pads_rows_and_overruns(gemm_module, name, tma_swizzle):
    from ptxgen.errors import MemoryFaultError
    n = T.CASES[name][0]
    a, b, _ = T.inputs(np.random.default_rng(5), n)
    with pytest.raises(MemoryFaultError, match=f"padded to the {tma_swizzle[:-1]}-byte swizzle span"):
        T.run_cpu(gemm_module, name, a, b, tma_swizzle=tma_swizzle)


def test_padded_rows_land_span_apart_and_zero_filled():
    """A 2-D box of 8 rows x 32 u16 (64 bytes) with 128B swizzle: row r starts at r * 128 (then the XOR),
    the other 64 bytes of each row are left as they were, and the transaction count is the dense 512
    bytes (as measured on an H200)."""
    from ptxgen.layout import swizzle_offset
    T.COPY_CASES["pad_probe"] = (np.uint16, (64, 64), (8, 32), "128B", [(0, 0)])
    try:
        mod = T.build_copy(cases=["pad_probe"])
        src = T.copy_tensor("pad_probe")
        out = np.full(src.nbytes, T.SENTINEL_BYTE, np.uint8).view(src.dtype).reshape(src.shape)
        dump = np.full(T.COPY_SMEM, T.SENTINEL_BYTE, np.uint8)
        args = T.copy_args_cpu("pad_probe", (0, 0), src, out, dump)
        args[-1] = 1024                        # dump the padded 1024 bytes; expect_tx is then too large
        from ptxgen.errors import DeadlockError
        with pytest.raises(DeadlockError):
            run_kernel(mod, "pad_probe", grid=(1,), block=(128,), args=args)
        args = T.copy_args_cpu("pad_probe", (0, 0), src, out, dump)   # expect_tx = 512: completes
        run_kernel(mod, "pad_probe", grid=(1,), block=(128,), args=args)
    finally:
        del T.COPY_CASES["pad_probe"]
    img = dump[:512].view(np.uint16)
    # the first 512 bytes hold rows 0..3, each 64 data bytes and 64 untouched (sentinel) bytes,
    # chunks XOR-swizzled
    untouched = np.full(8, T.SENTINEL_BYTE * 0x0101, np.uint16)
    for r in range(4):
        for c in range(8):                     # 16-byte chunks of the padded row
            at = swizzle_offset(r * 128 + c * 16, "128B") // 2
            want = src[r, c * 8:(c + 1) * 8] if c < 4 else untouched
            np.testing.assert_array_equal(img[at:at + 8], want, err_msg=f"row {r} chunk {c}")


def test_tensor_store_at_a_negative_coordinate_is_a_fault():
    from ptxgen.errors import MemoryFaultError
    mod = T.build_copy(cases=["tma_copy_2d"], guard_store=False)
    with pytest.raises(MemoryFaultError, match="negative coordinate"):
        T.run_copy_cpu(mod, "tma_copy_2d", (-8, -5))


@pytest.mark.parametrize("name, tma_swizzle", WRONG_SWIZZLE)
def test_wrong_tma_swizzle_gives_a_wrong_product(gemm_module, name, tma_swizzle):
    """Maps whose swizzle differs from the descriptors': the data lands where wgmma does not read it."""
    n = T.CASES[name][0]
    a, b, ref = T.inputs(np.random.default_rng(5), n)
    c, _ = T.run_cpu(gemm_module, name, a, b, tma_swizzle=tma_swizzle)
    assert not np.isnan(c).any()
    assert not np.allclose(c, ref, rtol=1e-2, atol=1e-2)
    if (name, tma_swizzle) == ("tma_wgmma_n64_128B_tmastore", "none"):
        # wgmma un-XORs K chunk c of row r as c ^ (r % 8): A row r and B row j end up permuted along K
        # alike exactly when r % 8 == j % 8, and a dot product does not see a common permutation
        good = np.isclose(c, ref, rtol=1e-5, atol=1e-5)
        r, j = np.meshgrid(np.arange(64), np.arange(n), indexing="ij")
        np.testing.assert_array_equal(good, r % 8 == j % 8)


@pytest.mark.ptxas
def test_tma_kernels_assemble_for_sm_90a(gemm_module, copy_module):
    from ptxgen.lint import lint_ptx
    from ptxgen.ptxas import assemble
    for mod in (gemm_module, copy_module):
        ptx = mod.emit()
        assert lint_ptx(ptx.text, "tma.ptx") == []
        res = assemble(ptx, "sm_90a", cache=False)
        assert res.cubin[:4] == b"\x7fELF"
        assert set(res.resources) == {f.name for f in mod.ir.functions}
        for fn, r in res.resources.items():
            assert r.spill_stores == 0 and r.spill_loads == 0, f"{fn} spills"
