#include "WidenNarrowMinMax.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicInst.h>

#include <vector>

namespace ptxjit::codegen {

namespace {

bool isNarrowMinMax(const llvm::IntrinsicInst &call) {
  switch (call.getIntrinsicID()) {
  case llvm::Intrinsic::umin:
  case llvm::Intrinsic::umax:
  case llvm::Intrinsic::smin:
  case llvm::Intrinsic::smax:
    return call.getType()->getScalarSizeInBits() < 32;
  default:
    return false;
  }
}

} // namespace

void widen_narrow_min_max(llvm::Module &module) {
  std::vector<llvm::IntrinsicInst *> narrow;
  for (llvm::Function &function : module)
    for (llvm::BasicBlock &block : function)
      for (llvm::Instruction &instruction : block)
        if (auto *call = llvm::dyn_cast<llvm::IntrinsicInst>(&instruction); call && isNarrowMinMax(*call))
          narrow.push_back(call);
  for (llvm::IntrinsicInst *call : narrow) {
    llvm::IRBuilder<> builder(call);
    llvm::Type *narrowType = call->getType();
    llvm::Type *wideType = narrowType->getWithNewBitWidth(32);
    const bool isSigned = call->getIntrinsicID() == llvm::Intrinsic::smin || call->getIntrinsicID() == llvm::Intrinsic::smax;
    auto widen = [&](llvm::Value *v) {
      return isSigned ? builder.CreateSExt(v, wideType) : builder.CreateZExt(v, wideType);
    };
    llvm::Value *wide = builder.CreateBinaryIntrinsic(call->getIntrinsicID(), widen(call->getArgOperand(0)),
                                                      widen(call->getArgOperand(1)));
    call->replaceAllUsesWith(builder.CreateTrunc(wide, narrowType));
    call->eraseFromParent();
  }
}

} // namespace ptxjit::codegen
