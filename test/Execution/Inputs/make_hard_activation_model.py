"""Exports a small PyTorch model with nn.Hardsigmoid and nn.Hardswish (the
activations of MobileNetV3) to ONNX, with one test_data_set of PyTorch's own
outputs, for run_and_compare.py.

usage: make_hard_activation_model.py OUT_DIR OPSET

PyTorch exports nn.Hardsigmoid as ONNX HardSigmoid(alpha = 1/6, beta = 0.5),
and nn.Hardswish as HardSwish from opset 14 and as HardSigmoid and Mul
before. The pre-activations span both flat ends and the slope between them.
"""
import sys

import torch
from torch_test_data import export_with_test_data

out, opset = sys.argv[1], int(sys.argv[2])
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(8, 16), torch.nn.Hardswish(), torch.nn.Linear(16, 16),
    torch.nn.Hardsigmoid(), torch.nn.Linear(16, 4)).eval()
with torch.no_grad():
    model[0].weight.mul_(4)  # pre-activations well past +-3
    model[2].weight.mul_(4)
x = torch.randn(32, 8)
ops = export_with_test_data(model, x, out, opset)
print("ops:", " ".join(o for o in ops if o.startswith("Hard") or o == "Mul"))
with torch.no_grad():
    pre = [model[0](x), model[2](model[1](model[0](x)))]
print("pre-activations below -3: %d, above 3: %d, between: %d" % (
    sum(int((p < -3).sum()) for p in pre), sum(int((p > 3).sum()) for p in pre),
    sum(int(((p >= -3) & (p <= 3)).sum()) for p in pre)))
