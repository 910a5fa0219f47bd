#!/usr/bin/python3
"""CPU step time of two amp-run builds side by side (A/B), f32 and AMP.

  /usr/bin/python3 bench/step_time_ab.py OLD/amp-run NEW/amp-run [--threads 2]
      [--rounds 3] [--only examples/lenet5] [--model M.onnx ...]

For every example and shared training model, and for f32, O1, O2 (f16) and
O2 bf16, each build trains --steps synthetic steps with --metrics; the time
of a build is the median step_time_ms after --warmup steps, and the best of
--rounds alternating runs (A, B, A, B, ...) is reported with the ratio B/A.
Both builds run on this machine in one invocation, so the ratio is
like for like; absolute times are this CPU's only. Build the old side from
a worktree of the commit to compare with (git worktree add, cmake, ninja
amp-run).
"""
import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(ROOT, "..", "shared", "models")
MODELS = [os.path.join(ROOT, "examples", "mlp.onnx"),
          os.path.join(ROOT, "examples", "lenet5.onnx")] + [
    os.path.join(SHARED, m + "_train_op17", "model.onnx")
    for m in ("lenet5", "mlp9", "msmlp")]
CONFIGS = [[], ["--amp", "O1"], ["--amp", "O2"],
           ["--amp", "O2", "--amp-dtype", "bf16"]]


def median_step(binary, model, config, args):
    with tempfile.TemporaryDirectory() as d:
        metrics = os.path.join(d, "m.csv")
        cmd = [binary, model, "--data", "synthetic", "--steps",
               str(args.steps), "--metrics", metrics, "--threads",
               str(args.threads)] + config
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("FAILED: %s\n%s" % (" ".join(cmd), r.stderr))
        with open(metrics) as f:
            rows = list(csv.DictReader(f))[args.warmup:]
        return statistics.median(float(x["step_time_ms"]) for x in rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a", help="amp-run of the old build")
    ap.add_argument("b", help="amp-run of the new build")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="",
                    help="run only the models whose path contains this")
    ap.add_argument("--model", action="append", default=[],
                    help="an ONNX model to run instead of the examples and "
                    "shared models (repeatable)")
    args = ap.parse_args()
    if args.warmup >= args.steps:
        sys.exit("--warmup must be below --steps")
    print("%-22s %-22s %9s %9s %6s" % ("model", "config", "A ms", "B ms",
                                        "B/A"))
    for model in [m for m in (args.model or MODELS) if args.only in m]:
        if not os.path.exists(model):
            sys.exit("missing model " + model)
        name = (os.path.basename(os.path.dirname(model))
                if "shared" in model else os.path.basename(model))
        for config in CONFIGS:
            a, b = [], []
            for _ in range(args.rounds):
                a.append(median_step(args.a, model, config, args))
                b.append(median_step(args.b, model, config, args))
            print("%-22s %-22s %9.3f %9.3f %6.2f" %
                  (name, " ".join(config) or "f32", min(a), min(b),
                   min(b) / min(a)), flush=True)


if __name__ == "__main__":
    main()
