#!/usr/bin/python3
"""The model zoo: real PyTorch models exported with their loss, trained by
amp-run, checked against PyTorch.

usage: model_zoo.py --amp-run AMP_RUN [--opsets 13 17 18] [--models a,b]
                    [--convert-python PY] [--jobs N] [--work DIR] [--list]

Each model (torchvision's at small input sizes and widths, and a
nanoGPT-style decoder, so the whole zoo runs on two cores in minutes) is
exported at each opset with
tools/export_torch.py in training form, dropout off, and checked. An opset
above 17, which torch 1.13 cannot export, is the opset-17 export converted
by onnx's version converter under --convert-python (an interpreter with an
onnx newer than Debian's; scripts/setup.sh installs 1.16.2 in a venv); the
converted model must import that opset and use the ops' new forms (axes
as inputs of ReduceMean, num_outputs of Split). Without that interpreter
those opsets are skipped with a SKIP line. The checks:

1. Import: amp-run compiles and runs it.
2. Step-0 gradients: for every trained parameter, amp-run's gradient
   against PyTorch's in float64, relative L2 within 10x PyTorch's own
   f32-vs-f64 error (floor 1e-5, and an absolute floor of 1e-7 of the
   whole gradient's norm for parameters whose gradient is rounding noise,
   such as a bias before a batch norm). PyTorch's f32 error is the largest
   over the batch and three copies of it moved by one ulp: a pre-activation
   within f32 rounding of a ReLU's kink (mnasnet has one at 1.7e-6 at this
   size) flips a sample's gradient in one f32 computation and not another. amp-run's gradient is read from
   one SGD step with lr = 2^16: p1 = p0 - 2^16 g, where the product is
   exact and the difference rounds once, so (p0 - p1) / 2^16 is g to about
   1e-7 of the larger of g and p0 / 2^16.
3. Eight f32 SGD steps (lr 0.01) on eight batches: each loss against
   PyTorch's float64 loss, within 10x the f32 noise (floor 1e-5 relative),
   on the steps where that noise is below 1e-4, up to the first where it
   is not (training can amplify rounding chaotically, and small batch
   norms at these sizes do). The noise of a step is the larger of PyTorch's
   f32-vs-f64 difference and how far the float64 run moves when every
   weight moves by up to one f32 ulp: PyTorch's f32 run alone can stay
   close by luck, and a BLAS kernel that rounds otherwise then fails a
   chaotic step (mobilenet_v2's second on a Xeon's OpenBLAS kernels). The
   report prints, where comparing stops, that step's noise and PyTorch's
   share of it (`--models mobilenet_v2`).
4. AMP: the step-0 loss of amp-run at O1 bf16 and at O2 f16 is finite and
   within the bf16-autocast band of amp-run's f32 loss: 4x the difference
   between PyTorch's bf16-autocast and f32 losses on the same batch, and at
   least 1e-2 of the loss (only that where torch 1.13 cannot autocast the
   model on the CPU, which is printed).

Prints one line per model, opset and check (PASS or FAIL with the numbers)
and exits 1 on any FAIL.
"""
import argparse
import concurrent.futures
import copy
import csv
import math
import multiprocessing
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import numpy_helper

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                     "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tools"))
import export_torch  # noqa: E402

GRAD_LR = 2.0 ** 16
STEPS, STEP_LR = 8, 0.01
CLASSES = 10


def _vision():
    import torchvision.models as M
    from torchvision.models import efficientnet, mnasnet, regnet, resnet
    from torchvision.models.convnext import CNBlockConfig, ConvNeXt
    from torchvision.models.densenet import DenseNet
    from torchvision.models.vision_transformer import VisionTransformer

    def effnet():
        setting, last = efficientnet._efficientnet_conf(
            "efficientnet_b0", width_mult=0.25, depth_mult=0.25)
        return efficientnet.EfficientNet(setting, dropout=0.0,
                                         stochastic_depth_prob=0.0,
                                         num_classes=CLASSES,
                                         last_channel=last)

    def regnet_small():
        params = regnet.BlockParams.from_init_params(
            depth=3, w_0=16, w_a=8.0, w_m=2.0, group_width=8)
        return regnet.RegNet(params, num_classes=CLASSES)

    return {
        "resnet18": lambda: M.resnet18(num_classes=CLASSES),
        "resnext": lambda: resnet.ResNet(resnet.Bottleneck, [1, 1, 1, 1],
                                         groups=8, width_per_group=4,
                                         num_classes=CLASSES),
        "mobilenet_v2": lambda: M.mobilenet_v2(width_mult=0.25,
                                               num_classes=CLASSES),
        "mobilenet_v3": lambda: M.mobilenet_v3_small(width_mult=0.25,
                                                     num_classes=CLASSES),
        "squeezenet": lambda: M.squeezenet1_1(num_classes=CLASSES),
        "shufflenet_v2": lambda: M.shufflenet_v2_x0_5(num_classes=CLASSES),
        "efficientnet_b0": effnet,
        "mnasnet": lambda: mnasnet.MNASNet(0.25, num_classes=CLASSES),
        "regnet": regnet_small,
        "densenet": lambda: DenseNet(growth_rate=8, block_config=(2, 2, 2),
                                     num_init_features=16,
                                     num_classes=CLASSES),
        "convnext": lambda: ConvNeXt([CNBlockConfig(16, 32, 1),
                                      CNBlockConfig(32, None, 1)],
                                     num_classes=CLASSES),
        "vit": lambda: VisionTransformer(image_size=32, patch_size=8,
                                         num_layers=2, num_heads=2,
                                         hidden_dim=32, mlp_dim=64,
                                         num_classes=CLASSES),
    }


class Gpt(torch.nn.Module):
    """A nanoGPT-style decoder: token and position embeddings (positions
    from arange), pre-norm blocks whose causal mask is a tril buffer tested
    with == 0 and masked_fill, GELU MLPs, and an LM head tied to the token
    embedding."""

    def __init__(self, vocab=64, seq=16, dim=32, heads=2, layers=2):
        super().__init__()
        self.heads = heads
        self.wte = torch.nn.Embedding(vocab, dim)
        self.wpe = torch.nn.Embedding(seq, dim)
        self.blocks = torch.nn.ModuleList()
        for _ in range(layers):
            self.blocks.append(torch.nn.ModuleDict({
                "ln_1": torch.nn.LayerNorm(dim),
                "c_attn": torch.nn.Linear(dim, 3 * dim),
                "c_proj": torch.nn.Linear(dim, dim),
                "ln_2": torch.nn.LayerNorm(dim),
                "fc": torch.nn.Linear(dim, 4 * dim),
                "proj": torch.nn.Linear(4 * dim, dim)}))
        self.ln_f = torch.nn.LayerNorm(dim)
        self.lm_head = torch.nn.Linear(dim, vocab, bias=False)
        self.lm_head.weight = self.wte.weight
        self.register_buffer("bias", torch.tril(torch.ones(seq, seq))
                             .view(1, 1, seq, seq))
        for m in self.modules():  # nanoGPT's initialization
            if isinstance(m, (torch.nn.Linear, torch.nn.Embedding)):
                torch.nn.init.normal_(m.weight, std=0.02)
            if isinstance(m, torch.nn.Linear) and m.bias is not None:
                torch.nn.init.zeros_(m.bias)

    def forward(self, idx):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long)
        x = self.wte(idx) + self.wpe(pos)
        for blk in self.blocks:
            h = blk["ln_1"](x)
            q, k, v = blk["c_attn"](h).split(x.size(2), dim=2)
            q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2)
                       for z in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / k.size(-1) ** 0.5)
            att = att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf"))
            y = F.softmax(att, dim=-1) @ v
            y = y.transpose(1, 2).contiguous().view(b, t, -1)
            x = x + blk["c_proj"](y)
            x = x + blk["proj"](F.gelu(blk["fc"](blk["ln_2"](x))))
        return self.lm_head(self.ln_f(x))


class LstmLm(torch.nn.Module):
    """An LSTM language model: embedding, a two-layer LSTM over the
    sequence (batch first), a linear head per position."""

    def __init__(self, vocab=64, dim=24, hidden=32):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, dim)
        self.lstm = torch.nn.LSTM(dim, hidden, num_layers=2, batch_first=True)
        self.head = torch.nn.Linear(hidden, vocab)

    def forward(self, idx):
        out, _ = self.lstm(self.embed(idx))
        return self.head(out)


class GruClassifier(torch.nn.Module):
    """A bidirectional GRU over float features, classified from both
    directions' final states."""

    def __init__(self, features=12, hidden=16):
        super().__init__()
        self.gru = torch.nn.GRU(features, hidden, bidirectional=True,
                                batch_first=True)
        self.head = torch.nn.Linear(2 * hidden, CLASSES)

    def forward(self, x):  # [batch, seq, features]
        _, h = self.gru(x)
        return self.head(torch.cat([h[0], h[1]], dim=1))


class UNet(torch.nn.Module):
    """A small UNet: two levels down (conv, batch norm, ReLU, max pool), up
    once by a transposed convolution and once by bilinear upsampling, each
    concatenated with its skip connection; a per-pixel classifier."""

    def __init__(self, channels=3, width=8, classes=4):
        super().__init__()

        def block(cin, cout):
            return torch.nn.Sequential(
                torch.nn.Conv2d(cin, cout, 3, padding=1, bias=False),
                torch.nn.BatchNorm2d(cout), torch.nn.ReLU())
        self.down1 = block(channels, width)
        self.down2 = block(width, 2 * width)
        self.bottom = block(2 * width, 4 * width)
        self.up2 = torch.nn.ConvTranspose2d(4 * width, 2 * width, 2, stride=2)
        self.dec2 = block(4 * width, 2 * width)
        self.dec1 = block(3 * width, width)
        self.head = torch.nn.Conv2d(width, classes, 1)

    def forward(self, x):
        d1 = self.down1(x)
        d2 = self.down2(F.max_pool2d(d1, 2))
        b = self.bottom(F.max_pool2d(d2, 2))
        u2 = self.dec2(torch.cat([self.up2(b), d2], dim=1))
        u1 = F.interpolate(u2, scale_factor=2, mode="bilinear",
                           align_corners=False)
        return self.head(self.dec1(torch.cat([u1, d1], dim=1)))


class StyleNet(torch.nn.Module):
    """A fast-neural-style network in miniature: reflection padding,
    strided convolutions with affine instance norms, a residual block, and
    upsampling by a transposed convolution."""

    def __init__(self, width=8):
        super().__init__()

        def conv(cin, cout, k, stride=1):
            return torch.nn.Sequential(
                torch.nn.ReflectionPad2d(k // 2),
                torch.nn.Conv2d(cin, cout, k, stride),
                torch.nn.InstanceNorm2d(cout, affine=True), torch.nn.ReLU())
        self.down = torch.nn.Sequential(conv(3, width, 5), conv(width, 2 * width,
                                                                3, 2))
        self.res = torch.nn.Sequential(conv(2 * width, 2 * width, 3),
                                       conv(2 * width, 2 * width, 3))
        self.up = torch.nn.ConvTranspose2d(2 * width, width, 3, stride=2,
                                           padding=1, output_padding=1)
        self.out = torch.nn.Conv2d(width, CLASSES, 1)

    def forward(self, x):
        h = self.down(x)
        h = h + self.res(h)
        return self.out(torch.relu(self.up(h))).mean((2, 3))


class VideoNet(torch.nn.Module):
    """A small 3-D CNN over [batch, 3, frames, height, width] clips: a
    strided 3-D convolution with batch norm, ceil-mode 3-D max pooling, a
    dilated grouped 3-D convolution, 3-D average pooling without the
    padding in its counts, and a 1-D convolution and pool over time."""

    def __init__(self, width=8):
        super().__init__()
        self.stem = torch.nn.Sequential(
            torch.nn.Conv3d(3, width, 3, stride=(1, 2, 2), padding=1),
            torch.nn.BatchNorm3d(width), torch.nn.ReLU(),
            torch.nn.MaxPool3d(2, stride=2, ceil_mode=True))
        self.mid = torch.nn.Conv3d(width, width, 3, padding=2, dilation=2,
                                   groups=2, bias=False)
        self.avg = torch.nn.AvgPool3d(2, stride=1, padding=1,
                                      count_include_pad=False)
        self.time = torch.nn.Conv1d(width, width, 2)
        self.head = torch.nn.Linear(width, CLASSES)

    def forward(self, x):
        h = self.avg(torch.relu(self.mid(self.stem(x))))
        t = F.max_pool1d(torch.relu(self.time(h.mean((3, 4)))), 2)
        return self.head(t.mean(2))


def image_batches(shape, batch):
    def make(steps):
        return (torch.randn(steps, batch, *shape),
                torch.randint(0, CLASSES, (steps, batch)))
    return make


def sequence_batches(seq, batch, features):
    def make(steps):
        return (torch.randn(steps, batch, seq, features),
                torch.randint(0, CLASSES, (steps, batch)))
    return make


def segmentation_batches(shape, batch, classes):
    def make(steps):
        return (torch.randn(steps, batch, *shape),
                torch.randint(0, classes, (steps, batch, *shape[1:])))
    return make


def token_batches(vocab, seq, batch):
    def make(steps):
        return (torch.randint(0, vocab, (steps, batch, seq)),
                torch.randint(0, vocab, (steps, batch, seq)))
    return make


def sequence_loss(out, labels):
    return F.cross_entropy(out.reshape(-1, out.shape[-1]), labels.reshape(-1))


# name -> (builder, batches(steps) -> (inputs, labels), loss)
def models():
    out = {}
    for name, build in _vision().items():
        out[name] = (build, image_batches((3, 32, 32), 8), F.cross_entropy)
    out["unet"] = (UNet, segmentation_batches((3, 16, 16), 4, 4),
                   F.cross_entropy)
    out["style_net"] = (StyleNet, image_batches((3, 16, 16), 4),
                        F.cross_entropy)
    out["video_net"] = (VideoNet, image_batches((3, 7, 10, 10), 4),
                        F.cross_entropy)
    out["gpt"] = (Gpt, token_batches(64, 16, 4), sequence_loss)
    out["lstm_lm"] = (LstmLm, token_batches(64, 12, 4), sequence_loss)
    out["gru_classifier"] = (GruClassifier, sequence_batches(10, 4, 12),
                             F.cross_entropy)
    return out


def no_dropout(module):
    for m in module.modules():
        if isinstance(m, torch.nn.Dropout):
            m.p = 0.0
    return module


def initializers(path):
    return {t.name: numpy_helper.to_array(t).astype(np.float64)
            for t in onnx.load(path).graph.initializer}


def amp_run(amp, model, data, work, tag, args):
    metrics = os.path.join(work, tag + ".csv")
    cmd = [amp, model, "--data", data, "--progress", "none",
           "--metrics", metrics] + args
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("amp-run %s failed: %s" % (" ".join(args),
                                                      r.stderr.strip()))
    with open(metrics) as f:
        return [float(row["loss"]) for row in csv.DictReader(f)]


def as_dtype(x, dtype):
    return x.to(dtype) if x.is_floating_point() else x


def torch_grads(module, loss_fn, x, y, dtype):
    m = copy.deepcopy(module).to(dtype).train()
    m.zero_grad()
    loss_fn(m(as_dtype(x, dtype)), y).backward()
    return {n: p.grad.detach().double().numpy()
            for n, p in m.named_parameters() if p.requires_grad}


def torch_losses(module, loss_fn, xs, ys, dtype):
    m = copy.deepcopy(module).to(dtype).train()
    opt = torch.optim.SGD(m.parameters(), lr=STEP_LR)
    losses = []
    for x, y in zip(xs, ys):
        loss = loss_fn(m(as_dtype(x, dtype)), y)
        losses.append(loss.item())
        opt.zero_grad()
        loss.backward()
        opt.step()
    return losses


def weights_moved(module):
    """A copy of `module` whose f32 parameters each moved to the next f32
    down, stayed, or moved to the next up (one ulp), drawn from a fixed
    seed."""
    m = copy.deepcopy(module)
    gen = torch.Generator().manual_seed(2)
    inf = torch.tensor(float("inf"))
    with torch.no_grad():
        for p in m.parameters():
            if p.dtype != torch.float32:
                continue
            way = torch.randint(-1, 2, p.shape, generator=gen)
            p.copy_(torch.where(way > 0, torch.nextafter(p, inf),
                                torch.where(way < 0,
                                            torch.nextafter(p, -inf), p)))
    return m


def autocast_loss(module, loss_fn, x, y):
    m = copy.deepcopy(module).train()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return loss_fn(m(x), y).item()


def rel(a, b):
    return abs(a - b) / max(abs(b), 1e-30)


# The version converter, run by the newer onnx: argv model, out, opset.
CONVERT = """
import sys, onnx
from onnx import version_converter
m = version_converter.convert_version(onnx.load(sys.argv[1]), int(sys.argv[3]))
onnx.checker.check_model(m)
onnx.save(m, sys.argv[2])
"""
NEWEST_TORCH_OPSET = 17


def convert(python, src, dst, opset):
    """src converted to `opset` at dst by `python`'s onnx; checks that the
    result imports that opset. Raises RuntimeError saying what failed."""
    r = subprocess.run([python, "-c", CONVERT, src, dst, str(opset)],
                       capture_output=True, text=True, timeout=300)
    if r.returncode:
        raise RuntimeError("onnx's version converter failed: " +
                           (r.stderr.strip().splitlines() or ["?"])[-1])
    got = [o.version for o in onnx.load(dst).opset_import
           if o.domain in ("", "ai.onnx")]
    if got != [opset]:
        raise RuntimeError("the converted model imports opset %s" % got)


def check(amp, name, opset, work_root, convert_python=None):
    build, batches, loss_fn = models()[name]
    work = os.path.join(work_root, "%s-%d" % (name, opset))
    os.makedirs(work, exist_ok=True)
    torch.manual_seed(0)
    module = no_dropout(build())
    xs, ys = batches(STEPS)
    lines, failed = [], False

    def report(ok, what, detail):
        nonlocal failed
        failed |= not ok
        lines.append("%s %s opset %d %s: %s" % ("PASS" if ok else "FAIL",
                                                name, opset, what, detail))

    path = os.path.join(work, "model.onnx")
    exported = path if opset <= NEWEST_TORCH_OPSET else os.path.join(
        work, "exported.onnx")
    try:
        export_torch.export(module, loss_fn, (xs[0], ys[0]), exported,
                            opset=min(opset, NEWEST_TORCH_OPSET))
    except Exception as e:  # noqa: BLE001 - PyTorch's exporter says why
        report(False, "export", (str(e) or type(e).__name__).splitlines()[0])
        return lines, failed
    if exported != path:
        try:
            convert(convert_python, exported, path, opset)
        except (RuntimeError, subprocess.SubprocessError) as e:
            report(False, "convert", str(e))
            return lines, failed
    one = os.path.join(work, "one")
    many = os.path.join(work, "many")
    for d, x, y in ((one, xs[:1], ys[:1]), (many, xs, ys)):
        os.makedirs(d, exist_ok=True)
        np.save(os.path.join(d, "x.npy"), x.reshape(-1, *x.shape[2:]).numpy())
        np.save(os.path.join(d, "labels.npy"),
                y.reshape(-1, *y.shape[2:]).numpy())

    # 1 and 2: import and the step-0 gradients.
    stepped = os.path.join(work, "stepped.onnx")
    try:
        amp_run(amp, path, one, work, "grad",
                ["--steps", "1", "--optimizer", "sgd", "--lr", repr(GRAD_LR),
                 "--save-onnx", stepped])
    except RuntimeError as e:
        report(False, "import", str(e))
        return lines, failed
    report(True, "import", "trains")
    before, after = initializers(path), initializers(stepped)
    g64 = torch_grads(module, loss_fn, xs[0], ys[0], torch.float64)
    # PyTorch's f32 error: the largest over the batch and copies of it moved
    # by one f32 ulp, so that an activation within rounding of a ReLU's kink
    # (whose side decides a sample's whole gradient) counts as f32 noise.
    gen = torch.Generator().manual_seed(1)
    def moved(x):
        if not x.is_floating_point():
            return x
        return x * (1 + 2.0 ** -23 * torch.randint(-1, 2, x.shape,
                                                    generator=gen))
    g32s = [torch_grads(module, loss_fn, moved(xs[0]) if k else xs[0], ys[0],
                        torch.float32) for k in range(4)]
    total = np.sqrt(sum(float(np.sum(g * g)) for g in g64.values()))
    worst, bad = 0.0, []
    for n, g in g64.items():
        ours = (before[n] - after[n]) / GRAD_LR
        norm = np.linalg.norm(g)
        err = np.linalg.norm(ours - g)
        theirs = max(np.linalg.norm(g32[n] - g) for g32 in g32s)
        allowed = max(10 * theirs, 1e-5 * norm, 1e-7 * total)
        worst = max(worst, err / allowed)
        if not err <= allowed:
            bad.append("%s: %.2e (torch f32 %.2e)" % (n, err / max(norm, 1e-30),
                                                      theirs / max(norm, 1e-30)))
    report(not bad, "gradients",
           "%d parameters, worst at %.2f of the allowed error%s" %
           (len(g64), worst, ("; " + ", ".join(bad[:3])) if bad else ""))

    # 3: eight f32 steps.
    ours = amp_run(amp, path, many, work, "f32",
                   ["--steps", str(STEPS), "--optimizer", "sgd",
                    "--lr", repr(STEP_LR)])
    l64 = torch_losses(module, loss_fn, xs, ys, torch.float64)
    l32 = torch_losses(module, loss_fn, xs, ys, torch.float32)
    lulp = torch_losses(weights_moved(module), loss_fn, xs, ys, torch.float64)
    # (A reference run that is not finite leaves nothing to compare with.)
    noise = [max(rel(a, c), rel(b, c)) if np.isfinite([a, b, c]).all()
             else math.inf for a, b, c in zip(l32, lulp, l64)]
    compared, bad = 0, []
    for s in range(STEPS):
        if noise[s] > 1e-4:
            break  # rounding parts the runs here, and they stay parted
        compared += 1
        allowed = max(10 * noise[s], 1e-5)
        if not (np.isfinite(ours[s]) and rel(ours[s], l64[s]) <= allowed):
            bad.append("step %d: %.7g vs %.7g" % (s, ours[s], l64[s]))
    report(len(ours) == STEPS and not bad and compared > 0, "f32 steps",
           "%d compared%s%s" %
           (compared, "" if compared == STEPS else
            " (f32 rounding parts the runs at step %d: noise %.2g, of which "
            "PyTorch f32 %.2g)" % (compared, noise[compared],
                                   rel(l32[compared], l64[compared])),
            ("; " + ", ".join(bad)) if bad else ""))

    # 4: AMP at step 0.
    f32_loss = ours[0]
    band = 1e-2 * abs(f32_loss)
    try:
        band = max(band, 4 * abs(autocast_loss(module, loss_fn, xs[0], ys[0]) -
                                  l32[0]))
    except RuntimeError as e:  # an op torch 1.13 cannot autocast on the CPU
        lines.append("NOTE %s opset %d: torch's bf16 autocast fails (%s); "
                     "the band is 1e-2 of the loss" %
                     (name, opset, str(e).splitlines()[0]))
    for tag, args in (("O1 bf16", ["--amp", "O1", "--amp-dtype", "bf16"]),
                      ("O2 f16", ["--amp", "O2"])):
        loss = amp_run(amp, path, one, work, tag.replace(" ", "-"),
                       ["--steps", "1"] + args)[0]
        ok = np.isfinite(loss) and abs(loss - f32_loss) <= band
        report(ok, tag, "loss %.6g, f32 %.6g, band %.2e" %
               (loss, f32_loss, band))
    return lines, failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--amp-run", required=True)
    ap.add_argument("--opsets", type=int, nargs="+", default=[13, 17, 18])
    ap.add_argument("--convert-python", default="",
                    help="python with onnx >= 1.13, for opsets above %d" %
                    NEWEST_TORCH_OPSET)
    ap.add_argument("--models", default="")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--work", default="")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    try:
        import torchvision  # noqa: F401
    except ImportError:
        print("model_zoo: python3-torchvision is not installed "
              "(scripts/setup.sh installs it)")
        return 77
    names = a.models.split(",") if a.models else list(models())
    if a.list:
        print("\n".join(names))
        return 0
    unknown = [n for n in names if n not in models()]
    if unknown:
        print("model_zoo: unknown model(s) %s (known: %s)" %
              (", ".join(unknown), ", ".join(models())))
        return 2
    torch.set_num_threads(1)
    scratch = None if a.work else tempfile.TemporaryDirectory(
        prefix="ampc-zoo-")
    work = a.work or scratch.name
    converter = a.convert_python if a.convert_python and os.access(
        a.convert_python, os.X_OK) else None
    skipped = [o for o in a.opsets if o > NEWEST_TORCH_OPSET and not converter]
    for o in skipped:
        print("SKIP opset %d: torch exports up to %d and no --convert-python "
              "interpreter (%s) converts further" %
              (o, NEWEST_TORCH_OPSET, a.convert_python or "not given"))
    jobs = [(n, o) for n in names for o in a.opsets if o not in skipped]
    failed = False
    # Processes, not threads: each model is built from torch's global seed.
    with concurrent.futures.ProcessPoolExecutor(
            a.jobs, mp_context=multiprocessing.get_context("fork")) as pool:
        futures = [pool.submit(check, a.amp_run, n, o, work, converter)
                   for n, o in jobs]
        for f in futures:
            lines, bad = f.result()
            print("\n".join(lines), flush=True)
            failed |= bad
    if scratch:
        scratch.cleanup()
    print("model_zoo: %d models x %d opsets: %s" %
          (len(names), len(a.opsets) - len(skipped),
           "FAILED" if failed else "ok"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
