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


def _edited(text, *old_new):
    """text with each (old, new) replaced once; every old must be there."""
    for old, new in old_new:
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


def _found(text):
    """(code, line) of each async-protocol finding in text, which must lint without errors."""
    ds = lint_ptx(text)
    assert not [d for d in ds if d.severity == "error"], [str(d) for d in ds]
    return [(d.code, d.loc.line) for d in _async(ds)]


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
    "proxy_publish.ptx": [("\tmov.u32 %r7, 0;\n\tmbarrier.arrive", "\tfence.proxy.async.shared::cta;\n\tmbarrier.arrive")],
    "mbar_init_no_fence.ptx": [("L_init_done:\n", "\tfence.mbarrier_init.release.cluster;\nL_init_done:\n"
                                                  "\tbar.sync 0;\n")],
    "mbar_uninit.ptx": [("\tmbarrier.arrive.shared.b64 %rd1, [%r1];  // <- PTX-W-MBAR-UNINIT\n"
                         "\tmbarrier.init.shared.b64 [%r1], 1;\n",
                         "\tmbarrier.init.shared.b64 [%r1], 1;\n\tbar.sync 0;\n"
                         "\tmbarrier.arrive.shared.b64 %rd1, [%r1];\n")],
    "mbar_expect_tx.ptx": [("[%r1], 2048;", "[%r1], 4096;")],
    "mbar_count.ptx": [("[%r1], 1;", "[%r1], 2;")],
    # 128 threads arrive once per phase
    "mbar_count_threads.ptx": [("[%r3], 32;", "[%r3], 128;")],
    # the producer is a whole warpgroup: warps 0-3 produce, warps 4-7 run wgmma
    "warpgroup_align.ptx": [(".reqntid 160, 1, 1", ".reqntid 256, 1, 1"),
                            ("setp.eq.u32 %p1, %r2, 0;", "setp.lt.u32 %p1, %r2, 4;")],
    # flip the phase bit every round (one barrier: each round is one phase)
    "mbar_parity.ptx": [("\tbar.sync 0;\n\tadd.u32 %r5", "\tbar.sync 0;\n\txor.b32 %r6, %r6, 1;\n\tadd.u32 %r5")],
    # %tid.x/128 is the same in a warpgroup, %tid.x/32 in a warp
    "divergent_wgmma.ptx": [("shr.u32 %r2, %r1, 1;", "shr.u32 %r2, %r1, 7;")],
    "divergent_ldmatrix.ptx": [("mov.u32 %r1, %laneid;\n\tand.b32 %r2, %r1, 15;",
                                "mov.u32 %r1, %tid.x;\n\tshr.u32 %r2, %r1, 5;")],
    # thread 0 waits until its store has read the tile before the barrier that lets every thread write it
    "bulk_access.ptx": [("L_next:\n\tbar.sync 0;", "\tcp.async.bulk.wait_group.read 0;\nL_next:\n\tbar.sync 0;")],
    # the commit after the tail tile's store too
    "bulk_commit.ptx": [("\tcp.async.bulk.commit_group;\n\t@%p1", "\t@%p1"),
                        ("\tcp.async.bulk.wait_group.read 0;", "\tcp.async.bulk.commit_group;\n"
                                                              "\tcp.async.bulk.wait_group.read 0;")],
    "bulk_wait.ptx": [("\tret;", "\tcp.async.bulk.wait_group.read 0;\n\tret;")],
    "bulk_visible.ptx": [("cp.async.bulk.wait_group.read 0;", "cp.async.bulk.wait_group 0;")],
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
    ds = lint_ptx(_edited(_text(name), *FIXES[name]), name)
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
    # a warp index compared with a value known only at run time: warp-uniform, not warpgroup-uniform
    text = _text("divergent_wgmma.ptx").replace("shr.u32 %r2, %r1, 1;", "shr.u32 %r2, %r1, 5;").replace(
        ".param .u64 out)", ".param .u64 out, .param .u32 n)").replace(
        "setp.lt.u32 %p1, %r2, 24;", "ld.param.u32 %r3, [n];\n\tsetp.lt.u32 %p1, %r2, %r3;").replace(
        ".reg .b32 %r<3>;", ".reg .b32 %r<4>;")
    assert [(d.code, d.loc.line) for d in _async(lint_ptx(text))] == [("PTX-W-DIVERGENT", 19)]
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


def test_cli_box_bytes_option(tmp_path, capsys):
    from ptxgen.cli import build_parser, main
    path = tmp_path / "tma.ptx"
    path.write_text(_TMA)
    assert main(["lint", "--werror", str(path)]) == 0  # box size unknown: not checked
    assert main(["lint", "--werror", "--box-bytes", "tmap=4096", str(path)]) == 0
    capsys.readouterr()
    assert main(["lint", "--werror", "--box-bytes", "other=64", "--box-bytes", "tmap=8192", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"{path}:16:" in out and "PTX-W-MBAR-TX" in out
    # the full parameter name works too, and hex byte counts
    assert main(["lint", "--werror", "--box-bytes", "k_param_tmap=0x1000", str(path)]) == 0
    for bad in ("tmap", "tmap=", "=4096", "tmap=-1", "tmap=lots"):
        assert main(["lint", "--box-bytes", bad, str(path)]) == 2
        assert "--box-bytes" in capsys.readouterr().err
    lint = next(a for a in build_parser()._subparsers._group_actions[0].choices.items() if a[0] == "lint")[1]
    assert "--box-bytes NAME=BYTES" in lint.format_help() and "expect_tx" in lint.format_help()



# ------------------------------------------------------------------------------------ phase parity
def test_parity_constant_and_ring_of_barriers():
    base = _text("mbar_parity.ptx")
    # a constant parity fires the same way
    text = base.replace("[%r3], %r6;", "[%r3], 0;")
    assert _found(text) == [("PTX-W-MBAR-PARITY", 38)]
    # a parity computed in the loop from the phase register, which the loop never changes: still invariant
    text = base.replace("[%r3], %r6;", "[%r3], %r10;").replace("L_k:\n", "L_k:\n\txor.b32 %r10, %r6, 1;\n")
    assert _found(text) == [("PTX-W-MBAR-PARITY", 39)]
    # a ring of two barriers indexed by k & 1: the same ring comes round again with the same parity
    ring = base.replace(".shared .align 8 .b64 bar;", ".shared .align 8 .b64 bar[2];").replace(
        "mbarrier.init.shared.b64 [%r3], 1;", "mbarrier.init.shared.b64 [%r3], 1;\n\tmbarrier.init.shared.b64 "
        "[%r3+8], 1;").replace("L_k:\n", "L_k:\n\tand.b32 %r9, %r5, 1;\n\tshl.b32 %r10, %r9, 3;\n"
                                       "\tadd.u32 %r11, %r3, %r10;\n").replace("[%r3]", "[%r11]")
    ring = ring.replace("mbarrier.init.shared.b64 [%r11], 1;", "mbarrier.init.shared.b64 [%r3], 1;")
    got = _found(ring)
    assert [c for c, _ in got] == ["PTX-W-MBAR-PARITY"]
    # the fix for a ring of 2: flip the phase when the ring wraps to stage 0
    fixed = ring.replace("\tbar.sync 0;\n\tadd.u32 %r5", "\tbar.sync 0;\n\txor.b32 %r6, %r6, %r9;\n\tadd.u32 %r5")
    assert _found(fixed) == []
    # a different barrier each iteration, never coming round (no wrap): not known to be wrong
    walk = ring.replace("and.b32 %r9, %r5, 1;", "mov.u32 %r9, %r5;")
    assert _found(walk) == []


def test_parity_retry_loops_and_two_phase_loops_are_clean():
    base = _text("mbar_parity.ptx")
    # the retry loop alone (no surrounding pipeline loop), with a %clock timeout like the builder's
    text = base.replace("\t@%p3 bra L_k;\n", "")
    text = text.replace("\t@!%p2 bra L_wait;\n", "\t@%p2 bra L_ok;\n\tmov.u64 %rd6, %clock64;\n"
                        "\tsetp.gt.u64 %p4, %rd6, 2000000000;\n\t@%p4 trap;\n\tbra L_wait;\nL_ok:\n")
    assert _found(text) == []
    # two phases per iteration: wait on parity 0, then on parity 1 of the same barrier
    two = base.replace("[%r3], %r6;", "[%r3], 0;").replace(
        "\tbar.sync 0;\n\tadd.u32 %r5",
        "\tbar.sync 0;\n\t@!%p1 bra L_issued2;\n\tmbarrier.arrive.expect_tx.shared.b64 %rd3, [%r3], 4096;\n"
        "\tcp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r4], [%rd5], 4096, [%r3];\n"
        "L_issued2:\nL_wait2:\n\tmbarrier.try_wait.parity.shared.b64 %p2, [%r3], 1;\n\t@!%p2 bra L_wait2;\n"
        "\tbar.sync 0;\n\tadd.u32 %r5")
    assert _found(two) == []
    # the parity computed from the iteration: (k >> log2(stages)) & 1 changes in the loop
    it = base.replace("[%r3], %r6;", "[%r3], %r10;").replace("L_k:\n", "L_k:\n\tand.b32 %r10, %r5, 1;\n")
    assert _found(it) == []



# ------------------------------------------------------------------------------ arrivals per phase
def _count_variant(old_new, *more):
    return _found(_edited(_text("mbar_count_threads.ptx"), old_new, *more))


def test_arrivals_per_phase_from_the_block_size():
    fired = [("PTX-W-MBAR-COUNT", 20)]
    # two arrives per thread between waits: 256 per phase
    two = ("\tmbarrier.arrive.shared.b64 %rd1, [%r3];\n", "\tmbarrier.arrive.shared.b64 %rd1, [%r3];\n"
           "\tmbarrier.arrive.shared.b64 %rd2, [%r3];\n")
    assert _count_variant(("[%r3], 32;", "[%r3], 128;"), two) == fired
    assert _count_variant(("[%r3], 32;", "[%r3], 256;"), two) == []
    # an arrive count operand counts
    assert _count_variant(("[%r3], 32;", "[%r3], 256;"), ("%rd1, [%r3];", "%rd1, [%r3], 2;")) == []
    # 3-d .reqntid: 32 x 2 x 2 threads
    assert _count_variant((".reqntid 128, 1, 1", ".reqntid 32, 2, 2")) == fired
    assert _count_variant((".reqntid 128, 1, 1", ".reqntid 32, 1, 1")) == []
    # no block size: not checked
    assert _count_variant((".reqntid 128, 1, 1\n", "")) == []
    # .maxntid is an upper bound: too few arrivals are certain, too many are not
    assert _count_variant((".reqntid", ".maxntid")) == []
    assert _count_variant((".reqntid 128", ".maxntid 64"), ("[%r3], 32;", "[%r3], 128;")) == fired


def test_arrivals_by_some_threads_are_not_counted():
    # one thread per warp arrives (a lane test), or an elected thread: the count is not known statically
    lane = ("\tmbarrier.arrive.shared.b64 %rd1, [%r3];\n",
            "\tand.b32 %r7, %r2, 31;\n\tsetp.eq.u32 %p1, %r7, 0;\n\t@%p1 mbarrier.arrive.shared.b64 %rd1, [%r3];\n")
    assert _count_variant(lane) == []
    br = ("\tmbarrier.arrive.shared.b64 %rd1, [%r3];\n",
          "\t@!%p1 bra L_arrived;\n\tmbarrier.arrive.shared.b64 %rd1, [%r3];\nL_arrived:\n")
    assert _count_variant(br) == []
    elect = ("\tmbarrier.arrive.shared.b64 %rd1, [%r3];\n",
             "\telect.sync %r7|%p1, -1;\n\t@!%p1 bra L_arrived;\n\tmbarrier.arrive.shared.b64 %rd1, [%r3];\n"
             "L_arrived:\n")
    assert _count_variant(elect) == []
    # a thread-dependent early exit leaves threads out
    ex = ("\tbar.sync 0;\nL_round:", "\tbar.sync 0;\n\tsetp.gt.u32 %p3, %r2, 40;\n\t@%p3 ret;\nL_round:")
    assert _count_variant(ex) == []
    # arrives in a loop whose trip count is unknown, with the wait after it: not a constant per phase
    loop = ("\tmbarrier.arrive.shared.b64 %rd1, [%r3];\n",
            "\tmov.u32 %r7, 0;\nL_arr:\n\tmbarrier.arrive.shared.b64 %rd1, [%r3];\n\tadd.u32 %r7, %r7, 1;\n"
            "\tsetp.lt.u32 %p3, %r7, %r1;\n\t@%p3 bra L_arr;\n")
    assert _count_variant(loop) == []


def test_builder_block_size_reaches_the_arrival_check():
    def kernel(count):
        m = pg.Module("sm_90a")
        k = m.entry("k", reqntid=64)
        bar = k.shared("bar", 8, align=8)
        b = k.mov(bar, type=pg.u32)
        k.mbarrier_init(b, count)
        k.fence_mbarrier_init()
        k.bar_sync(0)
        k.mbarrier_arrive(b)
        k.mbarrier_try_wait(b, parity=0)
        k.ret()
        return m
    assert kernel(64).check_async() == []
    assert [d.code for d in kernel(1).check_async()] == ["PTX-W-MBAR-COUNT"]



# ----------------------------------------------------------------------------------- warpgroup alignment
def _align_variant(*old_new, name="warpgroup_align.ptx"):
    return _found(_edited(_text(name), *old_new))


def test_warpgroup_alignment_from_constant_conditions():
    fired = [("PTX-W-WARPGROUP-ALIGN", 23)]
    cond = "setp.eq.u32 %p1, %r2, 0;"
    # %tid.x < 64 (two warps): the boundary at warp 2 splits warpgroup 0
    assert _align_variant((cond, "setp.lt.u32 %p1, %r1, 64;")) == fired
    # the same comparison written with the constant first, or through a register holding it
    assert _align_variant((cond, "setp.gt.u32 %p1, 64, %r1;")) == fired
    # %tid.x / 128 or %tid.x < 128: whole warpgroups
    assert _align_variant((cond, "setp.lt.u32 %p1, %r1, 128;"), (".reqntid 160", ".reqntid 256")) == []
    assert _align_variant(("shr.u32 %r2, %r1, 5;", "shr.u32 %r2, %r1, 7;"),
                          (".reqntid 160", ".reqntid 256")) == []
    # a boundary at or past the block size never splits anything: %tid.x < 160 with 160 threads
    assert _align_variant((cond, "setp.ge.u32 %p1, %r1, 160;")) == []
    # an and of two warp ranges: warps 4..7 of 256 threads are one whole warpgroup
    assert _align_variant((".reqntid 160", ".reqntid 256"), (cond, "setp.lt.u32 %p0, %r2, 4;\n\t"
                          "setp.ge.u32 %p1, %r2, 8;\n\tor.pred %p2, %p0, %p1;"),
                          (".reg .pred %p<2>;", ".reg .pred %p<3>;"), ("@%p1 bra", "@%p2 bra")) == []
    # a boundary inside a warp stays PTX-W-DIVERGENT
    assert _align_variant((cond, "setp.lt.u32 %p1, %r1, 48;")) == [("PTX-W-DIVERGENT", 23)]
    # setmaxnreg under a guard at warp 1
    assert _align_variant(("\twgmma.fence.sync.aligned;  // <- PTX-W-WARPGROUP-ALIGN\n",
                           "\twgmma.fence.sync.aligned;  // <- PTX-W-WARPGROUP-ALIGN\n"
                           "\tsetp.ne.u32 %p0, %r2, 0;\n\t@%p0 setmaxnreg.inc.sync.aligned.u32 232;\n")) == \
        fired + [("PTX-W-WARPGROUP-ALIGN", 25)]
    # warp collectives are fine at any warp boundary
    text = _text("divergent_ldmatrix.ptx").replace("mov.u32 %r1, %laneid;\n\tand.b32 %r2, %r1, 15;",
                                                   "mov.u32 %r1, %tid.x;\n\tshr.u32 %r2, %r1, 5;")
    assert _async(lint_ptx(text)) == []


# ----------------------------------------------------------------------- proxy fence per shared symbol
_DISJOINT = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 out)
.reqntid 128, 1, 1
{
\t.shared .align 1024 .b8 smem_a[2048];
\t.shared .align 1024 .b8 smem_b[2048];
\t.shared .align 16 .b8 smem_c[512];
\t.reg .f32 %f<5>;
\t.reg .b32 %r<8>;
\t.reg .b64 %rd<8>;
\tmov.u32 %r1, %tid.x;
\tshl.b32 %r2, %r1, 2;
\tmov.u32 %r3, smem_c;
\tadd.u32 %r4, %r3, %r2;
\tmov.u32 %r5, 0;
\tst.shared.b32 [%r4], %r5;
\tbar.sync 0;
\tmov.u32 %r6, smem_a;
\tcvt.u64.u32 %rd1, %r6;
\tshr.u64 %rd1, %rd1, 4;
\tand.b64 %rd1, %rd1, 16383;
\tor.b64 %rd1, %rd1, 4611686293305294848;
\tmov.u32 %r7, smem_b;
\tcvt.u64.u32 %rd2, %r7;
\tshr.u64 %rd2, %rd2, 4;
\tand.b64 %rd2, %rd2, 16383;
\tor.b64 %rd2, %rd2, 4611686293305294848;
\tmov.f32 %f1, 0f00000000;
\tmov.f32 %f2, 0f00000000;
\tmov.f32 %f3, 0f00000000;
\tmov.f32 %f4, 0f00000000;
\twgmma.fence.sync.aligned;
\twgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, 1, 1, 1, 0, 0;
\twgmma.commit_group.sync.aligned;
\twgmma.wait_group.sync.aligned 0;
\tld.param.u64 %rd3, [out];
\tst.global.f32 [%rd3], %f1;
\tret;
}
"""


def _disjoint_variant(*old_new):
    return _found(_edited(_DISJOINT, *old_new))


def test_proxy_fence_tracks_shared_symbols_apart():
    fired = [("PTX-W-PROXY-FENCE", 35)]
    # st.shared to smem_c, then wgmma reads smem_a and smem_b through descriptors: disjoint, no fence needed
    assert _disjoint_variant() == []
    # ... but a store into the tile that B is read from needs the fence
    assert _disjoint_variant(("mov.u32 %r3, smem_c;", "mov.u32 %r3, smem_b;")) == fired
    assert _disjoint_variant(("mov.u32 %r3, smem_c;\n\tadd.u32 %r4, %r3, %r2;",
                              "mov.u32 %r3, smem_c;\n\tmov.u32 %r4, smem_a;\n\tadd.u32 %r4, %r4, %r2;")) == \
        [("PTX-W-PROXY-FENCE", 36)]
    # a descriptor or a store address that is not derived from a known symbol could point anywhere
    assert _disjoint_variant(("mov.u32 %r7, smem_b;", "ld.shared.u32 %r7, [smem_c];")) == fired
    # registers are tracked over all their definitions: one register reused for every address mixes them
    assert _disjoint_variant(("mov.u32 %r6, smem_a;\n\tcvt.u64.u32 %rd1, %r6;",
                              "mov.u32 %r3, smem_a;\n\tcvt.u64.u32 %rd1, %r3;")) == fired
    assert _disjoint_variant(("add.u32 %r4, %r3, %r2;", "mov.u32 %r4, %r2;")) == fired
    # every .extern .shared array starts at the same dynamic shared memory
    # (at module scope, where nvcc puts them)
    ext = _disjoint_variant(("\t.shared .align 1024 .b8 smem_a[2048];\n", ""),
                            ("\t.shared .align 16 .b8 smem_c[512];\n", ""),
                            (".visible .entry", ".extern .shared .align 1024 .b8 smem_a[];\n"
                             ".extern .shared .align 16 .b8 smem_c[];\n.visible .entry"))
    assert ext == fired
    # ... while one .extern array and one static array are apart
    one = _disjoint_variant(("\t.shared .align 1024 .b8 smem_a[2048];\n", ""),
                            (".visible .entry", ".extern .shared .align 1024 .b8 smem_a[];\n.visible .entry"))
    assert one == []
    # the fence clears everything
    assert _disjoint_variant(("mov.u32 %r3, smem_c;", "mov.u32 %r3, smem_b;"),
                             ("\tbar.sync 0;\n", "\tfence.proxy.async.shared::cta;\n\tbar.sync 0;\n")) == []


def test_tma_store_reads_only_its_source_tile():
    text = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 out)
{
\t.shared .align 128 .b8 tile[1024];
\t.shared .align 128 .b8 stage[1024];
\t.reg .b32 %r<4>;
\t.reg .b64 %rd<3>;
\tmov.u32 %r1, %tid.x;
\tshl.b32 %r2, %r1, 2;
\tmov.u32 %r3, stage;
\tadd.u32 %r3, %r3, %r2;
\tst.shared.b32 [%r3], %r1;
\tbar.sync 0;
\tld.param.u64 %rd1, [out];
\tcvta.to.global.u64 %rd2, %rd1;
\tcp.async.bulk.global.shared::cta.bulk_group [%rd2], [tile], 1024;
\tcp.async.bulk.commit_group;
\tcp.async.bulk.wait_group 0;
\tret;
}
"""
    ds = lint_ptx(text)
    assert not [d for d in ds if d.severity == "error"], [str(d) for d in ds]
    assert _async(ds) == []
    ds = _async(lint_ptx(text.replace("[tile], 1024;", "[stage], 1024;")))
    assert [(d.code, d.loc.line) for d in ds] == [("PTX-W-PROXY-FENCE", 18)]



def test_parity_on_the_warp_specialised_hopper_sample():
    # producer and consumer loops each flip their phase when the stage ring wraps; without the flip they fire
    mod = load_sample("gemm_hopper").build("sm_90a")
    text = mod.emit().text
    assert _async(lint_ptx(text)) == []
    flips = re.findall(r"\t@%p\w+ xor\.b32 (%\w+), \1, 1;\n", text)
    if not flips:
        pytest.skip("the sample no longer flips its phase with a guarded xor")
    lines = re.finditer(r"\t@%p\w+ xor\.b32 (%\w+), \1, 1;\n", text)
    first = next(lines)
    broken = text[:first.start()] + text[first.end():]
    assert {d.code for d in _async(lint_ptx(broken))} == {"PTX-W-MBAR-PARITY"}


# ------------------------------------------------------------------ modifiers in another order that ptxas takes
# each protocol opcode of the broken kernels -> the same instruction with its modifiers in another order that
# ptxas 13.0 assembles (test_reordered_kernels_assemble); legality.canonical() maps each back
REORDERED = {
    "wgmma.fence.sync.aligned": "wgmma.fence.aligned.sync",
    "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16": "wgmma.mma_async.m64n8k16.aligned.f32.sync.f16.f16",
    "wgmma.commit_group.sync.aligned": "wgmma.commit_group.aligned.sync",
    "wgmma.wait_group.sync.aligned": "wgmma.wait_group.aligned.sync",
    "mbarrier.init.shared.b64": "mbarrier.init.b64.shared",
    "mbarrier.arrive.shared.b64": "mbarrier.arrive.b64.shared",
    "mbarrier.arrive.expect_tx.shared.b64": "mbarrier.arrive.expect_tx.b64.shared",
    "mbarrier.try_wait.parity.shared.b64": "mbarrier.try_wait.parity.b64.shared",
    "fence.mbarrier_init.release.cluster": "fence.cluster.release.mbarrier_init",
    "fence.proxy.async.shared::cta": "fence.proxy.shared::cta.async",
    "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group": "cp.async.bulk.tensor.bulk_group.global.2d.shared::cta",
    "cp.async.bulk.global.shared::cta.bulk_group": "cp.async.bulk.bulk_group.global.shared::cta",
    "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes":
        "cp.async.bulk.mbarrier::complete_tx::bytes.shared::cluster.global",
    "stmatrix.sync.aligned.m8n8.x1.shared.b16": "stmatrix.shared.x1.aligned.m8n8.sync.b16",
    "ldmatrix.sync.aligned.m8n8.x4.shared.b16": "ldmatrix.aligned.b16.x4.shared.sync.m8n8",
}
_OPCODE_AT = re.compile(r"(?m)^(\s*(?:@!?%\w+\s+)?)([a-z][\w.:]*)(?=[\s;])")


def _reordered(text):
    """text with every opcode of REORDERED in its other order; at least one must be there."""
    out = _OPCODE_AT.sub(lambda m: m.group(1) + REORDERED.get(m.group(2), m.group(2)), text)
    assert out != text
    return out


def _findings(text, name):
    """Every async-protocol finding of text as (code, line, column, message, notes, span, severity)."""
    ds = lint_ptx(text, name)
    assert not [d for d in ds if d.severity == "error"], [str(d) for d in ds]
    return [(d.code, d.loc.line, d.loc.col, d.message, tuple(d.notes), d.span, d.severity) for d in _async(ds)]


def test_reordered_spellings_are_the_canonical_ones():
    from ptxgen.legality import canonical
    for op, other in REORDERED.items():
        assert canonical(other) == op, other


@pytest.mark.parametrize("name", BROKEN)
def test_reordered_broken_kernel_gives_the_same_finding(name):
    text = _text(name)
    code = _EXPECT.search(text).group(1)
    want = _findings(text, name)
    assert [f[0] for f in want] == [code]
    assert _findings(_reordered(text), name) == want


@pytest.mark.parametrize("name", BROKEN)
def test_reordered_fixed_kernel_is_silent(name):
    fixed = _reordered(_edited(_text(name), *FIXES[name]))
    assert _findings(fixed, name) == []


@pytest.mark.ptxas
@pytest.mark.parametrize("name", BROKEN)
def test_reordered_kernels_assemble(name, tmp_path):
    import subprocess
    for i, text in enumerate((_text(name), _edited(_text(name), *FIXES[name]))):
        path = tmp_path / f"k{i}.ptx"
        path.write_text(_reordered(text))
        p = subprocess.run(["ptxas", "-arch=sm_90a", str(path), "-o", str(tmp_path / "k.cubin")],
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr


# a plain bulk copy or reduction from shared to global reads through the async proxy too, in any order of its
# modifiers that ptxas takes; only a fence of the shared state space (or of all of them) orders the writes before it
_BULK_STORES = ["cp.async.bulk.global.shared::cta.bulk_group", "cp.async.bulk.global.bulk_group.shared::cta",
                "cp.async.bulk.bulk_group.global.shared::cta",
                "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32",
                "cp.reduce.async.bulk.add.global.bulk_group.shared::cta.f32"]
_PROXY_FENCES = ["", "fence.proxy.async.shared::cta;", "fence.proxy.shared::cta.async;", "fence.proxy.async;",
                 "fence.proxy.async.global;", "fence.proxy.global.async;"]
# those that order generic-proxy writes of shared memory before an async-proxy read of it
_SHARED_FENCES = ("fence.proxy.async.shared::cta;", "fence.proxy.shared::cta.async;", "fence.proxy.async;")


def _assemble_each(tmp_path, kernels):
    """Each (what, PTX text) of kernels assembles with ptxas for sm_90a."""
    import subprocess
    for i, (what, text) in enumerate(kernels):
        path = tmp_path / f"k{i}.ptx"
        path.write_text(text)
        p = subprocess.run(["ptxas", "-arch=sm_90a", str(path), "-o", str(tmp_path / "k.cubin")],
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, (what, p.stderr)


def _bulk_store_kernel(opcode, fence):
    return _edited(_text("proxy_tma_store.ptx"),
                   ("\tbar.sync 0;", f"\t{fence}\n\tbar.sync 0;"),
                   ("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd1, {%r3, %r3}], [%r1];",
                    f"{opcode} [%rd1], [%r1], 256;"))


@pytest.mark.parametrize("opcode", _BULK_STORES)
@pytest.mark.parametrize("fence", _PROXY_FENCES)
def test_bulk_store_in_any_order_needs_a_shared_proxy_fence(opcode, fence):
    got = [f[0] for f in _findings(_bulk_store_kernel(opcode, fence), "bulk.ptx")]
    # a fence of the global state space alone does not order the shared writes
    want = [] if fence in _SHARED_FENCES else ["PTX-W-PROXY-FENCE"]
    assert got == want


@pytest.mark.ptxas
def test_bulk_store_kernels_assemble(tmp_path):
    _assemble_each(tmp_path, [((o, f), _bulk_store_kernel(o, f)) for o in _BULK_STORES for f in _PROXY_FENCES])


# cp.reduce.async.bulk.tensor reads its shared source through the async proxy as a TMA store does: in the PTX ISA's
# order and in the other orders ptxas takes (legality.canonical reads them as the family form they are), only a fence
# of the shared state space (or of all) orders the generic-proxy writes before it
_TENSOR_REDUCTIONS = ["cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group",
                      "cp.reduce.async.bulk.tensor.2d.global.shared::cta.min.bulk_group",
                      "cp.reduce.async.bulk.tensor.bulk_group.2d.global.add.shared::cta.tile",
                      "cp.reduce.async.bulk.tensor.2d.xor.global.bulk_group.shared::cta"]


def _tensor_reduction_kernel(opcode, fence):
    return _edited(_text("proxy_tma_store.ptx"),
                   ("\tbar.sync 0;", f"\t{fence}\n\tbar.sync 0;"),
                   ("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd1, {%r3, %r3}], [%r1];",
                    f"{opcode} [%rd1, {{%r3, %r3}}], [%r1];"))


def test_tensor_reductions_read_as_their_canonical_spelling():
    from ptxgen.legality import canonical
    assert [canonical(op) for op in _TENSOR_REDUCTIONS] == [
        "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group",
        "cp.reduce.async.bulk.tensor.2d.global.shared::cta.min.bulk_group",
        "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group",
        "cp.reduce.async.bulk.tensor.2d.global.shared::cta.xor.bulk_group"]


@pytest.mark.parametrize("opcode", _TENSOR_REDUCTIONS)
@pytest.mark.parametrize("fence", _PROXY_FENCES)
def test_tensor_reduction_in_any_order_needs_a_shared_proxy_fence(opcode, fence):
    text = _tensor_reduction_kernel(opcode, fence)
    got = [(f[0], f[1], f[3].split(" reads ")[0]) for f in _findings(text, "reduce.ptx")]
    line = next(i for i, ln in enumerate(text.split("\n"), 1) if ln.lstrip().startswith(opcode + " "))
    want = [] if fence in _SHARED_FENCES else [("PTX-W-PROXY-FENCE", line,
                                                 "a bulk/TMA reduction from shared into global")]
    assert got == want


@pytest.mark.ptxas
def test_tensor_reduction_kernels_assemble(tmp_path):
    _assemble_each(tmp_path, [((o, f), _tensor_reduction_kernel(o, f)) for o in _TENSOR_REDUCTIONS
                              for f in _PROXY_FENCES])
