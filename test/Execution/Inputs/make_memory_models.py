"""Writes models for amp-run's memory limits into the directory argv[1]:
each is small on disk and computes one tensor of a chosen size from a
one-element input with Expand (no data needed), then a Relu of it."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def expand(name, dims):
    shape = numpy_helper.from_array(np.array(dims, np.int64), "shape")
    graph = helper.make_graph(
        [helper.make_node("Expand", ["x", "shape"], ["e"], name="expand"),
         helper.make_node("Relu", ["e"], ["y"], name="relu")],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, dims)], [shape])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="ampc-tests")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, name + ".onnx"))


# 10^15 elements (4 PB of f32): fits int64, no machine.
expand("petabytes", [100000, 100000, 100000])
# 2^40 x 2^40 elements: overflows int64.
expand("overflow", [1 << 40, 1 << 40])
# 750 M f32: a 2.8 GiB arena (the Relu runs in place).
expand("gigabytes", [750000000])
