"""The wgmma shared-memory matrix descriptor encoder/decoder."""
from __future__ import annotations

import pytest

from ptxgen.errors import UsageError
from ptxgen.ops.wgmma_desc import WgmmaDescriptor, decode_descriptor, encode_descriptor


def test_known_values():
    # K-major 128B-swizzled operand: LBO 16 bytes, SBO 1024 bytes (one 8-row x 128-byte atom)
    assert encode_descriptor(0, 16, 1024, swizzle="128B") == 0x4000004000010000
    assert decode_descriptor(0x4000004000010000) == WgmmaDescriptor(0, 16, 1024, 0, "128B")
    # an MN-major operand as CuTe builds it: LBO 8192 bytes
    assert decode_descriptor(0x4000004002000000) == WgmmaDescriptor(0, 8192, 1024, 0, "128B")


def test_fields_land_in_their_bits():
    assert encode_descriptor(0x10, 0, 0) == 1
    assert encode_descriptor(0, 0x10, 0) == 1 << 16
    assert encode_descriptor(0, 0, 0x10) == 1 << 32
    assert encode_descriptor(0, 0, 0, base_offset=7) == 7 << 49
    for mode, code in (("none", 0), ("128B", 1), ("64B", 2), ("32B", 3)):
        assert encode_descriptor(0, 0, 0, swizzle=mode) == code << 62
    top = (1 << 18) - 16
    v = encode_descriptor(top, top, top, base_offset=5, swizzle="32B")
    assert decode_descriptor(v) == WgmmaDescriptor(top, top, top, 5, "32B")


def test_round_trip():
    for addr in (0, 1024, 0x3FFF0):
        for lbo in (16, 128, 8192):
            for sbo in (256, 1024):
                for sw in ("none", "128B", "64B", "32B"):
                    d = WgmmaDescriptor(addr, lbo, sbo, 0, sw)
                    assert WgmmaDescriptor.decode(d.encode()) == d


@pytest.mark.parametrize("kw, word", [
    (dict(start_address=8, lbo=16, sbo=16), "multiple of 16"),
    (dict(start_address=1 << 18, lbo=16, sbo=16), "start_address"),
    (dict(start_address=0, lbo=-16, sbo=16), "lbo"),
    (dict(start_address=0, lbo=16, sbo=16, base_offset=8), "base_offset"),
    (dict(start_address=0, lbo=16, sbo=16, swizzle="16B"), "swizzle"),
    (dict(start_address=0.0, lbo=16, sbo=16), "int"),
])
def test_bad_fields_raise_usage_errors_naming_the_field(kw, word):
    with pytest.raises(UsageError) as ei:
        WgmmaDescriptor(**kw).encode()
    assert word in str(ei.value)


def test_decode_rejects_non_64_bit_values():
    with pytest.raises(UsageError):
        decode_descriptor(1 << 64)
    with pytest.raises(UsageError):
        decode_descriptor(-1)


# ---------------------------------------------------------------- descriptors from declared tiles
from ptxgen.errors import UsageError as _UsageError  # noqa: E402
from ptxgen.ops.wgmma_desc import SmemTile, tile_descriptor  # noqa: E402


def test_k_major_128b_tile_gives_the_descriptor_the_gpu_sample_verified():
    # samples/wgmma_tile.py runs this tile on the H200 and checks the product against numpy
    t = SmemTile(64, 64, "bf16", "K", "128B")
    d = decode_descriptor(t.fixed_bits())
    assert (d.lbo, d.sbo, d.swizzle, d.base_offset, d.start_address) == (16, 1024, "128B", 0, 0)
    assert [t.slice_offset(s) for s in range(4)] == [0, 32, 64, 96]
    assert tile_descriptor(0x400, mn=64, k=64, k_step=1) == encode_descriptor(0x420, 16, 1024, swizzle="128B")


def test_k_major_tile_wider_than_the_swizzle_span_steps_to_the_next_panel():
    t = SmemTile(128, 128, "bf16", "K", "64B")    # 256 bytes of K per row: four 64-byte panels
    assert [t.slice_offset(s) for s in range(8)] == [0, 32, 8192, 8192 + 32, 16384, 16384 + 32, 24576, 24576 + 32]
    assert decode_descriptor(t.fixed_bits()).sbo == 8 * 64


def test_unswizzled_k_major_core_matrix_strides():
    t = SmemTile(64, 32, "bf16", "K", "none")      # 64 bytes of K: 4 core matrices per 8-row group
    d = t.descriptor(0, 1)
    assert (d.start_address, d.lbo, d.sbo) == (256, 128, 4 * 128)


def test_mn_major_128b_strides():
    t = SmemTile(128, 32, "f16", "MN", "128B")     # k rows of 128-byte MN panels
    d = t.descriptor(0x800, 1)
    assert (d.start_address, d.lbo, d.sbo) == (0x800 + 16 * 128, 32 * 128, 1024)


@pytest.mark.parametrize("kwargs, words", [
    (dict(mn=64, k=64, dtype="e4m3", major="MN"), "16-bit type"),
    (dict(mn=12, k=64), "multiple of 8"),
    (dict(mn=64, k=24), "multiple of 16"),
    (dict(mn=64, k=64, dtype="f64"), "not 'f64'"),
    (dict(mn=64, k=64, major="row"), "'K' or 'MN'"),
    (dict(mn=40, k=64, major="MN"), "swizzle span"),
])
def test_tiles_wgmma_cannot_read_are_refused_with_the_reason(kwargs, words):
    with pytest.raises(_UsageError) as ei:
        SmemTile(**kwargs).descriptor(0)
    assert words in str(ei.value)


def test_misaligned_tile_and_bad_k_step_are_refused():
    t = SmemTile(64, 64)
    with pytest.raises(_UsageError, match="1024-byte boundary"):
        t.descriptor(0x200)
    with pytest.raises(_UsageError, match="k_step must be 0..3"):
        t.descriptor(0, 4)
