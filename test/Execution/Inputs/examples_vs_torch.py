"""Checks each example model against the PyTorch network it stands for.

usage: examples_vs_torch.py AMP_RUN EXAMPLES_DIR WORK_DIR

For examples/mlp.onnx and examples/lenet5.onnx: ONNX's full checker passes;
the recipe metadata (ampc.train.*) is there; and amp-run --mode infer on one
batch (image drawn from a fixed seed, labels 0-9) gives the loss and logits
that examples/train_torch.py's torch network computes in f64 from the same
initializers, within 1e-5 relative (logits: to the largest magnitude). One
line per check with PASS or FAIL; exits 1 on any failure.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F

amp_run, examples, work = sys.argv[1:4]
sys.path.insert(0, examples)
import train_torch  # noqa: E402  (the network definitions live there)

RTOL = 1e-5
RECIPE = {"optimizer", "momentum", "lr", "lr-schedule", "epochs"}
ok = True


def report(name, good, detail):
    global ok
    print("%s: %s %s" % (name, "PASS" if good else "FAIL", detail))
    ok &= good


for name in ("mlp", "lenet5"):
    path = os.path.join(examples, name + ".onnx")
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    report(name + " checker", True, "")
    keys = {p.key for p in model.metadata_props}
    report(name + " recipe", keys == {"ampc.train." + k for k in RECIPE},
           " ".join(sorted(keys)))

    batch = train_torch.batch_size(model)
    rng = np.random.RandomState(7)
    image = rng.standard_normal((batch, 1, 28, 28)).astype(np.float32)
    label = rng.randint(0, 10, size=batch).astype(np.int64)
    out = os.path.join(work, name)
    os.makedirs(out, exist_ok=True)
    np.save(os.path.join(out, "image.npy"), image)
    np.save(os.path.join(out, "label.npy"), label)
    subprocess.run([
        amp_run, path, "--mode", "infer", "--input",
        "image=" + os.path.join(out, "image.npy"), "--input",
        "label=" + os.path.join(out, "label.npy"), "--save-outputs", out
    ], check=True)

    net = train_torch.load_network(name, model).double()
    with torch.no_grad():
        logits = net(torch.from_numpy(image).double())
        loss = F.cross_entropy(logits, torch.from_numpy(label))
    ref = {"loss": loss.numpy(), "logits": logits.numpy()}
    for out_name, want in ref.items():
        got = np.load(os.path.join(out, out_name + ".npy"))
        if got.shape != want.shape or got.dtype != np.float32:
            report("%s %s" % (name, out_name), False,
                   "%s %s, expected %s float32" %
                   (got.shape, got.dtype, want.shape))
            continue
        err = float(np.abs(got - want).max() / np.abs(want).max())
        report("%s %s" % (name, out_name), err <= RTOL, "rel_err=%.2g" % err)

sys.exit(0 if ok else 1)
