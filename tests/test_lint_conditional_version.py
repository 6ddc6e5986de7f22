"""The conditional operator `c ? a : b` in constant expressions, and the number of a `.version` directive, linted
as ptxas 13.0 takes them, probed spelling by spelling.

What ptxas 13.0 showed (the tests marked ptxas run every case below through it):
- `c ? a : b` is C's conditional: below `||` (`1 || 0 ? 5 : 6` is 5), right-associative (`1 ? 2 : 3 ? 4 : 5` is 2,
  where a left-associative reading gives 4), any expression between `?` and `:` (`1 ? 0 ? 1 : 2 : 3` is 2), the
  condition tested for nonzero in 64 bits (`18446744073709551615+1 ? 1 : 2` is 2). The values were read back
  from the initial value of a .global variable in the cubin, and the symbol offsets from its relocations.
- it stands wherever an expression does: an instruction's immediate operand, a vector's element, a call's
  argument, an address offset (`[%rd1 + 1 ? 4 : 8]` adds 4: `+` binds tighter than `?:`, and there is one
  expression after the `+`), a symbol's offset (`g + 0 ? 4 : 8` is g + 8), an initial value and a texture
  field. It is refused where ptxas reads an integer literal and no expression: an array dimension ("Parsing
  error near '?'"), .align, a register count `%r<N>`, .maxntid and the other performance directives, .loc,
  .file, .address_size and a section's data.
- its three operands are integers; a floating-point one (`1 ? 1.0 : 2`, `1.0 ? 1 : 2`) is "Integer constant
  expression expected", reported at the line of the token after the expression. Both branches are evaluated:
  `0 ? 1/0 : 2` is "division by zero".
- the result is signed or unsigned as the branch it takes is, not as C's usual conversions make it:
  `(1 ? 1<<63 : 1U) / -1` divides in signed integers and crashes ptxas (a floating-point exception), as
  `(1<<63) / -1` does; `(1 ? 0x8000000000000000 : 1) / -1` does not.
- `.version MAJOR.MINOR`: ptxas reads each number as C's atoi does (at most 2^63 - 1, then its low 32 bits as a
  signed int) and looks up major * 10 + minor, in 32-bit ints, among the versions it knows: 1.0-1.5, 2.0-2.3,
  3.0-3.2, 4.0-4.3, 5.0-5.1, 6.0-6.5, 7.0-7.8, 8.0-8.8 and 9.0 (target.PTX_VERSIONS). Anything else is fatal
  at the directive: "Unsupported .version 9.1; current version is '9.0'" for 9.1, 10.0, 9.01 and 9.10, and also
  for 8.9 and 7.9, which were never versions, and for 8.70 (150). 9.00, 09.0, 8.007 (8.7) and 8.10 (90)
  pass. A target or a feature then compares (major, minor) with the version it needs: `.version 7.10` does not
  support sm_90a (needs 8.0), `.version 6.20` has no stacksave (needs 7.3) while 7.10 has it, and a pair older
  than 2.3 (`.version 0.90`, 90 for the lookup) has no .address_size either ("Feature '.address_size directive'
  requires PTX ISA .version 2.3 or later"). A number followed by other characters (`9.0x`, `9.0e0`, `9.0U`) is
  the version followed by a syntax error ("Missing .target directive").
- the builder refuses, with the same rule (target.version_error), a Module version ptxas does not know.

Signed and unsigned integers in expressions (`-1 < 1U` is 0, `(1<<63) >> 63` is -1) and what a section's data
takes besides `?:` (no expression at all) are in tests/test_lint_cexpr_unsigned.py.
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

import ptxgen as pg
from ptxgen.errors import BuildError
from ptxgen.ir import Addr, Imm
from ptxgen.parse import SymOffset, parse
from ptxgen.target import LATEST_PTX, PTX_VERSIONS, read_version, version_error

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_lint_vector_probes import _case_agrees_with_ptxas, _case_lints_as, errors  # noqa: E402

M64 = (1 << 64) - 1
_HDR = ".version 8.7\n.target sm_90a\n.address_size 64\n"
_PRE = ('.file 1 "a.cu"\n.global .align 8 .b8 g[64];\n.func f(.param .b32 x)\n{\nret;\n}\n'
        ".func (.param .b32 r) g2(.param .b32 x, .param .b32 y)\n{\nret;\n}\n")
_DECLS = (".reg .pred %p;\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n.reg .f32 %f<4>;\n.reg .f64 %fd<4>;\n"
          ".local .align 4 .b8 loc[16];\n")


def body(text: str) -> str:
    """A module with `text` in a kernel's body."""
    return f"{_HDR}{_PRE}.visible .entry k()\n{{\n{_DECLS}{text}\nret;\n}}\n"


def scope(text: str) -> str:
    """A module with `text` at module scope, before a kernel."""
    return f"{_HDR}{_PRE}{text}\n.visible .entry k()\n{{\nret;\n}}\n"


def header(directives: str) -> str:
    """A kernel with the performance `directives`."""
    return f"{_HDR}.visible .entry k(){directives}\n{{\nret;\n}}\n"


def section(data: str) -> str:
    """A module with a DWARF section holding the `data` line."""
    return f"{_HDR}.visible .entry k()\n{{\nret;\n}}\n.section .debug_abbrev\n{{\n{data}\n}}\n"


def _case(make, text: str, code=None, at=None, crashes=False):
    """A test case: the module, the code of the one error lint gives it (None: it is clean), where that error
    starts (the text of the module from there on starts with `at`), whether ptxas may crash on it."""
    return pytest.param(make(text), code, at, crashes, id=text.replace("\n", "\\n"))


# ------------------------------------------------------------------------------------ the values of `?:`
# (expression, its value modulo 2^64, which ptxas 13.0 wrote into a .global .u64 initial value)
VALUES = [
    ("1 ? 7 : 9", 7),
    ("0 ? 7 : 9", 9),
    ("(2 > 1) ? 7 : 9", 7),
    ("0 ? 1 : 2 + 3", 5),
    ("1 ? 2 : 3 + 100", 2),               # `:`'s right operand is `3 + 100`, not `(1 ? 2 : 3) + 100`
    ("1 ? 5 : 6 * 2", 5),
    ("(1 ? 5 : 6) + 1", 6),
    ("1 ? 2 : 3 ? 4 : 5", 2),             # right-associative: (1 ? 2 : 3) ? 4 : 5 would be 4
    ("0 ? 2 : 3 ? 4 : 5", 4),
    ("0 ? 2 : 0 ? 4 : 5", 5),
    ("1 ? 0 ? 1 : 2 : 3", 2),             # any expression between ? and :
    ("0 ? 0 ? 1 : 2 : 3", 3),
    ("1?2?3:4:5", 3),
    ("1 || 0 ? 5 : 6", 5),                # below ||: 1 || (0 ? 5 : 6) would be 1
    ("0 && 1 ? 5 : 6", 6),
    ("0 ? 1 : 0 || 1", 1),
    ("1 ? 1 || 0 : 5", 1),
    ("0 ? 2 : 3 | 4", 7),
    ("1 < 2 ? 3 : 4", 3),
    ("1 ? 2 < 3 : 4", 1),
    ("2 ? 10 : 20", 10),                  # the condition is tested for nonzero
    ("-1 ? 10 : 20", 10),
    ("0x8000000000000000 ? 1 : 2", 1),
    ("18446744073709551615+1 ? 1 : 2", 2),  # in 64 bits: 2^64 is 0
    ("0x8000000000000000*2 ? 1 : 2", 2),
    ("~0 ? 3 : 4", 3),
    ("!1 ? 3 : 4", 4),
    ("-1?2:3", 2),
    ("0 ? 5 : -1", M64),
    ("(1 ? 18446744073709551615 : 0) + 1", 0),
    ("(0 ? 1 : 0x8000000000000000) >> 63", 1),
    ("(1.0 < 2.0) ? 7 : 9", 7),           # a comparison of floating-point values is an integer
    ("((1) ? (2) : (3))", 2),
]
# (symbol and offset, the addend ptxas 13.0 wrote into the relocation of a .global .u64 initial value)
OFFSETS = [("g + 0 ? 4 : 8", 8), ("g + 1 ? 4 : 8", 4), ("g+1?2:3?4:5", 2), ("g+(0?4:8)", 8)]


def _init_values(exprs):
    text = f"{_HDR}.visible .global .align 8 .u64 h[{len(exprs)}] = {{{', '.join(exprs)}}};\n"
    res = parse(text, "t.ptx")
    assert res.ok, [str(d) for d in res.diagnostics]
    return [v & M64 for v in res.module.vars[0].init], text


def test_conditional_values_are_computed_as_ptxas_computes_them():
    got, _ = _init_values([e for e, _ in VALUES])
    assert got == [v for _, v in VALUES], [(e, g, v) for (e, v), g in zip(VALUES, got) if g != v]


@pytest.mark.parametrize("expr, value", VALUES, ids=[e for e, _ in VALUES])
def test_a_conditional_operand_has_the_value_of_its_expression(expr, value):
    res = parse(body(f"mov.u64 %rd1, {expr};\nld.global.u64 %rd1, [%rd2 + {expr}];"), "t.ptx")
    assert res.ok, [str(d) for d in res.diagnostics]
    mov, ld = [i for i in res.module.functions[-1].body if getattr(i, "opcode", "").startswith(("mov", "ld"))]
    imm, addr = mov.operands[1], ld.operands[1]
    assert isinstance(imm, Imm) and imm.value & M64 == value, imm
    assert isinstance(addr, Addr) and addr.offset & M64 == value, addr


@pytest.mark.parametrize("expr, offset", OFFSETS, ids=[e for e, _ in OFFSETS])
def test_a_symbol_offset_takes_the_whole_conditional(expr, offset):
    res = parse(body(f"mov.u64 %rd1, {expr};"), "t.ptx")
    assert res.ok, [str(d) for d in res.diagnostics]
    mov = [i for i in res.module.functions[-1].body if getattr(i, "opcode", "") == "mov.u64"][0]
    assert isinstance(mov.operands[1], SymOffset) and mov.operands[1].offset == offset, mov.operands[1]
    assert errors(scope(f".global .u64 h = {expr};")) == []


def _cubin(text: str) -> bytes:
    with tempfile.TemporaryDirectory() as d:
        src, out = os.path.join(d, "t.ptx"), os.path.join(d, "t.cubin")
        with open(src, "w") as f:
            f.write(text)
        r = subprocess.run(["ptxas", "-arch=sm_90a", src, "-o", out], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        with open(out, "rb") as f:
            return f.read()


def _sections(elf: bytes):
    """{name: (type, data)} of an ELF64 little-endian file's sections."""
    shoff = struct.unpack_from("<Q", elf, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    heads = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    names = heads[shstrndx]

    def name(off):
        start = names[4] + off
        return elf[start:elf.index(b"\0", start)].decode()
    return {name(h[0]): (h[1], elf[h[4]:h[4] + h[5]]) for h in heads}


@pytest.mark.ptxas
def test_conditional_values_agree_with_ptxas():
    got, text = _init_values([e for e, _ in VALUES])
    _, data = _sections(_cubin(text))[".nv.global.init"]
    written = list(struct.unpack_from(f"<{len(VALUES)}Q", data))
    assert written == got, [(e, w, g) for (e, _), w, g in zip(VALUES, written, got) if w != g]


@pytest.mark.ptxas
def test_conditional_symbol_offsets_agree_with_ptxas():
    text = (f"{_HDR}.visible .global .align 8 .b8 g[64];\n"
            f".visible .global .align 8 .u64 h[{len(OFFSETS)}] = {{{', '.join(e for e, _ in OFFSETS)}}};\n")
    assert errors(text) == []
    typ, rela = _sections(_cubin(text))[".rela.nv.global.init"]
    assert typ == 4  # SHT_RELA: (offset, info, addend) entries
    addends = {off // 8: add for off, _, add in struct.iter_unpack("<QQq", rela)}
    assert addends == {i: v for i, (_, v) in enumerate(OFFSETS)}


# ------------------------------------------------------------------------------------ where `?:` stands
S, D, O = "PTX-E-SYNTAX", "PTX-E-DIRECTIVE", "PTX-E-OPERANDS"
PLACES = [
    # instruction operands, which take it
    _case(body, "mov.u32 %r1, 1 ? 7 : 9;"),
    _case(body, "mov.u32 %r1, (2 > 1) ? 7 : 9;"),
    _case(body, "mov.u32 %r1, 0 ? 1 : 2 + 3;"),
    _case(body, "mov.u32 %r1, 1?2:3?4:5;"),
    _case(body, "mov.u32 %r1, 1?2?3:4:5;"),
    _case(body, "mov.u32 %r1, ((1) ? (2) : (3));"),
    _case(body, "mov.u32 %r1, (1.0 < 2.0) ? 1 : 2;"),
    _case(body, "mov.u32 %r1, 1 ?\n 2 :\n 3;"),
    _case(body, "add.u32 %r1, %r2, 1?4:8;"),
    _case(body, "setp.eq.u32 %p, %r1, 1?2:3;"),
    _case(body, "mov.pred %p, 1?1:0;"),
    _case(body, "@%p mov.u32 %r1, 1?2:3;"),
    _case(body, "mov.v2.u32 {%r1, %r2}, {1?2:3, 4};"),
    _case(body, "ld.global.u32 %r1, [%rd1 + (1?4:8)];"),
    _case(body, "ld.global.u32 %r1, [%rd1 + 1 ? 4 : 8];"),
    _case(body, "ld.global.u32 %r1, [%rd1 + 1 ? 4 : 8 + 1];"),
    _case(body, "ld.global.u32 %r1, [g + 1 ? 4 : 8];"),
    _case(body, "ld.local.u32 %r1, [1?4:8];"),
    _case(body, "mov.u64 %rd1, g+1?4:8;"),
    _case(body, "mov.u64 %rd1, g+(1?4:8);"),
    _case(body, "call.uni f, (1?2:3);"),
    _case(body, "call.uni (%r1), g2, (4, 0?2:3);"),
    _case(body, "bar.sync 1?0:1;"),
    _case(body, "bfe.u32 %r1, %r2, 0?300:255, 4;"),
    _case(body, "mov.u64 %rd1, (1 ? 0x8000000000000000 : 1) / -1;"),
    _case(body, "mov.u64 %rd1, (1 ? 1U<<63 : 1) / -1;"),
    # ... and refuse in these spellings
    _case(body, "mov.u32 %r1, 1 ? 2;", S, ";"),
    _case(body, "mov.u32 %r1, 1 ?: 2;", S, ": 2"),
    _case(body, "mov.u32 %r1, ? 2 : 3;", S, "? 2"),
    _case(body, "mov.u32 %r1, 1 ? : 3;", S, ": 3"),
    _case(body, "mov.u32 %r1, (1 ? 2) : 3;", S, ") : 3"),
    _case(body, "mov.u32 %r1, 1 ? 2 : 3 : 4;", S, ": 4"),
    _case(body, "mov.u32 %r1, 1 ? %r2 : 0;", S, "%r2"),
    _case(body, "mov.u64 %rd1, 1 ? g : g;", S, "g : g"),
    _case(body, "mov.u64 %rd1, g+1?4:8+g;", S, "g;"),
    _case(body, "ld.global.u32 %r1, [%rd1 - 1 ? 4 : 8];", S, "- 1"),
    _case(body, "mov.u32 %r1, 1 ?\n 2 :\n ;", S, ";"),
    # a floating-point operand: at the token after the expression, as ptxas reports it
    _case(body, "mov.f32 %f1, 1 ? 1.0 : 2.0;", S, ";"),
    _case(body, "mov.u32 %r1, 1.0 ? 1 : 2;", S, ";"),
    _case(body, "mov.u32 %r1, 1 ? 1 : 2.0;", S, ";"),
    _case(body, "mov.f64 %fd1, 1 ? 0d3FF0000000000000 : 0d4000000000000000;", S, ";"),
    _case(body, "mov.f32 %f1, 1 ? (0f3F800000) : (0f40000000);", S, ";"),
    _case(body, "mov.u32 %r1, (0f3F800000) ? 1 : 2;", S, ";"),
    _case(body, "mov.u32 %r1, 1 ?\n 1.0 :\n 3;", S, ";"),
    _case(body, "mov.u32 %r1, 1\n ? 2\n : 3.0\n;", S, ";"),
    _case(body, "mov.u32 %r1, (1 ?\n 1.0 :\n 2)\n + 1;", S, ")\n + 1"),
    _case(body, "mov.u32 %r1, 1 ?\n 2 :\n 3 ? 4.0 : 5\n\n;", S, ";"),
    _case(body, "mov.u32 %r1, 1 ? 1.0 : 2 // c\n\n;", S, ";"),
    _case(body, "ld.global.u32 %r1, [%rd1 + 1 ? 1.0 : 2\n];", S, "];"),
    # both branches are read
    _case(body, "mov.u32 %r1, 0 ? 1/0 : 2;", S, "/0"),
    _case(body, "mov.u32 %r1, 1 ? 2 : 1/0;", S, "/0"),
    _case(body, "mov.u32 %r1, 1 ? 2 : 99999999999999999999;", S, "99999"),
    # signed where the branch taken is: -2^63 / -1 crashes ptxas
    _case(body, "mov.u64 %rd1, (1 ? (1<<63) : 1U) / -1;", S, "/ -1", True),
    _case(body, "mov.u64 %rd1, (0 ? 0x8000000000000000 : (1<<63)) / -1;", S, "/ -1", True),
    _case(body, "mov.u64 %rd1, (1<<63) / (0 ? 1U : -1);", S, "/ (0", True),
    # immediates whose value ptxas checks
    _case(body, "bar.sync 0?0:16;", O, "0?0:16"),
    _case(body, "bfe.u32 %r1, %r2, 1?300:0, 4;", O, "1?300:0"),
    # initial values and texture fields take it
    _case(scope, ".global .u32 h = 1 ? 2 : 3;"),
    _case(scope, ".global .u32 h[2] = {1 ? 2 : 3, 4};"),
    _case(scope, ".global .v2 .u32 h = {1?2:3, 4};"),
    _case(scope, ".global .u64 h = g + 0 ? 4 : 8;"),
    _case(scope, ".global .u64 h = generic(g)+0?16:24;"),
    _case(scope, ".global .texref t = { width = 1?2:3 };"),
    _case(body, ".local .u32 h;\nst.local.u32 [h+1?0:4], 1?2:3;"),
    _case(scope, ".global .f32 h = 1 ? 1.0 : 2.0;", S, ";"),
    _case(scope, ".global .u32 h = 1.0 ? 1 : 2;", S, ";"),
    _case(scope, ".global .u32 h[2] = {1 ?\n 2.0 :\n 3, 4};", S, ", 4"),
    # places that read an integer literal only
    _case(scope, ".global .b32 h[1 ? 4 : 8];", S, "? 4"),
    _case(scope, ".global .b32 h[(1?4:8)];", S, "(1?4:8)"),
    _case(scope, ".global .b32 h[2][1?4:8];", S, "?4"),
    _case(scope, ".global .b32 h[2+1 ? 4 : 8];", S, "+1"),
    _case(scope, ".global .b32 h[1 ?\n 4 : 8];", S, "?\n"),
    _case(scope, ".global .b32 h[\n1 ? 4 : 8];", S, "? 4"),
    _case(scope, ".global .align 1?4:8 .b32 h;", S, "?4"),
    _case(body, ".reg .b32 %q<1?4:8>;", S, "?4"),
    _case(body, ".loc 1 1?2:3 0", S, "?2"),
    _case(body, ".loc 1 2 1?0:1", S, "?0"),
    _case(scope, '.file 2?1:2 "b.cu"', S, "?1"),
    _case(header, " .maxntid 1?2:3", S, "?2"),
    _case(header, " .maxntid 64, 1?1:2", S, "?1"),
    _case(header, " .reqntid 1?2:3", S, "?2"),
    _case(header, " .maxnreg 1?32:64", S, "?32"),
    _case(header, " .minnctapersm 1?1:2", S, "?1"),
    _case(header, " .maxclusterrank 1?1:2", S, "?1"),
    _case(header, " .reqnctapercluster 1?1:2", S, "?1"),
    _case(section, ".b8 1, -2 ? 2 : 3", S, "? 2"),
    _case(section, ".b32 (1?2:3)", S, "(1?2:3)"),
    _case(section, ".b8 1?2:3, 4", S, "?2"),
]


@pytest.mark.parametrize("text, code, at, crashes", PLACES)
def test_conditionals_lint_as_ptxas_takes_them(text, code, at, crashes):
    ds = _case_lints_as(text, code)
    for d in ds:
        assert "\n".join(text.split("\n")[d.loc.line - 1:])[d.loc.col - 1:].startswith(at), str(d)
        assert d.notes or d.message.startswith("unexpected"), str(d)


@pytest.mark.ptxas
@pytest.mark.parametrize("text, code, at, crashes", PLACES)
def test_conditional_cases_agree_with_ptxas(text, code, at, crashes):
    _case_agrees_with_ptxas(text, code, crashes)


def test_a_conditional_in_an_array_dimension_says_what_to_write():
    (d,) = errors(scope(".global .b32 h[1 ? 4 : 8];"))
    assert "array dimension" in d.message and d.notes == ("write `[4]`",), str(d)
    (d,) = errors(section(".b8 1, -2 ? 2 : 3"))
    assert "section" in d.message and d.notes == ("write the value as a literal: `.b8 2`",), str(d)


def test_a_floating_point_operand_of_a_conditional_names_it():
    (d,) = errors(body("mov.f32 %f1, 1 ? 1.0 : 2.0;"))
    assert "`?:`" in d.message and "Integer constant expression expected" in d.message, str(d)


# --------------------------------------------------------------------------------------- .version numbers
def version(v: str, target: str = "sm_90a") -> str:
    return f".version {v}\n.target {target}\n.address_size 64\n.visible .entry k()\n{{\nret;\n}}\n"


# (number as written, code of lint's one error or None, the line of the error)
VERSIONS = [(v, None, None) for v in ("9.0", "9.00", "9.000", "09.0", "0009.0", "8.8", "8.7", "8.07", "8.007",
                                      "08.08", "8.10", "8.010", "8.0", "4294967305.0", "8.4294967306",
                                      "9.0 // latest", "000000000000000000000009.0")]
VERSIONS += [(v, D, 1) for v in ("9.1", "9.2", "9.01", "9.10", "9.9", "10.0", "10.1", "99.0", "8.9", "8.09",
                                 "8.70", "8.11", "8.20", "7.9", "0.0", "0.9", "1.9", "3.61", "429496729.6",
                                 "9.18446744073709551616", "9223372036854775807.0", "18446744073709551625.0")]
# known numbers, older than sm_90a: ptxas reports the .target line, and the .address_size line where the pair is
# older than 2.3
VERSIONS += [(v, D, 2) for v in ("7.8", "7.10", "7.20", "2.3")]
VERSIONS += [(v, D, (3, 2)) for v in ("2.2", "1.0", "0.90", "2147483657.0", "4294967295.100",
                                      "18446744073709551616.90")]
# the version followed by other characters: ptxas says "Missing .target directive" at the version's line
VERSIONS += [(v, "*", 1) for v in ("9.0x", "9.0e0", "9.0U", "9.0;", "9.0.0", "9.0 8.0", "9 .0", "+9.0")]


@pytest.mark.parametrize("v, code, line", VERSIONS, ids=[c[0] for c in VERSIONS])
def test_version_numbers_lint_as_ptxas_reads_them(v, code, line):
    ds = errors(version(v))
    if code is None:
        assert ds == [], [str(d) for d in ds]
        return
    if isinstance(line, tuple):  # the target's PTX-E-DIRECTIVE, and the .address_size's PTX-E-VERSION
        assert [(d.code, d.loc.line) for d in ds] == [(D, 2), ("PTX-E-VERSION", 3)], [str(d) for d in ds]
        return
    assert len(ds) == 1 and ds[0].loc.line == line and (code == "*" or ds[0].code == code), [str(d) for d in ds]
    if code == D and line == 1:
        d = ds[0]
        assert (d.loc.col, d.span) == (10, len(v)), str(d)
        assert f"Unsupported .version {v}; current version is '9.0'" in d.message, str(d)
        assert "`.version " in d.notes[0], str(d)


@pytest.mark.ptxas
@pytest.mark.parametrize("v, code, line", VERSIONS, ids=[c[0] for c in VERSIONS])
def test_version_numbers_agree_with_ptxas(v, code, line):
    text = version(v)
    rc, out = _ptxas(text, "sm_90a")
    assert (rc != 0) == (code is not None), out
    if code is not None:
        lines = [int(n) for n in re.findall(r"line (\d+); (?:error|fatal)", out)]
        assert lines == list(line if isinstance(line, tuple) else (line,)), out
        assert ("Unsupported .version" in out) == (code == D and line == 1), out


def _ptxas(text: str, arch: str):
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "v.ptx")
        with open(p, "w") as f:
            f.write(text)
        r = subprocess.run(["ptxas", f"-arch={arch}", p, "-o", os.devnull], capture_output=True, text=True,
                           timeout=120)
    return r.returncode, r.stdout + r.stderr


def _matrix():
    """Every MAJOR.MINOR from 0.0 to 11.20, and major * 10 + minor up to 300 spelled as 0.N."""
    return [f"{a}.{b}" for a in range(12) for b in range(21)] + [f"0.{n}" for n in range(301)]


def test_the_known_versions_are_those_of_the_ptx_isa_up_to_9_0():
    known = [v for v in _matrix() if version_error(read_version(v)) is None]
    singles = [read_version(v) for v in known if len(v.split(".")[1]) == 1]
    assert singles == list(PTX_VERSIONS) and LATEST_PTX == (9, 0)
    assert {"8.10", "7.20", "0.90", "1.20"} <= set(known) and not {"8.9", "9.1", "9.10", "8.70"} & set(known)


@pytest.mark.ptxas
def test_the_version_rule_agrees_with_ptxas_on_a_matrix():
    """version_error against ptxas's "Unsupported .version" on every number of _matrix(), at sm_75 (whose
    minimum, 6.3, leaves most numbers to the version check alone)."""
    vs = _matrix()
    with ThreadPoolExecutor(max(2, os.cpu_count() or 2)) as ex:
        outs = list(ex.map(lambda v: _ptxas(version(v, "sm_75"), "sm_75")[1], vs))
    wrong = [(v, out) for v, out in zip(vs, outs)
             if ("Unsupported .version" in out) != (version_error(read_version(v)) is not None)]
    assert not wrong, wrong[:10]
    assert 60 < sum("Unsupported" not in o for o in outs) < len(vs) - 200


# a feature gate compares (major, minor): stacksave needs PTX ISA 7.3
@pytest.mark.parametrize("v, ok", [("6.20", False), ("7.2", False), ("7.3", True), ("7.03", True), ("7.10", True)])
def test_features_compare_the_version_pair(v, ok):
    text = (f".version {v}\n.target sm_75\n.address_size 64\n.visible .entry k()\n{{\n.reg .b64 %rd<2>;\n"
            "stacksave.u64 %rd1;\nret;\n}\n")
    assert [d.code for d in errors(text)] == ([] if ok else ["PTX-E-VERSION"]), [str(d) for d in errors(text)]


@pytest.mark.ptxas
@pytest.mark.parametrize("v, ok", [("6.20", False), ("7.2", False), ("7.3", True), ("7.03", True), ("7.10", True)])
def test_features_compare_the_version_pair_as_ptxas_does(v, ok):
    text = (f".version {v}\n.target sm_75\n.address_size 64\n.visible .entry k()\n{{\n.reg .b64 %rd<2>;\n"
            "stacksave.u64 %rd1;\nret;\n}\n")
    assert (_ptxas(text, "sm_75")[0] == 0) == ok


def test_an_unknown_version_is_the_one_error_of_its_module():
    """ptxas stops at the version; lint reports nothing it would check with a version that does not exist."""
    text = (".version 1.9\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n.reg .b64 %rd<2>;\n"
            "stacksave.u64 %rd1;\nret;\n}\n")
    assert [(d.code, d.loc.line) for d in errors(text)] == [(D, 1)], [str(d) for d in errors(text)]
    assert parse(text).module.version is None


# ----------------------------------------------------------------------------------------------- builder
@pytest.mark.parametrize("v", ["9.1", (10, 0), 9.1, "8.9", (7, 9), "8.70", "9.10", "0.5"])
def test_the_builder_refuses_a_version_ptxas_does_not_know(v):
    with pytest.raises(BuildError) as e:
        pg.Module("sm_90a", version=v)
    assert e.value.code == D and "Unsupported .version" in e.value.message, str(e.value)
    assert e.value.loc is not None and e.value.loc.file == __file__, e.value.loc
    assert e.value.notes and "version='" in e.value.notes[0], e.value.notes


@pytest.mark.parametrize("v", [(4294967305, 0), (-1, 100), (9, -1)])
def test_the_builder_refuses_version_numbers_out_of_range(v):
    with pytest.raises(BuildError) as e:
        pg.Module("sm_90a", version=v)
    assert e.value.code == D, str(e.value)


@pytest.mark.parametrize("v, emitted", [("9.0", "9.0"), ("9.00", "9.0"), ((8, 10), "8.10"), (8.8, "8.8"),
                                        ("8.0", "8.0")])
def test_the_builder_takes_the_versions_ptxas_knows(v, emitted):
    m = pg.Module("sm_90a", version=v)
    k = m.entry("k")
    k.ret()
    text = m.emit().text
    assert f".version {emitted}\n" in text
    assert errors(text) == [], [str(d) for d in errors(text)]


@pytest.mark.ptxas
def test_builder_modules_at_each_known_version_assemble():
    for v in [x for x in PTX_VERSIONS if x >= (8, 0)] + [(8, 10)]:
        m = pg.Module("sm_90a", version=v)
        m.entry("k").ret()
        rc, out = _ptxas(m.emit().text, "sm_90a")
        assert rc == 0, (v, out)
