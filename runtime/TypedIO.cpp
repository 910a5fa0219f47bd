//===- TypedIO.cpp - dtype conversion loops -------------------------------===//
#include "runtime/TypedIO.h"

#include "runtime/Half.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace ampc::rt {
namespace {

template <typename T> const T *at(const TensorView &t, int64_t offset) {
  return static_cast<const T *>(t.data) + offset;
}
template <typename T> T *atMut(const TensorView &t, int64_t offset) {
  return static_cast<T *>(t.data) + offset;
}

template <typename To, typename From> To floatToInt(From v) {
  if (std::isnan(v))
    return 0;
  if (v >= static_cast<From>(std::numeric_limits<To>::max()))
    return std::numeric_limits<To>::max();
  if (v <= static_cast<From>(std::numeric_limits<To>::min()))
    return std::numeric_limits<To>::min();
  return static_cast<To>(v);
}

template <typename C>
void loadAs(const TensorView &t, int64_t off, int64_t n, C *out) {
  switch (t.dtype) {
  case DType::F32: {
    const float *p = at<float>(t, off);
    for (int64_t i = 0; i < n; ++i)
      out[i] = std::is_floating_point<C>::value ? static_cast<C>(p[i])
                                                : floatToInt<C>(p[i]);
    return;
  }
  case DType::F64: {
    const double *p = at<double>(t, off);
    for (int64_t i = 0; i < n; ++i)
      out[i] = std::is_floating_point<C>::value ? static_cast<C>(p[i])
                                                : floatToInt<C>(p[i]);
    return;
  }
  case DType::F16: {
    const uint16_t *p = at<uint16_t>(t, off);
    for (int64_t i = 0; i < n; ++i) {
      float v = halfBitsToFloat(p[i]);
      out[i] = std::is_floating_point<C>::value ? static_cast<C>(v)
                                                : floatToInt<C>(v);
    }
    return;
  }
  case DType::BF16: {
    const uint16_t *p = at<uint16_t>(t, off);
    for (int64_t i = 0; i < n; ++i) {
      float v = bfloatBitsToFloat(p[i]);
      out[i] = std::is_floating_point<C>::value ? static_cast<C>(v)
                                                : floatToInt<C>(v);
    }
    return;
  }
  case DType::I64: {
    const int64_t *p = at<int64_t>(t, off);
    for (int64_t i = 0; i < n; ++i)
      out[i] = static_cast<C>(p[i]);
    return;
  }
  case DType::I32: {
    const int32_t *p = at<int32_t>(t, off);
    for (int64_t i = 0; i < n; ++i)
      out[i] = static_cast<C>(p[i]);
    return;
  }
  case DType::I1: {
    const uint8_t *p = at<uint8_t>(t, off);
    for (int64_t i = 0; i < n; ++i)
      out[i] = static_cast<C>(p[i] != 0);
    return;
  }
  }
}

// An int64 as an f32 rounded to odd (truncated, with a sticky low bit), so
// that rounding it once more to f16/bf16 gives the correctly rounded result
// (rounding straight to f32 and then to 16 bits could round twice).
inline float int64ToOddFloat(int64_t v) {
  uint64_t u = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  if (u < (uint64_t(1) << 24))
    return static_cast<float>(v);
  int shift = 64 - __builtin_clzll(u) - 24;
  uint64_t m = u >> shift;
  m |= (u & ((uint64_t(1) << shift) - 1)) != 0;
  float f = std::ldexp(static_cast<float>(m), shift);
  return v < 0 ? -f : f;
}

template <typename C>
void storeFrom(const C *in, int64_t n, const TensorView &t, int64_t off) {
  switch (t.dtype) {
  case DType::F32: {
    float *p = atMut<float>(t, off);
    for (int64_t i = 0; i < n; ++i)
      p[i] = static_cast<float>(in[i]);
    return;
  }
  case DType::F64: {
    double *p = atMut<double>(t, off);
    for (int64_t i = 0; i < n; ++i)
      p[i] = static_cast<double>(in[i]);
    return;
  }
  case DType::F16: {
    uint16_t *p = atMut<uint16_t>(t, off);
    if constexpr (std::is_same<C, float>::value) {
      floatToHalf(in, p, n);
    } else {
      // f64 and int64 -> f16 must round once: through an f32 rounded to
      // odd (Half.h), never through an RNE f32.
      for (int64_t i = 0; i < n; ++i) {
        if constexpr (std::is_integral<C>::value) {
          p[i] = floatToHalfBits(int64ToOddFloat(static_cast<int64_t>(in[i])));
          continue;
        }
        p[i] = doubleToHalfBits(static_cast<double>(in[i]));
      }
    }
    return;
  }
  case DType::BF16: {
    uint16_t *p = atMut<uint16_t>(t, off);
    if constexpr (std::is_same<C, float>::value) {
      floatToBFloat(in, p, n);
    } else {
      for (int64_t i = 0; i < n; ++i) {
        if constexpr (std::is_integral<C>::value) {
          p[i] =
              floatToBFloatBits(int64ToOddFloat(static_cast<int64_t>(in[i])));
          continue;
        }
        p[i] = doubleToBFloatBits(static_cast<double>(in[i]));
      }
    }
    return;
  }
  case DType::I64: {
    int64_t *p = atMut<int64_t>(t, off);
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_floating_point<C>::value)
        p[i] = floatToInt<int64_t>(in[i]);
      else
        p[i] = static_cast<int64_t>(in[i]);
    }
    return;
  }
  case DType::I32: {
    int32_t *p = atMut<int32_t>(t, off);
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_floating_point<C>::value)
        p[i] = floatToInt<int32_t>(in[i]);
      else
        p[i] = static_cast<int32_t>(in[i]);
    }
    return;
  }
  case DType::I1: {
    uint8_t *p = atMut<uint8_t>(t, off);
    for (int64_t i = 0; i < n; ++i)
      p[i] = in[i] != 0;
    return;
  }
  }
}

} // namespace

void loadF32(const TensorView &t, int64_t offset, int64_t n, float *out) {
  if (t.dtype == DType::F16)
    return halfToFloat(at<uint16_t>(t, offset), out, n);
  if (t.dtype == DType::BF16)
    return bfloatToFloat(at<uint16_t>(t, offset), out, n);
  loadAs(t, offset, n, out);
}
void storeF32(const float *in, int64_t n, const TensorView &t, int64_t offset) {
  storeFrom(in, n, t, offset);
}
void loadF64(const TensorView &t, int64_t offset, int64_t n, double *out) {
  loadAs(t, offset, n, out);
}
void storeF64(const double *in, int64_t n, const TensorView &t,
              int64_t offset) {
  storeFrom(in, n, t, offset);
}
void loadI64(const TensorView &t, int64_t offset, int64_t n, int64_t *out) {
  loadAs(t, offset, n, out);
}
void storeI64(const int64_t *in, int64_t n, const TensorView &t,
              int64_t offset) {
  storeFrom(in, n, t, offset);
}

double elementAsDouble(const TensorView &t, int64_t index) {
  double v = 0;
  loadAs(t, index, 1, &v);
  return v;
}
int64_t elementAsInt(const TensorView &t, int64_t index) {
  int64_t v = 0;
  loadAs(t, index, 1, &v);
  return v;
}

} // namespace ampc::rt
