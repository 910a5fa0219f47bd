//===- NodeBinder.cpp - operand/attribute access for ONNX handlers --------===//
//
// See NodeBinder.h.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/OnnxToGraph/NodeBinder.h"

#include "compiler/Conversion/TensorSize.h"
#include "llvm/ADT/StringExtras.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"
#include <charconv>

using namespace mlir;
namespace ampc::onnx_to_graph {

InFlightDiagnostic NodeBinder::error() {
  StringRef name = node.getNodeName();
  auto diag = mlir::emitError(loc);
  diag << "node ";
  if (!name.empty())
    diag << "'" << name << "' ";
  diag << "(";
  if (node.getDomain() && !node.getDomain()->empty())
    diag << *node.getDomain() << "::";
  diag << node.getOpType() << ", opset " << node.getOpset() << "): ";
  return diag;
}

FailureOr<Value> NodeBinder::required(unsigned i, StringRef what) {
  if (Value v = input(i))
    return v;
  return error() << "missing required input #" << i << " (" << what << ")",
         failure();
}

LogicalResult NodeBinder::requireFloat(Value v, StringRef what) {
  Type e = typeOf(v).getElementType();
  if (isa<FloatType>(e))
    return success();
  return error() << what << " has element type " << e
                 << ", expected a float type (f32, f16, bf16, f64)";
}

LogicalResult NodeBinder::atMostOutputs(unsigned n) {
  for (unsigned i = n; i < node.getNumResults(); ++i)
    if (!node.getResult(i).use_empty())
      return error() << "output #" << i
                     << " is used, but ampc produces only the first " << n
                     << " output(s) of this op";
  return success();
}

FailureOr<int64_t> NodeBinder::axis(int64_t axis, int64_t rank,
                                    bool inclusive) {
  if (axis < -rank || axis > rank || (axis == rank && !inclusive))
    return error() << "axis " << axis << " is out of range for rank " << rank,
           failure();
  return axis < 0 ? axis + rank : axis;
}

LogicalResult NodeBinder::axes(SmallVectorImpl<int64_t> &axes, int64_t rank) {
  for (int64_t &a : axes) {
    auto normalized = axis(a, rank);
    if (failed(normalized))
      return failure();
    a = *normalized;
  }
  SmallVector<int64_t> sorted(axes.begin(), axes.end());
  llvm::sort(sorted);
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    return error() << "axes contain a repeated axis";
  return success();
}

std::optional<int64_t> NodeBinder::intAttr(StringRef name) {
  if (auto a = dyn_cast_or_null<IntegerAttr>(attr(name)))
    return a.getInt();
  return std::nullopt;
}

int64_t NodeBinder::intAttr(StringRef name, int64_t dflt) {
  return intAttr(name).value_or(dflt);
}

double NodeBinder::floatAttr(StringRef name, double dflt) {
  if (auto a = dyn_cast_or_null<FloatAttr>(attr(name))) {
    // ONNX float attributes are f32; widen through the shortest decimal
    // that round-trips, so alpha = 0.1 stays 0.1 rather than 0.100000001.
    if (!a.getType().isF32())
      return a.getValueAsDouble();
    char text[32];
    auto [end, ec] = std::to_chars(text, text + sizeof(text),
                                   a.getValue().convertToFloat());
    double d;
    if (ec == std::errc() && !StringRef(text, end - text).getAsDouble(d))
      return d;
    return a.getValueAsDouble();
  }
  if (auto a = dyn_cast_or_null<IntegerAttr>(attr(name)))
    return static_cast<double>(a.getInt());
  return dflt;
}

std::string NodeBinder::strAttr(StringRef name, StringRef dflt) {
  if (auto a = dyn_cast_or_null<StringAttr>(attr(name)))
    return a.str();
  return dflt.str();
}

std::optional<SmallVector<int64_t>> NodeBinder::intsAttr(StringRef name) {
  if (auto a = dyn_cast_or_null<DenseI64ArrayAttr>(attr(name)))
    return SmallVector<int64_t>(a.asArrayRef());
  if (auto a = dyn_cast_or_null<IntegerAttr>(attr(name)))
    return SmallVector<int64_t>{a.getInt()};
  return std::nullopt;
}

/// Marks the graph inputs (without an initializer) that `v` is computed
/// from, through the ops converted so far, as inputs a node needed as a
/// constant (onnx::kNeedsConstantArgAttr): binding them would make `v` fold.
/// Returns their names, quoted.
static SmallVector<std::string> markNeedsConstant(Value v) {
  SmallVector<std::string> names;
  SmallVector<Value> work{v};
  llvm::SmallPtrSet<Operation *, 16> seen;
  llvm::SmallPtrSet<void *, 4> args;
  while (!work.empty() && seen.size() < 4096) {
    Value cur = work.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(cur)) {
      auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
      unsigned n = arg.getArgNumber();
      if (!func || func.getArgAttr(n, graph::kInitAttr) ||
          !args.insert(cur.getAsOpaquePointer()).second)
        continue;
      func.setArgAttr(n, onnx::kNeedsConstantArgAttr,
                      UnitAttr::get(v.getContext()));
      auto name = func.getArgAttrOfType<StringAttr>(n, graph::kNameAttr);
      names.push_back(name ? "'" + name.str() + "'" : "#" + std::to_string(n));
      continue;
    }
    Operation *def = cur.getDefiningOp();
    if (def && seen.insert(def).second)
      llvm::append_range(work, def->getOperands());
  }
  return names;
}

/// Completes an error on a node input `v` that must be a compile-time
/// constant and is not: what it is instead, and the way out.
static void explainNotConstant(InFlightDiagnostic &diag, Value v) {
  SmallVector<std::string> inputs = markNeedsConstant(v);
  auto arg = dyn_cast<BlockArgument>(v);
  auto func = arg ? dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp())
                  : func::FuncOp();
  if (func && func.getArgAttr(arg.getArgNumber(), graph::kInitAttr)) {
    auto name =
        func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), graph::kNameAttr);
    diag << ", but it is initializer '" << (name ? name.str() : "?")
         << "', which ampc trains as a parameter; give it with a Constant "
            "node";
    return;
  }
  if (func) {
    diag << ", but it is graph input " << inputs.front();
  } else if (matchPattern(v, m_Constant())) {
    diag << ", but it is a constant of type " << v.getType();
    return;
  } else {
    diag << ", but the model computes it";
    if (inputs.empty())
      return;
    diag << " from graph input" << (inputs.size() > 1 ? "s " : " ")
         << llvm::join(inputs, ", ");
  }
  diag << ", known only when the model runs; bind "
       << (inputs.size() > 1 ? "them" : "it")
       << " with --bind (amp-run --mode infer binds an integer --input "
          "itself)";
}

/// Integer values of a constant attribute, inline or resource.
static std::optional<SmallVector<int64_t>> intValues(Attribute a) {
  if (auto d = dyn_cast_or_null<DenseIntElementsAttr>(a)) {
    SmallVector<int64_t> out;
    for (const APInt &v : d.getValues<APInt>())
      out.push_back(v.getBitWidth() == 1 ? v.getZExtValue() : v.getSExtValue());
    return out;
  }
  if (auto r = dyn_cast_or_null<DenseI64ResourceElementsAttr>(a))
    if (auto data = r.tryGetAsArrayRef())
      return SmallVector<int64_t>(data->begin(), data->end());
  if (auto r = dyn_cast_or_null<DenseI32ResourceElementsAttr>(a))
    if (auto data = r.tryGetAsArrayRef())
      return SmallVector<int64_t>(data->begin(), data->end());
  return std::nullopt;
}

FailureOr<SmallVector<int64_t>> NodeBinder::constInts(unsigned i,
                                                      StringRef what) {
  Value v = input(i);
  if (!v)
    return error() << "missing input #" << i << " (" << what << ")",
           failure();
  Attribute a;
  if (!matchPattern(v, m_Constant(&a))) {
    auto diag = error() << "input #" << i << " (" << what
                        << ") must be a compile-time constant (ampc compiles "
                           "static shapes)";
    explainNotConstant(diag, v);
    return failure();
  }
  if (auto values = intValues(a))
    return *values;
  return error() << "input #" << i << " (" << what
                 << ") must be an integer tensor, got " << v.getType(),
         failure();
}

std::optional<double> NodeBinder::constFloat(Value v) {
  Attribute a;
  if (!v || !matchPattern(v, m_Constant(&a)))
    return std::nullopt;
  auto d = dyn_cast<DenseElementsAttr>(a);
  if (!d || d.getNumElements() != 1)
    return std::nullopt;
  if (isa<FloatType>(d.getElementType()))
    return (*d.getValues<APFloat>().begin()).convertToDouble();
  return static_cast<double>((*d.getValues<APInt>().begin()).getSExtValue());
}

FailureOr<int64_t> NodeBinder::constInt(unsigned i, StringRef what) {
  auto values = constInts(i, what);
  if (failed(values))
    return failure();
  if (values->size() != 1)
    return error() << what << " has " << values->size() << " values; "
                   << node.getOpType() << " takes one",
           failure();
  return values->front();
}

FailureOr<double> NodeBinder::constScalar(unsigned i, StringRef what) {
  Value v = input(i);
  if (!v)
    return error() << "missing input #" << i << " (" << what << ")", failure();
  if (std::optional<double> d = constFloat(v))
    return *d;
  auto diag = error() << what << " (input #" << i
                      << ") must be a compile-time constant scalar";
  explainNotConstant(diag, v);
  return failure();
}

LogicalResult NodeBinder::checkSize(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  std::string overflow = t ? sizeOverflow(t) : "";
  if (overflow.empty())
    return success();
  return error() << "result " << type << " " << overflow;
}

FailureOr<Operation *> NodeBinder::finish(OperationState &state) {
  // Before the op exists: its verifier and folder count its elements.
  for (Type t : state.types)
    if (failed(checkSize(t)))
      return failure();
  Operation *op = b.create(state);
  // Types were inferred (or given) but the op's own invariants, such as
  // operand type constraints, are checked here so the node is named.
  std::string message;
  {
    ScopedDiagnosticHandler capture(b.getContext(), [&](Diagnostic &d) {
      if (message.empty())
        message = d.str();
      return success();
    });
    if (succeeded(verify(op, /*verifyRecursively=*/false)))
      return op;
  }
  op->erase();
  return error() << message, failure();
}

Value NodeBinder::foldResult(Operation *op) {
  SmallVector<OpFoldResult> folded;
  if (op->getNumResults() != 1 || failed(op->fold(folded)) ||
      folded.size() != 1)
    return op->getResult(0);
  Value v;
  if (auto attr = dyn_cast<Attribute>(folded[0])) {
    auto elements = dyn_cast<ElementsAttr>(attr);
    if (!elements || elements.getType() != op->getResult(0).getType())
      return op->getResult(0);
    v = constant(elements);
  } else {
    v = cast<Value>(folded[0]);
  }
  op->erase();
  return v;
}

Value NodeBinder::constant(Attribute value) {
  return graph::ConstantOp::create(b, loc, cast<ElementsAttr>(value));
}

Value NodeBinder::reshape(Value v, ArrayRef<int64_t> shape) {
  auto t = typeOf(v);
  if (t.getShape() == shape)
    return v;
  auto op = graph::ReshapeOp::create(
      b, loc, RankedTensorType::get(shape, t.getElementType()), v);
  return foldResult(op);
}

FailureOr<Value> NodeBinder::transpose(Value v, ArrayRef<int64_t> perm) {
  return create1<graph::TransposeOp>(
      v, {named("perm", b.getDenseI64ArrayAttr(perm))});
}

Value NodeBinder::castTo(Value v, Type elementType) {
  auto t = typeOf(v);
  if (t.getElementType() == elementType)
    return v;
  auto op = graph::CastOp::create(b, loc, t.clone(elementType), v);
  return foldResult(op);
}

void addHandler(HandlerTable &table, StringRef opType, int64_t minOpset,
                int64_t maxOpset, Handler handler) {
  table[opType].push_back({minOpset, maxOpset, std::move(handler)});
}

FailureOr<Value> fill(NodeBinder &n, ArrayRef<int64_t> shape, Type elem,
                      double value) {
  Attribute v =
      isa<FloatType>(elem)
          ? Attribute(n.b.getFloatAttr(elem, value))
          : Attribute(n.b.getIntegerAttr(
                elem,
                elem.isInteger(1) ? value != 0 : static_cast<int64_t>(value)));
  SmallVector<int64_t> ones(shape.size(), 1);
  Value scalar =
      n.constant(DenseElementsAttr::get(RankedTensorType::get(ones, elem), v));
  auto op = n.createTyped<graph::BroadcastToOp>(
      RankedTensorType::get(shape, elem), scalar);
  if (failed(op))
    return failure();
  return n.foldResult(*op);
}

FailureOr<Value> sliceAxis(NodeBinder &n, Value x, int64_t axis, int64_t start,
                           int64_t end) {
  auto t = n.typeOf(x);
  SmallVector<int64_t> starts(t.getRank(), 0), ends(t.getShape()),
      steps(t.getRank(), 1);
  starts[axis] = start;
  ends[axis] = end;
  return n.create1<graph::SliceOp>(
      x, {n.named("starts", n.b.getDenseI64ArrayAttr(starts)),
          n.named("ends", n.b.getDenseI64ArrayAttr(ends)),
          n.named("steps", n.b.getDenseI64ArrayAttr(steps))});
}

FailureOr<Value> gatherAxis(NodeBinder &n, Value x, int64_t axis,
                            ArrayRef<int64_t> indices) {
  auto type = RankedTensorType::get({static_cast<int64_t>(indices.size())},
                                    n.b.getI64Type());
  Value idx = n.constant(DenseIntElementsAttr::get(type, indices));
  return n.create1<graph::GatherOp>(
      {x, idx}, {n.named("axis", n.b.getI64IntegerAttr(axis))});
}

FailureOr<Value> gatherAxisOr(NodeBinder &n, Value x, int64_t axis,
                              ArrayRef<int64_t> indices, double value) {
  auto t = n.typeOf(x);
  int64_t dim = t.getDimSize(axis);
  if (llvm::is_contained(indices, dim)) {
    SmallVector<int64_t> slice(t.getShape());
    slice[axis] = 1;
    FailureOr<Value> filler = fill(n, slice, t.getElementType(), value);
    if (failed(filler))
      return failure();
    auto cat = n.create1<graph::ConcatOp>(
        ValueRange{x, *filler}, {n.named("axis", n.b.getI64IntegerAttr(axis))});
    if (failed(cat))
      return failure();
    x = *cat;
  }
  return gatherAxis(n, x, axis, indices);
}

} // namespace ampc::onnx_to_graph
