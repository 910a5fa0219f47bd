#!/usr/bin/python3
"""CPU training-step benchmark: ampc (amp-run --mode train) vs eager PyTorch.

For each reference training model /work/shared/models/<model>_train_op17
(lenet5, mlp9, msmlp: inputs (x, target), outputs (loss, output)) this
measures the time of one fp32 training step, forward + backward + SGD with
momentum 0.9 at the reference learning rate, on the reference batches
/work/shared/models/reference/<model>/data/batch_{0..3} (step s uses batch
s % 4), from the weights in the ONNX file:

* ampc: `amp-run MODEL --mode train --data DIR --steps W+R --optimizer
  momentum --lr LR --momentum 0.9 --metrics FILE.csv --threads T`, where DIR
  holds x.npy and target.npy (the four batches concatenated on axis 0) and
  the CSV holds the time of each compiled step alone (no data loading); we
  take the median of the steps after W warm-up steps.
* PyTorch: an eager executor of the same ONNX graph with autograd (the op
  functions of bench/forward_cpu.py plus Sub, Mul, ReduceMean and
  SoftmaxCrossEntropyLoss), the trainable initializers as leaf tensors,
  torch.optim.SGD(momentum=0.9, lr=LR); each step (zero_grad, forward,
  backward, optimizer.step) is timed with time.perf_counter, median after W
  warm-up steps.

Torch's OpenMP workers run with OMP_WAIT_POLICY=PASSIVE unless
--omp-default-wait is given or the environment sets OMP_WAIT_POLICY: with
libgomp's default (spin a while before sleeping) torch's 2-thread steps on a
2-core machine are slower than its 1-thread steps, because the spinning
worker takes the core OpenBLAS's worker needs. amp-run keeps libgomp's
default: its kernels and oneDNN's share one OpenMP team and its OpenBLAS calls
run on the calling thread (docs/runtime.md), so no spinning thread holds a
core another needs, and passive waiting makes its 2-thread steps several times
slower (each of a step's kernels would wake a sleeping thread). A
PASSIVE this script set for torch is not passed on to amp-run; one from the
environment is.

Threads: T applies to both sides and to OpenBLAS, which both sides call for
their GEMMs and which otherwise runs its own pool of one thread per core
whatever --threads / torch.set_num_threads say: amp-run gets
OPENBLAS_NUM_THREADS=T, and this process calls openblas_set_num_threads(T)
on the OpenBLAS that torch loaded, next to torch.set_num_threads(T).

Correctness first: the per-step losses of the first 20 steps of both sides
must agree within --rtol (1e-4) relative of each other and of the fp32
losses in reference.json (PyTorch's own reference run) before any time is
reported; every timed round is checked the same way. A mismatch makes the
model FAILED, it gets no time, and the script exits 1.

bf16 (issue 22): each round also trains both sides at AMP bf16, ampc with
`--amp O2 --amp-dtype bf16` and PyTorch's executor under
torch.autocast("cpu", torch.bfloat16) (PyTorch's CPU AMP: its
convolutions and GEMMs in bf16, on the same oneDNN as ampc's), from the
same weights on the same batches. Each side's bf16 losses of the first 20
steps must stay within --bf16-rtol (5e-2) of its own f32 losses, relative
to the first loss, or the model is FAILED. The table gives each side's
bf16 step, its bf16/f32 ratio (below 1: AMP is faster) and PyTorch's bf16
step over ampc's. The ResNet-18 figures of issue 22 come from
bench/amp_cpu.py, which trains PyTorch's own modules: this executor runs
the reference ONNX graphs, which have no training-mode batch norm.

Also measured: the forward pass alone on batch 0 (amp-run --mode infer on the
same training model, i.e. forward + loss, --repeat R; PyTorch under
torch.no_grad()), to give each side's train/forward time ratio.

The two sides alternate in --rounds rounds (each round starts again from the
ONNX weights, so both sides do the same arithmetic), so background load hits
both alike; each figure is the median of the round medians.

Ratio = PyTorch median / ampc median: > 1 means ampc is faster.

Run with Debian's python (python3-torch 1.13, python3-onnx, numpy), from the
repository root, after building amp-run:

    /usr/bin/python3 bench/train_cpu.py [--steps 100] [--rounds 7] [--threads 1 2]
        [--omp-default-wait] [--markdown]
"""

import argparse
import csv
import ctypes
import json
import os
import statistics
import sys
import tempfile
import time

# libgomp reads OMP_WAIT_POLICY when torch loads it, so this is decided
# before the import. By default idle OpenMP workers spin for a while; on two
# cores that spinning takes the core OpenBLAS's own worker needs, and torch's
# 2-thread steps came out slower than its 1-thread steps (up to 4x under
# load).
# PASSIVE lets them sleep; --omp-default-wait keeps libgomp's default.
OMP_DEFAULT_WAIT = "--omp-default-wait" in sys.argv[1:]
PASSIVE_FOR_TORCH = not OMP_DEFAULT_WAIT and "OMP_WAIT_POLICY" not in os.environ
if PASSIVE_FOR_TORCH:
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import numpy_helper  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_util  # noqa: E402
from bench_util import MODELS_DIR  # noqa: E402
import forward_cpu as fwd  # noqa: E402  (the eager forward op functions)

REFERENCE_DIR = os.path.join(MODELS_DIR, "reference")
CHECKED_STEPS = 20  # steps in reference.json


# ---------------------------------------------------------------------------
# Eager PyTorch training executor for the *_train_op17 graphs.
# ---------------------------------------------------------------------------

def _unsupported(node, what):
    bench_util.unsupported("train_cpu.py", node, what)


def _reduce_mean(node, a, x):
    # Opset 17 carries the axes as an attribute (opset 18 moved them to an
    # input, which this executor would not see).
    if len(node.input) > 1:
        _unsupported(node, "axes as an input")
    axes = a.get("axes")
    keep = bool(a.get("keepdims", 1))
    if axes is None:
        return x.mean().reshape([1] * x.dim()) if keep else x.mean()
    return x.mean(dim=[int(d) for d in axes], keepdim=keep)


def _softmax_ce(node, a, scores, labels, weights=None):
    if weights is not None or len(node.output) > 1:
        _unsupported(node, "class weights / the log_prob output")
    reduction = a.get("reduction", b"mean")
    if isinstance(reduction, bytes):
        reduction = reduction.decode()
    return F.cross_entropy(scores, labels, reduction=reduction,
                           ignore_index=a.get("ignore_index", -100))


_TRAIN_OPS = dict(fwd._OPS)
_TRAIN_OPS.update({
    "Sub": lambda node, a, x, y: x - y,
    "Mul": lambda node, a, x, y: x * y,
    "ReduceMean": _reduce_mean,
    "SoftmaxCrossEntropyLoss": _softmax_ce,
})


class OnnxTorchTrainer(bench_util.EagerGraph):
    """Trains an ONNX training graph node by node with eager PyTorch ops."""

    def __init__(self, model, trainable, lr, momentum):
        g = model.graph
        self.initial = {t.name: numpy_helper.to_array(t).copy()
                        for t in g.initializer}
        missing = [n for n in trainable if n not in self.initial]
        if missing:
            raise ValueError(f"trainable parameters {missing} are not "
                             f"initializers of the model")
        self.trainable = list(trainable)
        self.lr, self.momentum = lr, momentum
        super().__init__(g, _TRAIN_OPS, "train_cpu.py", self.initial)
        self.reset()

    def reset(self):
        """Back to the ONNX weights and a fresh optimizer (zero momentum)."""
        self.weights = {}
        for name, arr in self.initial.items():
            t = torch.from_numpy(arr.copy())
            if name in self.trainable:
                t.requires_grad_(True)
            self.weights[name] = t
        self.opt = torch.optim.SGD([self.weights[n] for n in self.trainable],
                                   lr=self.lr, momentum=self.momentum)

    def step(self, inputs, loss_index):
        self.opt.zero_grad(set_to_none=True)
        loss = self(*inputs)[loss_index]
        loss.backward()
        self.opt.step()
        return loss


def torch_train(trainer, batches, loss_index, steps, bf16=False):
    """Runs `steps` steps from the ONNX weights, under PyTorch's CPU
    autocast to bf16 when `bf16`; per-step (loss, ms)."""
    trainer.reset()
    losses, times = [], []
    for s in range(steps):
        inputs = batches[s % len(batches)]
        t0 = time.perf_counter()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss = trainer.step(inputs, loss_index)
        times.append((time.perf_counter() - t0) * 1e3)
        losses.append(float(loss.item()))
    return losses, times


# ---------------------------------------------------------------------------
# amp-run
# ---------------------------------------------------------------------------

def _amp_env(threads):
    env = dict(os.environ)
    if PASSIVE_FOR_TORCH:
        del env["OMP_WAIT_POLICY"]
    env["OPENBLAS_NUM_THREADS"] = str(threads)
    return env


def amp_train(args, model_path, data_dir, lr, steps, threads, tmp,
              bf16=False):
    metrics = os.path.join(tmp, "metrics.csv")
    bench_util.run_amp(
        [args.amp_run, model_path, "--mode", "train", "--data", data_dir,
         "--steps", str(steps), "--optimizer", "momentum", "--lr", repr(lr),
         "--momentum", "0.9", "--metrics", metrics, "--threads",
         str(threads)] + (["--amp", "O2", "--amp-dtype", "bf16"]
                          if bf16 else []), _amp_env(threads))
    losses, times = [], []
    with open(metrics, newline="") as f:
        for row in csv.DictReader(f):
            # float(): the step column is a number the writer may print
            # with an exponent.
            if int(float(row["step"])) != len(losses):
                raise RuntimeError(f"{metrics}: step {row['step']} out of "
                                   f"order")
            losses.append(float(row["loss"]))
            times.append(float(row["step_time_ms"]))
    if len(losses) != steps:
        raise RuntimeError(f"{metrics}: {len(losses)} rows, expected {steps}")
    return losses, times


# ---------------------------------------------------------------------------

def max_rel_diff(a, b):
    return max(abs(x - y) / max(abs(y), 1e-30) for x, y in zip(a, b))


def load_model(name):
    d = os.path.join(MODELS_DIR, f"{name}_train_op17")
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    with open(os.path.join(REFERENCE_DIR, name, "reference.json")) as f:
        ref = json.load(f)
    opt = meta["optimizer"]
    if (opt["kind"] != "SGD" or opt["dampening"] or opt["nesterov"] or
            opt["weight_decay"]):
        raise ValueError(f"{name}: optimizer {opt} is not plain SGD with "
                         f"momentum")
    return os.path.join(d, "model.onnx"), meta, ref


def set_threads(threads, blas):
    torch.set_num_threads(threads)
    blas.openblas_set_num_threads(threads)
    got = (torch.get_num_threads(), blas.openblas_get_num_threads())
    if got != (threads, threads):
        raise RuntimeError(f"asked for {threads} threads, torch/OpenBLAS "
                           f"report {got}")


def bench_model(name, args, blas):
    model_path, meta, ref = load_model(name)
    opt = meta["optimizer"]
    lr, momentum = float(opt["lr"]), float(opt["momentum"])
    trainer = OnnxTorchTrainer(onnx.load(model_path),
                               meta["trainable_initializers"], lr, momentum)
    if trainer.input_names != ["x", "target"]:
        raise ValueError(f"{name}: inputs {trainer.input_names}, expected "
                         f"['x', 'target'] (amp-run --data reads <name>.npy)")
    loss_index = trainer.output_names.index("loss")
    ref_losses = ref["fp32"]["loss"][:CHECKED_STEPS]

    data = os.path.join(REFERENCE_DIR, name, "data")
    nb = len([b for b in os.listdir(data) if b.startswith("batch_")])
    files = [[os.path.join(data, f"batch_{b}", f"input_{k}.pb")
              for k in range(2)] for b in range(nb)]
    arrays = [[bench_util.read_pb(p) for p in fs] for fs in files]
    batches = [[torch.from_numpy(a.copy()) for a in bs] for bs in arrays]

    steps = args.warmup + args.steps
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = os.path.join(tmp, "data")
        os.mkdir(data_dir)
        for k, n in enumerate(trainer.input_names):
            np.save(os.path.join(data_dir, f"{n}.npy"),
                    np.concatenate([bs[k] for bs in arrays], axis=0))
        fwd_inputs = list(zip(trainer.input_names, files[0]))

        for threads in args.threads:
            set_threads(threads, blas)
            row = {"model": name, "batch": arrays[0][0].shape[0],
                   "threads": threads, "ok": True, "amp_diff": 0.0,
                   "torch_ref_diff": 0.0, "bf16_diff": 0.0}

            def check(al, tl):
                # Every run of both sides against each other and the
                # reference, over the first CHECKED_STEPS steps.
                n = min(CHECKED_STEPS, len(al))
                row["amp_diff"] = max(row["amp_diff"],
                                      max_rel_diff(al[:n], tl[:n]))
                row["torch_ref_diff"] = max(
                    row["torch_ref_diff"],
                    max_rel_diff(tl[:n], ref_losses[:n]),
                    max_rel_diff(al[:n], ref_losses[:n]))
                if (not np.all(np.isfinite(al[:n] + tl[:n])) or
                        row["amp_diff"] > args.rtol or
                        row["torch_ref_diff"] > args.rtol):
                    row["ok"] = False
                    print(f"{name}, {threads} threads: losses differ beyond "
                          f"--rtol {args.rtol}\n  ampc:      {al[:n]}\n"
                          f"  torch:     {tl[:n]}\n  reference: "
                          f"{ref_losses[:n]}", file=sys.stderr, flush=True)
                return row["ok"]

            def check_bf16(al16, tl16):
                # Each side's bf16 losses against its own f32 losses of the
                # checked run.
                n = min(CHECKED_STEPS, len(al16))
                row["bf16_diff"] = max(
                    row["bf16_diff"], bench_util.loss_diff(al16[:n], al[:n]),
                    bench_util.loss_diff(tl16[:n], tl[:n]))
                if (not np.all(np.isfinite(al16[:n] + tl16[:n])) or
                        row["bf16_diff"] > args.bf16_rtol):
                    row["ok"] = False
                    print(f"{name}, {threads} threads: bf16 losses leave "
                          f"the f32 ones beyond --bf16-rtol "
                          f"{args.bf16_rtol}\n  ampc bf16:  {al16[:n]}\n"
                          f"  ampc f32:   {al[:n]}\n  torch bf16: "
                          f"{tl16[:n]}\n  torch f32:  {tl[:n]}",
                          file=sys.stderr, flush=True)
                return row["ok"]

            # Correctness first: one checked run each before any timing.
            al, _ = amp_train(args, model_path, data_dir, lr, CHECKED_STEPS,
                              threads, tmp)
            tl, _ = torch_train(trainer, batches, loss_index, CHECKED_STEPS)
            if not check(al, tl):
                rows.append(row)
                continue
            al16, _ = amp_train(args, model_path, data_dir, lr,
                                CHECKED_STEPS, threads, tmp, bf16=True)
            tl16, _ = torch_train(trainer, batches, loss_index,
                                  CHECKED_STEPS, bf16=True)
            if not check_bf16(al16, tl16):
                rows.append(row)
                continue

            amp, tor, amp_f, tor_f, amp16, tor16 = [], [], [], [], [], []
            for _ in range(args.rounds):
                al, at = amp_train(args, model_path, data_dir, lr, steps,
                                   threads, tmp)
                tl, tt = torch_train(trainer, batches, loss_index, steps)
                if not check(al, tl):
                    break
                al16, at16 = amp_train(args, model_path, data_dir, lr, steps,
                                       threads, tmp, bf16=True)
                tl16, tt16 = torch_train(trainer, batches, loss_index, steps,
                                         bf16=True)
                if not check_bf16(al16, tl16):
                    break
                amp.append(statistics.median(at[args.warmup:]))
                tor.append(statistics.median(tt[args.warmup:]))
                amp16.append(statistics.median(at16[args.warmup:]))
                tor16.append(statistics.median(tt16[args.warmup:]))
                amp_f.append(bench_util.amp_infer(
                    args.amp_run, model_path, fwd_inputs, args.steps,
                    threads, env=_amp_env(threads)))
                tor_f.append(bench_util.time_torch(
                    trainer, batches[0], args.steps, args.warmup,
                    torch.no_grad))
            if row["ok"]:
                row.update(amp_ms=statistics.median(amp),
                           torch_ms=statistics.median(tor),
                           amp_fwd_ms=statistics.median(amp_f),
                           torch_fwd_ms=statistics.median(tor_f),
                           amp_bf16_ms=statistics.median(amp16),
                           torch_bf16_ms=statistics.median(tor16),
                           amp_spread=(min(amp), max(amp)),
                           torch_spread=(min(tor), max(tor)))
            rows.append(row)
    return rows


def find_openblas():
    """The OpenBLAS that torch loaded (Debian's torch links libblas.so.3)."""
    with open("/proc/self/maps") as f:
        paths = {line.split()[-1] for line in f if "openblas" in line}
    libs = sorted(p for p in paths if os.path.basename(p).startswith(
        "libopenblas"))
    if len(libs) != 1:
        raise RuntimeError(f"expected one OpenBLAS loaded by torch, found "
                           f"{libs or 'none'}")
    blas = ctypes.CDLL(libs[0])
    blas.openblas_get_num_threads.restype = ctypes.c_int
    blas.openblas_set_num_threads.argtypes = [ctypes.c_int]
    return blas, libs[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    bench_util.add_models_arg(ap, "train")
    ap.add_argument("--steps", type=int, default=100,
                    help="timed training steps per round and side after the "
                         "warm-up (median reported); also the forward "
                         "repeats")
    ap.add_argument("--warmup", type=int, default=5,
                    help="untimed steps at the start of each round")
    ap.add_argument("--rounds", type=int, default=7,
                    help="alternating ampc/torch rounds; the median of the "
                         "round medians is reported")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2],
                    help="thread counts to measure, each for amp-run, torch "
                         "and OpenBLAS (default: %(default)s)")
    bench_util.add_amp_run_arg(ap)
    ap.add_argument("--rtol", type=float, default=1e-4,
                    help="max relative loss difference over the first %d "
                         "steps, ampc vs torch and both vs reference.json, "
                         "before a model is FAILED (default: %%(default)s)" %
                         CHECKED_STEPS)
    ap.add_argument("--bf16-rtol", type=float, default=5e-2,
                    help="max difference of each side's bf16 losses from "
                         "its f32 losses over the first %d steps, relative "
                         "to the first loss (default: %%(default)s)" %
                         CHECKED_STEPS)
    ap.add_argument("--omp-default-wait", action="store_true",
                    help="keep libgomp's default wait policy for torch's "
                         "OpenMP threads instead of OMP_WAIT_POLICY=PASSIVE "
                         "(an OMP_WAIT_POLICY already in the environment is "
                         "always kept)")
    bench_util.add_markdown_arg(ap)
    args = ap.parse_args()
    if args.steps < 2 or args.rounds < 1 or args.warmup < 0:
        ap.error("need --steps >= 2, --rounds >= 1, --warmup >= 0")
    if any(t < 1 for t in args.threads):
        ap.error("--threads must be positive")
    bench_util.check_paths(ap, args, "train")

    blas, blas_path = find_openblas()
    print(f"threads: {args.threads} (amp-run --threads and "
          f"OPENBLAS_NUM_THREADS; torch.set_num_threads and "
          f"openblas_set_num_threads on {blas_path}); {args.rounds} rounds "
          f"x ({args.warmup} warm-up + {args.steps}) steps; torch "
          f"{torch.__version__}; OMP_WAIT_POLICY="
          f"{os.environ.get('OMP_WAIT_POLICY', '(unset)')}"
          f"{' for torch only' if PASSIVE_FOR_TORCH else ''}; load average at "
          f"start "
          f"{os.getloadavg()[0]:.2f}", flush=True)

    rows = [row for name in bench_util.each_model(args.models)
            for row in bench_model(name, args, blas)]

    hdr = ["model", "batch", "threads", "ampc step ms", "torch step ms",
           "ratio", "ampc bf16 ms", "torch bf16 ms", "ampc bf16/f32",
           "torch bf16/f32", "bf16 ratio", "ampc fwd ms", "torch fwd ms",
           "ampc train/fwd", "torch train/fwd", "loss rel diff ampc-torch",
           "loss rel diff vs ref", "bf16 loss diff"]
    table = []
    for r in rows:
        if r["ok"]:
            vals = [f"{r['amp_ms']:.3f}", f"{r['torch_ms']:.3f}",
                    f"{r['torch_ms'] / r['amp_ms']:.2f}",
                    f"{r['amp_bf16_ms']:.3f}", f"{r['torch_bf16_ms']:.3f}",
                    f"{r['amp_bf16_ms'] / r['amp_ms']:.2f}",
                    f"{r['torch_bf16_ms'] / r['torch_ms']:.2f}",
                    f"{r['torch_bf16_ms'] / r['amp_bf16_ms']:.2f}",
                    f"{r['amp_fwd_ms']:.3f}", f"{r['torch_fwd_ms']:.3f}",
                    f"{r['amp_ms'] / r['amp_fwd_ms']:.1f}",
                    f"{r['torch_ms'] / r['torch_fwd_ms']:.1f}"]
        else:
            vals = ["FAILED (losses differ)"] + ["-"] * 11
        table.append([r["model"], str(r["batch"]), str(r["threads"])] + vals +
                     [f"{r['amp_diff']:.1e}", f"{r['torch_ref_diff']:.1e}",
                      f"{r['bf16_diff']:.1e}"])

    bench_util.print_table(hdr, table)
    print("ratio = torch step median / ampc step median (> 1: ampc faster), "
          "bf16 ratio the same at bf16; bf16/f32 < 1: AMP faster; bf16 loss "
          "diff: the largest of either side's bf16 losses from its f32 "
          "ones, relative to the first loss; f32 round medians min-max:")
    for r in rows:
        if r["ok"]:
            print(f"  {r['model']} threads {r['threads']}: ampc "
                  f"{r['amp_spread'][0]:.3f}-{r['amp_spread'][1]:.3f}, torch "
                  f"{r['torch_spread'][0]:.3f}-{r['torch_spread'][1]:.3f}")
    if args.markdown:
        bench_util.print_markdown(hdr, table)
    print(f"load average at end {os.getloadavg()[0]:.2f}")
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
