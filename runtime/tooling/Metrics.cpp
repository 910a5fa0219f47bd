//===- Metrics.cpp - per-step metrics written as CSV or JSON --------------===//

#include "runtime/tooling/Metrics.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <set>
#include <unistd.h>

namespace ampc::tools {
namespace {

using rt::Status;

std::string lower(std::string s) {
  for (char &c : s)
    if (c >= 'A' && c <= 'Z')
      c = char(c - 'A' + 'a');
  return s;
}

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// RFC 4180: a field with a comma, quote or line break is quoted, and quotes
// inside it are doubled.
std::string csvField(const std::string &s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos)
    return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"')
      out += '"';
    out += c;
  }
  return out + "\"";
}

std::string jsonString(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string errnoText() { return std::strerror(errno); }

} // namespace

std::string formatNumber(double v) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  char buf[32];
  // Whole numbers (steps, counts) print as integers: %g would write 10 as
  // 1e+01.
  if (v == std::trunc(v) && std::fabs(v) < 9007199254740992.0) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v)
      break; // 17 significant digits always round-trip a double
  }
  return buf;
}

Status MetricsWriter::open(const std::string &path,
                           std::vector<std::string> columns,
                           std::unique_ptr<MetricsWriter> &out) {
  std::unique_ptr<MetricsWriter> w(new MetricsWriter());
  std::string ext = lower(path);
  if (endsWith(ext, ".csv"))
    w->format_ = Format::Csv;
  else if (endsWith(ext, ".json"))
    w->format_ = Format::Json;
  else
    return Status::error("metrics file " + path +
                         ": unknown format; the name must end in .csv or "
                         ".json");
  if (columns.empty())
    return Status::error("metrics file " + path + ": no columns given");
  std::set<std::string> seen;
  for (const std::string &c : columns)
    if (!seen.insert(c).second)
      return Status::error("metrics file " + path + ": column '" + c +
                           "' is given twice");
  w->path_ = path;
  w->tmpPath_ = path + ".tmp";
  w->columns_ = std::move(columns);
  w->file_ = std::fopen(w->tmpPath_.c_str(), "w");
  if (!w->file_)
    return Status::error("metrics file " + w->tmpPath_ +
                         ": cannot open for writing: " + errnoText());
  std::string head;
  if (w->format_ == Format::Csv) {
    for (size_t i = 0; i < w->columns_.size(); ++i)
      head += (i ? "," : "") + csvField(w->columns_[i]);
    head += "\n";
  } else {
    head = "[";
  }
  AMPC_RETURN_IF_ERROR(w->put(head));
  out = std::move(w);
  return Status::ok();
}

MetricsWriter::~MetricsWriter() {
  if (file_)
    std::fclose(file_);
}

Status MetricsWriter::put(const std::string &text) {
  if (!file_)
    return Status::error("metrics file " + tmpPath_ +
                         ": an earlier write failed");
  if (std::fputs(text.c_str(), file_) < 0 || std::fflush(file_) != 0) {
    std::string why = errnoText();
    // A file cut short is no record of the run; on a full disk it holds
    // space the rest of the run (its checkpoint) needs.
    std::fclose(file_);
    file_ = nullptr;
    std::remove(tmpPath_.c_str());
    return Status::error("metrics file " + tmpPath_ + ": write failed: " + why +
                         " (removed; " + path_ + " is as it was)");
  }
  return Status::ok();
}

Status MetricsWriter::row(const std::vector<double> &values) {
  if (closed_)
    return Status::error("metrics file " + path_ + ": row after close()");
  if (values.size() != columns_.size())
    return Status::error("metrics file " + path_ + ": a row of " +
                         std::to_string(values.size()) + " values for " +
                         std::to_string(columns_.size()) + " columns");
  std::string line;
  if (format_ == Format::Csv) {
    for (size_t i = 0; i < values.size(); ++i)
      line += (i ? "," : "") + formatNumber(values[i]);
    line += "\n";
  } else {
    line = rows_ ? ",\n{" : "\n{";
    for (size_t i = 0; i < values.size(); ++i)
      line += (i ? ", " : "") + jsonString(columns_[i]) + ": " +
              (std::isfinite(values[i]) ? formatNumber(values[i]) : "null");
    line += "}";
  }
  AMPC_RETURN_IF_ERROR(put(line));
  ++rows_;
  return Status::ok();
}

Status MetricsWriter::close() {
  if (closed_)
    return Status::error("metrics file " + path_ + ": closed twice");
  closed_ = true;
  if (format_ == Format::Json)
    AMPC_RETURN_IF_ERROR(put(rows_ ? "\n]\n" : "]\n"));
  if (!file_) // a write failed (put removed the file)
    return Status::error("metrics file " + tmpPath_ +
                         ": an earlier write failed");
  // The rename must not outrun the data.
  bool ok = ::fsync(fileno(file_)) == 0;
  std::string why = ok ? "" : errnoText();
  if (std::fclose(file_) != 0 && ok) {
    ok = false;
    why = errnoText();
  }
  file_ = nullptr;
  if (!ok) {
    std::remove(tmpPath_.c_str()); // as a failed row's write
    return Status::error("metrics file " + tmpPath_ + ": write failed: " + why +
                         " (removed; " + path_ + " is as it was)");
  }
  if (std::rename(tmpPath_.c_str(), path_.c_str()) != 0)
    return Status::error("metrics file " + path_ + ": cannot rename " +
                         tmpPath_ + " to it: " + errnoText());
  return Status::ok();
}

} // namespace ampc::tools
