//===- RunFlagsTest.cpp - the run-time flag table
//---------------------------===//
//
// The table both amp-run and amp-exec parse with: names are unique, every
// flag says what it does and prints a default, values are checked with one
// message per kind, and the options a host loop takes come from the fields.
//
//===----------------------------------------------------------------------===//

#include "runtime/tooling/RunFlags.h"

#include <gtest/gtest.h>

#include <set>

namespace ampc::tools {
namespace {

TEST(RunFlags, NamesAreUniqueAndEveryFlagIsDocumented) {
  std::set<std::string> names;
  for (const RunFlag &f : runFlags()) {
    EXPECT_TRUE(names.insert(f.name).second) << f.name;
    EXPECT_GT(std::string(f.help).size(), 10u) << f.name;
    EXPECT_FALSE(runFlagDefault(f).empty()) << f.name;
    EXPECT_NE(f.tools & kBothTools, 0u) << f.name;
    // A choice's default is one of its choices, unless it is said in words.
    if (!f.choices.empty() && !f.defaultText) {
      EXPECT_NE(
          std::find(f.choices.begin(), f.choices.end(), runFlagDefault(f)),
          f.choices.end())
          << f.name;
    }
  }
}

TEST(RunFlags, HelpListsEachToolsFlagsWithTheirDefaults) {
  std::string exec = runFlagsHelp(kAmpExec);
  for (const RunFlag &f : runFlags()) {
    bool listed = exec.find("  --" + std::string(f.name) +
                            (f.value ? " " : "\n")) != std::string::npos;
    EXPECT_EQ(listed, (f.tools & kAmpExec) != 0) << f.name;
  }
  EXPECT_NE(exec.find("(default: 100)"), std::string::npos); // overflow steps
  EXPECT_EQ(runFlagsHelp(kAmpRun).find("--init-params"), std::string::npos);
}

rt::Status set(const std::string &name, const std::string &value,
               RunOptions &o) {
  const RunFlag *f = findRunFlag(name, kBothTools);
  EXPECT_NE(f, nullptr) << name;
  return f ? setRunFlag(*f, value, o) : rt::Status::error("no flag");
}

std::string error(const std::string &name, const std::string &value) {
  RunOptions o;
  rt::Status s = set(name, value, o);
  EXPECT_FALSE(s) << name << "=" << value;
  return s.message();
}

TEST(RunFlags, ValuesAreCheckedWithOneMessagePerKind) {
  EXPECT_EQ(error("steps", "0"), "--steps must be >= 1, got 0");
  EXPECT_EQ(error("steps", "3x"), "--steps '3x' is not an integer");
  EXPECT_EQ(error("steps", ""), "--steps '' is not an integer");
  EXPECT_EQ(error("steps", "99999999999999999999"),
            "--steps '99999999999999999999' is not an integer");
  EXPECT_EQ(error("max-overflow-steps", "-1"),
            "--max-overflow-steps must be >= 0, got -1");
  EXPECT_EQ(error("seed", "-1"), "--seed '-1' is not an integer >= 0");
  EXPECT_EQ(error("threads", "5000000000"),
            "--threads '5000000000' is not a count this machine has");
  EXPECT_EQ(error("progress", "fancy"),
            "--progress 'fancy' is not auto, bar, lines or none");
  EXPECT_EQ(error("mode", "fit"), "--mode 'fit' is not infer or train");
  EXPECT_EQ(error("cuda-graph", "maybe"),
            "--cuda-graph 'maybe' is not on or off");
  EXPECT_EQ(error("cuda-graph", ""), "--cuda-graph '' is not on or off");
  EXPECT_EQ(error("shuffle", "maybe"),
            "--shuffle 'maybe' is not true or false");
  EXPECT_EQ(error("check-numerics", "2"),
            "--check-numerics '2' is not true or false");
  EXPECT_EQ(error("init-params", "uniform:-3"),
            "--init-params 'uniform:-3' is not keep, uniform or uniform:SEED");
  EXPECT_EQ(error("init-params", "normal"),
            "--init-params 'normal' is not keep, uniform or uniform:SEED");
  EXPECT_NE(error("memory-budget", "0").find("--memory-budget '0'"),
            std::string::npos);
}

TEST(RunFlags, SwitchesAndValuesSetTheirFields) {
  RunOptions o;
  ASSERT_TRUE(set("check-numerics", "", o));
  EXPECT_TRUE(o.checkNumerics);
  ASSERT_TRUE(set("shuffle", "", o));
  EXPECT_EQ(o.shuffle, std::optional<bool>(true));
  ASSERT_TRUE(set("shuffle", "false", o));
  EXPECT_EQ(o.shuffle, std::optional<bool>(false));
  ASSERT_TRUE(set("cuda-graph", "off", o));
  EXPECT_FALSE(o.cudaGraph);
  ASSERT_TRUE(set("seed", "18446744073709551615", o));
  EXPECT_EQ(o.seed, UINT64_MAX);
  ASSERT_TRUE(set("init-params", "uniform:7", o));
  ASSERT_TRUE(set("memory-budget", "1.5GiB", o));
  EXPECT_EQ(memoryBudgetBytes(o.memoryBudget), 1536ull << 20);
  EXPECT_EQ(memoryBudgetBytes("none"), 0u);
  EXPECT_TRUE(o.isGiven("seed"));
  EXPECT_FALSE(o.isGiven("steps"));
  // A refused value leaves the field and the given set alone.
  EXPECT_FALSE(set("steps", "0", o));
  EXPECT_EQ(o.steps, 0);
  EXPECT_FALSE(o.isGiven("steps"));
}

TEST(RunFlags, SwitchesTakeTheWordsLlvmClTakes) {
  for (const char *on : {"on", "true", "TRUE", "True", "1"}) {
    RunOptions o;
    ASSERT_TRUE(set("check-numerics", on, o)) << on;
    EXPECT_TRUE(o.checkNumerics) << on;
  }
  for (const char *off : {"off", "false", "FALSE", "False", "0"}) {
    RunOptions o;
    o.cudaGraph = true;
    ASSERT_TRUE(set("cuda-graph", off, o)) << off;
    EXPECT_FALSE(o.cudaGraph) << off;
    ASSERT_TRUE(set("shuffle", off, o)) << off;
    EXPECT_EQ(o.shuffle, std::optional<bool>(false)) << off;
  }
  bool v;
  EXPECT_FALSE(parseSwitchWord("yes", v));
  EXPECT_FALSE(parseSwitchWord("", v));
}

TEST(RunFlags, InitParamsGiveTheSeedOnce) {
  bool uniform;
  uint64_t seed;
  ASSERT_TRUE(parseInitParams("keep", uniform, seed));
  EXPECT_FALSE(uniform);
  ASSERT_TRUE(parseInitParams("uniform", uniform, seed));
  EXPECT_TRUE(uniform);
  EXPECT_EQ(seed, 0u);
  ASSERT_TRUE(parseInitParams("uniform:42", uniform, seed));
  EXPECT_EQ(seed, 42u);
  EXPECT_FALSE(parseInitParams("uniform:", uniform, seed));
  EXPECT_FALSE(parseInitParams("uniform:4x", uniform, seed));
}

TEST(RunFlags, BothToolsCheckTheFlagsTogetherAlike) {
  auto error = [](std::vector<std::pair<const char *, const char *>> flags,
                  bool train) {
    RunOptions o;
    o.data = "synthetic";
    for (auto [name, value] : flags)
      EXPECT_TRUE(set(name, value, o)) << name;
    rt::Status s = checkRunOptions(o, train);
    return s ? std::string() : s.message();
  };
  EXPECT_EQ(error({{"steps", "3"}, {"epochs", "2"}}, true),
            "--steps 3 and --epochs 2 both give the length of the run: give "
            "one");
  EXPECT_EQ(error({{"checkpoint-every", "5"}}, true),
            "--checkpoint-every needs --checkpoint DIR");
  EXPECT_EQ(error({{"data", "dir"}, {"synthetic-batches", "2"}}, true),
            "--synthetic-batches is for --data synthetic, not --data dir");
  EXPECT_NE(error({{"epochs", "2"}}, true)
                .find("--epochs needs data with "
                      "samples"),
            std::string::npos);
  EXPECT_NE(error({{"test-data", "t"}}, true)
                .find("--test-data is evaluated "
                      "only with file data"),
            std::string::npos);
  // Inference has no epochs to refuse here (each tool refuses its own
  // training-only flags first).
  EXPECT_EQ(error({{"epochs", "2"}}, false), "");
  EXPECT_EQ(
      error({{"steps", "3"}, {"checkpoint", "ck"}, {"checkpoint-every", "1"}},
            true),
      "");
}

TEST(RunFlags, TheLoopAndSessionOptionsComeFromTheFields) {
  RunOptions o;
  for (auto [name, value] :
       {std::pair<const char *, const char *>{"max-overflow-steps", "7"},
        {"checkpoint-every", "5"},
        {"checkpoint", "ck"},
        {"metrics", "m.csv"},
        {"eval-metrics", "e.json"},
        {"progress", "lines"},
        {"check-numerics", "on"},
        {"checksum-state", "true"},
        {"device", "cuda:1"},
        {"threads", "3"},
        {"cuda-graph", "off"}})
    ASSERT_TRUE(set(name, value, o)) << name;
  LoopOptions lo = loopOptionsOf(o);
  EXPECT_EQ(lo.maxOverflowSteps, 7);
  EXPECT_EQ(lo.checkpointEvery, 5);
  EXPECT_EQ(lo.checkpointDir, "ck");
  EXPECT_EQ(lo.metrics, "m.csv");
  EXPECT_EQ(lo.evalMetrics, "e.json");
  EXPECT_EQ(lo.progress, Progress::Style::Lines);
  EXPECT_TRUE(lo.checkNumerics);
  EXPECT_TRUE(lo.checksumState);
  rt::SessionOptions so = sessionOptionsOf(o);
  EXPECT_EQ(so.device, "cuda:1");
  EXPECT_EQ(so.threads, 3u);
  EXPECT_FALSE(so.cudaGraph);

  RunOptions d;
  d.data = "synthetic";
  d.seed = 9;
  std::map<std::string, std::string> c = dataOrderConfig(d, false);
  EXPECT_EQ(c.at("--seed"), "9");
  EXPECT_EQ(c.at("--shuffle"), "false");
  EXPECT_EQ(c.at("--synthetic-batches"), "4");
  d.data = "dir";
  EXPECT_EQ(dataOrderConfig(d, true).count("--synthetic-batches"), 0u);
}

} // namespace
} // namespace ampc::tools
