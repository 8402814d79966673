#include "WidenNarrowIntegers.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstrTypes.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>

#include <vector>

namespace ptxjit::codegen {

namespace {

bool isNarrow(const llvm::Type *t) {
  return t->isIntOrIntVectorTy() && t->getScalarSizeInBits() > 1 && t->getScalarSizeInBits() < 32;
}

bool isMinMax(llvm::Intrinsic::ID id) {
  return id == llvm::Intrinsic::umin || id == llvm::Intrinsic::umax || id == llvm::Intrinsic::smin ||
         id == llvm::Intrinsic::smax;
}

// Whether the instruction is rewritten, and how its operands are extended (signed operations
// need their sign, unsigned ones zeros; for the rest the high bits do not matter).
enum class Extension { None, Zero, Sign };

Extension extensionFor(const llvm::Instruction &i) {
  if (const auto *op = llvm::dyn_cast<llvm::BinaryOperator>(&i)) {
    if (!isNarrow(op->getType()))
      return Extension::None;
    switch (op->getOpcode()) {
    case llvm::Instruction::SDiv:
    case llvm::Instruction::SRem:
    case llvm::Instruction::AShr:
      return Extension::Sign;
    default:
      return Extension::Zero;
    }
  }
  if (const auto *cmp = llvm::dyn_cast<llvm::ICmpInst>(&i))
    return isNarrow(cmp->getOperand(0)->getType()) ? (cmp->isSigned() ? Extension::Sign : Extension::Zero)
                                                   : Extension::None;
  if (const auto *call = llvm::dyn_cast<llvm::IntrinsicInst>(&i); call && isMinMax(call->getIntrinsicID()) &&
                                                                  isNarrow(call->getType()))
    return call->getIntrinsicID() == llvm::Intrinsic::smin || call->getIntrinsicID() == llvm::Intrinsic::smax
               ? Extension::Sign
               : Extension::Zero;
  return Extension::None;
}

} // namespace

void widen_narrow_integers(llvm::Module &module) {
  std::vector<llvm::Instruction *> narrow;
  for (llvm::Function &function : module)
    for (llvm::BasicBlock &block : function)
      for (llvm::Instruction &instruction : block)
        if (extensionFor(instruction) != Extension::None)
          narrow.push_back(&instruction);
  for (llvm::Instruction *instruction : narrow) {
    const Extension extension = extensionFor(*instruction);
    llvm::IRBuilder<> builder(instruction);
    llvm::Type *narrowType = instruction->getOperand(0)->getType();
    llvm::Type *wideType = narrowType->getWithNewBitWidth(32);
    auto widen = [&](llvm::Value *v) {
      return extension == Extension::Sign ? builder.CreateSExt(v, wideType) : builder.CreateZExt(v, wideType);
    };
    llvm::Value *a = widen(instruction->getOperand(0));
    llvm::Value *b = widen(instruction->getOperand(1));
    llvm::Value *replacement;
    if (auto *op = llvm::dyn_cast<llvm::BinaryOperator>(instruction)) {
      // Shift amounts are unsigned. No wrap flags: they described the narrow operation.
      if (op->isShift())
        b = builder.CreateZExt(instruction->getOperand(1), wideType);
      replacement = builder.CreateTrunc(builder.CreateBinOp(op->getOpcode(), a, b), narrowType);
    } else if (auto *cmp = llvm::dyn_cast<llvm::ICmpInst>(instruction)) {
      replacement = builder.CreateICmp(cmp->getPredicate(), a, b);
    } else {
      auto *call = llvm::cast<llvm::IntrinsicInst>(instruction);
      replacement = builder.CreateTrunc(builder.CreateBinaryIntrinsic(call->getIntrinsicID(), a, b), narrowType);
    }
    instruction->replaceAllUsesWith(replacement);
    instruction->eraseFromParent();
  }
}

} // namespace ptxjit::codegen
