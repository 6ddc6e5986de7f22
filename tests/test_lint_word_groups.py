"""Modifier groups of which an instruction takes exactly one, and instructions that take no type or exactly one, as
ptxas 13.0 takes them (lint's _word_groups).

What ptxas 13.0 showed, where lint took what it refuses: membar needs one level ("Membar level required"), shf one
direction (.l or .r) and one of .clamp/.wrap, redux.sync one operation, vote.sync and shfl.sync one mode and their
type (.pred for vote's .all/.any/.uni, .b32 for .ballot and shfl; lint checked neither without a type), bar and
barrier take no type but bar.red's (.popc.u32, .and.pred, .or.pred), atom and red one type (atom.add.u32.s32) and
red no .exch or .cas, bar.warp, match and redux need .sync, match one of .any/.all; ptxas takes bar.sync.all and
bar.sync.any (lint refused them) and a 32-bit register as cp.async.mbarrier.arrive's generic address;
createpolicy needs one of .fractional/.range/.cvt, an eviction priority (but .cvt), at most two of them (the same
twice is taken: primary and secondary) and .b64; membar, trap, exit, brkpt, pmevent, prefetch(u), bra, brx and ret
take no type; a brx.idx's .branchtargets list is declared before it ("Label expected for forward reference"); vector atom/red (sm_90, PTX ISA 8.1) is .add only, of .v2/.v4
.f32, .v2/.v4/.v8 .f16 and .bf16 and .v2/.v4 .f16x2 and .bf16x2, on global or generic memory, with vector operands
(lint took every vector atom, and asked sm_100 for .v8).
"""
from __future__ import annotations

import itertools
import os
import sys

import pytest


HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _ptxas_lines import (agree_with_ptxas, kernel, lint_disagrees_with_ptxas, lint_errors,  # noqa: E402
                          ptxas_rejected, reg_decls)
from test_lint_vector_probes import needs_ptxas  # noqa: E402

TYPES = ("b32", "u32", "s32", "pred", "f32", "u64", "b64", "f16")


def module(lines):
    decls = reg_decls(("pred", "p", 5), *((t, n, 9) for t, n in (("b32", "r"), ("f32", "f"), ("b64", "rd"), ("b16", "h"),
                                                                ("f16", "hf"), ("f64", "fd"))))
    return kernel(lines, decls=decls + "\t.shared .b32 sh[64];\nT: .branchtargets L;\n", end="L:\n")


def _typed():
    """No type, each type alone, and some pairs."""
    return [()] + [(t,) for t in TYPES] + [("u32", "pred"), ("pred", "pred"), ("b32", "b32"), ("u64", "b32"),
                                           ("u32", "s32")]


def _w(*words):
    return "".join("." + w for w in words if w)


def matrix():
    out = []
    for mode, ts in itertools.product(("", "all", "any", "uni", "ballot", "all.any"), _typed()):
        out.append(f"vote.sync{_w(mode, *ts)} {'%r1' if 'ballot' in mode else '%p1'}, %p2, 0xffffffff;")
    for mode, ts in itertools.product(("", "bfly", "up", "down", "idx", "bfly.up"), _typed()):
        out.append(f"shfl.sync{_w(mode, *ts)} %r1|%p1, %r2, 1, 31, 0xffffffff;")
    for op, ts in itertools.product(("", "add", "min", "max", "and", "or", "xor", "add.max", "and.or"), _typed()):
        r = "%f" if ts[-1:] == ("f32",) else "%r"
        out.append(f"redux.sync{_w(op, *ts)} {r}1, {r}2, 0xffffffff;")
    for ts in ((), ("pred",), ("u32",), ("b32",), ("f16",)):
        out += [f"bar.sync{_w(*ts)} 0;", f"bar.arrive{_w(*ts)} 0, 64;", f"barrier.sync{_w(*ts)} 0;",
                f"barrier.sync.aligned{_w(*ts)} 0;", f"bar.warp.sync{_w(*ts)} 0xffffffff;",
                f"bar.red.popc{_w(*ts)} %r1, 0, %p1;", f"bar.red.popc.u32{_w(*ts)} %r1, 0, %p1;",
                f"bar.red.and{_w(*ts)} %p3, 0, %p1;", f"bar.red.or.pred{_w(*ts)} %p3, 0, %p1;",
                f"barrier.red.popc{_w(*ts)} %r1, 0, %p1;", f"barrier.red.and.pred{_w(*ts)} %p3, 0, %p1;"]
    for lv in ("", "cta", "gl", "sys", "cta.gl", "gl.sys", "proxy.alias"):
        out.append(f"membar{_w(lv)};")
    for d, m, t in itertools.product(("", "l", "r", "l.r"), ("", "clamp", "wrap", "clamp.wrap"), ("b32", "u32", "")):
        out.append(f"shf{_w(d, m, t)} %r1, %r2, %r3, %r4;")
    for op, ts in itertools.product(("add", "exch", "cas", "max"), _typed()):
        if not ts or "f16" in ts:
            continue
        r = "%rd" if ts[-1] in ("u64", "b64") else "%f" if ts[-1] == "f32" else "%p" if ts[-1] == "pred" else "%r"
        if op == "cas":
            out.append(f"atom.global.cas{_w(*ts)} {r}1, [%rd1], {r}2, {r}3;")
        else:
            out.append(f"atom.global.{op}{_w(*ts)} {r}1, [%rd1], {r}2;")
            out.append(f"red.global.{op}{_w(*ts)} [%rd1], {r}2;")
    vreg = {"u32": "%r", "f32": "%f", "f64": "%fd", "f16": "%hf", "bf16": "%h", "f16x2": "%r", "bf16x2": "%r"}
    for base, op, t, v, sp in itertools.product(("atom", "red"), ("add", "max", "exch"), vreg, (2, 4, 8),
                                                ("global", "", "shared")):
        a = "{" + ", ".join(f"{vreg[t]}{i}" for i in range(v)) + "}"
        b = "{" + ", ".join(f"{vreg[t]}{i + 1}" for i in range(v)) + "}"
        words = _w(sp, op, "noftz" if op == "add" and t in ("f16", "bf16", "f16x2", "bf16x2") else "", f"v{v}", t)
        addr = "[sh]" if sp == "shared" else "[%rd1]"
        out.append(f"atom{words} {a}, {addr}, {b};" if base == "atom" else f"red{words} {addr}, {b};")
    out += ["atom.global.v2.f32.add %f1, [%rd1], %f2;", "bar.warp %r1;", "bar.warp.sync %r1;",
            "match.any.b32 %r1, %r2, %r3;", "match.any.sync.b32 %r1, %r2, %r3;", "match.all.b32 %r1|%p1, %r2, %r3;",
            "match.sync.b32 %r1, %r2, %r3;", "match.all.any.sync.b32 %r1, %r2, %r3;", "redux.max.s32 %r1, %r2, -1;",
            "cp.async.mbarrier.arrive.b64 [%r1];", "cp.async.mbarrier.arrive.noinc.b64 [%r1];",
            "cp.async.mbarrier.arrive.b64 [%rd1];"]
    for kind, prio, t in itertools.product(("", "fractional", "range", "fractional.range"),
                                           ("", "L2::evict_first", "L2::evict_last", "L2::evict_first.L2::evict_first",
                                            "L2::evict_first.L2::evict_last", "L2::evict_last.L2::evict_unchanged",
                                            "L2::evict_first.L2::evict_first.L2::evict_first"), ("b64", "b32", "")):
        ops = "%rd1, [%rd2], 64, 128" if kind == "range" else "%rd1, 0.5" if t == "b64" else "%rd1"
        out.append(f"createpolicy{_w(kind, prio, t)} {ops};")
    out += ["createpolicy.cvt.L2.b64 %rd1, %rd2;", "createpolicy.cvt.L2.b32 %r1, %rd2;"]
    for t in ("", ".u32", ".f64", ".b32"):
        out += [f"membar.gl{t};", f"membar.proxy.alias{t};", f"trap{t};", f"brkpt{t};", f"pmevent{t} 1;",
                f"prefetch.global.L2{t} [%rd1];", f"prefetchu.L1{t} [%rd1];", f"bra{t} L;", f"bra.uni{t} L;",
                f"brx.idx{t} %r1, T;", f"nanosleep{t} 100;"]
    for words in ("sync.all", "sync.any", "sync.all.any", "arrive.all", "red.all.pred", "warp.sync.all"):
        out.append(f"bar.{words} 0{', 64' if 'arrive' in words else ''};" if "red" not in words else
                   f"bar.{words} %p1, 0, %p2;")
        out.append(f"barrier.{words} 0;")
    return list(dict.fromkeys(out))



LINES = [
    ("membar;", False), ("membar.gl;", True), ("membar.cta.gl;", False), ("shf.l.b32 %r1, %r2, %r3, %r4;", False),
    ("shf.l.wrap.b32 %r1, %r2, %r3, %r4;", True), ("shf.wrap.b32 %r1, %r2, %r3, %r4;", False),
    ("redux.sync.s32 %r1, %r2, 0xffffffff;", False), ("redux.sync.add.max.s32 %r1, %r2, 0xffffffff;", False),
    ("vote.sync.ballot %r1, %p1, 0xffffffff;", False), ("vote.sync.ballot.b32 %r1, %p1, 0xffffffff;", True),
    ("vote.sync.all %p1, %p2, 0xffffffff;", False), ("vote.sync.all.u32.pred %p1, %p2, 0xffffffff;", False),
    ("shfl.sync.bfly %r1|%p1, %r2, 1, 31, 0xffffffff;", False), ("bar.sync.pred 0;", False),
    ("bar.red.popc %r1, 0, %p1;", False), ("bar.red.popc.u32 %r1, 0, %p1;", True),
    ("atom.global.add.u32.s32 %r1, [%rd1], %r2;", False), ("atom.global.add.pred.u32 %r1, [%rd1], %r2;", True),
    ("atom.global.add.v2.u32 {%r1, %r2}, [%rd1], {%r3, %r4};", False), ("bar.warp %r1;", False),
    ("atom.global.add.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1], {%f5, %f6, %f7, %f8};", True),
    ("red.global.add.noftz.v8.bf16 [%rd1], {%h1, %h2, %h3, %h4, %h5, %h6, %h7, %h8};", True),
    ("atom.shared.add.v2.f32 {%f1, %f2}, [sh], {%f3, %f4};", False), ("match.any.b32 %r1, %r2, %r3;", False),
]


@pytest.mark.parametrize("text,ok", LINES, ids=[ln for ln, _ in LINES])
def test_lint_verdict(text, ok):
    errs = lint_errors(module([text]))
    assert (not errs) == ok, [str(d) for d in errs.values()]


def test_messages():
    (d,) = lint_errors(module(["membar;"])).values()
    assert (d.code, d.message) == ("PTX-E-MODIFIER", "membar needs exactly one of .cta, .gl, .sys, .proxy")
    (d,) = lint_errors(module(["redux.sync.add.max.s32 %r1, %r2, 0xffffffff;"])).values()
    assert d.message == "redux takes exactly one of .add, .min, .max, .and, .or, .xor, not .add and .max"
    (d,) = lint_errors(module(["vote.sync.ballot %r1, %p1, 0xffffffff;"])).values()
    assert (d.code, d.message) == ("PTX-E-TYPE", "vote needs an instruction type")
    assert d.notes == ("vote.sync.ballot.b32, or .pred for .all, .any and .uni",)


BRX = ".version 8.8\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{{\n\t.reg .b32 %r<2>;\n{}\tret;\n}}\n"
BRX_BEFORE = BRX.format("\tmov.u32 %r1, 0;\nT: .branchtargets L;\n\tbrx.idx %r1, T;\nL:\n")
BRX_AFTER = BRX.format("\tmov.u32 %r1, 0;\n\tbrx.idx %r1, T;\nL:\nT: .branchtargets L;\n")


def test_a_branch_target_list_is_declared_before_its_brx():
    assert not lint_errors(BRX_BEFORE)
    (d,) = lint_errors(BRX_AFTER).values()
    assert (d.code, d.loc.line, d.loc.col) == ("PTX-E-LABEL", 8, 15)
    assert d.message.startswith("the .branchtargets list T is declared after this brx.idx")


@pytest.mark.ptxas
@needs_ptxas
def test_branch_target_lists_as_ptxas_has_them():
    assert ptxas_rejected(BRX_BEFORE, "sm_90a") == {}
    assert set(ptxas_rejected(BRX_AFTER, "sm_90a")) == {8}


@pytest.mark.ptxas
@needs_ptxas
def test_recorded_verdicts_are_ptxas_verdicts():
    agree_with_ptxas(LINES, module)


@pytest.mark.ptxas
@needs_ptxas
def test_every_spelling_lints_as_ptxas_assembles_it():
    lines = matrix()
    wrong = lint_disagrees_with_ptxas(lines, module)
    assert len(lines) > 300 and not wrong, f"{len(wrong)} of {len(lines)}:\n" + "\n".join(wrong[:40])
