"""ampc from Python: compile an ONNX model for mixed-precision training or
inference and step it with NumPy arrays.

    import ampc
    step = ampc.compile_training("mlp.onnx", amp="O2", optimizer="momentum",
                                 lr=0.02)
    r = step.step({"x": x, "labels": labels})
    print(r.loss, r.skipped, r.loss_scale)

The work is all in ampc's C++ library, the one amp-run runs (the native
module `ampc._ampc`, over tools/amp-run/Api.h): options are amp-run's flags
with underscores for dashes (`amp_dtype="bf16"` is `--amp-dtype bf16`), with
amp-run's defaults, checks and messages; checkpoints are amp-run's, so a run
moves between this module and `amp-run --resume`. docs/python.md has the
whole API.

Under `mpirun -n N python3 train.py` each process is one of N data-parallel
ranks (amp-run --nproc N's): see compile_training.
"""
import atexit
import json
import os
import sys

import numpy as np

from ._ampc import (Error, _abort_ranks, _compile_inference, _compile_training,
                    _launched_as_ranks, _leave_ranks, _rank_prefix,
                    _save_onnx_from_checkpoint)

__all__ = ["Error", "StepResult", "TrainingStep", "InferenceStep",
           "compile_training", "compile_inference",
           "save_onnx_from_checkpoint"]


def _error(text):
    """ampc.Error for `text`, saying whose it is under several ranks."""
    return Error(_rank_prefix() + text)


def _option_text(name, value):
    """An option's value as amp-run's flag takes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)) and all(
            isinstance(v, str) for v in value):
        return ",".join(value)
    raise _error(f"option '{name}': a {type(value).__name__} is not an "
                 "option value (give a str, int, float, bool, or a list of "
                 "str)")


def _request(model, options):
    """(model, options, shapes, binds) for the native compile calls."""
    if isinstance(model, os.PathLike):
        model = os.fspath(model)
    elif hasattr(model, "SerializeToString"):  # an onnx.ModelProto
        model = model.SerializeToString()
    elif isinstance(model, (bytearray, memoryview)):
        model = bytes(model)
    if not isinstance(model, (str, bytes)):
        raise _error(f"model: a {type(model).__name__} is not a model (give a "
                     "path, the serialized bytes or an onnx.ModelProto)")
    options = dict(options)
    shapes = {k: [int(d) for d in v]
              for k, v in (options.pop("shape", None) or {}).items()}
    binds = {k: _array(v, f"bind '{k}'")
             for k, v in (options.pop("bind", None) or {}).items()}
    texts = [(k.replace("_", "-"), _option_text(k, v))
             for k, v in options.items()]
    return model, texts, shapes, binds


def _array(value, what):
    """`value` as a C-contiguous, native-endian NumPy array: read in place
    where it already is one (a NumPy array, any buffer, a CPU tensor's
    __dlpack__), copied once where it is not."""
    if isinstance(value, np.ndarray):
        array = value
    elif hasattr(value, "__dlpack__") and not hasattr(value, "__array__"):
        array = np.from_dlpack(value)
    else:
        try:
            array = np.asarray(value)
        except Exception as e:  # noqa: BLE001 - any failure is the user's
            raise _error(f"{what}: not an array ({e})") from None
    if array.dtype.byteorder == ">":
        array = array.astype(array.dtype.newbyteorder("="))
    # Not np.ascontiguousarray: it makes a 0-d array 1-d.
    return array if array.flags.c_contiguous else array.copy(order="C")


def _json_or_none(text):
    return json.loads(text) if text else None


def _feeds(feeds):
    if not isinstance(feeds, dict):
        raise _error(f"feeds: a {type(feeds).__name__} is not a dict of input "
                     "name to array")
    return {str(k): _array(v, f"input '{k}'") for k, v in feeds.items()}


class StepResult:
    """What one training step did: its index `step`, the `loss`, whether the
    update was `skipped` (an overflow under loss scaling), the `loss_scale`
    it ran with, and the step's other `outputs` (name -> array)."""

    __slots__ = ("step", "loss", "skipped", "loss_scale", "outputs")

    def __init__(self, step, loss, skipped, loss_scale, outputs):
        self.step = step
        self.loss = loss
        self.skipped = skipped
        self.loss_scale = loss_scale
        self.outputs = outputs

    def __repr__(self):
        return (f"StepResult(step={self.step}, loss={self.loss!r}, "
                f"skipped={self.skipped}, loss_scale={self.loss_scale!r})")


class TrainingStep:
    """A model compiled into a training step (compile_training)."""

    def __init__(self, native):
        self._t = native

    @property
    def inputs(self):
        """[(name, dtype, shape)] of the graph inputs each step takes."""
        return self._t.inputs()

    @property
    def steps_done(self):
        return self._t.steps_done

    @property
    def loss_scale(self):
        """The scale the next step runs with (1 without loss scaling)."""
        return self._t.loss_scale

    @property
    def precision(self):
        """'AMP O2 f16', 'f32', ...: what the step computes in."""
        return self._t.run_label

    @property
    def device(self):
        return self._t.device

    @property
    def steps_per_epoch(self):
        """Steps that take an epoch of the `data` option's batches (0: no
        data); under N ranks each step takes N batches."""
        return self._t.steps_per_epoch

    @property
    def steps(self):
        """The run's steps as compiled: the `steps` option, or `epochs` of
        the data (the length a cosine schedule takes)."""
        return self._t.steps

    @property
    def rank(self):
        """This process's rank under an MPI launch (0 otherwise)."""
        return self._t.rank

    @property
    def world_size(self):
        """The ranks training together (1: this process alone)."""
        return self._t.world_size

    def step(self, feeds):
        """Runs one step on `feeds` (input name -> array); returns a
        StepResult. Under N ranks each feeds its own batch, and the loss is
        the mean of the ranks'."""
        index, loss, skipped, scale = self._t.step(_feeds(feeds))
        outputs = {k: v for k, v in self._t.outputs().items()}
        return StepResult(index, loss, skipped, scale, outputs)

    def batch(self, step):
        """The feeds of step `step` of the `data` option, in amp-run's
        order (the same seed and shuffle give the same batches); rank r of
        N takes batch step * N + r."""
        return self._t.batch(int(step))

    def state_dict(self):
        """Every parameter and state tensor: weights, working copies,
        optimizer and loss-scale state, counters (bf16 as float32)."""
        return self._t.state()

    def load_state_dict(self, state):
        """Restores every tensor of state_dict(), all or nothing."""
        self._t.load_state({str(k): _array(v, f"state '{k}'")
                            for k, v in dict(state).items()})

    def wait_for_ranks(self, timeout=3600):
        """Returns when every rank has called it (or raises after `timeout`
        seconds): after work one rank does alone between steps, such as rank
        0 evaluating, which could take longer than the next step's exchange
        waits for it (`collective_timeout`). Nothing in one process."""
        self._t.wait_for_ranks(float(timeout))

    def save_checkpoint(self, path):
        """Writes amp-run's checkpoint (PATH/checkpoint.ampc, atomically);
        under N ranks, every rank calls it and rank 0 writes."""
        self._t.save_checkpoint(os.fspath(path))

    def load_checkpoint(self, path):
        """Continues from an amp-run or Python checkpoint written under the
        same options."""
        self._t.load_checkpoint(os.fspath(path))

    def save_onnx(self, path):
        """Writes the model with the trained weights."""
        self._t.save_onnx(os.fspath(path))

    def amp_report(self):
        """The AMP decisions and memory figures (amp-run's --amp-report)
        as a dict; None without AMP."""
        return _json_or_none(self._t.amp_report())

    def memory(self):
        """The planned bytes of this step ('step') and, with AMP, of the
        f32 step ('f32'), as amp-run's summary prints them."""
        return json.loads(self._t.memory_json())


class InferenceStep:
    """A model compiled for inference (compile_inference)."""

    def __init__(self, native):
        self._i = native

    @property
    def inputs(self):
        return self._i.inputs()

    @property
    def device(self):
        return self._i.device

    def run(self, feeds):
        """Runs the model on `feeds`; returns output name -> array."""
        return self._i.run(_feeds(feeds))

    def weights(self):
        return self._i.weights()

    def load_weights(self, weights):
        """Sets the weights: from a TrainingStep of the same model (every
        parameter, as amp-run evaluates its test split), or those a dict
        names (the others keep their values); converted to the compiled
        precision."""
        if isinstance(weights, TrainingStep):
            self._i.load_weights_from(weights._t)
            return
        self._i.load_weights({str(k): _array(v, f"weight '{k}'")
                              for k, v in dict(weights).items()})

    def amp_report(self):
        return _json_or_none(self._i.amp_report())


_rank_hooks_installed = False


def _install_rank_hooks():
    """Under an MPI launch: the ranks are left at the program's exit
    (MPI_Finalize, which every rank must reach), and an exception that
    nothing catches ends every rank at once after its traceback, where the
    others would wait for this one until their collective timeout."""
    global _rank_hooks_installed
    if _rank_hooks_installed:
        return
    _rank_hooks_installed = True
    atexit.register(_leave_ranks)
    previous = sys.excepthook

    def abort_ranks_after(kind, value, traceback):
        previous(kind, value, traceback)
        sys.stdout.flush()
        sys.stderr.flush()
        _abort_ranks(1)

    sys.excepthook = abort_ranks_after


def compile_training(model, **options):
    """Compiles `model` (a path, bytes or onnx.ModelProto) into a training
    step. Options are amp-run's flags: amp, amp_dtype, loss_scale,
    optimizer, lr, momentum, accumulate, device, threads, freeze, ...;
    `shape={name: dims}` and `bind={name: array}` as --shape and --bind.

    Started by `mpirun -n N`, this process is one of N ranks that train
    data-parallel (as amp-run --nproc N): every rank compiles the same
    model with the same options, feeds its own batches (batch(s) gives
    rank r batch s * N + r), and calls step, load_state_dict and the
    checkpoint calls at the same points; rank 0 writes the checkpoints."""
    if _launched_as_ranks():
        _install_rank_hooks()
    return TrainingStep(_compile_training(*_request(model, options)))


def save_onnx_from_checkpoint(model, checkpoint, path):
    """Writes the ONNX model at `model` (a path) to `path` with the weights
    of the checkpoint in the directory `checkpoint`, written by amp-exec,
    amp-run or this module (amp-run --from-checkpoint). Returns {'step':
    the checkpoint's steps done, 'written': the initializers replaced,
    'kept': the floating-point initializers the checkpoint does not hold}."""
    return _save_onnx_from_checkpoint(os.fspath(model), os.fspath(checkpoint),
                                      os.fspath(path))


def compile_inference(model, **options):
    """Compiles `model` for inference; options as compile_training's, less
    the training ones."""
    return InferenceStep(_compile_inference(*_request(model, options)))
