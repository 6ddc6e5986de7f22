"""mbarrier: init, arrive (with count / expect_tx / drop), expect_tx, test_wait / try_wait, inval; and the
stage ring of pipelined kernels (an index and the phase bit that mbarrier parity waits use)."""
from __future__ import annotations

from typing import Optional

from .. import legality
from ..errors import LegalityError
from ..ir import Reg
from ..types import b64, compatible, pred, u32
from .checked import CheckedOps
from .operands import SINK

__all__ = ["MbarrierOps", "StageRing"]

_LOCAL = ("shared", "shared::cta", None)
_ANY = ("shared", "shared::cta", "shared::cluster", None)


class MbarrierOps(CheckedOps):
    """Mixin of FunctionBuilder: mbarrier.*"""

    def _sem_scope(self, sem: Optional[str], scope: Optional[str], what: str) -> str:
        from ..builder import _err
        if (sem is None) != (scope is None):
            raise _err(f"{what}: a memory semantic and a scope go together (e.g. sem='release', scope='cta')",
                       legality.CODE_MODIFIER, cls=LegalityError)
        return "" if sem is None else f".{sem}.{scope}"

    def mbarrier_init(self, addr, count, *, space: str = "shared", guard=None) -> None:
        """`mbarrier.init.shared.b64 [addr], count;`"""
        sp = self._space_suffix(space, _LOCAL, "mbarrier.init")
        self._legal_emit(f"mbarrier.init{sp}.b64", (self._address_operand(addr, "mbarrier"),
                                                   self._reg_or_imm(count, u32, "count")), guard)

    def mbarrier_inval(self, addr, *, space: str = "shared", guard=None) -> None:
        """`mbarrier.inval.shared.b64 [addr];`"""
        sp = self._space_suffix(space, _LOCAL, "mbarrier.inval")
        self._legal_emit(f"mbarrier.inval{sp}.b64", (self._address_operand(addr, "mbarrier"),), guard)

    def mbarrier_arrive(self, addr, count=None, *, sem: Optional[str] = None, scope: Optional[str] = None,
                        space: str = "shared", drop: bool = False, no_complete: bool = False, dst=None,
                        guard=None) -> Optional[Reg]:
        """`mbarrier.arrive{.sem.scope}.shared.b64 state, [addr]{, count};` returns the .b64 state.

        On `space='shared::cluster'` (a barrier of another CTA) the state is the sink `_` and None is
        returned. drop=True is `mbarrier.arrive_drop`; no_complete=True the `.noComplete` form (count needed).
        """
        base = "arrive_drop" if drop else "arrive"
        mid = ".noComplete" if no_complete else ""
        return self._arrive(f"mbarrier.{base}{mid}", addr, count, "count", sem, scope, space, dst, guard)

    def mbarrier_arrive_drop(self, addr, count=None, *, sem: Optional[str] = None, scope: Optional[str] = None,
                             space: str = "shared", dst=None, guard=None) -> Optional[Reg]:
        """`mbarrier.arrive_drop{.sem.scope}.shared.b64 state, [addr]{, count};`"""
        return self._arrive("mbarrier.arrive_drop", addr, count, "count", sem, scope, space, dst, guard)

    def mbarrier_arrive_expect_tx(self, addr, tx_count, *, sem: Optional[str] = None,
                                  scope: Optional[str] = None, space: str = "shared", drop: bool = False,
                                  dst=None, guard=None) -> Optional[Reg]:
        """`mbarrier.arrive.expect_tx{.sem.scope}.shared.b64 state, [addr], txCount;`"""
        base = "mbarrier.arrive_drop.expect_tx" if drop else "mbarrier.arrive.expect_tx"
        return self._arrive(base, addr, tx_count, "tx_count", sem, scope, space, dst, guard)

    def _arrive(self, base, addr, count, what, sem, scope, space, dst, guard):
        from ..builder import _err
        sp = self._space_suffix(space, _ANY, base)
        op = f"{base}{self._sem_scope(sem, scope, base)}{sp}.b64"
        self._check_opcode(op)
        remote = space == "shared::cluster"
        if remote and dst is not None:
            raise _err(f"{op} returns no state (it is `_` for a barrier in another CTA)", legality.CODE_OPERANDS,
                       cls=LegalityError)
        state = SINK if remote else (self.reg(b64) if dst is None else dst)
        ops = [state, self._address_operand(addr, "mbarrier")]
        if count is not None:
            ops.append(self._reg_or_imm(count, u32, what))
        self._legal_emit(op, tuple(ops), guard)
        return None if remote else state

    def mbarrier_expect_tx(self, addr, tx_count, *, sem: Optional[str] = None, scope: Optional[str] = None,
                           space: str = "shared", guard=None) -> None:
        """`mbarrier.expect_tx{.relaxed.scope}.shared.b64 [addr], txCount;`"""
        self._tx("mbarrier.expect_tx", addr, tx_count, sem, scope, space, guard)

    def mbarrier_complete_tx(self, addr, tx_count, *, sem: Optional[str] = None, scope: Optional[str] = None,
                             space: str = "shared", guard=None) -> None:
        """`mbarrier.complete_tx{.relaxed.scope}.shared.b64 [addr], txCount;`"""
        self._tx("mbarrier.complete_tx", addr, tx_count, sem, scope, space, guard)

    def _tx(self, base, addr, tx_count, sem, scope, space, guard):
        sp = self._space_suffix(space, _ANY, base)
        op = f"{base}{self._sem_scope(sem, scope, base)}{sp}.b64"
        self._legal_emit(op, (self._address_operand(addr, "mbarrier"), self._reg_or_imm(tx_count, u32, "tx_count")),
                         guard)

    def mbarrier_test_wait(self, addr, state=None, *, parity=None, sem: Optional[str] = None,
                           scope: Optional[str] = None, space: str = "shared", dst=None, guard=None) -> Reg:
        """`mbarrier.test_wait{.parity}{.sem.scope}.shared.b64 p, [addr], state|parity;` returns p."""
        return self._wait("mbarrier.test_wait", addr, state, parity, None, sem, scope, space, dst, guard)

    def mbarrier_try_wait(self, addr, state=None, *, parity=None, suspend_hint=None, sem: Optional[str] = None,
                          scope: Optional[str] = None, space: str = "shared", dst=None, guard=None) -> Reg:
        """`mbarrier.try_wait{.parity}{.sem.scope}.shared.b64 p, [addr], state|parity{, suspendTimeHint};`

        Give either the .b64 `state` of an earlier arrive or the phase `parity` (0/1 or a register);
        suspend_hint is the time limit in nanoseconds. Returns the predicate p.
        """
        return self._wait("mbarrier.try_wait", addr, state, parity, suspend_hint, sem, scope, space, dst, guard)

    def _wait(self, base, addr, state, parity, hint, sem, scope, space, dst, guard):
        from ..builder import _err
        if (state is None) == (parity is None):
            raise _err(f"{base}: give exactly one of state= (from mbarrier_arrive) and parity=",
                       legality.CODE_OPERANDS, cls=LegalityError)
        sp = self._space_suffix(space, _LOCAL, base)
        op = f"{base}{'.parity' if parity is not None else ''}{self._sem_scope(sem, scope, base)}{sp}.b64"
        self._check_opcode(op)
        p = self.reg(pred) if dst is None else dst
        third = state if state is not None else self._reg_or_imm(parity, u32, "parity")
        ops = [p, self._address_operand(addr, "mbarrier"), third]
        if hint is not None:
            ops.append(self._reg_or_imm(hint, u32, "suspend_hint"))
        self._legal_emit(op, tuple(ops), guard)
        return p

    def mbarrier_wait(self, addr, *, parity, timeout_cycles: Optional[int] = None, space: str = "shared",
                      sem: Optional[str] = None, scope: Optional[str] = None) -> None:
        """Wait until the phase of the barrier at `addr` with parity `parity` has completed: a loop around
        `mbarrier.try_wait.parity` (sm_90 and later; `mbarrier.test_wait.parity` on sm_80-sm_89, which
        have no try_wait). With `timeout_cycles` the loop traps once that many %clock64 cycles have
        passed, so a wait that can never complete ends the launch with an error instead of a hang.
        sem and scope go together (e.g. sem="acquire", scope="cluster": the waiting thread sees the writes
        that other CTAs of the cluster released with their arrivals); without them the wait acquires at
        CTA scope, the instruction's default."""
        _check_timeout(timeout_cycles)
        self._sem_scope(sem, scope, "mbarrier_wait")
        t0 = self.sreg("%clock64") if timeout_cycles is not None else None
        top = self.label("mbar_wait")
        if self.target.satisfies("sm_90"):
            done = self.mbarrier_try_wait(addr, parity=parity, space=space, sem=sem, scope=scope)
        else:
            done = self.mbarrier_test_wait(addr, parity=parity, space=space, sem=sem, scope=scope)
        if t0 is None:
            self.bra(top, guard=~done)
            return
        ok = self.new_label("mbar_done")
        self.bra(ok, guard=done)
        self.trap(guard=self.setp("gt", self.sub(self.sreg("%clock64"), t0), timeout_cycles))
        self.bra(top)
        self.place(ok)

    def stage_ring(self, stages: int, *, name: str = "stage") -> "StageRing":
        """`mov.u32 %stage, 0; mov.u32 %stage_phase, 0;` starts a StageRing of `stages` stages here.

        The ring of a pipelined kernel: `index` names the stage in use and `phase` is the parity of its
        mbarriers' current phase; both u32 registers (`%name`, `%name_phase`), initialised to 0 at this point.
        """
        from ..builder import _err
        if isinstance(stages, bool) or not isinstance(stages, int) or stages < 1:
            raise _err(f"stage_ring: stages must be an int >= 1, not {stages!r}")
        if stages > 0xFFFFFFFF:
            raise _err(f"stage_ring: stages must fit in .u32 (at most 4294967295), not {stages}")
        if not isinstance(name, str):
            raise _err(f"stage_ring: name must be a str, not {type(name).__name__}")
        index = self.reg(u32, name)
        phase = self.reg(u32, f"{name}_phase")
        self.mov(0, dst=index)
        self.mov(0, dst=phase)
        return StageRing(self, stages, index, phase)

    def mbarrier_pending_count(self, state: Reg, *, dst=None, guard=None) -> Reg:
        """`mbarrier.pending_count.b64 count, state;`"""
        d = self.reg(u32) if dst is None else dst
        self._legal_emit("mbarrier.pending_count.b64", (d, state), guard)
        return d


def _check_timeout(timeout_cycles) -> None:
    from ..builder import _err
    if timeout_cycles is not None and (isinstance(timeout_cycles, bool) or not isinstance(timeout_cycles, int)
                                       or timeout_cycles <= 0):
        raise _err(f"timeout_cycles must be a positive int or None, not {timeout_cycles!r}")


class StageRing:
    """A ring of `stages` shared-memory stages, made by `k.stage_ring(stages)`.

    `index` (u32) is the stage in use, 0..stages-1; `phase` (u32) flips between 0 and 1 each time `index`
    wraps to 0, so it is the parity of the phase a stage's mbarrier completes next. The consumer waits on
    a stage's "full" barrier with parity `phase`; the producer waits on its "empty" barrier with parity
    `phase ^ 1` (flip=True), which a fresh barrier satisfies at once, so the first pass over the ring
    does not wait. The methods emit into the builder that made the ring, at its current point.
    """

    __slots__ = ("builder", "stages", "index", "phase")

    def __init__(self, builder, stages: int, index: Reg, phase: Reg):
        self.builder = builder
        self.stages = stages
        self.index = index
        self.phase = phase

    def __repr__(self) -> str:
        return f"StageRing(stages={self.stages}, index={self.index.name}, phase={self.phase.name})"

    def advance(self) -> None:
        """`add.u32 i, i, 1; setp.eq.u32 p, i, S; @p mov.u32 i, 0; @p xor.b32 ph, ph, 1;` next stage."""
        k, i, ph = self.builder, self.index, self.phase
        k.add(i, 1, dst=i)
        wrap = k.setp("eq", i, self.stages)
        k.mov(0, dst=i, guard=wrap)
        k.xor(ph, 1, dst=ph, guard=wrap)

    def addr(self, base, stride) -> Reg:
        """`mad.lo.u32 d, index, stride, base;` returns d = base + index * stride (a stage's address).

        `base` and `stride` are u32 registers or ints (`base` typically a shared-memory address).
        """
        k = self.builder
        self._u32(base, "base")
        self._u32(stride, "stride")
        return k.mad(self.index, stride, base, mode="lo")

    def wait(self, bars, *, flip: bool = False, timeout_cycles: Optional[int] = None) -> Reg:
        """`mad.lo.u32 a, index, 8, bars;` then `mbarrier_wait` on [a] with parity `phase` (flip=True:
        `xor.b32 q, phase, 1;` and parity q). Returns a, the address of the stage's barrier.

        `bars` is the address of the ring's block of `stages` 8-byte mbarriers (one per stage); flip=True is
        the producer's wait for an empty slot. timeout_cycles is passed on to `mbarrier_wait`.
        """
        from ..builder import _err
        if not isinstance(flip, bool):
            raise _err(f"StageRing.wait: flip must be True or False, not {flip!r}")
        _check_timeout(timeout_cycles)
        a = self.addr(bars, 8)
        k = self.builder
        parity = k.xor(self.phase, 1) if flip else self.phase
        k.mbarrier_wait(a, parity=parity, timeout_cycles=timeout_cycles)
        return a

    def wait_released(self, bars, back: int, *, timeout_cycles: Optional[int] = None) -> Reg:
        """Producer side: wait until the stage use `back` positions before the current one (1 <= back <=
        stages) has been released, i.e. its "empty" barrier has completed that use's phase. Returns the
        address of the barrier waited on.

        back == stages is `wait(bars, flip=True)` (the slot about to be refilled); a smaller back keeps at
        most `back` stages loaded ahead of the consumer however many the ring has: the stage is
        (index - back) mod stages, and the parity `phase ^ 1` when that wraps below 0 (the use was in
        the ring's previous round), else `phase`; uses before the first (index < back in round 0) wait
        on parity 1, which a fresh barrier satisfies at once.
        """
        from ..builder import _err
        if isinstance(back, bool) or not isinstance(back, int) or not 1 <= back <= self.stages:
            raise _err(f"StageRing.wait_released: back must be an int from 1 to {self.stages} (the ring's "
                       f"stages), not {back!r}")
        _check_timeout(timeout_cycles)
        self._u32(bars, "bars")
        k = self.builder
        if back == self.stages:
            return self.wait(bars, flip=True, timeout_cycles=timeout_cycles)
        same = k.setp("ge", self.index, back)                 # the use was in this round of the ring
        stage = k.selp(k.sub(self.index, back), k.add(self.index, self.stages - back), same, type=u32)
        a = k.mad(stage, 8, bars, mode="lo")
        parity = k.selp(self.phase, k.xor(self.phase, 1), same, type=u32)
        k.mbarrier_wait(a, parity=parity, timeout_cycles=timeout_cycles)
        return a

    @staticmethod
    def _u32(x, what: str) -> None:
        """Refuse what cannot be a u32 operand here, naming the ring's argument rather than mad's slot."""
        from ..builder import _err
        if isinstance(x, Reg):
            if not compatible(x.type, u32):
                raise _err(f"StageRing: {what} {x.name} is a .{x.type.name} register; .u32 expected", "PTX-E-TYPE",
                           ("a shared-memory address is 32 bits: mov.u32 from a .shared variable, or "
                            "cvt.u32.u64 of a 64-bit one",) if what == "base" else ())
            return
        if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x <= 0xFFFFFFFF:
            raise _err(f"StageRing: {what} must be a .u32 register or an int from 0 to 4294967295, not {x!r}",
                       "PTX-E-TYPE")
