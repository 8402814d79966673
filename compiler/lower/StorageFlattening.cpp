#include "StorageFlattening.h"

#include "ir/Constants.h"
#include "ir/IRMutator.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"
#include "lang/Function.h"
#include "lang/Parameter.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>

namespace ptxjit::lower {

using namespace ir;

namespace {

Expr var(const std::string &name) { return Variable::make(Int(32), name); }

// `denseFirst`: dimension 0 has stride 1 (every buffer but a realization in another order).
Expr flatIndex(const std::string &buffer, const std::vector<Expr> &args, bool denseFirst = true) {
  Expr index = make_zero(Int(32));
  for (size_t i = 0; i < args.size(); ++i) {
    Expr offset = Sub::make(args[i], var(buffer_field_name(buffer, "min", static_cast<int>(i))));
    if (i > 0 || !denseFirst)
      offset = Mul::make(offset, var(buffer_field_name(buffer, "stride", static_cast<int>(i))));
    index = i == 0 ? offset : Add::make(index, offset);
  }
  return index;
}

bool hasVectorizedLoop(const Stmt &s) {
  struct Finder : IRVisitor {
    bool Found = false;
    using IRVisitor::visit;
    void visit(const For *op) override {
      Found = Found || op->for_type == ForType::Vectorized;
      IRVisitor::visit(op);
    }
  } finder;
  s.accept(&finder);
  return finder.Found;
}

class FlattenStorage : public IRMutator {
public:
  FlattenStorage(const std::map<std::string, size_t> &outputValues, const std::set<std::string> &stridedOutputs,
                 const Environment &env)
      : ValueCounts(outputValues), Env(env) {
    for (const std::string &buffer : stridedOutputs)
      NotDenseFirst[buffer] = 1;
  }

private:
  // The values of the lets around the code being flattened, in terms of names outside them.
  std::map<std::string, Expr> LetValues;
  // How many values each Func has (one where not listed: images).
  std::map<std::string, size_t> ValueCounts;
  const Environment &Env;
  // The buffers whose dimension 0 is not innermost in storage (realizations, reorder_storage) or
  // has a stride of its own (outputs, output_buffer().dim(0).set_stride), by how many of them
  // of that name are around the code.
  std::map<std::string, int> NotDenseFirst;
  int TupleStores = 0; // names the values of each Tuple store apart
  // Where the code being flattened is: inside a kernel (gpu_blocks loops), inside thread loops.
  int BlockDepth = 0, ThreadDepth = 0;

  std::string bufferOf(const std::string &func, int index) {
    auto it = ValueCounts.find(func);
    return value_buffer_name(func, index, it == ValueCounts.end() ? 1 : it->second);
  }

  using IRMutator::visit;

  Stmt visit(const LetStmt *op) override {
    Expr value = mutate(op->value);
    auto saved = LetValues.find(op->name) != LetValues.end() ? std::optional<Expr>(LetValues[op->name]) : std::nullopt;
    // A value too large to expand stays a name (an extent through it gets no constant bound).
    Expr expanded = substitute(LetValues, op->value);
    if (has_more_nodes_than(expanded, MaxExpandedLetNodes))
      LetValues.erase(op->name);
    else
      LetValues[op->name] = expanded;
    Stmt body = mutate(op->body);
    if (saved)
      LetValues[op->name] = *saved;
    else
      LetValues.erase(op->name);
    return value.same_as(op->value) && body.same_as(op->body) ? Stmt(op) : LetStmt::make(op->name, value, body);
  }

  // A tile whose extent varies (clipped at the edge of the region) but has a constant bound is
  // stored at that bound: its strides are then constants, which makes index arithmetic cheaper
  // in every access, and a GPU tile's storage is sized by that bound anyway.
  Expr storedExtent(const Expr &extent) {
    if (is_const(extent))
      return extent;
    auto bound = constant_upper_bound(substitute(LetValues, extent));
    return bound && *bound > 0 && *bound <= INT32_MAX ? make_const(Int(32), *bound) : extent;
  }

  Stmt visit(const For *op) override {
    const bool block = op->for_type == ForType::GPUBlock, thread = op->for_type == ForType::GPUThread;
    BlockDepth += block;
    ThreadDepth += thread;
    Stmt result = IRMutator::visit(op);
    BlockDepth -= block;
    ThreadDepth -= thread;
    return result;
  }

  // A shared tile whose rows are a multiple of the 32 four-byte banks wide puts a column in one
  // bank: threads reading down a column (a transpose) wait on each other 32 times. Rows one
  // element longer put a column's elements in 32 banks. Not where a loop over it is vectorized:
  // its vector accesses need rows that keep their alignment.
  bool padsSharedRows(const Realize *op, const std::vector<Expr> &extents, const Stmt &body) const {
    constexpr int64_t BankBytes = 4, Banks = 32;
    if (BlockDepth == 0 || ThreadDepth > 0 || extents.size() < 2 || op->types.size() != 1 ||
        op->types[0].bytes() != BankBytes || (op->memory != MemoryType::Auto && op->memory != MemoryType::GPUShared))
      return false;
    auto row = as_const_int(extents[0]);
    return row && *row % Banks == 0 && !hasVectorizedLoop(body);
  }

  // The alignment align_storage gives dimension `dim` of a realization, if any (a block's heap
  // slice's own outermost dimension has none).
  std::optional<int64_t> storageAlignment(const std::string &func, size_t dim) const {
    auto f = Env.find(func);
    if (f == Env.end() || dim >= f->second->args.size())
      return std::nullopt;
    auto it = f->second->storage_alignment.find(f->second->args[dim]);
    return it == f->second->storage_alignment.end() ? std::nullopt : std::optional<int64_t>(it->second);
  }

  // The dimensions of a realization in the order of its storage, innermost first.
  std::vector<size_t> storageOrder(const Realize *op) const {
    std::vector<size_t> order(op->bounds.size());
    for (size_t i = 0; i < order.size(); ++i)
      order[i] = i;
    auto f = Env.find(op->name);
    if (f == Env.end() || f->second->storage_dims.empty())
      return order;
    // A block's heap slice has one more dimension, outermost: the block (GPUBlockHeapSlices.h).
    const std::vector<std::string> &args = f->second->args;
    PTXJIT_INTERNAL_ASSERT(args.size() <= order.size(), "storage flattening: " + op->name + " has " +
                                                            std::to_string(order.size()) + " bounds");
    for (size_t k = 0; k < args.size(); ++k)
      order[k] = static_cast<size_t>(std::find(args.begin(), args.end(), f->second->storage_dims[k]) - args.begin());
    return order;
  }

  Stmt visit(const Realize *op) override {
    const size_t count = op->types.size();
    const std::vector<size_t> order = storageOrder(op);
    const bool denseFirst = order.empty() || order[0] == 0;
    auto saved = ValueCounts.find(op->name) != ValueCounts.end() ? std::optional<size_t>(ValueCounts[op->name])
                                                                  : std::nullopt;
    ValueCounts[op->name] = count;
    for (size_t v = 0; v < count; ++v)
      NotDenseFirst[value_buffer_name(op->name, static_cast<int>(v), count)] += !denseFirst;
    Stmt result = mutate(op->body);
    for (size_t v = 0; v < count; ++v)
      NotDenseFirst[value_buffer_name(op->name, static_cast<int>(v), count)] -= !denseFirst;
    if (saved)
      ValueCounts[op->name] = *saved;
    else
      ValueCounts.erase(op->name);
    // The extents in the order of the storage: the first is a row. Padded where the schedule
    // aligns the storage (align_storage), and then not padded to spread a shared tile's columns.
    std::vector<Expr> extents;
    bool aligned = false;
    for (size_t dim : order) {
      Expr extent = storedExtent(op->bounds[dim].extent);
      if (std::optional<int64_t> alignment = storageAlignment(op->name, dim)) {
        const Expr a = make_const(Int(32), *alignment);
        extent = simplify(Mul::make(Div::make(Add::make(extent, make_const(Int(32), *alignment - 1)), a), a));
        aligned = aligned || extents.empty();
      }
      extents.push_back(extent);
    }
    if (!aligned && padsSharedRows(op, extents, result))
      extents[0] = make_const(Int(32), *as_const_int(extents[0]) + 1);
    for (size_t v = count; v-- > 0;) {
      const std::string buffer = value_buffer_name(op->name, static_cast<int>(v), count);
      result = Allocate::make(buffer, op->types[v], extents, result, op->memory);
      // Index arithmetic names the storage's mins and strides; each stride is the one inside it
      // times that dimension's extent.
      auto strideName = [&](size_t k) { return buffer_field_name(buffer, "stride", static_cast<int>(order[k])); };
      for (size_t k = order.size(); k-- > 1;) {
        Expr stride = k == 1 ? extents[0] : Mul::make(var(strideName(k - 1)), extents[k - 1]);
        result = LetStmt::make(strideName(k), stride, result);
      }
      if (!denseFirst)
        result = LetStmt::make(strideName(0), make_one(Int(32)), result);
      for (size_t i = op->bounds.size(); i-- > 0;)
        result = LetStmt::make(buffer_field_name(buffer, "min", static_cast<int>(i)), op->bounds[i].min, result);
    }
    return result;
  }

  Expr index(const std::string &buffer, const std::vector<Expr> &args) const {
    auto it = NotDenseFirst.find(buffer);
    return flatIndex(buffer, args, it == NotDenseFirst.end() || it->second == 0);
  }

  // Every value is computed before any is stored: an update of a Tuple may read the others' old
  // values (f(x) = {f(x)[1], f(x)[0]} swaps them). A value that is undef() stores nothing.
  Stmt visit(const Provide *op) override {
    std::vector<Expr> args;
    for (const Expr &a : op->args)
      args.push_back(mutate(a));
    if (std::all_of(op->values.begin(), op->values.end(), [](const Expr &v) { return is_undef(v); }))
      return Evaluate::make(make_zero(Int(32)));
    if (op->values.size() == 1)
      return Store::make(op->name, mutate(op->values[0]), index(op->name, args), op->atomic);
    std::vector<Stmt> stores;
    std::vector<std::pair<std::string, Expr>> lets;
    for (size_t v = 0; v < op->values.size(); ++v) {
      if (is_undef(op->values[v]))
        continue;
      const std::string buffer = bufferOf(op->name, static_cast<int>(v));
      const std::string value = buffer + ".value" + std::to_string(TupleStores);
      lets.emplace_back(value, mutate(op->values[v]));
      stores.push_back(Store::make(buffer, Variable::make(op->values[v].type(), value), index(buffer, args),
                                   op->atomic));
    }
    ++TupleStores;
    Stmt result = Block::make(stores);
    for (auto it = lets.rbegin(); it != lets.rend(); ++it)
      result = LetStmt::make(it->first, it->second, result);
    return result;
  }

  Expr visit(const Call *op) override {
    if (op->call_type != Call::Halide && op->call_type != Call::Image)
      return IRMutator::visit(op);
    std::vector<Expr> args;
    for (const Expr &a : op->args)
      args.push_back(mutate(a));
    const std::string buffer = op->call_type == Call::Halide ? bufferOf(op->name, op->value_index) : op->name;
    return Load::make(op->type, buffer,
                      stridedFirst(op) ? flatIndex(buffer, args, /*denseFirst=*/false) : index(buffer, args));
  }

  // An input whose ImageParam sets or frees the stride of dimension 0 (an interleaved image's
  // 3): indexed by it, as every other dimension; others are dense there (AddImageChecks checks).
  static bool stridedFirst(const Call *op) {
    return op->call_type == Call::Image && op->param && DimensionConstraint::strided(op->param->constraints);
  }
};

} // namespace

Stmt storage_flattening(const Stmt &s, const std::map<std::string, size_t> &outputValues,
                        const std::set<std::string> &stridedOutputs, const Environment &env) {
  return FlattenStorage(outputValues, stridedOutputs, env).mutate(s);
}

} // namespace ptxjit::lower
