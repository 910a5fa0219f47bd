//===- ProgramWriter.cpp - rt dialect -> Program --------------------------===//
//
// A direct walk: every op of an rt function maps to one Program entry, in
// order, so value ids follow the op order and the runtime's checks (written
// before read, liveness) see the same order the memory planner used.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/ProgramWriter.h"

#include "dialects/Graph/GraphOps.h"
#include "dialects/Rt/RtOps.h"
#include "runtime/ByteSize.h"
#include "runtime/GemmEpilogue.h"
#include "runtime/Program.h"
#include "runtime/program.pb.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <climits>

using namespace mlir;
namespace pb = ::ampc::rt::proto;

namespace ampc {
namespace {

// The Program's dtype codes are the runtime's, shifted past UNSPECIFIED.
static_assert(pb::F32 == 1 + static_cast<int>(rt::DType::F32) &&
                  pb::F16 == 1 + static_cast<int>(rt::DType::F16) &&
                  pb::BF16 == 1 + static_cast<int>(rt::DType::BF16) &&
                  pb::F64 == 1 + static_cast<int>(rt::DType::F64) &&
                  pb::I64 == 1 + static_cast<int>(rt::DType::I64) &&
                  pb::I32 == 1 + static_cast<int>(rt::DType::I32) &&
                  pb::I1 == 1 + static_cast<int>(rt::DType::I1),
              "program.proto's DType and rt::DType disagree");

FailureOr<pb::DType> dtypeOf(Operation *at, Type t) {
  if (std::optional<rt::DType> d = runtimeDType(t))
    return static_cast<pb::DType>(1 + static_cast<int>(*d));
  return at->emitOpError("has element type ")
             << t << ", which a Program cannot hold",
         failure();
}

LogicalResult setType(Operation *at, Type type, pb::TensorType &out) {
  auto shaped = cast<ShapedType>(type);
  FailureOr<pb::DType> d = dtypeOf(at, shaped.getElementType());
  if (failed(d))
    return failure();
  out.set_dtype(*d);
  for (int64_t dim : shaped.getShape())
    out.add_shape(dim);
  return success();
}

/// The kernel's aliasing as the memory planner planned by it.
pb::Aliasing aliasingOf(rtir::KernelOp kernel) {
  switch (
      graph::aliasingOfBody(kernel.getBody().front(), kernel.getNumResults())) {
  case graph::BodyAliasing::None:
    break;
  case graph::BodyAliasing::Elementwise:
    return pb::ALIASING_ELEMENTWISE;
  case graph::BodyAliasing::InPlaceUpdate:
    return pb::ALIASING_IN_PLACE_UPDATE;
  }
  return pb::ALIASING_NONE;
}

/// The elements of `attr` in the runtime's layout.
/// A splat whose bytes are not all zero: state a runner cannot start at zero.
bool isNonzeroSplat(ElementsAttr attr) {
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense || !dense.isSplat())
    return false;
  return llvm::any_of(dense.getRawData(), [](char c) { return c != 0; });
}

FailureOr<std::string> elementBytes(Operation *at, ElementsAttr attr) {
  auto type = cast<ShapedType>(attr.getType());
  int64_t want = rtir::byteSize(type);
  if (auto res = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = res.getRawHandle().getBlob();
    if (!blob)
      return at->emitOpError("refers to resource '")
                 << res.getRawHandle().getKey() << "', which holds no data",
             failure();
    ArrayRef<char> data = blob->getData();
    if (static_cast<int64_t>(data.size()) != want)
      return at->emitOpError("has a resource of ")
                 << data.size() << " bytes for " << type << " (" << want
                 << " bytes)",
             failure();
    return std::string(data.data(), data.size());
  }
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense)
    return at->emitOpError("has a constant that is neither dense nor a "
                           "dense resource"),
           failure();
  // A splat is expanded here: its size, not its attribute, is what counts.
  if (want > rt::kMaxProgramBytes)
    return at->emitOpError("has a value of ")
               << rt::describeBytes(want) << " for " << type
               << ", more than the " << rt::formatBytes(rt::kMaxProgramBytes)
               << " a Program value may have",
           failure();
  std::string out;
  out.reserve(want);
  if (type.getElementType().isInteger(1)) {
    for (bool b : dense.getValues<bool>())
      out.push_back(b ? 1 : 0);
    return out;
  }
  ArrayRef<char> raw = dense.getRawData();
  if (dense.isSplat()) {
    for (int64_t i = 0; i < type.getNumElements(); ++i)
      out.append(raw.data(), raw.size());
  } else {
    out.assign(raw.data(), raw.size());
  }
  if (static_cast<int64_t>(out.size()) != want)
    return at->emitOpError("has ")
               << out.size() << " bytes of data for " << type,
           failure();
  return out;
}

/// A type attribute travels as the type's spelling: graph.accumulate = f32
/// reaches the kernel as "f32".
std::string spelling(Type t) {
  std::string s;
  llvm::raw_string_ostream(s) << t;
  return s;
}

LogicalResult setAttrs(Operation *op,
                       google::protobuf::Map<std::string, pb::Attr> &out) {
  // Every attribute with a default in ODS is written with it, so a Program
  // says what it computes without the runtime restating the defaults.
  NamedAttrList attrs(op->getAttrDictionary());
  op->getName().populateDefaultAttrs(attrs);
  for (NamedAttribute na : attrs) {
    // How a variadic op's operands split into groups: the kernel reads
    // that from its input count.
    if (na.getName() == "operandSegmentSizes" ||
        llvm::is_contained(graph::kCompilerOnlyAttrs, na.getName().getValue()))
      continue;
    pb::Attr a;
    Attribute v = na.getValue();
    if (auto b = dyn_cast<BoolAttr>(v))
      a.set_i(b.getValue());
    else if (auto i = dyn_cast<IntegerAttr>(v))
      a.set_i(i.getValue().getSExtValue());
    else if (auto f = dyn_cast<FloatAttr>(v))
      a.set_f(f.getValueAsDouble());
    else if (auto s = dyn_cast<StringAttr>(v))
      a.set_s(s.getValue().str());
    else if (auto arr = dyn_cast<DenseI64ArrayAttr>(v))
      for (int64_t x : arr.asArrayRef())
        a.mutable_ints()->add_values(x);
    else if (auto t = dyn_cast<TypeAttr>(v))
      a.set_s(spelling(t.getValue()));
    else
      return op->emitOpError("has attribute '")
                 << na.getName().getValue() << "' of a kind a Program cannot "
                 << "hold: " << v,
             failure();
    out[na.getName().str()] = a;
  }
  return success();
}

std::string locationName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    std::string s;
    for (Location l : fused.getLocations()) {
      std::string part = locationName(l);
      if (!part.empty())
        s += (s.empty() ? "" : ",") + part;
    }
    return s;
  }
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return file.getFilename().str() + ":" + std::to_string(file.getLine());
  return "";
}

/// Ops whose last operand is optional (ODS `Optional<>`): the kernel sees
/// it as absent (-1) when the op does not have it.
int operandCountWithOptional(Operation *op) {
  if (isa<graph::GemmOp, graph::Conv2dOp, graph::SoftmaxCrossEntropyOp,
          graph::NllLossOp, graph::LayerNormOp>(op))
    return 3;
  return -1;
}

class FunctionWriter {
public:
  FunctionWriter(func::FuncOp func, pb::Function &out,
                 const ProgramWriteOptions &options)
      : func(func), out(out), options(options) {}

  LogicalResult write() {
    out.set_name(func.getSymName().str());
    auto arena = func->getAttrOfType<IntegerAttr>(rtir::kArenaSizeAttr);
    if (!arena)
      return func.emitOpError("has no '")
                 << rtir::kArenaSizeAttr
                 << "' attribute: run convert-graph-to-rt first",
             failure();
    if (arena.getInt() > rt::kMaxProgramBytes)
      return func.emitError()
                 << "function '" << func.getSymName() << "' has an arena of "
                 << rt::describeBytes(arena.getInt()) << ", more than the "
                 << rt::formatBytes(rt::kMaxProgramBytes)
                 << " a Program may have",
             failure();
    out.set_arena_size(arena.getInt());
    out.set_params_from_step(func->hasAttr(rtir::kParamsFromStepAttr));
    for (Operation &op : func.getBody().front())
      if (failed(writeOp(op)))
        return failure();
    return success();
  }

private:
  int newValue(Operation *at, Value v, pb::Value *&pv) {
    pv = out.add_values();
    if (failed(setType(at, v.getType(), *pv->mutable_type())))
      return -1;
    int id = out.values_size() - 1;
    ids[v] = id;
    return id;
  }

  LogicalResult writeOp(Operation &op) {
    pb::Value *pv;
    if (auto in = dyn_cast<rtir::InputOp>(op)) {
      int id = newValue(&op, in, pv);
      if (id < 0)
        return failure();
      pv->set_arena_offset(in.getOffset());
      pb::Binding *b = out.add_inputs();
      b->set_name(in.getName().str());
      b->set_value(id);
      return success();
    }
    if (auto param = dyn_cast<rtir::ParamOp>(op)) {
      int id = newValue(&op, param, pv);
      if (id < 0)
        return failure();
      pv->set_arena_offset(param.getOffset());
      paramBinding[param] = out.params_size();
      pb::Binding *b = out.add_params();
      b->set_name(param.getName().str());
      b->set_value(id);
      // The step's parameter holds it (and the runner copies it in).
      if (out.params_from_step())
        return success();
      // A nonzero splat (a loss scale) is state no runner could guess.
      if (options.omitWeights && !isNonzeroSplat(param.getInit()))
        return success();
      FailureOr<std::string> init = elementBytes(&op, param.getInit());
      if (failed(init))
        return failure();
      b->set_init(std::move(*init));
      return success();
    }
    if (auto cst = dyn_cast<graph::ConstantOp>(op)) {
      FailureOr<std::string> data = elementBytes(&op, cst.getValue());
      if (failed(data))
        return failure();
      pb::Constant *c = out.add_constants();
      if (failed(setType(&op, cst.getType(), *c->mutable_type())))
        return failure();
      c->set_data(std::move(*data));
      if (newValue(&op, cst, pv) < 0)
        return failure();
      pv->set_constant(out.constants_size() - 1);
      return success();
    }
    if (auto view = dyn_cast<rtir::ViewOp>(op)) {
      int src = ids.lookup(view.getInput());
      // Elements of a RepeatedPtrField keep their address as it grows.
      const pb::Value &srcValue = out.values(src);
      if (newValue(&op, view, pv) < 0)
        return failure();
      if (srcValue.has_constant()) {
        pv->set_constant(srcValue.constant());
      } else {
        pv->set_arena_offset(srcValue.arena_offset());
        pv->set_view_of(src);
      }
      return success();
    }
    if (auto kernel = dyn_cast<rtir::KernelOp>(op))
      return writeKernel(kernel);
    if (auto output = dyn_cast<rtir::OutputOp>(op)) {
      pb::Binding *b = out.add_outputs();
      b->set_name(output.getName().str());
      b->set_value(ids.lookup(output.getValue()));
      return success();
    }
    if (auto update = dyn_cast<rtir::UpdateOp>(op)) {
      auto it = paramBinding.find(update.getParam());
      if (it == paramBinding.end())
        return update.emitOpError("updates a parameter the Program has not "
                                  "bound"),
               failure();
      out.mutable_params(it->second)->set_update(ids.lookup(update.getValue()));
      return success();
    }
    if (isa<func::ReturnOp>(op))
      return success();
    return op.emitOpError("cannot be written to a Program (not in rt form)");
  }

  LogicalResult writeKernel(rtir::KernelOp kernel) {
    pb::Kernel *k = out.add_kernels();
    k->set_kind(kernel.getKind().str());
    k->set_aliasing(aliasingOf(kernel));
    if (options.locations)
      k->set_location(locationName(kernel.getLoc()));
    for (Value in : kernel.getInputs())
      k->add_inputs(ids.lookup(in));
    for (auto [res, off] :
         llvm::zip(kernel.getResults(), kernel.getOffsets())) {
      pb::Value *pv;
      int id = newValue(kernel, res, pv);
      if (id < 0)
        return failure();
      pv->set_arena_offset(off);
      k->add_outputs(id);
    }
    Block &body = kernel.getBody().front();
    if (std::optional<StringRef> epilogue = kernel.getEpilogue())
      return writeEpilogue(kernel, *epilogue, *k);
    if (kernel.getKind() != "fused") {
      auto ops = body.without_terminator();
      // An optimizer update may also write the rounded working copy of the
      // new parameter (a graph.cast of its first result): one more output.
      if (!llvm::hasSingleElement(ops) && !graph::isUpdateWithWorkingCopy(body))
        return kernel.emitOpError("of kind '")
                   << kernel.getKind()
                   << "' must have exactly one body op (an optimizer update "
                      "may add a cast of its new parameter)",
               failure();
      Operation &inner = *ops.begin();
      if (inner.getName().stripDialect() != kernel.getKind())
        return kernel.emitOpError("of kind '")
                   << kernel.getKind() << "' computes " << inner.getName(),
               failure();
      for (auto [i, v] : llvm::enumerate(inner.getOperands())) {
        auto arg = dyn_cast<BlockArgument>(v);
        if (!arg || arg.getArgNumber() != i)
          return kernel.emitOpError("body op must take the kernel inputs "
                                    "in order"),
                 failure();
      }
      int want = operandCountWithOptional(&inner);
      if (want > 0 && static_cast<int>(inner.getNumOperands()) == want - 1)
        k->add_inputs(-1);
      return setAttrs(&inner, *k->mutable_attrs());
    }
    llvm::DenseMap<Value, int> local;
    for (BlockArgument arg : body.getArguments())
      local[arg] = arg.getArgNumber();
    int step = 0;
    for (Operation &inner : body.without_terminator()) {
      pb::Step *s = k->add_steps();
      s->set_op(inner.getName().stripDialect().str());
      if (inner.getNumResults() != 1)
        return inner.emitOpError("in a fused kernel must have one result"),
               failure();
      for (Value v : inner.getOperands())
        s->add_operands(local.at(v));
      FailureOr<pb::DType> d = dtypeOf(
          &inner,
          cast<ShapedType>(inner.getResult(0).getType()).getElementType());
      if (failed(d))
        return failure();
      s->set_dtype(*d);
      if (failed(setAttrs(&inner, *s->mutable_attrs())))
        return failure();
      local[inner.getResult(0)] = -(step++) - 1;
    }
    return success();
  }

  /// A gemm with an epilogue (its body checked by the rt verifier against
  /// runtime/GemmEpilogue.h): inputs a, b, c (-1 when absent), then the
  /// epilogue's input; attributes the gemm's, `epilogue`, and those of the
  /// activation or gradient it applies (gelu's `approximate`). A bias
  /// gradient's reduce_sum adds none: "bgrad" says all it does.
  LogicalResult writeEpilogue(rtir::KernelOp kernel, StringRef name,
                              pb::Kernel &k) {
    const rt::EpilogueInfo *e = rt::findEpilogue(name);
    auto ops = kernel.getBody().front().without_terminator();
    Operation &gemm = *ops.begin(), &post = *std::next(ops.begin());
    k.clear_inputs();
    for (auto [i, in] : llvm::enumerate(kernel.getInputs())) {
      if (i == gemm.getNumOperands() && gemm.getNumOperands() == 2)
        k.add_inputs(-1);
      k.add_inputs(ids.lookup(in));
    }
    if (gemm.getNumOperands() == 2 && !e->hasExtraInput())
      k.add_inputs(-1);
    auto &attrs = *k.mutable_attrs();
    if (failed(setAttrs(&gemm, attrs)))
      return failure();
    if (e->role != rt::EpilogueRole::BiasGradient) {
      google::protobuf::Map<std::string, pb::Attr> postAttrs;
      if (failed(setAttrs(&post, postAttrs)))
        return failure();
      for (const auto &[key, value] : postAttrs) {
        auto [it, added] = attrs.insert({key, value});
        if (!added &&
            it->second.SerializeAsString() != value.SerializeAsString())
          return kernel.emitOpError("with epilogue '")
                     << name << "': " << post.getName()
                     << " and the gemm give attribute '" << key
                     << "' different values",
                 failure();
      }
    }
    pb::Attr a;
    a.set_s(name.str());
    if (!attrs.insert({"epilogue", a}).second)
      return kernel.emitOpError("has a body op with an attribute named "
                                "'epilogue'"),
             failure();
    return success();
  }

  func::FuncOp func;
  pb::Function &out;
  const ProgramWriteOptions &options;
  llvm::DenseMap<Value, int> ids;
  llvm::DenseMap<Value, int> paramBinding; // rt.param -> index in params
};

} // namespace

std::optional<rt::DType> runtimeDType(Type t) {
  if (t.isF32())
    return rt::DType::F32;
  if (t.isF16())
    return rt::DType::F16;
  if (t.isBF16())
    return rt::DType::BF16;
  if (t.isF64())
    return rt::DType::F64;
  if (t.isInteger(64))
    return rt::DType::I64;
  if (t.isInteger(32))
    return rt::DType::I32;
  if (t.isInteger(1))
    return rt::DType::I1;
  return std::nullopt;
}

/// The step information `f` carries (graph.step_info, which the graph
/// dialect verified when it was parsed or set), or none.
static std::optional<rt::StepInfo> readStepInfo(func::FuncOp f) {
  auto d = f->getAttrOfType<DictionaryAttr>(graph::kStepInfoAttr);
  if (!d)
    return std::nullopt;
  namespace key = graph::step_info;
  rt::StepInfo info;
  info.function = f.getSymName().str();
  info.loss = d.getAs<StringAttr>(key::kLoss).getValue().str();
  info.checksOverflow = d.getAs<BoolAttr>(key::kChecksOverflow).getValue();
  info.staticScale =
      d.getAs<FloatAttr>(key::kStaticScale).getValue().convertToDouble();
  for (NamedAttribute e : d.getAs<DictionaryAttr>(key::kClasses))
    info.classes[e.getName().str()] = cast<IntegerAttr>(e.getValue()).getInt();
  for (NamedAttribute e : d.getAs<DictionaryAttr>(key::kIgnoreIndex))
    info.ignoreIndex[e.getName().str()] =
        cast<IntegerAttr>(e.getValue()).getInt();
  for (Attribute w : d.getAs<ArrayAttr>(key::kWeights))
    info.weights.insert(cast<StringAttr>(w).getValue().str());
  for (NamedAttribute e : d.getAs<DictionaryAttr>(key::kWorkingCopies))
    info.workingCopies[e.getName().str()] =
        cast<StringAttr>(e.getValue()).getValue().str();
  info.accumulate = d.getAs<IntegerAttr>(key::kAccumulate).getInt();
  if (auto n = d.getAs<IntegerAttr>(key::kWorldSize))
    info.worldSize = n.getInt();
  return info;
}

namespace {

/// Whether `func`, which takes its parameters from the step (`step`, null
/// when the module has none), can: each of its parameters is one of the
/// step's, of the same shape. The runtime checks the same of a file.
LogicalResult checkParamsFromStep(func::FuncOp func, func::FuncOp step) {
  if (!step)
    return func.emitError("@")
               << func.getSymName() << " takes its parameters from the "
               << "training step (" << rtir::kParamsFromStepAttr
               << "), but no function of the module carries "
               << graph::kStepInfoAttr,
           failure();
  if (step == func)
    return func.emitError("@")
               << func.getSymName() << " is the training step, and takes "
               << "its parameters from itself",
           failure();
  llvm::StringMap<rtir::ParamOp> stepParams;
  step.walk([&](rtir::ParamOp p) { stepParams[p.getName()] = p; });
  WalkResult r = func.walk([&](rtir::ParamOp p) {
    auto it = stepParams.find(p.getName());
    if (it == stepParams.end())
      return p.emitError("parameter '")
                 << p.getName() << "' of @" << func.getSymName()
                 << " comes from the training step, which has no parameter "
                 << "of that name",
             WalkResult::interrupt();
    auto mine = cast<ShapedType>(p.getType());
    auto theirs = cast<ShapedType>(it->second.getType());
    if (mine.getShape() != theirs.getShape() ||
        isa<FloatType>(mine.getElementType()) !=
            isa<FloatType>(theirs.getElementType()))
      return p.emitError("parameter '")
                 << p.getName() << "' of @" << func.getSymName()
                 << " has the type " << mine << ", but the training step's "
                 << "has " << theirs,
             WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(r.wasInterrupted());
}

} // namespace

LogicalResult writeProgram(ModuleOp module, std::string &bytes,
                           const ProgramWriteOptions &options) {
  pb::Program program;
  program.set_producer("ampc");
  program.set_weights_omitted(options.omitWeights);
  func::FuncOp stepFunc;
  for (auto func : module.getOps<func::FuncOp>()) {
    std::optional<rt::StepInfo> s = readStepInfo(func);
    if (!s)
      continue;
    if (stepFunc)
      return func.emitError("carries ")
                 << graph::kStepInfoAttr << " as @" << stepFunc.getSymName()
                 << " does; a Program describes one training step",
             failure();
    stepFunc = func;
    pb::StepInfo &p = *program.mutable_step();
    p.set_function(s->function);
    p.set_loss(s->loss);
    p.set_checks_overflow(s->checksOverflow);
    p.set_static_scale(s->staticScale);
    p.mutable_classes()->insert(s->classes.begin(), s->classes.end());
    p.mutable_ignore_index()->insert(s->ignoreIndex.begin(),
                                     s->ignoreIndex.end());
    for (const std::string &w : s->weights)
      p.add_weights(w);
    p.mutable_working_copies()->insert(s->workingCopies.begin(),
                                       s->workingCopies.end());
    p.set_accumulate(s->accumulate);
    // Only a data-parallel step carries it, so that other Programs (and
    // the checkpoints keyed by their hash) stay as they were.
    if (s->worldSize > 1)
      p.set_world_size(s->worldSize);
  }
  bool paramsFromStep = false;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    if (func->hasAttr(rtir::kParamsFromStepAttr)) {
      if (failed(checkParamsFromStep(func, stepFunc)))
        return failure();
      paramsFromStep = true;
    }
    FunctionWriter writer(func, *program.add_functions(), options);
    if (failed(writer.write()))
      return failure();
  }
  if (program.functions().empty())
    return module.emitError("has no function to write to a Program"), failure();
  // The oldest version that holds it (runtime/Program.h).
  program.set_version(paramsFromStep ? rt::kProgramVersion
                                     : rt::kOldestProgramVersion);
  // Deterministic: kernel attributes are a protobuf map, whose default
  // order varies between processes, and a Program's bytes identify the
  // step a checkpoint was written by.
  size_t size = program.ByteSizeLong();
  // (Protobuf reads no more than 2 GB, the checksum field included.)
  if (size > static_cast<size_t>(INT_MAX) - rt::kProgramChecksumBytes)
    return module.emitError("the Program could not be serialized (over 2 GB)"),
           failure();
  bytes.clear();
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream out(&stream);
    out.SetSerializationDeterministic(true);
    if (!program.SerializeToCodedStream(&out) || out.HadError())
      return module.emitError("the Program could not be serialized"), failure();
  }
  rt::appendProgramChecksum(bytes);
  return success();
}

} // namespace ampc
