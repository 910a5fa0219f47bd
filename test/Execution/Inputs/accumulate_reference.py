"""Gradient accumulation in amp-run (--accumulate) against PyTorch.

usage: accumulate_reference.py AMP_RUN WORK_DIR

Writes WORK_DIR/model.onnx: x [8, 6] -> Gemm(W1 [5, 6] transB, b1) -> Relu
-> Gemm(W2 [3, 5] transB, b2) -> mean squared error against t [8, 3] as the
output 'loss', every initializer trained; and WORK_DIR/data with 4
micro-batches (x.npy [32, 6], t.npy [32, 3]).

amp-run trains 4 steps with --accumulate 2, i.e. 2 updates, each from the
mean of two micro-batch gradients; PyTorch 1.13 does the same with
torch.optim.SGD (plain and with momentum): backward of loss / 2 on each
micro-batch, then one step. Checked per optimizer:
  - every step's loss (the loss before that step's update, so steps 0 and 1
    at the initial weights, 2 and 3 after the first update) and every final
    weight (--save-onnx, relative L2) within 1e-5;
  - --accumulate 1 (4 updates) is PyTorch without accumulation, and its
    weights differ from the accumulated ones by far more than the
    tolerance, so a run that ignored --accumulate fails;
  - --amp O1 (f16 with dynamic loss scaling by default) with --accumulate 2
    follows the f32 accumulated run: losses within 1e-2 relative, weights
    within 1e-2 relative L2, no skipped step and the scale at 65536.
Prints one PASS/FAIL line per check and the loss sequences; exits 1 on any
failure.
"""
import csv
import os
import subprocess
import sys

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

amp_run, work = sys.argv[1:3]
torch.set_num_threads(1)
BATCH, MICRO, ACC = 8, 4, 2
os.makedirs(os.path.join(work, "data"), exist_ok=True)

rng = np.random.default_rng(7)
init = {
    "W1": (rng.standard_normal((5, 6)) * 0.5).astype(np.float32),
    "b1": (rng.standard_normal(5) * 0.1).astype(np.float32),
    "W2": (rng.standard_normal((3, 5)) * 0.5).astype(np.float32),
    "b2": (rng.standard_normal(3) * 0.1).astype(np.float32),
}
x = rng.standard_normal((BATCH * MICRO, 6)).astype(np.float32)
t = rng.standard_normal((BATCH * MICRO, 3)).astype(np.float32)
np.save(os.path.join(work, "data", "x.npy"), x)
np.save(os.path.join(work, "data", "t.npy"), t)

nodes = [
    helper.make_node("Gemm", ["x", "W1", "b1"], ["h"], name="fc1", transB=1),
    helper.make_node("Relu", ["h"], ["r"], name="relu"),
    helper.make_node("Gemm", ["r", "W2", "b2"], ["y"], name="fc2", transB=1),
    helper.make_node("Sub", ["y", "t"], ["d"], name="diff"),
    helper.make_node("Mul", ["d", "d"], ["sq"], name="square"),
    helper.make_node("ReduceMean", ["sq"], ["loss"], name="mean", keepdims=0),
]
graph = helper.make_graph(
    nodes, "accumulate_mlp",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [BATCH, 6]),
     helper.make_tensor_value_info("t", TensorProto.FLOAT, [BATCH, 3])],
    [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
    initializer=[numpy_helper.from_array(v, k) for k, v in init.items()])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)
model_path = os.path.join(work, "model.onnx")
onnx.save(model, model_path)


def torch_run(momentum, accumulate, steps):
    """Per-step losses and final weights of PyTorch with `accumulate`
    micro-batches per update."""
    params = {k: torch.tensor(v, requires_grad=True) for k, v in init.items()}
    opt = torch.optim.SGD(params.values(), lr=0.1, momentum=momentum)
    losses = []
    for s in range(steps):
        xs = torch.from_numpy(x[(s % MICRO) * BATCH:(s % MICRO + 1) * BATCH])
        ts = torch.from_numpy(t[(s % MICRO) * BATCH:(s % MICRO + 1) * BATCH])
        h = torch.relu(torch.nn.functional.linear(xs, params["W1"],
                                                  params["b1"]))
        y = torch.nn.functional.linear(h, params["W2"], params["b2"])
        loss = ((y - ts) ** 2).mean()
        losses.append(loss.item())
        (loss / accumulate).backward()
        if (s + 1) % accumulate == 0:
            opt.step()
            opt.zero_grad()
    return losses, {k: v.detach().numpy() for k, v in params.items()}


def amp_run_train(name, flags):
    """Runs amp-run; returns the metrics rows and the trained weights."""
    metrics = os.path.join(work, name + ".csv")
    trained = os.path.join(work, name + ".onnx")
    cmd = [amp_run, model_path, "--mode", "train", "--data",
           os.path.join(work, "data"), "--steps", str(MICRO), "--lr", "0.1",
           "--metrics", metrics, "--save-onnx", trained] + flags
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit("FAIL %s: amp-run exited %d: %s"
                 % (name, run.returncode, run.stderr))
    rows = list(csv.DictReader(open(metrics)))
    weights = {i.name: numpy_helper.to_array(i)
               for i in onnx.load(trained).graph.initializer}
    return rows, weights


def rel_loss(got, want):
    if len(got) != len(want):
        return float("inf")
    return max(abs(a - b) / abs(b) for a, b in zip(got, want))


def rel_weights(got, want):
    return max(np.linalg.norm(got[k] - want[k]) / np.linalg.norm(want[k])
               for k in want)


failed = False


def check(ok, what):
    global failed
    failed |= not ok
    print("%s %s" % ("PASS" if ok else "FAIL", what))


def check_close(what, vs, got, want, tol, l2):
    """Checks got's (losses, weights) against want's within tol; `vs` and
    `l2` word the two PASS/FAIL lines."""
    err = rel_loss(got[0], want[0])
    check(err <= tol, "%s losses%s: max relative difference %.3g"
          % (what, vs, err))
    err = rel_weights(got[1], want[1])
    check(err <= tol, "%s weights%s: %s %.3g" % (what, vs, l2, err))


optimizers = {"sgd": (0.0, ["--optimizer", "sgd"]),
              "momentum": (0.9, ["--optimizer", "momentum", "--momentum",
                                 "0.9"])}
for opt, (m, flags) in optimizers.items():
    want_loss, want_w = torch_run(m, ACC, MICRO)
    rows, got_w = amp_run_train(opt, flags + ["--accumulate", str(ACC)])
    got_loss = [float(r["loss"]) for r in rows]
    print("%s accumulate 2: amp-run losses %s, torch %s"
          % (opt, " ".join("%.6f" % v for v in got_loss),
             " ".join("%.6f" % v for v in want_loss)))
    check_close("%s accumulate 2" % opt, "", (got_loss, got_w),
                (want_loss, want_w), 1e-5, "max relative L2")

    # Without accumulation every step updates: PyTorch's plain loop, and
    # far from the accumulated weights.
    plain_loss, plain_w = torch_run(m, 1, MICRO)
    rows1, got1_w = amp_run_train(opt + "-1", flags + ["--accumulate", "1"])
    got1_loss = [float(r["loss"]) for r in rows1]
    check(rel_loss(got1_loss, plain_loss) <= 1e-5 and
          rel_weights(got1_w, plain_w) <= 1e-5,
          "%s accumulate 1 is PyTorch without accumulation" % opt)
    apart = rel_weights(got1_w, want_w)
    check(apart > 1e-2, "%s accumulate 1 differs from accumulate 2: "
          "relative L2 %.3g" % (opt, apart))

    # f16 with dynamic loss scaling: one check per update.
    rowsh, goth_w = amp_run_train(opt + "-o1", flags + [
        "--accumulate", str(ACC), "--amp", "O1"])
    goth_loss = [float(r["loss"]) for r in rowsh]
    print("%s O1 accumulate 2: losses %s, loss_scale %s, skipped %s"
          % (opt, " ".join("%.6f" % v for v in goth_loss),
             " ".join(r["loss_scale"] for r in rowsh),
             " ".join(r["skipped"] for r in rowsh)))
    check_close("%s O1 accumulate 2" % opt, " vs f32", (goth_loss, goth_w),
                (got_loss, got_w), 1e-2, "relative L2")
    check(all(int(r["skipped"]) == 0 for r in rowsh) and
          all(float(r["loss_scale"]) == 65536 for r in rowsh),
          "%s O1 accumulate 2: no skipped step, scale 65536" % opt)
sys.exit(1 if failed else 0)
