"""tma_tile: a TMA 2-D tile load (cp.async.bulk.tensor) into swizzled shared memory, checked byte by byte.

The host encodes a tensor map (ptxgen.tma.encode_tiled) of a 128 x 256 uint16 matrix whose elements
are all different, for each swizzle mode. The kernel takes the map by value
(`.param .align 64 .b8 tmap[128]`); thread 0 initialises an mbarrier, arrives on it with
expect_tx = the box's bytes and issues the copy, completing on that mbarrier; every thread waits on
the barrier's phase 0, then the CTA copies the raw shared-memory bytes to global memory. The host
checks that each element sits where the swizzle puts it (ptxgen.tma.swizzle_byte_offset: the 16-byte
chunk index XORed with bits 7.. of the offset) and that the parts of a box outside the matrix read
as zero. The shared tile is 1024-byte aligned, so every pattern starts at its first row.

    python3 samples/tma_tile.py [--no-run] [--seed N]
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import ptxgen as pg  # noqa: E402
from ptxgen.harness import SampleCheckError, main  # noqa: E402
from ptxgen.tma import SWIZZLE_SPAN, swizzle_byte_offset  # noqa: E402

KERNEL = "tma_tile_2d_load"
ROWS, COLS = 128, 256          # the global uint16 matrix
SMEM_BYTES = 8192              # the largest box below
WAIT_LIMIT_CYCLES = 2_000_000_000
# (swizzle, box rows, box columns, [(x, y) box origins: column, row]); the inner box extent is the
# swizzle span (80 bytes, not a power of two, without swizzle); the last origins hang over the edges
CASES = [
    ("none", 32, 40, [(24, 5), (COLS - 16, ROWS - 8)]),
    ("32B", 64, 16, [(8, 3), (-8, -5)]),
    ("64B", 64, 32, [(40, 17), (COLS - 24, 100)]),
    ("128B", 64, 64, [(0, 0), (72, 33), (COLS - 40, ROWS - 20), (-8, -3)]),
]


def build(target: str = "sm_90a") -> pg.Module:
    m = pg.Module(target)
    k = m.entry(KERNEL, reqntid=128)
    tmap = k.param_bytes("tmap", 128, align=64)
    pout = k.param_ptr("out", align=16)
    px, py = k.param("x", pg.s32), k.param("y", pg.s32)
    pn = k.param("nbytes", pg.u32)
    buf = k.shared("tile", SMEM_BYTES, align=1024)
    mbar = k.shared("mbar", 8, align=8)

    gout = k.cvta(k.ld_param(pout), "global", to=True)
    x, y, nbytes = k.ld_param(px), k.ld_param(py), k.ld_param(pn)
    tid = k.tid.x
    buf_a = k.mov(buf, type=pg.u32)
    mbar_a = k.mov(mbar, type=pg.u32)
    leader = k.setp("eq", tid, 0)

    with k.if_(leader):
        k.mbarrier_init(mbar_a, 1)
        # the async proxy (TMA's complete_tx) must see the initialised barrier
        k.fence_proxy_async("shared::cta")
    k.bar_sync(0)
    with k.if_(leader):
        k.mbarrier_arrive_expect_tx(mbar_a, nbytes)
        k.cp_async_bulk_tensor(buf_a, tmap, [x, y], mbarrier=mbar_a)
    # wait for phase 0; a copy that never completes (a bad map or tx count) traps after ~1 s of
    # clock cycles instead of hanging the launch
    k.mbarrier_wait(mbar_a, parity=0, timeout_cycles=WAIT_LIMIT_CYCLES)

    with k.for_range(tid, k.shr(nbytes, 4), 128, name="q") as q:
        off = k.shl(q, 4)
        v = k.ld(k.add(buf_a, off), pg.b32, space="shared", vec=4)
        k.st(k.add(gout, k.cvt(off, pg.u64, pg.u32)), v, pg.b32)
    k.bar_sync(0)  # nobody waits on the barrier any more
    with k.if_(leader):
        k.mbarrier_inval(mbar_a)
    k.ret()
    return m


def expected_tile(matrix: np.ndarray, swizzle: str, rows: int, cols: int, x: int, y: int) -> np.ndarray:
    """The uint16 shared-memory image of the box at column x, row y: element (r, c) at byte
    swizzle_byte_offset((r * cols + c) * 2); zero where the box leaves the matrix."""
    img = np.zeros(rows * cols, dtype=np.uint16)
    r, c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    gr, gc = r + y, c + x
    inside = (gr >= 0) & (gr < matrix.shape[0]) & (gc >= 0) & (gc < matrix.shape[1])
    vals = np.where(inside, matrix[np.clip(gr, 0, matrix.shape[0] - 1), np.clip(gc, 0, matrix.shape[1] - 1)], 0)
    dest = swizzle_byte_offset((r * cols + c) * 2, swizzle) // 2
    img[dest.ravel()] = vals.ravel()
    return img


def check_tile(name: str, got: np.ndarray, want: np.ndarray, cols: int) -> str:
    """Compare shared-memory images element by element; SampleCheckError names the first misplaced ones."""
    bad = np.flatnonzero(got != want)
    if bad.size:
        notes = []
        for i in bad[:4]:
            i = int(i)
            home = np.flatnonzero(want == got[i])
            where = f", a value expected at element {int(home[0])}" if home.size == 1 else ""
            notes.append(f"element {i} (row {i // cols}, column {i % cols} of the dense box) holds "
                         f"{int(got[i])}{where}, expected {int(want[i])}")
        raise SampleCheckError(f"{name}: {bad.size} of {want.size} elements misplaced; " + "; ".join(notes))
    return f"{name}: all {want.size} elements where the swizzle puts them"


def make_matrix(rng) -> np.ndarray:
    """ROWS x COLS uint16, all values different (ROWS * COLS < 2^16), rotated by a random offset."""
    base = int(rng.integers(0, 1 << 16))
    return ((np.arange(ROWS * COLS, dtype=np.uint32) + base) % (1 << 16)).astype(np.uint16).reshape(ROWS, COLS)


def load_tiles(module, matrix: np.ndarray, swizzle: str, rows: int, cols: int, origins):
    """Encode the map of `matrix` for `swizzle` and load the box at each origin; returns
    [(x, y, shared-memory image as uint16, expected image)]."""
    from ptxgen.runtime import DeviceBuffer, synchronize
    from ptxgen.tma import encode_tiled
    f = module.function(KERNEL)
    out_list = []
    with DeviceBuffer.from_numpy(matrix) as src, DeviceBuffer.empty(SMEM_BYTES) as out:
        tmap = encode_tiled(src, box=(rows, cols), swizzle=swizzle)
        nbytes = tmap.spec.box_bytes
        if nbytes != rows * cols * 2 or nbytes > SMEM_BYTES:
            raise SampleCheckError(f"box of {nbytes} bytes does not fit the kernel's tile")
        for x, y in origins:
            out.fill_bytes(0xA5)  # poison: an unwritten element reads 0xA5A5, a value at most one place expects
            f.launch((1,), (128,), [tmap, out, np.int32(x), np.int32(y), np.uint32(nbytes)])
            synchronize()
            got = out.to_numpy(shape=(rows * cols,), dtype=np.uint16)
            out_list.append((x, y, got, expected_tile(matrix, swizzle, rows, cols, x, y)))
    return out_list


def case_name(swizzle: str, rows: int, cols: int, x: int, y: int) -> str:
    span = SWIZZLE_SPAN[swizzle]
    return (f"TMA 2-D load, swizzle {swizzle}" + (f" ({span}-byte span)" if span else "")
            + f", box {rows}x{cols} u16 at (x={x}, y={y})")


def run(module, rng):
    matrix = make_matrix(rng)
    checks = []
    for swizzle, rows, cols, origins in CASES:
        for x, y, got, want in load_tiles(module, matrix, swizzle, rows, cols, origins):
            checks.append(check_tile(case_name(swizzle, rows, cols, x, y), got, want, cols))
    return checks


if __name__ == "__main__":
    sys.exit(main("tma_tile", build, run, default_target="sm_90a"))
