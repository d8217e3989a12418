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
       published.py --check DENSE MOE MOE_CURRENT ...   the test
           (tests/published): every row printed, each planned row's
           published layout must fit, and the shares within 15% of dense
           rows, MoE rows and MoE rows of the cited commit's release must
           reach DENSE, MOE and MOE_CURRENT (0-1); CMocka's result lines,
           exit 1 after a failure
       published.py --fit BUILD_DIR [--fit-current | --fit-fp8]   search the MoE constants
           of lib/cost.c (GROUPED_GEMM_M0, GEMM_K0) on the MoE rows (those of
           the cited commit's release with --fit-current: what lib/cost.c uses),
           rebuilding BUILD_DIR (a configured build tree of this checkout,
           not the one you test with) with -D overrides, coordinate by
           coordinate, minimising the median |log(predicted/published)|
           plus the share of rows off by more than 15%; prints each trial
           and the best.  With --fit-fp8, FP8_GEMM_EFF (Hopper's FP8 GEMMs'
           share of their peak against BF16's) on the dense FP8 rows of
           H100 and H800 instead.  Put the result in lib/cost.c by hand.
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
    "DeepSeek-V3": "deepseek-v3", "Kimi-K2": "kimi-k2",
    "Nemotron-4-15B": "nemotron4-15b", "Nemotron-4-340B": "nemotron4-340b",
    "GPT-OSS-120B": "gpt-oss-120b", "Grok-1-314B": "grok-1", "Llama-4-Scout": "llama4-scout",
    "Llama-4-Maverick": "llama4-maverick",
}
# published GPU -> (meshplan GPU, GPUs per node)
GPUS = {"H100": ("H100-SXM", 8), "H800": ("H800", 8), "B200": ("B200", 8),
        "B300": ("B300", 8), "GB200": ("GB200", 4), "GB300": ("GB300", 4)}
MOE = {"Mixtral-8x7B", "Mixtral-8x22B", "Qwen3-30B-A3B", "Qwen3-235B-A22B", "DeepSeek-V3",
       "Kimi-K2", "GPT-OSS-120B", "Grok-1-314B", "Llama-4-Scout", "Llama-4-Maverick"}
# The model as a source ran it, where that is not the preset: NVIDIA's
# Grok-1 runs (dgxc-benchmarking grok1_314b.yaml at v24.11.1 and v25.02,
# NeMo 25.04's pretrain_grok1_314b.py after) are of Grok-1's shapes with
# Llama 3's tokenizer (128,256 tokens), untied embeddings and the experts
# at capacity 1 with padding
AS_RUN = {"Grok-1-314B": ["arch.vocab=128256", "arch.tied_embeddings=false",
                          "arch.moe.capacity_factor=1"]}
RECIPES = {"MXFP8": "mxfp8", "current-scaling (per-tensor)": "tensorwise",
           "blockwise (1x128 activations, 128x128 weights)": "blockwise"}


def framework(row):
    m = re.search(r"framework: ([^;\]]*)", row["source"])
    return m.group(1) if m else ""


def current(row):
    """Measured with the Megatron-Core of the cited commit's generation
    (d98e8a6, 2026-08-22): NeMo containers 26.06 and later, Megatron-Core
    main or dev of 2026-05 (ModelZoo); older releases ran the same layouts
    up to 1.6x slower (Qwen3-30B-A3B on 8 GB200: 26.04 26,112 tokens/s a
    GPU, 26.06 40,706).  The ModelZoo rows write their date two ways,
    "(ModelZoo commit e865051, 2026-05)" and "ModelZoo commit e865051
    (2026-05)": both are of that generation."""
    v = row["version"]
    return bool(re.search(r"NeMo container 26\.(0[6-9]|1[0-2])|"
                          r"ModelZoo commit \w+,? \(?2026-0[5-9]", v))


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
    if "Muon optimizer" in row["source"]:  # the spec's optimizers are Adam(W) and SGD
        return "Muon optimizer not priced"
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
    # every row is a Megatron-LM run: its memory, not the most of the
    # frameworks meshplan exports, says what fits
    cmd = [meshplan, "plan", "--json", "--policy", "none", "--models-dir", models,
           "--set", "train.framework=megatron",
           "--model", PRESETS[row["name"]], "--gpu", gpu, "--nodes", str(gpus // gpn),
           "--gpus-per-node", str(gpn), "--mesh", mesh,
           "--set", "train.seq_len=" + row["seq"],
           "--set", "train.global_batch=" + row["global_batch"]]
    if row["precision"] == "FP8":
        cmd += ["--set", "train.precision=fp8",
                "--set", "train.fp8_recipe=" + RECIPES.get(row["fp8_recipe"], "delayed")]
    if row["name"] in MOE:  # the sources force the routing balanced; the
        # expert all-to-all's overlap (off in Megatron-LM by default) is priced
        # off for all: of the recipes, only the MXFP8 ones at the docs' commit
        # turn it on (doc/design.md, "Against the published Megatron runs")
        cmd += ["--set", "train.moe_imbalance=1", "--set", "train.ep_overlap=off"]
    if row["name"] in MOE and "DeepEP" in row["source"]:  # the flex dispatcher on DeepEP
        cmd += ["--set", "train.dispatcher=deepep"]
    if row["name"] in MOE and "token-drop" in row["source"]:  # capacity 1, padded
        cmd += ["--set", "arch.moe.capacity_factor=1"]
    if row["name"] == "DeepSeek-V3":
        cmd += ["--set", "arch.mtp_layers=0"]
    for kv in AS_RUN.get(row["name"], []):
        cmd += ["--set", kv]
    if "Megatron-Bridge" in framework(row):
        # its performance recipes reduce the gradients in bf16
        # (grad_reduce_in_fp32 = False for all: perf_recipes/_common.py,
        # _benchmark_common and _perf_precision, at 007282e; before them,
        # scripts/performance/configs/deepseek/deepseek_llm_pretrain.py at
        # 0132842)
        cmd += ["--set", "train.grad_accum_dtype=bf16"]
    return cmd


def predict(row, meshplan, models):
    """(fits, predicted TFLOP/s, published TFLOP/s, plan JSON) or an error string."""
    p = subprocess.run(command(row, meshplan, models), capture_output=True, text=True)
    try:
        d = json.loads(p.stdout)
    except ValueError:
        return (p.stderr.strip().splitlines() or ["meshplan: no output"])[-1]
    pred = d["cost"]["tflops_per_gpu"]
    pub = float(row["tflops_per_gpu"] or 0)
    if row["tokens_per_gpu_s"]:
        # model TFLOP/s of the published tokens/s, by meshplan's FLOPs per token
        per_token = pred * 1e12 / (d["cost"]["tokens_per_second"] / int(row["gpus"]))
        pub = float(row["tokens_per_gpu_s"]) * per_token / 1e12
    return d["fits"], pred, pub, d


def ceiling(results, pick):
    """The most rows `pick` takes that any model could place within 15%: rows
    planned by the same command get the same prediction, so of a group of
    them only those whose published figures lie within a factor
    1.15/0.85 of each other can all be within 15% of it.  Returns (rows
    reachable, rows, the groups whose published figures spread wider, as
    (min/max ratio, first lines))."""
    groups = {}
    for line, row, reason, res in results:
        if reason or not pick(row):
            continue
        key = tuple(command(row, "", ""))
        groups.setdefault(key, []).append((res[2], line))
    reach, n, wide = 0, 0, []
    for pubs in groups.values():
        pubs.sort()
        best, lo = 0, 0
        for hi in range(len(pubs)):  # the widest window within the factor
            while pubs[hi][0] * 0.85 > pubs[lo][0] * 1.15:
                lo += 1
            best = max(best, hi - lo + 1)
        reach, n = reach + best, n + len(pubs)
        if best < len(pubs):
            wide.append((pubs[0][0] / pubs[-1][0], sorted(l for _, l in pubs)))
    return reach, n, sorted(wide)


KINDS = {"dense": lambda row: row["name"] not in MOE,
         "moe": lambda row: row["name"] in MOE,
         "moe_current": lambda row: row["name"] in MOE and current(row)}


def ratios_by_kind(results):
    """Predicted over published, of each kind's planned rows."""
    return {kind: [res[1] / res[2] for _, row, reason, res in results
                   if not reason and pick(row)] for kind, pick in KINDS.items()}


def ceiling_lines(kind, results, verbose):
    """The summary's second line: how many of the kind's rows any model
    could place within 15%, and, verbose, the groups that keep it below all."""
    reach, n, wide = ceiling(results, KINDS[kind])
    if not n:
        return []
    out = ["%s: at most %d of %d (%.0f%%) within 15%% for any model: %d groups of rows "
           "planned alike were published more than 1.35x apart" % (
               kind, reach, n, 100.0 * reach / n, len(wide))]
    if verbose:
        out += ["  rows %s: slowest at %.2fx the fastest" % (" ".join(map(str, lines)), r)
                for r, lines in wide]
    return out


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
    ("GROUPED_GEMM_M0", 1024.0, (0.125, 0.25, 0.5, 1, 2, 4)),
    ("GEMM_K0", 680.0, (0.25, 0.5, 1, 1.5, 2)),
]
# --fit-fp8: Hopper's FP8 GEMMs' share of their peak against BF16's, on the
# dense FP8 rows of GPUs without block-scaled FP8 (MoE rows carry the
# grouped GEMMs' own constants; Blackwell's MXFP8 rows are priced at the
# BF16 share)
HOPPER = ("H100", "H800")
FIT_FP8 = [("FP8_GEMM_EFF", 0.85, (0.9, 0.95, 1.05, 1.1, 1.18))]
# --fit-gpu GB300: the sustained share of the datasheet's peak of a GPU no
# public GEMM benchmark measures (lib/gpu.c's table gives it its nearest
# relative's), on every describable row of that GPU, dense and MoE
FIT_GPU = {"GB300": [("GB300_GEMM_EFF", 0.75, (0.9, 0.95, 1.05, 1.1, 1.15, 1.2, 1.25, 1.3))]}


def ratios_of(rows, meshplan, models):
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


def fit(build, rows, models, space=FIT):
    values = {name: start for name, start, _ in space}
    meshplan = os.path.join(build, "tools", "meshplan")

    def trial(vals):
        flags = " ".join("-D%s=%.6g" % (k, v) for k, v in vals.items())
        for src in ("cost.c", "gpu.c"):
            os.utime(os.path.join(TOP, "lib", src))
        subprocess.run(["make", "-C", build, "-j2", "CPPFLAGS=" + flags], check=True,
                       capture_output=True)
        r = ratios_of(rows, meshplan, models)
        print("%-70s loss %.3f  %s" % (flags, loss(r), summary("rows", r)), flush=True)
        return loss(r)

    best = trial(values)
    for _ in range(2):
        for name, start, mults in space:
            base = values[name]
            for k in mults:
                if k == 1:
                    continue
                cand = dict(values, **{name: base * k if base else start * k})
                l = trial(cand)
                if l < best:
                    best, values = l, cand
    print("best: " + " ".join("%s=%.4g" % kv for kv in values.items()) + " loss %.3f" % best)


def evaluate(rows, meshplan, models):
    """Every row: (line, row, None, result) for a planned one, (line, row,
    reason, None) for one meshplan cannot describe."""
    out = []
    for i, row in enumerate(rows):
        reason = why_not(row)
        res = None if reason else predict(row, meshplan, models)
        if isinstance(res, str):
            reason, res = res, None
        out.append((i + 2, row, reason, res))
    return out


def check(results, minimum):
    """The test (tests/published): CMocka's result lines, one test a row
    (its published layout fits when pinned) and one a threshold (the share
    within 15% of dense and of MoE rows at least `minimum`'s, every row
    planned or listed with its reason).  Exits 1 after a failure."""
    passed, failed = 0, []

    def result(name, ok, why=""):
        nonlocal passed
        print("[ RUN      ] %s" % name)
        if ok:
            print("[       OK ] %s" % name)
            passed += 1
        else:
            print("%s\n[  FAILED  ] %s" % (why, name))
            failed.append(name)

    for line, row, reason, res in results:
        if not reason:
            result("row_%d_%s_fits" % (line, re.sub(r"\W", "_", row["name"])), res[0],
                   "the published layout %s does not fit" % layout_str(res[3]["layout"]))
    ratios = ratios_by_kind(results)
    for kind in KINDS:
        r = ratios[kind]
        share = sum(abs(x - 1) <= 0.15 for x in r) / len(r) if r else 0
        print("\n".join([summary(kind, r)] + ceiling_lines(kind, results, True)))
        result("%s_within_15_percent" % kind, bool(r) and share >= minimum[kind],
               "%s: %.0f%% of %d rows within 15%%, below %.0f%%" % (
                   kind, 100 * share, len(r), 100 * minimum[kind]))
        # the ceiling bounds what this model reaches, or it counts wrong
        reach, n, _ = ceiling(results, KINDS[kind])
        hit = sum(abs(x - 1) <= 0.15 for x in r)
        result("%s_ceiling_holds" % kind, n == len(r) and hit <= reach,
               "%s: %d of %d rows within 15%%, above the ceiling %d of %d" % (
                   kind, hit, len(r), reach, n))
    listed = sum(1 for _, _, reason, _ in results if reason)
    result("every_row_planned_or_listed", listed + len(ratios["dense"]) + len(ratios["moe"]) ==
           len(results), "rows lost")
    print("[==========] %d test(s) run." % (passed + len(failed)))
    print("[  PASSED  ] %d test(s)." % passed)
    if failed:
        print("[  FAILED  ] %d test(s), listed below:" % len(failed))
        for n in failed:
            print("[  FAILED  ] %s" % n)
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--meshplan", default=os.path.join(TOP, "b", "tools", "meshplan"))
    ap.add_argument("--csv", default=os.path.join(TOP, "tests", "fixtures",
                                                  "published_throughput_dev.csv"))
    ap.add_argument("--models-dir", default=os.path.join(TOP, "etc", "models"))
    ap.add_argument("-v", action="store_true", help="print every row")
    ap.add_argument("--fit", metavar="BUILD_DIR")
    ap.add_argument("--fit-current", action="store_true",
                    help="fit on the rows of the cited commit's release only")
    ap.add_argument("--fit-fp8", action="store_true",
                    help="fit FP8_GEMM_EFF on the dense FP8 rows instead")
    ap.add_argument("--fit-gpu", choices=sorted(FIT_GPU),
                    help="fit that GPU's GEMM share on its rows instead")
    ap.add_argument("--check", nargs=3, type=float, metavar=("DENSE", "MOE", "MOE_CURRENT"),
                    help="the test: shares within 15%% at least these (0-1); MOE_CURRENT "
                         "for the MoE rows of the cited commit's release")
    a = ap.parse_args()
    rows = list(csv.DictReader(open(a.csv, newline="")))
    if a.fit and a.fit_gpu:
        return fit(a.fit, [r for r in rows if not why_not(r) and r["gpu"] == a.fit_gpu],
                   a.models_dir, FIT_GPU[a.fit_gpu])
    if a.fit and a.fit_fp8:
        return fit(a.fit, [r for r in rows if not why_not(r) and r["name"] not in MOE and
                           r["precision"] == "FP8" and r["gpu"] in HOPPER], a.models_dir,
                   FIT_FP8)
    if a.fit:
        return fit(a.fit, [r for r in rows if not why_not(r) and r["name"] in MOE and
                           (current(r) or not a.fit_current)], a.models_dir)
    results = evaluate(rows, a.meshplan, a.models_dir)
    skipped = {}
    for line, row, reason, res in results:
        if reason:
            skipped.setdefault(reason, []).append(line)
            continue
        fits, pred, pub, d = res
        if a.v or a.check:
            c = d["cost"]
            print("%4d %-16s %-5s %4s %-4s %-28s fit=%d pub %6.0f pred %6.0f %.2f  comp %.1f tp %.1f "
                  "cp %.1f pp %.1f dp %.1f ep %.1f" % (
                      line, row["name"], row["gpu"], row["gpus"], row["precision"],
                      layout_str(d["layout"]),
                      fits, pub, pred, pred / pub, c["compute_seconds"], c["tp_comm_seconds"],
                      c["cp_comm_seconds"], c["pp_comm_seconds"], c["dp_comm_seconds"],
                      c.get("ep_comm_seconds", 0)))
    for reason, lines in sorted(skipped.items(), key=lambda kv: -len(kv[1])):
        print("not described (%d rows: %s): %s" % (len(lines), " ".join(map(str, lines[:12])) +
                                                   (" ..." if len(lines) > 12 else ""), reason))
    if a.check:
        return check(results, {"dense": a.check[0], "moe": a.check[1], "moe_current": a.check[2]})
    ratios = ratios_by_kind(results)
    for kind in KINDS:
        print("\n".join([summary(kind, ratios[kind])] + ceiling_lines(kind, results, a.v)))


if __name__ == "__main__":
    sys.exit(main())
