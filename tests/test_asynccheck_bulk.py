"""Bulk async-groups in ptxgen.asynccheck (PTX-W-BULK-ACCESS, -COMMIT, -WAIT, -VISIBLE): variants of the broken
kernels of tests/async/bulk_*.ptx and a few kernels of their own, each fired at the lines its `// <- CODE`
markers name and silent where it has none; the real kernels (the samples, nvcc's TMA store) stay silent, and
fire once their waits or commits are taken out. Every variant assembles with ptxas (sm_90a)."""
import glob
import os
import re

import pytest

from ptxgen.asynccheck import ASYNC_CODES
from ptxgen.lint import lint_ptx, read_ptx

from test_asynccheck import _assemble_each, _edited, _text
from test_samples import load_sample

HERE = os.path.dirname(os.path.abspath(__file__))
_MARK = re.compile(r"//\s*<-\s*((?:PTX-W-[A-Z-]+\s*)+)")


def _unmarked(text):
    """text without its `// <- CODE` markers (and the expect line, whose words are not a marker)."""
    return re.sub(r"[ \t]*//\s*<-\s*(?:PTX-W-[A-Z-]+\s*)+", "", text)


def _marked(text):
    """(code, line) of each `// <- CODE ...` marker."""
    out = []
    for i, ln in enumerate(text.split("\n"), 1):
        m = _MARK.search(ln)
        if m:
            out.extend((c, i) for c in m.group(1).split())
    return out


def _bulk(ds):
    return [d for d in ds if d.code in ASYNC_CODES]


def _found(text):
    ds = lint_ptx(text)
    assert not [d for d in ds if d.severity == "error"], [str(d) for d in ds]
    return [(d.code, d.loc.line) for d in _bulk(ds)]


# ------------------------------------------------------------------------------------------------ kernels
# two tiles stored on the two arms of an if, joined before one wait
_JOIN = """.version 8.0
.target sm_90a
.address_size 64

.visible .entry k(.param .align 64 .b8 tmap[128], .param .u32 sel)
{
\t.shared .align 1024 .b8 tile_a[2048];
\t.shared .align 1024 .b8 tile_b[2048];
\t.reg .pred %p<2>;
\t.reg .b32 %r<5>;
\t.reg .b64 %rd<2>;
\tld.param.u32 %r1, [sel];
\tsetp.ne.u32 %p1, %r1, 0;
\tmov.u64 %rd1, tmap;
\tmov.u32 %r2, 0;
\tmov.u32 %r3, tile_a;
\tmov.u32 %r4, tile_b;
\t@%p1 bra L_b;
\tcp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd1, {%r2, %r2}], [%r3];
\tcp.async.bulk.commit_group;
\tbra L_join;
L_b:
\tcp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd1, {%r2, %r2}], [%r4];
\tcp.async.bulk.commit_group;
L_join:
\tcp.async.bulk.wait_group.read 0;
\tst.shared.u32 [%r3], %r2;
\tst.shared.u32 [%r4], %r2;
\tret;
}
"""

# thread 0 stores, every thread passes a barrier, thread 0 waits: the two ifs test %tid.x == 0 apart
_ELECTED = """.version 8.0
.target sm_90a
.address_size 64

.visible .entry k(.param .align 64 .b8 tmap[128], .param .u32 n)
.reqntid 128, 1, 1
{
\t.shared .align 1024 .b8 tile[2048];
\t.reg .pred %p<5>;
\t.reg .b32 %r<8>;
\t.reg .b64 %rd<2>;
\tmov.u32 %r1, %tid.x;
\tsetp.eq.u32 %p1, %r1, 0;
\tld.param.u32 %r2, [n];
\tmov.u32 %r3, tile;
\tshl.b32 %r4, %r1, 2;
\tadd.u32 %r5, %r3, %r4;
\tst.shared.u32 [%r5], %r1;
\tfence.proxy.async.shared::cta;
\tbar.sync 0;
\t@!%p1 bra L_issued;
\tmov.u64 %rd1, tmap;
\tcp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd1, {%r2, %r2}], [%r3];
\tcp.async.bulk.commit_group;
L_issued:
\tmov.u32 %r6, %tid.x;
\tsetp.eq.u32 %p2, %r6, 0;
\t@!%p2 bra L_done;
\tcp.async.bulk.wait_group.read 0;
L_done:
\tret;
}
"""

# a store from tile_a, committed and not waited for, then writes to shared memory
_APART = """.version 8.0
.target sm_90a
.address_size 64

.visible .entry k(.param .u64 out)
{
\t.shared .align 128 .b8 tile_a[256];
\t.shared .align 128 .b8 tile_b[256];
\t.reg .b32 %r<6>;
\t.reg .b64 %rd<5>;
\tld.param.u64 %rd1, [out];
\tcvta.to.global.u64 %rd2, %rd1;
\tmov.u32 %r1, tile_a;
\tmov.u32 %r2, tile_b;
\tmov.u32 %r3, 7;
\tcp.async.bulk.global.shared::cta.bulk_group [%rd2], [%r1], 256;
\tcp.async.bulk.commit_group;
\tst.shared.u32 [%r2+4], %r3;
\tcp.async.bulk.wait_group.read 0;
\tret;
}
"""

# a device function that stores and commits; its caller waits
_FUNC = """.version 8.0
.target sm_90a
.address_size 64

.visible .func store_tile(.param .u64 out)
{
\t.shared .align 128 .b8 tile[256];
\t.reg .b32 %r<2>;
\t.reg .b64 %rd<3>;
\tld.param.u64 %rd1, [out];
\tcvta.to.global.u64 %rd2, %rd1;
\tmov.u32 %r1, tile;
\tcp.async.bulk.global.shared::cta.bulk_group [%rd2], [%r1], 256;
\tcp.async.bulk.commit_group;
\tret;
}

.visible .entry k(.param .u64 out)
{
\t.shared .align 128 .b8 stage[256];
\t.reg .b32 %r<3>;
\t.reg .b64 %rd<3>;
\tld.param.u64 %rd1, [out];
\tcvta.to.global.u64 %rd2, %rd1;
\tmov.u32 %r1, stage;
\tcp.async.bulk.global.shared::cta.bulk_group [%rd2], [%r1], 256;
\tcp.async.bulk.commit_group;
\t{
\t.param .b64 param0;
\tst.param.b64 [param0], %rd1;
\tcall.uni store_tile, (param0);
\t}
\tcp.async.bulk.wait_group.read 0;
\tret;
}
"""

# the sample's producer-less 2-CTA kernels (gemm_hopper c2 ... p0), reduced: the elected thread of each warpgroup stores
# its tile behind `and.pred` with a column bound and waits behind its own predicate; a flag (mov.pred) says that a
# tile is still to be stored, and warpgroup 2 stores it while idle past the split. Enough predicates are tested
# more than once that the paths once outgrew the analysis' limit and forgot the elected thread's predicate.
_TILES = """.version 8.0
.target sm_90a
.address_size 64

.visible .entry k(.param .align 64 .b8 tmap[128], .param .u32 tiles, .param .u32 split, .param .u32 cols,
	.param .u32 kblocks)
.reqntid 384, 1, 1
{
\t.shared .align 1024 .b8 ctile[24576];
\t.reg .pred %p<20>;
\t.reg .pred %c_pending;
\t.reg .b32 %r<30>;
\t.reg .b32 %c_hcol, %kb;
\t.reg .b64 %rd<2>;
\tmov.u32 %r1, %tid.x;
\tand.b32 %r2, %r1, 127;
\tsetp.eq.u32 %p1, %r2, 0;
\tshr.u32 %r3, %r1, 7;
\tld.param.u32 %r4, [tiles];
\tld.param.u32 %r5, [split];
\tld.param.u32 %r6, [cols];
\tld.param.u32 %r7, [kblocks];
\tmov.u64 %rd1, tmap;
\tmov.u32 %r8, ctile;
\tmad.lo.u32 %r9, %r3, 8192, %r8;
\tshl.b32 %r10, %r2, 4;
\tadd.u32 %r11, %r9, %r10;
\tadd.u32 %r12, %r3, 1;
\tmov.u32 %r13, 0;
\tmov.pred %c_pending, 0;
\tmov.u32 %r14, %ctaid.x;
L_tile:
\tsetp.ge.u32 %p2, %r14, %r4;
\t@%p2 bra L_tiles_done;
\tsetp.lt.u32 %p3, %r14, %r5;
\tnot.pred %p4, %p3;
\tsetp.eq.and.u32 %p5, %r3, 2, %p4;
\t@!%p5 bra L_idle_done;
\t// warpgroup 2 idles past the split: it stores the tile it holds while the others work
\t@!%c_pending bra L_idle_stored;
\t@!%p1 bra L_idle_waited;
\tcp.async.bulk.wait_group.read 0;
L_idle_waited:
\tbar.sync %r12, 128;
\tstmatrix.sync.aligned.m8n8.x1.shared.b16 [%r11], {%r13};
\tfence.proxy.async.shared::cta;
\tbar.sync %r12, 128;
\tsetp.lt.u32 %p6, %c_hcol, %r6;
\tand.pred %p7, %p1, %p6;
\t@!%p7 bra L_idle_issued;
\tcp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd1, {%c_hcol, %r14}], [%r9];
\tcp.async.bulk.commit_group;
L_idle_issued:
\tmov.pred %c_pending, 0;
L_idle_stored:
\tmov.u32 %kb, 0;
\tsetp.ge.u32 %p8, %kb, %r7;
\t@%p8 bra L_idle_loop_done;
L_idle_loop:
\tadd.u32 %kb, %kb, 1;
\tsetp.lt.u32 %p9, %kb, %r7;
\t@%p9 bra L_idle_loop;
L_idle_loop_done:
L_idle_done:
\t@%p5 bra L_tile_next;
\t// the mainloop of a tile; the store of the previous tile goes out after its first round
\tmov.u32 %kb, 0;
\t@!%c_pending bra L_prev_stored;
\t@!%p1 bra L_prev_waited;
\tcp.async.bulk.wait_group.read 0;
L_prev_waited:
\tbar.sync %r12, 128;
\tstmatrix.sync.aligned.m8n8.x1.shared.b16 [%r11], {%r13};
\tfence.proxy.async.shared::cta;
\tbar.sync %r12, 128;
\tsetp.lt.u32 %p10, %c_hcol, %r6;
\tand.pred %p11, %p1, %p10;
\t@!%p11 bra L_prev_issued;
\tcp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd1, {%c_hcol, %r14}], [%r9];
\tcp.async.bulk.commit_group;
L_prev_issued:
\tmov.pred %c_pending, 0;
L_prev_stored:
\tsetp.ge.u32 %p12, %kb, %r7;
\t@%p12 bra L_loop_done;
L_loop:
\tadd.u32 %kb, %kb, 1;
\tadd.u32 %r13, %r13, %kb;
\tsetp.lt.u32 %p13, %kb, %r7;
\t@%p13 bra L_loop;
L_loop_done:
\t// this tile: the buffer again, once the elected thread's last store has read it
\t@!%p1 bra L_waited;
\tcp.async.bulk.wait_group.read 0;
L_waited:
\tbar.sync %r12, 128;
\tstmatrix.sync.aligned.m8n8.x1.shared.b16 [%r11], {%r13};
\tfence.proxy.async.shared::cta;
\tbar.sync %r12, 128;
\tmul.lo.u32 %r15, %r14, 128;
\tsetp.lt.u32 %p14, %r15, %r6;
\tand.pred %p15, %p1, %p14;
\t@!%p15 bra L_issued;
\tcp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd1, {%r15, %r14}], [%r9];
\tcp.async.bulk.commit_group;
L_issued:
\tadd.u32 %c_hcol, %r15, 64;
\tmov.pred %c_pending, 1;
L_tile_next:
\tadd.u32 %r14, %r14, 132;
\tbra L_tile;
L_tiles_done:
\t@!%c_pending bra L_last_stored;
\t@!%p1 bra L_last_waited;
\tcp.async.bulk.wait_group.read 0;
L_last_waited:
\tbar.sync %r12, 128;
\tstmatrix.sync.aligned.m8n8.x1.shared.b16 [%r11], {%r13};
\tfence.proxy.async.shared::cta;
\tbar.sync %r12, 128;
\tsetp.lt.u32 %p16, %c_hcol, %r6;
\tand.pred %p17, %p1, %p16;
\t@!%p17 bra L_last_issued;
\tcp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd1, {%c_hcol, %r14}], [%r9];
\tcp.async.bulk.commit_group;
L_last_issued:
\tmov.pred %c_pending, 0;
L_last_stored:
\t@!%p1 bra L_done;
\tcp.async.bulk.wait_group 0;
L_done:
\tret;
}
"""

_ACCESS_LINE = "\tst.shared.u32 [%r5], %r6;  // <- PTX-W-BULK-ACCESS\n"
_RING_WAIT = "\t@%p1 cp.async.bulk.wait_group.read 1;\n"
_RING_RET = "\tret;  // <- PTX-W-BULK-WAIT\n"


def _access(*old_new):
    return _edited(_text("bulk_access.ptx"), *old_new)


def _ring(*old_new):
    return _edited(_text("bulk_wait.ptx"), *old_new)


def _visible(*old_new):
    return _edited(_text("bulk_visible.ptx"), *old_new)


# name -> kernel text; the findings are its markers
VARIANTS = {
    # ---- the epilogue ring (tests/async/bulk_wait.ptx: two buffers, wait_group.read 1 before writing one)
    "ring, waited before ret": _unmarked(_ring((_RING_RET, "\tcp.async.bulk.wait_group.read 0;\n\tret;\n"))),
    "ring, waited before ret by the storing thread only":
        _unmarked(_ring((_RING_RET, "\t@%p1 cp.async.bulk.wait_group 0;\n\tret;\n"))),
    "ring, a plain wait_group 1 in the loop": _unmarked(_ring(
        (_RING_WAIT, "\t@%p1 cp.async.bulk.wait_group 1;\n"),
        (_RING_RET, "\tcp.async.bulk.wait_group.read 0;\n\tret;\n"))),
    "ring, no wait in the loop": _ring(
        (_RING_WAIT, ""), ("\tst.shared.u32 [%r9], %r6;\n", "\tst.shared.u32 [%r9], %r6;  // <- PTX-W-BULK-ACCESS\n")),
    "ring, the last wait keeps one group": _ring((_RING_RET, "\tcp.async.bulk.wait_group.read 1;\n" + _RING_RET)),
    "ring, waiting at the end of each round": _unmarked(_ring(
        (_RING_WAIT, ""), ("\tcp.async.bulk.commit_group;\n", "\tcp.async.bulk.commit_group;\n"
                                                            "\tcp.async.bulk.wait_group.read 1;\n"),
        (_RING_RET, "\tcp.async.bulk.wait_group.read 0;\n\tret;\n"))),
    "ring of three buffers, wait_group.read 2": _unmarked(_ring(
        ("ring[1024]", "ring[1536]"), ("and.b32 %r7, %r6, 1;", "rem.u32 %r7, %r6, 3;"),
        (_RING_WAIT, "\t@%p1 cp.async.bulk.wait_group.read 2;\n"),
        (_RING_RET, "\tcp.async.bulk.wait_group.read 0;\n\tret;\n"))),
    # ---- the write that the copy may still read (tests/async/bulk_access.ptx)
    "access, stmatrix": _access((_ACCESS_LINE, "\tstmatrix.sync.aligned.m8n8.x1.shared.b16 [%r5], {%r6};  "
                                               "// <- PTX-W-BULK-ACCESS\n")),
    "access, atom.shared": _access((_ACCESS_LINE, "\tatom.shared.add.u32 %r7, [%r5], %r6;  // <- PTX-W-BULK-ACCESS\n")),
    "access, cp.async into shared memory": _access(
        ("ld.param.u64 %rd1, [out];", "ld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd3, %rd1;"),
        (_ACCESS_LINE, "\tcp.async.ca.shared.global [%r5], [%rd3], 4;  // <- PTX-W-BULK-ACCESS\n"
                       "\tcp.async.wait_all;\n")),
    "access, a generic store to a shared address": _access(
        ("\t.reg .b64 %rd<5>;", "\t.reg .b64 %rd<7>;"),
        ("\tmov.u32 %r6, 0;\n", "\tmov.u32 %r6, 0;\n\tcvt.u64.u32 %rd5, %r5;\n\tcvta.shared.u64 %rd6, %rd5;\n"),
        (_ACCESS_LINE, "\tst.u32 [%rd6], %r6;  // <- PTX-W-BULK-ACCESS\n")),
    "access, a generic store to global memory": _unmarked(_access(
        ("\t.reg .b64 %rd<5>;", "\t.reg .b64 %rd<7>;"),
        ("\tcp.async.bulk.commit_group;\n", "\tcp.async.bulk.commit_group;\n\tcvta.global.u64 %rd6, %rd2;\n"
                                            "\tst.u32 [%rd6], %r6;\n\tcp.async.bulk.wait_group.read 0;\n"))),
    "access, a bulk reduction": _access(
        ("cp.async.bulk.global.shared::cta.bulk_group [%rd4], [%r4], 512;",
         "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%rd4], [%r4], 512;")),
    "access, a tensor reduction": _access(
        ("(.param .u64 out, .param .u32 rounds)", "(.param .u64 out, .param .u32 rounds, .param .align 64 .b8 "
                                                  "tmap[128])"),
        ("\tmul.wide.u32 %rd3, %r6, 512;\n\tadd.s64 %rd4, %rd2, %rd3;\n"
         "\tcp.async.bulk.global.shared::cta.bulk_group [%rd4], [%r4], 512;",
         "\tmov.u64 %rd4, tmap;\n"
         "\tcp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%rd4, {%r6, %r6}], [%r4];")),
    "access, uncommitted": _access(
        ("\tcp.async.bulk.commit_group;\nL_next:", "L_next:"),
        ("\tcp.async.bulk.wait_group 0;\n", "\tcp.async.bulk.commit_group;\n\tcp.async.bulk.wait_group 0;\n")),
    "access, waited by every thread before the barrier": _unmarked(_access(
        ("L_next:\n\tbar.sync 0;", "L_next:\n\tcp.async.bulk.wait_group.read 0;\n\tbar.sync 0;"))),
    "access, the prefetch form takes no group": _unmarked(_access(
        ("cp.async.bulk.global.shared::cta.bulk_group [%rd4], [%r4], 512;\n\tcp.async.bulk.commit_group;",
         "cp.async.bulk.prefetch.L2.global [%rd4], 512;"))),
    # ---- branches that join
    "join, both arms commit": _JOIN,
    "join, one arm does not commit": _edited(
        _JOIN, ("[%r4];\n\tcp.async.bulk.commit_group;\n", "[%r4];\n"),
        ("\tcp.async.bulk.wait_group.read 0;\n", "\tcp.async.bulk.wait_group.read 0;  // <- PTX-W-BULK-COMMIT\n"),
        ("\tst.shared.u32 [%r4], %r2;\n", "\tst.shared.u32 [%r4], %r2;  // <- PTX-W-BULK-ACCESS\n")),
    "join, no wait": _edited(
        _JOIN, ("\tcp.async.bulk.wait_group.read 0;\n", ""),
        ("\tst.shared.u32 [%r3], %r2;\n", "\tst.shared.u32 [%r3], %r2;  // <- PTX-W-BULK-ACCESS\n"),
        ("\tst.shared.u32 [%r4], %r2;\n", "\tst.shared.u32 [%r4], %r2;  // <- PTX-W-BULK-ACCESS\n"),
        ("\tret;", "\tret;  // <- PTX-W-BULK-WAIT")),
    "join, the wait on one arm only": _edited(
        _JOIN, ("\tcp.async.bulk.wait_group.read 0;\n", ""),
        ("[%r4];\n\tcp.async.bulk.commit_group;\n", "[%r4];\n\tcp.async.bulk.commit_group;\n"
                                                   "\tcp.async.bulk.wait_group.read 0;\n"),
        ("\tst.shared.u32 [%r3], %r2;\n", "\tst.shared.u32 [%r3], %r2;  // <- PTX-W-BULK-ACCESS\n"),
        ("\tret;", "\tret;  // <- PTX-W-BULK-WAIT")),
    # ---- the thread that stores is elected by a test of %tid.x, tested again for its wait
    "elected, tested twice": _ELECTED,
    "elected, the wait guarded by the first test": _edited(
        _ELECTED, ("\t@!%p2 bra L_done;\n\tcp.async.bulk.wait_group.read 0;\n",
                   "\t@%p1 cp.async.bulk.wait_group.read 0;\n")),
    "elected, the stores of an and of the first test": _edited(
        _ELECTED, ("\t@!%p1 bra L_issued;\n", "\tsetp.lt.u32 %p3, %r2, 64;\n\tand.pred %p4, %p1, %p3;\n"
                                              "\t@!%p4 bra L_issued;\n"),
        ("\tsetp.eq.u32 %p2, %r6, 0;\n\t@!%p2 bra L_done;\n", "\t@!%p1 bra L_done;\n")),
    "elected, another thread waits": _edited(
        _ELECTED, ("setp.eq.u32 %p2, %r6, 0;", "setp.eq.u32 %p2, %r6, 1;"), ("\tret;", "\tret;  // <- PTX-W-BULK-WAIT")),
    "elected, the predicate computed again from something else": _edited(
        _ELECTED, ("\t@!%p2 bra L_done;\n", "\tld.param.u32 %r7, [n];\n\tsetp.eq.u32 %p1, %r7, 0;\n"
                                            "\t@!%p1 bra L_done;\n"),
        ("\tret;", "\tret;  // <- PTX-W-BULK-WAIT")),
    "elected tiles, a pending flag and a column bound": _TILES,
    "elected tiles, no wait before the idle warpgroup writes": _edited(
        _TILES, ("\t@!%p1 bra L_idle_waited;\n\tcp.async.bulk.wait_group.read 0;\n", "\t@!%p1 bra L_idle_waited;\n"),
        ("L_idle_waited:\n\tbar.sync %r12, 128;\n\tstmatrix.sync.aligned.m8n8.x1.shared.b16 [%r11], {%r13};\n",
         "L_idle_waited:\n\tbar.sync %r12, 128;\n\tstmatrix.sync.aligned.m8n8.x1.shared.b16 [%r11], {%r13};  "
         "// <- PTX-W-BULK-ACCESS\n")),
    "elected tiles, no wait after the mainloop": _edited(
        _TILES, ("\t@!%p1 bra L_waited;\n\tcp.async.bulk.wait_group.read 0;\n", "\t@!%p1 bra L_waited;\n"),
        ("L_waited:\n\tbar.sync %r12, 128;\n\tstmatrix.sync.aligned.m8n8.x1.shared.b16 [%r11], {%r13};\n",
         "L_waited:\n\tbar.sync %r12, 128;\n\tstmatrix.sync.aligned.m8n8.x1.shared.b16 [%r11], {%r13};  "
         "// <- PTX-W-BULK-ACCESS\n")),
    "elected tiles, no wait before ret": _edited(
        _TILES, ("\tcp.async.bulk.wait_group 0;\n", ""), ("\tret;", "\tret;  // <- PTX-W-BULK-WAIT")),
    # ---- shared symbols apart
    "apart, another array": _APART,
    "apart, the same array": _edited(_APART, ("st.shared.u32 [%r2+4], %r3;",
                                              "st.shared.u32 [%r1+4], %r3;  // <- PTX-W-BULK-ACCESS")),
    "apart, the older of two groups": _edited(
        _APART, ("\tcp.async.bulk.commit_group;\n", "\tcp.async.bulk.commit_group;\n"
                 "\tcp.async.bulk.global.shared::cta.bulk_group [%rd2+256], [%r2], 256;\n\tcp.async.bulk.commit_group;\n"),
        ("st.shared.u32 [%r2+4], %r3;", "st.shared.u32 [%r1+4], %r3;  // <- PTX-W-BULK-ACCESS")),
    "apart, an address from memory": _edited(
        _APART, ("\tst.shared.u32 [%r2+4], %r3;", "\tld.shared.u32 %r4, [%r2];\n"
                                                  "\tst.shared.u32 [%r4], %r3;  // <- PTX-W-BULK-ACCESS")),
    "apart, .extern arrays are one": _edited(
        _APART, ("\t.shared .align 128 .b8 tile_a[256];\n\t.shared .align 128 .b8 tile_b[256];\n", ""),
        (".visible .entry", ".extern .shared .align 128 .b8 tile_a[];\n.extern .shared .align 128 .b8 tile_b[];\n"
                            ".visible .entry"),
        ("st.shared.u32 [%r2+4], %r3;", "st.shared.u32 [%r2+4], %r3;  // <- PTX-W-BULK-ACCESS")),
    # ---- device functions and calls
    "func, the caller waits": _FUNC,
    "func, exit with the group in flight": _edited(
        _FUNC, ("\tcp.async.bulk.commit_group;\n\tret;", "\tcp.async.bulk.commit_group;\n"
                                                       "\texit;  // <- PTX-W-BULK-WAIT")),
    "func, nothing committed at ret": _edited(
        _FUNC, ("[%r1], 256;\n\tcp.async.bulk.commit_group;\n\tret;", "[%r1], 256;\n\tret;")),
    "func, the caller exits without a wait": _edited(
        _FUNC, ("\tcp.async.bulk.wait_group.read 0;\n\tret;\n}\n",
                "\tcp.async.bulk.commit_group;\n\tret;  // <- PTX-W-BULK-WAIT\n}\n"),
        ("\tcall.uni store_tile, (param0);\n", "\tcall.uni store_tile, (param0);\n"
                                              "\tcp.async.bulk.global.shared::cta.bulk_group [%rd2+256], [%r1], 256;\n")),
    # ---- commit
    "commit, none before ret": _edited(
        _text("bulk_commit.ptx"), ("\tcp.async.bulk.commit_group;\n", ""),
        ("\tcp.async.bulk.wait_group.read 0;  // <- PTX-W-BULK-COMMIT\n\tret;",
         "\tret;  // <- PTX-W-BULK-COMMIT")),
    # ---- reading the copy's global destination
    "visible, past the copy": _unmarked(_visible(("ld.global.u32 %r3, [%rd2];", "ld.global.u32 %r3, [%rd2+256];"))),
    "visible, the last word of the copy": _visible(("ld.global.u32 %r3, [%rd2];", "ld.global.u32 %r3, [%rd2+252];")),
    "visible, a generic load": _visible(("ld.global.u32 %r3, [%rd2];", "ld.u32 %r3, [%rd2];")),
    "visible, an atom": _visible(("ld.global.u32 %r3, [%rd2];", "atom.global.add.u32 %r3, [%rd2], 1;")),
    "visible, before any wait": _visible(
        ("\tcp.async.bulk.wait_group.read 0;\n", ""),
        ("\tsetp.eq.u32 %p1, %r3, 0;\n", "\tcp.async.bulk.wait_group 0;\n\tsetp.eq.u32 %p1, %r3, 0;\n")),
    "visible, the register moved on": _unmarked(_visible(
        ("\t// the first word", "\tadd.s64 %rd2, %rd2, 4096;\n\t// the first word"))),
    "visible, a bulk reduction": _visible(("cp.async.bulk.global.shared::cta.bulk_group [%rd2], [%r2], 256;",
                                           "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%rd2], [%r2], "
                                           "256;")),
    "visible, a shared load is another space": _unmarked(_visible(("ld.global.u32 %r3, [%rd2];",
                                                                    "ld.shared.u32 %r3, [%r2];"))),
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_variant_fires_at_its_markers(name):
    text = VARIANTS[name]
    assert _found(text) == _marked(text)


def test_every_bulk_code_has_variants_both_ways():
    codes = {c for c in ASYNC_CODES if c.startswith("PTX-W-BULK-")}
    assert codes == {"PTX-W-BULK-ACCESS", "PTX-W-BULK-COMMIT", "PTX-W-BULK-WAIT", "PTX-W-BULK-VISIBLE"}
    fired = {c for t in VARIANTS.values() for c, _ in _marked(t)}
    assert fired == codes
    assert any(not _marked(t) for t in VARIANTS.values())


@pytest.mark.ptxas
def test_variants_assemble(tmp_path):
    _assemble_each(tmp_path, sorted(VARIANTS.items()))


# -------------------------------------------------------------------------------------------- messages
def _diag(text):
    ds = _bulk(lint_ptx(text))
    assert len(ds) == 1, [str(d) for d in ds]
    return ds[0]


def test_messages_name_the_copy_and_what_to_write():
    d = _diag(_text("bulk_access.ptx"))
    assert (d.loc.line, d.loc.col, d.span) == (23, 2, len("st.shared.u32"))
    assert "cp.async.bulk (line 29) may still be reading" in d.message
    assert d.notes == ("insert cp.async.bulk.wait_group.read 0 before this write",)
    d = _diag(VARIANTS["apart, the older of two groups"])
    assert d.notes == ("insert cp.async.bulk.wait_group.read 1 before this write (the 1 newer group may stay pending)",)
    d = _diag(_text("bulk_commit.ptx"))
    assert "cp.async.bulk.tensor.2d (line 20)" in d.message and "not committed" in d.message
    assert d.notes == ("insert cp.async.bulk.commit_group between the copy and the wait",)
    d = _diag(VARIANTS["ring, the last wait keeps one group"])
    assert "the count of the last cp.async.bulk.wait_group lets its group stay pending" in d.message
    assert d.notes[0].startswith("insert cp.async.bulk.wait_group.read 0 before it")
    d = _diag(_text("bulk_visible.ptx"))
    assert "after only cp.async.bulk.wait_group.read" in d.message
    assert d.notes == ("insert cp.async.bulk.wait_group 0 (without .read) before this load",)
    d = _diag(VARIANTS["visible, before any wait"])
    assert "before any cp.async.bulk.wait_group" in d.message


def test_one_access_finding_per_copy():
    # a tile written by many stores: the first write after the copy is the finding
    text = _edited(_text("bulk_access.ptx"), (_ACCESS_LINE, _ACCESS_LINE + "\tst.shared.u32 [%r5+4], %r6;\n"
                                                                           "\tst.shared.u32 [%r5+8], %r6;\n"))
    assert _found(text) == [("PTX-W-BULK-ACCESS", 23)]


# ------------------------------------------------------------------------------------------ real kernels
def _functions(text):
    """(header, [function text]) of a PTX module (functions start at .entry/.func lines)."""
    lines = text.split("\n")
    starts = [i for i, ln in enumerate(lines) if re.match(r"\s*(\.visible\s+|\.weak\s+)?\.(entry|func)\b", ln)]
    head = "\n".join(lines[:starts[0]]) + "\n"
    ends = starts[1:] + [len(lines)]
    return head, ["\n".join(lines[s:e]) + "\n" for s, e in zip(starts, ends)]


def _drop_each(head, fn, pattern):
    """fn with each line matching pattern taken out in turn."""
    lines = fn.split("\n")
    for i, ln in enumerate(lines):
        if re.search(pattern, ln):
            yield ln.strip(), head + "\n".join(lines[:i] + lines[i + 1:])


def test_nvcc_tma_store_fires_without_its_commit_or_wait():
    # tests/ptx/src/tma_mbarrier.cu's tma_load: one thread stores the tile, commits and waits .read 0 before it exits
    for path in sorted(glob.glob(os.path.join(HERE, "ptx", "nvcc", "tma_mbarrier.sm_*.O3.ptx"))):
        head, fns = _functions(read_ptx(path))
        fns = [f for f in fns if "cp.async.bulk.commit_group" in f]
        if not fns:
            continue  # sm_80: no TMA
        fn = fns[0]
        assert _found(head + fn) == []
        got = {ln: {c for c, _ in _found(t)} for ln, t in _drop_each(head, fn, r"cp\.async\.bulk\.(commit|wait)_group")}
        assert got == {"cp.async.bulk.commit_group;": {"PTX-W-BULK-COMMIT"},
                       "cp.async.bulk.wait_group.read 0;": {"PTX-W-BULK-WAIT"}}, path


# tests/ptx/src/bulk_store.cu, as nvcc -O3 and -lineinfo lay it out: without any one of its commits or waits, each
# kernel fires (the -G builds call a function for every cp.async.bulk instruction, which the check does not follow)
_BULK_STORE_WANT = {
    "ring_bulk": {"commit": {"PTX-W-BULK-COMMIT", "PTX-W-BULK-ACCESS"}, "wait_group.read 1": {"PTX-W-BULK-ACCESS"},
                  "wait_group.read 0": {"PTX-W-BULK-WAIT"}},
    "ring_tma": {"commit": {"PTX-W-BULK-COMMIT", "PTX-W-BULK-ACCESS"}, "wait_group.read 2": {"PTX-W-BULK-ACCESS"},
                 "wait_group 0": {"PTX-W-BULK-WAIT"}},
    "reduce_then_read": {"commit": {"PTX-W-BULK-COMMIT", "PTX-W-BULK-VISIBLE"},
                         "wait_group 0": {"PTX-W-BULK-WAIT", "PTX-W-BULK-VISIBLE"}},
    "elected_store": {"commit": {"PTX-W-BULK-COMMIT"}, "wait_group.read 0": {"PTX-W-BULK-WAIT"}},
}


@pytest.mark.parametrize("build", [f"{a}.{v}" for a in ("sm_90a", "sm_100a") for v in ("O3", "lineinfo")])
def test_nvcc_bulk_stores_fire_without_any_commit_or_wait(build):
    head, fns = _functions(read_ptx(os.path.join(HERE, "ptx", "nvcc", f"bulk_store.{build}.ptx")))
    seen = set()
    for fn in fns:
        name = next(k for k in _BULK_STORE_WANT if re.search(rf"\.entry _Z\d+{k}", fn))
        seen.add(name)
        assert _found(head + fn) == [], name
        drops = list(_drop_each(head, fn, r"^\s*cp\.async\.bulk\.(commit|wait)_group"))
        assert drops, name
        for ln, text in drops:
            kind = "commit" if "commit" in ln else ln[len("cp.async.bulk."):-1]
            assert {c for c, _ in _found(text)} == _BULK_STORE_WANT[name][kind], (name, ln)
    assert seen == set(_BULK_STORE_WANT)


def test_hopper_sample_epilogue_fires_without_its_waits():
    # the consumers' own TMA-store epilogue (write_pass): the elected thread waits .read 0 before the buffer is
    # written again, behind the same predicate as its stores; without that wait or the one before it exits, the
    # check fires
    text = load_sample("gemm_hopper").build("sm_90a").emit().text
    head, fns = _functions(text)
    fns = [f for f in fns if re.search(r"@!%p\w+ bra \S+;\n\tcp\.async\.bulk\.wait_group\.read 0;", f)]
    if not fns:
        pytest.skip("no kernel of the sample waits for its stores behind a branch")
    fn = min(fns, key=len)
    assert _found(head + fn) == []
    got = [{c for c, _ in _found(t)} for _ln, t in _drop_each(head, fn, r"^\tcp\.async\.bulk\.wait_group")]
    assert got and all(got), got
    assert {"PTX-W-BULK-ACCESS", "PTX-W-BULK-WAIT"} <= set().union(*got)


# ---------------------------------------------------------------------------------------------- builder
def _builder_store(wait: bool):
    import ptxgen as pg
    m = pg.Module("sm_90a")
    k = m.entry("k", reqntid=128)
    out = pg.mem(k.ld_param(k.param_ptr("out", pg.u32)))
    tile = k.shared("tile", 256, align=128)
    k.st(k.mov(tile, type=pg.u32), k.mov(0, type=pg.u32), pg.b32, space="shared")
    k.fence_proxy_async("shared::cta")
    k.cp_async_bulk(out, tile, 256, dst_space="global", src_space="shared::cta")
    k.cp_async_bulk_commit_group()
    if wait:
        k.cp_async_bulk_wait_group(0, read=True)
    k.ret()  # RET-LINE
    return m


def test_builder_output_reports_at_the_python_line():
    from ptxgen.lint import lint_module
    assert _builder_store(True).check_async() == []
    ds = _builder_store(False).check_async()
    with open(__file__) as f:
        line = next(i + 1 for i, ln in enumerate(f) if ln.rstrip().endswith("# RET-LINE"))
    assert [(d.code, d.loc.file, d.loc.line) for d in ds] == [("PTX-W-BULK-WAIT", __file__, line)]
    assert [d.code for d in _bulk(lint_module(_builder_store(False)))] == ["PTX-W-BULK-WAIT"]
    assert [c for c, _ in _found(_builder_store(False).emit().text)] == ["PTX-W-BULK-WAIT"]
    assert _found(_builder_store(True).emit().text) == []
