"""Legality of the tensor-core and async instruction families, written once.

The legal opcode spellings live in the lark grammar `grammar/legality.lark` (one FORM rule per family
variant, FIELD rules named after the PTX ISA placeholders). What a grammar cannot say well lives in
`FORMS` below, keyed by the same rule names: the minimum target and PTX ISA version, the modifiers that
raise them, the operands (with register counts and types) and the immediates each form takes.

The builder and the linter both call `check()`:

    diags = check("wgmma.mma_async.sync.aligned.m64n12k16.f32.bf16.bf16", None, "sm_90a", "8.0")
    # [Diagnostic('PTX-E-SHAPE', 'error', 'N=12 is not legal for .bf16 wgmma; N must be a multiple of
    #   8 from 8 to 256', ...)]

The grammar spells each form in the PTX ISA's order; ptxas 13.0 takes the modifiers after an instruction's name
in other orders too, but for the words whose order says which is which (types, state spaces, layouts:
isa_core.order_key), and so does parse(): `cp.reduce.async.bulk.global.shared::cta.add.bulk_group.u32` is the form
`...bulk_group.add.u32`, and the diagnostics speak of that spelling.

Each family's language is finite (5708 spellings, 2282 of them textures' and surfaces'), so the grammar
is enumerated once into a table keyed by the opcode string: looking an opcode up is a dict access (~0.2 us;
check() with operands ~2 us), and the diagnosis of an illegal one (cached per distinct string) compares it
with the nearest legal spellings. Building the grammar and the table takes ~0.3 s on first use. The
lark Earley parser of the same grammar (`parse_tree()`) is kept for tools that want a tree; it takes ~5 ms
per opcode. LALR cannot take the grammar as written: one shape token (`.m16n8k32`) belongs to several
type-specific shape rules, a reduce/reduce conflict that only the type tokens after it resolve.

Nothing here imports the builder, the parser or the runtime.
"""
from __future__ import annotations

import difflib
import functools
from collections import Counter
import math
import re
import struct
from dataclasses import dataclass, field, replace
from decimal import Decimal
from fractions import Fraction
from typing import Callable, Dict, FrozenSet, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from .diag import Diagnostic
from .grammar_files import read_grammar
from .isa_core import TYPE_WORDS, group_of, misplaced_name_words, name_order_message, order_key
from .ir import Imm
from .errors import InternalError, TargetError, UsageError
from .target import PtxVersion, Target, parse_version, version_str
from .types import (VECTOR_KIND, Type, b16, b32, b64, bf16x2, clashing_neighbour, compatible, f16, f16x2, f32, f64,
                    get_type, pred, s16, s32, s64, tf32, u16, u32, u64, vector_bits)

__all__ = [
    "Form", "Slot", "Signature", "OperandInfo", "Need", "FormRule", "FORMS",
    "check", "parse", "covers", "forms", "signatures", "bind", "fragment_regs", "requirement",
    "describe_ints", "grammar_text", "grammar_parser", "parse_tree",
    "CODE_SHAPE", "CODE_TYPE", "CODE_LAYOUT", "CODE_OPERANDS", "CODE_TARGET", "CODE_VERSION", "CODE_UNKNOWN",
    "CODE_MODIFIER", "CODE_MISCOMPILE", "CODE_ADVISORY", "undeclarable_type", "declared_type_version",
    "B128_VERSION", "INSTRUCTION_ONLY_ALLOCATED",
    "variable_array_error", "param_array_error", "vector_error", "initializer_error", "initial_address_error", "initializer_miscompile",
    "param_shape_error", "uniform_vector",
]

CODE_SHAPE = "PTX-E-SHAPE"
CODE_TYPE = "PTX-E-TYPE"
CODE_LAYOUT = "PTX-E-LAYOUT"
CODE_OPERANDS = "PTX-E-OPERANDS"
CODE_TARGET = "PTX-E-TARGET"
CODE_VERSION = "PTX-E-VERSION"
CODE_UNKNOWN = "PTX-E-UNKNOWN"
CODE_MODIFIER = "PTX-E-MODIFIER"
# legal PTX that ptxas turns into a kernel that fails at run time: a warning in the linter, and the builder
# refuses to emit it
CODE_MISCOMPILE = "PTX-W-MISCOMPILE"
# legal PTX that ptxas assembles with an "Advisory" line of its own: a note in the linter
CODE_ADVISORY = "PTX-W-ADVISORY"

# field (grammar placeholder) -> (how a message names it, diagnostic code)
_FIELDS = {
    "shape": ("shape", CODE_SHAPE), "num": ("matrix count", CODE_SHAPE), "dim": ("dimension", CODE_SHAPE),
    "dtype": ("D type", CODE_TYPE), "atype": ("A type", CODE_TYPE), "btype": ("B type", CODE_TYPE),
    "ctype": ("C type", CODE_TYPE), "type": ("element type", CODE_TYPE), "type_addr": ("type", CODE_TYPE),
    "dst_fmt": ("destination format", CODE_TYPE), "src_fmt": ("source format", CODE_TYPE),
    "alayout": ("A layout", CODE_LAYOUT), "blayout": ("B layout", CODE_LAYOUT), "trans": (".trans", CODE_LAYOUT),
    "satfinite": (".satfinite", CODE_MODIFIER), "bitop": ("bit operation", CODE_MODIFIER),
    "popc": (".popc", CODE_MODIFIER), "ss": ("state space", CODE_MODIFIER), "dst": ("destination space",
                                                                              CODE_MODIFIER),
    "src": ("source space", CODE_MODIFIER), "cache": ("cache operator", CODE_MODIFIER),
    "hint": ("cache hint", CODE_MODIFIER), "prefetch": ("prefetch size", CODE_MODIFIER),
    "completion": ("completion mechanism", CODE_MODIFIER), "multicast": (".multicast::cluster", CODE_MODIFIER),
    "load_mode": ("load mode", CODE_MODIFIER), "sem": ("memory semantic", CODE_MODIFIER),
    "scope": ("scope", CODE_MODIFIER), "arrive": ("arrive kind", CODE_MODIFIER), "tx": ("operation",
                                                                                       CODE_MODIFIER),
    "action": ("action", CODE_MODIFIER), "space": ("proxy space", CODE_MODIFIER),
    "restrict": ("restriction", CODE_MODIFIER), "aligned": (".aligned", CODE_MODIFIER),
    "vec": ("vector size", CODE_TYPE), "op": ("operation", CODE_MODIFIER),
    "geom": ("geometry", CODE_MODIFIER), "mode": ("mipmap mode", CODE_MODIFIER),
    "coord": ("coordinate type", CODE_TYPE), "comp": ("component", CODE_MODIFIER),
    "query": ("query", CODE_MODIFIER), "clamp": ("clamp mode", CODE_MODIFIER),
    "noftz": (".noftz", CODE_MODIFIER), "priority": ("eviction priority", CODE_MODIFIER),
    "level": ("cache level", CODE_MODIFIER), "sparsity": ("sparsity", CODE_MODIFIER),
    "kind": ("kind", CODE_MODIFIER), "block_scale": (".block_scale", CODE_MODIFIER),
    "scale_vec": ("scale vector size", CODE_MODIFIER), "stype": ("scale type", CODE_TYPE),
    "acc": ("accumulation precision", CODE_MODIFIER),
}


def _field_of(rule: str) -> str:
    return rule.split("__")[0]


def _field_text(label: Optional[str]) -> str:
    if label is None:
        return "modifier"
    return _FIELDS.get(label, (label, CODE_MODIFIER))[0]


def _field_code(label: Optional[str]) -> str:
    if label is None:
        return CODE_MODIFIER
    return _FIELDS.get(label, (label, CODE_MODIFIER))[1]


# ================================================================================================ grammar

def grammar_text() -> str:
    """The text of grammar/legality.lark (installed as the package ptxgen.grammar)."""
    return read_grammar("legality.lark")


def _tokens(opcode: str) -> Tuple[str, ...]:
    parts = opcode.split(".")
    return (parts[0],) + tuple("." + p for p in parts[1:])


@functools.lru_cache(maxsize=1)
def _lark():
    import lark
    from lark.lexer import Lexer, Token

    class _DotLexer(Lexer):
        """Tokens are the dot-separated pieces of the opcode; each one is matched whole against a literal."""

        def __init__(self, conf):
            self._by_value = {t.pattern.value: t.name for t in conf.terminals}

        def lex(self, data):
            pos = 0
            for t in _tokens(data):
                name = self._by_value.get(t)
                if name is None:
                    raise lark.exceptions.UnexpectedCharacters(data, pos, 1, pos + 1)
                yield Token(name, t, pos)
                pos += len(t)

    return lark.Lark(grammar_text(), parser="earley", lexer=_DotLexer, start="start")


def grammar_parser():
    """The lark Earley parser of the legality grammar (built once)."""
    return _lark()


def parse_tree(opcode: str):
    """The lark parse tree of a legal opcode; raises lark's UnexpectedInput for an illegal one."""
    return _lark().parse(opcode)


# ============================================================================================ enumeration

@dataclass(frozen=True)
class Form:
    """One legal opcode spelling: its form rule, tokens, and the field each token fills."""

    opcode: str
    rule: str
    tokens: Tuple[str, ...]
    labels: Tuple[Optional[str], ...]
    fields: Dict[str, str] = field(compare=False, hash=False)

    def has(self, token: str) -> bool:
        return token in self.tokens


class _Catalogue:
    def __init__(self):
        lk = _lark()
        term = {t.name: t.pattern.value for t in lk.terminals}
        rules: Dict[str, List[list]] = {}
        for r in lk.rules:
            rules.setdefault(r.origin.name, []).append(r.expansion)
        self.form_rules: List[str] = []
        for exp in rules["start"]:
            if len(exp) != 1 or exp[0].is_term:
                raise InternalError("every alternative of `start` in legality.lark must be one form rule")
            self.form_rules.append(exp[0].name)
        memo: Dict[str, List[Tuple[Tuple[str, ...], Tuple[Optional[str], ...]]]] = {}
        form_set = set(self.form_rules)

        def expand(name: str):
            got = memo.get(name)
            if got is not None:
                return got
            out = []
            label = None if name.startswith("_") or name in form_set else _field_of(name)
            for exp in rules[name]:
                seqs = [((), ())]
                for sym in exp:
                    if sym.is_term:
                        part = [((term[sym.name],), (None,))]
                    else:
                        part = expand(sym.name)
                    seqs = [(a + b, la + lb) for a, la in seqs for b, lb in part]
                out.extend(seqs)
            if label is not None:
                out = [(t, (label,) * len(t)) for t, _ in out]
            memo[name] = out
            return out

        self.by_opcode: Dict[str, Form] = {}
        self.by_mnemonic: Dict[str, List[Form]] = {}
        self.vocab: Dict[str, Dict[Optional[str], int]] = {}
        for fr in self.form_rules:
            for toks, labels in expand(fr):
                op = "".join(toks)
                if op in self.by_opcode:
                    raise InternalError(f"legality.lark: {op} is spelled by both {self.by_opcode[op].rule} "
                                        f"and {fr}")
                fields = {lb: t for t, lb in zip(toks, labels) if lb is not None}
                f = Form(op, fr, toks, labels, fields)
                self.by_opcode[op] = f
                self.by_mnemonic.setdefault(toks[0], []).append(f)
                for t, lb in zip(toks, labels):
                    d = self.vocab.setdefault(t, {})
                    d[lb] = d.get(lb, 0) + 1
        self._neighbours: Dict[str, Dict[tuple, list]] = {}
        self._postings: Dict[tuple, _Postings] = {}
        # ptxas takes the modifiers after an instruction's name in any order but for the words of each
        # isa_core.ORDERED_WORDS group (isa_core.order_key): the forms by that reading, by their words in any order
        # (to tell a name word out of place) and by their instruction name
        self.by_order: Dict[tuple, Form] = {}
        self.by_words: Dict[Tuple[str, ...], List[Form]] = {}
        self.by_name: Dict[str, List[Form]] = {}
        for f in self.by_opcode.values():
            words = _words(f.tokens)
            key = order_key(words)
            if key in self.by_order:
                raise InternalError(f"legality.lark: {f.opcode} and {self.by_order[key].opcode} are one instruction "
                                    "to ptxas, which takes their modifiers in any order")
            self.by_order[key] = f
            self.by_words.setdefault(tuple(sorted(words)), []).append(f)
            self.by_name.setdefault(key[0], []).append(f)
        missing = [r for r in self.form_rules if r not in FORMS]
        extra = [r for r in FORMS if r not in form_set]
        if missing or extra:
            raise InternalError(f"legality table and grammar disagree: no table entry for {missing}, "
                                f"no grammar rule for {extra}")

    def within(self, toks: Sequence[str], limit: int) -> List[Form]:
        """The spellings of toks[0] (by_mnemonic's order) that may be within `limit` edits of `toks`: those whose
        edit distance is not known to exceed it (it is at least the longer length less the tokens the two share)."""
        p = self._postings.get(("tokens", toks[0]))
        if p is None:
            fs = self.by_mnemonic.get(toks[0], [])
            p = self._postings[("tokens", toks[0])] = _Postings(fs, [f.tokens for f in fs])
        n = len(toks)
        return [p.forms[i] for i, c in enumerate(p.shared(toks)) if max(n, p.lens[i]) - c <= limit]

    def most_alike(self, name: str, words: Sequence[str]) -> Optional[Form]:
        """The first spelling of instruction `name` (by_name's order) that has the most of `words` after the name."""
        p = self._postings.get(("words", name))
        if p is None:
            fs = self.by_name.get(name, [])
            n = name.count(".") + 1
            p = self._postings[("words", name)] = _Postings(fs, [[t[1:] for t in f.tokens[n:]] for f in fs])
        if not p.forms:
            return None
        score = p.shared(words)
        return p.forms[max(range(len(score)), key=score.__getitem__)]

    def neighbour_index(self, mnemonic: str) -> Dict[tuple, list]:
        """Keys of the spellings of one mnemonic with one token wildcarded ('s') or dropped ('d')."""
        idx = self._neighbours.get(mnemonic)
        if idx is None:
            idx = {}
            for f in self.by_mnemonic.get(mnemonic, ()):
                t = f.tokens
                for i in range(1, len(t)):
                    idx.setdefault(("s", t[:i] + (None,) + t[i + 1:]), []).append((f, (("sub", i, i),)))
                    idx.setdefault(("d", t[:i] + t[i + 1:]), []).append((f, (("ins", i, i),)))
            self._neighbours[mnemonic] = idx
        return idx


class _Postings:
    """Spellings with, per word, the (spelling index, count) pairs of those that have it: the words each shares
    with a list of words, counted without visiting the words of every spelling."""

    def __init__(self, forms_: List[Form], words: List[Sequence[str]]):
        self.forms = forms_
        self.lens = [len(w) for w in words]
        self.index: Dict[str, List[Tuple[int, int]]] = {}
        for i, ws in enumerate(words):
            for w, c in Counter(ws).items():
                self.index.setdefault(w, []).append((i, c))

    def shared(self, words: Sequence[str]) -> List[int]:
        """Per spelling, how many of `words` it has (a word as often as both have it)."""
        score = [0] * len(self.forms)
        for w, have in Counter(words).items():
            for i, c in self.index.get(w, ()):
                score[i] += c if c < have else have
        return score


@functools.lru_cache(maxsize=1)
def _catalogue() -> _Catalogue:
    return _Catalogue()


def forms(rule: Optional[str] = None, mnemonic: Optional[str] = None) -> Iterator[Form]:
    """Every legal spelling in the grammar (optionally of one form rule or one mnemonic)."""
    cat = _catalogue()
    src = cat.by_mnemonic.get(mnemonic, []) if mnemonic is not None else cat.by_opcode.values()
    for f in src:
        if rule is None or f.rule == rule:
            yield f


def _words(toks: Sequence[str]) -> List[str]:
    """An opcode's tokens as words (without their dots), as isa_core reads them."""
    return [toks[0]] + [t[1:] for t in toks[1:]]


# modifiers ptxas 13.0 takes more than once, as flags: `mma.sync.sync.aligned`, `elect.sync.sync`, and .satfinite
# of mma.sync, mma.sp and wgmma.mma_async (`wgmma.mma_async.sync.aligned.m64n64k32.satfinite.satfinite.s32.s8.s8`)
_FLAG_WORDS = ("sync", "satfinite")


def parse(opcode: str) -> Optional[Form]:
    """The Form of a legal opcode spelling, or None. A spelling with its modifiers in another order that ptxas takes
    (isa_core.order_key: `mma.sync.aligned.row.col.m16n8k16.f32.f16.f16.f32`) is the Form of the grammar's spelling,
    whose opcode is in the PTX ISA's order."""
    cat = _catalogue()
    f = cat.by_opcode.get(opcode)
    if f is None and "." in opcode:
        toks = opcode.split(".")
        f = cat.by_order.get(order_key(toks))
        if f is None and any(toks.count(w) > 1 for w in _FLAG_WORDS):
            f = cat.by_order.get(order_key([t for i, t in enumerate(toks)
                                            if t not in _FLAG_WORDS or t not in toks[:i]]))
    return f


def canonical(opcode: str) -> Optional[str]:
    """A legal opcode in the PTX ISA's order of its modifiers (the grammar's spelling), or None for an illegal one."""
    f = parse(opcode)
    return None if f is None else f.opcode


# the families check() speaks for: a mnemonic, with the second token where the mnemonic is shared with
# instructions outside these families (barrier.sync ...)
_COVERED = {
    "mma": (".sync", ".sp", ".sp::ordered_metadata"), "ldmatrix": None, "stmatrix": None,
    "wgmma": (".mma_async", ".fence", ".commit_group", ".wait_group"),
    "cp": (".async", ".reduce"), "mbarrier": None, "fence": None, "barrier": (".cluster",), "mapa": None,
    "getctarank": None, "setmaxnreg": None, "elect": None, "griddepcontrol": None,
    "st": (".async",), "red": (".async",),
    "tex": None, "tld4": None, "txq": None, "istypep": None, "suld": None, "sust": None, "sured": None, "suq": None,
    "applypriority": None, "discard": None, "multimem": None,
}


# Modifiers of later (mostly sm_100) variants that the grammar does not model yet; an opcode with one of them is
# left to ptxas rather than reported as illegal. (mma's .kind, .block_scale and .scale_vec forms are modelled,
# dense and sparse, and so is wgmma.mma_async.sp.)
_UNMODELLED = frozenset({
    ".tile::gather4", ".tile::scatter4", ".im2col::w", ".im2col::w::128", ".cta_group::1", ".cta_group::2",
    ".multicast::cluster::all",
})



def covers(opcode: str) -> bool:
    """Does check() speak for this opcode? (barrier.sync, sm_100 TMA modes ... do not.)"""
    toks = _tokens(opcode)
    if toks[0] == "prefetch":             # the tensor-map form only; plain prefetch is lint's core table's
        return ".tensormap" in toks
    if toks[0] not in _COVERED or any(t in _UNMODELLED for t in toks):
        return False
    second = _COVERED[toks[0]]
    # (anywhere: ptxas takes mma's .sync after its other modifiers too)
    if second is not None and not any(t in second for t in toks[1:]):
        return False
    return True


# ================================================================================================ table

@dataclass(frozen=True)
class Need:
    """A minimum: any of `targets` (Target.satisfies), and PTX ISA `version`."""

    targets: Tuple[str, ...]
    version: PtxVersion

    def met_by(self, target: Target) -> bool:
        return any(target.satisfies(t) for t in self.targets)

    def target_text(self) -> str:
        return _targets_text(self.targets)


def _need(targets: Union[str, Tuple[str, ...]], version: str) -> Need:
    return Need((targets,) if isinstance(targets, str) else tuple(targets), parse_version(version))


def _targets_text(ts: Tuple[str, ...]) -> str:
    out, family = [], False
    for t in ts:
        tg = Target.parse(t)
        if tg.suffix == "":
            out.append(f"{t} or later")
        elif tg.suffix == "a":
            out.append(t)
        else:
            out.append(f"sm_{tg.sm}a/sm_{tg.sm}f")
            family = True
    text = out[0] if len(out) == 1 else ", ".join(out[:-1]) + " or " + out[-1]
    return text + (" (or a later a/f target of the same family)" if family else "")


# the arch-specific/family targets of the later-generation forms (ldmatrix .m16n16 .b8, setmaxnreg ...)
_FAMILIES_100 = ("sm_100f", "sm_110f", "sm_120f")
# ... and their arch-specific targets alone, as ptxas 13.0 knows them
_ARCH_100 = ("sm_100a", "sm_103a", "sm_110a", "sm_120a", "sm_121a")

VEC, REG, IMM, ADDR, TENSOR, SYM, SINK = "vec", "reg", "imm", "addr", "tensor", "sym", "sink"
_KIND_TEXT = {VEC: "a vector {r0, r1, ...}", REG: "a register", IMM: "an immediate", ADDR: "an address [a]",
              TENSOR: "a tensor reference [tensorMap, {c0, ...}]", SYM: "a variable name", SINK: "the sink _"}


@dataclass(frozen=True)
class Slot:
    """One operand of a form: what it may be (kinds), its register type(s), vector length, immediates."""

    name: str
    kinds: FrozenSet[str]
    types: Tuple[Type, ...] = ()
    count: int = 1
    role: str = "src"            # "dst": written by the instruction
    values: Optional[Sequence[int]] = None   # legal immediate values (None: any)
    optional: bool = False
    need: Optional[Need] = None  # an operand that raises the form's minimum when present
    exact: bool = False          # types: the only register types taken (no same-size relatives); the
                                 # tensor-core fragments, whose types ptxas checks its own way
    float_bits: bool = False     # a hex float literal (0f, 0d) of a bit type's width is taken as its bits
    spaces: Optional[FrozenSet[str]] = None  # an address (tensor: its map): the state spaces of the
                                             # variables it may name (None: any; `_address_spaces`)
    handles: Optional[Tuple[Tuple[FrozenSet[str], bool], ...]] = None
    # a texture or surface reference `[a, {b,} c]` (tensor) or `[a]` (address): per leading item, the
    # types it may have (a .texref/.samplerref/.surfref variable's, or a register's) and whether it is
    # optional; None: one leading item of any type (a tensor map), written with braces
    counts: Optional[Tuple[int, ...]] = None  # a vector or tensor that takes several lengths (`count` the first)
    loose: bool = False          # ptxas takes any literal here, and a vector of registers of mixed kinds
                                 # (tex's scalar operands and result vector)
    fragment: bool = False       # a tensor-core fragment (mma, mma.sp, wgmma, stmatrix): a vector of literals only
                                 # is typed by its literals (_literal_fragment_problem)
    f64_literals: bool = False   # a fragment that takes literals typed .f64 too (the .f32 C of the 8-, 6- and 4-bit
                                 # float inputs without a block scale)
    no_special: bool = False     # an address whose base may not be a special register (the mbarrier family's:
                                 # "Illegal space for address operand '%laneid'"; txq's and suq's handle)

    @property
    def type(self) -> Optional[Type]:
        return self.types[0] if self.types else None

    def text(self) -> str:
        kinds = [k for k in (VEC, REG, IMM, ADDR, TENSOR, SYM, SINK) if k in self.kinds]
        what = " or ".join(_KIND_TEXT[k] for k in kinds)
        if self.types and (REG in self.kinds or VEC in self.kinds):
            what += " of " + "/".join("." + t.name for t in self.types)
        return what


@dataclass(frozen=True)
class Signature:
    """An operand list of a form; some forms have several (wgmma: A from a descriptor or registers)."""

    name: str
    slots: Tuple[Slot, ...]
    cross: Optional[Callable[[Sequence["OperandInfo"], Dict[str, int]], List[Tuple[str, str]]]] = None
    # operands ptxas takes for some targets only: (operands, slot name -> index, target) -> [(code, message)]
    gate: Optional[Callable[[Sequence["OperandInfo"], Dict[str, int], Target], List[Tuple[str, str]]]] = None

    @property
    def required(self) -> int:
        return sum(1 for s in self.slots if not s.optional)


@dataclass(frozen=True)
class OperandInfo:
    """What check() needs to know of one operand.

    kind: 'reg' (type: its register type; a predicate, negated or not, is a .pred register), 'imm'
    (value: an integer literal's; floating: a floating-point literal, whose value is not kept, with type
    .f32 for a 0f literal and .f64 for a 0d or decimal one), 'vec' (count; elems: element register
    types; lits: which elements are literals; decl: the registers' declared types), 'addr', 'tensor'
    (count: coordinates; elems: their types), 'sym' (a variable name), 'sink' (`_`). Operand pairs
    such as `d|p` are given as two operands.
    An address or tensor reference that names a variable (`[bar]`, `[tmap, {x}]`) has its state space.
    """

    kind: str
    type: Optional[Type] = None
    count: int = 1
    value: Optional[int] = None
    elems: Tuple[Optional[Type], ...] = ()
    floating: bool = False
    lits: Tuple[Optional[str], ...] = ()   # 'vec': per element, 'i' for an integer literal, 'f' for a float
                                           # literal, None for a register (empty where there are none)
    decl: Tuple[Optional[Type], ...] = ()  # 'vec': per element, the type its register is declared with
                                           # where that is not its type (empty: the same)
    lits64: Tuple[int, ...] = ()           # 'vec': the elements that are 64-bit float literals (0d, decimal)
    space: Optional[str] = None      # 'addr', 'tensor': the state space of the variable the address
                                     # names ('shared', 'global', ...); None: a register, or not known
    handles: Tuple[Optional[str], ...] = ()  # 'addr', 'tensor': the type names of the items before the
                                     # coordinates (`[tex, smp, {x, y}]`: ('texref', 'samplerref')); None
                                     # for an item that is neither a register nor a typed variable
    bare: bool = False               # 'tensor': one coordinate written without braces (`[tex, %r1]`)
    vals: Tuple[Optional[int], ...] = ()  # 'vec': per element, an integer literal's value (None for a register or
                                     # a float literal; empty where there are no integer literals, or not known)
    special: bool = False            # 'reg': a special register (%tid.x, %laneid, %globaltimer ...); 'vec': one
                                     # of its elements is; 'addr': its base is
    whole: int = 0                   # 'reg': a vector register named whole (`%v` of `.reg .v4 .b32 %v`): its length,
                                     # with `type` its elements' type (_whole_vector says how ptxas reads it);
                                     # 'tensor': its coordinates are one (`[tmap, %v]`)


def _slot(name, kinds, types=(), count=1, role="src", values=None, optional=False, need=None, exact=False,
          float_bits=False, handles=None, counts=None, loose=False) -> Slot:
    if isinstance(types, Type):
        types = (types,)
    return Slot(name, frozenset(kinds), tuple(types), count, role, values, optional, need, exact, float_bits,
                None, handles, counts, loose)


def _vec(name, count, ty, role="src"):
    return _slot(name, (VEC,), ty, count, role)


def _frag(name, count, ty, role="src", *, wgmma=False, shape="", fp8=False, sparse=False, kind=""):
    """A tensor-core fragment of `count` registers of type `ty` (the one the builder allocates), with
    the register types ptxas 13.0 takes in it (`fragment_reg_types`)."""
    return replace(_slot(name, (VEC,), fragment_reg_types(ty, wgmma, shape, fp8, sparse, kind), count, role,
                         exact=True), fragment=True)


def _reg(name, ty, role="src", **kw):
    return _slot(name, (REG,), ty, role=role, **kw)


def _reg_imm(name, ty, **kw):
    return _slot(name, (REG, IMM), ty, **kw)


def _imm(name, values=None, **kw):
    return _slot(name, (IMM,), (), values=values, **kw)


def _addr(name, **kw):
    return _slot(name, (ADDR,), **kw)


# a 64-bit cache-policy: createpolicy's result, or an immediate (ptxas 13.0 takes both)
_POLICY = _reg_imm("cache-policy", (u64,))
_ANY_COUNT = range(0, 1 << 63)  # wgmma.wait_group N: ptxas takes any non-negative 64-bit value


@dataclass(frozen=True)
class FormRule:
    """The part of a form that grammar cannot say: title for messages, minimums, operands."""

    title: str
    need: Need
    raises: Dict[str, Need]
    operands: Callable[[Form], List[Signature]]


def _sig(*slots, name="", cross=None, gate=None) -> List[Signature]:
    return [Signature(name, tuple(s for s in slots if s is not None), cross, gate)]


# --------------------------------------------------------------------------------- register fragments

_AB_REG = {"f16": f16x2, "bf16": bf16x2, "tf32": tf32, "f64": f64}   # others: packed into .b32
_CD_REG = {"f16": f16x2, "f32": f32, "s32": s32, "f64": f64}
_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "f64": 64, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8, "s4": 4, "u4": 4,
         "b1": 1}
_SHAPE_RE = re.compile(r"^\.m(\d+)n(\d+)k(\d+)$")


def _mnk(shape_token: str) -> Tuple[int, int, int]:
    m = _SHAPE_RE.match(shape_token)
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


# The register types ptxas 13.0 takes in a tensor-core fragment, by the fragment's own type (measured
# with a vector of one register type at a time, every mma and wgmma spelling, tests/test_legality_ptxas.py).
# .bf16x2 and .tf32 registers cannot be declared in PTX text (the builder's registers of these types are
# declared .b32), so ptxas sees .b32 there; the other types are the declared ones.
FRAGMENT_REGS = {
    "f16x2": ("f16x2", "b32"),
    "bf16x2": ("bf16x2", "b32"),
    "tf32": ("tf32", "b32"),
    "b32": ("b32", "u32", "s32", "f32", "f16x2"),    # 8-bit, 4-bit, 1-bit and fp8 inputs, packed
    "f32": ("f32", "b32"),
    "s32": ("s32", "b32", "u32"),
    "f64": ("f64", "b64", "u64", "s64"),
}
# wgmma's register A also takes .f16x2 registers for .bf16x2 and .tf32 (mma.sync does not) and, with
# .e4m3/.e5m2 inputs, only .b32 and .f16x2 ones; mma.sync.m8n8k16 (8-bit integers) takes only
# integer registers
_FRAGMENT_REGS_WGMMA_A = {"bf16x2": ("bf16x2", "b32", "f16x2"), "tf32": ("tf32", "b32", "f16x2")}
_FRAGMENT_REGS_WGMMA_FP8 = ("b32", "f16x2")
_FRAGMENT_REGS_M8N8K16 = ("b32", "u32", "s32")
# mma.sp takes any 32-bit register of .b32, .u32, .s32, .f32 and .f16x2 in its .bf16 and .tf32 inputs and in
# the .f32 accumulator of its .f16, .bf16 and .tf32 forms (mma.sync does not; with .e4m3/.e5m2 inputs the
# accumulator takes .f32 and .b32 only, as mma.sync's); its .f16 inputs and accumulators, packed 8- and 4-bit
# inputs and .s32 accumulators take what mma.sync's take (tests/test_lint_mma_sp.py)
_ANY32 = ("b32", "u32", "s32", "f32", "f16x2")
_FRAGMENT_REGS_SPARSE = {"bf16x2": ("bf16x2",) + _ANY32, "tf32": ("tf32",) + _ANY32,
                         "f32": ("f32", "b32", "u32", "s32", "f16x2")}
# the forms with a .kind (dense and sparse): A and B of those without a block scale (.kind::f8f6f4) take any 32-bit
# register and .pred ones too (not with .e4m3/.e5m2 inputs on sm_90 to sm_110: _fp8_gate), those of the block-scaled
# forms .b32 only; D and C take what mma.sync's take (tests/test_lint_mma_kind.py)
_FRAGMENT_REGS_KIND_AB = {"f8f6f4": _ANY32 + ("pred",), "block_scale": ("b32",)}


def fragment_reg_types(ty: Type, wgmma: bool = False, shape: str = "", fp8: bool = False,
                       sparse: bool = False, kind: str = "") -> Tuple[Type, ...]:
    """The register types a fragment of type `ty` takes, its own first (FRAGMENT_REGS): `wgmma` for
    wgmma.mma_async's (`fp8`: A of .e4m3/.e5m2), `shape` mma.sync's shape (m16n8k16), `sparse` for
    mma.sp's (`fp8`: of a form with .e4m3/.e5m2 inputs), `kind` for a form with a .kind, dense or sparse:
    'block_scale' for a block-scaled one, 'f8f6f4' for another."""
    names = FRAGMENT_REGS[ty.name]
    if kind:
        if ty.name == "b32":
            names = _FRAGMENT_REGS_KIND_AB[kind]
    elif wgmma:
        names = _FRAGMENT_REGS_WGMMA_FP8 if fp8 else _FRAGMENT_REGS_WGMMA_A.get(ty.name, names)
    elif sparse:
        if not (fp8 and ty.name == "f32"):
            names = _FRAGMENT_REGS_SPARSE.get(ty.name, names)
    elif shape == "m8n8k16" and ty.name == "b32":
        names = _FRAGMENT_REGS_M8N8K16
    return tuple(get_type(n) for n in names)


# .pred registers in a tensor-core fragment, as ptxas 13.0 takes them (tests/test_lint_fragment_pred.py runs every
# fragment of every mma, mma.sp, ldmatrix, stmatrix and wgmma form with .pred registers at ten targets): where the
# fragment takes any 32-bit register and the target runs the instruction itself, a .pred register passes too; where
# ptxas expands the instruction into code of its own (the 4-bit forms and .b1 from sm_90 on, .b1 .xor.popc on sm_90,
# .e4m3/.e5m2 mma on sm_90 to sm_110) that code's operands refuse it. By form: the .s8/.u8 mma.sync A and B (not at
# m8n8k16, whose B takes them from sm_100 on), mma.sp's .s8/.u8 A and B, its .bf16 and .tf32 fragments and the .f32
# accumulator of its .f16 forms at every target; the .s4/.u4 A and B below sm_90; .b1's below sm_90, and with .and on
# sm_90; the .e4m3/.e5m2 ones on sm_89 and from sm_120 on. ldmatrix's and stmatrix's registers and wgmma's integer
# and .b1 register A take them too (_vec, fragment_reg_types).
_PRED = get_type("pred")
_INF = 1 << 30
_ALWAYS = ((0, _INF),)


def _pred_targets(f: Form, name: str, t: str) -> Sequence[Tuple[int, int]]:
    """The sm ranges [lo, hi) at which ptxas takes .pred registers in fragment `name` (of type `t`) of mma.sync or
    mma.sp form `f`; () where it never does."""
    sparse = f.rule.startswith("mma_sp")
    if name in ("c", "d"):
        return _ALWAYS if sparse and t in ("f32",) and f.fields["atype"][1:] in ("f16", "bf16", "tf32") else ()
    if t in ("s8", "u8"):
        return _ALWAYS if sparse or not f.has(".m8n8k16") else (((100, _INF),) if name == "b" else ())
    if t in ("bf16", "tf32"):
        return _ALWAYS if sparse else ()
    if t in ("s4", "u4"):
        return ((0, 90),)
    if t == "b1":
        return ((0, 100),) if f.has(".and") else ((0, 90),)
    if t in _FP8:
        return _ALWAYS       # refused on sm_90 to sm_110 by _fp8_gate, as the .kind::f8f6f4 forms'
    return ()


def _target_regs(f: Form, name: str, t: str) -> List[Tuple[Tuple[str, ...], Sequence[Tuple[int, int]]]]:
    """The register types that fragment `name` (of type `t`) of mma.sync or mma.sp form `f` takes at some targets
    only: [(type names, the sm ranges [lo, hi) that take them)]. Besides .pred (_pred_targets): m8n8k16's .s8/.u8 B
    takes any 32-bit register from sm_100 on, and the .f64 D of m16n8k4/k8/k16 .u64 and .s64 ones below sm_100 (where
    ptxas moves it with a mov of its own: "Arguments mismatch for instruction 'mov'"). Entries of _MIXED_ONLY are
    registers taken beside the fragment's own ones (a vector of mixed types), and literals, not a whole vector of
    them (_widen leaves them out)."""
    out = []
    pr = _pred_targets(f, name, t)
    if pr and pr != _ALWAYS:
        out.append((("pred",), pr))
    if name == "b" and t in ("s8", "u8") and f.has(".m8n8k16"):
        out.append((("f32", "f16x2"), ((100, _INF),)))
    if name == "d" and t == "f64" and not f.has(".m8n8k4"):
        out.append((("u64", "s64"), ((0, 100),)))
        out.append(((_MIXED_ONLY, _SPECIAL), ((0, 100),)))
    if f.rule.startswith("mma_sp"):
        return out
    at = f.fields["atype"][1:]
    if name in ("a", "b", "c") and at in ("s4", "u4", "b1"):
        # a special register element where A refuses .pred ("Call argument '%laneid' has illegal state space", its
        # own code), and a .pred element of C (beside .b32 ones: a vector typed by its elements) there ("Type of
        # argument does not match formal parameter 'c0'")
        out.append(((_MIXED_ONLY, _SPECIAL) + (("pred",) if name == "c" else ()), _pred_targets(f, "a", at)))
    if f.rule == "mma_m8n8k4_f16" and name != "d":
        # from sm_80 on ptxas runs m8n8k4 through code of its own, whose A, B and C take no .pred element, nor a
        # special register
        out.append(((_MIXED_ONLY, "pred", _SPECIAL), ((0, 80),)))
    return out


def _m8n8k4_d_gate(ops: Sequence[OperandInfo], where: Dict[str, int], target: Target) -> List[Tuple[str, str]]:
    """mma.m8n8k4 with an .f32 D from sm_80 on: ptxas 13.0 writes D in halves of four registers through code of its
    own, which refuses a half of .pred registers only ({%r0, %r1, %r2, %r3, %p4, %p5, %p6, %p7}: "Arguments mismatch
    for instruction 'ld'")."""
    k = where.get("d")
    if k is None or target.sm < 80 or ops[k].kind != VEC or ops[k].count != 8:
        return []
    decl = ops[k].decl or ops[k].elems
    for h in (0, 4):
        if all(t is not None and t.kind == "pred" for t in decl[h:h + 4]) and \
                not all(t is not None and t.kind == "pred" for t in decl):
            return [(CODE_TYPE, f"operand {k + 1} (d) has four .pred registers in its {'first' if h == 0 else 'second'} "
                                f"half; for {target} ptxas 13.0 writes D in halves of four through code of its own, "
                                "which takes no half of .pred registers (\"Arguments mismatch for instruction 'ld'\")")]
    return []


def _m8n8k16_c_gate(ops: Sequence[OperandInfo], where: Dict[str, int], target: Target) -> List[Tuple[str, str]]:
    """mma.m8n8k16 (.s8/.u8) from sm_100 on: ptxas 13.0 runs it through code of its own, where C's second element
    is an integer or bit register or an integer literal ({%r0, %f1}, {%r0, %p1}, {%r0, 0f3F800000} are "Vector with
    elements of different types"), and its first is no 0f literal ("Arguments mismatch for instruction 'mma'"); below
    sm_100, and in the first element beside a .b32 one (an .f32, .f16x2 or .pred register, a 0d literal), C is any
    vector as the other fragments are."""
    k = where.get("c")
    if k is None or target.sm < 100 or ops[k].kind != VEC:
        return []
    o = ops[k]
    decl = o.decl or o.elems
    lits = o.lits or (None,) * o.count
    for i in range(1, o.count):
        t = decl[i]
        if t is not None and t.kind in ("f", "packed", "pred") or lits[i] == "f":
            what = f"a .{t.name} register" if t is not None else "a floating-point literal"
            return [(CODE_TYPE, f"operand {k + 1} (c) has {what} after its first element; for {target} ptxas 13.0 "
                                "runs mma.m8n8k16 through code of its own, which takes integer and bit registers and "
                                "integer literals there (\"Vector with elements of different types\")")]
    if o.count and lits[0] == "f" and 0 not in o.lits64:
        return [(CODE_TYPE, f"operand {k + 1} (c) starts with a 0f literal; for {target} ptxas 13.0 runs "
                            "mma.m8n8k16 through code of its own, which refuses it (\"Arguments mismatch\")")]
    return []


_INT_LITERALS, _FLOAT_LITERALS = "integer literals", "floating-point literals"   # (in _target_regs: not types)
_MIXED_ONLY = "mixed only"
_SPECIAL = "special registers"      # (in _target_regs: a vector element such as %laneid, OperandInfo.special)


def _widen(slot: Slot, f: Form, t: str) -> Slot:
    """Fragment `slot` (of type `t` in form `f`) taking every register type it takes at some target: .pred where
    _pred_targets says so, and _target_regs's."""
    names = [x.name for x in slot.types]
    if _pred_targets(f, slot.name, t):
        names.append("pred")
    for extra, _ in _target_regs(f, slot.name, t):
        if _MIXED_ONLY not in extra:
            names += [n for n in extra if n not in names]
    return replace(slot, types=tuple(get_type(n) for n in dict.fromkeys(names)))


def _regs_gate(f: Form, types: Dict[str, str], then=None):
    """A gate refusing the register types _target_regs limits to some targets, in the fragments named in `types`
    ({fragment name: its element type}), at the targets outside their ranges; `then`, another gate, runs after it."""
    limited = {n: lim for n, t in types.items() for lim in [_target_regs(f, n, t)] if lim}
    if not limited:
        return then

    def gate(ops: Sequence[OperandInfo], where: Dict[str, int], target: Target) -> List[Tuple[str, str]]:
        out = []
        for name, lims in limited.items():
            k = where.get(name)
            if k is None or ops[k].kind != VEC:
                continue
            held = {x.name for x in (ops[k].decl or ops[k].elems) if x is not None}
            lits = [x for x in ops[k].lits if x]
            value = _literal_value(ops[k]) if lits and len(lits) == ops[k].count else None
            if value in ("f32", "f64"):
                held.add(value)       # float literals only: an .f32 or .f64 value (_literal_value)
            held |= {_INT_LITERALS if x == "i" else _FLOAT_LITERALS for x in lits}
            if ops[k].special:
                held.add(_SPECIAL)
            for names, ranges in lims:
                bad = sorted(held & set(names))
                if bad and not any(lo <= target.sm < hi for lo, hi in ranges):
                    at = " and ".join(_sm_range_text(lo, hi) for lo, hi in ranges)
                    what = " and ".join([f"{'/'.join('.' + n for n in bad if ' ' not in n)} registers"]
                                        * any(" " not in n for n in bad) + [n for n in bad if " " in n])
                    out.append((CODE_TYPE, f"operand {k + 1} ({name}) holds {what}; ptxas 13.0 takes them here {at}, "
                                           f"not for {target}, where it expands the instruction into code of its own "
                                           "that refuses them"))
                    break
        return out + (then(ops, where, target) if then is not None else [])
    return gate


def _sm_range_text(lo: int, hi: int) -> str:
    if hi >= _INF:
        return f"from sm_{lo} on"
    if lo == 0:
        return f"below sm_{hi}"
    return f"on sm_{lo}" if hi == lo + 1 else f"from sm_{lo} to below sm_{hi}"


def _elems_to_regs(elems: int, t: str) -> Tuple[int, Type]:
    if t == "f64":
        return elems, f64
    return max(elems * _BITS[t] // 32, 1), _AB_REG.get(t, b32)


def _acc_regs(elems: int, t: str) -> Tuple[int, Type]:
    return (elems // 2 if t == "f16" else elems), _CD_REG[t]


def _mma_operands(f: Form) -> List[Signature]:
    m, n, k = _mnk(f.fields["shape"])
    at, bt = f.fields["atype"][1:], f.fields["btype"][1:]
    ct, dt = f.fields["ctype"][1:], f.fields["dtype"][1:]
    if f.rule == "mma_m8n8k4_f16":
        # quad-pair form: each of the 8 quad pairs computes an 8x8 tile (PTX ISA, "mma.m8n8k4")
        a, b = (2, f16x2), (2, f16x2)
        c = (4, f16x2) if ct == "f16" else (8, f32)
        d = (4, f16x2) if dt == "f16" else (8, f32)
    else:
        a = _elems_to_regs(m * k // 32, at)
        b = _elems_to_regs(k * n // 32, bt)
        c = _acc_regs(m * n // 32, ct)
        d = _acc_regs(m * n // 32, dt)
    sh = f.fields["shape"][1:]
    b_slot = _widen(_frag("b", b[0], b[1], shape=sh), f, bt)
    if at in _FP8 and k == 16:      # ptxas 13.0 takes B of 1, 2, 4 or 8 registers here (tests/test_lint_mma_kind.py)
        b_slot = replace(b_slot, counts=(1, 2, 4, 8))
    return _sig(_widen(_frag("d", d[0], d[1], "dst", shape=sh), f, dt), _widen(_frag("a", a[0], a[1], shape=sh), f, at),
                b_slot, replace(_frag("c", c[0], c[1], shape=sh), f64_literals=at in _FP8 and ct == "f32"),
                gate=_regs_gate(f, {"d": dt, "a": at, "b": bt, "c": ct},
                                _FP8_GATES[dt] if at in _FP8 else _m8n8k4_d_gate if f.rule == "mma_m8n8k4_f16" and
                                dt == "f32" else _m8n8k16_c_gate if f.has(".m8n8k16") else None))


_FP8 = ("e4m3", "e5m2")


def sparsity_selectors(f: Form) -> Sequence[int]:
    """The values mma.sp's sparsity selector f takes, as ptxas 13.0 checks them ("Argument 6 of instruction
    'Sparse mma': value '2' out of range, expected to be in range [0..1]"): 0 to 3 for the .f16 and .bf16
    inputs at K=16, the .f16 inputs with an .f32 accumulator at K=32 and the .tf32 ones at K=8; 0 or 1 for
    the other .f16/.bf16/.tf32 ones and the 8- and 4-bit integers at their smaller K; 0 at their larger K.
    The whole 64-bit value is checked (18446744073709551616 reads as 0), but with .e4m3/.e5m2 inputs only its
    low 32 bits ("Argument 5 of instruction 'mma': unexpected value '1', expected to be 0")."""
    at, k = f.fields["atype"][1:], _mnk(f.fields["shape"])[2]
    if at in _FP8 or "kind" in f.fields:       # (the .kind forms: 0, in the low 32 bits too)
        return _Low32((0,))
    if at in ("s8", "u8", "s4", "u4"):
        return (0, 1) if k == (32 if at in ("s8", "u8") else 64) else (0,)
    four = {"f16": 16, "bf16": 16, "tf32": 8}[at] == k or (at == "f16" and k == 32 and f.fields["dtype"] == ".f32")
    return range(4) if four else (0, 1)


# the sparsity metadata e: a 32-bit register (ptxas 13.0 takes a .pred one too, the bits of a 0f literal, and a
# vector of 1, 2, 4 or 8 such registers, but no integer literal); some forms take less at some targets (_meta_gate)
_META_TYPES = tuple(get_type(n) for n in _ANY32 + ("pred",))
_META = _slot("e", (REG, IMM, VEC), _META_TYPES, exact=True, float_bits=True, counts=(1, 2, 4, 8))
_META_FP8_TYPES = tuple(get_type(n) for n in ("b32", "u32", "s32", "f16x2"))


def _meta_cross(ops: Sequence[OperandInfo], where: Dict[str, int], name: str = "e",
                what: str = "the sparsity metadata") -> List[Tuple[str, str]]:
    """No integer literal in the metadata (mma.sp's e, wgmma.mma_async.sp's sp-meta) or in the block-scaled mma
    forms' scale data, nor a vector of literals with an integer among them (ptxas 13.0: "Arguments mismatch"; a
    0f literal is taken)."""
    k = where.get(name)
    if k is None:
        return []
    o = ops[k]
    if (o.kind == IMM and not o.floating) or (o.kind == VEC and o.lits and all(o.lits) and "i" in o.lits):
        lit = "an integer literal" if o.kind == IMM else "a vector of literals"
        return [(CODE_OPERANDS, f"operand {k + 1} ({name}) is {lit}; {what} is a 32-bit register "
                                "(or its bits as a 0f literal)")]
    return []


def _meta_gate_builtin(first_sm: int):
    """ptxas 13.0 compiles some forms through a function of its own from SM generation `first_sm` on, whose e is a
    32-bit parameter: a .pred register there is "Type of argument does not match formal parameter 'e'", and a
    vector makes ptxas fail on its own code ("<builtin>, line 8; fatal : Parsing error near '{'")."""
    def gate(ops: Sequence[OperandInfo], where: Dict[str, int], target: Target) -> List[Tuple[str, str]]:
        k = where.get("e")
        if k is None or target.sm < first_sm:
            return []
        o = ops[k]
        if o.kind == VEC:
            return [(CODE_OPERANDS, f"operand {k + 1} (e) is a vector; for {target} ptxas 13.0 compiles this form "
                                    "through a function of its own and fails on a vector there (\"Parsing error near "
                                    "'{'\" in <builtin>); write one 32-bit register")]
        if o.kind == REG and o.type is pred:
            return [(CODE_TYPE, f"operand {k + 1} (e) is a .pred register; for {target} ptxas 13.0 compiles this "
                                "form through a function of its own, whose e is a 32-bit parameter (\"Type of argument "
                                "does not match formal parameter 'e'\"); write a .b32 register")]
        return []
    return gate


def _meta_gate_fp8(ops: Sequence[OperandInfo], where: Dict[str, int], target: Target) -> List[Tuple[str, str]]:
    """.e4m3/.e5m2 inputs from sm_90 to the sm_110 family: ptxas 13.0 moves e with a mov.b32 of its own, which
    takes only a .b32, .u32, .s32 or .f16x2 register ("Arguments mismatch for instruction 'mov'", "Argument vector
    size mismatch for instruction 'mov'"); sm_89 and the sm_120 family take what the other forms take."""
    k = where.get("e")
    if k is None or not 90 <= target.sm < 120:
        return []
    o = ops[k]
    if o.kind == REG and any(o.type is t for t in _META_FP8_TYPES):
        return []
    what = {REG: f"a .{o.type.name if o.type else '?'} register", IMM: "a literal", VEC: "a vector"}.get(o.kind, o.kind)
    return [(CODE_TYPE if o.kind == REG else CODE_OPERANDS,
             f"operand {k + 1} (e) is {what}; with .e4m3/.e5m2 inputs ptxas 13.0 takes only a .b32, .u32, .s32 or "
             f".f16x2 register here for {target} (\"Arguments mismatch for instruction 'mov'\", its own code)")]


def _meta_gate(f: Form):
    """The target-dependent check of e (None: e is the same at every target). ptxas 13.0 compiles .s4/.u4 from
    sm_90 on, and plain .sp of .f16 and of .s8/.u8 from sm_100 on, through a function of its own
    (_meta_gate_builtin); .e4m3/.e5m2 has _fp8_gate (with _meta_gate_fp8); .bf16, .tf32 and the rest take e alike
    everywhere."""
    at = f.fields["atype"][1:]
    if at in _FP8:
        return _FP8_GATES[f.fields["dtype"][1:]]
    if at in ("s4", "u4"):
        return _META_GATE_90
    if at in ("f16", "s8", "u8") and f.fields["sparsity"] == ".sp":
        return _META_GATE_100
    return None


_META_GATE_90, _META_GATE_100 = _meta_gate_builtin(90), _meta_gate_builtin(100)


def _mma_sp_operands(f: Form) -> List[Signature]:
    """mma.sp d, a, b, c, e, f: A holds half of its M x K elements (two of every four along K), so a thread's A
    fragment is half of mma.sync's at the same shape; B, C and D are mma.sync's."""
    m, n, k = _mnk(f.fields["shape"])
    at, bt = f.fields["atype"][1:], f.fields["btype"][1:]
    ct, dt = f.fields["ctype"][1:], f.fields["dtype"][1:]
    fp8 = at in _FP8
    a = _elems_to_regs(m * k // 64, at)
    b = _elems_to_regs(k * n // 32, bt)
    c = _acc_regs(m * n // 32, ct)
    d = _acc_regs(m * n // 32, dt)
    kw = dict(sparse=True, fp8=fp8)
    types = {"d": dt, "a": at, "b": bt, "c": ct}
    d_, a_, b_, c_ = (_widen(_frag(n, r[0], r[1], "dst" if n == "d" else "src", **kw), f, types[n])
                      for n, r in (("d", d), ("a", a), ("b", b), ("c", c)))
    c_ = replace(c_, f64_literals=fp8 and ct == "f32")
    return _sig(d_, a_, b_, c_, _META, _imm("f", sparsity_selectors(f)), cross=_meta_cross,
                gate=_regs_gate(f, types, _meta_gate(f)))


# ---- the forms with a .kind (PTX ISA 9.0, "mma" with .kind and "Block scaling for mma.sync"), as ptxas 13.0 takes
# them (tests/test_lint_mma_kind.py)
# the byte of scale-a-data/scale-b-data that a thread-id selects, by the scale vector size (none written:
# .kind::mxf8f6f4's is 1X, .kind::mxf4's 2X); thread-id-a picks one of two threads, thread-id-b one of four
BYTE_IDS = {".scale_vec::1X": (0, 1, 2, 3), ".scale_vec::2X": (0, 2), ".scale_vec::4X": (0,)}
_DEFAULT_SCALE_VEC = {"mxf8f6f4": ".scale_vec::1X", "mxf4": ".scale_vec::2X"}
THREAD_IDS = {"a": (0, 1), "b": (0, 1, 2, 3)}
# the scale data: what mma.sp's e takes (a 32-bit or .pred register, the bits of a 0f literal, a vector of 1, 2, 4
# or 8 of them; no integer literal)
_SCALE_DATA = replace(_META, name="scale-a-data")


def scale_ids_name(m: str) -> str:
    """The name of the {byte-id, thread-id} operand of matrix `m` ('a' or 'b')."""
    return f"{{byte-id-{m}, thread-id-{m}}}"


_SCALE_ID_NAMES = (scale_ids_name("a"), scale_ids_name("b"))
# {byte-id, thread-id}: two integer constants, checked in all 64 bits; ptxas 13.0 also takes registers, typing the
# pair by its first element: after a constant, any integer or bit register of 8 to 64 bits; a 16-bit register first,
# then 16-bit ones (.b16, .u16, .s16, and .f16 beside a .b16) or a constant (_scale_ids_cross)
_ID_REGS = tuple(get_type(n) for n in ("b16", "u16", "s16", "f16", "b8", "u8", "s8", "b32", "u32", "s32", "b64",
                                       "u64", "s64"))


def kind_of(f: Form) -> str:
    """The .kind of an mma form (f8f6f4, mxf8f6f4, mxf4, mxf4nvf4), '' for one without."""
    k = f.fields.get("kind")
    return k[len(".kind::"):] if k else ""


def scale_ids(f: Form) -> Tuple[Sequence[int], Sequence[int], Sequence[int]]:
    """(byte-id values, thread-id-a values, thread-id-b values) of a block-scaled mma form (one with
    .block_scale)."""
    sv = f.fields.get("scale_vec") or _DEFAULT_SCALE_VEC[kind_of(f)]
    return BYTE_IDS[sv], THREAD_IDS["a"], THREAD_IDS["b"]


def _scale_ids_cross(byte_ids: Sequence[int]):
    def cross(ops: Sequence[OperandInfo], where: Dict[str, int]) -> List[Tuple[str, str]]:
        out = []
        for m in ("a", "b"):
            name = scale_ids_name(m)
            k = where.get(name)
            if k is None or ops[k].kind != VEC or ops[k].count != 2:
                continue
            o = ops[k]
            pos = f"operand {k + 1} ({name})"
            lits = o.lits or (None, None)
            if "f" in lits:
                out.append((CODE_TYPE, f"{pos} holds a floating-point literal; byte-id-{m} and thread-id-{m} are "
                                       "integer constants"))
                continue
            regs = [t for t in (o.decl or o.elems) if t is not None]
            if lits[0] is None and (any(t.bits != 16 for t in regs) or all(t.kind == "f" for t in regs)):
                out.append((CODE_TYPE, f"{pos}: with a register first, ptxas 13.0 types the pair by it and takes "
                                       "16-bit integer registers (.b16, .u16, .s16) here (\"Arguments mismatch\")"))
                continue
            for v, legal, what in zip(o.vals or (None, None), (byte_ids, THREAD_IDS[m]),
                                      (f"byte-id-{m}", f"thread-id-{m}")):
                if v is not None and v not in legal:
                    out.append((CODE_OPERANDS, f"{pos}: {what} must be {describe_ints(legal)}, not {v}"))
                    break
        return out
    return cross


# the registers (by declared type) and literals an add of ptxas's own takes in D and C, by accumulator type
_ACC_ADD = {"f32": (frozenset(("f32", "b32")), ("f",)), "f16": (frozenset(("f16x2", "b32")), ())}


def _fp8_gate(acc: str):
    """mma with .e4m3/.e5m2 inputs (mma.sync, mma.sp and the .kind::f8f6f4 forms, dense and sparse) on sm_90 to the
    sm_110 family, where ptxas 13.0 runs it through code of its own: that code moves A and B with a mov, which takes
    no .pred register ("Arguments mismatch for instruction 'mov'"), adds the `acc` accumulator with an add, which
    takes only registers declared as the accumulator's own fragment types in D and C (.f32 or .b32; .f16x2 or .b32)
    and no literal but a 0f one with .f32 ("Arguments mismatch for instruction 'add'"), and moves a sparse form's e
    as _meta_gate_fp8 says. sm_89 and the sm_120 family run the instruction itself and take what the other forms
    take (tests/test_lint_mma_kind.py, tests/test_lint_fragment_pred.py)."""
    regs, lits = _ACC_ADD[acc]
    def gate(ops: Sequence[OperandInfo], where: Dict[str, int], target: Target) -> List[Tuple[str, str]]:
        if not 90 <= target.sm < 120:
            return []
        out = []
        for name in ("a", "b"):
            k = where.get(name)
            if k is not None and ops[k].kind == VEC and any(t is not None and t.kind == "pred"
                                                           for t in (ops[k].decl or ops[k].elems)):
                out.append((CODE_TYPE, f"operand {k + 1} ({name}) holds .pred registers; with .e4m3/.e5m2 inputs "
                                       f"ptxas 13.0 takes those on sm_89 and from sm_120 on, not for {target} "
                                       "(\"Arguments mismatch for instruction 'mov'\", its own code)"))
            elif k is not None and ops[k].kind == VEC and ops[k].lits64:
                out.append((CODE_TYPE, f"operand {k + 1} ({name}) holds a 0d literal; with .e4m3/.e5m2 inputs ptxas "
                                       f"13.0 moves A and B with a mov.b32 of its own for {target}, which refuses it "
                                       "(\"Arguments mismatch for instruction 'mov'\"); write the bits as a 0f or "
                                       "integer literal"))
        for name in ("d", "c"):
            k = where.get(name)
            o = ops[k] if k is not None else None
            if o is None or o.kind != VEC:
                continue
            bad = sorted({"." + t.name for t in (o.decl or o.elems) if t is not None and t.name not in regs})
            bad = [f"{'/'.join(bad)} registers"] if bad else []
            if any(x and x not in lits for x in o.lits):
                bad.append("an integer literal" if lits else "a literal")
            if o.special:
                bad.append("a special register")
            if bad:
                want = "/".join("." + t for t in sorted(regs)) + " registers" + (" and 0f literals" if lits else "")
                out.append((CODE_TYPE, f"operand {k + 1} ({name}) holds {' and '.join(bad)}; for {target} ptxas 13.0 "
                                       f"adds the .{acc} accumulator with an add of its own, which takes {want} only "
                                       "(\"Arguments mismatch for instruction 'add'\")"))
        return out + _meta_gate_fp8(ops, where, target)
    return gate


_FP8_GATES = {acc: _fp8_gate(acc) for acc in _ACC_ADD}


def _kind_operands(f: Form) -> List[Signature]:
    """d, a, b, c{, e, f}{, scale-a-data, {byte-id-a, thread-id-a}, scale-b-data, {byte-id-b, thread-id-b}} of the
    forms with a .kind: each A and B element a byte (FP6 and FP4 too) but with .kind::mxf4.block_scale and
    .kind::mxf4nvf4.block_scale, two .e2m1 a byte; the sparse A half of the dense one at the same shape; D and C
    mma.sync's."""
    m, n, k = _mnk(f.fields["shape"])
    kind, block = kind_of(f), "block_scale" in f.fields
    bits = 4 if block and kind in ("mxf4", "mxf4nvf4") else 8
    sparse = "sparsity" in f.fields
    a = m * k // (64 if sparse else 32) * bits // 32
    b = k * n // 32 * bits // 32
    d, c = _acc_regs(m * n // 32, f.fields["dtype"][1:]), _acc_regs(m * n // 32, f.fields["ctype"][1:])
    regs = "block_scale" if block else "f8f6f4"
    b_slot = _frag("b", b, b32, kind=regs)
    if k == 16:     # .e4m3/.e5m2 at .m16n8k16: ptxas 13.0 takes B of 1, 2, 4 or 8 registers (mma_fp8's too)
        b_slot = replace(b_slot, counts=(1, 2, 4, 8))
    slots = [_frag("d", d[0], d[1], "dst", kind=regs), _frag("a", a, b32, kind=regs), b_slot,
             replace(_frag("c", c[0], c[1], kind=regs), f64_literals=not block and c[1] is f32)]
    crosses = []
    if sparse:
        slots += [_META, _imm("f", sparsity_selectors(f))]
        crosses.append(_meta_cross)
    if block:
        byte_ids = scale_ids(f)[0]
        ids = [_slot(scale_ids_name(x), (VEC,), _ID_REGS, 2, exact=True) for x in "ab"]
        slots += [_SCALE_DATA, ids[0], replace(_SCALE_DATA, name="scale-b-data"), ids[1]]
        crosses += [lambda ops, where: (_meta_cross(ops, where, "scale-a-data", "the scale data")
                                        + _meta_cross(ops, where, "scale-b-data", "the scale data")),
                    _scale_ids_cross(byte_ids)]
    fp8 = f.fields["atype"][1:] in _FP8 and f.fields["btype"][1:] in _FP8
    return _sig(*slots, cross=(lambda ops, where: [x for c in crosses for x in c(ops, where)]) if crosses else None,
                gate=_FP8_GATES[f.fields["dtype"][1:]] if not block and fp8 else None)


def _ldmatrix_operands(f: Form) -> List[Signature]:
    n = int(f.fields["num"][2:])
    if f.fields["shape"] == ".m16n16":
        n *= 2
    return _sig(_vec("d", n, (b32, _PRED), "dst"), _addr("addr"))


def _stmatrix_operands(f: Form) -> List[Signature]:
    n = int(f.fields["num"][2:])
    return _sig(_addr("addr"), replace(_vec("r", n, (b32, _PRED)), fragment=True))


_WGMMA_A = {"f16": f16x2, "bf16": bf16x2, "tf32": tf32}  # e4m3/e5m2, integer, .b1: .b32
_SCALE = (-1, 1)
_BIT = (0, 1)
# wgmma.mma_async.sp's sparsity metadata: what mma.sp's e takes at sm_90a (a .b32, .u32, .s32, .f32, .f16x2 or
# .pred register, the bits of a 0f literal, no integer literal), also in a vector, which ptxas 13.0 takes of any
# length from 1 to 128 (it crashes on 129 to 255 registers)
_SP_META = replace(_META, name="sp-meta", counts=tuple(range(1, 129)))


def _sp_meta_cross(ops: Sequence[OperandInfo], where: Dict[str, int]) -> List[Tuple[str, str]]:
    return _meta_cross(ops, where, "sp-meta")


def wgmma_sparsity_selectors(f: Form) -> Sequence[int]:
    """The values wgmma.mma_async.sp's sparsity selector takes, as ptxas 13.0 checks them in the literal's low 32
    bits ("unexpected value '2', expected to be 0 or 1"; 4294967297 reads as 1): 0 or 1 with .f16, .bf16 and
    .tf32 inputs, 0 with .e4m3/.e5m2 and .s8/.u8 ones."""
    return _Low32((0, 1) if f.fields["atype"] in (".f16", ".bf16", ".tf32") else (0,))


def _wgmma_operands(f: Form) -> List[Signature]:
    """d, a-desc|{a}, b-desc{, sp-meta, sp-sel}, scale-d, then the immediates of the input type (the sparse form,
    wgmma.mma_async.sp, has the same d, A and B registers as the dense one at the same N: its A holds half of the
    elements of twice the K)."""
    _, n, _ = _mnk(f.fields["shape"])
    dt, at = f.fields["dtype"][1:], f.fields["atype"][1:]
    d = _frag("d", n // 4 if dt == "f16" else n // 2, _CD_REG[dt], "dst", wgmma=True)
    scale_d = _slot("scale-d", (REG, IMM), pred, values=_BIT)
    sparse = (_SP_META, _imm("sp-sel", wgmma_sparsity_selectors(f))) if "sparsity" in f.fields else ()
    cross = _sp_meta_cross if sparse else None
    desc = dict(name="A in shared memory (a descriptor)")
    regs = dict(name="A in registers")
    # a descriptor is any 64-bit value: a register, or an immediate (ptxas 13.0 takes both)
    a_desc, b_desc = _reg_imm("a-desc", u64), _reg_imm("b-desc", u64)
    a_regs = _frag("a", 4, _WGMMA_A.get(at, b32), wgmma=True, fp8=at in ("e4m3", "e5m2"))
    if at in ("s8", "u8", "b1"):       # .pred registers too (ptxas 13.0; _pred_targets)
        a_regs = replace(a_regs, types=a_regs.types + (_PRED,))
    if at in ("f16", "bf16"):
        tail_d = (_imm("imm-scale-a", _SCALE), _imm("imm-scale-b", _SCALE), _imm("imm-trans-a", _BIT),
                  _imm("imm-trans-b", _BIT))
        tail_r = tail_d[:2] + tail_d[3:]
    elif at in ("tf32", "e4m3", "e5m2"):
        tail_d = tail_r = (_imm("imm-scale-a", _SCALE), _imm("imm-scale-b", _SCALE))
    else:
        tail_d = tail_r = ()
    return (_sig(d, a_desc, b_desc, *sparse, scale_d, *tail_d, cross=cross, **desc)
            + _sig(d, a_regs, b_desc, *sparse, scale_d, *tail_r, cross=cross, **regs))


def _cp_async_cross(ops: Sequence[OperandInfo], where: Dict[str, int]) -> List[Tuple[str, str]]:
    i, j = where.get("cp-size"), where.get("src-size")
    if i is None or j is None or ops[j].kind != IMM or ops[i].kind != IMM:
        return []
    if ops[i].value is not None and ops[j].value is not None and not 0 <= ops[j].value <= ops[i].value:
        return [(CODE_OPERANDS, f"src-size {ops[j].value} must be within 0..cp-size ({ops[i].value})")]
    return []


def _cp_async_operands(f: Form) -> List[Signature]:
    sizes = (16,) if f.fields["cache"] == ".cg" else (4, 8, 16)
    hint = _POLICY if f.has(".L2::cache_hint") else None
    # src-size (bytes to read, the rest is zero-filled), or the ignore-src predicate (PTX ISA 7.5)
    return (_sig(_addr("dst"), _addr("src"), _imm("cp-size", sizes),
                 _reg_imm("src-size", u32, values=range(0, 17), optional=True), hint, cross=_cp_async_cross)
            + _sig(_addr("dst"), _addr("src"), _imm("cp-size", sizes),
                   _reg("ignore-src", pred, optional=True, need=_need("sm_80", "7.5")), hint,
                   name="with the ignore-src predicate"))


class _Low32:
    """Immediate values that ptxas 13.0 checks in the low 32 bits of the literal's 64-bit value, read as a signed
    32-bit integer: `v in _Low32(r)` where those bits are in `r` (4294967312 is 16, 18446744073709551600 -16)."""

    def __init__(self, values: Sequence[int]):
        self.values = values

    def __contains__(self, v) -> bool:
        w = v & 0xFFFFFFFF
        return w - ((w >> 31) << 32) in self.values


def _nearest_text(values, v) -> str:
    """A note for an immediate `v` that is not one of `values` (a Slot's): the legal values nearest to it, the one
    below and the one above where there are both ("write 0 or 16" for a bulk copy's 15 bytes)."""
    low32 = isinstance(values, _Low32)
    read = v
    if low32:
        w = v & 0xFFFFFFFF
        read = w - ((w >> 31) << 32)
    near = " or ".join(str(x) for x in _neighbours(values.values if low32 else values, read))
    return f"write {near}" + (f" (ptxas checks the literal's low 32 bits, here {read})" if read != v else "")


def _neighbours(vs, v: int) -> Tuple[int, ...]:
    """The greatest of `vs` below `v` and the least above it, those that exist (`v` is not one of `vs`)."""
    if isinstance(vs, range):  # (no len(): wgmma.wait_group's range is longer than sys.maxsize)
        first, last = vs[0], vs[-1]
        if v < first or v > last:
            return (first,) if v < first else (last,)
        below = first + (v - first) // vs.step * vs.step
        return (below, below + vs.step)
    below = max((x for x in vs if x < v), default=None)
    above = min((x for x in vs if x > v), default=None)
    return tuple(x for x in (below, above) if x is not None)


# a bulk copy's or bulk reduction's byte count (cp.async.bulk, cp.reduce.async.bulk): a multiple of 16 up to
# 2**20 - 16 (ptxas 13.0), a .u32 register or an immediate that ptxas checks in the low 32 bits of the literal
# (4294967312 is 16); the prefetch checks all 64 of them
BULK_SIZES = range(0, (1 << 20) - 15, 16)
_BULK_SIZE = _reg_imm("size", u32, values=_Low32(BULK_SIZES))


def _bulk_operands(f: Form) -> List[Signature]:
    hint = _POLICY if f.has(".L2::cache_hint") else None
    r = f.rule
    if r == "cp_async_bulk_prefetch":
        return _sig(_addr("src"), _reg_imm("size", u32, values=BULK_SIZES), hint)
    if r == "cp_async_bulk_s2g":
        return _sig(_addr("dst"), _addr("src"), _BULK_SIZE, hint,
                    _mask16("byteMask") if f.has(".cp_mask") else None)
    mc = _mask16("ctaMask") if f.has(".multicast::cluster") else None
    mbar = _addr("mbar") if mc or hint else _BULK_MBAR
    return _sig(_addr("dst"), _addr("src"), _BULK_SIZE, mbar, mc, hint)


def _reduce_operands(f: Form) -> List[Signature]:
    """cp.reduce.async.bulk [dstMem], [srcMem], size, then the cache policy (into global, with .L2::cache_hint)
    or [mbar] (into shared::cluster); the byte count and [mbar] as cp.async.bulk takes them."""
    if f.rule == "cp_reduce_async_bulk_s2g":
        return _sig(_addr("dst"), _addr("src"), _BULK_SIZE, _POLICY if f.has(".L2::cache_hint") else None)
    return _sig(_addr("dst"), _addr("src"), _BULK_SIZE, _BULK_MBAR)


# 16-bit masks and offsets of the bulk copies: integer registers (ptxas 13.0 refuses .f16 ones, which
# .b16 would admit); 64-bit integer registers likewise (no .f64)
_INT16 = (b16, u16, s16)
_INT64 = (b64, u64, s64)


def _mask16(name: str) -> Slot:
    return _slot(name, (REG, IMM), _INT16, exact=True)


# ptxas 13.0 also takes some of the bulk copies' addresses without their brackets: the [mbar] of cp.async.bulk
# (without .multicast::cluster and .L2::cache_hint) and of cp.reduce.async.bulk as a bare 64-bit register or
# an integer literal, and the shared-memory addresses of the tensor copies ([dst] and [mbar] of a load, [src] of
# a store or cp.reduce.async.bulk.tensor) as a bare register of any type (.b8 to .f64; ptxas 13.0 crashes on a
# .pred one) or variable name
_BULK_MBAR = _slot("mbar", (ADDR, REG, IMM), _INT64, exact=True)
_TENSOR_SMEM_REGS = (b32, u32, s32) + _INT64 + tuple(get_type(t) for t in (
    "b8", "u8", "s8", "b16", "u16", "s16", "f16", "f16x2", "f32", "f64"))


def _tensor_smem(name: str) -> Slot:
    return _slot(name, (ADDR, REG, SYM), _TENSOR_SMEM_REGS, exact=True)


def _tensor_ref(f: Form) -> Slot:
    return _slot("tensor", (TENSOR,), s32, count=int(f.fields["dim"][1]))


def _tensor_operands(f: Form) -> List[Signature]:
    dims = int(f.fields["dim"][1])
    hint = _POLICY if f.has(".L2::cache_hint") else None
    offs = (_slot("im2colOffsets", (VEC,), _INT16, dims - 2, exact=True) if f.has(".im2col") else None)
    if f.rule.startswith("cp_async_bulk_prefetch_tensor"):
        return _sig(_tensor_ref(f), offs, hint)
    if f.fields["dst"] == ".global":   # the stores, and cp.reduce.async.bulk.tensor (its element type the map's)
        return _sig(_tensor_ref(f), _tensor_smem("src"), hint)
    # ptxas 13.0 takes a 64-bit ctaMask register in the im2col loads without .L2::cache_hint (besides the
    # .b16 the ISA names)
    if not f.has(".multicast::cluster"):
        mc = None
    elif f.has(".im2col") and not hint:
        mc = _slot("ctaMask", (REG, IMM), _INT16 + _INT64, exact=True)
    else:
        mc = _mask16("ctaMask")
    gate = _im2col_sm120_gate if f.rule == "cp_async_bulk_tensor_g2s_im2col" else None
    return _sig(_tensor_smem("dst"), _tensor_ref(f), _tensor_smem("mbar"), offs, mc, hint, gate=gate)


def _im2col_sm120_gate(ops: Sequence[OperandInfo], where: Dict[str, int], target: Target) -> List[Tuple[str, str]]:
    """The im2col loads into shared::cluster from sm_120 on, where ptxas 13.0 moves their operands with code of its
    own ("Arguments mismatch for instruction 'mov'"): no 64-bit ctaMask register, no float literal first among the
    im2col offsets (both of which it takes on sm_90 and sm_100), and after an integer literal first no 8-bit or .pred
    register or float literal."""
    if target.sm < 120:
        return []
    out = []
    k = where.get("ctaMask")
    if k is not None and ops[k].kind == REG and ops[k].type is not None and ops[k].type.bits == 64:
        out.append((CODE_TYPE, f"operand {k + 1} (ctaMask) is a 64-bit register; for {target} ptxas 13.0 takes a "
                               "16-bit one here (a 64-bit one below sm_120)"))
    k = where.get("im2colOffsets")
    o = ops[k] if k is not None else None
    if o is not None and o.kind == VEC and o.lits and o.lits[0] == "f":
        out.append((CODE_TYPE, f"operand {k + 1} (im2colOffsets) starts with a floating-point literal; for {target} "
                               "ptxas 13.0 takes 16-bit registers or integer literals here"))
    elif o is not None and o.kind == VEC and o.lits and o.lits[0] == "i" and not all(o.lits):
        # after an integer literal first (typed by one element below sm_120: pack_literal_first_problem), each
        # register 16 bits or wider and no .pred, and no floating-point literal
        odd = next((e for e, lit in zip(o.decl or o.elems, o.lits)
                    if lit is None and e is not None and (e.kind == "pred" or e.bits < 16)), None)
        if odd is not None or "f" in o.lits:
            what = f"a .{odd.name} register" if odd is not None else "a floating-point literal"
            out.append((CODE_TYPE, f"operand {k + 1} (im2colOffsets) starts with an integer literal and holds {what}; "
                                   f"for {target} ptxas 13.0 takes registers of 16 bits or more (no .pred) and integer "
                                   "literals after one"))
    return out


# an mbarrier state: a 64-bit integer register (ptxas 13.0 refuses .f64 ones, which .b64 would admit)
_STATE_TYPES = _INT64
_STATE = _slot("state", (REG,), _STATE_TYPES, role="dst", exact=True)
# the sink `_` for the state needs PTX ISA 7.1 (ptxas 13.0: "Result discard mode is not allowed" below),
# but with .arrive_drop
_STATE_SINK = _slot("state", (SINK,), role="dst", need=_need("sm_80", "7.1"))
_STATE_SINK_DROP = _slot("state", (SINK,), role="dst")
_SINK = _slot("state", (SINK,), role="dst")
_COUNT_U32 = _reg_imm("count", u32)
_NEED_COUNT = _need("sm_90", "7.8")


def _mbarrier_operands(f: Form) -> List[Signature]:
    r = f.rule
    a = _addr("addr")
    sink = _STATE_SINK_DROP if f.has(".arrive_drop") else _STATE_SINK
    if r == "mbarrier_init":
        return _sig(a, _COUNT_U32)
    if r == "mbarrier_inval":
        return _sig(a)
    if r in ("mbarrier_arrive", "mbarrier_arrive_cluster"):
        count = _reg_imm("count", u32, optional=True, need=_NEED_COUNT)
        if r.endswith("cluster"):
            return _sig(_SINK, a, count)
        return _sig(_STATE, a, count) + _sig(sink, a, count, name="the state discarded")
    if r in ("mbarrier_arrive_expect_tx", "mbarrier_arrive_expect_tx_cluster"):
        if r.endswith("cluster"):
            return _sig(_SINK, a, _reg_imm("txCount", u32))
        return (_sig(_STATE, a, _reg_imm("txCount", u32))
                + _sig(sink, a, _reg_imm("txCount", u32), name="the state discarded"))
    if r == "mbarrier_arrive_nocomplete":
        return _sig(_STATE, a, _COUNT_U32) + _sig(sink, a, _COUNT_U32, name="the state discarded")
    if r == "mbarrier_expect_tx":
        return _sig(a, _reg_imm("txCount", u32))
    if r in ("mbarrier_test_wait", "mbarrier_try_wait"):
        # the state a former arrive returned: a register or (ptxas 13.0 takes it) an immediate
        third = (_reg_imm("phaseParity", u32) if f.has(".parity")
                 else _slot("state", (REG, IMM), _STATE_TYPES, exact=True))
        hint = _reg_imm("suspendTimeHint", u32, optional=True) if r == "mbarrier_try_wait" else None
        return _sig(_reg("waitComplete", pred, "dst"), a, third, hint)
    if r == "mbarrier_pending_count":
        return _sig(_reg("count", u32, "dst"), _slot("state", (REG, IMM), _STATE_TYPES, exact=True))
    raise InternalError(f"no mbarrier operand rule for {r}")


def _with_f16x2(ty: Type) -> Tuple[Type, ...]:
    """`ty`, and .f16x2 where ty is a 32-bit integer: ptxas 13.0 takes a .f16x2 register for the value of
    st.async / red.async and the addresses of mapa / getctarank (not for their other operands)."""
    return (ty, f16x2) if ty.is_int and ty.bits == 32 else (ty,)


def _async_store_operands(f: Form) -> List[Signature]:
    """st.async / red.async [a], b, [mbar]: b a register or immediate of the type (st.async: a vector of
    2 or 4 with .v2/.v4). ptxas 13.0 also takes a scalar b without [mbar] (so there it is optional), and
    st.async without the completion mechanism takes no [mbar]."""
    ty = get_type(f.fields["type"][1:])
    vec = f.fields.get("vec")
    if vec:
        # a vector of .f32/.f64 values also takes integer registers of the size, and one of 32-bit
        # integers .f16x2 registers (ptxas 13.0)
        extra = {"f32": (u32,), "f64": (u64,), "u32": (f16x2,), "s32": (f16x2,), "b32": (f16x2,)}.get(ty.name, ())
        b = _slot("b", (VEC,), (ty,) + extra, int(vec[2:]))
    else:
        # ptxas 13.0 takes a 0f literal for a .b32 value and a 0d one for a .b64 (no decimal one), and no
        # float literal for the other operands of bit types (mbarrier states, masks, addresses)
        b = _reg_imm("b", _with_f16x2(ty), float_bits=True)
    if "completion" not in f.fields:
        return _sig(_addr("a"), b)
    return _sig(_addr("a"), b, _addr("mbar", optional=not vec))


# multimem's value (ld_reduce's d, st's and red's b), as ptxas 13.0 takes it (tests/test_lint_multimem.py): per
# element type, the register types of a scalar or of a vector whose registers are declared alike (a vector of
# several register types is typed by its elements: _match). The integer types as st.async's; .f16 elements in any
# 16-bit register, the types ptxas holds as bits (.bf16, the fp8 ones, .bf16x2, .e4m3x4, .e5m2x4) in any register
# of their width; an .f32 vector (and a vector of one) takes integer registers too, a scalar .f32 does not; .f16x2
# only .f16x2 and .b32 registers. multimem.red types .bf16 and .bf16x2 as themselves (.b16, .b32 registers only), and
# ld_reduce takes a .pred register for a 32-bit bit-held value (d of .bf16x2, .e4m3x4, .e5m2x4).
_MM_REGS = {"b32": (b32,), "b64": (b64,), "u32": (u32, f16x2), "s32": (s32, f16x2), "u64": (u64,), "s64": (s64,),
            "f16": (f16, u16), "bf16": (b16,), "f16x2": (f16x2,), "bf16x2": (b32,), "f32": (f32,), "f64": (f64,),
            "e5m2": (get_type("b8"),), "e4m3": (get_type("b8"),), "e5m2x2": (b16,), "e4m3x2": (b16,),
            "e5m2x4": (b32,), "e4m3x4": (b32,)}
_MM_RED_REGS = {"bf16": (get_type("bf16"),), "bf16x2": (bf16x2,)}
_MM_VEC_REGS = {"f32": (f32, u32), "f64": (f64, u64)}     # a vector's (and a vector of one's) besides _MM_REGS
_MM_PRED_D = ("bf16x2", "e5m2x4", "e4m3x4")      # ld_reduce's d of these takes a .pred register too
_MM_INTS = frozenset(("b32", "b64", "u32", "s32", "u64", "s64"))
# the types whose value a literal first in a vector of registers may not start: .f16 takes an integer literal there
# (none of 0f or 0d), .f16x2 no literal ("Arguments mismatch")
_MM_FIRST_LITERALS = {"f16": "i", "f16x2": ""}


def _multimem_cross(instr: str, ty: str, n: int):
    """What ptxas 13.0 refuses in multimem.st's and multimem.red's value b beyond its slot (or crashes on):
    a vector of literals only is taken where its elements are 32-bit and not .f16x2, as the value _literal_value
    makes of it: an .f32 one, or a 0d literal first with 0f ones after it (multimem.red's .f32 takes an .f64 one too,
    multimem.st's only a vector of one, {0d}); no integer one. A literal first in a vector of registers types it
    (_MM_FIRST_LITERALS). multimem.st.v8 takes no four floating-point literals as elements 1 to 4 or 5 to 8.
    multimem.red with an integer literal after the first element of its vector crashes ptxas 13.0 (a segmentation
    fault, no message)."""
    bits = _MM_REGS[ty][0].bits

    def cross(ops: Sequence[OperandInfo], where: Dict[str, int]) -> List[Tuple[str, str]]:
        k = where.get("b")
        o = ops[k] if k is not None else None
        if o is None or o.kind != VEC or not o.lits:
            return []
        pos = f"operand {k + 1} (b)"
        if all(o.lits):
            v = _literal_value(o)
            if v == "int" or bits < 32 or ty == "f16x2" or v == "f64" and instr == "st" and o.count > 1:
                what = {"int": "integer", "f32": "0f", "f64": "0d", "any": "floating-point"}.get(v, "")
                return [(CODE_TYPE, f"{pos} is a vector of {what} literals only, which ptxas 13.0 does not take as "
                                    f"a {'.v%d ' % n if n > 1 else ''}.{ty} value here; put the values in registers")]
            return []
        first = o.lits[0]
        allowed = _MM_FIRST_LITERALS.get(ty)
        if first is not None and allowed is not None and first not in allowed:
            what = "an integer literal" if first == "i" else "a floating-point literal"
            return [(CODE_TYPE, f"{pos} starts with {what}, which types the vector for ptxas 13.0: "
                                f"{'integer literals only' if allowed else 'none'} can start a .{ty} vector of "
                                "registers; put the literal in a register or after the first element")]
        if first is not None and not _mm_by_form(o):
            bad = _multimem_literal_first(o, instr, ty, n)
            if bad:
                return [(CODE_TYPE, f"{pos} {bad}")]
        if instr == "st" and n == 8 and any(all(x == "f" for x in o.lits[h:h + 4]) for h in (0, 4)):
            h = 1 if all(x == "f" for x in o.lits[:4]) else 5
            return [(CODE_TYPE, f"{pos} has floating-point literals as elements {h} to {h + 3}; ptxas 13.0 refuses "
                                "four of them side by side in multimem.st.v8 (\"Arguments mismatch for instruction "
                                "'mov'\"); put one of them in a register")]
        if instr == "red" and "i" in o.lits[1:]:
            j = o.lits.index("i", 1)
            val = o.vals[j] if o.vals and o.vals[j] is not None else "an integer literal"
            return [(CODE_OPERANDS, f"{pos} has {val} as element {j + 1}; ptxas 13.0 crashes (a segmentation fault) "
                                    "on multimem.red with an integer literal after the first element; put it in a "
                                    "register")]
        return []
    return cross


# the element width of the types ptxas holds as bits in multimem's value: a vector that starts with a literal is
# taken for them only where the element that types it (_literal_first_typing) has this width
_MM_HELD_BITS = {"bf16": 16, "bf16x2": 32, "e5m2": 8, "e4m3": 8, "e5m2x2": 16, "e4m3x2": 16, "e5m2x4": 32,
                 "e4m3x4": 32}


def _mm_by_form(o: OperandInfo) -> bool:
    """Whether ptxas 13.0 types multimem's vector value `o` by the form (each register against the type) although
    it starts with a literal: .f32 registers with 0f literals (uniform_vector); .f64 ones with 0d literals it types
    by an element (_multimem_literal_first), as any other (multimem.red.add.v2.f32 takes {0d3FF0000000000000, %fd1},
    not {%fd1, %fd2})."""
    return uniform_vector(o) and not o.lits64


def _multimem_literal_first(o: OperandInfo, instr: str, ty: str, n: int) -> Optional[str]:
    """The problem ptxas 13.0 finds in multimem.st's or multimem.red's value `o`, a vector of registers that starts
    with a literal and is not typed by the form (_mm_by_form), or None. It is typed by one element
    (_literal_first_typing): the types held as bits (_MM_HELD_BITS) need that element to be of their width, st's
    .f32 after a floating-point literal 32 bits; the others need nothing (.f16 and .f16x2 take no such vector or
    only after an integer literal: _MM_FIRST_LITERALS). multimem.st.v8 is moved in two halves, each a pack of mov
    (four 16-bit parts; of .e5m2/.e4m3 four bytes): a half that starts with a literal is typed as a pack
    (pack_literal_first_problem), one that starts with a register needs registers of the part's width. So
    multimem.st.v2.f32 [a], {0, %rd1} is taken, {0f3F800000, %rd1} refused (tests/test_lint_multimem.py)."""
    typed = _literal_first_typing(o)
    if typed is None or isinstance(typed, str):
        return typed
    _, _, w, by = typed
    need = _MM_HELD_BITS.get(ty) or (32 if ty == "f32" and instr == "st" and o.lits[0] == "f" else None)
    if need is not None and w != need:
        return f"is typed by {by}, {w} bits wide ({_LITERAL_FIRST}); .{ty} needs {need}"
    if instr == "st" and n == 8:
        part = 8 if ty in ("e5m2", "e4m3") else 16
        for h in (0, 4):
            half = replace(o, count=4, elems=o.elems[h:h + 4], decl=o.decl[h:h + 4] if o.decl else (),
                           lits=o.lits[h:h + 4], lits64=tuple(i - h for i in o.lits64 if h <= i < h + 4),
                           vals=o.vals[h:h + 4] if o.vals else ())
            which = f"elements {h + 1} to {h + 4}"
            if half.lits[0] is not None:
                bad = pack_literal_first_problem(half, part)
                if bad:
                    return (f"has {which} moved as one pack of {part}-bit parts by ptxas 13.0 (multimem.st.v8), "
                            f"which {bad}")
            else:
                decl = half.decl or half.elems
                odd = next((e for e in decl if e is not None and vector_bits(e) != part), None)
                if odd is not None:
                    return (f"has {which} moved as one pack of {part}-bit parts by ptxas 13.0 (multimem.st.v8), "
                            f"which holds a .{odd.name} register")
    return None


def red_vector_value_problem(o: OperandInfo, ty: str, n: int) -> Optional[str]:
    """The problem ptxas 13.0 finds in the vector value `o` of atom or red (.v`n` of `ty`, without its dot), or None.
    ptxas types it as multimem.red's value (_multimem_operands, _multimem_cross): the registers of a vector declared
    alike by the type (.f32: 32-bit integer, bit or .f32 registers; .f16x2: .f16x2 and .b32; .bf16x2: .b32; .f16:
    16-bit integer, bit and .f16; .bf16: .b16), others by their elements (one width, no mixed neighbours), a vector
    that starts with a literal by one element (_multimem_literal_first). Lint's core check asks this
    (tests/test_lint_pack.py); an integer literal after the first element it reports itself."""
    _, _, diags, _ = _bind(f"multimem.red.add.v{n}.{ty}", [OperandInfo(ADDR), o])
    for d in diags:
        rest = d.message.partition(" operand 2 (b) ")[2]
        if rest:
            return rest
    return diags[0].message if diags else None


def _multimem_operands(f: Form) -> List[Signature]:
    """multimem.ld_reduce d, [a];  multimem.st [a], b;  multimem.red [a], b  (_MM_REGS, _multimem_cross). A scalar
    b of st and red is a register or a literal of its type (.b32/.b64: a 0f/0d literal of its width too; .f16x2 and
    red's .bf16x2: none); a floating-point scalar of ld_reduce and st is also written as a vector of one, as ptxas
    13.0 takes it."""
    instr = f.tokens[1][1:]
    ty = f.fields["type"][1:]
    vec = f.fields.get("vec")
    n = int(vec[2:]) if vec else 1
    regs = (_MM_RED_REGS.get(ty) if instr == "red" else None) or _MM_REGS[ty]
    if instr == "ld_reduce" and ty in _MM_PRED_D:
        regs = (b32, pred)
    vregs = _MM_VEC_REGS.get(ty, regs)
    role, name = ("dst", "d") if instr == "ld_reduce" else ("src", "b")
    a = _addr("a")
    cross = _multimem_cross(instr, ty, n) if instr != "ld_reduce" else None
    if n > 1:
        v = _slot(name, (VEC,), vregs, n, role)
        return _sig(v, a, cross=cross) if instr == "ld_reduce" else _sig(a, v, cross=cross)
    imm = instr != "ld_reduce" and regs[0].kind != "packed"
    x = _slot(name, (REG, IMM) if imm else (REG,), regs, role=role, float_bits=imm and regs[0].kind == "b")
    sigs = _sig(x, a) if instr == "ld_reduce" else _sig(a, x, cross=cross)
    if instr != "red" and ty not in _MM_INTS:
        one = _slot(name, (VEC,), vregs, 1, role)
        sigs += _sig(one, a, name="a vector of one") if instr == "ld_reduce" else \
            _sig(a, one, name="a vector of one", cross=cross)
    return sigs


def _no_operands(f: Form) -> List[Signature]:
    return _sig()


def _wait_group_operands(f: Form) -> List[Signature]:
    # wgmma.wait_group takes 0..2**63-1; ptxas 13.0 takes any integer for the cp.async ones (even -1)
    return _sig(_imm("N", _ANY_COUNT if f.rule == "wgmma_wait_group" else None))


def _addr_type(f: Form) -> Type:
    return get_type(f.fields["type"][1:])


def _mapa_operands(f: Form) -> List[Signature]:
    t = _addr_type(f)
    return _sig(_slot("d", (REG,), _with_f16x2(t), role="dst"), _slot("a", (REG, SYM, IMM), _with_f16x2(t)),
                _reg_imm("b", u32))


def _getctarank_operands(f: Form) -> List[Signature]:
    return _sig(_reg("d", u32, "dst"), _slot("a", (REG, SYM, IMM), _with_f16x2(_addr_type(f))))


def _setmaxnreg_operands(f: Form) -> List[Signature]:
    return _sig(_imm("imm-reg-count", range(24, 257, 8)))


def _elect_operands(f: Form) -> List[Signature]:
    return _sig(_slot("d", (REG, SINK), u32, role="dst"), _reg("p", pred, "dst"), _reg_imm("membermask", u32))


def _tensormap_prefetch_operands(f: Form) -> List[Signature]:
    return _sig(_addr("a"))


def _tensormap_acquire_operands(f: Form) -> List[Signature]:
    return _sig(_addr("addr"), _imm("size", (128,)))


# applypriority's and discard's size: one L2 cache line, an immediate at its full 64 bits (ptxas 13.0: "unexpected
# value '64', expected to be 128"; 4294967424 is refused, 2**64 + 128 reads as 128; a register is "Arguments
# mismatch")
L2_LINE = 128


def _l2_line_operands(f: Form) -> List[Signature]:
    return _sig(_addr("a"), _imm("size", (L2_LINE,)))


# ---------------------------------------------------------------------------- textures and surfaces
# The operands as ptxas 13.0 takes them (probed: tests/test_lint_texture.py). A texture, sampler or
# surface is a .texref/.samplerref/.surfref variable or a 64-bit integer register (a handle); unified mode
# also takes a sampler operand (the texture's own name or a handle) where independent mode needs one.
_H64 = frozenset(("b64", "u64", "s64"))
_TEX_H = (_H64 | {"texref"}, False)
# (unified mode takes any reference as the sampler; lint checks independent mode's .samplerref)
_SAMP_H = (_H64 | {"samplerref", "texref", "surfref"}, True)
_SURF_H = (_H64 | {"surfref"}, False)
_ANY_H = _H64 | {"texref", "samplerref", "surfref"}
# coordinates per geometry (.3d and the array, cube and multi-sample ones are padded to a vector of 4; an
# array geometry's first coordinate is the .u32 array index), and the elements of a gradient and an offset
TEX_COORDS = {".1d": 1, ".2d": 2, ".3d": 4, ".a1d": 2, ".a2d": 4, ".cube": 4, ".acube": 4, ".2dms": 4, ".a2dms": 4}
TEX_GRADS = {".1d": 1, ".2d": 2, ".3d": 4, ".a1d": 1, ".a2d": 2, ".cube": 4, ".acube": 4, ".2dms": 2, ".a2dms": 2}
_I32 = (b32, u32, s32)
# the registers of a texture result, by the type the opcode names (ptxas 13.0: .f32 also in 32-bit integer
# registers, .u32/.s32 also in .f16x2 ones, .f16x2 only in .b32 and .f16x2 ones)
_TEX_REGS = {".u32": _I32 + (f16x2,), ".s32": _I32 + (f16x2,), ".f32": (f32,) + _I32, ".f16": (f16, b16),
             ".f16x2": (f16x2, b32)}
# (a vector of several register types is checked for its width only: ptxas 13.0 then types the vector by its
# elements, which this table does not model; it takes some mixes and refuses others)
# a surface element in any register at least as wide (ptxas 13.0, suld and sust alike)
_W64 = _INT64 + (f64,)
_W32 = _I32 + (f32, f16x2) + _W64
_W16 = (b16, u16, s16, f16) + _W32
_SURF_REGS = {".b8": _W16 + (get_type("b8"), get_type("u8"), get_type("s8")), ".b16": _W16, ".b32": _W32,
              ".b64": _W64}
_SURED_REGS = {"u32": _I32 + (f16x2,) + _INT64, "s32": _I32 + (f16x2,) + _INT64, "b32": _I32 + (f16x2,) + _INT64,
               "u64": _INT64}
# the coordinate vector: the geometry's coordinates or a longer vector of 2 or 4 (never 3); a gradient has
# the geometry's elements (any of 1, 2 or 4 for a cube map), an offset those or a longer vector, and a
# cube map takes no offset
_LONGER = {1: (1, 2, 4), 2: (2, 4), 4: (4,)}


# the families whose coordinates are a texture's or a surface's (_coords_cross; tex_coordinates_literal_first_problem)
_TEX_RULES = ("tex", "tld4", "su")
_TEX_ARRAYS = (".a1d", ".a2d", ".acube", ".a2dms")


def tex_coordinates_literal_first_problem(o: OperandInfo, ctype: Optional[Type]) -> Optional[str]:
    """The problem ptxas 13.0 finds in the coordinates `o` of tex, tld4 or a surface instruction (of .f32 or .s32,
    `ctype`; not an array geometry's) that start with a literal among registers, or None. They are typed by one
    element (_literal_first_typing), which after an integer literal may be any width, after a floating-point one
    any width too for .f32 coordinates and 32 bits for .s32 ones, and not floating-point values only (.f32
    registers with 0f literals: typed by the form, element by element); literals only are typed so too, but .f32
    coordinates take no integer ones. So tex.2d.v4.f32.s32 [t, {0, %rd1}] is taken and [t, {0f3F800000, %rd1}]
    refused (tests/test_lint_vector_mix.py)."""
    typed = _literal_first_typing(o)
    if typed is None or isinstance(typed, str):
        return typed
    kinds, j, w, by = typed
    if o.lits[0] == "i":
        if ctype is f32 and all(o.lits):
            return "is integer literals only; .f32 coordinates take floating-point ones"
    elif ctype is not f32:
        if w != 32:
            return f"is typed by {by}, {w} bits wide ({_LITERAL_FIRST}); .s32 coordinates need 32"
        if j == 0 and set(kinds) == {"f"}:
            return f"holds floating-point values only ({_LITERAL_FIRST}); .s32 coordinates take none"
    return None


def _f32_coords_int_crash(o: OperandInfo, k: int, start: int) -> List[Tuple[str, str]]:
    """An integer literal among registers in .f32 coordinates `o` (operand k), from element `start` on: ptxas 13.0
    takes it in its checks and crashes (a segmentation fault) generating code."""
    if not o.lits or all(o.lits) or "i" not in o.lits[start:]:
        return []
    j = o.lits.index("i", start)
    return [(CODE_OPERANDS, f"operand {k + 1} (coordinates) has an integer literal as element {j + 1} among "
                            "registers: ptxas 13.0 takes .f32 coordinates so in its checks and then crashes (a "
                            "segmentation fault) generating code; write it as a float literal or put it in a "
                            "register")]


def _coords_cross(geom: str, ctype: Optional[Type], surface: bool = False):
    """The coordinate vector's element types: the .u32 array index first in an array geometry, then
    coordinates of the coordinate type (ptxas 13.0: "Array index ... Expecting type .u32",
    "Floating-point coordinates required", "Integer coordinates require .s32 instruction type")."""
    array = geom in _TEX_ARRAYS

    def cross(ops: Sequence[OperandInfo], where: Dict[str, int]) -> List[Tuple[str, str]]:
        k = where.get("coordinates")
        if k is None:
            return []
        o = ops[k]
        if not array and ctype is f32:
            crash = _f32_coords_int_crash(o, k, 0)
            if crash:
                return crash
        if (not array or surface) and o.lits and o.lits[0] is not None \
                and not (ctype is not f32 and o.lits[0] == "f" and not all(o.lits) and uniform_vector(o)):
            bad = tex_coordinates_literal_first_problem(o, ctype)
            return [(CODE_TYPE, f"operand {k + 1} (coordinates) {bad}")] if bad else []
        if array and not surface:
            # a texture's array index: a 32-bit integer or bit register, or an integer literal after which any
            # registers are taken; registers declared alike are integer or bit ones, other vectors 32 bits each;
            # no mixed neighbours among the coordinates after the index (literals too)
            decl = o.decl or o.elems
            kinds = [VECTOR_KIND.get(e.kind) if e is not None else lit or None
                     for e, lit in zip(decl, o.lits or (None,) * o.count)]
            j = clashing_neighbour(kinds[1:])
            if j is not None:
                return [(CODE_TYPE, f"operand {k + 1} (coordinates) {_mixed_neighbours(o, decl, j + 1)}")]
            if ctype is f32:
                crash = _f32_coords_int_crash(o, k, 1)      # (the index is an integer)
                if crash:
                    return crash
            if o.lits and o.lits[0] == "i":
                typed = _literal_first_typing(o)
                if ctype is f32 and isinstance(typed, tuple) and typed[1] == 0 and set(typed[0]) == {"i"}:
                    return [(CODE_TYPE, f"operand {k + 1} (coordinates) holds 64-bit integer values only "
                                        f"({_LITERAL_FIRST}); .f32 coordinates take none")]
                return []
            if o.lits and o.lits[0] == "f":
                return [(CODE_TYPE, f"operand {k + 1} (coordinates) starts with a floating-point literal; the array "
                                    "index (coordinate 1) is an integer")]
            uniform = uniform_vector(o)
            for i, e in enumerate(o.decl or o.elems):
                if e is None:
                    continue
                if (i == 0 or uniform) and (e.kind not in ("b", "u", "s") or e.bits != 32):
                    what = "the array index (coordinate 1)" if i == 0 else f"coordinate {i + 1}"
                    return [(CODE_TYPE, f"{what} is a .{e.name} register; "
                                        + (".u32 expected" if i == 0 else "a vector of registers declared alike "
                                           "holds 32-bit integer or bit ones here"))]
                if vector_bits(e) != 32:
                    return [(CODE_TYPE, f"coordinate {i + 1} is a .{e.name} register; the coordinates are "
                                        f".{ctype.name}, 32 bits each")]
            return []
        if not array or surface:
            # registers declared alike are typed by the coordinate type (.f32: 32-bit integer, bit and .f32
            # registers; .s32: those and, of a texture, .f16x2, not .f32), other vectors by their elements (_match:
            # neighbours), which are 32 bits wide (a .pred register counting as 32)
            uniform = uniform_vector(o)
            kinds = ("f", "b", "u", "s") if ctype is f32 else ("b", "u", "s") if surface else ("b", "u", "s", "packed")
            for i, e in enumerate(o.decl or o.elems):
                if e is not None and (e.bits != 32 or e.kind not in kinds if uniform else vector_bits(e) != 32):
                    return [(CODE_TYPE, f"coordinate {i + 1} is a .{e.name} register; the coordinates are "
                                        f".{ctype.name}" + ("" if uniform else ", 32 bits each"))]
            return []
        out = []
        for i, e in enumerate(o.elems):
            if e is None:
                continue
            if i == 0 and array:
                if e.kind not in ("b", "u", "s") or e.bits != 32:
                    out.append((CODE_TYPE, f"the array index (coordinate 1) is a .{e.name} register; .u32 expected"))
            elif e.bits != 32 or e.kind not in (("f", "b") if ctype is f32 else ("b", "u", "s")):
                out.append((CODE_TYPE, f"coordinate {i + 1} is a .{e.name} register; the coordinates are "
                                       f".{ctype.name}"))
            if out:
                break
        return out
    return cross


# `d|p`: whether the texel was resident (ptxas 13.0: "Texture instruction with optional predicate result"
# requires PTX ISA 7.1)
# requires PTX ISA 7.1); optional within its operand lists, which are tried after those without it
_TEX_PRED = _reg("p", pred, "dst", need=_need("sm_50", "7.1"), optional=True)


def _tex_ref(name: str, count: int, handles) -> Slot:
    return _slot(name, (TENSOR,), (), count, handles=handles, counts=_LONGER[count])


def _tex_operands(f: Form) -> List[Signature]:
    """tex / tld4  d{|p}, [a, {b,} c] {, lod | dPdx, dPdy} {, e} {, f}"""
    geom = f.fields["geom"]
    ctype = get_type(f.fields["coord"][1:])
    dt = f.fields["dtype"]
    n = 2 if f.fields.get("vec") == ".v2" else 4
    d = _slot("d", (VEC,), _TEX_REGS[dt], n, "dst", exact=True, loose=True)
    ref = _tex_ref("coordinates", TEX_COORDS[geom], (_TEX_H, _SAMP_H))
    mode = f.fields.get("mode")
    mid: Tuple[Slot, ...] = ()
    cube = geom in (".cube", ".acube")
    if mode == ".level":
        # (a .b32 register too; not a float one with .s32 coordinates)
        mid = (_reg_imm("lod", (f32, b32) if ctype is f32 else _I32 + (f16x2,), exact=True, loose=ctype is f32),)
    elif mode == ".grad":
        g, gs = TEX_GRADS[geom], ((1, 2, 4) if cube else None)
        mid = (_slot("dPdx", (VEC,), f32, g, counts=gs), _slot("dPdy", (VEC,), f32, g, counts=gs))
    # the depth compare f takes .f32 coordinates (ptxas 13.0: "Arguments mismatch" with .s32 ones)
    depth = _slot("f", (REG, IMM), (f32,) + _I32, optional=True, exact=True, loose=True) if ctype is f32 else None
    if cube:
        cross = _coords_cross(geom, ctype)
        p = _TEX_PRED
        return (_sig(d, ref, *mid, depth, cross=cross)
                + _sig(d, p, ref, *mid, depth, name="with the predicate d|p", cross=cross))
    # the offset: a vector, or (ptxas 13.0 takes it) one register; .3d takes none with .base/.level/.grad
    if geom == ".3d":
        depth = None  # (ptxas 13.0: "Illegal modifier '.3d'" with a depth compare)
    g = TEX_GRADS[geom]
    offset = None if geom == ".3d" and mode else _slot("e", (VEC, REG, IMM), _I32 + (f32, f16x2), g, optional=True,
                                                       exact=True, counts=_LONGER[g], loose=True)
    cross = _coords_cross(geom, ctype)
    p = _TEX_PRED
    out = (_sig(d, ref, *mid, offset, depth, cross=cross)
           + _sig(d, p, ref, *mid, offset, depth, name="with the predicate d|p", cross=cross))
    if depth is not None:
        only = replace(depth, optional=False)
        out += (_sig(d, ref, *mid, only, name="with the depth compare only", cross=cross)
                + _sig(d, p, ref, *mid, only, name="with the predicate d|p and the depth compare only", cross=cross))
    return out


def _txq_operands(f: Form) -> List[Signature]:
    q = f.fields["query"]
    if q == ".memory_layout":
        h = (_ANY_H, False)
    elif f.rule == "txq_sampler":
        h = (_H64 | {"samplerref"}, False)
    else:
        h = _TEX_H
    a = _slot("a", (ADDR,), handles=(h,))
    d = _reg("d", _I32, "dst")
    if f.rule == "txq_level":
        return _sig(d, a, _reg_imm("lod", _I32, exact=True))
    return _sig(d, a)


def _suq_operands(f: Form) -> List[Signature]:
    return _sig(_reg("d", _I32, "dst"), _slot("a", (ADDR,), handles=(_SURF_H,)))


def _istypep_operands(f: Form) -> List[Signature]:
    # ptxas 13.0 takes a 64-bit handle register (or an immediate), not the name of a .texref/.samplerref/.surfref
    return _sig(_reg("p", pred, "dst"), _slot("a", (REG, IMM), _INT64, exact=True))


SURF_COORDS = {".1d": 1, ".2d": 2, ".3d": 4, ".a1d": 2, ".a2d": 4}


def _surf_operands(f: Form) -> List[Signature]:
    """suld d, [a, b];   sust [a, b], c;   sured [a, b], c"""
    geom = f.fields["geom"]
    ref = _tex_ref("coordinates", SURF_COORDS[geom], (_SURF_H,))
    cross = _coords_cross(geom, s32, surface=True)
    if f.rule.startswith("sured"):
        if f.rule == "sured_p":  # any register of 32 or 64 bits, any literal
            return _sig(ref, _slot("c", (REG, IMM), _W32, exact=True, loose=True), cross=cross)
        return _sig(ref, _slot("c", (REG, IMM), _SURED_REGS[f.fields["type"][1:]], exact=True), cross=cross)
    vec = f.fields.get("vec")
    regs = _SURF_REGS[f.fields["type"]]
    if vec:
        v = _slot("c", (VEC,), regs, int(vec[2:]), exact=True)
    else:
        # one element: a register, a vector of one (what nvcc writes) or (sust) an immediate
        v = _slot("c", (VEC, REG, IMM), regs, 1, exact=True, float_bits=True)
    if f.rule == "suld":
        return _sig(replace(v, name="d", role="dst", kinds=frozenset((VEC, REG))), ref, cross=cross)
    return _sig(ref, v, cross=cross)


def _form(title, targets, version, operands, raises=None) -> FormRule:
    return FormRule(title, _need(targets, version),
                    {k: _need(*v) for k, v in (raises or {}).items()}, operands)


# The minimums are what ptxas 13.0 accepts (tests/test_legality_ptxas.py checks each form at its
# minimum and one step below). sm_70 forms cannot be assembled by ptxas 13.0 and follow the PTX ISA.
_ORDERED_METADATA = {".sp::ordered_metadata": ("sm_80", "8.5")}
_MM_FP8 = ("sm_100f", "sm_110f", "sm_120a", "sm_121a")
_MM_RAISES = {".acc::f32": ("sm_90", "8.2"), ".acc::f16": (_MM_FP8, "8.6"),
              **{"." + t: (_MM_FP8, "8.6") for t in ("e5m2", "e4m3", "e5m2x2", "e4m3x2", "e5m2x4", "e4m3x4")}}
FORMS: Dict[str, FormRule] = {
    # ---- mma.sync
    "mma_m8n8k4_f16": _form("mma.sync .m8n8k4 with .f16 inputs", "sm_70", "6.4", _mma_operands),
    "mma_f16": _form("mma.sync with .f16 inputs", "sm_75", "6.5", _mma_operands,
                     {".m16n8k16": ("sm_80", "7.0")}),
    "mma_bf16": _form("mma.sync with .bf16 inputs", "sm_80", "7.0", _mma_operands),
    "mma_tf32": _form("mma.sync with .tf32 inputs", "sm_80", "7.0", _mma_operands),
    "mma_f64": _form("mma.sync with .f64 inputs", "sm_80", "7.0", _mma_operands,
                     {".m16n8k4": ("sm_90", "7.8"), ".m16n8k8": ("sm_90", "7.8"), ".m16n8k16": ("sm_90", "7.8")}),
    "mma_fp8": _form("mma.sync with .e4m3/.e5m2 inputs", "sm_89", "8.4", _mma_operands,
                     {".m16n8k16": ("sm_89", "8.7"), ".f16": ("sm_89", "8.7")}),
    "mma_i8": _form("mma.sync with .s8/.u8 inputs", "sm_75", "6.5", _mma_operands,
                    {".m16n8k16": ("sm_80", "7.0"), ".m16n8k32": ("sm_80", "7.0")}),
    "mma_i4": _form("mma.sync with .s4/.u4 inputs", "sm_75", "6.5", _mma_operands,
                    {".m16n8k32": ("sm_80", "7.0"), ".m16n8k64": ("sm_80", "7.0")}),
    "mma_b1": _form("mma.sync with .b1 inputs", "sm_75", "7.0", _mma_operands,
                    {".m16n8k128": ("sm_80", "7.0"), ".m16n8k256": ("sm_80", "7.0"), ".and": ("sm_80", "7.1")}),
    # ---- mma.sp, mma.sp::ordered_metadata (PTX ISA 8.5)
    "mma_sp_f16": _form("mma.sp with .f16 inputs", "sm_80", "7.1", _mma_sp_operands, _ORDERED_METADATA),
    "mma_sp_bf16": _form("mma.sp with .bf16 inputs", "sm_80", "7.1", _mma_sp_operands, _ORDERED_METADATA),
    "mma_sp_tf32": _form("mma.sp with .tf32 inputs", "sm_80", "7.1", _mma_sp_operands, _ORDERED_METADATA),
    "mma_sp_fp8": _form("mma.sp with .e4m3/.e5m2 inputs", "sm_89", "8.4", _mma_sp_operands, _ORDERED_METADATA),
    # (sm_120a needs PTX ISA 8.7 anyway; ptxas 13.0 asks for 8.7 of this form at the targets that lack it)
    "mma_sp_fp8_f16": _form("mma.sp with .e4m3/.e5m2 inputs and an .f16 accumulator", "sm_120f", "8.7",
                            _mma_sp_operands),
    "mma_sp_i8": _form("mma.sp with .s8/.u8 inputs", "sm_80", "7.1", _mma_sp_operands, _ORDERED_METADATA),
    "mma_sp_i4": _form("mma.sp with .s4/.u4 inputs", "sm_80", "7.1", _mma_sp_operands, _ORDERED_METADATA),
    # ---- mma with a .kind (ptxas 13.0: "Feature '.kind::f8f6f4' requires PTX ISA .version 8.6", "... 'mma with
    # with FP6/FP4 floating point type' requires ... 8.7", "... 'mma with block scale' requires ... 8.7"; with
    # .e4m3/.e5m2 inputs at the sm_100f, sm_110f and sm_120f families (.m16n8k16 and an .f16 accumulator from 8.7,
    # as mma_fp8's), with an FP6/FP4 input or a block scale at the sm_120f family, the sparse .kind::mxf4 and
    # .kind::mxf4nvf4 at sm_120a and sm_121a only: "Instruction 'Sparse mma with block scale' not supported on
    # .target 'sm_120f'"; "Feature '.kind::mxf4nvf4' requires PTX ISA .version 8.7" of that kind without a block
    # scale, and "Feature '.kind::mxf4 with .sp modifier' not supported on .target 'sm_100f'": the 'a' targets only)
    "mma_kind_fp8": _form("mma.sync .kind::f8f6f4 with .e4m3/.e5m2 inputs", _FAMILIES_100, "8.6", _kind_operands,
                          {".m16n8k16": (_FAMILIES_100, "8.7"), ".f16": (_FAMILIES_100, "8.7"),
                           ".kind::mxf4nvf4": (_FAMILIES_100, "8.7")}),
    "mma_kind_f6f4": _form("mma.sync .kind::f8f6f4 with FP6/FP4 inputs", "sm_120f", "8.7", _kind_operands),
    "mma_mxf8f6f4": _form("mma.sync .kind::mxf8f6f4.block_scale", "sm_120f", "8.7", _kind_operands),
    "mma_mxf4": _form("mma.sync .kind::mxf4.block_scale", "sm_120f", "8.7", _kind_operands),
    "mma_mxf4nvf4": _form("mma.sync .kind::mxf4nvf4.block_scale", "sm_120f", "8.7", _kind_operands),
    "mma_sp_kind_fp8": _form("mma.sp .kind::f8f6f4 with .e4m3/.e5m2 inputs", _FAMILIES_100, "8.6", _kind_operands,
                             {".f16": ("sm_120f", "8.7"), ".kind::mxf4": (_ARCH_100, "8.6"),
                              ".kind::mxf4nvf4": (_ARCH_100, "8.7")}),
    "mma_sp_kind_f6f4": _form("mma.sp .kind::f8f6f4 with FP6/FP4 inputs", "sm_120f", "8.7", _kind_operands),
    "mma_sp_mxf8f6f4": _form("mma.sp .kind::mxf8f6f4.block_scale", "sm_120f", "8.7", _kind_operands),
    "mma_sp_mxf4": _form("mma.sp .kind::mxf4.block_scale", ("sm_120a", "sm_121a"), "8.7", _kind_operands),
    "mma_sp_mxf4nvf4": _form("mma.sp .kind::mxf4nvf4.block_scale", ("sm_120a", "sm_121a"), "8.7", _kind_operands),
    # ---- ldmatrix / stmatrix
    "ldmatrix_m8n8": _form("ldmatrix .m8n8", "sm_75", "6.5", _ldmatrix_operands, {".shared::cta": ("sm_75", "7.8")}),
    "ldmatrix_m16n16": _form("ldmatrix .m16n16", _FAMILIES_100, "8.6", _ldmatrix_operands),
    "ldmatrix_m8n16": _form("ldmatrix .m8n16", _FAMILIES_100, "8.6", _ldmatrix_operands),
    "stmatrix_m8n8": _form("stmatrix .m8n8", "sm_90", "7.8", _stmatrix_operands),
    "stmatrix_m16n8": _form("stmatrix .m16n8", _FAMILIES_100, "8.6", _stmatrix_operands),
    # ---- wgmma
    "wgmma_f16": _form(".f16 wgmma", "sm_90a", "8.0", _wgmma_operands),
    "wgmma_bf16": _form(".bf16 wgmma", "sm_90a", "8.0", _wgmma_operands),
    "wgmma_tf32": _form(".tf32 wgmma", "sm_90a", "8.0", _wgmma_operands),
    "wgmma_fp8": _form(".e4m3/.e5m2 wgmma", "sm_90a", "8.0", _wgmma_operands),
    "wgmma_int": _form(".s8/.u8 wgmma", "sm_90a", "8.0", _wgmma_operands),
    "wgmma_int_mixed": _form(".s8/.u8 wgmma with mixed signedness", "sm_90a", "8.4", _wgmma_operands),
    "wgmma_b1": _form(".b1 wgmma", "sm_90a", "8.0", _wgmma_operands),
    # ---- wgmma.mma_async.sp (ptxas 13.0: "Feature 'Sparse WGMMA with floating point types' requires PTX ISA
    # .version 8.2 or later", "... with mixed integer types' requires ... 8.4"; sm_90a only)
    "wgmma_sp_f16": _form(".f16 wgmma.mma_async.sp", "sm_90a", "8.2", _wgmma_operands),
    "wgmma_sp_bf16": _form(".bf16 wgmma.mma_async.sp", "sm_90a", "8.2", _wgmma_operands),
    "wgmma_sp_tf32": _form(".tf32 wgmma.mma_async.sp", "sm_90a", "8.2", _wgmma_operands),
    "wgmma_sp_fp8": _form(".e4m3/.e5m2 wgmma.mma_async.sp", "sm_90a", "8.2", _wgmma_operands),
    "wgmma_sp_int": _form(".s8/.u8 wgmma.mma_async.sp", "sm_90a", "8.2", _wgmma_operands),
    "wgmma_sp_int_mixed": _form(".s8/.u8 wgmma.mma_async.sp with mixed signedness", "sm_90a", "8.4",
                                _wgmma_operands),
    "wgmma_fence": _form("wgmma.fence", "sm_90a", "8.0", _no_operands),
    "wgmma_commit_group": _form("wgmma.commit_group", "sm_90a", "8.0", _no_operands),
    "wgmma_wait_group": _form("wgmma.wait_group", "sm_90a", "8.0", _wait_group_operands),
    # ---- cp.async
    "cp_async": _form("cp.async", "sm_80", "7.0", _cp_async_operands,
                      {".L2::cache_hint": ("sm_80", "7.4"), ".L2::64B": ("sm_80", "7.4"),
                       ".L2::128B": ("sm_80", "7.4"), ".L2::256B": ("sm_80", "7.4")}),
    "cp_async_commit_group": _form("cp.async.commit_group", "sm_80", "7.0", _no_operands),
    "cp_async_wait_group": _form("cp.async.wait_group", "sm_80", "7.0", _wait_group_operands),
    "cp_async_wait_all": _form("cp.async.wait_all", "sm_80", "7.0", _no_operands),
    "cp_async_mbarrier_arrive": _form("cp.async.mbarrier.arrive", "sm_80", "7.0",
                                      lambda f: _sig(_addr("addr")), {".shared::cta": ("sm_80", "7.8")}),
    # ---- cp.async.bulk
    "cp_async_bulk_g2s": _form("cp.async.bulk global -> shared::cluster", "sm_90", "8.0", _bulk_operands),
    "cp_async_bulk_g2s_cta": _form("cp.async.bulk global -> shared::cta", "sm_90", "8.6", _bulk_operands),
    "cp_async_bulk_s2s": _form("cp.async.bulk shared::cta -> shared::cluster", "sm_90", "8.0", _bulk_operands),
    "cp_async_bulk_s2g": _form("cp.async.bulk shared::cta -> global", "sm_90", "8.0", _bulk_operands,
                               {".cp_mask": ("sm_100", "8.6")}),
    "cp_async_bulk_prefetch": _form("cp.async.bulk.prefetch", "sm_90", "8.0", _bulk_operands),
    "prefetch_tensormap": _form("prefetch.tensormap", "sm_90", "8.0", _tensormap_prefetch_operands),
    "cp_async_bulk_commit_group": _form("cp.async.bulk.commit_group", "sm_90", "8.0", _no_operands),
    "cp_async_bulk_wait_group": _form("cp.async.bulk.wait_group", "sm_90", "8.0", _wait_group_operands),
    # ---- cp.reduce.async.bulk
    "cp_reduce_async_bulk_s2g": _form("cp.reduce.async.bulk shared::cta -> global", "sm_90", "8.0",
                                      _reduce_operands),
    "cp_reduce_async_bulk_s2s": _form("cp.reduce.async.bulk shared::cta -> shared::cluster", "sm_90", "8.0",
                                      _reduce_operands),
    "cp_reduce_async_bulk_tensor": _form("cp.reduce.async.bulk.tensor shared::cta -> global (tile)", "sm_90", "8.0",
                                         _tensor_operands),
    "cp_reduce_async_bulk_tensor_im2col": _form("cp.reduce.async.bulk.tensor shared::cta -> global (im2col_no_offs)",
                                                "sm_90", "8.0", _tensor_operands),
    # ---- L2 cache lines
    "applypriority": _form("applypriority", "sm_80", "7.4", _l2_line_operands),
    "discard": _form("discard", "sm_80", "7.4", _l2_line_operands),
    # ---- cp.async.bulk.tensor
    "cp_async_bulk_tensor_g2s": _form("cp.async.bulk.tensor global -> shared::cluster (tile)", "sm_90", "8.0",
                                      _tensor_operands),
    "cp_async_bulk_tensor_g2s_im2col": _form("cp.async.bulk.tensor global -> shared::cluster (im2col)", "sm_90",
                                             "8.0", _tensor_operands),
    "cp_async_bulk_tensor_g2s_cta": _form("cp.async.bulk.tensor global -> shared::cta (tile)", "sm_90", "8.6",
                                          _tensor_operands),
    "cp_async_bulk_tensor_g2s_cta_im2col": _form("cp.async.bulk.tensor global -> shared::cta (im2col)", "sm_90",
                                                 "8.6", _tensor_operands),
    "cp_async_bulk_tensor_s2g": _form("cp.async.bulk.tensor shared::cta -> global (tile)", "sm_90", "8.0",
                                      _tensor_operands),
    "cp_async_bulk_tensor_s2g_im2col": _form("cp.async.bulk.tensor shared::cta -> global (im2col_no_offs)",
                                             "sm_90", "8.0", _tensor_operands),
    "cp_async_bulk_prefetch_tensor": _form("cp.async.bulk.prefetch.tensor (tile)", "sm_90", "8.0",
                                           _tensor_operands),
    "cp_async_bulk_prefetch_tensor_im2col": _form("cp.async.bulk.prefetch.tensor (im2col)", "sm_90", "8.0",
                                                  _tensor_operands),
    # ---- mbarrier
    "mbarrier_init": _form("mbarrier.init", "sm_80", "7.0", _mbarrier_operands, {".shared::cta": ("sm_80", "7.8")}),
    "mbarrier_inval": _form("mbarrier.inval", "sm_80", "7.0", _mbarrier_operands,
                            {".shared::cta": ("sm_80", "7.8")}),
    "mbarrier_arrive": _form("mbarrier.arrive", "sm_80", "7.0", _mbarrier_operands,
                             {".shared::cta": ("sm_80", "7.8"), ".release": ("sm_80", "8.0"),
                              ".cluster": ("sm_90", "8.0"), ".relaxed": ("sm_90", "8.6")}),
    "mbarrier_arrive_cluster": _form("mbarrier.arrive on .shared::cluster", "sm_90", "8.0", _mbarrier_operands,
                                     {".relaxed": ("sm_90", "8.6")}),
    "mbarrier_arrive_expect_tx": _form("mbarrier.arrive.expect_tx", "sm_90", "8.0", _mbarrier_operands,
                                       {".relaxed": ("sm_90", "8.6")}),
    "mbarrier_arrive_expect_tx_cluster": _form("mbarrier.arrive.expect_tx on .shared::cluster", "sm_90", "8.0",
                                               _mbarrier_operands, {".relaxed": ("sm_90", "8.6")}),
    "mbarrier_arrive_nocomplete": _form("mbarrier.arrive.noComplete", "sm_80", "7.0", _mbarrier_operands,
                                        {".shared::cta": ("sm_80", "7.8"), ".release": ("sm_80", "8.0")}),
    "mbarrier_expect_tx": _form("mbarrier.expect_tx/complete_tx", "sm_90", "8.0", _mbarrier_operands),
    "mbarrier_test_wait": _form("mbarrier.test_wait", "sm_80", "7.0", _mbarrier_operands,
                                {".parity": ("sm_80", "7.1"), ".shared::cta": ("sm_80", "7.8"),
                                 ".acquire": ("sm_80", "8.0"), ".cluster": ("sm_90", "8.0"),
                                 ".relaxed": ("sm_90", "8.6")}),
    "mbarrier_try_wait": _form("mbarrier.try_wait", "sm_90", "7.8", _mbarrier_operands,
                               {".acquire": ("sm_90", "8.0"), ".relaxed": ("sm_90", "8.6")}),
    "mbarrier_pending_count": _form("mbarrier.pending_count", "sm_80", "7.0", _mbarrier_operands),
    # ---- fences, cluster
    "fence_sem": _form("fence", "sm_70", "6.0", _no_operands, {".cluster": ("sm_90", "7.8")}),
    "fence_proxy_async": _form("fence.proxy.async", "sm_90", "8.0", _no_operands),
    "fence_proxy_alias": _form("fence.proxy.alias", "sm_75", "7.5", _no_operands),
    "fence_mbarrier_init": _form("fence.mbarrier_init", "sm_90", "8.0", _no_operands),
    "fence_proxy_tensormap_release": _form("fence.proxy.tensormap::generic.release", "sm_90", "8.3",
                                           _no_operands),
    "fence_proxy_tensormap_acquire": _form("fence.proxy.tensormap::generic.acquire", "sm_90", "8.3",
                                           _tensormap_acquire_operands),
    "fence_sync_restrict": _form("fence.{acquire,release}.sync_restrict", "sm_90", "8.6", _no_operands),
    "fence_proxy_async_generic": _form("fence.proxy.async::generic", "sm_90", "8.6", _no_operands),
    "barrier_cluster_arrive": _form("barrier.cluster.arrive", "sm_90", "7.8", _no_operands,
                                    {".release": ("sm_90", "8.0"), ".relaxed": ("sm_90", "8.0")}),
    "barrier_cluster_wait": _form("barrier.cluster.wait", "sm_90", "7.8", _no_operands,
                                  {".acquire": ("sm_90", "8.0")}),
    "mapa": _form("mapa", "sm_90", "7.8", _mapa_operands),
    "getctarank": _form("getctarank", "sm_90", "7.8", _getctarank_operands),
    "setmaxnreg": _form("setmaxnreg", ("sm_90a",) + _FAMILIES_100, "8.0", _setmaxnreg_operands),
    "elect_sync": _form("elect.sync", "sm_90", "8.0", _elect_operands),
    "griddepcontrol": _form("griddepcontrol", "sm_90", "7.8", _no_operands),
    # ---- asynchronous stores and reductions into another CTA's shared memory
    "st_async": _form("st.async", "sm_90", "8.1", _async_store_operands),
    "red_async": _form("red.async", "sm_90", "8.1", _async_store_operands),
    # ---- multimem: the fp8 types (and .acc::f16, which goes with them) from sm_100a/f, sm_110a/f, sm_120a and
    # sm_121a on (ptxas 13.0: "Feature '.e5m2' not supported on .target 'sm_120f'"); .acc::f32 from PTX ISA 8.2
    "multimem_ld_reduce": _form("multimem.ld_reduce", "sm_90", "8.1", _multimem_operands, _MM_RAISES),
    "multimem_st": _form("multimem.st", "sm_90", "8.1", _multimem_operands, _MM_RAISES),
    "multimem_red": _form("multimem.red", "sm_90", "8.1", _multimem_operands),
    # ---- textures and surfaces (every supported target; .f16/.f16x2 results and tld4's other geometries
    # are older than the PTX ISA versions ptxas 13.0 reads)
    "tex": _form("tex", "sm_50", "4.0", _tex_operands),
    "tex_cube": _form("tex of a cube map", "sm_50", "4.0", _tex_operands),
    "tex_ms": _form("tex of a multi-sample texture", "sm_50", "4.0", _tex_operands),
    "tld4": _form("tld4", "sm_50", "4.0", _tex_operands),
    "txq": _form("txq", "sm_50", "4.0", _txq_operands),
    "txq_level": _form("txq.level", "sm_50", "4.0", _txq_operands),
    "txq_sampler": _form("txq of a sampler", "sm_50", "4.0", _txq_operands),
    "istypep": _form("istypep", "sm_50", "4.0", _istypep_operands),
    "suld": _form("suld.b", "sm_50", "4.0", _surf_operands),
    "sust_b": _form("sust.b", "sm_50", "4.0", _surf_operands),
    "sust_p": _form("sust.p", "sm_50", "4.0", _surf_operands),
    "sured_b": _form("sured.b", "sm_50", "4.0", _surf_operands),
    "sured_p": _form("sured.p", "sm_50", "4.0", _surf_operands),
    "suq": _form("suq", "sm_50", "4.0", _suq_operands),
}


# ============================================================================================ messages

def describe_ints(values: Iterable[int]) -> str:
    """'a multiple of 8 from 8 to 256', '4, 8 or 16', '-1 or 1': runs of 4 or more become ranges."""
    values = getattr(values, "values", values)  # _Low32's
    if isinstance(values, range) and (values[-1] - values[0]) // values.step >= 6:
        return _run_text(values[0], values[-1], values.step)
    vs = sorted(set(values))
    parts, i = [], 0
    while i < len(vs):
        # the longest arithmetic run starting at i
        best = 1
        if i + 1 < len(vs):
            step = vs[i + 1] - vs[i]
            j = i + 1
            while j + 1 < len(vs) and vs[j + 1] - vs[j] == step:
                j += 1
            best = j - i + 1
        if best >= 4:
            parts.append(_run_text(vs[i], vs[i + best - 1], vs[i + 1] - vs[i]))
            i += best
        else:
            parts.append(str(vs[i]))
            i += 1
    return _join_or(parts)


def _run_text(lo: int, hi: int, step: int) -> str:
    if step == 1:
        return f"{lo} to {hi}"
    if lo % step == 0:
        return f"a multiple of {step} from {lo} to {hi}"
    return f"{lo} to {hi} in steps of {step}"


def _join_or(parts: Sequence[str]) -> str:
    parts = list(parts)
    if len(parts) == 1:
        return parts[0]
    if len(parts) == 2:
        return f"{parts[0]} or {parts[1]}"
    return ", ".join(parts[:-1]) + ", or " + parts[-1]


def _tokens_text(tokens: Iterable[str]) -> str:
    ts = list(dict.fromkeys(tokens))
    if len(ts) == 1:
        return ts[0]
    if len(ts) <= 8:
        return "one of " + ", ".join(ts)
    return "one of " + ", ".join(ts[:8]) + f", ... ({len(ts)} in all)"


def _title(rules: Iterable[str], mnemonic: str) -> str:
    ts = list(dict.fromkeys(FORMS[r].title for r in rules))
    if len(ts) == 1:
        return ts[0]
    return mnemonic


# ============================================================================================= diagnosis

def _diag(code: str, message: str, notes: Sequence[str] = (), severity: str = "error") -> Diagnostic:
    return Diagnostic(code, severity, message, None, tuple(notes))


def _edit_script(a: Sequence[str], b: Sequence[str], limit: int):
    """Levenshtein distance of token lists (None when over `limit`) and one cheapest script: tuples
    ('sub', i, j) / ('del', i) (a[i] extra) / ('ins', i, j) (b[j] missing before a[i])."""
    la, lb = len(a), len(b)
    if abs(la - lb) > limit:
        return None, None
    prev = list(range(lb + 1))
    rows = [prev]
    for i in range(1, la + 1):
        cur = [i] + [0] * lb
        ai = a[i - 1]
        lo = cur[0]
        for j in range(1, lb + 1):
            v = prev[j - 1] + (ai != b[j - 1])
            if prev[j] + 1 < v:
                v = prev[j] + 1
            if cur[j - 1] + 1 < v:
                v = cur[j - 1] + 1
            cur[j] = v
            if v < lo:
                lo = v
        if lo > limit:
            return None, None
        rows.append(cur)
        prev = cur
    dist = prev[lb]
    if dist > limit:
        return None, None
    script = []
    i, j = la, lb
    while i > 0 or j > 0:
        if i > 0 and j > 0 and rows[i][j] == rows[i - 1][j - 1] + (a[i - 1] != b[j - 1]):
            if a[i - 1] != b[j - 1]:
                script.append(("sub", i - 1, j - 1))
            i, j = i - 1, j - 1
        elif i > 0 and rows[i][j] == rows[i - 1][j] + 1:
            script.append(("del", i - 1))
            i -= 1
        else:
            script.append(("ins", i, j - 1))
            j -= 1
    script.reverse()
    return dist, tuple(script)


def _shape_message(bad: str, cands: Sequence[str], title: str) -> Optional[Tuple[str, List[str]]]:
    m = _SHAPE_RE.match(bad)
    if not m or not all(_SHAPE_RE.match(c) for c in cands):
        return None
    got = tuple(int(x) for x in m.groups())
    legal = [_mnk(c) for c in cands]
    wrong, must = [], []
    for d, name in enumerate("MNK"):
        vals = sorted({s[d] for s in legal})
        if got[d] not in vals:
            wrong.append(f"{name}={got[d]}")
            must.append(f"{name} must be {describe_ints(vals)}")
    if not wrong:
        return (f"shape {bad} is not legal for {title}; legal shapes: {', '.join(cands)}"), []
    verb = "is" if len(wrong) == 1 else "are"
    return f"{' and '.join(wrong)} {verb} not legal for {title}; {' and '.join(must)}", []


def _label_of_token(fam: List[Form], token: str) -> Optional[str]:
    for f in fam:
        for t, lb in zip(f.tokens, f.labels):
            if t == token and lb is not None:
                return lb
    return None


# the words an mma.sync spelling may end with for _diagnose_mma (.or is a bit operation of other
# instructions, and a likely slip here)
_MMA_BITOPS = frozenset((".xor", ".and", ".or", ".popc"))
_SPARSITY = (".sp", ".sp::ordered_metadata")


@functools.lru_cache(maxsize=1)
def _mma_table() -> Tuple[Tuple[Form, Tuple[str, ...]], ...]:
    """Each legal mma.sync and mma.sp spelling with its fields (shape, alayout, blayout, satfinite, dtype,
    atype, btype, ctype, bit operation, sparsity, kind, .block_scale, scale vector size, scale type), '' for an
    absent one: the grammar's forms, read once."""
    out = []
    for f in _catalogue().by_mnemonic.get("mma", ()):
        g = f.fields
        out.append((f, (g["shape"], g["alayout"], g["blayout"], g.get("satfinite", ""), g["dtype"], g["atype"],
                        g["btype"], g["ctype"], g.get("bitop", "") + g.get("popc", ""), g.get("sparsity", ""),
                        g.get("kind", ""), g.get("block_scale", ""), g.get("scale_vec", ""), g.get("stype", ""))))
    return tuple(out)


def _mma_fields(toks: Tuple[str, ...]) -> Optional[Tuple[str, ...]]:
    """The fields of an mma.sync or mma.sp spelling laid out as the PTX ISA writes it, whatever their values;
    None where the tokens are not in that order (the generic diagnosis speaks for those)."""
    sp = ""
    if len(toks) > 1 and toks[1] in _SPARSITY:
        sp, toks = toks[1], toks[:1] + toks[2:]
    if len(toks) < 9 or toks[1:3] != (".sync", ".aligned") or not _SHAPE_RE.match(toks[3]):
        return None
    if toks[4] not in (".row", ".col") or toks[5] not in (".row", ".col"):
        return None
    i = 6
    kind = bs = sv = sat = ""
    if toks[i].startswith(".kind::"):
        kind, i = toks[i], i + 1
    if i < len(toks) and toks[i] == ".block_scale":
        bs, i = toks[i], i + 1
    if i < len(toks) and toks[i].startswith(".scale_vec::"):
        sv, i = toks[i], i + 1
    if i < len(toks) and toks[i] == ".satfinite":
        sat, i = ".satfinite", i + 1
    types, tail = toks[i:i + 4], toks[i + 4:]
    vocab = _catalogue().vocab
    if len(types) != 4 or any(t not in vocab and _type_or_none(t[1:]) is None for t in types):
        return None
    st = ""
    if tail and tail[0][1:] in TYPE_WORDS:
        st, tail = tail[0], tail[1:]
    if any(t not in _MMA_BITOPS for t in tail):
        return None
    return (toks[3], toks[4], toks[5], sat, types[0], types[1], types[2], types[3], "".join(tail), sp, kind, bs, sv,
            st)


def _type_or_none(name: str) -> Optional[Type]:
    try:
        return get_type(name)
    except ValueError:
        return None


def _mma_title(forms_: Sequence[Form], a: str, b: str, name: str = "mma.sync") -> str:
    ts = list(dict.fromkeys(FORMS[f.rule].title for f in forms_))
    if len(ts) == 1:
        return ts[0]
    return f"{name} with {a} inputs" if a == b else f"{name} with {a} A and {b} B"


def _diagnose_mma(toks: Tuple[str, ...]) -> Optional[Diagnostic]:
    """Why an mma.sync or mma.sp spelling is not legal, field by field against the grammar's spellings of the
    same instruction (mma.sp's with a sparsity modifier, mma.sync's without): the A and B types, then the shape
    for those inputs, the D and C types for those inputs at that shape, the layouts, .satfinite, the bit
    operation and the sparsity modifier. One diagnostic, naming the first field that fits no legal spelling
    and what is legal there instead, with the nearest legal spelling as a note. The order is that of what a
    user means most surely: the inputs and the shape first, then what follows from them (the accumulator, the
    layouts, the modifiers)."""
    got = _mma_fields(toks)
    if got is None:
        return None
    shape, al, bl, sat, d, a, b, c, bitop, sp, kind, bs, sv, st = got
    table = [e for e in _mma_table() if bool(e[1][9]) == bool(sp)]
    name = "mma.sp" if sp else "mma.sync"
    mnk = _mnk(shape)

    def diag(code, message, rows, notes=()):
        # the nearest legal spelling among those that keep the fields found legal so far
        # (at one distance, the shape with the most of M, N and K in common)
        near = min(rows, key=lambda e: (sum(x != y for x, y in zip(e[1], got)),
                                        sum(x != y for x, y in zip(_mnk(e[1][0]), mnk))))[0].opcode
        return _diag(code, message, tuple(notes) + (f"the nearest legal spelling: {near}",))

    # the kind: the spellings of that kind (or of none) are the ones to compare with
    kinds = [x for x in dict.fromkeys(e[1][10] for e in table) if x]
    if kind and kind not in kinds:
        return diag(CODE_MODIFIER, f"{kind} is not a kind of {name}; the kind must be {_tokens_text(kinds)}",
                    [e for e in table if e[1][10]])
    if not kind:
        extra = bs or sv or st
        if extra:
            takers = [x for x in dict.fromkeys(e[1][10] for e in table if e[1][11]) if x]
            return diag(CODE_MODIFIER, f"{extra} belongs to the block-scaled {name} forms, which need a kind: "
                                       f"{_join_or(takers)}", [e for e in table if e[1][11]])
        if not any(e[1][5] == a and e[1][6] == b for e in table if not e[1][10]):
            takers = [x for x in dict.fromkeys(e[1][10] for e in table if e[1][5] == a and e[1][6] == b) if x]
            if takers:
                what = f"{a} inputs" if a == b else f"{a} A and {b} B"
                return diag(CODE_MODIFIER, f"{name} with {what} needs a kind: {_join_or(takers)} (ptxas: "
                                           f"\"{takers[0]} modifier required\")",
                            [e for e in table if e[1][10] in takers])
    table = [e for e in table if e[1][10] == kind]
    if kind:
        name = f"{name} {kind}"

    # the input types
    rows = [e for e in table if e[1][5] == a and e[1][6] == b]
    if not rows:
        with_a = list(dict.fromkeys(e[1][6] for e in table if e[1][5] == a))
        with_b = list(dict.fromkeys(e[1][5] for e in table if e[1][6] == b))
        if not with_a:
            legal = list(dict.fromkeys(e[1][5] for e in table))
            return diag(CODE_TYPE, f"{a} is not a legal A type for {name}; the A type must be one of "
                                   f"{', '.join(legal)}", table)
        notes = [f"or: with B type {b}, the A type must be {_tokens_text(with_b)}"] if with_b else []
        return diag(CODE_TYPE, f"{b} is not a legal B type for {name} with A type {a}; the B type must be "
                               f"{_tokens_text(with_a)}", [e for e in table if e[1][5] == a], notes)
    title = _mma_title([e[0] for e in rows], a, b, name)
    # the shape, for these inputs
    here = [e for e in rows if e[1][0] == shape]
    if not here:
        cands = list(dict.fromkeys(e[1][0] for e in rows))
        got_msg = _shape_message(shape, sorted(cands, key=_mnk), title)
        msg = got_msg[0] if got_msg else f"{shape} is not a legal shape for {title}; the shape must be " \
                                          f"{_tokens_text(cands)}"
        return diag(CODE_SHAPE, msg, rows)
    title = _mma_title([e[0] for e in here], a, b, name)
    at = "" if shape in title else f" at {shape}"
    # the accumulator: D and C types, for these inputs at this shape
    rows, here = here, [e for e in here if e[1][4] == d and e[1][7] == c]
    if not here:
        pairs = list(dict.fromkeys(f"{e[1][4]}/{e[1][7]}" for e in rows))
        return diag(CODE_TYPE, f"D/C types {d}/{c} are not legal for {title}{at}; the D/C types must be "
                               f"{_join_or(pairs)}", rows)
    title = _mma_title([e[0] for e in here], a, b, name)
    # the layouts
    rows, here = here, [e for e in here if e[1][1] == al and e[1][2] == bl]
    if not here:
        legal_a = list(dict.fromkeys(e[1][1] for e in rows))
        legal_b = list(dict.fromkeys(e[1][2] for e in rows))
        wrong = [f"{x} is not a legal {what} layout" for x, what, ok in ((al, "A", legal_a), (bl, "B", legal_b))
                 if x not in ok]
        must = [f"the {what} layout must be {_tokens_text(ok)}" for x, what, ok in
                ((al, "A", legal_a), (bl, "B", legal_b)) if x not in ok]
        return diag(CODE_LAYOUT, f"{' and '.join(wrong)} for {title}{at}; {' and '.join(must)}", rows)
    # .satfinite
    rows, here = here, [e for e in here if e[1][3] == sat]
    if not here:
        takers = list(dict.fromkeys(e[1][5] for e in table if e[1][3]))
        if not takers:
            return diag(CODE_MODIFIER, f".satfinite is not legal for {title}; {name} takes none", rows)
        return diag(CODE_MODIFIER, f".satfinite is not legal for {title}; only {name} with "
                                   f"{'/'.join(takers)} inputs takes it", rows)
    # the bit operation
    rows, here = here, [e for e in here if e[1][8] == bitop]
    if not here:
        legal = [x for x in dict.fromkeys(e[1][8] for e in rows) if x]
        if not legal:
            takers = list(dict.fromkeys(e[1][5] for e in table if e[1][8]))
            ops = list(dict.fromkeys(e[1][8] for e in table if e[1][8]))
            if not takers:
                return diag(CODE_MODIFIER, f"{name} takes no bit operation ({bitop})", rows)
            return diag(CODE_MODIFIER, f"{title} takes no bit operation ({bitop}); only {name} with "
                                       f"{'/'.join(takers)} inputs takes {_join_or(ops)}", rows)
        what = f"not {bitop}" if bitop else "none is given"
        return diag(CODE_MODIFIER, f"{title} needs a bit operation, {_join_or(legal)}; {what}", rows)
    # the sparsity modifier (.sp::ordered_metadata only, for some forms)
    rows, here = here, [e for e in here if e[1][9] == sp]
    if not here:
        legal = list(dict.fromkeys(e[1][9] for e in rows))
        return diag(CODE_MODIFIER, f"{title} needs {_join_or(legal)}, not {sp}", rows)
    # .block_scale, then the scale vector size with the scale type (.kind::mxf4nvf4 pairs them)
    rows, here = here, [e for e in here if e[1][11] == bs]
    if not here:
        return diag(CODE_MODIFIER, f"{title} needs .block_scale" if not bs else f"{title} takes no .block_scale",
                    rows)
    rows, here = here, [e for e in here if e[1][12] == sv and e[1][13] == st]
    if not here:
        svs = list(dict.fromkeys(e[1][12] for e in rows))
        sts = list(dict.fromkeys(e[1][13] for e in rows))
        pairs = _join_or(list(dict.fromkeys(f"{e[1][12] or 'no scale vector size'} with {e[1][13]}"
                                            for e in rows)))
        if st not in sts:
            if not st:
                return diag(CODE_TYPE, f"{title} needs a scale type after the C type: {_tokens_text(sts)}", rows)
            if sts == [""]:
                return diag(CODE_TYPE, f"{title} takes no scale type ({st})", rows)
            return diag(CODE_TYPE, f"{st} is not a legal scale type for {title}; the scale type must be "
                                   f"{_tokens_text(sts)}", rows)
        if sv not in svs:
            if svs == [""]:
                return diag(CODE_MODIFIER, f"{title} takes no scale vector size ({sv})", rows)
            if not sv:
                return diag(CODE_MODIFIER, f"{title} needs a scale vector size: {pairs} (ptxas: \".scale_vec_size "
                                           "modifier required\")", rows)
            legal = [x or "none" for x in svs]
            return diag(CODE_MODIFIER, f"{sv} is not a legal scale vector size for {title}; the scale vector size "
                                       f"must be {_join_or(legal)}", rows)
        return diag(CODE_TYPE, f"{sv} does not go with the scale type {st} in {title}; it takes {pairs}", rows)
    return None


def _name_out_of_place(opcode: str, toks: Tuple[str, ...]) -> Optional[Diagnostic]:
    """A legal spelling's words with a word of its instruction name elsewhere than in the name (ptxas: "Unknown
    modifier"): the error names the instruction name and the spelling to write."""
    words = _words(toks)
    bad = misplaced_name_words(words)
    if not bad:
        return None
    key = order_key(words)
    for f in _catalogue().by_words.get(tuple(sorted(words)), ()):
        fkey = order_key(_words(f.tokens))
        if fkey[1] == key[1]:
            return _diag(CODE_MODIFIER, name_order_message(key[0], bad, fkey[0]), (f"write {f.opcode}",))
    return None


def _in_form_order(toks: Tuple[str, ...]) -> Tuple[str, ...]:
    """The tokens of an illegal opcode with its modifiers in the order of the nearest legal spelling of the same
    instruction name, as ptxas reads them, so that the diagnosis compares like with like. The words that spelling
    has (a group's words by their place in their isa_core.ORDERED_WORDS group), and those that stand in for one of
    its words it lacks (a word of the same field, or one that no legal spelling has), trade places to follow its
    order; any other word stays where it is."""
    cat = _catalogue()
    words = _words(toks)
    name = order_key(words)[0]
    n = name.count(".") + 1
    rest = words[n:]
    if len(rest) < 2:
        return toks
    best = cat.most_alike(name, rest)
    if best is None:
        return toks
    have = Counter(rest)
    tmpl = [t[1:] for t in best.tokens[n:]]
    labels = best.labels[n:]
    # where each word of the spelling is: free words by occurrence, a group's words by their rank in the group
    place: Dict[tuple, int] = {}
    seen: Counter = Counter()
    for k, w in enumerate(tmpl):
        g = group_of(w)
        key = (w, seen[w]) if g is None else (g, seen[g])
        seen[w if g is None else g] += 1
        place[key] = k
    missing = [k for k, w in enumerate(tmpl) if group_of(w) is None and have[w] == 0]
    rank: Dict[int, float] = {}
    seen = Counter()
    for i, w in enumerate(rest):
        g = group_of(w)
        key = (w, seen[w]) if g is None else (g, seen[g])
        seen[w if g is None else g] += 1
        if key in place:
            rank[i] = place[key]
        elif g is not None and seen[g] > 1 and (g, 0) in place:
            rank[i] = max(k for (x, _), k in place.items() if x == g) + 0.5   # one more of a group than it has
        elif g is None:
            fits = next((k for k in missing if labels[k] in cat.vocab.get("." + w, ())
                         or "." + w not in cat.vocab), None)
            if fits is not None:
                missing.remove(fits)
                rank[i] = fits
    slots = sorted(rank)
    moved = [rest[i] for i in sorted(slots, key=lambda i: (rank[i], i))]
    out = list(rest)
    for i, w in zip(slots, moved):
        out[i] = w
    return toks[:n] + tuple("." + w for w in out)


def _diagnose(opcode: str, toks: Tuple[str, ...]) -> Diagnostic:
    d = _diagnose_spelling(opcode, toks)
    if toks[0] == "wgmma" and any(t.split("::")[0] == ".sp" for t in toks) and \
            not any(n.startswith(("write ", "nearest legal spellings")) for n in d.notes):
        near = _nearest_wgmma_mma_async(toks)
        if near is not None:
            d = replace(d, notes=tuple(d.notes) + (f"write {near}",))
    return d


def _nearest_wgmma_mma_async(toks: Tuple[str, ...]) -> Optional[str]:
    """The legal wgmma.mma_async spelling nearest an illegal one, for the note of a sparse one: the fewest tokens
    changed (in the PTX ISA's order of the modifiers), then one that keeps or drops .sp as written, then the change
    nearest the end (the one the message names, _one_edit), then the shape with the most of M, N and K in common
    and the nearest N, then one with .aligned. None where the words of the name are out of place or no spelling
    is within three tokens."""
    cat = _catalogue()
    if misplaced_name_words(_words(toks)):
        return None
    ordered = _in_form_order(toks)
    cands = [(f, 1, script[0][1]) for f, script in _one_edit_neighbours(cat, ordered)]
    if not cands:
        for f in cat.within(ordered, 3):
            dist, script = _edit_script(ordered, f.tokens, 3)
            if dist is not None:
                cands.append((f, dist, script[0][1] if script else 0))
    cands = [c for c in cands if c[0].has(".mma_async")]
    if not cands:
        return None
    got = next((_mnk(t) for t in ordered if _SHAPE_RE.match(t)), None)
    sp = ".sp" in ordered

    def key(c):
        f, dist, at = c
        shape = f.fields.get("shape")
        mnk = _mnk(shape) if got and shape else got
        apart = sum(x != y for x, y in zip(mnk, got)) if got else 0
        far = sum(abs(x - y) for x, y in zip(mnk, got)) if got else 0
        return dist, f.has(".sp") != sp, -at, apart, far, not f.has(".aligned"), f.opcode
    return min(cands, key=key)[0].opcode


def _diagnose_spelling(opcode: str, toks: Tuple[str, ...]) -> Diagnostic:
    d = _name_out_of_place(opcode, toks)
    if d is not None:
        return d
    if toks[0] == "multimem":          # its fields, in any order
        d = _diagnose_multimem(toks)
        if d is not None:
            return d
    if toks[0] == "mma" and any(t.startswith(".kind::") for t in toks):
        # an mma with a kind in the PTX ISA's order: its fields as written (a kind no form has would otherwise
        # stand in for a missing word of the nearest form)
        d = _diagnose_mma(toks)
        if d is not None:
            return d
    if not misplaced_name_words(_words(toks)):
        ordered = _in_form_order(toks)
        if ordered != toks:
            d = _diagnose_in_order(opcode, ordered)
            return replace(d, notes=tuple(d.notes) + (
                "ptxas takes the modifiers after the instruction name in any order; in the PTX ISA's order this is "
                + "".join(ordered),))
    return _diagnose_in_order(opcode, toks)


# the pairs of multimem's fields whose values go together in some ways only, in the order _diagnose_multimem names
# them (a field left out counts as a value of its own: .relaxed needs a scope, .f16 a vector size)
_MM_PAIRS = (("sem", "scope"), ("scope", "sem"), ("type", "op"), ("acc", "op"), ("acc", "type"), ("type", "vec"),
             ("op", "type"), ("vec", "type"))


def _a(text: str) -> str:
    return ("an " if text[0] in "aeiou" else "a ") + text


@functools.lru_cache(maxsize=4)
def _multimem_fields(name: str):
    """Of the spellings of multimem instruction `name` (".st"): field -> its values (None where a spelling leaves the
    field out), token -> its field, and per pair of _MM_PAIRS field a, value of a -> the values of field b with it."""
    fs = [f for f in _catalogue().by_mnemonic.get("multimem", []) if f.tokens[1] == name]
    values: Dict[str, Dict[Optional[str], None]] = {}
    for f in fs:
        for lb, t in f.fields.items():
            values.setdefault(lb, {})[t] = None
    for lb, vs in values.items():
        if any(lb not in f.fields for f in fs):
            vs[None] = None
    label = {t: lb for lb, vs in values.items() for t in vs if t is not None}
    pairs: Dict[Tuple[str, str], Dict[str, Dict[Optional[str], None]]] = {}
    for a, b in _MM_PAIRS:
        got = pairs[(a, b)] = {}
        for f in fs:
            va = f.fields.get(a)
            if va is not None:
                got.setdefault(va, {})[f.fields.get(b)] = None
    return values, label, pairs, [f.fields for f in fs]


def _diagnose_multimem(toks: Tuple[str, ...]) -> Optional[Diagnostic]:
    """An illegal multimem spelling explained by its fields, as the grammar's spellings of its instruction have them:
    a word that instruction has not, a field written twice, then the first pair of fields (_MM_PAIRS) that no legal
    spelling has together. None where none of these says why (the nearest-spelling diagnosis then does)."""
    names = (".ld_reduce", ".st", ".red")
    if len(toks) < 2 or toks[1] not in names:
        if any(t in names for t in toks[1:]):
            return None                      # (a name word out of place: _name_out_of_place)
        return _diag(CODE_MODIFIER, f"multimem needs its instruction's name after it: multimem.ld_reduce, multimem.st "
                                   f"or multimem.red{', not ' + toks[1] if len(toks) > 1 else ''}",
                     ("multimem.ld_reduce.add.u32 d, [a];  multimem.st.b32 [a], b;  multimem.red.add.u32 [a], b;",))
    title = "multimem" + toks[1]
    values, label, pairs, spellings = _multimem_fields(toks[1])

    def among(vs) -> str:
        named = [v for v in vs if v is not None]
        return _join_or(named) + (", or none" if None in vs and named else "")

    have: Dict[str, str] = {}
    for t in toks[2:]:
        lb = label.get(t)
        if lb is None:
            known = ["type"] if t[1:] in TYPE_WORDS else ["vec"] if re.fullmatch(r"\.v\d+", t) else \
                [x for x in _catalogue().vocab.get(t, ()) if x is not None]
            lb = next((x for x in known if _field_of(x) in values), known[0] if known else None)
            if lb is None:
                near = difflib.get_close_matches(t, list(label), 3, 0.6)
                return _diag(CODE_MODIFIER, f"{title} has no modifier {t}",
                             (f"did you mean {' or '.join(near)}?",) if near else (f"drop {t}",))
            lb = _field_of(lb)
            vs = values.get(lb)
            what = _field_text(lb)
            if not vs:
                return _diag(_field_code(lb), f"{title} takes no {what} ({t})", (f"drop {t}",))
            named = [v for v in vs if v is not None]
            alt = named[0] if len(named) == 1 else "one of " + ", ".join(named)
            return _diag(_field_code(lb), f"{title} takes no {t}: its {what} is {among(vs)}",
                         (f"write {alt}" + (f" or drop {t}" if None in vs else " instead"),))
        if lb in have:
            if have[lb] == t:
                return _diag(_field_code(lb), f"{title}: {t} is written twice", (f"write {t} once",))
            return _diag(_field_code(lb), f"{title} takes one {_field_text(lb)}, not {have[lb]} and {t}",
                         (f"keep one of {have[lb]} and {t}",))
        have[lb] = t
    for a, b in _MM_PAIRS:
        va, vb = have.get(a), have.get(b)
        ok = pairs[(a, b)].get(va) if va is not None else None
        if ok is None or vb in ok:
            continue
        what = _field_text(b)
        if vb is None:
            msg, note = f"{title}: {va} needs {_a(what)}: {among(ok)}", f"write {va} with one of them"
        elif list(ok) == [None]:
            msg, note = f"{title}: {va} takes no {what} ({vb})", f"drop {vb}"
        else:
            msg, note = f"{title}: {va} does not go with {vb}; with {va} the {what} is {among(ok)}", \
                f"write {va} with one of them, or another {_field_text(a)}"
        return _diag(_field_code(b if vb is not None or a in ("sem", "scope") else a), msg, (note,))
    # a field that every spelling with the fields written has, left out (multimem.red.min.f16x2: a vector size)
    alike = [fs for fs in spellings if all(fs.get(lb) == t for lb, t in have.items())]
    for lb in values:
        if lb not in have and alike and all(lb in fs for fs in alike):
            what = "".join(have[x] for x in values if x in have)
            return _diag(_field_code(lb), f"{title}{what} needs {_a(_field_text(lb))}: "
                                          f"{among(dict.fromkeys(fs[lb] for fs in alike))}",
                         (f"write {title}{what} with one of them",))
    return None


def _diagnose_in_order(opcode: str, toks: Tuple[str, ...]) -> Diagnostic:
    if toks[0] == "mma":
        d = _diagnose_mma(toks)
        if d is not None:
            return d
    cat = _catalogue()
    fam = cat.by_mnemonic.get(toks[0])
    if not fam:
        return _diag(CODE_UNKNOWN, f"`{opcode}` is not an instruction of the families ptxgen checks "
                                   "(mma.sync, ldmatrix, stmatrix, wgmma, cp.async*, mbarrier, fences, cluster)")
    family = toks[0]
    if covers(opcode) and len(toks) > 1:
        family = toks[0] + toks[1]
    found = _one_edit_neighbours(cat, toks)
    best = 1
    if not found:
        best = 3
        for f in cat.within(toks, best):
            dist, script = _edit_script(toks, f.tokens, best)
            if dist is None:
                continue
            if dist < best:
                best, found = dist, []
            found.append((f, script))
    unknown = [t for t in toks[1:] if t not in cat.vocab]
    if not found:
        notes = [f"unknown modifier{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)}"] if unknown else []
        near = _nearest_by_prefix(fam, toks)
        if near:
            notes.append("legal spellings that start the same way: " + ", ".join(near))
        return _diag(CODE_UNKNOWN, f"no legal {family} form is spelled `{opcode}`", notes)
    if best == 1:
        return _one_edit(opcode, toks, fam, found, family)
    # two edits away: name the differing fields of the nearest spellings
    first = found[0]
    lines = []
    for f, script in found[:3]:
        lines.append(f.opcode + " (" + ", ".join(_edit_text(toks, f, e) for e in script) + ")")
    code = _edit_code(toks, first[0], first[1][0], fam)
    notes = ["nearest legal spellings: " + "; ".join(lines)]
    foreign = [t for t in dict.fromkeys(toks[1:]) if all(t not in f.tokens for f in fam)]
    if foreign:
        label = None
        for t in foreign:
            label = label or _label_of_token(list(cat.by_opcode.values()), t)
        verb = "is" if len(foreign) == 1 else "are"
        return _diag(_field_code(label) if label else code,
                     f"no legal {family} form is spelled `{opcode}`: {', '.join(foreign)} {verb} not part of any "
                     f"legal {toks[0]} spelling", notes)
    return _diag(code, f"no legal {family} form is spelled `{opcode}`; the nearest legal spellings differ in "
                       f"{best} places", notes)


def _one_edit_neighbours(cat: _Catalogue, toks: Tuple[str, ...]) -> List[Tuple[Form, tuple]]:
    """The legal spellings one token substitution, insertion or deletion away (mnemonic kept), by index."""
    idx = cat.neighbour_index(toks[0])
    out = []
    for i in range(1, len(toks)):
        for f, e in idx.get(("s", toks[:i] + (None,) + toks[i + 1:]), ()):
            out.append((f, e))
    for f, e in idx.get(("d", toks), ()):
        out.append((f, e))
    for i in range(1, len(toks)):
        f = cat.by_opcode.get("".join(toks[:i] + toks[i + 1:]))
        if f is not None:
            out.append((f, (("del", i),)))
    return out


def _nearest_by_prefix(fam: List[Form], toks: Tuple[str, ...]) -> List[str]:
    best, out = 0, []
    for f in fam:
        k = 0
        while k < min(len(f.tokens), len(toks)) and f.tokens[k] == toks[k]:
            k += 1
        if k > best:
            best, out = k, [f.opcode]
        elif k == best and len(out) < 3:
            out.append(f.opcode)
    return out if best > 1 else []


def _edit_text(toks, f: Form, e) -> str:
    if e[0] == "sub":
        return f"{_field_text(f.labels[e[2]])} {toks[e[1]]} -> {f.tokens[e[2]]}"
    if e[0] == "del":
        return f"drop {toks[e[1]]}"
    return f"add {f.tokens[e[2]]}"


def _edit_code(toks, f: Form, e, fam) -> str:
    if e[0] in ("sub", "ins"):
        return _field_code(f.labels[e[2]])
    return _field_code(_label_of_token(fam, toks[e[1]]))


def _one_edit(opcode, toks, fam, found, family) -> Diagnostic:
    groups: Dict[tuple, List[Tuple[Form, tuple]]] = {}
    for f, script in found:
        e = script[0]
        key = (e[0], e[1]) if e[0] == "del" else (e[0], e[1], f.labels[e[2]])
        groups.setdefault(key, []).append((f, e))
    texts = [_group_text(toks, key, members, fam, family) for key, members in groups.items()]
    # The fix nearest the end of the opcode first (the mnemonic and shape are what a user means most
    # surely; a stray modifier or type near the end is the likelier slip); at one position, the
    # replacement that looks most like what was written, then inserting, then dropping.
    texts.sort(key=lambda t: (-t[2], -t[4]))
    code, msg = texts[0][0], texts[0][1]
    # (two fixes may read alike: dropping either of two equal words)
    others = [t[1] for t in texts[1:] if t[1] != msg]
    notes = list(texts[0][5]) + [f"or: {m}" for m in list(dict.fromkeys(others))[:3]]
    return _diag(code, msg, notes)


def _likeness(bad: str, cands: Sequence[str]) -> float:
    return max(difflib.SequenceMatcher(None, bad, c).ratio() for c in cands)


def _group_text(toks, key, members, fam, family):
    forms_ = [f for f, _ in members]
    title = _title((f.rule for f in forms_), family)
    kind = key[0]
    i = key[1]
    if kind == "sub":
        bad = toks[i]
        label = key[2]
        cands = list(dict.fromkeys(f.tokens[e[2]] for f, e in members))
        score = _likeness(bad, cands)
        if label == "shape":
            got = _shape_message(bad, cands, title)
            if got is not None:
                return CODE_SHAPE, got[0], i, kind, score, ()
        what = _field_text(label)
        return (_field_code(label), f"{bad} is not a legal {what} for {title}; the {what} must be "
                                    f"{_tokens_text(cands)}", i, kind, score, ())
    if kind == "del":
        label = _label_of_token(fam, toks[i])
        # dropping a token of the family's vocabulary is seldom the intended fix; dropping a foreign one is
        score = 0.3 if label is not None else 0.5
        untyped = _untyped_text(toks[i], forms_)
        if untyped is not None:
            # a type on a form that takes none (cp.reduce.async.bulk.tensor, which reduces elements of the tensor
            # map's type): the likeliest slip, and the fix is the spelling without it
            return (_field_code(label), f"{toks[i]} is not allowed in {title}, {untyped}", i, kind, 1.0,
                    tuple(f"write {f.opcode}" for f in forms_[:1]))
        return _field_code(label), f"{toks[i]} is not allowed in {title}", i, kind, score, ()
    label = key[2]
    cands = list(dict.fromkeys(f.tokens[e[2]] for f, e in members))
    after = toks[i - 1] if i > 0 else toks[0]
    if label is None or len(cands) == 1:
        return _field_code(label), f"{title} needs {_tokens_text(cands)} after {after}", i, kind, 0.6, ()
    return (_field_code(label), f"{title} needs the {_field_text(label)} after {after}: {_tokens_text(cands)}",
            i, kind, 0.6, ())


def _untyped_text(token: str, forms_: Sequence[Form]) -> Optional[str]:
    """Why a type `token` has no place in `forms_` when none of them has a type (None where one does, or where the
    token is no type): said of the tensor forms, whose tensor map gives the element type."""
    if token[1:] not in TYPE_WORDS or not forms_ or any(t[1:] in TYPE_WORDS for f in forms_ for t in f.tokens[1:]):
        return None
    if all(any(TENSOR in s.kinds and s.handles is None for sig in _signatures(f) for s in sig.slots) for f in forms_):
        return "which takes no type: the tensor map gives the element type"
    return "which takes no type"


# ================================================================================================ check

@functools.lru_cache(maxsize=65536)
def _opcode_diags(opcode: str) -> Tuple[Optional[Form], Tuple[Diagnostic, ...]]:
    f = parse(opcode)
    if f is not None:
        return f, ()
    return None, (_diagnose(opcode, _tokens(opcode)),)


def _as_target(t) -> Optional[Target]:
    if t is None or isinstance(t, Target):
        return t
    try:
        return Target.parse(t)
    except ValueError as e:
        raise TargetError(str(e)) from None


def _as_version(v) -> Optional[PtxVersion]:
    if v is None:
        return None
    try:
        return parse_version(v)
    except ValueError as e:
        raise UsageError(str(e)) from None


def requirement(opcode: str, present: Iterable[Slot] = ()) -> Tuple[List[Need], List[str]]:
    """The Needs of a legal opcode (base, raised by its modifiers and by optional operands present), with
    a reason for each raise."""
    f = parse(opcode)
    if f is None:
        raise UsageError(f"{opcode!r} is not a legal spelling; check() says why")
    rule = FORMS[f.rule]
    needs, why = [rule.need], [""]
    for t in f.tokens:
        n = rule.raises.get(t)
        if n is not None:
            needs.append(n)
            why.append(t)
    for s in present:
        if s.need is not None:
            needs.append(s.need)
            why.append(f"the {s.name} operand")
    return needs, why


def _gate(opcode: str, f: Form, target: Optional[Target], version: Optional[PtxVersion],
          present: Sequence[Slot]) -> List[Diagnostic]:
    out = []
    needs, why = requirement(opcode, present)
    title = FORMS[f.rule].title
    if target is not None:
        for n, w in zip(needs, why):
            if not n.met_by(target):
                what = f"{title} with {w}" if w else title
                out.append(_diag(CODE_TARGET, f"{what} needs target {n.target_text()} (module target is {target})",
                                 (f"`{f.opcode}`",)))
                break
    if target is not None:
        out.extend(_miscompiles(f, target))
    if version is not None:
        worst = max(range(len(needs)), key=lambda k: needs[k].version)
        n, w = needs[worst], why[worst]
        if version < n.version:
            what = f"{title} with {w}" if w else title
            out.append(_diag(CODE_VERSION, f"{what} needs PTX ISA {version_str(n.version)} (module .version is "
                                           f"{version_str(version)})",
                             (f"write .version {version_str(n.version)} or later (with the builder: "
                              f"Module(..., version='{version_str(n.version)}'))",)))
    return out + _advisories(f)


def _miscompiles(f: Form, target: Target) -> List[Diagnostic]:
    """Legal forms that CUDA 13.0's ptxas (and the driver's JIT) compile into a kernel that fails.

    cp.async{.ca,.cg}...L2::cache_hint for sm_90 and later: the LDGSTS it emits names its cache-policy
    descriptor in a uniform register that nothing writes, whatever produced the policy (createpolicy, a
    constant) and whether or not a src-size is given; the warp stops with an illegal instruction
    (CUDA_ERROR_ILLEGAL_INSTRUCTION). Measured on an H200 (sm_90a), also for a module whose .target is
    sm_80 when the driver JIT-compiles it for the H200 (tests/test_gpu_miscompile.py)."""
    if f.rule == "cp_async" and f.has(".L2::cache_hint") and target.satisfies("sm_90"):
        return [_diag(CODE_MISCOMPILE,
                      f"cp.async with .L2::cache_hint is legal, but ptxas (CUDA 13.0) compiles it for {target} into an "
                      "LDGSTS whose cache-policy register is never written: the kernel stops with an illegal "
                      "instruction (CUDA_ERROR_ILLEGAL_INSTRUCTION)",
                      ("drop .L2::cache_hint and the policy operand, or load with cp.async.bulk.tensor or "
                       "ld.global.L2::cache_hint (+ st.shared), whose policies work",), severity="warning")]
    return []


def _advisories(f: Form) -> List[Diagnostic]:
    """What ptxas 13.0 says of a legal form in an "Advisory" info line, at every target and PTX ISA version:
    plain mma.sp is "expected to have substantially reduced performance on some future architectures"."""
    if f.rule.startswith("mma_sp") and f.has(".sp"):
        return [_diag(CODE_ADVISORY, "mma.sp is legal, but ptxas advises .sp::ordered_metadata instead: plain .sp is "
                                     "expected to be much slower on some future architectures",
                      (f"write {'mma.sp::ordered_metadata' + f.opcode[len('mma.sp'):]} (PTX ISA 8.5) where the "
                       "sparsity metadata's indices are in increasing order, which that form requires",),
                      severity="note")]
    return []


def signatures(opcode: str) -> List[Signature]:
    """The operand lists a legal opcode takes (several for wgmma: A from a descriptor or registers)."""
    f = parse(opcode)
    if f is None:
        raise UsageError(f"{opcode!r} is not a legal spelling; check() says why")
    return _signatures(f)


@functools.lru_cache(maxsize=8192)
def _signatures_cached(opcode: str) -> Tuple[Signature, ...]:
    f = parse(opcode)
    return tuple(replace(sig, slots=tuple(_address_spaces(f, x) for x in sig.slots))
                 for sig in FORMS[f.rule].operands(f))


# the variables a generic address may name (ptxas 13.0: "State space mismatch" for .const and .param ones)
_GENERIC_VARS = frozenset(("global", "shared", "local"))


def _address_spaces(f: Form, slot: Slot) -> Slot:
    """`slot` with the state spaces of the variables it may name (ptxas 13.0, probed per family in
    tests/test_legality_ptxas.py): an address of a state space names variables of that space (`.shared`
    for shared::cta and shared::cluster); a generic one .global, .shared and .local variables; an
    mbarrier only .shared ones, generic or not (the mbarrier family and the [mbar] of the async copies);
    a tensor map (`[tmap, {...}]`) only .global ones (a kernel parameter's map goes through cvta.param).
    fence.proxy.tensormap's address takes any. The mbarrier family's address and txq's and suq's handle take no
    special register as their base (Slot.no_special); the other families' addresses do."""
    if ADDR not in slot.kinds and TENSOR not in slot.kinds:
        return slot
    if ADDR in slot.kinds and slot.handles is not None:
        # txq/suq's [a] names a texture or surface: a .texref/.surfref variable or a .u64 register, no special one
        slot = replace(slot, no_special=True)
    if f.rule.startswith("fence_proxy_tensormap"):
        return slot
    if TENSOR in slot.kinds:
        spaces = frozenset(("global",))
    elif f.rule.startswith("mbarrier"):
        return replace(slot, spaces=frozenset(("shared",)), no_special=True)
    elif slot.name == "mbar":
        spaces = frozenset(("shared",))
    else:
        field_ = f.fields.get(slot.name) if slot.name in ("dst", "src") else f.fields.get("ss")
        sp = field_[1:].split("::")[0] if field_ else None
        spaces = frozenset((sp,)) if sp else _GENERIC_VARS
    return replace(slot, spaces=spaces)


def _signatures(f: Form) -> List[Signature]:
    return list(_signatures_cached(f.opcode))


def _assign(sig: Signature, n: int) -> Optional[List[Slot]]:
    """Which slot each of n operands fills (optional slots are filled left to right), or None."""
    if not sig.required <= n <= len(sig.slots):
        return None
    spare = n - sig.required
    out = []
    for s in sig.slots:
        if s.optional:
            if spare:
                out.append(s)
                spare -= 1
        else:
            out.append(s)
    return out


_MIXED_LITERALS = ("mixes integer and floating-point literals; ptxas 13.0 takes no vector whose neighbours mix integer "
                   "and floating-point elements")


def _literal_value(o: OperandInfo) -> str:
    """The value ptxas 13.0 makes of a vector of literals only: 'mixed' (integer and float literals side by side,
    taken nowhere), 'int', 'f32' (0f literals only), 'f64' (0d ones only, or 0f ones with a 0d after the first) or
    'any' (a 0d first with 0f ones after it: typed by its elements, taken anywhere)."""
    if "i" in o.lits:
        return "mixed" if "f" in o.lits else "int"
    if not o.lits64:
        return "f32"
    return "any" if o.lits64[0] == 0 and len(o.lits64) < o.count else "f64"


def _literal_fragment_problem(o: OperandInfo, s: Slot) -> str:
    """What is wrong with a tensor-core fragment written as literals only ('' where ptxas 13.0 takes it). ptxas
    types such a vector by its literals ("Arguments mismatch", tests/test_lint_fragment_pred.py,
    tests/test_lint_vector_mix.py): integer literals pass where the fragment's own type is .s32 or .f64; 0f literals
    only are an .f32 value, which passes where the fragment takes .f32 registers or is .f64; 0d literals only, or 0f
    ones with a 0d after the first, an .f64 value, which passes in .f64 fragments; a 0d literal first with 0f ones
    after it is typed by its elements and taken anywhere; integer and float literals side by side, nowhere. The .f32
    C of the 8-, 6- and 4-bit float inputs without a block scale takes an .f64 value too (Slot.f64_literals)."""
    own = s.types[0].name if s.types else ""
    v = _literal_value(o)
    if v == "mixed":
        return _MIXED_LITERALS
    if v == "int" and own not in ("s32", "f64"):
        return (f"is written as integer literals only; ptxas 13.0 takes those in .s32 and .f64 fragments, not in "
                f"this .{own} one")
    if v == "f32" and own != "f64" and not _type_ok(get_type("f32"), s):
        return (f"is written as floating-point literals only; ptxas 13.0 takes those where the fragment takes .f32 "
                f"registers, not in this .{own} one")
    if v == "f64" and own != "f64" and not _type_ok(get_type("f64"), s) and not s.f64_literals:
        return (f"is written as 0d literals (or 0f ones with a 0d after the first), which ptxas 13.0 types as an .f64 "
                f"value: taken in .f64 fragments, not in this .{own} one; write 0f literals")
    return ""


def _literal_vector_problem(o: OperandInfo, s: Slot) -> str:
    """What is wrong with a vector of literals only in an operand that is no tensor-core fragment (st.async's value,
    a tensor's coordinates; '' where ptxas 13.0 takes it): typed by its literals as _literal_fragment_problem says,
    integer ones an integer value, 0f ones an .f32 one, 0d ones (or 0f ones with a 0d after the first) an .f64 one,
    a 0d first with 0f ones after it any; integer and float literals side by side, nowhere
    (tests/test_lint_vector_mix.py)."""
    own = s.types[0]          # (the operand's own type: st.async .f32's value takes .u32 registers, no integer literal)
    v = _literal_value(o)
    if v == "mixed":
        return _MIXED_LITERALS
    if v == "int":
        if own.kind not in ("b", "u", "s"):
            return f"is written as integer literals only, an integer value; .{own.name} expected"
        return ""
    if own.kind == "f" or v == "any":
        return ""
    t = get_type(v)
    if not compatible(t, own, f16x2_as_int=False):
        return f"is written as {'0d' if o.lits64 else '0f'} literals only, an .{t.name} value; .{own.name} expected"
    return ""


def _type_ok(have: Optional[Type], slot: Slot) -> bool:
    if have is None or not slot.types:
        return True
    if slot.exact:
        return any(have.name == t.name for t in slot.types)
    return any(compatible(have, t, f16x2_as_int=False) for t in slot.types)


def _handle_text(names: FrozenSet[str]) -> str:
    refs = [f".{n}" for n in ("texref", "samplerref", "surfref") if n in names]
    return " or ".join(refs + (["a 64-bit register"] if "b64" in names else []))


def _handles_problem(s: Slot, o: OperandInfo, pos: str, title: str) -> Optional[Diagnostic]:
    """A texture/surface reference whose leading items (`[tex, smp, ...]`) do not fit the slot, or a
    tensor-map reference with more than one, or with a coordinate written without braces."""
    hs = o.handles or (None,)
    if s.handles is None:
        if len(hs) > 1 or o.bare:
            return _diag(CODE_OPERANDS, f"{title}: {pos} must be {s.text()}")
        return None
    if not o.handles:
        return None  # not known (the builder's references)
    lo = sum(1 for _, opt in s.handles if not opt)
    if not lo <= len(hs) <= len(s.handles):
        shape = ", ".join(("{" if opt else "") + "ab"[i] + (",}" if opt else "")
                          for i, (_, opt) in enumerate(s.handles))
        what = f"[{shape} {{coordinates}}]" if o.kind == TENSOR else f"[{shape}]"
        return _diag(CODE_OPERANDS, f"{title}: {pos} is written {what}; {len(hs)} leading item"
                                    f"{'s' if len(hs) != 1 else ''} given")
    for i, (h, (names, _)) in enumerate(zip(hs, s.handles)):
        if h is not None and h not in names:
            what = "a variable of another type" if h == "variable" else "an array of references, which is " \
                "plain memory" if h == "array" else f"a .{h} variable" if h.endswith("ref") else f"a .{h} register"
            notes = ("declare each reference a scalar (`.global .texref t0, t1;`), or give its 64-bit handle in a "
                     "register",) if h == "array" else ()
            return _diag(CODE_OPERANDS, f"{title}: {pos}: item {i + 1} is {what}; {_handle_text(names)} expected",
                         notes)
        if h is None and names:
            return _diag(CODE_OPERANDS, f"{title}: {pos}: item {i + 1} must be {_handle_text(names)}",
                         ("name the reference alone, with no offset, or a register that holds its handle",))
    return None


def uniform_vector(o: OperandInfo) -> bool:
    """Whether ptxas 13.0 types vector `o` by the form (each register against the operand's types): its registers are
    all declared alike and it holds no literal, or .f32 registers with 0f literals only, or .f64 ones with 0d
    literals only; a vector of literals only is typed by its literals (_literal_fragment_problem). Any other vector
    is typed by its elements (tests/test_lint_vector_mix.py). The linter asks this of ld/st vectors too."""
    names = {e.name for e in (o.decl or o.elems) if e is not None}
    if len(names) > 1:
        return False
    if not names or not any(o.lits):
        return True
    if "i" in o.lits:
        return False
    wide = len(o.lits64) == sum(1 for x in o.lits if x)
    return names == {"f32"} and not o.lits64 or names == {"f64"} and wide


# A whole vector register (`.reg .v4 .b32 %v;` named `%v`) as ptxas 13.0 reads it in these families (a probe of every
# operand of every form with .v2 and .v4 registers of twelve types, at each form's minimum target and at sm_90a,
# sm_100a and sm_120a; tests/test_legality_ptxas.py keeps a sample). Where the operand is a vector {...} of as many
# registers, it stands for its elements {%v.x, %v.y, ...}, but for the forms that take none (multimem: "Vector of size
# 2 is expected"; tex's .v2 .f16x2 result) and for tensor-core instructions at targets where ptxas expands them into
# code of its own (_whole_vector_targets). Where the operand is one register, only the operands below read it, each
# as one register of its elements' type ("elem": %v.x), or st.async's .b32 and .b64 values as one value of the
# vector's size ("bits"); every other scalar operand refuses it ("Vector operand is not allowed", "Arguments
# mismatch"). A .v1 data vector of suld and sust ({%r}) takes a vector register of any length and type.
_WHOLE_SCALAR = {
    ("mbarrier_arrive", "count"): "elem", ("mma", "scale-a-data"): "elem", ("mma", "scale-b-data"): "elem",
    ("mma_sp", "e"): "elem", ("wgmma_sp", "sp-meta"): "elem", ("tex", "e"): "elem", ("tex", "lod"): "elem",
    ("tld4", "e"): "elem", ("txq_level", "lod"): "elem", ("st_async", "b"): "elem",   # (with an mbarrier)
    ("cp_async_bulk_g2s", "ctaMask"): "elem", ("cp_async_bulk_s2g", "byteMask"): "elem",
}
_WHOLE_NONE = ("multimem",)          # rules whose vector operands take no whole vector register
_ANY_LENGTH = ("suld", "sust")      # rules whose .v1 data vector takes one of any length


def _whole_scalar_mode(f: Form, slot: Slot) -> Optional[str]:
    for (prefix, name), mode in _WHOLE_SCALAR.items():
        if slot.name == name and f.rule.startswith(prefix):
            if prefix == "st_async":
                if not f.has(".mbarrier::complete_tx::bytes"):
                    return None            # (st.async without an mbarrier: "Vector operand is not allowed")
                if len(slot.types) == 1 and slot.types[0].kind == "b":
                    return "bits"
            return mode
    return None


def _whole_vector(o: OperandInfo, s: Slot, f: Form, pos: str, title: str
                  ) -> Tuple[OperandInfo, Optional[Diagnostic]]:
    """Whole vector register `o` in slot `s`: what the slot sees of it (a vector of its elements, one register of
    its elements' type or one value of its size), or why ptxas 13.0 refuses it there."""
    n, t = o.whole, o.type
    rule = f.rule
    name = f".v{n} .{t.name if t is not None else '?'}"
    if VEC in s.kinds:
        if rule.startswith(_WHOLE_NONE) or (rule.startswith("tex") and s.name == "d" and s.count == 2 and
                                           any(x.name == "f16x2" for x in s.types)):
            return o, _diag(CODE_OPERANDS, f"{title}: {pos} is a {name} vector register; ptxas 13.0 takes none "
                                           "here", (f"name its elements: {{%v.x, %v.y{', ...' if n > 2 else ''}}}",))
        if n == s.count or (s.counts and n in s.counts):
            return OperandInfo(VEC, count=n, elems=(t,) * n, whole=n), None
        if s.count == 1 and rule.startswith(_ANY_LENGTH):
            return OperandInfo(VEC, count=1, elems=(None,), whole=n), None      # (of any type too)
        if REG not in s.kinds:
            n_txt = describe_ints(s.counts) if s.counts else str(s.count)
            return o, _diag(CODE_OPERANDS, f"{title}: {pos} is a {name} vector register; it takes a vector of "
                                           f"{n_txt}", ("ptxas 13.0: \"Argument vector size mismatch\"",))
    mode = _whole_scalar_mode(f, s) if REG in s.kinds else None
    if mode == "bits" and t is not None:
        return replace(o, type=get_type(f"b{n * t.bits}")), None
    if mode == "elem":
        return o, None
    if REG in s.kinds:
        return o, _diag(CODE_OPERANDS, f"{title}: {pos} is a {name} vector register; it takes one register",
                        ("name one element (%v.x), or mov the vector's bits into a register of its size",))
    return o, None


def _whole_vector_targets(f: Form, name: str) -> Sequence[Tuple[int, int]]:
    """The sm ranges [lo, hi) at which fragment `name` of tensor-core form `f` takes a whole vector register: all but
    where ptxas 13.0 expands the instruction into code of its own (as for .pred registers, _pred_targets), which
    crashes on one (a segmentation fault): .b1 from
    sm_90 on (from sm_100 on with .and), .s4/.u4 from sm_90 on, .e4m3/.e5m2 on sm_90 to sm_110 (with .kind::f8f6f4 on
    sm_100 to sm_110), the .f16 m8n8k4 from sm_80 on, m8n8k16's .s32 C and D and the .f64 m16n8k* fragments from
    sm_100 on."""
    rule = f.rule
    if rule in ("mma_b1", "mma_i4"):
        return _pred_targets(f, "a", f.fields["atype"][1:])    # (the same expansion refuses .pred there)
    if rule == "mma_fp8":
        return ((0, 90), (120, _INF))
    if rule in ("mma_kind_fp8", "mma_sp_kind_fp8"):
        return ((0, 100), (120, _INF))
    if rule == "mma_m8n8k4_f16":
        return ((0, 80),)
    if rule == "mma_i8" and f.has(".m8n8k16") and name in ("c", "d"):
        return ((0, 100),)
    if rule == "mma_f64" and not f.has(".m8n8k4"):
        return ((0, 100),)
    return _ALWAYS


def _whole_vector_gate(f: Form, ops: Sequence[OperandInfo], slots: Sequence[Slot], target: Target
                       ) -> List[Tuple[str, str]]:
    """A whole vector register in a tensor-core fragment at a target where ptxas 13.0 expands the instruction into
    code of its own, where it crashes on it (_whole_vector_targets); and from sm_120 on, in cp.async.bulk's ctaMask and in
    the coordinates and im2col offsets of cp.async.bulk.tensor into .shared::cluster (as _im2col_sm120_gate's), where
    ptxas moves them with code of its own too ("Argument vector size mismatch for instruction 'mov'", or a crash)."""
    if f.rule in ("cp_async_bulk_g2s", "cp_async_bulk_tensor_g2s", "cp_async_bulk_tensor_g2s_im2col") and \
            target.sm >= 120:
        for k, (o, s) in enumerate(zip(ops, slots)):
            if o.whole and (s.name in ("ctaMask", "im2colOffsets") or o.kind == TENSOR):
                return [(CODE_OPERANDS, f"operand {k + 1} ({s.name}) is a .v{o.whole} vector register; ptxas 13.0 "
                                        f"takes one here below sm_120, not for {target}, where it moves the operand "
                                        "with code of its own that refuses it")]
    if not f.rule.startswith("mma"):
        return []
    for k, (o, s) in enumerate(zip(ops, slots)):
        if o.whole and o.kind == VEC:
            ranges = _whole_vector_targets(f, s.name)
            if not any(lo <= target.sm < hi for lo, hi in ranges):
                at = " and ".join(_sm_range_text(lo, hi) for lo, hi in ranges)
                return [(CODE_OPERANDS, f"operand {k + 1} ({s.name}) is a .v{o.whole} vector register; ptxas 13.0 "
                                        f"takes one here {at}, not for {target}, where it expands the instruction "
                                        "into code of its own and crashes on it (a segmentation fault; name its "
                                        "elements {%v.x, %v.y, ...})")]
    return []


def whole_vector_crash(opcode: str, operands: Sequence[OperandInfo]) -> Optional[str]:
    """Where ptxas 13.0 takes a whole vector register (OperandInfo.whole) in its checks (-arch=compute_XY) and then
    crashes generating code for it (a segmentation fault at -arch=sm_XY): wgmma.mma_async's D, which it reads too, and
    tex's and tld4's gradients, offsets and depth compare. The operand's position and name, else None. The linter asks
    this of instructions that legality.check takes."""
    f = parse(opcode)
    if f is None or not any(o.whole for o in operands):
        return None
    fam = f.rule.startswith("wgmma")
    tex = f.rule.startswith(("tex", "tld4"))
    bulk = not f.rule.startswith(("tex", "tld4", "su"))
    _, slots, diags, _ = _bind(opcode, operands)
    if diags:
        return None
    for k, (o, s) in enumerate(zip(operands, slots)):
        if o.whole and (fam and s.name == "d" or tex and s.name in ("e", "dPdx", "dPdy") or bulk and o.kind == TENSOR):
            return f"operand {k + 1} ({s.name})"
    return None


def _literal_first_typing(o: OperandInfo):
    """How ptxas 13.0 types vector `o` that starts with a literal: (kinds, the index j of the element that types it,
    that element's width, its words) or a str (why its neighbours are refused), None where an element is not known.
    ptxas does not check such a vector element by element, as one that starts with a register: it types it by its
    last element whose width differs from the first literal's (0f: 32 bits; 0d, decimal and integer literals: 64),
    or by the literal where none does; no two neighbours mix integer, floating-point, packed and .pred elements, as
    in any vector; one width is not asked."""
    decl = o.decl or o.elems
    widths, kinds = [], []
    for i, e in enumerate(decl):
        lit = o.lits[i]
        if lit == "i":
            widths.append(64)
        elif lit == "f":
            widths.append(64 if i in o.lits64 else 32)
        elif e is not None:
            widths.append(vector_bits(e))
        else:
            return None
        kinds.append(lit or VECTOR_KIND.get(e.kind))
    k = clashing_neighbour(kinds)
    if k is not None:
        return _mixed_neighbours(o, decl, k)
    j = next((i for i in range(len(widths) - 1, 0, -1) if widths[i] != widths[0]), 0)
    by = f"the literal {j + 1}" if o.lits[j] else f"its .{decl[j].name} element {j + 1}"
    return kinds, j, widths[j], by


def literal_first_problem(o: OperandInfo, t: Type, wider: bool = False, int_f32: bool = True) -> Optional[str]:
    """The problem ptxas 13.0 finds in vector `o` that starts with a literal, written as a .`t` value, or None: st's
    data (`wider`: a .uN/.sN access takes wider elements; lint's core check asks this) and st.async's value (_match).
    The vector is typed by one element (_literal_first_typing). After a floating-point literal a .bN value needs
    that element to be N bits wide, a .uN/.sN one N bits (st: or more) and not floating-point values only, an
    .f32/.f64 one nothing; after an integer literal none needs anything but .f32 (64-bit integer values only are
    refused; `int_f32` False: mov.vN's source, which takes those too). So st.v2.b32 {0f3F800000, %rd1} is refused and
    {%rd1, 0f3F800000} taken (tests/test_lint_vector_mix.py: 8,800 st and 1,218 st.async lines of every type, and
    1,769 mov.vN lines, exact)."""
    typed = _literal_first_typing(o)
    if typed is None or isinstance(typed, str):
        return typed
    kinds, j, w, by = typed
    if o.lits[0] == "f":
        short = w < t.bits if wider and t.kind != "b" else w != t.bits
        if t.kind in ("b", "u", "s") and short:
            more = " or more" if wider and t.kind != "b" else ""
            return f"is typed by {by}, {w} bits wide ({_LITERAL_FIRST}); .{t.name} needs {t.bits}{more}"
        if t.kind in ("u", "s") and j == 0 and set(kinds) == {"f"}:
            return f"holds floating-point values only ({_LITERAL_FIRST}); .{t.name} takes none"
    elif int_f32 and t.name == "f32" and j == 0 and set(kinds) == {"i"}:
        return f"holds 64-bit integer values only ({_LITERAL_FIRST}); .f32 takes none"
    return None


def pack_literal_first_problem(o: OperandInfo, part: int) -> Optional[str]:
    """The problem ptxas 13.0 finds in mov's pack `o` (mov.bN d, {...}) that starts with a literal, whose parts are
    `part` bits, or None. The pack is typed by one element (_literal_first_typing): after an integer literal any
    widths are taken, after a floating-point one that element must be `part` bits wide. So mov.b32 %r1, {0, %rd1}
    is taken and mov.b32 %r1, {0f3F800000, %r2} refused (tests/test_lint_pack.py)."""
    typed = _literal_first_typing(o)
    if typed is None or isinstance(typed, str):
        return typed
    _, _, w, by = typed
    if o.lits[0] == "f" and w != part:
        return f"is typed by {by}, {w} bits wide ({_LITERAL_FIRST}); each part is {part} bits"
    return None


def coordinates_literal_first_problem(o: OperandInfo) -> Optional[str]:
    """The problem ptxas 13.0 finds in a tensor's coordinates `o` (cp.async.bulk.tensor and its kin: .s32 values)
    that start with a literal among registers and are not uniform (uniform_vector: typed by the form), or None: they
    are typed by one element (_literal_first_typing), which must be 32 bits wide whatever the first literal, but
    that typed by an integer literal they may hold .s64 registers (no .b64 or .u64 one); no width is asked of the
    others. So [tmap, {0, %rd1, %r2}] and [tmap, {0, %sd1}] are taken and [tmap, {0, %rd1}] refused
    (tests/test_lint_vector_mix.py)."""
    typed = _literal_first_typing(o)
    if typed is None or isinstance(typed, str):
        return typed
    _, j, w, by = typed
    regs = [e for e, lit in zip(o.decl or o.elems, o.lits) if lit is None]
    if w != 32 and not (o.lits[0] == "i" and j == 0 and all(e is not None and e.kind == "s" for e in regs)):
        # (typed by an integer literal, the vector is a 64-bit signed value, which .s64 registers fit)
        return f"is typed by {by}, {w} bits wide ({_LITERAL_FIRST}); the coordinates are .s32, 32 bits"
    return None


def _mixed_neighbours(o: OperandInfo, decl: Sequence[Optional[Type]], j: int) -> str:
    """Why vector `o` is refused whose elements j - 1 and j mix kinds (types.clashing_neighbour)."""
    what = [f"a .{decl[i].name} register" if decl[i] is not None else
            f"{'an integer' if o.lits[i] == 'i' else 'a floating-point'} literal" for i in (j - 1, j)]
    return (f"has {what[0]} and {what[1]} side by side; ptxas 13.0 takes no vector whose neighbours mix integer, "
            "floating-point, packed and .pred elements")


_LITERAL_FIRST = ("ptxas 13.0 types a vector that starts with a literal by its last element of another width than "
                  "the literal, or by the literal")


def _match(sig: Signature, ops: Sequence[OperandInfo], title: str, form: Optional[Form] = None
           ) -> Tuple[List[Diagnostic], List[Slot], Sequence[OperandInfo]]:
    """(problems, the slot of each operand, the operands as the slots see them: a whole vector register as a vector
    or as one register, _whole_vector)."""
    slots = _assign(sig, len(ops))
    if slots is None:
        names = ", ".join(s.name + ("?" if s.optional else "") for s in sig.slots) or "no operands"
        lo, hi = sig.required, len(sig.slots)
        count = str(lo) if lo == hi else f"{lo} to {hi}"
        via = f" ({sig.name})" if sig.name else ""
        return [_diag(CODE_OPERANDS, f"{title}{via} takes {count} operand{'s' if hi != 1 else ''} ({names}), "
                                     f"{len(ops)} given")], [], ops
    out = []
    where = {}
    seen = ops
    for k, (s, o) in enumerate(zip(slots, ops)):
        where[s.name] = k
        pos = f"operand {k + 1} ({s.name})"
        if o.whole and o.kind == REG and form is not None:
            o, bad = _whole_vector(o, s, form, pos, title)
            if seen is ops:
                seen = list(ops)              # (copied only for a whole vector register)
            seen[k] = o
            if bad is not None:
                out.append(bad)
                continue
        if o.kind not in s.kinds:
            out.append(_diag(CODE_OPERANDS, f"{title}: {pos} must be {s.text()}, not {_KIND_TEXT.get(o.kind, o.kind)}"))
            continue
        if o.special and (o.kind == REG or o.kind == ADDR and s.no_special):
            # ptxas 13.0, every instruction of these families: "Special register argument not allowed" (an element
            # of a vector {...} may be one; tests/test_legality_ptxas.py probes both)
            what = "is a special register" if o.kind == REG else "has a special register as its base"
            out.append(_diag(CODE_OPERANDS, f"{title}: {pos} {what}, which ptxas 13.0 does not take here",
                             ("mov it into a register first" + (" (an element of a vector {...} may be one)"
                                                                 if o.kind == REG else ""),)))
            continue
        if (o.kind == TENSOR or o.kind == ADDR) and (s.handles is not None or o.kind == TENSOR):
            bad = _handles_problem(s, o, pos, title)
            if bad is not None:
                out.append(bad)
                continue
        if o.kind == VEC or o.kind == TENSOR:
            if o.count != s.count and not o.bare and (s.counts is None or o.count not in s.counts):
                unit = "coordinates" if o.kind == TENSOR else "registers"
                n = describe_ints(s.counts) if s.counts else str(s.count)
                out.append(_diag(CODE_OPERANDS, f"{title}: {pos} takes {n} {unit}, {o.count} given"))
                continue
            decl = o.decl or o.elems
            if o.kind == VEC and o.lits and o.lits[0] is not None and form is not None and form.rule == "st_async":
                bad = literal_first_problem(o, s.types[0])
                if bad:
                    out.append(_diag(CODE_TYPE, f"{title}: {pos} {bad}"))
                continue
            if o.kind == VEC and o.lits and o.lits[0] is not None and form is not None and not all(o.lits) \
                    and form.rule in ("multimem_st", "multimem_red") and not _mm_by_form(o):
                continue        # typed by one of its elements: _multimem_literal_first, its cross's
            if o.kind == VEC and s.name == "im2colOffsets" and o.lits and o.lits[0] is not None:
                # typed by one of its elements as a pack of 16-bit parts is (pack_literal_first_problem); of
                # literals only, integer ones only
                bad = ("is a vector of literals with a floating-point one; ptxas 13.0 takes integer literals only "
                       "in a vector of literals here") if all(o.lits) and "f" in o.lits else \
                    None if all(o.lits) else pack_literal_first_problem(o, 16)
                if bad:
                    out.append(_diag(CODE_TYPE, f"{title}: {pos} {bad}"))
                continue
            if o.kind == VEC and s.loose and len({e.name for e in decl if e is not None}) > 1:
                # a tex vector of several register types: one width (see _TEX_MIXED)
                bits = {t.bits for t in s.types}
                for e in o.elems:
                    if e is not None and e.bits not in bits:
                        out.append(_diag(CODE_TYPE, f"{title}: {pos} holds .{e.name} registers; "
                                                    f".{'/.'.join(t.name for t in s.types)} expected"))
                        break
            elif o.kind == TENSOR and not s.loose and o.lits and o.lits[0] is not None and not all(o.lits) \
                    and not uniform_vector(o) and not (form is not None and form.rule.startswith(_TEX_RULES)):
                bad = coordinates_literal_first_problem(o)
                if bad:
                    out.append(_diag(CODE_TYPE, f"{title}: {pos} {bad}"))
            elif (o.kind == VEC or o.kind == TENSOR and not s.loose) and not uniform_vector(o):
                # registers declared with several types, or registers and literals but for .f32 ones with 0f
                # literals and .f64 ones with 0d literals: ptxas 13.0 types such a vector by its elements, as it
                # types ld/st vectors, not each element by the form; it takes any whose registers have one width
                # (a .pred one counts as 32 bits) and whose neighbours do not mix kinds (types.clashing_neighbour)
                # (the literal coordinates of a texture's array geometry are not checked as neighbours, nor its
                # array index: an integer index before .f32 coordinates)
                tex = o.kind == TENSOR and form is not None and form.rule.startswith(("tex", "tld4")) \
                    and form.fields.get("geom") in _TEX_ARRAYS
                kinds = [VECTOR_KIND.get(e.kind) if e is not None else None if tex else lit or None
                         for e, lit in zip(decl, o.lits or (None,) * o.count)]
                if tex:
                    kinds[0] = None     # (a texture's array index is typed apart: _coords_cross)
                bits = {vector_bits(t) for t in s.types}
                j = clashing_neighbour(kinds)
                if bits and any(e is not None and vector_bits(e) not in bits for e in decl):
                    out.append(_diag(CODE_TYPE, f"{title}: {pos} holds registers of another width; "
                                                f"{'/'.join(str(b) for b in sorted(bits))}-bit expected"))
                elif j is not None:
                    out.append(_diag(CODE_TYPE, f"{title}: {pos} {_mixed_neighbours(o, decl, j)}",
                                     ("a .bN register stands next to any",)))
            else:
                for e in o.elems:
                    if not _type_ok(e, s):
                        out.append(_diag(CODE_TYPE, f"{title}: {pos} holds .{e.name} registers; "
                                                    f".{'/.'.join(t.name for t in s.types)} expected"))
                        break
            if o.kind == VEC and s.fragment and s.role != "dst" and o.lits and all(o.lits):
                bad = _literal_fragment_problem(o, s)
                if bad:
                    out.append(_diag(CODE_TYPE, f"{title}: {pos} {bad}"))
                    continue
            elif (o.kind == VEC or o.kind == TENSOR) and not s.loose and s.types and s.role != "dst" and o.lits \
                    and all(o.lits):
                bad = _literal_vector_problem(o, s)
                if bad:
                    out.append(_diag(CODE_TYPE, f"{title}: {pos} {bad}"))
                    continue
            if o.kind == VEC and any(o.lits) and s.role == "dst":
                # ptxas 13.0: "Result register required" for a literal in a written vector (in a read one the
                # literals' neighbours are checked above)
                out.append(_diag(CODE_OPERANDS, f"{title}: {pos} is written; each element must be a register, "
                                                "not a literal"))
        if (o.kind == ADDR or o.kind == TENSOR) and o.space is not None and s.spaces is not None \
                and o.space not in s.spaces:
            want = "/".join("." + x for x in sorted(s.spaces))
            note = ("put the map's generic address in a register first (cvta)" if o.kind == TENSOR else
                    f"name a {want} variable, or put the generic address in a register (cvta)")
            out.append(_diag(CODE_OPERANDS, f"{title}: {pos} names a .{o.space} variable; it takes {want} "
                                            "variables only", (note,)))
        elif o.kind == REG:
            if not _type_ok(o.type, s):
                out.append(_diag(CODE_TYPE, f"{title}: {pos} is a .{o.type.name} register; "
                                            f".{'/.'.join(t.name for t in s.types)} expected"))
        elif o.kind == IMM and s.loose:
            pass
        elif o.kind == IMM:
            float_slot = bool(s.types) and all(t.kind == "f" for t in s.types)
            if o.floating:
                # ptxas: a float literal where the operand is floating-point (st.async .f32's value), or a
                # literal of its width (type: .f32 for 0f, .f64 for 0d and decimal) as the bits of a
                # bit type where the slot says so (st.async .b32's value)
                bits = [t for t in s.types if t.kind == "b" and t.bits in (32, 64)] if s.float_bits else []
                if not float_slot and not (o.type is not None and any(t.bits == o.type.bits for t in bits)):
                    what = f".{'/.'.join(t.name for t in s.types)}" if s.types else "an integer"
                    note = (f"for the bits of a .{bits[0].name}, write a {'0f' if bits[0].bits == 32 else '0d'} "
                            "hex literal" if bits else "write an integer literal")
                    out.append(_diag(CODE_TYPE, f"{title}: {pos} is a floating-point literal; {what} expected",
                                     (note,)))
            elif (o.value is not None and float_slot and not isinstance(o.value, bool)):
                # ptxas takes only a float literal (0f3F800000, 1.0) for a floating-point operand
                out.append(_diag(CODE_TYPE, f"{title}: {pos} is the integer literal {o.value}; "
                                            f"a .{s.types[0].name} value is expected",
                                 (f"write it as a float literal, e.g. {Imm(float(o.value), s.types[0])}",)))
            elif s.values is not None and o.value is not None and o.value not in s.values:
                out.append(_diag(CODE_OPERANDS, f"{title}: {pos} must be {describe_ints(s.values)}, not {o.value}",
                                 (_nearest_text(s.values, o.value),)))
    if not out and sig.cross is not None:
        out.extend(_diag(c, f"{title}: {m}") for c, m in sig.cross(seen, where))
    return out, slots, seen


def bind(opcode: str, operands: Sequence[OperandInfo]) -> Tuple[Optional[Signature], List[Slot], List[Diagnostic]]:
    """Match operands with the best operand list of a legal opcode: (signature, slot per operand, problems)."""
    return _bind(opcode, operands)[:3]


def _bind(opcode: str, operands: Sequence[OperandInfo]
          ) -> Tuple[Optional[Signature], List[Slot], List[Diagnostic], Sequence[OperandInfo]]:
    """bind(), and the operands as the chosen operand list sees them (_match)."""
    f = parse(opcode)
    if f is None:
        raise UsageError(f"{opcode!r} is not a legal spelling; check() says why")
    title = FORMS[f.rule].title
    best = None
    for sig in _signatures(f):
        diags, slots, seen = _match(sig, operands, title, f)
        key = (not slots, len(diags))
        if best is None or key < best[0]:
            best = (key, sig, slots, diags, seen)
        if not diags:
            break
    _, sig, slots, diags, seen = best
    if diags and len(_signatures(f)) > 1 and not slots:
        # no operand list fits by count: say what each takes
        alts = []
        for s in _signatures(f):
            n = str(s.required) if s.required == len(s.slots) else f"{s.required} to {len(s.slots)}"
            names = ", ".join(x.name + ("?" if x.optional else "") for x in s.slots)
            alts.append(f"{n} ({names}) with {s.name}")
        diags = [_diag(CODE_OPERANDS, f"{title} takes {' or '.join(alts)}; {len(operands)} operands given")]
    return sig, slots, diags, seen


def check(opcode: str, operands: Optional[Sequence[OperandInfo]] = None, target=None, version=None
          ) -> List[Diagnostic]:
    """Diagnostics for one instruction of the covered families; [] when it is legal.

    `operands` (OperandInfo list; None: not checked), `target` (Target or 'sm_90a'; None: not checked) and
    `version` ((8, 0) or '8.0'; None: not checked). Opcode results are cached per distinct string.
    """
    f, diags = _opcode_diags(opcode)
    if f is None:
        return list(diags)
    out: List[Diagnostic] = []
    present: Sequence[Slot] = ()
    target = _as_target(target)
    if operands is not None:
        sig, slots, od, seen = _bind(opcode, operands)
        out.extend(od)
        present = [s for s in slots if s.optional or s.need is not None]
        if not od and target is not None:
            title = FORMS[f.rule].title
            where = {s.name: k for k, s in enumerate(slots)}
            if sig.gate is not None:
                out.extend(_diag(c, f"{title}: {m}") for c, m in sig.gate(seen, where, target))
            out.extend(_diag(c, f"{title}: {m}") for c, m in _whole_vector_gate(f, seen, slots, target))
    # a malformed operand list first: a target message about an operand that is not there misleads
    return out + _gate(opcode, f, target, _as_version(version), present)


_VEC_ONLY = frozenset((VEC,))


def fragment_regs(opcode: str) -> Dict[str, Tuple[int, Type]]:
    """{operand: (register count, register type)} of the vector operands of a legal opcode.

    `mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32` -> {'d': (4, f32), 'a': (4, bf16x2),
    'b': (2, bf16x2), 'c': (4, f32)}; for wgmma, 'a' is the register-A fragment.
    """
    out: Dict[str, Tuple[int, Type]] = {}
    for sig in signatures(opcode):
        for s in sig.slots:
            # (vectors only: not mma.sp's metadata e, a register that ptxas also takes in braces, nor the
            # block-scaled forms' {byte-id, thread-id} pairs)
            if s.kinds == _VEC_ONLY and s.name not in out and s.name not in _SCALE_ID_NAMES:
                out[s.name] = (s.count, s.types[0])
    return out


# ---------------------------------------------------------------------------------------------- literals
# Numbers as ptxas 13.0 reads them. An integer literal (decimal, 0x hexadecimal, 0b binary or 0 octal, with a U
# or not) is read digit by digit into 64 bits, modulo 2^64; a digit that comes while the value read so far has
# its top bit set is "Constant overflow". So every value up to 2^64 - 1 reads as written, and past it some
# literals read modulo 2^64 (18446744073709551616 is 0, 50000000000000000000 is 13106511852580896768) and
# others are refused (99999999999999999999: its first 19 digits are past 2^63); a minus sign before the literal
# changes nothing of that. A decimal floating-point literal is read as C's strtod reads it: "Constant overflow"
# where its value is past the largest finite .f64, or below the smallest normal one (2^-1022) once rounded to 53
# bits and not exactly a subnormal .f64 (5e-324, 1e-310, 2.2250738585072012e-308); 0.0 and 0e400 are not.
# A number that a directive or declaration reads as 32 bits (.align, a register count `%r<N>`, .maxntid,
# .reqntid, .maxnreg, .minnctapersm, .maxclusterrank, .reqnctapercluster, .loc, .file's index, .address_size)
# is its literal's 64-bit value: "Constant overflow" where that is above 0xFFFFFFFF as a signed 64-bit integer,
# else its low 32 bits (0xFFFFFFFF00000040 and 18446744073709551680 are 64).
_M64 = (1 << 64) - 1
_U32_MAX = 0xFFFFFFFF


def _int_digits(text: str) -> Tuple[int, str]:
    """(base, digits) of an integer literal's text: `0x1F` is (16, '1F'), `017U` (8, '17'), `12` (10, '12')."""
    t = text[:-1] if text[-1:] in "uU" else text
    if len(t) > 1 and t[0] == "0":
        c = t[1]
        if c in "xX":
            return 16, t[2:]
        if c in "bB":
            return 2, t[2:]
        return 8, t[1:]
    return 10, t


def int_literal_overflows(text: str) -> bool:
    """Whether ptxas 13.0 refuses the integer literal `text` (`12`, `0x1F`, `0b101`, `017`, with a U or not) with
    "Constant overflow": a digit comes while the value read so far, modulo 2^64, has its top bit set."""
    if len(text) <= 18:  # 18 digits of any base are below 2^63 before the last one
        return False
    base, digits = _int_digits(text)
    x = 0
    for ch in digits:
        if x >> 63:
            return True
        x = (x * base + int(ch, base)) & _M64
    return False


def _shown(text: str) -> str:
    return text if len(text) <= 32 else f"{text[:24]}...({len(text)} characters)"


def int_literal_error(text: str) -> Optional[Tuple[str, str]]:
    """(message, note) where ptxas 13.0 refuses the integer literal `text` ("Constant overflow"), else None."""
    if not int_literal_overflows(text):
        return None
    base, digits = _int_digits(text)
    low = int(digits, base) & _M64
    return (f"integer literal {_shown(text)} does not fit in 64 bits (ptxas: \"Constant overflow\")",
            f"an integer literal is at most 18446744073709551615 (0xFFFFFFFFFFFFFFFF); its low 64 bits are 0x{low:X}")


_DBL_MIN = 2.0 ** -1022


def float_literal_error(text: str) -> Optional[Tuple[str, str]]:
    """(message, note) where ptxas 13.0 refuses the decimal floating-point literal `text` (`1.5`, `1e400`) as out
    of the range of .f64 ("Constant overflow"), else None."""
    try:
        x = float(text)
    except ValueError:
        return None
    if math.isinf(x):
        return (f"{_shown(text)} is past the largest finite .f64, 1.7976931348623157e308 (ptxas: \"Constant "
                "overflow\")", "write the largest finite value, or an infinity by its bits: 0d7FF0000000000000 "
                "(.f64), 0f7F800000 (.f32)")
    if abs(x) > _DBL_MIN:
        return None
    mantissa = text.lower().split("e", 1)[0]
    if x == 0.0 and not mantissa.strip("0."):
        return None  # zero, whatever its exponent
    exact = Fraction(Decimal(text))
    # tiny: below the smallest normal .f64 once rounded to 53 bits with an unbounded exponent (half way rounds
    # to the even DBL_MIN); inexact: not exactly the .f64 it reads as
    tiny = abs(exact) < Fraction(_DBL_MIN) - Fraction(1, 1 << 1076)
    if not tiny or Fraction(x) == exact:
        return None
    bits = struct.unpack("<Q", struct.pack("<d", x))[0]
    return (f"{_shown(text)} is below the smallest normal .f64, 2.2250738585072014e-308 (ptxas: \"Constant "
            "overflow\")", f"write the value it rounds to by its bits: 0d{bits:016X}" if x else "write 0.0")


def u32_field(value: int) -> Optional[int]:
    """The number ptxas 13.0 reads where a directive or declaration takes 32 bits (.align, `%r<N>`, .maxntid,
    .loc, ...) and the literal there reads as `value` (int_literal_overflows being false): its low 32 bits, or None
    where that is "Constant overflow" (above 0xFFFFFFFF as a signed 64-bit integer)."""
    v = value & _M64
    if _U32_MAX < v < 1 << 63:
        return None
    return v & _U32_MAX


def u32_field_error(value: int, what: str) -> Optional[Tuple[str, str]]:
    """(message, note) where `value` in a place that takes 32 bits (`what`: '.align', '.maxntid', 'a register
    count', ...) is "Constant overflow" for ptxas 13.0 (u32_field), else None."""
    if u32_field(value) is not None:
        return None
    return (f"{what} {value} does not fit in 32 bits (ptxas: \"Constant overflow\")",
            f"{what} is read as 32 bits: give at most 4294967295 (0xFFFFFFFF)")


def int64_value_error(value: int, what: str) -> Optional[Tuple[str, str]]:
    """(message, note) where the integer `value`, written as a decimal literal (`what`: 'initial value 7 of g',
    'offset', ...), is not what ptxas 13.0 reads: outside -2^63 .. 2^64 - 1 it reads it modulo 2^64 or refuses it
    ("Constant overflow"); else None."""
    if -(1 << 63) <= value <= _M64:
        return None
    said = "refuses it (\"Constant overflow\")" if int_literal_overflows(str(abs(value))) else \
        f"reads it as {value & _M64}"
    return (f"{what} {value} does not fit in 64 bits: ptxas {said}",
            "give a value from -9223372036854775808 to 18446744073709551615")


_PARAM_ALIGN_MAX = 128


def align_error(align: int, param: bool = False) -> Optional[Tuple[str, str]]:
    """(message, note) where ptxas 13.0 refuses `.align align`, else None: a power of two of at most 32 bits
    ("Alignment must be a power of two", "Constant overflow"); `param`: of a .param a function body declares or
    a .func definition's parameter, at most 128 ("Parameter 'x' has illegal alignment"; a kernel's parameters,
    .func declarations' and prototypes' take more)."""
    bad = u32_field_error(align, ".align") if align > _U32_MAX else None
    if bad is not None:
        return bad
    if align <= 0 or align & (align - 1):
        low = 1 << max(align, 1).bit_length() - 1
        return (f".align {align} is not a power of two (ptxas: \"Alignment must be a power of two\")",
                f"write .align {low}" + (f" or .align {low * 2}" if low * 2 <= 1 << 31 else "") if align > 0 else
                "write .align 1 or more, a power of two")
    if param and align > _PARAM_ALIGN_MAX:
        return (f".align {align} for a parameter: ptxas takes 1, 2, 4, 8, 16, 32, 64 or 128 (ptxas: \"Parameter has "
                "illegal alignment\")", "write .align 128 at most; a kernel's parameters take more")
    return None


# ------------------------------------------------------------------------------------------ declarations
# types that only instructions name, with the type that holds their bits. ptxas 13.0 (sm_90a, sm_100a and
# sm_120a alike) reads the first ones as a syntax error in any declaration; the fp8, fp6 and fp4 ones of
# INSTRUCTION_ONLY_ALLOCATED in every declaration it allocates ("Type .e4m3 may only be used as an
# instruction type"): a variable of any state space, a parameter or return value of a function
# definition, .param or .reg, and an array of them crashes it. A parameter of a function declaration or a
# .callprototype takes them, and so does a .param array parameter or return value of a .func definition
# (but no call passes one an argument). Used by the builder (parameters) and the parser (every declaration).
# The packed integer and .f32x2 types (.u16x2, .s16x2, .f32x2) are refused as the fp8 ones are.
# .e2m1x4, .e2m3x4, .e3m2x4 and .ue8m0x4 (the x4 types of cvt.rs) ptxas 13.0 reads as types and takes where
# the fp8 ones are taken, but every declaration of them it allocates crashes it (a segmentation fault, no
# message) when it compiles the declaration, at every target and PTX ISA version (8.6 to 9.0 at sm_90a,
# sm_100a, sm_103a, sm_110a and sm_120a); a scalar .param one is refused first ("cannot be allocated in .param
# state space"), and so are a vector of them and an initial value ("Initial value type mismatch"). Whole-
# program ptxas leaves a .func no kernel reaches and a .shared variable no kernel uses uncompiled, and so
# takes them there; `ptxas -c` compiles every function and variable and crashes on those too.
_INSTRUCTION_ONLY = {"bf16": "b16", "bf16x2": "b32", "tf32": "b32", "e2m3": "b8", "e3m2": "b8", "e2m1": "b8",
                     "ue8m0": "b8", "ue4m3": "b8", "s2f6x2": "b16"}
INSTRUCTION_ONLY_ALLOCATED = {"e4m3": "b8", "e5m2": "b8", "e4m3x2": "b16", "e5m2x2": "b16", "e2m3x2": "b16",
                              "e3m2x2": "b16", "e2m1x2": "b8", "ue8m0x2": "b16", "e4m3x4": "b32", "e5m2x4": "b32",
                              "u16x2": "b32", "s16x2": "b32", "f32x2": "b64", "e2m1x4": "b16", "e2m3x4": "b32",
                              "e3m2x4": "b32", "ue8m0x4": "b32"}
_CRASHES_ALLOCATED = frozenset(("e2m1x4", "e2m3x4", "e3m2x4", "ue8m0x4"))


# the PTX ISA version the .b128 type needs, in a declaration and as an instruction type (ptxas 13.0: "Feature 'Type
# .b128' requires PTX ISA .version 8.3 or later", "Feature 'Instruction type .b128 for instruction ld' ...")
B128_VERSION = (8, 3)


def declared_type_version(name: Optional[str], scalar: bool, version) -> Optional[Tuple[str, str]]:
    """(message, note) where a declaration of type `name` (without its dot) needs a later PTX ISA than `version`,
    else None: a .b128 variable, parameter or register before PTX ISA 8.3. ptxas 13.0 asks it of a declaration that
    names a scalar (`scalar`), not of one of arrays only (`.shared .b128 s[4];` it takes at 8.2)."""
    if name != "b128" or not scalar or version is None or tuple(version) >= B128_VERSION:
        return None
    need, have = version_str(B128_VERSION), version_str(tuple(version))
    return (f".b128 needs PTX ISA {need} (module .version is {have}; ptxas: \"Feature 'Type .b128' requires PTX "
            f"ISA .version {need} or later\")", f"write .version {need} or later")


def undeclarable_type(name: Optional[str], space: str, allocated: bool = True) -> Optional[Tuple[str, str]]:
    """(message, note) where a declaration in `space` ('reg', 'param', 'shared', ...) cannot have the type
    `name` (without its dot), else None: a type only instructions take (above), or .pred anywhere ptxas 13.0
    allocates it but a register ("Predicate variable 'p' must be in register state space"). `allocated`: a
    variable, or a parameter of a function definition (not of a declaration or .callprototype)."""
    n = name or ""
    if n == "pred":
        if space == "reg" or not allocated:
            return None
        if space == "param":
            return ("a .param cannot be .pred: a predicate lives in a register (ptxas: \"Predicate variable must be "
                    "in register space\")", "declare it .param .b32 (selp.u32 in, setp.ne.u32 out), or .reg .pred as "
                                             "a parameter of a .func")
        return (f"a .{space} variable cannot be .pred: a predicate lives in a register (ptxas: \"Predicate variable "
                "must be in register state space\")", "declare it .reg .pred, or keep the value in memory as .b8 "
                                                       "(selp.u16 in, setp.ne.u16 out)")
    holder = _INSTRUCTION_ONLY.get(n)
    if holder is None and allocated:
        holder = INSTRUCTION_ONLY_ALLOCATED.get(n)
    if holder is None:
        return None
    why = (" (ptxas: syntax error)" if n in _INSTRUCTION_ONLY else
           " (ptxas 13.0: \"cannot be allocated in .param state space\", or a crash for an array)"
           if n in _CRASHES_ALLOCATED and space == "param" else
           " (ptxas 13.0 crashes on it: a segmentation fault, at every target)" if n in _CRASHES_ALLOCATED else
           f" (ptxas: \"Type .{n} may only be used as an instruction type\")")
    return (f".{n} is an instruction type only; a .{space} declaration cannot have it{why}",
            f"write .{holder} instead: .{n} values live in .{holder} {'registers' if space == 'reg' else 'variables'}")


# vectors in declarations, as ptxas 13.0 takes them, of registers, parameters and variables alike: .v2 or .v4
# (.v8 and .v16 are a syntax error), of at most 128 bits ("Vector type too large"), of no predicate
# ("Predicate type can only be used to define scalar register variables") and of no fp8, fp6 or fp4 type
# ("Vector type only allowed over basic types"). `what` names the declaration: 'register', 'parameter' or
# 'variable'.
def vector_error(vector: int, tname: Optional[str], what: str) -> Optional[Tuple[str, str]]:
    """(message, note) where ptxas 13.0 refuses a `.v{vector} .{tname}` declaration of a `what`, else None."""
    n, t = vector, tname or ""
    if t in INSTRUCTION_ONLY_ALLOCATED:
        return (f".v{n} .{t}: a vector of an instruction-only type (ptxas: \"Vector type only allowed over basic "
                "types\")", f"declare .v{n} .{INSTRUCTION_ONLY_ALLOCATED[t]}")
    if t in REF_TYPES:
        return (f".v{n} .{t}: a texture, sampler or surface reference is no vector element (ptxas: \"Vector type "
                "only allowed over basic types\")", f"declare a scalar .{t}, or an array of them")
    if n not in (2, 4):
        return (f".v{n} is not a vector size of a {what} (ptxas: syntax error)", f"a vector {what} is .v2 or .v4")
    if t == "pred":
        return (f".v{n} .pred: a predicate {what} cannot be a vector (ptxas: \"Predicate type can only be used to "
                "define scalar register variables\")", f"declare scalar .pred {what}s")
    try:
        bits = get_type(t).bits
    except (KeyError, ValueError):
        return None  # an opaque or unknown type: another check's
    if n * bits > 128:
        return (f".v{n} .{t} is {n * bits} bits; a vector {what} holds at most 128 (ptxas: \"Vector type too "
                "large\")", f"declare .v{128 // bits} .{t}" if bits < 128 else f"declare scalar .{t} {what}s")
    return None


# array dimensions, as ptxas 13.0 takes them. A variable's first dimension may be left out (`[]`) or 0 where
# its initializer gives the count, or for an .extern .shared array (dynamic shared memory); any other such
# variable has "incomplete type" (an .extern .global or .const one is the linker's: ptxas -c takes it, and
# whole-program ptxas reports "Unresolved extern variable"). A later dimension of 0 is "Array of incomplete
# type", a later `[]` a syntax error. A parameter takes one dimension (`x[2][2]` is a syntax error); an
# incomplete one only as the last input parameter of a .func, in .param space. No register is an array, of
# any size ("cannot be allocated into a register"): a .reg variable, or a .reg parameter of a definition (a
# declaration's or prototype's may be one). (A .pred variable of another space is undeclarable_type's.)
def _register_array(name: str, dims: Sequence[Optional[int]], tname: Optional[str], what: str) -> Tuple[str, str]:
    n = _product(dims) if dims and None not in dims and 0 not in dims else "N"
    if tname == "pred":
        return (f"{what} {name} is an array of predicates (ptxas: \"Predicate type can only be used to define "
                "scalar register variables\")", f"declare {n} scalar .pred registers: `.reg .pred {name}<{n}>`")
    if what == "parameter":
        return (f".reg parameter {name} is an array; registers cannot be (ptxas: \"Variable '{name}' cannot be "
                "allocated into a register\")", f"pass {n} scalar .reg parameters, or a .param array")
    return (f"register {name} is an array; registers cannot be (ptxas: \"Variable '{name}' cannot be allocated into "
            "a register\")", f"declare {n} registers `{name}<{n}>`, or a .local array for memory indexed at run time")


def variable_array_error(space: str, dims: Sequence[Optional[int]], name: str = "", extern: bool = False,
                         init: bool = False, tname: Optional[str] = None) -> Optional[Tuple[str, str]]:
    """(message, note) where ptxas 13.0 refuses a variable `name` of state space `space` ('global', 'shared',
    ...) and type `tname` declared with the array dimensions `dims` (None for `[]`), else None. `init`: it has
    an initializer."""
    if not dims:
        return None
    if space == "reg":
        return _register_array(name, dims, tname, "register")
    for d in dims[1:]:
        if d is None:
            return (f"only the first dimension of array {name} may be left out (ptxas: syntax error)",
                    "give every later dimension: `x[][4]`")
        if d == 0:
            return (f"array {name} has a dimension of 0 after its first (ptxas: \"Array of incomplete type\")",
                    "give every later dimension a size of at least 1")
    if dims[0] not in (None, 0) or init or extern:
        return None
    return (f"array {name} has no size (ptxas: \"Non-external variable '{name}' has incomplete type\")",
            f"give its size (`{name}[256]`) or an initializer to count it; only an .extern .shared array goes "
            "unsized (dynamic shared memory)")


def param_array_error(space: str, dims: Sequence[Optional[int]], entry: bool = False, ret: bool = False,
                      last: bool = True, name: str = "", allocated: bool = False) -> Optional[Tuple[str, str]]:
    """(message, note) where ptxas 13.0 refuses a parameter `name` of state space `space` ('param' or 'reg')
    with the array dimensions `dims` (None for `[]`), else None. `entry`: a kernel's; `ret`: a return
    parameter; `last`: the last of its list; `allocated`: a parameter of a definition (not of a declaration or
    .callprototype)."""
    if not dims:
        return None
    if len(dims) > 1:
        return (f"parameter {name} has {len(dims)} array dimensions; a parameter takes one (ptxas: syntax error)",
                f"declare it with one dimension: {name}[{_product(dims)}]" if None not in dims
                else f"declare it with one dimension: {name}[N]")
    if dims[0] not in (None, 0):
        return _register_array(name, dims, None, "parameter") if space == "reg" and allocated else None
    if space == "reg":
        why = "ptxas: \"Incomplete array parameters must be in '.param' space\""
        return (f"parameter {name} is an array of no size in .reg space ({why})",
                "an unsized array is a .param parameter: `.param .b8 x[]`")
    if entry:
        return (f"kernel parameter {name} is an array of no size (ptxas: \"Parameter to entry function cannot be "
                "an incomplete array\")", f"give its size: {name}[N]")
    if ret:
        return (f"return parameter {name} is an array of no size (ptxas: \"Output parameter cannot be an incomplete "
                "array\")", f"give its size: {name}[N]")
    if not last:
        return (f"parameter {name} is an array of no size but not the last parameter (ptxas: \"Only the last input "
                "parameter can be an incomplete array\")", "move it to the end of the list, or give its size")
    return None


# a module variable declared again, as ptxas 13.0 takes it: any number of .extern declarations and one
# definition, in any order, where each has the type, vector length and array dimensions of the first (an array
# of no size, `x[]`, of any size; a size its initializer counts is its size); else "Inconsistent redefinition of
# variable". A second definition is "Duplicate definition of variable", and a definition after an .extern
# declaration must be .visible, .weak or .common ("'.extern' variable 'x' cannot be resolved by a '.static'").
# ptxas compares neither the state spaces nor the alignments.
@dataclass(frozen=True)
class VarShape:
    """What variable_redeclaration_error compares of a module variable's declaration: its linkage ('extern',
    'visible', 'weak', 'common' or ''), type name, vector length and array dimensions (the first None where
    neither it nor an initializer gives its size)."""

    linkage: str
    type: str
    vector: Optional[int]
    dims: Tuple[Optional[int], ...]

    @staticmethod
    def of(linkage: Sequence[str], tname: str, vector: Optional[int], dims: Sequence[Optional[int]], init
           ) -> "VarShape":
        dims = tuple(dims)
        if dims and not dims[0]:
            dims = ((len(init) or None) if _is_list(init) else None,) + dims[1:]
        return VarShape(next(iter(linkage), ""), tname, vector, dims)


def variable_redeclaration_error(first: Sequence[VarShape], again: VarShape, name: str = ""
                                 ) -> Optional[Tuple[str, str]]:
    """(message, note) where ptxas 13.0 refuses a module variable `name` declared as `again` after the
    declarations `first` (see VarShape), else None."""
    def same(shape: VarShape) -> bool:
        return (shape.type, shape.vector, len(shape.dims), shape.dims[1:]) == \
            (again.type, again.vector, len(again.dims), again.dims[1:]) and \
            (not shape.dims or None in (shape.dims[0], again.dims[0]) or shape.dims[0] == again.dims[0])
    if not all(same(d) for d in first):
        return (f"'{name}' is declared again with another type or shape (ptxas: \"Inconsistent redefinition of "
                f"variable '{name}'\")", "declare it as the first declaration does: the type, vector and array "
                "dimensions (an .extern array may leave its size out: `x[]`)")
    if again.linkage == "extern":
        return None
    if any(d.linkage != "extern" for d in first):
        return (f"'{name}' is defined twice (ptxas: \"Duplicate definition of variable '{name}'\")",
                "keep one definition; declare the variable .extern where it is only used")
    if not again.linkage:
        return (f"'{name}' is declared .extern above and defined here without .visible, .weak or .common (ptxas: "
                f"\"'.extern' variable '{name}' cannot be resolved by a '.static'\")",
                "define it `.visible` (or .weak, .common), or define it before the .extern declaration")
    return None


def _product(dims: Sequence[int]) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


# the shape of an initializer, as ptxas 13.0 takes it: a list in braces for each array dimension and for a
# vector, around the values (`.global .b8 g[2][2] = {{1, 2}, {3}};`, `.global .v2 .u32 v = {1, 2};`); an
# array's list holds at most its dimension's count ("Greater number of elements in array initializer"), any
# count where the dimension is left out or 0, a vector's exactly its length ("Incorrect number of elements in
# vector initializer"); a list where a value belongs, or a value where a list does, is "Initial value type
# mismatch" (`.global .b8 g[] = 1;` crashes ptxas).
def _is_list(v) -> bool:
    return isinstance(v, tuple) and (not v or v[0] not in ("sym", "field"))


def _is_field(v) -> bool:
    return isinstance(v, tuple) and len(v) == 3 and v[0] == "field"


# texture, sampler and surface references, as ptxas 13.0 takes them. A variable of one of these types is a
# scalar (not an array) .global variable at module scope, or a kernel's .param parameter; an array of them is
# plain memory, which any state space holds. None is declared in a function's body, in any state space, with an
# initial value or not, an array or not ("Texture/surface variable must be at module or entry parameter
# scope"); nor is one a vector ("Vector type only allowed over basic types"), a .func's parameter but an
# array in .param space or a declaration's or prototype's ("cannot be allocated in .param state space", "...
# into a register"). A scalar one of .const or .shared is "Texture and surface variables must be declared in
# .global space", a .common one "Illegal type for .common symbol", a .samplerref variable or kernel parameter
# "violates .target texmode_unified setting" without texmode_independent.
# Its initial value is a {...} list of its fields, `name = value` (`{ filter_mode = nearest, width = 64 }`),
# one for each element of an array of them; ptxas 13.0 checks the list's length against its type's field
# count ("Too many elements in opaque struct initializer"), then each element, in order: a field
# ("Opaque structure initializer requires named fields") of its type ("Unrecognized field name 'x' in
# opaque struct initializer"), any number of times; it reports these at the list's closing brace. A field's
# value is any constant, or one of REF_FIELD_VALUES for any field, of any variable ("Unrecognized initial
# value symbol 'x'", at the value, checked over the whole statement before anything else of its
# initializers). An element of an array of references may be a field alone, which stands for its list.
REF_TYPES = frozenset(("texref", "samplerref", "surfref"))
REF_FIELDS = {
    "texref": ("width", "height", "depth", "channel_data_type", "channel_order", "normalized_coords",
               "filter_mode", "addr_mode_0", "addr_mode_1", "addr_mode_2", "array_size", "num_mipmap_levels",
               "num_samples"),
    "samplerref": ("force_unnormalized_coords", "filter_mode", "addr_mode_0", "addr_mode_1", "addr_mode_2"),
    "surfref": ("width", "height", "depth", "channel_data_type", "channel_order", "array_size", "memory_layout"),
}
REF_FIELD_VALUES = ("nearest", "linear", "wrap", "mirror", "clamp_ogl", "clamp_to_edge", "clamp_to_border")
_REF_EXAMPLE = {"texref": "filter_mode = nearest", "samplerref": "addr_mode_0 = wrap", "surfref": "width = 64"}


def _ref_fields_error(t: str, v: tuple, name: str) -> Optional[Tuple[str, str]]:
    """(message, note) where ptxas 13.0 refuses the {...} list `v` of the fields of a reference of type `t`."""
    fields = REF_FIELDS[t]
    has = f".{t} has the fields {', '.join(fields)}"
    if len(v) > len(fields):
        return (f"{len(v)} elements in the list of the fields of the .{t} {name}, which has {len(fields)} (ptxas: "
                "\"Too many elements in opaque struct initializer\")", f"give each field once: {has}")
    for x in v:
        if not _is_field(x):
            what = "a {...} list" if _is_list(x) else "a value"
            return (f"{what} in the list of the fields of the .{t} {name}, where a field belongs (ptxas: \"Opaque "
                    "structure initializer requires named fields\")",
                    f"write each field as `name = value`: `{{{_REF_EXAMPLE[t]}}}`")
        if x[1] not in fields:
            near = difflib.get_close_matches(x[1], fields, 1, 0.6)
            return (f"'{x[1]}' is not a field of .{t} (ptxas: \"Unrecognized field name '{x[1]}' in opaque struct "
                    "initializer\")", (f"did you mean {near[0]}? " if near else "") + has)
    return None


def field_value_error(init) -> Optional[Tuple[str, str, int]]:
    """(message, note, index) where ptxas 13.0 refuses the value of a field (`name = value`) in the initializer
    `init` (initializer_error's form), of any variable: a name not among REF_FIELD_VALUES ("Unrecognized initial
    value symbol"); index: the value's, counted as initializer_error counts them. ptxas checks this over a whole
    statement, before the rest of its initializers."""
    for i, v in enumerate(_init_values(init)):
        if _is_field(v) and isinstance(v[2], str) and v[2] not in REF_FIELD_VALUES:
            near = difflib.get_close_matches(v[2], REF_FIELD_VALUES, 1, 0.6)
            return (f"'{v[2]}' is not a value of a texture field (ptxas: \"Unrecognized initial value symbol "
                    f"'{v[2]}'\")", (f"did you mean {near[0]}? " if near else "") + "a field takes a constant, "
                    "or one of " + ", ".join(REF_FIELD_VALUES), i)
    return None


def ref_variable_error(space: str, tname: Optional[str], dims: Sequence[Optional[int]], linkage: Sequence[str],
                       independent: bool, name: str = "") -> Optional[Tuple[str, str, str]]:
    """(message, note, code) where ptxas 13.0 refuses a module-scope variable `name` of state space `space`
    ('global', 'const', 'shared'), type `tname`, array dimensions `dims` and linkage directives `linkage`
    ('extern', 'common', ...) after its initializer (initializer_error): a scalar reference outside .global,
    .common, or a .samplerref without .target texmode_independent (`independent`). Else None."""
    if tname not in REF_TYPES or dims:
        return None
    if space != "global":
        return (f"the .{tname} {name} is a .{space} variable (ptxas: \"Texture and surface variables must be "
                "declared in .global space\")", f"declare it `.global .{tname} {name};`", "PTX-E-DECL")
    if "common" in linkage:
        return (f"a .common variable cannot be a .{tname} (ptxas: \"Illegal type for .common symbol\")",
                "declare it .visible or .weak to share it between modules", "PTX-E-DECL")
    return sampler_mode_error(tname, dims, independent, name)


def common_space_error(space: str, linkage: Sequence[str], name: str = "") -> Optional[Tuple[str, str]]:
    """(message, note) where ptxas 13.0 refuses a module-scope variable `name` of state space `space` with the
    linkage directives `linkage` after its initializer, array dimensions and ref_variable_error: a .common one
    outside .global (".common variables must be declared in .global space"). Else None."""
    if "common" not in linkage or space == "global":
        return None
    return (f"a .common variable is a .global one, not .{space} (ptxas: \".common variables must be declared in "
            ".global space\")", f"declare it `.common .global`, or .visible .{space} (.weak) to share it")


def sampler_mode_error(tname: Optional[str], dims: Sequence[Optional[int]], independent: bool, name: str = ""
                       ) -> Optional[Tuple[str, str, str]]:
    """(message, note, code) where ptxas 13.0 refuses a .samplerref variable or kernel parameter `name` (of a
    kernel's definition) of array dimensions `dims` without .target texmode_independent (`independent`): a
    scalar one. Else None."""
    if tname != "samplerref" or dims or independent:
        return None
    return (f".samplerref {name} needs .target texmode_independent (the default is texmode_unified, where samplers "
            "are part of .texref; ptxas: \"Instruction or declaration violates .target texmode_unified setting\")",
            "add texmode_independent to .target, or declare an array of .samplerref, which is plain memory",
            "PTX-E-DIRECTIVE")


def body_variable_error(space: str, tname: Optional[str], dims: Sequence[Optional[int]], name: str = ""
                        ) -> Optional[Tuple[str, str]]:
    """(message, note) where ptxas 13.0 refuses a variable `name` of state space `space`, type `tname` and
    array dimensions `dims` in a function's body because of what it is: a texture, sampler or surface reference
    (see REF_TYPES), or a .tex variable. Else None."""
    if tname in REF_TYPES:
        return (f"a .{tname} cannot be declared in a function's body (ptxas: \"Texture/surface variable must be at "
                "module or entry parameter scope\")", f"declare `.global .{tname} {name};` at module scope, or "
                f"pass it as a kernel parameter `.param .{tname} {name}`")
    if space == "tex":
        said = ("Texture variables must be declared at module scope" if tname in ("u32", "u64") and not dims else
                f"Variable '{name}' must be type .u32 or .u64")
        return (f"the .tex state space is gone since PTX ISA 1.5, and a function's body declares no texture "
                f"(ptxas: \"{said}\")", f"declare `.global .texref {name};` at module scope")
    return None


# state spaces whose variables take no initial value (ptxas 13.0: "No initial value is allowed for 'x' in this
# state space")
_NO_INIT_SPACES = ("reg", "local", "shared", "param")


def initializer_error(space: str, tname: Optional[str], extern: bool, dims: Sequence[Optional[int]],
                      vector: Optional[int], init, name: str = "",
                      resolve: Optional[Callable[[str], Optional[str]]] = None, in_function: bool = False
                      ) -> Optional[Tuple[str, str, str, int]]:
    """(message, note, what, index) where ptxas 13.0 refuses the initial value `init` of a variable `name` of
    state space `space` ('global', 'shared', ...), type `tname` (without its dot), array dimensions `dims` (None
    for `[]`) and vector length `vector`, else None. `init` is a value (an int, a float, or ("sym", name,
    generic, offset) for an address: `name`, `generic(name)`, with `+N` or not) or a tuple of them for a list in
    braces, nested as written. The error is at list `index` (the lists counted in the order their braces open)
    where `what` is 'list', else at value `index` (the values counted in order). `resolve` tells what a name is
    where the initializer stands (initial_address_error's `declared`); without it addresses are not checked.
    `in_function`: the variable is declared in a function's body.

    ptxas 13.0 checks the variable's state space first: no initial value for one of .reg, .local, .shared or
    .param ("No initial value is allowed for 'x' in this state space"). Then it walks the initializer from the
    outside in, in the order it is written, and stops at the first of: a list where a value belongs, or one of
    the wrong count (at the list, before what it holds); a value where a list belongs; a value of the wrong
    kind: an address ptxas refuses (initial_address_error), then .uN and .sN take integers, .f32 and .f64
    floating-point values, .bN either; an address only a .u32 or .u64 ("Initial value type mismatch"); .f16 none ("No initial value is allowed for .f16 type", also for a
    list where its value belongs); .f16x2 a list for each element's value (_PACKED_ONE); a .texref,
    .samplerref or .surfref a list of its fields (_ref_fields_error). Then an .extern variable takes none.
    None for a variable whose type undeclarable_type refuses (.pred, .bf16, ...)."""
    if undeclarable_type(tname, space) is not None:
        return None  # the declaration is the error (undeclarable_type)
    if init is not None and space in _NO_INIT_SPACES:  # an empty list `{}` too
        return (f"a .{space} variable takes no initial value (ptxas: \"No initial value is allowed for '{name}' "
                "in this state space\")", "give it its value in the code (st, mov), or declare it .global or .const",
                "value" if _init_values(init) else "list", 0)
    t = tname or ""
    if init is None or (t in REF_TYPES and vector):  # a vector of references is the declaration's error
        return None
    bad = _initializer_walk(t, dims, vector, init, name, resolve, in_function)
    if bad is None and extern:  # an empty list `{}` too
        return (f"an .extern variable takes no initial value (ptxas: \"No initial value is allowed for external "
                f"symbol '{name}'\")", "give the initial value where the variable is defined",
                "value" if _init_values(init) else "list", 0)
    return bad


def _initializer_walk(t: str, dims: Sequence[Optional[int]], vector: Optional[int], init, name: str,
                      resolve: Optional[Callable[[str], Optional[str]]], in_function: bool
                      ) -> Optional[Tuple[str, str, str, int]]:
    """initializer_error's walk over the initializer `init` of a variable of type `t`."""
    levels = [(d, False) for d in dims] + ([(vector, True)] if vector else [])
    packed = t == "f16x2"  # each element's value a {...} list: see _packed_error
    if packed:
        per = [w for w, on in (("per array dimension", dims), ("for the vector", vector),
                               ("for each .f16x2 element", True)) if on]
        shape = (f"write it shaped {_shape_example(levels, _PACKED_ONE)}: a list in braces "
                 f"{', '.join(per[:-1]) + ' and ' if len(per) > 1 else ''}{per[-1]}, which holds the element's 32 bits "
                 "(0x40003C00 is (1.0, 2.0))")
    else:
        shape = (f"write it shaped {_shape_example(levels)}: a list in braces per array dimension"
                 f"{' and for the vector' if vector else ''}" if levels else "write the value alone: `= 1`")
    ref = t in REF_TYPES  # each element's value a {...} list of its fields: see _ref_fields_error
    if ref:
        shape = (f"write it shaped {_shape_example(levels, '{' + _REF_EXAMPLE[t] + '}')}: a list in braces "
                 f"{'per array dimension, and one ' if levels else ''}of the fields, `name = value`")
    seen = [0, 0]  # lists and values passed so far
    words: List[Tuple[int, tuple]] = []  # (value index, the address) of each address in a packed element's list

    def walk(v, level: int):
        if _is_field(v):
            # a field stands for a value, and for an element of an array of references (as its list of one
            # field); where a list of array elements belongs, and as a reference's whole initial value but
            # that of a one-dimensional array of a size, it crashes ptxas 13.0
            if ((level < len(levels) and not levels[level][1] and not ref) or
                    (ref and level == 0 and not (len(dims) == 1 and dims[0]))):
                return (f"the field `{v[1]} = {v[2]}` where {name} takes a {{...}} list crashes ptxas 13.0 (a "
                        "segmentation fault, no message)", shape, "value", seen[1])
            if t == "f16":  # as any value of it
                return _F16_INIT + ("value", seen[1])
            seen[1] += 1
            return None
        if not _is_list(v):
            if ref:
                bad = None
                if resolve is not None and isinstance(v, tuple) and v[0] == "sym":
                    bad = initial_address_error(v[1], resolve(v[1]), v[2], v[3])
                its = "its fields" if level == len(levels) else "array elements"
                return (bad or (f"a single value where the .{t} {name} takes a {{...}} list of {its} (ptxas: "
                                "\"Initial value type mismatch\")", shape)) + ("value", seen[1])
            if level < len(levels) or packed:
                n, exact = levels[level] if level < len(levels) else (None, False)
                want = (f"{n} values" if exact and not packed else "values" if level == len(levels) - 1 and not packed
                        else "lists")
                if level == len(levels):
                    its = "each .f16x2 element" if levels else "its .f16x2 value"
                    return (f"a single value where {name} takes a {{...}} list for {its} (ptxas: \"Initial value type "
                            "mismatch\")", shape, "value", seen[1])
                return (f"a single value where {name} takes a {{...}} list of {want} (ptxas: \"Initial value type "
                        "mismatch\")", shape, "value", seen[1])
            bad = None
            if resolve is not None and isinstance(v, tuple) and v[0] == "sym":
                bad = initial_address_error(v[1], resolve(v[1]), v[2], v[3])
            bad = bad or _value_kind_error(t, v)
            if bad is not None:
                return bad + ("value", seen[1])
            seen[1] += 1
            return None
        here = seen[0]
        seen[0] += 1
        if level == len(levels):
            if ref:
                bad = _ref_fields_error(t, v, name)
                for x in _init_lists_and_values(v):
                    seen[0 if _is_list(x) else 1] += 1
                return bad + ("list", here) if bad is not None else None
            if packed:  # ptxas checks nothing in an .f16x2 element's list
                for x in _init_lists_and_values(v):
                    if _is_list(x):
                        seen[0] += 1
                    else:
                        if isinstance(x, tuple) and x[0] == "sym":
                            words.append((seen[1], x))
                        seen[1] += 1
                return None
            if t == "f16":
                return _F16_INIT + ("list", here)
            return (f"a {{...}} list where {name} takes a single value (ptxas: \"Initial value type mismatch\")",
                    shape, "list", here)
        n, exact = levels[level]
        if exact and len(v) != n:
            return (f"{len(v)} value{'s' if len(v) != 1 else ''} for a .v{n} vector (ptxas: \"Incorrect number of "
                    "elements in vector initializer\")", f"give {n}, one per element", "list", here)
        if not v and level == 0 and not n:
            return (f"an empty list for array {name}, whose size it leaves to its initializer (ptxas: \"Initial value "
                    "type mismatch\")", f"give its size (`{name}[N] = {{}}` is N zeros), or at least one value",
                    "list", here)
        if not exact and n and len(v) > n:
            return (f"{len(v)} elements in a list for a dimension of {n} of array {name} (ptxas: \"Greater number of "
                    "elements in array initializer\")",
                    f"give at most {n}{', or leave the size out (`' + name + '[]`) to count them' if level == 0 else ''}",
                    "list", here)
        for x in v:
            bad = walk(x, level + 1)
            if bad is not None:
                return bad
        return None

    bad = walk(init, 0)
    if bad is None and words and resolve is not None:
        bad = _packed_address_error(dims, vector, init, name, words, resolve, in_function)
    return bad


# An .f16x2 variable's value is a {...} list for each element (a value there is "Initial value type mismatch"),
# and ptxas 13.0 checks nothing in the list: any count, lists in it, any value, a name no statement declares.
# It writes the values of the whole initializer one after another as 32-bit words from the variable's start,
# whatever the braces, and drops those past its end: an integer's low 32 bits, a floating-point value's .f32
# bits, an address as 64 bits (over the next word). `.f16x2 h[2] = {{1, 2}, {3}};` holds the words 1 and 2
# (3 is dropped), `{1.0}` 0x3F800000; only `{0x40003C00}`, one integer per element, holds what it says.
# An address of a .global or .const variable or of a function at a word past the variable's last stops it
# with no line ("Internal error: relocation is past end of offset", "... reloc address not found"), and so
# does an offset from a function at module scope ("Cannot take address of function in arithmetic
# expressions"; a function's body takes it where it lands in the variable); the address
# of anything else (a .shared variable, a name no earlier statement declares) crashes it (a segmentation
# fault). Those are initializer_error's, the rest initializer_miscompile's.
_PACKED_ONE = "{0x40003C00}"


def _init_lists_and_values(v):
    """The lists and values inside the list `v`, in the order they open, as written."""
    for x in v:
        yield x
        if _is_list(x):
            yield from _init_lists_and_values(x)


def _packed_address_error(dims, vector, init, name, words, resolve, in_function: bool
                          ) -> Optional[Tuple[str, str, str, int]]:
    """initializer_error's error for an address in the initializer `init` of an .f16x2 variable that stops
    ptxas 13.0 (see _PACKED_ONE): `words` holds (value index, address) of each; the value index is its word."""
    total = vector or 1  # the variable's 32-bit words; a first dimension left out or 0 counts the list's elements
    for i, d in enumerate(dims):
        total *= d or (len(init) if i == 0 else 1)
    for i, sym in words:
        declared = resolve(sym[1])
        note = f"an .f16x2 variable holds no address: keep {sym[1]}'s in a .u64 variable"
        if declared not in ("global", "const", "func"):
            what = f"the .{declared} variable {sym[1]}" if declared else f"{sym[1]}, which no earlier statement declares"
            return (f"the address of {what} in an .f16x2 initializer crashes ptxas 13.0 (a segmentation fault, no "
                    "message)", note, "value", i)
        if declared == "func" and sym[3] and not in_function:
            return (f"an offset from the function '{sym[1]}' (ptxas: \"Cannot take address of function '{sym[1]}' "
                    "in arithmetic expressions\")", note, "value", i)
        if i >= total:
            said = "relocation is past end of offset" if declared == "global" else "reloc address not found"
            return (f"the address of {sym[1]} lands past the end of {name}: ptxas 13.0 writes an .f16x2 initializer's "
                    f"values one 32-bit word after another, this one as word {i} of {total}, and fails on it (ptxas: "
                    f"\"Internal error: {said}\")", note, "value", i)
    return None


def initializer_miscompile(tname: Optional[str], dims: Sequence[Optional[int]], vector: Optional[int], init,
                           name: str = "") -> Optional[Tuple[str, str, str, int]]:
    """(message, note, what, index), as initializer_error's, where ptxas 13.0 takes the initializer `init` of
    a variable but writes other values than it says: an .f16x2 element's list that holds other than one integer
    (see _PACKED_ONE). Only for an initializer that initializer_error passes. None for a reference's, which
    holds fields, not values."""
    if init is None or tname in REF_TYPES:
        return None
    short = _short_list(dims, init, name)
    if tname != "f16x2":
        return short
    depth = len(dims) + (1 if vector else 0)
    seen = [0]  # values passed so far
    lead = "ptxas 13.0 does not pack an .f16x2 initializer into halves: it writes its values one after another as " \
        "32-bit words, whatever the braces"
    note = "give each element its 32 bits as one integer in braces, the first half low: `{0x40003C00}` is (1.0, 2.0)"

    def spill(kind: str):
        why = {"float": ", a floating-point value as its .f32 bits (1.0 is 0x3F800000), not as two halves",
               "address": ", an address as 64 bits, over the next element",
               "empty": "; an empty list gives its element no word, so the value after it lands in this one",
               "second": "; a second value goes into the next element's word, or past the variable's end is "
                         f"dropped (`{name}[2] = {{{{1, 2}}, {{3}}}}` holds 1 and 2, and drops 3)"}[kind]
        return (lead + why, note, "value", seen[0])

    def walk(v, level: int):
        if not _is_list(v):
            seen[0] += 1
            return None
        if level < depth:
            for x in v:
                bad = walk(x, level + 1)
                if bad is not None:
                    return bad
            return None
        values = _init_values(v)
        if not values and seen[0] < total:  # an empty element's list: the next value takes its word
            return spill("empty")
        for i, x in enumerate(values):  # an element's list holds what it says where it is one integer
            if not isinstance(x, int) or i > 0:
                return spill("float" if isinstance(x, float) else "address" if isinstance(x, tuple) else "second")
            seen[0] += 1
        return None

    total = len(_init_values(init))
    return walk(init, 0) or short


def _short_list(dims: Sequence[Optional[int]], init, name: str) -> Optional[Tuple[str, str, str, int]]:
    """initializer_miscompile's warning for a list of an inner array dimension that holds fewer elements than
    the dimension with a value after it in the initializer: ptxas 13.0 pads no list but the outermost, and
    writes the values after it right after its last (`v[2][2] = {{}, {1, 2}}` holds 1, 2, 0, 0, and
    `{{1}, {2, 3}}` 1, 2, 3, 0)."""
    if len(dims) < 2 or not _is_list(init):
        return None
    total = len(_init_values(init))
    seen = [0, 0]  # lists and values passed so far

    def walk(v, level: int):
        if not _is_list(v):
            seen[1] += 1
            return None
        here = seen[0]
        seen[0] += 1
        if level >= len(dims):
            seen[1] += len(_init_values(v))
            seen[0] += sum(1 for x in _init_lists_and_values(v) if _is_list(x))
            return None
        for x in v:
            bad = walk(x, level + 1)
            if bad is not None:
                return bad
        n = dims[level]
        if level > 0 and n and len(v) < n and seen[1] < total:
            return (f"ptxas 13.0 does not fill this list of {len(v)} of {n} elements of {name} with zeros: it writes "
                    f"the values after it right after its last (`{name}[2][2] = {{{{}}, {{1, 2}}}}` holds 1, 2, 0, 0)",
                    "give each element of the list its value (zeros too), or put the short lists last", "list", here)
        return None

    return walk(init, 0)


def initial_address_error(name: str, declared: Optional[str], generic: bool = False, offset: bool = False
                          ) -> Optional[Tuple[str, str]]:
    """(message, note) where ptxas 13.0 refuses the address of `name` as an initial value, written
    `generic(name)` where `generic` and with `+N` where `offset`, else None. `declared` is what an earlier
    statement declares `name` as, where the initializer stands (at module scope, or in a function's block or
    one around it): 'func' for a function (or kernel), the state space of a variable ('global', 'shared', a
    parameter's 'param', ...), None where no earlier statement declares it (a register, a label, a variable of
    a later statement or of another block, the variable itself). ptxas takes the address of a .global or
    .const variable, with generic() and an offset or not, and of a function, alone; it refuses a name it does
    not know yet ("Invalid initial value symbol"; with an offset "Initial value type mismatch", with
    generic() "Invalid initial value expression"), a variable of another state space ("Variable used as initial
    value not in .global or .const state space"), generic() of a function ("Invalid initial value expression")
    and an offset from one ("Initial value type mismatch")."""
    if declared is None:
        said = ("Initial value type mismatch" if offset else "Invalid initial value expression" if generic else
                f"Invalid initial value symbol '{name}'")
        return (f"'{name}' is not declared before this initializer takes its address (ptxas: \"{said}\")",
                "declare the variable or function in a statement above this one, in this block or one around it")
    if declared == "func":
        if generic:
            said = "Initial value type mismatch" if offset else "Invalid initial value expression"
            return (f"generic() of the function '{name}' (ptxas: \"{said}\")",
                    f"write `{name}` alone: a function's address needs no conversion")
        if offset:
            return (f"an offset from the function '{name}' (ptxas: \"Initial value type mismatch\")",
                    f"write `{name}` alone: an initializer takes a function's address without an offset")
        return None
    if declared not in ("global", "const"):
        return (f"'{name}' is a .{declared} variable: an initial value is the address of a .global or .const variable "
                "or of a function (ptxas: \"Variable used as initial value not in .global or .const state space\")",
                f"declare {name} .global or .const, or store its address in the code (mov.u64 %rd1, {name}; then st)")
    return None


def _init_values(v) -> list:
    """The values of an initializer (see initializer_error), in order."""
    if _is_list(v):
        return [x for e in v for x in _init_values(e)]
    return [] if v is None else [v]


_F16_INIT = ("a .f16 variable takes no initial value (ptxas: \"No initial value is allowed for .f16 type\")",
             "declare it .b16 and give the bit pattern (0x3C00 is 1.0 in .f16)")


def _value_kind_error(t: str, v) -> Optional[Tuple[str, str]]:
    """(message, note) where ptxas 13.0 refuses the value `v` for a variable of type `t`: "Initial value type
    mismatch" (see initializer_error)."""
    if t == "f16":
        return _F16_INIT
    kind = t[:1]
    if kind not in "usfb" or not t[1:].isdigit():
        return None
    if isinstance(v, tuple):  # an address
        if t in ("u32", "u64") or v[0] != "sym":
            return None
        return (f"an address as the initial value of a .{t} variable (ptxas: \"Initial value type mismatch\")",
                "an address is a .u64 value (.u32 too): declare the variable .u64")
    if kind in "us" and isinstance(v, float):
        return (f"a floating-point initial value for a .{t} variable (ptxas: \"Initial value type mismatch\")",
                f"write an integer (1, not 1.0); a .b{t[1:]} variable takes either")
    if kind == "f" and not isinstance(v, float):
        return (f"an integer initial value for a .{t} variable (ptxas: \"Initial value type mismatch\")",
                f"write a floating-point value (1.0, not 1); a .b{t[1:]} variable takes either")
    return None


def param_type_allocated(space: str, array: bool, allocated: bool, entry: bool) -> bool:
    """Whether a parameter's type is allocated as undeclarable_type's `allocated` means: ptxas 13.0 allocates
    a definition's parameters (`allocated`), but not a .func's .param array parameter, which an fp8 type may
    have."""
    return allocated and not (array and space == "param" and not entry)


def param_shape_error(space: str, tname: Optional[str], vector: Optional[int], array: bool, allocated: bool,
                      entry: bool = False, name: str = "") -> Optional[Tuple[str, str, str]]:
    """(message, note, the token it is about: 'vector', 'type' or 'name') where ptxas 13.0 rejects a
    parameter or .param variable of this shape, else None. `space` is 'param' or 'reg' (a .func's register
    parameter); `allocated`: a definition's parameter or a .param variable of a body, which ptxas allocates,
    not one of a declaration or .callprototype. None too for a type no declaration takes (undeclarable_type
    reports it)."""
    if undeclarable_type(tname, space, param_type_allocated(space, array, allocated, entry)) is not None:
        return None
    bad = vector_error(vector, tname, "parameter") if vector is not None else None
    if bad is not None:
        return bad + ("vector",)
    if entry and space == "reg":
        return (f"kernel parameter {name} must be in the .param state space (ptxas: \"Entry parameter must have "
                ".param state space\")", "declare it `.param` (.reg parameters are for .func only)", "name")
    if tname == "pred" and array:
        return ("an array cannot be .pred (ptxas: \"Predicate type can only be used to define scalar register "
                "variables\")", "declare a .b8 array (selp.u16 each predicate in, setp.ne.u16 it out)", "type")
    if tname in REF_TYPES and allocated and not entry and not array:
        said = "cannot be allocated in .param state space" if space == "param" else "cannot be allocated into a " \
            "register"
        return (f"a .func's parameter cannot be a .{tname} (ptxas: \"Variable '{name}' {said}\"): only a kernel's "
                "is a reference", f"pass the reference's 64-bit handle in a .u64 parameter (mov.u64 %rd, {name}; "
                "in the kernel), or make it a kernel parameter", "name")
    if space == "param" and allocated and not array and (vector is not None or (tname or "").endswith("x2")):
        what = f".v{vector} .{tname}" if vector is not None else f".{tname}"
        return (f"a {what} .param cannot be allocated (ptxas: \"cannot be allocated in .param state space\")",
                f"declare it as a one-element array: .param {what} {name or 'x'}[1]", "name")
    return None


def _shape_example(levels, inner: str = "1") -> str:
    """`{{1, 1}, {1, 1}}` for levels [(2, False), (2, True)]: an initializer of that shape, with `inner` for
    each value."""
    for n, exact in reversed(levels):
        inner = "{" + ", ".join([inner] * (n if exact else min(n or 2, 2))) + "}"
    return f"`{inner}`"
