// The host JIT on its own: modules compiled in one part or in two at once, linked as one library.

#include "HostJIT.h"
#include "codegen/CodeGen_Host.h"
#include "lower/Lower.h"
#include "ptxjit.h"
#include "ptxjit/Error.h"

#include <catch2/catch.hpp>
#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/DataLayout.h>
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

// The module of IR `ir` for the host. Throws where it does not parse: compile_host_module makes
// modules again on threads of its own, where Catch's assertions may not be used.
std::unique_ptr<llvm::Module> hostModule(const std::string &ir, llvm::LLVMContext &context) {
  llvm::SMDiagnostic error;
  auto module = llvm::parseAssemblyString(ir, error, context);
  if (!module)
    throw std::runtime_error("test IR does not parse: " + error.getMessage().str());
  module->setTargetTriple(jit::host_triple());
  module->setDataLayout(jit::host_data_layout());
  return module;
}

// A pipeline-shaped module: an entry (context, args) that runs `steps` steps on *args[0] and
// passes the result to an internal function that runs `steps` more.
// `entrySteps` and `innerSteps` steps; the entry marked optnone where `unoptimizedEntry` (as
// codegen marks a pipeline function without loops), the inner function where `unoptimizedInner`.
std::unique_ptr<llvm::Module> twoFunctions(llvm::LLVMContext &context, const std::string &entry, int entrySteps,
                                           int innerSteps, bool unoptimizedEntry = false,
                                           bool unoptimizedInner = false) {
  std::string last, innerLast;
  std::ostringstream ir;
  ir << "define internal i32 @" << entry << ".inner(i32 %x)" << (unoptimizedInner ? " #0" : "") << " {\n"
     << chain("%x", "i", innerSteps, innerLast) << "  ret i32 " << innerLast << "\n}\n"
     << "define i32 @" << entry << "(ptr %context, ptr %args)" << (unoptimizedEntry ? " #0" : "") << " {\n"
     << "  %slot = load ptr, ptr %args\n  %x = load i32, ptr %slot\n"
     << chain("%x", "e", entrySteps, last) << "  %r = call i32 @" << entry << ".inner(i32 " << last << ")\n"
     << "  ret i32 %r\n}\n"
     << "attributes #0 = { noinline optnone }\n";
  auto module = hostModule(ir.str(), context);
  module->setModuleIdentifier(entry);
  return module;
}

// twoFunctions' maker for compile_host_module, which makes it again on other threads.
jit::HostModuleMaker twoFunctionsMaker(const std::string &entry, int entrySteps, int innerSteps,
                                       bool unoptimizedEntry = false, bool unoptimizedInner = false) {
  return [=](llvm::LLVMContext &context) {
    return twoFunctions(context, entry, entrySteps, innerSteps, unoptimizedEntry, unoptimizedInner);
  };
}

} // namespace

TEST_CASE("Host modules of two large functions compile on two threads and link as one", "[cpu][jit]") {
  const uint32_t x = std::random_device{}();
  INFO("x " << x);
  for (int steps : {2, 60}) {
    INFO(steps << " steps a function");
    llvm::LLVMContext context;
    const std::string entry = "two_parts_" + std::to_string(steps);
    auto module = twoFunctions(context, entry, steps, steps);
    const std::vector<std::string> objects = jit::compile_host_module(*module, twoFunctionsMaker(entry, steps, steps), nullptr);
    // 2 x 6 instructions do not pay for a second thread; 180 and more do, on two cores.
    const bool split = steps == 60 && std::thread::hardware_concurrency() >= 2;
    CHECK(objects.size() == (split ? 2u : 1u));
    jit::LinkedHostCode linked = jit::link_host_objects(objects, entry, "", entry, jit::host_data_layout().getStringRepresentation());
    uint32_t value = x;
    void *args[] = {&value};
    uint32_t expected = x;
    for (int i = 0; i < 2 * steps; ++i)
      expected = step(expected);
    CHECK(static_cast<uint32_t>(linked.function()(nullptr, args)) == expected);
  }
}

TEST_CASE("A host module made again differently for another thread is refused, not linked", "[cpu][jit]") {
  if (std::thread::hardware_concurrency() < 2) {
    WARN("skipped: one core, so modules are compiled whole, never made again");
    return;
  }
  llvm::LLVMContext context;
  auto module = twoFunctions(context, "made_again", 60, 60);
  // The copy's inner function has another length: its object would not be the program's.
  CHECK_THROWS_WITH(jit::compile_host_module(*module, twoFunctionsMaker("made_again", 60, 61), nullptr),
                    Catch::Contains("made_again") && Catch::Contains("made again for another thread differs"));
  // A maker's own error reaches the caller.
  auto again = twoFunctions(context, "made_again_throws", 60, 60);
  CHECK_THROWS_WITH(jit::compile_host_module(*again, [](llvm::LLVMContext &) -> std::unique_ptr<llvm::Module> {
                      throw std::runtime_error("no module this time");
                    }, nullptr),
                    Catch::Contains("no module this time"));
}

TEST_CASE("Host functions marked optnone compile unoptimized, in a part of their own where large, and compute the same",
          "[cpu][jit]") {
  const uint32_t x = std::random_device{}();
  INFO("x " << x);
  struct Case {
    int entrySteps, innerSteps;
    bool unoptimizedInner;
    bool split; // on two cores
  };
  // The entry is optnone. Unoptimized functions get a part of their own from 100 instructions
  // on, where there are optimized ones too; a module of optnone functions only is compiled whole.
  for (Case c : {Case{20, 60, false, false}, Case{60, 60, false, true}, Case{60, 60, true, false},
                 Case{400, 400, true, false}}) {
    INFO(c.entrySteps << " + " << c.innerSteps << " steps, optnone inner " << c.unoptimizedInner);
    llvm::LLVMContext context;
    const std::string entry = "optnone_" + std::to_string(c.entrySteps) + "_" + std::to_string(c.innerSteps) +
                              (c.unoptimizedInner ? "_both" : "_entry");
    auto module = twoFunctions(context, entry, c.entrySteps, c.innerSteps, true, c.unoptimizedInner);
    const std::vector<std::string> objects =
        jit::compile_host_module(*module, twoFunctionsMaker(entry, c.entrySteps, c.innerSteps, true, c.unoptimizedInner), nullptr);
    CHECK(objects.size() == (c.split && std::thread::hardware_concurrency() >= 2 ? 2u : 1u));
    jit::LinkedHostCode linked = jit::link_host_objects(objects, entry, "", entry, jit::host_data_layout().getStringRepresentation());
    uint32_t value = x;
    void *args[] = {&value};
    uint32_t expected = x;
    for (int i = 0; i < c.entrySteps + c.innerSteps; ++i)
      expected = step(expected);
    CHECK(static_cast<uint32_t>(linked.function()(nullptr, args)) == expected);
  }
}

TEST_CASE("A host module compiles to the same object after unoptimized ones: no instruction selector carries over",
          "[cpu][jit]") {
  // Compiles share a pool of target machines; LLVM turns FastISel on for an unoptimized compile and
  // never off, and an optimized one on that machine selected instructions with it.
  llvm::LLVMContext context;
  auto compileOptimized = [&] {
    // A multiply-add, fused by SelectionDAG where the CPU has FMA; a loop and a select.
    const char *ir = "define float @same_object(ptr %p, i32 %n, float %k) {\n"
                     "entry:\n  br label %loop\n"
                     "loop:\n  %i = phi i32 [ 0, %entry ], [ %next, %loop ]\n"
                     "  %acc = phi float [ 0.0, %entry ], [ %sum, %loop ]\n"
                     "  %q = getelementptr float, ptr %p, i32 %i\n  %v = load float, ptr %q\n"
                     "  %m = fmul contract float %v, %k\n  %s = fadd contract float %m, %acc\n"
                     "  %neg = fcmp olt float %s, 0.0\n  %sum = select i1 %neg, float %acc, float %s\n"
                     "  %next = add i32 %i, 1\n  %done = icmp eq i32 %next, %n\n"
                     "  br i1 %done, label %exit, label %loop\n"
                     "exit:\n  ret float %sum\n}\n";
    auto module = hostModule(ir, context);
    const std::vector<std::string> objects =
        jit::compile_host_module(*module, [&](llvm::LLVMContext &c) { return hostModule(ir, c); }, nullptr);
    REQUIRE(objects.size() == 1);
    return objects[0];
  };
  const std::string before = compileOptimized();
  for (int i = 0; i < 2; ++i) {
    auto unoptimized = twoFunctions(context, "unoptimized_between", 5, 5, true, true);
    jit::compile_host_module(*unoptimized, twoFunctionsMaker("unoptimized_between", 5, 5, true, true), nullptr);
  }
  CHECK(compileOptimized() == before);
}

TEST_CASE("Host objects link only with the data layout they were compiled for", "[cpu][jit]") {
  llvm::LLVMContext context;
  auto module = twoFunctions(context, "layout_check", 2, 2);
  const std::vector<std::string> objects = jit::compile_host_module(*module, twoFunctionsMaker("layout_check", 2, 2), nullptr);
  // A 32-bit layout is not this JIT's; a malformed one is refused by name.
  CHECK_THROWS_WITH(jit::link_host_objects(objects, "layout_check", "", "layout_check", "e-p:32:32"),
                    Catch::Contains("layout_check") && Catch::Contains("another data layout"));
  CHECK_THROWS_AS(jit::link_host_objects(objects, "layout_check", "", "layout_check", "not a layout"), InternalError);
  jit::LinkedHostCode linked = jit::link_host_objects(objects, "layout_check", "", "layout_check",
                                                      jit::host_data_layout().getStringRepresentation());
  uint32_t value = 7;
  void *args[] = {&value};
  CHECK(static_cast<uint32_t>(linked.function()(nullptr, args)) == step(step(step(step(7)))));
}

TEST_CASE("Host code with static constructors is refused: the JIT runs none", "[cpu][jit]") {
  llvm::LLVMContext context;
  const std::string ir = "@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] "
                         "[{ i32, ptr, ptr } { i32 65535, ptr @init, ptr null }]\n"
                         "@flag = global i32 0\n"
                         "define internal void @init() {\n  store i32 1, ptr @flag\n  ret void\n}\n";
  auto module = hostModule(ir, context);
  module->setModuleIdentifier("with_constructor");
  CHECK_THROWS_WITH(jit::compile_host_module(*module, [&](llvm::LLVMContext &c) { return hostModule(ir, c); }, nullptr),
                    Catch::Contains("with_constructor") && Catch::Contains("static constructors"));
}

TEST_CASE("A pipeline function is marked optnone exactly when it has no loop, its loop bodies never", "[cpu][jit]") {
  struct Case {
    const char *schedule, *target;
    bool entryUnoptimized;
  };
  for (Case c : {Case{"serial", "host", false}, Case{"parallel", "host", true}, Case{"gpu", "host-cuda", true}}) {
    INFO(c.schedule);
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y"), xi("xi"), yi("yi");
    Func f(std::string("optnone_") + c.schedule);
    f(x, y) = in(x, y) * 2.0f + 1.0f;
    if (std::string(c.schedule) == "parallel")
      f.parallel(y).vectorize(x, 8);
    if (std::string(c.schedule) == "gpu")
      f.gpu_tile(x, y, xi, yi, 16, 8);
    const Target target(c.target);
    lower::LoweredPipeline lowered = lower::lower({f.contents()}, target);
    llvm::LLVMContext context;
    codegen::CodeGen_Host generator(context, target);
    const std::string name = "ptxjit_" + lowered.name;
    auto module = generator.compile(lowered, name, jit::host_data_layout(), jit::host_triple());
    REQUIRE(module->getFunction(name));
    CHECK(module->getFunction(name)->hasOptNone() == c.entryUnoptimized);
    for (const llvm::Function &g : *module)
      if (!g.isDeclaration() && g.getName() != name)
        CHECK_FALSE(g.hasOptNone()); // a parallel loop body runs once per iteration
  }
}
