//===- NodeBinder.h - operand/attribute access for ONNX handlers -*- C++ -*-===//
//
// What a handler sees of one onnx.node: its converted inputs, its
// attributes with ONNX defaults, constant inputs read as values, and a way
// to create graph ops whose result types are inferred, with every failure
// reported once, prefixed by the node's name, op type and opset.
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_COMPILER_CONVERSION_ONNXTOGRAPH_NODEBINDER_H
#define AMPC_COMPILER_CONVERSION_ONNXTOGRAPH_NODEBINDER_H

#include "dialects/Graph/GraphOps.h"
#include "dialects/Onnx/OnnxOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"

#include <functional>
#include <optional>

namespace ampc::onnx_to_graph {

class NodeBinder {
public:
  NodeBinder(onnx::NodeOp node, mlir::OpBuilder &builder,
             llvm::SmallVector<mlir::Value> inputs, bool trainingMode)
      : node(node), b(builder), loc(node.getLoc()),
        inputs(std::move(inputs)), trainingMode(trainingMode) {}

  onnx::NodeOp node;
  mlir::OpBuilder &b;
  mlir::Location loc;

  int64_t opset() { return node.getOpset(); }
  bool defaultTrainingMode() const { return trainingMode; }

  /// Emits an error on the node: "node 'N' (Op, opset K): ...".
  mlir::InFlightDiagnostic error();

  // Inputs. A missing optional input (absent or onnx.none) is null.
  unsigned numInputs() { return inputs.size(); }
  unsigned numOutputs() { return node.getNumResults(); }
  mlir::Value input(unsigned i) { return i < inputs.size() ? inputs[i] : nullptr; }
  /// A required input: error if missing.
  mlir::FailureOr<mlir::Value> required(unsigned i, llvm::StringRef what);
  mlir::RankedTensorType typeOf(mlir::Value v) {
    return llvm::cast<mlir::RankedTensorType>(v.getType());
  }
  /// Error unless `v` has a float element type.
  mlir::LogicalResult requireFloat(mlir::Value v, llvm::StringRef what);
  /// Error if the node has more than `n` outputs that are used.
  mlir::LogicalResult atMostOutputs(unsigned n);
  /// Whether output `i` exists and something reads it.
  bool outputUsed(unsigned i) {
    return i < node.getNumResults() && !node.getResult(i).use_empty();
  }

  /// An ONNX axis in [-rank, rank) (or [-rank, rank] when `inclusive`)
  /// made non-negative; error naming it otherwise.
  mlir::FailureOr<int64_t> axis(int64_t axis, int64_t rank,
                                bool inclusive = false);
  /// Every axis of a list made non-negative; error on one out of range or
  /// repeated. The order is kept.
  mlir::LogicalResult axes(llvm::SmallVectorImpl<int64_t> &axes,
                           int64_t rank);

  // Attributes, with the ONNX default when absent.
  int64_t intAttr(llvm::StringRef name, int64_t dflt);
  std::optional<int64_t> intAttr(llvm::StringRef name);
  double floatAttr(llvm::StringRef name, double dflt);
  std::string strAttr(llvm::StringRef name, llvm::StringRef dflt);
  std::optional<llvm::SmallVector<int64_t>> intsAttr(llvm::StringRef name);
  mlir::Attribute attr(llvm::StringRef name) {
    return node.getAttrs().get(name);
  }

  /// The values of a constant integer input (from an initializer, a
  /// Constant node or a folded shape computation); error if not constant.
  mlir::FailureOr<llvm::SmallVector<int64_t>> constInts(unsigned i,
                                                        llvm::StringRef what);
  /// The one value of input `i` (`what`), a compile-time constant of one
  /// element (constInts); error naming the count otherwise.
  mlir::FailureOr<int64_t> constInt(unsigned i, llvm::StringRef what);
  /// The values of a constant float scalar input, or std::nullopt.
  std::optional<double> constFloat(mlir::Value v);
  /// The value of input `i` (`what`), which must be a compile-time constant
  /// scalar; error saying what it is instead (an initializer, which ampc
  /// trains as a parameter; a graph input; a tensor; a computed value).
  mlir::FailureOr<double> constScalar(unsigned i, llvm::StringRef what);

  /// Creates a graph op with inferred result types; on a type or shape
  /// error reports it on the node and returns failure.
  template <typename OpTy>
  mlir::FailureOr<mlir::Operation *>
  create(mlir::ValueRange operands,
         llvm::ArrayRef<mlir::NamedAttribute> attrs = {}) {
    mlir::OperationState state(loc, OpTy::getOperationName());
    state.addOperands(operands);
    state.addAttributes(attrs);
    // Inference reads attributes through the adaptor, which expects the
    // defaults that op creation would add.
    state.name.populateDefaultAttrs(state.attributes);
    llvm::SmallVector<mlir::Type> types;
    std::string message;
    bool inferred;
    {
      // Captures the op's own message so it is reported once, on the node.
      mlir::ScopedDiagnosticHandler capture(
          b.getContext(), [&](mlir::Diagnostic &d) {
            if (message.empty())
              message = d.str();
            return mlir::success();
          });
      inferred = mlir::succeeded(OpTy::inferReturnTypes(
          b.getContext(), loc, state.operands,
          state.attributes.getDictionary(b.getContext()),
          state.getRawProperties(), state.regions, types));
    }
    if (!inferred) {
      if (message.empty())
        message = "cannot infer the result types of " +
                  OpTy::getOperationName().str();
      return error() << message, mlir::failure();
    }
    state.addTypes(types);
    return finish(state);
  }
  /// Same, with explicit result types (ops without type inference).
  template <typename OpTy>
  mlir::FailureOr<mlir::Operation *>
  createTyped(mlir::TypeRange types, mlir::ValueRange operands,
              llvm::ArrayRef<mlir::NamedAttribute> attrs = {}) {
    mlir::OperationState state(loc, OpTy::getOperationName());
    state.addOperands(operands);
    state.addAttributes(attrs);
    state.addTypes(types);
    return finish(state);
  }
  /// Single-result op; folds to a constant when its operands are constant
  /// (shape computations).
  template <typename OpTy>
  mlir::FailureOr<mlir::Value>
  create1(mlir::ValueRange operands,
          llvm::ArrayRef<mlir::NamedAttribute> attrs = {}) {
    auto op = create<OpTy>(operands, attrs);
    if (mlir::failed(op))
      return mlir::failure();
    return foldResult(*op);
  }

  /// Fails, naming the node, when the element count or the bytes of
  /// `type` overflow int64 (every op a handler creates is checked so).
  mlir::LogicalResult checkSize(mlir::Type type);

  mlir::Value reshape(mlir::Value v, llvm::ArrayRef<int64_t> shape);
  /// `v` with its dimensions in the order `perm`.
  mlir::FailureOr<mlir::Value> transpose(mlir::Value v,
                                         llvm::ArrayRef<int64_t> perm);
  mlir::Value constant(mlir::Attribute value);
  mlir::Value castTo(mlir::Value v, mlir::Type elementType);

  mlir::NamedAttribute named(llvm::StringRef name, mlir::Attribute a) {
    return b.getNamedAttr(name, a);
  }

  /// Replaces a single-result op by its folded value if it folds.
  mlir::Value foldResult(mlir::Operation *op);

private:
  mlir::FailureOr<mlir::Operation *> finish(mlir::OperationState &state);

  llvm::SmallVector<mlir::Value> inputs;
  bool trainingMode;
};

/// A handler converts one node; it returns one value per node output
/// (null for outputs it does not produce, which must then be unused).
using Handler =
    std::function<mlir::FailureOr<llvm::SmallVector<mlir::Value>>(NodeBinder &)>;

/// A slice of `x` along one axis, every other dimension whole.
mlir::FailureOr<mlir::Value> sliceAxis(NodeBinder &n, mlir::Value x,
                                       int64_t axis, int64_t start,
                                       int64_t end);

/// A constant of `shape` whose every element is `value` (a broadcast
/// scalar: nothing the size of `shape` is stored).
mlir::FailureOr<mlir::Value> fill(NodeBinder &n, llvm::ArrayRef<int64_t> shape,
                                  mlir::Type elem, double value);

/// `x` gathered along `axis` at the constant `indices`.
mlir::FailureOr<mlir::Value> gatherAxis(NodeBinder &n, mlir::Value x,
                                        int64_t axis,
                                        llvm::ArrayRef<int64_t> indices);

/// The same, where an index equal to the axis' size stands for `value` (a
/// slice of it is appended when an index asks for it): windows that reach
/// into padding.
mlir::FailureOr<mlir::Value> gatherAxisOr(NodeBinder &n, mlir::Value x,
                                          int64_t axis,
                                          llvm::ArrayRef<int64_t> indices,
                                          double value);

/// The default-domain opsets ampc converts: an op handled "from kMinOpset"
/// is handled as every version of it in this range defines it.
constexpr int64_t kMinOpset = 11, kMaxOpset = 18;

/// Handlers keyed by "domain::OpType" (domain empty for ai.onnx), each with
/// the opset range it implements.
struct HandlerEntry {
  int64_t minOpset, maxOpset;
  Handler handler;
};
using HandlerTable = llvm::StringMap<llvm::SmallVector<HandlerEntry, 2>>;

void addHandler(HandlerTable &table, llvm::StringRef opType, int64_t minOpset,
                int64_t maxOpset, Handler handler);

void populateElementwiseHandlers(HandlerTable &table);
void populateFillHandlers(HandlerTable &table);
void populatePadHandlers(HandlerTable &table);
void populateRecurrentHandlers(HandlerTable &table);
void populateResizeHandlers(HandlerTable &table);
void populateConvTransposeHandlers(HandlerTable &table);
void populateEinsumHandlers(HandlerTable &table);
void populateContractionHandlers(HandlerTable &table);
void populateNormalizationHandlers(HandlerTable &table);
void populateReductionHandlers(HandlerTable &table);
void populateShapeHandlers(HandlerTable &table);
void populateTrainingHandlers(HandlerTable &table);

/// Ops a handler emits for one ONNX result.
inline mlir::FailureOr<llvm::SmallVector<mlir::Value>>
results(mlir::FailureOr<mlir::Value> v) {
  if (mlir::failed(v))
    return mlir::failure();
  return llvm::SmallVector<mlir::Value>{*v};
}

} // namespace ampc::onnx_to_graph

#endif // AMPC_COMPILER_CONVERSION_ONNXTOGRAPH_NODEBINDER_H
