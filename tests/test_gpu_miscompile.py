"""On the GPU, the miscompile that legality.CODE_MISCOMPILE (PTX-W-MISCOMPILE) warns of: cp.async with
.L2::cache_hint stops an sm_90 kernel with an illegal instruction, whatever made the policy and whatever the
module's .target, while the same copy without the hint, and ld.global.L2::cache_hint, move the data.

Each probe runs in its own process (load_module(check=False): by default it refuses the hinted copies):
an illegal instruction leaves the CUDA context unusable."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

# one CTA of 128 threads copies 2 KiB global -> shared (COPY) -> global
_PTX = r""".version 8.0
.target TARGET
.address_size 64
.extern .shared .align 16 .b8 smem[];
.visible .entry probe(.param .u64 pin, .param .u64 pout)
{
	.reg .b32 %r<12>;
	.reg .b64 %rd<10>;
	ld.param.u64 %rd1, [pin];
	ld.param.u64 %rd2, [pout];
	cvta.to.global.u64 %rd1, %rd1;
	cvta.to.global.u64 %rd2, %rd2;
	mov.u32 %r1, %tid.x;
	shl.b32 %r2, %r1, 4;
	cvt.u64.u32 %rd3, %r2;
	add.u64 %rd4, %rd1, %rd3;
	add.u64 %rd5, %rd2, %rd3;
	mov.u32 %r3, smem;
	add.u32 %r4, %r3, %r2;
	createpolicy.fractional.L2::evict_first.b64 %rd6;
COPY
	cp.async.commit_group;
	cp.async.wait_all;
	bar.sync 0;
	ld.shared.v4.u32 {%r5, %r6, %r7, %r8}, [%r4];
	st.global.v4.u32 [%rd5], {%r5, %r6, %r7, %r8};
	ret;
}
"""

_RUN = r"""
import sys
import numpy as np
from ptxgen.runtime import DeviceBuffer, load_module
f = load_module(sys.stdin.read(), check=False).function("probe")
x = np.random.default_rng(0).integers(0, 2**32, 512, dtype=np.uint32)
din, dout = DeviceBuffer.from_numpy(x), DeviceBuffer.zeros(512, np.uint32)
f.launch((1,), (128,), [din, dout], shared_bytes=2048)
try:
    y = dout.to_numpy()
except Exception as e:
    print("ERROR", e)
    sys.exit(3)
print("OK" if (y == x).all() else "WRONG")
"""

HINTED = "\tcp.async.cg.shared.global.L2::cache_hint [%r4], [%rd4], 16, %rd6;"
PROBES = {
    "plain": ("sm_90a", "\tcp.async.cg.shared.global [%r4], [%rd4], 16;", "OK"),
    "ld_hint": ("sm_90a", "\tld.global.L2::cache_hint.v4.u32 {%r5, %r6, %r7, %r8}, [%rd4], %rd6;\n"
                          "\tst.shared.v4.u32 [%r4], {%r5, %r6, %r7, %r8};", "OK"),
    "hinted": ("sm_90a", HINTED, "ILLEGAL"),
    "hinted_src_size": ("sm_90a", "\tmov.u32 %r9, 16;\n"
                                  "\tcp.async.cg.shared.global.L2::cache_hint [%r4], [%rd4], 16, %r9, %rd6;", "ILLEGAL"),
    "hinted_ca_const_policy": ("sm_90a", "\tmov.b64 %rd7, 0x12F0000000000000;\n"
                                         "\tcp.async.ca.shared.global.L2::cache_hint [%r4], [%rd4], 16, %rd7;", "ILLEGAL"),
    "hinted_sm80_module": ("sm_80", HINTED, "ILLEGAL"),
}


@pytest.mark.gpu
@pytest.mark.parametrize("name", list(PROBES))
def test_hinted_cp_async_traps_on_sm90(name):
    from ptxgen.lint import lint_ptx
    from ptxgen.runtime import get_context
    arch = get_context().arch
    if not arch.startswith("sm_9"):
        pytest.skip(f"the miscompile was measured on sm_90; this GPU is {arch}")
    target, copy, want = PROBES[name]
    text = _PTX.replace("TARGET", target).replace("COPY", copy)
    # the linter, told the GPU's target, warns exactly where the run traps, and load_module refuses it
    from ptxgen.errors import LegalityError
    from ptxgen.runtime import load_module
    warned = [d.code for d in lint_ptx(text, name, arch)] == ["PTX-W-MISCOMPILE"]
    assert warned == (want == "ILLEGAL"), lint_ptx(text, name, arch)
    if want == "ILLEGAL":
        with pytest.raises(LegalityError, match="illegal instruction"):
            load_module(text)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-c", _RUN], input=text, capture_output=True, text=True, env=env,
                       timeout=120)
    out = r.stdout + r.stderr
    if want == "OK":
        assert r.returncode == 0 and "OK" in r.stdout, out
    else:
        assert r.returncode != 0 and "ILLEGAL_INSTRUCTION" in out, out
