#!/usr/bin/env python3
"""Collects the GPU benchmark's records (drive.py's records.jsonl) into
OUT/results.json and OUT/performance.md, and prints the table.

One row per (model, ampc configuration): ampc's median step beside the
PyTorch eager and torch.compile medians of the same dtype (f32, or
autocast f16 + GradScaler, or autocast bf16), ratios = PyTorch ms / ampc ms
(> 1: ampc is faster), samples/s = batch / median step, peak memory in MiB
(ampc: what amp-exec reports, see its `peak_source`; PyTorch:
torch.cuda.max_memory_allocated), and for mlp9x8192 the fraction of the
Tensor Core peak: the step's GEMM FLOPs (26 GEMMs of 2 x 2048 x 8192 x
8192: forward, data gradient except the first layer's, which no one needs,
weight gradient) over its time, divided by ampc-gemm-peak's TFLOP/s for the
dtype (f32 against plain f32's: ampc's f32 uses no TF32; the tf32 figure
is printed for reference).

usage: report.py --work DIR --out DIR --sizes FILE [--title T] [--note T]
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import plan  # noqa: E402

MIB = 1 << 20


def mlp_flops(batch, width, layers):
    gemms = 3 * layers - 1
    return gemms * 2.0 * batch * width * width


def fmt(v, spec):
    return "—" if v is None else format(v, spec)


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--work", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--title", default="GPU training step: ampc vs PyTorch")
    p.add_argument("--note", default="")
    p.add_argument("--sizes", required=True,
                   help="the sizes.json models.py wrote for the Programs")
    args = p.parse_args()
    with open(args.sizes) as f:
        mlp = json.load(f)["mlp9x8192"]

    recs = []
    path = os.path.join(args.work, "records.jsonl")
    if os.path.exists(path):
        with open(path) as f:
            recs = [json.loads(l) for l in f if l.strip()]
    bench = [r for r in recs if r.get("kind") == "bench"]
    gemm = {r["dtype"]: r for r in recs if r.get("kind") == "gemm-peak"}
    tests = [r for r in recs if r.get("kind") == "unittests"]

    def ok(r):
        return r is not None and r.get("status") == "ok" and \
            r.get("median_ms") is not None

    def peer(side, model, dtype):
        for r in bench:
            if r["side"] == side and r["model"] == model and \
                    r["dtype"] == dtype:
                return r
        return None

    rows = []
    for m in plan.MODELS:
        for c in m["configs"]:
            a = next((r for r in bench if r["side"] == "ampc" and
                      r["model"] == m["name"] and r["config"] == c), None)
            d = plan.CONFIGS[c][1]
            e, k = peer("torch-eager", m["name"], d), \
                peer("torch-compile", m["name"], d)
            row = dict(model=m["name"], config=c, dtype=d)
            for tag, r in (("ampc", a), ("eager", e), ("compile", k)):
                row[tag + "_status"] = r.get("status") if r else "not run"
                if r and r.get("error"):
                    row[tag + "_error"] = r["error"]
                good = ok(r)
                row[tag + "_ms"] = r["median_ms"] if good else None
                row[tag + "_samples_s"] = (r["batch"] * 1e3 / r["median_ms"]
                                           if good else None)
                row[tag + "_peak_mib"] = (r["peak_bytes"] / MIB
                                          if good and r.get("peak_bytes")
                                          is not None else None)
                if r and r.get("batch"):
                    row["batch"] = r["batch"]
            row["eager_over_ampc"] = ratio(row["eager_ms"], row["ampc_ms"])
            row["compile_over_ampc"] = ratio(row["compile_ms"],
                                             row["ampc_ms"])
            if m["name"] == "mlp9x8192" and row["ampc_ms"] and \
                    row.get("batch"):
                peak = gemm.get(d, {})
                flops = mlp_flops(mlp["batch"], mlp["width"],
                                  mlp["layers"])
                row["ampc_tflops"] = flops / (row["ampc_ms"] * 1e-3) / 1e12
                if peak.get("status") == "ok" and peak.get("tflops"):
                    row["gemm_peak_tflops"] = peak["tflops"]
                    row["gemm_peak_fraction"] = (row["ampc_tflops"] /
                                                 peak["tflops"])
                    if row["gemm_peak_fraction"] > 1.05:
                        row["suspect"] = (
                            "the step ran at %.0f%% of the GEMM peak, which "
                            "no step can: its time cannot include all the "
                            "GPU's work" % (100 * row["gemm_peak_fraction"]))
            rows.append(row)

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(dict(title=args.title, note=args.note, unittests=tests,
                       gemm_peak=list(gemm.values()), rows=rows,
                       records=recs), f, indent=1)

    lines = ["## " + args.title, ""]
    if args.note:
        lines += [args.note, ""]
    for t in tests:
        lines.append("CUDA unit tests: %s %s" % (t["status"],
                                                  "; ".join(t["summary"])))
    for d, g in gemm.items():
        lines.append("cuBLASLt GEMM peak %s: %s" % (
            d, "%.1f TFLOP/s (m=%s, %.3f ms)" % (g["tflops"], g.get("m"),
                                                  g.get("ms", 0))
            if g.get("status") == "ok" and "tflops" in g else g["status"]))
    lines += ["", "| model | config | batch | ampc ms | eager ms | compile ms "
              "| eager/ampc | compile/ampc | ampc samples/s | eager samples/s "
              "| compile samples/s | ampc MiB | eager MiB | compile MiB "
              "| GEMM-peak fraction |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        def ms(tag):
            v = r[tag + "_ms"]
            return fmt(v, ".3f") if v is not None else r[tag + "_status"]
        frac = r.get("gemm_peak_fraction")
        frac_s = ("%.0f%% (%.0f of %.0f TFLOP/s)" %
                  (100 * frac, r["ampc_tflops"], r["gemm_peak_tflops"])
                  if frac is not None else "—")
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s "
                     "| %s | %s | %s | %s |" % (
                         r["model"], r["config"], r.get("batch", "—"),
                         ms("ampc"), ms("eager"), ms("compile"),
                         fmt(r["eager_over_ampc"], ".2f"),
                         fmt(r["compile_over_ampc"], ".2f"),
                         fmt(r["ampc_samples_s"], ".0f"),
                         fmt(r["eager_samples_s"], ".0f"),
                         fmt(r["compile_samples_s"], ".0f"),
                         fmt(r["ampc_peak_mib"], ".1f"),
                         fmt(r["eager_peak_mib"], ".1f"),
                         fmt(r["compile_peak_mib"], ".1f"), frac_s))
    suspects = [r for r in rows if r.get("suspect")]
    if suspects:
        lines += ["", "SUSPECT (do not quote these ampc times):"]
        lines += ["- %s %s: %s" % (r["model"], r["config"], r["suspect"])
                  for r in suspects]
    errors = [(r["model"], r["config"], tag, r[tag + "_error"])
              for r in rows for tag in ("ampc", "eager", "compile")
              if r.get(tag + "_error")]
    if errors:
        lines += ["", "Not measured:"]
        seen = set()
        for model, config, tag, err in errors:
            what = (config if tag == "ampc" else "torch %s %s" %
                    (tag, plan.CONFIGS[config][1]))
            if (model, what) not in seen:
                seen.add((model, what))
                lines.append("- %s %s: %s" % (model, what,
                                              err.replace("\n", " ")[:300]))
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "performance.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
