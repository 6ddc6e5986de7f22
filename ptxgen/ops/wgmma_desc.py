"""The 64-bit shared-memory matrix descriptor of wgmma.mma_async (PTX ISA, "Matrix Descriptor Format").

    bits  0-13  start address >> 4        (the operand's .shared address)
    bits 16-29  leading dimension byte offset >> 4
    bits 32-45  stride dimension byte offset >> 4
    bits 49-51  matrix base offset        (0 unless a swizzled operand starts off its pattern boundary)
    bits 62-63  swizzle mode: 0 none, 1 128B, 2 64B, 3 32B

Each address and offset is encoded as (x & 0x3FFFF) >> 4, so it must be a multiple of 16 below 2**18.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import UsageError

__all__ = ["WgmmaDescriptor", "SWIZZLE_MODES", "encode_descriptor", "decode_descriptor"]

SWIZZLE_MODES = {"none": 0, "128B": 1, "64B": 2, "32B": 3}
_SWIZZLE_NAMES = {v: k for k, v in SWIZZLE_MODES.items()}
_LIMIT = 1 << 18


def _field(name: str, value) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise UsageError(f"wgmma descriptor {name} must be an int number of bytes, not {value!r}")
    if not 0 <= value < _LIMIT or value % 16:
        raise UsageError(f"wgmma descriptor {name} must be a multiple of 16 from 0 to {_LIMIT - 16}, not {value}")
    return value >> 4


@dataclass(frozen=True)
class WgmmaDescriptor:
    """The fields of a wgmma shared-memory descriptor, in bytes (start_address, lbo, sbo)."""

    start_address: int
    lbo: int
    sbo: int
    base_offset: int = 0
    swizzle: str = "none"

    def encode(self) -> int:
        """The 64-bit descriptor value (a `.u64` operand of wgmma.mma_async)."""
        value = _field("start_address", self.start_address)
        value |= _field("leading byte offset (lbo)", self.lbo) << 16
        value |= _field("stride byte offset (sbo)", self.sbo) << 32
        if not isinstance(self.base_offset, int) or isinstance(self.base_offset, bool) or \
                not 0 <= self.base_offset <= 7:
            raise UsageError(f"wgmma descriptor base_offset must be 0..7, not {self.base_offset!r}")
        value |= self.base_offset << 49
        if self.swizzle not in SWIZZLE_MODES:
            raise UsageError(f"wgmma descriptor swizzle must be one of {', '.join(SWIZZLE_MODES)}, "
                             f"not {self.swizzle!r}")
        value |= SWIZZLE_MODES[self.swizzle] << 62
        return value

    @staticmethod
    def decode(value: int) -> "WgmmaDescriptor":
        """The fields of a 64-bit descriptor value (the bits outside the fields are ignored)."""
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 1 << 64:
            raise UsageError(f"a wgmma descriptor is a 64-bit unsigned value, not {value!r}")
        mask14 = (1 << 14) - 1
        return WgmmaDescriptor(start_address=(value & mask14) << 4,
                               lbo=((value >> 16) & mask14) << 4,
                               sbo=((value >> 32) & mask14) << 4,
                               base_offset=(value >> 49) & 7,
                               swizzle=_SWIZZLE_NAMES[(value >> 62) & 3])


def encode_descriptor(start_address: int, lbo: int, sbo: int, *, base_offset: int = 0,
                      swizzle: str = "none") -> int:
    """WgmmaDescriptor(...).encode()."""
    return WgmmaDescriptor(start_address, lbo, sbo, base_offset, swizzle).encode()


def decode_descriptor(value: int) -> WgmmaDescriptor:
    """WgmmaDescriptor.decode(value)."""
    return WgmmaDescriptor.decode(value)
