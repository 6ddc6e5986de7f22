"""ptxgen.legality and the tensor-core/async builder methods, without a toolchain."""
from __future__ import annotations

import inspect
import re
import time

import pytest

import ptxgen as pg
from ptxgen import legality as L
from ptxgen.legality import OperandInfo as Op
from ptxgen.types import b32, b64, bf16x2, f16x2, f32, f64, pred, s32, u32, u64

WG = "wgmma.mma_async.sync.aligned"


def codes(diags):
    return [d.code for d in diags]


def only(diags):
    assert len(diags) == 1, diags
    return diags[0]


# ------------------------------------------------------------------------------------ the grammar

def test_every_form_rule_has_a_table_entry_and_spellings():
    rules = {f.rule for f in L.forms()}
    assert rules == set(L.FORMS)


def test_wgmma_n_sets_per_dtype():
    def ns(rule):
        return sorted({int(f.fields["shape"].split("n")[1].split("k")[0]) for f in L.forms(rule)})

    every8 = list(range(8, 257, 8))
    for rule in ("wgmma_f16", "wgmma_bf16", "wgmma_tf32", "wgmma_fp8", "wgmma_sp_f16", "wgmma_sp_bf16",
                 "wgmma_sp_tf32", "wgmma_sp_fp8"):
        assert ns(rule) == every8, rule
    int_ns = [8, 16, 24] + list(range(32, 257, 16))
    for rule in ("wgmma_int", "wgmma_b1", "wgmma_int_mixed", "wgmma_sp_int", "wgmma_sp_int_mixed"):
        assert ns(rule) == int_ns, rule


def test_wgmma_k_per_dtype_and_no_f64():
    ks, sparse = {}, {}
    for f in L.forms(mnemonic="wgmma"):
        if "shape" in f.fields:
            (sparse if f.has(".sp") else ks).setdefault(f.fields["atype"], set()).add(f.fields["shape"].split("k")[1])
    assert ks == {".f16": {"16"}, ".bf16": {"16"}, ".tf32": {"8"}, ".e4m3": {"32"}, ".e5m2": {"32"},
                  ".s8": {"32"}, ".u8": {"32"}, ".b1": {"256"}}
    # wgmma.mma_async.sp: twice the K, and no .b1 form (tests/test_lint_wgmma_sp.py)
    assert sparse == {".f16": {"32"}, ".bf16": {"32"}, ".tf32": {"16"}, ".e4m3": {"64"}, ".e5m2": {"64"},
                      ".s8": {"64"}, ".u8": {"64"}}
    assert L.check(f"{WG}.m64n64k4.f64.f64.f64")


def test_legal_spellings_parse_with_the_lark_parser_and_illegal_ones_do_not():
    import lark
    for op in ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", f"{WG}.m64n256k32.f16.e5m2.e4m3",
               "cp.async.bulk.tensor.5d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes.multicast::cluster",
               "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64"):
        assert L.parse(op) is not None
        tree = L.parse_tree(op)
        assert tree.children[0].data == L.parse(op).rule
    with pytest.raises(lark.exceptions.UnexpectedInput):
        L.parse_tree(f"{WG}.m64n12k16.f32.bf16.bf16")


def test_no_spelling_belongs_to_two_forms():
    seen = {}
    for f in L.forms():
        assert f.opcode not in seen
        seen[f.opcode] = f.rule


# ------------------------------------------------------------------------------------ messages

def test_wgmma_bad_n_says_what_n_is_legal():
    d = only(L.check(f"{WG}.m64n12k16.f32.bf16.bf16"))
    assert d.code == "PTX-E-SHAPE"
    assert d.message == "N=12 is not legal for .bf16 wgmma; N must be a multiple of 8 from 8 to 256"


def test_wgmma_integer_n_and_k_messages():
    d = only(L.check(f"{WG}.m64n40k32.s32.s8.s8"))
    assert "N=40" in d.message and "a multiple of 16 from 48 to 256" in d.message
    d = only(L.check(f"{WG}.m64n64k32.f32.bf16.bf16"))
    assert d.message == "K=32 is not legal for .bf16 wgmma; K must be 16"


def test_mma_shape_type_layout_messages():
    d = only(L.check("mma.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32"))
    assert (d.code, d.message) == ("PTX-E-SHAPE", "K=32 is not legal for mma.sync with .bf16 inputs; K must be 8 or 16")
    d = only(L.check("mma.sync.aligned.m16n8k16.row.row.f32.f16.f16.f32"))
    assert d.code == "PTX-E-LAYOUT" and "B layout must be .col" in d.message
    d = only(L.check("mma.sync.aligned.m16n8k16.row.col.f32.bf16.f16.f32"))
    assert d.code == "PTX-E-TYPE" and "the B type must be .bf16" in d.message
    assert any("A type must be .f16" in n for n in d.notes)


# mma.sync spellings whose fields each exist but do not go together: (opcode, the code check() answers or
# None for a legal one, a part of its message). The message names the first field, in the order A/B
# types, shape, D/C types, layouts, .satfinite, bit operation, that no legal spelling with the fields
# before it has, and what is legal there. tests/test_legality_ptxas.py runs each through ptxas.
MS = "mma.sync.aligned"
MMA_COMBOS = [
    (f"{MS}.m16n8k16.row.col.f16.f16.f16.f32", "PTX-E-TYPE",
     "D/C types .f16/.f32 are not legal for mma.sync with .f16 inputs at .m16n8k16; the D/C types must be "
     ".f16/.f16 or .f32/.f32"),
    (f"{MS}.m16n8k8.row.col.f32.f16.f16.f16", "PTX-E-TYPE", "the D/C types must be .f16/.f16 or .f32/.f32"),
    (f"{MS}.m8n8k4.row.col.f16.f16.f16.f32", "PTX-E-TYPE",
     "D/C types .f16/.f32 are not legal for mma.sync .m8n8k4 with .f16 inputs; the D/C types must be .f16/.f16, "
     ".f32/.f16, or .f32/.f32"),
    (f"{MS}.m16n8k16.row.col.f16.bf16.bf16.f16", "PTX-E-TYPE",
     "D/C types .f16/.f16 are not legal for mma.sync with .bf16 inputs at .m16n8k16; the D/C types must be "
     ".f32/.f32"),
    (f"{MS}.m16n8k8.row.col.f16.bf16.bf16.f32", "PTX-E-TYPE", "the D/C types must be .f32/.f32"),
    (f"{MS}.m16n8k8.row.col.f16.tf32.tf32.f16", "PTX-E-TYPE", "with .tf32 inputs at .m16n8k8"),
    (f"{MS}.m16n8k32.row.col.f32.s8.s8.s32", "PTX-E-TYPE",
     "D/C types .f32/.s32 are not legal for mma.sync with .s8/.u8 inputs at .m16n8k32; the D/C types must be "
     ".s32/.s32"),
    (f"{MS}.m16n8k32.row.col.f32.s8.u8.f32", "PTX-E-TYPE", "the D/C types must be .s32/.s32"),
    (f"{MS}.m8n8k32.row.col.f32.s4.s4.f32", "PTX-E-TYPE", "with .s4/.u4 inputs at .m8n8k32"),
    (f"{MS}.m16n8k256.row.col.f32.b1.b1.f32.and.popc", "PTX-E-TYPE", "with .b1 inputs at .m16n8k256"),
    (f"{MS}.m16n8k8.row.col.f32.f64.f64.f64", "PTX-E-TYPE", "the D/C types must be .f64/.f64"),
    (f"{MS}.m16n8k32.row.col.s32.e4m3.e5m2.s32", "PTX-E-TYPE", "the D/C types must be .f16/.f16 or .f32/.f32"),
    (f"{MS}.m16n8k32.row.col.f16.e4m3.e4m3.f32", "PTX-E-TYPE", "D/C types .f16/.f32 are not legal"),
    (f"{MS}.m16n8k16.row.col.satfinite.f32.f16.f16.f32", "PTX-E-MODIFIER",
     ".satfinite is not legal for mma.sync with .f16 inputs; only mma.sync with .s8/.u8/.s4/.u4 inputs takes it"),
    (f"{MS}.m16n8k16.row.col.satfinite.f32.bf16.bf16.f32", "PTX-E-MODIFIER", ".satfinite is not legal"),
    (f"{MS}.m16n8k32.row.col.satfinite.f32.e4m3.e4m3.f32", "PTX-E-MODIFIER", ".satfinite is not legal"),
    (f"{MS}.m8n8k4.row.col.satfinite.f64.f64.f64.f64", "PTX-E-MODIFIER", ".satfinite is not legal"),
    (f"{MS}.m16n8k256.row.col.satfinite.s32.b1.b1.s32.xor.popc", "PTX-E-MODIFIER",
     ".satfinite is not legal for mma.sync with .b1 inputs"),
    (f"{MS}.m16n8k64.row.col.s32.b1.b1.s32.xor.popc", "PTX-E-SHAPE",
     "K=64 is not legal for mma.sync with .b1 inputs; K must be 128 or 256"),
    (f"{MS}.m8n8k32.row.col.s32.b1.b1.s32.and.popc", "PTX-E-SHAPE", "K must be 128 or 256"),
    (f"{MS}.m16n8k128.row.col.s32.s4.s4.s32", "PTX-E-SHAPE", "K=128 is not legal for mma.sync with .s4/.u4 inputs"),
    (f"{MS}.m8n8k32.row.col.s32.s8.s8.s32", "PTX-E-SHAPE", "for mma.sync with .s8/.u8 inputs"),
    (f"{MS}.m16n8k32.row.col.f32.bf16.bf16.f32", "PTX-E-SHAPE",
     "K=32 is not legal for mma.sync with .bf16 inputs; K must be 8 or 16"),
    (f"{MS}.m16n8k16.col.row.f32.f16.f16.f32", "PTX-E-LAYOUT",
     ".col is not a legal A layout and .row is not a legal B layout for mma.sync with .f16 inputs at .m16n8k16; "
     "the A layout must be .row and the B layout must be .col"),
    (f"{MS}.m8n8k4.row.row.f64.f64.f64.f64", "PTX-E-LAYOUT", "the B layout must be .col"),
    (f"{MS}.m16n8k32.col.col.s32.u8.u8.s32", "PTX-E-LAYOUT", "the A layout must be .row"),
    (f"{MS}.m16n8k8.col.col.f32.tf32.tf32.f32", "PTX-E-LAYOUT", "the A layout must be .row"),
    (f"{MS}.m8n8k128.row.col.s32.b1.b1.s32", "PTX-E-MODIFIER",
     "mma.sync with .b1 inputs needs a bit operation, .xor.popc or .and.popc; none is given"),
    (f"{MS}.m16n8k128.row.col.s32.b1.b1.s32.popc", "PTX-E-MODIFIER", "needs a bit operation, .xor.popc or "
                                                                       ".and.popc; not .popc"),
    (f"{MS}.m16n8k32.row.col.s32.s8.s8.s32.xor.popc", "PTX-E-MODIFIER",
     "mma.sync with .s8/.u8 inputs takes no bit operation (.xor.popc); only mma.sync with .b1 inputs takes "
     ".xor.popc or .and.popc"),
    (f"{MS}.m16n8k16.row.col.f32.f16.f16.f32.and.popc", "PTX-E-MODIFIER", "takes no bit operation (.and.popc)"),
    (f"{MS}.m16n8k16.row.col.f32.f16.bf16.f32", "PTX-E-TYPE",
     ".bf16 is not a legal B type for mma.sync with A type .f16; the B type must be .f16"),
    (f"{MS}.m16n8k32.row.col.s32.s8.e4m3.s32", "PTX-E-TYPE", "the B type must be one of .s8, .u8"),
    (f"{MS}.m16n8k8.row.col.f32.f32.f32.f32", "PTX-E-TYPE", ".f32 is not a legal A type for mma.sync"),
    # ptxas 13.0 takes a bit operation on .s4/.u4 inputs (MMA_KNOWN); the PTX ISA gives it to .b1 only
    (f"{MS}.m8n8k32.row.col.s32.s4.u4.s32.xor.popc", "PTX-E-MODIFIER", "takes no bit operation (.xor.popc)"),
    (f"{MS}.m16n8k64.row.col.s32.u4.u4.s32.and.popc", "PTX-E-MODIFIER", "takes no bit operation"),
    # (with .satfinite as well, ptxas refuses it: "Illegal modifier '.satfinite'")
    (f"{MS}.m16n8k64.row.col.satfinite.s32.u4.u4.s32.and.popc", "PTX-E-MODIFIER", "takes no bit operation"),
    # legal neighbours of the above
    (f"{MS}.m8n8k4.col.row.f32.f16.f16.f16", None, ""),
    (f"{MS}.m8n8k4.row.col.f64.f64.f64.f64", None, ""),
    (f"{MS}.m16n8k32.row.col.satfinite.s32.u8.s8.s32", None, ""),
    (f"{MS}.m16n8k256.row.col.s32.b1.b1.s32.and.popc", None, ""),
    (f"{MS}.m16n8k16.row.col.f16.e4m3.e5m2.f16", None, ""),
    (f"{MS}.m16n8k64.row.col.satfinite.s32.s4.u4.s32", None, ""),
]
# spellings lint refuses by the PTX ISA and ptxas 13.0 takes: opcode -> why lint keeps to the ISA
MMA_KNOWN = {
    f"{MS}.m8n8k32.row.col.s32.s4.u4.s32.xor.popc":
        "ptxas 13.0 ignores any .xor/.and/.or/.popc on .s4/.u4 mma.sync (the cubin is byte for byte the one "
        "without it); the PTX ISA gives .xor.popc and .and.popc to .b1 inputs only",
    f"{MS}.m16n8k64.row.col.s32.u4.u4.s32.and.popc": "as above",
}


@pytest.mark.parametrize("opcode, code, part", MMA_COMBOS, ids=[c[0][len(MS) + 1:] for c in MMA_COMBOS])
def test_mma_field_combinations(opcode, code, part):
    ds = L.check(opcode, None, "sm_90a", "9.0")
    if code is None:
        assert ds == [], [str(d) for d in ds]
        return
    d = only(ds)
    assert d.code == code and part in d.message, (d.code, d.message)
    near = [n for n in d.notes if n.startswith("the nearest legal spelling: ")]
    assert len(near) == 1 and L.parse(near[0].split(": ")[1]) is not None, d.notes


def test_missing_and_extra_modifiers():
    d = only(L.check("mma.sync.m16n8k16.row.col.f32.f16.f16.f32"))
    assert "needs .aligned after .sync" in d.message
    d = only(L.check(f"{WG}.m64n64k8.satfinite.f32.tf32.tf32"))
    assert d.message == ".satfinite is not allowed in .tf32 wgmma"
    d = only(L.check("ldmatrix.sync.aligned.m8n8.x3.shared.b16"))
    assert d.code == "PTX-E-SHAPE" and ".x1, .x2, .x4" in d.message


def test_tensor_im2col_needs_three_dimensions():
    d = only(L.check("cp.async.bulk.tensor.2d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"))
    text = d.message + " ".join(d.notes)
    assert ".3d, .4d, .5d" in text and ".tile" in text


def test_unknown_instruction_and_far_spellings():
    assert codes(L.check("foo.bar")) == ["PTX-E-UNKNOWN"]
    d = only(L.check(f"{WG}.m64n64k16.f64.f64.f64"))
    assert ".f64 is not part of any legal wgmma spelling" in d.message


def test_covers():
    assert L.covers("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32")
    assert L.covers("mbarrier.init.shared.b64") and L.covers("barrier.cluster.wait")
    assert L.covers("mma.sp.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32")
    assert L.covers("mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.f32.e4m3.e4m3.f32")
    # (the .kind forms are modelled: tests/test_lint_mma_kind.py)
    kind = "mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.kind::f8f6f4.f32.e3m2.e2m1.f32"
    assert L.covers(kind) and L.parse(kind) is not None
    assert L.covers("wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16")
    assert L.covers("wgmma.mma_async.sync.aligned.sp.m64n8k256.s32.b1.b1.and.popc")   # (an illegal one)
    assert not L.covers("barrier.sync")
    assert L.covers("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32") and L.covers("discard.global.L2")
    assert L.covers("cp.reduce.async.bulk.tensor.1d.global.shared::cta.add.tile.bulk_group")
    assert not L.covers("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile::scatter4.bulk_group")
    assert not L.covers("add.u32")
    assert not L.covers("cp.async.bulk.tensor.2d.shared::cluster.global.tile::gather4.mbarrier::complete_tx::bytes")


def test_sync_and_satfinite_given_twice_are_flags():
    """ptxas 13.0 takes .sync and .satfinite more than once (mma.sync, mma.sp, wgmma.mma_async and its .sp form);
    a modifier a form lacks is refused however often it is given."""
    for op, once in (("mma.sync.aligned.m16n8k32.row.col.satfinite.satfinite.s32.s8.s8.s32",
                      "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32"),
                     ("mma.sp.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32.satfinite",
                      "mma.sp.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32"),
                     (f"{WG}.m64n64k32.satfinite.satfinite.s32.s8.s8", f"{WG}.m64n64k32.satfinite.s32.s8.s8"),
                     ("wgmma.mma_async.sp.sync.sync.aligned.m64n64k64.satfinite.satfinite.s32.u8.u8",
                      "wgmma.mma_async.sp.sync.aligned.m64n64k64.satfinite.s32.u8.u8")):
        assert L.canonical(op) == once, op
    d = only(L.check(f"{WG}.m64n64k16.satfinite.satfinite.f32.bf16.bf16"))
    assert d.code == "PTX-E-MODIFIER" and ".satfinite" in d.message


def test_describe_ints():
    assert L.describe_ints(range(8, 257, 8)) == "a multiple of 8 from 8 to 256"
    assert L.describe_ints([-1, 1]) == "-1 or 1"
    assert L.describe_ints([8, 16, 24] + list(range(32, 257, 16))) == \
        "a multiple of 8 from 8 to 32 or a multiple of 16 from 48 to 256"


# ------------------------------------------------------------------------------------ targets, versions

def test_wgmma_is_sm90a_only():
    op = f"{WG}.m64n64k16.f32.bf16.bf16"
    assert L.check(op, None, "sm_90a", "8.0") == []
    for t, v in (("sm_90", "8.0"), ("sm_100a", "8.6"), ("sm_89", "8.0")):
        d = only(L.check(op, None, t, v))
        assert d.code == "PTX-E-TARGET" and "sm_90a" in d.message


def test_fp8_mma_target_and_version():
    op = "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32"
    assert L.check(op, None, "sm_89", "8.4") == []
    assert codes(L.check(op, None, "sm_80", "8.4")) == ["PTX-E-TARGET"]
    assert codes(L.check(op, None, "sm_89", "8.3")) == ["PTX-E-VERSION"]
    d = only(L.check("mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16", None, "sm_89", "8.4"))
    assert d.code == "PTX-E-VERSION" and "8.7" in d.message


def test_family_targets():
    op = "ldmatrix.sync.aligned.m8n16.x4.shared.b8x16.b6x16_p32"
    for t in ("sm_100a", "sm_103a", "sm_120a", "sm_100f"):
        assert L.check(op, None, t, "8.8") == [], t
    for t in ("sm_90a", "sm_100", "sm_120"):
        assert codes(L.check(op, None, t, "8.8")) == ["PTX-E-TARGET"], t


def test_optional_operand_raises_the_minimum():
    ops = [Op("reg", b64), Op("addr")]
    assert L.check("mbarrier.arrive.shared.b64", ops, "sm_80", "7.0") == []
    d = only(L.check("mbarrier.arrive.shared.b64", ops + [Op("imm", value=2)], "sm_80", "7.8"))
    assert d.code == "PTX-E-TARGET" and "count" in d.message


# ------------------------------------------------------------------------------------ operands

def _wg_ops(n_d, dtype=f32, a=None, imms=(1, 1, 0, 0)):
    a = a or Op("reg", u64)
    return [Op("vec", count=n_d, elems=(dtype,) * n_d), a, Op("reg", u64), Op("reg", pred)] + \
        [Op("imm", value=v) for v in imms]


def test_wgmma_immediates_per_dtype():
    bf = f"{WG}.m64n64k16.f32.bf16.bf16"
    assert L.check(bf, _wg_ops(32)) == []
    assert L.check(bf, _wg_ops(32, a=Op("vec", count=4, elems=(bf16x2,) * 4), imms=(1, -1, 1))) == []
    d = only(L.check(bf, _wg_ops(32, imms=(2, 1, 0, 0))))
    assert d.code == "PTX-E-OPERANDS" and "-1 or 1" in d.message
    tf = f"{WG}.m64n64k8.f32.tf32.tf32"
    assert L.check(tf, _wg_ops(32, imms=(1, 1))) == []
    d = only(L.check(tf, _wg_ops(32)))   # transposes exist for .f16/.bf16 only
    assert d.code == "PTX-E-OPERANDS" and "imm-scale-b) with A in registers" in d.message
    assert L.check(f"{WG}.m64n64k32.s32.s8.s8", _wg_ops(32, dtype=s32, imms=())) == []


def test_wgmma_accumulator_counts():
    assert L.fragment_regs(f"{WG}.m64n256k16.f32.bf16.bf16") == {"d": (128, f32), "a": (4, bf16x2)}
    assert L.fragment_regs(f"{WG}.m64n256k16.f16.f16.f16")["d"] == (64, f16x2)
    d = only(L.check(f"{WG}.m64n64k16.f32.bf16.bf16", _wg_ops(16)))
    assert d.code == "PTX-E-OPERANDS" and "takes 32 registers, 16 given" in d.message


def test_mma_fragment_counts():
    assert L.fragment_regs("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") == {
        "d": (4, f32), "a": (4, f16x2), "b": (2, f16x2), "c": (4, f32)}
    assert L.fragment_regs("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32")["d"] == (8, f32)
    assert L.fragment_regs("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64") == {
        "d": (4, f64), "a": (8, f64), "b": (4, f64), "c": (4, f64)}
    assert L.fragment_regs("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc")["a"] == (4, b32)


def test_register_types_are_checked():
    op = "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
    v = lambda n, t: Op("vec", count=n, elems=(t,) * n)
    assert L.check(op, [v(4, f32), v(4, b32), v(2, b32), v(4, f32)]) == []
    d = only(L.check(op, [v(4, f32), v(4, f32), v(2, b32), v(4, f32)]))
    assert d.code == "PTX-E-TYPE" and ".f32" in d.message


def test_immediate_ranges():
    d = only(L.check("setmaxnreg.inc.sync.aligned.u32", [Op("imm", value=20)]))
    assert d.message.endswith("must be a multiple of 8 from 24 to 256, not 20")
    assert L.check("setmaxnreg.dec.sync.aligned.u32", [Op("imm", value=256)]) == []
    a = [Op("addr"), Op("addr")]
    assert "must be 16" in only(L.check("cp.async.cg.shared.global", a + [Op("imm", value=8)])).message
    assert "within 0..cp-size" in only(L.check("cp.async.ca.shared.global", a + [Op("imm", value=4),
                                                                                Op("imm", value=8)])).message
    assert L.check("wgmma.wait_group.sync.aligned", [Op("imm", value=1000)]) == []
    assert L.check("wgmma.wait_group.sync.aligned", [Op("imm", value=-1)])


def test_float_literals_only_in_floating_point_operands():
    # ptxas 13.0: "Arguments mismatch" for 1.0 as mbarrier.init's count or a .b32 st.async value, and for
    # the integer 1 as a .f32 st.async value
    d = only(L.check("mbarrier.init.shared.b64", [Op("addr"), Op("imm", f64, floating=True)]))
    assert d.code == "PTX-E-TYPE" and "operand 2 (count) is a floating-point literal; .u32 expected" in d.message
    st = "st.async.shared::cluster.mbarrier::complete_tx::bytes."
    assert L.check(st + "f32", [Op("addr"), Op("imm", f32, floating=True), Op("addr")]) == []
    assert "floating-point literal" in only(L.check(st + "b32", [Op("addr"), Op("imm", f64, floating=True),
                                                                  Op("addr")])).message
    # ...but a hex literal of the width is the bits of a .b32/.b64 value (0f for .b32, 0d for .b64)
    assert L.check(st + "b32", [Op("addr"), Op("imm", f32, floating=True), Op("addr")]) == []
    d = only(L.check(st + "b32", [Op("addr"), Op("imm", f64, floating=True), Op("addr")]))
    assert "write a 0f hex literal" in d.notes[0]
    # no hex literal for the bit-typed operands that are not values (an mbarrier state)
    assert L.check("mbarrier.test_wait.shared.b64", [Op("reg", pred), Op("addr"), Op("imm", value=0)]) == []
    assert only(L.check("mbarrier.test_wait.shared.b64", [Op("reg", pred), Op("addr"),
                                                           Op("imm", f64, floating=True)])).code == "PTX-E-TYPE"
    assert "integer literal 1" in only(L.check(st + "f32", [Op("addr"), Op("imm", value=1), Op("addr")])).message
    # an immediate slot without a type (a wait_group count) takes integers only
    assert "an integer expected" in only(L.check("wgmma.wait_group.sync.aligned",
                                                 [Op("imm", f64, floating=True)])).message


def test_addresses_name_variables_of_their_state_space():
    # ptxas 13.0: "State space mismatch" / "Illegal state space for address operand"
    init = "mbarrier.init.shared.b64"
    assert L.check(init, [Op("addr", space="shared"), Op("imm", value=1)]) == []
    assert L.check(init, [Op("addr"), Op("imm", value=1)]) == []           # a register: not known
    d = only(L.check(init, [Op("addr", space="global"), Op("imm", value=1)]))
    assert d.code == "PTX-E-OPERANDS" and "operand 1 (addr) names a .global variable; it takes .shared" in d.message
    # an mbarrier is .shared even where the instruction's address is generic
    assert only(L.check("mbarrier.init.b64", [Op("addr", space="local"), Op("imm", value=1)]))
    # a generic address names .global, .shared and .local variables, not .const or .param ones
    ldm = "ldmatrix.sync.aligned.m8n8.x1.b16"
    assert L.check(ldm, [Op("vec", count=1, elems=(b32,)), Op("addr", space="local")]) == []
    assert "takes .global/.local/.shared" in only(L.check(ldm, [Op("vec", count=1, elems=(b32,)),
                                                                Op("addr", space="const")])).message
    # each side of a copy has its own space; the mbarrier of a bulk copy is .shared
    bulk = "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
    ok = [Op("addr", space="shared"), Op("addr", space="global"), Op("imm", value=16), Op("addr", space="shared")]
    assert L.check(bulk, ok) == []
    assert [d.message.split(": ")[1][:9] for d in L.check(bulk, ok[::-1][1:2] + ok[:1] + ok[2:3] + [Op("addr", space="global")])] \
        == ["operand 1", "operand 2", "operand 4"]
    # a tensor map is named by a .global variable (a parameter's goes through cvta.param)
    tma = "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
    ref = lambda sp: Op("tensor", count=1, elems=(b32,), space=sp)
    assert L.check(tma, [Op("addr"), ref("global"), Op("addr")]) == []
    d = only(L.check(tma, [Op("addr"), ref("param"), Op("addr")]))
    assert "names a .param variable" in d.message and "cvta" in d.notes[0]


def test_literals_in_fragments():
    # ptxas 13.0: "Result register required" for a literal in d; in c, "Vector with elements of different
    # types" for an integer literal next to an .f32 register, but not for a float literal
    op = "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
    v = lambda n, t: Op("vec", count=n, elems=(t,) * n)
    lit = lambda n, t, kind: Op("vec", count=n, elems=(None,) + (t,) * (n - 1), lits=(kind,) + (None,) * (n - 1))
    a, b = v(4, b32), v(2, b32)
    assert L.check(op, [v(4, f32), a, b, lit(4, f32, "f")]) == []
    assert L.check(op, [v(4, f32), lit(4, b32, "i"), b, v(4, f32)]) == []
    assert "an integer literal and a .f32 register side by side" in only(L.check(op, [v(4, f32), a, b,
                                                                                     lit(4, f32, "i")])).message
    d = only(L.check(op, [lit(4, f32, "f"), a, b, v(4, f32)]))
    assert d.code == "PTX-E-OPERANDS" and "operand 1 (d) is written" in d.message


def test_builder_refuses_a_variable_of_another_state_space():
    m = pg.Module("sm_90a", version="8.0")
    g = m.global_var("gbar", "b64", align=8)
    k = m.entry("k")
    k.mbarrier_init(k.shared("bar", 8, align=8), 1)
    with pytest.raises(pg.LegalityError) as ei:
        k.mbarrier_init(g, 1)
    assert "names a .global variable" in ei.value.message and ei.value.code == "PTX-E-OPERANDS"


def test_check_is_cached_and_fast():
    ops = [Op("vec", count=4, elems=(f32,) * 4), Op("vec", count=4, elems=(b32,) * 4),
           Op("vec", count=2, elems=(b32,) * 2), Op("vec", count=4, elems=(f32,) * 4)]
    op = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
    L.check(op, ops, "sm_90a", (8, 0))
    t = time.perf_counter()
    for _ in range(20000):
        L.check(op, ops, "sm_90a", (8, 0))
    assert time.perf_counter() - t < 5.0


# ------------------------------------------------------------------------------------ builder

def _kernel(target="sm_90a", version=None):
    m = pg.Module(target, version=version)
    return m, m.entry("k", maxntid=128)


def test_builder_mma_and_ldmatrix_text():
    m, k = _kernel()
    sm = k.shared("tile", 1024)
    a = k.ldmatrix(pg.mem(sm), num=4)
    b = k.ldmatrix(pg.mem(sm, 512), num=2, trans=True)
    acc = k.mma_fragment("d", "m16n8k16", atype="f16", name="acc")
    k.mma_sync("m16n8k16", acc, a, b, acc, atype="f16", ctype="f32")
    k.stmatrix(pg.mem(sm), a)
    text = m.emit().text
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {" in text
    assert "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16" in text
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%acc0, %acc1, %acc2, %acc3}" in text
    assert "stmatrix.sync.aligned.m8n8.x4.shared.b16 [tile]" in text


def test_builder_wgmma_text_and_defaults():
    m, k = _kernel()
    desc = k.reg(u64)
    d = k.wgmma_fragment("d", "m64n128k16", dtype="f32", atype="bf16", name="acc")
    k.wgmma_fence()
    k.wgmma_mma_async("m64n128k16", d, desc, desc, dtype="f32", atype="bf16", trans_b=1)
    k.wgmma_mma_async((64, 64, 8), None, desc, desc, atype="tf32", scale_d=0)
    k.wgmma_commit_group()
    k.wgmma_wait_group(0)
    text = m.emit().text
    assert len(d) == 64
    assert ", %rd0, %rd0, 1, 1, 1, 0, 1;" in text
    assert "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32" in text and ", %rd0, %rd0, 0, 1, 1;" in text
    assert "wgmma.wait_group.sync.aligned 0;" in text


def test_builder_wgmma_refuses_transpose_for_tf32_at_the_callers_line():
    m, k = _kernel()
    desc = k.reg(u64)
    line = inspect.currentframe().f_lineno + 2
    with pytest.raises(pg.LegalityError) as ei:
        k.wgmma_mma_async("m64n64k8", None, desc, desc, atype="tf32", trans_a=1)
    e = ei.value
    assert e.loc.file == __file__ and e.loc.line == line
    assert e.code == "PTX-E-OPERANDS" and "imm-trans-a" in e.message


def test_builder_bad_shape_raises_legality_error_with_what_is_legal():
    m, k = _kernel()
    desc = k.reg(u64)
    with pytest.raises(pg.LegalityError) as ei:
        k.wgmma_mma_async("m64n12k16", None, desc, desc, atype="bf16")
    assert ei.value.code == "PTX-E-SHAPE"
    assert "N must be a multiple of 8 from 8 to 256" in ei.value.message


def test_builder_gates_on_the_module_target_and_version():
    m, k = _kernel("sm_90")
    with pytest.raises(pg.LegalityError) as ei:
        k.wgmma_fence()
    assert ei.value.code == "PTX-E-TARGET"
    m, k = _kernel("sm_89", version="8.3")
    r = k.regs(b32, 4)
    with pytest.raises(pg.LegalityError) as ei:
        k.mma_sync("m16n8k32", None, r, r[:2], k.regs(f32, 4), atype="e4m3")
    assert ei.value.code == "PTX-E-VERSION" and "8.4" in ei.value.message


def test_builder_register_type_error():
    m, k = _kernel()
    with pytest.raises(pg.BuildError) as ei:
        k.mma_sync("m16n8k16", k.regs(f32, 4), k.regs(f32, 4), k.regs(b32, 2), k.regs(f32, 4), atype="bf16")
    assert "f32" in ei.value.message and ei.value.code == "PTX-E-TYPE"


def test_builder_tma_mbarrier_pipeline_text():
    m, k = _kernel()
    tmap = k.param_bytes("tmap", 128)
    sm = k.shared("tile", 4096, align=128)
    bar = k.shared("bar", 8, align=8)
    k.mbarrier_init(pg.mem(bar), 1)
    k.fence_mbarrier_init()
    k.mbarrier_arrive_expect_tx(pg.mem(bar), 4096)
    k.cp_async_bulk_tensor(pg.mem(sm), tmap, [0, 0], mbarrier=pg.mem(bar), multicast_mask=3)
    p = k.mbarrier_try_wait(pg.mem(bar), parity=0, suspend_hint=10000)
    assert p.type is pred
    k.fence_proxy_async("shared::cta")
    k.cp_async_bulk_tensor(pg.mem(sm), tmap, [1, 2, 3], direction="store")
    k.cp_async_bulk_commit_group()
    k.cp_async_bulk_wait_group(0, read=True)
    text = m.emit().text
    assert "cvta.param.u64" in text
    assert re.search(r"cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.mbarrier::complete_tx::bytes"
                     r"\.multicast::cluster \[tile\], \[%rd\d+, \{0, 0\}\], \[bar\], 3;", text)
    assert "mbarrier.try_wait.parity.shared.b64 %p0, [bar], 0, 10000;" in text
    assert "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%rd" in text
    assert "cp.async.bulk.wait_group.read 0;" in text


def test_builder_mbarrier_remote_arrive_uses_the_sink():
    m, k = _kernel()
    bar = k.shared("bar", 8, align=8)
    assert k.mbarrier_arrive(pg.mem(bar), space="shared::cluster", sem="release", scope="cluster") is None
    st = k.mbarrier_arrive(pg.mem(bar), 1, sem="release", scope="cta")
    assert st.type is b64
    text = m.emit().text
    assert "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [bar];" in text
    assert "mbarrier.arrive.release.cta.shared.b64 %rd0, [bar], 1;" in text


def test_builder_cp_async_and_cluster_ops():
    m, k = _kernel()
    sm = k.shared("tile", 256)
    g = k.ld_param(k.param_ptr("g"))
    k.cp_async(pg.mem(sm), g, 16)
    k.cp_async(pg.mem(sm), g, 4, src_size=2)
    k.cp_async_commit_group()
    k.cp_async_wait_group(0)
    with pytest.raises(pg.LegalityError):
        k.cp_async(pg.mem(sm), g, 8, cache="cg")
    r = k.mapa(k.mov(sm, type=u32), 1, space="shared::cluster")
    k.getctarank(g)
    k.setmaxnreg("dec", 40)
    with pytest.raises(pg.LegalityError) as ei:
        k.setmaxnreg("inc", 250)
    assert "a multiple of 8 from 24 to 256" in ei.value.message
    p = k.elect_sync()
    k.barrier_cluster_arrive(sem="relaxed")
    k.barrier_cluster_wait()
    k.griddepcontrol("launch_dependents")
    text = m.emit().text
    assert "cp.async.cg.shared.global [tile], [%rd0], 16;" in text
    assert "cp.async.ca.shared.global [tile], [%rd0], 4, 2;" in text
    assert f"mapa.shared::cluster.u32 {r.name}" in text
    assert "setmaxnreg.dec.sync.aligned.u32 40;" in text
    assert f"elect.sync _|{p.name}, 4294967295;" in text
    assert "barrier.cluster.arrive.relaxed.aligned;" in text


def test_fragment_helper_types():
    m, k = _kernel()
    a = k.fragment("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", "a", name="fa")
    assert len(a) == 4 and a.type is bf16x2
    with pytest.raises(pg.BuildError):
        k.fragment("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", "q")
