"""ptxgen.parse: the grammar on real compiler output, the fast path against lark, IR round trips, errors.

No toolchain needed: the corpus under tests/ptx/ was generated once by tests/ptx/build_corpus.py (nvcc)
and is committed.
"""
import collections
import glob
import gzip
import os

import pytest

import ptxgen as pg
from ptxgen import parse as P
from ptxgen.emit import emit_module
from ptxgen.ir import Instr, Raw

from _samples import load_sample

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = sorted(glob.glob(os.path.join(HERE, "ptx", "**", "*.ptx*"), recursive=True))
# sm_89 builds differ from sm_80 ones only in .target; the lark-heavy comparisons skip them, and -G builds
# of other targets unless PTXGEN_SLOW_TESTS=1 (they take a minute of whole-file lark parsing)
DISTINCT = [f for f in CORPUS if ".sm_89." not in f]
COMPARED = [f for f in DISTINCT if os.environ.get("PTXGEN_SLOW_TESTS") or ".G." not in f or ".sm_80." in f]


def read(path):
    if path.endswith(".gz"):
        with gzip.open(path, "rt") as f:
            return f.read()
    with open(path) as f:
        return f.read()


def short(path):
    return os.path.relpath(path, HERE)


def canon(op):
    """An operand as text plus its IR class: equal for equal IR."""
    return (type(op).__name__, str(op))


def instr_list(module):
    out = []
    for fn in module.functions:
        for st in fn.body:
            if type(st) is Instr:
                g = None if st.guard is None else str(st.guard)
                out.append((fn.name, g, st.opcode, tuple(canon(o) for o in st.operands)))
            elif type(st) is Raw:
                out.append((fn.name, "raw", " ".join(st.text.split())))
            else:
                out.append((fn.name, type(st).__name__, str(getattr(st, "label", getattr(st, "text", "")))))
    return out


def test_corpus_is_there():
    names = {os.path.basename(f) for f in CORPUS}
    for stem in ("tensor_core", "tma_mbarrier", "coop_cluster", "misc"):
        for arch in ("sm_80", "sm_89", "sm_90a", "sm_100a"):
            for variant in ("O3", "lineinfo", "G"):
                assert any(n.startswith(f"{stem}.{arch}.{variant}.ptx") for n in names), (stem, arch, variant)
    assert any("triton_style" in n for n in names)
    assert sum(os.path.getsize(f) for f in CORPUS) < 4_000_000


def test_parser_is_built_once():
    assert P._lark() is P._lark()
    assert P._fast() is P._fast()


@pytest.mark.parametrize("path", CORPUS, ids=short)
def test_corpus_parses_without_diagnostics(path):
    res = P.parse(read(path), path)
    assert res.diagnostics == []
    assert res.module is not None and res.module.functions
    assert res.module.target is not None and res.module.version is not None


@pytest.mark.parametrize("path", COMPARED, ids=short)
def test_fast_path_agrees_with_grammar(path):
    """Every statement the fast path takes gives exactly the record lark's path gives for it, and the
    whole-file results (IR, sections, declarations) of the two paths are the same."""
    text = read(path)
    lines = text.split("\n")
    recs, _skel = P._classify(text, lines, P._fast(), set())
    tree = P._lark().parse(text, start="start")
    w = P._Walker(text)
    w.walk_module(tree)
    by_line = collections.defaultdict(list)
    for r in w.out:
        by_line[r[0]].append(r)
    taken = 0
    for r in recs:
        if r[1] == P.R_SECTION:
            continue  # a whole section: compared below through the results
        taken += 1
        assert r in by_line[r[0]], (r, by_line[r[0]])
    assert taken > 0
    # the lark-only result, built from the same tree
    b = P.ParseResult(None, [], lines, path)
    builder = P._IRBuilder(b, P._sreg_types())
    builder.run(sorted(w.out, key=P._line_key))
    P._finish(b, builder)
    a = P.parse(text, path)
    assert instr_list(a.module) == instr_list(b.module)
    assert [(s.name, s.labels, s.refs) for s in a.sections] == [(s.name, s.labels, s.refs) for s in b.sections]
    assert a.module_labels == b.module_labels
    assert sorted(a.functions) == sorted(b.functions)
    assert [v.decl() for v in a.module.vars] == [v.decl() for v in b.module.vars]
    assert a.stats["fast_lines"] > 0


def test_statements_agree_one_by_one():
    """parse_statement (lark, start=instruction) and statement_records (fast path) on tricky lines."""
    lines = [
        "\t@!%p1 bra.uni \t$L__BB0_2;",
        "\tld.global.v4.b32 { %r2, %r3, %r4, %r5 }, [ %rd1 + 0 ];",
        "\tst.global.v2.f32 [%rd4+-16], {%f1, 0f3F800000};",
        "\tsetp.lt.u32 %p1|%p2, %r2, 64;",
        "\tselp.b32 %r11, %r4, %r5, !%p1;",
        "\tcall.uni (retval0), vprintf, (param0, param1);",
        "\tcall (r1), %rd8, (a1), proto;",
        "\tcall (%r0), fn, (%r1, 5, -1, 0x10);",
        "\tcall.uni (_), fn, (%r1, 1.5, 0f3F800000, 0d3FF0000000000000, param0);",
        "\tcall (%r2), %rd1, (%r1), proto;",
        "\tmov.b32 {%rs1, _}, %r12;",
        "\tadd.u32 %r8, %r2, 42U;",
        "\tadd.u32 %r8, %r2, 0b101;",
        "\tadd.u32 %r8, %r2, 017;",
        "\tadd.s32 %r8, %r2, -1;",
        "\tmov.f64 %fd1, 0d4000000000000000;",
        "\tmov.f32 %f2, 1.5;",
        "\ttex.2d.v4.f32.f32 {%f4, %f5, %f6, %f7}, [tex_a, {%f1, %f2}];",
        "\tcp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], [%r4];",
        "\tmov.u32 %r1, %tid.x;",
        "\tret;",
        "\tbar.sync 0;",
    ]
    for line in lines:
        fast = P.statement_records(line, 1)
        ref = P.parse_statement(line)
        assert fast is not None, line
        assert fast == ref, line


def test_call_lists_take_registers_and_immediates():
    """A call's (return values) and (arguments) hold registers, names, `_` and immediates; `(5)` is a
    one-argument list after call and a parenthesised constant elsewhere. Both paths build the same IR."""
    text = (".func (.param .b32 r) fn(.param .b32 x) { ret; }\n.visible .entry k() {\n.reg .b32 %r<3>;\n"
            ".param .b32 pa;\n\tcall (%r0), fn, (%r1, 5, -1, 1.5, 0f3F800000, pa);\n\tcall (_), fn, (5);\n"
            "\tcall (%r0), fn, ((1+2)*3);\n\tadd.u32 %r2, %r1, (5);\n\tadd.u32 %r2, %r1, (4)*2;\n\tret;\n}\n")
    res = parse_ok(text)
    a, b, c, d, e = body(res, 1)[:5]
    rets, fn, args = a.operands
    assert [type(x).__name__ for x in rets.items] == ["Reg"] and rets.items[0].type is pg.b32
    assert fn.name == "fn" and type(args) is P.CallArgs
    assert [type(x).__name__ for x in args.items] == ["Reg", "Imm", "Imm", "FloatImm", "FloatImm", "ParamSym"]
    assert [x.value for x in args.items[1:5]] == [5, -1, 1.5, 1.0] and str(args) == "(%r1, 5, -1, 1.5, 0f3F800000, pa)"
    assert b.operands[0].items == ("_",) and [x.value for x in b.operands[2].items] == [5]
    assert [x.value for x in c.operands[2].items] == [9]
    assert type(d.operands[2]) is pg.ir.Imm and d.operands[2].value == 5
    assert type(e.operands[2]) is pg.ir.Imm and e.operands[2].value == 8
    assert instr_list(res.module) == instr_list(P.parse(HEAD + text, "t.ptx", fast=False).module)


def test_declarations_keep_their_vector_width_type_and_names():
    """A declaration statement of a body stays a Raw in the IR; ParseResult.decl_of gives its parsed
    declaration, from the fast path (one line) and from lark (comments, several lines) alike."""
    text = (".visible .entry k() {\n\t.reg .v2 .f32 %v, %w<4>;\n\t.reg .v4 /* 4 */ .b32 %q<0x2>, // q\n\t\t%s;\n"
            "\t.reg .b64 %rd1;\n\tret;\n}\n")
    for fast in (True, False):
        res = P.parse(HEAD + text, "t.ptx", fast=fast)
        raws = [st for st in res.module.functions[0].body if type(st) is Raw]
        decls = [res.decl_of(st) for st in raws]
        assert [(d.space, d.vector, d.type, [(i.name, i.count) for i in d.items]) for d in decls] == [
            ("reg", 2, "f32", [("%v", None), ("%w", 4)]), ("reg", 4, "b32", [("%q", 2), ("%s", None)]),
            ("reg", None, "b64", [("%rd1", None)])], fast
        assert [d.vector_at for d in decls] == [(5, 7), (6, 7), None], fast
        assert res.decl_of(Raw(raws[0].text, raws[0].loc)) is None  # an equal statement, not the module's
        assert res.decl_of(body(res)[0]) is None


def test_fast_path_declines_what_it_does_not_parse():
    for line in ("\tadd.s32 %r1, %r2 /* c */, %r3;", "\tadd.s32 %r1, %r2, %r3; add.s32 %r4, %r5, %r6;",
                 "\tadd.s32 %r1, %r2, (1 << 4) - 1;", "\tmov.u64 %rd1, tbl+8;", "\tadd.f32 %f1, %f2, -1.5;"):
        assert P.statement_records(line) is None, line


# ------------------------------------------------------------------------------------------ round trips
def _builder_modules():
    mods = []
    for name in ("axpy", "block_reduce", "hgemm_mma"):
        try:
            mods.append((name, load_sample(name).build()))
        except Exception as e:  # a sample under construction elsewhere must not hide the other round trips
            pytest.skip(f"sample {name} does not build here: {e}")
    m = pg.Module("sm_90a")
    f = m.func("twice", rets=[("r", pg.u32)])
    a = f.param("a", pg.u32)
    f.st_ret(0, f.add(f.ld_param(a), f.ld_param(a)))
    f.ret()
    k = m.entry("loops", maxntid=128)
    po = k.param_ptr("out", pg.u32)
    out = k.cvta(k.ld_param(po), "global", to=True)
    acc = k.mov(0, type=pg.u32)
    with k.for_range(0, 16, unroll=False) as i:
        k.add(acc, k.call(f, [i]), dst=acc)
    p = k.setp("lt", acc, 100)
    k.st(out, k.selp(acc, 7, p))
    k.ret()
    mods.append(("loops", m))
    return mods


def test_round_trip_of_builder_output_is_stable():
    for name, m in _builder_modules():
        text1 = m.emit().text
        m1 = P.parse_ptx(text1, name)
        text2 = emit_module(m1).text
        m2 = P.parse_ptx(text2, name)
        assert instr_list(m1) == instr_list(m2), name
        assert emit_module(m2).text == text2, name  # emitting the re-parse is a fixed point
        # the builder's own instruction list survives the trip
        want = [(fn.name, st.opcode, tuple(str(o) for o in st.operands))
                for fn in m.ir.functions for st in fn.body if type(st) is Instr]
        got = [(fn.name, st.opcode, tuple(str(o) for o in st.operands))
               for fn in m1.functions for st in fn.body if type(st) is Instr]
        assert got == want, name


@pytest.mark.parametrize("path", [f for f in DISTINCT if ".O3." in f or "hand" in f], ids=short)
def test_round_trip_of_compiler_output(path):
    m1 = P.parse(read(path), path).module
    text = emit_module(m1).text
    m2 = P.parse(text, "again").module
    assert instr_list(m1) == instr_list(m2)


# ---------------------------------------------------------------------------------------------- details
HEAD = ".version 8.0\n.target sm_90a\n.address_size 64\n"


def parse_ok(body_text, head=HEAD):
    res = P.parse(head + body_text, "t.ptx")
    assert res.diagnostics == [], [str(d) for d in res.diagnostics]
    return res


def body(res, fn=0):
    return [st for st in res.module.functions[fn].body if type(st) is Instr]


def test_literal_values():
    res = parse_ok(".visible .entry k() {\n.reg .b32 %r<9>;\n.reg .f32 %f<3>;\n"
                   "add.u32 %r1, %r2, 0xFF;\nadd.u32 %r1, %r2, 017;\nadd.u32 %r1, %r2, 0b101;\n"
                   "add.u32 %r1, %r2, 42U;\nadd.s32 %r1, %r2, -7;\nadd.s32 %r1, %r2, (1 << 4) - 1;\n"
                   "add.s32 %r1, %r2, 7 / -2;\nadd.s32 %r1, %r2, -7 % 3;\nmov.f32 %f1, 0f3F800000;\n"
                   "mov.f32 %f1, 0f7FFFFFFF;\nret;\n}\n")
    vals = [st.operands[-1] for st in body(res)[:-1]]
    # ptxas 13.0 computes `%` in unsigned 64-bit integers: -7 % 3 is (2^64 - 7) % 3, 0 (C's -7 % 3 is -1)
    assert [v.value for v in vals[:8]] == [255, 15, 5, 42, -7, 15, -3, 0]
    assert vals[8].value == 1.0 and str(vals[8]) == "0f3F800000"
    assert str(vals[9]) == "0f7FFFFFFF"  # a NaN payload prints back as written


def test_register_ranges_are_not_materialised():
    res = parse_ok(".visible .entry k() {\n.reg .b32 %r<100000>;\nmov.u32 %r99999, %r0;\nret;\n}\n")
    ins = body(res)[0]
    assert ins.operands[0].type is pg.b32 and ins.operands[0].decl_group == "%r"
    res = P.parse(HEAD + ".visible .entry k() {\n.reg .b32 %r<10>;\nmov.u32 %r10, 1;\nret;\n}\n")
    assert body(res)[0].operands[0].type is None  # undeclared: the linter reports it


def test_scopes_and_shadowing():
    res = parse_ok(".visible .entry k() {\n.reg .b32 a;\n{\n.reg .f32 a;\nmov.f32 a, 0f00000000;\n}\n"
                   "mov.b32 a, 1;\nret;\n}\n")
    inner, outer = body(res)[:2]
    assert inner.operands[0].type is pg.f32 and outer.operands[0].type is pg.b32


def test_redeclaration_is_reported():
    res = P.parse(HEAD + ".visible .entry k() {\n.reg .b32 %r<3>;\n.reg .b32 %r1;\nret;\n}\n", "t.ptx")
    assert [d.code for d in res.diagnostics] == ["PTX-E-REDECLARED"]
    assert (res.diagnostics[0].loc.line, res.diagnostics[0].loc.col) == (6, 11)


@pytest.mark.parametrize("text,line,col", [
    (HEAD + ".visible .entry k() {\n\tadd.s32 %r1, %r2 %r3;\n}\n", 5, 19),
    (HEAD + ".visible .entry k() {\n\tld.global.u32 %r1, [%rd1-8];\n}\n", 5, 26),
    (HEAD + ".visible .entry k() {\n\tmov.f32 %f1, -0f3F800000;\n}\n", 5, 16),  # ptxas: near '0f3F800000'
    (HEAD + "add.s32 %r1, %r2, %r3;\n", 4, 1),
    (HEAD + ".visible .entry k() {\n\tret;\n", 5, 6),  # the end of the text
    (HEAD + ".visible .entry k() {\n\tmov.u32 %r1, 1;\n\tmov.u32 %r2 2;\n\tret;\n}\n", 6, 14),
    (HEAD + ".visible .entry k() {\n\tadd.s32 %r1, %r2, 1 # 2;\n}\n", 5, 22),
])
def test_syntax_errors_point_at_the_token(text, line, col):
    res = P.parse(text, "t.ptx")
    assert [d.code for d in res.diagnostics] == ["PTX-E-SYNTAX"]
    d = res.diagnostics[0]
    assert (d.loc.line, d.loc.col) == (line, col), str(d)
    assert d.source_line == text.split("\n")[line - 1]
    with pytest.raises(P.PtxSyntaxError):
        P.parse_ptx(text)


def test_multi_line_statements_and_comments():
    text = HEAD + (".visible .entry k() {\n\t.reg .b32 %r<4>;\n\tadd.s32 %r1,\n\t\t%r2,\n\t\t%r3;\n"
                   "/*\n\tadd.s32 %r1, %r2, %q9;\n*/\n\tmov.u32 %r1, %r2; // mov.u32 %q1, %q2;\n\tret;\n}\n")
    res = parse_ok(text[len(HEAD):])
    ins = body(res)
    assert [i.opcode for i in ins] == ["add.s32", "mov.u32", "ret"]
    assert (ins[0].loc.line, ins[0].loc.col) == (6, 2)


def test_crlf_and_tabs():
    text = (HEAD + ".visible .entry k()\n{\n\t.reg .b32\t%r<3>;\n\tmov.u32\t%r1,\t%r2;\n\tret;\n}\n")
    res = P.parse(text.replace("\n", "\r\n"), "t.ptx")
    assert res.diagnostics == [] and len(body(res)) == 2


def test_instruction_outside_a_function_is_a_syntax_error():
    res = P.parse(HEAD + "\tmov.u32 %r1, %r2;\n.visible .entry k() { ret; }\n", "t.ptx")
    assert [(d.code, d.loc.line) for d in res.diagnostics] == [("PTX-E-SYNTAX", 4)]


def test_module_items():
    res = P.parse(read(os.path.join(HERE, "ptx", "hand", "syntax_zoo.sm_90a.ptx")), "zoo")
    assert res.diagnostics == []
    assert [n for n, _ in res.targets] == ["sm_90a", "texmode_independent"]
    names = {v.name: v for v in res.module.vars}
    assert names["ints"].init == [-1, 0x7FFFFFFF, 15, 10, 42, 15]
    assert names["grid2d"].count == 6 and names["extern_counter"].extern
    assert "square_alias" in res.functions and not res.functions["square_alias"].defined
    zoo = res.functions["zoo"]
    assert [d[0] for d in zoo.header.directives] == [".maxntid", ".minnctapersm", ".reqnctapercluster",
                                                      ".explicitcluster"]
    assert [p.name for p in zoo.fn.params] == ["out", "blob", "sel"] and zoo.fn.params[1].array == 16


def test_parse_never_raises_on_binary_junk():
    for junk in ("\x00\x01\x02", "{{{{", "}", ".version", ".target sm_90a\n\x7f", "\ufeff.version 8.0"):
        res = P.parse(junk, "junk")
        assert all(d.code == "PTX-E-SYNTAX" for d in res.diagnostics)
