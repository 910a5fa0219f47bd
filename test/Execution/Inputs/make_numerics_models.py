"""Writes the models and data of amp-run-check-numerics.test.

usage: make_numerics_models.py OUT_DIR

OUT_DIR/log.onnx: Log(x [4, 3]) (node 'log_x') -> Gemm(w [2, 3] (transB),
b [2]) (node 'fc') -> SoftmaxCrossEntropyLoss with labels [4] (node 'ce'):
the Log makes -inf of a 0 and NaN of a negative number, from finite data.
OUT_DIR/data: x.npy [8, 3] f32, all positive except sample 5, element 1 (0)
and sample 6, element 2 (-1): step 0 (samples 0-3) is finite, step 1
(samples 4-7) is not; labels.npy [8] i64.
OUT_DIR/nan, OUT_DIR/inf: the same data with x[5, 1] = NaN, and with
x[2, 0] = +inf and x[6, 2] = -inf: non-finite data, refused when read.
OUT_DIR/big: x as f64 with x[3, 1] = 1e300, which rounds to +inf in f32.
OUT_DIR/infer: x_ok.npy (samples 0-3), x_zero.npy (samples 4-7, the 0 and
the -1), x_nan.npy (samples 4-7 with x[1, 1] = NaN), labels.npy (4 labels).
OUT_DIR/nan_weight.onnx: log.onnx with w[1, 2] = NaN.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(0)
w = rng.standard_normal((2, 3)).astype(np.float32)
b = np.zeros(2, np.float32)


def save_model(path, weight):
    nodes = [
        helper.make_node("Log", ["x"], ["log_x_out"], name="log_x"),
        helper.make_node("Gemm", ["log_x_out", "w", "b"], ["logits"],
                         name="fc", transB=1),
        helper.make_node("SoftmaxCrossEntropyLoss", ["logits", "labels"],
                         ["loss"], name="ce", reduction="mean"),
    ]
    graph = helper.make_graph(
        nodes, "log_train",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 3]),
         helper.make_tensor_value_info("labels", TensorProto.INT64, [4])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, []),
         helper.make_tensor_value_info("logits", TensorProto.FLOAT, [4, 2])],
        initializer=[numpy_helper.from_array(weight, "w"),
                     numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, path))


def save_data(name, x, labels):
    os.makedirs(os.path.join(out, name), exist_ok=True)
    np.save(os.path.join(out, name, "x.npy"), x)
    np.save(os.path.join(out, name, "labels.npy"), labels)


os.makedirs(out, exist_ok=True)
save_model("log.onnx", w)
bad_w = w.copy()
bad_w[1, 2] = np.nan
save_model("nan_weight.onnx", bad_w)

x = rng.uniform(0.5, 2.0, (8, 3)).astype(np.float32)
labels = np.array([0, 1, 1, 0, 1, 0, 0, 1], np.int64)
x[5, 1] = 0.0
x[6, 2] = -1.0
save_data("data", x, labels)

nan = x.copy()
nan[5, 1] = np.nan
save_data("nan", nan, labels)
inf = x.copy()
inf[2, 0] = np.inf
inf[6, 2] = -np.inf
save_data("inf", inf, labels)
big = x.astype(np.float64)
big[3, 1] = 1e300
save_data("big", big, labels)

infer = os.path.join(out, "infer")
os.makedirs(infer, exist_ok=True)
np.save(os.path.join(infer, "x_ok.npy"), x[:4])
np.save(os.path.join(infer, "x_zero.npy"), x[4:])
np.save(os.path.join(infer, "x_nan.npy"), nan[4:])
np.save(os.path.join(infer, "labels.npy"), labels[:4])
