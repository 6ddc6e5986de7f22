"""Regenerate the nvcc corpus: every tests/ptx/src/*.cu for each target, plain, -lineinfo and -G.

Usage: python tests/ptx/build_corpus.py   (needs nvcc; the generated .ptx files are committed, so the
tests never need nvcc). Files larger than GZIP_OVER bytes are stored gzipped.
"""
from __future__ import annotations

import gzip
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ARCHS = ("sm_80", "sm_89", "sm_90a", "sm_100a")
VARIANTS = {"O3": [], "lineinfo": ["-lineinfo"], "G": ["-G"]}
GZIP_OVER = 200_000


def main() -> int:
    out_dir = os.path.join(HERE, "nvcc")
    os.makedirs(out_dir, exist_ok=True)
    srcs = sorted(f for f in os.listdir(os.path.join(HERE, "src")) if f.endswith(".cu"))
    failed = 0
    for src in srcs:
        stem = src[:-3]
        for arch in ARCHS:
            for vname, flags in VARIANTS.items():
                name = f"{stem}.{arch}.{vname}.ptx"
                path = os.path.join(out_dir, name)
                cmd = ["nvcc", "-ptx", f"-arch={arch}", "-std=c++17", *flags, "-o", path,
                       os.path.join(HERE, "src", src)]
                r = subprocess.run(cmd, capture_output=True, text=True)
                if r.returncode:
                    failed += 1
                    print(f"FAILED {name}:\n{r.stderr}", file=sys.stderr)
                    continue
                for old in (path + ".gz",):
                    if os.path.exists(old):
                        os.remove(old)
                if os.path.getsize(path) > GZIP_OVER:
                    with open(path, "rb") as f, open(path + ".gz", "wb") as raw:
                        # mtime=0 keeps the gzip bytes reproducible
                        with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as g:
                            g.write(f.read())
                    os.remove(path)
                    name += ".gz"
                print(name)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
