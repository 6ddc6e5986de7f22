"""multimem.ld_reduce, multimem.st and multimem.red as ptxas 13.0 takes them (ptxgen.legality's multimem forms,
_multimem_operands and _diagnose_multimem; lint's multimem_operands).

What ptxas 13.0 showed (every op, accumulation precision, vector size and type of each instruction, each memory
semantic, scope and state space, and the value operand as a register of every type, vectors of each length, of
mixed register types and with literals in each position, at sm_90a, sm_100a and sm_120a, and at sm_90, sm_100,
sm_100f, sm_103a, sm_110a, sm_120f and sm_121a):
- multimem.ld_reduce{.ldsem.scope | .weak}{.global}.op{.acc}{.vec}.type d, [a], multimem.st{.stsem.scope | .weak}
  {.global}{.vec}.type [a], b, multimem.red{.redsem.scope}{.global}.op{.vec}.type [a], b: .relaxed/.acquire (st,
  red: .release) need a scope and a scope needs one, .weak takes none and multimem.red has none; the types with a
  vector make 32, 64 or 128 bits (the integer types and .f64 take no vector, .f16/.bf16 need one); .and/.or/.xor are
  .b32/.b64's, .min/.max/.add the others' but .s64 (.min/.max) and .f32/.f64 (.add); .acc::f32 goes with .add of the
  half types, .acc::f16 with .add of the fp8 ones, which multimem.red has not, nor .min/.max of .f16x2/.bf16x2
  without a vector. The fp8 types (and .acc::f16) need sm_100a/f, sm_103a/f, sm_110a/f, sm_120a or sm_121a (not
  sm_100, sm_120f), .acc::f32 PTX ISA 8.2; .v8 of 16-bit types is sm_90's. multimem.cp* ptxas 13.0 does not know.
- the value: a register of the type's own kind or of its width as ptxas holds it (integers: .bN/.uN/.sN and .f16x2
  for 32 bits; .f32/.f64 their own and .bN; .f16x2 .f16x2 and .b32; .bf16, .bf16x2 and the fp8 types any register of
  their width, .pred too for ld_reduce's 32-bit d; multimem.red's .bf16/.bf16x2 .b16/.b32 only; .f16 elements any
  16-bit register); a vector of registers declared alike is typed so (an .f32 one takes .u32/.s32 registers, a
  scalar .f32 does not), any other by its elements: one width, no integer, floating-point, packed or .pred
  neighbours side by side (.bN stands next to any). A floating-point scalar of ld_reduce and st may be written
  {r}. Literals: st's and red's scalars of their type (.b32: 0f too, .b64: 0d); in a vector of registers a literal
  first types the vector (.f16 takes an integer one there, .f16x2 none), st.v8 takes no four floating-point literals
  as elements 1-4 or 5-8; a vector of literals only is taken where its elements are 32-bit and not .f16x2, as an .f32
  value or a 0d first with 0f after it (red .f32: an .f64 one too; st: {0d} of one element). No special register,
  vector register, symbol, sink or literal d.
- ptxas 13.0 crashes (a segmentation fault) on multimem.red with an integer literal after the first element of its
  vector, and on multimem.ld_reduce or multimem.st through a 32-bit address register in a kernel of its own (16- and
  64-bit ones it takes; multimem.red: "Arguments mismatch for instruction 'mov'" for all but 64-bit). Lint refuses
  them.
- a vector of registers that starts with a literal, but .f32 registers with 0f literals (typed by the form), is
  typed by one element as st's is (tests/test_lint_vector_mix.py): the last whose width is not the first literal's
  (0f: 32 bits; 0d, decimal and integer: 64), or the literal. The types ptxas holds as bits (.bf16, .bf16x2, the
  fp8 ones) need that element to be of their width, multimem.st's .f32 after a floating-point literal 32 bits, the
  others nothing (no width is asked of the other elements): multimem.st.v2.f32 {0, %rd1} is taken, {0f3F800000,
  %rd1} refused, multimem.red.add.v2.f32 {0d3FF0000000000000, %fd1} taken. multimem.st.v8 is moved in two packs of
  mov.b64 (of .e5m2/.e4m3: mov.b32), each typed as a pack (tests/test_lint_pack.py): {0, %w1, %w2, %w3,
  0f3F800000, %r5, %r6, %r7} is refused for its second half; multimem.red.v8 is one vector. Lint disagreed with
  ptxas on 73 of 2,260 such lines before; on none of 9,000 fresh ones at sm_90a, sm_100a and sm_120a after, nor of
  12,000 designed ones.
Lint disagreed with ptxas on 12,891 of 20,332 lines at sm_90a and on 21,051 of 29,840 at sm_100a and at sm_120a
before; on none after, nor at sm_90, sm_100, sm_100f, sm_103a, sm_110a, sm_120f and sm_121a. The tests keep a sample.
"""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _ptxas_lines import (first_line, kernel, lint_disagrees_with_ptxas, lint_disagrees_with_recorded,  # noqa: E402
                          lint_errors, ptxas_verdict, reg_decls)
from test_lint_vector_probes import needs_ptxas  # noqa: E402

NAMES = {"b8": "c", "u8": "uc", "b16": "w", "u16": "uw", "s16": "sw", "f16": "h", "b32": "r", "u32": "ru",
         "s32": "rs", "f32": "f", "f16x2": "hh", "b64": "rd", "u64": "ul", "s64": "sl", "f64": "fd", "pred": "p"}
LITS = {"int": "0", "0f": "0f3F800000", "0d": "0d3FF0000000000000"}
GLOBALS = ".global .align 16 .b8 gbuf[256];\n.shared .align 16 .b8 sbuf[256];\n"
VERSION = {"sm_90a": "8.8", "sm_100a": "8.8", "sm_120a": "8.8"}
TARGETS = ["sm_90a", "sm_100a", "sm_120a"]


def make_for(target, version=None):
    decls = reg_decls(*((t, n, 12) for t, n in NAMES.items())) + "\t.reg .v2 .b32 %v2r<2>;\n"

    def make(lines):
        text = kernel(lines, target, version or VERSION[target], decls)
        return text.replace(".address_size 64\n", ".address_size 64\n" + GLOBALS)
    return make


def reg(t, i):
    return f"%{NAMES[t]}{i}"


def vec(elems):
    return "{" + ",".join(elems) + "}"


def line(instr, mods, val, addr="[%rd11]"):
    if instr == "ld_reduce":
        return f"multimem.ld_reduce{mods} {val}, {addr};"
    return f"multimem.{instr}{mods} {addr}, {val};"


BITS = {"b32": 32, "b64": 64, "u32": 32, "u64": 64, "s32": 32, "s64": 64, "f16": 16, "f16x2": 32, "bf16": 16,
        "bf16x2": 32, "f32": 32, "f64": 64, "e5m2": 8, "e4m3": 8, "e5m2x2": 16, "e4m3x2": 16, "e5m2x4": 32,
        "e4m3x4": 32, "b16": 16, "u16": 16, "b8": 8, "pred": 32, "tf32": 32}
BREG = {8: "b8", 16: "b16", 32: "b32", 64: "b64"}
OPS = ("min", "max", "add", "and", "or", "xor", "inc")


def value(t, n):
    b = BREG[BITS[t]]
    return reg(b, 1) if n == 1 else vec([reg(b, i) for i in range(n)])


def spelling_lines():
    """Every op, accumulation precision, vector size and type of each instruction (the value in .bN registers), and
    each memory semantic, scope and state space of a form of each."""
    out = []
    for v in ("", ".v2", ".v4", ".v8"):
        n = int(v[2:]) if v else 1
        for t in BITS:
            out.append(line("st", f".relaxed.sys.global{v}.{t}", value(t, n)))
            for op in OPS:
                out.append(line("red", f".relaxed.sys.global.{op}{v}.{t}", value(t, n)))
                for acc in ("", ".acc::f32", ".acc::f16"):
                    out.append(line("ld_reduce", f".relaxed.sys.global.{op}{acc}{v}.{t}", value(t, n)))
    for instr, tail, val in (("ld_reduce", ".add.v2.f32", "{%r0,%r1}"), ("st", ".b32", "%r1"),
                             ("red", ".add.u64", "%rd1")):
        for sem in ("", ".weak", ".relaxed", ".acquire", ".release", ".acq_rel", ".volatile"):
            for scope in ("", ".cta", ".gpu", ".sys"):
                for space in ("", ".global", ".shared"):
                    out.append(line(instr, f"{sem}{scope}{space}{tail}", val))
    return out


# (instruction, modifiers after .relaxed.sys.global, element type, vector length): one form of each way the value is
# typed
FORMS = [("ld_reduce", ".add.u32", "u32", 1), ("ld_reduce", ".min.s64", "s64", 1), ("ld_reduce", ".xor.b32", "b32", 1),
         ("ld_reduce", ".add.f32", "f32", 1), ("ld_reduce", ".add.v4.f32", "f32", 4),
         ("ld_reduce", ".add.acc::f32.v2.f16x2", "f16x2", 2), ("ld_reduce", ".max.bf16x2", "bf16x2", 1),
         ("ld_reduce", ".min.v8.bf16", "bf16", 8), ("ld_reduce", ".add.acc::f16.v4.e5m2", "e5m2", 4),
         ("ld_reduce", ".max.v2.e4m3x4", "e4m3x4", 2), ("st", ".b64", "b64", 1), ("st", ".f32", "f32", 1),
         ("st", ".v2.f32", "f32", 2), ("st", ".v4.f16", "f16", 4), ("st", ".bf16x2", "bf16x2", 1),
         ("st", ".v8.e5m2x2", "e5m2x2", 8), ("st", ".f16x2", "f16x2", 1), ("st", ".u32", "u32", 1),
         ("red", ".add.v2.f32", "f32", 2), ("red", ".add.v8.f16", "f16", 8), ("red", ".min.v2.bf16", "bf16", 2),
         ("red", ".add.bf16x2", "bf16x2", 1), ("red", ".add.v4.bf16x2", "bf16x2", 4), ("red", ".add.f64", "f64", 1),
         ("red", ".and.b32", "b32", 1)]
KINDS = ("b16", "u16", "f16", "b32", "u32", "s32", "f32", "f16x2", "b64", "u64", "f64", "pred", "b8", "u8")


def red_crash(instr, elems):
    """multimem.red with an integer literal after the first element of a vector that holds a register: ptxas 13.0
    crashes on it (CRASHES), so ptxas_rejected cannot tell of the module's other lines."""
    return instr == "red" and any(e.lstrip("-").isdigit() for e in elems[1:]) and any(e.startswith("%") for e in elems)


def operand_lines(target):
    out = []
    for instr, tail, t, n in FORMS:
        if t.startswith("e") and target == "sm_90a":
            continue
        mods = ".relaxed.sys.global" + tail
        own = BREG[BITS[t]]
        base = {"f32": "f32", "f16x2": "f16x2", "f16": "f16", "f64": "f64"}.get(t, own)
        if n == 1:
            for k in KINDS + tuple(LITS):
                out.append(line(instr, mods, LITS.get(k) or reg(k, 1)))
                out.append(line(instr, mods, vec([LITS.get(k) or reg(k, 0)])))
            out += [line(instr, mods, vec([reg(own, 0), reg(own, 1)])), line(instr, mods, "%v2r0"),
                    line(instr, mods, "%tid.x"), line(instr, mods, "gbuf")]
            continue
        for k in KINDS:
            out.append(line(instr, mods, vec([reg(k, i) for i in range(n)])))
        for m in {n // 2, n * 2, n - 1}:
            out.append(line(instr, mods, vec([reg(own, i) for i in range(m)])))
        out += [line(instr, mods, reg(own, 1)), line(instr, mods, "%v2r0")]
        for b in dict.fromkeys((own, base)):
            for odd in KINDS + tuple(LITS):
                for where in sorted({0, n // 2, n - 1}):
                    if odd != b:
                        elems = [reg(b, i) for i in range(n)]
                        elems[where] = LITS.get(odd) or reg(odd, where)
                        if not red_crash(instr, elems):
                            out.append(line(instr, mods, vec(elems)))
        for a in LITS.values():
            for c in LITS.values():
                out.append(line(instr, mods, vec([a] + [c] * (n - 1))))
                if n == 8:
                    for elems in ([reg(own, 0)] + [a] * 3 + [c] * 4, [a] * 4 + [reg(own, i) for i in range(4, 8)]):
                        if not red_crash(instr, elems):
                            out.append(line(instr, mods, vec(elems)))
    return out


def lines_for(target):
    return list(dict.fromkeys(spelling_lines() + operand_lines(target)))


@needs_ptxas
@pytest.mark.parametrize("target", TARGETS)
def test_multimem_agrees_with_ptxas(target):
    lines = lines_for(target)
    assert len(lines) > 2500
    bad = lint_disagrees_with_ptxas(lines, make_for(target), target)
    assert not bad, f"{len(bad)} of {len(lines)} lines:\n" + "\n".join(bad[:40])


# ptxas 13.0's verdicts on lines of each rule (True: it assembles the line), for the tests without ptxas
RECORDED = [
    # spellings: semantics and scopes, op and type, vector and type, accumulation precision, targets
    ("sm_90a", "multimem.ld_reduce.add.u32 %r1, [%rd11];", True),
    ("sm_90a", "multimem.ld_reduce.relaxed.add.u32 %r1, [%rd11];", False),
    ("sm_90a", "multimem.ld_reduce.gpu.add.u32 %r1, [%rd11];", False),
    ("sm_90a", "multimem.ld_reduce.weak.gpu.add.u32 %r1, [%rd11];", False),
    ("sm_90a", "multimem.ld_reduce.weak.global.add.u32 %r1, [%rd11];", True),
    ("sm_90a", "multimem.st.release.cta.b32 [%rd11], %r1;", True),
    ("sm_90a", "multimem.st.acquire.cta.b32 [%rd11], %r1;", False),
    ("sm_90a", "multimem.red.weak.add.u32 [%rd11], %r1;", False),
    ("sm_90a", "multimem.red.release.sys.global.add.u32 [%rd11], %r1;", True),
    ("sm_90a", "multimem.st.shared.b32 [%rd11], %r1;", False),
    ("sm_90a", "multimem.ld_reduce.and.u32 %r1, [%rd11];", False),
    ("sm_90a", "multimem.ld_reduce.add.s64 %rd1, [%rd11];", False),
    ("sm_90a", "multimem.ld_reduce.min.f32 %f1, [%rd11];", False),
    ("sm_90a", "multimem.ld_reduce.add.v2.u32 {%r0,%r1}, [%rd11];", False),
    ("sm_90a", "multimem.ld_reduce.add.v8.f16x2 {%r0,%r1,%r2,%r3,%r4,%r5,%r6,%r7}, [%rd11];", False),
    ("sm_90a", "multimem.ld_reduce.add.v8.f16 {%w0,%w1,%w2,%w3,%w4,%w5,%w6,%w7}, [%rd11];", True),
    ("sm_90a", "multimem.st.f16 [%rd11], %w1;", False),
    ("sm_90a", "multimem.ld_reduce.min.acc::f32.v2.f16x2 {%r0,%r1}, [%rd11];", False),
    ("sm_90a", "multimem.ld_reduce.add.acc::f32.v2.f16x2 {%r0,%r1}, [%rd11];", True),
    ("sm_90a", "multimem.red.min.f16x2 [%rd11], %r1;", False),
    ("sm_90a", "multimem.red.min.v2.f16x2 [%rd11], {%r0,%r1};", True),
    ("sm_90a", "multimem.ld_reduce.add.v4.e5m2 {%c0,%c1,%c2,%c3}, [%rd11];", False),
    ("sm_100a", "multimem.ld_reduce.add.acc::f16.v4.e5m2 {%c0,%c1,%c2,%c3}, [%rd11];", True),
    ("sm_100a", "multimem.ld_reduce.add.v2.e5m2 {%c0,%c1}, [%rd11];", False),
    ("sm_100a", "multimem.red.add.v4.e5m2 [%rd11], {%c0,%c1,%c2,%c3};", False),
    ("sm_120a", "multimem.st.e4m3x4 [%rd11], %r1;", True),
    ("sm_90a", "multimem.cp.async.bulk.global.shared::cta [%rd11], [%rd10], 128;", False),
    # the value's registers: by type, as a whole vector, by elements
    ("sm_90a", "multimem.ld_reduce.add.u32 %hh1, [%rd11];", True),
    ("sm_90a", "multimem.ld_reduce.add.u32 %f1, [%rd11];", False),
    ("sm_90a", "multimem.ld_reduce.add.f32 %ru1, [%rd11];", False),
    ("sm_90a", "multimem.ld_reduce.add.f32 {%ru1}, [%rd11];", True),
    ("sm_90a", "multimem.ld_reduce.add.bf16x2 %p1, [%rd11];", True),
    ("sm_90a", "multimem.st.bf16x2 [%rd11], %p1;", False),
    ("sm_90a", "multimem.red.add.bf16x2 [%rd11], %ru1;", False),
    ("sm_90a", "multimem.red.add.bf16x2 [%rd11], {%r1};", False),
    ("sm_90a", "multimem.ld_reduce.add.v2.f32 {%ru0,%rs1}, [%rd11];", True),
    ("sm_90a", "multimem.ld_reduce.add.v2.f32 {%hh0,%hh1}, [%rd11];", False),
    ("sm_90a", "multimem.ld_reduce.add.v2.f16x2 {%ru0,%ru1}, [%rd11];", False),
    ("sm_90a", "multimem.ld_reduce.add.v2.f16x2 {%ru0,%r1}, [%rd11];", True),
    ("sm_90a", "multimem.ld_reduce.add.v2.f16x2 {%ru0,%hh1}, [%rd11];", False),
    ("sm_90a", "multimem.ld_reduce.add.v2.f16x2 {%r0,%w1}, [%rd11];", False),
    ("sm_90a", "multimem.red.add.v2.bf16 [%rd11], {%uw0,%uw1};", False),
    ("sm_90a", "multimem.red.add.v2.bf16 [%rd11], {%uw0,%w1};", True),
    ("sm_90a", "multimem.ld_reduce.add.v2.f32 {%f0,%f1,%f2}, [%rd11];", False),
    ("sm_90a", "multimem.st.v2.f32 [%rd11], %v2r0;", False),
    ("sm_90a", "multimem.st.b32 [%rd11], %tid.x;", False),
    ("sm_90a", "multimem.st.v2.f32 [%rd11], {%tid.x,%r1};", True),
    ("sm_90a", "multimem.ld_reduce.add.u32 _, [%rd11];", False),
    # literals
    ("sm_90a", "multimem.st.b32 [%rd11], 0f3F800000;", True),
    ("sm_90a", "multimem.st.b32 [%rd11], 0d3FF0000000000000;", False),
    ("sm_90a", "multimem.st.f32 [%rd11], 0;", False),
    ("sm_90a", "multimem.st.bf16x2 [%rd11], 0;", True),
    ("sm_90a", "multimem.red.add.bf16x2 [%rd11], 0;", False),
    ("sm_90a", "multimem.st.f16x2 [%rd11], 0;", False),
    ("sm_90a", "multimem.ld_reduce.add.v2.f32 {%f0,0f3F800000}, [%rd11];", False),
    ("sm_90a", "multimem.st.v4.f16 [%rd11], {0f3F800000,%w1,%w2,%w3};", False),
    ("sm_90a", "multimem.st.v4.f16 [%rd11], {0,%w1,%w2,%w3};", True),
    ("sm_90a", "multimem.st.v4.f16 [%rd11], {%w0,%w1,%w2,0f3F800000};", True),
    ("sm_90a", "multimem.st.v4.bf16 [%rd11], {0f3F800000,%w1,%w2,%w3};", True),
    ("sm_90a", "multimem.st.v2.f16x2 [%rd11], {0,%r1};", False),
    ("sm_90a", "multimem.st.v2.f32 [%rd11], {0,%r1};", True),
    ("sm_90a", "multimem.st.v8.f16 [%rd11], {%w0,%w1,%w2,%w3,0f3F800000,0f3F800000,0f3F800000,0f3F800000};", False),
    ("sm_90a", "multimem.st.v8.f16 [%rd11], {%w0,%w1,%w2,0f3F800000,0f3F800000,0f3F800000,0f3F800000,%w7};", True),
    ("sm_90a", "multimem.red.add.v8.f16 [%rd11], {%w0,%w1,%w2,%w3,0f3F800000,0f3F800000,0f3F800000,0f3F800000};",
     True),
    ("sm_90a", "multimem.st.v2.f32 [%rd11], {0f3F800000,0d3FF0000000000000};", False),
    ("sm_90a", "multimem.red.add.v2.f32 [%rd11], {0f3F800000,0d3FF0000000000000};", True),
    ("sm_90a", "multimem.st.v2.f32 [%rd11], {0d3FF0000000000000,0f3F800000};", True),
    ("sm_90a", "multimem.st.f32 [%rd11], {0d3FF0000000000000};", True),
    ("sm_90a", "multimem.st.v2.bf16x2 [%rd11], {0,0};", False),
    ("sm_90a", "multimem.red.add.v2.bf16x2 [%rd11], {0f3F800000,0f3F800000};", False),
    ("sm_90a", "multimem.red.add.v2.bf16x2 [%rd11], {0d3FF0000000000000,0f3F800000};", True),
    ("sm_90a", "multimem.st.v2.f16x2 [%rd11], {0d3FF0000000000000,0f3F800000};", False),
    ("sm_90a", "multimem.red.add.v2.f32 [%rd11], {0,%r1};", True),
    # a vector of registers that starts with a literal: typed by its last element of another width than the literal
    # (0f: 32 bits, 0d, decimal and integer: 64), or the literal
    ("sm_90a", "multimem.st.v2.f32 [%rd11], {0,%rd1};", True),            # after an integer literal: any width
    ("sm_90a", "multimem.st.v4.f32 [%rd11], {0,%w1,%rs1,%r1};", True),
    ("sm_90a", "multimem.st.v2.f32 [%rd11], {0f3F800000,%rd1};", False),  # st .f32 after a float: 32 bits
    ("sm_90a", "multimem.st.v2.f32 [%rd11], {0d3FF0000000000000,%r1};", True),   # typed by %r1
    ("sm_90a", "multimem.st.v2.f32 [%rd11], {0d3FF0000000000000,%rd1};", False),  # typed by the 0d literal
    ("sm_90a", "multimem.red.add.v2.f32 [%rd11], {0f3F800000,%rd1};", True),     # red .f32: any width
    ("sm_90a", "multimem.red.add.v2.f32 [%rd11], {0d3FF0000000000000,%fd1};", True),
    ("sm_90a", "multimem.red.add.v2.f32 [%rd11], {%fd0,0d3FF0000000000000};", False),  # a register first
    ("sm_90a", "multimem.st.v2.f32 [%rd11], {0f3F800000,%ru1};", False),  # neighbours of two kinds
    ("sm_90a", "multimem.st.v2.bf16x2 [%rd11], {0,%r1};", True),          # held as bits: 32 bits
    ("sm_90a", "multimem.st.v2.bf16x2 [%rd11], {0,%rd1};", False),
    ("sm_90a", "multimem.st.v4.bf16x2 [%rd11], {0,%ul1,%ru1,-1};", True),   # typed by %ru1
    ("sm_90a", "multimem.st.v2.bf16 [%rd11], {0f3F800000,%h1};", True),
    ("sm_90a", "multimem.st.v2.bf16 [%rd11], {-1,%r1};", False),
    ("sm_90a", "multimem.red.add.v2.bf16x2 [%rd11], {0f3F800000,%f1};", False),  # .f32 with 0f: typed by the form
    ("sm_90a", "multimem.st.v2.bf16x2 [%rd11], {0f3F800000,%f1};", True),
    ("sm_90a", "multimem.st.v4.f16 [%rd11], {0,%w1,%w2,%rd1};", True),
    # multimem.st.v8 moves its value in two packs of four 16-bit parts (of .e5m2/.e4m3: four bytes)
    ("sm_90a", "multimem.st.v8.bf16 [%rd11], {-1,%w1,%w2,%p1,%w4,%w5,%w6,1.5};", True),
    ("sm_90a", "multimem.st.v4.bf16 [%rd11], {-1,%w1,%w2,%p1};", False),
    ("sm_90a", "multimem.st.v8.f16 [%rd11], {0,%w1,%w2,%w3,0f3F800000,%w5,%w6,%w7};", True),
    ("sm_90a", "multimem.st.v8.f16 [%rd11], {0,%w1,%w2,%w3,0f3F800000,%r5,%r6,%r7};", False),
    ("sm_90a", "multimem.st.v8.bf16 [%rd11], {0,%w1,%w2,%w3,%w4,%w5,%w6,%rd7};", False),   # %rd7 in the second pack
    ("sm_90a", "multimem.red.add.v8.bf16 [%rd11], {0,%uw1,%uw2,%uw3,%w4,%uw5,%uw6,%rd7};", True),  # red: one vector
    ("sm_100a", "multimem.st.v8.e5m2 [%rd11], {0,%c1,%uc2,%c3,%c4,%c5,%uc6,%c7};", True),
    ("sm_100a", "multimem.st.v4.e5m2 [%rd11], {0f3F800000,%c1,%w2,%c3};", True),   # typed by %c3
    ("sm_100a", "multimem.st.v4.e4m3x2 [%rd11], {0,%w1,%c2,%rd3};", False),        # typed by %c2
    # addresses
    ("sm_90a", "multimem.ld_reduce.add.u32 %r1, [%w5];", True),
    ("sm_90a", "multimem.red.add.u32 [%w5], %r1;", False),
    ("sm_90a", "multimem.ld_reduce.global.add.u32 %r1, [sbuf];", False),
    ("sm_90a", "multimem.ld_reduce.add.u32 %r1, [sbuf];", True),
]
# lines ptxas 13.0 crashes on (a segmentation fault, no message), each in a kernel of its own; lint refuses them
CRASHES = [("sm_90a", "multimem.red.add.v2.f32 [%rd11], {%r0,0};"),
           ("sm_100a", "multimem.red.add.v4.bf16x2 [%rd11], {%r0,0,%r2,%r3};"),
           ("sm_90a", "multimem.ld_reduce.add.u32 %r1, [%r5];"),
           ("sm_100a", "multimem.st.global.v2.f16x2 [%ru5], {%r0,%r1};")]


@pytest.mark.parametrize("target", sorted({t for t, _, _ in RECORDED}))
def test_recorded_verdicts(target):
    wrong = lint_disagrees_with_recorded([(ln, ok) for t, ln, ok in RECORDED if t == target], make_for(target))
    assert not wrong, "\n".join(wrong)


@needs_ptxas
def test_the_recorded_verdicts_are_ptxas_s():
    from _ptxas_lines import agree_with_ptxas
    for target in sorted({t for t, _, _ in RECORDED}):
        agree_with_ptxas([(ln, ok) for t, ln, ok in RECORDED if t == target], make_for(target), target)


@pytest.mark.parametrize("target, ln", CRASHES)
def test_lint_refuses_what_ptxas_crashes_on(target, ln):
    text = make_for(target)([ln])
    errs = lint_errors(text)
    assert list(errs) == [first_line(text, [ln])], errs
    assert "crashes" in next(iter(errs.values())).message


@needs_ptxas
def test_the_crashes_are_ptxas_s():
    for target, ln in CRASHES:
        assert ptxas_verdict(make_for(target)([ln]), target) == "error", ln


# multimem.st's and multimem.red's values that start with a literal among registers (legality._multimem_literal_first):
# every vector length of every type with a value, registers of the type's width and of others, literals of each kind
LIT_FIRST = ("0", "-1", "0f3F800000", "0d3FF0000000000000", "1.5")
_LIT_TYPES = [("f32", (2, 4)), ("f16x2", (2, 4)), ("bf16x2", (2, 4)), ("f16", (2, 4, 8)), ("bf16", (2, 4, 8))]
_LIT_FP8 = [("e5m2", (4, 8)), ("e4m3x2", (2, 4, 8)), ("e5m2x4", (2, 4)), ("e4m3", (4, 8))]
_LIT_NEAR = {"f32": ("f32", "b32", "u32"), "f16x2": ("f16x2", "b32"), "bf16x2": ("b32", "f32"), "f16": ("f16", "b16"),
             "bf16": ("b16", "f16", "u16"), "e5m2": ("b8", "u8"), "e4m3": ("b8",), "e4m3x2": ("b16", "f16"),
             "e5m2x4": ("b32", "f32")}


def literal_first_lines(target, count=1500, seed=0):
    import random
    rng = random.Random(seed)
    out = set()
    while len(out) < count:
        instr = rng.choice(("st", "st", "red"))
        ty, ns = rng.choice(_LIT_TYPES + (_LIT_FP8 if instr == "st" and target != "sm_90a" else []))
        n = rng.choice(ns)

        def elem():
            r = rng.random()
            return rng.choice(LIT_FIRST) if r < 0.25 else reg(rng.choice(_LIT_NEAR[ty] if r < 0.75 else KINDS), 2)
        v = [rng.choice(LIT_FIRST)] + [elem() for _ in range(n - 1)]
        if red_crash(instr, v):
            continue
        mods = ".relaxed.sys.global" + (".add" if instr == "red" else "")
        out.add(f"multimem.{instr}{mods}.v{n}.{ty} [%rd11], {vec(v)};")
    return sorted(out)


@needs_ptxas
@pytest.mark.parametrize("target", ["sm_90a", "sm_100a"])
def test_literal_first_vectors_agree_with_ptxas(target):
    lines = literal_first_lines(target)
    bad = lint_disagrees_with_ptxas(lines, make_for(target), target)
    assert not bad, f"{len(bad)} of {len(lines)} lines:\n" + "\n".join(bad[:40])


# what lint says, where: the problem and what to write instead
MESSAGES = [
    ("multimem.ld_reduce.relaxed.add.u32 %r1, [%rd11];", 2, "PTX-E-MODIFIER",
     "multimem.ld_reduce: .relaxed needs a scope: .cta, .cluster, .gpu, or .sys", "write .relaxed with one of them"),
    ("multimem.ld_reduce.weak.gpu.add.u32 %r1, [%rd11];", 2, "PTX-E-MODIFIER",
     "multimem.ld_reduce: .weak takes no scope (.gpu)", "drop .gpu"),
    ("multimem.red.weak.add.u32 [%rd11], %r1;", 2, "PTX-E-MODIFIER",
     "multimem.red takes no .weak: its memory semantic is .release or .relaxed, or none",
     "write one of .release, .relaxed or drop .weak"),
    ("multimem.ld_reduce.add.v8.f32 {%f0,%f1,%f2,%f3,%f4,%f5,%f6,%f7}, [%rd11];", 2, "PTX-E-TYPE",
     "multimem.ld_reduce: .f32 does not go with .v8; with .f32 the vector size is .v2 or .v4, or none",
     "write .f32 with one of them, or another element type"),
    ("multimem.st.add.b32 [%rd11], %r1;", 2, "PTX-E-MODIFIER", "multimem.st takes no operation (.add)", "drop .add"),
    ("multimem.st.relaxed.sys.relaxed.b32 [%rd11], %r1;", 2, "PTX-E-MODIFIER",
     "multimem.st: .relaxed is written twice", "write .relaxed once"),
    ("multimem.red.add.v2.f32 [%rd11], {%r0,0};", 35, "PTX-E-OPERANDS",
     "multimem.red: operand 2 (b) has 0 as element 2; ptxas 13.0 crashes (a segmentation fault) on multimem.red with "
     "an integer literal after the first element; put it in a register", None),
    ("multimem.st.v2.f16x2 [%rd11], {0,%r1};", 32, "PTX-E-TYPE",
     "multimem.st: operand 2 (b) starts with an integer literal, which types the vector for ptxas 13.0: none can "
     "start a .f16x2 vector of registers; put the literal in a register or after the first element", None),
    ("multimem.st.v2.f32 [%rd11], {0f3F800000,%rd1};", 30, "PTX-E-TYPE",
     "multimem.st: operand 2 (b) is typed by its .b64 element 2, 64 bits wide (ptxas 13.0 types a vector that "
     "starts with a literal by its last element of another width than the literal, or by the literal); .f32 needs "
     "32", None),
    ("multimem.st.v8.f16 [%rd11], {0,%w1,%w2,%w3,0f3F800000,%r5,%r6,%r7};", 30, "PTX-E-TYPE",
     "multimem.st: operand 2 (b) has elements 5 to 8 moved as one pack of 16-bit parts by ptxas 13.0 "
     "(multimem.st.v8), which is typed by the literal 1, 32 bits wide (ptxas 13.0 types a vector that starts with a "
     "literal by its last element of another width than the literal, or by the literal); each part is 16 bits",
     None),
    ("multimem.ld_reduce.add.u32 %r1, [%r5];", 34, "PTX-E-OPERANDS",
     "%r5 is a 32-bit address register; ptxas 13.0 crashes (a segmentation fault) on multimem.ld_reduce with one",
     "give the address in a 64-bit register (cvt.u64.u32)"),
    ("multimem.st.b32 [%rd11], %tid.x;", 27, "PTX-E-OPERANDS",
     "multimem.st: operand 2 (b) is a special register, which ptxas 13.0 does not take here", None),
]


@pytest.mark.parametrize("ln, col, code, message, note", MESSAGES)
def test_messages(ln, col, code, message, note):
    text = make_for("sm_90a")([ln])
    errs = lint_errors(text)
    d = errs[first_line(text, [ln])]
    assert (d.loc.col, d.code, d.message) == (col, code, message)
    if note is not None:
        assert note in d.notes
