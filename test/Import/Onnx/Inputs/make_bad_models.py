"""Writes small ONNX models that ampc must reject, each with one defect,
into the directory given as argv[1]. Built with python3-onnx's helper API
so the defect is exactly the one named."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def save(name, graph, opset=13, check=True):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="ampc-tests")
    model.ir_version = 8
    if check:
        onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, name + ".onnx"))


x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])


def out_(shape):
    return helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)


y = out_(["batch", 3])
w = numpy_helper.from_array(np.ones((4, 3), np.float32), "w")

# A dynamic batch dimension: needs --shape x=N,4.
save("dynamic", helper.make_graph(
    [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "g", [x], [y], [w]))

# A MatMul whose static shapes do not contract (3 vs 4).
xs = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
save("mismatch", helper.make_graph(
    [helper.make_node("MatMul", ["x", "w"], ["y"], name="bad_matmul")], "g", [xs], [out_([2, 3])], [w]))

# A node that reads a value nothing defines (checker skipped at import).
save("dangling", helper.make_graph(
    [helper.make_node("Relu", ["ghost"], ["y"], name="relu_of_ghost")], "g", [xs], [out_([2, 3])]),
    check=False)

# An op ampc has no conversion for.
save("unsupported", helper.make_graph(
    [helper.make_node("Det", ["sq"], ["y"], name="determinant")], "g",
    [helper.make_tensor_value_info("sq", TensorProto.FLOAT, [3, 3])], [out_([])]))

# An input of a dtype ampc does not support.
save("uint8", helper.make_graph(
    [helper.make_node("Identity", ["b"], ["y"], name="id")], "g",
    [helper.make_tensor_value_info("b", TensorProto.UINT8, [4])],
    [helper.make_tensor_value_info("y", TensorProto.UINT8, [4])]))

# An initializer whose raw data is shorter than its shape says.
short = numpy_helper.from_array(np.ones((4, 3), np.float32), "w")
short.raw_data = short.raw_data[:20]
save("short_initializer", helper.make_graph(
    [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "g",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])], [out_([2, 3])], [short]),
    check=False)

# Two initializers stored in one external data file (read once), and a copy
# whose second tensor points past the end of that file.
w1 = numpy_helper.from_array(np.full((4, 3), 2.0, np.float32), "w1")
w2 = numpy_helper.from_array(np.full((3, 5), 3.0, np.float32), "w2")
ext = helper.make_model(helper.make_graph(
    [helper.make_node("MatMul", ["x", "w1"], ["h"], name="mm1"),
     helper.make_node("MatMul", ["h", "w2"], ["y"], name="mm2")], "g",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5])], [w1, w2]),
    opset_imports=[helper.make_opsetid("", 13)])
ext.ir_version = 8
onnx.save_model(ext, os.path.join(out, "external.onnx"), save_as_external_data=True,
                all_tensors_to_one_file=True, location="weights.bin", size_threshold=0)
for entry in ext.graph.initializer[1].external_data:
    if entry.key == "offset":
        entry.value = "1000000"
onnx.save_model(ext, os.path.join(out, "external_range.onnx"))
