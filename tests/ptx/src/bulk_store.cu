// Bulk copies and reductions from shared to global memory that complete through bulk async-groups
// (cp.async.bulk.commit_group / wait_group / wait_group.read) through cuda::ptx (sm_90+), in the shapes an
// epilogue takes: rings of buffers, an elected thread, a read-back after the full wait.
#include <cuda.h>
#include <cstdint>
#include <cuda/ptx>
namespace ptx = cuda::ptx;

#if __CUDA_ARCH__ >= 900
// a ring of two output buffers: thread 0 stores buffer k%2 with a bulk copy, and waits until at most one
// store (the other buffer's) may still read before the buffer is written again
__global__ void ring_bulk(float* out, int rounds) {
  __shared__ __align__(128) float buf[2][128];
  for (int k = 0; k < rounds; ++k) {
    float* b = buf[k & 1];
    if (threadIdx.x == 0) ptx::cp_async_bulk_wait_group_read(ptx::n32_t<1>());
    __syncthreads();
    b[threadIdx.x] = k * 1.0f + threadIdx.x;
    ptx::fence_proxy_async(ptx::space_shared);
    __syncthreads();
    if (threadIdx.x == 0) {
      ptx::cp_async_bulk(ptx::space_global, ptx::space_shared, out + k * 128, b, sizeof(float) * 128);
      ptx::cp_async_bulk_commit_group();
    }
  }
  if (threadIdx.x == 0) ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>());
}

// TMA tensor stores from a ring of three buffers, the wait at the end of each round
__global__ void ring_tma(const __grid_constant__ CUtensorMap tmap, int rounds) {
  __shared__ __align__(128) float buf[3][32 * 32];
  for (int k = 0; k < rounds; ++k) {
    float* b = buf[k % 3];
    for (int i = threadIdx.x; i < 32 * 32; i += blockDim.x) b[i] = k + i;
    ptx::fence_proxy_async(ptx::space_shared);
    __syncthreads();
    if (threadIdx.x == 0) {
      int32_t coords[2] = {0, 32 * k};
      ptx::cp_async_bulk_tensor(ptx::space_global, ptx::space_shared, &tmap, coords, b);
      ptx::cp_async_bulk_commit_group();
      ptx::cp_async_bulk_wait_group_read(ptx::n32_t<2>());
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) ptx::cp_async_bulk_wait_group(ptx::n32_t<0>());
}

// a bulk reduction into global memory, read back by the same thread after the full wait
__global__ void reduce_then_read(float* out, float* flag) {
  __shared__ __align__(128) float tile[64];
  if (threadIdx.x < 64) tile[threadIdx.x] = threadIdx.x;
  ptx::fence_proxy_async(ptx::space_shared);
  __syncthreads();
  if (threadIdx.x == 0) {
    ptx::cp_reduce_async_bulk(ptx::space_global, ptx::space_shared, ptx::op_add, out, tile, sizeof(tile));
    ptx::cp_async_bulk_commit_group();
    ptx::cp_async_bulk_wait_group(ptx::n32_t<0>());
    *flag = out[0];
  }
}

// one lane of warp 0, elected with elect.sync, stores; the same flag decides who waits
__global__ void elected_store(float* out) {
  __shared__ __align__(128) float tile[256];
  tile[threadIdx.x] = threadIdx.x;
  ptx::fence_proxy_async(ptx::space_shared);
  __syncthreads();
  unsigned elected = 0;
  if (threadIdx.x < 32)
    asm volatile("{\n\t.reg .pred p;\n\telect.sync _|p, 0xffffffff;\n\tselp.u32 %0, 1, 0, p;\n\t}" : "=r"(elected));
  bool leader = elected != 0;
  if (leader) {
    ptx::cp_async_bulk(ptx::space_global, ptx::space_shared, out + blockIdx.x * 256, tile, sizeof(tile));
    ptx::cp_async_bulk_commit_group();
  }
  __syncthreads();
  if (leader) ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>());
}
#else
// before sm_90 the same epilogue writes global memory from every thread
__global__ void ring_plain(float* out, int rounds) {
  __shared__ float buf[2][128];
  for (int k = 0; k < rounds; ++k) {
    float* b = buf[k & 1];
    b[threadIdx.x] = k * 1.0f + threadIdx.x;
    __syncthreads();
    out[k * 128 + threadIdx.x] = b[127 - threadIdx.x];
  }
}
#endif
