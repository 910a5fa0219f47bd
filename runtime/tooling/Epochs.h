//===- Epochs.h - where a run's steps fall in its data's epochs -----------===//
//
// A step takes `worldSize` batches (one per rank of a data-parallel run,
// batches s*N .. s*N+N-1), an epoch is `batchesPerEpoch` batches, and the
// ranks need not divide it: an epoch ends on the step that takes its last
// batch. The loop's evaluations and checkpoints, the progress line and
// amp-run's summary all count epochs here.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_TOOLING_EPOCHS_H
#define AMPC_RUNTIME_TOOLING_EPOCHS_H

#include <cstdint>

namespace ampc::tools {

struct EpochClock {
  int64_t batchesPerEpoch = 0; // 0: the data has no epochs (synthetic)
  int64_t worldSize = 1;

  bool known() const { return batchesPerEpoch > 0; }
  /// Whole epochs whose last batch the first `done` steps took.
  int64_t completed(int64_t done) const {
    return done * worldSize / batchesPerEpoch;
  }
  /// Whether step `done - 1` takes the last batch of an epoch.
  bool endsAt(int64_t done) const {
    return known() && done > 0 && completed(done) != completed(done - 1);
  }
  /// The epoch (from 1) that step `step` (from 0) starts in.
  int64_t epochOf(int64_t step) const {
    return step * worldSize / batchesPerEpoch + 1;
  }
  /// The first step that takes a batch of the epoch step `step` starts in.
  int64_t firstStepOf(int64_t step) const {
    int64_t firstBatch = (epochOf(step) - 1) * batchesPerEpoch;
    return firstBatch / worldSize;
  }
  /// The step that takes the last batch of the epoch step `step` starts
  /// in.
  int64_t lastStepOf(int64_t step) const {
    return (epochOf(step) * batchesPerEpoch - 1) / worldSize;
  }
  /// Epochs, as a fraction, that the first `done` steps took.
  double fraction(int64_t done) const {
    return static_cast<double>(done * worldSize) /
           static_cast<double>(batchesPerEpoch);
  }
  /// The epochs a run of `steps` steps counts: those it ends, and the one
  /// it stops in unless its last step ends one (the few batches of the
  /// next epoch that step takes start no epoch of the run).
  int64_t total(int64_t steps) const {
    return completed(steps) + (endsAt(steps) ? 0 : 1);
  }
  /// Steps per epoch when the ranks divide an epoch's batches, else 0.
  int64_t wholeStepsPerEpoch() const {
    return known() && batchesPerEpoch % worldSize == 0
               ? batchesPerEpoch / worldSize
               : 0;
  }
  /// Steps that take `epochs` epochs' batches (at least 1): the last one
  /// may take a few batches of the next epoch.
  int64_t stepsFor(int64_t epochs) const {
    int64_t batches = epochs * batchesPerEpoch;
    return batches > 0 ? (batches + worldSize - 1) / worldSize : 1;
  }
};

} // namespace ampc::tools

#endif // AMPC_RUNTIME_TOOLING_EPOCHS_H
