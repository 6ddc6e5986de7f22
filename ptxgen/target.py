"""Targets (`sm_90a`) and PTX ISA versions, and how they gate features."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Tuple, Union

__all__ = ["Target", "PtxVersion", "parse_version", "read_version", "version_error", "PTX_VERSIONS", "LATEST_PTX",
           "MIN_PTX_FOR_SM", "max_regs_for_threads", "max_threads_for_regs", "warps_per_subpartition",
           "cta_register_limit"]

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

# The PTX ISA versions that ptxas 13.0 (CUDA 13.0) knows, each major's minors from 0 up to the last; it refuses
# any other `.version` ("Unsupported .version 9.1; current version is '9.0'"), 8.9 and 7.9 among them.
_LAST_MINOR = ((1, 5), (2, 3), (3, 2), (4, 3), (5, 1), (6, 5), (7, 8), (8, 8), (9, 0))
PTX_VERSIONS: Tuple[PtxVersion, ...] = tuple((major, minor) for major, last in _LAST_MINOR for minor in range(last + 1))
LATEST_PTX: PtxVersion = PTX_VERSIONS[-1]
# ptxas checks major * 10 + minor (32-bit ints) against these numbers: so `.version 8.10` passes (as 90), 8.70 (150)
# and 9.10 (100) do not
_VERSION_NUMBERS = frozenset(10 * major + minor for major, minor in PTX_VERSIONS)
_VERSION_LIST = ", ".join(f"{major}.0" + (f"-{major}.{last}" if last else "") for major, last in _LAST_MINOR)
_VERSION_TEXT = re.compile(r"([0-9]+)\.([0-9]+)")
_LONG_MAX = (1 << 63) - 1


def _int32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >> 31 else v


def read_version(text: str) -> PtxVersion:
    """The (major, minor) that ptxas 13.0 reads from the number of a `.version` directive as written: each part's
    digits as C's atoi reads them (at most 2^63 - 1, then its low 32 bits as a signed int). '9.00' and '09.0' are
    (9, 0), '8.007' is (8, 7), '8.10' is (8, 10), '4294967305.0' is (9, 0); ValueError for text other than
    digits, a dot and digits. Features and targets compare this pair with the version they need, so 8.10 is
    past 8.8; which versions exist is version_error's business."""
    m = _VERSION_TEXT.fullmatch(text)
    if m is None:
        raise ValueError(f"bad PTX ISA version {text!r}: expected MAJOR.MINOR such as '9.0'")
    return (_int32(min(int(m.group(1)), _LONG_MAX)), _int32(min(int(m.group(2)), _LONG_MAX)))


def version_error(v: PtxVersion, text: Optional[str] = None,
                  form: str = "`.version {}`") -> Optional[Tuple[str, str]]:
    """None where ptxas 13.0 takes `.version` v (the pair read_version gives); else (message, note), the note saying
    what to write, each version spelled as `form` spells it (the builder's: "version='{}'"). `text`: the version as
    written, which the message quotes (default MAJOR.MINOR).

    ptxas looks up major * 10 + minor, in 32-bit ints, among the versions it knows (PTX_VERSIONS: 1.0-1.5, ...,
    8.0-8.8, 9.0): 9.1 and 10.0 are past 9.0, its latest, 8.9 and 7.9 were never PTX ISA versions, 8.10 passes
    as 9.0 and 8.70 does not."""
    major, minor = v
    if _int32(10 * major + minor) in _VERSION_NUMBERS:
        return None
    text = text if text is not None else f"{major}.{minor}"
    msg = (f"PTX ISA .version {text} is not a version ptxas 13.0 knows (ptxas: \"Unsupported .version {text}; "
           f"current version is '{LATEST_PTX[0]}.{LATEST_PTX[1]}'\")")
    latest = f"{LATEST_PTX[0]}.{LATEST_PTX[1]}"
    latest_form = form.format(latest)
    if not 0 <= minor <= 9 or major < 0:
        note = (f"ptxas looks the version up as major * 10 + minor, {_int32(10 * major + minor)} here, which no "
                f"version has: write one of {_VERSION_LIST}, e.g. {latest_form}")
    elif v > LATEST_PTX:
        note = f"{latest} is the latest PTX ISA version ptxas 13.0 reads: write {latest_form}"
    else:
        below = max((x for x in PTX_VERSIONS if x < v), default=None)
        above = min(x for x in PTX_VERSIONS if x > v)
        near = (form.format(f"{below[0]}.{below[1]}") + " or " if below else "") + form.format(f"{above[0]}.{above[1]}")
        note = f"there is no PTX ISA {text}; the versions are {_VERSION_LIST}: write {near}"
    return msg, note


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


# ----------------------------------------------------------------------------------- registers and CTA size
# An SM of sm_70 and later has four sub-partitions, each with a register file of its own; warp w of a CTA runs
# on sub-partition w % 4 and takes its registers from that file only, 256 (8 a thread) at a time. So a CTA
# launches only if the warps on its fullest sub-partition fit in one file:
#     ceil(warps / 4) * roundup(regs, 8) * 32 <= 16384
# Measured on an H200 with the driver API: a kernel of .reqntid 416 (13 warps, 4 on one sub-partition) at 130
# registers a thread gets CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK 384 and cannot be launched; at 127 it gets
# 512. ptxas takes `.reqntid 416` with `.maxnreg 152` without a word, so nothing before the launch says so
# unless ptxgen does (the lint's PTX-W-DIRECTIVE, the builder's Module.entry, runtime.launch).
REGISTER_RULE_MIN_SM = 70              # the first SM generation the rule is known to hold for
SM_SUBPARTITIONS = 4                   # register files (and warp schedulers) of one SM
SUBPARTITIONS_WORD = "four"            # the same, as messages spell it
REGISTERS_PER_SUBPARTITION = 16384     # 32-bit registers in each sub-partition's file (64K an SM)
WARP_THREADS = 32
WARP_REGISTER_UNIT = 256               # registers are given to a warp in units of this many
THREAD_REGISTER_UNIT = WARP_REGISTER_UNIT // WARP_THREADS  # so a thread's count rounds up to a multiple of 8
MAX_REGISTERS_PER_THREAD = 255         # the most a thread can address (and the most .maxnreg takes)
MAX_THREADS_PER_CTA = 1024


def _positive_int(value, what: str, most: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what} must be an int, not {type(value).__name__} {value!r}")
    if value < 1:
        raise ValueError(f"{what} must be at least 1, not {value}")
    if value > most:
        raise ValueError(f"{what} must be at most {most}, not {value}")
    return value


def warps_per_subpartition(threads: int) -> int:
    """Warps a CTA of `threads` threads puts on its fullest sub-partition: ceil(ceil(threads / 32) / 4)."""
    threads = _positive_int(threads, "threads", MAX_THREADS_PER_CTA)
    warps = -(-threads // WARP_THREADS)
    return -(-warps // SM_SUBPARTITIONS)


def max_regs_for_threads(threads: int) -> int:
    """The most registers a thread can use in a CTA of `threads` threads that still launches (sm_70 and
    later): a multiple of 8 where the register file is the limit, else 255 (the per-thread maximum).

    384 threads -> 168, 416 or 512 -> 128, 1024 -> 64, 256 or fewer -> 255. A kernel whose .maxnreg is
    above this lets ptxas use more registers than a CTA of that size can launch with. ValueError unless
    1 <= threads <= 1024."""
    per = warps_per_subpartition(threads)
    fit = REGISTERS_PER_SUBPARTITION // (per * WARP_THREADS)
    return min(MAX_REGISTERS_PER_THREAD, fit // THREAD_REGISTER_UNIT * THREAD_REGISTER_UNIT)


def max_threads_for_regs(regs: int) -> int:
    """The largest CTA (a whole number of warps, at most 1024 threads) that launches when each thread uses
    `regs` registers (sm_70 and later): what the driver reports as CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
    for a kernel of that register count and no .maxntid/.reqntid.

    130 -> 384, 128 -> 512, 168 -> 384, 255 -> 256, 64 or fewer -> 1024. ValueError unless
    1 <= regs <= 255."""
    regs = _positive_int(regs, "regs", MAX_REGISTERS_PER_THREAD)
    per_warp = -(-regs // THREAD_REGISTER_UNIT) * WARP_REGISTER_UNIT
    warps = REGISTERS_PER_SUBPARTITION // per_warp * SM_SUBPARTITIONS
    return min(MAX_THREADS_PER_CTA, warps * WARP_THREADS)


def cta_register_limit(threads: int, regs: int) -> Optional[str]:
    """None when a CTA of `threads` threads launches at `regs` registers a thread (sm_70 and later); else
    why not, as a clause: "a CTA of 416 threads puts 4 warps on one of the SM's four 16384-register files,
    so it launches only at 128 registers a thread or fewer". ValueError as max_regs_for_threads and
    max_threads_for_regs."""
    regs = _positive_int(regs, "regs", MAX_REGISTERS_PER_THREAD)
    most = max_regs_for_threads(threads)
    if regs <= most:
        return None
    return (f"a CTA of {threads} threads puts {warps_per_subpartition(threads)} warps on one of the SM's "
            f"{SUBPARTITIONS_WORD} {REGISTERS_PER_SUBPARTITION}-register files, so it launches only at {most} "
            f"registers a thread or fewer")
