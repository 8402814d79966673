#ifndef PTXJIT_IR_IR_H
#define PTXJIT_IR_IR_H

// The IR node structs. Each node is immutable and built with its static make(), which checks
// its operands' types. Stmt is the statement handle; Expr is public (ptxjit/Expr.h).

#include "ptxjit/Error.h"
#include "ptxjit/Expr.h"
#include "ptxjit/MemoryType.h"

#include <memory>
#include <string>
#include <vector>

namespace ptxjit {
struct FunctionContents;
struct ParameterContents;
struct ReductionDomainContents;
} // namespace ptxjit

namespace ptxjit::ir {

using ptxjit::Expr;

class Stmt : public IRHandle<BaseStmtNode> {
public:
  Stmt() = default;
  explicit Stmt(const BaseStmtNode *node) : IRHandle(node) {}
};

[[noreturn]] void internal_error(const std::string &message);

/// Throws a CompileError naming `what` (e.g. "cast to float8") when ptxjit has no such type.
void check_supported(Type t, const std::string &what);
#define PTXJIT_INTERNAL_ASSERT(cond, message)                                                      \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      ::ptxjit::ir::internal_error(std::string(__FILE__) + ":" + std::to_string(__LINE__) +        \
                                   ": internal error: " + (message));                              \
  } while (0)

template <typename T, IRNodeType Kind> struct ExprNode : BaseExprNode {
  static constexpr IRNodeType NodeType = Kind;
  explicit ExprNode(Type t) : BaseExprNode(Kind, t) {}
  void accept(IRVisitor *visitor) const override;
};

template <typename T, IRNodeType Kind> struct StmtNode : BaseStmtNode {
  static constexpr IRNodeType NodeType = Kind;
  StmtNode() : BaseStmtNode(Kind) {}
  void accept(IRVisitor *visitor) const override;
};

struct IntImm : ExprNode<IntImm, IRNodeType::IntImm> {
  IntImm(Type t, int64_t v) : ExprNode(t), value(v) {}
  int64_t value;
  static Expr make(Type t, int64_t value);
};

struct UIntImm : ExprNode<UIntImm, IRNodeType::UIntImm> {
  UIntImm(Type t, uint64_t v) : ExprNode(t), value(v) {}
  uint64_t value;
  static Expr make(Type t, uint64_t value);
};

struct FloatImm : ExprNode<FloatImm, IRNodeType::FloatImm> {
  FloatImm(Type t, double v) : ExprNode(t), value(v) {}
  double value;
  static Expr make(Type t, double value);
};

struct Cast : ExprNode<Cast, IRNodeType::Cast> {
  Cast(Type t, Expr v) : ExprNode(t), value(std::move(v)) {}
  Expr value;
  static Expr make(Type t, Expr value);
};

/// A named scalar: a loop variable, a let, a Param (`param` set), an RVar (`reduction_domain`
/// set), or a buffer field such as "in.min.0".
struct Variable : ExprNode<Variable, IRNodeType::Variable> {
  Variable(Type t, std::string n) : ExprNode(t), name(std::move(n)) {}
  std::string name;
  std::shared_ptr<ParameterContents> param;
  std::shared_ptr<ReductionDomainContents> reduction_domain;
  static Expr make(Type t, const std::string &name, std::shared_ptr<ParameterContents> param = nullptr,
                   std::shared_ptr<ReductionDomainContents> reduction_domain = nullptr);
};

#define PTXJIT_BINARY_NODE(Name)                                                                   \
  struct Name : ExprNode<Name, IRNodeType::Name> {                                                 \
    Name(Type t, Expr x, Expr y) : ExprNode(t), a(std::move(x)), b(std::move(y)) {}                \
    Expr a, b;                                                                                     \
    static Expr make(Expr a, Expr b);                                                              \
  };
PTXJIT_BINARY_NODE(Add)
PTXJIT_BINARY_NODE(Sub)
PTXJIT_BINARY_NODE(Mul)
/// Integer division is Euclidean (the remainder is never negative); x / 0 is 0.
PTXJIT_BINARY_NODE(Div)
/// The Euclidean remainder, never negative; x % 0 is 0. Floats: a - b * floor(a / b).
PTXJIT_BINARY_NODE(Mod)
PTXJIT_BINARY_NODE(Min)
PTXJIT_BINARY_NODE(Max)
PTXJIT_BINARY_NODE(EQ)
PTXJIT_BINARY_NODE(NE)
PTXJIT_BINARY_NODE(LT)
PTXJIT_BINARY_NODE(LE)
PTXJIT_BINARY_NODE(GT)
PTXJIT_BINARY_NODE(GE)
PTXJIT_BINARY_NODE(And)
PTXJIT_BINARY_NODE(Or)
#undef PTXJIT_BINARY_NODE

struct Not : ExprNode<Not, IRNodeType::Not> {
  Not(Type t, Expr v) : ExprNode(t), a(std::move(v)) {}
  Expr a;
  static Expr make(Expr a);
};

struct Select : ExprNode<Select, IRNodeType::Select> {
  Select(Type t, Expr c, Expr x, Expr y)
      : ExprNode(t), condition(std::move(c)), true_value(std::move(x)), false_value(std::move(y)) {}
  Expr condition, true_value, false_value;
  static Expr make(Expr condition, Expr true_value, Expr false_value);
};

/// A load from flat storage: an allocation, or an input or output buffer's host memory.
struct Load : ExprNode<Load, IRNodeType::Load> {
  Load(Type t, std::string n, Expr i) : ExprNode(t), name(std::move(n)), index(std::move(i)) {}
  std::string name;
  Expr index;
  static Expr make(Type t, const std::string &name, Expr index);
};

struct Ramp : ExprNode<Ramp, IRNodeType::Ramp> {
  Ramp(Type t, Expr b, Expr s, int l) : ExprNode(t), base(std::move(b)), stride(std::move(s)), lanes(l) {}
  Expr base, stride;
  int lanes;
  static Expr make(Expr base, Expr stride, int lanes);
};

struct Broadcast : ExprNode<Broadcast, IRNodeType::Broadcast> {
  Broadcast(Type t, Expr v, int l) : ExprNode(t), value(std::move(v)), lanes(l) {}
  Expr value;
  int lanes;
  static Expr make(Expr value, int lanes);
};

struct Call : ExprNode<Call, IRNodeType::Call> {
  enum CallType : uint8_t {
    Halide,     ///< a Func; `func` is null when a Func refers to itself in an update
    Image,      ///< an ImageParam or bound Buffer; `param` names it
    PureExtern, ///< a math function such as "sqrt"
    Intrinsic,  ///< a compiler intrinsic such as "likely"
  };
  /// Names of the intrinsics the language makes; the code generators implement them.
  static constexpr const char *BitwiseAnd = "bitwise_and", *BitwiseOr = "bitwise_or", *BitwiseXor = "bitwise_xor",
                              *BitwiseNot = "bitwise_not", *ShiftLeft = "shift_left", *ShiftRight = "shift_right",
                              *Reinterpret = "reinterpret", *IsNan = "is_nan", *IsInf = "is_inf",
                              *IsFinite = "is_finite", *Popcount = "popcount",
                              *CountLeadingZeros = "count_leading_zeros", *CountTrailingZeros = "count_trailing_zeros";
  /// undef(): a whole value of a definition that stores nothing (see is_undef).
  static constexpr const char *Undef = "undef";
  /// random_float(), random_int(), random_uint(): args are the call's id, then its seed if any.
  /// A definition replaces each with a hash of the point it computes (lower_random).
  static constexpr const char *Random = "random";
  /// print_when(): named Print + ":" + its format, the text with PrintPlaceholder for each value
  /// (doubled where the text has it); args are the condition, then the values, the first of
  /// which is the call's value.
  static constexpr const char *Print = "print", *PrintPlaceholder = "%";
  /// Moves between a buffer's host and device copies on a GPU target (InjectHostDeviceCopies):
  /// an Evaluate of a call whose one argument is a Variable named as the buffer. A copy does
  /// nothing unless the other side is newer (dirty); the dirty marks follow a side's writes.
  static constexpr const char *CopyToHost = "copy_to_host", *CopyToDevice = "copy_to_device",
                              *SetHostDirty = "set_host_dirty", *SetDeviceDirty = "set_device_dirty";
  /// A hint to load the cache line of an element (InjectPrefetches): the one argument is a read
  /// of the element (a Call, a Load after storage flattening) that is not performed, only its
  /// address taken. Addresses outside the buffer are allowed: a prefetch never faults.
  static constexpr const char *Prefetch = "prefetch";
  bool is_undef() const { return call_type == Intrinsic && name == Undef; }
  /// A trace event of a Func (trace_stores, trace_loads, trace_realizations; InjectTracing):
  /// named Trace + ":" + its format, args laid out as require's (the condition, the value, then
  /// the message's values), printed as print's.
  static constexpr const char *Trace = "trace";
  bool is_print() const { return call_type == Intrinsic && name.rfind(std::string(Print) + ":", 0) == 0; }
  bool is_trace() const { return call_type == Intrinsic && name.rfind(std::string(Trace) + ":", 0) == 0; }
  std::string print_format() const { return name.substr(name.find(':') + 1); }
  /// require(): named Require + ":" + its message, formatted as print's; args are the condition,
  /// the value, then the message's values. A realize where the condition fails fails with it.
  static constexpr const char *Require = "require";
  bool is_require() const { return call_type == Intrinsic && name.rfind(std::string(Require) + ":", 0) == 0; }
  Call(Type t, std::string n, std::vector<Expr> a, CallType ct)
      : ExprNode(t), name(std::move(n)), args(std::move(a)), call_type(ct) {}
  std::string name;
  std::vector<Expr> args;
  CallType call_type;
  std::shared_ptr<FunctionContents> func;
  std::shared_ptr<ParameterContents> param;
  /// Which value of a Func of several (a Tuple) the call reads.
  int value_index = 0;
  static Expr make(Type t, const std::string &name, std::vector<Expr> args, CallType call_type,
                   std::shared_ptr<FunctionContents> func = nullptr,
                   std::shared_ptr<ParameterContents> param = nullptr, int value_index = 0);
};

/// Whether `e` is undef(): a value that a definition leaves as it was.
inline bool is_undef(const Expr &e) {
  const Call *call = e.as<Call>();
  return call && call->is_undef();
}

/// The terms of a conjunction `a && b && ...`, in order; `e` alone where it is no And.
std::vector<Expr> conjuncts(const Expr &e);

struct Let : ExprNode<Let, IRNodeType::Let> {
  Let(Type t, std::string n, Expr v, Expr b)
      : ExprNode(t), name(std::move(n)), value(std::move(v)), body(std::move(b)) {}
  std::string name;
  Expr value, body;
  static Expr make(const std::string &name, Expr value, Expr body);
};

struct LetStmt : StmtNode<LetStmt, IRNodeType::LetStmt> {
  std::string name;
  Expr value;
  Stmt body;
  static Stmt make(const std::string &name, Expr value, Stmt body);
};

/// Fails the pipeline when `condition` is false, with `message` in which each '%' is replaced
/// by the value of the next of `message_args` (integers).
struct AssertStmt : StmtNode<AssertStmt, IRNodeType::AssertStmt> {
  Expr condition;
  std::string message;
  std::vector<Expr> message_args;
  static Stmt make(Expr condition, const std::string &message, std::vector<Expr> message_args = {});
};

struct ProducerConsumer : StmtNode<ProducerConsumer, IRNodeType::ProducerConsumer> {
  std::string name;
  bool is_producer;
  Stmt body;
  static Stmt make(const std::string &name, bool is_producer, Stmt body);
};

/// The name of the loop of one iteration around all of a stage's loops (Var::outermost()).
constexpr const char *OutermostLoop = "__outermost";

/// GPUBlock and GPUThread loops run as a CUDA kernel's grid and block: the innermost block loop
/// is blockIdx.x, the next .y, then .z; likewise for threads.
enum class ForType : uint8_t { Serial, Parallel, Vectorized, Unrolled, GPUBlock, GPUThread };
inline bool is_gpu(ForType t) { return t == ForType::GPUBlock || t == ForType::GPUThread; }
std::string to_string(ForType t);

struct For : StmtNode<For, IRNodeType::For> {
  std::string name;
  Expr min, extent;
  ForType for_type;
  Stmt body;
  static Stmt make(const std::string &name, Expr min, Expr extent, ForType for_type, Stmt body);
};

/// `atomic`: value is name[index] + e (or - e), and the store adds e atomically.
struct Store : StmtNode<Store, IRNodeType::Store> {
  std::string name;
  Expr value, index;
  bool atomic = false;
  static Stmt make(const std::string &name, Expr value, Expr index, bool atomic = false);
};

/// A multi-dimensional store to a Func, before storage flattening.
/// Stores the values of a Func (several for a Tuple) at a point; every value is computed before
/// any is stored.
struct Provide : StmtNode<Provide, IRNodeType::Provide> {
  std::string name;
  std::vector<Expr> values;
  std::vector<Expr> args;
  bool atomic = false;
  static Stmt make(const std::string &name, std::vector<Expr> values, std::vector<Expr> args, bool atomic = false);
};

/// Where storage outside GPU kernels lives: InjectHostDeviceCopies decides on a GPU target from
/// the sides that read and write it (both: two copies, moved as each side needs them). Storage
/// inside kernels (shared memory, registers) ignores it.
enum class StorageSide : uint8_t { Host, Device, HostAndDevice };

/// Flat storage of `type`, `extents` multiplied, live for `body`.
struct Allocate : StmtNode<Allocate, IRNodeType::Allocate> {
  std::string name;
  Type type;
  std::vector<Expr> extents;
  MemoryType memory = MemoryType::Auto;
  StorageSide side = StorageSide::Host;
  Stmt body;
  static Stmt make(const std::string &name, Type type, std::vector<Expr> extents, Stmt body,
                   MemoryType memory = MemoryType::Auto, StorageSide side = StorageSide::Host);
};

/// Multi-dimensional storage for a Func over `bounds`, before storage flattening: one buffer for
/// each of its values' types.
struct Realize : StmtNode<Realize, IRNodeType::Realize> {
  std::string name;
  std::vector<Type> types;
  Region bounds;
  MemoryType memory = MemoryType::Auto;
  Stmt body;
  static Stmt make(const std::string &name, std::vector<Type> types, Region bounds, Stmt body,
                   MemoryType memory = MemoryType::Auto);
};

struct Block : StmtNode<Block, IRNodeType::Block> {
  Stmt first, rest;
  /// Skips undefined statements; returns the other when one is undefined.
  static Stmt make(Stmt first, Stmt rest);
  static Stmt make(const std::vector<Stmt> &stmts);
};

struct IfThenElse : StmtNode<IfThenElse, IRNodeType::IfThenElse> {
  Expr condition;
  Stmt then_case, else_case;
  static Stmt make(Expr condition, Stmt then_case, Stmt else_case = Stmt());
};

struct Evaluate : StmtNode<Evaluate, IRNodeType::Evaluate> {
  Expr value;
  static Stmt make(Expr value);
};

} // namespace ptxjit::ir

#endif
