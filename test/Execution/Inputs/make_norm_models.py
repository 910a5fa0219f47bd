"""Writes ln.onnx and bn.onnx into argv[1]: logits = norm(x) * c with
LayerNormalization (x f32[8,4]) or BatchNormalization (x f32[8,4,1,1],
reshaped to [8,4]) and a Constant c = [1, 2, 3, 4], then
SoftmaxCrossEntropyLoss against `label` int64[8]. The norm's scale and
bias initializers are PyTorch's start (ones, zeros), so --init-params
uniform must reproduce them: a zero scale gives the loss ln 4, and c makes
a bias of ones change the loss too (it would not shift every logit alike).
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

C = 4


def model(norm):
    init = [numpy_helper.from_array(np.ones(C, np.float32), "norm.weight"),
            numpy_helper.from_array(np.zeros(C, np.float32), "norm.bias")]
    nodes = [helper.make_node(
        "Constant", [], ["c"],
        value=numpy_helper.from_array(np.arange(1, C + 1, dtype=np.float32)))]
    if norm == "ln":
        shape = [8, C]
        nodes.append(helper.make_node("LayerNormalization",
                                      ["x", "norm.weight", "norm.bias"],
                                      ["h"], axis=-1))
    else:
        shape = [8, C, 1, 1]
        init += [numpy_helper.from_array(np.zeros(C, np.float32), "norm.mean"),
                 numpy_helper.from_array(np.ones(C, np.float32), "norm.var"),
                 numpy_helper.from_array(np.array([8, C], np.int64), "shape")]
        nodes += [helper.make_node("BatchNormalization",
                                   ["x", "norm.weight", "norm.bias",
                                    "norm.mean", "norm.var"], ["n"],
                                   training_mode=1),
                  helper.make_node("Reshape", ["n", "shape"], ["h"])]
    nodes += [helper.make_node("Mul", ["h", "c"], ["logits"]),
              helper.make_node("SoftmaxCrossEntropyLoss", ["logits", "label"],
                               ["loss"], reduction="mean")]
    graph = helper.make_graph(
        nodes, norm,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape),
         helper.make_tensor_value_info("label", TensorProto.INT64, [8])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        initializer=init)
    return helper.make_model(graph,
                             opset_imports=[helper.make_opsetid("", 17)])


if __name__ == "__main__":
    import onnx
    for norm in ("ln", "bn"):
        onnx.save(model(norm), os.path.join(sys.argv[1], norm + ".onnx"))
