#define CATCH_CONFIG_RUNNER
#include "TemporaryCompileCache.h"

#include <catch2/catch.hpp>

int main(int argc, char **argv) {
  ptxjit::test::TemporaryCompileCache cache;
  return Catch::Session().run(argc, argv);
}
