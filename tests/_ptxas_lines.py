"""Which lines of a PTX text ptxas rejects, for the tests that use ptxas as an oracle line by line."""
from __future__ import annotations

import os
import re
import subprocess
import tempfile
from typing import Dict


def ptxas_rejected(text: str, arch: str) -> Dict[int, str]:
    """{line: ptxas's first message} of the lines ptxas rejects: each rejected line is blanked and the
    text assembled again until it assembles."""
    lines = text.split("\n")
    bad: Dict[int, str] = {}
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "k.ptx")
        while True:
            with open(path, "w") as fh:
                fh.write("\n".join(lines))
            p = subprocess.run(["ptxas", f"-arch={arch}", path, "-o", os.path.join(d, "k.cubin")],
                               capture_output=True, text=True, timeout=600)
            hit = {}
            # the text's own lines only: ptxas reports errors inside its macros as "<macro util>, line 9"
            for m in re.finditer(re.escape(path) + r", line (\d+); (?:error|fatal)\s*:\s*(.*)", p.stdout + p.stderr):
                hit.setdefault(int(m.group(1)), m.group(2))
            hit = {k: v for k, v in hit.items() if k not in bad and 0 < k <= len(lines)}
            if not hit:
                assert p.returncode == 0, p.stdout + p.stderr
                return bad
            bad.update(hit)
            for k in hit:
                lines[k - 1] = "\t// rejected"


def ptxas_verdict(text: str, arch: str = "sm_90a", compile_only: bool = False) -> str:
    """"error" where ptxas rejects `text`, "warning" where it assembles it with a warning, else "ok"
    (`compile_only`: ptxas -c, no whole-program resolution)."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "k.ptx")
        with open(path, "w") as fh:
            fh.write(text)
        p = subprocess.run(["ptxas", *(["-c"] if compile_only else []), f"-arch={arch}", path, "-o", os.devnull],
                           capture_output=True, text=True, timeout=600)
    return "error" if p.returncode else "warning" if "warning" in p.stdout + p.stderr else "ok"
