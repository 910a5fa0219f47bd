"""Data parallelism (issue 25): N ranks against one process with
--accumulate N. Rank r takes batches r, r+N, ..., so step s of rank r is
micro-step s*N + r of the single run, both apply the same updates, and the
loss the ranks report for step s is the mean of those micro-steps'.

usage: data_parallel.py AMP_RUN WORK_DIR MODEL [--faults]

For MODEL: 2 and 4 ranks in f32, 2 ranks that each accumulate 2
micro-batches, 2 ranks at O2 f16 with skips (equal scales and skips), 3
ranks' epoch ends, and a checkpoint resumed at 2 ranks and refused at 4.
--faults adds an overflow on one rank only, kill -9 of a rank, a hung
rank and a rank that never starts. Prints one line per check; a failed check prints FAIL and exits 1.
"""
import csv
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import onnx

from checkpoint_format import checkpoint_step, rewrite_checkpoint

amp_run, work, model = sys.argv[1], sys.argv[2], sys.argv[3]
faults = "--faults" in sys.argv[4:]
# Checkpoint directories of an earlier run would be found at once.
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
           OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_btl="self,vader")
# The shared models are DIR/model.onnx; the examples are NAME.onnx.
name = os.path.basename(model)
if name == "model.onnx":
    name = os.path.basename(os.path.dirname(model))

# Sixteen batches of the model's inputs: floats N(0, 1), integer labels in
# [0, 10).
graph = onnx.load(model).graph
weights = {t.name for t in graph.initializer}
inputs = [i for i in graph.input if i.name not in weights]
batch = inputs[0].type.tensor_type.shape.dim[0].dim_value
data = os.path.join(work, "data")
os.makedirs(data, exist_ok=True)
rng = np.random.default_rng(5)
samples = batch * 16
for i in inputs:
    t = i.type.tensor_type
    shape = [samples] + [d.dim_value for d in t.shape.dim[1:]]
    if t.elem_type == onnx.TensorProto.FLOAT:
        value = rng.standard_normal(shape).astype(np.float32)
    else:
        value = rng.integers(0, 10, shape).astype(np.int64)
    np.save(os.path.join(data, f"{i.name}.npy"), value)

failed = False


def check(ok, what):
    global failed
    print(("ok: " if ok else "FAIL: ") + what)
    failed |= not ok


def run(*args, expect=0):
    p = subprocess.run([amp_run, model, "--data", data, "--progress", "none",
                        *map(str, args)], capture_output=True, text=True,
                       env=env, timeout=600)
    if p.returncode != expect:
        print(f"FAIL: amp-run {' '.join(map(str, args))} exited "
              f"{p.returncode}:\n{p.stdout}{p.stderr}")
        sys.exit(1)
    return p


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def compare(ranks, steps, flags, exact_scales, accumulate=1):
    """`ranks` ranks, each accumulating `accumulate` micro-batches, against
    one process accumulating ranks * accumulate: rank r's step s is the
    single run's micro-step s * ranks + r."""
    single = os.path.join(work, f"single{ranks}x{accumulate}.csv")
    dp = os.path.join(work, f"dp{ranks}x{accumulate}.csv")
    # The cosine schedule counts updates: both runs make the same number.
    run("--steps", steps * ranks, "--accumulate", ranks * accumulate,
        "--metrics", single, *flags)
    each = ["--accumulate", accumulate] if accumulate > 1 else []
    run("--nproc", ranks, "--steps", steps, "--metrics", dp, *each, *flags)
    a, b = rows(single), rows(dp)
    check(len(b) == steps,
          f"{name}: {ranks} ranks: {len(b)} rows for {steps} steps")
    worst = 0.0
    for s, row in enumerate(b):
        # The ranks report the mean of their losses: the single run's
        # micro-steps s*ranks .. s*ranks + ranks - 1.
        want = sum(float(a[s * ranks + r]["loss"])
                   for r in range(ranks)) / ranks
        got = float(row["loss"])
        worst = max(worst, abs(got - want) / max(abs(want), 1e-30))
    label = name + ": " + (" ".join(map(str, flags)) or "f32")
    if accumulate > 1:
        label += f", each --accumulate {accumulate}"
    # f32 sums the same gradients in another order; at O2 the single run
    # adds f16 gradients into its f16 sum and halves it, the ranks average
    # in f32 and round once, so the losses differ at f16's precision.
    bound = 1e-3 if exact_scales else 1e-6
    check(worst <= bound, f"{ranks} ranks ({label}): the ranks' mean losses "
          f"within {bound:g} of --accumulate {ranks * accumulate}'s "
          f"(worst {worst:.2e})")
    if exact_scales:
        same = all(
            float(row["loss_scale"]) == float(a[s * ranks]["loss_scale"]) and
            row["skipped"] == a[s * ranks + ranks - 1]["skipped"]
            for s, row in enumerate(b))
        skips = sum(int(float(r["skipped"])) for r in b)
        check(same, f"{ranks} ranks ({label}): the same loss scales and "
              f"skipped updates ({skips} skipped)")


compare(2, 20, [], False)
# Buckets of at most 0.5 MiB (several on every model that has MiBs of
# weights): each exchange overlaps the backward work after it, and without
# overlap waits at once; the same losses either way.
compare(4, 6, ["--bucket-mb", 0.5], False)
compare(2, 6, ["--bucket-mb", 0.5, "--overlap-exchange=false"], False)
# Accumulation on every rank: the steps that only add exchange nothing (the
# all-reduce is skipped with the updates), and the updates are the same.
compare(2, 12, [], False, accumulate=2)
# A scale far too large that backs off fast: the first updates overflow and
# are skipped on every rank, then the scale grows again.
compare(2, 12, ["--amp", "O2", "--init-scale", 2.0 ** 40, "--scale-backoff",
                2.0 ** -10, "--growth-interval", 3], True)

# At O2 the f16 gradients travel in f16 (each rank averages one slice of
# every rank's values in f32 and rounds once): at 2 ranks that is the f32
# exchange's arithmetic, so the runs agree bit for bit, in 0.5 MiB buckets.
wire = {}
for low in ("true", "false"):
    wire[low] = os.path.join(work, f"o2-wire-{low}.csv")
    run("--nproc", 2, "--steps", 8, "--amp", "O2", "--bucket-mb", 0.5,
        f"--low-precision-exchange={low}", "--metrics", wire[low])
same = [r["loss"] for r in rows(wire["true"])] == \
    [r["loss"] for r in rows(wire["false"])]
check(same and len(rows(wire["true"])) == 8,
      f"{name}: 2 ranks at O2: the f16 exchange's losses are the f32 "
      "exchange's, bit for bit")

# 3 ranks do not divide an epoch of 16 batches: --epochs 2 runs 11 steps
# (33 batches), and rank 0 evaluates on the steps that take an epoch's last
# batch, 6 (batch 17) and 11 (batch 32).
epochs_csv = os.path.join(work, "epochs.csv")
p = run("--nproc", 3, "--epochs", 2, "--test-data", data, "--eval-metrics",
        epochs_csv)
evals = [(int(r["step"]), float(r["epoch"])) for r in rows(epochs_csv)]
check(evals == [(6, 1.125), (11, 2.0625)] and
      "11 steps (2.06 epochs of 16 batches)" in p.stdout,
      f"3 ranks, 2 epochs of 16 batches: evaluations at (step, epoch) "
      f"{evals}")

# A checkpoint of 2 ranks resumes at 2 ranks bit-exact, and is refused at 4.
ckpt = os.path.join(work, "ckpt")
whole = os.path.join(work, "whole.csv")
run("--nproc", 2, "--steps", 6, "--lr-total-steps", 6, "--metrics", whole)
run("--nproc", 2, "--steps", 3, "--lr-total-steps", 6, "--checkpoint", ckpt)
resumed = os.path.join(work, "resumed.csv")
run("--nproc", 2, "--steps", 6, "--lr-total-steps", 6, "--resume", ckpt,
    "--metrics", resumed)
check([r["loss"] for r in rows(resumed)] == [r["loss"] for r in rows(whole)],
      "a 2-rank run resumed from its checkpoint is bit-exact")
p = run("--nproc", 4, "--steps", 6, "--lr-total-steps", 6, "--resume", ckpt,
        expect=1)
check("--data-parallel" in p.stderr and "rank" in p.stderr,
      "a resume at another world size is refused, naming --data-parallel: " +
      next((line for line in p.stderr.splitlines()
            if "cannot resume" in line), p.stderr[-300:]))

if faults:
    # An overflow on rank 1 alone: rank 1's batches are out of f16's range at
    # the scale, rank 0's are not (alone, rank 0 skips nothing). Every rank
    # skips, and the ranks' states stay equal (--checksum-state compares them).
    odd = os.path.join(work, "odd")
    os.makedirs(odd, exist_ok=True)
    even = os.path.join(work, "even")
    os.makedirs(even, exist_ok=True)
    rows_even = np.concatenate([np.arange(b * batch, (b + 1) * batch)
                                for b in range(0, samples // batch, 2)])
    for k, i in enumerate(inputs):
        value = np.load(os.path.join(data, f"{i.name}.npy"))
        if k == 0:
            for b in range(1, samples // batch, 2):
                value[b * batch:(b + 1) * batch] *= 3e4
        np.save(os.path.join(odd, f"{i.name}.npy"), value)
        np.save(os.path.join(even, f"{i.name}.npy"), value[rows_even])
    alone = os.path.join(work, "alone.csv")
    p = subprocess.run([amp_run, model, "--data", even, "--steps", "4", "--amp",
                        "O2", "--metrics", alone, "--progress", "none"],
                       capture_output=True, text=True, env=env)
    both = os.path.join(work, "both.csv")
    q = subprocess.run([amp_run, model, "--data", odd, "--nproc", "2", "--steps", "4",
                        "--amp", "O2", "--checksum-state", "--metrics", both,
                        "--progress", "none"], capture_output=True, text=True,
                       env=env)
    check(p.returncode == 0 and q.returncode == 0 and
          all(r["skipped"] == "0" for r in rows(alone)) and
          all(r["skipped"] == "1" for r in rows(both)) and
          "on all 2 ranks" in q.stdout,
          "an overflow on rank 1 alone skips every rank's update, and their "
          "states stay equal: " + next((line for line in q.stdout.splitlines()
                                       if "checksum" in line), q.stderr))

    # kill -9 of rank 1 mid-run: the others exit non-zero within the timeout,
    # naming the rank; the last checkpoint resumes bit-exact at 2 ranks.
    long_steps = 400
    whole = os.path.join(work, "whole-long.csv")
    run("--nproc", 2, "--steps", long_steps, "--metrics", whole)


    def rank_pids(rank, marker):
        """The pids of the amp-run processes whose command line holds `marker`
        (the job's checkpoint directory) and that are rank `rank`."""
        out = []
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    environ = f.read().split(b"\0")
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmdline = f.read()
            except OSError:
                continue
            if (marker.encode() in cmdline and
                    f"OMPI_COMM_WORLD_RANK={rank}".encode() in environ):
                out.append(int(pid))
        return out


    def signal_rank_1(ckpt, sig, *args):
        """Trains 2 ranks for long_steps with `args`, checkpointing into
        `ckpt`, and sends rank 1 `sig` once the first checkpoint is there.
        Returns the job, whether rank 1 was found, its output and the
        seconds from the start to its end."""
        start = time.monotonic()
        job = subprocess.Popen([amp_run, model, "--data", data, "--progress",
                                "none", "--nproc", "2", "--steps",
                                str(long_steps), "--checkpoint", ckpt,
                                *map(str, args)],
                               stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, env=env)
        victims = []
        while time.monotonic() - start < 60 and job.poll() is None:
            if os.path.exists(os.path.join(ckpt, "checkpoint.ampc")):
                victims = rank_pids(1, ckpt)
                if victims:
                    break
            time.sleep(0.02)
        for pid in victims:
            os.kill(pid, sig)
        try:
            output, _ = job.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            job.kill()
            output = "(hung)"
        return job, bool(victims), output, time.monotonic() - start


    ckpt = os.path.join(work, "killed")
    job, victims, output, took = signal_rank_1(
        ckpt, signal.SIGKILL, "--checkpoint-every", 20,
        "--collective-timeout", 20)
    check(victims and job.returncode not in (0, None) and
          "rank 1" in output and took < 60,
          f"kill -9 of rank 1: the job exits {job.returncode} in {took:.0f} s, "
          "naming rank 1: " + next((line.strip() for line in output.splitlines()
                                    if "rank 1" in line), output[-200:]))
    resumed = os.path.join(work, "resumed-long.csv")
    run("--nproc", 2, "--steps", long_steps, "--resume", ckpt, "--metrics",
        resumed)
    at = checkpoint_step(os.path.join(ckpt, "checkpoint.ampc"))
    check(0 < at < long_steps and
          [r["loss"] for r in rows(resumed)] == [r["loss"] for r in rows(whole)],
          f"the last checkpoint before the kill (step {at}) resumes bit-exact")

    # SIGTERM to rank 1 alone, under --accumulate 2 with a checkpoint every
    # 3 steps: every rank stops after the same update (the step's exchange
    # shares the signal), rank 0 writes the checkpoint and names the rank,
    # and the job ends with the signal's status; the checkpoint resumes
    # bit-exact. Between updates each rank holds its own partial gradients,
    # so neither a checkpoint nor a stop lands there.
    whole_acc = os.path.join(work, "whole-acc.csv")
    run("--nproc", 2, "--steps", long_steps, "--accumulate", 2, "--metrics",
        whole_acc)
    termed = os.path.join(work, "termed")
    job, victims, output, _ = signal_rank_1(
        termed, signal.SIGTERM, "--accumulate", 2, "--checkpoint-every", 3)
    said = next((line.strip() for line in output.splitlines()
                 if "interrupted by" in line), output[-300:])
    at = checkpoint_step(os.path.join(termed, "checkpoint.ampc"))
    check(victims and job.returncode == 128 + signal.SIGTERM and
          "interrupted by SIGTERM (sent to rank 1) after step" in said and
          f"after step {at} of" in said and at % 2 == 0,
          f"SIGTERM to rank 1 alone: every rank stops after update {at}, "
          f"exit {job.returncode}: {said}")
    resumed_acc = os.path.join(work, "resumed-acc.csv")
    run("--nproc", 2, "--steps", long_steps, "--accumulate", 2, "--resume",
        termed, "--metrics", resumed_acc)
    check([r["loss"] for r in rows(resumed_acc)] ==
          [r["loss"] for r in rows(whole_acc)],
          f"its checkpoint (step {at}, --accumulate 2) resumes bit-exact")
    # One written between updates (by an earlier build: the step field set
    # odd here, the CRC-32 at the end made again) is refused.
    between = os.path.join(work, "between")
    rewrite_checkpoint(termed, between,
                       lambda parts: (at - 1,) + tuple(parts[1:]))
    p = run("--nproc", 2, "--steps", long_steps, "--accumulate", 2,
            "--resume", between, expect=1)
    said = next((line.strip() for line in p.stderr.splitlines()
                 if "between two updates" in line), p.stderr[-300:])
    check(p.returncode != 0 and
          f"written after step {at - 1}, between two updates (the step "
          "accumulates 2 steps per update)" in said,
          "a checkpoint between updates is refused: " + said)

    # A rank that hangs (SIGSTOP): rank 0 gives up after
    # --collective-timeout, naming the rank that did not arrive, and ends
    # the job. In buckets of 0.5 MiB, so that other exchanges are queued
    # behind the one that times out: they fail at once, not each after
    # another timeout.
    # (Reaping the stopped rank is mpirun's; the test kills it afterwards.)
    hang = ckpt + "-hang"
    log = os.path.join(work, "hang.log")
    start = time.monotonic()
    with open(log, "w") as out:
        job = subprocess.Popen([amp_run, model, "--data", data, "--progress",
                                "none", "--nproc", "2", "--steps",
                                str(long_steps), "--checkpoint", hang,
                                "--checkpoint-every", "20",
                                "--collective-timeout", "3",
                                "--bucket-mb", "0.5"],
                               stdout=out, stderr=subprocess.STDOUT, env=env)
    victims, others = [], []
    while time.monotonic() - start < 60 and job.poll() is None:
        if os.path.exists(os.path.join(hang, "checkpoint.ampc")):
            victims, others = rank_pids(1, hang), rank_pids(0, hang)
            if victims and others:
                break
        time.sleep(0.02)
    for pid in victims:
        os.kill(pid, signal.SIGSTOP)
    stopped = time.monotonic()
    while time.monotonic() - stopped < 30 and any(
            os.path.exists(f"/proc/{pid}") and
            open(f"/proc/{pid}/stat").read().split()[2] != "Z"
            for pid in others):
        time.sleep(0.05)
    took = time.monotonic() - stopped
    for pid in victims:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        job.wait(timeout=60)
    except subprocess.TimeoutExpired:
        job.kill()
    with open(log) as f:
        output = f.read()
    named = "waited 3 s for rank 1, which has stopped before or in it"
    check(bool(victims) and took < 6 and named in output,
          f"a hung rank 1: rank 0 gives up {took:.0f} s after it stopped, "
          "naming it: " +
          next((line.strip() for line in output.splitlines()
                if "rank 0" in line and "waited" in line), output[-200:]))

    # A rank that never starts (it hangs before MPI_Init, which has no
    # timeout of its own): rank 0's start-up watchdog ends it after
    # --collective-timeout, and mpirun ends the job.
    start = time.monotonic()
    p = subprocess.run(
        ["mpirun", "-n", "2", "--oversubscribe", "sh", "-c",
         'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then exec sleep 600; fi; '
         'exec "$0" "$@"', amp_run, model, "--data", data, "--steps", "5",
         "--collective-timeout", "3", "--progress", "none"],
        capture_output=True, text=True, env=env, timeout=120)
    took = time.monotonic() - start
    line = next((line for line in (p.stdout + p.stderr).splitlines()
                 if "MPI_Init waited" in line), "")
    check(p.returncode != 0 and took < 30 and "rank 0" in line,
          f"a rank that never starts: the job exits {p.returncode} in "
          f"{took:.0f} s: {line}")

sys.exit(1 if failed else 0)
