//===- RankAgreement.h - the ranks train one run, or say why not -*- C++ -*-=//
//
// N ranks are one training only if each was started as rank 0 was: the
// same compiled step, flags, data and starting weights. mpirun gives every
// rank the same command line, but not the same files: another machine's
// copy of the model, data or checkpoint, or an MPMD launch
// (`mpirun -n 1 ... : -n 1 ...`) with other flags, would otherwise train
// as many different runs whose gradients are averaged, the numbers
// silently wrong. Before the first step each rank compares what it runs
// with rank 0's, and one that differs stops, naming what.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_TOOLING_RANKAGREEMENT_H
#define AMPC_RUNTIME_TOOLING_RANKAGREEMENT_H

#include "runtime/Collective.h"
#include "runtime/Status.h"

#include <map>
#include <string>

namespace ampc::tools {

/// What a rank trains with, each fact under the name a message gives it
/// (a flag's by the flag, "--lr"; "the training data's CRC-32") with its
/// value as text.
using RunFacts = std::map<std::string, std::string>;

/// The fact of the compiled step's (or Program file's) hash, named so on
/// both tools. It differs with the model or Program, the ampc build and
/// the flags compiled into the step, so it comes with them in a refusal.
inline constexpr const char *kStepHashFact = "the compiled step's hash";

/// Compares `mine` with rank 0's, which `ranks` broadcasts: every rank
/// calls it, at the same point of the run. Rank 0 passes. On another rank
/// the error lists each fact that differs, in name order, with its value
/// here and on rank 0 ("none" where a rank lacks it), then `howToStart`:
/// how the tool's ranks are started alike (LoopOptions::howToStart).
rt::Status checkSameRunAsRankZero(rt::Collective &ranks, const RunFacts &mine,
                                  const std::string &howToStart);

/// `mine`, this rank's outcome of a call that every rank makes at once and
/// that must succeed on all or change nothing (loading a checkpoint in
/// each, or rank 0 writing one): one exchange tells each rank whether the
/// others succeeded. Returns `mine` where it failed, an error naming the
/// ranks where it failed elsewhere ("rank 1 could not `what` (its own
/// error says why)"), and ok where it succeeded on all.
rt::Status checkEveryRank(rt::Collective &ranks, const rt::Status &mine,
                          const std::string &what);

/// The facts as bytes and back (what the broadcast carries); false when
/// `bytes` are not such facts.
std::string encodeRunFacts(const RunFacts &facts);
bool decodeRunFacts(const std::string &bytes, RunFacts &out);

} // namespace ampc::tools

#endif // AMPC_RUNTIME_TOOLING_RANKAGREEMENT_H
