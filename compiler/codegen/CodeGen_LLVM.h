#ifndef PTXJIT_CODEGEN_CODEGEN_LLVM_H
#define PTXJIT_CODEGEN_CODEGEN_LLVM_H

// Lowered IR to LLVM IR: expressions, memory, control flow and scoped symbols, shared by the
// host and device code generators. Subclasses supply the target's loops, allocation and errors.

#include "ir/IRVisitor.h"
#include "ptxjit/Target.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ptxjit::codegen {

class CodeGen_LLVM : public ir::IRVisitor {
public:
  CodeGen_LLVM(llvm::LLVMContext &context, const Target &target);

protected:
  llvm::LLVMContext &Context;
  Target TheTarget;
  std::unique_ptr<llvm::Module> Module;
  std::unique_ptr<llvm::IRBuilder<>> Builder;
  llvm::Function *Function = nullptr;
  llvm::Value *Value = nullptr; // the result of the last expression visited

  /// Scoped symbols: a name maps to a stack of values, innermost last.
  void push(const std::string &name, llvm::Value *value) { Symbols[name].push_back(value); }
  void pop(const std::string &name);
  llvm::Value *lookup(const std::string &name) const;
  bool has_symbol(const std::string &name) const;
  std::map<std::string, std::vector<llvm::Value *>> Symbols;

  llvm::Value *codegen(const Expr &e);
  void codegen(const ir::Stmt &s);

  llvm::Type *llvm_type_of(Type t) const;
  /// In memory, booleans take a byte.
  llvm::Type *storage_type_of(Type t) const;

  /// Builds a serial loop for [min, min + extent) calling `body` with the loop variable.
  void build_loop(const std::string &name, llvm::Value *min, llvm::Value *extent,
                  const std::function<void(llvm::Value *)> &body);

  using ir::IRVisitor::visit;
  void visit(const ir::IntImm *) override;
  void visit(const ir::UIntImm *) override;
  void visit(const ir::FloatImm *) override;
  void visit(const ir::Cast *) override;
  void visit(const ir::Variable *) override;
  void visit(const ir::Add *) override;
  void visit(const ir::Sub *) override;
  void visit(const ir::Mul *) override;
  void visit(const ir::Div *) override;
  void visit(const ir::Mod *) override;
  void visit(const ir::Min *) override;
  void visit(const ir::Max *) override;
  void visit(const ir::EQ *) override;
  void visit(const ir::NE *) override;
  void visit(const ir::LT *) override;
  void visit(const ir::LE *) override;
  void visit(const ir::GT *) override;
  void visit(const ir::GE *) override;
  void visit(const ir::And *) override;
  void visit(const ir::Or *) override;
  void visit(const ir::Not *) override;
  void visit(const ir::Select *) override;
  void visit(const ir::Load *) override;
  void visit(const ir::Ramp *) override;
  void visit(const ir::Broadcast *) override;
  void visit(const ir::Call *) override;
  void visit(const ir::Let *) override;
  void visit(const ir::LetStmt *) override;
  void visit(const ir::ProducerConsumer *) override;
  void visit(const ir::Store *) override;
  void visit(const ir::Block *) override;
  void visit(const ir::IfThenElse *) override;
  void visit(const ir::Evaluate *) override;
  void visit(const ir::Provide *) override;
  void visit(const ir::Realize *) override;

  /// Prints `format` (Call::print_format) with `values` of `types` (scalars), where the code runs.
  virtual void emit_print(const std::string &format, const std::vector<llvm::Value *> &values,
                          const std::vector<Type> &types) = 0;
  /// Fails the function where a require() does not hold: reports `format` (Call::print_format)
  /// with `values` of `types` and leaves the function (ends the block).
  virtual void emit_require_failure(const std::string &format, const std::vector<llvm::Value *> &values,
                                    const std::vector<Type> &types) = 0;
  /// `format` (Call::print_format) with each value's placeholder replaced by `specifier(its type)`,
  /// in printf's syntax: a literal '%' stays doubled.
  static std::string print_format_with(const std::string &format, const std::vector<Type> &types,
                                       const std::function<std::string(Type)> &specifier);
  /// The values as 64-bit slots of an array on the stack (integers extended, floats as doubles),
  /// as the host runtime and device printf read them.
  llvm::Value *print_slots(const std::vector<llvm::Value *> &values, const std::vector<Type> &types);
  /// Stack storage, allocated once in the function's entry block.
  llvm::AllocaInst *entryAlloca(llvm::Type *type, const std::string &name);

  /// Asks the processor to load the cache line of `address` (Call::Prefetch); never faults.
  virtual void emit_prefetch(llvm::Value *address) = 0;

  /// A math function call; the host and device map names differently.
  virtual llvm::Value *call_math(const std::string &name, Type t, const std::vector<llvm::Value *> &args);

  /// A load or store of consecutive elements at `pointer`, aligned to an element. The device
  /// makes wide accesses where the address allows them.
  virtual llvm::Value *dense_vector_load(llvm::Type *type, llvm::Value *pointer, llvm::Align elementAlign);
  virtual void dense_vector_store(llvm::Value *value, llvm::Value *pointer, llvm::Align elementAlign);

  /// An operand of a float select, min or max, as the target needs it to keep the select's
  /// result for signed zeros: itself, unless a target lowers some selects to min or max
  /// instructions that order -0 below +0.
  virtual llvm::Value *selected_float(llvm::Value *value) { return value; }

private:
  llvm::Value *compare(const ir::BaseExprNode *op, const Expr &a, const Expr &b, llvm::CmpInst::Predicate s,
                       llvm::CmpInst::Predicate u, llvm::CmpInst::Predicate f);
  llvm::Value *integerDivMod(Type t, llvm::Value *a, llvm::Value *b, const Expr &divisor, bool wantMod);
  llvm::Value *elementPointer(const std::string &buffer, Type t, llvm::Value *index);
  void atomicStore(const ir::Store *op);
  void print_or_require(const ir::Call *op);
  /// The language's intrinsics (Call::BitwiseAnd, Call::Reinterpret, Call::IsNan, ...) of
  /// `operands`, whose values are `args`.
  llvm::Value *call_intrinsic(const std::string &name, Type t, const std::vector<Expr> &operands,
                              const std::vector<llvm::Value *> &args);
  llvm::Value *multiplyAdd(const Expr &x, const Expr &y, bool subtract);
  llvm::Value *denseBase(const Expr &index);
};

} // namespace ptxjit::codegen

#endif
