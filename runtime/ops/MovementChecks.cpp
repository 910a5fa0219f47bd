//===- MovementChecks.cpp - what data movement calls must be --------------===//
//
// broadcast_to, transpose, concat, slice, gather, dropout and copy, and the
// gradients slice_grad and gather_grad. The gradients' shapes are checked
// by running the forward op's own check on the result's shape, so the two
// cannot drift apart.
//
//===----------------------------------------------------------------------===//
#include "runtime/ops/Check.h"

#include "runtime/ops/CallChecks.h"
#include "runtime/ops/Shapes.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace ampc::rt::ops {
namespace {

std::string dt(DType t) { return std::string(name(t)); }

Status expectCounts(const OpCall &call, size_t inputs, size_t outputs) {
  if (call.inputs.size() != inputs)
    return Status::error("expects " + std::to_string(inputs) + " input" +
                         (inputs == 1 ? "" : "s") + ", got " +
                         std::to_string(call.inputs.size()));
  if (call.outputs.size() != outputs)
    return Status::error("expects " + std::to_string(outputs) + " output" +
                         (outputs == 1 ? "" : "s") + ", got " +
                         std::to_string(call.outputs.size()));
  for (size_t k = 0; k < inputs; ++k)
    if (!call.present[k])
      return Status::error("input " + std::to_string(k) + " is absent");
  return Status::ok();
}

Status expectOutput(const OpCall &call, size_t k, DType dtype,
                    const Shape &shape) {
  const TensorView &o = call.outputs[k];
  if (o.dtype != dtype)
    return Status::error("output " + std::to_string(k) + " has dtype " +
                         dt(o.dtype) + " but the op computes " + dt(dtype));
  if (o.shape != shape)
    return Status::error("output " + std::to_string(k) + " has shape " +
                         str(o.shape) + " but the op computes " + str(shape));
  return Status::ok();
}

Status intAttr(const Attrs &attrs, const char *key, int64_t &v) {
  const AttrValue *a = attrs.find(key);
  if (!a)
    return Status::error(std::string("attribute '") + key + "' is missing");
  if (a->kind != AttrValue::Kind::Int)
    return Status::error(std::string("attribute '") + key +
                         "' must be an integer");
  v = a->i;
  return Status::ok();
}

Status intsAttr(const Attrs &attrs, const char *key, std::vector<int64_t> &v) {
  const AttrValue *a = attrs.find(key);
  if (!a)
    return Status::error(std::string("attribute '") + key + "' is missing");
  if (a->kind != AttrValue::Kind::Ints)
    return Status::error(std::string("attribute '") + key +
                         "' must be a list of integers");
  v = a->ints;
  return Status::ok();
}

// The forward op `forward`, applied to `inputs` (the result standing in for
// the forward input), must accept them and give grad's shape.
Status checkForward(const OpCall &call, const char *forward,
                    std::vector<TensorView> inputs) {
  OpCall fwd;
  fwd.op = forward;
  fwd.attrs = call.attrs;
  fwd.inputs = std::move(inputs);
  fwd.present.assign(fwd.inputs.size(), true);
  fwd.outputs = {call.inputs[0]};
  Status s = checkKernel(fwd);
  if (!s)
    return Status::error("grad of shape " + shapeStr(call.inputs[0].shape) +
                         " does not match " + forward +
                         " of the output shape (" + s.message() + ")");
  return Status::ok();
}

Status checkGradAndOutput(const OpCall &call, size_t inputs) {
  AMPC_RETURN_IF_ERROR(checkArity(call, inputs, inputs, 1));
  const TensorView &g = call.inputs[0];
  AMPC_RETURN_IF_ERROR(checkFloat(g, "grad"));
  return checkSameDType(call.outputs[0], "output", g.dtype, "grad");
}

} // namespace

Status checkBroadcastTo(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(expectCounts(call, 1, 1));
  const TensorView &in = call.inputs[0], &out = call.outputs[0];
  if (out.dtype != in.dtype)
    return Status::error("output 0 has dtype " + dt(out.dtype) +
                         " but the input has " + dt(in.dtype));
  bool ok = in.shape.size() <= out.shape.size();
  size_t off = out.shape.size() - std::min(out.shape.size(), in.shape.size());
  for (size_t i = 0; ok && i < in.shape.size(); ++i)
    ok = in.shape[i] == 1 || in.shape[i] == out.shape[off + i];
  if (!ok)
    return Status::error("input of shape " + str(in.shape) +
                         " does not broadcast to the output shape " +
                         str(out.shape));
  return Status::ok();
}

Status checkTranspose(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(expectCounts(call, 1, 1));
  const TensorView &in = call.inputs[0];
  std::vector<int64_t> perm;
  AMPC_RETURN_IF_ERROR(intsAttr(*call.attrs, "perm", perm));
  if (perm.size() != in.shape.size())
    return Status::error("attribute 'perm' " + str(perm) + " has " +
                         std::to_string(perm.size()) + " entries for a rank-" +
                         std::to_string(in.shape.size()) + " input");
  std::vector<bool> seen(perm.size(), false);
  Shape shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[p])
      return Status::error("attribute 'perm' " + str(perm) +
                           " is not a permutation of [0, " +
                           std::to_string(perm.size()) + ")");
    seen[p] = true;
    shape.push_back(in.shape[p]);
  }
  return expectOutput(call, 0, in.dtype, shape);
}

Status checkConcat(const OpCall &call) {
  if (call.inputs.empty())
    return Status::error("needs at least one input");
  AMPC_RETURN_IF_ERROR(expectCounts(call, call.inputs.size(), 1));
  int64_t axis = 0;
  AMPC_RETURN_IF_ERROR(intAttr(*call.attrs, "axis", axis));
  const TensorView &first = call.inputs[0];
  if (axis < 0 || axis >= first.rank())
    return Status::error("attribute 'axis' " + std::to_string(axis) +
                         " is out of range for rank " +
                         std::to_string(first.rank()));
  Shape shape = first.shape;
  for (size_t k = 1; k < call.inputs.size(); ++k) {
    const TensorView &in = call.inputs[k];
    if (in.dtype != first.dtype)
      return Status::error("input " + std::to_string(k) + " has dtype " +
                           dt(in.dtype) + " but input 0 has " +
                           dt(first.dtype));
    if (in.rank() != first.rank())
      return Status::error("input " + std::to_string(k) + " " + str(in.shape) +
                           " has a different rank from input 0 " +
                           str(first.shape));
    for (int64_t i = 0; i < in.rank(); ++i)
      if (i != axis && in.shape[i] != first.shape[i])
        return Status::error("input " + std::to_string(k) + " " +
                             str(in.shape) + " differs from input 0 " +
                             str(first.shape) + " in dimension " +
                             std::to_string(i) + " (not the axis)");
    shape[axis] += in.shape[axis];
  }
  return expectOutput(call, 0, first.dtype, shape);
}

Status checkSlice(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(expectCounts(call, 1, 1));
  const TensorView &in = call.inputs[0];
  std::vector<int64_t> starts, ends, steps;
  AMPC_RETURN_IF_ERROR(intsAttr(*call.attrs, "starts", starts));
  AMPC_RETURN_IF_ERROR(intsAttr(*call.attrs, "ends", ends));
  AMPC_RETURN_IF_ERROR(intsAttr(*call.attrs, "steps", steps));
  size_t r = in.shape.size();
  if (starts.size() != r || ends.size() != r || steps.size() != r)
    return Status::error(
        "attributes 'starts', 'ends' and 'steps' need one "
        "entry per dimension of " +
        str(in.shape) + ", got " + std::to_string(starts.size()) + ", " +
        std::to_string(ends.size()) + " and " + std::to_string(steps.size()));
  Shape shape;
  for (size_t i = 0; i < r; ++i) {
    int64_t d = in.shape[i], s = starts[i], e = ends[i], st = steps[i];
    bool ok = st > 0 ? (0 <= s && s <= e && e <= d)
                     : (st < 0 && -1 <= e && e <= s && s <= d - 1);
    if (!ok)
      return Status::error("slice of dimension " + std::to_string(i) +
                           " (size " + std::to_string(d) + ") has start " +
                           std::to_string(s) + ", end " + std::to_string(e) +
                           ", step " + std::to_string(st) +
                           ", which are not normalized");
    shape.push_back(st > 0 ? (e - s + st - 1) / st : (s - e - st - 1) / -st);
  }
  return expectOutput(call, 0, in.dtype, shape);
}

Status checkGather(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(expectCounts(call, 2, 1));
  const TensorView &data = call.inputs[0], &idx = call.inputs[1];
  if (!isInt(idx.dtype))
    return Status::error("indices have dtype " + dt(idx.dtype) +
                         " but must be i64 or i32");
  int64_t axis = 0;
  AMPC_RETURN_IF_ERROR(intAttr(*call.attrs, "axis", axis));
  if (axis < 0 || axis >= data.rank())
    return Status::error("attribute 'axis' " + std::to_string(axis) +
                         " is out of range for data of rank " +
                         std::to_string(data.rank()));
  Shape shape(data.shape.begin(), data.shape.begin() + axis);
  shape.insert(shape.end(), idx.shape.begin(), idx.shape.end());
  shape.insert(shape.end(), data.shape.begin() + axis + 1, data.shape.end());
  return expectOutput(call, 0, data.dtype, shape);
}

Status checkDropout(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(expectCounts(call, 1, 2));
  const TensorView &in = call.inputs[0];
  if (!isFloat(in.dtype))
    return Status::error("input has dtype " + dt(in.dtype) +
                         " but must be a float type");
  const AttrValue *ratio = call.attrs->find("ratio");
  if (!ratio)
    return Status::error("attribute 'ratio' is missing");
  if (ratio->kind != AttrValue::Kind::Float)
    return Status::error("attribute 'ratio' must be a float");
  if (!(ratio->f >= 0 && ratio->f <= 1))
    return Status::error("attribute 'ratio' must be in [0, 1], got " +
                         std::to_string(ratio->f));
  int64_t training, seed;
  AMPC_RETURN_IF_ERROR(intAttr(*call.attrs, "training", training));
  if (training != 0 && training != 1)
    return Status::error("attribute 'training' must be 0 or 1, got " +
                         std::to_string(training));
  AMPC_RETURN_IF_ERROR(intAttr(*call.attrs, "seed", seed));
  AMPC_RETURN_IF_ERROR(expectOutput(call, 0, in.dtype, in.shape));
  return expectOutput(call, 1, DType::I1, in.shape);
}

Status checkCopy(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(expectCounts(call, 1, 1));
  const TensorView &in = call.inputs[0], &out = call.outputs[0];
  if (out.dtype != in.dtype)
    return Status::error("output 0 has dtype " + dt(out.dtype) +
                         " but the input has " + dt(in.dtype));
  if (out.numElements() != in.numElements())
    return Status::error("output 0 " + str(out.shape) + " has " +
                         std::to_string(out.numElements()) +
                         " elements but the input " + str(in.shape) + " has " +
                         std::to_string(in.numElements()));
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// slice_grad and gather_grad
//===----------------------------------------------------------------------===//

Status checkSliceGrad(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkGradAndOutput(call, 1));
  return checkForward(call, "slice", {call.outputs[0]});
}

Status checkGatherGrad(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkGradAndOutput(call, 2));
  AMPC_RETURN_IF_ERROR(checkIntTensor(call.inputs[1], "indices"));
  return checkForward(call, "gather", {call.outputs[0], call.inputs[1]});
}

} // namespace ampc::rt::ops
