//===- ElementValue.h - one element of any dtype, as a double ---*- C++ -*-===//
//
// The scalar reference the kernel tests write inputs and read results with:
// Half.h's conversions (checked exhaustively by HalfTest), not TypedIO.h,
// which the kernels under test use. f16/bf16 round through f32 (callers use
// values exact in f32); integers take the value as is; i1 is 0 or 1.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_TEST_RUNTIME_ELEMENTVALUE_H
#define AMPC_TEST_RUNTIME_ELEMENTVALUE_H

#include "runtime/DType.h"
#include "runtime/Half.h"

#include <cstdint>
#include <cstring>

namespace ampc::rt::test {

inline void writeElement(void *at, DType dtype, double v) {
  auto put = [at](const auto &x) { std::memcpy(at, &x, sizeof x); };
  switch (dtype) {
  case DType::F32:
    return put(static_cast<float>(v));
  case DType::F64:
    return put(v);
  case DType::F16:
    return put(floatToHalfBits(static_cast<float>(v)));
  case DType::BF16:
    return put(floatToBFloatBits(static_cast<float>(v)));
  case DType::I64:
    return put(static_cast<int64_t>(v));
  case DType::I32:
    return put(static_cast<int32_t>(v));
  case DType::I1:
    return put(static_cast<uint8_t>(v != 0));
  }
}

inline double readElement(const void *at, DType dtype) {
  auto get = [at](auto x) {
    std::memcpy(&x, at, sizeof x);
    return x;
  };
  switch (dtype) {
  case DType::F32:
    return get(float());
  case DType::F64:
    return get(double());
  case DType::F16:
    return halfBitsToFloat(get(uint16_t()));
  case DType::BF16:
    return bfloatBitsToFloat(get(uint16_t()));
  case DType::I64:
    return static_cast<double>(get(int64_t()));
  case DType::I32:
    return get(int32_t());
  case DType::I1:
    return get(uint8_t());
  }
  return 0;
}

} // namespace ampc::rt::test

#endif // AMPC_TEST_RUNTIME_ELEMENTVALUE_H
