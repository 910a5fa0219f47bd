#!/usr/bin/env python3
"""Training from Python with the `ampc` module (docs/python.md).

Part 1 trains examples/mlp.onnx on Fashion-MNIST from a NumPy loop at AMP
O2 (f16 with dynamic loss scaling) and prints the test accuracy after each
epoch, evaluated by the same model compiled for inference with the trained
weights. Part 2 exports a small torch.nn model with its loss through
ampc.torch.export and trains it the same way.

    PYTHONPATH=build/python python3 examples/train_python.py [--epochs N]

Fashion-MNIST is Debian's dataset-fashion-mnist (scripts/setup.sh installs
it); --steps cuts each part short.
"""
import argparse
import gzip
import os
import sys
import tempfile

import numpy as np

import ampc

HERE = os.path.dirname(os.path.abspath(__file__))


def read_idx(path):
    """An IDX file (gzip) as an array: images [N, 28, 28], labels [N]."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big")
             for i in range(dims)]
    return np.frombuffer(data, np.uint8, offset=4 + 4 * dims).reshape(shape)


def fashion_mnist(directory):
    """(train images, train labels, test images, test labels): images
    [N, 1, 28, 28] float32, normalised by the train split's mean and
    standard deviation; labels int64."""
    def split(prefix):
        x = read_idx(os.path.join(directory,
                                  f"{prefix}-images-idx3-ubyte.gz"))
        y = read_idx(os.path.join(directory,
                                  f"{prefix}-labels-idx1-ubyte.gz"))
        return x.astype(np.float32)[:, None] / 255, y.astype(np.int64)
    train_x, train_y = split("train")
    test_x, test_y = split("t10k")
    mean, std = train_x.mean(), train_x.std()
    return (train_x - mean) / std, train_y, (test_x - mean) / std, test_y


def accuracy(model, trained, x, y, batch):
    """Test accuracy of `model` (an InferenceStep) with the weights of
    `trained` (a TrainingStep), over the whole batches of (x, y)."""
    model.load_weights(trained)
    (x_name, _, _), (y_name, _, _) = model.inputs
    correct = total = 0
    for i in range(0, len(x) - batch + 1, batch):
        out = model.run({x_name: x[i:i + batch], y_name: y[i:i + batch]})
        logits = next(v for k, v in out.items() if v.ndim == 2)
        correct += int((logits.argmax(axis=1) == y[i:i + batch]).sum())
        total += batch
    return correct / total


def train(step, evaluate, x, y, epochs, max_steps, seed):
    """Epochs of shuffled batches through `step`, with an accuracy line
    after each."""
    (x_name, _, x_shape), (y_name, _, _) = step.inputs
    batch = x_shape[0]
    rng = np.random.default_rng(seed)
    steps_per_epoch = len(x) // batch
    for epoch in range(1, epochs + 1):
        order = rng.permutation(len(x))
        losses, skipped = [], 0
        for i in range(min(steps_per_epoch, max_steps or steps_per_epoch)):
            rows = order[i * batch:(i + 1) * batch]
            r = step.step({x_name: x[rows], y_name: y[rows]})
            losses.append(r.loss)
            skipped += r.skipped
        print(f"{step.precision}: epoch {epoch}/{epochs}: train loss "
              f"{np.mean(losses):.4f}, test accuracy "
              f"{100 * evaluate(step):.2f}%, loss scale "
              f"{step.loss_scale:g}, skipped {skipped}", flush=True)


def part1(args, data):
    train_x, train_y, test_x, test_y = data
    model = os.path.join(HERE, "mlp.onnx")
    # The model carries its recipe (momentum, lr 0.02, cosine schedule):
    # the cosine schedule needs the run's length in updates.
    steps = args.epochs * (len(train_x) // 64)
    if args.steps:
        steps = args.epochs * args.steps
    step = ampc.compile_training(model, amp="O2", steps=steps,
                                 threads=args.threads)
    infer = ampc.compile_inference(model, amp="O2", threads=args.threads)
    memory = step.memory()
    print(f"mlp.onnx at {step.precision} on {step.device}: planned arena "
          f"{memory['step']['arena_bytes'] / 2**20:.2f} MB, f32 "
          f"{memory['f32']['arena_bytes'] / 2**20:.2f} MB")
    train(step, lambda t: accuracy(infer, t, test_x, test_y, 64),
          train_x, train_y, args.epochs, args.steps, seed=0)


def part2(args, data):
    import torch
    import ampc.torch

    train_x, train_y, test_x, test_y = data

    class ConvNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(1, 8, 3, padding=1)
            self.norm = torch.nn.BatchNorm2d(8)
            self.fc = torch.nn.Linear(8 * 14 * 14, 10)

        def forward(self, x):
            x = torch.nn.functional.max_pool2d(
                torch.relu(self.norm(self.conv(x))), 2)
            return self.fc(x.flatten(1))

    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "convnet.onnx")
        frozen = ampc.torch.export(
            ConvNet(), torch.nn.functional.cross_entropy,
            (torch.from_numpy(train_x[:64]), torch.from_numpy(train_y[:64])),
            path)
        print(f"exported ConvNet; frozen buffers: {', '.join(frozen)}")
        step = ampc.compile_training(path, amp="O2", amp_dtype="bf16",
                                     optimizer="adam", lr=1e-3,
                                     threads=args.threads)
        infer = ampc.compile_inference(path, amp="O2", amp_dtype="bf16",
                                       threads=args.threads)
        # Batch norm in training form normalises with the batch's own
        # statistics, so the accuracy is that of training mode.
        train(step, lambda t: accuracy(infer, t, test_x, test_y, 64),
              train_x, train_y, args.epochs, args.steps, seed=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--steps", type=int, default=0,
                    help="at most this many steps per epoch (0: all)")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--skip-torch", action="store_true",
                    help="leave out part 2 (needs torch)")
    args = ap.parse_args()
    if not os.path.isdir(args.data_dir):
        sys.exit(f"train_python: no Fashion-MNIST in {args.data_dir} "
                 "(scripts/setup.sh installs dataset-fashion-mnist)")
    data = fashion_mnist(args.data_dir)
    part1(args, data)
    if not args.skip_torch:
        part2(args, data)


if __name__ == "__main__":
    main()
