//===- Scratch.cpp - the per-thread cache of kernel scratch blocks --------===//
#include "runtime/cpu/Scratch.h"

#include <cstdlib>
#include <new>
#include <vector>

namespace ampc::rt::cpu {
namespace {

constexpr size_t kAlignment = 64;

struct Block {
  void *data;
  size_t capacity;
};

// The blocks of this thread not in use. Few: one per scratch buffer a
// kernel holds at once.
struct Cache {
  std::vector<Block> free;
  ~Cache() {
    for (const Block &b : free)
      std::free(b.data);
  }
};

Cache &cache() {
  thread_local Cache c;
  return c;
}

} // namespace

void *acquireScratch(size_t bytes, size_t &capacity) {
  std::vector<Block> &free = cache().free;
  // The smallest cached block that fits, so that a small request does not
  // take the block a large one will want.
  size_t best = free.size();
  for (size_t i = 0; i < free.size(); ++i)
    if (free[i].capacity >= bytes &&
        (best == free.size() || free[i].capacity < free[best].capacity))
      best = i;
  if (best != free.size()) {
    Block b = free[best];
    free[best] = free.back();
    free.pop_back();
    capacity = b.capacity;
    return b.data;
  }
  // None fits: the cached blocks are all smaller than this request, which
  // the new block serves from now on, so they go (else a growing series of
  // requests would keep every size it passed through).
  for (const Block &b : free)
    std::free(b.data);
  free.clear();
  size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded == 0)
    rounded = kAlignment;
  void *p = std::aligned_alloc(kAlignment, rounded);
  if (!p)
    throw std::bad_alloc();
  capacity = rounded;
  return p;
}

void releaseScratch(void *block, size_t capacity) {
  // Called from ~Scratch: a failure to grow the list frees the block
  // instead of throwing.
  try {
    cache().free.push_back({block, capacity});
  } catch (...) {
    std::free(block);
  }
}

size_t cachedScratchBytes() {
  size_t n = 0;
  for (const Block &b : cache().free)
    n += b.capacity;
  return n;
}

} // namespace ampc::rt::cpu
