// Cooperative groups: grid sync, tiled partitions, reductions; clusters with distributed shared memory.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

__global__ void grid_reduce(const float* in, float* partial, float* out, int n) {
  cg::grid_group grid = cg::this_grid();
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  float v = 0.f;
  for (int i = grid.thread_rank(); i < n; i += grid.size()) v += in[i];
  v = cg::reduce(warp, v, cg::plus<float>());
  __shared__ float sums[32];
  if (warp.thread_rank() == 0) sums[warp.meta_group_rank()] = v;
  block.sync();
  if (warp.meta_group_rank() == 0) {
    v = warp.thread_rank() < warp.meta_group_size() ? sums[warp.thread_rank()] : 0.f;
    v = cg::reduce(warp, v, cg::plus<float>());
    if (warp.thread_rank() == 0) partial[blockIdx.x] = v;
  }
  grid.sync();
  if (grid.thread_rank() == 0) {
    float s = 0.f;
    for (int b = 0; b < gridDim.x; ++b) s += partial[b];
    *out = s;
  }
}

__global__ void tiles(int* data) {
  auto block = cg::this_thread_block();
  auto t16 = cg::tiled_partition<16>(block);
  auto t4 = cg::tiled_partition(block, 4);
  int x = data[block.thread_rank()];
  x = t16.shfl_down(x, 1) + t16.any(x > 3) + t16.ballot(x & 1);
  x += cg::reduce(t16, x, cg::greater<int>());
  auto active = cg::coalesced_threads();
  if (x & 1) x += active.size();
  t4.sync();
  data[block.thread_rank()] = x + t4.thread_rank() + __match_any_sync(0xffffffff, x);
}

#if __CUDA_ARCH__ >= 900
__global__ void __cluster_dims__(2, 1, 1) cluster_dsmem(int* out) {
  __shared__ int smem[64];
  cg::cluster_group cluster = cg::this_cluster();
  unsigned rank = cluster.block_rank();
  smem[threadIdx.x] = threadIdx.x + rank * 100;
  cluster.sync();
  int* peer = cluster.map_shared_rank(smem, (rank + 1) % cluster.num_blocks());
  out[blockIdx.x * 64 + threadIdx.x] = peer[threadIdx.x] + cluster.dim_blocks().x;
  cluster.sync();
}

__global__ void __launch_bounds__(256, 1) cluster_runtime(float* out) {
  cg::cluster_group cluster = cg::this_cluster();
  __shared__ float v;
  if (threadIdx.x == 0) v = blockIdx.x;
  cluster.sync();
  float* other = cluster.map_shared_rank(&v, 0);
  out[blockIdx.x] = *other;
}
#endif
