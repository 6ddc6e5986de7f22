"""Instruction families beyond the core set (tensor core, async copies, barriers, cluster).

Each module holds one mixin of FunctionBuilder; every method validates its instruction through
ptxgen.legality (the code path the linter uses) before emitting it.
"""
from .async_copy import AsyncCopyOps
from .cluster import ClusterOps
from .mbarrier import MbarrierOps
from .mma import MmaOps
from .wgmma import WgmmaOps

__all__ = ["AsyncCopyOps", "ClusterOps", "MbarrierOps", "MmaOps", "WgmmaOps"]
