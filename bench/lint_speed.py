"""`ptxgen lint` speed against ptxas on large PTX files.

    python bench/lint_speed.py [--repeat 3] [--no-ptxas] [--no-generate] [FILE ...]

Without FILE arguments it uses the largest files of the test corpus (nvcc -G builds, DWARF-heavy) and,
when nvcc is on PATH, builds unrolled kernels of 60k-120k lines from tests/ptx/bench_src/unrolled.cu
(cached in $PTXGEN_BENCH_DIR, default <tmp>/ptxgen-bench; the first build takes nvcc a few minutes).
Prints one row per file: lines, lint seconds (best of --repeat), lint lines/s, ptxas seconds (one run,
-arch from the file's .target), and how many times faster lint is.
"""
from __future__ import annotations

import argparse
import gzip
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)

from ptxgen.lint import lint_ptx  # noqa: E402
from ptxgen.parse import _fast, _lark  # noqa: E402

CORPUS = os.path.join(ROOT, "tests", "ptx", "nvcc")
DEFAULT_CORPUS = ("tma_mbarrier.sm_100a.G.ptx.gz", "coop_cluster.sm_100a.G.ptx.gz", "misc.sm_100a.G.ptx")
# (name, nvcc flags): unrolled FMA chains, -lineinfo (one .loc per few instructions, as Triton writes)
GENERATED = (
    ("unrolled_1500.sm_90a.lineinfo.ptx", ["-arch=sm_90a", "-lineinfo", "-DUNROLL=1500"]),
    ("unrolled_1500_1200.sm_90a.lineinfo.ptx", ["-arch=sm_90a", "-lineinfo", "-DUNROLL=1500", "-DUNROLL2=1200"]),
    ("unrolled_1200.sm_80.O3.ptx", ["-arch=sm_80", "-DUNROLL=1200"]),
)


def read(path: str) -> str:
    if path.endswith(".gz"):
        with gzip.open(path, "rt") as f:
            return f.read()
    with open(path) as f:
        return f.read()


def generate(out_dir: str):
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        print("nvcc not found: benchmarking the stored corpus files only", file=sys.stderr)
        return []
    os.makedirs(out_dir, exist_ok=True)
    src = os.path.join(ROOT, "tests", "ptx", "bench_src", "unrolled.cu")
    out = []
    for name, flags in GENERATED:
        path = os.path.join(out_dir, name)
        if not os.path.exists(path) or os.path.getmtime(path) < os.path.getmtime(src):
            print(f"building {name} with nvcc ...", file=sys.stderr, flush=True)
            r = subprocess.run([nvcc, "-ptx", *flags, "-o", path, src], capture_output=True, text=True)
            if r.returncode:
                print(f"nvcc failed for {name}:\n{r.stderr}", file=sys.stderr)
                continue
        out.append(path)
    return out


def time_lint(text: str, name: str, repeat: int):
    best = float("inf")
    errors = None
    for _ in range(repeat):
        t = time.perf_counter()
        ds = lint_ptx(text, name)
        best = min(best, time.perf_counter() - t)
        errors = sum(1 for d in ds if d.severity == "error")
    return best, errors


def time_ptxas(path: str, text: str):
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        return None, "ptxas not found"
    m = re.search(r"^\s*\.target\s+(sm_\w+)", text, re.M)
    arch = m.group(1) if m else "sm_90a"
    with tempfile.TemporaryDirectory() as d:
        src = path
        if path.endswith(".gz"):
            src = os.path.join(d, "in.ptx")
            with open(src, "w") as f:
                f.write(text)
        t = time.perf_counter()
        r = subprocess.run([ptxas, f"-arch={arch}", src, "-o", os.path.join(d, "out.cubin")], capture_output=True,
                           text=True)
        dt = time.perf_counter() - t
    return dt, ("ok" if r.returncode == 0 else "ptxas rc %d" % r.returncode)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--repeat", type=int, default=3, help="lint runs per file; the best counts (default 3)")
    ap.add_argument("--no-ptxas", action="store_true", help="do not time ptxas")
    ap.add_argument("--no-generate", action="store_true", help="do not build the unrolled kernels with nvcc")
    ap.add_argument("--out-dir", default=os.environ.get("PTXGEN_BENCH_DIR",
                                                        os.path.join(tempfile.gettempdir(), "ptxgen-bench")))
    args = ap.parse_args(argv)
    files = list(args.files)
    if not files:
        files = [os.path.join(CORPUS, f) for f in DEFAULT_CORPUS]
        if not args.no_generate:
            files = generate(args.out_dir) + files
    t = time.perf_counter()
    _lark()
    _fast()
    build = time.perf_counter() - t
    t = time.perf_counter()
    for _ in range(10 ** 6):
        pass
    loop = time.perf_counter() - t
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs; "
          f"1M empty loop iterations: {loop * 1000:.0f} ms; parser built once in {build * 1000:.0f} ms")
    print()
    print(f"| {'file':42s} | {'lines':>7s} | {'lint s':>7s} | {'lint lines/s':>12s} | {'ptxas s':>8s} | "
          f"{'ptxas/lint':>10s} | lint errors |")
    print(f"|{'-' * 44}|{'-' * 9}|{'-' * 9}|{'-' * 14}|{'-' * 10}|{'-' * 12}|-------------|")
    total_lines = total_lint = 0.0
    for path in files:
        text = read(path)
        lines = text.count("\n") + (0 if text.endswith("\n") else 1)
        lt, errors = time_lint(text, path, args.repeat)
        total_lines += lines
        total_lint += lt
        pt, note = (None, "skipped") if args.no_ptxas else time_ptxas(path, text)
        pts = f"{pt:8.2f}" if pt is not None else f"{'-':>8s}"
        ratio = f"{pt / lt:9.1f}x" if pt is not None else f"{'-':>10s}"
        print(f"| {os.path.basename(path):42s} | {lines:7d} | {lt:7.3f} | {lines / lt:12,.0f} | {pts} | {ratio} | "
              f"{errors} |" + ("" if note in ("ok", "skipped") else f" ({note})"), flush=True)
    if total_lint:
        print(f"\nall files: {total_lines:,.0f} lines in {total_lint:.2f} s of lint: {total_lines / total_lint:,.0f} lines/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
