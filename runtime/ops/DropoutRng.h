//===- DropoutRng.h - which elements a dropout step keeps -----------------===//
//
// Dropout's mask as both backends draw it: a splitmix64 stream per (seed,
// step counter), and element i keeps its value iff the stream's draw at
// position i is >= ratio. The mask depends only on (seed, counter, i), never
// on how the work is split over threads or blocks, so the CPU and CUDA
// kernels give the same mask bit for bit.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_OPS_DROPOUTRNG_H
#define AMPC_RUNTIME_OPS_DROPOUTRNG_H

#include "runtime/ops/HostDevice.h"

#include <stdint.h>

namespace ampc::rt::ops {

// splitmix64's finalizer: a bijective 64-bit mix.
AMPC_HOST_DEVICE uint64_t mix64(uint64_t z) {
  z ^= z >> 30;
  z *= 0xBF58476D1CE4E5B9ull;
  z ^= z >> 27;
  z *= 0x94D049BB133111EBull;
  z ^= z >> 31;
  return z;
}

constexpr uint64_t kDropoutGamma = 0x9E3779B97F4A7C15ull;

// The stream of one (seed, step counter) pair.
AMPC_HOST_DEVICE uint64_t dropoutStream(int64_t seed, uint64_t counter) {
  return mix64(mix64(static_cast<uint64_t>(seed)) ^
               mix64(counter * kDropoutGamma + 0xD1B54A32D192ED03ull));
}

// Element i draws mix64(stream + (i + 1) * gamma) (splitmix64 jumped to
// position i); u in [0, 1) from its top 53 bits; kept iff u >= ratio.
AMPC_HOST_DEVICE bool dropoutKeep(uint64_t stream, int64_t i, double ratio) {
  uint64_t z = mix64(stream + static_cast<uint64_t>(i + 1) * kDropoutGamma);
  return static_cast<double>(z >> 11) * 0x1.0p-53 >= ratio;
}

} // namespace ampc::rt::ops

#endif // AMPC_RUNTIME_OPS_DROPOUTRNG_H
