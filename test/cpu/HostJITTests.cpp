// The host JIT on its own: modules compiled in one part or in two at once, linked as one library.

#include "HostJIT.h"

#include <catch2/catch.hpp>
#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/SourceMgr.h>

#include <random>
#include <sstream>
#include <thread>

using namespace ptxjit;

namespace {

// One step of the hash chain the functions below compute, 3 instructions each in the IR.
uint32_t step(uint32_t v) { return (v * 2654435761u) ^ (v >> 13); }

// IR of `steps` steps from the i32 value `in`, its values named after `prefix`; `out` is the last.
std::string chain(const std::string &in, const std::string &prefix, int steps, std::string &out) {
  std::ostringstream ir;
  std::string v = in;
  for (int i = 0; i < steps; ++i) {
    const std::string n = prefix + std::to_string(i);
    ir << "  %" << n << "s = lshr i32 " << v << ", 13\n"
       << "  %" << n << "m = mul i32 " << v << ", -1640531535\n" // 2654435761
       << "  %" << n << " = xor i32 %" << n << "m, %" << n << "s\n";
    v = "%" + n;
  }
  out = v;
  return ir.str();
}

// A pipeline-shaped module: an entry (context, args) that runs `steps` steps on *args[0] and
// passes the result to an internal function that runs `steps` more.
std::unique_ptr<llvm::Module> twoFunctions(llvm::LLVMContext &context, const std::string &entry, int steps) {
  std::string last, innerLast;
  std::ostringstream ir;
  ir << "define internal i32 @" << entry << ".inner(i32 %x) {\n"
     << chain("%x", "i", steps, innerLast) << "  ret i32 " << innerLast << "\n}\n"
     << "define i32 @" << entry << "(ptr %context, ptr %args) {\n"
     << "  %slot = load ptr, ptr %args\n  %x = load i32, ptr %slot\n"
     << chain("%x", "e", steps, last) << "  %r = call i32 @" << entry << ".inner(i32 " << last << ")\n"
     << "  ret i32 %r\n}\n";
  llvm::SMDiagnostic error;
  auto module = llvm::parseAssemblyString(ir.str(), error, context);
  INFO(error.getMessage().str());
  REQUIRE(module);
  module->setTargetTriple(jit::host_triple());
  module->setDataLayout(jit::host_data_layout());
  return module;
}

} // namespace

TEST_CASE("Host modules of two large functions compile on two threads and link as one", "[cpu][jit]") {
  const uint32_t x = std::random_device{}();
  INFO("x " << x);
  for (int steps : {2, 60}) {
    INFO(steps << " steps a function");
    llvm::LLVMContext context;
    const std::string entry = "two_parts_" + std::to_string(steps);
    auto module = twoFunctions(context, entry, steps);
    const std::vector<std::string> objects = jit::compile_host_module(*module, nullptr);
    // 2 x 6 instructions do not pay for a second thread; 180 and more do, on two cores.
    const bool split = steps == 60 && std::thread::hardware_concurrency() >= 2;
    CHECK(objects.size() == (split ? 2u : 1u));
    jit::LinkedHostCode linked = jit::link_host_objects(objects, entry, "", entry);
    uint32_t value = x;
    void *args[] = {&value};
    uint32_t expected = x;
    for (int i = 0; i < 2 * steps; ++i)
      expected = step(expected);
    CHECK(static_cast<uint32_t>(linked.function()(nullptr, args)) == expected);
  }
}
