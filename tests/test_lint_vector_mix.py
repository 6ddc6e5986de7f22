"""Vectors whose elements are not all of one register type, as ptxas 13.0 types them: tensor-core fragments (mma,
mma.sp, wgmma's register A), ld/st vectors and mov's packs (legality.uniform_vector, types.vector_bits,
types.clashing_neighbour).

What ptxas 13.0 showed (68,752 lines at sm_80, sm_89, sm_90a, sm_100a, sm_110a and sm_120a, every fragment of every
mma family with literals or registers of other types in each position):
- a vector is typed by the form (each register against the operand's types) only when it is uniform: its registers
  all declared alike and no literal, or .f32 registers with 0f literals only, or .f64 ones with 0d literals only.
  Any other vector is typed by its elements: its registers have one width, a .pred register counting as 32 bits
  ("Incompatible elements of vector expression"), and no two neighbours mix integer (.s/.u registers, integer
  literals), floating-point (.f registers, float literals), packed (.f16x2) and .pred elements ("Vector with
  elements of different types are not allowed in mma instruction"); a .bN register stands next to any. Such a
  vector is taken in any fragment whatever its type: {0, %s1} as an .f16 A, {%r0, %p1, %p2, %p3} as an .f32 D.
- where ptxas runs the instruction through code of its own some of them are refused: .pred elements in the A, B
  and C of m8n8k4 from sm_80 on, in the C of the 4-bit forms and .b1 .xor.popc from sm_90 and .b1 .and.popc from
  sm_100 on; a half of .pred registers in m8n8k4's .f32 D from sm_80 on; 0d literals in fp8 mma's A and B on sm_90 to
  sm_110; m8n8k16's C from sm_100 on takes only integer or bit registers and integer literals after its first
  element, and no 0f literal first.
- a vector of literals only is typed by its literals: integer ones are an .s32 value, 0f ones only an .f32 one, 0d
  ones only (or 0f ones with a 0d after the first) an .f64 one, which the .f32 C of the 8-, 6- and 4-bit float
  inputs without a block scale takes as well; a 0d literal first with 0f ones after it is taken anywhere; integer
  and float literals side by side nowhere.
- a tensor's coordinates (cp.async.bulk.tensor) and st.async's value follow the same rules; a vector of literals only
  there is an integer, .f32 or .f64 value for the operand's own type (st.async .f32 takes no integer ones).
- ld/st vectors and mov.b64's pack and unpack take a .pred register among others as a 32-bit element; an .f32 access
  takes no .u64/.s64/.f64 register in a uniform vector (.b64 ones, wider bit registers, it takes); a .bN access takes
  float literals of its width in a vector of literals only. A st vector that starts with a literal is typed by one
  element instead, the last whose width is not the literal's (0f: 32 bits, 0d, decimal and integer: 64), or the
  literal (legality.literal_first_problem: st.v2.b32 {0f3F800000, %rd2} is refused, {%rd2, 0f3F800000} taken; 8,800
  lines of every access type exact); st.async's value likewise, and a tensor's coordinates, whose element must be 32
  bits after any literal (or, typed by an integer literal, .s64 registers only: [tmap, {0, %sd1}] is taken, [tmap, {0,
  %rd1}] refused; 6,000 fresh lines of the tensor copies, reductions and prefetches exact). A decimal float literal
  (1.0) is a double there, as a 0d one: st.v2.u32 {1.0, %fd1} holds floating-point values only ("Arguments mismatch"),
  st.v2.u32 {%f1, 1.0} does not. st.v2.f32 with an integer literal among registers, and st.v2.f64 [a], {%rd1, 0},
  crash ptxas 13.0 (lint refuses them).
Lint disagreed with ptxas on 10,716 of the lines before; on none after. The tests keep a sample of the matrix.
"""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _ptxas_lines import (each_crashes_ptxas, first_line, kernel, lint_disagrees_with_ptxas,  # noqa: E402
                          lint_disagrees_with_recorded, lint_errors, lint_reports_crashes, reg_decls)
from test_lint_vector_probes import needs_ptxas  # noqa: E402

NAMES = {"b32": "rb", "s32": "rs", "u32": "ru", "f32": "rf", "f16x2": "rh", "pred": "p", "b64": "rl", "u64": "ul",
         "f64": "fd", "b16": "w"}
LITS = {"int": "0", "0f": "0f3F800000", "0d": "0d3FF0000000000000"}
VERSION = {"sm_110a": "9.0"}


def make_for(target):
    decls = reg_decls(*((t, n, 40) for t, n in NAMES.items()))
    return lambda lines: kernel(lines, target, VERSION.get(target, "8.7"), decls)


def reg(t, i):
    return f"%{NAMES[t]}{i}"


def vec(elems):
    return "{" + ",".join(elems) + "}"


# (opcode, [(fragment, registers, own register type)], tail operands, first target)
FORMS = [
    ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", [("d", 4, "f32"), ("a", 4, "f16x2"), ("b", 2, "f16x2"),
                                                            ("c", 4, "f32")], "", 80),
    ("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16", [("d", 2, "f16x2"), ("a", 4, "f16x2"), ("b", 2, "f16x2"),
                                                            ("c", 2, "f16x2")], "", 80),
    ("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32", [("d", 8, "f32"), ("a", 2, "f16x2"), ("b", 2, "f16x2"),
                                                          ("c", 8, "f32")], "", 70),
    ("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", [("d", 4, "f32"), ("a", 4, "b32"), ("b", 2, "b32"),
                                                             ("c", 4, "f32")], "", 80),
    ("mma.sync.aligned.m8n8k16.row.col.s32.s8.u8.s32", [("d", 2, "s32"), ("a", 1, "b32"), ("b", 1, "b32"),
                                                         ("c", 2, "s32")], "", 75),
    ("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32", [("d", 4, "s32"), ("a", 4, "b32"), ("b", 2, "b32"),
                                                          ("c", 4, "s32")], "", 80),
    ("mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32", [("d", 4, "s32"), ("a", 4, "b32"), ("b", 2, "b32"),
                                                          ("c", 4, "s32")], "", 80),
    ("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc", [("d", 4, "s32"), ("a", 4, "b32"), ("b", 2, "b32"),
                                                                    ("c", 4, "s32")], "", 80),
    ("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32", [("d", 4, "f32"), ("a", 4, "b32"), ("b", 2, "b32"),
                                                              ("c", 4, "f32")], "", 89),
    ("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32",
     [("d", 4, "f32"), ("a", 4, "f16x2"), ("b", 4, "f16x2"), ("c", 4, "f32")], ", %rb39, 0", 80),
]
WGMMA = ("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16", [("d", 4, "f32"), ("a", 4, "f16x2")],
         ", %rl39, 1, 1, 1, 1")
BASE = {"d": 0, "a": 10, "b": 20, "c": 30}
_KIND_FRAGS = [("d", 4, "f32"), ("a", 4, "b32"), ("b", 2, "b32"), ("c", 4, "f32")]
KIND_FORMS = [("mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.e4m3.e5m2.f32", _KIND_FRAGS, ""),
              ("mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.f32.e4m3.e5m2.f32.ue8m0", _KIND_FRAGS,
               ", %rb36, {0, 0}, %rb37, {0, 0}")]


def _sm(target):
    return int(target[3:].rstrip("af"))


def form_line(op, frags, tail, over):
    parts = []
    for name, n, own in frags:
        parts.append(vec(over[name]) if name in over else vec([reg(own, BASE[name] + i) for i in range(n)]))
    return f"{op} {', '.join(parts)}{tail};"


def mixes(n, own):
    """Vectors of n elements with one element (first, or last) of another kind among `own` or .b32 registers."""
    out = []
    for base in dict.fromkeys((own, "b32")):
        for odd in ("b32", "s32", "f32", "f16x2", "pred", "b64", "int", "0f", "0d"):
            if odd == base:
                continue
            for where in (0, n - 1) if n > 1 else ():
                elems = [reg(base, i) for i in range(n)]
                elems[where] = LITS.get(odd) or reg(odd, where)
                out.append(elems)
    return out


def lines_for(target):
    sm = _sm(target)
    out = []
    for op, frags, tail, first in FORMS:
        if sm < first:
            continue
        for name, n, own in frags:
            for v in mixes(n, own):
                if name == "d" and not all(x.startswith("%") for x in v):
                    continue              # (a written vector takes no literal: checked elsewhere)
                out.append(form_line(op, frags, tail, {name: v}))
            if name != "d":       # literals only: integer, 0f and 0d ones, in each order of the first two
                for a in LITS.values():
                    for b in LITS.values():
                        out.append(form_line(op, frags, tail, {name: [a] + [b] * (n - 1)}))
        if op.startswith("mma.sync.aligned.m8n8k4"):
            half = [reg("b32", i) for i in range(4)] + [reg("pred", i) for i in range(4, 8)]
            out.append(form_line(op, frags, tail, {"d": half}))
    if sm >= 100:      # the .f32 C of .kind::f8f6f4 takes .f64-typed literals, that of a block-scaled form does not
        for op, frags, tail in KIND_FORMS:
            for c in (["0d3FF0000000000000"] * 4, ["0f3F800000"] + ["0d3FF0000000000000"] * 3):
                out.append(form_line(op, frags, tail, {"c": c}))
    if target == "sm_90a":
        op, frags, tail = WGMMA
        for name, n, own in frags:
            for v in mixes(n, own):
                if name != "d" or all(x.startswith("%") for x in v):
                    out.append(form_line(op, frags, tail, {name: v}))
    for v in mixes(4, "b32") + mixes(4, "f32") + mixes(2, "u32"):
        n = len(v)
        for ty in ("b32", "f32", "u32"):
            if ty != "f32" or LITS["int"] not in v:      # (ptxas 13.0 crashes on st.v2.f32 [a], {%r1, 0}: RECORDED)
                out.append(f"st.global.v{n}.{ty} [%rl38], {vec(v)};")
            if all(x.startswith("%") for x in v):
                out.append(f"ld.global.v{n}.{ty} {vec(v)}, [%rl38];")
    if sm >= 90:         # a tensor's coordinates and st.async's value are vectors as any other
        kinds = ("b32", "s32", "f32", "f16x2", "pred", "b64", "int", "0f", "0d")
        for a in kinds:
            for b in kinds:
                v = vec([LITS.get(a) or reg(a, 1), LITS.get(b) or reg(b, 2)])
                out.append(f"cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%rl31, {v}], [%rb30];")
                for ty in ("b32", "f32", "s32"):
                    out.append(f"st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.{ty} [%rb30], {v}, "
                               "[%rb32];")
    for v in ([reg("b32", 0), reg("pred", 1)], [reg("pred", 0), reg("b32", 1)], [reg("pred", 0), reg("pred", 1)]):
        out += [f"mov.b64 %rl37, {vec(v)};", f"mov.b64 {vec(v)}, %rl37;"]
    for ty in ("u32", "f32", "b32"):        # literals only, and one register beside a literal of the other width
        for v in ("{0f3F800000,0f3F800000}", "{0d3FF0000000000000,0d3FF0000000000000}", "{%rf0,0d3FF0000000000000}",
                  "{%fd0,0f3F800000}") + (("{0,1}", "{0,0f3F800000}") if ty != "f32" else ()):
            out.append(f"st.global.v2.{ty} [%rl38], {v};")
    for ty in ("u64", "f64", "b64"):
        for v in ("{%fd0,0f3F800000}", "{%fd0,0d3FF0000000000000}", "{%ul0,0f3F800000}") + (
                ("{%rl0,0}",) if ty != "f64" else ()):     # (ptxas 13.0 crashes on st.v2.f64 [a], {%rd1, 0})
            out.append(f"st.global.v2.{ty} [%rl38], {v};")
    for r in ("%rl0,%rl1", "%ul0,%ul1", "%fd0,%fd1"):
        out += [f"ld.global.v2.f32 {{{r}}}, [%rl38];", f"ld.global.v2.b32 {{{r}}}, [%rl38];"]
    return list(dict.fromkeys(out))


TARGETS = ["sm_80", "sm_90a", "sm_100a", "sm_120a"]


@needs_ptxas
@pytest.mark.parametrize("target", TARGETS)
def test_mixed_vectors_agree_with_ptxas(target):
    lines = lines_for(target)
    assert len(lines) > 700
    bad = lint_disagrees_with_ptxas(lines, make_for(target), target)
    assert not bad, f"{len(bad)} of {len(lines)} lines:\n" + "\n".join(bad[:40])


# ptxas 13.0's verdicts on lines of each rule (True: it assembles the line), for the tests without ptxas
RECORDED = [
    # neighbours: literals count as integer or floating-point elements, .bN stands next to any
    ("sm_90a", "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%rh0,%rh1}, {0,%rh11,%rh12,%rh13}, "
               "{%rh20,%rh21}, {%rh30,%rh31};", False),
    ("sm_90a", "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%rh0,%rh1}, {%rh10,%rb11,%rb12,0}, "
               "{%rh20,%rh21}, {%rh30,%rh31};", True),
    ("sm_90a", "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%rs0,%rs1,%rs2,%rs3}, {%rb10,%rb11,%rb12,%rb13}, "
               "{%rb20,%rb21}, {%rs30,%rs31,%rs32,0f3F800000};", False),
    # a vector typed by its elements is taken whatever the fragment's type
    ("sm_90a", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%rf0,%rf1,%rf2,%rf3}, {0,%rs11,%rs12,%rs13}, "
               "{%rh20,%rh21}, {%rf30,%rf31,%rf32,%rf33};", True),
    ("sm_90a", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%rf0,%rf1,%rf2,%rf3}, {%rs10,%rs11,%rs12,%rs13}, "
               "{%rh20,%rh21}, {%rf30,%rf31,%rf32,%rf33};", False),
    ("sm_90a", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%rb0,%p1,%p2,%p3}, {%rh10,%rh11,%rh12,%rh13}, "
               "{%rh20,%rh21}, {%rf30,%rf31,%rf32,%rf33};", True),
    ("sm_90a", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%rf0,%rf1,%rf2,%rf3}, "
               "{%rf10,%rf11,%rf12,0d3FF0000000000000}, {%rh20,%rh21}, {%rf30,%rf31,%rf32,%rf33};", True),
    ("sm_90a", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%rf0,%rf1,%rf2,%rf3}, "
               "{%rf10,%rf11,%rf12,0f3F800000}, {%rh20,%rh21}, {%rf30,%rf31,%rf32,%rf33};", False),
    # where ptxas runs the instruction through its own code
    ("sm_90a", "mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32 {%rs0,%rs1,%rs2,%rs3}, {%rb10,%rb11,%rb12,%rb13}, "
               "{%rb20,%rb21}, {%p30,%rb31,%rb32,%rb33};", False),
    ("sm_80", "mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32 {%rs0,%rs1,%rs2,%rs3}, {%rb10,%rb11,%rb12,%rb13}, "
              "{%rb20,%rb21}, {%p30,%rb31,%rb32,%rb33};", True),
    ("sm_90a", "mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%rb0,%rb1,%rb2,%rb3,%p4,%p5,%p6,%p7}, "
               "{%rh10,%rh11}, {%rh20,%rh21}, {%rf30,%rf31,%rf32,%rf33,%rf34,%rf35,%rf36,%rf37};", False),
    ("sm_90a", "mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%rb0,%p1,%rb2,%rb3,%p4,%p5,%p6,%rb7}, "
               "{%rh10,%rh11}, {%rh20,%rh21}, {%rf30,%rf31,%rf32,%rf33,%rf34,%rf35,%rf36,%rf37};", True),
    ("sm_90a", "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32 {%rf0,%rf1,%rf2,%rf3}, "
               "{%rb10,0d3FF0000000000000,%rb12,%rb13}, {%rb20,%rb21}, {%rf30,%rf31,%rf32,%rf33};", False),
    ("sm_100a", "mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32 {%rs0,%rs1}, {%rb10}, {%rb20}, {%rb30,%p31};", False),
    ("sm_100a", "mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32 {%rs0,%rs1}, {%rb10}, {%rb20}, {%rf30,%rb31};", True),
    ("sm_90a", "mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32 {%rs0,%rs1}, {%rb10}, {%rb20}, {%rb30,%p31};", True),
    # ld/st and mov
    ("sm_90a", "st.global.v2.b32 [%rl38], {%rb0,%p1};", True),
    ("sm_90a", "ld.global.v2.f32 {%ul0,%ul1}, [%rl38];", False),
    ("sm_90a", "ld.global.v2.f32 {%rl0,%rl1}, [%rl38];", True),
    ("sm_90a", "mov.b64 %rl37, {%p0,%rb1};", True),
    ("sm_90a", "mov.b64 %rl37, {%p0,%p1};", False),
    # a decimal float literal is a double, as a 0d one: {1.0, %fd0} holds 64-bit floating-point values only
    ("sm_90a", "st.global.v2.u32 [%rl38], {1.0,%fd0};", False),
    ("sm_90a", "st.global.v2.u64 [%rl38], {%fd0,1.0};", False),
    ("sm_90a", "st.global.v2.f32 [%rl38], {%fd0,1.0};", False),
    ("sm_90a", "st.global.v2.u32 [%rl38], {%rf0,1.0};", True),
    ("sm_90a", "st.global.v2.s32 [%rl38], {1.0,%rf0};", True),
]
# lines ptxas 13.0 crashes on (a segmentation fault, no message); lint refuses them ("integer literal 0 where st
# needs an .f32 value")
CRASHES = ["st.global.v2.f32 [%rl38], {%rb0,0};", "st.global.v4.f32 [%rl38], {%rb0,%rb1,%rb2,0};"]


def test_lint_refuses_what_ptxas_crashes_on():
    text = make_for("sm_90a")(CRASHES)
    first = first_line(text, CRASHES)
    assert set(lint_errors(text)) == {first, first + 1}


@pytest.mark.parametrize("target", sorted({t for t, _, _ in RECORDED}))
def test_recorded_verdicts(target):
    wrong = lint_disagrees_with_recorded([(ln, ok) for t, ln, ok in RECORDED if t == target], make_for(target))
    assert not wrong, "\n".join(wrong)


@needs_ptxas
def test_the_recorded_verdicts_are_ptxas_s():
    from _ptxas_lines import agree_with_ptxas
    for target in sorted({t for t, _, _ in RECORDED}):
        agree_with_ptxas([(ln, ok) for t, ln, ok in RECORDED if t == target], make_for(target), target)


# st vectors that start with a literal (legality.literal_first_problem): ptxas 13.0 types them by one element, the
# last whose width is not the first literal's, so their verdicts depend on the order of the elements
LIT_REGS = (("b8", "c"), ("b16", "h"), ("f16", "hf"), ("b32", "r"), ("f32", "f"), ("f16x2", "x"), ("b64", "rd"),
            ("f64", "fd"), ("pred", "p"), ("u32", "u"), ("s64", "sd"), ("u16", "uh"), ("s8", "sc"))
LIT_FIRST = ("0", "-1", "0f3F800000", "0d3FF0000000000000", "1.5")
LIT_ELEMS = [f"%{n}2" for _, n in LIT_REGS] + list(LIT_FIRST)
LIT_TYPES = ("b8", "b16", "b32", "b64", "u8", "u16", "u32", "u64", "s16", "s32", "s64", "f32", "f64")


def make_lit(lines):
    return kernel(lines, "sm_90a", "8.7", reg_decls(*((t, n, 5) for t, n in LIT_REGS)))


def _crashes_ptxas(elems, ty):
    """An integer literal after the first element of an .f32/.f64 vector: ptxas 13.0 takes it in its checks and crashes
    generating code (below); lint refuses it."""
    return ty in ("f32", "f64") and any(e.lstrip("-").isdigit() for e in elems[1:])


def literal_first_lines():
    import random
    rng = random.Random(0)
    out = []
    for ty in LIT_TYPES:
        for a in LIT_FIRST:
            vs = [[a, b] for b in LIT_ELEMS]
            if not ty.endswith("64"):             # (.v4 of 64-bit elements needs sm_100)
                vs += [[a] + [rng.choice(LIT_ELEMS) for _ in range(3)] for _ in range(12)]
            out += [f"st.global.v{len(v)}.{ty} [%rd1], {{{', '.join(v)}}};" for v in vs if not _crashes_ptxas(v, ty)]
    return list(dict.fromkeys(out))


# (line, ptxas 13.0 takes it) for the tests without ptxas
LIT_RECORDED = [
    ("st.global.v2.b32 [%rd1], {0f3F800000, %rd2};", False),      # typed by %rd2: 64 bits
    ("st.global.v2.b32 [%rd1], {%rd2, 0f3F800000};", True),       # typed element by element (a .b64 takes a literal)
    ("st.global.v2.b32 [%rd1], {0d3FF0000000000000, %rd2};", False),
    ("st.global.v2.b32 [%rd1], {0d3FF0000000000000, %r2};", True),  # typed by %r2
    ("st.global.v4.b8 [%rd1], {0f3F800000, %r2, %rd2, %c2};", True),  # typed by %c2, widths mixed
    ("st.global.v4.b8 [%rd1], {0f3F800000, %c2, %rd2, %r2};", False),  # typed by %rd2
    ("st.global.v2.b32 [%rd1], {1.5, 0f3F800000};", True),        # typed by the 0f literal
    ("st.global.v2.b32 [%rd1], {0f3F800000, 1.5};", False),
    ("st.global.v2.u16 [%rd1], {0f3F800000, %r2};", True),        # typed by the literal: 32 bits, not floats only
    ("st.global.v2.u32 [%rd1], {0f3F800000, %f2};", False),       # floating-point values only
    ("st.global.v2.u32 [%rd1], {0d3FF0000000000000, %f2};", True),
    ("st.global.v2.u32 [%rd1], {0f3F800000, %h2};", False),       # 16 bits
    ("st.global.v2.b32 [%rd1], {0, %h2};", True),                 # after an integer literal, any integer or bit width
    ("st.global.v2.b64 [%rd1], {0, %c2};", True),
    ("st.global.v2.f32 [%rd1], {0, %r2};", True),
    ("st.global.v2.f32 [%rd1], {0, %sd2};", False),               # integer values only of 64 bits
    ("st.global.v2.f64 [%rd1], {0, %sd2};", True),
    ("st.global.v2.b32 [%rd1], {0, %f2};", False),                # neighbours of two kinds
]
# st.async's value as well (the same rule), but that a .uN/.sN value takes no wider element
_SA = "st.async.shared::cluster.mbarrier::complete_tx::bytes.v{}.{} [%r1], {}, [%r3];"
LIT_RECORDED += [
    (_SA.format(2, "b32", "{0, %h2}"), True),
    (_SA.format(2, "u32", "{0, %rd2}"), True),
    (_SA.format(2, "u32", "{0f3F800000, %rd2}"), False),     # typed by %rd2: 64 bits
    (_SA.format(2, "b32", "{%r2, %rd2}"), False),            # a register first: one width
    (_SA.format(2, "f32", "{0d3FF0000000000000, %fd2}"), True),
    (_SA.format(2, "b64", "{0d3FF0000000000000, 0f3F800000}"), False),   # typed by the 0f literal: 32 bits
    (_SA.format(2, "u64", "{0f3F800000, 0d3FF0000000000000}"), True),
    (_SA.format(4, "f32", "{0, %u2, 0, %r2}"), True),
    (_SA.format(2, "b32", "{0, %f2}"), False),               # neighbours of two kinds
]


def st_async_lines():
    import random
    rng = random.Random(1)
    out = []
    for ty in ("b32", "s32", "u32", "f32", "b64", "s64", "u64", "f64"):
        for a in LIT_FIRST:
            vs = [[a, b] for b in LIT_ELEMS]
            if not ty.endswith("64"):
                vs += [[a] + [rng.choice(LIT_ELEMS) for _ in range(3)] for _ in range(10)]
            out += [_SA.format(len(v), ty, "{" + ", ".join(v) + "}") for v in vs]
    return list(dict.fromkeys(out))


# a tensor's coordinates that start with a literal (legality.coordinates_literal_first_problem): typed by one element
# as well, which must be 32 bits wide after any literal
_TC = "cp.async.bulk.tensor.{}d.global.shared::cta.tile.bulk_group [%rd1, {}], [%r3];"
LIT_RECORDED += [
    (_TC.format(2, "{0, %r2}"), True),
    (_TC.format(2, "{0, %rd2}"), False),                     # typed by the literal: 64 bits
    (_TC.format(2, "{0, %sd2}"), True),                      # ... of .s64 registers only
    (_TC.format(3, "{0, %sd2, %rd2}"), False),
    (_TC.format(2, "{0, %h2}"), False),                      # typed by %h2: 16 bits
    (_TC.format(3, "{0, %h2, %u2}"), True),                  # typed by %u2
    (_TC.format(3, "{1.5, %rd2, %u2}"), True),
    (_TC.format(3, "{0f3F800000, 0d3FF0000000000000, %r2}"), False),   # typed by the 0d literal
    (_TC.format(2, "{0f3F800000, %f2}"), False),             # .f32 with 0f literals: typed by the form
    (_TC.format(2, "{0, %f2}"), False),                      # neighbours of two kinds
]


def tensor_lines(count=1200, seed=2):
    """Coordinates that start with a literal, of the tensor copies, reductions and prefetches of 1 to 5 dimensions."""
    import random
    rng = random.Random(seed)
    forms = ["cp.async.bulk.tensor.{n}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r1], "
             "[%rd1, {v}], [%r3];",
             "cp.reduce.async.bulk.tensor.{n}d.global.shared::cta.add.tile.bulk_group [%rd1, {v}], [%r3];",
             "cp.async.bulk.prefetch.tensor.{n}d.L2.global.tile [%rd1, {v}];",
             "cp.async.bulk.tensor.{n}d.global.shared::cta.tile.bulk_group [%rd1, {v}], [%r3];"]
    near = ["%r2", "%u2", "%sd2"]
    out = set()
    while len(out) < count:
        n = rng.randint(1, 5)
        v = [rng.choice(LIT_FIRST)] + [rng.choice(LIT_ELEMS if rng.random() < 0.5 else near) for _ in range(n - 1)]
        out.add(rng.choice(forms).format(n=n, v="{" + ", ".join(v) + "}"))
    return sorted(out)


@needs_ptxas
def test_tensor_coordinates_that_start_with_a_literal_agree_with_ptxas():
    lines = tensor_lines()
    bad = lint_disagrees_with_ptxas(lines, make_lit)
    assert not bad, f"{len(bad)} of {len(lines)} lines:\n" + "\n".join(bad[:40])


# the im2col offsets (16-bit) that start with a literal: typed by one element as a pack of 16-bit parts
# (legality.pack_literal_first_problem; literals only: integer ones); from sm_120 on, where ptxas moves them with
# code of its own, after an integer literal no 8-bit or .pred register and no float literal (_im2col_sm120_gate)
_IM = ("cp.async.bulk.tensor.{}d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%r1], [%rd1, {}], [%r3], "
       "{};")
IM_RECORDED = [
    ("sm_90a", _IM.format(4, "{%r1,%r1,%r1,%r1}", "{0, %r2}"), True),        # after an integer literal: any width
    ("sm_90a", _IM.format(4, "{%r1,%r1,%r1,%r1}", "{0, %c2}"), True),
    ("sm_120a", _IM.format(4, "{%r1,%r1,%r1,%r1}", "{0, %c2}"), False),      # not from sm_120 on
    ("sm_120a", _IM.format(4, "{%r1,%r1,%r1,%r1}", "{0, %rd2}"), True),
    ("sm_90a", _IM.format(4, "{%r1,%r1,%r1,%r1}", "{0f3F800000, %h2}"), True),   # typed by %h2: 16 bits
    ("sm_90a", _IM.format(4, "{%r1,%r1,%r1,%r1}", "{0f3F800000, %r2}"), False),  # by the literal: 32 bits
    ("sm_90a", _IM.format(4, "{%r1,%r1,%r1,%r1}", "{0d3FF0000000000000, 0f3F800000}"), False),  # literals: integers
    ("sm_90a", _IM.format(4, "{%r1,%r1,%r1,%r1}", "{0, -1}"), True),
]


def make_im(target):
    return lambda lines: kernel(lines, target, "8.7", reg_decls(*((t, n, 5) for t, n in LIT_REGS)))


def im2col_lines(count=800, seed=1):
    import random
    rng = random.Random(seed)
    out = set()
    while len(out) < count:
        n = rng.choice((3, 4, 5))
        v = [rng.choice(LIT_FIRST)] + [rng.choice(LIT_ELEMS if rng.random() < 0.5 else ["%h2", "%uh2"])
                                       for _ in range(n - 3)]
        out.add(_IM.format(n, "{" + ", ".join(["%r1"] * n) + "}", "{" + ", ".join(v) + "}"))
    return sorted(out)


@pytest.mark.parametrize("target", ["sm_90a", "sm_120a"])
def test_im2col_recorded_verdicts(target):
    wrong = lint_disagrees_with_recorded([(ln, ok) for t, ln, ok in IM_RECORDED if t == target], make_im(target))
    assert not wrong, "\n".join(wrong)


@needs_ptxas
@pytest.mark.parametrize("target", ["sm_90a", "sm_120a"])
def test_im2col_offsets_agree_with_ptxas(target):
    from _ptxas_lines import agree_with_ptxas
    agree_with_ptxas([(ln, ok) for t, ln, ok in IM_RECORDED if t == target], make_im(target), target)
    lines = im2col_lines()
    bad = lint_disagrees_with_ptxas(lines, make_im(target), target)
    assert not bad, f"{len(bad)} of {len(lines)} lines:\n" + "\n".join(bad[:40])


# a texture's or surface's coordinates (not of an array geometry): registers declared alike typed by the coordinate
# type, other vectors by their elements, 32 bits each (legality._coords_cross); one that starts with a literal
# (legality.tex_coordinates_literal_first_problem) by one element, which .s32 coordinates need 32 bits wide after a
# float literal (and not floating-point values only), .f32 ones any; literals only so too, but .f32 coordinates take
# no integer ones. An integer literal among registers in .f32 coordinates crashes ptxas generating code
# (TEX_CRASHES; lint refuses it).
TEX_FORMS = [("tex.2d.v4.f32.f32 {{%f0,%f1,%f2,%f3}}, [%rd1, {}];", 2, "f32"),
             ("tex.2d.v4.f32.s32 {{%f0,%f1,%f2,%f3}}, [%rd1, {}];", 2, "s32"),
             ("tex.3d.v4.s32.f32 {{%r0,%r1,%r2,%r3}}, [%rd1, {}];", 4, "f32"),
             ("tex.3d.v4.s32.s32 {{%r0,%r1,%r2,%r3}}, [%rd1, {}];", 4, "s32"),
             ("tld4.r.2d.v4.f32.f32 {{%f0,%f1,%f2,%f3}}, [%rd1, {}];", 2, "f32"),
             ("suld.b.2d.b32.trap {{%r0}}, [%rd1, {}];", 2, "s32"),
             ("tex.cube.v4.f32.f32 {{%f0,%f1,%f2,%f3}}, [%rd1, {}];", 4, "f32"),
             ("tex.2dms.v4.f32.s32 {{%f0,%f1,%f2,%f3}}, [%rd1, {}];", 4, "s32")]
TEX_RECORDED = [
    (TEX_FORMS[1][0].format("{0, %rd2}"), True),                 # after an integer literal: any width
    (TEX_FORMS[1][0].format("{0f3F800000, %rd2}"), False),       # .s32 after a float literal: 32 bits
    (TEX_FORMS[1][0].format("{0d3FF0000000000000, %r2}"), True),
    (TEX_FORMS[1][0].format("{0d3FF0000000000000, 0f3F800000}"), True),
    (TEX_FORMS[1][0].format("{0f3F800000, 0f3F800000}"), False),  # floating-point values only
    (TEX_FORMS[0][0].format("{0f3F800000, %rd2}"), True),        # .f32: any width
    (TEX_FORMS[0][0].format("{0, 0}"), False),                   # .f32: no integer literals only
    (TEX_FORMS[5][0].format("{0f3F800000, %h2}"), False),
    # registers declared alike: typed by the coordinate type; others by their elements, 32 bits each
    (TEX_FORMS[0][0].format("{%u1, %u2}"), True),                # .f32 coordinates in .u32 registers
    (TEX_FORMS[0][0].format("{%x1, %x2}"), False),
    (TEX_FORMS[1][0].format("{%x1, %x2}"), True),                # .s32 ones in .f16x2 registers
    (TEX_FORMS[1][0].format("{%f1, %f2}"), False),
    (TEX_FORMS[1][0].format("{%r1, %f2}"), True),                # by its elements
    (TEX_FORMS[0][0].format("{%r1, %p2}"), True),
    (TEX_FORMS[0][0].format("{%r1, %h2}"), False),
    (TEX_FORMS[1][0].format("{%u1, 0f3F800000}"), False),        # neighbours of two kinds
]
TEX_CRASHES = [TEX_FORMS[0][0].format("{%r2, 0}"), TEX_FORMS[2][0].format("{-1, %r2, %r2, %r2}"),
               TEX_FORMS[4][0].format("{0, %h2}")]


def tex_lines(count=1000, seed=3):
    import random
    rng = random.Random(seed)
    out = set()
    while len(out) < count:
        form, n, ctype = rng.choice(TEX_FORMS)
        near = ["%r2", "%f2", "%u2", "%x2"]
        v = [rng.choice(LIT_FIRST if rng.random() < 0.5 else near)] + [
            rng.choice(LIT_ELEMS if rng.random() < 0.5 else near) for _ in range(n - 1)]
        if ctype == "f32" and any(e.lstrip("-").isdigit() for e in v) and any(e.startswith("%") for e in v):
            continue        # TEX_CRASHES
        out.add(form.format("{" + ", ".join(v) + "}"))
    return sorted(out)


def test_tex_recorded_verdicts():
    wrong = lint_disagrees_with_recorded(TEX_RECORDED, make_lit)
    assert not wrong, "\n".join(wrong)


def test_lint_refuses_the_tex_crashes():
    lint_reports_crashes(TEX_CRASHES, make_lit)


@needs_ptxas
def test_tex_coordinates_agree_with_ptxas():
    from _ptxas_lines import agree_with_ptxas
    agree_with_ptxas(TEX_RECORDED, make_lit)
    each_crashes_ptxas(TEX_CRASHES, make_lit)
    lines = tex_lines()
    bad = lint_disagrees_with_ptxas(lines, make_lit)
    assert not bad, f"{len(bad)} of {len(lines)} lines:\n" + "\n".join(bad[:40])


# a texture's array geometry: the array index (first) a 32-bit integer or bit register or an integer literal (no
# float literal), the coordinates after it without mixed neighbours; registers declared alike integer or bit ones,
# others 32 bits each; after an integer index any, but .f32 coordinates no 64-bit integer values only; an integer
# literal after the index among registers in .f32 coordinates crashes ptxas (legality._coords_cross). A surface's
# array index is typed as its other coordinates.
ARRAY_FORMS = ["tex.a1d.v4.f32.f32 {{%f0,%f1,%f2,%f3}}, [%rd1, {}];", "tex.a1d.v4.f32.s32 {{%f0,%f1,%f2,%f3}}, [%rd1, {}];",
               "tex.a2d.v4.f32.f32 {{%f0,%f1,%f2,%f3}}, [%rd1, {}];", "tex.a2d.v4.f32.s32 {{%f0,%f1,%f2,%f3}}, [%rd1, {}];",
               "suld.b.a1d.b32.trap {{%r0}}, [%rd1, {}];"]
ARRAY_RECORDED = [
    (ARRAY_FORMS[2].format("{%u1, %f1, %f2, %f3}"), True),      # a .u32 index before .f32 coordinates
    (ARRAY_FORMS[2].format("{0, %f1, %f2, %f3}"), True),
    (ARRAY_FORMS[2].format("{%f1, %f1, %f2, %f3}"), False),     # the index is an integer
    (ARRAY_FORMS[2].format("{%f1, %f2, %f3, %f0}"), False),     # declared alike: integer or bit registers
    (ARRAY_FORMS[2].format("{%u1, %u2, %u3, %u0}"), True),
    (ARRAY_FORMS[2].format("{%u1, %p1, %r2, %u3}"), True),      # by its elements
    (ARRAY_FORMS[2].format("{%u1, %f1, %u2, %r3}"), False),     # .f32 and .u32 coordinates side by side
    (ARRAY_FORMS[4].format("{%f1, %r2}"), True),                # a surface's index: as its other coordinates
    (ARRAY_FORMS[4].format("{%u1, %f2}"), False),
    (ARRAY_FORMS[0].format("{0f3F800000, %f2}"), False),        # a float literal index
    (ARRAY_FORMS[0].format("{-1, %fd2}"), True),                # after an integer index: any width
    (ARRAY_FORMS[0].format("{0, %sd2}"), False),                # .f32: no 64-bit integer values only
    (ARRAY_FORMS[0].format("{0, 0f3F800000}"), True),
    (ARRAY_FORMS[4].format("{-1, %c2}"), True),                 # a surface: as its other coordinates
]
ARRAY_CRASHES = [ARRAY_FORMS[0].format("{%u2, -1}"), ARRAY_FORMS[2].format("{-1, 0, %r2, %f2}")]


def array_lines(count=1500, seed=4):
    import random
    rng = random.Random(seed)
    regs = ["%r2", "%f2", "%u2", "%x2", "%p2", "%h2", "%rd2", "%fd2"]
    out = set()
    while len(out) < count:
        form = rng.choice(ARRAY_FORMS)
        n = 2 if ".a1d" in form else 4
        mode = rng.random()
        if mode < 0.25:
            r = rng.choice(regs)
            v = [r[:-1] + str(i + 1) for i in range(n)]
        elif mode < 0.5:
            v = [rng.choice(regs) for _ in range(n)]
        else:
            v = [rng.choice(LIT_FIRST if rng.random() < 0.5 else regs)] + [
                rng.choice(LIT_ELEMS if rng.random() < 0.4 else regs) for _ in range(n - 1)]
        if ".f32 {" in form and any(e.lstrip("-").isdigit() for e in v[1:]) and any(e.startswith("%") for e in v):
            continue        # ARRAY_CRASHES
        out.add(form.format("{" + ", ".join(v) + "}"))
    return sorted(out)


def test_array_recorded_verdicts():
    wrong = lint_disagrees_with_recorded(ARRAY_RECORDED, make_lit)
    assert not wrong, "\n".join(wrong)


def test_lint_refuses_the_array_crashes():
    lint_reports_crashes(ARRAY_CRASHES, make_lit)


@needs_ptxas
def test_array_coordinates_agree_with_ptxas():
    from _ptxas_lines import agree_with_ptxas
    agree_with_ptxas(ARRAY_RECORDED, make_lit)
    each_crashes_ptxas(ARRAY_CRASHES, make_lit)
    lines = array_lines()
    bad = lint_disagrees_with_ptxas(lines, make_lit)
    assert not bad, f"{len(bad)} of {len(lines)} lines:\n" + "\n".join(bad[:40])


# lines ptxas 13.0 crashes on (a segmentation fault generating code; -arch=compute_90a takes them): lint refuses them
LIT_CRASHES = ["st.global.v4.f32 [%rd1], {0, %u2, 0, 0};", "st.global.v2.f64 [%rd1], {0, 0};",
               "st.global.v4.f32 [%rd1], {0, %c2, 0, %rd2};"]


def test_literal_first_recorded_verdicts():
    wrong = lint_disagrees_with_recorded(LIT_RECORDED, make_lit)
    assert not wrong, "\n".join(wrong)


def test_literal_first_messages():
    text = make_lit(["st.global.v2.b32 [%rd1], {0f3F800000, %rd2};", "st.global.v2.u32 [%rd1], {0f3F800000, %f2};",
                     "st.global.v4.f32 [%rd1], {0, %u2, 0, 0};"])
    first = first_line(text, ["st.global.v2.b32 [%rd1], {0f3F800000, %rd2};"])
    errs = lint_errors(text)
    assert errs[first].message == ("st.b32: operand 2 is typed by its .b64 element 2, 64 bits wide (ptxas 13.0 "
                                   "types a vector that starts with a literal by its last element of another width "
                                   "than the literal, or by the literal); .b32 needs 32")
    assert errs[first + 1].message.startswith("st.u32: operand 2 holds floating-point values only (")
    assert "crashes" in errs[first + 2].message and errs[first + 2].code == "PTX-E-TYPE"
    assert set(lint_errors(make_lit(LIT_CRASHES))) == {first, first + 1, first + 2}


@needs_ptxas
def test_literal_first_recorded_verdicts_are_ptxas_s():
    from _ptxas_lines import agree_with_ptxas
    agree_with_ptxas(LIT_RECORDED, make_lit)


@needs_ptxas
def test_literal_first_vectors_agree_with_ptxas():
    lines = literal_first_lines()
    assert len(lines) > 1500
    # -arch=compute_90a: the checks without code generation, which crashes on none of these lines
    bad = lint_disagrees_with_ptxas(lines, make_lit, "compute_90a")
    assert not bad, f"{len(bad)} of {len(lines)} lines:\n" + "\n".join(bad[:40])


@needs_ptxas
def test_st_async_literal_first_vectors_agree_with_ptxas():
    lines = st_async_lines()
    assert len(lines) > 900
    bad = lint_disagrees_with_ptxas(lines, make_lit)      # (-arch=sm_90a: no line of these crashes ptxas)
    assert not bad, f"{len(bad)} of {len(lines)} lines:\n" + "\n".join(bad[:40])


@needs_ptxas
def test_ptxas_crashes_on_the_refused_literal_vectors():
    from _ptxas_lines import ptxas_crashes
    for ln in LIT_CRASHES:
        assert ptxas_crashes(make_lit([ln]), "sm_90a"), ln
        assert not ptxas_crashes(make_lit([ln]), "compute_90a"), ln
