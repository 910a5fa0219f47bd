"""Writes the one-layer training model of amp-run-step-memory.test.

usage: make_memory_step_model.py OUT.onnx

Gemm(x [4, 8], w [16, 8] (transB), b [16]) -> y [4, 16], then the mean
squared error against target [4, 16] spelt as mlp9 exports it (Sub, Mul,
ReduceMean) -> loss. Every tensor has its own element count (32, 128, 16,
64, 1), so each byte figure of the test's hand count names its tensor.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)
w = numpy_helper.from_array(
    rng.standard_normal((16, 8)).astype(np.float32) * 0.1, "w")
b = numpy_helper.from_array(np.zeros(16, np.float32), "b")
nodes = [
    helper.make_node("Gemm", ["x", "w", "b"], ["y"], name="fc", transB=1),
    helper.make_node("Sub", ["y", "target"], ["d"], name="sub"),
    helper.make_node("Mul", ["d", "d"], ["sq"], name="mul"),
    helper.make_node("ReduceMean", ["sq"], ["loss"], name="mean", keepdims=0),
]
graph = helper.make_graph(
    nodes, "memory_step",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8]),
     helper.make_tensor_value_info("target", TensorProto.FLOAT, [4, 16])],
    [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
    initializer=[w, b])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="ampc-tests")
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, sys.argv[1])
