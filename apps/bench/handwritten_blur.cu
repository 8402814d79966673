// The hand-written CUDA baseline for the 3x3 blur: what a careful CUDA programmer writes. Each
// thread makes 4 adjacent outputs of a strip of rows: 16-byte loads and stores along x, and a
// sliding window of three blurred rows in registers, so each input row is read once per strip.
// Compiled to PTX by nvcc at build time and loaded through the driver API by the benchmark.
//
// in: (w + 2) x (h + 2) floats, row stride `in_stride` (a multiple of 4), in(-1, -1) first.
// out: w x h floats, dense. w is a multiple of 4 * blockDim.x, h of rows * blockDim.y.

#define ROWS 16

__device__ __forceinline__ float4 blurRow(const float *__restrict__ row) {
  // row points at in(x - 1, y), 16-byte aligned: in(x - 1) .. in(x + 4) are the six inputs.
  float4 a = *reinterpret_cast<const float4 *>(row);
  float2 b = *reinterpret_cast<const float2 *>(row + 4);
  const float third = 1.0f / 3.0f;
  return make_float4((a.x + a.y + a.z) * third, (a.y + a.z + a.w) * third, (a.z + a.w + b.x) * third,
                     (a.w + b.x + b.y) * third);
}

extern "C" __global__ void __launch_bounds__(256) handwritten_blur(const float *__restrict__ in, float *__restrict__ out,
                                                                  int w, int in_stride) {
  const int x = 4 * (blockIdx.x * blockDim.x + threadIdx.x);
  const int y0 = (blockIdx.y * blockDim.y + threadIdx.y) * ROWS;
  // Input row y lives at (y + 1) * in_stride; column x - 1 at offset x.
  const float *column = in + x;
  float4 r0 = blurRow(column + size_t(y0) * in_stride);     // row y0 - 1
  float4 r1 = blurRow(column + size_t(y0 + 1) * in_stride); // row y0
  const float third = 1.0f / 3.0f;
#pragma unroll
  for (int i = 0; i < ROWS; ++i) {
    float4 r2 = blurRow(column + size_t(y0 + i + 2) * in_stride); // row y0 + i + 1
    float4 o = make_float4((r0.x + r1.x + r2.x) * third, (r0.y + r1.y + r2.y) * third, (r0.z + r1.z + r2.z) * third,
                           (r0.w + r1.w + r2.w) * third);
    *reinterpret_cast<float4 *>(out + size_t(y0 + i) * w + x) = o;
    r0 = r1;
    r1 = r2;
  }
}
