"""Writes a training model that computes in f16 itself, with no AMP: x is
cast to f16 and back before a MatMul with the f32 weight w, and the loss
is the mean. A step compiled with `--amp O0` has f16 values, so anything
that takes "AMP ran" from amp-auto-cast having run (it runs at O0 to write
--amp-report) would add loss scaling or fold the model's own casts.

usage: make_f16_round_trip_model.py OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

w = numpy_helper.from_array(np.full((3, 2), 0.5, np.float32), "w")
nodes = [
    helper.make_node("Cast", ["x"], ["x16"], to=TensorProto.FLOAT16,
                     name="to_f16"),
    helper.make_node("Cast", ["x16"], ["x32"], to=TensorProto.FLOAT,
                     name="to_f32"),
    helper.make_node("MatMul", ["x32", "w"], ["y"], name="mm"),
    helper.make_node("ReduceMean", ["y"], ["loss"], keepdims=0, name="mean"),
]
graph = helper.make_graph(
    nodes, "f16_round_trip",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 3])],
    [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])], [w])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, sys.argv[1])
