"""Kills amp-run training and checks that nothing is lost.

    kill_loop.py kill AMP_RUN MODEL WORK_DIR [--iterations N] [--seed S]
    kill_loop.py signal AMP_RUN MODEL WORK_DIR

The model is examples/mlp.onnx (a 5 MB checkpoint, a step of a few ms) on
320 random samples (5 steps an epoch, shuffled) with 100 test samples.

kill: one uninterrupted reference run of STEPS steps with a checkpoint after
every step, then N runs, each SIGKILLed at a random time (seeded) between its
start and the reference run's end: in the compile, in a step or in a
checkpoint write. After each kill the checkpoint directory must hold no
checkpoint (killed before the first) or one that amp-run resumes from, and
the resumed run, written into the same directory over any temporary file the
kill left, must end with the reference's final state: every tensor, every
metric but the timings (the per-step state checksum included) and every
evaluation.

signal: SIGINT and SIGTERM after some steps (mid-epoch, between the
checkpoints of the epoch ends) must exit with 128 + the signal number, say so
on stderr (printed here for FileCheck), leave metrics files complete to the
step reached and a checkpoint of that step that resumes to the reference's
final state; without --checkpoint the message says none was written; and a
second signal while the first is handled kills at once.

Prints PASS/FAIL lines and a summary; exits 1 on any failure.
"""
import argparse
import ctypes
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time

import numpy as np

from checkpoint_format import checkpoint_step, read_checkpoint
from resume_check import metrics_without_timing

STEPS = 10
# The interrupted runs of the signal test ask for this many steps, so that a
# slow machine cannot reach the end (where a signal only lets the run
# finish) before the signal lands; they are cut, and resumed to STEPS.
LONG = 1000
CKPT = "checkpoint.ampc"
failures = 0


def check(ok, what):
    global failures
    if not ok:
        failures += 1
        print("FAIL " + what, flush=True)
    return ok


def make_data(work):
    rng = np.random.default_rng(0)
    for split, n in (("train", 320), ("test", 100)):
        d = os.path.join(work, split)
        os.makedirs(d, exist_ok=True)
        np.save(os.path.join(d, "image.npy"),
                rng.standard_normal((n, 1, 28, 28)).astype(np.float32))
        np.save(os.path.join(d, "label.npy"),
                rng.integers(0, 10, n).astype(np.int64))


class Runner:
    def __init__(self, amp_run, model, work):
        self.work = work
        # O2 f16: weights, master weights, momentum and the loss-scale state
        # all have to come back. The cosine schedule's length is fixed so a
        # checkpoint at the last step can be loaded by a longer run.
        self.common = [amp_run, model, "--data", os.path.join(work, "train"),
                       "--test-data", os.path.join(work, "test"), "--shuffle",
                       "--seed", "3", "--amp", "O2", "--checksum-state",
                       "--lr-total-steps", str(STEPS), "--threads", "1",
                       "--progress", "none"]

    def args(self, d, steps=STEPS, every=None, resume=False, ckpt=True):
        a = self.common + ["--steps", str(steps),
                           "--metrics", os.path.join(d, "steps.csv"),
                           "--eval-metrics", os.path.join(d, "evals.csv")]
        if ckpt:
            a += ["--checkpoint", os.path.join(d, "ck")]
        if every:
            a += ["--checkpoint-every", str(every)]
        if resume:
            a += ["--resume", os.path.join(d, "ck")]
        return a

    def run(self, args):
        return subprocess.run(args, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True)

    def reference(self, name="reference"):
        """The uninterrupted run: its directory, and the seconds until its
        first checkpoint and until its end."""
        d = os.path.join(self.work, name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        first = os.path.join(d, "ck", CKPT)
        start = time.monotonic()
        p = subprocess.Popen(self.args(d, every=1), stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, universal_newlines=True)
        first_seconds = None
        while p.poll() is None:
            if first_seconds is None and os.path.exists(first):
                first_seconds = time.monotonic() - start
            time.sleep(0.001)
        seconds = time.monotonic() - start
        if not check(p.returncode == 0 and first_seconds,
                     "the uninterrupted run: " + p.stderr.read()):
            sys.exit(1)
        return d, first_seconds, seconds


def same_as_reference(ref, d, what, cut=None):
    """The final state and the metrics of the run in `d` are the reference's;
    with `cut`, only the first `cut` steps (an interrupted run's files)."""
    a = read_checkpoint(os.path.join(ref, "ck", CKPT))
    ok = True
    if cut is None:
        b = read_checkpoint(os.path.join(d, "ck", CKPT))
        ok &= check(a == b, "%s: the final state differs from the "
                    "uninterrupted run's (%d tensors)" % (what, len(a)))
    steps = metrics_without_timing(os.path.join(ref, "steps.csv"))
    evals = metrics_without_timing(os.path.join(ref, "evals.csv"))
    if cut is not None:
        steps = steps[:cut + 1]
        evals = [evals[0]] + [r for r in evals[1:] if int(r[0]) <= cut]
    ok &= check(metrics_without_timing(os.path.join(d, "steps.csv")) == steps,
                "%s: the step metrics differ" % what)
    ok &= check(metrics_without_timing(os.path.join(d, "evals.csv")) == evals,
                "%s: the evaluations differ" % what)
    return ok


def kill_loop(runner, iterations, seed):
    start = time.monotonic()
    ref, first, end = runner.reference()
    # A second one: the comparisons below rest on two runs ending alike, and
    # the first run of a cold process takes longer than the others.
    again, first2, end2 = runner.reference("again")
    same_as_reference(ref, again, "a second uninterrupted run")
    first, end = min(first, first2), min(end, end2)
    step_seconds = (end - first) / STEPS
    rng = random.Random(seed)
    kinds = {"before the first checkpoint": 0, "during a checkpoint write": 0,
             "between checkpoint writes": 0, "after the end": 0}
    steps_seen, resumed, first_cut = set(), 0, 0
    for i in range(iterations):
        d = os.path.join(runner.work, "kill%02d" % i)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        ck = os.path.join(d, "ck")
        metrics = os.path.join(d, "steps.csv.tmp")
        # A fifth at a time in the compile and the first step; the rest a
        # time into the step and checkpoint write that follow the k-th row
        # of metrics, so that a slower machine moves the times along.
        p = subprocess.Popen(runner.args(d, every=1), stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        if rng.random() < 0.2:
            at = rng.uniform(0, first)
            what = "kill %d at %.3f s" % (i, at)
        else:
            k, at = rng.randint(1, STEPS), rng.uniform(0, step_seconds)
            what = "kill %d at %.3f s after step %d" % (i, at, k)
            while p.poll() is None and rows(metrics) < k:
                time.sleep(0.001)
        try:
            p.wait(timeout=at)
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGKILL)
            p.wait()
        has_tmp = os.path.exists(os.path.join(ck, CKPT + ".tmp"))
        if p.returncode != -signal.SIGKILL:
            kinds["after the end"] += 1
            check(p.returncode == 0, "%s: exited %d" % (what, p.returncode))
        elif not os.path.exists(os.path.join(ck, CKPT)):
            kinds["before the first checkpoint"] += 1
            # Cut in the first write: the next run, into the same directory,
            # must neither fail on nor read what the kill left.
            if has_tmp:
                first_cut += 1
                r = runner.run(runner.args(d))
                if check(r.returncode == 0, "%s: the next run failed: %s" %
                         (what, r.stderr.strip())):
                    same_as_reference(ref, d, what + ", run again")
            continue
        else:
            kinds["during a checkpoint write" if has_tmp
                  else "between checkpoint writes"] += 1
        step = checkpoint_step(os.path.join(ck, CKPT))
        steps_seen.add(step)
        # Resume to the end into the same directory (over the stale
        # temporary file); at the end already, a longer run proves it loads.
        r = runner.run(runner.args(d, resume=True,
                                   steps=STEPS + (step == STEPS)))
        if not check(r.returncode == 0, "%s: the checkpoint at step %d does "
                     "not resume: %s" % (what, step, r.stderr.strip())):
            continue
        check("resumed at step %d" % step in r.stdout,
              "%s: did not say it resumed at step %d" % (what, step))
        check(not os.path.exists(os.path.join(ck, CKPT + ".tmp")),
              "%s: a temporary file is left after the resumed run" % what)
        if step < STEPS:
            resumed += same_as_reference(ref, d, what)
        else:
            resumed += 1
    loaded = sum(kinds.values()) - kinds["before the first checkpoint"]
    print("%d kills: %s" % (iterations, ", ".join(
        "%d %s" % (n, k) for k, n in kinds.items())))
    print("checkpoints found at %d different steps of %d; %d kill(s) cut the "
          "first write and were run again from the start" %
          (len(steps_seen), STEPS, first_cut))
    check(kinds["before the first checkpoint"] > 0 and loaded > 0,
          "the kills did not fall both before and after the first checkpoint")
    print("%s %d of %d checkpoints resumed to the uninterrupted run's final "
          "state" % ("PASS" if resumed == loaded else "FAIL", resumed, loaded))
    print("time: uninterrupted run %.2f s (%.2f s to the first checkpoint), "
          "all %.1f s" % (end, first, time.monotonic() - start))


def rows(path):
    try:
        with open(path) as f:
            return len(f.read().splitlines()) - 1
    except FileNotFoundError:
        return -1


def start_and_wait(runner, args, d, steps_done):
    """Starts amp-run and returns once `steps_done` steps are in its metrics
    file (in the loop, past the compile)."""
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True)
    while rows(os.path.join(d, "steps.csv.tmp")) < steps_done:
        if p.poll() is not None:
            check(False, "amp-run ended before step %d: %s" %
                  (steps_done, p.stderr.read()))
            sys.exit(1)
        time.sleep(0.002)
    return p


def thread_kill(pid, sig):
    """tgkill(pid, pid, sig): `sig` to the main thread of process `pid`."""
    nr = {"x86_64": 234, "aarch64": 131}[os.uname().machine]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(nr, pid, pid, int(sig)) != 0:
        raise OSError(ctypes.get_errno(), "tgkill")


def signals(runner):
    start = time.monotonic()
    ref, _, _ = runner.reference()
    # No periodic checkpoints (--checkpoint-every LONG): the checkpoint is
    # the interrupt's own wherever the signal lands.
    for sig in (signal.SIGINT, signal.SIGTERM):
        name = sig.name
        d = os.path.join(runner.work, name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        p = start_and_wait(runner, runner.args(d, steps=LONG, every=LONG), d,
                           2)
        p.send_signal(sig)
        out, err = p.communicate()
        message = err.strip().splitlines()[-1] if err.strip() else ""
        print(message.replace(d, "DIR"))
        check(p.returncode == 128 + sig, "%s: exit code %d, not %d" %
              (name, p.returncode, 128 + sig))
        m = re.match(r"amp-run: interrupted by %s after step (\d+) of %d; "
                     r"checkpoint written to (.*) \(continue with --resume "
                     r"(.*)\)$" % (name, LONG), message)
        if not check(m, "%s: no interrupt message" % name):
            continue
        cut = int(m.group(1))
        ck = os.path.join(d, "ck")
        check(m.group(2) == os.path.join(ck, CKPT) and m.group(3) == ck,
              "%s: the message names another checkpoint" % name)
        check(checkpoint_step(os.path.join(ck, CKPT)) == cut,
              "%s: the checkpoint is not at step %d" % (name, cut))
        if not check(2 <= cut < STEPS, "%s: cut at step %d, not in [2, %d): "
                     "the signal came late" % (name, cut, STEPS)):
            continue
        same_as_reference(ref, d, "%s at step %d" % (name, cut), cut=cut)
        r = runner.run(runner.args(d, resume=True))
        check(r.returncode == 0 and "resumed at step %d" % cut in r.stdout,
              "%s: the resumed run: %s" % (name, r.stderr))
        if same_as_reference(ref, d, "%s, resumed" % name):
            print("PASS %s (sent after 2 steps): exit code %d, metrics "
                  "complete to the step, resumed to the uninterrupted run's "
                  "final state" % (name, p.returncode))

    # Without --checkpoint: nothing to write, and the message says so.
    d = os.path.join(runner.work, "no-checkpoint")
    os.makedirs(d, exist_ok=True)
    p = start_and_wait(runner, runner.args(d, steps=LONG, ckpt=False), d, 3)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate()
    print(err.strip().splitlines()[-1] if err.strip() else "")
    check(p.returncode == 128 + signal.SIGTERM,
          "no --checkpoint: exit code %d" % p.returncode)

    # A second signal while the first is handled kills at once: both go to
    # the main thread (a signal to the process may go to any of its threads,
    # whose handlers could then run side by side), SIGINT, the lower number,
    # is delivered first, SIGTERM is blocked while its handler runs and then
    # finds the default action put back.
    d = os.path.join(runner.work, "twice")
    os.makedirs(d, exist_ok=True)
    p = start_and_wait(runner, runner.args(d, every=1), d, 3)
    thread_kill(p.pid, signal.SIGINT)
    thread_kill(p.pid, signal.SIGTERM)
    p.communicate()
    if check(p.returncode == -signal.SIGTERM,
             "two signals: ended with %d, not killed by SIGTERM" %
             p.returncode):
        r = runner.run(runner.args(d, resume=True))
        if check(r.returncode == 0, "two signals: the checkpoint left does "
                 "not resume: " + r.stderr):
            if same_as_reference(ref, d, "two signals, resumed"):
                print("PASS a second signal kills at once; the checkpoint "
                      "left resumes to the same final state")
    print("time: %.1f s" % (time.monotonic() - start))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=["kill", "signal"])
    ap.add_argument("amp_run")
    ap.add_argument("model")
    ap.add_argument("work")
    ap.add_argument("--iterations", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    make_data(a.work)
    runner = Runner(a.amp_run, a.model, a.work)
    if a.mode == "kill":
        kill_loop(runner, a.iterations, a.seed)
    else:
        signals(runner)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
