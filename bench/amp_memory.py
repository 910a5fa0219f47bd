#!/usr/bin/python3
"""The planned memory of the AMP training step against the f32 step, for
every shared model (/work/shared/models/*_train_op*), every example
(examples/*.onnx) and the CPU benchmark's convolutional and transformer
models (bench/amp_cpu.py's resnet18 and transformer, exported with PyTorch
at that script's batches, 16 and 8), at O1 and O2 in f16 and bf16: one
table.

Each figure is amp-run's --amp-report `memory` object (tools/amp-run/
StepMemory.cpp; docs/amp.md, "Memory", defines every column), read from
`amp-run MODEL --data synthetic --optimizer momentum --amp L --amp-dtype D
--amp-report FILE --emit=rt -o /dev/null`: the step is compiled and its
memory plan measured, nothing is run. The batch is the model's own (the
shared models' reference batches, 64, 32 and 64; the examples' 64). SGD
with momentum 0.9 is the optimizer of the shared models' reference runs and
of the examples' recipes; loss scaling is amp-run's default (dynamic for
f16, none for bf16).

With --zoo, the models are instead those of the model zoo
(test/zoo/model_zoo.py: torchvision's and the real-model issue's, each
exported with its loss by tools/export_torch.py at opset 17 and the zoo's
batch), into a second table (between ZOO_BEGIN and ZOO_END).

usage: /usr/bin/python3 bench/amp_memory.py [--amp-run PATH]
           [--write-doc docs/amp.md] [--zoo] [MODEL ...]
  MODEL: a .onnx file or a directory holding model.onnx (default: all of the
  above). The table is markdown; --write-doc also puts it into the file
  between the lines BEGIN and END below, so docs/amp.md holds exactly what
  this script prints.
"""

import argparse
import glob
import json
import os
import sys
import tempfile

import bench_util

BEGIN = "<!-- bench/amp_memory.py: table begin -->"
END = "<!-- bench/amp_memory.py: table end -->"
ZOO_BEGIN = "<!-- bench/amp_memory.py --zoo: table begin -->"
ZOO_END = "<!-- bench/amp_memory.py --zoo: table end -->"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH_MODELS = ["resnet18", "transformer"]
CONFIGS = [("O1", "f16"), ("O2", "f16"), ("O1", "bf16"), ("O2", "bf16")]
# (column, report field); each a size in MB of 2^20 bytes.
COLUMNS = [
    ("arena", "arena_bytes"),
    ("params+state", "param_and_state_bytes"),
    ("working copies", "working_copy_bytes"),
    ("gradients", "gradient_bytes"),
    ("saved for backward", "saved_for_backward_bytes"),
    ("activations", "activation_bytes"),
]


def default_models():
    shared = sorted(glob.glob(os.path.join(bench_util.MODELS_DIR,
                                           "*_train_op*", "model.onnx")))
    examples = sorted(glob.glob(os.path.join(REPO, "examples", "*.onnx")))
    return shared + examples


def export_bench_models(work):
    """bench/amp_cpu.py's ResNet-18 and transformer, exported into `work`."""
    import amp_cpu
    paths = []
    for name in BENCH_MODELS:
        path = os.path.join(work, name + ".onnx")
        amp_cpu.export(name, path)
        paths.append(path)
    return paths


def export_zoo_models(work):
    """The model zoo's models, exported as test/zoo/model_zoo.py exports
    them (training form, dropout off, its batch), at opset 17."""
    sys.path.insert(0, os.path.join(REPO, "test", "zoo"))
    import model_zoo
    import torch
    paths = []
    for name, (build, batches, loss_fn) in model_zoo.models().items():
        torch.manual_seed(0)
        module = model_zoo.no_dropout(build())
        xs, ys = batches(1)
        path = os.path.join(work, name + ".onnx")
        model_zoo.export_torch.export(module, loss_fn, (xs[0], ys[0]), path,
                                      opset=17)
        paths.append(path)
        print(f"  {name}: exported", file=sys.stderr, flush=True)
    return paths


def model_path(arg):
    path = os.path.join(arg, "model.onnx") if os.path.isdir(arg) else arg
    if not os.path.isfile(path):
        sys.exit(f"bench/amp_memory.py: no model at {arg!r} (a .onnx file "
                 f"or a directory holding model.onnx)")
    return path


def model_name(path):
    """The shared models' directory name, or the example's file name."""
    if os.path.basename(path) == "model.onnx":
        return os.path.basename(os.path.dirname(path))
    return os.path.splitext(os.path.basename(path))[0]


def memory(amp_run, path, level, dtype, work):
    report = os.path.join(work, "report.json")
    bench_util.run_amp([amp_run, path, "--data", "synthetic", "--optimizer",
                        "momentum", "--amp", level, "--amp-dtype", dtype,
                        "--amp-report", report, "--emit=rt", "-o",
                        os.devnull])
    with open(report) as f:
        m = json.load(f).get("memory")
    if not m:
        raise RuntimeError(f"amp-run wrote no 'memory' into the report of "
                           f"{path} at {level} {dtype}")
    return m


def mb(n):
    return "%.3f" % (n / 2**20)


def ratio(a, b):
    return "%.2f" % (a / b) if b else "-"


def row(name, config, m, f32):
    return ([name, config] + [mb(m[field]) for _, field in COLUMNS] +
            [ratio(m["saved_for_backward_bytes"],
                   f32["saved_for_backward_bytes"]),
             ratio(m["arena_bytes"], f32["arena_bytes"])])


def markdown(hdr, table):
    lines = ["| " + " | ".join(hdr) + " |",
             "|" + "|".join("---" for _ in hdr) + "|"]
    lines += ["| " + " | ".join(t) + " |" for t in table]
    return "\n".join(lines) + "\n"


def write_doc(path, text, begin=BEGIN, end=END):
    """Replaces what lies between the `begin` and `end` lines of `path`."""
    with open(path) as f:
        doc = f.read()
    if doc.count(begin) != 1 or doc.count(end) != 1 or \
            doc.index(begin) > doc.index(end):
        sys.exit(f"bench/amp_memory.py: {path} has no one {begin!r} line "
                 f"followed by one {end!r} line")
    head, rest = doc.split(begin + "\n", 1)
    _, tail = rest.split(end, 1)
    with open(path, "w") as f:
        f.write(head + begin + "\n" + text + end + tail)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    bench_util.add_amp_run_arg(ap)
    ap.add_argument("--write-doc", metavar="FILE",
                    help="also replace the table in FILE (between its "
                    "BEGIN and END lines)")
    ap.add_argument("--zoo", action="store_true",
                    help="the model zoo's models instead (test/zoo)")
    ap.add_argument("models", nargs="*", help="(default: every shared train "
                    "model and every example)")
    args = ap.parse_args()
    if not os.access(args.amp_run, os.X_OK):
        ap.error(f"amp-run not found at {args.amp_run!r} (build it first, or "
                 f"pass --amp-run)")
    paths = [model_path(m) for m in args.models]

    hdr = (["model", "config"] + ["%s MB" % c for c, _ in COLUMNS] +
           ["saved/f32", "arena/f32"])
    table = []
    with tempfile.TemporaryDirectory() as work:
        if args.zoo:
            paths = export_zoo_models(work)
        elif not paths:
            paths = default_models() + export_bench_models(work)
        for path in paths:
            name = model_name(path)
            reports = {c: memory(args.amp_run, path, *c, work)
                       for c in CONFIGS}
            f32 = reports[CONFIGS[0]]["f32"]
            table.append(row(name, "f32", f32, f32))
            for (level, dtype), m in reports.items():
                table.append(row(name, f"{level} {dtype}", m["amp"], f32))
            print(f"  {name}: done", file=sys.stderr, flush=True)
    text = markdown(hdr, table)
    print(text, end="")
    if args.write_doc:
        write_doc(args.write_doc, text, *((ZOO_BEGIN, ZOO_END) if args.zoo
                                         else (BEGIN, END)))


if __name__ == "__main__":
    main()
