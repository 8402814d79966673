#ifndef PTXJIT_CODEGEN_CODEGEN_HOST_H
#define PTXJIT_CODEGEN_CODEGEN_HOST_H

// Host CPU code for a lowered pipeline: one function
//   int32_t name(void *context, void **args)
// where args are the pipeline's arguments in LoweredPipeline order (a ptxjit_buffer_t * for a
// buffer, a pointer to the value for a scalar) and context is a ptxjit_host_call_context *.
// Parallel loops become tasks for ptxjit_do_par_for; heap allocations are freed on every exit.

#include "CodeGen_LLVM.h"
#include "lower/Lower.h"

namespace ptxjit::codegen {

class CodeGen_Host : public CodeGen_LLVM {
public:
  CodeGen_Host(llvm::LLVMContext &context, const Target &target);
  std::unique_ptr<llvm::Module> compile(const lower::LoweredPipeline &pipeline, const std::string &functionName,
                                        const llvm::DataLayout &layout, const std::string &triple);

protected:
  using CodeGen_LLVM::visit;
  void visit(const ir::For *) override;
  void visit(const ir::Allocate *) override;
  void visit(const ir::AssertStmt *) override;

private:
  llvm::Value *CallContext = nullptr;
  std::vector<llvm::Value *> LiveHeapAllocations;
  llvm::StructType *BufferType = nullptr;
  llvm::StructType *DimensionType = nullptr;

  /// Frees the live heap allocations and returns -1; continues in a fresh block for the success path.
  void branchToErrorUnless(llvm::Value *ok);
  void emitErrorReturn();
  llvm::AllocaInst *entryAlloca(llvm::Type *type, const std::string &name);
  void unpackArguments(const lower::LoweredPipeline &pipeline, llvm::Value *args);
  llvm::FunctionCallee runtimeFunction(const char *name);
  void parallelLoop(const ir::For *op);
};

} // namespace ptxjit::codegen

#endif
