#!/usr/bin/python3
"""Trains an example model in PyTorch on Fashion-MNIST: the peer of
`amp-run examples/<model>.onnx --data fashion-mnist` for the accuracy table.

The network is the one examples/make_examples.py writes, as torch modules
whose parameters carry the ONNX initializers' names; it starts from the
weights in the ONNX file. The recipe (optimizer, lr, momentum, lr schedule,
epochs) comes from the file's metadata (ampc.train.*) unless given here.
Data: the IDX files of Debian's dataset-fashion-mnist, pixels normalised
(x/255 - 0.2860)/0.3530, the training split shuffled each epoch from --seed
in batches of the model's batch size, the last partial batch dropped; after
each epoch the whole test split is evaluated (mean loss and accuracy).

--amp bf16 runs forward and loss under torch.autocast("cpu", bfloat16), as
O1 with bf16 does. --amp f16 is refused when torch cannot autocast to f16 on
the CPU (torch 1.13 cannot).

usage: train_torch.py [--model mlp|lenet5] [--onnx FILE] [--epochs N]
         [--lr LR] [--momentum M] [--lr-schedule constant|cosine] [--seed S]
         [--amp none|bf16|f16] [--threads T] [--data DIR]
"""
import argparse
import gzip
import os
import sys
import time
import warnings

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import numpy_helper
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
MEAN, STD = 0.2860, 0.3530


class MLP(nn.Module):
    """The MindSpore quick-start MLP (784-512-512-10)."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 512)
        self.fc2 = nn.Linear(512, 512)
        self.fc3 = nn.Linear(512, 10)

    def forward(self, x):
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


class LeNet5(nn.Module):
    """LeNet-5 for 28x28 inputs (the first convolution pads by 2)."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(400, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


NETWORKS = {"mlp": MLP, "lenet5": LeNet5}


def load_network(name, model):
    """The torch network `name` with the initializers of the ONNX `model`;
    every parameter must be there with its shape (strict load)."""
    net = NETWORKS[name]()
    weights = {
        t.name: torch.from_numpy(numpy_helper.to_array(t).copy())
        for t in model.graph.initializer
    }
    net.load_state_dict(weights, strict=True)
    return net


def batch_size(model):
    image = next(i for i in model.graph.input if i.name == "image")
    return image.type.tensor_type.shape.dim[0].dim_value


def read_idx(path, magic, header):
    with gzip.open(path, "rb") as f:
        data = f.read()
    found = int.from_bytes(data[:4], "big")
    if found != magic:
        sys.exit("%s: not an IDX file of this kind (magic %#x, expected %#x)"
                 % (path, found, magic))
    return np.frombuffer(data, np.uint8, offset=header)


def load_split(data_dir, prefix):
    images = read_idx(os.path.join(data_dir, prefix + "-images-idx3-ubyte.gz"),
                      0x803, 16).reshape(-1, 1, 28, 28)
    labels = read_idx(os.path.join(data_dir, prefix + "-labels-idx1-ubyte.gz"),
                      0x801, 8)
    x = (images.astype(np.float32) / 255.0 - MEAN) / STD
    return torch.from_numpy(x), torch.from_numpy(labels.astype(np.int64))


def autocast(dtype):
    if dtype is None:
        return torch.autocast("cpu", enabled=False)
    return torch.autocast("cpu", dtype=dtype)


def evaluate(net, x, y, dtype):
    net.eval()
    loss_sum, correct = 0.0, 0
    with torch.no_grad(), autocast(dtype):
        for i in range(0, len(x), 1000):
            logits = net(x[i:i + 1000])
            loss_sum += float(
                F.cross_entropy(logits.float(), y[i:i + 1000],
                                reduction="sum"))
            correct += int((logits.argmax(1) == y[i:i + 1000]).sum())
    net.train()
    return loss_sum / len(x), 100.0 * correct / len(x)


def recipe_value(model, key, given, convert, default=None):
    if given is not None:
        return given
    props = {p.key: p.value for p in model.metadata_props}
    if "ampc.train." + key not in props:
        if default is not None:
            return default
        sys.exit("no --%s given and no ampc.train.%s in the model" %
                 (key, key))
    return convert(props["ampc.train." + key])


def main():
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--model", choices=sorted(NETWORKS), default="mlp")
    p.add_argument("--onnx", help="default: examples/<model>.onnx")
    p.add_argument("--epochs", type=int, help="default: the model's recipe")
    p.add_argument("--lr", type=float, help="default: the model's recipe")
    p.add_argument("--momentum", type=float,
                   help="default: the model's recipe")
    p.add_argument("--lr-schedule", choices=["constant", "cosine"],
                   help="cosine: lr to 0 over the whole run, per step "
                   "(default: the model's recipe, else constant)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the shuffling")
    p.add_argument("--amp", choices=["none", "bf16", "f16"], default="none")
    p.add_argument("--threads", type=int, default=0,
                   help="torch threads (0: torch's default)")
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    args = p.parse_args()

    dtype = {"none": None, "bf16": torch.bfloat16,
             "f16": torch.float16}[args.amp]
    if dtype is not None:
        try:
            # torch warns before it raises; the error below says it all.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with autocast(dtype):
                    pass
        except RuntimeError as e:
            p.error("--amp %s: torch %s cannot autocast to it on the CPU (%s)"
                    % (args.amp, torch.__version__, e))
    if args.threads:
        torch.set_num_threads(args.threads)

    model = onnx.load(args.onnx or os.path.join(HERE, args.model + ".onnx"))
    optimizer = recipe_value(model, "optimizer", None, str)
    if optimizer != "momentum":
        sys.exit("the model's recipe asks for optimizer %r; this trainer "
                 "knows momentum only" % optimizer)
    epochs = recipe_value(model, "epochs", args.epochs, int)
    lr = recipe_value(model, "lr", args.lr, float)
    momentum = recipe_value(model, "momentum", args.momentum, float)
    schedule = recipe_value(model, "lr-schedule", args.lr_schedule, str,
                            "constant")
    if schedule not in ("constant", "cosine"):
        sys.exit("the model's recipe asks for lr-schedule %r; this trainer "
                 "knows constant and cosine" % schedule)
    batch = batch_size(model)

    net = load_network(args.model, model)
    opt = torch.optim.SGD(net.parameters(), lr=lr, momentum=momentum)
    train_x, train_y = load_split(args.data, "train")
    test_x, test_y = load_split(args.data, "t10k")
    steps = len(train_x) // batch
    # CosineAnnealingLR stepped after every update, as amp-run's cosine
    # schedule counts updates.
    sched = (torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs * steps)
             if schedule == "cosine" else None)
    shuffle = torch.Generator().manual_seed(args.seed)
    print("%s: torch %s, %d threads, amp %s, momentum lr %g (%s) momentum %g, "
          "batch %d, %d steps/epoch, %d epochs, seed %d" %
          (args.model, torch.__version__, torch.get_num_threads(), args.amp,
           lr, schedule, momentum, batch, steps, epochs, args.seed))
    start = time.perf_counter()
    for epoch in range(1, epochs + 1):
        order = torch.randperm(len(train_x), generator=shuffle)
        epoch_start = time.perf_counter()
        train_loss = 0.0
        for s in range(steps):
            idx = order[s * batch:(s + 1) * batch]
            with autocast(dtype):
                loss = F.cross_entropy(net(train_x[idx]).float(), train_y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            if sched:
                sched.step()
            train_loss += float(loss)
        test_loss, accuracy = evaluate(net, test_x, test_y, dtype)
        print("epoch %d/%d: train_loss %.4f test_loss %.4f test_accuracy "
              "%.2f%% (%.1f s)" %
              (epoch, epochs, train_loss / steps, test_loss, accuracy,
               time.perf_counter() - epoch_start),
              flush=True)
    print("total %.1f s" % (time.perf_counter() - start))


if __name__ == "__main__":
    main()
