//===- OptimizersTest.cpp - CUDA optimizer updates against the CPU -------===//
//
// sgd_update, momentum_update, adam_update and adagrad_update in every
// float dtype, with f32 and f64 learning rates, their attribute variants,
// the first step and a later one, odd sizes (vector tails, one element,
// empty, several chunks), outputs over their inputs, the f16/bf16 working
// copy, skip = 1 leaving every output bit for bit the state it replaces,
// and groups of 1, 3 and 20 calls prepared as one launch; a loss_scale,
// with f16/bf16 gradients of f32 parameters, 16-byte aligned (vector path)
// and not (scalar path), alone and in groups mixing gradient dtypes, scales
// and alignments; lr_schedule's kinds.
//
//===----------------------------------------------------------------------===//
#include "CudaTestUtil.h"

#include <cmath>
#include <optional>

namespace ampc::rt::cuda::test {
namespace {

const DType kFloats[] = {DType::F32, DType::F16, DType::BF16, DType::F64};
// Vector tails, one element, empty, and more than one 4096-element chunk.
const Shape kShapes[] = {{37}, {3, 5, 7}, {1}, {0}, {8}, {2 * 4096 + 13}};

struct UpdateKind {
  const char *op;
  bool hasStep;
  int state; // state tensors after grad
};
const UpdateKind kSgd{"sgd_update", false, 0};
const UpdateKind kMomentum{"momentum_update", true, 1};
const UpdateKind kAdam{"adam_update", true, 2};
const UpdateKind kAdagrad{"adagrad_update", true, 1};

struct UpdateOptions {
  DType dtype = DType::F32;
  Shape shape{37};
  DType lrDtype = DType::F32;
  int64_t step = 3;
  std::optional<int> skip;          // the skip input's value
  std::optional<DType> workingCopy; // f16 or bf16
  bool inPlace = false;
  uint64_t seed = 1;
  std::optional<DType> gradDtype; // the parameter's dtype when unset
  // loss_scale's value (then skip is given too, 0 unless set); the
  // gradient holds values up to it in magnitude (within f16's range).
  std::optional<float> lossScale;
  size_t misalign = 0; // OpCase::misalign
};

// Every attribute of update `op` as the compiler writes it when graph-build-
// training leaves them at their defaults (the runtime keeps none), with
// `given` over them.
Attrs withDefaults(const std::string &op, const Attrs &given) {
  Attrs a;
  if (op == "sgd_update") {
    a.setFloat("weight_decay", 0);
  } else if (op == "momentum_update") {
    a.setFloat("alpha", 0.9);
    a.setFloat("beta", 0.9);
    a.setFloat("norm_coefficient", 0);
    a.setString("mode", "standard");
  } else if (op == "adam_update") {
    a.setFloat("alpha", 0.9);
    a.setFloat("beta", 0.999);
    a.setFloat("epsilon", 1e-8);
    a.setFloat("norm_coefficient", 0);
    a.setFloat("norm_coefficient_post", 0);
    a.setFloat("weight_decay", 0);
    a.setString("mode", "pytorch");
  } else if (op == "adagrad_update") {
    a.setFloat("decay_factor", 0);
    a.setFloat("epsilon", 1e-6);
    a.setFloat("norm_coefficient", 0);
  }
  for (const auto &[key, v] : given.all())
    switch (v.kind) {
    case AttrValue::Kind::Int:
      a.setInt(key, v.i);
      break;
    case AttrValue::Kind::Float:
      a.setFloat(key, v.f);
      break;
    case AttrValue::Kind::String:
      a.setString(key, v.s);
      break;
    case AttrValue::Kind::Ints:
      a.setInts(key, v.ints);
      break;
    }
  return a;
}

OpCase updateCase(const UpdateKind &k, const Attrs &attrs,
                  const UpdateOptions &o) {
  OpCase c;
  c.op = k.op;
  c.attrs = withDefaults(k.op, attrs);
  c.inputs.push_back(HostTensor::fromValues(o.lrDtype, {}, {0.05}));
  if (k.hasStep)
    c.inputs.push_back(
        HostTensor::fromValues(DType::I64, {}, {static_cast<double>(o.step)}));
  const size_t first = c.inputs.size();
  c.inputs.push_back(HostTensor::random(o.dtype, o.shape, o.seed * 7 + 1));
  const double big = o.lossScale ? std::min<double>(*o.lossScale, 60000) : 1.0;
  c.inputs.push_back(HostTensor::random(o.gradDtype.value_or(o.dtype), o.shape,
                                        o.seed * 7 + 2, -big, big));
  for (int s = 0; s < k.state; ++s) {
    // Momentum's velocity and Adam's m take any sign; Adam's v and
    // Adagrad's accumulator are sums of squares.
    bool squares =
        (k.state == 2 && s == 1) || std::string(k.op) == "adagrad_update";
    c.inputs.push_back(HostTensor::random(o.dtype, o.shape, o.seed * 7 + 3 + s,
                                          squares ? 0 : -1, 1));
  }
  if (o.skip || o.lossScale)
    c.inputs.push_back(HostTensor::fromValues(
        DType::I1, {}, {static_cast<double>(o.skip.value_or(0))}));
  if (o.lossScale)
    c.inputs.push_back(HostTensor::fromValues(DType::F32, {}, {*o.lossScale}));
  c.misalign = o.misalign;
  for (int out = 0; out < 1 + k.state; ++out) {
    c.outputs.push_back(HostTensor::empty(o.dtype, o.shape));
    // new_param over param, each new state over its state.
    c.inPlace.push_back(
        o.inPlace ? static_cast<int>(out == 0 ? first : first + 1 + out) : -1);
  }
  if (o.workingCopy) {
    c.outputs.push_back(HostTensor::empty(*o.workingCopy, o.shape));
    c.inPlace.push_back(-1);
  }
  return c;
}

std::string label(const UpdateKind &k, const UpdateOptions &o) {
  std::string s = std::string(k.op) + " " + std::string(name(o.dtype)) + " " +
                  str(o.shape) + " lr " + std::string(name(o.lrDtype)) +
                  " step " + std::to_string(o.step);
  if (o.skip)
    s += " skip " + std::to_string(*o.skip);
  if (o.workingCopy)
    s += " working copy " + std::string(name(*o.workingCopy));
  if (o.gradDtype)
    s += " grad " + std::string(name(*o.gradDtype));
  if (o.lossScale)
    s += " loss_scale " + std::to_string(*o.lossScale);
  if (o.misalign)
    s += " misaligned by " + std::to_string(o.misalign);
  return s + (o.inPlace ? " in place" : "");
}

// Every dtype, shape and lr dtype; skip absent and 0; in place and not.
void sweep(const UpdateKind &k, const Attrs &attrs,
           std::initializer_list<int64_t> steps) {
  for (DType t : kFloats)
    for (const Shape &shape : kShapes)
      for (int64_t step : steps)
        for (int variant = 0; variant < 3; ++variant) {
          UpdateOptions o;
          o.dtype = t;
          o.shape = shape;
          o.step = step;
          o.lrDtype = variant == 1 ? DType::F64 : DType::F32;
          if (variant == 2)
            o.skip = 0;
          o.inPlace = variant != 0;
          SCOPED_TRACE(label(k, o));
          expectCudaMatchesCpu(updateCase(k, attrs, o));
        }
}

TEST(CudaOptimizers, Sgd) {
  AMPC_SKIP_WITHOUT_GPU();
  sweep(kSgd, Attrs(), {0});
  Attrs decay;
  decay.setFloat("weight_decay", 0.01);
  sweep(kSgd, decay, {0});
}

TEST(CudaOptimizers, Momentum) {
  AMPC_SKIP_WITHOUT_GPU();
  for (const char *mode : {"standard", "nesterov"}) {
    Attrs a;
    a.setFloat("alpha", 0.9);
    a.setFloat("beta", 0.8);
    a.setString("mode", mode);
    sweep(kMomentum, a, {0, 3});
  }
  Attrs nc;
  nc.setFloat("alpha", 0.9);
  nc.setFloat("beta", 1.0);
  nc.setFloat("norm_coefficient", 0.01);
  sweep(kMomentum, nc, {2});
}

TEST(CudaOptimizers, Adam) {
  AMPC_SKIP_WITHOUT_GPU();
  Attrs torch; // graph-build-training's defaults: PyTorch's Adam
  sweep(kAdam, torch, {0, 5});
  Attrs adamw;
  adamw.setFloat("weight_decay", 0.01);
  adamw.setFloat("alpha", 0.8);
  adamw.setFloat("beta", 0.95);
  adamw.setFloat("epsilon", 1e-6);
  sweep(kAdam, adamw, {4});
  Attrs onnx;
  onnx.setString("mode", "onnx");
  onnx.setFloat("norm_coefficient", 0.001);
  onnx.setFloat("norm_coefficient_post", 0.01);
  sweep(kAdam, onnx, {0, 5});
}

TEST(CudaOptimizers, Adagrad) {
  AMPC_SKIP_WITHOUT_GPU();
  sweep(kAdagrad, Attrs(), {0, 3});
  Attrs a;
  a.setFloat("decay_factor", 0.1);
  a.setFloat("epsilon", 1e-3);
  a.setFloat("norm_coefficient", 0.01);
  sweep(kAdagrad, a, {7});
}

Attrs defaultAttrs(const UpdateKind &k) {
  Attrs a;
  if (std::string(k.op) == "momentum_update") {
    a.setFloat("alpha", 0.9);
    a.setFloat("beta", 0.9);
  }
  return a;
}

const UpdateKind kAll[] = {kSgd, kMomentum, kAdam, kAdagrad};

TEST(CudaOptimizers, WorkingCopy) {
  AMPC_SKIP_WITHOUT_GPU();
  for (const UpdateKind &k : kAll)
    for (DType wc : {DType::F16, DType::BF16})
      for (DType t : {DType::F32, DType::F64})
        for (const Shape &shape : kShapes) {
          UpdateOptions o;
          o.dtype = t;
          o.shape = shape;
          o.workingCopy = wc;
          o.inPlace = true;
          o.skip = 0;
          SCOPED_TRACE(label(k, o));
          expectCudaMatchesCpu(updateCase(k, defaultAttrs(k), o));
        }
}

// A skipped step writes every output as the state it replaces: compared
// exactly, in place (the kernel then writes only the working copy) and
// into separate buffers (it copies).
TEST(CudaOptimizers, SkipKeepsStateBitForBit) {
  AMPC_SKIP_WITHOUT_GPU();
  for (const UpdateKind &k : kAll)
    for (DType t : kFloats)
      for (const Shape &shape : kShapes)
        for (bool inPlace : {false, true}) {
          UpdateOptions o;
          o.dtype = t;
          o.shape = shape;
          o.skip = 1;
          o.inPlace = inPlace;
          if (t == DType::F32)
            o.workingCopy = DType::F16;
          SCOPED_TRACE(label(k, o));
          expectCudaMatchesCpu(updateCase(k, defaultAttrs(k), o),
                               Tolerance{0, 0});
        }
}

// Consecutive calls as one launch: sizes that put chunk boundaries and
// vector tails in different places, each call with its own lr/step/skip
// tensors (separate buffers in the harness).
void groupOf(const UpdateKind &k, int calls, DType t, bool workingCopy,
             int skip) {
  std::vector<OpCase> group;
  for (int i = 0; i < calls; ++i) {
    UpdateOptions o;
    o.dtype = t;
    o.shape = {static_cast<int64_t>(1 + (i * 977 + i * i * 131) % 5003)};
    if (i % 7 == 3)
      o.shape = {0};
    o.seed = 100 + i;
    o.inPlace = i % 2 == 0;
    o.skip = skip;
    if (workingCopy)
      o.workingCopy = DType::BF16;
    group.push_back(updateCase(k, defaultAttrs(k), o));
  }
  expectCudaGroupMatchesCpu(group, skip ? Tolerance{0, 0} : Tolerance{});
}

TEST(CudaOptimizers, Groups) {
  AMPC_SKIP_WITHOUT_GPU();
  for (const UpdateKind &k : kAll)
    for (int calls : {1, 3, 20})
      for (DType t : {DType::F32, DType::F16})
        for (int skip : {0, 1}) {
          SCOPED_TRACE(std::string(k.op) + " group of " +
                       std::to_string(calls) + " " + std::string(name(t)) +
                       " skip " + std::to_string(skip));
          groupOf(k, calls, t, t == DType::F32, skip);
        }
}

// An f32 parameter with an f16, bf16 or f32 gradient read as grad * (1.0f /
// loss_scale): a power of two, 3 and 0.75 (rounded reciprocals), every
// shape (vector tails, one element, empty, several chunks), 16-byte aligned
// and not, in place and not, with and without a working copy.
TEST(CudaOptimizers, ScaledLowPrecisionGradients) {
  AMPC_SKIP_WITHOUT_GPU();
  for (const UpdateKind &k : kAll)
    for (DType g : {DType::F16, DType::BF16, DType::F32})
      for (float scale : {1024.0f, 3.0f, 0.75f})
        for (const Shape &shape : kShapes)
          for (size_t misalign : {0, 8}) {
            UpdateOptions o;
            o.shape = shape;
            o.gradDtype = g;
            o.lossScale = scale;
            o.misalign = misalign;
            o.inPlace = misalign == 0;
            if (g != DType::F32)
              o.workingCopy = g;
            SCOPED_TRACE(label(k, o));
            expectCudaMatchesCpu(updateCase(k, defaultAttrs(k), o));
          }
}

// Without a loss_scale an f32 parameter's f16/bf16 gradient is widened
// and used as it is; a gradient of the parameter's own dtype is unscaled in
// every dtype (f64 by the f32 reciprocal, in f64).
TEST(CudaOptimizers, WidenedAndSameDTypeScaledGradients) {
  AMPC_SKIP_WITHOUT_GPU();
  for (const UpdateKind &k : kAll) {
    for (DType g : {DType::F16, DType::BF16})
      for (size_t misalign : {0, 8}) {
        UpdateOptions o;
        o.shape = {2 * 4096 + 13};
        o.gradDtype = g;
        o.misalign = misalign;
        SCOPED_TRACE(label(k, o));
        expectCudaMatchesCpu(updateCase(k, defaultAttrs(k), o));
      }
    for (DType t : kFloats)
      for (float scale : {1024.0f, 3.0f})
        for (const Shape &shape : {Shape{37}, Shape{2 * 4096 + 13}}) {
          UpdateOptions o;
          o.dtype = t;
          o.shape = shape;
          o.lossScale = scale;
          o.misalign = shape[0] == 37 ? 8 : 0;
          SCOPED_TRACE(label(k, o));
          expectCudaMatchesCpu(updateCase(k, defaultAttrs(k), o));
        }
  }
}

// A skipped step with a loss_scale (0 here: its reciprocal is inf) and an
// f16/bf16 gradient keeps every output bit for bit.
TEST(CudaOptimizers, ScaledSkipKeepsStateBitForBit) {
  AMPC_SKIP_WITHOUT_GPU();
  for (const UpdateKind &k : kAll)
    for (DType g : {DType::F16, DType::BF16})
      for (const Shape &shape : kShapes)
        for (bool inPlace : {false, true}) {
          UpdateOptions o;
          o.shape = shape;
          o.gradDtype = g;
          o.lossScale = 0;
          o.skip = 1;
          o.inPlace = inPlace;
          o.misalign = inPlace ? 0 : 8;
          o.workingCopy = DType::BF16;
          SCOPED_TRACE(label(k, o));
          expectCudaMatchesCpu(updateCase(k, defaultAttrs(k), o),
                               Tolerance{0, 0});
        }
}

// One launch over f32 parameters whose gradients are f16, bf16 and f32 in
// turn, each call with its own loss_scale and skip (one in five skipped)
// and every third call misaligned.
TEST(CudaOptimizers, GroupsMixingGradientDTypes) {
  AMPC_SKIP_WITHOUT_GPU();
  const DType grads[] = {DType::F16, DType::BF16, DType::F32};
  const float scales[] = {65536.0f, 3.0f, 1024.0f, 0.75f};
  for (const UpdateKind &k : kAll)
    for (int calls : {3, 20})
      for (bool workingCopy : {false, true}) {
        SCOPED_TRACE(std::string(k.op) + " group of " + std::to_string(calls) +
                     (workingCopy ? " with working copies" : ""));
        std::vector<OpCase> group;
        for (int i = 0; i < calls; ++i) {
          UpdateOptions o;
          o.shape = {static_cast<int64_t>(1 + (i * 977 + i * i * 131) % 5003)};
          if (i % 7 == 3)
            o.shape = {0};
          o.seed = 200 + i;
          o.inPlace = i % 2 == 0;
          o.gradDtype = grads[i % 3];
          o.lossScale = scales[i % 4];
          o.skip = i % 5 == 4 ? 1 : 0;
          o.misalign = i % 3 == 1 ? 8 : 0;
          if (workingCopy)
            o.workingCopy = DType::F16;
          group.push_back(updateCase(k, defaultAttrs(k), o));
        }
        expectCudaGroupMatchesCpu(group);
      }
}

TEST(CudaOptimizers, LrSchedule) {
  AMPC_SKIP_WITHOUT_GPU();
  struct K {
    const char *kind;
    int64_t stepSize, totalSteps;
  };
  for (K k : {K{"constant", 1, 1}, K{"step", 3, 1}, K{"cosine", 1, 10}})
    for (DType out : {DType::F32, DType::F64})
      for (int64_t step : {0, 1, 4, 9, 10, 25}) {
        SCOPED_TRACE(std::string(k.kind) + " step " + std::to_string(step) +
                     " " + std::string(name(out)));
        OpCase c;
        c.op = "lr_schedule";
        c.attrs.setFloat("base_lr", 0.1);
        c.attrs.setString("kind", k.kind);
        c.attrs.setInt("step_size", k.stepSize);
        c.attrs.setFloat("gamma", 0.5);
        c.attrs.setInt("total_steps", k.totalSteps);
        c.attrs.setFloat("min_lr", 0.001);
        c.inputs = {HostTensor::fromValues(DType::I64, {},
                                           {static_cast<double>(step)})};
        c.outputs = {HostTensor::empty(out, {})};
        expectCudaMatchesCpu(c);
      }
}

} // namespace
} // namespace ampc::rt::cuda::test
