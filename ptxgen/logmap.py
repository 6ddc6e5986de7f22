"""Rewrite ptxas / driver-JIT logs so each `line N` points at the user's Python line that built it."""
from __future__ import annotations

import re
from typing import List, Tuple, Union

from .diag import Diagnostic, SourceLoc
from .linemap import PtxText

__all__ = ["rewrite_log", "tool_code"]

# `ptxas /tmp/x.ptx, line 12; error   : msg` (offline ptxas) and
# `ptxas application ptx input, line 12; error   : msg` (the driver's JIT) share this shape.
_LOCATED = re.compile(
    r"^\s*(?:ptxas\s+)?(?P<file>[^,\n]*?),\s*line\s+(?P<line>\d+);\s*"
    r"(?P<sev>error|warning|info|fatal)\s*:\s?(?P<msg>.*)$",
    re.IGNORECASE,
)
# Messages without a place: `ptxas fatal   : ...`, `ptxas warning : Registers are spilled ...`.
_UNLOCATED = re.compile(r"^\s*ptxas\s+(?P<sev>error|warning|fatal)\s*:\s?(?P<msg>.*)$", re.IGNORECASE)

# ptxas closes every failed run with this; it adds nothing to the located errors before it.
_ABORT_SUMMARY = "ptx assembly aborted due to errors"

_SEVERITY = {"error": "error", "fatal": "error", "warning": "warning", "info": "note"}
_LETTER = {"error": "E", "warning": "W", "note": "I"}


def tool_code(tool: str) -> str:
    """The diagnostic code prefix of a tool: 'PTXAS' for ptxas, 'JIT' for the driver's JIT."""
    t = tool.lower()
    if "jit" in t or "driver" in t:
        return "JIT"
    if "ptxas" in t:
        return "PTXAS"
    return re.sub(r"[^A-Z0-9]+", "-", tool.upper()).strip("-") or "TOOL"


def rewrite_log(log: str, ptx: Union[PtxText, str], tool: str = "ptxas") -> Tuple[str, List[Diagnostic]]:
    """Map each `line N` of a ptxas/JIT log to the user's source line and quote the PTX line.

    A located message becomes `<file>:<line>: <severity>: <message>` followed by
    `    PTX line N: <ptx text>`; the place is the user's SourceLoc from `ptx.line_map`, or
    `<ptx.name>:N` when the map has no entry. Lines without a place pass through unchanged.
    Returns the rewritten text and one Diagnostic per message (code `PTXAS-E`, `PTXAS-W`,
    `JIT-E`, `JIT-W` ...); unlocated warnings and errors get a Diagnostic with no location.
    """
    if not isinstance(ptx, PtxText):
        ptx = PtxText(str(ptx))
    prefix = tool_code(tool)
    ptx_lines = ptx.text.split("\n")
    out: List[str] = []
    diags: List[Diagnostic] = []
    for raw in log.splitlines():
        m = _LOCATED.match(raw)
        if m:
            n = int(m.group("line"))
            sev = _SEVERITY[m.group("sev").lower()]
            msg = m.group("msg").strip()
            loc = ptx.source_of(n) or SourceLoc(ptx.name, n)
            quoted = ptx_lines[n - 1].strip() if 1 <= n <= len(ptx_lines) else ""
            out.append(f"{loc}: {sev}: {msg}")
            notes = []
            if quoted:
                out.append(f"    PTX line {n}: {quoted}")
                notes.append(f"PTX line {n}: {quoted}")
            diags.append(Diagnostic(f"{prefix}-{_LETTER[sev]}", sev, msg, loc, tuple(notes)))
            continue
        out.append(raw)
        u = _UNLOCATED.match(raw)
        if u:
            msg = u.group("msg").strip()
            if msg.lower().startswith(_ABORT_SUMMARY):
                continue
            sev = _SEVERITY[u.group("sev").lower()]
            diags.append(Diagnostic(f"{prefix}-{_LETTER[sev]}", sev, msg, None))
    return "\n".join(out), diags
