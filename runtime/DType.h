//===- DType.h - element types the runtime stores -------------------------===//
//
// The element types of Program tensors. i1 is stored one byte per element
// (0 or 1); f16 and bf16 are stored as their 16-bit patterns.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_DTYPE_H
#define AMPC_RUNTIME_DTYPE_H

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ampc::rt {

enum class DType : uint8_t { F32, F16, BF16, F64, I64, I32, I1 };

constexpr size_t sizeOf(DType t) {
  switch (t) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::I1:
    return 1;
  }
  return 0;
}

constexpr bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 ||
         t == DType::F64;
}
constexpr bool isInt(DType t) { return t == DType::I64 || t == DType::I32; }

constexpr std::string_view name(DType t) {
  switch (t) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::F64:
    return "f64";
  case DType::I64:
    return "i64";
  case DType::I32:
    return "i32";
  case DType::I1:
    return "i1";
  }
  return "?";
}

} // namespace ampc::rt

#endif // AMPC_RUNTIME_DTYPE_H
