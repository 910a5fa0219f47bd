//===- Npy.cpp - NumPy .npy files -----------------------------------------===//
//
// The header is a Python dict literal; we parse exactly the subset NumPy
// writes ({'descr': str, 'fortran_order': bool, 'shape': tuple of ints}) with
// a small recursive-descent reader instead of guessing with string search, so
// a corrupt header is an error rather than a misread shape.
//
//===----------------------------------------------------------------------===//
#include "runtime/io/Npy.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>

#include <unistd.h>

namespace ampc::rt {
namespace {

constexpr uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

std::optional<DType> dtypeOfDescr(const std::string &d) {
  if (d == "<f4")
    return DType::F32;
  if (d == "<f8")
    return DType::F64;
  if (d == "<f2")
    return DType::F16;
  if (d == "<i8")
    return DType::I64;
  if (d == "<i4")
    return DType::I32;
  if (d == "|b1")
    return DType::I1;
  return std::nullopt;
}

const char *descrOf(DType t) {
  switch (t) {
  case DType::F32:
  case DType::BF16: // NumPy has no bf16: widened exactly to f32.
    return "<f4";
  case DType::F64:
    return "<f8";
  case DType::F16:
    return "<f2";
  case DType::I64:
    return "<i8";
  case DType::I32:
    return "<i4";
  case DType::I1:
    return "|b1";
  }
  return "?";
}

// Reader for the header dict. Errors are plain messages; the caller adds the
// file name.
class HeaderParser {
public:
  explicit HeaderParser(const std::string &s) : s_(s) {}

  Status parse(std::string &descr, bool &fortran, Shape &shape) {
    bool haveDescr = false, haveFortran = false, haveShape = false;
    skipSpace();
    if (!eat('{'))
      return err("header does not start with '{'");
    while (true) {
      skipSpace();
      if (eat('}'))
        break;
      std::string key;
      AMPC_RETURN_IF_ERROR(parseString(key));
      skipSpace();
      if (!eat(':'))
        return err("expected ':' after key '" + key + "'");
      skipSpace();
      if (key == "descr") {
        if (haveDescr)
          return err("duplicate key 'descr'");
        haveDescr = true;
        if (peek() == '[')
          return err("structured dtypes (a list 'descr') are not supported");
        AMPC_RETURN_IF_ERROR(parseString(descr));
      } else if (key == "fortran_order") {
        if (haveFortran)
          return err("duplicate key 'fortran_order'");
        haveFortran = true;
        if (eatWord("True"))
          fortran = true;
        else if (eatWord("False"))
          fortran = false;
        else
          return err("'fortran_order' is not True or False");
      } else if (key == "shape") {
        if (haveShape)
          return err("duplicate key 'shape'");
        haveShape = true;
        AMPC_RETURN_IF_ERROR(parseShape(shape));
      } else {
        return err("unexpected key '" + key + "'");
      }
      skipSpace();
      if (eat(','))
        continue;
      if (eat('}'))
        break;
      return err("expected ',' or '}' after the value of '" + key + "'");
    }
    // NumPy pads with spaces and ends the header with '\n'.
    for (; pos_ < s_.size(); ++pos_)
      if (s_[pos_] != ' ' && s_[pos_] != '\n' && s_[pos_] != '\t' &&
          s_[pos_] != '\r' && s_[pos_] != '\0')
        return err("unexpected text after the header dict");
    if (!haveDescr || !haveFortran || !haveShape)
      return err(std::string("header lacks the key '") +
                 (!haveDescr     ? "descr"
                  : !haveFortran ? "fortran_order"
                                 : "shape") +
                 "'");
    return Status::ok();
  }

private:
  Status err(const std::string &what) const {
    return Status::error("malformed header (" + what + " at offset " +
                         std::to_string(pos_) + ")");
  }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  bool eat(char c) {
    if (peek() != c)
      return false;
    ++pos_;
    return true;
  }
  bool eatWord(const char *w) {
    size_t n = std::strlen(w);
    if (s_.compare(pos_, n, w) != 0)
      return false;
    pos_ += n;
    return true;
  }
  void skipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' ||
                                s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }
  Status parseString(std::string &out) {
    char q = peek();
    if (q != '\'' && q != '"')
      return err("expected a quoted string");
    ++pos_;
    out.clear();
    while (pos_ < s_.size() && s_[pos_] != q) {
      if (s_[pos_] == '\\' || s_[pos_] == '\n')
        return err("unsupported character in a string");
      out += s_[pos_++];
    }
    if (!eat(q))
      return err("unterminated string");
    return Status::ok();
  }
  Status parseShape(Shape &shape) {
    shape.clear();
    if (!eat('('))
      return err("'shape' is not a tuple");
    skipSpace();
    if (eat(')'))
      return Status::ok(); // () : a scalar
    while (true) {
      skipSpace();
      if (peek() < '0' || peek() > '9')
        return err("expected a non-negative integer dimension");
      int64_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        int d = peek() - '0';
        if (v > (std::numeric_limits<int64_t>::max() - d) / 10)
          return err("dimension too large");
        v = v * 10 + d;
        ++pos_;
      }
      eat('L'); // Python 2 wrote long integers as 3L.
      shape.push_back(v);
      skipSpace();
      if (eat(')')) {
        // Python needs the trailing comma for a 1-tuple: "(3)" is an int.
        if (shape.size() == 1)
          return err("'shape' (n) is not a tuple; expected (n,)");
        return Status::ok();
      }
      if (!eat(','))
        return err("expected ',' or ')' in 'shape'");
      skipSpace();
      if (eat(')'))
        return Status::ok();
    }
  }

  const std::string &s_;
  size_t pos_ = 0;
};

uint32_t loadLE(const uint8_t *p, int n) {
  uint32_t v = 0;
  for (int i = n - 1; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}

// numElements * itemSize, or nullopt on overflow or negative dimensions.
std::optional<uint64_t> checkedByteSize(const Shape &shape, size_t itemSize) {
  uint64_t n = itemSize;
  for (int64_t d : shape) {
    if (d < 0)
      return std::nullopt;
    if (d != 0 && n > std::numeric_limits<uint64_t>::max() / uint64_t(d))
      return std::nullopt;
    n *= uint64_t(d);
  }
  if (n > uint64_t(std::numeric_limits<int64_t>::max()))
    return std::nullopt;
  return n;
}

Status parseNpyImpl(const uint8_t *data, size_t size, HostTensor &out) {
  if (size < 8 || std::memcmp(data, kMagic, 6) != 0)
    return Status::error(size < 6 ? "too short for a .npy file (" +
                                        std::to_string(size) + " bytes)"
                                  : "bad magic: not a .npy file");
  int major = data[6], minor = data[7];
  size_t lenBytes;
  if (major == 1 && minor == 0)
    lenBytes = 2;
  else if ((major == 2 || major == 3) && minor == 0)
    lenBytes = 4; // 3.0 differs only in allowing utf-8 in the header
  else
    return Status::error("unsupported .npy format version " +
                         std::to_string(major) + "." + std::to_string(minor));
  if (size < 8 + lenBytes)
    return Status::error("truncated header length");
  uint64_t headerLen = loadLE(data + 8, int(lenBytes));
  uint64_t dataStart = 8 + lenBytes + headerLen;
  if (dataStart > size)
    return Status::error(
        "truncated header: it claims " + std::to_string(headerLen) +
        " bytes but the file has " + std::to_string(size - 8 - lenBytes));
  std::string header(reinterpret_cast<const char *>(data + 8 + lenBytes),
                     headerLen);
  std::string descr;
  bool fortran = false;
  Shape shape;
  AMPC_RETURN_IF_ERROR(HeaderParser(header).parse(descr, fortran, shape));
  std::optional<DType> dtype = dtypeOfDescr(descr);
  if (!dtype) {
    if (!descr.empty() && descr[0] == '>')
      return Status::error("big-endian dtype '" + descr +
                           "' is not supported (save it little-endian)");
    return Status::error("unsupported dtype descr '" + descr +
                         "' (supported: '<f4' '<f8' '<f2' '<i8' '<i4' '|b1')");
  }
  if (fortran)
    return Status::error("fortran_order True is not supported (save the "
                         "array in C order, e.g. np.ascontiguousarray)");
  std::optional<uint64_t> nbytes = checkedByteSize(shape, sizeOf(*dtype));
  if (!nbytes)
    return Status::error("shape " + str(shape) + " is too large");
  uint64_t have = size - dataStart;
  if (have < *nbytes)
    return Status::error("data shorter than the shape says: " + str(shape) +
                         " " + descr + " needs " + std::to_string(*nbytes) +
                         " bytes, the file has " + std::to_string(have));
  if (have > *nbytes)
    return Status::error(std::to_string(have - *nbytes) +
                         " trailing bytes after the data of shape " +
                         str(shape));
  out.dtype = *dtype;
  out.shape = std::move(shape);
  out.name.clear();
  out.bytes.assign(data + dataStart, data + dataStart + *nbytes);
  if (out.dtype == DType::I1) // keep the runtime's invariant: 0 or 1
    for (uint8_t &b : out.bytes)
      b = b != 0;
  return Status::ok();
}

std::string shapeTuple(const Shape &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1)
    s += ",";
  return s + ")";
}

} // namespace

Status parseNpy(const uint8_t *data, size_t size, const std::string &source,
                HostTensor &out) {
  return parseNpyImpl(data, size, out).withContext(source);
}

Status readNpy(const std::string &path, HostTensor &out) {
  std::vector<uint8_t> bytes;
  AMPC_RETURN_IF_ERROR(readFileBytes(path, bytes));
  return parseNpy(bytes.data(), bytes.size(), path, out);
}

Status encodeNpy(const HostTensor &t, std::vector<uint8_t> &out) {
  std::optional<uint64_t> want = checkedByteSize(t.shape, sizeOf(t.dtype));
  if (!want || *want != t.bytes.size())
    return Status::error("tensor '" + t.name + "' of shape " + str(t.shape) +
                         " " + std::string(name(t.dtype)) + " holds " +
                         std::to_string(t.bytes.size()) + " bytes");
  std::string header =
      std::string("{'descr': '") + descrOf(t.dtype) +
      "', 'fortran_order': False, 'shape': " + shapeTuple(t.shape) + ", }";
  // Pad so the data starts 64-byte aligned, as NumPy does; the header ends
  // with '\n'.
  auto paddedSize = [&](size_t lenBytes) {
    return (8 + lenBytes + header.size() + 1 + 63) / 64 * 64;
  };
  size_t lenBytes = paddedSize(2) - 10 <= 65535 ? 2 : 4; // else version 2.0
  size_t total = 8 + lenBytes + header.size() + 1;
  size_t padded = paddedSize(lenBytes);
  header.append(padded - total, ' ');
  header += '\n';
  size_t headerLen = header.size();
  out.clear();
  out.reserve(padded + t.bytes.size());
  out.insert(out.end(), kMagic, kMagic + 6);
  out.push_back(lenBytes == 2 ? 1 : 2);
  out.push_back(0);
  for (size_t i = 0; i < lenBytes; ++i)
    out.push_back(uint8_t(headerLen >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  if (t.dtype == DType::BF16) {
    for (size_t i = 0; i + 1 < t.bytes.size(); i += 2) {
      // bf16 is the top half of an f32: widen by appending two zero bytes
      // below it (little endian).
      out.push_back(0);
      out.push_back(0);
      out.push_back(t.bytes[i]);
      out.push_back(t.bytes[i + 1]);
    }
  } else {
    out.insert(out.end(), t.bytes.begin(), t.bytes.end());
  }
  return Status::ok();
}

Status writeNpy(const std::string &path, const HostTensor &t) {
  std::vector<uint8_t> bytes;
  AMPC_RETURN_IF_ERROR(encodeNpy(t, bytes).withContext(path));
  return writeFileAtomically(path, bytes.data(), bytes.size());
}

} // namespace ampc::rt
