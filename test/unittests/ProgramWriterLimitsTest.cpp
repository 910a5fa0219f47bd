//===- ProgramWriterLimitsTest.cpp - what no Program may hold -------------===//
//
// The Program writer refuses an arena or a constant larger than a Program
// may have (rt::kMaxProgramBytes) with a message giving the size, instead
// of expanding a splat into terabytes; the runtime's loader refuses the
// same sizes, so what is written can be read.
//
//===----------------------------------------------------------------------===//

#include "CompileAndRun.h"
#include "compiler/Pipelines/Pipelines.h"

#include <gtest/gtest.h>

#include <string>

using namespace ampc;

namespace {

/// Lowers `source` (with `lower`) and writes it; returns the diagnostics,
/// "" when the Program was written.
std::string writeErrors(const std::string &source, bool lower) {
  std::string bytes;
  return unittest::writeProgramBytes(
      source,
      [&](mlir::PassManager &pm) {
        if (lower)
          buildLoweringPipeline(pm, {});
      },
      bytes);
}

} // namespace

TEST(ProgramWriterLimits, RefusesAnArenaNoProgramMayHave) {
  std::string src = "func.func @f() attributes {rt.arena_size = "
                    "8796093022208 : i64} { return }";
  EXPECT_EQ(writeErrors(src, false),
            "function 'f' has an arena of 8 TiB (8796093022208 bytes), more "
            "than the 4 TiB a Program may have");
  src = "func.func @f() attributes {rt.arena_size = 4398046511104 : i64} "
        "{ return }";
  EXPECT_EQ(writeErrors(src, false), "");
}

TEST(ProgramWriterLimits, RefusesASplatNoProgramMayHave) {
  // An 8 TiB constant output: no arena, one splat the writer would expand.
  std::string src = R"(
    func.func @f() -> (tensor<2199023255552xf32> {graph.name = "y"}) {
      %c = graph.constant dense<1.0> : tensor<2199023255552xf32>
      return %c : tensor<2199023255552xf32>
    })";
  EXPECT_EQ(writeErrors(src, true),
            "'graph.constant' op has a value of 8 TiB (8796093022208 bytes) "
            "for 'tensor<2199023255552xf32>', more than the 4 TiB a Program "
            "value may have");
}
