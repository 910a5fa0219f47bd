#!/usr/bin/python3
"""The GPU benchmark's models: one PyTorch definition each, exported to the
ONNX `train` form that amp-run compiles, and imported by torch_peer.py to
train the same network in PyTorch.

The ONNX `train` form is that of /work/shared/models: inputs (x, target),
outputs (loss, output); the loss is computed in the graph; weights are
initializers. Opset 17.

* mlp9x8192: the seeds' 9-layer Linear network (Paddle's AMP tutorial
  SimpleNet, /work/shared/models/mlp9) widened to 8192, MSE loss exported as
  Sub, Mul, ReduceMean. Built node by node (as the seed model's export reads)
  rather than through torch.onnx.export, so that no 2.4 GB of weights exist
  in memory or on disk: every initializer is external data in one SPARSE
  file (made with truncate, read back as zeros). The benchmark Programs are
  compiled with --program-weights=omit and amp-exec draws the weights on the
  device (--init-params), so the zeros are never used.
* mlp, lenet5: examples/mlp.onnx and examples/lenet5.onnx, rewritten by
  examples/make_examples.py at another batch.
* resnet: a CIFAR ResNet-18 (3x32x32, BasicBlocks 2-2-2-2 of 64-128-256-512
  channels, conv-bn-relu, residual adds, global average pool, fc 10),
  batch norm in training mode, SoftmaxCrossEntropyLoss.
* transformer: a BERT-style encoder with a token-prediction head: token
  embedding (Gather) plus a learned position table, pre-norm blocks of
  LayerNormalization, multi-head attention (MatMul, Softmax), a GELU MLP
  (exported as its Erf form, which the importer maps; ONNX's Gelu op needs
  opset 20) and residual adds, a final LayerNormalization and a vocabulary
  projection, SoftmaxCrossEntropyLoss over every position. No attention
  mask: an encoder attends to every position, and the importer has no
  boolean-mask path worth timing here.

Sizes: `full` is what the GPU bench times; `tiny` is the --dry-run size
that trains in a second on a CPU.

usage: models.py OUT_DIR [--size full|tiny] [--models NAME ...] [--sizes FILE]
"""

import argparse
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
OPSET = 17

# Per model and size: the batch and the network's dimensions. The full
# batches: the seeds' MLP at 2048 and the examples at 256 (issue 8); ResNet
# and the transformer at a batch that keeps an H100's SMs busy (a ResNet-18
# CIFAR step at 512 images is ~0.9 TFLOP; the encoder at 64 x 256 tokens is
# 16384 tokens per step, ~1 TFLOP).
SIZES = {
    "full": {
        "mlp9x8192": dict(batch=2048, width=8192, layers=9),
        "mlp": dict(batch=256),
        "lenet5": dict(batch=256),
        "resnet": dict(batch=512, width=64, blocks=(2, 2, 2, 2), classes=10),
        "transformer": dict(batch=64, seq=256, dim=512, heads=8, ff=2048,
                            layers=4, vocab=8192),
    },
    "tiny": {
        "mlp9x8192": dict(batch=8, width=64, layers=9),
        "mlp": dict(batch=8),
        "lenet5": dict(batch=8),
        "resnet": dict(batch=2, width=8, blocks=(1, 1, 1, 1), classes=10),
        "transformer": dict(batch=2, seq=16, dim=32, heads=4, ff=64,
                            layers=1, vocab=128),
    },
}
MODELS = list(SIZES["full"])


# ---------------------------------------------------------------------------
# PyTorch definitions (also used by torch_peer.py, under torch 2.11).
# ---------------------------------------------------------------------------

class MLP9(nn.Module):
    """Paddle's SimpleNet: `layers` Linear(width, width), no activation."""

    def __init__(self, width, layers, **_):
        super().__init__()
        self.linears = nn.ModuleList(
            nn.Linear(width, width) for _ in range(layers))

    def forward(self, x):
        for lin in self.linears:
            x = lin(x)
        return x


class ExampleMLP(nn.Module):
    """examples/mlp.onnx: flatten 784 -> 512 -> relu -> 512 -> relu -> 10."""

    def __init__(self, **_):
        super().__init__()
        self.fc1 = nn.Linear(784, 512)
        self.fc2 = nn.Linear(512, 512)
        self.fc3 = nn.Linear(512, 10)

    def forward(self, x):
        x = F.relu(self.fc1(torch.flatten(x, 1)))
        return self.fc3(F.relu(self.fc2(x)))


class LeNet5(nn.Module):
    """examples/lenet5.onnx: LeNet-5 for 1x28x28."""

    def __init__(self, **_):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(400, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = F.relu(self.fc1(torch.flatten(x, 1)))
        return self.fc3(F.relu(self.fc2(x)))


class BasicBlock(nn.Module):
    def __init__(self, c_in, c_out, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(c_out)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(c_out)
        self.shortcut = None
        if stride != 1 or c_in != c_out:
            self.shortcut = nn.Sequential(
                nn.Conv2d(c_in, c_out, 1, stride, bias=False),
                nn.BatchNorm2d(c_out))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (x if self.shortcut is None else self.shortcut(x)))


class ResNet(nn.Module):
    """CIFAR ResNet (He et al. 2016, the 3x3-stem variant): ResNet-18 with
    blocks=(2, 2, 2, 2) and width 64."""

    def __init__(self, width, blocks, classes, **_):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        layers, c = [], width
        for i, n in enumerate(blocks):
            c_out = width * 2**i
            for j in range(n):
                layers.append(BasicBlock(c, c_out, 2 if (i and not j) else 1))
                c = c_out
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(c, classes)

    def forward(self, x):
        x = self.layers(F.relu(self.bn1(self.conv1(x))))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class TorchvisionResNet18(nn.Module):
    """torchvision's resnet18 itself (7x7 stride-2 stem, 3x3 stride-2 max
    pooling, BasicBlocks 2-2-2-2 of 64-512 channels), for bench/amp_cpu.py
    at 3x32x32; not one of the GPU plan's models."""

    def __init__(self, classes, **_):
        super().__init__()
        import torchvision
        self.net = torchvision.models.resnet18(num_classes=classes)

    def forward(self, x):
        return self.net(x)


class EncoderBlock(nn.Module):
    """Pre-norm encoder block. Attention is written out (not
    nn.MultiheadAttention or scaled_dot_product_attention) so that the ONNX
    export is plain MatMul/Softmax; torch_peer.py times the same code, and
    with torch.compile PyTorch may fuse it as it likes."""

    def __init__(self, dim, heads, ff):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, ff)
        self.fc2 = nn.Linear(ff, dim)

    def forward(self, x):
        b, t, d = x.shape
        h, dh = self.heads, d // self.heads
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q = q.reshape(b, t, h, dh).transpose(1, 2)
        k = k.reshape(b, t, h, dh).transpose(1, 2)
        v = v.reshape(b, t, h, dh).transpose(1, 2)
        a = torch.softmax(q @ k.transpose(-1, -2) * dh**-0.5, dim=-1)
        y = (a @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class Transformer(nn.Module):
    def __init__(self, seq, dim, heads, ff, layers, vocab, **_):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.randn(seq, dim) * 0.02)
        self.blocks = nn.Sequential(
            *[EncoderBlock(dim, heads, ff) for _ in range(layers)])
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        x = self.blocks(self.embed(tokens) + self.pos)
        return self.head(self.ln(x))


NETWORKS = {"mlp9x8192": MLP9, "mlp": ExampleMLP, "lenet5": LeNet5,
            "resnet": ResNet, "resnet18tv": TorchvisionResNet18,
            "transformer": Transformer}


def network(name, size):
    return NETWORKS[name](**SIZES[size][name])


def batch_size(name, size):
    return SIZES[size][name]["batch"]


def loss_fn(name):
    """The loss the ONNX graph computes, as PyTorch computes it."""
    if name == "mlp9x8192":
        return F.mse_loss
    if name == "transformer":
        return lambda out, tgt: F.cross_entropy(
            out.reshape(-1, out.shape[-1]), tgt.reshape(-1))
    return F.cross_entropy


def random_batch(name, size, device, generator=None):
    """(x, target) of the ONNX model's shapes and dtypes, random."""
    s = SIZES[size][name]
    b = s["batch"]
    g = dict(device=device, generator=generator)
    if name == "mlp9x8192":
        return (torch.randn(b, s["width"], **g),
                torch.randn(b, s["width"], **g))
    if name in ("mlp", "lenet5"):
        return (torch.randn(b, 1, 28, 28, **g),
                torch.randint(0, 10, (b,), **g))
    if name in ("resnet", "resnet18tv"):
        return (torch.randn(b, 3, 32, 32, **g),
                torch.randint(0, s["classes"], (b,), **g))
    return (torch.randint(0, s["vocab"], (b, s["seq"]), **g),
            torch.randint(0, s["vocab"], (b, s["seq"]), **g))


# ---------------------------------------------------------------------------
# ONNX export (Debian's torch 1.13 and onnx 1.12, on the CPU).
# ---------------------------------------------------------------------------

class WithLoss(nn.Module):
    """The `train` form: (x, target) -> (loss, output)."""

    def __init__(self, name, net):
        super().__init__()
        self.model = net
        self.loss = loss_fn(name)

    def forward(self, x, target):
        out = self.model(x)
        return self.loss(out, target), out


def export_torch(name, size, path):
    torch.manual_seed(0)
    net = WithLoss(name, network(name, size)).train()
    x, target = random_batch(name, size, "cpu")
    # TRAINING keeps BatchNormalization in training mode (batch statistics,
    # training_mode=1), as a training step computes it; no constant folding,
    # so the weights stay initializers (the shared models' train form).
    torch.onnx.export(net, (x, target), path, opset_version=OPSET,
                      input_names=["x", "target"],
                      output_names=["loss", "output"],
                      training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False)


def export_mlp9x8192(size, path):
    """9 Gemm(transB=1) + Sub, Mul, ReduceMean, as the seed mlp9 export reads,
    every weight external data in one sparse file next to `path`."""
    import onnx
    from onnx import TensorProto, helper

    s = SIZES[size]["mlp9x8192"]
    b, w, n = s["batch"], s["width"], s["layers"]
    data_name = os.path.basename(path) + ".data"
    data_path = os.path.join(os.path.dirname(path), data_name)
    nodes, inits, offset = [], [], 0

    def external(name, shape):
        nonlocal offset
        t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=shape)
        t.data_location = TensorProto.EXTERNAL
        length = 4 * int(np.prod(shape))
        for k, v in (("location", data_name), ("offset", str(offset)),
                     ("length", str(length))):
            e = t.external_data.add()
            e.key, e.value = k, v
        offset += length
        inits.append(t)
        return name

    x = "x"
    for i in range(n):
        mod = "model.linears.%d" % i
        out = "output" if i == n - 1 else "/model/linears.%d/Gemm_output_0" % i
        nodes.append(helper.make_node(
            "Gemm", [x, external(mod + ".weight", [w, w]),
                     external(mod + ".bias", [w])], [out],
            name="/model/linears.%d/Gemm" % i, alpha=1.0, beta=1.0, transB=1))
        x = out
    nodes += [helper.make_node("Sub", ["output", "target"], ["/Sub_output_0"],
                               name="/Sub"),
              helper.make_node("Mul", ["/Sub_output_0", "/Sub_output_0"],
                               ["/Mul_output_0"], name="/Mul"),
              helper.make_node("ReduceMean", ["/Mul_output_0"], ["loss"],
                               name="/ReduceMean", keepdims=0)]
    f32 = TensorProto.FLOAT
    graph = helper.make_graph(
        nodes, "mlp9x8192",
        [helper.make_tensor_value_info("x", f32, [b, w]),
         helper.make_tensor_value_info("target", f32, [b, w])],
        [helper.make_tensor_value_info("loss", f32, []),
         helper.make_tensor_value_info("output", f32, [b, w])],
        initializer=inits)
    model = helper.make_model(graph, producer_name="ampc bench/gpu/models.py",
                              opset_imports=[helper.make_opsetid("", OPSET)],
                              ir_version=8)
    # A sparse file: its size is set, no byte is written (reads give zeros).
    with open(data_path, "wb") as f:
        f.truncate(offset)
    onnx.save(model, path)


def export_example(name, size, path):
    import onnx
    sys.path.insert(0, os.path.join(REPO, "examples"))
    import make_examples
    make_examples.BATCH = batch_size(name, size)
    onnx.save(make_examples.make_model(name), path)


def export(name, size, out_dir):
    path = os.path.join(out_dir, name + ".onnx")
    if name == "mlp9x8192":
        export_mlp9x8192(size, path)
    elif name in ("mlp", "lenet5"):
        export_example(name, size, path)
    else:
        export_torch(name, size, path)
    return path


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out_dir")
    p.add_argument("--size", choices=sorted(SIZES), default="full")
    p.add_argument("--models", nargs="+", choices=MODELS, default=MODELS)
    p.add_argument("--sizes", metavar="FILE",
                   help="also write the size's dimensions here (JSON: "
                   "{model: {batch, ...}})")
    args = p.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    if args.sizes:
        import json
        with open(args.sizes, "w") as f:
            json.dump(SIZES[args.size], f, indent=1)
    for name in args.models:
        print("bench/gpu/models.py: wrote", export(name, args.size,
                                                    args.out_dir))


if __name__ == "__main__":
    main()
