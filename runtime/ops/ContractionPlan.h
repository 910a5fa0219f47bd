//===- ContractionPlan.h - matmul, gemm and conv2d gradient shapes --------===//
//
// What the contraction checks (ContractionChecks.cpp) and the CPU kernels
// (cpu/Contraction.cpp, cpu/ConvolutionGrad.cpp) read from a call alike:
// matmul's broadcast batch and output shape, gemm's attributes, and the
// conv2d geometry (WindowGeometry.h) of a gradient kernel, whose output
// stands in for the operand it lacks.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_OPS_CONTRACTIONPLAN_H
#define AMPC_RUNTIME_OPS_CONTRACTIONPLAN_H

#include "runtime/ops/AttrReaders.h"
#include "runtime/ops/OpCall.h"
#include "runtime/ops/Shapes.h"
#include "runtime/ops/WindowGeometry.h"

#include <algorithm>
#include <cstdint>
#include <string>

namespace ampc::rt::ops {

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

struct MatmulPlan {
  Shape out;
  int64_t m = 0, k = 0, n = 0, batch = 1;
  Shape batchShape, aBatch, bBatch; // aligned to batchShape's rank
};

inline Status planMatmul(const Shape &a, const Shape &b, MatmulPlan &p) {
  if (a.empty() || b.empty())
    return Status::error("operands must have rank >= 1, got lhs " +
                         shapeStr(a) + " and rhs " + shapeStr(b));
  Shape pa = a, pb = b;
  bool aVec = pa.size() == 1, bVec = pb.size() == 1;
  if (aVec)
    pa.insert(pa.begin(), 1);
  if (bVec)
    pb.push_back(1);
  p.m = pa[pa.size() - 2];
  p.k = pa.back();
  p.n = pb.back();
  if (pb[pb.size() - 2] != p.k)
    return Status::error("contracting dimensions differ: lhs " + shapeStr(a) +
                         " has " + std::to_string(p.k) + ", rhs " +
                         shapeStr(b) + " has " +
                         std::to_string(pb[pb.size() - 2]));
  size_t ra = pa.size() - 2, rb = pb.size() - 2, r = std::max(ra, rb);
  p.batchShape.assign(r, 1);
  p.aBatch.assign(r, 1);
  p.bBatch.assign(r, 1);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - ra ? 1 : pa[i - (r - ra)];
    int64_t db = i < r - rb ? 1 : pb[i - (r - rb)];
    if (da != db && da != 1 && db != 1)
      return Status::error(
          "batch dimensions of lhs " + shapeStr(a) + " and rhs " + shapeStr(b) +
          " do not broadcast (dimension " + std::to_string(i) + ": " +
          std::to_string(da) + " vs " + std::to_string(db) + ")");
    p.aBatch[i] = da;
    p.bBatch[i] = db;
    p.batchShape[i] = da == 1 ? db : da;
  }
  p.batch = product(p.batchShape, 0, r);
  p.out = p.batchShape;
  if (!aVec)
    p.out.push_back(p.m);
  if (!bVec)
    p.out.push_back(p.n);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// gemm
//===----------------------------------------------------------------------===//

struct GemmAttrs {
  double alpha = 1, beta = 1;
  bool transA = false, transB = false;
};

inline Status readGemmAttrs(const Attrs &attrs, GemmAttrs &g) {
  AMPC_RETURN_IF_ERROR(getFloat(attrs, "alpha", g.alpha));
  AMPC_RETURN_IF_ERROR(getFloat(attrs, "beta", g.beta));
  AMPC_RETURN_IF_ERROR(getBool(attrs, "trans_a", g.transA));
  AMPC_RETURN_IF_ERROR(getBool(attrs, "trans_b", g.transB));
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// conv2d_backward_data and conv2d_backward_filter
//===----------------------------------------------------------------------===//

inline Status planConvBackwardData(const OpCall &call, ConvPlan &p) {
  const Shape &out = call.outputs[0].shape;
  if (out.size() != 4)
    return Status::error("output (the conv2d input's gradient) must be 4-D "
                         "NCHW, got " +
                         shapeStr(out));
  return planConv(*call.attrs, out, call.inputs[1].shape, p);
}

inline Status planConvBackwardFilter(const OpCall &call, ConvPlan &p) {
  const Shape &out = call.outputs[0].shape;
  if (out.size() != 4)
    return Status::error("output (the filter's gradient) must be 4-D OIHW, "
                         "got " +
                         shapeStr(out));
  return planConv(*call.attrs, call.inputs[1].shape, out, p);
}

} // namespace ampc::rt::ops

#endif // AMPC_RUNTIME_OPS_CONTRACTIONPLAN_H
