"""PTX text -> ptxgen IR, with the grammar in grammar/ptx.lark as the one definition of PTX syntax.

Two paths, one syntax:

- lark (LALR, contextual lexer, positions on, built once per process) parses everything that is not a
  simple one-line statement: directives, declarations, function headers, blocks, multi-line calls.
- a line-level fast path handles the lines that make up nearly all of a real file (one instruction,
  label, `.loc` or section data line per line). Its regular expressions are assembled from the
  grammar's own terminals (REG, NAME, OPCODE, INT, ...), it only takes lines it can parse completely,
  and it produces exactly the statement records the lark path produces (tests/test_parse.py compares
  the two on every statement of the corpus). The lines it takes are blanked out of the text that lark
  sees, so lark only parses the skeleton.

The fast path is only trusted where the skeleton confirms it: every blanked line must lie between
statements of a function body (or of a `.section`); otherwise those lines are handed back to lark and
the skeleton is parsed again. Parse errors become PTX-E-SYNTAX diagnostics at the token's line and
column, never exceptions.
"""
from __future__ import annotations

import functools
import gc
import operator
import os
import re
import struct
import threading
from dataclasses import dataclass, field
from importlib import resources
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import lark
from lark import Token, Tree

from .diag import Diagnostic, SourceLoc
from .errors import InternalError, PtxgenError
from .legality import (CODE_MISCOMPILE, align_error, body_variable_error, common_space_error, field_value_error,
                       float_literal_error, initializer_error, initializer_miscompile, int_literal_error,
                       int_literal_overflows, param_array_error, param_shape_error, param_type_allocated,
                       ref_variable_error, sampler_mode_error, declared_type_version, u32_field, u32_field_error,
                       undeclarable_type, variable_array_error, variable_redeclaration_error, vector_error, VarShape)
from .ir import (Pair, Addr, Function, Guard, Imm, Instr, Label, LabelDef, Module, Param, Pragma, Raw, Reg,
                 SpecialReg, Sym, Var, Vec)
from .target import Target, read_version, version_error
from .types import Type, b32, f32, f64, get_type, u32, u64

__all__ = [
    "parse", "parse_ptx", "ParseResult", "PtxSyntaxError", "PredPair", "CallArgs", "AddrList",
    "SymOffset", "FloatImm", "ParamSym", "ParsedParam", "ParsedVar", "SPECIAL_REG_TYPES",
    "statement_records", "parse_statement",
]


class PtxSyntaxError(PtxgenError):
    """parse_ptx() was given text that is not PTX; `diagnostics` holds the PTX-E-SYNTAX findings."""

    def __init__(self, diagnostics: Sequence[Diagnostic]):
        self.diagnostics = list(diagnostics)
        super().__init__("\n".join(str(d) for d in self.diagnostics))


# ---------------------------------------------------------------------------------------------- IR extras
# Operand forms PTX has and ptxgen.ir does not spell out. Each prints back as the PTX it came from.

PredPair = Pair  # the `p|q` destination pair of setp / shfl.sync / match.all


@dataclass(frozen=True)
class CallArgs:
    """A call's parenthesised list of return values or arguments: `(param0, %r1, 5, 1.5, _)`."""

    items: tuple

    @property
    def names(self) -> List[str]:
        return [str(i) for i in self.items]

    def __str__(self) -> str:
        return "(" + ", ".join(str(i) for i in self.items) + ")"


@dataclass(frozen=True)
class AddrList:
    """A memory operand with several parts: `[tex, {x, y}]`, `[tmap, {c0, c1}]`."""

    items: tuple

    def __str__(self) -> str:
        # the address parts print without their own brackets: [tex, {x, y}], [%rd1+8, {c0}]
        return "[" + ", ".join(str(i)[1:-1] if isinstance(i, Addr) else str(i) for i in self.items) + "]"


@dataclass(frozen=True)
class SymOffset:
    """A symbol address plus a constant, outside brackets: `mov.u64 %rd1, table+8;`."""

    sym: Sym
    offset: int

    def __str__(self) -> str:
        return f"{self.sym}+{self.offset}" if self.offset >= 0 else f"{self.sym}{self.offset}"


@dataclass(frozen=True, eq=False)
class FloatImm(Imm):
    """A floating-point literal kept as written (`0f3F800000`, `1.5`), so NaN payloads survive."""

    text: str = ""

    def __str__(self) -> str:
        return self.text

    def __eq__(self, other) -> bool:
        return isinstance(other, FloatImm) and other.text.lower() == self.text.lower()

    def __hash__(self) -> int:
        return hash(self.text.lower())


@dataclass(frozen=True)
class ParamSym(Sym):
    """A `.param` (or other) variable with its declared shape, for call-site checks."""

    count: Optional[int] = None
    align: Optional[int] = None
    input: bool = False  # a kernel's or function's own input parameter (read-only)
    ret: bool = False  # a function's own return parameter


@dataclass
class ParsedParam(Param):
    """A parameter as written; `decl()` prints the original declaration."""

    text: str = ""
    space: str = "param"
    loc: Optional[SourceLoc] = None
    vector: Optional[int] = None  # `.param .v2 .f32 x[1]`: 2
    # (line, column) of the .vN token, the type and the name, where the parameter was parsed
    vector_at: Optional[Tuple[int, int]] = None
    type_at: Optional[Tuple[int, int]] = None
    name_at: Optional[Tuple[int, int]] = None
    dims: Tuple[Optional[int], ...] = ()  # array dimensions as written, None for `[]` (`array` is 0 then)
    align_at: Optional[Tuple[int, int]] = None  # (line, column) of the .align's number

    def decl(self) -> str:
        return self.text


@dataclass
class ParsedVar(Var):
    """A module-scope variable as written; `decl()` prints the original declaration."""

    text: str = ""
    type_loc: Optional[SourceLoc] = None  # where its type is written

    def decl(self) -> str:
        return self.text


# special registers -> type; the builder's table plus the families it does not list
SPECIAL_REG_TYPES: Dict[str, Type] = {}


def _special_regs() -> Dict[str, Type]:
    from .builder import SPECIAL_REGS
    t = {name: ty for name, (ty, _need) in SPECIAL_REGS.items()}
    for n in ("globaltimer_lo", "globaltimer_hi", "clock_hi", "nsmid", "nwarpid", "warpid", "total_smem_size",
              "dynamic_smem_size", "reserved_smem_offset_begin", "reserved_smem_offset_end",
              "reserved_smem_offset_cap", "aggr_smem_size", "cluster_ctarank", "cluster_nctarank"):
        t.setdefault("%" + n, u32)
    for n in ("current_graph_exec",):
        t.setdefault("%" + n, u64)
    for i in range(32):
        t.setdefault(f"%envreg{i}", b32)
    for i in range(8):
        t.setdefault(f"%pm{i}", u32)
        t.setdefault(f"%pm{i}_64", u64)
    for i in range(2):
        t.setdefault(f"%reserved_smem_offset_{i}", b32)
    return t


# --------------------------------------------------------------------------------------------- the parser
_GRAMMAR_FILE = "ptx.lark"


@functools.lru_cache(maxsize=None)
def _lark() -> lark.Lark:
    """The LALR parser, built once per process."""
    try:
        text = resources.files("ptxgen.grammar").joinpath(_GRAMMAR_FILE).read_text(encoding="utf-8")
    except ModuleNotFoundError:  # a source tree on sys.path without the install that maps grammar/
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "grammar", _GRAMMAR_FILE),
                  encoding="utf-8") as f:
            text = f.read()
    return lark.Lark(text, parser="lalr", lexer="contextual", propagate_positions=True,
                     maybe_placeholders=False, start=["start", "instruction"],
                     lexer_callbacks={"INT": _lex_int, "DEC_FLOAT": _lex_float})


# Literals ptxas 13.0 refuses as it reads them ("Constant overflow": legality.int_literal_error and
# float_literal_error), found by the lexer: (message, line, column, notes) of each, in the list `errors` of
# this thread's parse in progress (None outside one). The fast path takes no literal long enough to be one.
_LEX = threading.local()


def _lex_int(tok: Token) -> Token:
    if len(tok) > 18:
        errors = getattr(_LEX, "errors", None)
        bad = int_literal_error(tok.value) if errors is not None else None
        if bad is not None:
            errors.append((bad[0], tok.line, tok.column, (bad[1],)))
    return tok


def _lex_float(tok: Token) -> Token:
    v = tok.value
    if len(v) > 24 or "e" in v or "E" in v:
        errors = getattr(_LEX, "errors", None)
        bad = float_literal_error(v) if errors is not None else None
        if bad is not None:
            errors.append((bad[0], tok.line, tok.column, (bad[1],)))
    return tok


# literals the fast path leaves to lark: integers with more digits than any that ptxas 13.0 always reads
# (int_literal_overflows), more than any below 2^32 where 32 bits are read (legality.u32_field), decimal
# floating-point literals with a three-digit exponent or a long mantissa (float_literal_error)
_LONG_INT = r"(?:0[xX][0-9a-fA-F]{17}|0[bB][01]{65}|0[0-7]{23}|[1-9][0-9]{19})"
_LONG_INT32 = r"(?:0[xX][0-9a-fA-F]{9}|0[bB][01]{33}|0[0-7]{11}|[1-9][0-9]{9})"
_LONG_FLOAT = r"(?:[0-9.]*[eE][+-]?[0-9]{3}|[0-9.]{25})"


class _Fast:
    """The line-level fast path's regular expressions, assembled from the grammar's terminals."""

    def __init__(self, p: lark.Lark):
        def term(name: str) -> str:
            return p.get_terminal(name).pattern.to_regexp()

        self.REG = reg = f"(?:{term('REG')})"
        self.NAME = name = f"(?:{term('NAME')})"
        opcode = f"(?:{term('OPCODE')})"
        integer = f"(?:(?!{_LONG_INT})(?:{term('INT')}))"
        int32 = f"(?:(?!{_LONG_INT32})(?:{term('INT')}))"
        self.TYPE = typ = f"(?:{term('TYPE')})"
        section = f"(?:{term('SECTION_NAME')})"
        fhex = f"(?:{term('FLOAT_HEX')}|{term('DOUBLE_HEX')})"
        fdec = f"(?:(?!{_LONG_FLOAT})(?:{term('DEC_FLOAT')}))"
        sp = "[ \t]*"
        tail = r"[ \t]*(?://[^\n]*)?$"
        # `@!%p opcode operands;  // comment`: operands are parsed by _operand(), so only a character
        # set is checked here; lines with strings, comments inside or several statements go to lark
        self.instr = re.compile(
            rf"([ \t]*)(?:@(!?)({reg}|{name})[ \t]+)?({opcode}|{name})(?:[ \t]+([^;\"/]*?))?{sp};{tail}")
        self.label = re.compile(rf"([ \t]*)({name}){sp}:{tail}")
        loc_attr = rf"(?:{name}[ \t]+{name}(?:{sp}\+{sp}{integer})?|{name}[ \t]+{int32}[ \t]+{int32}[ \t]+{int32})"
        self.loc = re.compile(
            rf"([ \t]*)(\.loc[ \t]+{int32}[ \t]+{int32}[ \t]+{int32}(?:{sp},{sp}{loc_attr})*){tail}")
        # a section's data value: a signed literal (no U, below 2^63) after a `-`; the rest go to lark, which
        # reports what ptxas refuses
        signed = r"(?:0[xX][0-9a-fA-F]{1,15}|0[bB][01]{1,63}|0[0-7]{0,20}|[1-9][0-9]{0,17})"
        value = (rf"(?:(?:{name}|{section}){sp}\+{sp}{integer}|{name}{sp}-{sp}{name}|{name}|{section}"
                 rf"|-{sp}{signed}|{integer})")
        self.data = re.compile(rf"([ \t]*)({typ})[ \t]+({value}(?:{sp},{sp}{value})*){tail}")
        # one-line declarations inside bodies: `.reg .b32 %r<9>;`, `.param .align 8 .b8 param0[16];` (an
        # .align after the type, a syntax error, goes to lark, which reports it)
        align = rf"(?:[ \t]+\.align[ \t]+{int32})"
        item = rf"(?:{reg}|{name})(?:<{int32}>|(?:\[(?:{integer})?\])*)"
        self.decl = re.compile(
            rf"([ \t]+)(\.(?:reg|param|local|shared)({align}?)(?:[ \t]+(\.v(?:2|4|8|16)))?[ \t]+({typ})())"
            rf"[ \t]+({item}(?:{sp},{sp}{item})*){sp};{tail}")
        self.decl_item = re.compile(rf"({reg}|{name})(?:<({int32})>|((?:\[(?:{integer})?\])*))")
        self.dims = re.compile(rf"\[({integer})?\]")
        self.brace = re.compile(rf"([ \t]*)([{{}}]){tail}")
        # the first line of an instruction that continues on the next lines (no comments or strings)
        self.instr_head = re.compile(rf"[ \t]*(?:@!?(?:{reg}|{name})[ \t]+)?(?:{opcode}|{name})(?:[ \t][^;\"/]*)?\Z")
        self.instr_cont = re.compile(r"[^;\"/]*\Z")
        self.instr_last = re.compile(rf"[^;\"/]*;{tail}")
        self.has_name = re.compile(r"[A-Za-z_$.]")
        # a whole DWARF section of one-statement lines (data or label), matched in one regex pass
        line = rf"[ \t]*(?:{typ}[ \t]+{value}(?:{sp},{sp}{value})*|{name}{sp}:)?[ \t]*(?://[^\n]*)?\n"
        self.section = re.compile(
            rf"[ \t]*\.section[ \t]+({section})[ \t]*(?://[^\n]*)?\n[ \t]*\{{[ \t]*(?://[^\n]*)?\n"
            rf"((?:{line})*)[ \t]*\}}[ \t]*(?://[^\n]*)?(?=\n|\Z)")
        self.sec_label = re.compile(rf"^[ \t]*({name}){sp}:", re.M)
        self.sec_ref = re.compile(rf"(?<![\w$.])({name})(?![\w$])|//[^\n]*")
        # operands
        self.reg_full = re.compile(reg + r"\Z")
        self.name_full = re.compile(name + r"\Z")
        self.int_full = re.compile(rf"(-?)({integer})\Z")
        self.float_full = re.compile(rf"(?:{fhex}|{fdec})\Z")
        self.addr = re.compile(rf"\[{sp}({reg}|{name}){sp}(?:\+{sp}(-?)({integer}){sp})?\]\Z")
        self.addr_abs = re.compile(rf"\[{sp}({integer}){sp}\]\Z")
        self.pair = re.compile(rf"({reg}|{name}){sp}\|{sp}({reg}|{name})\Z")
        self.neg = re.compile(rf"!{sp}({reg}|{name})\Z")
        self.call = re.compile(r"\(([^()]*)\)\Z")
        self.vec = re.compile(r"\{([^{}\[\]()]*)\}\Z")
        # top-level comma split when brackets hold commas: items are bracketed groups or plain characters
        self.items = re.compile(r"(?:\{[^{}]*\}|\[[^\[\]]*\]|\([^()]*\)|[^,{}\[\]()])+")
        self.items_full = re.compile(r"(?:(?:\{[^{}]*\}|\[[^\[\]]*\]|\([^()]*\)|[^,{}\[\]()])+,)*"
                                     r"(?:\{[^{}]*\}|\[[^\[\]]*\]|\([^()]*\)|[^,{}\[\]()])+\Z")
        self.ws = re.compile(r"\s+")
        # the commonest operand lists: registers and integers only
        atom = rf"(?:{reg}|-?{integer})"
        self.simple_ops = re.compile(rf"{atom}(?:{sp},{sp}{atom})*\Z")


@functools.lru_cache(maxsize=None)
def _fast() -> _Fast:
    return _Fast(_lark())


# ------------------------------------------------------------------------------------------ literal values
_INT_CACHE: Dict[str, int] = {}


def _int_value(text: str) -> int:
    """The value of an INT token: decimal, 0x hex, 0b binary, leading-0 octal, optional U suffix."""
    t = text[:-1] if text[-1:] in "uU" else text
    if len(t) > 1 and t[0] == "0":
        c = t[1]
        if c in "xX":
            return int(t[2:], 16)
        if c in "bB":
            return int(t[2:], 2)
        return int(t[1:], 8)
    return int(t)


def _float_value(text: str) -> Tuple[float, Optional[Type]]:
    c = text[1:2]
    if text[:1] == "0" and c in "fF" and len(text) == 10:
        return struct.unpack(">f", bytes.fromhex(text[2:]))[0], f32
    if text[:1] == "0" and c in "dD" and len(text) == 18:
        return struct.unpack(">d", bytes.fromhex(text[2:]))[0], f64
    return float(text), None


def _int_syntax(p: str) -> tuple:
    """('i', value) of an optionally negated INT token's text."""
    return ("i", _literal(p[0] == "-", p[1:] if p[0] == "-" else p))


def _literal(neg: bool, text: str) -> int:
    """The value of the INT token `text`, negated where `neg`, as the constant expression evaluator gives it: a
    literal with a U or above 2^63 - 1 is unsigned (0 .. 2^64 - 1), and so is its negation; any other is
    signed."""
    v = _int_value(text) & _M64
    if v >> 63 or text[-1] == "U":
        return (-v) & _M64 if neg else v
    return -v if neg else v


class _ExprError(Exception):
    """A constant expression that cannot be evaluated (division by zero); becomes a diagnostic."""

    def __init__(self, message: str, token: Optional[Token], notes: Tuple[str, ...] = ()):
        super().__init__(message)
        self.token = token
        self.notes = notes


# ------------------------------------------------------------------------------------------------ records
# A parsed statement is a tuple (line, kind, col, end_line, *payload). Both paths build these; the IR is
# built from them in one ordered pass, which also resolves names through the function's scopes.
R_INSTR, R_LABEL, R_LOC, R_DECL, R_PRAGMA, R_OPEN, R_CLOSE, R_PROTO, R_TARGETS, R_DATA = range(10)
R_SECTION = 22  # a whole section taken by the fast path: (line, kind, col, end_line, name, labels, refs)
M_VERSION, M_TARGET, M_ADDR_SIZE, M_FILE, M_SECTION, M_SECTION_END, M_VAR, M_FUNC, M_BODY, M_BODY_END, \
    M_ALIAS, M_PRAGMA = range(10, 22)
_FAST_KINDS = (R_INSTR, R_LABEL, R_LOC, R_DATA, R_DECL, R_OPEN, R_CLOSE, R_SECTION)


@dataclass(frozen=True)
class DeclItem:
    """One name of a declaration: `a`, `tile[512]`, `%r<33>`, `x = 5`."""

    name: str
    col: int
    count: Optional[int] = None  # `%r<N>`: N registers %r0..%r{N-1}
    dims: Tuple[Optional[int], ...] = ()  # array dimensions, None for `[]`
    init: object = None
    text: str = ""
    # each value of the initializer in order: (line, column, length, value), the value an int, a float,
    # "sym" for an address (`sym`, `sym+4`, `generic(sym)`) or "field" for a texture field (`filter_mode = x`)
    init_at: Tuple[Tuple[int, int, int, object], ...] = ()
    init_lists: Tuple[Tuple[int, int], ...] = ()  # (line, column) of each {...} list's `}`, as the lists open


@dataclass(frozen=True)
class Decl:
    """A variable declaration: state space, attributes, type and names."""

    space: str  # 'reg', 'param', 'shared', 'local', 'global', 'const', 'tex', 'sreg'
    type: str  # type name without the dot ('b32', 'texref')
    items: Tuple[DeclItem, ...]
    align: Optional[int] = None
    vector: Optional[int] = None
    linkage: Tuple[str, ...] = ()
    ptr: bool = False
    prefix: str = ""  # the text before the names: `.global .align 4 .b8`
    vector_at: Optional[Tuple[int, int]] = None  # (line, column) of the `.vN` token
    type_at: Optional[Tuple[int, int]] = None  # (line, column) of the type token
    align_at: Optional[Tuple[int, int]] = None  # (line, column) of the .align's number


_INT = r"(0[xX][0-9a-fA-F]+U?|0[bB][01]+U?|0[0-7]*U?|[1-9][0-9]*U?)"      # the grammar's INT
_LOC_NUMBERS = re.compile(rf"\.loc\s+{_INT}\s+{_INT}\s+{_INT}").match
_INLINED_AT = re.compile(rf"inlined_at\s+{_INT}\s+{_INT}\s+{_INT}").search


def _loc_triple(m) -> Tuple[int, int, int]:
    """The three numbers of a .loc or inlined_at match, as values (_int_value)."""
    return tuple(_int_value(g) for g in m.groups())


def loc_numbers(text: str):
    """(file, line, column) of a `.loc` directive's text and its inlined_at's (or None); None if unreadable."""
    m = _LOC_NUMBERS(text)
    if m is None:
        return None
    at = _INLINED_AT(text) if "inlined_at" in text else None
    return _loc_triple(m), (_loc_triple(at) if at else None)


@dataclass(frozen=True)
class FuncHeader:
    name: str
    is_entry: bool
    linkage: Tuple[str, ...]
    rets: Tuple[ParsedParam, ...]
    params: Tuple[ParsedParam, ...]
    # (name, values, line, col, (line, col) of each value); a value above 0xFFFFFFFF is one that ptxas 13.0
    # refuses ("Constant overflow", reported where it is read), else the 32 bits it reads (legality.u32_field)
    directives: Tuple[Tuple[str, Tuple[int, ...], int, int, Tuple[Tuple[int, int], ...]], ...]
    has_body: bool
    name_line: int
    name_col: int
    # `.pragma "a", "b";` in the header (ptxas takes it in a kernel definition's): (strings, line, col); each is
    # also among `directives` as (".pragma", (), line, col, ())
    pragmas: Tuple[Tuple[Tuple[str, ...], int, int], ...] = ()


class _Walker:
    """Turns the lark tree into records. Constant expressions are evaluated here."""

    def __init__(self, text: str):
        self.text = text
        self.out: List[tuple] = []
        self.errors: List[Tuple[str, int, int, Tuple[str, ...]]] = []  # (message, line, col, notes)
        self._operand_starts: frozenset = frozenset()  # text offsets of the instruction's immediate operands

    def u32(self, tok: Token, what: str) -> int:
        """The number that a place reading 32 bits (`what`: '.align', '.maxntid', ...) reads from the INT token
        `tok`: legality.u32_field; where that is "Constant overflow", an error at the token (unless the lexer
        reports the literal) and the literal's value, which is above 0xFFFFFFFF."""
        v = _int_value(tok.value)
        if int_literal_overflows(tok.value):
            return v
        r = u32_field(v)
        if r is None:
            bad = u32_field_error(v, what)
            self.errors.append((bad[0], tok.line, tok.column, (bad[1],)))
            return v
        return r

    # -- expressions
    def expr(self, t):
        """The value of the constant expression `t` as ptxas 13.0 computes it: an int (-2^63 .. 2^63 - 1 where its
        type is .s64, 0 .. 2^64 - 1 where it is .u64) or a float (typed())."""
        v, k = self.typed(t)
        return v if k != _F32 else _f32_value(v)

    def typed(self, t) -> Tuple[object, int]:
        """(value, kind) of the constant expression `t`, kind one of _S64, _U64, _F64 and _F32 (a 0f literal in its
        own parentheses, as its 32 bits), as ptxas 13.0 computes it: C's rules in 64 bits, except that `%` takes
        and gives unsigned integers, `~` gives an unsigned one and `c ? a : b` has the type of the branch it
        takes (_binop). An error is an _ExprError where ptxas reports it (_reduced)."""
        if isinstance(t, Token):
            ty = t.type
            if ty == "INT":
                v = _int_value(t.value) & _M64
                return v, _U64 if v >> 63 or t.value[-1] == "U" else _S64
            if ty == "DEC_FLOAT":
                return float(t.value), _F64
            if ty == "DOUBLE_HEX":
                return _float_value(t.value)[0], _F64
            raise InternalError(f"unexpected token {ty} in a constant expression")
        d = t.data
        if d == "c_bin":
            c = t.children
            if len(c) == 3:
                a, optok, b = c
            else:  # `&&`, `||`, `|`, `^`, `&` are anonymous tokens, which the tree leaves out
                a, b = c
                optok = self._op_between(a, b)
            x, kx = self.typed(a)
            y, ky = self.typed(b)
            op = optok.value
            try:
                return _binop(op, x, kx, y, ky)
            except _OpError as e:
                if e.crash:  # ptxas names no line: it stops on a signal
                    raise _ExprError(str(e), optok, e.notes) from None
                raise _ExprError(str(e), self._reduced(t, optok, op in _NO_LOOKAHEAD), e.notes) from None
        if d == "c_un":
            optok = t.children[0]
            op = optok.value
            v, k = self.typed(t.children[1])
            if op == "+":
                return v, k
            if k >= _F64:
                if op == "-":
                    return -_f64_of(v, k), _F64
                at = optok
                if op == "!" and optok.start_pos in self._operand_starts:  # ptxas reads on: `!%p` is an operand too
                    at = self._same_line_or(optok, self._next_token(optok.end_pos))
                raise _ExprError(f"'{op}' needs an integer operand, not a floating-point one (ptxas: \"Integer "
                                 "constant expression expected\")", at, _INT_NOTE)
            if op == "-":
                return ((-v) & _M64, k) if k == _U64 else (_s64(-v), _S64)
            if op == "~":
                return ~v & _M64, _U64
            return int(v == 0), _S64
        if d == "c_fparen":  # `(0f3F800000)`
            return int(t.children[0].value[2:], 16), _F32
        if d == "c_cond":  # `c ? a : b`: ptxas 13.0 reads all three, and only integers
            c, q, a, b = t.children
            x, kx = self.typed(c)
            y, ky = self.typed(a)
            z, kz = self.typed(b)
            if kx >= _F64 or ky >= _F64 or kz >= _F64:
                # ptxas 13.0 reports it at the token after the expression, once it has read it all
                raise _ExprError("the `?:` before this has a floating-point operand; it takes integers only (ptxas: "
                                 "\"Integer constant expression expected\")", self._next_token(self._end(t)),
                                 ("write `c ? a : b` of integers; a comparison of floating-point values "
                                  "(`1.5 < 2.5`) is an integer",))
            return (y, ky) if x else (z, kz)  # the type of the branch taken, not C's common type
        raise InternalError(f"unexpected rule {d} in a constant expression")

    def _op_between(self, a, b) -> Token:
        """The operator token between the operands `a` and `b` of a binary constant expression."""
        end = a.end_pos if isinstance(a, Token) else a.meta.end_pos
        start = b.start_pos if isinstance(b, Token) else b.meta.start_pos
        text = self.text
        m = _BIN_OP.search(text, end, start)
        if m is None:
            raise InternalError("no operator between the operands of a constant expression")
        pos = m.start()  # its line counted from the left operand's, not from the start of the text
        line = (a.end_line if isinstance(a, Token) else a.meta.end_line) + text.count("\n", end, pos)
        return Token("OP", m.group(), pos, line, pos - text.rfind("\n", 0, pos))

    def _tok_at(self, pos: int, value: Optional[str] = None) -> Token:
        """A token at the offset `pos` of the text, with its line and column."""
        text = self.text
        return Token("X", text[pos:pos + 1] if value is None else value, pos, text.count("\n", 0, pos) + 1,
                     pos - text.rfind("\n", 0, pos))

    def _skip_blank(self, p: int) -> int:
        """The offset of the first character at or after `p` that is not a blank or in a comment."""
        text = self.text
        n = len(text)
        while p < n:
            if text[p] in " \t\r\n\f":
                p += 1
            elif text.startswith("//", p):
                e = text.find("\n", p)
                p = n if e < 0 else e
            elif text.startswith("/*", p):
                e = text.find("*/", p + 2)
                p = n if e < 0 else e + 2
            else:
                break
        return p

    def _end(self, t, outer: bool = False) -> int:
        """The offset right after the expression `t`, its closing parentheses included (the tree leaves them out
        of its positions): those that close a parenthesis opened inside it, and where `outer` (`t` is a whole
        value: an initial value, an offset), those of the parentheses right before it."""
        text = self.text
        if isinstance(t, Token):
            p, e = t.start_pos, t.end_pos
        else:
            p, e = t.meta.start_pos, t.meta.end_pos
        if outer:
            while p > 0 and text[p - 1] in " \t\r\n(":
                p -= 1
        depth = 0
        while p < e:
            ch = text[p]
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth = max(depth - 1, 0)
            elif text.startswith("//", p) or text.startswith("/*", p):
                p = self._skip_blank(p)
                continue
            p += 1
        while depth:
            p = self._skip_blank(p)
            if text[p:p + 1] != ")":
                break
            p += 1
            depth -= 1
        return p

    def _next_token(self, p: int) -> Token:
        """The token at or after the offset `p`, past blanks and comments."""
        return self._tok_at(self._skip_blank(p))

    def _reduced(self, t, optok: Token, no_lookahead: bool) -> Token:
        """Where an error of the operator `optok` in the expression `t` is reported. ptxas 13.0 names the line of
        the last token it has read when it takes `t` as a whole: `t`'s last token where nothing after it can
        extend its right operand (`*`, `/`, `%`), else the token after `t`. The error is at the operator where
        that stands on the same line, else at that token."""
        end = self._end(t)
        if no_lookahead:
            tok = self._tok_at(end - 1) if self.text[end - 1:end] == ")" else _last_token(t)
        else:
            tok = self._next_token(end)
        return self._same_line_or(optok, tok)

    @staticmethod
    def _same_line_or(at: Token, tok: Token) -> Token:
        """`at` where it stands on the line of `tok`, the token whose line ptxas names, else `tok`."""
        return at if at.line == tok.line else tok

    def _after_value(self, at: Token, t) -> Token:
        """Where ptxas 13.0 reports an error in the value `t` that starts at `at` (an initial value, an offset):
        at the line of the token after it, which it has read when it takes the value."""
        return self._same_line_or(at, self._next_token(self._end(t, True)))

    def imm_syntax(self, t):
        """Syntax of a cexpr operand: ('f', text) for a bare decimal float, 0d literal or `(0f...)` (kept as
        written, NaN payloads and all), ('f', repr) for another floating-point value, else ('i', value)."""
        if isinstance(t, Token) and t.type in ("DEC_FLOAT", "DOUBLE_HEX"):
            return ("f", t.value)
        if isinstance(t, Tree) and t.data == "c_fparen":
            return ("f", t.children[0].value)
        v = self.expr(t)
        if isinstance(v, float):
            return ("f", repr(v))
        return ("i", v)

    # -- operands
    def operand(self, t):
        if isinstance(t, Token):
            raise InternalError(f"bare token {t.type} as an operand")
        d = t.data
        c = t.children
        if d == "op_reg":
            return c[0].value  # a register is its name (a str); every other operand is a tuple
        if d == "op_name":
            return ("n", c[0].value)
        if d == "op_sink":
            return ("_",)
        if d == "op_float":
            return ("f", c[0].value)
        if d == "op_imm":
            return self.imm_syntax(c[0])
        if d == "op_symoff":
            return ("s", c[0].value, self._int_offset(c[2], c[1]))
        if d == "op_pair":
            return ("|", _atom(c[0]), _atom(c[1]))
        if d == "op_vec_pair":  # tex / tld4 `{d0, d1, d2, d3}|p`
            return ("|", self.operand(c[0]), _atom(c[1]))
        if d == "op_not":
            return ("!", _atom(c[1]))
        if d == "op_addr":
            if len(c) > 1 and c[0].data == "addr_base_off":
                # `[%rd1+64, {c0}]`: ptxas 13.0 reads an offset only in a one-part address ("Parsing error near
                # ','"), the tensor map's or texture's too, even +0
                raise _ExprError("the first part of a tensor or texture reference takes no offset (ptxas: \"Parsing "
                                 "error near ',': syntax error\")", c[0].children[1],
                                 ("add the offset to the register first: `add.u64 %rd2, %rd1, 64;` then "
                                  "`[%rd2, {...}]`",))
            return ("a", tuple(self.addr_item(x) for x in c))
        if d == "vector":
            return ("v", tuple(self.operand(x) for x in c))
        if d == "op_call_list":  # registers, names, `_` and immediates
            return ("c", tuple(self.operand(x) for x in c))
        if d == "op_paren":  # `(5)`: a call's one-argument list; `instruction` makes it the constant elsewhere
            return ("c", (self.imm_syntax(c[0]),))
        raise InternalError(f"unexpected operand rule {d}")

    def addr_item(self, t):
        d = t.data
        c = t.children
        if d == "addr_base":
            return ("b", _atom(c[0]), 0)
        if d == "addr_base_off":
            v = self.expr(c[2])
            if isinstance(v, float):
                raise _ExprError("an address offset must be an integer, not a floating-point value (ptxas: \"Integer "
                                 "constant expression expected\")", self._after_value(c[1], c[2]),
                                 ("write a byte offset in integers: `[%rd1+8]`",))
            return ("b", _atom(c[0]), v)
        if d == "addr_abs":
            v = self.expr(c[0])
            if isinstance(v, float):
                x = c[0]
                start = x if isinstance(x, Token) else self._tok_at(x.meta.start_pos)
                raise _ExprError("an absolute address must be an integer, not a floating-point value (ptxas: "
                                 "\"Integer constant expression expected\")", self._after_value(start, x),
                                 ("write a byte address in integers: `[16]`",))
            return ("i", v)
        if d == "vector":
            return self.operand(t)
        raise InternalError(f"unexpected address rule {d}")

    # -- statements
    def walk_module(self, tree: Tree):
        mod = tree.children[0] if tree.data == "start" else tree
        for it in mod.children:
            try:
                self.item(it)
            except _ExprError as e:
                line, col = _pos(e.token, it)
                self.errors.append((str(e), line, col, e.notes))

    def _slice(self, meta) -> str:
        return self.text[meta.start_pos:meta.end_pos]

    def item(self, t: Tree):
        d = t.data
        m = t.meta
        out = self.out
        c = t.children
        if d == "function":
            self.function(t)
        elif d == "module_var":
            linkage = tuple(x.value[1:] for x in c[0].children)
            decl = self.decl(c[1], linkage, module_level=True)
            out.append((m.line, M_VAR, m.column, m.end_line, decl, self._slice(m)))
        elif d == "version_dir":
            out.append((m.line, M_VERSION, m.column, m.end_line, c[0].value, c[0].column))
        elif d == "target_dir":
            out.append((m.line, M_TARGET, m.column, m.end_line, tuple((x.value, x.column) for x in c)))
        elif d == "address_size_dir":
            out.append((m.line, M_ADDR_SIZE, m.column, m.end_line, self.u32(c[0], ".address_size"), c[0].column))
        elif d == "file_dir":
            out.append((m.line, M_FILE, m.column, m.end_line, self.u32(c[0], "a .file index"), c[1].value))
        elif d == "pragma_dir":
            out.append((m.line, M_PRAGMA, m.column, m.end_line, tuple(x.value[1:-1] for x in c)))
        elif d == "alias_dir":
            out.append((m.line, M_ALIAS, m.column, m.end_line, c[0].value, c[1].value, (c[0].line, c[0].column),
                        (c[1].line, c[1].column)))
        elif d == "section":
            out.append((m.line, M_SECTION, m.column, m.line, c[0].value))
            for x in c[1:]:
                if x.data == "label_def":
                    out.append((x.meta.line, R_LABEL, x.meta.column, x.meta.end_line, x.children[0].value))
                else:
                    self.data(x)
            out.append((m.end_line, M_SECTION_END, m.end_column - 1, m.end_line))
        else:
            raise InternalError(f"unexpected module item {d}")

    def data(self, t: Tree):
        """A section's data line `.b8 1, -2, L1+4, L2-L1`: ptxas 13.0 takes an integer literal there, after a `-`
        a signed one (no U, below 2^63), a label or section name with `+` and an integer literal, or the
        difference of two labels; no expression, no floating-point value."""
        vals = []
        ty = t.children[0].value
        for v in t.children[1:]:
            if v.data == "data_value":
                self._data_value(v, ty)
            elif v.data == "data_offset" and v.children[1].value == "-":
                name, minus, n = v.children
                section = name.type == "SECTION_NAME"
                raise _ExprError(f"`{name.value}-{n.value}` in a section's data: ptxas 13.0 adds a number to a "
                                 f"{'section' if section else 'label'}, it does not subtract one, and subtracts a "
                                 "label from a label only (\"syntax error\")", minus if section else n,
                                 (f"write `{name.value}+N` with N from 0, or the difference of two labels "
                                  "(`L2-L1`)",))
            vals.append("".join(_tokens_text(v)))
        m = t.meta
        self.out.append((m.line, R_DATA, m.column, m.end_line, ty, ",".join(vals)))

    def _data_value(self, v: Tree, ty: str):
        """_ExprError where ptxas 13.0 refuses the value `v` (data_value) of a section's data line of type `ty`:
        at the first token past the integer literal, after an optional `-`, that it reads there."""
        x = v.children[0]
        text = self.text
        start, end = v.meta.start_pos, v.meta.end_pos
        if isinstance(x, Token) and x.type in ("NAME", "SECTION_NAME"):
            return
        while start > 0 and text[start - 1] in " \t\r\n(":  # the tree leaves parentheses out of its positions
            start -= 1
        p = self._skip_blank(start)
        neg = text.startswith("-", p)
        if neg:
            p = self._skip_blank(p + 1)
        lit = _DATA_INT.match(text, p)
        if lit is not None:
            unsigned = lit.group().endswith("U") or (_int_value(lit.group()) & _M64) >> 63
            if neg and unsigned:
                n = self._try_expr(x)
                s = _s64(n) if isinstance(n, int) else None
                write = "0x8000000000000000" if s == -(1 << 63) else s if s is not None else lit.group()
                raise _ExprError(f"`-{lit.group()}` in a section's data: ptxas 13.0 takes a `-` before a signed "
                                 "literal only, and a literal with a U or above 2^63 - 1 is unsigned (\"syntax "
                                 "error\")", self._tok_at(p, lit.group()), (f"write `{ty} {write}`",))
            p = self._skip_blank(lit.end())
            if p >= end:
                return
        at = self._tok_at(p)
        n = _f32_value(int(x.value[2:], 16)) if isinstance(x, Token) and x.type == "FLOAT_HEX" else self._try_expr(x)
        if _has_cond(x):
            raise _ExprError("`?:` in a section's data: ptxas 13.0 takes a literal there, not an expression "
                             "(\"syntax error\")", at,
                             (f"write the value as a literal: `{ty} {n if isinstance(n, int) else 1}`",))
        if isinstance(n, float):
            bits = {".b32": ("<f", "<I", 8), ".b64": ("<d", "<Q", 16)}.get(ty)
            try:
                hint = (f"`{ty} 0x{struct.unpack(bits[1], struct.pack(bits[0], n))[0]:0{bits[2]}X}`, its bits"
                        if bits else "an integer literal")
            except OverflowError:  # past the largest .f32
                hint = "an integer literal"
            raise _ExprError("a floating-point value in a section's data: ptxas 13.0 takes an integer literal there "
                             "(\"syntax error\")", at, (f"write {hint}",))
        raise _ExprError("an expression in a section's data: ptxas 13.0 takes an integer literal there, after an "
                         "optional `-`, and no expression (\"syntax error\")", at,
                         (f"write the value as a literal: `{ty} {n if isinstance(n, int) else 1}`",))

    def param_attrs(self, after_type: List[Tree], entry: bool):
        """Attributes after a parameter's type: ptxas 13.0 takes .ptr and .align there for a kernel (not an
        .align before a .ptr, a syntax error), none for a .func ("Illegal placement of kernel parameter
        attribute")."""
        ptr_at = next((i for i, x in enumerate(after_type) if x.data == "ptr"), None)
        for i, x in enumerate(after_type):
            what = self.text[x.meta.start_pos:x.meta.end_pos].split()[0]
            if not entry:
                msg = (f"'{what}' after a .func parameter's type (ptxas: \"Illegal placement of kernel parameter "
                       "attribute\")")
                note = ("write .align before the type (`.param .align 8 .b8 p[8]`); .ptr is for kernel parameters "
                        "only")
            elif x.data == "align" and ptr_at is not None and i < ptr_at:
                msg = "'.align' before '.ptr' after the type: .ptr comes first"
                note = "write `.param .u64 .ptr .global .align 8 p`, or .align before the type"
            else:
                continue
            self.errors.append((msg, x.meta.line, x.meta.column, (note,)))
            return

    def param(self, t: Tree, entry: Optional[bool] = True) -> ParsedParam:
        """A parameter of a kernel (entry True), a .func (False) or a .callprototype (None)."""
        c = t.children
        space = c[0].value[1:]
        align = None
        ptr_space = None
        ty = None
        name = None
        dims: List[Optional[int]] = []
        vector = vector_at = type_at = name_at = align_at = None
        after_type: List[Tree] = []  # attributes written after the type
        for x in c[1:]:
            if isinstance(x, Token):
                if x.type == "TYPE":
                    ty = x.value[1:]
                    type_at = (x.line, x.column)
                elif x.type == "VECTOR":
                    vector = int(x.value[2:])
                    vector_at = (x.line, x.column)
                else:  # NAME / SINK
                    name = x.value
                    name_at = (x.line, x.column)
            elif x.data == "align":
                align, align_at = self.u32(x.children[0], ".align"), (x.children[0].line, x.children[0].column)
            elif x.data == "ptr":
                ptr_space = x.children[0].value[1:] if x.children else "generic"
            elif x.data == "array":
                dims.append(self._dim(x))
            if not isinstance(x, Token) and x.data in ("align", "ptr", "attribute") and ty is not None:
                after_type.append(x)
        count = None
        if dims:
            count = 1
            for d in dims:
                count = None if d is None or count is None else count * d
            if count is None:
                count = 0  # `x[]`: an array of no size, as `x[0]`
        if after_type and entry is not None:  # a .callprototype's parameters take them (ptxas 13.0)
            self.param_attrs(after_type, entry)
        text = " ".join(self.text[t.meta.start_pos:t.meta.end_pos].split())
        return ParsedParam(name or "_", _type_of(ty), ptr_space, align, count if dims else None, None, text,
                           space, SourceLoc("", t.meta.line, t.meta.column), vector, vector_at, type_at, name_at,
                           tuple(dims), align_at)

    def _dim(self, t: Tree) -> Optional[int]:
        """An array dimension: ptxas 13.0 takes an integer literal there and no expression (`[2*4]`, `[(8)]`
        and `[-1]` are syntax errors)."""
        if not t.children:
            return None
        x = t.children[0]
        if isinstance(x, Token) and x.type == "INT" and "(" not in self.text[t.meta.start_pos:x.start_pos]:
            return _int_value(x.value) & _M64  # read modulo 2^64: [18446744073709551616] is [0]
        at = x if isinstance(x, Token) else Token("X", "", x.meta.start_pos, x.meta.line, x.meta.column)
        if _has_cond(x):  # `[1 ? 4 : 8]`: where ptxas stops reading, "Parsing error near '?'"
            at = self._unread(t)
        elif "(" in self.text[t.meta.start_pos:at.start_pos]:
            p = self.text.index("(", t.meta.start_pos)
            at = Token("X", "(", p, self.text.count("\n", 0, p) + 1, p - self.text.rfind("\n", 0, p))
        v = self._try_expr(x)
        val = f"`[{v}]`" if isinstance(v, int) and v >= 0 else "a positive integer such as `[8]`"
        raise _ExprError("an array dimension must be an integer literal; ptxas takes no expression there (\"syntax "
                         "error\")", at, (f"write {val}",))

    def _unread(self, t) -> Token:
        """The first token in an array dimension's brackets `t` past what ptxas 13.0 reads there: an integer
        literal; the first token where there is none."""
        start = t.meta.start_pos + (self.text[t.meta.start_pos] == "[")
        m = _DIM_LITERAL.match(self.text, start, t.meta.end_pos)
        p = m.end() if m else start
        while p < t.meta.end_pos and self.text[p] in " \t\r\n":
            p += 1
        return Token("X", self.text[p:p + 1], p, self.text.count("\n", 0, p) + 1, p - self.text.rfind("\n", 0, p))

    def _try_expr(self, x):
        try:
            return self.expr(x)
        except _ExprError:
            return None

    def _int_offset(self, x, sign: Token) -> int:
        """The value of the integer constant added to a symbol (`table+8`); a floating-point one is an error."""
        v, k = self.typed(x)
        if k >= _F64:
            raise _ExprError("a symbol's offset must be an integer, not a floating-point value (ptxas: \"Integer "
                             "constant expression expected\")", self._after_value(sign, x),
                             ("write a byte offset in integers: `table+8`",))
        if sign.value == "-":
            return (-v) & _M64 if k == _U64 else _s64(-v)
        return v

    def _init_offset(self, base: str, x, sign: Token):
        """_int_offset for an address in an initializer, `base+N`, where ptxas 13.0 takes no `-`."""
        if sign.value == "-":
            n = _offset_text(self.text, sign.end_pos)
            n = n if n.replace("_", "").isalnum() or _parenthesised(n) else f"({n})"
            raise _ExprError(f"`{base}-` in an initial value: an initializer adds an offset, it does not subtract "
                             "one (ptxas: \"Parsing error near '-': syntax error\")", sign,
                             (f"add a negative offset: `{base}+(-{n})` (a function's address takes no offset)",))
        self._int_offset(x, sign)

    def decl(self, t: Tree, linkage=(), module_level=False) -> Decl:
        c = t.children
        if isinstance(c[0], Tree):  # `.align 8 .global .f32 x;`: ptxas 13.0 takes an .align before the space
            c = [c[1], c[0]] + c[2:]
        space = c[0].value[1:]
        align = vector = vector_at = type_at = align_at = None
        ty = ""
        ptr = False
        items = []
        prefix_end = t.meta.start_pos
        for x in c[1:]:
            if isinstance(x, Token):
                if x.type == "TYPE":
                    ty = x.value[1:]
                    type_at = (x.line, x.column)
                    prefix_end = x.end_pos
                elif x.type == "VECTOR":
                    vector = int(x.value[2:])
                    vector_at = (x.line, x.column)
            elif x.data == "align":
                align, align_at = self.u32(x.children[0], ".align"), (x.children[0].line, x.children[0].column)
                prefix_end = max(prefix_end, x.meta.end_pos)
                if ty:  # ptxas 13.0: "Parsing error near '.align': syntax error"
                    self.errors.append((f"'.align' after the type .{ty}: a declaration's .align goes before its "
                                        "vector size and type", x.meta.line, x.meta.column,
                                        (f"write `.{space} .align {x.children[0].value} "
                                         f"{f'.v{vector} ' if vector else ''}.{ty} ...`",)))
            elif x.data == "ptr":
                ptr = True
                prefix_end = max(prefix_end, x.meta.end_pos)
            elif x.data == "attribute":
                prefix_end = max(prefix_end, x.meta.end_pos)
            elif x.data in ("var_item", "var_range"):
                items.append(self.var_item(x, ty))
        start = t.meta.start_pos
        prefix = " ".join(self.text[start:prefix_end].split())
        return Decl(space, ty, tuple(items), align, vector, linkage, ptr, prefix, vector_at, type_at, align_at)

    def var_item(self, t: Tree, ty: str = "") -> DeclItem:
        """One name of a declaration of the type `ty` (its name without the dot)."""
        c = t.children
        name = c[0].value
        text = " ".join(self.text[t.meta.start_pos:t.meta.end_pos].split())
        if t.data == "var_range":
            return DeclItem(name, c[0].column, count=self.u32(c[1], "a register count"), text=text)
        dims = []
        init = None
        at: List[Tuple[int, int, int, object]] = []
        lists: List[Tuple[int, int]] = []
        for x in c[1:]:
            if x.data == "array":
                dims.append(self._dim(x))
            elif x.data == "initializer":
                init = self.init(x.children[0], at, lists, ty in _WIDE_FLOAT)
        return DeclItem(name, c[0].column, None, tuple(dims), init, text, tuple(at), tuple(lists))

    def _value_at(self, t) -> Tuple[int, int, int]:
        """(line, column, length) where ptxas 13.0 reports an error in the initial value `t`: at the line of the
        token after it (_after_value), the value itself where that is its line."""
        m = t.meta
        text = self.text
        p = self._skip_blank(self._end(t, True))
        if text.find("\n", m.start_pos, p) < 0:
            return m.line, m.column, m.end_pos - m.start_pos
        return m.line + text.count("\n", m.start_pos, p), p - text.rfind("\n", 0, p), 1

    def init(self, t, at: list, lists: list, wide: bool = False):
        """The value of an initializer; each value's (line, column, length, value) goes to `at`, the (line,
        column) of each list's closing brace to `lists`, in the order the lists open. `wide`: the variable holds
        64-bit floating-point values (.f64, .b64), where ptxas 13.0 reads a 0f literal's 32 bits as the low bits of
        a .f64 (`.f64 x = 0f3F800000` holds 5.26e-315)."""
        if isinstance(t, Token):
            raise InternalError("bare token initializer")
        d = t.data
        c = t.children
        if d == "init_list":
            lists.append(None)
            i = len(lists) - 1
            v = tuple(self.init(x, at, lists, wide) for x in c)
            lists[i] = (t.meta.end_line, t.meta.end_column - 1)
            return v
        line, col, span = self._value_at(t)
        if d == "init_value":
            x = c[0]
            if isinstance(x, Token) and x.type == "FLOAT_HEX":
                v, k = int(x.value[2:], 16), _F32
            else:
                v, k = self.typed(x)
            if k == _F32:
                v = _f64_of(v, k) if wide else _f32_value(v)
            at.append((line, col, span, v))
            return v
        if d in ("init_symbol", "init_generic"):
            at.append((line, col, span, "sym"))
        if d == "init_symbol":
            if len(c) == 3:
                self._init_offset(c[0].value, c[2], c[1])
            return ("sym", c[0].value, False, len(c) == 3)
        if d == "init_generic":
            if c[0].value != "generic":  # ptxas 13.0 knows generic() only, in lower case
                raise _ExprError(f"{c[0].value}() in an initial value: generic() is the one conversion an "
                                 f"initializer takes (ptxas: \"Parsing error near '{c[0].value}': syntax error\")",
                                 c[0], (f"write `generic({c[1].value})`, or `{c[1].value}` for its address as it is",))
            if len(c) == 4:
                self._init_offset(f"generic({c[1].value})", c[3], c[2])
            return ("sym", c[1].value, True, len(c) == 4)
        if d == "init_field":  # `name = value`: at the value, where ptxas 13.0 reports a value it does not know
            x = c[1]
            if isinstance(x, Token) and x.type == "NAME":
                v = x.value
            elif isinstance(x, Token) and x.type == "FLOAT_HEX":
                v = _float_value(x.value)[0]
            else:
                v = self.expr(x)
            xm = x if isinstance(x, Token) else x.meta
            xs = xm.end_pos - xm.start_pos if xm.end_line == xm.line else 1
            at.append((xm.line, xm.column, xs, "field"))
            return ("field", c[0].value, v)
        raise InternalError(f"unexpected initializer rule {d}")

    def function(self, t: Tree):
        c = t.children
        linkage = tuple(x.value[1:] for x in c[0].children)
        is_entry = c[1].value == ".entry"
        rets: Tuple[ParsedParam, ...] = ()
        params: Tuple[ParsedParam, ...] = ()
        name_tok = None
        dirs = []
        pragmas: list = []
        body = None
        for x in c[2:]:
            if isinstance(x, Token):
                name_tok = x
            elif x.data == "ret_params":
                rets = tuple(self.param(p, is_entry) for p in x.children)
            elif x.data == "params":
                params = tuple(self.param(p, is_entry) for p in x.children)
            elif x.data == "perf_dir":
                dirs.append((x.children[0].value, tuple(self.u32(v, x.children[0].value) for v in x.children[1:]),
                             x.meta.line, x.meta.column, tuple((v.line, v.column) for v in x.children[1:])))
            elif x.data == "head_pragma":
                dirs.append((".pragma", (), x.meta.line, x.meta.column, ()))
                pragmas.append((tuple(v.value[1:-1] for v in x.children), x.meta.line, x.meta.column))
            elif x.data == "body":
                body = x
        m = t.meta
        hdr = FuncHeader(name_tok.value, is_entry, linkage, rets, params, tuple(dirs), body is not None,
                         name_tok.line, name_tok.column, tuple(pragmas))
        end_line = body.meta.line if body is not None else m.end_line
        self.out.append((m.line, M_FUNC, m.column, end_line, hdr))
        if body is None:
            return
        bm = body.meta
        self.out.append((bm.line, M_BODY, bm.column, bm.line))
        self.stmts(body.children)
        self.out.append((bm.end_line, M_BODY_END, bm.end_column - 1, bm.end_line))

    def stmts(self, children):
        out = self.out
        for s in children:
            try:
                self.stmt(s, out)
            except _ExprError as e:
                line, col = _pos(e.token, s)
                self.errors.append((str(e), line, col, e.notes))

    def stmt(self, s: Tree, out):
        d = s.data
        m = s.meta
        if d == "instruction":
            out.append(self.instruction(s))
        elif d == "label_def":
            out.append((m.line, R_LABEL, m.column, m.end_line, s.children[0].value))
        elif d == "var_decl":
            decl = self.decl(s)
            out.append((m.line, R_DECL, m.column, m.end_line, decl, self._slice(m) + ";"))
        elif d == "block":
            out.append((m.line, R_OPEN, m.column, m.line))
            self.stmts(s.children)
            out.append((m.end_line, R_CLOSE, m.end_column - 1, m.end_line))
        elif d == "loc_dir":
            for x in s.children[:3]:
                self.u32(x, "a .loc number")
            for a in s.children[3:]:
                if a.data == "loc_inlined_at":
                    for x in a.children[1:]:
                        self.u32(x, "an inlined_at number")
            out.append((m.line, R_LOC, m.column, m.end_line, self._slice(m)))
        elif d == "pragma_dir":
            out.append((m.line, R_PRAGMA, m.column, m.end_line, tuple(x.value[1:-1] for x in s.children)))
        elif d == "callprototype":
            rets = params = ()
            for x in s.children:
                if isinstance(x, Tree) and x.data == "ret_params":
                    rets = tuple(self.param(p, None) for p in x.children)
                elif isinstance(x, Tree) and x.data == "params":
                    params = tuple(self.param(p, None) for p in x.children)
            out.append((m.line, R_PROTO, m.column, m.end_line, (rets, params), self._slice(m)))
        elif d in ("branchtargets", "calltargets"):
            out.append((m.line, R_TARGETS, m.column, m.end_line, d, tuple((x.value, x.line, x.column)
                                                                          for x in s.children), self._slice(m)))
        else:
            raise InternalError(f"unexpected statement rule {d}")

    def instruction(self, s: Tree) -> tuple:
        m = s.meta
        c = s.children
        i = 0
        guard = None
        if isinstance(c[0], Tree):  # guard
            g = c[0].children
            guard = (len(g) == 2, g[-1].value)
            i = 1
        opcode = c[i].value
        call = opcode == "call" or opcode.startswith("call.")
        self._operand_starts = frozenset(x.meta.start_pos for x in c[i + 1:] if x.data == "op_imm")
        if call:  # `(0f3F800000)` is a list of one float in a call, as `(1.5)` is
            ops = tuple(("c", (self.imm_syntax(x.children[0]),)) if x.data == "op_imm" and
                        _is_fparen(x.children[0]) else self.operand(x) for x in c[i + 1:])
        else:
            ops = tuple(self.operand(x) if x.data != "op_paren" else self.imm_syntax(x.children[0]) for x in c[i + 1:])
        return (m.line, R_INSTR, m.column, m.end_line, guard, opcode, ops)


_CMP = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, ">": operator.gt, "<=": operator.le,
        ">=": operator.ge}
_BIN_OP = re.compile(r"&&|\|\||[&|^]")
# the integer literal that an array dimension holds
_DIM_LITERAL = re.compile(r"[ \t\r\n]*(?:0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+)[uU]?")
# an integer literal in a section's data, not the start of a floating-point one (`1.5`, `1e3`, `0f3F800000`)
_DATA_INT = re.compile(r"(?:0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+)U?(?![0-9A-Za-z_.$])")


def _has_cond(t) -> bool:
    """Whether the constant expression `t` has a `?:` in it."""
    return isinstance(t, Tree) and (t.data == "c_cond" or any(_has_cond(c) for c in t.children))


_INT_NOTE = ("write integer operands (1, not 1.0); bitwise, logical and shift operators take no floating-point "
             "value",)
_DIV0_NOTE = ("ptxas computes every part of a constant expression, the branch of a `?:` that is not taken included",)


# the kinds of a constant expression's value: a signed or unsigned 64-bit integer, a floating-point value (a
# Python float), or a 0f literal in its own parentheses, kept as its 32 bits until an operator reads it
_S64, _U64, _F64, _F32 = 0, 1, 2, 3
_WIDE_FLOAT = frozenset(("f64", "b64"))
# operators whose expression ptxas 13.0 takes as a whole without reading the token after it (_Walker._reduced)
_NO_LOOKAHEAD = frozenset(("*", "/", "%"))


class _OpError(Exception):
    """An operator that ptxas 13.0 refuses on its operands; `crash`: it stops on a signal there instead."""

    def __init__(self, message: str, notes: Tuple[str, ...], crash: bool = False):
        super().__init__(message)
        self.notes = notes
        self.crash = crash


def _s64(v: int) -> int:
    """`v` modulo 2^64 as a signed 64-bit integer."""
    v &= _M64
    return v - (1 << 64) if v >> 63 else v


def _f32_value(bits: int) -> float:
    """The .f32 value of 32 bits."""
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def _f64_of(v, k: int) -> float:
    """The floating-point value that ptxas 13.0 computes with: a 0f literal's 32 bits read as the low bits of a
    .f64 (`(0f3F800000)` is 5.26e-315 in `-(0f3F800000)` or `2.0*(0f3F800000)`, in which an .f32 gets 0)."""
    return struct.unpack("<d", struct.pack("<Q", v))[0] if k == _F32 else v


def _last_token(t) -> Token:
    while not isinstance(t, Token):
        t = t.children[-1]
    return t


def _binop(op: str, x, kx: int, y, ky: int) -> Tuple[object, int]:
    """(value, kind) of `x op y` as ptxas 13.0 computes it (probed over every operator and kind of operand in
    tests/test_lint_cexpr_unsigned.py). Integers follow C's usual arithmetic conversions (unsigned where either
    operand is) with these exceptions: a shift has the type of its left operand and counts modulo 64 (`1 << 65`
    is 2, `1 << -1` is 2^63); `%` computes in unsigned integers and gives an unsigned one (`-7 % 2` is 1);
    `-2^63 / -1` in signed integers stops ptxas. A comparison, `&&` and `||` give a signed 0 or 1.
    Floating-point values add, subtract, multiply, divide and compare; an integer and a floating-point
    operand is a type mismatch. Raises _OpError."""
    fx, fy = kx >= _F64, ky >= _F64
    if fx or fy:
        if fx != fy:
            raise _OpError(f"'{op}' of an integer and a floating-point value (ptxas: \"Constant expression type "
                           "mismatch\")", ("write both operands as integers (2) or both as floating-point (2.0); "
                                           "PTX does not convert between them in a constant expression",))
        x, y = _f64_of(x, kx), _f64_of(y, ky)
        if op == "+":
            return x + y, _F64
        if op == "-":
            return x - y, _F64
        if op == "*":
            return x * y, _F64
        if op == "/":
            if y == 0:
                raise _OpError("division by zero in a constant expression (ptxas: \"Constant expression has "
                               "division by zero\")", _DIV0_NOTE)
            return x / y, _F64
        f = _CMP.get(op)
        if f is not None:
            return int(f(x, y)), _S64
        raise _OpError(f"'{op}' needs integer operands, not floating-point ones (ptxas: \"Integer constant "
                       "expression expected\")", _INT_NOTE)
    k = _U64 if kx == _U64 or ky == _U64 else _S64
    if op == "+":
        r = x + y
    elif op == "-":
        r = x - y
    elif op == "*":
        r = x * y
    elif op == "&":
        r = x & y
    elif op == "|":
        r = x | y
    elif op == "^":
        r = x ^ y
    elif op in ("<<", ">>"):
        k = kx
        n = y & 63
        r = x << n if op == "<<" else x >> n  # x is signed where its type is: an arithmetic shift
    elif op in ("/", "%"):
        if y == 0:
            raise _OpError("division by zero in a constant expression (ptxas: \"Constant expression has division by "
                           "zero\")", _DIV0_NOTE)
        if op == "%":
            return (x & _M64) % (y & _M64), _U64
        if k == _U64:
            return (x & _M64) // (y & _M64), _U64
        if y == -1 and x == -(1 << 63):
            raise _OpError("-9223372036854775808 / -1 in signed 64-bit integers: ptxas 13.0 crashes on it (a "
                           "floating-point exception)", ("the quotient, 2^63, is past the largest signed 64-bit "
                                                          "value: write 0x8000000000000000",), True)
        q = abs(x) // abs(y)
        return (q if (x >= 0) == (y >= 0) else -q), _S64  # C truncates toward zero
    elif op == "&&":
        return int(x != 0 and y != 0), _S64
    elif op == "||":
        return int(x != 0 or y != 0), _S64
    else:
        f = _CMP.get(op)
        if f is None:
            raise InternalError(f"unknown operator {op}")
        if k == _U64:
            return int(f(x & _M64, y & _M64)), _S64
        return int(f(x, y)), _S64
    return (r & _M64, _U64) if k == _U64 else (_s64(r), _S64)


def _is_fparen(t) -> bool:
    return isinstance(t, Tree) and t.data == "c_fparen"


def _atom(t) -> tuple:
    if t.type == "REG":
        return t.value
    if t.type == "SINK":
        return ("_",)
    return ("n", t.value)


def _tokens_text(t) -> List[str]:
    if isinstance(t, Token):
        return [t.value]
    out = []
    for c in t.children:
        out.extend(_tokens_text(c))
    return out


def _pos(tok, tree) -> Tuple[int, int]:
    if isinstance(tok, Token):
        return tok.line, tok.column
    m = tree.meta
    return m.line, m.column


_TYPE_CACHE: Dict[str, Type] = {}


def _type_of(name: Optional[str]) -> Optional[Type]:
    """The Type of a TYPE token's name; opaque types (.texref) and newer ones get a private Type."""
    if not name:
        return None
    try:
        return get_type(name)
    except ValueError:
        t = _TYPE_CACHE.get(name)
        if t is None:
            bits = {"texref": 64, "samplerref": 64, "surfref": 64}.get(name)
            if bits is None:
                digits = re.findall(r"\d+", name.split("x")[0])
                # an fp8 or fp6 value in 8 bits, an fp4 one (.e2m1) in 4: .e2m1x2 is 8 bits, .e4m3x4 32,
                # .e2m1x4 16; .u16x2 is 32 bits, .f32x2 64
                bits = 4 if name.startswith("e2m1") else 8 if name.startswith(("e", "ue", "s2f6")) else \
                    int(digits[-1]) if digits else 32
                if name.endswith(("x2", "x4")):
                    bits *= int(name[-1])
            kind = "opaque" if name in ("texref", "samplerref", "surfref") else "fp8"
            t = _TYPE_CACHE[name] = Type(name, bits, kind, None, None)
        return t


# ------------------------------------------------------------------------------------- fast operand parse
def _operand(f: _Fast, t: str):
    """Syntax of one operand's text, or None when the fast path does not take it (lark then does)."""
    c = t[0]
    if c == "%":
        if f.reg_full.match(t):
            return t
        m = f.pair.match(t)
        if m:
            return ("|", _atom_text(f, m.group(1)), _atom_text(f, m.group(2)))
        return None
    if c == "[":
        m = f.addr.match(t)
        if m:
            base = _atom_text(f, m.group(1))
            if m.group(3) is None:
                return ("a", (("b", base, 0),))
            return ("a", (("b", base, _literal(bool(m.group(2)), m.group(3))),))
        m = f.addr_abs.match(t)
        if m:
            return ("a", (("i", _literal(False, m.group(1))),))
        if t[-1:] == "]" and "," in t:
            # `[tmap, {c0, c1}]`, `[tex, sampler, {x, y}]`: parts are addresses or vectors
            inner = t[1:-1]
            if not f.items_full.match(inner):
                return None
            items = []
            for part in f.items.findall(inner):
                part = part.strip()
                if not part:
                    return None
                if part[0] == "{":
                    v = _operand(f, part)
                    if v is None:
                        return None
                    items.append(v)
                    continue
                if any(ch in part for ch in "[](){},") or not items and "+" in part:
                    return None           # (an offset on the first part: the grammar's path reports it)
                a = _operand(f, "[" + part + "]")
                if a is None or len(a[1]) != 1:
                    return None
                items.append(a[1][0])
            return ("a", tuple(items))
        return None
    if c == "{":
        m = f.vec.match(t)
        if not m:
            return None
        elems = []
        for e in m.group(1).split(","):
            e = e.strip()
            if not e:
                return None
            s = _operand(f, e)
            if s is None or (type(s) is not str and s[0] not in ("n", "_", "f", "i")):
                return None
            elems.append(s)
        return ("v", tuple(elems))
    if c == "(":
        # a call's list of registers, names, `_` and immediates; `(5)` is left to lark, which tells a
        # one-argument list from a parenthesised constant by the opcode
        m = f.call.match(t)
        if not m:
            return None
        inner = m.group(1)
        if not inner.strip():
            return ("c", ())
        items = []
        for x in inner.split(","):
            x = x.strip()
            if not x or x[0] in "({[!":
                return None
            s = _operand(f, x)
            if s is None or (type(s) is not str and s[0] not in ("n", "_", "i", "f")):
                return None
            items.append(s)
        if len(items) == 1 and type(items[0]) is tuple and items[0][0] in ("i", "f"):
            return None
        return ("c", tuple(items))
    if c == "!":
        m = f.neg.match(t)
        return ("!", _atom_text(f, m.group(1))) if m else None
    if c == "-" or "0" <= c <= "9":
        m = f.int_full.match(t)
        if m:
            return ("i", _literal(bool(m.group(1)), m.group(2)))
        if c != "-" and f.float_full.match(t):
            return ("f", t)
        return None
    if t == "_":
        return ("_",)
    if f.name_full.match(t):
        return ("n", t)
    m = f.pair.match(t)
    if m:
        return ("|", _atom_text(f, m.group(1)), _atom_text(f, m.group(2)))
    return None


def _atom_text(f: _Fast, t: str) -> tuple:
    return t if t[0] == "%" else ("n", t)


def _split_operands(f: _Fast, ops: str):
    """Top-level comma split of an operand list, or None when it does not split cleanly."""
    if "{" in ops or "(" in ops or "[" in ops and "," in ops[ops.index("["):]:
        if not f.items_full.match(ops):
            return None
        return [x.strip() for x in f.items.findall(ops)]
    return [x.strip() for x in ops.split(",")]


def _fast_instr(f: _Fast, m, cache: dict, lineno: int):
    """The record of a line matched by _Fast.instr, or None when an operand is not fast-path syntax.

    `cache` maps operand-list texts to their syntax, and cache[None] single operand texts (per file)."""
    ops_text = m.group(5)
    if ops_text:
        syn = cache.get(ops_text)
        if syn is None and f.simple_ops.match(ops_text):
            syn = cache[ops_text] = tuple([p if p[0] == "%" else _int_syntax(p)
                                           for p in [x.strip() for x in ops_text.split(",")]])
        elif syn is None:
            parts = _split_operands(f, ops_text)
            if parts is None:
                return None
            out = []
            one = cache.get(None)
            if one is None:
                one = cache[None] = {}
            for p in parts:
                s = one.get(p)
                if s is None:
                    if not p:
                        return None
                    s = _operand(f, p)
                    if s is None:
                        return None
                    one[p] = s
                out.append(s)
            syn = cache[ops_text] = tuple(out)
    else:
        syn = ()
    g = m.group(3)
    guard = None if g is None else (m.group(2) == "!", g)
    col = len(m.group(1)) + 1
    return (lineno, R_INSTR, col, lineno, guard, m.group(4), syn)


# ---------------------------------------------------------------------------------------------- results
@dataclass
class Section:
    name: str
    loc: SourceLoc
    labels: List[str] = field(default_factory=list)
    refs: List[Tuple[str, int, int]] = field(default_factory=list)  # (name, line, col) of referenced symbols


@dataclass
class FunctionInfo:
    """What the linter needs about a parsed function beyond the IR."""

    header: FuncHeader
    fn: Function
    defined: bool
    loc: SourceLoc


@dataclass
class ParseResult:
    """A parsed module plus the facts the IR does not hold (declarations, sections, targets)."""

    module: Optional[Module]
    diagnostics: List[Diagnostic]
    lines: List[str]
    filename: str
    version: Optional[Tuple[str, SourceLoc]] = None
    targets: List[Tuple[str, SourceLoc]] = field(default_factory=list)
    address_size: Optional[Tuple[int, SourceLoc]] = None
    functions: Dict[str, FunctionInfo] = field(default_factory=dict)  # every .entry/.func, declared or defined
    declarations: List[FunctionInfo] = field(default_factory=list)  # in order, prototypes included
    aliases: Dict[str, str] = field(default_factory=dict)  # `.alias a, b;`: a -> b (the first for a)
    # each `.loc` in order: (its text, where); loc_numbers() reads its numbers
    loc_dirs: List[Tuple[str, SourceLoc]] = field(default_factory=list)
    # each `.pragma` at module scope and in a body: (its strings, where, "module" or "body"); a header's are in
    # its FuncHeader
    pragmas: List[Tuple[Tuple[str, ...], SourceLoc, str]] = field(default_factory=list)
    # each `.alias a, b;` in order: (a, b, where a is written, where b is written)
    alias_dirs: List[Tuple[str, str, SourceLoc, SourceLoc]] = field(default_factory=list)
    sections: List[Section] = field(default_factory=list)
    files: Dict[int, str] = field(default_factory=dict)
    module_labels: Dict[str, SourceLoc] = field(default_factory=dict)  # labels inside sections
    local_names: set = field(default_factory=set)  # every function-scope variable and parameter name
    protos: Dict[Tuple[str, str], tuple] = field(default_factory=dict)  # (function, label) -> (rets, params)
    decls: Dict[int, Tuple[Raw, Decl]] = field(default_factory=dict)  # id(statement) -> (statement, declaration)
    # id(statement) -> (statement, its TargetList): the `.branchtargets` and `.calltargets` lists of bodies
    target_lists: Dict[int, Tuple[Raw, "TargetList"]] = field(default_factory=dict)
    stats: Dict[str, int] = field(default_factory=dict)
    # a variable's name -> the names its initializer takes the address of (`.global .u64 tbl[2] = {f, g};`), for
    # the variables that have such an initializer, at module scope and in bodies
    init_refs: Dict[str, Tuple[str, ...]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not any(d.severity == "error" for d in self.diagnostics)

    def source_line(self, line: int) -> Optional[str]:
        if 1 <= line <= len(self.lines):
            return self.lines[line - 1]
        return None

    def decl_of(self, st) -> Optional[Decl]:
        """The parsed declaration (space, vector width, type, names) of a declaration statement of a function
        body, which the IR keeps as a Raw; None for any other statement."""
        e = self.decls.get(id(st))
        return e[1] if e is not None and e[0] is st else None

    def target_list_of(self, st) -> Optional["TargetList"]:
        """The parsed `.branchtargets` or `.calltargets` list of a statement of a function body, which the IR
        keeps as a Raw; None for any other statement."""
        e = self.target_lists.get(id(st))
        return e[1] if e is not None and e[0] is st else None


@dataclass(frozen=True)
class TargetList:
    """`$L: .calltargets f, g;` or `$T: .branchtargets $A, $B;` as the grammar reads it."""

    kind: str  # 'calltargets' or 'branchtargets'
    label: Optional[str]  # the label defined right before it; None where there is none (a syntax error)
    names: Tuple[Tuple[str, SourceLoc], ...]  # each name of the list, where it is written


# ----------------------------------------------------------------------------------------------- scopes
_ARRAY_MEMBER = re.compile(r"(.*?)(\d+)\Z")
# SourceLoc is a frozen dataclass; on the hot path one is made by setting its fields directly (the same
# object its __init__ would make, at 60% of the cost)
_new = object.__new__
_setattr = object.__setattr__
_DIGITS = "0123456789"


class _Scope:
    __slots__ = ("regs", "arrays", "vars", "cache", "parent", "names")

    def __init__(self, parent: Optional["_Scope"]):
        self.regs: Dict[str, Reg] = {}
        self.arrays: Dict[str, Tuple[Type, int, SourceLoc]] = {}
        self.vars: Dict[str, ParamSym] = {}
        self.names: Dict[str, SourceLoc] = {}  # every declared name of this scope, for redefinitions
        self.cache: Dict[tuple, object] = {}
        self.parent = parent


# opcodes whose name operands are labels (branch targets, jump tables, call prototypes)
_BRANCHES = ("bra", "brx")


class _IRBuilder:
    """One ordered pass over the merged records: builds the IR and checks the fast path's placement."""

    def __init__(self, res: ParseResult, sregs: Dict[str, Type]):
        self.res = res
        self.file = res.filename
        self.sregs = sregs
        self.diags = res.diagnostics
        self.violations: List[int] = []
        self.module_vars: Dict[str, ParamSym] = {}
        self.var_shapes: Dict[str, list] = {}  # each module variable's first line and declarations so far
        self.module = Module(None, None, 64)  # target/version filled from the directives
        self.fn: Optional[Function] = None
        self.fn_name = ""
        self.scope: Optional[_Scope] = None
        self.in_body = False
        self.section: Optional[Section] = None
        self.op_kind: Dict[str, int] = {}
        self.brace_lines: List[int] = []
        self.body: list = []

    def loc(self, line: int, col: int) -> SourceLoc:
        return SourceLoc(self.file, line, col)

    def error(self, code: str, message: str, line: int, col: int, span: int = 1, notes=(), severity="error"):
        self.diags.append(Diagnostic(code, severity, message, self.loc(line, col), tuple(notes),
                                     self.res.source_line(line), span))

    def type_version(self, tname: Optional[str], scalar: bool, at: Optional[Tuple[int, int]]):
        """PTX-E-VERSION at the type of a declaration that the module's .version is too early for
        (legality.declared_type_version: a scalar .b128 before PTX ISA 8.3)."""
        if at is None or self.res.version is None:
            return
        try:
            version = read_version(self.res.version[0])
        except ValueError:
            return      # the .version directive's own error
        bad = declared_type_version(tname, scalar, version)
        if bad is not None:
            self.error("PTX-E-VERSION", bad[0], at[0], at[1], len(tname or "") + 1, (bad[1],))

    def alignment(self, align: Optional[int], at: Optional[Tuple[int, int]], param: bool = False):
        """PTX-E-DECL at the number of an .align that ptxas 13.0 refuses (legality.align_error); `param`: of a
        .param that a body declares or a .func definition's .param parameter. A number above 0xFFFFFFFF is one
        the parser has reported ("Constant overflow")."""
        if align is None or at is None or align > 0xFFFFFFFF:
            return
        bad = align_error(align, param)
        if bad is not None:
            m = _WORD.match(self.res.source_line(at[0]) or "", at[1] - 1)
            self.error("PTX-E-DECL", bad[0], at[0], at[1], len(m.group()) if m else 1, (bad[1],))

    def run(self, recs: List[tuple]):
        last_end = 0
        op_kind = self.op_kind
        file = self.file
        sregs = self.sregs
        for rec in recs:
            kind = rec[1]
            line = rec[0]
            if line < last_end and kind in _FAST_KINDS:
                self.violations.append(line)
                continue
            if kind == R_INSTR:
                if not self.in_body:
                    self.violations.append(line)
                    continue
                # the hot path (most statements of a file), inlined: plain instructions whose operands
                # resolve through the scope's cache
                opcode = rec[5]
                k = op_kind.get(opcode)
                if k == 0 and rec[4] is None:
                    sc = self.scope
                    cache = sc.cache
                    ops = []
                    for s in rec[6]:
                        o = cache.get(s)
                        if o is None:
                            if type(s) is str and sc.parent is None and s not in sregs:
                                # a register first seen here, in the function's own scope: mostly a member
                                # of a `.reg .b32 %r<N>;` range
                                o = sc.regs.get(s)
                                if o is None:
                                    prefix = s.rstrip(_DIGITS)
                                    a = sc.arrays.get(prefix) if len(prefix) < len(s) else None
                                    if a is not None and int(s[len(prefix):]) < a[1]:
                                        o = sc.regs[s] = Reg(s, a[0], self.fn, prefix)
                                    else:
                                        o = self.resolve(s)
                            else:
                                o = self.resolve(s)
                            cache[s] = o
                        ops.append(o)
                    loc = _new(SourceLoc)
                    _setattr(loc, "__dict__", {"file": file, "line": line, "col": rec[2], "function": None})
                    self.body.append(Instr(opcode, tuple(ops), None, loc))
                else:
                    self.instr(rec)
            elif kind == R_SECTION:
                if self.in_body or self.section is not None or self.fn is not None:
                    self.violations.append(line)
                    continue
                self.fast_section(rec)
            elif kind < 10:
                self.body_stmt(rec)
            else:
                self.module_item(rec)
            if rec[3] > last_end:
                last_end = rec[3]

    # -- module level
    def module_item(self, rec):
        kind = rec[1]
        line, col = rec[0], rec[2]
        res = self.res
        if kind == M_FUNC:
            self.function(rec)
        elif kind == M_BODY:
            self.in_body = True
            self.brace_lines = []
            self.scope = _Scope(None)
            for p in self.fn.params:
                self.declare_var(ParamSym(p.name, p.space, p.type, p.array, p.align, True), p.loc.line, p.loc.col)
            for p in self.fn.rets:
                self.declare_var(ParamSym(p.name, p.space, p.type, p.array, p.align, ret=True), p.loc.line, p.loc.col)
        elif kind == M_BODY_END:
            if self.scope is not None and self.scope.parent is not None:
                # a fast '{' line whose block lark closed with the function body
                self.violations.extend(self.brace_lines)
            self.in_body = False
            self.fn = None
            self.scope = None
        elif kind == M_VAR:
            self.module_var(rec)
        elif kind == M_VERSION:
            res.version = (rec[4], self.loc(line, rec[5]))
        elif kind == M_TARGET:
            res.targets.extend((n, self.loc(line, c)) for n, c in rec[4])
        elif kind == M_ADDR_SIZE:
            res.address_size = (rec[4], self.loc(line, rec[5]))
            self.module.address_size = rec[4]
        elif kind == M_FILE:
            if rec[4] in res.files and rec[4] <= 0xFFFFFFFF:
                self.error("PTX-E-DIRECTIVE", f".file {rec[4]} is given twice (ptxas: \"Duplicate file index "
                                              f"#{rec[4]}\")", line, col, len(".file"),
                           ("give each source file its own index",))
            res.files.setdefault(rec[4], rec[5][1:-1])
        elif kind == M_SECTION:
            self.section = Section(rec[4], self.loc(line, col))
            res.sections.append(self.section)
        elif kind == M_SECTION_END:
            self.section = None
        elif kind == M_ALIAS:
            res.aliases.setdefault(rec[4], rec[5])
            res.alias_dirs.append((rec[4], rec[5], self.loc(*rec[6]), self.loc(*rec[7])))
        elif kind == M_PRAGMA:
            res.pragmas.append((rec[4], self.loc(line, col), "module"))
        else:
            raise InternalError(f"unknown record kind {kind}")

    def fast_section(self, rec):
        sec = Section(rec[4], self.loc(rec[0], rec[2]))
        self.res.sections.append(sec)
        for name, line, col in rec[5]:
            sec.labels.append(name)
            if name in self.res.module_labels:
                self.error("PTX-E-DUP-LABEL", f"label '{name}' is defined twice", line, col, len(name))
            self.res.module_labels[name] = self.loc(line, col)
        sec.refs.extend(rec[6])

    def module_var(self, rec):
        decl: Decl = rec[4]
        line = rec[0]
        ty = _type_of(decl.type)
        bad_vector = self.vector_shape(decl)
        # earlier statements' variables, not this one's (which it declares one by one below)
        mvars = self.module_vars
        own = {it.name for it in decl.items}
        before = {n: mvars[n].space for n in own if n in mvars}
        functions = self.res.functions

        def resolve(name: str) -> Optional[str]:
            if name in own:
                space = before.get(name)
            else:
                v = mvars.get(name)
                space = v.space if v is not None else None
            return space or ("func" if name in functions else None)
        # in the order ptxas 13.0 checks them, one error for the statement: its vector, its fields' values, then
        # each name's initializer, array dimensions and, of a reference, where it is declared
        checked = not bad_vector and not self.field_values(decl)
        self.alignment(decl.align, decl.align_at)
        if decl.items and undeclarable_type(decl.type, decl.space) is None:
            self.type_version(decl.type, any(not it.dims for it in decl.items),
                              decl.type_at or (line, decl.items[0].col))
        independent = any(n == "texmode_independent" for n, _ in self.res.targets)
        for it in decl.items:
            count = _count(it)
            extern = "extern" in decl.linkage
            if checked and decl.space not in ("reg", "sreg", "local", "param", "tex"):  # lint reports those here
                if not self.initial_values(decl, it, resolve) and not self.array_dims(decl, it, line):
                    bad = ref_variable_error(decl.space, decl.type, it.dims, decl.linkage, independent, it.name) \
                        or common_space_error(decl.space, decl.linkage, it.name)
                    if bad is not None:
                        self.error(bad[2] if len(bad) > 2 else "PTX-E-DECL", bad[0], line, it.col, len(it.name),
                                   (bad[1],))
            init = it.init
            num_init = None
            if init is not None:
                flat = _flatten(init)
                if all(isinstance(v, (int, float)) for v in flat):
                    num_init = flat
            linkage = next((x for x in decl.linkage if x != "extern"), "")
            text = f"{' '.join('.' + x for x in decl.linkage)} {decl.prefix} {it.text};".strip()
            v = ParsedVar(it.name, decl.space, ty, count, decl.align, extern, num_init, linkage,
                          self.loc(line, it.col), text,
                          self.loc(*decl.type_at) if decl.type_at is not None else None)
            self.module.vars.append(v)
            shape = VarShape.of(decl.linkage, decl.type, decl.vector, it.dims, it.init)
            earlier = self.var_shapes.get(it.name)
            if it.name in self.res.functions:
                self.error("PTX-E-REDECLARED", f"'{it.name}' is already defined", line, it.col, len(it.name))
            elif earlier is not None:  # .extern declarations and a definition (variable_redeclaration_error)
                bad = variable_redeclaration_error(earlier[1:], shape, it.name)
                if bad is not None:
                    self.error("PTX-E-REDECLARED", bad[0], line, it.col, len(it.name),
                               (bad[1], f"first declared at line {earlier[0]}"))
                earlier.append(shape)
                if extern:
                    continue  # the symbol stays the definition's, or the first declaration's
            else:
                self.var_shapes[it.name] = [line, shape]
            self.module_vars[it.name] = ParamSym(it.name, decl.space, ty, count, decl.align)

    def function(self, rec):
        h: FuncHeader = rec[4]
        loc = self.loc(h.name_line, h.name_col)
        prev = self.res.functions.get(h.name)
        if h.name in self.module_vars:
            self.error("PTX-E-REDECLARED", f"'{h.name}' is already defined as a variable", h.name_line,
                       h.name_col, len(h.name))
        texts = iter(".pragma " + ", ".join(f'"{x}"' for x in p[0]) + ";" for p in h.pragmas)
        fn = Function(h.name, self.module, h.is_entry, list(h.params), list(h.rets),
                      [next(texts) if d[0] == ".pragma" else
                       d[0] + (" " + ", ".join(str(v) for v in d[1]) if d[1] else "") for d in h.directives],
                      [], [], [], ",".join(h.linkage), loc, parsed=True)
        info = FunctionInfo(h, fn, h.has_body, loc)
        self.res.declarations.append(info)
        if prev is not None and prev.defined and h.has_body:
            self.error("PTX-E-REDECLARED", f"function '{h.name}' is defined twice", h.name_line, h.name_col,
                       len(h.name), (f"first definition at line {prev.loc.line}",))
        if prev is None or h.has_body:
            self.res.functions[h.name] = info
        self.param_shapes(h.rets, h.params, h.has_body, h.is_entry)
        if h.has_body:
            self.module.functions.append(fn)
            self.fn = fn
            self.body = fn.body
            self.fn_name = h.name

    def param_shapes(self, rets, params, allocated: bool, entry: bool = False):
        """param_shape for each return parameter and parameter of a function or .callprototype."""
        for i, p in enumerate(rets):
            self.param_shape(p, allocated, entry, True, i == len(rets) - 1)
        for i, p in enumerate(params):
            self.param_shape(p, allocated, entry, False, i == len(params) - 1)

    def param_shape(self, p: ParsedParam, allocated: bool, entry: bool = False, ret: bool = False,
                    last: bool = True):
        """PTX-E-DECL where ptxas rejects the shape of parameter `p` (param_shape_error, param_array_error);
        `ret`: a return parameter, `last`: the last of its list."""
        tname = p.type.name if p.type is not None else None
        self.alignment(p.align, p.align_at, p.space == "param" and allocated and not entry)
        bad = undeclarable_type(tname, p.space, param_type_allocated(p.space, bool(p.dims), allocated, entry))
        if bad is not None and p.type_at is not None:
            self.error("PTX-E-DECL", bad[0], p.type_at[0], p.type_at[1], len(tname or "") + 1, (bad[1],))
            return
        self.type_version(tname, not p.dims, p.type_at)
        bad = param_shape_error(p.space, tname, p.vector, p.array is not None, allocated, entry, p.name)
        if bad is not None:
            at = {"vector": p.vector_at, "type": p.type_at, "name": p.name_at}[bad[2]] or p.type_at
            span = len(f".v{p.vector}") if bad[2] == "vector" else len(p.name) if bad[2] == "name" else len(tname or "") + 1
            if at is not None:
                self.error("PTX-E-DECL", bad[0], at[0], at[1], span, (bad[1],))
            return
        bad = param_array_error(p.space, p.dims, entry, ret, last, p.name, allocated)
        at = p.name_at or p.type_at
        if bad is not None and at is not None:
            self.error("PTX-E-DECL", bad[0], at[0], at[1], len(p.name), (bad[1],))
        elif entry and allocated and at is not None:
            bad = sampler_mode_error(tname, p.dims, any(n == "texmode_independent" for n, _ in self.res.targets),
                                     p.name)
            if bad is not None:
                self.error(bad[2], bad[0], at[0], at[1], len(p.name), (bad[1],))

    # -- function bodies
    def body_stmt(self, rec):
        kind = rec[1]
        line, col = rec[0], rec[2]
        if kind == R_DATA or (kind == R_LABEL and self.section is not None):
            if self.section is None:
                self.violations.append(line)
                return
            if kind == R_LABEL:
                self.section.labels.append(rec[4])
                if rec[4] in self.res.module_labels:
                    self.error("PTX-E-DUP-LABEL", f"label '{rec[4]}' is defined twice", line, col, len(rec[4]))
                self.res.module_labels[rec[4]] = self.loc(line, col)
            else:
                vals = rec[5]
                if _HAS_NAME(vals):
                    line_text = self.res.lines[line - 1]
                    for name in _REF_NAME.findall(vals):
                        self.section.refs.append((name, line, line_text.find(name) + 1))
            return
        if not self.in_body:
            self.violations.append(line)
            return
        body = self.fn.body
        loc = self.loc(line, col)
        if kind == R_LABEL:
            body.append(LabelDef(Label(rec[4]), loc))
        elif kind == R_LOC:
            body.append(Raw(rec[4], loc))
            self.res.loc_dirs.append((rec[4], loc))
        elif kind == R_DECL:
            raw = Raw(rec[5], loc)
            body.append(raw)
            self.res.decls[id(raw)] = (raw, rec[4])
            self.declare(rec[4], line)
        elif kind == R_OPEN:
            body.append(Raw("{", loc))
            self.scope = _Scope(self.scope)
            self.brace_lines.append(line)
        elif kind == R_CLOSE:
            self.brace_lines.append(line)
            if self.scope.parent is None:
                # only a fast '}' line can do this: it was the function's own closing brace
                self.violations.extend(self.brace_lines)
                return
            body.append(Raw("}", loc))
            self.scope = self.scope.parent
        elif kind == R_PRAGMA:
            self.res.pragmas.append((rec[4], loc, "body"))
            if len(rec[4]) == 1:
                body.append(Pragma(rec[4][0], loc))
            else:
                body.append(Raw(".pragma " + ", ".join(f'"{s}"' for s in rec[4]) + ";", loc))
        elif kind == R_PROTO:
            body.append(Raw(rec[5], loc))
            self.param_shapes(rec[4][0], rec[4][1], False)
            label = self.label_before(body, "callprototype", line, col)
            if label is not None:
                self.res.protos[(self.fn_name, label)] = rec[4]
        elif kind == R_TARGETS:
            raw = Raw(rec[6], loc)
            body.append(raw)
            label = self.label_before(body, rec[4], line, col)
            self.res.target_lists[id(raw)] = (raw, TargetList(rec[4], label, tuple((n, self.loc(ln, c))
                                                                                     for n, ln, c in rec[5])))
        else:
            raise InternalError(f"unknown record kind {kind}")

    def label_before(self, body: list, directive: str, line: int, col: int) -> Optional[str]:
        """The label a `.callprototype`, `.calltargets` or `.branchtargets` statement (the last of `body`) is
        defined by: the label defined right before it, on its line or the lines above (ptxas 13.0 reads any
        other statement between them, or none, as a syntax error, which is reported here)."""
        prev = body[-2] if len(body) > 1 else None
        if type(prev) is LabelDef:
            return prev.label.name
        self.error("PTX-E-SYNTAX", f".{directive} without its label (ptxas: syntax error)", line, col,
                   len(directive) + 1, (f"define the label right before it: `$L: .{directive} ...;`",))
        return None

    def field_values(self, decl: Decl) -> bool:
        """PTX-E-DECL at the first value of a field (`filter_mode = x`) in the initializers of `decl` that ptxas
        rejects (field_value_error), which it checks before the rest of them; True where there is one."""
        for it in decl.items:
            if it.init is not None and "field" in (a[3] for a in it.init_at):
                bad = field_value_error(it.init)
                if bad is not None:
                    line, col, span, _v = it.init_at[bad[2]]
                    self.error("PTX-E-DECL", bad[0], line, col, span, (bad[1],))
                    return True
        return False

    def initial_values(self, decl: Decl, it: DeclItem, resolve: Callable[[str], Optional[str]]) -> bool:
        """PTX-E-DECL at the value, or the list's closing brace, where ptxas rejects the initializer of `it`
        (initializer_error; `resolve` tells what a name it takes the address of is there); the names it takes
        the address of go to res.init_refs. True where that is an error."""
        if "sym" in (a[3] for a in it.init_at):
            self.res.init_refs[it.name] = tuple(v[1] for v in _flatten(it.init) if isinstance(v, tuple) and v
                                                and v[0] == "sym")
        bad = initializer_error(decl.space, decl.type, "extern" in decl.linkage, it.dims, decl.vector, it.init,
                                it.name, resolve, self.scope is not None)
        code, severity = "PTX-E-DECL", "error"
        if bad is None:
            bad = initializer_miscompile(decl.type, it.dims, decl.vector, it.init, it.name)
            code, severity = CODE_MISCOMPILE, "warning"
        if bad is None:
            return False
        if bad[2] == "list":
            line, col, span = it.init_lists[bad[3]] + (1,)
        else:
            line, col, span, _v = it.init_at[bad[3]]
        self.error(code, bad[0], line, col, span, (bad[1],), severity)
        return severity == "error"

    def resolve_var(self, name: str) -> Optional[str]:
        """What `name` is declared as where the statement being read stands: the state space of a variable
        (of this block, one around it or the module), 'func' for a function, None for anything else."""
        sc = self.scope
        while sc is not None:
            v = sc.vars.get(name)
            if v is not None:
                return v.space
            sc = sc.parent
        v = self.module_vars.get(name)
        if v is not None:
            return v.space
        return "func" if name in self.res.functions else None

    def vector_shape(self, decl: Decl) -> bool:
        """PTX-E-DECL at the `.vN` of a vector variable ptxas rejects (vector_error); registers are lint's to
        check and .param variables param_shape_error's, with the same rule. True where it is an error."""
        if decl.vector is not None and decl.vector_at is not None and decl.space not in ("reg", "param") \
                and undeclarable_type(decl.type, decl.space) is None:
            bad = vector_error(decl.vector, decl.type, "variable")
            if bad is not None:
                self.error("PTX-E-DECL", bad[0], decl.vector_at[0], decl.vector_at[1], len(f".v{decl.vector}"),
                           (bad[1],))
                return True
        return False

    def array_dims(self, decl: Decl, it: DeclItem, line: int) -> bool:
        """PTX-E-DECL at the name of `it` where ptxas rejects its array dimensions (variable_array_error); True
        where it does."""
        if it.dims:
            bad = variable_array_error(decl.space, it.dims, it.name, "extern" in decl.linkage, it.init is not None,
                                       decl.type)
            if bad is not None:
                self.error("PTX-E-DECL", bad[0], line, it.col, len(it.name), (bad[1],))
                return True
        return False

    def declare(self, decl: Decl, line: int):
        sc = self.scope
        sc.cache.clear()  # names cached as undeclared may resolve now
        ty = _type_of(decl.type)
        self.alignment(decl.align, decl.align_at, decl.space == "param")
        bad = undeclarable_type(decl.type, decl.space)
        if bad is not None and decl.items:
            at = decl.type_at or (line, decl.items[0].col)
            self.error("PTX-E-DECL", bad[0], at[0], at[1], len(decl.type) + 1, (bad[1],))
        elif decl.items:
            self.type_version(decl.type, any(not it.dims for it in decl.items),
                              decl.type_at or (line, decl.items[0].col))
        bad_vector = self.vector_shape(decl)
        out = body_variable_error(decl.space, decl.type, decl.items[0].dims, decl.items[0].name) \
            if decl.items and bad is None else None
        if out is not None:  # the statement's one error (ptxas 13.0 checks only its vector before)
            if not bad_vector and decl.vector is None:
                at = decl.type_at or (line, decl.items[0].col)
                self.error("PTX-E-DECL", out[0], at[0], at[1], len(decl.type) + 1, (out[1],))
        elif not self.field_values(decl):
            for it in decl.items:
                if it.init is not None:
                    self.initial_values(decl, it, self.resolve_var)
                self.array_dims(decl, it, line)
        if decl.space == "reg":
            for it in decl.items:
                if it.count is not None:
                    key = it.name + "<"
                    if key in sc.names:
                        self.dup(key, line, it.col, sc.names[key])
                        continue
                    clash = [n for n in sc.names if _member_of(n, it.name, it.count)]
                    if clash:
                        self.dup(clash[0], line, it.col, sc.names[clash[0]])
                        continue
                    sc.arrays[it.name] = (ty, it.count, self.loc(line, it.col))
                    sc.names[key] = self.loc(line, it.col)
                else:
                    if it.name in sc.names or self._in_array(sc, it.name):
                        self.dup(it.name, line, it.col, sc.names.get(it.name))
                        continue
                    sc.regs[it.name] = Reg(it.name, ty, self.fn, None)
                    sc.names[it.name] = self.loc(line, it.col)
            return
        for it in decl.items:
            if decl.space == "param" and (out is None or decl.vector is not None):
                bad = param_shape_error("param", decl.type, decl.vector, bool(it.dims), True, name=it.name)
                if bad is not None:
                    at = (line, it.col) if bad[2] == "name" or decl.vector_at is None else decl.vector_at
                    self.error("PTX-E-DECL", bad[0], at[0], at[1],
                               len(it.name) if bad[2] == "name" else len(f".v{decl.vector}"), (bad[1],))
            if it.name in sc.names:
                self.dup(it.name, line, it.col, sc.names.get(it.name))
                continue
            sc.names[it.name] = self.loc(line, it.col)
            sc.vars[it.name] = ParamSym(it.name, decl.space, ty, _count(it), decl.align)
            self.res.local_names.add(it.name)

    def declare_var(self, sym: ParamSym, line: int, col: int):
        sc = self.scope
        if sym.name in sc.names:
            self.dup(sym.name, line, col, sc.names[sym.name])
            return
        sc.names[sym.name] = self.loc(line, col)
        self.res.local_names.add(sym.name)
        if sym.space == "reg":
            sc.regs[sym.name] = Reg(sym.name, sym.type, self.fn, None)
        else:
            sc.vars[sym.name] = sym

    @staticmethod
    def _in_array(sc: _Scope, name: str) -> bool:
        m = _ARRAY_MEMBER.match(name)
        if not m:
            return False
        a = sc.arrays.get(m.group(1))
        return a is not None and int(m.group(2)) < a[1]

    def dup(self, name: str, line: int, col: int, prev: Optional[SourceLoc]):
        notes = (f"first declared at line {prev.line}",) if prev is not None else ()
        shown = name[:-1] + "<N>" if name.endswith("<") else name
        self.error("PTX-E-REDECLARED", f"'{shown}' is already declared in this scope", line, col,
                   len(shown.split("<")[0]) or 1, notes)

    # -- instructions
    def instr(self, rec):
        opcode = rec[5]
        kind = self.op_kind.get(opcode)
        if kind is None:
            base = opcode.split(".", 1)[0]
            kind = self.op_kind[opcode] = 1 if base in _BRANCHES else 2 if base == "call" else 0
        sc = self.scope
        cache = sc.cache
        ops = []
        if kind == 0:
            for s in rec[6]:
                o = cache.get(s)
                if o is None:
                    o = cache[s] = self.resolve(s)
                ops.append(o)
        else:
            syn = rec[6]
            for i, s in enumerate(syn):
                if type(s) is tuple and s[0] == "n" and (kind == 1 or (i == len(syn) - 1 and i > 0
                                                                       and type(syn[i - 1]) is tuple
                                                                       and syn[i - 1][0] == "c")):
                    r = self.find_reg(s[1], False)
                    ops.append(r if r is not None else Label(s[1]))
                else:
                    o = cache.get(s)
                    if o is None:
                        o = cache[s] = self.resolve(s)
                    ops.append(o)
        g = rec[4]
        guard = None
        if g is not None:
            r = self.find_reg(g[1], True)
            guard = Guard(r, g[0])
        self.body.append(Instr(opcode, tuple(ops), guard, SourceLoc(self.file, rec[0], rec[2])))

    def find_reg(self, name: str, create: bool):
        if name[0] == "%":
            t = self.sregs.get(name)
            if t is not None:
                return SpecialReg(name, t)
        sc = self.scope
        while sc is not None:
            r = sc.regs.get(name)
            if r is not None:
                return r
            if sc.arrays:
                prefix = name.rstrip(_DIGITS)
                if len(prefix) < len(name):
                    a = sc.arrays.get(prefix)
                    if a is not None and int(name[len(prefix):]) < a[1]:
                        r = sc.regs[name] = Reg(name, a[0], self.fn, prefix)
                        return r
            sc = sc.parent
        if "." in name:
            # a component of a vector register: `%v.x` of `.reg .v4 .f32 %v`
            base = self.find_reg(name.rsplit(".", 1)[0], False)
            if type(base) is Reg:
                return Reg(name, base.type, self.fn, None)
        if create:
            return Reg(name, None, self.fn, None)  # undeclared: the linter reports it
        return None

    def find_sym(self, name: str):
        sc = self.scope
        while sc is not None:
            v = sc.vars.get(name)
            if v is not None:
                return v
            sc = sc.parent
        v = self.module_vars.get(name)
        if v is not None:
            return v
        f = self.res.functions.get(name)
        if f is not None:
            return Sym(name, "func", None)
        return Sym(name, "?", None)  # unknown here: the linter reports it

    def resolve(self, s):
        if type(s) is str:
            return self.find_reg(s, True)
        k = s[0]
        if k == "i":
            return Imm(s[1])
        if k == "n":
            r = self.find_reg(s[1], False)
            return r if r is not None else self.find_sym(s[1])
        if k == "a":
            items = s[1]
            if len(items) == 1 and items[0][0] != "v":
                return self.addr_item(items[0])
            return AddrList(tuple(self.addr_item(x) if x[0] != "v" else self.resolve(x) for x in items))
        if k == "v":
            return Vec(tuple(self.resolve(x) for x in s[1]))
        if k == "f":
            v, t = _float_value(s[1])
            return FloatImm(v, t, s[1])
        if k == "|":
            return PredPair(self.resolve(s[1]), self.resolve(s[2]))
        if k == "!":
            return Guard(self.resolve(s[1]), True)
        if k == "c":
            return CallArgs(tuple(self.resolve(x) for x in s[1]))
        if k == "_":
            return "_"
        if k == "s":
            return SymOffset(self.find_sym(s[1]), s[2])
        raise InternalError(f"unknown operand syntax {s!r}")

    def addr_item(self, it: tuple):
        if it[0] == "i":
            return Addr(Imm(it[1]), 0)
        base = self.resolve(it[1])
        return Addr(base, it[2])


_REF_NAME = re.compile(r"(?<![\w$.])([A-Za-z_$][\w$]*)")
_WORD = re.compile(r"[0-9A-Za-z_]+")
_HAS_NAME = re.compile(r"[A-Za-z_$]").search


def _member_of(name: str, prefix: str, count: int) -> bool:
    m = _ARRAY_MEMBER.match(name)
    return bool(m) and m.group(1) == prefix and int(m.group(2)) < count


def _count(it: DeclItem) -> Optional[int]:
    if not it.dims:
        return None
    n = 1
    for d in it.dims:
        if d is None:
            return None
        n *= d
    return n


def _offset_text(text: str, start: int) -> str:
    """The text of the offset that starts at `start` of `text` (after `g-` in `{g-(4*2), 1}`): up to the
    `,`, `}` or `;` after it (lark's positions of an expression leave its outer parentheses out)."""
    depth = 0
    for i in range(start, len(text)):
        ch = text[i]
        depth += (ch == "(") - (ch == ")")
        if depth <= 0 and ch in ",};" or depth < 0:
            return " ".join(text[start:i].split())
    return " ".join(text[start:].split())


def _parenthesised(text: str) -> bool:
    """Whether `text` is one expression in parentheses: `(2*2)`, not `(1)+(2)`."""
    depth = 0
    for i, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        if depth == 0:
            return i == len(text) - 1 and i > 0
    return False


def _flatten(v) -> list:
    if isinstance(v, tuple) and (not v or v[0] not in ("sym", "field")):
        out = []
        for x in v:
            out.extend(_flatten(x))
        return out
    return [v]


# ---------------------------------------------------------------------------------------- the entry points
def _classify(text: str, lines: List[str], fast: _Fast, skip: set):
    """The fast-path records and the skeleton's lines (fast lines blanked).

    A line is only taken when the previous significant line ended a statement, so that it cannot be the
    tail of a statement that spans lines; the IR pass then checks the placement of every taken line.
    """
    recs: List[tuple] = []
    append = recs.append
    skel = list(lines)
    if "/*" in text:
        skip = skip | _block_comment_lines(text)
    instr_match, label_match = fast.instr.match, fast.label.match
    loc_match, data_match, decl_match = fast.loc.match, fast.data.match, fast.decl.match
    brace_match = fast.brace.match
    simple_match = fast.simple_ops.match
    ws_sub = fast.ws.sub
    cache: dict = {}
    prev = ";"  # the last character of the previous significant line (';' for fast lines)
    open_rec = -1  # index in recs of a fast record with no terminator (.loc, data) awaiting the next line
    depth = 0  # blocks opened by fast '{' lines and not yet closed
    ends = _ENDS
    n = len(lines)
    i = -1
    off = 0  # offset in text of the next line
    while i + 1 < n:
        i += 1
        line = lines[i]
        start = off
        off += len(line) + 1
        if not line:
            continue
        lineno = i + 1
        if skip and lineno in skip:
            if not line.isspace():
                prev = "?"
                open_rec = -1
            continue
        m = instr_match(line)
        if m is not None:
            open_rec = -1
            if prev in ends:
                indent, neg, g, opcode, ops_text = m.groups()
                if ops_text:
                    syn = cache.get(ops_text)
                    if syn is None and simple_match(ops_text):
                        # registers and integers only (most lines): a register's syntax is its name
                        syn = cache[ops_text] = tuple([p if p[0] == "%" else _int_syntax(p)
                                                       for p in [x.strip() for x in ops_text.split(",")]])
                else:
                    syn = ()
                if syn is not None:
                    append((lineno, R_INSTR, len(indent) + 1, lineno, None if g is None else (neg == "!", g),
                            opcode, syn))
                    skel[i] = ""
                    continue
                rec = _fast_instr(fast, m, cache, lineno)
                if rec is not None:
                    append(rec)
                    skel[i] = ""
                    continue
            prev = ";"
            continue
        s = line.lstrip()
        if not s:
            continue
        c = s[0]
        if c == "/" and s[1:2] == "/":
            continue
        if open_rec >= 0:
            # a line that continues the previous no-terminator statement hands it back to lark
            if not (c.isalpha() or c in ".$_@{}"):
                r = recs.pop(open_rec)
                skel[r[0] - 1] = lines[r[0] - 1]
                prev = "?"
            open_rec = -1
        if c == ".":
            if prev not in _CONTINUES:
                if s[1:8] == "section":
                    m = fast.section.match(text, start)
                    if m is not None:
                        rec = _fast_section(fast, m, text, lineno, len(line) - len(s) + 1)
                        append(rec)
                        for k in range(i, rec[3]):
                            skel[k] = ""
                        off = start
                        for k in range(i, rec[3]):
                            off += len(lines[k]) + 1
                        i = rec[3] - 1
                        prev = "}"
                        continue
                if s[1:4] == "loc":
                    m = loc_match(line)
                    if m is not None:
                        append((lineno, R_LOC, len(m.group(1)) + 1, lineno, m.group(2)))
                        skel[i] = ""
                        open_rec = len(recs) - 1
                        prev = ";"
                        continue
                else:
                    m = data_match(line)
                    if m is not None:
                        vals = m.group(3)
                        if " " in vals or "\t" in vals:
                            vals = ws_sub("", vals)
                        append((lineno, R_DATA, len(m.group(1)) + 1, lineno, m.group(2), vals))
                        skel[i] = ""
                        open_rec = len(recs) - 1
                        prev = ";"
                        continue
            if prev in ends:
                m = decl_match(line)
                if m is not None:
                    append(_fast_decl(fast, m, line, lineno))
                    skel[i] = ""
                    prev = ";"
                    continue
        elif c == "{" or c == "}":
            if prev in ends and (c == "{" or depth > 0):
                m = brace_match(line)
                if m is not None:
                    col = len(m.group(1)) + 1
                    append((lineno, R_OPEN if c == "{" else R_CLOSE, col, lineno))
                    depth += 1 if c == "{" else -1
                    skel[i] = ""
                    prev = c
                    continue
        elif prev in ends and (c.isalpha() or c in "$_@"):
            m = label_match(line)
            if m is not None:
                append((lineno, R_LABEL, len(m.group(1)) + 1, lineno, m.group(2)))
                skel[i] = ""
                prev = ":"
                continue
            if fast.instr_head.match(line):
                # an instruction written over several lines (nvcc -G writes calls this way)
                j = i + 1
                last = min(n, i + 64)
                while j < last and fast.instr_cont.match(lines[j]):
                    j += 1
                if j < last and fast.instr_last.match(lines[j]):
                    joined = " ".join(lines[i:j + 1])
                    m = instr_match(joined)
                    if m is not None:
                        rec = _fast_instr(fast, m, cache, lineno)
                        if rec is not None:
                            append(rec[:3] + (j + 1,) + rec[4:])
                            for k in range(i, j + 1):
                                skel[k] = ""
                            for k in range(i + 1, j + 1):
                                off += len(lines[k]) + 1
                            prev = ";"
                            i = j
                            continue
        # a line for lark: how does it end?
        body = s.split("//", 1)[0].rstrip() if "/" in s else s.rstrip()
        prev = body[-1:] or prev
    return recs, skel


def _fast_section(f: _Fast, m, text: str, lineno: int, col: int) -> tuple:
    """The record of a whole `.section name { ... }` matched by _Fast.section."""
    body = m.group(2)
    first = lineno + 2  # the line after `{`
    labels = []
    for lm in f.sec_label.finditer(body):
        pos = lm.start(1)
        ln = first + body.count("\n", 0, pos)
        labels.append((lm.group(1), ln, pos - (body.rfind("\n", 0, pos) + 1) + 1))
    refs = []
    last, ln = 0, first
    label_names = {x[0] for x in labels}
    for rm in f.sec_ref.finditer(body):
        name = rm.group(1)
        if name is None:
            continue  # a comment
        pos = rm.start(1)
        end = body.find(":", rm.end(1), rm.end(1) + 8)
        if name in label_names and end >= 0 and not body[rm.end(1):end].strip():
            continue  # the label definition itself
        ln += body.count("\n", last, pos)
        last = pos
        refs.append((name, ln, pos - (body.rfind("\n", 0, pos) + 1) + 1))
    end_line = lineno + m.group(0).count("\n")
    return (lineno, R_SECTION, col, end_line, m.group(1), tuple(labels), tuple(refs))


def _fast_decl(f: _Fast, m, line: str, lineno: int) -> tuple:
    """The record of a one-line declaration matched by _Fast.decl (the same record lark's path makes)."""
    start = len(m.group(1))
    prefix = " ".join(m.group(2).split())
    items = []
    items_text = m.group(7)
    base = m.start(7)
    for im in f.decl_item.finditer(items_text):
        name = im.group(1)
        col = base + im.start(1) + 1
        if im.group(2) is not None:
            items.append(DeclItem(name, col, _int_value(im.group(2)), text=im.group(0)))
        else:
            dims = tuple(None if d is None else _int_value(d) for d in f.dims.findall(im.group(3) or ""))
            items.append(DeclItem(name, col, None, dims, None, im.group(0)))
    align = m.group(3) or m.group(6)
    ty = m.group(5)[1:]
    space = m.group(2).split(None, 1)[0][1:]
    # the fast path's .align and <N> are below 2^32 (_LONG_INT32): they read as written
    decl = Decl(space, ty, tuple(items), _int_value(align.split()[-1]) if align else None,
                int(m.group(4)[2:]) if m.group(4) else None, (), False, prefix,
                (lineno, m.start(4) + 1) if m.group(4) else None, (lineno, m.start(5) + 1),
                (lineno, m.end(3) - len(align.split()[-1]) + 1) if align else None)
    text = line[start:m.end(7)] + ";"
    return (lineno, R_DECL, start + 1, lineno, decl, text)


_ENDS = frozenset(";{}:")
_M64 = (1 << 64) - 1
_CONTINUES = frozenset(",+-*/%|&^<>=(![~?")


def _block_comment_lines(text: str) -> set:
    out = set()
    for m in re.finditer(r"//[^\n]*|\"(?:[^\"\\\n]|\\.)*\"|/\*.*?(?:\*/|\Z)", text, re.S):
        s = m.group(0)
        if s.startswith("/*"):
            a = text.count("\n", 0, m.start()) + 1
            b = a + s.count("\n")
            out.update(range(a, b + 1))
    return out


def parse(text: str, filename: str = "<ptx>", *, fast: bool = True) -> ParseResult:
    """Parse PTX text into a ParseResult (module + side facts + diagnostics); never raises for bad input.

    fast=False parses the whole text with lark (the reference the fast path is tested against).
    """
    if not isinstance(text, str):
        raise TypeError(f"parse() takes PTX text as str, not {type(text).__name__}")
    # parsing allocates a few objects per line and frees none of them: the cyclic collector would
    # rescan the growing heap again and again (about a third of the time on 100k-line files)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _parse(text, filename, fast)
    finally:
        if was_enabled:
            gc.enable()


def _parse(text: str, filename: str, fast: bool) -> ParseResult:
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    p = _lark()
    sregs = _sreg_types()
    skip: set = set()
    f = _fast() if fast else None
    for attempt in range(3):
        # attempt 0: fast path; 1: fast lines that caused trouble handed back; 2: lark on everything
        if f is not None and attempt < 2:
            recs, skel_lines = _classify(text, lines, f, skip)
            skel = "\n".join(skel_lines)
        else:
            recs, skel = [], text
        res = ParseResult(None, [], lines, filename)
        _LEX.errors = lexed = []
        try:
            tree = p.parse(skel, start="start")
        except lark.exceptions.UnexpectedInput as e:
            if recs and attempt == 0:
                # the error may come from a fast line that was not a statement of its own: hand the
                # fast lines before the error back to lark and parse again
                line = getattr(e, "line", 0)
                if not isinstance(line, int) or line < 1 or _at_eof(e):
                    line = len(lines)
                skip.update(r[0] for r in recs if r[0] <= line)
                continue
            _syntax_errors(res, lexed)  # the literals before the error
            res.diagnostics.append(_syntax_diag(e, res))
            return res
        finally:
            _LEX.errors = None
        _syntax_errors(res, lexed)
        w = _Walker(skel)
        w.walk_module(tree)
        _syntax_errors(res, w.errors)
        merged = recs + w.out
        merged.sort(key=_line_key)
        b = _IRBuilder(res, sregs)
        b.run(merged)
        if b.violations:
            if not recs:
                raise InternalError(f"{filename}: statements out of place without the fast path, lines "
                                    f"{b.violations[:5]}")
            skip.update(b.violations)
            continue
        _finish(res, b)
        res.stats = {"lines": len(lines), "fast_lines": sum(r[3] - r[0] + 1 for r in recs),
                     "lark_lines": sum(1 for x in skel_lines if x and not x.isspace()) if recs else len(lines)}
        return res
    raise InternalError("parse did not converge")


def _line_key(r):
    return r[0]


def _syntax_errors(res: ParseResult, errors):
    """PTX-E-SYNTAX diagnostics of (message, line, column, notes) findings of the lexer or the walker."""
    for msg, line, col, notes in errors:
        res.diagnostics.append(Diagnostic("PTX-E-SYNTAX", "error", msg, SourceLoc(res.filename, line, col), notes,
                                          res.source_line(line)))


@functools.lru_cache(maxsize=None)
def _sreg_types() -> Dict[str, Type]:
    t = _special_regs()
    SPECIAL_REG_TYPES.update(t)
    return t


def _finish(res: ParseResult, b: _IRBuilder):
    m = b.module
    if res.version is not None:
        # the version as ptxas 13.0 reads it; None where it is no version (lint says which) or one ptxas refuses
        try:
            m.version = read_version(res.version[0])
        except ValueError:
            m.version = None
        if m.version is not None and version_error(m.version) is not None:
            m.version = None
    for name, loc in res.targets:
        if name.startswith(("sm_", "compute_")):
            try:
                m.target = Target.parse(name)
            except ValueError:
                pass
            break
    m.loc = res.version[1] if res.version else None
    res.module = m


_TOKEN_NAMES = {
    "SEMICOLON": "';'", "COMMA": "','", "LBRACE": "'{'", "RBRACE": "'}'", "LSQB": "'['", "RSQB": "']'",
    "LPAR": "'('", "RPAR": "')'", "COLON": "':'", "VBAR": "'|'", "AT": "'@'", "BANG": "'!'", "EQUAL": "'='",
    "LESSTHAN": "'<'", "MORETHAN": "'>'", "PLUS": "'+'", "MINUS": "'-'", "SINK": "'_'",
    "REG": "a register", "NAME": "a name", "OPCODE": "an opcode", "INT": "an integer",
    "FLOAT_HEX": "a float literal", "DOUBLE_HEX": "a float literal", "DEC_FLOAT": "a number", "STRING": "a string",
    "TYPE": "a type",
    "SPACE": "a state space", "PARAM_SPACE": ".param", "VECTOR": "a vector size", "DIRECTIVE": "a directive",
    "SECTION_NAME": "a section name", "LINKAGE": "a linkage directive", "FUNC_KIND": ".entry or .func",
    "$END": "end of file",
}


def _describe(term: str) -> str:
    if term in _TOKEN_NAMES:
        return _TOKEN_NAMES[term]
    try:
        t = _lark().get_terminal(term)
        if t.pattern.type == "str":
            return f"'{t.pattern.value}'"
    except KeyError:
        pass
    return term.lower()


@functools.lru_cache(maxsize=None)
def _f32_hex():
    """A 0f literal (the grammar's FLOAT_HEX) that ends where the text searched ends."""
    return re.compile(f"(?:{_lark().get_terminal('FLOAT_HEX').pattern.to_regexp()})(?![0-9A-Za-z_$])")


def _at_eof(e) -> bool:
    return isinstance(e, lark.exceptions.UnexpectedEOF) or (
        isinstance(e, lark.exceptions.UnexpectedToken) and e.token.type == "$END")


def _syntax_diag(e: lark.exceptions.UnexpectedInput, res: ParseResult) -> Diagnostic:
    line = getattr(e, "line", None)
    col = getattr(e, "column", None)
    if not isinstance(line, int) or line < 1 or _at_eof(e):
        # the end of the text: just after its last non-blank character
        line = len(res.lines)
        while line > 1 and not res.lines[line - 1].strip():
            line -= 1
        col = len(res.lines[line - 1].rstrip()) + 1 if res.lines else 1
    notes = []
    span = 1
    if isinstance(e, lark.exceptions.UnexpectedToken):
        tok = e.token
        src = res.lines[line - 1] if line <= len(res.lines) else ""
        f32 = _f32_hex()
        if tok.type == "$END":
            msg = "unexpected end of file"
        elif tok.type == "NAME" and col >= 2 and src[col - 2:col - 1] == "0" and f32.fullmatch("0" + tok.value):
            # `-0f3F800000`, `1.0+0f3F800000`: where no 0f literal can stand, `0` reads as an integer and the
            # rest as a name
            lit = "0" + tok.value
            msg = f"{lit} inside an expression: a 0f literal stands alone as an operand or in its own parentheses"
            col -= 1
            span = len(lit)
            notes.append(f"write ({lit}): ptxas 13.0 takes `-({lit})` and `2.0*({lit})`")
        elif tok.value in (".visible", ".extern", ".weak", ".common") and "LINKAGE" not in e.expected:
            # after another linkage directive (ptxas 13.0: "Parsing error near '.extern': syntax error")
            msg = f"a second linkage directive '{tok.value}': a declaration takes one"
            span = len(tok.value)
            notes.append("keep one of .extern, .visible, .weak and .common")
        else:
            what = _describe(tok.type)
            msg = (f"unexpected {what}" if what.startswith("'") else
                   f"unexpected {what.split(' ', 1)[-1]} '{tok.value}'")
            span = max(len(tok.value), 1)
            m = None
            for m in f32.finditer(src, 0, max(col - 1, 0)):
                pass
            if m is not None and not src[m.end():col - 1].strip():  # `0f3F800000+1.0`
                notes.append(f"a 0f literal is no part of an expression but in its own parentheses: write "
                             f"({m.group()})")
            elif tok.type == "REG" and tok.value[1:2].isdigit() and "MULOP" in e.expected:  # `7%2`
                notes.append(f"'%' right before a digit or letter starts a register (ptxas reads {tok.value} as "
                             f"one): for the remainder write `% {tok.value[1:]}`")
        exp = sorted({_describe(x) for x in e.expected})
        if exp:
            notes.append("expected " + (", ".join(exp[:12]) + (", ..." if len(exp) > 12 else "")))
    elif isinstance(e, lark.exceptions.UnexpectedCharacters):
        ch = res.lines[line - 1][col - 1:col] if line <= len(res.lines) else ""
        msg = f"unexpected character {ch!r}" if ch else "unexpected input"
        allowed = sorted({_describe(x) for x in (e.allowed or ())})
        if allowed:
            notes.append("expected " + (", ".join(allowed[:12]) + (", ..." if len(allowed) > 12 else "")))
    else:
        msg = "unexpected end of file"
    return Diagnostic("PTX-E-SYNTAX", "error", msg, SourceLoc(res.filename, line, col), tuple(notes),
                      res.source_line(line), span)


def parse_ptx(text: str, filename: str = "<ptx>") -> Module:
    """Parse PTX text into a ptxgen.ir.Module; raises PtxSyntaxError (with diagnostics) on syntax errors."""
    res = parse(text, filename)
    errs = [d for d in res.diagnostics if d.code == "PTX-E-SYNTAX"]
    if errs or res.module is None:
        raise PtxSyntaxError(errs)
    return res.module


# ----------------------------------------------------------------------------- statement-level (for tests)
def parse_target_list(text: str) -> Optional[Tuple[str, Tuple[str, ...]]]:
    """(kind, names) of the text of one `.branchtargets` or `.calltargets` statement (without its label), read
    by the grammar; None for any other text. For statements the IR holds as Raw text without a parse (builder
    modules); parse() keeps what it reads (ParseResult.target_list_of)."""
    if not text.lstrip().startswith((".branchtargets", ".calltargets")):
        return None
    try:
        tree = _lark().parse(f".func f_()\n{{\n$_L: {text}\n}}", start="start")
    except lark.exceptions.LarkError:
        return None
    for t in tree.find_pred(lambda t: t.data in ("branchtargets", "calltargets")):
        return str(t.data), tuple(x.value for x in t.children)
    return None


def parse_statement(text: str) -> tuple:
    """The lark record of one instruction statement (raises lark errors): the reference for the fast path."""
    t = _lark().parse(text, start="instruction")
    return _Walker(text).instruction(t)


def statement_records(line: str, lineno: int = 1) -> Optional[tuple]:
    """The fast path's record for one line, or None when the fast path does not take it."""
    f = _fast()
    m = f.instr.match(line)
    if m is not None:
        return _fast_instr(f, m, {}, lineno)
    m = f.label.match(line)
    if m is not None:
        return (lineno, R_LABEL, len(m.group(1)) + 1, lineno, m.group(2))
    m = f.loc.match(line)
    if m is not None:
        return (lineno, R_LOC, len(m.group(1)) + 1, lineno, m.group(2))
    m = f.data.match(line)
    if m is not None:
        return (lineno, R_DATA, len(m.group(1)) + 1, lineno, m.group(2), f.ws.sub("", m.group(3)))
    return None
