//===- Ranks.cpp - the ranks a kernel call exchanges data with ------------===//
#include "runtime/ops/Ranks.h"

#include "runtime/ops/AttrReaders.h"

#include <string>

namespace ampc::rt::ops {
namespace {

/// Reads the rank count attribute `attr` of `call` into `ranks` (1 when an
/// optional attribute is absent) and, above 1, checks that the session
/// runs on that many. `what` says what the ranks are for, as "<what> N
/// ranks".
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

} // namespace

Status worldSizeOf(const OpCall &call, int64_t sessionRanks, int64_t &ranks) {
  return ranksOf(call, "world_size", /*required=*/true,
                 "the step averages its gradients over", sessionRanks, ranks);
}

Status syncRanksOf(const OpCall &call, int64_t sessionRanks, int64_t &ranks) {
  return ranksOf(call, "sync_ranks", /*required=*/false,
                 "batch norm takes its statistics over", sessionRanks, ranks);
}

} // namespace ampc::rt::ops
