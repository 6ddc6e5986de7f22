"""samples/gemm_hopper.py: every configuration builds, lints clean (legality and async protocol),
assembles for sm_90a without spills or wgmma serialisation warnings, has the warp-specialized
structure, and on an sm_90a GPU computes bf16 GEMMs matching a float64 reference."""
import dataclasses
import re

import numpy as np
import pytest

from _samples import RecordingFunction, load_sample


h = load_sample("gemm_hopper")
# the sample's kernels plus the benchmark's other shapes of the pipeline
CONFIGS = h.CONFIGS + [h.Config("nt", 1, 8, 1, 8, 32), h.Config("nn", 2, 8, 0, 16, 32, epi="smem"),
                       h.Config("nt", 1, 5, 1, 8, 64, 192, "direct"), h.Config("nn", 2, 5, 1, 8, 64, 128, "smem"),
                       h.Config("nt", 2, 5, 1, 8, 64, 192, "direct"), h.Config("nt", 1, epi="direct"),
                       h.Config("nn", 2, epi="direct"), h.Config("nt", 1, epi="smem_defer"),
                       h.Config("nn", 2, epi="smem_defer"), h.Config("nt", 1, epi="smem"),
                       h.Config("nn", 2, epi="smem"), h.Config("nt", 1, epi="storer"), h.Config("nn", 2, epi="storer"),
                       h.Config("nt", 1, 3, bm=256, bn=192), h.Config("nn", 1, 3, bm=256, bn=192),
                       h.Config("nt", 1, 3, bm=192), h.Config("nn", 1, 3, bm=192),
                       h.Config("nt", 1, 4, bk=32, bm=192), h.Config("nt", 1, 3, bm=192, hold=0),
                       h.Config("nt", 1, hold=0), h.Config("nt", 1, 4, bm=192, epi="ring"),
                       h.Config("nn", 1, 4, bm=192, epi="ring"), h.Config("nt", 1, 4, bm=192, epi="ring", hold=0),
                       h.Config("nt", 1, 4, bm=192, epi="ring", lead=3), h.Config("nt", 1, 3, bm=192, mix=1),
                       h.Config("nn", 1, 3, bm=192, mix=1), h.Config("nn", 1, 4, bm=192, epi="ring", mix=1),
                       h.Config("nt", 1, 3, bm=192, l2="abc"), h.Config("nn", 2, l2="bc"),
                       h.Config("nt", 1, 4, bm=192, epi="ring", l2="c"), h.Config("nt", 1, l2="none"),
                       h.Config("nn", 2, l2="none"), h.Config("nt", 1, 3, bm=192, l2="none"),
                       h.Config("nt", 1, epi="storer", l2="none"), h.Config("nt", 1, l2="an"),
                       *h.auto_configs("nt")[:2], *h.auto_configs("nn")[:2],
                       # K walked up and down tile by tile (Config.kdir)
                       h.Config("nt", 1, kdir=1), h.Config("nn", 1, kdir=1), h.Config("nt", 1, 3, group=16, bm=192, kdir=1),
                       # every other raster group's columns walked backwards (Config.serp)
                       h.Config("nt", 1, 3, group=2, bm=192, kdir=1, serp=1), h.Config("nn", 1, group=1, lag=0, serp=1),
                       # stream-K in the 128 x 256 kernel: `choose`'s for few tiles, the owner of a split
                       # tile adding its partials (sk=1), every part summing a slice of it (sk=2), and a
                       # tile's parts summing within their cluster through shared memory (sk=3)
                       *h.auto_configs("nt")[3:], *h.auto_configs("nn")[3:]]
# bm=192 without a producer warpgroup (three consumer warpgroups that load and store themselves)
P0_CONFIGS = [h.Config("nt", 1, 3, group=16, bm=192, producer=0), h.Config("nn", 1, 3, bm=192, producer=0),
              h.Config("nt", 1, 3, bm=192, producer=0), h.Config("nt", 1, 3, bm=192, hold=0, producer=0),
              h.Config("nt", 1, 3, bm=192, mix=1, l2="none", producer=0),
              h.Config("nt", 1, 3, bm=192, bn=192, producer=0), h.Config("nn", 1, 3, bm=192, bn=192, producer=0),
              h.Config("nt", 1, 3, bm=192, bn=192, hold=0, producer=0, sk=1),
              h.Config("nn", 1, 3, bm=192, bn=192, hold=0, producer=0, sk=1),
              # clusters of 2 sharing A (Config.shares_a)
              h.Config("nt", 2, 3, group=16, bm=192, bn=192, producer=0),
              h.Config("nn", 2, 3, group=16, bm=192, bn=192, producer=0),
              h.Config("nt", 2, 3, group=16, bm=192, producer=0), h.Config("nn", 2, 3, group=16, bm=192, producer=0),
              h.Config("nt", 2, 3, group=16, bm=192, hold=0, producer=0),
              # a loading warp of its own (Config.lwarp): `choose`'s 192 x 192 kernels
              h.auto_configs("nt")[2], h.auto_configs("nn")[2],
              h.Config("nt", 2, 3, group=16, bm=192, bn=192, producer=0, lwarp=1),
              # the 192 x 192 stream-K kernels in groups of 16
              h.Config("nt", 1, 3, group=16, bm=192, bn=192, hold=0, producer=0, sk=1),
              h.Config("nn", 1, 3, group=16, bm=192, bn=192, hold=0, producer=0, sk=1)]
CONFIGS += P0_CONFIGS


@pytest.fixture(scope="module")
def module():
    return h.build("sm_90a", CONFIGS)


def _body(text, name):
    return text.split(f".entry {name}(")[1].split("\n}\n")[0]


@pytest.mark.parametrize("cfg", [c for c in CONFIGS if c.producer], ids=lambda c: c.name)
def test_kernel_structure(module, cfg):
    body = _body(module.emit().text, cfg.name)
    # one CTA = producer warpgroup + consumer warpgroups, registers moved between them
    assert f".reqntid {cfg.threads}" in body and f".maxnreg {cfg.launch_regs}" in body
    assert cfg.threads * cfg.launch_regs <= 65536
    producer_regs, consumer_regs = cfg.regs
    assert f"setmaxnreg.dec.sync.aligned.u32 {producer_regs};" in body
    assert f"setmaxnreg.inc.sync.aligned.u32 {consumer_regs};" in body
    assert producer_regs * 128 + consumer_regs * 128 * cfg.consumers <= 65536
    # the stage ring: barriers initialised with the right counts, expect_tx of a whole stage
    storer = cfg.epi in h.HANDOFF
    assert body.count("mbarrier.init.shared.b64") == 2 * cfg.stages + (2 * cfg.consumers if storer else 0)
    assert re.search(rf"mbarrier\.init\.shared\.b64 \[%r\d+\], {cfg.consumers * cfg.cluster};", body)
    # stream-K's loading thread issues its first k-block before the CTA meets, then the rest in its loop
    twice = 2 if h.pre_issue(cfg) else 1
    if cfg.bm in (128, 192):
        # a whole stage, or one box of A less, chosen per tile: bm=192's 128-row tiles load two of the
        # three 64-row boxes, and a 128-row tile leaves out its second box where it lies wholly past M
        assert re.search(rf"selp\.u32 (%r\d+), {cfg.stage_bytes}, {cfg.stage_bytes - 64 * cfg.bk * 2}, %p\d+;", body)
        assert re.search(r"mbarrier\.arrive\.expect_tx\.shared\.b64 %rd\d+, \[%r\d+\], %r\d+;", body)
        assert len(re.findall(r"@%p\d+ cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global", body)) == \
            twice * (2 * cfg.bm // cfg.a_box if cfg.l2 == "auto" else 1)          # (auto: every A box, twice)
    else:
        assert re.search(rf"mbarrier\.arrive\.expect_tx\.shared\.b64 %rd\d+, \[%r\d+\], {cfg.stage_bytes};", body)
    loads = re.findall(r"cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.mbarrier::complete_tx::bytes"
                       r"(\.multicast::cluster)?", body)
    per_stage_b = 1 if cfg.layout == "nt" else cfg.bn // h.PANEL_N // cfg.cluster
    assert len(loads) == twice * ((2 if cfg.l2 == "auto" else 1) * cfg.bm // cfg.a_box + per_stage_b)
    # l2: one createpolicy per hinted operand (in the producer thread, and in each storer for C), and
    # every copy of that operand carries it
    hint_a, hint_b, hint_c = h.L2_HINTS[cfg.l2]
    if cfg.epi not in h.TMA_OUT:
        hint_c = None                                    # C's hint rides on the TMA stores only
    hinted = re.findall(r"cp\.async\.bulk\.tensor\.2d\.[^ ]*\.L2::cache_hint \[", body)
    n_stores = cfg.passes * cfg.pass_cols // h.TMA_BOX if cfg.epi in h.TMA_OUT else 0
    assert len(hinted) == twice * ((cfg.bm // cfg.a_box if hint_a else 0) + (per_stage_b if hint_b else 0)) + \
        (n_stores if hint_c else 0)
    for hint in {hint_a, hint_b, hint_c} - {None, "auto"} | ({"evict_first"} if hint_a == "auto" else set()):
        assert f"createpolicy.fractional.L2::{hint}.b64" in body
    assert body.count("createpolicy") == sum(x is not None for x in (hint_a, hint_b, hint_c))
    if hint_a == "auto":
        # each A box twice, under complementary predicates: with the hint where a raster group fits in
        # a round, and without it
        a_loads = re.findall(r"@(!?)%p\d+ cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.mbarrier"
                             r"::complete_tx::bytes(\.L2::cache_hint)? \[%r\d+\], \[%rd\d+, \{%r\d+, %r\d+\}\], \[%r\d+\]", body)
        assert len(a_loads) == twice * 2 * (cfg.bm // cfg.a_box)
        assert sum(1 for _, hinted_ in a_loads if hinted_) == twice * cfg.bm // cfg.a_box
    assert sum(1 for x in loads if x) == (per_stage_b if cfg.cluster > 1 else 0)
    # producer: empty; consumer: full (split_hold: also in the first k-block, written on its own);
    # storer: the buffer's full barrier once per pass, and the consumer its empty barrier before pass 0
    # and in each of the three places pass 1 is written (bm=128: k-block STORER_DEFER_KB, the end of a
    # shorter tile, after the last tile; split_hold: the first k-block, the start of a 128-row tile
    # consumer 2 sits out, after the last tile), or, with every pass at the tile's end, before each
    # pass; bm=192: consumer 2 also waits for the stages of a 128-row tile it sits out
    whole = not cfg.held
    assert cfg.held == (cfg.hold == 1 and (cfg.bm == 128 or (cfg.bm == 192 and cfg.bk == 64)))
    # (lead: the producer also waits, in a 192-row tile, for the release `lead` stages back)
    # stream-K in 128 x 128 tiles: a second copy of the consumers' k-loop, without wgmma, for a warpgroup
    # whose rows all lie past M
    dead_loop = int(bool(cfg.sk) and cfg.bn == h.EPI_COLS)
    assert body.count("mbarrier.try_wait.parity.shared.b64") == \
        2 + dead_loop + cfg.split_hold + (cfg.bm == 192) + (cfg.lead > 0) + ((2 * cfg.passes if whole else 2 + 4) if storer else 0)
    # the consumers: bk/16 wgmma per k-block, m64 block and N part (twice with split_hold: the first
    # k-block has its own copy), fenced, committed, waited with the lag
    n_mma = body.count(f"wgmma.mma_async.sync.aligned.{cfg.shape}.f32.bf16.bf16")
    assert n_mma == cfg.bk // h.K_STEP * cfg.blocks * cfg.nsplit * (1 + cfg.split_hold)
    assert body.count("wgmma.commit_group.sync.aligned;") == 1 + 2 * cfg.split_hold
    if cfg.split_hold:
        # part 0 committed, the held pass written, then part 1's accumulators zeroed and fenced
        first = body.split("wgmma.commit_group.sync.aligned;")[1]
        assert first.count("stmatrix.sync.aligned.m8n8.x4.shared.b16") == h.EPI_COLS // 16
        assert first.count("mov.f32") == 4 * cfg.bn // cfg.nsplit // 8
        assert first.count("wgmma.fence.sync.aligned;") == 1 and first.count("wgmma.mma_async") == n_mma // 4   # part 1 of k-block 0
    assert "wgmma.mma_async" not in body.replace(f"wgmma.mma_async.sync.aligned.{cfg.shape}.", "")
    assert f"wgmma.wait_group.sync.aligned {cfg.lag};" in body and "wgmma.wait_group.sync.aligned 0;" in body
    trans = re.findall(r"wgmma\.mma_async[^;]*, (?:1|%p\d+), 1, 1, 0, (\d);", body)
    assert trans == [("1" if cfg.layout == "nn" else "0")] * n_mma
    # the epilogue: through the warpgroup's shared buffer (stmatrix, then 16-byte loads and stores)
    # or 4-byte stores straight from the registers (a fast path and a predicated edge path)
    if storer:
        # the consumers stmatrix pass 0 at the end of a tile and pass 1 in one of three places, and
        # fence each for the async proxy before the hand-off
        assert body.count("stmatrix.sync.aligned.m8n8.x4.shared.b16") == \
            (cfg.blocks * cfg.bn // 16 if whole else 4 * h.EPI_COLS // 16)
        assert re.search(r"mbarrier\.init\.shared\.b64 \[%r\d+\], 128;", body)
        handoffs = re.findall(r"fence\.proxy\.async\.shared::cta;\n\s*mbarrier\.arrive\.shared\.b64", body)
        assert len(handoffs) == (cfg.passes if whole else 4)
        if cfg.epi == "storer":
            # a storer warp copies both passes out (the consumers store nothing to global memory)
            assert body.count("ld.shared.v4.b32") == body.count("st.global.v4.b32") == 2 * h.WG_M // 2
            assert re.search(r"mbarrier\.init\.shared\.b64 \[%r\d+\], 32;", body)
        else:
            # one thread TMA-stores a pass's 64 x 64 boxes, waits for their reads before freeing the
            # buffer, and for completion before it leaves; nothing goes through st.global but, with
            # stream-K, a split tile's head's f32 partial (16-byte pieces) and its flag's release, which
            # the owner acquires, reads back and clears
            stores = re.findall(r"cp\.async\.bulk\.tensor\.2d\.global\.shared::cta\.bulk_group(?:\.L2::cache_hint)? \[", body)
            groups = cfg.bn // 8 if cfg.sk else 0           # a thread holds bn / 2 accumulators
            assert len(stores) == cfg.passes * cfg.pass_cols // h.TMA_BOX
            if cfg.sk == 2:
                # every part parks its partial and counts itself in (release); after the walk, for each
                # of at most two parked tiles: wait for the count (acquire), then a code path for each
                # `sk2_slice_paths` entry (P_lo, S, B), whose loop over the parts reads S groups of B
                # parts at a time as predicated loads (bn=256: 16 groups of 1 part, 4 of 4, 2 of 12, 1 of
                # 24; bn=128: 8 of 2, 2 of 8, 1 of 24), two predicated bf16-pair stores to C per group, the
                # count raised again (acq_rel) and put back to 0 by the last part
                paths = h.sk2_slice_paths(cfg.bn)
                want = {256: [(2, 16, 1), (8, 4, 4), (16, 2, 12), (32, 1, 24)], 128: [(2, 8, 2), (8, 2, 8), (16, 1, 24)]}
                assert paths == want[cfg.bn]
                slots = [S for _, S, _ in paths]
                assert body.count("st.global.v4.f32") == groups
                assert body.count("st.global.b32") == 2 * 2 * sum(slots)
                assert body.count("st.global") == groups + 4 * sum(slots)
                assert len(re.findall(r"@%p\d+ ld\.global\.cg\.v4\.f32", body)) == \
                    body.count("ld.global.cg.v4.f32") == 2 * sum(S * B for _, S, B in paths)
                assert body.count("red.release.gpu.global.add.u32") == 1
                assert body.count("ld.acquire.gpu.global.u32") == body.count("atom.acq_rel.gpu.global.add.u32") == \
                    body.count("st.relaxed.gpu.global.u32") == 2
                assert "st.release" not in body
            elif cfg.sk == 3:
                # every part parks its partial in its own shared memory (after the warpgroups meet on
                # barrier 4 and a proxy fence), then each thread meets the cluster twice wherever its role
                # ends (3 barrier.cluster arrive/wait pairs: producer, consumers and the common exit
                # path); the slice is read by code unrolled for each cluster size P of SK3_PARTS: a mapa
                # per CTA of the cluster and G / P unpredicated shared::cluster loads from each (G loads
                # in all per P), in batches of SK3_BATCH_REGS registers (two batches per P here), then
                # two predicated bf16-pair stores to C per group; no global partials; an unknown P traps
                sizes = [p for p in h.SK3_PARTS if p > 1]
                assert body.count("st.shared.v4.f32") == groups and "st.global.v4.f32" not in body
                assert body.count("st.global.b32") == sum(2 * groups // p for p in sizes) == body.count("st.global")
                assert body.count("ld.shared::cluster.v4.f32") == groups * len(sizes)
                assert not re.search(r"@%p\d+ ld\.shared::cluster", body)
                assert body.count("mapa.shared::cluster.u32") == sum(sizes)
                # for cluster size P, the CTA each mapa names is (rank + j) mod P, j = 0 .. P - 1: every
                # mapa's rank comes from an `and` with P - 1 (each part starts reading at its own CTA)
                masks = []
                for rank_reg in re.findall(r"mapa\.shared::cluster\.u32 %r\d+, %r\d+, (%r\d+);", body):
                    masks += re.findall(rf"and\.b32 {re.escape(rank_reg)}, %r\d+, (\d+);", body)
                assert sorted(int(x) for x in masks) == sorted(p - 1 for p in sizes for _ in range(p))
                assert h.SK3_BATCH_REGS == 64 and all(4 * groups // p * max(1, 64 // (4 * groups // p)) == 64
                                                      for p in sizes)
                assert re.search(r"@%p\d+ trap;", body[body.rindex("ld.shared::cluster"):])
                assert body.count("barrier.cluster.arrive.release;") == body.count("barrier.cluster.wait.acquire;") == 3
                assert ".aligned" not in body.split("barrier.cluster")[1][:10]
                assert "ld.global.cg" not in body and "\tatom." not in body and "\tred." not in body
                park = body.split("st.shared.v4.f32")[0]
                assert park.rindex("bar.sync 4, 256;") < park.rindex("fence.proxy.async.shared::cta")
            else:
                assert body.count("st.global") == body.count("st.global.v4.f32") == \
                    body.count("ld.global.cg.v4.f32") == groups
                assert body.count("st.release.gpu.global.u32") == body.count("ld.acquire.gpu.global.u32") == \
                    body.count("st.relaxed.gpu.global.u32") == int(cfg.sk)
            if cfg.sk:
                # the loading thread, the consumers and the two storer threads each walk the items
                assert len(re.findall(r"div\.u64", body)) >= 4
            assert "cp.async.bulk.wait_group.read 0;" in body and "cp.async.bulk.wait_group 0;" in body
            assert re.search(r"mbarrier\.init\.shared\.b64 \[%r\d+\], 1;", body)
    elif cfg.epi != "direct":
        passes = cfg.bn // h.EPI_COLS
        # smem_defer: the last pass is copied out in the next tile's first k-block, before a tile
        # without k-blocks, or after the last tile: three copies of that code
        copies = passes if cfg.epi == "smem" else passes - 1 + 3
        assert body.count("stmatrix.sync.aligned.m8n8.x4.shared.b16") == cfg.bn // 16
        assert body.count("ld.shared.v4.b32") == copies * h.WG_M // 8
        assert body.count("st.global.v4.b32") == copies * h.WG_M // 8
        assert body.count("st.global.b32") == 0
    else:
        assert "stmatrix" not in body and body.count("st.global.b32") == 2 * 2 * cfg.bn // 8
    if cfg.cluster > 1:
        assert "mapa.shared::cluster.u32" in body
        assert "mbarrier.arrive.shared::cluster.b64 _," in body
        assert body.count("barrier.cluster.wait") == 2
    elif cfg.sk != 3:                                       # sk=3: a launch's cluster is a tile's parts
        assert "mapa" not in body and "barrier.cluster" not in body


@pytest.mark.parametrize("cfg", P0_CONFIGS, ids=lambda c: c.name)
def test_inline_loads_kernel_structure(module, cfg):
    """producer=0: 384 threads at 168 registers and no setmaxnreg; one whole m64n256k16 per k-step
    (held: the first k-block of a tile as two m64n128k16 halves with the held pass written between
    them); the ring's barriers expect one loading thread and three releases; the loads sit in the
    ring fill (stages copies), the K loop, the tile's end and the loop of the 128-row tiles consumer
    2 sits out, each after a wait on the stage's empty barrier; each warpgroup TMA-stores its passes
    itself, each after its stores' read of the previous pass and a fence of its stmatrix writes
    (held: pass 0 at the tile's end, pass 1 in the next tile's first k-block, before a sat-out tile,
    or after the last tile)."""
    body = _body(module.emit().text, cfg.name)
    # (lwarp: a loading warp beside them, 416 threads at 128 registers: 4 warps on one 16K sub-partition)
    assert (cfg.threads, cfg.launch_regs) == ((416, 128) if cfg.lwarp else (384, 168)) and cfg.nsplit == 1
    assert f".reqntid {cfg.threads}" in body and f".maxnreg {cfg.launch_regs}" in body and "setmaxnreg" not in body
    assert body.count("mbarrier.init.shared.b64") == 2 * cfg.stages
    assert len(re.findall(r"mbarrier\.init\.shared\.b64 \[%r\d+\], 1;", body)) == cfg.stages
    assert len(re.findall(rf"mbarrier\.init\.shared\.b64 \[%r\d+\], {3 * cfg.cluster};", body)) == cfg.stages
    steps = cfg.bk // h.K_STEP
    assert body.count(f"wgmma.mma_async.sync.aligned.m64n{cfg.bn}k16.f32.bf16.bf16") == steps
    assert body.count(f"wgmma.mma_async.sync.aligned.m64n{cfg.bn // 2}k16.f32.bf16.bf16") == (2 * steps if cfg.held else 0)
    assert body.count("wgmma.commit_group.sync.aligned;") == 1 + 2 * cfg.held
    copies = 1 if cfg.lwarp else cfg.stages + 3          # lwarp: the loading warp's one loop
    # A: three 64-row boxes (a cluster: boxes rank and rank + 2 of them, multicast to both CTAs); B whole
    a_per_copy = (2 if cfg.l2 == "auto" else 1) * (2 if cfg.shares_a else 3)
    per_copy = a_per_copy + (1 if cfg.layout == "nt" else cfg.bn // h.PANEL_N)
    loads = re.findall(r"cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.mbarrier", body)
    assert len(loads) == copies * per_copy
    assert body.count(".multicast::cluster") == (copies * a_per_copy if cfg.shares_a else 0)
    assert body.count("mbarrier.arrive.expect_tx.shared.b64") == copies
    # waits: the loading thread's empty waits, the consumers' full waits (K loop, sat-out loop, and
    # held: the first k-block)
    assert body.count("mbarrier.try_wait.parity.shared.b64") == copies + 2 + cfg.held
    # releases: the sat-out loop, the K loop (previous k-block), the tile's end; a cluster: each also
    # in the peer CTA, which maps its barriers once and meets this one after the barrier set-up and
    # before exit; C's stores of a column past N (odd tiles_n) are skipped
    assert body.count("mbarrier.arrive.shared.b64") == 3
    assert body.count("mbarrier.arrive.shared::cluster.b64") == (3 if cfg.shares_a else 0)
    assert body.count("mapa.shared::cluster.u32") == int(cfg.shares_a)
    assert body.count("barrier.cluster.wait") == (2 if cfg.shares_a else 0)
    # bn=256: two 64 x 128 passes a tile (held: written in four places); bn=192: one 64 x 192 pass
    writes = 4 if cfg.held else cfg.passes
    assert cfg.passes * cfg.pass_cols == cfg.bn and cfg.held == (cfg.hold == 1 and cfg.bn == 256)
    stores = re.findall(r"cp\.async\.bulk\.tensor\.2d\.global\.shared::cta\.bulk_group(?:\.L2::cache_hint)? \[", body)
    assert len(stores) == writes * cfg.pass_cols // h.TMA_BOX
    # stream-K: a split tile's head stores its partial in 16-byte pieces and releases a flag; the tail
    # acquires it, loads the partial and clears the flag; nothing else goes through st.global
    groups = cfg.bn // 2 // 4 if cfg.sk else 0
    assert body.count("st.global.v4.f32") == body.count("ld.global.cg.v4.f32") == groups
    assert body.count("st.release.gpu.global.u32") == body.count("ld.acquire.gpu.global.u32") == \
        body.count("st.relaxed.gpu.global.u32") == int(cfg.sk)
    assert body.count("st.global") == groups
    assert body.count("stmatrix.sync.aligned.m8n8.x4.shared.b16") == writes * cfg.pass_cols // 16
    assert body.count("cp.async.bulk.wait_group.read 0;") == writes and body.count("cp.async.bulk.wait_group 0;") == 1
    for part in body.split("cp.async.bulk.wait_group.read 0;")[1:]:
        assert part.index("stmatrix") < part.index("fence.proxy.async.shared::cta") < part.index("cp.async.bulk.tensor")
    if cfg.held:
        # the held pass goes out between the two halves of the first k-block
        first = body.split("wgmma.commit_group.sync.aligned;")[1]
        assert first.count("stmatrix.sync.aligned.m8n8.x4.shared.b16") == h.EPI_COLS // 16
        assert first.count("wgmma.mma_async") == steps and first.index("stmatrix") < first.index("wgmma.fence")
    assert h.bar_bytes(cfg) == 16 * cfg.stages and h.smem_bytes(cfg) <= 227 * 1024


def _sk_walk(m, n, k, ctas, bn=192, bm=192, sk=1):
    """Python's copy of the stream-K kernels' walk: for each CTA its items (unit, kb0, kb1) in order."""
    grid, _, sk_first, tiles = h.sk_plan(m, n, k, ctas, bn, bm, sk)
    nk = -(-k // h.BK)
    units = sk_first + tiles
    out = []
    # 128 x 128 tiles with sk=1, every tile in two parts over more than SK_SKEW_MIN_ROWS rows: the owner (the
    # odd CTA) starts SK_SKEW k-blocks early, at most a quarter of a part (`_SkWalk._skew`)
    skewed = (bm, bn, sk) == (128, 128, 1) and sk_first == 0 and grid == 2 * tiles and m > h.SK_SKEW_MIN_ROWS
    skew = min(nk >> 3, h.SK_SKEW) if skewed else 0
    for c in range(grid):
        items = [(c + i * grid, 0, nk) for i in range(sk_first // grid)]
        gs, ge = c * tiles * nk // grid, (c + 1) * tiles * nk // grid
        gs, ge = (gs - skew, ge) if c % 2 else (gs, ge - skew)
        while ge > gs:
            t = (ge - 1) // nk
            seg = max(gs, t * nk)
            items.append((sk_first + t, seg - t * nk, ge - t * nk))
            ge = seg
        out.append(items)
    return out, units, nk


@pytest.mark.parametrize("m, n, k, ctas", [(6144, 6144, 6144, 132), (8192, 8192, 8192, 132), (3072, 3072, 3072, 132),
                                           (4096, 4096, 512, 132), (420, 520, 456, 4), (200, 264, 200, 3),
                                           (1000, 3000, 72, 7), (192, 192, 64, 132), (5000, 200, 9000, 114),
                                           (1024, 1024, 8192, 132), (1024, 1024, 1024, 132), (512, 512, 16384, 132),
                                           (200, 200, 640, 132), (2048, 2048, 8192, 132), (100, 4096, 4096, 132),
                                           (64, 1000, 520, 132), (24, 4096, 4096, 132)])
@pytest.mark.parametrize("bm, bn, sk", [(192, 192, 1), (128, 256, 1), (128, 256, 2), (128, 128, 1)],
                         ids=["192x192", "128x256", "128x256-sk2", "128x128"])
def test_stream_k_walk_covers_each_k_block_once(m, n, k, ctas, bm, bn, sk):
    """sk_plan and the kernel's walk: every k-block of every tile is done exactly once; a tile is either
    whole in one CTA or split between consecutive CTAs. The one holding its last k-block owns it and
    walks that item last; every other part is the first item its CTA walks (its partial is stored
    before the owner waits for it), and the owner finds them all by going down from the CTA before it
    to the one that holds the tile's first k-block, which `_SkWalk.owner` computes in one division (as
    it does the one that holds the last, for sk=2's parts). With at least as many tiles as CTAs a tile
    has at most two parts; with fewer, every tile is streamed over sk_grid's grid, a multiple of the
    tiles, so every tile has the same number of parts and each CTA one item. The same for both kernels' tiles and for
    both stream-K kernels' grids, and in 128 x 128 tiles, whose owners of two-part tiles start early."""
    walks, units, nk = _sk_walk(m, n, k, ctas, bn, bm, sk)
    grid, split, sk_first, tiles = h.sk_plan(m, n, k, ctas, bn, bm, sk)
    assert units == -(-m // bm) * -(-n // bn)
    total = tiles * nk
    ends = [(c + 1) * total // grid for c in range(grid)]             # each CTA's ge
    done = np.zeros((units, nk), int)
    parts = {}
    for c, items in enumerate(walks):
        for pos, (u, kb0, kb1) in enumerate(items):
            assert 0 <= kb0 < kb1 <= nk
            done[u, kb0:kb1] += 1
            parts.setdefault(u, []).append((c, pos, len(items), kb0, kb1))
    assert (done == 1).all()
    for u, ps in parts.items():
        if len(ps) == 1:
            assert ps[0][3:] == (0, nk)
            continue
        ps.sort(key=lambda p: p[3])
        assert [p[0] for p in ps] == list(range(ps[0][0], ps[0][0] + len(ps)))      # consecutive CTAs
        assert ps[0][3] == 0 and ps[-1][4] == nk and all(a[4] == b[3] for a, b in zip(ps, ps[1:]))
        owner, others = ps[-1], ps[:-1]
        assert owner[1] == owner[2] - 1                                 # the owner's last item
        whole = sk_first // grid                                        # items before the streamed range
        assert all(p[1] == whole for p in others)                       # each other part its range's first
        first = (u - sk_first) * nk
        lo, hi = (((first + 1) * grid - 1) // total,                    # _SkWalk.owner of the tile's first
                  ((first + nk) * grid - 1) // total)                   # and last k-blocks
        assert (lo, hi) == (ps[0][0], owner[0])
        assert ends[lo - 1] <= first < ends[lo] if lo else first < ends[0]
        read, j = [], owner[0] - 1                                      # the owner's loop in the kernel
        while True:
            read.append(j)
            if not j > lo:
                break
            j -= 1
        assert read == [p[0] for p in reversed(others)]
        if units >= ctas:
            assert len(ps) == 2
    assert split == bm * -(-m // bm)
    if units >= ctas:
        assert grid == ctas and (tiles == 0 or grid <= tiles < 2 * grid)
    else:
        assert grid == h.sk_grid(units, nk, ctas, sk, lambda g: h.sk_dram_kblocks(m, n, k, bn, g)) and \
            units <= grid <= ctas and sk_first in (0, units)
        assert (sk_first == units) == (grid == units) and grid % units == 0
        assert all(len(items) == 1 for items in walks)
        assert {len(ps) for ps in parts.values()} == {grid // units}


def test_sk_grid_trades_range_length_against_partials():
    """sk_grid: one tile of 16 k-blocks is not worth splitting in more than two with sk=1 (a second part
    saves 8 k-blocks and adds a partial worth SK_PART_KBLOCKS, which still pays, a third does not); a few
    tiles over a long K take a multiple of the tiles; sk=2's cheap parts take more of them, its fixed
    cost fewer where the ranges are short; a DRAM floor stops the grid growing once the ranges are shorter
    than it; the grid never leaves the range [units, ctas]."""
    assert (h.SK_PART_KBLOCKS, h.SK2_PART_KBLOCKS, h.SK2_FIXED_KBLOCKS) == (3, 0.5, 10)
    assert h.sk_grid(1, 16, 132) == 2                     # 8 + 3 against 16, 6 + 6 and 4 + 9
    assert h.sk_grid(1, 16, 132, 2) == 4                  # 4 + 1.5 + 10 against 16, 8 + 0.5 + 10, 6 + 1 + 10;
    assert h.sk_streamed_cost(1, 16, 6, 2) == h.sk_streamed_cost(1, 16, 4, 2)   # 3 + 2.5 + 10: the fewer
    assert h.sk_grid(36, 128, 132) == 108                 # 43 + 6 against 64 + 3 (72); 132 is no multiple
    assert h.sk_grid(9, 256, 132) == 72                   # 32 + 21 against 29 + 24 (81): the fewer on a tie
    assert h.sk_grid(9, 256, 132, 2) == 126               # 19 + 6.5 + 10 against 20 + 6 + 10 (117)
    assert h.sk_grid(32, 32, 132) == 96                   # 11 + 6 against 8 + 9 (128) and 16 + 3 (64)
    assert h.sk_grid(16, 128, 132, 2) == 128              # 16 + 3.5 + 10 against 22 + 2.5 + 10 (96)
    # one tile of 1024 k-blocks with sk=2: 41 parts (25 + 20 + 10) without a floor; a floor of 40
    # k-blocks makes every range shorter than it cost 40, so 26 parts (40 + 12.5 + 10)
    assert h.sk_grid(1, 1024, 132, 2) == 41 and h.sk_grid(1, 1024, 132, 2, 40) == 26
    assert h.sk_streamed_cost(1, 1024, 32, 2, 40) == 40 + 15.5 + 10
    # the floor in sk_plan: the operands' bytes at SK_DRAM_BYTES a 256-wide k-block, 0.575 of it 128-wide
    assert h.sk_dram_kblocks(128, 128, 65536) == pytest.approx(256 * 65536 * 2 / h.SK_DRAM_BYTES)
    assert h.sk_dram_kblocks(128, 128, 65536, 128) == pytest.approx(h.sk_dram_kblocks(128, 128, 65536) / 0.575)
    # (128^2 x 65536: 29.2 k-blocks of 128 x 128 tiles, so 36 parts of 28.4 rather than 41 of 25)
    assert h.sk_plan(128, 128, 65536, 132, 128, 128, 2)[0] == \
        h.sk_grid(1, 1024, 132, 2, h.sk_dram_kblocks(128, 128, 65536, 128)) == 36 != h.sk_grid(1, 1024, 132, 2)
    for units, nk, ctas in [(1, 1, 132), (5, 2, 7), (100, 1000, 132), (131, 4, 132), (3, 500, 132)]:
        for sk in (1, 2):
            grid = h.sk_grid(units, nk, ctas, sk)
            assert units <= grid <= ctas and grid % units == 0
    assert h.sk_grid(1, 1, 132) == 1 and h.sk_grid(100, 1000, 132) == 100
    # tests/test_executor_gemm_hopper.py's case of more sk=2 parts than a 128 x 128 tile's 16 groups
    assert h.sk_plan(100, 120, 10752, 21, 128, 128, 2)[0] == 17
    with pytest.raises(ValueError, match="sk = 4"):
        h.sk_plan(512, 512, 16384, 132, 256, 128, 4)


@pytest.mark.parametrize("m, n, k, ctas", [(512, 1024, 8192, 132), (256, 256, 16384, 132), (1000, 1000, 1000, 132),
                                           (256, 512, 16384, 120), (128, 128, 65536, 120),
                                           (1000, 1000, 1000, 64), (257, 520, 4104, 132), (130, 264, 72, 132),
                                           (2048, 2048, 8192, 132), (1, 8, 8, 132), (100, 200, 128, 132),
                                           (1024, 1024, 2048, 100)])
def test_sk3_plan_gives_each_tile_one_cluster_of_parts(m, n, k, ctas):
    """sk=3: every tile is split into P parts from SK3_PARTS (the cluster's size), at most one part per
    k-block and at most ctas CTAs in all; the ranges of the walk put part r of tile t in CTA t P + r (the
    cluster of tile t, rank r), one item each, so a cluster's CTAs are exactly its tile's parts.
    P = 1 runs whole tiles."""
    grid, split, sk_first, streamed = h.sk_plan(m, n, k, ctas, 256, 128, 3)
    units, nk = -(-m // 128) * -(-n // 256), -(-k // 64)
    assert split == 128 * -(-m // 128) and grid <= ctas and grid % units == 0
    parts = grid // units
    assert parts in h.SK3_PARTS and parts <= nk
    assert (sk_first, streamed) == ((units, 0) if parts == 1 else (0, units))
    assert grid == min((p * units for p in h.SK3_PARTS if p * units <= ctas and p <= nk
                        and (p < 16 or units >= h.SK3_MIN_TILES_16)),
                       key=lambda g: (h.sk_streamed_cost(units, nk, g, 3), g))
    walks, _, _ = _sk_walk(m, n, k, ctas, 256, 128, 3)
    for cta, items in enumerate(walks):
        assert len(items) == 1
        u, kb0, kb1 = items[0]
        t, r = divmod(cta, parts)
        assert u == t and (kb0, kb1) == (r * nk // parts, (r + 1) * nk // parts)
    if parts > 1:          # a launch: one cluster of P CTAs a tile, no workspace, C passed for the slices
        cfg = h.Config("nt", 1, lag=0, hold=0, sk=3)
        f = RecordingFunction()
        h.launch(f, cfg, (b"a" * 128, b"b" * 128, b"c" * 128), 0x2000, m, n, k, ctas)
        (_, args, kw), = f.calls
        assert args[0] == (grid,) and kw["cluster"] == (parts, 1, 1)
        assert [int(x) for x in args[2][6:]] == [0, 0x2000]


def test_sk3_takes_no_workspace_and_few_tiles_only():
    # choose's estimate of the CTAs clusters of 8 leave: 15 of 16 clusters on 132 SMs (an H100's count)
    assert [h.sk3_ctas(c) for c in (132, 128, 114, 16, 15, 8, 1)] == [120, 120, 104, 8, 15, 8, 1]
    cfg = h.Config("nt", 1, lag=0, hold=0, sk=3)
    assert cfg.name.endswith("_sk3") and h.workspace(cfg, 512, 1024, 8192, 132) is None
    assert h.workspace_bytes(cfg, 512, 1024, 8192, 132) == 0
    maps = (b"a" * 128, b"b" * 128, b"c" * 128)
    with pytest.raises(ValueError, match="for stream-K kernels"):
        h.launch(RecordingFunction(), cfg, maps, 0, 512, 1024, 8192, 132, workspace=0x1000)
    # 512 tiles of 128 x 256 on 132 CTAs: no cluster can hold a tile's parts and whole rounds too
    for call in (lambda: h.sk_plan(4096, 4096, 256, 132, 256, 128, 3),
                 lambda: h.launch(RecordingFunction(), cfg, maps, 0, 4096, 4096, 256, 132)):
        with pytest.raises(ValueError, match="at most as many tiles"):
            call()
    with pytest.raises(ValueError, match="sk = 3"):
        h.Config("nt", 1, 3, bm=192, bn=192, hold=0, producer=0, sk=3).check()
    with pytest.raises(ValueError, match="sk = 3 parks"):
        h.Config("nt", 1, 2, lag=0, hold=0, sk=3).check()       # 2 stages of 48 KiB < 2 x 64 KiB


def test_stream_k_launch_needs_its_workspace():
    cfg = h.Config("nt", 1, 3, bm=192, bn=192, hold=0, producer=0, sk=1)
    maps = (b"a" * 128, b"b" * 128, b"c" * 128)
    need = h.workspace_bytes(cfg, 6144, 6144, 6144, 132)
    grid = h.sk_plan(6144, 6144, 6144, 132, 192)[0]
    assert need == -(-grid * 12 // 256) * 256 + grid * 3 * 64 * 192 * 4            # a slot per CTA
    assert h.sk_flag_bytes(cfg, grid) == -(-grid * 12 // 256) * 256
    assert h.workspace(h.Config("nt", 1, 3, bm=192, producer=0), 6144, 6144, 6144, 132) is None
    f = RecordingFunction()
    with pytest.raises(ValueError, match="needs a workspace"):
        h.launch(f, cfg, maps, 0, 6144, 6144, 6144, 132)
    with pytest.raises(ValueError, match="for stream-K kernels"):
        h.launch(f, h.Config("nt", 1, 3, bm=192, producer=0), maps, 0, 6144, 6144, 6144, 132, workspace=0x1000)

    class Small:
        nbytes, ptr = need - 1, 0x1000
    with pytest.raises(ValueError, match=f"needs {need}"):
        h.launch(f, cfg, maps, 0, 6144, 6144, 6144, 132, workspace=Small())
    with pytest.raises(ValueError, match="sk_plan"):
        h.launch(f, cfg, maps, 0, 6144, 6144, 6144, 132, workspace=0x1000, m_split=192)
    h.launch(f, cfg, maps, 0, 6144, 6144, 6144, 132, workspace=0x1000)
    grid, split, sk_first, _ = h.sk_plan(6144, 6144, 6144, 132, 192)
    (_, args, kw), = f.calls
    assert args[0] == (grid,) and [int(x) for x in args[2][6:]] == [split, 0x1000, sk_first]
    # the 128 x 256 kernel: a 64 x 256 partial per consumer warpgroup, no m_split argument
    cfg = h.Config("nt", 1, lag=0, hold=0, sk=1)
    grid, split, sk_first, _ = h.sk_plan(4096, 4096, 4096, 132, 256, 128)
    assert (grid, split, sk_first) == (132, 4096, 264)            # two whole rounds, 248 tiles streamed
    assert h.workspace_bytes(cfg, 4096, 4096, 4096, 132) == -(-grid * 8 // 256) * 256 + grid * 2 * 64 * 256 * 4
    f = RecordingFunction()
    h.launch(f, cfg, maps, 0, 4096, 4096, 4096, 132, workspace=0x1000)
    (_, args, kw), = f.calls
    assert args[0] == (grid,) and [int(x) for x in args[2][6:]] == [0x1000, sk_first]
    # sk=2: a count per (streamed tile, warpgroup), two partials per (CTA, warpgroup), and C's address
    cfg = h.Config("nt", 1, lag=0, hold=0, sk=2)
    assert h.sk_flag_bytes(cfg, grid, 248) == -(-248 * 8 // 256) * 256
    assert h.workspace_bytes(cfg, 4096, 4096, 4096, 132) == -(-248 * 8 // 256) * 256 + grid * 2 * 2 * 64 * 256 * 4
    f = RecordingFunction()
    h.launch(f, cfg, maps, 0x2000, 4096, 4096, 4096, 132, workspace=0x1000)
    (_, args, kw), = f.calls
    assert [int(x) for x in args[2][6:]] == [0x1000, sk_first, 0x2000]


@pytest.mark.parametrize("kw, msg", [(dict(bm=128), "bm = 192"), (dict(bm=192, epi="ring", stages=4), "epi='tma'"),
                                     (dict(bm=192, lag=0), "lag 0"), (dict(bm=192, producer=2), "producer must be"),
                                     (dict(bm=192, bn=128), "bn 128"), (dict(bm=192, bn=192, producer=1), "bn 192"),
                                     (dict(bm=192, hold=0, sk=1), "bn = 192"), (dict(bm=192, bn=192, sk=1), "hold=0"),
                                     (dict(producer=1, hold=0, sk=1, epi="storer"), "epi='tma'"),
                                     (dict(producer=1, hold=0, sk=1, bm=192), "bm = 128"),
                                     (dict(producer=1, hold=0, sk=1, kdir=1), "kdir=0"),
                                     (dict(producer=1, hold=1, sk=1), "hold=0"),
                                     (dict(bm=192, bn=192, hold=0, sk=2), "sk = 2"),
                                     (dict(bm=192, lwarp=1), "lwarp = 1"), (dict(bm=192, bn=192, lwarp=2), "lwarp = 2"),
                                     (dict(bm=192, bn=192, lwarp=True), "lwarp = True")])
def test_inline_loads_config_checks(kw, msg):
    kw = {"producer": 0, **kw}
    with pytest.raises(ValueError, match=re.escape(msg)):
        h.Config("nt", 1, kw.pop("stages", 3), **kw).check()


def test_ring_epilogue_lends_the_last_stage(module):
    """epi="ring": four 56 KiB stages and no buffers of their own; the tile's consumers meet before
    writing into the stage of its last k-block (three in a 192-row tile, two in a 128-row one), the
    consumers release one stage fewer per tile, and each storer releases that stage after its last pass."""
    cfg = h.Config("nt", 1, 4, bm=192, epi="ring")
    tma = h.Config("nt", 1, 3, bm=192)
    assert h.epi_bytes(cfg) == 0 and h.smem_bytes(cfg) == 4 * cfg.stage_bytes + h.bar_bytes(cfg) + 1024 <= 227 * 1024
    assert cfg.passes == 2 and cfg.split_hold
    body, plain = (_body(module.emit().text, c.name) for c in (cfg, tma))
    assert re.search(r"@%p\d+ bar\.sync 4, 384;", body) and re.search(r"@%p\d+ bar\.sync 5, 256;", body)
    assert "bar.sync 4" not in plain
    # the storer's release: an arrive on a stage's empty barrier right after the read wait of pass 1
    assert len(re.findall(r"cp\.async\.bulk\.wait_group\.read 0;\n\s*mbarrier\.arrive\.shared\.b64 [^\n]*\n"
                          r"(?:\s*[^\n]*\n){1,4}?\s*mbarrier\.arrive\.shared\.b64", body)) == 1
    arrives = body.count("mbarrier.arrive.shared.b64")
    assert arrives == plain.count("mbarrier.arrive.shared.b64")      # one consumer release moved to the storer
    for kw, msg in ((dict(bm=128), "bm = 192"), (dict(bm=192, bk=32), "bk = 64"), (dict(bm=192, lag=0), "lag 1")):
        with pytest.raises(ValueError, match=re.escape(msg)):
            h.Config("nt", 1, 4, epi="ring", **kw).check()


@pytest.mark.parametrize("cfg", [h.Config("nt", 1), h.Config("nt", 1, 3, bm=192), h.Config("nt", 1, 4, bm=192, epi="ring")],
                         ids=lambda c: c.name)
def test_lint_catches_a_missing_fence_in_the_hand_off(cfg, monkeypatch):
    """Without the fence.proxy.async between the consumers' stmatrix and their mbarrier.arrive, the storer
    thread's TMA store (after its mbarrier wait) may read stale shared memory: PTX-W-PROXY-PUBLISH names
    the arrive of every hand-off."""
    from ptxgen.lint import lint_ptx
    monkeypatch.setattr(h, "_epi_fence", lambda k: None)
    m = h.build("sm_90a", [cfg])
    assert any(d.code == "PTX-W-PROXY-PUBLISH" for d in m.check_async())
    text = m.emit().text
    lines = text.split("\n")
    found = [d for d in lint_ptx(text) if d.code == "PTX-W-PROXY-PUBLISH"]
    handoffs = len(re.findall(r"stmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16[^\n]*\n\s*mbarrier\.arrive\.shared\.b64", text))
    assert handoffs >= 2
    at = {d.loc.line for d in found}
    for i, line in enumerate(lines, 1):
        if "mbarrier.arrive.shared.b64" in line and "stmatrix" in lines[i - 2]:
            assert i in at, (i, line)


def test_lints_clean(module):
    from ptxgen.lint import lint_ptx
    diags = lint_ptx(module.emit().text)
    assert not diags, [str(d) for d in diags][:5]
    assert module.check_async() == []


@pytest.mark.ptxas
def test_assembles_without_spills_or_warnings(module):
    from ptxgen.ptxas import assemble
    res = assemble(module.emit(), "sm_90a", cache=False)
    assert not res.warnings, [str(w) for w in res.warnings]   # C7510/C7515 would be wgmma serialisation
    for cfg in CONFIGS:
        r = res.resources[cfg.name]
        # setmaxnreg kernels are allocated the launch budget; producer=0 needs no more than it
        assert r.registers == cfg.launch_regs if cfg.producer else r.registers <= cfg.launch_regs, (cfg.name, r.registers)
        assert r.spill_stores == 0 and r.spill_loads == 0, cfg.name


def test_descriptor_tiles_match_the_tma_boxes():
    for cfg in CONFIGS:
        tile_a, tile_b = cfg.tiles()
        blocks = cfg.consumers * cfg.blocks              # m64 blocks of A in a stage
        assert tile_a.nbytes * blocks == cfg.a_stage
        assert tile_a.nbytes * blocks + tile_b.nbytes * cfg.nsplit == cfg.stage_bytes
        # every tile start (stage base + m64 block offset, B after A) keeps the swizzle's alignment
        for s in range(cfg.stages):
            base = s * cfg.stage_bytes
            for c in range(blocks):
                assert (base + c * tile_a.nbytes) % tile_a.alignment == 0
            for p in range(cfg.nsplit):
                assert (base + cfg.a_stage + p * tile_b.nbytes) % tile_b.alignment == 0
        assert h.smem_bytes(cfg) <= 227 * 1024


@pytest.mark.parametrize("m, n, ctas, cluster, want", [
    (4096, 4096, 132, 1, 128), (4096, 4096, 132, 2, 128), (128, 256, 132, 2, 2), (1, 8, 132, 1, 1),
    (130, 264, 132, 2, 4), (4096, 4096, 120, 2, 104), (4096, 4096, 131, 2, 128), (6144, 6144, 132, 1, 128),
    (8192, 8192, 132, 1, 128), (1000, 1000, 132, 1, 32), (4096, 4352, 132, 1, 109)])
def test_grid_is_persistent_and_whole_clusters(m, n, ctas, cluster, want):
    assert h.grid_for(h.Config("nt", cluster), m, n, ctas) == want


@pytest.mark.parametrize("cluster", [1, 2])
def test_grid_keeps_the_rounds_with_the_fewest_ctas(cluster):
    cfg = h.Config("nt", cluster)
    for m in range(128, 9000, 700):
        for n in range(256, 9000, 900):
            units = -(-(-(-m // h.BM)) // cluster) * -(-n // cfg.bn)
            for ctas in (132, 114, 8):
                grid = h.grid_for(cfg, m, n, ctas)
                slots = ctas // cluster
                rounds = -(-units // slots)
                assert grid % cluster == 0 and grid <= slots * cluster
                assert -(-units // (grid // cluster)) == rounds            # no more rounds than a full grid
                assert grid == cluster or -(-units // (grid // cluster - 1)) > rounds   # and no fewer CTAs do it


@pytest.mark.parametrize("kw, msg", [(dict(layout="tn"), "layout"), (dict(cluster=4), "cluster"),
                                     (dict(bk=128), "bk"), (dict(bn=96), "bn = 96"),
                                     (dict(bn=192, cluster=2, layout="nn"), "bn = 192"), (dict(stages=5), "do not fit"), (dict(bn=192, epi="smem"), "epi"),
                                     (dict(bn=128, epi="storer"), "storer with bn = 256"),
                                     (dict(bn=64), "tma with bn = 128, 192 or 256"), (dict(lag=2), "lag"),
                                     (dict(bn=192, sk=1, hold=0), "sk = 1 in 128-row tiles needs bn = 128 or 256")])
def test_config_check_names_the_field(kw, msg):
    with pytest.raises(ValueError, match=re.escape(msg)):
        h.Config(**kw).check()


def test_config_parse_takes_fields_in_order():
    assert h.Config.parse("nt:1:3:1:8:64:256:tma:192") == h.Config("nt", 1, 3, bm=192)
    assert h.Config.parse("nn:2") == h.Config("nn", 2)
    assert h.Config.parse("nt:1:3:1:8:64:256:tma:192:0").name.endswith("_m192_h0")
    assert h.Config.parse("nt:1:4:1:8:64:256:ring:192:1:3") == h.Config("nt", 1, 4, bm=192, epi="ring", lead=3)
    assert h.Config.parse("nt:1:3:1:8:64:256:tma:192:1:0:1") == h.Config("nt", 1, 3, bm=192, mix=1)
    assert h.Config.parse("nt:1:3:1:8:64:256:tma:192:1:0:0:abc") == h.Config("nt", 1, 3, bm=192, l2="abc")
    assert h.Config.parse("nt:1:3:1:16:64:256:tma:192:1:0:0:auto:0") == h.Config("nt", 1, 3, group=16, bm=192, producer=0)
    assert h.Config.parse("nt:1:3:1:16:64:192:tma:192:1:0:0:auto:0:0:1") == \
        h.Config("nt", 1, 3, group=16, bm=192, bn=192, producer=0, lwarp=1)
    assert h.Config.parse("nt:1:4:1:8:64:256:tma:128:1:0:0:auto:1:0:0:1") == h.Config("nt", 1, kdir=1)
    assert h.Config("nt", 1, kdir=1).name.endswith("_kr")
    assert h.Config.parse("nt:1:4:0:8:64:256:tma:128:1:0:0:auto:1:0:0:0:1") == h.Config("nt", 1, lag=0, trace=1)
    assert h.Config("nt", 1, trace=1).name.endswith("_tr")
    assert h.Config.parse("nt:1:4:0:8:64:256:tma:128:1:0:0:auto:1:0:0:0:0:1") == h.Config("nt", 1, lag=0, pdl=1)
    assert h.Config("nt", 1, pdl=1).name.endswith("_pdl")
    assert h.Config.parse("nt:1:3:1:16:64:256:tma:192:1:0:0:auto:1:0:0:1:0:0:1") == \
        h.Config("nt", 1, 3, group=16, bm=192, kdir=1, serp=1)
    assert h.Config("nt", 1, serp=1).name.endswith("_sp")
    for bad, msg in (("", "1 to 20"), ("nt:1:4:0:8:64:256:tma:128:1:0:0:auto:1:0:0:0:1:1", "pdl = 1"),
                     ("nt:1:4:0:8:64:256:tma:128:1:0:0:auto:1:0:0:0:0:2", "pdl = 2"), ("nt:1:3:1:8:64:256:tma:192:1:0:0:auto:1:0:0:0:1", "trace = 1"),
                     ("nt:2:4:1:8:64:256:tma:128:1:0:0:auto:1:0:0:0:1", "trace = 1"),
                     ("nt:1:4:1:8:64:256:storer:128:1:0:0:auto:1:0:0:0:1", "trace = 1"),
                     ("nt:1:4:1:8:64:256:tma:128:1:0:0:auto:1:0:0:0:2", "trace = 2"), ("nt:2:4:1:8:64:256:tma:128:1:0:0:auto:1:0:0:1", "kdir = 1"),
                     ("nt:1:4:1:8:64:256:tma:128:1:0:0:auto:1:0:0:2", "kdir = 2"), ("nt:1:4:1:8:64:256:tma:128:1:0:0:auto:1:0:0:0:0:0:2", "serp = 2"), ("nt:x", "cluster must be a whole number"), ("nt:1:9", "do not fit"),
                     ("nt:1:3:1:8:64:256:tma:192:0:1:1:0:c:1:0:0:1:0:0:0:x", "1 to 20"),
                     ("nt:1:3:1:16:64:256:tma:192:1:0:0:auto:0:0:1", "lwarp = 1"), ("nt:1:4:1:8:64:256:tma:128:1:0:x", "mix must be"),
                     ("nt:1:4:1:8:64:256:tma:128:1:0:1", "mix = 1"), ("nt:1:4:1:8:64:256:tma:128:1:0:0:b", "l2 = 'b'"), ("nt:1:3:1:8:64:256:tma:192:1:0:2", "mix = 2"), ("nt:1:4:1:8:64:256:tma:128:2", "hold"),
                     ("nt:1:4:1:8:64:256:tma:128:1:2", "lead = 2"), ("nt:1:4:1:8:64:256:ring:192:1:4", "lead = 4")):
        with pytest.raises(ValueError, match=re.escape(msg)):
            h.Config.parse(bad)


def test_trace_buffer_is_checked_at_launch_and_decoded_per_cta():
    cfg, plain = h.Config("nt", 1, lag=0, trace=1), h.Config("nt", 1)
    maps = (np.uint64(1), np.uint64(2), np.uint64(3))
    grid = h.grid_for(cfg, 4096, 4096, 132)
    buf = np.zeros(h.trace_bytes(grid) // 8, np.uint64)
    with pytest.raises(ValueError, match="needs trace="):
        h._launch_config(cfg, maps, 0, 4096, 4096, 4096, 132, True, None)
    with pytest.raises(ValueError, match="Config.trace"):
        h._launch_config(plain, maps, 0, 4096, 4096, 4096, 132, True, None, trace=buf)
    with pytest.raises(ValueError, match=f"{grid} CTAs need {h.trace_bytes(grid)}"):
        h._launch_config(cfg, maps, 0, 4096, 4096, 4096, 132, True, None, trace=buf[:-1])
    class Dev:                               # a device allocation as the runtime's DeviceBuffer shows it
        nbytes, ptr = h.trace_bytes(grid), 0x7000_0000
    (g,), _, args, _, _ = h._launch_config(cfg, maps, 0, 4096, 4096, 4096, 132, True, None, trace=Dev())
    assert g == grid and int(args[-1]) == 0x7000_0000 and len(args) == 7
    # the words of CTA c: TRACE_FIELDS in order, then one per tile; then as many %clock64 words
    S = h.TRACE_SLOTS
    words = np.arange(2 * 2 * S, dtype=np.uint64)
    got = h.read_trace(words, 2)
    assert list(got) == list(h.TRACE_FIELDS) + ["tiles", "clock"]
    last = len(h.TRACE_FIELDS) - 1                  # c_written, the last field
    assert got["start"].tolist() == [0, 2 * S] and got["c_written"].tolist() == [last, 2 * S + last]
    assert got["tiles"].shape == (2, h.TRACE_TILES) and got["tiles"][1, 0] == 2 * S + len(h.TRACE_FIELDS)
    clk = got["clock"]
    assert "sm" not in clk and set(clk) == set(h.TRACE_FIELDS) - {"sm"} | {"tiles"}
    assert clk["start"].tolist() == [S, 3 * S] and clk["c_written"].tolist() == [S + last, 3 * S + last]
    assert clk["tiles"].shape == (2, h.TRACE_TILES) and clk["tiles"][0, -1] == 2 * S - 1
    with pytest.raises(ValueError, match=f"{4 * S} words, got {4 * S - 1}"):
        h.read_trace(words[:-1], 2)
    with pytest.raises(ValueError, match="got 9"):
        h.read_trace(words[:9], 2)


def test_a_pdl_kernel_is_launched_and_bound_with_pdl():
    maps = (np.uint64(1), np.uint64(2), np.uint64(3))
    for pdl in (0, 1):
        cfg = h.Config("nt", 1, lag=0, pdl=pdl)
        f = RecordingFunction()
        h.launch(f, cfg, maps, 0, 4096, 4096, 4096, 132)
        assert h.bind(f, cfg, maps, 0, 4096, 4096, 4096, 132) == "bound"
        assert [(what, kw["pdl"]) for what, _, kw in f.calls] == [("launch", bool(pdl)), ("bind", bool(pdl))]


@pytest.mark.parametrize("cfg", [h.Config("nt", 1, lag=0, pdl=1), h.Config("nt", 2, pdl=1),
                                 h.Config("nn", 1, 3, group=16, bm=192, pdl=1),
                                 h.Config("nt", 1, 3, group=16, bm=192, bn=192, producer=0, lwarp=1, pdl=1)],
                         ids=lambda c: c.name)
def test_pdl_waits_for_the_previous_kernel_before_any_global_access(cfg):
    """Config.pdl: every thread signals launch_dependents and waits, after the barriers are set up and
    before the first load or store of global memory; without pdl neither instruction is there."""
    text = str(h.build("sm_90a", [cfg]).emit())
    lines = [ln.strip() for ln in text.splitlines()]
    first = {op: next(i for i, ln in enumerate(lines) if ln.startswith(op))
             for op in ("mbarrier.init", "griddepcontrol.launch_dependents", "griddepcontrol.wait", "cp.async.bulk")}
    assert first["mbarrier.init"] < first["griddepcontrol.launch_dependents"] < first["griddepcontrol.wait"] \
        < first["cp.async.bulk"]
    before = lines[:first["griddepcontrol.wait"]]
    assert not any(ln.startswith(("ld.global", "st.global", "red.", "atom.")) for ln in before)
    # the two instructions once each, for every thread (not under a guard)
    assert sum(ln.startswith("griddepcontrol.") for ln in lines) == 2 == text.count("griddepcontrol")
    plain = str(h.build("sm_90a", [dataclasses.replace(cfg, pdl=0)]).emit())
    assert "griddepcontrol" not in plain


def test_tma_epilogue_needs_the_output_for_its_tensor_map():
    """The default epilogue stores C through a tensor map, so tensor_maps refuses to make the maps
    without c, and launch refuses maps without C's."""
    assert h.Config().epi == "tma" and "tma" not in h.Config().name and h.Config(epi="storer").name.endswith("_storer")
    with pytest.raises(ValueError, match="pass c"):
        h.tensor_maps(h.Config(), 0, 0, 128, 256, 64)
    with pytest.raises(ValueError, match="tensor_maps"):
        h.launch(None, h.Config(), (b"a", b"b"), 0, 128, 256, 64, 1)


@pytest.mark.parametrize("shape, msg", [((0, 8, 8), "M = 0"), ((8, 12, 8), "multiples of 8"),
                                        ((8, 8, 20), "multiples of 8"), ((8, 8.0, 8), "N = 8.0")])
def test_check_shape_names_the_problem(shape, msg):
    with pytest.raises(ValueError, match=re.escape(msg)):
        h.check_shape(*shape)


MIB = 2**20


@pytest.mark.parametrize("m, n, k, want", [
    # 128 x 256: a round of the balanced grid (128 CTAs) runs whole raster groups of 8 block rows, and
    # their 1024 rows of A plus all of B stay in 50 MiB of L2 (40 MiB at 4096^3)
    (4096, 4096, 4096, 128), (2048, 2048, 2048, 128), (1000, 1000, 1000, 128),
    # ... unless the mixed 192- and 128-row tiles give the busiest CTA fewer rows: 5120^2 on 132 SMs is
    # 7 rounds of 128 x 256 tiles (896 rows) but 832 rows of 192- and 128-row tiles
    (5120, 5120, 1024, 192),
    # ... or 192 x 192 tiles give it at most N192_SPAN of their MACs: 3072^2 on 132 SMs is two of
    # them (73728 a k) against 192 + 128 rows of 256 columns (81920)
    (3072, 3072, 3072, 192192), (3072, 3072, 1024, 192192),
    # K too deep for L2 (168 MB a round at K = 16384), or a group of 8 block rows needs more than one
    # round (24 block columns at 6144): 192 x 256 in groups of 16
    (4096, 4096, 16384, 192), (6144, 6144, 6144, 192), (8192, 8192, 8192, 192), (8192, 2048, 16384, 192),
    (5120, 5120, 5120, 192), (8192, 4096, 8192, 192),
    # split_for would put every row in 128-row tiles (one round of them): the 128 x 256 kernel, whose
    # operands do not fit in L2 here either
    (2048, 2048, 8192, 128), (1024, 8192, 8192, 128), (8192, 1024, 8192, 128),
    # ... and 192 x 192 tiles would all be 128-row ones, with a warpgroup idle (1536^2: 0.75 of the MACs)
    (1536, 1536, 1536, 128)])
def test_choose_follows_the_round_and_l2_rule(m, n, k, want):
    cfg = h.choose(m, n, k, "nt", 132, 50 * MIB)
    # (the 128-row tiles in the width `tile_width` gives them: 256 but for 1000^3 and 1536^3, whose tiles
    # all fit one round and leave SMs idle: 128 x 128 tiles on 64 CTAs instead of 32, 128 x 192 on 96
    # instead of 72)
    assert (cfg.bm, cfg.bn) == {128: (128, h.tile_width(m, n, 132)), 192: (192, 256), 192192: (192, 192)}[want]
    assert want != 128 or (cfg.bn != 256) == ((m, n) in ((1000, 1000), (1536, 1536)))
    assert cfg in h.auto_configs("nt") and cfg.producer == (want != 192192)
    assert cfg.group == (8 if want == 128 else 16)


@pytest.mark.parametrize("m, n, k, sk, bn", [
    # N <= 128: 128 x 128 tiles whatever the pick (a 256-wide tile would compute half its columns or
    # more for nothing), streamed or not
    (1, 8, 8, 0, 128), (16384, 128, 8192, 0, 128), (65536, 128, 4096, 0, 128), (128, 128, 65536, 2, 128),
    (128, 128, 16384, 2, 128), (128, 128, 3072, 3, 128), (4096, 128, 4096, 1, 128),
    # N mod 256 from 1 to 128 in a streamed pick: 128-wide tiles too (N = 384: 3 columns, not 2 of 256)
    (1024, 384, 8192, 1, 128), (512, 384, 16384, 2, 128), (512, 320, 16384, 2, 128), (128, 640, 3072, 3, 128),
    # (not streamed: 4096 x 384 x 4096, whose plain 128 x 128 tiles fill the SMs: round 26)
    (4096, 384, 4096, 0, 128),
    # ... but not where N fills more than half of its last 256-wide column (`narrow` leaves those; since
    # round 26 `sk_pick`'s estimate takes 128 x 128 tiles for them too, since round 28 with sk=2 in 8 parts)
    (512, 512, 16384, 2, 128), (512, 448, 16384, 2, 128)])
def test_choose_narrows_the_tiles_where_n_leaves_a_column_half_empty(m, n, k, sk, bn):
    streamed_256 = h.Config("nt", 1, lag=0, hold=0, sk=sk or 1).check()
    assert h.narrow(streamed_256, n) == (n <= 128 or 0 < n % 256 <= 128)
    for layout in ("nt", "nn"):
        cfg = h.choose(m, n, k, layout, 132, 50 * MIB)
        assert (cfg.bm, cfg.bn, cfg.sk) == (128 if bn == 128 else cfg.bm, bn, sk)
        assert cfg in h.auto_configs(layout)


@pytest.mark.parametrize("m, n, k, bn", [
    # N = 384 or 192 over 64-256 block rows: 128 x 192 tiles, with nothing padded (bench/LOG.md round 24,
    # H100: 0.71-0.84x the 256-wide tiles' time), also where 256-wide tiles take one round (8192 rows),
    # and 1536^3, whose 128 x 192 tiles take 96 SMs in one round (0.83x)
    (8192, 384, 8192, 192), (16384, 384, 4096, 192), (16384, 384, 1024, 192), (32768, 192, 4096, 192),
    (1536, 1536, 1536, 192),
    # N = 640: 5 rounds of 128 columns (x 1.15) against 3 of 256 and 4 of 192 (0.90x measured)
    (16384, 640, 4096, 128),
    # ... but 256 wide where the narrower tiles' rounds are not short enough to pay for their cost per
    # column (N = 1408: 6 rounds of 256 against 8 of 192 x 1.05 and 11 of 128 x 1.15), and at the
    # goal's 4096^3
    (16384, 1408, 4096, 256), (4096, 4096, 4096, 256), (2048, 2048, 8192, 256)])
def test_choose_takes_the_128_row_tile_width_with_the_shortest_rounds(m, n, k, bn):
    for layout in ("nt", "nn"):
        cfg = h.choose(m, n, k, layout, 132, 50 * MIB)
        assert (cfg.bm, cfg.bn, cfg.sk, cfg.epi) == (128, bn, 0, "tma")
        assert cfg in h.auto_configs(layout) and h.tile_width(m, n, 132, h.auto_configs(layout)) == bn


def test_tile_width_weighs_rounds_by_the_cost_per_column():
    # 8192 x 384 on 132 SMs (64 block rows): 256 wide, 128 tiles in 1 round (256); 192 wide, 128 tiles
    # in 1 round (192 x 1.05 = 201.6); 128 wide, 192 tiles in 2 rounds on 96 CTAs (2 x 128 x 1.15 = 294.4)
    assert h.tile_width(8192, 384, 132) == 192
    # a cost per column above 256 / 192 = 1.333 gives the padded 256-wide tiles back
    saved = dict(h.WIDTH_COST)
    try:
        h.WIDTH_COST[192] = 1.34
        assert h.tile_width(8192, 384, 132) == 256
        h.WIDTH_COST[192] = 1.33
        assert h.tile_width(8192, 384, 132) == 192
        # ... and at 16384 x 640 the 128-wide tiles' 5 rounds (736) beat 3 of 256 (768) only below 1.2
        h.WIDTH_COST[h.EPI_COLS] = 1.2
        assert h.tile_width(16384, 640, 132) == 256
    finally:
        h.WIDTH_COST.update(saved)
    assert h.tile_width(16384, 640, 132) == 128
    # 4096^2: 4 rounds of 256 against 6 of 192 and 8 of 128
    assert h.tile_width(4096, 4096, 132) == 256
    # tiles that all fit one round: the narrowest, on the most SMs (1 x 128 x 1.15 on 64 CTAs)
    assert h.tile_width(4096, 256, 132) == 128


def test_choose_depends_on_the_l2_and_the_ctas():
    small, large = h.auto_configs("nn")[:2]
    assert h.choose(4096, 4096, 4096, "nn") == small                           # 50 MiB by default
    assert h.choose(4096, 4096, 4096, "nn", l2_bytes=40 * MIB) == small       # 40 MiB exactly: fits
    assert h.choose(4096, 4096, 4096, "nn", l2_bytes=40 * MIB - 1) == large
    # 64 SMs: 8 rounds of 64 CTAs, so a group of 8 block rows x 16 columns spans two rounds
    assert h.choose(4096, 4096, 4096, "nn", ctas=64) == large
    # the round's rows of A and all of B, K deep, against the L2: exactly 50 MiB still fits
    assert h.choose(4096, 4096, 5120, "nt") == h.auto_configs("nt")[0]
    assert h.choose(4096, 4096, 5128, "nt") == h.auto_configs("nt")[1]


@pytest.mark.parametrize("m, n, k, bn, sk", [
    # fewer 128 x 256 tiles than SMs over a long K: streamed (bench/LOG.md round 18, ncu: 2.30x, 2.80x
    # and 3.85x faster than the 128 x 256 kernel), with sk=1 in 128 x 256 tiles where sk=1's 128-wide
    # tiles would take more than SK128_MAX_PARTS parts and sk=2's estimate is longer
    (1024, 1024, 16384, 256, 1),
    # ... where a tile's parts fit a cluster of 8, their sum in shared memory (round 22, H100: 0.92x and
    # 0.84x sk=2's pick at 512^2 and 256 x 1024 x 16384), in 128 x 256 tiles where 128-wide ones would
    # leave a part fewer than SK3_128_MIN_KBLOCKS k-blocks (estimated)
    (384, 1280, 32768, 256, 3),
    # ... in 128 x 128 tiles where those split a tile in at most SK128_MAX_PARTS parts and their estimate
    # is the least (round 26, H100: 0.82-0.93x the 256-wide pick's time at 1024^2 x 3072, 1536 x 640 x
    # 4096, 1024 x 768 x 3072, 2048 x 256 x 3072, 1536 x 384 x 3072, 768 x 1024 x 4096, 1024^2 x 6144
    # with sk=1; round 28: 1024^2 x 8192 with sk=1 32.8 us against sk=2's 36.1-36.9, 512 x 1024 x 16384
    # 38.7 against 40.4-42.7); the others are estimated as those
    (1024, 1024, 3072, 128, 1), (1536, 640, 4096, 128, 1), (768, 1024, 4096, 128, 1), (1024, 1024, 6144, 128, 1),
    (1024, 1024, 8192, 128, 1), (512, 1024, 16384, 128, 1), (1024, 1024, 2048, 128, 1), (512, 512, 2048, 128, 3),
    (200, 384, 2048, 128, 3),
    # ... and sk=3 in 128 x 128 tiles beyond SK128_MAX_PARTS where every part keeps at least
    # SK3_128_MIN_KBLOCKS k-blocks and its estimate is the least (round 28, H100: 128 x 1024 x 8192 16.1 us
    # against sk=2's 16.7 in the same tiles), as within it (512^2 x 3072, out of sample: 11.8 against 13.0)
    (128, 1024, 8192, 128, 3), (512, 512, 3072, 128, 3),
    # ... and sk=2 in 128 x 128 tiles in any number of parts (round 28, H100, against the former pick:
    # 128 x 256 x 16384 13.9 against sk=3's 16.8 us, 128 x 256 x 65536 31.2 / 40.7, 256^2 x 16384 16.1 /
    # 17.1, 256^2 x 65536 40.8 / 43.2, 512^2 x 16384 27.3 / 30.9, 512^2 x 32768 44.1 against sk=2's 49.9 in
    # 128 x 256 tiles, 512 x 256 x 16384 21.4 / 21.4; out of sample 256^2 x 6144 12.1 against sk=3's 17.9 in
    # 128 x 256 tiles, 256 x 512 x 16384 21.7 / 21.8)
    (128, 256, 16384, 128, 2), (128, 256, 65536, 128, 2), (256, 256, 16384, 128, 2), (256, 256, 65536, 128, 2),
    (512, 512, 16384, 128, 2), (512, 512, 32768, 128, 2), (512, 256, 16384, 128, 2), (256, 256, 6144, 128, 2),
    (256, 512, 16384, 128, 2),
    # ... and in 128 x 128 tiles where N leaves a 256-wide column at most half used, with any number of
    # parts (round 23; at 1024 x 384 x 8192 sk=1, 2 and 3 are estimated alike, and the lower sk is taken)
    (128, 128, 65536, 128, 2), (1024, 384, 8192, 128, 1),
    # ... but not where the tiles nearly fill the SMs (2048^2: 128 of 132, 0.98x), nor over a K of a few
    # k-blocks, nor with at least as many tiles as SMs
    (2048, 2048, 8192, 256, 0), (1000, 1000, 1000, 128, 0), (512, 512, 512, 128, 0), (1024, 8192, 8192, 256, 0),
    (4096, 4096, 65536, 256, 0),
    # ... nor where the plain kernel's narrower tiles fill the SMs well enough (round 26, H100: 128 x 128
    # tiles 0.92x stream-K's time at 2048 x 1024 x 8192 and 0.91x at 3072 x 384 x 4096; 1024 x 2048 x
    # 8192 is estimated as the first)
    (2048, 1024, 8192, 128, 0), (1024, 2048, 8192, 128, 0), (3072, 384, 4096, 128, 0), (4096, 384, 4096, 128, 0)])
def test_choose_streams_k_where_few_tiles_leave_sms_idle(m, n, k, bn, sk):
    for layout in ("nt", "nn"):
        cfg = h.choose(m, n, k, layout, 132, 50 * MIB)
        assert (cfg.bn, cfg.sk) == (bn, sk) and cfg in h.auto_configs(layout)
        if sk:
            # the estimated busiest CTA, in 256-wide k-blocks, decides between the streamed kernels and
            # tile widths, each on its own grid (sk=3 on the CTAs that clusters of 8 leave, 120 of 132),
            # the wider tiles and then the lower sk on a tie
            assert h.sk_pick(m, n, k, 132) == (bn, sk)
            cost = h._streamed_costs(m, n, k, 132)
            assert all(cost[(bn, sk)] <= v for v in cost.values())
            parts = h._sk_estimate(m, n, k, 132, sk, bn)[1]
            if bn == 128 and n % 256 not in range(1, 129) and parts > h.SK128_MAX_PARTS:
                assert sk == 2 or sk == 3 and -(-k // h.BK) >= h.SK3_128_MIN_KBLOCKS * parts
    streamed = bool(sk)
    assert (h.sk_speedup(m, n, k, 132) >= h.SK_PICK) == streamed or -(-m // 128) * -(-n // 256) >= 132
    # on 32 SMs the 1024^2 problem's 32 tiles fill every SM: nothing to stream
    assert not h.choose(1024, 1024, 8192, "nt", 32).sk


@pytest.mark.parametrize("m, n, k, sk, deep", [
    # stream-K in 128 x 128 tiles on a grid of at most 0.6 x the CTAs (64 and 72 of 132): six stages
    (8, 4096, 4096, 1, True), (100, 4096, 4096, 1, True), (8, 3072, 8192, 1, True),
    # ... but four on 128 or 120 CTAs (bench/LOG.md round 31: six stages there 1.00-1.07x slower)
    (200, 4096, 4096, 1, False), (8, 8192, 8192, 1, False), (1, 5120, 13824, 1, False),
    # sk=2 and 3 where each CTA walks at least 16 k-blocks (32 and 16, 28 and 32)
    (8, 1024, 16384, 3, True), (32, 2048, 4096, 3, True), (16, 512, 32768, 2, True), (32, 256, 65536, 2, True),
    # ... but not over 8 (1.00-1.05x slower), nor on 96 or 108 CTAs
    (16, 1024, 2048, 3, False), (100, 1024, 4096, 2, False), (48, 1536, 12288, 3, False),
    (768, 256, 65536, 2, False)])
def test_choose_gives_stream_k_on_a_small_grid_deeper_stages(m, n, k, sk, deep):
    for layout in ("nt", "nn"):
        cfg = h.choose(m, n, k, layout, 132)
        grid = h.sk_plan(m, n, k, 132, cfg.bn, cfg.bm, cfg.sk)[0]
        kblocks = -(-m // 128) * -(-n // 128) * -(-k // 64)
        assert (cfg.sk, cfg.bn) == (sk, 128) and cfg in h.auto_configs(layout)
        assert (grid <= h.DEEP_GRID * 132 and (sk == 1 or kblocks >= h.DEEP_KBLOCKS * grid)) == deep
        assert cfg.stages == (h.DEEP_STAGES if deep else h.STAGES)
        # the same kernel but for its stages
        assert dataclasses.replace(cfg, stages=h.STAGES) in h.auto_configs(layout)


def test_128_wide_stream_k_is_weighed_only_up_to_its_measured_parts():
    # sk=2 in 128 x 128 tiles at any number of parts: 128 x 256 x 16384 in 20 parts a tile (bench/LOG.md
    # round 28, H100: 13.9 us against 16.8 for sk=3 in 8)
    assert h.sk_pick(128, 256, 16384, 132) == (128, 2) and h._sk_estimate(128, 256, 16384, 132, 2, 128)[1] == 20
    # 128 x 256 x 4096 and 384 x 512 x 3072: sk=3 in 128-wide tiles would give each of 8 parts 8 or 6
    # k-blocks; with the cap and the floor on k-blocks a part the estimate takes sk=2 (10.9 against 11.8
    # us, 12.7 against 18.7), without either sk=3
    assert h.sk_pick(128, 256, 4096, 132) == h.sk_pick(384, 512, 3072, 132) == (128, 2)
    saved = h.SK128_MAX_PARTS, h.SK3_128_MIN_KBLOCKS
    try:
        h.SK128_MAX_PARTS = 10**6
        assert h.sk_pick(128, 256, 4096, 132) == (128, 3)
        h.SK128_MAX_PARTS, h.SK3_128_MIN_KBLOCKS = saved[0], 0
        assert h.sk_pick(384, 512, 3072, 132) == (128, 3)
    finally:
        h.SK128_MAX_PARTS, h.SK3_128_MIN_KBLOCKS = saved


def test_sk_speedup_counts_rounds_ranges_and_partials():
    # 1024^2 x 8192 on 132 SMs: the plain kernel's best width is 128 (64 tiles in one round, 128 k-blocks
    # at 128 / 256 x 1.15 of a 256-wide k-block each: 73.6) against the 128 x 128 tiles streamed over 128
    # CTAs (2 parts a tile: 64 k-blocks and one partial of 3, at the same 0.575) rather than the 32
    # 128 x 256 tiles (32 k-blocks and 3 partials of 3 each: 41); 8 fixed on both sides
    assert h.sk_plan(1024, 1024, 8192, 132, 256, 128)[:4:3] == (128, 32)
    assert h.sk_plan(1024, 1024, 8192, 132, 128, 128)[:4:3] == (128, 64)
    assert h.tile_width(1024, 1024, 132) == 128
    assert h._streamed_costs(1024, 1024, 8192, 132)[(256, 1)] == 32 + 9
    assert h.sk_speedup(1024, 1024, 8192, 132) == pytest.approx((128 * 0.575 + 8) / ((64 + 3) * 0.575 + 8))
    # with the 128-wide tiles costing 2.3x a 256-wide k-block a column, the 256-wide tiles' one round is
    # the baseline (128 k-blocks), and the 256-wide tiles are the ones streamed
    saved = dict(h.WIDTH_COST)
    try:
        h.WIDTH_COST[h.EPI_COLS] = h.WIDTH_COST[192] = 2.3
        assert h.sk_speedup(1024, 1024, 8192, 132) == pytest.approx((128 + 8) / (32 + 9 + 8))
    finally:
        h.WIDTH_COST.update(saved)
    # whole rounds count on both sides: 6144^2 x 256 has 9 rounds (1152 tiles) of 4 k-blocks for the 128 x 256
    # kernel on 128 CTAs, and 7 whole rounds on 132 then a shared range for stream-K
    grid, _, sk_first, streamed = h.sk_plan(6144, 6144, 256, 132, 256, 128)
    assert (grid, sk_first, streamed) == (132, 924, 228)
    longest = sk_first // grid * 4 + -(-streamed * 4 // grid) + 3 * (-(-grid // streamed) - 1)
    assert h.sk_speedup(6144, 6144, 256, 132) == pytest.approx((9 * 4 + 8) / (longest + 8))


def test_a_small_grid_streams_fewer_dram_bytes_where_the_operands_outgrow_l2():
    """SK_SM_BYTES: operands of more than SK_SM_OVER bytes come from DRAM at most SK_SM_BYTES a CTA a
    k-block's time, so the floor of a grid too small to draw all of DRAM rises; smaller operands keep
    the floor of the whole GPU, whatever the grid."""
    nbytes = (8 + 8192) * 8192 * 2                                  # 8 x 8192 x 8192: 134 MB
    assert nbytes > h.SK_SM_OVER
    whole = h.sk_dram_kblocks(8, 8192, 8192)
    assert whole == pytest.approx(nbytes / h.SK_DRAM_BYTES)
    assert h.sk_dram_kblocks(8, 8192, 8192, grid=64) == pytest.approx(nbytes / (64 * h.SK_SM_BYTES))
    assert h.sk_dram_kblocks(8, 8192, 8192, grid=64) > whole
    big = -(-h.SK_DRAM_BYTES // h.SK_SM_BYTES)                      # the grid from which DRAM is the limit
    assert h.sk_dram_kblocks(8, 8192, 8192, grid=big) == h.sk_dram_kblocks(8, 8192, 8192, grid=132) == whole
    assert h.sk_dram_kblocks(8, 8192, 8192, 128, grid=64) == pytest.approx(
        h.sk_dram_kblocks(8, 8192, 8192, grid=64) / 0.575)
    small = (128, 1024, 16384)                                      # 37.7 MB: L2 holds it
    assert h.sk_dram_kblocks(*small, grid=8) == h.sk_dram_kblocks(*small)
    # sk_grid takes the floor as a function of the grid: one tile of 128 k-blocks on up to 8 CTAs costs
    # ceil(128 / P) + 3 (P - 1), least at 6 (22 + 15); a floor of 30 at every grid makes it 4 (32 + 9);
    # a floor of 240 / P, which falls with the grid, 8 (30 + 21 against 34.3 + 18 at 7)
    assert h.sk_grid(1, 128, 8) == 6
    assert h.sk_grid(1, 128, 8, 1, 30) == h.sk_grid(1, 128, 8, 1, lambda g: 30) == 4
    assert h.sk_grid(1, 128, 8, 1, lambda g: 240 / g) == 8
    # 8 x 8192 x 8192 (64 tiles of 128 x 128): the plain kernel on 64 CTAs is held to 64 x SK_SM_BYTES,
    # so streaming over 128 CTAs, which DRAM alone limits, pays (bench/LOG.md round 30: 80 -> 53 us)
    plain = h.sk_dram_kblocks(8, 8192, 8192, grid=64)
    assert plain > 128 * 0.575                                       # above the 128 k-blocks' own time
    assert h.sk_speedup(8, 8192, 8192, 132) >= h.SK_PICK
    cfg = h.choose(8, 8192, 8192)
    assert (cfg.bn, cfg.sk) == (128, 1) and h.sk_plan(8, 8192, 8192, 132, 128, 128, 1)[0] == 128
    saved = h.SK_SM_OVER
    try:                                                             # the former rule: one floor for all grids
        h.SK_SM_OVER = float("inf")
        assert h.sk_speedup(8, 8192, 8192, 132) < h.SK_PICK and h.choose(8, 8192, 8192).sk == 0
    finally:
        h.SK_SM_OVER = saved


@pytest.mark.parametrize("args, msg", [((0, 8, 8), "M = 0"), ((8, 12, 8), "multiples of 8"),
                                       ((8, 8, 8, "tn"), "layout"), ((8, 8, 8, "nt", 0), "ctas = 0"),
                                       ((8, 8, 8, "nt", 132, True), "l2_bytes = True")])
def test_choose_refuses_bad_input(args, msg):
    with pytest.raises(ValueError, match=msg):
        h.choose(*args)


def test_tile_raster_visits_every_tile_once():
    """The kernel's unit -> (block row, block column) map, replayed in Python, is a bijection."""
    for tiles_m, tiles_n, cl, group in ((32, 16, 1, 8), (33, 5, 2, 8), (7, 9, 2, 16), (1, 1, 1, 8), (43, 24, 1, 16)):
        mcs = -(-tiles_m // cl)
        seen = set()
        for u in range(mcs * tiles_n):
            per_group = tiles_n * group
            g, r = divmod(u, per_group)
            first = g * group
            gsize = min(mcs - first, group)
            nb, mr = divmod(r, gsize)
            for rank in range(cl):
                seen.add(((first + mr) * cl + rank, nb))
        want = {(mb, nb) for mb in range(mcs * cl) for nb in range(tiles_n)}
        assert seen == want


def _assert_close(c, ref, what: str = ""):
    """The bf16 output c (poisoned with NaN before the launch) against the float64 reference: every
    element written, relative Frobenius error below 4e-3."""
    import torch
    got = c.double()
    assert bool(torch.isfinite(got).all()), f"{what}unwritten elements"
    rel = float(torch.linalg.norm(got - ref) / torch.linalg.norm(ref))
    assert rel < 4e-3, f"{what}relative Frobenius error {rel:.2e}"


def _sm90_kernel(module, cfg):
    """(the loaded kernel of cfg, the context); skips unless the GPU is sm_90a."""
    from ptxgen.runtime import get_context, load_module
    ctx = get_context()
    if ctx.arch != "sm_90a":
        pytest.skip(f"needs an sm_90a GPU; this one is {ctx.arch}")
    return h.prepare(load_module(module.emit()), cfg), ctx


def _launch_twice_matches(f, cfg, m, n, k, ctas, seed):
    """Two launches of cfg on one bf16 case (numpy seed `seed`), C poisoned with NaN before each; both
    match the float64 reference (stream-K with a workspace: one for both launches, its flags back at 0)."""
    import torch
    from ptxgen.harness import bf16_gemm_case
    a, b, ref, c = bf16_gemm_case(cfg.layout, m, n, k, np.random.default_rng(seed).integers(2 ** 31))
    maps = h.tensor_maps(cfg, a, b, m, n, k, c=c)
    ws = h.workspace(cfg, m, n, k, ctas)
    for _ in range(2):
        c.view(torch.int16).fill_(-1)                                   # NaN poison
        h.launch(f, cfg, maps, c, m, n, k, ctas, workspace=ws)
        torch.cuda.synchronize()
        _assert_close(c, ref)


@pytest.mark.gpu
@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: c.name)
def test_matches_float64_reference(module, cfg):
    torch = pytest.importorskip("torch")
    from ptxgen.harness import bf16_gemm_case
    f, ctx = _sm90_kernel(module, cfg)
    ctas = h.resident_ctas(f, cfg, ctx.sm_count)
    assert ctas >= cfg.cluster
    rng = np.random.default_rng(7)
    for (m, n, k) in [(256, 512, 128), (130, 264, 72), (1000, 1000, 1000)]:
        a, b, ref, c = bf16_gemm_case(cfg.layout, m, n, k, rng.integers(2 ** 31))   # c: NaN poison
        # sk=1 and 2 sum through a workspace; sk=3 takes none (it sums in its clusters' shared memory)
        nbytes = h.workspace_bytes(cfg, m, n, k, ctas) if cfg.sk else 0
        ws = torch.zeros(nbytes, dtype=torch.uint8, device="cuda") if nbytes else None
        h.launch(f, cfg, h.tensor_maps(cfg, a, b, m, n, k, c=c), c, m, n, k, ctas, workspace=ws)
        torch.cuda.synchronize()
        _assert_close(c, ref, f"{m}x{n}x{k}: ")


@pytest.mark.gpu
@pytest.mark.parametrize("layout", ["nt", "nn"])
@pytest.mark.parametrize("bn, m, n, k", [(192, 1000, 800, 520), (256, 1000, 600, 264), (192, 3072, 3072, 512)],
                         ids=["n192-5cols", "n256-3cols", "3072"])
def test_shared_a_cluster_matches_float64(module, layout, bn, m, n, k):
    """producer=0 in clusters of 2 sharing A: an odd number of block columns (the last cluster's second
    CTA computes past N and stores nothing), 128- and 192-row tiles, and 3072^2 (two rounds of
    clusters); launched twice with the output poisoned in between."""
    pytest.importorskip("torch")
    cfg = h.Config(layout, 2, 3, group=16, bm=192, bn=bn, producer=0)
    f, ctx = _sm90_kernel(module, cfg)
    ctas = h.resident_ctas(f, cfg, ctx.sm_count)
    assert ctas % 2 == 0 and ctas >= 2
    _launch_twice_matches(f, cfg, m, n, k, ctas, n + k)


def test_shared_a_cluster_grid_counts_pairs_of_columns():
    """A cluster of 2 sharing A takes work units of two block columns on ctas // 2 cluster slots: its grid
    is twice split_for's for those, and covers every tile once (odd column counts round up)."""
    for bn in (192, 256):
        cfg = h.Config("nt", 2, 3, group=16, bm=192, bn=bn, producer=0)
        for m, n, ctas in [(3072, 3072, 132), (1000, 800, 132), (4096, 4096, 132), (200, 264, 10), (6144, 6144, 130)]:
            split, pairs = h.split_for(m, n, ctas // 2, 2 * bn, cfg.mix)
            grid = h.grid_for(cfg, m, n, ctas)
            assert grid == 2 * pairs and grid <= ctas
            f = RecordingFunction()
            h.launch(f, cfg, (b"a", b"b", b"c"), 0, m, n, 512, ctas)
            (_, args, kw), = f.calls
            assert args[0] == (grid,) and kw["cluster"] == (2, 1, 1) and int(args[2][-1]) == split
            # no fewer rounds of cluster units than a full grid of clusters would take
            units = h._split_units(m, split, -(-n // (2 * bn)))[1]
            assert -(-units // pairs) == -(-units // min(units, ctas // 2))
    cfg = h.Config("nt", 2, 3, bm=192, bn=192, producer=0)
    with pytest.raises(ValueError, match="cluster of 2"):
        h.launch(RecordingFunction(), cfg, (b"a", b"b", b"c"), 0, 1000, 800, 512, 1)


@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["p0n192", "m128", "m128sk2"])
@pytest.mark.parametrize("layout", ["nt", "nn"])
@pytest.mark.parametrize("m, n, k, ctas", [(3072, 3072, 512, None), (1000, 1000, 1000, 7), (6144, 6144, 256, None),
                                           (1024, 1024, 8192, None), (200, 1000, 20000, None)],
                         ids=["3072-all-split", "1000-on-7", "6144-rounds-then-split", "1024-few-tiles",
                              "200-one-row"])
def test_stream_k_matches_float64(module, layout, m, n, k, ctas, kind):
    """Stream-K on the GPU, all CTAs resident at once, in the producer-less 192 x 192 kernel: 3072^2 on 132
    SMs puts all 256 tiles' k-blocks in the shared range (each tile's owner waits for the partial of the
    CTA before it), 1000^2 on 7 CTAs has whole rounds first, 6144^2 six whole rounds; 1024^2 x 8192 has
    36 tiles on 108 CTAs, each tile in three parts, and 200 x 1000 x 20000 12 tiles of 313 k-blocks in
    9 parts each. The same shapes in the 128 x 256 kernel (kind m128: whole rounds then a shared range
    at 3072^2, 1000^2 on 7 and 6144^2; 32 tiles in 4 parts at 1024^2, 8 in 9 at 200 x 1000), and in it
    with every part of a split tile summing a slice of it (m128sk2: 8 tiles in 11 parts at 200 x 1000).
    Each is launched twice on one workspace (poisoned output in between), since the flags must come back
    to zero."""
    torch = pytest.importorskip("torch")
    from ptxgen.harness import bf16_gemm_case
    cfg = h.Config(layout, 1, 3, bm=192, bn=192, hold=0, producer=0, sk=1) if kind == "p0n192" else \
        h.Config(layout, 1, lag=0, hold=0, sk=2 if kind == "m128sk2" else 1)
    f, ctx = _sm90_kernel(module, cfg)
    ctas = ctas or h.resident_ctas(f, cfg, ctx.sm_count)
    assert h.sk_plan(m, n, k, ctas, cfg.bn, cfg.bm, cfg.sk)[3] > 0    # some tiles are split
    a, b, ref, c = bf16_gemm_case(layout, m, n, k, np.random.default_rng(m + k).integers(2 ** 31))
    ws = torch.zeros(h.workspace_bytes(cfg, m, n, k, ctas), dtype=torch.uint8, device="cuda")
    maps = h.tensor_maps(cfg, a, b, m, n, k, c=c)
    for _ in range(2):
        c.view(torch.int16).fill_(-1)                                   # NaN poison
        h.launch(f, cfg, maps, c, m, n, k, ctas, workspace=ws)
        torch.cuda.synchronize()
        _assert_close(c, ref)
        grid, _, _, streamed = h.sk_plan(m, n, k, ctas, cfg.bn, cfg.bm, cfg.sk)
        flags = h.sk_flag_bytes(cfg, grid, streamed)
        assert int(ws[:flags].count_nonzero()) == 0, "flags left set"


@pytest.mark.gpu
@pytest.mark.parametrize("layout", ["nt", "nn"])
@pytest.mark.parametrize("m, n, k, ctas, parts", [(512, 1024, 8192, 128, 8), (257, 520, 4104, None, 8),
                                                  (1000, 1000, 1000, 128, 4), (1000, 1000, 1000, 64, 2),
                                                  (200, 384, 2048, None, 4), (130, 264, 72, None, 1),
                                                  (256, 512, 16384, None, 16)],
                         ids=["512x1024-p8", "257x520-ragged-p8", "1000-p4", "1000-p2", "200x384-p4", "130x264-whole",
                              "256x512-p16"])
def test_stream_k3_cluster_sum_matches_float64(module, layout, m, n, k, ctas, parts):
    """sk=3 on the GPU: each tile's parts are one cluster of `parts` CTAs that park their partials in shared
    memory and sum their slices through distributed shared memory; ragged M and N (257 x 520: 9 tiles, the
    last row and column of them partly outside C), 4 and 2 parts a tile, and one part (whole tiles, a
    cluster of one). On 128 CTAs the clusters of 8 and of 4 are more than fit at once (an H100 holds 15 of
    8 or 30 of 4: resident_ctas), so some clusters start only when others have finished, which sk=3 allows
    (no part waits for a CTA outside its cluster). Launched twice, the output poisoned with NaN before each."""
    pytest.importorskip("torch")
    cfg = h.Config(layout, 1, lag=0, hold=0, sk=3)
    f, ctx = _sm90_kernel(module, cfg)
    ctas = ctas or h.resident_ctas(f, cfg, ctx.sm_count)
    grid, _, sk_first, streamed = h.sk_plan(m, n, k, ctas, cfg.bn, cfg.bm, cfg.sk)
    assert (grid // streamed if streamed else 1) == parts
    _launch_twice_matches(f, cfg, m, n, k, ctas, m + k)


@pytest.mark.gpu
@pytest.mark.parametrize("layout", ["nt", "nn"])
@pytest.mark.parametrize("m, n, k, sk", [(16384, 128, 1024, 0), (1000, 120, 1000, 0), (4096, 128, 4096, 1),
                                         (1024, 384, 8192, 1), (128, 128, 65536, 2), (257, 384, 4104, 3),
                                         (200, 1000, 20000, 2), (128, 1000, 16384, 3), (200, 384, 2048, 3)])
def test_narrow_tiles_match_float64(module, layout, m, n, k, sk):
    """`choose`'s 128 x 128 tiles (bn=128) on the GPU, each kind it can return: the plain kernel over many
    tiles (16384 x 128) and ragged ones, and the three stream-K kernels (N = 384 in 3 tile columns with
    sk=1, one tile in many parts over K = 65536 and ragged 200 x 1000 x 20000 with sk=2, ragged 257 x 384,
    N = 1000 in clusters of 8 and 200 x 384 in clusters of 4 with sk=3), launched twice with the output
    poisoned."""
    pytest.importorskip("torch")
    cfg = h.choose(m, n, k, layout)
    assert (cfg.bn, cfg.sk) == (128, sk)
    f, ctx = _sm90_kernel(module, cfg)
    _launch_twice_matches(f, cfg, m, n, k, h.resident_ctas(f, cfg, ctx.sm_count), m + n + k)


@pytest.mark.gpu
@pytest.mark.parametrize("layout", ["nt", "nn"])
@pytest.mark.parametrize("m, n, k, bn, ctas, p_lo", [(100, 200, 131072, 256, 32, 32), (128, 256, 65536, 256, 21, 16),
                                                     (100, 120, 65536, 128, None, 16), (250, 200, 49152, 128, 96, 16)],
                         ids=["n256-1-tile-32-parts", "n256-21-parts", "n128-1-tile-21-parts", "n128-4-tiles-21-parts"])
def test_stream_k2_slices_of_many_parts_match_float64(module, layout, m, n, k, bn, ctas, p_lo):
    """sk=2's slice paths for 16 parts a tile and more (`sk2_slice_paths`: one or two groups a part, 12-24
    parts read at once), in both tile widths, ragged M and N, launched twice with C poisoned: each part's
    slice must add every part's partial once, also where the last batch runs past the tile's last part.
    (250 x 200 x 49152 keeps its operands under SK_SM_OVER, so its grid is 21 parts a tile on 96 CTAs.)"""
    pytest.importorskip("torch")
    # `choose`'s four-stage sk=2 kernels
    cfg, = [c for c in h.auto_configs(layout) if c.sk == 2 and c.bn == bn and c.stages == h.STAGES]
    f, ctx = _sm90_kernel(module, cfg)
    ctas = ctas or h.resident_ctas(f, cfg, ctx.sm_count)
    grid, _, _, streamed = h.sk_plan(m, n, k, ctas, cfg.bn, cfg.bm, cfg.sk)
    parts = grid // streamed
    p_used, _, batch = [path for path in h.sk2_slice_paths(bn) if path[0] <= parts][-1]
    assert p_used == p_lo and parts % batch != 0
    _launch_twice_matches(f, cfg, m, n, k, ctas, m + n + k)


@pytest.mark.gpu
@pytest.mark.parametrize("layout", ["nt", "nn"])
@pytest.mark.parametrize("m, n, k, bn", [(8192, 384, 4096, 192), (8000, 376, 4104, 192), (1536, 1536, 1536, 192),
                                         (1000, 1000, 1000, 128), (16384, 640, 256, 128)])
def test_tile_width_picks_match_float64(module, layout, m, n, k, bn):
    """`choose`'s 128-row tiles narrower than 256 where their rounds are shorter (`tile_width`): 128 x 192
    tiles (N = 384 in two tile columns, ragged 8000 x 376 x 4104, one round at 1536^3)
    and 128 x 128 ones (1000^3 on 64 CTAs, N = 640 in 5 columns), launched twice with C poisoned."""
    pytest.importorskip("torch")
    cfg = h.choose(m, n, k, layout)
    assert (cfg.bm, cfg.bn, cfg.sk) == (128, bn, 0)
    f, ctx = _sm90_kernel(module, cfg)
    _launch_twice_matches(f, cfg, m, n, k, h.resident_ctas(f, cfg, ctx.sm_count), m + n + k)


@pytest.mark.gpu
@pytest.mark.parametrize("epi", ["tma", "ring", "mix", "p0", "p0n192", "p0n192c2", "p0n192lw"])
@pytest.mark.parametrize("layout", ["nt", "nn"])
@pytest.mark.parametrize("m, n, k, split", [(4096, 4096, 256, None), (1000, 1000, 520, 0), (1000, 1000, 520, 576),
                                            (1000, 1000, 520, 1152), (200, 264, 64, 192)],
                         ids=["4096-split_for", "1000-all128", "1000-mixed", "1000-all192", "200-mixed"])
def test_bm192_row_splits_match_float64(module, layout, m, n, k, split, epi):
    """bm=192 with its rows split between 192-row and 128-row tiles in several ways (split_for's
    choice for 4096^2 mixes both) matches a float64 reference, with its own epilogue buffers, with
    them in the ring (epi="ring"), with the two kinds of tile interleaved (mix=1), and without a
    producer warpgroup (producer=0)."""
    torch = pytest.importorskip("torch")
    from ptxgen.harness import bf16_gemm_case
    cfg = h.Config(layout, 1, 4, bm=192, epi="ring") if epi == "ring" else \
        h.Config(layout, 1 + epi.endswith("c2"), 3, bm=192, mix=int(epi == "mix"),
                 producer=int(not epi.startswith("p0")), bn=192 if epi.startswith("p0n192") else 256,
                 group=16 if epi.endswith(("c2", "lw")) else h.GROUP_M, lwarp=int(epi.endswith("lw")))
    f, ctx = _sm90_kernel(module, cfg)
    ctas = h.resident_ctas(f, cfg, ctx.sm_count)
    if split is None:    # both kinds of tile (a cluster's unit: cluster block columns on a cluster slot)
        assert h.split_for(m, n, ctas // cfg.cluster, cfg.bn * cfg.cluster, cfg.mix)[0] not in (0, 4224)
    a, b, ref, c = bf16_gemm_case(layout, m, n, k, np.random.default_rng(m + (split or 0)).integers(2 ** 31))
    h.launch(f, cfg, h.tensor_maps(cfg, a, b, m, n, k, c=c), c, m, n, k, ctas, m_split=split)   # c: NaN poison
    torch.cuda.synchronize()
    _assert_close(c, ref)


@pytest.mark.gpu
@pytest.mark.parametrize("cfg", [h.Config("nt", 1, lag=0, pdl=1), h.Config("nt", 1, 3, group=16, bm=192, pdl=1),
                                 h.Config("nt", 1, 3, group=16, bm=192, bn=192, producer=0, lwarp=1, pdl=1)],
                         ids=lambda c: c.name)
def test_pdl_kernels_in_a_chain_wait_for_their_inputs(cfg):
    """Config.pdl: two launches back to back where the second multiplies the first's output (C1 = A @ B1^T,
    then C2 = C1 @ B2^T). The second may start while the first runs; C1 and C2 are NaN before each
    round, so a second kernel that read C1 before the first had written it would leave NaN or stale
    values in C2."""
    torch = pytest.importorskip("torch")
    from ptxgen.harness import bf16_gemm_case
    f, ctx = _sm90_kernel(h.build("sm_90a", [cfg]), cfg)
    ctas = h.resident_ctas(f, cfg, ctx.sm_count)
    m = n = k = 2048
    a, b1, ref1, c1 = bf16_gemm_case("nt", m, n, k, 11)
    _, b2, _, c2 = bf16_gemm_case("nt", m, n, k, 12)
    first = h.bind(f, cfg, h.tensor_maps(cfg, a, b1, m, n, k, c=c1), c1, m, n, k, ctas)
    second = h.bind(f, cfg, h.tensor_maps(cfg, c1, b2, m, n, k, c=c2), c2, m, n, k, ctas)
    assert first.pdl and second.pdl
    for _ in range(3):
        c1.view(torch.int16).fill_(-1)
        c2.view(torch.int16).fill_(-1)
        first()
        second()
        torch.cuda.synchronize()
        _assert_close(c1, ref1, "C1: ")
        _assert_close(c2, c1.double() @ b2.double().T, "C2: ")


@pytest.mark.gpu
@pytest.mark.parametrize("layout", ["nt", "nn"])
def test_trace_on_the_gpu_keeps_the_product_and_stamps_in_order(layout):
    """Config.trace on the GPU: the product matches float64, every CTA ran on its own SM and stamped its
    phases in order, with one hand-off stamp per tile it owned (tiles cta, cta + grid, ...)."""
    torch = pytest.importorskip("torch")
    from ptxgen.harness import bf16_gemm_case
    cfg = h.Config(layout, 1, lag=0, trace=1)
    f, ctx = _sm90_kernel(h.build("sm_90a", [cfg]), cfg)
    ctas = h.resident_ctas(f, cfg, ctx.sm_count)
    for (m, n, k) in [(1000, 1000, 1000), (4096, 4096, 256)]:
        a, b, ref, c = bf16_gemm_case(layout, m, n, k, np.random.default_rng(m + k).integers(2 ** 31))
        grid = h.grid_for(cfg, m, n, ctas)
        tr = torch.zeros(h.trace_bytes(grid) // 8, dtype=torch.int64, device="cuda")
        h.launch(f, cfg, h.tensor_maps(cfg, a, b, m, n, k, c=c), c, m, n, k, ctas, trace=tr)
        torch.cuda.synchronize()
        _assert_close(c, ref, f"{m}x{n}x{k}: ")
        t = h.read_trace(tr.cpu().numpy().view(np.uint64), grid)
        units = -(-m // 128) * -(-n // 256)
        assert len(set(t["sm"].tolist())) == grid and int(t["sm"].max()) < ctx.sm_count
        for cta in range(grid):
            owned = len(range(cta, units, grid))
            tiles = t["tiles"][cta]
            assert (tiles[:owned] > 0).all() and (tiles[owned:] == 0).all()
            for stamps in (t, t["clock"]):           # %globaltimer, then the SM's %clock64
                order = [stamps["start"][cta], stamps["setup"][cta], stamps["first_stage"][cta],
                         *stamps["tiles"][cta][:owned], stamps["walk_done"][cta], stamps["consumers_done"][cta]]
                assert all(x <= y for x, y in zip(order, order[1:])), (cta, order)
                assert stamps["c_written"][cta] >= stamps["tiles"][cta][owned - 1]
            assert (t["clock"]["tiles"][cta][owned:] == 0).all()


@pytest.mark.gpu
@pytest.mark.parametrize("sk", [1, 2, 3])
def test_trace_of_stream_k_on_the_gpu_keeps_the_product_and_stamps_in_order(sk):
    """Config.trace with stream-K on the GPU (every tile streamed at 1000^3, whole rounds then shared
    tiles at 4096^2 x 256; sk=3, which takes no more tiles than CTAs, 4 tiles in clusters of 8 at
    200 x 384 x 2048 instead): the product matches float64, and every CTA of sk_plan's grid stamped at
    least one work item, its items in order, then "walk_done" and "consumers_done"."""
    torch = pytest.importorskip("torch")
    from ptxgen.harness import bf16_gemm_case
    cfg = h.Config("nt", 1, lag=0, hold=0, sk=sk, trace=1).check()
    f, ctx = _sm90_kernel(h.build("sm_90a", [cfg]), cfg)
    ctas = h.resident_ctas(f, cfg, ctx.sm_count)
    for (m, n, k) in [(1000, 1000, 1000), (4096, 4096, 256) if sk != 3 else (200, 384, 2048)]:
        a, b, ref, c = bf16_gemm_case("nt", m, n, k, np.random.default_rng(m + k + sk).integers(2 ** 31))
        grid = h.sk_plan(m, n, k, ctas, cfg.bn, cfg.bm, cfg.sk)[0]
        tr = torch.zeros(h.trace_bytes(grid) // 8, dtype=torch.int64, device="cuda")
        h.launch(f, cfg, h.tensor_maps(cfg, a, b, m, n, k, c=c), c, m, n, k, ctas, trace=tr,
                 workspace=h.workspace(cfg, m, n, k, ctas))
        torch.cuda.synchronize()
        _assert_close(c, ref, f"{m}x{n}x{k}: ")
        t = h.read_trace(tr.cpu().numpy().view(np.uint64), grid)
        for cta in range(grid):
            items = int((t["tiles"][cta] > 0).sum())
            assert items >= 1 and (t["tiles"][cta][items:] == 0).all()
            for stamps in (t, t["clock"]):
                order = [stamps["start"][cta], stamps["setup"][cta], stamps["first_stage"][cta],
                         *stamps["tiles"][cta][:items], stamps["walk_done"][cta], stamps["consumers_done"][cta]]
                assert all(x <= y for x, y in zip(order, order[1:])), (cta, order)


@pytest.mark.parametrize("cfg", [h.Config("nt", 1), h.Config("nn", 2), h.Config("nt", 1, 3, group=16, bm=192, producer=0)],
                         ids=lambda c: c.name)
def test_bind_makes_the_launch_that_launch_makes(cfg):
    """bind checks and packs the grid, block, arguments, shared memory and cluster launch gives the
    driver (only the stream is left to the bound call), and refuses what launch refuses."""
    f = RecordingFunction()
    maps = (b"a" * 128, b"b" * 128, b"c" * 128)
    h.launch(f, cfg, maps, 0, 4096, 4096, 512, 132)
    assert h.bind(f, cfg, maps, 0, 4096, 4096, 512, 132) == "bound"
    (_, la, lkw), (_, ba, bkw) = f.calls
    assert repr(la) == repr(ba) and lkw.pop("stream") is None and lkw == bkw
    assert la[0] == (h.grid_for(cfg, 4096, 4096, 132),) and la[1] == (cfg.threads,)
    assert lkw["shared_bytes"] == h.smem_bytes(cfg) and lkw["cluster"] == ((2, 1, 1) if cfg.cluster == 2 else None)
    with pytest.raises(ValueError, match="tensor_maps"):
        h.bind(f, cfg, maps[:2], 0, 4096, 4096, 512, 132)
    with pytest.raises(ValueError, match="multiples of 8"):
        h.bind(f, cfg, maps, 0, 4096, 4090, 512, 132)


@pytest.mark.gpu
@pytest.mark.parametrize("cfg", [h.Config("nt", 1), h.Config("nt", 1, 3, group=16, bm=192, producer=0)], ids=lambda c: c.name)
def test_bound_launch_matches_float64_reference(module, cfg):
    """A BoundLaunch from bind, issued twice (the output poisoned in between), writes the product both times."""
    torch = pytest.importorskip("torch")
    from ptxgen.harness import bf16_gemm_case
    f, ctx = _sm90_kernel(module, cfg)
    m, n, k = 1000, 1000, 520
    a, b, ref, c = bf16_gemm_case(cfg.layout, m, n, k, 4242)
    bound = h.bind(f, cfg, h.tensor_maps(cfg, a, b, m, n, k, c=c), c, m, n, k, h.resident_ctas(f, cfg, ctx.sm_count))
    for _ in range(2):
        c.view(torch.int16).fill_(-1)                    # NaN poison
        bound()
        torch.cuda.synchronize()
        _assert_close(c, ref)


def test_launch_refuses_a_bad_split():
    cfg = h.Config("nt", 1, 3, bm=192)
    maps = (b"a", b"b", b"c")
    for bad in (100, -192, 1.5, True):
        with pytest.raises(ValueError, match="m_split"):
            h.launch(None, cfg, maps, 0, 1000, 1000, 64, 132, m_split=bad)
    with pytest.raises(ValueError, match=r"from 0 to 1152 \(the end of M = 1000's last 192-row block\)"):
        h.launch(None, cfg, maps, 0, 1000, 1000, 64, 132, m_split=1344)
    for ctas in (0, -1, None):
        with pytest.raises(ValueError, match="at least one CTA"):
            h.launch(None, cfg, maps, 0, 1000, 1000, 64, ctas)
    with pytest.raises(ValueError, match="m_split is for bm=192"):
        h.launch(None, h.Config(), maps, 0, 1000, 1000, 64, 132, m_split=192)
