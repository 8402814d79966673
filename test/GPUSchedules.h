#ifndef PTXJIT_TEST_GPUSCHEDULES_H
#define PTXJIT_TEST_GPUSCHEDULES_H

// GPU schedules that both the PTX tests (what the code looks like) and the GPU tests (what it
// computes) use.

#include "ptxjit.h"

namespace ptxjit::test {

/// Halide's CUDA matrix multiply schedule (apps/cuda_mat_mul) of out(x, y) = sum A(x, r) B(r, y):
/// each block a 64x16 tile, each thread 4x8 of it in registers, the rows of A and B a step of k
/// needs loaded into registers.
inline Func register_tiled_matmul(ImageParam &A, ImageParam &B, int size) {
  Var x("x"), y("y"), xi("xi"), yi("yi"), xii("xii"), yii("yii");
  Func prod("prod"), out("out");
  RDom r(0, size, "r");
  prod(x, y) += A(x, r) * B(r, y);
  out(x, y) = prod(x, y);
  out.bound(x, 0, size).bound(y, 0, size).tile(x, y, xi, yi, 64, 16).tile(xi, yi, xii, yii, 4, 8)
      .gpu_blocks(x, y).gpu_threads(xi, yi).unroll(xii).unroll(yii);
  prod.compute_at(out, xi).vectorize(x).unroll(y).update().reorder(x, y, r).vectorize(x).unroll(y).unroll(r, 8);
  A.in().compute_at(prod, r).vectorize(_0).unroll(_1);
  B.in().compute_at(prod, r).vectorize(_0).unroll(_1);
  return out;
}

/// The blur by(x, y) of bx(x, y - 1 .. y + 1) as the hand-written CUDA one is built: each thread
/// 4 columns by 16 rows, bx's 18 rows of 4 in registers; tiles shift inward at the edges.
inline void schedule_register_strips(Func &bx, Func &by, const Var &x, const Var &y) {
  Var xo("xo"), xv("xv"), yo("yo"), ys("ys"), xb("xb"), xt("xt"), yb("yb"), yt("yt");
  const TailStrategy shift = TailStrategy::ShiftInward;
  by.split(x, xo, xv, 4, shift).split(y, yo, ys, 16, shift).split(xo, xb, xt, 64, shift).split(yo, yb, yt, 4, shift)
      .reorder(xv, ys, xt, yt, xb, yb).gpu_blocks(xb, yb).gpu_threads(xt, yt).unroll(ys).vectorize(xv);
  bx.compute_at(by, xt).unroll(y).vectorize(x);
}

} // namespace ptxjit::test

#endif
