"""Operand shapes of the async families that the core IR has no class for, and the bridge from IR
operands to `legality.OperandInfo` (which the builder and the linter both hand to legality.check)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Sequence, Tuple, Union

from ..ir import Addr, Guard, Imm, Pair, Reg, Sym, Vec
from ..legality import OperandInfo
from ..types import Type, pred

__all__ = ["Sink", "SINK", "TensorRef", "Pair", "operand_info", "operand_infos"]


class Sink:
    """The sink operand `_` (mbarrier.arrive on .shared::cluster, elect.sync without a lane result)."""

    __slots__ = ()

    def __str__(self) -> str:
        return "_"

    def __repr__(self) -> str:
        return "SINK"


SINK = Sink()


@dataclass(frozen=True)
class TensorRef:
    """`[tensorMap, {c0, c1, ...}]`: a tensor map (its address or name) and the coordinates (.s32)."""

    base: Union[Reg, Sym]
    coords: Tuple[Union[Reg, Imm], ...]

    def __str__(self) -> str:
        return f"[{self.base}, {{{', '.join(str(c) for c in self.coords)}}}]"




def operand_info(o) -> OperandInfo:
    """What legality.check needs to know of one IR operand."""
    if isinstance(o, Reg):
        return OperandInfo("reg", o.type)
    if isinstance(o, Guard):
        return OperandInfo("reg", pred)
    if isinstance(o, bool):
        return OperandInfo("imm", value=int(o))
    if isinstance(o, int):
        return OperandInfo("imm", value=o)
    if isinstance(o, Imm):
        v = o.value
        return OperandInfo("imm", o.type, value=v if isinstance(v, int) else None)
    if isinstance(o, Vec):
        return OperandInfo("vec", count=len(o.elems), elems=tuple(_elem_type(e) for e in o.elems))
    if isinstance(o, Addr):
        return OperandInfo("addr")
    if isinstance(o, TensorRef):
        return OperandInfo("tensor", count=len(o.coords), elems=tuple(_elem_type(e) for e in o.coords))
    if isinstance(o, Sym):
        return OperandInfo("sym")
    if isinstance(o, Sink):
        return OperandInfo("sink")
    return OperandInfo(type(o).__name__)


def _elem_type(e) -> Union[Type, None]:
    return e.type if isinstance(e, Reg) else None


def operand_infos(ops: Sequence) -> List[OperandInfo]:
    """operand_info of each operand, with a Pair (`d|p`) counted as its two operands."""
    out = []
    for o in ops:
        if isinstance(o, Pair):
            out.append(operand_info(o.a))
            out.append(operand_info(o.b))
        else:
            out.append(operand_info(o))
    return out
