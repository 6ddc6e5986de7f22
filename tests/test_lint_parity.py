"""Every kernel the project builds (the samples, and the benchmarks' own kernels) lints clean both ways:
lint_module on the builder's IR and lint_ptx on the emitted text. The two walk different operand
representations (builder objects against parsed ones), so a check that only one of them gets right
shows up here as a disagreement on known-good code."""
import pytest

from ptxgen.lint import lint_module, lint_ptx

from _samples import load_bench, load_sample

CASES = [("sample", name, target) for name in ("axpy", "block_reduce", "hgemm_mma", "tma_tile", "wgmma_tile",
                                               "gemm_ampere", "gemm_hopper") for target in ("sm_90a",)] + \
        [("sample", "gemm_ampere", "sm_80"), ("sample", "hgemm_mma", "sm_80"),
         ("bench", "mma_peak", "sm_90a"), ("bench", "sm_map", "sm_90a")]


@pytest.mark.parametrize("kind, name, target", CASES, ids=lambda x: str(x))
def test_builder_ir_and_emitted_text_lint_the_same(kind, name, target):
    mod = (load_sample if kind == "sample" else load_bench)(name)
    m = mod.build(target)
    m = m[0] if isinstance(m, tuple) else m            # mma_peak.build returns (module, shared bytes)
    text = m.emit().text
    assert [str(d) for d in lint_module(m)] == []
    assert [str(d) for d in lint_ptx(text, f"{name}.ptx")] == []


def test_traced_gemm_kernels_lint_clean_both_ways():
    h = load_sample("gemm_hopper")
    m = h.build("sm_90a", [h.Config("nt", 1, lag=0, trace=1), h.Config("nn", 1, trace=1)])
    assert lint_module(m) == [] and lint_ptx(m.emit().text, "traced.ptx") == []
