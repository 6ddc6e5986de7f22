"""ptxgen.executor with thread-block clusters: distributed shared memory through mapa and .shared::cluster,
barrier.cluster, the cluster special registers, remote mbarrier arrivals, and the errors of each."""
from __future__ import annotations

import os

import numpy as np
import pytest

import ptxgen as pg
from ptxgen.errors import DeadlockError, ExecutionError, MemoryFaultError, UsageError
from ptxgen.executor import CLUSTER_RANK_SHIFT, Buffer, run_kernel

T = 64                                  # threads per CTA of the neighbour kernel
NEIGHBOUR_SMEM = T * 4
NVCC_PTX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ptx", "nvcc", "coop_cluster.sm_90a.O3.ptx")


def _meet(k, aligned=True):
    k.barrier_cluster_arrive(sem="release", aligned=aligned)
    k.barrier_cluster_wait(acquire=True, aligned=aligned)


def neighbour_module(bad_rank=False, skip_arrive_rank=None, arrive_twice=False, leave_early=False) -> pg.Module:
    """Each CTA writes ctaid.x * 1000 + tid into its shared memory, meets its cluster, and stores what
    CTA (rank + 1) % n holds at the same place. Variants carry the bugs the error tests look for."""
    m = pg.Module("sm_90a")
    k = m.entry("neighbour", reqntid=T)
    pout = k.param_ptr("out", pg.u32, align=4)
    s = k.shared("s", NEIGHBOUR_SMEM, align=16)
    out = k.cvta(k.ld_param(pout), "global", to=True)
    tid = k.tid.x
    rank, n = k.sreg("%cluster_ctarank"), k.sreg("%cluster_nctarank")
    mine = k.add(k.mov(s, type=pg.u32), k.shl(tid, 2))
    k.st(mine, k.mad(k.ctaid.x, 1000, tid, mode="lo"), pg.u32, space="shared::cta")
    if skip_arrive_rank is not None:
        k.barrier_cluster_arrive(sem="release", aligned=False, guard=k.setp("ne", rank, skip_arrive_rank))
        k.barrier_cluster_wait(acquire=True, aligned=False)
    else:
        _meet(k)
    if arrive_twice:
        k.barrier_cluster_arrive(sem="relaxed")
        k.barrier_cluster_arrive(sem="relaxed")
    peer = n if bad_rank else k.rem(k.add(rank, 1), n)
    theirs = k.mapa(mine, peer, space="shared::cluster", type=pg.u32)
    v = k.ld(theirs, pg.u32, space="shared::cluster", sem="relaxed", scope="cluster")
    k.st(k.add(out, k.mul(k.mad(k.ctaid.x, T, tid, mode="lo"), 4, mode="wide")), v)
    if not leave_early:
        _meet(k)                       # no CTA leaves while a peer may still read its shared memory
    k.ret()
    return m


def neighbour_expected(grid, cluster):
    ctas = np.arange(grid)
    rank = ctas % cluster
    peer = ctas - rank + (rank + 1) % cluster
    return (peer[:, None] * 1000 + np.arange(T)[None, :]).astype(np.uint32)


@pytest.mark.parametrize("concurrent", [False, True])
def test_neighbour_reads_the_next_ctas_shared_memory(concurrent):
    out = np.full((8, T), 0xDEADBEEF, np.uint32)
    stats = run_kernel(neighbour_module(), "neighbour", grid=(8,), block=(T,), args=[Buffer(out)], cluster=4,
                       concurrent=concurrent)
    np.testing.assert_array_equal(out, neighbour_expected(8, 4))
    assert stats.ctas == 8


def test_neighbour_in_clusters_of_one_reads_its_own_shared_memory():
    # without cluster= every CTA is a cluster of one: rank 0 of 1, so its "neighbour" is itself
    out = np.zeros((4, T), np.uint32)
    run_kernel(neighbour_module(), "neighbour", grid=(4,), block=(T,), args=[Buffer(out)])
    np.testing.assert_array_equal(out, neighbour_expected(4, 1))


def reduce_module(L: int, TR: int = 32) -> pg.Module:
    """Each CTA of a cluster of P parks x[ctaid.x] (L floats) in shared memory, meets the cluster, and CTA
    rank r sums the slice [r L/P, (r+1) L/P) over the P CTAs in rank order (.v4 loads through mapa),
    storing it to out[clusterid.x, slice]."""
    m = pg.Module("sm_90a")
    k = m.entry("cluster_reduce", reqntid=TR)
    px, pout = k.param_ptr("x", pg.f32, align=16), k.param_ptr("out", pg.f32, align=16)
    s = k.shared("s", L * 4, align=16)
    x, out = k.cvta(k.ld_param(px), "global", to=True), k.cvta(k.ld_param(pout), "global", to=True)
    tid = k.tid.x
    sbase = k.mov(s, type=pg.u32)
    row = k.add(x, k.mul(k.ctaid.x, L * 4, mode="wide"))
    for j in range(L // (4 * TR)):
        off = k.add(k.shl(tid, 4), j * TR * 16)
        v = k.ld(k.add(row, k.cvt(off, pg.u64, pg.u32)), pg.f32, vec=4)
        k.st(k.add(sbase, off), v, pg.f32, space="shared")
    _meet(k)
    rank, parts = k.sreg("%cluster_ctarank"), k.sreg("%cluster_nctarank")
    slice_len = k.div(k.mov(L, type=pg.u32), parts)                       # floats per slice: L / P
    groups = k.shr(slice_len, 2)                                          # .v4 groups per slice
    first = k.mul(rank, slice_len, mode="lo")
    dst_row = k.add(out, k.mul(k.sreg("%clusterid.x"), L * 4, mode="wide"))
    for j in range(-(-L // (4 * TR))):                                    # enough passes for P = 1
        g = k.add(tid, j * TR)
        with k.if_(k.setp("lt", g, groups)):
            elem = k.add(first, k.shl(g, 2))
            own = k.add(sbase, k.shl(elem, 2))
            acc = [k.mov(0.0, type=pg.f32) for _ in range(4)]
            with k.for_range(0, parts, name="peer") as p:
                vals = k.ld(k.mapa(own, p, space="shared::cluster", type=pg.u32), pg.f32, vec=4,
                            space="shared::cluster")
                for e in range(4):
                    k.add(acc[e], vals[e], dst=acc[e])
            k.st(k.add(dst_row, k.cvt(k.shl(elem, 2), pg.u64, pg.u32)), acc, pg.f32)
    _meet(k)
    k.ret()
    return m


@pytest.mark.parametrize("P", [2, 8])
def test_cluster_reduction_sums_each_slice_over_the_peers_in_rank_order(P):
    L, nclusters = 256, 2
    rng = np.random.default_rng(P)
    x = rng.standard_normal((nclusters * P, L)).astype(np.float32)
    out = np.full((nclusters, L), np.nan, np.float32)
    run_kernel(reduce_module(L), "cluster_reduce", grid=(nclusters * P,), block=(32,), args=[Buffer(x), Buffer(out)],
               cluster=(P,))
    ref = np.zeros((nclusters, L), np.float32)
    for p in range(P):                                 # float32 sums in rank order, as the kernel adds
        ref = ref + x.reshape(nclusters, P, L)[:, p]
    np.testing.assert_array_equal(out, ref)
    assert not np.array_equal(out[0], x[0])            # the peers' values really went in


SREGS = (["%cluster_ctarank", "%cluster_nctarank"]
         + [f"%{r}.{a}" for r in ("clusterid", "nclusterid", "cluster_ctaid", "cluster_nctaid") for a in "xyz"]
         + ["%is_explicit_cluster"])


def sreg_module() -> pg.Module:
    m = pg.Module("sm_90a")
    k = m.entry("sregs", reqntid=32)
    out = k.cvta(k.ld_param(k.param_ptr("out", pg.u32, align=4)), "global", to=True)
    cta = k.mad(k.add(k.mul(k.ctaid.z, k.nctaid.y, mode="lo"), k.ctaid.y), k.nctaid.x, k.ctaid.x, mode="lo")
    base = k.add(out, k.mul(cta, 4 * len(SREGS), mode="wide"))
    with k.if_(k.setp("eq", k.tid.x, 0)):
        for i, name in enumerate(SREGS):
            v = k.sreg(name)
            if name == "%is_explicit_cluster":
                v = k.selp(1, 0, v, type=pg.u32)
            k.st(pg.mem(base, 4 * i), v, pg.u32)
    k.ret()
    return m


@pytest.mark.parametrize("grid,cluster", [((4, 6, 1), (2, 3, 1)), ((6, 4, 2), (2, 1, 1)), ((4, 2, 2), (1, 2, 2)),
                                          ((3, 2, 1), None)])
def test_cluster_special_registers(grid, cluster):
    gx, gy, gz = grid
    out = np.full((gz, gy, gx, len(SREGS)), 0xFFFFFFFF, np.uint32)
    run_kernel(sreg_module(), "sregs", grid=grid, block=(32,), args=[Buffer(out)], cluster=cluster)
    c = cluster or (1, 1, 1)
    z, y, x = np.meshgrid(np.arange(gz), np.arange(gy), np.arange(gx), indexing="ij")
    ctaid = (x, y, z)
    exp = {"%cluster_ctarank": (x % c[0]) + (y % c[1]) * c[0] + (z % c[2]) * c[0] * c[1],
           "%cluster_nctarank": np.full_like(x, c[0] * c[1] * c[2]),
           "%is_explicit_cluster": np.full_like(x, cluster is not None)}
    for i, a in enumerate("xyz"):
        exp[f"%clusterid.{a}"] = ctaid[i] // c[i]
        exp[f"%nclusterid.{a}"] = np.full_like(x, grid[i] // c[i])
        exp[f"%cluster_ctaid.{a}"] = ctaid[i] % c[i]
        exp[f"%cluster_nctaid.{a}"] = np.full_like(x, c[i])
    for i, name in enumerate(SREGS):
        np.testing.assert_array_equal(out[..., i], exp[name], err_msg=name)
    if cluster is None:   # clusters of one: the cluster id is the CTA id, the cluster count the grid
        np.testing.assert_array_equal(out[..., SREGS.index("%clusterid.x")], x)
        np.testing.assert_array_equal(out[..., SREGS.index("%nclusterid.y")], gy)


def test_getctarank_and_generic_mapa_agree_with_the_rank():
    """getctarank of a mapa'd address is the rank it was mapped to, of the CTA's own shared::cta address its
    own rank; a generic mapa.u64 round-trips through cvta and reads the same peer."""
    m = pg.Module("sm_90a")
    k = m.entry("ranks", reqntid=32)
    out = k.cvta(k.ld_param(k.param_ptr("out", pg.u32, align=4)), "global", to=True)
    s = k.shared("s", 4, align=4)
    rank, n = k.sreg("%cluster_ctarank"), k.sreg("%cluster_nctarank")
    own = k.mov(s, type=pg.u32)
    with k.if_(k.setp("eq", k.tid.x, 0)):
        k.st(own, k.add(rank, 100), pg.u32, space="shared")
    _meet(k)
    peer = k.sub(k.sub(n, 1), rank)                                     # the mirror rank
    base = k.add(out, k.mul(k.mad(k.ctaid.x, 32, k.tid.x, mode="lo"), 16, mode="wide"))
    k.st(base, k.getctarank(k.mapa(own, peer, space="shared::cluster", type=pg.u32), space="shared::cluster",
                            type=pg.u32), pg.u32)
    k.st(pg.mem(base, 4), k.getctarank(own, space="shared::cluster", type=pg.u32), pg.u32)
    gen = k.mapa(k.cvta(k.cvt(own, pg.u64, pg.u32), "shared"), peer, type=pg.u64)
    k.st(pg.mem(base, 8), k.ld(gen, pg.u32, space="generic"), pg.u32)
    k.st(pg.mem(base, 12), k.ld(k.cvta(gen, "shared::cluster", to=True), pg.u32, space="shared::cluster"), pg.u32)
    _meet(k)
    k.ret()
    out = np.zeros((8, 32, 4), np.uint32)
    run_kernel(m, "ranks", grid=(8,), block=(32,), args=[Buffer(out)], cluster=(4,))
    rank = np.arange(8) % 4
    np.testing.assert_array_equal(out[:, :, 0], np.repeat((3 - rank)[:, None], 32, 1))
    np.testing.assert_array_equal(out[:, :, 1], np.repeat(rank[:, None], 32, 1))
    np.testing.assert_array_equal(out[:, :, 2], np.repeat((103 - rank)[:, None], 32, 1))
    np.testing.assert_array_equal(out[:, :, 3], out[:, :, 2])


def test_atom_and_red_on_another_ctas_shared_memory():
    """Every thread of the cluster adds rank + 1 to rank 0's counter (atom, keeping the old value) and 1 to
    the last rank's (red), and stores a .v2 pair (a tag, the old value) into its slot of rank 0's table
    (mapa of the variable itself); after the meeting each CTA reports its counter and table."""
    P, TT = 4, 32
    m = pg.Module("sm_90a")
    k = m.entry("counters", reqntid=TT)
    out = k.cvta(k.ld_param(k.param_ptr("out", pg.u32, align=8)), "global", to=True)
    cnt = k.shared("cnt", 4, align=4)
    table = k.shared("table", P * TT * 8, align=8)
    tid, rank = k.tid.x, k.sreg("%cluster_ctarank")
    last = k.sub(k.sreg("%cluster_nctarank"), 1)
    _meet(k)                                        # shared memory starts zeroed; no init to order
    old = k.atom("add", k.mapa(cnt, 0, space="shared::cluster", type=pg.u32), k.add(rank, 1), type=pg.u32,
                 space="shared::cluster")
    k.red("add", k.mapa(cnt, last, space="shared::cluster", type=pg.u32), 1, type=pg.u32, space="shared::cluster")
    slot = k.add(k.mapa(table, 0, space="shared::cluster", type=pg.u32), k.shl(k.mad(rank, TT, tid, mode="lo"), 3))
    k.st(slot, [k.mad(rank, 100, tid, mode="lo"), old], pg.u32, space="shared::cluster")
    _meet(k)
    base = k.add(out, k.mul(k.ctaid.x, 8 + P * TT * 8, mode="wide"))
    with k.if_(k.setp("eq", tid, 0)):
        k.st(base, k.ld(k.mov(cnt, type=pg.u32), pg.u32, space="shared"), pg.u32)
    for j in range(P):
        off = k.shl(k.add(tid, j * TT), 3)
        v = k.ld(k.add(k.mov(table, type=pg.u32), off), pg.u32, vec=2, space="shared")
        k.st(pg.mem(k.add(base, k.cvt(off, pg.u64, pg.u32)), 8), v, pg.u32)
    k.ret()
    out = np.zeros((2 * P, 2 + 2 * P * TT), np.uint32)
    run_kernel(m, "counters", grid=(2 * P,), block=(TT,), args=[Buffer(out)], cluster=P)
    counters = out[:, 0].reshape(2, P)
    total = TT * sum(range(1, P + 1))
    np.testing.assert_array_equal(counters[:, 0], total)                  # rank 0: every atom's add
    np.testing.assert_array_equal(counters[:, P - 1], TT * P)             # the last rank: every red
    assert (counters[:, 1:P - 1] == 0).all()
    tab = out[:, 2:].reshape(2, P, P, TT, 2)[:, 0]                        # rank 0's table, per cluster
    np.testing.assert_array_equal(tab[..., 0], np.broadcast_to(np.arange(P)[:, None] * 100 + np.arange(TT), (2, P, TT)))
    inc = np.repeat(np.arange(1, P + 1), TT)
    for c in range(2):
        # one atomic sequence: the olds and old + increment are the running sums 0 .. total, each once
        olds = tab[c, ..., 1].reshape(-1)
        np.testing.assert_array_equal(np.sort(np.concatenate([[0], olds + inc])), np.sort(np.append(olds, total)))
    assert (out[1:P, 2:] == 0).all()                                      # the other ranks' tables stay empty


def remote_mbarrier_module(P: int) -> pg.Module:
    """A ring: each CTA stores its rank's values into the next CTA's shared memory (st.shared::cluster), then
    thread 0 arrives (release.cluster) on that CTA's mbarrier; each CTA waits on its own mbarrier, then
    copies what it received to global memory. The mbarrier is set up before a first cluster meeting."""
    m = pg.Module("sm_90a")
    k = m.entry("ring", reqntid=32)
    out = k.cvta(k.ld_param(k.param_ptr("out", pg.u32, align=4)), "global", to=True)
    bar = k.shared("bar", 8, align=8)
    buf = k.shared("buf", 32 * 4, align=16)
    tid = k.tid.x
    rank = k.sreg("%cluster_ctarank")
    bar_a, buf_a = k.mov(bar, type=pg.u32), k.mov(buf, type=pg.u32)
    with k.if_(k.setp("eq", tid, 0)):
        k.mbarrier_init(bar_a, 1)
        k.fence_mbarrier_init()
    _meet(k)
    nxt = k.rem(k.add(rank, 1), P)
    k.st(k.mapa(k.add(buf_a, k.shl(tid, 2)), nxt, space="shared::cluster", type=pg.u32),
         k.mad(rank, 1000, tid, mode="lo"), pg.u32, space="shared::cluster")
    k.bar_sync(0)
    with k.if_(k.setp("eq", tid, 0)):
        k.mbarrier_arrive(k.mapa(bar_a, nxt, space="shared::cluster", type=pg.u32), sem="release", scope="cluster",
                          space="shared::cluster")
    k.mbarrier_wait(bar_a, parity=0)
    v = k.ld(k.add(buf_a, k.shl(tid, 2)), pg.u32, space="shared")
    k.st(k.add(out, k.mul(k.mad(k.ctaid.x, 32, tid, mode="lo"), 4, mode="wide")), v)
    _meet(k)
    k.ret()
    return m


@pytest.mark.parametrize("P", [2, 4])
def test_remote_mbarrier_arrive_releases_the_peers_waiters(P):
    out = np.zeros((2 * P, 32), np.uint32)
    run_kernel(remote_mbarrier_module(P), "ring", grid=(2 * P,), block=(32,), args=[Buffer(out)], cluster=P)
    rank = np.arange(2 * P) % P
    prev = (rank - 1) % P
    np.testing.assert_array_equal(out, prev[:, None] * 1000 + np.arange(32)[None, :])


def async_store_module(P: int, wrong_barrier: bool = False) -> pg.Module:
    """A ring of asynchronous stores: thread 0 of each CTA expects 32 x (4 + 16 + 4) bytes on its mbarrier;
    each thread then pushes into the next CTA, with that CTA's mbarrier counting the bytes, a b32
    (st.async), a v4.f32 (st.async) and an add of rank + 1 into a counter (red.async); each CTA waits on
    its own mbarrier (acquire, cluster scope) and copies what it received to global memory.
    wrong_barrier: the stores complete on the sender's own mbarrier instead of the receiver's."""
    m = pg.Module("sm_90a", version="8.1")                # st.async and red.async need PTX ISA 8.1
    k = m.entry("push", reqntid=32)
    out = k.cvta(k.ld_param(k.param_ptr("out", pg.u32, align=4)), "global", to=True)
    bar = k.shared("bar", 8, align=8)
    words = k.shared("words", 32 * 4, align=16)
    quads = k.shared("quads", 32 * 16, align=16)
    count = k.shared("count", 4, align=4)
    tid = k.tid.x
    rank = k.sreg("%cluster_ctarank")
    bar_a, words_a, quads_a, count_a = (k.mov(x, type=pg.u32) for x in (bar, words, quads, count))
    with k.if_(k.setp("eq", tid, 0)):
        k.st(count_a, 0, pg.u32, space="shared")
        k.mbarrier_init(bar_a, 1)
        k.fence_mbarrier_init()
        k.mbarrier_arrive_expect_tx(bar_a, 32 * (4 + 16 + 4))
    _meet(k)
    nxt = k.rem(k.add(rank, 1), P)

    def peer(a):
        return k.mapa(a, nxt, space="shared::cluster", type=pg.u32)
    pbar = bar_a if wrong_barrier else peer(bar_a)
    k.st_async(peer(k.add(words_a, k.shl(tid, 2))), k.mad(rank, 1000, tid, mode="lo"), pbar, pg.b32)
    f = k.cvt(k.mad(rank, 100, tid, mode="lo"), pg.f32, pg.u32, rnd="rn")
    k.st_async(peer(k.add(quads_a, k.shl(tid, 4))), [f, f, f, f], pbar, pg.f32)
    k.red_async("add", peer(count_a), k.add(rank, 1), pbar, pg.u32)
    k.mbarrier_wait(bar_a, parity=0, sem="acquire", scope="cluster")
    o = k.add(out, k.mul(k.mad(k.ctaid.x, 32, tid, mode="lo"), 12, mode="wide"))
    k.st(o, k.ld(k.add(words_a, k.shl(tid, 2)), pg.u32, space="shared"))
    k.st(pg.mem(o, 4), k.cvt(k.ld(k.add(quads_a, k.shl(tid, 4)), pg.f32, space="shared"), pg.u32, pg.f32, rnd="rzi"))
    k.st(pg.mem(o, 8), k.ld(count_a, pg.u32, space="shared"))
    _meet(k)
    k.ret()
    return m


@pytest.mark.parametrize("P", [2, 4])
def test_async_stores_complete_on_the_receivers_mbarrier(P):
    out = np.zeros((2 * P, 32, 3), np.uint32)
    run_kernel(async_store_module(P), "push", grid=(2 * P,), block=(32,), args=[Buffer(out)], cluster=P)
    prev = (np.arange(2 * P) % P - 1) % P
    tid = np.arange(32)[None, :]
    np.testing.assert_array_equal(out[..., 0], prev[:, None] * 1000 + tid)
    np.testing.assert_array_equal(out[..., 1], prev[:, None] * 100 + tid)
    np.testing.assert_array_equal(out[..., 2], np.broadcast_to(32 * (prev[:, None] + 1), (2 * P, 32)))


def test_async_store_completing_on_another_ctas_mbarrier_faults():
    out = np.zeros((2, 32, 3), np.uint32)
    # (whichever CTA gets there first: its own mbarrier, the other CTA's data)
    with pytest.raises(MemoryFaultError, match=r"the mbarrier \(CTA rank (\d)\) is not in the CTA the data goes to "
                                               r"\(rank (?!\1)\d\)"):
        run_kernel(async_store_module(2, wrong_barrier=True), "push", grid=(2,), block=(32,), args=[Buffer(out)],
                   cluster=2)


def test_nvcc_cluster_kernel_runs_in_its_declared_clusters():
    """nvcc's cluster_dsmem (.reqnctapercluster 2): generic mapa.u64 and ld.u32 through the window; the
    launch takes the kernel's cluster shape, and refuses another."""
    src = open(NVCC_PTX).read()
    out = np.zeros((4, 64), np.int32)
    run_kernel(src, "_Z13cluster_dsmemPi", grid=(4,), block=(64,), args=[Buffer(out)])
    rank = np.arange(4) % 2
    np.testing.assert_array_equal(out, 2 + ((rank + 1) % 2)[:, None] * 100 + np.arange(64)[None, :])
    with pytest.raises(UsageError, match=r"reqnctapercluster 2, 1, 1.*cluster \(4, 1, 1\)"):
        run_kernel(src, "_Z13cluster_dsmemPi", grid=(4,), block=(64,), args=[Buffer(out)], cluster=4)


# ------------------------------------------------------------------------------------------------ errors

def test_grid_that_is_not_whole_clusters_is_refused():
    with pytest.raises(UsageError, match=r"grid \(6, 1, 1\).*clusters \(4, 1, 1\)"):
        run_kernel(neighbour_module(), "neighbour", grid=(6,), block=(T,), args=[Buffer(np.zeros(6 * T, np.uint32))],
                   cluster=4)
    with pytest.raises(UsageError, match=r"grid \(4, 3, 1\).*clusters \(2, 2, 1\): its y extent 3"):
        run_kernel(sreg_module(), "sregs", grid=(4, 3), block=(32,), args=[Buffer(np.zeros(4096, np.uint32))],
                   cluster=(2, 2))
    with pytest.raises(UsageError, match="at most 16 CTAs"):
        run_kernel(sreg_module(), "sregs", grid=(32,), block=(32,), args=[Buffer(np.zeros(4096, np.uint32))],
                   cluster=32)


def test_mapa_to_a_rank_outside_the_cluster_faults():
    with pytest.raises(MemoryFaultError, match=r"mapa to CTA rank 4, but the cluster has 4 CTA") as ei:
        run_kernel(neighbour_module(bad_rank=True), "neighbour", grid=(8,), block=(T,),
                   args=[Buffer(np.zeros(8 * T, np.uint32))], cluster=4)
    assert ei.value.instr.startswith("mapa.shared::cluster.u32")
    assert ei.value.loc is not None and ei.value.loc.file == __file__


def test_cluster_wait_that_a_cta_never_arrives_at_deadlocks():
    with pytest.raises(DeadlockError, match=r"barrier.cluster.wait cannot complete: 192 of the 256 live threads.*"
                                            r"CTA rank 2 \(ctaid \(2, 0, 0\)\): 64 at `barrier.cluster.wait.acquire;`.*"
                                            r"without having arrived") as ei:
        run_kernel(neighbour_module(skip_arrive_rank=2), "neighbour", grid=(4,), block=(T,),
                   args=[Buffer(np.zeros(4 * T, np.uint32))], cluster=4)
    assert ei.value.instr.startswith("barrier.cluster.wait")
    # in clusters of one the lone CTA of rank 0 skips its arrive and deadlocks alone, the same way
    with pytest.raises(DeadlockError, match="0 of the 64 live threads"):
        run_kernel(neighbour_module(skip_arrive_rank=0), "neighbour", grid=(2,), block=(T,),
                   args=[Buffer(np.zeros(2 * T, np.uint32))])


def test_exited_threads_count_as_arrived():
    """Rank 1 exits at once; the other CTAs' barrier.cluster still completes."""
    m = pg.Module("sm_90a")
    k = m.entry("leave", reqntid=32)
    out = k.cvta(k.ld_param(k.param_ptr("out", pg.u32, align=4)), "global", to=True)
    k.exit(guard=k.setp("eq", k.sreg("%cluster_ctarank"), 1))
    _meet(k, aligned=False)
    k.st(k.add(out, k.mul(k.mad(k.ctaid.x, 32, k.tid.x, mode="lo"), 4, mode="wide")), 7, pg.u32)
    k.ret()
    out = np.zeros((4, 32), np.uint32)
    run_kernel(m, "leave", grid=(4,), block=(32,), args=[Buffer(out)], cluster=2)
    np.testing.assert_array_equal(out[:, 0], [7, 0, 7, 0])


def test_arriving_twice_in_one_phase_is_an_error():
    with pytest.raises(ExecutionError, match="arrive a second time before the cluster barrier's phase 1 completes"):
        run_kernel(neighbour_module(arrive_twice=True), "neighbour", grid=(2,), block=(T,),
                   args=[Buffer(np.zeros(2 * T, np.uint32))], cluster=2)


def test_reading_the_shared_memory_of_an_exited_cta_faults():
    # without the final meeting rank 1 may leave before rank 0 reads its shared memory: on a GPU that
    # memory is gone; here rank 1 runs to its end in its first turn, and rank 0's read is reported
    with pytest.raises(MemoryFaultError, match="CTA rank 1 of the cluster, which has exited"):
        run_kernel(neighbour_module(leave_early=True), "neighbour", grid=(2,), block=(T,),
                   args=[Buffer(np.zeros(2 * T, np.uint32))], cluster=2)
    # nvcc's cluster_runtime kernel has the same race: every CTA reads rank 0's variable and exits without
    # a cluster barrier after it; here rank 0 reads its own and leaves before rank 1 has read it
    with pytest.raises(MemoryFaultError, match="CTA rank 0 of the cluster, which has exited"):
        run_kernel(open(NVCC_PTX).read(), "_Z15cluster_runtimePf", grid=(4,), block=(64,),
                   args=[Buffer(np.zeros(4, np.float32))], cluster=4)


def test_plain_shared_access_with_a_cluster_address_faults_with_a_hint():
    m = pg.Module("sm_90a")
    k = m.entry("wrong_space", reqntid=32)
    s = k.shared("s", 128, align=16)
    _meet(k)
    a = k.mapa(k.mov(s, type=pg.u32), 1, space="shared::cluster", type=pg.u32)
    k.ld(a, pg.u32, space="shared")
    _meet(k)
    k.ret()
    where = f"{(2 << CLUSTER_RANK_SHIFT):#x}"         # rank 1's field is 2: 0 is the executing CTA
    with pytest.raises(MemoryFaultError, match=f"{where}.*shared::cluster address of CTA rank 1"):
        run_kernel(m, "wrong_space", grid=(2,), block=(32,), cluster=2)


@pytest.mark.ptxas
def test_cluster_kernels_assemble_for_sm_90a():
    from ptxgen.ptxas import assemble
    for mod in (neighbour_module(), reduce_module(256), sreg_module(), remote_mbarrier_module(4),
                async_store_module(4)):
        res = assemble(mod.emit(), "sm_90a", cache=False)
        assert res.cubin[:4] == b"\x7fELF"
