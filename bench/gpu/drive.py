#!/usr/bin/env python3
"""The GPU benchmark's pieces, in order, each time-boxed, every result one
JSON line in WORK/records.jsonl (report.py reads it) and every piece's
output in WORK/logs/NN-<piece>.log (NN: the order they ran). Called by
run.sh; see bench/README.md. Exits 1 when a piece failed or timed out
(after running the others).

1. the CUDA unit tests (ampc-cuda-unittests --gtest_brief=1);
2. ampc-gemm-peak for f16, bf16, tf32 and f32: a plain cuBLASLt GEMM, the
   peak the 8192 MLP's step is measured against (the Tensor Core peak for
   f16 and bf16; f32, which ampc runs without TF32, against plain f32);
3. per model (plan.MODELS), interleaved: every ampc configuration
   (amp-exec PROGRAM --mode train --steps W+N --init-params uniform:SEED
   --json F --metrics F.csv: the median of the N steps after W), then
   the PyTorch eager peer of each dtype;
4. per model (plan.COMPILE_ORDER), the torch.compile peer (last: its
   compilation takes tens of seconds per model and dtype, and a run cut
   short by the budget should lose it rather than the eager comparison).

A piece gets its own time limit (plan.TIMEOUT_*), cut to what is left of
--budget-s; a piece that would get less than MIN_PIECE_S is recorded as
skipped. A failed or timed-out piece is recorded and the run goes on.

usage: drive.py --bin DIR --programs DIR --work DIR --device cuda|cpu
                --size full|tiny --budget-s S [--python PY]
"""

import argparse
import csv
import json
import os
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import plan  # noqa: E402

MIN_PIECE_S = 15
GEMM_DTYPES = ["f16", "bf16", "tf32", "f32"]
# Each model's batch, from the sizes.json models.py wrote for the Programs.
BATCHES = None


def last_line(out):
    """The last non-empty line of a piece's output: its error, usually."""
    lines = [l for l in out.strip().splitlines() if l.strip()]
    return lines[-1][:300] if lines else ""


class Driver:
    def __init__(self, args):
        self.args = args
        self.deadline = time.monotonic() + args.budget_s
        os.makedirs(os.path.join(args.work, "logs"), exist_ok=True)
        self.records = os.path.join(args.work, "records.jsonl")
        self.pieces = 0
        self.failures = 0

    def record(self, rec):
        with open(self.records, "a") as f:
            f.write(json.dumps(rec) + "\n")

    def run(self, piece, cmd, limit, needs_gpu=False):
        """Runs cmd with its output in logs/NN-<piece>.log; returns (status,
        seconds, output). status: ok, failed (rc), timeout, skipped. A
        piece that needs_gpu and fails on the CPU (--dry-run) is skipped,
        not failed."""
        left = self.deadline - time.monotonic()
        limit = min(limit, left)
        if limit < MIN_PIECE_S:
            print("%-44s skipped: %.0f s of the time budget left" %
                  (piece, max(left, 0)), flush=True)
            return "skipped", 0.0, "time budget: %.0f s left" % max(left, 0)
        self.pieces += 1
        log = os.path.join(self.args.work, "logs",
                           "%02d-%s.log" % (self.pieces, piece))
        t0 = time.monotonic()
        with open(log, "w") as f:
            f.write("$ " + " ".join(cmd) + "\n")
            f.flush()
            # Its own process group, so a time-out also ends the children
            # (torch.compile's compile workers).
            p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT,
                                 start_new_session=True)
            try:
                rc = p.wait(timeout=limit)
                status = "ok" if rc == 0 else "failed (exit %d)" % rc
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
                status = "timeout (%.0f s)" % limit
        secs = time.monotonic() - t0
        with open(log) as f:
            out = f.read()
        if status != "ok" and needs_gpu and self.args.device == "cpu":
            status = "skipped (needs a GPU)"
        print("%-44s %s in %.1f s" % (piece, status, secs), flush=True)
        if status != "ok" and not status.startswith("skipped"):
            self.failures += 1
            tail = out.strip().splitlines()[-3:]
            for line in tail:
                print("    | " + line[:200], flush=True)
        return status, secs, out

    # -- pieces -------------------------------------------------------------

    def unittests(self):
        exe = os.path.join(self.args.bin, "ampc-cuda-unittests")
        status, secs, out = self.run("unittests", [exe, "--gtest_brief=1"],
                                     120)
        summary = [l for l in out.splitlines()
                   if l.startswith("[  PASSED  ]") or
                   l.startswith("[  FAILED  ]") or
                   l.startswith("[  SKIPPED ]") or "tests ran" in l]
        self.record(dict(kind="unittests", status=status, seconds=secs,
                         summary=summary[-12:]))

    def gemm_peak(self):
        exe = os.path.join(self.args.bin, "ampc-gemm-peak")
        for d in GEMM_DTYPES:
            status, secs, out = self.run("gemm-peak." + d,
                                         [exe, "--dtype", d], 60,
                                         needs_gpu=True)
            rec = dict(kind="gemm-peak", dtype=d, status=status)
            if status != "ok":
                rec["error"] = last_line(out)
            for line in reversed(out.splitlines()):
                if line.startswith("{"):
                    try:
                        rec.update(json.loads(line))
                        rec["dtype"] = d
                        break
                    except ValueError:
                        pass
            if status == "ok" and "tflops" not in rec:
                rec["status"] = "failed (no JSON line with tflops)"
            self.record(rec)

    def ampc(self, m, config):
        name = plan.program_name(m["name"], config)
        prog = os.path.join(self.args.programs, name + ".prog")
        out_json = os.path.join(self.args.work, name + ".ampc.json")
        out_csv = os.path.join(self.args.work, name + ".ampc.csv")
        warmup, steps = m["warmup"], plan.steps_for(m, config)
        cmd = [os.path.join(self.args.bin, "amp-exec"), prog,
               "--mode", "train", "--device", self.args.device,
               "--steps", str(warmup + steps),
               "--init-params", "uniform:%d" % plan.INIT_SEED,
               "--json", out_json, "--metrics", out_csv, "--progress", "none"]
        status, secs, out = self.run("ampc." + name, cmd, plan.TIMEOUT_AMPC)
        rec = dict(side="ampc", kind="bench", model=m["name"], config=config,
                   dtype=plan.CONFIGS[config][1], batch=BATCHES[m["name"]],
                   status=status, warmup=warmup, cmd=" ".join(cmd))
        if status != "ok":
            rec["error"] = last_line(out)
        if status == "ok":
            try:
                with open(out_json) as f:
                    j = json.load(f)
                with open(out_csv) as f:
                    rows = list(csv.DictReader(f))
                rec.update(ampc_figures(j, rows, warmup))
            except (OSError, ValueError, KeyError) as e:
                rec["status"] = "failed (reading %s: %s)" % (out_json, e)
        self.record(rec)

    def torch(self, m, mode):
        jsonl = os.path.join(self.args.work, "%s.torch-%s.jsonl" %
                             (m["name"], mode))
        cmd = [self.args.python, os.path.join(HERE, "torch_peer.py"),
               "--model", m["name"], "--size", self.args.size,
               "--dtypes", ",".join(plan.torch_dtypes(m)), "--mode", mode,
               "--steps", str(m["steps"]), "--warmup", str(m["warmup"]),
               "--lr", repr(m["lr"]), "--device", self.args.device,
               "--jsonl", jsonl]
        if "steps_f32" in m:
            cmd += ["--steps-f32", str(m["steps_f32"])]
        limit = (plan.TIMEOUT_TORCH_COMPILE if mode == "compile"
                 else plan.TIMEOUT_TORCH_EAGER)
        status, secs, out = self.run("torch-%s.%s" % (mode, m["name"]), cmd,
                                     limit)
        done = set()
        if os.path.exists(jsonl):
            with open(jsonl) as f:
                for line in f:
                    rec = json.loads(line)
                    rec["kind"] = "bench"
                    done.add(rec["dtype"])
                    self.record(rec)
        # Dtypes the process never reached (time-out, crash, budget).
        for d in plan.torch_dtypes(m):
            if d not in done:
                self.record(dict(side="torch-" + mode, kind="bench",
                                 model=m["name"], dtype=d,
                                 batch=BATCHES[m["name"]], status=status,
                                 error="no result from torch_peer.py: " +
                                 last_line(out)))


def ampc_figures(j, rows, warmup):
    """Step time and peak memory of one amp-exec run: the median of the
    --metrics CSV's step_time_ms after the warm-up steps (amp-exec's own
    median_step_ms counts every step, the first, which captures the CUDA
    graph, included; it is kept as `exec_median_ms`), the device peak
    from its --json."""
    times = [float(r["step_time_ms"]) for r in rows][warmup:]
    if not times:
        raise KeyError("no step after the %d warm-up steps in --metrics"
                       % warmup)
    losses = [float(r["loss"]) for r in rows]
    return dict(median_ms=statistics.median(times), min_ms=min(times),
                max_ms=max(times), steps=len(times),
                exec_median_ms=j.get("median_step_ms"),
                peak_bytes=j.get("peak_device_bytes"),
                device_bytes=j.get("device_bytes"),
                loss_first=losses[0], loss_last=losses[-1],
                skipped_steps=j.get("skipped_steps"))


def main():
    global BATCHES
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bin", required=True)
    p.add_argument("--programs", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--device", required=True, choices=["cuda", "cpu"])
    p.add_argument("--size", required=True, choices=["full", "tiny"])
    p.add_argument("--budget-s", type=float, required=True)
    p.add_argument("--python", default=sys.executable)
    args = p.parse_args()
    with open(os.path.join(args.programs, "sizes.json")) as f:
        BATCHES = {m: s["batch"] for m, s in json.load(f).items()}
    d = Driver(args)
    d.unittests()
    d.gemm_peak()
    for m in plan.MODELS:
        for c in m["configs"]:
            d.ampc(m, c)
        d.torch(m, "eager")
    by_name = {m["name"]: m for m in plan.MODELS}
    for name in plan.COMPILE_ORDER:
        d.torch(by_name[name], "compile")
    sys.exit(1 if d.failures else 0)


if __name__ == "__main__":
    main()
