//===- Npy.h - NumPy .npy files ------------------------------------------===//
//
// Reads format versions 1.0, 2.0 and 3.0 of NumPy's .npy files, C order,
// little endian, with the dtypes the runtime stores: '<f4' '<f8' '<f2' '<i8'
// '<i4' '|b1'. Anything else (big endian, '|u1', structured dtypes,
// fortran_order True, ...) is an error naming the file and the problem.
//
// NumPy has no bfloat16, so writeNpy stores a BF16 tensor as '<f4' (an exact
// widening); reading it back gives F32, and a caller that needs BF16 converts
// with convertTo (runtime/io/TensorFile.h), which rounds exactly.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_IO_NPY_H
#define AMPC_RUNTIME_IO_NPY_H

#include "runtime/io/TensorFile.h"

namespace ampc::rt {

// Decodes .npy bytes; `source` names them in error messages.
Status parseNpy(const uint8_t *data, size_t size, const std::string &source,
                HostTensor &out);
Status readNpy(const std::string &path, HostTensor &out);

// Encodes a tensor as a version 1.0 .npy file (2.0 if the header needs it).
Status encodeNpy(const HostTensor &t, std::vector<uint8_t> &out);
// Writes PATH.tmp and renames it to PATH, so PATH is never half-written.
Status writeNpy(const std::string &path, const HostTensor &t);

} // namespace ampc::rt

#endif // AMPC_RUNTIME_IO_NPY_H
