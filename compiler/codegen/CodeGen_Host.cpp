#include "CodeGen_Host.h"

#include "RuntimeInterface.h"
#include "ir/Constants.h"
#include "ir/IRPrinter.h"
#include "lang/Parameter.h"
#include "ptxjit/BufferABI.h"

#include <llvm/Analysis/CFG.h>
#include <llvm/Analysis/VectorUtils.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/DynamicLibrary.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Host.h>

#include <cctype>
#include <cstddef>
#include <limits>
#include <set>
#include <type_traits>

namespace ptxjit::codegen {

using namespace ir;

namespace {

// Names a statement refers to (variables and buffers), which a parallel task must capture.
class ReferencedNames : public IRVisitor {
public:
  std::set<std::string> Names;

private:
  using IRVisitor::visit;
  void visit(const Variable *op) override { Names.insert(op->name); }
  void visit(const Load *op) override {
    Names.insert(op->name);
    IRVisitor::visit(op);
  }
  void visit(const Store *op) override {
    Names.insert(op->name);
    IRVisitor::visit(op);
  }
};

} // namespace

namespace {

// glibc's vector math library, loaded into the process once so that the JIT resolves its
// functions; what the host's vector unit runs: the AVX2 variants ('d': 8 floats or 4 doubles),
// else the SSE ones ('b': 4 or 2).
struct VectorMathLibrary {
  bool loaded = false;
  char isa = 'b';
  int floatLanes = 4;
  VectorMathLibrary() {
    loaded = !llvm::sys::DynamicLibrary::LoadLibraryPermanently("libmvec.so.1");
    const auto features = llvm::sys::getHostCPUFeatures();
    if (auto it = features.find("avx2"); it != features.end() && it->second) {
      isa = 'd';
      floatLanes = 8;
    }
  }
};

const VectorMathLibrary &vectorMathLibrary() {
  static const VectorMathLibrary library;
  return library;
}

} // namespace

bool load_vector_math_library() { return vectorMathLibrary().loaded; }

namespace {

} // namespace

llvm::Value *CodeGen_Host::call_math(const std::string &name, Type t, const std::vector<llvm::Value *> &args) {
  if (t.is_vector() && t.is_float() && t.bits == 32 && !TheTarget.has_feature(Target::Feature::StrictFloat)) {
    // As Halide does: inline polynomials, several times faster than a library's exact ones.
    llvm::IRBuilderBase::FastMathFlagGuard guard(*Builder);
    Builder->clearFastMathFlags(); // the range reductions must stay as written
    if (name == "exp")
      return polynomialExp(args[0]);
    if (name == "log")
      return polynomialLog(args[0]);
    if (name == "pow")
      return polynomialPow(args[0], args[1]);
  }
  return vectorLibraryCall(name, t, args);
}

// c[0] + c[1] x + c[2] x^2 + ...: the even and the odd terms as two Horner chains in x^2, each
// half as long as one chain in x, so that their multiply-adds overlap.
llvm::Value *CodeGen_Host::polynomial(llvm::Value *x, const std::vector<double> &c) {
  llvm::Type *type = x->getType();
  llvm::Value *square = Builder->CreateFMul(x, x);
  auto chain = [&](size_t parity) {
    size_t i = (c.size() - 1 - parity) / 2 * 2 + parity;
    llvm::Value *p = llvm::ConstantFP::get(type, c[i]);
    while (i >= 2) {
      i -= 2;
      p = fusedMultiplyAdd(p, square, llvm::ConstantFP::get(type, c[i]));
    }
    return p;
  };
  return fusedMultiplyAdd(chain(1), x, chain(0));
}

llvm::Value *CodeGen_Host::fusedMultiplyAdd(llvm::Value *a, llvm::Value *b, llvm::Value *c) {
  return Builder->CreateIntrinsic(llvm::Intrinsic::fmuladd, {a->getType()}, {a, b, c});
}

llvm::Value *CodeGen_Host::polynomialExp(llvm::Value *x) {
  llvm::Type *type = x->getType();
  auto constant = [&](double v) { return llvm::ConstantFP::get(type, v); };
  llvm::Type *intType = llvm::VectorType::getInteger(llvm::cast<llvm::VectorType>(type));
  // e^x = 2^k e^r, k = round(x / ln 2), r = x - k ln 2 in [-ln 2 / 2, ln 2 / 2]; ln 2 in two parts
  // (the first exact in few bits) so that k ln 2 loses nothing.
  // Clamped to where e^x is 0 and infinity in floats: those ends come out of the arithmetic below
  // (2^k overflows or rounds to zero), and k stays a small integer.
  llvm::Value *clamped = Builder->CreateMinNum(Builder->CreateMaxNum(x, constant(-104.0)), constant(89.0));
  llvm::Value *k = Builder->CreateUnaryIntrinsic(llvm::Intrinsic::roundeven,
                                                 Builder->CreateFMul(clamped, constant(1.4426950408889634)));
  llvm::Value *r = fusedMultiplyAdd(k, constant(-0.693359375), clamped);
  r = fusedMultiplyAdd(k, constant(2.12194440054690583e-4), r);
  // e^r by its Taylor series to r^7: the remainder is below 6e-9 over the range.
  // The last two steps by Horner's rule: 1 + r + ... summed as two halves of similar size loses
  // half a unit in the last place.
  llvm::Value *p = polynomial(r, {0.5, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040});
  for (int step = 0; step < 2; ++step)
    p = fusedMultiplyAdd(p, r, constant(1.0));
  // 2^k as two factors, each a normal float for k in [-150, 129]: the product rounds once.
  llvm::Value *ki = Builder->CreateFPToSI(k, intType);
  llvm::Value *half = Builder->CreateAShr(ki, llvm::ConstantInt::get(intType, 1));
  auto powerOfTwo = [&](llvm::Value *e) {
    llvm::Value *bits = Builder->CreateShl(Builder->CreateAdd(e, llvm::ConstantInt::get(intType, 127)),
                                           llvm::ConstantInt::get(intType, 23));
    return Builder->CreateBitCast(bits, type);
  };
  llvm::Value *result =
      Builder->CreateFMul(Builder->CreateFMul(p, powerOfTwo(half)), powerOfTwo(Builder->CreateSub(ki, half)));
  // NaN stays NaN (the clamp would have made it a number).
  return Builder->CreateSelect(Builder->CreateFCmpUNO(x, x), x, result);
}

llvm::Value *CodeGen_Host::polynomialLog(llvm::Value *x) {
  llvm::Type *type = x->getType();
  auto constant = [&](double v) { return llvm::ConstantFP::get(type, v); };
  llvm::Type *intType = llvm::VectorType::getInteger(llvm::cast<llvm::VectorType>(type));
  auto integer = [&](int64_t v) { return llvm::ConstantInt::get(intType, v); };
  // Subnormals scaled into the normal range first.
  llvm::Value *tiny = Builder->CreateFCmpOLT(x, constant(1.17549435e-38));
  llvm::Value *scaled = Builder->CreateSelect(tiny, Builder->CreateFMul(x, constant(8388608.0)), x);
  // x = m 2^e with m in [sqrt(1/2), sqrt(2)).
  llvm::Value *bits = Builder->CreateBitCast(scaled, intType);
  llvm::Value *e = Builder->CreateSub(Builder->CreateLShr(bits, integer(23)), integer(127));
  e = Builder->CreateSub(e, Builder->CreateSelect(tiny, integer(23), integer(0)));
  llvm::Value *m = Builder->CreateBitCast(
      Builder->CreateOr(Builder->CreateAnd(bits, integer(0x7fffff)), integer(0x3f800000)), type);
  llvm::Value *large = Builder->CreateFCmpOGT(m, constant(1.41421356));
  m = Builder->CreateSelect(large, Builder->CreateFMul(m, constant(0.5)), m);
  e = Builder->CreateAdd(e, Builder->CreateZExt(large, intType));
  // log m = f - f^2/2 + f^3 P(f), f = m - 1 in [-0.293, 0.415], with P of degree 7 fitted (least
  // squares, relative error) to within about 2 units in the last place: no division.
  llvm::Value *f = Builder->CreateFSub(m, constant(1.0));
  llvm::Value *p = polynomial(f, {0.3333335518836975, -0.2500085234642029, 0.19999825954437256, -0.16621370613574982,
                                  0.14227114617824554, -0.13202103972434998, 0.1262032687664032, -0.07362867891788483});
  llvm::Value *f2 = Builder->CreateFMul(f, f);
  llvm::Value *logM = fusedMultiplyAdd(Builder->CreateFMul(f2, f), p, fusedMultiplyAdd(f2, constant(-0.5), f));
  llvm::Value *result = fusedMultiplyAdd(Builder->CreateSIToFP(e, type), constant(0.6931471805599453), logM);
  // log 0 = -infinity, log of a negative number NaN, log infinity = infinity, log NaN = NaN.
  result = Builder->CreateSelect(Builder->CreateFCmpOEQ(x, constant(0.0)),
                                 constant(-std::numeric_limits<double>::infinity()), result);
  result = Builder->CreateSelect(Builder->CreateFCmpOLT(x, constant(0.0)),
                                 constant(std::numeric_limits<double>::quiet_NaN()), result);
  llvm::Value *passThrough = Builder->CreateOr(
      Builder->CreateFCmpOEQ(x, constant(std::numeric_limits<double>::infinity())), Builder->CreateFCmpUNO(x, x));
  return Builder->CreateSelect(passThrough, x, result);
}

llvm::Value *CodeGen_Host::polynomialPow(llvm::Value *x, llvm::Value *y) {
  llvm::Type *type = x->getType();
  auto constant = [&](double v) { return llvm::ConstantFP::get(type, v); };
  // |x|^y = e^(y log |x|); a negative x has a real power only for an integer y, odd or even.
  llvm::Value *magnitude = polynomialExp(
      Builder->CreateFMul(y, polynomialLog(Builder->CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x))));
  llvm::Value *whole = Builder->CreateUnaryIntrinsic(llvm::Intrinsic::floor, y);
  llvm::Value *isInteger = Builder->CreateFCmpOEQ(whole, y);
  llvm::Value *halfWhole = Builder->CreateFMul(whole, constant(0.5));
  llvm::Value *odd = Builder->CreateFCmpUNE(Builder->CreateUnaryIntrinsic(llvm::Intrinsic::floor, halfWhole), halfWhole);
  llvm::Value *negativeBase =
      Builder->CreateSelect(isInteger, Builder->CreateSelect(odd, Builder->CreateFNeg(magnitude), magnitude),
                            constant(std::numeric_limits<double>::quiet_NaN()));
  llvm::Value *result = Builder->CreateSelect(Builder->CreateFCmpOLT(x, constant(0.0)), negativeBase, magnitude);
  // x^0 = 1 for every x, NaN included.
  return Builder->CreateSelect(Builder->CreateFCmpOEQ(y, constant(0.0)), constant(1.0), result);
}

llvm::Value *CodeGen_Host::vectorLibraryCall(const std::string &name, Type t, const std::vector<llvm::Value *> &args) {
  // The functions without a vector instruction; libmvec names them by the vector function ABI,
  // e.g. _ZGVdN8vv_powf: AVX2, 8 lanes, two vector arguments.
  static const std::set<std::string> vectorized = {"exp",  "log",  "pow",   "sin",   "cos",   "tan",
                                                   "tanh", "asin", "acos",  "atan",  "atan2", "sinh",
                                                   "cosh", "asinh", "acosh", "atanh"};
  const VectorMathLibrary &library = vectorMathLibrary();
  if (t.is_scalar() || !t.is_float() || (t.bits != 32 && t.bits != 64) || !vectorized.count(name) || !library.loaded)
    return CodeGen_LLVM::call_math(name, t, args);
  const int width = t.bits == 32 ? library.floatLanes : library.floatLanes / 2;
  const std::string symbol = std::string("_ZGV") + library.isa + "N" + std::to_string(width) +
                             std::string(args.size(), 'v') + "_" + name + (t.bits == 32 ? "f" : "");
  if (!llvm::sys::DynamicLibrary::SearchForAddressOfSymbol(symbol))
    return CodeGen_LLVM::call_math(name, t, args); // an older glibc without this one
  llvm::Type *chunkType = llvm_type_of(t.with_lanes(width));
  llvm::FunctionCallee f = Module->getOrInsertFunction(
      symbol, llvm::FunctionType::get(chunkType, std::vector<llvm::Type *>(args.size(), chunkType), false));
  if (auto *declared = llvm::dyn_cast<llvm::Function>(f.getCallee())) {
    declared->setDoesNotAccessMemory();
    declared->setDoesNotThrow();
  }
  // Whole chunks of the native width; the last one's lanes past the end are poison, unused.
  std::vector<llvm::Value *> chunks;
  for (int first = 0; first < t.lanes; first += width) {
    std::vector<int> lanes;
    for (int i = 0; i < width; ++i)
      lanes.push_back(first + i < t.lanes ? first + i : -1);
    std::vector<llvm::Value *> chunkArgs;
    for (llvm::Value *a : args)
      chunkArgs.push_back(Builder->CreateShuffleVector(a, lanes));
    chunks.push_back(Builder->CreateCall(f, chunkArgs));
  }
  // Concatenated back, without the padding.
  llvm::Value *result = llvm::concatenateVectors(*Builder, chunks);
  if (static_cast<int>(chunks.size()) * width == t.lanes)
    return result;
  std::vector<int> exact;
  for (int i = 0; i < t.lanes; ++i)
    exact.push_back(i);
  return Builder->CreateShuffleVector(result, exact);
}

CodeGen_Host::CodeGen_Host(llvm::LLVMContext &context, const Target &target)
    : CodeGen_LLVM(context, target), CUDA(target.has_gpu_feature()),
      SynchronizeAfterLaunch(target.has_feature(Target::Feature::Debug)) {
  llvm::Type *i8 = llvm::Type::getInt8Ty(context), *i16 = llvm::Type::getInt16Ty(context),
             *i32 = llvm::Type::getInt32Ty(context), *i64 = llvm::Type::getInt64Ty(context);
  llvm::Type *ptr = llvm::PointerType::get(context, 0);
  llvm::StructType *typeType = llvm::StructType::get(context, {i8, i8, i16});
  BufferType = llvm::StructType::create(context, {i64, ptr, i64, typeType, i32, ptr}, "ptxjit_buffer_t");
  DimensionType = llvm::StructType::create(context, {i32, i32, i32, i32}, "ptxjit_dimension_t");
  // The descriptors' layout as generated code addresses them, field by field (BufferABI.h).
  static_assert(offsetof(ptxjit_buffer_t, device) == 0 && offsetof(ptxjit_buffer_t, host) == 8 &&
                    offsetof(ptxjit_buffer_t, flags) == 16 && offsetof(ptxjit_buffer_t, type) == 24 &&
                    offsetof(ptxjit_buffer_t, dimensions) == 28 && offsetof(ptxjit_buffer_t, dim) == 32 &&
                    sizeof(ptxjit_buffer_t) == 40,
                "ptxjit_buffer_t no longer matches BufferType");
  static_assert(sizeof(ptxjit_type_t) == 4 && offsetof(ptxjit_type_t, bits) == 1 && offsetof(ptxjit_type_t, lanes) == 2,
                "ptxjit_type_t no longer matches BufferType's type field");
  static_assert(sizeof(ptxjit_dimension_t) == 16 && offsetof(ptxjit_dimension_t, extent) == 4 &&
                    offsetof(ptxjit_dimension_t, stride) == 8 && offsetof(ptxjit_dimension_t, flags) == 12,
                "ptxjit_dimension_t no longer matches DimensionType");
}

namespace {

// The LLVM type of a C type of the runtime interface: pointers (function pointers too) are `ptr`,
// integers keep their width.
template <typename T> llvm::Type *llvmTypeOfC(llvm::LLVMContext &context) {
  if constexpr (std::is_void_v<T>) {
    return llvm::Type::getVoidTy(context);
  } else if constexpr (std::is_pointer_v<T>) {
    return llvm::PointerType::get(context, 0);
  } else {
    static_assert(std::is_integral_v<T>, "the runtime interface passes pointers and integers only");
    return llvm::Type::getIntNTy(context, sizeof(T) * 8);
  }
}

template <typename Result, typename... Parameters>
llvm::FunctionType *llvmFunctionType(llvm::LLVMContext &context, Result (*)(Parameters...)) {
  return llvm::FunctionType::get(llvmTypeOfC<Result>(context), {llvmTypeOfC<Parameters>(context)...}, false);
}

} // namespace

// Declared from the runtime's own declarations (RuntimeFunctions.def): a signature is written once.
llvm::FunctionCallee CodeGen_Host::runtimeFunction(const char *name) {
  const std::string n = name;
  llvm::FunctionType *type = nullptr;
#define PTXJIT_RUNTIME_FUNCTION(result, function, parameters)                                                      \
  if (n == #function)                                                                                              \
    type = llvmFunctionType(Context, static_cast<decltype(&function)>(nullptr));
#include "RuntimeFunctions.def"
#undef PTXJIT_RUNTIME_FUNCTION
  PTXJIT_INTERNAL_ASSERT(type, "unknown runtime function " + n);
  return Module->getOrInsertFunction(name, type);
}

void CodeGen_Host::emitErrorReturn() {
  for (auto it = LiveHeapAllocations.rbegin(); it != LiveHeapAllocations.rend(); ++it)
    Builder->CreateCall(runtimeFunction(it->Release), {CallContext, it->Pointer});
  Builder->CreateRet(llvm::ConstantInt::getSigned(llvm::Type::getInt32Ty(Context), -1));
}

void CodeGen_Host::branchToErrorUnless(llvm::Value *ok) {
  llvm::BasicBlock *fail = llvm::BasicBlock::Create(Context, "error", Function);
  llvm::BasicBlock *next = llvm::BasicBlock::Create(Context, "ok", Function);
  Builder->CreateCondBr(ok, next, fail);
  Builder->SetInsertPoint(fail);
  emitErrorReturn();
  Builder->SetInsertPoint(next);
}

void CodeGen_Host::unpackArguments(const lower::LoweredPipeline &pipeline, llvm::Value *args) {
  llvm::Type *ptr = llvm::PointerType::get(Context, 0);
  llvm::Type *i32 = llvm::Type::getInt32Ty(Context);
  for (size_t i = 0; i < pipeline.arguments.size(); ++i) {
    const lower::LoweredArgument &arg = pipeline.arguments[i];
    llvm::Value *slot = Builder->CreateConstInBoundsGEP1_64(ptr, args, i);
    llvm::Value *pointer = Builder->CreateLoad(ptr, slot, arg.name + ".arg");
    if (arg.kind == lower::LoweredArgument::Scalar) {
      llvm::Value *v = Builder->CreateLoad(storage_type_of(arg.type), pointer, arg.name);
      push(arg.name, arg.type.is_bool() ? Builder->CreateTrunc(v, llvm_type_of(arg.type)) : v);
      continue;
    }
    push(arg.name, Builder->CreateLoad(ptr, Builder->CreateStructGEP(BufferType, pointer, 1), arg.name + ".host"));
    if (CUDA) {
      push(device_symbol(arg.name),
           Builder->CreateIntToPtr(
               Builder->CreateLoad(llvm::Type::getInt64Ty(Context), Builder->CreateStructGEP(BufferType, pointer, 0)),
               ptr, arg.name + ".device"));
      push(descriptor_symbol(arg.name), pointer);
    }
    llvm::Value *dims = Builder->CreateLoad(ptr, Builder->CreateStructGEP(BufferType, pointer, 5), arg.name + ".dim");
    for (int d = 0; d < arg.dimensions; ++d) {
      llvm::Value *dim = Builder->CreateConstInBoundsGEP1_32(DimensionType, dims, d);
      const char *fields[] = {"min", "extent", "stride"};
      for (unsigned f = 0; f < 3; ++f) {
        std::string name = buffer_field_name(arg.name, fields[f], d);
        push(name, Builder->CreateLoad(i32, Builder->CreateStructGEP(DimensionType, dim, f), name));
      }
    }
  }
}

std::unique_ptr<llvm::Module> CodeGen_Host::compile(const lower::LoweredPipeline &pipeline,
                                                    const std::string &functionName, const llvm::DataLayout &layout,
                                                    const std::string &triple) {
  PipelineFunctionName = functionName;
  Module = std::make_unique<llvm::Module>(functionName, Context);
  Module->setDataLayout(layout);
  Module->setTargetTriple(triple);
  llvm::Type *ptr = llvm::PointerType::get(Context, 0);
  llvm::FunctionType *type = llvm::FunctionType::get(llvm::Type::getInt32Ty(Context), {ptr, ptr}, false);
  Function = llvm::Function::Create(type, llvm::Function::ExternalLinkage, functionName, Module.get());
  Function->addFnAttr(llvm::Attribute::NoUnwind);
  Builder->SetInsertPoint(llvm::BasicBlock::Create(Context, "entry", Function));
  CallContext = Function->getArg(0);
  if (CUDA)
    DeviceCodeGlobal = new llvm::GlobalVariable(*Module, ptr, false, llvm::GlobalValue::ExternalLinkage,
                                                llvm::ConstantPointerNull::get(llvm::PointerType::get(Context, 0)),
                                                device_code_global(functionName));
  unpackArguments(pipeline, Function->getArg(1));
  codegen(pipeline.body);
  Builder->CreateRet(llvm::ConstantInt::get(llvm::Type::getInt32Ty(Context), 0));
  // Without a loop, the pipeline function runs its checks, allocations, calls and launches once
  // per realize (a GPU pipeline's host code is nothing else): not worth optimizing. Compiled
  // without optimization (FastISel), it takes about a millisecond instead of five.
  llvm::SmallVector<std::pair<const llvm::BasicBlock *, const llvm::BasicBlock *>, 8> backEdges;
  llvm::FindFunctionBackedges(*Function, backEdges);
  if (backEdges.empty()) {
    Function->addFnAttr(llvm::Attribute::OptimizeNone);
    Function->addFnAttr(llvm::Attribute::NoInline);
  }

  std::string problems;
  llvm::raw_string_ostream out(problems);
  if (llvm::verifyModule(*Module, &out))
    internal_error("generated host code for " + pipeline.name + " is invalid LLVM IR: " + out.str());
  return std::move(Module);
}

void CodeGen_Host::visit(const For *op) {
  if (op->for_type == ForType::Parallel) {
    parallelLoop(op);
    return;
  }
  if (op->for_type == ForType::GPUBlock) {
    launchKernel(op);
    return;
  }
  PTXJIT_INTERNAL_ASSERT(op->for_type == ForType::Serial, "codegen: " + to_string(op->for_type) + " loop " +
                                                               op->name + " was not lowered");
  llvm::Value *min = codegen(op->min), *extent = codegen(op->extent);
  build_loop(op->name, min, extent, [&](llvm::Value *i) {
    push(op->name, i);
    codegen(op->body);
    pop(op->name);
  });
}

void CodeGen_Host::parallelLoop(const For *op) {
  llvm::Value *min = codegen(op->min), *extent = codegen(op->extent);

  ReferencedNames referenced;
  op->body.accept(&referenced);
  std::vector<std::string> captured;
  std::vector<llvm::Type *> types;
  for (const std::string &referencedName : referenced.Names)
    for (const std::string &name : {referencedName, device_symbol(referencedName), descriptor_symbol(referencedName)})
      if (name != op->name && has_symbol(name)) {
        captured.push_back(name);
        types.push_back(lookup(name)->getType());
      }
  llvm::StructType *closureType = llvm::StructType::get(Context, types);
  llvm::AllocaInst *closure = entryAlloca(closureType, op->name + ".closure");
  for (size_t i = 0; i < captured.size(); ++i)
    Builder->CreateStore(lookup(captured[i]), Builder->CreateStructGEP(closureType, closure, static_cast<unsigned>(i)));

  // The task: int32_t task(void *context, int32_t index, uint8_t *closure).
  llvm::Type *ptr = llvm::PointerType::get(Context, 0), *i32 = llvm::Type::getInt32Ty(Context);
  llvm::Function *task = llvm::Function::Create(llvm::FunctionType::get(i32, {ptr, i32, ptr}, false),
                                                llvm::Function::InternalLinkage, Function->getName() + "." + op->name,
                                                Module.get());
  task->addFnAttr(llvm::Attribute::NoUnwind);

  llvm::Function *savedFunction = Function;
  llvm::Value *savedContext = CallContext;
  llvm::IRBuilderBase::InsertPoint savedPoint = Builder->saveIP();
  auto savedSymbols = std::move(Symbols);
  auto savedAllocations = std::move(LiveHeapAllocations);
  Symbols.clear();
  LiveHeapAllocations.clear();

  Function = task;
  CallContext = task->getArg(0);
  Builder->SetInsertPoint(llvm::BasicBlock::Create(Context, "entry", task));
  for (size_t i = 0; i < captured.size(); ++i)
    push(captured[i], Builder->CreateLoad(types[i], Builder->CreateStructGEP(closureType, task->getArg(2),
                                                                             static_cast<unsigned>(i)), captured[i]));
  push(op->name, task->getArg(1));
  codegen(op->body);
  Builder->CreateRet(llvm::ConstantInt::get(i32, 0));

  Function = savedFunction;
  CallContext = savedContext;
  Builder->restoreIP(savedPoint);
  Symbols = std::move(savedSymbols);
  LiveHeapAllocations = std::move(savedAllocations);

  llvm::Value *result = Builder->CreateCall(runtimeFunction("ptxjit_do_par_for"), {CallContext, task, min, extent, closure});
  branchToErrorUnless(Builder->CreateICmpEQ(result, llvm::ConstantInt::get(i32, 0)));
}

void CodeGen_Host::launchKernel(const For *op) {
  // PTX identifiers allow letters, digits and '_' (LLVM would rename anything else).
  std::string name = PipelineFunctionName + "_k" + std::to_string(Kernels.size());
  for (char &c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      c = '_';
  KernelRecord kernel{name, Stmt(op), kernel_closure(op)};
  const KernelClosure &closure = kernel.closure;
  llvm::Type *i32 = llvm::Type::getInt32Ty(Context), *ptr = llvm::PointerType::get(Context, 0);

  llvm::Value *grid[3], *block[3];
  int64_t threads = 1;
  for (int d = 0; d < 3; ++d) {
    grid[d] = llvm::ConstantInt::get(i32, 1);
    block[d] = llvm::ConstantInt::get(i32, 1);
    if (d < static_cast<int>(closure.block_loops.size())) {
      const For *loop = closure.block_loops[d];
      ReferencedNames used;
      loop->extent.accept(&used);
      for (const std::string &name : used.Names)
        if (!has_symbol(name))
          throw CompileError("kernel " + kernel.name + ": the extent of gpu_blocks loop " + loop->name + " (" +
                             to_string(loop->extent) + ") depends on " + name + ", which is computed inside the kernel");
      grid[d] = codegen(loop->extent);
    }
    threads *= closure.block_size[d];
    block[d] = llvm::ConstantInt::get(i32, closure.block_size[d]);
  }
  // Limits every CUDA device has; the device's own are checked at launch.
  constexpr int64_t MaxThreadsPerBlock = 1024, MaxSharedBytes = 227 * 1024;
  if (threads > MaxThreadsPerBlock)
    throw CompileError("kernel " + kernel.name + " (loop " + op->name + ") has " + std::to_string(threads) +
                       " threads per block; CUDA allows at most " + std::to_string(MaxThreadsPerBlock));
  auto sharedFuncs = [&] {
    return closure.shared.front().name + (closure.shared.size() > 1 ? " and others" : "");
  };
  if (auto bytes = as_const_int(closure.shared_bytes); bytes && *bytes > MaxSharedBytes)
    throw CompileError("kernel " + kernel.name + " (loop " + op->name + ") needs " + std::to_string(*bytes) +
                       " bytes of shared memory for " + sharedFuncs() + "; a block gets at most " +
                       std::to_string(MaxSharedBytes) + " bytes on any CUDA device (227 KiB, sm_90); use smaller tiles");
  ReferencedNames sharedNeeds;
  closure.shared_bytes.accept(&sharedNeeds);
  for (const std::string &name : sharedNeeds.Names)
    if (!has_symbol(name))
      throw CompileError("kernel " + kernel.name + ": the shared memory of " + sharedFuncs() + " (" +
                         to_string(closure.shared_bytes) + " bytes) depends on " + name +
                         ", which is computed inside the kernel");
  // More than a 32-bit launch parameter holds is past every device's limit, which the runtime
  // reports.
  llvm::Value *sharedBytes = codegen(closure.shared_bytes);
  llvm::Value *sharedCap = llvm::ConstantInt::get(sharedBytes->getType(), INT32_MAX);
  sharedBytes = Builder->CreateTrunc(
      Builder->CreateSelect(Builder->CreateICmpSGT(sharedBytes, sharedCap), sharedCap, sharedBytes), i32);

  // The arguments: one slot per closure value, and an array of pointers to the slots.
  size_t n = closure.arguments.size();
  llvm::AllocaInst *array = entryAlloca(llvm::ArrayType::get(ptr, std::max<size_t>(n, 1)), kernel.name + ".args");
  for (size_t i = 0; i < n; ++i) {
    const KernelArgument &a = closure.arguments[i];
    llvm::Value *value = lookup(a.is_buffer ? device_symbol(a.name) : a.name);
    llvm::AllocaInst *slot = entryAlloca(value->getType(), a.name + ".arg");
    Builder->CreateStore(value, slot);
    Builder->CreateStore(slot, Builder->CreateConstInBoundsGEP2_32(array->getAllocatedType(), array, 0, i));
  }
  llvm::Value *code = Builder->CreateLoad(ptr, DeviceCodeGlobal, "device_code");
  llvm::Value *result = Builder->CreateCall(
      runtimeFunction("ptxjit_cuda_launch"),
      {CallContext, code, llvm::ConstantInt::get(i32, Kernels.size()), grid[0], grid[1], grid[2], block[0], block[1],
       block[2], sharedBytes, array,
       llvm::ConstantInt::get(i32, SynchronizeAfterLaunch ? 1 : 0)});
  branchToErrorUnless(Builder->CreateICmpEQ(result, llvm::ConstantInt::get(i32, 0)));
  Kernels.push_back(std::move(kernel));
}

void CodeGen_Host::visit(const Allocate *op) {
  llvm::Type *i64 = llvm::Type::getInt64Ty(Context);
  int64_t elementBytes = op->type.is_bool() ? 1 : op->type.bytes();
  std::optional<int64_t> constantElements = 1;
  // Indices into the storage are 32-bit: more than 2^31 - 1 elements is refused at run time. The
  // product is capped at 2^31 after each factor (below 2^31 itself), so it cannot overflow.
  llvm::Value *elements = llvm::ConstantInt::get(i64, 1);
  llvm::Value *tooMany = llvm::ConstantInt::get(i64, int64_t(1) << 31);
  std::vector<llvm::Value *> extents;
  for (const Expr &extent : op->extents) {
    auto c = as_const_int(extent);
    constantElements = c && constantElements ? std::optional<int64_t>(std::min(*constantElements * std::max<int64_t>(*c, 0), int64_t(1) << 31))
                                             : std::nullopt;
    llvm::Value *e = Builder->CreateSExt(codegen(extent), i64);
    e = Builder->CreateSelect(Builder->CreateICmpSLT(e, llvm::ConstantInt::get(i64, 0)), llvm::ConstantInt::get(i64, 0), e);
    extents.push_back(e);
    elements = Builder->CreateMul(elements, e, "", true, true);
    elements = Builder->CreateSelect(Builder->CreateICmpUGT(elements, tooMany), tooMany, elements);
  }
  if (!constantElements || *constantElements > INT32_MAX) {
    std::string shape;
    for (size_t i = 0; i < extents.size(); ++i)
      shape += i ? " x %" : "%";
    failUnless(Builder->CreateICmpSLT(elements, tooMany),
               "intermediate " + op->name + " needs " + shape +
                   " elements, more than the 2^31 - 1 that 32-bit indexing addresses",
               extents);
  }
  llvm::Type *element = storage_type_of(op->type);
  constexpr int64_t StackLimitBytes = 16 * 1024;
  if (op->side == StorageSide::Host && op->memory != MemoryType::Heap && constantElements &&
      *constantElements * elementBytes <= StackLimitBytes) {
    llvm::IRBuilder<> entry(&Function->getEntryBlock(), Function->getEntryBlock().begin());
    llvm::AllocaInst *storage =
        entry.CreateAlloca(element, llvm::ConstantInt::get(i64, std::max<int64_t>(*constantElements, 1)), op->name);
    storage->setAlignment(llvm::Align(64));
    push(op->name, storage);
    codegen(op->body);
    pop(op->name);
    return;
  }
  llvm::Value *bytes = Builder->CreateMul(elements, llvm::ConstantInt::get(i64, elementBytes));
  llvm::Value *what = Builder->CreateGlobalStringPtr(op->name);
  std::vector<std::string> symbols;
  auto allocate = [&](const char *allocator, const char *release, const std::string &symbol) {
    llvm::Value *storage = Builder->CreateCall(runtimeFunction(allocator), {CallContext, bytes, what}, symbol);
    branchToErrorUnless(Builder->CreateIsNotNull(storage));
    LiveHeapAllocations.push_back({storage, release});
    push(symbol, storage);
    symbols.push_back(symbol);
  };
  if (op->side != StorageSide::Device)
    allocate("ptxjit_malloc", "ptxjit_free", op->name);
  if (op->side != StorageSide::Host)
    allocate("ptxjit_cuda_malloc", "ptxjit_cuda_free", device_symbol(op->name));
  if (op->side == StorageSide::HostAndDevice) {
    // A one-dimensional descriptor of both copies, for the runtime's copies and the dirty flags.
    llvm::Type *i8 = llvm::Type::getInt8Ty(Context), *i16 = llvm::Type::getInt16Ty(Context),
               *i32 = llvm::Type::getInt32Ty(Context);
    llvm::AllocaInst *dim = entryAlloca(DimensionType, op->name + ".dim");
    llvm::Value *dimFields[] = {llvm::ConstantInt::get(i32, 0), Builder->CreateTrunc(elements, i32),
                                llvm::ConstantInt::get(i32, 1), llvm::ConstantInt::get(i32, 0)};
    for (unsigned f = 0; f < 4; ++f)
      Builder->CreateStore(dimFields[f], Builder->CreateStructGEP(DimensionType, dim, f));
    llvm::AllocaInst *descriptor = entryAlloca(BufferType, op->name + ".buffer");
    llvm::Type *typeType = BufferType->getElementType(3);
    llvm::Value *type = llvm::ConstantStruct::get(
        llvm::cast<llvm::StructType>(typeType),
        {llvm::ConstantInt::get(i8, static_cast<uint64_t>(op->type.code)), llvm::ConstantInt::get(i8, op->type.bits),
         llvm::ConstantInt::get(i16, 1)});
    llvm::Value *fields[] = {Builder->CreatePtrToInt(lookup(device_symbol(op->name)), i64), lookup(op->name),
                             llvm::ConstantInt::get(i64, 0), type, llvm::ConstantInt::get(i32, 1), dim};
    for (unsigned f = 0; f < 6; ++f)
      Builder->CreateStore(fields[f], Builder->CreateStructGEP(BufferType, descriptor, f));
    push(descriptor_symbol(op->name), descriptor);
    symbols.push_back(descriptor_symbol(op->name));
  }
  codegen(op->body);
  for (const std::string &symbol : symbols)
    pop(symbol);
  for (size_t n = symbols.size() - (op->side == StorageSide::HostAndDevice); n > 0; --n) {
    Builder->CreateCall(runtimeFunction(LiveHeapAllocations.back().Release),
                        {CallContext, LiveHeapAllocations.back().Pointer});
    LiveHeapAllocations.pop_back();
  }
}

void CodeGen_Host::visit(const Call *op) {
  if (op->call_type != Call::Intrinsic || (op->name != Call::CopyToHost && op->name != Call::CopyToDevice &&
                                           op->name != Call::SetHostDirty && op->name != Call::SetDeviceDirty)) {
    CodeGen_LLVM::visit(op);
    return;
  }
  const auto *buffer = op->args.at(0).as<Variable>();
  PTXJIT_INTERNAL_ASSERT(buffer, "codegen: " + op->name + " of something other than a buffer");
  llvm::Value *descriptor = lookup(descriptor_symbol(buffer->name));
  llvm::Type *i32 = llvm::Type::getInt32Ty(Context), *i64 = llvm::Type::getInt64Ty(Context);
  if (op->name == Call::CopyToHost || op->name == Call::CopyToDevice) {
    llvm::Value *result = Builder->CreateCall(
        runtimeFunction(op->name == Call::CopyToHost ? "ptxjit_cuda_copy_to_host" : "ptxjit_cuda_copy_to_device"),
        {CallContext, descriptor, Builder->CreateGlobalStringPtr(buffer->name)});
    branchToErrorUnless(Builder->CreateICmpEQ(result, llvm::ConstantInt::get(i32, 0)));
  } else {
    llvm::Value *flags = Builder->CreateStructGEP(BufferType, descriptor, 2);
    const uint64_t bit = op->name == Call::SetHostDirty ? ptxjit_buffer_host_dirty : ptxjit_buffer_device_dirty;
    Builder->CreateStore(Builder->CreateOr(Builder->CreateLoad(i64, flags), llvm::ConstantInt::get(i64, bit)), flags);
  }
  Value = llvm::ConstantInt::get(i32, 0);
}

void CodeGen_Host::visit(const AssertStmt *op) {
  llvm::Value *ok = codegen(op->condition);
  llvm::BasicBlock *fail = llvm::BasicBlock::Create(Context, "assert_failed", Function);
  llvm::BasicBlock *next = llvm::BasicBlock::Create(Context, "assert_ok", Function);
  Builder->CreateCondBr(ok, next, fail);
  Builder->SetInsertPoint(fail);
  std::vector<llvm::Value *> values;
  for (const Expr &arg : op->message_args)
    values.push_back(codegen(arg));
  reportFailure(op->message, values);
  Builder->SetInsertPoint(next);
}

void CodeGen_Host::failUnless(llvm::Value *ok, const std::string &message, const std::vector<llvm::Value *> &values) {
  llvm::BasicBlock *fail = llvm::BasicBlock::Create(Context, "check_failed", Function);
  llvm::BasicBlock *next = llvm::BasicBlock::Create(Context, "check_ok", Function);
  Builder->CreateCondBr(ok, next, fail);
  Builder->SetInsertPoint(fail);
  reportFailure(message, values);
  Builder->SetInsertPoint(next);
}

void CodeGen_Host::reportFailure(const std::string &message, const std::vector<llvm::Value *> &values) {
  llvm::Type *i64 = llvm::Type::getInt64Ty(Context), *i32 = llvm::Type::getInt32Ty(Context);
  size_t n = values.size();
  llvm::AllocaInst *array = entryAlloca(llvm::ArrayType::get(i64, std::max<size_t>(n, 1)), "assert_values");
  for (size_t i = 0; i < n; ++i)
    Builder->CreateStore(Builder->CreateSExtOrTrunc(values[i], i64),
                         Builder->CreateConstInBoundsGEP2_32(array->getAllocatedType(), array, 0, i));
  Builder->CreateCall(runtimeFunction("ptxjit_assert_failed"),
                      {CallContext, Builder->CreateGlobalStringPtr(message), llvm::ConstantInt::get(i32, n), array});
  emitErrorReturn();
}

void CodeGen_Host::emit_print(const std::string &format, const std::vector<llvm::Value *> &values,
                              const std::vector<Type> &types) {
  callWithMessage("ptxjit_print", format, values, types);
}

void CodeGen_Host::emit_require_failure(const std::string &format, const std::vector<llvm::Value *> &values,
                                        const std::vector<Type> &types) {
  callWithMessage("ptxjit_require_failed", format, values, types);
  emitErrorReturn();
}

void CodeGen_Host::callWithMessage(const char *function, const std::string &format,
                                   const std::vector<llvm::Value *> &values, const std::vector<Type> &types) {
  // The runtime reads each placeholder's slot by its kind: signed, unsigned or float.
  const std::string typed = print_format_with(format, types, [](Type t) {
    return t.is_float() ? "%f" : t.is_int() ? "%i" : "%u";
  });
  Builder->CreateCall(runtimeFunction(function),
                      {CallContext, Builder->CreateGlobalStringPtr(typed),
                       llvm::ConstantInt::get(llvm::Type::getInt32Ty(Context), values.size()),
                       print_slots(values, types)});
}

void CodeGen_Host::emit_prefetch(llvm::Value *address) {
  // A read, kept in every cache level, of data (not instructions).
  llvm::Type *i32 = llvm::Type::getInt32Ty(Context);
  Builder->CreateIntrinsic(llvm::Intrinsic::prefetch, {address->getType()},
                           {address, llvm::ConstantInt::get(i32, 0), llvm::ConstantInt::get(i32, 3),
                            llvm::ConstantInt::get(i32, 1)});
}

} // namespace ptxjit::codegen
