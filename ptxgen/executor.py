"""A CPU executor for PTX kernels: run an ir.Function one CTA at a time with numpy, no GPU needed.

    from ptxgen.executor import Buffer, run_kernel
    c = Buffer(np.zeros((16, 8), np.float32))
    run_kernel(module, "hgemm_mma_m16n8k16_f16", grid=(1,), block=(32,), args=[Buffer(a), Buffer(b), c])
    c.array                       # the kernel's result, written in place

`module` is a builder Module, an ir.Module, or PTX text (parsed with ptxgen.parse). Registers are numpy
arrays over the threads of a CTA holding raw bits (uint64); each instruction interprets them with the
type of its opcode, as the hardware does.

Scheduling: CTAs run one after another (or, with run_kernel's `concurrent`, all resident at once, taking
turns of CTA_QUANTUM steps; the CTAs of a thread-block cluster are always resident together, see
Clusters below); each thread has its own PC; every step runs the lowest PC among the runnable
threads of the CTA for all threads sitting at it. Threads of a warp that took different branches therefore meet again
at the first instruction both paths reach, and warp collectives (shfl.sync, ldmatrix, mma.sync) see
exactly the lanes that arrived together. Any interleaving of warps is a legal schedule, so picking the
lowest PC is too; a kernel that spins on a flag another warp sets later can livelock, which `max_steps`
turns into an ExecutionError.

Modelled: mov (special registers, symbol addresses, vector pack/unpack), add sub mul (lo/hi/wide) mad
fma div rem min max neg abs not and or xor shl shr setp selp cvt cvta, ld/st (global, shared, param,
generic; .v2/.v4), atom/red (integer, and .add.f32/.f64; threads applied in order), createpolicy (an
opaque 0: caches are not modelled, so cache hints change nothing), bra, ret/exit, trap (an ExecutionError),
bar.sync/barrier.sync, bar.warp.sync, shfl.sync, ldmatrix, stmatrix, mma.sync (any shape and type that
ptxgen.layout maps: f16 bf16 tf32 f64 s8 u8 inputs), cp.async (done at once) with commit/wait and
cp.async.mbarrier.arrive{.noinc} (arrives at once), and
fences/membar (no-ops: memory is sequentially consistent here). Everything else raises
UnsupportedInstructionError with the instruction's source location.

wgmma.mma_async m64nNk16 (.f16/.bf16 -> .f32, A and B K-major from descriptors, no swizzle or
32B/64B/128B swizzle, or A in registers) is computed when issued; its fence/commit/wait are no-ops.
Threads that reach a wgmma.mma_async before the rest of their warpgroup (e.g. while one lane of a warp
still waits on an mbarrier in a branch) wait there until all 128 are at it, and then issue it together.

mbarrier objects in shared memory (init, arrive, arrive.expect_tx, expect_tx, complete_tx, test_wait,
try_wait, with tokens or .parity) keep their state beside shared memory; a try_wait that fails parks its
threads until the phase completes, so a barrier nobody completes is reported as a DeadlockError with the
mbarrier's phase and pending counts. A test_wait that would fail is delayed the same way, but only until
no other thread can run; then it returns false (so a spin loop around it cannot starve the threads that
complete the phase, and a test_wait that is only polled still goes on).

TMA: cp.async.bulk.tensor.1d-.5d in tile mode, global -> shared::cluster/cta completing on an mbarrier
(.mbarrier::complete_tx::bytes) and shared::cta -> global (.bulk_group), plus plain cp.async.bulk in both
directions. The tensor map is read from the operand's 128 bytes (a `.param .align 64 .b8 tmap[128]`
passed a TensorMapArg, or a map in a global Buffer) and decoded with ptxgen.tma.decode_tensor_map;
its global address names the Buffer. A load places the box densely (innermost dimension fastest) at
the shared address, each element moved by the swizzle of the absolute shared address (16-byte chunk
bits [4, 4+B) XOR address bits [7, 7+B), B = 3/2/1 for 128B/64B/32B: ptxgen.layout.swizzle_offset, the
same function wgmma's descriptor reads use), fills elements outside the tensor with zero (or NaN with
the NaN fill), and completes tx on the mbarrier with the box's bytes at once. A store writes back only
the elements inside the tensor. Element strides follow the driver documentation (ceil(box/stride)
elements per dimension, dimension 0 unstrided); interleaved maps, im2col, multicast and reductions are
not modelled. The copies happen when issued, so commit_group/wait_group are no-ops, as are the cache
hints prefetch, prefetch.tensormap and cp.async.bulk.prefetch.

wgmma.mma_async also takes A in registers (the fragment of ptxgen.layout's wgmma A map), and 16-bit
operands MN-major (the transpose bit) from swizzled layouts.

Clusters: run_kernel's `cluster` (default: the kernel's .reqnctapercluster, else one CTA) groups the
grid into thread-block clusters; with clusters of one, %cluster_ctarank is 0, %cluster_nctarank 1,
%clusterid = %ctaid, %nclusterid = %nctaid and %is_explicit_cluster false. The CTAs of a cluster are
resident together and take turns of CTA_QUANTUM steps in rank order; when none of them can run a step
(each waits on another), the delayed test_waits give up, or a DeadlockError says why. A shared::cluster
address is a shared::cta offset with rank + 1 of the CTA holding it in bits CLUSTER_RANK_SHIFT (24) and
up, 0 meaning the executing CTA, so a CTA's own shared::cta addresses are shared::cluster addresses of
itself; a generic shared address is SHARED_WINDOW plus a shared::cluster address, so cvta to and from
.shared::cluster and generic loads and stores work on any CTA's memory. Modelled: %cluster_ctarank,
%cluster_nctarank, %clusterid, %nclusterid, %cluster_ctaid, %cluster_nctaid, %is_explicit_cluster; mapa
and getctarank (.shared::cluster or generic; a rank outside the cluster is a MemoryFaultError); ld, st,
atom and red on .shared::cluster (any .sem/.scope, .v2/.v4); st.async and red.async (the store or
reduction at once, its bytes completing on the mbarrier operand, which must be in the receiving CTA);
mbarrier.arrive{_drop}{.expect_tx},
expect_tx and complete_tx on another CTA's mbarrier through .shared::cluster; barrier.cluster.arrive
and .wait: arrive marks the thread as arrived in the barrier's current phase (twice in one phase is an
ExecutionError), the phase completes once every live thread of the cluster has arrived (exited threads
count as arrived, as in PTX), and wait parks the thread until the phase it arrived in has completed (a
wait with no arrive before it waits for the current phase, which then cannot complete). A barrier some
thread never arrives at is a DeadlockError naming those threads and where they wait. Touching the
shared memory or mbarriers of a CTA of the cluster that has exited is a MemoryFaultError (on a GPU that
memory is gone). Not modelled for clusters: TMA multicast, and bulk copies into another CTA's shared
memory; the .aligned rule of barrier.cluster (all threads of a warp execute it together) is not checked,
and its .release/.acquire, like every memory ordering here, change nothing.

Not modelled: MN-major wgmma operands without swizzle, calls, .local memory. Exited threads no longer
count towards bar.sync. Floating-point fma is computed in float64 and rounded to the result
type; for .f32 the product is exact, so only a rare double-rounding tie can differ from the hardware.
mma.sync and wgmma accumulate in float64, so results can differ from the tensor core's in the last bits.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import ir
from .errors import (DeadlockError, ExecutionError, MemoryFaultError, UnsupportedInstructionError,
                     UsageError)

__all__ = ["Buffer", "TensorMapArg", "tensor_map", "RunStats", "Record", "run_kernel", "load_function",
           "fragment_report", "FragmentReport", "coordinate_matrix"]

GLOBAL_BASE = 1 << 40        # global buffers live from here, each 256-byte aligned
SHARED_WINDOW = 1 << 32      # generic addresses [SHARED_WINDOW, SHARED_WINDOW + 2**32) are shared memory
# a shared::cluster address is offset | field << CLUSTER_RANK_SHIFT: field 0 is the executing CTA (so its
# shared::cta addresses are shared::cluster addresses of itself), field r + 1 is CTA rank r of the cluster
CLUSTER_RANK_SHIFT = 24
_OFFSET_MASK = (1 << CLUSTER_RANK_SHIFT) - 1
MAX_CLUSTER_CTAS = 16        # sm_90: 8 portable, 16 with the non-portable cluster size opt-in
_M64 = (1 << 64) - 1


class Buffer:
    """A numpy array passed to a kernel as a global pointer; the kernel's writes land in `array`."""

    def __init__(self, array: np.ndarray):
        if not isinstance(array, np.ndarray):
            raise UsageError(f"Buffer takes a numpy array, not {type(array).__name__}")
        self.array = array
        # work on a contiguous byte view; a non-contiguous array gets a copy written back after the run
        self._work = array if array.flags.c_contiguous else np.ascontiguousarray(array)
        self.bytes = self._work.reshape(-1).view(np.uint8)
        self.address = 0

    @property
    def nbytes(self) -> int:
        return self.bytes.size

    def _write_back(self) -> None:
        if self._work is not self.array:
            self.array[...] = self._work

    def __repr__(self) -> str:
        return f"Buffer({self.array.dtype}{list(self.array.shape)} at {self.address:#x})"


class TensorMapArg:
    """A tensor map over an executor Buffer, passed by value to a `.param .align 64 .b8 tmap[128]` parameter.

    `map` is a ptxgen.tma.TiledTensorMapSpec, a ptxgen.tma.TensorMap (e.g. the one encoded for the GPU
    run) or its 128 raw bytes: its dims, strides, box, element strides, swizzle and OOB fill are kept,
    and its global address is replaced by the executor address of `buffer` plus `offset` bytes. The
    kernel receives the 128 bytes in the layout the CUDA 13 driver writes (see ptxgen.tma's decode
    table), and cp.async.bulk.tensor decodes them from the parameter it is given.
    """

    def __init__(self, buffer: Buffer, map, *, offset: int = 0):
        from .tma import TensorMap, TiledTensorMapSpec, decode_tensor_map
        if not isinstance(buffer, Buffer):
            raise UsageError(f"TensorMapArg takes the Buffer the map describes, not {type(buffer).__name__}")
        if isinstance(map, TensorMap):
            spec = map.spec if map.spec is not None else decode_tensor_map(map.raw).spec
        elif isinstance(map, TiledTensorMapSpec):
            spec = map
        elif isinstance(map, (bytes, bytearray)):
            spec = decode_tensor_map(bytes(map)).spec
        else:
            raise UsageError("TensorMapArg takes a ptxgen.tma TiledTensorMapSpec, TensorMap or 128 raw bytes, "
                             f"not {type(map).__name__}")
        if not isinstance(offset, (int, np.integer)) or offset < 0 or offset % 16:
            raise UsageError(f"offset must be a non-negative multiple of 16 bytes, not {offset!r}")
        self.buffer = buffer
        self.spec = spec.check()
        self.offset = int(offset)

    def encode(self, address: Optional[int] = None) -> bytes:
        """The 128 bytes of the map with global address `address` (default: the buffer's, plus offset)."""
        return _encode_tensor_map(self.spec, self.buffer.address + self.offset if address is None else address)

    def __repr__(self) -> str:
        s = self.spec
        return f"TensorMapArg({s.dtype} dims={s.global_dim} box={s.box_dim} swizzle={s.swizzle} over {self.buffer!r})"


def tensor_map(buffer: Buffer, box: Sequence[int], *, dtype=None, shape: Optional[Sequence[int]] = None,
               strides: Optional[Sequence[int]] = None, element_strides: Optional[Sequence[int]] = None,
               swizzle: str = "none", oob_fill: str = "zero", interleave: str = "none",
               l2_promotion: str = "none", offset: int = 0) -> TensorMapArg:
    """A TensorMapArg over `buffer`, arguments as ptxgen.tma.encode_tiled (outermost first).

    dtype and shape default to the buffer's array (dtype='bf16' to view uint16 bits as bf16); every
    documented cuTensorMapEncodeTiled requirement is checked (TensorMapError), no driver is needed.
    """
    from .tma import tiled_spec
    if not isinstance(buffer, Buffer):
        raise UsageError(f"tensor_map takes a Buffer, not {type(buffer).__name__}")
    arr = buffer._work
    if dtype is None:
        dtype = arr.dtype
    if shape is None:
        shape = arr.shape
    spec = tiled_spec(ptr=0, dtype=dtype, shape=shape, strides=strides, box=box, element_strides=element_strides,
                      interleave=interleave, swizzle=swizzle, l2_promotion=l2_promotion, oob_fill=oob_fill)
    return TensorMapArg(buffer, spec, offset=offset)


def _encode_tensor_map(spec, address: int) -> bytes:
    """The 128 bytes of a tiled tensor map, in the layout ptxgen.tma.decode_tensor_map reads (the CUDA 13.0
    driver's on sm_90): the inverse of that decoder."""
    import struct
    from .tma import _DECODE_DTYPE, _DECODE_INTERLEAVE, _DECODE_L2, _DECODE_SWIZZLE, _dtype_name
    dw = [0] * 32
    dtype = _dtype_name(spec.dtype)
    tf32 = dtype in ("tf32", "tf32_ftz")
    base = {"tf32": "f32", "tf32_ftz": "f32_ftz"}.get(dtype, dtype)
    code = {v: k for k, v in _DECODE_DTYPE.items()}[base]
    inv = lambda table, v: {b: a for a, b in table.items()}[v]  # noqa: E731
    rank = len(spec.global_dim)
    dw[0], dw[1] = address & 0xFFFFFFFF, address >> 32
    dw[2] = (((rank - 1) << 4) | (code << 7) | (inv(_DECODE_INTERLEAVE, spec.interleave) << 11)
             | (inv(_DECODE_SWIZZLE, spec.swizzle) << 13) | ((spec.oob_fill == "nan") << 15) | (tf32 << 16)
             | (inv(_DECODE_L2, spec.l2_promotion) << 17))
    for i, st in enumerate(spec.global_strides):
        v = st >> 4
        dw[3 + i] = v & 0xFFFFFFFF
        dw[7] |= ((v >> 32) & 0xF) << (4 * i)
    for i, d in enumerate(spec.global_dim):
        dw[8 + i] = d - 1
    for i, e in enumerate(spec.element_strides):
        dw[13] |= (e - 1) << (3 * i)
    dw[13] |= (spec.box_dim[0] - 1) << 24
    for i in range(1, rank):
        dw[14] |= (spec.box_dim[i] - 1) << (8 * (i - 1))
    n = spec.element_bytes
    for b, e in zip(spec.box_dim, spec.element_strides):
        n *= b // e
    dw[16] = n
    dw[18] = {"none": 16, "32B": 256, "64B": 512, "128B": 1024}[spec.swizzle]
    return struct.pack("<32I", *dw)


@dataclass
class RunStats:
    """What a run did: CTAs, dynamic instructions (per thread group step) and thread-instructions."""

    ctas: int = 0
    steps: int = 0
    thread_instructions: int = 0
    records: List["Record"] = field(default_factory=list)


@dataclass
class Record:
    """The register operands of one recorded instruction as its threads were about to execute it."""

    instr: ir.Instr
    threads: np.ndarray                 # CTA-linear thread indices that executed it
    ctaid: Tuple[int, int, int]
    values: Dict[str, np.ndarray]       # register name -> raw bits (uint64) of those threads


# ============================================================================================ types

_INT_DTYPES = {8: (np.uint8, np.int8), 16: (np.uint16, np.int16), 32: (np.uint32, np.int32), 64: (np.uint64, np.int64)}
_TYPE_RE = re.compile(r"^(?:(?P<k>[bus])(?P<n>8|16|32|64)|(?P<f>f16|bf16|f32|f64|tf32)|(?P<x>f16x2|bf16x2)|pred)$")


def _tinfo(t: str) -> Tuple[str, int]:
    """(kind, bits) of a PTX type name: kind 'u', 's', 'b', 'f', 'pred'."""
    m = _TYPE_RE.match(t)
    if m is None:
        raise KeyError(t)
    if m.group("k"):
        return m.group("k"), int(m.group("n"))
    if m.group("f"):
        return "f", {"f16": 16, "bf16": 16, "f32": 32, "f64": 64, "tf32": 32}[m.group("f")]
    if m.group("x"):
        return "b", 32
    return "pred", 1


def bits_to(bits: np.ndarray, t: str) -> np.ndarray:
    """Interpret raw register bits (uint64) as values of PTX type `t`."""
    kind, n = _tinfo(t)
    if kind == "pred":
        return bits != 0
    if kind in ("u", "b"):
        return (bits & np.uint64((1 << n) - 1)).astype(_INT_DTYPES[n][0])
    if kind == "s":
        return (bits & np.uint64((1 << n) - 1)).astype(_INT_DTYPES[n][0]).view(_INT_DTYPES[n][1])
    if t == "f64":
        return bits.astype(np.uint64).view(np.float64)
    if t in ("f32", "tf32"):
        return (bits & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.float32)
    if t == "f16":
        return (bits & np.uint64(0xFFFF)).astype(np.uint16).view(np.float16)
    return ((bits & np.uint64(0xFFFF)).astype(np.uint32) << np.uint32(16)).view(np.float32)  # bf16


def _bf16_bits(x) -> np.ndarray:
    """float -> bf16 bits, round to nearest even (NaN stays NaN)."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = (u + np.uint64(0x7FFF) + ((u >> np.uint64(16)) & np.uint64(1))) >> np.uint64(16)
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    return np.where(nan, np.uint64(0x7FC0), r & np.uint64(0xFFFF))


def to_bits(vals, t: str) -> np.ndarray:
    """Raw register bits (uint64, zero-extended) of values of PTX type `t`."""
    kind, n = _tinfo(t)
    v = np.asarray(vals)
    if kind == "pred":
        return v.astype(bool).astype(np.uint64)
    if kind in ("u", "b", "s"):
        if v.dtype.kind == "f":
            v = v.astype(np.int64)
        return v.astype(_INT_DTYPES[n][1] if v.dtype.kind == "i" else _INT_DTYPES[n][0]) \
            .view(_INT_DTYPES[n][0]).astype(np.uint64)
    if t == "f64":
        return v.astype(np.float64).view(np.uint64)
    if t in ("f32", "tf32"):
        return v.astype(np.float32).view(np.uint32).astype(np.uint64)
    if t == "f16":
        return v.astype(np.float16).view(np.uint16).astype(np.uint64)
    return _bf16_bits(v.astype(np.float32))


def _const(value, t: str) -> np.ndarray:
    """An immediate as a 0-d array of type `t` (integers wrap as PTX's do)."""
    kind, n = _tinfo(t)
    if kind == "f":
        return bits_to(to_bits(np.array([float(value)]), t), t)[:1]
    if kind == "pred":
        return np.array([bool(value)])
    if isinstance(value, float):
        value = int(value)
    return bits_to(np.array([int(value) & _M64], dtype=np.uint64), t)


# ============================================================================================ state

_SPECIAL = re.compile(r"^%(tid|ntid|ctaid|nctaid)\.([xyz])$")
_CLUSTER_SPECIAL = re.compile(r"^%(clusterid|nclusterid|cluster_ctaid|cluster_nctaid)\.([xyz])$")


@dataclass
class _Cluster:
    """The CTAs of one thread-block cluster (by rank) and its barrier.cluster state."""

    id: Tuple[int, int, int]                 # %clusterid
    shape: Tuple[int, int, int]              # %cluster_nctaid
    explicit: bool                           # %is_explicit_cluster
    ctas: List["_Cta"] = field(default_factory=list)
    phase: int = 0                           # the barrier.cluster phase in progress
    armed: bool = False                      # some thread has arrived in it


@dataclass
class _Cta:
    nthreads: int
    regs: Dict[str, np.ndarray]
    shared: np.ndarray                       # uint8
    tid: Tuple[np.ndarray, np.ndarray, np.ndarray]
    ctaid: Tuple[int, int, int]
    pc: np.ndarray
    live: np.ndarray
    waiting: np.ndarray
    bar_id: np.ndarray
    bar_count: np.ndarray
    mbarriers: Dict[int, "_Mbarrier"] = field(default_factory=dict)
    cluster: Optional[_Cluster] = None
    rank: int = 0                            # %cluster_ctarank
    # per thread: the barrier.cluster phase it arrived in and has not yet waited for, or -1
    cl_arrived: Optional[np.ndarray] = None
    blocked: bool = False                    # its last turn ended with every live thread waiting


# bar_count markers of threads delayed at an mbarrier.test_wait (bar_id names the barrier): still delayed,
# and released to see the barrier as it is
_TEST_WAIT, _GIVE_UP = -1, -2
# bar_id of threads at bar.warp.sync: _WARP_SYNC - warp (mbarrier waits use -address-1, barriers 0..15)
_WARP_SYNC = -(1 << 40)
# bar_id of threads that reached a wgmma.mma_async before the rest of their warpgroup: _WG_SYNC - warpgroup
_WG_SYNC = -(1 << 50)
# bar_id of threads parked at barrier.cluster.wait (released when the cluster's phase completes)
_CLUSTER_WAIT = -(1 << 30)


@dataclass
class _Mbarrier:
    """An mbarrier object's state, kept beside shared memory (its 8 bytes there are not written)."""

    expected: int
    pending: int
    tx: int = 0
    phase: int = 0

    def describe(self, addr: int) -> str:
        return (f"mbarrier at shared {addr:#x}: phase {self.phase} (parity {self.phase & 1}) waits for "
                f"{self.pending} of {self.expected} arrivals and {self.tx} transaction bytes")


class _Program:
    """A function prepared for execution: flattened code, labels, shared layout, compiled instructions."""

    def __init__(self, fn: ir.Function, module: ir.Module, dynamic_shared: int):
        self.fn = fn
        self.code: List[ir.Instr] = []
        self.labels: Dict[str, int] = {}
        self.shared_syms: Dict[str, int] = {}
        self._raw_shared: List[Tuple[str, int, int, bool]] = []
        self._flatten(fn.body)
        offset = 0
        decls = [(v.name, v.type.bits // 8 * (v.count or 1), v.align or v.type.bits // 8, v.extern)
                 for v in list(fn.locals) + list(module.vars) if v.space == "shared"]
        decls += self._raw_shared
        extern = []
        for name, size, align, is_extern in decls:
            if is_extern:
                extern.append((name, align))
                continue
            offset = -(-offset // max(align, 1)) * max(align, 1)
            self.shared_syms[name] = offset
            offset += size
        for name, align in extern:  # dynamic shared memory follows the static part
            offset = -(-offset // max(align, 16)) * max(align, 16)
            self.shared_syms[name] = offset
        self.shared_bytes = offset + dynamic_shared
        self.compiled: List[Optional[Callable]] = [None] * len(self.code)

    _RAW_SHARED = re.compile(r"^\s*(\.extern\s+)?\.shared\s+(?:\.align\s+(\d+)\s+)?\.(\w+)\s+([\w$]+)\s*(?:\[(\d*)\])?")

    def _flatten(self, body) -> None:
        for s in body:
            if isinstance(s, ir.Instr):
                self.code.append(s)
            elif isinstance(s, ir.LabelDef):
                self.labels[s.label.name] = len(self.code)
            elif isinstance(s, ir.Raw):
                # parsed functions keep their .shared declarations as raw text
                m = self._RAW_SHARED.match(s.text)
                if m:
                    ext, align, ty, name, count = m.groups()
                    try:
                        bits = _tinfo(ty)[1]
                    except KeyError:
                        bits = 8
                    n = int(count) if count else 1
                    self._raw_shared.append((name, max(bits // 8, 1) * n, int(align or max(bits // 8, 1)),
                                             bool(ext) or count == ""))
                elif s.text.strip() and not s.text.strip().startswith((".", "//", "{", "}")):
                    self.code.append(s)  # unknown raw text: fails with its location if it is reached
            elif hasattr(s, "body"):
                self._flatten(s.body)


class _Memory:
    """Global buffers by address."""

    def __init__(self, buffers: Sequence[Buffer]):
        self.buffers = list({id(b): b for b in buffers}.values())  # one region per buffer, even if passed twice
        addr = GLOBAL_BASE
        for b in self.buffers:
            b.address = addr
            addr += -(-max(b.nbytes, 1) // 256) * 256 + 256  # a gap between buffers catches overruns
        self.bases = np.array([b.address for b in self.buffers], dtype=np.uint64)


class _Fault(Exception):
    def __init__(self, message, threads=()):
        self.message, self.threads = message, threads


# ============================================================================================ the executor

class _Executor:
    def __init__(self, prog: _Program, mem: _Memory, params: bytes, param_offsets: Dict[str, int],
                 grid, block, max_steps: int, record: Tuple[str, ...] = (), cluster=(1, 1, 1),
                 explicit_cluster: bool = False):
        self.prog = prog
        self.mem = mem
        self.params = np.frombuffer(params, dtype=np.uint8)
        self.param_offsets = param_offsets
        self.grid = grid
        self.block = block
        self.max_steps = max_steps
        self.stats = RunStats()
        self.record = tuple(record)
        self.cluster = tuple(cluster)
        self.nclusters = tuple(g // c for g, c in zip(grid, self.cluster))
        self.explicit_cluster = explicit_cluster

    # ---------------------------------------------------------------- errors
    def _where(self, pc: int):
        ins = self.prog.code[pc]
        text = ins.text() if isinstance(ins, ir.Instr) else getattr(ins, "text", "")
        return ins.loc, text

    # ---------------------------------------------------------------- memory
    def _resolve(self, space: str, addr: np.ndarray, nbytes: int, cta: _Cta):
        """(byte array, offsets) for addresses in a state space; raises _Fault when out of bounds."""
        addr = addr.astype(np.uint64)
        if space == "generic":
            sh = (addr >= np.uint64(SHARED_WINDOW)) & (addr < np.uint64(2 * SHARED_WINDOW))
            if sh.all() and addr.size:
                return self._resolve("shared::cluster", addr - np.uint64(SHARED_WINDOW), nbytes, cta)
            if sh.any():
                return None  # mixed spaces: the caller splits
            space = "global"
        if space == "shared::cluster":
            return self._resolve_cluster(addr, nbytes, cta)
        if space == "shared":
            off = addr.astype(np.int64)
            bad = (off < 0) | (off + nbytes > cta.shared.size)
            if bad.any():
                i = int(np.argmax(bad))
                hint, f = "", int(off[i]) >> CLUSTER_RANK_SHIFT
                if 0 < f <= len(cta.cluster.ctas):
                    hint = (f" (it looks like the shared::cluster address of CTA rank {f - 1} that mapa gives; such "
                            "addresses need a .shared::cluster or generic access)")
                raise _Fault(f"shared-memory access of {nbytes} bytes at {int(off[i]):#x} is outside the "
                             f"{cta.shared.size} bytes of shared memory{hint}", [i])
            return [(cta.shared, off, np.ones(addr.size, bool))]
        if space == "param":
            off = addr.astype(np.int64)
            bad = (off < 0) | (off + nbytes > self.params.size)
            if bad.any():
                raise _Fault("kernel-parameter access outside the parameter block", [int(np.argmax(bad))])
            return [(self.params, off, np.ones(addr.size, bool))]
        if space != "global":
            raise _Fault(f"the .{space} state space is not modelled")
        bases = self.mem.bases
        which = np.searchsorted(bases, addr, side="right").astype(np.int64) - 1
        out = []
        bad = which < 0
        for w in np.unique(which[~bad]):
            b = self.mem.buffers[int(w)]
            sel = which == w
            off = (addr[sel] - np.uint64(b.address)).astype(np.int64)
            over = off + nbytes > b.nbytes
            if over.any():
                bad[np.nonzero(sel)[0][over]] = True
            out.append((b.bytes, np.where(sel, (addr - np.uint64(b.address)).astype(np.int64), 0), sel))
        if bad.any():
            i = int(np.argmax(bad))
            raise _Fault(f"global access of {nbytes} bytes at {int(addr[i]):#x} is outside every buffer passed "
                         f"to the kernel ({', '.join(f'{b.address:#x}+{b.nbytes}' for b in self.mem.buffers)})",
                         [i])
        return out

    def _cluster_cta(self, cta: _Cta, field: int, addr: int, what: str, i: int = 0) -> _Cta:
        """The CTA that rank field `field` of a shared::cluster address names (0: the executing CTA)."""
        if field == 0:
            return cta
        ctas = cta.cluster.ctas
        if field > len(ctas):
            raise _Fault(f"{what} at shared::cluster address {addr:#x} names CTA rank {field - 1}, but the cluster "
                         f"has {len(ctas)} CTA(s)", [i])
        target = ctas[field - 1]
        if target is not cta and not target.live.any():
            raise _Fault(f"{what} at shared::cluster address {addr:#x} reaches CTA rank {field - 1} of the cluster, "
                         "which has exited: its shared memory is gone (meet the cluster, e.g. with barrier.cluster, "
                         "before a CTA leaves)", [i])
        return target

    def _resolve_cluster(self, addr: np.ndarray, nbytes: int, cta: _Cta):
        """Parts (shared bytes of the CTA, offsets, threads) of shared::cluster addresses."""
        fields = (addr >> np.uint64(CLUSTER_RANK_SHIFT)).astype(np.int64)
        if addr.size and (fields == 0).all():
            return self._resolve("shared", addr, nbytes, cta)
        offs = (addr & np.uint64(_OFFSET_MASK)).astype(np.int64)
        out = []
        for f in np.unique(fields):
            sel = fields == f
            i = int(np.argmax(sel))
            target = self._cluster_cta(cta, int(f), int(addr[i]), f"a {nbytes}-byte access", i)
            off = np.where(sel, offs, 0)
            over = sel & (off + nbytes > target.shared.size)
            if over.any():
                i = int(np.argmax(over))
                raise _Fault(f"shared::cluster access of {nbytes} bytes at {int(addr[i]):#x} (offset {int(off[i]):#x} "
                             f"in CTA rank {target.rank}) is outside the {target.shared.size} bytes of its shared "
                             "memory", [i])
            out.append((target.shared, off, sel))
        return out

    def _load(self, space, addr, nbytes, cta) -> np.ndarray:
        """Bytes [n, nbytes] at per-thread addresses."""
        if addr.size and (addr.astype(np.uint64) % np.uint64(nbytes)).any():
            i = int(np.argmax(addr.astype(np.uint64) % np.uint64(nbytes) != 0))
            raise _Fault(f"misaligned {nbytes}-byte access at {int(addr[i]):#x}", [i])
        parts = self._resolve(space, addr, nbytes, cta)
        if parts is None:
            raise _Fault("one instruction's generic addresses span shared and global memory; not modelled")
        out = np.zeros((addr.size, nbytes), dtype=np.uint8)
        span = np.arange(nbytes)
        for arr, off, sel in parts:
            out[sel] = arr[off[sel][:, None] + span]
        return out

    def _store(self, space, addr, data: np.ndarray, cta) -> None:
        nbytes = data.shape[1]
        if addr.size and (addr.astype(np.uint64) % np.uint64(nbytes)).any():
            i = int(np.argmax(addr.astype(np.uint64) % np.uint64(nbytes) != 0))
            raise _Fault(f"misaligned {nbytes}-byte access at {int(addr[i]):#x}", [i])
        parts = self._resolve(space, addr, nbytes, cta)
        if parts is None:
            raise _Fault("one instruction's generic addresses span shared and global memory; not modelled")
        span = np.arange(nbytes)
        for arr, off, sel in parts:
            # threads are applied in order, so with equal addresses the highest thread wins (one legal outcome)
            arr[off[sel][:, None] + span] = data[sel]

    # ---------------------------------------------------------------- operands
    def _reader(self, op, t: str):
        """A function (cta, idx) -> values of type t for one source operand."""
        if isinstance(op, ir.Reg):
            name = op.name
            return lambda cta, idx: bits_to(self._reg(cta, name)[idx], t)
        if isinstance(op, ir.Guard):
            name, neg = op.reg.name, op.negate
            return lambda cta, idx: (self._reg(cta, name)[idx] != 0) ^ neg
        if isinstance(op, ir.Imm):
            c = _const(op.value, t)
            return lambda cta, idx: np.broadcast_to(c, idx.shape)
        if isinstance(op, ir.SpecialReg):
            return self._special(op.name, t)
        if isinstance(op, ir.Sym):
            a = self._sym_address(op.name)
            c = _const(a, t)
            return lambda cta, idx: np.broadcast_to(c, idx.shape)
        raise _Unsupported(f"operand {op} ({type(op).__name__}) is not modelled as a source")

    def _sym_address(self, name: str) -> int:
        if name in self.prog.shared_syms:
            return self.prog.shared_syms[name]
        if name in self.param_offsets:
            return self.param_offsets[name]
        raise _Unsupported(f"symbol {name!r} is not a shared variable or parameter of this kernel")

    def _special(self, name: str, t: str):
        m = _SPECIAL.match(name)
        if m:
            what, axis = m.group(1), "xyz".index(m.group(2))
            if what == "tid":
                return lambda cta, idx: bits_to(cta.tid[axis][idx].astype(np.uint64), t)
            val = {"ntid": self.block, "nctaid": self.grid}.get(what)
            if val is not None:
                c = _const(val[axis], t)
                return lambda cta, idx: np.broadcast_to(c, idx.shape)
            return lambda cta, idx: np.broadcast_to(_const(cta.ctaid[axis], t), idx.shape)
        m = _CLUSTER_SPECIAL.match(name)
        if m:
            what, axis = m.group(1), "xyz".index(m.group(2))
            if what in ("nclusterid", "cluster_nctaid"):
                c = _const((self.nclusters if what == "nclusterid" else self.cluster)[axis], t)
                return lambda cta, idx: np.broadcast_to(c, idx.shape)
            if what == "clusterid":
                return lambda cta, idx: np.broadcast_to(_const(cta.cluster.id[axis], t), idx.shape)
            return lambda cta, idx: np.broadcast_to(_const(cta.ctaid[axis] % self.cluster[axis], t), idx.shape)
        if name == "%cluster_ctarank":
            return lambda cta, idx: np.broadcast_to(_const(cta.rank, t), idx.shape)
        if name == "%cluster_nctarank":
            c = _const(int(np.prod(self.cluster)), t)
            return lambda cta, idx: np.broadcast_to(c, idx.shape)
        if name == "%is_explicit_cluster":
            c = _const(int(self.explicit_cluster), t)
            return lambda cta, idx: np.broadcast_to(c, idx.shape)
        if name == "%laneid":
            return lambda cta, idx: bits_to((idx % 32).astype(np.uint64), t)
        if name == "%warpid":
            return lambda cta, idx: bits_to((idx // 32).astype(np.uint64), t)
        if name in ("%clock", "%clock64", "%globaltimer"):
            return lambda cta, idx: np.broadcast_to(_const(self.stats.steps, t), idx.shape)
        if name in ("%smid", "%nsmid"):
            return lambda cta, idx: np.broadcast_to(_const(0 if name == "%smid" else 1, t), idx.shape)
        raise _Unsupported(f"special register {name} is not modelled")

    def _reg(self, cta: _Cta, name: str) -> np.ndarray:
        r = cta.regs.get(name)
        if r is None:
            r = cta.regs[name] = np.zeros(cta.nthreads, dtype=np.uint64)
        return r

    def _writer(self, op, t: str):
        """A function (cta, idx, values) storing values of type t into a destination register."""
        if isinstance(op, ir.Reg):
            name = op.name
            return lambda cta, idx, v: self._reg(cta, name).__setitem__(idx, to_bits(v, t))
        from .ops.operands import Sink
        if isinstance(op, Sink) or isinstance(op, str) and op == "_":
            return lambda cta, idx, v: None
        raise _Unsupported(f"destination {op} ({type(op).__name__}) is not a register")

    def _address(self, op, default_space: str):
        """(space, reader -> uint64 addresses) of an [addr] operand."""
        if not isinstance(op, ir.Addr):
            raise _Unsupported(f"expected a memory operand [..], got {op}")
        base, off = op.base, op.offset
        if isinstance(base, ir.Sym):
            a = self._sym_address(base.name) + off
            space = "param" if base.name in self.param_offsets and base.name not in self.prog.shared_syms \
                else default_space
            return space, lambda cta, idx: np.full(idx.shape, a, dtype=np.uint64)
        if isinstance(base, ir.Reg):
            name = base.name
            return default_space, lambda cta, idx: (self._reg(cta, name)[idx] + np.uint64(off & _M64))
        raise _Unsupported(f"memory operand {op} is not modelled")

    # ---------------------------------------------------------------- running
    def new_cta(self, ctaid, cluster: Optional[_Cluster] = None) -> _Cta:
        """A CTA at the kernel's first instruction, with zeroed shared memory; it joins `cluster` as its next
        rank (without one, it is a cluster of one)."""
        n = int(np.prod(self.block))
        lin = np.arange(n)
        bx, by, _ = self.block
        if cluster is None:
            cluster = _Cluster(tuple(ctaid), (1, 1, 1), self.explicit_cluster)
        cta = _Cta(n, {}, np.zeros(self.prog.shared_bytes, dtype=np.uint8),
                   (lin % bx, (lin // bx) % by, lin // (bx * by)), ctaid,
                   np.zeros(n, dtype=np.int64), np.ones(n, bool), np.zeros(n, bool),
                   np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64),
                   cluster=cluster, rank=len(cluster.ctas), cl_arrived=np.full(n, -1, dtype=np.int64))
        cluster.ctas.append(cta)
        return cta

    def new_cluster(self, clusterid) -> List[_Cta]:
        """The CTAs of cluster `clusterid`, by rank (x fastest), all at the kernel's first instruction."""
        cx, cy, cz = self.cluster
        cl = _Cluster(tuple(clusterid), self.cluster, self.explicit_cluster)
        for z in range(cz):
            for y in range(cy):
                for x in range(cx):
                    self.new_cta((clusterid[0] * cx + x, clusterid[1] * cy + y, clusterid[2] * cz + z), cl)
        return list(cl.ctas)

    def advance(self, cta: _Cta, quantum: Optional[int] = None) -> bool:
        """Run `cta` until all its threads have exited (True), or for `quantum` steps (False if it has
        not finished by then). A CTA of a cluster of several also stops (False, with `blocked` set) when
        every live thread waits on something only another CTA of the cluster can complete."""
        prog = self.prog
        ncode = len(prog.code)
        stop = None if quantum is None else self.stats.steps + quantum
        cta.blocked = False
        while True:
            runnable = cta.live & ~cta.waiting
            if not runnable.any():
                if not cta.waiting.any():
                    return True
                if self._release(cta):
                    continue
                if len(cta.cluster.ctas) > 1:
                    cta.blocked = True
                    return False
                self._give_up_or_deadlock(cta)
                continue
            if stop is not None and self.stats.steps >= stop:
                return False
            pc = int(cta.pc[runnable].min())
            if pc >= ncode:
                idx = np.nonzero(runnable & (cta.pc == pc))[0]
                raise ExecutionError("threads ran past the end of the kernel without ret or exit",
                                     prog.fn.loc, "", idx)
            idx = np.nonzero(runnable & (cta.pc == pc))[0]
            self.stats.steps += 1
            self.stats.thread_instructions += idx.size
            if self.stats.steps > self.max_steps:
                loc, text = self._where(pc)
                raise ExecutionError(f"stopped after {self.max_steps} steps (an endless loop, or a spin-wait "
                                     "on something another warp does later?)", loc, text, idx)
            h = prog.compiled[pc]
            if h is None:
                h = prog.compiled[pc] = self._compile(pc)
            if self.record and isinstance(prog.code[pc], ir.Instr) and prog.code[pc].opcode.startswith(self.record):
                self._record(cta, prog.code[pc], idx)
            try:
                h(cta, idx)
            except _Fault as f:
                loc, text = self._where(pc)
                raise MemoryFaultError(f.message, loc, text, [int(idx[i]) for i in f.threads if i < idx.size]) \
                    from None
            except _Unsupported as u:
                loc, text = self._where(pc)
                raise UnsupportedInstructionError(u.args[0], loc, text, idx) from None
            except _ExecFail as u:
                loc, text = self._where(pc)
                raise ExecutionError(u.args[0], loc, text, idx) from None

    def _record(self, cta: _Cta, ins: ir.Instr, idx: np.ndarray) -> None:
        from .ops.operands import TensorRef
        if ins.guard is not None:
            # only the threads whose guard holds execute it; an instruction none of them executes is no record
            idx = idx[(self._reg(cta, ins.guard.reg.name)[idx] != 0) ^ ins.guard.negate]
            if not idx.size:
                return
        vals = {}
        for op in ins.operands:
            # the registers of an address ([base+offset]) and of a tensor operand ([map, {coords}]) too
            inner = (op.base,) if isinstance(op, ir.Addr) else (op.base, *op.coords) if isinstance(op, TensorRef) \
                else _elems(op)
            for r in inner:
                if isinstance(r, ir.Reg):
                    vals[r.name] = self._reg(cta, r.name)[idx].copy()
        self.stats.records.append(Record(ins, idx.copy(), cta.ctaid, vals))

    def _release(self, cta: _Cta) -> bool:
        """Release the threads of one barrier of the CTA that has completed (True), if any."""
        waiting = np.nonzero(cta.waiting)[0]
        live = int(cta.live.sum())
        for b in np.unique(cta.bar_id[waiting]):
            if b <= _WG_SYNC:
                # a wgmma's warpgroup: released, to issue it together, once all its 128 threads wait at it
                at = waiting[cta.bar_id[waiting] == b]
                g = int(_WG_SYNC - b)
                if at.size == 128 and np.unique(cta.pc[at]).size == 1 and (at // 128 == g).all():
                    cta.waiting[at] = False
                    return True
                continue
            if b <= _WARP_SYNC:
                at = waiting[cta.bar_id[waiting] == b]
                warp = int(_WARP_SYNC - b)
                lanes = np.arange(32 * warp, min(32 * warp + 32, cta.nthreads))
                mask = int(cta.bar_count[at[0]])
                need = lanes[cta.live[lanes] & (((mask >> (lanes % 32)) & 1) == 1)]
                if np.isin(need, at).all():
                    cta.waiting[at] = False
                    cta.pc[at] += 1
                    return True
                continue
            if b < 0:
                continue  # threads parked on an mbarrier or barrier.cluster wake when its phase completes
            at = waiting[cta.bar_id[waiting] == b]
            need = int(cta.bar_count[at].max()) or live
            if at.size >= need:
                cta.waiting[at] = False
                cta.pc[at] += 1
                return True
        return False

    @staticmethod
    def _give_up_tests(cta: _Cta) -> bool:
        """Nothing else can run: the delayed mbarrier.test_waits go ahead and return false (True if any)."""
        tests = np.nonzero(cta.waiting & (cta.bar_count == _TEST_WAIT))[0]
        cta.waiting[tests] = False
        cta.bar_count[tests] = _GIVE_UP
        return bool(tests.size)

    def _stalled(self, resident: Sequence[_Cta]) -> None:
        """No resident CTA could run a step in a whole round: the delayed test_waits give up, or (if there
        are none) the deadlock is reported, preferring a barrier.cluster.wait's view of it."""
        if any([self._give_up_tests(c) for c in resident]):
            return
        pick = next((c for c in resident if (c.waiting & (c.bar_id == _CLUSTER_WAIT)).any()), None)
        if pick is not None:
            self._cluster_deadlock(pick)
        pick = next((c for c in resident if c.blocked), resident[0])
        try:
            self._give_up_or_deadlock(pick)
        except DeadlockError as e:
            raise DeadlockError(f"{e.message} (in CTA {pick.ctaid}, rank {pick.rank} of its cluster; no other CTA "
                                "of the cluster can proceed either)", e.loc, e.instr, e.threads) from None
        raise ExecutionError("the resident CTAs stalled, but none reports a deadlock", self.prog.fn.loc)

    def _cluster_deadlock(self, cta: _Cta) -> None:
        """DeadlockError: threads of `cta` wait at barrier.cluster.wait for a phase that cannot complete;
        names the live threads of the cluster that have not arrived and where they are."""
        cl = cta.cluster
        here = np.nonzero(cta.waiting & (cta.bar_id == _CLUSTER_WAIT))[0]
        loc, text = self._where(int(cta.pc[here[0]]))
        live = sum(int(c.live.sum()) for c in cl.ctas)
        arrived = sum(int((c.live & (c.cl_arrived == cl.phase)).sum()) for c in cl.ctas)
        parts = []
        for c in cl.ctas:
            missing = np.nonzero(c.live & (c.cl_arrived != cl.phase))[0]
            if not missing.size:
                continue
            at = []
            for p in sorted(set(int(x) for x in c.pc[missing])):
                th = missing[c.pc[missing] == p]
                ploc, ptext = self._where(p) if p < len(self.prog.code) else (None, "the end of the kernel")
                blocked = c.waiting[th] & (c.bar_id[th] == _CLUSTER_WAIT)
                how = " (waiting there without having arrived)" if blocked.all() else \
                    " (waiting there)" if c.waiting[th].all() else ""
                at.append(f"{th.size} at `{ptext}`" + (f" ({ploc})" if ploc else "") + how)
            parts.append(f"CTA rank {c.rank} (ctaid {c.ctaid}): " + ", ".join(at))
        raise DeadlockError(
            f"deadlock: barrier.cluster.wait cannot complete: {arrived} of the {live} live threads of the "
            f"{len(cl.ctas)}-CTA cluster {cl.id} have arrived in phase {cl.phase}, and these never will: "
            + "; ".join(parts), loc, text, here)

    def _give_up_or_deadlock(self, cta: _Cta) -> None:
        """Every live thread of the CTA waits and no barrier of it completes: the delayed test_waits give
        up, or a DeadlockError (or an ExecutionError for a warpgroup that never gathers) says why."""
        if self._give_up_tests(cta):
            return
        waiting = np.nonzero(cta.waiting)[0]
        live = int(cta.live.sum())
        if (cta.bar_id[waiting] == _CLUSTER_WAIT).any():
            self._cluster_deadlock(cta)
        pcs = sorted(set(int(p) for p in cta.pc[waiting]))
        loc, text = self._where(pcs[0])
        exited = cta.nthreads - live
        stuck = sorted({int(_WG_SYNC - b) for b in cta.bar_id[waiting] if b <= _WG_SYNC})
        if stuck:
            g = stuck[0]
            at = waiting[cta.bar_id[waiting] == _WG_SYNC - g]
            pcs, counts = np.unique(cta.pc[at], return_counts=True)
            main = int(pcs[np.argmax(counts)])
            here = at[cta.pc[at] == main]
            loc, text = self._where(main)
            if pcs.size == 1:
                why = f"only {here.size} reached it and the others cannot ({exited} threads exited)"
            else:
                why = (f"they wait at {pcs.size} different wgmma instructions ({here.size} at this one, "
                       f"{at.size - here.size} elsewhere)")
            raise ExecutionError(f"wgmma is .aligned: all 128 threads of warpgroup {g} must execute it together, "
                                 f"but {why}", loc, text, here)
        parked = sorted({int(-b - 1) for b in cta.bar_id[waiting] if _CLUSTER_WAIT < b < 0})
        if parked:
            states = "; ".join(cta.mbarriers[a].describe(a) for a in parked if a in cta.mbarriers)
            raise DeadlockError(
                f"deadlock: {waiting.size} live threads wait (bar.sync or mbarrier.try_wait) and none can "
                f"proceed; {states}; {exited} threads exited", loc, text, waiting)
        where = ", ".join(f"bar.warp.sync of warp {_WARP_SYNC - b}" if b <= _WARP_SYNC else f"barrier {b}"
                          for b in sorted(set(int(b) for b in cta.bar_id[waiting])))
        raise DeadlockError(
            f"deadlock: {waiting.size} live threads wait at barriers that cannot complete "
            f"({where}; {exited} threads exited)",
            loc, text, waiting)

    # ---------------------------------------------------------------- compiling instructions
    def _compile(self, pc: int) -> Callable:
        ins = self.prog.code[pc]
        if not isinstance(ins, ir.Instr):
            def raw(cta, idx):
                raise _Unsupported(f"raw PTX text {ins.text!r} is not modelled")
            return raw
        try:
            body, control = self._decode(ins)
        except _Unsupported as u:
            msg = u.args[0]

            def unsupported(cta, idx):
                raise _Unsupported(msg)
            return unsupported
        g = ins.guard
        if g is None:
            if control:
                return body

            def run(cta, idx):
                body(cta, idx)
                cta.pc[idx] += 1
            return run
        gname, neg = g.reg.name, g.negate

        def guarded(cta, idx):
            on = (self._reg(cta, gname)[idx] != 0) ^ neg
            sel = idx[on]
            if control:
                cta.pc[idx[~on]] += 1
                if sel.size:
                    body(cta, sel)
            else:
                if sel.size:
                    body(cta, sel)
                cta.pc[idx] += 1
        return guarded

    def _decode(self, ins: ir.Instr):
        """(body(cta, idx), controls_pc) for one instruction."""
        parts = ins.opcode.split(".")
        op = parts[0]
        fn = getattr(self, "_op_" + op, None)
        if fn is None:
            raise _Unsupported(f"the executor does not model {op} (instruction {ins.opcode})")
        return fn(ins, parts[1:])

    # each _op_X(ins, modifiers) returns (body, controls_pc)

    def _op_mov(self, ins, mods):
        t = mods[-1]
        d, s = ins.operands
        if isinstance(d, (ir.Vec, tuple)):  # unpack: mov.b32 {lo, hi}, r
            n = len(_elems(d))
            width = _tinfo(t)[1] // n
            src = self._reader(s, t)
            ws = [self._writer(e, f"b{width}") for e in _elems(d)]

            def unpack(cta, idx):
                v = src(cta, idx).astype(np.uint64)
                for i, w in enumerate(ws):
                    w(cta, idx, (v >> np.uint64(i * width)) & np.uint64((1 << width) - 1))
            return unpack, False
        if isinstance(s, (ir.Vec, tuple)):  # pack: mov.b32 r, {lo, hi}
            n = len(_elems(s))
            width = _tinfo(t)[1] // n
            rs = [self._reader(e, f"b{width}") for e in _elems(s)]
            w = self._writer(d, t)

            def pack(cta, idx):
                v = np.zeros(idx.size, dtype=np.uint64)
                for i, r in enumerate(rs):
                    v |= r(cta, idx).astype(np.uint64) << np.uint64(i * width)
                w(cta, idx, v)
            return pack, False
        r, w = self._reader(s, t), self._writer(d, t)
        return (lambda cta, idx: w(cta, idx, r(cta, idx))), False

    def _arith(self, ins, mods, f):
        t = mods[-1]
        d, *srcs = ins.operands
        rs = [self._reader(s, t) for s in srcs]
        w = self._writer(d, t)

        def body(cta, idx):
            with np.errstate(all="ignore"):
                w(cta, idx, f(t, *[r(cta, idx) for r in rs]))
        return body, False

    def _op_add(self, ins, mods):
        return self._arith(ins, [m for m in mods if m not in ("sat", "cc")], lambda t, a, b: a + b)

    def _op_sub(self, ins, mods):
        return self._arith(ins, mods, lambda t, a, b: a - b)

    def _op_min(self, ins, mods):
        return self._arith(ins, mods, lambda t, a, b: np.fmin(a, b) if a.dtype.kind == "f" else np.minimum(a, b))

    def _op_max(self, ins, mods):
        return self._arith(ins, mods, lambda t, a, b: np.fmax(a, b) if a.dtype.kind == "f" else np.maximum(a, b))

    def _op_neg(self, ins, mods):
        return self._arith(ins, mods, lambda t, a: -a)

    def _op_abs(self, ins, mods):
        return self._arith(ins, mods, lambda t, a: np.abs(a))

    def _op_not(self, ins, mods):
        return self._arith(ins, mods, lambda t, a: ~a)

    def _op_and(self, ins, mods):
        return self._arith(ins, mods, lambda t, a, b: a & b)

    def _op_or(self, ins, mods):
        return self._arith(ins, mods, lambda t, a, b: a | b)

    def _op_xor(self, ins, mods):
        return self._arith(ins, mods, lambda t, a, b: a ^ b)

    def _op_div(self, ins, mods):
        def div(t, a, b):
            if a.dtype.kind == "f":
                return a / b
            # PTX integer division truncates towards zero; division by zero is unspecified, 0 here
            safe = np.where(b == 0, 1, b)
            q = np.abs(a.astype(np.int64) if a.dtype.kind == "i" else a) // np.abs(
                safe.astype(np.int64) if a.dtype.kind == "i" else safe)
            if a.dtype.kind == "i":
                q = np.where((a < 0) ^ (b < 0), -q, q)
            return np.where(b == 0, 0, q)
        return self._arith(ins, mods, div)

    def _op_rcp(self, ins, mods):
        # rcp.approx{.ftz}.f32 / rcp.rnd.f32 / rcp.rnd.f64: the correctly rounded 1 / a (.approx is within an
        # ulp or two of it on the GPU); 1 / 0 is inf and 1 / -0 is -inf, as in PTX
        def rcp(t, a):
            return np.ones_like(a) / a
        return self._arith(ins, mods, rcp)

    def _op_rem(self, ins, mods):
        def rem(t, a, b):
            safe = np.where(b == 0, 1, b)
            if a.dtype.kind == "i":
                r = np.fmod(a.astype(np.int64), safe.astype(np.int64))
            else:
                r = a % safe
            return np.where(b == 0, 0, r)
        return self._arith(ins, mods, rem)

    def _shift(self, ins, mods, left: bool):
        t = mods[-1]
        kind, n = _tinfo(t)
        d, a, b = ins.operands
        ra, rb, w = self._reader(a, t), self._reader(b, "u32"), self._writer(d, t)

        def body(cta, idx):
            v = ra(cta, idx)
            s = rb(cta, idx).astype(np.int64)
            if left:
                out = np.where(s >= n, np.uint64(0), v.astype(np.uint64) << np.minimum(s, 63).astype(np.uint64))
            elif kind == "s":
                out = v.astype(np.int64) >> np.minimum(s, n - 1)  # arithmetic: shifts past n fill with the sign
            else:
                out = np.where(s >= n, np.uint64(0), v.astype(np.uint64) >> np.minimum(s, 63).astype(np.uint64))
            w(cta, idx, out.astype(np.uint64) if kind != "s" else out)
        return body, False

    def _op_shl(self, ins, mods):
        return self._shift(ins, mods, True)

    def _op_shr(self, ins, mods):
        return self._shift(ins, mods, False)

    def _mul_like(self, ins, mods, with_add: bool):
        t = mods[-1]
        kind, n = _tinfo(t)
        mode = next((m for m in mods if m in ("lo", "hi", "wide")), None)
        d, *srcs = ins.operands
        if kind == "f":
            rs = [self._reader(s, t) for s in srcs]
            w = self._writer(d, t)

            def fbody(cta, idx):
                v = [r(cta, idx) for r in rs]
                with np.errstate(all="ignore"):
                    if with_add:  # fma/mad: one rounding of the exact product plus c
                        w(cta, idx, v[0].astype(np.float64) * v[1].astype(np.float64) + v[2].astype(np.float64))
                    else:
                        w(cta, idx, v[0] * v[1])
            return fbody, False
        if mode is None:
            raise _Unsupported(f"{ins.opcode}: integer mul/mad needs .lo, .hi or .wide")
        dt = f"{kind}{2 * n}" if mode == "wide" else t
        rs = [self._reader(s, t) for s in srcs[:2]]
        rc = self._reader(srcs[2], dt) if with_add else None
        w = self._writer(d, dt)

        if mode == "wide" and n == 64:
            raise _Unsupported(f"{ins.opcode}: 128-bit results are not modelled")

        def ibody(cta, idx):
            a, b = (r(cta, idx) for r in rs)
            if n <= 32:  # exact in 64 bits: signed in int64, unsigned in uint64
                wt = np.int64 if kind == "s" else np.uint64
                p = a.astype(wt) * b.astype(wt)
                if mode == "hi":
                    p = p >> wt(n)
            else:  # 64-bit operands: exact products through Python ints
                prods = [int(x) * int(y) for x, y in zip(a, b)]
                if mode == "hi":
                    prods = [x >> 64 for x in prods]
                p = np.array([x & _M64 for x in prods], dtype=np.uint64)
            if with_add:
                p = p + rc(cta, idx).astype(p.dtype)
            w(cta, idx, p)
        return ibody, False

    def _op_mul(self, ins, mods):
        return self._mul_like(ins, mods, False)

    def _op_mad(self, ins, mods):
        return self._mul_like(ins, mods, True)

    def _op_fma(self, ins, mods):
        return self._mul_like(ins, mods, True)

    _CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
            "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal}

    def _op_setp(self, ins, mods):
        cmp, t = mods[0], mods[-1]
        boolop = mods[1] if len(mods) == 3 else None
        unordered = cmp in ("equ", "neu", "ltu", "leu", "gtu", "geu")
        base = cmp[:-1] if unordered else cmp
        d, a, b, *rest = ins.operands
        ra, rb = self._reader(a, t), self._reader(b, t)
        rc = self._reader(rest[0], "pred") if rest else None
        if isinstance(d, ir.Pair):
            wp, wq = self._writer(d.a, "pred"), self._writer(d.b, "pred")
        else:
            wp, wq = self._writer(d, "pred"), None

        def body(cta, idx):
            x, y = ra(cta, idx), rb(cta, idx)
            if base == "num":
                r = ~(np.isnan(x) | np.isnan(y))
            elif base == "nan":
                r = np.isnan(x) | np.isnan(y)
            else:
                r = self._CMP[base](x, y)
                if x.dtype.kind == "f":
                    nan = np.isnan(x) | np.isnan(y)
                    # ordered comparisons are false with a NaN operand, unordered ones true
                    r = (r | nan) if unordered else (r & ~nan)
            q = ~r
            if boolop:
                c = rc(cta, idx)
                f = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[boolop]
                r, q = f(r, c), f(q, c)
            wp(cta, idx, r)
            if wq:
                wq(cta, idx, q)
        if base not in self._CMP and base not in ("num", "nan"):
            raise _Unsupported(f"setp comparison .{cmp} is not modelled")
        return body, False

    def _op_selp(self, ins, mods):
        t = mods[-1]
        d, a, b, c = ins.operands
        ra, rb, rc, w = self._reader(a, t), self._reader(b, t), self._reader(c, "pred"), self._writer(d, t)
        return (lambda cta, idx: w(cta, idx, np.where(rc(cta, idx), ra(cta, idx), rb(cta, idx)))), False

    def _op_cvt(self, ins, mods):
        types = [m for m in mods if m not in ("rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "sat", "ftz",
                                              "relu", "satfinite")]
        if len(types) != 2:
            raise _Unsupported(f"{ins.opcode}: this cvt form is not modelled")
        dt, st = types
        if dt in ("f16x2", "bf16x2"):
            return self._cvt_pack(ins, mods, dt, st)
        rnd = next((m for m in mods if m in ("rni", "rzi", "rmi", "rpi")), None)
        sat = "sat" in mods
        if len(ins.operands) != 2:
            raise _Unsupported(f"{ins.opcode} with {len(ins.operands)} operands is not modelled")
        d, s = ins.operands
        r, w = self._reader(s, st), self._writer(d, dt)
        dk, dn = _tinfo(dt)

        def body(cta, idx):
            v = r(cta, idx)
            if dk in ("u", "s", "b") and v.dtype.kind == "f":
                f = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil, None: np.trunc}[rnd]
                x = f(v.astype(np.float64))
                lo, hi = (0, 2 ** dn - 1) if dk != "s" else (-2 ** (dn - 1), 2 ** (dn - 1) - 1)
                # float -> int saturates in PTX; NaN becomes 0
                x = np.where(np.isnan(x), 0, np.clip(x, lo, hi))
                out = x.astype(np.int64) if dk == "s" or dn < 64 else x.astype(np.uint64)
            elif dk == "f" and v.dtype.kind == "f":
                out = v.astype(np.float64)
                if sat:
                    out = np.clip(np.nan_to_num(out, nan=0.0), 0.0, 1.0)
                if rnd is not None:
                    out = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}[rnd](out)
            elif dk == "f":
                out = v.astype(np.float64)
            else:
                out = v  # integer resize: to_bits wraps (truncates) or sign/zero extends by the source's type
                if sat:
                    lo, hi = (0, 2 ** dn - 1) if dk != "s" else (-2 ** (dn - 1), 2 ** (dn - 1) - 1)
                    out = np.clip(v.astype(object), lo, hi).astype(np.int64)
                elif v.dtype.kind == "i":
                    out = v.astype(np.int64)
                else:
                    out = v.astype(np.uint64)
            w(cta, idx, out)
        return body, False

    def _cvt_pack(self, ins, mods, dt, st):
        """cvt.rn{.relu}.f16x2|bf16x2.f32 d, a, b: a rounded into the upper half, b into the lower."""
        if st != "f32" or "rn" not in mods or len(ins.operands) != 3 or \
                any(m in mods for m in ("rz", "rm", "rp", "satfinite")):
            raise _Unsupported(f"{ins.opcode}: only cvt.rn{{.relu}}.f16x2/.bf16x2.f32 d, a, b is modelled")
        d, a, b = ins.operands
        ra, rb, w = self._reader(a, "f32"), self._reader(b, "f32"), self._writer(d, "b32")
        relu = "relu" in mods
        half = "bf16" if dt == "bf16x2" else "f16"

        def bits(v):
            v = np.asarray(v, np.float32)
            if relu:
                v = np.where(np.isnan(v), v, np.maximum(v, np.float32(0)))
            return to_bits(v if half == "bf16" else v.astype(np.float16), half) & np.uint64(0xFFFF)

        def body(cta, idx):
            w(cta, idx, (bits(ra(cta, idx)) << np.uint64(16)) | bits(rb(cta, idx)))
        return body, False

    def _op_cvta(self, ins, mods):
        to = "to" in mods
        space = next((m.split("::")[0] for m in mods if m != "to" and not re.match(r"^[ub]\d+$", m)), "generic")
        t = mods[-1]
        d, s = ins.operands
        r, w = self._reader(s, t), self._writer(d, t)
        if space == "shared":
            delta = -SHARED_WINDOW if to else SHARED_WINDOW
        elif space in ("global", "param", "const"):
            delta = 0
        else:
            raise _Unsupported(f"cvta for the .{space} state space is not modelled")
        return (lambda cta, idx: w(cta, idx, (r(cta, idx).astype(np.uint64) + np.uint64(delta & _M64)))), False

    _SPACES = ("global", "shared", "param", "local", "const")

    def _ldst_form(self, mods):
        space = next(("shared::cluster" if m == "shared::cluster" else m.split("::")[0] for m in mods
                      if m.split("::")[0] in self._SPACES), "generic")
        vec = next((int(m[1:]) for m in mods if re.fullmatch(r"v[248]", m)), 1)
        return space, vec, mods[-1]

    def _op_ld(self, ins, mods):
        space, vec, t = self._ldst_form(mods)
        d, a = ins.operands
        space, addr = self._address(a, space)
        dsts = _elems(d)
        if len(dsts) != vec:
            raise _Unsupported(f"{ins.opcode}: {len(dsts)} destinations for .v{vec}")
        nb = max(_tinfo(t)[1] // 8, 1)
        ws = [self._writer(x, t) for x in dsts]
        udt = _INT_DTYPES[nb * 8][0]

        def body(cta, idx):
            raw = self._load(space, addr(cta, idx), nb * vec, cta)
            vals = np.ascontiguousarray(raw).view(udt).reshape(idx.size, vec).astype(np.uint64)
            for i, w in enumerate(ws):
                w(cta, idx, bits_to(vals[:, i], t))
        return body, False

    def _op_st(self, ins, mods):
        if mods and mods[0] == "async":
            return self._op_async_store(ins, mods)
        space, vec, t = self._ldst_form(mods)
        a, s = ins.operands
        space, addr = self._address(a, space)
        srcs = _elems(s)
        if len(srcs) != vec:
            raise _Unsupported(f"{ins.opcode}: {len(srcs)} sources for .v{vec}")
        nb = max(_tinfo(t)[1] // 8, 1)
        rs = [self._reader(x, t) for x in srcs]
        udt = _INT_DTYPES[nb * 8][0]

        def body(cta, idx):
            vals = np.stack([to_bits(r(cta, idx), t).astype(udt) for r in rs], axis=1)
            self._store(space, addr(cta, idx), np.ascontiguousarray(vals).view(np.uint8).reshape(idx.size, -1), cta)
        return body, False

    _ATOM_OPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas")

    def _op_atom(self, ins, mods, red: bool = False):
        """atom / red on global, shared or generic addresses: the threads at the instruction apply their
        operation one after another in thread order (one legal serialisation); atom returns each
        thread's old value. Integer (.b/.u/.s 32 and 64) operations, and .add on .f32/.f64."""
        space, _, t = self._ldst_form(mods)
        op = next((m for m in mods if m in self._ATOM_OPS), None)
        kind, bits = _tinfo(t)
        if op is None or bits not in (32, 64) or (kind == "f" and op != "add") or kind == "pred" \
                or any(m.startswith(("v2", "v4", "v8", "noftz")) for m in mods):
            raise _Unsupported(f"{ins.opcode}: only integer .b/.u/.s 32/64-bit atomics and .add.f32/.f64 are modelled")
        if red:
            (a, b), d, c = ins.operands, None, None
        else:
            d, a, b, *rest = ins.operands
            c = rest[0] if rest else None
        space, addr = self._address(a, space)
        rb = self._reader(b, t)
        rc = self._reader(c, t) if c is not None else None
        w = self._writer(d, t) if d is not None else None
        nb = bits // 8
        udt = _INT_DTYPES[bits][0]
        mask = (1 << bits) - 1

        def apply(old, x, y):
            if kind == "f":
                return old + x
            if op == "add":
                return (int(old) + int(x)) & mask
            if op in ("min", "max"):
                return (min if op == "min" else max)(old, x)
            if op == "inc":
                return 0 if old >= x else old + 1
            if op == "dec":
                return x if old == 0 or old > x else old - 1
            if op in ("and", "or", "xor"):
                o, v = int(old) & mask, int(x) & mask
                return o & v if op == "and" else o | v if op == "or" else o ^ v
            if op == "exch":
                return x
            return y if old == x else old                                     # cas

        def body(cta, idx):
            ads, xs = addr(cta, idx), rb(cta, idx)
            ys = rc(cta, idx) if rc is not None else xs
            olds = np.zeros(idx.size, dtype=np.uint64)
            for i in range(idx.size):
                sel = np.array([i])
                raw = self._load(space, ads[sel], nb, cta)
                old = bits_to(np.ascontiguousarray(raw).view(udt).reshape(-1).astype(np.uint64), t)[0]
                new = np.asarray([apply(old, xs[i], ys[i])])
                olds[i] = to_bits(np.asarray([old]), t)[0]
                self._store(space, ads[sel], np.ascontiguousarray(to_bits(new, t).astype(udt)).view(np.uint8)
                            .reshape(1, nb), cta)
            if w is not None:
                w(cta, idx, bits_to(olds, t))
        return body, False

    def _op_red(self, ins, mods):
        if mods and mods[0] == "async":
            return self._op_async_store(ins, mods)
        return self._op_atom(ins, mods, red=True)

    _ASYNC_MODS = ("async", "weak", "relaxed", "cluster", "mbarrier::complete_tx::bytes")

    def _op_async_store(self, ins, mods):
        """st.async / red.async: the store (or reduction, as red does it) into a CTA of the cluster happens when
        issued, and with .mbarrier::complete_tx::bytes its size in bytes completes at once as a transaction
        on the mbarrier operand, which must be in the same CTA as the address (a MemoryFaultError if not)."""
        plain = [m for m in mods if m not in self._ASYNC_MODS]
        ops = tuple(ins.operands)
        completes = "mbarrier::complete_tx::bytes" in mods
        if len(ops) > (3 if completes else 2):
            raise _Unsupported(f"{ins.opcode}: expected [a], b" + (", [mbar]" if completes else ""))
        # the store or reduction itself, as st / red without .async does it
        st = ins.opcode.startswith("st.")
        inner = ir.Instr(".".join(["st" if st else "red", *plain]), ops[:2])
        store, _ = self._op_st(inner, plain) if st else self._op_atom(inner, plain, red=True)
        if len(ops) < 3:
            return store, False
        space, vec, t = self._ldst_form(plain)
        nbytes = vec * max(_tinfo(t)[1] // 8, 1)
        _, addr = self._address(ops[0], space)
        _, mbar = self._address(ops[2], "shared::cluster")
        remote = space == "shared::cluster"

        def body(cta, idx):
            store(cta, idx)
            ads, mbs = addr(cta, idx), mbar(cta, idx)
            for j in range(idx.size):
                at, ad = self._mbarrier_home(cta, int(mbs[j]), j)
                if remote:
                    dest, _ = self._mbarrier_home(cta, int(ads[j]), j)
                    if dest is not at:
                        raise _Fault(f"{ins.opcode}: the mbarrier (CTA rank {at.rank}) is not in the CTA the data "
                                     f"goes to (rank {dest.rank})", [j])
                self._complete_tx(at, ad, nbytes)
        return body, False

    def _op_bra(self, ins, mods):
        (target,) = ins.operands
        name = target.name if isinstance(target, ir.Label) else str(target)
        if name not in self.prog.labels:
            raise _Unsupported(f"branch target {name} is not a label of this function")
        dest = self.prog.labels[name]

        def body(cta, idx):
            cta.pc[idx] = dest
        return body, True

    def _op_ret(self, ins, mods):
        if not self.prog.fn.is_entry:
            raise _Unsupported("calls and returns of .func functions are not modelled")

        def body(cta, idx):
            cta.live[idx] = False
            # exited threads no longer count towards barrier.cluster: they may have been all it waited for
            self._cluster_try_complete(cta.cluster)
        return body, True

    _op_exit = _op_ret

    def _op_trap(self, ins, mods):
        def body(cta, idx):
            raise _ExecFail(f"trap executed by {idx.size} thread(s) of CTA {cta.ctaid} (the kernel aborts here on "
                            "a GPU)")
        return body, True

    def _op_bar_warp(self, ins):
        """bar.warp.sync mask: the threads wait until every live thread of their warp named in the mask is there."""
        rmask = self._reader(ins.operands[0], "u32")

        def body(cta, idx):
            masks = rmask(cta, idx).astype(np.int64)
            lanes = idx % 32
            if ((masks >> lanes) & 1 == 0).any():
                raise _ExecFail("bar.warp.sync: the executing thread's lane is not in membermask")
            cta.waiting[idx] = True
            cta.bar_id[idx] = _WARP_SYNC - idx // 32
            cta.bar_count[idx] = masks
        return body, True

    def _op_bar(self, ins, mods):
        if mods == ["warp", "sync"]:
            return self._op_bar_warp(ins)
        if mods and mods[0] not in ("sync", "cta") or "arrive" in mods or "red" in mods:
            raise _Unsupported(f"{ins.opcode} is not modelled (bar.sync / barrier.sync / bar.warp.sync only)")
        ops = ins.operands
        rid = self._reader(ops[0], "u32") if ops else None
        rcount = self._reader(ops[1], "u32") if len(ops) > 1 else None

        def body(cta, idx):
            cta.waiting[idx] = True
            cta.bar_id[idx] = rid(cta, idx).astype(np.int64) if rid else 0
            cta.bar_count[idx] = rcount(cta, idx).astype(np.int64) if rcount else 0
        return body, True

    def _op_barrier(self, ins, mods):
        if mods[:1] == ["cluster"]:
            return self._op_barrier_cluster(ins, mods[1:])
        return self._op_bar(ins, mods)

    def _op_barrier_cluster(self, ins, mods):
        """barrier.cluster.arrive{.release|.relaxed}{.aligned} and barrier.cluster.wait{.acquire}{.aligned}.

        arrive marks the thread as arrived in the cluster barrier's current phase (twice before the phase
        completes is an ExecutionError); the phase completes once every live thread of every CTA of the
        cluster has arrived (exited threads count as arrived). wait returns once the phase the thread last
        arrived in has completed, and parks the thread until then; a wait with no arrive before it waits
        for the current phase, which then cannot complete (a DeadlockError once nothing else can run).
        Memory is sequentially consistent here, so .release/.relaxed/.acquire change nothing; .aligned
        (all threads of a warp execute it together) is not checked."""
        kind, rest = (mods[0] if mods else ""), mods[1:]
        allowed = {"arrive": ("release", "relaxed", "aligned"), "wait": ("acquire", "aligned")}.get(kind)
        if allowed is None or any(m not in allowed for m in rest) or ins.operands:
            raise _Unsupported(f"{ins.opcode} is not modelled (barrier.cluster.arrive / barrier.cluster.wait only)")
        if kind == "arrive":
            def arrive(cta, idx):
                cl = cta.cluster
                again = idx[cta.cl_arrived[idx] == cl.phase]
                if again.size:
                    raise _ExecFail(f"barrier.cluster.arrive: {again.size} thread(s) of CTA {cta.ctaid} (threads "
                                    f"{_few(again)}) arrive a second time before the cluster barrier's phase "
                                    f"{cl.phase} completes; each thread arrives once per phase")
                cta.cl_arrived[idx] = cl.phase
                cl.armed = True
                self._cluster_try_complete(cl)
            return arrive, False

        def wait(cta, idx):
            cl = cta.cluster
            arrived = cta.cl_arrived[idx]
            done = (arrived >= 0) & (arrived < cl.phase)
            go, stay = idx[done], idx[~done]
            cta.cl_arrived[go] = -1
            cta.pc[go] += 1
            cta.waiting[stay] = True
            cta.bar_id[stay] = _CLUSTER_WAIT
            cta.bar_count[stay] = 0
        return wait, True

    @staticmethod
    def _cluster_try_complete(cl: _Cluster) -> None:
        """Complete the cluster barrier's phase if every live thread of the cluster has arrived in it, and
        release the threads waiting for it."""
        if not cl.armed:
            return
        for c in cl.ctas:
            if (c.live & (c.cl_arrived != cl.phase)).any():
                return
        cl.phase += 1
        cl.armed = False
        for c in cl.ctas:
            woken = c.waiting & (c.bar_id == _CLUSTER_WAIT)
            c.waiting[woken] = False
            c.pc[woken] += 1
            c.cl_arrived[woken] = -1

    def _cluster_field(self, cta: _Cta, a: np.ndarray, generic: bool, what: str):
        """(rank fields, offsets) of shared::cluster (or, `generic`, generic shared) addresses `a`."""
        a = a.astype(np.uint64)
        if generic:
            out = (a < np.uint64(SHARED_WINDOW)) | (a >= np.uint64(2 * SHARED_WINDOW))
            if out.any():
                i = int(np.argmax(out))
                raise _Fault(f"{what}: the generic address {int(a[i]):#x} is not in shared memory", [i])
            a = a - np.uint64(SHARED_WINDOW)
        fields = (a >> np.uint64(CLUSTER_RANK_SHIFT)).astype(np.int64)
        bad = fields > len(cta.cluster.ctas)
        if bad.any():
            i = int(np.argmax(bad))
            raise _Fault(f"{what}: {int(a[i]):#x} is not a shared::cluster address of this {len(cta.cluster.ctas)}-CTA "
                         "cluster", [i])
        return fields, a & np.uint64(_OFFSET_MASK)

    def _op_mapa(self, ins, mods):
        """mapa{.shared::cluster}.u32/.u64 d, a, rank: the address of a's counterpart in CTA `rank` of the
        cluster (generic addresses in, generic out, without .shared::cluster)."""
        t = mods[-1] if mods else ""
        if t not in ("u32", "u64") or len(ins.operands) != 3:
            raise _Unsupported(f"{ins.opcode}: expected mapa{{.shared::cluster}}.u32/.u64 d, a, rank")
        generic = "shared::cluster" not in mods
        d, a, b = ins.operands
        ra, rb, w = self._reader(a, t), self._reader(b, "u32"), self._writer(d, t)

        def body(cta, idx):
            _, offs = self._cluster_field(cta, ra(cta, idx), generic, "mapa")
            ranks = rb(cta, idx).astype(np.int64)
            n = len(cta.cluster.ctas)
            bad = ranks >= n
            if bad.any():
                i = int(np.argmax(bad))
                raise _Fault(f"mapa to CTA rank {int(ranks[i])}, but the cluster has {n} CTA(s) (ranks 0..{n - 1})",
                             [i])
            out = offs | ((ranks + 1).astype(np.uint64) << np.uint64(CLUSTER_RANK_SHIFT))
            w(cta, idx, out + np.uint64(SHARED_WINDOW) if generic else out)
        return body, False

    def _op_getctarank(self, ins, mods):
        """getctarank{.shared::cluster}.u32/.u64 d, a: the rank of the CTA whose shared memory holds a."""
        t = mods[-1] if mods else ""
        if t not in ("u32", "u64") or len(ins.operands) != 2:
            raise _Unsupported(f"{ins.opcode}: expected getctarank{{.shared::cluster}}.u32/.u64 d, a")
        generic = "shared::cluster" not in mods
        d, a = ins.operands
        ra, w = self._reader(a, t), self._writer(d, "u32")

        def body(cta, idx):
            fields, _ = self._cluster_field(cta, ra(cta, idx), generic, "getctarank")
            w(cta, idx, np.where(fields == 0, cta.rank, fields - 1))
        return body, False

    def _noop(self, ins, mods):
        return (lambda cta, idx: None), False

    def _op_createpolicy(self, ins, mods):
        """An L2 eviction policy is opaque and caches are not modelled: the register gets 0, and the
        `.L2::cache_hint` operand of the copies that take it changes nothing."""
        w = self._writer(ins.operands[0], "b64")

        def body(cta, idx):
            w(cta, idx, np.zeros(idx.size, np.uint64))
        return body, False

    _op_membar = _noop
    _op_fence = _noop
    # the register budget of a warpgroup changes nothing the executor models (registers are unbounded)
    _op_setmaxnreg = _noop
    # programmatic dependent launch: the executor runs one grid at a time, so there is no grid before
    # this one to wait for and none after it to release early
    _op_griddepcontrol = _noop

    def _op_cp(self, ins, mods):
        """cp.async.{ca,cg}.shared.global [dst], [src], size{, src-size}: copied at once (zero-filled past src-size)."""
        if mods[:1] != ["async"]:
            raise _Unsupported(f"{ins.opcode} is not modelled")
        if len(mods) > 1 and mods[1] in ("commit_group", "wait_group", "wait_all"):
            return self._noop(ins, mods)  # the copy already happened when it was issued
        if len(mods) > 1 and mods[1] == "bulk":
            return self._op_cp_bulk(ins, mods[2:])
        if "mbarrier" in mods:
            return self._op_cp_async_mbarrier(ins, mods)
        dst, src, size, *rest = ins.operands
        _, wa = self._address(dst, "shared")
        _, ra = self._address(src, "global")
        n = int(size.value)
        rsz = self._reader(rest[0], "u32") if rest and not isinstance(rest[0], ir.Guard) else None

        def body(cta, idx):
            src_addr = ra(cta, idx)
            if rsz is None:
                data = self._load("global", src_addr, n, cta)
            else:
                # only the first src-size bytes are read; the rest of the destination is zero-filled
                keep = np.minimum(rsz(cta, idx).astype(np.int64), n)
                data = np.zeros((idx.size, n), np.uint8)
                for j in np.nonzero(keep > 0)[0]:
                    data[j, :keep[j]] = self._bytes("global", int(src_addr[j]), int(keep[j]), cta)
            self._store("shared", wa(cta, idx), data, cta)
        return body, False

    def _op_cp_async_mbarrier(self, ins, mods):
        """cp.async.mbarrier.arrive{.noinc} [mbar]: this thread's cp.asyncs are done when issued, so the
        arrive-on happens now. With .noinc it counts against the barrier's expected arrivals; without, the
        pending count is raised by one first, so the two cancel."""
        _, addr = self._address(ins.operands[0], "shared")
        noinc = "noinc" in mods

        def arrive(cta, idx):
            for ad in addr(cta, idx):
                mb = self._mbarrier_at(cta, int(ad))
                if noinc:
                    mb.pending -= 1
                    self._settle(cta, int(ad), mb)
        return arrive, False

    def _op_prefetch(self, ins, mods):
        """prefetch{.space}{.level} / prefetch.tensormap: cache hints, no effect on the memory modelled."""
        return self._noop(ins, mods)

    # ---------------------------------------------------------------- bulk copies and TMA
    def _op_cp_bulk(self, ins, mods):
        """cp.async.bulk{.tensor}: done when issued; a load's bytes complete_tx on its mbarrier at once."""
        if not mods or mods[0] in ("commit_group", "wait_group") or mods[0] == "prefetch":
            return self._noop(ins, mods)  # the copies already happened when they were issued
        for m in mods:
            if m.startswith(("multicast", "cta_group", "im2col", "gather4", "scatter4", "tile::", "ignore_oob")) \
                    or m in ("cp_mask", "reduce", "add", "min", "max", "inc", "dec", "and", "or", "xor"):
                raise _Unsupported(f"{ins.opcode}: .{m} is not modelled (tile-mode unicast copies only)")
        if mods[0] == "tensor":
            return self._op_tma(ins, mods[1:])
        ops = [o for o in ins.operands]
        load = mods[0].startswith("shared") and "global" in mods
        store = mods[0] == "global" and any(m.startswith("shared") for m in mods)
        if not (load or store):
            raise _Unsupported(f"{ins.opcode}: only global <-> shared bulk copies are modelled")
        dst, src, size = ops[:3]
        _, wa = self._address(dst, "shared" if load else "global")
        _, ra = self._address(src, "global" if load else "shared")
        rsize = self._reader(size, "u32")
        mbar = None
        if load:
            if len(ops) < 4:
                raise _Unsupported(f"{ins.opcode}: expected an mbarrier operand")
            _, mbar = self._address(ops[3], "shared")

        def body(cta, idx):
            da, sa, n = wa(cta, idx), ra(cta, idx), rsize(cta, idx)
            for j in range(idx.size):
                nb = int(n[j])
                if nb % 16 or int(da[j]) % 16 or int(sa[j]) % 16:
                    raise _Fault(f"cp.async.bulk needs 16-byte aligned addresses and a size that is a multiple "
                                 f"of 16, got dst {int(da[j]):#x}, src {int(sa[j]):#x}, size {nb}", [j])
                if nb == 0:
                    continue
                data = self._bytes("global" if load else "shared", int(sa[j]), nb, cta).copy()
                self._put_bytes("shared" if load else "global", int(da[j]), data, cta)
                if load:
                    self._complete_tx(cta, int(mbar(cta, idx[j:j + 1])[0]), nb)
        return body, False

    def _put_bytes(self, space, addr: int, data: np.ndarray, cta) -> None:
        parts = self._resolve(space, np.array([addr], dtype=np.uint64), data.size, cta)
        arr, off, _ = parts[0]
        arr[int(off[0]):int(off[0]) + data.size] = data

    def _complete_tx(self, cta, ad: int, nbytes: int) -> None:
        """mbarrier complete_tx of `nbytes` on the barrier at shared address `ad` (may complete the phase)."""
        mb = cta.mbarriers.get(ad)
        if mb is None:
            raise _ExecFail(f"the copy completes on an mbarrier at shared {ad:#x} that was not initialized "
                            "(mbarrier.init)")
        mb.tx -= nbytes
        self._maybe_complete(cta, ad, mb)

    def _mbarrier_home(self, cta, ad: int, j: int = 0):
        """(CTA, shared::cta offset) of the mbarrier at shared::cluster address `ad`."""
        field = ad >> CLUSTER_RANK_SHIFT
        target = self._cluster_cta(cta, field, ad, "an mbarrier operation", j)
        return target, ad & _OFFSET_MASK

    @staticmethod
    def _mbarrier_at(cta, ad: int) -> "_Mbarrier":
        """The mbarrier object at shared address `ad` (an instruction's operand)."""
        mb = cta.mbarriers.get(ad)
        if mb is None:
            of = f" of CTA rank {cta.rank}" if cta.cluster is not None and len(cta.cluster.ctas) > 1 else ""
            raise _ExecFail(f"mbarrier at shared {ad:#x}{of} was not initialized (mbarrier.init)")
        return mb

    def _settle(self, cta, ad: int, mb: "_Mbarrier") -> None:
        """After arrivals or transaction counts changed: too many arrivals are an error; a phase whose
        arrivals and bytes are all in completes."""
        if mb.pending < 0:
            raise _ExecFail(f"more arrivals than expected: {mb.describe(ad)}")
        self._maybe_complete(cta, ad, mb)

    @staticmethod
    def _maybe_complete(cta, ad: int, mb: "_Mbarrier") -> None:
        if mb.pending == 0 and mb.tx == 0:
            mb.phase += 1
            mb.pending = mb.expected
            woken = cta.waiting & (cta.bar_id == -ad - 1)
            cta.waiting[woken] = False

    def _tensor_operand(self, op):
        """(map address reader -> (space, address), coordinate readers) of `[map, {c0, ...}]`."""
        from .ops.operands import TensorRef
        if isinstance(op, TensorRef):
            base, off, coords = op.base, 0, tuple(op.coords)
        elif type(op).__name__ == "AddrList" and len(op.items) == 2 and isinstance(op.items[0], ir.Addr):
            base, off, coords = op.items[0].base, op.items[0].offset, _elems(op.items[1])
        else:
            raise _Unsupported(f"expected a tensor operand [map, {{coords}}], got {op}")
        if isinstance(base, ir.Sym):
            a = self._sym_address(base.name) + off
            space = "param" if base.name in self.param_offsets else "shared"

            def where(cta, idx):
                return space, np.full(idx.shape, a, dtype=np.uint64)
        elif isinstance(base, ir.Reg):
            name = base.name

            def where(cta, idx):
                # generic: this executor's .param window is [0, parameter bytes); global buffers live higher
                ad = self._reg(cta, name)[idx] + np.uint64(off & _M64)
                return ("param" if (ad < np.uint64(self.params.size)).all() else "generic"), ad
        else:
            raise _Unsupported(f"tensor map operand {base} is not modelled")
        return where, [self._reader(c, "s32") for c in coords]

    def _decoded_map(self, raw: bytes):
        cache = self.__dict__.setdefault("_map_cache", {})
        spec = cache.get(raw)
        if spec is None:
            from .errors import TensorMapError
            from .tma import decode_tensor_map
            try:
                spec = decode_tensor_map(raw).spec
            except TensorMapError as e:
                raise _ExecFail(f"the tensor map operand does not hold a tiled tensor map: {e}") from None
            if spec.interleave != "none":
                raise _Unsupported(f"tensor maps with interleave {spec.interleave} are not modelled")
            cache[raw] = spec
        return spec

    def _tma_box(self, spec, coords: Sequence[int]):
        """(element offsets in bytes from the global address [n], inside [n], element count per dimension)
        of the box at `coords`, in shared-memory order (innermost dimension fastest)."""
        rank = len(spec.global_dim)
        if len(coords) != rank:
            raise _ExecFail(f"the tensor map has rank {rank} but the copy gives {len(coords)} coordinates")
        # ceil(box / elementStride) elements per dimension; without interleave dimension 0 has no stride
        # (cuTensorMapEncodeTiled: the first element of elementStrides is ignored)
        es = (1,) + tuple(spec.element_strides[1:])
        counts = [-(-b // e) for b, e in zip(spec.box_dim, es)]
        axes = [coords[d] + np.arange(counts[d], dtype=np.int64) * es[d] for d in range(rank)]
        grids = np.meshgrid(*axes[::-1], indexing="ij")[::-1]   # grids[d]: coordinate along dimension d
        esize = spec.element_bytes
        strides = (esize,) + tuple(spec.global_strides)
        inside = np.ones(grids[0].shape, bool)
        off = np.zeros(grids[0].shape, np.int64)
        for d in range(rank):
            inside &= (grids[d] >= 0) & (grids[d] < spec.global_dim[d])
            off += grids[d] * strides[d]
        return off.ravel(), inside.ravel(), counts

    def _tma_global(self, spec, off: np.ndarray, inside: np.ndarray):
        """(buffer bytes, byte indices [n, esize]) of the in-bounds elements of a box."""
        ga = spec.global_address
        bases = self.mem.bases
        w = int(np.searchsorted(bases, np.uint64(ga), side="right")) - 1
        if w < 0 or ga >= self.mem.buffers[w].address + self.mem.buffers[w].nbytes:
            raise _Fault(f"the tensor map's global address {ga:#x} is in no buffer passed to the kernel "
                         "(give it as TensorMapArg(buffer, map))")
        b = self.mem.buffers[w]
        idx = (ga - b.address) + off[inside][:, None] + np.arange(spec.element_bytes)
        if idx.size and (idx.max() >= b.nbytes or idx.min() < 0):
            raise _Fault(f"the tensor map reaches past its buffer {b!r}: an element inside the tensor's dims lies "
                         f"{int(idx.max()) - b.nbytes + 1} bytes beyond it")
        return b.bytes, idx

    _NAN_FILL = {2: 0x7FFF, 4: 0x7FFFFFFF, 8: 0x7FFFFFFFFFFFFFFF}

    def _op_tma(self, ins, mods):
        """cp.async.bulk.tensor.Nd (tile mode): global -> shared with complete_tx, or shared -> global bulk_group."""
        if not mods or not re.fullmatch(r"[1-5]d", mods[0]):
            raise _Unsupported(f"{ins.opcode}: expected .1d to .5d")
        dims = int(mods[0][0])
        rest = mods[1:]
        load = rest[0].startswith("shared") and "global" in rest
        store = rest[0] == "global" and len(rest) > 1 and rest[1].startswith("shared")
        if not (load or store):
            raise _Unsupported(f"{ins.opcode}: only global -> shared and shared::cta -> global copies are modelled")
        ops = ins.operands
        if load:
            dst, tref, mb = ops[0], ops[1], ops[2]
            _, sm = self._address(dst, "shared")
            _, mbar = self._address(mb, "shared")
        else:
            tref, src = ops[0], ops[1]
            _, sm = self._address(src, "shared")
        where, rcoords = self._tensor_operand(tref)
        if len(rcoords) != dims:
            raise _Unsupported(f"{ins.opcode}: {len(rcoords)} coordinates for a {dims}d copy")
        from .layout import swizzle_offset

        def body(cta, idx):
            space, maddr = where(cta, idx)
            saddr = sm(cta, idx)
            cs = np.stack([r(cta, idx).astype(np.int64) for r in rcoords], axis=1)
            for j in range(idx.size):
                if space == "param":
                    a = int(maddr[j])
                    if a % 64:
                        raise _Fault(f"tensor map at parameter offset {a:#x} is not 64-byte aligned", [j])
                    raw = bytes(self.params[a:a + 128])
                else:
                    if int(maddr[j]) % 64:
                        raise _Fault(f"tensor map at {int(maddr[j]):#x} is not 64-byte aligned", [j])
                    raw = bytes(self._bytes("global", int(maddr[j]), 128, cta))
                spec = self._decoded_map(raw)
                base = int(saddr[j])
                if base % 128:
                    raise _Fault(f"the shared-memory address {base:#x} of a tensor copy must be 128-byte aligned", [j])
                if store and min(int(c) for c in cs[j]) < 0:
                    # a load clips a box that hangs over any edge; a store whose box starts at a negative
                    # coordinate traps instead (seen on an H200: CUDA_ERROR_ILLEGAL_INSTRUCTION)
                    raise _Fault(f"a tensor store's box starts at a negative coordinate {tuple(int(c) for c in cs[j])}"
                                 "; the hardware traps on it (only boxes past the upper edges are clipped)", [j])
                off, inside, counts = self._tma_box(spec, [int(c) for c in cs[j]])
                esize = spec.element_bytes
                nbytes = off.size * esize       # the transaction bytes: the dense box
                lin = np.arange(off.size, dtype=np.int64) * esize
                span = {"32B": 32, "64B": 64, "128B": 128}.get(spec.swizzle)
                row_bytes = counts[0] * esize
                pad = span is not None and row_bytes < span
                if pad:
                    # a box row narrower than the swizzle span still takes a whole span in shared
                    # memory, the rest of it left untouched, as the H200 does
                    lin = (lin // row_bytes) * span + lin % row_bytes
                dest = swizzle_offset(base + lin, spec.swizzle)
                sidx = dest[:, None] + np.arange(esize)
                if pad and load:
                    # the padded rows are whole aligned span blocks, which the swizzle maps onto themselves
                    rows = off.size // counts[0]
                    if base + rows * span > cta.shared.size:
                        raise _Fault(f"the box at shared {base:#x}, {rows} rows padded to the {span}-byte swizzle "
                                     f"span, runs past the {cta.shared.size} bytes of shared memory", [j])
                if sidx.size and sidx.max() >= cta.shared.size:
                    raise _Fault(f"the {nbytes}-byte box at shared {base:#x} runs past the {cta.shared.size} bytes "
                                 "of shared memory", [j])
                arr, gidx = self._tma_global(spec, off, inside)
                if load:
                    data = np.zeros((off.size, esize), np.uint8)
                    if spec.oob_fill == "nan":
                        fill = self._NAN_FILL.get(esize, 0)
                        if spec.dtype == "bf16":
                            fill = 0x7FC0
                        data[:] = np.frombuffer(fill.to_bytes(8, "little")[:esize], np.uint8)
                    data[inside] = arr[gidx]
                    cta.shared[sidx] = data
                    self._complete_tx(cta, int(mbar(cta, idx[j:j + 1])[0]), nbytes)
                else:
                    arr[gidx] = cta.shared[sidx][inside]
        return body, False

    def _bytes(self, space, addr: int, n: int, cta) -> np.ndarray:
        parts = self._resolve(space, np.array([addr], dtype=np.uint64), n, cta)
        arr, off, _ = parts[0]
        return arr[int(off[0]):int(off[0]) + n]

    # ---------------------------------------------------------------- warp collectives
    @staticmethod
    def _warps(idx: np.ndarray):
        """(warp, lanes idx) groups of the participating threads."""
        w = idx // 32
        for wid in np.unique(w):
            yield int(wid), idx[w == wid]

    def _op_wgmma(self, ins, mods):
        """wgmma.mma_async m64nNk16 .f32 += .f16/.bf16, A and B K-major from descriptors; done at issue.

        wgmma.fence, commit_group and wait_group are then no-ops: the result is in the registers at once.
        """
        if mods and mods[0] in ("fence", "commit_group", "wait_group"):
            return self._noop(ins, mods)
        from .layout import fragment_map
        if "sp" in mods:
            raise _Unsupported(f"{ins.opcode}: the sparse form (wgmma.mma_async.sp: A's metadata and sparsity "
                               "selector) is not modelled; the executor runs the dense m64nNk16 .f32 with .f16/.bf16 "
                               "inputs only")
        m = _WGMMA.match(ins.opcode)
        if m is None:
            raise _Unsupported(f"{ins.opcode}: only wgmma.mma_async m64nNk16 .f32 with .f16/.bf16 inputs "
                               "from descriptors is modelled")
        n, at, bt = int(m.group(1)), m.group(2), m.group(3)
        ops = ins.operands
        d, a, b = ops[0], ops[1], ops[2]
        rest = ops[3:]
        reg_a = isinstance(a, (ir.Vec, tuple))
        if len(rest) != (4 if reg_a else 5) or any(not isinstance(x, ir.Imm) for x in rest[1:]):
            raise _Unsupported(f"{ins.opcode}: expected scale-d, imm-scale-a, imm-scale-b and the imm-trans "
                               "operands")
        trans = [int(x.value) for x in rest[3:]]
        trans_a, trans_b = (0, trans[0]) if reg_a else (trans[0], trans[1])
        scale_a, scale_b = int(rest[1].value), int(rest[2].value)
        fa = fragment_map(f"wgmma.m64n{n}k16", "a", at) if reg_a else None
        if reg_a and len(_elems(a)) != fa.regs:
            raise _Unsupported(f"{ins.opcode}: {len(_elems(a))} A registers, not {fa.regs}")
        ras = [self._reader(r, "b32") for r in _elems(a)] if reg_a else None
        rscale = self._reader(rest[0], "pred")
        fd = fragment_map(f"wgmma.m64n{n}k16", "d", "f32")
        dregs = _elems(d)
        if len(dregs) != fd.regs:
            raise _Unsupported(f"{ins.opcode}: {len(dregs)} accumulator registers, not {fd.regs}")
        ra, rb = (None if reg_a else self._reader(a, "b64")), self._reader(b, "b64")
        rd = [self._reader(r, "f32") for r in dregs]
        wd = [self._writer(r, "f32") for r in dregs]

        def body(cta, idx):
            wg = idx // 128
            for g in np.unique(wg):
                th = idx[wg == g]
                if th.size != 128:
                    # .sync.aligned: these threads wait here for the rest of their warpgroup (released
                    # together by _release; _give_up_or_deadlock reports a warpgroup that never gathers)
                    cta.waiting[th] = True
                    cta.bar_id[th] = _WG_SYNC - int(g)
                    continue
                cta.pc[th] += 1
                descs_b = rb(cta, th)
                descs_a = descs_b if reg_a else ra(cta, th)
                if (descs_a != descs_a[0]).any() or (descs_b != descs_b[0]).any():
                    raise _ExecFail("wgmma descriptors differ between the threads of a warpgroup")
                mats = []
                if reg_a:  # A fragment: the same rule as mma.sync's A per warp (ptxgen.layout)
                    mats.append(fa.gather(_unpack([r(cta, th) for r in ras], fa)))
                for desc, rows, t, tr in (((descs_a[0], 64, at, trans_a),) if not reg_a else ()) + \
                        ((descs_b[0], n, bt, trans_b),):
                    addr = (_mn_operand_addresses(int(desc), rows) if tr else
                            _operand_addresses(int(desc), rows, 32)).reshape(-1)
                    raw = self._load("shared", addr.astype(np.uint64), 1, cta).reshape(rows, 16, 2)
                    bits = (raw[..., 0].astype(np.uint64) | (raw[..., 1].astype(np.uint64) << np.uint64(8)))
                    mats.append(bits_to(bits, t).astype(np.float64))
                A, B = mats[0] * scale_a, mats[1] * scale_b
                acc = np.stack([r(cta, th) for r in rd], axis=1)[..., None].astype(np.float64)
                C = fd.gather(acc)
                keep = rscale(cta, th)
                D = A @ B.T + (C if keep.all() else 0.0)
                out = fd.scatter(D)
                for i, w in enumerate(wd):
                    w(cta, th, out[:, i, 0])
        return body, True

    def _op_mbarrier(self, ins, mods):
        """mbarrier init/arrive(.expect_tx)/expect_tx/complete_tx/test_wait/try_wait on shared-memory objects."""
        kind = mods[0] if mods else ""
        ops = ins.operands
        if kind in ("init", "inval"):
            a = ops[0]
            _, addr = self._address(a, "shared")
            rc = self._reader(ops[1], "u32") if kind == "init" else None

            def init(cta, idx):
                for t, ad, c in zip(idx, addr(cta, idx), rc(cta, idx) if rc else [0] * idx.size):
                    if kind == "init":
                        cta.mbarriers[int(ad)] = _Mbarrier(int(c), int(c))
                    else:
                        cta.mbarriers.pop(int(ad), None)
            return init, False
        if kind in ("arrive", "arrive_drop", "expect_tx", "complete_tx"):
            expect = kind == "expect_tx" or "expect_tx" in mods
            tx_only = kind in ("expect_tx", "complete_tx")
            if kind == "expect_tx" or kind == "complete_tx":
                a, rest, d = ops[0], ops[1:], None
            else:
                if isinstance(ops[0], ir.Addr):
                    d, a, rest = None, ops[0], ops[1:]
                else:
                    d, a, rest = ops[0], ops[1], ops[2:]
            _, addr = self._address(a, "shared")
            rn = self._reader(rest[0], "u32") if rest else None
            wd = self._writer(d, "b64") if d is not None and not (isinstance(d, str)) else None
            drop = kind == "arrive_drop"
            remote = "shared::cluster" in mods

            def arrive(cta, idx):
                ads = addr(cta, idx)
                ns = rn(cta, idx) if rn else np.ones(idx.size, np.int64)
                tokens = np.zeros(idx.size, np.uint64)
                for j, ad in enumerate(ads):
                    # .shared::cluster: the barrier may be another CTA's (an address from mapa)
                    at, ad = self._mbarrier_home(cta, int(ad), j) if remote else (cta, int(ad))
                    mb = self._mbarrier_at(at, ad)
                    tokens[j] = mb.phase
                    n = int(ns[j])
                    if kind == "complete_tx":
                        mb.tx -= n
                    elif expect:
                        mb.tx += n
                    if not tx_only:
                        mb.pending -= 1 if expect or rn is None else n
                        if drop:
                            mb.expected -= 1
                    self._settle(at, ad, mb)
                if wd:
                    wd(cta, idx, tokens)
            return arrive, False
        if kind in ("test_wait", "try_wait"):
            parity = "parity" in mods
            d, a, st = ops[0], ops[1], ops[2]
            _, addr = self._address(a, "shared")
            rs = self._reader(st, "u32" if parity else "b64")
            wd = self._writer(d, "pred")
            test = kind == "test_wait"

            def wait(cta, idx):
                ads = addr(cta, idx)
                sv = rs(cta, idx)
                done = np.zeros(idx.size, bool)
                for j, ad in enumerate(ads):
                    mb = self._mbarrier_at(cta, int(ad))
                    # the phase of parity p (or the one the token names) is complete once the barrier moved past it
                    done[j] = (mb.phase & 1) != (int(sv[j]) & 1) if parity else mb.phase > int(sv[j])
                # a false try_wait is only ever retried: park the threads until the phase completes. A test_wait
                # that would be false is delayed the same way (a legal schedule, and a spin loop around it then
                # cannot starve the threads that complete the phase), until no other thread can run: then it
                # returns false (_GIVE_UP)
                fail = ~done
                if test:
                    fail &= cta.bar_count[idx] != _GIVE_UP
                    cta.bar_count[idx[cta.bar_count[idx] == _GIVE_UP]] = 0
                stay = idx[fail]
                if stay.size:
                    cta.waiting[stay] = True
                    cta.bar_id[stay] = -ads[fail].astype(np.int64) - 1
                    cta.bar_count[stay] = _TEST_WAIT if test else 0
                go = idx[~fail]
                if go.size:
                    wd(cta, go, done[~fail])
                    cta.pc[go] += 1
            return wait, True
        raise _Unsupported(f"{ins.opcode} is not modelled")

    def _op_shfl(self, ins, mods):
        mode = next((m for m in mods if m in ("up", "down", "bfly", "idx")), None)
        if mode is None:
            raise _Unsupported(f"{ins.opcode}: shfl without .sync and a mode is not modelled")
        ops = ins.operands
        d, a, b, c = ops[:4]
        wd = self._writer(d.a if isinstance(d, ir.Pair) else d, "b32")
        wp = self._writer(d.b, "pred") if isinstance(d, ir.Pair) else None
        ra, rb, rc = self._reader(a, "b32"), self._reader(b, "u32"), self._reader(c, "u32")

        def body(cta, idx):
            val = np.zeros(cta.nthreads, dtype=np.uint32)
            val[idx] = ra(cta, idx)
            lane = (idx % 32).astype(np.int64)
            bv = rb(cta, idx).astype(np.int64)
            cv = rc(cta, idx).astype(np.int64)
            segmask = (cv >> 8) & 0x1F
            clamp = cv & 0x1F
            min_lane = lane & segmask
            max_lane = min_lane | (clamp & ~segmask)
            if mode == "up":
                j = lane - bv
                ok = j >= max_lane
            elif mode == "down":
                j = lane + bv
                ok = j <= max_lane
            elif mode == "bfly":
                j = lane ^ bv
                ok = j <= max_lane
            else:
                j = min_lane | (bv & 0x1F & ~segmask)
                ok = j <= max_lane
            j = np.where(ok, j, lane)
            src = (idx // 32) * 32 + j
            # reading an inactive lane is undefined in PTX; that lane's last value is returned here
            inside = src < cta.nthreads
            out = np.where(inside, val[np.minimum(src, cta.nthreads - 1)], val[idx])
            wd(cta, idx, out)
            if wp:
                wp(cta, idx, ok)
        return body, False

    def _full_warps(self, cta, idx, what: str):
        for wid, lanes in self._warps(idx):
            if lanes.size != 32:
                raise _ExecFail(f"{what} is .aligned: all threads of warp {wid} must execute it together, "
                                f"but only lanes {sorted(int(x) % 32 for x in lanes)} arrived")
            yield wid, lanes

    def _matrix_form(self, ins, mods):
        from .layout import fragment_map
        shape = next((m for m in mods if re.fullmatch(r"m\d+n\d+", m)), None)
        num = next((int(m[1:]) for m in mods if re.fullmatch(r"x[124]", m)), None)
        trans = "trans" in mods
        if shape != "m8n8" or mods[-1] != "b16" or num is None:
            raise _Unsupported(f"{ins.opcode}: only the .m8n8 .b16 forms are modelled")
        space = next((m.split("::")[0] for m in mods if m.startswith("shared")), "generic")
        return fragment_map(f"{ins.opcode.split('.')[0]}.m8n8.x{num}", trans=trans), num, space

    def _op_ldmatrix(self, ins, mods):
        fm, num, space = self._matrix_form(ins, mods)
        d, a = ins.operands
        space, addr = self._address(a, space)
        dsts = _elems(d)
        if len(dsts) != num:
            raise _Unsupported(f"{ins.opcode}: {len(dsts)} destinations for .x{num}")
        ws = [self._writer(x, "b32") for x in dsts]
        tab = fm.table

        def body(cta, idx):
            for _, lanes in self._full_warps(cta, idx, "ldmatrix"):
                # row r of matrix i comes from the address of lane 8i + r (a row is 8 .b16 = 16 bytes)
                rows_addr = addr(cta, lanes[:8 * num])
                mat = np.ascontiguousarray(self._load(space, rows_addr, 16, cta)).view(np.uint16).reshape(8 * num, 8)
                vals = mat[tab[..., 0], tab[..., 1]].astype(np.uint64)        # [32, num, 2]
                regs = vals[..., 0] | (vals[..., 1] << np.uint64(16))
                for i, w in enumerate(ws):
                    w(cta, lanes, regs[: lanes.size, i])
        return body, False

    def _op_stmatrix(self, ins, mods):
        fm, num, space = self._matrix_form(ins, mods)
        a, s = ins.operands
        space, addr = self._address(a, space)
        srcs = _elems(s)
        rs = [self._reader(x, "b32") for x in srcs]
        tab = fm.table

        def body(cta, idx):
            for _, lanes in self._full_warps(cta, idx, "stmatrix"):
                regs = np.stack([r(cta, lanes).astype(np.uint64) for r in rs], axis=1)   # [32, num]
                mat = np.zeros((8 * num, 8), dtype=np.uint16)
                mat[tab[..., 0, 0], tab[..., 0, 1]] = (regs & np.uint64(0xFFFF)).astype(np.uint16)
                mat[tab[..., 1, 0], tab[..., 1, 1]] = (regs >> np.uint64(16)).astype(np.uint16)
                self._store(space, addr(cta, lanes[:8 * num]), mat.view(np.uint8).reshape(8 * num, 16), cta)
        return body, False

    _MMA = re.compile(r"^mma\.sync\.aligned\.(m\d+n\d+k\d+)\.(row)\.(col)(\.satfinite)?\.(\w+)\.(\w+)\.(\w+)\.(\w+)$")

    def _op_mma(self, ins, mods):
        from .errors import LayoutError
        from .layout import fragment_map
        kind = next((w for w in mods if w.startswith("kind::")), None)
        if kind is not None:
            what = (f"the block-scaled form (.{kind}.block_scale: A and B scaled by scale-a-data and scale-b-data)"
                    if "block_scale" in mods else f"the .{kind} form (.e4m3, .e5m2, .e3m2, .e2m3, .e2m1 inputs)")
            raise _Unsupported(f"{ins.opcode}: {what}{' of mma.sp' if mods[0].startswith('sp') else ''} is not "
                               "modelled; the executor runs mma.sync .row.col with .f16, .bf16, .tf32, .f64, .s8 and "
                               ".u8 inputs")
        m = self._MMA.match(ins.opcode)
        if m is None:
            raise _Unsupported(f"{ins.opcode}: only mma.sync.aligned .row.col forms are modelled")
        shape, _, _, _, dt, at, bt, ct = m.groups()
        if at not in ("f16", "bf16", "tf32", "f64", "s8", "u8") or bt != at and {at, bt} - {"s8", "u8"}:
            raise _Unsupported(f"{ins.opcode}: .{at} inputs are not modelled")
        try:
            fa, fb = fragment_map(f"mma.{shape}", "a", at), fragment_map(f"mma.{shape}", "b", bt)
            fc, fd = fragment_map(f"mma.{shape}", "c", ct), fragment_map(f"mma.{shape}", "d", dt)
        except LayoutError as e:
            raise _Unsupported(f"{ins.opcode}: {e}") from None
        d, a, b, c = ins.operands
        groups = []
        for fm, op in ((fa, a), (fb, b), (fc, c), (fd, d)):
            regs = _elems(op)
            if len(regs) != fm.regs:
                raise _Unsupported(f"{ins.opcode}: operand {fm.operand} has {len(regs)} registers, not {fm.regs}")
            groups.append(regs)
        rtype = {32: "b32", 64: "b64"}
        ra = [self._reader(r, rtype[fa.elems * fa.bits]) for r in groups[0]]
        rb = [self._reader(r, rtype[fb.elems * fb.bits]) for r in groups[1]]
        rc = [self._reader(r, rtype[fc.elems * fc.bits]) for r in groups[2]]
        wd = [self._writer(r, rtype[fd.elems * fd.bits]) for r in groups[3]]

        def body(cta, idx):
            for _, lanes in self._full_warps(cta, idx, "mma.sync"):
                A = fa.gather(_unpack([r(cta, lanes) for r in ra], fa))
                B = fb.gather(_unpack([r(cta, lanes) for r in rb], fb))
                C = fc.gather(_unpack([r(cta, lanes) for r in rc], fc))
                D = A @ B + C
                dbits = _pack(fd.scatter(D), fd)
                for i, w in enumerate(wd):
                    w(cta, lanes, dbits[:, i])
        return body, False


_WGMMA = re.compile(r"^wgmma\.mma_async\.sync\.aligned\.m64n(\d+)k16\.f32\.(f16|bf16)\.(f16|bf16)$")


def _operand_addresses(desc: int, rows: int, k_bytes: int) -> np.ndarray:
    """Shared addresses [rows, k_bytes] of a K-major wgmma operand described by a descriptor.

    Rows come in groups of 8 (core matrices) SBO bytes apart. Without swizzle a core matrix is 8 rows of
    16 bytes and LBO steps to the next 16 bytes of K; with an N-byte swizzle the 8 rows are N bytes apart
    and the 16-byte chunk bits of the final address are XORed with its bits 7.. (see ptxgen.layout).
    """
    from .layout import swizzle_offset
    from .ops.wgmma_desc import decode_descriptor
    d = decode_descriptor(int(desc))
    r = np.arange(rows)[:, None]
    b = np.arange(k_bytes)[None, :]
    if d.swizzle == "none":
        return d.start_address + (r // 8) * d.sbo + (b // 16) * d.lbo + (r % 8) * 16 + b % 16
    span = {"32B": 32, "64B": 64, "128B": 128}[d.swizzle]
    if k_bytes > span:
        raise _Unsupported(f"K of {k_bytes} bytes per row wider than the {d.swizzle} swizzle is not modelled")
    # base_offset shifts the pattern for tiles that do not start on its repeat boundary
    addr = d.start_address + (r // 8) * d.sbo + (r % 8) * span + b
    return swizzle_offset(addr + d.base_offset * 128, d.swizzle) - d.base_offset * 128


def _mn_operand_addresses(desc: int, rows: int) -> np.ndarray:
    """Shared addresses [rows, 32 bytes] (16 two-byte elements of K per row) of an MN-major (transposed)
    16-bit wgmma operand with a swizzled layout: panels of span/2 elements along MN, LBO bytes apart;
    inside a panel one span-byte row per k, groups of 8 k SBO bytes apart; the swizzle XOR is applied to
    the final address (the layout ptxgen.ops.wgmma_desc.SmemTile(major='MN') describes)."""
    from .layout import swizzle_offset
    from .ops.wgmma_desc import decode_descriptor
    d = decode_descriptor(int(desc))
    if d.swizzle == "none":
        raise _Unsupported("an MN-major wgmma operand without swizzle is not modelled")
    span = {"32B": 32, "64B": 64, "128B": 128}[d.swizzle]
    per = span // 2
    mn = np.arange(rows)[:, None, None]
    kk = np.arange(16)[None, :, None]
    byte = np.arange(2)[None, None, :]
    addr = (d.start_address + (mn // per) * d.lbo + (kk // 8) * d.sbo + (kk % 8) * span + (mn % per) * 2 + byte)
    out = swizzle_offset(addr + d.base_offset * 128, d.swizzle) - d.base_offset * 128
    return out.reshape(rows, 32)


def _elems(op) -> tuple:
    """The registers of a vector operand ({a, b} or a fragment tuple), or the operand alone."""
    if isinstance(op, ir.Vec):
        return tuple(op.elems)
    if isinstance(op, tuple):
        return tuple(op)
    return (op,)


def _elem_values(bits: np.ndarray, t: str) -> np.ndarray:
    """Element bits -> float64 (integers exactly)."""
    v = bits_to(bits, t)
    return v.astype(np.float64)


def _unpack(regs: List[np.ndarray], fm) -> np.ndarray:
    """Per-lane register values [32] x regs -> element values [32, regs, elems] as float64."""
    r = np.stack([x.astype(np.uint64) for x in regs], axis=1)
    n = fm.bits
    out = np.empty(r.shape + (fm.elems,), dtype=np.float64)
    t = {"tf32": "f32"}.get(fm.dtype, fm.dtype)
    for e in range(fm.elems):
        bits = (r >> np.uint64(e * n)) & np.uint64((1 << n) - 1 if n < 64 else _M64)
        if fm.dtype == "tf32":
            bits = bits & np.uint64(0xFFFFE000)  # the tensor core reads the top 19 bits of a .tf32 register
        out[..., e] = _elem_values(bits, t)
    return out


def _pack(vals: np.ndarray, fm) -> np.ndarray:
    """Element values [32, regs, elems] -> register bits [32, regs]."""
    n = fm.bits
    out = np.zeros(vals.shape[:2], dtype=np.uint64)
    for e in range(fm.elems):
        v = vals[..., e]
        if fm.dtype == "s32":  # integer accumulators wrap
            v = (v.astype(object) % (1 << 32)).astype(np.uint64)
        out |= to_bits(v, fm.dtype) << np.uint64(e * n)
    return out


def _few(threads: np.ndarray, n: int = 8) -> str:
    """Up to n thread indices, for a message."""
    shown = ", ".join(str(int(t)) for t in threads[:n])
    return shown + (f", ... ({threads.size} in all)" if threads.size > n else "")


class _Unsupported(Exception):
    pass


class _ExecFail(Exception):
    pass


# ============================================================================================ entry points

def load_function(module, name: str) -> Tuple[ir.Function, ir.Module]:
    """The ir.Function `name` of a builder Module, ir.Module or PTX text."""
    if isinstance(module, str):
        from .parse import parse_ptx
        module = parse_ptx(module, "<ptx>")
    irm = getattr(module, "ir", module)
    if not isinstance(irm, ir.Module):
        raise UsageError(f"run_kernel takes a ptxgen Module, an ir.Module or PTX text, not {type(module).__name__}")
    for f in irm.functions:
        if f.name == name:
            if not f.is_entry:
                raise UsageError(f"{name} is a .func; run_kernel runs .entry kernels")
            return f, irm
    raise UsageError(f"no kernel {name!r} in the module; kernels: "
                     + ", ".join(f.name for f in irm.functions if f.is_entry))


def _dim3(v, what: str) -> Tuple[int, int, int]:
    t = (v,) if isinstance(v, (int, np.integer)) else tuple(v)
    if not 1 <= len(t) <= 3 or any(not isinstance(x, (int, np.integer)) or x < 1 for x in t):
        raise UsageError(f"{what} must be 1 to 3 positive integers, not {v!r}")
    return tuple(int(x) for x in t) + (1,) * (3 - len(t))


def _pack_params(fn: ir.Function, args: Sequence) -> Tuple[bytes, Dict[str, int], List[Buffer]]:
    if len(args) != len(fn.params):
        raise UsageError(f"{fn.name} takes {len(fn.params)} arguments ({', '.join(p.name for p in fn.params)}), "
                         f"got {len(args)}")
    blob = bytearray()
    offsets: Dict[str, int] = {}
    buffers: List[Buffer] = []
    for p, a in zip(fn.params, args):
        size = p.type.bits // 8 * (p.array or 1)
        align = p.align if p.array is not None and p.align else max(p.type.bits // 8, 1)
        blob += b"\0" * (-len(blob) % align)
        offsets[p.name] = len(blob)
        if isinstance(a, Buffer):
            if p.type.bits != 64:
                raise UsageError(f"parameter {p.name} is .{p.type.name}; a Buffer is a 64-bit pointer")
            buffers.append(a)
            blob += b"\0" * 8  # filled with the address once buffers are placed
        elif isinstance(a, TensorMapArg):
            if size != 128:
                raise UsageError(f"parameter {p.name} takes {size} bytes; a tensor map is passed by value to a "
                                 "`.param .align 64 .b8 name[128]` parameter")
            buffers.append(a.buffer)
            blob += b"\0" * 128  # filled with the encoded map once buffers are placed
        elif isinstance(a, (bytes, bytearray)):
            if len(a) != size:
                raise UsageError(f"parameter {p.name} takes {size} bytes, got {len(a)}")
            blob += bytes(a)
        else:
            try:
                val = float(a) if p.type.kind == "f" else int(a)
            except (TypeError, ValueError):
                hint = ""
                if type(a).__name__ == "TensorMap":
                    hint = " (wrap a ptxgen.tma.TensorMap as TensorMapArg(buffer, tmap) to say which Buffer it maps)"
                raise UsageError(f"argument for {p.name} (.{p.type.name}) must be a number, a Buffer or a "
                                 f"TensorMapArg, not {type(a).__name__}{hint}") from None
            bits = to_bits(np.array([val]), p.type.name if p.type.kind != "f" else p.type.name)
            blob += int(bits[0]).to_bytes(8, "little")[:size]
    return bytes(blob), offsets, buffers


# concurrent=True (and the CTAs of a cluster): the steps a resident CTA runs before the next one takes its turn
CTA_QUANTUM = 2000


def _take_turns(ex: _Executor, resident: List[_Cta]) -> None:
    """Run resident CTAs in turns of CTA_QUANTUM steps until all have exited; a round in which every one
    of them is blocked (all its live threads wait on others) and none ran a step is a stall."""
    while resident:
        before = ex.stats.steps
        resident = [cta for cta in resident if not ex.advance(cta, CTA_QUANTUM)]
        if resident and ex.stats.steps == before and all(cta.blocked for cta in resident):
            ex._stalled(resident)


def _cluster_shape(fn: ir.Function, cluster, grid) -> Tuple[Tuple[int, int, int], bool]:
    """(cluster shape, explicit) of a launch: `cluster` as given, else the kernel's .reqnctapercluster, else
    clusters of one CTA. Checks the kernel's cluster directives and that the grid is whole clusters."""
    req, explicit_only, max_rank = None, False, None
    for d in fn.directives:
        key, _, vals = d.strip().partition(" ")
        if key == ".reqnctapercluster":
            req = _dim3(tuple(int(v) for v in vals.split(",")), ".reqnctapercluster")
        elif key == ".explicitcluster":
            explicit_only = True
        elif key == ".maxclusterrank":
            max_rank = int(vals)
    if cluster is None:
        if req is None and explicit_only:
            raise UsageError(f"{fn.name} is .explicitcluster: it must be launched in clusters; give run_kernel "
                             "cluster=")
        c, explicit = (req, True) if req is not None else ((1, 1, 1), False)
    else:
        c, explicit = _dim3(cluster, "cluster"), True
        if req is not None and c != req:
            raise UsageError(f"{fn.name} declares .reqnctapercluster {', '.join(map(str, req))}; it cannot be "
                             f"launched with cluster {c}")
    size = c[0] * c[1] * c[2]
    if size > MAX_CLUSTER_CTAS:
        raise UsageError(f"a cluster has at most {MAX_CLUSTER_CTAS} CTAs (8 portable), not {size} (cluster {c})")
    if max_rank is not None and size > max_rank:
        raise UsageError(f"{fn.name} declares .maxclusterrank {max_rank}; cluster {c} has {size} CTAs")
    bad = [a for a in range(3) if grid[a] % c[a]]
    if bad:
        a = bad[0]
        raise UsageError(f"the grid {grid} is not a whole number of clusters {c}: its {'xyz'[a]} extent {grid[a]} "
                         f"is not a multiple of {c[a]}")
    return c, explicit


def run_kernel(module, name: str, grid=(1,), block=(32,), args: Sequence = (), *, dynamic_shared: int = 0,
               max_steps: int = 1_000_000, record: Sequence[str] = (), concurrent: bool = False,
               cluster=None) -> RunStats:
    """Run kernel `name` on the CPU over `grid` CTAs of `block` threads; Buffer arguments are updated in place.

    CTAs run one after another, each to its end, unless `concurrent`: then all of them are resident at
    once and take turns of CTA_QUANTUM steps, in grid order, so a CTA may wait on a flag in global memory
    that a later CTA sets (a persistent grid whose CTAs exchange partial results); the turns are a legal
    schedule, since CTAs run in any order and at any relative speed on a GPU.

    `cluster` (1 to 3 ints, like grid) launches thread-block clusters of that shape (default: the kernel's
    .reqnctapercluster, else clusters of one CTA); each grid extent must be a multiple of the cluster's.
    The CTAs of a cluster are resident together and take turns of CTA_QUANTUM steps (rank order); clusters
    run one after another, or all at once with `concurrent`. A cluster that disagrees with the kernel's
    .reqnctapercluster or .maxclusterrank, has more than MAX_CLUSTER_CTAS CTAs, or is missing for an
    .explicitcluster kernel is a UsageError.

    Raises UnsupportedInstructionError (an instruction the executor does not model), MemoryFaultError
    (out-of-bounds or misaligned access), DeadlockError (a barrier no thread can complete), ExecutionError.
    `record`: opcode prefixes (e.g. ('mma',)) whose register operands (with the registers of addresses and
    tensor coordinates) are saved in RunStats.records.
    """
    fn, irm = load_function(module, name)
    g, b = _dim3(grid, "grid"), _dim3(block, "block")
    if b[0] * b[1] * b[2] > 1024:
        raise UsageError(f"a CTA has at most 1024 threads, not {b[0] * b[1] * b[2]}")
    c, explicit = _cluster_shape(fn, cluster, g)
    blob, offsets, buffers = _pack_params(fn, args)
    mem = _Memory(buffers)
    blob = bytearray(blob)
    for p, a in zip(fn.params, args):
        if isinstance(a, Buffer):
            blob[offsets[p.name]:offsets[p.name] + 8] = a.address.to_bytes(8, "little")
        elif isinstance(a, TensorMapArg):
            blob[offsets[p.name]:offsets[p.name] + 128] = a.encode()
    prog = _Program(fn, irm, dynamic_shared)
    ex = _Executor(prog, mem, bytes(blob), offsets, g, b, max_steps, tuple(record), c, explicit)
    n = ex.nclusters
    ids = [(x, y, z) for z in range(n[2]) for y in range(n[1]) for x in range(n[0])]
    if concurrent:
        resident = [cta for i in ids for cta in ex.new_cluster(i)]
        total = len(resident)
        _take_turns(ex, resident)
        ex.stats.ctas += total
    else:
        for i in ids:
            ctas = ex.new_cluster(i)
            if len(ctas) == 1:
                ex.advance(ctas[0])
            else:
                _take_turns(ex, ctas)
            ex.stats.ctas += len(ctas)
    for buf in buffers:
        buf._write_back()
    return ex.stats


# ============================================================================================ fragment reports

def coordinate_matrix(rows: int, cols: int, dtype: str = "f16") -> Tuple[np.ndarray, np.ndarray]:
    """(bits, values): a rows x cols matrix whose element (r, c) is r*cols + c, exact in f16/bf16 up to 256
    elements (bf16) or 2048 (f16), so a received value names the element it came from."""
    if dtype not in ("f16", "bf16"):
        raise UsageError(f"coordinate matrices are .f16 or .bf16, not {dtype!r}")
    limit = 256 if dtype == "bf16" else 2048
    if rows * cols > limit:
        raise UsageError(f"a {rows}x{cols} coordinate matrix does not fit exactly in .{dtype} (at most {limit} "
                         "elements)")
    vals = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)
    bits = to_bits(vals, dtype).astype(np.uint16)
    return bits, vals


@dataclass
class FragmentReport:
    """Which (row, col) each (lane, register, element) of a fragment should hold and which it received."""

    title: str
    entries: List[Tuple[int, int, int, Tuple[int, int], Optional[Tuple[int, int]]]]  # lane reg elem exp got

    @property
    def mismatches(self):
        return [e for e in self.entries if e[3] != e[4]]

    @property
    def ok(self) -> bool:
        return not self.mismatches

    def text(self, limit: int = 64) -> str:
        bad = self.mismatches
        if not bad:
            return f"{self.title}: every lane received the elements the layout expects"
        lines = [f"{self.title}: {len(bad)} of {len(self.entries)} elements are not where the layout expects",
                 "lane  reg.elem  expected (row, col)  received (row, col)"]
        for lane, r, e, exp, got in bad[:limit]:
            shown = got if got is not None else "not in the matrix"
            lines.append(f"{lane:4d}  {r:3d}.{e:<4d}  {str(exp):19s}  {shown}")
        if len(bad) > limit:
            lines.append(f"... {len(bad) - limit} more")
        lanes = sorted({x[0] for x in bad})
        lines.append(f"lanes with wrong elements: {lanes}")
        return "\n".join(lines)


def fragment_report(record: Record, operand: str, matrix_values: np.ndarray, *, warp: int = 0) -> FragmentReport:
    """Compare the fragment an mma.sync received in `operand` ('a', 'b' or 'c') with its layout.

    `matrix_values` is the operand matrix as stored in memory with distinct values (see coordinate_matrix);
    a received value is traced back to the (row, col) holding it.
    """
    from .layout import fragment_map
    m = _Executor._MMA.match(record.instr.opcode)
    if m is None:
        raise UsageError(f"fragment_report reads mma.sync records, not {record.instr.opcode}")
    shape, _, _, _, dt, at, bt, ct = m.groups()
    pos = {"a": 1, "b": 2, "c": 3}
    if operand not in pos:
        raise UsageError(f"operand must be 'a', 'b' or 'c', not {operand!r}")
    fm = fragment_map(f"mma.{shape}", operand, {"a": at, "b": bt, "c": ct}[operand])
    regs = _elems(record.instr.operands[pos[operand]])
    lanes = record.threads[record.threads // 32 == warp]
    sel = np.isin(record.threads, lanes)
    got = _unpack([record.values[r.name][sel] for r in regs], fm)       # [32, regs, elems]
    where = {float(v): (int(i), int(j)) for (i, j), v in np.ndenumerate(np.asarray(matrix_values, np.float64))}
    entries = []
    for lane in range(32):
        for r in range(fm.regs):
            for e in range(fm.elems):
                entries.append((lane, r, e, fm.coords(lane, r, e), where.get(float(got[lane, r, e]))))
    return FragmentReport(f"{record.instr.opcode} operand {operand.upper()} (warp {warp})", entries)
