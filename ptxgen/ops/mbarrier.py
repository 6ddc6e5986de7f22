"""mbarrier: init, arrive (with count / expect_tx / drop), expect_tx, test_wait / try_wait, inval."""
from __future__ import annotations

from typing import Optional

from .. import legality
from ..errors import LegalityError
from ..ir import Reg
from ..types import b64, pred, u32
from .checked import CheckedOps
from .operands import SINK

__all__ = ["MbarrierOps"]

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

    def mbarrier_wait(self, addr, *, parity, timeout_cycles: Optional[int] = None, space: str = "shared") -> None:
        """Wait until the phase of the barrier at `addr` with parity `parity` has completed: a loop around
        `mbarrier.try_wait.parity`. With `timeout_cycles` the loop traps once that many %clock64 cycles
        have passed, so a wait that can never complete ends the launch with an error instead of a hang."""
        from ..builder import _err
        if timeout_cycles is not None and (isinstance(timeout_cycles, bool) or not isinstance(timeout_cycles, int)
                                           or timeout_cycles <= 0):
            raise _err(f"timeout_cycles must be a positive int or None, not {timeout_cycles!r}")
        t0 = self.sreg("%clock64") if timeout_cycles is not None else None
        top = self.label("mbar_wait")
        done = self.mbarrier_try_wait(addr, parity=parity, space=space)
        if t0 is None:
            self.bra(top, guard=~done)
            return
        ok = self.new_label("mbar_done")
        self.bra(ok, guard=done)
        self.trap(guard=self.setp("gt", self.sub(self.sreg("%clock64"), t0), timeout_cycles))
        self.bra(top)
        self.place(ok)

    def mbarrier_pending_count(self, state: Reg, *, dst=None, guard=None) -> Reg:
        """`mbarrier.pending_count.b64 count, state;`"""
        d = self.reg(u32) if dst is None else dst
        self._legal_emit("mbarrier.pending_count.b64", (d, state), guard)
        return d
