"""mov's packs and the .b128 type as ptxas 13.0 takes them (lint's _FnCheck.pack, legality.pack_literal_first_problem,
legality.declared_type_version, lint.MODIFIER_NEEDS' b128, atom.b128 and atom/red.bf16 gates; the builder's pack and
atom).

What ptxas 13.0 showed (6,000 packs of every mov.bN and part count with a literal or a register of each type first
and registers and literals of every type after it, at sm_90a; the .b128 forms of ld, st, ldu, mov, atom and shfl at
PTX ISA 8.2 and 8.3, sm_80 and sm_90a):
- a pack has 2 or 4 parts: mov.b64 of eight .b8 and mov.b128 of eight .b16 are "Illegal vector size: 8".
- a pack that starts with a literal is typed by one element, as a st vector is (tests/test_lint_vector_mix.py): the
  last whose width is not the first literal's (0f: 32 bits; 0d, decimal and integer literals: 64), or the literal.
  After an integer literal any widths are taken (mov.b32 %r1, {0, %rd2}); after a floating-point one that element
  must be a part wide (mov.b32 %r1, {0f3F800000, %w2} is taken, {0f3F800000, %r2} refused). No two neighbours mix
  integer, floating-point, packed and .pred elements, as in any vector. Lint took 265 of the lines ptxas refuses and
  refused 352 it takes before; none after, nor of 3,000 packs that start with a register.
- mov.vN's source vector that starts with a literal (literals only too) is typed so as well, by
  legality.literal_first_problem as st.async's value (no wider element; .f32 and .f64 take any after a float literal,
  and .f32 64-bit integer values too): mov.v2.b32 %v, {0f3F800000, %w2} is refused, {0d3FF0000000000000, %r2} taken;
  an integer literal after the first element of .f32/.f64 is refused among literals only and crashes ptxas beside a
  register. Lint disagreed on 382 of 1,769 such lines before; on none of 2,255 fresh ones and 545 of literals only.
- .b128 (a type, in a declaration of a scalar, and an instruction type) needs PTX ISA 8.3 ("Feature 'Type .b128'
  requires PTX ISA .version 8.3 or later"); a declaration of arrays only it takes before (`.shared .b128 s[4];`).
  mov.b128 moves a .b128 register, an integer literal or a pack of two 64-bit or four 32-bit parts (not a float
  literal or a narrower register); atom.cas.b128 and atom.exch.b128 need sm_90 ("Instruction 'atom.cas.b128.global'
  requires .target sm_90 or higher"), as atom and red on .bf16/.bf16x2 do. Lint refused mov.b128 and atom's .b128
  forms and asked nothing of PTX ISA 8.2 or of sm_80 before.
"""
from __future__ import annotations

import os
import random
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _ptxas_lines import (each_crashes_ptxas, first_line, kernel, lint_disagrees_with_ptxas,  # noqa: E402
                          lint_disagrees_with_recorded, lint_errors, lint_reports_crashes, ptxas_error_lines,
                          reg_decls)
from test_lint_vector_probes import needs_ptxas  # noqa: E402

import ptxgen as pg  # noqa: E402
from ptxgen import LegalityError, b64, b128  # noqa: E402
from ptxgen.lint import lint_ptx  # noqa: E402

NAMES = {"b8": "c", "u8": "uc", "b16": "w", "u16": "uw", "f16": "h", "b32": "r", "u32": "ru", "s32": "rs", "f32": "f",
         "f16x2": "hh", "b64": "rd", "u64": "ul", "f64": "fd", "pred": "p", "b128": "q"}
LITS = ("0", "-1", "0f3F800000", "0d3FF0000000000000", "1.5")
DECLS = reg_decls(*((t, n, 4) for t, n in NAMES.items()))


def make(lines, target="sm_90a", version="8.8"):
    return kernel(lines, target, version, DECLS)


# (line, ptxas 13.0 takes it) for the tests without ptxas
RECORDED = [
    ("mov.b32 %r3, {0,%rd2};", True),                    # after an integer literal: any width
    ("mov.b32 %r3, {-1,%c2};", True),
    ("mov.b32 %r3, {0,%f2};", False),                    # neighbours of two kinds
    ("mov.b32 %r3, {0f3F800000,%w2};", True),            # typed by %w2: 16 bits, a part
    ("mov.b32 %r3, {0f3F800000,%h2};", True),
    ("mov.b32 %r3, {0f3F800000,%r2};", False),           # typed by the literal: 32 bits
    ("mov.b64 %rd3, {0d3FF0000000000000,%r2};", True),   # typed by %r2
    ("mov.b64 %rd3, {0d3FF0000000000000,0d3FF0000000000000};", False),
    ("mov.b64 %rd3, {0f3F800000,0f3F800000};", True),
    ("mov.b64 %rd3, {1.5,0f3F800000};", True),           # typed by the 0f literal
    ("mov.b16 %w3, {0f3F800000,%c2};", True),
    ("mov.b16 %w3, {0f3F800000,%uc2};", False),
    ("mov.b64 %rd3, {0f3F800000,%r2,%f2,%r2};", False),  # typed by the literal: 32 bits, not 16
    ("mov.b64 %rd3, {0f3F800000,%w2,%r2,%r2};", True),   # typed by %w2
    ("mov.b128 %q3, {0f3F800000,%rd2};", True),
    ("mov.b128 %q3, {0f3F800000,0f3F800000};", False),
    ("mov.b64 %rd3, {%r2,0d3FF0000000000000};", True),   # a register first: literals after it are its neighbours
    ("mov.b64 %rd3, {%c2,%c2,%c2,%c2,%c2,%c2,%c2,%c2};", False),   # eight parts
    ("mov.b128 %q3, {%w2,%w2,%w2,%w2,%w2,%w2,%w2,%w2};", False),
    ("mov.b32 %r3, {%c2,%c2,%c2,%c2};", True),
    # .b128
    ("mov.b128 %q1, %q2;", True),
    ("mov.b128 %q1, {%rd1,%rd2};", True),
    ("mov.b128 %q1, {%fd1,%rd2};", True),
    ("mov.b128 {%r0,%r1,%r2,%r3}, %q1;", True),
    ("mov.b128 %q1, -1;", True),
    ("mov.b128 %q1, 0f3F800000;", False),
    ("mov.b128 %q1, %rd1;", False),
    ("mov.b128 %q1, {%p1,%p1,%p1,%p1};", False),
    ("atom.global.cas.b128 %q1, [%rd1], %q2, %q3;", True),
    ("atom.shared::cluster.cas.b128 %q1, [%rd1], %q2, %q3;", True),
    ("atom.global.exch.b128 %q1, [%rd1], 5;", True),
    ("atom.global.exch.b128 %q1, [%rd1], 0d3FF0000000000000;", False),
    ("atom.global.exch.b128 %q1, [%rd1], %rd2;", False),
    ("atom.global.add.b128 %q1, [%rd1], %q2;", False),
    ("ld.global.v2.b128 {%q1,%q2}, [%rd1];", False),
]


def test_recorded_verdicts():
    wrong = lint_disagrees_with_recorded(RECORDED, make)
    assert not wrong, "\n".join(wrong)


@needs_ptxas
def test_the_recorded_verdicts_are_ptxas_s():
    from _ptxas_lines import agree_with_ptxas
    agree_with_ptxas(RECORDED, make)


def pack_lines(count=1500, seed=0):
    """Packs of every mov.bN and part count that start with a literal (all two-part ones of each literal and element,
    then random ones), and packs that start with a register of the part's width."""
    rng = random.Random(seed)
    elems = [f"%{n}2" for t, n in NAMES.items() if t != "b128"] + list(LITS)
    forms = [("b16", 2, "%w3"), ("b32", 2, "%r3"), ("b32", 4, "%r3"), ("b64", 2, "%rd3"), ("b64", 4, "%rd3"),
             ("b128", 2, "%q3"), ("b128", 4, "%q3")]
    near = {8: ("c", "uc"), 16: ("w", "uw", "h"), 32: ("r", "ru", "rs", "f", "hh", "p"), 64: ("rd", "ul", "fd")}
    out = list(dict.fromkeys(f"mov.{ty} {d}, {{{a},{b}}};" for ty, n, d in forms if n == 2 for a in LITS
                             for b in elems))
    while len(out) < count:
        ty, n, d = rng.choice(forms)
        part = int(ty[1:]) // n
        first = rng.choice(LITS) if rng.random() < 0.7 else f"%{rng.choice(near[part])}2"
        rest = [rng.choice(elems) if rng.random() < 0.5 else f"%{rng.choice(near[part])}2" for _ in range(n - 1)]
        ln = f"mov.{ty} {d}, {{{','.join([first] + rest)}}};"
        if ln not in out:
            out.append(ln)
    return out


@needs_ptxas
def test_packs_agree_with_ptxas():
    lines = pack_lines()
    assert len(lines) > 1000
    bad = lint_disagrees_with_ptxas(lines, make)
    assert not bad, f"{len(bad)} of {len(lines)} lines:\n" + "\n".join(bad[:40])


def test_pack_messages():
    lines = ["mov.b32 %r3, {0f3F800000,%r2};", "mov.b64 %rd3, {%c2,%c2,%c2,%c2,%c2,%c2,%c2,%c2};"]
    text = make(lines)
    first = first_line(text, lines)
    errs = lint_errors(text)
    assert errs[first].message == ("mov.b32: the pack is typed by the literal 1, 32 bits wide (ptxas 13.0 types a "
                                   "vector that starts with a literal by its last element of another width than the "
                                   "literal, or by the literal); each part is 16 bits")
    assert errs[first].code == "PTX-E-TYPE"
    assert errs[first + 1].message == ("mov.b64 cannot split into 8 parts (ptxas: \"Illegal vector size\"; a pack has "
                                       "2 or 4)")


# mov.vN's source vector that starts with a literal: typed by one element as st's (legality.literal_first_problem, but
# that no wider element is taken and .f32 takes 64-bit integer values too)
VTYPES = [("b16", 2), ("b16", 4), ("b32", 2), ("b32", 4), ("b64", 2), ("u16", 4), ("u32", 2), ("s32", 4), ("u64", 2),
          ("s64", 2), ("f32", 2), ("f32", 4), ("f64", 2), ("s16", 2)]
VNAME = {vt: "%mv" + "abcdefghijklmn"[i] for i, vt in enumerate(VTYPES)}
VDECLS = DECLS + "".join(f"\t.reg .v{n} .{t} {VNAME[(t, n)]}<2>;\n" for t, n in VTYPES)


def make_v(lines):
    return kernel(lines, "sm_90a", "8.8", VDECLS)


VRECORDED = [
    ("mov.v2.b32 %mvc0, {0,%w2};", True),                   # after an integer literal: any width
    ("mov.v2.b32 %mvc0, {0f3F800000,%w2};", False),         # typed by %w2: 16 bits
    ("mov.v2.b32 %mvc0, {0d3FF0000000000000,%r2};", True),  # typed by %r2
    ("mov.v2.f32 %mvk0, {0f3F800000,%rd2};", True),         # .f32 after a float literal: any width
    ("mov.v2.f32 %mvk0, {0,%ul2};", True),                  # ... and 64-bit integer values
    ("mov.v2.u32 %mvg0, {0f3F800000,%f2};", False),         # floating-point values only
    ("mov.v2.u32 %mvg0, {0f3F800000,%r2};", True),
    ("mov.v4.b16 %mvb0, {0f3F800000,%r2,%r2,%w2};", True),  # typed by %w2
    ("mov.v4.b16 %mvb0, {0f3F800000,%w2,%w2,%r2};", True),  # typed by %w2, element 3
    ("mov.v4.b16 %mvb0, {0f3F800000,%r2,%f2,%r2};", False), # typed by the literal: 32 bits
    ("mov.v2.b64 %mve0, {0f3F800000,%rd2};", True),         # typed by %rd2
    ("mov.v2.b32 %mvc0, {0,%f2};", False),                  # neighbours of two kinds
    ("mov.v2.b32 %mvc0, {0d3FF0000000000000,0f3F800000};", True),   # literals only: typed so too
    ("mov.v2.b32 %mvc0, {0d3FF0000000000000,0d3FF0000000000000};", False),
    ("mov.v2.f32 %mvk0, {0,0};", False),                    # an integer literal after the first of .f32
]
# ptxas 13.0 crashes on these (a segmentation fault generating code; lint refuses them)
VCRASHES = ["mov.v4.f32 %mvl0, {0,%r2,%r2,0};", "mov.v4.f32 %mvl0, {1.5,%c2,%r2,-1};"]


def test_lint_refuses_the_mov_vector_crashes():
    lint_reports_crashes(VCRASHES, make_v)


@needs_ptxas
def test_the_mov_vector_crashes_are_ptxas_s():
    each_crashes_ptxas(VCRASHES, make_v)


def test_mov_vector_recorded_verdicts():
    wrong = lint_disagrees_with_recorded(VRECORDED, make_v)
    assert not wrong, "\n".join(wrong)


@needs_ptxas
def test_mov_vector_recorded_verdicts_are_ptxas_s():
    from _ptxas_lines import agree_with_ptxas
    agree_with_ptxas(VRECORDED, make_v)


def mov_vector_lines(count=1500, seed=0):
    rng = random.Random(seed)
    elems = [f"%{n}2" for t, n in NAMES.items() if t != "b128"] + list(LITS)
    out = set()
    while len(out) < count:
        t, n = rng.choice(VTYPES)
        v = [rng.choice(LITS)] + [rng.choice(elems) for _ in range(n - 1)]
        if t[0] == "f" and any(e.lstrip("-").isdigit() for e in v[1:]):
            continue        # an integer literal after the first element of .f32/.f64: ptxas 13.0 crashes
        out.add(f"mov.v{n}.{t} {VNAME[(t, n)]}0, {{{','.join(v)}}};")
    return sorted(out)


@needs_ptxas
def test_mov_vectors_agree_with_ptxas():
    lines = mov_vector_lines()
    bad = lint_disagrees_with_ptxas(lines, make_v)
    assert not bad, f"{len(bad)} of {len(lines)} lines:\n" + "\n".join(bad[:40])


# whole modules: the lines (of the body, counted from the kernel's first line) each tool reports, with lint's code
GATES = [
    # .b128 before PTX ISA 8.3: the declaration of a scalar and the instruction, not an array's declaration
    ("8.2", "sm_90a", [".reg .b128 %q<2>;", ".reg .b64 %rd<2>;", "ld.global.b128 %q1, [%rd1];"],
     {0: "PTX-E-VERSION", 2: "PTX-E-VERSION"}),
    ("8.2", "sm_90a", [".shared .align 16 .b128 s[4];", ".local .b128 l[2];"], {}),
    ("8.2", "sm_90a", [".shared .b128 s;"], {0: "PTX-E-VERSION"}),
    ("8.3", "sm_90a", [".reg .b128 %q<2>;", ".reg .b64 %rd<2>;", "ld.global.b128 %q1, [%rd1];",
                       "mov.b128 %q0, {%rd1,%rd0};"], {}),
    # atom on .b128 from sm_90, on .bf16/.bf16x2 too
    ("8.3", "sm_80", [".reg .b128 %q<4>;", ".reg .b64 %rd<2>;", "atom.global.exch.b128 %q1, [%rd1], %q2;",
                      "atom.global.cas.b128 %q1, [%rd1], %q2, %q3;"], {2: "PTX-E-TARGET", 3: "PTX-E-TARGET"}),
    ("8.8", "sm_80", [".reg .b16 %h<4>;", ".reg .b32 %r<4>;", ".reg .b64 %rd<2>;",
                      "atom.global.add.noftz.bf16 %h1, [%rd1], %h2;", "red.shared.add.noftz.bf16x2 [%rd1], %r2;",
                      "atom.global.add.noftz.f16 %h1, [%rd1], %h2;"], {3: "PTX-E-TARGET", 4: "PTX-E-TARGET"}),
]


def _gate_text(version, target, lines):
    return kernel(lines, target, version)


@pytest.mark.parametrize("version, target, lines, want", GATES)
def test_gates(version, target, lines, want):
    text = _gate_text(version, target, lines)
    first = first_line(text, lines)
    got = {d.loc.line - first: d.code for d in lint_ptx(text, "t.ptx") if d.severity == "error"}
    assert got == want


@needs_ptxas
@pytest.mark.parametrize("version, target, lines, want", GATES)
def test_the_gates_are_ptxas_s(version, target, lines, want):
    text = _gate_text(version, target, lines)
    first = first_line(text, lines)
    _, hit, out = ptxas_error_lines(text, target)
    assert {i - first for i in hit} == set(want), out


def test_builder_pack_of_128_bits_lints_clean():
    m = pg.Module("sm_90a", version="8.3")
    k = m.entry("k")
    q = k.pack([k.reg(b64), k.reg(b64)])
    assert q.type is b128
    assert any(st.text().startswith("mov.b128 ") for st in k.fn.body if type(st).__name__ == "Instr")
    assert [d for d in lint_ptx(str(m.emit()), "k.ptx") if d.severity == "error"] == []


def test_builder_atom_b128_needs_sm90():
    m = pg.Module("sm_80", version="8.3")
    k = m.entry("k")
    g, b, c = k.reg("u64"), k.reg(b128), k.reg(b128)
    with pytest.raises(LegalityError, match="sm_90"):
        k.atom("cas", g, b, c)
    m = pg.Module("sm_90a", version="8.3")
    k = m.entry("k")
    g, b, c = k.reg("u64"), k.reg(b128), k.reg(b128)
    d = k.atom("cas", g, b, c)
    k.atom("exch", g, d)
    ins = [st.text() for st in k.fn.body if type(st).__name__ == "Instr"]
    assert ins[-2].startswith("atom.global.cas.b128 ") and ins[-1].startswith("atom.global.exch.b128 ")
    assert [d for d in lint_ptx(str(m.emit()), "k.ptx") if d.severity == "error"] == []
