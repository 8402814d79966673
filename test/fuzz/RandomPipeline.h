#ifndef PTXJIT_TEST_FUZZ_RANDOMPIPELINE_H
#define PTXJIT_TEST_FUZZ_RANDOMPIPELINE_H

// The differential tester: random pipelines (a DAG of Funcs over 1-3 dimensions with pointwise
// arithmetic on every integer width and float, bitwise operators, shifts and bit counts, division
// rounding toward zero, stencils, boundary conditions, reductions, scans,
// histograms, Tuples) with random valid schedules, realized by ptxjit (into dense or strided
// output buffers) and compared point by point
// with a plain reference evaluator of the same description.
//
// The reference defines the meaning, as Halide does: integers narrower than 32 bits and unsigned
// ones wrap; signed 32-bit overflow is undefined, in the sums and products as written and in every
// regrouping of them the compiler may choose (a left shift is a product by a power of two), so a
// description whose reference may overflow is discarded, as is one whose float arithmetic rounds
// (floats then compare exactly, whatever FMA contraction or reassociation the compiler chose) or
// converts an out-of-range float.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ptxjit::fuzz {

enum class Scalar { I8, I16, I32, U8, U16, U32, F32 };

/// A value of a pipeline expression.
struct Node {
  enum Kind {
    Const, Coord, Input, Call, Add, Sub, Mul, Div, Mod, Min, Max, Select, Cast, Clamp, And, Or, Xor, Shl, Shr,
    Popcount, CountLeadingZeros, CountTrailingZeros, DivRoundToZero, ModRoundToZero
  };
  Kind kind = Const;
  Scalar type = Scalar::I32;
  int64_t value = 0;           // Const (a float constant is value / 4), Clamp's bounds: value, high
  int64_t high = 0;
  int dim = 0;                 // Coord
  int func = -1;               // Call: an earlier Func
  int valueIndex = 0;          // Call: which value of a Func of two (a Tuple)
  std::vector<int> offsets;    // Input, Call: added to each coordinate
  std::vector<bool> plusR;     // Input, Call in a reduction: the RVar is added in that dimension
  std::vector<Node> children;  // Select: a < b ? c : d
};

/// How a stage's loops are scheduled, applied in order.
struct Directive {
  enum Kind { Split, Fuse, Rename, Reorder, Vectorize, Unroll, Parallel, RFactor };
  Kind kind = Split;
  // Split: old, outer, inner; Fuse: inner, outer, fused; Rename: old, new; Reorder: innermost first; RFactor: the
  // RVar loop kept, the intermediate's Var for it (the last directive of an update).
  std::vector<std::string> vars;
  int factor = 0; // Split: the factor; Parallel: 1 gpu_blocks, 2 gpu_threads; RFactor: 1 parallel
  int tail = 0;                  // TailStrategy: 0 Auto, 1 GuardWithIf, 2 ShiftInward, 3 RoundUp
};

struct Update {
  enum Kind { None, Reduce, Scan, Pointwise, Histogram };
  Kind kind = None;
  int dim = 0;            // Scan, Histogram: the dimension the RVar writes; Reduce: reads
  int rmin = 0, rextent = 1;
  int low = 0, high = 0;  // Histogram: the bin range
  // RDom::where: 0 none; 1 (Reduce) r <= coordinate `dim` + whereConstant; 2 r % 2 == whereConstant;
  // 3 (Reduce) r != coordinate `dim` + whereConstant, which holds at both ends of a vector and
  // fails inside it.
  int where = 0, whereConstant = 0;
  Node term;              // Reduce: added; Scan: combined with the previous point; Pointwise: added
                          // to twice the old value; Histogram: its bin
};

struct FuncDesc {
  Scalar type = Scalar::I32;
  Node value;
  // A Func of two values (a Tuple): the second's type and pure value. Its update adds the old
  // first value to the old second one, at the point the update writes (every value is computed
  // before any is stored).
  bool tuple = false;
  Scalar secondType = Scalar::I32;
  Node second;
  Update update;
  // Where it is computed: -1 inline, 0 root, k > 0 at the k-th loop (outermost first) of the output.
  int level = -1;
  // Also an output of the pipeline (computed at root), realized over the region the reference
  // computes of it: what later Funcs read and the last output's region.
  bool output = false;
  // Where it is stored, where that is further out than where it is computed: 0 root, k > 0 the
  // k-th loop of the output (k < level). -1: where it is computed.
  int storeLevel = -1;
  std::vector<Directive> pureSchedule, updateSchedule;
  // Where positive, the pure stage is specialized on in.width() >= specializeWidth, with a
  // schedule of its own (given before pureSchedule, so that it starts from no directives).
  int specializeWidth = 0;
  std::vector<Directive> specializedSchedule;
};

struct PipelineDesc {
  uint64_t seed = 0;
  int dims = 1;
  Scalar inputType = Scalar::I32;
  int boundary = 0; // 0 none, 1 repeat_edge, 2 constant_exterior, 3 mirror_image, 4 repeat_image, 5 mirror_interior
  std::vector<int> inputMin, inputExtent;
  std::vector<FuncDesc> funcs; // the last is the output
  std::vector<int> outputMin, outputExtent;
  bool boundOutput = false; // the output is bound() to the region realized: constant loop extents
  // Every output's buffers have stride 2 in dimension 0 (output_buffer().dim(0).set_stride(Expr())).
  bool stridedOutputs = false;
  bool gpu = false;
};

/// A random description; `gpu` gives every stage a GPU schedule.
PipelineDesc random_pipeline(uint64_t seed, bool gpu);

/// Readable C++ close to what a user writes for the description.
std::string to_string(const PipelineDesc &p);

enum class Outcome { Pass, Discarded, Wrong, Error };
struct Result {
  Outcome outcome = Outcome::Pass;
  std::string message; // what differed, or the error
};

/// Realizes the description with ptxjit (on `target`) and compares with the reference.
Result run_pipeline(const PipelineDesc &p, const std::string &target);

/// Compiles the description to PTX for `target` (a fixed CUDA capability), offline: the error,
/// or empty.
std::string compile_to_ptx(const PipelineDesc &p, const std::string &target);

/// Drops schedule directives, placements and updates while the failure stays of the same kind.
PipelineDesc reduce_failure(const PipelineDesc &p, const std::string &target, Outcome kind);

} // namespace ptxjit::fuzz

#endif
