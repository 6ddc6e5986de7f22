"""Small hand-written PTX shared by the ptxas and runtime tests."""

ADD1_TEMPLATE = """\
.version 8.0
.target {target}
.address_size 64

.visible .entry add1(
    .param .u64 p_x,
    .param .u32 p_n
)
{{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .f32 %f<3>;
    .reg .b64 %rd<5>;

    {prologue}ld.param.u64 %rd1, [p_x];
    ld.param.u32 %r1, [p_n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.u32 %p1, %r5, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r5, 4;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.f32 %f1, [%rd4];
    add.f32 %f2, %f1, 0f3F800000;
    st.global.f32 [%rd4], %f2;
DONE:
    ret;
}}
"""


def add1_ptx(target: str = "sm_80", pdl: bool = False) -> str:
    """A kernel that adds 1.0 to each of n floats (`add1(x, n)`), for `target`. pdl=True (sm_90 and
    later): each thread first lets the next grid launch (`griddepcontrol.launch_dependents`) and waits
    for the previous one (`griddepcontrol.wait`), on the line of the first load, so the line numbers
    stay those of the plain kernel."""
    prologue = "griddepcontrol.launch_dependents; griddepcontrol.wait; " if pdl else ""
    return ADD1_TEMPLATE.format(target=target, prologue=prologue)
