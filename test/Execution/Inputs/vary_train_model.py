"""Writes variants of make_train_model.py's model for the checkpoint-to-ONNX
tests (amp-run --from-checkpoint).

usage: vary_train_model.py MODEL.onnx OUT_DIR

OUT_DIR/extra.onnx: the model with one more float initializer, 'extra' [2],
  which no node reads (no training step holds it).
OUT_DIR/narrow-bias.onnx: the model with the bias 'b' of shape [1] rather
  than [2] (Gemm broadcasts it).
OUT_DIR/renamed.onnx: the model with its initializers renamed 'qw' and 'qb'
  (the same graph under other names: another model to a checkpoint).
"""
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def main():
    path, out = sys.argv[1:3]
    model = onnx.load(path)
    model.graph.initializer.append(
        numpy_helper.from_array(np.array([0.5, -0.5], np.float32), "extra"))
    onnx.save(model, os.path.join(out, "extra.onnx"))

    model = onnx.load(path)
    b = next(t for t in model.graph.initializer if t.name == "b")
    b.CopyFrom(numpy_helper.from_array(np.zeros(1, np.float32), "b"))
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "narrow-bias.onnx"))

    model = onnx.load(path)
    renamed = {t.name: "q" + t.name for t in model.graph.initializer}
    for t in model.graph.initializer:
        t.name = renamed[t.name]
    for node in model.graph.node:
        for i, name in enumerate(node.input):
            node.input[i] = renamed.get(name, name)
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "renamed.onnx"))


if __name__ == "__main__":
    main()
