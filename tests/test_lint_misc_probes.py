"""Modifier and operand rules of ld/st, abs/neg, ex2 and elect.sync where lint took what ptxas 13.0 refuses,
probed line by line (the tests marked ptxas run every line below through it and compare with lint).

What ptxas 13.0 showed:
- ld and st of 256 bits (.v8 of a 32-bit type, .v4 of a 64-bit one) need sm_100 and PTX ISA 8.8 ("Feature '256
  bit wide load/store' requires .target sm_100 or higher"); lint gated .v8 only. They are of .global or a generic
  address: .shared (::cta, ::cluster), .local, .const and .param are "global state space expected for feature
  '256 bit wide load/store'", which lint took. (ld of .v8.b16, 128 bits, crashes ptxas 13.0 at sm_90a and sm_100a,
  so it is not among the lines.)
- ld and st take an L2 eviction priority (.L2::evict_first, .L2::evict_last, .L2::evict_normal) on a 256-bit
  vector only, .v8 of a 32-bit type or .v4 of a 64-bit one ("Instruction 'ld' requires '.v8.b32/.v4.b64' type
  with '.L2::evict_last' modifier"), which needs sm_100; in any state space, with or without .L1::evict_*.
- an L1 eviction priority (.L1::evict_*, .L1::no_allocate) of ld or st takes no cache operator (.ca, .cg, .cs,
  .lu, .cv; .wb, .wt): "Modifier '.evict_last' cannot be combined with modifier '.wt'".
- abs and neg take no .relu ("Illegal modifier '.relu' for instruction 'abs'"), and .ftz only for .f32, .f16 and
  .f16x2 (not .bf16, .bf16x2, .f64).
- ex2 needs .approx for every type; .ftz is refused for .f16 and .f16x2 and required for .bf16 and .bf16x2.
- elect.sync writes `d|p`: `elect.sync %r1, %p1, -1;` is "Arguments mismatch".
- the sink `_` stands for d in elect.sync's `d|p` (not for p: "Predicate output expected"), for either side of
  setp's and match.all.sync's, for p in shfl.sync's; never for both sides (a syntax error). Of the other
  destinations atom's, setp's and mbarrier.arrive's take it; the rest are "Result discard mode is not allowed for
  instruction 'add'". A source is never `_` (a syntax error). lint read `_|%p1` as a syntax error and took `_`
  for any destination and source.
"""
from __future__ import annotations

import os
import sys

import pytest

from ptxgen import lint as L

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _ptxas_lines import first_line, ptxas_rejected  # noqa: E402
from test_lint_vector_probes import needs_ptxas  # noqa: E402

M, O, T = "PTX-E-MODIFIER", "PTX-E-OPERANDS", "PTX-E-TARGET"
V8 = "{%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}"
V4D = "{%rd2, %rd3, %rd4, %rd5}"
_REGS = {"u32": "%r1", "b64": "%rd2", "v4.u32": "{%r1, %r2, %r3, %r4}", "v2.b64": "{%rd2, %rd3}", "v8.b32": V8,
         "v8.f32": V8, "v4.b64": V4D, "v4.f64": V4D, "v8.b16": "{%h1, %h2, %h1, %h2, %h1, %h2, %h1, %h2}",
         "u16": "%h1"}


def module(lines, target="sm_90a"):
    body = "\n".join("\t" + ln for ln in lines)
    return (f".version 8.8\n.target {target}\n.address_size 64\n\n.visible .entry k(.param .u64 p)\n{{\n"
            "\t.reg .b64 %rd<8>;\n\t.reg .b32 %r<12>;\n\t.reg .b16 %h<4>;\n\t.reg .pred %p<3>;\n"
            "\t.shared .align 32 .b8 sbuf[64];\n"
            f"\tld.param.u64 %rd1, [p];\n{body}\n\tret;\n}}\n")


def _ldst(op, mods, ty, space="global", addr="[%rd1]"):
    r = _REGS[ty]
    sp = f".{space}" if space else ""
    return f"ld{sp}{mods}.{ty} {r}, {addr};" if op == "ld" else f"st{sp}{mods}.{ty} {addr}, {r};"


def _l2_cases():
    """(target, line, the error code lint gives (a tuple: the codes), None for none)"""
    out = []
    for target in ("sm_90a", "sm_100a"):
        for op in ("ld", "st"):
            for mods in (".L2::evict_last", ".L2::evict_first", ".L2::evict_normal", ".L1::evict_first.L2::evict_last",
                         ".L2::evict_last.L1::evict_first"):
                for ty in ("u32", "b64", "v4.u32", "v2.b64", "v8.b16", "v8.b32", "v8.f32", "v4.b64", "v4.f64"):
                    wide = ty in ("v8.b32", "v8.f32", "v4.b64", "v4.f64")
                    code = None if wide and target == "sm_100a" else T if wide else M
                    # (.v8.b16: ptxas's one error is the L2 priority's; without it, it takes st.v8.b16 at sm_90a
                    # too and crashes on ld.v8.b16: tests/test_lint_vectors.py)
                    out.append((target, _ldst(op, mods, ty), code))
            for ty in ("v4.b64", "v4.f64", "v8.b32"):     # 256 bits: sm_100
                out.append((target, _ldst(op, "", ty), None if target == "sm_100a" else T))
            out.append((target, _ldst(op, ".L2::evict_last", "u32", space=""), M))
            out.append((target, _ldst(op, ".L2::evict_last", "u32", space="shared", addr="[sbuf]"), M))
    out.append(("sm_90a", "ld.global.nc.L2::evict_last.u32 %r1, [%rd1];", M))
    out.append(("sm_100a", f"ld.global.nc.L2::evict_last.v8.b32 {V8}, [%rd1];", None))
    out.append(("sm_90a", "ld.global.relaxed.gpu.L2::evict_last.u32 %r1, [%rd1];", M))
    out.append(("sm_100a", f"ld.global.relaxed.gpu.L2::evict_last.v8.b32 {V8}, [%rd1];", None))
    out.append(("sm_90a", "ld.global.L2::cache_hint.u32 %r1, [%rd1], %rd2;", None))
    out.append(("sm_90a", "ld.global.L2::evict_last.L2::cache_hint.u32 %r1, [%rd1], %rd2;", M))
    out.append(("sm_100a", f"ld.global.L2::evict_last.L2::cache_hint.v8.b32 {V8}, [%rd1], %rd2;", None))
    return out


def _l1_cases():
    out = []
    for l1 in (".L1::evict_last", ".L1::evict_first", ".L1::evict_normal", ".L1::evict_unchanged",
               ".L1::no_allocate"):
        out.append(("sm_90a", _ldst("ld", l1, "u16"), None))
        out.append(("sm_90a", _ldst("st", l1, "u16"), None))
        for c in (".ca", ".cg", ".cs", ".lu", ".cv"):
            out.append(("sm_90a", _ldst("ld", l1 + c, "u16"), M))
        for c in (".wb", ".cg", ".cs", ".wt"):
            out.append(("sm_90a", _ldst("st", c + l1, "u16"), M))
            out.append(("sm_90a", _ldst("st", l1 + c, "v4.u32"), M))
    out.append(("sm_90a", _ldst("st", ".L1::evict_last.wt", "u16", space=""), M))
    for c in (".ca", ".cg", ".cs", ".lu", ".cv"):
        out.append(("sm_90a", _ldst("ld", c, "u16"), None))
    for c in (".wb", ".cg", ".cs", ".wt"):
        out.append(("sm_90a", _ldst("st", c, "u16"), None))
    return out


_UNARY_TYPES = (("f16", "%h1, %h2"), ("f16x2", "%r1, %r2"), ("bf16", "%h1, %h2"), ("bf16x2", "%r1, %r2"),
                ("f32", "%r1, %r2"), ("f64", "%rd2, %rd3"), ("s32", "%r1, %r2"))


def _abs_neg_cases():
    out = []
    for base in ("abs", "neg"):
        for ty, regs in _UNARY_TYPES:
            out.append(("sm_90a", f"{base}.{ty} {regs};", None))
            out.append(("sm_90a", f"{base}.relu.{ty} {regs};", M))
            out.append(("sm_90a", f"{base}.ftz.{ty} {regs};", None if ty in ("f32", "f16", "f16x2") else M))
        out.append(("sm_90a", f"{base}.relu.ftz.f16 %h1, %h2;", M))
        out.append(("sm_90a", f"{base}.ftz.relu.f32 %r1, %r2;", M))
    return out


def _ex2_cases():
    out = []
    for ty, regs in _UNARY_TYPES[:5]:
        bf = ty.startswith("bf16")
        out.append(("sm_90a", f"ex2.approx.{ty} {regs};", M if bf else None))
        out.append(("sm_90a", f"ex2.approx.ftz.{ty} {regs};", None if bf or ty == "f32" else M))
        out.append(("sm_90a", f"ex2.ftz.approx.{ty} {regs};", None if bf or ty == "f32" else M))
        out.append(("sm_90a", f"ex2.ftz.{ty} {regs};", M))
        out.append(("sm_90a", f"ex2.{ty} {regs};", M))
    return out


ELECT = [
    ("sm_90a", "elect.sync %r1|%p1, -1;", None),
    ("sm_90a", "elect.sync %r1|%p1, %r2;", None),
    ("sm_90a", "elect.sync %r1, %p1, -1;", O),
    ("sm_90a", "elect.sync %r1, %p1, %r2;", O),
    ("sm_90a", "elect.sync %r1, %p1, 0xffffffff;", O),
    ("sm_90a", "elect.sync %r1, -1;", O),
    ("sm_90a", "elect.sync %r1|%p1;", O),
]

# the sink `_`: one side of `d|p` (never both: a syntax error), the destination of atom, setp and mbarrier.arrive;
# any other destination is "Result discard mode is not allowed for instruction '...'", a source a syntax error
SINKS = [(t, ln, code) for t in ("sm_90a", "sm_100a") for ln, code in (
    ("elect.sync _|%p1, -1;", None),
    ("elect.sync _|%p1, %r2;", None),
    ("elect.sync %r1|_, -1;", O),
    ("elect.sync _|_, -1;", "PTX-E-SYNTAX"),
    ("elect.sync %r1|%p1, _;", O),
    ("setp.eq.s32 _|%p1, %r1, %r2;", None),
    ("setp.eq.s32 %p1|_, %r1, %r2;", None),
    ("setp.eq.s32 _, %r1, %r2;", None),
    ("setp.eq.and.s32 _|%p2, %r1, %r2, %p1;", None),
    ("setp.eq.and.s32 %p1|_, %r1, %r2, %p1;", None),
    ("setp.eq.s32 _|_, %r1, %r2;", "PTX-E-SYNTAX"),
    ("setp.eq.s32 %p1, _, %r2;", O),
    ("shfl.sync.idx.b32 %r1|_, %r2, 0, 31, -1;", None),
    ("shfl.sync.idx.b32 _|%p1, %r2, 0, 31, -1;", O),
    ("shfl.sync.idx.b32 _, %r2, 0, 31, -1;", O),
    ("shfl.sync.idx.b32 _|_, %r2, 0, 31, -1;", "PTX-E-SYNTAX"),
    ("match.all.sync.b32 _|%p1, %r1, -1;", None),
    ("match.all.sync.b32 %r1|_, %r1, -1;", None),
    ("match.any.sync.b32 _, %r1, -1;", O),
    ("mbarrier.arrive.shared::cta.b64 _, [sbuf];", None),
    ("mbarrier.arrive.expect_tx.shared::cta.b64 _, [sbuf], 8;", None),
    ("mbarrier.arrive_drop.shared::cta.b64 _, [sbuf];", None),
    ("mbarrier.try_wait.shared::cta.b64 _, [sbuf], %rd2;", O),
    ("atom.global.add.u32 _, [%rd1], 1;", None),
    ("atom.global.cas.b64 _, [%rd1], %rd2, %rd3;", None),
    ("atom.global.add.u32 %r1, [%rd1], _;", O),
    ("add.s32 _, %r1, %r2;", O),
    ("add.s32 %r1, _, %r2;", O),
    ("mov.u32 _, %r1;", O),
    ("mov.b32 %r1, _;", O),
    ("ld.global.u32 _, [%rd1];", O),
    ("ld.shared.u32 _, [sbuf];", O),
    ("cvt.u32.u16 _, %h1;", O),
    ("selp.u32 _, %r1, %r2, %p1;", O),
    ("mad.lo.u32 _, %r1, %r2, %r1;", O),
    ("mul.wide.u32 _, %r1, %r2;", O),
    ("prmt.b32 _, %r1, %r2, %r3;", O),
    ("set.eq.u32.s32 _, %r1, %r2;", O),
    ("testp.finite.f32 _, %r1;", O),
    ("vote.sync.ballot.b32 _, %p1, -1;", O),
    ("vote.sync.any.pred _, %p1, -1;", O),
    ("redux.sync.add.u32 _, %r1, -1;", O),
    ("activemask.b32 _;", O),
    ("cvta.to.global.u64 _, %rd1;", O),
    ("isspacep.global _, %rd1;", O),
    ("isspacep.shared %p1, _;", O),
    ("bar.red.popc.u32 _, 0, %p1;", O),
    ("barrier.red.popc.u32 _, 0, %p1;", O),
    ("fns.b32 _, %r1, %r2, 1;", O),
    ("mapa.shared::cluster.u32 _, %r1, %r2;", O),
)]



def _wide_space_cases():
    """256-bit ld/st in each state space: .global or a generic address only (at sm_100a; sm_90a refuses them all)"""
    out = []
    for target in ("sm_90a", "sm_100a"):
        for space, addr in (("global", "[%rd1]"), ("", "[%rd1]"), ("shared", "[sbuf]"), ("shared::cta", "[sbuf]"),
                            ("shared::cluster", "[%rd1]"), ("local", "[%rd1]"), ("const", "[%rd1]"),
                            ("param", "[p]"), ("volatile.shared", "[sbuf]"), ("relaxed.gpu", "[%rd1]"),
                            ("relaxed.gpu.shared", "[sbuf]")):
            wide_ok = space in ("global", "", "relaxed.gpu")
            for op in ("ld", "st"):
                if op == "st" and space in ("const", "param"):
                    continue
                for ty in ("v8.b32", "v4.b64", "v4.f64", "v8.f32"):
                    code = (None if wide_ok else M) if target == "sm_100a" else T if wide_ok else (T, M)
                    out.append((target, _ldst(op, "", ty, space=space, addr=addr), code))
                out.append((target, _ldst(op, "", "v4.u32", space=space, addr=addr), None))
        out.append((target, _ldst("ld", ".L2::evict_last", "v8.b32", space="shared", addr="[sbuf]"),
                    M if target == "sm_100a" else (T, M)))
    return out


CASES = _l2_cases() + _l1_cases() + _abs_neg_cases() + _ex2_cases() + ELECT + SINKS + _wide_space_cases()


def _errors(text):
    return [d for d in L.lint_ptx(text, "t.ptx") if d.severity == "error"]


@pytest.mark.parametrize("target,line,code", CASES, ids=[f"{t}:{ln}" for t, ln, _ in CASES])
def test_lint_verdict(target, line, code):
    ds = _errors(module([line], target))
    want = list(code) if isinstance(code, tuple) else [code] if code else []
    assert [d.code for d in ds] == want, [str(d) for d in ds]


def test_the_messages_quote_ptxas_and_say_what_to_write():
    (d,) = _errors(module(["ld.global.L1::evict_first.L2::evict_last.u32 %r1, [%rd1];"]))
    assert "requires '.v8.b32/.v4.b64' type with '.L2::evict_last' modifier" in d.message
    (d,) = _errors(module(["st.global.L1::evict_last.wt.u16 [%rd1], %h1;"]))
    assert "Modifier '.evict_last' cannot be combined with modifier '.wt'" in d.message
    (d,) = _errors(module(["ex2.approx.ftz.f16x2 %r1, %r2;"]))
    assert d.notes == ("write ex2.approx.f16x2",)
    (d,) = _errors(module(["ex2.bf16 %h1, %h2;"]))
    assert d.notes == ("write ex2.approx.ftz.bf16",)
    (d,) = _errors(module([f"st.global.v4.b64 [%rd1], {V4D};"]))
    assert d.message == "st.v4 of .b64 (a 256-bit access) needs target sm_100 or later (module target is sm_90a)"
    (d,) = _errors(module(["elect.sync %r1, %p1, -1;"]))
    assert d.notes == ("elect.sync %r1|%p1, -1;",)
    assert d.loc.col == module(["elect.sync %r1, %p1, -1;"]).split("\n")[d.loc.line - 1].index("%r1") + 1


@pytest.mark.ptxas
@needs_ptxas
@pytest.mark.parametrize("target", ["sm_90a", "sm_100a"])
def test_every_line_agrees_with_ptxas(target):
    lines = [ln for t, ln, _ in CASES if t == target]
    text = module(lines, target)
    first = first_line(text, lines)
    rejected = {lines[i - first] for i in ptxas_rejected(text, target) if first <= i < first + len(lines)}
    want = {ln for t, ln, code in CASES if t == target and code}
    assert rejected == want, (sorted(rejected - want)[:10], sorted(want - rejected)[:10])


def test_the_builders_elect_sync_writes_the_sink_lint_takes():
    import ptxgen as pg
    m = pg.Module("sm_90a")
    k = m.entry("k", maxntid=128)
    p = k.elect_sync()
    text = m.emit().text
    assert f"elect.sync _|{p.name}, 4294967295;" in text
    assert _errors(text) == []
    (d,) = _errors(module(["add.s32 _, %r1, %r2;"]))
    assert "Result discard mode is not allowed for instruction 'add'" in d.message


@pytest.mark.ptxas
@needs_ptxas
def test_the_builders_elect_sync_assembles():
    import ptxgen as pg
    m = pg.Module("sm_90a")
    k = m.entry("k", maxntid=128)
    k.elect_sync()
    text = m.emit().text
    assert ptxas_rejected(text, "sm_90a") == {}
