#!/usr/bin/env python3
"""The GPU run's report: the records of first-run.sh's results.jsonl laid
out as markdown (drive.py appends it to summary.txt; run this by hand on a
results.jsonl that came back to redo it).

Sections: the pieces and their status; the CUDA unit suites; the GEMM
peaks (median TFLOP/s and the range over the repeats, per dtype and
shape); the loss comparison; the bench table; every PyTorch variant; and
the rows that did not run, each with why.

Bench table, one row per (model, ampc configuration) that any record names:
- ampc step, step+input: the medians over the timed steps of amp-exec's
  step_time_ms and of step_time_ms + input_ms (drive.ampc_figures);
- torch step, step+input: the fastest PyTorch variant of the same dtype
  (eager-foreach, eager-fused, compile: f32, or autocast f16 + GradScaler,
  or autocast bf16), chosen separately for each of the two columns and
  named; its step_ms and total_ms (torch_peer.py);
- ratios: fastest torch / ampc for step and for step+input (> 1: ampc is
  faster);
- samples/s: batch / step and batch / (step+input), for each side;
- peak MiB: ampc's peak_device_bytes (amp-exec --json), PyTorch's
  torch.cuda.max_memory_allocated less what was allocated before;
- for the 8192 MLP, the fraction of the measured GEMM peak, for ampc and
  the fastest torch step: square = (the step's GEMM FLOPs / step time) /
  the 8192^3 peak of the dtype; same-shape = (the step's GEMMs each at the
  peak measured for its own shape and layout: 9 fwd NT, 8 dx NN (the first
  layer's data gradient is not computed), 9 dw TN) / step time. f32 is
  measured against plain f32 (ampc's and the peer's f32 use no TF32).
A cell whose run did not happen shows its status; the "Not measured" list
says why for each.

usage: report.py --records results.jsonl --sizes sizes.json [--title T]
                 [--note T]
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import plan  # noqa: E402

MIB = 1 << 20


def load_records(path):
    """The records of a results.jsonl; a line cut short by a kill (the
    last one, if anything) is left out."""
    recs = []
    with open(path) as f:
        for line in f:
            try:
                recs.append(json.loads(line))
            except ValueError:
                pass
    return recs


def fmt(v, spec):
    return "—" if v is None else format(v, spec)


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def mlp_gemms(sizes):
    """The 8192 MLP step's GEMMs: [(shape name, count, flop each)]."""
    b, w, n = sizes["batch"], sizes["width"], sizes["layers"]
    f = 2.0 * b * w * w
    return [("fwd", n, f), ("dx", n - 1, f), ("dw", n, f)]


def peak_fractions(step_ms, dtype, gemm, sizes):
    """(achieved TFLOP/s, square fraction, same-shape fraction); None where
    a peak is missing."""
    if step_ms is None:
        return None, None, None
    gemms = mlp_gemms(sizes)
    flop = sum(n * f for _, n, f in gemms)
    achieved = flop / (step_ms * 1e-3) / 1e12
    sq = gemm.get((dtype, "square"))
    square = achieved / sq if sq else None
    ideal_s, same = 0.0, True
    for shape, n, f in gemms:
        p = gemm.get((dtype, shape))
        if not p:
            same = False
            break
        ideal_s += n * f / (p * 1e12)
    same_shape = ideal_s / (step_ms * 1e-3) if same else None
    return achieved, square, same_shape


def ok(r):
    return r is not None and r.get("status") == "ok" and \
        r.get("step_ms") is not None


def latest(recs):
    """The last record for each key (a rerun of a row replaces it)."""
    out = {}
    for r in recs:
        out[r["_key"]] = r
    return list(out.values())


def render(recs, sizes, title, note=""):
    lines = ["## " + title, ""]
    if note:
        lines += [note, ""]

    # Pieces.
    pieces = [r for r in recs if r.get("kind") == "piece"]
    if pieces:
        lines += ["| piece | status | s |", "|---|---|---|"]
        lines += ["| %s | %s | %s |" % (r["piece"], r["status"].replace(
            "|", "/")[:400], r.get("seconds")) for r in pieces]
        lines.append("")

    # Environment.
    for r in recs:
        if r.get("kind") == "env":
            lines.append("GPU: %s; %s" % (r.get("gpu") or "none",
                                          r.get("python_torch")))
            for label, e in (r.get("libraries") or {}).items():
                if label != "search":
                    lines.append("- %s: %s" % (label, e.get("file") or
                                               "NOT FOUND"))
            lines.append("")
        if r.get("kind") == "smoke":
            lines.append("Smoke GEMM: %s%s" % (
                r["status"], " (%s)" % r["error"] if r.get("error") else
                " (%s)" % r.get("device") if r.get("device") else ""))
            lines.append("")

    # Suites.
    suites = [r for r in recs if r.get("kind", "").startswith("suite")]
    if suites:
        lines += ["| suite | run | status | passed | failed | skipped "
                  "| failing tests / where |", "|---|---|---|---|---|---|---|"]
        for r in suites:
            where = ", ".join(r.get("failed_tests") or [])
            if r.get("crashed_in"):
                where += " (died in %s)" % r["crashed_in"]
            if r.get("fault_lines"):  # the rerun's: they name the kernel
                where += " " + " / ".join(r["fault_lines"][:2])
            elif r.get("faults"):
                where += " " + ", ".join(r["faults"])
            lines.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                r.get("suite"), {"suite": "plain",
                                 "suite-rerun": "CUDA_LAUNCH_BLOCKING=1",
                                 "suite-sanitizer": "memcheck"}[r["kind"]],
                r["status"], r.get("passed", "—"), r.get("failed", "—"),
                r.get("skipped", "—"), where[:300] or "—"))
        lines.append("")

    # GEMM peaks.
    gemm = {}
    peaks = [r for r in recs if r.get("kind") == "gemm-peak"]
    for r in peaks:
        r["_key"] = (r.get("dtype"), r.get("shape"))
    peaks = latest(peaks)
    if peaks:
        lines += ["| GEMM peak | shape | M x N x K | layout | median "
                  "TFLOP/s | repeats (min-max) | ms |",
                  "|---|---|---|---|---|---|---|"]
        for r in peaks:
            if r.get("status") == "ok" and r.get("tflops"):
                gemm[(r["dtype"], r["shape"])] = r["tflops"]
                reps = r.get("tflops_repeats") or [r["tflops"]]
                lines.append("| %s | %s | %sx%sx%s | %s | %.1f | %.1f-%.1f "
                             "| %.4f |" % (r["dtype"], r["shape"], r["m"],
                                           r["n"], r["k"], r["layout"],
                                           r["tflops"], min(reps), max(reps),
                                           r["ms"]))
            else:
                lines.append("| %s | %s | | | %s | | |" % (
                    r.get("dtype"), r.get("shape"),
                    r.get("status", "").split(" (")[0]))
        lines.append("")

    # Loss comparison.
    losses = [r for r in recs if r.get("kind") == "losses"]
    if losses:
        counts = {}
        for r in losses:
            k = r["status"].split(" (")[0]
            counts[k] = counts.get(k, 0) + 1
        lines.append("Loss comparison (cpu vs cuda, %d steps each): %s" % (
            losses[0].get("steps", 0), ", ".join(
                "%d %s" % (n, k) for k, n in sorted(counts.items()))))
        for r in losses:
            if r["status"] != "ok" and not r["status"].startswith("skip"):
                lines.append("- %s: %s%s" % (
                    r["program"], r["status"],
                    " (max rel diff %.3g at step %s, tol %g)" % (
                        r["max_rel"], r["worst_step"], r["tol"])
                    if "max_rel" in r else ""))
        lines.append("")

    # Bench.
    bench = [r for r in recs if r.get("kind") == "bench"]
    for r in bench:
        r["_key"] = (r.get("side"), r.get("model"),
                     r.get("config") if r.get("side") == "ampc"
                     else r.get("dtype"))
    bench = latest(bench)
    ampc = {(r["model"], r["config"]): r for r in bench
            if r.get("side") == "ampc"}
    torch_by = {}
    for r in bench:
        if r.get("side", "").startswith("torch-"):
            torch_by.setdefault((r["model"], r["dtype"]), []).append(r)
    order = []
    for m in plan.MODELS:
        for c in plan.CONFIGS:
            if (m["name"], c) in ampc:
                order.append((m, c))
    rows = []
    for m, c in order:
        a = ampc[(m["name"], c)]
        d = plan.CONFIGS[c][1]
        peers = [r for r in torch_by.get((m["name"], d), []) if ok(r)]
        fast_step = min(peers, key=lambda r: r["step_ms"], default=None)
        fast_total = min([r for r in peers if r.get("total_ms")],
                         key=lambda r: r["total_ms"], default=None)
        batch = a.get("batch") or (peers[0]["batch"] if peers else None)
        row = dict(model=m["name"], config=c, dtype=d, batch=batch,
                   ampc_status=a.get("status"))
        row["ampc_step_ms"] = a["step_ms"] if ok(a) else None
        row["ampc_total_ms"] = a.get("total_ms") if ok(a) else None
        row["ampc_peak_mib"] = (a["peak_bytes"] / MIB if ok(a) and
                                a.get("peak_bytes") else None)
        row["torch_step_ms"] = fast_step["step_ms"] if fast_step else None
        row["torch_step_variant"] = fast_step["variant"] if fast_step \
            else None
        row["torch_total_ms"] = fast_total["total_ms"] if fast_total \
            else None
        row["torch_total_variant"] = fast_total["variant"] if fast_total \
            else None
        row["torch_peak_mib"] = (fast_step["peak_bytes"] / MIB if fast_step
                                 and fast_step.get("peak_bytes") else None)
        row["step_ratio"] = ratio(row["torch_step_ms"], row["ampc_step_ms"])
        row["total_ratio"] = ratio(row["torch_total_ms"],
                                   row["ampc_total_ms"])
        for side in ("ampc", "torch"):
            for what in ("step", "total"):
                v = row["%s_%s_ms" % (side, what)]
                row["%s_%s_samples_s" % (side, what)] = (
                    batch * 1e3 / v if v and batch else None)
        if m["name"] == plan.HEADLINE and sizes.get(plan.HEADLINE):
            for side in ("ampc", "torch"):
                t, sq, same = peak_fractions(row[side + "_step_ms"], d, gemm,
                                             sizes[plan.HEADLINE])
                row[side + "_tflops"] = t
                row[side + "_peak_square"] = sq
                row[side + "_peak_same_shape"] = same
                if sq is not None and sq > 1.05:
                    row["suspect"] = (
                        "%s ran at %.0f%% of the square GEMM peak, which no "
                        "step can: its time cannot include all the GPU's "
                        "work" % (side, 100 * sq))
        rows.append(row)

    def pct(r, side):
        sq, same = r.get(side + "_peak_square"), r.get(side +
                                                        "_peak_same_shape")
        if sq is None and same is None:
            return "—"
        return "%s / %s" % tuple("—" if v is None else "%.0f%%" % (100 * v)
                                 for v in (sq, same))

    if rows:
        lines += ["Times in ms, medians over the timed steps. step: the "
                  "compiled step (ampc step_time_ms; torch CUDA events "
                  "from after the batch copy to after the optimizer step); "
                  "+input adds the batch's host-to-device copy "
                  "(docs/performance.md). torch: the fastest PyTorch "
                  "variant for that column. ratio = torch / ampc (> 1: "
                  "ampc faster). % of GEMM peak: square / same-shape.", "",
                  "| model | config | batch | ampc step | ampc step+input "
                  "| torch step | torch step+input | ratio step "
                  "| ratio step+input | ampc samples/s (step / +input) "
                  "| torch samples/s (step / +input) | ampc MiB | torch MiB "
                  "| ampc % of GEMM peak | torch % of GEMM peak |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
                  "---|---|"]
        for r in rows:
            st = r["ampc_status"] or "not run"
            lines.append(
                "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s "
                "| %s / %s | %s | %s | %s | %s |" % (
                    r["model"], r["config"], r["batch"] or "—",
                    fmt(r["ampc_step_ms"], ".3f") if r["ampc_step_ms"]
                    is not None else st,
                    fmt(r["ampc_total_ms"], ".3f"),
                    "%.3f (%s)" % (r["torch_step_ms"],
                                   r["torch_step_variant"])
                    if r["torch_step_ms"] is not None else "—",
                    "%.3f (%s)" % (r["torch_total_ms"],
                                   r["torch_total_variant"])
                    if r["torch_total_ms"] is not None else "—",
                    fmt(r["step_ratio"], ".2f"), fmt(r["total_ratio"], ".2f"),
                    fmt(r["ampc_step_samples_s"], ".0f"),
                    fmt(r["ampc_total_samples_s"], ".0f"),
                    fmt(r["torch_step_samples_s"], ".0f"),
                    fmt(r["torch_total_samples_s"], ".0f"),
                    fmt(r["ampc_peak_mib"], ".0f"),
                    fmt(r["torch_peak_mib"], ".0f"),
                    pct(r, "ampc"), pct(r, "torch")))
        lines.append("")

    # Every PyTorch variant.
    peer_rows = [r for r in bench if r.get("side", "").startswith("torch-")]
    if peer_rows:
        lines += ["| PyTorch | model | dtype | optimizer | step | input "
                  "| step+input | peak MiB | loss first -> last |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in peer_rows:
            if ok(r):
                lines.append("| %s | %s | %s | %s | %.3f | %.3f | %.3f | %s "
                             "| %.4g -> %.4g |" % (
                                 r["variant"], r["model"], r["dtype"],
                                 r.get("optimizer"), r["step_ms"],
                                 r["input_ms"], r["total_ms"],
                                 fmt(r.get("peak_bytes") and
                                     r["peak_bytes"] / MIB, ".0f"),
                                 r["loss_first"], r["loss_last"]))
            else:
                lines.append("| %s | %s | %s | | %s | | | | |" % (
                    r.get("variant"), r["model"], r["dtype"],
                    r["status"][:100]))
        lines.append("")

    suspects = [r for r in rows if r.get("suspect")]
    if suspects:
        lines += ["SUSPECT (do not quote these times):"]
        lines += ["- %s %s: %s" % (r["model"], r["config"], r["suspect"])
                  for r in suspects]
        lines.append("")

    missing = [r for r in bench + peaks if not ok(r) and not (
        r.get("kind") == "gemm-peak" and r.get("status") == "ok")]
    if missing:
        # One line per reason, naming every row it holds for.
        by_why = {}
        for r in missing:
            what = ("%s %s" % (r["model"], r.get("config"))
                    if r.get("side") == "ampc" else
                    "%s %s %s" % (r["model"], r.get("side"), r.get("dtype"))
                    if r.get("kind") == "bench" else
                    "GEMM peak %s %s" % (r.get("dtype"), r.get("shape")))
            why = r.get("status", "")
            if r.get("error") and r["error"] not in why:
                why += ": " + r["error"]
            by_why.setdefault(why.replace("\n", " ")[:400], []).append(what)
        lines += ["Not measured:"]
        lines += ["- %s: %s" % (", ".join(whats), why)
                  for why, whats in by_why.items()]
        lines.append("")
    for r in recs:
        r.pop("_key", None)
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--records", required=True,
                   help="a results.jsonl of first-run.sh")
    p.add_argument("--sizes", required=True,
                   help="the sizes.json prepare.sh wrote for the Programs")
    p.add_argument("--title", default="GPU training step: ampc vs PyTorch")
    p.add_argument("--note", default="")
    args = p.parse_args()
    with open(args.sizes) as f:
        sizes = json.load(f)
    recs = load_records(args.records)
    print(render(recs, sizes, args.title, args.note))


if __name__ == "__main__":
    main()
