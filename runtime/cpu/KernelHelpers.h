//===- KernelHelpers.h - checks and compute buffers for CPU kernels -------===//
//
// Shared by the CPU kernels and their gradients: validating a call without
// data (arity, dtypes, attributes, shapes) with messages that name the
// operand or attribute; moving whole tensors or runs of elements between
// their stored dtype and the compute type (float for f16/bf16/f32, double
// for f64) so each stored value is rounded exactly once; and the loops that
// a forward kernel and its gradient must do alike (lane sums, softmax
// columns, numpy broadcast indices, gather's index resolution).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_KERNELHELPERS_H
#define AMPC_RUNTIME_CPU_KERNELHELPERS_H

#include "runtime/cpu/CpuKernels.h"
#include "runtime/cpu/Parallel.h"
#include "runtime/cpu/Registry.h"
#include "runtime/cpu/TypedIO.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace ampc::rt::cpu {

// Pooling and losses live in their own files but join the table through the
// contraction and reduction families (Registry.h lists five families).
void addPoolingKernels(std::vector<KernelEntry> &out);
void addLossKernels(std::vector<KernelEntry> &out);

namespace kh {

inline std::string shapeStr(const Shape &s) { return rt::str(s); }

// An optional input is there when the call lists it and flags it present.
inline bool hasInput(const OpCall &call, size_t i) {
  return i < call.inputs.size() && i < call.present.size() && call.present[i];
}

// skip, when the call has it, is the flag of a step whose gradients are not
// to be used (an earlier overflow, or an accumulation step).
inline bool skipped(const OpCall &call, size_t index) {
  return hasInput(call, index) && elementAsInt(call.inputs[index], 0) != 0;
}

// Whether a variadic op's last input is its optional skip: an i1 scalar,
// which none of the float operands before it can be (check_finite).
inline bool endsWithSkip(const OpCall &call) {
  return !call.inputs.empty() && call.inputs.back().dtype == DType::I1 &&
         call.inputs.back().rank() == 0;
}

// What a loss-scaled gradient is multiplied by: 1 / scale rounded to f32
// first (PyTorch's GradScaler). check_finite and the updates that unscale
// as they read share it, so a gradient passes the check exactly when its
// unscaled value is what the update sees.
inline float unscaleFactor(const TensorView &scale) {
  return 1.0f / static_cast<float>(elementAsDouble(scale, 0));
}

// `required` inputs must all be present; up to `total` may be listed.
inline Status checkArity(const OpCall &call, size_t required, size_t total,
                         size_t outputs) {
  if (call.inputs.size() < required || call.inputs.size() > total)
    return Status::error(
        "expects " +
        (required == total
             ? std::to_string(required)
             : std::to_string(required) + " to " + std::to_string(total)) +
        " inputs, got " + std::to_string(call.inputs.size()));
  for (size_t i = 0; i < required; ++i)
    if (!call.present[i])
      return Status::error("input " + std::to_string(i) +
                           " is required but marked absent");
  if (call.outputs.size() != outputs)
    return Status::error("expects " + std::to_string(outputs) +
                         " outputs, got " +
                         std::to_string(call.outputs.size()));
  if (!call.attrs)
    return Status::error("has no attribute list");
  return Status::ok();
}

inline Status checkFloat(const TensorView &t, const std::string &what) {
  if (!isFloat(t.dtype))
    return Status::error(what + " must be f32, f16, bf16 or f64, got " +
                         std::string(name(t.dtype)));
  return Status::ok();
}
inline Status checkNumeric(const TensorView &t, const std::string &what) {
  if (!isFloat(t.dtype) && !isInt(t.dtype))
    return Status::error(what + " must be a float or i64/i32 tensor, got " +
                         std::string(name(t.dtype)));
  return Status::ok();
}
inline Status checkIntTensor(const TensorView &t, const std::string &what) {
  if (!isInt(t.dtype))
    return Status::error(what + " must be i64 or i32, got " +
                         std::string(name(t.dtype)));
  return Status::ok();
}
inline Status checkSameDType(const TensorView &t, const std::string &what,
                             DType expected, const std::string &whatExpected) {
  if (t.dtype != expected)
    return Status::error(what + " has element type " +
                         std::string(name(t.dtype)) + " but " + whatExpected +
                         " has " + std::string(name(expected)));
  return Status::ok();
}
inline Status checkShape(const TensorView &t, const std::string &what,
                         const Shape &expected) {
  if (t.shape != expected)
    return Status::error(what + " has shape " + shapeStr(t.shape) +
                         " but the op computes " + shapeStr(expected));
  return Status::ok();
}
inline Status checkOutput(const OpCall &call, size_t i, const std::string &what,
                          const Shape &shape, DType dtype) {
  const TensorView &o = call.outputs[i];
  if (o.dtype != dtype)
    return Status::error(what + " has element type " +
                         std::string(name(o.dtype)) + " but the op computes " +
                         std::string(name(dtype)));
  return checkShape(o, what, shape);
}
inline Status checkScalarOf(const TensorView &t, const std::string &what,
                            DType d) {
  if (t.dtype != d || t.rank() != 0)
    return Status::error(what + " must be a scalar (rank 0) " +
                         std::string(name(d)) + " tensor, got " + t.typeStr());
  return Status::ok();
}

// The 'axis' attribute of softmax, layer_norm and their gradients names a
// dimension of the input.
inline Status checkAxis(int64_t axis, int64_t rank) {
  if (axis < 0 || axis >= rank)
    return Status::error("attribute 'axis' " + std::to_string(axis) +
                         " is out of range [0, " + std::to_string(rank) + ")");
  return Status::ok();
}

inline const char *kindName(AttrValue::Kind k) {
  switch (k) {
  case AttrValue::Kind::Int:
    return "an integer";
  case AttrValue::Kind::Float:
    return "a float";
  case AttrValue::Kind::String:
    return "a string";
  case AttrValue::Kind::Ints:
    return "an integer list";
  }
  return "?";
}

inline Status attrOfKind(const Attrs &attrs, const std::string &key,
                         AttrValue::Kind kind, bool required,
                         const AttrValue *&out) {
  out = attrs.find(key);
  if (!out) {
    if (required)
      return Status::error("attribute '" + key + "' is missing");
    return Status::ok();
  }
  if (out->kind != kind)
    return Status::error("attribute '" + key + "' must be " + kindName(kind) +
                         ", got " + kindName(out->kind));
  return Status::ok();
}

// A missing attribute takes `dflt`; without a default it is an error.
inline Status getInt(const Attrs &attrs, const std::string &key,
                     std::optional<int64_t> dflt, int64_t &out) {
  const AttrValue *a;
  AMPC_RETURN_IF_ERROR(
      attrOfKind(attrs, key, AttrValue::Kind::Int, !dflt.has_value(), a));
  out = a ? a->i : *dflt;
  return Status::ok();
}
inline Status getBool(const Attrs &attrs, const std::string &key, bool dflt,
                      bool &out) {
  int64_t v;
  AMPC_RETURN_IF_ERROR(getInt(attrs, key, dflt ? 1 : 0, v));
  if (v != 0 && v != 1)
    return Status::error("attribute '" + key + "' must be 0 or 1, got " +
                         std::to_string(v));
  out = v == 1;
  return Status::ok();
}
inline Status getFloat(const Attrs &attrs, const std::string &key,
                       std::optional<double> dflt, double &out) {
  const AttrValue *a;
  AMPC_RETURN_IF_ERROR(
      attrOfKind(attrs, key, AttrValue::Kind::Float, !dflt.has_value(), a));
  out = a ? a->f : *dflt;
  return Status::ok();
}
inline Status getString(const Attrs &attrs, const std::string &key,
                        std::optional<std::string> dflt, std::string &out) {
  const AttrValue *a;
  AMPC_RETURN_IF_ERROR(
      attrOfKind(attrs, key, AttrValue::Kind::String, !dflt.has_value(), a));
  out = a ? a->s : *dflt;
  return Status::ok();
}
inline Status getInts(const Attrs &attrs, const std::string &key,
                      std::vector<int64_t> &out) {
  const AttrValue *a;
  AMPC_RETURN_IF_ERROR(
      attrOfKind(attrs, key, AttrValue::Kind::Ints, /*required=*/true, a));
  out = a->ints;
  return Status::ok();
}

// A float attribute's value as messages print it.
inline std::string num(double v) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", v);
  return text;
}

// Counts and intervals given as attributes.
inline Status checkAtLeastOne(const char *name, int64_t v) {
  if (v < 1)
    return Status::error("attribute '" + std::string(name) +
                         "' must be >= 1, got " + std::to_string(v));
  return Status::ok();
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

constexpr int64_t kConvertChunk = 16384;

// The whole tensor in compute type T: its own memory when already stored as
// T, else a converted copy in `storage`.
template <typename T>
const T *computeView(const TensorView &t, std::vector<T> &storage,
                     const CpuContext &ctx) {
  if (t.dtype == nativeDType<T>())
    return static_cast<const T *>(t.data);
  int64_t n = t.numElements();
  storage.resize(static_cast<size_t>(n));
  T *dst = storage.data();
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
template <typename T>
T *computeOut(const TensorView &t, std::vector<T> &storage) {
  if (t.dtype == nativeDType<T>())
    return static_cast<T *>(t.data);
  storage.resize(static_cast<size_t>(t.numElements()));
  return storage.data();
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

inline int64_t product(const Shape &s, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end && i < s.size(); ++i)
    n *= s[i];
  return n;
}

// For each element of `to` (row-major), the element of a tensor of shape
// `from` that numpy broadcasting (right-aligned) reads.
inline std::vector<int64_t> broadcastIndex(const Shape &from, const Shape &to) {
  int64_t total = numElements(to);
  std::vector<int64_t> out(static_cast<size_t>(total));
  size_t off = to.size() - from.size();
  std::vector<int64_t> strides(to.size(), 0), idx(to.size(), 0);
  int64_t s = 1;
  for (size_t i = to.size(); i-- > off;) {
    int64_t d = from[i - off];
    strides[i] = d == 1 ? 0 : s;
    s *= d;
  }
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t si = 0;
    for (size_t i = 0; i < to.size(); ++i)
      si += idx[i] * strides[i];
    out[flat] = si;
    for (size_t i = to.size(); i-- > 0;) {
      if (++idx[i] < to[i])
        break;
      idx[i] = 0;
    }
  }
  return out;
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

// Softmax (or log-softmax) down the columns of a row-major [rows, cols]
// block, in place: x - max is formed first so large inputs cannot overflow.
template <typename T>
void softmaxColumns(T *buf, int64_t rows, int64_t cols, bool log) {
  if (cols == 1) {
    // One contiguous row (softmax over the last axis): scalar state keeps
    // the loops tight.
    T mx = -std::numeric_limits<T>::infinity(), sum = 0;
    for (int64_t r = 0; r < rows; ++r)
      mx = buf[r] > mx ? buf[r] : mx;
    for (int64_t r = 0; r < rows; ++r) {
      T d = buf[r] - mx;
      T e = std::exp(d);
      sum += e;
      buf[r] = log ? d : e;
    }
    if (log) {
      T ls = std::log(sum);
      for (int64_t r = 0; r < rows; ++r)
        buf[r] -= ls;
    } else {
      for (int64_t r = 0; r < rows; ++r)
        buf[r] /= sum;
    }
    return;
  }
  std::vector<T> mx(static_cast<size_t>(cols),
                    -std::numeric_limits<T>::infinity());
  std::vector<T> sum(static_cast<size_t>(cols), T(0));
  for (int64_t r = 0; r < rows; ++r) {
    const T *x = buf + r * cols;
    for (int64_t c = 0; c < cols; ++c) // NaN is caught by the arithmetic below
      mx[c] = x[c] > mx[c] ? x[c] : mx[c];
  }
  for (int64_t r = 0; r < rows; ++r) {
    T *x = buf + r * cols;
    for (int64_t c = 0; c < cols; ++c) {
      T d = x[c] - mx[c];
      T e = std::exp(d);
      sum[c] += e;
      x[c] = log ? d : e;
    }
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
    return loadC(t, base, rows * cols, buf);
  for (int64_t r = 0; r < rows; ++r)
    loadC(t, base + r * stride, cols, buf + r * cols);
}
template <typename T>
void storeRows(const T *buf, int64_t rows, int64_t stride, int64_t cols,
               const TensorView &t, int64_t base) {
  if (stride == cols)
    return storeC(buf, rows * cols, t, base);
  for (int64_t r = 0; r < rows; ++r)
    storeC(buf + r * cols, cols, t, base + r * stride);
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

// The window attributes conv2d and the pooling ops share: 2 strides and
// dilations >= 1, 4 pads [top, left, bottom, right] >= 0.
inline Status checkWindow(const std::vector<int64_t> &strides,
                          const std::vector<int64_t> &pads,
                          const std::vector<int64_t> &dilations) {
  if (strides.size() != 2)
    return Status::error("attribute 'strides' must have 2 entries, got " +
                         std::to_string(strides.size()));
  if (pads.size() != 4)
    return Status::error("attribute 'pads' must have 4 entries [top, left, "
                         "bottom, right], got " +
                         std::to_string(pads.size()));
  if (dilations.size() != 2)
    return Status::error("attribute 'dilations' must have 2 entries, got " +
                         std::to_string(dilations.size()));
  for (int64_t s : strides)
    if (s < 1)
      return Status::error("attribute 'strides' must be >= 1, got " +
                           shapeStr(strides));
  for (int64_t d : dilations)
    if (d < 1)
      return Status::error("attribute 'dilations' must be >= 1, got " +
                           shapeStr(dilations));
  for (int64_t p : pads)
    if (p < 0)
      return Status::error("attribute 'pads' must be >= 0, got " +
                           shapeStr(pads));
  return Status::ok();
}

} // namespace kh
} // namespace ampc::rt::cpu

#endif // AMPC_RUNTIME_CPU_KERNELHELPERS_H
