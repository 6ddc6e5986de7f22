"""Shared test setup: tests marked `gpu` or `ptxas` are skipped, with the reason, where that is absent."""
from __future__ import annotations

import pytest


def pytest_configure(config):
    # also declared in pyproject.toml; repeated so the markers exist when pytest runs from elsewhere
    config.addinivalue_line("markers", "ptxas: needs the ptxas assembler on PATH (skipped when absent)")
    config.addinivalue_line("markers", "gpu: needs a CUDA driver and GPU (skipped when absent)")


def pytest_collection_modifyitems(config, items):
    """Add a skip marker, with the reason, to `gpu` items when no GPU and to `ptxas` items when no ptxas."""
    reasons = {}
    for item in items:
        for mark in ("gpu", "ptxas"):
            if item.get_closest_marker(mark) is None:
                continue
            if mark not in reasons:
                reasons[mark] = _missing(mark)  # probe each once, and only when a test needs it
            if reasons[mark]:
                item.add_marker(pytest.mark.skip(reason=reasons[mark]))


def _missing(mark: str):
    """Why the `mark` resource is unusable here, or None when it is available."""
    if mark == "gpu":
        from ptxgen.runtime import no_gpu_reason
        reason = no_gpu_reason()
        return f"needs a GPU: {reason}" if reason else None
    from ptxgen.ptxas import find_ptxas
    return None if find_ptxas() else "needs ptxas (CUDA toolkit) on PATH, in $CUDA_HOME/bin or /usr/local/cuda/bin"
