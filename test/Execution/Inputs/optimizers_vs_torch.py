"""Trains the shared mlp9 training model (9 Linear layers, MSE) with each
optimizer, in amp-run and in PyTorch from the same weights and batches, and
compares the per-step losses.

usage: optimizers_vs_torch.py AMP_RUN MODEL_DIR REFERENCE_DIR WORK_DIR

Covers what the fp32 reference curves (SGD + momentum only) do not: plain
SGD with weight decay, dampening, Nesterov, Adam, AdamW, Adagrad, and the
step and cosine schedules. Prints PASS/FAIL per optimizer; exits 1 on any
failure.
"""
import csv
import math
import os
import subprocess
import sys

import onnx
import torch
from onnx import numpy_helper

import reference_batches

amp_run, model_dir, ref_dir, work = sys.argv[1:5]
torch.set_num_threads(1)
steps = 12
model_path = os.path.join(model_dir, "model.onnx")
init = {t.name: numpy_helper.to_array(t)
        for t in onnx.load(model_path).graph.initializer}
batches = reference_batches.read(ref_dir, ["x", "target"])
xs, ts = batches["x"], batches["target"]
data = reference_batches.write_npy(os.path.join(work, "data"), batches)

# (amp-run flags, torch optimizer factory, torch scheduler factory or None)
cases = {
    "sgd-wd": (["--optimizer", "sgd", "--lr", "0.01", "--weight-decay", "0.1"],
               lambda p: torch.optim.SGD(p, lr=0.01, weight_decay=0.1), None),
    "momentum-dampening": (
        ["--optimizer", "momentum", "--lr", "0.01", "--momentum", "0.8",
         "--dampening", "0.3"],
        lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.8, dampening=0.3),
        None),
    "nesterov": (["--optimizer", "nesterov", "--lr", "0.01", "--momentum", "0.9"],
                 lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.9,
                                           nesterov=True), None),
    "adam": (["--optimizer", "adam", "--lr", "1e-3", "--weight-decay", "0.01"],
             lambda p: torch.optim.Adam(p, lr=1e-3, weight_decay=0.01), None),
    "adamw": (["--optimizer", "adamw", "--lr", "1e-3", "--weight-decay", "0.1",
               "--beta1", "0.8", "--beta2", "0.99", "--epsilon", "1e-6"],
              lambda p: torch.optim.AdamW(p, lr=1e-3, weight_decay=0.1,
                                          betas=(0.8, 0.99), eps=1e-6), None),
    "adagrad": (["--optimizer", "adagrad", "--lr", "0.01", "--lr-decay", "0.1"],
                lambda p: torch.optim.Adagrad(p, lr=0.01, lr_decay=0.1), None),
    "step-schedule": (
        ["--optimizer", "sgd", "--lr", "0.05", "--lr-schedule", "step",
         "--lr-step-size", "3", "--lr-gamma", "0.5"],
        lambda p: torch.optim.SGD(p, lr=0.05),
        lambda o: torch.optim.lr_scheduler.StepLR(o, 3, 0.5)),
    "cosine-schedule": (
        ["--optimizer", "momentum", "--lr", "0.02", "--lr-schedule", "cosine",
         "--lr-total-steps", "12", "--lr-min", "0.001"],
        lambda p: torch.optim.SGD(p, lr=0.02, momentum=0.9),
        # Up to T_max; past it PyTorch's lr rises again, ampc's stays at min.
        lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, 12, 0.001)),
}

failed = False
for name, (flags, make_opt, make_sched) in cases.items():
    params = [torch.tensor(init["model.linears.%d.%s" % (i, k)],
                           requires_grad=True)
              for i in range(9) for k in ("weight", "bias")]
    opt = make_opt(params)
    sched = make_sched(opt) if make_sched else None
    want = []
    for s in range(steps):
        h = torch.from_numpy(xs[s % len(xs)])
        for i in range(9):
            h = torch.nn.functional.linear(h, params[2 * i], params[2 * i + 1])
        loss = ((h - torch.from_numpy(ts[s % len(ts)])) ** 2).mean()
        want.append(loss.item())
        opt.zero_grad()
        loss.backward()
        opt.step()
        if sched:
            sched.step()
    metrics = os.path.join(work, name + ".csv")
    run = subprocess.run([amp_run, model_path, "--mode", "train", "--data",
                          data, "--steps", str(steps), "--metrics", metrics]
                         + flags, capture_output=True, text=True)
    if run.returncode != 0:
        print("FAIL %s: amp-run exited %d: %s" % (name, run.returncode,
                                                  run.stderr))
        failed = True
        continue
    got = [float(r["loss"]) for r in csv.DictReader(open(metrics))]
    worst = max(abs(a - b) / abs(b) for a, b in zip(got, want))
    ok = len(got) == steps and worst <= 1e-4 and all(map(math.isfinite, got))
    failed |= not ok
    print("%s %s: %d steps, max relative loss difference %.3g"
          % ("PASS" if ok else "FAIL", name, len(got), worst))
sys.exit(1 if failed else 0)
