"""Exports a PyTorch model in inference form to OUT/model.onnx with one
test_data_set (the input and PyTorch's own output, f32) for
run_and_compare.py: what make_hard_activation_model.py and
make_mlp_block_model.py share.
"""
import os

import numpy as np
import onnx
import torch
from onnx import numpy_helper


def export_with_test_data(model, x, out, opset):
    """Writes the model and test_data_set_0; returns the exported graph's op
    types in node order."""
    os.makedirs(os.path.join(out, "test_data_set_0"), exist_ok=True)
    with torch.no_grad():
        y = model(x)
    path = os.path.join(out, "model.onnx")
    torch.onnx.export(model, (x,), path, input_names=["x"],
                      output_names=["y"], opset_version=opset)
    for name, t in (("input_0.pb", x), ("output_0.pb", y)):
        with open(os.path.join(out, "test_data_set_0", name), "wb") as f:
            f.write(numpy_helper.from_array(
                t.numpy().astype(np.float32)).SerializeToString())
    return [n.op_type for n in onnx.load(path).graph.node]
