#!/usr/bin/python3
"""Writes the example models examples/mlp.onnx and examples/lenet5.onnx.

Both are Fashion-MNIST classifiers with their training loss in the graph:
inputs `image` f32[64,1,28,28] (normalised (x/255 - 0.2860)/0.3530) and
`label` int64[64]; outputs `loss` (SoftmaxCrossEntropyLoss, mean over the
batch) and `logits` f32[64,10]. Weights are initializers named as PyTorch
names the parameters of the same network (fc1.weight, conv1.bias, ...) and
drawn as PyTorch initialises them (U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for
weights and biases) from numpy.random.RandomState(SEED), so the files
regenerate byte for byte. metadata_props carry the training recipe each
example was tuned for (ampc.train.<amp-run option> = value), which amp-run
uses for the options the user does not give.

usage: make_examples.py [--out-dir DIR]   (default: the directory of this file)
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SEED = 20240607
BATCH = 64
OPSET = 17
IR_VERSION = 8  # onnx 1.12's; fixed so a newer onnx writes the same bytes
NORMALISATION = "(x/255 - 0.2860)/0.3530"

# The recipe amp-run uses by default for each example; examples/train_torch.py
# trains the same network with it in PyTorch (see examples/README.md).
# SGD with momentum 0.9 and a cosine decay to 0 over the 3 epochs: with a
# constant lr the accuracy at the end of an epoch moves by a point from one
# shuffling seed to the next, which would swamp an AMP-vs-f32 comparison.
RECIPE = {"optimizer": "momentum", "momentum": "0.9", "lr": "0.02",
          "lr-schedule": "cosine", "epochs": "3"}
RECIPES = {"mlp": RECIPE, "lenet5": RECIPE}


class GraphBuilder:
    """Nodes and initializers of one graph, named as torch.onnx.export names
    them (/<module>/<Op>, outputs /<module>/<Op>_output_0)."""

    def __init__(self, rng):
        self.rng = rng
        self.nodes = []
        self.initializers = []

    def node(self, module, op, inputs, output=None, **attrs):
        name = "/%s/%s" % (module, op)
        output = output or name + "_output_0"
        self.nodes.append(
            helper.make_node(op, inputs, [output], name=name, **attrs))
        return output

    def param(self, name, shape, fan_in):
        # PyTorch's kaiming_uniform_(a=sqrt(5)) for weights and its bias
        # initialisation both come to this bound.
        bound = 1.0 / np.sqrt(fan_in)
        value = self.rng.uniform(-bound, bound, size=shape).astype(np.float32)
        self.initializers.append(numpy_helper.from_array(value, name))
        return name

    def linear(self, module, x, n_in, n_out, output=None):
        w = self.param(module + ".weight", (n_out, n_in), n_in)
        b = self.param(module + ".bias", (n_out,), n_in)
        return self.node(module, "Gemm", [x, w, b], output, alpha=1.0,
                         beta=1.0, transB=1)

    def conv(self, module, x, c_in, c_out, k, pad):
        fan_in = c_in * k * k
        w = self.param(module + ".weight", (c_out, c_in, k, k), fan_in)
        b = self.param(module + ".bias", (c_out,), fan_in)
        return self.node(module, "Conv", [x, w, b], kernel_shape=[k, k],
                         pads=[pad] * 4, strides=[1, 1], dilations=[1, 1],
                         group=1)

    def relu(self, module, x):
        return self.node(module, "Relu", [x])

    def max_pool(self, module, x):
        return self.node(module, "MaxPool", [x], kernel_shape=[2, 2],
                         strides=[2, 2], pads=[0, 0, 0, 0], ceil_mode=0)

    def flatten(self, x):
        return self.node("flatten", "Flatten", [x], axis=1)


def mlp(g):
    x = g.flatten("image")
    x = g.relu("relu1", g.linear("fc1", x, 784, 512))
    x = g.relu("relu2", g.linear("fc2", x, 512, 512))
    return g.linear("fc3", x, 512, 10, output="logits")


def lenet5(g):
    x = g.max_pool("pool1", g.relu("relu1", g.conv("conv1", "image", 1, 6, 5,
                                                   pad=2)))
    x = g.max_pool("pool2", g.relu("relu2", g.conv("conv2", x, 6, 16, 5,
                                                   pad=0)))
    x = g.relu("relu3", g.linear("fc1", g.flatten(x), 16 * 5 * 5, 120))
    x = g.relu("relu4", g.linear("fc2", x, 120, 84))
    return g.linear("fc3", x, 84, 10, output="logits")


MODELS = {
    "mlp": (mlp, "The MindSpore quick-start MLP: flatten 1x28x28 -> Linear "
            "784->512 -> ReLU -> Linear 512->512 -> ReLU -> Linear 512->10."),
    "lenet5": (lenet5, "LeNet-5 for 28x28 inputs: Conv 5x5 6 channels pad 2 "
               "-> ReLU -> MaxPool 2 -> Conv 5x5 16 channels -> ReLU -> "
               "MaxPool 2 -> flatten 400 -> Linear 120 -> ReLU -> Linear 84 "
               "-> ReLU -> Linear 10."),
}


def make_model(name):
    build, what = MODELS[name]
    g = GraphBuilder(np.random.RandomState(SEED))
    logits = build(g)
    g.node("loss", "SoftmaxCrossEntropyLoss", [logits, "label"], "loss",
           reduction="mean")
    recipe = RECIPES[name]
    doc = ("%s A Fashion-MNIST classifier with its training loss. Inputs: "
           "image f32[%d,1,28,28], pixels normalised %s; label int64[%d], "
           "classes 0-9. Outputs: loss (SoftmaxCrossEntropyLoss, mean over "
           "the batch) and logits f32[%d,10]. Weights: PyTorch's default "
           "initialisation drawn from numpy.random.RandomState(%d). Recipe "
           "(metadata ampc.train.*): %s. Written by "
           "examples/make_examples.py." %
           (what, BATCH, NORMALISATION, BATCH, BATCH, SEED,
            ", ".join("%s %s" % kv for kv in recipe.items())))
    graph = helper.make_graph(
        g.nodes, name, [
            helper.make_tensor_value_info("image", TensorProto.FLOAT,
                                          [BATCH, 1, 28, 28]),
            helper.make_tensor_value_info("label", TensorProto.INT64, [BATCH])
        ], [
            helper.make_tensor_value_info("loss", TensorProto.FLOAT, []),
            helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                          [BATCH, 10])
        ],
        initializer=g.initializers,
        doc_string=doc)
    model = helper.make_model(graph,
                              producer_name="ampc examples/make_examples.py",
                              opset_imports=[helper.make_opsetid("", OPSET)],
                              ir_version=IR_VERSION)
    helper.set_model_props(
        model, {"ampc.train." + k: v for k, v in recipe.items()})
    onnx.checker.check_model(model, full_check=True)
    return model


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out-dir", default=os.path.dirname(
        os.path.abspath(__file__)))
    args = p.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    for name in MODELS:
        path = os.path.join(args.out_dir, name + ".onnx")
        onnx.save(make_model(name), path)
        print("wrote", path)


if __name__ == "__main__":
    main()
