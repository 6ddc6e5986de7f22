"""ptxgen.executor: kernels run on the CPU agree with numpy, bugs show up, failures are typed and located."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _executor_kernels import K, M, N, hgemm_bad_ldmatrix, hgemm_inputs, load_sample  # noqa: E402
from ptxgen.errors import (DeadlockError, ExecutionError, MemoryFaultError,  # noqa: E402
                           UnsupportedInstructionError, UsageError)
from ptxgen.executor import Buffer, coordinate_matrix, fragment_report, run_kernel  # noqa: E402
from ptxgen.parse import parse_ptx  # noqa: E402


def _hgemm(module, name, a_bits, b_bits, **kw):
    c = np.full((M, N), np.nan, np.float32)  # poison: NaN wherever the kernel fails to write
    stats = run_kernel(module, name, grid=(1,), block=(32,), args=[Buffer(a_bits), Buffer(b_bits), Buffer(c)], **kw)
    return c, stats


@pytest.mark.parametrize("in_type", ["f16", "bf16"])
@pytest.mark.parametrize("source", ["builder", "parsed"])
def test_hgemm_sample_matches_numpy(in_type, source):
    mod = load_sample("hgemm_mma").build()
    if source == "parsed":
        mod = parse_ptx(mod.emit().text, "hgemm.ptx")
    rng = np.random.default_rng(7)
    for _ in range(3):
        a_bits, b_bits, a, b = hgemm_inputs(rng, in_type)
        c, stats = _hgemm(mod, f"hgemm_mma_m16n8k16_{in_type}", a_bits, b_bits)
        assert not np.isnan(c).any()
        np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
    assert stats.ctas == 1 and stats.thread_instructions > 32 * 30


@pytest.mark.parametrize("n", [1, 255, 1000])
def test_axpy_sample_matches_numpy(n):
    mod = load_sample("axpy").build()
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n).astype(np.float32)
    y = np.concatenate([rng.standard_normal(n).astype(np.float32), [12345.0]]).astype(np.float32)
    ref = np.float32(1.5) * x + y[:n]   # fma rounds once; the two float32 roundings here may differ by an ulp
    a = np.float32(1.5)
    run_kernel(mod, "axpy", grid=((n + 255) // 256,), block=(256,), args=[Buffer(x), Buffer(y), a, n])
    np.testing.assert_allclose(y[:n], ref, rtol=1e-6, atol=1e-6)
    assert y[n] == np.float32(12345.0)  # the bounds check kept the element past n


@pytest.mark.parametrize("n", [1, 1023, 1024, 3000])
def test_block_reduce_sample_matches_numpy(n):
    mod = load_sample("block_reduce").build()
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n).astype(np.float32)
    blocks = (n + 1023) // 1024
    out = np.full(blocks, np.nan, np.float32)
    run_kernel(mod, "block_reduce", grid=(blocks,), block=(256,), args=[Buffer(x), Buffer(out), n])
    ref = [x[i * 1024:(i + 1) * 1024].astype(np.float64).sum() for i in range(blocks)]
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("in_type", ["f16", "bf16"])
def test_wrong_ldmatrix_address_gives_a_wrong_product_and_a_report(in_type):
    bad = hgemm_bad_ldmatrix()
    rng = np.random.default_rng(3)
    a_bits, b_bits, a, b = hgemm_inputs(rng, in_type)
    c, _ = _hgemm(bad, f"hgemm_bad_{in_type}", a_bits, b_bits)
    assert not np.allclose(c, a @ b, rtol=1e-3, atol=1e-3)

    # trace where each lane's A elements came from: A[r][c] = 16r + c
    coords_bits, coords = coordinate_matrix(M, K, in_type)
    _, stats = _hgemm(bad, f"hgemm_bad_{in_type}", coords_bits, b_bits, record=("mma",))
    (rec,) = stats.records
    rep = fragment_report(rec, "a", coords)
    assert not rep.ok
    # lane % 8 addresses rows 0..7 twice: registers a2,a3 (rows 8..15) received rows 0..7 instead
    for lane, reg, elem, exp, got in rep.mismatches:
        assert reg % 2 == 1 and got == (exp[0] - 8, exp[1])
    assert len(rep.mismatches) == 32 * 2 * 2
    text = rep.text()
    assert "expected (row, col)" in text and "(8, 0)" in text and "(0, 0)" in text

    # the sample's kernel gives every lane what the layout expects
    good = load_sample("hgemm_mma").build()
    _, stats = _hgemm(good, f"hgemm_mma_m16n8k16_{in_type}", coords_bits, b_bits, record=("mma",))
    assert fragment_report(stats.records[0], "a", coords).ok


# ------------------------------------------------------------------------------------------------ integer ops

_INT_OPS = [  # (PTX lines computing %r9 from %r1 = a, %r2 = b, numpy reference on uint32 a, b)
    ("add.u32 %r9, %r1, %r2;", lambda a, b: a + b),
    ("sub.s32 %r9, %r1, %r2;", lambda a, b: (a.view(np.int32) - b.view(np.int32)).view(np.uint32)),
    ("mul.lo.u32 %r9, %r1, %r2;", lambda a, b: a * b),
    ("mul.hi.u32 %r9, %r1, %r2;", lambda a, b: ((a.astype(np.uint64) * b.astype(np.uint64)) >> 32).astype(np.uint32)),
    ("mul.hi.s32 %r9, %r1, %r2;",
     lambda a, b: ((a.view(np.int32).astype(np.int64) * b.view(np.int32).astype(np.int64)) >> 32).astype(np.uint32)),
    ("mad.lo.s32 %r9, %r1, %r2, %r1;", lambda a, b: a * b + a),
    ("and.b32 %r9, %r1, %r2;", lambda a, b: a & b),
    ("or.b32 %r9, %r1, %r2;", lambda a, b: a | b),
    ("xor.b32 %r9, %r1, %r2;", lambda a, b: a ^ b),
    ("not.b32 %r9, %r1;", lambda a, b: ~a),
    ("and.b32 %r8, %r2, 63;\n shl.b32 %r9, %r1, %r8;",          # shifts of 32 or more give 0 (or the sign)
     lambda a, b: np.array([(int(x) << int(s)) & 0xFFFFFFFF if s < 32 else 0 for x, s in zip(a, b & 63)], np.uint32)),
    ("and.b32 %r8, %r2, 63;\n shr.u32 %r9, %r1, %r8;",
     lambda a, b: np.array([int(x) >> int(s) for x, s in zip(a, b & 63)], np.uint64).astype(np.uint32)),
    ("and.b32 %r8, %r2, 63;\n shr.s32 %r9, %r1, %r8;",
     lambda a, b: np.array([int(x) >> min(int(s), 31) for x, s in zip(a.view(np.int32), b & 63)],
                           np.int64).astype(np.int32).view(np.uint32)),
    ("or.b32 %r8, %r2, 1;\n div.u32 %r9, %r1, %r8;", lambda a, b: a // (b | 1)),
    ("or.b32 %r8, %r2, 1;\n rem.u32 %r9, %r1, %r8;", lambda a, b: a % (b | 1)),
    ("or.b32 %r8, %r2, 1;\n div.s32 %r9, %r1, %r8;",
     lambda a, b: np.array([_tdiv(int(x), int(y)) for x, y in zip(a.view(np.int32), (b | 1).view(np.int32))],
                           np.int64).astype(np.int32).view(np.uint32)),
    ("or.b32 %r8, %r2, 1;\n rem.s32 %r9, %r1, %r8;",
     lambda a, b: np.array([int(x) - _tdiv(int(x), int(y)) * int(y) for x, y in
                            zip(a.view(np.int32), (b | 1).view(np.int32))], np.int64).astype(np.int32).view(np.uint32)),
    ("min.s32 %r9, %r1, %r2;", lambda a, b: np.minimum(a.view(np.int32), b.view(np.int32)).view(np.uint32)),
    ("max.u32 %r9, %r1, %r2;", lambda a, b: np.maximum(a, b)),
    ("setp.lt.s32 %p1, %r1, %r2;\n selp.b32 %r9, %r1, %r2, %p1;",
     lambda a, b: np.where(a.view(np.int32) < b.view(np.int32), a, b)),
    ("setp.hi.u32 %p1, %r1, %r2;\n selp.b32 %r9, 1, 0, %p1;", lambda a, b: (a > b).astype(np.uint32)),
    ("cvt.u16.u32 %rs1, %r1;\n cvt.s32.s16 %r9, %rs1;", lambda a, b: (a & 0xFFFF).astype(np.uint16).view(np.int16)
     .astype(np.int32).view(np.uint32)),
    ("mul.wide.s32 %rd9, %r1, %r2;\n shr.u64 %rd9, %rd9, 17;\n cvt.u32.u64 %r9, %rd9;",
     lambda a, b: ((a.view(np.int32).astype(np.int64) * b.view(np.int32).astype(np.int64)).view(np.uint64) >> 17)
     .astype(np.uint32)),
    ("shfl.sync.idx.b32 %r9, %r1, %r2, 31, -1;", lambda a, b: a[(np.arange(a.size) // 32) * 32 + (b & 31)]),
    ("shfl.sync.down.b32 %r9, %r1, 3, 31, -1;",
     lambda a, b: np.array([a[i + 3] if i % 32 + 3 <= 31 else a[i] for i in range(a.size)], np.uint32)),
    ("shfl.sync.up.b32 %r9, %r1, 5, 0, -1;",
     lambda a, b: np.array([a[i - 5] if i % 32 >= 5 else a[i] for i in range(a.size)], np.uint32)),
]


def _tdiv(x: int, y: int) -> int:
    """Integer division truncating towards zero, as PTX's div.s32."""
    q = abs(x) // abs(y)
    return -q if (x < 0) != (y < 0) else q


def _int_kernel(body: str) -> str:
    return f"""
.version 8.0
.target sm_90a
.address_size 64
.visible .entry intop(.param .u64 pa, .param .u64 pb, .param .u64 pout)
{{
    .reg .pred %p<2>;
    .reg .b16 %rs<2>;
    .reg .b32 %r<10>;
    .reg .b64 %rd<10>;
    ld.param.u64 %rd1, [pa];
    ld.param.u64 %rd2, [pb];
    ld.param.u64 %rd3, [pout];
    mov.u32 %r0, %tid.x;
    mul.wide.u32 %rd4, %r0, 4;
    add.u64 %rd5, %rd1, %rd4;
    ld.global.u32 %r1, [%rd5];
    add.u64 %rd5, %rd2, %rd4;
    ld.global.u32 %r2, [%rd5];
    {body}
    add.u64 %rd5, %rd3, %rd4;
    st.global.u32 [%rd5], %r9;
    ret;
}}
"""


@pytest.mark.parametrize("body,ref", _INT_OPS, ids=[b.split()[0] + "_" + str(i) for i, (b, _) in enumerate(_INT_OPS)])
def test_integer_ops_bit_exact(body, ref):
    rng = np.random.default_rng(11)
    n = 64
    a = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)
    a[:4] = [0, 1, 0x7FFFFFFF, 0xFFFFFFFF]          # edge values
    b[:4] = [0xFFFFFFFF, 0, 32, 31]
    a[a == 0x80000000] = 7                          # INT_MIN / -1 is undefined in PTX
    out = np.zeros(n, np.uint32)
    run_kernel(_int_kernel(body), "intop", grid=(1,), block=(n,), args=[Buffer(a), Buffer(b), Buffer(out)])
    expect = ref(a.copy(), b.copy()).astype(np.uint32)
    wrong = [(hex(x), hex(y), hex(o), hex(e)) for x, y, o, e in zip(a, b, out, expect) if o != e]
    assert not wrong, wrong[:4]


@pytest.mark.parametrize("body,ref", [
    # the f32 bits of 1 / a, a = %r1 read as f32 (rcp.approx is the correctly rounded value here)
    ("mov.b32 %f1, %r1;\n rcp.approx.ftz.f32 %f2, %f1;\n mov.b32 %r9, %f2;",
     lambda a: (np.float32(1) / a.view(np.float32)).view(np.uint32)),
    ("mov.b32 %f1, %r1;\n rcp.rn.f32 %f2, %f1;\n mov.b32 %r9, %f2;",
     lambda a: (np.float32(1) / a.view(np.float32)).view(np.uint32)),
    # 1 / a in f64, a = %r1 as an integer; the result's high word
    ("cvt.rn.f64.u32 %fd1, %r1;\n rcp.rn.f64 %fd2, %fd1;\n mov.b64 %rd9, %fd2;\n shr.u64 %rd9, %rd9, 32;\n"
     " cvt.u32.u64 %r9, %rd9;",
     lambda a: ((np.float64(1) / a.astype(np.float64)).view(np.uint64) >> np.uint64(32)).astype(np.uint32)),
], ids=["rcp_approx_f32", "rcp_rn_f32", "rcp_rn_f64"])
def test_rcp_gives_the_reciprocal(body, ref):
    rng = np.random.default_rng(12)
    a = rng.uniform(-1e6, 1e6, 64).astype(np.float32).view(np.uint32) if "f64" not in body else \
        rng.integers(1, 2 ** 32, 64, dtype=np.uint64).astype(np.uint32)
    if "f64" not in body:
        a[:3] = np.array([1.0, -0.0, 3.0], np.float32).view(np.uint32)    # exact, -inf, rounded
    kernel = _int_kernel(body).replace(".reg .b64 %rd<10>;", ".reg .b64 %rd<10>;\n    .reg .f32 %f<3>;\n"
                                       "    .reg .f64 %fd<3>;")
    out = np.zeros(a.size, np.uint32)
    run_kernel(kernel, "intop", grid=(1,), block=(a.size,), args=[Buffer(a), Buffer(a.copy()), Buffer(out)])
    with np.errstate(divide="ignore"):
        expect = ref(a.copy())
    assert np.array_equal(out, expect), [(hex(x), hex(o), hex(e)) for x, o, e in zip(a, out, expect) if o != e][:4]


# ------------------------------------------------------------------------------------------------ failures

def _one(body: str, block=32, args=None):
    a = np.arange(block, dtype=np.uint32)
    return run_kernel(_int_kernel(body), "intop", grid=(1,), block=(block,),
                      args=args or [Buffer(a), Buffer(a.copy()), Buffer(np.zeros(block, np.uint32))])


def test_unsupported_instruction_names_it_and_its_line():
    with pytest.raises(UnsupportedInstructionError) as e:
        _one("popc.b32 %r9, %r1;")
    assert "popc" in str(e.value) and e.value.loc is not None and e.value.loc.line == 20
    assert "popc.b32" in e.value.instr
    with pytest.raises(UnsupportedInstructionError, match="atomics"):
        _one("atom.global.add.noftz.f16 %rs1, [%rd5], %rs1;")


def test_trap_is_an_execution_error_only_where_its_guard_holds():
    _one("setp.gt.u32 %p1, %r0, 99;\n @%p1 trap;\n mov.u32 %r9, 0;")         # no thread has tid > 99
    with pytest.raises(ExecutionError, match="trap executed by 2 thread"):
        _one("setp.gt.u32 %p1, %r0, 29;\n @%p1 trap;\n mov.u32 %r9, 0;")


_ATOM_KERNEL = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry atoms(.param .u64 pc, .param .u64 pold)
{
    .reg .pred %p<2>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<8>;
    .reg .f32 %f<3>;
    .shared .align 4 .b32 sh[1];
    ld.param.u64 %rd1, [pc];
    ld.param.u64 %rd2, [pold];
    mov.u32 %r0, %tid.x;
    mul.wide.u32 %rd3, %r0, 4;
    add.u64 %rd4, %rd2, %rd3;
    setp.eq.u32 %p0, %r0, 0;
    @%p0 st.shared.u32 [sh], 100;
    bar.sync 0;
    atom.global.add.u32 %r1, [%rd1], 1;             // counter[0]: tickets 0 .. n-1
    st.global.u32 [%rd4], %r1;
    sub.s32 %r2, 20, %r0;
    atom.global.min.s32 %r3, [%rd1+4], %r2;         // counter[1]: min(7, 20 - tid)
    add.u32 %r9, %r0, 1;
    atom.global.cas.b32 %r4, [%rd1+8], 0, %r9;      // counter[2]: the first thread's tid + 1 wins
    red.release.gpu.global.add.u32 [%rd1+12], %r0;  // counter[3]: sum of tids
    atom.relaxed.gpu.global.inc.u32 %r5, [%rd1+16], 4;   // counter[4]: wraps at 4
    cvt.rn.f32.u32 %f1, %r0;
    atom.global.add.f32 %f2, [%rd1+20], %f1;        // counter[5]: sum of tids as f32
    atom.shared.add.u32 %r6, [sh], %r0;             // sh: 100 + sum of tids
    atom.global.exch.b32 %r7, [%rd1+24], %r0;       // counter[6]: the last thread's tid
    mov.u64 %rd5, 0x100000000;
    atom.global.add.u64 %rd6, [%rd1+32], %rd5;      // counter[8..9]: n << 32
    bar.sync 0;
    @%p0 ld.shared.u32 %r8, [sh];
    @%p0 st.global.u32 [%rd1+28], %r8;
    ret;
}
"""


def test_atomics_apply_thread_by_thread():
    n = 64
    counters = np.zeros(10, np.uint32)
    counters[1] = 7
    old = np.full(n, 0xFFFFFFFF, np.uint32)
    bc, bo = Buffer(counters), Buffer(old)
    run_kernel(_ATOM_KERNEL, "atoms", grid=(1,), block=(n,), args=[bc, bo])
    c = bc.array
    assert sorted(bo.array.tolist()) == list(range(n))            # each thread got its own ticket
    assert c[0] == n
    assert c[1].view(np.int32) == min(7, 20 - (n - 1))
    assert c[2] == 1 and c[3] == n * (n - 1) // 2
    assert c[4] == n % 5                                            # inc wraps to 0 after reaching 4
    assert c[5].view(np.float32) == n * (n - 1) / 2
    assert c[6] == n - 1 and c[7] == 100 + n * (n - 1) // 2
    assert c[8:10].view(np.uint64)[0] == n << 32


def test_out_of_bounds_store_is_a_memory_fault():
    a = np.arange(32, dtype=np.uint32)
    with pytest.raises(MemoryFaultError) as e:
        run_kernel(_int_kernel("mov.u32 %r9, 1;"), "intop", grid=(1,), block=(32,),
                   args=[Buffer(a), Buffer(a.copy()), Buffer(np.zeros(31, np.uint32))])
    assert e.value.threads == (31,)


def test_barrier_skipped_by_some_threads_deadlocks():
    body = "setp.lt.u32 %p1, %r0, 40;\n @%p1 bar.sync 0;\n @!%p1 bar.sync 1;\n mov.u32 %r9, 0;"
    with pytest.raises(DeadlockError) as e:
        _one(body, block=64)
    assert len(e.value.threads) == 64


def test_divergent_loop_reconverges():
    # each thread loops tid % 5 times; the warp's shuffle afterwards must see every lane's count
    body = """mov.u32 %r9, 0;
    and.b32 %r8, %r0, 7;
$loop:
    setp.eq.u32 %p1, %r8, 0;
    @%p1 bra $done;
    add.u32 %r9, %r9, 1;
    sub.u32 %r8, %r8, 1;
    bra $loop;
$done:
    shfl.sync.bfly.b32 %r9, %r9, 1, 31, -1;"""
    out = np.zeros(32, np.uint32)
    a = np.arange(32, dtype=np.uint32)
    run_kernel(_int_kernel(body), "intop", grid=(1,), block=(32,), args=[Buffer(a), Buffer(a), Buffer(out)])
    assert (out == (np.arange(32) ^ 1) % 8).all()


def test_mma_with_part_of_a_warp_is_an_execution_error():
    mod = load_sample("hgemm_mma").build()
    text = mod.emit().text.replace("mma.sync", "@%p0 mma.sync", 1)
    rng = np.random.default_rng(0)
    a_bits, b_bits, _, _ = hgemm_inputs(rng, "f16")
    with pytest.raises(ExecutionError) as e:
        _hgemm(text, "hgemm_mma_m16n8k16_f16", a_bits, b_bits)
    assert "all threads of warp 0" in str(e.value)


def test_usage_errors():
    mod = load_sample("axpy").build()
    with pytest.raises(UsageError):
        run_kernel(mod, "nope", args=[])
    with pytest.raises(UsageError):
        run_kernel(mod, "axpy", args=[1, 2])
    with pytest.raises(UsageError):
        run_kernel(mod, "axpy", block=(2048,), args=[Buffer(np.zeros(1, np.float32))] * 2 + [1.0, 1])
    with pytest.raises(UsageError):
        coordinate_matrix(32, 32, "bf16")


# ------------------------------------------------------------------------------------------------ wgmma

def _wgmma_inputs(rng, n):
    from ptxgen.harness import from_bf16_bits, to_bf16_bits
    a = to_bf16_bits(rng.standard_normal((64, 64)).astype(np.float32))
    b = to_bf16_bits(rng.standard_normal((n, 64)).astype(np.float32))
    return a, b, from_bf16_bits(a).astype(np.float64) @ from_bf16_bits(b).astype(np.float64).T


@pytest.mark.parametrize("n", [8, 64, 256])
def test_wgmma_tile_sample_matches_numpy(n):
    w = load_sample("wgmma_tile")
    rng = np.random.default_rng(n)
    a, b, ref = _wgmma_inputs(rng, n)
    c = np.full((64, n), np.nan, np.float32)
    run_kernel(w.build(), w.kernel_name(n), grid=(1,), block=(128,), args=[Buffer(a), Buffer(b), Buffer(c)])
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5)


def _wgmma_tile_with_a_branch(before: str, after_mma: str = "", after_ret: str = ""):
    """The n=64 wgmma_tile kernel's text with `before` inserted ahead of its wgmma.mma_async (a predicate
    %pdl is declared for it), `after_mma` behind it, and `after_ret` between its ret and closing brace."""
    w = load_sample("wgmma_tile")
    name = w.kernel_name(64)
    text = w.build().emit().text
    head, rest = text.split(f".entry {name}(", 1)
    body, tail = rest.split("\n}\n", 1)
    body = body.replace("\t.reg .b32 %q, %q_1;\n", "\t.reg .b32 %q, %q_1;\n\t.reg .pred %pdl;\n", 1)
    i = body.index("\twgmma.mma_async")
    j = body.index("\n", i) + 1
    body = body[:i] + before + body[i:j] + after_mma + body[j:]
    assert body.rstrip().endswith("ret;")
    return f"{head}.entry {name}({body}\n{after_ret}}}\n{tail}", name


def test_wgmma_waits_for_a_lane_still_in_a_branch():
    """Thread 0 takes a detour (placed after the kernel's ret, so the other 127 threads reach the wgmma
    first) and comes back: the early threads wait at the wgmma, and the warpgroup issues it together."""
    text, name = _wgmma_tile_with_a_branch(
        "\tsetp.eq.u32 %pdl, %r0, 0;\n\t@%pdl bra $L_detour;\n$L_back:\n",
        after_ret="$L_detour:\n\tadd.u32 %r29, %r29, 0;\n\tadd.u32 %r29, %r29, 0;\n\tbra $L_back;\n")
    rng = np.random.default_rng(3)
    a, b, ref = _wgmma_inputs(rng, 64)
    c = np.full((64, 64), np.nan, np.float32)
    run_kernel(text, name, grid=(1,), block=(128,), args=[Buffer(a), Buffer(b), Buffer(c)])
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("skip, want", [
    # thread 0 skips the first wgmma and waits alone at the next one
    ("after_mma", "they wait at 2 different wgmma instructions (127 at this one, 1 elsewhere)"),
    # thread 0 skips to the ret: the other 127 wait at the wgmma for good
    ("after_ret", "only 127 reached it and the others cannot (1 threads exited)")])
def test_wgmma_that_one_thread_skips_is_an_error(skip, want):
    """Thread 0 branches around a wgmma: reported at the wgmma where most of the warpgroup waits."""
    where = {"after_mma": "$L_skip:\n"} if skip == "after_mma" else {"after_ret": "$L_skip:\n\tret;\n"}
    text, name = _wgmma_tile_with_a_branch("\tsetp.eq.u32 %pdl, %r0, 0;\n\t@%pdl bra $L_skip;\n", **where)
    rng = np.random.default_rng(4)
    a, b, _ = _wgmma_inputs(rng, 64)
    c = np.full((64, 64), np.nan, np.float32)
    with pytest.raises(ExecutionError) as e:
        run_kernel(text, name, grid=(1,), block=(128,), args=[Buffer(a), Buffer(b), Buffer(c)])
    msg = str(e.value)
    assert "all 128 threads of warpgroup 0 must execute it together" in msg and want in msg, msg
    assert "wgmma.mma_async" in msg


def test_wgmma_descriptor_addresses_follow_the_samples_swizzle():
    from ptxgen.executor import _operand_addresses
    w = load_sample("wgmma_tile")
    r, k = np.meshgrid(np.arange(64), np.arange(16), indexing="ij")
    for step in range(4):
        desc = w.TILE_A.descriptor(0, step).encode()
        got = _operand_addresses(desc, 64, 32)[:, 0::2]          # the first byte of each bf16
        assert (got == w.swizzled_offset(r, k + 16 * step)).all()


def test_wgmma_reading_with_the_wrong_swizzle_is_wrong():
    # the same kernel with descriptors that claim no swizzle reads the swizzled tiles as plain core matrices
    w = load_sample("wgmma_tile")
    fixed = w.DESC_FIXED
    text = w.build().emit().text
    wrong = fixed & ~(3 << 62)
    assert str(fixed) in text
    rng = np.random.default_rng(1)
    a, b, ref = _wgmma_inputs(rng, 64)
    c = np.full((64, 64), np.nan, np.float32)
    run_kernel(text.replace(str(fixed), str(wrong)), w.kernel_name(64), grid=(1,), block=(128,),
               args=[Buffer(a), Buffer(b), Buffer(c)])
    assert not np.allclose(c, ref, rtol=1e-3, atol=1e-3)


# ------------------------------------------------------------------------------------------------ mbarrier

def _mbarrier_kernel(arrivals: int) -> str:
    """Warp 1 writes shared memory and arrives; warp 0 (earlier in the code) waits on phase 0 and copies it out."""
    return f"""
.version 8.0
.target sm_90a
.address_size 64
.visible .entry mb(.param .u64 pout)
{{
    .shared .align 8 .b64 bar;
    .shared .align 4 .b32 data[32];
    .reg .pred %p<3>;
    .reg .b32 %r<10>;
    .reg .b64 %rd<10>;
    ld.param.u64 %rd1, [pout];
    mov.u32 %r0, %tid.x;
    mov.u32 %r1, bar;
    mov.u32 %r2, data;
    and.b32 %r3, %r0, 31;
    shl.b32 %r4, %r3, 2;
    add.u32 %r5, %r2, %r4;
    setp.eq.u32 %p0, %r0, 0;
    @%p0 mbarrier.init.shared::cta.b64 [%r1], {arrivals};
    bar.sync 0;
    setp.ge.u32 %p1, %r0, 32;
    @%p1 bra $producer;
$wait:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r1], 0;
    @!%p2 bra $wait;
    ld.shared.u32 %r6, [%r5];
    mul.wide.u32 %rd2, %r0, 4;
    add.u64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r6;
    ret;
$producer:
    mul.lo.u32 %r7, %r0, 3;
    st.shared.u32 [%r5], %r7;
    mbarrier.arrive.shared::cta.b64 %rd4, [%r1];
    ret;
}}
"""


def test_mbarrier_orders_producer_and_consumer_warps():
    out = np.zeros(32, np.uint32)
    run_kernel(_mbarrier_kernel(32), "mb", grid=(1,), block=(64,), args=[Buffer(out)])
    assert (out == 3 * (np.arange(32) + 32)).all()


def test_mbarrier_that_never_completes_reports_its_phase():
    out = np.zeros(32, np.uint32)
    with pytest.raises(DeadlockError) as e:
        run_kernel(_mbarrier_kernel(33), "mb", grid=(1,), block=(64,), args=[Buffer(out)])
    msg = str(e.value)
    assert "1 of 33 arrivals" in msg and "phase 0" in msg
    assert e.value.loc.line == 25 and len(e.value.threads) == 32



def _cp_async_mbarrier_kernel(count: int, noinc: bool) -> str:
    """Warp 1 cp.asyncs 16 bytes a lane into shared memory and arrives on the barrier when its copies land
    (cp.async.mbarrier.arrive); warp 0 waits on phase 0 and copies the shared words out."""
    return f"""
.version 8.0
.target sm_80
.address_size 64
.visible .entry cpmb(.param .u64 pin, .param .u64 pout)
{{
    .shared .align 8 .b64 bar;
    .shared .align 16 .b32 data[128];
    .reg .pred %p<3>;
    .reg .b32 %r<10>;
    .reg .b64 %rd<10>;
    ld.param.u64 %rd0, [pin];
    ld.param.u64 %rd1, [pout];
    mov.u32 %r0, %tid.x;
    mov.u32 %r1, bar;
    mov.u32 %r2, data;
    and.b32 %r3, %r0, 31;
    shl.b32 %r4, %r3, 4;
    add.u32 %r5, %r2, %r4;
    setp.eq.u32 %p0, %r0, 0;
    @%p0 mbarrier.init.shared.b64 [%r1], {count};
    bar.sync 0;
    setp.ge.u32 %p1, %r0, 32;
    @%p1 bra $producer;
$wait:
    mbarrier.test_wait.parity.shared.b64 %p2, [%r1], 0;
    @!%p2 bra $wait;
    ld.shared.v4.u32 {{%r6, %r7, %r8, %r9}}, [%r5];
    cvt.u64.u32 %rd2, %r4;
    add.u64 %rd3, %rd1, %rd2;
    st.global.v4.u32 [%rd3], {{%r6, %r7, %r8, %r9}};
    ret;
$producer:
    cvt.u64.u32 %rd4, %r4;
    add.u64 %rd5, %rd0, %rd4;
    cp.async.cg.shared.global [%r5], [%rd5], 16;
    cp.async.mbarrier.arrive{'.noinc' if noinc else ''}.shared.b64 [%r1];
    {'' if noinc else 'mbarrier.arrive.shared.b64 %rd6, [%r1];'}
    ret;
}}
"""


def test_cp_async_mbarrier_arrive_completes_the_phase_with_noinc_and_cancels_without():
    # warp 0 spins on mbarrier.test_wait before warp 1 (later in the code) has copied: the executor delays
    # the failing test_wait instead of letting the spin starve the producer
    src = np.arange(128, dtype=np.uint32) * 7 + 1
    # .noinc: the 32 copying lanes are the barrier's 32 expected arrivals
    out = np.zeros(128, np.uint32)
    run_kernel(_cp_async_mbarrier_kernel(32, True), "cpmb", grid=(1,), block=(64,), args=[Buffer(src), Buffer(out)])
    assert (out == src).all()
    # without .noinc the async arrive is balanced by its own increment: the 32 plain arrives complete it
    out = np.zeros(128, np.uint32)
    run_kernel(_cp_async_mbarrier_kernel(32, False), "cpmb", grid=(1,), block=(64,), args=[Buffer(src), Buffer(out)])
    assert (out == src).all()


def _warp_sync_kernel(second: str) -> str:
    """Lanes 0-15 of a warp branch off and write shared words, lanes 16-31 wait at bar.warp.sync first;
    after the meeting every lane reads the word of lane (l + 16) % 32. `second` is what lanes 0-15 run
    where they meet the others."""
    return f"""
.version 8.0
.target sm_80
.address_size 64
.visible .entry ws(.param .u64 pout)
{{
    .shared .align 4 .b32 data[32];
    .reg .pred %p<3>;
    .reg .b32 %r<10>;
    .reg .b64 %rd<10>;
    ld.param.u64 %rd1, [pout];
    mov.u32 %r0, %tid.x;
    mov.u32 %r2, data;
    shl.b32 %r4, %r0, 2;
    add.u32 %r5, %r2, %r4;
    setp.lt.u32 %p1, %r0, 16;
    @%p1 bra $low;
    mul.lo.u32 %r7, %r0, 5;
    st.shared.u32 [%r5], %r7;
    bar.warp.sync -1;
    bra $read;
$low:
    mul.lo.u32 %r7, %r0, 3;
    st.shared.u32 [%r5], %r7;
    {second}
$read:
    add.u32 %r8, %r0, 16;
    and.b32 %r8, %r8, 31;
    shl.b32 %r8, %r8, 2;
    add.u32 %r8, %r2, %r8;
    ld.shared.u32 %r6, [%r8];
    mul.wide.u32 %rd2, %r0, 4;
    add.u64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r6;
    ret;
}}
"""


def test_bar_warp_sync_joins_lanes_that_arrive_at_different_instructions():
    out = np.zeros(32, np.uint32)
    run_kernel(_warp_sync_kernel("bar.warp.sync -1;"), "ws", grid=(1,), block=(32,), args=[Buffer(out)])
    lane = np.arange(32)
    src = (lane + 16) % 32
    assert (out == np.where(src < 16, 3 * src, 5 * src)).all()


def test_bar_warp_sync_that_cannot_complete_is_a_deadlock():
    with pytest.raises(DeadlockError, match="bar.warp.sync of warp 0") as e:
        run_kernel(_warp_sync_kernel("bar.sync 0;"), "ws", grid=(1,), block=(32,), args=[Buffer(np.zeros(32, np.uint32))])
    assert len(e.value.threads) == 32


def test_a_polled_test_wait_returns_false_when_nothing_else_can_complete_the_phase():
    # every thread polls the barrier once, arrives itself when it is not complete yet, then waits:
    # the delayed test_wait must still return false rather than wait for arrivals that only come after it
    ptx = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry poll(.param .u64 pout)
{
    .shared .align 8 .b64 bar;
    .reg .pred %p<4>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [pout];
    mov.u32 %r0, %tid.x;
    mov.u32 %r1, bar;
    setp.eq.u32 %p0, %r0, 0;
    @%p0 mbarrier.init.shared.b64 [%r1], 32;
    bar.sync 0;
    mbarrier.test_wait.parity.shared.b64 %p1, [%r1], 0;
    @!%p1 mbarrier.arrive.shared.b64 %rd2, [%r1];
$w:
    mbarrier.test_wait.parity.shared.b64 %p2, [%r1], 0;
    @!%p2 bra $w;
    selp.u32 %r2, 1, 0, %p1;
    mul.wide.u32 %rd3, %r0, 4;
    add.u64 %rd4, %rd1, %rd3;
    st.global.u32 [%rd4], %r2;
    ret;
}
"""
    out = np.full(32, 7, np.uint32)
    run_kernel(ptx, "poll", grid=(1,), block=(32,), args=[Buffer(out)])
    assert (out == 0).all()

# ------------------------------------------------------------------------------------------------ mma.sync forms

def _elem_bits(x: np.ndarray, t: str) -> np.ndarray:
    """Bits of small-integer-valued elements of type t (every value used is exact in every type)."""
    if t == "f16":
        return x.astype(np.float16).view(np.uint16).astype(np.uint64)
    if t == "bf16":
        return (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint64)
    if t in ("tf32", "f32"):
        return x.astype(np.float32).view(np.uint32).astype(np.uint64)
    if t == "f64":
        return x.astype(np.float64).view(np.uint64)
    if t == "s8":
        return x.astype(np.int8).view(np.uint8).astype(np.uint64)
    return x.astype(np.int32).view(np.uint32).astype(np.uint64)  # s32


def _elem_values(bits: np.ndarray, t: str) -> np.ndarray:
    if t == "f16":
        return bits.astype(np.uint16).view(np.float16).astype(np.float64)
    if t == "f32":
        return bits.astype(np.uint32).view(np.float32).astype(np.float64)
    if t == "f64":
        return bits.view(np.float64)
    return bits.astype(np.uint32).view(np.int32).astype(np.float64)  # s32


def _fragment_words(fm, matrix) -> np.ndarray:
    """[32, regs] register words of a matrix placed by its fragment map."""
    el = _elem_bits(fm.scatter(matrix), fm.dtype)
    words = np.zeros(el.shape[:2], np.uint64)
    for e in range(fm.elems):
        words |= el[..., e] << np.uint64(e * fm.bits)
    return words


def _mma_kernel(opcode, fa, fb, fc, fd) -> str:
    """Each lane loads its A, B, C fragment registers from per-lane rows, runs one mma.sync, stores D."""
    lines, regs = [], {}
    for name, fm, pname in (("a", fa, "pa"), ("b", fb, "pb"), ("c", fc, "pc"), ("d", fd, "pd")):
        width = fm.elems * fm.bits
        rtype = "f64" if fm.dtype == "f64" else "b32"
        regs[name] = [f"%{name}{i}" for i in range(fm.regs)]
        lines.append(f".reg .{rtype} %{name}<{fm.regs}>;")
        lines.append(f"ld.param.u64 %rd1, [{pname}];")
        lines.append(f"mul.wide.u32 %rd2, %r0, {fm.regs * width // 8};")
        lines.append("add.u64 %rd3, %rd1, %rd2;")
        op = "st" if name == "d" else "ld"
        if name == "d":
            lines.append(f"{opcode} {{{', '.join(regs['d'])}}}, {{{', '.join(regs['a'])}}}, "
                         f"{{{', '.join(regs['b'])}}}, {{{', '.join(regs['c'])}}};")
        for i, r in enumerate(regs[name]):
            addr = f"[%rd3+{i * width // 8}]"
            lines.append(f"{op}.global.{rtype} {addr}, {r};" if op == "st" else f"ld.global.{rtype} {r}, {addr};")
    body = "\n    ".join(lines)
    return f"""
.version 8.0
.target sm_90a
.address_size 64
.visible .entry mmak(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)
{{
    .reg .b32 %r<1>;
    .reg .b64 %rd<4>;
    mov.u32 %r0, %tid.x;
    {body}
    ret;
}}
"""


@pytest.mark.parametrize("shape,at,ct", [("m16n8k16", "f16", "f16"), ("m16n8k8", "bf16", "f32"),
                                         ("m16n8k8", "tf32", "f32"), ("m16n8k32", "s8", "s32"),
                                         ("m8n8k4", "f64", "f64"), ("m16n8k16", "f64", "f64")])
def test_mma_sync_forms_match_numpy(shape, at, ct):
    from ptxgen.layout import fragment_map
    fa, fb = fragment_map(f"mma.{shape}", "a", at), fragment_map(f"mma.{shape}", "b", at)
    fc, fd = fragment_map(f"mma.{shape}", "c", ct), fragment_map(f"mma.{shape}", "d", ct)
    rng = np.random.default_rng(len(shape) + len(at))
    A = rng.integers(-4, 5, (fa.rows, fa.cols)).astype(np.float64)
    B = rng.integers(-4, 5, (fb.rows, fb.cols)).astype(np.float64)
    C = rng.integers(-50, 50, (fc.rows, fc.cols)).astype(np.float64)
    word = np.uint64 if fa.dtype == "f64" else np.uint32
    bufs = [Buffer(_fragment_words(f, x).astype(word)) for f, x in ((fa, A), (fb, B), (fc, C))]
    out = Buffer(np.zeros((32, fd.regs), np.uint64 if fd.dtype == "f64" else np.uint32))
    opcode = f"mma.sync.aligned.{shape}.row.col.{ct}.{at}.{at}.{ct}"
    run_kernel(_mma_kernel(opcode, fa, fb, fc, fd), "mmak", grid=(1,), block=(32,), args=bufs + [out])
    words = out.array.astype(np.uint64)
    mask = np.uint64((1 << fd.bits) - 1 if fd.bits < 64 else 2 ** 64 - 1)
    el = np.stack([(words >> np.uint64(e * fd.bits)) & mask for e in range(fd.elems)], axis=-1)
    got = fd.gather(_elem_values(el, fd.dtype))
    assert (got == A @ B + C).all()


def test_prefetches_are_cache_hints_only():
    """prefetch (global, L2) and prefetch.tensormap change nothing the executor models: the store after
    them lands, from parsed PTX text."""
    text = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 out, .param .align 64 .b8 tm[128])
{
.reg .b64 %rd<4>;
.reg .b32 %r<2>;
ld.param.u64 %rd1, [out];
cvta.to.global.u64 %rd2, %rd1;
cvta.param.u64 %rd3, tm;
prefetch.global.L2 [%rd2];
prefetch.tensormap [%rd3];
mov.u32 %r1, %tid.x;
st.global.u32 [%rd2], %r1;
ret;
}
"""
    out = np.full(1, 7, dtype=np.uint32)
    run_kernel(parse_ptx(text, "prefetch.ptx"), "k", grid=(1,), block=(1,), args=[Buffer(out), bytes(128)])
    assert out[0] == 0


def test_record_keeps_the_registers_of_an_address():
    """RunStats.records: a recorded load or store lists its address register with its value per thread,
    beside the registers it moves."""
    import ptxgen as pg
    m = pg.Module("sm_90a")
    k = m.entry("addr_rec", reqntid=32)
    out = k.cvta(k.ld_param(k.param_ptr("out", pg.u32, align=4)), "global", to=True)
    addr = k.add(out, k.mul(k.cvt(k.tid.x, pg.u64), 4, mode="lo"))
    k.st(addr, k.mul(k.tid.x, 3, mode="lo"), space="global")
    k.ret()
    buf = Buffer(np.zeros(32, np.uint32))
    stats = run_kernel(m, "addr_rec", grid=(1,), block=(32,), args=[buf], record=("st.global",))
    (rec,) = stats.records
    base, value = rec.instr.operands
    assert list(buf.array) == [3 * t for t in range(32)]
    assert list(rec.values[value.name]) == [3 * t for t in range(32)]
    addrs = rec.values[base.base.name].astype(np.int64)
    assert list(np.diff(addrs)) == [4] * 31


def test_record_lists_only_the_threads_whose_guard_holds():
    """RunStats.records: a guarded instruction is recorded for the threads that execute it (guard true,
    or false under @!p), and not at all where none of them does."""
    import ptxgen as pg
    m = pg.Module("sm_90a")
    k = m.entry("guard_rec", reqntid=32)
    out = k.cvta(k.ld_param(k.param_ptr("out", pg.u32, align=4)), "global", to=True)
    addr = k.add(out, k.mul(k.cvt(k.tid.x, pg.u64), 4, mode="lo"))
    low = k.setp("lt", k.tid.x, 5)
    k.st(addr, 1, pg.u32, space="global", guard=low)
    k.st(addr, 2, pg.u32, space="global", guard=k.not_(low))
    k.st(addr, 3, pg.u32, space="global", guard=k.setp("gt", k.tid.x, 40))
    k.ret()
    buf = Buffer(np.zeros(32, np.uint32))
    stats = run_kernel(m, "guard_rec", grid=(1,), block=(32,), args=[buf], record=("st.global",))
    assert list(buf.array) == [1] * 5 + [2] * 27
    assert [list(r.threads) for r in stats.records] == [list(range(5)), list(range(5, 32))]
    base = stats.records[0].instr.operands[0].base.name
    assert len(stats.records[1].values[base]) == 27


# CTA c waits until CTA c + 1 has raised its flag, then raises its own and records the order it got:
# only the last CTA can start, so one CTA at a time never ends, while resident CTAs do
_CHAIN_KERNEL = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry chain(.param .u64 flags, .param .u64 order)
{
    .reg .pred %p<3>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [flags];
    ld.param.u64 %rd2, [order];
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %nctaid.x;
    mov.u32 %r3, %tid.x;
    setp.ne.u32 %p1, %r3, 0;
    @%p1 bra $out;
    add.u32 %r4, %r1, 1;
    setp.ge.u32 %p2, %r4, %r2;
    @%p2 bra $mine;
    mul.wide.u32 %rd3, %r4, 4;
    add.s64 %rd4, %rd1, %rd3;
$spin:
    ld.acquire.gpu.global.u32 %r5, [%rd4];
    setp.eq.u32 %p2, %r5, 0;
    @%p2 bra $spin;
$mine:
    atom.global.add.u32 %r6, [%rd2], 1;
    mul.wide.u32 %rd5, %r1, 4;
    add.s64 %rd6, %rd2, %rd5;
    st.global.u32 [%rd6+4], %r6;
    add.s64 %rd7, %rd1, %rd5;
    st.release.gpu.global.u32 [%rd7], 1;
$out:
    ret;
}
"""


def test_concurrent_ctas_wait_on_each_others_flags():
    flags, order = np.zeros(5, np.uint32), np.zeros(6, np.uint32)
    bo = Buffer(order)
    stats = run_kernel(_CHAIN_KERNEL, "chain", grid=(5,), block=(64,), args=[Buffer(flags), bo], concurrent=True)
    assert stats.ctas == 5
    assert bo.array[0] == 5 and bo.array[1:].tolist() == [4, 3, 2, 1, 0]    # the last CTA went first
    with pytest.raises(ExecutionError, match="spin-wait"):
        run_kernel(_CHAIN_KERNEL, "chain", grid=(5,), block=(64,), max_steps=20_000,
                   args=[Buffer(np.zeros(5, np.uint32)), Buffer(np.zeros(6, np.uint32))])


def test_concurrent_ctas_compute_what_one_at_a_time_does(monkeypatch):
    # turns of 7 steps interleave the CTAs' barriers and shared-memory trees; each keeps its own
    import ptxgen.executor as ex
    monkeypatch.setattr(ex, "CTA_QUANTUM", 7)
    mod = load_sample("block_reduce").build()
    x = np.random.default_rng(5).standard_normal(3000).astype(np.float32)
    outs = []
    for concurrent in (False, True):
        out = np.full(3, np.nan, np.float32)
        run_kernel(mod, "block_reduce", grid=(3,), block=(256,), args=[Buffer(x), Buffer(out), 3000],
                   concurrent=concurrent)
        outs.append(out)
    assert not np.isnan(outs[1]).any() and outs[0].tobytes() == outs[1].tobytes()
