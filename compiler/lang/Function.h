#ifndef PTXJIT_LANG_FUNCTION_H
#define PTXJIT_LANG_FUNCTION_H

// What a Func is inside the compiler: its definitions and schedules. Shared by the Func handles
// that name it; Calls to it hold it too, so a pipeline keeps every stage it uses alive.

#include "ir/IR.h"
#include "ptxjit/Func.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ptxjit {

namespace ir {
class IRMutator;
} // namespace ir

struct ReductionVariable {
  std::string var;
  Expr min, extent;
};

struct ReductionDomainContents {
  std::string name;
  std::vector<ReductionVariable> domain;
  /// RDom::where: the points of the domain an update runs at (undefined: all of them).
  Expr predicate;
  /// Set once an update uses the domain: its predicate is then fixed.
  bool used = false;
};

struct Split {
  enum Kind { SplitVar, FuseVars, RenameVar };
  Kind kind = SplitVar;
  // For FuseVars: inner and outer are fused into old_var. For RenameVar: old_var's loop is
  // named outer (inner is empty).
  std::string old_var, outer, inner;
  Expr factor;
  TailStrategy tail = TailStrategy::Auto;
};

struct Dim {
  std::string var;
  ir::ForType for_type = ir::ForType::Serial;
  bool is_rvar = false;
};

/// Stage::prefetch.
struct PrefetchDirective {
  /// The Func or input prefetched. A Func is named only: a schedule holding the Func could hold
  /// itself. Lowering finds it among the pipeline's.
  std::string name;
  std::shared_ptr<ParameterContents> image; ///< the input, or null for a Func
  std::string at, from;                     ///< loops of the stage
  Expr offset;
  PrefetchBoundStrategy strategy = PrefetchBoundStrategy::GuardWithIf;
};

struct StageSchedule {
  std::vector<Split> splits;
  /// Loop dimensions, innermost first.
  std::vector<Dim> dims;
  /// Pairs of RVar loops, by the names they had then, whose relative order reorder() changed:
  /// lowering checks that the update's result cannot depend on it.
  std::vector<std::pair<std::string, std::string>> reordered_rvars;
  /// allow_race_conditions(): RVar loops may run in parallel or be reordered unchecked.
  bool allow_race_conditions = false;
  std::vector<PrefetchDirective> prefetches;
  /// A directive was given (Stage::unscheduled() checks it): no effect on the code.
  bool touched = false;
};

/// A schedule a definition uses where `condition` holds (Func::specialize).
struct Specialization {
  Expr condition;
  StageSchedule schedule;
};

struct Definition {
  std::vector<Expr> args;
  /// One value, or those of a Tuple.
  std::vector<Expr> values;
  std::shared_ptr<ReductionDomainContents> rdom;
  /// The RDom's predicate when the update was defined: the update runs where it holds.
  Expr predicate;
  StageSchedule schedule;
  /// Tried in order before `schedule`: the first whose condition holds is used.
  std::vector<Specialization> specializations;
  /// Where set, a realize in which no specialization's condition holds fails with this message.
  std::optional<std::string> specialize_fail;
  /// The update adds to the Func atomically, so its loops may run in parallel or on the GPU.
  bool atomic = false;
};

/// The value of a LoopLevel (a handle to one, which set() changes for all its copies).
struct LoopLevelContents {
  enum Kind { Undefined, Inlined, Root, At };
  Kind kind = Undefined;
  std::string func, var; // for At

  bool operator==(const LoopLevelContents &o) const { return kind == o.kind && func == o.func && var == o.var; }
};

/// A constraint on the region of one dimension: bound() gives min and extent; bound_extent() the
/// extent only (the min is what the consumers need); align_bounds() a modulus and remainder.
struct FunctionBound {
  std::string var;
  Expr min, extent;
  Expr modulus, remainder;
};

struct FunctionContents {
  std::string name;
  /// Wrappers made by in(), by the name of the consumer whose reads they take ("" for every
  /// consumer without one of its own).
  std::map<std::string, std::shared_ptr<FunctionContents>> wrappers;
  /// For a wrapper: the Func or input it wraps. Its definition reads it by name only (a Call
  /// without a pointer): the wrapped one holds its wrappers, and pointers back would be a cycle.
  std::weak_ptr<FunctionContents> wrapped_func;
  std::weak_ptr<ParameterContents> wrapped_image;
  std::vector<std::string> args;
  /// One type, or those of a Tuple's values.
  std::vector<Type> types;
  Definition init;
  std::vector<Definition> updates;
  /// As scheduled: handles, which the user may still set() (read at lowering, by computed_at
  /// and stored_at).
  LoopLevel compute_level, store_level;
  bool compute_level_set = false, store_level_set = false;
  /// hoist_storage: where the storage is allocated, at or outside the store level (its size
  /// bounded over the loops between); unset: at the store level.
  LoopLevel hoist_level;
  bool hoist_level_set = false;
  /// Made by an inline reduction (sum, argmin, ...): unless scheduled, computed at the innermost
  /// loop around its uses, as Halide does (one scalar accumulation a point, a GPU thread's own).
  bool inline_reduction = false;
  std::vector<FunctionBound> bounds;
  MemoryType memory_type = MemoryType::Auto;
  /// The dimensions in the order of the storage, innermost first (reorder_storage); empty: the
  /// order of `args`.
  std::vector<std::string> storage_dims;
  /// align_storage: the stored extent of a dimension, by its name, padded to a multiple of this.
  std::map<std::string, int64_t> storage_alignment;
  /// fold_storage: a dimension, by its name, stored modulo this many rows.
  std::map<std::string, int64_t> storage_folds;
  /// trace_stores, trace_loads, trace_realizations (InjectTracing).
  bool trace_stores = false, trace_loads = false, trace_realizations = false;
  /// output_buffer(s): the buffers of the values where the Func is an output, with their
  /// constraints; made on first use (empty: unconstrained).
  std::vector<std::shared_ptr<ParameterContents>> output_buffers;

  bool defined() const { return !init.values.empty(); }
  /// Stage 0 is the pure definition; stage i > 0 is update i - 1.
  Definition &stage(int i) { return i == 0 ? init : updates.at(i - 1); }
  const Definition &stage(int i) const { return i == 0 ? init : updates.at(i - 1); }
  int num_stages() const { return 1 + static_cast<int>(updates.size()); }
  /// The effective compute level: the schedule's, or the default (see Func.h).
  /// The levels as they are now, defaults applied. Throw CompileError for an undefined level.
  LoopLevelContents computed_at() const;
  LoopLevelContents stored_at() const;
  /// The hoist_storage level; none where unset.
  std::optional<LoopLevelContents> hoisted_at() const;
};

/// The buffer that holds value `index` of a Func named `func` of `count` values: the Func's own
/// name for one value, "func.index" for each of a Tuple's.
std::string value_buffer_name(const std::string &func, int index, size_t count);

/// The wrapper (Func::in, ImageParam::in) that `wrappers` holds for `consumers` (one, several that
/// share it, or "" for every consumer without one of its own), made on first use: a Func of `vars`
/// whose values read `wrappedName` by name; `link` records what it wraps
/// (FunctionContents::wrapped_func, wrapped_image). Consumers given together either all read the
/// one wrapper already or none reads any: a CompileError otherwise.
Func wrapper_of(std::map<std::string, std::shared_ptr<FunctionContents>> &wrappers,
                const std::vector<std::string> &consumers, const std::string &wrappedName,
                const std::vector<Type> &types, const std::vector<std::string> &vars, bool image,
                const std::function<void(FunctionContents &)> &link);

/// An update of value `index` of the Func named `func` of the form f(args)[index] op e, with op
/// one of + - * min max && || and e reading none of the values the update writes: its
/// iterations may be grouped and ordered anyhow (floats up to rounding, as in Halide), as
/// rfactor and reordered RVar loops need.
struct ValueReduction {
  enum class Combiner { Add, Subtract, Multiply, Min, Max, And, Or };
  Combiner combiner;
  Expr contribution; // e, with the lets around the value written into it
};
std::optional<ValueReduction> match_reduction(const std::string &func, const Definition &d, size_t index);

/// The Funcs called by `e`, other than through self-references.
std::vector<std::shared_ptr<FunctionContents>> called_functions(const Expr &e);

/// Rewrites every expression of `f`'s definitions (arguments, values, update predicates) with
/// `mutator`: calls redirected or renamed in all of them at once.
void mutate_definitions(FunctionContents &f, ir::IRMutator &mutator);

/// The argument lists of every call of the Func named `func` in `e` (an update's reads of the
/// Func it updates), in the variables `e` names; only those of value `valueIndex` where it is not
/// negative.
std::vector<std::vector<Expr>> calls_to(const std::string &func, const Expr &e, int valueIndex = -1);

} // namespace ptxjit

#endif
