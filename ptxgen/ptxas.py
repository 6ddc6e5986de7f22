"""Offline assembly with ptxas: PTX text -> cubin, its resource report, and a content-keyed cubin cache."""
from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Union

from .diag import Diagnostic
from .errors import AssemblyError, TargetError, ToolNotFoundError, UsageError
from .linemap import PtxText
from .logmap import rewrite_log
from .target import Target

__all__ = [
    "ResourceUsage",
    "AssemblyResult",
    "find_ptxas",
    "ptxas_version",
    "assemble",
    "parse_resource_usage",
    "check_target",
    "default_cache_dir",
    "DEFAULT_TIMEOUT_S",
]

DEFAULT_TIMEOUT_S = 300.0

_INSTALL_HINT = (
    "ptxas (the PTX assembler) was not found on PATH, in $CUDA_HOME/bin or in /usr/local/cuda/bin. "
    "Install the CUDA toolkit (https://developer.nvidia.com/cuda-downloads) or the pip package "
    "'nvidia-cuda-nvcc' (it ships bin/ptxas), then put its bin/ folder on PATH or set CUDA_HOME."
)


@dataclass
class ResourceUsage:
    """What ptxas -v reports for one function: registers, spills, stack, shared and constant memory."""

    name: str
    registers: int = 0
    spill_stores: int = 0
    spill_loads: int = 0
    stack_frame: int = 0
    shared_bytes: int = 0
    barriers: int = 0
    cmem: Dict[int, int] = field(default_factory=dict)
    cumulative_stack: int = 0
    is_entry: bool = False
    target: Optional[str] = None


@dataclass
class AssemblyResult:
    """A cubin from ptxas, with the raw log, per-function resources and the warnings mapped to user lines."""

    cubin: bytes
    target: str
    log: str
    resources: Dict[str, ResourceUsage]
    warnings: List[Diagnostic]
    cached: bool
    ptxas_version: str = ""


# ---------------------------------------------------------------------------------------------
# finding the tool

def find_ptxas() -> Optional[str]:
    """The path of ptxas: PATH first, then $CUDA_HOME/bin, $CUDA_PATH/bin, /usr/local/cuda/bin; None if absent."""
    found = shutil.which("ptxas")
    if found:
        return found
    dirs = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    for d in dirs:
        if not d:
            continue
        cand = os.path.join(d, "bin", "ptxas")
        if os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    return None


def _require_ptxas() -> str:
    path = find_ptxas()
    if path is None:
        raise ToolNotFoundError(_INSTALL_HINT)
    return path


@functools.lru_cache(maxsize=8)
def _version_of(path: str, mtime_ns: int) -> str:
    # keyed by mtime too, so an upgraded ptxas at the same path is asked again
    try:
        proc = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        raise ToolNotFoundError(f"could not run {path} --version: {e}. {_INSTALL_HINT}") from None
    text = proc.stdout + proc.stderr
    m = re.search(r"\bV(\d+\.\d+\.\d+)", text) or re.search(r"release (\d+\.\d+)", text)
    return m.group(1) if m else text.strip().splitlines()[-1] if text.strip() else "unknown"


def ptxas_version(path: Optional[str] = None) -> str:
    """The version of ptxas (`ptxas --version`), e.g. '13.0.88'; raise ToolNotFoundError when absent."""
    path = path or _require_ptxas()
    try:
        mtime = os.stat(path).st_mtime_ns
    except OSError:
        raise ToolNotFoundError(f"{path} does not exist. {_INSTALL_HINT}") from None
    return _version_of(path, mtime)


def check_target(target: Union[str, Target]) -> str:
    """Validate a target such as 'sm_90a' and return its ptxas spelling; raise TargetError otherwise."""
    if not isinstance(target, (str, Target)):
        raise TargetError(f"target must be a string such as 'sm_90a', got {type(target).__name__}")
    try:
        return str(Target.parse(target))
    except ValueError as e:
        raise TargetError(str(e)) from None


# ---------------------------------------------------------------------------------------------
# the -v report

_RE_COMPILING = re.compile(r"Compiling\s+(entry\s+)?function\s+'(?P<name>[^']+)'(?:\s+for\s+'(?P<arch>[^']+)')?")
_RE_PROPS = re.compile(r"Function properties for\s+'?(?P<name>[^'\s]+)'?")
_RE_FIELDS = {
    "stack_frame": re.compile(r"(\d+)\s+bytes\s+stack\s+frame"),
    "spill_stores": re.compile(r"(\d+)\s+bytes\s+spill\s+stores"),
    "spill_loads": re.compile(r"(\d+)\s+bytes\s+spill\s+loads"),
    "registers": re.compile(r"Used\s+(\d+)\s+registers"),
    "barriers": re.compile(r"used\s+(\d+)\s+barriers"),
    "shared_bytes": re.compile(r"(\d+)\s+bytes\s+smem"),
    "cumulative_stack": re.compile(r"(\d+)\s+bytes\s+cumulative\s+stack\s+size"),
}
_RE_CMEM = re.compile(r"(\d+)\s+bytes\s+cmem\[(\d+)\]")


def parse_resource_usage(log: str) -> Dict[str, ResourceUsage]:
    """Parse `ptxas -v` output into {function name: ResourceUsage}.

    Tolerant of the variations between ptxas versions: fields missing from a line stay 0, fields
    come in any order, and the `Function properties` block may come before or after `Compiling`.
    """
    out: Dict[str, ResourceUsage] = {}
    current: Optional[ResourceUsage] = None

    def get(name: str) -> ResourceUsage:
        ru = out.get(name)
        if ru is None:
            ru = out[name] = ResourceUsage(name)
        return ru

    for line in log.splitlines():
        m = _RE_COMPILING.search(line)
        if m:
            current = get(m.group("name"))
            current.is_entry = current.is_entry or bool(m.group(1))
            if m.group("arch"):
                current.target = m.group("arch")
            continue
        m = _RE_PROPS.search(line)
        if m:
            current = get(m.group("name"))
            continue
        if current is None:
            continue
        for attr, rx in _RE_FIELDS.items():
            fm = rx.search(line)
            if fm:
                setattr(current, attr, int(fm.group(1)))
        for size, bank in _RE_CMEM.findall(line):
            current.cmem[int(bank)] = int(size)
    return out


# ---------------------------------------------------------------------------------------------
# the cache

_CACHE_MAGIC = b"PTXGEN-CUBIN-1\n"


def default_cache_dir() -> Path:
    """$PTXGEN_CACHE_DIR, else $XDG_CACHE_HOME/ptxgen/cubin, else ~/.cache/ptxgen/cubin."""
    env = os.environ.get("PTXGEN_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ptxgen" / "cubin"


def _cache_key(text: str, target: str, version: str, args: Sequence[str]) -> str:
    h = hashlib.sha256()
    for part in (text, target, version, *args):
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\0")  # separator, so ("ab", "c") and ("a", "bc") differ
    return h.hexdigest()


def _cache_read(path: Path) -> Optional[tuple]:
    """(cubin, log) from a cache entry, or None when absent, unreadable or corrupt."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        if not data.startswith(_CACHE_MAGIC):
            return None
        rest = data[len(_CACHE_MAGIC):]
        nl = rest.index(b"\n")
        header = json.loads(rest[:nl].decode("utf-8"))
        cubin = rest[nl + 1:]
        if len(cubin) != header["cubin_len"] or hashlib.sha256(cubin).hexdigest() != header["cubin_sha256"]:
            return None
        return cubin, str(header["log"])
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None


def _cache_write(path: Path, cubin: bytes, log: str) -> None:
    """Write atomically (temp file + os.replace); any failure leaves the cache unused, never raises."""
    header = json.dumps({"cubin_len": len(cubin), "cubin_sha256": hashlib.sha256(cubin).hexdigest(),
                         "log": log}).encode("utf-8")
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=str(path.parent))
        with os.fdopen(fd, "wb") as f:
            f.write(_CACHE_MAGIC + header + b"\n" + cubin)
        os.replace(tmp, path)
        tmp = None
    except OSError:
        pass
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


# ---------------------------------------------------------------------------------------------
# assembling

def _safe_stem(name: str) -> str:
    stem = os.path.splitext(os.path.basename(name))[0]
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", stem).strip("._")
    return stem[:64] or "module"


def _build_args(target: str, opt_level: Optional[int], extra_args: Sequence[str]) -> List[str]:
    args = [f"-arch={target}"]
    if opt_level is not None:
        if isinstance(opt_level, bool) or not isinstance(opt_level, int) or not 0 <= opt_level <= 3:
            raise UsageError(f"opt_level must be an int from 0 to 3 (ptxas -O0..-O3), got {opt_level!r}")
        args.append(f"-O{opt_level}")
    if isinstance(extra_args, (str, bytes)):
        raise UsageError("extra_args must be a sequence of strings such as ('-maxrregcount', '64'), "
                        "not one string")
    for a in extra_args:
        if not isinstance(a, str):
            raise UsageError(f"extra_args must be strings, got {a!r} ({type(a).__name__})")
        args.append(a)
    return args


def assemble(ptx: Union[PtxText, str], target: Union[str, Target] = "sm_90a", *,
             opt_level: Optional[int] = None, extra_args: Sequence[str] = (), cache: bool = True,
             cache_dir: Union[str, os.PathLike, None] = None,
             timeout_s: float = DEFAULT_TIMEOUT_S) -> AssemblyResult:
    """Assemble PTX to a cubin: `ptxas -v -arch=<target> [-O<n>] [extra_args] -o out.cubin in.ptx`.

    Raises TargetError for a malformed target, ToolNotFoundError when ptxas is missing, and
    AssemblyError (log rewritten to the user's lines) when ptxas rejects the module. With
    `cache` the cubin is kept under `cache_dir` (default: default_cache_dir()) keyed by the PTX
    text, target, ptxas version and arguments; a hit returns `cached=True` without running ptxas.
    """
    if not isinstance(ptx, PtxText):
        if not isinstance(ptx, str):
            raise UsageError(f"ptx must be a PtxText or str, got {type(ptx).__name__}")
        ptx = PtxText(ptx)
    tgt = check_target(target)
    args = _build_args(tgt, opt_level, extra_args)
    exe = _require_ptxas()
    version = ptxas_version(exe)

    entry: Optional[Path] = None
    if cache:
        cdir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        entry = cdir / f"{_cache_key(ptx.text, tgt, version, args)}.cubin"
        hit = _cache_read(entry)
        if hit is not None:
            cubin, log = hit
            return _result(ptx, cubin, tgt, log, cached=True, version=version)

    with tempfile.TemporaryDirectory(prefix="ptxgen-ptxas-") as tmp:
        src = os.path.join(tmp, _safe_stem(ptx.name) + ".ptx")
        out = os.path.join(tmp, "out.cubin")
        with open(src, "w", encoding="utf-8") as f:
            f.write(ptx.text)
        cmd = [exe, "-v", *args, "-o", out, src]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s,
                                  stdin=subprocess.DEVNULL, cwd=tmp)
        except subprocess.TimeoutExpired:
            raise AssemblyError(f"ptxas did not finish within {timeout_s:g} s for {ptx.name} ({tgt})") from None
        except OSError as e:
            raise ToolNotFoundError(f"could not run {exe}: {e}. {_INSTALL_HINT}") from None
        # ptxas writes its -v report and its diagnostics to stderr, older builds partly to stdout
        log = "\n".join(s for s in (proc.stdout.strip("\n"), proc.stderr.strip("\n")) if s)
        if proc.returncode != 0 or not os.path.exists(out):
            mapped, diags = rewrite_log(log, ptx, "ptxas")
            summary = f"ptxas rejected {ptx.name} for {tgt} (exit status {proc.returncode})"
            if re.search(r"is not defined for option 'gpu-name'", log):
                summary += f"; this ptxas ({version}) cannot build for {tgt}"
            raise AssemblyError(summary, log=log, mapped=mapped, diagnostics=diags)
        with open(out, "rb") as f:
            cubin = f.read()

    if entry is not None:
        _cache_write(entry, cubin, log)
    return _result(ptx, cubin, tgt, log, cached=False, version=version)


def _result(ptx: PtxText, cubin: bytes, target: str, log: str, *, cached: bool, version: str) -> AssemblyResult:
    # diagnostics come from the current line map, so a cache hit still points at this caller's lines
    _, diags = rewrite_log(log, ptx, "ptxas")
    warnings = [d for d in diags if d.severity == "warning"]
    return AssemblyResult(cubin=cubin, target=target, log=log, resources=parse_resource_usage(log),
                          warnings=warnings, cached=cached, ptxas_version=version)
