""".pred registers in tensor-core fragments (mma, mma.sp, ldmatrix, stmatrix, wgmma), as ptxas 13.0 takes them
(legality._pred_targets).

What ptxas 13.0 showed, where lint refused every one ("holds .pred registers"): a fragment that takes any 32-bit
register takes .pred ones too where the target runs the instruction itself, and refuses them where ptxas expands it
into code of its own. So the .s8/.u8 mma.sync A and B at m16n8k16/k32 (m8n8k16's B from sm_100 on), mma.sp's .s8/.u8 A
and B, its .bf16/.tf32 fragments and the .f32 accumulator of its .f16 forms, at every target; the .s4/.u4 A and B below
sm_90; .b1's below sm_90 and, with .and, on sm_90; the .e4m3/.e5m2 A and B on sm_89 and from sm_120 on; ldmatrix's and
stmatrix's registers; wgmma's integer and .b1 register A. 1,680 of 14,152 such lines (every fragment of every form at
ten targets) disagreed before; test_every_fragment_form_agrees_with_ptxas keeps a sample of them.
"""
from __future__ import annotations

import os
import shutil
import sys

import pytest

import ptxgen as pg
from ptxgen import LegalityError
from ptxgen.types import b32, pred, s32

from ptxgen import legality as L

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _ptxas_lines import (agree_with_ptxas, first_line, kernel, lint_disagrees_with_ptxas,  # noqa: E402
                          lint_errors, ptxas_rejected, ptxas_verdict, reg_decls)
from test_lint_vector_probes import needs_ptxas  # noqa: E402

# (opcode tail after mma / mma.sp::ordered_metadata, registers of A, B, C/D, whether sparse, whether A/B take .pred)
FORMS = []
for at in ("s8", "u8"):
    for bt in ("s8", "u8"):
        FORMS += [(f".sync.aligned.m8n8k16.row.col.s32.{at}.{bt}.s32", 1, 1, 2, False, False),
                  (f".sync.aligned.m16n8k16.row.col.s32.{at}.{bt}.s32", 2, 1, 4, False, True),
                  (f".sync.aligned.m16n8k32.row.col.satfinite.s32.{at}.{bt}.s32", 4, 2, 4, False, True),
                  (f".sync.aligned.m16n8k32.row.col.s32.{at}.{bt}.s32", 2, 2, 4, True, True),
                  (f".sync.aligned.m16n8k64.row.col.s32.{at}.{bt}.s32", 4, 4, 4, True, True)]
FORMS += [(".sync.aligned.m8n8k32.row.col.s32.s4.u4.s32", 1, 1, 2, False, False),
          (".sync.aligned.m16n8k32.row.col.s32.u4.u4.s32", 2, 1, 4, False, False),
          (".sync.aligned.m16n8k64.row.col.s32.s4.s4.s32", 4, 2, 4, False, False),
          (".sync.aligned.m16n8k64.row.col.s32.s4.s4.s32", 2, 2, 4, True, False),
          (".sync.aligned.m16n8k128.row.col.s32.u4.u4.s32", 4, 4, 4, True, False),
          (".sync.aligned.m8n8k128.row.col.xor.popc.s32.b1.b1.s32", 1, 1, 2, False, False),
          (".sync.aligned.m16n8k128.row.col.xor.popc.s32.b1.b1.s32", 2, 1, 4, False, False),
          (".sync.aligned.m16n8k256.row.col.xor.popc.s32.b1.b1.s32", 4, 2, 4, False, False),
          (".sync.aligned.m8n8k128.row.col.and.popc.s32.b1.b1.s32", 1, 1, 2, False, True),
          (".sync.aligned.m16n8k128.row.col.and.popc.s32.b1.b1.s32", 2, 1, 4, False, True),
          (".sync.aligned.m16n8k256.row.col.and.popc.s32.b1.b1.s32", 4, 2, 4, False, True),
          (".sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32", 4, 2, 4, False, False),
          (".sync.aligned.m16n8k64.row.col.f32.e4m3.e4m3.f32", 4, 4, 4, True, False)]


def vec(prefix, n, first):
    return "{" + ",".join(f"%{prefix}{first + i}" for i in range(n)) + "}"


def lines_and_verdicts():
    out = []
    for tail, na, nb, nd, sparse, pred_ab in FORMS:
        head = "mma.sp::ordered_metadata" if sparse else "mma"
        acc = "f" if ".f32." in tail else "r"
        extra = ", %r30, 0" if sparse else ""
        for where in ("", "a", "b", "c", "d"):
            d = vec("p" if where == "d" else acc, nd, 0)
            a = vec("p" if where == "a" else "r", na, 10)
            b = vec("p" if where == "b" else "r", nb, 20)
            c = vec("p" if where == "c" else acc, nd, 0)
            ok = where == "" or (where in ("a", "b") and pred_ab)
            out.append((f"{head}{tail} {d}, {a}, {b}, {c}{extra};", ok))
    return out


def module(lines):
    return kernel(lines, "sm_90a", "8.7", reg_decls(("pred", "p", 40), ("b32", "r", 40), ("f32", "f", 8)))


@needs_ptxas
def test_the_recorded_verdicts_are_ptxas_s():
    agree_with_ptxas(lines_and_verdicts(), module)


@needs_ptxas
def test_lint_takes_what_ptxas_takes_and_only_that():
    assert lint_disagrees_with_ptxas([ln for ln, _ in lines_and_verdicts()], module) == []


def test_the_matrix_has_pred_operands_on_both_sides_of_the_rule():
    cases = lines_and_verdicts()
    assert sum(ok for ln, ok in cases if "%p" in ln) == 2 * (4 * 4 + 3)    # (A, B) x (4 pairs x 4 forms + 3 .and forms)
    assert sum(not ok for ln, ok in cases if "%p" in ln) > 50


@pytest.mark.parametrize("shape,ok", [("m16n8k32", True), ("m16n8k16", True), ("m8n8k16", False)])
def test_the_builder_asks_the_same_rule(shape, ok):
    m = pg.Module("sm_90a")
    k = m.entry("k")
    op = f"mma.sync.aligned.{shape}.row.col.s32.s8.s8.s32"
    na = {"m16n8k32": 4, "m16n8k16": 2, "m8n8k16": 1}[shape]
    nb = {"m16n8k32": 2, "m16n8k16": 1, "m8n8k16": 1}[shape]
    nd = 2 if shape == "m8n8k16" else 4
    a, b, c = k.regs(pred, na), k.regs(b32, nb), k.regs(s32, nd)
    call = lambda: k.mma_sync(shape, c, a, b, c, atype="s8", ctype="s32")  # noqa: E731
    if ok:
        call()
        text = str(m.emit())
        assert op in text
        if shutil.which("ptxas"):
            assert ptxas_verdict(text) == "ok"
    else:
        with pytest.raises(LegalityError, match=r"operand 2 \(a\) holds \.pred registers"):
            call()


def test_the_builder_refuses_pred_in_a_4_bit_form():
    m = pg.Module("sm_90a")
    k = m.entry("k")
    a, b, c = k.regs(pred, 2), k.regs(b32, 1), k.regs(s32, 4)
    with pytest.raises(LegalityError, match=r"operand 2 \(a\) holds \.pred registers"):
        k.mma_sync("m16n8k32", c, a, b, c, atype="s4", ctype="s32")


def test_the_builder_takes_pred_in_b1_and_popc_only():
    m = pg.Module("sm_90a")
    k = m.entry("k")
    a, b, c = k.regs(pred, 2), k.regs(b32, 1), k.regs(s32, 4)
    k.mma_sync("m16n8k128", c, a, b, c, atype="b1", ctype="s32", bitop="and")
    text = str(m.emit())
    assert "mma.sync.aligned.m16n8k128.row.col.s32.b1.b1.s32.and.popc" in text
    if shutil.which("ptxas"):
        assert ptxas_verdict(text) == "ok"
    with pytest.raises(LegalityError, match=r"operand 2 \(a\) holds \.pred registers"):
        k.mma_sync("m16n8k128", c, a, b, c, atype="b1", ctype="s32", bitop="xor")


# ---- every fragment of every form: each rule's forms sampled evenly, at ten targets

TARGETS = ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100a", "sm_103a", "sm_110a", "sm_120a")
PER_RULE = 3          # forms a rule and target
RULES = tuple(r for r in sorted({f.rule for f in L.forms()}) if ("mma" in r or "matrix" in r)
              and r not in ("wgmma_fence", "wgmma_commit_group", "wgmma_wait_group"))


class _Regs:
    """Registers named and counted by declared type (.bf16x2 and .tf32 ones are declared .b32, as the builder does)."""

    def __init__(self):
        self.n = {}

    def __call__(self, t: str) -> str:
        t = {"bf16x2": "b32", "tf32": "b32"}.get(t, t)
        self.n[t] = self.n.get(t, 0) + 1
        return f"%v_{t}_{self.n[t]}"

    def decls(self) -> str:
        return "".join(f"\t.reg .{t} %v_{t}_<{n + 1}>;\n" for t, n in self.n.items())


# literal elements: (the literal, whether only the first element is one)
LITERALS = {"int": ("0", False), "0f": ("0f3F800000", False), "0d": ("0d3FF0000000000000", False),
            "int first": ("1", True), "0f first": ("0f3F800000", True)}


def _fragment(slot) -> bool:
    return "vec" in slot.kinds and "reg" not in slot.kinds and not slot.optional


def _operands(sig, regs, alt_at=None, alt="pred"):
    out = []
    for j, s in enumerate(sig.slots):
        if s.optional:
            continue
        t = s.types[0].name if s.types else "b32"
        if _fragment(s) and j == alt_at and alt in LITERALS:
            lit, first_only = LITERALS[alt]
            out.append("{" + ",".join(lit if i == 0 or not first_only else regs(t) for i in range(s.count)) + "}")
        elif _fragment(s):
            out.append("{" + ",".join(regs(alt if j == alt_at else t) for _ in range(s.count)) + "}")
        elif "reg" in s.kinds:
            out.append(regs(t))
        elif "imm" in s.kinds:
            out.append(str(next(iter(getattr(s.values, "values", s.values)))) if s.values is not None else "1")
        else:
            out.append("[sm]")
    return out


def fragment_matrix(alts=("pred",), per_rule=PER_RULE):
    """{target: [(line, rule, fragment name:register type, or '' for the form's own operands)]}: each fragment of
    `per_rule` forms a rule and target holding registers of each type of `alts` in turn."""
    regs, out = _Regs(), {t: [] for t in TARGETS}
    for rule in RULES:
        fs = sorted(L.forms(rule), key=lambda f: f.opcode)
        for tg in TARGETS:
            legal = [f for f in fs if not L.check(f.opcode, None, tg, (9, 0))]
            for f in legal[::max(1, -(-len(legal) // per_rule))]:
                for sig in L.signatures(f.opcode):
                    out[tg].append((f"{f.opcode} {', '.join(_operands(sig, regs))};", rule, ""))
                    for j, s in enumerate(sig.slots):
                        for alt in alts:
                            if _fragment(s) and alt != s.types[0].name and (alt not in LITERALS or s.fragment):
                                out[tg].append((f"{f.opcode} {', '.join(_operands(sig, regs, j, alt))};", rule,
                                                f"{s.name}:{alt}"))
    return regs, out


def _matrix_module(regs, tg, lines):
    return kernel(lines, tg, "9.0", regs.decls() + "\t.shared .align 16 .b8 sm[1024];\n")


def _lint_against_ptxas(regs, matrix):
    """The matrix's lines where lint and ptxas disagree, and the (rule, fragment:type, target) triples ptxas takes
    and refuses."""
    bad, taken, refused = [], set(), set()
    for tg, items in matrix.items():
        lines = [ln for ln, _, _ in items]
        text = _matrix_module(regs, tg, lines)
        first = first_line(text, lines)
        by_ptxas, by_lint = ptxas_rejected(text, tg), lint_errors(text)
        for i, (ln, rule, frag) in enumerate(items, first):
            if not frag:
                assert i not in by_ptxas, (tg, ln, by_ptxas[i])     # the form's own operands assemble
                continue
            (refused if i in by_ptxas else taken).add((rule, frag, tg))
            if (i in by_ptxas) != (i in by_lint):
                bad.append(f"{tg}: {'ptxas rejects' if i in by_ptxas else 'ptxas takes'}: {ln[:140]}  "
                           f"({by_ptxas.get(i) or by_lint[i].message})")
    return bad, taken, refused


@needs_ptxas
def test_every_fragment_form_agrees_with_ptxas_on_pred_registers():
    bad, taken, refused = _lint_against_ptxas(*fragment_matrix())
    assert not bad, f"{len(bad)} lines:\n" + "\n".join(bad[:40])
    # both sides of the rule are in the sample: taken at one target and refused at another, per form family
    for rule, frag, yes, no in (("mma_i4", "a", "sm_89", "sm_90a"), ("mma_fp8", "b", "sm_120a", "sm_100a"),
                                ("mma_b1", "a", "sm_80", "sm_100a"), ("mma_sp_i4", "b", "sm_86", "sm_90")):
        assert (rule, frag + ":pred", yes) in taken and (rule, frag + ":pred", no) in refused, (rule, frag)
    assert ("ldmatrix_m8n8", "d:pred", "sm_75") in taken and ("wgmma_int", "a:pred", "sm_90a") in taken
    assert ("wgmma_f16", "a:pred", "sm_90a") in refused and ("mma_tf32", "a:pred", "sm_80") in refused


OTHER_TYPES = ("b32", "u32", "s32", "f32", "f16x2", "b16", "f16", "b64", "u64", "s64", "f64")


@needs_ptxas
def test_every_fragment_form_agrees_with_ptxas_on_other_register_types():
    """Each fragment holding registers of another declared type: where ptxas expands an instruction into code of its
    own, that code takes fewer (the .f64 D of m16n8k4/k8/k16 .u64 and .s64 only below sm_100) or more (m8n8k16's .s8/.u8
    B any 32-bit register from sm_100 on)."""
    bad, taken, refused = _lint_against_ptxas(*fragment_matrix(OTHER_TYPES, per_rule=1))
    assert not bad, f"{len(bad)} lines:\n" + "\n".join(bad[:40])
    assert ("mma_f16", "a:f32", "sm_80") in refused and ("ldmatrix_m8n8", "d:u32", "sm_80") in taken


def _by_target_module(target):
    decls = reg_decls(*((t, n, 20) for t, n in (("b32", "r"), ("f32", "f"), ("f16x2", "h"), ("s32", "s"),
                                                 ("f64", "fd"), ("u64", "ud"), ("s64", "sd"), ("b64", "bd"))))
    return lambda lines: kernel(lines, target, "9.0", decls)


@needs_ptxas
@pytest.mark.parametrize("target,new", [("sm_90a", False), ("sm_100a", True), ("sm_120a", True)])
def test_the_registers_that_change_at_sm_100(target, new):
    i8 = "mma.sync.aligned.m8n8k16.row.col.s32.s8.u8.s32 {%s1,%s2}, {%r1}, "
    f64 = "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 "
    cases = [(i8 + "{%r2}, {%s1,%s2};", True), (i8 + "{%f2}, {%s1,%s2};", new), (i8 + "{%h2}, {%s1,%s2};", new),
             ("mma.sync.aligned.m8n8k16.row.col.s32.s8.u8.s32 {%s1,%s2}, {%f1}, {%r2}, {%s1,%s2};", False),
             (f64 + "{%fd1,%fd2,%fd3,%fd4}, {%fd5,%fd6,%fd7,%fd8}, {%fd9,%fd10}, {%fd1,%fd2,%fd3,%fd4};", True),
             (f64 + "{%bd1,%bd2,%bd3,%bd4}, {%fd5,%fd6,%fd7,%fd8}, {%fd9,%fd10}, {%fd1,%fd2,%fd3,%fd4};", True),
             (f64 + "{%ud1,%ud2,%ud3,%ud4}, {%fd5,%fd6,%fd7,%fd8}, {%fd9,%fd10}, {%fd1,%fd2,%fd3,%fd4};", not new),
             (f64 + "{%sd1,%sd2,%sd3,%sd4}, {%fd5,%fd6,%fd7,%fd8}, {%fd9,%fd10}, {%fd1,%fd2,%fd3,%fd4};", not new),
             (f64 + "{%fd1,%fd2,%fd3,%fd4}, {%ud5,%ud6,%ud7,%ud8}, {%fd9,%fd10}, {%fd1,%fd2,%fd3,%fd4};", True),
             ("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%ud1,%ud2}, {%fd5}, {%fd6}, {%fd1,%fd2};", True),
             # m8n8k16's C: a .b32 register beside another type, or a float literal, below sm_100 only
             (i8 + "{%r2}, {%r3,%f2};", not new), (i8 + "{%r2}, {%r3,%h2};", not new),
             (i8 + "{%r2}, {0f3F800000,%r3};", not new), (i8 + "{%r2}, {0,%r3};", True)]
    # the .f16 accumulator of fp8 mma: ptxas adds it with code of its own on sm_90 to sm_110, which takes no register
    # of another type beside the .b32 ones, and no literal
    fp8, native = "mma.sync.aligned.m16n8k16.row.col.f16.e4m3.e4m3.f16 ", target == "sm_120a"
    cases += [(fp8 + "{%r1,%s2}, {%r5,%r6}, {%r7}, {%h1,%h2};", native),
              (fp8 + "{%h1,%h2}, {%r5,%r6}, {%r7}, {%r1,%f2};", native),
              (fp8 + "{%h1,%h2}, {%r5,%r6}, {%r7}, {1,%r2};", native),
              (fp8 + "{%h1,%h2}, {%r5,%r6}, {%r7}, {0f3F800000,%r2};", native),
              (fp8 + "{%h1,%h2}, {%r5,%r6}, {%r7}, {%r1,%r2};", True)]
    agree_with_ptxas(cases, _by_target_module(target), target)
    assert lint_disagrees_with_ptxas([ln for ln, _ in cases], _by_target_module(target), target) == []


@needs_ptxas
def test_fragments_of_literals_only_agree_with_ptxas():
    """A fragment written as integer or 0f literals only: ptxas types the vector by its literals (integers pass in
    .s32 and .f64 fragments, 0f literals where an .f32 register passes), as legality._literal_fragment_problem has it;
    lint took them all before."""
    bad, taken, refused = _lint_against_ptxas(*fragment_matrix(("int", "0f"), per_rule=2))
    assert not bad, f"{len(bad)} lines:\n" + "\n".join(bad[:40])
    assert ("mma_i8", "c:int", "sm_80") in taken and ("mma_bf16", "c:int", "sm_80") in refused
    assert ("mma_bf16", "c:0f", "sm_80") in taken and ("mma_bf16", "a:0f", "sm_80") in refused
    assert ("mma_f64", "a:int", "sm_90a") in taken and ("stmatrix_m8n8", "r:0f", "sm_90a") in taken


@needs_ptxas
def test_other_literal_fragments_are_never_refused_where_ptxas_takes_them():
    """0d literals and a literal first before registers: lint refuses fewer than ptxas (0d literals pass in the .f32
    accumulators of some forms only, and lint reads 0f and 0d alike), never more."""
    bad, _, _ = _lint_against_ptxas(*fragment_matrix(("0d", "int first", "0f first"), per_rule=2))
    wrong = [b for b in bad if ": ptxas takes: " in b]
    assert not wrong, f"{len(wrong)} lines:\n" + "\n".join(wrong[:40])
