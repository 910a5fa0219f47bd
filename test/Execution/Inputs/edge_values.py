"""Values where a lowering meets infinities: MaxPool's Indices when a
window's elements are all -inf and its padding ties with them (the index
must be the element's, not the padding's), and ReduceLogSumExp of a slice
that is all -inf (-inf, not NaN). amp-run takes finite inputs only, so the
models make their -inf with Log(0).

usage: edge_values.py AMP_RUN WORK_DIR

Prints one line per case; a wrong value prints FAIL and exits 1.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

amp_run, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
failed = False


def run(name, nodes, x, outputs, opset=13):
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)]
    outs = [helper.make_tensor_value_info(o, t, shape)
            for o, t, shape in outputs]
    graph = helper.make_graph(nodes, name, inputs, outs)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    path = os.path.join(work, name + ".onnx")
    onnx.save(model, path)
    np.save(os.path.join(work, name + "_x.npy"), x)
    out = os.path.join(work, name + "_out")
    subprocess.run([amp_run, path, "--mode", "infer", "--input",
                    "x=" + os.path.join(work, name + "_x.npy"),
                    "--save-outputs", out], check=True, capture_output=True)
    return [np.load(os.path.join(out, o + ".npy")) for o, _, _ in outputs]


def check(ok, what):
    global failed
    print(("ok: " if ok else "FAIL: ") + what)
    failed |= not ok


inf = np.float32(np.inf)
log = helper.make_node("Log", ["x"], ["t"])
# Log: [-inf, -inf, log 3]; windows (padding, -inf) and (-inf, log 3).
x = np.array([[[[0.0, 0.0, 3.0]]]], np.float32)
pool = helper.make_node("MaxPool", ["t"], ["y", "i"], kernel_shape=[1, 2],
                        pads=[0, 1, 0, 0], strides=[1, 2])
y, i = run("maxpool", [log, pool], x,
           [("y", TensorProto.FLOAT, [1, 1, 1, 2]),
            ("i", TensorProto.INT64, [1, 1, 1, 2])])
check(y.ravel()[0] == -inf and list(i.ravel()) == [0, 2],
      f"MaxPool Indices of a window all -inf next to padding: "
      f"indices {list(i.ravel())}")

# Log: rows [-inf, -inf], [-inf, 0], [0, 0].
x = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 1.0]], np.float32)
lse = helper.make_node("ReduceLogSumExp", ["t"], ["y"], axes=[1],
                       keepdims=0)
(y,) = run("logsumexp", [log, lse], x, [("y", TensorProto.FLOAT, [3])])
check(y[0] == -inf and y[1] == 0 and abs(y[2] - np.log(2.0)) < 1e-6,
      f"ReduceLogSumExp of slices [-inf, -inf], [-inf, 0], [0, 0]: "
      f"{[float(v) for v in y]}")
sys.exit(1 if failed else 0)
