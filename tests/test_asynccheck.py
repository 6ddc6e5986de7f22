"""Async-protocol checks (ptxgen.asynccheck): each code fires on a broken kernel at the right line and is
silent on the fixed one; samples and the nvcc corpus stay (nearly) clean."""
import collections
import glob
import os
import re

import pytest

import ptxgen as pg
from ptxgen import lint as L
from ptxgen.asynccheck import ASYNC_CODES, build_cfg
from ptxgen.ir import Guard, Instr, Label, LabelDef
from ptxgen.lint import lint_module, lint_ptx, read_ptx

from test_samples import SAMPLE_TARGETS, load_sample

HERE = os.path.dirname(os.path.abspath(__file__))
ASYNC_DIR = os.path.join(HERE, "async")
BROKEN = sorted(os.path.basename(p) for p in glob.glob(os.path.join(ASYNC_DIR, "*.ptx")))
_EXPECT = re.compile(r"//\s*expect:\s*(PTX-\S+)\s+line\s+(\d+)")


def _async(ds):
    return [d for d in ds if d.code in ASYNC_CODES]


def _text(name):
    with open(os.path.join(ASYNC_DIR, name)) as f:
        return f.read()


# the fix for each broken kernel: (old, new) replacements, each applied once
FIXES = {
    "wgmma_fence_before_init.ptx": [("\twgmma.fence.sync.aligned;\n", ""),
                                    ("\twgmma.mma_async", "\twgmma.fence.sync.aligned;\n\twgmma.mma_async")],
    "wgmma_no_fence.ptx": [("\t@%p1 bra L_mma;\n\twgmma.fence.sync.aligned;\nL_mma:\n",
                            "\t@%p1 bra L_mma;\nL_mma:\n\twgmma.fence.sync.aligned;\n")],
    "wgmma_read_before_wait.ptx": [("\tst.global.f32 [%rd3], %f1;  // <- PTX-W-WGMMA-ACCESS\n"
                                    "\twgmma.wait_group.sync.aligned 0;\n",
                                    "\twgmma.wait_group.sync.aligned 0;\n\tst.global.f32 [%rd3], %f1;\n")],
    "wgmma_wait_one_too_many.ptx": [("wait_group.sync.aligned 1;", "wait_group.sync.aligned 0;")],
    "wgmma_wait_count.ptx": [("wait_group.sync.aligned 2;", "wait_group.sync.aligned 0;")],
    "wgmma_uncommitted.ptx": [("\tret;", "\twgmma.commit_group.sync.aligned;\n\twgmma.wait_group.sync.aligned 0;\n"
                                         "\tret;")],
    "proxy_st_then_wgmma.ptx": [("L_skip:\n\tbar.sync 0;", "L_skip:\n\tfence.proxy.async.shared::cta;\n\tbar.sync 0;")],
    "proxy_tma_store.ptx": [("\tbar.sync 0;", "\tfence.proxy.async.shared::cta;\n\tbar.sync 0;")],
    "mbar_init_no_fence.ptx": [("L_init_done:\n", "\tfence.mbarrier_init.release.cluster;\nL_init_done:\n"
                                                  "\tbar.sync 0;\n")],
    "mbar_uninit.ptx": [("\tmbarrier.arrive.shared.b64 %rd1, [%r1];  // <- PTX-W-MBAR-UNINIT\n"
                         "\tmbarrier.init.shared.b64 [%r1], 1;\n",
                         "\tmbarrier.init.shared.b64 [%r1], 1;\n\tbar.sync 0;\n"
                         "\tmbarrier.arrive.shared.b64 %rd1, [%r1];\n")],
    "mbar_expect_tx.ptx": [("[%r1], 2048;", "[%r1], 4096;")],
    "mbar_count.ptx": [("[%r1], 1;", "[%r1], 2;")],
    # %tid.x/128 is the same in a warpgroup, %tid.x/32 in a warp
    "divergent_wgmma.ptx": [("shr.u32 %r2, %r1, 1;", "shr.u32 %r2, %r1, 7;")],
    "divergent_ldmatrix.ptx": [("mov.u32 %r1, %laneid;\n\tand.b32 %r2, %r1, 15;",
                                "mov.u32 %r1, %tid.x;\n\tshr.u32 %r2, %r1, 5;")],
}


def test_every_broken_kernel_has_a_fix_and_every_code_a_kernel():
    assert set(FIXES) == set(BROKEN)
    codes = {_EXPECT.search(_text(n)).group(1) for n in BROKEN}
    assert codes == set(ASYNC_CODES)


@pytest.mark.parametrize("name", BROKEN)
def test_broken_kernel_fires_at_the_named_line(name):
    text = _text(name)
    m = _EXPECT.search(text)
    assert m, f"{name} has no '// expect: CODE line N' comment"
    code, line = m.group(1), int(m.group(2))
    assert f"// <- {code}" in text.split("\n")[line - 1]
    ds = lint_ptx(text, name)
    assert not [d for d in ds if d.severity == "error"], [str(d) for d in ds]
    got = [(d.code, d.loc.line) for d in _async(ds)]
    assert got == [(code, line)], [str(d) for d in ds]
    want_sev = "note" if code == "PTX-W-WGMMA-WAIT" else "warning"
    assert _async(ds)[0].severity == want_sev


@pytest.mark.parametrize("name", BROKEN)
def test_fixed_kernel_is_silent(name):
    text = _text(name)
    for old, new in FIXES[name]:
        assert old in text, (name, old)
        text = text.replace(old, new, 1)
    ds = lint_ptx(text, name)
    assert not [d for d in ds if d.severity == "error"], [str(d) for d in ds]
    assert _async(ds) == [], [str(d) for d in ds]


@pytest.mark.parametrize("name, target", SAMPLE_TARGETS)
def test_samples_are_clean(name, target):
    mod = load_sample(name).build(target)
    assert mod.check_async() == []
    assert _async(lint_module(mod)) == []
    assert _async(lint_ptx(mod.emit().text, f"{name}.ptx")) == []


# what fires on the nvcc corpus: the inline-asm wgmma kernel of tests/ptx/src/tensor_core.cu writes its
# zero accumulators after wgmma.fence (all builds), and the -G build spills them to the stack between
# wgmma.mma_async and wgmma.commit_group
CORPUS_FINDINGS = {
    "tensor_core.sm_90a.G.ptx": {"PTX-W-WGMMA-FENCE": 1, "PTX-W-WGMMA-ACCESS": 4},
    "tensor_core.sm_90a.O3.ptx": {"PTX-W-WGMMA-FENCE": 1},
    "tensor_core.sm_90a.lineinfo.ptx": {"PTX-W-WGMMA-FENCE": 1},
}


def test_corpus_findings():
    paths = sorted(glob.glob(os.path.join(HERE, "ptx", "**", "*.ptx*"), recursive=True))
    assert paths
    got = {}
    for p in paths:
        text = read_ptx(p)
        if not re.search(r"wgmma|mbarrier|cp\.async\.bulk", text):
            continue
        ds = lint_ptx(text, p)
        assert not [d for d in ds if d.code == "PTX-E-INTERNAL"]
        c = collections.Counter(d.code for d in _async(ds))
        if c:
            got[os.path.basename(p)] = dict(c)
    assert got == CORPUS_FINDINGS


# ---------------------------------------------------------------------------------------------- builder
def _wgmma_kernel(fence_after_init: bool, proxy_fence: bool):
    m = pg.Module("sm_90a")
    k = m.entry("k", reqntid=128)
    sa = k.shared("sa", 2048, align=1024)
    base = k.mov(sa, type=pg.u32)
    k.st(base, k.mov(0, type=pg.u32), pg.b32, space="shared")
    if proxy_fence:
        k.fence_proxy_async("shared::cta")
    k.bar_sync(0)
    acc = k.wgmma_fragment("d", "m64n8k16", dtype="f32", atype="bf16", name="acc")
    if not fence_after_init:
        k.wgmma_fence()
    for r in acc:
        k.mov(0.0, dst=r)
    if fence_after_init:
        k.wgmma_fence()
    desc = k.cvt(base, pg.u64, pg.u32)
    k.wgmma_mma_async("m64n8k16", acc, desc, desc, dtype="f32", atype="bf16", btype="bf16")  # MMA-LINE
    k.wgmma_commit_group()
    k.wgmma_wait_group(0)
    k.ret()
    return m


def _mma_line():
    with open(__file__) as f:
        return next(i + 1 for i, ln in enumerate(f) if ln.rstrip().endswith("# MMA-LINE"))


def test_builder_output_reports_at_the_python_line():
    assert _wgmma_kernel(True, True).check_async() == []
    ds = _wgmma_kernel(False, False).check_async()
    assert sorted(d.code for d in ds) == ["PTX-W-PROXY-FENCE", "PTX-W-WGMMA-FENCE"]
    assert all(d.loc.file == __file__ and d.loc.line == _mma_line() for d in ds)
    assert all(d.severity == "warning" for d in ds)
    # the same findings through lint_module and through the emitted text
    assert sorted(d.code for d in _async(lint_module(_wgmma_kernel(False, False)))) == \
        ["PTX-W-PROXY-FENCE", "PTX-W-WGMMA-FENCE"]
    assert sorted(d.code for d in _async(lint_ptx(_wgmma_kernel(False, False).emit().text))) == \
        ["PTX-W-PROXY-FENCE", "PTX-W-WGMMA-FENCE"]


_TMA = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .align 64 .b8 k_param_tmap[128])
{
\t.shared .align 8 .b64 bar;
\t.shared .align 1024 .b8 buf[8192];
\t.reg .b32 %r<4>;
\t.reg .b64 %rd<3>;
\tmov.u32 %r1, bar;
\tmov.u32 %r2, buf;
\tmov.u32 %r3, 0;
\tmbarrier.init.shared.b64 [%r1], 1;
\tfence.proxy.async.shared::cta;
\tbar.sync 0;
\tmbarrier.arrive.expect_tx.shared.b64 %rd2, [%r1], 4096;
\tcvta.param.u64 %rd1, k_param_tmap;
\tcp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r2], [%rd1, {%r3, %r3}], [%r1];
\tret;
}
"""


def test_tensor_copy_bytes_come_from_the_box_bytes_option():
    assert not [d for d in lint_ptx(_TMA) if d.severity == "error"]
    assert _async(lint_ptx(_TMA)) == []  # box size unknown: not checked
    assert _async(lint_ptx(_TMA, box_bytes={"tmap": 4096})) == []
    ds = _async(lint_ptx(_TMA, box_bytes={"tmap": 8192}))
    assert [(d.code, d.loc.line) for d in ds] == [("PTX-W-MBAR-TX", 16)]


def test_pipelined_wgmma_loop_is_clean():
    # the steady state of a 2-deep pipeline: issue into one accumulator set, retire the older group
    text = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 n)
{
\t.reg .pred %p<2>;
\t.reg .f32 %f<5>;
\t.reg .b32 %r<3>;
\t.reg .b64 %rd<4>;
\tld.param.u32 %r1, [n];
\tmov.b64 %rd1, 0;
\tmov.b64 %rd2, 0;
\tmov.u32 %r2, 0;
\twgmma.fence.sync.aligned;
L_loop:
\twgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, 0, 1, 1, 0, 0;
\twgmma.commit_group.sync.aligned;
\twgmma.wait_group.sync.aligned 1;
\tadd.s32 %r2, %r2, 1;
\tadd.s64 %rd1, %rd1, 2;
\tsetp.lt.s32 %p1, %r2, %r1;
\t@%p1 bra L_loop;
\twgmma.wait_group.sync.aligned 0;
\tld.param.u64 %rd3, [out];
\tst.global.f32 [%rd3], %f1;
\tret;
}
"""
    ds = lint_ptx(text)
    assert not [d for d in ds if d.severity == "error"], [str(d) for d in ds]
    assert _async(ds) == [], [str(d) for d in ds]


def test_cfg_blocks_and_edges():
    body = [Instr("mov.u32", ()), LabelDef(Label("L1")), Instr("add.u32", ()),
            Instr("bra", (Label("L1"),)), Instr("ret", ())]
    blocks = build_cfg(body)
    assert [len(b.instrs) for b in blocks[:3]] == [1, 2, 1]
    assert blocks[0].succs == [1] and blocks[1].succs == [1] and blocks[2].succs == []
    assert blocks[1].preds == [0, 1]
    # a guarded branch falls through too
    body[3] = Instr("bra", (Label("L1"),), guard=Guard(body_reg()))
    assert build_cfg(body)[1].succs == [1, 2]


def body_reg():
    m = pg.Module("sm_90a")
    k = m.entry("k")
    return k.reg(pg.pred)


def test_werror_promotes_async_warnings(capsys):
    from ptxgen.cli import main
    path = os.path.join(ASYNC_DIR, "wgmma_uncommitted.ptx")
    assert main(["lint", path]) == 0
    assert main(["lint", "--werror", path]) == 1
    assert "PTX-W-WGMMA-COMMIT" in capsys.readouterr().out


def test_codes_are_in_the_lint_table_and_readme():
    for code in ASYNC_CODES:
        assert code in L.CODES
        assert f"| {code} |" in L.__doc__
    with open(os.path.join(HERE, "..", "README.md")) as f:
        readme = f.read()
    section = readme[readme.index("## Async-protocol checks"):]
    for code in ASYNC_CODES:
        assert code in section


def test_warp_uniform_condition_is_enough_for_warp_collectives_only():
    text = _text("divergent_wgmma.ptx").replace("shr.u32 %r2, %r1, 1;", "shr.u32 %r2, %r1, 5;")
    assert [(d.code, d.loc.line) for d in _async(lint_ptx(text))] == [("PTX-W-DIVERGENT", 18)]
    assert "differ between warps" in _async(lint_ptx(text))[0].message
    text = _text("divergent_ldmatrix.ptx").replace("mov.u32 %r1, %laneid;\n\tand.b32 %r2, %r1, 15;",
                                                   "mov.u32 %r1, %tid.x;\n\tshr.u32 %r2, %r1, 7;")
    assert _async(lint_ptx(text)) == []


def test_elected_thread_work_is_not_a_collective():
    # elect.sync itself runs in the whole warp; what the elected lane does under its predicate is not checked
    text = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k()
{
\t.shared .align 8 .b64 bar;
\t.reg .pred %p<3>;
\t.reg .b32 %r<4>;
\tmov.u32 %r1, %tid.x;
\tshr.u32 %r2, %r1, 5;
\tsetp.eq.u32 %p1, %r2, 0;
\t@!%p1 bra L_done;
\telect.sync %r3|%p2, -1;
\t@!%p2 bra L_done;
\tmov.u32 %r3, bar;
\tmbarrier.init.shared.b64 [%r3], 1;
\tfence.mbarrier_init.release.cluster;
L_done:
\tbar.sync 0;
\tret;
}
"""
    ds = lint_ptx(text)
    assert not [d for d in ds if d.severity == "error"], [str(d) for d in ds]
    assert _async(ds) == []


def test_barrier_arrays_initialised_in_a_loop_are_not_uninitialised():
    text = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k()
{
\t.shared .align 8 .b64 bars[4];
\t.reg .pred %p<2>;
\t.reg .b32 %r<5>;
\t.reg .b64 %rd<2>;
\tmov.u32 %r1, bars;
\tmov.u32 %r2, 0;
L_init:
\tshl.b32 %r3, %r2, 3;
\tadd.u32 %r4, %r1, %r3;
\tmbarrier.init.shared.b64 [%r4], 1;
\tadd.u32 %r2, %r2, 1;
\tsetp.lt.u32 %p1, %r2, 4;
\t@%p1 bra L_init;
\tfence.mbarrier_init.release.cluster;
\tbar.sync 0;
\tmbarrier.arrive.shared.b64 %rd1, [bars+8];
\tret;
}
"""
    ds = lint_ptx(text)
    assert not [d for d in ds if d.severity == "error"], [str(d) for d in ds]
    assert _async(ds) == []


def test_device_functions_start_fenced_and_may_leave_groups_to_the_caller():
    text = _text("wgmma_uncommitted.ptx").replace(".visible .entry k()", ".visible .func k()")
    text = text.replace("\twgmma.fence.sync.aligned;\n", "")
    assert _async(lint_ptx(text)) == []
