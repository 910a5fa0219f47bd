"""Writes a small ONNX training model and its data for amp-run --mode train.

usage: make_train_model.py OUT_DIR

OUT_DIR/model.onnx: Gemm(x [4, 3], w [2, 3] (transB), b [2]) -> logits [4, 2],
SoftmaxCrossEntropyLoss(logits, labels [4]) -> loss, plus a second scalar
output 'penalty' = ReduceSum(|logits|); outputs loss, logits, penalty.
OUT_DIR/data: x.npy [8, 3] f32 and labels.npy [8] i64 (8 samples, 2 batches).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(os.path.join(out, "data"), exist_ok=True)
rng = np.random.default_rng(0)
w = numpy_helper.from_array(rng.standard_normal((2, 3)).astype(np.float32), "w")
b = numpy_helper.from_array(np.zeros(2, np.float32), "b")
nodes = [
    helper.make_node("Gemm", ["x", "w", "b"], ["logits"], name="fc", transB=1),
    helper.make_node("SoftmaxCrossEntropyLoss", ["logits", "labels"], ["loss"],
                     name="ce", reduction="mean"),
    helper.make_node("Abs", ["logits"], ["abs"], name="abs"),
    helper.make_node("ReduceSum", ["abs"], ["penalty"], name="sum", keepdims=0),
]
graph = helper.make_graph(
    nodes, "tiny_train",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 3]),
     helper.make_tensor_value_info("labels", TensorProto.INT64, [4])],
    [helper.make_tensor_value_info("loss", TensorProto.FLOAT, []),
     helper.make_tensor_value_info("logits", TensorProto.FLOAT, [4, 2]),
     helper.make_tensor_value_info("penalty", TensorProto.FLOAT, [])],
    initializer=[w, b])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)
onnx.save(model, os.path.join(out, "model.onnx"))
np.save(os.path.join(out, "data", "x.npy"),
        rng.standard_normal((8, 3)).astype(np.float32))
np.save(os.path.join(out, "data", "labels.npy"),
        np.array([0, 1, 1, 0, 1, 0, 0, 1], np.int64))
