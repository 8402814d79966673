#include "CodeGen_PTX.h"
#include "CodeGenPasses.h"

#include "Libdevice.h"
#include "LLVMOptimizer.h"
#include "OpaqueNegations.h"
#include "PromoteNarrowIntegers.h"
#include "SignedBoolToFloat.h"
#include "ir/Constants.h"
#include "ir/IRPrinter.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Linker/Linker.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/IPO/Internalize.h>

#include <algorithm>
#include <mutex>

namespace ptxjit::codegen {

using namespace ir;

namespace {

void initializeNVPTX() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    // Shared and local memory are addressed with 32-bit pointers, as their windows are: fewer
    // registers and no 64-bit address arithmetic for shared tiles.
    llvm::StringMap<llvm::cl::Option *> &options = llvm::cl::getRegisteredOptions();
    if (auto it = options.find("nvptx-short-ptr"); it != options.end())
      static_cast<llvm::cl::opt<bool> *>(it->second)->setValue(true);
  });
}

constexpr const char *NVPTXTriple = "nvptx64-nvidia-cuda";

} // namespace

std::string cuda_arch_name(const Target &target) {
  int capability = target.cuda_capability();
  PTXJIT_INTERNAL_ASSERT(capability != 0, "cuda_arch_name of unresolved target " + target.to_string());
  return "sm_" + std::to_string(capability) + (target.has_feature(Target::Feature::CUDACapability90a) ? "a" : "");
}

CodeGen_PTX::CodeGen_PTX(llvm::LLVMContext &context, const Target &target, int ptxVersion)
    : CodeGen_LLVM(context, target) {
  initializeNVPTX();
  std::string error;
  const llvm::Target *nvptx = llvm::TargetRegistry::lookupTarget(NVPTXTriple, error);
  PTXJIT_INTERNAL_ASSERT(nvptx, "NVPTX target missing from LLVM: " + error);
  llvm::TargetOptions options;
  options.AllowFPOpFusion = target.has_feature(Target::Feature::StrictFloat) ? llvm::FPOpFusion::Strict
                                                                             : llvm::FPOpFusion::Fast;
  std::string features = "+ptx" + std::to_string(std::min(ptxVersion, MaxLLVMPTXVersion));
  Machine.reset(nvptx->createTargetMachine(NVPTXTriple, cuda_arch_name(target), features, options, std::nullopt,
                                           std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  PTXJIT_INTERNAL_ASSERT(Machine, "cannot create the NVPTX target machine for " + cuda_arch_name(target));
  Module = std::make_unique<llvm::Module>("ptxjit_kernels", Context);
  Module->setTargetTriple(NVPTXTriple);
  Module->setDataLayout(Machine->createDataLayout());
}

CodeGen_PTX::~CodeGen_PTX() = default;

llvm::Value *CodeGen_PTX::specialRegister(const char *kind, int dim) {
  static const llvm::Intrinsic::ID ids[2][3] = {
      {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
       llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z},
      {llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_y,
       llvm::Intrinsic::nvvm_read_ptx_sreg_tid_z}};
  bool thread = std::string(kind) == "tid";
  llvm::CallInst *read = Builder->CreateIntrinsic(ids[thread][dim], {}, {});
  // The range lets LLVM drop checks the launch already guarantees (a thread loop as wide as the
  // block) and use cheaper index arithmetic.
  int64_t limit = thread ? Closure->block_size[dim] : dim == 0 ? INT32_MAX : 65535;
  llvm::Type *i32 = llvm::Type::getInt32Ty(Context);
  llvm::Metadata *range[] = {llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(i32, 0)),
                             llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(i32, limit))};
  read->setMetadata(llvm::LLVMContext::MD_range, llvm::MDNode::get(Context, range));
  return read;
}

void CodeGen_PTX::add_kernel(const For *nest, const std::string &name, const KernelClosure &closure) {
  std::vector<llvm::Type *> params;
  llvm::Type *global = llvm::PointerType::get(Context, 1);
  for (const KernelArgument &a : closure.arguments)
    params.push_back(a.is_buffer ? global : llvm_type_of(a.type));
  llvm::FunctionType *type = llvm::FunctionType::get(llvm::Type::getVoidTy(Context), params, false);
  Function = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, Module.get());
  Function->addFnAttr(llvm::Attribute::NoUnwind);
  Builder->SetInsertPoint(llvm::BasicBlock::Create(Context, "entry", Function));
  for (size_t i = 0; i < closure.arguments.size(); ++i) {
    const KernelArgument &a = closure.arguments[i];
    llvm::Argument *arg = Function->getArg(static_cast<unsigned>(i));
    arg->setName(a.name);
    if (a.is_buffer) {
      arg->addAttr(llvm::Attribute::NoAlias);
      if (!a.written)
        arg->addAttr(llvm::Attribute::ReadOnly);
    }
    push(a.name, arg);
  }

  // nvvm.annotations: the function is a kernel, always launched with exactly these many threads.
  llvm::NamedMDNode *annotations = Module->getOrInsertNamedMetadata("nvvm.annotations");
  auto annotate = [&](const char *key, int value) {
    llvm::Metadata *md[] = {llvm::ValueAsMetadata::get(Function), llvm::MDString::get(Context, key),
                            llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(Context), value))};
    annotations->addOperand(llvm::MDNode::get(Context, md));
  };
  annotate("kernel", 1);
  const char *reqntid[] = {"reqntidx", "reqntidy", "reqntidz"};
  for (int d = 0; d < 3; ++d)
    annotate(reqntid[d], static_cast<int>(closure.block_size[d]));
  if (!closure.shared.empty() && !SharedMemory)
    SharedMemory = new llvm::GlobalVariable(*Module, llvm::ArrayType::get(llvm::Type::getInt8Ty(Context), 0), false,
                                            llvm::GlobalValue::ExternalLinkage, nullptr, "ptxjit_shared", nullptr,
                                            llvm::GlobalValue::NotThreadLocal, 3);
  if (SharedMemory)
    SharedMemory->setAlignment(llvm::Align(16));

  Closure = &closure;
  codegen(Stmt(nest));
  Closure = nullptr;
  Builder->CreateRetVoid();
  for (const KernelArgument &a : closure.arguments)
    pop(a.name);
}

void CodeGen_PTX::visit(const For *op) {
  if (op->for_type == ForType::GPUBlock) {
    auto it = std::find(Closure->block_loops.begin(), Closure->block_loops.end(), op);
    PTXJIT_INTERNAL_ASSERT(it != Closure->block_loops.end(), "GPU loop " + op->name + " is not in its kernel's closure");
    llvm::Value *index = specialRegister("ctaid", static_cast<int>(it - Closure->block_loops.begin()));
    push(op->name, Builder->CreateAdd(codegen(op->min), index, op->name, false, true));
    codegen(op->body);
    pop(op->name);
    return;
  }
  if (op->for_type == ForType::GPUThread) {
    auto it = Closure->thread_dims.find(op);
    PTXJIT_INTERNAL_ASSERT(it != Closure->thread_dims.end(), "GPU loop " + op->name + " is not in its kernel's closure");
    llvm::Value *index = specialRegister("tid", it->second);
    push(op->name, Builder->CreateAdd(codegen(op->min), index, op->name, false, true));
    // Threads past this loop's extent (the block is as wide as the widest loop) do nothing.
    llvm::Value *inside = Builder->CreateICmpSLT(index, codegen(op->extent));
    llvm::BasicBlock *body = llvm::BasicBlock::Create(Context, op->name + ".body", Function);
    llvm::BasicBlock *after = llvm::BasicBlock::Create(Context, op->name + ".end", Function);
    Builder->CreateCondBr(inside, body, after);
    Builder->SetInsertPoint(body);
    ++ThreadDepth;
    codegen(op->body);
    --ThreadDepth;
    Builder->CreateBr(after);
    Builder->SetInsertPoint(after);
    pop(op->name);
    return;
  }
  PTXJIT_INTERNAL_ASSERT(op->for_type == ForType::Serial, "PTX codegen: " + to_string(op->for_type) + " loop " +
                                                              op->name + " inside a kernel");
  llvm::Value *min = codegen(op->min), *extent = codegen(op->extent);
  BlockSerialDepth += ThreadDepth == 0;
  build_loop(op->name, min, extent, [&](llvm::Value *i) {
    push(op->name, i);
    codegen(op->body);
    pop(op->name);
  });
  BlockSerialDepth -= ThreadDepth == 0;
}

void CodeGen_PTX::barrier() { Builder->CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {}); }

// A vector of consecutive elements is loaded or stored 16 (or 8) bytes at a time, as
// ld.global.v4.f32 and the like, where its address is a multiple of that. A buffer's device
// pointer is only known to be aligned to its element (a crop may start anywhere), so the
// address is tested at run time: wide accesses where it is aligned, element ones where not.
// LLVM drops the test where it can prove the alignment.
llvm::Align CodeGen_PTX::wideAlignment(llvm::Type *type, llvm::Align elementAlign) const {
  uint64_t bytes = Module->getDataLayout().getTypeStoreSize(type);
  uint64_t wide = std::min<uint64_t>(bytes, 16);
  return (wide == 8 || wide == 16) && bytes % wide == 0 && wide > elementAlign.value() ? llvm::Align(wide)
                                                                                         : elementAlign;
}

template <typename Access>
llvm::Value *CodeGen_PTX::byAlignment(llvm::Value *pointer, llvm::Align wide, Access access) {
  llvm::Value *address = Builder->CreatePtrToInt(pointer, Builder->getInt64Ty());
  llvm::Value *aligned = Builder->CreateICmpEQ(Builder->CreateAnd(address, wide.value() - 1), Builder->getInt64(0));
  llvm::BasicBlock *wideBlock = llvm::BasicBlock::Create(Context, "wide_access", Function);
  llvm::BasicBlock *narrowBlock = llvm::BasicBlock::Create(Context, "element_access", Function);
  llvm::BasicBlock *after = llvm::BasicBlock::Create(Context, "access_done", Function);
  Builder->CreateCondBr(aligned, wideBlock, narrowBlock);
  Builder->SetInsertPoint(wideBlock);
  llvm::Value *wideResult = access(true);
  Builder->CreateBr(after);
  Builder->SetInsertPoint(narrowBlock);
  llvm::Value *narrowResult = access(false);
  Builder->CreateBr(after);
  Builder->SetInsertPoint(after);
  if (!wideResult)
    return nullptr;
  llvm::PHINode *phi = Builder->CreatePHI(wideResult->getType(), 2);
  phi->addIncoming(wideResult, wideBlock);
  phi->addIncoming(narrowResult, narrowBlock);
  return phi;
}

// LLVM's instruction selection turns select(a < b, a, b) into min.f32 where it knows b is not a
// NaN (a constant), treating the sign of a zero result as free; min.f32 orders -0 below +0, so
// min(-0, +0) would give -0 where the select gives +0. Under strict_float an arithmetic fence
// (no instruction) hides the operand from that rewrite. bfloat16 values are integers here and
// are never rewritten so.
llvm::Value *CodeGen_PTX::selected_float(llvm::Value *value) {
  if (!TheTarget.has_feature(Target::Feature::StrictFloat) || !value->getType()->isFPOrFPVectorTy())
    return value;
  return Builder->CreateArithmeticFence(value, value->getType());
}

// The element accesses are written out one by one: as one vector access of lower alignment,
// LLVM would merge the two paths back into it.
llvm::Value *CodeGen_PTX::dense_vector_load(llvm::Type *type, llvm::Value *pointer, llvm::Align elementAlign) {
  llvm::Align wide = wideAlignment(type, elementAlign);
  if (wide == elementAlign)
    return CodeGen_LLVM::dense_vector_load(type, pointer, elementAlign);
  auto *vector = llvm::cast<llvm::FixedVectorType>(type);
  llvm::Type *element = vector->getElementType();
  return byAlignment(pointer, wide, [&](bool isWide) -> llvm::Value * {
    if (isWide)
      return Builder->CreateAlignedLoad(type, pointer, wide);
    llvm::Value *result = llvm::PoisonValue::get(type);
    for (unsigned i = 0; i < vector->getNumElements(); ++i) {
      llvm::Value *lane = Builder->CreateAlignedLoad(element, Builder->CreateConstInBoundsGEP1_32(element, pointer, i),
                                                     elementAlign);
      result = Builder->CreateInsertElement(result, lane, i);
    }
    return result;
  });
}

void CodeGen_PTX::dense_vector_store(llvm::Value *value, llvm::Value *pointer, llvm::Align elementAlign) {
  llvm::Align wide = wideAlignment(value->getType(), elementAlign);
  if (wide == elementAlign) {
    CodeGen_LLVM::dense_vector_store(value, pointer, elementAlign);
    return;
  }
  auto *vector = llvm::cast<llvm::FixedVectorType>(value->getType());
  llvm::Type *element = vector->getElementType();
  byAlignment(pointer, wide, [&](bool isWide) -> llvm::Value * {
    if (isWide) {
      Builder->CreateAlignedStore(value, pointer, wide);
      return nullptr;
    }
    for (unsigned i = 0; i < vector->getNumElements(); ++i)
      Builder->CreateAlignedStore(Builder->CreateExtractElement(value, i),
                                  Builder->CreateConstInBoundsGEP1_32(element, pointer, i), elementAlign);
    return nullptr;
  });
}

// A Func stored at a block loop gets its part of the shared block; one stored inside thread
// loops, an array of each thread's own.
void CodeGen_PTX::visit(const Allocate *op) {
  auto it = std::find_if(Closure->shared.begin(), Closure->shared.end(),
                         [&](const SharedAllocation &s) { return s.name == op->name; });
  if (it != Closure->shared.end()) {
    PTXJIT_INTERNAL_ASSERT(SharedMemory, "PTX codegen: no shared block for " + op->name);
    push(op->name, Builder->CreateInBoundsGEP(llvm::Type::getInt8Ty(Context), SharedMemory, codegen(it->offset), op->name));
  } else {
    auto registers = Closure->registers.find(op->name);
    PTXJIT_INTERNAL_ASSERT(registers != Closure->registers.end(), "PTX codegen: " + op->name + " has no storage");
    llvm::IRBuilder<> entry(&Function->getEntryBlock(), Function->getEntryBlock().begin());
    // An array type, not an array allocation: SROA turns only the former into registers.
    llvm::AllocaInst *storage = entry.CreateAlloca(llvm::ArrayType::get(storage_type_of(op->type), registers->second),
                                                   nullptr, op->name);
    storage->setAlignment(llvm::Align(16));
    push(op->name, storage);
  }
  codegen(op->body);
  pop(op->name);
}

// Threads hand a block's data to each other: all of a producer's writes land before any thread
// reads them, and inside a loop, all reads end before the next iteration writes again. A Func
// computed at block level is the block's (shared memory, or its slice of device memory) unless
// each thread keeps its own slice in registers.
void CodeGen_PTX::visit(const ProducerConsumer *op) {
  codegen(op->body);
  if (ThreadDepth > 0)
    return;
  if (!Closure->registers.count(op->name) && (op->is_producer || BlockSerialDepth > 0))
    barrier();
}

void CodeGen_PTX::visit(const AssertStmt *op) { internal_error("PTX codegen: assertion inside a kernel: " + op->message); }

llvm::Value *CodeGen_PTX::call_math(const std::string &name, Type t, const std::vector<llvm::Value *> &args) {
  static const std::map<std::string, std::string> names = {
      {"sqrt", "sqrt"},   {"exp", "exp"},     {"log", "log"},     {"pow", "pow"},     {"sin", "sin"},
      {"cos", "cos"},     {"tanh", "tanh"},   {"floor", "floor"}, {"ceil", "ceil"},   {"round", "rint"},
      {"trunc", "trunc"}, {"fabs", "fabs"},   {"tan", "tan"},     {"asin", "asin"},   {"acos", "acos"},
      {"atan", "atan"},   {"atan2", "atan2"}, {"sinh", "sinh"},   {"cosh", "cosh"},   {"asinh", "asinh"},
      {"acosh", "acosh"}, {"atanh", "atanh"}, {"erf", "erf"}};
  auto it = names.find(name);
  PTXJIT_INTERNAL_ASSERT(it != names.end(), "PTX codegen: unknown math function " + name);
  PTXJIT_INTERNAL_ASSERT(t.bits == 32 || t.bits == 64, "PTX codegen: " + name + " of " + to_string(t));
  // libdevice's sqrtf is sqrt.approx.f32 (LLVM 19 answers its __CUDA_PREC_SQRT query with 0);
  // strict_float needs the correctly rounded root, sqrt.rn.f32, as the host computes it.
  if (name == "sqrt" && TheTarget.has_feature(Target::Feature::StrictFloat))
    return Builder->CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, args[0]);
  UsesLibdevice = true;
  std::string libdeviceName = "__nv_" + it->second + (t.bits == 32 ? "f" : "");
  llvm::Type *scalar = llvm_type_of(t.element_of());
  std::vector<llvm::Type *> params(args.size(), scalar);
  llvm::FunctionCallee f = Module->getOrInsertFunction(libdeviceName, llvm::FunctionType::get(scalar, params, false));
  if (t.is_scalar())
    return Builder->CreateCall(f, args);
  llvm::Value *result = llvm::UndefValue::get(llvm_type_of(t));
  for (int lane = 0; lane < t.lanes; ++lane) {
    std::vector<llvm::Value *> laneArgs;
    for (llvm::Value *a : args)
      laneArgs.push_back(Builder->CreateExtractElement(a, lane));
    result = Builder->CreateInsertElement(result, Builder->CreateCall(f, laneArgs), lane);
  }
  return result;
}

void CodeGen_PTX::emit_require_failure(const std::string &format, const std::vector<llvm::Value *> &,
                                       const std::vector<Type> &) {
  throw CompileError("require() inside a GPU kernel (" + format +
                     "): requirements are checked on the host; compute that Func on the host, or check "
                     "the condition in a host stage");
}

void CodeGen_PTX::emit_print(const std::string &format, const std::vector<llvm::Value *> &values,
                             const std::vector<Type> &types) {
  // Device printf: each slot is 64 bits, as print_slots stores it.
  const std::string printf = print_format_with(format, types, [](Type t) {
    return t.is_float() ? "%f" : t.is_int() ? "%lld" : "%llu";
  });
  llvm::Type *ptr = llvm::PointerType::get(Context, 0);
  llvm::FunctionCallee vprintf =
      Module->getOrInsertFunction("vprintf", llvm::FunctionType::get(llvm::Type::getInt32Ty(Context), {ptr, ptr}, false));
  Builder->CreateCall(vprintf, {Builder->CreateGlobalStringPtr(printf), print_slots(values, types)});
}

std::string CodeGen_PTX::compile_to_ptx() {
  std::string problems;
  llvm::raw_string_ostream verifyOut(problems);
  if (llvm::verifyModule(*Module, &verifyOut))
    internal_error("generated device code is invalid LLVM IR: " + verifyOut.str());

  if (UsesLibdevice) {
    auto buffer = llvm::MemoryBuffer::getMemBuffer(llvm::StringRef(libdevice_bitcode().data(), libdevice_bitcode().size()),
                                                   "libdevice.10.bc", false);
    auto libdevice = llvm::parseBitcodeFile(buffer->getMemBufferRef(), Context);
    if (!libdevice) {
      std::string message = llvm::toString(libdevice.takeError());
      internal_error("cannot read the embedded libdevice: " + message);
    }
    (*libdevice)->setTargetTriple(NVPTXTriple);
    (*libdevice)->setDataLayout(Module->getDataLayout());
    if (llvm::Linker::linkModules(*Module, std::move(*libdevice), llvm::Linker::LinkOnlyNeeded))
      internal_error("cannot link libdevice into the kernels");
    // Only the kernels stay visible; the rest of libdevice can then be dropped.
    llvm::internalizeModule(*Module, [](const llvm::GlobalValue &g) {
      return g.getName().starts_with("ptxjit_") || g.getName() == "llvm.used";
    });
    Module->addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", uint32_t(0));
  }
  optimize_module(*Module, *Machine, PassSelection::Full);
  promote_narrow_integers(*Module);
  expand_signed_bool_to_float(*Module);
  if (llvm::verifyModule(*Module, &verifyOut))
    internal_error("device code is invalid LLVM IR after the device rewrites: " + verifyOut.str());

  llvm::SmallString<0> ptx;
  llvm::raw_svector_ostream out(ptx);
  llvm::legacy::PassManager passes;
  if (add_code_generation_passes(CodeGenerationPasses{}, [&] {
        return Machine->addPassesToEmitFile(passes, out, nullptr, llvm::CodeGenFileType::AssemblyFile);
      }))
    internal_error("NVPTX cannot emit PTX");
  passes.run(*Module);
  return make_negations_opaque(std::string(ptx.str()));
}

void CodeGen_PTX::emit_prefetch(llvm::Value *address) {
  // Only device memory has lines to load into L2; shared memory and registers (allocas) have none,
  // and taking an alloca's address would keep it out of registers.
  if (address->getType()->getPointerAddressSpace() != 1)
    return;
  llvm::Type *i64 = llvm::Type::getInt64Ty(Context);
  llvm::InlineAsm *prefetch = llvm::InlineAsm::get(llvm::FunctionType::get(llvm::Type::getVoidTy(Context), {i64}, false),
                                                   "prefetch.global.L2 [$0];", "l", /*hasSideEffects=*/true);
  Builder->CreateCall(prefetch, {Builder->CreatePtrToInt(address, i64)});
}

} // namespace ptxjit::codegen
