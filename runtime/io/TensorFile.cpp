//===- TensorFile.cpp - TensorProto decoding, conversions, file reading ---===//
//
// The TensorProto reader is a hand-written protobuf wire-format decoder: the
// runtime links no protobuf or ONNX library (IREE's rule), and a TensorProto
// is a flat message whose few fields are listed below. Every read is bounds
// checked against the input, so corrupt files end in an error Status.
//
//===----------------------------------------------------------------------===//
#include "runtime/io/TensorFile.h"

#include "runtime/Half.h"
#include "runtime/io/Npy.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ampc::rt {

std::string HostTensor::typeStr() const {
  TensorView v{dtype, shape, nullptr};
  return v.typeStr();
}

HostTensor makeHostTensor(DType dtype, Shape shape, std::string name) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.name = std::move(name);
  int64_t n = rt::numElements(t.shape);
  t.bytes.assign(n > 0 ? size_t(n) * sizeOf(dtype) : 0, 0);
  return t;
}

HostTensor copyOf(const TensorView &v, std::string name) {
  HostTensor t = makeHostTensor(v.dtype, v.shape, std::move(name));
  if (!t.bytes.empty())
    std::memcpy(t.bytes.data(), v.data, t.bytes.size());
  return t;
}

Status readFileBytes(const std::string &path, std::vector<uint8_t> &out) {
  out.clear();
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    return Status::error(path + ": cannot open: " + std::strerror(errno));
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
    std::fclose(f);
    return Status::error(path + ": not a regular file");
  }
  out.reserve(size_t(st.st_size));
  uint8_t buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0)
    out.insert(out.end(), buf, buf + n);
  bool failed = std::ferror(f);
  std::fclose(f);
  if (failed)
    return Status::error(path + ": read error");
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Conversions
//===----------------------------------------------------------------------===//

namespace {

template <typename T> T load(const uint8_t *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T> void store(uint8_t *p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

double loadFloat(DType t, const uint8_t *p) {
  switch (t) {
  case DType::F32:
    return load<float>(p);
  case DType::F64:
    return load<double>(p);
  case DType::F16:
    return halfBitsToFloat(load<uint16_t>(p));
  case DType::BF16:
    return bfloatBitsToFloat(load<uint16_t>(p));
  default:
    return 0;
  }
}

void storeFloat(DType t, uint8_t *p, double v) {
  switch (t) {
  case DType::F32:
    store<float>(p, static_cast<float>(v)); // one RNE rounding
    return;
  case DType::F64:
    store<double>(p, v);
    return;
  case DType::F16:
    store<uint16_t>(p, doubleToHalfBits(v));
    return;
  case DType::BF16:
    store<uint16_t>(p, doubleToBFloatBits(v));
    return;
  default:
    return;
  }
}

int64_t loadInt(DType t, const uint8_t *p) {
  switch (t) {
  case DType::I64:
    return load<int64_t>(p);
  case DType::I32:
    return load<int32_t>(p);
  case DType::I1:
    return *p != 0;
  default:
    return 0;
  }
}

bool fitsInt(DType t, int64_t v) {
  switch (t) {
  case DType::I64:
    return true;
  case DType::I32:
    return v >= std::numeric_limits<int32_t>::min() &&
           v <= std::numeric_limits<int32_t>::max();
  case DType::I1:
    return v == 0 || v == 1;
  default:
    return false;
  }
}

void storeInt(DType t, uint8_t *p, int64_t v) {
  switch (t) {
  case DType::I64:
    store<int64_t>(p, v);
    return;
  case DType::I32:
    store<int32_t>(p, static_cast<int32_t>(v));
    return;
  case DType::I1:
    *p = static_cast<uint8_t>(v != 0);
    return;
  default:
    return;
  }
}

bool isIntLike(DType t) { return isInt(t) || t == DType::I1; }

} // namespace

Status convertTo(HostTensor &t, DType to) {
  if (t.dtype == to)
    return Status::ok();
  // A tensor read from a .npy file has no name: the caller names the file.
  std::string what =
      t.name.empty() ? t.typeStr() : "tensor '" + t.name + "' " + t.typeStr();
  int64_t n = t.numElements();
  if (n < 0 || t.bytes.size() != size_t(n) * sizeOf(t.dtype))
    return Status::error(what + " holds " + std::to_string(t.bytes.size()) +
                         " bytes");
  size_t inSize = sizeOf(t.dtype), outSize = sizeOf(to);
  std::vector<uint8_t> out(size_t(n) * outSize);
  if (isFloat(t.dtype) && isFloat(to)) {
    for (int64_t i = 0; i < n; ++i)
      storeFloat(to, &out[i * outSize],
                 loadFloat(t.dtype, &t.bytes[i * inSize]));
  } else if (isIntLike(t.dtype) && isIntLike(to)) {
    for (int64_t i = 0; i < n; ++i) {
      int64_t v = loadInt(t.dtype, &t.bytes[i * inSize]);
      if (!fitsInt(to, v))
        return Status::error(what + ": element " + std::to_string(i) +
                             " (value " + std::to_string(v) +
                             ") does not fit " + std::string(name(to)));
      storeInt(to, &out[i * outSize], v);
    }
  } else {
    return Status::error(what + ": no exact conversion from " +
                         std::string(name(t.dtype)) + " to " +
                         std::string(name(to)) +
                         " (float <-> integer conversions are not done "
                         "implicitly)");
  }
  t.bytes = std::move(out);
  t.dtype = to;
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// TensorProto
//===----------------------------------------------------------------------===//

namespace {

// onnx.proto's TensorProto.DataType.
const char *onnxTypeName(int64_t t) {
  static const char *names[] = {
      "UNDEFINED",      "FLOAT",        "UINT8",          "INT8",
      "UINT16",         "INT16",        "INT32",          "INT64",
      "STRING",         "BOOL",         "FLOAT16",        "DOUBLE",
      "UINT32",         "UINT64",       "COMPLEX64",      "COMPLEX128",
      "BFLOAT16",       "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
      "FLOAT8E5M2FNUZ", "UINT4",        "INT4",           "FLOAT4E2M1"};
  if (t >= 0 && t < int64_t(sizeof(names) / sizeof(names[0])))
    return names[t];
  return "unknown";
}

std::optional<DType> dtypeOfOnnx(int64_t t) {
  switch (t) {
  case 1:
    return DType::F32;
  case 6:
    return DType::I32;
  case 7:
    return DType::I64;
  case 9:
    return DType::I1;
  case 10:
    return DType::F16;
  case 11:
    return DType::F64;
  case 16:
    return DType::BF16;
  default:
    return std::nullopt;
  }
}

class WireReader {
public:
  WireReader(const uint8_t *p, size_t n) : p_(p), end_(p + n), begin_(p) {}
  bool atEnd() const { return p_ == end_; }
  size_t offset() const { return size_t(p_ - begin_); }

  bool varint(uint64_t &v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ == end_)
        return false;
      uint8_t b = *p_++;
      if (shift == 63 && b > 1)
        return false; // more than 64 bits
      v |= uint64_t(b & 0x7F) << shift;
      if (!(b & 0x80))
        return true;
    }
    return false;
  }
  bool fixed(void *out, size_t n) {
    if (size_t(end_ - p_) < n)
      return false;
    std::memcpy(out, p_, n);
    p_ += n;
    return true;
  }
  bool bytes(const uint8_t *&data, size_t &len) {
    uint64_t n;
    if (!varint(n) || n > uint64_t(end_ - p_))
      return false;
    data = p_;
    len = size_t(n);
    p_ += n;
    return true;
  }

private:
  const uint8_t *p_, *end_, *begin_;
};

struct ProtoFields {
  std::vector<int64_t> dims;
  std::optional<int64_t> dataType;
  std::vector<float> floatData;
  std::vector<int64_t> int32Data; // as decoded varints, range-checked later
  std::vector<int64_t> int64Data;
  std::vector<double> doubleData;
  std::vector<uint64_t> uint64Data;
  std::optional<std::pair<const uint8_t *, size_t>> rawData;
  std::string name;
};

enum WireType { kVarint = 0, kFixed64 = 1, kLen = 2, kFixed32 = 5 };

// Reads a repeated scalar field, packed (wire type 2) or not.
template <typename Fn>
Status readRepeated(WireReader &r, int wire, WireType elemWire,
                    const char *field, Fn &&push) {
  auto readOne = [&](WireReader &rr) -> bool {
    if (elemWire == kVarint) {
      uint64_t v;
      if (!rr.varint(v))
        return false;
      push(v);
    } else if (elemWire == kFixed32) {
      uint32_t v;
      if (!rr.fixed(&v, 4))
        return false;
      push(uint64_t(v));
    } else {
      uint64_t v;
      if (!rr.fixed(&v, 8))
        return false;
      push(v);
    }
    return true;
  };
  if (wire == kLen) {
    const uint8_t *data;
    size_t len;
    if (!r.bytes(data, len))
      return Status::error(std::string("truncated packed field '") + field +
                           "'");
    WireReader packed(data, len);
    while (!packed.atEnd())
      if (!readOne(packed))
        return Status::error(std::string("malformed packed field '") + field +
                             "'");
    return Status::ok();
  }
  if (wire != elemWire)
    return Status::error(std::string("field '") + field + "' has wire type " +
                         std::to_string(wire) + ", expected " +
                         std::to_string(int(elemWire)));
  if (!readOne(r))
    return Status::error(std::string("truncated field '") + field + "'");
  return Status::ok();
}

Status skipField(WireReader &r, int wire, uint64_t fieldNum) {
  uint64_t v;
  const uint8_t *d;
  size_t n;
  bool ok;
  switch (wire) {
  case kVarint:
    ok = r.varint(v);
    break;
  case kFixed64:
    ok = r.fixed(&v, 8);
    break;
  case kLen:
    ok = r.bytes(d, n);
    break;
  case kFixed32:
    ok = r.fixed(&v, 4);
    break;
  default:
    return Status::error("field " + std::to_string(fieldNum) +
                         " has unsupported wire type " + std::to_string(wire) +
                         " (not a TensorProto?)");
  }
  if (!ok)
    return Status::error("truncated field " + std::to_string(fieldNum));
  return Status::ok();
}

Status decodeFields(const uint8_t *data, size_t size, ProtoFields &f) {
  WireReader r(data, size);
  while (!r.atEnd()) {
    size_t at = r.offset();
    uint64_t tag;
    if (!r.varint(tag))
      return Status::error("truncated field tag at offset " +
                           std::to_string(at));
    uint64_t field = tag >> 3;
    int wire = int(tag & 7);
    if (field == 0)
      return Status::error("invalid field number 0 at offset " +
                           std::to_string(at) + " (not a TensorProto?)");
    Status s;
    switch (field) {
    case 1: // dims
      s = readRepeated(r, wire, kVarint, "dims",
                       [&](uint64_t v) { f.dims.push_back(int64_t(v)); });
      break;
    case 2: { // data_type
      uint64_t v;
      if (wire != kVarint || !r.varint(v))
        return Status::error("malformed field 'data_type' at offset " +
                             std::to_string(at));
      f.dataType = int64_t(v);
      break;
    }
    case 3:
      // Also what a SequenceProto or OptionalProto (field 3 = its
      // tensors) looks like: ONNX's test data stores those as .pb too.
      return Status::error("field 3 is set: segmented tensors are not "
                           "supported, or this is not a TensorProto (an ONNX "
                           "SequenceProto or OptionalProto?)");
    case 4: // float_data
      s = readRepeated(r, wire, kFixed32, "float_data", [&](uint64_t v) {
        f.floatData.push_back(floatOf(uint32_t(v)));
      });
      break;
    case 5: // int32_data
      s = readRepeated(r, wire, kVarint, "int32_data",
                       [&](uint64_t v) { f.int32Data.push_back(int64_t(v)); });
      break;
    case 7: // int64_data
      s = readRepeated(r, wire, kVarint, "int64_data",
                       [&](uint64_t v) { f.int64Data.push_back(int64_t(v)); });
      break;
    case 8:   // name
    case 9: { // raw_data
      const uint8_t *d;
      size_t n;
      if (wire != kLen || !r.bytes(d, n))
        return Status::error(std::string(field == 8 ? "malformed field 'name'"
                                                    : "truncated raw_data") +
                             " at offset " + std::to_string(at));
      if (field == 8)
        f.name.assign(reinterpret_cast<const char *>(d), n);
      else
        f.rawData = std::make_pair(d, n);
      break;
    }
    case 10: // double_data
      s = readRepeated(r, wire, kFixed64, "double_data", [&](uint64_t v) {
        double d;
        std::memcpy(&d, &v, 8);
        f.doubleData.push_back(d);
      });
      break;
    case 11: // uint64_data
      s = readRepeated(r, wire, kVarint, "uint64_data",
                       [&](uint64_t v) { f.uint64Data.push_back(v); });
      break;
    case 13: // external_data
      return Status::error("external data not supported (the tensor's data "
                           "lives in another file)");
    case 14: { // data_location
      uint64_t v;
      if (wire != kVarint || !r.varint(v))
        return Status::error("malformed field 'data_location'");
      if (v == 1)
        return Status::error("external data not supported (data_location "
                             "is EXTERNAL)");
      break;
    }
    default: // doc_string (12), string_data (6) and unknown fields
      s = skipField(r, wire, field);
      break;
    }
    if (!s)
      return Status::error(s.message() + " at offset " + std::to_string(at));
  }
  return Status::ok();
}

Status parseTensorProtoImpl(const uint8_t *data, size_t size, HostTensor &out) {
  ProtoFields f;
  AMPC_RETURN_IF_ERROR(decodeFields(data, size, f));
  if (!f.dataType)
    return Status::error("no data_type (not a TensorProto?)");
  std::optional<DType> dt = dtypeOfOnnx(*f.dataType);
  if (!dt)
    return Status::error(
        "unsupported ONNX data type " + std::string(onnxTypeName(*f.dataType)) +
        " (" + std::to_string(*f.dataType) +
        "); supported: FLOAT, FLOAT16, BFLOAT16, DOUBLE, INT64, INT32, BOOL");
  DType dtype = *dt;
  // Element count, with the byte size bounded so a corrupt dims field cannot
  // ask for an absurd allocation (every element must be in the file).
  uint64_t n = 1;
  for (int64_t d : f.dims) {
    if (d < 0)
      return Status::error("negative dimension " + std::to_string(d) +
                           " in dims " + str(f.dims));
    if (d != 0 && n > uint64_t(std::numeric_limits<int64_t>::max()) /
                          sizeOf(dtype) / uint64_t(d))
      return Status::error("dims " + str(f.dims) + " are too large");
    n *= uint64_t(d);
  }
  size_t esize = sizeOf(dtype);
  std::string typed = dtype == DType::F32   ? "float_data"
                      : dtype == DType::F64 ? "double_data"
                      : dtype == DType::I64 ? "int64_data"
                                            : "int32_data";
  size_t typedCount = dtype == DType::F32   ? f.floatData.size()
                      : dtype == DType::F64 ? f.doubleData.size()
                      : dtype == DType::I64 ? f.int64Data.size()
                                            : f.int32Data.size();
  size_t otherCount = f.floatData.size() + f.doubleData.size() +
                      f.int64Data.size() + f.int32Data.size() +
                      f.uint64Data.size() - typedCount;
  std::string what = "tensor '" + f.name + "' of type " +
                     onnxTypeName(*f.dataType) + " and dims " + str(f.dims);
  if (otherCount != 0)
    return Status::error(what + " has data in a field other than " + typed);
  if (f.rawData && typedCount != 0)
    return Status::error(what + " has both raw_data and " + typed);

  std::vector<uint8_t> bytes;
  if (f.rawData) {
    if (f.rawData->second != n * esize)
      return Status::error(
          what + ": raw_data has " + std::to_string(f.rawData->second) +
          " bytes, the dims need " + std::to_string(n * esize));
    bytes.assign(f.rawData->first, f.rawData->first + f.rawData->second);
    if (dtype == DType::I1)
      for (uint8_t &b : bytes)
        b = b != 0;
  } else {
    if (typedCount != n)
      return Status::error(what + ": " + typed + " has " +
                           std::to_string(typedCount) +
                           " elements, the dims "
                           "need " +
                           std::to_string(n));
    bytes.resize(n * esize);
    for (size_t i = 0; i < n; ++i) {
      uint8_t *p = &bytes[i * esize];
      switch (dtype) {
      case DType::F32:
        store<float>(p, f.floatData[i]);
        break;
      case DType::F64:
        store<double>(p, f.doubleData[i]);
        break;
      case DType::I64:
        store<int64_t>(p, f.int64Data[i]);
        break;
      case DType::I32: {
        int64_t v = f.int32Data[i];
        if (v < std::numeric_limits<int32_t>::min() ||
            v > std::numeric_limits<int32_t>::max())
          return Status::error(what + ": int32_data[" + std::to_string(i) +
                               "] = " + std::to_string(v) +
                               " is out of int32 range");
        store<int32_t>(p, int32_t(v));
        break;
      }
      case DType::F16:
      case DType::BF16: {
        // 16-bit patterns carried in int32_data (onnx.proto says so).
        int64_t v = f.int32Data[i];
        if (v < 0 || v > 0xFFFF)
          return Status::error(what + ": int32_data[" + std::to_string(i) +
                               "] = " + std::to_string(v) +
                               " is not a 16-bit pattern");
        store<uint16_t>(p, uint16_t(v));
        break;
      }
      case DType::I1:
        *p = f.int32Data[i] != 0;
        break;
      }
    }
  }
  out.dtype = dtype;
  out.shape = std::move(f.dims);
  out.bytes = std::move(bytes);
  out.name = std::move(f.name);
  return Status::ok();
}

constexpr uint8_t kNpyMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

bool endsWith(const std::string &s, const char *suffix) {
  size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

} // namespace

Status parseTensorProto(const uint8_t *data, size_t size,
                        const std::string &source, HostTensor &out) {
  return parseTensorProtoImpl(data, size, out).withContext(source);
}

Status readTensorProto(const std::string &path, HostTensor &out) {
  std::vector<uint8_t> bytes;
  AMPC_RETURN_IF_ERROR(readFileBytes(path, bytes));
  return parseTensorProto(bytes.data(), bytes.size(), path, out);
}

Status readTensorFile(const std::string &path, HostTensor &out) {
  std::vector<uint8_t> bytes;
  AMPC_RETURN_IF_ERROR(readFileBytes(path, bytes));
  bool npyMagic =
      bytes.size() >= 6 && std::memcmp(bytes.data(), kNpyMagic, 6) == 0;
  if (npyMagic || endsWith(path, ".npy"))
    return parseNpy(bytes.data(), bytes.size(), path, out);
  Status s = parseTensorProto(bytes.data(), bytes.size(), path, out);
  if (!s && !endsWith(path, ".pb"))
    return Status::error(s.message() + " (read as an ONNX TensorProto: the "
                                       "file is not .npy and has no NumPy "
                                       "magic)");
  return s;
}

int32_t onnxDataTypeOf(DType dtype) {
  switch (dtype) {
  case DType::F32: return 1;
  case DType::I32: return 6;
  case DType::I64: return 7;
  case DType::I1: return 9;
  case DType::F16: return 10;
  case DType::F64: return 11;
  case DType::BF16: return 16;
  }
  return 0;
}

namespace {

// writeFileAtomically renames a new file over `path`: what is there must be
// a file, or nothing (a rename over a device or a pipe would replace it).
Status checkReplaceable(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode))
    return Status::ok();
  if (S_ISDIR(st.st_mode))
    return Status::error(path + ": is a directory, not a file name");
  return Status::error(path +
                       ": is not a regular file, and it would be "
                       "replaced by one (the file is written whole "
                       "through " +
                       path + ".tmp and renamed)");
}

} // namespace

namespace {
// The directory a file path is in: "." for a bare name, "/" at the root.
std::string parentDirectory(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}
} // namespace

Status writeFileAtomically(const std::string &path, const void *data,
                           size_t size) {
  AMPC_RETURN_IF_ERROR(checkReplaceable(path));
  std::string tmp = path + ".tmp";
  FILE *f = std::fopen(tmp.c_str(), "wb");
  if (!f)
    return Status::error(tmp +
                         ": cannot open for writing: " + std::strerror(errno));
  bool ok = std::fwrite(data, 1, size, f) == size;
  int savedErrno = errno;
  ok = std::fflush(f) == 0 && ok;
  ok = ok && ::fsync(fileno(f)) == 0; // the rename must not outrun the data
  if (!ok)
    savedErrno = errno;
  ok = std::fclose(f) == 0 && ok;
  if (!ok) {
    std::remove(tmp.c_str());
    return Status::error(tmp + ": write failed: " + std::strerror(savedErrno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    savedErrno = errno;
    std::remove(tmp.c_str());
    return Status::error(path + ": cannot rename " + tmp +
                         " to it: " + std::strerror(savedErrno));
  }
  // The rename lives in the directory: until the directory is on disk, a
  // crash can bring back the old file (or none) after we reported success.
  if (Status s = syncDirectory(parentDirectory(path)); !s)
    return Status::error(path + ": written, but " + s.message());
  return Status::ok();
}

Status checkWritable(const std::string &path) {
  AMPC_RETURN_IF_ERROR(checkReplaceable(path));
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    int err = errno;
    std::string dir = parentDirectory(path);
    if (err == ENOENT || err == ENOTDIR)
      return Status::error(
          path + ": cannot be written: " + dir +
          (err == ENOENT ? " does not exist" : " is not a directory"));
    return Status::error(path + ": cannot be written: cannot create " + tmp +
                         ": " + std::strerror(err));
  }
  ::close(fd);
  ::unlink(tmp.c_str());
  return Status::ok();
}

Status checkDistinctOutputs(
    const std::vector<std::pair<std::string, std::string>> &outputs) {
  std::vector<std::pair<const std::string *, std::filesystem::path>> seen;
  for (const auto &[flag, path] : outputs) {
    if (path.empty())
      continue;
    // The directory resolved, the name as it is: the writers rename a new
    // file over the name, which replaces a symbolic link there rather than
    // writing through it. (Absolute first: weakly_canonical leaves a
    // relative path whose first part does not exist as it is.)
    std::error_code ec;
    std::filesystem::path file =
        std::filesystem::absolute(path, ec).lexically_normal();
    std::filesystem::path dir =
        std::filesystem::weakly_canonical(file.parent_path(), ec);
    if (!ec) // else checkWritable says what is wrong with it
      file = dir / file.filename();
    for (const auto &[otherFlag, otherFile] : seen)
      if (otherFile == file)
        return Status::error(*otherFlag + " and " + flag + " both write " +
                             path + ": one would replace the other");
    seen.emplace_back(&flag, file);
  }
  return Status::ok();
}

Status syncDirectory(const std::string &dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return Status::error(dir + ": cannot open the directory to sync it: " +
                         std::strerror(errno));
  int rc = ::fsync(fd);
  int savedErrno = errno;
  ::close(fd);
  // Some file systems cannot sync a directory at all (EINVAL); their
  // renames are as durable as they will ever be.
  if (rc != 0 && savedErrno != EINVAL)
    return Status::error(
        dir + ": cannot sync the directory: " + std::strerror(savedErrno));
  return Status::ok();
}

} // namespace ampc::rt
