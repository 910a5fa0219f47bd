//===- KernelHelpers.h - compute buffers and shared loops of CPU kernels --===//
//
// Shared by the CPU kernels and their gradients: moving whole tensors or
// runs of elements between their stored dtype and the compute type (float
// for f16/bf16/f32, double for f64) so each stored value is rounded exactly
// once, and the loops that a forward kernel and its gradient must do alike
// (lane sums, softmax columns, gather's index resolution). The
// backend-neutral checks and readers they use are runtime/ops's; `kh`
// brings them in by name.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_KERNELHELPERS_H
#define AMPC_RUNTIME_CPU_KERNELHELPERS_H

#include "runtime/TypedIO.h"
#include "runtime/cpu/CpuKernels.h"
#include "runtime/cpu/Parallel.h"
#include "runtime/cpu/Registry.h"
#include "runtime/cpu/Scratch.h"
#include "runtime/cpu/VectorExp.h"
#include "runtime/ops/AttrReaders.h"
#include "runtime/ops/Shapes.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace ampc::rt::cpu {

// Pooling and losses live in their own files but join the table through the
// contraction and reduction families (Registry.h lists five families).
void addPoolingKernels(std::vector<KernelEntry> &out);
void addLossKernels(std::vector<KernelEntry> &out);

namespace kh {

using namespace ops;

// skip, when the call has it, is the flag of a step whose gradients are not
// to be used (an earlier overflow, or an accumulation step).
inline bool skipped(const OpCall &call, size_t index) {
  return hasInput(call, index) && elementAsInt(call.inputs[index], 0) != 0;
}

// What a loss-scaled gradient is multiplied by: 1 / scale rounded to f32
// first (PyTorch's GradScaler). check_finite and the updates that unscale
// as they read share it, so a gradient passes the check exactly when its
// unscaled value is what the update sees.
inline float unscaleFactor(const TensorView &scale) {
  return 1.0f / static_cast<float>(elementAsDouble(scale, 0));
}

//===----------------------------------------------------------------------===//
// Compute buffers
//===----------------------------------------------------------------------===//

template <typename T> constexpr DType nativeDType() {
  return std::is_same<T, double>::value ? DType::F64 : DType::F32;
}

template <typename T>
inline void loadC(const TensorView &t, int64_t off, int64_t n, T *out) {
  if constexpr (std::is_same<T, double>::value)
    loadF64(t, off, n, out);
  else
    loadF32(t, off, n, out);
}
template <typename T>
inline void storeC(const T *in, int64_t n, const TensorView &t, int64_t off) {
  if constexpr (std::is_same<T, double>::value)
    storeF64(in, n, t, off);
  else
    storeF32(in, n, t, off);
}

// Any dtype in compute type T: float, double or int64_t (integers).
template <typename T>
inline void loadAny(const TensorView &t, int64_t off, int64_t n, T *out) {
  if constexpr (std::is_same<T, int64_t>::value)
    loadI64(t, off, n, out);
  else
    loadC(t, off, n, out);
}
template <typename T>
inline void storeAny(const T *in, int64_t n, const TensorView &t, int64_t off) {
  if constexpr (std::is_same<T, int64_t>::value)
    storeI64(in, n, t, off);
  else
    storeC(in, n, t, off);
}

// a + b in compute type T; int64 wraps (two's complement), as the integer
// sums and scans of both backends do.
template <typename T> T wrappingAdd(T a, T b) {
  if constexpr (std::is_same<T, int64_t>::value)
    return static_cast<int64_t>(static_cast<uint64_t>(a) +
                                static_cast<uint64_t>(b));
  else
    return a + b;
}

constexpr int64_t kConvertChunk = 16384;

// The whole tensor in compute type T: its own memory when already stored as
// T, else a converted copy in `storage`.
template <typename T>
const T *computeView(const TensorView &t, Scratch<T> &storage,
                     const CpuContext &ctx) {
  if (t.dtype == nativeDType<T>())
    return static_cast<const T *>(t.data);
  int64_t n = t.numElements();
  T *dst = storage.resize(static_cast<size_t>(n));
  int64_t chunks = (n + kConvertChunk - 1) / kConvertChunk;
  parallelFor(ctx, chunks, 4, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      int64_t off = c * kConvertChunk;
      loadC(t, off, std::min(kConvertChunk, n - off), dst + off);
    }
  });
  return dst;
}

// Where to compute an output: in place when stored as T, else in `storage`
// (finish with storeFromCompute, which rounds each value once).
template <typename T> T *computeOut(const TensorView &t, Scratch<T> &storage) {
  if (t.dtype == nativeDType<T>())
    return static_cast<T *>(t.data);
  return storage.resize(static_cast<size_t>(t.numElements()));
}
template <typename T>
void storeFromCompute(const T *buf, const TensorView &t,
                      const CpuContext &ctx) {
  if (t.dtype == nativeDType<T>() && buf == static_cast<const T *>(t.data))
    return;
  int64_t n = t.numElements();
  int64_t chunks = (n + kConvertChunk - 1) / kConvertChunk;
  parallelFor(ctx, chunks, 4, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      int64_t off = c * kConvertChunk;
      storeC(buf + off, std::min(kConvertChunk, n - off), t, off);
    }
  });
}

// The same for a run of elements [off, off + n) of `t`, as kernels that
// work through a tensor in chunks read and write it: in place when stored
// as T, else through `storage` (finish an output with storeRun).
template <typename T>
const T *computeRun(const TensorView &t, int64_t off, int64_t n,
                    Scratch<T> &storage) {
  if (t.dtype == nativeDType<T>())
    return static_cast<const T *>(t.data) + off;
  T *dst = storage.resize(static_cast<size_t>(n));
  loadC(t, off, n, dst);
  return dst;
}
template <typename T>
T *computeRunOut(const TensorView &t, int64_t off, int64_t n,
                 Scratch<T> &storage) {
  if (t.dtype == nativeDType<T>())
    return static_cast<T *>(t.data) + off;
  return storage.resize(static_cast<size_t>(n));
}
template <typename T>
void storeRun(const T *buf, const TensorView &t, int64_t off, int64_t n) {
  if (t.dtype != nativeDType<T>())
    storeC(buf, n, t, off);
}

// `t` broadcast to `to`, flattened, in compute type T.
template <typename T>
std::vector<T> expandTo(const TensorView &t, const Shape &to) {
  std::vector<T> src(static_cast<size_t>(t.numElements()));
  loadC(t, 0, t.numElements(), src.data());
  std::vector<int64_t> index = broadcastIndex(t.shape, to);
  std::vector<T> out(index.size());
  for (size_t k = 0; k < index.size(); ++k)
    out[k] = src[index[k]];
  return out;
}

// Sum of a contiguous run in 16 independent lanes: vectorizes without
// reassociation flags and is more accurate than one serial accumulator.
template <typename T> T sumRow(const T *x, int64_t n) {
  constexpr int L = 16;
  T acc[L] = {};
  int64_t i = 0;
  for (; i + L <= n; i += L)
    for (int l = 0; l < L; ++l)
      acc[l] += x[i + l];
  T tail = 0;
  for (; i < n; ++i)
    tail += x[i];
  for (int w = L / 2; w > 0; w /= 2)
    for (int l = 0; l < w; ++l)
      acc[l] += acc[l + w];
  return acc[0] + tail;
}

// Sum of term(i) for i in [0, n) in 8 double lanes, the tail added first and
// then the lanes in order: vectorizes without reassociation flags, and the
// fixed order keeps the result independent of who calls it.
template <typename Term> double laneSumD(int64_t n, Term term) {
  constexpr int L = 8;
  double acc[L] = {};
  int64_t i = 0;
  for (; i + L <= n; i += L)
    for (int l = 0; l < L; ++l)
      acc[l] += term(i + l);
  double s = 0;
  for (; i < n; ++i)
    s += term(i);
  for (int l = 0; l < L; ++l)
    s += acc[l];
  return s;
}
// sum(x) and sum(x * y) over a contiguous run, in double.
template <typename T> double sumD(const T *x, int64_t n) {
  return laneSumD(n, [x](int64_t i) { return static_cast<double>(x[i]); });
}
template <typename T> double dotD(const T *x, const T *y, int64_t n) {
  return laneSumD(n, [x, y](int64_t i) {
    return static_cast<double>(x[i]) * static_cast<double>(y[i]);
  });
}

// exp in place: f32 through VectorExp (eight lanes), f64 through std::exp.
template <typename T> void expAll(T *x, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    expInPlace(x, n);
  } else {
    for (int64_t i = 0; i < n; ++i)
      x[i] = std::exp(x[i]);
  }
}

// Softmax (or log-softmax) down the columns of a row-major [rows, cols]
// block, in place: x - max is formed first so large inputs cannot overflow.
// The exponentials of a row are taken at once (expAll); the sums add them
// in row order.
template <typename T>
void softmaxColumns(T *buf, int64_t rows, int64_t cols, bool log) {
  if (cols == 1) {
    // One contiguous row (softmax over the last axis): scalar state keeps
    // the loops tight.
    T mx = -std::numeric_limits<T>::infinity(), sum = 0;
    for (int64_t r = 0; r < rows; ++r)
      mx = buf[r] > mx ? buf[r] : mx;
    for (int64_t r = 0; r < rows; ++r)
      buf[r] -= mx;
    if (log) {
      // The differences stay; their exponentials go through a block.
      constexpr int64_t kBlock = 256;
      T e[kBlock];
      for (int64_t r0 = 0; r0 < rows; r0 += kBlock) {
        int64_t len = std::min(kBlock, rows - r0);
        std::copy(buf + r0, buf + r0 + len, e);
        expAll(e, len);
        for (int64_t j = 0; j < len; ++j)
          sum += e[j];
      }
      T ls = std::log(sum);
      for (int64_t r = 0; r < rows; ++r)
        buf[r] -= ls;
    } else {
      expAll(buf, rows);
      for (int64_t r = 0; r < rows; ++r)
        sum += buf[r];
      for (int64_t r = 0; r < rows; ++r)
        buf[r] /= sum;
    }
    return;
  }
  std::vector<T> mx(static_cast<size_t>(cols),
                    -std::numeric_limits<T>::infinity());
  std::vector<T> sum(static_cast<size_t>(cols), T(0));
  std::vector<T> e(log ? static_cast<size_t>(cols) : 0);
  for (int64_t r = 0; r < rows; ++r) {
    const T *x = buf + r * cols;
    for (int64_t c = 0; c < cols; ++c) // NaN is caught by the arithmetic below
      mx[c] = x[c] > mx[c] ? x[c] : mx[c];
  }
  for (int64_t r = 0; r < rows; ++r) {
    T *x = buf + r * cols;
    for (int64_t c = 0; c < cols; ++c)
      x[c] -= mx[c];
    T *ex = x;
    if (log) {
      std::copy(x, x + cols, e.data());
      ex = e.data();
    }
    expAll(ex, cols);
    for (int64_t c = 0; c < cols; ++c)
      sum[c] += ex[c];
  }
  if (log) {
    for (int64_t c = 0; c < cols; ++c)
      sum[c] = std::log(sum[c]);
    for (int64_t r = 0; r < rows; ++r) {
      T *x = buf + r * cols;
      for (int64_t c = 0; c < cols; ++c)
        x[c] -= sum[c];
    }
  } else {
    for (int64_t r = 0; r < rows; ++r) {
      T *x = buf + r * cols;
      for (int64_t c = 0; c < cols; ++c)
        x[c] /= sum[c];
    }
  }
}

// Loads / stores rows [0, rows) of width `cols` that lie `stride` apart
// starting at element `base` (one call when they are contiguous).
template <typename T>
void loadRows(const TensorView &t, int64_t base, int64_t rows, int64_t stride,
              int64_t cols, T *buf) {
  if (stride == cols)
    return loadAny(t, base, rows * cols, buf);
  for (int64_t r = 0; r < rows; ++r)
    loadAny(t, base + r * stride, cols, buf + r * cols);
}
template <typename T>
void storeRows(const T *buf, int64_t rows, int64_t stride, int64_t cols,
               const TensorView &t, int64_t base) {
  if (stride == cols)
    return storeAny(buf, rows * cols, t, base);
  for (int64_t r = 0; r < rows; ++r)
    storeAny(buf + r * cols, cols, t, base + r * stride);
}

// gather's (and gather_grad's) indices as rows of an axis of size `dim`,
// negative ones counted from the end. All are resolved before the caller
// writes anything, so a bad one fails the call with the output untouched.
inline Status resolveGatherIndices(const TensorView &indices, int64_t axis,
                                   int64_t dim, std::vector<int64_t> &rows) {
  int64_t count = indices.numElements();
  rows.resize(static_cast<size_t>(count));
  loadI64(indices, 0, count, rows.data());
  for (int64_t j = 0; j < count; ++j) {
    int64_t v = rows[j];
    if (v < -dim || v >= dim)
      return Status::error(
          "index " + std::to_string(v) + " (element " + std::to_string(j) +
          " of indices) is out of range for axis " + std::to_string(axis) +
          " of size " + std::to_string(dim));
    rows[j] = v < 0 ? v + dim : v;
  }
  return Status::ok();
}

} // namespace kh
} // namespace ampc::rt::cpu

#endif // AMPC_RUNTIME_CPU_KERNELHELPERS_H
