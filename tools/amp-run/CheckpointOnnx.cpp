//===- CheckpointOnnx.cpp - a checkpoint's weights as an ONNX model -------===//

#include "tools/amp-run/CheckpointOnnx.h"

#include "compiler/Import/Onnx/OnnxWeights.h"
#include "runtime/io/TensorFile.h"
#include "runtime/tooling/Checkpoint.h"

#include <set>

namespace ampc::tools {

rt::Status saveOnnxFromCheckpoint(const std::string &modelPath,
                                  const std::string &checkpointDir,
                                  const std::string &outPath,
                                  CheckpointOnnxReport &report) {
  report = CheckpointOnnxReport();
  if (checkpointDir.empty())
    return rt::Status::error("--from-checkpoint names no directory");
  std::string ckptFile = checkpointPath(checkpointDir);
  if (!rt::checkDistinctOutputs(
          {{"--save-onnx", outPath}, {"--from-checkpoint", ckptFile}}))
    return rt::Status::error("--save-onnx " + outPath +
                             " is the checkpoint file " + ckptFile +
                             " that --from-checkpoint reads");
  if (rt::Status s = rt::checkWritable(outPath); !s)
    return s.withContext("--save-onnx");
  const std::string flag = "--from-checkpoint " + checkpointDir + ": ";
  Checkpoint ckpt;
  if (rt::Status s = readCheckpoint(checkpointDir, ckpt); !s)
    return s.withContext("--from-checkpoint");
  std::vector<uint8_t> bytes;
  std::string error;
  if (!readOnnxModel(modelPath, bytes, error))
    return rt::Status::error(error);
  llvm::StringRef model(reinterpret_cast<const char *>(bytes.data()),
                        bytes.size());
  std::vector<OnnxInitializer> initializers;
  if (!listInitializers(model, modelPath, initializers, error))
    return rt::Status::error(error);

  std::set<std::string> names;
  for (const OnnxInitializer &i : initializers)
    names.insert(i.name);
  std::vector<rt::HostTensor> weights;
  std::set<std::string> inCheckpoint;
  for (rt::HostTensor &t : ckpt.params) {
    inCheckpoint.insert(t.name);
    if (names.count(t.name))
      weights.push_back(std::move(t));
  }
  if (weights.empty()) {
    // The tensors a user would know: ampc's own counters ("ampc.step")
    // are left out.
    std::vector<std::string> known;
    for (const std::string &n : inCheckpoint)
      if (n.rfind("ampc.", 0) != 0)
        known.push_back(n);
    std::string held;
    for (size_t i = 0; i < known.size() && i < 4; ++i)
      held += (held.empty() ? "'" : ", '") + known[i] + "'";
    if (known.size() > 4)
      held += " and " + std::to_string(known.size() - 4) + " more";
    return rt::Status::error(
        flag + "the checkpoint holds none of the initializers of " + modelPath +
        " (it holds " + (held.empty() ? "nothing" : held) +
        "): it is of another model's training");
  }
  if (!writeOnnxWithWeights(model, modelPath, outPath, weights, error))
    return rt::Status::error(flag +
                             "the checkpoint does not fit the model: " + error);
  report.step = ckpt.step;
  for (const rt::HostTensor &w : weights)
    report.written.push_back(w.name);
  for (const OnnxInitializer &i : initializers)
    if (i.floating && !inCheckpoint.count(i.name))
      report.kept.push_back(i.name);
  return rt::Status::ok();
}

} // namespace ampc::tools
