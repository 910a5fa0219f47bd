//===- ByteSize.h - element counts and byte sizes without overflow --------===//
//
// The one place that multiplies dimensions: element counts and byte sizes
// computed with overflow checks, sizes written for people ("3.2 GiB") and
// read from them ("512M", "16G", "1.5GiB"). Header-only and free of MLIR
// and LLVM, so the compiler, the runtime and amp-run say sizes alike.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_BYTESIZE_H
#define AMPC_RUNTIME_BYTESIZE_H

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

namespace ampc::rt {

namespace detail {
// The product of the non-zero dimensions (1 for none), or nullopt when a
// dimension is negative or the product overflows int64.
inline std::optional<int64_t> nonZeroProduct(const int64_t *dims, size_t rank,
                                             bool &hasZero) {
  int64_t n = 1;
  hasZero = false;
  for (size_t i = 0; i < rank; ++i) {
    if (dims[i] < 0)
      return std::nullopt;
    if (dims[i] == 0)
      hasZero = true;
    else if (__builtin_mul_overflow(n, dims[i], &n))
      return std::nullopt;
  }
  return n;
}
} // namespace detail

// The element count of a shape, or nullopt when a dimension is negative or
// the product of its non-zero dimensions overflows int64. Zero dimensions
// are left out of the overflow test, so every partial product of the
// dimensions (the outer and inner counts kernels compute) fits as well.
inline std::optional<int64_t> checkedNumElements(const int64_t *dims,
                                                 size_t rank) {
  bool hasZero;
  std::optional<int64_t> n = detail::nonZeroProduct(dims, rank, hasZero);
  if (!n)
    return std::nullopt;
  return hasZero ? 0 : *n;
}

// The product of the non-zero dimensions times `elementBytes`, or nullopt
// when a dimension is negative or the product overflows int64: a bound on
// the bytes of every partial product of the dimensions, which a Program's
// loader checks even for a shape with no elements.
inline std::optional<int64_t>
checkedNonZeroByteSize(const int64_t *dims, size_t rank, int64_t elementBytes) {
  bool hasZero;
  std::optional<int64_t> n = detail::nonZeroProduct(dims, rank, hasZero);
  int64_t bytes;
  if (!n || __builtin_mul_overflow(*n, elementBytes, &bytes))
    return std::nullopt;
  return bytes;
}

// checkedNumElements times `elementBytes`, or nullopt when either overflows
// (again with zero dimensions left out of the test).
inline std::optional<int64_t> checkedByteSize(const int64_t *dims, size_t rank,
                                              int64_t elementBytes) {
  std::optional<int64_t> bytes =
      checkedNonZeroByteSize(dims, rank, elementBytes);
  if (bytes && std::find(dims, dims + rank, 0) != dims + rank)
    return 0;
  return bytes;
}

// "100 bytes", "64 KiB", "3.2 GiB": one decimal in the largest binary unit
// the size reaches, none when the size is a whole number of that unit.
inline std::string formatBytes(uint64_t bytes) {
  static const char *const kUnits[] = {"KiB", "MiB", "GiB",
                                       "TiB", "PiB", "EiB"};
  if (bytes < 1024)
    return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
  int unit = 0;
  uint64_t scale = 1024;
  while (unit < 5 && bytes / scale >= 1024) {
    scale *= 1024;
    ++unit;
  }
  double v = static_cast<double>(bytes) / static_cast<double>(scale);
  // 1023.96 MiB reads better as 1 GiB than as 1024.0 MiB.
  if (std::round(v * 10) >= 10240 && unit < 5) {
    scale *= 1024;
    ++unit;
    v = static_cast<double>(bytes) / static_cast<double>(scale);
  }
  char text[32];
  if (bytes % scale == 0)
    std::snprintf(text, sizeof(text), "%.0f %s", v, kUnits[unit]);
  else
    std::snprintf(text, sizeof(text), "%.1f %s", v, kUnits[unit]);
  return text;
}

// "3.2 GiB (3435973836 bytes)"; below 1 KiB just "100 bytes".
inline std::string describeBytes(uint64_t bytes) {
  if (bytes < 1024)
    return formatBytes(bytes);
  return formatBytes(bytes) + " (" + std::to_string(bytes) + " bytes)";
}

// Reads a size: a number (a decimal fraction allowed) with an optional
// binary unit: K, M, G, T, P, each also as KiB or KB and in either case (all
// powers of 1024), or B / no unit for bytes. The size must be at least one
// byte and at most 2^63 - 1. On failure `error` says why, without the text.
inline bool parseByteSize(std::string_view text, uint64_t &out,
                          std::string &error) {
  size_t i = 0;
  while (i < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
    ++i;
  std::string number(text.substr(0, i));
  std::string unit;
  for (char c : text.substr(i))
    unit += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (number.empty() || number == "." ||
      number.find('.') != number.rfind('.')) {
    error = "is not a size: give a number with an optional unit, e.g. 512M, "
            "16G, 1.5GiB or 1073741824 (bytes)";
    return false;
  }
  int shift = -1;
  if (unit.empty() || unit == "b")
    shift = 0;
  static const char kPrefixes[] = "kmgtp";
  for (int p = 0; p < 5 && shift < 0; ++p) {
    std::string k(1, kPrefixes[p]);
    if (unit == k || unit == k + "b" || unit == k + "ib")
      shift = 10 * (p + 1);
  }
  if (shift < 0) {
    error = "has an unknown unit '" + std::string(text.substr(i)) +
            "' (units: B, K, M, G, T, P; KiB and KB mean K)";
    return false;
  }
  // Whole part and fraction apart, so plain byte counts stay exact.
  size_t dot = number.find('.');
  std::string whole = number.substr(0, dot);
  std::string frac = dot == std::string::npos ? "" : number.substr(dot + 1);
  uint64_t w = 0;
  for (char c : whole)
    if (__builtin_mul_overflow(w, uint64_t(10), &w) ||
        __builtin_add_overflow(w, uint64_t(c - '0'), &w))
      w = UINT64_MAX;
  double f = 0, digit = 0.1;
  for (char c : frac) {
    f += (c - '0') * digit;
    digit /= 10;
  }
  uint64_t bytes = 0;
  constexpr uint64_t kMax = uint64_t(INT64_MAX);
  if (w > (kMax >> shift)) {
    error = "is too large (at most 2^63 - 1 bytes)";
    return false;
  }
  bytes = (w << shift) + static_cast<uint64_t>(f * std::ldexp(1.0, shift));
  if (bytes > kMax) {
    error = "is too large (at most 2^63 - 1 bytes)";
    return false;
  }
  if (bytes == 0) {
    error = "is zero: a size must be at least one byte";
    return false;
  }
  out = bytes;
  return true;
}

} // namespace ampc::rt

#endif // AMPC_RUNTIME_BYTESIZE_H
