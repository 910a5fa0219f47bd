//===- Resize.cpp - ONNX Resize -> gather and matmul ----------------------===//
//
// Shapes are static, so every output position's source coordinate along a
// resized axis is known at compile time. Nearest mode gathers each axis at
// constant indices; linear and cubic modes multiply each axis by a constant
// [out, in] interpolation matrix (a matmul on the last two axes, with a
// transpose around it for any other). Both have gradients (gather's and
// matmul's) and run on every backend, with no op of their own.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/OnnxToGraph/NodeBinder.h"
#include "dialects/Graph/ShapeInference.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
namespace ampc::onnx_to_graph {
namespace {

/// The most entries of an index vector or interpolation matrix made at
/// compile time (a 4096 x 4096 matrix).
constexpr int64_t kMaxEntries = int64_t(1) << 24;

struct Options {
  std::string coordinates, mode, nearest;
  double cubicA = -0.75;
  bool excludeOutside = false;
};

/// The source coordinate of output position `x` along an axis of length
/// `in` resized to `out` with scale `scale` (ONNX's
/// coordinate_transformation_mode).
double sourceOf(const Options &o, int64_t x, int64_t in, int64_t out,
                double scale) {
  const std::string &m = o.coordinates;
  if (m == "asymmetric")
    return x / scale;
  // The resized length is in * scale before flooring, as ONNX's reference
  // computes it (sizes given: exactly out).
  if (m == "align_corners")
    return out == 1 ? 0 : x * double(in - 1) / (double(in) * scale - 1);
  if (m == "pytorch_half_pixel" && out == 1)
    return 0;
  if (m == "tf_half_pixel_for_nearest")
    return (x + 0.5) / scale;
  return (x + 0.5) / scale - 0.5; // half_pixel, pytorch_half_pixel
}

int64_t nearestOf(const Options &o, double c, int64_t in) {
  double r;
  if (o.nearest == "floor")
    r = std::floor(c);
  else if (o.nearest == "ceil")
    r = std::ceil(c);
  else if (o.nearest == "round_prefer_ceil")
    r = std::floor(c + 0.5);
  else // round_prefer_floor: halves go down
    r = c == std::floor(c) + 0.5 ? std::floor(c) : std::round(c);
  return std::clamp<int64_t>(static_cast<int64_t>(r), 0, in - 1);
}

/// Row x of the interpolation matrix: the weight of each source element.
void weightsOf(const Options &o, double c, int64_t in,
               SmallVectorImpl<double> &row) {
  row.assign(in, 0.0);
  if (o.mode == "linear") {
    c = std::clamp(c, 0.0, double(in - 1));
    int64_t lo = static_cast<int64_t>(std::floor(c));
    int64_t hi = std::min(lo + 1, in - 1);
    double t = c - lo;
    row[lo] += 1 - t;
    row[hi] += t;
    return;
  }
  // Cubic convolution with coefficient a over the taps floor(c) - 1 ..
  // floor(c) + 2; taps outside the axis take the edge element, or with
  // exclude_outside are dropped and the rest renormalized.
  const double a = o.cubicA;
  auto kernel = [a](double d) {
    d = std::fabs(d);
    if (d <= 1)
      return ((a + 2) * d - (a + 3)) * d * d + 1;
    if (d < 2)
      return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
    return 0.0;
  };
  int64_t base = static_cast<int64_t>(std::floor(c));
  double sum = 0;
  for (int64_t k = base - 1; k <= base + 2; ++k) {
    double w = kernel(c - k);
    bool outside = k < 0 || k >= in;
    if (outside && o.excludeOutside)
      continue;
    row[std::clamp<int64_t>(k, 0, in - 1)] += w;
    sum += w;
  }
  if (o.excludeOutside && sum != 0)
    for (double &w : row)
      w /= sum;
}

/// `x` with axis `axis` resized from `in` to `out` elements.
FailureOr<Value> resizeAxis(NodeBinder &n, const Options &o, Value x,
                            int64_t axis, int64_t out, double scale) {
  auto t = n.typeOf(x);
  int64_t rank = t.getRank(), in = t.getDimSize(axis);
  if (o.mode == "nearest") {
    SmallVector<int64_t> idx;
    for (int64_t i = 0; i < out; ++i)
      idx.push_back(nearestOf(o, sourceOf(o, i, in, out, scale), in));
    return gatherAxis(n, x, axis, idx);
  }
  // The matrix [out, in] in x's float type, applied on the last axis as
  // x [.., in] @ M^T [in, out].
  auto elem = cast<FloatType>(t.getElementType());
  SmallVector<APFloat> mt(in * out, APFloat(0.0));
  SmallVector<double> row;
  for (int64_t i = 0; i < out; ++i) {
    weightsOf(o, sourceOf(o, i, in, out, scale), in, row);
    for (int64_t j = 0; j < in; ++j) {
      APFloat w(row[j]);
      bool lost;
      w.convert(elem.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      mt[j * out + i] = w;
    }
  }
  Value m = n.constant(
      DenseElementsAttr::get(RankedTensorType::get({in, out}, elem), mt));
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    perm.push_back(d);
  std::swap(perm[axis], perm[rank - 1]);
  auto transpose = [&](Value v) -> FailureOr<Value> {
    if (axis == rank - 1)
      return v;
    return n.create1<graph::TransposeOp>(
        v, {n.named("perm", n.b.getDenseI64ArrayAttr(perm))});
  };
  FailureOr<Value> moved = transpose(x);
  if (failed(moved))
    return failure();
  FailureOr<Value> mm = n.create1<graph::MatMulOp>({*moved, m});
  if (failed(mm))
    return failure();
  return transpose(*mm); // a swap is its own inverse
}

FailureOr<SmallVector<Value>> convertResize(NodeBinder &n) {
  auto x = n.required(0, "X");
  if (failed(x))
    return failure();
  auto t = n.typeOf(*x);
  int64_t rank = t.getRank();
  Options o;
  o.coordinates = n.strAttr("coordinate_transformation_mode", "half_pixel");
  if (o.coordinates == "tf_half_pixel_for_nn") // its name at opset 11
    o.coordinates = "tf_half_pixel_for_nearest";
  o.mode = n.strAttr("mode", "nearest");
  o.nearest = n.strAttr("nearest_mode", "round_prefer_floor");
  o.cubicA = n.floatAttr("cubic_coeff_a", -0.75);
  o.excludeOutside = n.intAttr("exclude_outside", 0) != 0;
  static const char *kCoordinates[] = {"half_pixel", "pytorch_half_pixel",
                                       "align_corners", "asymmetric",
                                       "tf_half_pixel_for_nearest"};
  if (!llvm::is_contained(kCoordinates, o.coordinates))
    return n.error() << "coordinate_transformation_mode '" << o.coordinates
                     << "' is not supported (half_pixel, pytorch_half_pixel, "
                        "align_corners, asymmetric, "
                        "tf_half_pixel_for_nearest)",
           failure();
  if (o.mode != "nearest" && o.mode != "linear" && o.mode != "cubic")
    return n.error() << "mode '" << o.mode
                     << "' is not nearest, linear or cubic",
           failure();
  static const char *kNearest[] = {"round_prefer_floor", "round_prefer_ceil",
                                   "floor", "ceil"};
  if (!llvm::is_contained(kNearest, o.nearest))
    return n.error() << "nearest_mode '" << o.nearest << "' is not supported",
           failure();
  if (o.mode != "nearest" && !isa<FloatType>(t.getElementType()))
    return n.error() << o.mode << " resize needs a float input, got " << t,
           failure();
  // From opset 18 the `axes` attribute names the axes that `scales` or
  // `sizes` cover; the others keep their size.
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  if (auto a = n.intsAttr("axes")) {
    axes = *a;
    if (failed(n.axes(axes, rank)))
      return failure();
  }
  int64_t count = static_cast<int64_t>(axes.size());
  std::string policy = n.strAttr("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    return n.error() << "keep_aspect_ratio_policy '" << policy
                     << "' is not stretch, not_larger or not_smaller",
           failure();
  // Output sizes from `sizes` (input 3) or `scales` (input 2); the scale of
  // an axis is out / in for sizes, as ONNX computes it.
  SmallVector<int64_t> outs(t.getShape());
  SmallVector<double> scales(rank, 1.0);
  if (n.input(3)) {
    auto sizes = n.constInts(3, "sizes");
    if (failed(sizes))
      return failure();
    if (static_cast<int64_t>(sizes->size()) != count)
      return n.error() << "sizes has " << sizes->size() << " entries but "
                       << (n.attr("axes") ? "axes names " : "X has rank ")
                       << count,
             failure();
    for (int64_t s : *sizes)
      if (s <= 0)
        return n.error() << "sizes " << shape::str(*sizes)
                         << " must be positive",
               failure();
    for (auto [i, d] : llvm::enumerate(axes)) {
      if (t.getDimSize(d) == 0)
        return n.error() << "axis " << d << " of " << t
                         << " is empty and cannot be resized to "
                         << (*sizes)[i],
               failure();
      outs[d] = (*sizes)[i];
      scales[d] = double((*sizes)[i]) / double(t.getDimSize(d));
    }
    if (policy != "stretch" && !axes.empty()) {
      // One scale for every listed axis: the one that fits inside the
      // sizes (not_larger) or covers them (not_smaller); sizes rounded
      // half up from it.
      double scale = scales[axes.front()];
      for (int64_t d : axes)
        scale = policy == "not_larger" ? std::min(scale, scales[d])
                                       : std::max(scale, scales[d]);
      for (int64_t d : axes) {
        scales[d] = scale;
        double out = std::floor(scale * double(t.getDimSize(d)) + 0.5);
        if (!(out >= 1) || out > double(kMaxEntries))
          return n.error() << "keep_aspect_ratio_policy " << policy
                           << " makes axis " << d << " of " << t << " " << out
                           << " long (at most " << kMaxEntries << ")",
                 failure();
        outs[d] = static_cast<int64_t>(out);
      }
    }
  } else if (n.input(2)) {
    Attribute a;
    auto dense = matchPattern(n.input(2), m_Constant(&a))
                     ? dyn_cast<DenseFPElementsAttr>(a)
                     : DenseFPElementsAttr();
    if (!dense)
      return n.error() << "input #2 (scales) must be a compile-time constant "
                          "float tensor",
             failure();
    SmallVector<double> given;
    for (APFloat s : dense.getValues<APFloat>())
      given.push_back(s.convertToDouble());
    if (static_cast<int64_t>(given.size()) != count)
      return n.error() << "scales has " << given.size() << " entries but "
                       << (n.attr("axes") ? "axes names " : "X has rank ")
                       << count,
             failure();
    for (auto [i, k] : llvm::enumerate(axes)) {
      scales[k] = given[i];
      if (!(scales[k] > 0) || !std::isfinite(scales[k]))
        return n.error() << "scale " << scales[k] << " of axis " << k
                         << " must be positive and finite",
               failure();
      outs[k] =
          static_cast<int64_t>(std::floor(double(t.getDimSize(k)) * scales[k]));
      if (outs[k] <= 0)
        return n.error() << "scale " << scales[k] << " makes axis " << k
                         << " empty",
               failure();
    }
  } else {
    return n.error() << "needs scales (input #2) or sizes (input #3)",
           failure();
  }
  if (n.intAttr("antialias", 0) && o.mode != "nearest")
    for (int64_t d = 0; d < rank; ++d)
      if (outs[d] < t.getDimSize(d))
        return n.error() << "antialias " << o.mode
                         << " resize is not supported when it shrinks an "
                            "axis (axis "
                         << d << " of " << t << " to " << outs[d] << ")",
               failure();
  if (failed(n.checkSize(t.clone(ArrayRef<int64_t>(outs)))))
    return failure();
  for (int64_t d = 0; d < rank; ++d) {
    int64_t in = t.getDimSize(d), entries;
    if (outs[d] == in && scales[d] == 1.0)
      continue;
    if (in == 0)
      return n.error() << "axis " << d << " of " << t
                       << " is empty and cannot be resized to " << outs[d],
             failure();
    if (llvm::MulOverflow(o.mode == "nearest" ? 1 : in, outs[d], entries) ||
        entries > kMaxEntries)
      return n.error() << "resizing axis " << d << " from " << in << " to "
                       << outs[d] << " needs more than " << kMaxEntries
                       << " interpolation entries at compile time",
             failure();
  }
  Value cur = *x;
  for (int64_t d = 0; d < rank; ++d) {
    // A scale of 1 maps every position to itself, except where
    // tf_half_pixel_for_nearest shifts it by half an element.
    if (outs[d] == t.getDimSize(d) && scales[d] == 1.0 &&
        o.coordinates != "tf_half_pixel_for_nearest")
      continue;
    FailureOr<Value> r = resizeAxis(n, o, cur, d, outs[d], scales[d]);
    if (failed(r))
      return failure();
    cur = *r;
  }
  return SmallVector<Value>{cur};
}

} // namespace

void populateResizeHandlers(HandlerTable &t) {
  addHandler(t, "Resize", kMinOpset, kMaxOpset, convertResize);
}

} // namespace ampc::onnx_to_graph
