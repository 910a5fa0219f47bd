"""Exports a small PyTorch model with nn.Hardsigmoid to ONNX (opset 17),
with one test_data_set of PyTorch's own outputs, for run_and_compare.py.

usage: make_hard_sigmoid_model.py OUT_DIR

PyTorch exports nn.Hardsigmoid as ONNX HardSigmoid(alpha = 1/6, beta = 0.5);
the inputs span both flat ends and the slope between them.
"""
import os
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper

out = sys.argv[1]
os.makedirs(os.path.join(out, "test_data_set_0"), exist_ok=True)
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(8, 16), torch.nn.Hardsigmoid(), torch.nn.Linear(16, 4),
    torch.nn.Hardsigmoid()).eval()
with torch.no_grad():
    model[0].weight.mul_(4)  # pre-activations well past +-3
x = torch.randn(32, 8)
with torch.no_grad():
    y = model(x)
torch.onnx.export(model, (x,), os.path.join(out, "model.onnx"),
                  input_names=["x"], output_names=["y"], opset_version=17)
ops = [n.op_type for n in onnx.load(os.path.join(out, "model.onnx")).graph.node]
assert ops.count("HardSigmoid") == 2, ops
for name, t in (("input_0.pb", x), ("output_0.pb", y)):
    with open(os.path.join(out, "test_data_set_0", name), "wb") as f:
        f.write(numpy_helper.from_array(t.numpy().astype(np.float32)).SerializeToString())
pre = model[0](x)
print("pre-activations below -3: %d, above 3: %d, between: %d" % (
    int((pre < -3).sum()), int((pre > 3).sum()),
    int(((pre >= -3) & (pre <= 3)).sum())))
