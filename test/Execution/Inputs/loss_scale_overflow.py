"""Forced overflow: a shared training model at --amp O1 (f16) with a loss
scale far too large for f16, so that the first steps overflow.

usage: loss_scale_overflow.py AMP_RUN MODEL_DIR REFERENCE_DIR WORK_DIR
       --init-log2 E [--steps N]

Data and optimizer are the reference's (as in train_and_compare.py: the
reference batches concatenated, SGD with its momentum). Runs and checks:

dynamic, --init-scale 2^E, --checksum-state:
  - the first K >= 3 steps are skipped and no later one is;
  - the scale starts at 2^E, halves after each skipped step and stays put
    after a clean one (growth interval 2000 > N); every scale is a power
    of two; the summary line gives K and the last scale;
  - state_checksum of every skipped step equals the checksum of the
    initial state, computed here from the ONNX initializers and the
    optimizer state's initial values (so a skip that changed anything,
    step counter or velocity included, fails), and step K's differs;
  - a --steps K run writes back (--save-onnx) weights bit-identical to the
    model's initializers;
  - after the skips the run trains like f32: step K+j's loss is within the
    tolerance of the bf16 autocast reference (reference.json,
    bf16_vs_fp32.max_rel_loss_diff) of step j of an f32 (--amp O0) run on
    the same batches (the data rotated by K batches: a skipped step still
    consumes its batch), and the final loss within 3% of the fp32
    reference's (which trained K more steps).
static, --init-scale 2^40 (every step overflows):
  - with --max-overflow-steps 5 the run fails after 5 skipped steps; its
    error (printed here, checked by FileCheck) names the first op whose
    output overflowed; the metrics hold those 5 steps, all skipped, at the
    initial state;
  - with --max-overflow-steps 0 it runs N steps, all skipped, every
    checksum the initial state's, the weights written back unchanged.

Prints the scale sequence and checksums, one PASS/FAIL line per check;
exits 1 on any failure.
"""
import json
import os

import numpy as np

import reference_batches
from loss_scale_util import (Checks, arg_parser, checksum, initializers,
                             metrics, pow2, run, same_bits, state_params,
                             summary, summary_line)

p = arg_parser("model_dir", "reference_dir")
p.add_argument("--init-log2", type=int, required=True)
p.add_argument("--steps", type=int, default=20)
args = p.parse_args()
N = args.steps
work = args.work_dir
os.makedirs(work, exist_ok=True)

ref = json.load(open(os.path.join(args.reference_dir, "reference.json")))
model = os.path.join(args.model_dir, "model.onnx")
meta = json.load(open(os.path.join(args.model_dir, "meta.json")))
names = [i["name"] for i in meta["inputs"]]
batches = reference_batches.read(args.reference_dir, names)
num_batches = len(batches[names[0]])


def data_dir(rotate):
    """The reference batches starting at batch `rotate`, wrapping around."""
    return reference_batches.write_npy(
        os.path.join(work, "data_%d" % rotate), batches, rotate)


opt = ref["optimizer"]
train = ["--mode", "train", "--optimizer", "momentum",
         "--lr", repr(opt["lr"]), "--momentum", repr(opt["momentum"]),
         "--dampening", repr(opt["dampening"]),
         "--weight-decay", repr(opt["weight_decay"])]
amp = ["--amp", "O1", "--amp-dtype", "f16"]
check = Checks()

weights = initializers(model)
params = state_params(args.amp_run, model, train + amp + ["--data",
                                                          "synthetic"])
c0 = checksum(params, weights)
print("initial state: %d parameters, state_checksum %d"
      % (len(params), c0))


def saved_unchanged(path):
    saved = initializers(path)
    return [n for n in weights if not same_bits(saved[n], weights[n])]


# Dynamic scaling from 2^E.
init = 2.0 ** args.init_log2
csv_path = os.path.join(work, "dynamic.csv")
r = run([args.amp_run, model] + train + amp +
        ["--data", data_dir(0), "--steps", str(N), "--loss-scale", "dynamic",
         "--init-scale", repr(init), "--checksum-state",
         "--metrics", csv_path])
rows = metrics(csv_path)
print("dynamic, init scale 2^%d:" % args.init_log2)
for row in rows:
    tag = "initial state" if row["state_checksum"] == c0 else "updated"
    print("  step %d: loss_scale %s skipped %d state_checksum %d (%s) "
          "loss %.6g" % (row["step"], pow2(row["loss_scale"]) or
                         repr(row["loss_scale"]), row["skipped"],
                         row["state_checksum"], tag, row["loss"]))
print("  " + summary_line(r.stdout))
K = 0
while K < len(rows) and rows[K]["skipped"]:
    K += 1
check(len(rows) == N and K >= 3 and
      not any(row["skipped"] for row in rows[K:]),
      "dynamic: steps 0..%d skipped, steps %d..%d not" % (K - 1, K, N - 1))
scale = init
ok = True
for row in rows:
    ok &= row["loss_scale"] == scale and pow2(scale) is not None
    scale = scale / 2 if row["skipped"] else scale
check(ok, "dynamic: the scale starts at 2^%d and halves at each skipped "
      "step: %s" % (args.init_log2, " ".join(pow2(row["loss_scale"]) or "?"
                                             for row in rows[:K + 1])))
sk, final = summary(r.stdout)
check(sk == K and final is not None and
      np.float32(final) == np.float32(scale),
      "dynamic: the summary gives %s skipped steps and final scale %s"
      % (sk, pow2(final) if final else final))
check(all(row["state_checksum"] == c0 for row in rows[:K]) and
      rows[K]["state_checksum"] != c0,
      "dynamic: state_checksum of the %d skipped steps = the initial "
      "state's (%d); step %d's differs (%d)"
      % (K, c0, K, rows[K]["state_checksum"]))

# Exactly K steps: nothing may have been applied.
onnx_k = os.path.join(work, "after_skips.onnx")
run([args.amp_run, model] + train + amp +
    ["--data", data_dir(0), "--steps", str(K), "--loss-scale", "dynamic",
     "--init-scale", repr(init), "--save-onnx", onnx_k])
changed = saved_unchanged(onnx_k)
check(not changed, "dynamic: after the %d skipped steps all %d weights are "
      "bit-identical to the initializers%s"
      % (K, len(weights), "; changed: " + ",".join(changed) if changed
         else ""))

# After the skips: as f32 training on the batches those steps read.
f32_csv = os.path.join(work, "f32.csv")
run([args.amp_run, model] + train +
    ["--amp", "O0", "--data", data_dir(K % num_batches), "--steps",
     str(N - K), "--metrics", f32_csv])
f32 = [row["loss"] for row in metrics(f32_csv)]
ours = [row["loss"] for row in rows[K:]]
tol = ref["bf16_vs_fp32"]["max_rel_loss_diff"]
worst = max(abs(a - b) / abs(b) for a, b in zip(ours, f32))
check(len(f32) == N - K and worst <= tol,
      "dynamic: steps %d..%d follow f32 training from step 0 on the same "
      "batches: max relative loss difference %.3g (tolerance %.3g)"
      % (K, N - 1, worst, tol))
ref_final = ref["fp32"]["loss"][N - 1]
rel = abs(rows[-1]["loss"] - ref_final) / ref_final
check(np.isfinite(rows[-1]["loss"]) and rel <= 0.03,
      "dynamic: final loss %.6g within 3%% of the fp32 reference's %.6g "
      "(%.3g)" % (rows[-1]["loss"], ref_final, rel))

# Static 2^40: every step overflows.
static = train + amp + ["--data", data_dir(0), "--steps", str(N),
                        "--loss-scale", "static", "--init-scale",
                        repr(2.0 ** 40), "--checksum-state"]
csv_path = os.path.join(work, "static5.csv")
r = run([args.amp_run, model] + static +
        ["--max-overflow-steps", "5", "--metrics", csv_path],
        expect_ok=False)
rows = metrics(csv_path)
print("static 2^40, --max-overflow-steps 5: exit %d" % r.returncode)
print("  " + r.stderr.strip())
check(r.returncode != 0 and len(rows) == 5 and
      all(row["skipped"] and row["loss_scale"] == 2.0 ** 40 and
          row["state_checksum"] == c0 for row in rows),
      "static: the run stops after 5 skipped steps at the initial state")

csv_path = os.path.join(work, "static0.csv")
onnx_s = os.path.join(work, "static.onnx")
r = run([args.amp_run, model] + static +
        ["--max-overflow-steps", "0", "--metrics", csv_path,
         "--save-onnx", onnx_s])
rows = metrics(csv_path)
print("static 2^40, --max-overflow-steps 0:")
print("  " + summary_line(r.stdout))
sk, final = summary(r.stdout)
changed = saved_unchanged(onnx_s)
check(len(rows) == N and sk == N and
      all(row["skipped"] and row["loss_scale"] == 2.0 ** 40 and
          row["state_checksum"] == c0 for row in rows) and not changed,
      "static: all %d steps skipped, state_checksum %d at every step, "
      "weights bit-identical to the initializers" % (N, c0))
check.exit()
