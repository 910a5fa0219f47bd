#!/usr/bin/python3
"""Runs ONNX's node tests (libonnx-testdata) through `amp-run --mode infer`.

For every test directory of the suites node, pytorch-converted and
pytorch-operator (DATA/<suite>/<test>/{model.onnx,test_data_set_K/*.pb}):

Scope. A test is in scope when the importer can convert every node of its
model. The supported set is parsed from the op-mapping table of
docs/onnx-import.md (first column: op names; a trailing "(12+)", "(17)" or
"(opset 20; com.microsoft opset 1)" narrows the opset range of the names in
that cell; the section heading gives the default range, "opsets 11 to 18").
The importer also dispatches on the model's opset and accepts only the element
types listed in "Supported element types:", so a test whose opset is outside
an op's range, or whose graph inputs/outputs are not tensors of those types,
is out of scope too (with that reason; see --list-out-of-scope), as is a test
whose .pb files disagree with the model's declared types (ONNX 1.12 stores
its BFLOAT16 cast data as UINT16). Parsing a
Markdown table is fragile: --self-test cross-checks it against the
addHandler(...) registrations in compiler/Conversion/OnnxToGraph/*.cpp.

Bind table. ONNX node tests pass shapes, axes, slice bounds, Clip bounds and
Dropout ratio/training_mode as graph *inputs*; ampc folds those to static
attributes (exported models have them as initializers), so such inputs are
given to amp-run with --bind (a compile-time constant) instead of --input.
BIND_INPUTS below lists (op type -> input indices). It was derived from the
ONNX operator schemas (onnx.defs, opsets 11-18) for exactly the ops in the
table above: an input is listed when docs/onnx-import.md says the importer
needs it constant ("Inputs that are shapes, axes, split sizes, slice bounds,
Clip bounds or Dropout ratios must be compile-time constants") and its schema
name is one of shape / axes / split / starts / ends / steps / min / max /
ratio / training_mode. Every listed index names the same input in every
schema version that has it, so no opset condition is needed (--self-test
checks this against onnx.defs). Data inputs of the other ops (Gather indices,
Where condition, Pow exponent, loss labels and weights, norm scales) stay
runtime inputs. A graph input is bound when it feeds a listed position
directly; binding wins when it also feeds a data position.

Each data set runs
  amp-run MODEL --mode infer --input NAME=FILE.pb ... --bind NAME=FILE.pb ...
          --save-outputs TMPDIR
and TMPDIR/<output name>.npy (name with characters outside [A-Za-z0-9._-]
replaced by '_') is compared with output_K.pb using ONNX's backend-test
tolerances: rtol=1e-3, atol=1e-7, NaN equal to NaN, shapes and dtypes exact
(integers and bools exactly; a BFLOAT16 output is compared with the '<f4'
.npy that amp-run writes for it, since NumPy has no bfloat16).

expected_failures.txt: one test name per line (`test_x` or `suite/test_x`),
then ` # reason`. The exit status is non-zero when a test fails that is not
listed, a listed test passes, or a listed test does not exist or is out of
scope, so the list stays honest. Exit 77 (ctest's skip) when the test data is
not installed, or when --device names a GPU that cannot be opened; with
AMPC_REQUIRE_GPU=1 (the GPU machine's runs) the latter is a failure (exit 1).
"""

import argparse
import concurrent.futures
import os
import re
import shlex
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import onnx
from onnx import numpy_helper

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                     "..", ".."))
DEFAULT_DATA = "/usr/share/libonnx-testdata/data"
SUITES = ("node", "pytorch-converted", "pytorch-operator")
RTOL, ATOL = 1e-3, 1e-7

# (op type) -> input indices that must be compile-time constants. See the
# module docstring for how this was derived; BIND_NAMES is what --self-test
# checks the indices against in onnx.defs.
BIND_INPUTS = {
    "Reshape": {1},           # shape
    "Expand": {1},            # shape
    "Slice": {1, 2, 3, 4},    # starts, ends, axes, steps (opset 10+)
    "Squeeze": {1},           # axes (opset 13+)
    "Unsqueeze": {1},         # axes (opset 13+)
    "Split": {1},             # split (opset 13+)
    "ReduceSum": {1},         # axes (opset 13+)
    "ReduceMean": {1},        # axes (opset 18+)
    "ReduceMax": {1},         # axes (opset 18+)
    "Clip": {1, 2},           # min, max (opset 11+)
    "Dropout": {1, 2},        # ratio, training_mode (opset 12+)
    "ConstantOfShape": {0},   # input (the shape)
    "Range": {0, 1, 2},       # start, limit, delta
    "Tile": {1},              # repeats
    "Pad": {1, 2},            # pads, constant_value (opset 11+)
    "Trilu": {1},             # k
    "LSTM": {4},              # sequence_lens
    "GRU": {4},               # sequence_lens
    "Resize": {1, 2, 3},      # roi, scales, sizes
}
BIND_NAMES = {"shape", "axes", "split", "starts", "ends", "steps", "min", "max",
              "ratio", "training_mode", "start", "limit", "delta", "repeats",
              "pads", "constant_value", "k", "sequence_lens", "roi", "scales",
              "sizes"}
# Schema names that mean a shape for one op only: ConstantOfShape's "input",
# and Tile-1's "tiles" (a count, before opset 6 and ampc's range).
BIND_OP_NAMES = {"ConstantOfShape": {"input"}, "Tile": {"tiles"}}

ONNX_TYPE_NAMES = {v: k for k, v in onnx.TensorProto.DataType.items()}


# --------------------------------------------------------------------------
# The importer's supported set, from docs/onnx-import.md
# --------------------------------------------------------------------------

class Scope:
    def __init__(self):
        self.ops = {}        # "Op" or "domain::Op" -> (min opset, max opset)
        self.dtypes = set()  # ONNX element type numbers
        self.warnings = []


def _split_cell(cell):
    """Splits 'A, B (x; y), C' at commas outside parentheses."""
    parts, depth, cur = [], 0, ""
    for ch in cell:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


def _note_ranges(note, lo, hi, warnings, cell):
    """Opset ranges a parenthesized note gives: [(domain, lo, hi)]."""
    out = []
    for piece in note.split(";"):
        piece = piece.strip()
        m = re.fullmatch(r"(\d+)\+", piece)
        if m:
            out.append(("", int(m.group(1)), hi))
            continue
        m = re.fullmatch(r"(?:opset )?(\d+)", piece)
        if m:
            out.append(("", int(m.group(1)), int(m.group(1))))
            continue
        m = re.fullmatch(r"([a-z][a-z0-9_.]*) opset (\d+)", piece)
        if m:
            out.append((m.group(1), int(m.group(2)), int(m.group(2))))
            continue
        warnings.append("docs/onnx-import.md: cannot read the note '(%s)' in "
                        "'%s'; using opsets %d to %d" % (piece, cell, lo, hi))
        out.append(("", lo, hi))
    return out


def parse_scope(doc_path):
    scope = Scope()
    with open(doc_path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    m = None
    for line in lines:
        mt = re.match(r"Supported element types:\s*(.*)", line)
        if mt:
            for name in re.findall(r"[A-Z][A-Z0-9]*", mt.group(1)):
                if name in onnx.TensorProto.DataType.keys():
                    scope.dtypes.add(onnx.TensorProto.DataType.Value(name))
                else:
                    scope.warnings.append("unknown element type " + name)
    start = None
    for i, line in enumerate(lines):
        if line.startswith("## Op mapping"):
            start = i
            m = re.search(r"opsets (\d+) to (\d+)", line)
            break
    if start is None or m is None:
        raise SystemExit("error: %s has no '## Op mapping (... opsets A to B "
                         "...)' section; the runner cannot tell what the "
                         "importer supports" % doc_path)
    lo, hi = int(m.group(1)), int(m.group(2))
    rows = []
    for line in lines[start + 1:]:
        if line.startswith("#"):
            break
        if line.startswith("|"):
            rows.append(line)
    for row in rows:
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        first = cells[0].replace("`", "")
        if first in ("ONNX", "") or set(first) <= set("-: "):
            continue
        # A note at the end of the cell applies to every name in it without
        # a note of its own ("SoftmaxCrossEntropyLoss, NLLLoss (12+)").
        parts = _split_cell(first)
        tail = re.search(r"\(([^()]*)\)\s*$", parts[-1])
        for part in parts:
            mp = re.fullmatch(r"([A-Za-z][A-Za-z0-9]*)\s*(?:\(([^()]*)\))?",
                              part)
            if not mp:
                scope.warnings.append("docs/onnx-import.md: cannot read the "
                                      "op name '%s' in row '%s'" % (part, row))
                continue
            note = mp.group(2) or (tail.group(1) if tail else None)
            ranges = (_note_ranges(note, lo, hi, scope.warnings, first)
                      if note else [("", lo, hi)])
            for domain, a, b in ranges:
                key = mp.group(1) if domain in ("", "ai.onnx") else \
                    domain + "::" + mp.group(1)
                scope.ops[key] = (a, b)
    if not scope.ops:
        raise SystemExit("error: no ops parsed from " + doc_path)
    if not scope.dtypes:
        raise SystemExit("error: no 'Supported element types:' in " + doc_path)
    return scope


# --------------------------------------------------------------------------
# Tests, scope and commands
# --------------------------------------------------------------------------

class Test:
    def __init__(self, suite, name, path):
        self.suite, self.name, self.path = suite, name, path
        self.id = suite + "/" + name
        self.reason = None   # why it is out of scope; None when in scope
        # [(data set dir, model path, [("input"|"bind", name, file)],
        #   [(output name, expected file)])]
        self.datasets = []


def discover(data_dir, suites, opset=None):
    """The tests under data_dir; with `opset`, only those whose model imports
    exactly that default-domain opset."""
    tests = []
    for suite in suites:
        root = os.path.join(data_dir, suite)
        if not os.path.isdir(root):
            continue
        for name in sorted(os.listdir(root)):
            path = os.path.join(root, name)
            model = os.path.join(path, "model.onnx")
            if not os.path.isfile(model):
                continue
            if opset is not None:
                proto = onnx.ModelProto()
                with open(model, "rb") as f:
                    proto.ParseFromString(f.read())
                if opset_of(proto, "") != opset:
                    continue
            tests.append(Test(suite, name, path))
    return tests


def data_dir_of(python):
    """The node-test data of the onnx package that `python` imports, or None
    when there is no such interpreter or package."""
    if not os.access(python, os.X_OK):
        return None
    try:
        out = subprocess.run(
            [python, "-c", "import os, onnx.backend.test as t; "
             "print(os.path.join(os.path.dirname(t.__file__), 'data'))"],
            capture_output=True, text=True, timeout=120, check=True)
    except (subprocess.SubprocessError, OSError):
        return None
    return out.stdout.strip() or None


def node_key(node):
    domain = node.domain if node.domain not in ("", "ai.onnx") else ""
    return (domain + "::" if domain else "") + node.op_type


def opset_of(model, domain):
    for o in model.opset_import:
        if (o.domain or "ai.onnx") == (domain or "ai.onnx"):
            return o.version
    return None


def value_type_problem(v, scope):
    t = v.type
    kind = t.WhichOneof("value")
    if kind != "tensor_type":
        return "%s is a %s, not a tensor" % (v.name, kind or "value of no type")
    if t.tensor_type.elem_type not in scope.dtypes:
        et = t.tensor_type.elem_type
        return "%s has element type %s (%d)" % (
            v.name, ONNX_TYPE_NAMES.get(et, "?"), et)
    return None


def bound_inputs(model):
    """Graph inputs that feed a BIND_INPUTS position directly."""
    bound = set()
    for node in model.graph.node:
        idxs = BIND_INPUTS.get(node.op_type) if node.domain in ("", "ai.onnx") \
            else None
        for i in idxs or ():
            if i < len(node.input) and node.input[i]:
                bound.add(node.input[i])
    return bound


def read_proto(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t


def data_type_problem(path, proto, declared):
    """ONNX 1.12's bf16 cast tests store BFLOAT16 tensors as UINT16: that is
    a bug in the data, not something for ampc to fail on."""
    if proto.data_type == declared:
        return None
    return "test data %s is %s but the model declares %s" % (
        os.path.relpath(path, os.path.dirname(os.path.dirname(path))),
        ONNX_TYPE_NAMES.get(proto.data_type, proto.data_type),
        ONNX_TYPE_NAMES.get(declared, declared))


def plan(test, scope):
    """Sets test.reason (out of scope) or test.datasets."""
    try:
        model = onnx.load(os.path.join(test.path, "model.onnx"))
    except Exception as e:  # noqa: BLE001 - any load failure is a reason
        test.reason = "cannot load model.onnx: %s" % str(e).splitlines()[0]
        return
    for node in model.graph.node:
        key = node_key(node)
        if key not in scope.ops:
            test.reason = "op %s not supported" % key
            return
        opset = opset_of(model, node.domain)
        lo, hi = scope.ops[key]
        if opset is None or not lo <= opset <= hi:
            test.reason = "op %s at opset %s (supported: %d to %d)" % (
                key, opset, lo, hi)
            return
    for v in list(model.graph.input) + list(model.graph.output):
        problem = value_type_problem(v, scope)
        if problem:
            test.reason = problem
            return
    inits = {i.name for i in model.graph.initializer}
    inputs = [v.name for v in model.graph.input if v.name not in inits]
    outputs = [v.name for v in model.graph.output]
    declared = {v.name: v.type.tensor_type.elem_type
                for v in list(model.graph.input) + list(model.graph.output)}
    bound = bound_inputs(model)
    model_path = os.path.join(test.path, "model.onnx")
    for ds in sorted(d for d in os.listdir(test.path)
                     if d.startswith("test_data_set_")):
        ds_dir = os.path.join(test.path, ds)
        in_files = sorted((f for f in os.listdir(ds_dir)
                           if re.fullmatch(r"input_\d+\.pb", f)),
                          key=lambda f: int(f[6:-3]))
        out_files = sorted((f for f in os.listdir(ds_dir)
                            if re.fullmatch(r"output_\d+\.pb", f)),
                           key=lambda f: int(f[7:-3]))
        if len(in_files) > len(inputs) or len(out_files) != len(outputs):
            test.reason = "%s has %d inputs and %d outputs, the model %d and " \
                          "%d" % (ds, len(in_files), len(out_files),
                                  len(inputs), len(outputs))
            return
        feeds = []
        for j, f in enumerate(in_files):
            path = os.path.join(ds_dir, f)
            # The file's own name when it is a graph input, else position
            # (ONNX's runner feeds input_j to the j-th non-initializer input).
            proto = read_proto(path)
            name = proto.name if proto.name in inputs else inputs[j]
            test.reason = data_type_problem(path, proto, declared[name])
            if test.reason:
                return
            feeds.append(("bind" if name in bound else "input", name, path))
        outs = [(outputs[k], os.path.join(ds_dir, f))
                for k, f in enumerate(out_files)]
        for name, path in outs:
            test.reason = data_type_problem(path, read_proto(path),
                                            declared[name])
            if test.reason:
                return
        test.datasets.append((ds_dir, model_path, feeds, outs))
    if not test.datasets:
        test.reason = "no test_data_set_*"


def safe_name(name):
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


# The device every test runs on (--device): cpu, cuda or cuda:N.
DEVICE = "cpu"


def command(amp_run, model_path, feeds, out_dir):
    cmd = [amp_run, model_path, "--mode", "infer"]
    if DEVICE != "cpu":
        cmd += ["--device", DEVICE]
    for kind, name, path in feeds:
        cmd += ["--" + kind, "%s=%s" % (name, path)]
    return cmd + ["--save-outputs", out_dir]


def gpu_required():
    """AMPC_REQUIRE_GPU=1 (any value but "" and "0"): a device that cannot
    be opened fails the run instead of skipping it."""
    return os.environ.get("AMPC_REQUIRE_GPU", "") not in ("", "0")


def device_unusable(amp_run, test, timeout):
    """Why DEVICE cannot run anything here (no GPU, no driver), or None.

    Session::create puts "device 'NAME'" in front of the reasons a device
    cannot be opened; a kernel's failure says something else and is a test
    failure, not a skip."""
    ds_dir, model_path, feeds, _ = test.datasets[0]
    with tempfile.TemporaryDirectory(prefix="ampc-conf-") as tmp:
        try:
            p = subprocess.run(command(amp_run, model_path, feeds, tmp),
                               stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=timeout,
                               text=True, errors="replace")
        except (OSError, subprocess.TimeoutExpired):
            return None
    marker = "device '%s'" % DEVICE
    if p.returncode != 0 and marker in p.stdout:
        return first_error_line(p.stdout)
    return None


# --------------------------------------------------------------------------
# Comparison
# --------------------------------------------------------------------------

def load_expected(path):
    t = read_proto(path)
    return t.data_type, numpy_helper.to_array(t)


def compare(name, expected_path, actual_path):
    """None when equal within tolerance, else a short reason."""
    onnx_type, want = load_expected(expected_path)
    if not os.path.isfile(actual_path):
        return "no output file %s" % os.path.basename(actual_path)
    try:
        got = np.load(actual_path, allow_pickle=False)
    except Exception as e:  # noqa: BLE001
        return "cannot read %s: %s" % (os.path.basename(actual_path), e)
    want_dtype = want.dtype
    if onnx_type == onnx.TensorProto.BFLOAT16:
        want_dtype = np.dtype(np.float32)  # amp-run writes bf16 as '<f4'
    if got.dtype != want_dtype:
        return "output %s: dtype %s, expected %s" % (name, got.dtype,
                                                     want_dtype)
    if got.shape != want.shape:
        return "output %s: shape %s, expected %s" % (name, got.shape,
                                                     want.shape)
    if want.dtype.kind in "biu":
        bad = got != want
        if bad.any():
            i = np.argwhere(bad)[0]
            return "output %s: %d of %d elements differ (first at %s: %s vs " \
                   "%s)" % (name, int(bad.sum()), want.size, tuple(i),
                            got[tuple(i)], want[tuple(i)])
        return None
    try:
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL,
                                   equal_nan=True)
    except AssertionError:
        g, w = got.astype(np.float64), want.astype(np.float64)
        with np.errstate(invalid="ignore"):
            bad = ~((np.abs(g - w) <= ATOL + RTOL * np.abs(w)) |
                    (np.isnan(g) & np.isnan(w)) | (g == w))
        i = tuple(np.argwhere(bad)[0])
        return "output %s: %d of %d elements off (first at %s: %r vs %r)" % (
            name, int(bad.sum()), want.size, i, got[i].item(), want[i].item())
    return None


def first_error_line(text):
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    for l in lines:
        if "error" in l.lower():
            return l[:240]
    return lines[-1][:240] if lines else "(no output)"


def run_test(test, amp_run, timeout, verbose):
    """(passed, reason)."""
    for ds_dir, model_path, feeds, outs in test.datasets:
        ds = os.path.basename(ds_dir)
        with tempfile.TemporaryDirectory(prefix="ampc-conf-") as tmp:
            cmd = command(amp_run, model_path, feeds, tmp)
            if verbose:
                print("RUN " + " ".join(shlex.quote(c) for c in cmd),
                      flush=True)
            try:
                p = subprocess.run(cmd, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, timeout=timeout,
                                   text=True, errors="replace")
            except subprocess.TimeoutExpired:
                return False, "%s: timed out after %ds" % (ds, timeout)
            except OSError as e:
                return False, "%s: cannot run amp-run: %s" % (ds, e)
            if p.returncode != 0:
                return False, "%s: amp-run exited %d: %s" % (
                    ds, p.returncode, first_error_line(p.stdout))
            for name, path in outs:
                reason = compare(name, path,
                                 os.path.join(tmp, safe_name(name) + ".npy"))
                if reason:
                    return False, "%s: %s" % (ds, reason)
    return True, None


# --------------------------------------------------------------------------
# Expected failures
# --------------------------------------------------------------------------

def read_expected(path):
    """{entry: (reason, line number)}; raises SystemExit on a bad line."""
    entries = {}
    if not os.path.exists(path):
        return entries
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            m = re.fullmatch(r"([A-Za-z0-9_./-]+)\s+#\s*(\S.*)", text)
            if not m:
                raise SystemExit("error: %s:%d: expected 'test_name # reason', "
                                 "got %r" % (path, n, text))
            if m.group(1) in entries:
                raise SystemExit("error: %s:%d: %s is listed twice" %
                                 (path, n, m.group(1)))
            entries[m.group(1)] = (m.group(2), n)
    return entries


def match_expected(entries, tests, path):
    """Maps test ids to reasons; returns (map, problems)."""
    by_name = {}
    for t in tests:
        by_name.setdefault(t.name, []).append(t)
    ids = {t.id: t for t in tests}
    listed, problems = {}, []
    for entry, (reason, n) in entries.items():
        if entry in ids:
            found = [ids[entry]]
        else:
            found = by_name.get(entry, [])
        if not found:
            problems.append("%s:%d: %s names no test" % (path, n, entry))
        elif len(found) > 1:
            problems.append("%s:%d: %s is ambiguous (%s); write suite/name" %
                            (path, n, entry, ", ".join(t.id for t in found)))
        else:
            listed[found[0].id] = reason
    return listed, problems


# --------------------------------------------------------------------------
# Self test: checks of the pieces that do not need amp-run
# --------------------------------------------------------------------------

# A stand-in for amp-run used by --self-test: it checks the command line the
# runner builds and "computes" each output by copying output_K.pb from the
# data set of its first --input/--bind file, so the plumbing (naming, npy
# writing, comparison, timeouts) is exercised without the compiler.
FAKE_AMP_RUN = r"""
import os, re, sys, time
import numpy as np, onnx
from onnx import numpy_helper
args = sys.argv[1:]
assert args[0].endswith("model.onnx") and args[1:3] == ["--mode", "infer"], args
files, out = [], None
i = 3
while i < len(args):
    if args[i] in ("--input", "--bind"):
        name, path = args[i + 1].split("=", 1)
        assert name and os.path.isfile(path), args[i + 1]
        files.append(path)
    elif args[i] == "--save-outputs":
        out = args[i + 1]
    else:
        sys.exit("error: unknown option " + args[i])
    i += 2
mode = os.environ.get("FAKE_MODE", "")
if mode == "sleep":
    time.sleep(30)
if mode == "crash":
    sys.exit("loading model\nerror: no conversion for ONNX op 'X'")
model = onnx.load(args[0])
ds = (os.path.dirname(files[0]) if files else
      os.path.join(os.path.dirname(args[0]), "test_data_set_0"))
for k, o in enumerate(model.graph.output):
    t = onnx.TensorProto()
    t.ParseFromString(open(os.path.join(ds, "output_%d.pb" % k), "rb").read())
    a = numpy_helper.to_array(t)
    if mode == "perturb" and a.dtype.kind == "f":
        a = a * np.float32(1.01) + np.float32(1)
    if mode == "f64" and a.dtype.kind == "f":
        a = a.astype(np.float64)
    np.save(os.path.join(out, re.sub(r"[^A-Za-z0-9._-]", "_", o.name) + ".npy"), a)
"""


def self_test_fake(scope, data_dir, problems):
    tests = {t.id: t for t in discover(data_dir, SUITES)}
    ids = ["node/test_abs", "node/test_reshape_negative_dim", "node/test_slice",
           "node/test_clip", "node/test_training_dropout_zero_ratio_mask",
           "node/test_gather_0", "node/test_batchnorm_example_training_mode"]
    with tempfile.TemporaryDirectory() as tmp:
        fake = os.path.join(tmp, "amp-run")
        with open(fake, "w") as f:
            f.write("#!" + sys.executable + "\n" + FAKE_AMP_RUN)
        os.chmod(fake, 0o755)
        for mode, want in [("", None), ("perturb", "elements off"),
                           ("f64", "dtype float64"),
                           ("crash", "exited 1: error: no conversion"),
                           ("sleep", "timed out")]:
            os.environ["FAKE_MODE"] = mode
            for tid in ids if mode in ("", "perturb") else ids[:1]:
                t = tests.get(tid)
                if t is None:
                    continue
                plan(t, scope)
                if t.reason:
                    problems.append("%s is out of scope: %s" % (tid, t.reason))
                    continue
                if mode == "perturb" and tid == "node/test_gather_0":
                    continue  # gather_0 is float too, but keep one int case
                ok, reason = run_test(t, fake, 2, False)
                if (want is None) != ok or (want and want not in (reason or "")):
                    problems.append("fake amp-run (%s) on %s: %s, expected %s"
                                    % (mode or "exact", tid, reason or "pass",
                                       want or "pass"))
        os.environ.pop("FAKE_MODE", None)


def self_test(scope, args):
    problems = []
    # 1. The doc table against the handlers the conversion registers.
    code = {}
    conv = os.path.join(REPO, "compiler", "Conversion", "OnnxToGraph")
    constant = r"\b(k[A-Z]\w*)\s*=\s*(\d+)"
    shared = {}
    if os.path.isfile(os.path.join(conv, "NodeBinder.h")):
        shared = dict(re.findall(constant, open(os.path.join(
            conv, "NodeBinder.h"), encoding="utf-8").read()))
    for f in sorted(os.listdir(conv)) if os.path.isdir(conv) else []:
        if not f.endswith(".cpp"):
            continue
        src = open(os.path.join(conv, f), encoding="utf-8").read()
        local = dict(shared, **dict(re.findall(constant, src)))
        for op, a, b in re.findall(
                r'addHandler\(\s*t,\s*"([^"]+)",\s*(\w+),\s*(\w+)', src):
            code[op] = (int(local.get(a, a)), int(local.get(b, b)))
    if not code:
        problems.append("found no addHandler(...) calls under " + conv)
    for op in sorted(set(code) | set(scope.ops)):
        if code.get(op) != scope.ops.get(op):
            problems.append("docs/onnx-import.md says %s: %s, the conversion "
                            "registers %s" % (op, scope.ops.get(op),
                                              code.get(op)))
    # 2. The bind table against the ONNX schemas.
    for op, idxs in sorted(BIND_INPUTS.items()):
        if op not in scope.ops:
            problems.append("BIND_INPUTS names %s, which the importer does "
                            "not support" % op)
        seen = False
        for version in range(1, onnx.defs.onnx_opset_version() + 1):
            try:
                schema = onnx.defs.get_schema(op, version)
            except Exception:  # noqa: BLE001 - no schema at that version
                continue
            names = [i.name for i in schema.inputs]
            for i in idxs:
                if i < len(names):
                    seen = True
                    if names[i] not in (BIND_NAMES |
                                        BIND_OP_NAMES.get(op, set())):
                        problems.append("%s-%d input %d is %r, not a "
                                        "shape/axes/bound input" %
                                        (op, schema.since_version, i,
                                         names[i]))
        # ReduceMean/ReduceMax take axes as an input from opset 18 only.
        if not seen and onnx.defs.onnx_opset_version() >= 18:
            problems.append("BIND_INPUTS %s: no schema has those inputs" % op)
    for op in sorted(scope.ops):
        if "::" in op or op in BIND_INPUTS:
            continue
        try:
            schema = onnx.defs.get_schema(op, 17)
        except Exception:  # noqa: BLE001
            continue
        for i, inp in enumerate(schema.inputs):
            if inp.name in BIND_NAMES:
                problems.append("%s input %d (%s) looks like a compile-time "
                                "input missing from BIND_INPUTS" %
                                (op, i, inp.name))
    # 3. Known commands (checked by hand when the table was written).
    tests = {t.id: t for t in discover(args.data_dir, SUITES)}
    checks = {
        "node/test_reshape_negative_dim": [
            ("input", "data"), ("bind", "shape")],
        "node/test_slice_neg_steps": [
            ("input", "x"), ("bind", "starts"), ("bind", "ends"),
            ("bind", "axes"), ("bind", "steps")],
        "node/test_clip": [("input", "x"), ("bind", "min"), ("bind", "max")],
        "node/test_dropout_default_mask_ratio": [
            ("input", "x"), ("bind", "r")],
        "node/test_unsqueeze_axis_0": [("input", "x"), ("bind", "axes")],
        "node/test_gather_0": [("input", "data"), ("input", "indices")],
        "node/test_abs": [("input", "x")],
    }
    for tid, want in checks.items():
        t = tests.get(tid)
        if t is None:
            print("self-test: %s not in the test data; not checked" % tid)
            continue
        plan(t, scope)
        if t.reason:
            problems.append("%s is out of scope: %s" % (tid, t.reason))
            continue
        got = [(k, n) for k, n, _ in t.datasets[0][2]]
        if got != want:
            problems.append("%s feeds %s, expected %s" % (tid, got, want))
    # 4. The comparison itself.
    with tempfile.TemporaryDirectory() as tmp:
        ref = os.path.join(tmp, "ref.pb")
        a = np.array([[1.0, np.nan], [3.0, -0.0]], np.float32)
        with open(ref, "wb") as f:
            f.write(numpy_helper.from_array(a, "y").SerializeToString())
        out = os.path.join(tmp, "y.npy")
        cases = [(a, None), (a * (1 + 5e-4), None), (a * (1 + 5e-3), "off"),
                 (a.astype(np.float64), "dtype"), (a.reshape(4), "shape")]
        for arr, want in cases:
            np.save(out, arr)
            got = compare("y", ref, out)
            if (got is None) != (want is None) or (want and want not in got):
                problems.append("compare gave %r, expected %r" % (got, want))
        if compare("y", ref, os.path.join(tmp, "z.npy")) is None:
            problems.append("compare passed a missing file")
    self_test_fake(scope, args.data_dir, problems)
    for p in problems:
        print("SELF-TEST: " + p)
    print("self-test: %s (%d ops parsed, %d problems)" %
          ("ok" if not problems else "FAILED", len(scope.ops), len(problems)))
    return 1 if problems else 0


# --------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--amp-run", help="the amp-run binary")
    ap.add_argument("--data-dir", default=DEFAULT_DATA)
    ap.add_argument("--data-from-python", metavar="PYTHON",
                    help="take the test data from the onnx package this "
                    "interpreter imports (a newer onnx than Debian's, for "
                    "the opsets libonnx-testdata lacks)")
    ap.add_argument("--opset", type=int,
                    help="only the tests whose model imports exactly this "
                    "default-domain opset")
    ap.add_argument("--doc", default=os.path.join(REPO, "docs",
                                                  "onnx-import.md"))
    ap.add_argument("--expected-failures", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "expected_failures.txt"))
    ap.add_argument("--filter", help="run tests whose suite/name matches this "
                    "regex (re.search)")
    ap.add_argument("--device", default="cpu",
                    help="cpu, cuda or cuda:N; without a usable GPU the "
                    "run is skipped (exit 77) with the reason, or fails "
                    "with AMPC_REQUIRE_GPU=1")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=60,
                    help="seconds per amp-run call")
    ap.add_argument("--list-out-of-scope", action="store_true")
    ap.add_argument("--dry-run", action="store_true",
                    help="print the amp-run commands instead of running them")
    ap.add_argument("--self-test", action="store_true",
                    help="check the doc parsing, bind table and comparison")
    ap.add_argument("--verbose", "-v", action="store_true")
    args = ap.parse_args()

    if args.data_from_python:
        args.data_dir = data_dir_of(args.data_from_python)
        if not args.data_dir:
            print("%s has no onnx package with node tests (scripts/setup.sh "
                  "installs it): skipped" % args.data_from_python)
            return 77
    if not os.path.isdir(args.data_dir):
        print("libonnx-testdata is not installed (%s missing): skipped" %
              args.data_dir)
        return 77
    scope = parse_scope(args.doc)
    for w in scope.warnings:
        print("warning: " + w)
    if args.self_test:
        return self_test(scope, args)

    all_tests = discover(args.data_dir, SUITES, args.opset)
    entries = read_expected(args.expected_failures)
    listed, problems = match_expected(entries, all_tests,
                                      args.expected_failures)
    tests = all_tests
    if args.filter:
        rx = re.compile(args.filter)
        tests = [t for t in tests if rx.search(t.id)]
    for t in tests:
        plan(t, scope)
    in_scope = [t for t in tests if t.reason is None]
    out_scope = [t for t in tests if t.reason is not None]
    # Listed tests are checked whatever the filter, so the list stays honest.
    for t in all_tests:
        if t.id in listed and t not in tests:
            plan(t, scope)
    for t in all_tests:
        if t.id in listed and t.reason is not None:
            problems.append("%s is listed in %s but out of scope (%s)" % (
                t.id, os.path.basename(args.expected_failures), t.reason))

    if args.list_out_of_scope:
        reasons = {}
        for t in out_scope:
            print("%s: %s" % (t.id, t.reason))
            key = re.sub(r" at opset \S+ .*", " at an unsupported opset",
                         t.reason)
            key = re.sub(r"^\S+ (is a|has element type)", r"an input/output \1",
                         key)
            reasons[key] = reasons.get(key, 0) + 1
        print("-- %d out of scope, %d in scope; by reason:" %
              (len(out_scope), len(in_scope)))
        for r, n in sorted(reasons.items(), key=lambda kv: -kv[1]):
            print("%5d  %s" % (n, r))
        return 0
    if args.dry_run:
        for t in in_scope:
            for ds_dir, model_path, feeds, _ in t.datasets:
                out_dir = os.path.join("$TMPDIR", t.name,
                                       os.path.basename(ds_dir))
                print(" ".join(shlex.quote(c) for c in command(
                    args.amp_run or "amp-run", model_path, feeds, out_dir)))
        print("%d in scope, %d out of scope" % (len(in_scope), len(out_scope)))
        return 0

    if not args.amp_run or not os.access(args.amp_run, os.X_OK):
        print("error: --amp-run %s is not an executable" % args.amp_run)
        return 2
    global DEVICE
    DEVICE = args.device
    if DEVICE != "cpu" and in_scope:
        why = device_unusable(args.amp_run, in_scope[0], args.timeout)
        if why and gpu_required():
            # On the GPU machine a skipped suite would read as a pass.
            print("error: --device %s is required (AMPC_REQUIRE_GPU=1) but "
                  "cannot be opened: %s" % (DEVICE, why))
            return 1
        if why:
            print("skipped: --device %s cannot be used here: %s" % (DEVICE,
                                                                    why))
            return 77
    results = {}
    lock = threading.Lock()
    started = time.time()

    def work(t):
        ok, reason = run_test(t, args.amp_run, args.timeout, args.verbose)
        with lock:
            results[t.id] = (ok, reason)
            if args.verbose:
                print("%s %s%s" % ("PASS" if ok else "FAIL", t.id,
                                   "" if ok else ": " + reason), flush=True)

    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        list(pool.map(work, in_scope))

    passed = failed = xfail = xpass = 0
    for t in in_scope:
        ok, reason = results[t.id]
        if t.id in listed:
            if ok:
                xpass += 1
                passed += 1
                print("UNEXPECTED PASS %s (listed: %s)" % (t.id, listed[t.id]))
            else:
                xfail += 1
                if args.verbose:
                    print("expected failure %s: %s" % (t.id, reason))
        elif ok:
            passed += 1
        else:
            failed += 1
            print("FAIL %s: %s" % (t.id, reason))
    for p in problems:
        print("LIST: " + p)
    print("%d expected failures, %d unexpected passes, %d out of scope, "
          "%d list problems (%.0fs)" % (xfail, xpass, len(out_scope),
                                        len(problems), time.time() - started))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed or xpass or problems else 0


if __name__ == "__main__":
    sys.exit(main())
