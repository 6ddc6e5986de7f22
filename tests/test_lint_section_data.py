"""A section's data values as ptxas 13.0 checks them past their syntax, line by line against ptxas (the tests
marked ptxas assemble each case and compare the line of its first error with lint's).

What ptxas 13.0 showed:
- an integer is range-checked by the type: with a `-`, 1 to 2^(N-1) for .b8, .b16 and .b32 (`.b8 -0` too is
  "Value out of range for type .b8 0", `.b8 -129` is out); without one, the literal's low 32 bits are at most
  2^N - 1 for .b8 and .b16 (`.b16 4294967296` is taken, `.b16 18446744073709551615` is "Value out of range for
  type .b16 4294967295"); .b32 takes any unsigned literal, .b64 any value. The error is at the line of the token
  after the directive's last value.
- a label or section name (`L1`, `L1+1`, `L2-L1`, `.debug_abbrev`) in .b8 or .b16 data is "Illegal type for
  dwarf data", at the line of the token after the name.
- a label is a directive's one value: `.b32 1, L1` is a syntax error at the name, `.b32 L1, 1` at the `,`.
lint took all of these.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile

import pytest

from ptxgen import lint as L

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_lint_vector_probes import needs_ptxas  # noqa: E402

D, S = "PTX-E-DECL", "PTX-E-SYNTAX"


def section(data: str) -> str:
    """A module with a DWARF section holding the `data` lines between two labels (`data` starts at line 11)."""
    return (".version 8.7\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\nret;\n}\n"
            f".section .debug_abbrev\n{{\nL1:\n{data}\nL2:\n}}\n")


# (data, the code of lint's one error or None, the line of it)
CASES = [
    (".b8 255", None, 0), (".b8 256", D, 12), (".b8 -1", None, 0), (".b8 -128", None, 0), (".b8 -129", D, 12),
    (".b8 -255", D, 12), (".b8 -256", D, 12), (".b8 -0", D, 12), (".b8 0", None, 0), (".b8 0xFF", None, 0),
    (".b8 0x100", D, 12), (".b8 -0xFF", D, 12), (".b8 -0x100", D, 12), (".b8 -0x80", None, 0),
    (".b8 -0x81", D, 12), (".b8 0377", None, 0), (".b8 0400", D, 12), (".b8 0b11111111", None, 0),
    (".b8 0b100000000", D, 12), (".b8 255U", None, 0), (".b8 256U", D, 12), (".b8 18446744073709551615", D, 12),
    (".b8 4294967552", D, 12), (".b8 4294967296", None, 0), (".b8 -9223372036854775807", D, 12),
    (".b8 1, 256, 3", D, 12), (".b8 1,\n256,\n3", D, 14), (".b8 256,\n3", D, 13), (".b8 1,\n2,\n256", D, 14),
    (".b8 1 // c\n, 256", D, 13), (".b8 /* x */ 256", D, 12), (".b8 0x7f,\n0x80,0xff,\n-0x80", None, 0),
    (".b16 65535", None, 0), (".b16 65536", D, 12), (".b16 -32768", None, 0), (".b16 -32769", D, 12),
    (".b16 -65535", D, 12), (".b16 -0", D, 12), (".b16 4294967296", None, 0),
    (".b16 18446744073709551615", D, 12),
    (".b32 4294967295", None, 0), (".b32 4294967296", None, 0), (".b32 18446744073709551615", None, 0),
    (".b32 -2147483648", None, 0), (".b32 -2147483649", D, 12), (".b32 -4294967296", D, 12), (".b32 -0", D, 12),
    (".b32 -2147483648, 4294967296", None, 0),
    (".b64 18446744073709551615", None, 0), (".b64 -0", None, 0), (".b64 -1", None, 0),
    (".b64 -9223372036854775807", None, 0), (".b64 -0\n, 1", None, 0),
    (".b8 L1", D, 12), (".b16 L1", D, 12), (".b32 L1", None, 0), (".b64 L1", None, 0), (".b8 L2-L1", D, 11),
    (".b16 L2-L1", D, 11), (".b32 L2-L1", None, 0), (".b8 L1+1", D, 11), (".b8 .debug_abbrev", D, 12),
    (".b16 .debug_abbrev+1", D, 11), (".b32 .debug_abbrev+4", None, 0),
    (".b8 1, L1", S, 11), (".b8 1,\nL1", S, 12), (".b32 1, L1", S, 11), (".b64 1, L1", S, 11),
    (".b32 L1, 1", S, 11), (".b64 L1, L2", S, 11), (".b32 L2-L1, 1", S, 11), (".b32 -1, L1", S, 11),
    (".b64 1, L1+1", S, 11), (".b32 L1,\n1", S, 11),
]


def _errors(text):
    return [d for d in L.lint_ptx(text, "t.ptx") if d.severity == "error"]


@pytest.mark.parametrize("data,code,line", CASES, ids=[d for d, _, _ in CASES])
def test_lint_verdict_and_line(data, code, line):
    ds = _errors(section(data))
    if code is None:
        assert ds == [], [str(d) for d in ds]
        return
    assert [d.code for d in ds][:1] == [code], [str(d) for d in ds]
    assert ds[0].loc.line == line, str(ds[0])


def test_the_messages_quote_ptxas_and_say_what_to_write():
    (d,) = _errors(section(".b8 256"))
    assert "Value out of range for type .b8 256" in d.message and d.notes == (".b8 data takes 0 to 255, or -128 to -1",)
    (d,) = _errors(section(".b16 -0"))
    assert "Value out of range for type .b16 0" in d.message
    (d,) = _errors(section(".b16 18446744073709551615"))
    assert "Value out of range for type .b16 4294967295" in d.message
    (d,) = _errors(section(".b8 L1"))
    assert "Illegal type for dwarf data" in d.message and d.notes == ("write it in .b32 or .b64 data",)
    (d,) = _errors(section(".b32 1, L1"))
    assert d.notes == ("write each label in a .b32 directive of its own",)


def test_a_section_with_a_syntax_error_gets_no_other_error():
    ds = _errors(section(".b8 1+1\n.b8 256"))
    assert [d.code for d in ds] == [S], [str(d) for d in ds]


# whole modules: a section on one line, data that runs on after its line
WHOLE = [
    (".version 8.7\n.target sm_90a\n.address_size 64\n.section .debug_info { .b8 256 }\n", 4),
    (".version 8.7\n.target sm_90a\n.address_size 64\n.section .debug_info {\n .b8 1, 2\n, 256 }\n", 6),
    (".version 8.7\n.target sm_90a\n.address_size 64\n.section .debug_info\n{\n.b8 1\n.b8 2,\n-300\n.b8 3\n}\n", 9),
    (".version 8.7\n.target sm_90a\n.address_size 64\n.section .debug_info\n{\n.b8 1\n.b8 2 }\n", 0),
]


@pytest.mark.parametrize("text,line", WHOLE)
def test_whole_sections(text, line):
    ds = _errors(text)
    assert [d.loc.line for d in ds] == ([line] if line else []), [str(d) for d in ds]


@pytest.mark.ptxas
@needs_ptxas
def test_whole_sections_agree_with_ptxas():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "s.ptx")
        for text, line in WHOLE:
            with open(path, "w") as fh:
                fh.write(text)
            p = subprocess.run(["ptxas", "-arch=sm_90a", path, "-o", os.path.join(tmp, "s.cubin")],
                               capture_output=True, text=True, timeout=120)
            m = re.search(r"line (\d+); (?:error|fatal)", p.stdout + p.stderr)
            assert (int(m.group(1)) if m else 0) == line, (text, p.stdout + p.stderr)


@pytest.mark.ptxas
@needs_ptxas
def test_every_case_agrees_with_ptxas():
    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "s.ptx")
        for data, code, line in CASES:
            with open(path, "w") as fh:
                fh.write(section(data))
            p = subprocess.run(["ptxas", "-arch=sm_90a", path, "-o", os.path.join(tmp, "s.cubin")],
                               capture_output=True, text=True, timeout=120)
            m = re.search(r"line (\d+); (?:error|fatal)", p.stdout + p.stderr)
            got = (p.returncode != 0, int(m.group(1)) if m else 0)
            if got != (code is not None, line):
                bad.append((data, got))
    assert not bad, bad
