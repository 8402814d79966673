#include "WrapCalls.h"

#include "ir/IRMutator.h"
#include "lang/Parameter.h"

#include <map>

namespace ptxjit::lower {

using namespace ir;

namespace {

// The wrapper of `wrappers` that `consumer` reads, or null.
std::shared_ptr<FunctionContents> wrapperFor(const std::map<std::string, std::shared_ptr<FunctionContents>> &wrappers,
                                             const FunctionContents &consumer) {
  for (const std::string &key : {consumer.name, std::string()})
    if (auto it = wrappers.find(key); it != wrappers.end() && it->second.get() != &consumer)
      return it->second;
  return nullptr;
}

class CopiedPipeline {
public:
  std::shared_ptr<FunctionContents> copyOf(const std::shared_ptr<FunctionContents> &original) {
    auto [it, inserted] = Copies.emplace(original.get(), nullptr);
    if (inserted) {
      it->second = std::make_shared<FunctionContents>(*original);
      Work.push_back(original);
    }
    return it->second;
  }

  void rewriteAll() {
    while (!Work.empty()) {
      std::shared_ptr<FunctionContents> original = Work.back();
      Work.pop_back();
      rewrite(original);
    }
  }

private:
  std::map<const FunctionContents *, std::shared_ptr<FunctionContents>> Copies;
  std::vector<std::shared_ptr<FunctionContents>> Work;

  // The calls of one Func's definitions (its copy's), redirected.
  class Redirect : public IRMutator {
  public:
    Redirect(CopiedPipeline &pipeline, const FunctionContents &consumer) : Pipeline(pipeline), Consumer(consumer) {}

  private:
    CopiedPipeline &Pipeline;
    const FunctionContents &Consumer;
    using IRMutator::visit;

    Expr visit(const Call *op) override {
      Expr e = IRMutator::visit(op);
      const auto *call = e.as<Call>();
      if (call->call_type == Call::Halide) {
        std::shared_ptr<FunctionContents> callee = call->func;
        if (!callee && call->name == Consumer.name)
          return e; // a self-reference stays one
        const bool wrapsCallee = !callee;
        if (wrapsCallee) {
          callee = Consumer.wrapped_func.lock();
          if (!callee || callee->name != call->name)
            throw CompileError("Func " + Consumer.name + " wraps " + call->name + ", which no longer exists");
        }
        if (!wrapsCallee)
          if (auto wrapper = wrapperFor(callee->wrappers, Consumer))
            callee = wrapper;
        return Call::make(call->type, callee->name, call->args, Call::Halide, Pipeline.copyOf(callee), nullptr,
                          call->value_index);
      }
      if (call->call_type == Call::Image) {
        std::shared_ptr<ParameterContents> image = call->param;
        const bool wrapsImage = !image;
        if (wrapsImage) {
          image = Consumer.wrapped_image.lock();
          if (!image || image->name != call->name)
            throw CompileError("Func " + Consumer.name + " wraps " + call->name + ", which no longer exists");
        }
        if (!wrapsImage)
          if (auto wrapper = wrapperFor(image->wrappers, Consumer))
            return Call::make(call->type, wrapper->name, call->args, Call::Halide, Pipeline.copyOf(wrapper));
        return Call::make(call->type, call->name, call->args, Call::Image, nullptr, image);
      }
      return e;
    }
  };

  void rewrite(const std::shared_ptr<FunctionContents> &original) {
    Redirect redirect(*this, *original);
    mutate_definitions(*Copies.at(original.get()), redirect);
  }
};

} // namespace

Outputs wrap_calls(const Outputs &outputs) {
  CopiedPipeline pipeline;
  Outputs copies;
  for (const auto &output : outputs)
    copies.push_back(pipeline.copyOf(output));
  pipeline.rewriteAll();
  return copies;
}

} // namespace ptxjit::lower
