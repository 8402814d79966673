#include "CodeGen_LLVM.h"

#include "ir/Constants.h"
#include "ir/IREquality.h"
#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"

#include <llvm/IR/Intrinsics.h>

#include <functional>
#include <set>

namespace ptxjit::codegen {

using namespace ir;

CodeGen_LLVM::CodeGen_LLVM(llvm::LLVMContext &context, const Target &target)
    : Context(context), TheTarget(target), Builder(std::make_unique<llvm::IRBuilder<>>(context)) {
  // Fast math unless strict_float, as in Halide: no NaNs or infinities assumed, signed zeros
  // ignored, reassociation, contraction into FMA and approximate functions allowed; not
  // reciprocals, which lose too much.
  llvm::FastMathFlags flags;
  if (!target.has_feature(Target::Feature::StrictFloat)) {
    flags.setNoNaNs();
    flags.setNoInfs();
    flags.setNoSignedZeros();
    flags.setAllowReassoc();
    flags.setAllowContract(true);
    flags.setApproxFunc();
  }
  Builder->setFastMathFlags(flags);
}

void CodeGen_LLVM::pop(const std::string &name) {
  auto it = Symbols.find(name);
  PTXJIT_INTERNAL_ASSERT(it != Symbols.end() && !it->second.empty(), "pop of unbound symbol " + name);
  it->second.pop_back();
  if (it->second.empty())
    Symbols.erase(it);
}

llvm::Value *CodeGen_LLVM::lookup(const std::string &name) const {
  auto it = Symbols.find(name);
  PTXJIT_INTERNAL_ASSERT(it != Symbols.end() && !it->second.empty(), "codegen: symbol " + name + " is not defined");
  return it->second.back();
}

bool CodeGen_LLVM::has_symbol(const std::string &name) const { return Symbols.count(name) != 0; }

llvm::Value *CodeGen_LLVM::codegen(const Expr &e) {
  PTXJIT_INTERNAL_ASSERT(e.defined(), "codegen of an undefined Expr");
  Value = nullptr;
  e.accept(this);
  PTXJIT_INTERNAL_ASSERT(Value != nullptr, "codegen produced no value for " + to_string(e));
  return Value;
}

void CodeGen_LLVM::codegen(const Stmt &s) {
  if (s.defined())
    s.accept(this);
}

llvm::Type *CodeGen_LLVM::llvm_type_of(Type t) const {
  llvm::Type *element = nullptr;
  if (t.is_bfloat()) // its bits: lower::widen_float16 left only moves and reinterprets of them
    element = llvm::Type::getInt16Ty(Context);
  else if (t.is_float())
    element = t.bits == 16 ? llvm::Type::getHalfTy(Context)
              : t.bits == 32 ? llvm::Type::getFloatTy(Context)
                             : llvm::Type::getDoubleTy(Context);
  else
    element = llvm::Type::getIntNTy(Context, t.bits);
  return t.is_scalar() ? element : llvm::FixedVectorType::get(element, t.lanes);
}

llvm::Type *CodeGen_LLVM::storage_type_of(Type t) const {
  return t.is_bool() ? llvm_type_of(UInt(8, t.lanes)) : llvm_type_of(t);
}

void CodeGen_LLVM::build_loop(const std::string &name, llvm::Value *min, llvm::Value *extent,
                              const std::function<void(llvm::Value *)> &body) {
  llvm::BasicBlock *preheader = Builder->GetInsertBlock();
  llvm::BasicBlock *header = llvm::BasicBlock::Create(Context, name + ".loop", Function);
  llvm::BasicBlock *after = llvm::BasicBlock::Create(Context, name + ".end", Function);
  llvm::Value *end = Builder->CreateAdd(min, extent, name + ".loop_end", false, true);
  Builder->CreateCondBr(Builder->CreateICmpSLT(min, end), header, after);
  Builder->SetInsertPoint(header);
  llvm::PHINode *phi = Builder->CreatePHI(min->getType(), 2, name);
  phi->addIncoming(min, preheader);
  body(phi);
  // phi < end, so phi + 1 cannot overflow as a signed value; as an unsigned one it wraps from -1
  // to 0, which a loop over negative coordinates does: no-unsigned-wrap would be a lie.
  llvm::Value *next = Builder->CreateAdd(phi, llvm::ConstantInt::get(min->getType(), 1), name + ".next", false, true);
  phi->addIncoming(next, Builder->GetInsertBlock());
  Builder->CreateCondBr(Builder->CreateICmpSLT(next, end), header, after);
  Builder->SetInsertPoint(after);
}

void CodeGen_LLVM::visit(const IntImm *op) { Value = llvm::ConstantInt::getSigned(llvm_type_of(op->type), op->value); }
void CodeGen_LLVM::visit(const UIntImm *op) { Value = llvm::ConstantInt::get(llvm_type_of(op->type), op->value); }
void CodeGen_LLVM::visit(const FloatImm *op) {
  Value = op->type.is_bfloat() ? llvm::ConstantInt::get(llvm_type_of(op->type), bfloat16_t(op->value).bits)
                               : llvm::ConstantFP::get(llvm_type_of(op->type), op->value);
}

void CodeGen_LLVM::visit(const Cast *op) {
  Type from = op->value.type(), to = op->type;
  PTXJIT_INTERNAL_ASSERT(!from.is_bfloat() && !to.is_bfloat(), "codegen: a bfloat16 conversion left by lowering: " + to_string(Expr(op)));
  llvm::Value *v = codegen(op->value);
  llvm::Type *t = llvm_type_of(to);
  if (to.is_bool()) {
    Value = from.is_float() ? Builder->CreateFCmpUNE(v, llvm::Constant::getNullValue(v->getType()))
                            : Builder->CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
  } else if (from.is_float() && to.is_float()) {
    // lower::widen_float16 made each 16-bit operation a float32 one rounded by this cast. The
    // fence keeps LLVM from narrowing it back into a half operation, which x86 then computes in
    // float32 together with the next one, without the rounding between them.
    if (to.bits == 16 && from.bits == 32)
      v = Builder->CreateArithmeticFence(v, v->getType());
    Value = Builder->CreateFPCast(v, t);
  } else if (from.is_float()) {
    Value = to.is_int() ? Builder->CreateFPToSI(v, t) : Builder->CreateFPToUI(v, t);
  } else if (to.is_float()) {
    Value = from.is_int() ? Builder->CreateSIToFP(v, t) : Builder->CreateUIToFP(v, t);
  } else {
    Value = Builder->CreateIntCast(v, t, from.is_int());
  }
}

void CodeGen_LLVM::visit(const Variable *op) { Value = lookup(op->name); }

// Signed integers of 32 bits and more do not overflow (as in Halide and C++): LLVM may then fold
// index arithmetic, e.g. the -1 of in(x - 1) into a load's address offset. Narrower ones wrap.
static bool overflowIsUndefined(Type t) { return t.is_int() && t.bits >= 32; }

// a * b + c as llvm.fmuladd, which the backend fuses into one FMA even where the product and the
// sum would end up in different basic blocks (with a wide load between them, say). Null when
// strict_float or when neither operand is a product.
llvm::Value *CodeGen_LLVM::multiplyAdd(const Expr &x, const Expr &y, bool subtract) {
  if (!x.type().is_float() || TheTarget.has_feature(Target::Feature::StrictFloat))
    return nullptr;
  const Mul *product = x.as<Mul>();
  Expr addend = y;
  bool negateProduct = false, negateAddend = subtract;
  if (!product && (product = y.as<Mul>())) {
    addend = x;
    negateProduct = subtract;
    negateAddend = false;
  }
  if (!product)
    return nullptr;
  llvm::Value *a = codegen(product->a), *b = codegen(product->b), *c = codegen(addend);
  if (negateProduct)
    a = Builder->CreateFNeg(a);
  if (negateAddend)
    c = Builder->CreateFNeg(c);
  return Builder->CreateIntrinsic(llvm::Intrinsic::fmuladd, {a->getType()}, {a, b, c});
}

void CodeGen_LLVM::visit(const Add *op) {
  if ((Value = multiplyAdd(op->a, op->b, false)))
    return;
  llvm::Value *a = codegen(op->a), *b = codegen(op->b);
  Value = op->type.is_float() ? Builder->CreateFAdd(a, b) : Builder->CreateAdd(a, b, "", false, overflowIsUndefined(op->type));
}
void CodeGen_LLVM::visit(const Sub *op) {
  if ((Value = multiplyAdd(op->a, op->b, true)))
    return;
  llvm::Value *a = codegen(op->a), *b = codegen(op->b);
  Value = op->type.is_float() ? Builder->CreateFSub(a, b) : Builder->CreateSub(a, b, "", false, overflowIsUndefined(op->type));
}
void CodeGen_LLVM::visit(const Mul *op) {
  llvm::Value *a = codegen(op->a), *b = codegen(op->b);
  Value = op->type.is_float() ? Builder->CreateFMul(a, b) : Builder->CreateMul(a, b, "", false, overflowIsUndefined(op->type));
}

// Euclidean division and remainder (remainder never negative); a zero divisor gives zero.
llvm::Value *CodeGen_LLVM::integerDivMod(Type t, llvm::Value *a, llvm::Value *b, const Expr &divisor, bool wantMod) {
  llvm::Type *ty = a->getType();
  auto constant = [&](int64_t v) { return llvm::ConstantInt::getSigned(ty, v); };
  if (auto c = as_const_int(divisor); c && *c > 0 && (*c & (*c - 1)) == 0) {
    int shift = 0;
    while ((int64_t(1) << shift) < *c)
      ++shift;
    if (wantMod)
      return Builder->CreateAnd(a, constant(*c - 1));
    return t.is_int() ? Builder->CreateAShr(a, constant(shift)) : Builder->CreateLShr(a, constant(shift));
  }
  llvm::Value *zero = llvm::Constant::getNullValue(ty);
  if (!t.is_int()) {
    llvm::Value *isZero = Builder->CreateICmpEQ(b, zero);
    llvm::Value *safe = Builder->CreateSelect(isZero, constant(1), b);
    llvm::Value *r = wantMod ? Builder->CreateURem(a, safe) : Builder->CreateUDiv(a, safe);
    return Builder->CreateSelect(isZero, zero, r);
  }
  // Divisors 0 and -1 take a safe divisor of 1 (no trap on INT_MIN / -1); their results are fixed below.
  llvm::Value *isZero = Builder->CreateICmpEQ(b, zero);
  llvm::Value *isMinusOne = Builder->CreateICmpEQ(b, constant(-1));
  llvm::Value *safe = Builder->CreateSelect(Builder->CreateOr(isZero, isMinusOne), constant(1), b);
  llvm::Value *q = Builder->CreateSDiv(a, safe);
  llvm::Value *r = Builder->CreateSRem(a, safe);
  llvm::Value *negative = Builder->CreateICmpSLT(r, zero);
  llvm::Value *bPositive = Builder->CreateICmpSGT(safe, zero);
  if (wantMod) {
    llvm::Value *absB = Builder->CreateSelect(bPositive, safe, Builder->CreateNeg(safe));
    r = Builder->CreateSelect(negative, Builder->CreateAdd(r, absB), r);
    return Builder->CreateSelect(Builder->CreateOr(isZero, isMinusOne), zero, r);
  }
  llvm::Value *adjusted = Builder->CreateSelect(bPositive, Builder->CreateSub(q, constant(1)), Builder->CreateAdd(q, constant(1)));
  q = Builder->CreateSelect(negative, adjusted, q);
  q = Builder->CreateSelect(isMinusOne, Builder->CreateNeg(a), q);
  return Builder->CreateSelect(isZero, zero, q);
}

void CodeGen_LLVM::visit(const Div *op) {
  // Dividing by a float constant multiplies by its reciprocal (one rounding more), unless strict_float.
  if (auto c = as_const_float(op->b); c && *c != 0.0 && !TheTarget.has_feature(Target::Feature::StrictFloat)) {
    llvm::Value *a = codegen(op->a);
    llvm::Value *reciprocal = codegen(make_const(op->b.type(), 1.0 / *c));
    Value = Builder->CreateFMul(a, reciprocal);
    return;
  }
  llvm::Value *a = codegen(op->a), *b = codegen(op->b);
  Value = op->type.is_float() ? Builder->CreateFDiv(a, b) : integerDivMod(op->type, a, b, op->b, false);
}

void CodeGen_LLVM::visit(const Mod *op) {
  llvm::Value *a = codegen(op->a), *b = codegen(op->b);
  if (op->type.is_float()) {
    llvm::Value *q = call_math("floor", op->type, {Builder->CreateFDiv(a, b)});
    Value = Builder->CreateFSub(a, Builder->CreateFMul(b, q));
  } else {
    Value = integerDivMod(op->type, a, b, op->b, true);
  }
}

void CodeGen_LLVM::visit(const Min *op) {
  llvm::Value *a = codegen(op->a), *b = codegen(op->b);
  if (op->type.is_float()) {
    a = selected_float(a);
    b = selected_float(b);
  }
  llvm::Value *lt = op->type.is_float() ? Builder->CreateFCmpOLT(a, b)
                    : op->type.is_int() ? Builder->CreateICmpSLT(a, b)
                                        : Builder->CreateICmpULT(a, b);
  Value = Builder->CreateSelect(lt, a, b);
}

void CodeGen_LLVM::visit(const Max *op) {
  llvm::Value *a = codegen(op->a), *b = codegen(op->b);
  if (op->type.is_float()) {
    a = selected_float(a);
    b = selected_float(b);
  }
  llvm::Value *gt = op->type.is_float() ? Builder->CreateFCmpOGT(a, b)
                    : op->type.is_int() ? Builder->CreateICmpSGT(a, b)
                                        : Builder->CreateICmpUGT(a, b);
  Value = Builder->CreateSelect(gt, a, b);
}

llvm::Value *CodeGen_LLVM::compare(const BaseExprNode *, const Expr &a, const Expr &b, llvm::CmpInst::Predicate s,
                                   llvm::CmpInst::Predicate u, llvm::CmpInst::Predicate f) {
  Type t = a.type();
  llvm::Value *va = codegen(a), *vb = codegen(b);
  if (t.is_float())
    return Builder->CreateFCmp(f, va, vb);
  return Builder->CreateICmp(t.is_int() ? s : u, va, vb);
}

void CodeGen_LLVM::visit(const EQ *op) {
  Value = compare(op, op->a, op->b, llvm::CmpInst::ICMP_EQ, llvm::CmpInst::ICMP_EQ, llvm::CmpInst::FCMP_OEQ);
}
void CodeGen_LLVM::visit(const NE *op) {
  Value = compare(op, op->a, op->b, llvm::CmpInst::ICMP_NE, llvm::CmpInst::ICMP_NE, llvm::CmpInst::FCMP_UNE);
}
void CodeGen_LLVM::visit(const LT *op) {
  Value = compare(op, op->a, op->b, llvm::CmpInst::ICMP_SLT, llvm::CmpInst::ICMP_ULT, llvm::CmpInst::FCMP_OLT);
}
void CodeGen_LLVM::visit(const LE *op) {
  Value = compare(op, op->a, op->b, llvm::CmpInst::ICMP_SLE, llvm::CmpInst::ICMP_ULE, llvm::CmpInst::FCMP_OLE);
}
void CodeGen_LLVM::visit(const GT *op) {
  Value = compare(op, op->a, op->b, llvm::CmpInst::ICMP_SGT, llvm::CmpInst::ICMP_UGT, llvm::CmpInst::FCMP_OGT);
}
void CodeGen_LLVM::visit(const GE *op) {
  Value = compare(op, op->a, op->b, llvm::CmpInst::ICMP_SGE, llvm::CmpInst::ICMP_UGE, llvm::CmpInst::FCMP_OGE);
}
void CodeGen_LLVM::visit(const And *op) {
  llvm::Value *a = codegen(op->a), *b = codegen(op->b);
  Value = Builder->CreateAnd(a, b);
}
void CodeGen_LLVM::visit(const Or *op) {
  llvm::Value *a = codegen(op->a), *b = codegen(op->b);
  Value = Builder->CreateOr(a, b);
}
void CodeGen_LLVM::visit(const Not *op) { Value = Builder->CreateNot(codegen(op->a)); }

void CodeGen_LLVM::visit(const Select *op) {
  llvm::Value *c = codegen(op->condition), *t = codegen(op->true_value), *f = codegen(op->false_value);
  if (op->type.is_float()) {
    t = selected_float(t);
    f = selected_float(f);
  }
  Value = Builder->CreateSelect(c, t, f);
}

llvm::Value *CodeGen_LLVM::elementPointer(const std::string &buffer, Type t, llvm::Value *index) {
  return Builder->CreateInBoundsGEP(storage_type_of(t.element_of()), lookup(buffer), index);
}

// The first index of a dense (stride 1) vector access, or null.
llvm::Value *CodeGen_LLVM::denseBase(const Expr &index) {
  const auto *ramp = index.as<Ramp>();
  if (ramp && is_const_one(ramp->stride))
    return codegen(ramp->base);
  return nullptr;
}

void CodeGen_LLVM::visit(const Load *op) {
  Type t = op->type;
  llvm::Type *storage = storage_type_of(t);
  auto fromStorage = [&](llvm::Value *v) { return t.is_bool() ? Builder->CreateTrunc(v, llvm_type_of(t)) : v; };
  llvm::Align align(t.element_of().bytes() ? t.element_of().bytes() : 1);
  if (t.is_scalar()) {
    Value = fromStorage(Builder->CreateAlignedLoad(storage, elementPointer(op->name, t, codegen(op->index)), align));
    return;
  }
  if (llvm::Value *base = denseBase(op->index)) {
    Value = fromStorage(dense_vector_load(storage, elementPointer(op->name, t, base), align));
    return;
  }
  llvm::Value *indices = codegen(op->index);
  llvm::Value *result = llvm::UndefValue::get(storage);
  for (int i = 0; i < t.lanes; ++i) {
    llvm::Value *index = Builder->CreateExtractElement(indices, i);
    llvm::Value *lane = Builder->CreateAlignedLoad(storage_type_of(t.element_of()),
                                                   elementPointer(op->name, t, index), align);
    result = Builder->CreateInsertElement(result, lane, i);
  }
  Value = fromStorage(result);
}

llvm::Value *CodeGen_LLVM::dense_vector_load(llvm::Type *type, llvm::Value *pointer, llvm::Align elementAlign) {
  return Builder->CreateAlignedLoad(type, pointer, elementAlign);
}

void CodeGen_LLVM::dense_vector_store(llvm::Value *value, llvm::Value *pointer, llvm::Align elementAlign) {
  Builder->CreateAlignedStore(value, pointer, elementAlign);
}

namespace {

// The value of an atomic update with its reads of the point updated replaced by `replacement`
// (the value last seen there). Indices are compared with the enclosing lets substituted, as
// atomic() compared the Func's arguments.
class ReplaceReadsOfPointUpdated : public IRMutator {
public:
  ReplaceReadsOfPointUpdated(const Store *store, Expr replacement)
      : Target(store), Index(simplify(store->index)), Replacement(std::move(replacement)) {}
  using IRMutator::mutate;

private:
  Expr visit(const Let *op) override {
    Expr value = mutate(op->value);
    Expr previous = LetValues.count(op->name) ? LetValues[op->name] : Expr();
    LetValues[op->name] = substitute(LetValues, op->value);
    Expr body = mutate(op->body);
    if (previous.defined())
      LetValues[op->name] = previous;
    else
      LetValues.erase(op->name);
    return Let::make(op->name, value, body);
  }
  Expr visit(const Load *op) override {
    if (op->name != Target->name)
      return IRMutator::visit(op);
    if (!equal(simplify(substitute(LetValues, op->index)), Index))
      throw CompileError("the atomic update of " + Target->name + " reads it at another point than the one it " +
                         "updates after lowering: " + to_string(Target->value));
    return Replacement;
  }

  const Store *Target;
  Expr Index;
  Expr Replacement;
  std::map<std::string, Expr> LetValues;
};

// `value` as old + e (or with e's terms reassociated around old, as the simplifier leaves them),
// where neither e nor the lets around the sum read old: e with those lets, or undefined.
Expr addendOf(const Expr &value, const std::string &old) {
  Expr body = value;
  std::vector<const Let *> lets;
  while (const auto *let = body.as<Let>()) {
    if (uses_variable(let->value, old))
      return Expr();
    lets.push_back(let);
    body = let->body;
  }
  std::vector<std::pair<Expr, bool>> terms; // term, negated
  std::function<void(const Expr &, bool)> gather = [&](const Expr &e, bool negated) {
    if (const auto *add = e.as<Add>()) {
      gather(add->a, negated);
      gather(add->b, negated);
    } else if (const auto *sub = e.as<Sub>()) {
      gather(sub->a, negated);
      gather(sub->b, !negated);
    } else {
      terms.emplace_back(e, negated);
    }
  };
  gather(body, false);
  int reads = 0;
  Expr addend;
  for (const auto &[term, negated] : terms) {
    const auto *variable = term.as<Variable>();
    if (variable && variable->name == old && !negated && reads++ == 0)
      continue;
    if (uses_variable(term, old))
      return Expr();
    Expr signedTerm = negated ? Expr(Sub::make(make_zero(term.type()), term)) : term;
    addend = addend.defined() ? Expr(Add::make(addend, signedTerm)) : signedTerm;
  }
  if (reads != 1 || !addend.defined())
    return Expr();
  for (auto it = lets.rbegin(); it != lets.rend(); ++it)
    addend = Let::make((*it)->name, (*it)->value, addend);
  return addend;
}

} // namespace

void CodeGen_LLVM::atomicStore(const Store *op) {
  // atomic() checked that the value reads the Func only at the point updated. A sum becomes an
  // atomic add; any other update a compare-and-swap loop, which recomputes the value from what
  // it last saw at the point until no other thread wrote there in between.
  Type t = op->value.type();
  PTXJIT_INTERNAL_ASSERT(!t.is_bool(), "codegen: atomic update of the bool " + op->name + " (atomic() refuses it)");
  if (t.is_vector())
    throw CompileError("the atomic update of " + op->name + " is not of one element after lowering: " +
                       to_string(op->value));
  const std::string old = op->name + ".atomic_seen";
  const Expr valueOfOld = ReplaceReadsOfPointUpdated(op, Variable::make(t, old)).mutate(op->value);
  llvm::Value *address = elementPointer(op->name, t, codegen(op->index));
  const llvm::Align align(t.bytes());
  llvm::Type *bits = Builder->getIntNTy(t.bits);
  if (!uses_variable(valueOfOld, old)) {
    Builder->CreateAlignedStore(Builder->CreateBitCast(codegen(valueOfOld), bits), address, align)
        ->setAtomic(llvm::AtomicOrdering::Monotonic);
    return;
  }
  if (Expr addend = addendOf(valueOfOld, old); addend.defined()) {
    Builder->CreateAtomicRMW(t.is_float() ? llvm::AtomicRMWInst::FAdd : llvm::AtomicRMWInst::Add, address,
                             codegen(addend), align, llvm::AtomicOrdering::Monotonic);
    return;
  }
  llvm::LoadInst *initial = Builder->CreateAlignedLoad(bits, address, align);
  initial->setAtomic(llvm::AtomicOrdering::Monotonic);
  llvm::BasicBlock *entry = Builder->GetInsertBlock();
  llvm::BasicBlock *loop = llvm::BasicBlock::Create(Context, op->name + ".atomic_loop", Function);
  llvm::BasicBlock *after = llvm::BasicBlock::Create(Context, op->name + ".atomic_end", Function);
  Builder->CreateBr(loop);
  Builder->SetInsertPoint(loop);
  llvm::PHINode *seen = Builder->CreatePHI(bits, 2);
  seen->addIncoming(initial, entry);
  push(old, Builder->CreateBitCast(seen, llvm_type_of(t)));
  llvm::Value *desired = Builder->CreateBitCast(codegen(valueOfOld), bits);
  pop(old);
  llvm::Value *exchange = Builder->CreateAtomicCmpXchg(address, seen, desired, align, llvm::AtomicOrdering::Monotonic,
                                                       llvm::AtomicOrdering::Monotonic);
  seen->addIncoming(Builder->CreateExtractValue(exchange, 0), Builder->GetInsertBlock());
  Builder->CreateCondBr(Builder->CreateExtractValue(exchange, 1), after, loop);
  Builder->SetInsertPoint(after);
}

void CodeGen_LLVM::visit(const Store *op) {
  if (op->atomic) {
    atomicStore(op);
    return;
  }
  Type t = op->value.type();
  llvm::Value *value = codegen(op->value);
  if (t.is_bool())
    value = Builder->CreateZExt(value, storage_type_of(t));
  llvm::Align align(t.element_of().bytes() ? t.element_of().bytes() : 1);
  if (t.is_scalar()) {
    Builder->CreateAlignedStore(value, elementPointer(op->name, t, codegen(op->index)), align);
    return;
  }
  if (llvm::Value *base = denseBase(op->index)) {
    dense_vector_store(value, elementPointer(op->name, t, base), align);
    return;
  }
  llvm::Value *indices = codegen(op->index);
  for (int i = 0; i < t.lanes; ++i)
    Builder->CreateAlignedStore(Builder->CreateExtractElement(value, i),
                                elementPointer(op->name, t, Builder->CreateExtractElement(indices, i)), align);
}

void CodeGen_LLVM::visit(const Ramp *op) {
  llvm::Value *base = codegen(op->base), *stride = codegen(op->stride);
  Type t = op->type;
  llvm::Value *lanes = Builder->CreateVectorSplat(op->lanes, base);
  llvm::Value *strides = Builder->CreateVectorSplat(op->lanes, stride);
  std::vector<llvm::Constant *> steps;
  for (int i = 0; i < op->lanes; ++i)
    steps.push_back(t.is_float() ? static_cast<llvm::Constant *>(llvm::ConstantFP::get(llvm_type_of(t.element_of()), i))
                                 : llvm::ConstantInt::get(llvm_type_of(t.element_of()), i));
  llvm::Value *offsets = llvm::ConstantVector::get(steps);
  Value = t.is_float() ? Builder->CreateFAdd(lanes, Builder->CreateFMul(strides, offsets))
                       : Builder->CreateAdd(lanes, Builder->CreateMul(strides, offsets));
}

void CodeGen_LLVM::visit(const Broadcast *op) { Value = Builder->CreateVectorSplat(op->lanes, codegen(op->value)); }

llvm::Value *CodeGen_LLVM::call_math(const std::string &name, Type t, const std::vector<llvm::Value *> &args) {
  static const std::map<std::string, llvm::Intrinsic::ID> intrinsics = {
      {"sqrt", llvm::Intrinsic::sqrt},   {"exp", llvm::Intrinsic::exp},     {"log", llvm::Intrinsic::log},
      {"pow", llvm::Intrinsic::pow},     {"sin", llvm::Intrinsic::sin},     {"cos", llvm::Intrinsic::cos},
      {"floor", llvm::Intrinsic::floor}, {"ceil", llvm::Intrinsic::ceil}, {"round", llvm::Intrinsic::roundeven},
      {"trunc", llvm::Intrinsic::trunc}, {"fabs", llvm::Intrinsic::fabs}};
  // No LLVM intrinsic: the C library's, one lane at a time.
  static const std::set<std::string> libm = {"tanh", "tan",  "asin",  "acos",  "atan", "atan2",
                                             "sinh", "cosh", "asinh", "acosh", "atanh", "erf"};
  llvm::Type *type = llvm_type_of(t);
  if (auto it = intrinsics.find(name); it != intrinsics.end())
    return Builder->CreateIntrinsic(it->second, {type}, args);
  PTXJIT_INTERNAL_ASSERT(libm.count(name), "codegen: unknown math function " + name);
  llvm::Type *scalar = llvm_type_of(t.element_of());
  std::vector<llvm::Type *> params(args.size(), scalar);
  llvm::FunctionCallee f =
      Module->getOrInsertFunction(t.bits == 32 ? name + "f" : name, llvm::FunctionType::get(scalar, params, false));
  if (t.is_scalar())
    return Builder->CreateCall(f, args);
  llvm::Value *result = llvm::UndefValue::get(type);
  for (int i = 0; i < t.lanes; ++i) {
    std::vector<llvm::Value *> lane;
    for (llvm::Value *a : args)
      lane.push_back(Builder->CreateExtractElement(a, i));
    result = Builder->CreateInsertElement(result, Builder->CreateCall(f, lane), i);
  }
  return result;
}

llvm::Value *CodeGen_LLVM::call_intrinsic(const std::string &name, Type t, const std::vector<Expr> &operands,
                                           const std::vector<llvm::Value *> &args) {
  if (name == Call::Reinterpret)
    return Builder->CreateBitCast(args[0], llvm_type_of(t));
  if (name == Call::IsNan || name == Call::IsInf || name == Call::IsFinite) {
    // On the bits, so that the fast-math flags of float code cannot fold the test away.
    const Type from = operands[0].type();
    llvm::Type *bitsType = llvm_type_of(Type(Type::UInt, from.bits, from.lanes));
    llvm::Value *bits = Builder->CreateBitCast(args[0], bitsType);
    const int mantissaBits = from.bits == 64 ? 52 : from.bits == 32 ? 23 : 10;
    const uint64_t magnitudeMask = (uint64_t(1) << (from.bits - 1)) - 1;
    const uint64_t infinity = ((uint64_t(1) << (from.bits - 1 - mantissaBits)) - 1) << mantissaBits;
    llvm::Value *magnitude = Builder->CreateAnd(bits, llvm::ConstantInt::get(bitsType, magnitudeMask));
    llvm::Value *inf = llvm::ConstantInt::get(bitsType, infinity);
    if (name == Call::IsNan)
      return Builder->CreateICmpUGT(magnitude, inf);
    if (name == Call::IsInf)
      return Builder->CreateICmpEQ(magnitude, inf);
    return Builder->CreateICmpULT(magnitude, inf);
  }
  if (name == Call::BitwiseAnd)
    return Builder->CreateAnd(args[0], args[1]);
  if (name == Call::BitwiseOr)
    return Builder->CreateOr(args[0], args[1]);
  if (name == Call::BitwiseXor)
    return Builder->CreateXor(args[0], args[1]);
  if (name == Call::BitwiseNot)
    return Builder->CreateNot(args[0]);
  if (name == Call::Popcount)
    return Builder->CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, args[0]);
  if (name == Call::CountLeadingZeros || name == Call::CountTrailingZeros)
    // Zero is not poison: it has the type's width of zeros.
    return Builder->CreateBinaryIntrinsic(name == Call::CountLeadingZeros ? llvm::Intrinsic::ctlz : llvm::Intrinsic::cttz,
                                          args[0], Builder->getFalse());
  // A definition replaces random calls (lower_random); one elsewhere has no point to be a function of.
  if (name == Call::Random)
    throw CompileError("random_float(), random_int() and random_uint() belong in a Func's definition or an RDom's "
                       "where(), where each point gets its own value; one was used elsewhere (a bound, an RDom's "
                       "extent, a constraint or a specialization)");
  PTXJIT_INTERNAL_ASSERT(name == Call::ShiftLeft || name == Call::ShiftRight, "codegen: unknown intrinsic " + name);
  // LLVM's shifts are poison from the width up; the language's shift every bit out there, and a
  // negative signed amount shifts the other way. The shift itself always gets an amount inside
  // the width: poison in an unselected lane still lets LLVM take the value for something it is
  // not (a shifted odd constant for never zero, a divisor it may divide by in every lane).
  llvm::Type *type = llvm_type_of(t);
  llvm::Value *a = args[0], *amount = args[1];
  llvm::Value *zero = llvm::Constant::getNullValue(type);
  llvm::Value *width = llvm::ConstantInt::get(type, t.bits);
  // An unsigned minimum, not a select: InstCombine folds a select amount back into selected
  // shifts.
  auto inWidth = [&](llvm::Value *n) {
    return Builder->CreateBinaryIntrinsic(llvm::Intrinsic::umin, n, llvm::ConstantInt::get(type, t.bits - 1));
  };
  auto left = [&](llvm::Value *n) {
    return Builder->CreateSelect(Builder->CreateICmpULT(n, width), Builder->CreateShl(a, inWidth(n)), zero);
  };
  auto right = [&](llvm::Value *n) {
    llvm::Value *shifted = t.is_int() ? Builder->CreateAShr(a, inWidth(n)) : Builder->CreateLShr(a, inWidth(n));
    llvm::Value *allOut =
        t.is_int() ? Builder->CreateAShr(a, llvm::ConstantInt::get(type, t.bits - 1)) : zero;
    return Builder->CreateSelect(Builder->CreateICmpULT(n, width), shifted, allOut);
  };
  const bool isLeft = name == Call::ShiftLeft;
  if (!t.is_int())
    return isLeft ? left(amount) : right(amount);
  // The magnitude of INT_MIN is itself, which as unsigned is past the width: every bit out.
  llvm::Value *negative = Builder->CreateICmpSLT(amount, zero);
  llvm::Value *magnitude = Builder->CreateSelect(negative, Builder->CreateNeg(amount), amount);
  return Builder->CreateSelect(negative, isLeft ? right(magnitude) : left(magnitude),
                               isLeft ? left(magnitude) : right(magnitude));
}

void CodeGen_LLVM::print_or_require(const Call *op) {
  const bool require = op->is_require();
  std::vector<llvm::Value *> args;
  for (const Expr &a : op->args)
    args.push_back(codegen(a));
  // print's message values start with its value; require's and a trace event's follow it.
  const size_t first = require || op->is_trace() ? 2 : 1;
  std::vector<Type> types;
  for (size_t i = first; i < op->args.size(); ++i)
    types.push_back(op->args[i].type().element_of());
  // A vectorized call reports each lane, in order: a print where its condition holds, a
  // requirement where it fails (the first such lane ends the function).
  const int lanes = op->type.lanes;
  for (int lane = 0; lane < lanes; ++lane) {
    auto laneOf = [&](llvm::Value *v) { return lanes > 1 ? Builder->CreateExtractElement(v, lane) : v; };
    llvm::BasicBlock *report = llvm::BasicBlock::Create(Context, require ? "requirement_failed" : "print", Function);
    llvm::BasicBlock *after = llvm::BasicBlock::Create(Context, require ? "requirement_held" : "printed", Function);
    Builder->CreateCondBr(laneOf(args[0]), require ? after : report, require ? report : after);
    Builder->SetInsertPoint(report);
    std::vector<llvm::Value *> values;
    for (size_t i = first; i < args.size(); ++i)
      values.push_back(laneOf(args[i]));
    if (require) {
      emit_require_failure(op->print_format(), values, types);
    } else {
      emit_print(op->print_format(), values, types);
      Builder->CreateBr(after);
    }
    Builder->SetInsertPoint(after);
  }
  Value = args[1];
}

std::string CodeGen_LLVM::print_format_with(const std::string &format, const std::vector<Type> &types,
                                            const std::function<std::string(Type)> &specifier) {
  const char placeholder = Call::PrintPlaceholder[0];
  std::string result;
  size_t next = 0;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != placeholder) {
      result += format[i];
    } else if (i + 1 < format.size() && format[i + 1] == placeholder) {
      result += "%%";
      ++i;
    } else {
      result += specifier(types[next++]);
    }
  }
  return result;
}

llvm::AllocaInst *CodeGen_LLVM::entryAlloca(llvm::Type *type, const std::string &name) {
  llvm::IRBuilder<> entry(&Function->getEntryBlock(), Function->getEntryBlock().begin());
  return entry.CreateAlloca(type, nullptr, name);
}

llvm::Value *CodeGen_LLVM::print_slots(const std::vector<llvm::Value *> &values, const std::vector<Type> &types) {
  llvm::Type *i64 = llvm::Type::getInt64Ty(Context);
  llvm::ArrayType *arrayType = llvm::ArrayType::get(i64, std::max<size_t>(values.size(), 1));
  llvm::AllocaInst *array = entryAlloca(arrayType, "print_values");
  array->setAlignment(llvm::Align(8));
  for (size_t i = 0; i < values.size(); ++i) {
    llvm::Value *slot = values[i];
    if (types[i].is_float())
      slot = Builder->CreateBitCast(Builder->CreateFPExt(slot, Builder->getDoubleTy()), i64);
    else
      slot = types[i].is_int() ? Builder->CreateSExt(slot, i64) : Builder->CreateZExt(slot, i64);
    Builder->CreateStore(slot, Builder->CreateConstInBoundsGEP2_32(arrayType, array, 0, i));
  }
  return array;
}

void CodeGen_LLVM::visit(const Call *op) {
  if (op->is_print() || op->is_trace() || op->is_require())
    return print_or_require(op);
  if (op->call_type == Call::Intrinsic && op->name == Call::Prefetch) {
    const auto *element = op->args.at(0).as<Load>();
    PTXJIT_INTERNAL_ASSERT(element, "codegen: a prefetch of something other than a buffer's element");
    // Not elementPointer: the address may lie outside the buffer, which an inbounds GEP forbids.
    llvm::Type *stored = storage_type_of(element->type.element_of());
    llvm::Value *index = codegen(element->index);
    for (int lane = 0; lane < element->type.lanes; ++lane)
      emit_prefetch(Builder->CreateGEP(stored, lookup(element->name),
                                       element->type.is_scalar() ? index : Builder->CreateExtractElement(index, lane)));
    Value = llvm::ConstantInt::get(llvm_type_of(op->type), 0);
    return;
  }
  PTXJIT_INTERNAL_ASSERT(op->call_type == Call::PureExtern || op->call_type == Call::Intrinsic,
                         "codegen: call to " + op->name + " was not lowered");
  std::vector<llvm::Value *> args;
  for (const Expr &a : op->args)
    args.push_back(codegen(a));
  Value = op->call_type == Call::Intrinsic ? call_intrinsic(op->name, op->type, op->args, args)
                                           : call_math(op->name, op->type, args);
}

void CodeGen_LLVM::visit(const Let *op) {
  push(op->name, codegen(op->value));
  Value = codegen(op->body);
  pop(op->name);
}

void CodeGen_LLVM::visit(const LetStmt *op) {
  llvm::Value *v = codegen(op->value);
  v->setName(op->name);
  push(op->name, v);
  codegen(op->body);
  pop(op->name);
}

void CodeGen_LLVM::visit(const ProducerConsumer *op) { codegen(op->body); }

void CodeGen_LLVM::visit(const Block *op) {
  codegen(op->first);
  codegen(op->rest);
}

void CodeGen_LLVM::visit(const IfThenElse *op) {
  llvm::Value *c = codegen(op->condition);
  llvm::BasicBlock *thenBlock = llvm::BasicBlock::Create(Context, "then", Function);
  llvm::BasicBlock *elseBlock = op->else_case.defined() ? llvm::BasicBlock::Create(Context, "else", Function) : nullptr;
  llvm::BasicBlock *after = llvm::BasicBlock::Create(Context, "endif", Function);
  Builder->CreateCondBr(c, thenBlock, elseBlock ? elseBlock : after);
  Builder->SetInsertPoint(thenBlock);
  codegen(op->then_case);
  Builder->CreateBr(after);
  if (elseBlock) {
    Builder->SetInsertPoint(elseBlock);
    codegen(op->else_case);
    Builder->CreateBr(after);
  }
  Builder->SetInsertPoint(after);
}

void CodeGen_LLVM::visit(const Evaluate *op) { codegen(op->value); }

void CodeGen_LLVM::visit(const Provide *op) { internal_error("codegen: Provide to " + op->name + " was not flattened"); }
void CodeGen_LLVM::visit(const Realize *op) { internal_error("codegen: Realize of " + op->name + " was not flattened"); }

} // namespace ptxjit::codegen
