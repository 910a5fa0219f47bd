#!/usr/bin/python3
"""What the GPU benchmark runs: the models, their AMP configurations, the
optimizer, and the step counts of the two kinds of device run. prepare.sh
compiles the Programs from these lists; drive.py (through first-run.sh)
times them and the PyTorch peers; report.py lays the results out. Python 3
only (no torch, no onnx), so it runs under Debian's python here and under
the GPU machine's.

Two sets of Programs:
  bench  every (model, configuration) of MODELS at the `full` size (the
         --dry-run: the tiny ones), timed against PyTorch;
  tiny   every model in every configuration of CONFIGS at the `tiny` size,
         run on --device cpu and --device cuda by the first run's loss
         comparison (LOSS_STEPS steps each).
Step counts: `steps`/`warmup` (and `steps_f32`) are the headline sweep's
(first-run.sh --rerun); `first` gives the first run's fewer steps and the
configurations it runs.

usage: plan.py programs        one line per bench Program: NAME<TAB>MODEL<TAB>amp-run flags
       plan.py tiny-programs   the same for the tiny Programs
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
#
# first: the first run (GPU-REVIEW.md section 1), which must fit about six
# minutes with everything else: the 8192 MLP in f32, O1 f16, O2 f16 and O2
# bf16 with few steps, the other models once each (O2 f16). Its warm-up
# covers step 0 (run kernel by kernel) and step 1 (captures the CUDA graph)
# so that the timed steps are graph replays.
MODELS = [
    dict(name="mlp9x8192", lr=1e-4,
         configs=["f32", "O1-f16", "O2-f16", "O1-bf16", "O2-bf16"],
         steps=40, steps_f32=12, warmup=5,
         first=dict(configs=["f32", "O1-f16", "O2-f16", "O2-bf16"],
                    steps=10, steps_f32=4, warmup=3)),
    dict(name="resnet", lr=0.01, configs=["O1-f16", "O2-f16", "O2-bf16"],
         steps=40, warmup=5,
         first=dict(configs=["O2-f16"], steps=10, warmup=3)),
    dict(name="transformer", lr=0.01,
         configs=["O1-f16", "O2-f16", "O2-bf16"], steps=40, warmup=5,
         first=dict(configs=["O2-f16"], steps=10, warmup=3)),
    dict(name="mlp", lr=0.02, configs=["f32", "O1-f16", "O2-f16", "O2-bf16"],
         steps=200, warmup=20,
         first=dict(configs=["O2-f16"], steps=50, warmup=5)),
    dict(name="lenet5", lr=0.02,
         configs=["f32", "O1-f16", "O2-f16", "O2-bf16"], steps=200,
         warmup=20,
         first=dict(configs=["O2-f16"], steps=50, warmup=5)),
]
# The headline model (GEMM-peak fractions, the per-kernel timeline).
HEADLINE = "mlp9x8192"
# The loss comparison (first run): steps of each tiny Program on each device.
LOSS_STEPS = 8
MOMENTUM = 0.9
INIT_SEED = 1

# The order of the torch.compile pieces, which come last: the headline
# model, then the cheap compilations, then the expensive ones (ResNet's 20
# convolutions with batch norm in training mode), so that a run cut short
# by its budget loses as few as possible.
COMPILE_ORDER = ["mlp9x8192", "mlp", "lenet5", "transformer", "resnet"]


def program_name(model, config):
    return "%s.%s" % (model, config)


def schedule(m, first):
    """(configs, warmup, steps, steps_f32) of model m in the first run
    (first=True) or the headline sweep."""
    d = m["first"] if first else m
    return (d["configs"], d["warmup"], d["steps"],
            d.get("steps_f32", d["steps"]))


def steps_for(m, config, first=False):
    _, _, steps, steps_f32 = schedule(m, first)
    return steps_f32 if config == "f32" else steps


def amp_run_flags(m, config):
    """The training step's flags: the optimizer is compiled into it."""
    return CONFIGS[config][0] + [
        "--optimizer", "momentum", "--momentum", str(MOMENTUM),
        "--lr", repr(m["lr"]), "--lr-schedule", "constant"]


def torch_dtypes(configs):
    """The PyTorch peer's dtypes for a list of configurations, in order,
    once each."""
    out = []
    for c in configs:
        d = CONFIGS[c][1]
        if d not in out:
            out.append(d)
    return out


def tiny_programs():
    """(name, model, config) of the loss comparison's Programs."""
    return [(program_name(m["name"], c), m, c) for m in MODELS
            for c in CONFIGS]


def main():
    if sys.argv[1:] == ["programs"]:
        todo = [(program_name(m["name"], c), m, c) for m in MODELS
                for c in m["configs"]]
    elif sys.argv[1:] == ["tiny-programs"]:
        todo = tiny_programs()
    else:
        sys.exit("usage: bench/gpu/plan.py programs|tiny-programs")
    for name, m, c in todo:
        print("\t".join([name, m["name"], " ".join(amp_run_flags(m, c))]))


if __name__ == "__main__":
    main()
