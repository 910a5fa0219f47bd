"""Exports a PyTorch model in inference form to OUT/model.onnx with one
test_data_set (the input and PyTorch's own output, f32) for
run_and_compare.py: what make_hard_activation_model.py and
make_mlp_block_model.py share.
"""
import os

import numpy as np
import onnx
import torch
from onnx import numpy_helper


def export_with_test_data(model, x, out, opset):
    """Writes the model and test_data_set_0; returns the exported graph's op
    types in node order."""
    os.makedirs(os.path.join(out, "test_data_set_0"), exist_ok=True)
    with torch.no_grad():
        y = model(x)
    path = os.path.join(out, "model.onnx")
    torch.onnx.export(model, (x,), path, input_names=["x"],
                      output_names=["y"], opset_version=opset)
    for name, t in (("input_0.pb", x), ("output_0.pb", y)):
        with open(os.path.join(out, "test_data_set_0", name), "wb") as f:
            f.write(numpy_helper.from_array(
                t.numpy().astype(np.float32)).SerializeToString())
    return [n.op_type for n in onnx.load(path).graph.node]


def train_and_compare(amp_run, model_path, module, x, labels, steps, batch,
                      lr, work, extra=(), tol=1e-5):
    """Trains `model_path` with amp-run (SGD, lr, `steps` batches of `batch`
    from x and labels, written to WORK/data as .npy, in order) and `module`
    with PyTorch's SGD on the same batches (cross entropy, training mode);
    prints one PASS or FAIL line per step (relative loss difference within
    `tol`) and returns whether all passed."""
    import csv
    import subprocess

    import torch.nn.functional as F
    data = os.path.join(work, "data")
    os.makedirs(data, exist_ok=True)
    np.save(os.path.join(data, "x.npy"), x.numpy())
    np.save(os.path.join(data, "labels.npy"), labels.numpy())
    metrics = os.path.join(work, "steps.csv")
    subprocess.run([amp_run, model_path, "--data", data, "--steps", str(steps),
                    "--lr", str(lr), "--progress", "none", "--metrics",
                    metrics] + list(extra), check=True,
                   stdout=subprocess.DEVNULL)
    with open(metrics) as f:
        ours = [float(r["loss"]) for r in csv.DictReader(f)]
    opt = torch.optim.SGD(module.parameters(), lr=lr)
    module.train()
    theirs = []
    for s in range(steps):
        xb, yb = x[s * batch:(s + 1) * batch], labels[s * batch:(s + 1) * batch]
        loss = F.cross_entropy(module(xb), yb)
        theirs.append(loss.item())
        opt.zero_grad()
        loss.backward()
        opt.step()
    ok_all = len(ours) == steps
    if not ok_all:
        print("FAIL: amp-run wrote %d steps" % len(ours))
    for s, (a, b) in enumerate(zip(ours, theirs)):
        rel = abs(a - b) / abs(b)
        ok = bool(np.isfinite(a)) and rel <= tol
        ok_all &= ok
        print("%s step %d: amp-run %.7g, torch %.7g, rel %.1e"
              % ("PASS" if ok else "FAIL", s, a, b, rel))
    return ok_all
