"""Source locations and diagnostics, with one renderer for every tool in ptxgen."""
from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass, field
from typing import Optional, Sequence

__all__ = ["SourceLoc", "Diagnostic", "render", "caller_loc"]


@dataclass(frozen=True)
class SourceLoc:
    """A place in a file: the user's Python line for builder output, or a PTX line/column for parsed text."""

    file: str
    line: int
    col: Optional[int] = None
    function: Optional[str] = None

    def __str__(self) -> str:
        if self.col is not None:
            return f"{self.file}:{self.line}:{self.col}"
        return f"{self.file}:{self.line}"


_PKG_DIR = os.path.dirname(os.path.realpath(__file__)) + os.sep
# frames of these files are skipped too: `with k.for_range(...)` runs builder code from contextlib
_SKIP_FILES = {contextlib.__file__}


def caller_loc() -> Optional[SourceLoc]:
    """The first stack frame outside the ptxgen package: the user's line that made the current call.

    Walks frames with sys._getframe (cheap: no source lines are read), so it can run once per
    emitted instruction.
    """
    f = sys._getframe(1)
    internal = _INTERNAL
    while f is not None:
        code = f.f_code
        fn = code.co_filename
        hit = internal.get(fn)
        if hit is None:
            hit = internal[fn] = _is_internal(fn)
        if not hit:
            # a SourceLoc is immutable, so one object serves every instruction made on that line;
            # this saves building one per instruction on the builder's hot path
            key = (code, f.f_lineno)
            loc = _LOCS.get(key)
            if loc is None:
                if len(_LOCS) >= _LOCS_MAX:
                    _LOCS.clear()
                loc = _LOCS[key] = SourceLoc(fn, key[1], None, code.co_name)
            return loc
        f = f.f_back
    return None


# filename -> is it ptxgen's own (or contextlib's) code; a cache because frames repeat endlessly
_INTERNAL: dict = {}
# (code object, line) -> SourceLoc; bounded so that long-lived processes generating code stay small
_LOCS: dict = {}
_LOCS_MAX = 1 << 16


def _is_internal(filename: str) -> bool:
    if filename in _SKIP_FILES:
        return True
    # the same file can be reached through different spellings (samples/../ptxgen, symlinks)
    return os.path.realpath(filename).startswith(_PKG_DIR)


@dataclass
class Diagnostic:
    """One finding: a stable code, a severity, where it is, what is wrong and what to write instead."""

    code: str
    severity: str  # "error" | "warning" | "note"
    message: str
    loc: Optional[SourceLoc] = None
    notes: Sequence[str] = field(default_factory=tuple)
    # the text of the offending source line and the length of the token to underline, when known
    source_line: Optional[str] = None
    span: int = 1

    def as_dict(self) -> dict:
        return {
            "file": self.loc.file if self.loc else None,
            "line": self.loc.line if self.loc else None,
            "col": self.loc.col if self.loc else None,
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
            "notes": list(self.notes),
        }

    def __str__(self) -> str:
        return render(self)


def render(d: Diagnostic) -> str:
    """Compiler-style text: `file:line:col: error[CODE]: message`, the source line, a caret, notes."""
    where = f"{d.loc}: " if d.loc else ""
    out = [f"{where}{d.severity}[{d.code}]: {d.message}"]
    if d.source_line is not None:
        src = d.source_line.rstrip("\n")
        out.append(f"    {src}")
        if d.loc is not None and d.loc.col is not None:
            col = max(d.loc.col, 1)
            lead = "".join(c if c == "\t" else " " for c in src[: col - 1])
            out.append(f"    {lead}^{'~' * max(d.span - 1, 0)}")
    for n in d.notes:
        out.append(f"  note: {n}")
    return "\n".join(out)
