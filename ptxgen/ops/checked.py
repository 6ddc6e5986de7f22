"""The path every tensor-core/async builder method takes: legality.check (the linter's code path), then
register ownership and types through the builder's _src/_dst, then emission."""
from __future__ import annotations

from typing import Iterable, Optional, Sequence

from .. import legality
from ..errors import LegalityError
from ..ir import Addr, Guard, Imm, Instr, Reg, RegArray, Vec
from ..types import Type, compatible, get_type
from .operands import Pair, TensorRef, operand_infos

__all__ = ["CheckedOps", "shape_token"]


def shape_token(shape) -> str:
    """'m16n8k16', '.m16n8k16' or (16, 8, 16) -> '.m16n8k16'."""
    if isinstance(shape, (tuple, list)) and len(shape) == 3 and all(isinstance(x, int) for x in shape):
        return f".m{shape[0]}n{shape[1]}k{shape[2]}"
    if isinstance(shape, str):
        return shape if shape.startswith(".") else "." + shape
    from ..builder import _err
    raise _err(f"shape must be like 'm16n8k16' or (16, 8, 16), not {shape!r}", legality.CODE_SHAPE,
               cls=LegalityError)


# element types that exist only inside tensor-core opcodes (no registers, so not in ptxgen.types): the 4- and 1-bit
# integers, the FP6/FP4 inputs and the block scales' types
_OPCODE_ONLY_TYPES = ("s4", "u4", "b1", "e3m2", "e2m3", "e2m1", "ue8m0", "ue4m3")


def _type_name(t) -> str:
    from ..builder import _err
    if isinstance(t, str) and t.lstrip(".") in _OPCODE_ONLY_TYPES:
        return t.lstrip(".")
    try:
        return get_type(t).name
    except (TypeError, ValueError) as e:
        raise _err(str(e), legality.CODE_TYPE) from None


class CheckedOps:
    """Helpers shared by the family mixins of FunctionBuilder (they rely on its _emit/_src/_dst/_addr)."""

    def _raise_diags(self, diags) -> None:
        from ..builder import _err
        # the builder never emits what ptxas is known to miscompile (legality.CODE_MISCOMPILE)
        errs = [d for d in diags if d.severity == "error" or d.code == legality.CODE_MISCOMPILE]
        if errs:
            d = errs[0]
            notes = tuple(d.notes) + tuple(f"also: {e.message}" for e in errs[1:])
            raise _err(d.message, d.code, notes, cls=LegalityError)

    def _check_opcode(self, opcode: str) -> legality.Form:
        """Raise LegalityError unless `opcode` is a legal spelling for this module's target and version."""
        self._raise_diags(legality.check(opcode, None, self.target, self.version))
        return legality.parse(opcode)

    def _legal_emit(self, opcode: str, ops: Sequence, guard=None) -> Instr:
        infos = operand_infos(ops)
        self._raise_diags(legality.check(opcode, infos, self.target, self.version))
        _, slots, _ = legality.bind(opcode, infos)
        flat = []
        for o in ops:
            flat.extend((o.a, o.b) if isinstance(o, Pair) else (o,))
        for slot, o in zip(slots, flat):
            self._claim_operand(o, slot)
        return self._emit(opcode, tuple(ops), guard)

    def _claim_operand(self, o, slot: legality.Slot) -> None:
        if isinstance(o, Reg):
            self._typed(o, slot)
        elif isinstance(o, Guard):
            self._own(o.reg)
        elif isinstance(o, Vec):
            for e in o.elems:
                if isinstance(e, Reg):
                    self._typed(e, slot)
        elif isinstance(o, Addr):
            self._addr(o, slot.name)
        elif isinstance(o, TensorRef):
            if isinstance(o.base, Reg):
                self._addr(o.base, "tensor map")
            for c in o.coords:
                if isinstance(c, Reg):
                    self._src(c, slot.type, "tensor coordinate", imm=False)

    def _typed(self, r: Reg, slot: legality.Slot) -> None:
        ty = next((t for t in slot.types if compatible(r.type, t)), slot.type)
        if ty is None:
            self._own(r)
        elif slot.role == "dst":
            self._dst(r, ty)
        else:
            self._src(r, ty, slot.name, imm=False)

    # ---------------------------------------------------------------------------- operand conversion
    def _vec_operand(self, regs, what: str) -> Vec:
        from ..builder import _err
        if isinstance(regs, Reg):
            regs = (regs,)
        try:
            regs = tuple(regs)
        except TypeError:
            raise _err(f"{what}: expected a sequence of registers, got {type(regs).__name__}",
                       legality.CODE_OPERANDS) from None
        for r in regs:
            if not isinstance(r, Reg):
                raise _err(f"{what}: expected registers, got {r!r}", legality.CODE_OPERANDS)
        return Vec(regs)

    def _reg_or_imm(self, x, ty: Type, what: str):
        """A register, or an int immediate (range-checked against the slot when checked)."""
        from ..builder import _err
        if isinstance(x, (Reg, Guard, Imm)):
            return x
        if isinstance(x, bool):
            return Imm(int(x), ty)
        if isinstance(x, int):
            return Imm(x, ty)
        raise _err(f"{what}: expected a register or an int, got {type(x).__name__}", legality.CODE_OPERANDS)

    def _imm_only(self, x, what: str) -> Imm:
        from ..builder import _err
        if isinstance(x, bool):
            x = int(x)
        if isinstance(x, Imm):
            return x
        if not isinstance(x, int):
            raise _err(f"{what} must be an int constant, not {type(x).__name__}", legality.CODE_OPERANDS)
        return Imm(x, None)

    def _address_operand(self, a, what: str):
        """mem()/register/variable -> Addr (the [a] form)."""
        return self._addr(a, what)

    def _space_suffix(self, space: Optional[str], allowed: Iterable[str], what: str) -> str:
        from ..builder import _err
        allowed = tuple(allowed)
        if space in (None, "generic"):
            if None in allowed or "generic" in allowed:
                return ""
        elif space in allowed:
            return "." + space
        names = ", ".join(repr(a) for a in allowed if a is not None)
        raise _err(f"{what}: state space {space!r} is not one of {names}", legality.CODE_MODIFIER,
                   cls=LegalityError)

    # ---------------------------------------------------------------------------- fragments
    def fragment(self, opcode: str, operand: str, name: Optional[str] = None) -> RegArray:
        """Registers for one vector operand of a legal opcode (`fragment(op, 'd')`), typed as the form wants."""
        from ..builder import _err
        self._check_opcode(opcode)
        regs = legality.fragment_regs(opcode)
        if operand not in regs:
            raise _err(f"{opcode} has no register fragment {operand!r}; it has " + ", ".join(regs),
                       legality.CODE_OPERANDS)
        count, ty = regs[operand]
        return self.regs(ty, count, name=name)
