#!/usr/bin/env python3
"""Exports a torch.nn.Module with its loss to ONNX, in the training form
amp-run trains.

    import export_torch
    export_torch.export(module, loss_fn, (x, labels), "model.onnx")

The graph takes the module's inputs and then the loss's targets (the last
`targets` of `example_inputs`, one by default) and returns `loss` =
loss_fn(module(*inputs), *targets) and `output`, the module's output.
Inputs are named `input_names` (default x, x1, ... and labels, labels1,
...). The module is exported in training mode (BatchNormalization computes
batch statistics, Dropout drops) without constant folding, so every
parameter and buffer stays an initializer under its state_dict name.

Buffers are not weights: every float initializer that is no trainable
parameter of the module (its buffers, such as a causal mask or a batch
norm's running statistics, its parameters with requires_grad off, the
loss's buffers) is named in the model's `ampc.frozen` metadata, which
ampc's importer reads, so amp-run leaves it untrained.

As a script it exports a small example, a decoder block with a 0/-inf
causal mask buffer and a batch norm:

    export_torch.py OUT.onnx [--opset 17]
"""
import argparse
import copy
import io

import onnx
import torch

FROZEN_KEY = "ampc.frozen"
_FLOAT_TYPES = (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16,
                onnx.TensorProto.BFLOAT16, onnx.TensorProto.DOUBLE)


class _WithLoss(torch.nn.Module):
    """(*inputs, *targets) -> (loss, output)."""

    def __init__(self, module, loss_fn, targets):
        super().__init__()
        self.model = module
        self.loss_fn = loss_fn
        self.targets = targets

    def forward(self, *args):
        inputs, targets = args[:len(args) - self.targets], \
            args[len(args) - self.targets:]
        out = self.model(*inputs)
        return self.loss_fn(out, *targets), out


def _default_names(n_inputs, n_targets):
    def numbered(stem, n):
        return [stem if i == 0 else f"{stem}{i}" for i in range(n)]
    return numbered("x", n_inputs) + numbered("labels", n_targets)


def _rename(model, names):
    """Renames values by the map `names` wherever the graph names them, in
    one pass, refusing a new name another value already has."""
    g = model.graph
    taken = ({t.name for t in g.initializer} | {v.name for v in g.input} |
             {v.name for v in g.output} |
             {o for n in g.node for o in n.output}) - set(names)
    new = list(names.values())
    for n in new:
        if n in taken or new.count(n) > 1:
            raise ValueError(f"export: initializer name '{n}' (without the "
                             f"wrapper's prefix) is taken by another value")

    def renamed(n):
        return names.get(n, n)
    for t in g.initializer:
        t.name = renamed(t.name)
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        vi.name = renamed(vi.name)
    for node in g.node:
        node.input[:] = [renamed(n) for n in node.input]
        node.output[:] = [renamed(n) for n in node.output]


def export(module, loss_fn, example_inputs, path, opset=17, targets=1,
           input_names=None):
    """Writes `module` with its loss to `path` (see the module docstring);
    returns the names written to ampc.frozen."""
    if not isinstance(example_inputs, (tuple, list)):
        example_inputs = (example_inputs,)
    if not 0 < targets < len(example_inputs):
        raise ValueError(
            f"export: {len(example_inputs)} example inputs cannot hold the "
            f"module's inputs and {targets} loss target(s)")
    names = input_names or _default_names(len(example_inputs) - targets,
                                          targets)
    if len(names) != len(example_inputs):
        raise ValueError(f"export: {len(names)} input names for "
                         f"{len(example_inputs)} example inputs")
    # A copy: tracing in training mode runs the module, which would update
    # the caller's batch-norm statistics.
    wrapper = _WithLoss(copy.deepcopy(module), loss_fn, targets).train()
    buf = io.BytesIO()
    torch.onnx.export(wrapper, tuple(example_inputs), buf,
                      opset_version=opset, input_names=list(names),
                      output_names=["loss", "output"],
                      training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False)
    model = onnx.load_from_string(buf.getvalue())
    # The wrapper's prefix off every initializer: the names are the
    # module's state_dict names, as --freeze and a checkpoint read them.
    _rename(model, {t.name: t.name[len("model."):]
                    for t in model.graph.initializer
                    if t.name.startswith("model.")})
    # Every float initializer that is no trainable parameter of the module:
    # its buffers, its parameters with requires_grad off, the loss's
    # buffers (a class weight).
    trained = {n for n, p in module.named_parameters() if p.requires_grad}
    frozen = [t.name for t in model.graph.initializer
              if t.name not in trained and t.data_type in _FLOAT_TYPES]
    for name in frozen:
        if "," in name or name != name.strip():
            raise ValueError(f"export: initializer '{name}' cannot be listed "
                             f"in {FROZEN_KEY} (a comma or surrounding space)")
    del model.metadata_props[:]
    if frozen:
        entry = model.metadata_props.add()
        entry.key = FROZEN_KEY
        entry.value = ",".join(frozen)
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return frozen


class CausalBlock(torch.nn.Module):
    """Self-attention over a causal 0/-inf mask buffer, then a batch norm
    over the features: a buffer that is no weight, and one that a training
    step updates as state."""

    def __init__(self, seq=6, dim=8, classes=4):
        super().__init__()
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.norm = torch.nn.BatchNorm1d(dim)
        self.head = torch.nn.Linear(dim, classes)
        mask = torch.full((seq, seq), float("-inf")).triu(1)
        self.register_buffer("mask", mask)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5 + self.mask
        h = torch.softmax(scores, dim=-1) @ v  # [batch, seq, dim]
        h = self.norm(h.transpose(1, 2)).transpose(1, 2)
        return self.head(h[:, -1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--opset", type=int, default=17)
    a = ap.parse_args()
    torch.manual_seed(0)
    x = torch.randn(4, 6, 8)
    labels = torch.randint(0, 4, (4,))
    frozen = export(CausalBlock(), torch.nn.functional.cross_entropy,
                    (x, labels), a.out, opset=a.opset)
    print(f"export_torch: wrote {a.out}; {FROZEN_KEY}: {','.join(frozen)}")


if __name__ == "__main__":
    main()
