//===- Ranks.cpp - the ranks a kernel call exchanges data with ------------===//
#include "runtime/ops/Ranks.h"

#include "runtime/ops/AttrReaders.h"

#include <string>

namespace ampc::rt::ops {

Status ranksOf(const OpCall &call, const char *attr, bool required,
               const char *what, int64_t sessionRanks, int64_t &ranks) {
  const AttrValue *a = nullptr;
  AMPC_RETURN_IF_ERROR(
      attrOfKind(*call.attrs, attr, AttrValue::Kind::Int, required, a));
  ranks = a ? a->i : 1;
  if (ranks <= 1)
    return Status::ok();
  const std::string n = std::to_string(ranks);
  if (sessionRanks == 0)
    return Status::error(std::string(what) + " " + n +
                         " ranks (data parallelism), but it runs in one "
                         "process: start it with --nproc " +
                         n + " (or under mpirun -n " + n + ")");
  if (sessionRanks != ranks)
    return Status::error("the step was compiled for " + n +
                         " ranks but runs in " + std::to_string(sessionRanks));
  return Status::ok();
}

} // namespace ampc::rt::ops
