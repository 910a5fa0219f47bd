"""Trains a shared training model with amp-run and compares it with the
PyTorch reference run in shared/models/reference/<model>.

usage: train_and_compare.py AMP_RUN MODEL_DIR REFERENCE_DIR WORK_DIR
       [--steps N] [--rtol R] [-- extra amp-run args]

The reference trains 20 steps from the weights in the ONNX file; step s uses
data/batch_{s % 4}/input_{0,1}.pb. Those batches are concatenated into one
.npy per graph input, which amp-run takes in order and wraps around: the
same sequence. Checked: the loss of every step (before its update) within
--rtol of the fp32 reference, and every trained weight (written back with
--save-onnx) within --rtol relative L2 of final_fp32/<name>.pb. Prints one
line per check with PASS/FAIL; exits 1 on any failure.
"""
import argparse
import csv
import glob
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

p = argparse.ArgumentParser()
p.add_argument("amp_run")
p.add_argument("model_dir")
p.add_argument("reference_dir")
p.add_argument("work_dir")
p.add_argument("--steps", type=int, default=20)
p.add_argument("--rtol", type=float, default=1e-4)
p.add_argument("extra", nargs="*")
args = p.parse_args()

ref = json.load(open(os.path.join(args.reference_dir, "reference.json")))
model_path = os.path.join(args.model_dir, "model.onnx")
meta = json.load(open(os.path.join(args.model_dir, "meta.json")))
names = [i["name"] for i in meta["inputs"]]
os.makedirs(args.work_dir, exist_ok=True)

batches = sorted(glob.glob(os.path.join(args.reference_dir, "data", "batch_*")))
data_dir = os.path.join(args.work_dir, "data")
os.makedirs(data_dir, exist_ok=True)
for k, name in enumerate(names):
    parts = [numpy_helper.to_array(onnx.load_tensor(
        os.path.join(b, "input_%d.pb" % k))) for b in batches]
    np.save(os.path.join(data_dir, name + ".npy"), np.concatenate(parts))

opt = ref["optimizer"]
if not (opt["momentum"] > 0 and not opt["nesterov"]):
    sys.exit("train_and_compare.py: reference optimizer %s is not SGD with "
             "momentum" % opt)
metrics = os.path.join(args.work_dir, "metrics.csv")
trained = os.path.join(args.work_dir, "trained.onnx")
cmd = [args.amp_run, model_path, "--mode", "train", "--data", data_dir,
       "--steps", str(args.steps), "--optimizer", "momentum",
       "--lr", repr(opt["lr"]), "--momentum", repr(opt["momentum"]),
       "--dampening", repr(opt["dampening"]),
       "--weight-decay", repr(opt["weight_decay"]),
       "--metrics", metrics, "--save-onnx", trained] + args.extra
run = subprocess.run(cmd, capture_output=True, text=True)
if run.returncode != 0:
    print("FAIL amp-run exited %d: %s" % (run.returncode, run.stderr))
    sys.exit(1)

failed = False
ours = [float(r["loss"]) for r in csv.DictReader(open(metrics))]
want = ref["fp32"]["loss"][: args.steps]
worst = max(abs(a - b) / abs(b) for a, b in zip(ours, want))
ok = len(ours) == len(want) and worst <= args.rtol
failed |= not ok
print("%s loss: %d steps, max relative difference %.3g"
      % ("PASS" if ok else "FAIL", len(ours), worst))

if args.steps == ref["steps"]:
    weights = {t.name: numpy_helper.to_array(t)
               for t in onnx.load(trained).graph.initializer}
    for f in sorted(glob.glob(os.path.join(args.reference_dir, "final_fp32",
                                           "*.pb"))):
        r = numpy_helper.to_array(onnx.load_tensor(f)).astype(np.float64)
        name = os.path.basename(f)[:-3]
        w = weights[name].astype(np.float64)
        rel = np.linalg.norm(w - r) / np.linalg.norm(r)
        ok = w.shape == r.shape and rel <= args.rtol
        failed |= not ok
        print("%s weight %s: relative L2 difference %.3g"
              % ("PASS" if ok else "FAIL", name, rel))
sys.exit(1 if failed else 0)
