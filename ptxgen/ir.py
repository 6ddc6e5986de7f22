"""The IR that the builder (and the parser) produce and the emitter prints.

Module -> Function (.entry or .func) -> body of statements (Instr, LabelDef, Pragma, Raw, Block).
Every statement carries the SourceLoc of the user's line that made it.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple, Union

from .diag import SourceLoc
from .target import PtxVersion, Target
from .types import Type

__all__ = [
    "Reg", "RegArray", "Imm", "Sym", "Addr", "Vec", "Label", "SpecialReg", "Guard", "Pair", "Operand",
    "Instr", "LabelDef", "Pragma", "Raw", "Param", "Var", "Function", "Module", "format_imm",
]


class Reg:
    """A typed virtual register. Its PTX name is given by its function's allocator."""

    __slots__ = ("name", "type", "owner", "decl_group")

    def __init__(self, name: str, type: Type, owner: "Function", decl_group: Optional[str] = None):
        self.name = name
        self.type = type
        self.owner = owner
        self.decl_group = decl_group  # the array declaration this register belongs to (e.g. '%r')

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Reg({self.name}: {self.type.name})"

    def __invert__(self) -> "Guard":
        """`~p` is the negated predicate `!p` (in guards and in setp/selp/vote sources)."""
        return Guard(self, True)


class RegArray(tuple):
    """A fragment: a tuple of registers of one type (declared together as `%name<N>`)."""

    @property
    def type(self) -> Type:
        return self[0].type


@dataclass(frozen=True)
class Guard:
    """A predicate used as a guard (`@p` / `@!p`) or as a negatable predicate operand."""

    reg: Reg
    negate: bool = False

    def __invert__(self) -> "Guard":
        return Guard(self.reg, not self.negate)

    def __str__(self) -> str:
        return ("!" if self.negate else "") + self.reg.name


def _f32_hex(x: float) -> str:
    return "0f%08X" % struct.unpack("<I", struct.pack("<f", x))[0]


def _f64_hex(x: float) -> str:
    return "0d%016X" % struct.unpack("<Q", struct.pack("<d", x))[0]


def imm_is_float(value: Union[int, float], type: Optional[Type]) -> bool:
    """Whether an immediate prints as a floating-point literal: typed .f32/.f64, or an untyped float (an
    integer-typed operand prints as an integer even when given as 2.0)."""
    return type.kind == "f" and type.bits in (32, 64) if type is not None else isinstance(value, float)


def format_imm(value: Union[int, float], type: Optional[Type]) -> str:
    """PTX text of an immediate: decimal integers, exact `0f`/`0d` hex for floats (NaN/inf included)."""
    if imm_is_float(value, type):
        if type is not None and type.bits == 64:
            return _f64_hex(float(value))
        try:
            return _f32_hex(float(value))
        except OverflowError:  # finite, but rounds past the largest .f32
            raise ValueError(f"{value!r} does not fit in .f32 (largest finite value 3.4028234663852886e+38)") \
                from None
    if isinstance(value, float) and not value.is_integer():
        raise ValueError(f"{value!r} is not an integer, but the operand is .{type.name}")
    return str(int(value))


@dataclass(frozen=True)
class Imm:
    """An immediate operand; floats print in exact hex form."""

    value: Union[int, float]
    type: Optional[Type] = None

    def __str__(self) -> str:
        return format_imm(self.value, self.type)


@dataclass(frozen=True)
class Sym:
    """A named variable or parameter (shared array, .param, .global, a function name)."""

    name: str
    space: str  # 'shared', 'param', 'global', 'const', 'local', 'func'
    type: Optional[Type] = None

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Addr:
    """A memory operand `[base+offset]`; base is a register or a symbol."""

    base: Union[Reg, Sym]
    offset: int = 0

    def __str__(self) -> str:
        if self.offset > 0:
            return f"[{self.base}+{self.offset}]"
        if self.offset < 0:
            return f"[{self.base}+{self.offset}]"
        return f"[{self.base}]"


@dataclass(frozen=True)
class Vec:
    """A vector operand `{a, b, c, d}`."""

    elems: Tuple["Operand", ...]

    def __str__(self) -> str:
        return "{" + ", ".join(str(e) for e in self.elems) + "}"


@dataclass(frozen=True)
class Label:
    """A branch target; placed in a body with a LabelDef."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class SpecialReg:
    """A read-only special register such as `%tid.x` or `%clock64`."""

    name: str
    type: Type

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Pair:
    """`d|p`: two destinations in one operand position (setp, shfl.sync, match.all, elect.sync)."""

    a: object
    b: object

    def __str__(self) -> str:
        return f"{self.a}|{self.b}"


Operand = Union[Reg, Imm, Sym, Addr, Vec, Label, SpecialReg, Guard, str]


@dataclass
class Instr:
    """One PTX instruction: full opcode with modifiers ('add.s32'), operands, optional guard."""

    opcode: str
    operands: Tuple[Operand, ...]
    guard: Optional[Guard] = None
    loc: Optional[SourceLoc] = None
    comment: Optional[str] = None
    # operand groups for forms like `setp ... p|q` and `call (ret), f, (args)` are encoded in operands
    sep: Optional[Sequence[str]] = None  # separators between operands when not ', '

    def text(self) -> str:
        ops = self.operands
        if self.sep is None:
            body = ", ".join(map(str, ops))  # map: the emitter's hot path, measurably faster than a genexpr
        else:
            parts = [str(ops[0])] if ops else []
            for s, o in zip(self.sep, ops[1:]):
                parts.append(s)
                parts.append(str(o))
            body = "".join(parts)
        g = f"@{self.guard} " if self.guard is not None else ""
        return f"{g}{self.opcode} {body};" if ops else f"{g}{self.opcode};"


@dataclass
class LabelDef:
    label: Label
    loc: Optional[SourceLoc] = None


@dataclass
class Pragma:
    text: str  # e.g. 'nounroll'
    loc: Optional[SourceLoc] = None


@dataclass
class Raw:
    """Text the builder cannot check; emitted verbatim (errors in it surface from ptxas/JIT logs)."""

    text: str
    loc: Optional[SourceLoc] = None


@dataclass
class Param:
    """A kernel or function parameter."""

    name: str
    type: Type
    ptr_space: Optional[str] = None  # 'global' for `.ptr .global`
    align: Optional[int] = None
    array: Optional[int] = None  # byte arrays: `.param .align 64 .b8 tmap[128]`
    pointee: Optional[Type] = None

    def decl(self) -> str:
        s = f".param {self.type.ptx}"
        if self.ptr_space is not None:
            s += f" .ptr .{self.ptr_space}"
            if self.align:
                s += f" .align {self.align}"
            return f"{s} {self.name}"
        if self.align:
            s = f".param .align {self.align} {self.type.ptx}"
        s += f" {self.name}"
        if self.array is not None:
            s += f"[{self.array}]"
        return s

    @property
    def sym(self) -> Sym:
        return Sym(self.name, "param", self.type)


@dataclass
class Var:
    """A variable in a state space: `.shared .align 16 .b8 tile[4096];` (extern: size None)."""

    name: str
    space: str
    type: Type
    count: Optional[int] = None  # None for scalars or extern unsized arrays
    align: Optional[int] = None
    extern: bool = False
    init: Optional[Sequence[Union[int, float]]] = None
    linkage: str = ""  # '', 'visible', 'extern', 'weak'
    loc: Optional[SourceLoc] = None

    def decl(self) -> str:
        parts = []
        if self.extern:
            parts.append(".extern")
        elif self.linkage:
            parts.append("." + self.linkage)
        parts.append("." + self.space)
        if self.align:
            parts.append(f".align {self.align}")
        parts.append(self.type.ptx)
        name = self.name
        if self.extern and self.count is None:
            name += "[]"
        elif self.count is not None:
            name += f"[{self.count}]"
        parts.append(name)
        s = " ".join(parts)
        if self.init is not None:
            vals = [format_imm(v, self.type) for v in self.init]
            packed = self.type.name == "f16x2"  # each element's value in braces, its 32 bits (legality._PACKED_ONE)
            if packed and self.count is not None:
                vals = [f"{{{v}}}" for v in vals]
            s += f" = {{{', '.join(vals)}}}" if self.count is not None or packed else f" = {', '.join(vals)}"
        return s + ";"

    @property
    def sym(self) -> Sym:
        return Sym(self.name, self.space, self.type)


@dataclass
class Function:
    """A `.entry` kernel or a `.func` device function."""

    name: str
    module: "Module"
    is_entry: bool = True
    params: List[Param] = field(default_factory=list)
    rets: List[Param] = field(default_factory=list)
    directives: List[str] = field(default_factory=list)  # '.maxntid 256, 1, 1'
    locals: List[Var] = field(default_factory=list)     # function-scope .shared/.local variables
    body: list = field(default_factory=list)
    regs: List[Reg] = field(default_factory=list)
    linkage: str = "visible"
    loc: Optional[SourceLoc] = None
    # parsed from PTX text: its registers' types are the declared ones (the builder declares integer,
    # half and packed registers with the .bN type of their size)
    parsed: bool = False
    # allocator state: next index per automatic prefix, names in use
    _next: Dict[str, int] = field(default_factory=dict)
    _names: set = field(default_factory=set)
    _arrays: Dict[str, Tuple[Type, int]] = field(default_factory=dict)  # '%r' -> (decl type, count)
    _labels: set = field(default_factory=set)
    _placed: Dict[str, Optional[SourceLoc]] = field(default_factory=dict)  # label name -> where it was placed

    @property
    def kind(self) -> str:
        return ".entry" if self.is_entry else ".func"


@dataclass
class Module:
    """A PTX module: version, target, address size, module-scope variables and functions."""

    target: Target
    version: PtxVersion
    address_size: int = 64
    vars: List[Var] = field(default_factory=list)
    functions: List[Function] = field(default_factory=list)
    loc: Optional[SourceLoc] = None
