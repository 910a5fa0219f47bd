//===- ConvTranspose.cpp - ONNX ConvTranspose -> graph --------------------===//
//
// ConvTranspose (1-D as 2-D with unit height, and 2-D) becomes
// graph.conv_transpose2d, with its bias added per output channel. Its pads
// come from `pads`, or from `output_shape` or auto_pad as ONNX computes
// them: total = stride * (in - 1) + output_padding + dilated kernel - out,
// split with the larger half at the end for SAME_UPPER (and an explicit
// output_shape, as ONNX Runtime does) and at the start for SAME_LOWER.
// output_padding must stay below the stride (PyTorch also allows it below
// the dilation, which the kernels' conv2d shape rule cannot express).
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/OnnxToGraph/NodeBinder.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
namespace ampc::onnx_to_graph {
namespace {

FailureOr<SmallVector<Value>> convertConvTranspose(NodeBinder &n) {
  auto x = n.required(0, "X"), w = n.required(1, "W");
  if (failed(x) || failed(w) || failed(n.requireFloat(*x, "input X")))
    return failure();
  auto in = n.typeOf(*x), filter = n.typeOf(*w);
  int64_t rank = in.getRank();
  if ((rank != 3 && rank != 4) || filter.getRank() != rank)
    return n.error() << "input X " << in << " and filter W " << filter
                     << " must both be 3-D (1-D spatial) or 4-D (2-D "
                        "spatial); ampc has no 3-D transposed convolution",
           failure();
  size_t sp = rank - 2;
  SmallVector<int64_t> kernel(filter.getShape().drop_front(2));
  if (auto k = n.intsAttr("kernel_shape"); k && *k != kernel)
    return n.error() << "kernel_shape does not match the filter " << filter,
           failure();
  auto attr = [&](StringRef name, size_t size, int64_t dflt) {
    return n.intsAttr(name).value_or(SmallVector<int64_t>(size, dflt));
  };
  SmallVector<int64_t> strides = attr("strides", sp, 1),
                       dilations = attr("dilations", sp, 1),
                       extra = attr("output_padding", sp, 0),
                       pads = attr("pads", 2 * sp, 0);
  if (strides.size() != sp || dilations.size() != sp || extra.size() != sp ||
      pads.size() != 2 * sp)
    return n.error() << "strides, dilations, output_padding and pads must "
                        "have "
                     << sp << ", " << sp << ", " << sp << " and " << 2 * sp
                     << " entries for input " << in,
           failure();
  for (size_t i = 0; i < sp; ++i) {
    if (strides[i] < 1 || dilations[i] < 1 || kernel[i] < 1)
      return n.error() << "strides, dilations and the kernel must be >= 1",
             failure();
    if (extra[i] < 0 || extra[i] >= strides[i])
      return n.error() << "output_padding " << extra[i] << " of spatial "
                       << "dimension " << i << " must be in [0, stride "
                       << strides[i] << ")",
             failure();
  }
  std::string autoPad = n.strAttr("auto_pad", "NOTSET");
  std::optional<SmallVector<int64_t>> outShape = n.intsAttr("output_shape");
  if (outShape && outShape->size() == sp + 2)
    outShape = SmallVector<int64_t>(outShape->begin() + 2, outShape->end());
  if (outShape && outShape->size() != sp)
    return n.error() << "output_shape must have " << sp << " entries",
           failure();
  if (autoPad == "VALID") {
    pads.assign(2 * sp, 0);
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER" || outShape) {
    for (size_t i = 0; i < sp; ++i) {
      int64_t span, full, out = outShape ? (*outShape)[i] : 0;
      if (llvm::MulOverflow(kernel[i] - 1, dilations[i], span) ||
          llvm::MulOverflow(strides[i], in.getDimSize(2 + i) - 1, full) ||
          llvm::AddOverflow(full, extra[i] + span + 1, full) ||
          (!outShape &&
           llvm::MulOverflow(in.getDimSize(2 + i), strides[i], out)))
        return n.error() << "the output size of spatial dimension " << i
                         << " overflows int64",
               failure();
      int64_t total = full - out;
      // A few more rows than the windows reach: they are output padding
      // (zeros before the bias), as ONNX's reference makes them.
      if (total < 0 && -total < strides[i]) {
        extra[i] -= total;
        total = 0;
      }
      if (total < 0 || extra[i] >= strides[i])
        return n.error() << "output size " << out << " of spatial dimension "
                         << i << " is larger than the " << full
                         << " the transposed convolution makes, by a stride "
                            "or more",
               failure();
      int64_t small = total / 2, big = total - small;
      bool lower = autoPad == "SAME_LOWER";
      pads[i] = lower ? big : small;
      pads[i + sp] = lower ? small : big;
    }
  } else if (autoPad != "NOTSET") {
    return n.error() << "auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or "
                        "VALID, got \""
                     << autoPad << "\"",
           failure();
  }
  Value input = *x, weight = *w;
  if (sp == 1) {
    strides.insert(strides.begin(), 1);
    dilations.insert(dilations.begin(), 1);
    extra.insert(extra.begin(), 0);
    pads = {0, pads[0], 0, pads[1]};
    input = n.reshape(
        input, {in.getDimSize(0), in.getDimSize(1), 1, in.getDimSize(2)});
    weight = n.reshape(weight, {filter.getDimSize(0), filter.getDimSize(1), 1,
                                filter.getDimSize(2)});
  }
  auto y = n.create1<graph::ConvTranspose2dOp>(
      {input, weight},
      {n.named("strides", n.b.getDenseI64ArrayAttr(strides)),
       n.named("pads", n.b.getDenseI64ArrayAttr(pads)),
       n.named("dilations", n.b.getDenseI64ArrayAttr(dilations)),
       n.named("group", n.b.getI64IntegerAttr(n.intAttr("group", 1))),
       n.named("output_padding", n.b.getDenseI64ArrayAttr(extra))});
  if (failed(y))
    return failure();
  Value out = *y;
  auto ot = n.typeOf(out);
  if (Value bias = n.input(2)) {
    auto bt = n.typeOf(bias);
    if (bt.getRank() != 1 || bt.getDimSize(0) != ot.getDimSize(1))
      return n.error() << "bias B " << bt << " must have one value per "
                       << "output channel (" << ot.getDimSize(1) << ")",
             failure();
    auto sum = n.create1<graph::AddOp>(
        {out, n.reshape(bias, {ot.getDimSize(1), 1, 1})});
    if (failed(sum))
      return failure();
    out = *sum;
  }
  if (sp == 1)
    out =
        n.reshape(out, {ot.getDimSize(0), ot.getDimSize(1), ot.getDimSize(3)});
  return SmallVector<Value>{out};
}

} // namespace

void populateConvTransposeHandlers(HandlerTable &t) {
  addHandler(t, "ConvTranspose", kMinOpset, kMaxOpset, convertConvTranspose);
}

} // namespace ampc::onnx_to_graph
