#!/usr/bin/env python3
"""The PyTorch peer of one GPU benchmark model: the same network
(bench/gpu/models.py), batch and optimizer as the ampc Program, trained
with PyTorch's own AMP and timed the way amp-exec times ampc.

Variants (--variants, in this order by default):
  eager-foreach  eager autocast, torch.optim.SGD(momentum=0.9, foreach=True)
  eager-fused    eager autocast, SGD(..., fused=True): one fused kernel for
                 the update, which with a GradScaler also unscales and skips
                 on inf/NaN (PyTorch's strongest eager setting); skipped, with
                 the reason, where this torch or device has no fused SGD
  compile        torch.compile (default mode) of model + loss; the
                 optimizer step stays eager (fused where it exists, else
                 foreach; the record says which), as PyTorch's AMP recipe
                 runs it; skipped where torch has no torch.compile
Per dtype (f32, f16, bf16) one training step is
    opt.zero_grad(set_to_none=True)
    with torch.autocast(device, dtype, enabled=dtype != f32):
        loss = loss_fn(model(x), target)
    scaler.scale(loss).backward(); scaler.step(opt); scaler.update()
with a GradScaler for f16 only (bf16 needs no scaling, as in ampc); SGD
with momentum 0.9 computes `v = 0.9 v + g; w -= lr v`, the update ampc's
momentum optimizer computes. f32 is full f32 (TF32 off for matmuls and
cuDNN convolutions, as ampc uses TF32 only when asked).

Data: --batches K (default 4) random batches drawn once in (pageable)
host memory; step s uses batch s % K, as amp-exec's --synthetic-batches.

Timing, per step on the GPU, the split amp-exec makes (input_ms and
step_time_ms of its --metrics):
    e0.record()
    x = x_host.to('cuda', non_blocking=True); target = ... (the same)
    e1.record(); e1.synchronize()       # the batch is on the device
    <the step above>
    e2.record()
    loss.item()                         # the loss read on the host
input_ms = e0 -> e1 (the host-to-device copy of the batch), step_ms =
e1 -> e2 (the step alone), both CUDA event times; the host clock is read
at the same points (host_input_ms: copy until e1 is reached; host_step_ms:
from then until loss.item() returned, which is what amp-exec's host clock
spans) and reported beside them. The loss is read every step, as amp-exec
reads its loss (and found_inf) every step, so neither side runs ahead of
the GPU by more than a step. --warmup steps (compilation, cuDNN autotuning,
allocator growth) run first; the figures are the medians over --steps
timed steps. Peak memory: torch.cuda.max_memory_allocated over warm-up and
timed steps, after reset_peak_memory_stats, less what was allocated before
the model was built (weights, optimizer state, activations, gradients, the
batch on the device). On the CPU (the --dry-run) the host clock times the
same points and no peak is reported.

Writes one JSON line per (variant, dtype) to --jsonl as soon as it is done
(so a time-out keeps the finished ones): {kind: "bench", side:
"torch-<variant>", variant, optimizer, model, dtype, batch, status,
step_ms, input_ms, total_ms (median of the per-step sums), min_ms, max_ms,
host_step_ms, host_input_ms, steps, warmup, peak_bytes, loss_first,
loss_last, losses, torch, error}; status is ok, skipped (with the reason)
or failed.

usage: torch_peer.py --model NAME --dtypes f16,bf16 --steps N --warmup W
                     --lr LR --jsonl FILE [--variants eager-foreach,...]
                     [--batches K] [--size full|tiny] [--device cuda|cpu]
"""

import argparse
import contextlib
import gc
import json
import math
import os
import statistics
import sys
import time
import traceback

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402

VARIANTS = ["eager-foreach", "eager-fused", "compile"]
DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


class Skip(Exception):
    """This configuration cannot run here (reported as skipped, not failed)."""


def grad_scaler(enabled, device):
    if hasattr(torch, "amp") and hasattr(torch.amp, "GradScaler"):
        return torch.amp.GradScaler(device, enabled=enabled)
    return torch.cuda.amp.GradScaler(enabled=enabled)


def make_sgd(params, lr, kind):
    """SGD(momentum=0.9) with foreach=True or fused=True; Skip where this
    torch (or device) has no such implementation."""
    try:
        if kind == "fused":
            return torch.optim.SGD(params, lr=lr, momentum=0.9, fused=True)
        return torch.optim.SGD(params, lr=lr, momentum=0.9, foreach=True)
    except (TypeError, RuntimeError, ValueError) as e:
        raise Skip("torch %s: SGD(%s=True): %s" %
                   (torch.__version__, kind, str(e).splitlines()[0][:200]))


def run_one(args, variant, dtype_name, batches):
    dev = args.device
    cuda = dev == "cuda"
    dtype = DTYPES[dtype_name]
    low = dtype != torch.float32
    if low and not cuda and dtype == torch.float16:
        raise Skip("autocast f16 is not supported on the CPU by torch %s"
                   % torch.__version__)
    if variant == "compile" and not hasattr(torch, "compile"):
        raise Skip("torch %s has no torch.compile" % torch.__version__)
    # What an earlier run of this process left allocated (if anything) is
    # not this one's.
    base = torch.cuda.memory_allocated() if cuda else 0
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    torch.manual_seed(0)
    # Built on the device where torch can (2.x: torch.device is a context
    # manager), not drawn on the CPU and copied: 2.4 GB for the 8192 MLP.
    where = (torch.device(dev) if hasattr(torch.device, "__enter__")
             else contextlib.nullcontext())
    with where:
        net = models.network(args.model, args.size)
    net = net.to(dev).train()
    loss_fn = models.loss_fn(args.model)

    def forward(x, target):
        return loss_fn(net(x), target)

    step_fn = forward
    if variant == "compile":
        step_fn = torch.compile(forward)
        try:
            opt, opt_kind = make_sgd(net.parameters(), args.lr, "fused"), \
                "fused"
        except Skip:
            opt, opt_kind = make_sgd(net.parameters(), args.lr, "foreach"), \
                "foreach"
    else:
        opt_kind = variant.split("-")[1]
        opt = make_sgd(net.parameters(), args.lr, opt_kind)
    scaler = grad_scaler(dtype == torch.float16 and cuda, dev)

    def copy_in(s):
        # non_blocking on pageable memory: the driver stages the bytes, the
        # same cuMemcpyHtoDAsync from pageable memory amp-exec's setInput
        # makes.
        x_host, t_host = batches[s % len(batches)]
        return (x_host.to(dev, non_blocking=True),
                t_host.to(dev, non_blocking=True))

    def step(x, target):
        opt.zero_grad(set_to_none=True)
        with (torch.autocast(dev, dtype=dtype) if low
              else contextlib.nullcontext()):
            loss = step_fn(x, target)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        return loss

    losses = []
    ev_in, ev_step, host_in, host_step = [], [], [], []
    total = args.warmup + args.steps
    for s in range(total):
        timed = s >= args.warmup
        if cuda:
            e0, e1, e2 = (torch.cuda.Event(enable_timing=True)
                          for _ in range(3))
            t0 = time.perf_counter()
            e0.record()
            x, target = copy_in(s)
            e1.record()
            e1.synchronize()
            t1 = time.perf_counter()
            loss = step(x, target)
            e2.record()
            value = loss.item()
            t2 = time.perf_counter()
        else:
            t0 = time.perf_counter()
            x, target = copy_in(s)
            t1 = time.perf_counter()
            value = step(x, target).item()
            t2 = time.perf_counter()
        losses.append(value)
        if timed:
            host_in.append((t1 - t0) * 1e3)
            host_step.append((t2 - t1) * 1e3)
            if cuda:
                ev_in.append(e0.elapsed_time(e1))
                ev_step.append(e1.elapsed_time(e2))
    if not cuda:
        ev_in, ev_step = host_in, host_step
    totals = [a + b for a, b in zip(ev_in, ev_step)]
    rec = dict(optimizer=opt_kind,
               step_ms=statistics.median(ev_step),
               input_ms=statistics.median(ev_in),
               total_ms=statistics.median(totals),
               min_ms=min(ev_step), max_ms=max(ev_step),
               host_step_ms=statistics.median(host_step),
               host_input_ms=statistics.median(host_in),
               clock="cuda-events" if cuda else "host",
               steps=args.steps, warmup=args.warmup,
               peak_bytes=(torch.cuda.max_memory_allocated() - base
                           if cuda else None),
               loss_first=losses[0], loss_last=losses[-1],
               losses=losses if len(losses) <= 64 else None)
    if not all(math.isfinite(v) for v in (losses[0], losses[-1])):
        rec["note"] = "non-finite loss"
    return rec


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, choices=models.MODELS)
    p.add_argument("--size", default="full", choices=sorted(models.SIZES))
    p.add_argument("--dtypes", required=True)
    p.add_argument("--variants", default=",".join(VARIANTS))
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--steps-f32", type=int)
    p.add_argument("--warmup", type=int, required=True)
    p.add_argument("--batches", type=int, default=4)
    p.add_argument("--lr", type=float, required=True)
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--jsonl", required=True)
    args = p.parse_args()
    if args.steps < 1 or args.warmup < 0 or args.batches < 1:
        sys.exit("bench/gpu/torch_peer.py: --steps >= 1, --warmup >= 0, "
                 "--batches >= 1")
    variants = args.variants.split(",")
    for v in variants:
        if v not in VARIANTS:
            sys.exit("bench/gpu/torch_peer.py: --variants: unknown %r (%s)"
                     % (v, ", ".join(VARIANTS)))
    dtypes = args.dtypes.split(",")
    for d in dtypes:
        if d not in DTYPES:
            sys.exit("bench/gpu/torch_peer.py: --dtypes: unknown dtype %r "
                     "(f32, f16, bf16)" % d)
    if args.device == "cuda":
        if not torch.cuda.is_available():
            sys.exit("bench/gpu/torch_peer.py: --device cuda: torch %s sees "
                     "no CUDA device" % torch.__version__)
        torch.backends.cudnn.benchmark = True  # PyTorch's fast setting
        # f32 means f32, as in ampc (TF32 only when asked): PyTorch's
        # matmuls default to it, its cuDNN convolutions do not.
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    # The batches, from their own CPU generator: the same on every device
    # and for every variant.
    gen = torch.Generator()
    gen.manual_seed(0)
    batches = [models.random_batch(args.model, args.size, "cpu", gen)
               for _ in range(args.batches)]
    failed = False
    steps = args.steps
    for variant in variants:
        for d in dtypes:
            args.steps = args.steps_f32 if (d == "f32" and args.steps_f32) \
                else steps
            rec = dict(kind="bench", side="torch-" + variant, variant=variant,
                       model=args.model, dtype=d,
                       batch=models.batch_size(args.model, args.size),
                       device=(torch.cuda.get_device_name()
                               if args.device == "cuda" else "cpu"),
                       torch=torch.__version__)
            t0 = time.monotonic()
            try:
                rec.update(status="ok", **run_one(args, variant, d, batches))
            except Skip as e:
                rec.update(status="skipped", error=str(e))
            except Exception as e:  # one run's failure is its row's, not all
                failed = True
                rec.update(status="failed", error="%s: %s" % (
                    type(e).__name__, str(e).splitlines()[0][:400]
                    if str(e) else ""))
                traceback.print_exc()
            rec["seconds"] = round(time.monotonic() - t0, 2)
            gc.collect()
            if args.device == "cuda":
                torch.cuda.empty_cache()
            if hasattr(torch, "_dynamo"):
                torch._dynamo.reset()
            print("bench/gpu/torch_peer.py:", json.dumps(rec), flush=True)
            with open(args.jsonl, "a") as f:
                f.write(json.dumps(rec) + "\n")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
