"""gemm_hopper: a persistent, warp-specialized bf16 GEMM for sm_90a (TMA, mbarrier, wgmma, clusters).

C[M x N] (bf16) = A[M x K] @ B with f32 accumulation, A row-major, and B either N x K row-major
("nt": C = A @ B^T, both operands K-major) or K x N row-major ("nn": C = A @ B, B read MN-major by
wgmma with the transpose bit). Everything is emitted through ptxgen's builder.

Structure of one CTA (384 threads; 512 for bm=192, see below; at most one CTA per SM, persistent over output tiles; `grid_for`
launches the fewest CTAs that finish the tiles in as many rounds as one CTA per SM would):

- warpgroup 0 is the producer: it gives registers back (`setmaxnreg.dec` to PRODUCER_REGS) and one
  thread issues the TMA loads (`cp.async.bulk.tensor`, 128-byte swizzle) of a 128 x 64 A tile (two
  64-row boxes, the second left out where it lies wholly past M) and a 256 x 64 B tile per k-block
  into a ring of STAGES shared-memory stages (`k.stage_ring`: the stage
  index and the phase parity its barrier waits use); each stage has a "full"
  mbarrier (the producer's `arrive.expect_tx` of the stage's bytes, completed by the TMA's
  complete_tx) and an "empty" mbarrier (one arrival per consumer warpgroup per CTA of the cluster);
- warpgroups 1 and 2 are consumers (`setmaxnreg.inc` to CONSUMER_REGS; bm=192 and bm=256 differ,
  see below): each owns 64 rows of the 128 x 256 block tile, waits for a stage with `mbarrier.try_wait.parity`, issues four
  `wgmma.mma_async.m64n256k16` from shared-memory descriptors (fence / commit_group / wait_group),
  and releases the stage of the previous k-block once `wgmma.wait_group 1` says it has been read;
- the epilogue converts the 128 f32 accumulators of a thread to bf16 pairs and puts them with
  `stmatrix` into a per-warpgroup 64 x 128 shared buffer (16-byte chunks XOR-swizzled by row, so the
  stores are free of bank conflicts); a buffer holds half of a warpgroup's 64 x 256 piece (a pass).
  The consumers hand a full buffer to the producer warpgroup through a full/empty mbarrier pair per
  buffer: they write pass 0 at the end of a tile and keep pass 1 in 32 registers until k-block
  STORER_DEFER_KB of the next tile, so the tensor cores idle only for the stmatrix of one pass. With
  the default `epi="tma"`, the buffer is laid out as two 64 x 64 boxes in the TMA's 128-byte swizzle
  and one producer thread per buffer writes it to C with `cp.async.bulk.tensor` stores (C's tensor
  map is the third kernel parameter; the TMA clips the ragged edges). `epi="storer"` has two
  producer warps copy the buffers out with 16-byte loads and stores instead, `epi="smem"` the
  consumers themselves, and `epi="direct"` stores 4-byte pairs straight from the registers
  (bench/LOG.md has what each costs);
- tiles are visited in groups of GROUP_M block rows (the CTAs working at the same time share A and B
  panels in L2);
- `cluster=2`: two CTAs on neighbouring block rows share the B tile: each loads half of it with
  `.multicast::cluster` into both CTAs' shared memory, so a stage's full barrier expects the bytes of
  both halves, and each consumer releases a stage in both CTAs (`mapa` + remote `mbarrier.arrive`,
  with the default .release.cta semantics: a .release.cluster arrive also waits for the wgmma group
  still in flight and costs a third of the throughput).
  The CTAs meet at a cluster barrier before the first copy (barrier initialisation) and before exit
  (no CTA leaves while its peer may still signal its barriers). Without a producer warpgroup
  (`producer=0`) the pair shares A instead (`Config.shares_a`): the two CTAs take neighbouring block
  columns of one block row, so both walk the same row kinds and k-blocks, and each loads every other
  64-row box of A, multicast to both.

`Config` selects the variant: B layout, cluster size, number of stages, wgmma groups in flight
before a stage is released (lag), raster group, the K depth of a stage (bk 64 with 128-byte
swizzle, or bk 32 with 64-byte swizzle and twice the stages), N of the block tile, the epilogue,
and M of the block tile: bm=256 gives each consumer two m64 blocks (2 x 96 accumulators a thread
with bn=192, 240 registers after setmaxnreg), so a 256 x 192 tile takes a fifth fewer operand
bytes per FLOP into the SM than 128 x 256, at the cost of a 3-stage ring and an epilogue that writes
both passes at the tile's end. bm=192 gets the same bytes per FLOP from three consumer warpgroups
of one m64 x 256 block each (512 threads, 160 registers a consumer; each block is two
m64n128k16 a k-step, since ptxas checks every instruction against the 128-register launch budget);
its rows are split at a kernel parameter m_split: 192-row tiles before it, 128-row tiles from it on (in
which consumer 2 only keeps the ring's count and A comes as two of its three 64-row TMA boxes), and
`split_for` picks the split that keeps the busiest CTA's rows lowest, e.g. 4096 = 16 x 192 + 8 x 128
with 128 CTAs of 2 + 1 tiles. A bm=192 consumer's 160 registers cannot hold a pass beside its 128
accumulators, so the held pass is written inside the next tile's first k-block, after that k-block's
first m64n128k16 part and before the second part's accumulators come to life (`split_hold`; hold=0
writes both passes at the tile's end). epi="ring" (bm=192) puts the epilogue buffers in the stage of
the tile's last k-block, which the storers hand back to the producer after the last pass, so the ring
has four stages instead of three (the 128-row tiles otherwise have only two k-blocks of load lead).
`mix=1` interleaves the 128-row tiles with the 192-row ones over the work order instead of leaving them
for the last round. `producer=0` (bm=192, `_kernel_inline`) drops the producer warpgroup: 384 threads
of three consumer warpgroups at 168 registers, so each k-step is one whole m64n256k16 per warpgroup;
one thread of consumer 2 issues the loads between its wgmma (waiting for each stage's release by all
three), and each warpgroup TMA-stores its own two passes (held: the second during the next tile's
first k-block, which then runs as two m64n128k16 halves); with bn=192 it makes 192 x 192 tiles of
m64n192k16, written in one 64 x 192 pass per warpgroup (`lwarp=1` adds a warp whose lane 0 issues
the loads, 416 threads at 128 registers, so no consumer waits for the ring's releases), and with
`sk=1` it runs stream-K: whole rounds of tiles, then the k-blocks of the remaining tiles shared evenly between the CTAs (`sk_plan`;
with fewer tiles than CTAs, as for a small M x N over a long K, all of them, over the grid `sk_grid`
picks), each CTA walking its range from the end; a tile split between CTAs is summed through a
workspace (`workspace_bytes`): each CTA whose range stops inside a tile stores its f32 partial
there as the first item of its range and releases a flag, and the CTA holding the tile's last
k-block (its last item) acquires the flags of the CTAs before it, adds their partials and writes C.
The 128 x 256 kernel runs the same stream-K (`sk=1` with hold=0; `_SkWalk` is shared): its loading
thread, its consumer warpgroups and its TMA storer threads each walk the CTA's items, the storers
skipping a split tile's head, whose partial (64 x 256 f32 per warpgroup) goes to the workspace.
With `sk=2` (that kernel only) every part of a split tile parks its partial and, after its walk, sums
its 1/P of the tile's P partials and stores that slice of C itself (`_stream_k_reduce`). With `sk=3`
(that kernel, shapes with at most as many tiles as CTAs) a tile's P parts are launched as one cluster of
P CTAs: each parks its partial in its own stages once the walk is done, the cluster meets at its
barrier, and each part sums its slice from the P CTAs' shared memory through `mapa` and
`ld.shared::cluster` (`_stream_k_cluster_sum`), so the partials never leave the cluster (no workspace).
In 128 x 128 tiles the three stream-K kernels leave out the rows past M: a consumer warpgroup whose
64 rows all lie past M runs its k-blocks without wgmma, and a warp whose 16 rows lie past M stores,
parks, reads and sums no partial; on small grids `choose` runs them in DEEP_STAGES stages.
bench/gemm.py and bench/gemm_sustained.py time them against cuBLAS; bench/LOG.md says what each one
measured.

Shape requirements: K and N multiples of 8 (TMA needs 16-byte row strides), M >= 1; ragged edges are
zero-filled by TMA and masked in the epilogue. `check_shape` names a broken one.

    python3 samples/gemm_hopper.py [--no-run]
"""
import functools
import os
import sys
from dataclasses import dataclass

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import ptxgen as pg  # noqa: E402
from ptxgen.harness import bf16_gemm_case, check_bf16_gemm, main, parse_fields  # noqa: E402
from ptxgen.ops.wgmma_desc import SmemTile  # noqa: E402

BM, BN, BK = 128, 256, 64
CONSUMERS = 2                        # consumer warpgroups; each owns BM / CONSUMERS = 64 rows
WG_M = BM // CONSUMERS
THREADS = 128 * (1 + CONSUMERS)
STAGES = 4
K_STEP = 16                          # K of one wgmma.m64n256k16
GROUP_M = 8                          # block rows (cluster rows with cluster=2) visited together
# 384 threads x 168 registers fill the 64K register file at launch; setmaxnreg then moves registers
# from the producer warpgroup to the consumers: 128 x 40 + 256 x 232 = 64512 <= 65536
LAUNCH_REGS, PRODUCER_REGS, CONSUMER_REGS = 168, 40, 232
# bm=256 (two m64 blocks per consumer, 2 x bn / 2 accumulators a thread): 128 x 24 + 256 x 240 = 64512
PRODUCER_REGS_M256, CONSUMER_REGS_M256 = 24, 240
# bm=192 (three consumer warpgroups of one m64 block each, 512 threads): 128 registers a thread at
# launch, then 128 x 24 + 384 x 160 = 64512
LAUNCH_REGS_M192, PRODUCER_REGS_M192, CONSUMER_REGS_M192 = 128, 24, 160
# Config.lwarp: 416 threads = 13 warps. An SM's registers are four 16K-register files, one per sub-partition,
# and warp w lives on sub-partition w % 4, so one of them holds 4 warps: 16384 / (4 x 32) = 128 a thread
# (65536 // 416 = 157 would pass ptxas, but the launch cannot place the CTA)
LAUNCH_REGS_LWARP = 128
WAIT_LIMIT_CYCLES = 4_000_000_000    # a wait that never completes traps (about 2 s) instead of hanging
# Config.trace: the u64 %globaltimer stamps each CTA writes (ns), in this order, then one per tile
# (stream-K: per work item, when its last k-block is done); after these TRACE_SLOTS words, as many again
# with the SM's %clock64 read at the same points (cycles: one CTA's stamps on one SM count the same
# clock, so their differences are SM cycles). "first_issue": the loading thread has issued its first stage's
# TMA loads; "walk_done": the consumers past their last tile (before sk=2 sums its parked tiles);
# "consumers_done": the consumers' end
TRACE_FIELDS = ("start", "sm", "setup", "first_issue", "first_stage", "walk_done", "consumers_done", "c_written")
TRACE_TILES = 64                     # tiles of a CTA that get a stamp (later ones are not recorded)
TRACE_SLOTS = len(TRACE_FIELDS) + TRACE_TILES

PANEL_N = 64                         # nn: N columns per 128-byte swizzled panel (one TMA box)
EPI_MODES = ("smem", "smem_defer", "storer", "tma", "ring", "direct")
TMA_BOX = 64                         # epi="tma": C goes out in 64 x 64 boxes (128-byte swizzled rows)
HANDOFF = ("storer", "tma", "ring")  # epilogues whose copy-out runs in the producer warpgroup
TMA_OUT = ("tma", "ring")            # epilogues that write C with TMA stores (C's tensor map)
STORER_DEFER_KB = 3                  # epi="tma"/"storer": the k-block of the next tile that writes the last pass
DEFAULT_EPI = "tma"                  # Config.epi's default; its kernel names carry no epilogue suffix
EPI_COLS = 128                       # smem epilogue: columns of C per pass (a 64 x 128 bf16 buffer per warpgroup)
# Config.l2: the L2 eviction priority (createpolicy) given to the loads of A, of B and to the stores of C;
# "auto" for A: evict_first where a raster group's tiles all run in one round, no hint elsewhere
L2_HINTS = {"none": (None, None, None), "c": (None, None, "evict_first"),
            "bc": (None, "evict_last", "evict_first"), "abc": ("evict_first", "evict_last", "evict_first"),
            "an": ("evict_normal", None, "evict_first"), "auto": ("auto", None, "evict_first")}
DEFAULT_L2 = "auto"                  # Config.l2's default; its kernel names carry no l2 suffix


@dataclass(frozen=True)
class Config:
    layout: str = "nt"      # "nt": B is N x K; "nn": B is K x N
    cluster: int = 1        # 1, or 2 CTAs sharing an operand through TMA multicast: B (neighbouring
                            # block rows), or with producer=0 A (neighbouring block columns, `shares_a`)
    stages: int = STAGES
    lag: int = 1            # wgmma groups left in flight before a stage is released (0 or 1)
    group: int = GROUP_M    # block rows (cluster rows) of the tile raster
    bk: int = BK            # K of a stage: 64 (128-byte rows, 128B swizzle) or 32 (64-byte rows, 64B swizzle)
    bn: int = BN            # N of the block tile = N of each consumer's wgmma (a multiple of 64, <= 256;
                            # epi="tma" in 128-row tiles: 256, or 128 or 192 for one pass a tile,
                            # `narrow`, `tile_width`)
    epi: str = "tma"        # "tma": the consumers only stmatrix, one producer thread per buffer
                            # writes it with TMA stores while the next tile runs (C's tensor map
                            # is the third kernel parameter); "storer": the same hand-off, two
                            # producer warps copy the buffers out with 16-byte stores;
                            # "smem": stmatrix into a swizzled buffer, the consumers copy it out
                            # with 16-byte coalesced stores; "smem_defer": the same, the last pass
                            # copied out during the next tile's first k-block;
                            # "direct": 4-byte stores from the registers; "ring" (bm=192): as
                            # "tma", but a tile's buffers are the stage of its last k-block, which
                            # the storers hand back to the producer once both passes are read, so
                            # the 48 KiB of buffers become a fourth stage
    bm: int = BM            # M of the block tile: 128 (one m64 block per consumer), 256 (two, with
                            # bn <= 192 so 2 x bn / 2 accumulators fit in a thread), or 192 (three
                            # consumer warpgroups of one m64 x 256 block, 160 registers each); the
                            # last two: epi="tma" and cluster 1 only, and fewer operand bytes per
                            # FLOP (448 rows per 49,152 MACs per k instead of 384 per 32,768)
    hold: int = 1           # 1: where the registers allow (bm=128, and bm=192 with two passes a tile),
                            # the last epilogue pass of a tile waits in 32 registers and is written
                            # during the next tile's first k-blocks (see `held`); 0: every pass at
                            # the tile's end
    lead: int = 0           # bm=192: at most this many stages loaded ahead of the consumers in a
                            # 192-row tile (StageRing.wait_released); 0: as many as the ring has.
                            # 128-row tiles always use the whole ring
    mix: int = 0            # bm=192: 0 visits the 192-row tiles first and the 128-row tiles after
                            # them; 1 interleaves the two kinds evenly over the unit order
                            # (`_unit_kind`), so the CTAs of a round are not all in 128-row tiles,
                            # which draw more operand bytes per clock
    l2: str = "auto"        # L2 eviction hints (L2_HINTS, `.L2::cache_hint` with a createpolicy):
                            # "auto" (the default): C's TMA stores evict_first (C is not read again),
                            # and A's loads evict_first where a round's rows of A are not read again
                            # (a raster group's tiles all run in one round: group * tiles_n <= CTAs,
                            # decided at run time), A without a hint elsewhere; "none": no hints;
                            # "c": only C's; "bc": C's and B's loads evict_last (every round of tiles
                            # reads all of B again); "abc": also A's loads evict_first everywhere;
                            # "an": C's and A's loads evict_normal. C's hint needs a TMA-store
                            # epilogue (epi "tma" or "ring"); the others write C without it
    producer: int = 1       # 1: a producer warpgroup issues the loads (and, epi "tma", the stores);
                            # 0 (bm=192, epi "tma" only): no producer warpgroup: 384 threads of three
                            # consumer warpgroups at 168 registers, so each issues the whole
                            # m64n256k16; one consumer thread issues the loads between its wgmma
                            # and each warpgroup TMA-stores its own passes (`_kernel_inline`)
    sk: int = 0             # 1 (hold=0, mix=0; producer=0 with bn=192, or the 128 x 256 kernel with
                            # epi="tma"): stream-K. Whole rounds of tiles, then the k-blocks of the
                            # remaining tiles shared evenly between the CTAs (`sk_plan`; every tile
                            # when there are fewer tiles than CTAs); a tile split between CTAs is
                            # summed through a workspace (`workspace_bytes`); producer=0 puts every
                            # row in 192-row tiles. 2 (the 128 x 256 kernel): the tile's owner does
                            # not add the partials one after another; every part parks its partial
                            # and after its walk sums 1/P of the tile's P partials and stores that
                            # slice of C itself (`_stream_k_reduce`). 3 (the same kernel): a tile's
                            # parts are one cluster (launched with as many CTAs a cluster as a tile has
                            # parts, `sk_plan`), which park their partials in their own shared memory
                            # and sum their slices from the cluster's through distributed shared memory
                            # (`_stream_k_cluster_sum`): no workspace, no L2 round trip
    lwarp: int = 0          # 1 (producer=0, bn=192): the loads come from a warp of their own beside the three
                            # consumer warpgroups (416 threads at 128 registers; m64n192k16 fits) instead
                            # of one consumer thread, so no warpgroup waits for the ring's releases
    kdir: int = 0           # 1 (producer=1, cluster 1): each CTA walks K upwards in one tile and downwards in
                            # the next, so a tile starts on the k-blocks its round's tiles loaded last, which
                            # may still be in L2 (a raster group's next round reads the same rows of A)
    trace: int = 0          # 1 (the 128 x 256 kernel: bm=128, producer=1, cluster 1, epi "tma"): a last kernel
                            # parameter points at TRACE_SLOTS stamps per CTA of %globaltimer and as many of
                            # %clock64 (`trace_bytes`, `read_trace`): when the CTA started, ran on which SM, when
                            # its consumers had their registers, when its first stage's loads were issued and
                            # when they had arrived, when each tile's epilogue
                            # was handed off (stream-K, sk 1 or 2: each work item's last k-block done), when the
                            # consumers left their last tile and when they finished (apart only with sk=2, which
                            # sums its parked tiles in between) and when the last TMA store had written C
    pdl: int = 0            # 1: launched with programmatic dependent launch (ptxgen.runtime's pdl=True): once the
                            # barriers are set up every thread signals `griddepcontrol.launch_dependents` and
                            # waits (`griddepcontrol.wait`) for the kernel before it in the stream to finish, before
                            # any global memory access, so a launch's setup overlaps its predecessor's last
                            # CTAs (not with trace=1, whose first stamps come before the wait)
    serp: int = 0           # 1: the raster walks the block columns of every other group of block rows from the
                            # last to the first, so a round that spans two groups, or the first round of a
                            # group, meets the columns of B the round before it read last (bench/l2_model.py)

    @classmethod
    def parse(cls, text: str) -> "Config":
        """A Config from its fields in order, colon-separated ("nt:1:3:1:8:64:256:tma:192"); trailing
        fields keep their defaults. Raises ValueError naming what is wrong."""
        return parse_fields(cls, text)

    @property
    def name(self) -> str:
        return (f"gemm_hopper_{self.layout}_c{self.cluster}_s{self.stages}_l{self.lag}_g{self.group}_k{self.bk}"
                + ("" if self.bn == BN else f"_n{self.bn}") + ("" if self.bm == BM else f"_m{self.bm}")
                + ("" if self.epi == DEFAULT_EPI else "_" + self.epi)
                + ("_h0" if self.can_hold and not self.hold else "") + (f"_lead{self.lead}" if self.lead else "")
                + ("_mix" if self.mix else "") + ("" if self.l2 == DEFAULT_L2 else f"_l2{self.l2}")
                + ("" if self.producer else "_p0") + ("_sk" if self.sk else "") + (str(self.sk) if self.sk >= 2 else "")
                + ("_lw" if self.lwarp else "")
                + ("_kr" if self.kdir else "") + ("_tr" if self.trace else "") + ("_pdl" if self.pdl else "")
                + ("_sp" if self.serp else ""))

    @property
    def nsplit(self) -> int:
        """wgmma instructions across the tile's N per m64 block and k-step: bm=192 issues two
        m64n128k16 (ptxas checks each instruction against the launch budget of 128 registers a
        thread, and m64n256k16 needs 154 even where setmaxnreg gives the consumers 160); without a
        producer warpgroup (producer=0) the launch budget is 168 and the whole instruction fits."""
        return 2 if self.bm == 192 and self.producer else 1

    @property
    def shape(self) -> str:
        return f"m64n{self.bn // self.nsplit}k{K_STEP}"

    def check(self) -> "Config":
        """Raise ValueError naming the first field the kernel generator cannot build."""
        if self.layout not in ("nt", "nn"):
            raise ValueError(f"layout must be 'nt' or 'nn', not {self.layout!r}")
        if self.cluster not in (1, 2):
            raise ValueError(f"cluster must be 1 or 2, not {self.cluster!r}")
        if self.bk not in (32, 64):
            raise ValueError(f"bk must be 32 or 64, not {self.bk!r}")
        # nt: each CTA of a cluster loads bn / cluster rows of B (whole 8-row swizzle groups); nn: whole
        # 64-column panels
        split_ok = self.shares_a or ((self.bn // self.cluster) % 8 == 0 if self.layout == "nt" else
                                     (self.bn // PANEL_N) % self.cluster == 0)
        if self.bn % PANEL_N or not 0 < self.bn <= 256 or not split_ok:
            raise ValueError(f"bn = {self.bn} must be a multiple of {PANEL_N} up to 256 that the cluster's "
                             f"{self.cluster} CTAs can split into whole {'8-row groups' if self.layout == 'nt' else '64-column panels'}")
        tma_one_pass = self.bm == BM and self.epi == "tma" and self.bn in (EPI_COLS, 192)
        if self.epi not in EPI_MODES or \
                (self.bm == BM and self.epi != "direct" and self.bn % EPI_COLS and not tma_one_pass) or \
                (self.bm == BM and self.epi in HANDOFF and self.bn != 2 * EPI_COLS and not tma_one_pass):
            raise ValueError(f"epi must be one of {', '.join(EPI_MODES)} (the smem ones with bn a multiple of "
                             f"{EPI_COLS}, storer with bn = {2 * EPI_COLS}, tma with bn = {EPI_COLS}, 192 or "
                             f"{2 * EPI_COLS}), not {self.epi!r} with bn = {self.bn}")
        if tma_one_pass and self.cluster != 1:
            raise ValueError(f"epi='tma' with bn = {self.bn} (128 x {self.bn} tiles, one pass a tile) needs "
                             f"cluster 1, not {self.cluster}")
        if self.bm not in (128, 192, 256):
            raise ValueError(f"bm must be 128, 192 or 256, not {self.bm!r}")
        if self.bm == 256 and (self.epi != "tma" or self.cluster != 1 or self.bn > 192):
            raise ValueError(f"bm = 256 needs epi='tma', cluster 1 and bn <= 192 (two m64 x bn accumulator "
                             f"blocks in 240 registers), not epi={self.epi!r}, cluster {self.cluster}, bn {self.bn}")
        if self.bm == 192 and (self.epi not in TMA_OUT or (self.cluster != 1 and self.producer)
                               or self.bn not in ((192, 256) if not self.producer else (256,))):
            raise ValueError(f"bm = 192 needs epi='tma' or 'ring', cluster 1 (2 with producer=0) and bn = 256 "
                             f"(three consumer warpgroups of one m64 x 256 block; 192 too with producer=0), "
                             f"not epi={self.epi!r}, cluster {self.cluster}, bn {self.bn}")
        if self.epi == "ring" and (self.bm != 192 or self.bk != 64 or self.lag != 1):
            raise ValueError(f"epi='ring' needs bm = 192, bk = 64 (a stage holds the three consumers' 64 x "
                             f"{EPI_COLS} buffers) and lag 1, not bm = {self.bm}, bk = {self.bk}, lag {self.lag}")
        if self.lag not in (0, 1) or self.stages < 2 or self.group < 1:
            raise ValueError("lag must be 0 or 1, stages >= 2 and group >= 1")
        if isinstance(self.hold, bool) or self.hold not in (0, 1):
            raise ValueError(f"hold must be 0 or 1, not {self.hold!r}")
        if isinstance(self.lead, bool) or not isinstance(self.lead, int) or not 0 <= self.lead < self.stages \
                or (self.lead and self.bm != 192):
            raise ValueError(f"lead = {self.lead!r} must be 0, or for bm=192 a stage count from 1 to stages - 1 "
                             f"= {self.stages - 1}")
        if isinstance(self.mix, bool) or self.mix not in (0, 1) or (self.mix and self.bm != 192):
            raise ValueError(f"mix = {self.mix!r} must be 0, or 1 for bm=192 (interleaved 192- and 128-row tiles)")
        if self.l2 not in L2_HINTS:
            raise ValueError(f"l2 = {self.l2!r} must be one of {', '.join(L2_HINTS)}")
        if isinstance(self.producer, bool) or self.producer not in (0, 1):
            raise ValueError(f"producer must be 0 or 1, not {self.producer!r}")
        if not self.producer and (self.bm != 192 or self.epi != "tma" or self.lag != 1 or self.lead):
            raise ValueError(f"producer=0 needs bm = 192, epi='tma', lag 1 and lead 0 (three consumer "
                             f"warpgroups that load and store themselves), not bm = {self.bm}, epi={self.epi!r}, "
                             f"lag {self.lag}, lead {self.lead}")
        if isinstance(self.sk, bool) or self.sk not in (0, 1, 2, 3) or \
                (self.sk and (self.hold or self.mix or self.kdir
                              or (self.bn != 192 if not self.producer else (self.bm != BM or self.epi != "tma")))) or \
                (self.sk >= 2 and not self.producer):
            # producer=0: bn=256's 128 accumulators leave too few of the 168 registers for the walk (ptxas
            # spills); producer=1: the 128 x 256 kernel, whose epilogue (TMA stores) skips a split tile's head
            raise ValueError(f"sk = {self.sk!r} must be 0, or 1 with hold=0, mix=0, kdir=0 and either "
                             f"producer=0 and bn = 192, or bm = {BM} and epi='tma'; 2 and 3 only for the latter")
        if self.sk and self.producer and self.bn not in (EPI_COLS, 2 * EPI_COLS):
            raise ValueError(f"sk = {self.sk} in 128-row tiles needs bn = {EPI_COLS} or {2 * EPI_COLS} (the "
                             f"slices of a split tile's sum), not {self.bn}")
        if self.sk == 3 and self.stages * self.stage_bytes < self.consumers * WG_M * self.bn * 4:
            raise ValueError(f"sk = 3 parks each warpgroup's 64 x {self.bn} f32 partial in the stages, "
                             f"which {self.stages} stages of {self.stage_bytes} bytes cannot hold")
        if isinstance(self.lwarp, bool) or self.lwarp not in (0, 1) or \
                (self.lwarp and (self.producer or self.bn != 192)):
            raise ValueError(f"lwarp = {self.lwarp!r} must be 0, or 1 with producer=0 and bn = 192 (a loading warp "
                             f"leaves 128 registers a thread, too few for m64n256k16's accumulators)")
        if isinstance(self.kdir, bool) or self.kdir not in (0, 1) or \
                (self.kdir and (not self.producer or self.cluster != 1)):
            raise ValueError(f"kdir = {self.kdir!r} must be 0, or 1 with producer=1 and cluster 1 (the producer "
                             "warpgroup's loads alternate their K direction tile by tile)")
        if isinstance(self.trace, bool) or self.trace not in (0, 1) or \
                (self.trace and (self.bm != BM or not self.producer or self.cluster != 1 or self.epi != "tma")):
            raise ValueError(f"trace = {self.trace!r} must be 0, or 1 for the 128 x 256 kernel (bm = {BM}, producer=1, "
                             f"cluster 1, epi='tma')")
        if isinstance(self.pdl, bool) or self.pdl not in (0, 1) or (self.pdl and self.trace):
            raise ValueError(f"pdl = {self.pdl!r} must be 0, or 1 without trace (a traced CTA writes its first "
                             "stamps before the wait for the previous kernel)")
        if isinstance(self.serp, bool) or self.serp not in (0, 1):
            raise ValueError(f"serp = {self.serp!r} must be 0 or 1")
        if self.sk and self.cluster != 1:
            raise ValueError(f"sk = {self.sk} needs cluster 1 (a stream-K walk is one CTA's), "
                             f"not cluster {self.cluster}")
        if smem_bytes(self) > 227 * 1024:
            raise ValueError(f"{self.stages} stages of {self.stage_bytes} bytes do not fit in 227 KiB of shared memory")
        return self

    @property
    def shares_a(self) -> bool:
        """Whether the CTAs of a cluster share A: producer=0 with cluster=2 pairs neighbouring block
        columns of one block row (one row kind for both, so one load sequence); each CTA loads every
        other 64-row box of A, multicast to both, and its own B. Otherwise a cluster shares B."""
        return self.cluster > 1 and not self.producer

    @property
    def b_box(self) -> int:
        """Rows (nt) of B's TMA box: this CTA's share of the bn rows where the cluster shares B."""
        return self.bn if self.shares_a else self.bn // self.cluster

    @property
    def a_stage(self) -> int:
        return self.bm * self.bk * 2

    @property
    def a_box(self) -> int:
        """Rows of A's TMA box: 64 for bm=192 (whose 128-row tiles load two boxes) and bm=128 (whose second
        box is left out where it lies wholly past M), else the block tile's."""
        return WG_M if self.bm in (BM, 192) else self.bm

    @property
    def stage_bytes(self) -> int:
        return (self.bm + self.bn) * self.bk * 2

    @property
    def consumers(self) -> int:
        """Consumer warpgroups: three for bm=192, else two."""
        return 3 if self.bm == 192 else CONSUMERS

    @property
    def threads(self) -> int:
        """Threads of a CTA: the producer warpgroup (unless producer=0), the consumers and the loading warp
        (lwarp)."""
        return 128 * (self.producer + self.consumers) + 32 * self.lwarp

    @property
    def launch_regs(self) -> int:
        """Registers a thread at launch (.maxnreg): the register file shared by all threads."""
        if self.lwarp:
            return LAUNCH_REGS_LWARP
        return LAUNCH_REGS_M192 if self.bm == 192 and self.producer else LAUNCH_REGS

    @property
    def blocks(self) -> int:
        """m64 row blocks of each consumer warpgroup (its accumulator fragments)."""
        return self.bm // (self.consumers * WG_M)

    @property
    def can_hold(self) -> bool:
        """Whether a tile's last epilogue pass can wait in registers into the next tile: bm=128, and
        bm=192 with two passes a tile (bm=256 has no registers to spare; a single pass, as epi="tma" with
        bn=128 or 192 has, has nothing to hold)."""
        return (self.bm == BM and not (self.epi in HANDOFF and self.pass_cols == self.bn)) or \
            (self.bm == 192 and self.pass_cols == EPI_COLS)

    @property
    def held(self) -> bool:
        """Whether the last epilogue pass waits in registers (hold=1 where can_hold): bm=128 keeps it
        until k-block STORER_DEFER_KB of the next tile; bm=192 (see split_hold) only through the first
        N part of the next tile's first k-block. Otherwise every pass is written at the tile's end."""
        return bool(self.hold) and self.can_hold

    @property
    def split_hold(self) -> bool:
        """bm=192 held: a consumer's 160 registers hold the 128 accumulators or 64 of them and the
        held pass (32), not both. So the next tile's first k-block runs its first m64n128k16 part,
        the held pass goes to the buffer (by then the storer has read the previous one), and only
        then are the second part's accumulators zeroed and its wgmma issued."""
        return self.held and self.nsplit > 1

    @property
    def pass_cols(self) -> int:
        """Columns of one epilogue pass (one buffer fill): half the tile's for bm=128, a whole m64
        block's row for bm=256; bm=192: the whole row where a 64 x 256 buffer per consumer fits beside
        the ring (bk=32, 4 stages), else half."""
        if self.bm == 256 or (self.bm == 192 and self.epi != "ring"
                              and smem_bytes(self, pass_cols=self.bn) <= 227 * 1024) or \
                (self.bm == BM and self.epi == "tma" and self.bn == 192):
            return self.bn
        return EPI_COLS

    @property
    def passes(self) -> int:
        """Epilogue passes per tile and consumer: pass_cols-wide column parts of each m64 block (two
        halves, or one whole row)."""
        return self.blocks * (self.bn // self.pass_cols)

    @property
    def regs(self):
        """(producer, consumer) registers after setmaxnreg; producer=0: (None, the launch budget), no
        setmaxnreg."""
        if not self.producer:
            return None, self.launch_regs
        return {BM: (PRODUCER_REGS, CONSUMER_REGS), 192: (PRODUCER_REGS_M192, CONSUMER_REGS_M192),
                256: (PRODUCER_REGS_M256, CONSUMER_REGS_M256)}[self.bm]

    @property
    def k_swizzle(self) -> str:
        """The swizzle of the K-major tiles: their rows are bk * 2 bytes."""
        return {64: "128B", 32: "64B"}[self.bk]

    def tiles(self):
        """(one consumer's A tile, the B tile) as wgmma sees them in shared memory."""
        tile_a = SmemTile(WG_M, self.bk, "bf16", "K", self.k_swizzle)
        bn = self.bn // self.nsplit                              # the N of one wgmma
        tile_b = SmemTile(bn, self.bk, "bf16", "K", self.k_swizzle) if self.layout == "nt" else \
            SmemTile(bn, self.bk, "bf16", "MN", "128B")        # 64-column panels of bk rows
        return tile_a, tile_b


CONFIGS = [Config("nt", 1), Config("nt", 2), Config("nn", 1), Config("nn", 2)]


def smem_bytes(cfg: Config, pass_cols=None) -> int:
    """Dynamic shared memory: the stages, the epilogue buffers, the mbarriers, and 1 KiB to align the
    base to 1024; with pass_cols, what it would be with buffers of that many columns."""
    return cfg.stages * cfg.stage_bytes + epi_bytes(cfg, pass_cols) + bar_bytes(cfg) + 1024


def bar_bytes(cfg: Config) -> int:
    """2 mbarriers per stage (full, empty); epi="storer"/"tma" add a full/empty pair per epilogue buffer
    (not with producer=0, whose warpgroups store their own buffers)."""
    return 16 * cfg.stages + (16 * cfg.consumers if cfg.epi in HANDOFF and cfg.producer else 0)


def epi_bytes(cfg: Config, pass_cols=None) -> int:
    """The epilogue buffers: per consumer warpgroup 64 rows x pass_cols (default cfg.pass_cols) bf16 (one pass);
    none for epi="ring" (they live in a stage) and "direct"."""
    if cfg.epi in ("direct", "ring"):
        return 0
    return cfg.consumers * WG_M * (cfg.pass_cols if pass_cols is None else pass_cols) * 2


def sk_plan(m: int, n: int, k: int, ctas: int, bn: int = BN, bm: int = 192, sk: int = 1):
    """Stream-K (Config.sk): (grid, m_split, sk_first, streamed tiles) for tiles of bm x bn: the producer-less
    kernel puts every row in 192-row tiles (m_split past M), the producer warpgroup's in 128-row ones. With U
    tiles and at least as many CTAs P = ctas: when P divides U, U / P whole rounds (sk_first = U);
    otherwise U / P - 1 whole rounds (sk_first of them in all) and the k-blocks of the other U - sk_first
    tiles (between P and 2P of them) shared evenly, so each CTA's range is at least one tile long and a
    tile is split between at most two CTAs. With fewer tiles than CTAs (a small M x N over a long K) all
    of them are streamed (sk_first = 0) over the grid `sk_grid` picks for the kernel `sk` (1 or 2) and
    the operands' DRAM floor (`sk_dram_kblocks`): a multiple of U, so each tile is split between the
    same number of CTAs, each with one range inside it.
    sk=3 sums a tile's parts within one cluster, so it takes only shapes with at most as many tiles as
    CTAs, and parts a tile (the cluster's size) from SK3_PARTS, at most one per k-block; with one part
    a tile it runs whole tiles (sk_first = U)."""
    check_shape(m, n, k)
    if isinstance(ctas, bool) or not isinstance(ctas, (int, np.integer)) or ctas < 1:
        raise ValueError(f"ctas = {ctas!r}: at least one CTA must be resident")
    if sk not in (1, 2, 3):
        raise ValueError(f"sk = {sk!r}: stream-K is sk=1, 2 or 3")
    rows = -(-m // bm)
    units = rows * -(-n // bn)
    nk = -(-k // BK)
    if sk == 3:
        if units > ctas:
            raise ValueError(f"{m}x{n}x{k}: sk=3 splits tiles within clusters and takes at most as many "
                             f"tiles as CTAs, not {units} tiles on {ctas} CTAs (sk=1 and 2 take any shape)")
        grid = sk_grid(units, nk, int(ctas), sk, lambda g: sk_dram_kblocks(m, n, k, bn, g))
        return grid, bm * rows, units if grid == units else 0, 0 if grid == units else units
    if units >= ctas:
        grid = int(ctas)
        sk_first = units if units % grid == 0 else (units // grid - 1) * grid
    else:
        grid = sk_grid(units, nk, int(ctas), sk, lambda g: sk_dram_kblocks(m, n, k, bn, g))
        sk_first = units if grid == units else 0
    if (units - sk_first) * nk >= 2**32:
        raise ValueError(f"{m}x{n}x{k}: the stream-K range ({units - sk_first} tiles x {nk} k-blocks) "
                         "does not fit in 32 bits")
    return grid, bm * rows, sk_first, units - sk_first


# what adding one more CTA's f32 partial to a split tile costs its owner, in k-blocks of its own
# MMA time (a 64 x 192 f32 partial per warpgroup, 144 KiB a CTA, written once to L2 and read back once)
SK_PART_KBLOCKS = 3
# the same for sk=2, where every part parks its partial and sums a slice of the tile: each part costs
# less (the slices are read in parallel), but every tile pays a fixed round trip (park, wait for the
# slowest part, read, store). bench/LOG.md round 21 (H100, grids of 2-64 parts a tile) measured 2 k-blocks
# a part; that included one 64-bit division a part in every thread, which finding a tile's first and last
# parts took until round 28 (`_SkWalk.owner`). Without it (round 28, H100, one to sixteen tiles over K =
# 16384-65536 on forced grids of 16-128 CTAs): 0.1-0.3 k-blocks a part in a least-squares fit, and the
# grid with the least `sk_streamed_cost` ran 1.01x the fastest grid's time at 0.5 a part (with the DRAM
# floor below) against 1.08-1.24x at 2
SK2_PART_KBLOCKS = 0.5
# ... and the fixed round trip: 3 k-blocks in round 21; over round 28's 39 shapes (every stream-K kernel
# timed on the grids above) `sk_pick`'s kernel ran 1.032x the fastest one's time on average at 3, 1.027x
# at 5, 1.014x at 8, 1.011x at 10 and 1.028x at 12: at 2-4 parts sk=1 and sk=3 in 128 x 128 tiles beat
# sk=2 by 5-12 % where 3 picked sk=2 (1024^2 x 8192, 512 x 1024 x 16384, 512^2 x 2048, 128 x 1536 x
# 16384). Out of sample (26 shapes, sk=2 and sk=3 in 128 x 128 tiles timed): 1.029x at 8, 1.020x at 10
SK2_FIXED_KBLOCKS = 10
# The operand bytes DRAM delivers in the time of one k-block of 128 x 256 tiles (about 0.53 us on an H100:
# 3.8 TB/s; L2 serves some of the re-reads): a streamed launch takes at least its operands' bytes (M + N)
# K 2 over this, in k-blocks, whatever its grid. Round 28 (the same grids): with fewer tiles than SMs over
# a long K the time stops falling well before the grid's ranges stop shrinking (128^2 x 65536 in 128 x 128
# tiles with sk=2: 31.4, 24.0, 23.3, 23.3, 25.6 and 28.4 us on 16, 32, 48, 64, 96 and 128 CTAs); 2.0-2.5 MB
# picked grids within 1-3 % of the fastest, 1.5 MB 3-9 %, none 2-24 %
SK_DRAM_BYTES = 2_000_000
# ... and what one CTA streams from DRAM in that time, where the operands are more than SK_SM_OVER bytes (L2
# cannot hold them, so they come from DRAM on every call): a grid of G CTAs gets at most G x this.
# bench/LOG.md round 30 (H100, CUDA graphs): the plain 128 x 128 kernel on 64 CTAs took 79.7 / 61.2 / 56.4
# us at M = 8 / 64 / 128 x 8192 x 8192 (the same 2 MB of B a CTA; A's box past M is filled with zeros,
# which costs TMA time), 14.8-21.6 KB a CTA a k-block's time, against 53 us for every M streamed over 128
# CTAs. Over the 99 shapes of more than 50 MiB whose pick this changed: 0.90x the time (0.66-1.07x); over
# the 311 smaller ones, whose operands stayed in L2 between the calls, 1.02x, so it applies above 50 MiB only
SK_SM_BYTES = 20_000
SK_SM_OVER = 50 * 2**20
# sk=3: a tile's parts are the CTAs of one cluster (2, 4 or 8, the portable cluster sizes, or 16, which
# `prepare` allows), and sum in shared memory: the parking stays in the SM and the slices cross the
# cluster's SM-to-SM network. A cluster's CTAs share one GPC: a lone cluster of 16 (one tile) ran 1.3x
# slower than sk=2 on 21 CTAs spread over the GPU, two or more of them 0.84-0.94x sk=2's time
# (bench/LOG.md round 22, H200), so 16 parts need at least SK3_MIN_TILES_16 tiles
SK3_PARTS = (1, 2, 4, 8, 16)
SK3_PORTABLE = 8
SK3_MIN_TILES_16 = 2
# bench/LOG.md round 22 (H100, the same grids): sk=3 took 2-4 us less than sk=2 at 4 and 8 parts a
# tile (about 4.5 k-blocks) and about 2 k-blocks more than sk=1 at 2 parts
SK3_PART_KBLOCKS = 1
SK3_FIXED_KBLOCKS = 3
SK3_BATCH_REGS = 64          # f32 registers of one batch of a slice's shared::cluster loads
# sk=2's slices: (P_lo, R), a code path for P from each P_lo up to the next, whose parts sum at most
# S = ceil(G / P_lo) of the G 16-byte groups (16 and 4 of 32 with bn = 256), each reading as many parts
# at once as fill R registers (B = R / (4 S): 1 and 4 with bn = 256); a P_lo whose S repeats the path
# before it adds no path. bench/LOG.md round 22 (H100, the same grids): reading 4 parts at once took
# 0.90-0.99x the time at 10 and 16 parts a tile and 0.97-1.01x at 8, and 2 at once (P from 4 to 7)
# took 1.05-1.09x, so that range keeps one part at a time. Round 27 (H100, one to four tiles over K =
# 16384-65536, each split in 8-64 parts): from 16 parts up, where a part's slice is one or two
# groups, 96 registers a batch (12 or 24 parts at once; the partials are parked, so the accumulators'
# registers are free) took 0.84-1.00x the time of 64 at bn = 256 and 0.94-0.99x at bn = 128, with fewer
# parts (the same code) 0.97-1.01x; 128 registers spilled at bn = 256
SK2_SLICE_PATHS = ((2, 64), (8, 64), (16, 96), (32, 96))


def sk2_slice_paths(bn: int) -> list:
    """sk=2's slice code paths for 128 x bn tiles: (P_lo, S, B) for each SK2_SLICE_PATHS entry whose S
    (the most groups a part sums with P >= P_lo) differs from the path before it."""
    groups, out = bn // 8, []
    for p_lo, regs in SK2_SLICE_PATHS:
        S = -(-groups // p_lo)
        if out and out[-1][1] == S:
            continue
        out.append((p_lo, S, max(1, regs // (4 * S))))
    return out


def sk_dram_kblocks(m: int, n: int, k: int, bn: int = BN, grid=None) -> float:
    """The k-blocks of 128 x bn tiles (bn / 256 x WIDTH_COST[bn] of a 128 x 256 tile's) in which DRAM
    delivers an M x N x K product's operands once, (M + N) K 2 bytes, at SK_DRAM_BYTES a 128 x 256 k-block,
    or, for operands of more than SK_SM_OVER bytes on a grid of `grid` CTAs, at grid x SK_SM_BYTES where
    that is less (a small grid cannot draw all of DRAM's bandwidth)."""
    nbytes = (m + n) * k * 2
    rate = SK_DRAM_BYTES if grid is None or nbytes <= SK_SM_OVER else min(SK_DRAM_BYTES, grid * SK_SM_BYTES)
    return nbytes / (rate * bn / BN * WIDTH_COST[bn])


def sk_streamed_cost(units: int, nk: int, grid: int, sk: int = 1, floor: float = 0) -> float:
    """The estimated time, in k-blocks, of streaming `units` tiles of `nk` k-blocks over `grid` CTAs with
    the kernel `sk`: the longest range ceil(units nk / grid), or `floor` (`sk_dram_kblocks`) where that
    is more, plus, with P = ceil(grid / units) parts a tile, SK_PART_KBLOCKS for each partial a tile's
    owner adds (sk=1), or SK2_PART_KBLOCKS (sk=3: SK3_PART_KBLOCKS) for each part past the first and
    SK2_FIXED_KBLOCKS (SK3_FIXED_KBLOCKS) for the sum (nothing when no tile is split)."""
    longest, parts = max(-(-units * nk // grid), floor), -(-grid // units)
    if sk == 1:
        return longest + SK_PART_KBLOCKS * (parts - 1)
    part, fixed = (SK2_PART_KBLOCKS, SK2_FIXED_KBLOCKS) if sk == 2 else (SK3_PART_KBLOCKS, SK3_FIXED_KBLOCKS)
    return longest + (part * (parts - 1) + fixed if parts > 1 else 0)


def sk_grid(units: int, nk: int, ctas: int, sk: int = 1, floor=0) -> int:
    """The grid for streaming `units` tiles of `nk` k-blocks over at most `ctas` CTAs (units < ctas) with
    the kernel `sk`: of the multiples of units up to ctas (every tile in the same number of parts; a
    grid between two multiples gives some CTAs pieces of two tiles, and ran 5-30 % slower than the
    multiple below it, bench/LOG.md round 21), the one with the least `sk_streamed_cost` over the DRAM
    floor `floor` (a number, or a function of the grid: `sk_dram_kblocks`'s); the fewer CTAs where two
    tie. sk=3: only the multiples whose parts a tile are in SK3_PARTS and at most nk (16 with at least
    SK3_MIN_TILES_16 tiles)."""
    grids = range(units, ctas + 1, units)
    if sk == 3:
        grids = [p for p in grids if p // units in SK3_PARTS and p // units <= nk
                 and (p // units < 16 or units >= SK3_MIN_TILES_16)]
    at = floor if callable(floor) else (lambda p: floor)
    return min(grids, key=lambda p: (sk_streamed_cost(units, nk, p, sk, at(p)), p))


def sk_flag_bytes(cfg: Config, grid: int, streamed: int = 0) -> int:
    """The head of a stream-K workspace, padded to 256 bytes (the kernel computes the same): a u32 flag per
    (CTA, consumer warpgroup) of the grid, or with sk=2 a u32 count per (streamed tile, warpgroup)."""
    return -(-(streamed if cfg.sk == 2 else grid) * 4 * cfg.consumers // 256) * 256


def workspace_bytes(cfg: Config, m: int, n: int, k: int, ctas: int) -> int:
    """Bytes of a stream-K launch's workspace: the flags (`sk_flag_bytes`), then a 64 x bn f32 partial per
    (CTA, warpgroup): a CTA leaves at most one partial, that of the first item of its range; with sk=2
    two per (CTA, warpgroup), since the part that ends a tile parks its partial too. sk=3 needs none (0)."""
    if cfg.sk == 3:
        sk_plan(m, n, k, ctas, cfg.bn, cfg.bm, cfg.sk)               # the shape's checks
        return 0
    grid, _, _, streamed = sk_plan(m, n, k, ctas, cfg.bn, cfg.bm, cfg.sk)
    return sk_flag_bytes(cfg, grid, streamed) + grid * cfg.sk * cfg.consumers * WG_M * cfg.bn * 4


def workspace(cfg: Config, m: int, n: int, k: int, ctas: int):
    """A zeroed ptxgen.runtime.DeviceBuffer of workspace_bytes for a stream-K launch (Config.sk) of this
    shape; None for every other configuration (and sk=3, which sums in shared memory). One serves
    launches issued one after another."""
    if cfg.sk in (0, 3):
        return None
    from ptxgen.runtime import DeviceBuffer
    return DeviceBuffer.zeros(workspace_bytes(cfg, m, n, k, ctas))


def trace_bytes(ctas: int) -> int:
    """Bytes of the Config.trace buffer for a grid of `ctas` CTAs."""
    return ctas * 2 * TRACE_SLOTS * 8


def read_trace(words, ctas: int) -> dict:
    """The stamps a traced launch of `ctas` CTAs wrote (`words`: the buffer as uint64, at least
    ctas * 2 * TRACE_SLOTS of them): each TRACE_FIELDS name -> a uint64 array over the CTAs ("sm" holds
    %smid, the others %globaltimer in ns), "tiles" -> a (ctas, TRACE_TILES) array of the tile hand-off
    stamps, 0 where a CTA had no such tile, and "clock" -> the same names (but "sm") and "tiles" for
    the SM's %clock64 read at each of those points."""
    w = np.asarray(words, dtype=np.uint64).reshape(-1)
    if w.size < ctas * 2 * TRACE_SLOTS:
        raise ValueError(f"a trace of {ctas} CTAs has {ctas * 2 * TRACE_SLOTS} words, got {w.size}")
    w = w[:ctas * 2 * TRACE_SLOTS].reshape(ctas, 2, TRACE_SLOTS)

    def decode(words, names):
        out = {name: words[:, i].copy() for i, name in enumerate(TRACE_FIELDS) if name in names}
        out["tiles"] = words[:, len(TRACE_FIELDS):].copy()
        return out

    out = decode(w[:, 0], TRACE_FIELDS)
    out["clock"] = decode(w[:, 1], [f for f in TRACE_FIELDS if f != "sm"])
    return out


def check_shape(m: int, n: int, k: int) -> None:
    """Raise ValueError when the kernels cannot take this shape (see the module docstring)."""
    for name, v in (("M", m), ("N", n), ("K", k)):
        if not isinstance(v, (int, np.integer)) or v < 1 or v >= 2 ** 31:
            raise ValueError(f"{name} = {v!r}: each dimension must be an int from 1 to 2^31 - 1")
    if n % 8 or k % 8:
        raise ValueError(f"N = {n} and K = {k} must be multiples of 8 (TMA needs 16-byte row strides)")


def _tile(k, u, rank, tiles_n, mcs, cluster: int, group: int, serp: int = 0):
    """(block row, block column) of work unit u: `group` cluster rows at a time, column by column
    (serp: in every other group from the last column to the first; `tile_order` is the Python copy)."""
    per_group = k.mul(tiles_n, group, mode="lo")
    g = _udiv(k, u, per_group)
    first = k.mul(g, group, mode="lo")
    gsize = k.min(k.sub(mcs, first), group)
    r = k.sub(u, k.mul(g, per_group, mode="lo"))
    nb = _udiv(k, r, gsize)
    mc = k.add(first, k.sub(r, k.mul(nb, gsize, mode="lo")))
    mb = k.add(k.mul(mc, cluster, mode="lo"), rank) if cluster > 1 else mc
    if serp:
        nb = k.selp(k.sub(k.sub(tiles_n, 1), nb), nb, k.setp("ne", k.and_(g, 1), 0))
    return mb, nb


# `_udiv`: below this, n / d goes through a float reciprocal instead of div.u32 (exact there, see its note)
UDIV_FAST_LIMIT = 1 << 22


def _udiv(k, n, d):
    """n / d (u32, d > 0) for the tile order and the stream-K walk. `div.u32` is 12-14 dependent SASS
    instructions (two conversions, MUFU.RCP, two IMAD.HI and two corrections), and the loading thread's
    first tile waits on four to six of them in a chain (bench/LOG.md rounds 34-35). Where n and d are both
    below UDIV_FAST_LIMIT: q = trunc(float(n) * rcp.approx(float(d))), then one correction each way. Both
    conversions are exact there and the product is within 2^-21 of n / d relatively, so q is off by at most
    one, and r = n - q d in (-d, 2d) tells which way. Elsewhere `div.u32`, branched around where the fast
    path holds."""
    fast = k.setp("lt", k.or_(n, d, type=pg.b32), UDIV_FAST_LIMIT, type=pg.u32)
    recip = k.rcp(k.cvt(d, pg.f32, pg.u32, rnd="rn"), approx=True, ftz=True)
    q = k.cvt(k.mul(k.cvt(n, pg.f32, pg.u32, rnd="rn"), recip, ftz=True), pg.u32, pg.f32, rnd="rzi")
    r = k.sub(n, k.mul(q, d, mode="lo"), type=pg.s32)
    k.sub(q, 1, dst=q, guard=k.setp("lt", r, 0, type=pg.s32))
    k.add(q, 1, dst=q, guard=k.setp("ge", r, d, type=pg.s32))
    with k.if_(k.not_(fast)):                   # a uniform branch: predicated, div.u32 would stay on the path
        k.div(n, d, dst=q)
    return q


def _pass_parity(k, epar, p: int):
    """Parity of pass p's phase of an epilogue buffer's barriers: p % 2 when a tile has an even number
    of passes (epar None); with an odd number, pass p of tile t is phase t * passes + p, whose parity
    is t's (the register epar, flipped after each tile) flipped by p."""
    if epar is None:
        return p % 2
    return k.xor(epar, 1) if p % 2 else epar


def _mul_const(k, x, c: int):
    """x * c for a constant c: a shift when c is a power of two."""
    return k.shl(x, c.bit_length() - 1) if c & (c - 1) == 0 else k.mul(x, c, mode="lo")


def _div_const(k, x, c: int):
    """x / c (unsigned) for a constant c: a shift when c is a power of two."""
    return k.shr(x, c.bit_length() - 1) if c & (c - 1) == 0 else k.div(x, c)


def _unit_kind(k, u, u1, units, mix: int):
    """bm=192: (is-192-row predicate, index among the units of its kind) of work unit u, with u1 of
    the `units` in 192-row tiles. mix=0: units below u1 are the 192-row tiles, the rest the 128-row
    ones. mix=1: the u2 = units - u1 128-row tiles are spread evenly over the order: unit u is the
    s(u)-th 128-row tile when s(u + 1) > s(u), with s(u) = floor(u * u2 / units), and otherwise the
    (u - s(u))-th 192-row tile (a bijection, since s steps by at most one from s(0) = 0 to s(units) = u2)."""
    if not mix:
        big = k.setp("lt", u, u1)
        return big, k.selp(u, k.sub(u, u1), big)
    u2 = k.sub(units, u1)
    total = k.cvt(units, pg.u64, pg.u32)
    prod = k.mul(u, u2, mode="wide")                          # < 2^64: no overflow for any u32 counts
    s0 = k.cvt(k.div(prod, total), pg.u32, pg.u64)
    s1 = k.cvt(k.div(k.add(prod, k.cvt(u2, pg.u64, pg.u32)), total), pg.u32, pg.u64)
    big = k.setp("eq", s0, s1)
    return big, k.selp(k.sub(u, s0), s0, big)


def _mixed_units(k, cfg: Config, M, split, tiles_n):
    """bm=192: the arguments `_mixed_tile` takes after the unit, (u1, units, mix, tm1, tm2, split,
    tiles_n, group, serp): units 0 .. u1-1 are the 192-row tiles of the rows before m_split (`split`, tm1
    block rows), the rest the 128-row tiles from it on (tm2 block rows)."""
    tm1 = k.div(split, 192)
    tm2 = k.shr(k.add(k.selp(k.sub(M, split), 0, k.setp("gt", M, split)), 127), 7)
    u1 = k.mul(tm1, tiles_n, mode="lo")
    units = k.mad(tm2, tiles_n, u1, mode="lo")
    return u1, units, cfg.mix, tm1, tm2, split, tiles_n, cfg.group, cfg.serp


def _mixed_tile(k, u, u1, units, mix, tm1, tm2, split, tiles_n, group: int, serp: int = 0):
    """bm=192: (first row, block column, is-192-row predicate) of work unit u (`_unit_kind` says which
    kind it is). The 192-row tiles cover the rows before `split` (tm1 block rows), the 128-row tiles
    those from `split` on (tm2 block rows); each kind is visited in raster groups like `_tile`."""
    big, idx = _unit_kind(k, u, u1, units, mix)
    mb, nb = _tile(k, idx, None, tiles_n, k.selp(tm1, tm2, big), 1, group, serp)
    return k.selp(k.mul(mb, 192, mode="lo"), k.mad(mb, 128, split, mode="lo"), big), nb, big


def _meet(k, cl: int):
    """Once thread 0 has initialised the barriers: every thread of the CTA, or with a cluster of both
    CTAs, meets here, so no copy or remote arrive reaches a barrier before its init. Returns (rank in
    the cluster or None, the first work unit, the unit stride): the cluster's id and count, else the CTA's."""
    if cl > 1:
        k.barrier_cluster_arrive(sem="release")
        k.barrier_cluster_wait(acquire=True)
        return k.sreg("%cluster_ctarank"), k.sreg("%clusterid.x"), k.sreg("%nclusterid.x")
    k.bar_sync(0)
    return None, k.ctaid.x, k.nctaid.x


def _after_meet(k, cfg: Config):
    """Config.pdl: the next kernel in the stream may be launched now (its CTAs start on SMs as this
    kernel's CTAs leave them), and no thread touches global memory before the previous kernel has
    finished and its writes are visible."""
    if cfg.pdl:
        k.griddepcontrol("launch_dependents")
        k.griddepcontrol("wait")


def _leave(k, cl: int):
    """Before exit, with a cluster: no CTA leaves while its peer may still arrive on its barriers or
    multicast into it."""
    if cl > 1:
        k.barrier_cluster_arrive(sem="release", aligned=False)
        k.barrier_cluster_wait(acquire=True, aligned=False)


def _prefetch_maps(k, *maps):
    """The tensor maps into the cache while the barriers are set up, so the first TMA copies do not wait
    for their descriptors (None: a map this kernel does not have)."""
    for tm in maps:
        if tm is not None:
            k.prefetch_tensormap(tm)


def pre_issue(cfg: Config) -> bool:
    """Whether the producer warpgroup's loading thread issues its first item's first k-block before the CTA
    meets (`_kernel`): stream-K in 128-row tiles without a cluster or PDL."""
    return bool(cfg.sk) and cfg.producer and cfg.cluster == 1 and not cfg.pdl and cfg.bm == BM and not cfg.lead


def _kernel(m: pg.Module, cfg: Config):
    cfg.check()
    if not cfg.producer:
        return _kernel_inline(m, cfg)
    S, cl = cfg.stages, cfg.cluster
    NC = cfg.consumers
    k = m.entry(cfg.name, reqntid=cfg.threads, maxnreg=cfg.launch_regs)
    tmap_a = k.param_bytes("tmap_a", 128, align=64)
    tmap_b = k.param_bytes("tmap_b", 128, align=64)
    tma_out = cfg.epi in TMA_OUT
    tmap_c = k.param_bytes("tmap_c", 128, align=64) if tma_out else None
    pc = None if tma_out else k.param_ptr("c", align=16)
    pm, pn, pk = k.param("m", pg.u32), k.param("n", pg.u32), k.param("k", pg.u32)
    mixed = cfg.bm == 192
    # bm=192: rows before m_split (a multiple of 192) in 192-row tiles, the rest in 128-row tiles
    psplit = k.param("m_split", pg.u32) if mixed else None
    if cfg.sk:
        # sk=3 sums in the cluster's shared memory: no workspace
        pws = k.param_ptr("ws", align=16) if cfg.sk != 3 else None
        psk = k.param("sk_first", pg.u32)
    # sk=2 and 3: the parts of a split tile write their slices of C with plain stores
    pcs = k.param_ptr("c_split", align=16) if cfg.sk >= 2 else None
    ptrace = k.param_ptr("trace", pg.u64, align=8) if cfg.trace else None
    dyn = m.extern_shared(f"smem_{cfg.name}", align=1024)

    M, N, K = k.ld_param(pm), k.ld_param(pn), k.ld_param(pk)
    tid = k.tid.x
    wg = k.shr(tid, 7)
    base = k.and_(k.add(k.mov(dyn, type=pg.u32), 1023), ~1023 & 0xFFFFFFFF)
    cbuf = k.add(base, S * cfg.stage_bytes)                 # epilogue buffers (epi="smem")
    bars = k.add(cbuf, epi_bytes(cfg))
    leader = k.setp("eq", tid, 0)
    trace = None
    if cfg.trace:
        # this CTA's 2 x TRACE_SLOTS stamps
        trace = k.add(k.cvta(k.ld_param(ptrace), "global", to=True),
                      k.mul(k.ctaid.x, 2 * TRACE_SLOTS * 8, mode="wide"))
    with k.if_(leader):
        if trace is not None:
            _stamp(k, trace, "start")
            k.st(k.add(trace, 8 * TRACE_FIELDS.index("sm")), k.cvt(k.sreg("%smid"), pg.u64, pg.u32))
        _prefetch_maps(k, tmap_a, tmap_b, tmap_c)
        for s in range(S):
            k.mbarrier_init(k.add(bars, 8 * s), 1)                       # full: the producer's arrive
            k.mbarrier_init(k.add(bars, 8 * (S + s)), NC * cl)          # empty: every consumer of the cluster
        if cfg.epi in HANDOFF:
            for c_ in range(NC):
                k.mbarrier_init(k.add(bars, 8 * (2 * S + c_)), 128)              # buffer full: its warpgroup
                # buffer empty: the lanes of its storer warp, or the thread that issued the TMA stores
                k.mbarrier_init(k.add(bars, 8 * (2 * S + NC + c_)), 1 if tma_out else 32)
        k.fence_mbarrier_init()
    bn = cfg.bn
    tiles_n = _div_const(k, k.add(N, bn - 1), bn)
    if mixed:
        mixed_tile = _mixed_units(k, cfg, M, k.ld_param(psplit), tiles_n)
        u1, units = mixed_tile[:2]
        mcs = None
    else:
        tiles_m = _div_const(k, k.add(M, cfg.bm - 1), cfg.bm)
        mcs = k.shr(k.add(tiles_m, cl - 1), cl - 1) if cl > 1 else tiles_m
        units = k.mul(mcs, tiles_n, mode="lo")
        mixed_tile = None
    bk = cfg.bk
    nk = k.shr(k.add(K, bk - 1), bk.bit_length() - 1)
    # stream-K in 128-row tiles without a cluster or PDL: the loading thread issues its first item's first
    # k-block right after the barriers' init, before the CTA meets and the producer hands its registers back,
    # so the copy is in flight while the rest of the CTA sets up (bench/LOG.md round 35)
    def tile_rows(u, rank, cl):
        """Tile u's first row of A and block column, in 128-row tiles: A in two 64-row boxes, the second only
        where some of its rows are below M (`big`; a TMA box wholly past M would only fill the stage with zeros,
        which costs the copy engine time: bench/LOG.md round 30), so a tile of M <= 64 rows loads 64 and
        expects `tx` bytes; the rows of A left stale give only rows of C past M, which no epilogue writes."""
        mb, nb = _tile(k, u, rank, tiles_n, mcs, cl, cfg.group, cfg.serp)
        row_a = _mul_const(k, mb, cfg.bm)
        big = k.setp("lt", k.add(row_a, WG_M), M)
        return row_a, nb, big, k.selp(cfg.stage_bytes, cfg.stage_bytes - WG_M * bk * 2, big, type=pg.u32)

    pre = pre_issue(cfg)
    if pre:
        pre_skip = k.mov(0, type=pg.u32)
        with k.if_(leader):
            pre_walk = _SkWalk(k, cfg, pws, psk, units, nk, k.ctaid.x, k.nctaid.x, M, False)
            pols = _load_policies(k, cfg, tiles_n, k.nctaid.x)
            qwalk, qkb0, qkb1 = pre_walk.cursor("q")
            qu = k.reg(pg.u32, "q_unit")
            qfound = pre_walk.next(qwalk, qu, qkb0, qkb1)
            with k.if_(qfound):
                row_a0, nb0, big0, tx0 = tile_rows(qu, None, 1)
                k.mbarrier_arrive_expect_tx(bars, tx0)                  # stage 0's full barrier
                _load_stage(k, cfg, base, bars, tmap_a, tmap_b, k.shl(qkb0, bk.bit_length() - 1), row_a0,
                            k.mul(nb0, bn, mode="lo"), big0, None, pols)
                if trace is not None:
                    _stamp(k, trace, "first_issue")
                k.mov(1, dst=pre_skip)
    rank, unit0, nunits = _meet(k, cl)
    _after_meet(k, cfg)
    # stream-K (Config.sk): each of the three walkers (the loading thread, the consumers, the storer
    # threads) walks this CTA's work items in the same order, from its own copy of the state, set up
    # after its setmaxnreg (the producer warpgroup's 40 registers hold no more than it needs)

    def sk_walk(fixup: bool):
        return _SkWalk(k, cfg, pws, psk, units, nk, unit0, nunits, M, fixup and cfg.sk != 3) if cfg.sk else None
    # the stage ring: index and phase (the parity of the stage's barrier waits); the producer and the
    # consumers each walk it from the start in their own copy of the registers
    ring = k.stage_ring(S)
    u = k.reg(pg.u32, "unit")

    role = k.if_else(k.setp("eq", wg, 0))
    with role.then():
        # ---------------------------------------------------------------- producer warpgroup
        k.setmaxnreg("dec", cfg.regs[0])
        with k.if_(leader):
            k.mov(unit0, dst=u)
            walk = sk_walk(False) if not pre else pre_walk
            rev = k.mov(0, type=pg.u32) if cfg.kdir else None     # Config.kdir: 1 in tiles loaded K-downwards
            if not pre:
                pols = _load_policies(k, cfg, tiles_n, nunits)
            top, done = k.new_label("p_tile"), k.new_label("p_done")
            first_issue = None
            if trace is not None:                                 # 1: no stage issued yet
                first_issue = k.mov(1, type=pg.u32) if not pre else k.xor(pre_skip, 1, type=pg.b32)
            if walk is not None:
                pwalk, pkb0, pkb1 = walk.cursor("p")
            if pre:
                k.mov(pre_skip, dst=ring.index)                   # stage 0 is issued: the ring starts at 1
            k.place(top)
            if walk is not None:
                k.bra(done, guard=k.not_(walk.next(pwalk, u, pkb0, pkb1)))
            else:
                k.bra(done, guard=k.setp("ge", u, units))
            if mixed:
                row_a, nb, big = _mixed_tile(k, u, *mixed_tile)
                # a 128-row tile loads two of the three 64-row boxes of A
                tx = k.selp(cfg.stage_bytes, cfg.stage_bytes - WG_M * bk * 2, big, type=pg.u32)
            elif cfg.bm == BM:
                row_a, nb, big, tx = tile_rows(u, rank, cl)
            else:
                mb, nb = _tile(k, u, rank, tiles_n, mcs, cl, cfg.group, cfg.serp)
                row_a = _mul_const(k, mb, cfg.bm)
                big, tx = None, cfg.stage_bytes
            col_b = k.mul(nb, bn, mode="lo")
            down = k.setp("ne", rev, 0) if cfg.kdir else None
            if pre:                                               # the first item's first k-block is issued
                k.add(pkb0, pre_skip, dst=pkb0)
                k.mov(0, dst=pre_skip)
            with k.for_range(*((pkb0, pkb1) if walk is not None else (0, nk)), name="kb") as kb:
                if cfg.lead:
                    with k.if_(big):                      # a 192-row tile keeps at most `lead` stages ahead
                        ring.wait_released(k.add(bars, 8 * S), cfg.lead, timeout_cycles=WAIT_LIMIT_CYCLES)
                ring.wait(k.add(bars, 8 * S), flip=True, timeout_cycles=WAIT_LIMIT_CYCLES)   # empty
                full = ring.addr(bars, 8)
                k.mbarrier_arrive_expect_tx(full, tx)
                stage = ring.addr(base, cfg.stage_bytes)
                # Config.kdir: every other tile of this CTA takes its k-blocks from the last down
                kk = k.selp(k.sub(k.sub(nk, 1), kb), kb, down) if cfg.kdir else kb
                kx = k.shl(kk, bk.bit_length() - 1)
                _load_stage(k, cfg, stage, full, tmap_a, tmap_b, kx, row_a, col_b, big, rank, pols)
                if first_issue is not None:
                    with k.if_(k.setp("ne", first_issue, 0)):
                        _stamp(k, trace, "first_issue")
                        k.mov(0, dst=first_issue)
                ring.advance()
            if cfg.kdir:
                k.xor(rev, 1, dst=rev, type=pg.b32)
            if walk is None:
                k.add(u, nunits, dst=u)
            k.bra(top)
            k.place(done)
        if cfg.epi == "storer":
            # warps 2 and 3 copy the epilogue buffers of consumers 0 and 1 to C, pass by pass
            with k.if_(k.setp("ge", tid, 64)):
                _storer(k, cfg, cbuf, bars, k.sub(k.shr(tid, 5), 2), k.and_(tid, 31), unit0, nunits, units,
                        rank, tiles_n, mcs, k.cvta(k.ld_param(pc), "global", to=True), M, N)
        elif tma_out:
            # lane 0 of the last NC warps (2 and 3, or 1 to 3) TMA-stores the buffers of consumers 0 to
            # NC - 1, pass by pass (lane 0 of warp 0 is the loader)
            first = 4 - NC
            with k.if_(k.setp("eq", k.and_(tid, 31), 0, bool_op="and", c=k.setp("ge", tid, 32 * first))):
                _tma_storer(k, cfg, cbuf, bars, k.sub(k.shr(tid, 5), first), unit0, nunits, units, rank, tiles_n,
                            mcs, tmap_c, mixed_tile, ring=(base, nk) if cfg.epi == "ring" else None, trace=trace,
                            walk=sk_walk(False))
        if cfg.sk == 3:
            _cluster_phase(k)                             # the consumers' partials are parked
    with role.otherwise():
        # ---------------------------------------------------------------- consumer warpgroups
        k.setmaxnreg("inc", cfg.regs[1])
        walk = sk_walk(True)
        c = k.sub(wg, 1)
        lane = k.and_(tid, 31)
        if trace is not None:
            tracer = k.setp("eq", tid, 128)              # consumer 0's first thread stamps
            tile_no = k.mov(0, type=pg.u32)
            with k.if_(tracer):
                _stamp(k, trace, "setup")
                # the first stage of its first tile (stage 0, phase 0; the k-loop's own wait then passes);
                # every CTA of a stream-K grid has k-blocks to walk (sk_plan), so it always has one
                def first_stage():
                    k.mbarrier_wait(bars, parity=0, timeout_cycles=WAIT_LIMIT_CYCLES)
                    _stamp(k, trace, "first_stage")
                if cfg.sk:
                    first_stage()
                else:
                    with k.if_(k.setp("lt", unit0, units)):
                        first_stage()
        warp = k.and_(k.shr(tid, 5), 3)                  # warp within the warpgroup
        signal = k.setp("eq", k.and_(tid, 127), 0)        # one thread per warpgroup releases stages
        tile_a, tile_b = cfg.tiles()
        # consumer c's m64 blocks are rows (c * blocks + j) * 64 of the stage's A tile
        desc_a0 = k.wgmma_descriptor(k.mad(c, cfg.blocks * WG_M * bk * 2, base, mode="lo"), tile_a)
        desc_b0 = k.wgmma_descriptor(k.add(base, cfg.a_stage), tile_b)
        # the peer CTA's barrier block (a cluster of 2: the other rank), mapped once
        peer_bars = k.mapa(bars, k.xor(rank, 1), space="shared::cluster", type=pg.u32) if cl > 1 else None
        # frags[j][h]: block j, N part h; accs[j]: block j's accumulators in column order (the N
        # parts' registers one after the other, as one m64 x bn fragment would hold them)
        frags = [[k.wgmma_fragment("d", cfg.shape, dtype="f32", atype="bf16",
                                   name="acc" + (str(j) if j else "") + (f"_{h}" if cfg.nsplit > 1 else ""))
                  for h in range(cfg.nsplit)] for j in range(cfg.blocks)]
        accs = [[r for f in fj for r in f] for fj in frags]
        acc = accs[0]
        gc = None if tma_out else k.cvta(k.ld_param(pc), "global", to=True)
        prev = k.reg(pg.u32, "prev")
        smem_epi = cfg.epi in ("smem", "smem_defer")
        defer = cfg.epi == "smem_defer"
        storer = cfg.epi in HANDOFF
        ring_epi = cfg.epi == "ring"
        if smem_epi or storer:
            # the warpgroup's buffer: its own region after the stages, or with epi="ring" its offset in
            # the stage of a tile's last k-block (the stage's address is added tile by tile)
            own = k.mul(c, WG_M * cfg.pass_cols * 2, mode="lo") if ring_epi else \
                k.mad(c, WG_M * cfg.pass_cols * 2, cbuf, mode="lo")
            epi = _epi_setup(k, own, tid, warp, lane, boxes=tma_out)
            wg_bar = k.add(c, 1)                          # named barrier of this warpgroup (0 is the CTA's)
            passes = cfg.passes
        if defer:
            # the last pass of the previous tile waits in the buffer; it is copied out while the
            # first k-block of the next tile runs on the tensor cores
            pending = k.reg(pg.pred, "c_pending")
            k.mov(0, dst=pending)
            pmb, pnb = k.reg(pg.u32, "c_mb"), k.reg(pg.u32, "c_nb")

            def flush_deferred():
                _epi_copy_out(k, epi, passes - 1, gc, M, N, pmb, pnb, c, bn)
                k.bar_sync(wg_bar, 128)
                k.mov(0, dst=pending)
            flush = flush_deferred
        held_pass = cfg.held
        if storer:
            # pass 0 of a tile goes to the buffer at its end; pass 1 waits in registers and is written
            # at k-block STORER_DEFER_KB of the next tile, when the storer warp has drained pass 0.
            # Each pass is one phase of both barriers: pass p waits for the buffer with parity p ^ 1
            e_full = k.add(bars, k.shl(k.add(c, 2 * S), 3))
            e_empty = k.add(e_full, 8 * NC)
            # bm=192/256: no registers to spare, every pass goes out at the tile's end
            held = None if not held_pass else [(k.reg(pg.b32, f"c1_{j}"), k.reg(pg.b32, f"c1h_{j}"))
                                      for j in range(EPI_COLS // 8)]
            pending = k.reg(pg.pred, "c_pending")
            k.mov(0, dst=pending)
            odd_passes = cfg.passes % 2 == 1
            epar = k.mov(0, type=pg.u32) if odd_passes else None
            # epi="ring": the stage that holds the held pass's buffer (the previous tile's last)
            hstage = k.reg(pg.u32, "c_hstage") if ring_epi else None

            def at(stage):
                """The epilogue addresses with the buffer in `stage` (epi="ring"), or as set up."""
                return dict(epi, s_row_base=k.add(epi["s_row_base"], stage)) if ring_epi else epi

            def flush_held():
                k.mbarrier_wait(e_empty, parity=0, timeout_cycles=WAIT_LIMIT_CYCLES)
                _epi_stmatrix(k, at(hstage), held, 0)
                # tma: every thread makes its stmatrix writes visible to the async proxy (the TMA
                # engine) before the hand-off; the check also wants it before the next wgmma
                _epi_fence(k)
                k.mbarrier_arrive(e_full)
                k.mov(0, dst=pending)
            flush = flush_held
        k.mov(unit0, dst=u)
        top, done = k.new_label("c_tile"), k.new_label("c_done")
        if walk is not None:
            cwalk, ckb0, ckb1 = walk.cursor("c")
        # sk=2: the streamed tiles (at most two) whose partial this warpgroup parked, summed after the walk
        # (sk=3: at most one, the CTA's only item)
        parked = (k.mov(0, type=pg.u32), [k.reg(pg.u32, f"c_park{i}") for i in range(2 if cfg.sk == 2 else 1)]) \
            if cfg.sk >= 2 else None
        k.place(top)
        if walk is not None:
            k.bra(done, guard=k.not_(walk.next(cwalk, u, ckb0, ckb1)))
            skip = k.new_label("c_next")                  # a split tile's head ends at its partial
        else:
            k.bra(done, guard=k.setp("ge", u, units))
        if mixed:
            # a 128-row tile has no rows for consumer 2: it only keeps the ring's count, waiting for
            # each stage and releasing it at once (the empty barriers expect all three consumers)
            if cfg.mix:
                big_c = _unit_kind(k, u, u1, units, cfg.mix)[0]
                idle = k.setp("eq", c, NC - 1, bool_op="and", c=k.not_(big_c))
            else:
                idle = k.setp("ge", u, u1, bool_op="and", c=k.setp("eq", c, NC - 1))
            skip = k.new_label("c_next")
            with k.if_(idle):
                if cfg.split_hold:
                    with k.if_(pending):                  # its pass held from a 192-row tile
                        flush()
                with k.for_range(0, nk, name="kb_idle"):
                    ring.wait(bars, timeout_cycles=WAIT_LIMIT_CYCLES)
                    _release(k, bars, None, ring.index, S, guard=signal)
                    ring.advance()
            k.bra(skip, guard=idle)
        else:
            mb, nb = _tile(k, u, rank, tiles_n, mcs, cl, cfg.group, cfg.serp)
        rows_live = wg_live = None
        if cfg.sk and cfg.bn <= EPI_COLS:
            # stream-K runs where tiles are few, often with a few rows of A against a large B (decode-like):
            # a warpgroup whose m64 block lies past M issues no wgmma (it still waits for and releases
            # every stage), and a warp whose 16 rows of the block lie past M stores, reads and adds no
            # partial (bench/LOG.md round 31, sk=1: 0.88-0.95x the time at M <= 64)
            # (the predicates are set where they are used. The 128 x 256 kernel, whose 128 accumulators
            # leave no register for wg_row, spills 4 bytes with it, so it goes without)
            wg_row = k.mad(c, WG_M, _mul_const(k, mb, cfg.bm), mode="lo")
            rows_live = functools.partial(_rows_below, k, wg_row, M, warp)
            wg_live = functools.partial(_rows_below, k, wg_row, M)
        def mmas(da, db, parts):
            """The k-block's wgmma for the N parts `parts` of every m64 block, k-step by k-step."""
            for step in range(bk // K_STEP):
                a_off = tile_a.slice_offset(step) >> 4
                b_off = tile_b.slice_offset(step) >> 4
                for j, fj in enumerate(frags):
                    a_offj = a_off + ((j * WG_M * bk * 2) >> 4)   # block j: 64 rows further down
                    for h in parts:
                        # N part h: bn / nsplit rows (nt) or whole 64-column panels (nn) further on
                        b_offh = b_off + ((h * (bn // cfg.nsplit) * bk * 2) >> 4)
                        k.wgmma_mma_async(cfg.shape, fj[h], k.add(da, a_offj, type=pg.u64) if a_offj else da,
                                          k.add(db, b_offh, type=pg.u64) if b_offh else db,
                                          dtype="f32", atype="bf16", btype="bf16",
                                          trans_b=1 if cfg.layout == "nn" else None)

        def stage_descs():
            ring.wait(bars, timeout_cycles=WAIT_LIMIT_CYCLES)                  # full
            soff = k.cvt(k.mul(ring.index, cfg.stage_bytes >> 4, mode="lo"), pg.u64, pg.u32)
            return k.add(desc_a0, soff, type=pg.u64), k.add(desc_b0, soff, type=pg.u64)

        def zero(h_parts):
            for fj in frags:
                for h in h_parts:
                    for r in fj[h]:
                        k.mov(0.0, dst=r)

        all_parts = range(cfg.nsplit)
        if cfg.split_hold:
            # k-block 0 on its own (K >= 1, so every tile has one): N part 0 into freshly zeroed
            # accumulators, the held pass of the previous tile to the buffer while those wgmma run,
            # then part 1 (its accumulators are only live from here, beside part 0's and no held pass)
            da, db = stage_descs()
            zero([0])
            k.wgmma_fence()
            mmas(da, db, [0])
            k.wgmma_commit_group()
            with k.if_(pending):
                flush()
            zero(range(1, cfg.nsplit))
            k.wgmma_fence()
            mmas(da, db, range(1, cfg.nsplit))
            k.wgmma_commit_group()
            k.wgmma_wait_group(cfg.lag)
            if not cfg.lag:
                _release(k, bars, peer_bars, ring.index, S, guard=signal)
            k.mov(ring.index, dst=prev)
            ring.advance()
            kb0 = 1
        else:
            zero(all_parts)
            kb0 = 0
        # the item's k-blocks: [ckb0, ckb1) of its tile (at least one) with stream-K, else all of them
        kb_lo, kb_hi = (ckb0, ckb1) if walk is not None else (kb0, nk)
        has_prev = k.setp("ne", nk, 0, bool_op="and", c=signal)

        def k_loop(mma: bool):
            """The item's k-blocks; without mma (a warpgroup wholly past M) only the ring's waits and releases."""
            with k.for_range(kb_lo, kb_hi, name="kb") as kb:
                da, db = stage_descs()
                if mma:
                    k.wgmma_fence()
                    mmas(da, db, all_parts)
                    k.wgmma_commit_group()
                if defer:
                    with k.if_(k.setp("eq", kb, 0, bool_op="and", c=pending)):
                        flush()
                if storer and held_pass and not cfg.split_hold:
                    with k.if_(k.setp("eq", kb, STORER_DEFER_KB, bool_op="and", c=pending)):
                        flush()
                k.wgmma_wait_group(cfg.lag)
                if cfg.lag:
                    # the previous k-block's stage, read by now (none before the first k-block)
                    _release(k, bars, peer_bars, prev, S,
                             guard=signal if kb0 else k.setp("ne", kb, kb_lo, bool_op="and", c=signal))
                else:
                    _release(k, bars, peer_bars, ring.index, S, guard=signal)
                k.mov(ring.index, dst=prev)
                ring.advance()
        if wg_live is not None:
            # one loop for each case, so a live warpgroup's k-blocks carry no test of their own (with the
            # test in the loop, full tiles ran 1 % slower: bench/LOG.md round 31)
            live = k.if_else(wg_live())
            with live.then():
                k_loop(True)
            with live.otherwise():
                k_loop(False)
        else:
            k_loop(True)
        k.wgmma_wait_group(0)
        if ring_epi:
            # the last k-block's stage becomes the buffers (the storers release it to the producer);
            # the other consumers may still be reading it, so the tile's consumers meet first
            # (barrier 4: the three of a 192-row tile, 5: the two of a 128-row one)
            tstage = k.mad(prev, cfg.stage_bytes, base, mode="lo")
            if mixed:
                if not cfg.mix:
                    big_c = k.setp("lt", u, u1)
                k.bar_sync(4, 3 * 128, guard=big_c)
                k.bar_sync(5, 2 * 128, guard=k.not_(big_c))
            else:
                k.bar_sync(4, NC * 128)
            epi_t = at(tstage)
        elif smem_epi or storer:
            epi_t = epi
        if cfg.lag and not ring_epi:
            _release(k, bars, peer_bars, prev, S, guard=has_prev)
        if trace is not None and walk is not None:
            # stream-K: the item's k-blocks are done (a parked or head item has no epilogue to hand off)
            _stamp_item(k, trace, tile_no, tracer)
        if cfg.sk == 3:
            _stream_k_park_cluster(k, cfg, acc, walk, u, c, tid, ckb0, ckb1, skip, parked, base, rows_live)
        elif parked is not None:
            _stream_k_park(k, cfg, acc, walk, u, c, tid, signal, wg_bar, ckb0, ckb1, skip, parked, rows_live)
        elif walk is not None:
            _stream_k_fixup(k, cfg, acc, walk, u, c, tid, signal, wg_bar, ckb0, ckb1, skip, rows_live)
        if storer and not held_pass:
            # pass p: columns h of block j; each pass is one phase of the buffer's barriers. With an
            # even number of passes a tile pass p waits for the buffer with parity p ^ 1; with one pass
            # a tile the parity alternates from tile to tile (epar, flipped after each tile written)
            cpb = bn // cfg.pass_cols
            for j, a in enumerate(accs):
                pairs = _pack(k, a, bn)
                for h in range(cpb):
                    p = j * cpb + h
                    # the buffer is free once the storer has finished the phase before this pass's
                    k.mbarrier_wait(e_empty, parity=_pass_parity(k, epar, p + 1), timeout_cycles=WAIT_LIMIT_CYCLES)
                    _epi_stmatrix(k, epi_t, pairs, h, cols=cfg.pass_cols)
                    _epi_fence(k)
                    k.mbarrier_arrive(e_full)
            if odd_passes:
                k.xor(epar, 1, dst=epar)
        elif storer:
            if not cfg.split_hold:
                with k.if_(pending):                      # a tile of at most STORER_DEFER_KB k-blocks
                    flush()
            pairs = _pack(k, acc, EPI_COLS) + _pack(k, acc, bn, held=held, start=EPI_COLS // 8)
            k.mbarrier_wait(e_empty, parity=1, timeout_cycles=WAIT_LIMIT_CYCLES)
            _epi_stmatrix(k, epi_t, pairs, 0)
            _epi_fence(k)
            k.mbarrier_arrive(e_full)
            k.mov(1, dst=pending)
            if ring_epi:
                k.mov(tstage, dst=hstage)
        elif smem_epi:
            pairs = _pack(k, acc, bn)
            if defer:
                with k.if_(pending):                      # a tile without k-blocks
                    flush()
            for p in range(passes - 1 if defer else passes):
                if p:
                    k.bar_sync(wg_bar, 128)              # the previous pass has been read back
                _epi_stmatrix(k, epi, pairs, p)
                k.bar_sync(wg_bar, 128)
                _epi_copy_out(k, epi, p, gc, M, N, mb, nb, c, bn)
            k.bar_sync(wg_bar, 128)                      # the buffer is free again
            if defer:
                _epi_stmatrix(k, epi, pairs, passes - 1)
                k.bar_sync(wg_bar, 128)
                k.mov(mb, dst=pmb)
                k.mov(nb, dst=pnb)
                k.mov(1, dst=pending)
            _epi_fence(k)
        else:
            _store_direct(k, _pack(k, acc, bn), gc, M, N, mb, nb, c, warp, lane, bn)
        if trace is not None and walk is None:
            # the tile's epilogue is handed off (its last pass may still wait in registers)
            _stamp_item(k, trace, tile_no, tracer)
        if mixed or walk is not None:
            k.place(skip)
        if walk is None:
            k.add(u, nunits, dst=u)
        k.bra(top)
        k.place(done)
        if defer or (storer and held_pass):
            with k.if_(pending):
                flush()
        if trace is not None:
            with k.if_(tracer):
                _stamp(k, trace, "walk_done")
        if cfg.sk == 3:
            _cluster_phase(k)                             # every part's partial is in its shared memory
            _stream_k_cluster_sum(k, cfg, walk, c, tid, warp, lane, parked, base,
                                  k.cvta(k.ld_param(pcs), "global", to=True), M, N,
                                  lambda unit: _tile(k, unit, rank, tiles_n, mcs, cl, cfg.group, cfg.serp),
                                  rows_live is not None)
        elif parked is not None:
            _stream_k_reduce(k, cfg, walk, c, tid, warp, lane, signal, wg_bar, parked,
                             k.cvta(k.ld_param(pcs), "global", to=True), M, N,
                             lambda unit: _tile(k, unit, rank, tiles_n, mcs, cl, cfg.group, cfg.serp),
                             rows_live is not None)
        if trace is not None:
            with k.if_(tracer):
                _stamp(k, trace, "consumers_done")
    if cfg.sk == 3:
        _cluster_phase(k)                                 # no CTA leaves while the others read its partials
    _leave(k, cl)
    k.ret()
    return k


def _kernel_inline(m: pg.Module, cfg: Config):
    """producer=0: the bm=192 kernel without a producer warpgroup. 384 threads, three consumer
    warpgroups at 168 registers, so each k-step is one whole m64n256k16 per warpgroup (no second read
    of A from shared memory, see `Config.nsplit`). The loads come from one thread of consumer 2 (the
    warpgroup that sits out the 128-row tiles): it fills the ring before the first tile, and each time
    its warpgroup has released a stage it waits for that stage's "empty" barrier (all three releases)
    and loads the next k-block into it, walking the tiles on its own copy of the unit and k-block
    counters, S k-blocks ahead of the consumers. Each warpgroup writes its 64 x 256 piece in two
    64 x 128 passes through its own buffer: stmatrix, a fence for the async proxy, and one thread's
    TMA stores; before a pass overwrites the buffer that thread waits until the previous pass's
    stores have read it. Held (hold=1): the second pass waits in 32 registers and is written during
    the next tile's first k-block, which runs as two m64n128k16 halves so that only half of the 128
    accumulators are live beside it; hold=0 writes both passes at the tile's end. bn=192 (192 x 192
    tiles of m64n192k16) writes its 64 x 192 piece in one pass."""
    S, NC, bk, bn, cl = cfg.stages, cfg.consumers, cfg.bk, cfg.bn, cfg.cluster
    k = m.entry(cfg.name, reqntid=cfg.threads, maxnreg=cfg.launch_regs)
    tmap_a = k.param_bytes("tmap_a", 128, align=64)
    tmap_b = k.param_bytes("tmap_b", 128, align=64)
    tmap_c = k.param_bytes("tmap_c", 128, align=64)
    pm, pn, pk = k.param("m", pg.u32), k.param("n", pg.u32), k.param("k", pg.u32)
    psplit = k.param("m_split", pg.u32)
    if cfg.sk:
        pws, psk = k.param_ptr("ws", align=16), k.param("sk_first", pg.u32)
    dyn = m.extern_shared(f"smem_{cfg.name}", align=1024)

    M, N, K = k.ld_param(pm), k.ld_param(pn), k.ld_param(pk)
    tid = k.tid.x
    c = k.shr(tid, 7)                                     # consumer warpgroup 0 .. 2
    lane = k.and_(tid, 31)
    warp = k.and_(k.shr(tid, 5), 3)
    base = k.and_(k.add(k.mov(dyn, type=pg.u32), 1023), ~1023 & 0xFFFFFFFF)
    cbuf = k.add(base, S * cfg.stage_bytes)
    bars = k.add(cbuf, epi_bytes(cfg))
    empties = k.add(bars, 8 * S)
    with k.if_(k.setp("eq", tid, 0)):
        _prefetch_maps(k, tmap_a, tmap_b, tmap_c)
        for s in range(S):
            k.mbarrier_init(k.add(bars, 8 * s), 1)                 # full: the loading thread's arrive
            k.mbarrier_init(k.add(empties, 8 * s), NC * cl)        # empty: one release per warpgroup of the cluster
        k.fence_mbarrier_init()
    tiles_n = _div_const(k, k.add(N, bn - 1), bn)
    rank, unit0, nunits = _meet(k, cl)
    _after_meet(k, cfg)
    if cl > 1:
        # a cluster of 2 (`Config.shares_a`): its work units are pairs of neighbouring block columns,
        # CTA rank r taking column 2 j + r (past N when tiles_n is odd: zero B, nothing stored)
        unit_cols = k.shr(k.add(tiles_n, 1), 1)
        peer_bars = k.mapa(bars, k.xor(rank, 1), space="shared::cluster", type=pg.u32)
    else:
        peer_bars, unit_cols = None, tiles_n

    def column(ncl):
        """The block column of this CTA in the unit's column `ncl` (a pair of columns for a cluster)."""
        return k.mad(ncl, 2, rank, mode="lo") if cl > 1 else ncl

    mixed_tile = _mixed_units(k, cfg, M, k.ld_param(psplit), unit_cols)
    units = mixed_tile[1]
    nk = k.shr(k.add(K, bk - 1), bk.bit_length() - 1)        # >= 1 (check_shape: K >= 1)
    if cfg.sk:
        walk = _SkWalk(k, cfg, pws, psk, units, nk, unit0, nunits, M)
    signal = k.setp("eq", k.and_(tid, 127), 0)             # one thread per warpgroup releases and stores
    # the thread that issues the loads: lane 0 of the loading warp (lwarp), else one of consumer 2's
    loader = k.setp("eq", tid, 128 * NC if cfg.lwarp else 128 * (NC - 1))
    pols = _load_policies(k, cfg, unit_cols, nunits)
    hint_c = L2_HINTS[cfg.l2][2]
    pol_c = None if hint_c is None else k.createpolicy(hint_c)

    # the loading thread's position: its own walk of the ring and of the (unit, k-block) sequence
    lring = k.stage_ring(S, name="lstage")
    lu = k.mov(unit0, type=pg.u32)
    lkb = k.mov(0, type=pg.u32)
    if cfg.sk:
        # the end of the walk sets lu = units, so the loads stay gated on `lu < units` alone: gated on a
        # predicate register as well, ptxas could not prove the TMA coordinates warp-uniform and wrapped
        # each load in an elect loop (3072^3 on 128 CTAs: 88-89 us against 80 us; bench/LOG.md round 11)
        lkb1 = k.reg(pg.u32, "l_kb1")
        lwalk = walk.start()
    # the loading thread's tile, kept from one k-block to the next: A's first row, B's first column,
    # the bytes a stage expects and whether it is a 192-row tile
    lrow, lcol, ltx = (k.reg(pg.u32, name) for name in ("l_row", "l_col", "l_tx"))
    lbig = k.reg(pg.pred, "l_big")

    def load_tile():
        row_a, nb_l, big = _mixed_tile(k, lu, *mixed_tile)
        k.mov(row_a, dst=lrow)
        k.mul(column(nb_l), bn, mode="lo", dst=lcol)
        k.selp(cfg.stage_bytes, cfg.stage_bytes - WG_M * bk * 2, big, type=pg.u32, dst=ltx)
        k.mov(big, dst=lbig)

    def load_next():
        """The loading thread: the next k-block of its sequence into the next stage of its ring, once
        all three warpgroups have released that stage (nothing past the last unit)."""
        with k.if_(k.setp("lt", lu, units, bool_op="and", c=loader)):
            lring.wait(empties, flip=True, timeout_cycles=WAIT_LIMIT_CYCLES)
            full = lring.addr(bars, 8)
            k.mbarrier_arrive_expect_tx(full, ltx)
            _load_stage(k, cfg, lring.addr(base, cfg.stage_bytes), full, tmap_a, tmap_b,
                        k.shl(lkb, bk.bit_length() - 1), lrow, lcol, lbig, rank, pols)
            lring.advance()
            k.add(lkb, 1, dst=lkb)
            with k.if_(k.setp("eq", lkb, lkb1 if cfg.sk else nk)):   # the next tile of the sequence
                if cfg.sk:
                    k.mov(units, dst=lu, guard=k.not_(walk.next(lwalk, lu, lkb, lkb1)))   # none left
                else:
                    k.mov(0, dst=lkb)
                    k.add(lu, nunits, dst=lu)
                load_tile()

    with k.if_(loader):
        if cfg.sk:
            k.mov(units, dst=lu, guard=k.not_(walk.next(lwalk, lu, lkb, lkb1)))
        load_tile()
    leave = k.new_label("c_leave") if cfg.lwarp else None     # where the loading warp's other lanes go
    if cfg.lwarp:
        # the loading warp: lane 0 walks every k-block of this CTA's units into the ring, each once its
        # stage is released; the other lanes have nothing to do
        consumer = k.setp("lt", tid, 128 * NC)
        l_top, l_end = k.new_label("l_top"), k.new_label("l_end")
        k.bra(l_end, guard=k.not_(loader))
        k.place(l_top)
        k.bra(l_end, guard=k.setp("ge", lu, units))
        load_next()
        k.bra(l_top)
        k.place(l_end)
        k.bra(leave, guard=k.not_(consumer))
        load_more = lambda: None                          # noqa: E731 - the consumers load nothing
    else:
        for _ in range(S):                                # fill the ring
            load_next()
        load_more = load_next

    tile_a, tile_b = cfg.tiles()
    desc_a0 = k.wgmma_descriptor(k.mad(c, WG_M * bk * 2, base, mode="lo"), tile_a)
    desc_b0 = k.wgmma_descriptor(k.add(base, cfg.a_stage), tile_b)
    frag = k.wgmma_fragment("d", cfg.shape, dtype="f32", atype="bf16", name="acc")
    half = len(frag) // 2
    halves = (pg.RegArray(frag[:half]), pg.RegArray(frag[half:]))   # the left and right column halves
    half_shape = f"m64n{bn // 2}k{K_STEP}"
    own = k.mad(c, WG_M * cfg.pass_cols * 2, cbuf, mode="lo")   # this warpgroup's buffer
    epi = _epi_setup(k, own, tid, warp, lane, boxes=True)
    wg_bar = k.add(c, 1)                                  # named barrier of this warpgroup (0 is the CTA's)
    ring = k.stage_ring(S)
    prev = k.reg(pg.u32, "prev")
    hold = cfg.held
    if hold:
        # the second pass of a tile waits in 32 registers until the next tile's first k-block
        held = [(k.reg(pg.b32, f"c1_{j}"), k.reg(pg.b32, f"c1h_{j}")) for j in range(EPI_COLS // 8)]
        pending = k.reg(pg.pred, "c_pending")
        k.mov(0, dst=pending)
        hrow, hcol = k.reg(pg.u32, "c_hrow"), k.reg(pg.u32, "c_hcol")

    pc = cfg.pass_cols                                    # 128 (two passes a tile), or bn=192's whole row

    def write_pass(pairs, p: int, row, col0):
        """Pass p (columns p * pc ..) of `pairs` through the buffer: once the previous pass's stores
        have read it, stmatrix, fence for the async proxy, and one thread's TMA stores from column col0."""
        with k.if_(signal):
            k.cp_async_bulk_wait_group(0, read=True)
        k.bar_sync(wg_bar, 128)
        _epi_stmatrix(k, epi, pairs, p, cols=pc)
        _epi_fence(k)
        k.bar_sync(wg_bar, 128)
        with k.if_(signal if cl == 1 else k.and_(signal, k.setp("lt", col0, N))):
            for bx in range(pc // TMA_BOX):
                col = k.add(col0, bx * TMA_BOX) if bx else col0
                k.cp_async_bulk_tensor(k.add(own, bx * WG_M * TMA_BOX * 2), tmap_c, [col, row],
                                       direction="store", cache_policy=pol_c)
            k.cp_async_bulk_commit_group()

    def flush():
        write_pass(held, 0, hrow, hcol)
        k.mov(0, dst=pending)

    def mmas(da, db, d, shape, col_rows: int = 0):
        """One k-block of wgmma into d; col_rows: B's first row (nt) or column (nn) for these columns."""
        for step in range(bk // K_STEP):
            a_off = tile_a.slice_offset(step) >> 4
            b_off = (tile_b.slice_offset(step) + col_rows * bk * 2) >> 4
            k.wgmma_mma_async(shape, d, k.add(da, a_off, type=pg.u64) if a_off else da,
                              k.add(db, b_off, type=pg.u64) if b_off else db, dtype="f32", atype="bf16",
                              btype="bf16", trans_b=1 if cfg.layout == "nn" else None)

    def stage_descs():
        ring.wait(bars, timeout_cycles=WAIT_LIMIT_CYCLES)                     # full
        soff = k.cvt(k.mul(ring.index, cfg.stage_bytes >> 4, mode="lo"), pg.u64, pg.u32)
        return k.add(desc_a0, soff, type=pg.u64), k.add(desc_b0, soff, type=pg.u64)

    u = k.mov(unit0, type=pg.u32)
    top, done, nxt = k.new_label("c_tile"), k.new_label("c_done"), k.new_label("c_next")
    if cfg.sk:
        cwalk, ckb0, ckb1 = walk.cursor("c")
        kb_lo, kb_hi = ckb0, ckb1
    else:
        kb_lo, kb_hi = 0, nk
    k.place(top)
    if cfg.sk:
        k.bra(done, guard=k.not_(walk.next(cwalk, u, ckb0, ckb1)))
    else:
        k.bra(done, guard=k.setp("ge", u, units))
    tile_row, nb, big = _mixed_tile(k, u, *mixed_tile)
    nb = column(nb)
    # a 128-row tile has no rows for consumer 2: it only keeps the ring's count (and loads)
    idle = k.setp("eq", c, NC - 1, bool_op="and", c=k.not_(big))
    with k.if_(idle):
        if hold:
            with k.if_(pending):                          # its pass held from a 192-row tile
                flush()
        with k.for_range(kb_lo, kb_hi, name="kb_idle"):
            ring.wait(bars, timeout_cycles=WAIT_LIMIT_CYCLES)
            _release(k, bars, peer_bars, ring.index, S, guard=signal)
            ring.advance()
            load_more()
    k.bra(nxt, guard=idle)
    if hold:
        # k-block 0 (K >= 1: every tile has one) in two halves: columns 0-127 into zeroed
        # accumulators, the held pass to the buffer while they run, then columns 128-255 (whose
        # accumulators only come to life once the held registers are free)
        da, db = stage_descs()
        for r in halves[0]:
            k.mov(0.0, dst=r)
        k.wgmma_fence()
        mmas(da, db, halves[0], half_shape)
        k.wgmma_commit_group()
        with k.if_(pending):
            flush()
        for r in halves[1]:
            k.mov(0.0, dst=r)
        k.wgmma_fence()
        mmas(da, db, halves[1], half_shape, col_rows=bn // 2)
        k.wgmma_commit_group()
        k.mov(ring.index, dst=prev)
        ring.advance()
        kb0 = 1
    else:
        for r in frag:
            k.mov(0.0, dst=r)
        kb0 = kb_lo
    with k.for_range(kb0, kb_hi, name="kb") as kb:
        da, db = stage_descs()
        k.wgmma_fence()
        mmas(da, db, frag, cfg.shape)
        k.wgmma_commit_group()
        k.wgmma_wait_group(1)
        # the previous k-block's stage has been read: release it, and (loading thread) refill it
        if hold:
            _release(k, bars, peer_bars, prev, S, guard=signal)
            load_more()
        else:
            with k.if_(k.setp("ne", kb, kb_lo)):
                _release(k, bars, peer_bars, prev, S, guard=signal)
                load_more()
        k.mov(ring.index, dst=prev)
        ring.advance()
    k.wgmma_wait_group(0)
    _release(k, bars, peer_bars, prev, S, guard=signal)
    load_more()
    if cfg.sk:
        _stream_k_fixup(k, cfg, frag, walk, u, c, tid, signal, wg_bar, ckb0, ckb1, nxt)
    row = k.mad(c, WG_M, tile_row, mode="lo")
    col0 = k.mul(nb, bn, mode="lo")
    if hold:
        write_pass(_pack(k, list(frag), EPI_COLS), 0, row, col0)
        _pack(k, list(frag), bn, held=held, start=EPI_COLS // 8)
        k.mov(row, dst=hrow)
        k.add(col0, EPI_COLS, dst=hcol)
        k.mov(1, dst=pending)
    else:
        pairs = _pack(k, list(frag), bn)
        for p in range(bn // pc):
            write_pass(pairs, p, row, k.add(col0, p * pc) if p else col0)
    k.place(nxt)
    if not cfg.sk:
        k.add(u, nunits, dst=u)
    k.bra(top)
    k.place(done)
    if hold:
        with k.if_(pending):
            flush()
    with k.if_(signal):
        k.cp_async_bulk_wait_group(0)                     # C is written before the thread exits
    if leave is not None:
        k.place(leave)
    _leave(k, cl)
    k.ret()
    return k


class _SkWalk:
    """Stream-K's walk over a CTA's work items (`sk_plan`), the same in every thread that walks it: units
    below sk_first in whole rounds (FR a CTA: unit0 + i P), then the k-blocks of the other tiles, I in
    all, in even ranges [gs, ge) (64-bit products, I < 2^32), walked from the end of the range. The
    kernel's parameters: `pws` the workspace (flags, then partials), `psk` sk_first."""

    def __init__(self, k, cfg: Config, pws, psk, units, nk, unit0, nunits, M, fixup: bool = True):
        """fixup=False: a walker that only needs the items (the workspace is not loaded; fewer live registers
        for a producer warpgroup after setmaxnreg). M: the rows of C (`_skew`)."""
        self.k, self.nk, self.unit0, self.nunits = k, nk, unit0, nunits
        self.sk_first = k.ld_param(psk)
        self.ws = k.cvta(k.ld_param(pws), "global", to=True) if fixup else None
        self.fr = _udiv(k, self.sk_first, nunits)
        sk_tiles = k.sub(units, self.sk_first)
        self.total = k.cvt(k.mul(sk_tiles, nk, mode="lo"), pg.u64, pg.u32)
        self.ctas64 = k.cvt(nunits, pg.u64, pg.u32)
        cta64 = k.cvt(unit0, pg.u64, pg.u32)
        self.gs = k.cvt(self.range_end(cta64), pg.u32, pg.u64)
        self.ge0 = k.cvt(self.range_end(k.add(cta64, 1)), pg.u32, pg.u64)
        if cfg.sk == 1 and cfg.producer and cfg.bn == EPI_COLS:      # measured in 128 x 128 tiles only
            self._skew(sk_tiles, units, M)
        # the workspace: a u32 flag per (CTA, warpgroup), or with sk=2 a u32 count per (streamed tile,
        # warpgroup), padded to 256 bytes, then the partials
        self.flag_bytes = None if not fixup else \
            k.and_(k.add(k.mul(nunits if cfg.sk != 2 else sk_tiles, 4 * cfg.consumers, mode="lo"), 255),
                   ~255 & 0xFFFFFFFF)

    def _skew(self, sk_tiles, units, M):
        """sk=1 in 128 x 128 tiles where every tile is streamed in two equal parts (a grid of twice the
        tiles) over more than SK_SKEW_MIN_ROWS rows: the owner's part (the second) starts SK_SKEW k-blocks
        earlier and the head's ends as much earlier (at most a quarter of a part), so the head's partial is
        stored by about the time the owner's k-loop ends instead of after it (bench/LOG.md round 32)."""
        k = self.k
        halves = k.setp("eq", k.shl(sk_tiles, 1), self.nunits, bool_op="and", c=k.setp("eq", sk_tiles, units))
        skew = k.min(k.shr(self.nk, 3), SK_SKEW)                 # a quarter of a part of nk / 2
        k.mov(0, dst=skew, guard=k.not_(k.setp("gt", M, SK_SKEW_MIN_ROWS, bool_op="and", c=halves)))
        owner = k.setp("ne", k.and_(self.unit0, 1), 0)
        k.sub(self.gs, skew, dst=self.gs, guard=owner)                 # the owner starts earlier
        k.sub(self.ge0, skew, dst=self.ge0, guard=k.not_(owner))       # its head ends earlier

    def range_end(self, c64):
        """Where CTA c64 - 1's range ends and CTA c64's begins: c64 * total / P (u64)."""
        return self._div(self.k.mul(c64, self.total, mode="lo"), self.ctas64)

    def owner(self, kb64):
        """The CTA whose range holds k-block kb64 (u64) of the streamed range, as a u32: the last c with
        range_end(c) <= kb64, which is floor(((kb64 + 1) P - 1) / total) (floor(c total / P) <= kb64
        exactly when c total < (kb64 + 1) P). One division, where walking the CTAs from a known one
        takes one per CTA passed."""
        k = self.k
        return k.cvt(self._div(k.sub(k.mul(k.add(kb64, 1), self.ctas64, mode="lo"), 1), self.total), pg.u32, pg.u64)

    def _div(self, num64, den64):
        """num64 / den64 (u64, den64 < 2^32): in 32 bits where num64 < 2^32 too, which is every launch whose
        streamed k-blocks times its CTAs fit in 32 bits. div.u64 is a long subroutine in SASS; two of them
        in every thread's setup made stream-K's setup 0.9 µs against the plain kernel's 0.3
        (bench/LOG.md round 29)."""
        k = self.k
        small = k.setp("eq", k.shr(num64, 32), 0)
        q = k.reg(pg.u64, "sk_q")
        k.cvt(_udiv(k, k.cvt(num64, pg.u32, pg.u64), k.cvt(den64, pg.u32, pg.u64)), pg.u64, pg.u32, dst=q,
              guard=small)
        k.div(num64, den64, dst=q, guard=k.not_(small))
        return q

    def start(self):
        """A walker's state: (whole units done, the end of the part of the range still to walk)."""
        return self.k.mov(0, type=pg.u32), self.k.mov(self.ge0, type=pg.u32)

    def cursor(self, prefix: str):
        """A walker's state and the registers `next` writes an item's k-blocks to: (state, kb0, kb1)."""
        return self.start(), self.k.reg(pg.u32, f"{prefix}_kb0"), self.k.reg(pg.u32, f"{prefix}_kb1")

    def next(self, state, u_dst, kb0_dst, kb1_dst):
        """The next work item of this CTA into u_dst, kb0_dst, kb1_dst (a unit and its k-blocks
        [kb0, kb1)); returns the predicate 'there is one'. First the FR whole units, then the stream-K
        range from its end: the segment of the tile that holds k-block ge - 1."""
        k, nk, gs = self.k, self.nk, self.gs
        i, ge = state
        whole = k.setp("lt", i, self.fr)
        t = _udiv(k, k.sub(ge, 1), nk)
        tstart = k.mul(t, nk, mode="lo")
        seg = k.max(gs, tstart)
        more = k.setp("gt", ge, gs)
        k.selp(k.mad(i, self.nunits, self.unit0, mode="lo"), k.add(self.sk_first, t), whole, type=pg.u32, dst=u_dst)
        k.selp(0, k.sub(seg, tstart), whole, type=pg.u32, dst=kb0_dst)
        k.selp(nk, k.sub(ge, tstart), whole, type=pg.u32, dst=kb1_dst)
        found = k.or_(more, whole)
        k.add(i, 1, dst=i, guard=whole)
        k.mov(seg, dst=ge, guard=k.and_(k.not_(whole), more))
        return found


# sk=1 over tiles streamed in two parts: the k-blocks the owner's part takes from its head's (`_SkWalk._skew`),
# above SK_SKEW_MIN_ROWS rows. Traced with the operands in DRAM (bench/LOG.md round 32, H100), a head stored
# its partial in 0.7 us at 8 rows and 1.5 at 128, where a k-block took 0.33-0.38 us, and the owner waited
# for it after its k-loop; in graphs against the even split, 2 k-blocks took 0.965-0.98x the time at 100-128
# x 4096^2 and 0.98x at 64 rows, and were 1.01x slower at 8 rows (1 k-block: level); at four parts a tile
# (8 and 64 x 8192^2, the owner adding three partials) 1 or 2 k-blocks were 1.006-1.008x slower
SK_SKEW = 2
SK_SKEW_MIN_ROWS = 32
SK_WAIT_LIMIT_CYCLES = WAIT_LIMIT_CYCLES   # a stream-K owner waiting for its partner's partial traps after this


def _sk_word(k, walk, i):
    """The address of u32 word i of the stream-K workspace's head (a flag, or with sk=2 a count)."""
    return k.add(walk.ws, k.cvt(k.shl(i, 2), pg.u64, pg.u32))


def _sk_part(k, cfg: Config, walk, idx, t):
    """The address of thread t's first 16 bytes in partial slot idx (64 x bn f32, after the head): a
    thread's accumulator group q lies q * 128 * 16 bytes further on."""
    return k.add(walk.ws, k.cvt(k.add(k.mad(idx, WG_M * cfg.bn * 4, walk.flag_bytes, mode="lo"), k.shl(t, 4)),
                                pg.u64, pg.u32))


def _sk_store_partial(k, frag, part, space: str = "global"):
    """A warpgroup's accumulators to its partial slot (`_sk_part`; sk=3: `_sk3_partial` in shared memory,
    space="shared"), thread-linear 16-byte stores."""
    for q in range(len(frag) // 4):
        k.st(pg.mem(part, q * 128 * 16), [frag[4 * q + j] for j in range(4)], pg.f32, space=space)


def _when(k, live, emit):
    """emit() under the predicate live() sets, or unconditionally where live is None."""
    if live is None:
        emit()
    else:
        with k.if_(live()):
            emit()


def _rows_below(k, wg_row, M, warp=None):
    """Whether the warpgroup's first row wg_row (or with `warp`, that warp's first of its 16) lies below M."""
    return k.setp("lt", wg_row if warp is None else k.mad(warp, 16, wg_row, mode="lo"), M)


def _warp_rows_live(k, row0, lane, M):
    """Whether any of the warp's 16 rows (`_direct_rows`' row0 of this lane, its warp's first row plus
    lane / 4) lies below M."""
    return k.setp("lt", k.sub(row0, k.shr(lane, 2)), M)


def _sk_wait(k, addr, cmp: str, value, name: str):
    """Spin until the u32 at addr (acquired at gpu scope) compares `cmp` to value; trap after
    SK_WAIT_LIMIT_CYCLES instead of hanging."""
    t0 = k.sreg("%clock64")
    spin, ready = k.label(f"{name}_wait"), k.new_label(f"{name}_ready")
    k.bra(ready, guard=k.setp(cmp, k.ld(addr, pg.u32, sem="acquire", scope="gpu"), value))
    k.trap(guard=k.setp("gt", k.sub(k.sreg("%clock64"), t0), SK_WAIT_LIMIT_CYCLES))
    k.bra(spin)
    k.place(ready)


def _stream_k_fixup(k, cfg: Config, frag, walk, u, c, tid, signal, wg_bar, kb0, kb1, skip, live=None):
    """Stream-K, after a work item's k-blocks [kb0, kb1) of unit u. An item that stops
    short of the tile's last k-block (kb1 < nk; only the first item of a CTA's streamed range can,
    which it walks right after its whole tiles) stores its accumulators to this CTA's slot of the
    workspace (thread-linear 16-byte stores, one 64 x bn f32 partial per warpgroup), the warpgroup
    meets, one thread releases the slot's flag at gpu scope, and the item ends (branch to `skip`). The
    item that ends the tile but does not start it (kb1 = nk, kb0 > 0) owns it: the tile's other
    k-blocks belong to the CTAs just before this one, cta - 1 down to the one whose range holds the
    tile's first k-block (`_SkWalk.owner`), each of which stored its partial before
    anything it could wait for. For each of them one thread waits to acquire the flag and puts it back
    to 0 for the next launch, the warpgroup meets, and every thread adds the partial to its
    accumulators; the epilogue that follows writes C. Whole tiles pass through. `walk` (`_SkWalk`) gives
    the workspace, this CTA, the streamed tile of unit u and which CTA holds a k-block. `live()` sets a
    predicate, per warp: whether the warp's rows of the tile lie below M; a warp without any stores and
    adds no partial (its rows are never written), though it keeps to the flags and barriers."""
    tile = k.sub(u, walk.sk_first)                                     # the unit's tile of the streamed range
    nk, cta = walk.nk, walk.unit0
    t = k.and_(tid, 127)
    NC = cfg.consumers

    def slot(j):
        """(flag, this thread's part of the partial) of CTA j's slot for this warpgroup."""
        idx = k.mad(j, NC, c, mode="lo")
        return _sk_word(k, walk, idx), _sk_part(k, cfg, walk, idx, t)

    groups = len(frag) // 4                                            # 16-byte groups of accumulators
    head = k.setp("lt", kb1, nk)
    with k.if_(head):
        flag, part = slot(cta)
        _when(k, live, lambda: _sk_store_partial(k, frag, part))
        k.bar_sync(wg_bar, 128)
        k.st(flag, 1, pg.u32, sem="release", scope="gpu", guard=signal)
    k.bra(skip, guard=head)
    with k.if_(k.setp("ne", kb0, 0)):
        first = k.cvt(k.mul(tile, nk, mode="lo"), pg.u64, pg.u32)        # the tile's first k-block of the range
        lo = walk.owner(first)                                           # the CTA that holds it
        j = k.sub(cta, 1)
        more = k.label("sk_part")
        flag, part = slot(j)
        with k.if_(signal):
            _sk_wait(k, flag, "ne", 0, "sk")
            k.st(flag, 0, pg.u32, sem="relaxed", scope="gpu")
        k.bar_sync(wg_bar, 128)

        def add_partial():
            for q in range(groups):
                v = k.ld(pg.mem(part, q * 128 * 16), pg.f32, vec=4, cache="cg")    # L2: the partial is read once
                for jj in range(4):
                    k.add(frag[4 * q + jj], v[jj], dst=frag[4 * q + jj])
        _when(k, live, add_partial)
        # CTA j - 1 has a part of this tile too while j is past the CTA that holds its first k-block
        again = k.setp("gt", j, lo)
        k.sub(j, 1, dst=j)
        k.bra(more, guard=again)


def _stream_k_park(k, cfg: Config, frag, walk, u, c, tid, signal, wg_bar, kb0, kb1, skip, parked, live=None):
    """Stream-K with sk=2, after a work item's k-blocks [kb0, kb1) of unit u. A part of a split tile (kb0 > 0
    or kb1 < nk) stores its accumulators to this CTA's slot for it (thread-linear 16-byte stores, one
    64 x bn f32 partial per warpgroup; slot 0 for an item that stops short of the tile's last k-block,
    slot 1 for the one that ends the tile), the warpgroup meets, one thread adds 1 to the tile's count at
    gpu scope (release), the tile goes into `parked` (count, two tile registers) and the item ends
    (branch to `skip`): `_stream_k_reduce` sums it after the walk. Whole tiles pass through. `live()`, as
    for `_stream_k_fixup`: a warp whose rows lie past M stores nothing."""
    tile = k.sub(u, walk.sk_first)
    nk, cta = walk.nk, walk.unit0
    NC = cfg.consumers
    n_parked, tiles = parked
    head = k.setp("lt", kb1, nk)
    split = k.setp("ne", kb0, 0, bool_op="or", c=head)
    with k.if_(split):
        idx = k.mad(k.add(k.shl(cta, 1), k.selp(0, 1, head, type=pg.u32)), NC, c, mode="lo")
        _when(k, live, lambda: _sk_store_partial(k, frag, _sk_part(k, cfg, walk, idx, k.and_(tid, 127))))
        k.bar_sync(wg_bar, 128)
        k.red("add", _sk_word(k, walk, k.mad(tile, NC, c, mode="lo")), 1, type=pg.u32, sem="release",
              scope="gpu", guard=signal)
        first = k.setp("eq", n_parked, 0)
        k.mov(tile, dst=tiles[0], guard=first)
        k.mov(tile, dst=tiles[1], guard=k.not_(first))
        k.add(n_parked, 1, dst=n_parked)
    k.bra(skip, guard=split)


def _stream_k_reduce(k, cfg: Config, walk, c, tid, warp, lane, signal, wg_bar, parked, gc, M, N, tile_rc,
                     rows_only: bool = False):
    """Stream-K with sk=2, after the walk: for each tile `_stream_k_park` parked, this warpgroup's slice of
    the tile's sum. The tile's parts are CTAs lo .. hi (those whose ranges meet its k-blocks; hi ends the
    tile and parked in slot 1, the others in slot 0); part p = cta - lo of P = hi - lo + 1 takes the
    16-byte accumulator groups [p G / P, (p + 1) G / P) of every thread's G, once one thread has seen the
    tile's count reach P (acquire): it adds the P partials in CTA order (the same sum on every launch),
    reading several parts' predicated loads at once where P is large enough that each part's slice is
    small (`sk2_slice_paths`), and stores the bf16 pairs to C (`c_split`,
    rows and columns past M and N left out). Then one thread adds 1 to the count again (acq_rel); the
    part that brings it to 2P has seen every part finish reading, and puts it back to 0 for the next
    launch. Every part parks all its partials before it
    waits for any, so CTAs that are all resident cannot deadlock. `tile_rc(unit)` gives a unit's
    (block row, block column). rows_only: a warp whose 16 rows lie past M (which parked nothing) reads
    nothing either."""
    nk, cta = walk.nk, walk.unit0
    n_parked, tiles = parked
    NC, groups = cfg.consumers, cfg.bn // 8
    t = k.and_(tid, 127)
    for i in range(2):
        with k.if_(k.setp("gt", n_parked, i)):
            tile = tiles[i]
            first = k.cvt(k.mul(tile, nk, mode="lo"), pg.u64, pg.u32)
            end = k.add(first, k.cvt(nk, pg.u64, pg.u32))
            # lo and hi: the CTAs whose ranges hold the tile's first and last k-blocks
            lo = walk.owner(first)
            hi = walk.owner(k.sub(end, 1))
            parts = k.add(k.sub(hi, lo), 1)
            p = k.sub(cta, lo)
            q0 = k.div(k.mul(p, groups, mode="lo"), parts)
            q1 = k.div(k.mul(k.add(p, 1), groups, mode="lo"), parts)
            count = _sk_word(k, walk, k.mad(tile, NC, c, mode="lo"))
            with k.if_(signal):
                _sk_wait(k, count, "ge", parts, f"sk{i}")
            k.bar_sync(wg_bar, 128)
            mb, nb = tile_rc(k.add(walk.sk_first, tile))
            row, _, col0, addr, addr8 = _direct_rows(k, gc, N, mb, nb, c, warp, lane, cfg.bn)
            # the slice is at most G / 2 groups (P >= 2): unrolled and predicated. Parts are read in batches
            # whose loads are in flight together: with P >= P_lo every part's slice fits S groups, and B
            # parts go in one batch, so the slice costs ceil(P / B) round trips to L2 (a code path for each
            # `sk2_slice_paths` entry; bench/LOG.md rounds 22 and 27)
            nq = k.sub(q1, q0)
            # this thread's 16 bytes of group q0, at the same offset in every part's slot
            qoff = k.cvt(k.shl(q0, 11), pg.u64, pg.u32)
            last = k.add(hi, 1)
            paths = sk2_slice_paths(cfg.bn)
            rows = _warp_rows_live(k, row, lane, M) if rows_only else None
            for pi, (p_lo, S, B) in enumerate(paths):
                fits = k.setp("ge", parts, p_lo)
                if pi + 1 < len(paths):
                    fits = k.setp("lt", parts, paths[pi + 1][0], bool_op="and", c=fits)
                with k.if_(fits if rows is None else k.and_(fits, rows)):
                    has = [k.setp("gt", nq, qq) for qq in range(S)]
                    acc = [k.mov(0.0, type=pg.f32) for _ in range(4 * S)]
                    with k.for_range(lo, last, B, name=f"sk_j{i}_{S}") as j:
                        vs = []
                        for b in range(B):
                            jb = k.add(j, b) if b else j
                            # part jb < P of the tile (the last batch may run past hi)
                            ok = [k.and_(h_, k.setp("lt", jb, last)) for h_ in has] if b else has
                            idx = k.mad(k.add(k.shl(jb, 1), k.selp(1, 0, k.setp("eq", jb, hi), type=pg.u32)), NC, c,
                                        mode="lo")
                            src = k.add(_sk_part(k, cfg, walk, idx, t), qoff)
                            vs.append((ok, [k.ld(pg.mem(src, qq * 128 * 16), pg.f32, vec=4, cache="cg", guard=ok[qq])
                                            for qq in range(S)]))
                        for ok, v in vs:                          # in part order
                            for qq in range(S):
                                for e in range(4):
                                    k.add(acc[4 * qq + e], v[qq][e], dst=acc[4 * qq + e], guard=ok[qq])
                    _sk_store_slice(k, acc, has, q0, row, col0, addr, addr8, M, N)
            k.bar_sync(wg_bar, 128)
            with k.if_(signal):
                old = k.atom("add", count, 1, type=pg.u32, sem="acq_rel", scope="gpu")
                k.st(count, 0, pg.u32, sem="relaxed", scope="gpu",
                     guard=k.setp("eq", old, k.sub(k.shl(parts, 1), 1)))


def _sk_store_slice(k, acc, has, q0, row, col0, addr, addr8, M, N):
    """A part's summed slice of a split tile to C (sk=2 and 3): acc holds groups q0 + qq (where has[qq]; None: always)
    of this thread's 16-byte accumulator groups, each stored as two bf16 pairs (rows row and row + 8,
    `_direct_rows`), leaving out rows and columns past M and N."""
    ok0 = k.setp("lt", row, M)
    ok1 = k.setp("lt", k.add(row, 8), M)
    for qq in range(len(has)):
        q = k.add(q0, qq) if qq else q0
        lo2 = k.cvt(acc[4 * qq + 1], pg.bf16x2, pg.f32, b=acc[4 * qq], rnd="rn")
        hi2 = k.cvt(acc[4 * qq + 3], pg.bf16x2, pg.f32, b=acc[4 * qq + 2], rnd="rn")
        # group q: columns 8q + 2(lane % 4) + {0, 1}; N is a multiple of 8, so col < N covers col + 1
        inside = k.setp("lt", k.add(col0, k.shl(q, 3)), N, **({} if has[qq] is None else dict(bool_op="and", c=has[qq])))
        off16 = k.cvt(k.shl(q, 4), pg.u64, pg.u32)
        k.st(k.add(addr, off16), lo2, pg.b32, guard=k.and_(inside, ok0))
        k.st(k.add(addr8, off16), hi2, pg.b32, guard=k.and_(inside, ok1))


def _cluster_phase(k):
    """sk=3: one phase of the cluster barrier, which every thread of every CTA of the cluster passes
    exactly twice (after the partials are parked, and before exit), from wherever its role ends."""
    k.barrier_cluster_arrive(sem="release", aligned=False)
    k.barrier_cluster_wait(acquire=True, aligned=False)


def _sk3_partial(k, cfg: Config, base, c, tid):
    """sk=3: the shared address of this thread's first 16 bytes in warpgroup c's parked partial (64 x bn
    f32 at base + c * 64 * bn * 4, thread-linear: group q of thread t at (q * 128 + t) * 16), the same
    offset in every CTA of the cluster."""
    return k.mad(c, WG_M * cfg.bn * 4, k.add(base, k.shl(k.and_(tid, 127), 4)), mode="lo")


def _stream_k_park_cluster(k, cfg: Config, frag, walk, u, c, tid, kb0, kb1, skip, parked, base, live=None):
    """Stream-K with sk=3, after a work item's k-blocks [kb0, kb1) of unit u. A part of a split tile (the CTA's
    only item: `sk_plan` gives every tile as many parts as a cluster has CTAs, one range each) parks its
    accumulators in the stages, which no load or wgmma uses any more once both consumer warpgroups are
    done with the walk (they meet first): warpgroup c's 64 x bn f32 partial at base + c * 64 * bn * 4,
    thread-linear 16-byte stores (group q of thread t at (q * 128 + t) * 16). The tile goes into
    `parked` and the item ends (branch to `skip`); `_stream_k_cluster_sum` sums it. Whole tiles pass through."""
    n_parked, tiles = parked
    split = k.setp("ne", kb0, 0, bool_op="or", c=k.setp("lt", kb1, walk.nk))
    with k.if_(split):
        k.bar_sync(4, cfg.consumers * 128)               # the other warpgroup's last wgmma has read the ring
        k.fence_proxy_async("shared::cta")               # the stages were written by TMA and read by wgmma
        part = _sk3_partial(k, cfg, base, c, tid)
        # (a warp whose rows lie past M parks nothing)
        _when(k, live, lambda: _sk_store_partial(k, frag, part, space="shared"))
        # (a walk never has a second split item, but nothing here may reach a wgmma or TMA unfenced)
        k.fence_proxy_async("shared::cta")
        k.mov(k.sub(u, walk.sk_first), dst=tiles[0])
        k.add(n_parked, 1, dst=n_parked)
    k.bra(skip, guard=split)


def _stream_k_cluster_sum(k, cfg: Config, walk, c, tid, warp, lane, parked, base, gc, M, N, tile_rc,
                          rows_only: bool = False):
    """Stream-K with sk=3, after the walk and the cluster barrier that follows every part's parking: the
    tile `_stream_k_park_cluster` parked is split between the P CTAs of this cluster, part r = its rank.
    Part r sums the nq = G / P 16-byte accumulator groups [r nq, (r + 1) nq) of every thread's G over the P
    partials, reading each CTA's shared memory through `mapa`, and stores the bf16 pairs to C (`c_split`,
    rows and columns past M and N left out). Part r reads and adds the partials of ranks r, r + 1, ...
    (mod P): the same order on every launch, so the same sum, and at any moment the P readers ask P
    different CTAs (all in rank order would queue every reader on one CTA's shared memory at a time:
    bench/LOG.md round 23, up to 0.9x the time at 16 parts). The code is unrolled for each P of
    SK3_PARTS (a branch on %cluster_nctarank): the loads of as many CTAs as fill SK3_BATCH_REGS
    registers are in flight together, so the slice costs two round trips through the cluster whatever P
    is, instead of one per part (round 22: about 0.5 µs each). A cluster size sk_plan never gives traps.
    rows_only: a warp whose 16 rows lie past M (which parked nothing) reads nothing either."""
    n_parked, tiles = parked
    groups = cfg.bn // 8
    with k.if_(k.setp("ne", n_parked, 0)):
        parts, r = k.sreg("%cluster_nctarank"), k.sreg("%cluster_ctarank")
        mb, nb = tile_rc(k.add(walk.sk_first, tiles[0]))
        row, _, col0, addr, addr8 = _direct_rows(k, gc, N, mb, nb, c, warp, lane, cfg.bn)
        own0 = _sk3_partial(k, cfg, base, c, tid)
        rows = _warp_rows_live(k, row, lane, M) if rows_only else None
        known = None
        for P in (p for p in SK3_PARTS if p > 1):
            nq = groups // P
            batch = max(1, SK3_BATCH_REGS // (4 * nq))             # CTAs whose loads are in flight together
            this = k.setp("eq", parts, P)
            known = this if known is None else k.or_(known, this)
            with k.if_(this if rows is None else k.and_(this, rows)):
                q0 = k.mul(r, nq, mode="lo")
                own = k.add(own0, k.shl(q0, 11))
                acc = None
                for j0 in range(0, P, batch):
                    # the j-th CTA after this one: each CTA's readers start at a different peer
                    srcs = [k.mapa(own, k.and_(k.add(r, j), P - 1), space="shared::cluster", type=pg.u32)
                            for j in range(j0, min(P, j0 + batch))]
                    vs = [[k.ld(pg.mem(src, qq * 128 * 16), pg.f32, vec=4, space="shared::cluster") for qq in range(nq)]
                          for src in srcs]
                    for v in vs:                                     # in the order read
                        if acc is None:
                            acc = [v[qq][e] for qq in range(nq) for e in range(4)]
                        else:
                            acc = [k.add(acc[4 * qq + e], v[qq][e]) for qq in range(nq) for e in range(4)]
                _sk_store_slice(k, acc, [None] * nq, q0, row, col0, addr, addr8, M, N)
        k.trap(guard=k.not_(known))


def _load_policies(k, cfg: Config, tiles_n, nunits):
    """The L2 cache policies of A's and B's loads for `_load_stage` (Config.l2). "auto" for A: where a
    raster group's tiles all run in one round its rows of A are not read again after it, so A's loads
    are issued in two predicated copies, evict_first where that holds and without a hint elsewhere."""
    hint_a, hint_b, _ = L2_HINTS[cfg.l2]
    if hint_a == "auto":
        once = k.setp("le", k.mul(tiles_n, cfg.group, mode="lo"), nunits)
        pol_a = (k.createpolicy("evict_first"), once)
    else:
        pol_a = None if hint_a is None else k.createpolicy(hint_a)
    return pol_a, None if hint_b is None else k.createpolicy(hint_b)


def _load_stage(k, cfg: Config, stage, full, tmap_a, tmap_b, kx, row_a, col_b, big, rank, pols=(None, None)):
    """The TMA loads of one k-block (K offset kx) into `stage`, completing on the mbarrier `full`: A's
    rows from row_a (bm=192: three 64-row boxes, the third only in a 192-row tile, `big`; bm=128: two,
    the second only where `big`), then B's
    columns from col_b (with a cluster, this CTA's share, multicast to both CTAs); pols: the L2 cache
    policies of A's and B's loads (None: no hint; for A also (policy, predicate): the hint only where the
    predicate holds, each A copy issued twice under complementary guards)."""
    bk, bn = cfg.bk, cfg.bn
    pol_a, pol_b = pols
    both = (1 << cfg.cluster) - 1 if cfg.cluster > 1 else None     # multicast to every CTA of the cluster
    mask_a = both if cfg.shares_a else None
    # B: shared between the cluster's CTAs (each loads 1 / cl of it, multicast), or this CTA's own, whole
    cl = 1 if cfg.shares_a else cfg.cluster
    mask = None if cfg.shares_a else both

    def load_a(dst, coords, guard=None):
        if not isinstance(pol_a, tuple):
            k.cp_async_bulk_tensor(dst, tmap_a, coords, mbarrier=full, guard=guard, multicast_mask=mask_a,
                                   cache_policy=pol_a)
            return
        pol, when = pol_a
        for g, hint in ((when, pol), (k.not_(when), None)):
            k.cp_async_bulk_tensor(dst, tmap_a, coords, mbarrier=full, guard=g if guard is None else k.and_(guard, g),
                                   multicast_mask=mask_a, cache_policy=hint)

    if cfg.shares_a:
        # rank r loads A's 64-row boxes r and r + 2 (the third box only in a 192-row tile), each
        # multicast into both CTAs
        box = WG_M * bk * 2
        load_a(k.mad(rank, box, stage, mode="lo"), [kx, k.mad(rank, WG_M, row_a, mode="lo")])
        load_a(k.add(stage, 2 * box), [kx, k.add(row_a, 2 * WG_M)],
               guard=k.and_(big, k.setp("eq", rank, 0)))
    elif big is not None:
        nc = cfg.consumers
        for i in range(nc):
            load_a(k.add(stage, i * WG_M * bk * 2) if i else stage, [kx, k.add(row_a, i * WG_M) if i else row_a],
                   guard=big if i == nc - 1 else None)
    else:
        load_a(stage, [kx, row_a])
    b_base = k.add(stage, cfg.a_stage)
    if cfg.layout == "nt":
        rows = bn // cl                                   # each CTA loads its share of the B rows
        if cl > 1:
            dst = k.mad(rank, rows * bk * 2, b_base, mode="lo")
            y = k.mad(rank, rows, col_b, mode="lo")
        else:
            dst, y = b_base, col_b
        k.cp_async_bulk_tensor(dst, tmap_b, [kx, y], mbarrier=full, multicast_mask=mask, cache_policy=pol_b)
    else:
        panels = bn // PANEL_N // cl                      # each CTA loads its share of the 64-column panels
        for p in range(panels):
            if cl > 1:
                pidx = k.mad(rank, panels, p, mode="lo")
                dst = k.mad(pidx, PANEL_N * bk * 2, b_base, mode="lo")
                x = k.mad(pidx, PANEL_N, col_b, mode="lo")
            else:
                dst = k.add(b_base, p * PANEL_N * bk * 2)
                x = k.add(col_b, p * PANEL_N)
            k.cp_async_bulk_tensor(dst, tmap_b, [x, kx], mbarrier=full, multicast_mask=mask, cache_policy=pol_b)


def _release(k, bars, peer_bars, s, S: int, guard):
    """Arrive on stage s's empty barrier in this CTA and, with a cluster, in the peer CTA (whose
    barrier block starts at the shared::cluster address `peer_bars`)."""
    off = k.add(k.shl(s, 3), 8 * S)
    k.mbarrier_arrive(k.add(bars, off), guard=guard)
    if peer_bars is not None:
        # the default .release.cta semantics: the stage's reads are complete (wgmma.wait_group) and
        # nothing was written, so no cluster-scope release (which would also wait for the wgmma
        # group still in flight) is needed
        k.mbarrier_arrive(k.add(peer_bars, off), space="shared::cluster", guard=guard)


def _pack(k, acc, bn: int, held=None, start: int = 0):
    """The accumulators as bf16 pairs: [(row r pair, row r + 8 pair) for each 8-column group j from
    start], into the registers `held` when given."""
    out = []
    for i, j in enumerate(range(start, bn // 8)):
        dst = held[i] if held is not None else (None, None)
        out.append((k.cvt(acc[4 * j + 1], pg.bf16x2, pg.f32, b=acc[4 * j], rnd="rn", dst=dst[0]),
                    k.cvt(acc[4 * j + 3], pg.bf16x2, pg.f32, b=acc[4 * j + 2], rnd="rn", dst=dst[1])))
    return out


def _direct_rows(k, gc, N, mb, nb, c, warp, lane, bn: int):
    """Where a thread's bf16 pairs of its warpgroup's 64 x bn piece of tile (mb, nb) go in C (bm=128):
    thread (warp w, lane l) holds rows 16w + l/4 (+ 8), columns 8j + 2(l%4) + {0, 1}. Returns (row0,
    the tile's first column, col0, the address of (row0, col0), the same 8 rows further down)."""
    row0 = k.add(k.add(k.shl(mb, 7), k.shl(c, 6)), k.add(k.shl(warp, 4), k.shr(lane, 2)))
    col_b = k.mul(nb, bn, mode="lo")
    col0 = k.add(col_b, k.shl(k.and_(lane, 3), 1))
    addr = k.add(gc, k.mul(k.mad(row0, N, col0, mode="lo"), 2, mode="wide"))
    return row0, col_b, col0, addr, k.add(addr, k.mul(N, 16, mode="wide"))


def _store_direct(k, pairs, gc, M, N, mb, nb, c, warp, lane, bn: int):
    """epi="direct": bf16 pairs straight to C (`_direct_rows`); stores are predicated per row and column
    only on tiles that cross an edge."""
    row0, col_b, col0, addr, addr8 = _direct_rows(k, gc, N, mb, nb, c, warp, lane, bn)
    inside = k.setp("le", k.shl(k.add(mb, 1), 7), M)
    inside = k.setp("le", k.add(col_b, bn), N, bool_op="and", c=inside)
    edge = k.if_else(inside)
    with edge.then():
        for j, (lo, hi) in enumerate(pairs):
            k.st(pg.mem(addr, 16 * j), lo, pg.b32)
            k.st(pg.mem(addr8, 16 * j), hi, pg.b32)
    with edge.otherwise():
        ok0 = k.setp("lt", row0, M)
        ok1 = k.setp("lt", k.add(row0, 8), M)
        for j, (lo, hi) in enumerate(pairs):
            col = k.add(col0, 8 * j)
            # N is a multiple of 8, so col < N also covers col + 1
            k.st(pg.mem(addr, 16 * j), lo, pg.b32, guard=k.setp("lt", col, N, bool_op="and", c=ok0))
            k.st(pg.mem(addr8, 16 * j), hi, pg.b32, guard=k.setp("lt", col, N, bool_op="and", c=ok1))


def _epi_setup(k, buf, tid, warp, lane, boxes: bool = False):
    """Tile-independent addresses of the smem epilogue (see _epi_stmatrix and _epi_copy_out).
    boxes=True (epi="tma"): the buffer is EPI_COLS / TMA_BOX boxes of 64 rows x 128 bytes, each in
    the TMA's 128-byte swizzle (chunk XOR row % 8), instead of 64 rows of 256 bytes."""
    row_bytes = TMA_BOX * 2 if boxes else EPI_COLS * 2
    # stmatrix: lane l gives the address of row l % 8 of matrix l / 8 (matrix m: rows + 8 (m % 2),
    # column group + m / 2); 16-byte chunks are XOR-swizzled with row % 8 = l % 8
    mi = k.shr(lane, 3)
    ri = k.and_(lane, 7)
    srow = k.add(k.add(k.shl(warp, 4), k.shl(k.and_(mi, 1), 3)), ri)
    s_row_base = k.mad(srow, row_bytes, buf, mode="lo")
    # read-back: chunk q = tid % 16 of rows it * 8 + tid / 16
    t = k.and_(tid, 127)
    q = k.and_(t, 15)
    rrow = k.shr(t, 4)
    ld_base = None if boxes else k.add(k.mad(rrow, row_bytes, buf, mode="lo"), k.shl(k.xor(q, k.and_(rrow, 7)), 4))
    return dict(mi=mi, ri=ri, s_row_base=s_row_base, q=q, rrow=rrow, ld_base=ld_base, boxes=boxes)


def _epi_stmatrix(k, e, pairs, p: int, cols: int = EPI_COLS):
    """Pass p's `cols` columns of the bf16 pairs into the warpgroup's buffer: stmatrix.x4 puts four
    8x8 matrices (rows 16w..16w+15, two 8-column groups) per instruction into rows whose 16-byte
    chunks are XOR-swizzled with the row (the 8 rows of a matrix hit 8 bank groups): 256-byte rows,
    or with boxes the 8 chunks of each 64-column box's 128-byte rows (8 KiB per box)."""
    groups = cols // 8
    for g in range(0, groups, 2):
        j = p * groups + g
        if e["boxes"]:
            # chunk g + mi/2 of the pass is chunk (g % 8) + mi/2 of box g / 8 (g is even: no carry)
            chunk = k.add(k.shr(e["mi"], 1), g % 8)
            addr = pg.mem(k.add(e["s_row_base"], k.shl(k.xor(chunk, e["ri"]), 4)), (g // 8) * WG_M * TMA_BOX * 2)
        else:
            chunk = k.add(k.shr(e["mi"], 1), g)          # 16-byte chunk of the matrix row
            addr = k.add(e["s_row_base"], k.shl(k.xor(chunk, e["ri"]), 4))
        k.stmatrix(addr, [pairs[j][0], pairs[j][1], pairs[j + 1][0], pairs[j + 1][1]])


def _epi_copy_out(k, e, p: int, gc, M, N, mb, nb, c, bn: int):
    """The buffer (pass p of tile (mb, nb)) to C: 16-byte loads and stores, each warp instruction
    writing two whole 256-byte row segments; rows and columns past M and N are skipped."""
    row_bytes = EPI_COLS * 2
    gcol = k.add(k.mad(nb, bn, p * EPI_COLS, mode="lo"), k.shl(e["q"], 3))
    grow0 = k.add(k.add(k.shl(mb, 7), k.shl(c, 6)), e["rrow"])
    col_ok = k.setp("lt", gcol, N)                       # N is a multiple of 8: whole chunks
    g_addr = k.add(gc, k.mul(k.mad(grow0, N, gcol, mode="lo"), 2, mode="wide"))
    row_step = k.mul(N, 16, mode="wide")                 # 8 rows of C in bytes
    for it in range(WG_M // 8):
        v = k.ld(pg.mem(e["ld_base"], it * 8 * row_bytes), pg.b32, space="shared", vec=4)
        ok = k.setp("lt", k.add(grow0, it * 8), M, bool_op="and", c=col_ok)
        k.st(g_addr, v, pg.b32, guard=ok)
        if it + 1 < WG_M // 8:
            g_addr = k.add(g_addr, row_step)


def _storer(k, cfg: Config, cbuf, bars, sc, lane, unit0, nunits, units, rank, tiles_n, mcs, gc, M, N):
    """epi="storer": one warp copies consumer sc's buffer to C for every pass of every tile of this CTA
    (the same tile order as the consumers): wait for the buffer to be full, 16-byte loads and stores
    (each instruction two whole 256-byte row segments: lane l takes chunk l % 16 of rows l / 16 + 2i),
    then one arrival per lane on the buffer's empty barrier."""
    S, bn = cfg.stages, cfg.bn
    row_bytes = EPI_COLS * 2
    buf = k.mad(sc, WG_M * row_bytes, cbuf, mode="lo")
    e_full = k.add(bars, k.shl(k.add(sc, 2 * S), 3))
    e_empty = k.add(e_full, 8 * cfg.consumers)
    q = k.and_(lane, 15)
    r0 = k.shr(lane, 4)
    # rows r0 + 2i: the chunk swizzle (row % 8) repeats every 4 iterations, so 4 base addresses
    bases = []
    for j in range(4):
        row = k.add(r0, 2 * j)
        bases.append(k.add(k.mad(row, row_bytes, buf, mode="lo"), k.shl(k.xor(q, row), 4)))
    u = k.mov(unit0, type=pg.u32)
    top, done = k.new_label("s_tile"), k.new_label("s_done")
    k.place(top)
    k.bra(done, guard=k.setp("ge", u, units))
    mb, nb = _tile(k, u, rank, tiles_n, mcs, cfg.cluster, cfg.group, cfg.serp)
    grow0 = k.add(k.add(k.shl(mb, 7), k.shl(sc, 6)), r0)
    row_step = k.mul(N, 4, mode="wide")                  # 2 rows of C in bytes
    for p in range(bn // EPI_COLS):
        gcol = k.add(k.mad(nb, bn, p * EPI_COLS, mode="lo"), k.shl(q, 3))
        col_ok = k.setp("lt", gcol, N)                   # N is a multiple of 8: whole chunks
        g_addr = k.add(gc, k.mul(k.mad(grow0, N, gcol, mode="lo"), 2, mode="wide"))
        k.mbarrier_wait(e_full, parity=p % 2, timeout_cycles=WAIT_LIMIT_CYCLES)
        for it in range(WG_M // 2):
            v = k.ld(pg.mem(bases[it % 4], (it // 4) * 8 * row_bytes), pg.b32, space="shared", vec=4)
            ok = k.setp("lt", k.add(grow0, 2 * it), M, bool_op="and", c=col_ok)
            k.st(g_addr, v, pg.b32, guard=ok)
            if it + 1 < WG_M // 2:
                g_addr = k.add(g_addr, row_step)
        k.mbarrier_arrive(e_empty)
    k.add(u, nunits, dst=u)
    k.bra(top)
    k.place(done)


def _stamp_item(k, trace, tile_no, tracer):
    """Config.trace: the stamp of this CTA's tile (or stream-K item) number tile_no, by the tracer thread,
    for the first TRACE_TILES of them; tile_no counts on."""
    with k.if_(k.setp("lt", tile_no, TRACE_TILES, bool_op="and", c=tracer)):
        _stamp(k, k.add(trace, k.mul(tile_no, 8, mode="wide")), len(TRACE_FIELDS))
    k.add(tile_no, 1, dst=tile_no)


def _stamp(k, trace, field):
    """Config.trace: %globaltimer into this CTA's slot `field` (one of TRACE_FIELDS, or a slot number
    from `trace`) and the SM's %clock64 into the same slot of the second half."""
    slot = TRACE_FIELDS.index(field) if isinstance(field, str) else field
    k.st(k.add(trace, 8 * slot), k.sreg("%globaltimer"))
    k.st(k.add(trace, 8 * (TRACE_SLOTS + slot)), k.sreg("%clock64"))


def _tma_storer(k, cfg: Config, cbuf, bars, sc, unit0, nunits, units, rank, tiles_n, mcs, tmap_c, mixed_tile=None,
                ring=None, trace=None, walk=None):
    """epi="tma": one thread stores consumer sc's buffer for every pass of every tile of this CTA (the
    consumers' tile order): wait for the buffer to be full (the consumers fenced their stmatrix
    writes for the async proxy), one TMA store per 64 x 64 box (rows and columns past M and N are
    clipped by the TMA unit), commit, wait until the boxes have been read, and release the buffer.
    The last stores are waited for completely before the thread leaves. bm=192 (mixed_tile): consumer
    2 has no rows in a 128-row tile, so its storer skips those tiles. epi="ring" (ring = (stage base,
    k-blocks per tile)): the buffer is in the stage of the tile's last k-block (the storer counts the
    ring's k-blocks like the consumers), and after the last pass's read the storer also arrives on
    that stage's empty barrier in the consumer's place. trace (Config.trace): storer 0 stamps
    "c_written" once its last stores are complete. walk (stream-K, `_SkWalk`): the storer walks the CTA's
    items, and skips those that stop short of their tile's last k-block (their partial goes to the
    workspace, and the tile's owner writes C); with sk=2 every part of a split tile (its parts write
    their slices of C themselves)."""
    S, bn, pc = cfg.stages, cfg.bn, cfg.pass_cols
    if ring is not None:
        own = k.mul(sc, WG_M * pc * 2, mode="lo")           # the buffer's offset in a stage
        sbase, nk = ring
        sidx = k.mov(0, type=pg.u32)                        # the ring index of the tile's first k-block
    else:
        buf = k.mad(sc, WG_M * pc * 2, cbuf, mode="lo")
    e_full = k.add(bars, k.shl(k.add(sc, 2 * S), 3))
    e_empty = k.add(e_full, 8 * cfg.consumers)
    epar = k.mov(0, type=pg.u32) if cfg.passes % 2 else None
    hint_c = L2_HINTS[cfg.l2][2]
    pol_c = None if hint_c is None else k.createpolicy(hint_c)
    u = k.mov(unit0, type=pg.u32)
    top, done = k.new_label("t_tile"), k.new_label("t_done")
    if walk is not None:
        swalk, skb0, skb1 = walk.cursor("t")
    k.place(top)
    if walk is not None:
        k.bra(done, guard=k.not_(walk.next(swalk, u, skb0, skb1)))
        nxt = k.new_label("t_next")
        # a split tile's head (sk=1), or any part of a split tile (sk=2 and 3, whose parts store C themselves)
        split = k.setp("lt", skb1, walk.nk)
        if cfg.sk >= 2:
            split = k.setp("ne", skb0, 0, bool_op="or", c=split)
        k.bra(nxt, guard=split)
    else:
        k.bra(done, guard=k.setp("ge", u, units))
    if mixed_tile is not None:
        tile_row, nb, big = _mixed_tile(k, u, *mixed_tile)
        nxt = k.new_label("t_next")
        k.bra(nxt, guard=k.setp("eq", sc, cfg.consumers - 1, bool_op="and", c=k.not_(big)))
    else:
        mb, nb = _tile(k, u, rank, tiles_n, mcs, cfg.cluster, cfg.group, cfg.serp)
        tile_row = _mul_const(k, mb, cfg.bm)
    # consumer sc's rows: its blocks of 64 from (tile row + sc * blocks * 64); pass p is the column
    # part p % cpb of block p / cpb (bm=128: two column halves of one block; bm=192: two halves, or
    # with bk=32 the whole row; bm=256: whole blocks)
    row0 = k.add(tile_row, k.mul(sc, cfg.blocks * WG_M, mode="lo"))
    cpb = bn // pc
    if ring is not None:
        last = k.rem(k.add(sidx, k.sub(nk, 1)), S)
        buf = k.add(k.mad(last, cfg.stage_bytes, sbase, mode="lo"), own)
    for p in range(cfg.passes):
        j, h = divmod(p, cpb)
        row = k.add(row0, j * WG_M) if j else row0
        k.mbarrier_wait(e_full, parity=_pass_parity(k, epar, p), timeout_cycles=WAIT_LIMIT_CYCLES)
        for bx in range(pc // TMA_BOX):
            col = k.mad(nb, bn, h * pc + bx * TMA_BOX, mode="lo")
            k.cp_async_bulk_tensor(k.add(buf, bx * WG_M * TMA_BOX * 2), tmap_c, [col, row], direction="store",
                                   cache_policy=pol_c)
        k.cp_async_bulk_commit_group()
        k.cp_async_bulk_wait_group(0, read=True)           # the buffer may be written again
        k.mbarrier_arrive(e_empty)
        if ring is not None and p == cfg.passes - 1:
            _release(k, bars, None, last, S, guard=None)      # the stage goes back to the producer
    if epar is not None:
        k.xor(epar, 1, dst=epar)
    if mixed_tile is not None or walk is not None:
        k.place(nxt)
    if ring is not None:
        k.rem(k.add(sidx, nk), S, dst=sidx)
    if walk is None:
        k.add(u, nunits, dst=u)
    k.bra(top)
    k.place(done)
    k.cp_async_bulk_wait_group(0)                         # C is written before the thread exits
    if trace is not None:
        with k.if_(k.setp("eq", sc, 0)):
            _stamp(k, trace, "c_written")


def _epi_fence(k):
    # the buffer never overlaps the stages wgmma reads, but the async-protocol check tracks the one
    # dynamic shared window as a whole; one fence per tile is cheap next to the K loop and keeps it quiet
    k.fence_proxy_async("shared::cta")


def sample_configs() -> list:
    """What the sample builds and checks by default: CONFIGS, `choose`'s fourteen kernels (128 x 256 tiles with
    lag 0, 192 x 256 and 192 x 192 tiles, 128 x 256 stream-K (Config.sk 1 and 2 with a workspace, 3 in
    clusters), the 128-row ones again in 128 x 128 tiles, 128 x 192 tiles, and the 128 x 128
    stream-K kernels in DEEP_STAGES stages), the
    192 x 192 stream-K kernel and the 192 x 192 kernel in clusters of 2 sharing A (nn), so a sanitizer
    run of the sample covers every kind of kernel `choose` can return, both stream-K walks and both ways
    a cluster shares an operand."""
    return CONFIGS + [c for c in auto_configs("nt") if c not in CONFIGS] + \
        [Config("nt", 1, 3, group=16, bm=192, bn=192, hold=0, producer=0, sk=1).check(),
         Config("nn", 2, 3, group=16, bm=192, bn=192, producer=0).check()]


def build(target: str = "sm_90a", configs=None) -> pg.Module:
    """A module with a kernel for each configuration (default: sample_configs())."""
    m = pg.Module(target)
    for cfg in (sample_configs() if configs is None else configs):
        _kernel(m, cfg)
    return m


def prepare(module, cfg: Config):
    """The kernel Function with its dynamic shared memory allowance raised to smem_bytes(cfg) (and, for
    sk=3, clusters of 16 CTAs allowed)."""
    f = module.function(cfg.name)
    f.set_max_dynamic_shared(smem_bytes(cfg))
    if cfg.sk == 3:
        f.allow_nonportable_clusters()
    return f


def tensor_maps(cfg: Config, a, b, m: int, n: int, k: int, c=None):
    """The TMA maps of A (M x K) and B (N x K for nt, K x N for nn): bf16, 128-byte swizzle, one
    stage's box each (B: this CTA's share of it with cluster=2; A: `Config.a_box` rows, 64 for bm=128
    and bm=192, whose tiles load two or three); with c (the output, needed for
    epi="tma", the default) also C's (M x N, 64 x 64 boxes, 128-byte swizzle)."""
    from ptxgen.tma import encode_tiled
    if cfg.epi in TMA_OUT and c is None:
        raise ValueError(f"{cfg.name} writes C through a tensor map: pass c (the output) to tensor_maps")
    pa, pb = (int(x.data_ptr()) if hasattr(x, "data_ptr") else int(x) for x in (a, b))
    sw = cfg.k_swizzle
    ta = encode_tiled(ptr=pa, dtype="bf16", shape=(m, k), box=(cfg.a_box, cfg.bk), swizzle=sw, l2_promotion="256B")
    if cfg.layout == "nt":
        tb = encode_tiled(ptr=pb, dtype="bf16", shape=(n, k), box=(cfg.b_box, cfg.bk), swizzle=sw,
                          l2_promotion="256B")
    else:
        tb = encode_tiled(ptr=pb, dtype="bf16", shape=(k, n), box=(cfg.bk, PANEL_N), swizzle="128B",
                          l2_promotion="256B")
    if c is None:
        return ta, tb
    pc = int(c.data_ptr()) if hasattr(c, "data_ptr") else int(c)
    return ta, tb, encode_tiled(ptr=pc, dtype="bf16", shape=(m, n), box=(TMA_BOX, TMA_BOX), swizzle="128B")


def resident_ctas(f, cfg: Config, sm_count: int) -> int:
    """How many CTAs of this kernel the device holds at once: one per SM, or, for clusters, the
    driver's count of co-resident clusters (not every SM can host a cluster of 2 with 193 KiB each).
    sk=3: the CTAs in as many clusters of SK3_PORTABLE (8) as fit (120 on an H100 or H200: 15 clusters of
    8, as many CTAs as 30 clusters of 4), which also hold clusters of every smaller size; a grid of
    clusters of 16 within it is at most 7 of them (16 parts need a tile count times 16 <= 120), and 7
    fit at once (round 22)."""
    if cfg.sk == 3:
        big = SK3_PORTABLE
        return min(sm_count, f.max_active_clusters((big, 1, 1), (cfg.threads,), smem_bytes(cfg)) * big)
    if cfg.cluster == 1:
        return sm_count
    return f.max_active_clusters((cfg.cluster, 1, 1), (cfg.threads,), smem_bytes(cfg)) * cfg.cluster


def unit_kinds(u1: int, units: int, mix: int = 0):
    """Python's copy of the kernel's `_unit_kind`: a bool array, True where unit u is a 192-row tile."""
    u = np.arange(units, dtype=np.int64)
    if not mix:
        return u < u1
    u2 = units - u1
    return (u + 1) * u2 // units == u * u2 // units


def _raster(idx: int, tiles_n: int, rows: int, group: int, serp: int):
    """Python's copy of the kernel's `_tile` for one CTA per unit: (block row, block column) of unit idx
    among `rows` block rows of tiles_n columns."""
    g, r = divmod(idx, tiles_n * group)
    gsize = min(rows - g * group, group)
    nb, mc = divmod(r, gsize)
    return g * group + mc, (tiles_n - 1 - nb if serp and g % 2 else nb)


def tile_order(cfg: Config, m: int, n: int, m_split=None) -> list:
    """The tiles of an M x N product in the order of the work units that the kernel of `cfg` walks,
    as (first row, rows, first column) each: unit u is computed by CTA u % grid in round u // grid
    (without stream-K). bm=192: rows before m_split (a multiple of 192) in 192-row tiles, the rest in
    128-row ones. Clusters are not modelled (cluster 1 only); raises ValueError otherwise."""
    if cfg.cluster != 1:
        raise ValueError(f"tile_order models cluster 1, not cluster {cfg.cluster}")
    tiles_n = -(-n // cfg.bn)
    if cfg.bm != 192:
        rows = -(-m // cfg.bm)
        return [(mb * cfg.bm, cfg.bm, nb * cfg.bn)
                for mb, nb in (_raster(u, tiles_n, rows, cfg.group, cfg.serp) for u in range(rows * tiles_n))]
    if m_split is None or m_split % 192:
        raise ValueError(f"bm = 192 needs m_split, a multiple of 192, not {m_split!r}")
    u1, units = _split_units(m, m_split, tiles_n)
    tm1, tm2 = u1 // tiles_n, (units - u1) // tiles_n
    big = unit_kinds(u1, units, cfg.mix)
    idx = np.cumsum(big) - big, np.cumsum(~big) - ~big         # each unit's index among its kind
    out = []
    for u in range(units):
        if big[u]:
            mb, nb = _raster(int(idx[0][u]), tiles_n, tm1, cfg.group, cfg.serp)
            out.append((192 * mb, 192, nb * cfg.bn))
        else:
            mb, nb = _raster(int(idx[1][u]), tiles_n, tm2, cfg.group, cfg.serp)
            out.append((m_split + 128 * mb, 128, nb * cfg.bn))
    return out


def _makespan(u1: int, units: int, grid: int, mix: int = 0) -> int:
    """Rows of the busiest CTA when `grid` CTAs take units c, c + grid, ... of `units`, u1 of them of 192
    rows and the rest of 128 (`unit_kinds` says which). mix=0: the first u1 are the 192-row ones; CTA
    c's counts ceil((X - c) / grid) change only where c passes X mod grid, so the loads are constant
    between c = 0, u1 mod grid and units mod grid: the busiest CTA is one of those three. mix=1: a
    walk over the units."""
    if mix:
        if units == 0:
            return 0
        rows = np.where(unit_kinds(u1, units, mix), 192, 128)
        return int(np.bincount(np.arange(units) % grid, weights=rows, minlength=grid).max())
    worst = 0
    for c in {0, u1 % grid, units % grid}:
        if c < min(grid, units):
            big = max(0, -(-(u1 - c) // grid))
            worst = max(worst, 192 * big + 128 * (-(-(units - c) // grid) - big))
    return worst


def _split_units(m: int, split: int, tiles_n: int):
    """(192-row units, all units) when rows before `split` go in 192-row tiles, the rest in 128-row ones."""
    u1 = -(-min(split, m) // 192) * tiles_n
    return u1, u1 + -(-max(0, m - split) // 128) * tiles_n


def _grid_for_split(m: int, split: int, tiles_n: int, ctas: int, mix: int = 0):
    """(busiest CTA's rows, grid): the fewest CTAs, at most `ctas`, that reach the least busiest-CTA rows."""
    u1, units = _split_units(m, split, tiles_n)
    return min((_makespan(u1, units, g, mix), g) for g in range(1, min(ctas, units) + 1))


@functools.lru_cache(maxsize=256)
def split_for(m: int, n: int, ctas: int, bn: int = BN, mix: int = 0):
    """bm=192: (m_split, grid). Rows before m_split (a multiple of 192) go in 192-row tiles, the rest
    in 128-row tiles; the choice minimises the busiest CTA's rows under a persistent grid of at most
    `ctas` CTAs, then takes as many rows as it can in 192-row tiles (fewer operand bytes per FLOP),
    then the fewest CTAs (mix: the unit order of Config.mix). 4096 x 4096 on 132 SMs: 16 x 192 + 8 x 128
    rows, 128 CTAs of two 192-row tiles and one 128-row tile: as many rows each as 128 x 256 tiles
    give, 3/4 of them in 192-row tiles.
    The splits tried keep at most 2 * ctas block rows of 128 (trading two 192-row block rows for three
    128-row ones is as fine as the balance gets), so the search stays small for any M."""
    if isinstance(ctas, bool) or not isinstance(ctas, int) or ctas < 1:
        raise ValueError(f"ctas = {ctas!r}: at least one CTA must be resident")
    tiles_n = -(-n // bn)
    top = -(-m // 192)
    best = None
    for a in range(max(0, top - 2 * ctas), top + 1):
        span, grid = _grid_for_split(m, 192 * a, tiles_n, ctas, mix)
        key = (span, -min(192 * a, m), grid)
        if best is None or key < best[0]:
            best = (key, 192 * a, grid)
    return best[1], best[2]


def grid_for(cfg: Config, m: int, n: int, ctas: int) -> int:
    """Persistent grid: no more CTAs than can be resident (`ctas`), a whole number of clusters, and the
    fewest that still finish the work units (tiles, or cluster tiles) in the same number of rounds:
    512 tiles on 132 SMs take 4 rounds either way, and 128 CTAs of 4 tiles each leave 4 SMs idle
    instead of 16 SMs idle for the last round. The critical path is the same; under the board's
    power limit the idle SMs leave the busy ones a higher clock (bench/LOG.md). bm=192: split_for's."""
    if cfg.bm == 192:
        # a cluster's work unit spans cfg.cluster block columns (Config.shares_a)
        return split_for(m, n, max(1, ctas // cfg.cluster), cfg.bn * cfg.cluster, cfg.mix)[1] * cfg.cluster
    tiles_m, tiles_n = -(-m // cfg.bm), -(-n // cfg.bn)
    units = -(-tiles_m // cfg.cluster) * tiles_n
    slots = max(1, ctas // cfg.cluster)
    rounds = -(-units // slots)
    return -(-units // rounds) * cfg.cluster


H100_L2_BYTES = 50 * 2**20   # choose's default L2: the H100's; the H200 reports 60 MiB (pass Context.l2_bytes)


def auto_configs(layout: str = "nt") -> tuple:
    """The configurations `choose` picks from: 128 x 256 tiles in raster groups of 8 whose consumers
    release each stage as soon as their own wgmma on it is done (lag 0: the other consumer warpgroup keeps
    the tensor cores busy meanwhile, and the producer gets the stage a k-block sooner; bench/LOG.md round
    15: 0.3 % fewer cycles at 4096^3, +0.5 % sustained over six passes), 192 x 256
    tiles (three consumer warpgroups, 3 stages) in raster groups of 16 that walk K up and down tile by
    tile (kdir) and every other group's columns backwards (serp), so a round starts on operands the round
    before it left in L2 (bench/LOG.md round 19: 11-14 % fewer DRAM reads at 6144^3 and 8192^3, as
    bench/l2_model.py predicted, 0.3 % less time, +0.1-0.7 % sustained in six of six passes), and
    192 x 192 tiles without a producer warpgroup (m64n192k16, one epilogue pass a tile) in raster groups of 16, loaded by a warp of
    their own (Config.lwarp; bench/LOG.md round 13: 4 % less time than with the loads in a consumer at
    3072^3, as fast under the power limit), and the 128 x 256 kernel in stream-K (Config.sk, both epilogue
    passes at a tile's end) for shapes with too few tiles to fill the SMs (`choose`; its launches need
    `workspace`; bench/LOG.md round 18: 11-32 % less time than the 192 x 192 stream-K kernel at six
    such shapes, whose 192-wide tiles pad 512-2048 more), and the same with every part of a split tile
    summing a slice of it (Config.sk=2) for tiles split in many parts, and with a tile's parts summing in
    their cluster's shared memory (Config.sk=3) where they fit a cluster (`sk_pick`). Then the same four
    128-row kernels with 128 x 128 tiles (bn=128), which `choose` takes where N leaves the last 256-wide
    tile column at most half used (`narrow`), and last the 128-row kernel in 128 x 192 tiles (one
    m64n192k16 a k-step per consumer, one TMA-stored pass of three 64-column boxes a tile), which
    `choose` takes where its rounds are the shorter (`tile_width`), and the three 128 x 128 stream-K
    kernels in DEEP_STAGES stages, which `choose` takes for them on small grids (DEEP_GRID)."""
    wide = (Config(layout, 1, lag=0).check(), Config(layout, 1, 3, group=16, bm=192, kdir=1, serp=1).check(),
            Config(layout, 1, 3, group=16, bm=192, bn=192, producer=0, lwarp=1).check(),
            Config(layout, 1, lag=0, hold=0, sk=1).check(), Config(layout, 1, lag=0, hold=0, sk=2).check(),
            Config(layout, 1, lag=0, hold=0, sk=3).check())
    return wide + tuple(Config(layout, 1, lag=0, hold=0, sk=sk, bn=EPI_COLS).check() for sk in range(4)) + \
        (Config(layout, 1, lag=0, hold=0, bn=192).check(),) + \
        tuple(Config(layout, 1, DEEP_STAGES, lag=0, hold=0, sk=sk, bn=EPI_COLS).check() for sk in (1, 2, 3))


# Stream-K in 128 x 128 tiles on a grid of at most DEEP_GRID x the CTAs runs in DEEP_STAGES stages instead
# of four (auto_configs' last three kernels): each of fewer CTAs draws a larger share of DRAM's bandwidth,
# so it needs more bytes in flight. bench/LOG.md round 31 (H100, graphs), sk=1: 0.93-0.98x the time at
# seven shapes of 8-100 rows on grids of 64 and 72, level on 96 CTAs, 1.00-1.07x slower on 128; sk=2 and
# 3 only where a CTA walks at least DEEP_KBLOCKS k-blocks (0.95-0.98x at 16-32; 1.00-1.05x at 8)
DEEP_STAGES = 6
DEEP_GRID = 0.6
DEEP_KBLOCKS = 16


# 192 x 192 tiles read 1/6 more operand bytes from shared memory per FLOP than 192 x 256 ones: `choose`
# takes them only where their busiest CTA computes at most this fraction of the others' (bench/LOG.md
# round 11: 0.90 at 3072^3 ran 7 % faster, 1.00 at 6144^3 6 % slower; round 13, with the loading warp:
# 11 % faster and 4.5 % slower, a line that crosses zero near 0.97, so 0.92 keeps a margin)
N192_SPAN = 0.92


# `choose` takes the stream-K kernel where sk_speedup is at least this. bench/LOG.md round 26 (H100, 15
# shapes of fewer 128 x 256 tiles than SMs, against the plain kernels of each width): where the estimate
# was 1.04-1.24 (9 shapes), the plain 128 x 128 tiles ran 0.73-0.94x stream-K's time; at 1.36 (three
# shapes) stream-K ran 0.87x, 1.03x and 1.06x the plain time; at 1.67 and 2.72, 0.78x and 0.55x. (Against
# the 256-wide tiles alone, the threshold was 1.5: round 18.)
SK_PICK = 1.3
# the part of a launch that does not scale with its k-blocks (setup, first loads, epilogue), in k-blocks
SK_FIXED_KBLOCKS = 8


def sk3_ctas(ctas: int) -> int:
    """`choose`'s estimate of resident_ctas for sk=3 without the device at hand: one cluster of
    SK3_PORTABLE fewer than ctas // SK3_PORTABLE (a cluster's CTAs share one GPC, and 132-SM H100s and
    H200s hold 15 clusters of 8, not 16: bench/LOG.md round 22); ctas itself below two such clusters."""
    big = SK3_PORTABLE
    return (ctas // big - 1) * big if ctas >= 2 * big else ctas


def _sk_estimate(m: int, n: int, k: int, ctas: int, sk: int, bn: int = BN):
    """The 128 x bn tiles in stream-K with the kernel `sk` on sk_plan's grid (sk=3: on sk3_ctas(ctas)):
    (the busiest CTA in k-blocks: whole rounds, then `sk_streamed_cost`, at least `sk_dram_kblocks`; the
    parts a streamed tile is split in, 1 for whole tiles), or None where sk=3 cannot take the shape."""
    nk = -(-k // BK)
    if sk == 3:
        ctas = sk3_ctas(ctas)
        if -(-m // BM) * -(-n // bn) > ctas:
            return None
    grid, _, sk_first, streamed = sk_plan(m, n, k, ctas, bn, BM, sk)
    whole, floor = sk_first // grid * nk, sk_dram_kblocks(m, n, k, bn, grid)
    if not streamed:
        return max(whole, floor), 1
    return whole + sk_streamed_cost(streamed, nk, grid, sk, max(0.0, floor - whole)), -(-grid // streamed)


# `choose` weighs 128 x 128 tiles in stream-K with sk=1 against the others only where they split a tile in
# at most this many parts: bench/LOG.md round 26 measured them at 2-4 parts (0.82-0.93x the 256-wide
# pick's time at nine shapes); beyond it the part cost fitted on 256-wide tiles decided wrongly as often
# as not (round 27). sk=2 in 128 x 128 tiles is weighed at any number of parts since its parts became
# cheap (round 28, H100, 39 shapes with every stream-K kernel timed: the least estimate's kernel ran on
# average 1.014x the fastest one's time, against 1.078 with this cap on sk=2 as well)
SK128_MAX_PARTS = 4
# ... but sk=3 in 128 x 128 tiles, in clusters of up to 16, where each part keeps at least this many
# k-blocks: bench/LOG.md round 27 (H100, every stream-K kernel timed): at 17 shapes of 2-12 such tiles over
# K = 8192-65536, where it splits a tile in 8-16 parts of 16-128 k-blocks, 0.59-0.96x the time of the
# 256-wide pick at 15 and 1.06x and 1.17x at 384 x 512 x 32768 and 768 x 256 x 65536; at 8 parts of 4-8
# k-blocks (K = 3072-4096) 1.19-1.33x the fastest kernel; nothing between 8 and 16 was measured
SK3_128_MIN_KBLOCKS = 16


def _streamed_costs(m: int, n: int, k: int, ctas: int) -> dict:
    """(tile width, sk) -> the stream-K kernel's busiest CTA in 256-wide k-blocks (`_sk_estimate`'s x the
    width / 256 x WIDTH_COST), for 128 x 256 and 128 x 128 tiles: not the 256-wide ones where N leaves
    their last column at most half used (`narrow` runs those in 128-wide tiles), and elsewhere the
    128-wide ones with sk=1 only up to SK128_MAX_PARTS parts a tile, with sk=3 beyond it only where every
    part has at least SK3_128_MIN_KBLOCKS k-blocks, and with sk=2 in any number of parts."""
    out = {}
    wide = not 0 < n % BN <= EPI_COLS
    nk = -(-k // BK)
    for bn in (BN, EPI_COLS):
        if bn == BN and not wide:
            continue
        for sk in (1, 2, 3):
            est = _sk_estimate(m, n, k, ctas, sk, bn)
            if est is None:
                continue
            if bn == EPI_COLS and wide and est[1] > SK128_MAX_PARTS and \
                    (sk == 1 or sk == 3 and nk < SK3_128_MIN_KBLOCKS * est[1]):
                continue
            out[(bn, sk)] = est[0] * bn / BN * WIDTH_COST[bn]
    return out


def sk_pick(m: int, n: int, k: int, ctas: int) -> tuple:
    """The stream-K kernel `choose` would stream with, as (tile width, sk): the least of
    `_streamed_costs`, the wider tiles and then the lower sk on a tie (bench/LOG.md round 26: 128 x 128
    tiles in stream-K 0.82-0.93x the time of the 256-wide ones' pick at eight shapes of 0.5-2 M outputs
    and K 3072-6144)."""
    cost = _streamed_costs(m, n, k, ctas)
    return min(cost, key=lambda key: (cost[key], -key[0], key[1]))


def sk_speedup(m: int, n: int, k: int, ctas: int, autos=None) -> float:
    """The plain 128-row kernel's k-blocks on its busiest CTA, at the width where they are fewest (its
    cost in 256-wide k-blocks: rounds x k-blocks x the width / 256 x WIDTH_COST; at least
    `sk_dram_kblocks` on that width's grid),
    against those of `sk_pick`'s stream-K kernel, each plus SK_FIXED_KBLOCKS: a shape's estimated gain
    from streaming its k-blocks over more CTAs rather than running whole tiles."""
    nk = -(-k // BK)
    plain = min(max(cost / BN * nk, sk_dram_kblocks(m, n, k, grid=grid))
                for cost, grid in _width_costs(m, n, ctas, autos, grids=True).values())
    streamed = _streamed_costs(m, n, k, ctas)[sk_pick(m, n, k, ctas)]
    return (plain + SK_FIXED_KBLOCKS) / (streamed + SK_FIXED_KBLOCKS)


def choose(m: int, n: int, k: int, layout: str = "nt", ctas: int = 132, l2_bytes: int = H100_L2_BYTES) -> Config:
    """The configuration for an M x N x K problem on `ctas` resident CTAs (one per SM) and an L2 of
    `l2_bytes`, by the rule bench/LOG.md rounds 9-13 measured:

    - 192 x 192 tiles (groups of 16, no producer warpgroup, a loading warp) where, with most rows in
      192-row tiles, the busiest CTA's tiles hold at most N192_SPAN of the MACs the better of the two below gives it
      (3072^3 on 132 SMs: 2 x 192 x 192 against (192 + 128) x 256, 0.90; cuBLAS's own tiling there).
    - otherwise 192 x 256 tiles (groups of 16) wherever their balanced grid, with `split_for`'s mix of
      192- and 128-row tiles, leaves the busiest CTA fewer rows than the 128 x 256 kernel's rounds do
      (5120^3 on 132 SMs; at 3072^3, 192 + 128 rows against 3 x 128 ran 0.92-0.93x cuBLAS against 0.85x);
    - otherwise 128 x 256 tiles in groups of 8 where one round of the balanced grid runs whole raster groups
      (every tile of its block rows, so A's rows are not read again: Config.l2="auto" loads them
      evict_first) and that round's operands (its block rows of A and all of B, K deep) fit in L2:
      up to 4096^3 on an H100 or H200 (40 MiB), where the 192-row tiles would also leave a quarter
      of the rows to 128-row tiles;
    - 128 x 256 tiles also where split_for would put most rows in 128-row tiles (M too small for the
      grid, e.g. 2048 x 2048 x 8192: one round of 128-row tiles), which the bm=192 kernel runs with
      one of its three consumer warpgroups idle;
    - otherwise 192 x 256 tiles in groups of 16. They move a fifth fewer operand bytes into the SMs
      per FLOP, and a round of about 128 tiles in groups of 16 spans 16 block rows x 8 block columns
      (3072 rows of A and 2048 of B) instead of 8 x 16 (1536 and 4096): 9 % fewer operand rows, and
      fewer DRAM reads where the panels do not stay in L2.

    Before all of these, where the 128 x 256 kernel has fewer tiles than CTAs: stream-K (its launch needs
    `workspace`) where `sk_speedup` estimates it at least SK_PICK times faster than the plain 128-row
    kernel at `tile_width`'s width (bench/LOG.md round 26, H100: stream-K 0.55-0.78x the plain time at
    1024^2 x 8192 and 512 x 1024 x 16384, estimated 1.67 and 2.72; the plain 128 x 128 tiles 0.73-0.94x
    the 256-wide stream-K's at nine shapes estimated 1.04-1.24; round 18: 2048^2 x 8192, whose 128 tiles
    nearly fill the SMs, keeps the plain kernel; round 30: where the operands outgrow L2, a grid of few
    CTAs is costed at the DRAM bytes it can draw, `sk_dram_kblocks`, so 8 x 8192 x 8192 streams over 128
    CTAs, 0.68x the plain kernel's time on 64), in the tiles and kernel `sk_pick` estimates the
    shortest: 128 x 256 or 128 x 128, the latter with sk=1 split in at most SK128_MAX_PARTS parts a tile,
    with sk=3 in more where each part keeps SK3_128_MIN_KBLOCKS k-blocks, with sk=2 in any number (round
    26: 0.82-0.93x the 256-wide pick's time at nine shapes of 0.26-1.6 M outputs over K = 3072-6144; round
    27: sk=3 in 8-16 parts 0.59-0.96x at 15 of 17 shapes over K = 8192-65536; round 28: the pick 1.011x
    the fastest stream-K kernel's time on average over 39 shapes, 1.020x out of sample). Of the kernels,
    where its estimate is the shorter (many parts a tile), the one in which every part sums a slice of
    its tile (Config.sk=2; bench/LOG.md rounds 20-21), or the one whose tile's parts are a cluster
    summing in shared memory (Config.sk=3, where the tiles fit the CTAs clusters of 8 leave,
    `sk3_ctas`; bench/LOG.md round 22: 0.88-0.89x sk=2's time at 512^2 and 256 x 1024 x 16384). Where N
    mod 256 is from 1 to 128, only the 128 x 128 tiles are streamed, in any number of parts.

    Last, `narrow`: where N <= 128 whatever the pick (and where N mod 256 is from 1 to 128 and the pick
    is streamed), the 128-row kernel (streamed as picked) in 128 x 128 tiles instead (bench/LOG.md round 23);
    and where the pick is the plain 128 x 256 kernel, the tile width of 256, 192 or 128 whose rounds are
    the shortest (`tile_width`; bench/LOG.md round 24: N = 192 and 384 and 1536^3 in 128 x 192 tiles,
    N = 640 and 1000^3 to 2048 x 1024 x 2048 in 128 x 128 ones, 0.62-0.90x the 256-wide tiles' time).

    Raises ValueError for a shape the kernels cannot take or a bad ctas / l2_bytes."""
    check_shape(m, n, k)
    for name, v in (("ctas", ctas), ("l2_bytes", l2_bytes)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} = {v!r} must be a positive int")
    autos = auto_configs(layout)
    pick = _choose_wide(m, n, k, autos, int(ctas), l2_bytes)
    if narrow(pick, n):
        pick = _auto(autos, bm=BM, bn=EPI_COLS, sk=pick.sk, stages=STAGES)
    elif pick == autos[0]:
        return _width_kernels(autos)[tile_width(m, n, int(ctas), autos)]
    if pick.sk and pick.bn == EPI_COLS:
        grid = sk_plan(m, n, k, int(ctas), EPI_COLS, BM, pick.sk)[0]
        kblocks = -(-m // BM) * -(-n // EPI_COLS) * -(-k // BK)
        if grid <= DEEP_GRID * ctas and (pick.sk == 1 or kblocks >= DEEP_KBLOCKS * grid):
            return _auto(autos, bm=BM, bn=EPI_COLS, sk=pick.sk, stages=DEEP_STAGES)
    return pick


def _auto(autos, **fields) -> Config:
    """The one configuration of `autos` (auto_configs) with these field values."""
    found = [c for c in autos if all(getattr(c, f) == v for f, v in fields.items())]
    if len(found) != 1:
        raise AssertionError(f"internal error (a bug in gemm_hopper): auto_configs has {len(found)} "
                             f"configurations with {fields}, not one")
    return found[0]


def _width_kernels(autos) -> dict:
    """The plain 128-row kernels of `autos` by tile width: 256, 192 and 128 (`tile_width`)."""
    return {bn: _auto(autos, bm=BM, bn=bn, sk=0) for bn in (BN, 192, EPI_COLS)}


# The time of a k-block of 128-row tiles per column, against 256-wide tiles' (`tile_width`). bench/LOG.md
# round 24 (H100): 128 x 192 tiles, TMA-stored in one pass a tile, 0.95-1.0x at N = 384 over 2 rounds
# and 1.06-1.11x over one round (8192 x 384 x 8192, 1536^3), 1.12x at 32768 x 192 x 4096 (DRAM-bound);
# 128 x 128 tiles 1.11-1.19x (more operand bytes and wgmma issues per FLOP). Neither epilogue (one
# TMA-stored pass at the tile's end) adds a measurable cost per tile: 1000^3 to 2048 x 1024 x 2048 in
# 128 x 128 tiles ran 0.58-0.73x the time of half as many 256-wide tiles, 1536^3 in 128 x 192 tiles
# 0.83x. (The same tiles with C stored from the registers, epi="direct", added about 10 k-blocks a
# tile: 1.07x the 256-wide tiles' time at 1536^3.)
WIDTH_COST = {BN: 1.0, 192: 1.05, EPI_COLS: 1.15}


def tile_width(m: int, n: int, ctas: int, autos=None) -> int:
    """The width of `choose`'s plain 128-row tiles (not streamed): of 256, 192 and 128, the one whose
    busiest CTA has the least to compute, its rounds x the width x WIDTH_COST (the k-blocks, the same for
    every width, drop out), the wider on a tie. N = 384 on 64 block rows: one round x 256 (a quarter of it padding) against 1 x 192 x 1.05 or
    2 x 128 x 1.15; at 1000^3 the 256-wide tiles' one round on 32 CTAs against one of 128-wide tiles on
    64; at 4096^3 the 256-wide tiles' 4 rounds against 6 x 192 x 1.05 or 8 x 128 x 1.15."""
    cost = _width_costs(m, n, ctas, autos)
    return min(cost, key=lambda bn: (cost[bn], -bn))


def _width_costs(m: int, n: int, ctas: int, autos=None, grids: bool = False) -> dict:
    """Tile width -> the busiest CTA's rounds x the width x WIDTH_COST, for the plain 128-row kernels
    (with grids=True, (that cost, the kernel's grid))."""
    autos = auto_configs() if autos is None else autos
    cost = {}
    for cfg in _width_kernels(autos).values():
        tiles, grid = -(-m // cfg.bm) * -(-n // cfg.bn), grid_for(cfg, m, n, ctas)
        cost[cfg.bn] = -(-tiles // grid) * cfg.bn * WIDTH_COST[cfg.bn]
        if grids:
            cost[cfg.bn] = (cost[cfg.bn], grid)
    return cost


def narrow(cfg: Config, n: int) -> bool:
    """Whether `choose` runs its pick `cfg` in 128 x 128 tiles (bn=128, one m64n128k16 a k-step per
    consumer): where N leaves the last 256-column tile at most half used (N mod 256 from 1 to 128), so the
    256-wide tiles would compute up to half their columns for nothing; for the stream-K picks, and for
    every pick where N <= 128. bench/LOG.md round 23 (H100): 0.62-0.81x the former pick's time at eight
    streamed shapes (N = 128, 320 and 384), 0.76-0.89x at three of many tiles with N = 128 (16384-65536
    rows, 1.03-1.05x cuBLAS). The plain 128 x 256 pick with N above 128 takes its width from
    `tile_width` instead, which weighs the rounds of each width."""
    if n > 128 and not (cfg.bm == BM and cfg.producer and cfg.sk):
        return False
    return 0 < n % (2 * EPI_COLS) <= EPI_COLS


def _choose_wide(m: int, n: int, k: int, full, ctas: int, l2_bytes: int) -> Config:
    """`choose`'s pick among its six kernels of 256- and 192-column tiles (the first six of `full`,
    auto_configs'), the stream-K ones weighed against the plain kernels of every width."""
    small, large, n192, *streamed = full[:6]
    tiles_m, tiles_n = -(-m // small.bm), -(-n // small.bn)
    grid = grid_for(small, m, n, int(ctas))
    if tiles_m * tiles_n < ctas and sk_speedup(m, n, k, int(ctas), full) >= SK_PICK:
        bn, sk = sk_pick(m, n, k, int(ctas))
        return streamed[sk - 1] if bn == BN else _auto(full, bm=BM, bn=EPI_COLS, sk=sk, stages=STAGES)
    split, large_grid = split_for(m, n, int(ctas), large.bn, large.mix)
    # the busiest CTA's rows of 256-column tiles: the 128 x 256 kernel's rounds x 128, against the
    # mixed 192- and 128-row tiles' (3072^2 on 132 SMs: 3 x 128 = 384 against 192 + 128 = 320)
    small_span = -(-tiles_m * tiles_n // grid) * small.bm
    large_span = _makespan(*_split_units(m, split, tiles_n), large_grid, large.mix)
    # ... and of 192-column tiles, as MACs per k: rows x columns
    split192, grid192 = split_for(m, n, int(ctas), n192.bn, n192.mix)
    n192_span = _makespan(*_split_units(m, split192, -(-n // n192.bn)), grid192, n192.mix) * n192.bn
    if 2 * min(split192, m) >= m and n192_span <= N192_SPAN * min(small_span * small.bn, large_span * large.bn):
        return n192
    if large_span < small_span:
        return large
    if min(small.group, tiles_m) * tiles_n <= grid:
        rows = min(-(-grid // tiles_n) * small.bm, m)     # the round's block rows of A
        if (rows + n) * k * 2 <= l2_bytes:
            return small
    if 2 * min(split, m) < m:
        return small
    return large


def launch(f, cfg: Config, maps, c, m: int, n: int, k: int, ctas: int, stream=None, balanced: bool = True,
           m_split=None, workspace=None, trace=None) -> None:
    """C = A @ B^T (nt) or A @ B (nn) with maps = tensor_maps(cfg, a, b, m, n, k, c=c); c: bf16 device array;
    ctas = resident_ctas(f, cfg, sm_count). balanced=False launches every resident slot the work can
    use instead of grid_for's fewest CTAs for the same number of rounds. bm=192: m_split (a multiple
    of 192; rows from it on go in 128-row tiles) defaults to split_for's choice; either way the
    balanced grid is the fewest CTAs that keep the busiest one's rows as low as they can be.
    Stream-K (cfg.sk): the tiles on `sk_plan`'s grid (producer=0: every row in 192-row tiles), and `workspace` is device memory of
    at least workspace_bytes(cfg, m, n, k, ctas) bytes whose flags are zero (`workspace` makes one; each
    launch leaves them zero again). Config.trace: `trace` is device memory of at least
    trace_bytes(grid) bytes, which read_trace decodes. Config.pdl: launched with programmatic dependent
    launch (the kernel waits for the one before it in the stream before touching memory)."""
    grid, block, args, shared, cluster = _launch_config(cfg, maps, c, m, n, k, ctas, balanced, m_split, workspace,
                                                        trace)
    f.launch(grid, block, args, shared_bytes=shared, stream=stream, cluster=cluster, pdl=bool(cfg.pdl))


def bind(f, cfg: Config, maps, c, m: int, n: int, k: int, ctas: int, balanced: bool = True, m_split=None,
         workspace=None, trace=None):
    """The launch `launch` makes, checked and packed once: a ptxgen.runtime.BoundLaunch whose call
    (with an optional stream) issues it again on the same tensors and maps."""
    grid, block, args, shared, cluster = _launch_config(cfg, maps, c, m, n, k, ctas, balanced, m_split, workspace,
                                                        trace)
    return f.bind(grid, block, args, shared_bytes=shared, cluster=cluster, pdl=bool(cfg.pdl))


def _launch_config(cfg: Config, maps, c, m: int, n: int, k: int, ctas: int, balanced: bool, m_split,
                   workspace=None, trace=None):
    """(grid, block, arguments, dynamic shared bytes, cluster) of one launch; see `launch`."""
    check_shape(m, n, k)
    pc = np.uint64(c.data_ptr()) if hasattr(c, "data_ptr") else c
    extra = []
    if isinstance(ctas, bool) or not isinstance(ctas, (int, np.integer)) or ctas < 1:
        raise ValueError(f"ctas = {ctas!r}: at least one CTA must be resident (resident_ctas gives the number)")
    ctas = int(ctas)
    if (workspace is None) == (cfg.sk in (1, 2)):
        raise ValueError(f"{cfg.name}: " + ("stream-K needs a workspace (workspace_bytes gives its size)"
                                            if cfg.sk in (1, 2) else "a workspace is for stream-K kernels "
                                            "(Config.sk 1 and 2) only"))
    cluster = (cfg.cluster, 1, 1) if cfg.cluster > 1 else None
    if cfg.sk:
        if m_split is not None or not balanced:
            raise ValueError(f"{cfg.name}: stream-K takes its grid and row split from sk_plan")
        grid, split, sk_first, streamed = sk_plan(m, n, k, ctas, cfg.bn, cfg.bm, cfg.sk)
        ptr = [] if cfg.sk == 3 else [_buffer_ptr(cfg, workspace, "the workspace", workspace_bytes(cfg, m, n, k, ctas),
                                                  f"{m}x{n}x{k} on {ctas} CTAs needs")]
        # the producer warpgroup's kernel (128-row tiles) has no m_split; sk=2 and 3 store into C
        # themselves; sk=3 runs a tile's parts as one cluster
        extra = ([] if cfg.producer else [np.uint32(split)]) + ptr + [np.uint32(sk_first)] + \
            ([pc] if cfg.sk >= 2 else [])
        if cfg.sk == 3:
            cluster = (grid // streamed if streamed else 1, 1, 1)
    elif cfg.bm == 192:
        # work units of cfg.cluster block columns (Config.shares_a), on ctas // cluster cluster slots
        cl = cfg.cluster
        unit_bn, slots = cfg.bn * cl, ctas // cl
        if slots < 1:
            raise ValueError(f"ctas = {ctas}: {cfg.name} needs room for at least one cluster of {cl} CTAs")
        tiles_n = -(-n // unit_bn)
        if m_split is None:
            split, grid = split_for(m, n, slots, unit_bn, cfg.mix)
        else:
            last = 192 * -(-m // 192)
            if isinstance(m_split, bool) or not isinstance(m_split, (int, np.integer)) or m_split < 0 \
                    or m_split % 192 or m_split > last:
                raise ValueError(f"m_split = {m_split!r} must be a multiple of 192 from 0 to {last} "
                                 f"(the end of M = {m}'s last 192-row block)")
            split = int(m_split)
            grid = _grid_for_split(m, split, tiles_n, slots, cfg.mix)[1]
        if not balanced:
            grid = max(1, min(_split_units(m, split, tiles_n)[1], slots))
        grid *= cl
        extra = [np.uint32(split)]
    elif balanced:
        grid = grid_for(cfg, m, n, ctas)
    else:
        units = -(-(-(-m // cfg.bm)) // cfg.cluster) * -(-n // cfg.bn)
        grid = max(1, min(units, ctas // cfg.cluster)) * cfg.cluster
    if m_split is not None and cfg.bm != 192:
        raise ValueError(f"m_split is for bm=192 kernels, not {cfg.name}")
    if cfg.epi in TMA_OUT:
        if len(maps) != 3:
            raise ValueError(f"{cfg.name} writes C through its tensor map: tensor_maps(..., c=c) gives it")
        pc = maps[2]
    if (trace is None) == bool(cfg.trace):
        raise ValueError(f"{cfg.name}: " + ("a traced kernel needs trace= (trace_bytes gives its size)" if cfg.trace
                                            else "trace= is for kernels built with Config.trace"))
    if cfg.trace:
        extra = extra + [_buffer_ptr(cfg, trace, "the trace buffer", trace_bytes(grid), f"{grid} CTAs need")]
    return ((grid,), (cfg.threads,), [maps[0], maps[1], pc, np.uint32(m), np.uint32(n), np.uint32(k)] + extra,
            smem_bytes(cfg), cluster)


def _buffer_ptr(cfg: Config, buf, what: str, need: int, who_needs: str):
    """The device address of `buf` (a torch tensor, a ptxgen DeviceBuffer or an int) as a u64 kernel
    argument, after checking that a buffer that knows its size (nbytes) has the `need` bytes."""
    have = getattr(buf, "nbytes", None)
    if have is not None and have < need:
        raise ValueError(f"{cfg.name}: {what} has {have} bytes, {who_needs} {need}")
    return np.uint64(int(buf.data_ptr() if hasattr(buf, "data_ptr") else getattr(buf, "ptr", buf)))


# sizes checked by run(): ragged edges in every dimension (including a lone block row for a cluster
# of 2 and a K of one partial k-block), more work units than SMs (the persistent loop and the ring's
# parity wrap over tiles), and a long K; on 132 SMs 4096 x 4096 x 256 (and in QUICK_SIZES for sanitizer
# runs, 2304 x 2304 x 192: 144 tiles of 192 x 192 or 162 of 128 x 256 on 132 CTAs) split tiles between
# stream-K's CTAs, and 1000^3, 257 x 520 x 4104 (and 200 x 384 x 2048) have fewer tiles than CTAs, each
# streamed in 2-5 parts, in both stream-K kernels
CHECK_SIZES = [(128, 256, 64), (1, 8, 8), (130, 264, 72), (1000, 1000, 1000), (257, 520, 4104),
               (4096, 4096, 256), (2048, 2048, 2048)]
QUICK_SIZES = [(128, 256, 64), (1, 8, 8), (130, 264, 72), (384, 520, 264), (2304, 2304, 192), (200, 384, 2048)]


def run(module, rng):
    import torch
    from ptxgen.runtime import get_context
    sms = get_context().sm_count
    checks = []
    sizes = QUICK_SIZES if os.environ.get("PTXGEN_SAMPLE_QUICK") == "1" else CHECK_SIZES
    for cfg in sample_configs():
        f = prepare(module, cfg)
        ctas = resident_ctas(f, cfg, sms)
        for (m, n, kk) in sizes:
            if cfg.sk == 3 and -(-m // cfg.bm) * -(-n // cfg.bn) > ctas:
                continue                    # sk=3 takes at most as many tiles as CTAs (sk_plan)
            a, b, ref, c = bf16_gemm_case(cfg.layout, m, n, kk, rng.integers(2**31))
            launch(f, cfg, tensor_maps(cfg, a, b, m, n, kk, c=c), c, m, n, kk, ctas,
                   workspace=workspace(cfg, m, n, kk, ctas))
            torch.cuda.synchronize()
            checks.append(check_bf16_gemm(f"{cfg.name} {m}x{n}x{kk}", c, ref, kk))
    return checks


if __name__ == "__main__":
    sys.exit(main("gemm_hopper", build, run, default_target="sm_90a"))
