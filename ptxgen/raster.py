"""A small raster canvas written as PNG with zlib only: filled cells, 1-pixel borders, and text in a
3x5 bitmap font (digits, the letters the layout pictures use, '.', '-', ' ').

Used by ptxgen.layout for `ptxgen layout ... --png FILE`, so drawing needs no plotting package.
"""
from __future__ import annotations

import colorsys
import struct
import zlib
from typing import Tuple

import numpy as np

# each glyph: 5 rows of 3 bits (MSB = left column)
_FONT = {
    "0": (7, 5, 5, 5, 7), "1": (2, 6, 2, 2, 7), "2": (7, 1, 7, 4, 7), "3": (7, 1, 7, 1, 7),
    "4": (5, 5, 7, 1, 1), "5": (7, 4, 7, 1, 7), "6": (7, 4, 7, 5, 7), "7": (7, 1, 1, 2, 2),
    "8": (7, 5, 7, 5, 7), "9": (7, 5, 7, 1, 7), "T": (7, 2, 2, 2, 2), "a": (0, 7, 1, 7, 7),
    "b": (4, 4, 7, 5, 7), "c": (0, 7, 4, 4, 7), "d": (1, 1, 7, 5, 7), "e": (7, 5, 7, 4, 7),
    "s": (0, 7, 6, 1, 7), "r": (0, 6, 4, 4, 4), "l": (4, 4, 4, 4, 6), "x": (0, 5, 2, 2, 5),
    "n": (0, 6, 5, 5, 5), "m": (0, 7, 7, 5, 5), "k": (4, 5, 6, 5, 5), "w": (0, 5, 5, 7, 7),
    "g": (7, 5, 7, 1, 6), "p": (7, 5, 7, 4, 4), "o": (0, 7, 5, 5, 7), "t": (4, 7, 4, 4, 3),
    "i": (2, 0, 2, 2, 2), "h": (4, 4, 7, 5, 5), "u": (0, 5, 5, 5, 7), "z": (0, 7, 2, 4, 7),
    "f": (3, 4, 6, 4, 4), "v": (0, 5, 5, 5, 2), "y": (5, 5, 7, 1, 6), "j": (1, 0, 1, 5, 7),
    "q": (7, 5, 7, 1, 1), "B": (6, 5, 6, 5, 6), "N": (5, 7, 7, 7, 5), "K": (5, 5, 6, 5, 5),
    "M": (5, 7, 7, 5, 5), "A": (2, 5, 7, 5, 5), "D": (6, 5, 5, 5, 6), "C": (7, 4, 4, 4, 7),
    ".": (0, 0, 0, 0, 2), "-": (0, 0, 7, 0, 0), " ": (0, 0, 0, 0, 0), ":": (0, 2, 0, 2, 0),
    "(": (1, 2, 2, 2, 1), ")": (4, 2, 2, 2, 4), ",": (0, 0, 0, 2, 4),
    "/": (1, 1, 2, 4, 4), "=": (0, 7, 0, 7, 0), "_": (0, 0, 0, 0, 7), "?": (7, 1, 3, 0, 2),
}


def hsl(h: float, s: float, l: float) -> Tuple[int, int, int]:
    """RGB bytes of an HSL colour (h in degrees, s and l in 0..1)."""
    r, g, b = colorsys.hls_to_rgb((h % 360) / 360.0, l, s)
    return int(round(r * 255)), int(round(g * 255)), int(round(b * 255))


class Canvas:
    """An RGB image; (x, y) are pixel coordinates from the top left."""

    def __init__(self, width: int, height: int, background=(255, 255, 255)):
        self.px = np.empty((height, width, 3), np.uint8)
        self.px[:] = background

    @property
    def size(self) -> Tuple[int, int]:
        return self.px.shape[1], self.px.shape[0]

    def rect(self, x: int, y: int, w: int, h: int, fill, border=(51, 51, 51)) -> None:
        self.px[y:y + h, x:x + w] = fill
        if border is not None:
            self.px[y, x:x + w] = border
            self.px[y + h - 1, x:x + w] = border
            self.px[y:y + h, x] = border
            self.px[y:y + h, x + w - 1] = border

    @staticmethod
    def text_width(s: str, scale: int = 2) -> int:
        return max(len(s) * 4 * scale - scale, 0)

    def text(self, x: int, y: int, s: str, scale: int = 2, colour=(0, 0, 0), anchor: str = "left") -> None:
        """Draw `s` with its top at y; anchor 'left', 'middle' or 'right' of x. Unknown characters
        draw as '?'."""
        w = self.text_width(s, scale)
        if anchor == "middle":
            x -= w // 2
        elif anchor == "right":
            x -= w
        H, W = self.px.shape[:2]
        for i, ch in enumerate(s):
            glyph = _FONT.get(ch, _FONT["?"])
            gx = x + i * 4 * scale
            for row, bits in enumerate(glyph):
                for col in range(3):
                    if bits >> (2 - col) & 1:
                        y0, x0 = y + row * scale, gx + col * scale
                        if 0 <= y0 < H and 0 <= x0 < W:
                            self.px[y0:y0 + scale, x0:x0 + scale] = colour

    def png(self) -> bytes:
        """The image as PNG bytes (8-bit RGB, no interlace, filter 0 on every row)."""
        h, w = self.px.shape[:2]
        raw = b"".join(b"\x00" + self.px[r].tobytes() for r in range(h))

        def chunk(kind: bytes, data: bytes) -> bytes:
            return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def read_png(data: bytes) -> np.ndarray:
    """Decode a PNG written by Canvas.png (8-bit RGB, filter 0) back to pixels, for tests."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, w, h = 8, b"", 0, 0
    while pos < len(data):
        n, = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        if zlib.crc32(kind + body) & 0xFFFFFFFF != struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0]:
            raise ValueError(f"bad CRC in the {kind!r} chunk")
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            if (depth, ctype) != (8, 2):
                raise ValueError("only 8-bit RGB is read")
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(h, 1 + 3 * w)
    if raw[:, 0].any():
        raise ValueError("only filter type 0 is read")
    return raw[:, 1:].reshape(h, w, 3).copy()
