#include "BufferConstraints.h"

#include "ir/Constants.h"

namespace ptxjit::lower {

using namespace ir;

Stmt constrain_buffers(const Stmt &s, const std::vector<std::shared_ptr<ParameterContents>> &images, bool checks) {
  std::vector<Stmt> asserts;
  std::vector<std::pair<std::string, Expr>> lets;
  for (const auto &image : images)
    for (size_t d = 0; d < image->constraints.size(); ++d) {
      const DimensionConstraint &c = image->constraints[d];
      for (auto [field, value] : {std::pair{"min", c.min}, std::pair{"extent", c.extent}, std::pair{"stride", c.stride}}) {
        if (!value.defined())
          continue;
        const std::string name = buffer_field_name(image->name, field, static_cast<int>(d));
        Expr actual = Variable::make(Int(32), name, image);
        asserts.push_back(AssertStmt::make(EQ::make(actual, value),
                                           std::string(image->is_output ? "output" : "input") + " buffer " +
                                               image->name + " has " + field + " % in dimension " + std::to_string(d) +
                                               ", but its " + (image->is_output ? "output_buffer()" : "ImageParam") +
                                               " requires %",
                                           {actual, value}));
        lets.emplace_back(name, value);
      }
    }
  Stmt result = s;
  for (auto it = lets.rbegin(); it != lets.rend(); ++it)
    result = LetStmt::make(it->first, it->second, result);
  return checks && !asserts.empty() ? Block::make(Block::make(asserts), result) : result;
}

} // namespace ptxjit::lower
