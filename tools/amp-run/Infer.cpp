//===- Infer.cpp - amp-run --mode infer -----------------------------------===//
//
// Compiles the forward function (and, for --amp-report, the f32 one beside
// it for the memory figures), stops at --emit's stage, or loads it into a
// Session from the serialized bytes, as amp-exec would, and runs it on the
// --input files.
//
//===----------------------------------------------------------------------===//

#include "tools/amp-run/Infer.h"

#include "runtime/HostMemory.h"
#include "runtime/TypedIO.h"
#include "runtime/io/Npy.h"
#include "runtime/io/TensorFile.h"
#include "runtime/tooling/CheckNumerics.h"
#include "runtime/tooling/NonFinite.h"
#include "runtime/tooling/TrainData.h"
#include "tools/amp-run/AmpMemory.h"
#include "tools/amp-run/Fail.h"
#include "tools/amp-run/ProgramIO.h"
#include "tools/amp-run/RunSetup.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <map>

using namespace llvm;

namespace ampc::tools {

int runInference(mlir::OwningOpRef<mlir::ModuleOp> module,
                 const InferOptions &o) {
  InferencePipelineOptions pipelineOptions = o.lowering;
  // The f32 step, compiled beside the AMP one, is what the report's memory
  // figures compare against.
  mlir::OwningOpRef<mlir::ModuleOp> f32Module;
  bool graphStage = o.emit == "graph" || o.emit == "amp";
  if (o.amp && !o.amp->report.empty() && !graphStage)
    f32Module = module->clone();
  pipelineOptions.amp = o.amp;
  mlir::PassManager pm(module->getContext());
  if (graphStage) {
    buildGraphPipeline(pm);
    if (o.amp && o.emit == "amp")
      buildAutoCastPipeline(pm, *o.amp);
  } else {
    buildInferencePipeline(pm, pipelineOptions);
  }
  if (mlir::failed(pm.run(*module)))
    return 1;
  if (f32Module) {
    InferencePipelineOptions f32Options = pipelineOptions;
    f32Options.amp.reset();
    mlir::PassManager f32Pm(module->getContext());
    buildInferencePipeline(f32Pm, f32Options);
    if (mlir::failed(f32Pm.run(*f32Module)))
      return 1;
    if (int rc = reportMemory(*f32Module, *module, "forward", o.amp->report))
      return rc;
    f32Module = nullptr;
  }
  if (graphStage || o.emit == "rt")
    return printModule(*module, o.outputFile);
  if (o.emit == "program") {
    ProgramWriteOptions w;
    w.omitWeights = o.omitWeights;
    return writeProgramFile(*module, o.outputFile, w);
  }

  // Run it the way amp-exec would: from the serialized bytes. The module
  // holds a copy of the weights: drop it once they are in `forward`.
  rt::FunctionInfo forward;
  if (mlir::failed(loadFunction(*module, "forward", o.modelPath, forward)))
    return 1;
  module = nullptr;
  rt::SessionOptions sessionOptions = sessionOptionsOf(o.run);
  std::unique_ptr<rt::Session> session;
  if (rt::Status s =
          rt::Session::create(std::move(forward), sessionOptions, session);
      !s)
    return fail(s.message());

  std::map<std::string, rt::HostTensor> given;
  for (const auto &[name, path] : o.inputs) {
    rt::TensorView want;
    if (rt::Status s = session->inputType(name, want); !s)
      return fail("--input " + name + ": " + s.message());
    rt::HostTensor t;
    if (rt::Status s = rt::readTensorFile(path, t); !s)
      return fail("--input " + name + ": " + s.message());
    if (given.count(name))
      return fail("--input " + name + " is given twice");
    rt::TensorView value = t.view();
    rt::HostTensor converted;
    if (rt::Status s =
            checkFeedValue(want, name, "--input " + name + ": '" + path + "'",
                           /*samples=*/false, value, converted);
        !s)
      return fail(s.message());
    if (value.data != t.view().data)
      t = std::move(converted);
    given[name] = std::move(t);
  }
  std::string missing;
  for (const rt::BindingInfo &b : session->function().inputs)
    if (!given.count(b.name))
      missing += (missing.empty() ? "'" : ", '") + b.name + "'";
  if (!missing.empty())
    return fail("no value for graph input(s) " + missing +
                ": give each with --input NAME=FILE (or --bind NAME=FILE)");

  if (o.run.checkNumerics)
    if (rt::Status s = checkParamsFinite(*session); !s)
      return fail(o.modelPath + ": " + s.message() + " (--check-numerics)");
  std::vector<double> times;
  for (unsigned r = 0; r < o.repeat; ++r) {
    for (auto &[name, t] : given)
      if (rt::Status s = session->setInput(name, t.view()); !s)
        return fail(s.message());
    // Every run computes the same: the first is probed, the others timed.
    session->setNonFiniteProbe(o.run.checkNumerics && r == 0);
    auto start = std::chrono::steady_clock::now();
    if (rt::Status s = session->run(); !s)
      return fail(o.modelPath + ": " + s.message());
    if (std::string fault = nonFiniteFault(*session); !fault.empty())
      return fail(o.modelPath + ": " + fault);
    times.push_back(std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start)
                        .count());
  }
  if (o.repeat > 1) {
    std::sort(times.begin(), times.end());
    outs() << "amp-run: " << o.repeat << " runs, median "
           << format("%.3f", times[times.size() / 2]) << " ms, min "
           << format("%.3f", times.front()) << " ms\n";
  }

  if (!o.saveOutputs.empty()) {
    if (std::error_code ec = sys::fs::create_directories(o.saveOutputs))
      return fail("cannot create '" + o.saveOutputs + "': " + ec.message());
  }
  for (const rt::BindingInfo &b : session->function().outputs) {
    rt::TensorView v;
    if (rt::Status s = session->output(b.name, v); !s)
      return fail(s.message());
    if (o.printOutputs)
      outs() << b.name << ": " << v.typeStr() << "\n";
    if (o.saveOutputs.empty())
      continue;
    rt::HostTensor t = rt::copyOf(v, b.name);
    SmallString<256> path(o.saveOutputs);
    sys::path::append(path, npyFileNameFor(b.name));
    if (rt::Status s = rt::writeNpy(path.str().str(), t); !s)
      return fail(s.message());
  }
  return 0;
}

} // namespace ampc::tools
