/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The explained plan as JSON (mesh_report_json): what lib/report.c's text
 * says, as records a program reads (`meshplan plan --json`).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "meshplan/env.h"
#include "meshplan/explain.h"
#include "meshplan/report.h"
#include "meshplan/size.h"

/* Key k's value in the JSON layout: numbers, booleans and names (recompute
 * by its name alone: recompute_layers follows it). */
static void json_key(mesh_buf_t *b, const mesh_layout_t *l, const mesh_layout_key_t *k)
{
    int v = mesh_layout_value(l, k);
    mesh_buf_printf(b, "\"%s\":", k->json);
    switch (k->kind) {
    case MK_INT: mesh_buf_printf(b, "%d", v); break;
    case MK_RECOMPUTE:
        mesh_buf_printf(b, "\"%s\"", mesh_recompute_name((mesh_recompute_t)v));
        break;
    case MK_SP: mesh_buf_puts(b, v ? "true" : "false"); break;
    case MK_OFFLOAD: mesh_buf_puts(b, v ? "\"optimizer\"" : "\"none\""); break;
    case MK_OVERLAP: mesh_buf_puts(b, v ? "false" : "true"); break;
    case MK_MOMENTS: mesh_buf_printf(b, "\"%s\"", mesh_precision_name((mesh_precision_t)v)); break;
    }
}

/* The layout's keys (lib/layout.c's table; a dense layout's experts left
 * out, so that it reads as it always did), each followed by what derives
 * from it, and the canonical string. */
static void json_layout(mesh_buf_t *b, const mesh_candidate_t *c, long global_batch)
{
    const mesh_layout_t *l = &c->layout;
    char canon[MESH_LAYOUT_STR_MAX];
    for (int i = 0; i < MESH_LAYOUT_KEYS; i++) {
        const mesh_layout_key_t *k = &mesh_layout_keys[i];
        if (!(k->flags & MK_JSON_ALWAYS) && !mesh_layout_key_shown(l, k))
            continue;
        mesh_buf_puts(b, i ? "," : "{");
        json_key(b, l, k);
        if (k->off == offsetof(mesh_layout_t, etp))
            mesh_buf_printf(b, ",\"edp\":%ld", mesh_layout_edp(l));
        else if (k->off == offsetof(mesh_layout_t, micro_batch))
            mesh_buf_printf(b, ",\"micro_batches\":%ld,\"global_batch\":%ld", c->micro_batches,
                            global_batch);
        else if (k->off == offsetof(mesh_layout_t, recompute))
            mesh_buf_printf(b, ",\"recompute_layers\":%d", l->recompute_layers);
    }
    mesh_buf_printf(b, ",\"mesh\":\"%s\"}", mesh_layout_format(l, canon, sizeof(canon)));
}

static void json_memory(mesh_buf_t *b, const mesh_memory_t *m)
{
    for (int i = 0; i < MESH_MEMORY_PARTS; i++)
        mesh_buf_printf(b, "%s\"%s\":%.0f", i ? "," : "{", mesh_memory_part(i)->key,
                        mesh_memory_part_bytes(m, i));
    mesh_buf_printf(
        b, ",\"total\":%.0f,\"capacity\":%.0f,\"stage\":%d,\"host\":%.0f,\"framework\":\"%s\"}",
        m->total, m->capacity, m->stage, m->host, mesh_framework_name(m->framework));
}

static void json_candidate(mesh_buf_t *b, const mesh_candidate_t *c, const mesh_model_t *m,
                           double margin)
{
    long global_batch = m->global_batch;
    mesh_estimate_t est;
    const mesh_cost_t *k = &c->cost;
    mesh_buf_printf(b, "\"fits\":%s,\"layout\":", c->fits ? "true" : "false");
    json_layout(b, c, global_batch);
    mesh_buf_puts(b, ",\"memory\":");
    json_memory(b, &c->memory);
    mesh_buf_printf(b,
                    ",\"cost\":{\"step_seconds\":%.6g,\"bubble\":%.6g,\"tflops_per_gpu\":%.6g,"
                    "\"mfu\":%.6g,\"tokens_per_second\":%.6g,\"compute_seconds\":%.6g,"
                    "\"tp_comm_seconds\":%.6g,\"cp_comm_seconds\":%.6g,\"pp_comm_seconds\":%.6g,"
                    "\"dp_comm_seconds\":%.6g,\"optimizer_seconds\":%.6g",
                    k->step_seconds, k->bubble, k->tflops_per_gpu, k->mfu, k->tokens_per_sec,
                    k->compute_s, k->tp_comm_s, k->cp_comm_s, k->pp_comm_s, k->dp_comm_s,
                    k->optimizer_s);
    if (c->layout.ep > 0) /* a MoE layout's: a dense one's object reads as it always did */
        mesh_buf_printf(b, ",\"ep_comm_seconds\":%.6g,\"ep_dispatcher\":\"%s\"", k->ep_comm_s,
                        mesh_overlap_on(m, &c->layout, MESH_OVERLAP_DEEPEP) ? "deepep"
                                                                            : "alltoall");
    if (mesh_size_estimate(m, k, &est)) /* a spec with a budget's: additive keys */
        mesh_buf_printf(b,
                        ",\"steps\":%ld,\"tokens\":%.17g,\"estimated_seconds\":%.6g,"
                        "\"time_margin\":%.6g,\"time_limit_minutes\":%ld",
                        est.steps, est.tokens, est.seconds, margin,
                        mesh_size_limit_minutes(&est, margin));
    mesh_buf_puts(b, "}");
}

static void json_strings(mesh_buf_t *b, const char *key, int n,
                         const char *(*get)(const mesh_plan_t *, int), const mesh_plan_t *p)
{
    mesh_buf_printf(b, ",\"%s\":[", key);
    for (int i = 0; i < n; i++) {
        if (i)
            mesh_buf_puts(b, ",");
        mesh_buf_json_string(b, get(p, i));
    }
    mesh_buf_puts(b, "]");
}

/* The records' kinds as the JSON names them, in the enums' order. */
static const char *const reason_kinds[] = {"slower", "memory",   "rule",    "pinned",
                                           "no_fit", "near_tie", "experts", "untried"};
static const char *const tie_rules[] = {"simpler", "headroom"};
static const char *const untaken_words[] = {"", "near_tie", "nvlink_first", "smallest_across"};
static const char *const advice_kinds[] = {"unpin",        "unpin_all", "nodes",
                                           "out_of_reach", "lora",      "lora_nodes",
                                           "offload",      "bf16",      "bf16_nodes"};
_Static_assert(MESH_ARRAY_LEN(reason_kinds) == MESH_REASON_UNTRIED + 1, "a name per reason kind");
_Static_assert(MESH_ARRAY_LEN(tie_rules) == MESH_TIE_HEADROOM + 1, "a name per near-tie rule");
_Static_assert(MESH_ARRAY_LEN(untaken_words) == MESH_EP_UNTAKEN_SMALLEST_ACROSS + 1,
               "a name per reason an EP was not taken");
_Static_assert(MESH_ARRAY_LEN(advice_kinds) == MESH_ADVICE_BF16_NODES + 1,
               "a name per advice kind");

/* A record's priced layout: the layout, its memory, and its need against
 * the usable memory (bytes per GPU). */
static void json_priced(mesh_buf_t *b, const mesh_candidate_t *c, long global_batch)
{
    mesh_buf_puts(b, ",\"layout\":");
    json_layout(b, c, global_batch);
    mesh_buf_puts(b, ",\"memory\":");
    json_memory(b, &c->memory);
    mesh_buf_printf(b, ",\"need\":%.0f,\"have\":%.0f", c->memory.total, c->memory.capacity);
}

/* A reason record; with its line when `line` is not NULL. */
static void json_reason(mesh_buf_t *b, const mesh_reason_t *r, long global_batch, const char *line)
{
    mesh_buf_printf(b, "{\"kind\":\"%s\",\"family\":\"%s\"", reason_kinds[r->kind],
                    mesh_family_name(r->family));
    int experts = r->kind == MESH_REASON_EXPERTS;
    if (r->kind == MESH_REASON_RULE || (experts && r->rule[0])) {
        mesh_buf_puts(b, ",\"layout\":");
        json_layout(b, &r->candidate, global_batch);
        mesh_buf_puts(b, ",\"rule\":");
        mesh_buf_json_string(b, r->rule);
    } else if (r->kind == MESH_REASON_UNTRIED) {
        mesh_buf_puts(b, ",\"rule\":");
        mesh_buf_json_string(b, r->rule);
    } else if (r->kind != MESH_REASON_PINNED) {
        json_priced(b, &r->candidate, global_batch);
    }
    if (r->kind == MESH_REASON_SLOWER || r->kind == MESH_REASON_NEAR_TIE ||
        (experts && r->candidate.fits))
        mesh_buf_printf(b, ",\"step_seconds\":%.6g,\"best_step_seconds\":%.6g",
                        r->candidate.cost.step_seconds, r->best_seconds);
    if (r->kind == MESH_REASON_NEAR_TIE)
        mesh_buf_printf(b, ",\"best_need\":%.0f,\"decided_by\":\"%s\"", r->best_bytes,
                        tie_rules[r->tie]);
    if (r->kind == MESH_REASON_NEAR_TIE && r->tie == MESH_TIE_HEADROOM)
        mesh_buf_printf(b, ",\"simplest_share\":%.4g", r->tight_share);
    if (experts)
        mesh_buf_printf(b,
                        ",\"chosen\":%s,\"ep\":%d,\"ep_nodes\":%d,\"ep_fabric\":%s,"
                        "\"ep_nvlink\":%s",
                        r->chosen ? "true" : "false", r->candidate.layout.ep, r->ep_nodes,
                        r->ep_fabric ? "true" : "false", r->ep_nvlink ? "true" : "false");
    if (experts && r->untaken != MESH_EP_UNTAKEN_NONE)
        mesh_buf_printf(b, ",\"untaken\":\"%s\"", untaken_words[r->untaken]);
    if (line) {
        mesh_buf_puts(b, ",\"line\":");
        mesh_buf_json_string(b, line);
    }
    mesh_buf_puts(b, "}");
}

static void json_advice(mesh_buf_t *b, const mesh_advice_t *a, long global_batch)
{
    mesh_buf_printf(b, "{\"kind\":\"%s\"", advice_kinds[a->kind]);
    if (a->kind == MESH_ADVICE_OUT_OF_REACH)
        mesh_buf_printf(b, ",\"bytes_per_parameter\":%.6g,\"need\":%.0f,\"have\":%.0f",
                        a->bytes_per_param, a->states, a->usable);
    else
        json_priced(b, &a->candidate, global_batch);
    if (a->kind == MESH_ADVICE_UNPIN && strcmp(a->field, "recompute") == 0)
        mesh_buf_printf(b, ",\"field\":\"%s\",\"pinned\":\"%s\",\"value\":\"%s\"", a->field,
                        mesh_recompute_name((mesh_recompute_t)a->pinned),
                        mesh_recompute_name((mesh_recompute_t)a->value));
    else if (a->kind == MESH_ADVICE_UNPIN)
        mesh_buf_printf(b, ",\"field\":\"%s\",\"pinned\":%d,\"value\":%d", a->field, a->pinned,
                        a->value);
    if (a->kind == MESH_ADVICE_NODES || a->kind == MESH_ADVICE_LORA_NODES ||
        a->kind == MESH_ADVICE_BF16_NODES)
        mesh_buf_printf(b, ",\"nodes\":%d,\"gpus\":%d", a->nodes, a->gpus);
    if (a->kind == MESH_ADVICE_OFFLOAD)
        mesh_buf_printf(b, ",\"host_memory_bytes\":%.0f", a->host_memory);
    if (a->bf16)
        mesh_buf_puts(b, ",\"precision\":\"bf16\"");
    mesh_buf_puts(b, "}");
}

/* Why not the fastest: the record and its line, or null. */
static void json_near_tie(mesh_buf_t *b, const mesh_plan_t *p)
{
    const mesh_reason_t *r = mesh_plan_near_tie(p);
    if (!r) {
        mesh_buf_puts(b, "null");
        return;
    }
    json_reason(b, r, mesh_plan_model(p)->global_batch, mesh_plan_near_tie_line(p));
}

/* "tight" and the layout that leaves room ("roomier", null when none
 * does or the plan is not tight). */
static void json_tight(mesh_buf_t *b, const mesh_plan_t *p)
{
    const mesh_candidate_t *r;
    int tight = mesh_plan_tight(p, &r);
    mesh_buf_printf(b, ",\"headroom\":%.6g,\"tight\":%s,\"roomier\":",
                    mesh_plan_assumptions(p)->headroom, tight ? "true" : "false");
    if (!r) {
        mesh_buf_puts(b, "null");
        return;
    }
    char canon[MESH_LAYOUT_STR_MAX];
    mesh_buf_puts(b, "{\"layout\":");
    mesh_buf_json_string(b, mesh_layout_format(&r->layout, canon, sizeof(canon)));
    mesh_buf_printf(b, ",\"step_seconds\":%.6g,\"memory_bytes\":%.0f,\"capacity_bytes\":%.0f}",
                    r->cost.step_seconds, r->memory.total, r->memory.capacity);
}

/* The records behind "reasons" and "advice", one for one. */
static void json_records(mesh_buf_t *b, const mesh_plan_t *p)
{
    long gb = mesh_plan_model(p)->global_batch;
    mesh_buf_puts(b, ",\"reason_records\":[");
    for (int i = 0; i < mesh_plan_reason_count(p); i++) {
        mesh_buf_puts(b, i ? "," : "");
        json_reason(b, mesh_plan_reason_record(p, i), gb, NULL);
    }
    mesh_buf_puts(b, "],\"advice_records\":[");
    for (int i = 0; i < mesh_plan_advice_count(p); i++) {
        mesh_buf_puts(b, i ? "," : "");
        json_advice(b, mesh_plan_advice_record(p, i), gb);
    }
    mesh_buf_puts(b, "]");
}

/* The model's experts, MLA and MTP layers, for a model that has them (a
 * dense model's object reads as it always did). */
static void json_moe(mesh_buf_t *b, const mesh_model_t *m)
{
    const mesh_moe_t *e = &m->moe;
    const mesh_mla_t *a = &m->mla;
    if (e->experts) {
        mesh_buf_printf(b,
                        ",\"moe\":{\"experts\":%d,\"top_k\":%d,\"ffn\":%d,\"shared_experts\":%d,"
                        "\"shared_ffn\":%d,\"dense_layers\":%d,\"every\":%d,\"moe_layers\":%d,"
                        "\"expert_params\":%.0f,\"imbalance\":%.6g,\"capacity_factor\":",
                        e->experts, e->top_k, e->ffn, e->shared_experts, e->shared_ffn,
                        e->dense_layers, e->every > 1 ? e->every : 1, mesh_model_moe_layers(m),
                        mesh_model_expert_params(m), m->moe_imbalance);
        if (e->capacity_factor > 0)
            mesh_buf_printf(b, "%.6g}", e->capacity_factor);
        else
            mesh_buf_puts(b, "null}");
    }
    if (a->kv_lora_rank)
        mesh_buf_printf(b,
                        ",\"mla\":{\"q_lora_rank\":%d,\"kv_lora_rank\":%d,\"qk_head_dim\":%d,"
                        "\"qk_rope_head_dim\":%d,\"v_head_dim\":%d}",
                        a->q_lora_rank, a->kv_lora_rank, a->qk_head_dim, a->qk_rope_head_dim,
                        a->v_head_dim);
    if (m->mtp_layers)
        mesh_buf_printf(b, ",\"mtp_layers\":%d,\"mtp_params\":%.0f", m->mtp_layers,
                        mesh_model_mtp_params(m));
}

char *mesh_report_json(const mesh_plan_t *p)
{
    const mesh_model_t *m = mesh_plan_model(p);
    const mesh_alloc_t *a = mesh_plan_alloc(p);
    const mesh_candidate_t *best = mesh_plan_best(p);
    mesh_buf_t b;
    mesh_buf_init(&b);
    mesh_buf_puts(&b, "{\"model\":{\"name\":");
    mesh_buf_json_string(&b, m->name);
    /* a dense model's object reads as it always did: the keys of experts,
     * MLA and MTP layers only where the model has them */
    mesh_buf_printf(&b, ",\"params\":%.0f", m->params);
    if (m->moe.experts || m->mla.kv_lora_rank || m->mtp_layers)
        mesh_buf_printf(&b, ",\"active_params\":%.0f", mesh_model_active_params(m));
    mesh_buf_printf(&b,
                    ",\"layers\":%d,\"hidden\":%d,\"heads\":%d,\"kv_heads\":%d,"
                    "\"ffn\":%d,\"vocab\":%d,\"seq_len\":%d,\"global_batch\":%ld,"
                    "\"precision\":\"%s\",\"fp8_recipe\":\"%s\",\"grad_accum_dtype\":\"%s\","
                    "\"optimizer_dtype\":\"%s\",\"framework\":\"%s\",\"finetune\":\"%s\"",
                    m->layers, m->hidden, m->heads, m->kv_heads, m->ffn, m->vocab, m->seq_len,
                    m->global_batch, mesh_precision_name(m->precision),
                    m->precision == MESH_PREC_FP8 ? mesh_fp8_recipe_name(m->fp8_recipe) : "none",
                    mesh_precision_name(m->grad_accum_dtype),
                    mesh_precision_name(m->optimizer_dtype), mesh_framework_name(m->framework),
                    mesh_finetune_name(m->finetune));
    json_moe(&b, m);
    mesh_buf_puts(&b, "},\"allocation\":{\"nodes\":");
    mesh_buf_printf(&b, "%d,\"gpus_per_node\":%d,\"gpus\":%ld,\"gpu\":", a->nodes, a->gpus_per_node,
                    mesh_world(a));
    mesh_buf_json_string(&b, a->gpu.name);
    mesh_buf_printf(&b, ",\"gpu_memory\":%.0f,\"island\":%d,\"nvlink_fabric\":", a->gpu.memory,
                    a->island);
    if (mesh_fabric_across_trays(a))
        mesh_buf_printf(&b, "%ld", mesh_fabric_across_trays(a));
    else
        mesh_buf_puts(&b, "null");
    mesh_buf_printf(&b, ",\"host_memory\":%.0f},", a->host_memory);
    json_candidate(&b, best, m, mesh_plan_assumptions(p)->time_margin);
    mesh_buf_puts(&b, ",\"pp_layers\":[");
    for (int i = 0; i < best->layout.pp; i++)
        mesh_buf_printf(&b, "%s%d", i ? "," : "", mesh_pp_stage_layers(m, &best->layout, i));
    mesh_buf_puts(&b, "],\"alternatives\":[");
    for (int i = 0; i < mesh_plan_alternative_count(p); i++) {
        mesh_buf_puts(&b, i ? ",{" : "{");
        json_candidate(&b, mesh_plan_alternative(p, i), m, mesh_plan_assumptions(p)->time_margin);
        mesh_buf_puts(&b, "}");
    }
    mesh_buf_puts(&b, "]");
    json_strings(&b, "reasons", mesh_plan_reason_count(p), mesh_plan_reason, p);
    json_strings(&b, "advice", mesh_plan_advice_count(p), mesh_plan_advice, p);
    mesh_buf_printf(&b, ",\"digest\":\"%s\",\"evaluated\":%ld,\"work\":%ld", mesh_plan_digest(p),
                    mesh_plan_evaluated(p), mesh_plan_work(p));
    const mesh_calib_gpu_t *cal = mesh_plan_calibration(p);
    if (cal) { /* a calibrated plan's: an additive key */
        char sum[400];
        mesh_buf_puts(&b, ",\"calibration\":{\"path\":");
        mesh_buf_json_string(&b, mesh_plan_assumptions(p)->calibration.path);
        for (int f = 0; f < MESH_CALIB_FACTORS; f++)
            mesh_buf_printf(&b, ",\"%s\":%.6g", mesh_calib_factor_name(f, NULL, NULL),
                            cal->factor[f]);
        mesh_buf_printf(&b, ",\"jobs\":%d,\"error_before\":%.6g,\"error_after\":%.6g,\"summary\":",
                        cal->jobs, cal->err_before, cal->err_after);
        mesh_buf_json_string(&b, mesh_calib_summary(cal, NULL, sum, sizeof(sum)));
        mesh_buf_puts(&b, "}");
    }
    /* what MESH_MEGATRON_ARGS carries, for the layout above (fitting or
     * the closest), or null and why it is not exported */
    const char *why = mesh_megatron_withheld(m);
    mesh_buf_puts(&b, ",\"megatron_args\":");
    if (why) {
        mesh_buf_puts(&b, "null,\"megatron_withheld\":");
        mesh_buf_json_string(&b, why);
    } else {
        mesh_buf_t args;
        mesh_buf_init(&args);
        mesh_megatron_args(m, &best->layout, &mesh_plan_alloc(p)->gpu, &args);
        char *line = mesh_buf_take(&args);
        if (line)
            mesh_buf_json_string(&b, line);
        else
            b.failed = 1;
        free(line);
    }
    /* and the environment it needs, as the plugin exports it */
    int conn = mesh_megatron_max_connections(m, &best->layout, &mesh_plan_alloc(p)->gpu);
    mesh_buf_puts(&b, ",\"megatron_env\":{");
    if (conn)
        mesh_buf_printf(&b, "\"%s\":\"%d\"", MESH_ENV_MAX_CONNECTIONS, conn);
    mesh_buf_puts(&b, "}");
    mesh_buf_puts(&b, ",\"near_tie\":");
    json_near_tie(&b, p);
    json_tight(&b, p);
    json_records(&b, p); /* last: the keys before them read as they always did */
    mesh_buf_puts(&b, "}\n");
    return mesh_buf_take(&b);
}
