"""The CUDA driver API through cuda.bindings.driver: contexts, module loading with JIT logs, launch, memory, timing.

Importing this module never touches the driver. The first call that needs one initialises it
(cuInit) and raises a single NoDriverError with the reason when there is no libcuda or no GPU.

Process-wide state, all of it caches of things the driver itself holds once per process:
the result of cuInit, and one `Context` (the retained primary context) per device ordinal.
Primary contexts stay retained for the life of the process.

Kernel arguments are typed explicitly: numpy scalars (np.int32(3), np.float32(2.0), np.uint64(p)),
DeviceBuffer and device arrays (`__cuda_array_interface__` or CUDA `__dlpack__`) for pointers,
bytes / bytearray / uint8 arrays / ctypes objects / CUtensorMap / ptxgen.tma.TensorMap for
by-value structs. A plain Python int or float is refused: its PTX size is unknown, and guessing
would silently corrupt the parameter block.
"""
from __future__ import annotations

import ctypes
import re
import struct
import threading
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from .diag import Diagnostic
from .errors import (AssemblyError, CudaError, DeviceBufferError, JitError, LaunchConfigError, LegalityError,
                     NoDriverError, TargetError, UsageError)
from .linemap import PtxText
from .logmap import rewrite_log
from .target import (MAX_REGISTERS_PER_THREAD, REGISTER_RULE_MIN_SM, REGISTERS_PER_SUBPARTITION, SUBPARTITIONS_WORD,
                     WARP_THREADS, max_regs_for_threads, warps_per_subpartition)

__all__ = [
    "check",
    "gpu_available",
    "no_gpu_reason",
    "Context",
    "get_context",
    "Module",
    "Function",
    "load_module",
    "launch",
    "BoundLaunch",
    "pack_args",
    "PackedArgs",
    "normalize_dims",
    "validate_launch_config",
    "DeviceBuffer",
    "Event",
    "time_kernel",
    "synchronize",
]

Dim3 = Tuple[int, int, int]
DimsLike = Union[int, Sequence[int]]

# ---------------------------------------------------------------------------------------------
# driver access and error checking

_INIT_LOCK = threading.Lock()
_init_done = False
_init_error: Optional[str] = None
_CONTEXTS: Dict[int, "Context"] = {}

_NO_GPU_HINT = ("ptxgen.runtime needs an NVIDIA GPU and its driver; building, linting and "
                "assembling PTX (ptxgen.ptxas.assemble) work without one")


_DRIVER = None


def _driver_module():
    """cuda.bindings.driver, imported once (every driver call goes through here, and an import statement
    costs about half a microsecond even when the module is loaded)."""
    global _DRIVER
    if _DRIVER is None:
        try:
            from cuda.bindings import driver
        except ImportError as e:
            raise NoDriverError(f"the CUDA Python bindings are not installed ({e}); "
                                "install them with `pip install cuda-bindings`") from None
        _DRIVER = driver
    return _DRIVER


def _error_name(err) -> str:
    try:
        d = _driver_module()
        res, name = d.cuGetErrorName(err)
        if int(res) == 0 and name:
            return name.decode() if isinstance(name, bytes) else str(name)
    except Exception:  # the name is only decoration for an error already being raised
        pass
    return getattr(err, "name", str(err))


def _error_string(err) -> str:
    try:
        d = _driver_module()
        res, s = d.cuGetErrorString(err)
        if int(res) == 0 and s:
            return s.decode() if isinstance(s, bytes) else str(s)
    except Exception:  # as above
        pass
    return ""


def check(result: Any, call_name: str) -> Any:
    """Unpack a cuda.bindings result `(CUresult, *values)`; raise CudaError naming the call when not CUDA_SUCCESS.

    Returns None when the call returns nothing else, the value when it returns one, else a tuple.
    """
    if isinstance(result, tuple):
        err, rest = result[0], result[1:]
    else:
        err, rest = result, ()
    code = int(err)
    if code != 0:
        raise CudaError(call_name, _error_name(err), code, _error_string(err))
    if not rest:
        return None
    if len(rest) == 1:
        return rest[0]
    return rest


def _ensure_driver():
    """cuInit once per process; return the driver module or raise NoDriverError with the cached reason."""
    global _init_done, _init_error
    if _init_done:
        if _init_error is not None:
            raise NoDriverError(_init_error)
        return _driver_module()
    with _INIT_LOCK:
        if not _init_done:
            reason = None
            try:
                d = _driver_module()
            except NoDriverError as e:
                reason = str(e)
            else:
                try:
                    res = d.cuInit(0)
                except Exception as e:  # cuda.pathfinder's DynamicLibNotFoundError, OSError from dlopen
                    reason = f"no CUDA driver (libcuda.so) found: {e}"
                else:
                    err = res[0] if isinstance(res, tuple) else res
                    if int(err) != 0:
                        reason = f"cuInit failed: {_error_name(err)}"
                    else:
                        try:
                            n = check(d.cuDeviceGetCount(), "cuDeviceGetCount")
                        except CudaError as e:
                            reason = str(e)
                        else:
                            if n == 0:
                                reason = "the CUDA driver found no GPU (cuDeviceGetCount returned 0)"
            _init_error = None if reason is None else f"{reason.rstrip('. ')}. {_NO_GPU_HINT}"
            _init_done = True
    if _init_error is not None:
        raise NoDriverError(_init_error)
    return _driver_module()


def gpu_available() -> bool:
    """True when the CUDA driver initialises (cuInit) and sees at least one GPU; never raises."""
    try:
        _ensure_driver()
        return True
    except Exception:
        return False


def no_gpu_reason() -> Optional[str]:
    """Why no GPU can be used (e.g. 'no CUDA driver (libcuda.so) found ...'), or None when one can."""
    try:
        _ensure_driver()
        return None
    except NoDriverError as e:
        return str(e)
    except Exception as e:  # report, never raise: callers use this to build skip reasons
        return f"{type(e).__name__}: {e}"


# ---------------------------------------------------------------------------------------------
# contexts

class Context:
    """A device's primary context (cuDevicePrimaryCtxRetain), with cached device attributes.

    Get one with get_context(device); it is made current (cuCtxSetCurrent) whenever ptxgen uses it.
    """

    def __init__(self, device: int = 0):
        d = _ensure_driver()
        if isinstance(device, bool) or not isinstance(device, int):
            raise UsageError(f"device must be an int ordinal, got {device!r}")
        count = check(d.cuDeviceGetCount(), "cuDeviceGetCount")
        if not 0 <= device < count:
            raise UsageError(f"no CUDA device {device}: {count} device(s) found (ordinals 0..{count - 1})")
        self.device = device
        self.cu_device = check(d.cuDeviceGet(device), "cuDeviceGet")
        self.handle = check(d.cuDevicePrimaryCtxRetain(self.cu_device), "cuDevicePrimaryCtxRetain")
        self._attrs: Dict[int, int] = {}
        self._name: Optional[str] = None
        self.make_current()

    def make_current(self) -> None:
        """cuCtxSetCurrent: bind this context to the calling thread (on every launch, so the success path
        skips `check`'s unpacking)."""
        res = _driver_module().cuCtxSetCurrent(self.handle)
        if res[0] != 0:
            check(res, "cuCtxSetCurrent")

    def attribute(self, attr) -> int:
        """cuDeviceGetAttribute(attr); values are fixed per device, so they are cached."""
        key = int(attr)
        if key not in self._attrs:
            self._attrs[key] = int(check(_driver_module().cuDeviceGetAttribute(attr, self.cu_device),
                                         "cuDeviceGetAttribute"))
        return self._attrs[key]

    def _attr(self, name: str) -> int:
        return self.attribute(getattr(_driver_module().CUdevice_attribute, name))

    @property
    def name(self) -> str:
        """cuDeviceGetName, e.g. 'NVIDIA H200'."""
        if self._name is None:
            raw = check(_driver_module().cuDeviceGetName(256, self.cu_device), "cuDeviceGetName")
            raw = raw if isinstance(raw, bytes) else bytes(raw)
            self._name = raw.split(b"\0", 1)[0].decode(errors="replace").strip()
        return self._name

    @property
    def compute_capability(self) -> Tuple[int, int]:
        return (self._attr("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR"),
                self._attr("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR"))

    @property
    def arch(self) -> str:
        """The ptxas target for exactly this device: 'sm_90a' on cc 9.0, 'sm_86' on cc 8.6.

        From sm_90 on, the arch-specific ('a') target is used: it runs only on this exact arch,
        which is the device in hand, and it unlocks wgmma, setmaxnreg and friends.
        """
        major, minor = self.compute_capability
        return f"sm_{major}{minor}" + ("a" if major >= 9 else "")

    @property
    def sm_count(self) -> int:
        return self._attr("CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT")

    @property
    def l2_bytes(self) -> int:
        """The L2 cache size in bytes (CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)."""
        return self._attr("CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE")

    @property
    def max_shared_per_block(self) -> int:
        return self._attr("CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK")

    @property
    def max_shared_per_block_optin(self) -> int:
        return self._attr("CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN")

    @property
    def max_threads_per_block(self) -> int:
        return self._attr("CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK")

    @property
    def total_memory(self) -> int:
        return int(check(_driver_module().cuDeviceTotalMem(self.cu_device), "cuDeviceTotalMem"))

    def synchronize(self) -> None:
        """cuCtxSynchronize: wait for all work; errors of earlier asynchronous launches surface here."""
        self.make_current()
        check(_driver_module().cuCtxSynchronize(), "cuCtxSynchronize")

    def __repr__(self) -> str:
        return f"<Context device={self.device}>"


def get_context(device: int = 0) -> Context:
    """The primary context of `device` (retained once per process, cached by ordinal), made current."""
    _ensure_driver()
    ctx = _CONTEXTS.get(device)
    if ctx is None:
        with _INIT_LOCK:
            ctx = _CONTEXTS.get(device)
            if ctx is None:
                ctx = _CONTEXTS[device] = Context(device)
                return ctx
    ctx.make_current()
    return ctx


def _context_for(context: Optional[Context], device: int) -> Context:
    if context is None:
        return get_context(device)
    if not isinstance(context, Context):
        raise UsageError(f"context must be a ptxgen.runtime.Context, got {type(context).__name__}")
    context.make_current()
    return context


# ---------------------------------------------------------------------------------------------
# modules and functions

_LOG_SIZE = 1 << 16
_ENTRY_RE = re.compile(r"\.entry\s+([A-Za-z_$%][\w$]*)")
# ptxas messages that mean "this toolkit is older than the PTX or the GPU", where the driver's
# own JIT may still succeed
_TOOLCHAIN_TOO_OLD = re.compile(r"is not defined for option 'gpu-name'|Unsupported \.version|"
                                r"not a supported|Unknown target", re.IGNORECASE)


def _as_ptx(ptx: Union[PtxText, str]) -> PtxText:
    if isinstance(ptx, PtxText):
        return ptx
    if isinstance(ptx, str):
        return PtxText(ptx)
    raise UsageError(f"ptx must be a PtxText or str, got {type(ptx).__name__}")


def _c_string(buf: bytearray) -> str:
    return bytes(buf).split(b"\0", 1)[0].decode("utf-8", errors="replace")


class Module:
    """A loaded CUmodule: from PTX through the driver's JIT (Module.load) or from a cubin (Module.load_cubin)."""

    def __init__(self, handle, context: Context, *, ptx: Optional[PtxText] = None, info_log: str = "",
                 via: str = "jit", assembly=None):
        self.handle = handle
        self.context = context
        self.ptx = ptx
        self.info_log = info_log
        self.via = via
        self.assembly = assembly  # the ptxas AssemblyResult when loaded from a cubin ptxgen built
        self._functions: Dict[str, Function] = {}
        diags: List[Diagnostic] = []
        if info_log and ptx is not None:
            _, diags = rewrite_log(info_log, ptx, "driver JIT")
        elif assembly is not None:
            diags = list(assembly.warnings)
        self.warnings: List[Diagnostic] = [x for x in diags if x.severity == "warning"]

    @property
    def resources(self):
        """Per-function ResourceUsage from the ptxas or verbose JIT report.

        Empty after a JIT load that the driver's compute cache answered: it then writes no info log.
        """
        from .ptxas import parse_resource_usage
        if self.assembly is not None:
            return self.assembly.resources
        return parse_resource_usage(self.info_log)

    @classmethod
    def load(cls, ptx: Union[PtxText, str], *, device: int = 0, context: Optional[Context] = None,
             opt_level: Optional[int] = None, max_registers: Optional[int] = None,
             log_size: int = _LOG_SIZE) -> "Module":
        """cuModuleLoadDataEx with CU_JIT_{ERROR,INFO}_LOG_BUFFER and CU_JIT_LOG_VERBOSE: JIT the PTX.

        On failure raises JitError whose text is the JIT's error log with each `line N` mapped to
        the user's Python line; the info log (verbose resource report) stays on `module.info_log`.
        """
        ptx = _as_ptx(ptx)
        ctx = _context_for(context, device)
        d = _driver_module()
        if isinstance(log_size, bool) or not isinstance(log_size, int) or log_size < 256:
            raise UsageError(f"log_size must be an int >= 256, got {log_size!r}")
        err_buf = bytearray(log_size)
        info_buf = bytearray(log_size)
        J = d.CUjit_option
        opts = [J.CU_JIT_ERROR_LOG_BUFFER, J.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                J.CU_JIT_INFO_LOG_BUFFER, J.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, J.CU_JIT_LOG_VERBOSE]
        vals: List[Any] = [err_buf, log_size, info_buf, log_size, 1]
        if opt_level is not None:
            if isinstance(opt_level, bool) or not isinstance(opt_level, int) or not 0 <= opt_level <= 4:
                raise UsageError(f"opt_level must be an int from 0 to 4 (CU_JIT_OPTIMIZATION_LEVEL), got {opt_level!r}")
            opts.append(J.CU_JIT_OPTIMIZATION_LEVEL)
            vals.append(opt_level)
        if max_registers is not None:
            if isinstance(max_registers, bool) or not isinstance(max_registers, int) or not 16 <= max_registers <= 255:
                raise UsageError(f"max_registers must be an int from 16 to 255, got {max_registers!r}")
            opts.append(J.CU_JIT_MAX_REGISTERS)
            vals.append(max_registers)
        # the driver reads PTX as a NUL-terminated C string
        image = ptx.text.encode("utf-8") + b"\0"
        res = d.cuModuleLoadDataEx(image, len(opts), opts, vals)
        err = res[0]
        if int(err) != 0:
            name = _error_name(err)
            log = _c_string(err_buf)
            mapped, diags = rewrite_log(log, ptx, "driver JIT")
            summary = f"the driver's JIT rejected {ptx.name}: {name}"
            if name == "CUDA_ERROR_UNSUPPORTED_PTX_VERSION":
                summary += (" (the PTX .version or .target is newer than this driver supports; "
                            "update the driver or lower .version)")
            raise JitError(summary, log=log, mapped=mapped, diagnostics=diags)
        return cls(res[1], ctx, ptx=ptx, info_log=_c_string(info_buf), via="jit")

    @classmethod
    def load_cubin(cls, cubin: bytes, *, device: int = 0, context: Optional[Context] = None,
                   ptx: Optional[PtxText] = None, assembly=None) -> "Module":
        """cuModuleLoadData on a cubin (no JIT)."""
        if not isinstance(cubin, (bytes, bytearray, memoryview)):
            raise UsageError(f"cubin must be bytes, got {type(cubin).__name__}")
        ctx = _context_for(context, device)
        d = _driver_module()
        try:
            handle = check(d.cuModuleLoadData(bytes(cubin)), "cuModuleLoadData")
        except CudaError as e:
            if e.result_name == "CUDA_ERROR_NO_BINARY_FOR_GPU":
                major, minor = ctx.compute_capability
                raise CudaError("cuModuleLoadData", e.result_name, e.result_code,
                                f"the cubin was built for another arch; this device is "
                                f"cc {major}.{minor} ({ctx.arch})") from None
            raise
        return cls(handle, ctx, ptx=ptx, via="cubin", assembly=assembly)

    def entry_names(self) -> List[str]:
        """The `.entry` names in the PTX this module came from (empty when loaded from a bare cubin)."""
        return _ENTRY_RE.findall(self.ptx.text) if self.ptx is not None else []

    def function(self, name: str) -> "Function":
        """cuModuleGetFunction: the kernel `name` (the PTX .entry name)."""
        if not isinstance(name, str):
            raise UsageError(f"kernel name must be a str, got {type(name).__name__}")
        f = self._functions.get(name)
        if f is not None:
            return f
        if self.handle is None:
            raise UsageError("this module was unloaded")
        self.context.make_current()
        try:
            handle = check(_driver_module().cuModuleGetFunction(self.handle, name.encode()), "cuModuleGetFunction")
        except CudaError as e:
            if e.result_name == "CUDA_ERROR_NOT_FOUND":
                names = self.entry_names()
                known = f"; its kernels are: {', '.join(names)}" if names else ""
                raise UsageError(f"no kernel named {name!r} in this module{known}") from None
            raise
        f = self._functions[name] = Function(self, name, handle)
        return f

    def unload(self) -> None:
        """cuModuleUnload; its functions cannot be launched afterwards."""
        if self.handle is not None:
            self.context.make_current()
            handle, self.handle = self.handle, None
            self._functions.clear()
            check(_driver_module().cuModuleUnload(handle), "cuModuleUnload")

    def __enter__(self) -> "Module":
        return self

    def __exit__(self, *exc) -> None:
        self.unload()

    def __repr__(self) -> str:
        name = self.ptx.name if self.ptx is not None else "cubin"
        return f"<Module {name} via {self.via}>"


# the opcode of a cp.async (not .bulk) with an L2 cache hint, at the start of an instruction
_HINTED_CP_ASYNC = re.compile(r"^[ \t]*(?:@!?%?[\w$.]+[ \t]+)?(cp\.async\.c[ag]\.[\w:.]*\.L2::cache_hint[\w:.]*)",
                              re.M)


def check_miscompiles(ptx: Union[PtxText, str], arch: str) -> None:
    """Raise LegalityError (code PTX-W-MISCOMPILE, at the PTX line and the Python line that built it) when
    the PTX holds an instruction that the toolchain miscompiles for `arch`, the GPU's target (see
    ptxgen.legality's CODE_MISCOMPILE): a module written for sm_80 still traps when it is compiled for an
    sm_90 GPU. load_module calls it unless check=False."""
    from . import legality
    from .target import Target
    ptx = _as_ptx(ptx)
    try:
        target = Target.parse(arch)
    except ValueError as e:
        raise TargetError(str(e)) from None
    for m in _HINTED_CP_ASYNC.finditer(ptx.text):
        diags = [d for d in legality.check(m.group(1), None, target) if d.code == legality.CODE_MISCOMPILE]
        if diags:
            line = ptx.text.count("\n", 0, m.start(1)) + 1
            d = diags[0]
            raise LegalityError(f"{ptx.name} line {line}: {d.message}", ptx.source_of(line), d.code,
                                d.notes + ("load_module(..., check=False) loads it anyway",))


def load_module(ptx: Union[PtxText, str], target: Optional[str] = None, use_ptxas: bool = True, *,
                device: int = 0, opt_level: Optional[int] = None, cache: bool = True, check: bool = True) -> Module:
    """Load PTX: assemble with ptxas for the device's arch and cuModuleLoadData the cubin, else JIT it.

    ptxas is used when found and `use_ptxas`; `target` defaults to the device's exact arch
    (Context.arch, e.g. sm_90a on cc 9.0). Falls back to the driver's JIT when ptxas is absent,
    too old for the PTX or the GPU, or its cubin does not load. A PTX error found by ptxas
    raises AssemblyError (mapped to the user's lines) rather than being retried by the JIT.
    With `check`, PTX that the toolchain is known to miscompile for this GPU (check_miscompiles) raises
    LegalityError instead of loading a kernel that would stop with an illegal instruction.
    """
    ptx = _as_ptx(ptx)
    ctx = get_context(device)
    if check:
        check_miscompiles(ptx, target or ctx.arch)
    if use_ptxas:
        from .ptxas import assemble, check_target, find_ptxas
        if find_ptxas() is not None:
            tgt: Optional[str]
            if target is not None:
                tgt = check_target(target)
            else:
                try:
                    tgt = check_target(ctx.arch)
                except TargetError:
                    tgt = None  # a device newer than ptxgen's target table: let the JIT handle it
            asm = None
            if tgt is not None:
                try:
                    asm = assemble(ptx, tgt, opt_level=opt_level, cache=cache)
                except AssemblyError as e:
                    if not _TOOLCHAIN_TOO_OLD.search(e.log):
                        raise
            if asm is not None:
                try:
                    return Module.load_cubin(asm.cubin, context=ctx, ptx=ptx, assembly=asm)
                except CudaError:
                    pass  # e.g. a cubin for another arch, or newer than the driver: the JIT decides
    return Module.load(ptx, context=ctx, opt_level=opt_level)


def _ptx_param_count(text: str, name: str) -> Optional[int]:
    """How many parameters the `.entry name(...)` of a PTX text declares; None when it is not found."""
    m = re.search(r"\.entry\s+" + re.escape(name) + r"\s*\(([^)]*)\)", text)
    if m is None:
        m = re.search(r"\.entry\s+" + re.escape(name) + r"\s*(?:\{|\.)", text)
        return 0 if m is not None else None
    return len(re.findall(r"\.param\b", m.group(1)))


class Function:
    """A kernel (CUfunction) of a loaded Module."""

    def __init__(self, module: Module, name: str, handle):
        self.module = module
        self.name = name
        self.handle = handle
        self._attrs: Dict[int, int] = {}
        self._param_sizes: Any = ...  # Ellipsis: not asked yet; None: the driver cannot say

    def attribute(self, attr) -> int:
        """cuFuncGetAttribute(attr)."""
        key = int(attr)
        if key not in self._attrs:
            self.module.context.make_current()
            self._attrs[key] = int(check(_driver_module().cuFuncGetAttribute(attr, self.handle),
                                         "cuFuncGetAttribute"))
        return self._attrs[key]

    def set_attribute(self, attr, value: int) -> None:
        """cuFuncSetAttribute(attr, value)."""
        self.module.context.make_current()
        check(_driver_module().cuFuncSetAttribute(self.handle, attr, int(value)), "cuFuncSetAttribute")
        self._attrs.clear()  # one attribute can change others (e.g. the shared-memory carveout)

    def _attr(self, name: str) -> int:
        return self.attribute(getattr(_driver_module().CUfunction_attribute, name))

    @property
    def num_regs(self) -> int:
        return self._attr("CU_FUNC_ATTRIBUTE_NUM_REGS")

    @property
    def max_threads_per_block(self) -> int:
        return self._attr("CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK")

    @property
    def static_shared_bytes(self) -> int:
        return self._attr("CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES")

    @property
    def max_dynamic_shared_bytes(self) -> int:
        return self._attr("CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES")

    @property
    def local_bytes(self) -> int:
        return self._attr("CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES")

    @property
    def const_bytes(self) -> int:
        return self._attr("CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES")

    @property
    def ptx_version(self) -> int:
        return self._attr("CU_FUNC_ATTRIBUTE_PTX_VERSION")

    @property
    def binary_version(self) -> int:
        return self._attr("CU_FUNC_ATTRIBUTE_BINARY_VERSION")

    def set_max_dynamic_shared(self, nbytes: int) -> None:
        """cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES): allow > 48 KB dynamic shared.

        Raises LaunchConfigError when `nbytes` plus the kernel's static shared memory is above the
        device's opt-in limit (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN).
        """
        if isinstance(nbytes, bool) or not isinstance(nbytes, (int, np.integer)) or nbytes < 0:
            raise LaunchConfigError(f"dynamic shared memory size must be an int >= 0, got {nbytes!r}")
        nbytes = int(nbytes)
        limit = self.module.context.max_shared_per_block_optin
        static = self.static_shared_bytes
        if nbytes + static > limit:
            raise LaunchConfigError(
                f"kernel '{self.name}': {nbytes} bytes of dynamic shared memory"
                + (f" plus {static} bytes of static shared memory" if static else "")
                + f" exceed this device's opt-in limit of {limit} bytes per block"
                + f" (at most {max(limit - static, 0)} bytes of dynamic shared memory)")
        self.set_attribute(_driver_module().CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                           nbytes)

    def param_sizes(self) -> Optional[List[int]]:
        """The byte size of each kernel parameter (cuFuncGetParamCount/cuFuncGetParamInfo); None if unknown.

        Used to check launch arguments; older drivers lack these calls, and then no check is made.
        """
        if self._param_sizes is ...:
            d = _driver_module()
            self.module.context.make_current()
            try:
                sizes: Optional[List[int]] = self._param_sizes_from_driver(d)
            except Exception:  # not supported by this driver/bindings: launch without the check
                sizes = None
            self._param_sizes = sizes
        return self._param_sizes

    def _param_sizes_from_driver(self, d) -> Optional[List[int]]:
        try:
            n: Optional[int] = int(check(d.cuFuncGetParamCount(self.handle), "cuFuncGetParamCount"))
        except RuntimeError:
            # A driver older than cuFuncGetParamCount: take the count from the PTX when we have it.
            # Probing cuFuncGetParamInfo past the end would also work, but every probe is a failed
            # API call that compute-sanitizer reports as an error.
            n = _ptx_param_count(self.module.ptx.text, self.name) if self.module.ptx is not None else None
        if n is None:
            return None
        sizes: List[int] = []
        for i in range(n):
            _, size = check(d.cuFuncGetParamInfo(self.handle, i), "cuFuncGetParamInfo")
            sizes.append(int(size))
        return sizes

    def launch(self, grid: DimsLike, block: DimsLike, args: Sequence[Any] = (), shared_bytes: int = 0,
               stream=None, cluster: Optional[DimsLike] = None, pdl: bool = False) -> None:
        """Launch this kernel; see `launch`."""
        launch(self, grid, block, args, shared_bytes=shared_bytes, stream=stream, cluster=cluster, pdl=pdl)

    def bind(self, grid: DimsLike, block: DimsLike, args: Sequence[Any] = (), shared_bytes: int = 0,
             cluster: Optional[DimsLike] = None, pdl: bool = False) -> "BoundLaunch":
        """This launch checked and packed once: the BoundLaunch's call issues it (see BoundLaunch)."""
        return BoundLaunch(self, grid, block, args, shared_bytes=shared_bytes, cluster=cluster, pdl=pdl)

    def allow_nonportable_clusters(self) -> None:
        """cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1): clusters of more than
        the 8 CTAs every device takes (16 on sm_90); max_active_clusters says how many fit."""
        self.set_attribute(_driver_module().CUfunction_attribute.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1)

    def max_active_clusters(self, cluster: DimsLike, block: DimsLike, shared_bytes: int = 0) -> int:
        """cuOccupancyMaxActiveClusters: how many clusters of this shape can be resident on the device at
        once (a persistent kernel launches no more than this many, or the rest wait for a second wave)."""
        _, b, c = validate_launch_config(cluster, block, shared_bytes, cluster)
        d = _driver_module()
        self.module.context.make_current()
        config = d.CUlaunchConfig()
        config.gridDimX, config.gridDimY, config.gridDimZ = c   # one cluster's worth of blocks
        config.blockDimX, config.blockDimY, config.blockDimZ = b
        config.sharedMemBytes = int(shared_bytes)
        attrs = _launch_attributes(d, c, False)
        config.attrs = attrs
        config.numAttrs = len(attrs)
        return int(check(d.cuOccupancyMaxActiveClusters(self.handle, config), "cuOccupancyMaxActiveClusters"))

    def __repr__(self) -> str:
        return f"<Function {self.name}>"


# ---------------------------------------------------------------------------------------------
# launch configuration (pure: no driver needed)

_BLOCK_MAX = (1024, 1024, 64)
_GRID_MAX = (2**31 - 1, 65535, 65535)
_MAX_THREADS = 1024


def normalize_dims(what: str, value: DimsLike) -> Dim3:
    """An int or a 1-3 element sequence of positive ints -> (x, y, z); LaunchConfigError otherwise."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        dims = [int(value)]
    elif isinstance(value, (tuple, list)):
        dims = list(value)
    else:
        raise LaunchConfigError(f"{what} must be an int or a tuple of 1 to 3 ints, got {value!r}")
    if not 1 <= len(dims) <= 3:
        raise LaunchConfigError(f"{what} must have 1 to 3 dimensions, got {len(dims)}: {value!r}")
    for v in dims:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise LaunchConfigError(f"{what} dimensions must be ints, got {v!r} in {value!r}")
        if v <= 0:
            raise LaunchConfigError(f"{what} dimensions must be > 0, got {tuple(value) if not isinstance(value, int) else value}")
    dims = [int(v) for v in dims] + [1] * (3 - len(dims))
    return (dims[0], dims[1], dims[2])


def validate_launch_config(grid: DimsLike, block: DimsLike, shared_bytes: int = 0,
                           cluster: Optional[DimsLike] = None) -> Tuple[Dim3, Dim3, Optional[Dim3]]:
    """Check grid/block/cluster/shared sizes against CUDA's fixed limits; return normalised dims."""
    g = normalize_dims("grid", grid)
    b = normalize_dims("block", block)
    for axis, v, lim in zip("xyz", b, _BLOCK_MAX):
        if v > lim:
            raise LaunchConfigError(f"block.{axis} = {v} is above CUDA's limit of {lim}")
    threads = b[0] * b[1] * b[2]
    if threads > _MAX_THREADS:
        raise LaunchConfigError(f"block {b} has {threads} threads; a block holds at most {_MAX_THREADS}")
    for axis, v, lim in zip("xyz", g, _GRID_MAX):
        if v > lim:
            raise LaunchConfigError(f"grid.{axis} = {v} is above CUDA's limit of {lim}")
    if isinstance(shared_bytes, bool) or not isinstance(shared_bytes, (int, np.integer)) or shared_bytes < 0:
        raise LaunchConfigError(f"shared_bytes must be an int >= 0, got {shared_bytes!r}")
    c = None
    if cluster is not None:
        c = normalize_dims("cluster", cluster)
        for axis, gv, cv in zip("xyz", g, c):
            if gv % cv:
                raise LaunchConfigError(f"grid {g} is not a whole number of clusters {c}: "
                                        f"grid.{axis} = {gv} is not a multiple of cluster.{axis} = {cv}")
    return g, b, c


# ---------------------------------------------------------------------------------------------
# argument packing (pure: no driver needed)

@dataclass
class PackedArgs:
    """Kernel arguments laid out for cuLaunchKernel: `address` is the void** array (0 when no args)."""

    blobs: List[bytes]
    _buffers: List[Any]
    _array: Any
    address: int


# DLPack device types that the GPU can address: kDLCUDA, kDLCUDAHost (pinned), kDLCUDAManaged
_DLPACK_GPU_TYPES = {2: "CUDA", 3: "CUDA host (pinned)", 13: "CUDA managed"}
_DLPACK_NAMES = {1: "CPU", 2: "CUDA", 3: "CUDA host", 4: "OpenCL", 7: "Vulkan", 8: "Metal", 10: "ROCm",
                 13: "CUDA managed", 14: "oneAPI"}


def _dlpack_pointer(obj, index: int) -> int:
    """The device address of a DLPack tensor, read from its capsule without copying."""
    try:
        dev_type, _dev_id = obj.__dlpack_device__()
    except Exception as e:
        raise LaunchConfigError(f"argument {index}: __dlpack_device__() failed: {e}") from None
    if int(dev_type) not in _DLPACK_GPU_TYPES:
        where = _DLPACK_NAMES.get(int(dev_type), f"device type {int(dev_type)}")
        raise LaunchConfigError(
            f"argument {index} ({type(obj).__name__}) lives in {where} memory; a kernel needs GPU memory: "
            "move it to the GPU first (e.g. DeviceBuffer.from_numpy(...) or tensor.cuda())")
    try:
        capsule = obj.__dlpack__()
    except Exception as e:
        raise LaunchConfigError(f"argument {index}: __dlpack__() failed: {e}") from None
    api = ctypes.pythonapi
    api.PyCapsule_GetName.restype = ctypes.c_char_p
    api.PyCapsule_GetName.argtypes = [ctypes.py_object]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    name = api.PyCapsule_GetName(capsule)
    if name == b"dltensor":
        tensor = api.PyCapsule_GetPointer(capsule, name)  # DLManagedTensor starts with its DLTensor
    elif name == b"dltensor_versioned":
        # DLManagedTensorVersioned: version (8), manager_ctx (8), deleter (8), flags (8), then DLTensor
        tensor = api.PyCapsule_GetPointer(capsule, name) + 32
    else:
        raise LaunchConfigError(f"argument {index}: __dlpack__() returned a capsule named {name!r}, "
                                "not a DLPack tensor")
    # DLTensor: void* data @0, DLDevice @8, int32 ndim @16, DLDataType @20, shape @24, strides @32,
    # uint64 byte_offset @40. The capsule is left unconsumed, so its deleter runs when it is
    # collected; the memory stays owned by `obj`, which the caller holds.
    data = ctypes.c_uint64.from_address(tensor).value
    offset = ctypes.c_uint64.from_address(tensor + 40).value
    return data + offset


def _suggest(size: int) -> str:
    return {1: "np.int8 / np.uint8", 2: "np.int16 / np.uint16 / np.float16",
            4: "np.int32 / np.uint32 / np.float32",
            8: "np.int64 / np.uint64 / np.float64, or a DeviceBuffer / device array for a pointer"}.get(
        size, f"a {size}-byte bytes object or uint8 array (a by-value struct)")


def _cuda_binding_types():
    try:
        from cuda.bindings import driver
    except ImportError:
        return None, None
    return getattr(driver, "CUdeviceptr", None), getattr(driver, "CUtensorMap", None)


def _arg_bytes(x: Any, index: int) -> Tuple[bytes, Callable[[], str]]:
    """The bytes one kernel argument contributes, and a callable that describes it for messages (built
    only when a message needs it: numpy's dtype.name alone costs microseconds on every launch)."""
    if isinstance(x, np.generic):  # before `float`: np.float64 is a subclass of Python float
        if x.dtype.kind == "O":
            raise LaunchConfigError(f"argument {index} is a numpy object scalar; pass a numeric numpy scalar")
        return x.tobytes(), lambda: f"np.{x.dtype.name}"
    if isinstance(x, (bool, int, float, complex)):
        kind = type(x).__name__
        raise LaunchConfigError(
            f"argument {index} is a Python {kind} ({x!r}); its PTX size is unknown, so wrap it in the "
            f"type of the kernel's .param: np.int32({x!r}), np.uint32, np.int64, np.uint64, np.float32({x!r}), "
            "np.float64 ...")
    if isinstance(x, DeviceBuffer):
        return struct.pack("<Q", x.ptr), lambda: "a DeviceBuffer pointer"
    try:
        cai = getattr(x, "__cuda_array_interface__", None)
    except (TypeError, AttributeError, RuntimeError):
        # torch raises for dtypes the interface cannot spell (bfloat16); DLPack below still works
        cai = None
    if cai is not None:
        try:
            ptr = int(cai["data"][0] or 0)
        except (KeyError, TypeError, IndexError, ValueError):
            raise LaunchConfigError(f"argument {index}: malformed __cuda_array_interface__ {cai!r}") from None
        return struct.pack("<Q", ptr), lambda: f"a device pointer ({type(x).__name__})"
    if isinstance(x, np.ndarray):
        if x.ndim == 0:
            return x.tobytes(), lambda: f"a 0-d np.{x.dtype.name} array"
        if x.dtype == np.uint8:
            return np.ascontiguousarray(x).tobytes(), lambda: f"a {x.nbytes}-byte uint8 array"
        raise LaunchConfigError(
            f"argument {index} is a host numpy array of {x.dtype} {x.shape}; a kernel takes device "
            "pointers: copy it with DeviceBuffer.from_numpy(arr) (pass a by-value struct as bytes or a uint8 array)")
    if hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__"):
        return struct.pack("<Q", _dlpack_pointer(x, index)), lambda: f"a device pointer ({type(x).__name__})"
    if isinstance(x, (bytes, bytearray, memoryview)):
        b = bytes(x)
        return b, lambda: f"a {len(b)}-byte blob"
    from .tma import TensorMap
    if isinstance(x, TensorMap):
        return x.raw, lambda: "a TensorMap (128 bytes)"
    if isinstance(x, (ctypes._SimpleCData, ctypes.Structure, ctypes.Union, ctypes.Array)):
        b = bytes(x)
        return b, lambda: f"a {len(b)}-byte ctypes {type(x).__name__}"
    cu_ptr, cu_tmap = _cuda_binding_types()
    if cu_ptr is not None and isinstance(x, cu_ptr):
        return struct.pack("<Q", int(x)), lambda: "a CUdeviceptr"
    if cu_tmap is not None and isinstance(x, cu_tmap):
        return ctypes.string_at(x.getPtr(), 128), lambda: "a CUtensorMap (128 bytes)"
    raise LaunchConfigError(
        f"argument {index} has type {type(x).__name__}, which cannot be passed to a kernel; pass numpy "
        "scalars (np.int32, np.float32 ...), DeviceBuffer or device arrays for pointers, and bytes / "
        "uint8 arrays / ctypes structs for by-value structs")


def pack_args(args: Sequence[Any], param_sizes: Optional[Sequence[int]] = None,
              kernel: str = "kernel") -> PackedArgs:
    """Lay out kernel arguments as the void** array cuLaunchKernel reads (pure: no driver call).

    With `param_sizes` (from Function.param_sizes) the count and each size are checked, so a
    np.float64 for a .f32 parameter is an error rather than a corrupt launch.
    """
    if isinstance(args, (str, bytes)) or not isinstance(args, (list, tuple)):
        raise LaunchConfigError(f"args must be a list or tuple of kernel arguments, got {type(args).__name__}")
    blobs: List[bytes] = []
    for i, a in enumerate(args):
        b, desc = _arg_bytes(a, i)
        if param_sizes is not None and i < len(param_sizes) and len(b) != param_sizes[i]:
            raise LaunchConfigError(
                f"argument {i} of '{kernel}': the kernel's parameter is {param_sizes[i]} bytes but "
                f"{desc()} is {len(b)} bytes; pass {_suggest(param_sizes[i])}")
        blobs.append(b)
    if param_sizes is not None and len(blobs) != len(param_sizes):
        raise LaunchConfigError(f"'{kernel}' takes {len(param_sizes)} parameter(s), {len(blobs)} given "
                                f"(sizes in bytes: {list(param_sizes)})")
    if not blobs:
        return PackedArgs([], [], None, 0)
    # one zeroed buffer, a slot per argument at an 8-byte aligned offset, at least 8 bytes each: a
    # driver reading a wider parameter than given (when sizes are unknown) then reads zeros, never
    # past the buffer
    slots = [b.ljust((max(len(b), 8) + 7) & ~7, b"\0") for b in blobs]
    buf = ctypes.create_string_buffer(b"".join(slots))
    addr, offsets = ctypes.addressof(buf), []
    for sl in slots:
        offsets.append(addr)
        addr += len(sl)
    array = (ctypes.c_void_p * len(blobs))(*offsets)
    return PackedArgs(blobs, [buf], array, ctypes.addressof(array))


def _stream_handle(stream):
    d = _driver_module()
    if stream is None:
        return d.CUstream(0)
    if isinstance(stream, d.CUstream):
        return stream
    if isinstance(stream, (int, np.integer)) and not isinstance(stream, bool):
        return d.CUstream(int(stream))
    proto = getattr(stream, "__cuda_stream__", None)
    if proto is not None:
        info = proto() if callable(proto) else proto
        return d.CUstream(int(info[1]))
    handle = getattr(stream, "cuda_stream", None)  # torch.cuda.Stream
    if handle is not None:
        return d.CUstream(int(handle))
    raise LaunchConfigError(f"stream must be None, an int handle, a CUstream or an object with "
                            f"__cuda_stream__, got {type(stream).__name__}")


def _make_current(func: Function) -> None:
    """Make the function's context current; LaunchConfigError if its module was unloaded."""
    func.module.context.make_current()
    if func.module.handle is None:
        raise LaunchConfigError(f"kernel '{func.name}' belongs to a module that was unloaded")


def _register_limit_reason(func: Function, threads: int) -> str:
    """Why a block of `threads` threads is too big for the kernel's registers ("" when they are not the reason):
    one sub-partition's register file must hold all of that sub-partition's warps (ptxgen.target)."""
    regs = func.num_regs
    if not 1 <= regs <= MAX_REGISTERS_PER_THREAD or regs <= max_regs_for_threads(threads):
        return ""
    if func.module.context.compute_capability[0] * 10 < REGISTER_RULE_MIN_SM:
        return ""
    warps = -(-threads // WARP_THREADS)
    most = max_regs_for_threads(threads)
    return (f"; at {regs} registers a thread: {warps} warps put {warps_per_subpartition(threads)} on one of the "
            f"SM's {SUBPARTITIONS_WORD} {REGISTERS_PER_SUBPARTITION}-register sub-partitions, which allows at "
            f"most {most} registers a thread for {threads} threads; lower .maxnreg to {most}")


def _prepare_launch(func: Function, grid: DimsLike, block: DimsLike, args: Sequence[Any], shared_bytes: int,
                    cluster: Optional[DimsLike]):
    """Every check a launch makes and its packed arguments: (grid, block, cluster, shared_bytes, PackedArgs).
    Leaves the function's context current."""
    if not isinstance(func, Function):
        raise LaunchConfigError(f"func must be a Function (module.function(name)), got {type(func).__name__}")
    g, b, c = validate_launch_config(grid, block, shared_bytes, cluster)
    shared_bytes = int(shared_bytes)
    _make_current(func)
    threads = b[0] * b[1] * b[2]
    if threads > func.max_threads_per_block:
        raise LaunchConfigError(
            f"kernel '{func.name}' can run at most {func.max_threads_per_block} threads per block "
            f"({func.num_regs} registers per thread, or its .maxntid), but block {b} has {threads}"
            + _register_limit_reason(func, threads))
    # checked here because the driver's own answer is a bare CUDA_ERROR_INVALID_VALUE
    if shared_bytes and shared_bytes > func.max_dynamic_shared_bytes:
        raise LaunchConfigError(
            f"kernel '{func.name}' is allowed {func.max_dynamic_shared_bytes} bytes of dynamic shared memory, "
            f"{shared_bytes} asked; call function.set_max_dynamic_shared({shared_bytes}) first")
    return g, b, c, shared_bytes, pack_args(args, func.param_sizes(), func.name)


def _launch_attributes(d, cluster: Optional[Dim3], pdl: bool) -> list:
    """The CUlaunchAttribute list of a cuLaunchKernelEx: the cluster dimension, and programmatic stream
    serialization (PDL) when asked for."""
    attrs = []
    if cluster is not None:
        attr = d.CUlaunchAttribute()
        attr.id = d.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        attr.value.clusterDim.x, attr.value.clusterDim.y, attr.value.clusterDim.z = cluster
        attrs.append(attr)
    if pdl:
        attr = d.CUlaunchAttribute()
        attr.id = d.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
        attr.value.programmaticStreamSerializationAllowed = 1
        attrs.append(attr)
    return attrs


def _launch_config(d, g: Dim3, b: Dim3, c: Optional[Dim3], shared_bytes: int, h_stream, pdl: bool):
    """The CUlaunchConfig of a cuLaunchKernelEx, with its attribute list (which must outlive the config)."""
    config = d.CUlaunchConfig()
    config.gridDimX, config.gridDimY, config.gridDimZ = g
    config.blockDimX, config.blockDimY, config.blockDimZ = b
    config.sharedMemBytes = shared_bytes
    config.hStream = h_stream
    attrs = _launch_attributes(d, c, pdl)
    config.attrs = attrs
    config.numAttrs = len(attrs)
    return config, attrs


def _issue_launch(func: Function, g: Dim3, b: Dim3, c: Optional[Dim3], shared_bytes: int, packed: PackedArgs,
                  stream, pdl: bool = False, config=None) -> None:
    """cuLaunchKernel (cuLaunchKernelEx with a cluster dimension or PDL) of a prepared launch; the
    function's context must be current. `config`: the launch's CUlaunchConfig from `_launch_config`, built
    before (a BoundLaunch's), whose stream is set to `stream` here."""
    d = _driver_module()
    h_stream = _stream_handle(stream)
    if c is None and not pdl:
        res = d.cuLaunchKernel(func.handle, g[0], g[1], g[2], b[0], b[1], b[2], shared_bytes, h_stream,
                               packed.address, 0)
        name = "cuLaunchKernel"
    else:
        if config is None:
            config, _attrs = _launch_config(d, g, b, c, shared_bytes, h_stream, pdl)
        else:
            config.hStream = h_stream
        res = d.cuLaunchKernelEx(config, func.handle, packed.address, 0)
        name = "cuLaunchKernelEx"
    if res[0] != 0:
        check(res, name)


def launch(func: Function, grid: DimsLike, block: DimsLike, args: Sequence[Any] = (), shared_bytes: int = 0,
           stream=None, cluster: Optional[DimsLike] = None, pdl: bool = False) -> None:
    """cuLaunchKernel, or cuLaunchKernelEx with CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION when `cluster` is given.

    pdl=True launches with programmatic stream serialization (CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_
    SERIALIZATION): the kernel may start before the previous kernel in the stream has finished, once
    that kernel's CTAs have all executed `griddepcontrol.launch_dependents` or exited. The kernel must
    then execute `griddepcontrol.wait` before it touches memory the previous kernel writes or reads.

    Asynchronous: errors inside the kernel surface at the next synchronize(). Arguments: see pack_args.
    A launch repeated with the same arguments can skip the checks and the packing: Function.bind.
    """
    _issue_launch(func, *_prepare_launch(func, grid, block, args, shared_bytes, cluster), stream, bool(pdl))


class BoundLaunch:
    """One kernel launch whose configuration is checked and whose arguments are packed once
    (`Function.bind`); each call issues it again on `stream` (default: the legacy default stream) with
    no per-call Python work beyond making the context current, for kernels short enough that the
    checks and the packing of `launch` would cost as much as the kernel.

    The driver calls' arguments are built once too (for cuLaunchKernelEx, its CUlaunchConfig and
    attributes), as is the default stream's handle: each of them costs about a microsecond of Python a
    call, and a launch of a small kernel from Python is bound by the host's time per call (bench/LOG.md
    round 29: 18 us a call with the configuration built each time, against a 8 us kernel).

    It holds on to `args`, so the Python objects stay alive; the device memory their pointers name
    must stay allocated, and hold the same data layout, for as long as the launch may be issued."""

    def __init__(self, func: Function, grid: DimsLike, block: DimsLike, args: Sequence[Any] = (),
                 shared_bytes: int = 0, cluster: Optional[DimsLike] = None, pdl: bool = False):
        self.func = func
        self.grid, self.block, self.cluster, self.shared_bytes, self._packed = _prepare_launch(
            func, grid, block, args, shared_bytes, cluster)
        self.args = tuple(args)
        self.pdl = bool(pdl)
        self._default_stream = _stream_handle(None)
        self._config = self._attrs = None                # (the attributes must outlive the config)
        if self.cluster is not None or self.pdl:
            self._config, self._attrs = _launch_config(_driver_module(), self.grid, self.block, self.cluster,
                                                       self.shared_bytes, self._default_stream, self.pdl)

    def __call__(self, stream=None) -> None:
        _make_current(self.func)
        _issue_launch(self.func, self.grid, self.block, self.cluster, self.shared_bytes, self._packed,
                      self._default_stream if stream is None else stream, self.pdl, self._config)

    def __repr__(self) -> str:
        return (f"<BoundLaunch {self.func.name} grid={self.grid} block={self.block} shared={self.shared_bytes}"
                + (f" cluster={self.cluster}" if self.cluster else "") + (" pdl" if self.pdl else "") + ">")


# ---------------------------------------------------------------------------------------------
# memory

def _shape_tuple(shape) -> Tuple[int, ...]:
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (int(shape),)
    if not isinstance(shape, (tuple, list)) or not all(
            isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s >= 0 for s in shape):
        raise DeviceBufferError(f"shape must be an int or a tuple of ints >= 0, got {shape!r}")
    return tuple(int(s) for s in shape)


class DeviceBuffer:
    """Global memory from cuMemAlloc, with an optional shape/dtype for to_numpy and __cuda_array_interface__."""

    def __init__(self, ptr: int, nbytes: int, context: Context, shape: Optional[Tuple[int, ...]] = None,
                 dtype: Optional[np.dtype] = None, owned: bool = True):
        self._ptr = int(ptr)
        self._nbytes = int(nbytes)
        self.context = context
        self.shape = shape
        self.dtype = dtype
        self._owned = owned
        self._freed = False

    @classmethod
    def empty(cls, size, dtype=None, *, device: int = 0, context: Optional[Context] = None) -> "DeviceBuffer":
        """cuMemAlloc: `empty(nbytes)` or `empty(shape, dtype)`; contents are undefined."""
        if dtype is None:
            if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
                raise DeviceBufferError(f"size must be a byte count >= 0 (or pass shape and dtype), got {size!r}")
            shape, dt, nbytes = None, None, int(size)
        else:
            shape = _shape_tuple(size)
            try:
                dt = np.dtype(dtype)
            except TypeError as e:
                raise DeviceBufferError(f"bad dtype {dtype!r}: {e}") from None
            nbytes = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
        ctx = _context_for(context, device)
        ptr = 0
        if nbytes:
            ptr = int(check(_driver_module().cuMemAlloc(nbytes), "cuMemAlloc"))
        return cls(ptr, nbytes, ctx, shape, dt)

    @classmethod
    def zeros(cls, size, dtype=None, *, device: int = 0, context: Optional[Context] = None) -> "DeviceBuffer":
        """cuMemAlloc + cuMemsetD8(0)."""
        buf = cls.empty(size, dtype, device=device, context=context)
        buf.fill_bytes(0)
        return buf

    @classmethod
    def from_numpy(cls, arr, *, device: int = 0, context: Optional[Context] = None) -> "DeviceBuffer":
        """cuMemAlloc + cuMemcpyHtoD of a (made contiguous) copy of `arr`; keeps its shape and dtype."""
        a = np.ascontiguousarray(arr)
        if a.dtype.kind == "O":
            raise DeviceBufferError("cannot copy an object array to the GPU")
        buf = cls.empty(a.shape, a.dtype, device=device, context=context)
        buf.copy_from(a)
        return buf

    def _live(self) -> None:
        if self._freed:
            raise DeviceBufferError("this DeviceBuffer was freed")

    @property
    def ptr(self) -> int:
        """The device address (CUdeviceptr as int)."""
        self._live()
        return self._ptr

    @property
    def nbytes(self) -> int:
        return self._nbytes

    def copy_from(self, arr) -> None:
        """cuMemcpyHtoD from a host array or bytes (at most nbytes; a shorter copy fills the start)."""
        self._live()
        if isinstance(arr, (bytes, bytearray, memoryview)):
            a = np.frombuffer(bytes(arr), dtype=np.uint8)
        else:
            a = np.ascontiguousarray(arr)
        if a.nbytes > self._nbytes:
            raise DeviceBufferError(f"cannot copy {a.nbytes} bytes into a {self._nbytes}-byte DeviceBuffer")
        if a.nbytes:
            self.context.make_current()
            check(_driver_module().cuMemcpyHtoD(self._ptr, a.ctypes.data, a.nbytes), "cuMemcpyHtoD")

    def to_numpy(self, shape=None, dtype=None) -> np.ndarray:
        """cuMemcpyDtoH into a new array: `shape`/`dtype` default to the buffer's own, else flat uint8."""
        self._live()
        dt = np.dtype(dtype) if dtype is not None else (self.dtype if self.dtype is not None else np.dtype(np.uint8))
        if shape is None:
            if dtype is None and self.shape is not None:
                shp = self.shape
            else:
                if self._nbytes % dt.itemsize:
                    raise DeviceBufferError(f"{self._nbytes} bytes is not a whole number of {dt} items; pass shape=")
                shp = (self._nbytes // dt.itemsize,)
        else:
            shp = _shape_tuple(shape)
        out = np.empty(shp, dtype=dt)
        if out.nbytes > self._nbytes:
            raise DeviceBufferError(f"shape {shp} of {dt} needs {out.nbytes} bytes; the buffer holds {self._nbytes}")
        if out.nbytes:
            self.context.make_current()
            check(_driver_module().cuMemcpyDtoH(out.ctypes.data, self._ptr, out.nbytes), "cuMemcpyDtoH")
        return out

    def fill_bytes(self, byte: int) -> None:
        """cuMemsetD8: set every byte (e.g. 0xFF to poison an output before a kernel writes it)."""
        self._live()
        if isinstance(byte, bool) or not isinstance(byte, (int, np.integer)) or not 0 <= byte <= 255:
            raise DeviceBufferError(f"fill byte must be an int from 0 to 255, got {byte!r}")
        if self._nbytes:
            self.context.make_current()
            check(_driver_module().cuMemsetD8(self._ptr, int(byte), self._nbytes), "cuMemsetD8")

    def free(self) -> None:
        """cuMemFree (idempotent)."""
        if self._freed:
            return
        self._freed = True
        if self._owned and self._ptr:
            self.context.make_current()
            check(_driver_module().cuMemFree(self._ptr), "cuMemFree")

    def __enter__(self) -> "DeviceBuffer":
        return self

    def __exit__(self, *exc) -> None:
        self.free()

    def __del__(self):
        try:
            self.free()
        except Exception:  # at interpreter exit the driver may already be gone; nothing to report to
            pass

    @property
    def __cuda_array_interface__(self) -> dict:
        self._live()
        if self.shape is not None and self.dtype is not None:
            shape, typestr = self.shape, self.dtype.str
        else:
            shape, typestr = (self._nbytes,), "|u1"
        return {"shape": tuple(shape), "typestr": typestr, "data": (self._ptr, False), "strides": None,
                "version": 3}

    def __repr__(self) -> str:
        state = "freed" if self._freed else hex(self._ptr)
        return f"<DeviceBuffer {state} {self._nbytes} bytes>"


# ---------------------------------------------------------------------------------------------
# events, timing, synchronisation

class Event:
    """A CUevent (cuEventCreate) for timing work on a stream."""

    def __init__(self, *, timing: bool = True, device: int = 0, context: Optional[Context] = None):
        self.context = _context_for(context, device)
        d = _driver_module()
        flags = d.CUevent_flags.CU_EVENT_DEFAULT if timing else d.CUevent_flags.CU_EVENT_DISABLE_TIMING
        self.handle = check(d.cuEventCreate(int(flags)), "cuEventCreate")

    def record(self, stream=None) -> None:
        """cuEventRecord on `stream` (default: the legacy default stream)."""
        check(_driver_module().cuEventRecord(self.handle, _stream_handle(stream)), "cuEventRecord")

    def synchronize(self) -> None:
        """cuEventSynchronize."""
        check(_driver_module().cuEventSynchronize(self.handle), "cuEventSynchronize")

    def elapsed_ms(self, end: "Event") -> float:
        """cuEventElapsedTime(self, end) in milliseconds."""
        return float(check(_driver_module().cuEventElapsedTime(self.handle, end.handle), "cuEventElapsedTime"))

    def destroy(self) -> None:
        """cuEventDestroy (idempotent)."""
        if self.handle is not None:
            handle, self.handle = self.handle, None
            check(_driver_module().cuEventDestroy(handle), "cuEventDestroy")

    def __del__(self):
        try:
            self.destroy()
        except Exception:  # as DeviceBuffer.__del__
            pass


# ---------------------------------------------------------------------------------------------
# CUDA graphs: launches recorded once, replayed with one driver call

class Graph:
    """An instantiated CUDA graph (cuGraphExec) of the work a `capture` recorded. Each call replays all of
    it on `stream` with one cuGraphLaunch, so a batch of small kernels costs one call's host time
    instead of one per kernel (a bound launch from Python takes about 6 µs of host time, bench/LOG.md
    round 29; a GEMM of 10 µs waits on it). The launches replay with the arguments they were recorded
    with: the same buffers, the same sizes. `nodes`: the graph's nodes (one a kernel launch)."""

    def __init__(self, context: Context, graph, exec_, nodes: int):
        self.context, self._graph, self._exec, self.nodes = context, graph, exec_, nodes

    def __call__(self, stream=None) -> None:
        """cuGraphLaunch on `stream` (default: the legacy default stream)."""
        if self._exec is None:
            raise UsageError("this Graph was closed; capture the work again")
        self.context.make_current()
        check(_driver_module().cuGraphLaunch(self._exec, _stream_handle(stream)), "cuGraphLaunch")

    def close(self) -> None:
        """cuGraphExecDestroy and cuGraphDestroy (idempotent)."""
        d = _driver_module()
        if self._exec is not None:
            exec_, self._exec = self._exec, None
            check(d.cuGraphExecDestroy(exec_), "cuGraphExecDestroy")
        if self._graph is not None:
            graph, self._graph = self._graph, None
            check(d.cuGraphDestroy(graph), "cuGraphDestroy")

    def __del__(self):
        try:
            self.close()
        except Exception:  # as DeviceBuffer.__del__
            pass

    def __repr__(self) -> str:
        return f"<Graph of {self.nodes} node{'s' if self.nodes != 1 else ''}{' (closed)' if self._exec is None else ''}>"


class capture:
    """Record the work issued on `stream` inside the block into a CUDA graph, instead of running it:

        with runtime.capture() as cap:
            for _ in range(20):
                bound(stream=cap.stream)         # a BoundLaunch, or launch(..., stream=cap.stream)
        graph = cap.graph                        # Graph: graph() replays the 20 launches
        graph()

    The stream is a stream of the capture's own (cuStreamCreate, non-blocking), captured in thread-local
    mode (cuStreamBeginCapture): only the work issued on `cap.stream` is recorded, and nothing of it
    runs until the graph is launched. The stream is destroyed at the block's end. An exception inside
    the block ends the capture, keeps no graph and propagates."""

    def __init__(self, *, device: int = 0, context: Optional[Context] = None):
        self.context = _context_for(context, device)
        self.stream = None
        self.graph: Optional[Graph] = None
        self._entered = False

    def __enter__(self) -> "capture":
        if self._entered:
            raise UsageError("a capture records once; make a new one")
        self._entered = True
        d = _driver_module()
        self.context.make_current()
        self.stream = check(d.cuStreamCreate(int(d.CUstream_flags.CU_STREAM_NON_BLOCKING)), "cuStreamCreate")
        try:
            check(d.cuStreamBeginCapture(self.stream, d.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                  "cuStreamBeginCapture")
        except BaseException:
            self._drop_stream()
            raise
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        d = _driver_module()
        self.context.make_current()
        try:
            res = d.cuStreamEndCapture(self.stream)
            if exc_type is not None:                     # the block's error first; no graph
                if int(res[0]) == 0 and res[1] is not None:
                    d.cuGraphDestroy(res[1])
                return False
            graph = check(res, "cuStreamEndCapture")
            try:
                exec_ = check(d.cuGraphInstantiate(graph, 0), "cuGraphInstantiate")
            except BaseException:
                d.cuGraphDestroy(graph)
                raise
            nodes = check(d.cuGraphGetNodes(graph, 0), "cuGraphGetNodes")[1]
            self.graph = Graph(self.context, graph, exec_, int(nodes))
            return False
        finally:
            self._drop_stream()

    def _drop_stream(self) -> None:
        if self.stream is not None:
            stream, self.stream = self.stream, None
            _driver_module().cuStreamDestroy(stream)


def time_kernel(fn: Callable[[], Any], warmup: int = 3, iters: int = 20, *, stream=None,
                device: int = 0) -> List[float]:
    """Time `fn()` (which launches work on `stream`) with cuEventRecord/cuEventElapsedTime: ms per call.

    Runs `warmup` untimed calls, then `iters` timed ones, each between its own pair of events.
    """
    if not callable(fn):
        raise UsageError(f"fn must be callable, got {type(fn).__name__}")
    for name, v, lo in (("warmup", warmup, 0), ("iters", iters, 1)):
        if isinstance(v, bool) or not isinstance(v, int) or v < lo:
            raise UsageError(f"{name} must be an int >= {lo}, got {v!r}")
    ctx = get_context(device)
    for _ in range(warmup):
        fn()
    starts = [Event(context=ctx) for _ in range(iters)]
    ends = [Event(context=ctx) for _ in range(iters)]
    try:
        for s, e in zip(starts, ends):
            s.record(stream)
            fn()
            e.record(stream)
        ends[-1].synchronize()
        return [s.elapsed_ms(e) for s, e in zip(starts, ends)]
    finally:
        for ev in starts + ends:
            ev.destroy()


def synchronize(device: int = 0) -> None:
    """cuCtxSynchronize on the device's primary context."""
    get_context(device).synchronize()
