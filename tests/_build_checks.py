"""Checks the builder tests share: the caller's line, the instruction texts a builder emitted, a BuildError raised with
an exact code and message at the test's own line, and a benchmark module's kernels assembled without spills."""
import inspect

import pytest

from ptxgen import BuildError


def here() -> int:
    """The caller's line number."""
    return inspect.currentframe().f_back.f_lineno


def texts(k, start=0):
    """The text of each instruction of k's body from position `start` on."""
    return [st.text() for st in k.fn.body[start:] if type(st).__name__ == "Instr"]


def raises_at(file, cls, code, message, line, fn):
    """fn() must raise exactly `cls` with this code and message, located at `line` of `file` (the
    calling test module's __file__), and render as a compiler-style diagnostic there."""
    with pytest.raises(BuildError) as ei:
        fn()
    e = ei.value
    assert type(e) is cls, (type(e), e)
    assert (e.code, e.message) == (code, message)
    assert e.loc is not None and (e.loc.file, e.loc.line) == (file, line)
    assert str(e).startswith(f"{file}:{line}: error[{code}]: {message}")
    return e


def assembles_without_spills(module, names) -> None:
    """ptxas (sm_90a) assembles `module` without a warning, and each kernel in `names` without spills."""
    from ptxgen.ptxas import assemble
    res = assemble(module.emit(), "sm_90a", cache=False)
    assert not res.warnings, [str(w) for w in res.warnings]
    assert set(names) <= set(res.resources)
    for name in names:
        assert res.resources[name].spill_stores == 0 and res.resources[name].spill_loads == 0, name
