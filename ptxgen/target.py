"""Targets (`sm_90a`) and PTX ISA versions, and how they gate features."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Tuple, Union

__all__ = ["Target", "PtxVersion", "parse_version", "MIN_PTX_FOR_SM"]

# The PTX ISA version that first accepts each target (PTX ISA 9.0, "Release notes"/".target").
MIN_PTX_FOR_SM = {
    50: (4, 0), 52: (4, 1), 53: (4, 2), 60: (5, 0), 61: (5, 0), 62: (5, 0), 70: (6, 0), 72: (6, 1),
    75: (6, 3), 80: (7, 0), 86: (7, 1), 87: (7, 4), 89: (7, 8), 90: (7, 8), 100: (8, 6), 101: (8, 6),
    103: (8, 8), 110: (9, 0), 120: (8, 7), 121: (8, 8),
}
# Arch-specific ('a') and family ('f') variants need a later version than the plain target.
MIN_PTX_FOR_SUFFIX = {("a", 90): (8, 0), ("a", 100): (8, 6), ("a", 101): (8, 6), ("a", 103): (8, 8),
                      ("a", 120): (8, 7), ("a", 121): (8, 8), ("a", 110): (9, 0),
                      ("f", 100): (8, 8), ("f", 101): (8, 8), ("f", 103): (8, 8), ("f", 110): (9, 0),
                      ("f", 120): (8, 8), ("f", 121): (8, 8)}

PtxVersion = Tuple[int, int]
_TARGET_RE = re.compile(r"^(?:sm|compute)_(\d{2,3})([af]?)$")


def parse_version(v: Union[str, float, Tuple[int, int]]) -> PtxVersion:
    """'8.7' / 8.7 / (8, 7) -> (8, 7); raise ValueError for anything else."""
    if isinstance(v, tuple) and len(v) == 2 and all(isinstance(x, int) for x in v):
        return v
    s = str(v)
    m = re.fullmatch(r"(\d+)\.(\d+)", s)
    if not m:
        raise ValueError(f"bad PTX ISA version {v!r}: expected MAJOR.MINOR such as '8.7'")
    return (int(m.group(1)), int(m.group(2)))


@dataclass(frozen=True)
class Target:
    """A PTX target such as sm_90a: `sm` (90), `suffix` ('' | 'a' | 'f')."""

    sm: int
    suffix: str = ""

    @staticmethod
    def parse(s: Union[str, "Target"]) -> "Target":
        if isinstance(s, Target):
            return s
        m = _TARGET_RE.match(str(s).strip())
        if not m:
            raise ValueError(f"bad target {s!r}: expected sm_XY with an optional 'a' or 'f' suffix, e.g. 'sm_90a'")
        sm = int(m.group(1))
        if sm not in MIN_PTX_FOR_SM:
            raise ValueError(f"unknown target {s!r}; known: "
                             + ", ".join(f"sm_{k}" for k in sorted(MIN_PTX_FOR_SM)))
        t = Target(sm, m.group(2))
        if t.suffix and (t.suffix, sm) not in MIN_PTX_FOR_SUFFIX:
            raise ValueError(f"target {s!r} has no '{t.suffix}' variant")
        return t

    def __str__(self) -> str:
        return f"sm_{self.sm}{self.suffix}"

    @property
    def min_ptx(self) -> PtxVersion:
        v = MIN_PTX_FOR_SM[self.sm]
        if self.suffix:
            v = max(v, MIN_PTX_FOR_SUFFIX[(self.suffix, self.sm)])
        return v

    @property
    def default_ptx(self) -> PtxVersion:
        """The version a new module uses by default: the target's minimum, and at least 8.0."""
        return max(self.min_ptx, (8, 0))

    def satisfies(self, need: str) -> bool:
        """Does this target accept a feature that needs `need` ('sm_80', 'sm_90a', 'sm_100a' ...)?

        A plain requirement (sm_80) is met by any later target. An arch-specific one (sm_90a) is
        met only by that exact arch-specific target; a family one (sm_100f) by the same major
        family's 'a'/'f' targets from that one up.
        """
        req = Target.parse(need)
        if req.suffix == "":
            return self.sm >= req.sm
        if req.suffix == "a":
            return self.sm == req.sm and self.suffix == "a"
        # family-specific: same major version, at least that minor, with an 'a' or 'f' suffix
        return (self.suffix in ("a", "f") and self.sm // 10 == req.sm // 10 and self.sm >= req.sm)

    @property
    def arch_number(self) -> int:
        return self.sm


def version_str(v: Optional[PtxVersion]) -> str:
    return "" if v is None else f"{v[0]}.{v[1]}"
