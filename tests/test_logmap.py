"""rewrite_log: ptxas / driver-JIT log lines mapped to the user's Python lines."""
from ptxgen.diag import SourceLoc
from ptxgen.linemap import PtxText
from ptxgen.logmap import rewrite_log, tool_code

PTX = "\n".join([
    ".version 8.0",                      # 1
    ".target sm_90a",                    # 2
    ".address_size 64",                  # 3
    ".visible .entry k(.param .u64 p)",  # 4
    "{",                                 # 5
    "    .reg .f32 %f<3>;",              # 6
    "    add.f32 %f1, %f2, foo;",        # 7
    "    ret;",                          # 8
    "}",                                 # 9
])
USER = SourceLoc("/home/me/kernels.py", 42, None, "build")


def test_ptxas_error_is_mapped_to_user_line_and_quotes_ptx():
    ptx = PtxText(PTX, {7: USER}, "k.ptx")
    log = ("ptxas /tmp/ptxgen-x/k.ptx, line 7; error   : Unknown symbol 'foo'\n"
           "ptxas fatal   : Ptx assembly aborted due to errors")
    text, diags = rewrite_log(log, ptx, "ptxas")
    lines = text.splitlines()
    assert lines[0] == "/home/me/kernels.py:42: error: Unknown symbol 'foo'"
    assert lines[1] == "    PTX line 7: add.f32 %f1, %f2, foo;"
    assert lines[2] == "ptxas fatal   : Ptx assembly aborted due to errors"  # no location: unchanged
    assert len(diags) == 1  # the abort summary adds nothing
    d = diags[0]
    assert (d.code, d.severity, d.loc, d.message) == ("PTXAS-E", "error", USER, "Unknown symbol 'foo'")
    assert d.notes == ("PTX line 7: add.f32 %f1, %f2, foo;",)


def test_unmapped_line_points_at_the_ptx_itself():
    ptx = PtxText(PTX, {}, "k.ptx")
    text, diags = rewrite_log("ptxas /tmp/k.ptx, line 8; warning : something odd", ptx, "ptxas")
    assert text.splitlines()[0] == "k.ptx:8: warning: something odd"
    assert "PTX line 8: ret;" in text
    assert diags[0].code == "PTXAS-W" and diags[0].severity == "warning"
    assert diags[0].loc == SourceLoc("k.ptx", 8)


def test_driver_jit_log_codes():
    ptx = PtxText(PTX, {7: USER}, "k.ptx")
    log = ("ptxas application ptx input, line 7; error   : Unknown symbol 'foo'\n"
           "ptxas application ptx input, line 2; warning : old target\n"
           "ptxas fatal   : Ptx assembly aborted due to errors\n")
    text, diags = rewrite_log(log, ptx, "driver JIT")
    assert [d.code for d in diags] == ["JIT-E", "JIT-W"]
    assert diags[0].loc == USER
    assert "/home/me/kernels.py:42: error: Unknown symbol 'foo'" in text
    assert "k.ptx:2: warning: old target" in text
    assert "    PTX line 2: .target sm_90a" in text


def test_unlocated_warning_becomes_diagnostic_without_loc_and_passes_through():
    log = ("ptxas info    : Used 8 registers, used 0 barriers\n"
           "ptxas warning : Registers are spilled to local memory in function 'k', 8 bytes spill stores")
    text, diags = rewrite_log(log, PtxText(PTX), "ptxas")
    assert text == log
    assert len(diags) == 1 and diags[0].loc is None and diags[0].severity == "warning"


def test_line_out_of_range_has_no_quote_and_plain_string_ptx_works():
    text, diags = rewrite_log("ptxas x.ptx, line 99; error   : bad", PTX, "ptxas")
    assert text == "<ptx>:99: error: bad"
    assert diags[0].notes == ()


def test_tool_codes():
    assert tool_code("ptxas") == "PTXAS"
    assert tool_code("driver JIT") == "JIT"
    assert tool_code("nvlink") == "NVLINK"
