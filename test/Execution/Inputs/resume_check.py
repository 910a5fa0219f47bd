"""Checks that an amp-run resumed from a checkpoint is the uninterrupted run.

    resume_check.py AMP_RUN MODEL TRAIN_DIR TEST_DIR WORK_DIR

For every precision mode: one run of --steps 24, and one of K steps with
--checkpoint followed by --steps 24 --resume (K cuts an epoch in the middle).
Both must end with the same bits: every tensor of their final checkpoints
(weights, optimizer state, loss-scale state and counters, read here with an
independent reader of the documented format), the weights written with
--save-onnx, and every metric except the timings. Prints PASS/FAIL lines.
"""
import os
import subprocess
import sys

from checkpoint_format import read_checkpoint

MODES = [
    ("f32", [], 7),
    ("O1 f16", ["--amp", "O1"], 7),
    ("O1 bf16", ["--amp", "O1", "--amp-dtype", "bf16"], 7),
    ("O2 f16", ["--amp", "O2"], 7),
    ("O2 bf16", ["--amp", "O2", "--amp-dtype", "bf16"], 7),
    ("O3 f16 master weights", ["--amp", "O3", "--amp-master-weights"], 7),
    # Overflows first (skipped steps), then grows every 3 clean steps: the
    # cut falls inside both, and inside the Adam moments.
    ("O2 f16 adam, scale 2^40, growth-interval 3",
     ["--amp", "O2", "--optimizer", "adam", "--lr", "1e-3", "--init-scale",
      "1099511627776", "--growth-interval", "3"], 9),
    ("O1 f16 accumulate 2", ["--amp", "O1", "--accumulate", "2"], 8),
]
TIMING = {"step_time_ms", "input_ms", "samples_per_s"}


def metrics_without_timing(path):
    lines = open(path).read().splitlines()
    header = lines[0].split(",")
    keep = [i for i, c in enumerate(header) if c not in TIMING]
    return [[row.split(",")[i] for i in keep] for row in lines]


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if r.returncode:
        print("FAIL %s exited %d: %s" % (" ".join(cmd), r.returncode,
                                          r.stderr.strip()))
        sys.exit(1)
    return r.stdout


def main():
    amp_run, model, train, test, work = sys.argv[1:6]
    failures = 0
    for name, flags, cut in MODES:
        d = os.path.join(work, name.replace(" ", "_").replace(",", ""))
        os.makedirs(d, exist_ok=True)
        common = [amp_run, model, "--data", train, "--test-data", test,
                  "--shuffle", "--seed", "7", "--checksum-state", "--lr-total-steps", "24",
                  "--progress", "none"] + flags
        p = lambda f: os.path.join(d, f)
        run(common + ["--steps", "24", "--checkpoint", p("whole"),
                      "--metrics", p("whole.csv"), "--eval-metrics",
                      p("whole-eval.csv"), "--save-onnx", p("whole.onnx")])
        run(common + ["--steps", str(cut), "--checkpoint", p("part")])
        out = run(common + ["--steps", "24", "--resume", p("part"),
                            "--checkpoint", p("part"), "--metrics",
                            p("resumed.csv"), "--eval-metrics",
                            p("resumed-eval.csv"), "--save-onnx",
                            p("resumed.onnx")])
        a = read_checkpoint(os.path.join(p("whole"), "checkpoint.ampc"))
        b = read_checkpoint(os.path.join(p("part"), "checkpoint.ampc"))
        checks = [
            ("resumed at step %d" % cut,
             "resumed at step %d" % cut in out),
            ("every tensor of the final state bit-identical (%d tensors)"
             % len(a), a == b),
            ("the saved weights byte-identical",
             open(p("whole.onnx"), "rb").read() ==
             open(p("resumed.onnx"), "rb").read()),
            ("the 24 step rows identical but for the timing",
             metrics_without_timing(p("whole.csv")) ==
             metrics_without_timing(p("resumed.csv"))),
            # The cut run evaluated at its end too: one row more.
            ("the evaluations identical but for the timing (and the one "
             "at the cut)",
             metrics_without_timing(p("whole-eval.csv")) ==
             [r for r in metrics_without_timing(p("resumed-eval.csv"))
              if r[0] != str(cut)]),
        ]
        for what, ok in checks:
            print("%s %s: %s" % ("PASS" if ok else "FAIL", name, what))
            failures += not ok
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
