"""Synchronised batch norm (issue 25): N ranks of batch B with
--sync-batch-norm compute what one process of batch N*B computes on the
same samples, as PyTorch's SyncBatchNorm does.

usage: sync_batch_norm.py AMP_RUN WORK_DIR

A small conv + batch norm network (PyTorch, exported with its loss) at
batches 4, 8 and 16. Rank r of N reads batches r, r+N, ... of 4 samples, so
step s of the ranks takes samples [s*4N, (s+1)*4N), which is batch s of the
one process at batch 4N; the ranks' reported loss (the mean of their means)
is that batch's mean. Checked: per-step losses (f32) within 1e-5, and the
running statistics the runs save; and that without --sync-batch-norm the
losses part (each rank normalises with its own 4 samples). Prints one line
per check; a failed check prints FAIL and exits 1.
"""
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import numpy_helper

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                     "..", "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tools"))
import export_torch  # noqa: E402

amp_run, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
           OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_btl="self,vader")
BATCH, SAMPLES = 4, 64

torch.manual_seed(0)
module = torch.nn.Sequential(
    torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.BatchNorm2d(4),
    torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(4 * 6 * 6, 10))
models = {}
for n in (1, 2, 4):
    path = os.path.join(work, f"batch{BATCH * n}.onnx")
    export_torch.export(module, F.cross_entropy,
                        (torch.randn(BATCH * n, 1, 6, 6),
                         torch.randint(0, 10, (BATCH * n,))), path)
    models[n] = path
# Tracing in training mode runs the module once, so each export starts
# from running statistics moved by its own example batch: all start from
# the module's.
for path in models.values():
    model = onnx.load(path)
    for t in model.graph.initializer:
        if "running" in t.name:
            buffer = dict(module.named_buffers())[t.name]
            t.CopyFrom(numpy_helper.from_array(buffer.numpy(), t.name))
    onnx.save(model, path)

data = os.path.join(work, "data")
os.makedirs(data)
rng = np.random.default_rng(3)
x = rng.standard_normal((SAMPLES, 1, 6, 6)).astype(np.float32)
# Every fourth sample shifted: batches of 4 differ in their statistics.
x[::4] = x[::4] * 3 + 2
np.save(os.path.join(data, "x.npy"), x)
np.save(os.path.join(data, "labels.npy"),
        rng.integers(0, 10, SAMPLES).astype(np.int64))

failed = False


def check(ok, what):
    global failed
    print(("ok: " if ok else "FAIL: ") + what)
    failed |= not ok


def run(model, tag, steps, *extra):
    metrics = os.path.join(work, f"{tag}.csv")
    saved = os.path.join(work, f"{tag}.onnx")
    p = subprocess.run([amp_run, model, "--data", data, "--steps", str(steps),
                        "--progress", "none", "--optimizer", "sgd", "--lr",
                        "0.05", "--lr-schedule", "constant", "--metrics",
                        metrics, "--save-onnx", saved, *extra],
                       capture_output=True, text=True, env=env, timeout=600)
    if p.returncode != 0:
        print(f"FAIL: amp-run {tag} exited {p.returncode}:\n{p.stdout}"
              f"{p.stderr}")
        sys.exit(1)
    with open(metrics) as f:
        header = f.readline().strip().split(",")
        losses = [float(line.split(",")[header.index("loss")])
                  for line in f if line.strip()]
    stats = {t.name: numpy_helper.to_array(t)
             for t in onnx.load(saved).graph.initializer
             if "running" in t.name}
    return losses, stats


def worst(a, b):
    return max(abs(x - y) / max(abs(y), 1e-30) for x, y in zip(a, b))


for ranks, steps in ((2, 6), (4, 3)):
    single, single_stats = run(models[ranks], f"single{ranks}", steps)
    synced, synced_stats = run(models[1], f"synced{ranks}", steps, "--nproc",
                               str(ranks), "--sync-batch-norm")
    own, _ = run(models[1], f"own{ranks}", steps, "--nproc", str(ranks))
    check(len(synced) == steps and len(single) == steps,
          f"{ranks} ranks: {len(synced)} steps")
    w = worst(synced, single)
    check(w <= 1e-5, f"{ranks} ranks of batch {BATCH} with --sync-batch-norm: "
          f"losses within 1e-5 of one process at batch {BATCH * ranks} "
          f"(worst {w:.1e})")
    names = sorted(single_stats)
    check(names and names == sorted(synced_stats) and all(
        np.allclose(synced_stats[k], single_stats[k], rtol=1e-5, atol=1e-6)
        for k in names),
        f"{ranks} ranks: the saved running statistics ({', '.join(names)}) "
        f"are the one process's")
    w = worst(own, single)
    check(w > 1e-3, f"{ranks} ranks without --sync-batch-norm: the losses "
          f"part from it (worst {w:.1e}): each rank normalises with its own "
          "batch")
sys.exit(1 if failed else 0)
