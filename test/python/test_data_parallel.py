"""The Python module's data parallelism (issue 25): `mpirun -n 2 python3
program.py`, each process one rank. The ranks are amp-run --nproc 2's, bit
for bit, and one process accumulating 2 batches' to 1e-6; checkpoints move
between them and amp-run's ranks; ranks that differ, a checkpoint one rank
cannot load and an exception on one rank end as docs/python.md says.

Each run starts data_parallel_worker.py under mpirun (Debian's
openmpi-bin, which scripts/setup.sh installs).
"""
import functools
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

import ampc
import amp_run_helpers
from amp_run_helpers import MLP, flags_of, read_metrics, write_mlp_data

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "data_parallel_worker.py")
SAMPLES = 64 * 8  # batches of 64: four steps of two ranks per epoch
# As the lit tests' launches: root allowed (CI's containers), shared memory
# between the ranks of this machine.
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
           OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_btl="self,vader")


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return write_mlp_data(tmp_path_factory.mktemp("data"), SAMPLES, seed=11)


def ranks(tmp_path, spec, n=2, expect_ok=True):
    """Runs the worker as `n` ranks; returns (exit code, output, {rank:
    record})."""
    out = tmp_path / f"ranks-{time.monotonic_ns()}"
    out.mkdir()
    spec_path = out / "spec.json"
    spec_path.write_text(json.dumps(spec))
    p = subprocess.run(["mpirun", "--oversubscribe", "-n", str(n),
                        sys.executable, WORKER, str(spec_path), str(out)],
                       capture_output=True, text=True, env=ENV, timeout=300)
    records = {}
    for r in range(n):
        path = out / f"rank{r}.json"
        if path.exists():
            records[r] = json.loads(path.read_text())
    said = p.stdout + p.stderr
    if expect_ok:
        assert p.returncode == 0, said
        assert all(records.get(r, {}).get("done") for r in range(n)), said
    return p.returncode, said, records


# amp-run's ranks under the launch environment above.
amp_run = functools.partial(amp_run_helpers.amp_run, env=ENV)


# f32, and O2 f16 with a scale far too large: its first updates overflow on
# the ranks' summed gradients and are skipped, then the scale grows again.
CONFIGS = {
    "f32": {},
    "o2-f16": {"amp": "O2", "init_scale": 1e12, "scale_backoff": 1e-4,
               "growth_interval": 2},
}


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_ranks_are_amp_runs_ranks_bit_for_bit(tmp_path, data_dir, config):
    options = dict(CONFIGS[config], data=str(data_dir), steps=6)
    m = tmp_path / "m.csv"
    amp_run(MLP, "--nproc", 2, "--metrics", m, "--progress", "none",
            *flags_of(options))
    _, _, records = ranks(tmp_path, {"model": MLP, "options": options,
                                     "actions": [{"steps": 6}]})
    losses, scales, skipped = read_metrics(m)
    for r in (0, 1):
        rec = records[r]
        assert (rec["rank"], rec["world_size"]) == (r, 2)
        assert (rec["steps_per_epoch"], rec["steps"]) == (4, 6)
        # Each rank reports the mean of the ranks' losses, amp-run's.
        assert rec["losses"] == losses
        assert (rec["scales"], rec["skipped"]) == (scales, skipped)
    if config == "o2-f16":
        assert 0 < sum(skipped) < 6
    # Every rank holds the same state after every step.
    assert records[0]["states"] == records[1]["states"]


def test_ranks_match_one_process_accumulating(tmp_path, data_dir):
    """Rank r takes batches r, r+2, ...: step s of the ranks is micro-steps
    2s and 2s+1 of one process with accumulate=2."""
    options = {"data": str(data_dir), "steps": 8}
    one = ampc.compile_training(MLP, accumulate=2, **options)
    micro = [one.step(one.batch(s)).loss for s in range(8)]
    _, _, records = ranks(tmp_path, {
        "model": MLP, "options": dict(options, steps=4),
        "actions": [{"steps": 4}]})
    # The schedule counts updates: 8 micro-steps of one process are the 4
    # steps of the ranks.
    want = [(micro[2 * s] + micro[2 * s + 1]) / 2 for s in range(4)]
    np.testing.assert_allclose(records[0]["losses"], want, rtol=1e-6)


def test_checkpoints_move_between_python_and_amp_run_ranks(tmp_path,
                                                           data_dir):
    # The cosine schedule's length stays the whole run's in the part runs.
    options = {"data": str(data_dir), "steps": 6, "lr_total_steps": 6,
               "amp": "O1", "amp_dtype": "bf16"}
    whole = tmp_path / "whole.csv"
    amp_run(MLP, "--nproc", 2, "--metrics", whole, "--progress", "none",
            *flags_of(options))
    losses = read_metrics(whole)[0]
    # Python's ranks write, amp-run's resume.
    ckpt = tmp_path / "from-python"
    ranks(tmp_path, {"model": MLP, "options": options,
                     "actions": [{"steps": 3}, {"save": str(ckpt)}]})
    resumed = tmp_path / "resumed.csv"
    amp_run(MLP, "--nproc", 2, "--resume", ckpt, "--metrics", resumed,
            "--progress", "none", *flags_of(options))
    assert read_metrics(resumed)[0] == losses
    # amp-run's ranks write, Python's resume.
    part = tmp_path / "from-amp-run"
    amp_run(MLP, "--nproc", 2, "--checkpoint", part, "--progress", "none",
            *flags_of(dict(options, steps=3)))
    _, _, records = ranks(tmp_path, {
        "model": MLP, "options": options,
        "actions": [{"load": str(part)}, {"steps": 3}]})
    assert records[1]["losses"] == losses[3:]


def test_a_checkpoint_between_updates_is_refused(tmp_path, data_dir):
    _, _, records = ranks(tmp_path, {
        "model": MLP,
        "options": {"data": str(data_dir), "steps": 4, "accumulate": 2},
        "actions": [{"steps": 1},
                    {"save": str(tmp_path / "ckpt"), "catch": True},
                    {"steps": 1}, {"save": str(tmp_path / "ckpt")}]})
    for r in (0, 1):
        assert records[r]["errors"] == [
            f"rank {r}: a checkpoint after step 1, between two updates (the "
            "step accumulates 2 steps per update): the ranks write one at "
            "an update, where their gradients are summed"]
    assert (tmp_path / "ckpt" / "checkpoint.ampc").exists()


def test_a_checkpoint_one_rank_cannot_load_changes_nothing(tmp_path,
                                                          data_dir):
    options = {"data": str(data_dir), "steps": 6}
    ckpt, missing = tmp_path / "ckpt", tmp_path / "missing"
    _, _, records = ranks(tmp_path, {
        "model": MLP, "options": options,
        "actions": [{"steps": 1}, {"save": str(ckpt)}, {"steps": 1},
                    {"load": {"0": str(ckpt), "1": str(missing)},
                     "catch": True},
                    {"steps": 1}]})
    assert records[1]["errors"] == [
        f"rank 1: {missing}/checkpoint.ampc: cannot open: No such file or "
        "directory"]
    assert records[0]["errors"] == [
        "rank 0: rank 1 could not load the checkpoint (its own error says "
        "why)"]
    for r in (0, 1):
        # The load changed no rank: they went on from step 2 together.
        assert records[r]["states"][2] == records[r]["states"][3]
        assert records[r]["steps_done"] == 3
    # (Every rank's loss is the ranks' mean: their states say more.)
    assert records[0]["states"] == records[1]["states"]


def test_a_rank_that_differs_is_refused_on_every_rank(tmp_path, data_dir):
    _, _, records = ranks(tmp_path, {
        "model": MLP, "options": {"data": str(data_dir), "steps": 6},
        "rank_options": {"1": {"lr": 0.5}}, "compile_catch": True},
        expect_ok=False)
    (error,) = records[1]["errors"]
    assert error.startswith("rank 1: this rank would not train the run rank "
                            "0 trains (--lr 0.5 here, 0.02 on rank 0; ")
    # (A Python program's ranks run one program, not one command line.)
    assert error.endswith("Start every rank with the same program and "
                          "options, and give each machine the same model, "
                          "data and checkpoint")
    assert records[0]["errors"] == [
        "rank 0: rank 1 could not train the run rank 0 trains (its own error "
        "says why)"]


def test_a_model_one_rank_cannot_read_fails_every_rank(tmp_path, data_dir):
    missing = tmp_path / "missing.onnx"
    _, _, records = ranks(tmp_path, {
        "model": MLP, "options": {"data": str(data_dir), "steps": 6},
        "rank_model": {"1": str(missing)}, "compile_catch": True},
        expect_ok=False)
    assert records[1]["errors"] == [
        f"rank 1: cannot read '{missing}': No such file or directory"]
    assert records[0]["errors"] == [
        "rank 0: rank 1 could not compile the training step (its own error "
        "says why)"]


def test_a_step_that_fails_on_one_rank_puts_it_out_of_step(tmp_path,
                                                           data_dir):
    """Rank 1's feed is refused before its exchanges, which rank 0 is in:
    rank 1 starts no other collective (one would be paired with rank 0's
    all-reduce), and rank 0's step fails after the timeout."""
    _, _, records = ranks(tmp_path, {
        "model": MLP,
        "options": {"data": str(data_dir), "steps": 6,
                    "collective_timeout": 2},
        "actions": [{"steps": 1}, {"bad_feed_on": 1, "catch": True},
                    {"steps": 1, "catch": True},
                    {"save": str(tmp_path / "ckpt"), "catch": True},
                    {"compile": {}, "catch": True}]}, expect_ok=False)
    bad, *later = records[1]["errors"]
    assert bad.startswith("rank 1: input 'image' holds tensor<3x1x28x28xf32>")
    assert len(later) == 3
    for error in later:
        assert error == ("rank 1: this rank is out of step with the others "
                         f"since its step 1 ({bad}) failed here, and they "
                         "wait in that step's exchanges: end the program "
                         "(an exception that nothing catches ends every "
                         "rank at once)")
    timeout, *_ = records[0]["errors"]
    assert timeout.startswith("rank 0: ") and \
        "waited 2 s for rank 1" in timeout, timeout
    assert records[1]["steps_done"] == 1


def test_a_state_one_rank_differs_in_is_put_back(tmp_path, data_dir):
    _, _, records = ranks(tmp_path, {
        "model": MLP, "options": {"data": str(data_dir), "steps": 6},
        "actions": [{"steps": 1}, {"keep_state": True}, {"steps": 1},
                    {"load_state": True, "perturb_on": 1, "catch": True},
                    {"load_state": True}, {"steps": 1}]})
    (error,) = records[1]["errors"]
    assert error.startswith("rank 1: this rank would not train the run rank "
                            "0 trains (the CRC-32 of the state it starts "
                            "from ")
    assert records[0]["errors"] == [
        "rank 0: rank 1 could not go on from the state rank 0 loaded (its "
        "own error says why)"]
    for r in (0, 1):
        states = records[r]["states"]
        assert states[3] == states[2]  # the refused load: put back
        assert states[4] == states[1]  # the kept state, loaded
    assert records[0]["states"] == records[1]["states"]


def test_rank_zeros_failed_checkpoint_fails_every_rank(tmp_path, data_dir):
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    _, _, records = ranks(tmp_path, {
        "model": MLP, "options": {"data": str(data_dir), "steps": 6},
        "actions": [{"steps": 1}, {"save": str(not_a_dir), "catch": True},
                    {"steps": 1}]})
    assert records[0]["errors"][0].startswith(f"rank 0: {not_a_dir}")
    assert records[1]["errors"] == [
        f"rank 1: rank 0 could not write the checkpoint in {not_a_dir} (its "
        "own error says why)"]


def test_work_of_one_rank_longer_than_the_timeout(tmp_path, data_dir):
    """Rank 0 works 4 s alone; the ranks' exchanges wait 1 s, and
    wait_for_ranks as long as it is told."""
    options = {"data": str(data_dir), "steps": 6, "collective_timeout": 1}
    _, _, records = ranks(tmp_path, {
        "model": MLP, "options": options,
        "actions": [{"steps": 1}, {"sleep_on": 0, "seconds": 4},
                    {"wait": 60}, {"steps": 1}]})
    assert records[0]["states"] == records[1]["states"]
    rc, said, records = ranks(tmp_path, {
        "model": MLP, "options": options,
        "actions": [{"steps": 1}, {"sleep_on": 0, "seconds": 4},
                    {"steps": 1}]}, expect_ok=False)
    assert rc != 0
    assert "rank 1: " in said and "the gradient all-reduce waited 1 s" in said, \
        said


def test_an_exception_on_one_rank_ends_every_rank_at_once(tmp_path,
                                                          data_dir):
    """Rank 0 would otherwise wait in its next step's exchange for the
    collective timeout (300 s here)."""
    start = time.monotonic()
    rc, said, records = ranks(tmp_path, {
        "model": MLP,
        "options": {"data": str(data_dir), "steps": 6,
                    "collective_timeout": 300},
        "actions": [{"steps": 1}, {"raise_on": 1}, {"steps": 5}]},
        expect_ok=False)
    assert rc != 0
    assert "RuntimeError: a fault of rank 1's own" in said
    assert "MPI_ABORT was invoked on rank 1" in said or \
        "ORTE_ERROR_LOG" in said, said
    assert "waited" not in said, said
    assert time.monotonic() - start < 150, said
    assert not records[0]["done"]


def test_ranks_refuse_another_world_size(tmp_path, data_dir):
    _, _, records = ranks(tmp_path, {
        "model": MLP,
        "options": {"data": str(data_dir), "steps": 6, "data_parallel": 3},
        "compile_catch": True}, expect_ok=False)
    for r in (0, 1):
        assert records[r]["errors"] == [
            f"rank {r}: --data-parallel 3, but mpirun started 2 ranks"]


def test_the_ranks_keep_the_timeout_they_joined_with(tmp_path, data_dir):
    """MPI starts once per process: a later compile joins the same ranks."""
    _, _, records = ranks(tmp_path, {
        "model": MLP, "options": {"data": str(data_dir), "steps": 6},
        "actions": [{"compile": {"collective_timeout": 60}},
                    {"compile": {"collective_timeout": 30}, "catch": True},
                    {"steps": 1}]})
    for r in (0, 1):
        assert records[r]["errors"] == [
            f"rank {r}: --collective-timeout 30: this process's ranks joined "
            "with 60 s at its first training compile, and keep that timeout"]


@pytest.fixture(autouse=True, scope="module")
def _mpirun():
    if shutil.which("mpirun") is None:
        pytest.fail("no mpirun: Debian's openmpi-bin provides it "
                    "(scripts/setup.sh installs it)")
