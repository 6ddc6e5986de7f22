// printf, recursion, textures and surfaces, function pointers (indirect calls), globals, atomics, math.
#include <cstdio>
#include <cstdint>

__device__ int counter;
__device__ float table[8] = {1.f, 2.f, 3.f, 4.5f, -1.f, 0.f, 1e-30f, 3.4e38f};
__constant__ double coeffs[4] = {1.0, -0.5, 0.25, 1e300};
__constant__ int8_t small[3] = {-1, 2, -3};
__device__ const char* names[2] = {"alpha", "beta"};
__device__ int64_t big = -9223372036854775807LL;

__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

struct Pair { double a; int b; };
__device__ __noinline__ Pair make_pair(double a, int b) { Pair p{a * 2, b + 1}; return p; }
__device__ __noinline__ float addf(float a, float b) { return a + b; }
__device__ __noinline__ float mulf(float a, float b) { return a * b; }
typedef float (*binop)(float, float);
__device__ binop ops[2] = {addf, mulf};

__global__ void printer(int n) {
  printf("thread %d of %d: fib(%d) = %d, %f %s\n", threadIdx.x, blockDim.x, n, fib(n), table[n & 7],
         names[n & 1]);
}

__global__ void indirect(float* out, int which, Pair p) {
  binop f = ops[which & 1];
  Pair q = make_pair(p.a, p.b);
  out[threadIdx.x] = f(out[threadIdx.x], (float)q.a) + q.b + coeffs[threadIdx.x & 3] + small[threadIdx.x % 3];
}

__global__ void textures(cudaTextureObject_t tex, cudaSurfaceObject_t surf, float* out, int w) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y;
  float4 v = tex2D<float4>(tex, x + 0.5f, y + 0.5f);
  float s = tex1Dfetch<float>(tex, x);
  float2 lod = tex2DLod<float2>(tex, x * 0.1f, y * 0.1f, 1.5f);
  out[y * w + x] = v.x + v.y + v.z + v.w + s + lod.x;
  surf2Dwrite(v.x, surf, x * 4, y);
  float r;
  surf2Dread(&r, surf, x * 4, y);
  out[y * w + x] += r;
}

__global__ void math_atomics(double* d, float* f, unsigned long long* u, int* i, int n) {
  extern __shared__ double dyn[];
  int t = threadIdx.x;
  double x = d[t];
  dyn[t] = sin(x) / (x + 1.0) + exp(x) + sqrt(fabs(x)) + pow(x, 1.5);
  __syncthreads();
  float y = f[t];
  f[t] = __sinf(y) + __expf(y) + rsqrtf(y) + __fdividef(y, 3.f) + erff(y) + tanhf(y) + fmaf(y, y, 1.f);
  atomicAdd(u, 1ull);
  atomicMax(i, t);
  atomicCAS(i + 1, t, t + 1);
  atomicAdd(f + 1, y);
  atomicAdd(d + 1, x);
  atomicExch(i + 2, __popc(t) + __clz(t) + __ffs(t) + __brev(t));
  int local[16];
  for (int k = 0; k < 16; ++k) local[k] = k * t;
  i[t + 3] = local[n & 15] + __shfl_xor_sync(0xffffffff, t, 1) + __all_sync(0xffffffff, t > 2) +
             __reduce_add_sync(0xffffffff, t);
  atomicAdd(&counter, dyn[(t + 1) % blockDim.x] > 0.0);
  __nanosleep(100);
  __threadfence();
  if (t == 0 && n < 0) __trap();
}
