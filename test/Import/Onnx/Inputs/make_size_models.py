"""Writes ONNX models whose tensor sizes overflow int64 or exceed what ampc
reads, into the directory given as argv[1]: each has one such shape and is
otherwise valid, so the size is what the importer or converter must name."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
T40 = 1 << 40


def save(name, nodes, inputs, outputs, initializers=(), check=True):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="ampc-tests")
    model.ir_version = 8
    if check:
        onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, name + ".onnx"))


def info(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


relu = [helper.make_node("Relu", ["x"], ["y"], name="relu")]

# 2^40 x 2^40 elements: the count overflows int64.
save("huge_input", relu, [info("x", [T40, T40])], [info("y", [T40, T40])])
# 2^31 x 2^31 f32 elements fit int64, their bytes do not.
save("wide_input", relu, [info("x", [1 << 31, 1 << 31])],
     [info("y", [1 << 31, 1 << 31])])
# A dynamic input, for --shape.
save("dynamic", relu, [info("x", ["batch", 4])], [info("y", ["batch", 4])])


def initializer(dims):
    # A shape with no data: the size must be refused before the data is.
    t = onnx.TensorProto()
    t.name = "w"
    t.data_type = TensorProto.FLOAT
    t.dims.extend(dims)
    return t


add = [helper.make_node("Add", ["x", "w"], ["y"], name="add")]
save("huge_initializer", add, [info("x", [1])], [info("y", [T40, T40])],
     [initializer([T40, T40])], check=False)
# 2^41 elements: fits int64, more than ampc reads from one tensor.
save("big_initializer", add, [info("x", [1])], [info("y", [1 << 21, 1 << 20])],
     [initializer([1 << 21, 1 << 20])], check=False)

# Expand to 2^40 x 2^40: the converter names the node.
shape = numpy_helper.from_array(np.array([T40, T40], np.int64), "shape")
save("expand", [helper.make_node("Expand", ["x", "shape"], ["y"], name="big")],
     [info("x", [1])], [info("y", [T40, T40])], [shape])


def external(name, offset, length):
    # w (4 floats) read from weights.bin (64 bytes) at `offset`, `length`.
    t = onnx.TensorProto()
    t.name = "w"
    t.data_type = TensorProto.FLOAT
    t.dims.extend([4])
    t.data_location = onnx.TensorProto.EXTERNAL
    for k, v in (("location", "weights.bin"), ("offset", str(offset)),
                 ("length", str(length))):
        e = t.external_data.add()
        e.key, e.value = k, v
    save(name, add, [info("x", [4])], [info("y", [4])], [t], check=False)


with open(os.path.join(out, "weights.bin"), "wb") as f:
    f.write(bytes(64))
# offset + length overflows int64: compared, never added.
external("external_overflow", 1 << 62, 1 << 62)
# Inside the file but not the tensor's 16 bytes: refused before the copy.
external("external_length", 0, 48)
