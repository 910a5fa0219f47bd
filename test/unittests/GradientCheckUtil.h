//===- GradientCheckUtil.h - finite-difference checks of backward rules ---===//
//
// Checks the gradients graph-build-training builds for a hand-written
// @forward against central finite differences of that same @forward. Both
// go through the real compiler (passes, convert-graph-to-rt, Program
// writer) and the CPU runtime, in f64. ForwardBuilder writes the @forward
// as MLIR text; checkGradients compiles, runs and compares it.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_TEST_UNITTESTS_GRADIENTCHECKUTIL_H
#define AMPC_TEST_UNITTESTS_GRADIENTCHECKUTIL_H

#include "runtime/DType.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ampc::gradcheck {

using Shape = std::vector<int64_t>;

int64_t count(const Shape &shape);
/// "tensor<2x3xf64>", "tensor<f64>".
std::string tensorType(const Shape &shape, std::string_view elem = "f64");
/// "[2, 3]".
std::string str(const Shape &shape);

/// Deterministic draws (splitmix64) for shapes and values. It uses no std
/// distribution, whose output differs between standard libraries, so a
/// seed names the same case everywhere.
class Rng {
public:
  explicit Rng(uint64_t seed) : state(seed) {}
  uint64_t next();
  double uniform(double lo, double hi);
  int64_t integer(int64_t lo, int64_t hi); // both ends included
  bool coin() { return next() & 1; }
  std::vector<double> values(int64_t n, double lo, double hi);
  /// Values in [lo, hi] at least `gap` away from every point of `kinks`,
  /// so a finite-difference step never crosses a kink.
  std::vector<double> avoiding(int64_t n, double lo, double hi,
                               const std::vector<double> &kinks, double gap);
  /// n values in [lo, hi] whose pairwise distances are at least
  /// (hi - lo) / (2 n): a shuffled grid with jitter (unique maxima).
  std::vector<double> distinct(int64_t n, double lo, double hi);
  /// Values in [lo, hi] rounded to multiples of `quantum` (exact in f32).
  std::vector<double> quantized(int64_t n, double lo, double hi,
                                double quantum);
  /// A shape of rank in [minRank, maxRank], every dimension in
  /// [minDim, maxDim].
  Shape shape(int minRank, int maxRank, int64_t maxDim, int64_t minDim = 1);
  /// A shape that broadcasts to `to`: some leading dimensions dropped and
  /// some others set to 1.
  Shape broadcastFrom(const Shape &to);

private:
  uint64_t state;
};

/// A named argument of @forward and its values (floats or integers, stored
/// as doubles; the dtype says how they are written).
struct Tensor {
  std::string name;
  rt::DType dtype = rt::DType::F64;
  Shape shape;
  std::vector<double> values;
};

struct GradCase {
  std::string label;                  // what the case is, for failure messages
  std::string mlir;                   // the module with @forward
  std::vector<Tensor> params;         // every argument with graph.init
  std::vector<Tensor> inputs;         // every other argument
  std::vector<std::string> checked;   // compared with finite differences
  std::vector<std::string> unchanged; // must keep their bytes through a step
  std::vector<std::string> freeze;    // graph-build-training's freeze option
  // Dropout draws its mask from (seed, the session's run counter): every
  // loss evaluation then runs as the first run of a fresh session, as the
  // training step does, so all of them see the same mask.
  bool freshSessions = false;
  // Finite-difference step: relStep * max(1, |p_i|), or absStep if set.
  double relStep = 1e-6;
  double absStep = 0;
};

/// Writes @forward(args...) -> (loss, extra outputs...) line by line.
/// Values are SSA names ("%v3"); types are written by the caller.
class ForwardBuilder {
public:
  /// An argument with graph.init; `trainable` sets graph.trainable. A
  /// trainable float parameter is checked unless the case says otherwise.
  std::string param(const std::string &name, const Shape &shape,
                    const std::vector<double> &values, bool trainable = true,
                    rt::DType dtype = rt::DType::F64);
  /// An argument bound with Session::setInput before every run.
  std::string input(const std::string &name, const Shape &shape,
                    const std::vector<double> &values,
                    rt::DType dtype = rt::DType::F64);
  std::string constant(const Shape &shape, const std::vector<double> &values,
                       rt::DType dtype = rt::DType::F64);
  /// Emits `%vN = rhs` and returns "%vN".
  std::string op(const std::string &rhs);
  /// Emits `%vN:n = rhs` and returns "%vN" (results are "%vN#i").
  std::string ops(const std::string &rhs, int n);
  /// Adds reduce_sum(value * R) to the loss, R of value's shape drawn from
  /// rng in [-1, 1], so every element of the value reaches the loss with
  /// its own weight. `value` must be f64.
  void lossTerm(const std::string &value, const Shape &shape, Rng &rng);
  /// The same with a given R.
  void lossTerm(const std::string &value, const Shape &shape,
                const std::vector<double> &r);
  /// An extra output of @forward that is not part of the loss.
  void output(const std::string &value, const std::string &type,
              const std::string &name);
  /// The module text and its arguments. Trainable float parameters are
  /// listed in `checked`.
  GradCase finish(const std::string &label) const;

private:
  std::string fresh();
  std::string literal(const Shape &shape, const std::vector<double> &values,
                      rt::DType dtype) const;

  std::vector<std::string> args, body, terms;
  std::vector<std::pair<std::string, std::string>>
      outputs; // value, "type {attrs}"
  std::vector<Tensor> params, inputs;
  std::vector<std::string> trainable;
  int next = 0;
};

/// Compiles `c` twice: with graph-build-training (optimizer=sgd, lr=1, so
/// one step subtracts the gradient: grad = old - new) and as inference.
/// Runs one training step and, for every element of every checked
/// parameter, the forward at p +- h e_i, and compares. Element i passes
/// when |analytic_i - numeric_i| <= 1e-6 * max_j max(|analytic_j|,
/// |numeric_j|): the error is measured against the largest gradient of
/// the parameter (ggml test-backend-ops' normalization), since the
/// difference quotient's rounding error (~1e-16 |loss| / h) is absolute,
/// not relative to each element. Reports through GoogleTest and returns
/// the analytic gradients by parameter name (for checks of their own).
std::map<std::string, std::vector<double>>
checkGradients(const GradCase &c, double tolerance = 1e-6);

} // namespace ampc::gradcheck

#endif // AMPC_TEST_UNITTESTS_GRADIENTCHECKUTIL_H
