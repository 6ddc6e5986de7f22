"""ptxgen.layout's fragment maps checked with index-coded data, per (thread, register), on the GPU and in
the executor (runner "cpu" runs in CI; "gpu" is marked and needs an sm_90 GPU).

ldmatrix .x1/.x2/.x4 (.trans): the shared matrix holds value row*8 + col + 1 at row r, and the rows are
  stored in a scrambled slot order so that the per-lane row addresses are exercised; each lane dumps its
  registers, and every 16-bit half must name the (row, col) the map gives.
stmatrix: lane l puts the code of (lane, register, element) in each half; the matrix written must hold at
  (row, col) the code of the owner the map gives.
mma.sync: each thread loads its A, B and C registers from global memory, filled on the host through the
  claimed maps from coded matrices; the tensor core computes D, and each thread dumps its D registers.
  Three kinds of run isolate each operand: coded A times a column selector B (D = 8 columns of A), a row
  selector A times coded B (D = rows of B), and A = B = 0 with coded C (D = C). Every D register must
  hold the value the D map's (row, col) has in the expected product. A wrong A, B, C or D map breaks it.
wgmma.mma_async accumulator: A[i, 0] = i, A[i, 1] = 1, B[j, 0] = N, B[j, 1] = j (rest 0), so
  D[i, j] = i*N + j; each of the 128 threads dumps its registers.
"""
from __future__ import annotations

import functools

import numpy as np
import pytest

import ptxgen as pg
from ptxgen.executor import bits_to, to_bits
from ptxgen.layout import fragment_map

RUNNERS = ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)]

MATRIX_FORMS = [(num, trans) for num in (1, 2, 4) for trans in (False, True)]
# (shape, input type, accumulator type)
MMA_FORMS = [
    ("m16n8k16", "f16", "f32"), ("m16n8k16", "bf16", "f32"), ("m16n8k16", "f16", "f16"),
    ("m16n8k8", "f16", "f32"), ("m16n8k8", "bf16", "f32"), ("m16n8k8", "tf32", "f32"),
    ("m16n8k4", "tf32", "f32"), ("m16n8k16", "s8", "s32"), ("m16n8k32", "s8", "s32"),
    ("m8n8k4", "f64", "f64"),
]
WGMMA_N = (8, 64)


def _slot(k, row, rows: int):
    """The shared slot of matrix row `row`: (5*row + 3) mod rows, a permutation (rows is a power of two)."""
    return k.and_(k.add(k.mul(row, 5, mode="lo"), 3), rows - 1)


def _slot_np(row, rows: int):
    return (5 * np.asarray(row) + 3) % rows


def _mma_name(shape, at, ct):
    return f"probe_mma_{shape}_{at}_{ct}"


def _matrix_name(fam, num, trans):
    return f"probe_{fam}_x{num}{'_trans' if trans else ''}"


def _matrix_probe(m, fam, num, trans):
    """The entry of an ldmatrix/stmatrix probe: one warp, the global src/out pointers, and a shared
    matrix of 8 * num rows of 16 bytes. Returns (k, rows, gsrc, gout, lane, shared base)."""
    rows = 8 * num
    k = m.entry(_matrix_name(fam, num, trans), reqntid=32)
    psrc, pout = k.param_ptr("src", align=16), k.param_ptr("out", align=16)
    sm = k.shared("mat", rows * 16, align=128)
    gsrc = k.cvta(k.ld_param(psrc), "global", to=True)
    gout = k.cvta(k.ld_param(pout), "global", to=True)
    return k, rows, gsrc, gout, k.tid.x, k.mov(sm, type=pg.u32)


def _ldmatrix_kernel(m, num, trans):
    k, rows, gsrc, gout, lane, base = _matrix_probe(m, "ldmatrix", num, trans)
    with k.if_(k.setp("lt", lane, rows)):
        v = k.ld(k.add(gsrc, k.cvt(k.shl(lane, 4), pg.u64, pg.u32)), pg.b32, vec=4)
        k.st(k.add(base, k.shl(_slot(k, lane, rows), 4)), v, pg.b32, space="shared")
    k.bar_sync(0)
    row = k.and_(lane, rows - 1)      # lanes past 8*num give addresses too (ignored): keep them valid
    regs = k.ldmatrix(k.add(base, k.shl(_slot(k, row, rows), 4)), num=num, trans=trans)
    out = k.add(gout, k.mul(lane, 4 * num, mode="wide"))
    for i, r in enumerate(regs):
        k.st(pg.mem(out, 4 * i), r, pg.b32)
    k.ret()


def _stmatrix_kernel(m, num, trans):
    k, rows, gsrc, gout, lane, base = _matrix_probe(m, "stmatrix", num, trans)
    src = k.add(gsrc, k.mul(lane, 4 * num, mode="wide"))
    regs = [k.ld(pg.mem(src, 4 * i), pg.b32) for i in range(num)]
    row = k.and_(lane, rows - 1)
    k.stmatrix(k.add(base, k.shl(_slot(k, row, rows), 4)), regs, trans=trans)
    k.bar_sync(0)
    with k.if_(k.setp("lt", lane, rows)):
        v = k.ld(k.add(base, k.shl(lane, 4)), pg.b32, space="shared", vec=4)
        k.st(k.add(gout, k.cvt(k.shl(lane, 4), pg.u64, pg.u32)), v, pg.b32)
    k.ret()


def _mma_kernel(m, shape, at, ct):
    k = m.entry(_mma_name(shape, at, ct), reqntid=32)
    ptrs = [k.param_ptr(n, align=16) for n in ("a", "b", "c", "d")]
    g = [k.cvta(k.ld_param(p), "global", to=True) for p in ptrs]
    lane = k.tid.x
    frags = [k.mma_fragment(op, shape, atype=at, ctype=ct, name=op) for op in "abcd"]
    for op, gp, fr in zip("abc", g, frags):
        size = fr[0].type.bits // 8
        base = k.add(gp, k.mul(lane, size * len(fr), mode="wide"))
        for i, r in enumerate(fr):
            k.ld(pg.mem(base, size * i), r.type, dst=r)
    a, b, c, d = frags
    k.mma_sync(shape, d, a, b, c, atype=at, ctype=ct)
    size = d[0].type.bits // 8
    base = k.add(g[3], k.mul(lane, size * len(d), mode="wide"))
    for i, r in enumerate(d):
        k.st(pg.mem(base, size * i), r)
    k.ret()


def _core_offset(k, q):
    """Shared byte offset of 16-byte piece q of a dense K-major tile with 16 elements of K per row (row
    q // 2, K half q % 2) in the no-swizzle wgmma layout: core matrix (row // 8, half), 128 bytes each,
    row % 8 inside it."""
    row, half = k.shr(q, 1), k.and_(q, 1)
    return k.add(k.add(k.shl(k.shr(row, 3), 8), k.shl(half, 7)), k.shl(k.and_(row, 7), 4))


def _wgmma_kernel(m, n):
    """A (64 x 16) and B (n x 16) bf16, K-major, no swizzle (8x16-byte core matrices; LBO = 128 between the
    two along K, SBO = 256 between 8-row groups), staged from dense global tiles; dumps D per thread."""
    from ptxgen.ops.wgmma_desc import SmemTile
    k = m.entry(f"probe_wgmma_m64n{n}k16", reqntid=128)
    pa, pb, pd = k.param_ptr("a", align=16), k.param_ptr("b", align=16), k.param_ptr("d", align=16)
    sa, sb = k.shared("sa", 64 * 32, align=128), k.shared("sb", n * 32, align=128)
    ga, gb, gd = (k.cvta(k.ld_param(p), "global", to=True) for p in (pa, pb, pd))
    tid = k.tid.x
    for gsrc, smem, rows in ((ga, sa, 64), (gb, sb, n)):
        base = k.mov(smem, type=pg.u32)
        with k.for_range(tid, rows * 2, 128, name="q") as q:
            v = k.ld(k.add(gsrc, k.cvt(k.shl(q, 4), pg.u64, pg.u32)), pg.b32, vec=4)
            k.st(k.add(base, _core_offset(k, q)), v, pg.b32, space="shared")
    k.fence_proxy_async("shared::cta")
    k.bar_sync(0)
    descs = []
    for smem, rows in ((sa, 64), (sb, n)):
        descs.append(k.wgmma_descriptor(k.mov(smem, type=pg.u32), SmemTile(rows, 16, "bf16", "K", "none")))
    shape = f"m64n{n}k16"
    acc = k.wgmma_fragment("d", shape, dtype="f32", atype="bf16", name="acc")
    for r in acc:
        k.mov(0.0, dst=r)
    k.wgmma_fence()
    k.wgmma_mma_async(shape, acc, descs[0], descs[1], dtype="f32", atype="bf16", btype="bf16")
    k.wgmma_commit_group()
    k.wgmma_wait_group(0)
    out = k.add(gd, k.mul(tid, 4 * len(acc), mode="wide"))
    for i, r in enumerate(acc):
        k.st(pg.mem(out, 4 * i), r)
    k.ret()


def _wgmma_rega_kernel(m, at, n=8):
    """wgmma with A in registers (loaded per thread and register from global) and B (n x 16, K-major, no
    swizzle) from shared memory; dumps D per thread."""
    from ptxgen.ops.wgmma_desc import SmemTile
    k = m.entry(f"probe_wgmma_rega_{at}", reqntid=128)
    pa, pb, pd = k.param_ptr("a", align=16), k.param_ptr("b", align=16), k.param_ptr("d", align=16)
    sb = k.shared("sb", n * 32, align=128)
    ga, gb, gd = (k.cvta(k.ld_param(p), "global", to=True) for p in (pa, pb, pd))
    tid = k.tid.x
    base = k.mov(sb, type=pg.u32)
    with k.if_(k.setp("lt", tid, n * 2)):
        v = k.ld(k.add(gb, k.cvt(k.shl(tid, 4), pg.u64, pg.u32)), pg.b32, vec=4)
        k.st(k.add(base, _core_offset(k, tid)), v, pg.b32, space="shared")
    k.fence_proxy_async("shared::cta")
    k.bar_sync(0)
    db = k.wgmma_descriptor(base, SmemTile(n, 16, at, "K", "none"))
    shape = f"m64n{n}k16"
    afrag = k.wgmma_fragment("a", shape, dtype="f32", atype=at, name="af")
    src = k.add(ga, k.mul(tid, 4 * len(afrag), mode="wide"))
    for i, r in enumerate(afrag):
        k.ld(pg.mem(src, 4 * i), r.type, dst=r)
    acc = k.wgmma_fragment("d", shape, dtype="f32", atype=at, name="acc")
    for r in acc:
        k.mov(0.0, dst=r)
    k.wgmma_fence()
    k.wgmma_mma_async(shape, acc, afrag, db, dtype="f32", atype=at, btype=at)
    k.wgmma_commit_group()
    k.wgmma_wait_group(0)
    out = k.add(gd, k.mul(tid, 4 * len(acc), mode="wide"))
    for i, r in enumerate(acc):
        k.st(pg.mem(out, 4 * i), r)
    k.ret()


@functools.lru_cache(maxsize=1)
def probe_module() -> pg.Module:
    m = pg.Module("sm_90a")
    for num, trans in MATRIX_FORMS:
        _ldmatrix_kernel(m, num, trans)
        _stmatrix_kernel(m, num, trans)
    for form in MMA_FORMS:
        _mma_kernel(m, *form)
    for n in WGMMA_N:
        _wgmma_kernel(m, n)
    for at in ("f16", "bf16"):
        _wgmma_rega_kernel(m, at)
    return m


@functools.lru_cache(maxsize=1)
def _gpu_module():
    from ptxgen.runtime import load_module
    return load_module(probe_module().emit())


def _launch(runner: str, name: str, block: int, arrays):
    """Run kernel `name` with one global buffer per array (updated in place with what the kernel wrote)."""
    if runner == "cpu":
        from ptxgen.executor import Buffer, run_kernel
        run_kernel(probe_module(), name, grid=(1,), block=(block,), args=[Buffer(a) for a in arrays])
        return
    from ptxgen.runtime import DeviceBuffer, synchronize
    f = _gpu_module().function(name)
    bufs = [DeviceBuffer.from_numpy(np.ascontiguousarray(a)) for a in arrays]
    try:
        f.launch((1,), (block,), bufs)
        synchronize()
        for a, b in zip(arrays, bufs):
            a[...] = b.to_numpy(shape=a.shape, dtype=a.dtype)
    finally:
        for b in bufs:
            b.free()


# ------------------------------------------------------------------------------------------ ldmatrix / stmatrix
@pytest.mark.parametrize("runner", RUNNERS)
@pytest.mark.parametrize("num, trans", MATRIX_FORMS)
def test_ldmatrix_map(runner, num, trans):
    fm = fragment_map(f"ldmatrix.m8n8.x{num}", trans=trans)
    rows = 8 * num
    code = (np.arange(rows)[:, None] * 8 + np.arange(8)[None, :] + 1).astype(np.uint16)
    out = np.zeros((32, num), np.uint32)
    _launch(runner, _matrix_name("ldmatrix", num, trans), 32, [code, out])
    got = np.stack([out & 0xFFFF, out >> 16], axis=-1).astype(np.int64) - 1      # [32, num, 2]
    want = fm.table[..., 0] * 8 + fm.table[..., 1]
    np.testing.assert_array_equal(got, want, err_msg=f"{fm.title}: (row*8 + col) per lane, register, half")


@pytest.mark.parametrize("runner", RUNNERS)
@pytest.mark.parametrize("num, trans", MATRIX_FORMS)
def test_stmatrix_map(runner, num, trans):
    fm = fragment_map(f"stmatrix.m8n8.x{num}", trans=trans)
    rows = 8 * num
    t, r = np.meshgrid(np.arange(32), np.arange(num), indexing="ij")
    owner_code = lambda e: (t * num + r) * 2 + e + 1  # noqa: E731
    src = (owner_code(0) | (owner_code(1) << 16)).astype(np.uint32)
    out = np.zeros((rows, 8), np.uint16)
    _launch(runner, _matrix_name("stmatrix", num, trans), 32, [src, out])
    mat = out[_slot_np(np.arange(rows), rows)].astype(np.int64) - 1        # row r was stored at its slot
    own = fm.owners
    np.testing.assert_array_equal(mat, (own[..., 0] * num + own[..., 1]) * 2 + own[..., 2],
                                  err_msg=f"{fm.title}: owner code per (row, col)")


# ------------------------------------------------------------------------------------------ mma.sync
_NP = {"f16": np.uint16, "bf16": np.uint16, "tf32": np.uint32, "f32": np.uint32, "s32": np.uint32,
       "s8": np.uint8, "f64": np.uint64}


def _coded(rows, cols, dtype):
    v = np.arange(rows * cols).reshape(rows, cols) + 1
    if dtype == "s8":
        v = v % 251 - 125   # fits .s8; every value appears at most three times
    return v.astype(np.float64)


def _regs(fm, matrix):
    """Register bits [threads, regs] holding `matrix` (values) laid out as the map claims."""
    bits = to_bits(matrix, fm.dtype).astype(np.uint64)
    out = np.zeros((fm.threads, fm.regs), np.uint64)
    for e in range(fm.elems):
        out |= bits[fm.table[:, :, e, 0], fm.table[:, :, e, 1]] << np.uint64(e * fm.bits)
    width = 64 if fm.bits == 64 else 32
    return out.astype(np.uint32 if width == 32 else np.uint64)


def _values(fm, regs):
    """Element values [threads, regs, elems] of register bits."""
    r = regs.astype(np.uint64)
    mask = np.uint64((1 << fm.bits) - 1 if fm.bits < 64 else (1 << 64) - 1)
    return np.stack([bits_to((r >> np.uint64(e * fm.bits)) & mask, fm.dtype).astype(np.float64)
                     for e in range(fm.elems)], axis=-1)


def _mma_runs(shape, at, ct):
    """(label, A, B, C) of the three kinds of run (see the module docstring)."""
    fa = fragment_map(f"mma.{shape}", "a", at)
    M, K = fa.rows, fa.cols
    N = fragment_map(f"mma.{shape}", "b", at).cols
    runs = []
    A = _coded(M, K, at)
    for s in range(-(-K // N)):
        B = np.zeros((K, N))
        for j in range(N):
            if s * N + j < K:
                B[s * N + j, j] = 1
        runs.append((f"A columns {s * N}..", A, B, np.zeros((M, N))))
    B = _coded(K, N, at)
    for s in range(-(-K // M)):
        A = np.zeros((M, K))
        for i in range(M):
            if s * M + i < K:
                A[i, s * M + i] = 1
        runs.append((f"B rows {s * M}..", A, B, np.zeros((M, N))))
    runs.append(("C", np.zeros((M, K)), np.zeros((K, N)), _coded(M, N, ct)))
    return runs


@pytest.mark.parametrize("runner", RUNNERS)
@pytest.mark.parametrize("shape, at, ct", MMA_FORMS)
def test_mma_maps(runner, shape, at, ct):
    ins = f"mma.{shape}"
    fa, fb = fragment_map(ins, "a", at), fragment_map(ins, "b", at)
    fc, fd = fragment_map(ins, "c", ct), fragment_map(ins, "d", ct)
    for label, A, B, C in _mma_runs(shape, at, ct):
        d = np.zeros((32, fd.regs), np.uint64 if fd.bits == 64 else np.uint32)
        _launch(runner, _mma_name(shape, at, ct), 32, [_regs(fa, A), _regs(fb, B), _regs(fc, C), d])
        got = _values(fd, d)
        want = (A @ B + C)[fd.table[..., 0], fd.table[..., 1]]
        bad = np.argwhere(got != want)
        assert bad.size == 0, (f"{ins} .{at} -> .{ct}, run '{label}': {len(bad)} D elements differ; first "
                               f"(lane, reg, elem) = {tuple(bad[0])}: got {got[tuple(bad[0])]}, want "
                               f"{want[tuple(bad[0])]} = D{fd.coords(*[int(x) for x in bad[0]])}")


# ------------------------------------------------------------------------------------------ wgmma
@pytest.mark.parametrize("runner", RUNNERS)
@pytest.mark.parametrize("n", WGMMA_N)
def test_wgmma_accumulator_map(runner, n):
    from ptxgen.harness import to_bf16_bits
    fd = fragment_map(f"wgmma.m64n{n}k16", "d", "f32")
    A = np.zeros((64, 16), np.float32)
    A[:, 0], A[:, 1] = np.arange(64), 1
    B = np.zeros((n, 16), np.float32)
    B[:, 0], B[:, 1] = n, np.arange(n)
    d = np.zeros((128, fd.regs), np.float32)
    _launch(runner, f"probe_wgmma_m64n{n}k16", 128, [to_bf16_bits(A), to_bf16_bits(B), d])
    want = (fd.table[..., 0] * n + fd.table[..., 1])[..., 0]
    np.testing.assert_array_equal(d, want, err_msg=f"{fd.title}: row*N + col per thread and register")


@pytest.mark.parametrize("runner", RUNNERS)
@pytest.mark.parametrize("at", ["f16", "bf16"])
def test_wgmma_register_a_map(runner, at):
    """Coded A (64 x 16) in registers as the map claims, times column selectors B: D = 8 columns of A."""
    fa, fd = fragment_map("wgmma.m64n8k16", "a", at), fragment_map("wgmma.m64n8k16", "d", "f32")
    A = _coded(64, 16, at) % 251          # exact in .bf16 and .f16
    for s in range(2):
        B = np.zeros((8, 16))             # stored N x K (K-major)
        B[np.arange(8), 8 * s + np.arange(8)] = 1
        d = np.zeros((128, fd.regs), np.float32)
        _launch(runner, f"probe_wgmma_rega_{at}", 128, [_regs(fa, A), to_bits(B, at).astype(np.uint16), d])
        want = (A @ B.T)[fd.table[..., 0], fd.table[..., 1]][..., 0]
        np.testing.assert_array_equal(d, want, err_msg=f"{fa.title}: columns {8 * s}..{8 * s + 7} of A")


@pytest.mark.ptxas
def test_probe_kernels_assemble():
    from ptxgen.ptxas import assemble
    res = assemble(probe_module().emit(), "sm_90a")
    assert len(res.resources) == len(probe_module().ir.functions)
