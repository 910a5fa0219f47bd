#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora.

usage: make_corpus.py --amp-run AMP_RUN --out DIR

DIR/onnx-import-fuzzer: every ONNX model of libonnx-testdata under 64 KiB
(the fuzzers' -max_len), plus the small training models below.
DIR/program-load-fuzzer: the Program amp-run compiles for each of those
ONNX node tests it supports (inference), and for the training models under
several AMP, loss-scaling and optimizer settings, so that each optimizer's
update, loss scaling and the master weights' casts are in some seed.
DIR/.complete marks a finished corpus (scripts/fuzz.sh makes it once).
"""
import argparse
import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TESTDATA = "/usr/share/libonnx-testdata/data"
MAX_LEN = 64 * 1024


def tensor(rng, name, shape, scale=0.3):
    return numpy_helper.from_array(
        (rng.standard_normal(shape) * scale).astype(np.float32), name)


def mlp(rng):
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="fc1",
                         transB=1),
        helper.make_node("Relu", ["h"], ["r"], name="relu"),
        helper.make_node("Gemm", ["r", "w2", "b2"], ["logits"], name="fc2",
                         transB=1),
        helper.make_node("SoftmaxCrossEntropyLoss", ["logits", "label"],
                         ["loss"], name="ce"),
    ]
    inits = [tensor(rng, "w1", (8, 6)), tensor(rng, "b1", (8,)),
             tensor(rng, "w2", (3, 8)), tensor(rng, "b2", (3,))]
    return helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 6]),
         helper.make_tensor_value_info("label", TensorProto.INT64, [4])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, []),
         helper.make_tensor_value_info("logits", TensorProto.FLOAT, [4, 3])],
        initializer=inits)


def convnet(rng):
    nodes = [
        helper.make_node("Conv", ["x", "wc", "bc"], ["c"], name="conv",
                         pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization",
                         ["c", "gamma", "beta", "mean", "var"], ["n"],
                         name="bn"),
        helper.make_node("Relu", ["n"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["p"], name="pool",
                         kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p"], ["f"], name="flat"),
        helper.make_node("Gemm", ["f", "wf", "bf"], ["logits"], name="fc",
                         transB=1),
        helper.make_node("SoftmaxCrossEntropyLoss", ["logits", "label"],
                         ["loss"], name="ce"),
    ]
    inits = [tensor(rng, "wc", (3, 1, 3, 3)), tensor(rng, "bc", (3,)),
             numpy_helper.from_array(np.ones(3, np.float32), "gamma"),
             numpy_helper.from_array(np.zeros(3, np.float32), "beta"),
             numpy_helper.from_array(np.zeros(3, np.float32), "mean"),
             numpy_helper.from_array(np.ones(3, np.float32), "var"),
             tensor(rng, "wf", (4, 12)), tensor(rng, "bf", (4,))]
    return helper.make_graph(
        nodes, "convnet",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 1, 4, 4]),
         helper.make_tensor_value_info("label", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, []),
         helper.make_tensor_value_info("logits", TensorProto.FLOAT, [2, 4])],
        initializer=inits)


def attention(rng):
    # LayerNormalization, MatMul, Softmax, Transpose, Reshape, ReduceMean:
    # the transformer-shaped kernels.
    shape4 = numpy_helper.from_array(np.array([2, 3, 4], np.int64), "shape")
    nodes = [
        helper.make_node("LayerNormalization", ["x", "g", "b"], ["n"],
                         name="ln", axis=-1),
        helper.make_node("MatMul", ["n", "wq"], ["q"], name="q"),
        helper.make_node("Transpose", ["q"], ["qt"], name="qt",
                         perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "qt"], ["s"], name="scores"),
        helper.make_node("Softmax", ["s"], ["a"], name="softmax", axis=-1),
        helper.make_node("MatMul", ["a", "n"], ["o"], name="mix"),
        helper.make_node("Reshape", ["o", "shape"], ["o2"], name="reshape"),
        helper.make_node("ReduceMean", ["o2"], ["m"], name="pool", axes=[1],
                         keepdims=0),
        helper.make_node("SoftmaxCrossEntropyLoss", ["m", "label"],
                         ["loss"], name="ce"),
    ]
    inits = [numpy_helper.from_array(np.ones(4, np.float32), "g"),
             numpy_helper.from_array(np.zeros(4, np.float32), "b"),
             tensor(rng, "wq", (4, 4)), shape4]
    return helper.make_graph(
        nodes, "attention",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4]),
         helper.make_tensor_value_info("label", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        initializer=inits)


TRAIN_SETTINGS = {
    "f32-sgd": [],
    "f32-adam-accumulate": ["--optimizer", "adam", "--accumulate", "2"],
    "f32-adagrad": ["--optimizer", "adagrad"],
    "o1-f16": ["--amp", "O1"],
    "o2-f16-momentum": ["--amp", "O2", "--optimizer", "momentum"],
    "o2-bf16-adamw": ["--amp", "O2", "--amp-dtype", "bf16", "--optimizer",
                      "adamw"],
    "o3-f16-master": ["--amp", "O3", "--amp-master-weights"],
    "o2-f16-static": ["--amp", "O2", "--loss-scale", "static"],
}


def compile_program(amp_run, model, out, args):
    cmd = [amp_run, model, "--emit=program", "-o", out] + args
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=120)
    return r.returncode == 0 and os.path.getsize(out) <= MAX_LEN


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--amp-run", required=True)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    onnx_dir = os.path.join(a.out, "onnx-import-fuzzer")
    prog_dir = os.path.join(a.out, "program-load-fuzzer")
    shutil.rmtree(a.out, ignore_errors=True)
    os.makedirs(onnx_dir)
    os.makedirs(prog_dir)

    node_models = []
    for suite in ("node", "simple", "pytorch-converted", "pytorch-operator"):
        root = os.path.join(TESTDATA, suite)
        if not os.path.isdir(root):
            continue
        for test in sorted(os.listdir(root)):
            model = os.path.join(root, test, "model.onnx")
            if os.path.isfile(model) and os.path.getsize(model) <= MAX_LEN:
                shutil.copy(model, os.path.join(onnx_dir,
                                                f"{suite}-{test}.onnx"))
                if suite == "node":
                    node_models.append((test, model))

    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        jobs = []
        for build in (mlp, convnet, attention):
            graph = build(rng)
            model = helper.make_model(
                graph, opset_imports=[helper.make_opsetid("", 17)])
            onnx.checker.check_model(model)
            path = os.path.join(onnx_dir, f"train-{graph.name}.onnx")
            onnx.save(model, path)
            for name, args in TRAIN_SETTINGS.items():
                jobs.append((path, os.path.join(
                    prog_dir, f"train-{graph.name}-{name}.program"),
                    ["--mode", "train"] + args))
        for test, model in node_models:
            jobs.append((model, os.path.join(prog_dir, f"{test}.program"),
                         ["--mode", "infer"]))
        made = 0
        with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as ex:
            futures = {ex.submit(compile_program, a.amp_run, m, o, args): o
                       for m, o, args in jobs}
            for f in concurrent.futures.as_completed(futures):
                if f.result():
                    made += 1
                elif os.path.exists(futures[f]):
                    os.remove(futures[f])
        train_made = len([f for f in os.listdir(prog_dir)
                          if f.startswith("train-")])
        if train_made != 3 * len(TRAIN_SETTINGS):
            sys.exit(f"make_corpus: only {train_made} of "
                     f"{3 * len(TRAIN_SETTINGS)} training Programs compiled; "
                     f"run {a.amp_run} on {onnx_dir}/train-*.onnx to see why")
    open(os.path.join(a.out, ".complete"), "w").close()
    print(f"make_corpus: {len(os.listdir(onnx_dir))} ONNX models, "
          f"{made} Programs in {a.out}")


if __name__ == "__main__":
    main()
