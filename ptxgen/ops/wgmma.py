"""Warpgroup tensor-core instructions: wgmma.mma_async, wgmma.mma_async.sp, wgmma.fence/commit_group/wait_group."""
from __future__ import annotations

from typing import Optional, Union

from .. import legality
from ..errors import LegalityError
from ..ir import Guard, Imm, Reg, RegArray
from ..types import b32, b64, u32, u64
from .checked import CheckedOps, _type_name, shape_token

__all__ = ["WgmmaOps", "wgmma_opcode"]


def wgmma_opcode(shape, *, dtype="f32", atype="f16", btype=None, satfinite: bool = False,
                 sparse: bool = False) -> str:
    """`wgmma.mma_async{.sp}.sync.aligned.shape{.satfinite}.dtype.atype.btype{.and.popc}` (`sparse`: `.sp`)."""
    at = _type_name(atype)
    bt = _type_name(btype) if btype is not None else at
    dt = _type_name(dtype)
    op = (f"wgmma.mma_async{'.sp' if sparse else ''}.sync.aligned{shape_token(shape)}"
          f"{'.satfinite' if satfinite else ''}.{dt}.{at}.{bt}")
    if at == "b1":
        op += ".and.popc"
    return op


class WgmmaOps(CheckedOps):
    """Mixin of FunctionBuilder: wgmma.*"""

    def wgmma_mma_async(self, shape, d, a, b_desc, *, dtype="f32", atype="f16", btype=None,
                        satfinite: bool = False, scale_d: Union[int, bool, Reg, Guard] = 1,
                        imm_scale_a: Optional[int] = None, imm_scale_b: Optional[int] = None,
                        trans_a: Optional[int] = None, trans_b: Optional[int] = None, guard=None) -> RegArray:
        """`wgmma.mma_async.sync.aligned.shape.dtype.atype.btype {d}, a-desc|{a}, b-desc, scale-d, ...;`

        `a` is a 64-bit shared-memory descriptor register or the 4 registers of an A fragment. `scale_d`
        is a predicate (D = A*B + D when true, A*B when false) or 0/1. imm_scale_a/b (-1 or 1) exist for
        the floating-point types, trans_a/trans_b (0 or 1) for .f16/.bf16 only (trans_a with a descriptor
        A only); left as None they are emitted as 1 (scales) and 0 (transposes) where the form has them.
        `d=None` allocates the accumulator.
        """
        op = wgmma_opcode(shape, dtype=dtype, atype=atype, btype=btype, satfinite=satfinite)
        self._check_opcode(op)
        return self._wgmma_emit(op, d, a, b_desc, (), scale_d,
                                {"imm-scale-a": imm_scale_a, "imm-scale-b": imm_scale_b, "imm-trans-a": trans_a,
                                 "imm-trans-b": trans_b}, guard)

    def wgmma_mma_async_sp(self, shape, d, a, b_desc, meta, selector: int = 0, *, dtype="f32", atype="f16",
                           btype=None, satfinite: bool = False, scale_d: Union[int, bool, Reg, Guard] = 1,
                           imm_scale_a: Optional[int] = None, imm_scale_b: Optional[int] = None,
                           trans_a: Optional[int] = None, trans_b: Optional[int] = None, guard=None) -> RegArray:
        """`wgmma.mma_async.sp.sync.aligned.shape.dtype.atype.btype {d}, a-desc|{a}, b-desc, sp-meta, sp-sel,
        scale-d, ...;`

        The sparse form (PTX ISA 8.2, 8.4 with mixed .s8/.u8 signedness; sm_90a): A holds two of every four
        elements along K, so K is twice the dense form's (k32 for .f16/.bf16, k16 for .tf32, k64 for .e4m3/.e5m2
        and .s8/.u8; no .b1 form) and `a` is a descriptor or the same 4 registers as the dense form's A.
        `meta` is the sparsity metadata (a 32-bit register: which two of each four), `selector` the sparsity
        selector (an int: 0 or 1 for .f16/.bf16/.tf32, 0 for the others). The other operands are
        wgmma_mma_async's. `d=None` allocates the accumulator.
        """
        op = wgmma_opcode(shape, dtype=dtype, atype=atype, btype=btype, satfinite=satfinite, sparse=True)
        self._check_opcode(op)
        sparse = (self._reg_or_imm(meta, b32, "wgmma.mma_async.sp metadata sp-meta"),
                  self._imm_only(selector, "wgmma.mma_async.sp sparsity selector sp-sel"))
        return self._wgmma_emit(op, d, a, b_desc, sparse, scale_d,
                                {"imm-scale-a": imm_scale_a, "imm-scale-b": imm_scale_b, "imm-trans-a": trans_a,
                                 "imm-trans-b": trans_b}, guard)

    def _wgmma_emit(self, op: str, d, a, b_desc, sparse: tuple, scale_d, given: dict, guard) -> RegArray:
        """Emit a legal wgmma.mma_async{.sp} opcode: the operand list of A from a descriptor or from registers,
        the immediates the form has (given ones, else 1 for the scales and 0 for the transposes)."""
        from ..builder import _err
        reg_a = not isinstance(a, (Reg, Imm))
        sigs = legality.signatures(op)
        sig = sigs[1] if reg_a else sigs[0]
        if d is None:
            d = self.fragment(op, "d")
        have = {s.name for s in sig.slots}
        for slot_name, value in given.items():
            if value is not None and slot_name not in have:
                title = legality.FORMS[legality.parse(op).rule].title
                raise _err(f"{title} ({sig.name}) takes no {slot_name} operand; its operands are "
                           + ", ".join(s.name for s in sig.slots), legality.CODE_OPERANDS, cls=LegalityError)
        ops = [self._vec_operand(d, "D"), self._vec_operand(a, "A") if reg_a else a, b_desc, *sparse,
               scale_d if isinstance(scale_d, (Reg, Guard)) else self._imm_only(scale_d, "scale_d")]
        defaults = {"imm-scale-a": 1, "imm-scale-b": 1, "imm-trans-a": 0, "imm-trans-b": 0}
        for s in sig.slots[len(ops):]:
            v = given[s.name]
            ops.append(self._imm_only(defaults[s.name] if v is None else v, s.name))
        self._legal_emit(op, tuple(ops), guard)
        return d if isinstance(d, RegArray) else RegArray(d)

    def wgmma_descriptor(self, addr, tile) -> Reg:
        """The 64-bit shared-memory descriptor of `tile` starting at shared address `addr` (a .u32
        register): ((addr >> 4) & 0x3FFF) OR the tile's other fields. `tile` is a
        ptxgen.ops.wgmma_desc.SmemTile or the int its fixed_bits() gives."""
        from ..builder import _err
        fixed = tile if isinstance(tile, int) and not isinstance(tile, bool) else getattr(tile, "fixed_bits", None)
        if callable(fixed):
            fixed = fixed()
        if not isinstance(fixed, int) or not 0 <= fixed < 1 << 64:
            raise _err(f"wgmma_descriptor needs an SmemTile or its 64-bit fixed_bits(), not {tile!r}")
        field = self.cvt(self.and_(self.shr(addr, 4), 0x3FFF), u64, u32)
        return self.or_(field, fixed, type=b64)

    def wgmma_fragment(self, operand: str, shape, *, dtype="f32", atype="f16", btype=None,
                       satfinite: bool = False, sparse: bool = False, name: Optional[str] = None) -> RegArray:
        """Registers for the accumulator 'd' (N/2 .f32/.s32 or N/4 .f16x2) or a register A fragment 'a' (4), of
        wgmma.mma_async or (`sparse`) wgmma.mma_async.sp."""
        op = wgmma_opcode(shape, dtype=dtype, atype=atype, btype=btype, satfinite=satfinite, sparse=sparse)
        return self.fragment(op, operand, name=name)

    def wgmma_fence(self, *, guard=None) -> None:
        """`wgmma.fence.sync.aligned;` orders register accesses before the next wgmma.mma_async."""
        self._legal_emit("wgmma.fence.sync.aligned", (), guard)

    def wgmma_commit_group(self, *, guard=None) -> None:
        """`wgmma.commit_group.sync.aligned;`"""
        self._legal_emit("wgmma.commit_group.sync.aligned", (), guard)

    def wgmma_wait_group(self, n: int = 0, *, guard=None) -> None:
        """`wgmma.wait_group.sync.aligned N;` waits until at most N wgmma groups are pending."""
        self._legal_emit("wgmma.wait_group.sync.aligned", (self._imm_only(n, "wgmma.wait_group N"),), guard)
