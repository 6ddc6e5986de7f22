"""The builder's mma_sp and mma_sp_fragment, and lint's messages on mma.sp: the PTX each call writes, the typed
errors at the caller's line, and what lint says where (pure unit tests, no toolchain; tests/test_lint_mma_sp.py
runs the same rules through ptxas)."""
import functools

import pytest

import ptxgen as pg
from ptxgen import LegalityError, BuildError, b16, b32, f16x2, f32, pred, s32
from ptxgen import legality as LG
from ptxgen import lint as L
from ptxgen.ops.mma import mma_sp_opcode

from _build_checks import here, raises_at, texts

raises = functools.partial(raises_at, __file__)


def kernel(target="sm_90a", version="8.5"):
    m = pg.Module(target, version=version)
    return m, m.entry("k")


def operands(k, opcode):
    """Fresh registers for d, a, b and c of a legal mma.sp spelling, as the legality table types them."""
    return [k.regs(t, n) for n, t in LG.fragment_regs(opcode).values()]


F16 = "mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"


# ------------------------------------------------------------------------------------------------ the PTX
def test_mma_sp_text_and_fragments():
    m, k = kernel()
    a = k.mma_sp_fragment("a", "m16n8k16", name="fa")
    b = k.mma_sp_fragment("b", "m16n8k16", name="fb")
    c = k.mma_sp_fragment("c", "m16n8k16", name="acc")
    e = k.reg(b32, name="meta")
    d = k.mma_sp("m16n8k16", None, a, b, c, e, 3)
    assert (len(a), a[0].type, len(b), len(c), c[0].type) == (2, f16x2, 2, 4, f32)
    assert isinstance(d, pg.RegArray) and len(d) == 4 and d[0].type is f32
    assert texts(k)[-1] == (f"{F16} {{{', '.join(r.name for r in d)}}}, {{%fa0, %fa1}}, {{%fb0, %fb1}}, "
                            "{%acc0, %acc1, %acc2, %acc3}, %meta, 3;")
    # D may be given, and be C itself
    k.mma_sp("m16n8k16", c, a, b, c, e, 0)
    assert texts(k)[-1].startswith(f"{F16} {{%acc0, %acc1, %acc2, %acc3}}, ")


@pytest.mark.parametrize("kw, opcode, target, version", [
    (dict(shape="m16n8k32", atype="s8", btype="u8", satfinite=True, ordered_metadata=False),
     "mma.sp.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.u8.s32", "sm_80", "7.1"),
    (dict(shape="m16n8k128", atype="u4"), "mma.sp::ordered_metadata.sync.aligned.m16n8k128.row.col.s32.u4.u4.s32",
     "sm_80", "8.5"),
    (dict(shape="m16n8k32", atype="f16", ctype="f16"),
     "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f16.f16.f16.f16", "sm_90a", "8.5"),
    (dict(shape="m16n8k8", atype="tf32"), "mma.sp::ordered_metadata.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
     "sm_80", "8.5"),
    (dict(shape="m16n8k64", atype="e4m3", btype="e5m2", ordered_metadata=False),
     "mma.sp.sync.aligned.m16n8k64.row.col.f32.e4m3.e5m2.f32", "sm_89", "8.4"),
    (dict(shape="m16n8k64", atype="e5m2", ctype="f16"),
     "mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.f16.e5m2.e5m2.f16", "sm_120a", "8.7"),
])
def test_mma_sp_forms(kw, opcode, target, version):
    m, k = kernel(target, version)
    shape = kw.pop("shape")
    d, a, b, c = operands(k, opcode)
    out = k.mma_sp(shape, None, a, b, c, k.reg(b32), 0, **kw)
    assert texts(k)[-1].split(" ")[0] == opcode and len(out) == len(d)
    assert mma_sp_opcode(shape, **kw) == opcode
    # plain .sp only with ptxas's advisory, as a note
    assert [(d.code, d.severity) for d in L.lint_ptx(m.emit().text)] == (
        [("PTX-W-ADVISORY", "note")] if opcode.startswith("mma.sp.") else [])


def test_every_legal_spelling_through_the_builder():
    """Each of the grammar's 92 mma.sp spellings, built at its minimum target and version, lints clean
    (plain .sp with ptxas's advisory note)."""
    for f in LG.forms(mnemonic="mma"):
        if "sparsity" not in f.fields or "kind" in f.fields:     # (the .kind forms: tests/test_lint_mma_kind.py)
            continue
        needs, _ = LG.requirement(f.opcode)
        target = "sm_120a" if any("sm_120f" in n.targets for n in needs) else \
            "sm_89" if any("sm_89" in n.targets for n in needs) else "sm_80"
        version = max([n.version for n in needs] + [pg.Target.parse(target).min_ptx])
        m, k = kernel(target, f"{version[0]}.{version[1]}")
        g = {x: f.fields[x][1:] for x in ("atype", "btype", "ctype", "dtype")}
        d, a, b, c = operands(k, f.opcode)
        k.mma_sp(f.fields["shape"][1:], d, a, b, c, k.reg(b32), 0, satfinite=f.has(".satfinite"),
                 ordered_metadata=f.has(".sp::ordered_metadata"), **g)
        assert texts(k)[-1].split(" ")[0] == f.opcode
        want = [("PTX-W-ADVISORY", "note")] if f.has(".sp") else []
        assert [(d.code, d.severity) for d in L.lint_ptx(m.emit().text)] == want, f.opcode


# ---------------------------------------------------------------------------------------------- the errors
def test_mma_sp_spelling_errors():
    m, k = kernel()
    a, b, c, e = k.regs(f16x2, 2), k.regs(f16x2, 2), k.regs(f32, 4), k.reg(b32)
    near = "the nearest legal spelling: "
    err = raises(LegalityError, "PTX-E-SHAPE", "K=8 is not legal for mma.sp with .f16 inputs; K must be 16 or 32",
                 here(), lambda: k.mma_sp("m16n8k8", None, a, b, c, e, 0))
    assert err.notes == (near + F16,)
    raises(LegalityError, "PTX-E-LAYOUT", ".col is not a legal A layout for mma.sp with .f16 inputs at .m16n8k16; the "
           "A layout must be .row", here(), lambda: k.mma_sp("m16n8k16", None, a, b, c, e, 0, alayout="col"))
    raises(LegalityError, "PTX-E-MODIFIER", ".satfinite is not legal for mma.sp with .f16 inputs; only mma.sp with "
           ".s8/.u8/.s4/.u4 inputs takes it", here() + 1,
           lambda: k.mma_sp("m16n8k16", None, a, b, c, e, 0, satfinite=True))
    raises(LegalityError, "PTX-E-TYPE", ".b1 is not a legal A type for mma.sp; the A type must be one of .f16, .bf16, "
           ".tf32, .e4m3, .e5m2, .s8, .u8, .s4, .u4", here() + 1,
           lambda: k.mma_sp("m16n8k128", None, a, b, c, e, 0, atype="b1"))
    raises(LegalityError, "PTX-E-TYPE", "D/C types .f16/.f32 are not legal for mma.sp with .f16 inputs at .m16n8k16; "
           "the D/C types must be .f16/.f16 or .f32/.f32", here() + 1,
           lambda: k.mma_sp("m16n8k16", None, a, b, c, e, 0, dtype="f16"))
    err = raises(LegalityError, "PTX-E-MODIFIER", "mma.sp with .e4m3/.e5m2 inputs and an .f16 accumulator needs "
                 ".sp::ordered_metadata, not .sp", here() + 1,
                 lambda: k.mma_sp("m16n8k64", None, a, b, c, e, 0, atype="e4m3", ctype="f16", ordered_metadata=False))
    assert err.notes == (near + "mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.f16.e4m3.e4m3.f16",)


def test_mma_sp_operand_errors():
    m, k = kernel()
    a, b, c, e = k.regs(f16x2, 2), k.regs(f16x2, 2), k.regs(f32, 4), k.reg(b32)
    a4, c2 = k.regs(f16x2, 4), k.regs(f16x2, 2)
    raises(LegalityError, "PTX-E-OPERANDS", "mma.sp with .f16 inputs: operand 2 (a) takes 2 registers, 4 given",
           here(), lambda: k.mma_sp("m16n8k16", None, a4, b, c, e, 0))
    err = raises(LegalityError, "PTX-E-OPERANDS", "mma.sp with .f16 inputs: operand 6 (f) must be 0 or 1, not 2",
                 here(), lambda: k.mma_sp("m16n8k32", None, a4, a4, c2, e, 2, ctype="f16"))
    assert err.notes == ("write 1",)
    raises(LegalityError, "PTX-E-OPERANDS", "mma.sp with .f16 inputs: operand 6 (f) must be 0 to 3, not 4", here() + 1,
           lambda: k.mma_sp("m16n8k16", None, a, b, c, e, 4))
    raises(LegalityError, "PTX-E-OPERANDS", "mma.sp with .f16 inputs: operand 5 (e) is an integer literal; the "
           "sparsity metadata is a 32-bit register (or its bits as a 0f literal)", here() + 1,
           lambda: k.mma_sp("m16n8k16", None, a, b, c, 0x4444, 0))
    raises(LegalityError, "PTX-E-TYPE", "mma.sp with .f16 inputs: operand 5 (e) is a .b16 register; "
           ".b32/.u32/.s32/.f32/.f16x2/.pred expected", here() + 1,
           lambda: k.mma_sp("m16n8k16", None, a, b, c, k.reg(b16), 0))
    raises(BuildError, "PTX-E-OPERANDS", "mma.sp sparsity selector f must be an int constant, not Reg", here() + 1,
           lambda: k.mma_sp("m16n8k16", None, a, b, c, e, e))
    raises(LegalityError, "PTX-E-TYPE", "mma.sp with .f16 inputs: operand 2 (a) holds .f32 registers; .f16x2/.b32 "
           "expected", here(), lambda: k.mma_sp("m16n8k16", None, k.regs(f32, 2), b, c, e, 0))
    raises(BuildError, "PTX-E-OPERANDS", "A: expected registers, got 1", here() + 1,
           lambda: k.mma_sp("m16n8k16", None, [1, 2], b, c, e, 0))
    # the selector of .e4m3/.e5m2 inputs is 0 (ptxas reads its low 32 bits)
    m, k = kernel("sm_89", "8.4")
    a8, c8 = k.regs(b32, 4), k.regs(f32, 4)
    err = raises(LegalityError, "PTX-E-OPERANDS", "mma.sp with .e4m3/.e5m2 inputs: operand 6 (f) must be 0, not "
                 "4294967297", here() + 1,
                 lambda: k.mma_sp("m16n8k64", None, a8, a8, c8, k.reg(b32), 4294967297, atype="e4m3",
                                  ordered_metadata=False))
    assert err.notes == ("write 0 (ptxas checks the literal's low 32 bits, here 1)",)
    k.mma_sp("m16n8k64", None, a8, a8, c8, k.reg(b32), 1 << 32, atype="e4m3", ordered_metadata=False)


def test_mma_sp_target_and_version_errors():
    m, k = kernel("sm_90a", "8.0")
    err = raises(LegalityError, "PTX-E-VERSION", "mma.sp with .f16 inputs with .sp::ordered_metadata needs PTX ISA 8.5 "
                 "(module .version is 8.0)", here(), lambda: k.mma_sp_fragment("a", "m16n8k16"))
    assert err.notes == ("write .version 8.5 or later (with the builder: Module(..., version='8.5'))",
                         "or pass ordered_metadata=False for plain .sp (PTX ISA 7.1), which ptxas 13.0 advises against")
    assert len(k.mma_sp_fragment("a", "m16n8k16", ordered_metadata=False)) == 2
    m, k = kernel("sm_80", "7.0")
    raises(LegalityError, "PTX-E-VERSION", "mma.sp with .f16 inputs needs PTX ISA 7.1 (module .version is 7.0)",
           here(), lambda: k.mma_sp_fragment("a", "m16n8k16", ordered_metadata=False))
    m, k = kernel("sm_75", "8.5")
    raises(LegalityError, "PTX-E-TARGET", "mma.sp with .f16 inputs needs target sm_80 or later (module target is "
           "sm_75)", here(), lambda: k.mma_sp_fragment("a", "m16n8k16"))
    m, k = kernel("sm_86", "8.5")
    raises(LegalityError, "PTX-E-TARGET", "mma.sp with .e4m3/.e5m2 inputs needs target sm_89 or later (module target "
           "is sm_86)", here(), lambda: k.mma_sp_fragment("a", "m16n8k64", atype="e4m3"))
    m, k = kernel("sm_100a", "8.8")
    raises(LegalityError, "PTX-E-TARGET", "mma.sp with .e4m3/.e5m2 inputs and an .f16 accumulator needs target "
           "sm_120a/sm_120f (or a later a/f target of the same family) (module target is sm_100a)", here() + 1,
           lambda: k.mma_sp_fragment("d", "m16n8k64", atype="e4m3", ctype="f16"))


def test_mma_sp_metadata_per_target():
    """e as a .pred register: taken where ptxas has the instruction, refused where ptxas 13.0 compiles the form
    through its own function (plain .sp of .f16 from sm_100, .s4/.u4 from sm_90); .e4m3/.e5m2 from sm_90 to the
    sm_110 family take integer and .f16x2 registers only."""
    for target, ok in (("sm_90a", True), ("sm_100a", False)):
        m, k = kernel(target, "8.8")
        a, b, c = k.regs(f16x2, 2), k.regs(f16x2, 2), k.regs(f32, 4)
        k.mma_sp("m16n8k16", None, a, b, c, k.reg(pred), 0)     # .sp::ordered_metadata: everywhere
        if ok:
            k.mma_sp("m16n8k16", None, a, b, c, k.reg(pred), 0, ordered_metadata=False)
        else:
            raises(LegalityError, "PTX-E-TYPE", "mma.sp with .f16 inputs: operand 5 (e) is a .pred register; for "
                   "sm_100a ptxas 13.0 compiles this form through a function of its own, whose e is a 32-bit "
                   "parameter (\"Type of argument does not match formal parameter 'e'\"); write a .b32 register",
                   here(), lambda: k.mma_sp("m16n8k16", None, a, b, c, k.reg(pred), 0, ordered_metadata=False))
    m, k = kernel("sm_90a", "8.5")
    i4 = k.regs(b32, 4), k.regs(b32, 4), k.regs(s32, 4)
    with pytest.raises(LegalityError, match="operand 5 \\(e\\) is a .pred register; for sm_90a"):
        k.mma_sp("m16n8k128", None, *i4, k.reg(pred), 0, atype="s4")
    fp8 = k.regs(b32, 4), k.regs(b32, 4), k.regs(f32, 4)
    raises(LegalityError, "PTX-E-TYPE", "mma.sp with .e4m3/.e5m2 inputs: operand 5 (e) is a .f32 register; with "
           ".e4m3/.e5m2 inputs ptxas 13.0 takes only a .b32, .u32, .s32 or .f16x2 register here for sm_90a "
           "(\"Arguments mismatch for instruction 'mov'\", its own code)", here() + 1,
           lambda: k.mma_sp("m16n8k64", None, *fp8, k.reg(f32), 0, atype="e4m3"))
    m, k = kernel("sm_89", "8.5")
    k.mma_sp("m16n8k64", None, k.regs(b32, 4), k.regs(b32, 4), k.regs(f32, 4), k.reg(f32), 0, atype="e4m3")


# ---------------------------------------------------------------------------------------------- lint
def _lint(lines, target="sm_90a", version="8.5"):
    src = (f".version {version}\n.target {target}\n.address_size 64\n.visible .entry k()\n{{\n"
           ".reg .b32 %r<40>;\n.reg .f32 %f<40>;\n.reg .pred %p<4>;\n" + "\n".join(lines) + "\nret;\n}\n")
    return src, [d for d in L.lint_ptx(src, "t.ptx") if d.severity == "error"]


FRAGS = "{%f0, %f1, %f2, %f3}, {%r0, %r1}, {%r2, %r3}, {%f4, %f5, %f6, %f7}"


@pytest.mark.parametrize("line, code, message, at, notes", [
    (f"mma.sp.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {FRAGS}, %r8, 0;", "PTX-E-SHAPE",
     "K=8 is not legal for mma.sp with .f16 inputs; K must be 16 or 32", "mma",
     ("the nearest legal spelling: mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",)),
    (f"mma.sp.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32 {FRAGS}, %r8, 0;", "PTX-E-OPERANDS",
     "mma.sp with .bf16 inputs: operand 2 (a) takes 4 registers, 2 given", "{%r0", ()),
    (f"mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {FRAGS}, %r8, 1+3;", "PTX-E-OPERANDS",
     "mma.sp with .f16 inputs: operand 6 (f) must be 0 to 3, not 4", "1+3", ("write 3",)),
    (f"mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {FRAGS}, 0x4444, 0;", "PTX-E-OPERANDS",
     "mma.sp with .f16 inputs: operand 5 (e) is an integer literal; the sparsity metadata is a 32-bit register (or "
     "its bits as a 0f literal)", "0x4444", ()),
    (f"mma.sp.sync.m16n8k16.row.col.f32.f16.f16.f32 {FRAGS}, %r8, 0;", "PTX-E-MODIFIER",
     "mma.sp with .f16 inputs needs .aligned after .sync", "mma", ()),
    (f"mma.sp.sync.aligned.m16n8k16.col.row.f32.f16.f16.f32 {FRAGS}, %r8, 0;", "PTX-E-LAYOUT",
     ".col is not a legal A layout and .row is not a legal B layout for mma.sp with .f16 inputs at .m16n8k16; the A "
     "layout must be .row and the B layout must be .col", "mma",
     ("the nearest legal spelling: mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",)),
    (f"mma.sync.aligned.m16n8k16.row.col.sp.f16.f32.f16.f32 {FRAGS}, %r8, 0;", "PTX-E-TYPE",
     ".f32 is not a legal A type for mma.sp; the A type must be one of .f16, .bf16, .tf32, .e4m3, .e5m2, .s8, .u8, "
     ".s4, .u4", "mma", None),
])
def test_lint_messages(line, code, message, at, notes):
    src, diags = _lint(["  " + line])
    d = diags[0]                     # (the first of the line's errors)
    row = src.split("\n").index("  " + line) + 1
    assert (d.code, d.message, d.loc.line, d.loc.col) == (code, message, row, line.index(at) + 3), str(d)
    assert notes is None or d.notes == notes, str(d)


def test_lint_takes_the_orders_ptxas_takes():
    ok = [f"mma.sync.aligned.sp.m16n8k16.row.col.f32.f16.f16.f32 {FRAGS}, %r8, 0;",
          f"mma.row.col.sp::ordered_metadata.sync.aligned.m16n8k16.f32.f16.f16.f32 {FRAGS}, %p1, 3;",
          f"mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {FRAGS}, {{%r8, %r9}}, 18446744073709551616;"]
    assert _lint(ok)[1] == []
    assert LG.canonical("mma.sync.aligned.sp.m16n8k16.row.col.f32.f16.f16.f32") == \
        "mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"


def test_covers_and_fragments():
    assert LG.covers(F16) and LG.covers("mma.sp.aligned.m16n8k16.row.col.f32.f16.f16.f32")
    assert LG.covers("mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.kind::f8f6f4.f32.e3m2.e2m1.f32")
    assert LG.covers("wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16")
    assert LG.fragment_regs("mma.sp.sync.aligned.m16n8k128.row.col.s32.s4.s4.s32") == {
        "d": (4, s32), "a": (4, b32), "b": (4, b32), "c": (4, s32)}
    assert LG.fragment_regs("mma.sp.sync.aligned.m16n8k32.row.col.f16.f16.f16.f16") == {
        "d": (2, f16x2), "a": (4, f16x2), "b": (4, f16x2), "c": (2, f16x2)}
    sel = {op: LG.sparsity_selectors(LG.parse(op)) for op in (
        F16, "mma.sp.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32",
        "mma.sp.sync.aligned.m16n8k32.row.col.f16.f16.f16.f16",
        "mma.sp.sync.aligned.m16n8k16.row.col.f32.tf32.tf32.f32", "mma.sp.sync.aligned.m16n8k64.row.col.s32.s8.s8.s32")}
    assert [list(v) for v in sel.values()] == [[0, 1, 2, 3], [0, 1, 2, 3], [0, 1], [0, 1], [0]]
