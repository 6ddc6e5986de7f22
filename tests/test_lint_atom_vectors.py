"""The vector values of atom and red (.v2/.v4/.v8 of .f32, .f16, .bf16, .f16x2, .bf16x2) as ptxas 13.0 takes them: as
multimem.red's value (legality.red_vector_value_problem; lint's _FnCheck.red_vector).

What ptxas 13.0 showed (3,000 random vectors of atom.global.add and red.global.add, uniform, mixed, with literals
first and after registers, at sm_90a, and 3,000 more at sm_100a):
- a vector of registers declared alike is typed by the type, not by width as ld/st's: .f32 takes 32-bit integer,
  bit and .f32 registers (no .f16x2, no wider one), .f16x2 .f16x2 and .b32, .bf16x2 .b32 only, .f16 16-bit integer,
  bit and .f16, .bf16 .b16 only; other vectors are typed by their elements (one width, no integer, floating-point,
  packed or .pred neighbours side by side), and one that starts with a literal by one element, as multimem.red's
  (tests/test_lint_multimem.py).
- an integer literal after the first element of a vector that holds a register is refused or crashes ptxas (a
  segmentation fault); lint refuses it.
Lint, which checked these vectors as ld/st's, disagreed with ptxas on 281 of 3,000 lines before; on none after.
"""
from __future__ import annotations

import os
import random
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _ptxas_lines import (each_crashes_ptxas, first_line, lint_disagrees_with_ptxas,  # noqa: E402
                          lint_disagrees_with_recorded, lint_errors, lint_reports_crashes)
from test_lint_multimem import KINDS, make_for, reg, vec  # noqa: E402
from test_lint_vector_probes import needs_ptxas  # noqa: E402

make = make_for("sm_90a")

# (line, ptxas 13.0 takes it) for the tests without ptxas
RECORDED = [
    ("red.global.add.v2.f32 [%rd11], {%r0,%r1};", True),
    ("red.global.add.v2.f32 [%rd11], {%rd0,%rd1};", False),            # no wider register
    ("red.global.add.v2.f32 [%rd11], {%hh0,%hh1};", False),
    ("red.global.add.noftz.v2.f16x2 [%rd11], {%f0,%f1};", False),      # by the type: .f16x2 and .b32 only
    ("red.global.add.noftz.v2.f16x2 [%rd11], {%hh0,%hh1};", True),
    ("atom.global.add.noftz.v2.bf16x2 {%r0,%r1}, [%rd11], {%ru0,%ru1};", False),   # .b32 only
    ("atom.global.add.noftz.v4.f16 {%w0,%w1,%w2,%w3}, [%rd11], {%uw0,%uw1,%uw2,%uw3};", True),
    ("atom.global.add.noftz.v4.f16 {%w0,%w1,%w2,%w3}, [%rd11], {%r0,%r1,%r2,%r3};", False),
    ("atom.global.add.noftz.v8.bf16 {%w0,%w1,%w2,%w3,%w4,%w5,%w6,%w7}, [%rd11], {%h0,%h1,%h2,%h3,%h4,%h5,%h6,%h7};",
     False),
    ("atom.global.add.noftz.v4.bf16x2 {%r0,%r1,%r2,%r3}, [%rd11], {%f3,%r3,%f2,%r2};", True),   # by its elements
    ("atom.global.add.noftz.v2.bf16x2 {%r0,%r1}, [%rd11], {%ru2,%f2};", False),
    ("red.global.add.v2.f32 [%rd11], {0,%rd2};", True),                # a literal first: typed by one element
    ("red.global.add.noftz.v2.bf16 [%rd11], {0,%r2};", False),
    ("red.global.add.noftz.v2.bf16 [%rd11], {0f3F800000,%h2};", True),
    ("red.global.add.noftz.v2.f16 [%rd11], {0f3F800000,%h2};", False),
    ("red.global.add.noftz.v2.f16x2 [%rd11], {0,%r2};", False),
    ("red.global.add.noftz.v4.bf16x2 [%rd11], {0,%r2,%r2,%rd2};", True),
    ("atom.global.add.noftz.v2.bf16x2 {%r0,%r1}, [%rd11], {0f3F800000,%f2};", False),   # .f32 with 0f: the type
    ("red.global.add.noftz.v4.f16x2 [%rd11], {0,0d3FF0000000000000,-1,%r3};", False),
]
# an integer literal after the first element, beside a register: ptxas 13.0 crashes (a segmentation fault)
CRASHES = ["atom.global.add.v4.f32 {%f0,%f1,%f2,%f3}, [%rd11], {0,-1,%r2,%r2};",
           "atom.global.add.noftz.v4.bf16x2 {%r0,%r1,%r2,%r3}, [%rd11], {%r2,0,%r3,%r2};"]


def test_recorded_verdicts():
    wrong = lint_disagrees_with_recorded(RECORDED, make)
    assert not wrong, "\n".join(wrong)


@needs_ptxas
def test_the_recorded_verdicts_are_ptxas_s():
    from _ptxas_lines import agree_with_ptxas
    agree_with_ptxas(RECORDED, make)


def test_lint_refuses_what_ptxas_crashes_on():
    errs = lint_reports_crashes(CRASHES, make)
    assert {d.code for d in errs.values()} == {"PTX-E-TYPE"}


@needs_ptxas
def test_the_crashes_are_ptxas_s():
    each_crashes_ptxas(CRASHES, make)


def test_message():
    ln = "red.global.add.noftz.v2.f16x2 [%rd11], {%f0,%f1};"
    text = make([ln])
    d = lint_errors(text)[first_line(text, [ln])]
    assert d.message == "red.v2.f16x2: operand 2 holds .f32 registers; .f16x2 expected"


_TYPES = {"f32": (2, 4), "f16": (2, 4, 8), "bf16": (2, 4, 8), "f16x2": (2, 4), "bf16x2": (2, 4)}
_NEAR = {"f32": ("f32", "b32", "u32", "s32"), "f16x2": ("f16x2", "b32"), "bf16": ("b16", "f16", "u16"),
         "f16": ("f16", "b16", "u16"), "bf16x2": ("b32", "f32")}
_D = {"f32": "f", "f16x2": "r", "bf16x2": "r", "f16": "w", "bf16": "w"}
_LITS = ("0", "-1", "0f3F800000", "0d3FF0000000000000", "1.5")


def vector_lines(count=1500, seed=0):
    """atom.global.add and red.global.add of every vector type and length: vectors of one register type, and random
    ones of registers of the type's width and of others and of literals."""
    rng = random.Random(seed)
    out = set()
    while len(out) < count:
        ty = rng.choice(sorted(_TYPES))
        n = rng.choice(_TYPES[ty])

        def elem():
            r = rng.random()
            return rng.choice(_LITS) if r < 0.15 else reg(rng.choice(_NEAR[ty] if r < 0.75 else KINDS), rng.randint(2, 3))
        if rng.random() < 0.3:
            k = rng.choice(KINDS)
            v = [reg(k, i) for i in range(n)]
        else:
            v = [elem() for _ in range(n)]
        noftz = ".noftz" if ty != "f32" else ""
        if rng.random() < 0.5:
            out.add(f"red.global.add{noftz}.v{n}.{ty} [%rd11], {vec(v)};")
        else:
            d = vec([f"%{_D[ty]}{i}" for i in range(n)])
            out.add(f"atom.global.add{noftz}.v{n}.{ty} {d}, [%rd11], {vec(v)};")
    return sorted(out)


@needs_ptxas
@pytest.mark.parametrize("target", ["sm_90a", "sm_100a"])
def test_vectors_agree_with_ptxas(target):
    lines = vector_lines()
    bad = lint_disagrees_with_ptxas(lines, make_for(target), target)
    assert not bad, f"{len(bad)} of {len(lines)} lines:\n" + "\n".join(bad[:40])
