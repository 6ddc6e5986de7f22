"""k.stage_ring(): the multi-stage ring of pipelined kernels (an index and the phase bit of its mbarrier waits).

The PTX each method writes, the ring's values on the CPU executor against its definition, a producer/consumer
pipeline through the ring that lints clean, runs on the executor and assembles with ptxas, and typed errors
at the caller's line for bad arguments.
"""
import functools

import numpy as np
import pytest

import ptxgen as pg
from ptxgen import BuildError, lint as L
from ptxgen.cli import main as cli_main
from ptxgen.errors import DeadlockError
from ptxgen.executor import Buffer, run_kernel
from ptxgen.ops.mbarrier import StageRing

from _build_checks import here, raises_at, texts


# fn() must raise exactly BuildError with this code and message, located at `line` of this file
raises = functools.partial(raises_at, __file__, BuildError)


def ring_model(stages: int, n: int):
    """(index, phase) after each of n advances, straight from the definition: index += 1; on reaching
    `stages` it wraps to 0 and the phase bit flips."""
    s = ph = 0
    out = []
    for _ in range(n):
        s += 1
        if s == stages:
            s, ph = 0, ph ^ 1
        out.append((s, ph))
    return out


# ----------------------------------------------------------------------------------------------- PTX text
def test_setup_and_advance_text():
    m = pg.Module("sm_90a")
    k = m.entry("k")
    ring = k.stage_ring(4)
    assert isinstance(ring, StageRing) and ring.stages == 4
    assert (ring.index.name, ring.phase.name) == ("%stage", "%stage_phase")
    assert ring.index.type is pg.u32 and ring.phase.type is pg.u32
    assert texts(k) == ["mov.u32 %stage, 0;", "mov.u32 %stage_phase, 0;"]
    n = len(k.fn.body)
    ring.advance()
    assert texts(k, n) == ["add.u32 %stage, %stage, 1;", "setp.eq.u32 %p0, %stage, 4;",
                           "@%p0 mov.u32 %stage, 0;", "@%p0 xor.b32 %stage_phase, %stage_phase, 1;"]


def _advance_by_hand(k, s, ph, stages):
    # the sequence pipelined samples wrote by hand before stage_ring existed
    k.add(s, 1, dst=s)
    wrap = k.setp("eq", s, stages)
    k.mov(0, dst=s, guard=wrap)
    k.xor(ph, 1, dst=ph, guard=wrap)


@pytest.mark.parametrize("stages", [1, 3])
def test_advance_is_the_hand_written_sequence(stages):
    m1, m2 = pg.Module("sm_90a"), pg.Module("sm_90a")
    k1, k2 = m1.entry("k"), m2.entry("k")
    s, ph = k1.reg(pg.u32, "stage"), k1.reg(pg.u32, "stage_phase")
    k1.mov(0, dst=s)
    k1.mov(0, dst=ph)
    ring = k2.stage_ring(stages)
    for _ in range(2):
        _advance_by_hand(k1, s, ph, stages)
        ring.advance()
    k1.ret()
    k2.ret()
    assert m1.emit().text == m2.emit().text


def test_names_addr_and_wait_text():
    m = pg.Module("sm_90a")
    k = m.entry("k")
    a, b = k.stage_ring(2, name="ring"), k.stage_ring(2, name="ring")
    assert [r.name for r in (a.index, a.phase, b.index, b.phase)] == ["%ring", "%ring_phase", "%ring_1",
                                                                      "%ring_phase_1"]
    base = k.reg(pg.u32, "smem")
    n = len(k.fn.body)
    d = a.addr(base, 4096)
    assert d.type is pg.u32 and texts(k, n) == ["mad.lo.u32 %r0, %ring, 4096, %smem;"]
    n = len(k.fn.body)
    a.addr(1024, a.phase)
    assert texts(k, n) == ["mad.lo.u32 %r1, %ring, %ring_phase, 1024;"]

    n = len(k.fn.body)
    bar = a.wait(base)
    assert bar.type is pg.u32
    assert texts(k, n) == ["mad.lo.u32 %r2, %ring, 8, %smem;",
                           "mbarrier.try_wait.parity.shared.b64 %p0, [%r2], %ring_phase;",
                           "@!%p0 bra $L_mbar_wait_0;"]
    n = len(k.fn.body)
    a.wait(base, flip=True)
    assert texts(k, n) == ["mad.lo.u32 %r3, %ring, 8, %smem;", "xor.b32 %r4, %ring_phase, 1;",
                           "mbarrier.try_wait.parity.shared.b64 %p1, [%r3], %r4;",
                           "@!%p1 bra $L_mbar_wait_1;"]
    n = len(k.fn.body)
    a.wait(base, timeout_cycles=1000)
    got = texts(k, n)
    assert got[0] == "mad.lo.u32 %r5, %ring, 8, %smem;" and "@%p3 trap;" in got
    assert "mbarrier.try_wait.parity.shared.b64 %p2, [%r5], %ring_phase;" in got


# ----------------------------------------------------------------------------------------------- executor
def _ring_values_kernel(stages: int, n: int):
    """One thread advances the ring n times in a loop and stores (index, phase) after each advance."""
    m = pg.Module("sm_90a")
    k = m.entry("ring_values", reqntid=1)
    pout = k.param_ptr("out", pg.u32)
    out = k.cvta(k.ld_param(pout), "global", to=True)
    ring = k.stage_ring(stages)
    with k.for_range(0, n, name="it") as it:
        ring.advance()
        p = k.add(out, k.mul(it, 8, mode="wide"))
        k.st(p, ring.index)
        k.st(pg.mem(p, 4), ring.phase)
    k.ret()
    return m


@pytest.mark.parametrize("stages,n", [(3, 7), (1, 3), (2, 5), (4, 9)])
def test_ring_values_on_the_executor(stages, n):
    out = np.full((n, 2), 0xDEADBEEF, np.uint32)
    run_kernel(_ring_values_kernel(stages, n), "ring_values", grid=(1,), block=(1,), args=[Buffer(out)])
    got = [tuple(int(v) for v in row) for row in out]
    assert got == ring_model(stages, n)
    # closed form: after j advances the index is j mod S and the phase the parity of the wraps so far
    assert got == [(j % stages, (j // stages) % 2) for j in range(1, n + 1)]


def test_three_stage_ring_seven_advances():
    out = np.full((7, 2), 0xDEADBEEF, np.uint32)
    run_kernel(_ring_values_kernel(3, 7), "ring_values", grid=(1,), block=(1,), args=[Buffer(out)])
    seq = [tuple(int(v) for v in row) for row in out]
    assert seq == ring_model(3, 7)
    assert seq[:3] == [(1, 0), (2, 0), (0, 1)]  # the third advance wraps and flips the phase


# ----------------------------------------------------------------------------------------------- pipeline
def pipeline_module(stages: int, *, producer_flip: bool = True, timeout_cycles=None, back=None):
    """Warp 0's lane 0 produces `items` (a parameter) values into a ring of one-word stages, warp 1's lane 0
    consumes them: full barriers (count 1) at `bars`, empty barriers (count 1) at `bars + 8*stages`.
    With `back`, the producer waits with ring.wait_released(empty, back) and also counts the items it
    has loaded in shared memory; the consumer then writes, per item, the item's value (out[2i]) and that
    count as it saw it before releasing the item (out[2i + 1])."""
    m = pg.Module("sm_90a")
    k = m.entry("ring_pipe", reqntid=64)
    pout, pitems = k.param_ptr("out", pg.u32), k.param("items", pg.u32)
    out = k.cvta(k.ld_param(pout), "global", to=True)
    items = k.ld_param(pitems)
    data_v = k.shared("data", 4 * stages, align=4)
    bars_v = k.shared("bars", 16 * stages, align=8)
    count = None if back is None else k.mov(k.shared("count", 4, align=4), type=pg.u32)
    data = k.mov(data_v, type=pg.u32)
    full = k.mov(bars_v, type=pg.u32)
    empty = k.add(full, 8 * stages)
    tid = k.tid.x
    with k.if_(k.setp("eq", tid, 0)):
        for s in range(stages):
            k.mbarrier_init(k.add(full, 8 * s), 1)
            k.mbarrier_init(k.add(empty, 8 * s), 1)
        if count is not None:
            k.st(count, 0, pg.u32, space="shared")
    k.fence_mbarrier_init()
    k.bar_sync(0)
    ring = k.stage_ring(stages)
    leader = k.setp("eq", k.and_(tid, 31), 0)
    role = k.if_else(k.setp("eq", k.shr(tid, 5), 0))
    with role.then():
        with k.if_(leader):
            with k.for_range(0, items, name="item") as i:
                if back is None:
                    ring.wait(empty, flip=producer_flip, timeout_cycles=timeout_cycles)
                else:
                    ring.wait_released(empty, back, timeout_cycles=timeout_cycles)
                k.st(ring.addr(data, 4), k.mad(i, 3, 7, mode="lo"), space="shared")
                if count is not None:
                    k.st(count, k.add(i, 1), pg.u32, space="shared")
                k.mbarrier_arrive(ring.addr(full, 8))
                ring.advance()
    with role.otherwise():
        with k.if_(leader):
            with k.for_range(0, items, name="item") as i:
                ring.wait(full, timeout_cycles=timeout_cycles)
                v = k.ld(ring.addr(data, 4), pg.u32, space="shared")
                o = k.add(out, k.mul(i, 4 if count is None else 8, mode="wide"))
                k.st(o, v)
                if count is not None:
                    k.st(pg.mem(o, 4), k.ld(count, pg.u32, space="shared"))
                k.mbarrier_arrive(ring.addr(empty, 8))
                ring.advance()
    k.ret()
    return m


@pytest.mark.parametrize("stages,back", [(4, 1), (4, 2), (4, 3), (4, 4), (3, 2), (1, 1)])
def test_wait_released_caps_the_lead(stages, back):
    """The producer never runs more than `back` items ahead of the consumer's releases: while item i
    is being consumed at most items 0 .. i + back - 1 have been loaded; the executor runs the producer
    as far as its waits let it, so the cap is reached."""
    items = 11
    out = np.full(2 * items, 0xDEADBEEF, np.uint32)
    run_kernel(pipeline_module(stages, back=back), "ring_pipe", grid=(1,), block=(64,),
               args=[Buffer(out), np.uint32(items)])
    values, seen = out[0::2].tolist(), out[1::2].tolist()
    assert values == [3 * i + 7 for i in range(items)]
    ahead = [c - i for i, c in enumerate(seen)]
    assert all(1 <= a <= back for a in ahead), ahead
    assert max(ahead) == back, ahead


def test_wait_released_text():
    m = pg.Module("sm_90a")
    k = m.entry("k")
    ring = k.stage_ring(4)
    n = len(k.fn.body)
    ring.wait_released(64, 3)
    body = texts(k, n)
    assert body[:4] == ["setp.ge.u32 %p0, %stage, 3;", "sub.u32 %r0, %stage, 3;", "add.u32 %r1, %stage, 1;",
                        "selp.u32 %r2, %r0, %r1, %p0;"]
    assert any(t.startswith("mbarrier.try_wait.parity.shared.b64") for t in body)
    n = len(k.fn.body)
    ring.wait_released(64, 4)                     # the whole ring: wait(flip=True)
    assert texts(k, n)[:2] == ["mad.lo.u32 %r6, %stage, 8, 64;", "xor.b32 %r7, %stage_phase, 1;"]
    for bad in (0, 5, True, 2.0):
        raises("PTX-E-BUILD", f"StageRing.wait_released: back must be an int from 1 to 4 (the ring's stages), "
               f"not {bad!r}", here(), lambda: ring.wait_released(64, bad))


@pytest.mark.parametrize("timeout_cycles", [None, 1 << 40])
def test_pipeline_lints_clean(timeout_cycles, tmp_path, capsys):
    m = pipeline_module(3, timeout_cycles=timeout_cycles)
    text = m.emit().text
    assert [str(d) for d in L.lint_ptx(text, "ring_pipe.ptx")] == []
    assert [str(d) for d in L.lint_module(m)] == []
    path = tmp_path / "ring_pipe.ptx"
    path.write_text(text)
    assert cli_main(["lint", "--werror", str(path)]) == 0
    capsys.readouterr()


@pytest.mark.parametrize("stages,items", [(3, 8), (2, 2), (1, 4), (4, 3)])
def test_pipeline_runs_on_the_executor(stages, items):
    out = np.full(items, 0xDEADBEEF, np.uint32)
    run_kernel(pipeline_module(stages), "ring_pipe", grid=(1,), block=(64,), args=[Buffer(out), np.uint32(items)])
    assert out.tolist() == [3 * i + 7 for i in range(items)]


def test_producer_without_flip_waits_forever():
    # a fresh barrier has completed no phase of parity 0: the producer's first wait must use phase ^ 1
    out = np.zeros(2, np.uint32)
    with pytest.raises(DeadlockError):
        run_kernel(pipeline_module(2, producer_flip=False), "ring_pipe", grid=(1,), block=(64,),
                   args=[Buffer(out), np.uint32(2)])


@pytest.mark.ptxas
@pytest.mark.parametrize("timeout_cycles", [None, 1 << 40])
@pytest.mark.parametrize("back", [None, 2])
def test_pipeline_assembles_for_sm_90a(timeout_cycles, back):
    from ptxgen.ptxas import assemble
    m = pipeline_module(4, timeout_cycles=timeout_cycles, back=back)
    assert [str(d) for d in L.lint_ptx(m.emit().text, "ring_pipe.ptx")] == []
    res = assemble(m.emit(), "sm_90a", cache=False)
    assert res.cubin and not res.warnings


# ----------------------------------------------------------------------------------------------- errors
def test_bad_arguments_raise_at_the_call():
    m = pg.Module("sm_90a")
    k = m.entry("k")
    for bad in (0, -1, True, False, 2.0, "3", None, 1 << 32):
        msg = (f"stage_ring: stages must fit in .u32 (at most 4294967295), not {bad}" if bad == 1 << 32 else
               f"stage_ring: stages must be an int >= 1, not {bad!r}")
        raises("PTX-E-BUILD", msg, here() + 1,
               lambda: k.stage_ring(bad))
    raises("PTX-E-BUILD", "stage_ring: name must be a str, not int", here() + 1,
           lambda: k.stage_ring(2, name=3))
    raises("PTX-E-BUILD", "register name 'bad name' is not a PTX identifier", here() + 1,
           lambda: k.stage_ring(2, name="bad name"))
    assert k.fn.body == []  # nothing was emitted by the refused calls

    ring = k.stage_ring(2)
    n = len(k.fn.body)
    wide = k.reg(pg.u64, "wide")
    raises("PTX-E-TYPE", "StageRing: base %wide is a .u64 register; .u32 expected", here() + 1,
           lambda: ring.addr(wide, 16))
    raises("PTX-E-TYPE", "StageRing: stride must be a .u32 register or an int from 0 to 4294967295, not 2.5",
           here(), lambda: ring.addr(0, 2.5))
    raises("PTX-E-TYPE", "StageRing: base must be a .u32 register or an int from 0 to 4294967295, not -8",
           here(), lambda: ring.wait(-8))
    raises("PTX-E-BUILD", "StageRing.wait: flip must be True or False, not 1", here() + 1,
           lambda: ring.wait(0, flip=1))
    raises("PTX-E-BUILD", "timeout_cycles must be a positive int or None, not 0", here() + 1,
           lambda: ring.wait(0, timeout_cycles=0))
    assert len(k.fn.body) == n  # refused before anything was emitted
