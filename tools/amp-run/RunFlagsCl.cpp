//===- RunFlagsCl.cpp - the run-time flag table as llvm::cl options -------===//
#include "tools/amp-run/RunFlagsCl.h"

namespace cl = llvm::cl;

namespace ampc::tools {

ClRunFlags::ClRunFlags(
    std::function<cl::OptionCategory &(RunFlagGroup)> groupCat) {
  for (const RunFlag &flag : runFlags()) {
    if (!(flag.tools & kAmpRun))
      continue;
    // cl::desc keeps a StringRef: the text lives here.
    descs_.push_back(std::string(flag.help) +
                     " (default: " + runFlagDefault(flag) + ")");
  }
  size_t i = 0;
  for (const RunFlag &flag : runFlags()) {
    if (!(flag.tools & kAmpRun))
      continue;
    auto opt = std::make_unique<cl::opt<std::string>>(
        llvm::StringRef(flag.name), cl::desc(descs_[i++]),
        cl::cat(groupCat(flag.group)));
    if (flag.value)
      opt->setValueStr(flag.value);
    else {
      opt->setValueStr("on|off");
      opt->setValueExpectedFlag(cl::ValueOptional);
    }
    opts_.emplace_back(&flag, std::move(opt));
  }
}

rt::Status ClRunFlags::read(RunOptions &out) const {
  for (const auto &[flag, opt] : opts_)
    if (opt->getNumOccurrences())
      AMPC_RETURN_IF_ERROR(setRunFlag(*flag, opt->getValue(), out));
  return rt::Status::ok();
}

} // namespace ampc::tools
