"""Runs shared models forward with amp-run at every AMP level and dtype and
compares each output with PyTorch's fp32 output and with our own O0 output.

usage: amp_forward_numerics.py AMP_RUN WORK_DIR MODEL_DIR...

Each MODEL_DIR has model.onnx and test_data_set_0/{input_K,output_K}.pb. The
model runs in infer mode on input_K at O0, and at O1, O2, O3 and O3 with
--amp-master-weights in f16 and in bf16. The error of an output is
max|got - ref| / max|ref| (relative to the output's largest magnitude, so
one tolerance fits outputs of any scale; for the scalar loss it is the
relative error). Checked, per output:
  - against PyTorch's fp32 output and against our O0 output: error within
    the tolerance of the run's dtype (TOLERANCES below);
  - at O1+ the output is not bit-identical to O0 (the contractions run low,
    so an AMP run that silently computed in f32 fails here), and the bf16
    output is not bit-identical to the f16 one (a dtype option that is
    ignored fails here).
Prints one table row per (model, output, level, dtype) with PASS/FAIL, then
either "PASS all N checks" or the first violation; exits 1 on any failure.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

# Tolerances, as max abs error / max |reference|, chosen from measurements
# (ampc on the shared models, 2 threads) with a margin of 4-6x. The unit
# roundoff is 2^-11 = 4.9e-4 for f16 (11 significand bits) and 2^-8 = 3.9e-3
# for bf16 (8 bits); the outputs measured 0.6-0.8e-3 (f16) and 4.7-5.5e-3
# (bf16), one to two roundings of the output. The f16 bound stays below
# what bf16 gives, so an f16 run that rounds to bf16 fails. A loss is a mean
# over the batch, whose rounding errors mostly cancel: measured at most
# 8.1e-6 (f16) and 1.1e-4 (bf16, mlp9 at O2+ where Sub and Mul run low).
# O0 is f32 against PyTorch's f32: measured 8.3e-7 (summation order).
TOLERANCES = {
    # dtype: (output, loss)
    "f32": (1e-5, 1e-5),
    "f16": (3e-3, 5e-5),
    "bf16": (2.5e-2, 5e-4),
}
RUNS = [("O0", "f32", False)] + [
    (level, dtype, master)
    for dtype in ("f16", "bf16")
    for level, master in (("O1", False), ("O2", False), ("O3", False),
                          ("O3", True))
]

amp_run, work = sys.argv[1], sys.argv[2]
model_dirs = sys.argv[3:]
if not model_dirs:
    sys.exit("usage: amp_forward_numerics.py AMP_RUN WORK_DIR MODEL_DIR...")


def rel_error(got, ref):
    scale = float(np.abs(ref).max())
    err = float(np.abs(got.astype(np.float64) - ref).max())
    return err / scale if scale else err


rows = []  # (model, output, level, dtype, vs, error, tolerance, ok, note)
violations = []


def check(model, out, run, vs, ok, error=None, tol=None, note=""):
    level = run[0] + ("+mw" if run[2] else "")
    rows.append((model, out, level, run[1], vs, error, tol, ok, note))
    if not ok and not violations:
        violations.append("%s %s %s %s vs %s: %s" % (
            model, out, level, run[1], vs,
            note or "error %.3g > tolerance %.3g" % (error, tol)))


for model_dir in model_dirs:
    model_name = os.path.basename(os.path.normpath(model_dir))
    data = os.path.join(model_dir, "test_data_set_0")
    model = onnx.load(os.path.join(model_dir, "model.onnx"),
                      load_external_data=False)
    inits = {i.name for i in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in inits]
    outputs = [o.name for o in model.graph.output]
    refs = [numpy_helper.to_array(onnx.load_tensor(
        os.path.join(data, "output_%d.pb" % k))) for k in range(len(outputs))]

    results = {}
    for run in RUNS:
        level, dtype, master = run
        out_dir = os.path.join(work, "%s_%s_%s%s" % (
            model_name, level, dtype, "_mw" if master else ""))
        cmd = [amp_run, os.path.join(model_dir, "model.onnx"), "--mode",
               "infer", "--amp", level, "--save-outputs", out_dir]
        if dtype != "f32":
            cmd += ["--amp-dtype", dtype]
        if master:
            cmd += ["--amp-master-weights"]
        for k, name in enumerate(inputs):
            cmd += ["--input", "%s=%s" % (
                name, os.path.join(data, "input_%d.pb" % k))]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            check(model_name, "*", run, "run", False,
                  note="amp-run exited %d: %s (command: %s)" % (
                      proc.returncode, proc.stderr.strip(), " ".join(cmd)))
            continue
        results[run] = [np.load(os.path.join(out_dir, o + ".npy"))
                        for o in outputs]

    o0 = results.get(RUNS[0])
    for run, got in results.items():
        dtype = run[1]
        for k, out in enumerate(outputs):
            ref = refs[k]
            tol = TOLERANCES[dtype][1 if out == "loss" else 0]
            if got[k].shape != ref.shape or got[k].dtype != ref.dtype:
                check(model_name, out, run, "torch", False,
                      note="%s %s, reference %s %s" % (
                          got[k].shape, got[k].dtype, ref.shape, ref.dtype))
                continue
            err = rel_error(got[k], ref.astype(np.float64))
            check(model_name, out, run, "torch", err <= tol, err, tol)
            if o0 is None or run == RUNS[0]:
                continue
            err = rel_error(got[k], o0[k].astype(np.float64))
            check(model_name, out, run, "O0", err <= tol, err, tol)
            check(model_name, out, run, "O0",
                  not np.array_equal(got[k], o0[k]),
                  note="bit-identical to O0: the AMP run computed in f32")
            if dtype == "bf16":
                f16 = results.get((run[0], "f16", run[2]))
                if f16 is not None:
                    check(model_name, out, run, "f16",
                          not np.array_equal(got[k], f16[k]),
                          note="bit-identical to f16: --amp-dtype ignored")

print("%-18s %-7s %-6s %-5s %-6s %-10s %-9s %s" % (
    "model", "output", "level", "dtype", "vs", "error", "tolerance",
    "result"))
for model, out, level, dtype, vs, error, tol, ok, note in rows:
    if vs == "run":  # amp-run failed: the note says how
        shown, bound = "-", "-"
    elif error is None:  # a bit-identity check
        shown, bound = ("differs" if ok else "same"), "!= bits"
    else:
        shown, bound = "%.3g" % error, "%.3g" % tol
    print("%-18s %-7s %-6s %-5s %-6s %-10s %-9s %s%s" % (
        model, out, level, dtype, vs, shown, bound, "PASS" if ok else "FAIL",
        " (%s)" % note if not ok and note else ""))
if violations:
    print("FAIL first violation: " + violations[0])
    sys.exit(1)
print("PASS all %d checks" % len(rows))
