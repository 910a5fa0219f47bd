"""ampc.torch: export a torch.nn.Module with its loss for ampc.

    import ampc, ampc.torch
    ampc.torch.export(module, torch.nn.functional.cross_entropy,
                      (x, labels), "model.onnx")
    step = ampc.compile_training("model.onnx", amp="O2")

export() is tools/export_torch.py's, copied into the package at build time
(one copy of that code): the graph returns `loss` and `output`, every
parameter stays an initializer under its state_dict name, and the buffers
are named in the model's `ampc.frozen` metadata, so ampc leaves them
untrained.
"""
from ._export_torch import FROZEN_KEY, export

__all__ = ["FROZEN_KEY", "export"]
