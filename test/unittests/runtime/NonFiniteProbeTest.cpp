//===- NonFiniteProbeTest.cpp - Session's inf/NaN probe -------------------===//
//
// Hand-built f16 Programs whose kernels overflow, or pass on a NaN they were
// given, at known places: the probe names the kernel where inf or NaN first
// appeared, counts it, and leaves every result bit for bit as it was.
//
//===----------------------------------------------------------------------===//
#include "ProgramBuilder.h"
#include "runtime/Half.h"
#include "runtime/Program.h"
#include "runtime/Session.h"
#include "runtime/program.pb.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace ampc::rt;
using namespace ampc::rt::test;
namespace pb = ampc::rt::proto;

namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();

std::string halves(std::vector<float> v) {
  std::string bytes;
  for (float f : v) {
    uint16_t h = floatToHalfBits(f);
    bytes.append(reinterpret_cast<const char *>(&h), 2);
  }
  return bytes;
}

// All f16[4]; c is the constant 1e4 (finite in f16, whose largest is 65504).
//   kernel 0 add 'sum':    s = x + y
//   kernel 1 mul 'scale':  m = s * c  (in place over s)
//   kernel 2 sub 'diff':   d = m - m  (inf - inf is NaN)
//   kernel 3 mul 'again':  e = d * c  (in place over d)
//   kernel 4 mul 'branch': z = y * c
// Outputs m, e, z.
pb::Program chainProgram() {
  pb::Program p;
  pb::Function &f = addFunction(p, "forward", 320);
  addValue(f, pb::F16, {4}, 0);  // 0: x
  addValue(f, pb::F16, {4}, 64); // 1: y
  // 2: c
  addConstantValue(f, pb::F16, {4}, halves({1e4f, 1e4f, 1e4f, 1e4f}));
  addValue(f, pb::F16, {4}, 128); // 3: s
  addValue(f, pb::F16, {4}, 128); // 4: m
  addValue(f, pb::F16, {4}, 192); // 5: d
  addValue(f, pb::F16, {4}, 192); // 6: e
  addValue(f, pb::F16, {4}, 256); // 7: z
  bind(f.mutable_inputs(), "x", 0);
  bind(f.mutable_inputs(), "y", 1);
  addKernel(f, "add", "sum", {0, 1}, {3});
  addKernel(f, "mul", "scale", {3, 2}, {4});
  addKernel(f, "sub", "diff", {4, 4}, {5});
  addKernel(f, "mul", "again", {5, 2}, {6});
  addKernel(f, "mul", "branch", {1, 2}, {7});
  bind(f.mutable_outputs(), "m", 4);
  bind(f.mutable_outputs(), "e", 6);
  bind(f.mutable_outputs(), "z", 7);
  return p;
}

std::unique_ptr<Session> openSession(const pb::Program &p) {
  ProgramInfo info;
  Status s = loadProgram(p, info);
  EXPECT_TRUE(s.isOk()) << s.message();
  std::unique_ptr<Session> session;
  s = Session::create(info.functions[0], {}, session);
  EXPECT_TRUE(s.isOk()) << s.message();
  return session;
}

void runChain(Session &session, std::vector<float> x, std::vector<float> y) {
  std::string xb = halves(x), yb = halves(y);
  ASSERT_TRUE(session.setInput("x", {DType::F16, {4}, xb.data()}).isOk());
  ASSERT_TRUE(session.setInput("y", {DType::F16, {4}, yb.data()}).isOk());
  Status s = session.run();
  ASSERT_TRUE(s.isOk()) << s.message();
}

std::string outputBytes(const Session &session, const std::string &name) {
  TensorView v;
  EXPECT_TRUE(session.output(name, v).isOk());
  return std::string(static_cast<const char *>(v.data), v.byteSize());
}

float outputAt(const Session &session, const std::string &name, int i) {
  TensorView v;
  EXPECT_TRUE(session.output(name, v).isOk());
  return halfBitsToFloat(v.as<uint16_t>()[i]);
}

} // namespace

// s = [20, 2, 20, 1]; m = s * 1e4 overflows in two places. The kernel writes
// in place over s, so s must be read before it runs to be seen finite.
TEST(NonFiniteProbe, NamesTheKernelWhoseOutputOverflowed) {
  std::unique_ptr<Session> session = openSession(chainProgram());
  ASSERT_TRUE(session);
  session->setNonFiniteProbe(true);
  runChain(*session, {19, 1, 19, 0.5}, {1, 1, 1, 0.5});
  const std::optional<NonFiniteReport> &r = session->firstNonFinite();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->kernel, 1u);
  EXPECT_EQ(r->where, "kernel 1 (mul at 'scale')");
  EXPECT_EQ(r->output, 0u);
  EXPECT_EQ(r->elements, 4);
  EXPECT_EQ(r->infs, 2);
  EXPECT_EQ(r->nans, 0);
  EXPECT_FALSE(r->inputsNonFinite);
  EXPECT_EQ(r->message(),
            "kernel 1 (mul at 'scale') output 0: 2 of 4 elements are inf");
  // The NaN made from the infs went on through kernels 2 and 3; the report
  // still names where the trouble started.
  EXPECT_TRUE(std::isnan(outputAt(*session, "e", 0)));
  EXPECT_TRUE(std::isnan(outputAt(*session, "e", 2)));
}

// The NaN was in the input x: no kernel made it, so the first kernel that
// wrote it is named, as having been given it.
TEST(NonFiniteProbe, ANaNGivenAsInputIsReportedWhereItFirstLands) {
  std::unique_ptr<Session> session = openSession(chainProgram());
  ASSERT_TRUE(session);
  session->setNonFiniteProbe(true);
  runChain(*session, {kNaN, 1, 1, 1}, {1, 1, 1, 1});
  const std::optional<NonFiniteReport> &r = session->firstNonFinite();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->kernel, 0u);
  EXPECT_EQ(r->infs, 0);
  EXPECT_EQ(r->nans, 1);
  EXPECT_TRUE(r->inputsNonFinite);
  EXPECT_EQ(r->message(),
            "kernel 0 (add at 'sum') output 0: 1 of 4 elements are NaN; its "
            "inputs already held inf or NaN, which no kernel made: they came "
            "in with the function's inputs, parameters or constants");
}

// Kernel 1 both passes on x's NaN and overflows (inputs not all finite: not
// an origin); kernel 4 overflows from finite inputs: it is the origin.
TEST(NonFiniteProbe, AnOriginAfterAPropagationIsTheOneReported) {
  std::unique_ptr<Session> session = openSession(chainProgram());
  ASSERT_TRUE(session);
  session->setNonFiniteProbe(true);
  runChain(*session, {kNaN, 1, 1, 1}, {1, 1, 1, 10});
  const std::optional<NonFiniteReport> &r = session->firstNonFinite();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->message(),
            "kernel 4 (mul at 'branch') output 0: 1 of 4 elements are inf");
  EXPECT_FALSE(r->inputsNonFinite);
}

TEST(NonFiniteProbe, OffRecordsNothingAndOnChangesNoResult) {
  std::unique_ptr<Session> off = openSession(chainProgram());
  std::unique_ptr<Session> on = openSession(chainProgram());
  ASSERT_TRUE(off && on);
  on->setNonFiniteProbe(true);
  // Finite, overflowing, and NaN-carrying inputs.
  std::vector<std::vector<float>> xs = {
      {1, 2, 3, 4}, {19, 1, 19, 0.5}, {kNaN, 1, 1, 1}};
  std::vector<std::vector<float>> ys = {
      {0.5, 0.25, 1, 2}, {1, 1, 1, 0.5}, {1, 1, 1, 10}};
  for (size_t i = 0; i < xs.size(); ++i) {
    runChain(*off, xs[i], ys[i]);
    runChain(*on, xs[i], ys[i]);
    EXPECT_FALSE(off->firstNonFinite().has_value());
    EXPECT_EQ(on->firstNonFinite().has_value(), i != 0);
    for (const char *name : {"m", "e", "z"})
      EXPECT_EQ(outputBytes(*off, name), outputBytes(*on, name)) << name;
  }
  // A finite run after an overflowing one clears the report.
  runChain(*on, xs[0], ys[0]);
  EXPECT_FALSE(on->firstNonFinite().has_value());
}

// scores = gemm(x, w) = [[-60000, 60000]] is finite in f16, and so is the
// loss (label 1: log_prob 0), but log_prob[0] = -120000 is not: the probe
// names softmax_cross_entropy's second output.
TEST(NonFiniteProbe, NamesWhichOutputOfTheKernel) {
  pb::Program p;
  pb::Function &f = addFunction(p, "forward", 384);
  addValue(f, pb::F16, {1, 2}, 0);   // 0: x
  addValue(f, pb::F16, {2, 2}, 64);  // 1: w
  addValue(f, pb::I64, {1}, 128);    // 2: labels
  addValue(f, pb::F16, {1, 2}, 192); // 3: scores
  addValue(f, pb::F16, {}, 256);     // 4: loss
  addValue(f, pb::F16, {1, 2}, 320); // 5: log_prob
  bind(f.mutable_inputs(), "x", 0);
  bind(f.mutable_inputs(), "labels", 2);
  bind(f.mutable_params(), "w", 1)->set_init(halves({-60000, 60000, 0, 0}));
  setGemmAttrs(addKernel(f, "gemm", "fc", {0, 1, -1}, {3}));
  (*addKernel(f, "softmax_cross_entropy", "loss", {3, 2}, {4, 5})
        ->mutable_attrs())["reduction"]
      .set_s("mean");
  bind(f.mutable_outputs(), "loss", 4);
  bind(f.mutable_outputs(), "log_prob", 5);
  std::unique_ptr<Session> session = openSession(p);
  ASSERT_TRUE(session);
  session->setNonFiniteProbe(true);
  std::string xb = halves({1, 0});
  int64_t label = 1;
  ASSERT_TRUE(session->setInput("x", {DType::F16, {1, 2}, xb.data()}).isOk());
  ASSERT_TRUE(session->setInput("labels", {DType::I64, {1}, &label}).isOk());
  ASSERT_TRUE(session->run().isOk());
  ASSERT_TRUE(session->firstNonFinite().has_value());
  EXPECT_EQ(session->firstNonFinite()->message(),
            "kernel 1 (softmax_cross_entropy at 'loss') output 1: 1 of 2 "
            "elements are inf");
  EXPECT_EQ(outputAt(*session, "loss", 0), 0.0f);
}

TEST(NonFiniteProbe, MessageCountsInfAndNaNApart) {
  NonFiniteReport r;
  r.where = "kernel 37 (gemm at 'fc2')";
  r.elements = 4096;
  r.infs = 10;
  r.nans = 2;
  EXPECT_EQ(r.message(), "kernel 37 (gemm at 'fc2') output 0: 12 of 4096 "
                         "elements are inf or NaN (10 inf, 2 NaN)");
}
