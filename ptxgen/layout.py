"""Fragment layouts of the tensor-core instructions: which thread, register and element holds which
(row, col) of each operand matrix, as data.

    fm = fragment_map("mma.m16n8k16", operand="a", dtype="bf16")
    fm.coords(lane=5, reg=2, elem=1)      # (1, 11): lane 5 holds A[1][11] in the high half of a-reg 2
    fm.owner(8, 0)                        # (0, 1, 0): A[8][0] is lane 0, register 1, low half
    print(fm.text())                      # the grid the PTX ISA draws ("T0:a0  T0:a1  T1:a0 ...")

The maps are the formulas of the PTX ISA 9.0 sections "Matrix Fragments for mma.mMnNkK", "Matrix
Fragments for wgmma.mma_async.m64nNkK" and the ldmatrix/stmatrix descriptions, written in terms of
groupID = lane >> 2 and threadID_in_group = lane % 4. Every mma.sync fragment follows one rule:

    E elements of the type fit in a register (32 / bits; .f64: 1 per register); the K extent of an
    operand is covered by blocks of 4*E columns (4 threads of a group side by side);
    A (M x K): register r holds row groupID + 8*(r % 2) (M=16) and columns (r // 2)*4E + tig*E + e
    B (K x N): register r holds rows r*4E + tig*E + e of column groupID
    C/D (M x N): element i is at row groupID + 8*(i // 2) (M=16), column 2*tig + i % 2

wgmma uses the same A rule per warp (warp w of the warpgroup owns rows 16w..16w+15) and repeats the
C/D rule every 8 columns of N. ldmatrix/stmatrix m8n8 .b16: register i is matrix i; lane l holds row
l >> 2, columns 2*(l % 4) + {0, 1} (with .trans: rows 2*(l % 4) + {0, 1} of column l >> 2), and row r
of matrix i is read from the address lane 8*i + r gives.

The quad-pair form mma.m8n8k4 with .f16 inputs (four independent 8x8x4 products per warp) and the
sm_100 ldmatrix/stmatrix .b8 shapes are not modelled.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import numpy as np

from .errors import LayoutError

__all__ = [
    "FragmentMap", "fragment_map", "mma_forms", "wgmma_forms", "SwizzleMap", "swizzle_map", "swizzle_offset",
    "SWIZZLE_SPANS",
]

# element bits of the tensor-core input types
_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "f64": 64, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8, "s4": 4,
         "u4": 4, "b1": 1, "f32": 32, "s32": 32, "b16": 16}
# register type of a fragment register holding elements of a type
_REG_TYPE = {"f16": "f16x2", "bf16": "bf16x2", "tf32": "b32", "f64": "f64", "f32": "f32", "s32": "s32"}

_SHAPE = re.compile(r"^m(\d+)n(\d+)k(\d+)$")


def _group(threads: int):
    """groupID, threadID_in_group and warp of each thread of a warp (32) or warpgroup (128)."""
    t = np.arange(threads)
    lane = t % 32
    return lane >> 2, lane % 4, t // 32


@dataclass(frozen=True, eq=False)
class FragmentMap:
    """(thread, register, element) <-> (row, col) of one operand of one instruction form.

    `table[t, r, e]` is the (row, col) that element e (low to high bits) of fragment register r of
    thread t holds; `owners[row, col]` the (thread, register, element) holding it. For ldmatrix and
    stmatrix the rows of matrix i are rows 8i..8i+7 and `address_lane(row)` names the lane whose
    address supplies that row.
    """

    instruction: str      # 'mma.m16n8k16', 'wgmma.m64n64k16', 'ldmatrix.m8n8.x4.trans'
    operand: str          # 'a', 'b', 'c', 'd' ('d' for ldmatrix, 'r' for stmatrix)
    dtype: str            # element type: 'f16', 'bf16', 'tf32', 'f32', 'e4m3', 'b16' ...
    rows: int
    cols: int
    threads: int          # 32 (warp) or 128 (warpgroup)
    regs: int             # fragment registers per thread
    elems: int            # elements per register
    reg_type: str         # '.f16x2', '.f32', '.b32' ...: what each register holds
    table: np.ndarray     # int32 [threads, regs, elems, 2]
    row_name: str = "row"
    col_name: str = "col"

    def __post_init__(self):
        self.table.setflags(write=False)
        own = np.full((self.rows, self.cols, 3), -1, dtype=np.int32)
        t, r, e = np.meshgrid(np.arange(self.threads), np.arange(self.regs), np.arange(self.elems), indexing="ij")
        rr, cc = self.table[..., 0], self.table[..., 1]
        own[rr, cc, 0], own[rr, cc, 1], own[rr, cc, 2] = t, r, e
        own.setflags(write=False)
        object.__setattr__(self, "owners", own)

    # -------------------------------------------------------------------------------- lookups
    @property
    def title(self) -> str:
        return f"{self.instruction} {self.operand.upper()} (.{self.dtype})"

    @property
    def bits(self) -> int:
        """Bits of one element."""
        return _BITS[self.dtype]

    def element_index(self, reg: int, elem: int = 0) -> int:
        """The ISA's index i of a_i / b_i / c_i / d_i for (register, element)."""
        return reg * self.elems + elem

    def coords(self, thread: int, reg: int, elem: int = 0) -> Tuple[int, int]:
        """(row, col) held by element `elem` of fragment register `reg` of `thread` (lane, or warpgroup thread)."""
        for what, v, n in (("thread", thread, self.threads), ("reg", reg, self.regs), ("elem", elem, self.elems)):
            if not isinstance(v, (int, np.integer)) or not 0 <= v < n:
                raise LayoutError(f"{self.title}: {what} must be 0..{n - 1}, not {v!r}")
        r, c = self.table[thread, reg, elem]
        return int(r), int(c)

    def owner(self, row: int, col: int) -> Tuple[int, int, int]:
        """(thread, register, element) holding (row, col)."""
        if not (isinstance(row, (int, np.integer)) and 0 <= row < self.rows
                and isinstance(col, (int, np.integer)) and 0 <= col < self.cols):
            raise LayoutError(f"{self.title}: ({row!r}, {col!r}) is outside the {self.rows}x{self.cols} matrix")
        t, r, e = self.owners[row, col]
        return int(t), int(r), int(e)

    def address_lane(self, row: int) -> int:
        """ldmatrix/stmatrix: the lane whose address operand gives the start of `row` (matrix row // 8)."""
        if not self.instruction.startswith(("ldmatrix", "stmatrix")):
            raise LayoutError(f"{self.title}: only ldmatrix/stmatrix take per-lane row addresses")
        if not 0 <= row < self.rows:
            raise LayoutError(f"{self.title}: row must be 0..{self.rows - 1}, not {row!r}")
        return int(row)

    def entries(self) -> List[Tuple[int, int, int, int, int]]:
        """Every (thread, reg, elem, row, col), thread-major: the full table as rows."""
        out = []
        for t in range(self.threads):
            for r in range(self.regs):
                for e in range(self.elems):
                    row, col = self.table[t, r, e]
                    out.append((t, r, e, int(row), int(col)))
        return out

    # -------------------------------------------------------------------------------- data movement
    def gather(self, values) -> np.ndarray:
        """The matrix [rows, cols] from per-thread fragment values [threads, regs, elems]."""
        v = np.asarray(values)
        if v.shape[:3] != (self.threads, self.regs, self.elems):
            raise LayoutError(f"{self.title}: expected values of shape {(self.threads, self.regs, self.elems)}, "
                              f"got {v.shape}")
        out = np.empty((self.rows, self.cols) + v.shape[3:], dtype=v.dtype)
        out[self.table[..., 0], self.table[..., 1]] = v
        return out

    def scatter(self, matrix) -> np.ndarray:
        """Per-thread fragment values [threads, regs, elems] from a matrix [rows, cols]."""
        m = np.asarray(matrix)
        if m.shape[:2] != (self.rows, self.cols):
            raise LayoutError(f"{self.title}: expected a {self.rows}x{self.cols} matrix, got shape {m.shape}")
        return m[self.table[..., 0], self.table[..., 1]]

    # -------------------------------------------------------------------------------- pictures
    def label(self, thread: int, reg: int, elem: int) -> str:
        """The cell text of the ISA figures: 'T5:a3' (thread 5 holds a3 = register 1, element 1)."""
        return f"T{thread}:{self.operand}{self.element_index(reg, elem)}"

    def text(self, *, cell: str = "label") -> str:
        """The map as a text grid like the PTX ISA figures.

        cell='label': 'T<thread>:<operand><i>'; 'thread': the thread only; 'reg': register.element.
        """
        if cell not in ("label", "thread", "reg"):
            raise LayoutError(f"cell must be 'label', 'thread' or 'reg', not {cell!r}")
        o = self.owners
        if cell == "label":
            cells = [[self.label(*o[r, c]) for c in range(self.cols)] for r in range(self.rows)]
        elif cell == "thread":
            cells = [[f"T{o[r, c, 0]}" for c in range(self.cols)] for r in range(self.rows)]
        else:
            cells = [[f"r{o[r, c, 1]}.{o[r, c, 2]}" for c in range(self.cols)] for r in range(self.rows)]
        w = max(max(len(x) for row in cells for x in row), len(str(self.cols - 1)))
        rw = len(str(self.rows - 1))
        lines = [self.header()]
        lines.append(" " * (rw + 1) + " ".join(str(c).rjust(w) for c in range(self.cols)) + f"   <- {self.col_name}")
        for r in range(self.rows):
            sep = r and self.instruction.startswith(("ldmatrix", "stmatrix")) and r % 8 == 0
            if sep:
                lines.append("")
            lines.append(str(r).rjust(rw) + " " + " ".join(x.rjust(w) for x in cells[r]))
        return "\n".join(lines)

    def header(self) -> str:
        per = "warp" if self.threads == 32 else "warpgroup"
        elems = f" x {self.elems} elements" if self.elems > 1 else ""
        s = (f"{self.title}: {self.rows}x{self.cols} ({self.row_name} x {self.col_name}); {self.threads} threads "
             f"of a {per} x {self.regs} {self.reg_type} registers{elems}; "
             f"cell T<thread>:{self.operand}<i> = register i // {self.elems}, element i % {self.elems}"
             if self.elems > 1 else
             f"{self.title}: {self.rows}x{self.cols} ({self.row_name} x {self.col_name}); {self.threads} threads "
             f"of a {per} x {self.regs} {self.reg_type} registers; cell T<thread>:{self.operand}<register>")
        if self.instruction.startswith(("ldmatrix", "stmatrix")):
            s += "; matrix i = rows 8i..8i+7, row r's address from lane r"
        return s

    def svg(self, *, cell_px: int = 44) -> str:
        """An SVG drawing: one cell per element, coloured by thread, 'T<thread>' over '<operand><i>'."""
        o = self.owners
        m = 28  # margin for the row/column numbers
        width, height = m + self.cols * cell_px + 2, m + self.rows * cell_px + 36
        out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
               f'font-family="monospace" font-size="{max(cell_px // 4, 7)}">',
               f'<text x="2" y="{height - 12}">{_xml(self.header()[:160])}</text>']
        for c in range(self.cols):
            out.append(f'<text x="{m + c * cell_px + cell_px // 2}" y="{m - 8}" text-anchor="middle">{c}</text>')
        for r in range(self.rows):
            y = m + r * cell_px
            out.append(f'<text x="{m - 4}" y="{y + cell_px // 2 + 4}" text-anchor="end">{r}</text>')
            for c in range(self.cols):
                t, reg, e = (int(v) for v in o[r, c])
                x = m + c * cell_px
                out.append(f'<rect x="{x}" y="{y}" width="{cell_px}" height="{cell_px}" fill="{_colour(t)}" '
                           f'stroke="#333" stroke-width="0.5"/>')
                out.append(f'<text x="{x + cell_px // 2}" y="{y + cell_px // 2 - 2}" text-anchor="middle">T{t}</text>')
                out.append(f'<text x="{x + cell_px // 2}" y="{y + cell_px // 2 + cell_px // 4}" '
                           f'text-anchor="middle">{self.operand}{self.element_index(reg, e)}</text>')
        out.append("</svg>")
        return "\n".join(out) + "\n"

    def png_bytes(self, *, cell_px: int = 40) -> bytes:
        """A PNG drawing like svg(): one cell per element coloured by thread, 'T<thread>' over
        '<operand><i>', row and column numbers, the title underneath (no plotting package needed)."""
        from .raster import Canvas
        o = self.owners
        m = 30
        width, height = m + self.cols * cell_px + 2, m + self.rows * cell_px + 24
        cv = Canvas(width, height)
        for c in range(self.cols):
            cv.text(m + c * cell_px + cell_px // 2, m - 14, str(c), anchor="middle")
        for r in range(self.rows):
            y = m + r * cell_px
            cv.text(m - 4, y + cell_px // 2 - 5, str(r), anchor="right")
            for c in range(self.cols):
                t, reg, e = (int(v) for v in o[r, c])
                x = m + c * cell_px
                cv.rect(x, y, cell_px, cell_px, _rgb(t))
                scale = 2 if Canvas.text_width(f"T{t}") < cell_px - 2 else 1
                cv.text(x + cell_px // 2, y + cell_px // 2 - 5 * scale - 1, f"T{t}", scale=scale, anchor="middle")
                label = f"{self.operand}{self.element_index(reg, e)}"
                scale = 2 if Canvas.text_width(label) < cell_px - 2 else 1
                cv.text(x + cell_px // 2, y + cell_px // 2 + 2, label, scale=scale, anchor="middle")
        cv.text(2, height - 14, self.title[:width // 8], scale=2)
        return cv.png()

    def png(self, path: str) -> None:
        """Write png_bytes() to `path` (LayoutError when the file cannot be written)."""
        _write_bytes(path, self.png_bytes())

    def __repr__(self) -> str:
        return (f"<FragmentMap {self.title} {self.rows}x{self.cols}: {self.threads} threads x {self.regs} "
                f"{self.reg_type} x {self.elems}>")


def _xml(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _colour(thread: int) -> str:
    """A light colour per lane (golden-angle hues), darker for later warps of a warpgroup."""
    hue = (thread % 32) * 137.508 % 360
    light = 82 - 8 * (thread // 32)
    return f"hsl({hue:.0f},70%,{light}%)"


def _rgb(thread: int):
    """_colour(thread) as RGB bytes."""
    from .raster import hsl
    return hsl((thread % 32) * 137.508 % 360, 0.70, (82 - 8 * (thread // 32)) / 100.0)


def _write_bytes(path: str, data: bytes) -> None:
    try:
        with open(path, "wb") as f:
            f.write(data)
    except OSError as e:
        raise LayoutError(f"cannot write {path}: {e.strerror or e}") from None


# ============================================================================================ the rules

def _per_reg(bits: int) -> int:
    """Elements of a type in one fragment register (.f64 fragments hold one element per .f64 register)."""
    return 1 if bits == 64 else 32 // bits


def _a_table(m: int, k: int, bits: int, threads: int = 32) -> np.ndarray:
    """A (M x K, row-major): the mma.sync rule; M=64 (wgmma) repeats the M=16 rule per warp."""
    e_n = _per_reg(bits)
    block = 4 * e_n
    kb = k // block
    g, tig, warp = _group(threads)
    regs = kb if m == 8 else 2 * kb
    tab = np.empty((threads, regs, e_n, 2), dtype=np.int32)
    for r in range(regs):
        for e in range(e_n):
            if m == 8:
                tab[:, r, e, 0] = g
                tab[:, r, e, 1] = r * block + tig * e_n + e
            else:
                tab[:, r, e, 0] = 16 * warp + g + 8 * (r % 2)
                tab[:, r, e, 1] = (r // 2) * block + tig * e_n + e
    return tab


def _b_table(k: int, bits: int) -> np.ndarray:
    """B (K x N, column-major, N=8): register r holds rows r*4E + tig*E + e of column groupID."""
    e_n = _per_reg(bits)
    block = 4 * e_n
    g, tig, _ = _group(32)
    regs = k // block
    tab = np.empty((32, regs, e_n, 2), dtype=np.int32)
    for r in range(regs):
        for e in range(e_n):
            tab[:, r, e, 0] = r * block + tig * e_n + e
            tab[:, r, e, 1] = g
    return tab


def _cd_table(m: int, n: int, acc: str, threads: int = 32) -> np.ndarray:
    """C/D (M x N): element i at row groupID + 8*(i//2 % 2) (+16*warp), column 8*(i//4) + 2*tig + i%2."""
    g, tig, warp = _group(threads)
    per_thread = m * n // threads
    e_n = 2 if acc == "f16" else 1
    regs = per_thread // e_n
    tab = np.empty((threads, regs, e_n, 2), dtype=np.int32)
    for i in range(per_thread):
        r, e = divmod(i, e_n)
        if m == 8:
            tab[:, r, e, 0] = g
            tab[:, r, e, 1] = 2 * tig + i
        else:
            tab[:, r, e, 0] = 16 * warp + g + 8 * ((i >> 1) & 1)
            tab[:, r, e, 1] = 8 * (i >> 2) + 2 * tig + (i & 1)
    return tab


def _matrix_table(num: int, trans: bool) -> np.ndarray:
    """ldmatrix/stmatrix .m8n8 .b16: register i = matrix i (rows 8i..8i+7)."""
    g, tig, _ = _group(32)
    tab = np.empty((32, num, 2, 2), dtype=np.int32)
    for i in range(num):
        for e in range(2):
            if trans:
                tab[:, i, e, 0] = 8 * i + 2 * tig + e
                tab[:, i, e, 1] = g
            else:
                tab[:, i, e, 0] = 8 * i + g
                tab[:, i, e, 1] = 2 * tig + e
    return tab


# ============================================================================================ the forms

def _legal_mma() -> Dict[Tuple[int, int, int], Dict[str, set]]:
    """(m, n, k) -> {'ab': input types, 'cd': accumulator types} of the legal mma.sync spellings (not mma.sp's,
    whose A is compressed, nor those with a .kind, whose FP6/FP4 elements and block scales this module does not
    map)."""
    from . import legality
    out: Dict[Tuple[int, int, int], Dict[str, set]] = {}
    for f in legality.forms(mnemonic="mma"):
        if f.rule == "mma_m8n8k4_f16" or "sparsity" in f.fields or "kind" in f.fields:
            continue
        m, n, k = (int(x) for x in _SHAPE.match(f.fields["shape"][1:]).groups())
        d = out.setdefault((m, n, k), {"ab": set(), "cd": set()})
        d["ab"].update((f.fields["atype"][1:], f.fields["btype"][1:]))
        d["cd"].update((f.fields["ctype"][1:], f.fields["dtype"][1:]))
    return out


@functools.lru_cache(maxsize=1)
def _mma_catalogue():
    return _legal_mma()


@functools.lru_cache(maxsize=1)
def _wgmma_catalogue() -> Dict[int, Dict[str, object]]:
    """k -> {'ab': input types, 'cd': accumulator types, 'n': legal N values} of wgmma.mma_async."""
    from . import legality
    out: Dict[int, Dict[str, object]] = {}
    for f in legality.forms(mnemonic="wgmma"):
        if "shape" not in f.fields:
            continue
        m, n, k = (int(x) for x in _SHAPE.match(f.fields["shape"][1:]).groups())
        d = out.setdefault(k, {"ab": set(), "cd": set(), "n": set()})
        d["ab"].update((f.fields["atype"][1:], f.fields["btype"][1:]))
        d["cd"].add(f.fields["dtype"][1:])
        d["n"].add(n)
    return out


def mma_forms() -> List[Tuple[str, str, str]]:
    """Every (instruction, operand, dtype) the oracle has for mma.sync, e.g. ('mma.m16n8k16', 'a', 'bf16')."""
    out = []
    for (m, n, k), d in sorted(_mma_catalogue().items()):
        ins = f"mma.m{m}n{n}k{k}"
        for t in sorted(d["ab"]):
            out += [(ins, "a", t), (ins, "b", t)]
        for t in sorted(d["cd"]):
            out += [(ins, "c", t), (ins, "d", t)]
    return out


def wgmma_forms(n: int = 64) -> List[Tuple[str, str, str]]:
    """(instruction, operand, dtype) of wgmma.mma_async at one N: the register A fragment and D."""
    out = []
    for k, d in sorted(_wgmma_catalogue().items()):
        if n not in d["n"]:
            continue
        ins = f"wgmma.m64n{n}k{k}"
        out += [(ins, "a", t) for t in sorted(d["ab"])]
        out += [(ins, "d", t) for t in sorted(d["cd"])]
    return out


_OPCODE_MMA = re.compile(r"^mma\.sync\.aligned\.(m\d+n\d+k\d+)\.(row|col)\.(row|col)(?:\.satfinite)?"
                         r"\.(\w+)\.(\w+)\.(\w+)\.(\w+)")
_OPCODE_WGMMA = re.compile(r"^wgmma\.mma_async(?:\.sp)?\.sync(?:\.aligned)?\.(m\d+n\d+k\d+)(?:\.satfinite)?"
                           r"\.(\w+)\.(\w+)\.(\w+)")
_OPCODE_MATRIX = re.compile(r"^(ldmatrix|stmatrix)(?:\.sync)?(?:\.aligned)?\.(m\d+n\d+)\.x(\d)(\.trans)?"
                            r"(?:\.shared(?:::cta)?)?\.(\w+)$")


def fragment_map(instruction: str, operand: Optional[str] = None, dtype: Optional[str] = None, *,
                 num: Optional[int] = None, trans: bool = False) -> FragmentMap:
    """The FragmentMap of one operand of an instruction form.

    instruction: 'mma.m16n8k16', 'wgmma.m64n128k16', 'ldmatrix.m8n8.x4', 'stmatrix.m8n8.x2' (or the
    full opcode, e.g. 'mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32', which also gives the types
    and, for ldmatrix/stmatrix, the count and .trans). operand: 'a', 'b', 'c', 'd' (mma), 'a' or 'd'
    (wgmma: A in registers, the accumulator). dtype: the operand's element type; defaults to .f16
    inputs and .f32 accumulators.
    """
    if not isinstance(instruction, str):
        raise LayoutError(f"instruction must be a string such as 'mma.m16n8k16', not {instruction!r}")
    ins = instruction.strip().lstrip(".")
    m = _OPCODE_MMA.match(ins)
    if m:
        shape, _, _, dt, at, bt, ct = m.groups()
        op = operand or "d"
        dtype = dtype or {"a": at, "b": bt, "c": ct, "d": dt}.get(op)
        return _mma_map(f"mma.{shape}", op, dtype)
    m = _OPCODE_WGMMA.match(ins)
    if m:
        shape, dt, at, _ = m.groups()
        op = operand or "d"
        dtype = dtype or {"a": at, "d": dt}.get(op)
        return _wgmma_map(f"wgmma.{shape}", op, dtype)
    m = _OPCODE_MATRIX.match(ins)
    if m:
        fam, shape, n, tr, ty = m.groups()
        return _matrix_map(fam, shape, int(n) if num is None else num, bool(tr) or trans, ty, operand)
    parts = ins.split(".")
    fam = parts[0]
    if fam == "mma" and len(parts) == 2:
        return _mma_map(ins, operand, dtype)
    if fam == "wgmma" and len(parts) == 2:
        return _wgmma_map(ins, operand, dtype)
    if fam in ("ldmatrix", "stmatrix") and len(parts) in (2, 3):
        x = num
        if len(parts) == 3:
            if not re.fullmatch(r"x\d", parts[2]):
                raise LayoutError(f"{instruction!r}: expected the matrix count as .x1, .x2 or .x4")
            x = int(parts[2][1:])
        return _matrix_map(fam, parts[1], 1 if x is None else x, trans, dtype or "b16", operand)
    raise LayoutError(f"no fragment layout for {instruction!r}; give e.g. 'mma.m16n8k16', 'wgmma.m64n64k16', "
                      "'ldmatrix.m8n8.x4', 'stmatrix.m8n8.x2' or a full mma/wgmma/ldmatrix/stmatrix opcode")


def _mnk(ins: str) -> Tuple[int, int, int]:
    m = _SHAPE.match(ins.split(".", 1)[1])
    if m is None:
        raise LayoutError(f"{ins!r}: the shape must be written mMnNkK, e.g. m16n8k16")
    return tuple(int(x) for x in m.groups())


@functools.lru_cache(maxsize=None)
def _mma_map(ins: str, operand: Optional[str], dtype: Optional[str]) -> FragmentMap:
    m, n, k = _mnk(ins)
    cat = _mma_catalogue()
    if (m, n, k) not in cat:
        if (m, n, k) == (8, 8, 4):
            raise LayoutError("mma.m8n8k4 has a fragment layout here for .f64 only (the .f16 quad-pair form "
                              "computes four independent 8x8x4 products and is not modelled)")
        raise LayoutError(f"{ins} is not an mma.sync shape; shapes: "
                          + ", ".join(f"m{a}n{b}k{c}" for a, b, c in sorted(cat)))
    op = (operand or "a").lower()
    if op not in ("a", "b", "c", "d"):
        raise LayoutError(f"mma.sync operands are 'a', 'b', 'c' and 'd', not {operand!r}")
    kind = "ab" if op in ("a", "b") else "cd"
    dt = (dtype or ("f16" if kind == "ab" else "f32")).lstrip(".")
    if dt not in cat[(m, n, k)][kind]:
        raise LayoutError(f"{ins} has no .{dt} {'input' if kind == 'ab' else 'accumulator'}; it takes "
                          + ", ".join("." + t for t in sorted(cat[(m, n, k)][kind])))
    if m == 8 and k == 4 and dt == "f16":
        raise LayoutError("the .f16 mma.m8n8k4 quad-pair form is not modelled")
    if op == "a":
        tab, rows, cols, names = _a_table(m, k, _BITS[dt]), m, k, ("m", "k")
    elif op == "b":
        tab, rows, cols, names = _b_table(k, _BITS[dt]), k, n, ("k", "n")
    else:
        tab, rows, cols, names = _cd_table(m, n, dt), m, n, ("m", "n")
    reg_type = "." + _REG_TYPE.get(dt, "b32")
    return FragmentMap(ins, op, dt, rows, cols, 32, tab.shape[1], tab.shape[2], reg_type, tab, *names)


@functools.lru_cache(maxsize=None)
def _wgmma_map(ins: str, operand: Optional[str], dtype: Optional[str]) -> FragmentMap:
    m, n, k = _mnk(ins)
    cat = _wgmma_catalogue()
    if m != 64 or k not in cat or n not in cat[k]["n"]:
        ks = ", ".join(str(x) for x in sorted(cat))
        raise LayoutError(f"{ins} is not a wgmma.mma_async shape: M is 64, K one of {ks} (by type), and N a "
                          "multiple of 8 from 8 to 256")
    op = (operand or "d").lower()
    if op not in ("a", "d"):
        raise LayoutError("wgmma.mma_async has register fragments 'a' (A in registers) and 'd' (the "
                          f"accumulator), not {operand!r}; B is always read from shared memory")
    kind = "ab" if op == "a" else "cd"
    dt = (dtype or ("f16" if kind == "ab" else "f32")).lstrip(".")
    if dt not in cat[k][kind]:
        raise LayoutError(f"{ins} has no .{dt} {'input' if kind == 'ab' else 'accumulator'}; it takes "
                          + ", ".join("." + t for t in sorted(cat[k][kind])))
    if op == "a":
        tab, rows, cols, names = _a_table(64, k, _BITS[dt], threads=128), 64, k, ("m", "k")
    else:
        tab, rows, cols, names = _cd_table(64, n, dt, threads=128), 64, n, ("m", "n")
    reg_type = "." + _REG_TYPE.get(dt, "b32")
    return FragmentMap(ins, op, dt, rows, cols, 128, tab.shape[1], tab.shape[2], reg_type, tab, *names)


@functools.lru_cache(maxsize=None)
def _matrix_map(fam: str, shape: str, num: int, trans: bool, dtype: str, operand: Optional[str]) -> FragmentMap:
    if shape != "m8n8" or dtype.lstrip(".") != "b16":
        raise LayoutError(f"{fam}.{shape} .{dtype.lstrip('.')}: only the .m8n8 .b16 forms are modelled")
    if num not in (1, 2, 4):
        raise LayoutError(f"{fam} loads .x1, .x2 or .x4 matrices, not {num!r}")
    op = operand or ("d" if fam == "ldmatrix" else "r")
    tab = _matrix_table(num, trans)
    ins = f"{fam}.m8n8.x{num}" + (".trans" if trans else "")
    return FragmentMap(ins, op, "b16", 8 * num, 8, 32, num, 2, ".b32", tab, "row", "col")


# ============================================================================================ swizzle

SWIZZLE_SPANS = {"none": 16, "32B": 32, "64B": 64, "128B": 128}


def _swizzle_name(mode: str) -> str:
    for k in SWIZZLE_SPANS:
        if isinstance(mode, str) and mode.lower() == k.lower():
            return k
    raise LayoutError(f"swizzle mode must be one of {', '.join(SWIZZLE_SPANS)}, not {mode!r}")


def swizzle_offset(address, mode: str):
    """The shared-memory byte address that logical `address` lands on under a TMA/wgmma swizzle mode.

    The 16-byte chunk bits [4, 4+B) are XORed with bits [7, 7+B) of the address: B = 3 (128B), 2 (64B),
    1 (32B), as CuTe's Swizzle<B,4,3>. Works on ints and numpy integer arrays.
    """
    span = SWIZZLE_SPANS[_swizzle_name(mode)]
    if span == 16:
        return address
    mask = span // 16 - 1
    return address ^ (((address >> 7) & mask) << 4)


@dataclass(frozen=True)
class SwizzleMap:
    """Where each 16-byte chunk of a swizzle pattern lands: `physical[line, chunk]` is the 16-byte slot
    (within its 128-byte line) that logical chunk `chunk` of 128-byte line `line` occupies."""

    mode: str
    span: int             # bytes whose chunks are permuted (the TMA inner box limit)
    period: int           # bytes after which the pattern repeats
    physical: np.ndarray  # [period // 128, 8]

    def text(self) -> str:
        lines = [f"swizzle {self.mode}: 16-byte chunk c of 128-byte line l (address l*128 + c*16) lands on "
                 f"chunk c ^ (l % {self.span // 16}); pattern repeats every {self.period} bytes",
                 "", "logical -> physical chunk:"]
        lines.append("line  " + " ".join(f"c{c}" for c in range(8)))
        for ln in range(self.physical.shape[0]):
            lines.append(f"{ln:4d}  " + " ".join(f"{p:2d}" for p in self.physical[ln]))
        lines += ["", "physical slot -> logical chunk held:"]
        lines.append("line  " + " ".join(f"s{c}" for c in range(8)))
        for ln in range(self.physical.shape[0]):
            inv = np.empty(8, dtype=int)
            inv[self.physical[ln]] = np.arange(8)
            lines.append(f"{ln:4d}  " + " ".join(f"{p:2d}" for p in inv))
        return "\n".join(lines)

    def png_bytes(self, *, cell_px: int = 48) -> bytes:
        """A PNG drawing like svg(): physical 16-byte slots per 128-byte line, each cell labelled with the
        logical chunk 'line.chunk' it holds and coloured by that chunk."""
        from .raster import Canvas
        rows = self.physical.shape[0]
        m = 30
        width, height = m + 8 * cell_px + 2, m + rows * cell_px + 24
        cv = Canvas(width, height)
        for sl in range(8):
            cv.text(m + sl * cell_px + cell_px // 2, m - 14, f"s{sl}", anchor="middle")
        for ln in range(rows):
            y = m + ln * cell_px
            cv.text(m - 4, y + cell_px // 2 - 5, str(ln), anchor="right")
            for c in range(8):
                x = m + int(self.physical[ln, c]) * cell_px
                cv.rect(x, y, cell_px, cell_px, _rgb(c * 4))
                cv.text(x + cell_px // 2, y + cell_px // 2 - 5, f"{ln}.{c}", anchor="middle")
        cv.text(2, height - 14, f"swizzle {self.mode}", scale=2)
        return cv.png()

    def png(self, path: str) -> None:
        _write_bytes(path, self.png_bytes())

    def svg(self, *, cell_px: int = 48) -> str:
        rows = self.physical.shape[0]
        m = 30
        width, height = m + 8 * cell_px + 2, m + rows * cell_px + 30
        out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
               'font-family="monospace" font-size="11">',
               f'<text x="2" y="{height - 10}">swizzle {self.mode}: physical 16-byte slots; cell = logical '
               'chunk (line.chunk)</text>']
        for s in range(8):
            out.append(f'<text x="{m + s * cell_px + cell_px // 2}" y="{m - 8}" text-anchor="middle">s{s}</text>')
        for ln in range(rows):
            y = m + ln * cell_px
            out.append(f'<text x="{m - 4}" y="{y + cell_px // 2 + 4}" text-anchor="end">{ln}</text>')
            for c in range(8):
                s = int(self.physical[ln, c])
                x = m + s * cell_px
                out.append(f'<rect x="{x}" y="{y}" width="{cell_px}" height="{cell_px}" fill="{_colour(c * 4)}" '
                           'stroke="#333" stroke-width="0.5"/>')
                out.append(f'<text x="{x + cell_px // 2}" y="{y + cell_px // 2 + 4}" '
                           f'text-anchor="middle">{ln}.{c}</text>')
        out.append("</svg>")
        return "\n".join(out) + "\n"


def swizzle_map(mode: str) -> SwizzleMap:
    """The chunk permutation of a swizzle mode ('none', '32B', '64B', '128B') over one repeat period."""
    name = _swizzle_name(mode)
    span = SWIZZLE_SPANS[name]
    period = max(span * 8, 128)
    lines = period // 128
    addr = (np.arange(lines)[:, None] * 128 + np.arange(8)[None, :] * 16)
    phys = (swizzle_offset(addr, name) % 128) // 16
    phys.setflags(write=False)
    return SwizzleMap(name, span, period, phys)
