//===- RtOps.cpp - the rt dialect -----------------------------------------===//
//
// Registration and verifiers of the rt dialect: offsets are aligned, views
// keep the byte size, kernel bodies match the kernel's signature (and a
// gemm's epilogue, runtime/GemmEpilogue.h).
//
//===----------------------------------------------------------------------===//

#include "dialects/Rt/RtOps.h"

#include "runtime/GemmEpilogue.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace ampc::rtir;

#include "dialects/Rt/RtDialect.cpp.inc"

void RtDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Rt/RtOps.cpp.inc"
      >();
}

int64_t ampc::rtir::byteSize(ShapedType type) {
  Type elem = type.getElementType();
  int64_t bytes = elem.isInteger(1) ? 1 : elem.getIntOrFloatBitWidth() / 8;
  return type.getNumElements() * bytes;
}

static LogicalResult verifyOffset(Operation *op, int64_t offset) {
  if (offset < 0 || offset % kArenaAlignment != 0)
    return op->emitOpError("has arena offset ")
           << offset << ", which is not a non-negative multiple of "
           << kArenaAlignment;
  return success();
}

LogicalResult InputOp::verify() { return verifyOffset(*this, getOffset()); }

LogicalResult ParamOp::verify() {
  if (getInit().getType() != getOutput().getType())
    return emitOpError("has initial value of type ")
           << getInit().getType() << " for a parameter of type "
           << getOutput().getType();
  return verifyOffset(*this, getOffset());
}

LogicalResult UpdateOp::verify() {
  auto param = getParam().getDefiningOp<ParamOp>();
  if (!param)
    return emitOpError("updates a value that is not an rt.param");
  if (getParam().getType() != getValue().getType())
    return emitOpError("gives parameter '")
           << param.getName() << "' of type " << getParam().getType()
           << " a value of type " << getValue().getType();
  // Reported on the later update; an update that only reads the parameter
  // (as another parameter's new value) does not count.
  for (Operation *user : getParam().getUsers()) {
    auto other = dyn_cast<UpdateOp>(user);
    if (other && other != *this && other.getParam() == getParam() &&
        other->getBlock() == (*this)->getBlock() &&
        other->isBeforeInBlock(*this))
      return emitOpError("is the second update of parameter '")
             << param.getName() << "'";
  }
  return success();
}

LogicalResult ViewOp::verify() {
  auto in = cast<ShapedType>(getInput().getType());
  auto out = cast<ShapedType>(getOutput().getType());
  if (in.getElementType() != out.getElementType() ||
      in.getNumElements() != out.getNumElements())
    return emitOpError("views ")
           << in << " as " << out << ": element type and count must match";
  return success();
}

/// A gemm kernel's epilogue (runtime/GemmEpilogue.h): the body is the
/// graph.gemm on the leading inputs, then the epilogue's op wired as its
/// role says, so the Program writer and the backends can rely on it.
static LogicalResult verifyEpilogue(KernelOp k, StringRef name) {
  const ampc::rt::EpilogueInfo *e = ampc::rt::findEpilogue(name);
  if (!e)
    return k.emitOpError("has epilogue '")
           << name << "', which is none of " << ampc::rt::epilogueNames();
  if (k.getKind() != "gemm")
    return k.emitOpError("of kind '")
           << k.getKind() << "' has epilogue '" << name
           << "': only gemm kernels have epilogues";
  Block &body = k.getBody().front();
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  std::string want = std::string("graph.") + e->op;
  if (ops.size() != 2 || ops[0]->getName().getStringRef() != "graph.gemm" ||
      ops[1]->getName().getStringRef() != want)
    return k.emitOpError("with epilogue '")
           << name << "' must compute graph.gemm then " << want;
  Operation *gemm = ops[0], *post = ops[1];
  unsigned n = gemm->getNumOperands();
  for (auto [i, v] : llvm::enumerate(gemm->getOperands()))
    if (i >= body.getNumArguments() || v != body.getArgument(i))
      return k.emitOpError("with epilogue '")
             << name << "': the gemm must take the leading inputs in order";
  if (n == 3 && !e->takesBias())
    return k.emitOpError("with epilogue '")
           << name << "' has a gemm with c, which this epilogue does not add";
  unsigned inputs = n + (e->hasExtraInput() ? 1 : 0);
  unsigned results = 1 + (e->hasExtraOutput() ? 1 : 0);
  if (body.getNumArguments() != inputs || k.getNumResults() != results)
    return k.emitOpError("with epilogue '")
           << name << "' must have " << inputs << " inputs and " << results
           << " results, has " << body.getNumArguments() << " and "
           << k.getNumResults();
  Value g = gemm->getResult(0), p = post->getResult(0);
  SmallVector<Value> reads, yields;
  switch (e->role) {
  case ampc::rt::EpilogueRole::Activation:
    reads = {g};
    yields = {p};
    break;
  case ampc::rt::EpilogueRole::ActivationAux:
    reads = {g};
    yields = {p, g};
    break;
  case ampc::rt::EpilogueRole::Gradient:
    reads = {g, body.getArgument(n)};
    yields = {p};
    break;
  case ampc::rt::EpilogueRole::BiasGradient:
    reads = {body.getArgument(0)};
    yields = {g, p};
    break;
  }
  auto yield = cast<YieldOp>(body.getTerminator());
  if (!llvm::equal(post->getOperands(), reads) ||
      !llvm::equal(yield.getValues(), yields))
    return k.emitOpError("with epilogue '")
           << name << "': " << want
           << " does not read or yield what the epilogue says";
  return success();
}

LogicalResult KernelOp::verify() {
  if (getKind().empty())
    return emitOpError("has an empty kernel kind");
  if (getOffsets().size() != getNumResults())
    return emitOpError("has ") << getOffsets().size() << " offsets for "
                               << getNumResults() << " results";
  for (int64_t off : getOffsets())
    if (failed(verifyOffset(*this, off)))
      return failure();
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError("body has ")
           << body.getNumArguments() << " arguments for " << getInputs().size()
           << " inputs";
  for (auto [i, arg, in] :
       llvm::enumerate(body.getArgumentTypes(), getInputs().getTypes()))
    if (arg != in)
      return emitOpError("body argument ")
             << i << " has type " << arg << " but input " << i << " is " << in;
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError("body must end with rt.yield");
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("body yields ")
           << yield.getValues().getTypes().size()
           << " values whose types differ from the results";
  if (std::optional<StringRef> e = getEpilogue())
    return verifyEpilogue(*this, *e);
  return success();
}

#define GET_OP_CLASSES
#include "dialects/Rt/RtOps.cpp.inc"
