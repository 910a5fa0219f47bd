"""Trains a shared training model with amp-run and compares it with the
PyTorch reference run in shared/models/reference/<model>.

usage: train_and_compare.py AMP_RUN MODEL_DIR REFERENCE_DIR WORK_DIR
       [--steps N] [--rtol R] [--amp LEVEL --amp-dtype f16|bf16]
       [--loss-tol-from bf16 | --loss-rtol R] [--final-rtol R]
       [--weight-tol-from bf16] [-- extra amp-run args]

The reference trains 20 steps from the weights in the ONNX file; step s uses
data/batch_{s % 4}/input_{0,1}.pb. Those batches are concatenated into one
.npy per graph input, which amp-run takes in order and wraps around: the
same sequence. Checked: the loss of every step (before its update) within
--rtol of the fp32 reference, and every trained weight (written back with
--save-onnx) within --rtol relative L2 of final_fp32/<name>.pb. Prints one
line per check with PASS/FAIL; exits 1 on any failure.

Mixed precision (--amp, --amp-dtype, passed on to amp-run) cannot follow
the fp32 curve to 1e-4, so its tolerances come from the reference's own
bf16 autocast run against fp32 (reference.json's bf16_vs_fp32):
--loss-tol-from bf16 bounds every step's loss by max_rel_loss_diff and
--weight-tol-from bf16 every weight by --weight-tol-factor (default 1)
times max_param_rel_l2 (the worst weight drift the reference's bf16
autocast shows). --loss-rtol sets the loss
tolerance outright (the test says why). --final-rtol adds a check of the
last step's loss alone. With --amp, the skipped-step count (the metrics'
skipped column, checked against amp-run's summary) and the final loss scale
(the summary's, else the metrics' constant loss_scale) are printed, and
last one line (wrapped here)
  RESULT model opset level dtype max_rel=.. final_rel=.. skipped=.. scale=..
         weight_rel=.. [extra amp-run args]
where max_rel is the worst step's relative loss difference and weight_rel
the worst weight's relative L2 difference.
"""
import argparse
import csv
import glob
import json
import os
import re
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

import reference_batches

p = argparse.ArgumentParser()
p.add_argument("amp_run")
p.add_argument("model_dir")
p.add_argument("reference_dir")
p.add_argument("work_dir")
p.add_argument("--steps", type=int, default=20)
p.add_argument("--rtol", type=float, default=1e-4)
p.add_argument("--amp", default="O0")
p.add_argument("--amp-dtype", default="f16", choices=["f16", "bf16"])
p.add_argument("--loss-tol-from", choices=["bf16"])
p.add_argument("--loss-rtol", type=float)
p.add_argument("--final-rtol", type=float)
p.add_argument("--weight-tol-from", choices=["bf16"])
p.add_argument("--weight-tol-factor", type=float, default=1.0)
# Everything after "--" goes to amp-run; argparse alone would not take it
# once options follow the positional arguments.
argv = sys.argv[1:]
extra = argv[argv.index("--") + 1:] if "--" in argv else []
args = p.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
amp = args.amp != "O0"

ref = json.load(open(os.path.join(args.reference_dir, "reference.json")))
model_path = os.path.join(args.model_dir, "model.onnx")
meta = json.load(open(os.path.join(args.model_dir, "meta.json")))
names = [i["name"] for i in meta["inputs"]]
os.makedirs(args.work_dir, exist_ok=True)

# Only the reference's bf16 autocast run gives mixed-precision tolerances.
bf16_ref = ref["bf16_vs_fp32"]
loss_rtol, loss_tol_source = args.rtol, ""
if args.loss_tol_from:
    loss_rtol = bf16_ref["max_rel_loss_diff"]
    loss_tol_source = " from the bf16 autocast reference"
if args.loss_rtol is not None:
    loss_rtol, loss_tol_source = args.loss_rtol, " set by --loss-rtol"
weight_rtol = args.rtol
if args.weight_tol_from:
    weight_rtol = args.weight_tol_factor * bf16_ref["max_param_rel_l2"]

data_dir = reference_batches.write_npy(
    os.path.join(args.work_dir, "data"),
    reference_batches.read(args.reference_dir, names))

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
       "--metrics", metrics, "--save-onnx", trained]
if amp:
    cmd += ["--amp", args.amp, "--amp-dtype", args.amp_dtype]
cmd += extra
run = subprocess.run(cmd, capture_output=True, text=True)
if run.returncode != 0:
    print("FAIL amp-run exited %d: %s" % (run.returncode, run.stderr))
    sys.exit(1)

failed = False
rows = list(csv.DictReader(open(metrics)))
ours = [float(r["loss"]) for r in rows]
want = ref["fp32"]["loss"][: args.steps]
rel = [abs(a - b) / abs(b) for a, b in zip(ours, want)]
worst = max(rel)
ok = len(ours) == len(want) and worst <= loss_rtol
failed |= not ok
print("%s loss: %d steps, max relative difference %.3g (tolerance %.3g%s)"
      % ("PASS" if ok else "FAIL", len(ours), worst, loss_rtol,
         loss_tol_source))

final_rel = rel[-1]
if args.final_rtol is not None:
    ok = len(ours) == len(want) and final_rel <= args.final_rtol
    failed |= not ok
    print("%s final loss: %.7g vs fp32 %.7g, relative difference %.3g "
          "(tolerance %.3g)" % ("PASS" if ok else "FAIL", ours[-1], want[-1],
                                final_rel, args.final_rtol))

if amp:
    # amp-run prints skipped steps and the final scale (after the last
    # step's update) only when the step checks for overflow; the metrics
    # always have the skipped column and the scale each step ran with.
    skipped = sum(int(r["skipped"]) for r in rows)
    scale = rows[-1]["loss_scale"]
    m = re.search(r"skipped (\d+) \(overflow\); final loss scale (\S+?);",
                  run.stdout)
    ok = m is None or int(m.group(1)) == skipped
    if m:
        scale = m.group(2)
    failed |= not ok
    print("%s skipped steps: %d (overflow), final loss scale %s%s"
          % ("PASS" if ok else "FAIL", skipped, scale,
             "" if m else " (no loss scaling)"))

worst_weight = float("nan")
if args.steps == ref["steps"]:
    worst_weight = 0.0
    weights = {t.name: numpy_helper.to_array(t)
               for t in onnx.load(trained).graph.initializer}
    for f in sorted(glob.glob(os.path.join(args.reference_dir, "final_fp32",
                                           "*.pb"))):
        r = numpy_helper.to_array(onnx.load_tensor(f)).astype(np.float64)
        name = os.path.basename(f)[:-3]
        w = weights[name].astype(np.float64)
        wrel = np.linalg.norm(w - r) / np.linalg.norm(r)
        ok = w.shape == r.shape and wrel <= weight_rtol
        worst_weight = max(worst_weight, wrel)
        failed |= not ok
        print("%s weight %s: relative L2 difference %.3g (tolerance %.3g)"
              % ("PASS" if ok else "FAIL", name, wrel, weight_rtol))

if amp:
    opset = re.search(r"_op(\d+)$", os.path.normpath(args.model_dir))
    print("RESULT %s %s %s %s max_rel=%.3g final_rel=%.3g skipped=%d "
          "scale=%s weight_rel=%.3g%s"
          % (ref["model"], opset.group(1) if opset else "?", args.amp,
             args.amp_dtype, worst, final_rel, skipped, scale, worst_weight,
             "".join(" " + e for e in extra)))
sys.exit(1 if failed else 0)
