"""Integer literals at and past their bounds (and decimal floating-point ones past theirs), linted as ptxas 13.0
reads them, probed spelling by spelling.

What ptxas 13.0 showed (the tests marked ptxas run every case and matrix below through it):
- an integer literal (decimal, 0x, 0b or 0 octal, with a U or not) is read digit by digit into 64 bits, modulo
  2^64, and a digit that comes while the value read so far has its top bit set is "Constant overflow"
  (legality.int_literal_overflows). So everything up to 2^64 - 1 reads as written; past it 18446744073709551616
  (2^64) reads as 0, 18446744073709551617 as 1 and 92233720368547758079 (5 * 2^64 - 1) as 2^64 - 1, while
  92233720368547758080 and 99999999999999999999 are refused; 0x1FFFFFFFFFFFFFFFF (17 digits) reads as 2^64 - 1,
  and 0x1FFFFFFFFFFFFFFFFF (18) is refused. A leading minus, a U, the place (an instruction's operand, an
  expression, an address or symbol offset, a vector element, an array dimension, an initial value, a DWARF
  section's data, .loc) change nothing of that; ptxas reports every such literal, at its line.
- no instruction checks a literal against the width of its type: mov.u16 %h, 65536, mov.u32 %r, -4294967297,
  st.global.u8 [a], 300 and add.s32 %r, %r, 2147483648 assemble (the value is cut to the type), and so do the
  initial values of each integer type (.global .u8 g = 256, .s16 g = -32769). A floating-point operand takes no
  integer literal at any value ("Arguments mismatch"; an overflowing one is "Constant overflow" first).
- a decimal floating-point literal is read as strtod reads it: "Constant overflow" where that is past the largest
  finite .f64 (1.797693134862315808e308, 1e400) or below the smallest normal one once rounded to 53 bits and not
  exactly a subnormal .f64 (2.2250738585072012e-308, 1e-310, 5e-324, 1e-400), also for an .f32 operand or
  variable; 0e400 and the exact decimal value of 2^-1074 are taken, and so is 1e39 for .f32 (infinity).
- a number that a directive or declaration reads as 32 bits (.align, a register count `%r<N>`, .maxntid, .reqntid,
  .maxnreg, .minnctapersm, .maxclusterrank, .reqnctapercluster, .loc's and inlined_at's numbers, .file's index,
  .address_size) is "Constant overflow" where its 64-bit value is above 0xFFFFFFFF as a signed integer, and its
  low 32 bits otherwise: .align 2147483648 and `.address_size 0xFFFFFFFF00000040` (64) assemble, .align 4294967296
  does not, nor .maxntid 9223372036854775807.
- .align is a power of two ("Alignment must be a power of two"), in every declaration and parameter, and at most
  128 for a .param variable of a function's body and a .func definition's .param parameter ("Parameter 'p' has
  illegal alignment"); a kernel's parameters, a .func declaration's and a prototype's take more.
- an array dimension is read modulo 2^64 like any literal: [18446744073709551616] is [0] ("Non-external variable
  'h' has incomplete type", "Array of incomplete type" after the first), [18446744073709551615] assembles.
- .maxntid, .reqntid, .minnctapersm and .maxnreg take no 0 ("Positive non-zero value expected for maxntid");
  .maxclusterrank 0 and .reqnctapercluster 0 assemble. .maxnreg above 255 assembles with a warning ("Too many
  maxnreg specified ... will be ignored"), so lint warns (PTX-W-DIRECTIVE). A CTA size whose product, modulo
  2^32, is within 31 of 2^32 (.maxntid 4294967295, .reqntid 65535, 65537) crashes ptxas (a floating-point
  exception); 65536, 65536 (0 modulo 2^32) assembles.
- a barrier's number (bar, barrier) is 0..15 in the low 32 bits of its literal (4294967311 is 15, -1 is refused),
  its thread count a multiple of 32 and, for an arrive, not 0 (2^32 is not 0); bfe's and bfi's bit position and
  length are 0..255 at full width (4294967297 is refused); applypriority's and discard's size is 128
  (4294967424 is refused); the bulk copies check their byte count in the low 32 bits (4294967312 is 16), their
  prefetch at full width (isa_core.imm_value_error, legality._Low32). shl's amount, prmt's selector and the other
  integer immediates take any value.
- constant expressions are computed modulo 2^64 without a word (1<<64, 18446744073709551615+1), but -2^63 / -1 in
  signed 64-bit integers crashes ptxas (a floating-point exception): `(1<<63)/-1`, `(-9223372036854775807-1)/-1`.
  It is unsigned, and assembles, where an operand is: a literal with a U or above 2^63 - 1
  (`0x8000000000000000/-1`, `-9223372036854775808/-1`), `~` of anything, an operator over an unsigned operand, a
  shift of an unsigned left operand; `%` never crashes.
- the builder writes none of the numbers above that ptxas refuses or reads as another value: it refuses an
  initial value or address offset outside -2^63 .. 2^64 - 1, an integer past every finite float for a
  floating-point value, an array size of 2^64 or more, an .align that is not a power of two of at most 32 bits
  (128 for a .func's parameter), a directive's value past 32 bits and bfe's and bfi's field past 255
  (legality.int64_value_error, align_error, u32_field_error; isa_core.imm_value_error).

Where lint and ptxas still differ:
- ptxas reports a 0 in .maxntid or .reqntid at the token after the list of values when the list could go on (fewer
  than 3 values): `.maxntid 0` before a `{` on the next line is an error at the `{`'s line for ptxas. Lint reports
  it at the 0 (test_ptxas_reports_a_zero_cta_size_one_token_late).
- lint checks no DWARF section's data beyond its syntax and literals: ptxas refuses `.b8 256`, `.b16 -32769`,
  `.b32 -2147483649` there (a positive value modulo 2^32; "Value out of range for type .b8", at the line of the
  token after the data). (That it takes no expression there, and no minus before a literal with a U or above
  2^63 - 1, lint checks: tests/test_lint_cexpr_unsigned.py.)
- a register count from about 2^30 to 2^32 - 1 runs ptxas out of memory ("Memory allocation failure", or the
  process is killed), as may .extern .shared .align 2147483648, and a .local variable of a function's body
  aligned to 2^25 or more (2^24 where the code uses it) crashes it (a segmentation fault): resources that depend
  on the rest of the function, which lint takes.
"""
from __future__ import annotations

import os
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

import ptxgen as pg
from ptxgen import lint as L
from ptxgen.builder import mem
from ptxgen.errors import BuildError

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _ptxas_lines import ptxas_rejected  # noqa: E402
from test_lint_vector_probes import (_PHDR, _case_agrees_with_ptxas, _case_lints_as, errors, gen_cases,  # noqa: E402
                                     needs_ptxas)

_DECLS = (".reg .pred %p;\n.reg .b16 %h<4>;\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n.reg .f32 %f<4>;\n"
          ".reg .f64 %fd<4>;\n")
_PRE = '.file 1 "a.cu"\n.global .align 16 .b8 g[256];\n.shared .align 16 .b8 s[256];\n'


def body(text: str) -> str:
    """A module with `text` in a kernel's body."""
    return f"{_PHDR}{_PRE}.visible .entry k()\n{{\n{_DECLS}{text}\nret;\n}}\n"


def scope(text: str) -> str:
    """A module with `text` at module scope, before a kernel."""
    return f"{_PHDR}{_PRE}{text}\n.visible .entry k()\n{{\nret;\n}}\n"


def header(directives: str) -> str:
    """A kernel with the performance `directives`, its body's brace on the same line."""
    return f"{_PHDR}.visible .entry k(){directives} {{\nret;\n}}\n"


def _case(make, bad: str, code: str, at: str, good: str):
    """A test case (module ptxas refuses, the code lint gives it, where lint's error starts, a module it takes),
    named by its bad spelling."""
    return pytest.param(make(bad), code, at, make(good), id=bad)


def _lints_at(text, code, at):
    """_case_lints_as, and the error starts at the text `at`, with a note."""
    for d in _case_lints_as(text, code):
        assert "\n".join(text.split("\n")[d.loc.line - 1:])[d.loc.col - 1:].startswith(at), str(d)
        assert d.notes, str(d)


def _pair_lints(bad, code, at, good):
    _lints_at(bad, code, at)
    _case_lints_as(good, None)


def _pair_agrees(bad, code, at, good, crashes=False):
    """_pair_lints, and ptxas refuses `bad` at the line of lint's error (or crashes on it, where `crashes`) and
    takes `good`."""
    _pair_lints(bad, code, at, good)
    _case_agrees_with_ptxas(bad, code, crashes)
    _case_agrees_with_ptxas(good, None)


# ------------------------------------------------------------------------------------------ integer literals
# literals past 64 bits, wherever they stand: (bad, code, at, good)
S = "PTX-E-SYNTAX"
LITERALS = [
    _case(body, "mov.u64 %rd1, 99999999999999999999;", S, "99999999999999999999;", "mov.u64 %rd1, 18446744073709551616;"),
    _case(body, "mov.u64 %rd1, 92233720368547758080;", S, "9223372", "mov.u64 %rd1, 92233720368547758079;"),
    _case(body, "add.u32 %r1, %r2, -99999999999999999999U;", S, "99999", "add.u32 %r1, %r2, -18446744073709551617U;"),
    _case(body, "setp.lt.s16 %p, %h1, 0x1FFFFFFFFFFFFFFFFF;", S, "0x1F", "setp.lt.s16 %p, %h1, 0x1FFFFFFFFFFFFFFFF;"),
    _case(body, "and.b64 %rd1, %rd2, 0b1" + "0" * 64 + ";", S, "0b1", "and.b64 %rd1, %rd2, 0b" + "1" * 64 + ";"),
    _case(body, "mov.b32 %r1, 0" + "7" * 23 + ";", S, "07", "mov.b32 %r1, 0" + "7" * 21 + ";"),
    _case(body, "mov.u64 %rd1, " + "1" * 40 + ";", S, "1111", "mov.u64 %rd1, 0x" + "0" * 40 + "1;"),
    _case(body, "mov.u64 %rd1, (99999999999999999999)*2;", S, "9999", "mov.u64 %rd1, (18446744073709551615)*2;"),
    _case(body, "mov.u64 %rd1, ~99999999999999999999;", S, "9999", "mov.u64 %rd1, ~18446744073709551616;"),
    _case(body, "mov.u64 %rd1, 1 << 99999999999999999999;", S, "9999", "mov.u64 %rd1, 1 << 18446744073709551615;"),
    _case(body, "ld.global.u32 %r1, [%rd1+99999999999999999999];", S, "9999", "ld.global.u32 %r1, [%rd1+18446744073709551616];"),
    _case(body, "mov.u64 %rd1, g+99999999999999999999;", S, "9999", "mov.u64 %rd1, g+18446744073709551615;"),
    _case(body, "mov.v2.u32 {%r1, %r2}, {1, 99999999999999999999};", S, "9999", "mov.v2.u32 {%r1, %r2}, {1, 4294967296};"),
    _case(body, "st.global.u8 [%rd1], 99999999999999999999;", S, "9999", "st.global.u8 [%rd1], 300;"),
    _case(body, "setp.eq.u32 %p, %r1, 1 < 99999999999999999999;", S, "9999", "setp.eq.u32 %p, %r1, 1 < 18446744073709551615;"),
    _case(body, ".loc 1 1 99999999999999999999", S, "9999", ".loc 1 1 4294967295"),
    _case(scope, ".global .u8 h = 99999999999999999999;", S, "9999", ".global .u8 h = 18446744073709551617;"),
    _case(scope, ".global .s64 h[2] = {1, -99999999999999999999};", S, "9999", ".global .s64 h[2] = {1, -18446744073709551616};"),
    _case(scope, ".global .b8 h[99999999999999999999];", S, "9999", ".global .b8 h[18446744073709551615];"),
    _case(scope, ".section .debug_info\n{\n.b32 99999999999999999999\n}", S, "9999",
          ".section .debug_info\n{\n.b32 4294967296\n}"),
]


@pytest.mark.parametrize("bad,code,at,good", LITERALS)
def test_integer_literals_past_64_bits_are_constant_overflow(bad, code, at, good):
    _pair_lints(bad, code, at, good)


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("bad,code,at,good", LITERALS)
def test_integer_literal_cases_agree_with_ptxas(bad, code, at, good):
    _pair_agrees(bad, code, at, good)


def test_an_overflowing_literal_says_what_ptxas_reads_of_it():
    (d,) = errors(body("mov.u64 %rd1, 99999999999999999999;"))
    assert "does not fit in 64 bits" in d.message and "Constant overflow" in d.message, str(d)
    assert "0x6BC75E2D630FFFFF" in d.notes[0] and "18446744073709551615" in d.notes[0], str(d)
    (d,) = errors(body("mov.u64 %rd1, " + "1" * 400 + ";"))  # a long one is shortened
    assert "(400 characters)" in d.message and len(d.message) < 200, str(d)


# decimal floating-point literals out of the range of .f64: (bad, code, at, good)
FLOATS = [
    _case(body, "mov.f64 %fd1, 1e400;", S, "1e400", "mov.f64 %fd1, 1e308;"),
    _case(body, "mov.f64 %fd1, 1.797693134862315808e308;", S, "1.79", "mov.f64 %fd1, 1.7976931348623158e308;"),
    _case(body, "add.f32 %f1, %f2, 1e-400;", S, "1e-400", "add.f32 %f1, %f2, 0e400;"),
    _case(body, "mov.f64 %fd1, 2.2250738585072012e-308;", S, "2.2", "mov.f64 %fd1, 2.2250738585072013e-308;"),
    _case(body, "mov.f64 %fd1, 5e-324;", S, "5e-324", "mov.f64 %fd1, 0d0000000000000001;"),
    _case(body, "setp.lt.f64 %p, %fd1, -(1e-310);", S, "1e-310", "setp.lt.f64 %p, %fd1, -(2.3e-308);"),
    _case(scope, ".global .f32 h = 1e309;", S, "1e309", ".global .f32 h = 1e39;"),
]


@pytest.mark.parametrize("bad,code,at,good", FLOATS)
def test_decimal_floats_out_of_range_are_constant_overflow(bad, code, at, good):
    _pair_lints(bad, code, at, good)


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("bad,code,at,good", FLOATS)
def test_decimal_float_cases_agree_with_ptxas(bad, code, at, good):
    _pair_agrees(bad, code, at, good)


def test_an_out_of_range_float_says_how_to_write_its_value():
    (d,) = errors(body("mov.f64 %fd1, 1e-310;"))
    assert "0d000012688B70E62B" in d.notes[0], str(d)
    (d,) = errors(body("mov.f64 %fd1, 1e400;"))
    assert "0d7FF0000000000000" in d.notes[0], str(d)


# ----------------------------------------------------------------------------------- places that read 32 bits
D = "PTX-E-DIRECTIVE"
THIRTY_TWO = [
    _case(scope, ".global .align 4294967296 .b8 h[4];", S, "4294967296", ".global .align 2147483648 .b8 h[4];"),
    _case(scope, ".global .align 0x100000004 .b8 h[4];", S, "0x1", ".global .align 0xFFFFFFFF00000004 .b8 h[4];"),
    _case(body, ".local .align 9223372036854775807 .b8 l[4];", S, "9223", ".local .align 9223372036854775816 .b8 l[4];"),
    _case(scope, ".func f(.param .align 4294967300 .b8 p[4])\n{\nret;\n}", S, "4294", ".func f(.param .align 18446744073709551620 .b8 p[4])\n{\nret;\n}"),
    _case(body, ".reg .b32 %q<4294967296>;", S, "4294", ".reg .b32 %q<18446744073709551680>;"),
    _case(header, " .maxntid 4294967296", S, "4294", " .maxntid 0xFFFFFFFF00000040"),
    _case(header, " .maxntid 64, 1, 4294967297", S, "4294", " .maxntid 64, 1, 18446744073709551617"),
    _case(header, " .maxnreg 4294967297", S, "4294", " .maxnreg 18446744073709551680"),
    _case(header, " .maxntid 64 .minnctapersm 4294967296", S, "4294", " .maxntid 64 .minnctapersm 4"),
    _case(header, " .maxclusterrank 0x100000000", S, "0x1", " .maxclusterrank 0xFFFFFFFF00000000"),
    _case(header, " .reqnctapercluster 1, 4294967296", S, "4294", " .reqnctapercluster 1, 4294967295"),
    _case(body, ".loc 1 4294967296 1", S, "4294", ".loc 1 4294967295 1"),
    _case(scope, ".file 4294967296 \"b.cu\"", S, "4294", ".file 4294967295 \"b.cu\""),
]


@pytest.mark.parametrize("bad,code,at,good", THIRTY_TWO)
def test_places_that_read_32_bits_are_constant_overflow_past_them(bad, code, at, good):
    _pair_lints(bad, code, at, good)


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("bad,code,at,good", THIRTY_TWO)
def test_32_bit_place_cases_agree_with_ptxas(bad, code, at, good):
    _pair_agrees(bad, code, at, good)


def _address_size(n: str) -> str:
    return f".version 8.7\n.target sm_90a\n.address_size {n}\n.visible .entry k()\n{{\nret;\n}}\n"


def test_address_size_reads_32_bits():
    _lints_at(_address_size("4294967360"), S, "4294967360")
    _case_lints_as(_address_size("0xFFFFFFFF00000040"), None)      # 64
    (d,) = errors(_address_size("0x100000020"))
    assert "does not fit in 32 bits" in d.message, str(d)             # not also "must be 32 or 64"


@pytest.mark.ptxas
@needs_ptxas
def test_address_size_cases_agree_with_ptxas():
    _pair_agrees(_address_size("4294967360"), S, "4294967360", _address_size("0xFFFFFFFF00000040"))


# ------------------------------------------------------------------------------------------ .align and arrays
E = "PTX-E-DECL"
ALIGNS = [
    _case(scope, ".global .align 0 .b8 h[4];", E, "0 .b8", ".global .align 1 .b8 h[4];"),
    _case(scope, ".const .align 3 .b8 h[4];", E, "3 .b8", ".const .align 4 .b8 h[4];"),
    _case(scope, ".align 12 .global .b8 h[4];", E, "12 .g", ".align 16 .global .b8 h[4];"),
    _case(scope, ".extern .shared .align 6 .b8 h[];", E, "6 .b8", ".extern .shared .align 8 .b8 h[];"),
    _case(body, ".shared .align 2147483647 .b8 h[4];", E, "2147483647", ".shared .align 1073741824 .b8 h[4];"),
    _case(body, ".reg .align 5 .b32 %q;", E, "5 .b32", ".reg .align 4 .b32 %q;"),
    _case(body, ".param .align 256 .b8 q[4];", E, "256", ".param .align 128 .b8 q[4];"),
    _case(scope, ".visible .entry k2(.param .align 24 .b8 p[4])\n{\nret;\n}", E, "24",
          ".visible .entry k2(.param .align 256 .b8 p[4])\n{\nret;\n}"),
    _case(scope, ".visible .entry k2(.param .u64 .ptr .global .align 3 p)\n{\nret;\n}", E, "3 p",
          ".visible .entry k2(.param .u64 .ptr .global .align 2147483648 p)\n{\nret;\n}"),
    _case(scope, ".func f(.param .align 256 .b8 p[4])\n{\nret;\n}", E, "256",
          ".func f(.param .align 128 .b8 p[4])\n{\nret;\n}"),
    _case(scope, ".func (.param .align 512 .b8 r[4]) f()\n{\nret;\n}", E, "512",
          ".extern .func (.param .align 512 .b8 r[4]) f();"),
    _case(body, "p: .callprototype _ (.param .align 7 .b8 a[4]);", E, "7 .b8",
          "p: .callprototype _ (.param .align 256 .b8 a[4]);"),
]


@pytest.mark.parametrize("bad,code,at,good", ALIGNS)
def test_alignments_lint_as_ptxas_takes_them(bad, code, at, good):
    _pair_lints(bad, code, at, good)


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("bad,code,at,good", ALIGNS)
def test_alignment_cases_agree_with_ptxas(bad, code, at, good):
    _pair_agrees(bad, code, at, good)


DIMS = [
    _case(scope, ".global .b8 h[18446744073709551616];", E, "h[", ".global .b8 h[18446744073709551617];"),
    _case(body, ".shared .u32 h[2][0x10000000000000000];", E, "h[", ".shared .u32 h[2][0x10000000000000002];"),
    _case(body, ".local .b8 h[18446744073709551616];", E, "h[", ".local .b8 h[18446744073709551615];"),
]


@pytest.mark.parametrize("bad,code,at,good", DIMS)
def test_array_dimensions_read_modulo_2_to_the_64(bad, code, at, good):
    _pair_lints(bad, code, at, good)


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("bad,code,at,good", DIMS)
def test_array_dimension_cases_agree_with_ptxas(bad, code, at, good):
    _pair_agrees(bad, code, at, good)


# -------------------------------------------------------------------------------------- performance directives
DIRECTIVES = [
    _case(header, " .maxntid 64 .minnctapersm 0", D, "0", " .maxntid 64 .minnctapersm 1"),
    _case(header, " .maxntid 0, 1, 1", D, "0, 1", " .maxntid 1, 1, 1"),
    _case(header, " .reqntid 64, 0xFFFFFFFF00000000", D, "0xF", " .reqntid 64, 0xFFFFFFFF00000001"),
    _case(header, " .maxnreg 0", D, "0", " .maxnreg 0x8000000000000040"),
    _case(header, " .maxntid 18446744073709551616", D, "1844", " .maxntid 18446744073709551617"),
]


@pytest.mark.parametrize("bad,code,at,good", DIRECTIVES)
def test_zero_in_a_directive_ptxas_takes_positive_values_of(bad, code, at, good):
    _pair_lints(bad, code, at, good)


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("bad,code,at,good", DIRECTIVES)
def test_zero_directive_cases_agree_with_ptxas(bad, code, at, good):
    _pair_agrees(bad, code, at, good)


# CTA sizes that crash ptxas 13.0, and a neighbour it takes
CRASHES = [
    (" .maxntid 4294967295", " .maxntid 4294967264"),
    (" .maxntid 3, 1431655765", " .maxntid 32, 134217727"),
    (" .reqntid 65535, 65537", " .reqntid 65536, 65536"),
    (" .maxntid 1, 1, 18446744073709551614", " .maxntid 1, 1, 18446744073709551617"),
]


@pytest.mark.parametrize("bad,good", CRASHES, ids=[c[0] for c in CRASHES])
def test_cta_sizes_that_crash_ptxas_are_errors(bad, good):
    (d,) = _case_lints_as(header(bad), D)
    assert "crashes" in d.message and d.notes, str(d)
    assert not any(x.code == D and "crashes" in x.message for x in errors(header(good)))


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("bad,good", CRASHES, ids=[c[0] for c in CRASHES])
def test_cta_sizes_that_crash_ptxas_crash_it(bad, good):
    test_cta_sizes_that_crash_ptxas_are_errors(bad, good)
    assert gen_cases.run_ptxas(header(bad))["rc"] < 0
    _case_agrees_with_ptxas(header(good), None)


def test_maxnreg_past_255_is_a_warning_as_ptxas_ignores_it():
    for n in ("256", "4294967295", "0x7FFFFFFF"):
        _case_lints_as(header(f" .maxnreg {n}"), None)
        (w,) = [d for d in L.lint_ptx(header(f" .maxnreg {n}"), "t.ptx") if d.code == "PTX-W-DIRECTIVE"]
        assert w.severity == "warning" and "ignores" in w.message and w.notes, str(w)


@pytest.mark.ptxas
@needs_ptxas
def test_ptxas_takes_maxnreg_past_255_and_warns():
    for n in ("256", "4294967295"):
        text = header(f" .maxnreg {n}")
        assert gen_cases.run_ptxas(text)["rc"] == 0
        assert [d.code for d in L.lint_ptx(text, "t.ptx")] == ["PTX-W-DIRECTIVE"]


@pytest.mark.ptxas
@needs_ptxas
def test_ptxas_reports_a_zero_cta_size_one_token_late():
    """ptxas reads the token after `.maxntid 0` (a comma could follow) before it checks the 0, and reports the
    error at that token's line; lint reports it at the 0."""
    text = f"{_PHDR}.visible .entry k() .maxntid 0\n{{\nret;\n}}\n"
    (d,) = _case_lints_as(text, D)
    assert (d.loc.line, d.loc.col) == (4, 30), str(d)
    assert gen_cases.run_ptxas(text)["error_line"] == 5


# --------------------------------------------------------------------------------- immediates ptxas checks
O = "PTX-E-OPERANDS"
IMMEDIATES = [
    _case(body, "bar.sync 16;", O, "16", "bar.sync 4294967311;"),
    _case(body, "barrier.sync.aligned -1, 64;", O, "-1", "barrier.sync.aligned 15, 64;"),
    _case(body, "bar.red.popc.u32 %r1, 4294967312, %p;", O, "4294967312", "bar.red.popc.u32 %r1, 0x10000000F, %p;"),
    _case(body, "bar.sync 1, 33;", O, "33", "bar.sync 1, 0;"),
    _case(body, "barrier.arrive 1, 0;", O, "0", "barrier.arrive 1, 4294967296;"),
    _case(body, "bar.arrive 1, 18446744073709551616;", O, "1844", "bar.arrive 1, 18446744073709551584;"),
    _case(body, "barrier.red.and.pred %p, 1, 4294967327, %p;", O, "4294", "barrier.red.and.pred %p, 1, 4294967328, %p;"),
    _case(body, "bfe.u32 %r1, %r2, 256, 1;", O, "256", "bfe.u32 %r1, %r2, 255, 1;"),
    _case(body, "bfe.s64 %rd1, %rd2, 1, -1;", O, "-1", "bfe.s64 %rd1, %rd2, 1, 0xFF;"),
    _case(body, "bfi.b32 %r1, %r2, %r3, 4294967297, 1;", O, "4294", "bfi.b32 %r1, %r2, %r3, 18446744073709551617, 1;"),
    _case(body, "applypriority.global.L2::evict_normal [g], 4294967424;", O, "4294",
          "applypriority.global.L2::evict_normal [g], 18446744073709551744;"),
    _case(body, "discard.global.L2 [g], 64;", O, "64", "discard.global.L2 [g], 0x80;"),
    _case(body, "cp.async.bulk.global.shared::cta.bulk_group [g], [s], 4294967311;", O, "4294",
          "cp.async.bulk.global.shared::cta.bulk_group [g], [s], 4294967312;"),
    _case(body, "cp.async.bulk.prefetch.L2.global [g], 4294967312;", O, "4294",
          "cp.async.bulk.prefetch.L2.global [g], 18446744073709551632;"),
]


@pytest.mark.parametrize("bad,code,at,good", IMMEDIATES)
def test_immediates_whose_value_ptxas_checks(bad, code, at, good):
    _pair_lints(bad, code, at, good)


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("bad,code,at,good", IMMEDIATES)
def test_immediate_value_cases_agree_with_ptxas(bad, code, at, good):
    _pair_agrees(bad, code, at, good)


# ----------------------------------------------------------------------------------- constant expressions
# -2^63 / -1 in signed 64 bits, which crashes ptxas 13.0, and a neighbour it takes
DIVISIONS = [
    ("mov.u64 %rd1, (1<<63)/-1;", "/-1", "mov.u64 %rd1, (1U<<63)/-1;"),
    ("mov.s64 %rd1, (-9223372036854775807-1)/-1;", "/-1", "mov.s64 %rd1, (-9223372036854775808)/-1;"),
    ("add.s64 %rd1, %rd2, (0x7FFFFFFFFFFFFFFF+1)/(0-1);", "/(0-1)", "add.s64 %rd1, %rd2, (0x7FFFFFFFFFFFFFFF+1)/~0;"),
    ("mov.b64 %rd1, ((1<2)<<63)/(-1 & -1);", "/(-1", "mov.b64 %rd1, ((1<2)<<63)/(-1 & -1U);"),
    ("mov.u64 %rd1, (1<<63)/-(1<2);", "/-(1", "mov.u64 %rd1, (1<<63)%-(1<2);"),
]


@pytest.mark.parametrize("bad,at,good", DIVISIONS, ids=[c[0] for c in DIVISIONS])
def test_a_signed_division_that_crashes_ptxas_is_an_error(bad, at, good):
    _pair_lints(body(bad), S, at, body(good))


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("bad,at,good", DIVISIONS, ids=[c[0] for c in DIVISIONS])
def test_signed_division_cases_agree_with_ptxas(bad, at, good):
    _pair_agrees(body(bad), S, at, body(good), crashes=True)
    assert gen_cases.run_ptxas(body(bad))["rc"] < 0  # a crash, not a refusal


# -------------------------------------------------------------------------- probed spelling by spelling
BOUNDS = (2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**63 - 1, 2**63, 2**64 - 1, 2**64, 2**64 + 1, 5 * 2**64 - 1,
          5 * 2**64, 10**20, 10**30)
LONG = ("1" * 40, "9" * 19, "9" * 20, "0x" + "F" * 24, "0x" + "0" * 30 + "1", "0" * 40, "0" + "7" * 30,
        "0b" + "1" * 64, "0b1" + "0" * 64)


def literal_spellings(minus: bool = True, suffix: bool = True):
    """Each bound in decimal, hex, octal and binary, and long digit strings, with and without a U and a minus."""
    out = [s for v in BOUNDS for s in (str(v), f"0x{v:X}", f"0{v:o}", f"0b{v:b}")] + list(LONG)
    out = [s + u for s in out for u in (("", "U") if suffix else ("",))]
    return out + (["-" + s for s in out] if minus else [])


def _value(spelling: str) -> int:
    """The literal's 64-bit value modulo 2^64 (for picking spellings safe to probe, not for verdicts)."""
    s = spelling.lstrip("-").rstrip("U")
    v = int(s, 16) if s[:2] == "0x" else int(s[2:], 2) if s[:2] == "0b" else int(s, 8) if s[:1] == "0" else int(s)
    return v & (2**64 - 1)


FLOAT_SPELLINGS = ("1e308", "1.7976931348623157e308", "1.7976931348623158e308", "1.797693134862315808e308", "1e309",
                   "1e400", "2.2250738585072014e-308", "2.2250738585072013e-308", "2.2250738585072012e-308", "1e-310",
                   "5e-324", "1e-400", "0e400", "0.0e-999", "1e-50", "1e39", "9" * 400 + ".0",
                   "0." + "0" * 400 + "1", "4.9406564584124654417656879286822137236505980e-324")

# one kind of line per matrix: `@` is the spelling, `#` the line's number
INSTRUCTION_LINES = (
    "mov.u64 %rd1, @;", "mov.s32 %r1, @;", "mov.b16 %h1, @;", "add.u16 %h1, %h2, @;", "add.s64 %rd1, %rd2, @;",
    "setp.lt.s32 %p, %r1, @;", "setp.ne.b64 %p, %rd1, @;", "and.b32 %r1, %r2, @;", "st.global.u8 [%rd1], @;",
    "st.global.s8 [%rd1], @;", "ld.global.u32 %r1, [%rd1+@];", "mov.u64 %rd1, g+@;", "mov.v2.u32 {%r1, %r2}, {1, @};",
    "mov.u64 %rd1, (@)*2;", "mov.u64 %rd1, @ + 1;", "mov.u64 %rd1, @ << 1;", "mov.u64 %rd1, -(@);",
    "mov.u64 %rd1, ~@;", "mov.f32 %f1, @;", "add.f64 %fd1, %fd2, @;", "bar.sync @;", "bfe.u32 %r1, %r2, @, 1;")
DECLARATION_LINES = tuple(f".global .{t} v#_{t} = @;" for t in ("u8", "s8", "b8", "u16", "s16", "b16", "u32", "s32",
                                                                  "b32", "u64", "s64", "b64")) + (
    ".global .s32 a#[2] = {0, @};", ".global .u64 b#[2] = {@, 1};")
FLOAT_LINES = ("mov.f64 %fd1, @;", "mov.f32 %f1, @;", "add.f32 %f1, %f2, -(@);", "setp.lt.f64 %p, %fd1, @*2.0;",
               "mov.u64 %rd1, @;")


def _matrix(make, kind: str, spellings):
    """(module, its probed lines) for the line kind `kind` over `spellings`."""
    lines = [kind.replace("@", s).replace("#", str(i)) for i, s in enumerate(spellings)]
    return make("\n".join(lines)), lines


def matrices():
    """Every probed matrix: (name, module, lines). Register counts and CTA sizes leave out values that run ptxas
    out of memory or crash it (the cases above have those)."""
    out = []
    ints = literal_spellings()
    for kind in INSTRUCTION_LINES:
        out.append((kind, *_matrix(body, kind, ints)))
    for kind in DECLARATION_LINES:
        out.append((kind, *_matrix(scope, kind, literal_spellings(suffix=False))))
    plain = literal_spellings(minus=False)
    out.append(("dimension", *_matrix(scope, ".global .b8 d#[@];", plain)))
    out.append(("module .align", *_matrix(scope, ".global .align @ .b8 m#[4];", plain)))
    out.append(("body .align", *_matrix(body, ".shared .align @ .b8 l#[4];", plain)))
    out.append((".loc", *_matrix(body, ".loc 1 @ 2", plain)))

    def u32(s):  # the 32 bits a 32-bit place reads, or None where that is "Constant overflow"
        v = _value(s)
        return None if 0xFFFFFFFF < v < 2**63 else v & 0xFFFFFFFF
    counts = [s for s in plain if u32(s) is None or u32(s) < 1 << 16]
    out.append(("register count", *_matrix(body, ".reg .b32 %q#_<@>;", counts)))
    sizes = [s for s in plain if u32(s) is None or u32(s) < 2**32 - 31]
    for d in (".maxntid", ".maxnreg", ".minnctapersm"):
        kind = ".visible .entry k#() " + (".maxntid 64 " if d == ".minnctapersm" else "") + f"{d} @ {{ ret; }}"
        out.append((d, *_matrix(lambda t: _PHDR + t + "\n", kind, sizes)))
    for kind in FLOAT_LINES:
        out.append((kind, *_matrix(body, kind, FLOAT_SPELLINGS)))
    out.append(("init .f64", *_matrix(scope, ".global .f64 f#_ = @;", FLOAT_SPELLINGS)))
    return out


def _disagreements(text, lines):
    """The lines of `lines` (each once in `text`, one after the other) that lint flags and ptxas takes or the
    other way round, and how many ptxas rejects."""
    first = text.split("\n").index(lines[0]) + 1
    rejected = set(ptxas_rejected(text, "sm_90a"))
    flagged = {d.loc.line for d in errors(text)}
    wrong = [lines[i - first] for i in range(first, first + len(lines)) if (i in rejected) != (i in flagged)]
    return wrong, len([i for i in rejected if first <= i < first + len(lines)])


def test_every_matrix_flags_the_literals_past_64_bits():
    """Lint's side of the matrices (ptxas's is test_every_probed_spelling_agrees_with_ptxas): in every kind of line,
    the literals of twenty 9s and more are errors, at their lines and nowhere else."""
    probed = 0
    for name, text, lines in matrices():
        flagged = {d.loc.line for d in errors(text)}
        probed += len(lines)
        first = text.split("\n").index(lines[0]) + 1
        assert all(first <= x < first + len(lines) for x in flagged), name
        over = {first + i for i, line in enumerate(lines) if "9" * 20 in line}
        assert over and over <= flagged, (name, sorted(over - flagged)[:5])
    assert probed > 8000, probed


@pytest.mark.ptxas
@needs_ptxas
def test_every_probed_spelling_agrees_with_ptxas():
    ms = matrices()
    with ThreadPoolExecutor(max(2, os.cpu_count() or 2)) as ex:
        got = list(ex.map(lambda m: _disagreements(m[1], m[2]), ms))
    wrong = [(m[0], w) for m, (ws, _n) in zip(ms, got) for w in ws]
    assert not wrong, (len(wrong), wrong[:20])
    total = sum(len(m[2]) for m in ms)
    refused = sum(n for _ws, n in got)
    assert total > 8000 and 1000 < refused < total - 1000, (total, refused)


# -------------------------------------------------------------------------------------------------- builder
def _module():
    m = pg.Module("sm_90a")
    return m, m.entry("k")


# what the builder refuses to write, as ptxas reads it otherwise: (what it is, a call that writes it, the code)
BUILDER = [
    ("initial value past 64 bits", lambda m, k: m.global_var("g", "u64", init=10**20), "PTX-E-DECL"),
    ("initial value 2^64", lambda m, k: m.global_var("g", "u64", 2, init=[1, 2**64]), "PTX-E-DECL"),
    ("initial value below -2^63", lambda m, k: m.global_var("g", "s64", init=-2**63 - 1), "PTX-E-DECL"),
    ("float initial value past .f64", lambda m, k: m.global_var("g", "f64", init=10**400), "PTX-E-DECL"),
    ("float immediate past .f64", lambda m, k: k.mov(10**400, type="f64"), "PTX-E-TYPE"),
    ("alignment past 32 bits", lambda m, k: m.global_var("g", "u32", align=2**32), "PTX-E-BUILD"),
    ("alignment not a power of two", lambda m, k: m.global_var("g", "u32", align=12), "PTX-E-BUILD"),
    (".func parameter alignment", lambda m, k: m.func("f").param("p", "u32", align=256), "PTX-E-BUILD"),
    (".func byte array alignment", lambda m, k: m.func("f").param_bytes("p", 16, align=512), "PTX-E-BUILD"),
    ("array size 2^64", lambda m, k: m.global_var("g", "b8", count=2**64), "PTX-E-DECL"),
    ("shared array past 64 bits", lambda m, k: k.shared("s", 2**70), "PTX-E-DECL"),
    (".minnctapersm past 32 bits", lambda m, k: m.entry("k2", maxntid=64, minnctapersm=2**32), "PTX-E-BUILD"),
    (".maxclusterrank past 32 bits", lambda m, k: m.entry("k2", maxclusterrank=2**32 + 8), "PTX-E-BUILD"),
    (".reqnctapercluster past 32 bits", lambda m, k: m.entry("k2", reqnctapercluster=(2**32, 1)), "PTX-E-BUILD"),
    ("address offset 2^64", lambda m, k: k.ld(mem(k.ld_param(k.param_ptr("x")), 2**64), "u32"), "PTX-E-BUILD"),
    ("bfe position 256", lambda m, k: k.bfe(k.reg("u32"), 256, 1), "PTX-E-OPERANDS"),
    ("bfi length 300", lambda m, k: k.bfi(k.reg("b32"), k.reg("b32"), 0, 300), "PTX-E-OPERANDS"),
]


@pytest.mark.parametrize("what,call,code", BUILDER, ids=[c[0] for c in BUILDER])
def test_the_builder_refuses_numbers_ptxas_reads_otherwise(what, call, code):
    m, k = _module()
    with pytest.raises(BuildError) as e:
        call(m, k)
    assert e.value.code == code and e.value.loc is not None and e.value.loc.file == __file__, str(e.value)


def test_the_builder_writes_the_bounds_ptxas_takes():
    m, k = _module()
    m.global_var("a", "s64", 2, init=[2**64 - 1, -2**63])
    m.global_var("b", "u32", align=2**31)
    m.entry("k2", maxntid=64, minnctapersm=2**32 - 1)
    x = k.ld_param(k.param_ptr("x"))
    k.ld(mem(x, 2**64 - 1), "u32")
    k.bfe(k.reg("u32"), 255, 255)
    f = m.func("f")
    f.param("p", "u32", align=128)
    f.ret()
    k.ret()
    text = m.emit().text
    assert "18446744073709551615" in text and ".align 2147483648" in text and "255, 255" in text
    assert errors(text) == [], [str(d) for d in errors(text)]
    with pytest.raises(BuildError):  # and one past them (the test fails on a builder that writes them all)
        m.global_var("c", "u64", init=2**64)


@pytest.mark.ptxas
@needs_ptxas
def test_the_bounds_the_builder_writes_assemble_and_those_past_them_do_not():
    m, k = _module()
    m.global_var("a", "s64", 2, init=[2**64 - 1, -2**63])
    m.global_var("b", "u32", align=2**31)
    k.bfe(k.reg("u32"), 255, 255)
    k.ret()
    assert gen_cases.run_ptxas(m.emit().text)["rc"] == 0
    for what, call, code in BUILDER:
        with pytest.raises(BuildError):
            call(*_module())
    for text in (scope(".visible .global .u64 g = 100000000000000000000;"), scope(".global .align 4294967296 .u32 g;"),
                 scope(".func f(.param .align 256 .u32 p)\n{\nret;\n}"), body("bfe.u32 %r1, %r2, 256, 1;"),
                 header(" .maxntid 64 .minnctapersm 4294967296")):
        assert gen_cases.run_ptxas(text)["rc"] > 0, text
