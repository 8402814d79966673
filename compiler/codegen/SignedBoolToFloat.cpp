#include "SignedBoolToFloat.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>

#include <vector>

namespace ptxjit::codegen {

void expand_signed_bool_to_float(llvm::Module &module) {
  std::vector<llvm::SIToFPInst *> conversions;
  for (llvm::Function &function : module)
    for (llvm::BasicBlock &block : function)
      for (llvm::Instruction &instruction : block)
        if (auto *conversion = llvm::dyn_cast<llvm::SIToFPInst>(&instruction);
            conversion && conversion->getOperand(0)->getType()->getScalarSizeInBits() == 1)
          conversions.push_back(conversion);
  for (llvm::SIToFPInst *conversion : conversions) {
    llvm::IRBuilder<> builder(conversion);
    llvm::Type *type = conversion->getType();
    llvm::Value *replacement = builder.CreateSelect(conversion->getOperand(0), llvm::ConstantFP::get(type, -1.0),
                                                    llvm::ConstantFP::get(type, 0.0));
    conversion->replaceAllUsesWith(replacement);
    conversion->eraseFromParent();
  }
}

} // namespace ptxjit::codegen
