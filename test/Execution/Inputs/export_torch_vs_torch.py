"""Exports tools/export_torch.py's CausalBlock (a 0/-inf causal mask buffer
and a batch norm) with its loss, trains it with amp-run and with PyTorch on
the same batches, and compares every step's loss.

usage: export_torch_vs_torch.py AMP_RUN TOOLS_DIR WORK_DIR

PyTorch trains the module as it was before the export (SGD, lr 0.05, in
training mode). The mask must stay a buffer: as a weight its zeros would be
trained, and ampc refuses to train a weight that starts -inf. Prints one PASS or
FAIL line per step and the ampc.frozen names; exits 1 on a failure.
"""
import copy
import csv
import os
import subprocess
import sys

import numpy as np
import torch

amp_run, tools, work = sys.argv[1:4]
sys.path.insert(0, tools)
import export_torch  # noqa: E402

STEPS, BATCH, LR = 3, 4, 0.05
torch.manual_seed(0)
module = export_torch.CausalBlock()
reference = copy.deepcopy(module)
x = torch.randn(STEPS * BATCH, 6, 8)
labels = torch.randint(0, 4, (STEPS * BATCH,))
os.makedirs(os.path.join(work, "data"), exist_ok=True)
path = os.path.join(work, "block.onnx")
frozen = export_torch.export(module, torch.nn.functional.cross_entropy,
                             (x[:BATCH], labels[:BATCH]), path)
print("ampc.frozen:", ",".join(frozen))
np.save(os.path.join(work, "data", "x.npy"), x.numpy())
np.save(os.path.join(work, "data", "labels.npy"), labels.numpy())
metrics = os.path.join(work, "steps.csv")
subprocess.run([amp_run, path, "--data", os.path.join(work, "data"),
                "--steps", str(STEPS), "--lr", str(LR), "--progress", "none",
                "--metrics", metrics], check=True, stdout=subprocess.DEVNULL)
with open(metrics) as f:
    ours = [float(r["loss"]) for r in csv.DictReader(f)]

opt = torch.optim.SGD(reference.parameters(), lr=LR)
reference.train()
theirs = []
for s in range(STEPS):
    xb, yb = x[s * BATCH:(s + 1) * BATCH], labels[s * BATCH:(s + 1) * BATCH]
    loss = torch.nn.functional.cross_entropy(reference(xb), yb)
    theirs.append(loss.item())
    opt.zero_grad()
    loss.backward()
    opt.step()

failed = False
for s, (a, b) in enumerate(zip(ours, theirs)):
    rel = abs(a - b) / abs(b)
    ok = np.isfinite(a) and rel <= 1e-5
    failed |= not ok
    print("%s step %d: amp-run %.7g, torch %.7g, rel %.1e"
          % ("PASS" if ok else "FAIL", s, a, b, rel))
if len(ours) != STEPS:
    print("FAIL: amp-run wrote %d steps" % len(ours))
    failed = True
sys.exit(1 if failed else 0)
