"""mma.sp and mma.sp::ordered_metadata (PTX ISA 9.0, "Warp Level Matrix Multiply-Accumulate Instructions: mma.sp"),
linted and built as ptxas 13.0 takes them: every line below runs through ptxas (the tests marked ptxas), through
lint, and, where the builder can write it, through `FunctionBuilder.mma_sp`; the three verdicts must agree.

    mma.spvariant.sync.aligned.shape.row.col{.satfinite}.dtype.atype.btype.ctype  d, a, b, c, e, f;

What ptxas 13.0 showed:
- the forms (both .sp and .sp::ordered_metadata, .row.col only): .f16 at .m16n8k16/.m16n8k32 with .f16/.f16 or
  .f32/.f32 D/C; .bf16 at .m16n8k16/.m16n8k32 and .tf32 at .m16n8k8/.m16n8k16, .f32 D/C; .s8/.u8 at
  .m16n8k32/.m16n8k64 and .s4/.u4 at .m16n8k64/.m16n8k128 (each of A and B signed or not), .s32 D/C, .satfinite
  or not; .e4m3/.e5m2 (each of A and B) at .m16n8k64 with .f32 D/C, and with .f16 D/C at sm_120a/sm_120f only
  ("Instruction 'mma with with F16 accumulator and F8 floating point type' not supported on .target 'sm_90a'")
  and with .sp::ordered_metadata only (plain .sp: "Illegal modifier '.sp'"). No .f64 or .b1 inputs, no
  .m8n8kK shapes, no bit operation; .satfinite on the integer forms only. 92 spellings.
- targets and versions: sm_80 and PTX ISA 7.1 ("Feature 'Sparse MMA' requires PTX ISA .version 7.1"), sm_89 and
  8.4 with .e4m3/.e5m2 inputs, 8.5 for .sp::ordered_metadata, 8.7 (and sm_120a/f) for the .f16 accumulator of
  .e4m3/.e5m2. Plain .sp is still taken at every target for every other form, with an advisory ("Modifier
  '.sp::ordered_metadata' should be used on instruction 'mma' instead of modifier '.sp' as it is expected to
  have substantially reduced performance on some future architectures").
- the modifiers go in any order after `mma` (.sp too: `mma.sync.aligned.sp.m16n8k16.row.col...`) but for the
  layouts and types; .sync and .aligned are required (".aligned modifier required"), both layouts too
  ("'.blayout' modifier required"), one sparsity modifier ("Multiple sparsity modifiers specified").
- fragments: A is half of mma.sync's at the same shape (two of every four elements along K), B, C and D are
  mma.sync's; the counts are exact ("Argument vector size mismatch"). The .bf16 and .tf32 inputs and the .f32
  accumulator of the .f16/.bf16/.tf32 forms take any 32-bit register (.b32, .u32, .s32, .f32, .f16x2), where
  mma.sync takes their own type and .b32 only.
- f, the sparsity selector, is an integer constant (an expression: `1+1`; no register, no float literal), 0 to 3
  for .f16 and .bf16 at K=16, .f16 with an .f32 accumulator at K=32 and .tf32 at K=8; 0 or 1 for the other
  .f16/.bf16/.tf32 forms and .s8/.u8 at K=32, .s4/.u4 at K=64; 0 at their larger K. The whole 64-bit value is
  checked ("value '4294967296' out of range, expected to be in range [0..1]"; 18446744073709551616 reads as 0),
  but for .e4m3/.e5m2 only its low 32 bits ("Argument 5 of instruction 'mma': unexpected value '1', expected to
  be 0"; 4294967296 is taken).
- e, the metadata, is a 32-bit register of .b32, .u32, .s32, .f32 or .f16x2, or (!) a .pred register, the bits of
  a 0f literal, or a vector of 1, 2, 4 or 8 of them; no integer literal, no 16- or 64-bit register. Less at some
  targets: plain .sp from sm_100 on (but with .e4m3/.e5m2) is compiled through a function of ptxas's own, where
  a .pred e is "Type of argument does not match formal parameter 'e'" and a vector makes ptxas fail on its own
  code ("<builtin>, line 8; fatal : Parsing error near '{'"); with .e4m3/.e5m2 inputs from sm_90 to the sm_110
  family only .b32, .u32, .s32 and .f16x2 registers ("Arguments mismatch for instruction 'mov'"), where sm_89
  and the sm_120 family take what the other forms take.

Where lint and ptxas still differ (left as they are): vectors of mixed register kinds as e follow lint's general
vector rule, which these lines do not probe past the cases below. (The .kind forms, .sp::ordered_metadata with
.kind::f8f6f4 and the block-scaled kinds, are tests/test_lint_mma_kind.py's.)
"""
from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
import tempfile
from typing import Dict, List, Optional, Sequence, Tuple

import pytest

import ptxgen as pg
from ptxgen import legality as LG
from ptxgen.errors import BuildError
from ptxgen.target import Target, version_str
from ptxgen.types import get_type

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _three_way as three_way  # noqa: E402
from _ptxas_lines import kernel, reg_decls  # noqa: E402
from test_lint_vector_probes import needs_ptxas  # noqa: E402

REG_TYPES = ("pred", "b16", "u16", "f16", "b32", "u32", "s32", "f32", "f16x2", "b64", "u64", "f64")
BITS = {"f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "f64": 64, "s32": 32, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8,
        "s4": 4, "u4": 4, "b1": 1}
SPARSITY = (".sp", ".sp::ordered_metadata")
# the targets the lines run at, with a version that every form's minimum meets
TARGETS = {"sm_80": "8.5", "sm_89": "8.5", "sm_90a": "8.5", "sm_100a": "8.8", "sm_120a": "8.8"}


def module(lines: Sequence[str], target: str, version: str) -> str:
    """A kernel with `lines` in its body, after registers %<type>_<0..19> of each type."""
    return kernel(lines, target, version, reg_decls(*((t, t + "_", 20) for t in REG_TYPES)))


def _first(text: str) -> int:
    return text.count("\n", 0, text.index("\t.reg .f64")) + 2


# ------------------------------------------------------------------------------------------------ spellings
def _fields(opcode: str) -> Dict[str, str]:
    """The fields of an mma.sp spelling in the PTX ISA's order (any values)."""
    toks = opcode.split(".")
    rest = toks[4:]
    sat = rest[3] == "satfinite"
    d, a, b, c = rest[3 + sat:7 + sat]
    return {"sparsity": toks[1], "shape": rest[0], "alayout": rest[1], "blayout": rest[2], "satfinite": sat,
            "dtype": d, "atype": a, "btype": b, "ctype": c}


def counts(opcode: str) -> Tuple[int, int, int, int]:
    """Registers of d, a, b, c as the PTX ISA's sparse fragments give them (whether or not the spelling is legal)."""
    g = _fields(opcode)
    m, n, k = (int(x) for x in re.match(r"m(\d+)n(\d+)k(\d+)$", g["shape"]).groups())

    def regs(elems, t, acc):
        if t == "f64" or acc and t in ("f32", "s32"):
            return elems
        return max(elems * BITS[t] // 32, 1)
    return (regs(m * n // 32, g["dtype"], True), regs(m * k // 64, g["atype"], False),
            regs(k * n // 32, g["btype"], False), regs(m * n // 32, g["ctype"], True))


_ACC_REG = {"f16": "f16x2", "f32": "f32", "s32": "s32", "f64": "f64"}


def line(opcode: str, e: str = "%b32_19", f: str = "0", n: Optional[Tuple[int, int, int, int]] = None) -> str:
    g = _fields(opcode)
    nd, na, nb, nc = n or counts(opcode)

    def vec(t, count, off):
        return "{" + ", ".join(f"%{t}_{off + i}" for i in range(count)) + "}"
    ab = "f64" if g["atype"] == "f64" else "b32"
    return (f"{opcode} {vec(_ACC_REG.get(g['dtype'], 'b32'), nd, 0)}, {vec(ab, na, 0)}, {vec(ab, nb, 8)}, "
            f"{vec(_ACC_REG.get(g['ctype'], 'b32'), nc, 8)}, {e}, {f};")


def _type_combos() -> List[Tuple[str, str, str, str, str]]:
    """(satfinite, dtype, atype, btype, ctype) of every input type with every accumulator pair near it."""
    out = []
    for a in ("f16", "bf16", "tf32", "e4m3", "e5m2", "f64"):
        for b in (("e4m3", "e5m2") if a in ("e4m3", "e5m2") else (a,)):
            for d, c in itertools.product(("f16", "f32"), repeat=2):
                out.append(("", d, a, b, c))
    out.append(("", "f64", "f64", "f64", "f64"))
    for a, b in [("s8", "s8"), ("s8", "u8"), ("u8", "s8"), ("u8", "u8"), ("s4", "s4"), ("u4", "s4"), ("s4", "u4"),
                 ("u4", "u4"), ("b1", "b1"), ("s8", "s4")]:
        for sat in ("", ".satfinite"):
            out.append((sat, "s32", a, b, "s32"))
    out += [(".satfinite", "f32", "f16", "f16", "f32"), ("", "f32", "s8", "s8", "f32"),
            ("", "s32", "f16", "f16", "s32"), ("", "f32", "f16", "bf16", "f32")]
    return out


SHAPES = ("m16n8k8", "m16n8k16", "m16n8k32", "m16n8k64", "m16n8k128", "m16n8k256", "m8n8k32")


def spellings() -> List[str]:
    """Every combination of the fields mma.sp's forms use, legal or not, in the PTX ISA's order."""
    return [f"mma{sp}.sync.aligned.{shape}.row.col{sat}.{d}.{a}.{b}.{c}"
            for sp in SPARSITY for shape in SHAPES for sat, d, a, b, c in _type_combos()]


# (the .kind forms are tests/test_lint_mma_kind.py's)
LEGAL = [f.opcode for f in LG.forms(mnemonic="mma") if "sparsity" in f.fields and "kind" not in f.fields]


def test_the_grammar_has_the_spellings_ptxas_takes():
    """Without ptxas: the 92 spellings of the docstring, each in spellings()."""
    assert len(LEGAL) == 92 and set(LEGAL) <= set(spellings())
    rules = {f.rule for f in LG.forms(mnemonic="mma") if "sparsity" in f.fields and "kind" not in f.fields}
    assert rules == {"mma_sp_f16", "mma_sp_bf16", "mma_sp_tf32", "mma_sp_fp8", "mma_sp_fp8_f16", "mma_sp_i8",
                     "mma_sp_i4"}
    for op in LEGAL:
        assert tuple(n for n, _ in LG.fragment_regs(op).values()) == counts(op), op


# near misses of the spelling that the builder cannot write (it writes the PTX ISA's order and every modifier)
BASE = "mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
SPELLING_MISSES = [
    BASE.replace(".aligned", ""), BASE.replace(".sync", ""), BASE.replace(".sync.aligned", ""),
    BASE.replace(".row.col", ""), BASE.replace(".row.col", ".row"), BASE.replace(".row.col", ".col"),
    BASE.replace("mma.sp", "mma.sp.sp::ordered_metadata"), BASE.replace("mma.sp", "mma.sp.sp"),
    BASE.replace("mma.sp", "mma.sp::ordered_metadata.sp::ordered_metadata"), BASE.replace("mma.sp", "mma.sp::ordered"),
    BASE.replace("mma.sp", "mma.sp::metadata"), BASE.replace(".f32.f16.f16.f32", ".f32.f16.f16"),
    BASE + ".and.popc", BASE + ".xor.popc", BASE + ".aligned", BASE.replace(".m16n8k16", ".m16n8k16.m16n8k16"),
    BASE.replace(".row.col", ".row.col.relu"), BASE.replace(".row.col", ".row.col.ftz"),
    BASE.replace(".f32.f16.f16.f32", ".f32.f16.f16.f32.f32"),
]
# other orders that ptxas takes (and two it refuses: the layouts are A's then B's, the types D, A, B, C)
ORDERS = [
    "mma.sync.aligned.sp.m16n8k16.row.col.f32.f16.f16.f32", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32.sp",
    "mma.sync.aligned.m16n8k16.sp::ordered_metadata.row.col.f32.f16.f16.f32",
    "mma.row.col.sp.sync.aligned.m16n8k16.f32.f16.f16.f32", "mma.f32.f16.f16.f32.row.col.sync.sp.m16n8k16.aligned",
    "mma.sp.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32.satfinite",
    "mma.sp.sync.aligned.satfinite.m16n8k32.row.col.s32.s8.s8.s32",
    "mma.sp.sync.aligned.m16n8k32.row.col.s32.s8.s8.satfinite.s32",
    "mma.sp.sync.aligned.m16n8k16.col.row.f32.f16.f16.f32", "mma.sp.sync.aligned.m16n8k16.row.col.f16.f32.f16.f32",
]
I8 = "mma.sp.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32"


def with_operands(opcode: str) -> str:
    """A line of `opcode` (a spelling of BASE or I8 in another order, or a near miss of one) with their operands."""
    base = I8 if ".s8" in opcode else BASE
    return opcode + " " + line(base).split(" ", 1)[1]


# ------------------------------------------------------------------------------------------------- operands
# the selector and the metadata, in one form of each selector range (and the others' at every value below)
SELECTORS = ("-1", "0", "1", "2", "3", "4", "7", "4294967296", "4294967297", "18446744073709551616",
             "18446744073709551615", "-0", "1+1", "(1)", "0x3", "0U", "0.0", "0f00000000", "%b32_18", "%u32_18")
METAS = ("%b32_19", "%u32_19", "%s32_19", "%f32_19", "%f16x2_19", "%pred_19", "%b16_19", "%u16_19", "%f16_19",
         "%b64_19", "%u64_19", "%f64_19", "0", "0x12345678", "-1", "0f3F800000", "0d3FF0000000000000", "1.5",
         "{%b32_19}", "{%b32_18, %b32_19}", "{%b32_16, %b32_17, %b32_18, %b32_19}", "{%b32_17, %b32_18, %b32_19}",
         "{%f32_19}", "{%pred_19}", "{0f3F800000}", "{1}", "{%b32_19, 1}", "{%u32_18, %f32_19}", "{%b32_18, %f32_19}")
SELECTOR_FORMS = [
    "mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",                      # 0..3
    "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f16.f16.f16.f16",    # 0..1
    "mma.sp.sync.aligned.m16n8k64.row.col.satfinite.s32.s8.u8.s32",              # 0
    "mma.sp.sync.aligned.m16n8k64.row.col.f32.e4m3.e5m2.f32",                    # low 32 bits 0
]
META_FORMS = [
    "mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "mma.sp.sync.aligned.m16n8k128.row.col.s32.u4.s4.s32",
    "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32",
    "mma.sp.sync.aligned.m16n8k64.row.col.f32.e4m3.e5m2.f32",
    "mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.f32.e5m2.e5m2.f32",
    "mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.f16.e4m3.e5m2.f16",
]


def _count_misses(opcode: str) -> List[Tuple[int, int, int, int]]:
    """Each fragment one register short and one over, and A as long as mma.sync's (no compression)."""
    n = counts(opcode)
    out = []
    for i in range(4):
        for dn in (-1, 1):
            m = list(n)
            m[i] += dn
            if m[i] > 0:
                out.append(tuple(m))
    return out + [(n[0], 2 * n[1], n[2], n[3])]


def _split(text: str) -> Tuple[str, List[str]]:
    opcode, ops = text[:-1].split(" ", 1)
    return opcode, [p.strip() for p in re.findall(r"\{[^}]*\}|[^,{}]+", ops) if p.strip()]


def _fragment_type_lines(opcode: str) -> List[str]:
    """The line with every register of one fragment of type t, for each 32-bit t."""
    _, ops = _split(line(opcode))
    out = []
    for j in range(4):
        for t in ("b32", "u32", "s32", "f32", "f16x2"):
            new = "{" + ", ".join(f"%{t}_{10 + i}" for i in range(ops[j].count(",") + 1)) + "}"
            out.append(f"{opcode} {', '.join(new if k == j else o for k, o in enumerate(ops))};")
    return out


def operand_lines(target: str) -> List[str]:
    out = []
    for op in SELECTOR_FORMS:
        if LG.check(op, None, target, TARGETS[target]):
            continue
        out += [line(op, f=v) for v in SELECTORS]
    for op in LEGAL:
        if LG.check(op, None, target, TARGETS[target]):
            continue
        out += [line(op, f=str(v)) for v in (0, 1, 2, 3, 4)]
        out += [line(op, n=n) for n in _count_misses(op)]
        out += [line(op, f="0")[:-1] + ", 0;", line(op).rsplit(", ", 1)[0] + ";"]
    for op in META_FORMS:
        if LG.check(op, None, target, TARGETS[target]):
            continue
        out += [line(op, e=v) for v in METAS]
        out += _fragment_type_lines(op)
    return out


# ---------------------------------------------------------------------------------------------- the verdicts
def lint_verdicts(lines: Sequence[str], target: str, version: str) -> List[Optional[str]]:
    """Per line, lint's first error (code and message), or None where lint takes it."""
    text = module(lines, target, version)
    return three_way.lint_first_errors(text, _first(text), len(lines))


def _run_ptxas(text: str, target: str) -> Tuple[int, str]:
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "k.ptx")
        with open(path, "w") as fh:
            fh.write(text)
        p = subprocess.run(["ptxas", f"-arch={target}", path, "-o", os.path.join(d, "k.cubin")], capture_output=True,
                           text=True, timeout=600)
    return p.returncode, p.stdout + p.stderr


_LINE = re.compile(r"k\.ptx, line (\d+); (?:error|fatal)\s*:\s*(.*)")


def ptxas_verdicts(lines: Sequence[str], target: str, version: str) -> List[Optional[str]]:
    """Per line, ptxas's first error, or None where it assembles. Rejected lines are blanked and the text run
    again until it assembles; where ptxas fails without naming a line of the text (its own code: `<builtin>`), the
    remaining lines are halved until the failing ones are found."""
    text = module(lines, target, version)
    first = _first(text)
    rows = text.split("\n")
    live = {first + i: i for i in range(len(lines))}
    out: Dict[int, str] = {}

    def run(keep) -> Tuple[int, str]:
        trial = [("\t// off" if ln in live and ln not in keep else r) for ln, r in enumerate(rows, 1)]
        return _run_ptxas("\n".join(trial), target)

    def search(cands: List[int]):
        rc, log = run(set(cands))
        if rc == 0:
            return
        named = {int(m.group(1)): m.group(2) for m in _LINE.finditer(log)}
        hit = {ln: e for ln, e in named.items() if ln in cands}
        if hit:
            for ln, e in hit.items():
                out[live[ln]] = e
            search([c for c in cands if c not in hit])
        elif len(cands) == 1:
            out[live[cands[0]]] = next(x for x in log.splitlines() if re.search(r"(error|fatal)\s*:", x))
        else:
            assert not named, (target, log)
            search(cands[:len(cands) // 2])
            search(cands[len(cands) // 2:])
    search(sorted(live))
    return [out.get(i) for i in range(len(lines))]


def _builder_args(text: str):
    """(opcode fields, the operand texts) of a line in the PTX ISA's order that mma_sp can write, or None."""
    opcode, parts = _split(text)
    toks = opcode.split(".")
    if len(toks) < 11 or toks[1] not in ("sp", "sp::ordered_metadata") or toks[2:4] != ["sync", "aligned"]:
        return None
    if len(parts) != 6 or not all(p.startswith("{") for p in parts[:4]):
        return None
    g = _fields(opcode)
    if opcode.count(".") != 10 + g["satfinite"] or g["alayout"] not in ("row", "col") or \
            g["blayout"] not in ("row", "col"):
        return None
    return g, parts


def builder_verdict(text: str, target: str, version: str) -> Tuple[bool, Optional[str]]:
    """(the builder can write the line, its error or None): mma_sp with the line's fields and operands."""
    got = _builder_args(text)
    if got is None:
        return False, None
    g, parts = got
    e, f = parts[4], parts[5]
    if e.startswith(("{", "0f", "0d")) or "." in e:
        return False, None          # the builder takes e as a register or an int
    try:
        f_int = int(f, 0)
    except ValueError:
        return False, None          # and f as an int
    if not -(1 << 63) <= f_int < 1 << 64 or f.startswith("-0"):
        return False, None
    m = pg.Module(target, version=version)
    k = m.entry("b")
    regs: Dict[str, object] = {}

    def reg(name):
        t, i = name.lstrip("%").rsplit("_", 1)
        if name not in regs:
            regs[name] = k.reg(get_type(t), name=f"{t}_{i}")
        return regs[name]

    def vec(p):
        return [reg(x.strip()) for x in p.strip("{}").split(",")]
    try:
        k.mma_sp(g["shape"], vec(parts[0]), vec(parts[1]), vec(parts[2]), vec(parts[3]),
                 reg(e) if e.startswith("%") else int(e, 0), f_int, atype=g["atype"], btype=g["btype"],
                 ctype=g["ctype"], dtype=g["dtype"], alayout=g["alayout"], blayout=g["blayout"],
                 satfinite=g["satfinite"], ordered_metadata=g["sparsity"] == "sp::ordered_metadata")
    except BuildError as ex:
        return True, f"{ex.code}: {ex.message}"
    return True, None


_VERSIONS = [(6, 5), (7, 0), (7, 1), (7, 8), (8, 0), (8, 3), (8, 4), (8, 5), (8, 6), (8, 7), (8, 8), (9, 0)]


def cases() -> Dict[Tuple[str, str], List[str]]:
    """{(target, version): lines}: every spelling, the near misses of spelling and order, the operand lines, and
    each legal form at its minimum target and version and one step below each."""
    out: Dict[Tuple[str, str], List[str]] = {}
    for target, version in TARGETS.items():
        out[(target, version)] = ([line(op) for op in spellings()]
                                  + [with_operands(op) for op in SPELLING_MISSES + ORDERS] + operand_lines(target))
    for op in LEGAL:
        needs, _ = LG.requirement(op)
        ver = max(n.version for n in needs)
        for t in ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100a", "sm_120", "sm_120a", "sm_120f"):
            tg = Target.parse(t)
            v = max(ver, tg.min_ptx)
            out.setdefault((t, version_str(v)), []).append(line(op))
            lower = max((x for x in _VERSIONS if x < v), default=None)
            if lower is not None and lower >= tg.min_ptx:
                out.setdefault((t, version_str(lower)), []).append(line(op))
    return out


@pytest.fixture(scope="module")
def verdicts():
    return three_way.collect(cases(), ptxas_verdicts, lint_verdicts, builder_verdict)


@pytest.mark.ptxas
@needs_ptxas
def test_lint_agrees_with_ptxas(verdicts):
    bad = three_way.lint_misses(verdicts)
    assert not bad, f"{len(bad)} of {len(verdicts)} lines:\n" + "\n".join(bad[:40])


@pytest.mark.ptxas
@needs_ptxas
def test_builder_agrees_with_ptxas(verdicts):
    bad = three_way.builder_misses(verdicts)
    assert not bad, f"{len(bad)} lines:\n" + "\n".join(bad[:40])
    assert sum(1 for *_, b in verdicts if b[0]) > 0.8 * len(verdicts)


@pytest.mark.ptxas
@needs_ptxas
def test_every_legal_spelling_is_taken_somewhere(verdicts):
    taken = {text.split(" ")[0] for t, v, text, p, li, _ in verdicts if p is None}
    assert set(LEGAL) <= taken
    assert taken & set(spellings()) == set(LEGAL)


if __name__ == "__main__":     # counts: python3 tests/test_lint_mma_sp.py
    rows = three_way.collect(cases(), ptxas_verdicts, lint_verdicts, builder_verdict)
    print(len(rows), "lines;", sum(1 for r in rows if r[3] is None), "taken by ptxas;",
          sum(1 for r in rows if r[5][0]), "written by the builder")
    for t, v, text, p, li, b in rows:
        if (p is None) != (li is None) or (b[0] and (p is None) != (b[1] is None)):
            print(t, v, text, "| ptxas:", p, "| lint:", li, "| builder:", b)
