"""Exports a transformer-style MLP block (LayerNorm, Linear, GELU in both
forms) to ONNX, with one test_data_set of PyTorch's own outputs, for
run_and_compare.py.

usage: make_mlp_block_model.py OUT_DIR OPSET

PyTorch 1.13 has no ONNX Gelu (it came with opset 20): it writes the
formula out, x * (erf(x / sqrt(2)) + 1) * 0.5 and the tanh form with x^3 as
three Muls; before opset 17 it writes LayerNorm out too (ReduceMean, Sub,
Pow, ReduceMean, Add, Sqrt, Div, Mul, Add); the block ends in a softmax
written by hand (ReduceMax, Sub, Exp, ReduceSum, Div). ampc's
canonicalization turns each back into one graph.gelu, graph.layer_norm or
graph.softmax.
"""
import sys

import torch
from torch_test_data import export_with_test_data

out, opset = sys.argv[1], int(sys.argv[2])
torch.manual_seed(0)
class HandSoftmax(torch.nn.Module):
    """Softmax as code writes it: exp(x - max) / sum(exp(x - max))."""

    def forward(self, x):
        e = torch.exp(x - x.amax(dim=-1, keepdim=True))
        return e / e.sum(dim=-1, keepdim=True)


model = torch.nn.Sequential(
    torch.nn.LayerNorm(8), torch.nn.Linear(8, 16), torch.nn.GELU(),
    torch.nn.Linear(16, 16), torch.nn.GELU(approximate="tanh"),
    torch.nn.LayerNorm(16),
    torch.nn.Linear(16, 4), HandSoftmax()).eval()
with torch.no_grad():
    model[0].weight.uniform_(0.5, 1.5)  # a LayerNorm scale and bias that
    model[0].bias.uniform_(-0.5, 0.5)   # are not the identity
    model[1].weight.mul_(3)  # pre-activations well into both tails
x = torch.randn(32, 8)
ops = export_with_test_data(model, x, out, opset)
print("ops:", " ".join(o for o in ops if o in ("Erf", "Tanh", "Sqrt",
                                                "LayerNormalization", "Exp")))
