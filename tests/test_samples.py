"""Every sample builds everywhere, assembles for sm_80 and sm_90a with ptxas, and runs and checks itself on a GPU."""
import os

import pytest

from _samples import SAMPLES_DIR, load_sample

SAMPLES = ["axpy", "block_reduce", "hgemm_mma", "gemm_ampere", "wgmma_tile", "tma_tile", "gemm_hopper"]
HOPPER_ONLY = {"wgmma_tile", "tma_tile", "gemm_hopper"}  # wgmma and TMA need sm_90a / sm_90
# every sample for sm_80 and sm_90a, except the Hopper-only ones (sm_90a)
SAMPLE_TARGETS = [(n, t) for n in SAMPLES for t in ("sm_80", "sm_90a") if not (n in HOPPER_ONLY and t == "sm_80")]


@pytest.mark.parametrize("name, target", SAMPLE_TARGETS)
def test_sample_builds(name, target):
    mod = load_sample(name).build(target)
    ptx = mod.emit()
    assert f".target {target}\n" in ptx.text
    # every instruction line is mapped back to the sample script that built it
    sample_file = os.path.realpath(os.path.join(SAMPLES_DIR, f"{name}.py"))
    body_lines = [i + 1 for i, ln in enumerate(ptx.text.split("\n"))
                  if ln.startswith("\t") and not ln.lstrip().startswith((".reg", ".shared", ".param", "//"))]
    assert body_lines
    unmapped = [n for n in body_lines if n not in ptx.line_map]
    assert not unmapped, f"PTX lines without a source location: {unmapped[:5]}"
    files = {os.path.realpath(ptx.line_map[n].file) for n in body_lines}
    assert files == {sample_file}


@pytest.mark.ptxas
@pytest.mark.parametrize("name, target", SAMPLE_TARGETS)
def test_sample_assembles(name, target):
    from ptxgen.ptxas import assemble
    mod = load_sample(name).build(target)
    res = assemble(mod.emit(), target, cache=False)
    assert res.cubin[:4] == b"\x7fELF"
    assert res.resources, "ptxas -v reported no functions"
    for fn, r in res.resources.items():
        assert r.registers > 0, fn
        assert r.spill_stores == 0 and r.spill_loads == 0, f"{fn} spills"


@pytest.mark.gpu
@pytest.mark.parametrize("name", SAMPLES)
def test_sample_runs_on_gpu(name, tmp_path):
    from ptxgen.harness import run_sample
    from ptxgen.runtime import get_context
    s = load_sample(name)
    target = get_context().arch
    if name in HOPPER_ONLY and target != "sm_90a":
        pytest.skip(f"{name} needs an sm_90a GPU; this one is {target}")
    lines = []
    summary = run_sample(name, s.build, s.run, target=target, out_dir=str(tmp_path), print_fn=lines.append)
    print("\n".join(lines))
    assert summary["ran"]
    assert summary["checks"]
