//===- CudaGraphTest.cpp - CUDA graph replay and its fallback -------------===//
//
// A session runs its first step kernel by kernel and replays a captured
// CUDA graph from the second on. Where the capture fails (here on purpose,
// AMPC_CUDA_GRAPH=test-fallback, by an illegal synchronize inside it), one
// warning says so and every step runs kernel by kernel with the same
// numbers; AMPC_CUDA_GRAPH=0 turns graphs off. Each step gets new inputs,
// so a replay that read stale ones would show.
//
//===----------------------------------------------------------------------===//
#include "../ProgramBuilder.h"
#include "CudaTestUtil.h"

namespace ampc::rt::cuda::test {
namespace {

namespace pb = ampc::rt::proto;
using rt::test::createSession;

// y = relu(x + [1, -10]) (fused, in place over x), z = y @ [[1, 2], [3, 4]].
pb::Program program() { return rt::test::reluGemmProgram(); }

// Runs `steps` steps, step i with x = [[1 + i, 20], [-3, 4]], checking z
// after each; returns what the session wrote to stderr.
std::string runSteps(const SessionOptions &options, int steps) {
  std::unique_ptr<Session> session;
  Status s = createSession(program(), options, session);
  EXPECT_TRUE(s) << s.message();
  if (!s)
    return "";
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < steps; ++i) {
    std::vector<float> x = {1.f + i, 20, -3, 4};
    s = session->setInput("x", TensorView{DType::F32, {2, 2}, x.data()});
    EXPECT_TRUE(s) << s.message();
    s = session->run();
    EXPECT_TRUE(s) << "step " << i << ": " << s.message();
    TensorView z;
    s = session->output("z", z);
    EXPECT_TRUE(s) << "step " << i << ": " << s.message();
    if (!s)
      break;
    // y = [[2 + i, 10], [0, 0]].
    const float *zf = z.as<float>();
    EXPECT_FLOAT_EQ(zf[0], 32 + i) << "step " << i;
    EXPECT_FLOAT_EQ(zf[1], 44 + 2 * i) << "step " << i;
    EXPECT_FLOAT_EQ(zf[2], 0) << "step " << i;
    EXPECT_FLOAT_EQ(zf[3], 0) << "step " << i;
  }
  return ::testing::internal::GetCapturedStderr();
}

size_t count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1))
    ++n;
  return n;
}

SessionOptions cudaOptions() {
  SessionOptions o;
  o.device = "cuda";
  return o;
}

TEST(CudaGraph, ReplayGivesTheNumbersOfEachStep) {
  AMPC_SKIP_WITHOUT_GPU();
  ScopedEnv env("AMPC_CUDA_GRAPH", std::nullopt);
  std::string err = runSteps(cudaOptions(), 4);
  EXPECT_EQ(err.find("warning"), std::string::npos) << err;
}

TEST(CudaGraph, FailedCaptureWarnsOnceAndRunsKernelByKernel) {
  AMPC_SKIP_WITHOUT_GPU();
  ScopedEnv env("AMPC_CUDA_GRAPH", "test-fallback");
  std::string err = runSteps(cudaOptions(), 4);
  EXPECT_EQ(count(err, "warning:"), 1u) << err;
  EXPECT_NE(err.find("warning: CUDA graph capture of function 'forward' "
                     "failed at cuStreamSynchronize (CUDA_ERROR_STREAM_"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("on purpose (AMPC_CUDA_GRAPH=test-fallback): running "
                     "the step kernel by kernel\n"),
            std::string::npos)
      << err;
}

TEST(CudaGraph, OffByEnvironmentOrOptions) {
  AMPC_SKIP_WITHOUT_GPU();
  {
    // Nothing is captured, so nothing can fail or warn.
    ScopedEnv env("AMPC_CUDA_GRAPH", "0");
    std::string err = runSteps(cudaOptions(), 3);
    EXPECT_EQ(err.find("warning"), std::string::npos) << err;
  }
  // With graphs off in the options the knob finds no capture to break.
  ScopedEnv env("AMPC_CUDA_GRAPH", "test-fallback");
  SessionOptions o = cudaOptions();
  o.cudaGraph = false;
  std::string err = runSteps(o, 3);
  EXPECT_EQ(err.find("warning"), std::string::npos) << err;
}

} // namespace
} // namespace ampc::rt::cuda::test
