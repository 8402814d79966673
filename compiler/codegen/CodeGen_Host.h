#ifndef PTXJIT_CODEGEN_CODEGEN_HOST_H
#define PTXJIT_CODEGEN_CODEGEN_HOST_H

// Host CPU code for a lowered pipeline: one function
//   int32_t name(void *context, void **args)
// where args are the pipeline's arguments in LoweredPipeline order (a ptxjit_buffer_t * for a
// buffer, a pointer to the value for a scalar) and context is a ptxjit_host_call_context *.
// Parallel loops become tasks for ptxjit_do_par_for; heap allocations are freed on every exit.
// On a CUDA target, each GPU loop nest becomes a kernel launched through ptxjit_cuda_launch, and
// the kernels are kept for device code generation; the code outside kernels (host stages) runs
// here, with copies between host and device memory where InjectHostDeviceCopies put them.

#include "CodeGen_LLVM.h"
#include "KernelClosure.h"
#include "lower/Lower.h"

namespace ptxjit::codegen {

/// One kernel of a pipeline: its loop nest (kept alive for device code generation) and closure.
struct KernelRecord {
  std::string name;
  ir::Stmt nest;
  KernelClosure closure;
};

/// Loads glibc's vector math library (libmvec) into the process, once, so that the JIT resolves
/// the calls host code makes to it (code from the compile cache included). False where the
/// library is missing; host code then calls the scalar functions.
bool load_vector_math_library();

class CodeGen_Host : public CodeGen_LLVM {
public:
  CodeGen_Host(llvm::LLVMContext &context, const Target &target);
  std::unique_ptr<llvm::Module> compile(const lower::LoweredPipeline &pipeline, const std::string &functionName,
                                        const llvm::DataLayout &layout, const std::string &triple);

  /// The kernels found by compile(), in launch-index order.
  const std::vector<KernelRecord> &kernels() const { return Kernels; }
  /// The global the generated code reads its DeviceCode * from; set it before the first call.
  static std::string device_code_global(const std::string &functionName) { return functionName + "_device_code"; }

protected:
  using CodeGen_LLVM::visit;
  void visit(const ir::For *) override;
  void visit(const ir::Allocate *) override;
  void visit(const ir::AssertStmt *) override;
  /// The host-device copies and dirty marks (InjectHostDeviceCopies); other calls as CodeGen_LLVM.
  void visit(const ir::Call *) override;
  /// Vector math: exp, log and pow of floats as polynomials inline (unless strict_float), the
  /// others through glibc's vector math library (libmvec) where it has the function.
  llvm::Value *call_math(const std::string &name, Type t, const std::vector<llvm::Value *> &args) override;
  void emit_print(const std::string &format, const std::vector<llvm::Value *> &values,
                  const std::vector<Type> &types) override;
  void emit_require_failure(const std::string &format, const std::vector<llvm::Value *> &values,
                            const std::vector<Type> &types) override;
  void emit_prefetch(llvm::Value *address) override;

private:
  // Calls runtime `function` (ptxjit_print's parameters) with `format` typed for its values.
  void callWithMessage(const char *function, const std::string &format, const std::vector<llvm::Value *> &values,
                       const std::vector<Type> &types);
  // exp, log and pow of a float vector, within a few units in the last place.
  llvm::Value *polynomial(llvm::Value *x, const std::vector<double> &coefficients);
  /// a b + c, fused where the target has fused multiply-add (one rounding, not two).
  llvm::Value *fusedMultiplyAdd(llvm::Value *a, llvm::Value *b, llvm::Value *c);
  llvm::Value *polynomialExp(llvm::Value *x);
  llvm::Value *polynomialLog(llvm::Value *x);
  llvm::Value *polynomialPow(llvm::Value *x, llvm::Value *y);
  llvm::Value *vectorLibraryCall(const std::string &name, Type t, const std::vector<llvm::Value *> &args);

  llvm::Value *CallContext = nullptr;
  struct LiveAllocation {
    llvm::Value *Pointer;
    const char *Release; // the runtime function that frees it
  };
  std::vector<LiveAllocation> LiveHeapAllocations;
  llvm::StructType *BufferType = nullptr;
  llvm::StructType *DimensionType = nullptr;

  /// Frees the live heap allocations and returns -1; continues in a fresh block for the success path.
  void branchToErrorUnless(llvm::Value *ok);
  void emitErrorReturn();
  /// Branches to a failure that reports `message` (a % for each value) unless `ok` holds.
  void failUnless(llvm::Value *ok, const std::string &message, const std::vector<llvm::Value *> &values);
  void reportFailure(const std::string &message, const std::vector<llvm::Value *> &values);
  void unpackArguments(const lower::LoweredPipeline &pipeline, llvm::Value *args);
  llvm::FunctionCallee runtimeFunction(const char *name);
  void parallelLoop(const ir::For *op);
  void launchKernel(const ir::For *op);

  // On a CUDA target a buffer's name is its host memory; these name its device memory and its
  // descriptor (ptxjit_buffer_t *) where it has them.
  static std::string device_symbol(const std::string &buffer) { return buffer + ".device"; }
  static std::string descriptor_symbol(const std::string &buffer) { return buffer + ".buffer"; }

  bool CUDA = false;
  /// The debug feature: each launch waits for its kernel, so that a fault names the kernel.
  bool SynchronizeAfterLaunch = false;
  std::string PipelineFunctionName;
  std::vector<KernelRecord> Kernels;
  llvm::GlobalVariable *DeviceCodeGlobal = nullptr;
};

} // namespace ptxjit::codegen

#endif
