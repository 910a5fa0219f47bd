"""Helpers shared by the loss-scaling drivers (loss_scale_overflow.py,
loss_scale_underflow.py): their command line and PASS/FAIL lines, running
amp-run, reading its metrics, and computing amp-run's --checksum-state of a
state we know independently.

amp-run's state_checksum is FNV-1a (32 bits) over the bytes of every
parameter of the compiled @train_step in Program order, the loss-scale
state (names starting with 'loss_scale') left out. The parameters and their
order come from `amp-run --emit=rt` (one `rt.param "NAME" ... {init = ...}
: tensor<...>` line each); their values here come from the ONNX
initializers (a dense_resource or dense<[...]> init) or the splat in the rt
line (optimizer state, step counter).
"""
import argparse
import csv
import re
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

DTYPES = {"f32": np.float32, "f16": np.float16, "bf16": None, "i64": np.int64,
          "i1": np.bool_}
PARAM_RE = re.compile(
    r'rt\.param "([^"]+)" at \d+ '
    r'\{init = (dense_resource<[^>]*>|dense<([^>]*)>) : tensor<[^>]*>\}'
    r' : tensor<((?:\d+x)*)(\w+)>')


def arg_parser(*middle):
    """A parser of AMP_RUN, the positionals `middle`, then WORK_DIR; the
    driver adds its options."""
    p = argparse.ArgumentParser()
    p.add_argument("amp_run")
    for name in middle:
        p.add_argument(name)
    p.add_argument("work_dir")
    return p


class Checks:
    """Prints one PASS/FAIL line per check; exit() ends the driver with 1
    if any failed."""

    def __init__(self):
        self.failed = False

    def __call__(self, ok, msg):
        self.failed |= not ok
        print("%s %s" % ("PASS" if ok else "FAIL", msg))

    def exit(self):
        sys.exit(1 if self.failed else 0)


def run(cmd, expect_ok=True):
    """Runs amp-run; on an unexpected exit status prints FAIL and exits."""
    r = subprocess.run(cmd, capture_output=True, text=True)
    if expect_ok and r.returncode != 0:
        print("FAIL %s exited %d: %s" % (cmd[0], r.returncode, r.stderr))
        raise SystemExit(1)
    return r


def metrics(path):
    """Rows of an amp-run --metrics CSV, numbers as Python values."""
    rows = []
    for r in csv.DictReader(open(path)):
        row = {"step": int(r["step"]), "loss": float(r["loss"]),
               "loss_scale": float(r["loss_scale"]),
               "skipped": int(float(r["skipped"]))}
        if "state_checksum" in r:
            row["state_checksum"] = int(float(r["state_checksum"]))
        rows.append(row)
    return rows


def fnv1a(chunks):
    h = 2166136261
    for c in chunks:
        for b in c:
            h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return h


def initializers(model_path):
    return {t.name: numpy_helper.to_array(t)
            for t in onnx.load(model_path).graph.initializer}


def state_params(amp_run, model_path, train_args):
    """[(name, dtype, shape, splat or None)] of @train_step's parameters in
    Program order, loss-scale state left out (as --checksum-state does)."""
    rt = run([amp_run, model_path] + train_args + ["--emit=rt", "-o", "-"])
    params = []
    for m in PARAM_RE.finditer(rt.stdout):
        name, init, splat, dims, elt = m.groups()
        if name.startswith("loss_scale"):
            continue
        if DTYPES.get(elt) is None:
            raise SystemExit("FAIL parameter %s has element type %s, which "
                             "this driver cannot rebuild" % (name, elt))
        shape = [int(d) for d in dims.split("x") if d]
        # Weights print as a resource or, when small, an inline list.
        if splat is not None and not splat.startswith("["):
            splat = float(splat)
        else:
            splat = None
        params.append((name, DTYPES[elt], shape, splat))
    if not params:
        raise SystemExit("FAIL no rt.param in amp-run --emit=rt")
    return params


def checksum(params, weights, overrides=None):
    """FNV-1a of the state in which every parameter has its initial value
    (the ONNX initializer or the splat), except the names in overrides."""
    chunks = []
    for name, dtype, shape, splat in params:
        if overrides and name in overrides:
            v = np.asarray(overrides[name], dtype)
        elif splat is None:
            v = weights[name]
        else:
            v = np.full(shape, splat, dtype)
        if list(v.shape) != shape or v.dtype != dtype:
            raise SystemExit("FAIL parameter %s: %s %s, expected %s %s" % (
                name, v.dtype, list(v.shape), np.dtype(dtype), shape))
        chunks.append(np.ascontiguousarray(v).tobytes())
    return fnv1a(chunks)


def same_bits(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and \
        a.tobytes() == b.tobytes()


def pow2(x):
    """'2^e' when x is an exact power of two, else None."""
    m, e = np.frexp(x)
    return "2^%d" % (e - 1) if x > 0 and m == 0.5 else None


def summary_line(stdout):
    """amp-run's end-of-run line ("amp-run: trained N steps; ...")."""
    return next((l for l in stdout.splitlines()
                 if l.startswith("amp-run: trained")), stdout.strip())


def summary(stdout):
    """(skipped, final scale) from amp-run's end-of-run line."""
    m = re.search(r"skipped (\d+) \(overflow\); final loss scale (\S+);",
                  stdout)
    return (int(m.group(1)), float(m.group(2))) if m else (None, None)
