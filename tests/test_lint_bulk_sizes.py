"""Byte counts of the bulk copies and bulk reductions, and the size of applypriority and discard, linted and built
as ptxas 13.0 takes them, probed spelling by spelling.

What ptxas 13.0 showed (the tests marked ptxas run every spelling below through it and compare with lint):
- cp.async.bulk and cp.reduce.async.bulk take a byte count that is a multiple of 16 from 0 to 1048560 (2^20 - 16):
  a .u32/.b32/.s32 register, or an integer literal whose low 32 bits, read as a signed integer, are such a
  multiple: 15 is "expected to be multiple of 16", 1048576 and -16 "out of range", 4294967312 (2^32 + 16) and
  2^64 read as 16 and 0 and assemble, 4294967311 reads as 15. A .b64 or .b16 register, a .f32 or .pred one and
  a floating-point literal are "Arguments mismatch". Every form of both (into global with and without
  .L2::cache_hint, into shared::cluster on an mbarrier, from global into shared memory) checks it the same way
  (legality.BULK_SIZES, written once); cp.async.bulk.prefetch checks all 64 bits of the literal.
- cp.reduce.async.bulk takes these operation and type pairs (sm_90, PTX ISA 8.0): into global memory (.bulk_group)
  .and/.or/.xor of .b32 and .b64, .add of .u32, .s32, .u64, .f32 and .f64, .add.noftz of .f16 and .bf16 (.noftz
  is required there and refused elsewhere), .inc/.dec of .u32, .min/.max of .u32, .s32, .u64, .s64, .f16 and .bf16;
  into shared::cluster (.mbarrier::complete_tx::bytes) .and/.or/.xor of .b32, .add of .u32, .s32 and .u64,
  .inc/.dec of .u32 and .min/.max of .u32 and .s32. Its [mbar] is an address, a bare 64-bit register or an
  integer literal (as cp.async.bulk's without .multicast::cluster and .L2::cache_hint), its cache policy a 64-bit
  register or an integer literal. The .tensor forms take no byte count ("Arguments mismatch"; their operands are
  in tests/test_lint_bulk_tensor.py).
- applypriority{.global}.L2::evict_normal and discard{.global}.L2 (sm_80, PTX ISA 7.4) take [a] and the size 128
  as an integer literal at its full 64 bits (2^64 + 128 reads as 128; 4294967424 and -128 are refused); a register
  of any type is "Arguments mismatch". .global names .global variables only, the generic form .global and .shared
  ones; no other priority than .L2::evict_normal, no other level than .L2.
- the note of a refused byte count names the legal counts around it: "write 0 or 16" for 15, "write 1048560" for
  1048576, and says what ptxas read where the literal's low 32 bits differ from it.
"""
from __future__ import annotations

import os
import sys

import pytest

import ptxgen as pg
from ptxgen import legality as LG
from ptxgen.errors import BuildError, LegalityError

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _ptxas_lines import ptxas_rejected  # noqa: E402
from test_lint_vector_probes import _case_agrees_with_ptxas, errors, needs_ptxas  # noqa: E402

O, T, M = "PTX-E-OPERANDS", "PTX-E-TYPE", "PTX-E-MODIFIER"


def module(lines, target: str = "sm_90a", version: str = "8.7") -> str:
    """A kernel with `lines` in its body, after registers of each kind, a .global array g, a .shared array s and a
    .shared mbarrier mb."""
    return (f".version {version}\n.target {target}\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n"
            ".reg .pred %p<2>;\n.reg .b16 %h<4>;\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n.reg .f32 %f<4>;\n"
            ".global .align 16 .b8 g[256];\n.shared .align 16 .b8 s[256];\n.shared .align 8 .b64 mb;\n"
            "ld.param.u64 %rd1, [p];\nmov.u32 %r1, 16;\nmov.u64 %rd2, 0;\nmov.u64 %rd3, 0;\n"
            + "\n".join(lines) + "\nret;\n}\n")


def _flagged(text, lines):
    """{line of `lines`: lint's first error on it} (each of `lines` once in `text`, one after the other)."""
    first = text.split("\n").index(lines[0]) + 1
    out = {}
    for d in errors(text):
        if first <= d.loc.line < first + len(lines):
            out.setdefault(lines[d.loc.line - first], d)
    return out


def _agrees_with_ptxas(lines, target="sm_90a", version="8.7"):
    """Lint flags exactly the lines of `lines` that ptxas (for `target`) rejects; returns the rejected lines."""
    text = module(lines, target, version)
    first = text.split("\n").index(lines[0]) + 1
    rejected = {lines[i - first] for i in ptxas_rejected(text, target) if first <= i < first + len(lines)}
    flagged = set(_flagged(text, lines))
    assert not errors(text) or min(d.loc.line for d in errors(text)) >= first, [str(d) for d in errors(text)][:3]
    wrong = sorted((line, line in rejected) for line in set(lines) if (line in rejected) != (line in flagged))
    assert not wrong, (len(wrong), wrong[:10])
    return rejected


# ------------------------------------------------------------------------------------------------ byte counts
S2G = "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%rd1], [s], @;"
S2G_HINT = "cp.reduce.async.bulk.global.shared::cta.bulk_group.L2::cache_hint.min.s64 [%rd1], [s], @, %rd3;"
S2S = "cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.add.u32 [%rd2], [s], @, [mb];"
HALF = "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.bf16 [%rd1], [s], @;"
COPIES = ("cp.async.bulk.global.shared::cta.bulk_group [%rd1], [s], @;",
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [s], [%rd1], @, [mb];",
          "cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [s], [%rd1], @, [mb];",
          "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%rd2], [s], @, [mb];")
PREFETCH = "cp.async.bulk.prefetch.L2.global [%rd1], @;"
SIZE_FORMS = (S2G, S2G_HINT, S2S, HALF) + COPIES

LITERALS = ("0", "16", "15", "8", "24", "1048560", "1048576", "1048592", "4294967296", "4294967312", "4294967311",
            "0x100000010", "18446744073709551600", "18446744073709551616", "-16", "-15", "0x80000000", "0xFFFFFFF0")
REGISTERS = {"%r1": None, "%rd3": T, "%h1": T, "%f1": T, "%p1": T}
FLOATS = ("16.0", "0f41800000")


def _literal(spelling: str) -> int:
    s = spelling.lstrip("-")
    v = int(s, 16) if s.startswith("0x") else int(s)
    return (-v if spelling.startswith("-") else v) & (2**64 - 1)


def _count_ok(spelling: str, bits: int = 32) -> bool:
    """The byte count as ptxas reads it: the literal's low `bits` bits as a signed integer, a multiple of 16 from 0
    to 2^20 - 16."""
    w = _literal(spelling) & ((1 << bits) - 1)
    v = w - ((w >> (bits - 1)) << bits)
    return 0 <= v < 1 << 20 and v % 16 == 0


def size_cases():
    """(line, the code lint gives it or None) for every bulk form and byte count probed."""
    out = []
    for form in SIZE_FORMS + (PREFETCH,):
        bits = 64 if form == PREFETCH else 32
        out += [(form.replace("@", n), None if _count_ok(n, bits) else O) for n in LITERALS]
        out += [(form.replace("@", r), code) for r, code in REGISTERS.items()]
        out += [(form.replace("@", f), T) for f in FLOATS]
    return out


SIZES = size_cases()


@pytest.mark.parametrize("line,code", SIZES, ids=[c[0] for c in SIZES])
def test_byte_counts_lint_as_ptxas_reads_them(line, code):
    text = module([line])
    assert [d.code for d in errors(text)] == ([code] if code else []), [str(d) for d in errors(text)]


def test_the_probe_files_disagreement_is_gone():
    """The spellings that lint took and ptxas refused: a byte count of 15 in cp.reduce.async.bulk, and a register
    as applypriority's or discard's size."""
    lines = [S2G.replace("@", "15"), "applypriority.global.L2::evict_normal [%rd1], %r1;",
             "discard.global.L2 [%rd1], %r1;"]
    got = _flagged(module(lines), lines)
    assert sorted(got) == sorted(lines)
    assert "multiple of 16 from 0 to 1048560, not 15" in got[lines[0]].message
    for line in lines[1:]:
        assert got[line].code == O and "(size) must be an immediate, not a register" in got[line].message


@pytest.mark.ptxas
@needs_ptxas
def test_byte_counts_agree_with_ptxas():
    rejected = _agrees_with_ptxas([line for line, _ in SIZES])
    assert rejected == {line for line, code in SIZES if code}


def test_a_refused_byte_count_is_reported_at_it():
    line = S2G.replace("@", "4294967311")
    text = module([line])
    (d,) = errors(text)
    src = text.split("\n")[d.loc.line - 1]
    assert src[d.loc.col - 1:].startswith("4294967311;"), (src, d.loc.col)


# the note of a refused count: (count, the note)
NOTES = [
    ("15", "write 0 or 16"),
    ("24", "write 16 or 32"),
    ("1048561", "write 1048560"),
    ("1048576", "write 1048560"),
    ("-16", "write 0"),
    ("4294967311", "write 0 or 16 (ptxas checks the literal's low 32 bits, here 15)"),
    ("0xFFFFFFF0", "write 0 (ptxas checks the literal's low 32 bits, here -16)"),
    ("0x100000008", "write 0 or 16 (ptxas checks the literal's low 32 bits, here 8)"),
]


@pytest.mark.parametrize("form", SIZE_FORMS)
@pytest.mark.parametrize("count,note", NOTES, ids=[c[0] for c in NOTES])
def test_the_note_of_a_refused_count_names_the_legal_counts_around_it(form, count, note):
    (d,) = errors(module([form.replace("@", count)]))
    assert d.notes == (note,), str(d)


def test_the_prefetch_note_reads_the_whole_literal():
    (d,) = errors(module([PREFETCH.replace("@", "4294967312")]))
    assert d.notes == ("write 1048560",), str(d)
    (d,) = errors(module([PREFETCH.replace("@", "40")]))
    assert d.notes == ("write 32 or 48",), str(d)


def test_other_immediates_name_the_legal_values_around_them_too():
    (d,) = LG.check("setmaxnreg.inc.sync.aligned.u32", [LG.OperandInfo("imm", value=30)], "sm_90a", "8.0")
    assert d.notes == ("write 24 or 32",), str(d)
    (d,) = LG.check("cp.async.ca.shared.global", [LG.OperandInfo("addr"), LG.OperandInfo("addr"),
                                                   LG.OperandInfo("imm", value=12)], "sm_90a", "8.0")
    assert d.notes == ("write 8 or 16",), str(d)


# --------------------------------------------------------------------------------- cp.reduce.async.bulk forms
OPS = ("and", "or", "xor", "add", "inc", "dec", "min", "max")
TYPES = ("b32", "u32", "s32", "b64", "u64", "s64", "f16", "bf16", "f32", "f64", "f16x2", "bf16x2", "b16", "u16", "s16")
TO_GLOBAL = {"and": "b32 b64", "or": "b32 b64", "xor": "b32 b64", "add": "u32 s32 u64 f32 f64", "add.noftz": "f16 bf16",
             "inc": "u32", "dec": "u32", "min": "u32 s32 u64 s64 f16 bf16", "max": "u32 s32 u64 s64 f16 bf16"}
TO_CLUSTER = {"and": "b32", "or": "b32", "xor": "b32", "add": "u32 s32 u64", "inc": "u32", "dec": "u32",
              "min": "u32 s32", "max": "u32 s32"}


def reduce_cases():
    """(line, legal) for every operation and type, with and without .noftz, into global and into shared::cluster."""
    out = []
    for op in OPS:
        for t in TYPES:
            for noftz in ("", ".noftz"):
                ok = t in TO_GLOBAL.get(op + noftz, "").split()
                out.append((f"cp.reduce.async.bulk.global.shared::cta.bulk_group.{op}{noftz}.{t} [%rd1], [s], 16;", ok))
            out.append((f"cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.{op}.{t} "
                        "[%rd2], [s], 16, [mb];", t in TO_CLUSTER[op].split()))
    return out


REDUCE = reduce_cases()


def test_reduction_forms_lint_as_ptxas_takes_them():
    lines = [line for line, _ in REDUCE]
    got = _flagged(module(lines), lines)
    assert sorted(got) == sorted(line for line, ok in REDUCE if not ok)
    assert {d.code for d in got.values()} <= {T, M}, {str(d) for d in got.values() if d.code not in (T, M)}
    assert sum(ok for _, ok in REDUCE) == 39


@pytest.mark.ptxas
@needs_ptxas
def test_reduction_forms_agree_with_ptxas():
    lines = [line for line, _ in REDUCE]
    assert _agrees_with_ptxas(lines) == {line for line, ok in REDUCE if not ok}


# the byte-count forms (the .tensor ones: tests/test_lint_bulk_tensor.py)
_NON_TENSOR = ("cp_reduce_async_bulk_s2g", "cp_reduce_async_bulk_s2s")


def test_reduction_forms_are_the_grammar_s():
    """The grammar spells the legal pairs above, each with and without .L2::cache_hint into global: 66 forms."""
    got = {f.opcode for f in LG.forms() if f.rule in _NON_TENSOR}
    want = set()
    for key, types in TO_GLOBAL.items():
        for t in types.split():
            for hint in ("", ".L2::cache_hint"):
                want.add(f"cp.reduce.async.bulk.global.shared::cta.bulk_group{hint}.{key}.{t}")
    for op, types in TO_CLUSTER.items():
        want |= {f"cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.{op}.{t}"
                 for t in types.split()}
    assert got == want and len(got) == 66


# the other operands of cp.reduce.async.bulk: (line, the code lint gives it or None)
R_GLOBAL = "cp.reduce.async.bulk.global.shared::cta.bulk_group"
R_CLUSTER = "cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes"
OPERANDS = [
    (f"{R_GLOBAL}.L2::cache_hint.add.u32 [%rd1], [s], 16, %rd3;", None),
    (f"{R_GLOBAL}.L2::cache_hint.add.u32 [%rd1], [s], 16, 0;", None),
    (f"{R_GLOBAL}.L2::cache_hint.add.u32 [%rd1], [s], 16, %r1;", T),
    (f"{R_GLOBAL}.L2::cache_hint.add.u32 [%rd1], [s], 16, 5.0;", T),
    (f"{R_GLOBAL}.L2::cache_hint.add.u32 [%rd1], [s], 16;", O),
    (f"{R_GLOBAL}.add.u32 [%rd1], [s], 16, %rd3;", O),
    (f"{R_GLOBAL}.add.u32 [%rd1], [s], 16, 0;", O),
    (f"{R_GLOBAL}.add.u32 [g], [%rd2], 16;", None),
    (f"{R_GLOBAL}.add.u32 [s], [s], 16;", O),
    (f"{R_GLOBAL}.add.u32 [g], [g], 16;", O),
    (f"{R_GLOBAL}.add.u32 %rd1, [s], 16;", O),
    (f"{R_GLOBAL}.add.u32 [%rd1], %rd2, 16;", O),
    (f"{R_GLOBAL}.add.u32 [%rd1], s, 16;", O),
    (f"{R_CLUSTER}.add.u32 [%rd2], [s], 16, [mb];", None),
    (f"{R_CLUSTER}.add.u32 [s], [s], 16, [mb];", None),
    (f"{R_CLUSTER}.add.u32 [%rd2], [%rd1], 16, [%rd3];", None),
    (f"{R_CLUSTER}.add.u32 [%rd2], [s], 16, [mb+8];", None),
    (f"{R_CLUSTER}.add.u32 [%rd2], [s], 16, %rd3;", None),
    (f"{R_CLUSTER}.add.u32 [%rd2], [s], 16, 0;", None),
    (f"{R_CLUSTER}.add.u32 [%rd2], [s], 16, -1;", None),
    (f"{R_CLUSTER}.add.u32 [%rd2], [s], 16, %r3;", T),
    (f"{R_CLUSTER}.add.u32 [%rd2], [s], 16, 1.0;", T),
    (f"{R_CLUSTER}.add.u32 [%rd2], [s], 16, mb;", O),
    (f"{R_CLUSTER}.add.u32 [%rd2], [s], 16, [g];", O),
    (f"{R_CLUSTER}.add.u32 [%rd2], [g], 16, [mb];", O),
    (f"{R_CLUSTER}.add.u32 [%rd2], [s], 16;", O),
    (f"{R_CLUSTER}.add.u32 [%rd2], [s], 16, [mb], 0;", O),
    (f"{R_CLUSTER}.L2::cache_hint.add.u32 [%rd2], [s], 16, [mb], %rd3;", M),
    (f"{R_CLUSTER}.multicast::cluster.add.u32 [%rd2], [s], 16, [mb], %h1;", M),
    ("cp.reduce.async.bulk.shared::cta.global.bulk_group.add.u32 [%rd1], [s], 16;", M),
    ("cp.reduce.async.bulk.global.shared.bulk_group.add.u32 [%rd1], [s], 16;", M),
    ("cp.reduce.async.bulk.global.shared::cta.add.u32 [%rd1], [s], 16;", M),
    ("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32.noftz [%rd1], [s], 16;", M),
    # the copies' [mbar] takes an integer literal too
    ("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [s], [%rd1], 16, 0;", None),
    ("cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [s], [%rd1], 16, 8;", None),
    ("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%rd2], [s], 16, 0f00000000;", T),
]


@pytest.mark.parametrize("line,code", OPERANDS, ids=[c[0] for c in OPERANDS])
def test_reduction_operands_lint_as_ptxas_takes_them(line, code):
    text = module([line])
    assert [d.code for d in errors(text)] == ([code] if code else []), [str(d) for d in errors(text)]


@pytest.mark.ptxas
@needs_ptxas
def test_reduction_operands_agree_with_ptxas():
    assert _agrees_with_ptxas([line for line, _ in OPERANDS]) == {line for line, code in OPERANDS if code}


def test_the_tensor_reductions_take_no_byte_count():
    line = "cp.reduce.async.bulk.tensor.1d.global.shared::cta.add.tile.bulk_group [%rd1, {%r1}], [s]"
    assert LG.covers(line.split()[0]) and errors(module([line + ";"])) == []
    (d,) = errors(module([line + ", 16;"]))
    assert d.code == O and "takes 2 operands (tensor, src), 3 given" in d.message, str(d)


# ------------------------------------------------------------------------------------- applypriority, discard
AP, DI = "applypriority.global.L2::evict_normal", "discard.global.L2"
L2_LINES = [
    (f"{AP} [%rd1], 128;", None),
    ("applypriority.L2::evict_normal [%rd1], 128;", None),
    (f"{AP} [%rd1], 0x80;", None),
    (f"{AP} [%rd1], 18446744073709551744;", None),
    (f"{AP} [%rd1], %r1;", O),
    (f"{AP} [%rd1], %rd2;", O),
    (f"{AP} [%rd1], %h1;", O),
    (f"{AP} [%rd1], %f1;", O),
    (f"{AP} [%rd1], 64;", O),
    (f"{AP} [%rd1], 4294967424;", O),
    (f"{AP} [%rd1], -128;", O),
    (f"{AP} [%rd1], 128.0;", T),
    (f"{AP} [%rd1], 0f43000000;", T),
    (f"{AP} [g], 128;", None),
    (f"{AP} [%rd1+128], 128;", None),
    (f"{AP} [s], 128;", O),
    ("applypriority.L2::evict_normal [s], 128;", None),
    ("applypriority.L2::evict_normal [g], 128;", None),
    (f"{AP} %rd1, 128;", O),
    (f"{AP} [%rd1];", O),
    (f"{AP} [%rd1], 128, 128;", O),
    ("applypriority.global.L2::evict_last [%rd1], 128;", M),
    ("applypriority.global.L2::evict_first [%rd1], 128;", M),
    ("applypriority.shared.L2::evict_normal [%rd1], 128;", M),
    (f"{DI} [%rd1], 128;", None),
    ("discard.L2 [%rd1], 128;", None),
    (f"{DI} [%rd1], %r1;", O),
    (f"{DI} [%rd1], %rd2;", O),
    (f"{DI} [%rd1], 64;", O),
    (f"{DI} [%rd1], 256;", O),
    (f"{DI} [%rd1], 0;", O),
    (f"{DI} [g], 128;", None),
    (f"{DI} [s], 128;", O),
    ("discard.L2 [s], 128;", None),
    (f"{DI} [%rd1];", O),
    (f"{DI} %rd1, 128;", O),
    ("discard.global [%rd1], 128;", M),
    ("discard.global.L1 [%rd1], 128;", M),
    ("discard.local.L2 [%rd1], 128;", M),
]


@pytest.mark.parametrize("line,code", L2_LINES, ids=[c[0] for c in L2_LINES])
def test_l2_line_operations_lint_as_ptxas_takes_them(line, code):
    text = module([line])
    assert [d.code for d in errors(text)] == ([code] if code else []), [str(d) for d in errors(text)]


@pytest.mark.ptxas
@needs_ptxas
def test_l2_line_operations_agree_with_ptxas():
    assert _agrees_with_ptxas([line for line, _ in L2_LINES]) == {line for line, code in L2_LINES if code}


def test_a_register_size_is_reported_once_at_it():
    for line in (f"{AP} [%rd1], %rd2;", f"{DI} [%rd1], 64;"):
        text = module([line])
        (d,) = errors(text)
        src = text.split("\n")[d.loc.line - 1]
        assert src[d.loc.col - 1:].startswith(line.split(", ")[1]), (src, d.loc.col)


# the first target and PTX ISA version of each family, and one below: (line, target, version, code)
GATES = [
    (f"{R_GLOBAL}.add.u32 [%rd1], [s], 16;", "sm_90", "8.0", None),
    (f"{R_GLOBAL}.add.u32 [%rd1], [s], 16;", "sm_89", "8.7", "PTX-E-TARGET"),
    (f"{R_GLOBAL}.add.u32 [%rd1], [s], 16;", "sm_90", "7.8", "PTX-E-VERSION"),
    (f"{R_CLUSTER}.min.s32 [%rd2], [s], 16, [mb];", "sm_90", "8.0", None),
    (f"{R_GLOBAL}.L2::cache_hint.add.noftz.f16 [%rd1], [s], 16, %rd3;", "sm_90", "8.0", None),
    (f"{AP} [%rd1], 128;", "sm_80", "7.4", None),
    (f"{AP} [%rd1], 128;", "sm_75", "8.7", "PTX-E-TARGET"),
    (f"{DI} [%rd1], 128;", "sm_80", "7.3", "PTX-E-VERSION"),
]


@pytest.mark.parametrize("line,target,version,code", GATES, ids=[f"{c[0]} {c[1]} {c[2]}" for c in GATES])
def test_targets_and_versions_lint_as_ptxas_gates_them(line, target, version, code):
    text = module([line], target, version)
    assert [d.code for d in errors(text)] == ([code] if code else []), [str(d) for d in errors(text)]


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("line,target,version,code", GATES, ids=[f"{c[0]} {c[1]} {c[2]}" for c in GATES])
def test_target_and_version_cases_agree_with_ptxas(line, target, version, code):
    _case_agrees_with_ptxas(module([line], target, version), code)


# -------------------------------------------------------------------------------------------------- builder
def _kernel(target="sm_90a"):
    m = pg.Module(target)
    k = m.entry("k")
    a = k.ld_param(k.param_ptr("p", pg.u32))
    return m, k, pg.mem(a), k.shared("s", 256), k.shared("mb", 8, align=8)


def _refused(call, code):
    """`call` raises a LegalityError of `code` that names this file as its place; returns it."""
    with pytest.raises(LegalityError) as e:
        call()
    assert e.value.code == code and e.value.loc is not None and e.value.loc.file == __file__, str(e.value)
    return e.value


@pytest.mark.parametrize("method", ["applypriority", "discard"])
def test_the_builder_refuses_a_register_size(method):
    m, k, a, s, mb = _kernel()
    for r in (k.reg(pg.u32), k.reg(pg.u64)):
        e = _refused(lambda: getattr(k, method)(a, r), O)
        assert f"{method}: operand 2 (size) must be an immediate, not a register" in str(e)
    e = _refused(lambda: getattr(k, method)(a, 64), O)
    assert "(size) must be 128, not 64" in str(e) and e.notes == ("write 128",)
    with pytest.raises(BuildError) as b:
        getattr(k, method)(a, 128.0)
    assert b.value.code == O and "size" in str(b.value)
    _refused(lambda: getattr(k, method)(a, space="shared"), M)
    assert not any(i.opcode.startswith(method) for i in k.fn.body)  # nothing was written


def test_the_builder_writes_applypriority_and_discard():
    m, k, a, s, mb = _kernel()
    k.applypriority(a)
    k.discard(a, space=None)
    k.applypriority(a, 128, space=None)
    k.ret()
    text = m.emit().text
    assert "applypriority.global.L2::evict_normal [%rd0], 128;" in text
    assert "discard.L2 [%rd0], 128;" in text and "applypriority.L2::evict_normal [%rd0], 128;" in text
    assert errors(text) == []
    _refused(lambda: _kernel("sm_75")[1].discard(pg.mem(_kernel("sm_75")[1].reg(pg.u64))), "PTX-E-TARGET")


@pytest.mark.parametrize("count,note", NOTES[:5] + NOTES[6:], ids=[c[0] for c in NOTES[:5] + NOTES[6:]])
def test_the_builder_refuses_a_byte_count_with_the_same_note(count, note):
    m, k, a, s, mb = _kernel()
    n = _literal(count) if not count.startswith("-") else int(count)
    e = _refused(lambda: k.cp_reduce_async_bulk(a, s, n, "add", "u32"), O)
    assert "(size) must be a multiple of 16 from 0 to 1048560" in str(e) and e.notes == (note,), (str(e), e.notes)
    e = _refused(lambda: k.cp_async_bulk(a, s, n, dst_space="global", src_space="shared::cta"), O)
    assert e.notes == (note,), e.notes
    e = _refused(lambda: k.cp_reduce_async_bulk(s, s, n, "min", "s32", dst_space="shared::cluster", mbarrier=mb), O)
    assert e.notes == (note,), e.notes


def test_the_builder_reads_a_byte_count_as_ptxas_does():
    m, k, a, s, mb = _kernel()
    e = _refused(lambda: k.cp_reduce_async_bulk(a, s, 4294967311, "add", "u32"), O)
    assert e.notes == ("write 0 or 16 (ptxas checks the literal's low 32 bits, here 15)",)
    k.cp_reduce_async_bulk(a, s, 4294967312, "add", "u32")  # 16, as ptxas reads it
    e = _refused(lambda: k.cp_reduce_async_bulk(a, s, k.reg(pg.u64), "add", "u32"), T)
    assert "(size) is a .u64 register; .u32 expected" in str(e)
    with pytest.raises(BuildError) as b:
        k.cp_reduce_async_bulk(a, s, 16.0, "add", "u32")
    assert b.value.code == O and "size" in str(b.value)


def test_the_builder_refuses_reductions_ptxas_refuses():
    m, k, a, s, mb = _kernel()
    assert "element type" in str(_refused(lambda: k.cp_reduce_async_bulk(a, s, 16, "and", "u32"), T))
    _refused(lambda: k.cp_reduce_async_bulk(a, s, 16, "min", "u64", dst_space="shared::cluster", mbarrier=mb), T)
    _refused(lambda: k.cp_reduce_async_bulk(a, s, 16, "mul", "u32"), M)
    _refused(lambda: k.cp_reduce_async_bulk(a, s, 16, "add", "u32", dst_space="shared::cta"), M)
    _refused(lambda: k.cp_reduce_async_bulk(a, s, 16, "add", "u32", dst_space="shared::cluster"), O)
    _refused(lambda: k.cp_reduce_async_bulk(a, s, 16, "add", "u32", mbarrier=mb), O)
    _refused(lambda: k.cp_reduce_async_bulk(s, s, 16, "add", "u32", dst_space="shared::cluster", mbarrier=mb,
                                            cache_policy=k.reg(pg.u64)), M)
    with pytest.raises(BuildError) as b:
        k.cp_reduce_async_bulk(a, s, 16, "add", "f99")
    assert b.value.code == T
    _refused(lambda: _kernel("sm_80")[1].cp_reduce_async_bulk(a, s, 16, "add", "u32"), "PTX-E-TARGET")


def _build_every_reduction():
    """A module with every legal cp.reduce.async.bulk form built by the builder (.L2::cache_hint ones with a
    createpolicy register), and the opcodes it wrote."""
    m, k, a, s, mb = _kernel()
    pol = k.createpolicy("evict_first")
    r = k.reg(pg.u32)
    for key, types in TO_GLOBAL.items():
        for t in types.split():
            k.cp_reduce_async_bulk(a, s, 32, key.split(".")[0], t)
            k.cp_reduce_async_bulk(a, s, r, key.split(".")[0], t, cache_policy=pol)
    for op, types in TO_CLUSTER.items():
        for t in types.split():
            k.cp_reduce_async_bulk(s, s, 16, op, t, dst_space="shared::cluster", mbarrier=mb)
    k.ret()
    return m, {i.opcode for i in k.fn.body if i.opcode.startswith("cp.reduce")}


def test_the_builder_writes_every_reduction_form():
    m, ops = _build_every_reduction()
    assert ops == {f.opcode for f in LG.forms() if f.rule in _NON_TENSOR}
    assert errors(m.emit().text) == []


@pytest.mark.ptxas
@needs_ptxas
def test_every_reduction_the_builder_writes_assembles():
    m, _ops = _build_every_reduction()
    k2 = m.entry("k2")
    a = pg.mem(k2.ld_param(k2.param_ptr("p", pg.u32)))
    k2.applypriority(a)
    k2.discard(a)
    k2.ret()
    _case_agrees_with_ptxas(m.emit().text, None)


# --------------------------------------------------------------------- completion mechanism and leading operands
# The builder's cp_async_bulk and cp_reduce_async_bulk check an mbarrier against the completion mechanism, and convert
# their [dst], [src], size, in one place (AsyncCopyOps._bulk_operands); lint checks the same mistakes in PTX text
# through legality's operand lists, where ptxas 13.0 refuses each ("Arguments mismatch", "Illegal modifier", "State
# space mismatch between instruction and address").
G2C = "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
S2G_COPY = "cp.async.bulk.global.shared::cta.bulk_group"
RED_G = "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32"
RED_C = "cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.add.u32"


def test_the_builder_says_which_completion_and_leading_operands_a_bulk_operation_takes():
    m, k, a, s, mb = _kernel()
    e = _refused(lambda: k.cp_async_bulk(s, a, 16), O)
    assert e.message == f"{G2C} completes on an mbarrier: pass mbarrier="
    e = _refused(lambda: k.cp_async_bulk(s, s, 16, src_space="shared::cta"), O)
    assert e.message == ("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes completes on an "
                         "mbarrier: pass mbarrier=")
    e = _refused(lambda: k.cp_async_bulk(a, s, 16, dst_space="global", src_space="shared::cta", mbarrier=mb), O)
    assert e.message == "a bulk copy to global memory completes in a bulk group, not on an mbarrier"
    e = _refused(lambda: k.cp_reduce_async_bulk(a, s, 16, "add", "u32", mbarrier=mb), O)
    assert e.message == "a bulk reduction into global memory completes in a bulk group, not on an mbarrier"
    e = _refused(lambda: k.cp_reduce_async_bulk(s, s, 16, "add", "u32", dst_space="shared::cluster"), O)
    assert e.message == f"{RED_C} completes on an mbarrier: pass mbarrier="
    # the leading operands: what each must be, named by its role
    body = len(k.fn.body)
    for call, code, message in (
            (lambda: k.cp_async_bulk(5, a, 16, mbarrier=mb), T,
             "destination: expected a register, variable or mem(base, offset), got int"),
            (lambda: k.cp_async_bulk(s, None, 16, mbarrier=mb), T,
             "source: expected a register, variable or mem(base, offset), got NoneType"),
            (lambda: k.cp_async_bulk(s, a, "16", mbarrier=mb), O, "size: expected a register or an int, got str"),
            (lambda: k.cp_reduce_async_bulk(a, k.reg(pg.f32), 16, "add", "u32"), T,
             "source register %f0 is .f32; addresses are .u32 or .u64"),
            (lambda: k.cp_reduce_async_bulk(s, s, 16, "add", "u32"), O,
             "cp.reduce.async.bulk shared::cta -> global: operand 1 (dst) names a .shared variable; it takes .global "
             "variables only")):
        with pytest.raises(BuildError) as b:
            call()
        assert (b.value.code, b.value.message) == (code, message), str(b.value)
        assert b.value.loc is not None and b.value.loc.file == __file__, str(b.value)
    assert len(k.fn.body) == body, "an instruction was emitted before the error"


# (the PTX line, the error code, the text at lint's column, its message)
BULK_MISTAKES = [
    (f"{G2C} [s], [%rd1], 16;", O, G2C,
     "cp.async.bulk global -> shared::cluster takes 4 operands (dst, src, size, mbar), 3 given"),
    (f"{S2G_COPY} [%rd1], [s], 16, [mb];", O, S2G_COPY,
     "cp.async.bulk shared::cta -> global takes 3 operands (dst, src, size), 4 given"),
    (f"{RED_G} [%rd1], [s], 16, [mb];", O, RED_G,
     "cp.reduce.async.bulk shared::cta -> global takes 3 operands (dst, src, size), 4 given"),
    (f"{RED_C} [s], [s], 16;", O, RED_C,
     "cp.reduce.async.bulk shared::cta -> shared::cluster takes 4 operands (dst, src, size, mbar), 3 given"),
    ("cp.async.bulk.global.shared::cta.mbarrier::complete_tx::bytes [%rd1], [s], 16, [mb];", M, "cp.async.bulk.",
     ".mbarrier::complete_tx::bytes is not a legal completion mechanism for cp.async.bulk shared::cta -> global; the "
     "completion mechanism must be .bulk_group"),
    ("cp.reduce.async.bulk.shared::cluster.shared::cta.bulk_group.add.u32 [s], [s], 16;", M, "cp.reduce.",
     ".bulk_group is not a legal completion mechanism for cp.reduce.async.bulk shared::cta -> shared::cluster; the "
     "completion mechanism must be .mbarrier::complete_tx::bytes"),
    (f"{S2G_COPY} %rd1, [s], 16;", O, "%rd1,",
     "cp.async.bulk shared::cta -> global: operand 1 (dst) must be an address [a], not a register"),
    (f"{S2G_COPY} 5, [s], 16;", O, "5,",
     "cp.async.bulk shared::cta -> global: operand 1 (dst) must be an address [a], not an immediate"),
    (f"{RED_G} [%rd1], s, 16;", O, "s, 16",
     "cp.reduce.async.bulk shared::cta -> global: operand 2 (src) must be an address [a], not a variable name"),
    (f"{S2G_COPY} [%rd1], [g], 16;", O, "[g]",
     "cp.async.bulk shared::cta -> global: operand 2 (src) names a .global variable; it takes .shared variables only"),
    (f"{RED_G} [s], [s], 16;", O, "[s], [s]",
     "cp.reduce.async.bulk shared::cta -> global: operand 1 (dst) names a .shared variable; it takes .global "
     "variables only"),
    (f"{G2C} [s], [%rd1], [mb], 16;", O, "[mb]",
     "cp.async.bulk global -> shared::cluster: operand 3 (size) must be a register or an immediate of .u32, not an "
     "address [a]"),
    (f"{RED_C} [s], [s], 16, [g];", O, "[g]",
     "cp.reduce.async.bulk shared::cta -> shared::cluster: operand 4 (mbar) names a .global variable; it takes "
     ".shared variables only"),
]


@pytest.mark.parametrize("line,code,at,message", BULK_MISTAKES, ids=[m[0] for m in BULK_MISTAKES])
def test_lint_says_which_completion_and_leading_operands_a_bulk_operation_takes(line, code, at, message):
    text = module([line])
    (d,) = errors(text)
    src = text.split("\n")[d.loc.line - 1]
    assert (d.code, d.message) == (code, message), str(d)
    assert src == line and src[d.loc.col - 1:].startswith(at), (src, d.loc.col)


@pytest.mark.ptxas
@needs_ptxas
def test_the_bulk_mistakes_agree_with_ptxas():
    lines = [line for line, *_ in BULK_MISTAKES]
    assert _agrees_with_ptxas(lines) == set(lines)
