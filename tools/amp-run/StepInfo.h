//===- StepInfo.h - what the host needs to know about a step ----*- C++ -*-===//
//
// Read from @train_step before it is lowered (TrainStep.h) and used by the
// host loop (TrainLoop.h), which sees no MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_TOOLS_AMPRUN_STEPINFO_H
#define AMPC_TOOLS_AMPRUN_STEPINFO_H

#include <cstdint>
#include <map>
#include <set>
#include <string>

namespace ampc::tools {

struct StepInfo {
  std::string loss;
  bool checksOverflow = false;                // the step returns found_inf
  double staticScale = 1;                     // the scale when it is no state
  std::map<std::string, int64_t> classes;     // label input -> class count
  std::map<std::string, int64_t> ignoreIndex; // label input -> its loss's
  std::set<std::string> weights;              // initializers, not state
};

} // namespace ampc::tools

#endif // AMPC_TOOLS_AMPRUN_STEPINFO_H
