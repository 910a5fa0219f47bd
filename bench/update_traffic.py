#!/usr/bin/python3
"""Memory-bound traffic per weight element of the compiled training step of
the seeds' 9 x Linear network (bench/gpu's mlp9x8192) at O2 f16.

The model is bench/gpu/models.py's mlp9x8192 (9 Gemm(transB) of width x
width plus bias, MSE as Sub, Mul, ReduceMean), compiled as bench/gpu/plan.py
compiles it (SGD with momentum 0.9, its lr, the configuration's amp-run
flags) with `amp-run --emit=rt`. Width 8192 would need 2.4 GB of weights to
compile, so it is compiled at a smaller width (default 256, batch width/4 as
2048 is to 8192): the count per weight element does not depend on the width,
as every tensor it counts has exactly the weights' element count.

From the rt IR: for every kernel that is not a GEMM (its body has no
graph.gemm / graph.matmul), the bytes it reads (each distinct input once) and
writes (each result) of tensors with a weight's element count -- weights,
their gradients, optimizer state, working copies -- divided by the number of
weight elements. Printed per kernel kind, with the total and the step's
kernel count. The batch must not be the width, or activations would have a
weight's element count too.

usage: /usr/bin/python3 bench/update_traffic.py [--width N] [--batch N]
           [--config O2-f16] [--amp-run PATH] [--save-ir FILE] [--ir FILE]
           [--max-total BYTES]
"""

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "gpu"))

import plan  # noqa: E402  (bench/gpu: torch-free)

MODEL = "mlp9x8192"
BYTES = {"f64": 8, "f32": 4, "f16": 2, "bf16": 2, "i64": 8, "i32": 4, "i1": 1}
TENSOR = re.compile(r"tensor<((?:\d+x)*)(\w+)>")
# `%r = rt.kernel "KIND"(%a, %b) at [OFFSETS] {ATTRS} : (INS) -> OUTS {`
KERNEL = re.compile(r"^\s*(%[\w#:]+) = rt\.kernel \"(\w+)\"\(([^)]*)\) at "
                    r"\[[^\]]*\](?: \{[^{}]*\})? : \((.*)\) -> (.*) \{$")
PARAM = re.compile(r"^\s*%\S+ = rt\.param \"([^\"]+)\" at .* : (tensor<.*>)$")
GEMM = re.compile(r"\bgraph\.(gemm|matmul)\b")


def tensor(text):
    """(element count, bytes) of `tensor<AxBxT>`."""
    m = TENSOR.fullmatch(text.strip())
    if not m or m.group(2) not in BYTES:
        raise ValueError(f"not a tensor type this script knows: {text!r}")
    n = 1
    for d in filter(None, m.group(1).split("x")):
        n *= int(d)
    return n, n * BYTES[m.group(2)]


def types(text):
    return [tensor(t.group(0)) for t in TENSOR.finditer(text)]


def kernels(ir):
    """Yields (kind, input names, input types, result types, body) of every
    rt.kernel of @train_step, in order."""
    lines = ir.splitlines()
    i = 0
    while i < len(lines):
        m = KERNEL.match(lines[i])
        i += 1
        if not m:
            if " rt.kernel " in lines[i - 1]:
                raise ValueError("an rt.kernel line this script cannot read "
                                 f"(line {i}): {lines[i - 1]}")
            continue
        body = []
        while not lines[i].startswith("    }"):
            body.append(lines[i])
            i += 1
        names = [a.strip() for a in m.group(3).split(",") if a.strip()]
        yield (m.group(2), names, types(m.group(4)), types(m.group(5)),
               "\n".join(body))


def weights(ir):
    """The element counts of the weights (the `*.weight` parameters)."""
    return [tensor(m.group(2))[0] for m in map(PARAM.match, ir.splitlines())
            if m and m.group(1).endswith(".weight")]


def traffic(ir):
    """{kind: [kernels, bytes read, bytes written]} of the non-GEMM kernels
    that touch weight-sized tensors, the weight element count, the kernel
    count and the GEMM count."""
    sizes = weights(ir)
    if not sizes or len(set(sizes)) != 1:
        raise ValueError("the IR has no `*.weight` parameters of one element "
                         f"count (found {sizes})")
    n = sizes[0]
    by_kind = collections.OrderedDict()
    count = gemms = 0
    for kind, names, ins, outs, body in kernels(ir):
        count += 1
        if GEMM.search(body):
            gemms += 1
            continue
        seen = {}
        for name, t in zip(names, ins):
            seen[name] = t
        read = sum(b for e, b in seen.values() if e == n)
        written = sum(b for e, b in outs if e == n)
        if read or written:
            k = by_kind.setdefault(kind, [0, 0, 0])
            k[0] += 1
            k[1] += read
            k[2] += written
    return by_kind, n * len(sizes), count, gemms


def compile_step(args, work):
    import models  # bench/gpu/models.py (imports torch)
    models.SIZES["traffic"] = {MODEL: dict(batch=args.batch, width=args.width,
                                           layers=9)}
    path = os.path.join(work, MODEL + ".onnx")
    models.export_mlp9x8192("traffic", path)
    spec = next(m for m in plan.MODELS if m["name"] == MODEL)
    flags, _ = plan.CONFIGS[args.config]
    cmd = [args.amp_run, path, "--data", "synthetic", "--optimizer",
           "momentum", "--momentum", "0.9", "--lr", str(spec["lr"])] + flags + [
           "--emit=rt", "-o", "-"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        sys.exit(f"bench/update_traffic.py: {' '.join(cmd)} failed "
                 f"({p.returncode}):\n{p.stderr}")
    return p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--batch", type=int,
                    help="(default: width / 4, as 2048 is to 8192)")
    ap.add_argument("--config", default="O2-f16", choices=sorted(plan.CONFIGS),
                    help="bench/gpu/plan.py's configuration (default "
                    "%(default)s)")
    ap.add_argument("--amp-run", default="build/bin/amp-run")
    ap.add_argument("--save-ir", metavar="FILE",
                    help="also write the compiled step's rt IR here")
    ap.add_argument("--ir", metavar="FILE",
                    help="count this rt IR instead of compiling the model")
    ap.add_argument("--max-total", type=float, metavar="BYTES",
                    help="exit 1 when the total per weight element is above")
    args = ap.parse_args()
    args.batch = args.batch or max(1, args.width // 4)
    if args.batch == args.width:
        ap.error("--batch must differ from --width: activations would have a "
                 "weight's element count")

    if args.ir:
        with open(args.ir) as f:
            ir = f.read()
        what = args.ir
    else:
        if not os.access(args.amp_run, os.X_OK):
            ap.error(f"amp-run not found at {args.amp_run!r} (build it "
                     f"first, or pass --amp-run)")
        with tempfile.TemporaryDirectory() as work:
            ir = compile_step(args, work)
        what = (f"{MODEL} at width {args.width}, batch {args.batch}, "
                f"{args.config}")
    if args.save_ir:
        with open(args.save_ir, "w") as f:
            f.write(ir)

    by_kind, elements, count, gemms = traffic(ir)
    print(f"update traffic of {what}: {elements} weight elements")
    print(f"{'kernel kind':<24} {'kernels':>7} {'read B/elem':>12} "
          f"{'written B/elem':>15} {'B/elem':>7}")
    total = 0
    for kind, (k, read, written) in by_kind.items():
        total += read + written
        print(f"{kind:<24} {k:>7} {read / elements:>12.2f} "
              f"{written / elements:>15.2f} {(read + written) / elements:>7.2f}")
    total /= elements
    print(f"total: {total:.2f} bytes per weight element")
    print(f"kernels per step: {count} ({gemms} GEMM)")
    if args.max_total is not None and total > args.max_total:
        print(f"FAIL: {total:.2f} bytes per weight element is above "
              f"--max-total {args.max_total:g}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
