//===- Fnv.h - FNV-1a hashes of bytes ---------------------------*- C++ -*-===//
//
// The checksums the tools print and record (a step's state, a Program
// file in a checkpoint, a parameter's name in amp-exec's --init-params
// stream): FNV-1a, 32 or 64 bits, the same on every platform. (What the
// ranks compare in bulk, their data and weights, takes zlib's faster
// CRC-32, runtime/Checksum.h.)
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_TOOLING_FNV_H
#define AMPC_RUNTIME_TOOLING_FNV_H

#include <cstddef>
#include <cstdint>

namespace ampc::tools {

/// FNV-1a with a `Word`-bit state; add() bytes in order, then read `value`.
template <typename Word, Word kBasis, Word kPrime> struct Fnv1a {
  Word value = kBasis;
  void add(const void *data, size_t size) {
    const auto *p = static_cast<const uint8_t *>(data);
    for (size_t i = 0; i < size; ++i)
      value = (value ^ p[i]) * kPrime;
  }
};

using Fnv1a32 = Fnv1a<uint32_t, 2166136261u, 16777619u>;
using Fnv1a64 =
    Fnv1a<uint64_t, 14695981039346656037ull, 1099511628211ull>;

} // namespace ampc::tools

#endif // AMPC_RUNTIME_TOOLING_FNV_H
