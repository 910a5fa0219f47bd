"""The Python module `ampc` against amp-run (issue 26): the same model,
options, data order and seed give the same losses bit for bit; checkpoints
move both ways; state round-trips; every bad input raises ampc.Error with
the message amp-run prints.

ctest runs it with PYTHONPATH=build/python and AMP_RUN set.
"""
import os
import subprocess

import numpy as np
import pytest

import ampc
from amp_run_helpers import (MLP, ROOT, amp_run, flags_of, read_metrics,
                             write_mlp_data)
BATCH, SAMPLES = 64, 64 * 5  # five steps per epoch


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return write_mlp_data(tmp_path_factory.mktemp("data"), SAMPLES, seed=7)


def feeds_of(data_dir, step):
    """Step `step`'s batch, cut from the arrays by the test itself."""
    image = np.load(data_dir / "image.npy")
    label = np.load(data_dir / "label.npy")
    i = (step % (SAMPLES // BATCH)) * BATCH
    return {"image": image[i:i + BATCH], "label": label[i:i + BATCH]}


# O2 f16 runs with dynamic loss scaling; a small growth interval makes the
# scale move within the run, so skips and scales are compared too.
CONFIGS = {
    "f32": {},
    "o2-f16": {"amp": "O2", "init_scale": 2.0 ** 24, "growth_interval": 2},
    "o1-bf16": {"amp": "O1", "amp_dtype": "bf16"},
}


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_losses_equal_amp_run_bit_for_bit(tmp_path, data_dir, config):
    options = CONFIGS[config]
    metrics = tmp_path / "m.csv"
    amp_run(MLP, "--data", data_dir, "--steps", 7, "--metrics", metrics,
            "--progress", "none", *flags_of(options))
    step = ampc.compile_training(MLP, data=str(data_dir), steps=7, **options)
    results = [step.step(feeds_of(data_dir, s)) for s in range(7)]
    # amp-run writes each loss with the digits that read back exactly.
    losses, scales, skipped = read_metrics(metrics)
    assert [r.loss for r in results] == losses
    assert [(r.loss_scale, int(r.skipped)) for r in results] == \
        list(zip(scales, skipped))
    assert [r.step for r in results] == list(range(7))
    # batch() gives amp-run's batches, the same as the test cut them.
    for s in (0, 6):
        for name, array in step.batch(s).items():
            np.testing.assert_array_equal(array, feeds_of(data_dir, s)[name])


def test_o2_f16_overflow_skips_like_amp_run(tmp_path, data_dir):
    """A scale far too large: the first steps overflow and are skipped,
    leaving the state bit-identical, in both."""
    options = {"amp": "O2", "init_scale": 2.0 ** 120, "growth_interval": 3}
    metrics = tmp_path / "m.csv"
    amp_run(MLP, "--data", data_dir, "--steps", 4, "--metrics", metrics,
            "--progress", "none", *flags_of(options))
    step = ampc.compile_training(MLP, data=str(data_dir), steps=4, **options)
    before = step.state_dict()
    first = step.step(feeds_of(data_dir, 0))
    assert first.skipped
    after = step.state_dict()
    for name, value in before.items():
        if not name.startswith("loss_scale"):
            np.testing.assert_array_equal(after[name], value, err_msg=name)
    rest = [step.step(feeds_of(data_dir, s)) for s in range(1, 4)]
    _, scales, skipped = read_metrics(metrics)
    assert [(r.loss_scale, int(r.skipped)) for r in [first] + rest] == \
        list(zip(scales, skipped))


def test_checkpoint_from_python_resumes_under_amp_run(tmp_path, data_dir):
    options = {"amp": "O2", "growth_interval": 2}
    whole = tmp_path / "whole.csv"
    amp_run(MLP, "--data", data_dir, "--steps", 6, "--metrics", whole,
            "--progress", "none", *flags_of(options))
    step = ampc.compile_training(MLP, data=str(data_dir), steps=6, **options)
    for s in range(3):
        step.step(step.batch(s))
    step.save_checkpoint(tmp_path / "ckpt")
    resumed = tmp_path / "resumed.csv"
    amp_run(MLP, "--data", data_dir, "--steps", 6, "--resume",
            tmp_path / "ckpt", "--metrics", resumed, "--progress", "none",
            *flags_of(options))
    # The resumed run's metrics cover the whole run, its first three steps
    # from the Python history.
    assert read_metrics(resumed)[0] == read_metrics(whole)[0]


def test_checkpoint_from_amp_run_resumes_in_python(tmp_path, data_dir):
    options = {"amp": "O1", "amp_dtype": "bf16", "lr_total_steps": 6}
    whole = tmp_path / "whole.csv"
    amp_run(MLP, "--data", data_dir, "--steps", 6, "--metrics", whole,
            "--progress", "none", *flags_of(options))
    part = tmp_path / "part"
    amp_run(MLP, "--data", data_dir, "--steps", 3, "--checkpoint", part,
            "--progress", "none", *flags_of(options))
    step = ampc.compile_training(MLP, data=str(data_dir), **options)
    step.load_checkpoint(part)
    assert step.steps_done == 3
    losses = [step.step(step.batch(s)).loss for s in range(3, 6)]
    assert losses == read_metrics(whole)[0][3:]


def test_checkpoint_under_other_options_is_refused(tmp_path, data_dir):
    step = ampc.compile_training(MLP, data=str(data_dir), steps=6, amp="O2")
    step.step(step.batch(0))
    step.save_checkpoint(tmp_path / "ckpt")
    other = ampc.compile_training(MLP, data=str(data_dir), steps=6, amp="O1")
    with pytest.raises(ampc.Error) as e:
        other.load_checkpoint(tmp_path / "ckpt")
    p = amp_run(MLP, "--data", data_dir, "--steps", 6, "--amp", "O1",
                "--resume", tmp_path / "ckpt", check=False)
    assert p.returncode != 0
    assert "amp-run: error: --resume: " + str(e.value) in p.stderr


def test_state_dict_round_trips(data_dir):
    for options in ({"amp": "O2"}, {"amp": "O2", "amp_dtype": "bf16"}):
        a = ampc.compile_training(MLP, steps=6, **options)
        for s in range(2):
            a.step(feeds_of(data_dir, s))
        state = a.state_dict()
        b = ampc.compile_training(MLP, steps=6, **options)
        b.load_state_dict(state)
        for name, value in b.state_dict().items():
            np.testing.assert_array_equal(value, state[name], err_msg=name)
        assert a.step(feeds_of(data_dir, 2)).loss == \
            b.step(feeds_of(data_dir, 2)).loss
        # All or nothing: a wrong shape changes nothing.
        bad = dict(state)
        bad["fc1.weight"] = np.zeros((3, 3), np.float32)
        before = b.state_dict()
        with pytest.raises(ampc.Error, match="'fc1.weight' is"):
            b.load_state_dict(bad)
        for name, value in b.state_dict().items():
            np.testing.assert_array_equal(value, before[name], err_msg=name)
        with pytest.raises(ampc.Error, match="no value for"):
            b.load_state_dict({k: v for k, v in state.items()
                               if k != "fc1.bias"})


def test_feeds_are_read_in_place_and_from_dlpack(data_dir):
    torch = pytest.importorskip("torch")
    a = ampc.compile_training(MLP, steps=6)
    b = ampc.compile_training(MLP, steps=6)
    feeds = feeds_of(data_dir, 0)
    class OnlyDlpack:
        """A tensor seen through __dlpack__ alone (no __array__)."""

        def __init__(self, t):
            self.t = t

        def __dlpack__(self, stream=None):
            return self.t.__dlpack__()

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    tensors = {k: OnlyDlpack(torch.from_numpy(np.ascontiguousarray(v)))
               for k, v in feeds.items()}
    # A non-contiguous view is copied once, to the same values.
    wide = np.repeat(feeds["image"], 2, axis=3)[..., ::2]
    assert a.step(feeds).loss == b.step(tensors).loss
    assert a.step(feeds).loss == b.step({"image": wide,
                                        "label": feeds["label"]}).loss


def test_inference_matches_amp_run(tmp_path, data_dir):
    feeds = feeds_of(data_dir, 0)
    for name, value in feeds.items():
        np.save(tmp_path / f"{name}.npy", value)
    amp_run(MLP, "--input", f"image={tmp_path / 'image.npy'}", "--input",
            f"label={tmp_path / 'label.npy'}", "--save-outputs",
            tmp_path / "out")
    inference = ampc.compile_inference(MLP)
    outputs = inference.run(feeds)
    for name, value in outputs.items():
        np.testing.assert_array_equal(value, np.load(tmp_path / "out" /
                                                     f"{name}.npy"))


def test_trained_weights_reach_inference_and_onnx(tmp_path, data_dir):
    train = ampc.compile_training(MLP, steps=6, amp="O2")
    for s in range(3):
        train.step(feeds_of(data_dir, s))
    train.save_onnx(tmp_path / "trained.onnx")
    from_file = ampc.compile_inference(tmp_path / "trained.onnx")
    from_state = ampc.compile_inference(MLP)
    from_state.load_weights(train)
    feeds = feeds_of(data_dir, 3)
    a, b = from_file.run(feeds), from_state.run(feeds)
    for name in a:
        np.testing.assert_array_equal(a[name], b[name])


def test_a_checkpoints_weights_as_an_onnx_model(tmp_path, data_dir):
    """amp-run --from-checkpoint's counterpart: the model written from a
    checkpoint is the one save_onnx writes of the same state."""
    train = ampc.compile_training(MLP, steps=6, amp="O2")
    for s in range(3):
        train.step(feeds_of(data_dir, s))
    train.save_onnx(tmp_path / "trained.onnx")
    train.save_checkpoint(tmp_path / "ckpt")
    report = ampc.save_onnx_from_checkpoint(MLP, tmp_path / "ckpt",
                                            tmp_path / "from-ckpt.onnx")
    assert report["step"] == 3
    assert sorted(report["written"]) == [f"fc{i}.{p}" for i in (1, 2, 3)
                                         for p in ("bias", "weight")]
    assert report["kept"] == []
    assert ((tmp_path / "from-ckpt.onnx").read_bytes() ==
            (tmp_path / "trained.onnx").read_bytes())
    with pytest.raises(ampc.Error, match="is the checkpoint file"):
        ampc.save_onnx_from_checkpoint(MLP, tmp_path / "ckpt",
                                       tmp_path / "ckpt" / "checkpoint.ampc")
    with pytest.raises(ampc.Error, match="cannot open"):
        ampc.save_onnx_from_checkpoint(MLP, tmp_path / "none",
                                       tmp_path / "x.onnx")
    assert not (tmp_path / "x.onnx").exists()


def test_report_and_memory(data_dir):
    step = ampc.compile_training(MLP, steps=6, amp="O2")
    report = step.amp_report()
    assert report["level"] == "O2"
    memory = step.memory()
    assert set(memory) == {"step", "f32"}
    for run, key in (("step", "amp"), ("f32", "f32")):
        for name in ("arena_bytes", "saved_for_backward_bytes",
                     "gradient_bytes"):
            assert memory[run][name] == report["memory"][key][name]
    assert memory["step"]["saved_for_backward_bytes"] < \
        memory["f32"]["saved_for_backward_bytes"]
    assert ampc.compile_training(MLP, steps=6).amp_report() is None


# Bad inputs: the message is amp-run's, without its "amp-run: error: ".
AMP_RUN_ERRORS = [
    ({"accumulate": 0}, ["--accumulate", "0"]),
    ({"accumulate": 4}, ["--accumulate", "4"]),  # 6 steps: 1.5 updates
    ({"amp_dtype": "bf16"}, ["--amp-dtype", "bf16"]),
    ({"amp": "O5"}, ["--amp", "O5"]),
    ({"lr": "fast"}, ["--lr", "fast"]),
    ({"device": "cuda"}, ["--device", "cuda"]),
    ({"threads": 100000}, ["--threads", "100000"]),
]


@pytest.mark.parametrize("options,flags", AMP_RUN_ERRORS,
                         ids=["=".join(map(str, f)) for _, f in AMP_RUN_ERRORS])
def test_bad_options_raise_amp_runs_message(options, flags):
    p = amp_run(MLP, "--data", "synthetic", "--steps", 6, *flags,
                check=False)
    if p.returncode == 0 and options.get("device") == "cuda":
        pytest.skip("a GPU is usable here")
    assert p.returncode != 0
    with pytest.raises(ampc.Error) as e:
        ampc.compile_training(MLP, steps=6, **options)
    assert isinstance(e.value, ValueError)
    lines = [line for line in p.stderr.splitlines() if line]
    assert lines[0] in ("amp-run: error: " + str(e.value),
                        "amp-run: " + str(e.value))


def test_bad_models_and_feeds(tmp_path, data_dir):
    missing = tmp_path / "missing.onnx"
    p = amp_run(missing, "--data", "synthetic", check=False)
    with pytest.raises(ampc.Error) as e:
        ampc.compile_training(missing)
    assert p.stderr.strip() == "amp-run: error: " + str(e.value)
    (tmp_path / "junk.onnx").write_bytes(b"not a model")
    p = amp_run(tmp_path / "junk.onnx", "--data", "synthetic", check=False)
    with pytest.raises(ampc.Error) as e:
        ampc.compile_training(tmp_path / "junk.onnx")
    assert str(e.value) in p.stderr
    with pytest.raises(ampc.Error, match="no option named 'bogus' .the"):
        ampc.compile_training(MLP, bogus=1)
    with pytest.raises(ampc.Error, match="no option named 'lr-shedule' "
                       "\\(did you mean --lr-schedule\\?\\)"):
        ampc.compile_training(MLP, lr_shedule="step")
    with pytest.raises(ampc.Error, match="^--lr is for --mode train$"):
        ampc.compile_inference(MLP, lr=0.1)
    with pytest.raises(ampc.Error, match="^--seed is for --mode train$"):
        ampc.compile_inference(MLP, seed=3)
    with pytest.raises(ampc.Error, match="--metrics steers amp-run's own"):
        ampc.compile_training(MLP, metrics="m.csv")
    # (--plot is in the run-flag table amp-exec shares, and drawn by the
    # tools' loop alone.)
    with pytest.raises(ampc.Error, match="--plot steers amp-run's own"):
        ampc.compile_training(MLP, steps=6, plot="p.svg")
    # (amp-run's loop stops a run that overflows too long; a Python loop
    # sees each skip in StepResult.)
    with pytest.raises(ampc.Error,
                       match="--max-overflow-steps steers amp-run's own"):
        ampc.compile_training(MLP, steps=6, max_overflow_steps=3)
    with pytest.raises(ampc.Error, match="cosine .from the model's recipe. "
                       "needs its length"):
        ampc.compile_training(MLP)
    # Option values are checked before anything compiles, as in amp-run.
    with pytest.raises(ampc.Error,
                       match="^--lr must be finite and >= 0, got -1$"):
        ampc.compile_training(MLP, steps=6, lr=-1)

    step = ampc.compile_training(MLP, steps=6)
    feeds = feeds_of(data_dir, 0)
    cases = [
        ({"image": feeds["image"]}, "no value for graph input(s) 'label'"),
        ({**feeds, "image": feeds["image"][:3]},
         "input 'image' holds tensor<3x1x28x28xf32>, but the model's input "
         "'image' is tensor<64x1x28x28xf32>"),
        ({**feeds, "image": feeds["image"].astype(np.float64)},
         "input 'image' holds tensor<64x1x28x28xf64>, but the model's input "
         "'image' is tensor<64x1x28x28xf32>"),
        ({**feeds, "label": feeds["label"] + 10},
         "input 'label': element 0 is "),
        ({**feeds, "extra": feeds["label"]}, "no input 'extra'"),
        ({**feeds, "image": feeds["image"].astype(np.complex64)},
         "input 'image': NumPy dtype complex64 is none that ampc takes"),
    ]
    nan = feeds["image"].copy()
    nan[2, 0, 3, 4] = np.nan
    cases.append(({**feeds, "image": nan},
                  "input 'image': sample 2, element [0, 3, 4] is NaN"))
    for bad, message in cases:
        with pytest.raises(ampc.Error) as e:
            step.step(bad)
        assert message in str(e.value)
    assert step.steps_done == 0  # nothing ran
    with pytest.raises(ampc.Error, match="no data to take batches from"):
        step.batch(0)


def test_cuda_fails_cleanly_without_a_gpu():
    try:
        ampc.compile_training(MLP, steps=6, device="cuda")
    except ampc.Error as e:
        assert str(e).startswith("--device cuda: ")
    else:
        pytest.skip("a GPU is usable here")


def test_model_as_path_bytes_or_proto(data_dir):
    onnx = pytest.importorskip("onnx")
    feeds = feeds_of(data_dir, 0)
    losses = []
    for model in (MLP, open(MLP, "rb").read(), onnx.load(MLP)):
        step = ampc.compile_training(model, steps=6, amp="O2")
        losses.append(step.step(feeds).loss)
    assert losses[0] == losses[1] == losses[2]
    with pytest.raises(ampc.Error, match="a int is not a model"):
        ampc.compile_training(3)


def test_torch_export_trains_with_buffers_frozen(tmp_path):
    torch = pytest.importorskip("torch")
    import ampc.torch

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(6, 4)
            self.norm = torch.nn.BatchNorm1d(4)
            self.register_buffer("offset", torch.full((4,), 0.5))

        def forward(self, x):
            return self.norm(self.fc(x)) + self.offset

    torch.manual_seed(0)
    net = Net()
    x = torch.randn(8, 6)
    labels = torch.randint(0, 4, (8,))
    path = tmp_path / "net.onnx"
    frozen = ampc.torch.export(net, torch.nn.functional.cross_entropy,
                               (x, labels), str(path))
    assert "offset" in frozen and "norm.running_mean" in frozen
    step = ampc.compile_training(path, lr=0.1)
    first = step.step({"x": x.numpy(), "labels": labels.numpy()})
    # PyTorch's loss of the same module in training mode, in f32.
    net.train()
    expected = torch.nn.functional.cross_entropy(net(x), labels).item()
    assert abs(first.loss - expected) <= 1e-6 * abs(expected)
    state = step.state_dict()
    np.testing.assert_array_equal(state["offset"], np.full(4, 0.5, np.float32))
    # Trained parameters moved; nothing keeps optimizer state for a buffer.
    assert not np.array_equal(state["fc.weight"],
                              net.fc.weight.detach().numpy())
    assert not any(k.startswith("offset.") for k in state)


def test_example_trains_fashion_mnist():
    """examples/train_python.py, cut to 40 steps an epoch: both parts
    print an accuracy line well above chance."""
    if not os.path.isdir("/usr/share/datasets/fashion-mnist"):
        pytest.skip("dataset-fashion-mnist is not installed")
    p = subprocess.run(
        ["/usr/bin/python3", os.path.join(ROOT, "examples",
                                          "train_python.py"),
         "--epochs", "1", "--steps", "40"],
        capture_output=True, text=True, env={**os.environ})
    assert p.returncode == 0, p.stdout + p.stderr
    lines = [line for line in p.stdout.splitlines() if "test accuracy" in line]
    assert [line.split(":")[0] for line in lines] == ["AMP O2 f16",
                                                       "AMP O2 bf16"]
    for line in lines:
        accuracy = float(line.split("test accuracy ")[1].split("%")[0])
        assert accuracy > 50, line


def test_check_numerics_names_the_kernel(data_dir):
    """A NaN made inside the step (log of a negative) stops the step with
    the probe's finding, as amp-run --check-numerics does."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
         helper.make_node("Log", ["h"], ["l"], name="log"),
         helper.make_node("ReduceMean", ["l"], ["loss"], keepdims=0,
                          name="mean")],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        [helper.make_tensor("w", TensorProto.FLOAT, [3, 2], [1.0] * 6)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("",
                                                                        13)])
    step = ampc.compile_training(model, check_numerics=True)
    assert np.isfinite(step.step({"x": np.ones((2, 3), np.float32)}).loss)
    with pytest.raises(ampc.Error, match="'log'"):
        step.step({"x": -np.ones((2, 3), np.float32)})


def test_data_parallel_needs_the_ranks_of_a_launch():
    """test_data_parallel.py runs the ranks."""
    with pytest.raises(ampc.Error, match="^--data-parallel 2 needs that many "
                       "ranks: start the program under mpirun -n 2, one "
                       "process per rank$"):
        ampc.compile_training(MLP, steps=6, data_parallel=2)
    with pytest.raises(ampc.Error, match="^--nproc steers amp-run's own loop"):
        ampc.compile_training(MLP, steps=6, nproc=2)
