//===- MetricsTest.cpp - CSV and JSON metrics files -----------------------===//
//
// Exact file contents for both formats (so integers, round-tripping floats,
// non-finite values and quoting are pinned), the .tmp-then-rename protocol,
// and the errors.
//
//===----------------------------------------------------------------------===//
#include "runtime/tooling/Metrics.h"

#include "TestFiles.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>

using ampc::rt::test::slurp;
using ampc::tools::formatNumber;
using ampc::tools::MetricsWriter;

namespace {

class Metrics : public ampc::rt::test::ScratchDirTest {
protected:
  Metrics() : ScratchDirTest("metrics") {}
};

bool exists(const std::string &path) { return std::filesystem::exists(path); }

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

TEST(MetricsFormat, ShortestRoundTrip) {
  EXPECT_EQ(formatNumber(0), "0");
  EXPECT_EQ(formatNumber(17), "17");
  // Not %g: 10 would be 1e+01.
  EXPECT_EQ(formatNumber(10), "10");
  EXPECT_EQ(formatNumber(100), "100");
  EXPECT_EQ(formatNumber(1e6), "1000000");
  EXPECT_EQ(formatNumber(-3), "-3");
  EXPECT_EQ(formatNumber(65536), "65536");
  EXPECT_EQ(formatNumber(123456789012), "123456789012");
  EXPECT_EQ(formatNumber(0.1), "0.1");
  EXPECT_EQ(formatNumber(0.5), "0.5");
  EXPECT_EQ(formatNumber(1e-30), "1e-30");
  EXPECT_EQ(formatNumber(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(formatNumber(kNaN), "nan");
  EXPECT_EQ(formatNumber(kInf), "inf");
  EXPECT_EQ(formatNumber(-kInf), "-inf");
  // A float loss widened to double reads back bit-exactly.
  for (float f : {2.3025851f, 1e-7f, 0.6931472f, 3.4028235e38f}) {
    std::string s = formatNumber(double(f));
    EXPECT_EQ(std::strtod(s.c_str(), nullptr), double(f)) << s;
    EXPECT_EQ(std::strtof(s.c_str(), nullptr), f) << s;
  }
  for (double d : {3.141592653589793, -1.0 / 7, 6.02214076e23, 4.9e-324,
                   1.7976931348623157e308}) {
    std::string s = formatNumber(d);
    EXPECT_EQ(std::strtod(s.c_str(), nullptr), d) << s;
  }
}

TEST_F(Metrics, Csv) {
  std::string path = dir + "/m.csv";
  std::unique_ptr<MetricsWriter> w;
  ASSERT_TRUE(
      MetricsWriter::open(path, {"step", "loss", "a,b", "say \"hi\""}, w)
          .isOk());
  ASSERT_TRUE(w->row({0, 2.5, 65536, kNaN}).isOk());
  // Rows are in the .tmp as soon as row() returns; nothing at PATH yet.
  EXPECT_FALSE(exists(path));
  EXPECT_EQ(slurp(path + ".tmp"), "step,loss,\"a,b\",\"say \"\"hi\"\"\"\n"
                                  "0,2.5,65536,nan\n");
  ASSERT_TRUE(w->row({1, 0.1, kInf, -kInf}).isOk());
  ASSERT_TRUE(w->close().isOk());
  EXPECT_FALSE(exists(path + ".tmp"));
  EXPECT_EQ(slurp(path), "step,loss,\"a,b\",\"say \"\"hi\"\"\"\n"
                         "0,2.5,65536,nan\n"
                         "1,0.1,inf,-inf\n");
}

TEST_F(Metrics, Json) {
  std::string path = dir + "/m.JSON"; // the extension's case does not matter
  std::unique_ptr<MetricsWriter> w;
  ASSERT_TRUE(MetricsWriter::open(path, {"step", "loss", "q\"\\\n"}, w).isOk());
  ASSERT_TRUE(w->row({0, 2.5, kNaN}).isOk());
  EXPECT_EQ(slurp(path + ".tmp"), "[\n{\"step\": 0, \"loss\": 2.5, "
                                  "\"q\\\"\\\\\\u000a\": null}");
  ASSERT_TRUE(w->row({1, 1.0 / 3, -kInf}).isOk());
  ASSERT_TRUE(w->row({2, -0.25, 7}).isOk());
  ASSERT_TRUE(w->close().isOk());
  EXPECT_FALSE(exists(path + ".tmp"));
  EXPECT_EQ(slurp(path),
            "[\n"
            "{\"step\": 0, \"loss\": 2.5, \"q\\\"\\\\\\u000a\": null},\n"
            "{\"step\": 1, \"loss\": 0.3333333333333333, "
            "\"q\\\"\\\\\\u000a\": null},\n"
            "{\"step\": 2, \"loss\": -0.25, \"q\\\"\\\\\\u000a\": 7}\n"
            "]\n");
}

TEST_F(Metrics, JsonWithNoRowsIsAnEmptyArray) {
  std::string path = dir + "/m.json";
  std::unique_ptr<MetricsWriter> w;
  ASSERT_TRUE(MetricsWriter::open(path, {"step"}, w).isOk());
  ASSERT_TRUE(w->close().isOk());
  EXPECT_EQ(slurp(path), "[]\n");
}

TEST_F(Metrics, InterruptedRunLeavesOnlyTheTmp) {
  std::string path = dir + "/m.csv";
  {
    std::ofstream old(path);
    old << "previous run\n";
  }
  {
    std::unique_ptr<MetricsWriter> w;
    ASSERT_TRUE(MetricsWriter::open(path, {"step", "loss"}, w).isOk());
    ASSERT_TRUE(w->row({0, 1}).isOk());
  } // destroyed without close()
  EXPECT_EQ(slurp(path), "previous run\n");
  EXPECT_EQ(slurp(path + ".tmp"), "step,loss\n0,1\n");
}

// /dev/full takes the file's creation but fails every write: the cut file
// is removed, PATH is left as it was, and later calls fail too.
TEST_F(Metrics, AFailedWriteRemovesTheTmp) {
  std::string path = dir + "/full.csv";
  {
    std::ofstream old(path);
    old << "previous run\n";
  }
  std::filesystem::create_symlink("/dev/full", path + ".tmp");
  std::unique_ptr<MetricsWriter> w;
  ampc::rt::Status s = MetricsWriter::open(path, {"step"}, w);
  ASSERT_FALSE(s);
  EXPECT_NE(
      s.message().find("write failed: No space left on device (removed; " +
                       path + " is as it was)"),
      std::string::npos)
      << s.message();
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  EXPECT_TRUE(std::filesystem::exists("/dev/full"));
  EXPECT_EQ(slurp(path), "previous run\n");
}

TEST_F(Metrics, Errors) {
  std::unique_ptr<MetricsWriter> w;
  {
    ampc::rt::Status s = MetricsWriter::open(dir + "/m.txt", {"step"}, w);
    EXPECT_FALSE(s.isOk());
    EXPECT_NE(s.message().find(dir + "/m.txt"), std::string::npos);
    EXPECT_NE(s.message().find(".csv or .json"), std::string::npos);
    EXPECT_FALSE(exists(dir + "/m.txt.tmp"));
  }
  ampc::rt::Status s = MetricsWriter::open(dir + "/m.csv", {}, w);
  EXPECT_NE(s.message().find("no columns"), std::string::npos);
  s = MetricsWriter::open(dir + "/m.csv", {"a", "b", "a"}, w);
  EXPECT_NE(s.message().find("column 'a' is given twice"), std::string::npos);
  s = MetricsWriter::open(dir + "/no/such/dir/m.csv", {"a"}, w);
  EXPECT_NE(s.message().find("m.csv.tmp: cannot open for writing"),
            std::string::npos)
      << s.message();

  ASSERT_TRUE(MetricsWriter::open(dir + "/m.csv", {"step", "loss"}, w).isOk());
  s = w->row({1});
  EXPECT_NE(s.message().find("a row of 1 values for 2 columns"),
            std::string::npos)
      << s.message();
  s = w->row({1, 2, 3});
  EXPECT_FALSE(s.isOk());
  ASSERT_TRUE(w->close().isOk());
  EXPECT_EQ(slurp(dir + "/m.csv"), "step,loss\n"); // bad rows wrote nothing
  EXPECT_NE(w->row({1, 2}).message().find("row after close()"),
            std::string::npos);
  EXPECT_NE(w->close().message().find("closed twice"), std::string::npos);
}

} // namespace
