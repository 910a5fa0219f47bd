//===- AmpOperandPolicy.cpp - operands that stay f32 ----------------------===//
//
// Normalization statistics, scale and shift stay f32 even when the op runs
// low: they are per-channel (cheap) and their precision sets the accuracy
// of every normalized element (cuDNN and PyTorch keep them f32 too).
//
//===----------------------------------------------------------------------===//
#include "compiler/Transforms/AmpOperandPolicy.h"

#include "dialects/Graph/GraphOps.h"

#include "compiler/Transforms/AmpOperandPolicy.cpp.inc"

using namespace mlir;

namespace ampc {
namespace {

/// Operand 0 is the data; every later operand is per-channel.
template <typename Op>
struct NormalizationPolicy
    : AmpOperandPolicyOpInterface::ExternalModel<NormalizationPolicy<Op>, Op> {
  bool keepsOperandF32(Operation *, unsigned index) const { return index >= 1; }
};

template <typename... Ops> void attachNormalization(MLIRContext *ctx) {
  (Ops::template attachInterface<NormalizationPolicy<Ops>>(*ctx), ...);
}

} // namespace

void registerAmpOperandPolicyModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, graph::GraphDialect *) {
    attachNormalization<graph::BatchNormInferenceOp, graph::BatchNormTrainingOp,
                        graph::LayerNormOp>(ctx);
  });
}

} // namespace ampc
