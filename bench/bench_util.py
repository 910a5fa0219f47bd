"""What bench/forward_cpu.py and bench/train_cpu.py share: where the models
are, the node loop of the eager PyTorch executor, timing a PyTorch call,
running amp-run, checking the command line, and printing the results table.

The benchmarks run as `/usr/bin/python3 bench/<script>.py` from the
repository root, which puts bench/ on sys.path, so they import this module
by name.
"""

import os
import re
import statistics
import subprocess
import sys
import time

import onnx
from onnx import numpy_helper

MODELS_DIR = "/work/shared/models"
DEFAULT_MODELS = ["lenet5", "mlp9", "msmlp"]


# ---------------------------------------------------------------------------
# Eager PyTorch executor of an ONNX graph.
# ---------------------------------------------------------------------------

def attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def unsupported(script, node, what):
    raise NotImplementedError(
        f"bench/{script}: ONNX node {node.name or node.op_type!r} "
        f"({node.op_type}): {what} is not supported by the eager PyTorch "
        f"executor")


class EagerGraph:
    """Runs an ONNX graph node by node with the op functions in `ops`
    (op type -> fn(node, attributes, *inputs)); the subclass fills
    self.weights (initializer name -> tensor). An op not in `ops` is an
    error naming `script`."""

    def __init__(self, graph, ops, script, initializers):
        self.input_names = [i.name for i in graph.input
                            if i.name not in initializers]
        self.output_names = [o.name for o in graph.output]
        self.nodes = []
        for node in graph.node:
            if node.op_type not in ops or node.domain not in ("", "ai.onnx"):
                raise NotImplementedError(
                    f"bench/{script}: ONNX op {node.domain or 'ai.onnx'}"
                    f"::{node.op_type} (node {node.name!r}) is not supported "
                    f"by the eager PyTorch executor (supported: "
                    f"{', '.join(sorted(ops))})")
            self.nodes.append((node, ops[node.op_type], attrs(node)))

    def __call__(self, *inputs):
        env = dict(self.weights)
        env.update(zip(self.input_names, inputs))
        for node, fn, a in self.nodes:
            args = [env[n] if n else None for n in node.input]
            while args and args[-1] is None:
                args.pop()
            env[node.output[0]] = fn(node, a, *args)
        return [env[n] for n in self.output_names]


def read_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def time_torch(fn, args, repeat, warmup, ctx):
    """Median ms of `repeat` calls fn(*args) under ctx(), after `warmup`."""
    with ctx():
        for _ in range(warmup):
            fn(*args)
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            fn(*args)
            times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


# ---------------------------------------------------------------------------
# amp-run
# ---------------------------------------------------------------------------

def loss_diff(a, b):
    """The largest difference of losses `a` from losses `b`, over b's first
    loss (AMP against f32, or one side against the other): a model trained
    on one batch drops its loss fast (ResNet-18: 2.4 to 0.07 in 5 steps),
    and the last steps' relative differences would measure that drop more
    than the agreement."""
    return max(abs(x - y) for x, y in zip(a, b)) / max(abs(b[0]), 1e-30)


def run_amp(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}):\n"
                           f"{p.stdout}{p.stderr}")
    return p


def amp_infer(amp_run, model_path, inputs, repeat, threads, save_dir=None,
              env=None):
    """amp-run --mode infer on inputs [(name, .pb path)]: the median ms it
    prints when repeat > 1, else None."""
    cmd = [amp_run, model_path, "--mode", "infer", "--repeat", str(repeat),
           "--threads", str(threads)]
    for name, path in inputs:
        cmd += ["--input", f"{name}={path}"]
    if save_dir:
        cmd += ["--save-outputs", save_dir]
    p = run_amp(cmd, env)
    m = re.search(r"amp-run: (\d+) runs, median ([0-9.]+) ms, "
                  r"min ([0-9.]+) ms", p.stdout)
    if repeat > 1 and not m:
        raise RuntimeError(f"no timing line in amp-run output:\n{p.stdout}")
    return float(m.group(2)) if m else None


# ---------------------------------------------------------------------------
# Command line and results
# ---------------------------------------------------------------------------

def add_models_arg(ap, kind):
    ap.add_argument("--models", nargs="+", default=DEFAULT_MODELS,
                    help="model names under %s (<name>_%s_op17)" %
                    (MODELS_DIR, kind))


def add_amp_run_arg(ap):
    ap.add_argument("--amp-run", default="build/bin/amp-run",
                    help="path to amp-run (default: %(default)s)")


def add_markdown_arg(ap):
    ap.add_argument("--markdown", action="store_true",
                    help="also print the table as markdown rows")


def check_paths(ap, args, kind):
    """amp-run and every <model>_<kind>_op17/model.onnx must exist."""
    if not os.access(args.amp_run, os.X_OK):
        ap.error(f"amp-run not found at {args.amp_run!r} (build it first, or "
                 f"pass --amp-run)")
    for name in args.models:
        if not os.path.isfile(os.path.join(MODELS_DIR, f"{name}_{kind}_op17",
                                           "model.onnx")):
            ap.error(f"no model {MODELS_DIR}/{name}_{kind}_op17/model.onnx")


def each_model(models):
    """Yields each name in models, then says on stderr how long the caller
    took over it."""
    for name in models:
        t0 = time.time()
        yield name
        print(f"  {name}: done in {time.time() - t0:.1f} s", file=sys.stderr,
              flush=True)


def print_table(hdr, table):
    widths = [max(len(h), *(len(t[i]) for t in table))
              for i, h in enumerate(hdr)]
    print("  ".join(h.ljust(w) for h, w in zip(hdr, widths)))
    for t in table:
        print("  ".join(c.ljust(w) for c, w in zip(t, widths)))


def print_markdown(hdr, table):
    print()
    print("| " + " | ".join(hdr) + " |")
    print("|" + "|".join("---" for _ in hdr) + "|")
    for t in table:
        print("| " + " | ".join(t) + " |")
