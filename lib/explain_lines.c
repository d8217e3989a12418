/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The explanation's records as lines: mesh_report_reason and
 * mesh_report_advice, one function each, so that every front end says the
 * same; and the families' names.  lib/explain.c finds the records.
 */
#include <stdio.h>
#include <string.h>

#include "planner.h"

#define LINE_PARTS 256 /* five parts' labels and GiB: under 100 bytes */

static const struct {
    const char *key, *label;
} families[MESH_FAMILY_COUNT] = {
    [MESH_FAMILY_DP] = {"dp", "plain DP"},
    [MESH_FAMILY_ZERO1] = {"zero1", "DP + ZeRO-1"},
    [MESH_FAMILY_ZERO2] = {"zero2", "DP + ZeRO-2"},
    [MESH_FAMILY_ZERO3] = {"zero3", "DP + ZeRO-3"},
    [MESH_FAMILY_TP] = {"tp", "TP/CP without PP (+ DP/ZeRO)"},
    [MESH_FAMILY_PP] = {"pp", "PP (+ TP/CP, DP/ZeRO)"},
};

const char *mesh_family_name(mesh_family_t f)
{
    return (int)f >= 0 && f < MESH_FAMILY_COUNT ? families[f].key : NULL;
}

static const char *family_label(mesh_family_t f)
{
    return (int)f >= 0 && f < MESH_FAMILY_COUNT ? families[f].label : "?";
}

/* "weights 13.0, grads 26.1, ...": the parts of mem in GiB, into buf[len]. */
static const char *parts_gib(const mesh_memory_t *mem, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < MESH_MEMORY_PARTS && n < len; i++)
        n +=
            (size_t)snprintf(buf + n, len - n, "%s%s %s", i ? ", " : "", mesh_memory_part(i)->label,
                             mesh_gib_str(mesh_memory_part_bytes(mem, i)).s);
    return buf;
}

/* Whether candidate c fits its GPUs and only the nodes' host memory is
 * short (the optimizer offloaded: the search's fits_in refused it there). */
static int host_short(const mesh_candidate_t *c)
{
    return c->layout.offload && c->memory.total <= c->memory.capacity;
}

/* "fits its GPUs (29.1 of 77.3 GiB) but not the nodes' host memory: ...",
 * for a candidate that host_short, into buf[len]. */
static const char *gpus_not_host(const mesh_candidate_t *c, char *buf, size_t len)
{
    snprintf(buf, len,
             "fits its GPUs (%s of %s GiB) but not the nodes' host memory: its offloaded "
             "optimizer keeps %s GiB per GPU there",
             mesh_gib_str(c->memory.total).s, mesh_gib_str(c->memory.capacity).s,
             mesh_gib_str(c->memory.host).s);
    return buf;
}

/* Why the fastest near-tie was passed over: which rule of doc/design.md,
 * "Selection", decided, with the numbers it decided on. */
static void near_tie_says(const mesh_reason_t *r, char *buf, size_t len)
{
    char canon[MESH_LAYOUT_STR_MAX];
    const mesh_candidate_t *c = &r->candidate;
    double cap = c->memory.capacity;
    int n = snprintf(buf, len, "picked over %s, %.2f%% faster by the model (%.4g s vs %.4g s), ",
                     mesh_layout_format(&c->layout, canon, sizeof(canon)),
                     100 * (r->best_seconds / c->cost.step_seconds - 1), c->cost.step_seconds,
                     r->best_seconds);
    if (n < 0 || (size_t)n >= len)
        return;
    if (r->tie == MESH_TIE_HEADROOM)
        snprintf(buf + n, len - (size_t)n,
                 "for %s GiB more headroom: %s against %s GiB of %s usable (%.0f%% vs %.0f%%; "
                 "the simplest near-tie needs %.0f%%, above %.0f%%, so it gives way to the "
                 "simplest needing at least %.0f%% of usable memory less)",
                 mesh_gib_str(c->memory.total - r->best_bytes).s, mesh_gib_str(r->best_bytes).s,
                 mesh_gib_str(c->memory.total).s, mesh_gib_str(cap).s, 100 * r->best_bytes / cap,
                 100 * c->memory.total / cap, 100 * r->tight_share, 100 * MESH_PLAN_TIGHT,
                 100 * MESH_PLAN_HEADROOM);
    else
        snprintf(buf + n, len - (size_t)n,
                 "as simpler: near-ties within %.0f%% go to the simpler layout (DP+ZeRO, then "
                 "TP, then PP)",
                 100 * MESH_PLAN_TIE);
}

/* Where an EP group of the record's layout runs: "inside one node, on
 * NVLink" or beyond its island (its all-to-all priced at the network's
 * rate, as cost.c's all_to_all does: PCIe GPUs have no NVLink), "across N
 * trays of one NVLink fabric" or "across N nodes (all-to-all over the
 * network)". */
static const char *ep_where(const mesh_reason_t *r, char *buf, size_t len)
{
    if (r->candidate.layout.ep <= 1)
        snprintf(buf, len, "no expert parallelism: every expert on every GPU");
    else if (r->ep_nodes <= 1 && r->ep_nvlink)
        snprintf(buf, len, "inside one node, on NVLink");
    else if (r->ep_nodes <= 1)
        snprintf(buf, len, "inside one node, beyond its NVLink island");
    else if (r->ep_fabric)
        snprintf(buf, len, "across %d trays of one NVLink fabric", r->ep_nodes);
    else
        snprintf(buf, len, "across %d nodes, all-to-all over the network", r->ep_nodes);
    return buf;
}

/* Why the plan did not take an EP that is faster (the record r's). */
static const char *faster_why(const mesh_reason_t *r)
{
    switch (r->untaken) {
    case MESH_EP_UNTAKEN_NEAR_TIE: return ", within 1%: a near-tie";
    case MESH_EP_UNTAKEN_NVLINK_FIRST:
        return "; the search tries EP beyond NVLink's reach only where none within it fits";
    case MESH_EP_UNTAKEN_SMALLEST_ACROSS:
        return "; beyond NVLink's reach the search tries the smallest EP that fits and, where that "
               "one needs recomputation or a lever, the largest";
    default: return "";
    }
}

/* A MoE plan's expert parallelism: its own, and each other EP tried. */
static void report_experts(const mesh_reason_t *r, char *buf, size_t len)
{
    char canon[MESH_LAYOUT_STR_MAX], where[96], parts[LINE_PARTS];
    const mesh_candidate_t *c = &r->candidate;
    const mesh_layout_t *l = &c->layout;
    const mesh_memory_t *mm = &c->memory;
    if (r->chosen && l->ep <= 1)
        snprintf(buf, len, "EP 1, expert TP %d: %s", l->etp, ep_where(r, where, sizeof(where)));
    else if (r->chosen)
        snprintf(buf, len, "EP %d, expert TP %d: each expert group %s", l->ep, l->etp,
                 ep_where(r, where, sizeof(where)));
    else if (r->rule[0])
        snprintf(buf, len, "EP %d is not possible here: %s", l->ep, r->rule);
    else if (c->fits && c->cost.step_seconds < r->best_seconds)
        snprintf(buf, len,
                 "EP %d (%s) fits (%s of %s GiB) and its best step is %.1f%% faster (%.3g s vs "
                 "%.3g s: %s)%s",
                 l->ep, ep_where(r, where, sizeof(where)), mesh_gib_str(mm->total).s,
                 mesh_gib_str(mm->capacity).s, 100 * (1 - c->cost.step_seconds / r->best_seconds),
                 c->cost.step_seconds, r->best_seconds, mesh_layout_format(l, canon, sizeof(canon)),
                 faster_why(r));
    else if (c->fits)
        snprintf(buf, len,
                 "EP %d (%s) fits (%s of %s GiB) but its best step is %.0f%% slower (%.3g s vs "
                 "%.3g s: %s)",
                 l->ep, ep_where(r, where, sizeof(where)), mesh_gib_str(mm->total).s,
                 mesh_gib_str(mm->capacity).s, 100 * (c->cost.step_seconds / r->best_seconds - 1),
                 c->cost.step_seconds, r->best_seconds,
                 mesh_layout_format(l, canon, sizeof(canon)));
    else if (host_short(c))
        snprintf(buf, len, "EP %d (%s) at %s %s", l->ep, ep_where(r, where, sizeof(where)),
                 mesh_layout_format(l, canon, sizeof(canon)),
                 gpus_not_host(c, parts, sizeof(parts)));
    else
        snprintf(buf, len, "EP %d (%s) needs %s GiB per GPU > %s GiB usable (%s at %s)", l->ep,
                 ep_where(r, where, sizeof(where)), mesh_gib_str(mm->total).s,
                 mesh_gib_str(mm->capacity).s, parts_gib(mm, parts, sizeof(parts)),
                 mesh_layout_format(l, canon, sizeof(canon)));
}

const char *mesh_report_reason(const mesh_reason_t *r, char *buf, size_t len)
{
    char canon[MESH_LAYOUT_STR_MAX], parts[LINE_PARTS];
    const mesh_candidate_t *c = &r->candidate;
    const mesh_memory_t *mm = &c->memory;
    const char *name = family_label(r->family);
    buf[0] = '\0';
    switch (r->kind) {
    case MESH_REASON_SLOWER:
        /* a simpler family as fast or faster was passed over by the near-tie
         * rule for headroom ("Why not the fastest" says so), not for speed */
        if (c->cost.step_seconds <= r->best_seconds) {
            snprintf(buf, len,
                     "%s fits (%s of %s GiB) and is no slower (%.3g s vs %.3g s: %s): the "
                     "near-tie went to the roomier layout (why not the fastest)",
                     name, mesh_gib_str(mm->total).s, mesh_gib_str(mm->capacity).s,
                     c->cost.step_seconds, r->best_seconds,
                     mesh_layout_format(&c->layout, canon, sizeof(canon)));
            break;
        }
        snprintf(buf, len,
                 "%s fits (%s of %s GiB) but its best step is %.0f%% slower (%.3g s vs %.3g "
                 "s: %s)",
                 name, mesh_gib_str(mm->total).s, mesh_gib_str(mm->capacity).s,
                 100 * (c->cost.step_seconds / r->best_seconds - 1), c->cost.step_seconds,
                 r->best_seconds, mesh_layout_format(&c->layout, canon, sizeof(canon)));
        break;
    case MESH_REASON_MEMORY:
        if (host_short(c)) {
            snprintf(buf, len, "%s at %s %s", name,
                     mesh_layout_format(&c->layout, canon, sizeof(canon)),
                     gpus_not_host(c, parts, sizeof(parts)));
            break;
        }
        snprintf(buf, len, "%s needs %s GiB per GPU > %s GiB usable (%s GiB at %s)", name,
                 mesh_gib_str(mm->total).s, mesh_gib_str(mm->capacity).s,
                 parts_gib(mm, parts, sizeof(parts)),
                 mesh_layout_format(&c->layout, canon, sizeof(canon)));
        break;
    case MESH_REASON_RULE: snprintf(buf, len, "%s is not possible here: %s", name, r->rule); break;
    case MESH_REASON_PINNED:
        snprintf(buf, len, "%s is excluded by the pinned layout fields", name);
        break;
    case MESH_REASON_UNTRIED: snprintf(buf, len, "%s is not tried here: %s", name, r->rule); break;
    case MESH_REASON_NEAR_TIE: near_tie_says(r, buf, len); break;
    case MESH_REASON_NO_FIT:
        if (host_short(c)) {
            snprintf(buf, len, "nothing fits: the closest layout (%s) %s",
                     mesh_layout_format(&c->layout, canon, sizeof(canon)),
                     gpus_not_host(c, parts, sizeof(parts)));
            break;
        }
        snprintf(buf, len,
                 "nothing fits: the closest layout (%s) needs %s GiB per GPU > %s GiB "
                 "usable, short by %s GiB",
                 mesh_layout_format(&c->layout, canon, sizeof(canon)), mesh_gib_str(mm->total).s,
                 mesh_gib_str(mm->capacity).s, mesh_gib_str(mm->total - mm->capacity).s);
        break;
    case MESH_REASON_EXPERTS: report_experts(r, buf, len); break;
    }
    return buf;
}

/* A whole allocation's memory: "1.3 TiB" from what prints as 1024.0 GiB
 * up, else "43.6 GiB" (a TiB's tenth is fine enough there; a smaller one
 * printed as 0.0). */
static mesh_gib_str_t tib_or_gib(double bytes)
{
    mesh_gib_str_t out;
    if (mesh_gib(bytes) >= 1024 - 0.05)
        snprintf(out.s, sizeof(out.s), "%.1f TiB", bytes / (1024 * MESH_GiB));
    else
        snprintf(out.s, sizeof(out.s), "%.1f GiB", mesh_gib(bytes));
    return out;
}

/* What an advice priced in bf16 asks of the spec. */
#define BF16_INSTEAD " in bf16 instead of fp8 (train.precision: bf16, without train.fp8_recipe)"

/* Where the LoRA advice's adapters train: the framework its layout was
 * priced under (mesh_lora_framework: DeepSpeed, but for a torch spec). */
static const char *lora_under(const mesh_candidate_t *c)
{
    return c->memory.framework == MESH_FW_TORCH ? "PyTorch with Hugging Face PEFT"
                                                : "DeepSpeed: Megatron-LM has no LoRA";
}

const char *mesh_report_advice(const mesh_advice_t *a, char *buf, size_t len)
{
    char canon[MESH_LAYOUT_STR_MAX];
    const mesh_candidate_t *c = &a->candidate;
    const char *mesh = mesh_layout_format(&c->layout, canon, sizeof(canon));
    /* NODES, BF16, BF16_NODES: the spec's training */
    const char *training =
        a->finetune == MESH_FINETUNE_LORA ? "its LoRA adapters' training" : "full training";
    buf[0] = '\0';
    switch (a->kind) {
    case MESH_ADVICE_UNPIN:
        if (strcmp(a->field, "recompute") == 0)
            snprintf(buf, len, "recompute=%s instead of the pinned recompute=%s fits: %s (%s GiB)",
                     mesh_recompute_name((mesh_recompute_t)a->value),
                     mesh_recompute_name((mesh_recompute_t)a->pinned), mesh,
                     mesh_gib_str(c->memory.total).s);
        else
            snprintf(buf, len, "%s=%d instead of the pinned %s=%d fits: %s (%s GiB)", a->field,
                     a->value, a->field, a->pinned, mesh, mesh_gib_str(c->memory.total).s);
        break;
    case MESH_ADVICE_UNPIN_ALL:
        snprintf(buf, len, "planning every field instead of the pinned ones fits: %s (%s GiB)",
                 mesh, mesh_gib_str(c->memory.total).s);
        break;
    case MESH_ADVICE_NODES:
    case MESH_ADVICE_BF16_NODES:
        snprintf(buf, len, "%d nodes (%d GPUs) would fit %s%s: %s (%s GiB per GPU)", a->nodes,
                 a->gpus, training, a->bf16 ? BF16_INSTEAD : "", mesh,
                 mesh_gib_str(c->memory.total).s);
        break;
    case MESH_ADVICE_BF16:
        snprintf(buf, len, "%s fits on this allocation" BF16_INSTEAD ": %s, %s GiB per GPU",
                 training, mesh, mesh_gib_str(c->memory.total).s);
        break;
    case MESH_ADVICE_OUT_OF_REACH:
        snprintf(buf, len,
                 "full fine-tuning is out of reach here: its model states alone are %.0f bytes "
                 "per parameter, %s, against %s usable on the whole allocation",
                 a->bytes_per_param, tib_or_gib(a->states).s, tib_or_gib(a->usable).s);
        break;
    case MESH_ADVICE_LORA:
        snprintf(buf, len,
                 "parameter-efficient fine-tuning fits on this allocation%s (set train.finetune: "
                 "lora%s, and train the adapters under %s): %s, %s GiB per GPU",
                 a->bf16 ? " in bf16" : "",
                 a->bf16 ? ", train.precision: bf16 without train.fp8_recipe" : "", lora_under(c),
                 mesh, mesh_gib_str(c->memory.total).s);
        break;
    case MESH_ADVICE_OFFLOAD:
        snprintf(buf, len,
                 "offloading the optimizer to host memory fits on these nodes with %.0f GiB of it "
                 "per node (give the job --mem=%.0fG, Slurm's G being GiB; meshplan --host-mem "
                 "%.0fGiB): %s, %s GiB "
                 "per GPU",
                 a->host_memory / MESH_GiB, a->host_memory / MESH_GiB, a->host_memory / MESH_GiB,
                 mesh, mesh_gib_str(c->memory.total).s);
        break;
    case MESH_ADVICE_LORA_NODES:
        snprintf(buf, len,
                 "parameter-efficient fine-tuning (train.finetune: lora, under %s) would fit on "
                 "%d nodes%s: %s",
                 lora_under(c), a->nodes, a->bf16 ? BF16_INSTEAD : "", mesh);
        break;
    }
    return buf;
}

/* The lines of the records, rendered once, so that mesh_plan_reason and
 * mesh_plan_advice hand out strings that live as long as the plan. */
void mesh_render_lines(mesh_plan_t *p)
{
    for (int i = 0; i < p->n_reasons; i++)
        mesh_report_reason(&p->reasons[i], p->reason_lines[i], LINE_LEN);
    for (int i = 0; i < p->n_advice; i++)
        mesh_report_advice(&p->advice[i], p->advice_lines[i], LINE_LEN);
    if (p->has_near_tie)
        mesh_report_reason(&p->near_tie, p->near_tie_line, NEAR_TIE_LEN);
}
