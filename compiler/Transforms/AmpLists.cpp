//===- AmpLists.cpp - the AMP op categories -------------------------------===//
//
// Defaults follow what the peers agree on (PyTorch autocast's lower-precision
// and fp32 lists, TensorFlow's allow/infer/clear/deny, Paddle's white and
// black lists): contractions low; exp/log/pow/reciprocal, softmax, losses,
// normalizations and sums f32, since they overflow or lose the small terms
// in f16; max-like and data-movement ops are exact in either precision.
//
//===----------------------------------------------------------------------===//
#include "compiler/Transforms/AmpLists.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace ampc {

namespace {
struct Row {
  const char *op;
  AmpCategory category;
};

constexpr Row kDefaults[] = {
    // Allow: Tensor Core contractions, accumulating in f32.
    {"matmul", AmpCategory::Allow},
    {"gemm", AmpCategory::Allow},
    {"conv2d", AmpCategory::Allow},
    // Infer: arithmetic whose range is its inputs'.
    {"add", AmpCategory::Infer},
    {"sub", AmpCategory::Infer},
    {"mul", AmpCategory::Infer},
    {"div", AmpCategory::Infer},
    {"where", AmpCategory::Infer},
    {"tanh", AmpCategory::Infer},
    {"sigmoid", AmpCategory::Infer},
    {"erf", AmpCategory::Infer},
    {"gelu", AmpCategory::Infer},
    {"sqrt", AmpCategory::Infer},
    {"avg_pool2d", AmpCategory::Infer},
    {"global_avg_pool", AmpCategory::Infer},
    // Clear: exact in any precision.
    {"relu", AmpCategory::Clear},
    {"leaky_relu", AmpCategory::Clear},
    {"abs", AmpCategory::Clear},
    {"neg", AmpCategory::Clear},
    {"clip", AmpCategory::Clear},
    {"max_pool2d", AmpCategory::Clear},
    {"reduce_max", AmpCategory::Clear},
    {"reshape", AmpCategory::Clear},
    {"broadcast_to", AmpCategory::Clear},
    {"transpose", AmpCategory::Clear},
    {"concat", AmpCategory::Clear},
    {"slice", AmpCategory::Clear},
    {"gather", AmpCategory::Clear},
    {"dropout", AmpCategory::Clear},
    // Deny: overflow, cancellation or long sums.
    {"exp", AmpCategory::Deny},
    {"log", AmpCategory::Deny},
    {"pow", AmpCategory::Deny},
    {"reciprocal", AmpCategory::Deny},
    {"softmax", AmpCategory::Deny},
    {"log_softmax", AmpCategory::Deny},
    {"softmax_cross_entropy", AmpCategory::Deny},
    {"nll_loss", AmpCategory::Deny},
    {"batch_norm_inference", AmpCategory::Deny},
    {"batch_norm_training", AmpCategory::Deny},
    {"layer_norm", AmpCategory::Deny},
    {"reduce_sum", AmpCategory::Deny},
    {"reduce_mean", AmpCategory::Deny},
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
    lists.category[r.op] = r.category;
    lists.order.push_back(r.op);
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
