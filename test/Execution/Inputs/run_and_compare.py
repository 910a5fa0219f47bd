"""Runs amp-run on an ONNX model with the inputs of one test_data_set and
compares every output with the reference output_K.pb.

usage: run_and_compare.py AMP_RUN MODEL_DIR WORK_DIR [--rtol R] [--atol A]
       [-- extra amp-run args]

Prints one line per output: name, max abs error, max relative error (to the
largest reference magnitude), and PASS/FAIL; exits 1 on any failure.
"""
import argparse
import glob
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

p = argparse.ArgumentParser()
p.add_argument("amp_run")
p.add_argument("model_dir")
p.add_argument("work_dir")
p.add_argument("--rtol", type=float, default=1e-4)
p.add_argument("--atol", type=float, default=0.0)
p.add_argument("extra", nargs="*")
args = p.parse_args()

data = os.path.join(args.model_dir, "test_data_set_0")
model = onnx.load(os.path.join(args.model_dir, "model.onnx"),
                  load_external_data=False)
inits = {i.name for i in model.graph.initializer}
graph_inputs = [i.name for i in model.graph.input if i.name not in inits]
cmd = [args.amp_run, os.path.join(args.model_dir, "model.onnx"), "--mode",
       "infer", "--save-outputs", args.work_dir] + args.extra
for k, name in enumerate(graph_inputs):
    cmd += ["--input", "%s=%s" % (name, os.path.join(data, "input_%d.pb" % k))]
subprocess.run(cmd, check=True)

ok = True
for k, out in enumerate(model.graph.output):
    ref = numpy_helper.to_array(
        onnx.load_tensor(os.path.join(data, "output_%d.pb" % k)))
    got = np.load(os.path.join(args.work_dir, out.name + ".npy"))
    if got.shape != ref.shape or got.dtype != ref.dtype:
        print("%s: FAIL %s %s vs reference %s %s" %
              (out.name, got.shape, got.dtype, ref.shape, ref.dtype))
        ok = False
        continue
    err = float(np.abs(got.astype(np.float64) - ref).max()) if ref.size else 0.0
    scale = float(np.abs(ref).max()) if ref.size else 0.0
    rel = err / scale if scale else err
    good = err <= args.atol + args.rtol * scale
    print("%s: %s max_abs_err=%.3g rel_err=%.3g" %
          (out.name, "PASS" if good else "FAIL", err, rel))
    ok &= good
sys.exit(0 if ok else 1)
