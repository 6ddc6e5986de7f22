// TMA and mbarrier through cuda::ptx (sm_90+), mbarrier/cp.async pipeline through inline asm (sm_80+).
#include <cuda.h>
#include <cstdint>
#include <cuda/ptx>
#include <cuda/barrier>
namespace ptx = cuda::ptx;

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// mbarrier with inline asm: works from sm_80
__global__ void mbarrier_asm(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ __align__(8) uint64_t bar;
  __shared__ __align__(16) float buf[256];
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared.b64 [%0], %1;" :: "r"(smem_u32(&bar)), "r"(blockDim.x));
  }
  __syncthreads();
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(smem_u32(buf + threadIdx.x)), "l"(in + threadIdx.x));
  asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];" :: "r"(smem_u32(&bar)));
  uint64_t state;
  asm volatile("mbarrier.arrive.shared.b64 %0, [%1];" : "=l"(state) : "r"(smem_u32(&bar)));
  uint32_t done = 0;
  while (!done) {
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "mbarrier.test_wait.shared.b64 p, [%1], %2;\n\t"
        "selp.u32 %0, 1, 0, p;\n\t}"
        : "=r"(done) : "r"(smem_u32(&bar)), "l"(state));
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = buf[threadIdx.x] * 2.0f;
}

// cuda::barrier with memcpy_async (lowers to mbarrier on sm_80+)
__global__ void barrier_memcpy(const int* in, int* out, int n) {
  __shared__ int tile[512];
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  if (threadIdx.x == 0) init(&bar, blockDim.x);
  __syncthreads();
  cuda::memcpy_async(tile, in + blockIdx.x * 512, sizeof(int) * 512, bar);
  bar.arrive_and_wait();
  for (int i = threadIdx.x; i < 512 && i < n; i += blockDim.x) out[blockIdx.x * 512 + i] = tile[i] + 1;
}

#if __CUDA_ARCH__ >= 900
// TMA tile load through a tensor map passed by value, completed on an mbarrier
__global__ void tma_load(const __grid_constant__ CUtensorMap tmap, float* out, int x0, int y0) {
  __shared__ __align__(128) float tile[32 * 32];
  __shared__ __align__(8) uint64_t bar;
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&bar, 1);
    ptx::fence_proxy_async(ptx::space_shared);
  }
  __syncthreads();
  uint64_t token = 0;
  if (threadIdx.x == 0) {
    int32_t coords[2] = {x0, y0};
    ptx::cp_async_bulk_tensor(ptx::space_shared, ptx::space_global, tile, &tmap, coords, &bar);
    token = ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &bar,
                                           sizeof(tile));
  } else {
    token = ptx::mbarrier_arrive(&bar);
  }
  while (!ptx::mbarrier_try_wait(&bar, token)) {
  }
  out[threadIdx.x] = tile[threadIdx.x];
  __syncthreads();
  if (threadIdx.x == 0) {
    ptx::fence_proxy_async(ptx::space_shared);
    int32_t coords[2] = {x0, y0};
    ptx::cp_async_bulk_tensor(ptx::space_global, ptx::space_shared, &tmap, coords, tile);
    ptx::cp_async_bulk_commit_group();
    ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>());
  }
}

// bulk (non-tensor) copy with parity waits, multicast in a cluster
__global__ void __cluster_dims__(2, 1, 1) bulk_copy(const float* in, float* out) {
  __shared__ __align__(128) float buf[1024];
  __shared__ __align__(8) uint64_t bar;
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&bar, 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &bar, sizeof(buf));
    ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, buf, in + blockIdx.x * 1024, sizeof(buf), &bar);
  }
  while (!ptx::mbarrier_try_wait_parity(&bar, 0)) {
  }
  out[blockIdx.x * 1024 + threadIdx.x] = buf[threadIdx.x] + ptx::get_sreg_cluster_ctarank();
}
#endif
