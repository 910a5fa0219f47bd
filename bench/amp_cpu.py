#!/usr/bin/python3
"""CPU training step, f32 and AMP O2 bf16: ampc against PyTorch autocast.

  /usr/bin/python3 bench/amp_cpu.py [--threads 1 2] [--rounds 3]
      [--steps 20] [--check-steps 5] [--models mlp9x1024 mlp lenet5 resnet18
      resnet18tv transformer] [--placement any|near|far] [--markdown]

Models (bench/gpu/models.py's PyTorch definitions, exported here to the
ONNX train form with Debian's torch 1.13): the seeds' 9-layer MLP at width
1024 and batch 256 (MSE loss), the MindSpore quick-start MLP
(784-512-512-10, examples/mlp.onnx's network) at batch 64, LeNet-5 at batch
32, a CIFAR ResNet-18 (3x3 stem, BasicBlocks 2-2-2-2, 64-512 channels,
batch norm in training mode) and torchvision's resnet18 itself (7x7
stride-2 stem and 3x3 stride-2 max pooling before the same blocks), both
at 3x32x32 and batch 16; and, when named, a 2-layer BERT-style encoder
(dim 128, 4 heads, 64 tokens, batch 8).

Each side trains SGD with momentum 0.9 on synthetic batches of the model's
shapes, from the same weights:
* ampc: `amp-run MODEL --data synthetic --steps S --optimizer momentum
  --momentum 0.9 --lr 0.01 --threads T --metrics CSV` with and without
  `--amp O2 --amp-dtype bf16`; the CSV has each compiled step's time alone.
* PyTorch: the nn.Module itself, eager, in a child process (so that its
  OpenMP settings are its own): zero_grad, forward and loss (under
  torch.autocast("cpu", torch.bfloat16) for bf16, PyTorch's CPU AMP),
  backward, SGD step, timed with perf_counter; torch.set_num_threads(T).
  OMP_WAIT_POLICY=PASSIVE and OPENBLAS_NUM_THREADS=T, as bench/train_cpu.py
  explains, unless --omp-default-wait.
Each figure is the median step after 5 warm-up steps, and the median over
--rounds alternating rounds, each round a fresh process; "spread" is the
largest over the smallest of the round medians, less 1, per side and
precision (run-to-run variation, which issue 22 wants within 10% at 2
threads; PyTorch's, measured in the same rounds, shows how much of it the
machine itself adds).

Placement. On a virtual machine the host decides where the vCPUs run, and
on this project's AMD EPYC guests it moves them, for seconds to minutes,
between two cores that share an L3 (a cache line's round trip of tens of
nanoseconds) and two on different chiplets (hundreds; the figures are in
docs/performance.md). Compute is the same in both,
but every kernel that hands data from one thread to the other pays the
distance: LeNet-5's 2-thread step is up to twice as slow in the second
placement (docs/performance.md, "Two speeds at two threads"). So with 2
or more threads each timed run is bracketed by
`ampc-core-latency` (bench/cpu/core_latency.cpp, CPUs 0 and 1): a run is
"near" when both round trips are below --far-ns (150), "far" when both are
at or above it, "moved" otherwise. --placement any keeps every run and
counts the kinds in the placement column; near or far repeats a run of
another kind (up to --placement-tries times, then stops with a message),
so that every figure of the table was measured in one placement; the runs
set aside are counted there too.

Before timing, each model's numbers are checked: both sides train
--check-steps steps on one fixed batch (PyTorch's, written as .npy for
`amp-run --data DIR`) from the same weights, and ampc's f32 losses must
match PyTorch's f32 losses to 1e-3, and each side's bf16 losses must stay
within 5e-2 of its own f32 losses, both relative to the first loss; a miss
stops the script (nonzero exit) before any time is printed.

Printed per model and thread count: each side's f32 and bf16 step, each
side's bf16/f32 ratio (below 1: AMP is faster), and PyTorch's time over
ampc's per precision (above 1: ampc is faster).
"""

import argparse
import collections
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from bench_util import loss_diff  # bench/ is on sys.path (bench_util.py)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "gpu"))

# name: (models.py network, its dimensions)
MODELS = {
    "mlp9x1024": ("mlp9x8192", dict(batch=256, width=1024, layers=9)),
    "mlp": ("mlp", dict(batch=64)),
    "lenet5": ("lenet5", dict(batch=32)),
    "resnet18": ("resnet", dict(batch=16, width=64, blocks=(2, 2, 2, 2),
                                classes=10)),
    # torchvision's resnet18 itself, at the same input and batch.
    "resnet18tv": ("resnet18tv", dict(batch=16, classes=10)),
    # Not in the default set (docs/performance.md's table): a small
    # BERT-style encoder, whose Linears PyTorch exports as MatMul + Add.
    "transformer": ("transformer", dict(batch=8, seq=64, dim=128, heads=4,
                                        ff=512, layers=2, vocab=1024)),
}
DEFAULT_MODELS = ["mlp9x1024", "mlp", "lenet5", "resnet18", "resnet18tv"]
LR, MOMENTUM, WARMUP = 0.01, 0.9, 5


def _models_module(name):
    """bench/gpu/models.py with a `cpu` size holding this model's dims."""
    import models
    net, dims = MODELS[name]
    models.SIZES.setdefault("cpu", {})[net] = dims
    return models, net


def _mse(out, target):
    # F.mse_loss has no ONNX export in torch 1.13; this is the same loss as
    # the seed mlp9 export reads it (Sub, Mul, ReduceMean).
    d = out - target
    return (d * d).mean()


def export(name, path):
    import torch
    models, net = _models_module(name)
    if net == "mlp9x8192":
        models.loss_fn = lambda n, orig=models.loss_fn: (
            _mse if n == "mlp9x8192" else orig(n))
    models.export_torch(net, "cpu", path)
    # The module's initial weights, for the PyTorch side.
    torch.manual_seed(0)
    state = models.WithLoss(net, models.network(net, "cpu")).state_dict()
    torch.save(state, path + ".pt")


def torch_worker(args):
    """The child process: prints the median step time (ms) of the run, or
    with --check-dir, writes the batch there as x.npy and target.npy and
    prints the losses of --check-steps steps on it."""
    import numpy as np
    import torch
    torch.set_num_threads(args.threads[0])
    models, net = _models_module(args.worker)
    loss = _mse if net == "mlp9x8192" else models.loss_fn(net)
    module = models.WithLoss(net, models.network(net, "cpu"))
    module.load_state_dict(torch.load(args.model + ".pt"))
    module.train()
    gen = torch.Generator().manual_seed(1)
    x, target = models.random_batch(net, "cpu", "cpu", gen)
    if args.check_dir:
        np.save(os.path.join(args.check_dir, "x.npy"), x.numpy())
        np.save(os.path.join(args.check_dir, "target.npy"), target.numpy())
    opt = torch.optim.SGD(module.parameters(), lr=LR, momentum=MOMENTUM)
    times, losses = [], []
    steps = args.check_steps if args.check_dir else WARMUP + args.steps
    for _ in range(steps):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        if args.bf16:
            with torch.autocast("cpu", dtype=torch.bfloat16):
                out = module.model(x)
                value = loss(out, target)
        else:
            out = module.model(x)
            value = loss(out, target)
        value.backward()
        opt.step()
        times.append((time.perf_counter() - t0) * 1e3)
        losses.append(float(value))
    if args.check_dir:
        print(json.dumps(losses))
    else:
        print(json.dumps(statistics.median(times[WARMUP:])))


def torch_step(args, name, path, threads, bf16, check_dir=None):
    env = dict(os.environ)
    if not args.omp_default_wait:
        env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    env["OPENBLAS_NUM_THREADS"] = str(threads)
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", name,
           "--model", path, "--threads", str(threads), "--steps",
           str(args.steps)] + (["--bf16"] if bf16 else []) + (
               ["--check-dir", check_dir, "--check-steps",
                str(args.check_steps)] if check_dir else [])
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit("FAILED: %s\n%s" % (" ".join(cmd), r.stderr))
    return json.loads(r.stdout.strip().splitlines()[-1])


def ampc_run(args, path, threads, bf16, tmp, data="synthetic",
             steps=None):
    """The rows of amp-run's metrics CSV for a run of `steps` steps."""
    metrics = os.path.join(tmp, "m.csv")
    cmd = [args.amp_run, path, "--data", data, "--steps",
           str(steps or WARMUP + args.steps), "--optimizer", "momentum",
           "--momentum", str(MOMENTUM), "--lr", str(LR), "--threads",
           str(threads), "--metrics", metrics] + (
               ["--amp", "O2", "--amp-dtype", "bf16"] if bf16 else [])
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("FAILED: %s\n%s" % (" ".join(cmd), r.stderr))
    with open(metrics) as f:
        return list(csv.DictReader(f))


def ampc_step(args, path, threads, bf16, tmp):
    rows = ampc_run(args, path, threads, bf16, tmp)[WARMUP:]
    return statistics.median(float(x["step_time_ms"]) for x in rows)


class Placement:
    """Brackets each timed run at 2+ threads with ampc-core-latency and keeps
    it or repeats it as --placement says (the module docstring)."""

    def __init__(self, args):
        self.args = args
        self.tally = {}  # row -> Counter of the runs' kinds

    def _round_trip(self):
        cmd = [self.args.core_latency]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True)
        except OSError as e:
            sys.exit(f"FAILED: {cmd[0]}: {e} (build it: ninja -C build "
                     "ampc-core-latency)")
        if r.returncode != 0:
            sys.exit(f"FAILED: {cmd[0]}: {r.stderr.strip()}")
        return float(r.stdout.split(":")[1].split()[0])

    def timed(self, threads, row, what, run):
        """run()'s result (a time in ms) from a run in the asked placement;
        `what` names the run in the log line."""
        if threads < 2:
            return run()
        tally = self.tally.setdefault(row, collections.Counter())
        for attempt in range(self.args.placement_tries):
            if attempt:
                time.sleep(3)
            before = self._round_trip()
            value = run()
            after = self._round_trip()
            far = [t >= self.args.far_ns for t in (before, after)]
            kind = "far" if all(far) else "moved" if any(far) else "near"
            print(f"  {row}, {what}: {value:.3f} ms between round trips of "
                  f"{before:.0f} and {after:.0f} ns ({kind})", file=sys.stderr)
            if self.args.placement in ("any", kind):
                tally[kind] += 1
                return value
            tally["set aside " + kind] += 1
        sys.exit(f"FAILED: {row}: no {self.args.placement} run in "
                 f"{self.args.placement_tries} tries (round trips between "
                 f"CPUs 0 and 1 at or above {self.args.far_ns} ns count as "
                 "far); try later or with --placement any")

    def describe(self, row):
        tally = self.tally.get(row)
        if not tally:
            return "-"
        return ", ".join(f"{k} {tally[k]}" for k in sorted(
            tally, key=lambda k: (k.startswith("set aside"), k)))


def check_losses(args, name, path, tmp):
    """Both sides' losses on one fixed batch (see the module docstring);
    exits on a miss, else returns the relative differences."""
    data = os.path.join(tmp, name + "-batch")
    os.makedirs(data, exist_ok=True)
    threads = args.threads[0]
    tf = torch_step(args, name, path, threads, False, check_dir=data)
    tb = torch_step(args, name, path, threads, True, check_dir=data)
    af, ab = ([float(r["loss"]) for r in ampc_run(
        args, path, threads, bf16, tmp, data=data, steps=args.check_steps)]
        for bf16 in (False, True))
    d = {"ampc/torch f32": loss_diff(af, tf),
         "ampc bf16/f32": loss_diff(ab, af),
         "torch bf16/f32": loss_diff(tb, tf)}
    print(f"{name} losses over {args.check_steps} steps: torch f32 {tf}, "
          f"ampc f32 {af}, torch bf16 {tb}, ampc bf16 {ab}; max relative "
          "differences: " + ", ".join(f"{k} {v:.1e}" for k, v in d.items()),
          file=sys.stderr)
    limits = {"ampc/torch f32": 1e-3, "ampc bf16/f32": 5e-2,
              "torch bf16/f32": 5e-2}
    bad = [k for k, v in d.items() if not v <= limits[k]]
    if bad:
        sys.exit(f"FAILED: {name}: " + ", ".join(
            f"{k} differs by {d[k]:.2e} (limit {limits[k]})" for k in bad))
    return d


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=20,
                    help="timed steps per run, after 5 warm-up steps")
    ap.add_argument("--models", nargs="+", choices=list(MODELS),
                    default=DEFAULT_MODELS)
    ap.add_argument("--amp-run", default=os.path.join(ROOT, "build", "bin",
                                                      "amp-run"))
    ap.add_argument("--check-steps", type=int, default=5,
                    help="steps of the loss check on one fixed batch")
    ap.add_argument("--omp-default-wait", action="store_true")
    ap.add_argument("--placement", choices=["any", "near", "far"],
                    default="any",
                    help="which runs at 2+ threads count (see the module "
                    "docstring)")
    ap.add_argument("--far-ns", type=float, default=150.0,
                    help="round trip between CPUs 0 and 1 from which a run "
                    "counts as far")
    ap.add_argument("--placement-tries", type=int, default=20,
                    help="runs made before --placement near|far gives up on "
                    "one figure (3 s apart)")
    ap.add_argument("--core-latency", default=os.path.join(
        ROOT, "build", "bin", "ampc-core-latency"))
    ap.add_argument("--markdown", action="store_true")
    # The PyTorch child process.
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--model", help=argparse.SUPPRESS)
    ap.add_argument("--bf16", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--check-dir", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return torch_worker(args)

    rows = []
    placement = Placement(args)
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models:
            path = os.path.join(tmp, name + ".onnx")
            export(name, path)
            checked = check_losses(args, name, path, tmp)
            for threads in args.threads:
                t = {k: [] for k in ("af", "ab", "tf", "tb")}
                row = f"{name} at {threads} threads"
                for _ in range(args.rounds):
                    for bf16 in (False, True):
                        p = "b" if bf16 else "f"
                        dtype = "bf16" if bf16 else "f32"
                        t["a" + p].append(placement.timed(
                            threads, row, "ampc " + dtype, lambda: ampc_step(
                                args, path, threads, bf16, tmp)))
                        t["t" + p].append(placement.timed(
                            threads, row, "torch " + dtype, lambda: torch_step(
                                args, name, path, threads, bf16)))
                m = {k: statistics.median(v) for k, v in t.items()}
                for k in ("af", "ab", "tf", "tb"):
                    m[k + " spread"] = max(t[k]) / min(t[k]) - 1
                m["check"] = checked
                m["placement"] = placement.describe(row)
                rows.append((name, MODELS[name][1]["batch"], threads, m))
                print(f"{name} threads {threads}: ampc f32 {m['af']:.3f} ms, "
                      f"bf16 {m['ab']:.3f} ms; torch f32 {m['tf']:.3f} ms, "
                      f"bf16 {m['tb']:.3f} ms", file=sys.stderr)

    hdr = ["model", "batch", "threads", "ampc f32 ms", "ampc bf16 ms",
           "ampc bf16/f32", "torch f32 ms", "torch bf16 ms",
           "torch bf16/f32", "torch/ampc f32", "torch/ampc bf16",
           "ampc spread f32", "ampc spread bf16", "torch spread f32",
           "torch spread bf16", "loss ampc/torch f32", "placement"]
    lines = []
    for name, batch, threads, m in rows:
        lines.append([name, str(batch), str(threads), f"{m['af']:.2f}",
                      f"{m['ab']:.2f}", f"{m['ab'] / m['af']:.2f}",
                      f"{m['tf']:.2f}", f"{m['tb']:.2f}",
                      f"{m['tb'] / m['tf']:.2f}", f"{m['tf'] / m['af']:.2f}",
                      f"{m['tb'] / m['ab']:.2f}",
                      f"{m['af spread']:.0%}", f"{m['ab spread']:.0%}",
                      f"{m['tf spread']:.0%}", f"{m['tb spread']:.0%}",
                      f"{m['check']['ampc/torch f32']:.0e}",
                      m["placement"]])
    if args.markdown:
        print("| " + " | ".join(hdr) + " |")
        print("|" + "---|" * len(hdr))
        for l in lines:
            print("| " + " | ".join(l) + " |")
    else:
        w = [max(len(h), *(len(l[i]) for l in lines))
             for i, h in enumerate(hdr)]
        print("  ".join(h.rjust(w[i]) for i, h in enumerate(hdr)))
        for l in lines:
            print("  ".join(v.rjust(w[i]) for i, v in enumerate(l)))
    print("bf16/f32 below 1: AMP is faster; torch/ampc above 1: ampc is "
          "faster; spread: slowest over fastest of the rounds' medians, "
          "less 1; loss: the largest difference of ampc's f32 losses from "
          "PyTorch's over the check's steps, relative to the first loss; "
          "placement: the timed runs by where CPUs 0 and 1 were (round trip "
          f"below {args.far_ns:g} ns: near), with --placement "
          f"{args.placement}")


if __name__ == "__main__":
    main()
