"""Writes models for node-checks.test and shape-inference.test into the
directory given as argv[1]: nodes that break their ONNX schema, names
defined twice, and nodes on which libonnx 1.12's shape inference crashes.
None is checked with onnx.checker (most would not pass it)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
F = TensorProto.FLOAT


def vi(name, shape, dtype=F):
    return helper.make_tensor_value_info(name, dtype, shape)


def save(name, nodes, inputs, outputs, inits=(), opset=13):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", opset)],
        producer_name="ampc-tests")
    model.ir_version = 8
    onnx.save(model, os.path.join(out, name + ".onnx"))


def node(op, ins, outs, name, **attrs):
    return helper.make_node(op, ins, outs, name=name, **attrs)


x, y = vi("x", [2, 3]), vi("y", [2, 3])

# Nodes that do not fit their schema.
save("relu_two_inputs", [node("Relu", ["x", "x"], ["y"], "relu")], [x], [y])
save("relu_two_outputs", [node("Relu", ["x"], ["y", "z"], "relu")], [x],
     [y])
save("concat_no_inputs", [node("Concat", [], ["y"], "cat", axis=0)], [x],
     [y])
save("clip_four_inputs", [node("Clip", ["x", "x", "x", "x"], ["y"], "clip")],
     [x], [y])
save("gemm_string_trans",
     [node("Gemm", ["x", "x"], ["y"], "fc", transA="yes")], [x], [y])
save("cast_without_to", [node("Cast", ["x"], ["y"], "cast")], [x], [y])
save("relu_unknown_attribute", [node("Relu", ["x"], ["y"], "relu", alpha=1.0)],
     [x], [y])
save("add_empty_input", [node("Add", ["x", ""], ["y"], "add")], [x], [y])

# Names defined twice, and a graph without outputs.
save("input_twice", [node("Relu", ["x"], ["y"], "relu")], [x, x], [y])
save("output_twice", [node("Relu", ["x"], ["y"], "first"),
                      node("Neg", ["x"], ["y"], "second")], [x], [y])
save("writes_input", [node("Relu", ["y"], ["x"], "relu")], [x, y], [x])
save("no_outputs", [node("Relu", ["x"], ["y"], "relu")], [x], [])

# Shape inference: a good chain, whose intermediate result ONNX types, and
# nodes whose libonnx 1.12 inference crashes (a segmentation fault, a
# division by zero, a heap overflow), each followed by a Relu whose result
# is typed only if the node before it was.
k = numpy_helper.from_array(np.ones((1, 1, 3, 3), np.float32), "k")
x4 = vi("x", [1, 1, 8, 8])


def chain(name, first, inputs, inits=(), opset=13):
    save(name, [first, node("Relu", ["h"], ["y"], "relu")], inputs,
         [vi("y", None)], inits, opset)


chain("conv_good", node("Conv", ["x", "k"], ["h"], "conv"), [x4], [k])
chain("conv_rank2", node("Conv", ["x", "k"], ["h"], "conv"), [x], [k])
chain("conv_zero_stride", node("Conv", ["x", "k"], ["h"], "conv",
                               strides=[0, 0]), [x4], [k])
chain("maxpool_zero_stride", node("MaxPool", ["x"], ["h"], "pool",
                                  kernel_shape=[2, 2], strides=[1, 0]), [x4])
scale = numpy_helper.from_array(np.ones(3, np.float32), "s")
chain("layernorm_axis", node("LayerNormalization", ["x", "s"],
                             ["h", "mean", "rstd"], "ln", axis=-3),
      [x], [scale], opset=17)
shape = numpy_helper.from_array(np.array([3, 2], np.int64), "shape")
shape.raw_data += b"\x01" * 3
chain("reshape_ragged_shape", node("Reshape", ["x", "shape"], ["h"],
                                   "reshape"), [x], [shape])
chain("expand_long_shape", node("Expand", ["x", "s"], ["h"], "expand"),
      [x, vi("s", [1 << 40], TensorProto.INT64)])
# An op whose inference ampc has not audited (no conversion either).
chain("det", node("Det", ["q"], ["h"], "det"), [vi("q", [3, 3])])

# Opset 18, which libonnx 1.12 does not know: ampc's schemas of the ops
# that changed there. ReduceMean takes its axes as an input; the opset-17
# attribute is refused; LpPool changed at 18 and has no schema there.
axes = numpy_helper.from_array(np.array([1], np.int64), "axes")
y21 = vi("y", [2, 1])
save("reduce_mean_18", [node("ReduceMean", ["x", "axes"], ["y"], "mean")],
     [x], [y21], [axes], opset=18)
save("reduce_mean_18_attr", [node("ReduceMean", ["x"], ["y"], "mean",
                                  axes=[1])], [x], [y21], opset=18)
save("split_18", [node("Split", ["x"], ["a", "b", "c"], "split", axis=1,
                       num_outputs=3)], [x],
     [vi("a", [2, 1]), vi("b", [2, 1]), vi("c", [2, 1])], opset=18)
save("lppool_18", [node("LpPool", ["x"], ["y"], "pool", kernel_shape=[1])],
     [vi("x", [1, 2, 3])], [vi("y", [1, 2, 3])], opset=18)
