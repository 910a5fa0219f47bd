//===- RankAgreement.cpp - the ranks train one run, or say why not --------===//

#include "runtime/tooling/RankAgreement.h"

#include <cassert>
#include <cstdint>
#include <set>
#include <vector>

namespace ampc::tools {
namespace {

void putLength(std::string &out, size_t n) {
  assert(n <= UINT32_MAX && "a fact of 4 GiB");
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
}

bool takeText(const std::string &in, size_t &at, std::string &out) {
  if (in.size() - at < 4)
    return false;
  size_t n = 0;
  for (int i = 0; i < 4; ++i)
    n |= static_cast<size_t>(static_cast<uint8_t>(in[at + i])) << (8 * i);
  at += 4;
  if (in.size() - at < n)
    return false;
  out.assign(in, at, n);
  at += n;
  return true;
}

} // namespace

std::string encodeRunFacts(const RunFacts &facts) {
  std::string out;
  for (const auto &[name, value] : facts) {
    putLength(out, name.size());
    out += name;
    putLength(out, value.size());
    out += value;
  }
  return out;
}

bool decodeRunFacts(const std::string &bytes, RunFacts &out) {
  out.clear();
  for (size_t at = 0; at < bytes.size();) {
    std::string name, value;
    if (!takeText(bytes, at, name) || !takeText(bytes, at, value))
      return false;
    out[name] = value;
  }
  return true;
}

rt::Status checkSameRunAsRankZero(rt::Collective &ranks, const RunFacts &mine,
                                  const std::string &howToStart) {
  // Rank 0's facts: their size, then their bytes.
  std::string bytes = ranks.rank() == 0 ? encodeRunFacts(mine) : "";
  uint64_t size = bytes.size();
  const char *what = ranks.rank() == 0
                         ? "sending this run's facts to the other ranks"
                         : "comparing this rank's run with rank 0's";
  AMPC_RETURN_IF_ERROR(ranks.broadcast(&size, sizeof size).withContext(what));
  bytes.resize(size);
  AMPC_RETURN_IF_ERROR(ranks.broadcast(bytes.data(), size).withContext(what));
  if (ranks.rank() == 0)
    return rt::Status::ok();
  RunFacts lead;
  if (!decodeRunFacts(bytes, lead))
    return rt::Status::error(std::string(what) +
                             ": rank 0 sent what is not a run's facts (is it "
                             "the same ampc build?)");
  std::set<std::string> names;
  for (const auto &entry : mine)
    names.insert(entry.first);
  for (const auto &entry : lead)
    names.insert(entry.first);
  auto valueIn = [](const RunFacts &facts,
                    const std::string &name) -> const std::string * {
    auto it = facts.find(name);
    return it == facts.end() ? nullptr : &it->second;
  };
  auto differs = [&](const std::string &name) {
    const std::string *here = valueIn(mine, name), *there = valueIn(lead, name);
    return !here || !there || *here != *there;
  };
  std::vector<std::string> differ;
  for (const std::string &name : names) {
    if (!differs(name))
      continue;
    const std::string *here = valueIn(mine, name), *there = valueIn(lead, name);
    differ.push_back(name + " " + (here ? *here : "none") + " here, " +
                     (there ? *there : "none") + " on rank 0");
  }
  if (differ.empty())
    return rt::Status::ok();
  std::string list;
  for (const std::string &d : differ)
    list += (list.empty() ? "" : "; ") + d;
  return rt::Status::error("this rank would not train the run rank 0 trains (" +
                           list + "). " + howToStart);
}

rt::Status checkEveryRank(rt::Collective &ranks, const rt::Status &mine,
                          const std::string &what) {
  // Each rank's failure in its own slot.
  std::vector<double> failed(static_cast<size_t>(ranks.size()), 0.0);
  failed[static_cast<size_t>(ranks.rank())] = mine ? 0.0 : 1.0;
  AMPC_RETURN_IF_ERROR(
      ranks.sumOverRanks(failed.data(), failed.size())
          .withContext("telling the other ranks whether this one could " +
                       what));
  if (!mine)
    return mine;
  std::string where;
  size_t count = 0;
  for (size_t r = 0; r < failed.size(); ++r)
    if (failed[r] != 0) {
      where += (where.empty() ? "" : ", ") + std::to_string(r);
      ++count;
    }
  if (where.empty())
    return rt::Status::ok();
  return rt::Status::error(
      (count == 1 ? "rank " : "ranks ") + where + " could not " + what + " (" +
      (count == 1 ? "its" : "their") + " own error says why)");
}

} // namespace ampc::tools
