//===- TensorFile.h - host tensors read from and written to files --------===//
//
// The tensors amp-run and amp-exec feed to and save from a Program: a
// HostTensor owns its bytes in the runtime's storage layout (row-major, little
// endian, f16/bf16 as 16-bit patterns, i1 one byte per element holding 0 or 1).
//
// Readers take untrusted files: every malformed input gives an error Status
// naming the file and the problem, never a crash, and no allocation is sized
// from a header before the file is known to hold that many bytes.
//
// Formats: NumPy .npy (runtime/io/Npy.h) and ONNX TensorProto .pb files, the
// format of ONNX's node-test data, decoded here by a small protobuf wire-format
// reader so the runtime needs neither protobuf nor ONNX's headers.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_IO_TENSORFILE_H
#define AMPC_RUNTIME_IO_TENSORFILE_H

#include "runtime/DType.h"
#include "runtime/Status.h"
#include "runtime/Tensor.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ampc::rt {

struct HostTensor {
  DType dtype = DType::F32;
  Shape shape;
  std::vector<uint8_t> bytes; // numElements(shape) * sizeOf(dtype)
  std::string name;           // TensorProto name; empty for .npy files

  int64_t numElements() const { return rt::numElements(shape); }
  size_t byteSize() const { return bytes.size(); }
  std::string typeStr() const; // "tensor<2x3xf32>"
  // A view of the bytes; valid until the tensor is resized or destroyed.
  TensorView view() {
    return TensorView{dtype, shape, bytes.empty() ? nullptr : bytes.data()};
  }
  // The same of a const tensor, for calls that only read the bytes
  // (Session::setParam and setInput copy them).
  TensorView view() const { return const_cast<HostTensor *>(this)->view(); }
};

// Builds a tensor of the given type and shape filled with zero bytes. The
// shape must not have negative dimensions.
HostTensor makeHostTensor(DType dtype, Shape shape, std::string name = "");

// A named copy of the bytes `v` views (a Session's parameter or output, which
// the next run overwrites).
HostTensor copyOf(const TensorView &v, std::string name);

// Converts `t` to `to` in place, exactly where the value allows:
// - float -> float: widening is exact; narrowing rounds to nearest even once
//   (f64 -> f16/bf16 goes through f32 with round-to-odd, so there is no double
//   rounding), overflowing to infinity and keeping NaNs NaN;
// - integer/i1 -> integer/i1: values must fit the target (i1 holds 0 and 1),
//   otherwise an error names the first element that does not;
// - float <-> integer: an error (a model feeding the wrong kind is a bug the
//   caller should see, not a silent truncation).
Status convertTo(HostTensor &t, DType to);

// Decodes an ONNX TensorProto. Supported data types: FLOAT, FLOAT16,
// BFLOAT16, DOUBLE, INT64, INT32, BOOL (the runtime's DTypes); any other
// (UINT8, INT8, STRING, ...) is an error naming the ONNX type. Data may be in
// raw_data or the typed fields (float_data, int32_data, int64_data,
// double_data, uint64_data); external data is rejected. `source` names the
// bytes in error messages (normally the file path).
Status parseTensorProto(const uint8_t *data, size_t size,
                        const std::string &source, HostTensor &out);
Status readTensorProto(const std::string &path, HostTensor &out);

// Reads a .npy or TensorProto file: a file starting with the NumPy magic, or
// named *.npy, is read as .npy; anything else as a TensorProto.
Status readTensorFile(const std::string &path, HostTensor &out);

// The ONNX TensorProto.DataType of a runtime dtype (FLOAT = 1, ...).
int32_t onnxDataTypeOf(DType dtype);

// Writes `size` bytes to `path` through PATH.tmp, fsync and rename, then
// fsyncs the directory holding `path`: an interrupted write never leaves a
// half-written file at `path`, and once this returns ok the new file
// survives a crash. A `path` that exists and is no regular file (a
// directory, a device, a pipe) is an error: the rename would replace it.
Status writeFileAtomically(const std::string &path, const void *data,
                           size_t size);

// Whether writeFileAtomically(path, ...) can write `path`: `path` is a
// regular file or nothing, and PATH.tmp can be created in its directory (it
// is created and removed again, which also catches read-only file systems).
// Tools ask before the work whose result goes there, so a bad path fails at
// once.
Status checkWritable(const std::string &path);

// Fails when two of `outputs` (each a flag and the file it writes; empty:
// not given) name one file, once ".", ".." and symbolic links to
// directories are resolved: the one written last would replace the other.
// (A link to a file is another name: writeFileAtomically replaces the
// link.) The error names both flags and the file.
Status checkDistinctOutputs(
    const std::vector<std::pair<std::string, std::string>> &outputs);

// fsyncs a directory, so the entries created, renamed or removed in it
// survive a crash. File systems that cannot sync directories count as done.
Status syncDirectory(const std::string &dir);

// Reads a whole file (used by the readers; exposed for tools and tests).
Status readFileBytes(const std::string &path, std::vector<uint8_t> &out);

} // namespace ampc::rt

#endif // AMPC_RUNTIME_IO_TENSORFILE_H
