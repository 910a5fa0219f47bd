"""Exports a module that uses the ops of issue 24's list that PyTorch models
reach for (a causal mask computed in forward from arange and comparisons,
masked_fill, tril, sin/cos, softplus, F.pad in three modes, repeat, logical
and/or/xor/not, einsum for the attention's contractions, a three-operand
bilinear form and a diagonal, cumsum, topk and argmax, normalize,
logsumexp and amin) with its loss, trains it with amp-run and with PyTorch on
the same batches, and compares every step's loss.

usage: new_ops_vs_torch.py AMP_RUN TOOLS_DIR WORK_DIR OPSET [AMP_RUN_ARGS...]

Prints the exported op types that matter and one PASS or FAIL line per
step; exits 1 on a failure. With extra amp-run arguments (an AMP level)
the tolerance is the bf16-autocast band's, 5e-2 of the loss.
"""
import copy
import os
import sys

import onnx
import torch
import torch.nn.functional as F
from torch_test_data import train_and_compare

amp_run, tools, work, opset = sys.argv[1:5]
extra = sys.argv[5:]
sys.path.insert(0, tools)
import export_torch  # noqa: E402


class NewOps(torch.nn.Module):
    def __init__(self, dim=8, classes=4):
        super().__init__()
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.mix = torch.nn.Linear(dim, dim)
        self.head = torch.nn.Linear(2 * dim, classes)
        self.bilinear = torch.nn.Parameter(0.1 * torch.randn(dim, dim, dim))

    def forward(self, x):  # [batch, seq, dim]
        seq = x.shape[1]
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        # Range, Unsqueeze, GreaterOrEqual / Less, Not, Where.
        pos = torch.arange(seq)
        causal = pos[:, None] >= pos[None, :]
        # Einsum, as attention code often writes its contractions.
        scores = torch.einsum("bqd,bkd->bqk", q, k) / q.shape[-1] ** 0.5
        scores = scores.masked_fill(~causal, float("-inf"))
        h = torch.einsum("bqk,bkd->bqd", torch.softmax(scores, dim=-1), v)
        # Einsum of three operands (a bilinear form) and a diagonal.
        bil = torch.einsum("bi,oij,bj->bo", h.mean(1), self.bilinear,
                           h.amax(1))
        diag = torch.einsum("bqq->bq", h @ h.transpose(-2, -1))
        h = h + 0.1 * bil[:, None, :] + 0.01 * diag[..., None]
        # CumSum, TopK (its values on the loss's path) and ArgMax (an index
        # in a mask).
        cs = torch.cumsum(h, dim=1) / seq
        top = torch.topk(h, 3, dim=-1).values.sum(-1, keepdim=True)
        first = h.argmax(-1, keepdim=True) == 0
        h = h + 0.1 * cs + 0.1 * torch.where(first, top, -top)
        # ReduceL2 (F.normalize), ReduceLogSumExp and ReduceMin.
        h = (3 * F.normalize(h, dim=-1) +
             0.05 * torch.logsumexp(h, dim=1, keepdim=True) +
             0.05 * h.amin(1, keepdim=True))
        # Trilu on an activation, Sin, Cos, Softplus.
        g = torch.tril(h @ h.transpose(-2, -1), diagonal=-1) @ h
        h = h + 0.1 * torch.sin(g) * torch.cos(h)
        h = F.softplus(self.mix(h))
        # Pad (reflect, replicate = edge, constant) and Tile.
        p = F.pad(h.transpose(1, 2), (2, 1), mode="reflect")
        p = F.pad(p, (1, 0), mode="replicate")
        p = F.pad(p, (0, 1), mode="constant", value=0.5)  # [b, dim, seq+5]
        t = p.repeat(1, 2, 1)  # [b, 2 dim, seq+5]
        # And, Or, Xor on comparisons, then a select.
        band = ((t > 0.2) & (t < 1.5)) | (t > 2.0)
        odd = band ^ (t < 0.5)
        t = torch.where(odd, t, -t)
        return self.head(t.mean(-1))


STEPS, BATCH, LR = 3, 4, 0.05
torch.manual_seed(0)
module = NewOps()
reference = copy.deepcopy(module)
x = torch.randn(STEPS * BATCH, 6, 8)
labels = torch.randint(0, 4, (STEPS * BATCH,))
path = os.path.join(work, "model.onnx")
export_torch.export(module, F.cross_entropy, (x[:BATCH], labels[:BATCH]),
                    path, opset=int(opset))
wanted = ["Range", "ConstantOfShape", "GreaterOrEqual", "Less", "Greater",
          "Not", "And", "Or", "Xor", "Where", "Trilu", "Sin", "Cos",
          "Softplus", "Pad", "Tile", "Equal", "Einsum", "CumSum", "TopK",
          "ArgMax", "ReduceL2", "ReduceLogSumExp", "ReduceMin"]
types = {n.op_type for n in onnx.load(path).graph.node}
print("ops:", " ".join(o for o in wanted if o in types))
ok = train_and_compare(amp_run, path, reference, x, labels, STEPS, BATCH, LR,
                       work, extra, 5e-2 if extra else 1e-5)
sys.exit(0 if ok else 1)
