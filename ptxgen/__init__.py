"""ptxgen: build, lint, assemble and run PTX from Python.

    import ptxgen as pg
    m = pg.Module("sm_90a")
    k = m.entry("kernel", maxntid=128)
    ...
    print(m.emit().text)
"""
from .builder import FunctionBuilder, KernelBuilder, Module, SPECIAL_REGS, mem
from .diag import Diagnostic, SourceLoc
from .errors import (AssemblyError, BuildError, CudaError, InternalError, JitError, LaunchConfigError,
                     LegalityError, NoDriverError, PtxgenError, ToolNotFoundError)
from .ir import Addr, Guard, Imm, Label, Reg, RegArray
from .linemap import PtxText
from .target import Target
from .types import (Type, b8, b16, b32, b64, b128, bf16, bf16x2, e4m3, e4m3x2, e5m2, e5m2x2, f16, f16x2, f32,
                    f64, get_type, pred, s8, s16, s32, s64, tf32, u8, u16, u32, u64)

__version__ = "0.1.0"
