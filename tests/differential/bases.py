"""Valid PTX modules that the differential generator mutates (each assembles with ptxas 13.0)."""

CORE = r""".version 8.0
.target sm_80
.address_size 64

.func (.param .b32 ret0) add_one(.param .b32 a0)
{
	.reg .b32 %r<3>;
	ld.param.b32 %r1, [a0];
	add.s32 %r2, %r1, 1;
	st.param.b32 [ret0], %r2;
	ret;
}

.visible .entry core(
	.param .u64 out,
	.param .u64 in,
	.param .u32 n
)
.maxntid 256, 1, 1
{
	.reg .pred %p<4>;
	.reg .b16 %rs<4>;
	.reg .b32 %r<24>;
	.reg .f32 %f<12>;
	.reg .f64 %fd<4>;
	.reg .b64 %rd<12>;
	.shared .align 4 .b8 sbuf[1024];

	ld.param.u64 %rd1, [out];
	ld.param.u64 %rd2, [in];
	ld.param.u32 %r1, [n];
	cvta.to.global.u64 %rd3, %rd1;
	cvta.to.global.u64 %rd4, %rd2;
	mov.u32 %r2, %tid.x;
	mov.u32 %r3, %ctaid.x;
	mov.u32 %r4, %ntid.x;
	mad.lo.s32 %r5, %r3, %r4, %r2;
	setp.ge.u32 %p1, %r5, %r1;
	@%p1 bra $L_exit;
	mul.wide.u32 %rd5, %r5, 4;
	add.s64 %rd6, %rd4, %rd5;
	ld.global.f32 %f1, [%rd6];
	ld.global.nc.v2.f32 {%f2, %f3}, [%rd6+8];
	fma.rn.f32 %f4, %f1, %f2, %f3;
	mul.f32 %f5, %f4, 0f3F000000;
	div.approx.f32 %f6, %f5, %f1;
	sqrt.rn.f32 %f7, %f6;
	cvt.rzi.s32.f32 %r6, %f7;
	cvt.rn.f32.s32 %f8, %r6;
	cvt.f64.f32 %fd1, %f8;
	add.f64 %fd2, %fd1, 0d3FF0000000000000;
	cvt.rn.f32.f64 %f9, %fd2;
	shl.b32 %r7, %r5, 2;
	and.b32 %r8, %r7, 1020;
	xor.b32 %r9, %r8, %r2;
	shr.u32 %r10, %r9, 1;
	popc.b32 %r11, %r10;
	bfe.u32 %r12, %r10, 3, 5;
	prmt.b32 %r13, %r12, %r11, 0x3210;
	min.s32 %r14, %r13, %r6;
	selp.b32 %r15, %r14, %r13, %p1;
	setp.lt.f32 %p2, %f9, %f1;
	shfl.sync.bfly.b32 %r16, %r15, 1, 31, -1;
	vote.sync.ballot.b32 %r17, %p2, -1;
	mov.u32 %r18, sbuf;
	st.shared.u32 [%r18], %r17;
	bar.sync 0;
	ld.shared.u32 %r19, [%r18+4];
	atom.global.add.u32 %r20, [%rd3], %r19;
	red.global.add.f32 [%rd3+4], %f9;
	cvt.u16.u32 %rs1, %r20;
	add.u16 %rs2, %rs1, 7;
	cvt.u32.u16 %r21, %rs2;
	{
		.param .b32 a0;
		.param .b32 ret0;
		st.param.b32 [a0], %r21;
		call.uni (ret0), add_one, (a0);
		ld.param.b32 %r22, [ret0];
	}
	add.s64 %rd7, %rd3, %rd5;
	st.global.u32 [%rd7], %r22;
	st.global.v2.f32 [%rd7+8], {%f9, %f4};
$L_exit:
	ret;
}
"""

TENSOR = r""".version 8.0
.target sm_80
.address_size 64

.visible .entry tensor(.param .u64 out)
{
	.reg .pred %p<3>;
	.reg .b32 %r<20>;
	.reg .f32 %f<12>;
	.reg .b64 %rd<6>;
	.shared .align 16 .b8 tile[2048];

	ld.param.u64 %rd1, [out];
	cvta.to.global.u64 %rd2, %rd1;
	mov.u32 %r1, tile;
	mov.u32 %r2, %tid.x;
	shl.b32 %r3, %r2, 4;
	add.s32 %r4, %r1, %r3;
	cp.async.cg.shared.global [%r4], [%rd2], 16;
	cp.async.commit_group;
	cp.async.wait_group 0;
	bar.sync 0;
	ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r5, %r6, %r7, %r8}, [%r4];
	ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%r9, %r10}, [%r4];
	mov.f32 %f1, 0f00000000;
	mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r5, %r6, %r7, %r8}, {%r9, %r10}, {%f1, %f1, %f1, %f1};
	mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f5, %f6, %f7, %f8}, {%r5, %r6, %r7, %r8}, {%r9, %r10}, {%f1, %f2, %f3, %f4};
	redux.sync.add.u32 %r11, %r2, -1;
	mbarrier.init.shared.b64 [%r1], 32;
	mbarrier.arrive.shared.b64 %rd3, [%r1];
	mbarrier.test_wait.shared.b64 %p1, [%r1], %rd3;
	st.global.v4.f32 [%rd2], {%f5, %f6, %f7, %f8};
	st.global.u32 [%rd2+16], %r11;
	ret;
}
"""

HOPPER = r""".version 8.0
.target sm_90a
.address_size 64

.visible .entry hopper(.param .align 64 .b8 tmap[128], .param .u64 out)
.reqntid 128, 1, 1
{
	.reg .pred %p<4>;
	.reg .b32 %r<16>;
	.reg .f32 %f<8>;
	.reg .b64 %rd<8>;
	.shared .align 128 .b8 smem[4096];
	.shared .align 8 .b64 bar;

	mov.u64 %rd1, tmap;
	ld.param.u64 %rd2, [out];
	mov.u32 %r1, smem;
	mov.u32 %r2, bar;
	mov.u32 %r3, %tid.x;
	setp.eq.u32 %p1, %r3, 0;
	@%p1 mbarrier.init.shared::cta.b64 [%r2], 1;
	fence.proxy.async.shared::cta;
	bar.sync 0;
	mov.u32 %r4, 0;
	@%p1 cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r4, %r4}], [%r2];
	@%p1 mbarrier.arrive.expect_tx.shared::cta.b64 %rd3, [%r2], 4096;
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
	elect.sync %r5|%p3, -1;
	mov.u32 %r6, %cluster_ctarank;
	wgmma.fence.sync.aligned;
	mov.b64 %rd4, 0;
	mov.f32 %f1, 0f00000000;
	wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd4, %rd4, 0, 1, 1, 0, 0;
	wgmma.commit_group.sync.aligned;
	wgmma.wait_group.sync.aligned 0;
	cvta.to.global.u64 %rd5, %rd2;
	st.global.v4.f32 [%rd5], {%f1, %f2, %f3, %f4};
	barrier.cluster.arrive.aligned;
	barrier.cluster.wait.aligned;
	ret;
}
"""

BASES = {"core": CORE, "tensor": TENSOR, "hopper": HOPPER}
