#!/usr/bin/env python3
"""Data parallelism on this machine's CPU: 2 ranks against 1 process.

For each model, alternating in --rounds rounds on synthetic data:
- 1 process with --threads T (T = the cores given, default 2);
- --nproc 2, each rank with T/2 threads (the same cores in all);
and from each run amp-run's summary: the median step (ms) and, for the
ranks, rank 0's time in the gradient all-reduces per step. Printed as
ratios, measured side by side (absolute CPU times are not reported):
- samples/s of 2 ranks over 1 process (a rank's step takes 2 batches'
  worth of samples across the ranks);
- the share of a rank's step spent in the all-reduce (the exchange and
  the wait for the other rank; the runtime does not overlap it).

    /usr/bin/python3 bench/data_parallel.py [--models mlp,msmlp,lenet5]
        [--steps 200] [--rounds 3] [--threads 2] [--markdown]

Needs openmpi-bin (scripts/setup.sh) and a built amp-run.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = {
    "mlp": os.path.join(ROOT, "examples", "mlp.onnx"),
    "lenet5": os.path.join(ROOT, "examples", "lenet5.onnx"),
    "msmlp": "/work/shared/models/msmlp_train_op17/model.onnx",
}
SUMMARY = re.compile(r"median step ([0-9.]+) ms(?:; all-reduce ([0-9.]+) ms "
                     r"per step)?")


def run(amp_run, model, steps, extra):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    p = subprocess.run([amp_run, model, "--data", "synthetic", "--steps",
                        str(steps), "--progress", "none",
                        "--lr-schedule", "constant", *extra],
                       capture_output=True, text=True, env=env)
    m = SUMMARY.search(p.stdout)
    if p.returncode != 0 or not m:
        sys.exit(f"data_parallel: amp-run {' '.join(extra)} on {model} "
                 f"failed:\n{p.stdout}{p.stderr}")
    return float(m.group(1)), float(m.group(2) or 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="mlp,msmlp,lenet5")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--amp-run", default=os.path.join(ROOT, "build", "bin",
                                                      "amp-run"))
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    half = max(1, a.threads // 2)
    print(f"load average at start: {os.getloadavg()[0]:.2f}; 1 process x "
          f"{a.threads} threads vs 2 ranks x {half}")
    rows = []
    for name in a.models.split(","):
        model = MODELS[name]
        if not os.path.exists(model):
            print(f"{name}: {model} not found, skipped")
            continue
        one, two, wait = [], [], []
        for _ in range(a.rounds):
            one.append(run(a.amp_run, model, a.steps,
                           ["--threads", str(a.threads)])[0])
            step, reduce = run(a.amp_run, model, a.steps,
                               ["--nproc", "2", "--threads", str(half)])
            two.append(step)
            wait.append(reduce / step)
        speedup = 2 * statistics.median(one) / statistics.median(two)
        share = statistics.median(wait)
        rows.append((name, speedup, share))
        print(f"{name}: 2 ranks run {speedup:.2f}x the samples/s of 1 "
              f"process; a rank spends {100 * share:.0f}% of its step in the "
              "all-reduce")
    if a.markdown:
        print("| model | 2 ranks / 1 process, samples/s | all-reduce share "
              "of a rank's step |")
        print("|---|---|---|")
        for name, speedup, share in rows:
            print(f"| {name} | {speedup:.2f} | {100 * share:.0f}% |")


if __name__ == "__main__":
    main()
