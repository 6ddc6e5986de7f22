"""ptxas as the oracle of `ptxgen lint` on the core instructions' operand types.

Each probe is a legal core instruction with one operand replaced by a register of another declared type
(.b16 ... .f64, .f16x2, .pred) or by an immediate (an integer and a float literal). The whole set goes
through ptxas 13.0 (one kernel, rejected lines blanked until it assembles) and through `lint_ptx`; the two
verdicts must agree, but for KNOWN, where ptxas takes a .f16x2 register in vote.sync's predicate operands
and lint keeps to the rule.

What this found (fixed): ptxas takes a .f16x2 register for a 32-bit integer where the instruction's type
names it (add.u32, ld.u16 ...) but not in a vector or a fixed .u32 operand (a shift amount, bfe's
position, clz's count); wider registers in ld/st/cvt of any kind for a bit type and bit-typed ones for
float types; no ld/st of .f16; no immediate for half types; cvta's source of the instruction's size;
immediates in mov's pack but not in its unpack. Vectors of ld/st whose registers mix kinds: ptxas
types the vector by its registers (integer, floating-point and packed ones not side by side, .bN ones
next to any) rather than each register by the instruction's type; a .pred register among others is a
32-bit element there (ld/st.v2.b32 and mov.b64's pack and unpack take {%r1, %p2}; tests/test_lint_vector_mix.py).
Instruction types: cvt takes no .bN type, shfl only .b32, a mov that packs or unpacks a vector only a .bN type.
"""
from __future__ import annotations

import os
import shutil
import sys
from typing import List, Tuple

import pytest

from ptxgen import lint as L

sys.path.insert(0, os.path.dirname(__file__))
from _ptxas_lines import ptxas_rejected  # noqa: E402

pytestmark = [pytest.mark.ptxas, pytest.mark.skipif(shutil.which("ptxas") is None,
                                                    reason="needs ptxas (CUDA toolkit) on PATH")]

REG_TYPES = ("b16", "u16", "s16", "f16", "b32", "u32", "s32", "f32", "f16x2", "b64", "u64", "s64", "f64", "pred")
IMMEDIATES = {"an integer literal": "1", "a float literal": "0f3F800000", "a 0d literal": "0d3FF0000000000000",
              "a decimal float literal": "1.5"}


def _r(t: str, i: int) -> str:
    return f"%q_{t}_{i}"


def _forms() -> List[Tuple[str, Tuple[str, ...]]]:
    """(template, the register type of each operand slot) of the probed legal forms."""
    f: List[Tuple[str, Tuple[str, ...]]] = []

    def add(op, types, arity, mod=""):
        for t in types:
            out = "u32" if op in ("popc", "clz") else t
            slots = (out,) + (t,) * (arity - 1)
            if op in ("shl", "shr"):
                slots = (t, t, "u32")
            f.append((f"{op}{mod}.{t} " + ", ".join("{%d}" % i for i in range(arity)) + ";", slots))

    add("add", ("u16", "s16", "u32", "s32", "u64", "s64", "f32", "f64", "f16", "f16x2"), 3)
    add("sub", ("u32", "s32", "f32", "f64", "f16x2"), 3)
    add("min", ("u16", "u32", "s32", "s64", "f32", "f64", "f16", "f16x2"), 3)
    add("and", ("b16", "b32", "b64"), 3)
    add("xor", ("b32",), 3)
    add("not", ("b16", "b32", "b64"), 2)
    add("neg", ("s16", "s32", "s64", "f32", "f64", "f16", "f16x2"), 2)
    add("abs", ("s32", "f32", "f16x2"), 2)
    add("mov", ("b16", "u16", "s16", "b32", "u32", "s32", "f32", "b64", "u64", "f64"), 2)
    add("mul", ("u32", "s32"), 3, ".lo")
    add("mul", ("f32", "f64", "f16x2"), 3)
    add("popc", ("b32", "b64"), 2)
    add("clz", ("b32", "b64"), 2)
    add("brev", ("b32", "b64"), 2)
    add("sqrt", ("f32",), 2, ".approx")
    add("shl", ("b16", "b32", "b64"), 3)
    add("shr", ("u32", "s32", "b64"), 3)
    for t in ("u32", "s32", "f32", "b64", "u16", "f64", "b32"):
        f.append((f"ld.shared.{t} {{0}}, [%rd1];", (t,)))
        f.append((f"st.shared.{t} [%rd1], {{0}};", (t,)))
        f.append((f"ld.global.v2.{t} {{{{{{0}}, {{1}}}}}}, [%rd1];", (t, t)))
        f.append((f"st.global.v2.{t} [%rd1], {{{{{{0}}, {{1}}}}}};", (t, t)))
    for t in ("u8", "s8", "u16", "b8"):
        f.append((f"ld.shared.{t} {{0}}, [%rd1];", ("b32" if t == "b8" else "u32",)))
        f.append((f"st.shared.{t} [%rd1], {{0}};", ("b32" if t == "b8" else "u32",)))
    for cvt, slots in (("cvt.rn.f32.s32", ("f32", "s32")), ("cvt.rzi.s32.f32", ("s32", "f32")),
                       ("cvt.rn.f16.f32", ("f16", "f32")), ("cvt.u64.u32", ("u64", "u32")),
                       ("cvt.u32.u64", ("u32", "u64")), ("cvt.f64.f32", ("f64", "f32")),
                       ("cvt.u16.u32", ("u16", "u32"))):
        f.append((f"{cvt} {{0}}, {{1}};", slots))
    f.append(("cvt.rn.bf16x2.f32 {0}, {1}, {2};", ("b32", "f32", "f32")))
    f.append(("cvt.rn.f16x2.f32 {0}, {1}, {2};", ("f16x2", "f32", "f32")))
    for t in ("u32", "s32", "f32", "f64", "u64", "b32", "b16"):
        f.append((f"setp.eq.{t} {{0}}, {{1}}, {{2}};", ("pred", t, t)))
        f.append((f"selp.{t} {{0}}, {{1}}, {{2}}, {{3}};", (t, t, t, "pred")))
    for t in ("u32", "s32", "u64", "f32"):
        f.append((f"atom.shared.add.{t} {{0}}, [%rd1], {{1}};", (t, t)))
        f.append((f"red.shared.add.{t} [%rd1], {{0}};", (t,)))
    f += [("atom.shared.cas.b32 {0}, [%rd1], {1}, {2};", ("b32",) * 3),
          ("fma.rn.f32 {0}, {1}, {2}, {3};", ("f32",) * 4),
          ("fma.rn.f16x2 {0}, {1}, {2}, {3};", ("f16x2",) * 4),
          ("mad.lo.s32 {0}, {1}, {2}, {3};", ("s32",) * 4),
          ("mad.wide.u32 {0}, {1}, {2}, {3};", ("u64", "u32", "u32", "u64")),
          ("mul.wide.s32 {0}, {1}, {2};", ("s64", "s32", "s32")),
          ("shfl.sync.bfly.b32 {0}, {1}, 1, 31, -1;", ("b32", "b32")),
          ("shfl.sync.idx.b32 {0}, {1}, {2}, {3}, {4};", ("b32", "b32", "b32", "b32", "u32")),
          ("match.any.sync.b32 {0}, {1}, {2};", ("b32", "b32", "u32")),
          ("match.any.sync.b64 {0}, {1}, {2};", ("b32", "b64", "u32")),
          ("redux.sync.add.u32 {0}, {1}, {2};", ("u32", "u32", "u32")),
          ("vote.sync.any.pred {0}, {1}, {2};", ("pred", "pred", "u32")),
          ("bar.warp.sync {0};", ("u32",)),
          ("shf.l.wrap.b32 {0}, {1}, {2}, {3};", ("b32", "b32", "b32", "u32")),
          ("sad.u32 {0}, {1}, {2}, {3};", ("u32",) * 4),
          ("bmsk.clamp.b32 {0}, {1}, {2};", ("b32", "u32", "u32")),
          ("szext.wrap.s32 {0}, {1}, {2};", ("s32", "s32", "u32")),
          ("fns.b32 {0}, {1}, {2}, {3};", ("b32", "b32", "u32", "s32")),
          ("slct.f32.s32 {0}, {1}, {2}, {3};", ("f32", "f32", "f32", "s32")),
          ("slct.u32.f32 {0}, {1}, {2}, {3};", ("u32", "u32", "u32", "f32")),
          ("prmt.b32 {0}, {1}, {2}, {3};", ("b32",) * 4),
          ("bfe.u32 {0}, {1}, {2}, {3};", ("u32",) * 4),
          ("bfi.b32 {0}, {1}, {2}, {3}, {4};", ("b32", "b32", "b32", "u32", "u32")),
          ("cvta.to.global.u64 {0}, {1};", ("u64", "u64")),
          ("mov.b32 {0}, {{{1}, {2}}};", ("b32", "b16", "b16")),
          ("mov.b64 {{{0}, {1}}}, {2};", ("b32", "b32", "b64")),
          ("vote.sync.ballot.b32 {0}, {1}, -1;", ("b32", "pred")),
          ("div.rn.f32 {0}, {1}, {2};", ("f32",) * 3),
          ("lop3.b32 {0}, {1}, {2}, {3}, 0x96;", ("b32",) * 4),
          ("max.f16x2 {0}, {1}, {2};", ("f16x2",) * 3)]
    return f


def _probes():
    """[(line, description)]: each form's operands in turn replaced."""
    out = []
    for tmpl, slots in _forms():
        base = [_r(t, i) for i, t in enumerate(slots)]
        for j, own in enumerate(slots):
            alts = {f"a .{t} register": _r(t, 3) for t in REG_TYPES if t != own}
            alts.update(IMMEDIATES)
            for what, text in alts.items():
                ops = list(base)
                ops[j] = text
                out.append(("\t" + tmpl.format(*ops), f"{tmpl.split(' ')[0]}: operand {j + 1} {what}"))
    return out


def _vector_probes():
    """[(line, description)]: ld/st vectors whose registers mix kinds of one width (every pair of .v2,
    a fixed sample of .v4 at 32 bits), under each storage type of the width."""
    import itertools
    import random
    by_width = {16: (("b16", "u16", "s16", "f16"), ("b16", "u16", "s16")),
                32: (("b32", "u32", "s32", "f32", "f16x2"), ("b32", "u32", "s32", "f32")),
                64: (("b64", "u64", "s64", "f64"), ("b64", "u64", "s64", "f64"))}
    rnd = random.Random(7)
    out = []
    for bits, (regs, types) in by_width.items():
        combos = list(itertools.product(regs, repeat=2))
        if bits == 32:
            combos += rnd.sample(list(itertools.product(regs, repeat=4)), 120)
        for els in combos:
            vec = "{" + ", ".join(_r(t, i) for i, t in enumerate(els)) + "}"
            for t in types:
                what = f"v{len(els)}.{t} of {', '.join(els)}"
                out.append((f"\tld.global.v{len(els)}.{t} {vec}, [%rd1];", f"ld.global.{what}"))
                out.append((f"\tst.global.v{len(els)}.{t} [%rd1], {vec};", f"st.global.{what}"))
    return out


def _type_probes():
    """[(line, description)]: instruction types swapped for others of the size (cvt of every pair of
    types, shfl's and a vector mov's types), the registers as declared for the size."""
    reg = {8: "%q_b16_0", 16: "%q_b16_0", 32: "%q_b32_0", 64: "%q_b64_0"}
    freg = {16: "%q_f16_0", 32: "%q_f32_0", 64: "%q_f64_0"}
    names = ("b8", "u8", "s8", "b16", "u16", "s16", "f16", "b32", "u32", "s32", "f32", "b64", "u64", "s64", "f64")
    out = []
    for d in names:
        for a in names:
            bd, ba = int(d[1:]), int(a[1:])
            rnd = ""
            if d[0] == "f" and (a[0] != "f" or bd < ba):
                rnd = ".rn"
            elif d[0] in "us" and a[0] == "f":
                rnd = ".rzi"
            dr = freg[bd] if d[0] == "f" else reg[bd]
            ar = freg[ba] if a[0] == "f" else reg[ba]
            out.append((f"\tcvt{rnd}.{d}.{a} {dr}, {ar};", f"cvt.{d}.{a}"))
    for t in ("b32", "u32", "s32", "f32"):
        out.append((f"\tshfl.sync.bfly.{t} %q_b32_0, %q_b32_1, 1, 31, -1;", f"shfl.{t}"))
        out.append((f"\tmov.{t} %q_b32_0, {{%q_b16_0, %q_b16_1}};", f"mov.{t} pack"))
    for t in ("b64", "u64", "s64", "f64"):
        out.append((f"\tmov.{t} %q_b64_0, {{%q_b32_0, %q_b32_1}};", f"mov.{t} pack"))
        out.append((f"\tmov.{t} {{%q_b32_0, %q_b32_1}}, %q_b64_0;", f"mov.{t} unpack"))
    return out


# ptxas 13.0 takes a .pred register here (or a .f16x2 one for a .pred), which no rule of the PTX ISA
# allows; lint refuses it
KNOWN = {
    "vote.sync.any.pred: operand 1 a .f16x2 register", "vote.sync.any.pred: operand 2 a .f16x2 register",
}


def _ptxas_rejected(head: str, lines: List[str]) -> set:
    """Indices into `lines` of the probes ptxas rejects (the kernel is `head`, the lines, `ret`)."""
    first = head.count("\n") + 1
    bad = ptxas_rejected(head + "\n".join(lines) + "\n\tret;\n}\n", "sm_90a")
    assert all(0 <= ln - first < len(lines) for ln in bad), {ln: bad[ln] for ln in bad}   # only probes
    return {ln - first for ln in bad}


def test_core_operand_probes_agree_with_ptxas():
    decls = "\n".join(f"\t.reg .{t} %q_{t}_<5>;" for t in REG_TYPES)
    head = f".version 8.1\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{{\n{decls}\n\t.reg .b64 %rd<4>;\n"
    probes = _probes() + _vector_probes() + _type_probes()
    lines = [p[0] for p in probes]
    by_ptxas = _ptxas_rejected(head, lines)
    first = head.count("\n") + 1
    text = head + "\n".join(lines) + "\n\tret;\n}\n"
    by_lint = {d.loc.line - first for d in L.lint_ptx(text, "probes.ptx") if d.severity == "error"}
    wrong = [(i, probes[i]) for i in range(len(probes)) if (i in by_ptxas) != (i in by_lint)]
    unexpected = [f"{'ptxas rejects' if i in by_ptxas else 'ptxas accepts'}: {line.strip()} ({what})"
                  for i, (line, what) in wrong if what not in KNOWN]
    assert not unexpected, f"{len(unexpected)} of {len(probes)} probes:\n" + "\n".join(unexpected[:50])
    still = {what for _, (_, what) in wrong}
    assert KNOWN <= still, f"now agreeing, drop from KNOWN: {sorted(KNOWN - still)}"
