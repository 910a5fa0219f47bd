"""Trains a small network with amp-run in f32 and at O1/O2 in f16 and bf16,
and with PyTorch in f32 and under CPU bf16 autocast, from the same weights
on the same batches (SGD with momentum). MODEL is
- convbn: conv, batch norm, relu, twice, then global average pooling and a
  linear layer. At O1 and O2 ampc runs the batch norms on low-precision
  activations with f32 statistics, scale and shift (AmpLists.cpp);
- encoder: token embedding, one pre-norm encoder block (layer norm,
  attention with a softmax, a GELU MLP) and a token-prediction head. At O2
  ampc runs the layer norms and the softmax on low-precision activations,
  computing in f32 inside (WideCompute); at O1 they are f32.

usage: amp_band_vs_torch.py MODEL AMP_RUN TOOLS_DIR WORK_DIR

The check:
- ampc's f32 losses match PyTorch's f32 losses to 1e-5, relative;
- every AMP loss curve stays within the bf16-autocast band of the f32 curve:
  its largest distance from ampc's f32 losses, relative to the first loss, is
  at most max(2 x PyTorch bf16's distance from PyTorch f32, 1e-3).
Prints one line per configuration (PASS or FAIL); exits 1 on a failure.
"""
import copy
import csv
import os
import subprocess
import sys

import numpy as np
import torch
import torch.nn as nn

model_name, amp_run, tools, work = sys.argv[1:5]
sys.path.insert(0, tools)
import export_torch  # noqa: E402

STEPS, BATCH, LR, MOMENTUM = 8, 8, 0.05, 0.9


class ConvBn(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 16, 3, padding=1, bias=False)
        self.b1 = nn.BatchNorm2d(16)
        self.c2 = nn.Conv2d(16, 16, 3, padding=1, bias=False)
        self.b2 = nn.BatchNorm2d(16)
        self.fc = nn.Linear(16, 5)

    def forward(self, x):
        x = torch.relu(self.b1(self.c1(x)))
        x = torch.relu(self.b2(self.c2(x)))
        return self.fc(x.mean(dim=(2, 3)))


VOCAB, SEQ, DIM, HEADS = 32, 12, 32, 4


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.pos = nn.Parameter(torch.randn(SEQ, DIM) * 0.1)
        self.ln1 = nn.LayerNorm(DIM)
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.proj = nn.Linear(DIM, DIM)
        self.ln2 = nn.LayerNorm(DIM)
        self.fc1 = nn.Linear(DIM, 2 * DIM)
        self.fc2 = nn.Linear(2 * DIM, DIM)
        self.ln = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, VOCAB)

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos
        b, t, d = x.shape
        h, dh = HEADS, d // HEADS
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q = q.reshape(b, t, h, dh).transpose(1, 2)
        k = k.reshape(b, t, h, dh).transpose(1, 2)
        v = v.reshape(b, t, h, dh).transpose(1, 2)
        a = torch.softmax(q @ k.transpose(-1, -2) * dh**-0.5, dim=-1)
        x = x + self.proj((a @ v).transpose(1, 2).reshape(b, t, d))
        x = x + self.fc2(nn.functional.gelu(self.fc1(self.ln2(x))))
        return self.head(self.ln(x))


def token_loss(logits, labels):
    return nn.functional.cross_entropy(logits.reshape(-1, VOCAB),
                                       labels.reshape(-1))


torch.manual_seed(0)
if model_name == "convbn":
    Net, loss_fn = ConvBn, nn.functional.cross_entropy
    x = torch.randn(STEPS * BATCH, 3, 12, 12) * 2 + 0.5
    labels = torch.randint(0, 5, (STEPS * BATCH,))
else:
    Net, loss_fn = Encoder, token_loss
    x = torch.randint(0, VOCAB, (STEPS * BATCH, SEQ))
    labels = torch.randint(0, VOCAB, (STEPS * BATCH, SEQ))
module = Net()
start = copy.deepcopy(module.state_dict())
data = os.path.join(work, "data")
os.makedirs(data, exist_ok=True)
path = os.path.join(work, model_name + ".onnx")
export_torch.export(module, loss_fn, (x[:BATCH], labels[:BATCH]), path)
np.save(os.path.join(data, "x.npy"), x.numpy())
np.save(os.path.join(data, "labels.npy"), labels.numpy())


def ampc(name, flags):
    metrics = os.path.join(work, name + ".csv")
    subprocess.run([amp_run, path, "--data", data, "--steps", str(STEPS),
                    "--optimizer", "momentum", "--momentum", str(MOMENTUM),
                    "--lr", str(LR), "--lr-schedule", "constant",
                    "--progress", "none", "--metrics", metrics] + flags,
                   check=True, stdout=subprocess.DEVNULL)
    with open(metrics) as f:
        return [float(r["loss"]) for r in csv.DictReader(f)]


def torch_losses(bf16):
    net = Net()
    net.load_state_dict(start)
    net.train()
    opt = torch.optim.SGD(net.parameters(), lr=LR, momentum=MOMENTUM)
    out = []
    for s in range(STEPS):
        xb = x[s * BATCH:(s + 1) * BATCH]
        yb = labels[s * BATCH:(s + 1) * BATCH]
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            logits = net(xb)
        loss = loss_fn(logits.float(), yb)
        out.append(loss.item())
        opt.zero_grad()
        loss.backward()
        opt.step()
    return out


def distance(a, b):
    return max(abs(p - q) for p, q in zip(a, b)) / abs(b[0])


torch_f32, torch_bf16 = torch_losses(False), torch_losses(True)
ours = ampc("f32", [])
torch_band = distance(torch_bf16, torch_f32)
band = max(2 * torch_band, 1e-3)
print("torch bf16 autocast against torch f32: %.1e" % torch_band)
failed = False
rel = distance(ours, torch_f32)
ok = len(ours) == STEPS and rel <= 1e-5
failed |= not ok
print("%s f32 against torch f32: %.1e" % ("PASS" if ok else "FAIL", rel))
for level in ("O1", "O2"):
    for dtype in ("f16", "bf16"):
        amp = ampc(level + dtype, ["--amp", level, "--amp-dtype", dtype])
        d = distance(amp, ours)
        ok = len(amp) == STEPS and all(np.isfinite(amp)) and d <= band
        failed |= not ok
        print("%s %s %s against f32: %.1e (band %.1e)"
              % ("PASS" if ok else "FAIL", level, dtype, d, band))
sys.exit(1 if failed else 0)
