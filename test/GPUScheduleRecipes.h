#ifndef PTXJIT_TEST_GPUSCHEDULERECIPES_H
#define PTXJIT_TEST_GPUSCHEDULERECIPES_H

// GPU schedules that the PTX tests (what the code looks like), the GPU tests (what it computes)
// and the bench (how fast it runs) share.

#include "ptxjit.h"

#include <string>

namespace ptxjit::test {

/// A two-point stencil of `source` over a tile each GPU block computes, traced: the output's stores,
/// and the tile's loads and realizations (Funcs `<prefix>_tile` and `<prefix>_out`).
inline Func traced_gpu_stencil(const Func &source, const std::string &prefix, int tileX, int tileY) {
  Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
  Func tile(prefix + "_tile"), out(prefix + "_out");
  tile(x, y) = source(x, y) * 2.0f;
  out(x, y) = tile(x, y) + tile(x + 1, y);
  out.gpu_tile(x, y, xo, yo, xi, yi, tileX, tileY).trace_stores();
  tile.compute_at(out, xo).gpu_threads(x, y).trace_loads().trace_realizations();
  return out;
}

/// The tiles of a matrix product out(x, y) = sum A(x, r) B(r, y): a block's, and a thread's of it.
struct MatMulTiles {
  int blockX, blockY, threadX, threadY;
  std::string name() const {
    return std::to_string(blockX) + "x" + std::to_string(blockY) + "_" + std::to_string(threadX) + "x" +
           std::to_string(threadY);
  }
};

/// Halide's CUDA matrix multiply schedule (apps/cuda_mat_mul; its tiles are 64x16 and 4x8): each
/// thread's tile in registers, the rows of A and B a step of k needs loaded into registers.
inline Func register_tiled_matmul(ImageParam &A, ImageParam &B, int size, MatMulTiles tiles = {64, 16, 4, 8}) {
  Var x("x"), y("y"), xi("xi"), yi("yi"), xii("xii"), yii("yii");
  Func prod("prod"), out("matmul");
  RDom r(0, size, "r");
  prod(x, y) += A(x, r) * B(r, y);
  out(x, y) = prod(x, y);
  out.bound(x, 0, size).bound(y, 0, size).tile(x, y, xi, yi, tiles.blockX, tiles.blockY)
      .tile(xi, yi, xii, yii, tiles.threadX, tiles.threadY).gpu_blocks(x, y).gpu_threads(xi, yi).unroll(xii).unroll(yii);
  prod.compute_at(out, xi).vectorize(x).unroll(y).update().reorder(x, y, r).vectorize(x).unroll(y).unroll(r, 8);
  A.in().compute_at(prod, r).vectorize(_0).unroll(_1);
  B.in().compute_at(prod, r).vectorize(_0).unroll(_1);
  return out;
}

/// The classic SGEMM: each thread's tile of out in registers for the whole of k (stored at the
/// block loop, a slice a thread); each step of `steps` along k stages the block's columns of A and
/// rows of B in shared memory, 4 floats at a time, spread over all threads of the block.
inline Func shared_staged_matmul(ImageParam &A, ImageParam &B, int size, MatMulTiles tiles = {64, 64, 4, 4},
                                 int steps = 8) {
  Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi"), tx("tx"), ty("ty"), xr("xr"), yr("yr");
  RVar ro("ro"), ri("ri");
  const int threadsX = tiles.blockX / tiles.threadX, threadsY = tiles.blockY / tiles.threadY;
  Func prod("prod"), out("matmul");
  RDom r(0, size, "r");
  prod(x, y) += A(x, r) * B(r, y);
  out(x, y) = prod(x, y);
  out.bound(x, 0, size).bound(y, 0, size).tile(x, y, xo, yo, xi, yi, tiles.blockX, tiles.blockY)
      .tile(xi, yi, tx, ty, xr, yr, tiles.threadX, tiles.threadY).gpu_blocks(xo, yo).gpu_threads(tx, ty)
      .vectorize(xr).unroll(yr);
  prod.compute_at(out, xo).store_in(MemoryType::Register)
      .tile(x, y, tx, ty, xr, yr, tiles.threadX, tiles.threadY).gpu_threads(tx, ty).unroll(xr).unroll(yr);
  prod.update().tile(x, y, tx, ty, xr, yr, tiles.threadX, tiles.threadY).split(r, ro, ri, steps)
      .reorder(xr, yr, ri, tx, ty, ro).gpu_threads(tx, ty).unroll(xr).unroll(yr).unroll(ri);
  // A tile's vectors of 4, row after row, dealt to the block's threads in order: neighbouring
  // threads load neighbouring vectors.
  auto stage = [&](Func tile) {
    Var c("c"), v("v"), f("f"), fo("fo"), fi("fi"), fx("fx"), fy("fy");
    tile.compute_at(prod, ro).split(_0, c, v, 4).vectorize(v).fuse(c, _1, f).split(f, fo, fi, threadsX * threadsY)
        .split(fi, fy, fx, threadsX).reorder(v, fx, fy, fo).gpu_threads(fx, fy).unroll(fo);
  };
  stage(A.in());
  stage(B.in());
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

/// The register-strip blur with blur_x's rows slid down the strip: each step of the strip
/// computes one new row of 4, kept in a window of four rows of registers.
inline void schedule_sliding_strips(Func &bx, Func &by, const Var &x, const Var &y) {
  Var xo("xo"), xv("xv"), yo("yo"), ys("ys"), xb("xb"), xt("xt"), yb("yb"), yt("yt");
  const TailStrategy shift = TailStrategy::ShiftInward;
  by.split(x, xo, xv, 4, shift).split(y, yo, ys, 16, shift).split(xo, xb, xt, 64, shift).split(yo, yb, yt, 4, shift)
      .reorder(xv, ys, xt, yt, xb, yb).gpu_blocks(xb, yb).gpu_threads(xt, yt).unroll(ys).vectorize(xv);
  bx.store_at(by, xt).compute_at(by, ys).unroll(y).vectorize(x);
}

} // namespace ptxjit::test

#endif
