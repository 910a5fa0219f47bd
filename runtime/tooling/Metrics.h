//===- Metrics.h - per-step metrics written as CSV or JSON ----------------===//
//
// A training run writes one row per step (step, loss, loss scale, ...). The
// format follows the file's extension:
// - `.csv`: a header row of the column names, then one line per row;
// - `.json`: an array of objects, one per row, keyed by column name:
//   [{"step": 0, "loss": 2.3}, ...].
// Numbers are written with the fewest digits that read back as the same
// double (so integral values such as the step have no decimal point). NaN
// and infinities are `nan`, `inf` and `-inf` in CSV (what NumPy and pandas
// read) and `null` in JSON, which has no literal for them.
//
// Rows go to PATH.tmp as they arrive, flushed each row so a long run can be
// watched, and close() renames PATH.tmp to PATH: an interrupted run never
// leaves a half-written file at PATH. A writer destroyed without close()
// leaves PATH.tmp in place and PATH untouched.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_TOOLING_METRICS_H
#define AMPC_RUNTIME_TOOLING_METRICS_H

#include "runtime/Status.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace ampc::tools {

class MetricsWriter {
public:
  // Fails on an extension other than .csv/.json (any case), on no or
  // duplicate column names, or when PATH.tmp cannot be created.
  static rt::Status open(const std::string &path,
                         std::vector<std::string> columns,
                         std::unique_ptr<MetricsWriter> &out);
  ~MetricsWriter();
  MetricsWriter(const MetricsWriter &) = delete;
  MetricsWriter &operator=(const MetricsWriter &) = delete;

  // Appends one row: one value per column, in column order. A write that
  // fails (a full disk) removes PATH.tmp, and every later call fails: PATH
  // keeps what it held.
  rt::Status row(const std::vector<double> &values);
  // Finishes the file and renames PATH.tmp to PATH. Rows after close() and
  // a second close() are errors.
  rt::Status close();

  const std::string &path() const { return path_; }

private:
  enum class Format { Csv, Json };
  MetricsWriter() = default;
  rt::Status put(const std::string &text);

  std::string path_, tmpPath_;
  Format format_ = Format::Csv;
  std::vector<std::string> columns_;
  std::FILE *file_ = nullptr;
  size_t rows_ = 0;
  bool closed_ = false;
};

// The shortest decimal form of `v` that reads back as the same double
// (exposed for tests).
std::string formatNumber(double v);

} // namespace ampc::tools

#endif // AMPC_RUNTIME_TOOLING_METRICS_H
