#!/usr/bin/python3
"""CPU forward-pass benchmark: ampc (amp-run) vs eager PyTorch on the same CPU.

For each reference model /work/shared/models/<model>_eval_op17 (lenet5, mlp9,
msmlp) this measures the time of one inference forward pass on the batch in
test_data_set_0:

* ampc: `amp-run MODEL --mode infer --input NAME=FILE ... --repeat R
  --threads N`, which compiles the model once and then times R calls of
  Session::run only (inputs already set, compile excluded); we report the
  median it prints.
* PyTorch: an eager executor for the same ONNX graph (each node run in order
  with torch / torch.nn.functional, weights taken from the initializers), timed
  under torch.no_grad() and under torch.inference_mode(), after a warmup,
  median over R runs on the same input, with torch.set_num_threads(N).

The two sides alternate in --rounds rounds of R runs each (so background load
hits both alike); each side's figure is the median of its round medians.

Both sides' outputs are checked against test_data_set_0/output_0.pb (the
outputs PyTorch produced at export time) and the max relative error is
reported; a model whose outputs do not match within --rtol is reported as
FAILED and gets no speed, so the benchmark never reports a speed for wrong
numbers.

Ratio = PyTorch median / ampc median: > 1 means ampc is faster.

Run with Debian's python (python3-torch 1.13, python3-onnx, numpy), from the
repository root:

    /usr/bin/python3 bench/forward_cpu.py [--repeat 100] [--rounds 7] [--threads 2] [--markdown]
"""

import argparse
import os
import statistics
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper
import torch
import torch.nn.functional as F

import bench_util
from bench_util import MODELS_DIR


# ---------------------------------------------------------------------------
# Eager PyTorch executor for the ONNX graphs.
#
# Supports exactly the operators the *_eval_op17 reference models contain
# (Conv, Relu, MaxPool, Flatten, Gemm); anything else is an error.
# ---------------------------------------------------------------------------

def _unsupported(node, what):
    bench_util.unsupported("forward_cpu.py", node, what)


def _sym_pads(node, pads, rank):
    """ONNX pads [b0, b1, ..., e0, e1, ...] -> symmetric per-dim padding."""
    if not pads:
        return [0] * rank
    begin, end = list(pads[:rank]), list(pads[rank:])
    if begin != end:
        _unsupported(node, f"asymmetric pads {pads}")
    return begin


def _conv(node, a, x, w, b=None):
    rank = w.dim() - 2
    if rank != 2:
        _unsupported(node, f"{rank}-d convolution")
    if a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
        _unsupported(node, f"auto_pad={a['auto_pad']}")
    ks = a.get("kernel_shape")
    if ks is not None and list(ks) != list(w.shape[2:]):
        _unsupported(node, "kernel_shape differing from the weight")
    return F.conv2d(x, w, b,
                    stride=a.get("strides", [1] * rank),
                    padding=_sym_pads(node, a.get("pads"), rank),
                    dilation=a.get("dilations", [1] * rank),
                    groups=a.get("group", 1))


def _maxpool(node, a, x):
    ks = list(a["kernel_shape"])
    rank = len(ks)
    if rank != 2:
        _unsupported(node, f"{rank}-d pooling")
    if a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
        _unsupported(node, f"auto_pad={a['auto_pad']}")
    if a.get("storage_order", 0) != 0 or len(node.output) > 1:
        _unsupported(node, "the Indices output / storage_order")
    return F.max_pool2d(x, ks,
                        stride=a.get("strides", [1] * rank),
                        padding=_sym_pads(node, a.get("pads"), rank),
                        dilation=a.get("dilations", [1] * rank),
                        ceil_mode=bool(a.get("ceil_mode", 0)))


def _flatten(node, a, x):
    axis = a.get("axis", 1)
    if axis < 0:
        axis += x.dim()
    return x.reshape(int(np.prod(x.shape[:axis], dtype=np.int64)), -1)


def _gemm(node, a, A, B, C=None):
    if a.get("transA", 0):
        A = A.t()
    if a.get("transB", 0):
        B = B.t()
    alpha, beta = a.get("alpha", 1.0), a.get("beta", 1.0)
    if C is None:
        return torch.mm(A, B) if alpha == 1.0 else alpha * torch.mm(A, B)
    return torch.addmm(C, A, B, beta=beta, alpha=alpha)


_OPS = {
    "Conv": _conv,
    "Relu": lambda node, a, x: torch.relu(x),
    "MaxPool": _maxpool,
    "Flatten": _flatten,
    "Gemm": _gemm,
}


class OnnxTorchExecutor(bench_util.EagerGraph):
    """Runs an ONNX graph node by node with eager PyTorch ops."""

    def __init__(self, model):
        g = model.graph
        self.weights = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy())
                        for t in g.initializer}
        super().__init__(g, _OPS, "forward_cpu.py", self.weights)


# ---------------------------------------------------------------------------

def max_rel_err(got, want):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        return float("inf")
    return float(np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-30))


def bench_model(name, args):
    d = os.path.join(MODELS_DIR, f"{name}_eval_op17")
    model_path = os.path.join(d, "model.onnx")
    data = os.path.join(d, "test_data_set_0")
    model = onnx.load(model_path)
    ex = OnnxTorchExecutor(model)
    inputs = [(n, os.path.join(data, f"input_{k}.pb"))
              for k, n in enumerate(ex.input_names)]
    arrays = [bench_util.read_pb(p) for _, p in inputs]
    expected = [bench_util.read_pb(os.path.join(data, f"output_{k}.pb"))
                for k in range(len(ex.output_names))]
    row = {"model": name,
           "shape": "x".join(str(s) for s in arrays[0].shape)}

    # Correctness first (one run each), then timing.
    with tempfile.TemporaryDirectory() as tmp:
        bench_util.amp_infer(args.amp_run, model_path, inputs, 1,
                             args.threads, tmp)
        got = [np.load(os.path.join(tmp, f"{o}.npy")) for o in ex.output_names]
    row["amp_err"] = max(max_rel_err(g, w) for g, w in zip(got, expected))
    tin = [torch.from_numpy(a.copy()) for a in arrays]
    with torch.no_grad():
        tout = ex(*tin)
    row["torch_err"] = max(max_rel_err(g.numpy(), w)
                           for g, w in zip(tout, expected))
    row["ok"] = row["amp_err"] <= args.rtol and row["torch_err"] <= args.rtol
    if not row["ok"]:
        return row

    # Rounds alternate the two sides so that background load on a small
    # machine hits both alike; each side's figure is the median of its
    # per-round medians.
    amp, ng, im = [], [], []
    for _ in range(args.rounds):
        amp.append(bench_util.amp_infer(args.amp_run, model_path, inputs,
                                        args.repeat, args.threads))
        ng.append(bench_util.time_torch(ex, tin, args.repeat, args.warmup,
                                        torch.no_grad))
        im.append(bench_util.time_torch(ex, tin, args.repeat, args.warmup,
                                        torch.inference_mode))
    row["amp_ms"] = statistics.median(amp)
    row["torch_ms"] = statistics.median(ng)
    row["torch_im_ms"] = statistics.median(im)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    bench_util.add_models_arg(ap, "eval")
    ap.add_argument("--repeat", type=int, default=100,
                    help="timed runs per side (median reported)")
    ap.add_argument("--rounds", type=int, default=7,
                    help="alternating ampc/torch rounds of --repeat runs each; "
                         "the median of the round medians is reported")
    ap.add_argument("--warmup", type=int, default=5,
                    help="untimed PyTorch runs before timing")
    ap.add_argument("--threads", type=int, default=os.cpu_count(),
                    help="threads for both amp-run and torch (default: %(default)s)")
    bench_util.add_amp_run_arg(ap)
    ap.add_argument("--rtol", type=float, default=1e-4,
                    help="max relative error vs output_0.pb before a model "
                         "is reported as FAILED (default: %(default)s)")
    bench_util.add_markdown_arg(ap)
    args = ap.parse_args()
    if args.repeat < 2:
        ap.error("--repeat must be at least 2")
    bench_util.check_paths(ap, args, "eval")
    torch.set_num_threads(args.threads)
    print(f"threads: {args.threads} (amp-run --threads, "
          f"torch.get_num_threads()={torch.get_num_threads()}); "
          f"{args.rounds} rounds x {args.repeat} runs; "
          f"torch {torch.__version__}; load average at start "
          f"{os.getloadavg()[0]:.2f}", flush=True)

    rows = [bench_model(name, args)
            for name in bench_util.each_model(args.models)]

    hdr = ["model", "input", "ampc ms", "torch no_grad ms",
           "torch inference_mode ms", "ratio", "ampc max rel err",
           "torch max rel err"]
    table = []
    for r in rows:
        if r["ok"]:
            vals = [f"{r['amp_ms']:.3f}", f"{r['torch_ms']:.3f}",
                    f"{r['torch_im_ms']:.3f}",
                    f"{r['torch_ms'] / r['amp_ms']:.2f}"]
        else:
            vals = ["FAILED (wrong outputs)", "-", "-", "-"]
        table.append([r["model"], r["shape"]] + vals +
                     [f"{r['amp_err']:.1e}", f"{r['torch_err']:.1e}"])

    bench_util.print_table(hdr, table)
    print("ratio = torch no_grad median / ampc median (> 1: ampc faster)")
    if args.markdown:
        bench_util.print_markdown(hdr, table)
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
