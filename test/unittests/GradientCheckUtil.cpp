//===- GradientCheckUtil.cpp - finite-difference checks of backward rules -===//
//
// The compile-and-run half of the gradient checks: MLIR text -> passes ->
// Program -> Session, the training step and the finite differences.
//
//===----------------------------------------------------------------------===//

#include "GradientCheckUtil.h"
#include "TestDevice.h"

#include "compiler/Autodiff/Gradients.h"
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Target/ProgramWriter.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/Amp/AmpOps.h"
#include "dialects/Graph/GraphOps.h"
#include "dialects/Rt/RtOps.h"
#include "runtime/Program.h"
#include "runtime/Session.h"
#include "test/unittests/runtime/ElementValue.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>

namespace ampc::gradcheck {

//===----------------------------------------------------------------------===//
// Shapes and draws
//===----------------------------------------------------------------------===//

int64_t count(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string tensorType(const Shape &shape, std::string_view elem) {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  s += elem;
  return s + ">";
}

std::string str(const Shape &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

uint64_t Rng::next() {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double Rng::uniform(double lo, double hi) {
  return lo + (hi - lo) * static_cast<double>(next() >> 11) * 0x1.0p-53;
}

int64_t Rng::integer(int64_t lo, int64_t hi) {
  return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
}

std::vector<double> Rng::values(int64_t n, double lo, double hi) {
  std::vector<double> v(n);
  for (double &x : v)
    x = uniform(lo, hi);
  return v;
}

std::vector<double> Rng::avoiding(int64_t n, double lo, double hi,
                                  const std::vector<double> &kinks,
                                  double gap) {
  std::vector<double> v(n);
  for (double &x : v) {
    do
      x = uniform(lo, hi);
    while (std::any_of(kinks.begin(), kinks.end(),
                       [&](double k) { return std::fabs(x - k) < gap; }));
  }
  return v;
}

std::vector<double> Rng::distinct(int64_t n, double lo, double hi) {
  std::vector<double> v(n);
  double cell = (hi - lo) / static_cast<double>(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = lo + cell * (static_cast<double>(i) + 0.25 + 0.5 * uniform(0, 1));
  for (int64_t i = n - 1; i > 0; --i)
    std::swap(v[i], v[integer(0, i)]);
  return v;
}

std::vector<double> Rng::quantized(int64_t n, double lo, double hi,
                                   double quantum) {
  std::vector<double> v = values(n, lo, hi);
  for (double &x : v)
    x = std::round(x / quantum) * quantum;
  return v;
}

Shape Rng::shape(int minRank, int maxRank, int64_t maxDim, int64_t minDim) {
  Shape s(integer(minRank, maxRank));
  for (int64_t &d : s)
    d = integer(minDim, maxDim);
  return s;
}

Shape Rng::broadcastFrom(const Shape &to) {
  Shape s(to.begin() + integer(0, static_cast<int64_t>(to.size())), to.end());
  for (int64_t &d : s)
    if (coin())
      d = 1;
  return s;
}

//===----------------------------------------------------------------------===//
// ForwardBuilder
//===----------------------------------------------------------------------===//

std::string ForwardBuilder::fresh() { return "%v" + std::to_string(next++); }

std::string ForwardBuilder::literal(const Shape &shape,
                                    const std::vector<double> &values,
                                    rt::DType dtype) const {
  auto scalar = [&](double v) -> std::string {
    if (dtype == rt::DType::I1)
      return v != 0 ? "true" : "false";
    if (rt::isInt(dtype))
      return std::to_string(static_cast<int64_t>(v));
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17e", v); // round-trips exactly
    return buf;
  };
  std::string s = "dense<";
  size_t at = 0;
  // Nested brackets, one level per dimension.
  auto write = [&](auto &self, size_t dim) -> void {
    if (dim == shape.size()) {
      s += scalar(values[at++]);
      return;
    }
    s += "[";
    for (int64_t i = 0; i < shape[dim]; ++i) {
      if (i)
        s += ", ";
      self(self, dim + 1);
    }
    s += "]";
  };
  write(write, 0);
  return s + "> : " + tensorType(shape, rt::name(dtype));
}

std::string ForwardBuilder::param(const std::string &name, const Shape &shape,
                                  const std::vector<double> &values,
                                  bool isTrainable, rt::DType dtype) {
  std::string v = fresh();
  args.push_back(v + ": " + tensorType(shape, rt::name(dtype)) +
                 " {graph.name = \"" + name +
                 "\", graph.init = " + literal(shape, values, dtype) +
                 (isTrainable ? ", graph.trainable = true}" : "}"));
  params.push_back({name, dtype, shape, values});
  if (isTrainable && rt::isFloat(dtype))
    trainable.push_back(name);
  return v;
}

std::string ForwardBuilder::input(const std::string &name, const Shape &shape,
                                  const std::vector<double> &values,
                                  rt::DType dtype) {
  std::string v = fresh();
  args.push_back(v + ": " + tensorType(shape, rt::name(dtype)) +
                 " {graph.name = \"" + name + "\"}");
  inputs.push_back({name, dtype, shape, values});
  return v;
}

std::string ForwardBuilder::constant(const Shape &shape,
                                     const std::vector<double> &values,
                                     rt::DType dtype) {
  return op("graph.constant " + literal(shape, values, dtype));
}

std::string ForwardBuilder::op(const std::string &rhs) {
  std::string v = fresh();
  body.push_back(v + " = " + rhs);
  return v;
}

std::string ForwardBuilder::ops(const std::string &rhs, int n) {
  std::string v = fresh();
  body.push_back(v + ":" + std::to_string(n) + " = " + rhs);
  return v;
}

void ForwardBuilder::lossTerm(const std::string &value, const Shape &shape,
                              Rng &rng) {
  lossTerm(value, shape, rng.values(count(shape), -1, 1));
}

void ForwardBuilder::lossTerm(const std::string &value, const Shape &shape,
                              const std::vector<double> &r) {
  std::string t = tensorType(shape);
  std::string rc = constant(shape, r);
  std::string prod = op("graph.mul " + value + ", " + rc + " : (" + t + ", " +
                        t + ") -> " + t);
  if (shape.empty()) {
    terms.push_back(prod);
    return;
  }
  std::string axes;
  for (size_t i = 0; i < shape.size(); ++i)
    axes += (i ? ", " : "") + std::to_string(i);
  terms.push_back(op("graph.reduce_sum " + prod +
                     " {axes = array<i64: " + axes +
                     ">, keepdims = false} : (" + t + ") -> tensor<f64>"));
}

void ForwardBuilder::output(const std::string &value, const std::string &type,
                            const std::string &name) {
  outputs.push_back({value, type + " {graph.name = \"" + name + "\"}"});
}

GradCase ForwardBuilder::finish(const std::string &label) const {
  // Sum the terms here (not through op()) so finish stays const.
  std::vector<std::string> lines = body;
  int n = next;
  std::string loss = terms.empty() ? "" : terms.front();
  for (size_t i = 1; i < terms.size(); ++i) {
    std::string v = "%v" + std::to_string(n++);
    lines.push_back(v + " = graph.add " + loss + ", " + terms[i] +
                    " : (tensor<f64>, tensor<f64>) -> tensor<f64>");
    loss = v;
  }
  std::string text = "func.func @forward(";
  for (size_t i = 0; i < args.size(); ++i)
    text += (i ? ",\n    " : "") + args[i];
  text += ")\n    -> (tensor<f64> {graph.name = \"loss\"}";
  for (const auto &[v, type] : outputs)
    text += ", " + type;
  text += ") {\n";
  for (const std::string &l : lines)
    text += "  " + l + "\n";
  text += "  return " + loss;
  for (const auto &o : outputs)
    text += ", " + o.first;
  text += " : tensor<f64>";
  for (const auto &o : outputs)
    text += ", " + o.second.substr(0, o.second.find(" {"));
  text += "\n}\n";

  GradCase c;
  c.label = label;
  c.mlir = text;
  c.params = params;
  c.inputs = inputs;
  c.checked = trainable;
  return c;
}

//===----------------------------------------------------------------------===//
// Compiling and running
//===----------------------------------------------------------------------===//

namespace {

mlir::MLIRContext &context() {
  static mlir::MLIRContext *ctx = [] {
    mlir::DialectRegistry registry;
    registry.insert<mlir::func::FuncDialect, graph::GraphDialect,
                    amp::AmpDialect, rtir::RtDialect>();
    registerGradientModels(registry);
    auto *c =
        new mlir::MLIRContext(registry, mlir::MLIRContext::Threading::DISABLED);
    c->loadAllAvailableDialects();
    return c;
  }();
  return *ctx;
}

/// The case's @forward compiled as `train_step` (training) or `forward`.
bool compile(const GradCase &c, bool training, rt::FunctionInfo &out,
             std::string &error) {
  mlir::MLIRContext &ctx = context();
  mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
    error += d.str() + "\n";
    return mlir::success();
  });
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(c.mlir, &ctx);
  if (!module)
    return false;
  mlir::PassManager pm(&ctx);
  if (training) {
    GraphBuildTrainingPassOptions o;
    o.optimizer = "sgd";
    o.lr = 1.0;
    o.freeze.assign(c.freeze.begin(), c.freeze.end());
    pm.addPass(createGraphBuildTrainingPass(o));
  }
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  buildLoweringPipeline(pm, {});
  if (mlir::failed(pm.run(*module)))
    return false;
  std::string bytes;
  if (mlir::failed(writeProgram(*module, bytes)))
    return false;
  rt::ProgramInfo program;
  if (rt::Status s = rt::parseProgram(bytes, c.label, program); !s) {
    error += s.message();
    return false;
  }
  const char *name = training ? "train_step" : "forward";
  for (rt::FunctionInfo &f : program.functions)
    if (f.name == name) {
      out = std::move(f);
      return true;
    }
  error += std::string("the Program has no function '") + name + "'";
  return false;
}

// Every dtype, f16/bf16 included, through the kernel tests' reference.
double readElement(const rt::TensorView &v, int64_t i) {
  return rt::test::readElement(
      static_cast<const char *>(v.data) + i * rt::sizeOf(v.dtype), v.dtype);
}

void writeElement(rt::DType dtype, std::vector<uint8_t> &bytes, int64_t i,
                  double x) {
  rt::test::writeElement(bytes.data() + i * rt::sizeOf(dtype), dtype, x);
}

/// A tensor's bytes in its dtype.
struct Bytes {
  rt::DType dtype;
  rt::Shape shape;
  std::vector<uint8_t> data;
  explicit Bytes(const Tensor &t) : dtype(t.dtype), shape(t.shape) {
    data.resize(count(t.shape) * rt::sizeOf(t.dtype));
    for (size_t i = 0; i < t.values.size(); ++i)
      writeElement(dtype, data, static_cast<int64_t>(i), t.values[i]);
  }
  rt::TensorView view() { return {dtype, shape, data.data()}; }
};

/// Runs @forward with every parameter at its initial value but one
/// element, and returns the loss.
class LossEvaluator {
public:
  LossEvaluator(const GradCase &c, rt::FunctionInfo fn) : c(c), fn(fn) {
    for (const Tensor &t : c.params)
      params.emplace(t.name, Bytes(t));
    for (const Tensor &t : c.inputs)
      inputs.emplace(t.name, Bytes(t));
  }

  rt::Status loss(const std::string &param, int64_t index, double value,
                  double &out) {
    if (!session || c.freshSessions)
      AMPC_RETURN_IF_ERROR(rt::Session::create(fn, options(), session));
    for (auto &[name, b] : params) {
      if (name != param) {
        AMPC_RETURN_IF_ERROR(session->setParam(name, b.view()));
        continue;
      }
      Bytes moved = b;
      writeElement(moved.dtype, moved.data, index, value);
      AMPC_RETURN_IF_ERROR(session->setParam(name, moved.view()));
    }
    for (auto &[name, b] : inputs)
      AMPC_RETURN_IF_ERROR(session->setInput(name, b.view()));
    AMPC_RETURN_IF_ERROR(session->run());
    rt::TensorView l;
    AMPC_RETURN_IF_ERROR(session->output("loss", l));
    out = readElement(l, 0);
    return rt::Status::ok();
  }

  static rt::SessionOptions options() {
    return unittest::testSessionOptions();
  }

private:
  const GradCase &c;
  rt::FunctionInfo fn;
  std::map<std::string, Bytes> params, inputs;
  std::unique_ptr<rt::Session> session;
};

const Tensor *findTensor(const std::vector<Tensor> &ts,
                         const std::string &name) {
  for (const Tensor &t : ts)
    if (t.name == name)
      return &t;
  return nullptr;
}

// A void function, so that GoogleTest's fatal assertions can return.
void check(const GradCase &c, double tolerance,
           std::map<std::string, std::vector<double>> &grads) {
  SCOPED_TRACE(c.label);
  auto dumpIr = [&] { return "\n@forward:\n" + c.mlir; };
  rt::FunctionInfo trainFn, forwardFn;
  std::string error;
  if (!compile(c, /*training=*/true, trainFn, error)) {
    ADD_FAILURE() << "training compile failed: " << error << dumpIr();
    return;
  }
  if (!compile(c, /*training=*/false, forwardFn, error)) {
    ADD_FAILURE() << "inference compile failed: " << error << dumpIr();
    return;
  }

  // One SGD step with lr = 1: new = old - grad.
  std::unique_ptr<rt::Session> train;
  rt::Status s =
      rt::Session::create(std::move(trainFn), LossEvaluator::options(), train);
  ASSERT_TRUE(s.isOk()) << s.message() << dumpIr();
  std::map<std::string, std::vector<uint8_t>> before;
  for (const Tensor &t : c.params) {
    rt::TensorView v;
    s = train->param(t.name, v);
    ASSERT_TRUE(s.isOk()) << s.message() << dumpIr();
    before[t.name].assign(static_cast<uint8_t *>(v.data),
                          static_cast<uint8_t *>(v.data) + v.byteSize());
    // The Program holds exactly the values the text spelled.
    ASSERT_EQ(before[t.name], Bytes(t).data) << "initial value of " << t.name;
  }
  for (const Tensor &t : c.inputs) {
    Bytes b(t);
    s = train->setInput(t.name, b.view());
    ASSERT_TRUE(s.isOk()) << s.message() << dumpIr();
  }
  s = train->run();
  ASSERT_TRUE(s.isOk()) << "training step: " << s.message() << dumpIr();
  rt::TensorView lossView;
  s = train->output("loss", lossView);
  ASSERT_TRUE(s.isOk()) << s.message();
  double trainLoss = readElement(lossView, 0);

  LossEvaluator forward(c, std::move(forwardFn));
  double baseLoss = NAN;
  s = forward.loss("", 0, 0, baseLoss);
  ASSERT_TRUE(s.isOk()) << "forward: " << s.message() << dumpIr();
  // Both compilations compute the same loss (the step reports the loss
  // before its update).
  EXPECT_NEAR(trainLoss, baseLoss, 1e-12 * std::max(1.0, std::fabs(baseLoss)))
      << "train_step and forward disagree on the loss" << dumpIr();

  for (const std::string &name : c.unchanged) {
    rt::TensorView v;
    s = train->param(name, v);
    ASSERT_TRUE(s.isOk()) << s.message();
    std::vector<uint8_t> after(static_cast<uint8_t *>(v.data),
                               static_cast<uint8_t *>(v.data) + v.byteSize());
    EXPECT_EQ(after, before[name])
        << "parameter '" << name << "' changed in the step" << dumpIr();
  }

  bool dumped = false;
  for (const std::string &name : c.checked) {
    if (std::find(c.unchanged.begin(), c.unchanged.end(), name) !=
        c.unchanged.end())
      continue;
    const Tensor *t = findTensor(c.params, name);
    ASSERT_TRUE(t) << name;
    rt::TensorView after;
    s = train->param(name, after);
    ASSERT_TRUE(s.isOk()) << s.message();
    int64_t n = count(t->shape);
    std::vector<double> analytic(n), numeric(n);
    for (int64_t i = 0; i < n; ++i) {
      double old = t->values[i];
      analytic[i] = old - readElement(after, i);
      double h =
          c.absStep > 0 ? c.absStep : c.relStep * std::max(1.0, std::fabs(old));
      // The step actually taken, in the parameter's dtype.
      double up = old + h, down = old - h;
      if (t->dtype == rt::DType::F32) {
        up = static_cast<float>(up);
        down = static_cast<float>(down);
      }
      double lUp, lDown;
      s = forward.loss(name, i, up, lUp);
      ASSERT_TRUE(s.isOk()) << s.message();
      s = forward.loss(name, i, down, lDown);
      ASSERT_TRUE(s.isOk()) << s.message();
      numeric[i] = (lUp - lDown) / (up - down);
    }
    grads[name] = analytic;
    double scale = 0;
    for (int64_t i = 0; i < n; ++i)
      scale = std::max({scale, std::fabs(analytic[i]), std::fabs(numeric[i])});
    if (!(scale > 0)) {
      ADD_FAILURE() << "parameter '" << name
                    << "' has a zero gradient: the case checks nothing"
                    << dumpIr();
      continue;
    }
    int reported = 0;
    double worst = 0;
    for (int64_t i = 0; i < n; ++i) {
      double err = std::fabs(analytic[i] - numeric[i]) / scale;
      if (!(err <= tolerance)) {
        worst = std::isnan(err) ? err : std::max(worst, err);
        if (reported++ < 6)
          ADD_FAILURE() << "d loss / d " << name << "[" << i
                        << "]: graph-build-training " << analytic[i]
                        << ", finite differences " << numeric[i] << " (error "
                        << err << " of the largest gradient " << scale << ")";
      }
    }
    if (reported && !dumped) {
      dumped = true;
      ADD_FAILURE() << reported << " of " << n << " elements of '" << name
                    << "' differ (worst " << worst << ")" << dumpIr();
    }
  }
}

} // namespace

std::map<std::string, std::vector<double>> checkGradients(const GradCase &c,
                                                          double tolerance) {
  std::map<std::string, std::vector<double>> grads;
  check(c, tolerance, grads);
  return grads;
}

} // namespace ampc::gradcheck
