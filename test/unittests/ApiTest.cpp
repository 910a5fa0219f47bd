//===- ApiTest.cpp - tools/amp-run/Api.h, without Python ------------------===//
//
// The calls the Python module wraps, run here so that the sanitizer job
// (which builds no Python module) covers them: a step, a checkpoint
// written and loaded, state round-tripped, and refusals that change
// nothing. test/python/test_api.py compares them with amp-run.
//
//===----------------------------------------------------------------------===//

#include "tools/amp-run/Api.h"

#include "runtime/TypedIO.h"

#include "gtest/gtest.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace ampc::api {
namespace {

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

CompileRequest
mlpRequest(std::vector<std::pair<std::string, std::string>> options) {
  CompileRequest r;
  r.modelPath = AMPC_EXAMPLES "/mlp.onnx";
  r.modelBytes = readFile(r.modelPath);
  r.options = std::move(options);
  return r;
}

std::vector<Feed> feedsOf(std::vector<rt::HostTensor> &batch) {
  std::vector<Feed> feeds;
  for (rt::HostTensor &t : batch)
    feeds.emplace_back(t.name, t.view());
  return feeds;
}

class ApiTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ampc-api-test-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(ApiTest, CheckpointContinuesTheRunBitForBit) {
  std::vector<std::pair<std::string, std::string>> options = {
      {"amp", "O2"}, {"data", "synthetic"}, {"steps", "6"}, {"seed", "3"}};
  std::unique_ptr<Training> whole, part, resumed;
  ASSERT_TRUE(Training::compile(mlpRequest(options), whole).isOk());
  ASSERT_TRUE(Training::compile(mlpRequest(options), part).isOk());
  ASSERT_TRUE(Training::compile(mlpRequest(options), resumed).isOk());
  EXPECT_EQ(whole->runLabel(), "AMP O2 f16");
  EXPECT_FALSE(whole->ampReport().empty());

  std::vector<double> losses;
  for (int64_t s = 0; s < 6; ++s) {
    std::vector<rt::HostTensor> batch;
    ASSERT_TRUE(whole->batch(s, batch).isOk());
    StepResult r;
    rt::Status st = whole->step(feedsOf(batch), r);
    ASSERT_TRUE(st.isOk()) << st.message();
    EXPECT_EQ(r.step, s);
    losses.push_back(r.loss);
    if (s < 3) {
      ASSERT_TRUE(part->step(feedsOf(batch), r).isOk());
      EXPECT_EQ(r.loss, losses.back());
    }
  }
  ASSERT_TRUE(part->saveCheckpoint(dir_.string()).isOk());
  rt::Status st = resumed->loadCheckpoint(dir_.string());
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_EQ(resumed->stepsDone(), 3);
  for (int64_t s = 3; s < 6; ++s) {
    std::vector<rt::HostTensor> batch;
    ASSERT_TRUE(resumed->batch(s, batch).isOk());
    StepResult r;
    ASSERT_TRUE(resumed->step(feedsOf(batch), r).isOk());
    EXPECT_EQ(r.loss, losses[s]) << "step " << s;
  }
}

TEST_F(ApiTest, StateRoundTripsAndABadStateChangesNothing) {
  std::unique_ptr<Training> a, b;
  std::vector<std::pair<std::string, std::string>> options = {
      {"amp", "O2"},
      {"amp-dtype", "bf16"},
      {"data", "synthetic"},
      {"steps", "4"}};
  ASSERT_TRUE(Training::compile(mlpRequest(options), a).isOk());
  ASSERT_TRUE(Training::compile(mlpRequest(options), b).isOk());
  std::vector<rt::HostTensor> batch;
  ASSERT_TRUE(a->batch(0, batch).isOk());
  StepResult r;
  ASSERT_TRUE(a->step(feedsOf(batch), r).isOk());

  std::vector<rt::HostTensor> state, before, after;
  ASSERT_TRUE(a->state(state).isOk());
  ASSERT_TRUE(b->state(before).isOk());
  std::vector<rt::HostTensor> bad = state;
  bad.back().shape.push_back(1);
  rt::Status st = b->loadState(bad);
  EXPECT_FALSE(st.isOk());
  ASSERT_TRUE(b->state(after).isOk());
  for (size_t i = 0; i < before.size(); ++i)
    EXPECT_EQ(before[i].bytes, after[i].bytes) << before[i].name;

  ASSERT_TRUE(b->loadState(state).isOk());
  ASSERT_TRUE(b->state(after).isOk());
  for (size_t i = 0; i < state.size(); ++i)
    EXPECT_EQ(state[i].bytes, after[i].bytes) << state[i].name;
  StepResult ra, rb;
  ASSERT_TRUE(a->batch(1, batch).isOk());
  ASSERT_TRUE(a->step(feedsOf(batch), ra).isOk());
  ASSERT_TRUE(b->step(feedsOf(batch), rb).isOk());
  EXPECT_EQ(ra.loss, rb.loss);
}

TEST_F(ApiTest, RefusalsNameTheOptionOrInput) {
  std::unique_ptr<Training> t;
  rt::Status st = Training::compile(mlpRequest({{"lrr", "0.1"}}), t);
  EXPECT_EQ(st.message(),
            "no option named 'lrr' (did you mean --lr?) (the options are "
            "amp-run's flags; `amp-run --help` lists them)");
  st = Training::compile(mlpRequest({{"amp", "O9"}}), t);
  EXPECT_EQ(st.message(), "for the --amp option: 'O9' is not O0, O1, O2 or O3");
  ASSERT_TRUE(
      Training::compile(mlpRequest({{"steps", "2"}, {"data", "synthetic"}}), t)
          .isOk());
  std::vector<rt::HostTensor> batch;
  ASSERT_TRUE(t->batch(0, batch).isOk());
  batch[0].shape[0] = 32;
  batch[0].bytes.resize(batch[0].bytes.size() / 2);
  StepResult r;
  st = t->step(feedsOf(batch), r);
  EXPECT_EQ(st.message(), "input 'image' holds tensor<32x1x28x28xf32>, but "
                          "the model's input 'image' is "
                          "tensor<64x1x28x28xf32>");
  EXPECT_EQ(t->stepsDone(), 0);

  std::unique_ptr<Inference> inference;
  st = Inference::compile(mlpRequest({{"lr", "0.1"}}), inference);
  EXPECT_EQ(st.message(), "--lr is for --mode train");
}

} // namespace
} // namespace ampc::api
