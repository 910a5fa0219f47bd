//===- Train.cpp - amp-run --mode train -----------------------------------===//
//
// Builds @train_step, lowers it to a Program, and runs it once per step on
// the batches of a BatchSource. The loss of a step is read before the next
// run (it is the loss before that step's update). Trained weights go back
// into a copy of the ONNX model.
//
//===----------------------------------------------------------------------===//

#include "tools/amp-run/Train.h"

#include "compiler/Import/Onnx/OnnxWeights.h"
#include "compiler/Target/ProgramWriter.h"
#include "dialects/Amp/AmpOps.h"
#include "dialects/Graph/GraphOps.h"
#include "runtime/cpu/TypedIO.h"
#include "tools/amp-run/AmpMemory.h"
#include "tools/amp-run/Metrics.h"
#include "tools/amp-run/TrainData.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>

using namespace llvm;

namespace ampc::tools {
namespace {

int fail(const Twine &msg) {
  errs() << "amp-run: error: " << msg << "\n";
  return 1;
}

constexpr llvm::StringLiteral kFoundInf = "found_inf";
constexpr llvm::StringLiteral kScaleParam = "loss_scale";

/// FNV-1a over the bytes of every parameter and optimizer state tensor,
/// the loss-scale state left out: equal before and after a skipped step.
uint32_t checksumState(const rt::Session &session) {
  uint32_t h = 2166136261u;
  for (const rt::BindingInfo &b : session.function().params) {
    if (StringRef(b.name).starts_with(kScaleParam))
      continue;
    rt::TensorView v;
    if (!session.param(b.name, v))
      continue;
    const auto *p = static_cast<const uint8_t *>(v.data);
    for (int64_t i = 0, n = v.byteSize(); i < n; ++i)
      h = (h ^ p[i]) * 16777619u;
  }
  return h;
}

/// What the host needs to know about @train_step before it is lowered.
struct StepInfo {
  std::string loss;
  bool checksOverflow = false;            // the step returns found_inf
  double staticScale = 1;                 // the scale when it is no state
  std::map<std::string, int64_t> classes; // label input -> class count
  std::set<std::string> weights;          // initializers, not state
};

StepInfo describe(mlir::func::FuncOp f) {
  StepInfo info;
  if (auto loss = f->getAttrOfType<mlir::StringAttr>(graph::kLossAttr))
    info.loss = loss.getValue().str();
  for (unsigned i = 0; i < f.getNumResults(); ++i)
    if (auto n = f.getResultAttrOfType<mlir::StringAttr>(i, graph::kNameAttr))
      info.checksOverflow |= n.getValue() == kFoundInf;
  // A static scale is the constant the check divides by.
  f.walk([&](amp::UnscaleAndCheckOp check) {
    if (auto c = check.getScale().getDefiningOp<graph::ConstantOp>())
      if (auto v = dyn_cast<mlir::DenseElementsAttr>(c.getValue()))
        info.staticScale = v.getSplatValue<mlir::APFloat>().convertToDouble();
  });
  auto argName = [&](mlir::Value v) -> std::string {
    auto arg = dyn_cast<mlir::BlockArgument>(v);
    if (!arg)
      return "";
    auto n = f.getArgAttrOfType<mlir::StringAttr>(arg.getArgNumber(),
                                                  graph::kNameAttr);
    return n ? n.getValue().str() : "";
  };
  // Labels feed a loss directly; their range is the scores' class axis.
  f.walk([&](mlir::Operation *op) {
    mlir::Value labels, scores;
    if (auto sce = dyn_cast<graph::SoftmaxCrossEntropyOp>(op)) {
      labels = sce.getLabels();
      scores = sce.getScores();
    } else if (auto nll = dyn_cast<graph::NllLossOp>(op)) {
      labels = nll.getTarget();
      scores = nll.getInput();
    } else {
      return;
    }
    std::string name = argName(labels);
    if (!name.empty())
      info.classes[name] =
          cast<mlir::ShapedType>(scores.getType()).getDimSize(1);
  });
  for (unsigned i = 0; i < f.getNumArguments(); ++i)
    if (f.getArgAttr(i, graph::kInitAttr) &&
        !f.getArgAttr(i, graph::kStateAttr))
      if (auto n = f.getArgAttrOfType<mlir::StringAttr>(i, graph::kNameAttr))
        info.weights.insert(n.getValue().str());
  return info;
}

int emitModule(mlir::ModuleOp module, const std::string &path) {
  std::string err;
  auto out = mlir::openOutputFile(path, &err);
  if (!out)
    return fail(err);
  module.print(out->os());
  out->keep();
  return 0;
}

} // namespace

int runTraining(mlir::OwningOpRef<mlir::ModuleOp> module,
                const TrainOptions &o) {
  mlir::MLIRContext *ctx = module->getContext();
  // The f32 step, compiled beside the AMP one, is what the report's memory
  // figures compare against.
  mlir::OwningOpRef<mlir::ModuleOp> f32Module;
  if (o.amp && !o.amp->report.empty() && o.emit != "mlir")
    f32Module = module->clone();
  mlir::PassManager graphPm(ctx);
  buildTrainingGraphPipeline(graphPm, o.training, o.amp, o.lossScale);
  if (mlir::failed(graphPm.run(*module)))
    return 1;
  auto step = module->lookupSymbol<mlir::func::FuncOp>("train_step");
  if (!step)
    return fail(o.modelPath + ": graph-build-training made no @train_step");
  StepInfo info = describe(step);
  if (o.emit == "mlir")
    return emitModule(*module, o.outputFile);

  mlir::PassManager lowerPm(ctx);
  buildLoweringPipeline(lowerPm, o.lowering);
  if (mlir::failed(lowerPm.run(*module)))
    return 1;
  if (f32Module) {
    mlir::PassManager f32Pm(ctx);
    buildTrainingGraphPipeline(f32Pm, o.training);
    buildLoweringPipeline(f32Pm, o.lowering);
    if (mlir::failed(f32Pm.run(*f32Module)))
      return 1;
    if (int rc = reportMemory(*f32Module, *module, "train_step", o.amp->report))
      return rc;
    f32Module = nullptr;
  }
  if (o.emit == "rt")
    return emitModule(*module, o.outputFile);
  std::string bytes;
  if (mlir::failed(writeProgram(*module, bytes)))
    return 1;
  if (o.emit == "program") {
    if (rt::Status s =
            rt::writeFileAtomically(o.outputFile, bytes.data(), bytes.size());
        !s)
      return fail(s.message());
    return 0;
  }

  module = nullptr; // the weights are in `bytes` now
  rt::ProgramInfo program;
  if (rt::Status s = rt::parseProgram(bytes, o.modelPath, program); !s)
    return fail(s.message());
  std::string().swap(bytes);
  rt::FunctionInfo *fn = nullptr;
  for (rt::FunctionInfo &f : program.functions)
    if (f.name == "train_step")
      fn = &f;
  if (!fn)
    return fail(o.modelPath + ": the compiled Program has no 'train_step'");
  std::unique_ptr<rt::Session> session;
  if (rt::Status s = rt::Session::create(std::move(*fn), o.session, session);
      !s)
    return fail(s.message());

  std::vector<InputSpec> specs;
  for (const rt::BindingInfo &b : session->function().inputs) {
    rt::TensorView t;
    if (rt::Status s = session->inputType(b.name, t); !s)
      return fail(s.message());
    if (t.shape.empty())
      return fail("input '" + b.name +
                  "' is a scalar; training data needs "
                  "a batch axis 0");
    auto c = info.classes.find(b.name);
    specs.push_back(
        {b.name, t.dtype, t.shape, c == info.classes.end() ? 0 : c->second});
  }
  std::unique_ptr<BatchSource> data;
  rt::Status opened = o.data == "synthetic"
                          ? BatchSource::synthetic(o.seed, specs, data)
                          : BatchSource::openDirectory(o.data, specs, data);
  if (!opened)
    return fail("--data: " + opened.message());

  std::unique_ptr<MetricsWriter> metrics;
  std::vector<std::string> columns = {"step", "loss", "step_time_ms",
                                      "loss_scale", "skipped"};
  if (o.checksumState)
    columns.push_back("state_checksum");
  if (!o.metrics.empty())
    if (rt::Status s = MetricsWriter::open(o.metrics, columns, metrics); !s)
      return fail("--metrics: " + s.message());

  // The scale a step runs with: the state before it, or the constant.
  bool scaleIsState = false;
  for (const rt::BindingInfo &b : session->function().params)
    scaleIsState |= b.name == kScaleParam;
  auto currentScale = [&]() -> double {
    rt::TensorView v;
    if (scaleIsState && session->param(std::string(kScaleParam), v))
      return rt::cpu::elementAsDouble(v, 0);
    return info.staticScale;
  };

  std::vector<rt::HostTensor> batch;
  std::vector<double> times;
  double loss = NAN;
  int64_t skipped = 0, overflowRun = 0;
  for (int64_t s = 0; s < o.steps; ++s) {
    if (rt::Status st = data->batch(s, batch); !st)
      return fail("--data: step " + std::to_string(s) + ": " + st.message());
    for (rt::HostTensor &t : batch)
      if (rt::Status st = session->setInput(t.name, t.view()); !st)
        return fail(st.message());
    double scale = currentScale();
    // The step that would reach --max-overflow-steps runs with the probe
    // that finds the first kernel to write an inf or NaN.
    // Only every accumulate-th step updates, and only an update checks.
    bool updates = (s + 1) % o.training.accumulate == 0;
    bool probe = info.checksOverflow && o.maxOverflowSteps > 0 && updates &&
                 overflowRun + 1 >= o.maxOverflowSteps;
    session->setNonFiniteProbe(probe);
    auto start = std::chrono::steady_clock::now();
    if (rt::Status st = session->run(); !st)
      return fail(o.modelPath + ": step " + std::to_string(s) + ": " +
                  st.message());
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    times.push_back(ms);
    rt::TensorView lv;
    if (rt::Status st = session->output(info.loss, lv); !st)
      return fail(st.message());
    loss = rt::cpu::elementAsDouble(lv, 0);
    bool overflow = false;
    if (info.checksOverflow) {
      rt::TensorView fv;
      if (rt::Status st = session->output(std::string(kFoundInf), fv); !st)
        return fail(st.message());
      overflow = rt::cpu::elementAsDouble(fv, 0) != 0;
    }
    skipped += overflow;
    if (updates)
      overflowRun = overflow ? overflowRun + 1 : 0;
    if (metrics) {
      std::vector<double> row = {static_cast<double>(s), loss, ms, scale,
                                 overflow ? 1.0 : 0.0};
      if (o.checksumState)
        row.push_back(checksumState(*session));
      if (rt::Status st = metrics->row(row); !st)
        return fail("--metrics: " + st.message());
    }
    if (probe && overflowRun >= o.maxOverflowSteps) {
      if (metrics)
        (void)metrics->close();
      const auto &origin = session->firstNonFinite();
      return fail(
          o.modelPath + ": step " + std::to_string(s) + ": " +
          std::to_string(overflowRun) +
          (o.training.accumulate > 1 ? " updates" : " steps") +
          " in a row overflowed and were skipped (loss scale " +
          formatv("{0:E2}", scale).str() + "); " +
          (origin ? "the first op whose output overflowed: " + origin->message()
                  : std::string("no kernel wrote an inf or NaN, so it came "
                                "in with the batch")) +
          " (--max-overflow-steps)");
    }
  }
  if (metrics)
    if (rt::Status st = metrics->close(); !st)
      return fail("--metrics: " + st.message());

  if (!o.saveOnnx.empty()) {
    std::vector<rt::HostTensor> weights;
    for (const rt::BindingInfo &b : session->function().params) {
      if (!info.weights.count(b.name))
        continue;
      rt::TensorView v;
      if (rt::Status st = session->param(b.name, v); !st)
        return fail(st.message());
      rt::HostTensor t = rt::makeHostTensor(v.dtype, v.shape, b.name);
      std::copy_n(static_cast<const uint8_t *>(v.data), t.bytes.size(),
                  t.bytes.begin());
      weights.push_back(std::move(t));
    }
    std::string err;
    if (!writeOnnxWithWeights(o.modelPath, o.saveOnnx, weights, err))
      return fail("--save-onnx: " + err);
  }

  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  outs() << "amp-run: trained " << o.steps << " steps";
  if (o.training.accumulate > 1)
    outs() << " (" << o.steps / o.training.accumulate << " updates of "
           << o.training.accumulate << " micro-batches)";
  outs() << "; final loss " << format("%.6g", loss);
  // Nine digits, so that the f32 scale reads back exactly.
  if (info.checksOverflow)
    outs() << "; skipped " << skipped << " (overflow); final loss scale "
           << format("%.9g", currentScale());
  if (!sorted.empty())
    outs() << "; median step " << format("%.3f", sorted[sorted.size() / 2])
           << " ms";
  outs() << "\n";
  return 0;
}

} // namespace ampc::tools
