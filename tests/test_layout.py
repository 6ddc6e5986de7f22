"""ptxgen.layout: fragment maps checked against coordinates written out from the PTX ISA figures, and the
`ptxgen layout` command."""
from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from ptxgen import layout as L
from ptxgen.cli import main as cli_main
from ptxgen.errors import LayoutError
from ptxgen.tma import swizzle_byte_offset

ALL_FORMS = L.mma_forms() + L.wgmma_forms(64) + L.wgmma_forms(8) + L.wgmma_forms(256)
MATRIX_FORMS = [(f"{fam}.m8n8.x{n}", t) for fam in ("ldmatrix", "stmatrix") for n in (1, 2, 4) for t in (False, True)]


def _every_map():
    for ins, op, dt in ALL_FORMS:
        yield f"{ins}.{op}.{dt}", L.fragment_map(ins, op, dt)
    for ins, t in MATRIX_FORMS:
        yield ins + (".trans" if t else ""), L.fragment_map(ins, trans=t)


@pytest.mark.parametrize("name,fm", list(_every_map()), ids=lambda x: x if isinstance(x, str) else "")
def test_every_map_is_a_bijection(name, fm):
    # each (thread, reg, elem) holds a distinct in-range element, and together they cover the matrix
    flat = fm.table.reshape(-1, 2)
    assert flat.shape[0] == fm.rows * fm.cols
    assert (flat >= 0).all() and (flat[:, 0] < fm.rows).all() and (flat[:, 1] < fm.cols).all()
    assert len({(int(r), int(c)) for r, c in flat}) == fm.rows * fm.cols
    assert (fm.owners >= 0).all()
    # owner(coords(x)) == x for every slot, and coords(owner(p)) == p for every element
    for t, r, e, row, col in fm.entries():
        assert fm.owner(row, col) == (t, r, e)
    rng = np.random.default_rng(0)
    for row, col in zip(rng.integers(0, fm.rows, 20), rng.integers(0, fm.cols, 20)):
        assert fm.coords(*fm.owner(int(row), int(col))) == (row, col)
    # a register holds 32 bits (or one .f64) of elements
    assert fm.elems * fm.bits in (32, 64)


# (thread, ISA index i, row, col), read off the PTX ISA figures "Matrix Fragments for mma.m16n8k16 with
# floating point type" (A: a0,a1 row groupID; a2,a3 row groupID+8; a4..a7 the same 8 columns further),
# B (b0,b1 rows 2*tig+{0,1}; b2,b3 eight rows further; column groupID) and C/D.
ISA_POINTS = {
    ("mma.m16n8k16", "a", "bf16"): [(0, 0, 0, 0), (0, 1, 0, 1), (1, 0, 0, 2), (4, 0, 1, 0), (0, 2, 8, 0),
                                    (0, 4, 0, 8), (31, 7, 15, 15), (5, 3, 9, 3), (6, 5, 1, 13)],
    ("mma.m16n8k16", "b", "f16"): [(0, 0, 0, 0), (0, 1, 1, 0), (1, 0, 2, 0), (4, 0, 0, 1), (0, 2, 8, 0),
                                   (31, 3, 15, 7)],
    ("mma.m16n8k16", "d", "f32"): [(0, 0, 0, 0), (0, 1, 0, 1), (1, 0, 0, 2), (0, 2, 8, 0), (31, 3, 15, 7),
                                   (9, 2, 10, 2)],
    ("mma.m16n8k16", "c", "f16"): [(0, 0, 0, 0), (0, 1, 0, 1), (0, 2, 8, 0), (31, 3, 15, 7)],
    # tf32 m16n8k8: a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4)
    ("mma.m16n8k8", "a", "tf32"): [(0, 0, 0, 0), (1, 0, 0, 1), (0, 1, 8, 0), (0, 2, 0, 4), (31, 3, 15, 7)],
    # s8 m16n8k32: a0..a3 row g cols 4t+0..3; a4..a7 row g+8; a8..a15 16 columns further
    ("mma.m16n8k32", "a", "s8"): [(0, 3, 0, 3), (1, 0, 0, 4), (0, 4, 8, 0), (0, 8, 0, 16), (31, 15, 15, 31)],
    ("mma.m16n8k32", "b", "s8"): [(0, 3, 3, 0), (1, 0, 4, 0), (0, 4, 16, 0), (31, 7, 31, 7)],
    # f64 m8n8k4: a0 (g, t); b0 (t, g); c0,c1 (g, 2t+{0,1})
    ("mma.m8n8k4", "a", "f64"): [(5, 0, 1, 1)],
    ("mma.m8n8k4", "b", "f64"): [(5, 0, 1, 1)],
    ("mma.m8n8k4", "d", "f64"): [(5, 1, 1, 3)],
    # wgmma D: warp w owns rows 16w..16w+15; d_i repeats the 16x8 C rule every 8 columns
    ("wgmma.m64n64k16", "d", "f32"): [(0, 0, 0, 0), (0, 4, 0, 8), (32, 0, 16, 0), (127, 31, 63, 63),
                                      (64, 2, 40, 0)],
    ("wgmma.m64n64k16", "a", "f16"): [(32, 0, 16, 0), (33, 2, 24, 2), (127, 7, 63, 15)],
}


@pytest.mark.parametrize("form", list(ISA_POINTS), ids=lambda f: ".".join(f))
def test_known_isa_coordinates(form):
    fm = L.fragment_map(*form)
    for thread, i, row, col in ISA_POINTS[form]:
        reg, elem = divmod(i, fm.elems)
        assert fm.coords(thread, reg, elem) == (row, col), (thread, i)
        assert fm.owner(row, col) == (thread, reg, elem)


def test_register_counts_match_the_isa():
    # fragment sizes from the ISA tables: A/B/C of m16n8k16 f16 are 4, 2, 4 registers; wgmma m64n64 f32 D is 32
    assert L.fragment_map("mma.m16n8k16", "a", "f16").regs == 4
    assert L.fragment_map("mma.m16n8k16", "b", "f16").regs == 2
    assert L.fragment_map("mma.m16n8k16", "d", "f32").regs == 4
    assert L.fragment_map("mma.m16n8k16", "d", "f16").regs == 2
    assert L.fragment_map("wgmma.m64n64k16", "d", "f32").regs == 32
    assert L.fragment_map("wgmma.m64n256k16", "d", "f32").regs == 128


def test_ldmatrix_maps():
    fm = L.fragment_map("ldmatrix.m8n8.x4")
    # lane l holds row l/4, columns 2*(l%4)+{0,1} of each matrix; register i is matrix i
    assert fm.coords(5, 2, 1) == (16 + 1, 3)
    assert fm.address_lane(19) == 19
    tr = L.fragment_map("ldmatrix.m8n8.x2", trans=True)
    assert tr.coords(5, 1, 1) == (8 + 3, 1)


def test_full_opcode_gives_types():
    fm = L.fragment_map("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", "a")
    assert (fm.dtype, fm.regs, fm.elems) == ("bf16", 4, 2)
    assert L.fragment_map("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16").instruction == "ldmatrix.m8n8.x4.trans"


def test_gather_scatter_round_trip():
    fm = L.fragment_map("mma.m16n8k16", "a", "f16")
    m = np.arange(fm.rows * fm.cols).reshape(fm.rows, fm.cols)
    frag = fm.scatter(m)
    assert frag.shape == (32, 4, 2)
    assert frag[5, 1, 0] == m[9, 2]
    assert (fm.gather(frag) == m).all()


@pytest.mark.parametrize("bad", [("mma.m16n8k15", "a", "f16"), ("mma.m16n8k16", "e", "f16"),
                                 ("mma.m16n8k16", "a", "tf32"), ("wgmma.m64n12k16", "d", "f32"),
                                 ("wgmma.m64n64k16", "b", "f16"), ("frobnicate.m8n8", None, None)])
def test_bad_forms_raise_layout_error(bad):
    with pytest.raises(LayoutError):
        L.fragment_map(*bad)


def test_lookups_out_of_range():
    fm = L.fragment_map("mma.m16n8k16", "a", "f16")
    with pytest.raises(LayoutError):
        fm.coords(32, 0, 0)
    with pytest.raises(LayoutError):
        fm.owner(16, 0)


@pytest.mark.parametrize("mode", ["none", "32B", "64B", "128B"])
def test_swizzle_agrees_with_tma_and_is_a_permutation(mode):
    addr = np.arange(0, 4096, 16)
    phys = L.swizzle_offset(addr, mode)
    assert (phys == swizzle_byte_offset(addr, mode)).all()
    # a permutation of 16-byte chunks within each repeat period, never moving a chunk out of its 128-byte line
    assert sorted(phys.tolist()) == addr.tolist()
    assert ((phys // 128) == (addr // 128)).all()
    sm = L.swizzle_map(mode)
    for line in range(sm.physical.shape[0]):
        assert sorted(sm.physical[line].tolist()) == list(range(8))


def test_swizzle_128b_known_chunks():
    # 128B swizzle: chunk c of line l goes to c ^ (l % 8)
    sm = L.swizzle_map("128B")
    assert sm.physical.shape == (8, 8)
    assert sm.physical[3, 1] == 2 and sm.physical[7, 0] == 7 and sm.physical[5, 5] == 0
    assert L.swizzle_map("32B").physical[1, 0] == 1 and L.swizzle_map("32B").physical[1, 2] == 3
    assert L.swizzle_map("64B").physical[3, 4] == 7


# ------------------------------------------------------------------------------------------------ CLI

def test_cli_mma_grid(capsys):
    assert cli_main(["layout", "mma", "m16n8k16", "--operand", "a", "--type", "bf16"]) == 0
    out = capsys.readouterr().out
    assert "T0:a0" in out and "T31:a7" in out
    # row 8 of A starts with thread 0's a2 (the second register, low half)
    row8 = next(line for line in out.splitlines() if line.split()[:1] == ["8"])
    assert row8.split()[1] == "T0:a2"


def test_cli_wgmma_d_has_128_threads(capsys):
    assert cli_main(["layout", "wgmma", "m64n64k16", "--operand", "d"]) == 0
    out = capsys.readouterr().out
    assert "T127:d31" in out and "T128" not in out


def test_cli_swizzle(capsys):
    assert cli_main(["layout", "swizzle", "128B"]) == 0
    out = capsys.readouterr().out
    assert "1024 bytes" in out
    assert cli_main(["layout", "swizzle", "64B"]) == 0
    assert "512 bytes" in capsys.readouterr().out


def test_cli_ldmatrix(capsys):
    assert cli_main(["layout", "ldmatrix", "m8n8", "--num", "4", "--trans"]) == 0
    assert "ldmatrix.m8n8.x4.trans" in capsys.readouterr().out


def test_cli_svg(tmp_path, capsys):
    path = tmp_path / "a.svg"
    assert cli_main(["layout", "mma", "m16n8k16", "--operand", "a", "--type", "f16", "--svg", str(path)]) == 0
    root = ET.parse(path).getroot()
    assert root.tag.endswith("svg")
    rects = [e for e in root.iter() if e.tag.endswith("rect")]
    assert len(rects) == 16 * 16
    texts = [e.text for e in root.iter() if e.tag.endswith("text")]
    assert "T31" in texts and "a7" in texts
    assert len({r.get("fill") for r in rects}) == 32  # one colour per thread
    spath = tmp_path / "s.svg"
    assert cli_main(["layout", "swizzle", "128B", "--svg", str(spath)]) == 0
    assert ET.parse(spath).getroot().tag.endswith("svg")


def test_cli_png_draws_cells_coloured_by_thread(tmp_path, capsys):
    from ptxgen.layout import _rgb, fragment_map
    from ptxgen.raster import Canvas, read_png
    path = tmp_path / "a.png"
    assert cli_main(["layout", "mma", "m16n8k16", "--operand", "a", "--type", "bf16", "--png", str(path)]) == 0
    assert f"wrote {path}" in capsys.readouterr().out
    px = read_png(path.read_bytes())
    fm = fragment_map("mma.m16n8k16", "a", "bf16")
    cell, m = 40, 30
    assert px.shape == (m + fm.rows * cell + 24, m + fm.cols * cell + 2, 3)
    for r in range(fm.rows):
        for c in range(fm.cols):
            t = int(fm.owners[r, c, 0])
            # a pixel inside the cell away from the text: the owning thread's colour
            assert tuple(px[m + r * cell + 2, m + c * cell + 2]) == _rgb(t), (r, c)
    # the label of cell (0, 0) is drawn: the text pixels there match a fresh rendering of it
    want = Canvas(cell, cell, _rgb(0))
    want.text(cell // 2, cell // 2 + 2, "a0", anchor="middle")
    got = px[m:m + cell, m:m + cell]
    rows = slice(cell // 2 + 2, cell // 2 + 12)
    assert (got[rows, 2:-2] == want.px[rows, 2:-2]).all()
    assert len({tuple(px[m + 2, m + c * cell + 2]) for c in range(fm.cols)}) > 1


def test_cli_png_of_a_swizzle_map(tmp_path):
    from ptxgen.layout import _rgb, swizzle_map
    from ptxgen.raster import read_png
    path = tmp_path / "s.png"
    assert cli_main(["layout", "swizzle", "128B", "--png", str(path)]) == 0
    px = read_png(path.read_bytes())
    sm = swizzle_map("128B")
    cell, m = 48, 30
    for ln in range(sm.physical.shape[0]):
        for c in range(8):
            x = m + int(sm.physical[ln, c]) * cell
            assert tuple(px[m + ln * cell + 2, x + 2]) == _rgb(c * 4)


def test_cli_png_unwritable_path_is_an_error(tmp_path, capsys):
    rc = cli_main(["layout", "mma", "m16n8k16", "--operand", "a", "--png", str(tmp_path / "no" / "a.png")])
    assert rc == 1
    assert "cannot write" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["layout", "mma", "m16n8k15", "--operand", "a"],
                                  ["layout", "mma", "m16n8k16", "--operand", "q"],
                                  ["layout", "swizzle", "96B"],
                                  ["layout", "wgmma", "m64n64k16", "--operand", "b"]])
def test_cli_bad_forms_exit_1(argv, capsys):
    assert cli_main(argv) == 1
    assert "ptxgen" in capsys.readouterr().err
