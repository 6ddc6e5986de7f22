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
