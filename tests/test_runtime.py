"""ptxgen.runtime: no-driver behaviour and argument packing everywhere; loading and launching on a GPU (`gpu`)."""
import ctypes
import re
import struct
import subprocess
import sys

import numpy as np
import pytest

import ptxgen.runtime as R
from ptxgen.diag import SourceLoc
from ptxgen.errors import (AssemblyError, CudaError, DeviceBufferError, JitError, LaunchConfigError,
                           NoDriverError, UsageError)
from ptxgen.linemap import PtxText

from _kernels import add1_ptx

# ---------------------------------------------------------------------------------------------
# PTX used below

ADD1 = add1_ptx("sm_80")
ADD1_BAD_LINE = 27  # `add.f32 ...`

# each thread writes one word of a large dynamic shared array, spread to its far end, then
# reads its neighbour's word: this only works when the whole dynamic allocation is usable
DYN_SMEM = """\
.version 8.0
.target sm_80
.address_size 64

.extern .shared .align 16 .b8 dyn[];

.visible .entry dyn_smem(
    .param .u64 p_out,
    .param .u32 p_stride
)
{
    .reg .b32 %r<10>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [p_out];
    ld.param.u32 %r1, [p_stride];
    mov.u32 %r2, %tid.x;
    mov.u32 %r4, dyn;
    mad.lo.u32 %r5, %r2, %r1, %r4;
    add.u32 %r6, %r2, 1000;
    st.shared.u32 [%r5], %r6;
    bar.sync 0;
    mov.u32 %r7, %ntid.x;
    add.u32 %r3, %r2, 1;
    rem.u32 %r3, %r3, %r7;
    mad.lo.u32 %r5, %r3, %r1, %r4;
    ld.shared.u32 %r8, [%r5];
    cvta.to.global.u64 %rd1, %rd1;
    mul.wide.u32 %rd2, %r2, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r8;
    ret;
}
"""

# out[ctaid.x] = %cluster_nctarank * 100 + %cluster_ctarank
_CLUSTER_BODY = """\
{
    .reg .b32 %r<5>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [p_out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %cluster_ctarank;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %cluster_nctarank;
    mad.lo.u32 %r4, %r3, 100, %r1;
    mul.wide.u32 %rd2, %r2, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r4;
    ret;
}
"""
CLUSTER = (".version 8.0\n.target sm_90a\n.address_size 64\n\n"
           ".visible .entry cluster_rank(.param .u64 p_out)\n.explicitcluster\n" + _CLUSTER_BODY
           + "\n.visible .entry cluster_rank_req(.param .u64 p_out)\n.reqnctapercluster 2, 1, 1\n"
           + _CLUSTER_BODY)


# ---------------------------------------------------------------------------------------------
# without a GPU

def test_import_never_needs_a_driver():
    # in a fresh interpreter: importing must not initialise (or need) the driver
    code = "import ptxgen.runtime as R; import sys; sys.exit(1 if R._init_done else 0)"
    assert subprocess.run([sys.executable, "-c", code], timeout=120).returncode == 0


def test_gpu_available_never_raises_and_agrees_with_reason():
    avail = R.gpu_available()
    assert isinstance(avail, bool)
    assert (R.no_gpu_reason() is None) == avail


@pytest.mark.skipif(R.gpu_available(), reason="a GPU is present here")
def test_here_without_gpu_the_first_driver_call_raises_no_driver_error():
    assert R.gpu_available() is False
    reason = R.no_gpu_reason()
    assert reason
    for call in (lambda: R.DeviceBuffer.empty(16), lambda: R.get_context(0), R.synchronize,
                 lambda: R.Module.load(ADD1), lambda: R.load_module(ADD1)):
        with pytest.raises(NoDriverError) as ei:
            call()
        assert str(ei.value) == reason
        e = ei.value  # one clean error, not a chain of driver tracebacks
        assert e.__cause__ is None and (e.__context__ is None or e.__suppress_context__)


class _FakeDriver:
    """Just enough of cuda.bindings.driver for _ensure_driver."""

    def __init__(self, init):
        self._init = init

    def cuInit(self, flags):
        return self._init()

    def cuGetErrorName(self, err):
        raise RuntimeError("no driver")

    def cuGetErrorString(self, err):
        raise RuntimeError("no driver")

    def cuDeviceGetCount(self):
        from cuda.bindings import driver
        return (driver.CUresult.CUDA_SUCCESS, 0)


def _fresh_driver_state(monkeypatch, fake):
    monkeypatch.setattr(R, "_init_done", False)
    monkeypatch.setattr(R, "_init_error", None)
    monkeypatch.setattr(R, "_CONTEXTS", {})
    monkeypatch.setattr(R, "_driver_module", lambda: fake)


def test_missing_libcuda_message(monkeypatch):
    def init():
        raise RuntimeError('"cuda" is an NVIDIA driver library and can only be found via system search.')
    _fresh_driver_state(monkeypatch, _FakeDriver(init))
    assert R.gpu_available() is False
    assert R.no_gpu_reason().startswith("no CUDA driver (libcuda.so) found")
    with pytest.raises(NoDriverError, match=r"no CUDA driver \(libcuda.so\) found"):
        R.DeviceBuffer.empty(4)


def test_cuinit_failure_message(monkeypatch):
    from cuda.bindings import driver
    _fresh_driver_state(monkeypatch, _FakeDriver(lambda: (driver.CUresult.CUDA_ERROR_NO_DEVICE,)))
    with pytest.raises(NoDriverError, match="cuInit failed: CUDA_ERROR_NO_DEVICE"):
        R.get_context()


def test_zero_devices_message(monkeypatch):
    from cuda.bindings import driver
    _fresh_driver_state(monkeypatch, _FakeDriver(lambda: (driver.CUresult.CUDA_SUCCESS,)))
    assert "no GPU" in R.no_gpu_reason()


def test_check_unpacks_and_raises_named_cuda_error():
    from cuda.bindings import driver
    ok = driver.CUresult.CUDA_SUCCESS
    assert R.check((ok,), "cuX") is None
    assert R.check((ok, 7), "cuX") == 7
    assert R.check((ok, 1, 2), "cuX") == (1, 2)
    with pytest.raises(CudaError) as ei:
        R.check((driver.CUresult.CUDA_ERROR_INVALID_VALUE, None), "cuMemAlloc")
    e = ei.value
    assert e.call == "cuMemAlloc" and e.result_name == "CUDA_ERROR_INVALID_VALUE" and e.result_code == 1
    assert "cuMemAlloc failed: CUDA_ERROR_INVALID_VALUE" in str(e)


# --- launch configuration -----------------------------------------------------------------------

def test_dims_are_normalised():
    assert R.normalize_dims("grid", 5) == (5, 1, 1)
    assert R.normalize_dims("grid", (2, 3)) == (2, 3, 1)
    assert R.normalize_dims("grid", [np.int64(2), 3, 4]) == (2, 3, 4)


@pytest.mark.parametrize("bad, match", [
    (0, "> 0"), ((4, 0), "> 0"), (-1, "> 0"), ((1, 2, 3, 4), "1 to 3"), (2.0, "int"),
    ((2.5, 1), "ints"), (True, "int"), ("8", "int"), ((), "1 to 3"),
])
def test_bad_dims(bad, match):
    with pytest.raises(LaunchConfigError, match=match):
        R.normalize_dims("block", bad)


def test_launch_config_limits():
    assert R.validate_launch_config(8, 256) == ((8, 1, 1), (256, 1, 1), None)
    with pytest.raises(LaunchConfigError, match="1025 threads"):
        R.validate_launch_config(1, (205, 5, 1))
    with pytest.raises(LaunchConfigError, match="block.x = 2048"):
        R.validate_launch_config(1, 2048)
    with pytest.raises(LaunchConfigError, match="block.z = 128"):
        R.validate_launch_config(1, (1, 1, 128))
    with pytest.raises(LaunchConfigError, match="grid.y = 70000"):
        R.validate_launch_config((1, 70000), 32)
    with pytest.raises(LaunchConfigError, match="shared_bytes"):
        R.validate_launch_config(1, 32, -1)
    assert R.validate_launch_config(8, 128, 0, (2, 1, 1))[2] == (2, 1, 1)
    with pytest.raises(LaunchConfigError, match="multiple of cluster.x = 2"):
        R.validate_launch_config(7, 128, 0, 2)


# --- argument packing ---------------------------------------------------------------------------

def _slots(packed):
    """Read the void** array back: the bytes each pointer points at (8 bytes or the blob length)."""
    out = []
    arr = (ctypes.c_void_p * len(packed.blobs)).from_address(packed.address)
    for i, b in enumerate(packed.blobs):
        out.append(ctypes.string_at(arr[i], len(b)))
    return out


def test_pack_numpy_scalars():
    p = R.pack_args([np.int32(-3), np.float32(2.5), np.uint64(2**63 + 5), np.float16(1.0), np.int8(-1)])
    assert p.blobs == [struct.pack("<i", -3), struct.pack("<f", 2.5), struct.pack("<Q", 2**63 + 5),
                       np.float16(1.0).tobytes(), b"\xff"]
    assert _slots(p) == p.blobs


def test_pack_pointers_from_buffers_and_interfaces():
    buf = R.DeviceBuffer(0x7F0000001000, 64, context=None, owned=False)

    class Cai:
        __cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (0xABC000, False), "version": 3}

    p = R.pack_args([buf, Cai()])
    assert p.blobs == [struct.pack("<Q", 0x7F0000001000), struct.pack("<Q", 0xABC000)]
    assert _slots(p) == p.blobs


def test_pack_dlpack_reads_pointer_without_copy():
    host = np.arange(10, dtype=np.float32)

    class PretendCuda:
        # a real DLPack capsule (numpy's), reported as CUDA memory so the pointer path is exercised
        def __dlpack_device__(self):
            return (2, 0)

        def __dlpack__(self, stream=None):
            return host[3:].__dlpack__()

    p = R.pack_args([PretendCuda()])
    assert p.blobs == [struct.pack("<Q", host[3:].ctypes.data)]


def test_pack_dlpack_on_cpu_is_refused():
    class CpuTensor:
        def __dlpack_device__(self):
            return (1, 0)

        def __dlpack__(self, stream=None):
            raise AssertionError("must not export")

    with pytest.raises(LaunchConfigError, match="CPU memory"):
        R.pack_args([CpuTensor()])


def test_pack_struct_blobs():
    tmap = bytes(range(128))

    class Pair(ctypes.Structure):
        _fields_ = [("a", ctypes.c_int32), ("b", ctypes.c_float)]

    p = R.pack_args([tmap, bytearray(b"\x01\x02"), np.frombuffer(tmap, np.uint8), Pair(7, 1.5),
                     ctypes.c_uint16(9), np.array(3, dtype=np.int32)])
    assert p.blobs[0] == tmap and p.blobs[1] == b"\x01\x02" and p.blobs[2] == tmap
    assert p.blobs[3] == struct.pack("<if", 7, 1.5)
    assert p.blobs[4] == struct.pack("<H", 9) and p.blobs[5] == struct.pack("<i", 3)
    assert _slots(p) == p.blobs


def test_pack_cuda_binding_types():
    from cuda.bindings import driver
    tm = driver.CUtensorMap()
    p = R.pack_args([driver.CUdeviceptr(0x1000), tm])
    assert p.blobs[0] == struct.pack("<Q", 0x1000)
    assert len(p.blobs[1]) == 128


def test_short_scalars_are_zero_padded_to_8_bytes():
    p = R.pack_args([np.int8(5)])
    arr = (ctypes.c_void_p * 1).from_address(p.address)
    assert ctypes.string_at(arr[0], 8) == b"\x05" + b"\0" * 7


def test_slots_are_8_byte_aligned_and_do_not_overlap():
    blobs = [b"\x01\x02\x03", bytes(range(128)), np.int64(-2).tobytes(), b"\x07" * 9]
    p = R.pack_args([np.frombuffer(b, np.uint8) for b in blobs])
    arr = (ctypes.c_void_p * 4).from_address(p.address)
    assert all(a % 8 == 0 for a in arr)
    ends = [arr[i] + max(len(b), 8) for i, b in enumerate(blobs)]
    assert all(ends[i] <= arr[i + 1] for i in range(3))
    assert _slots(p) == blobs
    assert ctypes.string_at(arr[3], 16) == b"\x07" * 9 + b"\0" * 7     # padded to the next 8 bytes


def test_size_mismatch_names_the_argument_kind():
    with pytest.raises(LaunchConfigError, match=r"argument 1 of 'k'.*4 bytes but np\.float64 is 8 bytes"):
        R.pack_args([np.int32(0), np.float64(1.0)], [4, 4], "k")


class _RecordingDriver:
    """Just enough of cuda.bindings.driver for launch and BoundLaunch: records each cuLaunchKernel with the
    parameter bytes its void** array points at."""
    def __init__(self):
        from cuda.bindings import driver
        self.CUfunction_attribute = driver.CUfunction_attribute
        self.CUlaunchAttribute, self.CUlaunchAttributeID = driver.CUlaunchAttribute, driver.CUlaunchAttributeID
        self.calls, self.current, self.configs, self.graph_calls = [], 0, 0, []
        self.CUstream_flags, self.CUstreamCaptureMode = driver.CUstream_flags, driver.CUstreamCaptureMode

    def CUlaunchConfig(self):
        import types
        self.configs += 1
        return types.SimpleNamespace()

    def cuCtxSetCurrent(self, handle):
        self.current += 1
        return (0,)

    class CUstream:
        def __init__(self, value=0):
            self.value = int(value)

        def __eq__(self, other):
            return type(other) is type(self) and other.value == self.value

    def cuLaunchKernel(self, fn, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        arr = (ctypes.c_void_p * 2).from_address(params)
        self.calls.append(((gx, gy, gz), (bx, by, bz), shared, stream,
                           ctypes.string_at(arr[0], 8), ctypes.string_at(arr[1], 4)))
        return (0,)

    # stream capture and graphs: each call recorded in self.graph_calls
    def cuStreamCreate(self, flags):
        self.graph_calls.append(("cuStreamCreate", int(flags)))
        return (0, self.CUstream(77))

    def cuStreamBeginCapture(self, stream, mode):
        self.graph_calls.append(("cuStreamBeginCapture", stream.value, int(mode)))
        self.captured_from = len(self.calls)
        return (0,)

    def cuStreamEndCapture(self, stream):
        self.graph_calls.append(("cuStreamEndCapture", stream.value))
        self.captured = len(self.calls) - self.captured_from
        return (0, "graph")

    def cuGraphInstantiate(self, graph, flags):
        self.graph_calls.append(("cuGraphInstantiate", graph, flags))
        return (0, "exec")

    def cuGraphGetNodes(self, graph, n):
        return (0, None, self.captured)

    def cuGraphLaunch(self, exec_, stream):
        self.graph_calls.append(("cuGraphLaunch", exec_, stream.value))
        return (0,)

    def cuGraphExecDestroy(self, exec_):
        self.graph_calls.append(("cuGraphExecDestroy", exec_))
        return (0,)

    def cuGraphDestroy(self, graph):
        self.graph_calls.append(("cuGraphDestroy", graph))
        return (0,)

    def cuStreamDestroy(self, stream):
        self.graph_calls.append(("cuStreamDestroy", stream.value))
        return (0,)

    def cuLaunchKernelEx(self, config, fn, params, extra):
        """Recorded as cuLaunchKernel's, plus the attributes: (cluster dims or None, PDL on)."""
        arr = (ctypes.c_void_p * 2).from_address(params)
        ids = self.CUlaunchAttributeID
        attrs = list(config.attrs)[:config.numAttrs]
        cl = [(a.value.clusterDim.x, a.value.clusterDim.y, a.value.clusterDim.z) for a in attrs
              if a.id == ids.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION]
        pdl = any(a.id == ids.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
                  and a.value.programmaticStreamSerializationAllowed for a in attrs)
        self.calls.append(((config.gridDimX, config.gridDimY, config.gridDimZ),
                           (config.blockDimX, config.blockDimY, config.blockDimZ), config.sharedMemBytes,
                           config.hStream, ctypes.string_at(arr[0], 8),
                           ctypes.string_at(arr[1], 4), cl[0] if cl else None, pdl))
        return (0,)


@pytest.fixture
def recorded(monkeypatch):
    """(driver, Function) with a fake driver: a kernel of two parameters (8 and 4 bytes)."""
    import types
    drv = _RecordingDriver()
    monkeypatch.setattr(R, "_driver_module", lambda: drv)
    ctx = types.SimpleNamespace(handle=1, make_current=lambda: R.check(drv.cuCtxSetCurrent(1), "cuCtxSetCurrent"))
    mod = types.SimpleNamespace(context=ctx, handle=1)
    f = R.Function(mod, "k", 7)
    fa = drv.CUfunction_attribute
    f._attrs = {int(fa.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK): 256,
                int(fa.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES): 49152,
                int(fa.CU_FUNC_ATTRIBUTE_NUM_REGS): 32}
    f._param_sizes = [8, 4]
    return drv, f


def test_bound_launch_issues_what_launch_issues(recorded, monkeypatch):
    drv, f = recorded
    args = [np.uint64(0xABCDEF00), np.uint32(7)]
    R.launch(f, (3, 2), 128, args, shared_bytes=1024, stream=5)
    packs = []
    real_pack = R.pack_args
    monkeypatch.setattr(R, "pack_args", lambda *a, **kw: packs.append(1) or real_pack(*a, **kw))
    bound = f.bind((3, 2), 128, args, shared_bytes=1024)
    for _ in range(3):
        bound(stream=5)
    assert len(packs) == 1                                  # packed once, at bind
    assert drv.calls[1:] == [drv.calls[0]] * 3
    assert drv.calls[0] == ((3, 2, 1), (128, 1, 1), 1024, drv.CUstream(5), struct.pack("<Q", 0xABCDEF00),
                            struct.pack("<I", 7))
    assert "grid=(3, 2, 1)" in repr(bound)


def test_bound_cluster_launch_builds_its_launch_config_once(recorded):
    """A bound launch with a cluster dimension and PDL issues what launch issues (cuLaunchKernelEx with
    both attributes) on each call's stream, from a CUlaunchConfig built once at bind."""
    drv, f = recorded
    args = [np.uint64(0x1234), np.uint32(9)]
    R.launch(f, 8, 128, args, shared_bytes=512, stream=5, cluster=4, pdl=True)
    built = drv.configs
    bound = f.bind(8, 128, args, shared_bytes=512, cluster=4, pdl=True)
    current = drv.current
    for stream in (5, 6, None, 5):
        bound(stream=stream)
    assert drv.configs == built + 1
    assert drv.current == current + 4                       # the context made current on every call
    want = ((8, 1, 1), (128, 1, 1), 512, drv.CUstream(5), struct.pack("<Q", 0x1234), struct.pack("<I", 9),
            (4, 1, 1), True)
    assert drv.calls[0] == want
    assert [c[3] for c in drv.calls[1:]] == [drv.CUstream(5), drv.CUstream(6), drv.CUstream(0), drv.CUstream(5)]
    assert all(c[:3] + c[4:] == want[:3] + want[4:] for c in drv.calls[1:])


def test_capture_records_on_its_own_stream_and_replays_in_one_call(recorded, monkeypatch):
    """capture: a non-blocking stream in thread-local capture mode, the launches issued on it, the graph
    instantiated at the block's end and the stream destroyed; a Graph call is one cuGraphLaunch; close
    destroys the executable graph and the graph. Inside a block that raises: no graph, the stream
    destroyed, the error propagated."""
    import types
    drv, f = recorded
    fake_ctx = types.SimpleNamespace(make_current=lambda: None)
    monkeypatch.setattr(R, "get_context", lambda device=0: fake_ctx)
    bound = f.bind(2, 64, [np.uint64(0x40), np.uint32(3)])
    with R.capture() as cap:
        bound(stream=cap.stream)
        bound(stream=cap.stream)
    flags = int(drv.CUstream_flags.CU_STREAM_NON_BLOCKING)
    mode = int(drv.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
    assert drv.graph_calls == [("cuStreamCreate", flags), ("cuStreamBeginCapture", 77, mode), ("cuStreamEndCapture", 77),
                               ("cuGraphInstantiate", "graph", 0), ("cuStreamDestroy", 77)]
    assert [c[3] for c in drv.calls] == [drv.CUstream(77)] * 2
    g = cap.graph
    assert g.nodes == 2 and cap.stream is None
    del drv.graph_calls[:]
    g()
    g(stream=9)
    g.close()
    g.close()
    assert drv.graph_calls == [("cuGraphLaunch", "exec", 0), ("cuGraphLaunch", "exec", 9), ("cuGraphExecDestroy", "exec"),
                               ("cuGraphDestroy", "graph")]
    with pytest.raises(UsageError, match="closed"):
        g()
    del drv.graph_calls[:]
    with pytest.raises(ZeroDivisionError):
        with R.capture() as cap:
            bound(stream=cap.stream)
            1 / 0
    assert cap.graph is None
    assert [c[0] for c in drv.graph_calls] == ["cuStreamCreate", "cuStreamBeginCapture", "cuStreamEndCapture",
                                               "cuGraphDestroy", "cuStreamDestroy"]


def test_bind_checks_at_once_and_refuses_an_unloaded_module(recorded):
    drv, f = recorded
    with pytest.raises(LaunchConfigError, match="at most 256 threads per block"):
        f.bind(1, 512, [np.uint64(0), np.uint32(0)])
    with pytest.raises(LaunchConfigError, match="argument 1 of 'k'"):
        f.bind(1, 32, [np.uint64(0), np.float64(0)])
    bound = f.bind(1, 32, [np.uint64(0), np.uint32(0)])
    f.module.handle = None
    with pytest.raises(LaunchConfigError, match="unloaded"):
        bound()
    assert drv.calls == []


def test_a_block_too_big_for_the_registers_says_why(recorded):
    """Measured on an H200: a kernel of 130 registers a thread gets 384 threads a block, as 13 warps put 4 on
    one sub-partition, whose 16384 registers hold 4 warps only at 128 registers a thread."""
    drv, f = recorded
    fa = drv.CUfunction_attribute
    f._attrs[int(fa.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)] = 384
    f._attrs[int(fa.CU_FUNC_ATTRIBUTE_NUM_REGS)] = 130
    f.module.context.compute_capability = (9, 0)
    with pytest.raises(LaunchConfigError) as e:
        R.launch(f, 1, 416, [np.uint64(0), np.uint32(0)])
    assert str(e.value) == (
        "kernel 'k' can run at most 384 threads per block (130 registers per thread, or its .maxntid), but block "
        "(416, 1, 1) has 416; at 130 registers a thread: 13 warps put 4 on one of the SM's four 16384-register "
        "sub-partitions, which allows at most 128 registers a thread for 416 threads; lower .maxnreg to 128")
    # registers that fit the block: the limit is the kernel's .maxntid, and the message stays as it was
    f._attrs[int(fa.CU_FUNC_ATTRIBUTE_NUM_REGS)] = 128
    with pytest.raises(LaunchConfigError) as e:
        f.bind(1, 416, [np.uint64(0), np.uint32(0)])
    assert str(e.value).endswith("but block (416, 1, 1) has 416")
    # the rule is known for sm_70 and later only
    f._attrs[int(fa.CU_FUNC_ATTRIBUTE_NUM_REGS)] = 130
    f.module.context.compute_capability = (6, 0)
    with pytest.raises(LaunchConfigError) as e:
        f.bind(1, 416, [np.uint64(0), np.uint32(0)])
    assert str(e.value).endswith("but block (416, 1, 1) has 416")
    assert drv.calls == []


def test_no_args_is_a_null_array():
    assert R.pack_args([]).address == 0
    assert R.pack_args((), []).address == 0


@pytest.mark.parametrize("value, match", [
    (3, r"Python int \(3\).*np\.int32\(3\)"), (2.0, r"Python float.*np\.float32\(2\.0\)"),
    (True, "Python bool"), (np.zeros(4, np.float32), "DeviceBuffer.from_numpy"),
    ("x", "type str"), (None, "type NoneType"), (object(), "type object"),
])
def test_untyped_or_host_arguments_are_refused(value, match):
    with pytest.raises(LaunchConfigError, match=match):
        R.pack_args([np.int32(0), value])


def test_args_must_be_a_sequence():
    with pytest.raises(LaunchConfigError, match="list or tuple"):
        R.pack_args(np.int32(3))


def test_sizes_are_checked_against_the_kernel():
    R.pack_args([np.uint64(1), np.uint32(2)], [8, 4], "add1")
    with pytest.raises(LaunchConfigError, match=r"argument 1 of 'add1'.*4 bytes.*np.float64 is 8 bytes.*np.float32"):
        R.pack_args([np.uint64(1), np.float64(2)], [8, 4], "add1")
    with pytest.raises(LaunchConfigError, match=r"'add1' takes 2 parameter\(s\), 1 given"):
        R.pack_args([np.uint64(1)], [8, 4], "add1")
    with pytest.raises(LaunchConfigError, match="takes 1 parameter"):
        R.pack_args([np.uint64(1), np.uint32(2)], [8], "add1")
    with pytest.raises(LaunchConfigError, match="128-byte bytes"):
        R.pack_args([b"\0" * 64], [128], "tma")


# --- DeviceBuffer without a driver ----------------------------------------------------------------

def test_device_buffer_views_and_free_without_driver():
    b = R.DeviceBuffer(0x1000, 64, context=None, shape=(4, 4), dtype=np.dtype(np.float32), owned=False)
    cai = b.__cuda_array_interface__
    assert cai["data"] == (0x1000, False) and cai["shape"] == (4, 4) and cai["typestr"] == "<f4"
    raw = R.DeviceBuffer(0x2000, 10, context=None, owned=False)
    assert raw.__cuda_array_interface__["typestr"] == "|u1"
    b.free()
    b.free()
    with pytest.raises(DeviceBufferError, match="freed"):
        _ = b.ptr


def test_device_buffer_bad_sizes_fail_before_the_driver():
    with pytest.raises(DeviceBufferError, match="byte count"):
        R.DeviceBuffer.empty(-1)
    with pytest.raises(DeviceBufferError, match="shape"):
        R.DeviceBuffer.empty((2, -1), np.float32)
    with pytest.raises(DeviceBufferError, match="dtype"):
        R.DeviceBuffer.empty((2,), "not-a-dtype")


def test_time_kernel_arguments_checked_first():
    with pytest.raises(UsageError, match="callable"):
        R.time_kernel(3)
    with pytest.raises(UsageError, match="iters"):
        R.time_kernel(lambda: None, iters=0)


# ---------------------------------------------------------------------------------------------
# on a GPU

@pytest.fixture
def ctx():
    return R.get_context(0)


@pytest.mark.gpu
def test_context_attributes(ctx):
    major, minor = ctx.compute_capability
    assert major >= 5 and ctx.sm_count > 0 and ctx.name
    assert ctx.max_shared_per_block_optin >= ctx.max_shared_per_block >= 48 * 1024
    assert ctx.arch.startswith(f"sm_{major}{minor}")
    assert 2**18 <= ctx.l2_bytes <= 2**30     # 256 KiB to 1 GiB: a size in bytes, not in KiB or MiB
    assert R.get_context(0) is ctx


def _run_add1(mod, n=1000):
    f = mod.function("add1")
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    with R.DeviceBuffer.from_numpy(x) as d:
        R.launch(f, (n + 255) // 256, 256, [d, np.uint32(n)])
        R.synchronize()
        np.testing.assert_array_equal(d.to_numpy(), x + np.float32(1))
    return f


@pytest.mark.gpu
def test_jit_load_launch_matches_numpy(ctx):
    mod = R.Module.load(PtxText(ADD1, {}, "add1.ptx"))
    assert mod.via == "jit"
    f = _run_add1(mod)
    assert f.num_regs > 0 and f.max_threads_per_block >= 256
    assert f.param_sizes() in (None, [8, 4])
    # the verbose JIT info log is empty when the driver's JIT cache (~/.nv/ComputeCache) answers
    if mod.info_log:
        assert mod.resources["add1"].registers > 0


@pytest.mark.gpu
def test_bound_launch_runs_the_kernel_each_call(ctx):
    f = R.Module.load(ADD1).function("add1")
    n = 1000
    x = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    with R.DeviceBuffer.from_numpy(x) as d:
        bound = f.bind((n + 255) // 256, 256, [d, np.uint32(n)])
        ref = x.copy()
        for _ in range(3):                     # add1 adds 1 in place: every call must run
            bound()
            ref = ref + np.float32(1)
        ctx.synchronize()
        np.testing.assert_array_equal(d.to_numpy(), ref)


@pytest.mark.gpu
def test_captured_launches_run_only_when_the_graph_is_launched(ctx):
    """capture records the launches on its stream without running them; each Graph call replays all
    of them (add1 adds 1 in place, so a launch that ran at capture, or one missing from the replay,
    changes the count); a closed Graph refuses to launch."""
    f = R.Module.load(ADD1).function("add1")
    n = 1000
    x = np.random.default_rng(2).standard_normal(n).astype(np.float32)
    with R.DeviceBuffer.from_numpy(x) as d:
        bound = f.bind((n + 255) // 256, 256, [d, np.uint32(n)])
        with R.capture() as cap:
            for _ in range(3):
                bound(stream=cap.stream)
            R.launch(f, (n + 255) // 256, 256, [d, np.uint32(n)], stream=cap.stream)
        graph = cap.graph
        assert graph.nodes == 4 and "4 nodes" in repr(graph) and cap.stream is None
        ctx.synchronize()
        np.testing.assert_array_equal(d.to_numpy(), x)          # nothing ran at capture
        graph()
        graph()
        ctx.synchronize()
        ref = x
        for _ in range(8):                                       # add1 rounds after each addition
            ref = ref + np.float32(1)
        np.testing.assert_array_equal(d.to_numpy(), ref)
        graph.close()
        with pytest.raises(UsageError, match="closed"):
            graph()


@pytest.mark.gpu
def test_a_capture_that_raises_keeps_no_graph(ctx):
    f = R.Module.load(ADD1).function("add1")
    with R.DeviceBuffer.zeros(4096) as d:
        bound = f.bind(1, 256, [d, np.uint32(256)])
        with pytest.raises(KeyError):
            with R.capture() as cap:
                bound(stream=cap.stream)
                raise KeyError("inside")
        assert cap.graph is None and cap.stream is None
        with pytest.raises(UsageError, match="records once"):
            with cap:
                pass
        ctx.synchronize()
        assert not d.to_numpy().any()


@pytest.mark.gpu
def test_load_module_uses_ptxas_cubin_when_available(ctx, tmp_path, monkeypatch):
    from ptxgen.ptxas import find_ptxas
    monkeypatch.setenv("PTXGEN_CACHE_DIR", str(tmp_path))
    mod = R.load_module(ADD1)
    assert mod.via == ("cubin" if find_ptxas() else "jit")
    if mod.via == "cubin":
        assert mod.assembly.target == ctx.arch
    _run_add1(mod)
    assert R.load_module(ADD1, use_ptxas=False).via == "jit"


@pytest.mark.gpu
def test_poison_and_views(ctx):
    with R.DeviceBuffer.empty((3, 4), np.int32) as b:
        b.fill_bytes(0xFF)
        assert (b.to_numpy() == -1).all() and b.to_numpy().shape == (3, 4)
        b.copy_from(np.arange(12, dtype=np.int32))
        assert b.to_numpy(dtype=np.int32).tolist() == list(range(12))
        with pytest.raises(DeviceBufferError, match="cannot copy 52 bytes"):
            b.copy_from(np.zeros(13, np.int32))
        with pytest.raises(DeviceBufferError, match="needs 64 bytes"):
            b.to_numpy(shape=(16,), dtype=np.int32)


@pytest.mark.gpu
def test_launch_checks_arguments_against_the_kernel(ctx):
    f = R.Module.load(ADD1).function("add1")
    if f.param_sizes() is None:
        pytest.skip("this driver does not report kernel parameter sizes (cuFuncGetParamInfo)")
    with R.DeviceBuffer.empty(16) as d:
        with pytest.raises(LaunchConfigError, match="argument 1 of 'add1'"):
            R.launch(f, 1, 4, [d, np.float64(4)])
        with pytest.raises(LaunchConfigError, match="takes 2 parameter"):
            R.launch(f, 1, 4, [d])


@pytest.mark.gpu
def test_unknown_kernel_name(ctx):
    with pytest.raises(UsageError, match="no kernel named 'nope'.*add1"):
        R.Module.load(ADD1).function("nope")


@pytest.mark.gpu
def test_jit_error_is_mapped_to_user_line(ctx):
    bad = ADD1.replace("add.f32 %f2, %f1, 0f3F800000;", "add.f32 %f2, %f1, foo;")
    user = SourceLoc("/home/me/kernels.py", 77, None, "build")
    ptx = PtxText(bad, {ADD1_BAD_LINE: user}, "add1.ptx")
    with pytest.raises(JitError) as ei:
        R.Module.load(ptx)
    msg = str(ei.value)
    assert "/home/me/kernels.py:77: error:" in msg and "foo" in msg
    assert f"PTX line {ADD1_BAD_LINE}: add.f32 %f2, %f1, foo;" in msg
    assert any(d.code == "JIT-E" and d.loc == user for d in ei.value.diagnostics)
    with pytest.raises(JitError):
        R.load_module(ptx, use_ptxas=False)


@pytest.mark.gpu
@pytest.mark.ptxas
def test_load_module_ptx_error_comes_from_ptxas(ctx, tmp_path, monkeypatch):
    monkeypatch.setenv("PTXGEN_CACHE_DIR", str(tmp_path))
    bad = ADD1.replace("add.f32 %f2, %f1, 0f3F800000;", "add.f32 %f2, %f1, foo;")
    with pytest.raises(AssemblyError, match=r"kernels.py:5: error"):
        R.load_module(PtxText(bad, {ADD1_BAD_LINE: SourceLoc("kernels.py", 5)}))


@pytest.mark.gpu
def test_dynamic_shared_above_48k(ctx):
    f = R.Module.load(DYN_SMEM).function("dyn_smem")
    threads, nbytes = 128, 100 * 1024
    if ctx.max_shared_per_block_optin < nbytes:
        pytest.skip(f"device opt-in shared memory is {ctx.max_shared_per_block_optin} bytes")
    stride = ((nbytes - 4) // (threads - 1)) // 4 * 4  # the last thread's word sits near the end
    with R.DeviceBuffer.empty((threads,), np.uint32) as out:
        args = [out, np.uint32(stride)]
        with pytest.raises(LaunchConfigError, match=r"set_max_dynamic_shared\(102400\)"):
            R.launch(f, 1, threads, args, shared_bytes=nbytes)
        with pytest.raises(LaunchConfigError, match="opt-in limit"):
            f.set_max_dynamic_shared(ctx.max_shared_per_block_optin + 1)
        f.set_max_dynamic_shared(nbytes)
        assert f.max_dynamic_shared_bytes == nbytes
        out.fill_bytes(0xFF)
        R.launch(f, 1, threads, args, shared_bytes=nbytes)
        R.synchronize()
        expect = (np.arange(threads, dtype=np.uint32) + 1) % threads + 1000
        np.testing.assert_array_equal(out.to_numpy(), expect)


def _needs_sm90(ctx):
    if ctx.compute_capability != (9, 0):
        pytest.skip(f"the cluster kernel is built for sm_90a; this device is {ctx.arch}")


@pytest.mark.gpu
def test_cluster_launch_writes_cluster_ctarank(ctx):
    _needs_sm90(ctx)
    f = R.Module.load(CLUSTER).function("cluster_rank")
    grid = 8
    with R.DeviceBuffer.empty((grid,), np.uint32) as out:
        out.fill_bytes(0xFF)
        R.launch(f, grid, 32, [out], cluster=(2, 1, 1))
        R.synchronize()
        np.testing.assert_array_equal(out.to_numpy(), 200 + np.arange(grid) % 2)


@pytest.mark.gpu
def test_cluster_launch_of_kernel_with_reqnctapercluster(ctx):
    _needs_sm90(ctx)
    f = R.Module.load(CLUSTER).function("cluster_rank_req")
    with R.DeviceBuffer.empty((4,), np.uint32) as out:
        out.fill_bytes(0xFF)
        R.launch(f, 4, 32, [out], cluster=(2, 1, 1))
        R.synchronize()
        np.testing.assert_array_equal(out.to_numpy(), 200 + np.arange(4) % 2)


def test_pdl_and_cluster_launch_attributes():
    d = R._driver_module()
    cl, pdl = R._launch_attributes(d, (2, 1, 1), True)
    assert cl.id == d.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    assert (cl.value.clusterDim.x, cl.value.clusterDim.y, cl.value.clusterDim.z) == (2, 1, 1)
    assert pdl.id == d.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
    assert pdl.value.programmaticStreamSerializationAllowed == 1
    assert [a.id for a in R._launch_attributes(d, None, True)] == [pdl.id]
    assert R._launch_attributes(d, None, False) == []


@pytest.mark.gpu
def test_pdl_launches_in_a_row_each_see_the_previous_ones_writes(ctx):
    """Kernels launched with pdl=True may start while the one before them runs (each CTA signals
    launch_dependents first); griddepcontrol.wait holds their memory accesses until it has finished,
    so 200 increments of every element, launched back to back, all land."""
    _needs_sm90(ctx)
    f = R.Module.load(add1_ptx("sm_90", pdl=True)).function("add1")
    n = 1 << 22
    with R.DeviceBuffer.zeros((n,), np.float32) as x:
        bound = f.bind(n // 256, 256, [x, np.uint32(n)], pdl=True)
        assert "pdl" in repr(bound)
        for i in range(200):
            if i % 2:
                bound()
            else:
                R.launch(f, n // 256, 256, [x, np.uint32(n)], pdl=True)
        R.synchronize()
        np.testing.assert_array_equal(x.to_numpy(), np.full(n, 200, np.float32))


@pytest.mark.gpu
def test_time_kernel(ctx):
    f = R.Module.load(ADD1).function("add1")
    n = 1 << 20
    with R.DeviceBuffer.zeros((n,), np.float32) as d:
        times = R.time_kernel(lambda: R.launch(f, n // 256, 256, [d, np.uint32(n)]), warmup=2, iters=5)
        assert len(times) == 5 and all(t > 0 for t in times)
        R.synchronize()
        assert (d.to_numpy() == 7).all()  # 2 warmup + 5 timed launches


@pytest.mark.gpu
def test_foreign_device_arrays_are_passed_without_copy(ctx):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    f = R.Module.load(ADD1).function("add1")
    t = torch.zeros(300, dtype=torch.float32, device="cuda")
    torch.cuda.synchronize()

    class DlpackOnly:  # hides __cuda_array_interface__ so the DLPack path is taken
        def __dlpack__(self, stream=None):
            return t.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return t.__dlpack_device__()

    R.launch(f, 2, 256, [t, np.uint32(300)])
    R.launch(f, 2, 256, [DlpackOnly(), np.uint32(300)])
    R.synchronize()
    assert (t.cpu().numpy() == 2).all()


def test_tensor_whose_array_interface_raises_is_passed_through_dlpack(monkeypatch):
    # torch raises TypeError from __cuda_array_interface__ for bfloat16 tensors; DLPack must be used
    class Bf16Like:
        @property
        def __cuda_array_interface__(self):
            raise TypeError("Got unsupported ScalarType BFloat16")

        def __dlpack_device__(self):
            return (2, 0)

        def __dlpack__(self):
            raise AssertionError("replaced below")

    monkeypatch.setattr(R, "_dlpack_pointer", lambda obj, index: 0xABC000)
    blob, what = R._arg_bytes(Bf16Like(), 0)
    assert struct.unpack("<Q", blob)[0] == 0xABC000


def _hinted_copy_module(target):
    import ptxgen as pg
    m = pg.Module(target)
    k = m.entry("k")
    pol = k.createpolicy("evict_first")
    dst, src = k.mov(0, type=pg.u32), k.mov(0, type=pg.u64)
    k.cp_async(dst, src, 16)
    k.cp_async(dst, src, 16, cache_policy=pol)    # the builder takes it for sm_80 (line below)
    line = sys._getframe().f_lineno - 1
    k.cp_async_wait_all()
    return m.emit(), line


def test_check_miscompiles_refuses_a_hinted_cp_async_for_an_sm90_gpu():
    from ptxgen.errors import LegalityError, TargetError
    from ptxgen.runtime import check_miscompiles
    ptx, line = _hinted_copy_module("sm_80")
    check_miscompiles(ptx, "sm_80")                 # fine where the GPU is an A100
    with pytest.raises(LegalityError) as e:
        check_miscompiles(ptx, "sm_90a")             # the driver would compile it for the H100/H200
    assert e.value.code == "PTX-W-MISCOMPILE" and "illegal instruction" in e.value.message
    # the message names the PTX line, and loc the Python line that built it
    ptx_line = int(re.search(r"line (\d+):", e.value.message).group(1))
    assert ".L2::cache_hint" in ptx.line(ptx_line)
    assert e.value.loc is not None and e.value.loc.line == line and e.value.loc.file.endswith("test_runtime.py")
    assert any("check=False" in n for n in e.value.notes)
    # only cp.async's hinted form: plain copies, bulk/tensor copies and comments pass
    check_miscompiles(str(ptx).replace(".L2::cache_hint", ""), "sm_90a")
    check_miscompiles("// cp.async.cg.shared.global.L2::cache_hint [%r1], [%rd1], 16, %rd2;\n"
                      "cp.async.bulk.prefetch.L2.global.L2::cache_hint [%rd1], 64, %rd2;\n", "sm_90a")
    with pytest.raises(TargetError):
        check_miscompiles(ptx, "sm_9000x")
