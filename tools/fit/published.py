#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Predicted against published throughput, row by row, and the MoE refit.

Reads the published Megatron runs (../shared/data/published_throughput_dev.csv,
copied to tests/fixtures/), plans each describable row with its published
layout pinned (`meshplan plan --json --mesh ...`), and prints the predicted
model TFLOP/s against the published, with the distribution for dense and MoE
rows.  Rows meshplan cannot describe are listed with the reason.  The rules
that say which rows are describable and how a row becomes a plan are the
same as tests/unit/test_published.c's (keep the two in step).

The published figure compared is tokens per GPU per second where the row
gives it, turned into model TFLOP/s with meshplan's own FLOPs per token
(Megatron-LM's num_floating_point_operations); otherwise its TFLOP/s.  The
sources count attention FLOPs differently (NeMo's older pages count it
non-causal), tokens per second do not depend on the convention.

Usage: published.py [--meshplan BIN] [--csv FILE] [--models-dir DIR] [-v]
       published.py --fit BUILD_DIR   search the MoE constants of lib/cost.c
           (GROUPED_GEMM_M0, GEMM_K0, DROPLESS_S_PER_COPY) on the MoE rows,
           rebuilding BUILD_DIR (a configured build tree of this checkout,
           not the one you test with) with -D overrides, coordinate by
           coordinate, minimising the median |log(predicted/published)|
           plus the share of rows off by more than 15%; prints each trial
           and the best.  Put the result in lib/cost.c by hand.
Standard library only.
"""
import argparse
import csv
import json
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))

# published name -> meshplan preset (etc/models)
PRESETS = {
    "Llama-2-7B": "llama2-7b", "Llama-2-13B": "llama2-13b", "Llama-2-70B": "llama2-70b",
    "Llama-3-8B": "llama3-8b", "Llama-3.1-8B": "llama3-8b",
    "Llama-3-70B": "llama3-70b", "Llama-3.1-70B": "llama3-70b",
    "Llama-3.1-405B": "llama3.1-405b", "GPT3-175B": "gpt3-175b",
    "Mixtral-8x7B": "mixtral-8x7b", "Mixtral-8x22B": "mixtral-8x22b",
    "Qwen3-30B-A3B": "qwen3-30b-a3b", "Qwen3-235B-A22B": "qwen3-235b-a22b",
    "DeepSeek-V3": "deepseek-v3",
}
# published GPU -> (meshplan GPU, GPUs per node)
GPUS = {"H100": ("H100-SXM", 8), "H800": ("H800", 8), "B200": ("B200", 8),
        "B300": ("B300", 8), "GB200": ("GB200", 4)}
MOE = {"Mixtral-8x7B", "Mixtral-8x22B", "Qwen3-30B-A3B", "Qwen3-235B-A22B", "DeepSeek-V3"}
RECIPES = {"MXFP8": "mxfp8", "current-scaling (per-tensor)": "tensorwise",
           "blockwise (1x128 activations, 128x128 weights)": "blockwise"}


def framework(row):
    m = re.search(r"framework: ([^;\]]*)", row["source"])
    return m.group(1) if m else ""


def why_not(row):
    """Why meshplan cannot describe the row, or None."""
    fw = framework(row)
    if "Megatron" not in fw or "Automodel" in fw:
        return "framework %s, not Megatron-LM" % (fw or "unstated")
    if row["name"] not in PRESETS:
        return "no preset for %s" % row["name"]
    if row["gpu"] not in GPUS:
        return "GPU %s not in the table" % row["gpu"]
    if row["precision"] not in ("BF16", "FP8"):
        return "precision %s not priced" % row["precision"]
    if row["fsdp"].startswith("yes"):
        return "Megatron-FSDP (%s): sharding group not priced" % row["fsdp"]
    if not row["tp"] or not row["pp"] or not row["micro_batch"] or not row["global_batch"]:
        return "layout not published in full"
    par = int(row["tp"]) * int(row["pp"]) * int(row["cp"] or 1)
    if not row["tflops_per_gpu"] and not row["tokens_per_gpu_s"]:
        return "no throughput published"
    if int(row["gpus"]) % par:
        return "tp*pp*cp does not divide the GPUs"
    return None


def command(row, meshplan, models):
    gpu, gpn = GPUS[row["gpu"]]
    gpus = int(row["gpus"])
    gpn = min(gpn, gpus)
    tp, pp, cp = int(row["tp"]), int(row["pp"]), int(row["cp"] or 1)
    mesh = "tp=%d,pp=%d,cp=%d,dp=%d,zero=1,mb=%s" % (tp, pp, cp, gpus // (tp * pp * cp),
                                                    row["micro_batch"])
    if row["vpp"]:
        mesh += ",vpp=" + row["vpp"]
    if row["ep"] and row["name"] in MOE:  # a dense row's "EP 1" says nothing
        mesh += ",ep=" + row["ep"]
    if row["etp"] and row["name"] in MOE:
        mesh += ",etp=" + row["etp"]
    cmd = [meshplan, "plan", "--json", "--policy", "none", "--models-dir", models,
           "--model", PRESETS[row["name"]], "--gpu", gpu, "--nodes", str(gpus // gpn),
           "--gpus-per-node", str(gpn), "--mesh", mesh,
           "--set", "train.seq_len=" + row["seq"],
           "--set", "train.global_batch=" + row["global_batch"]]
    if row["precision"] == "FP8":
        cmd += ["--set", "train.precision=fp8",
                "--set", "train.fp8_recipe=" + RECIPES.get(row["fp8_recipe"], "delayed")]
    if row["name"] in MOE:  # the sources force the routing balanced
        cmd += ["--set", "train.moe_imbalance=1"]
    if row["name"] == "DeepSeek-V3":
        cmd += ["--set", "arch.mtp_layers=0"]
    return cmd


def predict(row, meshplan, models):
    """(fits, predicted TFLOP/s, published TFLOP/s, plan JSON) or an error string."""
    p = subprocess.run(command(row, meshplan, models), capture_output=True, text=True)
    try:
        d = json.loads(p.stdout)
    except ValueError:
        return "meshplan: " + (p.stderr.strip().splitlines() or ["no output"])[-1]
    pred = d["cost"]["tflops_per_gpu"]
    pub = float(row["tflops_per_gpu"] or 0)
    if row["tokens_per_gpu_s"]:
        # model TFLOP/s of the published tokens/s, by meshplan's FLOPs per token
        per_token = pred * 1e12 / (d["cost"]["tokens_per_second"] / int(row["gpus"]))
        pub = float(row["tokens_per_gpu_s"]) * per_token / 1e12
    return d["fits"], pred, pub, d


def layout_str(l):
    keys = ("tp", "pp", "cp", "dp", "ep", "etp", "vpp", "mb", "recompute")
    return ",".join("%s%s" % (k, l[k]) for k in keys if k in l)


def summary(label, ratios):
    if not ratios:
        return "%s: no rows" % label
    within = lambda f: sum(abs(r - 1) <= f for r in ratios)
    return "%s: %d rows, within 15%%: %d (%.0f%%), within 25%%: %d, median %.2f, min %.2f, max %.2f" % (
        label, len(ratios), within(0.15), 100.0 * within(0.15) / len(ratios), within(0.25),
        statistics.median(ratios), min(ratios), max(ratios))


FIT = [  # (macro, start, candidates as multiples of the current value)
    ("DROPLESS_S_PER_COPY", 0.246e-6 / 3, (0, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75)),
    ("GROUPED_GEMM_M0", 128.0, (0.25, 0.5, 1, 2, 4)),
    ("GEMM_K0", 680.0, (0.25, 0.5, 1, 1.5, 2)),
]


def moe_ratios(rows, meshplan, models):
    out = []
    for row in rows:
        res = predict(row, meshplan, models)
        if not isinstance(res, str):
            out.append(res[1] / res[2])
    return out


def loss(ratios):
    import math
    logs = sorted(abs(math.log(r)) for r in ratios)
    return statistics.median(logs) + sum(abs(r - 1) > 0.15 for r in ratios) / len(ratios)


def fit(build, rows, models):
    import math
    values = {name: start for name, start, _ in FIT}
    meshplan = os.path.join(build, "tools", "meshplan")

    def trial(vals):
        flags = " ".join("-D%s=%.6g" % (k, v) for k, v in vals.items())
        os.utime(os.path.join(TOP, "lib", "cost.c"))
        subprocess.run(["make", "-C", build, "-j2", "CPPFLAGS=" + flags], check=True,
                       capture_output=True)
        r = moe_ratios(rows, meshplan, models)
        print("%-70s loss %.3f  %s" % (flags, loss(r), summary("moe", r)), flush=True)
        return loss(r)

    best = trial(values)
    for _ in range(2):
        for name, start, mults in FIT:
            base = values[name]
            for k in mults:
                if k == 1:
                    continue
                cand = dict(values, **{name: base * k if base else start * k})
                l = trial(cand)
                if l < best:
                    best, values = l, cand
    print("best: " + " ".join("%s=%.4g" % kv for kv in values.items()) + " loss %.3f" % best)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--meshplan", default=os.path.join(TOP, "b", "tools", "meshplan"))
    ap.add_argument("--csv", default=os.path.join(TOP, "tests", "fixtures",
                                                  "published_throughput_dev.csv"))
    ap.add_argument("--models-dir", default=os.path.join(TOP, "etc", "models"))
    ap.add_argument("-v", action="store_true", help="print every row")
    ap.add_argument("--fit", metavar="BUILD_DIR")
    a = ap.parse_args()
    rows = list(csv.DictReader(open(a.csv, newline="")))
    if a.fit:
        return fit(a.fit, [r for r in rows if not why_not(r) and r["name"] in MOE], a.models_dir)
    ratios = {"dense": [], "moe": []}
    skipped = {}
    for i, row in enumerate(rows):
        reason = why_not(row)
        res = None if reason else predict(row, a.meshplan, a.models_dir)
        if isinstance(res, str):
            reason = res
        if reason:
            skipped.setdefault(reason, []).append(i + 2)
            continue
        fits, pred, pub, d = res
        kind = "moe" if row["name"] in MOE else "dense"
        ratios[kind].append(pred / pub)
        if a.v:
            c = d["cost"]
            print("%4d %-16s %-5s %4s %-4s %-28s fit=%d pub %6.0f pred %6.0f %.2f  comp %.1f tp %.1f "
                  "cp %.1f pp %.1f dp %.1f ep %.1f" % (
                      i + 2, row["name"], row["gpu"], row["gpus"], row["precision"],
                      layout_str(d["layout"]),
                      fits, pub, pred, pred / pub, c["compute_seconds"], c["tp_comm_seconds"],
                      c["cp_comm_seconds"], c["pp_comm_seconds"], c["dp_comm_seconds"],
                      c.get("ep_comm_seconds", 0)))
    for reason, lines in sorted(skipped.items(), key=lambda kv: -len(kv[1])):
        print("not described (%d rows): %s" % (len(lines), reason))
    print(summary("dense", ratios["dense"]))
    print(summary("moe", ratios["moe"]))


if __name__ == "__main__":
    sys.exit(main())
