#!/usr/bin/env python3
"""Data parallelism on this machine's CPU: 2 ranks against 1 process.

For each model, alternating in --rounds rounds on synthetic data:
- 1 process with --threads T (T = the cores given, default 2);
- --nproc 2, each rank with T/2 threads (the same cores in all), in three
  forms: one bucket (the default 25 MiB, which holds every gradient of
  these models, so nothing can overlap it), and buckets of --bucket-mb
  (default 0.1 MiB) waited for at once (--overlap-exchange=false) or
  overlapped with the backward work after them (the default);
and from each run amp-run's summary: the median step (ms) and, for the
ranks, rank 0's time blocked in the gradient all-reduces per step (the
exchange and the wait for the other rank that other work did not hide).
Printed as ratios, measured side by side (absolute CPU times are not
reported):
- samples/s of 2 ranks over 1 process (a rank's step takes 2 batches'
  worth of samples across the ranks);
- the share of a rank's step spent blocked in the all-reduce.

    /usr/bin/python3 bench/data_parallel.py [--models mlp,msmlp,lenet5]
        [--steps 200] [--rounds 3] [--threads 2] [--bucket-mb 0.1]
        [--amp O2] [--markdown]

With --amp O2 every run is O2 (f16 gradients, which travel in f16), and a
fourth form sends them as f32 in one bucket (--low-precision-exchange=false).

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


FORMS = [
    ("one bucket", []),
    ("small buckets, waited at once", ["--overlap-exchange=false"]),
    ("small buckets, overlapped", []),
]
# With --amp: the f16/bf16 gradients travel in their own type by default;
# this form sends them as f32 (one bucket), to compare.
F32_WIRE = ("one bucket, as f32", ["--low-precision-exchange=false"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="mlp,msmlp,lenet5")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--bucket-mb", type=float, default=0.1)
    ap.add_argument("--amp", default="",
                    help="an AMP level for every run (O2: f16 gradients, "
                         "and a column with them sent as f32)")
    ap.add_argument("--amp-run", default=os.path.join(ROOT, "build", "bin",
                                                      "amp-run"))
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    half = max(1, a.threads // 2)
    forms = FORMS + ([F32_WIRE] if a.amp else [])
    amp = ["--amp", a.amp] if a.amp else []
    print(f"load average at start: {os.getloadavg()[0]:.2f}; 1 process x "
          f"{a.threads} threads vs 2 ranks x {half}; small buckets "
          f"{a.bucket_mb} MiB")
    rows = []
    for name in a.models.split(","):
        model = MODELS[name]
        if not os.path.exists(model):
            print(f"{name}: {model} not found, skipped")
            continue
        one = []
        steps = {form: [] for form, _ in forms}
        shares = {form: [] for form, _ in forms}
        for _ in range(a.rounds):
            one.append(run(a.amp_run, model, a.steps,
                           ["--threads", str(a.threads), *amp])[0])
            for form, flags in forms:
                buckets = [] if form.startswith("one bucket") else [
                    "--bucket-mb", str(a.bucket_mb)]
                step, reduce = run(a.amp_run, model, a.steps,
                                   ["--nproc", "2", "--threads", str(half),
                                    *amp, *buckets, *flags])
                steps[form].append(step)
                shares[form].append(reduce / step)
        row = [name]
        for form, _ in forms:
            speedup = 2 * statistics.median(one) / statistics.median(
                steps[form])
            share = statistics.median(shares[form])
            row += [speedup, share]
            print(f"{name}, {form}: 2 ranks run {speedup:.2f}x the "
                  f"samples/s of 1 process; a rank is blocked in the "
                  f"all-reduce {100 * share:.0f}% of its step")
        rows.append(row)
    if a.markdown:
        print("| model | " + " | ".join(
            f"{form}: samples/s vs 1 process | {form}: blocked in the "
            "all-reduce" for form, _ in forms) + " |")
        print("|---|" + "---|---|" * len(forms))
        for r in rows:
            cells = [r[0]]
            for i in range(len(forms)):
                cells += [f"{r[1 + 2 * i]:.2f}", f"{100 * r[2 + 2 * i]:.0f}%"]
            print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
