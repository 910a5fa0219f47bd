#!/usr/bin/python3
"""What the GPU benchmark runs: the models, their AMP configurations, the
optimizer, and the step counts. prepare.sh compiles one Program per
(model, configuration) from this list; drive.py times them and the PyTorch
peers in the same order; report.py lays the results out. Python 3 only (no
torch, no onnx), so it runs under Debian's python here and under the GPU
machine's.

usage: plan.py programs   one line per Program: NAME<TAB>MODEL<TAB>amp-run flags
"""

import sys

# amp-run flags per configuration, and the PyTorch dtype its peer runs
# (PyTorch's AMP is autocast, ampc's O1; its O2 peer is the same autocast
# run, as PyTorch has no O2: the comparison is ampc's level against
# PyTorch's one way of doing AMP).
CONFIGS = {
    "f32": ([], "f32"),
    "O1-f16": (["--amp", "O1", "--amp-dtype", "f16"], "f16"),
    "O2-f16": (["--amp", "O2", "--amp-dtype", "f16"], "f16"),
    "O1-bf16": (["--amp", "O1", "--amp-dtype", "bf16"], "bf16"),
    "O2-bf16": (["--amp", "O2", "--amp-dtype", "bf16"], "bf16"),
}

# In the order they run: the headline model first, so a run cut short by
# its time budget still has it. lr as in each model's reference (mlp9:
# Paddle's 1e-4; the examples' recipe 0.02 without its cosine schedule, a
# constant lr being what the PyTorch peer runs); SGD with momentum 0.9
# everywhere. steps: timed steps after `warmup` (more for the fast models,
# so the median is stable; fewer for f32 at 8192, ~0.1 s a step).
MODELS = [
    dict(name="mlp9x8192", lr=1e-4,
         configs=["f32", "O1-f16", "O2-f16", "O1-bf16", "O2-bf16"],
         steps=40, steps_f32=12, warmup=5),
    dict(name="resnet", lr=0.01, configs=["O1-f16", "O2-f16", "O2-bf16"],
         steps=40, warmup=5),
    dict(name="transformer", lr=0.01,
         configs=["O1-f16", "O2-f16", "O2-bf16"], steps=40, warmup=5),
    dict(name="mlp", lr=0.02, configs=["f32", "O1-f16", "O2-f16", "O2-bf16"],
         steps=200, warmup=20),
    dict(name="lenet5", lr=0.02,
         configs=["f32", "O1-f16", "O2-f16", "O2-bf16"], steps=200,
         warmup=20),
]
MOMENTUM = 0.9
INIT_SEED = 1

# Seconds each piece may take (the whole device call must end inside 10
# minutes; drive.py also stops starting pieces when its budget runs out).
TIMEOUT_AMPC = 60
TIMEOUT_TORCH_EAGER = 90
TIMEOUT_TORCH_COMPILE = 150

# The order of the torch.compile pieces, which come last: the headline
# model, then the cheap compilations, then the expensive ones (ResNet's 20
# convolutions with batch norm in training mode), so that a run cut short
# by its budget loses as few as possible.
COMPILE_ORDER = ["mlp9x8192", "mlp", "lenet5", "transformer", "resnet"]


def program_name(model, config):
    return "%s.%s" % (model, config)


def steps_for(m, config):
    return m.get("steps_f32", m["steps"]) if config == "f32" else m["steps"]


def amp_run_flags(m, config):
    """The training step's flags: the optimizer is compiled into it."""
    return CONFIGS[config][0] + [
        "--optimizer", "momentum", "--momentum", str(MOMENTUM),
        "--lr", repr(m["lr"]), "--lr-schedule", "constant"]


def torch_dtypes(m):
    """The PyTorch peer's dtypes for a model, in config order, once each."""
    out = []
    for c in m["configs"]:
        d = CONFIGS[c][1]
        if d not in out:
            out.append(d)
    return out


def main():
    if sys.argv[1:] != ["programs"]:
        sys.exit("usage: bench/gpu/plan.py programs")
    for m in MODELS:
        for c in m["configs"]:
            print("\t".join([program_name(m["name"], c), m["name"],
                             " ".join(amp_run_flags(m, c))]))


if __name__ == "__main__":
    main()
