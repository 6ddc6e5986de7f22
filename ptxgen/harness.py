"""The end-to-end path every sample takes: build -> PTX -> lint -> ptxas check -> load, run and verify on a GPU.

A sample script defines `build(target) -> ptxgen.Module` and `run(module, rng) -> list[str]` (the
lines it checked; it raises SampleCheckError on a mismatch) and calls `main(...)`.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Callable, List, Optional

import numpy as np

from .errors import PtxgenError

__all__ = ["SampleCheckError", "run_sample", "main", "to_bf16_bits", "from_bf16_bits", "assert_close",
           "bf16_gemm_case", "check_bf16_gemm", "parse_fields"]


def parse_fields(cls, text: str, noun: str = "fields"):
    """`cls(...).check()` for a sample's configuration dataclass from its fields in order, colon-separated
    (e.g. "256:64:3:8:smem"); trailing fields keep their defaults. A field whose default is a bool takes 0
    or 1, an int a whole number, anything else the text as it is. Raises ValueError naming what is wrong
    (`noun` names the fields in the message)."""
    import dataclasses
    fields = dataclasses.fields(cls)
    parts = text.split(":") if isinstance(text, str) and text else []
    if not parts or len(parts) > len(fields):
        raise ValueError(f"{text!r}: expected 1 to {len(fields)} colon-separated {noun} "
                         f"({':'.join(f.name for f in fields)})")
    values = {}
    for f, part in zip(fields, parts):
        if isinstance(f.default, bool):
            if part not in ("0", "1"):
                raise ValueError(f"{text!r}: {f.name} must be 0 or 1, not {part!r}")
            values[f.name] = part == "1"
        elif isinstance(f.default, int):
            if not part.isdigit():
                raise ValueError(f"{text!r}: {f.name} must be a whole number, not {part!r}")
            values[f.name] = int(part)
        else:
            values[f.name] = part
    return cls(**values).check()


class SampleCheckError(PtxgenError):
    """A sample's GPU result does not match its reference."""


def to_bf16_bits(x: np.ndarray) -> np.ndarray:
    """float32 -> bf16 bit patterns (uint16), rounding to nearest even as cvt.rn.bf16.f32 does."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return r.astype(np.uint16)


def from_bf16_bits(b: np.ndarray) -> np.ndarray:
    """bf16 bit patterns (uint16) -> float32 (exact)."""
    return (np.asarray(b, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def assert_close(name: str, got: np.ndarray, ref: np.ndarray, *, rtol: float, atol: float) -> str:
    """Compare elementwise; raise SampleCheckError naming the worst element, else return a summary."""
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if got.shape != ref.shape:
        raise SampleCheckError(f"{name}: shape {got.shape} != reference {ref.shape}")
    if not np.all(np.isfinite(got)):
        bad = np.argwhere(~np.isfinite(got))[0]
        raise SampleCheckError(f"{name}: non-finite value {got[tuple(bad)]} at {tuple(int(i) for i in bad)}")
    err = np.abs(got - ref)
    tol = atol + rtol * np.abs(ref)
    if np.any(err > tol):
        i = np.unravel_index(int(np.argmax(err - tol)), err.shape)
        n = int(np.count_nonzero(err > tol))
        raise SampleCheckError(f"{name}: {n} of {err.size} elements differ; worst at {tuple(int(v) for v in i)}: "
                               f"got {got[i]!r}, expected {ref[i]!r}")
    return f"{name}: {err.size} elements match the float64 reference (max abs err {err.max():.3g})"


def bf16_gemm_case(layout: str, m: int, n: int, k: int, seed: int):
    """Torch CUDA tensors for one bf16 GEMM check: random normal A (m x k) and B (k x n for layout 'nn',
    n x k for 'nt'), the float64 reference of C, and C (m x n bf16) poisoned with NaN (0xFFFF) so an
    element the kernel skips fails the check. Returns (a, b, ref, c)."""
    import torch
    g = torch.Generator(device="cuda").manual_seed(int(seed))
    a = torch.randn(m, k, device="cuda", generator=g).to(torch.bfloat16)
    if layout == "nn":
        b = torch.randn(k, n, device="cuda", generator=g).to(torch.bfloat16)
        ref = a.double() @ b.double()
    else:
        b = torch.randn(n, k, device="cuda", generator=g).to(torch.bfloat16)
        ref = a.double() @ b.double().T
    c = torch.full((m, n), -1, dtype=torch.int16, device="cuda").view(torch.bfloat16)
    return a, b, ref, c


def check_bf16_gemm(name: str, c, ref, k: int) -> str:
    """Check the bf16 GEMM output `c` against the float64 `ref` (torch tensors); SampleCheckError names
    the first non-finite element or the worst of those out of tolerance, else the summary line."""
    import torch
    got = c.double()
    m, n = got.shape
    if not bool(torch.isfinite(got).all()):
        bad = torch.nonzero(~torch.isfinite(got))[0].tolist()
        raise SampleCheckError(f"{name}: non-finite output at {tuple(bad)} (unwritten or overflow)")
    # error budget: the f32 sum is near exact; rounding C to bf16 costs 2^-9 relative, and
    # sqrt(K)-scaled slack covers the f32 accumulation order
    tol = 2.0 ** -8 * ref.abs() + 1e-3 * max(1.0, k ** 0.5)
    err = (got - ref).abs()
    if bool((err > tol).any()):
        i = int(torch.argmax(err - tol))
        r, cc = divmod(i, n)
        raise SampleCheckError(f"{name}: {int((err > tol).sum())} of {m * n} elements differ; worst at "
                               f"({r}, {cc}): got {got[r, cc].item()!r}, expected {ref[r, cc].item()!r}")
    rel = float(torch.linalg.norm(got - ref) / torch.linalg.norm(ref))
    return (f"{name}: {m * n} elements match the float64 reference (max abs err {err.max().item():.3g}, "
            f"rel Frobenius {rel:.2e})")


def run_sample(name: str, build: Callable, run: Optional[Callable], *, target: str = "sm_90a",
               out_dir: str = "out", launch: bool = True, seed: Optional[int] = None,
               print_fn=print) -> dict:
    """Build, write `<out_dir>/<name>.ptx`, assemble with ptxas when present, run and check on a GPU.

    Returns a summary dict with keys ptx_path, assembled, resources, ran, checks.
    """
    from . import ptxas as _ptxas
    from . import runtime as _rt

    t0 = time.perf_counter()
    mod = build(target)
    ptx = mod.emit()
    ptx.name = f"{name}.ptx"
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"{name}.ptx")
    with open(path, "w") as f:
        f.write(ptx.text)
    n_lines = ptx.text.count("\n")
    print_fn(f"[build]    {name}: {n_lines} PTX lines for {mod.target} (PTX {mod.version[0]}.{mod.version[1]}) "
             f"in {1e3 * (time.perf_counter() - t0):.1f} ms -> {path}")
    summary = {"ptx_path": path, "assembled": False, "resources": {}, "ran": False, "checks": []}

    from .lint import lint_ptx
    diags = lint_ptx(ptx.text, path)
    for d in diags:
        loc = ptx.source_of(d.loc.line) if d.loc is not None else None
        print_fn(str(d) + (f"\n  note: built at {loc}" if loc is not None else ""))
    n_err = sum(d.severity == "error" for d in diags)
    if n_err:
        raise SampleCheckError(f"{name}: the linter found {n_err} error(s) in the emitted PTX")
    print_fn(f"[lint]     {name}: no errors, {len(diags)} warning(s)")

    if _ptxas.find_ptxas() is not None:
        res = _ptxas.assemble(ptx, str(mod.target))
        summary["assembled"] = True
        summary["resources"] = res.resources
        for fn, r in sorted(res.resources.items()):
            print_fn(f"[ptxas]    {fn} ({res.target}): {r.registers} registers, {r.shared_bytes} B shared, "
                     f"{r.spill_stores} B spill stores, {r.spill_loads} B spill loads"
                     + (" (cached)" if res.cached else ""))
    else:
        print_fn("[ptxas]    not found on PATH: offline assembly skipped")

    if not launch or run is None:
        print_fn("[run]      not launched (--no-run)")
        return summary
    reason = _rt.no_gpu_reason()
    if reason is not None:
        print_fn(f"[run]      no GPU: not launched ({reason})")
        return summary
    rng = np.random.default_rng(seed)
    module = _rt.load_module(ptx)
    checks: List[str] = run(module, rng)
    summary["ran"] = True
    summary["checks"] = checks
    for c in checks:
        print_fn(f"[check]    {c}")
    print_fn(f"[run]      {name}: OK on {_rt.get_context().name} via {module.via}")
    return summary


def main(name: str, build: Callable, run: Optional[Callable], argv=None, default_target: str = "sm_90a") -> int:
    """Command line of a sample script: --target, --out, --no-run, --seed."""
    ap = argparse.ArgumentParser(prog=name, description=f"ptxgen sample '{name}': build, assemble, run, check")
    ap.add_argument("--target", default=default_target, help="PTX target, e.g. sm_80 or sm_90a (default %(default)s)")
    ap.add_argument("--out", default="out", help="directory for the emitted PTX (default %(default)s)")
    ap.add_argument("--no-run", action="store_true", help="build and assemble only")
    ap.add_argument("--seed", type=int, default=None, help="seed for the random inputs (default: fresh)")
    args = ap.parse_args(argv)
    try:
        run_sample(name, build, run, target=args.target, out_dir=args.out, launch=not args.no_run, seed=args.seed)
    except PtxgenError as e:
        print(f"{name}: {e}", file=sys.stderr)
        return 1
    return 0
