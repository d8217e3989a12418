/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reports: the explained plan as text (lib/report_json.c: as JSON), the
 * rank map, and the verdict.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "meshplan/env.h"
#include "meshplan/explain.h"
#include "meshplan/picture.h"
#include "meshplan/restart.h"
#include "meshplan/ranks.h"
#include "meshplan/report.h"
#include "meshplan/size.h"

/* 12.3 M, 456 k: for token counts and rates */
static const char *si(double v, char *buf, size_t len)
{
    if (v >= 1e12)
        snprintf(buf, len, "%.2f T", v / 1e12);
    else if (v >= 1e9)
        snprintf(buf, len, "%.2f B", v / 1e9);
    else if (v >= 1e6)
        snprintf(buf, len, "%.2f M", v / 1e6);
    else if (v >= 1e3)
        snprintf(buf, len, "%.1f k", v / 1e3);
    else
        snprintf(buf, len, "%.0f", v);
    return buf;
}

static const char *framework_title(mesh_framework_t f)
{
    return f == MESH_FW_DEEPSPEED ? "DeepSpeed" : f == MESH_FW_TORCH ? "PyTorch" : "Megatron-LM";
}

/* The experts, MLA and MTP layers of a model that has them, on a line of
 * their own. */
static void text_moe(mesh_buf_t *b, const mesh_model_t *m)
{
    const mesh_moe_t *e = &m->moe;
    if (!e->experts && !m->mla.kv_lora_rank && !m->mtp_layers)
        return;
    const char *sep = "\n         ";
    if (e->experts) {
        mesh_buf_printf(b, "%sMoE: %d experts of width %d, %d per token", sep, e->experts, e->ffn,
                        e->top_k);
        if (e->shared_experts)
            mesh_buf_printf(b, ", %d shared of width %d", e->shared_experts, e->shared_ffn);
        if (e->dense_layers == 1)
            mesh_buf_puts(b, ", the first layer dense");
        else if (e->dense_layers)
            mesh_buf_printf(b, ", the first %d layers dense", e->dense_layers);
        if (e->every > 1) /* the last of each `every` layers, as --moe-layer-freq says */
            mesh_buf_printf(b, ", on one layer in %d (%d of %d), the others dense", e->every,
                            mesh_model_moe_layers(m), m->layers);
        if (e->capacity_factor > 0)
            mesh_buf_printf(b, ", capacity factor %g (tokens beyond it dropped)",
                            e->capacity_factor);
        else
            mesh_buf_puts(b, ", dropless");
        sep = "; ";
    }
    if (m->mla.kv_lora_rank) {
        mesh_buf_printf(b, "%slatent attention (q rank %d, kv rank %d)", sep, m->mla.q_lora_rank,
                        m->mla.kv_lora_rank);
        sep = "; ";
    }
    /* published counts leave MTP out (DeepSeek-V3's 671 B): say how much of ours it is */
    char s1[32];
    if (m->mtp_layers)
        mesh_buf_printf(b, "%s%d MTP layer%s (%s of the parameters)", sep, m->mtp_layers,
                        m->mtp_layers == 1 ? "" : "s",
                        si(mesh_model_mtp_params(m), s1, sizeof(s1)));
}

static void text_header(mesh_buf_t *b, const mesh_plan_t *p)
{
    const mesh_model_t *m = mesh_plan_model(p);
    const mesh_alloc_t *a = mesh_plan_alloc(p);
    const mesh_memory_t *mem = &mesh_plan_best(p)->memory;
    char s1[32], s2[32];
    mesh_buf_printf(b, "model    %s: %s parameters", m->name, si(m->params, s1, sizeof(s1)));
    if (mesh_model_active_params(m) != m->params)
        mesh_buf_printf(b, ", %s active", si(mesh_model_active_params(m), s2, sizeof(s2)));
    if (m->has_arch)
        mesh_buf_printf(b, " (%d %s, hidden %d, %d %s, %d KV %s, ffn %d, vocab %d, %s)", m->layers,
                        mesh_noun(m->layers, "layer", "layers"), m->hidden, m->heads,
                        mesh_noun(m->heads, "head", "heads"), m->kv_heads,
                        mesh_noun(m->kv_heads, "head", "heads"), m->ffn, m->vocab,
                        mesh_style(m)->label);
    else
        mesh_buf_puts(b, " (no arch: model states only, no activations)");
    text_moe(b, m);
    mesh_buf_printf(b, "\ntraining seq %d, global batch %ld sequences (%s tokens), %s", m->seq_len,
                    m->global_batch, si((double)m->global_batch * m->seq_len, s2, sizeof(s2)),
                    mesh_precision_name(m->precision));
    if (m->precision == MESH_PREC_FP8)
        mesh_buf_printf(b, " (%s scaling)", mesh_fp8_recipe_name(m->fp8_recipe));
    mesh_buf_printf(b, ", %s gradients, %s%s%s\n", mesh_precision_name(m->grad_accum_dtype),
                    mesh_optimizer_name(m->optimizer),
                    m->finetune == MESH_FINETUNE_LORA ? ", LoRA" : "",
                    m->flash_attention ? ", FlashAttention" : "");
    mesh_buf_printf(b,
                    "on       %d %s x %d %s %s (%ld in all), %s GiB each, %s GiB "
                    "usable, NVLink island %d",
                    a->nodes, mesh_noun(a->nodes, "node", "nodes"), a->gpus_per_node, a->gpu.name,
                    mesh_noun(a->gpus_per_node, "GPU", "GPUs"), mesh_world(a),
                    mesh_gib_str(a->gpu.memory).s, mesh_gib_str(mem->capacity).s, a->island);
    /* TP may span the trays of a fabric (mesh_tp_on_nvlink): say so */
    if (mesh_fabric_across_trays(a))
        mesh_buf_printf(b, " on a fabric of %ld across trays", mesh_fabric_across_trays(a));
    mesh_buf_puts(b, "\n");
    if (strcmp(a->gpu.name, MESH_GPU_GENERIC) == 0)
        mesh_buf_printf(b,
                        "         (a generic GPU: speeds of %s assumed; --gpu NAME is "
                        "more precise)\n",
                        mesh_gpu_default()->name);
}

/* TP's communication overlap, off in layout l of plan p: on a GPU before
 * Ampere (no Transformer Engine: mesh_plan_create), pinned so, or turned
 * off by the planner where its Userbuffers were what did not fit. */
static void tp_overlap_line(mesh_buf_t *b, const mesh_plan_t *p, const mesh_layout_t *l)
{
    mesh_layout_t on = *l;
    on.tp_overlap_off = 0;
    double ub = mesh_tp_overlap_buffers(mesh_plan_model(p), &on);
    if (l->tp_overlap_off != 1 || ub <= 0)
        return;
    if (!mesh_plan_alloc(p)->gpu.has_bf16)
        mesh_buf_printf(b,
                        "  tp_overlap: off: %s runs no Transformer Engine (Ampere and later), so "
                        "TP's collectives are not hidden behind the GEMMs\n",
                        mesh_plan_alloc(p)->gpu.name);
    else if (mesh_plan_pins_of(p)->tp_overlap_off == 1)
        mesh_buf_puts(b, "  tp_overlap: off, as pinned: TP's collectives are not hidden behind "
                         "the GEMMs\n");
    else
        mesh_buf_printf(b,
                        "  tp_overlap: off: --tp-comm-overlap's Userbuffers (%s GiB) do not fit, "
                        "so TP's collectives are not hidden behind the GEMMs\n",
                        mesh_gib_str(ub).s);
}

static void text_layout(mesh_buf_t *b, const mesh_plan_t *p)
{
    const mesh_candidate_t *c = mesh_plan_best(p);
    const mesh_layout_t *l = &c->layout;
    const mesh_model_t *m = mesh_plan_model(p);
    char canon[MESH_LAYOUT_STR_MAX];
    mesh_buf_printf(b, "\n%s\n",
                    mesh_plan_fits(p) ? "Layout (fits)" : "Closest layout (DOES NOT FIT)");
    mesh_buf_puts(b, "  TP  CP  PP   DP  ZeRO  VPP  micro-batch  micro-batches  recompute  SP\n");
    char rc[48];
    mesh_buf_printf(b, "  %2d  %2d  %2d  %3d  %4d  %3d  %11d  %13ld  %9s  %s\n", l->tp, l->cp,
                    l->pp, l->dp, l->zero, l->vpp, l->micro_batch, c->micro_batches,
                    mesh_recompute_name(l->recompute), l->sequence_parallel ? "on" : "off");
    if (l->recompute == MESH_RECOMPUTE_SELECTIVE && l->recompute_modules > 0)
        mesh_buf_printf(
            b, "  recompute: selective, of %s\n",
            mesh_recompute_modules_name((unsigned)l->recompute_modules, rc, sizeof(rc)));
    if (l->recompute == MESH_RECOMPUTE_FULL && l->recompute_layers > 0)
        mesh_buf_printf(b,
                        "  recompute: the first %d %s of each stage in full, the rest "
                        "none (the fewest that fit)\n",
                        l->recompute_layers, mesh_noun(l->recompute_layers, "layer", "layers"));
    if (l->offload)
        mesh_buf_puts(b, "  offload: the optimizer states and master weights live in host "
                         "memory, updated by the CPU\n");
    if (l->moments != MESH_PREC_FP32)
        mesh_buf_printf(b, "  moments: Adam's two moments in %s (%s)\n",
                        mesh_precision_name(l->moments),
                        l->moments == m->optimizer_dtype ? "train.optimizer_dtype allows it"
                                                         : "the pinned moments field");
    tp_overlap_line(b, p, l);
    if (l->ep > 0)
        mesh_buf_printf(b,
                        "  experts: EP %d, expert TP %d, expert DP %ld (each stage's %ld %s "
                        "re-partitioned), %d of %d experts per rank\n",
                        l->ep, l->etp, mesh_layout_edp(l), (long)l->tp * l->cp * l->dp,
                        mesh_noun((long)l->tp * l->cp * l->dp, "rank", "ranks"),
                        m->moe.experts / l->ep, m->moe.experts);
    mesh_buf_printf(b, "  --mesh %s\n", mesh_layout_format(l, canon, sizeof(canon)));
    if (m->has_arch && l->pp > 1) {
        mesh_buf_puts(b, "  layers per stage:");
        for (int i = 0; i < l->pp && i < 32; i++)
            mesh_buf_printf(b, "%s%d", i ? "," : " ", mesh_pp_stage_layers(m, l, i));
        mesh_buf_puts(b, l->pp > 32 ? ",...\n" : "\n");
    }
}

/* A tight plan's warning, and what room would cost (mesh_plan_tight). */
static void text_tight(mesh_buf_t *b, const mesh_plan_t *p)
{
    const mesh_candidate_t *best = mesh_plan_best(p), *r;
    if (!mesh_plan_tight(p, &r))
        return;
    double ask = MESH_PLAN_ROOM;
    mesh_buf_printf(b,
                    "  tight: above %.0f%% of usable memory, little room for what no model "
                    "counts\n",
                    100 * MESH_PLAN_FULL);
    if (!r) {
        mesh_buf_printf(b,
                        "    no layout of this allocation leaves %s free: more nodes "
                        "would (meshplan size)\n",
                        mesh_pct_str(ask).s);
        return;
    }
    char canon[MESH_LAYOUT_STR_MAX];
    mesh_buf_printf(b, "    with %s left free: %s, %s GiB (%.0f%%), step %+.1f%%\n",
                    mesh_pct_str(ask).s, mesh_layout_format(&r->layout, canon, sizeof(canon)),
                    mesh_gib_str(r->memory.total).s, 100 * r->memory.total / r->memory.capacity,
                    100 * (r->cost.step_seconds / best->cost.step_seconds - 1));
    mesh_buf_printf(b,
                    "    ask for it with meshplan --headroom %.2g, sbatch --mesh-headroom=%.2g or "
                    "train.headroom: %.2g\n",
                    ask, ask, ask);
}

static void text_memory(mesh_buf_t *b, const mesh_plan_t *p)
{
    const mesh_memory_t *mem = &mesh_plan_best(p)->memory;
    const mesh_layout_t *l = &mesh_plan_best(p)->layout;
    const mesh_model_t *m = mesh_plan_model(p);
    mesh_buf_printf(
        b, "\nMemory per GPU (worst rank: pipeline stage %d of %d, as %s allocates it%s)\n",
        mem->stage, l->pp, framework_title(mem->framework),
        m->framework == MESH_FW_AUTO ? ": of the frameworks exported, it needs the most" : "");
    for (int i = 0; i < MESH_MEMORY_PARTS; i++)
        mesh_buf_printf(b, "  %-12s %8s GiB\n", mesh_memory_part(i)->label,
                        mesh_gib_str(mesh_memory_part_bytes(mem, i)).s);
    double room = mesh_plan_assumptions(p)->headroom;
    char kept[48] = "";
    if (room > 0)
        snprintf(kept, sizeof(kept), "; %s more kept free as headroom", mesh_pct_str(room).s);
    mesh_buf_printf(b, "  %-12s %8s GiB of %s GiB usable (%.0f%%%s)\n", "total",
                    mesh_gib_str(mem->total).s, mesh_gib_str(mem->capacity).s,
                    100 * mem->total / mem->capacity, kept);
    if (mem->host > 0) {
        const mesh_alloc_t *a = mesh_plan_alloc(p);
        mesh_buf_printf(b,
                        "  %-12s %8s GiB per task in host memory, %s GiB per node of %s GiB "
                        "usable (%.0f%% of %s GiB)\n",
                        "offloaded", mesh_gib_str(mem->host).s,
                        mesh_gib_str(mem->host * a->gpus_per_node).s,
                        mesh_gib_str(MESH_HOST_USABLE * a->host_memory).s, 100 * MESH_HOST_USABLE,
                        mesh_gib_str(a->host_memory).s);
    }
    text_tight(b, p);
}

/* The run-time estimate's line, for a spec with a budget, and the time
 * limit it asks for with the policy's margin. */
static void text_estimate(mesh_buf_t *b, const mesh_model_t *m, const mesh_cost_t *c, double margin)
{
    mesh_estimate_t est;
    char tok[32], limit[32];
    if (!mesh_size_estimate(m, c, &est))
        return;
    long minutes = mesh_size_limit_minutes(&est, margin);
    mesh_buf_printf(b,
                    "Estimated run %s (%ld s): %ld steps of %.3g s, %s tokens (%s); with the "
                    "%s margin (time_margin): --time=%s\n",
                    mesh_duration_str(est.seconds).s, mesh_ceil_long(est.seconds), est.steps,
                    c->step_seconds, si(est.tokens, tok, sizeof(tok)),
                    m->steps ? "train.steps" : "train.tokens", mesh_pct_str(margin).s,
                    mesh_size_slurm_time(minutes, limit, sizeof(limit)));
}

static void text_cost(mesh_buf_t *b, const mesh_plan_t *p)
{
    const mesh_cost_t *c = &mesh_plan_best(p)->cost;
    char s1[32];
    mesh_buf_printf(b, "\nEstimated step %.3g s, %s tokens/s, %.0f TFLOP/s per GPU, MFU %.1f%%",
                    c->step_seconds, si(c->tokens_per_sec, s1, sizeof(s1)), c->tflops_per_gpu,
                    100 * c->mfu);
    /* MFU is against the peak of the precision trained in: under FP8 the
     * GPU's FP8 peak (twice the bf16 one on H100), so say which, or 12%
     * reads as a broken run */
    if (mesh_plan_model(p)->precision == MESH_PREC_FP8 && mesh_plan_alloc(p)->gpu.peak_flops > 0)
        mesh_buf_printf(b, " of the FP8 peak (%.1f%% of the bf16 one)",
                        100 * c->tflops_per_gpu * 1e12 / mesh_plan_alloc(p)->gpu.peak_flops);
    mesh_buf_puts(b, "\n");
    mesh_buf_printf(b,
                    "  compute %.3g s (bubble %.1f%%), TP comm %.3g s, CP comm %.3g s, PP comm "
                    "%.3g s, DP/ZeRO exposed %.3g s, optimizer %.3g s\n",
                    c->compute_s, 100 * c->bubble, c->tp_comm_s, c->cp_comm_s, c->pp_comm_s,
                    c->dp_comm_s, c->optimizer_s);
    const mesh_layout_t *l = &mesh_plan_best(p)->layout;
    const mesh_model_t *m = mesh_plan_model(p);
    int deepep = mesh_overlap_on(m, l, MESH_OVERLAP_DEEPEP);
    if (l->ep > 0) /* the dispatcher and overlap the flags turn on (lib/overlap.c) */
        mesh_buf_printf(b, "  EP all-to-all %.3g s (%stoken dispatch and combine, %s)\n",
                        c->ep_comm_s, deepep ? "DeepEP's " : "",
                        mesh_overlap_on(m, l, MESH_OVERLAP_MOE_A2A)
                            ? "the part another micro-batch's compute leaves exposed"
                            : "not overlapped");
    /* asked for DeepEP, and the plan's EP group is one it has no
     * configuration for (lib/overlap.c): the all-to-all runs it */
    if (l->ep > 1 && m->dispatcher == MESH_DISPATCHER_DEEPEP &&
        !mesh_deepep_config(mesh_ep_span(l)))
        mesh_buf_printf(b,
                        "  DeepEP not used: it has no configuration for an EP group of %ld GPUs "
                        "(deep_ep/buffer.py); Megatron-LM's alltoall dispatcher runs this one\n",
                        mesh_ep_span(l));
    const mesh_calib_gpu_t *cal = mesh_plan_calibration(p);
    char sum[400];
    if (cal)
        mesh_buf_printf(
            b, "  %s\n",
            mesh_calib_summary(cal, mesh_plan_assumptions(p)->calibration.path, sum, sizeof(sum)));
    text_estimate(b, mesh_plan_model(p), c, mesh_plan_assumptions(p)->time_margin);
}

/* The line MESH_MEGATRON_ARGS carries, for a layout that fits, wrapped
 * for a shell: flags with their values kept together, lines ending in a
 * backslash. */
#define WRAP_COLUMNS 100

/* Append the n bytes of words at w to b (NULL: only count them), each
 * after a space, single-quoted where a shell would read it otherwise
 * (MoE's "--moe-layer-freq ([0]*3+[1]*58)": '(' is syntax to a shell), so
 * that the printed line can be pasted; the variable itself is split by the
 * shell without re-parsing and stays unquoted.  Returns the columns they
 * take, spaces and quotes included. */
static size_t shell_words(mesh_buf_t *b, const char *w, size_t n)
{
    size_t cols = 0;
    for (size_t i = 0; i < n;) {
        size_t len = strcspn(w + i, " ");
        len = len > n - i ? n - i : len;
        int plain = 1;
        for (size_t k = 0; k < len; k++)
            plain &= isalnum((unsigned char)w[i + k]) || strchr("_+=.,:/@%-", w[i + k]) != NULL;
        if (b)
            mesh_buf_printf(b, plain ? " %.*s" : " '%.*s'", (int)len, w + i);
        cols += 1 + len + (plain ? 0 : 2);
        i += len + 1;
    }
    return cols;
}

static void text_megatron(mesh_buf_t *b, const mesh_plan_t *p)
{
    if (!mesh_plan_fits(p))
        return;
    const char *why = mesh_megatron_withheld(mesh_plan_model(p));
    if (why) {
        mesh_buf_printf(b, "\nMegatron-LM: MESH_MEGATRON_ARGS is not exported: %s\n", why);
        return;
    }
    mesh_buf_t args;
    mesh_buf_init(&args);
    mesh_megatron_args(mesh_plan_model(p), &mesh_plan_best(p)->layout, &mesh_plan_alloc(p)->gpu,
                       &args);
    char *line = mesh_buf_take(&args);
    if (!line) {
        b->failed = 1;
        return;
    }
    mesh_buf_puts(b,
                  "\nMegatron-LM (MESH_MEGATRON_ARGS; data, tokenizer and schedule are yours)\n ");
    size_t col = 1;
    for (char *c = line; *c;) {
        /* one flag and its values: up to the next " --" */
        char *next = strstr(c + 1, " --");
        size_t len = next ? (size_t)(next - c) : strlen(c);
        /* it and, unless it is the last, the " \" that would follow it */
        if (col > 1 && col + shell_words(NULL, c, len) + (next ? 2 : 0) > WRAP_COLUMNS) {
            mesh_buf_puts(b, " \\\n ");
            col = 1;
        }
        col += shell_words(b, c, len);
        c = next ? next + 1 : c + len;
    }
    mesh_buf_puts(b, "\n");
    free(line);
    int conn = mesh_megatron_max_connections(mesh_plan_model(p), &mesh_plan_best(p)->layout,
                                             &mesh_plan_alloc(p)->gpu);
    if (conn)
        mesh_buf_printf(b, "  with %s=%d in the environment (exported)\n", MESH_ENV_MAX_CONNECTIONS,
                        conn);
}

static void text_lists(mesh_buf_t *b, const mesh_plan_t *p)
{
    char canon[MESH_LAYOUT_STR_MAX];
    int n = mesh_plan_alternative_count(p), lw = 64;
    /* the layout column is as wide as the longest layout (a MoE one's ep=
     * and etp= run past a dense one's 64 columns), so the others align */
    for (int i = 0; i < n; i++) {
        int len = (int)strlen(
            mesh_layout_format(&mesh_plan_alternative(p, i)->layout, canon, sizeof(canon)));
        lw = len > lw ? len : lw;
    }
    if (n > 0) {
        mesh_buf_printf(b, "\nRunners-up\n  %-*s %9s %10s %6s\n", lw, "layout", "step", "memory",
                        "MFU");
        for (int i = 0; i < n; i++) {
            const mesh_candidate_t *c = mesh_plan_alternative(p, i);
            mesh_buf_printf(b, "  %-*s %7.3g s %6s GiB %5.1f%%\n", lw,
                            mesh_layout_format(&c->layout, canon, sizeof(canon)),
                            c->cost.step_seconds, mesh_gib_str(c->memory.total).s,
                            100 * c->cost.mfu);
        }
    }
    if ((n = mesh_plan_reason_count(p)) > 0) {
        mesh_buf_puts(b, mesh_plan_fits(p) ? "\nWhy not simpler\n" : "\nWhy it does not fit\n");
        for (int i = 0; i < n; i++)
            mesh_buf_printf(b, "  - %s\n", mesh_plan_reason(p, i));
    }
    const char *tie = mesh_plan_near_tie_line(p);
    if (tie)
        mesh_buf_printf(b, "\nWhy not the fastest\n  - %s\n", tie);
    if ((n = mesh_plan_advice_count(p)) > 0) {
        mesh_buf_puts(b, "\nWhat would fit\n");
        for (int i = 0; i < n; i++)
            mesh_buf_printf(b, "  - %s\n", mesh_plan_advice(p, i));
    }
}

char *mesh_report_text(const mesh_plan_t *p)
{
    mesh_buf_t b;
    mesh_buf_init(&b);
    text_header(&b, p);
    text_layout(&b, p);
    text_memory(&b, p);
    text_cost(&b, p);
    text_megatron(&b, p);
    text_lists(&b, p);
    return mesh_buf_take(&b);
}

char *mesh_report_explained(const mesh_plan_t *p, const mesh_restart_t *restart,
                            const mesh_picture_opts_t *po)
{
    char *text = mesh_report_text(p), *rs = restart ? mesh_restart_text(restart, p) : NULL;
    char *pics = po ? mesh_picture_text(p, po) : NULL;
    mesh_buf_t b;
    mesh_buf_init(&b);
    if (!text || (restart && !rs) || (po && !pics))
        b.failed = 1;
    else
        mesh_buf_printf(&b, "%s%s%s%s%s", text, rs ? "\n" : "", rs ? rs : "", pics ? "\n" : "",
                        pics ? pics : "");
    free(text);
    free(rs);
    free(pics);
    return mesh_buf_take(&b);
}

/* ---- rank map ---- */

char *mesh_report_ranks_text(const mesh_plan_t *p)
{
    const mesh_alloc_t *a = mesh_plan_alloc(p);
    const mesh_layout_t *l = &mesh_plan_best(p)->layout;
    char canon[MESH_LAYOUT_STR_MAX];
    mesh_buf_t b;
    mesh_buf_init(&b);
    mesh_buf_printf(&b, "rank map of %s, order %s (rank = tp + t*(cp + c*(dp + d*pp)))\n",
                    mesh_layout_format(l, canon, sizeof(canon)), MESH_ORDER);
    if (l->ep > 0)
        mesh_buf_puts(&b, "expert layers: stage rank = etp + T*(ep + E*edp) (Megatron-Core's "
                          "expert rank generator)\n");
    mesh_buf_printf(&b, "   rank  node  local    tp   cp    dp    pp%s\n",
                    l->ep > 0 ? "    ep  etp   edp" : "");
    long world = mesh_world(a);
    for (long r = 0; r < world; r++) {
        mesh_coords_t c = mesh_rank_coords(l, r);
        mesh_buf_printf(&b, "  %5ld  %4ld  %5ld  %4d %4d  %4d  %4d", r, r / a->gpus_per_node,
                        r % a->gpus_per_node, c.tp, c.cp, c.dp, c.pp);
        if (l->ep > 0)
            mesh_buf_printf(&b, "  %4d %4d  %4d", c.ep, c.etp, c.edp);
        mesh_buf_puts(&b, "\n");
    }
    return mesh_buf_take(&b);
}

mesh_verdict_t mesh_plan_verdict(const mesh_plan_t *p, mesh_enforce_t enforce, char *msg,
                                 size_t len)
{
    msg[0] = '\0';
    if (mesh_plan_fits(p) || enforce == MESH_ENFORCE_OFF)
        return MESH_VERDICT_RUN;
    mesh_report_nofit(p, msg, len);
    return enforce == MESH_ENFORCE_WARN ? MESH_VERDICT_WARN : MESH_VERDICT_REFUSE;
}

char *mesh_json_string(const char *s)
{
    mesh_buf_t b;
    mesh_buf_init(&b);
    mesh_buf_json_string(&b, s);
    return mesh_buf_take(&b);
}

char *mesh_report_ranks_json(const mesh_plan_t *p)
{
    const mesh_alloc_t *a = mesh_plan_alloc(p);
    const mesh_layout_t *l = &mesh_plan_best(p)->layout;
    char canon[MESH_LAYOUT_STR_MAX];
    mesh_buf_t b;
    mesh_buf_init(&b);
    mesh_buf_printf(&b, "{\"order\":\"%s\",\"mesh\":\"%s\",\"ranks\":[", MESH_ORDER,
                    mesh_layout_format(l, canon, sizeof(canon)));
    long world = mesh_world(a);
    for (long r = 0; r < world; r++) {
        mesh_coords_t c = mesh_rank_coords(l, r);
        mesh_buf_printf(&b,
                        "%s{\"rank\":%ld,\"node\":%ld,\"local\":%ld,\"tp\":%d,\"cp\":%d,"
                        "\"dp\":%d,\"pp\":%d",
                        r ? "," : "", r, r / a->gpus_per_node, r % a->gpus_per_node, c.tp, c.cp,
                        c.dp, c.pp);
        if (l->ep > 0)
            mesh_buf_printf(&b, ",\"ep\":%d,\"etp\":%d,\"edp\":%d", c.ep, c.etp, c.edp);
        mesh_buf_puts(&b, "}");
    }
    mesh_buf_puts(&b, "]}\n");
    return mesh_buf_take(&b);
}

const char *mesh_report_nofit(const mesh_plan_t *p, char *buf, size_t len)
{
    const mesh_candidate_t *c = mesh_plan_best(p);
    const mesh_alloc_t *a = mesh_plan_alloc(p);
    char canon[MESH_LAYOUT_STR_MAX];
    int n = snprintf(buf, len,
                     "%s does not fit on %d x %d %s GPUs: the closest layout (%s) needs %s GiB "
                     "per GPU > %s GiB usable",
                     mesh_plan_model(p)->name, a->nodes, a->gpus_per_node, a->gpu.name,
                     mesh_layout_format(&c->layout, canon, sizeof(canon)),
                     mesh_gib_str(c->memory.total).s, mesh_gib_str(c->memory.capacity).s);
    for (int i = 0; i < mesh_plan_advice_count(p) && n > 0 && (size_t)n < len; i++)
        n += snprintf(buf + n, len - (size_t)n, "\nwhat would fit: %s", mesh_plan_advice(p, i));
    return buf;
}
