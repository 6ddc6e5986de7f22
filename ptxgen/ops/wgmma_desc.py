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

__all__ = ["WgmmaDescriptor", "SWIZZLE_MODES", "encode_descriptor", "decode_descriptor", "SmemTile",
           "tile_descriptor"]

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


# element bytes of the wgmma input types, and the bytes of K one wgmma instruction reads per row
_ELEM_BYTES = {"f16": 2, "bf16": 2, "tf32": 4, "e4m3": 1, "e5m2": 1, "s8": 1, "u8": 1}
_K_BYTES = 32  # k16 x 2 B, k8 x 4 B, k32 x 1 B: every dense wgmma reads 32 bytes of K per row
_SPAN = {"none": 16, "32B": 32, "64B": 64, "128B": 128}


@dataclass(frozen=True)
class SmemTile:
    """A wgmma operand tile in shared memory, in the packed canonical layout ptxgen uses.

    `mn` rows (M for A, N for B) by `k` elements of `dtype`; `major` says which dimension is contiguous.

    K-major, swizzled (span S = 32/64/128 bytes): the tile is split along K into panels of S bytes;
    a panel holds its `mn` rows of S bytes one after the other (row r at r*S), the S-byte rows
    swizzled as TMA writes them (16-byte chunk c of row r lands at chunk c ^ ((r // (128/S)) % (S/16)));
    panel p starts at p*mn*S.
    K-major, no swizzle: 8x16-byte core matrices, those adjacent in K next to each other:
    core matrix (i, j) (i along MN in groups of 8 rows, j along K in 16-byte steps) at (i*(K/16) + j)*128.
    MN-major (16-bit types only), swizzled: panels of S bytes along MN; a panel holds its `k` rows of
    S bytes (row = one k); panel p starts at p*k*S.
    MN-major, no swizzle: 8 (k) x 16-byte (MN) core matrices, those adjacent in MN next to each other.
    """

    mn: int
    k: int
    dtype: str = "bf16"
    major: str = "K"
    swizzle: str = "128B"

    def check(self) -> None:
        """Raise UsageError naming the first reason wgmma cannot read this tile."""
        if self.dtype not in _ELEM_BYTES:
            raise UsageError(f"wgmma reads {', '.join(_ELEM_BYTES)} tiles from shared memory, not {self.dtype!r}")
        if self.major not in ("K", "MN"):
            raise UsageError(f"tile major must be 'K' or 'MN', not {self.major!r}")
        if self.swizzle not in _SPAN:
            raise UsageError(f"swizzle must be one of {', '.join(_SPAN)}, not {self.swizzle!r}")
        eb = _ELEM_BYTES[self.dtype]
        if self.major == "MN" and eb != 2:
            raise UsageError(f"an MN-major (transposed) tile needs a 16-bit type; wgmma reads .{self.dtype} "
                             "operands from shared memory K-major only")
        for name, v in (("mn", self.mn), ("k", self.k)):
            if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
                raise UsageError(f"tile {name} must be a positive int, not {v!r}")
        if self.mn % 8:
            raise UsageError(f"tile mn={self.mn} is not a multiple of 8: wgmma reads 8-row core matrices")
        if (self.k * eb) % _K_BYTES:
            raise UsageError(f"tile k={self.k} .{self.dtype} is {self.k * eb} bytes per row; one wgmma reads "
                             f"{_K_BYTES} bytes of K, so k must be a multiple of {_K_BYTES // eb}")
        span = _SPAN[self.swizzle]
        if self.major == "MN" and self.swizzle != "none" and (self.mn * eb) % span:
            raise UsageError(f"an MN-major tile with {self.swizzle} swizzle needs mn*{eb} bytes to be a multiple "
                             f"of the {span}-byte swizzle span, not {self.mn * eb}")
        if self.major == "MN" and self.swizzle == "none" and (self.mn * eb) % 16:
            raise UsageError("an MN-major tile needs whole 16-byte core-matrix rows along MN")

    @property
    def nbytes(self) -> int:
        return self.mn * self.k * _ELEM_BYTES[self.dtype]

    @property
    def alignment(self) -> int:
        """The shared-memory alignment the tile's base needs (the swizzle pattern repeats every 8 rows)."""
        return 8 * _SPAN[self.swizzle] if self.swizzle != "none" else 16

    def _layout(self, k_step: int):
        """(byte offset of the k_step-th 32-byte K slice from the tile base, LBO, SBO)."""
        self.check()
        eb = _ELEM_BYTES[self.dtype]
        steps = self.k * eb // _K_BYTES
        if isinstance(k_step, bool) or not isinstance(k_step, int) or not 0 <= k_step < steps:
            raise UsageError(f"k_step must be 0..{steps - 1} for k={self.k} .{self.dtype}, not {k_step!r}")
        kb = k_step * _K_BYTES
        span = _SPAN[self.swizzle]
        if self.major == "K":
            if self.swizzle == "none":
                # two 16-byte core matrices along K per instruction: LBO steps between them
                return (kb // 16) * 128, 128, (self.k * eb // 16) * 128
            # inside a swizzled panel the hardware applies the XOR to the final address, so the slice
            # is addressed by its unswizzled offset within the row
            return (kb // span) * self.mn * span + kb % span, 16, 8 * span
        if self.swizzle == "none":
            row_cores = self.mn * eb // 16
            return (kb // eb // 8) * row_cores * 128, row_cores * 128, 128
        return (kb // eb) * span, self.k * span, 8 * span  # rows of an MN-major panel are k

    def slice_offset(self, k_step: int = 0) -> int:
        """Bytes from the tile base to the start address of the `k_step`-th wgmma's slice."""
        return self._layout(k_step)[0]

    def fixed_bits(self) -> int:
        """The descriptor with start address 0: OR in (address >> 4) & 0x3FFF in the kernel."""
        _, lbo, sbo = self._layout(0)
        return WgmmaDescriptor(0, lbo, sbo, 0, self.swizzle).encode()

    def descriptor(self, base_address: int, k_step: int = 0) -> WgmmaDescriptor:
        """The descriptor of the `k_step`-th wgmma (32 bytes of K each) over this tile at `base_address`."""
        off, lbo, sbo = self._layout(k_step)
        if isinstance(base_address, bool) or not isinstance(base_address, int) or base_address % self.alignment:
            raise UsageError(f"a {self.swizzle} {self.major}-major tile must start on a {self.alignment}-byte "
                             f"boundary (base offset 0); {base_address!r} is not")
        return WgmmaDescriptor(base_address + off, lbo, sbo, 0, self.swizzle)


def tile_descriptor(base_address: int, *, mn: int, k: int, dtype: str = "bf16", major: str = "K",
                    swizzle: str = "128B", k_step: int = 0) -> int:
    """The 64-bit descriptor of one wgmma's slice of a shared-memory tile (see SmemTile)."""
    return SmemTile(mn, k, dtype, major, swizzle).descriptor(base_address, k_step).encode()
