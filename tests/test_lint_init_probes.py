"""Initial values of variables linted as ptxas 13.0 takes them, probed spelling by spelling.

What ptxas 13.0 showed (each case below is a module of its own; the tests marked ptxas run them through it):
- it checks an initializer from the outside in, in the order it is written, and stops at the first of: a
  list where a value belongs or a list of the wrong count (before the values it holds, which it does not
  check), a value where a list belongs, a value of the wrong kind. It reports a list's error at the line of
  its closing brace, a value's at the line of the value, so `.global .f32 h = {1,\\n 1};` is an error at the
  second line (a list where the value belongs), not at the integer 1 on the first.
- .f16 takes no value, also where a list stands for the value ("No initial value is allowed for .f16 type").
"""
from __future__ import annotations

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_lint_vector_probes import _PHDR, _case_agrees_with_ptxas, _case_lints_as, errors, needs_ptxas  # noqa: E402


def _in_kernel(decl: str) -> str:
    return f".visible .entry k()\n{{\n{decl}\nret;\n}}"


def _both_scopes(cases):
    """Each (declaration, where lint's error starts or None) case as (module, code, where): the declaration
    at module scope and in a kernel's body."""
    out = []
    for d, at in cases:
        for text in (_PHDR + d + "\n", _PHDR + _in_kernel(d) + "\n"):
            out.append((text, "PTX-E-DECL" if at else None, at))
    return out


def _lints_at(text, code, at):
    """_case_lints_as, and the error starts at the text `at` (which may run over lines)."""
    for d in _case_lints_as(text, code):
        assert "\n".join(text.split("\n")[d.loc.line - 1:])[d.loc.col - 1:].startswith(at), str(d)
        assert d.notes, str(d)


def _ids(cases):
    return [c[0][len(_PHDR):] for c in cases]


# the order of ptxas's checks, told apart by lines: (declaration, where lint's error starts, None where ptxas
# takes the declaration)
ORDER = [
    (".global .f32 h = {1,\n 1};", "};"),             # the list, at its `}`, before the integer in it
    (".global .u64 h = {1.0,\n 1};", "};"),
    (".global .f16 h = {1,\n 1};", "};"),
    (".global .u32 h[1] = {1.0,\n 2};", "};"),         # the list's count before its values
    (".global .f16 h[1] = {1,\n 2};", "};"),
    (".global .v2 .f32 h = {1,\n 2.0, 3.0};", "};"),
    (".global .f16 h[2] = {1,\n 2};", "1,"),           # the first value
    (".global .u32 h[2][1] = {{1.0},\n {2, 3}};", "1.0}"),
    (".global .f32 h[2] = {{1},\n 2.0};", "},"),
    (".global .v2 .f32 h[2] = {{1.0, 2.0},\n 3.0};", "3.0}"),
    (".global .f32 h[2] = {1.0,\n 2.0};", None),
    (".global .b32 h[2] = {1.0,\n 2};", None),
]
ORDER_CASES = _both_scopes(ORDER)


@pytest.mark.parametrize("text,code,at", ORDER_CASES, ids=_ids(ORDER_CASES))
def test_initializers_lint_in_the_order_ptxas_checks_them(text, code, at):
    _lints_at(text, code, at)


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("text,code,at", ORDER_CASES, ids=_ids(ORDER_CASES))
def test_initializer_order_cases_agree_with_ptxas(text, code, at):
    _case_agrees_with_ptxas(text, code)


def test_a_list_where_a_value_belongs_is_an_error_at_its_closing_brace():
    for decl, msg in ((".global .f32 h = {1,\n 1};", "a {...} list where h takes a single value"),
                      (".global .f16 h = {1,\n 1};", "a .f16 variable takes no initial value")):
        (d,) = errors(_PHDR + decl + "\n")
        assert (d.loc.line, d.loc.col) == (5, 3) and d.message.startswith(msg) and d.notes, str(d)
