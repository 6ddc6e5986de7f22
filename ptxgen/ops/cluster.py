"""Proxy fences, cluster barriers and addressing, register reallocation, elect, grid dependency control."""
from __future__ import annotations

from typing import Optional

from .. import legality
from ..errors import LegalityError
from ..ir import Param, Reg, Var
from ..types import pred, u32, u64
from .checked import CheckedOps
from .operands import SINK, Pair

__all__ = ["ClusterOps"]


class ClusterOps(CheckedOps):
    """Mixin of FunctionBuilder: fence.proxy.*, fence.mbarrier_init, barrier.cluster.*, mapa, getctarank,
    st.async, red.async, setmaxnreg, elect.sync, griddepcontrol."""

    def fence_proxy_async(self, space: Optional[str] = None, *, guard=None) -> None:
        """`fence.proxy.async{.global|.shared::cta|.shared::cluster};` orders generic-proxy accesses with
        async-proxy ones (TMA, wgmma operands in shared memory)."""
        sp = self._space_suffix(space, (None, "global", "shared::cta", "shared::cluster"), "fence.proxy.async")
        self._legal_emit(f"fence.proxy.async{sp}", (), guard)

    def fence_mbarrier_init(self, *, guard=None) -> None:
        """`fence.mbarrier_init.release.cluster;` makes mbarrier.init visible to the cluster."""
        self._legal_emit("fence.mbarrier_init.release.cluster", (), guard)

    def fence_proxy_tensormap(self, sem: str, scope: str = "gpu", addr=None, *, guard=None) -> None:
        """`fence.proxy.tensormap::generic.release.scope;` / `...acquire.scope [addr], 128;`"""
        op = f"fence.proxy.tensormap::generic.{sem}.{scope}"
        ops = () if addr is None else (self._address_operand(addr, "tensor map"), self._imm_only(128, "size"))
        self._legal_emit(op, ops, guard)

    def barrier_cluster_arrive(self, *, sem: Optional[str] = None, aligned: bool = True, guard=None) -> None:
        """`barrier.cluster.arrive{.release|.relaxed}{.aligned};`"""
        op = "barrier.cluster.arrive" + ("" if sem is None else "." + sem) + (".aligned" if aligned else "")
        self._legal_emit(op, (), guard)

    def barrier_cluster_wait(self, *, acquire: bool = False, aligned: bool = True, guard=None) -> None:
        """`barrier.cluster.wait{.acquire}{.aligned};`"""
        op = "barrier.cluster.wait" + (".acquire" if acquire else "") + (".aligned" if aligned else "")
        self._legal_emit(op, (), guard)

    def _cluster_addr(self, a, type):
        if isinstance(a, (Var, Param)):
            a = a.sym
        if type is not None:
            ty = self._type(type)
        elif isinstance(a, Reg):
            ty = a.type
        else:
            ty = u64 if self.module.ir.address_size == 64 else u32
        return a, ty

    def mapa(self, addr, rank, *, space: Optional[str] = None, type=None, dst=None, guard=None) -> Reg:
        """`mapa{.shared::cluster}.T d, a, rank;` the address of `addr`'s counterpart in CTA `rank`."""
        a, ty = self._cluster_addr(addr, type)
        sp = self._space_suffix(space, (None, "shared::cluster"), "mapa")
        d = self.reg(ty) if dst is None else dst
        self._legal_emit(f"mapa{sp}.{ty.name}", (d, a, self._reg_or_imm(rank, u32, "rank")), guard)
        return d

    def getctarank(self, addr, *, space: Optional[str] = None, type=None, dst=None, guard=None) -> Reg:
        """`getctarank{.shared::cluster}.T d, a;` the rank of the CTA whose shared memory holds `addr`."""
        a, ty = self._cluster_addr(addr, type)
        sp = self._space_suffix(space, (None, "shared::cluster"), "getctarank")
        d = self.reg(u32) if dst is None else dst
        self._legal_emit(f"getctarank{sp}.{ty.name}", (d, a), guard)
        return d

    def st_async(self, addr, value, mbar, type, *, weak: bool = False, space: Optional[str] = "shared::cluster",
                 guard=None) -> None:
        """`st.async{.weak}.shared::cluster.mbarrier::complete_tx::bytes{.v2|.v4}.T [addr], value, [mbar];`

        Stores `value` (a register or immediate, or a list of 2 or 4 registers: .v2/.v4) into the shared
        memory of a CTA of the cluster (`addr` from mapa) and completes its size in bytes as a transaction
        on that CTA's mbarrier `mbar` (same CTA as addr); the receiver waits on it after
        mbarrier.expect_tx of the bytes it expects. T: .b32/.u32/.s32/.f32 (.v4 too) or their 64-bit forms.
        space=None leaves out `.shared::cluster` (addresses are then generic)."""
        ty = self._type(type)
        sp = self._space_suffix(space, (None, "shared::cluster"), "st.async")
        vals = list(value) if isinstance(value, (list, tuple)) else None
        vec = "" if vals is None else f".v{len(vals)}"
        op = f"st.async{'.weak' if weak else ''}{sp}.mbarrier::complete_tx::bytes{vec}.{ty.name}"
        b = self._src(value, ty, "st.async value") if vals is None else self._vec_operand(vals, "st.async value")
        self._legal_emit(op, (self._address_operand(addr, "destination"), b,
                              self._address_operand(mbar, "mbarrier")), guard)

    def red_async(self, op: str, addr, value, mbar, type, *, space: Optional[str] = "shared::cluster",
                  guard=None) -> None:
        """`red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.op.T [addr], value, [mbar];`

        Applies `op` (add: .u32/.s32/.u64/.s64; inc, dec: .u32; min, max: .u32/.s32; and, or, xor: .b32)
        to the shared memory of a CTA of the cluster and completes its size in bytes on that CTA's mbarrier
        `mbar`, as st_async does."""
        ty = self._type(type)
        sp = self._space_suffix(space, (None, "shared::cluster"), "red.async")
        opc = f"red.async.relaxed.cluster{sp}.mbarrier::complete_tx::bytes.{op}.{ty.name}"
        self._legal_emit(opc, (self._address_operand(addr, "destination"), self._src(value, ty, "red.async value"),
                               self._address_operand(mbar, "mbarrier")), guard)

    def setmaxnreg(self, action: str, count: int, *, guard=None) -> None:
        """`setmaxnreg.{inc,dec}.sync.aligned.u32 count;` (count: a multiple of 8 from 24 to 256)."""
        from ..builder import _err
        if action not in ("inc", "dec"):
            raise _err(f"setmaxnreg action must be 'inc' or 'dec', not {action!r}", legality.CODE_MODIFIER,
                       cls=LegalityError)
        self._legal_emit(f"setmaxnreg.{action}.sync.aligned.u32", (self._imm_only(count, "register count"),), guard)

    def elect_sync(self, membermask=0xFFFFFFFF, *, lane: bool = False, guard=None):
        """`elect.sync d|p, membermask;` returns p (true in one elected lane), or (d, p) with lane=True."""
        p = self.reg(pred)
        d = self.reg(u32) if lane else SINK
        self._legal_emit("elect.sync", (Pair(d, p), self._reg_or_imm(membermask, u32, "membermask")), guard)
        return (d, p) if lane else p

    def griddepcontrol(self, action: str, *, guard=None) -> None:
        """`griddepcontrol.launch_dependents;` / `griddepcontrol.wait;` (programmatic dependent launch)."""
        self._legal_emit(f"griddepcontrol.{action}", (), guard)
