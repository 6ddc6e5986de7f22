"""An illegal instruction in a builder script is reported at the script's own file and line:
at build time when the builder can tell, otherwise from the ptxas or driver JIT log."""
import inspect

import pytest

import ptxgen as pg


def _kernel_with_raw_error():
    m = pg.Module("sm_90a")
    k = m.entry("bad")
    r = k.mov(1, type=pg.u32)
    k.add(r, 2)
    line = inspect.currentframe().f_lineno + 1
    k.raw("add.u32 %r0, %undeclared_reg, 1;")   # the builder cannot check raw text
    k.ret()
    return m, line


def test_wrong_register_type_in_mma_is_caught_at_build_time():
    m = pg.Module("sm_90a")
    k = m.entry("k")
    a = k.regs(pg.f32, 4)          # A fragments are .b32 registers holding packed halves, not .f32
    b = k.regs(pg.b32, 2)
    c = k.regs(pg.f32, 4)
    line = inspect.currentframe().f_lineno + 2
    with pytest.raises(pg.BuildError) as ei:
        k.mma_sync("m16n8k16", c, a, b, c, atype="bf16", ctype="f32")
    e = ei.value
    assert e.loc.file == __file__ and e.loc.line == line
    assert "f32" in e.message
    assert str(e).startswith(f"{__file__}:{line}: error[")


@pytest.mark.ptxas
def test_raw_text_error_is_mapped_from_the_ptxas_log():
    from ptxgen.ptxas import assemble
    m, line = _kernel_with_raw_error()
    with pytest.raises(pg.AssemblyError) as ei:
        assemble(m.emit(), "sm_90a", cache=False)
    text = str(ei.value)
    assert f"{__file__}:{line}" in text
    assert "%undeclared_reg" in text   # the offending PTX line is quoted
    located = [d for d in ei.value.diagnostics if d.loc is not None and d.loc.file == __file__]
    assert located and located[0].loc.line == line


@pytest.mark.gpu
def test_raw_text_error_is_mapped_from_the_jit_log():
    from ptxgen.runtime import Module
    m, line = _kernel_with_raw_error()
    with pytest.raises(pg.JitError) as ei:
        Module.load(m.emit())
    text = str(ei.value)
    assert f"{__file__}:{line}" in text
    assert "%undeclared_reg" in text
