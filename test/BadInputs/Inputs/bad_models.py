"""Writes the malformed ONNX models of the bad-input catalogue
(models.test, open-models.test) into the directory given as argv[1]: one
defect each, in a file named after the case.

Built with python3-onnx's helper API and, where the helper or the checker
would refuse the defect, by editing the protobuf directly, so each file is
wrong in exactly the way its name says. Only good.onnx is checked.
"""
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


def model(nodes, inputs, outputs, inits=(), opset=13, domains=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(
        g, opset_imports=[helper.make_opsetid("", opset)] +
        [helper.make_opsetid(d, 1) for d in domains],
        producer_name="ampc-bad-inputs")
    m.ir_version = 8
    return m


def save(name, m):
    onnx.save(m, os.path.join(out, name + ".onnx"))


def save_graph(name, nodes, inputs, outputs, inits=(), opset=13):
    save(name, model(nodes, inputs, outputs, inits, opset))


def node(op, ins, outs, name, **attrs):
    return helper.make_node(op, ins, outs, name=name, **attrs)


def tensor(name, array):
    return numpy_helper.from_array(array, name)


x23, y23 = vi("x", [2, 3]), vi("y", [2, 3])
w = tensor("w", np.ones((3, 4), np.float32))


def relu_model():
    return model([node("Relu", ["x"], ["y"], "relu")], [x23], [y23])


def matmul(name, weight, x=x23):
    save_graph(name, [node("MatMul", ["x", "w"], ["y"], "mm")], [x],
               [vi("y", [2, 4])], [weight])


good = relu_model()
onnx.checker.check_model(good)
save("good", good)

# Not a model: random bytes, and a valid protobuf of another message.
open(os.path.join(out, "binary.onnx"), "wb").write(
    bytes((i * 73 + 41) % 256 for i in range(512)))
open(os.path.join(out, "tensor.onnx"), "wb").write(
    tensor("t", np.ones(3, np.float32)).SerializeToString())

# A ModelProto without a graph.
m = relu_model()
m.ClearField("graph")
save("no_graph", m)
# A graph with no nodes and no outputs: it computes nothing.
save_graph("no_outputs", [], [x23], [])

# Ops: misspelt, in a custom domain, with no op type, an opset from the
# future and one from before ampc's range.
save_graph("unknown_op", [node("Reluu", ["x"], ["y"], "typo")], [x23], [y23])
save("custom_domain", model(
    [helper.make_node("FancyOp", ["x"], ["y"], name="fancy",
                      domain="com.example")],
    [x23], [y23], domains=["com.example"]))
# Several ops ampc lacks (ONNX defines them): every one is named at once.
save_graph("unsupported_ops", [node("Sinh", ["x"], ["s"], "sinh0"),
                               node("Sinh", ["s"], ["t"], "sinh1"),
                               node("Softsign", ["t"], ["y"], "softsign0")],
           [x23], [y23])
save_graph("empty_op_type", [node("", ["x"], ["y"], "nothing")], [x23], [y23])
save_graph("opset_future", [node("Relu", ["x"], ["y"], "relu")], [x23], [y23],
           opset=99)
save_graph("opset_old", [node("Softmax", ["x"], ["y"], "sm")], [x23], [y23],
           opset=1)
m = relu_model()
m.ir_version = 99
save("ir_future", m)

# Attributes: of the wrong type, out of range, a subgraph.
save_graph("attr_type", [node("Gemm", ["x", "w"], ["y"], "fc", transB="yes")],
           [x23], [vi("y", [2, 4])], [w])
save_graph("attr_range", [node("Softmax", ["x"], ["y"], "sm", axis=5)],
           [x23], [y23])
then = helper.make_graph([helper.make_node("Relu", ["x"], ["t"])], "then", [],
                         [vi("t", [2, 3])])
other = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                          [vi("e", [2, 3])])
save_graph("if_subgraph",
           [node("If", ["c"], ["y"], "branch", then_branch=then,
                 else_branch=other)],
           [vi("c", [], TensorProto.BOOL), x23], [y23])

# Graph structure: wrong arity, names defined twice, a cycle, names
# defined nowhere.
save_graph("arity", [node("Relu", ["x", "x"], ["y"], "relu2")], [x23], [y23])
save_graph("duplicate_output", [node("Relu", ["x"], ["y"], "a"),
                                node("Neg", ["x"], ["y"], "b")], [x23], [y23])
save_graph("duplicate_initializer", [node("MatMul", ["x", "w"], ["y"], "mm")],
           [x23], [vi("y", [2, 4])],
           [w, tensor("w", np.zeros((3, 4), np.float32))])
save_graph("duplicate_input", [node("Add", ["x", "x"], ["y"], "add")],
           [x23, x23], [y23])
save_graph("cycle", [node("Add", ["x", "b"], ["a"], "first"),
                     node("Relu", ["a"], ["b"], "second")], [x23],
           [vi("b", [2, 3])])
save_graph("missing_output", [node("Relu", ["x"], ["y"], "relu")], [x23],
           [vi("z", [2, 3])])
save_graph("missing_initializer",
           [node("MatMul", ["x", "weights"], ["y"], "mm")], [x23],
           [vi("y", [2, 4])], [w])

# Shapes that do not fit the op.
save_graph("broadcast", [node("Add", ["x", "z"], ["y"], "add")],
           [x23, vi("z", [4, 5])], [y23])
save_graph("reshape", [node("Reshape", ["x", "shape"], ["y"], "reshape")],
           [x23], [vi("y", [5, 5])],
           [tensor("shape", np.array([5, 5], np.int64))])
save_graph("reshape_two_inferred",
           [node("Reshape", ["x", "shape"], ["y"], "reshape")],
           [vi("x", [2, 6])], [vi("y", [3, 4])],
           [tensor("shape", np.array([-1, -1], np.int64))])
k4 = tensor("k", np.ones((4, 2, 3, 3), np.float32))
save_graph("conv_channels", [node("Conv", ["x", "k"], ["y"], "conv")],
           [vi("x", [1, 3, 8, 8])], [vi("y", [1, 4, 6, 6])], [k4])
save_graph("conv_group", [node("Conv", ["x", "k"], ["y"], "conv", group=3)],
           [vi("x", [1, 6, 8, 8])], [vi("y", [1, 4, 6, 6])], [k4])
k1 = tensor("k", np.ones((1, 1, 3, 3), np.float32))
save_graph("conv_rank2", [node("Conv", ["x", "k"], ["y"], "conv")], [x23],
           [vi("y", [1, 1, 1, 1])], [k1])
save_graph("conv_rank3", [node("Conv", ["x", "k"], ["y"], "conv")],
           [vi("x", [1, 8, 8])], [vi("y", [1, 1, 6, 6])], [k1])
save_graph("pool_kernel",
           [node("MaxPool", ["x"], ["y"], "pool", kernel_shape=[9, 9])],
           [vi("x", [1, 1, 4, 4])], [vi("y", [1, 1, 1, 1])])
save_graph("pool_rank",
           [node("MaxPool", ["x"], ["y"], "pool", kernel_shape=[2, 2])],
           [vi("x", [4, 4])], [vi("y", [2, 2])])
save_graph("gemm_rank", [node("Gemm", ["x", "x"], ["y"], "fc")],
           [vi("x", [2, 3, 4])], [vi("y", [2, 2])])
save_graph("transpose_perm", [node("Transpose", ["x"], ["y"], "tr",
                                   perm=[0, 0])], [x23], [vi("y", [3, 2])])
save_graph("concat", [node("Concat", ["x", "z"], ["y"], "cat", axis=0)],
           [x23, vi("z", [2, 5])], [vi("y", [4, 3])])
save_graph("split", [node("Split", ["x"], ["a", "b"], "split", axis=0)],
           [vi("x", [3, 4])], [vi("a", [2, 4]), vi("b", [1, 4])])
s5 = tensor("s", np.ones(5, np.float32))
save_graph("batchnorm",
           [node("BatchNormalization", ["x", "s", "s", "s", "s"], ["y"],
                 "bn")],
           [vi("x", [2, 3, 4, 4])], [vi("y", [2, 3, 4, 4])], [s5])
save_graph("gather_index", [node("Gather", ["x", "idx"], ["y"], "gather")],
           [vi("x", [3, 4])], [vi("y", [2, 4])],
           [tensor("idx", np.array([0, 7], np.int64))])
# The declared output type is not what the node computes.
save_graph("output_shape", [node("Relu", ["x"], ["y"], "relu")], [x23],
           [vi("y", [7, 7])])
save_graph("output_dtype", [node("Relu", ["x"], ["y"], "relu")], [x23],
           [vi("y", [2, 3], TensorProto.INT64)])
# An initializer named like the graph input, of another shape.
save_graph("init_shadows_input", [node("Relu", ["x"], ["y"], "relu")], [x23],
           [y23], [tensor("x", np.ones(5, np.float32))])

# Constants and attributes ampc cannot use.
save_graph("cast_uint8",
           [node("Cast", ["x"], ["y"], "cast", to=TensorProto.UINT8)], [x23],
           [vi("y", [2, 3], TensorProto.UINT8)])
save_graph("constant_empty", [node("Constant", [], ["c"], "const"),
                              node("Add", ["x", "c"], ["y"], "add")],
           [x23], [y23])
save_graph("dropout_initializer",
           [node("Dropout", ["x", "r"], ["y"], "drop")], [x23], [y23],
           [tensor("r", np.array(0.5, np.float32))])
save_graph("dropout_range",
           [node("Constant", [], ["r"], "ratio",
                 value=helper.make_tensor("v", F, [], [1.5])),
            node("Dropout", ["x", "r"], ["y"], "drop")], [x23], [y23])

# Dtypes ampc has no type for.
save_graph("complex_initializer", [node("Identity", ["c"], ["y"], "id")], [],
           [vi("y", [2], TensorProto.COMPLEX64)],
           [tensor("c", np.array([1 + 2j, 3 - 1j], np.complex64))])
save_graph("string_input", [node("Identity", ["s"], ["y"], "id")],
           [vi("s", [2], TensorProto.STRING)],
           [vi("y", [2], TensorProto.STRING)])
m = relu_model()
m.graph.input[0].ClearField("type")
save("untyped_input", m)

# Initializers whose data cannot be what they say.
neg = tensor("w", np.ones((3, 4), np.float32))
neg.dims[0] = -3
matmul("negative_dim", neg)
matmul("huge_initializer",
       onnx.TensorProto(name="w", data_type=F, dims=[1 << 32, 1 << 32]),
       vi("x", [2, 1 << 32]))
short = helper.make_tensor("w", F, [3, 4], np.ones(12).tolist())
del short.float_data[6:]
matmul("short_float_data", short)
ext = tensor("w", np.ones((3, 4), np.float32))
ext.data_location = TensorProto.EXTERNAL
ext.ClearField("raw_data")
for key, value in (("location", "missing_weights.bin"), ("offset", "0"),
                   ("length", "48")):
    entry = ext.external_data.add()
    entry.key, entry.value = key, value
matmul("external_missing", ext)
ext.external_data[0].value = "../escaped_weights.bin"
matmul("external_escape", ext)
ext.external_data[0].value = "/etc/passwd"
matmul("external_absolute", ext)
# Inside the directory, but no regular file: a link to /dev/zero, a FIFO.
for name, make in (("zero_weights.bin", lambda p: os.symlink("/dev/zero", p)),
                   ("fifo_weights.bin", os.mkfifo)):
    path = os.path.join(out, name)
    if os.path.lexists(path):
        os.remove(path)
    make(path)
ext.external_data[0].value = "zero_weights.bin"
matmul("external_device", ext)
ext.external_data[0].value = "fifo_weights.bin"
matmul("external_fifo", ext)

# Training models: no output is a loss; float labels for a loss; nothing
# to train.
matmul("no_loss", w)
save_graph("float_labels",
           [node("MatMul", ["x", "w"], ["logits"], "mm"),
            node("SoftmaxCrossEntropyLoss", ["logits", "labels"], ["loss"],
                 "ce")],
           [x23, vi("labels", [2])], [vi("loss", [])], [w])
save_graph("no_params",
           [node("ReduceMean", ["x"], ["loss"], "mean", keepdims=0)], [x23],
           [vi("loss", [])])

# Sizes (the resource limits): a dynamic batch to give with --shape, an
# Expand to 2^40 x 2^40 elements, an initializer of 2^41 elements.
save_graph("dynamic", [node("Relu", ["x"], ["y"], "relu")],
           [vi("x", ["batch", 3])], [vi("y", ["batch", 3])])
save_graph("expand_overflow",
           [node("Expand", ["x", "shape"], ["y"], "expand")],
           [vi("x", [1])], [vi("y", [1 << 40, 1 << 40])],
           [tensor("shape", np.array([1 << 40, 1 << 40], np.int64))])
matmul("initializer_elements",
       onnx.TensorProto(name="w", data_type=F, dims=[1 << 21, 1 << 20]))

# Numerics: a Log that makes NaN of negative inputs, an initializer
# holding NaN.
save_graph("log", [node("Log", ["x"], ["y"], "log_x")], [x23], [y23])
nan_w = np.ones((2, 3), np.float32)
nan_w[1, 2] = np.nan
save_graph("nan_initializer", [node("Add", ["x", "w"], ["y"], "add")], [x23],
           [y23], [tensor("w", nan_w)])
