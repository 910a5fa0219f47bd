//===- Elementwise.cpp - elementwise and fused elementwise CPU kernels ----===//
//
// Owns every elementwise graph op (unary math, binary arithmetic with numpy
// broadcasting, comparisons and logical ops, where, cast, and the activation
// gradients (grad, input) -> input_grad) and "fused", a chain of them run in
// one pass over memory. A standalone op runs as a one-step chain, so fused and
// unfused results come from the same code and agree bit for bit.
//
// The interpreter walks the output in chunks: each kernel input's chunk is
// loaded into a compute buffer (f32 for f32/f16/bf16, f64 for f64, int64 for
// i64/i32/i1), every step runs over the chunk in a tight loop, and each
// intermediate is rounded to its step dtype exactly as a store would round
// it (through TypedIO), so fusing never changes a result. Activation
// (Activation.h) hands the same loops to kernels that apply one op to values
// they hold: the GEMM epilogues.
//
//===----------------------------------------------------------------------===//
#include "runtime/TypedIO.h"
#include "runtime/cpu/Activation.h"
#include "runtime/cpu/Parallel.h"
#include "runtime/cpu/Registry.h"
#include "runtime/ops/ElementwisePlan.h"
#include "runtime/ops/ElementwiseValue.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>

namespace ampc::rt::cpu {
namespace {

using namespace ops::ew;
namespace math = ops::math;

// The compute domain of a dtype: what its values are held in while a chunk
// is being computed.
enum class Dom : uint8_t { F, D, I };
Dom domOf(DType t) {
  switch (t) {
  case DType::F32:
  case DType::F16:
  case DType::BF16:
    return Dom::F;
  case DType::F64:
    return Dom::D;
  default:
    return Dom::I;
  }
}

//===----------------------------------------------------------------------===//
// Step loops
//===----------------------------------------------------------------------===//

// Integer arithmetic wraps (two's complement) instead of being undefined.
inline int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) +
                              static_cast<uint64_t>(b));
}
inline int64_t wrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) -
                              static_cast<uint64_t>(b));
}
inline int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) *
                              static_cast<uint64_t>(b));
}

// y[i] = the op's value (Elementwise.def's `value` column) at element i, in
// T = float or double; a unary op reads in0 only.
template <typename T>
void floatLoop(Kind k, const Params &params, const T *in0, const T *in1, T *y,
               int64_t n) {
  // A local copy that stores through y cannot change: the attributes'
  // conversions to T are hoisted out of the loops.
  const Params copy = params;
  const AttrsAs<T> P{copy};
  switch (k) {
// clang-format off
#define AMPC_EW(name, kind, sig, expr)                                         \
  AMPC_EW_IF_ARITH_##sig(case Kind::kind:                                      \
    for (int64_t i = 0; i < n; ++i)                                            \
      y[i] = math::value##kind(P, in0[i], in1[i]);                             \
    return;)
// clang-format on
#include "runtime/ops/Elementwise.def"
  default:
    return;
  }
}

// y[i] = 1 or 0: a predicate (a comparison, a logical op) at element i, on
// operands held in T = float, double or int64 (i1 operands as 0 or 1).
template <typename T>
void predicateLoop(Kind k, const T *in0, const T *in1, int64_t *y, int64_t n) {
  const Params none; // predicates have no attributes
  const AttrsAs<T> P{none};
  switch (k) {
// clang-format off
#define AMPC_EW(name, kind, sig, expr)                                         \
  AMPC_EW_IF_PREDICATE_##sig(case Kind::kind:                                  \
    for (int64_t i = 0; i < n; ++i)                                            \
      y[i] = math::value##kind(P, in0[i], in1[i]);                             \
    return;)
// clang-format on
#include "runtime/ops/Elementwise.def"
  default:
    return;
  }
}

// What an integer loop did. A Num op without an integer form below is
// refused (runPlan checks every step first), never left unwritten.
enum class IntResult { Done, DivisionByZero, NoIntegerForm };

IntResult intUnary(Kind k, const Params &p, DType t, const int64_t *x,
                   int64_t *y, int64_t n) {
  switch (k) {
  case Kind::Neg:
    for (int64_t i = 0; i < n; ++i)
      y[i] = wrapSub(0, x[i]);
    return IntResult::Done;
  case Kind::Abs:
    for (int64_t i = 0; i < n; ++i)
      y[i] = x[i] < 0 ? wrapSub(0, x[i]) : x[i];
    return IntResult::Done;
  case Kind::Clip: {
    const int64_t lo = p.hasMin ? intBound(p.min, true, t)
                                : std::numeric_limits<int64_t>::min();
    const int64_t hi = p.hasMax ? intBound(p.max, false, t)
                                : std::numeric_limits<int64_t>::max();
    for (int64_t i = 0; i < n; ++i)
      y[i] = std::min(std::max(x[i], lo), hi);
    return IntResult::Done;
  }
  default:
    return IntResult::NoIntegerForm;
  }
}

IntResult intBinary(Kind k, const int64_t *a, const int64_t *b, int64_t *y,
                    int64_t n) {
  switch (k) {
  case Kind::Add:
    for (int64_t i = 0; i < n; ++i)
      y[i] = wrapAdd(a[i], b[i]);
    return IntResult::Done;
  case Kind::Sub:
    for (int64_t i = 0; i < n; ++i)
      y[i] = wrapSub(a[i], b[i]);
    return IntResult::Done;
  case Kind::Mul:
    for (int64_t i = 0; i < n; ++i)
      y[i] = wrapMul(a[i], b[i]);
    return IntResult::Done;
  case Kind::Div:
    for (int64_t i = 0; i < n; ++i) {
      if (b[i] == 0)
        return IntResult::DivisionByZero;
      // INT64_MIN / -1 wraps to INT64_MIN instead of trapping.
      y[i] = b[i] == -1 ? wrapSub(0, a[i]) : a[i] / b[i];
    }
    return IntResult::Done;
  default:
    return IntResult::NoIntegerForm;
  }
}

template <typename T>
void select(const int64_t *c, const T *x, const T *y, T *out, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = c[i] ? x[i] : y[i];
}

//===----------------------------------------------------------------------===//
// Loading inputs
//===----------------------------------------------------------------------===//

void loadDom(Dom d, const TensorView &t, int64_t off, int64_t n, void *buf) {
  switch (d) {
  case Dom::F:
    return loadF32(t, off, n, static_cast<float *>(buf));
  case Dom::D:
    return loadF64(t, off, n, static_cast<double *>(buf));
  case Dom::I:
    return loadI64(t, off, n, static_cast<int64_t *>(buf));
  }
}

void storeDom(Dom d, const void *buf, int64_t n, const TensorView &t,
              int64_t off) {
  switch (d) {
  case Dom::F:
    return storeF32(static_cast<const float *>(buf), n, t, off);
  case Dom::D:
    return storeF64(static_cast<const double *>(buf), n, t, off);
  case Dom::I:
    return storeI64(static_cast<const int64_t *>(buf), n, t, off);
  }
}

// Copies element 0 of buf over elements [0, n).
void splat(Dom d, void *buf, int64_t n) {
  switch (d) {
  case Dom::F: {
    float *p = static_cast<float *>(buf);
    std::fill(p + 1, p + n, p[0]);
    return;
  }
  case Dom::D: {
    double *p = static_cast<double *>(buf);
    std::fill(p + 1, p + n, p[0]);
    return;
  }
  case Dom::I: {
    int64_t *p = static_cast<int64_t *>(buf);
    std::fill(p + 1, p + n, p[0]);
    return;
  }
  }
}

void *slot(void *base, Dom d, int64_t i) {
  return static_cast<char *>(base) + i * (d == Dom::F ? 4 : 8);
}

// How one kernel input maps onto the output's element order.
struct InputMap {
  enum Mode { Unused, Direct, Contig, Splat, General } mode = Unused;
  Dom dom = Dom::F;
  // General: the output dims (size-1 dims dropped, runs that are contiguous
  // in the input merged) and the input's element stride along each (0 where
  // it broadcasts).
  std::vector<int64_t> dims, strides;
};

InputMap mapInput(const TensorView &in, const Shape &out) {
  InputMap m;
  m.dom = domOf(in.dtype);
  if (in.shape == out) {
    // Compute buffers of these dtypes are the stored values themselves.
    bool same = in.dtype == DType::F32 || in.dtype == DType::F64 ||
                in.dtype == DType::I64;
    m.mode = same ? InputMap::Direct : InputMap::Contig;
    return m;
  }
  if (in.numElements() == 1) {
    m.mode = InputMap::Splat;
    return m;
  }
  m.mode = InputMap::General;
  size_t r = out.size(), off = r - in.shape.size();
  std::vector<int64_t> inStride(r, 0);
  int64_t s = 1;
  for (size_t i = r; i-- > off;) {
    int64_t d = in.shape[i - off];
    inStride[i] = d == 1 ? 0 : s;
    s *= d;
  }
  for (size_t i = 0; i < r; ++i) {
    if (out[i] == 1)
      continue;
    if (!m.dims.empty() &&
        m.strides.back() == inStride[i] * out[i]) { // merge into previous
      m.dims.back() *= out[i];
      m.strides.back() = inStride[i];
      continue;
    }
    m.dims.push_back(out[i]);
    m.strides.push_back(inStride[i]);
  }
  return m;
}

// Loads output elements [c0, c0 + n) of a broadcast input into buf.
void loadGeneral(const InputMap &m, const TensorView &t, int64_t c0, int64_t n,
                 void *buf) {
  size_t r = m.dims.size();
  std::vector<int64_t> idx(r);
  int64_t off = 0, rem = c0;
  for (size_t d = r; d-- > 0;) {
    idx[d] = rem % m.dims[d];
    rem /= m.dims[d];
    off += idx[d] * m.strides[d];
  }
  const int64_t inner = m.dims[r - 1], innerStride = m.strides[r - 1];
  int64_t pos = 0;
  while (pos < n) {
    int64_t run = std::min(inner - idx[r - 1], n - pos);
    void *dst = slot(buf, m.dom, pos);
    if (innerStride == 1) {
      loadDom(m.dom, t, off, run, dst);
    } else if (innerStride == 0) {
      loadDom(m.dom, t, off, 1, dst);
      splat(m.dom, dst, run);
    } else {
      for (int64_t j = 0; j < run; ++j)
        loadDom(m.dom, t, off + j * innerStride, 1, slot(dst, m.dom, j));
    }
    pos += run;
    off += run * innerStride;
    idx[r - 1] += run;
    if (idx[r - 1] < inner)
      continue;
    off -= inner * innerStride;
    idx[r - 1] = 0;
    for (size_t d = r - 1; d-- > 0;) {
      off += m.strides[d];
      if (++idx[d] < m.dims[d])
        break;
      off -= m.dims[d] * m.strides[d];
      idx[d] = 0;
    }
  }
}

//===----------------------------------------------------------------------===//
// The interpreter
//===----------------------------------------------------------------------===//

constexpr int64_t kChunk = 512;
constexpr int64_t kGrainElements = 16384;

// Rounds a chunk of step results to the step dtype, as a store and reload
// would. f32, f64 and i64 need nothing.
void roundTo(DType t, void *buf, int64_t n, void *tmp) {
  if (t == DType::F32 || t == DType::F64 || t == DType::I64)
    return;
  TensorView v{t, Shape{n}, tmp};
  Dom d = domOf(t);
  storeDom(d, buf, n, v, 0);
  loadDom(d, v, 0, n, buf);
}

Status runPlan(const OpCall &call, const Plan &plan, CpuContext &ctx) {
  const TensorView &out = call.outputs[0];
  const int64_t total = out.numElements();
  if (total == 0)
    return Status::ok();
  const size_t numIn = call.inputs.size(), numSteps = plan.steps.size();
  std::vector<InputMap> maps(numIn);
  for (const PlanStep &s : plan.steps)
    for (int ref : s.operands)
      if (ref >= 0 && maps[ref].mode == InputMap::Unused)
        maps[ref] = mapInput(call.inputs[ref], out.shape);

  // Every integer step has an integer loop (a zero-length call says).
  for (size_t s = 0; s < numSteps; ++s) {
    const PlanStep &st = plan.steps[s];
    const Sig sig = st.op->sig;
    if (domOf(st.dtype) != Dom::I ||
        (sig != Sig::NumUnary && sig != Sig::NumBinary))
      continue;
    IntResult r =
        sig == Sig::NumUnary
            ? intUnary(st.op->kind, st.params, st.dtype, nullptr, nullptr, 0)
            : intBinary(st.op->kind, nullptr, nullptr, nullptr, 0);
    if (r == IntResult::NoIntegerForm)
      return Status::error("'" + std::string(st.op->name) +
                           "' has no integer form in the CPU backend (" +
                           std::string(name(st.dtype)) + ")");
  }
  std::atomic<int> divByZeroStep{-1};
  const int64_t numChunks = (total + kChunk - 1) / kChunk;
  auto body = [&](int64_t cb, int64_t ce) {
    // One 8-byte slot per element for every input, every step and a
    // scratch buffer for rounding.
    std::vector<int64_t> scratch((numIn + numSteps + 1) * kChunk);
    auto bufOf = [&](size_t i) {
      return static_cast<void *>(scratch.data() + i * kChunk);
    };
    void *tmp = bufOf(numIn + numSteps);
    std::vector<const void *> vals(numIn + numSteps, nullptr);
    for (int64_t c = cb; c < ce; ++c) {
      if (divByZeroStep.load(std::memory_order_relaxed) >= 0)
        return;
      const int64_t c0 = c * kChunk, n = std::min(kChunk, total - c0);
      // Load every input of this chunk before anything is stored, so an
      // output that is one of the inputs is updated safely in place.
      for (size_t k = 0; k < numIn; ++k) {
        const InputMap &m = maps[k];
        const TensorView &t = call.inputs[k];
        switch (m.mode) {
        case InputMap::Unused:
          break;
        case InputMap::Direct:
          vals[k] = static_cast<const char *>(t.data) +
                    c0 * static_cast<int64_t>(sizeOf(t.dtype));
          break;
        case InputMap::Contig:
          loadDom(m.dom, t, c0, n, bufOf(k));
          vals[k] = bufOf(k);
          break;
        case InputMap::Splat:
          loadDom(m.dom, t, 0, 1, bufOf(k));
          splat(m.dom, bufOf(k), n);
          vals[k] = bufOf(k);
          break;
        case InputMap::General:
          loadGeneral(m, t, c0, n, bufOf(k));
          vals[k] = bufOf(k);
          break;
        }
      }
      for (size_t s = 0; s < numSteps; ++s) {
        const PlanStep &st = plan.steps[s];
        const bool last = s + 1 == numSteps;
        const void *a[3] = {nullptr, nullptr, nullptr};
        for (size_t j = 0; j < st.operands.size(); ++j) {
          int ref = st.operands[j];
          a[j] = vals[ref >= 0 ? ref : numIn + (-ref - 1)];
        }
        void *res = bufOf(numIn + s);
        const Dom d = domOf(st.dtype);
        const Kind k = st.op->kind;
        switch (st.op->sig) {
        case Sig::FloatUnary:
        case Sig::NumUnary:
        case Sig::NumBinary:
        case Sig::FloatBinary:
        case Sig::Grad: {
          const bool unary = arity(st.op->sig) == 1;
          const void *in1 = unary ? a[0] : a[1];
          if (d == Dom::F)
            floatLoop(k, st.params, static_cast<const float *>(a[0]),
                      static_cast<const float *>(in1),
                      static_cast<float *>(res), n);
          else if (d == Dom::D)
            floatLoop(k, st.params, static_cast<const double *>(a[0]),
                      static_cast<const double *>(in1),
                      static_cast<double *>(res), n);
          else if (unary)
            intUnary(k, st.params, st.dtype, static_cast<const int64_t *>(a[0]),
                     static_cast<int64_t *>(res), n);
          else if (intBinary(k, static_cast<const int64_t *>(a[0]),
                             static_cast<const int64_t *>(in1),
                             static_cast<int64_t *>(res),
                             n) == IntResult::DivisionByZero) {
            int expected = -1;
            divByZeroStep.compare_exchange_strong(expected,
                                                  static_cast<int>(s));
            return;
          }
          break;
        }
        case Sig::Where: {
          const int64_t *cond = static_cast<const int64_t *>(a[0]);
          if (d == Dom::F)
            select(cond, static_cast<const float *>(a[1]),
                   static_cast<const float *>(a[2]), static_cast<float *>(res),
                   n);
          else if (d == Dom::D)
            select(cond, static_cast<const double *>(a[1]),
                   static_cast<const double *>(a[2]),
                   static_cast<double *>(res), n);
          else
            select(cond, static_cast<const int64_t *>(a[1]),
                   static_cast<const int64_t *>(a[2]),
                   static_cast<int64_t *>(res), n);
          break;
        }
        case Sig::Compare:
        case Sig::BoolUnary:
        case Sig::BoolBinary: {
          // The operands' domain, not the i1 result's, holds the values.
          const int ref = st.operands[0];
          const Dom from = domOf(ref >= 0 ? call.inputs[ref].dtype
                                          : plan.steps[-ref - 1].dtype);
          const void *in1 = arity(st.op->sig) == 1 ? a[0] : a[1];
          int64_t *y = static_cast<int64_t *>(res);
          if (from == Dom::F)
            predicateLoop(k, static_cast<const float *>(a[0]),
                          static_cast<const float *>(in1), y, n);
          else if (from == Dom::D)
            predicateLoop(k, static_cast<const double *>(a[0]),
                          static_cast<const double *>(in1), y, n);
          else
            predicateLoop(k, static_cast<const int64_t *>(a[0]),
                          static_cast<const int64_t *>(in1), y, n);
          break;
        }
        case Sig::Cast: {
          int ref = st.operands[0];
          DType from =
              ref >= 0 ? call.inputs[ref].dtype : plan.steps[-ref - 1].dtype;
          if (last) { // store straight into the output: one rounding
            storeDom(domOf(from), a[0], n, out, c0);
            vals[numIn + s] = nullptr;
            continue;
          }
          // Converting is storing in the target dtype and loading that.
          TensorView v{st.dtype, Shape{n}, tmp};
          storeDom(domOf(from), a[0], n, v, 0);
          loadDom(d, v, 0, n, res);
          vals[numIn + s] = res;
          continue;
        }
        }
        if (last)
          storeDom(d, res, n, out, c0);
        else
          roundTo(st.dtype, res, n, tmp);
        vals[numIn + s] = res;
      }
    }
  };
  parallelFor(ctx, numChunks, std::max<int64_t>(1, kGrainElements / kChunk),
              body);
  int bad = divByZeroStep.load();
  if (bad >= 0)
    return Status::error(
        call.op == "fused"
            ? "integer division by zero in step " + std::to_string(bad) +
                  " ('div')"
            : std::string("integer division by zero (rhs has a zero "
                          "element)"));
  return Status::ok();
}

Status runElementwise(const OpCall &call, CpuContext &ctx) {
  Plan plan;
  AMPC_RETURN_IF_ERROR(buildPlan(call, plan));
  return runPlan(call, plan, ctx);
}

} // namespace

Status Activation::make(const std::string &op, const Attrs &attrs,
                        Activation &out) {
  return readActivation(op, attrs, out.op_, out.params_);
}

template <typename T>
void Activation::apply(const T *x, T *y, int64_t n) const {
  floatLoop(op_->kind, params_, x, x, y, n);
}

template <typename T>
void Activation::apply(const T *g, const T *x, T *y, int64_t n) const {
  floatLoop(op_->kind, params_, g, x, y, n);
}

template void Activation::apply(const float *, float *, int64_t) const;
template void Activation::apply(const double *, double *, int64_t) const;
template void Activation::apply(const float *, const float *, float *,
                                int64_t) const;
template void Activation::apply(const double *, const double *, double *,
                                int64_t) const;

void addElementwiseKernels(std::vector<KernelEntry> &out) {
  for (const OpInfo &o : allOps())
    out.push_back({o.name, runElementwise});
  out.push_back({"fused", runElementwise});
}

} // namespace ampc::rt::cpu
