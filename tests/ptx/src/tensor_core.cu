// Tensor-core kernels: WMMA, inline-asm mma.sync/ldmatrix/cp.async, wgmma (sm_90a), tcgen05 (sm_100a).
#include <mma.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cstdint>
#if defined(__CUDA_ARCH_FEAT_SM100_ALL)
#include <cuda/ptx>
#endif
using namespace nvcuda;

__global__ void __launch_bounds__(128) wmma_gemm(const half* a, const half* b, float* c, int n) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fill_fragment(fc, 0.0f);
  int tile = blockIdx.x;
  for (int k = 0; k < n; k += 16) {
    wmma::load_matrix_sync(fa, a + tile * 16 * n + k, n);
    wmma::load_matrix_sync(fb, b + k, n);
    wmma::mma_sync(fc, fa, fb, fc);
  }
  wmma::store_matrix_sync(c + tile * 16 * 16, fc, 16, wmma::mem_row_major);
}

__global__ void wmma_bf16(const __nv_bfloat16* a, const __nv_bfloat16* b, float* c) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fill_fragment(fc, 1.0f);
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 16);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c, fc, 16, wmma::mem_col_major);
}

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__global__ void mma_ldmatrix(const half* __restrict__ a, const half* __restrict__ b, float* __restrict__ d) {
  __shared__ __align__(128) half sa[16 * 16];
  __shared__ __align__(128) half sb[16 * 8];
  int t = threadIdx.x;
  // cp.async: 16-byte asynchronous copies into shared memory
  if (t < 32) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(smem_u32(sa + t * 8)), "l"(a + t * 8));
  }
  if (t < 16) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16;\n" :: "r"(smem_u32(sb + t * 8)), "l"(b + t * 8));
  }
  asm volatile("cp.async.commit_group;\n" ::);
  asm volatile("cp.async.wait_group 0;\n" ::);
  __syncthreads();
  uint32_t ra[4], rb[2];
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(ra[0]), "=r"(ra[1]), "=r"(ra[2]), "=r"(ra[3]) : "r"(smem_u32(sa + (t % 16) * 16 + (t / 16) * 8)));
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(rb[0]), "=r"(rb[1]) : "r"(smem_u32(sb + (t % 16) * 8)));
  float c[4] = {0.f, 0.f, 0.f, 0.f};
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]));
  uint32_t h[2] = {0, 0};
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3}, {%4}, {%0,%1};\n"
               : "+r"(h[0]), "+r"(h[1]) : "r"(ra[0]), "r"(ra[1]), "r"(rb[0]));
  int idx = blockIdx.x * blockDim.x + t;
  d[idx * 4 + 0] = c[0] + __half2float(__ushort_as_half((unsigned short)h[0]));
  d[idx * 4 + 1] = c[1];
  d[idx * 4 + 2] = c[2];
  d[idx * 4 + 3] = c[3] + (float)(h[1] & 1);
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// wgmma m64n8k16 f32 += f16 * f16 with both operands from shared-memory descriptors
__global__ void wgmma_kernel(float* out, uint64_t desc_a, uint64_t desc_b) {
  float d[4] = {0.f, 0.f, 0.f, 0.f};
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %6, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, %4, %5, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "l"(desc_a), "l"(desc_b), "r"(1));
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
  int t = threadIdx.x;
  out[t * 4] = d[0]; out[t * 4 + 1] = d[1]; out[t * 4 + 2] = d[2]; out[t * 4 + 3] = d[3];
}
#endif

#if defined(__CUDA_ARCH_FEAT_SM100_ALL)
// tcgen05 tensor-memory allocation through the cuda::ptx wrappers
__global__ void tcgen05_alloc_kernel(uint32_t* out) {
  __shared__ uint32_t taddr;
  if (threadIdx.x < 32) {
    cuda::ptx::tcgen05_alloc(cuda::ptx::cta_group_1, &taddr, 32u);
    cuda::ptx::tcgen05_relinquish_alloc_permit(cuda::ptx::cta_group_1);
  }
  __syncthreads();
  cuda::ptx::tcgen05_fence_before_thread_sync();
  out[threadIdx.x] = taddr;
  __syncthreads();
  if (threadIdx.x < 32) {
    cuda::ptx::tcgen05_dealloc(cuda::ptx::cta_group_1, taddr, 32u);
  }
}
#endif
