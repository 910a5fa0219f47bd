//===- AmpReport.h - what amp-auto-cast decided, as JSON --------*- C++ -*-===//
//
// The report users read to see why an op runs in the precision it does.
// amp-run adds the planned activation bytes of the f32 and AMP steps.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_TRANSFORMS_AMPREPORT_H
#define AMPC_COMPILER_TRANSFORMS_AMPREPORT_H

#include "mlir/Support/LLVM.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ampc {

struct AmpReport {
  struct Op {
    std::string node; // ONNX node name, "" when the op has none
    std::string op;   // graph op mnemonic
    std::string precision;
    std::string rule;
  };
  struct Param {
    std::string name;
    std::string stored;                     // the argument's element type
    std::vector<std::string> workingCopies; // types it is cast to per step
  };
  std::string level, dtype;
  std::vector<Op> ops;
  std::vector<Param> params;
  int64_t castsInserted = 0;

  llvm::json::Object toJson() const;
  /// Writes `json` to `path` through a temporary file and a rename, so a
  /// reader never sees half a report.
  static mlir::LogicalResult write(const llvm::json::Object &json,
                                   llvm::StringRef path, std::string &error);
  mlir::LogicalResult write(llvm::StringRef path, std::string &error) const {
    return write(toJson(), path, error);
  }
};

} // namespace ampc

#endif // AMPC_COMPILER_TRANSFORMS_AMPREPORT_H
