"""Writes OUT/range.onnx: y = float(Range(0, n * 2, 1)) + x[0], where n
(an int64 scalar graph input) only sets the output's length, as the
expanded window functions compute theirs; and OUT/n.npy (n = 3) and
OUT/x.npy.

usage: make_shape_input_model.py OUT
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
nodes = [
    helper.make_node("Constant", [], ["two"], value=helper.make_tensor(
        "two", TensorProto.INT64, [], [2])),
    helper.make_node("Constant", [], ["zero"], value=helper.make_tensor(
        "zero", TensorProto.INT64, [], [0])),
    helper.make_node("Constant", [], ["one"], value=helper.make_tensor(
        "one", TensorProto.INT64, [], [1])),
    helper.make_node("Mul", ["n", "two"], ["limit"]),
    helper.make_node("Range", ["zero", "limit", "one"], ["r"]),
    helper.make_node("Cast", ["r"], ["rf"], to=TensorProto.FLOAT),
    helper.make_node("Add", ["rf", "x"], ["y"]),
]
graph = helper.make_graph(
    nodes, "range",
    [helper.make_tensor_value_info("n", TensorProto.INT64, []),
     helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["len"])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.save(model, os.path.join(out, "range.onnx"))
np.save(os.path.join(out, "n.npy"), np.array(3, dtype=np.int64))
np.save(os.path.join(out, "x.npy"), np.array([0.5], dtype=np.float32))
