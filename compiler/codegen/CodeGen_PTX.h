#ifndef PTXJIT_CODEGEN_CODEGEN_PTX_H
#define PTXJIT_CODEGEN_CODEGEN_PTX_H

// CUDA kernels through LLVM's NVPTX backend. Each GPU loop nest becomes one kernel whose
// parameters are its closure (buffers as noalias global pointers, read-only ones marked so,
// then scalars); block and thread loops read blockIdx and threadIdx. Math calls go to
// libdevice, linked only when used. The result is PTX text for the target's capability.

#include "CodeGen_LLVM.h"
#include "KernelClosure.h"

#include <memory>
#include <string>

namespace llvm {
class TargetMachine;
}

namespace ptxjit::codegen {

class CodeGen_PTX : public CodeGen_LLVM {
public:
  /// `target` must have a resolved CUDA capability; `ptxVersion` is the PTX ISA version
  /// (e.g. 78 for 7.8), at most what LLVM and the driver that will load the code accept.
  CodeGen_PTX(llvm::LLVMContext &context, const Target &target, int ptxVersion);
  ~CodeGen_PTX() override;

  void add_kernel(const ir::For *nest, const std::string &name, const KernelClosure &closure);
  /// Links libdevice if needed, optimizes and emits PTX. The generator is spent afterwards.
  std::string compile_to_ptx();

  /// The newest PTX ISA version LLVM 19 emits.
  static constexpr int MaxLLVMPTXVersion = 85;

protected:
  using CodeGen_LLVM::visit;
  void visit(const ir::For *) override;
  void visit(const ir::Allocate *) override;
  void visit(const ir::AssertStmt *) override;
  void visit(const ir::ProducerConsumer *) override;
  llvm::Value *call_math(const std::string &name, Type t, const std::vector<llvm::Value *> &args) override;
  void emit_print(const std::string &format, const std::vector<llvm::Value *> &values,
                  const std::vector<Type> &types) override;
  void emit_require_failure(const std::string &format, const std::vector<llvm::Value *> &values,
                            const std::vector<Type> &types) override;
  void emit_prefetch(llvm::Value *address) override;
  llvm::Value *dense_vector_load(llvm::Type *type, llvm::Value *pointer, llvm::Align elementAlign) override;
  void dense_vector_store(llvm::Value *value, llvm::Value *pointer, llvm::Align elementAlign) override;
  llvm::Value *selected_float(llvm::Value *value) override;

private:
  std::unique_ptr<llvm::TargetMachine> Machine;
  bool UsesLibdevice = false;
  const KernelClosure *Closure = nullptr;
  llvm::GlobalVariable *SharedMemory = nullptr; // the dynamic shared block, declared once
  int ThreadDepth = 0;      // gpu_threads loops around the code being generated
  int BlockSerialDepth = 0; // serial loops around it, outside thread loops
  llvm::Value *specialRegister(const char *kind, int dim);
  void barrier();
  /// The alignment of a wide access to `type` (8 or 16 bytes), or `elementAlign` if none fits.
  llvm::Align wideAlignment(llvm::Type *type, llvm::Align elementAlign) const;
  /// Branches on whether `pointer` is aligned to `wide`: access(true) or access(false), joined
  /// with a phi when they return values.
  template <typename Access> llvm::Value *byAlignment(llvm::Value *pointer, llvm::Align wide, Access access);
};

/// The sm_XX name of a resolved target's capability (sm_90a for cuda_capability_90a).
std::string cuda_arch_name(const Target &target);

} // namespace ptxjit::codegen

#endif
