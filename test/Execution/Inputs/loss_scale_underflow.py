"""Underflow: a model whose f16 gradients are all below f16's range, so
that without loss scaling the update is a no-op and with it training
matches f32.

usage: loss_scale_underflow.py AMP_RUN WORK_DIR [--steps N]

WORK_DIR/model.onnx: x [64, 32] -> Gemm(w1 [32, 32]) -> Relu ->
Gemm(w2 [32, 8]) -> y; loss = 1e-6 * mean((y - target)^2), the 1e-6 a
Constant node (not an initializer, which would be trained). Data: 4
batches of x ~ N(0, 1), target = tanh(x @ A) (numpy seed 0), as .npy.

At O1 the gemms run in f16 and the loss in f32. The gradient reaching the
gemms, dloss/dy = 1e-6 * 2 (y - target) / (64 * 8), is computed in f32 and
cast to f16 for the backward gemms. Every |dloss/dy| here is below 2^-25,
half of f16's smallest subnormal 2^-24 (checked below on the data with the
initial weights, and printed), so the cast rounds every element to zero:
both weight gradients are exactly zero. With the default dynamic scale
2^16 the same values are ~1e-4..1e-3, well inside f16's range.

SGD with lr 5e4, so that lr * 1e-6 moves the weights visibly in f32.
Runs and checks (N steps each, --checksum-state):
  O0 (f32):              loss decreases; the weights moved.
  O1 --loss-scale none:  the weights written back (--save-onnx) are
                         bit-identical to the initial ones; the state
                         checksum of step s is that of the initial weights
                         with the step counter at s + 1 (only the counter
                         moves: there is no found_inf to skip on); the loss
                         repeats with the batches.
  O1 (dynamic default):  no step skipped, scale 2^16 throughout; the loss
                         of every step within 1e-3 relative of the f32
                         run's, and the final weights within 2e-3 relative
                         L2 of the f32 run's (and they moved).
Prints the scale sequence and checksums, one PASS/FAIL line per check;
exits 1 on any failure.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from loss_scale_util import (Checks, arg_parser, checksum, initializers,
                             metrics, pow2, run, same_bits, state_params,
                             summary, summary_line)

p = arg_parser()
p.add_argument("--steps", type=int, default=20)
args = p.parse_args()
N = args.steps
work = args.work_dir
data = os.path.join(work, "data")
os.makedirs(data, exist_ok=True)

B, D, H, O, BATCHES, TINY = 64, 32, 32, 8, 4, 1e-6
rng = np.random.default_rng(0)
w1 = (rng.standard_normal((D, H)) / np.sqrt(D)).astype(np.float32)
w2 = (rng.standard_normal((H, O)) / np.sqrt(H)).astype(np.float32)
x = rng.standard_normal((B * BATCHES, D)).astype(np.float32)
teacher = (rng.standard_normal((D, O)) / np.sqrt(D)).astype(np.float32)
target = np.tanh(x @ teacher).astype(np.float32)
np.save(os.path.join(data, "x.npy"), x)
np.save(os.path.join(data, "target.npy"), target)

tiny = helper.make_tensor("tiny", TensorProto.FLOAT, [], [TINY])
nodes = [
    helper.make_node("Gemm", ["x", "w1"], ["h"], name="fc1"),
    helper.make_node("Relu", ["h"], ["r"], name="relu"),
    helper.make_node("Gemm", ["r", "w2"], ["y"], name="fc2"),
    helper.make_node("Sub", ["y", "target"], ["diff"], name="sub"),
    helper.make_node("Mul", ["diff", "diff"], ["sq"], name="square"),
    helper.make_node("ReduceMean", ["sq"], ["mse"], name="mean", keepdims=0),
    helper.make_node("Constant", [], ["c"], name="tiny", value=tiny),
    helper.make_node("Mul", ["mse", "c"], ["loss"], name="times_tiny"),
]
graph = helper.make_graph(
    nodes, "underflow",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [B, D]),
     helper.make_tensor_value_info("target", TensorProto.FLOAT, [B, O])],
    [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
    initializer=[numpy_helper.from_array(w1, "w1"),
                 numpy_helper.from_array(w2, "w2")])
m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(m)
model = os.path.join(work, "model.onnx")
onnx.save(m, model)

check = Checks()

# Why the unscaled update is a no-op: dloss/dy in f16.
y = np.maximum(x @ w1, 0) @ w2
dy = TINY * 2 * (y - target) / (B * O)
flush = 2.0 ** -25
check(np.abs(dy).max() < flush and
      not np.float16(dy).any() and np.float16(dy * 65536).all(),
      "max |dloss/dy| %.3g < 2^-25 = %.3g: in f16 every element rounds to "
      "0 unscaled and none does scaled by 2^16" % (np.abs(dy).max(), flush))

train = ["--mode", "train", "--data", data, "--steps", str(N),
         "--optimizer", "sgd", "--lr", "5e4", "--checksum-state"]


def train_run(name, extra, expect=None):
    """Runs N steps; prints each step, its checksum marked when it is
    expect[step] (the initial weights with the step counter at step + 1)."""
    csv_path = os.path.join(work, name.replace(" ", "_") + ".csv")
    onnx_path = os.path.join(work, name.replace(" ", "_") + ".onnx")
    r = run([args.amp_run, model] + train + extra +
            ["--metrics", csv_path, "--save-onnx", onnx_path])
    rows = metrics(csv_path)
    print("%s:" % name)
    for row in rows:
        s = row["step"]
        tag = (" (initial weights, step counter %d)" % (s + 1)
               if expect and s < len(expect) and
               row["state_checksum"] == expect[s] else "")
        print("  step %d: loss %.7g loss_scale %s skipped %d state_checksum "
              "%d%s" % (s, row["loss"], pow2(row["loss_scale"]) or
                        repr(row["loss_scale"]), row["skipped"],
                        row["state_checksum"], tag))
    print("  " + summary_line(r.stdout))
    return rows, initializers(onnx_path), r.stdout


def rel_l2(a, b):
    a, b = a.astype(np.float64), b.astype(np.float64)
    return np.linalg.norm(a - b) / np.linalg.norm(b)


init = {"w1": w1, "w2": w2}
f32, f32_w, _ = train_run("f32", ["--amp", "O0"])
moved = {n: rel_l2(f32_w[n], init[n]) for n in init}
check(len(f32) == N and f32[-1]["loss"] < 0.8 * f32[0]["loss"] and
      min(moved.values()) > 1e-2,
      "f32: loss %.4g -> %.4g; weights moved (relative L2 w1 %.3g, w2 %.3g)"
      % (f32[0]["loss"], f32[-1]["loss"], moved["w1"], moved["w2"]))

none_args = ["--amp", "O1", "--amp-dtype", "f16", "--loss-scale", "none"]
params = state_params(args.amp_run, model, train + none_args)
want = [checksum(params, init, {"ampc.step": s + 1}) for s in range(N)]
none, none_w, _ = train_run("f16 unscaled", none_args, want)
same = [n for n in init if same_bits(none_w[n], init[n])]
check(len(none) == N and len(same) == len(init),
      "f16 unscaled: after %d steps w1 and w2 are bit-identical to the "
      "initial weights (every f16 gradient flushed to zero)" % N)
got = [row["state_checksum"] for row in none]
check(got == want,
      "f16 unscaled: state_checksum of step s = initial weights with step "
      "counter s+1 (step 0: %d, step %d: %d)" % (want[0], N - 1, want[-1]))
check(all(none[s]["loss"] == none[s % BATCHES]["loss"] for s in range(N)),
      "f16 unscaled: the loss repeats every %d steps (one value per batch)"
      % BATCHES)

dyn, dyn_w, out = train_run("f16 dynamic", ["--amp", "O1", "--amp-dtype",
                                            "f16"])
sk, final = summary(out)
check(len(dyn) == N and sk == 0 and
      all(not r["skipped"] and r["loss_scale"] == 65536 for r in dyn) and
      final == 65536,
      "f16 dynamic: no step skipped, loss scale 2^16 at every step")
worst = max(abs(a["loss"] - b["loss"]) / b["loss"] for a, b in zip(dyn, f32))
check(worst <= 1e-3,
      "f16 dynamic: loss of every step within 1e-3 relative of f32 "
      "(max %.3g)" % worst)
near = {n: rel_l2(dyn_w[n], f32_w[n]) for n in init}
moved = {n: rel_l2(dyn_w[n], init[n]) for n in init}
check(max(near.values()) <= 2e-3 and min(moved.values()) > 1e-2,
      "f16 dynamic: weights moved (relative L2 w1 %.3g, w2 %.3g) and end "
      "within 2e-3 relative L2 of f32's (w1 %.3g, w2 %.3g)"
      % (moved["w1"], moved["w2"], near["w1"], near["w2"]))
check.exit()
