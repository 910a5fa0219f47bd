//===- CheckpointOnnx.h - a checkpoint's weights as ONNX --------*- C++ -*-===//
//
// amp-exec (the GPU server path) trains from a Program and writes
// checkpoints, but has no ONNX model to write its weights into: `amp-run
// MODEL --from-checkpoint DIR --save-onnx OUT` writes MODEL with the weights
// of a checkpoint of amp-exec, amp-run or the Python module.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_TOOLS_AMPRUN_CHECKPOINTONNX_H
#define AMPC_TOOLS_AMPRUN_CHECKPOINTONNX_H

#include "runtime/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ampc::tools {

/// What saveOnnxFromCheckpoint wrote.
struct CheckpointOnnxReport {
  int64_t step = 0;                 // the checkpoint's: steps done
  std::vector<std::string> written; // initializers given the checkpoint's
  // Floating-point initializers the checkpoint has no tensor of (frozen in
  // a graph constant, say): they keep the model's values.
  std::vector<std::string> kept;
};

/// Writes the ONNX model at `modelPath` to `outPath` (atomically; it may be
/// `modelPath`) with each initializer that a tensor of the checkpoint in
/// `checkpointDir` is named after replaced by that tensor, which must have
/// its type and dims. The checkpoint's other tensors (optimizer state, AMP
/// working copies, the loss scale) are left out. Fails, writing nothing,
/// when the checkpoint cannot be read, holds none of the initializers, or
/// a tensor does not fit its initializer, and when `outPath` cannot be
/// written or is the checkpoint's file. (amp-run's --from-checkpoint and
/// the Python module's ampc.save_onnx_from_checkpoint.)
rt::Status saveOnnxFromCheckpoint(const std::string &modelPath,
                                  const std::string &checkpointDir,
                                  const std::string &outPath,
                                  CheckpointOnnxReport &report);

} // namespace ampc::tools

#endif // AMPC_TOOLS_AMPRUN_CHECKPOINTONNX_H
