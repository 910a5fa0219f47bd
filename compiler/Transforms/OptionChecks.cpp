//===- OptionChecks.cpp - the ranges of the training passes' options ------===//
//
// The checks, and the two ways of saying a refusal (OptionChecks.h). A
// value is shown as the shortest text that reads back as it, so that a
// refusal never shows a number that would pass (1.0000001 is no "1").
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/OptionChecks.h"

#include "dialects/Graph/GraphEnums.h"

#include "mlir/IR/Diagnostics.h"

#include <charconv>
#include <cmath>
#include <limits>

using namespace mlir;

namespace ampc {
namespace {

/// A number as the messages show it: -1, 0.5, 1.0000001, 1e+39, inf, nan.
std::string shown(double v) {
  char text[32];
  auto [end, ec] = std::to_chars(text, text + sizeof(text), v);
  return ec == std::errc() ? std::string(text, end) : std::string("?");
}

/// "a", "a and b", "a, b and c", each name as `spell` writes it.
std::string joined(ArrayRef<StringRef> names,
                   llvm::function_ref<std::string(StringRef)> spell) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i == 0                  ? ""
            : i + 1 == names.size() ? " and "
                                    : ", ") +
           spell(names[i]);
  return out;
}

constexpr double kMaxF32 = std::numeric_limits<float>::max();

} // namespace

LogicalResult checkPassOptions(const GraphBuildTrainingPassOptions &o,
                               OptionRefusal refuse) {
  auto failWith = [&](StringRef option, const Twine &why) {
    refuse({option}, why);
    return failure();
  };
  static const char *kinds[] = {"sgd",  "momentum", "nesterov",
                                "adam", "adamw",    "adagrad"};
  if (!llvm::is_contained(kinds, o.optimizer))
    return failWith("optimizer", "must be sgd, momentum, nesterov, adam, "
                                 "adamw or adagrad, got '" +
                                     o.optimizer + "'");
  // The ranges PyTorch's optimizers check, and finite everywhere: an
  // infinite rate or factor makes every weight NaN at the first update.
  // Every option is checked, whichever optimizer and schedule read it.
  auto nonNegative = [&](StringRef option, std::optional<double> v) {
    if (!v || (std::isfinite(*v) && *v >= 0))
      return success();
    return failWith(option, "must be finite and >= 0, got " + shown(*v));
  };
  auto unit = [&](StringRef option, double v) {
    if (v >= 0 && v <= 1)
      return success();
    return failWith(option, "must be in [0, 1], got " + shown(v));
  };
  if (failed(nonNegative("lr", o.lr)) ||
      failed(nonNegative("epsilon", o.epsilon.number)) ||
      failed(nonNegative("weight-decay", o.weightDecay.number)) ||
      failed(nonNegative("lr-decay", o.lrDecay)) ||
      failed(unit("momentum", o.momentum)) ||
      failed(unit("dampening", o.dampening)))
    return failure();
  if (o.optimizer == "nesterov" && o.dampening != 0)
    return failWith("dampening", "must be 0 for nesterov momentum (as "
                                 "PyTorch), got " +
                                     shown(o.dampening));
  if (o.optimizer == "nesterov" && o.momentum == 0)
    return failWith("momentum", "must be > 0 for nesterov momentum (as "
                                "PyTorch), got 0");
  if (!(o.beta1 >= 0 && o.beta1 < 1 && o.beta2 >= 0 && o.beta2 < 1)) {
    refuse({"beta1", "beta2"}, "must be in [0, 1), got " + shown(o.beta1) +
                                   " and " + shown(o.beta2));
    return failure();
  }
  if (!graph::symbolizeLrScheduleKind(o.lrSchedule))
    return failWith("lr-schedule",
                    "must be " + graph::quotedCases<graph::LrScheduleKind>() +
                        ", got \"" + o.lrSchedule + "\"");
  if (o.lrStepSize < 1)
    return failWith("lr-step-size", "must be >= 1, got " + Twine(o.lrStepSize));
  if (o.lrTotalSteps < 1)
    return failWith("lr-total-steps",
                    "must be >= 1, got " + Twine(o.lrTotalSteps));
  // A negative factor or floor would make the rate negative: gradient
  // ascent.
  if (failed(nonNegative("lr-gamma", o.lrGamma)) ||
      failed(nonNegative("lr-min", o.lrMin)))
    return failure();
  if (o.accumulate < 1)
    return failWith("accumulate", "must be >= 1, got " + Twine(o.accumulate));
  return success();
}

LogicalResult checkPassOptions(const AmpLossScalePassOptions &o,
                               OptionRefusal refuse) {
  auto failWith = [&](ArrayRef<StringRef> options, const Twine &why) {
    refuse(options, why);
    return failure();
  };
  if (!(o.initScale > 0 && o.initScale <= kMaxF32))
    return failWith({"init-scale"},
                    "must be a positive finite f32, got " + shown(o.initScale));
  if (!(o.scaleGrowth >= 1 && o.scaleGrowth <= kMaxF32))
    return failWith({"scale-growth"},
                    "must be a finite f32 >= 1, got " + shown(o.scaleGrowth));
  if (!(o.scaleBackoff > 0 && o.scaleBackoff <= 1))
    return failWith({"scale-backoff"},
                    "must be in (0, 1], got " + shown(o.scaleBackoff));
  if (o.growthInterval < 1)
    return failWith({"growth-interval"},
                    "must be >= 1, got " + Twine(o.growthInterval));
  if (o.decrEveryN < 1)
    return failWith({"decr-every-n"},
                    "must be >= 1, got " + Twine(o.decrEveryN));
  if (!(o.minScale > 0 && o.minScale <= o.maxScale && o.maxScale <= kMaxF32))
    return failWith({"min-scale", "max-scale"},
                    "need 0 < min-scale <= max-scale <= the largest f32, got " +
                        shown(o.minScale) + " and " + shown(o.maxScale));
  if (o.mode == LossScaleMode::Dynamic &&
      !(o.initScale >= o.minScale && o.initScale <= o.maxScale))
    return failWith({"init-scale"},
                    "must be within [min-scale, max-scale], got " +
                        shown(o.initScale));
  return success();
}

LogicalResult checkPassOptions(const GraphDataParallelPassOptions &o,
                               OptionRefusal refuse) {
  if (o.worldSize < 1) {
    refuse({"world-size"}, "must be >= 1, got " + Twine(o.worldSize));
    return failure();
  }
  // At most 2^20 MiB (1 TiB): the byte count stays an int64.
  if (!(o.bucketMb > 0 && o.bucketMb <= 1048576.0)) {
    refuse({"bucket-mb"}, "must be in (0, 1048576], got " + shown(o.bucketMb));
    return failure();
  }
  return success();
}

void emitOptionError(Location loc, StringRef pass, ArrayRef<StringRef> options,
                     const Twine &why) {
  emitError(loc) << pass << ": option" << (options.size() > 1 ? "s " : " ")
                 << joined(options,
                           [](StringRef n) { return ("'" + n + "'").str(); })
                 << " " << why;
}

std::string flagRefusal(ArrayRef<StringRef> options, const Twine &why) {
  return joined(options, [](StringRef n) { return ("--" + n).str(); }) + " " +
         why.str();
}

} // namespace ampc
