#ifndef PTXJIT_LANG_DEFINITIONKEY_H
#define PTXJIT_LANG_DEFINITIONKEY_H

// A pipeline's definitions and schedules as one byte string, equal for two pipelines exactly
// when lowering them gives the same code: every Func reachable from the outputs (wrappers
// included) with all its definitions, reduction domains, schedules, specializations, bounds and
// storage, and every Param and ImageParam they use with its type and constraints (not its
// value or bound buffer, which a realize reads). Compiled code is cached under it, so a hit
// skips lowering.

#include "lang/Function.h"
#include "lang/Parameter.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ptxjit {

struct DefinitionKey {
  /// Empty where the pipeline cannot be keyed (two different Funcs or Params of one name, which
  /// lowering reports): it is then compiled without caches.
  std::string text;
  /// The Params and ImageParams the definitions use, by name: a cached pipeline's arguments are
  /// bound to this pipeline's own.
  std::map<std::string, std::shared_ptr<ParameterContents>> parameters;
};

DefinitionKey definition_key(const std::vector<std::shared_ptr<FunctionContents>> &outputs);

} // namespace ptxjit

#endif
