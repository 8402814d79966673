#ifndef PTXJIT_FUNC_H
#define PTXJIT_FUNC_H

// Funcs: pipeline stages defined over Vars, with pure and update definitions and schedules.

#include "ptxjit/Buffer.h"
#include "ptxjit/Error.h"
#include "ptxjit/Expr.h"
#include "ptxjit/MemoryType.h"
#include "ptxjit/Param.h"
#include "ptxjit/RDom.h"
#include "ptxjit/Target.h"
#include "ptxjit/Tuple.h"
#include "ptxjit/Var.h"

#include <memory>
#include <string>
#include <vector>

namespace ptxjit {
struct FunctionContents;
struct LoopLevelContents;
struct StageSchedule;
struct ParameterContents;
} // namespace ptxjit

#pragma GCC visibility push(default)
namespace ptxjit {

class Func;
class ImageParam;
class Realization;

/// What a split does when the factor does not divide the extent.
enum class TailStrategy {
  Auto,        ///< GuardWithIf
  GuardWithIf, ///< the last iteration skips the points past the end; vectorized and unrolled
               ///< loops take a fast path for every full iteration
  ShiftInward, ///< the last iteration moves back to end at the last point, computing some points
               ///< twice: every iteration is full (no guard, tiles of constant size). Pure
               ///< definitions only; the extent must be at least the factor (checked at run time
               ///< for the output; an intermediate is computed over a larger region instead).
  RoundUp,     ///< the extent is rounded up to a multiple of the factor: the last iteration
               ///< computes points past the end (no guard). Not of an RVar's loop; an
               ///< intermediate is computed and stored over the larger region, the output's
               ///< extent must be a multiple of the factor (checked at run time).
  PredicateLoads,  ///< as GuardWithIf (Halide's predicated loads compute the same values)
  PredicateStores, ///< as GuardWithIf
  ShiftInwards = ShiftInward, ///< Halide's spelling
};

/// What a prefetch does where the region it would load reaches past the buffer, as Halide's.
enum class PrefetchBoundStrategy {
  Clamp,       ///< loads only the part of the region inside the buffer
  GuardWithIf, ///< loads nothing unless the whole region is inside the buffer
  NonFaulting, ///< loads the whole region (prefetches never fault on the CPU; on a GPU, the
               ///< schedule promises that the addresses are valid)
};

/// A Var or an RVar, as schedules name loops.
class VarOrRVar {
public:
  VarOrRVar(const Var &v) : Name(v.name()), IsRVar(false) {}
  VarOrRVar(const RVar &r) : Name(r.name()), IsRVar(true) {}
  VarOrRVar(const RDom &r) : VarOrRVar(RVar(r)) {}
  const std::string &name() const { return Name; }
  bool is_rvar() const { return IsRVar; }

private:
  std::string Name;
  bool IsRVar;
};

/// Where a Func is computed or stored, as Halide's LoopLevel: inlined, at root, or inside a loop
/// of another Func. A LoopLevel is a handle: its copies share one level, and set() changes it for
/// all of them, so that a schedule can name a level before the loop it names is known (as
/// Halide's generators do). A compile reads the level as it is then.
class LoopLevel {
public:
  /// Undefined until set(): a Func computed or stored at it does not compile.
  LoopLevel();
  /// Inside `f`'s loop `var` (of whichever stage has that loop).
  LoopLevel(const Func &f, const VarOrRVar &var);
  static LoopLevel inlined();
  static LoopLevel root();
  /// Makes this level, and every copy of it, `other`'s level (a copy of its value).
  void set(const LoopLevel &other);

  bool defined() const;
  bool is_inlined() const;
  bool is_root() const;
  /// The Func and loop of a level inside a loop; empty otherwise.
  std::string func() const;
  std::string var() const;
  /// "inlined", "root", "<func>.<var>" or "undefined".
  std::string to_string() const;
  /// Whether the two name the same level now.
  bool operator==(const LoopLevel &other) const;

  const std::shared_ptr<LoopLevelContents> &contents() const { return Contents; }

private:
  std::shared_ptr<LoopLevelContents> Contents;
};

/// One definition of a Func (its pure definition, or one update) and its loop schedule.
class Stage {
public:
  Stage(std::shared_ptr<FunctionContents> function, int index);

  Stage &split(const VarOrRVar &old, const VarOrRVar &outer, const VarOrRVar &inner, Expr factor,
               TailStrategy tail = TailStrategy::Auto);
  Stage &fuse(const VarOrRVar &inner, const VarOrRVar &outer, const VarOrRVar &fused);
  /// Names the loop `old` `renamed` from here on (a Var's with a Var, an RVar's with an RVar).
  Stage &rename(const VarOrRVar &old, const VarOrRVar &renamed);
  /// Innermost first, as in Halide.
  Stage &reorder(const std::vector<VarOrRVar> &vars);
  template <typename... Vs> Stage &reorder(const VarOrRVar &v, const Vs &...vs) {
    return reorder(std::vector<VarOrRVar>{v, VarOrRVar(vs)...});
  }
  /// Halide's loop partitioning hints. ptxjit does not split loops into a steady state and
  /// edges (a guarded vectorized loop's fast path for full vectors aside, which they leave as it
  /// is): they check that the loops exist and change nothing.
  Stage &never_partition(const std::vector<VarOrRVar> &vars);
  template <typename... Vs> Stage &never_partition(const VarOrRVar &v, const Vs &...vs) {
    return never_partition(std::vector<VarOrRVar>{v, VarOrRVar(vs)...});
  }
  Stage &never_partition_all();
  Stage &always_partition(const std::vector<VarOrRVar> &vars);
  template <typename... Vs> Stage &always_partition(const VarOrRVar &v, const Vs &...vs) {
    return always_partition(std::vector<VarOrRVar>{v, VarOrRVar(vs)...});
  }
  Stage &always_partition_all();
  Stage &tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &xo, const VarOrRVar &yo,
              const VarOrRVar &xi, const VarOrRVar &yi, Expr xfactor, Expr yfactor,
              TailStrategy tail = TailStrategy::Auto);
  Stage &tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &xi, const VarOrRVar &yi, Expr xfactor,
              Expr yfactor, TailStrategy tail = TailStrategy::Auto);
  Stage &parallel(const VarOrRVar &var);
  /// Splits var into tasks of `task_size` iterations and runs the tasks in parallel.
  Stage &parallel(const VarOrRVar &var, Expr task_size, TailStrategy tail = TailStrategy::Auto);
  Stage &serial(const VarOrRVar &var);
  Stage &vectorize(const VarOrRVar &var);
  Stage &vectorize(const VarOrRVar &var, int factor, TailStrategy tail = TailStrategy::Auto);
  Stage &unroll(const VarOrRVar &var);
  Stage &unroll(const VarOrRVar &var, int factor, TailStrategy tail = TailStrategy::Auto);
  /// CUDA grid loops (innermost first: blockIdx.x, .y, .z) and block loops (threadIdx.x, ...).
  Stage &gpu_blocks(const VarOrRVar &x);
  Stage &gpu_blocks(const VarOrRVar &x, const VarOrRVar &y);
  Stage &gpu_blocks(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &z);
  Stage &gpu_threads(const VarOrRVar &x);
  Stage &gpu_threads(const VarOrRVar &x, const VarOrRVar &y);
  Stage &gpu_threads(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &z);
  /// Halide's gpu_lanes: the lanes of a warp, which are the block's threads along x:
  /// gpu_threads(x). (Halide's warp shuffles between lanes are not made.)
  Stage &gpu_lanes(const VarOrRVar &x);
  /// Splits x (and y, z) into blocks of tx (by ty, by tz) threads: bx, by, bz over the grid, tx,
  /// ty, tz in a block.
  Stage &gpu_tile(const VarOrRVar &x, const VarOrRVar &bx, const VarOrRVar &tx, Expr xsize,
                  TailStrategy tail = TailStrategy::Auto);
  Stage &gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &bx, const VarOrRVar &by,
                  const VarOrRVar &tx, const VarOrRVar &ty, Expr xsize, Expr ysize,
                  TailStrategy tail = TailStrategy::Auto);
  Stage &gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &z, const VarOrRVar &bx,
                  const VarOrRVar &by, const VarOrRVar &bz, const VarOrRVar &tx, const VarOrRVar &ty,
                  const VarOrRVar &tz, Expr xsize, Expr ysize, Expr zsize, TailStrategy tail = TailStrategy::Auto);
  /// The gpu_tile that reuses x (and y, z) for the block loops.
  Stage &gpu_tile(const VarOrRVar &x, const VarOrRVar &tx, Expr xsize, TailStrategy tail = TailStrategy::Auto);
  Stage &gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &tx, const VarOrRVar &ty, Expr xsize,
                  Expr ysize, TailStrategy tail = TailStrategy::Auto);
  Stage &gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &z, const VarOrRVar &tx,
                  const VarOrRVar &ty, const VarOrRVar &tz, Expr xsize, Expr ysize, Expr zsize,
                  TailStrategy tail = TailStrategy::Auto);

  /// Halide's prefetch, a hint that changes no value: at the top of each iteration of loop `at`,
  /// asks the processor to load into its caches the region of `f` (or of an input) that this
  /// stage reads or writes in iteration `from + offset` of loop `from` (`at` itself, or a loop
  /// outside it), one request per cache line. `f` must be stored outside loop `at` (or be an
  /// input or an output). At a vectorized loop, the hint covers the whole vector, just before it.
  Stage &prefetch(const Func &f, const VarOrRVar &at, const VarOrRVar &from, Expr offset = 1,
                  PrefetchBoundStrategy strategy = PrefetchBoundStrategy::GuardWithIf);
  Stage &prefetch(const ImageParam &image, const VarOrRVar &at, const VarOrRVar &from, Expr offset = 1,
                  PrefetchBoundStrategy strategy = PrefetchBoundStrategy::GuardWithIf);
  Stage &prefetch(const RawBuffer &buffer, const VarOrRVar &at, const VarOrRVar &from, Expr offset = 1,
                  PrefetchBoundStrategy strategy = PrefetchBoundStrategy::GuardWithIf);
  /// Halide's older form: `at` and `from` the same loop.
  Stage &prefetch(const Func &f, const VarOrRVar &at, int offset = 1,
                  PrefetchBoundStrategy strategy = PrefetchBoundStrategy::GuardWithIf);
  Stage &prefetch(const ImageParam &image, const VarOrRVar &at, int offset = 1,
                  PrefetchBoundStrategy strategy = PrefetchBoundStrategy::GuardWithIf);
  Stage &prefetch(const RawBuffer &buffer, const VarOrRVar &at, int offset = 1,
                  PrefetchBoundStrategy strategy = PrefetchBoundStrategy::GuardWithIf);

  /// Makes an update of the form f(...) += e add atomically, so that its loops (RVars included)
  /// may be parallel or GPU loops even when iterations hit the same point (a histogram).
  Stage &atomic();
  /// As Halide's: lets this update's RVar loops be parallel, vectorized or GPU loops, or be
  /// reordered, although iterations may touch the same point. Where they do, the result may
  /// change from run to run; use it where they do not in ways ptxjit cannot prove.
  Stage &allow_race_conditions();
  /// As Halide's: states that this stage is meant to have no schedule. A CompileError if a
  /// directive was given to it before (or unscheduled() was, which counts as one).
  void unscheduled();

  /// Halide's rfactor: factors this update, f(...) = f(...) op e over an RDom (op one of +, -,
  /// *, min, max, &&, ||, value by value for a Tuple), into an intermediate Func it returns and
  /// an update of f that combines the intermediate's values over the preserved RVars. The
  /// intermediate has f's dimensions and one more Var for each preserved RVar (loops the stage's
  /// splits and fuses made count as RVars), and reduces over the other RVars; its update keeps
  /// this stage's schedule, the preserved RVars' loops as its Vars', so that they may be parallel
  /// or GPU loops. Floats are summed in another order, as in Halide.
  Func rfactor(const std::vector<std::pair<RVar, Var>> &preserved);
  Func rfactor(const RVar &r, const Var &v);

  /// A copy of this stage's schedule, used instead of it in realizes where `condition` holds (a
  /// bool of Params and input sizes, the same for the whole realize); the returned Stage
  /// schedules the copy. Conditions are tried in the order they were given, the stage's own
  /// schedule is used where none holds; specializing a condition again returns its Stage.
  Stage specialize(Expr condition);
  /// Makes a realize in which no specialization's condition holds fail with `message`.
  void specialize_fail(const std::string &message);

  /// e.g. "blur.s0" for the pure definition of blur, "hist.s1" for its first update.
  std::string name() const;

private:
  Stage(std::shared_ptr<FunctionContents> function, int index, int specialization);
  /// The schedule directives change, marked touched (see unscheduled()).
  StageSchedule &schedule() const;
  StageSchedule &selectedSchedule() const;
  Stage &addPrefetch(const std::string &target, std::shared_ptr<ParameterContents> image, const VarOrRVar &at,
                     const VarOrRVar &from, Expr offset, PrefetchBoundStrategy strategy);

  std::shared_ptr<FunctionContents> Function;
  int Index;
  int SpecializationIndex = -1; // the schedule of Function->stage(Index).specializations[i], or its own
};

/// `f(x, y)` on either side of a definition.
class FuncRef {
public:
  FuncRef(std::shared_ptr<FunctionContents> function, std::vector<Expr> args);
  /// A pure definition when every argument is a distinct Var; otherwise an update. A Func of
  /// several values is defined with a Tuple of as many values, in every definition.
  FuncRef &operator=(Expr value);
  FuncRef &operator=(const Tuple &values);
  FuncRef &operator=(const FuncRef &other);
  /// Elementwise on a Tuple.
  FuncRef &operator+=(Expr value);
  FuncRef &operator-=(Expr value);
  FuncRef &operator*=(Expr value);
  FuncRef &operator/=(Expr value);
  FuncRef &operator+=(const Tuple &values);
  FuncRef &operator-=(const Tuple &values);
  FuncRef &operator*=(const Tuple &values);
  FuncRef &operator/=(const Tuple &values);
  FuncRef &operator+=(const FuncRef &other) { return *this += Tuple(other); }
  FuncRef &operator-=(const FuncRef &other) { return *this -= Tuple(other); }
  FuncRef &operator*=(const FuncRef &other) { return *this *= Tuple(other); }
  FuncRef &operator/=(const FuncRef &other) { return *this /= Tuple(other); }
  /// The value of a Func of one value; a CompileError for a Func of several (index it instead).
  operator Expr() const;
  /// Value `i` of a Func of several values (0 for a Func of one).
  Expr operator[](int i) const;
  /// How many values the Func has.
  size_t size() const;

private:
  std::shared_ptr<FunctionContents> Function;
  std::vector<Expr> Args;
};

class Func {
public:
  /// A Func with a fresh unique name.
  Func();
  explicit Func(const std::string &name);
  /// A Func reading `buffer` at its arguments, inlined unless scheduled.
  explicit Func(const RawBuffer &buffer);

  const std::string &name() const;
  bool defined() const;
  int dimensions() const;
  /// The element type; a CompileError while undefined or for a Func of several values.
  Type type() const;
  /// The types of its values (one, or those of a Tuple); a CompileError while undefined.
  std::vector<Type> types() const;
  /// How many values it has (a Tuple's size); a CompileError while undefined.
  int outputs() const;
  std::vector<Var> args() const;
  /// The pure definition's value; a CompileError while undefined or for a Func of several values.
  Expr value() const;
  /// The pure definition's values (one, or those of a Tuple); a CompileError while undefined.
  Tuple values() const;
  int num_update_definitions() const;
  bool has_update_definition() const;
  /// Update `i`'s arguments and value(s), as written; a CompileError where there is no update `i`.
  std::vector<Expr> update_args(int i = 0) const;
  Expr update_value(int i = 0) const;
  Tuple update_values(int i = 0) const;

  /// Realizes this Func over [0, sizes) on `target`, as Pipeline(f).realize<T>(sizes) would
  /// (identical pipelines share compiled code; keep a Pipeline to skip lowering on each call).
  /// Defined in ptxjit/Pipeline.h.
  template <typename T>
  Buffer<T> realize(const std::vector<int> &sizes, const Target &target = get_jit_target_from_environment()) const;
  /// As Halide's: new buffers of the Func's value types (one for each value of a Tuple), as
  /// Pipeline(*this).realize(sizes) makes them: `Buffer<float> out = f.realize({w, h})`.
  Realization realize(const std::vector<int> &sizes = {},
                      const Target &target = get_jit_target_from_environment()) const;

  /// Prints Pipeline(*this).loop_nest() to standard output, as Halide's print_loop_nest does.
  /// Defined in the jit library, with Pipeline.
  void print_loop_nest() const;
  /// Pipeline(*this).compile_to_lowered_stmt(filename, target).
  void compile_to_lowered_stmt(const std::string &filename,
                               const Target &target = get_jit_target_from_environment()) const;

  FuncRef operator()(std::vector<Expr> args) const;
  FuncRef operator()(const std::vector<Var> &args) const { return (*this)(std::vector<Expr>(args.begin(), args.end())); }
  template <typename... Args> FuncRef operator()(const Args &...args) const {
    return (*this)(std::vector<Expr>{Expr(args)...});
  }

  /// The schedule of update definition `i`.
  Stage update(int i = 0);
  /// The pure definition's Stage::specialize and Stage::specialize_fail.
  Stage specialize(Expr condition);
  void specialize_fail(const std::string &message);

  // Schedules of the pure definition.
  Func &split(const VarOrRVar &old, const VarOrRVar &outer, const VarOrRVar &inner, Expr factor,
              TailStrategy tail = TailStrategy::Auto);
  Func &fuse(const VarOrRVar &inner, const VarOrRVar &outer, const VarOrRVar &fused);
  Func &rename(const VarOrRVar &old, const VarOrRVar &renamed);
  Func &reorder(const std::vector<VarOrRVar> &vars);
  template <typename... Vs> Func &reorder(const VarOrRVar &v, const Vs &...vs) {
    return reorder(std::vector<VarOrRVar>{v, VarOrRVar(vs)...});
  }
  Func &never_partition(const std::vector<VarOrRVar> &vars);
  template <typename... Vs> Func &never_partition(const VarOrRVar &v, const Vs &...vs) {
    return never_partition(std::vector<VarOrRVar>{v, VarOrRVar(vs)...});
  }
  Func &never_partition_all();
  Func &always_partition(const std::vector<VarOrRVar> &vars);
  template <typename... Vs> Func &always_partition(const VarOrRVar &v, const Vs &...vs) {
    return always_partition(std::vector<VarOrRVar>{v, VarOrRVar(vs)...});
  }
  Func &always_partition_all();
  Func &tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &xo, const VarOrRVar &yo,
             const VarOrRVar &xi, const VarOrRVar &yi, Expr xfactor, Expr yfactor,
             TailStrategy tail = TailStrategy::Auto);
  Func &tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &xi, const VarOrRVar &yi, Expr xfactor,
             Expr yfactor, TailStrategy tail = TailStrategy::Auto);
  Func &parallel(const VarOrRVar &var);
  Func &parallel(const VarOrRVar &var, Expr task_size, TailStrategy tail = TailStrategy::Auto);
  Func &serial(const VarOrRVar &var);
  Func &vectorize(const VarOrRVar &var);
  Func &vectorize(const VarOrRVar &var, int factor, TailStrategy tail = TailStrategy::Auto);
  Func &unroll(const VarOrRVar &var);
  Func &unroll(const VarOrRVar &var, int factor, TailStrategy tail = TailStrategy::Auto);
  Func &gpu_blocks(const VarOrRVar &x);
  Func &gpu_blocks(const VarOrRVar &x, const VarOrRVar &y);
  Func &gpu_blocks(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &z);
  Func &gpu_threads(const VarOrRVar &x);
  Func &gpu_threads(const VarOrRVar &x, const VarOrRVar &y);
  Func &gpu_threads(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &z);
  Func &gpu_lanes(const VarOrRVar &x);
  Func &gpu_tile(const VarOrRVar &x, const VarOrRVar &bx, const VarOrRVar &tx, Expr xsize,
                 TailStrategy tail = TailStrategy::Auto);
  Func &gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &bx, const VarOrRVar &by,
                 const VarOrRVar &tx, const VarOrRVar &ty, Expr xsize, Expr ysize,
                 TailStrategy tail = TailStrategy::Auto);
  Func &gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &z, const VarOrRVar &bx,
                 const VarOrRVar &by, const VarOrRVar &bz, const VarOrRVar &tx, const VarOrRVar &ty,
                 const VarOrRVar &tz, Expr xsize, Expr ysize, Expr zsize, TailStrategy tail = TailStrategy::Auto);
  Func &gpu_tile(const VarOrRVar &x, const VarOrRVar &tx, Expr xsize, TailStrategy tail = TailStrategy::Auto);
  Func &gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &tx, const VarOrRVar &ty, Expr xsize,
                 Expr ysize, TailStrategy tail = TailStrategy::Auto);
  Func &gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &z, const VarOrRVar &tx,
                 const VarOrRVar &ty, const VarOrRVar &tz, Expr xsize, Expr ysize, Expr zsize,
                 TailStrategy tail = TailStrategy::Auto);
  /// Stage::prefetch of the pure definition.
  Func &prefetch(const Func &f, const VarOrRVar &at, const VarOrRVar &from, Expr offset = 1,
                 PrefetchBoundStrategy strategy = PrefetchBoundStrategy::GuardWithIf);
  Func &prefetch(const ImageParam &image, const VarOrRVar &at, const VarOrRVar &from, Expr offset = 1,
                 PrefetchBoundStrategy strategy = PrefetchBoundStrategy::GuardWithIf);
  Func &prefetch(const RawBuffer &buffer, const VarOrRVar &at, const VarOrRVar &from, Expr offset = 1,
                 PrefetchBoundStrategy strategy = PrefetchBoundStrategy::GuardWithIf);
  Func &prefetch(const Func &f, const VarOrRVar &at, int offset = 1,
                 PrefetchBoundStrategy strategy = PrefetchBoundStrategy::GuardWithIf);
  Func &prefetch(const ImageParam &image, const VarOrRVar &at, int offset = 1,
                 PrefetchBoundStrategy strategy = PrefetchBoundStrategy::GuardWithIf);
  Func &prefetch(const RawBuffer &buffer, const VarOrRVar &at, int offset = 1,
                 PrefetchBoundStrategy strategy = PrefetchBoundStrategy::GuardWithIf);
  /// Asserts at realize that dimension `var` of this Func is required only within [min, min+extent),
  /// and computes exactly that region.
  Func &bound(const Var &var, Expr min, Expr extent);
  /// Computes `extent` points of dimension `var` from the least its consumers need, and asserts at
  /// realize that they need no more: loops over it get a constant extent.
  Func &bound_extent(const Var &var, Expr extent);
  /// Widens the region computed in dimension `var` to start at a multiple of `modulus` (a positive
  /// constant) plus `remainder` and to span a multiple of `modulus` points.
  Func &align_bounds(const Var &var, Expr modulus, Expr remainder = 0);

  /// A region for Halide's autoschedulers to plan for (where `var` is usually realized); ptxjit
  /// has none and makes the same code with or without it. `var` must be one of the Func's
  /// arguments and the values integers, as in Halide.
  Func &set_estimate(const Var &var, Expr min, Expr extent);
  /// set_estimate of each dimension in order: as many ranges as the Func has dimensions.
  Func &set_estimates(const Region &estimates);

  // Where the Func is computed and stored. The default is inline for pure Funcs and root for
  // Funcs with update definitions.
  Func &compute_root();
  Func &compute_at(const Func &consumer, const VarOrRVar &var);
  /// Computed at `level`, read when the pipeline compiles (see LoopLevel).
  Func &compute_at(const LoopLevel &level);
  Func &compute_inline();
  /// Where the Func's storage lives; see MemoryType.
  Func &store_in(MemoryType memory);
  /// The order of the dimensions in the Func's storage, innermost first, as Halide's:
  /// f.reorder_storage(y, x) stores f(x, y) column by column. Dimensions not named keep their
  /// places. Calls and loops are unchanged. An output's layout is its buffer's.
  Func &reorder_storage(const std::vector<Var> &dims);
  template <typename... Vs> Func &reorder_storage(const Var &x, const Vs &...rest) {
    return reorder_storage(std::vector<Var>{x, rest...});
  }
  /// Pads the extent a realization of this Func stores in dimension `var` to a multiple of
  /// `alignment` (a positive constant), as Halide does: the strides of the dimensions outside it
  /// are then multiples of it, in elements. Values are unchanged.
  Func &align_storage(const Var &var, Expr alignment);
  /// Halide's storage folding: stores dimension `var` modulo `extent` (a positive constant), so
  /// that a Func computed at an inner loop and stored further out (store_at, sliding along
  /// `var`) keeps only `extent` rows: `g.compute_at(f, y).store_root().fold_storage(y, 2)`. A
  /// CompileError at compile time where one iteration needs more rows than `extent`, or where the
  /// storage cannot be folded (it is read outside that loop, or not computed inside it);
  /// `fold_forward` (Halide's direction hint) changes nothing. ptxjit also folds slid storage
  /// without being asked, to a power of two.
  Func &fold_storage(const Var &var, Expr extent, bool fold_forward = true);
  Func &store_root();
  Func &store_at(const Func &consumer, const VarOrRVar &var);
  Func &store_at(const LoopLevel &level);
  /// Halide's hoist_storage: allocates the storage at `consumer`'s loop `var` (or outside every
  /// loop), at or outside the store level, and reuses it in each iteration of the loops between,
  /// sized for the largest of their regions; unlike store_at, what is computed is unchanged (no
  /// sliding). `g.compute_at(f, x).hoist_storage(f, y)` allocates g once a row. A CompileError
  /// where that loop is not around the storage, where a parallel, vectorized or GPU loop lies
  /// between (the iterations would share it), or where the size has no bound outside the loops.
  Func &hoist_storage(const Func &consumer, const VarOrRVar &var);
  Func &hoist_storage(const LoopLevel &level);
  Func &hoist_storage_root();

  /// A wrapper of this Func, as Halide's: a Func w(x, ...) = f(x, ...) that `consumer` reads
  /// instead of f, with a schedule of its own (compute_at a tile, store_in GPU shared memory).
  /// in() wraps f for every consumer without a wrapper of its own. Asking again returns the same
  /// wrapper; a wrapper reads f itself.
  Func in(const Func &consumer);
  /// One wrapper that all of `consumers` read (`f.in({g, h})`).
  Func in(const std::vector<Func> &consumers);
  Func in();
  /// As Halide's: a copy of this Func (its definitions, and its schedule as it is now), named
  /// "<f>_clone_in_<consumer>", that `consumer` (each of `consumers`) reads instead of this one,
  /// scheduled on its own from here on: `f.clone_in(g).compute_at(g, x)` computes f inside g's
  /// loop for g while other consumers read f as scheduled. Asking again returns the same clone.
  Func clone_in(const Func &consumer);
  Func clone_in(const std::vector<Func> &consumers);

  /// Halide's tracing, for debugging: each value this Func stores prints "Store f.0(x, y) = v"
  /// (after the name, the value's index), each read of it "Load f.0(x, y) = v", and each of its
  /// realizations "Produce f(min, extent, ...)", "End produce f(...)", "Consume f(...)", "End
  /// consume f(...)" over its region, through the realize's print handler (device printf in GPU
  /// kernels). Lanes of a vector print one by one; parallel loops print in any order. Results are
  /// unchanged.
  Func &trace_stores();
  Func &trace_loads();
  Func &trace_realizations();

  /// The buffer a realize writes this Func's value to, where the Func is an output, to read its
  /// fields or constrain them (Halide's output_buffer): `f.output_buffer().dim(0).set_stride(3)`
  /// writes interleaved pixels, set_stride(Expr()) any layout, set_bounds a fixed region, which
  /// makes the loops constant. A CompileError for an undefined Func or one of several values.
  OutputImageParam output_buffer() const;
  /// One for each value of a Tuple (one for a Func of one value).
  std::vector<OutputImageParam> output_buffers() const;

  const std::shared_ptr<FunctionContents> &contents() const { return Contents; }
  /// The Func these contents define (a wrapper made by in(), say).
  explicit Func(std::shared_ptr<FunctionContents> contents);

private:
  std::shared_ptr<FunctionContents> Contents;
};

} // namespace ptxjit

#pragma GCC visibility pop

#endif
