"""Signed and unsigned integers, and floating-point values, in constant expressions, computed as ptxas 13.0
computes them, probed over every operator and kind of operand; where it reports an error in one; and what a
DWARF section's data takes.

What ptxas 13.0 showed (the tests marked ptxas run every case below through it, reading each value back from the
initial value of a .global .b64 variable in the cubin):
- an integer literal is .u64 where it has a U or its value, read modulo 2^64, is above 2^63 - 1, in any base
  (`0x8000000000000000`, `9223372036854775808`, `01000000000000000000000`, `0b1` and 63 zeros), else .s64;
  18446744073709551616 reads as 0 and is signed. `-x` and `+x` have the type of x; `~x` is unsigned; `!x`, a
  comparison, `&&` and `||` are a signed 0 or 1.
- `+ - * / & | ^` and the comparisons follow C's usual arithmetic conversions: unsigned where either operand is
  (`-1 < 1U` is 0, `-1 / 2U` is 2^63 - 1); a shift has the type of its left operand (`(1<<63) >> 63` is -1,
  `(1U<<63) >> 63` is 1) and counts modulo 64 (`1 << 64` is 1, `1 << -1` is 2^63, `1 << 4294967297` is 2).
- `%` computes in unsigned integers whatever its operands and gives an unsigned one: `-7 % 2` is 1, `7 % -2` is
  7, `-7 % -2` is -7 (2^64 - 7), `(1<<63) % -1` is 2^63; so it never crashes. `/` in signed integers truncates
  toward zero, and -2^63 / -1 there crashes ptxas (a floating-point exception); `x / 0` and `x % 0` are
  "Constant expression has division by zero".
- `c ? a : b` has the type of the branch it takes, not C's common type: `(0 ? 1 : ~0) < 0` is 0,
  `(1 ? -1 : 1U) < 0` is 1.
- everything wraps modulo 2^64 without a word: `0x7FFFFFFFFFFFFFFF + 1` is -2^63, `-(-2^63)` is -2^63.
- floating-point values (decimal, 0d, a 0f literal in its own parentheses) add, subtract, multiply, divide (by
  0.0 or -0.0: division by zero) and compare as .f64 (NaN compares unequal to itself); any other operator, `~`,
  `!` and `?:` are "Integer constant expression expected", an integer and a floating-point operand "Constant
  expression type mismatch". A 0f literal's 32 bits are the low bits of a .f64 wherever an operator reads it
  or a 64-bit variable holds it: `(0f3FC00000) >= 1.5` is 0, `.f64 h = 0f3FC00000` holds 5.3e-315; an .f32
  variable holds 1.5 for `(0f3FC00000)` and `+(0f3FC00000)`, but -0.0 for `-(0f3FC00000)` and 0.0 for
  `2.0*(0f3FC00000)`.
- an error in an operator is reported at the line of the last token ptxas has read when it takes the operator's
  expression as a whole: its last token for `*`, `/` and `%` (nothing after the right operand can extend it), the
  token after it for the others and `?:` (`1.5 +\\n 1\\n;` is an error at the `;`'s line). `~` and `!` are
  reported at their own line, except a `!` that starts an instruction's operand, at the line of the token after
  it (`!%p` is an operand too). An initial value of the wrong kind, a floating-point symbol or address offset,
  and the other errors of a whole initial value, are reported at the line of the token after the value.
- a section's data value is an integer literal, after a `-` a signed one (`-1U` and `-0x8000000000000000` are
  syntax errors at the literal); `(1)`, `1+1`, `+1`, `~1`, `--1`, `1.5` and `0f3F800000` are syntax errors where
  ptxas stops reading; a label or section name takes `+N` only (`L1-1` is a syntax error, `L2-L1` is not).

Where lint and ptxas still differ (left alone here): `.b8 (1` is an error at the `(` for ptxas, at the next line
for lint. (A section's data against its type, `.b8 256` and a label in .b8 data: tests/test_lint_section_data.py.)
"""
from __future__ import annotations

import os
import re
import struct
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

import pytest

from ptxgen import lint as L
from ptxgen.ir import Addr, Imm
from ptxgen.parse import parse, parse_statement, statement_records

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_lint_conditional_version import _sections  # noqa: E402

M64 = (1 << 64) - 1
HDR = ".version 8.7\n.target sm_90a\n.address_size 64\n"

# ------------------------------------------------------------------------------------------- the matrix
BINARY = ("+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "&&", "||", "==", "!=", "<", "<=", ">", ">=")
UNARY = ("-", "~", "!", "+")
# small and large, negative, unsigned (a U, a literal above 2^63 - 1 in each base, `-` of an unsigned one, `~`),
# -2^63 as an expression, a comparison
ATOMS = ("0", "1", "7", "64", "-1", "-7", "0x7FFFFFFFFFFFFFFF", "(-9223372036854775807-1)", "0x8000000000000000",
         "9223372036854775808", "18446744073709551615", "01000000000000000000000", "1U", "0U", "-1U", "~0", "(1 < 2)")
TYPED = ("1", "-1", "-7", "0x8000000000000000", "1U", "-1U", "~0", "(1 < 2)")
SHIFTED = ("1", "-1", "1U", "0x8000000000000000", "(-9223372036854775807-1)", "0x123456789ABCDEF0", "~0")
COUNTS = ("0", "1", "32", "63", "64", "65", "127", "128", "-1", "-63", "-64", "-65", "1U", "64U",
          "0xFFFFFFFFFFFFFFFF", "4294967296", "4294967297", "0x8000000000000000")
LITERALS = ("9223372036854775807", "9223372036854775808", "18446744073709551615", "0x7FFFFFFFFFFFFFFF",
            "0x8000000000000000", "0xFFFFFFFFFFFFFFFF", "0777777777777777777777", "01000000000000000000000",
            "0b" + "1" * 63, "0b1" + "0" * 63, "9223372036854775807U", "0U", "0xFFFFFFFF", "18446744073709551616",
            "18446744073709551617", "27670116110564327424", "18446744073709551616U")
FLOATS = ("1.5", "-2.5", "-0.0", "0d3FF8000000000000", "(0f3FC00000)", "(0d7FF8000000000000)", "0d7FF0000000000000",
          "1e300")


def signedness(e: str) -> str:
    """An expression that is 1 where `e` is unsigned, 0 where it is signed."""
    return f"(({e})*0 - 1 > 0)"


def _unary(a: str, u: str) -> str:
    return f"{u}{a}" if a[0] not in "-+" else f"{u}({a})"


def expressions():
    """Every expression whose value is compared with ptxas's (in the order they are written)."""
    out = [f"{a} {op} {b}" for op in BINARY for a in ATOMS for b in ATOMS]
    out += [signedness(f"{a} {op} {b}") for op in BINARY for a in TYPED for b in TYPED]
    out += [f"({a} {op} {b}) >> 63" for op in ("+", "%", "/", "<<", ">>", "<") for a in TYPED for b in TYPED]
    for a in ATOMS:
        for u in UNARY:
            e = _unary(a, u)
            out += [e, signedness(e)] + [_unary(f"({e})", u2) for u2 in UNARY]
    for a in SHIFTED:
        for b in COUNTS:
            out += [f"{a} << {b}", f"{a} >> {b}", signedness(f"{a} >> {b}")]
    for lit in LITERALS:
        out += [lit, f"-{lit}", f"{lit} >> 63", f"{lit} < 0", f"{lit} / -1", f"-{lit} / 2", signedness(lit),
                signedness(f"-{lit}"), f"{lit} - 1 < 0"]
    for c in ("0", "1", "1U", "0x8000000000000000"):
        for a in TYPED:
            for b in TYPED:
                e = f"({c} ? {a} : {b})"
                out += [e, f"{e} >> 63", f"{e} / -1", signedness(e)]
    for a in FLOATS:
        for b in FLOATS:
            out += [f"{a} {op} {b}" for op in ("+", "-", "*", "==", "!=", "<", ">=") + (("/",) if b != "-0.0" else ())]
        out += [f"-{a}" if a[0] != "-" else f"-({a})", f"+({a})", signedness(f"({a}) < 1.0")]
    out += ["0.1 + 0.2", "(0.1 + 0.2) == 0.3", "1.0 / 3.0", "1e300 * 1e300", "0.0 == -0.0", "1e-300 * 1e-300",
            "0d7FF0000000000000 - 0d7FF0000000000000", "(1.5 < 2.5) + 1U", "2.0 * (0f3DCCCCCD)", "(0f3DCCCCCD)",
            "0f3DCCCCCD"]
    return list(dict.fromkeys(out))


# expressions ptxas refuses (with lint's error kind), besides those of the matrix
REFUSED = [f"{a} {op} 1.5" for op in BINARY for a in ("1", "1U")] + [f"1.5 {op} -1" for op in BINARY] + \
    [f"1.5 {op} 2.5" for op in ("%", "<<", ">>", "&", "|", "^", "&&", "||")] + \
    ["~1.5", "!1.5", "~(0f3FC00000)", "!0d3FF8000000000000", "1 ? 1.5 : 2", "1.5 ? 1 : 2", "0 ? 1 : 2.5",
     "1.0 / 0.0", "1.0 / -0.0", "0.0 / 0.0", "(0f3FC00000) / 0.0", "(1.5 < 2.5) * 1.0",
     "(1<<63) / -1", "(-9223372036854775807-1) / -1", "(1 ? (1<<63) : 1U) / -1", "(1<<63) / (0 ? 1U : -1)",
     "1 / 0", "1 % 0", "-1 / 0U", "1U % 0", "0 / 0", "1 / (1 - 1)", "0 && 1 / 0", "1 || 1 % 0", "0 ? 1 / 0 : 2"]


def _module(exprs) -> str:
    """One .global .b64 variable per expression, v0, v1, ..., each on its own line."""
    return HDR + "".join(f".visible .global .align 8 .b64 v{i} = {e};\n" for i, e in enumerate(exprs))


def _bits(v) -> int:
    """The 64 bits a .b64 variable holds for the value `v` (an int, or a float as its .f64 bits)."""
    return struct.unpack("<Q", struct.pack("<d", v))[0] if isinstance(v, float) else v & M64


def lint_values(exprs):
    """{expression: ('v', bits) or ('e', line, message)} as lint computes them in _module(exprs)."""
    text = _module(exprs)
    res = parse(text, "t.ptx")
    first = HDR.count("\n") + 1
    out = {}
    for d in res.diagnostics:
        if d.severity == "error":
            out.setdefault(exprs[d.loc.line - first], ("e", d.loc.line - first + 1, d.message))
    for v in res.module.vars:
        e = exprs[int(v.name[1:])]
        if e not in out:
            (x,) = v.init
            out[e] = ("v", _bits(x))
    return out


def test_every_expression_of_the_matrix_has_a_value_or_an_error():
    exprs = expressions()
    got = lint_values(exprs)
    assert len(got) == len(exprs) > 5000
    errors = [e for e in exprs if got[e][0] == "e"]
    # the matrix's errors: x / 0 and x % 0, -2^63 / -1 in signed integers, and floating-point ones in none
    assert all(re.search(r"[/%] (0U?|\(-9223|-1)", e) for e in errors), errors[:10]
    assert 30 < len(errors) < 120, len(errors)


# ----------------------------------------------------------------------------- values lint pins down
# (expression, the 64 bits ptxas 13.0 wrote into a .global .b64 initial value; a float as its .f64 bits)
PINNED = [
    ("-1 < 1U", 0), ("(1<<63) >> 63", M64), ("-1 / 2U", (1 << 63) - 1), ("(1U<<63) >> 63", 1),
    ("-7 / 2", -3 & M64), ("7 / -2", -3 & M64), ("-7 % 2", 1), ("7 % -2", 7), ("-7 % -2", -7 & M64), ("-7 % 3", 0),
    ("(1<<63) % -1", 1 << 63), ("-1 % 2U", 1), ("-7 / 2U", (M64 - 6) // 2),
    ("9223372036854775808 < 0", 0), ("9223372036854775808 >> 63", 1), ("-9223372036854775808 / -1", 0),
    ("0x8000000000000000 / -1", 0), ("01000000000000000000000 < -1", 1), ("18446744073709551616 - 1 < 0", 1),
    ("1U < -1", 1), ("~0 < 0", 0), ("(0 ? 1 : ~0) >> 63", 1), ("(1 ? -1 : 1U) < 0", 1), ("(0 ? 1 : 1U) / -1", 0),
    ("-1 >> 1U", M64), ("1 << 64", 1), ("1 << 65", 2), ("1 << -1", 1 << 63), ("-8 >> 4294967297", -4 & M64),
    ("0x7FFFFFFFFFFFFFFF + 1 < 0", 1), ("-(-9223372036854775807-1) < 0", 1), ("(0xFFFFFFFFFFFFFFFF + 1) == 0", 1),
    ("!(~18446744073709551615)", 1), ("((1 < 2)*0 - 1 > 0)", 0), ("((~0)*0 - 1 > 0)", 1),
    ("((-7 % 7)*0 - 1 > 0)", 1), ("((-1U)*0 - 1 > 0)", 1),
    ("(0f3FC00000) >= 1.5", 0), ("-(0f3FC00000)", 0x800000003FC00000), ("2.0 * (0f3FC00000)", 0x000000007F800000),
    ("0f3FC00000", 0x3FC00000), ("(0f3FC00000)", 0x3FC00000), ("1.5 + 1.5", 0x4008000000000000),
    ("(0d7FF8000000000000) == (0d7FF8000000000000)", 0), ("0.0 == -0.0", 1),
]


def test_pinned_values():
    got = lint_values([e for e, _ in PINNED])
    assert [got[e] for e, _ in PINNED] == [("v", v) for _, v in PINNED], \
        [(e, got[e], hex(v)) for e, v in PINNED if got[e] != ("v", v)]


def _init(decl: str):
    res = parse(f"{HDR}{decl}\n", "t.ptx")
    assert res.ok, [str(d) for d in res.diagnostics]
    return tuple(res.module.vars[0].init)


def test_a_0f_literal_is_its_bits_where_an_operator_or_a_64_bit_variable_reads_it():
    small = struct.unpack("<d", struct.pack("<Q", 0x3FC00000))[0]  # about 5.3e-315
    assert _init(".global .f32 h[4] = {(0f3FC00000), +(0f3FC00000), 0f3FC00000, ((0f3FC00000))};") == \
        (1.5, 1.5, 1.5, 1.5)
    assert _init(".global .f32 h[2] = {-(0f3FC00000), 2.0*(0f3FC00000)};") == (-small, 2 * small)
    assert _init(".global .f64 h[3] = {(0f3FC00000), 0f3FC00000, 0d3FF8000000000000};") == (small, small, 1.5)
    assert _init(".global .b64 h = 0f3FC00000;") == (small,)
    assert _init(".global .b32 h = 0f3FC00000;") == (1.5,)


# (a literal, negated or not, the value lint gives it: unsigned 0 .. 2^64 - 1 where it is .u64)
NEGATED = [("-1U", M64), ("-0x8000000000000000", 1 << 63), ("-9223372036854775808", 1 << 63), ("-1", -1),
           ("0xFFFFFFFFFFFFFFFF", M64), ("-01777777777777777777777", 1), ("0xFFFFFFFFFFFFFFFFU", M64), ("-0U", 0),
           ("-9223372036854775807", -9223372036854775807)]


@pytest.mark.parametrize("text, want", NEGATED, ids=[t for t, _ in NEGATED])
def test_the_fast_path_reads_a_negated_unsigned_literal_as_the_expression_does(text, want):
    for st in (f"mov.u64 %rd1, {text};", f"ld.global.u64 %rd1, [%rd2+{text}];", f"add.s64 %rd1, %rd2, {text};"):
        fast = statement_records(st)
        assert fast is not None and fast[6] == parse_statement(st)[6], (fast, parse_statement(st))
    assert statement_records(f"mov.u64 %rd1, {text};")[6][1] == ("i", want)
    res = parse(f"{HDR}.visible .entry k()\n{{\n.reg .b64 %rd<3>;\nmov.u64 %rd1, ({text});\n"
                f"ld.global.u64 %rd1, [%rd2+({text})];\nret;\n}}\n", "t.ptx")
    assert res.ok, [str(d) for d in res.diagnostics]
    mov, ld = [i for i in res.module.functions[0].body if getattr(i, "opcode", "")[:2] in ("mo", "ld")]
    assert mov.operands[1] == Imm(want) and isinstance(ld.operands[1], Addr) and ld.operands[1].offset == want


# ------------------------------------------------------------------------------------ where errors are
def _kernel(body: str) -> str:
    return (f"{HDR}.global .b8 g[64];\n.visible .entry k()\n{{\n.reg .b64 %rd<3>;\n.reg .pred %p;\n{body}\n"
            "ret;\n}\n")


def _scope(decl: str) -> str:
    return f"{HDR}.global .b8 g[64];\n.func f()\n{{\nret;\n}}\n{decl}\n.visible .entry k()\n{{\nret;\n}}\n"


# multi-line expressions in each place: an initial value, an instruction's operand, an address offset
LAYOUTS = [
    "1.5 +\n 1", "1.5\n + 1", "1.5\n + 1\n + 2", "1.5 *\n 1\n + 2", "(1.5 +\n 1)\n * 2", "1 /\n 0", "1 / (1 -\n 1)\n",
    "1 / (1 -\n 1\n)", "~\n1.5", "!\n1.5", "1.5 <<\n 1", "1 + 1.5 *\n 2.0", "1.5 * 2.0 +\n 1", "1 ? 2 :\n (3.0)",
    "(1 ? 2 : 3.0\n)", "1 &&\n 1.5", "1 %\n 0", "1 + (1 /\n 0)", "1.5 + 1 // c\n\n", "1.5 * (1\n)", "1.5 *\n (1)",
    "(1.5) *\n 1", "((1.5\n)) * ((1\n))\n", "1.5 %\n 2.5", "1.5\n %\n 2.5", "-\n(1.5 + 1)", "~\n(1.5)\n", "1 & \n1.0",
    "1 & 1.0\n\n", "1 ==\n 1.0", "1 <\n 2.0 + 3", "1 ?\n 1.0 :\n 2", "1 /* c\n */ + 1.5", "1 + /* a\n b */ 1.5\n /* c\n d */",
    "(1.5 + 1) /* x\n*/", "(((1 + 1.5)))\n", "1 + ((1.5))\n", "1.5 ||\n 1.5\n", "1.5\n <\n 1\n", "0 ? 1/0\n : 2",
    "0 ? 1 :\n 1/\n0", "2 * 3 /\n (2 - 2)\n + 1", "1 -\n -\n 1.5", "1 - -\n(1.5)", "(0f3F800000) <<\n 1", "!!\n1.5",
    "!\n!\n1.5", "!\n~\n1.5", "~\n!\n1.5", "!\n(\n1.5)", "!\n 1.5\n * 1", "- ~\n 1.5", "1 + !\n1.5", "~ ~\n1.5",
    "!\n\n1.5\n", "~\n\n1.5\n", "~\n-\n1.5",
]
PLACES = [_scope(f".global .b64 h[1] = {{\n  {e}\n}};") for e in LAYOUTS] + \
    [_kernel(f"mov.b64 %rd1, {e};") for e in LAYOUTS] + \
    [_kernel(f"ld.global.u64 %rd1, [%rd2+{e}];") for e in LAYOUTS] + [_kernel(x) for x in [
        "mov.v2.b64 {%rd1,%rd2}, {1, !\n1.5};", "setp.eq.u32 %p, 1, !\n1.5;", "mov.b64 %rd1, (!\n1.5);",
        "ld.global.u64 %rd1, [1.5\n];", "ld.global.u64 %rd1, [%rd2 +\n 1.5\n];", "ld.global.u64 %rd1, [g + (1.5)\n];",
        "mov.u64 %rd1, g+\n1.5\n;", "mov.u64 %rd1, g+(1.5)\n;", "mov.u64 %rd1, g + 1\n + 1.5\n;", "mov.u64 %rd1, g+\n1/0\n;"]] + \
    [_scope(x) for x in [
        ".global .f32 h = 1 +\n 2\n;", ".global .u32 h = 1.5\n;", ".global .u32 h = (1.5\n)\n;", ".global .f32 h = g\n;",
        ".global .u64 h = f +\n 4\n;", ".global .u64 h = generic(f)\n;", ".global .u64 h = u\n;",
        ".global .u32 h[2][2] = {1\n, 2};", ".global .f16 h = 1\n;", ".global .u64 h = g + 1.5\n;",
        ".global .u64 h[2] = {g,\n f +\n 4\n};", ".global .f32 h[2] = {1 +\n 2\n, 1.0};", ".global .u32 h = ~\n1.5\n;",
        ".global .u32 h[2] = {1, !\n1.5};", ".global .u32 h = !\n!\n1.5\n;", ".global .u32 h = 1 ?\n 1.0 : 2\n;"]]


def errors(text):
    return [d for d in L.lint_ptx(text, "t.ptx") if d.severity == "error"]


def test_each_layout_is_one_error():
    for text in PLACES:
        ds = errors(text)
        assert len(ds) == 1 and ds[0].code in ("PTX-E-SYNTAX", "PTX-E-DECL"), (text, [str(d) for d in ds])


# (module, the line of lint's error, the text there from its column)
AT = [
    (_kernel("mov.b64 %rd1, 1.5 +\n 1;"), 10, ";"),
    (_kernel("mov.b64 %rd1, 1.5 + 1;"), 9, "+ 1;"),
    (_kernel("mov.b64 %rd1, 1.5 *\n 1\n + 2;"), 10, "1"),
    (_kernel("mov.b64 %rd1, 1 / (1 -\n 1\n);"), 11, ");"),
    (_kernel("mov.b64 %rd1, 1 &&\n 1.5;"), 10, ";"),
    (_kernel("mov.b64 %rd1, ~\n1.5;"), 9, "~"),
    (_kernel("mov.b64 %rd1, !\n1.5;"), 10, "1.5;"),
    (_kernel("mov.b64 %rd1, (1 ? 2 : 3.0\n);"), 10, ");"),
    (_kernel("mov.b64 %rd1, 1 ? 2 : (3.0);"), 9, ";"),
    (_kernel("ld.global.u64 %rd1, [%rd2 +\n 1.5\n];"), 11, "];"),
    (_kernel("ld.global.u64 %rd1, [%rd2 + 1.5];"), 9, "+ 1.5];"),
    (_kernel("mov.u64 %rd1, g+(1.5)\n;"), 10, ";"),
    (_scope(".global .u32 h = (1.5\n)\n;"), 11, ";"),
    (_scope(".global .f32 h[2] = {1.0, 1 +\n 2\n};"), 11, "};"),
    (_scope(".global .f32 h[2] = {1.0, 1 + 2};"), 9, "1 + 2};"),
]


@pytest.mark.parametrize("text, line, at", AT)
def test_an_error_is_at_the_line_ptxas_names(text, line, at):
    (d,) = errors(text)
    assert (d.loc.line, text.split("\n")[d.loc.line - 1][d.loc.col - 1:]) == (line, at), str(d)
    assert d.notes, str(d)


# ------------------------------------------------------------------------------------ a section's data
def section(data: str) -> str:
    return f"{HDR}.visible .entry k()\n{{\nret;\n}}\n.section .debug_abbrev\n{{\nL1:\n{data}\nL2:\n}}\n"


# (data line, where lint's syntax error starts, or None where ptxas takes it)
DATA = [
    (".b8 1", None), (".b8 -1", None), (".b8 - 1", None), (".b8 -\n5", None), (".b8 1U", None), (".b8 0x10", None),
    (".b8 -0x10", None), (".b8 0b11", None), (".b8 017", None), (".b8 -01", None), (".b64 -9223372036854775807", None),
    (".b64 -0x7FFFFFFFFFFFFFFF", None), (".b64 -0777777777777777777777", None), (".b64 -18446744073709551616", None),
    (".b32 L1", None), (".b32 L1+1", None), (".b32 L1 + 1U", None), (".b32 L2-L1", None), (".b32 L1+0x8000000000000000", None),
    (".b32 .debug_abbrev+4", None), (".b64 18446744073709551615", None), (".b8 1 ,2", None),
    (".b8 +1", "+1"), (".b8 -1U", "1U"), (".b8 -\n1U", "1U"), (".b64 -0x8000000000000000", "0x8000000000000000"),
    (".b64 -9223372036854775808", "9223372036854775808"), (".b64 -01000000000000000000000", "01000000000000000000000"),
    (".b8 -0U", "0U"), (".b8 (1)", "(1)"), (".b8 1+1", "+1"), (".b8 1 + 1", "+ 1"), (".b8 -(1)", "(1)"),
    (".b8 ~1", "~1"), (".b8 !1", "!1"), (".b8 --1", "-1"), (".b8 - -1", "-1"), (".b8 1.5", "1.5"), (".b8 -1.5", "1.5"),
    (".b32 0f3F800000", "0f3F800000"), (".b64 0d3FF0000000000000", "0d3FF0000000000000"), (".b8 (0f3F800000)", "(0f"),
    (".b8 1e3", "1e3"), (".b8 1.0e3", "1.0e3"), (".b8 1,\n2+2", "+2"), (".b8 1, 2 * 3", "* 3"), (".b8 1*1", "*1"),
    (".b8 1<<2", "<<2"), (".b8 1 == 1", "== 1"), (".b8 1-1", "-1"), (".b8 0-1", "-1"), (".b8 1 ? 2 : 3", "? 2"),
    (".b32 L1-1", "1"), (".b32 L1 - 1", "1"), (".b32 L1-\n0", "0"), (".b32 .debug_abbrev-4", "-4"),
    (".b32 L1+(1)", "(1)"), (".b32 L1+-1", "-1"), (".b32 L1+1.5", ".5"), (".b8 1 /* c */ + 1", "+ 1"),
]


@pytest.mark.parametrize("data, at", DATA, ids=[d for d, _ in DATA])
def test_section_data_lints_as_ptxas_takes_it(data, at):
    text = section(data)
    ds = errors(text)
    if at is None:
        assert ds == [], [str(d) for d in ds]
        return
    (d,) = ds
    assert d.code == "PTX-E-SYNTAX", str(d)
    assert "\n".join(text.split("\n")[d.loc.line - 1:])[d.loc.col - 1:].startswith(at), str(d)


def test_section_data_errors_say_what_to_write():
    for data, note in [(".b8 1+1", "write the value as a literal: `.b8 2`"), (".b8 -1U", "write `.b8 -1`"),
                       (".b64 -0x8000000000000000", "write `.b64 0x8000000000000000`"),
                       (".b32 1.5", "write `.b32 0x3FC00000`, its bits"), (".b32 L1-1", "write `L1+N` with N from 0, "
                                                                          "or the difference of two labels (`L2-L1`)")]:
        (d,) = errors(section(data))
        assert d.notes == (note,) and "section's data" in d.message, str(d)


# ---------------------------------------------------------------- values in the immediates ptxas checks
# (instruction, whether ptxas takes it): a barrier's number and thread count, bfe's bit field, where C's signed
# rules would give another value
IMMEDIATES = [
    ("bar.sync -1 % 16;", True), ("bar.sync (-1 < 1U) * 16;", True), ("bar.sync 0x8000000000000000 >> 60;", True),
    ("bar.sync (1 << 63) >> 60;", False), ("bar.sync 0, -1 % 64;", False), ("bar.sync 0, -32 % 64;", True),
    ("bfe.u32 %r1, %r2, ~0 >> 56, 4;", True), ("bfe.u32 %r1, %r2, -1 >> 56, 4;", False),
    ("bfe.u32 %r1, %r2, -7 % 256, 4;", True), ("bfe.u32 %r1, %r2, 4, -1U / 0x100000000000000;", True),
    ("bfe.u32 %r1, %r2, 4, -1 / 0x100000000000000;", True), ("bfe.u32 %r1, %r2, 4, (1 ? -1 : 1U) >> 56;", False),
]


def _imm_kernel(ins: str) -> str:
    return f"{HDR}.visible .entry k()\n{{\n.reg .b32 %r<3>;\n{ins}\nret;\n}}\n"


@pytest.mark.parametrize("ins, ok", IMMEDIATES, ids=[i for i, _ in IMMEDIATES])
def test_immediates_ptxas_checks_take_the_unsigned_values(ins, ok):
    ds = errors(_imm_kernel(ins))
    assert [d.code for d in ds] == ([] if ok else ["PTX-E-OPERANDS"]), [str(d) for d in ds]


# ------------------------------------------------------------------------------------------- ptxas
def _ptxas(text: str):
    """(return code, output, cubin or None) of ptxas for sm_90a."""
    with tempfile.TemporaryDirectory() as d:
        src, out = os.path.join(d, "t.ptx"), os.path.join(d, "t.cubin")
        with open(src, "w") as f:
            f.write(text)
        r = subprocess.run(["ptxas", "-arch=sm_90a", src, "-o", out], capture_output=True, text=True, timeout=300)
        data = None
        if r.returncode == 0:
            with open(out, "rb") as f:
                data = f.read()
    return r.returncode, r.stdout + r.stderr, data


def _symbols(elf: bytes):
    """{name: (section index, value)} of an ELF64 little-endian file's symbols."""
    shoff = struct.unpack_from("<Q", elf, 0x28)[0]
    shentsize, shnum = struct.unpack_from("<HH", elf, 0x3A)
    heads = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    out = {}
    for h in heads:
        if h[1] != 2:  # SHT_SYMTAB
            continue
        strtab = heads[h[6]]
        for off in range(h[4], h[4] + h[5], 24):
            name, _info, _other, shndx, value, _size = struct.unpack_from("<IBBHQQ", elf, off)
            start = strtab[4] + name
            out[elf[start:elf.index(b"\0", start)].decode()] = (shndx, value)
    return out


def ptxas_values(exprs):
    """{expression: bits} that ptxas wrote for _module(exprs), which it must assemble."""
    rc, out, elf = _ptxas(_module(exprs))
    first = HDR.count("\n") + 1
    bad = [(exprs[int(n) - first], msg) for n, msg in re.findall(r"line (\d+); \w+ *: (.*)", out)]
    assert rc == 0, (rc, bad[:5], out[-500:])
    _, data = _sections(elf)[".nv.global.init"]
    syms = _symbols(elf)
    return {e: struct.unpack_from("<Q", data, syms[f"v{i}"][1])[0] for i, e in enumerate(exprs)}


def _ptxas_error(text: str):
    """(line, message) of ptxas's first error on `text`, (None, 'crash') where it stops on a signal."""
    rc, out, _ = _ptxas(text)
    if rc < 0:
        return None, "crash"
    m = re.search(r"line (\d+); (?:error|fatal) *: (.*)", out)
    assert rc != 0 and m, (rc, out)
    return int(m.group(1)), m.group(2).strip()


def _agrees(lint_message: str, ptxas_message: str) -> bool:
    """Whether lint's message quotes ptxas's (or says it crashes where ptxas does)."""
    if ptxas_message == "crash":
        return "crashes" in lint_message
    return f'"{ptxas_message}"' in lint_message


@pytest.mark.ptxas
def test_every_value_agrees_with_ptxas():
    """Each expression of the matrix that lint computes has the 64 bits ptxas writes for it; each one lint refuses,
    ptxas refuses in its own module, with the error lint quotes (or a crash where lint says it crashes)."""
    exprs = expressions() + REFUSED
    got = lint_values(exprs)
    ok = [e for e in exprs if got[e][0] == "v"]
    want = ptxas_values(ok)
    wrong = [(e, hex(got[e][1]), hex(want[e])) for e in ok if got[e][1] != want[e]]
    assert not wrong, (len(wrong), wrong[:20])
    refused = [e for e in exprs if got[e][0] == "e"]
    assert set(REFUSED) <= set(refused), set(REFUSED) - set(refused)
    with ThreadPoolExecutor(max(2, os.cpu_count() or 2)) as ex:
        verdicts = list(ex.map(lambda e: _ptxas_error(_module([e])), refused))
    first = HDR.count("\n") + 1
    wrong = [(e, got[e][2], v) for e, v in zip(refused, verdicts)
             if not _agrees(got[e][2], v[1]) or v[0] not in (None, first)]
    assert not wrong, (len(wrong), wrong[:10])


@pytest.mark.ptxas
def test_error_lines_agree_with_ptxas():
    """ptxas's first error in each multi-line layout is at the line of lint's one error, and lint quotes it."""
    with ThreadPoolExecutor(max(2, os.cpu_count() or 2)) as ex:
        verdicts = list(ex.map(_ptxas_error, PLACES))
    wrong = []
    for text, (line, message) in zip(PLACES, verdicts):
        ds = errors(text)
        if len(ds) != 1 or not (_agrees(ds[0].message, message) or "Initial value" in message or
                                message.startswith(("No initial", "Variable used", "Invalid initial"))) \
                or (line is not None and ds[0].loc.line != line):
            wrong.append((text.split("\n")[5:12], line, message, [str(d) for d in ds]))
    assert not wrong, (len(wrong), wrong[:5])


@pytest.mark.ptxas
def test_section_data_agrees_with_ptxas():
    with ThreadPoolExecutor(max(2, os.cpu_count() or 2)) as ex:
        verdicts = list(ex.map(lambda c: _ptxas(section(c[0]))[:2], DATA))
    wrong = []
    for (data, at), (rc, out) in zip(DATA, verdicts):
        m = re.search(r"line (\d+); (?:error|fatal) *: (.*)", out)
        if (rc == 0) != (at is None) or (m and ("syntax error" not in m.group(2) or
                                                int(m.group(1)) != errors(section(data))[0].loc.line)):
            wrong.append((data, rc, out))
    assert not wrong, wrong[:5]


@pytest.mark.ptxas
def test_immediate_verdicts_agree_with_ptxas():
    with ThreadPoolExecutor(max(2, os.cpu_count() or 2)) as ex:
        rcs = list(ex.map(lambda c: _ptxas(_imm_kernel(c[0]))[0], IMMEDIATES))
    assert [(i, rc == 0) for (i, _), rc in zip(IMMEDIATES, rcs)] == [(i, ok) for i, ok in IMMEDIATES]
