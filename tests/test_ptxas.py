"""ptxgen.ptxas: target checks, the -v report parser, the cubin cache, and real ptxas runs (marked `ptxas`)."""
import os
import stat
import subprocess

import pytest

from ptxgen import ptxas as P
from ptxgen.diag import SourceLoc
from ptxgen.errors import AssemblyError, TargetError, ToolNotFoundError, UsageError
from ptxgen.linemap import PtxText

from _kernels import add1_ptx

BAD_LINE = 27  # the `add.f32` line, 1-based

SHARED = """\
.version 8.0
.target sm_90a
.address_size 64

.visible .entry smem(.param .u64 p_x)
{
    .shared .align 4 .b8 sm[1024];
    .reg .b32 %r<3>;
    .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [p_x];
    mov.u32 %r1, %tid.x;
    mov.u64 %rd3, sm;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd4, %rd3, %rd2;
    st.shared.u32 [%rd4], %r1;
    bar.sync 0;
    ld.shared.u32 %r2, [%rd4];
    cvta.to.global.u64 %rd5, %rd1;
    add.s64 %rd5, %rd5, %rd2;
    st.global.u32 [%rd5], %r2;
    ret;
}
"""

# a multicast bulk copy on plain sm_90: ptxas accepts it with a located advisory warning (line 13)
MULTICAST = """\
.version 8.0
.target sm_90
.address_size 64
.visible .entry w(.param .u64 p)
{
  .reg .b64 %rd<3>;
  .reg .b32 %r<3>;
  .reg .b16 %h<2>;
  .shared .align 16 .b8 sm[256];
  .shared .align 8 .b64 bar;
  ld.param.u64 %rd1, [p];
  mov.b16 %h1, 3;
  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [sm], [%rd1], 256, [bar], %h1;
  ret;
}
"""

# real `ptxas -v` output (CUDA 13.0), two functions, one of them a non-entry .func
REAL_LOG_SM80 = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'k2' for 'sm_80'
ptxas info    : Function properties for k2
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 1 barriers, 1024 bytes smem, 360 bytes cmem[0]
ptxas info    : Compile time = 4.637 ms
ptxas info    : Function properties for helper
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
"""
REAL_LOG_SPILL = """\
ptxas info    : Overriding maximum register limit 256 for 'spill' with  32 of maxrregcount option
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'spill' for 'sm_90a'
ptxas info    : Function properties for spill
    520 bytes stack frame, 548 bytes spill stores, 748 bytes spill loads
ptxas info    : Used 32 registers, used 0 barriers, 520 bytes cumulative stack size
ptxas info    : Compile time = 28.874 ms
"""
# an older layout: no barriers field, several constant banks, lmem
OLD_LOG = """\
ptxas info    : Compiling entry function '_Z4axpyfPfS_' for 'sm_52'
ptxas info    : Function properties for _Z4axpyfPfS_
    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 12 registers, 16 bytes lmem, 344 bytes cmem[0], 8 bytes cmem[2]
"""


def add1(target):
    return add1_ptx(target)


# ---------------------------------------------------------------------------------------------
# no ptxas needed

def test_parse_real_sm80_report():
    r = P.parse_resource_usage(REAL_LOG_SM80)
    k = r["k2"]
    assert (k.registers, k.barriers, k.shared_bytes, k.cmem) == (10, 1, 1024, {0: 360})
    assert (k.stack_frame, k.spill_stores, k.spill_loads) == (0, 0, 0)
    assert k.is_entry and k.target == "sm_80"
    assert not r["helper"].is_entry and r["helper"].registers == 0


def test_parse_spills_and_cumulative_stack():
    s = P.parse_resource_usage(REAL_LOG_SPILL)["spill"]
    assert (s.registers, s.stack_frame, s.spill_stores, s.spill_loads, s.cumulative_stack) == (32, 520, 548, 748, 520)


def test_parse_older_layout():
    k = P.parse_resource_usage(OLD_LOG)["_Z4axpyfPfS_"]
    assert (k.registers, k.barriers, k.stack_frame, k.spill_stores) == (12, 0, 8, 4)
    assert k.cmem == {0: 344, 2: 8}


@pytest.mark.parametrize("bad", ["sm90", "sm_9", "compute90", "sm_90b", "", "sm_999"])
def test_bad_target_is_rejected_before_running_ptxas(bad, monkeypatch):
    def boom(*a, **k):
        raise AssertionError("ptxas must not run for a bad target")
    monkeypatch.setattr(P.subprocess, "run", boom)
    with pytest.raises(TargetError) as ei:
        P.assemble(add1("sm_80"), bad)
    assert repr(bad) in str(ei.value)


def test_target_must_be_a_string():
    with pytest.raises(TargetError, match="string"):
        P.check_target(90)
    assert P.check_target("sm_90a") == "sm_90a"


def test_missing_ptxas_says_how_to_get_it(monkeypatch):
    monkeypatch.setattr(P, "find_ptxas", lambda: None)
    with pytest.raises(ToolNotFoundError, match="CUDA toolkit"):
        P.assemble(add1("sm_80"), "sm_80")


def test_find_ptxas_falls_back_to_cuda_home(monkeypatch, tmp_path):
    fake = tmp_path / "bin" / "ptxas"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(P.shutil, "which", lambda name: None)
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    assert P.find_ptxas() == str(fake)


def test_bad_options_are_usage_errors():
    with pytest.raises(UsageError, match="opt_level"):
        P._build_args("sm_80", 7, ())
    with pytest.raises(UsageError, match="sequence of strings"):
        P._build_args("sm_80", None, "-maxrregcount 32")


def test_default_cache_dir_env(monkeypatch, tmp_path):
    monkeypatch.setenv("PTXGEN_CACHE_DIR", str(tmp_path / "c"))
    assert P.default_cache_dir() == tmp_path / "c"


def test_cache_key_changes_with_each_input():
    base = P._cache_key("ptx", "sm_90a", "13.0.88", ["-arch=sm_90a"])
    assert base != P._cache_key("ptx ", "sm_90a", "13.0.88", ["-arch=sm_90a"])
    assert base != P._cache_key("ptx", "sm_80", "13.0.88", ["-arch=sm_90a"])
    assert base != P._cache_key("ptx", "sm_90a", "13.0.76", ["-arch=sm_90a"])
    assert base != P._cache_key("ptx", "sm_90a", "13.0.88", ["-arch=sm_90a", "-O0"])


def test_cache_roundtrip_and_corruption(tmp_path):
    entry = tmp_path / "k.cubin"
    P._cache_write(entry, b"\x7fELFcubin", "ptxas info : log")
    assert P._cache_read(entry) == (b"\x7fELFcubin", "ptxas info : log")
    entry.write_bytes(entry.read_bytes()[:-2])  # truncated
    assert P._cache_read(entry) is None
    entry.write_bytes(b"garbage")
    assert P._cache_read(entry) is None
    assert P._cache_read(tmp_path / "absent.cubin") is None
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]


def test_cache_write_into_unusable_dir_does_not_raise(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    P._cache_write(blocker / "sub" / "k.cubin", b"x", "")  # parent is a file: silently no cache


# ---------------------------------------------------------------------------------------------
# real ptxas

@pytest.mark.ptxas
@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_assemble_tiny_kernel_reports_resources(target, tmp_path):
    r = P.assemble(add1(target), target, cache_dir=tmp_path)
    assert r.cubin[:4] == b"\x7fELF"
    assert r.target == target and not r.cached and r.warnings == []
    k = r.resources["add1"]
    assert k.registers > 0 and k.is_entry and k.target == target
    assert (k.spill_stores, k.spill_loads, k.stack_frame, k.shared_bytes) == (0, 0, 0, 0)
    assert "Used" in r.log and r.ptxas_version


@pytest.mark.ptxas
def test_assemble_reports_shared_and_barriers(tmp_path):
    k = P.assemble(SHARED, "sm_90a", cache_dir=tmp_path).resources["smem"]
    assert k.shared_bytes == 1024 and k.barriers == 1 and k.registers > 0


@pytest.mark.ptxas
def test_assemble_reports_spills(tmp_path):
    n = 64
    body = [f"  ld.global.volatile.f32 %f{i}, [%rd1+{4 * i}];" for i in range(n)]
    body.append(f"  mov.f32 %f{n}, 0f00000000;")
    body += [f"  fma.rn.f32 %f{n}, %f{i}, %f{(i * 7) % n}, %f{n};" for i in range(n)]
    body += [f"  st.global.volatile.f32 [%rd1+{4 * i + 1024}], %f{i};" for i in range(n)]
    ptx = "\n".join([".version 8.0", ".target sm_90a", ".address_size 64",
                     ".visible .entry spill(.param .u64 p)", "{", f"  .reg .f32 %f<{n + 2}>;",
                     "  .reg .b64 %rd<3>;", "  ld.param.u64 %rd1, [p];", "  cvta.to.global.u64 %rd1, %rd1;",
                     *body, f"  st.global.f32 [%rd1], %f{n};", "  ret;", "}", ""])
    r = P.assemble(ptx, "sm_90a", extra_args=["-maxrregcount", "32", "--warn-on-spills"], cache_dir=tmp_path)
    s = r.resources["spill"]
    assert s.registers <= 32 and s.spill_stores > 0 and s.spill_loads > 0 and s.stack_frame > 0
    assert any("spilled" in w.message and w.loc is None for w in r.warnings)


@pytest.mark.ptxas
def test_error_is_mapped_to_user_file_and_line(tmp_path):
    text = add1("sm_80").replace("add.f32 %f2, %f1, 0f3F800000;", "add.f32 %f2, %f1, foo;")
    user = SourceLoc("/home/me/my_kernels.py", 123, None, "build_add1")
    ptx = PtxText(text, {BAD_LINE: user}, "add1.ptx")
    with pytest.raises(AssemblyError) as ei:
        P.assemble(ptx, "sm_80", cache_dir=tmp_path)
    msg = str(ei.value)
    assert "/home/me/my_kernels.py:123: error: Unknown symbol 'foo'" in msg
    assert f"    PTX line {BAD_LINE}: add.f32 %f2, %f1, foo;" in msg
    assert ", line 27;" not in msg  # the raw form was rewritten
    err = ei.value
    assert ", line 27;" in err.log
    assert err.diagnostics and all(d.code == "PTXAS-E" and d.loc == user for d in err.diagnostics)
    assert not list(tmp_path.iterdir())  # failures are not cached


@pytest.mark.ptxas
def test_located_warning_is_mapped(tmp_path):
    user = SourceLoc("tma.py", 9)
    r = P.assemble(PtxText(MULTICAST, {13: user}, "mc.ptx"), "sm_90", cache_dir=tmp_path)
    assert len(r.warnings) == 1
    w = r.warnings[0]
    assert w.code == "PTXAS-W" and w.loc == user and "multicast" in w.message
    assert w.notes[0].startswith("PTX line 13: cp.async.bulk")


@pytest.mark.ptxas
def test_second_call_is_a_cache_hit_without_running_ptxas(tmp_path, monkeypatch):
    first = P.assemble(add1("sm_90a"), "sm_90a", opt_level=3, cache_dir=tmp_path)
    assert not first.cached

    def boom(*a, **k):
        raise AssertionError("ptxas ran on a cache hit")
    monkeypatch.setattr(P.subprocess, "run", boom)
    second = P.assemble(add1("sm_90a"), "sm_90a", opt_level=3, cache_dir=tmp_path)
    assert second.cached and second.cubin == first.cubin
    assert second.resources == first.resources
    # another opt level is another key, so ptxas would have to run
    with pytest.raises(AssertionError, match="cache hit"):
        P.assemble(add1("sm_90a"), "sm_90a", opt_level=0, cache_dir=tmp_path)


@pytest.mark.ptxas
def test_cache_default_dir_from_env(tmp_path, monkeypatch):
    monkeypatch.setenv("PTXGEN_CACHE_DIR", str(tmp_path / "cc"))
    P.assemble(add1("sm_80"), "sm_80")
    assert P.assemble(add1("sm_80"), "sm_80").cached
    assert len(list((tmp_path / "cc").glob("*.cubin"))) == 1


@pytest.mark.ptxas
def test_corrupt_cache_entry_is_rebuilt(tmp_path):
    P.assemble(add1("sm_80"), "sm_80", cache_dir=tmp_path)
    (entry,) = tmp_path.glob("*.cubin")
    entry.write_bytes(b"PTXGEN-CUBIN-1\n{not json")
    r = P.assemble(add1("sm_80"), "sm_80", cache_dir=tmp_path)
    assert not r.cached and r.cubin[:4] == b"\x7fELF"
    assert P.assemble(add1("sm_80"), "sm_80", cache_dir=tmp_path).cached


@pytest.mark.ptxas
def test_unwritable_cache_dir_falls_back_to_no_cache(tmp_path):
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("x")
    for _ in range(2):
        r = P.assemble(add1("sm_80"), "sm_80", cache_dir=blocker / "cubin")
        assert not r.cached and r.cubin[:4] == b"\x7fELF"


@pytest.mark.ptxas
def test_cache_false_neither_reads_nor_writes(tmp_path, monkeypatch):
    monkeypatch.setenv("PTXGEN_CACHE_DIR", str(tmp_path))
    P.assemble(add1("sm_80"), "sm_80", cache=False)
    assert not list(tmp_path.iterdir())


@pytest.mark.ptxas
def test_timeout_is_an_assembly_error(tmp_path, monkeypatch):
    P.ptxas_version()  # cached before run() is replaced

    def slow(cmd, **kw):
        raise subprocess.TimeoutExpired(cmd, kw.get("timeout"))
    monkeypatch.setattr(P.subprocess, "run", slow)
    with pytest.raises(AssemblyError, match="did not finish within 5 s"):
        P.assemble(add1("sm_80"), "sm_80", cache=False, timeout_s=5)


@pytest.mark.ptxas
def test_ptx_target_newer_than_arch_is_an_assembly_error(tmp_path):
    with pytest.raises(AssemblyError, match="sm_80"):
        P.assemble(add1("sm_90a"), "sm_80", cache_dir=tmp_path)


@pytest.mark.ptxas
def test_version_string():
    v = P.ptxas_version()
    assert v and v[0].isdigit()
    assert os.path.basename(P.find_ptxas()).startswith("ptxas")
