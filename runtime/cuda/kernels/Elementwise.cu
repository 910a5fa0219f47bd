//===- Elementwise.cu - the elementwise interpreter and dropout -----------===//
//
// One kernel runs every elementwise op and fused chain: it interprets the
// step table (ElementwiseProgram.h) per output element, holding each value
// in the CPU's compute domain (f32 for f32/f16/bf16, f64, int64) and
// rounding every step's result to its dtype as a store would, so results
// follow runtime/cpu/Elementwise.cpp step for step. The _vec8 variant takes
// 8 consecutive elements per thread with 16-byte loads and stores when every
// input is contiguous with the output shape. (Dropout, which the CPU keeps
// with the movement ops, is in Movement.cu.)
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/Common.cuh"
#include "runtime/cuda/kernels/ElementwiseProgram.h"
#include "runtime/ops/ElementwiseValue.h"

namespace ampc_cuda {
namespace {

namespace math = ampc::rt::ops::math;

//===----------------------------------------------------------------------===//
// Values: 64 bits holding a float, a double or an int64 by domain
//===----------------------------------------------------------------------===//

__device__ __forceinline__ float asF(uint64_t v) {
  return __uint_as_float(static_cast<uint32_t>(v));
}
__device__ __forceinline__ double asD(uint64_t v) {
  return __longlong_as_double(static_cast<long long>(v));
}
__device__ __forceinline__ int64_t asI(uint64_t v) {
  return static_cast<int64_t>(v);
}
__device__ __forceinline__ uint64_t ofF(float f) { return __float_as_uint(f); }
__device__ __forceinline__ uint64_t ofD(double d) {
  return static_cast<uint64_t>(__double_as_longlong(d));
}
__device__ __forceinline__ uint64_t ofI(int64_t i) {
  return static_cast<uint64_t>(i);
}
__device__ __forceinline__ uint64_t ofT(float v) { return ofF(v); }
__device__ __forceinline__ uint64_t ofT(double v) { return ofD(v); }

__device__ __forceinline__ int sizeOfDtype(int dtype) {
  switch (dtype) {
  case kF16:
  case kBF16:
    return 2;
  case kF32:
  case kI32:
    return 4;
  case kI1:
    return 1;
  default:
    return 8;
  }
}

// Element i of a stored tensor, in its dtype's domain.
__device__ __forceinline__ uint64_t loadValue(const void *p, int dtype,
                                              int64_t i) {
  switch (dtype) {
  case kF32:
    return ofF(static_cast<const float *>(p)[i]);
  case kF16:
    return ofF(__half2float(static_cast<const __half *>(p)[i]));
  case kBF16:
    return ofF(__bfloat162float(static_cast<const __nv_bfloat16 *>(p)[i]));
  case kF64:
    return ofD(static_cast<const double *>(p)[i]);
  case kI64:
    return ofI(static_cast<const int64_t *>(p)[i]);
  case kI32:
    return ofI(static_cast<const int32_t *>(p)[i]);
  default:
    return ofI(static_cast<const uint8_t *>(p)[i] != 0);
  }
}

// Stores a value already rounded to `dtype` (so every conversion is exact).
__device__ __forceinline__ void storeValue(void *p, int dtype, int64_t i,
                                           uint64_t v) {
  switch (dtype) {
  case kF32:
    static_cast<float *>(p)[i] = asF(v);
    break;
  case kF16:
    static_cast<__half *>(p)[i] = __float2half_rn(asF(v));
    break;
  case kBF16:
    static_cast<__nv_bfloat16 *>(p)[i] = __float2bfloat16_rn(asF(v));
    break;
  case kF64:
    static_cast<double *>(p)[i] = asD(v);
    break;
  case kI64:
    static_cast<int64_t *>(p)[i] = asI(v);
    break;
  case kI32:
    static_cast<int32_t *>(p)[i] = static_cast<int32_t>(asI(v));
    break;
  default:
    static_cast<uint8_t *>(p)[i] = asI(v) != 0;
    break;
  }
}

//===----------------------------------------------------------------------===//
// Conversions (runtime/TypedIO.cpp's storeFrom then loadAs)
//===----------------------------------------------------------------------===//

// Float to int truncates toward zero, saturates, and takes NaN to 0.
template <typename To, typename From>
__device__ __forceinline__ int64_t floatToInt(From v) {
  const To hi = To(~(uint64_t(1) << (sizeof(To) * 8 - 1)));
  const To lo = To(-hi - 1);
  if (v != v)
    return 0;
  if (v >= static_cast<From>(hi))
    return hi;
  if (v <= static_cast<From>(lo))
    return lo;
  return static_cast<To>(v);
}

// An int64 as an f32 rounded to odd, so that one more rounding to f16/bf16
// is the correctly rounded result (as the CPU's int64ToOddFloat).
__device__ __forceinline__ float int64ToOddFloat(int64_t v) {
  uint64_t u = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  if (u < (uint64_t(1) << 24))
    return static_cast<float>(v);
  int shift = 64 - __clzll(static_cast<long long>(u)) - 24;
  uint64_t m = u >> shift;
  m |= (u & ((uint64_t(1) << shift) - 1)) != 0;
  float f = ldexpf(static_cast<float>(m), shift);
  return v < 0 ? -f : f;
}

// A value of domain `from` converted to dtype `to`, in to's domain.
__device__ uint64_t convert(uint64_t v, int from, int to) {
  if (from == kDomF) {
    const float f = asF(v);
    switch (to) {
    case kF32:
      return ofF(f);
    case kF16:
      return ofF(__half2float(__float2half_rn(f)));
    case kBF16:
      return ofF(__bfloat162float(__float2bfloat16_rn(f)));
    case kF64:
      return ofD(f);
    case kI64:
      return ofI(floatToInt<int64_t>(f));
    case kI32:
      return ofI(floatToInt<int32_t>(f));
    default:
      return ofI(f != 0.f);
    }
  }
  if (from == kDomD) {
    const double d = asD(v);
    switch (to) {
    case kF32:
      return ofF(__double2float_rn(d));
    case kF16: // one rounding (cvt.rn.f16.f64), never through an f32
      return ofF(__half2float(__double2half(d)));
    case kBF16:
      return ofF(__bfloat162float(__double2bfloat16(d)));
    case kF64:
      return ofD(d);
    case kI64:
      return ofI(floatToInt<int64_t>(d));
    case kI32:
      return ofI(floatToInt<int32_t>(d));
    default:
      return ofI(d != 0.0);
    }
  }
  const int64_t x = asI(v);
  switch (to) {
  case kF32:
    return ofF(__ll2float_rn(x));
  case kF16:
    return ofF(__half2float(__float2half_rn(int64ToOddFloat(x))));
  case kBF16:
    return ofF(__bfloat162float(__float2bfloat16_rn(int64ToOddFloat(x))));
  case kF64:
    return ofD(__ll2double_rn(x));
  case kI64:
    return ofI(x);
  case kI32:
    return ofI(static_cast<int32_t>(x));
  default:
    return ofI(x != 0);
  }
}

//===----------------------------------------------------------------------===//
// Step arithmetic: the float ops' values are Elementwise.def's (the CPU's
// floatLoop computes the same); the integer forms follow the CPU's
// intUnary/intBinary.
//===----------------------------------------------------------------------===//

template <typename T> __device__ T floatStep(const EwStep &st, T a, T b) {
  const ampc::rt::ops::ew::AttrsAs<T, EwStep> P{st};
  switch (st.op) {
#define AMPC_EW(name, kind, sig, expr)                                         \
  AMPC_EW_IF_ARITH_##sig(case kEw##kind : return math::value##kind(P, a, b);)
#include "runtime/ops/Elementwise.def"
  default:
    return a;
  }
}

// The comparisons and logical ops (the CPU's predicateLoop): operands in T,
// the step's srcDom; i1 operands as 0 or 1.
__device__ __forceinline__ bool isPredicate(int op) {
  switch (op) {
#define AMPC_EW(name, kind, sig, expr)                                         \
  AMPC_EW_IF_PREDICATE_##sig(case kEw##kind : return true;)
#include "runtime/ops/Elementwise.def"
  default:
    return false;
  }
}

template <typename T> __device__ bool predicateStep(const EwStep &st, T a, T b) {
  const ampc::rt::ops::ew::AttrsAs<T, EwStep> P{st};
  switch (st.op) {
#define AMPC_EW(name, kind, sig, expr)                                         \
  AMPC_EW_IF_PREDICATE_##sig(case kEw##kind                                   \
                             : return math::value##kind(P, a, b);)
#include "runtime/ops/Elementwise.def"
  default:
    return false;
  }
}

// Integer arithmetic wraps (two's complement), as on the CPU. A division by
// zero gives 0: the CPU reports it as an error, which a captured launch
// cannot.
__device__ int64_t intStep(const EwStep &st, int64_t a, int64_t b) {
  const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (st.op) {
  case kEwNeg:
    return static_cast<int64_t>(0 - ua);
  case kEwAbs:
    return a < 0 ? static_cast<int64_t>(0 - ua) : a;
  case kEwClip:
    return min(max(a, st.imin), st.imax);
  case kEwAdd:
    return static_cast<int64_t>(ua + ub);
  case kEwSub:
    return static_cast<int64_t>(ua - ub);
  case kEwMul:
    return static_cast<int64_t>(ua * ub);
  case kEwDiv:
    if (b == 0)
      return 0;
    return b == -1 ? static_cast<int64_t>(0 - ua) : a / b;
  default:
    return a;
  }
}

__device__ __forceinline__ uint64_t runStep(const EwStep &st, uint64_t a,
                                            uint64_t b, uint64_t c) {
  if (st.op == kEwCast)
    return convert(a, st.srcDom, st.dtype);
  if (st.op == kEwWhere) // x and y already hold values of the step dtype
    return asI(a) != 0 ? b : c;
  if (isPredicate(st.op)) { // an i1 result: 0 or 1, stored exactly
    if (st.srcDom == kDomF)
      return ofI(predicateStep<float>(st, asF(a), asF(b)));
    if (st.srcDom == kDomD)
      return ofI(predicateStep<double>(st, asD(a), asD(b)));
    return ofI(predicateStep<int64_t>(st, asI(a), asI(b)));
  }
  uint64_t r;
  if (st.dom == kDomF)
    r = ofT(floatStep<float>(st, asF(a), asF(b)));
  else if (st.dom == kDomD)
    r = ofT(floatStep<double>(st, asD(a), asD(b)));
  else
    r = ofI(intStep(st, asI(a), asI(b)));
  // Rounded to the step dtype as a store and reload would.
  return convert(r, st.dom, st.dtype);
}

// Runs the chain for one element; `load(k)` gives kernel input k's value.
template <typename Load>
__device__ __forceinline__ uint64_t evalElement(const EwStep *steps,
                                                int numSteps, int resultSlot,
                                                Load load) {
  uint64_t slot[kEwMaxSlots];
  for (int s = 0; s < numSteps; ++s) {
    const EwStep &st = steps[s];
    uint64_t a[3] = {0, 0, 0};
    for (int j = 0; j < st.arity; ++j) {
      const int ref = st.operand[j];
      a[j] = ref >= 0 ? load(ref) : slot[-ref - 1];
    }
    slot[st.result] = runStep(st, a[0], a[1], a[2]);
  }
  return slot[resultSlot];
}

// Copies the input and step tables into shared memory (they are read by
// every element; shared memory also tells the compiler no store aliases
// them). Returns the header.
__device__ __forceinline__ EwHeader loadProgram(const char *table,
                                                const EwInput *&inputs,
                                                const EwStep *&steps) {
  extern __shared__ uint64_t smem[];
  const EwHeader h = *reinterpret_cast<const EwHeader *>(table);
  const uint64_t *src =
      reinterpret_cast<const uint64_t *>(table + sizeof(EwHeader));
  const int words = static_cast<int>(
      (h.numInputs * sizeof(EwInput) + h.numSteps * sizeof(EwStep)) / 8);
  for (int w = threadIdx.x; w < words; w += blockDim.x)
    smem[w] = src[w];
  __syncthreads();
  inputs = reinterpret_cast<const EwInput *>(smem);
  steps = reinterpret_cast<const EwStep *>(
      reinterpret_cast<const char *>(smem) + h.numInputs * sizeof(EwInput));
  return h;
}

} // namespace
} // namespace ampc_cuda

using namespace ampc_cuda;

// Any shapes: each input reaches element i through its mode (and for a
// broadcast input, the strides over the merged output dims).
extern "C" __global__ void __launch_bounds__(256)
    ampc_elementwise(const char *__restrict__ table) {
  const EwInput *inputs;
  const EwStep *steps;
  const EwHeader h = loadProgram(table, inputs, steps);
  AMPC_GRID_STRIDE(i, h.n) {
    int64_t idx[kEwMaxRank];
    if (h.strided) {
      int64_t rem = i;
      for (int d = h.rank - 1; d >= 0; --d) {
        idx[d] = rem % h.dims[d];
        rem /= h.dims[d];
      }
    }
    auto load = [&](int k) {
      const EwInput &in = inputs[k];
      int64_t off = 0;
      if (in.mode == kModeContig) {
        off = i;
      } else if (in.mode == kModeStrided) {
        for (int d = 0; d < h.rank; ++d)
          off += idx[d] * in.strides[d];
      }
      return loadValue(in.ptr, in.dtype, off);
    };
    storeValue(h.out, h.outDtype, i,
               evalElement(steps, h.numSteps, h.resultSlot, load));
  }
}

// Every input contiguous with the output's shape, every address aligned to
// min(16, 8 * element size) bytes: 8 elements per thread, read and written
// as whole 8- or 16-byte words; the last n % 8 elements one per thread.
extern "C" __global__ void __launch_bounds__(256)
    ampc_elementwise_vec8(const char *__restrict__ table) {
  const EwInput *inputs;
  const EwStep *steps;
  const EwHeader h = loadProgram(table, inputs, steps);
  const int64_t groups = h.n / kEwVec;
  const int outSize = sizeOfDtype(h.outDtype);
  AMPC_GRID_STRIDE(g, groups) {
    const int64_t base = g * kEwVec;
    uint4 raw[kEwMaxVecInputs][4];
    for (int k = 0; k < h.numInputs && k < kEwMaxVecInputs; ++k) {
      const EwInput &in = inputs[k];
      if (in.mode == kModeUnused)
        continue;
      const int size = sizeOfDtype(in.dtype);
      const char *p = static_cast<const char *>(in.ptr) + base * size;
      if (size == 1) {
        *reinterpret_cast<uint2 *>(&raw[k][0]) =
            *reinterpret_cast<const uint2 *>(p);
      } else {
        for (int q = 0; q < size / 2; ++q)
          raw[k][q] = reinterpret_cast<const uint4 *>(p)[q];
      }
    }
    uint4 res[4];
    for (int j = 0; j < kEwVec; ++j) {
      auto load = [&](int k) {
        return loadValue(&raw[k][0], inputs[k].dtype, j);
      };
      storeValue(&res[0], h.outDtype, j,
                 evalElement(steps, h.numSteps, h.resultSlot, load));
    }
    char *o = static_cast<char *>(h.out) + base * outSize;
    if (outSize == 1) {
      *reinterpret_cast<uint2 *>(o) = *reinterpret_cast<const uint2 *>(res);
    } else {
      for (int q = 0; q < outSize / 2; ++q)
        reinterpret_cast<uint4 *>(o)[q] = res[q];
    }
  }
  const int64_t tail = h.n - groups * kEwVec;
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t < tail) {
    const int64_t i = groups * kEwVec + t;
    auto load = [&](int k) {
      return loadValue(inputs[k].ptr, inputs[k].dtype, i);
    };
    storeValue(h.out, h.outDtype, i,
               evalElement(steps, h.numSteps, h.resultSlot, load));
  }
}
