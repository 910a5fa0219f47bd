//===- RunFlagsCl.h - the run-time flag table as llvm::cl options -*- C++ -*-=//
//
// amp-run parses its command line with llvm::cl; this declares the flags of
// runtime/tooling/RunFlags.h there, each once, with the table's help and
// default, and reads what was given back through the table (so amp-run and
// amp-exec accept and refuse the same values with the same messages).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_TOOLS_AMPRUN_RUNFLAGSCL_H
#define AMPC_TOOLS_AMPRUN_RUNFLAGSCL_H

#include "runtime/tooling/RunFlags.h"

#include "llvm/Support/CommandLine.h"

#include <functional>
#include <memory>
#include <vector>

namespace ampc::tools {

class ClRunFlags {
public:
  /// Registers amp-run's flags of the table, each in the category `groupCat`
  /// gives; call before llvm::cl parses.
  explicit ClRunFlags(
      std::function<llvm::cl::OptionCategory &(RunFlagGroup)> groupCat);

  /// The options as given (a model's recipe included), read into `out`
  /// from its defaults; the error names the flag.
  rt::Status read(RunOptions &out) const;

private:
  std::vector<
      std::pair<const RunFlag *, std::unique_ptr<llvm::cl::opt<std::string>>>>
      opts_;
  std::vector<std::string> descs_;
};

} // namespace ampc::tools

#endif // AMPC_TOOLS_AMPRUN_RUNFLAGSCL_H
