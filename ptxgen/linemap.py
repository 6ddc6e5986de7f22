"""PTX text together with the map from each PTX line to the user's source line that produced it."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Optional

from .diag import SourceLoc

__all__ = ["PtxText"]


@dataclass
class PtxText:
    """Emitted (or loaded) PTX. `line_map` maps 1-based PTX line numbers to the SourceLoc that built them."""

    text: str
    line_map: Dict[int, SourceLoc] = field(default_factory=dict)
    name: str = "<ptx>"

    def __str__(self) -> str:
        return self.text

    def source_of(self, ptx_line: int) -> Optional[SourceLoc]:
        return self.line_map.get(ptx_line)

    def line(self, ptx_line: int) -> str:
        """The text of one PTX line (1-based), or '' when out of range."""
        lines = self.text.split("\n")
        if 1 <= ptx_line <= len(lines):
            return lines[ptx_line - 1]
        return ""
