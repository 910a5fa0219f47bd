//===- AmpProgramTest.cpp - amp IR through the lowering to the runtime ----===//
//
// Hand-written graph functions with what amp-auto-cast puts in them
// (amp.cast, graph.accumulate), compiled by the real lowering and Program
// writer and run on the CPU runtime: what amp-run does after the pass,
// without needing the pass to place them.
//
//===----------------------------------------------------------------------===//

#include "compiler/Pipelines/Pipelines.h"
#include "runtime/Program.h"
#include "runtime/Session.h"
#include "test/unittests/CompileAndRun.h"
#include "test/unittests/runtime/ElementValue.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

using namespace ampc;
using namespace ampc::unittest;

namespace {

/// `mlir` lowered to rt (with or without fusion) and written as a Program.
rt::ProgramInfo compile(const std::string &mlir, bool fuse) {
  return compileProgram(mlir, [&](mlir::PassManager &pm) {
    InferencePipelineOptions options;
    options.fuse = fuse;
    buildLoweringPipeline(pm, options);
  });
}

/// Runs `fn` with one input "x" and returns its output "y" as doubles.
std::vector<double> run(const rt::FunctionInfo &fn, rt::DType dtype,
                        const rt::Shape &shape, const std::vector<double> &x) {
  std::unique_ptr<rt::Session> session = openSession(fn);
  if (!session)
    return {};
  std::vector<uint8_t> bytes(x.size() * rt::sizeOf(dtype));
  for (size_t i = 0; i < x.size(); ++i)
    rt::test::writeElement(bytes.data() + i * rt::sizeOf(dtype), dtype, x[i]);
  rt::TensorView in{dtype, shape, bytes.data()};
  rt::TensorView out;
  rt::Status s = session->setInput("x", in);
  if (s.isOk())
    s = session->run();
  if (s.isOk())
    s = session->output("y", out);
  EXPECT_TRUE(s.isOk()) << s.message();
  if (!s)
    return {};
  std::vector<double> y;
  for (int64_t i = 0; i < out.numElements(); ++i)
    y.push_back(rt::test::readElement(static_cast<const char *>(out.data) +
                                          i * rt::sizeOf(out.dtype),
                                      out.dtype));
  return y;
}

/// y = amp.cast(amp.cast(x: f32 -> low) -> f32), with a relu in front so
/// that, fused, the casts run inside one elementwise kernel.
std::string roundTrip(const std::string &low) {
  std::string t32 = "tensor<5xf32>", tlow = "tensor<5x" + low + ">";
  return "func.func @forward(%x: " + t32 + " {graph.name = \"x\"}) -> (" + t32 +
         " {graph.name = \"y\"}) {\n" + "  %0 = graph.relu %x : " + t32 + "\n" +
         "  %1 = amp.cast %0 : " + t32 + " to " + tlow + "\n" +
         "  %2 = amp.cast %1 : " + tlow + " to " + t32 + "\n" +
         "  return %2 : " + t32 + "\n}\n";
}

// Each value rounds to nearest even in the low type, overflows to inf past
// its largest finite value, and underflows through its subnormals.
TEST(AmpCastExecution, RoundTripRoundsToTheLowType) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> x = {1.0 / 3.0, 65520.0, 65519.0, 1e-8, 2.0};
  struct Case {
    const char *low;
    std::vector<double> want;
  } cases[] = {
      // f16: 1/3 = 0x3555; 65520 is the midpoint above 65504 (max), which
      // rounds to even: inf; 2^-24 is the smallest subnormal, 1e-8 < 2^-25.
      {"f16", {0.333251953125, inf, 65504.0, 0.0, 2.0}},
      // bf16 keeps f32's range with 8 significant bits.
      {"bf16", {0.333984375, 65536.0, 65536.0, 1.0011717677116394e-08, 2.0}},
  };
  for (const Case &c : cases)
    for (bool fuse : {true, false}) {
      SCOPED_TRACE(std::string(c.low) + (fuse ? " fused" : " unfused"));
      rt::ProgramInfo p = compile(roundTrip(c.low), fuse);
      const rt::FunctionInfo *fn = p.find("forward");
      ASSERT_NE(fn, nullptr);
      // Fused: relu and both casts are one kernel; unfused: three.
      ASSERT_EQ(fn->kernels.size(), fuse ? 1u : 3u);
      if (!fuse) {
        EXPECT_EQ(fn->kernels[1].kind, "cast");
      }
      std::vector<double> y = run(*fn, rt::DType::F32, {5}, x);
      ASSERT_EQ(y.size(), c.want.size());
      for (size_t i = 0; i < y.size(); ++i)
        EXPECT_EQ(y[i], c.want[i]) << "x = " << x[i];
    }
}

// graph.accumulate reaches the Program as the type's spelling and the
// runtime honours it: 4096 ones summed by an f16 matmul give 4096 with an
// f32 accumulator (an f16 one would stop at 2048, where 2048 + 1 rounds
// back to 2048).
TEST(AccumulateInProgram, F16MatmulSumsInF32) {
  const char *mlir = R"(
func.func @forward(%x: tensor<1x4096xf16> {graph.name = "x"},
                   %w: tensor<4096x1xf16> {graph.name = "w", graph.init = dense<1.0> : tensor<4096x1xf16>})
    -> (tensor<1x1xf16> {graph.name = "y"}) {
  %0 = graph.matmul %x, %w {graph.accumulate = f32} : (tensor<1x4096xf16>, tensor<4096x1xf16>) -> tensor<1x1xf16>
  return %0 : tensor<1x1xf16>
}
)";
  rt::ProgramInfo p = compile(mlir, true);
  const rt::FunctionInfo *fn = p.find("forward");
  ASSERT_NE(fn, nullptr);
  ASSERT_EQ(fn->kernels.size(), 1u);
  const rt::AttrValue *a = fn->kernels[0].attrs.find("graph.accumulate");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->kind, rt::AttrValue::Kind::String);
  EXPECT_EQ(a->s, "f32");
  std::vector<double> y =
      run(*fn, rt::DType::F16, {1, 4096}, std::vector<double>(4096, 1.0));
  ASSERT_EQ(y.size(), 1u);
  EXPECT_EQ(y[0], 4096.0);
}

} // namespace
