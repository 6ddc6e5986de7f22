"""Typed exceptions. Every error a user can cause is one of these and says where it happened."""
from __future__ import annotations

from typing import Optional, Sequence

from .diag import Diagnostic, SourceLoc

__all__ = [
    "PtxgenError",
    "BuildError",
    "LegalityError",
    "AssemblyError",
    "JitError",
    "ToolNotFoundError",
    "NoDriverError",
    "CudaError",
    "LaunchConfigError",
    "InternalError",
    "UsageError",
    "TargetError",
    "DeviceBufferError",
    "LayoutError",
    "ExecutionError",
    "UnsupportedInstructionError",
    "MemoryFaultError",
    "DeadlockError",
    "AsyncProtocolError",
    "TensorMapError",
]


class PtxgenError(Exception):
    """Base class of every error ptxgen raises on purpose."""


class BuildError(PtxgenError):
    """The builder refused a call; `loc` is the user's Python line that made it."""

    def __init__(self, message: str, loc: Optional[SourceLoc] = None, code: str = "PTX-E-BUILD",
                 notes: Sequence[str] = ()):
        self.message = message
        self.loc = loc
        self.code = code
        self.notes = tuple(notes)
        super().__init__(self._text())

    @property
    def diagnostic(self) -> Diagnostic:
        return Diagnostic(self.code, "error", self.message, self.loc, self.notes)

    def _text(self) -> str:
        where = f"{self.loc}: " if self.loc else ""
        notes = "".join(f"\n  note: {n}" for n in self.notes)
        return f"{where}error[{self.code}]: {self.message}{notes}"


class LegalityError(BuildError):
    """An instruction form that ptxas would reject (shape, type, target, PTX version...), or one that it is
    known to miscompile (code PTX-W-MISCOMPILE)."""


class _LogError(PtxgenError):
    """An error reported by an NVIDIA tool (ptxas or the driver's JIT), with its log rewritten.

    `log` is the raw text; `mapped` the same lines with each `line N` replaced by the user's
    Python location and the PTX line quoted; `diagnostics` one entry per located message.
    """

    tool = "tool"

    def __init__(self, summary: str, log: str = "", mapped: str = "",
                 diagnostics: Sequence[Diagnostic] = ()):
        self.summary = summary
        self.log = log
        self.mapped = mapped or log
        self.diagnostics = list(diagnostics)
        body = self.mapped.strip()
        super().__init__(f"{summary}\n{body}" if body else summary)


class AssemblyError(_LogError):
    """ptxas rejected the module."""

    tool = "ptxas"


class JitError(_LogError):
    """The driver's JIT compiler (cuModuleLoadDataEx) rejected the module."""

    tool = "driver JIT"


class ToolNotFoundError(PtxgenError):
    """An external tool (ptxas) is not installed or not on PATH."""


class NoDriverError(PtxgenError):
    """No CUDA driver (libcuda) or no GPU could be found; nothing can be launched."""


class CudaError(PtxgenError):
    """A CUDA driver call failed; names the call and the CUresult."""

    def __init__(self, call: str, result_name: str, result_code: int, detail: str = ""):
        self.call = call
        self.result_name = result_name
        self.result_code = result_code
        msg = f"{call} failed: {result_name} ({result_code})"
        if detail:
            msg += f": {detail}"
        super().__init__(msg)


class LaunchConfigError(PtxgenError):
    """A launch was asked for with a bad grid/block/shared-memory/cluster configuration or bad arguments."""


class UsageError(PtxgenError, ValueError):
    """A ptxgen call was given an argument it cannot use (wrong type, out of range); names the argument."""


class TargetError(UsageError):
    """A target string that is not a PTX target (`sm90` instead of `sm_90a`), or one a tool cannot build for."""


class DeviceBufferError(UsageError):
    """A device buffer was asked for, copied or viewed with a size, shape or dtype that does not fit."""


class TensorMapError(UsageError):
    """A TMA tensor map that cuTensorMapEncodeTiled would refuse; `rule` names the violated constraint."""

    def __init__(self, message: str, rule: str):
        self.rule = rule
        super().__init__(f"tensor map [{rule}]: {message}")


class LayoutError(UsageError):
    """A fragment layout was asked for an instruction form, operand or type that has none (ptxgen.layout)."""


class ExecutionError(PtxgenError):
    """The CPU executor (ptxgen.executor) stopped a kernel: names the instruction, its source line and threads.

    `loc` is the SourceLoc of the instruction (the user's Python line for built kernels, the PTX line for
    parsed ones), `instr` its PTX text, `threads` the CTA-linear thread indices involved.
    """

    def __init__(self, message: str, loc=None, instr: str = "", threads=()):
        self.message = message
        self.loc = loc
        self.instr = instr
        self.threads = tuple(int(t) for t in threads)
        where = f"{loc}: " if loc else ""
        text = f"{where}{message}"
        if instr:
            text += f"\n  in: {instr}"
        super().__init__(text)


class UnsupportedInstructionError(ExecutionError):
    """The executor does not model this instruction (or this form of it)."""


class MemoryFaultError(ExecutionError):
    """An out-of-bounds or misaligned access, or an address in no state space the executor knows."""


class DeadlockError(ExecutionError):
    """No thread can make progress: every live thread waits on a barrier that can never complete."""


class AsyncProtocolError(ExecutionError):
    """An asynchronous-proxy rule was broken (wgmma registers touched before wgmma.wait_group, a missing
    wgmma.fence or fence.proxy.async): the hardware result would be undefined."""


class InternalError(PtxgenError):
    """Something inside ptxgen went wrong that a user cannot cause: a bug in ptxgen."""

    def __init__(self, message: str):
        super().__init__(f"internal error (this is a bug in ptxgen, please report it): {message}")
