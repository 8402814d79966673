#include "IR.h"

#include "IRPrinter.h"
#include "IRVisitor.h"

namespace ptxjit {

bool Type::can_represent(Type other) const {
  if (lanes != other.lanes)
    return false;
  if (other.is_bool())
    return true;
  switch (code) {
  case Int:
    return (other.is_int() && other.bits <= bits) || (other.is_uint() && other.bits < bits);
  case UInt:
    return (other.is_uint() || other.is_bool()) && other.bits <= bits;
  case Float:
    // Float(16) holds neither bfloat16's range nor its precision; every wider float holds both.
    return (other.code == Float && other.bits <= bits) || (other.is_bfloat() && bits >= 32) ||
           ((other.is_int() || other.is_uint()) && other.bits < (bits == 64 ? 53 : bits == 32 ? 24 : 11));
  case BFloat:
    return other.is_bfloat() || ((other.is_int() || other.is_uint()) && other.bits <= 8);
  }
  return false;
}

int64_t Type::min_int() const {
  PTXJIT_INTERNAL_ASSERT(is_int(), "min_int of " + ptxjit::to_string(*this));
  return bits == 64 ? INT64_MIN : -(int64_t(1) << (bits - 1));
}

int64_t Type::max_int() const {
  PTXJIT_INTERNAL_ASSERT(is_int(), "max_int of " + ptxjit::to_string(*this));
  return bits == 64 ? INT64_MAX : (int64_t(1) << (bits - 1)) - 1;
}

uint64_t Type::max_uint() const {
  PTXJIT_INTERNAL_ASSERT(code == UInt, "max_uint of " + ptxjit::to_string(*this));
  return bits == 64 ? UINT64_MAX : (uint64_t(1) << bits) - 1;
}

std::string to_string(Type t) {
  std::string s = t.is_bool() ? "bool"
                  : (t.is_int() ? "int" : t.is_uint() ? "uint" : t.is_bfloat() ? "bfloat" : "float") + std::to_string(t.bits);
  if (t.lanes != 1)
    s += "x" + std::to_string(t.lanes);
  return s;
}

Expr::Expr(int8_t v) : Expr(ir::IntImm::make(Int(8), v)) {}
Expr::Expr(int16_t v) : Expr(ir::IntImm::make(Int(16), v)) {}
Expr::Expr(int32_t v) : Expr(ir::IntImm::make(Int(32), v)) {}
Expr::Expr(int64_t v) : Expr(ir::IntImm::make(Int(64), v)) {}
Expr::Expr(uint8_t v) : Expr(ir::UIntImm::make(UInt(8), v)) {}
Expr::Expr(uint16_t v) : Expr(ir::UIntImm::make(UInt(16), v)) {}
Expr::Expr(uint32_t v) : Expr(ir::UIntImm::make(UInt(32), v)) {}
Expr::Expr(uint64_t v) : Expr(ir::UIntImm::make(UInt(64), v)) {}
Expr::Expr(float v) : Expr(ir::FloatImm::make(Float(32), v)) {}
Expr::Expr(double v) : Expr(ir::FloatImm::make(Float(64), v)) {}
Expr::Expr(float16_t v) : Expr(ir::FloatImm::make(Float(16), v.to_double())) {}
Expr::Expr(bfloat16_t v) : Expr(ir::FloatImm::make(BFloat(16), v.to_double())) {}
Expr::Expr(bool v) : Expr(ir::UIntImm::make(Bool(), v)) {}

} // namespace ptxjit

namespace ptxjit::ir {

void internal_error(const std::string &message) { throw InternalError(message); }

void check_supported(Type t, const std::string &what) {
  if (!t.is_supported())
    throw CompileError(what + ": ptxjit's types are int and uint of 8, 16, 32 and 64 bits, bool, float of 16, 32 "
                              "and 64 bits, and bfloat16");
}

namespace {

void checkDefined(const Expr &e, const char *node, const char *operand) {
  PTXJIT_INTERNAL_ASSERT(e.defined(), std::string(node) + " with undefined " + operand);
}

void checkSameType(const Expr &a, const Expr &b, const char *node) {
  checkDefined(a, node, "a");
  checkDefined(b, node, "b");
  PTXJIT_INTERNAL_ASSERT(a.type() == b.type(), std::string(node) + " of mismatched types " +
                                                   to_string(a.type()) + " and " + to_string(b.type()) +
                                                   ": " + to_string(a) + ", " + to_string(b));
}

} // namespace

Expr IntImm::make(Type t, int64_t value) {
  PTXJIT_INTERNAL_ASSERT(t.is_int() && t.is_scalar(), "IntImm of type " + to_string(t));
  // Wrap to the type's width, as the C++ cast to that width would.
  if (t.bits < 64)
    value = static_cast<int64_t>(static_cast<uint64_t>(value) << (64 - t.bits)) >> (64 - t.bits);
  return Expr(new IntImm(t, value));
}

Expr UIntImm::make(Type t, uint64_t value) {
  PTXJIT_INTERNAL_ASSERT(t.code == Type::UInt && t.is_scalar(), "UIntImm of type " + to_string(t));
  if (t.bits < 64)
    value &= (uint64_t(1) << t.bits) - 1;
  return Expr(new UIntImm(t, value));
}

Expr FloatImm::make(Type t, double value) {
  PTXJIT_INTERNAL_ASSERT(t.is_float() && t.is_scalar(), "FloatImm of type " + to_string(t));
  // The value is one the type holds, as if computed in it: folded constants round as the generated
  // code does.
  if (t.is_bfloat())
    value = bfloat16_t(value).to_double();
  else if (t.bits == 16)
    value = float16_t(value).to_double();
  else if (t.bits == 32)
    value = static_cast<float>(value);
  return Expr(new FloatImm(t, value));
}

Expr Cast::make(Type t, Expr value) {
  checkDefined(value, "Cast", "value");
  PTXJIT_INTERNAL_ASSERT(t.lanes == value.type().lanes, "Cast changes lanes");
  return Expr(new Cast(t, std::move(value)));
}

Expr Variable::make(Type t, const std::string &name, std::shared_ptr<ParameterContents> param,
                    std::shared_ptr<ReductionDomainContents> reduction_domain) {
  auto *v = new Variable(t, name);
  v->param = std::move(param);
  v->reduction_domain = std::move(reduction_domain);
  return Expr(v);
}

#define PTXJIT_MAKE_ARITH(Name)                                                                    \
  Expr Name::make(Expr a, Expr b) {                                                                \
    checkSameType(a, b, #Name);                                                                    \
    Type t = a.type();                                                                             \
    return Expr(new Name(t, std::move(a), std::move(b)));                                          \
  }
PTXJIT_MAKE_ARITH(Add)
PTXJIT_MAKE_ARITH(Sub)
PTXJIT_MAKE_ARITH(Mul)
PTXJIT_MAKE_ARITH(Div)
PTXJIT_MAKE_ARITH(Mod)
PTXJIT_MAKE_ARITH(Min)
PTXJIT_MAKE_ARITH(Max)
#undef PTXJIT_MAKE_ARITH

#define PTXJIT_MAKE_COMPARE(Name)                                                                  \
  Expr Name::make(Expr a, Expr b) {                                                                \
    checkSameType(a, b, #Name);                                                                    \
    Type t = Bool(a.type().lanes);                                                                 \
    return Expr(new Name(t, std::move(a), std::move(b)));                                          \
  }
PTXJIT_MAKE_COMPARE(EQ)
PTXJIT_MAKE_COMPARE(NE)
PTXJIT_MAKE_COMPARE(LT)
PTXJIT_MAKE_COMPARE(LE)
PTXJIT_MAKE_COMPARE(GT)
PTXJIT_MAKE_COMPARE(GE)
#undef PTXJIT_MAKE_COMPARE

#define PTXJIT_MAKE_LOGICAL(Name)                                                                  \
  Expr Name::make(Expr a, Expr b) {                                                                \
    checkSameType(a, b, #Name);                                                                    \
    PTXJIT_INTERNAL_ASSERT(a.type().is_bool(), #Name " of non-bool " + to_string(a.type()));      \
    Type t = a.type();                                                                             \
    return Expr(new Name(t, std::move(a), std::move(b)));                                          \
  }
PTXJIT_MAKE_LOGICAL(And)
PTXJIT_MAKE_LOGICAL(Or)
#undef PTXJIT_MAKE_LOGICAL

Expr Not::make(Expr a) {
  checkDefined(a, "Not", "a");
  PTXJIT_INTERNAL_ASSERT(a.type().is_bool(), "Not of non-bool " + to_string(a.type()));
  Type t = a.type();
  return Expr(new Not(t, std::move(a)));
}

Expr Select::make(Expr condition, Expr true_value, Expr false_value) {
  checkDefined(condition, "Select", "condition");
  checkSameType(true_value, false_value, "Select");
  PTXJIT_INTERNAL_ASSERT(condition.type().is_bool(), "Select condition is not bool");
  PTXJIT_INTERNAL_ASSERT(condition.type().is_scalar() || condition.type().lanes == true_value.type().lanes,
                         "Select condition lanes differ from its values");
  Type t = true_value.type();
  return Expr(new Select(t, std::move(condition), std::move(true_value), std::move(false_value)));
}

Expr Load::make(Type t, const std::string &name, Expr index) {
  checkDefined(index, "Load", "index");
  PTXJIT_INTERNAL_ASSERT(index.type().lanes == t.lanes, "Load index lanes differ from its type");
  return Expr(new Load(t, name, std::move(index)));
}

Expr Ramp::make(Expr base, Expr stride, int lanes) {
  checkSameType(base, stride, "Ramp");
  PTXJIT_INTERNAL_ASSERT(base.type().is_scalar() && lanes > 1, "Ramp of vector base or one lane");
  Type t = base.type().with_lanes(lanes);
  return Expr(new Ramp(t, std::move(base), std::move(stride), lanes));
}

Expr Broadcast::make(Expr value, int lanes) {
  checkDefined(value, "Broadcast", "value");
  PTXJIT_INTERNAL_ASSERT(value.type().is_scalar() && lanes > 1, "Broadcast of vector or one lane");
  Type t = value.type().with_lanes(lanes);
  return Expr(new Broadcast(t, std::move(value), lanes));
}

Expr Call::make(Type t, const std::string &name, std::vector<Expr> args, CallType call_type,
                std::shared_ptr<FunctionContents> func, std::shared_ptr<ParameterContents> param, int value_index) {
  for (const Expr &arg : args)
    checkDefined(arg, "Call", "argument");
  auto *c = new Call(t, name, std::move(args), call_type);
  c->func = std::move(func);
  c->param = std::move(param);
  c->value_index = value_index;
  return Expr(c);
}

Expr Let::make(const std::string &name, Expr value, Expr body) {
  checkDefined(value, "Let", "value");
  checkDefined(body, "Let", "body");
  Type t = body.type();
  return Expr(new Let(t, name, std::move(value), std::move(body)));
}

Stmt LetStmt::make(const std::string &name, Expr value, Stmt body) {
  checkDefined(value, "LetStmt", "value");
  PTXJIT_INTERNAL_ASSERT(body.defined(), "LetStmt with undefined body");
  auto *s = new LetStmt;
  s->name = name;
  s->value = std::move(value);
  s->body = std::move(body);
  return Stmt(s);
}

Stmt AssertStmt::make(Expr condition, const std::string &message, std::vector<Expr> message_args) {
  checkDefined(condition, "AssertStmt", "condition");
  for (const Expr &arg : message_args)
    checkDefined(arg, "AssertStmt", "message argument");
  auto *s = new AssertStmt;
  s->condition = std::move(condition);
  s->message = message;
  s->message_args = std::move(message_args);
  return Stmt(s);
}

Stmt ProducerConsumer::make(const std::string &name, bool is_producer, Stmt body) {
  PTXJIT_INTERNAL_ASSERT(body.defined(), "ProducerConsumer with undefined body");
  auto *s = new ProducerConsumer;
  s->name = name;
  s->is_producer = is_producer;
  s->body = std::move(body);
  return Stmt(s);
}

std::string to_string(ForType t) {
  switch (t) {
  case ForType::Serial:
    return "for";
  case ForType::Parallel:
    return "parallel";
  case ForType::Vectorized:
    return "vectorized";
  case ForType::Unrolled:
    return "unrolled";
  case ForType::GPUBlock:
    return "gpu_block";
  case ForType::GPUThread:
    return "gpu_thread";
  }
  return "?";
}

Stmt For::make(const std::string &name, Expr min, Expr extent, ForType for_type, Stmt body) {
  checkSameType(min, extent, "For");
  PTXJIT_INTERNAL_ASSERT(body.defined(), "For with undefined body");
  auto *s = new For;
  s->name = name;
  s->min = std::move(min);
  s->extent = std::move(extent);
  s->for_type = for_type;
  s->body = std::move(body);
  return Stmt(s);
}

Stmt Store::make(const std::string &name, Expr value, Expr index, bool atomic) {
  checkDefined(value, "Store", "value");
  checkDefined(index, "Store", "index");
  PTXJIT_INTERNAL_ASSERT(value.type().lanes == index.type().lanes, "Store value and index lanes differ");
  auto *s = new Store;
  s->name = name;
  s->value = std::move(value);
  s->index = std::move(index);
  s->atomic = atomic;
  return Stmt(s);
}

Stmt Provide::make(const std::string &name, std::vector<Expr> values, std::vector<Expr> args, bool atomic) {
  PTXJIT_INTERNAL_ASSERT(!values.empty(), "Provide without values");
  for (const Expr &value : values)
    checkDefined(value, "Provide", "value");
  auto *s = new Provide;
  s->name = name;
  s->values = std::move(values);
  s->args = std::move(args);
  s->atomic = atomic;
  return Stmt(s);
}

Stmt Allocate::make(const std::string &name, Type type, std::vector<Expr> extents, Stmt body, MemoryType memory,
                    StorageSide side) {
  PTXJIT_INTERNAL_ASSERT(body.defined(), "Allocate with undefined body");
  auto *s = new Allocate;
  s->name = name;
  s->type = type;
  s->extents = std::move(extents);
  s->memory = memory;
  s->side = side;
  s->body = std::move(body);
  return Stmt(s);
}

Stmt Realize::make(const std::string &name, std::vector<Type> types, Region bounds, Stmt body, MemoryType memory) {
  PTXJIT_INTERNAL_ASSERT(body.defined(), "Realize with undefined body");
  PTXJIT_INTERNAL_ASSERT(!types.empty(), "Realize without types");
  auto *s = new Realize;
  s->name = name;
  s->types = std::move(types);
  s->bounds = std::move(bounds);
  s->memory = memory;
  s->body = std::move(body);
  return Stmt(s);
}

Stmt Block::make(Stmt first, Stmt rest) {
  if (!first.defined())
    return rest;
  if (!rest.defined())
    return first;
  auto *s = new Block;
  s->first = std::move(first);
  s->rest = std::move(rest);
  return Stmt(s);
}

Stmt Block::make(const std::vector<Stmt> &stmts) {
  Stmt result;
  for (auto it = stmts.rbegin(); it != stmts.rend(); ++it)
    result = make(*it, result);
  return result;
}

Stmt IfThenElse::make(Expr condition, Stmt then_case, Stmt else_case) {
  checkDefined(condition, "IfThenElse", "condition");
  PTXJIT_INTERNAL_ASSERT(then_case.defined(), "IfThenElse with undefined then case");
  auto *s = new IfThenElse;
  s->condition = std::move(condition);
  s->then_case = std::move(then_case);
  s->else_case = std::move(else_case);
  return Stmt(s);
}

Stmt Evaluate::make(Expr value) {
  checkDefined(value, "Evaluate", "value");
  auto *s = new Evaluate;
  s->value = std::move(value);
  return Stmt(s);
}

std::vector<Expr> conjuncts(const Expr &e) {
  if (const auto *a = e.as<And>()) {
    std::vector<Expr> terms = conjuncts(a->a);
    for (const Expr &t : conjuncts(a->b))
      terms.push_back(t);
    return terms;
  }
  return {e};
}

} // namespace ptxjit::ir
