"""One rank of a data-parallel Python program, for test_data_parallel.py:

    mpirun -n N python3 data_parallel_worker.py SPEC OUT

SPEC is a JSON file: the model, the options every rank compiles with,
`rank_options` that one rank adds ({"1": {"lr": 0.5}}), `rank_model` (a
rank's own model path: {"1": PATH}), `compile_catch`
(record a compile's error and end without an exception), and `actions` run
in order:
  {"steps": K}                 K steps, each on step.batch(steps_done)
  {"save": DIR}                save_checkpoint(DIR)
  {"load": DIR} or {"load": {"0": DIR0, "1": DIR1}}   load_checkpoint
  {"raise_on": R}              rank R raises an exception nothing catches
  {"compile": OPTIONS}         compiles the model again with OPTIONS added
  {"keep_state": true}         keeps state_dict()
  {"load_state": true, "perturb_on": R}   load_state_dict of the kept
                               state, a weight changed on rank R
  {"sleep_on": R, "seconds": S}   rank R sleeps S seconds
  {"wait": T}                  wait_for_ranks(T)
  {"bad_feed_on": R}           a step whose image rank R cuts short
An action with "catch": true records its ampc.Error and goes on. Each rank
writes OUT/rank<R>.json as it goes: its rank and world size, the losses,
scales and skips of its steps, the errors it caught, the CRC-32 of its
state after each action, and "done" at the end.
"""
import json
import os
import sys
import time
import zlib

import numpy as np

import ampc

spec_path, out = sys.argv[1], sys.argv[2]
with open(spec_path) as f:
    spec = json.load(f)
rank = int(os.environ["OMPI_COMM_WORLD_RANK"])
record = {"losses": [], "scales": [], "skipped": [], "errors": [],
          "states": [], "done": False}


def save():
    # Whole or not at all: another rank's MPI_Abort may end this one
    # mid-write.
    path = os.path.join(out, f"rank{rank}.json")
    with open(path + ".tmp", "w") as f:
        json.dump(record, f)
    os.replace(path + ".tmp", path)


def state_crc(step):
    crc = 0
    for _, value in sorted(step.state_dict().items()):
        crc = zlib.crc32(value.tobytes(), crc)
    return crc


options = dict(spec.get("options", {}))
options.update(spec.get("rank_options", {}).get(str(rank), {}))
try:
    step = ampc.compile_training(
        spec.get("rank_model", {}).get(str(rank), spec["model"]), **options)
except ampc.Error as e:
    record["errors"].append(str(e))
    save()
    if spec.get("compile_catch"):
        sys.exit(0)
    raise
record.update(rank=step.rank, world_size=step.world_size,
              steps_per_epoch=step.steps_per_epoch, steps=step.steps)
save()
kept = None

for action in spec.get("actions", []):
    try:
        if "steps" in action:
            for _ in range(action["steps"]):
                r = step.step(step.batch(step.steps_done))
                record["losses"].append(r.loss)
                record["scales"].append(r.loss_scale)
                record["skipped"].append(int(r.skipped))
        elif "save" in action:
            step.save_checkpoint(action["save"])
        elif "load" in action:
            where = action["load"]
            step.load_checkpoint(where if isinstance(where, str)
                                 else where[str(rank)])
        elif "compile" in action:
            ampc.compile_training(spec["model"],
                                  **dict(options, **action["compile"]))
        elif "keep_state" in action:
            kept = step.state_dict()
        elif "load_state" in action:
            state = {k: v.copy() for k, v in kept.items()}
            if action.get("perturb_on") == rank:
                name = next(k for k in sorted(state)
                            if state[k].dtype == np.float32)
                state[name].flat[0] += 1.0
            step.load_state_dict(state)
        elif "sleep_on" in action:
            if action["sleep_on"] == rank:
                time.sleep(action["seconds"])
        elif "bad_feed_on" in action:
            feeds = step.batch(step.steps_done)
            if action["bad_feed_on"] == rank:
                feeds["image"] = feeds["image"][:3]
            step.step(feeds)
        elif "wait" in action:
            step.wait_for_ranks(action["wait"])
        elif "raise_on" in action and action["raise_on"] == rank:
            save()
            raise RuntimeError(f"a fault of rank {rank}'s own")
    except ampc.Error as e:
        record["errors"].append(str(e))
        if not action.get("catch"):
            save()
            raise
    record["states"].append(state_crc(step))
    record["steps_done"] = step.steps_done
    save()

record["done"] = True
save()
