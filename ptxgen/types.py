"""PTX fundamental types, register declaration classes and state spaces."""
from __future__ import annotations

from typing import Dict, Optional, Sequence

__all__ = [
    "Type", "get_type", "compatible",
    "pred", "b8", "b16", "b32", "b64", "b128", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64",
    "f16", "f16x2", "bf16", "bf16x2", "tf32", "f32", "f64", "e4m3", "e5m2", "e4m3x2", "e5m2x2",
    "STATE_SPACES",
]


class Type:
    """A PTX type such as `.u32` or `.bf16x2`. Instances are unique: compare with `is` or `==`."""

    __slots__ = ("name", "bits", "kind", "reg_decl", "reg_prefix")

    def __init__(self, name: str, bits: int, kind: str, reg_decl: Optional[str], reg_prefix: Optional[str]):
        self.name = name          # 'u32'
        self.bits = bits          # storage size in bits
        self.kind = kind          # 'b' bits, 'u' unsigned, 's' signed, 'f' float, 'pred', 'packed', 'fp8'
        self.reg_decl = reg_decl  # the type a register of this type is declared with (None: no registers)
        self.reg_prefix = reg_prefix  # prefix of automatically named registers of this type

    @property
    def ptx(self) -> str:
        return "." + self.name

    @property
    def bytes(self) -> int:
        return max(self.bits // 8, 1)

    @property
    def is_int(self) -> bool:
        return self.kind in ("u", "s")

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_signed(self) -> bool:
        return self.kind == "s"

    def __repr__(self) -> str:
        return f"ptxgen.{self.name}"

    def __str__(self) -> str:
        return self.name

    def __reduce__(self):
        return (get_type, (self.name,))


_TYPES: Dict[str, Type] = {}


def _t(name, bits, kind, reg_decl, prefix) -> Type:
    t = Type(name, bits, kind, reg_decl, prefix)
    _TYPES[name] = t
    return t


# Registers are declared with a bit-size type for integers and halves (as nvcc does), so that one
# register serves every same-size integer view; f32/f64/pred keep their own declaration type.
pred = _t("pred", 1, "pred", "pred", "p")
b8 = _t("b8", 8, "b", None, None)
u8 = _t("u8", 8, "u", None, None)
s8 = _t("s8", 8, "s", None, None)
b16 = _t("b16", 16, "b", "b16", "rs")
u16 = _t("u16", 16, "u", "b16", "rs")
s16 = _t("s16", 16, "s", "b16", "rs")
f16 = _t("f16", 16, "f", "b16", "h")
bf16 = _t("bf16", 16, "f", "b16", "h")
b32 = _t("b32", 32, "b", "b32", "r")
u32 = _t("u32", 32, "u", "b32", "r")
s32 = _t("s32", 32, "s", "b32", "r")
f32 = _t("f32", 32, "f", "f32", "f")
tf32 = _t("tf32", 32, "f", "b32", "r")
f16x2 = _t("f16x2", 32, "packed", "b32", "hh")
bf16x2 = _t("bf16x2", 32, "packed", "b32", "hh")
b64 = _t("b64", 64, "b", "b64", "rd")
u64 = _t("u64", 64, "u", "b64", "rd")
s64 = _t("s64", 64, "s", "b64", "rd")
f64 = _t("f64", 64, "f", "f64", "fd")
b128 = _t("b128", 128, "b", "b128", "rq")
e4m3 = _t("e4m3", 8, "fp8", None, None)
e5m2 = _t("e5m2", 8, "fp8", None, None)
e4m3x2 = _t("e4m3x2", 16, "packed", "b16", "rs")
e5m2x2 = _t("e5m2x2", 16, "packed", "b16", "rs")

STATE_SPACES = ("reg", "sreg", "const", "global", "local", "param", "shared", "shared::cta",
                "shared::cluster", "tex")


def get_type(t) -> Type:
    """Accept a Type, 'u32' or '.u32' and return the Type; raise ValueError for an unknown name."""
    if isinstance(t, Type):
        return t
    if isinstance(t, str):
        name = t[1:] if t.startswith(".") else t
        ty = _TYPES.get(name)
        if ty is not None:
            return ty
        raise ValueError(f"unknown PTX type {t!r}; known types: {', '.join(sorted(_TYPES))}")
    raise TypeError(f"expected a PTX type (e.g. ptxgen.u32 or 'u32'), got {type(t).__name__}")


# The kind ptxas 13.0 gives each element of a vector operand: bits (.bN, which stands next to any kind),
# integer (.uN/.sN and integer literals), floating-point (.fN and float literals), packed (.f16x2 ...) and .pred.
VECTOR_KIND = {"b": "b", "u": "i", "s": "i", "f": "f", "packed": "h", "pred": "p"}


def vector_bits(t: "Type") -> int:
    """The width ptxas 13.0 gives a register in a vector, where all registers have one: a .pred register counts
    as 32 bits ({%r1, %p2} is a vector of two 32-bit elements)."""
    return 32 if t.kind == "pred" else t.bits


def clashing_neighbour(kinds: Sequence[Optional[str]]) -> Optional[int]:
    """The index of the first element of a vector whose kind (VECTOR_KIND's; None: not known) clashes
    with the one before it: integer, floating-point, packed and .pred elements (literals as integer or
    floating-point ones) may not stand side by side ("Vector with elements of different types"), a .bN
    register stands next to any; None where none does."""
    for j in range(1, len(kinds)):
        a, b = kinds[j - 1], kinds[j]
        if a is not None and b is not None and a != b and "b" not in (a, b):
            return j
    return None


def compatible(reg: Type, instr: Type, *, wider_ok: bool = False, f16x2_as_int: bool = True) -> bool:
    """PTX operand type checking: may a register of type `reg` be used where `instr` is expected?

    Bit-size types match any type of the same size, integers of one size match each other, and
    floating-point types match only themselves (PTX ISA, "Operand type checking"). `wider_ok` allows a
    wider integer/bit register, as ld/st/cvt do for narrow memory types. `f16x2_as_int`: a .f16x2
    register where a 32-bit integer is expected, which ptxas 13.0 takes in the core instructions
    (add.u32, setp.lt.s32, ld.u32, atom.add.u32 ...; not a .u32 register for .f16x2, nor .f16x2 for .f32);
    the tensor-core and async families take it in a few operands only (ptxgen.legality says which).
    """
    if reg is instr:
        return True
    if reg.kind == "pred" or instr.kind == "pred":
        return False
    same = reg.bits == instr.bits
    if not same:
        if wider_ok and reg.bits > instr.bits:
            # ld/st/cvt: a wider register; ptxas 13.0 takes any kind for a bit type (ld.b8 into a .f32),
            # integers (and .f16x2) for an integer type, and a bit-typed one for the others (ld.f32 into a
            # .b64, cvt.rn.f16.f32 into a .b32)
            if instr.kind == "b":
                return True
            if instr.kind in ("u", "s"):
                return reg.kind in ("b", "u", "s") or (f16x2_as_int and reg.name == "f16x2")
            return reg.kind == "b"
        return False
    if reg.kind == "b" or instr.kind == "b":
        return True
    if reg.is_int and instr.is_int:
        return True
    if f16x2_as_int and reg.name == "f16x2" and instr.is_int:
        return True
    # half types, packed types and tf32 live in bit-typed registers: a b16/b32 view is compatible
    if instr.kind in ("packed", "fp8") or instr in (f16, bf16, tf32):
        return reg.kind in ("b",) or reg is instr
    if reg.kind in ("packed",) or reg in (f16, bf16, tf32):
        return instr.kind == "b"
    return False
