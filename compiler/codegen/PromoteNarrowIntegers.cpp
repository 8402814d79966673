#include "PromoteNarrowIntegers.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/DenseSet.h>
#include <llvm/ADT/PostOrderIterator.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/Transforms/Utils/Local.h>

#include <utility>
#include <vector>

namespace ptxjit::codegen {

namespace {

bool isNarrow(const llvm::Type *t) {
  return t->isIntOrIntVectorTy() && t->getScalarSizeInBits() > 1 && t->getScalarSizeInBits() < 32;
}

llvm::Type *wide(llvm::Type *narrow) { return narrow->getWithNewBitWidth(32); }

bool isMinMax(llvm::Intrinsic::ID id) {
  return id == llvm::Intrinsic::umin || id == llvm::Intrinsic::umax || id == llvm::Intrinsic::smin ||
         id == llvm::Intrinsic::smax;
}

class Promoter {
public:
  explicit Promoter(llvm::Function &function) : Function(function) {}

  void run() {
    llvm::removeUnreachableBlocks(Function);
    // Reverse post-order: every operand is rewritten before its users, but for phis' incoming
    // values over back edges, which are filled in at the end.
    llvm::ReversePostOrderTraversal<llvm::Function *> order(&Function);
    for (llvm::BasicBlock *block : order) {
      std::vector<llvm::Instruction *> instructions;
      for (llvm::Instruction &instruction : *block)
        instructions.push_back(&instruction);
      for (llvm::Instruction *instruction : instructions)
        rewrite(*instruction);
    }
    for (auto &[old, promoted] : Phis)
      for (unsigned k = 0; k < old->getNumIncomingValues(); ++k)
        promoted->addIncoming(get(old->getIncomingValue(k)), old->getIncomingBlock(k));
    for (llvm::Instruction *old : Replaced)
      old->replaceAllUsesWith(llvm::PoisonValue::get(old->getType()));
    for (llvm::Instruction *old : Replaced)
      old->eraseFromParent();
  }

private:
  llvm::Function &Function;
  // Each narrow value's 32-bit form: its low bits are the value, the high ones unspecified.
  llvm::DenseMap<llvm::Value *, llvm::Value *> Promoted;
  // Its 32-bit form extended with zeros ([0]) or with its sign ([1]).
  llvm::DenseMap<llvm::Value *, llvm::Value *> Extended[2];
  std::vector<std::pair<llvm::PHINode *, llvm::PHINode *>> Phis;
  std::vector<llvm::Instruction *> Replaced;
  llvm::DenseSet<llvm::Instruction *> ReplacedSet;

  // A builder that inserts where `v` has just been defined.
  llvm::IRBuilder<> after(llvm::Value *v) {
    if (auto *instruction = llvm::dyn_cast<llvm::Instruction>(v)) {
      llvm::BasicBlock *block = instruction->getParent();
      if (llvm::isa<llvm::PHINode>(instruction))
        return llvm::IRBuilder<>(block, block->getFirstInsertionPt());
      return llvm::IRBuilder<>(instruction->getNextNode());
    }
    llvm::BasicBlock &entry = Function.getEntryBlock();
    return llvm::IRBuilder<>(&entry, entry.getFirstInsertionPt());
  }

  llvm::Value *get(llvm::Value *narrow) {
    if (auto found = Promoted.find(narrow); found != Promoted.end())
      return found->second;
    // A constant folds; a value kept narrow (a load, an argument, an instruction this pass does
    // not rewrite) is extended once, where it is defined.
    llvm::Value *promoted = after(narrow).CreateZExt(narrow, wide(narrow->getType()));
    Promoted[narrow] = promoted;
    return promoted;
  }

  llvm::Value *extended(llvm::Value *narrow, bool isSigned) {
    if (auto found = Extended[isSigned].find(narrow); found != Extended[isSigned].end())
      return found->second;
    llvm::Value *promoted = get(narrow);
    const unsigned bits = narrow->getType()->getScalarSizeInBits();
    llvm::Type *type = promoted->getType();
    llvm::IRBuilder<> builder = after(promoted);
    llvm::Value *result =
        isSigned ? builder.CreateAShr(builder.CreateShl(promoted, llvm::ConstantInt::get(type, 32 - bits)),
                                      llvm::ConstantInt::get(type, 32 - bits))
                 : builder.CreateAnd(promoted, llvm::ConstantInt::get(type, (uint64_t(1) << bits) - 1));
    Extended[isSigned][narrow] = result;
    return result;
  }

  void replaceNarrow(llvm::Instruction &old, llvm::Value *promoted) {
    Promoted[&old] = promoted;
    Replaced.push_back(&old);
    ReplacedSet.insert(&old);
  }

  void replaceWide(llvm::Instruction &old, llvm::Value *replacement) {
    old.replaceAllUsesWith(replacement);
    Replaced.push_back(&old);
    ReplacedSet.insert(&old);
  }

  void rewrite(llvm::Instruction &instruction) {
    llvm::IRBuilder<> builder(&instruction);
    llvm::Type *type = instruction.getType();
    if (auto *phi = llvm::dyn_cast<llvm::PHINode>(&instruction)) {
      if (isNarrow(type)) {
        llvm::PHINode *promoted = builder.CreatePHI(wide(type), phi->getNumIncomingValues());
        Phis.emplace_back(phi, promoted);
        replaceNarrow(instruction, promoted);
      }
      return;
    }
    if (auto *op = llvm::dyn_cast<llvm::BinaryOperator>(&instruction); op && isNarrow(type)) {
      llvm::Value *a = op->getOperand(0), *b = op->getOperand(1);
      // No wrap flags: they described the narrow operation.
      switch (op->getOpcode()) {
      case llvm::Instruction::Shl:
        return replaceNarrow(instruction, builder.CreateShl(get(a), extended(b, false)));
      case llvm::Instruction::LShr:
        return replaceNarrow(instruction, builder.CreateLShr(extended(a, false), extended(b, false)));
      case llvm::Instruction::AShr:
        return replaceNarrow(instruction, builder.CreateAShr(extended(a, true), extended(b, false)));
      case llvm::Instruction::UDiv:
      case llvm::Instruction::URem:
        return replaceNarrow(instruction, builder.CreateBinOp(op->getOpcode(), extended(a, false), extended(b, false)));
      case llvm::Instruction::SDiv:
      case llvm::Instruction::SRem:
        return replaceNarrow(instruction, builder.CreateBinOp(op->getOpcode(), extended(a, true), extended(b, true)));
      default:
        return replaceNarrow(instruction, builder.CreateBinOp(op->getOpcode(), get(a), get(b)));
      }
    }
    if (auto *cmp = llvm::dyn_cast<llvm::ICmpInst>(&instruction); cmp && isNarrow(cmp->getOperand(0)->getType())) {
      const bool isSigned = cmp->isSigned();
      return replaceWide(instruction, builder.CreateICmp(cmp->getPredicate(), extended(cmp->getOperand(0), isSigned),
                                                         extended(cmp->getOperand(1), isSigned)));
    }
    if (auto *select = llvm::dyn_cast<llvm::SelectInst>(&instruction); select && isNarrow(type))
      return replaceNarrow(instruction, builder.CreateSelect(select->getCondition(), get(select->getTrueValue()),
                                                             get(select->getFalseValue())));
    if (auto *cast = llvm::dyn_cast<llvm::CastInst>(&instruction)) {
      llvm::Value *source = cast->getOperand(0);
      const bool fromNarrow = isNarrow(source->getType()), toNarrow = isNarrow(type);
      switch (cast->getOpcode()) {
      case llvm::Instruction::Trunc:
        if (toNarrow) {
          if (fromNarrow)
            return replaceNarrow(instruction, get(source));
          const unsigned bits = source->getType()->getScalarSizeInBits();
          return replaceNarrow(instruction, bits == 32 ? source : builder.CreateTrunc(source, wide(type)));
        }
        if (fromNarrow) // to i1
          return replaceWide(instruction, builder.CreateTrunc(get(source), type));
        return;
      case llvm::Instruction::ZExt:
      case llvm::Instruction::SExt: {
        const bool isSigned = cast->getOpcode() == llvm::Instruction::SExt;
        if (fromNarrow) {
          llvm::Value *value = extended(source, isSigned);
          if (toNarrow)
            return replaceNarrow(instruction, value);
          const unsigned bits = type->getScalarSizeInBits();
          return replaceWide(instruction, bits == 32 ? value : builder.CreateCast(cast->getOpcode(), value, type));
        }
        if (toNarrow) // from i1
          return replaceNarrow(instruction, builder.CreateCast(cast->getOpcode(), source, wide(type)));
        return;
      }
      case llvm::Instruction::FPToSI:
      case llvm::Instruction::FPToUI:
        // Out-of-range conversions are poison either way; in range, the low bits are the same.
        if (toNarrow)
          return replaceNarrow(instruction, builder.CreateCast(cast->getOpcode(), source, wide(type)));
        return;
      case llvm::Instruction::SIToFP:
      case llvm::Instruction::UIToFP:
        if (fromNarrow)
          return replaceWide(instruction,
                             builder.CreateCast(cast->getOpcode(),
                                                extended(source, cast->getOpcode() == llvm::Instruction::SIToFP), type));
        return;
      default:
        break;
      }
    }
    if (auto *call = llvm::dyn_cast<llvm::IntrinsicInst>(&instruction); call && isNarrow(type)) {
      const llvm::Intrinsic::ID id = call->getIntrinsicID();
      if (isMinMax(id)) {
        const bool isSigned = id == llvm::Intrinsic::smin || id == llvm::Intrinsic::smax;
        return replaceNarrow(instruction, builder.CreateBinaryIntrinsic(id, extended(call->getArgOperand(0), isSigned),
                                                                        extended(call->getArgOperand(1), isSigned)));
      }
      if (id == llvm::Intrinsic::abs)
        return replaceNarrow(instruction, builder.CreateBinaryIntrinsic(id, extended(call->getArgOperand(0), true),
                                                                        call->getArgOperand(1)));
    }
    if (auto *extract = llvm::dyn_cast<llvm::ExtractElementInst>(&instruction); extract && isNarrow(type))
      return replaceNarrow(instruction,
                           builder.CreateExtractElement(get(extract->getVectorOperand()), extract->getIndexOperand()));
    if (auto *insert = llvm::dyn_cast<llvm::InsertElementInst>(&instruction); insert && isNarrow(type))
      return replaceNarrow(instruction, builder.CreateInsertElement(get(insert->getOperand(0)),
                                                                    get(insert->getOperand(1)), insert->getOperand(2)));
    if (auto *shuffle = llvm::dyn_cast<llvm::ShuffleVectorInst>(&instruction); shuffle && isNarrow(type))
      return replaceNarrow(instruction, builder.CreateShuffleVector(get(shuffle->getOperand(0)),
                                                                    get(shuffle->getOperand(1)), shuffle->getShuffleMask()));
    // Anything else (loads, stores, atomics, calls, bitcasts) keeps its narrow operands and
    // result: operands rewritten above are truncated back here, which a store folds into itself.
    for (unsigned k = 0; k < instruction.getNumOperands(); ++k) {
      auto *operand = llvm::dyn_cast<llvm::Instruction>(instruction.getOperand(k));
      if (operand && isNarrow(operand->getType()) && ReplacedSet.contains(operand))
        instruction.setOperand(k, builder.CreateTrunc(get(operand), operand->getType()));
    }
  }
};

} // namespace

void promote_narrow_integers(llvm::Module &module) {
  for (llvm::Function &function : module)
    if (!function.isDeclaration())
      Promoter(function).run();
}

} // namespace ptxjit::codegen
