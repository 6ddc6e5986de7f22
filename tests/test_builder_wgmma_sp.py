"""The builder's wgmma_mma_async_sp and the sparse wgmma_fragment: the PTX each call writes, the typed errors at the
caller's line, a kernel with every input family assembled by ptxas, and the executor's refusal of the sparse form
(tests/test_lint_wgmma_sp.py runs the same rules through ptxas line by line)."""
import functools

import pytest

import ptxgen as pg
from ptxgen import BuildError, LegalityError, b16, b32, f16x2, f32, pred, s32, u64
from ptxgen import legality as LG
from ptxgen import lint as L
from ptxgen.errors import UnsupportedInstructionError
from ptxgen.executor import run_kernel
from ptxgen.ops.wgmma import wgmma_opcode

from _build_checks import here, raises_at, texts

raises = functools.partial(raises_at, __file__)
SP = "wgmma.mma_async.sp.sync.aligned"


def kernel(target="sm_90a", version="8.5"):
    m = pg.Module(target, version=version)
    return m, m.entry("k")


# ------------------------------------------------------------------------------------------------ the PTX
def test_text_fragments_and_defaults():
    m, k = kernel()
    desc, meta = k.reg(u64, name="desc"), k.reg(b32, name="meta")
    d = k.wgmma_fragment("d", "m64n64k32", atype="bf16", sparse=True, name="acc")
    a = k.wgmma_fragment("a", "m64n64k32", atype="f16", sparse=True, name="fa")
    assert (len(d), d[0].type, len(a), a[0].type) == (32, f32, 4, f16x2)
    k.wgmma_fence()
    k.wgmma_mma_async_sp("m64n64k32", d, desc, desc, meta, 1, atype="bf16", trans_b=1)
    acc = "{" + ", ".join(f"%acc{i}" for i in range(32)) + "}"
    assert texts(k)[-1] == f"{SP}.m64n64k32.f32.bf16.bf16 {acc}, %desc, %desc, %meta, 1, 1, 1, 1, 0, 1;"
    # register A: no imm-trans-a; scale-d a predicate
    p = k.reg(pred, name="keep")
    k.wgmma_mma_async_sp((64, 64, 32), d, a, desc, meta, atype="f16", scale_d=p, imm_scale_b=-1)
    assert texts(k)[-1] == f"{SP}.m64n64k32.f32.f16.f16 {acc}, {{%fa0, %fa1, %fa2, %fa3}}, %desc, %meta, 0, %keep, " \
                           "1, -1, 0;"
    # .tf32 and .e4m3/.e5m2: the scales only; .s8/.u8: none; d=None allocates D
    out = k.wgmma_mma_async_sp("m64n8k16", None, desc, desc, meta, 1, atype="tf32", scale_d=0)
    assert texts(k)[-1].endswith(", %desc, %desc, %meta, 1, 0, 1, 1;") and len(out) == 4 and out[0].type is f32
    out = k.wgmma_mma_async_sp("m64n16k64", None, desc, desc, meta, dtype="f16", atype="e5m2", btype="e4m3")
    assert texts(k)[-1].startswith(f"{SP}.m64n16k64.f16.e5m2.e4m3 ") and len(out) == 4 and out[0].type is f16x2
    out = k.wgmma_mma_async_sp("m64n24k64", None, desc, desc, meta, dtype="s32", atype="u8", btype="s8",
                               satfinite=True)
    assert texts(k)[-1].startswith(f"{SP}.m64n24k64.satfinite.s32.u8.s8 ") and texts(k)[-1].endswith(
        ", %desc, %desc, %meta, 0, 1;") and len(out) == 12 and out[0].type is s32
    assert wgmma_opcode("m64n24k64", dtype="s32", atype="u8", btype="s8", satfinite=True, sparse=True) == \
        f"{SP}.m64n24k64.satfinite.s32.u8.s8"
    assert [d for d in L.lint_ptx(m.emit().text) if d.severity == "error"] == []


def test_every_legal_spelling_through_the_builder():
    """Each sparse spelling with .aligned (the builder writes it), A from a descriptor and from registers, lints
    without an error at its minimum PTX ISA version."""
    count = 0
    for f in LG.forms():
        if not f.rule.startswith("wgmma_sp_") or not f.has(".aligned"):
            continue
        needs, _ = LG.requirement(f.opcode)
        m, k = kernel(version="%d.%d" % max(n.version for n in needs))
        g = {x: f.fields[x][1:] for x in ("dtype", "atype", "btype")}
        desc, meta = k.reg(u64), k.reg(b32)
        shape = f.fields["shape"][1:]
        for a in (desc, k.wgmma_fragment("a", shape, sparse=True, satfinite=f.has(".satfinite"), **g)):
            k.wgmma_mma_async_sp(shape, None, a, desc, meta, satfinite=f.has(".satfinite"), **g)
            assert texts(k)[-1].split(" ")[0] == f.opcode
            count += 1
        assert [d for d in L.lint_ptx(m.emit().text) if d.severity == "error"] == [], f.opcode
    assert count == 2 * 528


@pytest.mark.ptxas
def test_a_kernel_of_every_family_assembles():
    from ptxgen.ptxas import assemble
    m, k = kernel("sm_90a", "8.4")
    desc, meta = k.reg(u64), k.reg(b32)
    k.wgmma_fence()
    for shape, kw in (("m64n256k32", dict(dtype="f16", atype="f16")), ("m64n8k32", dict(atype="bf16")),
                      ("m64n136k16", dict(atype="tf32")), ("m64n40k64", dict(dtype="f16", atype="e4m3", btype="e5m2")),
                      ("m64n48k64", dict(dtype="s32", atype="u8", btype="s8", satfinite=True))):
        a = k.wgmma_fragment("a", shape, sparse=True, **kw)
        d = k.wgmma_mma_async_sp(shape, None, desc, desc, meta, 0, **kw)
        k.wgmma_mma_async_sp(shape, d, a, desc, meta, 0, **kw)
    k.wgmma_commit_group()
    k.wgmma_wait_group(0)
    k.ret()
    text = m.emit().text
    assert text.count("wgmma.mma_async.sp.") == 10
    res = assemble(text, "sm_90a", cache=False)
    assert not res.warnings, [str(w) for w in res.warnings]
    assert [d for d in L.lint_ptx(text) if d.severity == "error"] == []


# ---------------------------------------------------------------------------------------------- the errors
def test_spelling_errors():
    m, k = kernel()
    desc, meta = k.reg(u64), k.reg(b32)
    err = raises(LegalityError, "PTX-E-SHAPE", "K=16 is not legal for .bf16 wgmma.mma_async.sp; K must be 32",
                 here(), lambda: k.wgmma_mma_async_sp("m64n64k16", None, desc, desc, meta, atype="bf16"))
    assert err.notes == ("or: .sp is not allowed in .bf16 wgmma", f"write {SP}.m64n64k32.f32.bf16.bf16")
    raises(LegalityError, "PTX-E-SHAPE", "N=40 is not legal for .s8/.u8 wgmma.mma_async.sp; N must be a multiple of 8 "
           "from 8 to 32 or a multiple of 16 from 48 to 256", here() + 1,
           lambda: k.wgmma_mma_async_sp("m64n40k64", None, desc, desc, meta, dtype="s32", atype="s8"))
    raises(LegalityError, "PTX-E-TYPE", ".f16 is not a legal D type for .bf16 wgmma.mma_async.sp; the D type must be "
           ".f32", here() + 1,
           lambda: k.wgmma_mma_async_sp("m64n64k32", None, desc, desc, meta, dtype="f16", atype="bf16"))
    raises(LegalityError, "PTX-E-MODIFIER", ".satfinite is not allowed in .tf32 wgmma.mma_async.sp", here() + 1,
           lambda: k.wgmma_mma_async_sp("m64n64k16", None, desc, desc, meta, atype="tf32", satfinite=True))
    err = raises(LegalityError, "PTX-E-MODIFIER", ".sp is not allowed in .b1 wgmma", here() + 1,
                 lambda: k.wgmma_mma_async_sp("m64n64k256", None, desc, desc, meta, dtype="s32", atype="b1"))
    assert err.notes == ("write wgmma.mma_async.sync.aligned.m64n64k256.s32.b1.b1.and.popc",)


def test_operand_errors():
    m, k = kernel()
    desc, meta = k.reg(u64), k.reg(b32)
    raises(LegalityError, "PTX-E-OPERANDS", ".f16 wgmma.mma_async.sp: operand 5 (sp-sel) must be 0 or 1, not 2",
           here(), lambda: k.wgmma_mma_async_sp("m64n64k32", None, desc, desc, meta, 2))
    err = raises(LegalityError, "PTX-E-OPERANDS", ".e4m3/.e5m2 wgmma.mma_async.sp: operand 5 (sp-sel) must be 0, not "
                 "4294967297", here() + 1,
                 lambda: k.wgmma_mma_async_sp("m64n64k64", None, desc, desc, meta, 4294967297, atype="e4m3"))
    assert err.notes == ("write 0 (ptxas checks the literal's low 32 bits, here 1)",)
    k.wgmma_mma_async_sp("m64n64k64", None, desc, desc, meta, 1 << 32, atype="e4m3")     # its low 32 bits are 0
    raises(LegalityError, "PTX-E-OPERANDS", ".f16 wgmma.mma_async.sp: operand 4 (sp-meta) is an integer literal; the "
           "sparsity metadata is a 32-bit register (or its bits as a 0f literal)", here() + 1,
           lambda: k.wgmma_mma_async_sp("m64n64k32", None, desc, desc, 0x4444))
    raises(LegalityError, "PTX-E-TYPE", ".f16 wgmma.mma_async.sp: operand 4 (sp-meta) is a .b16 register; "
           ".b32/.u32/.s32/.f32/.f16x2/.pred expected", here() + 1,
           lambda: k.wgmma_mma_async_sp("m64n64k32", None, desc, desc, k.reg(b16)))
    raises(BuildError, "PTX-E-OPERANDS", "wgmma.mma_async.sp sparsity selector sp-sel must be an int constant, not Reg",
           here(), lambda: k.wgmma_mma_async_sp("m64n64k32", None, desc, desc, meta, meta))
    raises(LegalityError, "PTX-E-OPERANDS", ".tf32 wgmma.mma_async.sp (A in shared memory (a descriptor)) takes no "
           "imm-trans-a operand; its operands are d, a-desc, b-desc, sp-meta, sp-sel, scale-d, imm-scale-a, "
           "imm-scale-b", here() + 1,
           lambda: k.wgmma_mma_async_sp("m64n64k16", None, desc, desc, meta, atype="tf32", trans_a=1))
    raises(LegalityError, "PTX-E-OPERANDS", ".s8/.u8 wgmma.mma_async.sp (A in registers) takes no imm-scale-a "
           "operand; its operands are d, a, b-desc, sp-meta, sp-sel, scale-d", here() + 1,
           lambda: k.wgmma_mma_async_sp("m64n64k64", None, k.regs(b32, 4), desc, meta, dtype="s32", atype="s8",
                                        imm_scale_a=-1))
    raises(LegalityError, "PTX-E-OPERANDS", ".f16 wgmma.mma_async.sp: operand 2 (a) takes 4 registers, 8 given",
           here(), lambda: k.wgmma_mma_async_sp("m64n64k32", None, k.regs(f16x2, 8), desc, meta))
    raises(LegalityError, "PTX-E-TYPE", ".bf16 wgmma.mma_async.sp: operand 1 (d) holds .s32 registers; .f32/.b32 "
           "expected", here(), lambda: k.wgmma_mma_async_sp("m64n8k32", k.regs(s32, 4), desc, desc, meta,
                                                              atype="bf16"))
    raises(BuildError, "PTX-E-OPERANDS", "wgmma.mma_async.sp metadata sp-meta: expected a register or an int, got "
           "str", here(), lambda: k.wgmma_mma_async_sp("m64n64k32", None, desc, desc, "meta"))


def test_target_and_version_errors():
    m, k = kernel("sm_90a", "8.1")
    desc, meta = k.reg(u64), k.reg(b32)
    err = raises(LegalityError, "PTX-E-VERSION", ".f16 wgmma.mma_async.sp needs PTX ISA 8.2 (module .version is 8.1)",
                 here(), lambda: k.wgmma_mma_async_sp("m64n64k32", None, desc, desc, meta))
    assert err.notes == ("write .version 8.2 or later (with the builder: Module(..., version='8.2'))",)
    raises(LegalityError, "PTX-E-VERSION", ".f16 wgmma.mma_async.sp needs PTX ISA 8.2 (module .version is 8.1)",
           here(), lambda: k.wgmma_fragment("d", "m64n64k32", sparse=True))
    m, k = kernel("sm_90a", "8.3")
    raises(LegalityError, "PTX-E-VERSION", ".s8/.u8 wgmma.mma_async.sp with mixed signedness needs PTX ISA 8.4 "
           "(module .version is 8.3)", here() + 1,
           lambda: k.wgmma_mma_async_sp("m64n64k64", None, desc, desc, meta, dtype="s32", atype="s8", btype="u8"))
    k.wgmma_mma_async_sp("m64n64k64", None, k.reg(u64), k.reg(u64), k.reg(b32), dtype="s32", atype="u8")
    for target, version in (("sm_90", "8.5"), ("sm_100a", "8.8")):
        m, k = kernel(target, version)
        raises(LegalityError, "PTX-E-TARGET", f".bf16 wgmma.mma_async.sp needs target sm_90a (module target is "
               f"{target})", here() + 1,
               lambda: k.wgmma_mma_async_sp("m64n64k32", None, k.reg(u64), k.reg(u64), k.reg(b32), atype="bf16"))


# ---------------------------------------------------------------------------------------------- the executor
def test_the_executor_refuses_the_sparse_form():
    m, k = kernel()
    k.wgmma_fence()
    k.wgmma_mma_async_sp("m64n8k32", None, k.reg(u64), k.reg(u64), k.reg(b32), atype="bf16", scale_d=0)
    k.wgmma_commit_group()
    k.wgmma_wait_group(0)
    k.ret()
    with pytest.raises(UnsupportedInstructionError, match=r"the sparse form \(wgmma.mma_async.sp"):
        run_kernel(m.emit().text, "k", grid=(1,), block=(128,), args=[])
