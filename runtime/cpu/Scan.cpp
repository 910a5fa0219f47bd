//===- Scan.cpp - arg_max, cumsum and top_k on the CPU
//---------------------===//
//
// Each op works along one axis of an [outer, len, inner] view
// (runtime/ops/AxisPlan.h): a block of `len` rows by up to kColumns inner
// columns is loaded in compute type (f32, f64 for f64, int64 for
// integers), walked column by column, and stored. Threads split the
// blocks, so no two write the same element. A running sum accumulates in
// the compute type and rounds each output once; integers wrap.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/KernelHelpers.h"
#include "runtime/cpu/Scratch.h"
#include "runtime/ops/AxisPlan.h"
#include "runtime/ops/SelectOrder.h"

#include <algorithm>
#include <numeric>
#include <vector>

namespace ampc::rt::cpu {
namespace {
using namespace kh;

constexpr int64_t kColumns = 64;

// Runs `body(o, j0, w)` for every block of up to kColumns inner columns.
template <typename Body>
void forBlocks(const CpuContext &ctx, const ops::AxisView &v, Body body) {
  int64_t chunks = (v.inner + kColumns - 1) / kColumns;
  int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, v.len));
  parallelFor(ctx, v.outer * chunks, grain, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t)
      body(t / chunks, (t % chunks) * kColumns,
           std::min(kColumns, v.inner - (t % chunks) * kColumns));
  });
}

// Calls f with the compute type of `t`'s dtype.
template <typename F> void byCompute(DType t, F f) {
  if (t == DType::F64)
    f(double());
  else if (isFloat(t))
    f(float());
  else
    f(int64_t());
}

Status runCumSum(const OpCall &call, CpuContext &ctx) {
  const TensorView &x = call.inputs[0], &out = call.outputs[0];
  const int64_t axis = call.attrs->getInt("axis");
  const bool exclusive = call.attrs->getInt("exclusive") != 0,
             reverse = call.attrs->getInt("reverse") != 0;
  const ops::AxisView v = ops::axisView(x.shape, axis);
  if (x.numElements() == 0)
    return Status::ok();
  byCompute(x.dtype, [&](auto zero) {
    using T = decltype(zero);
    forBlocks(ctx, v, [&](int64_t o, int64_t j0, int64_t w) {
      Scratch<T> rows;
      T *buf = rows.resize(static_cast<size_t>(v.len * w));
      const int64_t base = o * v.len * v.inner + j0;
      loadRows(x, base, v.len, v.inner, w, buf);
      for (int64_t j = 0; j < w; ++j) {
        T acc = T(0);
        for (int64_t s = 0; s < v.len; ++s) {
          T &e = buf[(reverse ? v.len - 1 - s : s) * w + j];
          T next = wrappingAdd(acc, e);
          e = exclusive ? acc : next;
          acc = next;
        }
      }
      storeRows(buf, v.len, v.inner, w, out, base);
    });
  });
  return Status::ok();
}

Status runArgMax(const OpCall &call, CpuContext &ctx) {
  const TensorView &x = call.inputs[0], &out = call.outputs[0];
  const int64_t axis = call.attrs->getInt("axis");
  const bool last = call.attrs->getInt("select_last_index") != 0;
  const ops::AxisView v = ops::axisView(x.shape, axis);
  if (out.numElements() == 0)
    return Status::ok();
  byCompute(x.dtype, [&](auto zero) {
    using T = decltype(zero);
    forBlocks(ctx, v, [&](int64_t o, int64_t j0, int64_t w) {
      Scratch<T> rows;
      Scratch<int64_t> bests;
      T *buf = rows.resize(static_cast<size_t>(v.len * w));
      int64_t *best = bests.resize(static_cast<size_t>(w));
      loadRows(x, o * v.len * v.inner + j0, v.len, v.inner, w, buf);
      for (int64_t j = 0; j < w; ++j) {
        int64_t bi = 0;
        for (int64_t r = 1; r < v.len; ++r) {
          T a = buf[r * w + j], b = buf[bi * w + j];
          // The last of equal maxima: whatever b does not come before.
          if (last ? !ops::selectsBefore(b, a, true)
                   : ops::selectsBefore(a, b, true))
            bi = r;
        }
        best[j] = bi;
      }
      storeI64(best, w, out, o * v.inner + j0);
    });
  });
  return Status::ok();
}

Status runTopK(const OpCall &call, CpuContext &ctx) {
  const TensorView &x = call.inputs[0], &values = call.outputs[0],
                   &indices = call.outputs[1];
  const int64_t axis = call.attrs->getInt("axis"), k = call.attrs->getInt("k");
  const bool largest = call.attrs->getInt("largest") != 0;
  const ops::AxisView v = ops::axisView(x.shape, axis);
  if (values.numElements() == 0)
    return Status::ok();
  byCompute(x.dtype, [&](auto zero) {
    using T = decltype(zero);
    forBlocks(ctx, v, [&](int64_t o, int64_t j0, int64_t w) {
      Scratch<T> rows, tops;
      Scratch<int64_t> orders, pickeds;
      T *buf = rows.resize(static_cast<size_t>(v.len * w));
      T *top = tops.resize(static_cast<size_t>(k * w));
      int64_t *order = orders.resize(static_cast<size_t>(v.len));
      int64_t *picked = pickeds.resize(static_cast<size_t>(k * w));
      loadRows(x, o * v.len * v.inner + j0, v.len, v.inner, w, buf);
      for (int64_t j = 0; j < w; ++j) {
        std::iota(order, order + v.len, int64_t(0));
        // Equal values keep the order of their indices.
        std::partial_sort(order, order + k, order + v.len,
                          [&](int64_t a, int64_t b) {
                            T va = buf[a * w + j], vb = buf[b * w + j];
                            if (ops::selectsBefore(va, vb, largest))
                              return true;
                            if (ops::selectsBefore(vb, va, largest))
                              return false;
                            return a < b;
                          });
        for (int64_t r = 0; r < k; ++r) {
          picked[r * w + j] = order[r];
          top[r * w + j] = buf[order[r] * w + j];
        }
      }
      const int64_t base = o * k * v.inner + j0;
      storeRows(top, k, v.inner, w, values, base);
      storeRows(picked, k, v.inner, w, indices, base);
    });
  });
  return Status::ok();
}

} // namespace

void addScanKernels(std::vector<KernelEntry> &out) {
  out.push_back({"arg_max", runArgMax});
  out.push_back({"cumsum", runCumSum});
  out.push_back({"top_k", runTopK});
}

} // namespace ampc::rt::cpu
