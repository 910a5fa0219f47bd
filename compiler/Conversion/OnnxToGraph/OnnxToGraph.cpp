//===- OnnxToGraph.cpp - the convert-onnx-to-graph pass -------------------===//
//
// Drives the conversion of @forward: turns graph inputs and initializers
// into named, static-shape arguments (integer initializers into constants),
// converts each onnx.node with the handler registered for its op type and
// opset, and checks each result against the type ONNX itself inferred. Op
// types without a handler are all reported before anything is converted.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/OnnxToGraph/NodeBinder.h"
#include "compiler/Conversion/Passes.h"
#include "compiler/Conversion/TensorSize.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

namespace ampc {
#define GEN_PASS_DEF_CONVERTONNXTOGRAPHPASS
#include "compiler/Conversion/Passes.h.inc"
} // namespace ampc

using namespace mlir;
using namespace ampc;
using namespace ampc::onnx_to_graph;

namespace {

const HandlerTable &handlers() {
  static const HandlerTable table = [] {
    HandlerTable t;
    populateElementwiseHandlers(t);
    populateFillHandlers(t);
    populatePadHandlers(t);
    populateRecurrentHandlers(t);
    populateResizeHandlers(t);
    populateConvTransposeHandlers(t);
    populateEinsumHandlers(t);
    populateContractionHandlers(t);
    populateNormalizationHandlers(t);
    populateReductionHandlers(t);
    populateShapeHandlers(t);
    populateTrainingHandlers(t);
    return t;
  }();
  return table;
}

/// "domain::OpType", or "OpType" in the default domain: handlers()'s key.
std::string handlerKey(ampc::onnx::NodeOp node) {
  std::string key = node.getOpType().str();
  StringRef domain = node.getDomain().value_or("");
  if (!domain.empty() && domain != "ai.onnx")
    key = domain.str() + "::" + key;
  return key;
}

/// The handler of `node`'s op at its opset; null when there is none.
const HandlerEntry *findHandler(ampc::onnx::NodeOp node) {
  auto found = handlers().find(handlerKey(node));
  if (found == handlers().end())
    return nullptr;
  const HandlerEntry *entry = nullptr;
  for (const HandlerEntry &e : found->second)
    if (node.getOpset() >= e.minOpset && node.getOpset() <= e.maxOpset)
      entry = &e;
  return entry;
}

/// The error for a node findHandler has no handler for: the op is unknown,
/// or known at other opsets. `uses` nodes of the model share the problem.
void diagnoseMissingHandler(ampc::onnx::NodeOp node, NodeBinder &binder,
                            unsigned uses) {
  StringRef domain = node.getDomain().value_or("");
  auto found = handlers().find(handlerKey(node));
  InFlightDiagnostic diag = binder.error();
  if (found == handlers().end()) {
    diag << "no conversion for ONNX op '" << node.getOpType() << "' in domain '"
         << (domain.empty() ? "ai.onnx" : domain)
         << "': ampc does not support this op";
  } else {
    diag << "opset " << node.getOpset()
         << " is not supported for this op (ampc supports opsets";
    for (const HandlerEntry &e : found->second)
      diag << " " << e.minOpset << " to " << e.maxOpset;
    diag << ")";
  }
  if (uses > 1)
    diag << " (" << uses << " nodes; this is the first)";
}

bool isSupportedElement(Type t) {
  return t.isF32() || t.isF16() || t.isBF16() || t.isF64() ||
         t.isInteger(64) || t.isInteger(32) || t.isInteger(1);
}

struct ConvertOnnxToGraphPass
    : ampc::impl::ConvertOnnxToGraphPassBase<ConvertOnnxToGraphPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto func = module.lookupSymbol<func::FuncOp>("forward");
    if (!func) {
      module.emitError("no @forward function to convert (is this an "
                       "imported ONNX model?)");
      return signalPassFailure();
    }
    if (failed(checkHandlersExist(func)) || failed(convertArguments(func)) ||
        failed(convertNodes(func)))
      return signalPassFailure();
    finishSignature(func);
  }

  LogicalResult checkHandlersExist(func::FuncOp func);
  LogicalResult convertArguments(func::FuncOp func);
  LogicalResult convertNodes(func::FuncOp func);
  LogicalResult convertNode(ampc::onnx::NodeOp node, OpBuilder &b);
  void finishSignature(func::FuncOp func);
};

LogicalResult ConvertOnnxToGraphPass::convertArguments(func::FuncOp func) {
  Block &body = func.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&body);
  llvm::StringSet<> toFreeze;
  for (const std::string &name : freeze)
    toFreeze.insert(name);
  llvm::StringSet<> initializers;
  llvm::BitVector erase(body.getNumArguments());
  for (BlockArgument arg : body.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto name = func.getArgAttrOfType<StringAttr>(i, "onnx.name");
    auto init = func.getArgAttrOfType<ElementsAttr>(i, "onnx.initializer");
    std::string what = name ? "'" + name.str() + "'" : "#" + std::to_string(i);
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || !type.hasStaticShape())
      return func.emitError() << "argument " << what << " has type "
                              << arg.getType()
                              << "; ampc compiles static shapes (import with "
                                 "--shape NAME=d0,d1,...)";
    if (!isSupportedElement(type.getElementType()))
      return func.emitError() << "argument " << what << " has element type "
                              << type.getElementType()
                              << ", which ampc does not support";
    if (std::string overflow = sizeOverflow(type); !overflow.empty())
      return func.emitError()
             << "argument " << what << " of type " << type << " " << overflow;
    if (init) {
      initializers.insert(name.getValue());
      if (!isa<FloatType>(type.getElementType())) {
        // Integer initializers are shapes, axes or indices: constants.
        arg.replaceAllUsesWith(
            graph::ConstantOp::create(b, func.getLoc(), init));
        erase.set(i);
        continue;
      }
    }
    SmallVector<NamedAttribute> attrs;
    if (name)
      attrs.push_back(b.getNamedAttr(graph::kNameAttr, name));
    if (init) {
      // Frozen by the freeze option or by the model (ampc.frozen).
      bool frozen = toFreeze.contains(name.getValue()) ||
                    func.getArgAttr(i, onnx::kFrozenArgAttr);
      attrs.push_back(b.getNamedAttr(graph::kInitAttr, init));
      attrs.push_back(
          b.getNamedAttr(graph::kTrainableAttr, b.getBoolAttr(!frozen)));
    }
    func.setArgAttrs(i, b.getDictionaryAttr(attrs));
  }
  for (const std::string &name : freeze)
    if (!initializers.contains(name)) {
      std::string list;
      for (const auto &n : initializers)
        list += (list.empty() ? "'" : ", '") + n.getKey().str() + "'";
      return func.emitError() << "freeze names '" << name
                              << "', which is not an initializer of the "
                                 "model (initializers: "
                              << list << ")";
    }
  if (failed(func.eraseArguments(erase)))
    return func.emitError("cannot remove the integer initializer arguments");
  return success();
}

/// Every op type (at its opset) the model uses that has no handler gets
/// one error, at its first node, with the number of nodes using it: a user
/// learns all that is missing from one run, not one op per attempt.
LogicalResult ConvertOnnxToGraphPass::checkHandlersExist(func::FuncOp func) {
  struct Missing {
    ampc::onnx::NodeOp first;
    unsigned uses = 0;
  };
  // In the order of the first node, keyed by op and opset.
  SmallVector<Missing> missing;
  llvm::StringMap<size_t> index;
  func.walk([&](ampc::onnx::NodeOp node) {
    if (findHandler(node))
      return;
    auto [it, added] = index.try_emplace(handlerKey(node) + "@" +
                                             std::to_string(node.getOpset()),
                                         missing.size());
    if (added)
      missing.push_back({node, 0});
    ++missing[it->second].uses;
  });
  OpBuilder b(func.getContext());
  for (Missing &m : missing) {
    SmallVector<Value> inputs;
    for (Value v : m.first.getInputs())
      inputs.push_back(isa<NoneType>(v.getType()) ? Value() : v);
    NodeBinder binder(m.first, b, inputs, trainingMode);
    diagnoseMissingHandler(m.first, binder, m.uses);
  }
  return failure(!missing.empty());
}

LogicalResult ConvertOnnxToGraphPass::convertNode(ampc::onnx::NodeOp node,
                                                  OpBuilder &b) {
  SmallVector<Value> inputs;
  for (Value v : node.getInputs())
    inputs.push_back(isa<NoneType>(v.getType()) ? Value() : v);
  b.setInsertionPoint(node);
  NodeBinder binder(node, b, inputs, trainingMode);

  const HandlerEntry *entry = findHandler(node);
  if (!entry) {
    diagnoseMissingHandler(node, binder, 1);
    return failure();
  }
  for (Value v : inputs)
    if (v && !isa<RankedTensorType>(v.getType()))
      return binder.error() << "input of type " << v.getType()
                            << " was not converted";

  FailureOr<SmallVector<Value>> outs = entry->handler(binder);
  if (failed(outs))
    return failure();
  for (auto [i, result] : llvm::enumerate(node.getResults())) {
    Value repl = i < outs->size() ? (*outs)[i] : Value();
    if (!repl) {
      if (!result.use_empty())
        return binder.error() << "output #" << i
                              << " is used, but ampc does not produce it";
      continue;
    }
    if (failed(binder.checkSize(repl.getType())))
      return failure();
    // ONNX's own shape inference typed this result; a disagreement means
    // the model or this conversion is wrong, so stop here with both types.
    if (auto onnxType = dyn_cast<RankedTensorType>(result.getType()))
      if (onnxType.hasStaticShape() && onnxType != repl.getType())
        return binder.error() << "output #" << i << " has type "
                              << repl.getType()
                              << " but the model declares " << onnxType;
    result.replaceAllUsesWith(repl);
  }
  node.erase();
  return success();
}

LogicalResult ConvertOnnxToGraphPass::convertNodes(func::FuncOp func) {
  OpBuilder b(func.getContext());
  for (Operation &op :
       llvm::make_early_inc_range(func.getBody().front().getOperations())) {
    if (auto node = dyn_cast<ampc::onnx::NodeOp>(op))
      if (failed(convertNode(node, b)))
        return failure();
  }
  for (Operation &op :
       llvm::make_early_inc_range(func.getBody().front().getOperations()))
    if (isa<ampc::onnx::NoneOp>(op)) {
      if (!op.use_empty())
        return op.emitError("onnx.none is still used after conversion");
      op.erase();
    }
  // Constants folded into attributes (Clip bounds, Reshape shapes, ...)
  // are left without users.
  SmallVector<Operation *> dead;
  for (Operation &op : llvm::reverse(func.getBody().front().getOperations()))
    if (isa<graph::ConstantOp>(op) && op.use_empty())
      dead.push_back(&op);
  for (Operation *op : dead)
    op->erase();
  return success();
}

void ConvertOnnxToGraphPass::finishSignature(func::FuncOp func) {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  func.setType(FunctionType::get(func.getContext(),
                                 func.getBody().front().getArgumentTypes(),
                                 ret.getOperandTypes()));
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (auto name = func.getResultAttrOfType<StringAttr>(i, "onnx.name")) {
      func.removeResultAttr(i, StringAttr::get(func.getContext(), "onnx.name"));
      func.setResultAttr(i, graph::kNameAttr, name);
    }
}

} // namespace
