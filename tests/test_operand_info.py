"""One translation of operands into legality.OperandInfo (ops.operands.operand_info), for the builder's
operands and, through the entries the linter registers, the parser's."""
from ptxgen.lint import legality_check     # (importing the linter registers the parser's shapes)
from ptxgen.ir import Imm, Reg, SpecialReg, Sym
from ptxgen.legality import OperandInfo
from ptxgen.ops.operands import SINK, TensorRef, operand_info, operand_infos
from ptxgen.parse import parse
from ptxgen.types import b32, b64, f32, f64, pred, u32

HEADER = ".version 8.0\n.target sm_90a\n.address_size 64\n"


def _parsed(body: str) -> dict:
    """opcode -> parsed instruction of one entry with registers %rd (b64), %r (b32), %f (f32), %p (pred)."""
    res = parse(HEADER + ".visible .entry k(.param .u64 p){ .reg .b64 %rd<4>; .reg .b32 %r<6>; "
                ".reg .f32 %f<3>; .reg .pred %p<3>; " + body + " ret; }")
    assert not res.diagnostics, res.diagnostics
    return {st.opcode: st for st in res.module.functions[0].body if type(st).__name__ == "Instr"}


def test_parsed_operands():
    tma = "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
    ins = _parsed(f"mov.u32 %r1, %clock; mov.f32 %f1, 0f3F800000; setp.eq.u32 %p1|%p2, %r1, 7; "
                  f"{tma} [%r1], [%rd1, {{%r2, %r3}}], [%r4]; ld.param.u64 %rd2, [p]; "
                  f"mov.u64 %rd3, p;")
    # a special register is a register of its type, as the builder's %clock is, marked special (the legality
    # families take none as an operand of its own)
    assert operand_infos(ins["mov.u32"].operands) == [OperandInfo("reg", b32), OperandInfo("reg", u32, special=True)]
    # a float literal (the parser's FloatImm, an Imm) keeps its type, has no integer value and is floating
    assert operand_infos(ins["mov.f32"].operands) == [OperandInfo("reg", f32),
                                                      OperandInfo("imm", f32, floating=True)]
    # a decimal one is double precision
    assert operand_info(_parsed("mov.f32 %f1, 1.5;")["mov.f32"].operands[1]) == OperandInfo("imm", f64, floating=True)
    # a predicate pair is two operands
    infos = operand_infos(ins["setp.eq.u32"].operands)
    assert infos[:3] == [OperandInfo("reg", pred), OperandInfo("reg", pred), OperandInfo("reg", b32)]
    assert infos[3].kind == "imm" and infos[3].value == 7
    # `[tmap, {c0, c1}]` is a tensor reference like the builder's TensorRef; `[p]` an address
    assert operand_infos(ins[tma].operands) == [OperandInfo("addr"), OperandInfo("tensor", count=2, elems=(b32, b32)),
                                                OperandInfo("addr")]
    assert legality_check(ins[tma], None, None) == []
    # an address that names a variable has its state space
    assert operand_infos(ins["ld.param.u64"].operands)[1] == OperandInfo("addr", space="param")
    assert operand_info(ins["mov.u64"].operands[1]) == OperandInfo("sym")     # a parameter name (ParamSym)


def test_builder_operands():
    r = Reg("%r1", u32, None)
    assert operand_info(SpecialReg("%clock64", b64)) == OperandInfo("reg", b64, special=True)
    assert operand_info(True) == OperandInfo("imm", value=1) and operand_info(5) == OperandInfo("imm", value=5)
    # floating: what the immediate prints as (an .f32 operand given 1 prints 0f3F800000; a .u32 one
    # given 2.0 prints 2)
    assert operand_info(Imm(2.5, f32)) == operand_info(Imm(1, f32)) == OperandInfo("imm", f32, floating=True)
    assert operand_info(Imm(2.0, u32)) == OperandInfo("imm", u32, value=2)
    assert operand_info(1.5) == OperandInfo("imm", f32, floating=True)          # printed as a 0f literal
    assert operand_info(Imm(1, f64)) == OperandInfo("imm", f64, floating=True)   # a 0d literal
    ref = TensorRef(Sym("tmap", "param"), (r, Imm(3, u32)))
    # (the coordinates as a vector's: the literal, and the .b32 the builder declares a .u32 register with)
    assert operand_info(ref) == OperandInfo("tensor", count=2, elems=(u32, None), space="param", lits=(None, "i"),
                                            decl=(b32, None))
    assert operand_info(SINK) == operand_info("_") == OperandInfo("sink")


def test_an_operand_of_no_known_kind_is_named_by_its_class():
    class Odd:
        pass

    class Imm2(Imm):                     # a subclass takes its base's translation
        pass

    assert operand_info(Odd()) == OperandInfo("Odd")
    assert operand_info(Imm2(4, u32)) == OperandInfo("imm", u32, value=4)
