"""gemm_bf16: a multistage mma.sync bf16 GEMM, C[MxN] (bf16) = A[MxK] @ B, f32 accumulation.

Two kernels share one generator:

- `gemm_bf16_nn`: B is K x N row-major (C = A @ B); B fragments come from `ldmatrix.x4.trans`.
- `gemm_bf16_nt`: B is N x K row-major (C = A @ B^T, the "weights" layout); B fragments come from
  plain `ldmatrix.x4`, exactly like A.

Structure (the Ampere recipe, all built through ptxgen's builder), for a `Tile`:

- block tile 128 x bn x bk (default 128 x 256 x 64), 8 warps as 2 (M) x 4 (N) (or 4 warps as 2 x 2),
  each warp 64 x 64 = 4 x 8 `mma.sync.m16n8k16` tiles (128 f32 accumulators per lane; 64 x 32 for
  bn=128 with 8 warps);
- a `stages`-deep ring of shared-memory tiles filled with 16-byte `cp.async.cg`, one commit group per
  k-tile, `cp.async.wait_group stages-2` and one bar.sync before a tile is read;
- every 16-byte chunk is stored XOR-swizzled inside 128-byte lines so the 8 row addresses of each
  `ldmatrix` phase hit 8 different 16-byte bank groups (see `_swz_k` / `_swz256`);
- fragments are double-buffered in registers: the ldmatrix for k-step s+1 is issued before the
  mma.sync of step s, across k-tile boundaries too; lanes address the ldmatrix matrices in the
  order that makes every mma operand a consecutive run of an ldmatrix destination;
- ragged edges: rows/columns past M, N and k-columns past K are zero-filled by `cp.async` with
  src-size 0, and the epilogue's stores are predicated;
- epilogue: `epi="smem"` (default) stages the bf16 block tile in the idle ring and writes C with
  16-byte stores of whole row segments; `epi="direct"` stores 4-byte pairs from the accumulators;
- `sync="mbar"`: instead of `cp.async.wait_group` and a bar.sync per k-tile, each stage has a "full"
  mbarrier (every thread's `cp.async.mbarrier.arrive.noinc`) and an "empty" one (every thread's
  `mbarrier.arrive` once it has read the stage), so warps wait only for their data and for the stage
  they refill (`lag` k-tiles of slack); it runs on sm_80 (mbarrier.test_wait) and sm_90 (try_wait),
  and measured 8-14 % slower on the H200 than the barrier (28 % more instructions a k-tile, and the
  waits' loops split ptxas' scheduling blocks; bench/LOG.md round 8);
- `overlap=True`: a persistent CTA issues its next tile's first stages right after the k-loop, before
  the epilogue (which then stages C in a buffer of its own after the ring), so the copies' latency
  hides behind the epilogue. Measured 0-1.7 % slower under sustained load on the H200 (it runs at a
  lower clock at the power limit; bench/LOG.md round 7), so the default tile does not use it.

`build(target, tile)`, `prepare(module, layout, tile)` and `launch(..., tile)` take the same Tile;
`Tile.check` names an option the generator cannot build. bench/gemm.py measures tiles against
cuBLAS (bench/LOG.md has the results).

Shape requirements: any M; N and K multiples of 8 (each row starts 16-byte aligned, which a 16-byte
cp.async needs); pointers 16-byte aligned. `check_shape` says which one is broken.

    python3 samples/gemm_ampere.py [--target sm_80] [--no-run]

GEMM_AMPERE_TILE=FIELDS (Tile.parse: its fields in order, colon-separated, e.g. 256:64:3:8:smem:1:16)
builds, checks and runs that Tile instead of the default.
"""
import os
import sys
from dataclasses import dataclass

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import ptxgen as pg  # noqa: E402
from ptxgen.harness import bf16_gemm_case, check_bf16_gemm, main, parse_fields  # noqa: E402

BM = 128                           # block rows; WARPS_M = 2 warp rows of 64
WARPS_M = 2
MI = 64 // 16                      # mma tiles per warp along M (each warp owns 64 rows)
GROUP_M = 8                        # block raster (Tile.group's default): 8 M-tiles share the B panels they read
MAX_SMEM = 227 * 1024              # dynamic shared memory a CTA can have on sm_90 (163 KiB on sm_80)


@dataclass(frozen=True)
class Tile:
    """One build of the two kernels.

    bn: block columns (128 or 256); bk: k-depth of a stage (32: 64-byte rows, 64: 128-byte rows);
    stages: ring depth; warps: 8 (2 x 4 warps) or 4 (2 x 2, meant to run two CTAs per SM); each warp
    owns 64 x bn/(warps/2) of the block tile, at most 64 x 64; epi: "direct" (4-byte stores from
    the accumulators) or "smem" (the block tile staged in the ring, 16-byte coalesced stores);
    min_blocks: `.minnctapersm` (2 caps an 8-warp build at 128 registers, with spills); group: the block
    rows a raster group spans (consecutive tiles walk `group` block rows down one block column before the
    next column, so a round of resident CTAs shares its panels of A and B in L2); overlap: a persistent
    CTA issues the cp.async of its next tile's first stages before the epilogue of the current one
    (epi="smem" then stages C in 64 KiB of its own after the ring instead of in the ring); sync: "bar"
    (cp.async.wait_group and a bar.sync before each k-tile is read) or "mbar" (each stage has a "full"
    mbarrier that every thread's cp.async.mbarrier.arrive completes and an "empty" one on which every
    thread arrives once it has read the stage, so warps wait only for the data they
    read and for the release of the stage they refill; measured 8-14 % slower on the H200, see
    bench/LOG.md round 8); lag (mbar only): how many k-tiles after its last read a stage is refilled
    (0: the next k-tile, as with bar; each step of lag lets warps drift one k-tile further apart and
    leaves one fewer k-tile in flight)."""
    bn: int = 128
    bk: int = 32
    stages: int = 4
    warps: int = 8
    epi: str = "direct"
    min_blocks: int = 1
    group: int = GROUP_M
    overlap: bool = False
    sync: str = "bar"
    lag: int = 0

    @classmethod
    def parse(cls, text: str) -> "Tile":
        """A Tile from its fields in order, colon-separated ("256:64:3:8:smem:1:16"); trailing fields keep
        their defaults; overlap is 0 or 1. Raises ValueError naming what is wrong."""
        return parse_fields(cls, text, "tile fields")

    @property
    def threads(self) -> int:
        return 32 * self.warps

    @property
    def wn(self) -> int:
        """Columns of a warp's piece."""
        return self.bn // (self.warps // WARPS_M)

    @property
    def stage_bytes(self) -> int:
        return (BM + self.bn) * self.bk * 2

    @property
    def bar_offset(self) -> int:
        """Where the mbarriers of sync="mbar" start: after the ring and the staged C tile."""
        ring, c_tile = self.stages * self.stage_bytes, BM * self.bn * 2
        if self.epi == "smem" and self.overlap:
            return ring + c_tile
        return max(ring, c_tile)

    @property
    def bar_bytes(self) -> int:
        """The full and empty mbarriers of sync="mbar". A stage's barriers sit at its ring offset shifted
        right (8 bytes per 2**tz of offset, tz the trailing zero bits of the stage size), so the kernel
        finds them with one shift: 8 * stages * (stage size >> tz) bytes for each kind."""
        if self.sync == "bar":
            return 0
        sb = self.stage_bytes
        odd = sb >> ((sb & -sb).bit_length() - 1)
        return 2 * 8 * self.stages * odd

    @property
    def smem_bytes(self) -> int:
        """The stage ring, the 128 x bn bf16 tile the smem epilogue stages (in the ring, or after it
        with overlap), and the mbarriers of sync="mbar"."""
        return self.bar_offset + self.bar_bytes

    @property
    def name(self) -> str:
        return (f"128x{self.bn}x{self.bk}_s{self.stages}_w{self.warps}_{self.epi}"
                + ("" if self.min_blocks == 1 else f"_b{self.min_blocks}")
                + ("" if self.group == GROUP_M else f"_g{self.group}") + ("_ov" if self.overlap else "")
                + ("" if self.sync == "bar" else f"_mbar{self.lag}"))

    def check(self) -> "Tile":
        """Raise ValueError naming what the generator cannot build."""
        ok = (self.bn in (128, 256) and self.bk in (32, 64) and isinstance(self.stages, int)
              and 2 <= self.stages <= 8 and self.warps in (4, 8) and self.wn in (32, 64)
              and self.epi in ("direct", "smem") and self.min_blocks in (1, 2)
              and isinstance(self.group, int) and not isinstance(self.group, bool) and 1 <= self.group <= 64
              and self.overlap in (False, True) and self.sync in ("bar", "mbar")
              and isinstance(self.lag, int) and not isinstance(self.lag, bool)
              and (self.lag == 0 if self.sync == "bar" else 0 <= self.lag <= self.stages - 2 and not self.overlap)
              and self.smem_bytes <= MAX_SMEM)
        if not ok:
            raise ValueError(f"tile options: bn in (128, 256), bk in (32, 64), stages in 2..8, warps in (4, 8) "
                             f"with at most 64 columns a warp, epi 'direct' or 'smem', min_blocks 1 or 2, group 1..64, "
                             f"overlap False or True, sync 'bar' (lag 0) or 'mbar' (lag 0..stages-2, no overlap), "
                             f"at most {MAX_SMEM} bytes of shared memory; "
                             f"got {self}")
        return self


# the default build (bench/LOG.md rounds 8-9): 128 x 256 x 64 block tiles in 3 stages, 144 KiB of shared
# memory and 234-238 registers, so it also runs on A100 (163 KiB). bk=64 halves the barriers, commit
# groups and copy waits per mma.sync against bk=32 (2.5-4.5 % faster under sustained load, mostly from
# a higher clock at the power limit). Raster groups of 16 block rows: a round of 128 CTAs covers
# 16 x 8 tiles (2048 rows of A, 2048 columns of B) instead of 8 x 16 (1024 and 4096), 20 % fewer DRAM reads.
TILE = Tile(bn=256, bk=64, stages=3, epi="smem", group=16)
KERNELS = {"nn": "gemm_bf16_nn", "nt": "gemm_bf16_nt"}


def check_shape(m: int, n: int, k: int) -> None:
    """Raise ValueError when the kernels cannot take this shape (see the module docstring)."""
    for name, v in (("M", m), ("N", n), ("K", k)):
        if not isinstance(v, (int, np.integer)) or v < 1 or v >= 2**31:
            raise ValueError(f"{name} must be an int in [1, 2^31), got {v!r}")
    if n % 8 or k % 8:
        raise ValueError(f"N and K must be multiples of 8 (16-byte rows for cp.async), got N={n}, K={k}")
    # the kernels address each operand with 32-bit byte offsets (one register instead of two)
    for name, elems in (("M*K", m * k), ("K*N", k * n), ("M*N", m * n)):
        if 2 * elems >= 2**32:
            raise ValueError(f"{name} = {elems} elements is too large: each operand must stay below 4 GiB")


def grid_for(m: int, n: int, tile: Tile = TILE) -> tuple:
    """One CTA per block tile."""
    return (((m + BM - 1) // BM) * ((n + tile.bn - 1) // tile.bn),)


def resident_ctas(sm_count: int, tile: Tile = TILE) -> int:
    """The CTA slots resident at once on sm_count SMs (tile.min_blocks each): launch's `ctas` for a
    persistent grid."""
    return sm_count * tile.min_blocks


def persistent_grid(m: int, n: int, ctas: int, tile: Tile = TILE) -> tuple:
    """The fewest CTAs that finish the tiles in as many rounds as `ctas` resident CTAs would (each
    CTA loops over tiles c, c + grid, ...)."""
    if isinstance(ctas, bool) or not isinstance(ctas, (int, np.integer)) or ctas < 1:
        raise ValueError(f"ctas must be a positive int (resident CTA slots), not {ctas!r}")
    tiles = grid_for(m, n, tile)[0]
    rounds = -(-tiles // int(ctas))
    return (-(-tiles // rounds),)


def _swz_k(k, o):
    """Swizzle a byte offset in a K-contiguous tile (A, and B^T): XOR the 16-byte chunk bits [4:7)
    with the 128-byte line index bits [7:10). With 64-byte rows (BK=32) two rows share a line, so
    rows r..r+7 at one logical chunk cover 4 lines x 2 halves = 8 distinct bank groups; with
    128-byte rows (BK=64) it is the usual 128-byte swizzle (chunk XOR row % 8)."""
    return k.xor(o, k.and_(k.shr(o, 3), 0x70))


def _swz256(k, o, row_shift: int = 8):
    """Swizzle a byte offset in a tile of 256-byte rows (B as K x N): XOR the chunk bits [4:7) with
    the row index bits [8:11); rows r..r+7 at one logical chunk land in 8 distinct bank groups.
    row_shift 9 does the same for 512-byte rows (the bn=256 variant)."""
    return k.xor(o, k.and_(k.shr(o, row_shift - 4), 0x70))


def _kernel(m: pg.Module, name: str, b_trans: bool, smem, tile: Tile):
    # bn=256 (each warp 64 x 64) halves the shared-memory bytes read per mma; bk=64 (128-byte rows,
    # four k-steps a tile) halves the barriers and cp.async groups per mma (see bench/LOG.md)
    BN, BK, STAGES, THREADS = tile.bn, tile.bk, tile.stages, tile.threads
    WARPS_N = tile.warps // WARPS_M
    WN = tile.wn
    NI = WN // 8
    KS = BK // 16                                         # mma k-steps per k-tile
    A_TILE = BM * BK * 2                                  # then the BK x BN (or BN x BK) B tile
    STAGE_BYTES = tile.stage_bytes
    SMEM_BYTES = STAGES * STAGE_BYTES
    kbytes = BK * 2                                       # bytes per row of a K-contiguous tile
    bn_log2 = BN.bit_length() - 1
    b_row_log2 = bn_log2 + 1                              # bytes per row of the K x N tile
    k = m.entry(name, maxntid=THREADS, minnctapersm=tile.min_blocks if tile.min_blocks > 1 else None)
    pa = k.param_ptr("a", align=16)
    pb = k.param_ptr("b", align=16)
    pc = k.param_ptr("c", align=16)
    pm, pn, pk = k.param("m", pg.u32), k.param("n", pg.u32), k.param("k", pg.u32)

    gc = k.cvta(k.ld_param(pc), "global", to=True)
    M, N, K = k.ld_param(pm), k.ld_param(pn), k.ld_param(pk)
    tid = k.tid.x
    lane = k.and_(tid, 31)
    warp = k.shr(tid, 5)
    sbase = k.mov(smem, type=pg.u32)

    # persistent when the grid is smaller than the tile count: CTA c computes tiles c, c + grid, ...
    # (launch(ctas=...) sizes such a grid; by default every CTA has one tile and the loop runs once)
    u = k.reg(pg.u32, "unit")
    k.mov(k.ctaid.x, dst=u)
    n_units = k.mul(k.shr(k.add(M, BM - 1), 7), k.shr(k.add(N, BN - 1), bn_log2), mode="lo")
    tile_top, tile_done = k.new_label("tile"), k.new_label("tiles_done")
    ov = tile.overlap
    MB = tile.sync == "mbar"
    # k-tiles in flight ahead of the one computed: a stage is refilled `lag` k-tiles after its last read
    D = STAGES - 1 - tile.lag
    if MB:
        TZ = (STAGE_BYTES & -STAGE_BYTES).bit_length() - 1
        FULL, EMPTY = tile.bar_offset, tile.bar_offset + tile.bar_bytes // 2
        with k.if_(k.setp("eq", tid, 0)):
            for s_ in range(STAGES):
                off = (s_ * STAGE_BYTES) >> (TZ - 3)
                k.mbarrier_init(pg.mem(sbase, FULL + off), THREADS)    # every thread's cp.async arrival
                k.mbarrier_init(pg.mem(sbase, EMPTY + off), THREADS)   # every thread done reading
        k.bar_sync(0)
        # the parity each thread waits for next, one bit per stage (bit = stage offset >> TZ): full
        # barriers from phase 0, empty ones from the phase before (a fresh stage is free)
        fmask = k.mov(0, type=pg.u32)
        emask = k.mov(0xFFFFFFFF, type=pg.u32)

        def bar_at(off, base):
            """The address of the barrier (FULL or EMPTY `base`) of the stage at ring offset `off`."""
            return k.add(k.add(sbase, base), k.shr(off, TZ - 3))

        def bar_wait(off, base):
            """Wait for the next phase of the stage-at-`off`'s barrier at `base`, and flip its bit."""
            mask = fmask if base == FULL else emask
            bit = k.shr(off, TZ)
            k.mbarrier_wait(bar_at(off, base), parity=k.and_(k.shr(mask, bit), 1))
            k.xor(mask, k.shl(k.mov(1, type=pg.u32), bit), dst=mask)
    if not ov:
        k.place(tile_top)
    k.bra(tile_done, guard=k.setp("ge", u, n_units))

    def raster():
        """(m0, n0) of work unit u. Grouped raster: consecutive units walk tile.group M-tiles of one
        N-column before moving on, so the B panels they read stay in L2. Called again for the
        epilogue rather than kept in registers across the main loop."""
        Mp, Np = k.ld_param(pm), k.ld_param(pn)
        pid = u
        tiles_m = k.shr(k.add(Mp, BM - 1), 7)
        tiles_n = k.shr(k.add(Np, BN - 1), bn_log2)
        group = k.mul(tiles_n, tile.group, mode="lo")
        gid = k.div(pid, group)
        first_m = k.mul(gid, tile.group, mode="lo")
        gsize = k.min(k.sub(tiles_m, first_m), tile.group)
        in_group = k.rem(pid, group)
        tile_m = k.add(first_m, k.rem(in_group, gsize))
        tile_n = k.div(in_group, gsize)
        return k.shl(tile_m, 7), k.shl(tile_n, bn_log2)

    # ---- cp.async producers: each thread copies 16-byte chunks of A and B per k-tile, a fixed
    # number of rows apart. Registers are tight, so a thread keeps one 32-bit byte offset per operand
    # and, instead of one predicate per chunk, a "k limit" (K minus its chunk's k offset: the tile's
    # first k-column must be below it) and the rows left below its first row (pass i is inside the
    # matrix when that exceeds i rows-per-pass).
    def kmajor_loader(row0, rows_lim, nrows):
        """Chunks of an nrows x BK bf16 tile (K-contiguous rows of kbytes) of a row-major matrix with
        K columns, rows from row0: thread t takes row t/cpr (+ rows_per_pass, ...), chunk t%cpr.
        Returns (byte offset, k limit, rows left, swizzled smem offset, rows per pass, passes)."""
        cpr = BK // 8
        per_pass = THREADS // cpr
        r = k.add(row0, k.shr(tid, cpr.bit_length() - 1))
        c8 = k.shl(k.and_(tid, cpr - 1), 3)                 # element column inside the k-tile
        ptr = k.shl(k.mad(r, K, c8, mode="lo"), 1)         # byte offset (check_shape keeps it < 2^32)
        klim = k.sub(K, c8, type=pg.s32)
        left = k.sub(rows_lim, r, type=pg.s32)
        so = _swz_k(k, k.add(k.mul(k.shr(tid, cpr.bit_length() - 1), kbytes, mode="lo"),
                             k.shl(k.and_(tid, cpr - 1), 4)))
        return ptr, klim, left, so, per_pass, nrows // per_pass   # pass i: + i*per_pass*kbytes = 4096*i

    def loaders():
        """The copy state of unit u's tile: A's (and B's) kmajor_loader tuples, or for B of nn
        (ptr, k limit, smem offset, rows per pass). The first entries of each depend on the tile."""
        m0, n0 = raster()
        a = kmajor_loader(m0, M, BM)
        if b_trans:
            b = kmajor_loader(n0, N, BN)
            b_soff = b[3]
        else:
            # K x N tile, BK rows x 2*BN bytes: with 16 chunks a row (BN=128) thread t takes k-row
            # t/16 (and +16), chunk t%16; with 32 (BN=256) k-row t/32 (and +8, +16, ...), chunk t%32
            cpr = BN // 8
            b_rows_per_pass = THREADS // cpr
            b_krow = k.shr(tid, cpr.bit_length() - 1)
            bcol = k.add(n0, k.shl(k.and_(tid, cpr - 1), 3))
            b_klim = k.selp(k.sub(K, b_krow, type=pg.s32), 0, k.setp("lt", bcol, N))
            b_ptr = k.shl(k.mad(b_krow, N, bcol, mode="lo"), 1)
            b_soff = _swz256(k, k.add(k.shl(b_krow, b_row_log2), k.shl(k.and_(tid, cpr - 1), 4)), b_row_log2)
            b = (b_ptr, b_klim, None, None, b_rows_per_pass, None)
        b_soff = k.add(b_soff, A_TILE)
        return a, b, b_soff

    (a_ptr, a_klim, a_left, a_soff, a_rpp, a_passes), (b_ptr, b_klim, b_left, _, b_rpp, b_passes), b_soff = loaders()

    def chunk(off, second_stride, ok, dst_off, pbase):
        """One 16-byte cp.async from byte offset `off` (+ second_stride) of the matrix at pbase."""
        if second_stride is not None:
            off = k.add(off, second_stride)
        # an out-of-range chunk reads nothing (src-size 0 zero-fills it); its address stays the
        # matrix base, a valid one
        off = k.selp(off, 0, ok)
        src = k.add(k.cvta(k.ld_param(pbase), "global", to=True), k.cvt(off, pg.u64, pg.u32))
        size = k.selp(16, 0, ok, type=pg.u32)
        k.cp_async(dst_off, src, 16, src_size=size)

    def issue_tile(kt_base, wr):
        """cp.async one k-tile (its first k-column in kt_base) into the stage at byte offset wr. With
        mbarriers a k-tile past K is not loaded (nobody would consume its phase), and the stage is
        first waited free."""
        if MB:
            skip = k.new_label("no_load")
            k.bra(skip, guard=k.setp("ge", kt_base, k.ld_param(pk)))
            bar_wait(wr, EMPTY)
        sw = k.add(sbase, wr)
        groups = [(a_ptr, a_klim, a_left, a_soff, a_rpp, a_passes, pa)]
        if b_trans:
            groups.append((b_ptr, b_klim, b_left, b_soff, b_rpp, b_passes, pb))
        for ptr, klim, left, soff, rpp, passes, pbase in groups:
            dst = k.add(sw, soff)
            kok = k.setp("lt", kt_base, klim, type=pg.s32)
            for i in range(passes):
                stride = None if i == 0 else k.mul(k.ld_param(pk), rpp * 2 * i, mode="lo")   # rpp*i rows on
                ok = k.setp("gt", left, rpp * i, type=pg.s32, bool_op="and", c=kok)
                chunk(ptr, stride, ok, pg.mem(dst, rpp * kbytes * i), pbase)
            k.add(ptr, kbytes, dst=ptr)
        if not b_trans:
            dst = k.add(sw, b_soff)
            for i in range(BK // b_rpp):
                kr = kt_base if i == 0 else k.add(kt_base, b_rpp * i)
                stride = None if i == 0 else k.mul(k.ld_param(pn), b_rpp * 2 * i, mode="lo")
                chunk(b_ptr, stride, k.setp("lt", kr, b_klim, type=pg.s32),
                      pg.mem(dst, (b_rpp << b_row_log2) * i), pb)
            k.add(b_ptr, k.mul(k.ld_param(pn), BK * 2, mode="lo"), dst=b_ptr)
        if MB:
            k.cp_async_mbarrier_arrive(bar_at(wr, FULL), noinc=True)
            k.place(skip)
        else:
            k.cp_async_commit_group()

    def prologue():
        for s_ in range(D):
            issue_tile(k.mov(s_ * BK, type=pg.u32), k.mov(s_ * STAGE_BYTES, type=pg.u32))

    if ov:
        prologue()
        k.place(tile_top)

    # ---- ldmatrix consumers: per-lane swizzled offsets inside a stage, for k-step 0
    wm = k.shr(warp, WARPS_N.bit_length() - 1)            # warp row 0..1
    wn = k.and_(warp, WARPS_N - 1)                         # warp column
    l15 = k.and_(lane, 15)
    lhi = k.shr(lane, 4)
    # A: lane l points at row wm*64 + l%16 (+16*mi), element column (l/16)*8 (+16*ks)
    a_row = k.add(k.shl(wm, 6), l15)
    a_ld = _swz_k(k, k.add(k.mul(a_row, kbytes, mode="lo"), k.shl(lhi, 4)))
    if b_trans:
        # lane l feeds matrix l/8 of an x4: n-rows 8 * (l/16) + l%8, k-chunk (l/8) % 2, so the four
        # matrices are (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15) and each
        # mma B operand is a consecutive register pair of the ldmatrix result (the order A uses,
        # rows 0-15 then k, would need a register move per B operand: ~50 % more instructions)
        b_row = k.add(k.mul(wn, WN, mode="lo"), k.add(k.shl(lhi, 3), k.and_(lane, 7)))
        b_chunk = k.and_(k.shr(lane, 3), 1)
        b_ld = k.add(_swz_k(k, k.add(k.mul(b_row, kbytes, mode="lo"), k.shl(b_chunk, 4))), A_TILE)
    else:
        # lane l points at k-row l%16 (+16*ks), n-chunk wn*WN/8 + l/16 (+2 per further 16 columns)
        chunk0 = k.add(k.mul(wn, WN // 8, mode="lo"), lhi)
        b_ld = k.add(_swz256(k, k.add(k.shl(l15, b_row_log2), k.shl(chunk0, 4)), b_row_log2), A_TILE)

    acc = [[k.regs(pg.f32, 4, name=f"acc{i}_{j}") for j in range(NI)] for i in range(MI)]
    for row in acc:
        for frag in row:
            for r in frag:
                k.mov(0.0, dst=r)

    # two register sets of fragments: even k-steps of a tile live in set 0, odd ones in set 1, so
    # the loads for one step overlap the mma.sync of the previous one without register copies
    fa = [[k.regs(pg.b32, 4, name=f"fa{s}_{i}") for i in range(MI)] for s in range(2)]
    fb = [[k.regs(pg.b32, 4, name=f"fb{s}_{j}") for j in range(NI // 2)] for s in range(2)]

    def load_frags(rd, ks):
        """ldmatrix the A and B fragments of k-step ks (0..KS-1) from the stage at byte offset rd,
        into register set ks % 2."""
        st = k.add(sbase, rd)
        fs = ks % 2
        # k-step ks is 32*ks bytes further along the row: chunk bits 1-2 (zero in the lane's own
        # chunk) take ks, and the swizzle's XOR keeps that; +16 rows keep the swizzle pattern
        a0 = k.add(st, a_ld if ks == 0 else k.xor(a_ld, 32 * ks))
        for mi in range(MI):
            k.ldmatrix(pg.mem(a0, 16 * kbytes * mi), num=4, dst=fa[fs][mi])
        bfr = []
        if b_trans:
            b0 = k.add(st, b_ld if ks == 0 else k.xor(b_ld, 32 * ks))
            for nj in range(NI // 2):
                r = k.ldmatrix(pg.mem(b0, 16 * kbytes * nj), num=4, dst=fb[fs][nj])
                # matrices: (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15)
                bfr += [(r[0], r[1]), (r[2], r[3])]
        else:
            for nj in range(NI // 2):
                # columns 16*nj of the warp: chunk bits 1-2 (zero in chunk0) take nj, which the
                # swizzle's XOR keeps; k-step ks is 16 k-rows further
                b0 = k.add(st, b_ld if nj == 0 else k.xor(b_ld, 32 * nj))
                r = k.ldmatrix(pg.mem(b0, (16 << b_row_log2) * ks), num=4, trans=True, dst=fb[fs][nj])
                # matrices: (k 0-7, n 0-7), (k 8-15, n 0-7), (k 0-7, n 8-15), (k 8-15, n 8-15)
                bfr += [(r[0], r[1]), (r[2], r[3])]
        return fa[fs], bfr

    def mmas(frags):
        afr, bfr = frags
        for mi in range(MI):
            for ni in range(NI):
                k.mma_sync("m16n8k16", acc[mi][ni], afr[mi], bfr[ni], acc[mi][ni], atype="bf16", ctype="f32")

    def stage_after(off, n):
        """Byte offset of the stage n places after the one at `off`, in a fresh register."""
        nxt = k.add(off, n * STAGE_BYTES)
        if (SMEM_BYTES & (SMEM_BYTES - 1)) == 0:
            return k.and_(nxt, SMEM_BYTES - 1)
        return k.selp(k.sub(nxt, SMEM_BYTES), nxt, k.setp("ge", nxt, SMEM_BYTES))

    # ---- prologue: STAGES-1 tiles in flight (tiles past K are zero-filled, and never read); with
    # overlap the previous tile's end issued them
    if not ov:
        prologue()
    rd = k.mov(0, type=pg.u32)
    if MB:
        bar_wait(rd, FULL)
    else:
        k.cp_async_wait_group(STAGES - 2)
        k.bar_sync(0)
    cur = load_frags(rd, 0)

    # the loop counter is the first k-column of the tile being loaded (STAGES-1 tiles ahead of the
    # one computed), so it runs ceil(K / BK) times (K >= 1); the write stage is derived from the
    # read stage. A hand-built loop rather than for_range: its bound is re-read from the parameter
    # at the bottom (a constant-bank operand for ptxas) instead of holding a register all loop long
    kt_base = k.mov(D * BK, type=pg.u32)
    top = k.label("ktile")
    for ks in range(KS):
        if MB:
            # ptxas schedules within a branch-free block, and each wait is a loop: so a step's ldmatrix
            # for the next step and its mma.sync stay together after any wait, where they interleave
            if ks == KS - 1:
                # tile kt+1 (if there is one: kt_base is tile kt+D's first k-column) must have landed
                # before its step 0 is read, alongside this tile's last step
                no_next = k.new_label("last_ktile")
                k.bra(no_next, guard=k.setp("ge", kt_base, k.add(k.ld_param(pk), (D - 1) * BK)))
                bar_wait(stage_after(rd, 1), FULL)
                k.place(no_next)
                done = bar_at(rd, EMPTY)
                k.mov(stage_after(rd, 1), dst=rd)
                nxt = load_frags(rd, 0)
            else:
                nxt = load_frags(rd, ks + 1)
            mmas(cur)
            if ks == 0:
                # the stage refilled now held tile kt-1-lag; issue_tile waits for its release
                issue_tile(kt_base, stage_after(rd, D))
            if ks == KS - 1:
                # this tile's fragments are all read: every thread releases its stage (its own
                # ldmatrix reads are what its arrival orders; one lane a warp after bar.warp.sync
                # measured the same speed, and compute-sanitizer's racecheck does not see that
                # bar.warp.sync orders the other lanes' reads before the arrival)
                k.mbarrier_arrive(done)
            cur = nxt
            continue
        if ks < KS - 1:
            nxt = load_frags(rd, ks + 1)
        else:
            # tile kt+1 must have landed (at most STAGES-2 younger groups pending) and be visible
            # to all; then its step 0 goes into set 0 while the last step of this tile computes
            k.cp_async_wait_group(STAGES - 2)
            k.bar_sync(0)
            k.mov(stage_after(rd, 1), dst=rd)
            nxt = load_frags(rd, 0)
        if ks == 0:
            # the stage written now held tile kt-1, which every warp finished reading before the
            # barrier at the end of the previous iteration
            issue_tile(kt_base, stage_after(rd, D))
        mmas(cur)
        cur = nxt
    k.add(kt_base, BK, dst=kt_base)
    k.bra(top, guard=k.setp("lt", kt_base, k.add(k.ld_param(pk), D * BK)))
    k.cp_async_wait_all()
    if ov:
        # every warp is done reading the ring: the next tile's first stages go in now, while this
        # tile's epilogue runs (C is staged after the ring)
        k.bar_sync(0)

    # ---- epilogue: lane l holds rows l/4 (+8), columns (l%4)*2 + {0,1} of each 16 x 8 tile
    m0, n0 = raster()
    M, N = k.ld_param(pm), k.ld_param(pn)
    wm, wn = k.shr(warp, WARPS_N.bit_length() - 1), k.and_(warp, WARPS_N - 1)
    if ov:
        k.add(u, k.nctaid.x, dst=u)
        with k.if_(k.setp("lt", u, n_units)):
            (a2, b2, _) = loaders()
            for old, new in zip((a_ptr, a_klim, a_left, b_ptr, b_klim, b_left), a2[:3] + b2[:3]):
                if old is not None:
                    k.mov(new, dst=old)
            prologue()
    if tile.epi == "smem":
        _epilogue_smem(k, acc, k.add(sbase, SMEM_BYTES) if ov else sbase, gc, M, N, m0, n0, tid, lane, wm, wn,
                       tile, lead_bar=not ov)
    else:
        _epilogue_direct(k, acc, gc, M, N, m0, n0, lane, wm, wn, tile)
    if ov:
        # the staged C tile is next written a whole k-loop (and its barriers) later
        k.bra(tile_top, guard=k.setp("lt", u, n_units))
    else:
        # the next tile's prologue refills the ring that slow warps may still read (the staged C tile,
        # or the last k-tile's fragments)
        k.bar_sync(0)
        k.add(u, k.nctaid.x, dst=u)
        k.bra(tile_top)
    k.place(tile_done)
    k.ret()


def _epilogue_direct(k, acc, gc, M, N, m0, n0, lane, wm, wn, tile: Tile):
    """epi="direct": 4-byte bf16 pairs straight from the accumulators, predicated per row and column."""
    WN, NI = tile.wn, tile.wn // 8
    crow0 = k.add(k.add(m0, k.shl(wm, 6)), k.shr(lane, 2))
    ccol0 = k.add(k.add(n0, k.mul(wn, WN, mode="lo")), k.shl(k.and_(lane, 3), 1))
    for mi in range(MI):
        for half in range(2):
            row = k.add(crow0, 16 * mi + 8 * half)
            row_ok = k.setp("lt", row, M)
            rbase = k.add(gc, k.mul(k.mul(row, N, mode="lo"), 2, mode="wide"))
            for ni in range(NI):
                col = k.add(ccol0, 8 * ni)
                # N is a multiple of 8, so col < N also covers col + 1
                ok = k.setp("lt", col, N, bool_op="and", c=row_ok)
                f = acc[mi][ni]
                v = k.cvt(f[2 * half + 1], pg.bf16x2, pg.f32, b=f[2 * half], rnd="rn")
                k.st(k.add(rbase, k.mul(col, 2, mode="wide")), v, pg.b32, guard=ok)


def _epilogue_smem(k, acc, sbase, gc, M, N, m0, n0, tid, lane, wm, wn, tile: Tile, lead_bar: bool = True):
    """epi="smem": the whole 128 x BN bf16 block tile goes through the (now idle) stage ring, so C is
    written with 16-byte stores of whole 2*BN-byte row segments instead of 4-byte pairs. Rows of the
    staging tile are 2*BN bytes; 16-byte chunks are XOR-swizzled with row % 8, so both the 4-byte
    stores of a warp (8 rows at one chunk) and the 16-byte loads hit distinct bank groups. Plain
    st.shared rather than stmatrix keeps the kernel valid on sm_80."""
    BN, THREADS, NI = tile.bn, tile.threads, tile.wn // 8
    row_bytes = 2 * BN
    chunks = BN // 8                                      # 16-byte chunks per row
    if lead_bar:
        k.bar_sync(0)                                     # every warp is done reading the ring
    r = k.shr(lane, 2)                                     # rows r and r + 8 of each 16 x 8 tile
    wrow = k.add(k.shl(wm, 6), r)
    wchunk = k.mul(wn, NI, mode="lo")                      # the warp's first chunk (NI of them)
    base = k.add(k.mad(wrow, row_bytes, sbase, mode="lo"), k.shl(k.and_(lane, 3), 2))
    # the swizzle depends on row % 8 = r (16 mi + 8 half keeps it); chunk wchunk + ni
    for ni in range(NI):
        off = k.shl(k.xor(k.add(wchunk, ni), r), 4)
        for mi in range(MI):
            for half in range(2):
                f = acc[mi][ni]
                v = k.cvt(f[2 * half + 1], pg.bf16x2, pg.f32, b=f[2 * half], rnd="rn")
                k.st(pg.mem(k.add(base, off), (16 * mi + 8 * half) * row_bytes), v, pg.b32, space="shared")
    k.bar_sync(0)
    # copy-out: thread t takes chunk t % chunks of rows t / chunks + i * (THREADS / chunks)
    q = k.and_(tid, chunks - 1)
    row = k.shr(tid, chunks.bit_length() - 1)
    step = THREADS // chunks
    col = k.add(n0, k.shl(q, 3))
    col_ok = k.setp("lt", col, N)                          # N is a multiple of 8: whole chunks
    grow = k.add(m0, row)
    g_addr = k.add(gc, k.mul(k.mad(grow, N, col, mode="lo"), 2, mode="wide"))
    g_step = k.mul(N, 2 * step, mode="wide")
    ld = k.add(k.mad(row, row_bytes, sbase, mode="lo"), k.shl(k.xor(q, k.and_(row, 7)), 4))
    for i in range(BM // step):
        v = k.ld(pg.mem(ld, i * step * row_bytes), pg.b32, space="shared", vec=4)   # step % 8 == 0
        ok = k.setp("lt", k.add(grow, i * step), M, bool_op="and", c=col_ok)
        k.st(g_addr, v, pg.b32, guard=ok)
        if i + 1 < BM // step:
            g_addr = k.add(g_addr, g_step)


def build(target: str = "sm_90a", tile: Tile = TILE) -> pg.Module:
    """Both kernels (KERNELS) for one Tile."""
    if not isinstance(tile, Tile):
        raise ValueError(f"tile must be a gemm_ampere.Tile, not {tile!r}")
    tile.check()
    m = pg.Module(target)
    smem = m.extern_shared("smem", align=1024)   # one dynamic window, shared by both entries' declarations
    for variant, b_trans in (("nn", False), ("nt", True)):
        _kernel(m, KERNELS[variant], b_trans=b_trans, smem=smem, tile=tile)
    return m


def prepare(module, variant: str = "nn", tile: Tile = TILE):
    """The kernel Function with its dynamic shared memory allowance raised to tile.smem_bytes; pass
    the Tile the module was built with."""
    f = module.function(KERNELS[variant])
    f.set_max_dynamic_shared(tile.smem_bytes)
    return f


def _launch_config(a, b, c, m: int, n: int, k: int, tile: Tile, ctas):
    """(grid, block, arguments, dynamic shared bytes) of one launch; see `launch`."""
    check_shape(m, n, k)
    # torch refuses __cuda_array_interface__ for bfloat16, so tensors go in as raw addresses
    ptrs = [np.uint64(x.data_ptr()) if hasattr(x, "data_ptr") else x for x in (a, b, c)]
    grid = grid_for(m, n, tile) if ctas is None else persistent_grid(m, n, ctas, tile)
    return grid, (tile.threads,), ptrs + [np.uint32(m), np.uint32(n), np.uint32(k)], tile.smem_bytes


def launch(f, a, b, c, m: int, n: int, k: int, tile: Tile = TILE, stream=None, ctas=None) -> None:
    """C = A @ B (nn) or A @ B^T (nt); a, b, c: device buffers or tensors of bf16 (row-major).
    ctas: None launches one CTA per tile; a count of resident CTA slots (SMs x CTAs per SM) launches
    the fewest persistent CTAs that finish the tiles in the same number of rounds (persistent_grid)."""
    grid, block, args, shared = _launch_config(a, b, c, m, n, k, tile, ctas)
    f.launch(grid, block, args, shared_bytes=shared, stream=stream)


def bind(f, a, b, c, m: int, n: int, k: int, tile: Tile = TILE, ctas=None):
    """The launch `launch` makes, checked and packed once: a ptxgen.runtime.BoundLaunch whose call
    (with an optional stream) issues it again on the same buffers."""
    grid, block, args, shared = _launch_config(a, b, c, m, n, k, tile, ctas)
    return f.bind(grid, block, args, shared_bytes=shared)


# sizes checked by run(): ragged edges in every dimension, a K of one partial tile, and pieces of the
# 4096^3 problem (a full 4096 x 4096 output with a short K, and a tall-skinny full-K slice)
CHECK_SIZES = [(1000, 1000, 1000), (128, 128, 32), (1, 8, 8), (130, 136, 40), (257, 520, 4104),
               (4096, 4096, 256), (512, 256, 4096)]


# under compute-sanitizer (PTXGEN_SAMPLE_QUICK=1) only the small ragged sizes: racecheck on 4096-wide
# problems takes many minutes
QUICK_SIZES = [(128, 128, 32), (1, 8, 8), (130, 136, 40), (257, 520, 264)]


def run(module, rng, tile: Tile = TILE):
    import torch
    checks = []
    sizes = QUICK_SIZES if os.environ.get("PTXGEN_SAMPLE_QUICK") == "1" else CHECK_SIZES
    for variant in ("nn", "nt"):
        f = prepare(module, variant, tile)
        for (m, n, kk) in sizes:
            a, b, ref, c = bf16_gemm_case(variant, m, n, kk, rng.integers(2**31))
            launch(f, a, b, c, m, n, kk, tile)
            torch.cuda.synchronize()
            checks.append(check_bf16_gemm(f"{variant} {m}x{n}x{kk}", c, ref, kk))
        # the same kernel as a persistent grid of 4 CTAs looping over the tiles
        m, n, kk = sizes[-1]
        a, b, ref, c = bf16_gemm_case(variant, m, n, kk, rng.integers(2**31))
        launch(f, a, b, c, m, n, kk, tile, ctas=4)
        torch.cuda.synchronize()
        checks.append(check_bf16_gemm(f"{variant} {m}x{n}x{kk}, 4 persistent CTAs", c, ref, kk))
    return checks


def _main() -> int:
    tile = TILE
    if os.environ.get("GEMM_AMPERE_TILE"):
        try:
            tile = Tile.parse(os.environ["GEMM_AMPERE_TILE"])
        except ValueError as e:
            print(f"gemm_bf16: GEMM_AMPERE_TILE: {e}", file=sys.stderr)
            return 2
        print(f"gemm_bf16: tile {tile.name} (GEMM_AMPERE_TILE)")
    return main("gemm_bf16", lambda target: build(target, tile), lambda module, rng: run(module, rng, tile))


if __name__ == "__main__":
    sys.exit(_main())
