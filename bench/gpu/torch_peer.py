#!/usr/bin/env python3
"""The PyTorch peer of one GPU benchmark model: the same network
(bench/gpu/models.py), batch and optimizer as the ampc Program, trained
with PyTorch's own AMP and timed the same way.

Per dtype (f32, f16, bf16), one training step is
    opt.zero_grad(set_to_none=True)
    with torch.autocast(device, dtype, enabled=dtype != f32):
        loss = loss_fn(model(x), target)
    scaler.scale(loss).backward(); scaler.step(opt); scaler.update()
with a GradScaler for f16 only (bf16 needs no scaling, as in ampc), and
torch.optim.SGD(lr, momentum=0.9): `v = 0.9 v + g; w -= lr v`, the update
ampc's momentum optimizer computes. f32 is full f32 (TF32 off for
matmuls and cuDNN convolutions, as ampc uses TF32 only when asked).
--mode compile wraps model and loss in
torch.compile (default mode); the optimizer step stays eager (foreach), as
PyTorch's AMP recipe runs it.

Timing: one fixed random batch in (pageable) host memory, copied to the
device with .to(device) inside each step, as amp-exec copies each step's
synthetic batch from host memory (Session::setInput, cuMemcpyHtoDAsync
from pageable memory) inside its step clock: both sides pay the
host-to-device copy (inside the CUDA events here) and neither loads data;
--warmup steps (compilation, cuDNN autotuning, allocator growth)
are run first, then each of --steps steps is timed between CUDA events and
the median is reported. Peak memory: torch.cuda.max_memory_allocated over
the warm-up and the timed steps, after reset_peak_memory_stats (the
tensors PyTorch's caching allocator handed out: weights, optimizer state,
activations, gradients, the batch; less what was allocated before the
model was built). On the CPU (the --dry-run) the host
clock times each step and no peak is reported.

Writes one JSON line per dtype to --jsonl as soon as that dtype is done
(so a time-out keeps the finished ones): {side, model, dtype, batch,
status, median_ms, min_ms, max_ms, steps, peak_bytes, loss_first,
loss_last, error}.

usage: torch_peer.py --model NAME --dtypes f16,bf16 --mode eager|compile
                     --steps N --warmup W --lr LR --jsonl FILE
                     [--size full|tiny] [--device cuda|cpu]
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

class Skip(Exception):
    """This configuration cannot run here (reported as skipped, not failed)."""


DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def grad_scaler(enabled, device):
    if hasattr(torch, "amp") and hasattr(torch.amp, "GradScaler"):
        return torch.amp.GradScaler(device, enabled=enabled)
    return torch.cuda.amp.GradScaler(enabled=enabled)


def run_one(args, dtype_name):
    dev = args.device
    cuda = dev == "cuda"
    # What an earlier dtype of this process left allocated (if anything)
    # is not this one's.
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
    # The batch stays on the host; each step copies it (see the timing
    # note above). Drawn from its own CPU generator so that it is the same
    # batch on every device.
    host_gen = torch.Generator()
    host_gen.manual_seed(0)
    x_host, target_host = models.random_batch(args.model, args.size, "cpu",
                                              host_gen)
    dtype = DTYPES[dtype_name]
    low = dtype != torch.float32
    if low and dev == "cpu" and dtype == torch.float16:
        raise Skip("autocast f16 is not supported on the CPU by "
                           "torch %s" % torch.__version__)

    def forward(x, target):
        return loss_fn(net(x), target)

    step_fn = forward
    if args.mode == "compile":
        if not hasattr(torch, "compile"):
            raise Skip("torch %s has no torch.compile"
                               % torch.__version__)
        step_fn = torch.compile(forward)
    opt = torch.optim.SGD(net.parameters(), lr=args.lr, momentum=0.9)
    scaler = grad_scaler(dtype == torch.float16 and cuda, dev)

    def step():
        # non_blocking on pageable memory: the driver stages the bytes
        # before returning and the host does not wait for the stream, the
        # same cuMemcpyHtoDAsync amp-exec's setInput makes.
        x = x_host.to(dev, non_blocking=True)
        target = target_host.to(dev, non_blocking=True)
        opt.zero_grad(set_to_none=True)
        with (torch.autocast(dev, dtype=dtype) if low
              else contextlib.nullcontext()):
            loss = step_fn(x, target)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        return loss

    losses, times = [], []
    for _ in range(args.warmup):
        losses.append(step().detach())
    if cuda:
        events = [(torch.cuda.Event(enable_timing=True),
                   torch.cuda.Event(enable_timing=True))
                  for _ in range(args.steps)]
        for start, end in events:
            start.record()
            losses.append(step().detach())
            end.record()
        torch.cuda.synchronize()
        times = [s.elapsed_time(e) for s, e in events]
    else:
        for _ in range(args.steps):
            t0 = time.perf_counter()
            losses.append(step().detach())
            times.append((time.perf_counter() - t0) * 1e3)
    vals = [float(v) for v in losses]
    rec = dict(median_ms=statistics.median(times), min_ms=min(times),
               max_ms=max(times), steps=args.steps,
               peak_bytes=(torch.cuda.max_memory_allocated() - base
                           if cuda else None),
               loss_first=vals[0], loss_last=vals[-1])
    if not all(math.isfinite(v) for v in (vals[0], vals[-1])):
        rec["note"] = "non-finite loss"
    return rec


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, choices=models.MODELS)
    p.add_argument("--size", default="full", choices=sorted(models.SIZES))
    p.add_argument("--dtypes", required=True)
    p.add_argument("--mode", required=True, choices=["eager", "compile"])
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--steps-f32", type=int)
    p.add_argument("--warmup", type=int, required=True)
    p.add_argument("--lr", type=float, required=True)
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--jsonl", required=True)
    args = p.parse_args()
    if args.device == "cuda":
        if not torch.cuda.is_available():
            sys.exit("bench/gpu/torch_peer.py: --device cuda: torch %s sees "
                     "no CUDA device" % torch.__version__)
        torch.backends.cudnn.benchmark = True  # PyTorch's fast setting
        # f32 means f32, as in ampc (TF32 only when asked): PyTorch's
        # matmuls default to it, its cuDNN convolutions do not.
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    failed = False
    steps = args.steps
    for d in args.dtypes.split(","):
        if d not in DTYPES:
            sys.exit("bench/gpu/torch_peer.py: --dtypes: unknown dtype %r "
                     "(f32, f16, bf16)" % d)
        args.steps = args.steps_f32 if (d == "f32" and args.steps_f32) \
            else steps
        rec = dict(side="torch-" + args.mode, model=args.model, dtype=d,
                   batch=models.batch_size(args.model, args.size),
                   torch=torch.__version__)
        try:
            rec.update(status="ok", **run_one(args, d))
        except Skip as e:
            rec.update(status="skipped", error=str(e))
        except Exception as e:  # one dtype's failure is its row's, not all
            failed = True
            rec.update(status="failed", error="%s: %s" % (type(e).__name__,
                                                           str(e)[:400]))
            traceback.print_exc()
        gc.collect()
        if args.device == "cuda":
            torch.cuda.empty_cache()
        print("bench/gpu/torch_peer.py:", json.dumps(rec), flush=True)
        with open(args.jsonl, "a") as f:
            f.write(json.dumps(rec) + "\n")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
