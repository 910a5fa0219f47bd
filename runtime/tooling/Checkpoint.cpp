//===- Checkpoint.cpp - the checkpoint file, written and read back --------===//
//
// The encoder checks a checkpoint against the same rules the decoder does,
// so nothing is written that could not be read back. The decoder checks the
// header, the length and the checksum before it looks at the payload, and
// every count in the payload against the bytes left before it allocates.
//
//===----------------------------------------------------------------------===//
#include "runtime/tooling/Checkpoint.h"

#include "runtime/tooling/Format.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>

namespace ampc::tools {
namespace {

using rt::DType;
using rt::HostTensor;
using rt::Status;

constexpr char kMagic[8] = {'A', 'M', 'P', 'C', 'C', 'K', 'P', 'T'};
constexpr size_t kHeaderBytes = 24; // magic, version, length, header CRC
constexpr size_t kMinBytes = kHeaderBytes + 4;

// The file's dtype codes, fixed by the format whatever the order of
// rt::DType; 0 is no dtype.
uint8_t codeOf(DType t) {
  switch (t) {
  case DType::F32:
    return 1;
  case DType::F16:
    return 2;
  case DType::BF16:
    return 3;
  case DType::F64:
    return 4;
  case DType::I64:
    return 5;
  case DType::I32:
    return 6;
  case DType::I1:
    return 7;
  }
  return 0;
}

bool dtypeOfCode(uint8_t code, DType &out) {
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I64,
                  DType::I32, DType::I1})
    if (codeOf(t) == code) {
      out = t;
      return true;
    }
  return false;
}

uint32_t get32(const uint8_t *p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 |
         uint32_t(p[3]) << 24;
}
uint64_t get64(const uint8_t *p) {
  return uint64_t(get32(p)) | uint64_t(get32(p + 4)) << 32;
}
void put32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    p[i] = uint8_t(v >> (8 * i));
}
void put64(uint8_t *p, uint64_t v) {
  put32(p, uint32_t(v));
  put32(p + 4, uint32_t(v >> 32));
}

// The bytes a tensor of this dtype and shape holds; false for a negative
// dimension or a size past int64.
bool bytesFor(DType dtype, const rt::Shape &shape, uint64_t &out) {
  uint64_t n = rt::sizeOf(dtype);
  for (int64_t d : shape) {
    if (d < 0)
      return false;
    if (d != 0 && n > uint64_t(std::numeric_limits<int64_t>::max()) / d)
      return false;
    n *= uint64_t(d);
  }
  out = n;
  return true;
}

std::string describe(size_t i, const std::string &name) {
  return "tensor " + std::to_string(i) + " ('" + name + "')";
}

Status checkTable(const std::vector<std::string> &columns,
                  const std::vector<std::vector<double>> &rows,
                  const std::string &what) {
  std::set<std::string> seen;
  for (const std::string &c : columns)
    if (!seen.insert(c).second)
      return Status::error(what + " column '" + c + "' appears twice");
  for (size_t r = 0; r < rows.size(); ++r)
    if (rows[r].size() != columns.size())
      return Status::error(what + " row " + std::to_string(r) + " has " +
                           std::to_string(rows[r].size()) + " values for " +
                           std::to_string(columns.size()) + " columns");
  return Status::ok();
}

// The rules every checkpoint keeps, written or read.
Status validate(const Checkpoint &c) {
  if (c.step < 0)
    return Status::error("negative step " + std::to_string(c.step));
  if (c.config.count(""))
    return Status::error("a config key is empty");
  std::set<std::string> names;
  for (size_t i = 0; i < c.params.size(); ++i) {
    const HostTensor &t = c.params[i];
    if (t.name.empty())
      return Status::error(describe(i, t.name) + " has no name");
    if (!names.insert(t.name).second)
      return Status::error(describe(i, t.name) + ": the name appears twice");
    if (codeOf(t.dtype) == 0)
      return Status::error(describe(i, t.name) + ": unknown dtype " +
                           std::to_string(int(t.dtype)));
    uint64_t need = 0;
    if (!bytesFor(t.dtype, t.shape, need))
      return Status::error(describe(i, t.name) + ": shape " + rt::str(t.shape) +
                           " has a negative or too large dimension");
    if (need != t.bytes.size())
      return Status::error(describe(i, t.name) + ": shape " + rt::str(t.shape) +
                           " of " + std::string(rt::name(t.dtype)) + " needs " +
                           std::to_string(need) + " bytes, it holds " +
                           std::to_string(t.bytes.size()));
    if (t.dtype == DType::I1)
      for (size_t k = 0; k < t.bytes.size(); ++k)
        if (t.bytes[k] > 1)
          return Status::error(describe(i, t.name) + ": i1 element " +
                               std::to_string(k) + " holds byte " +
                               std::to_string(t.bytes[k]) + ", not 0 or 1");
  }
  AMPC_RETURN_IF_ERROR(checkTable(c.stepColumns, c.stepRows, "step history"));
  return checkTable(c.evalColumns, c.evalRows, "eval history");
}

//===----------------------------------------------------------------------===//
// Encoding
//===----------------------------------------------------------------------===//

struct Writer {
  std::vector<uint8_t> &b;
  void raw(const void *p, size_t n) {
    auto *c = static_cast<const uint8_t *>(p);
    b.insert(b.end(), c, c + n);
  }
  void u8(uint8_t v) { b.push_back(v); }
  void u32(uint32_t v) {
    uint8_t buf[4];
    put32(buf, v);
    raw(buf, 4);
  }
  void u64(uint64_t v) {
    uint8_t buf[8];
    put64(buf, v);
    raw(buf, 8);
  }
  void f64(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    u64(bits);
  }
  void str(const std::string &s) {
    u64(s.size());
    raw(s.data(), s.size());
  }
  void table(const std::vector<std::string> &columns,
             const std::vector<std::vector<double>> &rows) {
    u64(columns.size());
    for (const std::string &c : columns)
      str(c);
    u64(rows.size());
    for (const std::vector<double> &row : rows)
      for (double v : row)
        f64(v);
  }
};

// The exact encoded size, so the buffer is allocated once: parameters can
// be most of the machine's memory.
size_t encodedSize(const Checkpoint &c) {
  size_t n = kMinBytes + 8 + 8 + 8 + 2 * 16;
  for (const auto &[k, v] : c.config)
    n += 16 + k.size() + v.size();
  for (const HostTensor &t : c.params)
    n += 8 + t.name.size() + 1 + 8 + 8 * t.shape.size() + 8 + t.bytes.size();
  for (const std::string &s : c.stepColumns)
    n += 8 + s.size();
  for (const std::string &s : c.evalColumns)
    n += 8 + s.size();
  n += 8 * (c.stepRows.size() * c.stepColumns.size() +
            c.evalRows.size() * c.evalColumns.size());
  return n;
}

//===----------------------------------------------------------------------===//
// Decoding
//===----------------------------------------------------------------------===//

// Reads the payload; messages give offsets from the start of the file.
class Reader {
public:
  Reader(const uint8_t *p, size_t n, size_t base)
      : p_(p), end_(p + n), begin_(p), base_(base) {}
  size_t left() const { return size_t(end_ - p_); }
  size_t offset() const { return base_ + size_t(p_ - begin_); }

  Status take(size_t n, const std::string &what, const uint8_t *&at) {
    if (n > left())
      return Status::error("the payload ends inside " + what + " at offset " +
                           std::to_string(offset()));
    at = p_;
    p_ += n;
    return Status::ok();
  }
  Status u8(uint8_t &v, const std::string &what) {
    const uint8_t *at = nullptr;
    AMPC_RETURN_IF_ERROR(take(1, what, at));
    v = *at;
    return Status::ok();
  }
  Status u64(uint64_t &v, const std::string &what) {
    const uint8_t *at = nullptr;
    AMPC_RETURN_IF_ERROR(take(8, what, at));
    v = get64(at);
    return Status::ok();
  }
  Status i64(int64_t &v, const std::string &what) {
    uint64_t u = 0;
    AMPC_RETURN_IF_ERROR(u64(u, what));
    v = int64_t(u);
    return Status::ok();
  }
  Status f64(double &v, const std::string &what) {
    uint64_t u = 0;
    AMPC_RETURN_IF_ERROR(u64(u, what));
    std::memcpy(&v, &u, 8);
    return Status::ok();
  }
  // A count of items each at least `minBytes` long: one the bytes left
  // cannot hold is refused before anything is allocated for it.
  Status count(uint64_t &n, uint64_t minBytes, const std::string &what) {
    size_t at = offset();
    AMPC_RETURN_IF_ERROR(u64(n, what));
    if (n > left() / minBytes)
      return Status::error(what + " at offset " + std::to_string(at) + " is " +
                           std::to_string(n) + ", more than the " +
                           std::to_string(left()) + " bytes left can hold");
    return Status::ok();
  }
  Status str(std::string &s, const std::string &what) {
    uint64_t n = 0;
    AMPC_RETURN_IF_ERROR(count(n, 1, "the length of " + what));
    const uint8_t *at = nullptr;
    AMPC_RETURN_IF_ERROR(take(size_t(n), what, at));
    s.assign(reinterpret_cast<const char *>(at), size_t(n));
    return Status::ok();
  }
  Status table(std::vector<std::string> &columns,
               std::vector<std::vector<double>> &rows,
               const std::string &what) {
    uint64_t c = 0, r = 0;
    AMPC_RETURN_IF_ERROR(count(c, 8, "the " + what + " column count"));
    columns.resize(size_t(c));
    for (uint64_t i = 0; i < c; ++i)
      AMPC_RETURN_IF_ERROR(
          str(columns[i], what + " column " + std::to_string(i)));
    // Rows of no columns take no bytes: only a row count of 0 is bounded.
    size_t at = offset();
    std::string rowCount = "the " + what + " row count";
    if (c == 0) {
      AMPC_RETURN_IF_ERROR(u64(r, rowCount));
      if (r != 0)
        return Status::error("the " + what + " has " + std::to_string(r) +
                             " rows but no columns (offset " +
                             std::to_string(at) + ")");
    } else {
      AMPC_RETURN_IF_ERROR(count(r, 8 * c, rowCount));
    }
    rows.assign(size_t(r), std::vector<double>(size_t(c)));
    std::string values = what + " rows";
    for (std::vector<double> &row : rows)
      for (double &v : row)
        AMPC_RETURN_IF_ERROR(f64(v, values));
    return Status::ok();
  }

private:
  const uint8_t *p_, *end_, *begin_;
  size_t base_;
};

Status decodeTensor(Reader &r, size_t i, HostTensor &t) {
  AMPC_RETURN_IF_ERROR(
      r.str(t.name, "the name of tensor " + std::to_string(i)));
  std::string what = describe(i, t.name);
  size_t at = r.offset();
  uint8_t code = 0;
  AMPC_RETURN_IF_ERROR(r.u8(code, "the dtype of " + what));
  if (!dtypeOfCode(code, t.dtype))
    return Status::error(what + ": unknown dtype code " + std::to_string(code) +
                         " at offset " + std::to_string(at));
  uint64_t rank = 0;
  AMPC_RETURN_IF_ERROR(r.count(rank, 8, "the rank of " + what));
  t.shape.resize(size_t(rank));
  for (int64_t &d : t.shape)
    AMPC_RETURN_IF_ERROR(r.i64(d, "the shape of " + what));
  at = r.offset();
  uint64_t size = 0, need = 0;
  AMPC_RETURN_IF_ERROR(r.u64(size, "the byte count of " + what));
  if (!bytesFor(t.dtype, t.shape, need))
    return Status::error(what + ": shape " + rt::str(t.shape) +
                         " has a negative or too large dimension");
  if (size != need)
    return Status::error(what + ": shape " + rt::str(t.shape) + " of " +
                         std::string(rt::name(t.dtype)) + " needs " +
                         std::to_string(need) + " bytes, the file says " +
                         std::to_string(size) + " (offset " +
                         std::to_string(at) + ")");
  const uint8_t *data = nullptr;
  AMPC_RETURN_IF_ERROR(r.take(size_t(size), "the bytes of " + what, data));
  t.bytes.assign(data, data + size);
  return Status::ok();
}

Status decodePayload(Reader &r, Checkpoint &c) {
  AMPC_RETURN_IF_ERROR(r.i64(c.step, "the step"));
  uint64_t n = 0;
  AMPC_RETURN_IF_ERROR(r.count(n, 16, "the config entry count"));
  for (uint64_t i = 0; i < n; ++i) {
    std::string key, value;
    AMPC_RETURN_IF_ERROR(r.str(key, "config key " + std::to_string(i)));
    AMPC_RETURN_IF_ERROR(r.str(value, "config value '" + key + "'"));
    if (!c.config.emplace(key, std::move(value)).second)
      return Status::error("config key '" + key + "' appears twice");
  }
  // The smallest tensor: an empty name, a dtype, rank 0, a byte count and
  // (a zero-size shape) no bytes.
  AMPC_RETURN_IF_ERROR(r.count(n, 8 + 1 + 8 + 8, "the tensor count"));
  c.params.resize(size_t(n));
  for (size_t i = 0; i < c.params.size(); ++i)
    AMPC_RETURN_IF_ERROR(decodeTensor(r, i, c.params[i]));
  AMPC_RETURN_IF_ERROR(r.table(c.stepColumns, c.stepRows, "step history"));
  AMPC_RETURN_IF_ERROR(r.table(c.evalColumns, c.evalRows, "eval history"));
  if (r.left() != 0)
    return Status::error(std::to_string(r.left()) +
                         " unexpected bytes after the eval history at offset " +
                         std::to_string(r.offset()));
  return Status::ok();
}

Status decodeImpl(const uint8_t *data, size_t size, Checkpoint &c) {
  if (size != 0 && std::memcmp(data, kMagic, std::min(size, sizeof kMagic)))
    return Status::error("not an ampc checkpoint (it does not start with "
                         "\"AMPCCKPT\")");
  if (size < kHeaderBytes)
    return Status::error("truncated: " + std::to_string(size) +
                         " of at least " + std::to_string(kMinBytes) +
                         " bytes (the header is incomplete)");
  // The header is checked on its own, so that a damaged length or version
  // is called damage, not truncation or a newer format.
  if (rt::crc32Of(data, 20) != get32(data + 20))
    return Status::error("corrupt header (checksum mismatch)");
  uint32_t version = get32(data + 8);
  if (version > kCheckpointVersion)
    return Status::error("format version " + std::to_string(version) +
                         " is newer than this ampc reads (version " +
                         std::to_string(kCheckpointVersion) +
                         "): written by a newer ampc");
  if (version != kCheckpointVersion)
    return Status::error("unknown format version " + std::to_string(version) +
                         " (this ampc reads version " +
                         std::to_string(kCheckpointVersion) + ")");
  uint64_t length = get64(data + 12);
  if (length < kMinBytes)
    return Status::error("corrupt header: a length of " +
                         std::to_string(length) + " bytes is less than the " +
                         std::to_string(kMinBytes) + " every checkpoint has");
  if (size < length)
    return Status::error("truncated: " + std::to_string(size) + " of " +
                         std::to_string(length) + " bytes");
  if (size > length)
    return Status::error(std::to_string(size) + " bytes, but the header says " +
                         std::to_string(length) +
                         ": something was appended to it");
  uint32_t stored = get32(data + length - 4);
  uint32_t computed = rt::crc32Of(data, size_t(length) - 4);
  if (stored != computed)
    return Status::error("checksum mismatch (stored " + hex32(stored) +
                         ", computed " + hex32(computed) +
                         "): the file is corrupt");
  Reader r(data + kHeaderBytes, size_t(length) - kMinBytes, kHeaderBytes);
  if (Status s = decodePayload(r, c); !s)
    return Status::error("corrupt payload: " + s.message());
  if (Status s = validate(c); !s)
    return Status::error("corrupt payload: " + s.message());
  return Status::ok();
}

// The nearest of `dir` and its ancestors that exists (empty when none of a
// relative path's does), with those below it that do not in `missing`,
// `dir` first.
std::filesystem::path
nearestExisting(const std::string &dir,
                std::vector<std::filesystem::path> &missing) {
  namespace fs = std::filesystem;
  fs::path p = fs::path(dir).lexically_normal();
  if (p.filename().empty()) // "a/b/"
    p = p.parent_path();
  std::error_code ec;
  for (; !p.empty() && !fs::exists(p, ec); p = p.parent_path())
    missing.push_back(p);
  return p;
}

// Creates `dir` and any missing parents, and syncs the directory holding
// each one created, so the checkpoint's path survives a crash too.
Status makeDirectory(const std::string &dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(dir, ec))
    return Status::ok();
  std::vector<fs::path> missing;
  nearestExisting(dir, missing);
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir, ec))
    return Status::error(
        dir + ": cannot create the checkpoint directory: " +
        (ec ? ec.message() : std::string("a file of that name exists")));
  for (const fs::path &created : missing) {
    fs::path parent = created.parent_path();
    AMPC_RETURN_IF_ERROR(
        rt::syncDirectory(parent.empty() ? "." : parent.string()));
  }
  return Status::ok();
}

} // namespace

std::string checkpointPath(const std::string &dir) {
  if (!dir.empty() && dir.back() == '/')
    return dir + kCheckpointFile;
  return dir + "/" + kCheckpointFile;
}

Status encodeCheckpoint(const Checkpoint &ckpt, std::vector<uint8_t> &out) {
  AMPC_RETURN_IF_ERROR(validate(ckpt));
  std::vector<uint8_t> b;
  b.reserve(encodedSize(ckpt));
  Writer w{b};
  w.raw(kMagic, sizeof kMagic);
  w.u32(kCheckpointVersion);
  w.u64(0); // the length and the header CRC, once the length is known
  w.u32(0);
  w.u64(uint64_t(ckpt.step));
  w.u64(ckpt.config.size());
  for (const auto &[key, value] : ckpt.config) {
    w.str(key);
    w.str(value);
  }
  w.u64(ckpt.params.size());
  for (const HostTensor &t : ckpt.params) {
    w.str(t.name);
    w.u8(codeOf(t.dtype));
    w.u64(t.shape.size());
    for (int64_t d : t.shape)
      w.u64(uint64_t(d));
    w.u64(t.bytes.size());
    w.raw(t.bytes.data(), t.bytes.size());
  }
  w.table(ckpt.stepColumns, ckpt.stepRows);
  w.table(ckpt.evalColumns, ckpt.evalRows);
  put64(&b[12], b.size() + 4);
  put32(&b[20], rt::crc32Of(b.data(), 20));
  w.u32(rt::crc32Of(b.data(), b.size()));
  out = std::move(b);
  return Status::ok();
}

Status decodeCheckpoint(const uint8_t *data, size_t size,
                        const std::string &source, Checkpoint &out) {
  Checkpoint c;
  AMPC_RETURN_IF_ERROR(decodeImpl(data, size, c).withContext(source));
  out = std::move(c);
  return Status::ok();
}

Status writeCheckpoint(const std::string &dir, const Checkpoint &ckpt) {
  std::string path = checkpointPath(dir);
  if (dir.empty())
    return Status::error("the checkpoint directory name is empty");
  std::vector<uint8_t> bytes;
  // Checked before the directory is created: a bad checkpoint leaves no
  // trace.
  AMPC_RETURN_IF_ERROR(
      encodeCheckpoint(ckpt, bytes).withContext(path + ": not written"));
  AMPC_RETURN_IF_ERROR(makeDirectory(dir));
  return rt::writeFileAtomically(path, bytes.data(), bytes.size());
}

Status checkCheckpointDirectory(const std::string &dir) {
  namespace fs = std::filesystem;
  if (dir.empty())
    return Status::error("the checkpoint directory name is empty");
  std::error_code ec;
  auto cannot = [&](const std::string &why) {
    return Status::error(dir +
                         ": cannot create the checkpoint directory: " + why);
  };
  if (fs::is_directory(dir, ec))
    return rt::checkWritable(checkpointPath(dir));
  // The nearest ancestor that exists must be a directory, and the component
  // below it must be creatable there.
  std::vector<fs::path> missing;
  fs::path p = nearestExisting(dir, missing);
  if (missing.empty())
    return cannot(p.string() + " exists and is not a directory");
  if (!p.empty() && !fs::is_directory(p, ec))
    return cannot(p.string() + " is not a directory");
  if (!fs::create_directory(missing.back(), ec))
    return cannot(ec ? ec.message() : "it could not be made");
  fs::remove(missing.back(), ec);
  return Status::ok();
}

Status readCheckpoint(const std::string &dir, Checkpoint &out) {
  std::string path = checkpointPath(dir);
  std::vector<uint8_t> bytes;
  AMPC_RETURN_IF_ERROR(rt::readFileBytes(path, bytes));
  return decodeCheckpoint(bytes.data(), bytes.size(), path, out);
}

Status checkConfig(const Checkpoint &ckpt,
                   const std::map<std::string, std::string> &current,
                   const std::string &dir) {
  auto fail = [&](const std::string &written, const std::string &now) {
    return Status::error(checkpointPath(dir) +
                         ": cannot resume: the checkpoint was written " +
                         written + ", this run has " + now);
  };
  // Both maps are sorted: walk them together.
  auto a = ckpt.config.begin(), b = current.begin();
  while (a != ckpt.config.end() || b != current.end()) {
    if (b == current.end() || (a != ckpt.config.end() && a->first < b->first))
      return fail("with " + a->first + "=" + a->second, "no " + a->first);
    if (a == ckpt.config.end() || b->first < a->first)
      return fail("without " + b->first, b->first + "=" + b->second);
    if (a->second != b->second)
      return fail("with " + a->first + "=" + a->second,
                  b->first + "=" + b->second);
    ++a;
    ++b;
  }
  return Status::ok();
}

} // namespace ampc::tools
