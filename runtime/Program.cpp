//===- Program.cpp - parsing and validating Programs ----------------------===//
//
// Everything a malformed or inconsistent Program could get wrong is checked
// here, once, so the executor can trust ids, sizes and offsets. Each message
// says which function, value, kernel or binding is wrong and how.
//
//===----------------------------------------------------------------------===//
#include "runtime/Program.h"

#include "runtime/ByteSize.h"
#include "runtime/Checksum.h"
#include "runtime/ops/Check.h"
#include "runtime/program.pb.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/message.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <sstream>

namespace ampc::rt {
namespace {

namespace pb = ::ampc::rt::proto;

Status toDType(int d, DType &out) {
  switch (d) {
  case pb::F32:
    out = DType::F32;
    return Status::ok();
  case pb::F16:
    out = DType::F16;
    return Status::ok();
  case pb::BF16:
    out = DType::BF16;
    return Status::ok();
  case pb::F64:
    out = DType::F64;
    return Status::ok();
  case pb::I64:
    out = DType::I64;
    return Status::ok();
  case pb::I32:
    out = DType::I32;
    return Status::ok();
  case pb::I1:
    out = DType::I1;
    return Status::ok();
  default:
    return Status::error("unknown dtype " + std::to_string(d));
  }
}

constexpr int64_t kMaxBytes = kMaxProgramBytes;

Status toType(const pb::TensorType &t, DType &dtype, Shape &shape) {
  AMPC_RETURN_IF_ERROR(toDType(t.dtype(), dtype));
  shape.assign(t.shape().begin(), t.shape().end());
  for (int64_t d : shape)
    if (d < 0)
      return Status::error("negative dimension in shape " + str(shape));
  // Zero dimensions left out, so the partial products of the dimensions
  // that kernels compute are bounded too.
  std::optional<int64_t> bytes = checkedNonZeroByteSize(
      shape.data(), shape.size(), static_cast<int64_t>(sizeOf(dtype)));
  if (!bytes || *bytes > kMaxBytes)
    return Status::error(
        "shape " + str(shape) + " of " + std::string(name(dtype)) +
        " is too large: " +
        (bytes ? describeBytes(*bytes) : "its byte size overflows int64") +
        ", more than the " + formatBytes(kMaxBytes) +
        " a Program value may have");
  return Status::ok();
}

Status toAttrs(const google::protobuf::Map<std::string, pb::Attr> &in,
               Attrs &out) {
  // Sorted, so messages and behaviour do not depend on map order.
  std::set<std::string> keys;
  for (const auto &kv : in)
    keys.insert(kv.first);
  for (const std::string &k : keys) {
    const pb::Attr &a = in.at(k);
    switch (a.value_case()) {
    case pb::Attr::kI:
      out.setInt(k, a.i());
      break;
    case pb::Attr::kF:
      out.setFloat(k, a.f());
      break;
    case pb::Attr::kS:
      out.setString(k, a.s());
      break;
    case pb::Attr::kInts:
      out.setInts(k, {a.ints().values().begin(), a.ints().values().end()});
      break;
    default:
      return Status::error("attribute '" + k + "' has no value");
    }
  }
  return Status::ok();
}

const char *aliasingName(ops::Aliasing a) {
  switch (a) {
  case ops::Aliasing::None:
    return "none";
  case ops::Aliasing::Elementwise:
    return "elementwise";
  case ops::Aliasing::InPlaceUpdate:
    return "in-place update";
  }
  return "?";
}

/// The kernel's declared aliasing, which a Program (untrusted input) may
/// claim only where the op allows it: an elementwise claim on a gemm would
/// let the planned bytes of its output overlay an input it still reads.
Status toAliasing(int declared, KernelInfo &k) {
  static_assert(
      pb::ALIASING_NONE == int(ops::Aliasing::None) &&
          pb::ALIASING_ELEMENTWISE == int(ops::Aliasing::Elementwise) &&
          pb::ALIASING_IN_PLACE_UPDATE == int(ops::Aliasing::InPlaceUpdate),
      "program.proto's Aliasing and ops::Aliasing disagree");
  if (declared < pb::ALIASING_NONE || declared > pb::ALIASING_IN_PLACE_UPDATE)
    return Status::error("aliasing " + std::to_string(declared) +
                         " is not an aliasing kind");
  ops::Aliasing a = static_cast<ops::Aliasing>(declared),
                allowed = ops::aliasingOf(k.kind);
  if (a != ops::Aliasing::None && a != allowed)
    return Status::error(std::string("declares aliasing '") + aliasingName(a) +
                         "', but a '" + k.kind + "' kernel allows '" +
                         aliasingName(allowed) + "'");
  k.aliasing = a;
  return Status::ok();
}

Status checkValueId(int id, size_t n, const std::string &what) {
  if (id < 0 || static_cast<size_t>(id) >= n)
    return Status::error(what + " refers to value " + std::to_string(id) +
                         ", but the function has " + std::to_string(n) +
                         " values");
  return Status::ok();
}

/// A data-parallel exchange is two kernels: all_reduce_start writes the
/// exchange buffer, which the ranks sum while the kernels after it run,
/// and the one all_reduce_wait that reads it (first) finishes it. A start
/// that no wait finishes would leave the exchange writing into bytes the
/// memory plan gives to later values; a second wait, or one whose buffer
/// no start wrote, has nothing to wait for. Both backends rely on this.
Status checkExchangePairs(const FunctionInfo &fn) {
  constexpr const char *kStart = "all_reduce_start", *kWait = "all_reduce_wait";
  std::vector<int> waitsOf(fn.values.size(), -1); // -1: no start wrote it
  for (size_t k = 0; k < fn.kernels.size(); ++k) {
    const KernelInfo &kern = fn.kernels[k];
    if (kern.kind == kWait) {
      int buffer = kern.inputs.empty() ? -1 : kern.inputs[0];
      if (buffer < 0 || waitsOf[buffer] < 0)
        return Status::error(kern.describe(k) + " finishes an exchange no " +
                             kStart + " before it started (its first input " +
                             "is not a start's buffer)");
      if (waitsOf[buffer]++ > 0)
        return Status::error(kern.describe(k) + " finishes the exchange of " +
                             "value " + std::to_string(buffer) +
                             ", which an earlier " + kWait + " finished");
    }
    if (kern.kind == kStart && !kern.outputs.empty())
      waitsOf[kern.outputs[0]] = 0;
  }
  for (size_t k = 0; k < fn.kernels.size(); ++k) {
    const KernelInfo &kern = fn.kernels[k];
    if (kern.kind == kStart && !kern.outputs.empty() &&
        waitsOf[kern.outputs[0]] == 0)
      return Status::error(kern.describe(k) + " starts an exchange (value " +
                           std::to_string(kern.outputs[0]) + ") that no " +
                           kWait + " after it finishes");
  }
  return Status::ok();
}

Status loadFunction(const pb::Function &f, bool weightsOmitted,
                    FunctionInfo &fn) {
  fn.name = f.name();
  fn.arenaSize = f.arena_size();
  fn.paramsFromStep = f.params_from_step();
  if (fn.arenaSize < 0)
    return Status::error("arena size " + std::to_string(fn.arenaSize) +
                         " is negative");
  if (fn.arenaSize > kMaxBytes)
    return Status::error("arena of " + describeBytes(fn.arenaSize) +
                         " is more than the " + formatBytes(kMaxBytes) +
                         " a Program may have");
  for (const pb::Constant &c : f.constants()) {
    DType dt;
    Shape shape;
    size_t i = fn.constants.size();
    AMPC_RETURN_IF_ERROR(toType(c.type(), dt, shape)
                             .withContext("constant " + std::to_string(i)));
    size_t want = numElements(shape) * sizeOf(dt);
    if (c.data().size() != want)
      return Status::error("constant " + std::to_string(i) + " holds " +
                           std::to_string(c.data().size()) +
                           " bytes, but its type needs " +
                           std::to_string(want));
    fn.constants.push_back(c.data());
  }
  for (const pb::Value &v : f.values()) {
    size_t i = fn.values.size();
    std::string what = "value " + std::to_string(i);
    ValueInfo info;
    AMPC_RETURN_IF_ERROR(
        toType(v.type(), info.dtype, info.shape).withContext(what));
    switch (v.storage_case()) {
    case pb::Value::kArenaOffset:
      info.offset = v.arena_offset();
      if (info.offset < 0 || info.offset % kArenaAlignment != 0)
        return Status::error(what + " has arena offset " +
                             std::to_string(info.offset) +
                             ", not a non-negative multiple of " +
                             std::to_string(kArenaAlignment));
      // Both at most kMaxBytes: the difference cannot overflow.
      if (info.byteSize() > fn.arenaSize ||
          info.offset > fn.arenaSize - info.byteSize())
        return Status::error(what + " (" + std::to_string(info.byteSize()) +
                             " bytes at offset " + std::to_string(info.offset) +
                             ") ends past the arena (" +
                             std::to_string(fn.arenaSize) + " bytes)");
      break;
    case pb::Value::kConstant: {
      info.inArena = false;
      info.constant = v.constant();
      if (info.constant < 0 ||
          static_cast<size_t>(info.constant) >= fn.constants.size())
        return Status::error(what + " refers to constant " +
                             std::to_string(info.constant) + " of " +
                             std::to_string(fn.constants.size()));
      if (static_cast<size_t>(info.byteSize()) !=
          fn.constants[info.constant].size())
        return Status::error(
            what + " views constant " + std::to_string(info.constant) + " of " +
            std::to_string(fn.constants[info.constant].size()) + " bytes as " +
            std::to_string(info.byteSize()) + " bytes");
      break;
    }
    default:
      return Status::error(what +
                           " has neither an arena offset nor a constant");
    }
    fn.values.push_back(std::move(info));
  }
  const size_t nv = fn.values.size();
  // Views: the value whose bytes each one shares.
  std::vector<int> root(nv);
  for (size_t i = 0; i < nv; ++i) {
    root[i] = static_cast<int>(i);
    const pb::Value &v = f.values(static_cast<int>(i));
    if (!v.has_view_of())
      continue;
    std::string what = "value " + std::to_string(i);
    int src = v.view_of();
    if (src < 0 || static_cast<size_t>(src) >= i)
      return Status::error(what + " is a view of value " + std::to_string(src) +
                           ", which is not an earlier value");
    const ValueInfo &x = fn.values[i], &y = fn.values[src];
    if (!x.inArena || !y.inArena || x.offset != y.offset ||
        x.byteSize() != y.byteSize() || x.dtype != y.dtype)
      return Status::error(what + " is a view of value " + std::to_string(src) +
                           " but does not share its dtype, offset and size");
    fn.values[i].viewOf = src;
    root[i] = root[src];
  }
  // Which bytes hold a value before each kernel: inputs and parameters,
  // then kernel outputs. Constants always do.
  std::vector<bool> defined(nv, false);
  for (size_t i = 0; i < nv; ++i)
    defined[i] = !fn.values[i].inArena;
  auto isDefined = [&](int id) { return defined[root[id]]; };
  std::set<std::string> names;
  auto bind = [&](const pb::Binding &b, const char *kind,
                  std::vector<BindingInfo> &out, bool arena) -> Status {
    std::string what = std::string(kind) + " '" + b.name() + "'";
    if (b.name().empty())
      return Status::error(std::string("a ") + kind + " has no name");
    AMPC_RETURN_IF_ERROR(checkValueId(b.value(), nv, what));
    const ValueInfo &v = fn.values[b.value()];
    if (arena && (!v.inArena || v.viewOf >= 0))
      return Status::error(what + " is bound to a constant or a view");
    out.push_back({b.name(), b.value(), b.init()});
    return Status::ok();
  };
  std::vector<bool> isParam(nv, false);
  for (const pb::Binding &b : f.inputs()) {
    if (!names.insert("in:" + b.name()).second)
      return Status::error("input '" + b.name() + "' is bound twice");
    AMPC_RETURN_IF_ERROR(bind(b, "input", fn.inputs, true));
    defined[b.value()] = true;
  }
  for (const pb::Binding &b : f.params()) {
    if (!names.insert("in:" + b.name()).second)
      return Status::error("parameter '" + b.name() +
                           "' has the name of another input or parameter");
    AMPC_RETURN_IF_ERROR(bind(b, "parameter", fn.params, true));
    const ValueInfo &v = fn.values[b.value()];
    if (f.params_from_step() && !b.init().empty())
      return Status::error("parameter '" + b.name() +
                           "' comes from the training step, but has " +
                           std::to_string(b.init().size()) +
                           " bytes of initial value of its own");
    bool omitted = (weightsOmitted || f.params_from_step()) && b.init().empty();
    if (!omitted && b.init().size() != static_cast<size_t>(v.byteSize()))
      return Status::error("parameter '" + b.name() + "' has " +
                           std::to_string(b.init().size()) +
                           " bytes of initial value for " +
                           std::to_string(v.byteSize()) + " bytes of storage");
    defined[b.value()] = true;
    isParam[b.value()] = true;
  }

  for (const pb::Kernel &k : f.kernels()) {
    KernelInfo info;
    info.kind = k.kind();
    info.location = k.location();
    std::string what = info.describe(fn.kernels.size());
    AMPC_RETURN_IF_ERROR(toAttrs(k.attrs(), info.attrs).withContext(what));
    for (int id : k.inputs()) {
      if (id == -1) {
        info.inputs.push_back(-1);
        continue;
      }
      AMPC_RETURN_IF_ERROR(checkValueId(id, nv, what + " input"));
      if (!isDefined(id))
        return Status::error(what + " reads value " + std::to_string(id) +
                             " before anything writes it");
      info.inputs.push_back(id);
    }
    if (k.outputs().empty())
      return Status::error(what + " has no outputs");
    for (int id : k.outputs()) {
      AMPC_RETURN_IF_ERROR(checkValueId(id, nv, what + " output"));
      if (!fn.values[id].inArena || fn.values[id].viewOf >= 0)
        return Status::error(what + " writes value " + std::to_string(id) +
                             ", which is a constant or a view");
      if (isDefined(id))
        return Status::error(what + " writes value " + std::to_string(id) +
                             ", which was already written");
      info.outputs.push_back(id);
    }
    for (const pb::Step &s : k.steps()) {
      ops::FusedStep step;
      step.op = s.op();
      step.operands.assign(s.operands().begin(), s.operands().end());
      std::string sw = what + " step " + std::to_string(info.steps.size());
      AMPC_RETURN_IF_ERROR(toDType(s.dtype(), step.dtype).withContext(sw));
      AMPC_RETURN_IF_ERROR(toAttrs(s.attrs(), step.attrs).withContext(sw));
      for (int o : step.operands) {
        bool ok = o >= 0 ? static_cast<size_t>(o) < info.inputs.size()
                         : static_cast<size_t>(-o - 1) < info.steps.size();
        if (!ok)
          return Status::error(sw + " has operand " + std::to_string(o) +
                               ", which names no kernel input or earlier step");
      }
      info.steps.push_back(std::move(step));
    }
    if ((info.kind == "fused") != !info.steps.empty())
      return Status::error(what + (info.steps.empty()
                                       ? " is fused but has no steps"
                                       : " has steps but is not fused"));
    AMPC_RETURN_IF_ERROR(toAliasing(k.aliasing(), info).withContext(what));
    for (int id : info.outputs)
      defined[id] = true;
    fn.kernels.push_back(std::move(info));
  }
  AMPC_RETURN_IF_ERROR(checkExchangePairs(fn));
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const pb::Binding &b = f.params(static_cast<int>(i));
    if (!b.has_update())
      continue;
    std::string what = "parameter '" + b.name() + "'";
    AMPC_RETURN_IF_ERROR(checkValueId(b.update(), nv, what + " update"));
    const ValueInfo &p = fn.values[b.value()], &u = fn.values[b.update()];
    if (u.dtype != p.dtype || u.shape != p.shape)
      return Status::error(what + " is updated with value " +
                           std::to_string(b.update()) +
                           ", which has another type");
    if (!isDefined(b.update()))
      return Status::error(what + " is updated with value " +
                           std::to_string(b.update()) +
                           ", which nothing writes");
    if (b.update() == b.value())
      return Status::error(what + " is updated with itself");
    fn.params[i].update = b.update();
  }
  for (const pb::Binding &b : f.outputs()) {
    if (!names.insert("out:" + b.name()).second)
      return Status::error("output '" + b.name() + "' is bound twice");
    AMPC_RETURN_IF_ERROR(bind(b, "output", fn.outputs, false));
    if (!isDefined(b.value()))
      return Status::error("output '" + b.name() + "' is value " +
                           std::to_string(b.value()) +
                           ", which nothing writes");
  }

  // Liveness over the bytes each root value owns: from the kernel that
  // writes them (-1: before the first) to the last read of the value or of
  // any view of it (outputs and parameters: the end). A kernel may not
  // write bytes a live value still needs, nor bytes it reads, except
  // exactly over a same-typed input it reads for the last time (planned in
  // place): an elementwise kernel's one output, or an in-place update's
  // output over its gradient (an O2 update writes the working copy over
  // the gradient it reads, MemoryPlan.cpp).
  const int64_t kEnd = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> lastRead(nv, -1), writtenAt(nv, -1);
  for (size_t k = 0; k < fn.kernels.size(); ++k) {
    for (int id : fn.kernels[k].inputs)
      if (id >= 0)
        lastRead[root[id]] = static_cast<int64_t>(k);
    for (int id : fn.kernels[k].outputs)
      writtenAt[id] = static_cast<int64_t>(k);
  }
  for (const BindingInfo &b : fn.outputs)
    lastRead[root[b.value]] = kEnd;
  // A parameter with an update is dead after its last read: its new value
  // may be written over it (the runtime copies it there otherwise).
  std::vector<int> updateOf(nv, -1);
  for (const BindingInfo &b : fn.params) {
    if (b.update < 0) {
      lastRead[b.value] = kEnd;
      continue;
    }
    lastRead[root[b.update]] = kEnd;
    updateOf[b.value] = b.update;
  }
  auto overlaps = [&](size_t a, size_t b) {
    const ValueInfo &x = fn.values[a], &y = fn.values[b];
    return x.inArena && y.inArena && x.byteSize() && y.byteSize() &&
           x.offset < y.offset + y.byteSize() &&
           y.offset < x.offset + x.byteSize();
  };
  for (size_t k = 0; k < fn.kernels.size(); ++k) {
    const KernelInfo &kern = fn.kernels[k];
    const int64_t ki = static_cast<int64_t>(k);
    const ops::Aliasing aliasing = kern.aliasing;
    const bool elementwise = aliasing == ops::Aliasing::Elementwise;
    // An update's gradient: the input after the parameter its first output
    // replaces. Only it may lie under another output (a working copy);
    // lr, step and skip are read by every element.
    int grad = -1;
    if (aliasing == ops::Aliasing::InPlaceUpdate && !kern.outputs.empty())
      for (size_t i = 0; i + 1 < kern.inputs.size(); ++i)
        if (kern.inputs[i] >= 0 &&
            updateOf[kern.inputs[i]] == kern.outputs[0]) {
          grad = kern.inputs[i + 1] >= 0 ? root[kern.inputs[i + 1]] : -1;
          break;
        }
    for (size_t j = 0; j < kern.outputs.size(); ++j) {
      const int out = kern.outputs[j];
      for (size_t v = 0; v < nv; ++v) {
        if (root[v] != static_cast<int>(v) || static_cast<int>(v) == out ||
            !overlaps(v, out))
          continue;
        if (writtenAt[v] == ki)
          return Status::error(kern.describe(k) + " writes outputs " +
                               std::to_string(v) + " and " +
                               std::to_string(out) + " over the same bytes");
        bool readHere = false;
        for (int in : kern.inputs)
          readHere |= in >= 0 && root[in] == static_cast<int>(v);
        bool live = writtenAt[v] < ki && lastRead[v] > ki;
        if (!live && !readHere)
          continue;
        const ValueInfo &x = fn.values[v], &y = fn.values[out];
        bool inPlace = readHere && !live &&
                       ((elementwise && kern.outputs.size() == 1) ||
                        static_cast<int>(v) == grad) &&
                       x.offset == y.offset && x.dtype == y.dtype &&
                       x.shape == y.shape;
        bool overParam = isParam[v] && updateOf[v] == out && !live &&
                         x.offset == y.offset &&
                         (!readHere || elementwise ||
                          aliasing == ops::Aliasing::InPlaceUpdate);
        if (overParam)
          continue;
        if (isParam[v] || !inPlace)
          return Status::error(kern.describe(k) + " writes value " +
                               std::to_string(out) + " over bytes of value " +
                               std::to_string(v) + ", which are still needed");
      }
    }
  }
  return Status::ok();
}

} // namespace

std::string KernelInfo::describe(size_t index) const {
  std::string s = "kernel " + std::to_string(index) + " (" + kind;
  if (!location.empty())
    s += " at '" + location + "'";
  return s + ")";
}

const FunctionInfo *ProgramInfo::find(const std::string &name) const {
  for (const FunctionInfo &f : functions)
    if (f.name == name)
      return &f;
  return nullptr;
}

namespace {

/// The binding of `bindings` named `name`; null if none.
const BindingInfo *bindingNamed(const std::vector<BindingInfo> &bindings,
                                const std::string &name) {
  for (const BindingInfo &b : bindings)
    if (b.name == name)
      return &b;
  return nullptr;
}

/// Checks that every name of `s` is a binding of the function it describes.
Status loadStepInfo(const pb::StepInfo &s, ProgramInfo &out) {
  const FunctionInfo *f = out.find(s.function());
  if (!f)
    return Status::error("it describes function '" + s.function() +
                         "', which the Program does not have");
  std::string fn = "function '" + f->name + "'";
  if (!bindingNamed(f->outputs, s.loss()))
    return Status::error("the loss '" + s.loss() + "' is no output of " + fn);
  StepInfo info;
  info.function = s.function();
  info.loss = s.loss();
  info.checksOverflow = s.checks_overflow();
  info.staticScale = s.static_scale();
  if (!(info.staticScale > 0) || !std::isfinite(info.staticScale))
    return Status::error("the static loss scale " +
                         std::to_string(info.staticScale) +
                         " is not a positive finite number");
  for (const auto &[name, classes] : s.classes()) {
    if (!bindingNamed(f->inputs, name))
      return Status::error("label input '" + name + "' is no input of " + fn);
    if (classes < 1)
      return Status::error("label input '" + name + "' has " +
                           std::to_string(classes) + " classes");
    info.classes[name] = classes;
  }
  for (const auto &[name, index] : s.ignore_index()) {
    if (!s.classes().count(name))
      return Status::error("the ignore_index of '" + name +
                           "' is for no label input");
    info.ignoreIndex[name] = index;
  }
  for (const std::string &w : s.weights()) {
    if (!bindingNamed(f->params, w))
      return Status::error("weight '" + w + "' is no parameter of " + fn);
    info.weights.insert(w);
  }
  for (const auto &[w, copy] : s.working_copies()) {
    if (!info.weights.count(w))
      return Status::error("the working copy '" + copy + "' is of '" + w +
                           "', which is no weight");
    if (!bindingNamed(f->params, copy))
      return Status::error("the working copy '" + copy +
                           "' is no parameter of " + fn);
    info.workingCopies[w] = copy;
  }
  if (s.accumulate() < 0)
    return Status::error("the step accumulates over " +
                         std::to_string(s.accumulate()) +
                         " steps per update: it must be at least 1");
  info.accumulate = s.accumulate() == 0 ? 1 : s.accumulate();
  if (s.world_size() < 0)
    return Status::error("the step averages over " +
                         std::to_string(s.world_size()) +
                         " ranks: it must be at least 1");
  info.worldSize = s.world_size() == 0 ? 1 : s.world_size();
  out.step = std::move(info);
  return Status::ok();
}

/// The CRC-32 of messages, each serialized deterministically (map entries
/// in key order) and chained in after its length.
class MessageCrc {
public:
  uint32_t value = 0;

  void addBytes(const std::string &bytes) {
    addWord(static_cast<int64_t>(bytes.size()));
    value = crc32Of(bytes.data(), bytes.size(), value);
  }
  void addWord(int64_t word) { value = crc32Of(&word, sizeof word, value); }
  void add(const google::protobuf::MessageLite &m) { addBytes(bytes(m)); }

  /// Every field of `m` but the one numbered `skip`, walked through its
  /// descriptor (so that a field added later counts too): its number and
  /// count, then each scalar as text, each message through `child` (add by
  /// default), and a map's entries in the order of their bytes.
  void addFields(
      const google::protobuf::Message &m, int skip,
      const std::function<void(const google::protobuf::FieldDescriptor &,
                               const google::protobuf::Message &)> &child =
          nullptr) {
    namespace gp = google::protobuf;
    const gp::Reflection &r = *m.GetReflection();
    const gp::Descriptor &d = *m.GetDescriptor();
    for (int i = 0; i < d.field_count(); ++i) {
      const gp::FieldDescriptor &field = *d.field(i);
      if (field.number() == skip)
        continue;
      int count = field.is_repeated() ? r.FieldSize(m, &field)
                                      : static_cast<int>(r.HasField(m, &field));
      addWord(field.number());
      addWord(count);
      if (field.is_map()) {
        std::vector<std::string> entries;
        for (int k = 0; k < count; ++k)
          entries.push_back(bytes(r.GetRepeatedMessage(m, &field, k)));
        std::sort(entries.begin(), entries.end());
        for (const std::string &e : entries)
          addBytes(e);
        continue;
      }
      for (int k = 0; k < count; ++k) {
        if (field.cpp_type() != gp::FieldDescriptor::CPPTYPE_MESSAGE) {
          std::string value;
          gp::TextFormat::Printer().PrintFieldValueToString(
              m, &field, field.is_repeated() ? k : -1, &value);
          addBytes(value);
          continue;
        }
        const gp::Message &sub = field.is_repeated()
                                     ? r.GetRepeatedMessage(m, &field, k)
                                     : r.GetMessage(m, &field);
        if (child)
          child(field, sub);
        else
          add(sub);
      }
    }
  }

private:
  static std::string bytes(const google::protobuf::MessageLite &m) {
    std::string out;
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    m.SerializeToCodedStream(&coded);
    coded.Trim();
    return out;
  }
};

/// ProgramInfo::stepHash of `p`, whose step info names its function: the
/// step info, then every field of the function, a parameter without its
/// initial value (no weight is read or copied) and a kernel without its
/// location.
uint32_t stepHashOf(const pb::Program &p) {
  MessageCrc crc;
  // As the loader reads them: older Programs leave out a count of 1.
  pb::StepInfo info = p.step();
  if (info.accumulate() == 0)
    info.set_accumulate(1);
  if (info.world_size() == 0)
    info.set_world_size(1);
  crc.add(info);
  for (const pb::Function &f : p.functions()) {
    if (f.name() != info.function())
      continue;
    crc.addFields(f, /*skip=*/0,
                  [&](const google::protobuf::FieldDescriptor &field,
                      const google::protobuf::Message &m) {
                    if (field.number() == pb::Function::kParamsFieldNumber) {
                      crc.addFields(m, pb::Binding::kInitFieldNumber);
                    } else if (field.number() ==
                               pb::Function::kKernelsFieldNumber) {
                      pb::Kernel placed; // small: attributes, no weights
                      placed.CopyFrom(m);
                      placed.clear_location();
                      crc.add(placed);
                    } else {
                      crc.add(m);
                    }
                  });
  }
  return crc.value;
}

/// Whether `fn`, which takes its parameters from the step, can: the
/// Program (of version 4 on) has a step; each of `fn`'s parameters is one of
/// the step's, of the same shape and a dtype it converts to (float to
/// float); and `fn` takes the step's batch, its inputs being the step's.
/// (Else the run would fail at its first evaluation, an epoch in.)
Status checkParamsFromStep(const FunctionInfo &fn, unsigned version,
                           const ProgramInfo &program) {
  if (version < 4)
    return Status::error("takes its parameters from the training step, "
                         "which a Program of version " +
                         std::to_string(version) + " cannot say");
  const FunctionInfo *step =
      program.step ? program.find(program.step->function) : nullptr;
  if (!step)
    return Status::error("takes its parameters from the training step, but "
                         "the Program has none");
  if (step == &fn)
    return Status::error("is the training step, and takes its parameters "
                         "from itself");
  for (const BindingInfo &b : fn.params) {
    const ValueInfo &mine = fn.values[b.value];
    const BindingInfo *from = bindingNamed(step->params, b.name);
    if (!from)
      return Status::error("parameter '" + b.name +
                           "' comes from the training step, which has no "
                           "parameter of that name");
    const ValueInfo &theirs = step->values[from->value];
    if (theirs.shape != mine.shape)
      return Status::error(
          "parameter '" + b.name + "' has shape " + str(mine.shape) +
          ", but the training step's has shape " + str(theirs.shape));
    if (isFloat(theirs.dtype) != isFloat(mine.dtype) ||
        (!isFloat(mine.dtype) && theirs.dtype != mine.dtype))
      return Status::error(
          "parameter '" + b.name + "' is " + std::string(name(mine.dtype)) +
          ", which the training step's " + std::string(name(theirs.dtype)) +
          " does not convert to");
  }
  for (const BindingInfo &b : fn.inputs) {
    const BindingInfo *theirs = bindingNamed(step->inputs, b.name);
    if (!theirs)
      return Status::error("input '" + b.name +
                           "' is no input of the training step, whose batch "
                           "it evaluates");
    const ValueInfo &x = fn.values[b.value], &y = step->values[theirs->value];
    if (x.dtype != y.dtype || x.shape != y.shape)
      return Status::error("input '" + b.name + "' is " +
                           std::string(name(x.dtype)) + " " + str(x.shape) +
                           ", but the training step's is " +
                           std::string(name(y.dtype)) + " " + str(y.shape));
  }
  for (const BindingInfo &b : step->inputs)
    if (!bindingNamed(fn.inputs, b.name))
      return Status::error("has no input '" + b.name +
                           "', which the training step's batch holds");
  return Status::ok();
}

/// The checksum field that ends `bytes`, if its last kProgramChecksumBytes
/// are one.
std::optional<uint32_t> trailingChecksum(const std::string &bytes) {
  if (bytes.size() < kProgramChecksumBytes)
    return std::nullopt;
  std::string end = bytes.substr(bytes.size() - kProgramChecksumBytes);
  pb::Program tail;
  if (!tail.ParseFromString(end) || !tail.has_checksum() ||
      tail.SerializeAsString() != end)
    return std::nullopt;
  return tail.checksum();
}

/// Whether `written`, the checksum field that ends `bytes`
/// (trailingChecksum), is there and matches the bytes before it.
Status checkChecksum(const std::string &bytes,
                     std::optional<uint32_t> written) {
  if (!written)
    return Status::error(
        "damaged Program: it does not end with its checksum, as every "
        "Program ampc writes does (cut short, or rewritten by another "
        "tool): compile the model again with amp-run --emit=program");
  uint32_t computed =
      crc32Of(bytes.data(), bytes.size() - kProgramChecksumBytes);
  if (computed != *written)
    return Status::error(
        "damaged Program: its bytes' CRC-32 is " + hex32(computed) +
        ", but the checksum written at its end is " + hex32(*written) +
        " (the file changed after it was written): compile the model "
        "again with amp-run --emit=program");
  return Status::ok();
}

} // namespace

void appendProgramChecksum(std::string &bytes) {
  pb::Program tail;
  tail.set_checksum(crc32Of(bytes.data(), bytes.size()));
  bytes += tail.SerializeAsString();
}

bool stripProgramChecksum(std::string &bytes) {
  if (!trailingChecksum(bytes))
    return false;
  bytes.resize(bytes.size() - kProgramChecksumBytes);
  return true;
}

Status parseProgram(const std::string &bytes, const std::string &origin,
                    ProgramInfo &out) {
  pb::Program p;
  if (bytes.empty())
    return Status::error(origin + ": empty file, not a Program");
  // A file that ends with a checksum is checked against it first, so that
  // damage reads as damage, to the version field too. One that does not is
  // of an older version (which had none), or damaged.
  const std::optional<uint32_t> written = trailingChecksum(bytes);
  if (written)
    AMPC_RETURN_IF_ERROR(checkChecksum(bytes, written).withContext(origin));
  if (!p.ParseFromString(bytes))
    return Status::error(origin + ": not a valid Program (protobuf parse "
                                  "failed: truncated or corrupt)");
  if (p.version() < kOldestProgramVersion || p.version() > kProgramVersion)
    return Status::error(
        origin + ": Program version " + std::to_string(p.version()) +
        ", this runtime reads versions " +
        std::to_string(kOldestProgramVersion) + " to " +
        std::to_string(kProgramVersion) +
        (p.version() < kOldestProgramVersion
             ? std::string(" (written by an older ampc, before Programs ") +
                   (p.version() < 2 ? "held every attribute and each "
                                      "kernel's aliasing"
                                    : "ended with their checksum") +
                   ": compile the model again with amp-run --emit=program)"
             : " (written by a newer ampc)"));
  if (!written)
    AMPC_RETURN_IF_ERROR(checkChecksum(bytes, written).withContext(origin));
  if (p.functions().empty())
    return Status::error(origin + ": the Program has no functions");
  out = ProgramInfo();
  out.producer = p.producer();
  for (const pb::Function &f : p.functions()) {
    FunctionInfo fn;
    AMPC_RETURN_IF_ERROR(
        loadFunction(f, p.weights_omitted(), fn)
            .withContext(origin + ": function '" + f.name() + "'"));
    if (out.find(fn.name))
      return Status::error(origin + ": function '" + fn.name +
                           "' is defined twice");
    out.functions.push_back(std::move(fn));
  }
  out.weightsOmitted = p.weights_omitted();
  if (p.has_step()) {
    AMPC_RETURN_IF_ERROR(
        loadStepInfo(p.step(), out).withContext(origin + ": the step info"));
    out.stepHash = stepHashOf(p);
  }
  for (const FunctionInfo &fn : out.functions)
    if (fn.paramsFromStep)
      AMPC_RETURN_IF_ERROR(
          checkParamsFromStep(fn, p.version(), out)
              .withContext(origin + ": function '" + fn.name + "'"));
  return Status::ok();
}

Status readProgramFile(const std::string &path, ProgramInfo &out) {
  // Only a regular file: a directory reads as an empty file, and a device
  // (/dev/zero) or a pipe would be read forever.
  std::error_code ec;
  std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(status))
    return Status::error(path + ": is a directory, not a Program file");
  if (!ec && std::filesystem::exists(status) &&
      !std::filesystem::is_regular_file(status))
    return Status::error(path + ": is not a regular file (a device, a pipe "
                                "or a socket), not a Program file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::error(path + ": cannot open the Program file");
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad())
    return Status::error(path + ": read error");
  return parseProgram(ss.str(), path, out);
}

} // namespace ampc::rt
