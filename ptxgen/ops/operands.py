"""Operand shapes of the async families that the core IR has no class for, and the bridge from IR
operands to `legality.OperandInfo` (which the builder and the linter both hand to legality.check)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple, Union

from ..ir import Addr, Guard, Imm, Pair, Reg, SpecialReg, Sym, Vec, imm_is_float
from ..legality import OperandInfo
from ..types import Type, f32, f64, get_type, pred

__all__ = ["Sink", "SINK", "TensorRef", "Pair", "operand_info", "operand_infos", "register_operand_info", "tensor_info"]


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


def _vec_info(o) -> OperandInfo:
    lits = tuple(("f" if imm_is_float(e.value, e.type) else "i") if isinstance(e, Imm) else
                 ("i" if isinstance(e, int) and not isinstance(e, bool) else "f" if isinstance(e, float) else None)
                 for e in o.elems)
    elems = tuple(_elem_type(e) for e in o.elems)
    decl = tuple(_decl_type(e) for e in o.elems)
    vals = tuple(_int_value(e) if lit == "i" else None for e, lit in zip(o.elems, lits)) if "i" in lits else ()
    # (a decimal literal, `1.0`, has no type of its own: ptxas 13.0 reads it as a double, as it reads 0d literals)
    lits64 = tuple(i for i, e in enumerate(o.elems) if lits[i] == "f" and isinstance(e, Imm)
                   and (e.type is None or e.type.bits == 64))
    return OperandInfo("vec", count=len(o.elems), elems=elems, lits=lits if any(lits) else (),
                       decl=decl if decl != elems else (), vals=vals, lits64=lits64,
                       special=any(type(e) is SpecialReg for e in o.elems))


def tensor_info(coords: Vec, base) -> OperandInfo:
    """A tensor reference `[base, {coords}]`: its coordinates as a vector's (count, types, literals), and the state
    space of the map `base` names. The builder's TensorRef and the parser's multi-part address both come here."""
    v = _vec_info(coords)
    return OperandInfo("tensor", count=v.count, elems=v.elems, space=var_space(base), lits=v.lits, decl=v.decl,
                       lits64=v.lits64)


def _int_value(e) -> Optional[int]:
    """The value of an integer literal element of a vector (an Imm or a Python int)."""
    v = e.value if isinstance(e, Imm) else e
    return int(v) if isinstance(v, int) else None


def _decl_type(e) -> Union[Type, None]:
    """The type a vector element's register is declared with: its own for a parsed one, the .bN type of
    its size for the builder's integer, half and packed registers (Type.reg_decl)."""
    if type(e) is not Reg:
        return None
    t = e.type
    if t is None or getattr(e.owner, "parsed", False) or not t.reg_decl:
        return t
    return get_type(t.reg_decl)


def _imm_info(o) -> OperandInfo:
    v = o.value
    if imm_is_float(v, o.type):
        # the literal's width as written: .f32 for a 0f one, .f64 for 0d and for a decimal one (the
        # parser's `1.5`; PTX reads decimal floats in double precision)
        return OperandInfo("imm", f32 if str(o)[:2].lower() == "0f" else f64, floating=True)
    return OperandInfo("imm", o.type, value=int(v) if isinstance(v, (int, float)) else None)


def var_space(base) -> Optional[str]:
    """The state space of the variable an address names (`[bar]`: .shared), None for a register or a
    variable of unknown space."""
    sp = getattr(base, "space", None) if isinstance(base, Sym) else None
    return sp if sp not in ("?", "func") else None


def _str_info(o) -> OperandInfo:
    return OperandInfo("sink") if o == "_" else OperandInfo("str")


def _reg_info(o) -> OperandInfo:
    return OperandInfo("reg", o.type)


# operand class -> its OperandInfo; a subclass not listed takes its nearest listed base's entry (the
# parser's float literals are Imm, its parameter names Sym), found once and then kept here
_INFO_BY_CLASS = {
    Reg: _reg_info,
    SpecialReg: lambda o: OperandInfo("reg", o.type, special=True),
    Guard: lambda o: OperandInfo("reg", pred),
    bool: lambda o: OperandInfo("imm", value=int(o)),
    int: lambda o: OperandInfo("imm", value=o),
    float: lambda o: OperandInfo("imm", f32, floating=True),     # printed as a 0f literal
    Imm: _imm_info,
    Vec: _vec_info,
    Addr: lambda o: OperandInfo("addr", space=var_space(o.base), special=type(o.base) is SpecialReg),
    TensorRef: lambda o: tensor_info(Vec(tuple(o.coords)), o.base),
    Sym: lambda o: OperandInfo("sym"),
    Sink: lambda o: OperandInfo("sink"),
    str: _str_info,
}


def register_operand_info(cls: type, info) -> None:
    """Give operand_info the OperandInfo of another front end's operand class: `info(operand)`. The
    linter registers the parser's multi-part addresses (`[tmap, {c0, c1}]`) this way, so one table
    translates the builder's operands and the parser's."""
    _INFO_BY_CLASS[cls] = info


def operand_info(o) -> OperandInfo:
    """What legality.check needs to know of one IR operand (of the builder or of the parser)."""
    f = _INFO_BY_CLASS.get(type(o))
    if f is None:
        f = next((_INFO_BY_CLASS[c] for c in type(o).__mro__[1:] if c in _INFO_BY_CLASS), None)
        if f is None:
            name = type(o).__name__
            f = lambda o: OperandInfo(name)            # noqa: E731 - a kind legality knows nowhere
        _INFO_BY_CLASS[type(o)] = f
    return f(o)


def _elem_type(e) -> Union[Type, None]:
    return e.type if type(e) is Reg else None


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
