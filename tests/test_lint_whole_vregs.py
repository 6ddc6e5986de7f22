"""Whole vector registers (`.reg .v4 .b32 %a;` named `%a`) in the operands of the tensor-core and async families, line
by line against ptxas 13.0 with code generation (-arch=sm_XY).

ptxas reads one as its elements ({%a.x, %a.y, ...}) where the operand is a vector of as many registers, except in
multimem and where it expands the instruction into code of its own; in a few scalar operands as one register of its
elements' type (mbarrier counts, mma.sp metadata, st.async's value with an mbarrier), or st.async's .b32/.b64 value
as one value of its size; nowhere else. tests/test_legality_ptxas.py probes every operand of every form the same way
(with -arch=compute_XY, which checks without generating code). Generating code, ptxas 13.0 crashes on some that it
checks clean: mma's D when the instruction reads the same register (`mma ... %acc, %a, %b, %acc;`), wgmma's D,
tex's gradients, offsets and depth compare, and a tensor map's coordinates (`[tmap, %b]`). These lines keep the rules readable and go through the linter's own
translation (a vector register known by its declaration, also as coordinates `[tex, %b]`).
"""
from __future__ import annotations

import shutil

import pytest

from _ptxas_lines import (agree_with_ptxas, kernel, lint_disagrees_with_ptxas, lint_disagrees_with_recorded,
                          first_line, lint_errors, ptxas_crashes, ptxas_verdict)

DECLS = ("\t.reg .v4 .b32 %a;\n\t.reg .v2 .b32 %b;\n\t.reg .v4 .f32 %acc;\n\t.reg .v4 .f32 %c2;\n\t.reg .v2 .b16 %m;\n"
         "\t.reg .v2 .f32 %g2;\n\t.reg .v2 .b64 %d2;\n\t.reg .b64 %rd<8>;\n\t.reg .b32 %r<8>;\n\t.reg .f32 %f<8>;\n"
         "\t.reg .pred %p;\n\t.reg .v4 .s32 %s4;\n\t.reg .v4 .s32 %s5;\n")

MMA = "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
WGMMA = "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 "
TMA2 = "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
MULTICAST = "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
B1 = "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.xor.popc "
FP8 = "mma.sync.aligned.m16n8k16.row.col.f32.e4m3.e4m3.f32 "
ACC = "{%f1, %f2, %f3, %f4}"

# (line, ptxas 13.0 takes it at sm_90a)
CASES = [
    (MMA + "%acc, %a, %b, %c2;", True),                   # A of four, B of two, C and D of four
    (MMA + "{%acc.x, %acc.y, %acc.z, %acc.w}, %a, %b, %acc;", True),   # D by elements, C whole
    (MMA + "%acc, %b, %b, %c2;", False),                  # A takes four registers: "Argument vector size mismatch"
    (MMA + "{%r1, %r2, %r3, %r4}, %a, %b, %g2;", False),
    ("ldmatrix.sync.aligned.m8n8.x4.shared.b16 %a, [%rd1];", True),
    ("ldmatrix.sync.aligned.m8n8.x2.shared.b16 %a, [%rd1];", False),
    ("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%rd1], %a;", True),
    (WGMMA + ACC + ", %a, %rd2, %p, 1, 1, 1;", True),      # A from a whole register (the register-A form)
    ("st.async.shared::cluster.mbarrier::complete_tx::bytes.b64 [%rd1], %b, [%rd2];", True),   # 64 bits as one
    ("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%rd1], %b, [%rd2];", False),
    ("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%rd1], %m, [%rd2];", True),
    ("st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%rd1], %b, [%rd2];", True),   # as %b.x
    ("mbarrier.arrive.shared::cta.b64 %rd3, [%rd1], %b;", True),
    ("mbarrier.init.shared::cta.b64 [%rd1], %b;", False),
    ("mapa.shared::cluster.u32 %b, %r1, %r2;", False),
    ("getctarank.shared::cluster.u32 %r1, %d2;", False),
    ("multimem.st.relaxed.gpu.global.v2.f32 [%rd1], %g2;", False),
    ("multimem.ld_reduce.relaxed.gpu.global.add.v2.f32 %g2, [%rd1];", False),
    (TMA2 + "[%rd1], [%rd2, {%b.x, %b.y}], [%rd3];", True),
    ("tex.2d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [%rd1, %b];", True),     # a texture's coordinates as a vector register
    (TMA2 + "[%rd1], [%rd2, %a], [%rd3];", False),         # four coordinates for a 2d map
    (MULTICAST + "[%rd1], [%rd2], %r1, [%rd3], %m;", True),   # ctaMask as %m.x
]

# lines ptxas 13.0 crashes on (a segmentation fault) at sm_90a; lint refuses each
CRASHES = [
    MMA + "%acc, %a, %b, %acc;",                           # D whole and read again as C
    MMA + "%acc, {%r1, %r2, %r3, %r4}, {%r1, %r2}, {%acc.x, %acc.y, %acc.z, %acc.w};",
    WGMMA + "%acc, %rd1, %rd2, %p, 1, 1, 0, 0;",           # wgmma's D whole (it reads D too)
    B1 + "%s4, %a, %b, %s5;",                               # .b1 .xor from sm_90 on: ptxas's own code
    FP8 + "%acc, %b, {%r1}, %c2;",                         # .e4m3 on sm_90 to sm_110: ptxas's own code
    TMA2 + "[%rd1], [%rd2, %b], [%rd3];",                  # a tensor map's coordinates as a vector register
    "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%rd1, %b], [%rd2];",
]


def _make(target: str, version: str = "8.8"):
    return lambda lines: kernel(lines, target, version, DECLS)


needs_ptxas = pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas (CUDA toolkit) on PATH")


@needs_ptxas
@pytest.mark.ptxas
def test_recorded_verdicts_are_ptxas_verdicts():
    agree_with_ptxas(CASES, _make("sm_90a"), "sm_90a")


def test_lint_matches_recorded_verdicts():
    assert lint_disagrees_with_recorded(CASES, _make("sm_90a")) == []


@needs_ptxas
@pytest.mark.ptxas
@pytest.mark.parametrize("line", CRASHES)
def test_ptxas_crashes_on_these(line):
    assert ptxas_crashes(_make("sm_90a")([line]), "sm_90a")


@pytest.mark.parametrize("line", CRASHES)
def test_lint_refuses_what_crashes_ptxas(line):
    text = _make("sm_90a")([line])
    errs = lint_errors(text)
    at = first_line(text, [line])
    assert list(errs) == [at], errs
    assert "crash" in errs[at].message, errs[at].message


@needs_ptxas
@pytest.mark.ptxas
@pytest.mark.parametrize("target", ["sm_80", "sm_89", "sm_100a", "sm_120a"])
def test_other_targets(target):
    """Fragments as whole registers where ptxas runs the instruction itself (.b1 .xor below sm_90, .e4m3 on sm_89
    and from sm_120 on), and cp.async.bulk's multicast mask below sm_120 (a ptxas error from sm_120 on)."""
    lines = [MMA + "%acc, %a, %b, %c2;"]
    if target in ("sm_80", "sm_89"):
        lines.append(B1 + "%s4, %a, %b, %s5;")
    if target in ("sm_89", "sm_120a"):
        lines.append(FP8 + "{%f1, %f2, %f3, %f4}, %b, {%r1}, %c2;")
    if target in ("sm_100a", "sm_120a"):
        lines.append(MULTICAST + "[%rd1], [%rd2], %r1, [%rd3], %m;")
    assert lint_disagrees_with_ptxas(lines, _make(target), target) == []


def test_messages_name_the_register_and_the_reason():
    text = _make("sm_90a")([MMA + "%acc, %b, %b, %c2;", "mapa.shared::cluster.u32 %b, %r1, %r2;",
                            "multimem.st.relaxed.gpu.global.v2.f32 [%rd1], %g2;", B1 + "%s4, %a, %b, %s5;",
                            MMA + "%acc, %a, %b, %acc;"])
    errs = lint_errors(text)
    msgs = [errs[i].message for i in sorted(errs)]
    assert len(msgs) == 5, msgs
    assert "operand 2 (a) is a .v2 .b32 vector register; it takes a vector of 4" in msgs[0]
    assert "is a .v2 .b32 vector register; it takes one register" in msgs[1]
    assert "is a .v2 .f32 vector register; ptxas 13.0 takes none here" in msgs[2]
    assert "below sm_90, not for sm_90a, where it expands the instruction" in msgs[3]
    assert "D is the whole vector register %acc, which operand 4 reads too" in msgs[4]
    errs = lint_errors(_make("sm_90a")(SEQUENCES[0][0]))      # each of the two mma, naming the other's line
    assert [(i, e.message) for i, e in sorted(errs.items())] == [
        (i, f"mma: D is the whole vector register %acc, and line {j} writes it whole too (an mma's D); ptxas 13.0 "
            "crashes (a segmentation fault) generating code for this function") for i, j in ((19, 20), (20, 19))]


# kernels ptxas 13.0 crashes on (a segmentation fault) at sm_90a because an mma writes a whole vector register that
# another mma or a st names whole, and kernels of the same registers it takes: (lines, crashes)
SEQUENCES = [
    ([MMA + "%acc, %a, %b, %c2;", MMA + "%acc, %a, %b, %c2;"], True),            # two mma write %acc
    ([MMA + "%acc, %a, %b, %c2;", MMA + "%c2, %a, %b, %acc;"], True),            # ping-pong
    ([MMA + "%acc, %a, %b, %c2;", MMA + "%c2, %a, %b, {%f1, %f2, %f3, %f4};"], True),   # %c2 read, then written
    ([MMA + "%acc, %a, %b, %c2;", MMA + "{%f1, %f2, %f3, %f4}, %a, %b, %acc;"], False),   # %acc written, then read
    ([MMA + "%acc, %a, %b, %c2;", "st.global.v4.f32 [%rd1], %acc;"], True),      # stored whole after
    (["st.global.v4.f32 [%rd1], %acc;", MMA + "%acc, %a, %b, %c2;"], True),      # stored whole before
    ([MMA + "%acc, %a, %b, %c2;", "mov.b32 %r1, %acc.x;"], False),               # read by element
    ([MMA + "%acc, %a, %b, %c2;", "mov.v4.f32 %c2, %acc;"], False),              # moved whole
    (["ld.global.v4.f32 %acc, [%rd1];", MMA + "%acc, %a, %b, %c2;", "mov.b32 %r1, %acc.y;"], False),
    (["ldmatrix.sync.aligned.m8n8.x4.shared.b16 %a, [%rd1];", MMA + "%acc, %a, %b, %c2;",
      "st.global.v4.b32 [%rd1], %a;"], False),                                    # A whole in mma and st
]


@needs_ptxas
@pytest.mark.ptxas
@pytest.mark.parametrize("lines,crashes", SEQUENCES)
def test_ptxas_crashes_on_these_sequences(lines, crashes):
    text = _make("sm_90a")(lines)
    assert ptxas_crashes(text, "sm_90a") == crashes
    if not crashes:
        assert ptxas_verdict(text, "sm_90a") != "error"


@pytest.mark.parametrize("lines,crashes", SEQUENCES)
def test_lint_refuses_the_sequences_that_crash(lines, crashes):
    errs = lint_errors(_make("sm_90a")(lines))
    assert bool(errs) == crashes, errs
    assert all("crashes" in e.message for e in errs.values())
