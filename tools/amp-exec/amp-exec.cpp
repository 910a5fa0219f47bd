//===- amp-exec.cpp - run a compiled Program ------------------------------===//
//
// The runtime alone (no MLIR, no LLVM): runs a Program that
// `amp-run --emit=program` wrote, with amp-run's data, metrics and
// checkpoint options. A training Program carries the step's facts
// (StepInfo) the host loop needs. This is how a machine without the
// compiler (the GPU machine) runs ampc.
//
//===----------------------------------------------------------------------===//

#include "runtime/ByteSize.h"
#include "runtime/Checksum.h"
#include "runtime/Program.h"
#include "runtime/Session.h"
#include "runtime/io/TensorFile.h"
#include "runtime/ops/OptimizerRules.h"
#include "runtime/tooling/CheckNumerics.h"
#include "runtime/tooling/Checkpoint.h"
#include "runtime/tooling/FashionMnist.h"
#include "runtime/tooling/Fnv.h"
#include "runtime/tooling/Ranks.h"
#include "runtime/tooling/RunFlags.h"
#include "runtime/tooling/TrainData.h"
#include "runtime/tooling/TrainLoop.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

using namespace ampc;
using namespace ampc::tools;

namespace {

/// What an error line starts with: in a data-parallel run each rank's
/// errors say whose they are.
std::string failPrefix = "amp-exec: error: ";

int fail(const std::string &msg) {
  std::cout.flush();
  std::fflush(stdout);
  // One write: the ranks of a data-parallel run share the stream.
  std::string line = failPrefix + msg + "\n";
  std::fputs(line.c_str(), stderr);
  return 1;
}

/// The launch's world when mpirun started this process (Ranks.h).
std::shared_ptr<rt::mpi::MpiCollective> world;

const char *kUsage =
    "usage: amp-exec PROGRAM [options]\n"
    "\n"
    "Runs a Program written by `amp-run --emit=program -o PROGRAM` with the\n"
    "runtime alone.\n"
    "\n";

/// The Program and the run-time flags (RunFlags.h).
struct Options : RunOptions {
  std::string program;
  bool uniformInit = false;
  uint64_t initSeed = 0;
};

/// Parses argv; returns -1 to go on, else the exit code.
int parseArgs(int argc, char **argv, Options &o) {
  o.data = "synthetic";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::cout << kUsage << runFlagsHelp(kAmpExec);
      return 0;
    }
    if (a.rfind("--", 0) != 0) {
      if (!o.program.empty())
        return fail("one Program only: '" + o.program + "' and '" + a + "'");
      o.program = a;
      continue;
    }
    std::string name = a.substr(2), value;
    bool hasValue = false;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      hasValue = true;
    }
    const RunFlag *flag = findRunFlag(name, kAmpExec);
    if (!flag)
      return fail("unknown option '" + a + "' (amp-exec --help lists them)");
    // A switch may be given bare, or followed by its value.
    if (!hasValue && flag->value) {
      if (i + 1 >= argc)
        return fail("--" + name + " needs a value");
      value = argv[++i];
    } else if (bool on;
               !hasValue && i + 1 < argc && parseSwitchWord(argv[i + 1], on)) {
      value = argv[++i];
    }
    if (rt::Status s = setRunFlag(*flag, value, o); !s)
      return fail(s.message());
  }
  if (o.program.empty())
    return fail("no Program given (usage: amp-exec PROGRAM [options]; "
                "amp-run --emit=program -o PROGRAM writes one)");
  parseInitParams(o.initParams, o.uniformInit, o.initSeed); // checked
  return -1;
}

/// splitmix64: the same stream on every platform.
struct SplitMix {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1), 24 bits.
  float symmetric() {
    return static_cast<float>(next() >> 40) * (2.0f / 16777216.0f) - 1.0f;
  }
};

/// `name`'s value from --init-params uniform: U(-1/sqrt(fan_in),
/// 1/sqrt(fan_in)) for rank >= 2 (fan_in: the product of the dims after
/// the first), ones for a normalization's scale or variance (`isScale`),
/// zeros for other parameters below rank 2, rounded once to `dtype`. Each
/// parameter's stream starts from the seed and its name, so adding one changes
/// no other.
rt::Status uniformValue(const std::string &name, const rt::TensorView &type,
                        bool isScale, uint64_t seed, rt::HostTensor &out) {
  out = rt::makeHostTensor(rt::DType::F32, type.shape, name);
  float *p = reinterpret_cast<float *>(out.bytes.data());
  int64_t n = out.numElements();
  if (type.rank() >= 2 && n > 0) {
    int64_t fanIn = n / type.shape[0];
    float bound = 1.0f / std::sqrt(static_cast<float>(fanIn));
    Fnv1a64 h; // of the name
    h.add(name.data(), name.size());
    SplitMix g{seed ^ h.value};
    for (int64_t i = 0; i < n; ++i)
      p[i] = bound * g.symmetric();
  } else {
    // A zero scale would zero the normalized activations (and their
    // gradients): PyTorch's BatchNorm/LayerNorm start it at one.
    std::fill(p, p + n, isScale ? 1.0f : 0.0f);
  }
  if (type.dtype != rt::DType::F32)
    return rt::convertTo(out, type.dtype);
  return rt::Status::ok();
}

/// The values of `f` a normalization kernel reads as its scale, or a batch
/// norm as its (running) variance, directly or through a copy, broadcast or
/// one-input fused kernel (an AMP conversion): --init-params uniform starts
/// them at one. The Program's kernels say it, whatever the names.
std::set<int> normalizationScales(const rt::FunctionInfo &f) {
  std::set<int> scales;
  // Walks back from the scale operand through the kernels that only
  // convert or move it, to the parameter holding it.
  std::map<int, const rt::KernelInfo *> producer;
  for (const rt::KernelInfo &k : f.kernels)
    for (int v : k.outputs)
      producer[v] = &k;
  for (const rt::KernelInfo &k : f.kernels) {
    std::vector<size_t> operands;
    if (k.kind == "batch_norm_training" || k.kind == "batch_norm_inference")
      operands = {1, 4}; // scale, (running) variance
    else if (k.kind == "layer_norm")
      operands = {1};
    else if (k.kind == "batch_norm_grad" || k.kind == "layer_norm_grad")
      operands = {2};
    for (size_t operand : operands) {
      if (operand >= k.inputs.size())
        continue;
      int v = k.inputs[operand];
      while (v >= 0 && scales.insert(v).second) {
        auto p = producer.find(v);
        if (p == producer.end())
          break;
        const rt::KernelInfo &src = *p->second;
        std::vector<int> present;
        for (int in : src.inputs)
          if (in >= 0)
            present.push_back(in);
        bool forwards = src.kind == "copy" || src.kind == "broadcast_to" ||
                        src.kind == "fused";
        if (!forwards || present.size() != 1)
          break;
        v = present[0];
      }
    }
  }
  return scales;
}

/// Sets the weights (`names`; every parameter of rank >= 1 when empty) of
/// `session` by --init-params uniform, and each weight's working copy to it
/// rounded.
rt::Status initUniform(rt::Session &session, const rt::StepInfo *step,
                       uint64_t seed) {
  std::vector<std::string> weights;
  if (step)
    weights.assign(step->weights.begin(), step->weights.end());
  else
    for (const rt::BindingInfo &b : session.function().params)
      if (!session.function().values[b.value].shape.empty())
        weights.push_back(b.name);
  // A weight is a scale when it, or its working copy, is one.
  std::set<int> scales = normalizationScales(session.function());
  // Types come from the Program, not from the device: reading a weight back
  // just to learn its type would copy every byte of it to the host.
  const rt::FunctionInfo &f = session.function();
  std::map<std::string, int> valueOf;
  for (const rt::BindingInfo &b : f.params)
    valueOf[b.name] = b.value;
  auto typeOf = [&](const std::string &param, rt::TensorView &type) {
    auto v = valueOf.find(param);
    if (v == valueOf.end())
      return rt::Status::error("the Program has no parameter '" + param + "'");
    type = rt::TensorView{f.values[v->second].dtype, f.values[v->second].shape,
                          nullptr};
    return rt::Status::ok();
  };
  auto isScale = [&](const std::string &param) {
    auto v = valueOf.find(param);
    return v != valueOf.end() && scales.count(v->second) > 0;
  };
  for (const std::string &w : weights) {
    rt::TensorView type;
    AMPC_RETURN_IF_ERROR(typeOf(w, type));
    bool scale = isScale(w);
    if (step)
      if (auto copy = step->workingCopies.find(w);
          copy != step->workingCopies.end())
        scale = scale || isScale(copy->second);
    rt::HostTensor v;
    AMPC_RETURN_IF_ERROR(uniformValue(w, type, scale, seed, v));
    AMPC_RETURN_IF_ERROR(session.setParam(w, v.view()));
    auto copy = step ? step->workingCopies.find(w)
                     : std::map<std::string, std::string>::const_iterator();
    if (!step || copy == step->workingCopies.end())
      continue;
    rt::TensorView copyType;
    AMPC_RETURN_IF_ERROR(typeOf(copy->second, copyType));
    rt::HostTensor c = rt::copyOf(v.view(), copy->second);
    if (type.dtype != rt::DType::F32)
      AMPC_RETURN_IF_ERROR(rt::convertTo(c, rt::DType::F32));
    AMPC_RETURN_IF_ERROR(rt::convertTo(c, copyType.dtype));
    AMPC_RETURN_IF_ERROR(session.setParam(copy->second, c.view()));
  }
  return rt::Status::ok();
}

/// The parameters the Program was written without (--program-weights=omit).
std::vector<std::string> omittedParams(const rt::FunctionInfo &f) {
  std::vector<std::string> out;
  for (const rt::BindingInfo &b : f.params)
    if (b.init.empty() && f.values[b.value].byteSize() > 0)
      out.push_back(b.name);
  return out;
}

/// The updates the step's cosine learning-rate schedule lasts: fixed when
/// the Program was compiled (amp-run --lr-total-steps, or that run's
/// length); 0 when it has none.
int64_t cosineScheduleUpdates(const rt::FunctionInfo &step) {
  for (const rt::KernelInfo &k : step.kernels) {
    rt::ops::ScheduleAttrs schedule; // (the loader checked them)
    if (k.kind == "lr_schedule" &&
        rt::ops::readScheduleAttrs(k.attrs, schedule) &&
        schedule.kind == "cosine")
      return schedule.totalSteps;
  }
  return 0;
}

/// FNV-1a (64 bits) of a file: what amp-exec's checkpoints recorded of
/// their Program before they recorded its step's hash.
bool hashFile(const std::string &path, std::string &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  Fnv1a64 h;
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof buf);
    h.add(buf, static_cast<size_t>(in.gcount()));
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx",
                static_cast<unsigned long long>(h.value));
  out = text;
  return true;
}

std::string jsonString(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20) {
      char u[8];
      std::snprintf(u, sizeof u, "\\u%04x", c);
      out += u;
    } else
      out += c;
  }
  return out + "\"";
}

std::string jsonNumber(double v) {
  if (!std::isfinite(v))
    return "null";
  char b[32];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}

/// The summary --json writes; fields that do not apply are null.
struct Summary {
  std::string program, device, deviceName, mode;
  int64_t steps = 0;
  double medianStepMs = NAN, medianInputMs = NAN, samplesPerS = NAN,
         finalLoss = NAN;
  double lossScale = NAN;
  int64_t skipped = -1;
  uint64_t deviceBytes = 0, peakDeviceBytes = 0;
  /// Takes the device's name and memory from the session that ran.
  void deviceOf(const rt::Session &s) {
    deviceName = s.deviceName();
    deviceBytes = s.deviceBytes();
    peakDeviceBytes = s.peakDeviceBytes();
  }
};

rt::Status writeJson(const std::string &path, const Summary &s) {
  std::ostringstream os;
  os << "{\"program\": " << jsonString(s.program)
     << ", \"device\": " << jsonString(s.device)
     << ", \"device_name\": " << jsonString(s.deviceName)
     << ", \"mode\": " << jsonString(s.mode) << ", \"steps\": " << s.steps
     << ", \"median_step_ms\": " << jsonNumber(s.medianStepMs)
     << ", \"median_input_ms\": " << jsonNumber(s.medianInputMs)
     << ", \"samples_per_s\": " << jsonNumber(s.samplesPerS)
     << ", \"final_loss\": " << jsonNumber(s.finalLoss)
     << ", \"skipped_steps\": "
     << (s.skipped < 0 ? "null" : std::to_string(s.skipped))
     << ", \"loss_scale\": " << jsonNumber(s.lossScale)
     << ", \"device_bytes\": " << s.deviceBytes
     << ", \"peak_device_bytes\": " << s.peakDeviceBytes << "}\n";
  std::string text = os.str();
  return rt::writeFileAtomically(path, text.data(), text.size())
      .withContext("--json");
}

/// The data inputs of `f`, in binding order.
std::vector<InputSpec> inputSpecsOf(const rt::FunctionInfo &f,
                                    const rt::StepInfo *step) {
  std::vector<InputSpec> specs;
  for (const rt::BindingInfo &b : f.inputs) {
    const rt::ValueInfo &v = f.values[b.value];
    InputSpec s{b.name, v.dtype, v.shape, 0};
    if (step)
      if (auto c = step->classes.find(b.name); c != step->classes.end())
        s.classes = c->second;
    specs.push_back(s);
  }
  return specs;
}

/// Opens --data and --test-data as amp-run does (the test split only for
/// a process that evaluates: `openTest`).
rt::Status openData(const Options &o, const std::vector<InputSpec> &specs,
                    FileData &d, bool openTest = true) {
  if (o.data == "synthetic")
    return BatchSource::synthetic(o.seed, specs, d.train, o.syntheticBatches)
        .withContext("--data");
  return openFileData(o.data, o.testData, o.shuffle, o.seed, specs, d,
                      openTest);
}

rt::Status createSession(rt::FunctionInfo f, const Options &o,
                         std::unique_ptr<rt::Session> &out) {
  rt::SessionOptions so = sessionOptionsOf(o);
  so.collective = world;
  // 'none' (0): no budget but what the device has, which the sessions
  // are always checked against.
  if (!o.memoryBudget.empty())
    so.memoryLimit = memoryBudgetBytes(o.memoryBudget);
  rt::Status s = rt::Session::create(std::move(f), so, out);
  // A device that cannot be used is the flag's problem, said as such.
  if (!s && o.device != "cpu")
    return s.withContext("--device " + o.device);
  return s;
}

int runInference(rt::ProgramInfo &program, const Options &o, Summary &sum) {
  const rt::FunctionInfo *f = program.find("forward");
  // An inference Program's one function is its forward pass, whatever
  // its name; a training step is no forward pass.
  if (!f && program.functions.size() == 1 && !program.step)
    f = &program.functions[0];
  if (!f)
    return fail(o.program +
                ": --mode infer runs @forward, and the Program has none (a "
                "training Program: run it with --mode train)");
  if (f->paramsFromStep)
    return fail(o.program +
                ": a training Program, whose @forward evaluates the weights "
                "its step trains (it holds none of its own): run it with "
                "--mode train, or infer with the Program of amp-run MODEL "
                "--emit=program");
  for (const RunFlag &flag : runFlags())
    if ((flag.tools & kAmpExec) && o.isGiven(flag.name) &&
        !inferenceTakes(flag, kAmpExec))
      return fail("--" + std::string(flag.name) + " is for --mode train");
  if (rt::Status s = checkRunOptions(o, /*train=*/false); !s)
    return fail(s.message());
  std::vector<InputSpec> specs = inputSpecsOf(*f, nullptr);
  std::vector<std::string> omitted = omittedParams(*f);
  if (!omitted.empty() && !o.uniformInit)
    return fail(o.program +
                ": the Program was written without its weights "
                "(amp-run --program-weights=omit; '" +
                omitted[0] +
                "' has no initial value): give --init-params uniform[:SEED]");
  FileData data;
  if (rt::Status s = openData(o, specs, data); !s)
    return fail(s.message());
  std::unique_ptr<rt::Session> session;
  if (rt::Status s = createSession(*f, o, session); !s)
    return fail(s.message());
  if (o.uniformInit)
    if (rt::Status s = initUniform(*session, nullptr, o.initSeed); !s)
      return fail("--init-params: " + s.message());
  int64_t runs = std::max<int64_t>(o.steps, 1);
  std::vector<double> times;
  std::vector<rt::HostTensor> batch;
  double total = 0;
  for (int64_t r = 0; r < runs; ++r) {
    if (rt::Status s = data.train->batch(r, batch); !s)
      return fail("--data: " + s.message());
    auto start = std::chrono::steady_clock::now();
    for (rt::HostTensor &t : batch)
      if (rt::Status s = session->setInput(t.name, t.view()); !s)
        return fail(s.message());
    session->setNonFiniteProbe(o.checkNumerics && r == 0);
    if (rt::Status s = session->run(); !s)
      return fail(o.program + ": " + s.message());
    if (std::string fault = nonFiniteFault(*session); !fault.empty())
      return fail(o.program + ": " + fault);
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    times.push_back(ms);
    total += ms;
  }
  std::sort(times.begin(), times.end());
  sum.deviceOf(*session);
  sum.steps = runs;
  sum.medianStepMs = times[times.size() / 2];
  int64_t b = specs.empty() || specs[0].shape.empty() ? 1 : specs[0].shape[0];
  sum.samplesPerS = total > 0 ? runs * b / (total / 1000) : NAN;
  std::printf("amp-exec: ran %s %lld %s; median %.3f ms\n", f->name.c_str(),
              static_cast<long long>(runs), runs == 1 ? "time" : "times",
              sum.medianStepMs);
  for (const rt::BindingInfo &out : session->function().outputs) {
    rt::TensorView v;
    if (rt::Status s = session->output(out.name, v); !s)
      return fail(s.message());
    std::printf("%s: %s\n", out.name.c_str(), v.typeStr().c_str());
  }
  return 0;
}

int runTraining(rt::ProgramInfo &program, const Options &o, Summary &sum) {
  if (!program.step)
    return fail(o.program +
                ": the Program has no training step information (an "
                "inference Program, or one written before amp-exec): "
                "recompile it with amp-run --mode train --emit=program -o " +
                o.program);
  const rt::StepInfo &step = *program.step;
  rt::FunctionInfo *f = nullptr;
  for (rt::FunctionInfo &fn : program.functions)
    if (fn.name == step.function)
      f = &fn;
  std::vector<std::string> omitted = omittedParams(*f);
  if (!omitted.empty() && !o.uniformInit && o.resumeDir.empty())
    return fail(o.program +
                ": the Program was written without its weights "
                "(amp-run --program-weights=omit; '" +
                omitted[0] +
                "' has no initial value): give --init-params uniform[:SEED] "
                "or --resume DIR");
  bool synthetic = o.data == "synthetic";
  if (rt::Status s = checkRunOptions(o, /*train=*/true); !s)
    return fail(s.message());
  // No two outputs one file: the later would replace the earlier.
  std::vector<std::pair<std::string, std::string>> outputs = {
      {"--json", o.json}};
  for (const auto &file : runOutputFiles(o))
    outputs.push_back(file);
  outputs.emplace_back("--checkpoint", o.checkpointDir.empty()
                                           ? ""
                                           : checkpointPath(o.checkpointDir));
  if (rt::Status s = rt::checkDistinctOutputs(outputs); !s)
    return fail(s.message());
  // (Rank 0 alone writes them.)
  bool writes = !world || world->rank() == 0;
  for (const auto &[flag, path] : runOutputFiles(o))
    if (!path.empty() && writes)
      if (rt::Status s = rt::checkWritable(path); !s)
        return fail(flag + ": " + s.message());
  if (!o.checkpointDir.empty() && writes)
    if (rt::Status s = checkCheckpointDirectory(o.checkpointDir); !s)
      return fail("--checkpoint: " + s.message());

  // Data parallelism: this process is rank `rank` of `ranks`; rank 0 alone
  // evaluates, shows progress and writes files.
  int ranks = world ? world->size() : 1;
  int rank = world ? world->rank() : 0;
  bool lead = rank == 0;
  std::vector<InputSpec> specs = inputSpecsOf(*f, &step);
  FileData data;
  if (rt::Status s = openData(o, specs, data, /*openTest=*/lead); !s)
    return fail(s.message());
  // The evaluation function: a @forward other than the step (a crafted
  // Program may name @forward its step).
  const rt::FunctionInfo *forward = program.find("forward");
  if (forward && forward->name == step.function)
    forward = nullptr;
  if (data.test && !forward) {
    if (!o.testData.empty())
      return fail("--test-data " + o.testData + ": " + o.program +
                  " has no @forward to evaluate it with (written by an ampc "
                  "before training Programs held one: compile it again with "
                  "amp-run --mode train --emit=program)");
    // IDX data brings its test split unasked; training Programs written
    // before version 4 hold the step alone. Train, and say that nothing is
    // evaluated.
    if (lead)
      std::printf("amp-exec: %s has no @forward (written by an ampc before "
                  "training Programs held one): the test split of --data %s "
                  "is not evaluated\n",
                  o.program.c_str(), o.data.c_str());
    data.test.reset();
  }
  if (rt::Status s = checkDataLabels(step, data); !s)
    return fail(s.message());
  // A data-parallel step takes `ranks` batches: --epochs E runs the steps
  // that take E epochs' batches.
  int64_t perEpoch = data.train->stepsPerEpoch();
  int64_t steps = o.steps ? o.steps : runSteps(o, perEpoch, ranks);
  std::string acc = std::to_string(step.accumulate);
  if (rt::Status s = checkWholeUpdates(
          o, steps, step.accumulate,
          "the " + acc +
              " steps per update the Program was compiled for (amp-run "
              "--accumulate " +
              acc + ")");
      !s)
    return fail(s.message());

  int64_t scheduled = cosineScheduleUpdates(*f);

  std::unique_ptr<rt::Session> session, evalSession;
  if (rt::Status s = createSession(std::move(*f), o, session); !s)
    return fail(s.message());
  if (data.test && lead)
    if (rt::Status s = createSession(*forward, o, evalSession); !s)
      return fail(s.message());
  if (o.uniformInit)
    if (rt::Status s = initUniform(*session, &step, o.initSeed); !s)
      return fail("--init-params: " + s.message());

  // What a checkpoint records of the Program: the hash of what its step
  // computes, so that the step compiled again resumes it.
  std::map<std::string, std::string> config = dataOrderConfig(o, data.shuffled);
  config[kProgramStepKey] = rt::hex32(program.stepHash);

  LoopOptions lo = loopOptionsOf(o);
  lo.tool = "amp-exec";
  lo.howToStart = "Start every rank with the same command line, and give "
                  "each machine the same Program, data and checkpoint";
  lo.run = o.program;
  lo.modelPath = o.program;
  lo.steps = steps;
  lo.config = config;
  lo.asRank("amp-exec", world.get());
  TrainLoop loop(*session, evalSession.get(), step, *data.train,
                 lead ? data.test.get() : nullptr, lo);
  if (!o.resumeDir.empty()) {
    Checkpoint ckpt;
    if (rt::Status s = readCheckpoint(o.resumeDir, ckpt); !s)
      return fail("--resume: " + s.message());
    // Before they recorded the step's hash, amp-exec's checkpoints recorded
    // the FNV-1a of the Program file's bytes: those resume with that file.
    if (auto file = ckpt.config.find(kProgramFileKey);
        file != ckpt.config.end()) {
      std::string fileHash;
      if (!hashFile(o.program, fileHash))
        return fail(o.program + ": cannot read the Program file again");
      if (file->second != fileHash)
        return fail("--resume: " + o.resumeDir +
                    ": the checkpoint was written with another Program file "
                    "(by an amp-exec that recorded the file's bytes, not its "
                    "step's: resume it with the file it was written with)");
      config.erase(kProgramStepKey);
      config[kProgramFileKey] = fileHash;
    } else if (auto hash = ckpt.config.find(kProgramStepKey);
               hash == ckpt.config.end())
      return fail("--resume: " + o.resumeDir +
                  ": the checkpoint was written by amp-run or the Python "
                  "module, not by amp-exec (amp-run --resume resumes it)");
    else if (hash->second != config[kProgramStepKey])
      return fail("--resume: " + o.resumeDir +
                  ": the checkpoint was written by a Program whose step "
                  "computes something else (another model, other options, "
                  "or an ampc that compiles it otherwise)");
    if (rt::Status s = checkConfig(ckpt, config, o.resumeDir); !s)
      return fail("--resume: " + s.message());
    if (ckpt.step >= steps)
      return fail("--resume: " + o.resumeDir + " is at step " +
                  std::to_string(ckpt.step) + " and the run has " +
                  std::to_string(steps) +
                  " steps: nothing to train (--steps and --epochs count the "
                  "whole run)");
    if (rt::Status s = loop.resume(ckpt, o.resumeDir); !s)
      return fail("--resume: " + s.message());
  }

  if (lead) {
    std::string ranksText =
        ranks > 1
            ? ", data-parallel over " + std::to_string(ranks) +
                  " ranks (a step takes " + std::to_string(ranks) + " batches)"
            : "";
    std::printf(
        "amp-exec: training %s on %s (%s), %lld steps%s%s\n", o.program.c_str(),
        synthetic ? "synthetic data" : o.data.c_str(), o.device.c_str(),
        static_cast<long long>(steps), ranksText.c_str(),
        loop.firstStep() > 0
            ? (", resumed at step " + std::to_string(loop.firstStep())).c_str()
            : "");
    // Past its end the schedule holds its minimum rate. Said, not refused:
    // amp-run's own runs allow a --lr-total-steps shorter than the run.
    // ("Up to": an update skipped on an overflow does not advance it.)
    if (int64_t updates = steps / step.accumulate;
        scheduled > 0 && updates > scheduled)
      std::printf("amp-exec: note: %s's cosine learning-rate schedule lasts "
                  "%lld updates and this run makes %lld: up to the last %lld "
                  "train at its minimum rate (compile it for this run's "
                  "--steps or --epochs to spread the schedule over them)\n",
                  o.program.c_str(), static_cast<long long>(scheduled),
                  static_cast<long long>(updates),
                  static_cast<long long>(updates - scheduled));
    std::fflush(stdout);
  }
  if (int rc = loop.run())
    return rc;
  // --checksum-state: the ranks' weights must be equal after every update;
  // rank 0 compares them after the last.
  if (ranks > 1 && o.checksumState) {
    uint32_t checksum = 0;
    if (rt::Status s = loop.compareRanks(checksum); !s)
      return fail(s.message());
    if (lead)
      std::printf("amp-exec: weights checksum %08x on all %d ranks\n", checksum,
                  ranks);
  }
  if (!lead)
    return 0; // rank 0 writes the plot, prints the summary, writes --json
  if (!o.plot.empty()) {
    std::string name = std::filesystem::path(o.program).filename().string();
    if (rt::Status s = writeTrainingPlot(o.plot, name, {loop.plotRun(name)});
        !s)
      return fail("--plot: " + s.message());
  }

  // amp-run's summary line, so that the two compare by text.
  std::printf("amp-exec: trained %lld %s; final loss %.6g",
              static_cast<long long>(steps), steps == 1 ? "step" : "steps",
              loop.finalLoss());
  if (step.checksOverflow)
    std::printf("; skipped %lld (overflow); final loss scale %.9g",
                static_cast<long long>(loop.skipped()), loop.currentScale());
  if (!std::isnan(loop.medianStepMs()))
    std::printf("; median step %.3f ms", loop.medianStepMs());
  // What the ranks cost rank 0: its time blocked in the gradient
  // all-reduces, per step of this process (as amp-run's summary; MPI's
  // only, as there).
  if (int64_t run = steps - loop.firstStep();
      ranks > 1 && o.device == "cpu" && run > 0)
    std::printf("; all-reduce %.3f ms per step",
                world->allReduceSeconds() * 1e3 / static_cast<double>(run));
  std::printf("\n");
  double testLoss, accuracy;
  if (loop.lastEval(testLoss, accuracy)) {
    std::printf("amp-exec: test loss %.4f", testLoss);
    if (!std::isnan(accuracy))
      std::printf(", test accuracy %.2f%%", accuracy * 100);
    std::printf(" (%lld samples); %.0f samples/s\n",
                static_cast<long long>(data.test->samples()),
                loop.samplesPerSecond());
  }
  sum.deviceOf(*session);
  sum.steps = steps;
  sum.medianStepMs = loop.medianStepMs();
  sum.medianInputMs = loop.medianInputMs();
  sum.samplesPerS = loop.samplesPerSecond();
  sum.finalLoss = loop.finalLoss();
  sum.skipped = loop.skipped();
  sum.lossScale = loop.currentScale();
  return 0;
}

/// Joins the ranks when mpirun started this process, or starts them for
/// --nproc; checks the Program was compiled for them. Returns -1 to go on,
/// else the exit code.
int joinWorld(int argc, char **argv, const Options &o,
              const rt::ProgramInfo &program, const std::string &mode) {
  int64_t compiled = program.step ? program.step->worldSize : 1;
  std::string compile = "amp-run --mode train --data-parallel " +
                        std::to_string(compiled) + " --emit=program";
  if (o.nproc > 1 && !launchedByMpi()) {
    if (mode != "train")
      return fail("--nproc starts ranks that train: it needs a training "
                  "Program (--mode train)");
    if (compiled != o.nproc)
      return fail("--nproc " + std::to_string(o.nproc) + ", but " + o.program +
                  (compiled > 1
                       ? " was compiled for " + std::to_string(compiled) +
                             " ranks (" + compile + ")"
                       : " is not data-parallel (compile it with "
                         "amp-run --mode train --data-parallel " +
                             std::to_string(o.nproc) + " --emit=program)"));
    return fail(startRanks(argc, argv, o.nproc).message());
  }
  if (rt::Status s = joinRanks(o, "amp-exec", world); !s)
    return fail(s.message());
  int64_t ranks = world ? world->size() : 1;
  if (ranks > 1) {
    failPrefix =
        "amp-exec: rank " + std::to_string(world->rank()) + ": error: ";
    if (mode != "train")
      return fail("started as one of " + std::to_string(ranks) +
                  " ranks, which train data-parallel: this needs a training "
                  "Program (--mode train)");
  }
  if (mode == "train" && compiled != ranks)
    return fail(compiled > 1
                    ? o.program + " averages its gradients over " +
                          std::to_string(compiled) + " ranks (" + compile +
                          ") but runs in " + std::to_string(ranks) +
                          ": start amp-exec with --nproc " +
                          std::to_string(compiled) + " (or under mpirun -n " +
                          std::to_string(compiled) + ")"
                    : o.program + " is not data-parallel, but mpirun started " +
                          std::to_string(ranks) +
                          " ranks: compile it with amp-run --mode train "
                          "--data-parallel " +
                          std::to_string(ranks) + " --emit=program");
  return -1;
}

int runTool(int argc, char **argv) {
  // Under a launch, the errors before the ranks join say whose they are
  // too (a rank whose machine lacks a file).
  if (std::optional<int> rank = launchRank())
    failPrefix = "amp-exec: rank " + std::to_string(*rank) + ": error: ";
  Options o;
  if (int rc = parseArgs(argc, argv, o); rc >= 0)
    return rc;
  // (Under mpirun, rank 0 alone writes it: checked once it knows its rank.)
  if (!o.json.empty() && !launchedByMpi())
    if (rt::Status s = rt::checkWritable(o.json); !s)
      return fail("--json: " + s.message());
  // Each rank of a launch takes its own GPU (Ranks.h).
  const std::string givenDevice = o.device;
  o.device = rankDevice(o.device);
  // A device that cannot be used is said first, in one line, before the
  // Program (which may be large) is read.
  uint64_t deviceMemory = 0;
  if (rt::Status s = rt::Session::openDevice(o.device, deviceMemory); !s)
    return fail(rankDeviceError(s.withContext("--device " + o.device),
                                givenDevice, o.device)
                    .message());
  rt::ProgramInfo program;
  if (rt::Status s = rt::readProgramFile(o.program, program); !s)
    return fail(s.message());
  std::string mode =
      o.mode.empty() ? (program.step ? "train" : "infer") : o.mode;
  if (int rc = joinWorld(argc, argv, o, program, mode); rc >= 0)
    return rc;
  if (!o.json.empty() && launchedByMpi() && world->rank() == 0)
    if (rt::Status s = rt::checkWritable(o.json); !s)
      return fail("--json: " + s.message());
  if (world)
    shareCores(o, world->size());
  Summary sum;
  sum.program = o.program;
  sum.device = o.device;
  sum.mode = mode;
  int rc = mode == "train" ? runTraining(program, o, sum)
                           : runInference(program, o, sum);
  if (rc == 0 && !o.json.empty() && (!world || world->rank() == 0))
    if (rt::Status s = writeJson(o.json, sum); !s)
      return fail(s.message());
  return rc;
}

} // namespace

int main(int argc, char **argv) { return endRanks(world, runTool(argc, argv)); }
