//===- AmpLists.cpp - the AMP op categories -------------------------------===//
//
// Defaults follow what the peers agree on (PyTorch autocast's lower-precision
// and fp32 lists, TensorFlow's allow/infer/clear/deny, Paddle's white and
// black lists): contractions low; exp/log/pow/reciprocal, softmax, losses,
// layer normalization and sums f32, since they overflow or lose the small
// terms in f16 (at O2 amp-auto-cast lets the deny ops that compute in f32
// inside, Graph_WideCompute, follow their input); batch normalization
// follows its input, its statistics f32 (off PyTorch's fp32 list, on
// TensorFlow's infer list); max-like and data-movement ops are exact in
// either precision.
//
//===----------------------------------------------------------------------===//
#include "compiler/Transforms/AmpLists.h"

#include "dialects/Graph/GraphOps.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace ampc {

namespace {
struct Row {
  StringLiteral op; // the full operation name, graph.<mnemonic>
  AmpCategory category;
};

/// Rows name op classes, so a renamed or removed op fails to compile here.
template <typename Op> constexpr Row row(AmpCategory category) {
  return {Op::getOperationName(), category};
}

/// The name users write: the mnemonic, without "graph.".
StringRef mnemonic(StringRef operationName) {
  return operationName.drop_front(
      graph::GraphDialect::getDialectNamespace().size() + 1);
}

constexpr Row kDefaults[] = {
    // Allow: Tensor Core contractions, accumulating in f32.
    row<graph::MatMulOp>(AmpCategory::Allow),
    row<graph::GemmOp>(AmpCategory::Allow),
    row<graph::Conv2dOp>(AmpCategory::Allow),
    row<graph::ConvTranspose2dOp>(AmpCategory::Allow),
    // Infer: arithmetic whose range is its inputs'.
    row<graph::AddOp>(AmpCategory::Infer),
    row<graph::SubOp>(AmpCategory::Infer),
    row<graph::MulOp>(AmpCategory::Infer),
    row<graph::DivOp>(AmpCategory::Infer),
    row<graph::WhereOp>(AmpCategory::Infer),
    // A comparison in the precision its inputs agree on (an f32 activation
    // keeps it exact); its i1 result has no precision.
    row<graph::EqualOp>(AmpCategory::Infer),
    row<graph::LessOp>(AmpCategory::Infer),
    row<graph::LessEqualOp>(AmpCategory::Infer),
    row<graph::GreaterOp>(AmpCategory::Infer),
    row<graph::GreaterEqualOp>(AmpCategory::Infer),
    row<graph::TanhOp>(AmpCategory::Infer),
    row<graph::SigmoidOp>(AmpCategory::Infer),
    row<graph::HardSigmoidOp>(AmpCategory::Infer),
    row<graph::HardSwishOp>(AmpCategory::Infer),
    row<graph::ErfOp>(AmpCategory::Infer),
    row<graph::GeluOp>(AmpCategory::Infer),
    row<graph::SqrtOp>(AmpCategory::Infer),
    row<graph::AvgPool2dOp>(AmpCategory::Infer),
    row<graph::GlobalAvgPoolOp>(AmpCategory::Infer),
    // The data in its input's precision, the statistics, scale and shift
    // in f32 (AmpOperandPolicy), as cuDNN and PyTorch autocast run it.
    row<graph::BatchNormInferenceOp>(AmpCategory::Infer),
    row<graph::BatchNormTrainingOp>(AmpCategory::Infer),
    // Clear: exact in any precision.
    row<graph::ReluOp>(AmpCategory::Clear),
    row<graph::LeakyReluOp>(AmpCategory::Clear),
    row<graph::AbsOp>(AmpCategory::Clear),
    row<graph::NegOp>(AmpCategory::Clear),
    row<graph::ClipOp>(AmpCategory::Clear),
    row<graph::MaxPool2dOp>(AmpCategory::Clear),
    row<graph::ReduceMaxOp>(AmpCategory::Clear),
    // Selections: an index or an element, in whatever precision arrives.
    row<graph::ArgMaxOp>(AmpCategory::Clear),
    row<graph::TopKOp>(AmpCategory::Clear),
    row<graph::ReshapeOp>(AmpCategory::Clear),
    row<graph::BroadcastToOp>(AmpCategory::Clear),
    row<graph::TransposeOp>(AmpCategory::Clear),
    row<graph::ConcatOp>(AmpCategory::Clear),
    row<graph::SliceOp>(AmpCategory::Clear),
    row<graph::GatherOp>(AmpCategory::Clear),
    row<graph::DropoutOp>(AmpCategory::Clear),
    row<graph::LogicalNotOp>(AmpCategory::Clear),
    row<graph::LogicalAndOp>(AmpCategory::Clear),
    row<graph::LogicalOrOp>(AmpCategory::Clear),
    row<graph::LogicalXorOp>(AmpCategory::Clear),
    // Deny: overflow, cancellation or long sums.
    row<graph::ExpOp>(AmpCategory::Deny),
    row<graph::LogOp>(AmpCategory::Deny),
    row<graph::PowOp>(AmpCategory::Deny),
    row<graph::ReciprocalOp>(AmpCategory::Deny),
    // On PyTorch autocast's fp32 list.
    row<graph::SoftplusOp>(AmpCategory::Deny),
    // Their arguments are positions times frequencies (rotary and
    // sinusoidal embeddings), which f16 cannot hold to the radian; neither
    // autocast nor TensorFlow lowers them.
    row<graph::SinOp>(AmpCategory::Deny),
    row<graph::CosOp>(AmpCategory::Deny),
    row<graph::SoftmaxOp>(AmpCategory::Deny),
    row<graph::LogSoftmaxOp>(AmpCategory::Deny),
    row<graph::SoftmaxCrossEntropyOp>(AmpCategory::Deny),
    row<graph::NllLossOp>(AmpCategory::Deny),
    row<graph::LayerNormOp>(AmpCategory::Deny),
    row<graph::ReduceSumOp>(AmpCategory::Deny),
    row<graph::ReduceMeanOp>(AmpCategory::Deny),
    // A long running sum; on PyTorch autocast's fp32 list.
    row<graph::CumSumOp>(AmpCategory::Deny),
};
} // namespace

StringRef categoryName(AmpCategory c) {
  switch (c) {
  case AmpCategory::Allow:
    return "allow";
  case AmpCategory::Infer:
    return "infer";
  case AmpCategory::Clear:
    return "clear";
  case AmpCategory::Deny:
    return "deny";
  case AmpCategory::Unlisted:
    return "unlisted";
  }
  return "?";
}

AmpLists AmpLists::defaults() {
  AmpLists lists;
  for (const Row &r : kDefaults) {
    lists.category[mnemonic(r.op)] = r.category;
    lists.order.push_back(mnemonic(r.op).str());
  }
  return lists;
}

LogicalResult AmpLists::edit(StringRef option, AmpCategory to,
                             ArrayRef<std::string> names, std::string &error) {
  for (StringRef name : names) {
    bool remove = name.consume_front("-");
    name = name.trim();
    auto it = category.find(name);
    if (it == category.end()) {
      std::vector<std::string> known(order.begin(), order.end());
      llvm::sort(known);
      error = ("amp-auto-cast: option '" + option + "' names '" + name +
               "', which is not a graph op on the AMP lists (" +
               (name == "cast" || name == "constant"
                    ? std::string("a model's own casts and constants keep "
                                  "their types")
                    : "known: " + llvm::join(known, ", ")) +
               ")")
                  .str();
      return failure();
    }
    if (!remove) {
      // Options are applied one after the other, so the last would win
      // without a word.
      auto [named, first] = namedBy.try_emplace(name, option.str());
      if (!first && named->second != option) {
        error = ("amp-auto-cast: '" + name + "' is named by option '" +
                 named->second + "' and by option '" + option +
                 "'; an op can be on one AMP list only")
                    .str();
        return failure();
      }
      it->second = to;
      continue;
    }
    if (it->second != to) {
      error = ("amp-auto-cast: option '" + option + "' removes '" + name +
               "', which is on the " + categoryName(it->second) +
               " list, not the " + categoryName(to) + " list")
                  .str();
      return failure();
    }
    it->second = AmpCategory::Unlisted;
  }
  return success();
}

std::optional<AmpCategory> AmpLists::lookup(StringRef opName) const {
  auto it = category.find(opName);
  if (it == category.end())
    return std::nullopt;
  return it->second;
}

void AmpLists::print(raw_ostream &os) const {
  for (AmpCategory c :
       {AmpCategory::Allow, AmpCategory::Infer, AmpCategory::Clear,
        AmpCategory::Deny, AmpCategory::Unlisted}) {
    std::vector<StringRef> ops;
    for (const std::string &op : order)
      if (category.lookup(op) == c)
        ops.push_back(op);
    if (ops.empty() && c == AmpCategory::Unlisted)
      continue;
    os << categoryName(c) << ": " << llvm::join(ops, ", ") << "\n";
  }
}

} // namespace ampc
