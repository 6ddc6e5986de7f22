// Large, fully unrolled kernels for bench/lint_speed.py: UNROLL (and UNROLL2, a second kernel) set the PTX
// size, about 41 lines per step with -lineinfo.
#ifndef UNROLL
#define UNROLL 1500
#endif
#include <cuda_fp16.h>

template <int N>
__global__ void __launch_bounds__(128) fma_chain(const float* __restrict__ a, const int* __restrict__ idx,
                                                 float* __restrict__ out, float s) {
  float acc[16];
#pragma unroll
  for (int j = 0; j < 16; ++j) acc[j] = a[threadIdx.x + j];
#pragma unroll
  for (int i = 0; i < N; ++i) {
    float x = a[idx[i * 7 % 1024] + threadIdx.x];
#pragma unroll
    for (int j = 0; j < 16; ++j) acc[j] = fmaf(acc[j], x, s * (j + i));
    if (x > acc[i % 16]) acc[(i + 3) % 16] += __shfl_xor_sync(0xffffffffu, acc[i % 16], i % 32);
  }
  float r = 0.f;
#pragma unroll
  for (int j = 0; j < 16; ++j) r += acc[j];
  out[blockIdx.x * blockDim.x + threadIdx.x] = r;
}

template __global__ void fma_chain<UNROLL>(const float*, const int*, float*, float);
#ifdef UNROLL2
template __global__ void fma_chain<UNROLL2>(const float*, const int*, float*, float);
#endif
