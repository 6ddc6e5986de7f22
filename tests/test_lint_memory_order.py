"""ld's and st's memory orders, scopes, state spaces, .nc, .mmio and cache operators together, as ptxas 13.0 takes them
(isa_core.memory_order_error, which lint and the builder both ask).

What ptxas 13.0 showed, where lint took what it refuses (497 of 770 spellings of the matrix below): a scope needs
.relaxed, .acquire or .release ("Modifier '.gpu' requires memory order") and cannot go with .weak or .volatile;
.volatile, .relaxed, .acquire and .release cannot be applied to .local, .param or .const memory (.weak can); two memory
orders are refused ("Duplicate .relaxed modifier"); .nc needs an explicit .global and no memory order; .mmio is
.mmio.relaxed.sys on global or generic memory; a cache operator goes with no order but .weak.
"""
from __future__ import annotations

import itertools
import os
import sys

import pytest

import ptxgen as pg

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _ptxas_lines import agree_with_ptxas, lint_disagrees_with_ptxas, lint_errors  # noqa: E402
from test_lint_vector_probes import needs_ptxas  # noqa: E402

ORDERS = ("", "weak", "volatile", "relaxed", "acquire", "release", "mmio.relaxed")
SCOPES = ("", "cta", "cluster", "gpu", "sys")
SPACES = {"": "[%rd1]", "global": "[%rd1]", "shared": "[sh]", "shared::cta": "[sh]", "shared::cluster": "[sh]",
          "local": "[%rd1]", "param": "[p]", "const": "[%rd1]"}


def module(lines):
    return (".version 8.8\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
            "\t.reg .b32 %r<5>;\n\t.reg .b64 %rd<5>;\n\t.shared .u32 sh[64];\n"
            + "".join(f"\t{ln}\n" for ln in lines) + "\tret;\n}\n")


def _words(*ws):
    return "".join("." + w for w in ws if w)


def matrix():
    out = []
    for order, scope, (space, addr), extra in itertools.product(ORDERS, SCOPES, SPACES.items(),
                                                                ("", "nc", "ca", "cg", "L1::evict_last",
                                                                 "L1::no_allocate")):
        out.append(f"ld{_words(order, scope, space, extra)}.u32 %r2, {addr};")
        # (no st.param: through a register ptxas crashes, which lint reports on its own)
        if space not in ("param", "const") and extra not in ("nc", "ca"):
            out.append(f"st{_words(order, scope, space, 'wb' if extra == 'cg' else extra)}.u32 {addr}, %r2;")
    for a, b in itertools.permutations(("weak", "volatile", "relaxed", "acquire", "release"), 2):
        out.append(f"ld.{a}.{b}.gpu.global.u32 %r2, [%rd1];")
    return list(dict.fromkeys(out))



LINES = [
    ("ld.global.gpu.u32 %r1, [%rd1];", False), ("ld.relaxed.gpu.global.u32 %r1, [%rd1];", True),
    ("ld.volatile.gpu.global.u32 %r1, [%rd1];", False), ("ld.nc.u32 %r1, [%rd1];", False),
    ("ld.global.nc.u32 %r1, [%rd1];", True), ("ld.global.nc.weak.u32 %r1, [%rd1];", False),
    ("ld.acquire.gpu.local.u32 %r1, [%rd1];", False), ("ld.weak.local.u32 %r1, [%rd1];", True),
    ("ld.volatile.param.u32 %r1, [p];", False), ("st.relaxed.gpu.local.u32 [%rd1], %r1;", False),
    ("ld.mmio.relaxed.sys.global.u32 %r1, [%rd1];", True), ("ld.mmio.relaxed.gpu.global.u32 %r1, [%rd1];", False),
    ("ld.mmio.relaxed.sys.shared.u32 %r1, [sh];", False), ("ld.relaxed.acquire.gpu.global.u32 %r1, [%rd1];", False),
    ("ld.relaxed.gpu.global.ca.u32 %r1, [%rd1];", False), ("ld.weak.global.ca.u32 %r1, [%rd1];", True),
    ("ld.relaxed.gpu.global.L1::evict_last.u32 %r1, [%rd1];", True), ("st.global.cluster.u32 [%rd1], %r1;", False),
]


@pytest.mark.parametrize("text,ok", LINES, ids=[ln for ln, _ in LINES])
def test_lint_verdict(text, ok):
    errs = lint_errors(module([text]))
    assert (not errs) == ok, [str(d) for d in errs.values()]


def test_messages():
    (d,) = lint_errors(module(["ld.global.gpu.u32 %r1, [%rd1];"])).values()
    assert (d.code, d.message) == ("PTX-E-MODIFIER", "ld.gpu needs a memory order (.relaxed or .acquire)")
    assert d.notes == ("write ld.relaxed.gpu",)
    (d,) = lint_errors(module(["ld.acquire.gpu.local.u32 %r1, [%rd1];"])).values()
    assert d.message == "ld.acquire cannot be applied to .local memory"
    (d,) = lint_errors(module(["ld.nc.u32 %r1, [%rd1];"])).values()
    assert d.message == "ld.nc is for .global memory only" and d.notes == ("write ld.global.nc",)


def test_the_builder_refuses_what_lint_refuses():
    m = pg.Module("sm_90a")
    k = m.entry("k")
    a = k.ld_param(k.param("p", pg.u64))
    with pytest.raises(pg.LegalityError, match=r"ld.volatile cannot be applied to .local memory"):
        k.ld(a, pg.u32, space="local", sem="volatile")
    with pytest.raises(pg.LegalityError, match=r"st.relaxed cannot be applied to .local memory"):
        k.st(a, k.reg(pg.u32), space="local", sem="relaxed", scope="gpu")
    k.ld(a, pg.u32, space="local", sem="weak")
    k.ld(a, pg.u32, space="shared", sem="volatile")
    k.ret()
    assert not lint_errors(str(m.emit()))


@pytest.mark.ptxas
@needs_ptxas
def test_recorded_verdicts_are_ptxas_verdicts():
    agree_with_ptxas(LINES, module)


@pytest.mark.ptxas
@needs_ptxas
def test_every_combination_lints_as_ptxas_assembles_it():
    lines = matrix()
    wrong = lint_disagrees_with_ptxas(lines, module)
    assert len(lines) > 2000 and not wrong, f"{len(wrong)} of {len(lines)}:\n" + "\n".join(wrong[:40])
