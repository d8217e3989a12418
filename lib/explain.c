/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The plan's explanation: why each simpler family, each other EP and the
 * fastest near-tie were not chosen, and what would fit when nothing does,
 * as the records of <meshplan/explain.h>.  lib/explain_lines.c renders
 * them as lines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner.h"

/* ---- explanation ---- */

/* A new reason record of this kind, or NULL when LINES_MAX are kept. */
mesh_reason_t *mesh_add_reason(mesh_plan_t *p, mesh_reason_kind_t kind, mesh_family_t f)
{
    if (p->n_reasons >= LINES_MAX)
        return NULL;
    mesh_reason_t *r = &p->reasons[p->n_reasons++];
    memset(r, 0, sizeof(*r));
    r->kind = kind;
    r->family = f;
    return r;
}

/* The TPs above 1 that NVLink allows on p's allocation and that divide its
 * GPUs: into list (len bytes) as "2, 4, 8"; into *heads how many of them
 * divide the heads; into *tried how many of them the search tries (heads
 * and KV heads suit them too: mesh_search_tries_tp).  Returns how many. */
static int nvlink_tps(const mesh_plan_t *p, char *list, size_t len, int *heads, int *tried)
{
    long world = mesh_world(&p->alloc), reach = mesh_search_tp_max(&p->model, &p->alloc);
    size_t at = 0;
    int n = 0;
    list[0] = '\0';
    *heads = *tried = 0;
    for (long tp = 2; tp <= reach; tp++) {
        if (!mesh_tp_on_nvlink(&p->alloc, tp) || world % tp)
            continue;
        *heads += p->model.heads % tp == 0;
        *tried += mesh_search_tries_tp(&p->model, &p->alloc, (int)tp);
        int k = snprintf(list + at, len - at, "%s%ld", n++ ? ", " : "", tp);
        at = k > 0 && (size_t)k < len - at ? at + (size_t)k : at;
    }
    return n;
}

/* Into why (len bytes), the search's bounds that leave family TP (TP or CP
 * without PP) out on p's allocation: 1, or 0 where the search tries some
 * layout of it, or a pinned tp or cp above 1 (which the search takes as
 * given), so that its emptiness is the pins'.  PCIe GPUs on sequences
 * under 8K tokens were told the pins excluded it.  For a model with layers
 * (a model of parameters alone has no family but DP's, so this one is
 * never explained). */
static int tp_family_untried(const mesh_plan_t *p, char *why, size_t len)
{
    const mesh_model_t *m = &p->model;
    const mesh_alloc_t *a = &p->alloc;
    long world = mesh_world(a), cmax = mesh_search_cp_max(m, world);
    if (p->pins.tp > 1 || p->pins.cp > 1) /* pinned (MESH_FREE is -1) */
        return 0;
    char tps[96], tp_why[256], cp_why[128];
    int heads, tried, n = nvlink_tps(p, tps, sizeof(tps), &heads, &tried);
    if (tried)
        return 0;
    for (long cp = 2; cp <= cmax; cp *= 2) /* the search's CPs are powers of two */
        if (world % cp == 0)
            return 0;
    if (n == 0 && a->island <= 1 && !mesh_fabric_across_trays(a))
        snprintf(tp_why, sizeof(tp_why),
                 "TP needs NVLink, which joins no two of these GPUs (an island of %d)", a->island);
    else if (n == 0)
        snprintf(tp_why, sizeof(tp_why), "no TP that NVLink allows divides the %ld GPUs", world);
    else if (heads == 0)
        snprintf(tp_why, sizeof(tp_why), "no TP that NVLink allows here (%s) divides the %d heads",
                 tps, m->heads);
    else
        snprintf(tp_why, sizeof(tp_why),
                 "no TP that NVLink allows here (%s) divides the %d heads and also divides, or "
                 "is a multiple of, the %d KV heads",
                 tps, m->heads, m->kv_heads);
    if (m->seq_len < MESH_CP_MIN_SEQ)
        snprintf(cp_why, sizeof(cp_why),
                 ", and CP is tried only for sequences of %d tokens or more (these are %ld)",
                 MESH_CP_MIN_SEQ, (long)m->seq_len);
    else
        snprintf(cp_why, sizeof(cp_why), ", and no CP divides the %ld GPUs (CP is a power of two)",
                 world);
    snprintf(why, len, "%s%s", tp_why, cp_why);
    return 1;
}

/* Why family f, simpler than the choice (or any, when nothing fits), was
 * not chosen: its best fit, its least memory, a rule, the search's bounds
 * or the pins. */
void mesh_explain_family(mesh_plan_t *p, mesh_family_t f, const family_stat_t *st)
{
    char untried[MESH_ERROR_MAX];
    mesh_reason_kind_t kind =
        st->has_fit       ? MESH_REASON_SLOWER
        : st->has_min     ? MESH_REASON_MEMORY
        : st->has_invalid ? MESH_REASON_RULE
        : f == MESH_FAMILY_TP && p->model.has_arch && tp_family_untried(p, untried, sizeof(untried))
            ? MESH_REASON_UNTRIED
            : MESH_REASON_PINNED;
    mesh_reason_t *r = mesh_add_reason(p, kind, f);
    if (!r)
        return;
    if (kind == MESH_REASON_UNTRIED)
        mesh_strlcpy(r->rule, untried, sizeof(r->rule));
    if (kind == MESH_REASON_SLOWER) {
        r->candidate = st->fit;
        r->best_seconds = p->best.cost.step_seconds;
    } else if (kind == MESH_REASON_MEMORY) {
        r->candidate = st->min;
    } else if (kind == MESH_REASON_RULE) {
        mesh_error_t e;
        r->candidate.layout = st->invalid;
        r->candidate.micro_batches = mesh_layout_micro_batches(&st->invalid, p->model.global_batch);
        mesh_layout_check(&p->model, &p->alloc, &st->invalid, &e);
        mesh_strlcpy(r->rule, e.msg, sizeof(r->rule));
    }
}

/* Into r, the nodes an EP group of model m's layout l spans, whether it is
 * within NVLink's reach and whether across trays of one NVLink fabric, as
 * its all-to-all is priced. */
static void ep_nodes(const mesh_model_t *m, const mesh_layout_t *l, const mesh_alloc_t *a,
                     mesh_reason_t *r)
{
    long span = mesh_ep_span(l), gpn = a->gpus_per_node;
    r->ep_nodes = span <= gpn ? 1 : (int)((span + gpn - 1) / gpn);
    r->ep_nvlink = span <= mesh_ep_reach(a, mesh_overlap_on(m, l, MESH_OVERLAP_DEEPEP));
    r->ep_fabric = span > gpn && r->ep_nvlink;
}

/* Whether record r's EP group is within `reach` GPUs, search_experts'
 * bound for an EP on NVLink (mesh_ep_reach). */
static int ep_within(const mesh_reason_t *r, long reach)
{
    return mesh_ep_span(&r->candidate.layout) <= reach;
}

/* Why the plan (its own EP's record, own) did not take the EP of record r,
 * whose best step is faster, reach being the GPUs search_experts counts as
 * on NVLink.  The search's rules first: they say why it never tried r's EP
 * (EP beyond the reach only where none within it fits the shape; there
 * only the smallest that fits and perhaps the largest, which `tried` says
 * r's is not).  An EP the search tried (within the reach, as the plan's
 * is, or beyond it as the plan's is, and tried) lost to a near-tie, the
 * plan being within MESH_PLAN_TIE of the fastest the search priced
 * (mesh_near_tie_choice).
 * Any other faster EP the search would have taken: no reason is known. */
mesh_ep_untaken_t mesh_ep_why_untaken(const mesh_reason_t *own, const mesh_reason_t *r, long reach,
                                      int tried)
{
    const mesh_candidate_t *c = &r->candidate;
    int near = ep_within(r, reach), own_near = ep_within(own, reach);
    if (!c->fits || r->rule[0] || c->cost.step_seconds >= r->best_seconds)
        return MESH_EP_UNTAKEN_NONE;
    if (!near && own_near)
        return MESH_EP_UNTAKEN_NVLINK_FIRST;
    if (!near && !own_near && !tried)
        return MESH_EP_UNTAKEN_SMALLEST_ACROSS;
    if (near == own_near && c->cost.step_seconds * (1 + MESH_PLAN_TIE) >= r->best_seconds)
        return MESH_EP_UNTAKEN_NEAR_TIE;
    return MESH_EP_UNTAKEN_NONE;
}

/* The plan's shape at expert-parallel size ep, everything else planned:
 * its fastest fitting layout into *out (1), or its least memory (0), or
 * the rule that refuses it, into rule (-1). */
static int best_at_ep(const mesh_plan_t *p, int ep, mesh_candidate_t *out, char *rule, size_t len)
{
    const mesh_layout_t *b = &p->best.layout;
    mesh_layout_t pins = p->pins;
    pins.tp = b->tp;
    pins.cp = b->cp;
    pins.pp = b->pp;
    pins.dp = b->dp;
    pins.etp = b->etp;
    pins.ep = ep;
    search_t s;
    mesh_search_init(&s, &p->assume, &p->model, &p->alloc, &pins, 0);
    mesh_search_run(&s);
    int rc = -1;
    if (s.n_fits > 0) {
        *out = s.fits[0];
        for (size_t i = 1; i < s.n_fits; i++)
            if (s.fits[i].cost.step_seconds < out->cost.step_seconds)
                *out = s.fits[i];
        rc = 1;
    } else if (s.has_closest) {
        *out = s.closest;
        rc = 0;
    } else {
        mesh_error_t e;
        memset(out, 0, sizeof(*out));
        out->layout = s.has_invalid ? s.invalid : mesh_representative(&pins, mesh_layout_world(b));
        if (mesh_layout_check(&p->model, &p->alloc, &out->layout, &e) == 0)
            snprintf(e.msg, sizeof(e.msg), "the pinned fields exclude it");
        mesh_strlcpy(rule, e.msg, len);
    }
    free(s.fits);
    return rc;
}

/* Why this EP: a record of the plan's own, then of EP 1 (no expert
 * parallelism), for an EP across nodes the largest inside one, the next
 * smaller EP and the next larger one that divide the experts, each at the
 * plan's shape with everything else planned. */
void mesh_explain_experts(mesh_plan_t *p)
{
    const mesh_layout_t *b = &p->best.layout;
    if (p->pins.ep != MESH_FREE && p->pins.ep != MESH_AUTO)
        return; /* pinned: nothing was chosen */
    mesh_reason_t *r = mesh_add_reason(p, MESH_REASON_EXPERTS, mesh_family_of(b)), *own = r;
    if (!r)
        return;
    r->chosen = 1;
    r->candidate = p->best;
    r->best_seconds = p->best.cost.step_seconds;
    ep_nodes(&p->model, b, &p->alloc, r);
    long stage = (long)b->tp * b->cp * b->dp / b->etp;
    int eps[DIVISORS_MAX], n = mesh_divisors(p->model.moe.experts, stage, eps), pick[4], np = 0;
    int smaller = 0, larger = 0, inside = 0;
    /* how far an all-to-all stays on NVLink (across trays of a fabric too) */
    long reach = mesh_ep_reach(&p->alloc, mesh_overlap_on(&p->model, b, MESH_OVERLAP_DEEPEP));
    for (int i = 0; i < n; i++) {
        if (stage % eps[i] || eps[i] == b->ep)
            continue;
        if (eps[i] < b->ep)
            smaller = eps[i]; /* the largest below */
        else if (!larger)
            larger = eps[i]; /* the smallest above */
        if (eps[i] < b->ep && (long)eps[i] * b->etp <= reach)
            inside = eps[i]; /* the largest below that stays on NVLink */
    }
    if (b->ep > 1)
        pick[np++] = 1;
    /* an EP across nodes answers "why not inside one?" with the largest that is */
    if (inside > 1 && inside != smaller && (long)b->ep * b->etp > reach)
        pick[np++] = inside;
    if (smaller > 1)
        pick[np++] = smaller;
    if (larger)
        pick[np++] = larger;
    for (int i = 0; i < np; i++) {
        mesh_candidate_t c;
        char rule[MESH_ERROR_MAX] = "";
        best_at_ep(p, pick[i], &c, rule, sizeof(rule));
        if (!(r = mesh_add_reason(p, MESH_REASON_EXPERTS, mesh_family_of(&c.layout))))
            return;
        r->candidate = c;
        r->best_seconds = p->best.cost.step_seconds;
        ep_nodes(&p->model, &c.layout, &p->alloc, r);
        mesh_strlcpy(r->rule, rule, sizeof(r->rule));
        /* the search's bound (DeepEP's, the island, is the same: it runs only
         * on nodes of 8 with an island of 8, where no fabric spans trays) */
        long reach0 = mesh_ep_reach(&p->alloc, 0);
        int tried = (long)c.layout.ep * c.layout.etp > reach0 &&
                    mesh_ep_tried_across(p, c.layout.ep, reach0);
        r->untaken = mesh_ep_why_untaken(own, r, reach0, tried);
    }
}

/* A new advice record of this kind on candidate c (NULL: none), or NULL
 * when LINES_MAX are kept. */
static mesh_advice_t *add_advice(mesh_plan_t *p, mesh_advice_kind_t kind, const mesh_candidate_t *c)
{
    if (p->n_advice >= LINES_MAX)
        return NULL;
    mesh_advice_t *a = &p->advice[p->n_advice++];
    memset(a, 0, sizeof(*a));
    a->kind = kind;
    if (c)
        a->candidate = *c;
    return a;
}

/* Whether the work budget stopped a search of the advice: it is partial
 * (plan.h's halted), and no more is added. */
static int advice_halted(mesh_plan_t *p)
{
    if (mesh_work_stopped())
        p->halted = 2;
    return p->halted;
}

/* Does model m fit with these pins on n nodes (0: the allocation's)?  A
 * first-fit search; the first layout found goes in *out. */
static int fits_on(const mesh_plan_t *p, const mesh_model_t *m, const mesh_layout_t *pins, long n,
                   mesh_candidate_t *out)
{
    mesh_alloc_t a = p->alloc;
    if (n > 0)
        a.nodes = (int)n;
    search_t s;
    mesh_search_init(&s, &p->assume, m, &a, pins, 1);
    mesh_search_run(&s);
    if (s.found)
        *out = s.first;
    return s.found;
}

/* mesh_ep_tried_across's try: the plan's shape at l's EP, a first-fit
 * search, noting whether it is the EP asked about. */
typedef struct across {
    const mesh_plan_t *p;
    mesh_layout_t pins; /* the plan's shape */
    int ep, tried;
} across_t;

static int try_pinned(void *ctx, mesh_layout_t *l)
{
    across_t *t = ctx;
    mesh_candidate_t c;
    t->pins.ep = l->ep;
    int fits = fits_on(t->p, &t->p->model, &t->pins, 0, &c);
    t->tried |= l->ep == t->ep;
    return fits;
}

/* Whether the search tried EP ep beyond NVLink's reach (GPUs) at the
 * plan's shape: its rule replayed (mesh_search_eps_across), each EP it
 * tries asked by a search of its own. */
int mesh_ep_tried_across(const mesh_plan_t *p, int ep, long reach)
{
    const mesh_layout_t *b = &p->best.layout;
    across_t t = {.p = p, .pins = p->pins, .ep = ep};
    t.pins.tp = b->tp;
    t.pins.cp = b->cp;
    t.pins.pp = b->pp;
    t.pins.dp = b->dp;
    t.pins.etp = b->etp;
    mesh_layout_t shape = *b;
    search_t s;
    mesh_search_init(&s, &p->assume, &p->model, &p->alloc, &p->pins, 0);
    mesh_search_eps_across(&s, &shape, reach, try_pinned, &t);
    return t.tried;
}

/* The node counts a layout that pins hold data-parallel alone (LoRA's:
 * lib/runnable.c) may take: every GPU is a replica, so only counts whose GPUs
 * divide the batch, into counts (DIVISORS_MAX room), ascending, up to cap:
 * how many; -1 for any other layout, whose dp any count may leave whole
 * (Llama 3.1 405B's 2,048 fits 18 nodes at pp 9, never at dp 144).  Its
 * trial divisions are counted against the budget in use. */
static int data_parallel_counts(const mesh_model_t *m, const mesh_layout_t *pins, long gpn,
                                long cap, int *counts)
{
    if (pins->tp != 1 || pins->pp != 1 || pins->cp != 1)
        return -1;
    if (m->global_batch % gpn)
        return 0;
    long q = m->global_batch / gpn, root = 1; /* q < 2^30: spec_keys.h */
    while (root * root < q)
        root *= 2;
    mesh_work_spend(root / WORK_DIVISIONS);
    return mesh_divisors(q, cap, counts);
}

/* The count min_nodes tries after `fail` at its i-th step: the next one,
 * eight times, then twice as many; among `counts` (n of them; n < 0: any)
 * the first of those.  Above cap when none is left. */
static long next_count(long fail, int i, const int *counts, int n, long cap)
{
    long want = i < 8 ? fail + 1 : 2 * fail;
    if (n < 0)
        return want;
    for (int j = 0; j < n; j++)
        if (counts[j] >= want)
            return counts[j];
    return cap + 1;
}

/* A node count on which model m fits, above the allocation's: up from a
 * lower bound (the model states spread perfectly) a few steps, then
 * doubling, then halving the gap back.  Fitting is not quite monotone in
 * the node count (the batch must divide), so this finds a count that fits,
 * close to the smallest, in a bounded number of searches.  0 if none does
 * up to the largest allocation meshplan plans for. */
static int min_nodes(const mesh_plan_t *p, const mesh_model_t *m, const mesh_layout_t *pins,
                     mesh_candidate_t *out)
{
    double w, g, k;
    mesh_state_bytes(m, &w, &g, &k);
    double usable = mesh_policy_usable(&p->assume, &p->alloc.gpu);
    long gpn = p->alloc.gpus_per_node, cap = MAX_GPUS / gpn;
    double bound = (w + g + k) * m->params / usable / (double)gpn;
    long lo = bound < (double)cap ? (long)bound : cap;
    if (lo <= p->alloc.nodes)
        lo = p->alloc.nodes + 1;
    mesh_layout_t free_dp = *pins;
    free_dp.dp = MESH_FREE; /* dp follows the node count */
    int counts[DIVISORS_MAX], nc = data_parallel_counts(m, pins, gpn, cap, counts);
    long fail = lo - 1, n = next_count(fail, 0, counts, nc, cap);
    for (int i = 0; n <= cap; i++) {
        if (fits_on(p, m, &free_dp, n, out))
            break;
        if (mesh_work_stopped())
            return 0;
        fail = n;
        n = next_count(fail, i, counts, nc, cap);
        if (n > cap && fail < cap && nc < 0)
            n = cap;
    }
    if (n > cap)
        return 0;
    mesh_candidate_t c;
    while (n - fail > 1) {
        long mid = fail + (n - fail) / 2;
        if (fits_on(p, m, &free_dp, mid, &c)) {
            n = mid;
            *out = c;
        } else {
            fail = mid;
        }
    }
    return (int)n;
}

/* Does the optimizer offloaded fit on the allocation with `host` bytes of
 * host memory per node?  A first-fit search with offload pinned. */
static int offload_fits(const mesh_plan_t *p, const mesh_layout_t *none, double host,
                        mesh_candidate_t *out)
{
    mesh_layout_t pins = *none;
    pins.offload = 1;
    mesh_alloc_t a = p->alloc;
    a.host_memory = host;
    search_t s;
    mesh_search_init(&s, &p->assume, &p->model, &a, &pins, 1);
    mesh_search_run(&s);
    if (s.found)
        *out = s.first;
    return s.found;
}

/* Whether offloading the optimizer to host memory fits on the allocation,
 * and with how little of it per node, to a GiB: a first fit with the host
 * memory unbounded bounds it (its tasks' share over MESH_HOST_USABLE, what
 * the search holds a layout to), then bisection (more host memory never
 * unfits a layout), so that the job can ask for that much (--mem). */
static void offload_advice(mesh_plan_t *p, const mesh_layout_t *none)
{
    mesh_candidate_t c, t;
    if (p->model.finetune != MESH_FINETUNE_FULL || p->pins.offload == 0 ||
        !offload_fits(p, none, 1e18, &c)) /* no node has that much: the bound is the layout's */
        return;
    double lo = p->alloc.host_memory > 0 ? p->alloc.host_memory : 0,
           hi = mesh_ceil_long(c.memory.host * p->alloc.gpus_per_node / MESH_HOST_USABLE /
                               MESH_GiB) *
                MESH_GiB;
    while (hi - lo > MESH_GiB) {
        double mid = mesh_ceil_long((lo + hi) / 2 / MESH_GiB) * MESH_GiB;
        if (mid >= hi)
            break;
        if (offload_fits(p, none, mid, &t)) {
            hi = mid;
            c = t;
        } else {
            lo = mid;
        }
    }
    mesh_advice_t *adv = advice_halted(p) ? NULL : add_advice(p, MESH_ADVICE_OFFLOAD, &c);
    if (adv)
        adv->host_memory = hi;
}

/* An FP8 training m that fits nowhere may fit in bf16: ZeRO does not
 * shard Transformer Engine's FP8 weight copies under DeepSpeed (so every
 * LoRA of its, held to data parallelism, holds them whole), nor under
 * Megatron-LM where it cannot gather FP8 parameters (accounting.c).  Advise
 * it as `here` when it fits on these nodes, else as `more` on the fewest
 * nodes that fit (kinds whose records carry nodes). */
static void bf16_advice(mesh_plan_t *p, const mesh_model_t *m, const mesh_layout_t *pins,
                        mesh_advice_kind_t here, mesh_advice_kind_t more)
{
    if (m->precision != MESH_PREC_FP8 || advice_halted(p))
        return;
    mesh_model_t bf16 = *m;
    bf16.precision = MESH_PREC_BF16;
    mesh_candidate_t c;
    int n = 0, fits = fits_on(p, &bf16, pins, 0, &c);
    if (!fits && !advice_halted(p))
        n = min_nodes(p, &bf16, pins, &c);
    mesh_advice_t *a;
    if (advice_halted(p) || (!fits && n == 0) || !(a = add_advice(p, fits ? here : more, &c)))
        return;
    a->bf16 = 1;
    a->finetune = m->finetune;
    a->nodes = n;
    a->gpus = n * p->alloc.gpus_per_node;
}

/* Parameter-efficient fine-tuning for a full training that does not fit
 * (on n nodes, the fewest that would: 0 none): LoRA on these nodes or on
 * more, priced under the framework that trains it and, where it fits
 * nowhere in fp8, in bf16; and, where more nodes are far off or none,
 * that full training is out of reach, when its model states alone are more
 * than the allocation holds (an FP8 training that fits nowhere may be kept
 * off by its weight copies, not its states: bf16_advice says so). */
static void lora_advice(mesh_plan_t *p, const mesh_layout_t *none, int n)
{
    mesh_candidate_t c;
    mesh_advice_t *a;
    mesh_model_t lora = p->model;
    lora.finetune = MESH_FINETUNE_LORA;
    lora.framework = (mesh_framework_t)mesh_lora_framework(lora.finetune, lora.framework);
    mesh_layout_t lora_pins = *none; /* and data-parallel where DeepSpeed runs it */
    mesh_lora_layout(&lora, &lora_pins);
    double w, g, k,
        total = (double)mesh_world(&p->alloc) * mesh_policy_usable(&p->assume, &p->alloc.gpu);
    mesh_state_bytes(&p->model, &w, &g, &k);
    if ((n == 0 || n > 4 * p->alloc.nodes) && (w + g + k) * p->model.params > total &&
        (a = add_advice(p, MESH_ADVICE_OUT_OF_REACH, NULL))) {
        a->bytes_per_param = w + g + k;
        a->states = (w + g + k) * p->model.params;
        a->usable = total;
    }
    int fits = fits_on(p, &lora, &lora_pins, 0, &c);
    if (advice_halted(p))
        return;
    if (fits) {
        add_advice(p, MESH_ADVICE_LORA, &c);
    } else if ((n = min_nodes(p, &lora, &lora_pins, &c)) > 0 && !advice_halted(p) &&
               (a = add_advice(p, MESH_ADVICE_LORA_NODES, &c))) {
        a->nodes = n;
        a->gpus = n * p->alloc.gpus_per_node;
    } else if (n == 0) {
        bf16_advice(p, &lora, &lora_pins, MESH_ADVICE_LORA, MESH_ADVICE_LORA_NODES);
    }
}

/* mesh_advise, within the budget in use. */
static void advise(mesh_plan_t *p)
{
    mesh_candidate_t c;
    mesh_advice_t *a;
    const mesh_layout_t *pins = &p->pins;
    /* nothing pinned but what the GPU or the framework rules out (p->model
     * is so already): those pins are never offered to give up */
    mesh_layout_t none;
    mesh_layout_unpin(&none);
    mesh_before_ampere(&p->alloc, NULL, &none);
    mesh_lora_layout(&p->model, &none);
    /* 1. a pinned field that is in the way, in the key table's order of
     * relaxing (the pin cheapest to give up first) */
    for (int order = 1; order <= MESH_LAYOUT_KEYS; order++)
        for (int i = 0; i < MESH_LAYOUT_KEYS; i++) {
            const mesh_layout_key_t *k = &mesh_layout_keys[i];
            mesh_layout_t relaxed = *pins;
            int was = mesh_layout_value(&relaxed, k);
            if (k->relax != order || was == MESH_FREE || mesh_layout_value(&none, k) != MESH_FREE)
                continue;
            *mesh_layout_field(&relaxed, k) = MESH_FREE;
            if (fits_on(p, &p->model, &relaxed, 0, &c) && !advice_halted(p) &&
                (a = add_advice(p, MESH_ADVICE_UNPIN, &c))) {
                a->field = k->key;
                a->pinned = was;
                a->value = mesh_layout_value(&c.layout, k);
            }
        }
    int fits = fits_on(p, &p->model, &none, 0, &c);
    if (advice_halted(p))
        return;
    if (fits) {
        if (p->n_advice == 0)
            add_advice(p, MESH_ADVICE_UNPIN_ALL, &c);
        return; /* the allocation is big enough: the pins were in the way */
    }
    /* 2. more nodes */
    int n = min_nodes(p, &p->model, &none, &c);
    if (advice_halted(p))
        return;
    if (n > 0 && (a = add_advice(p, MESH_ADVICE_NODES, &c))) {
        a->nodes = n;
        a->gpus = n * p->alloc.gpus_per_node;
        a->finetune = p->model.finetune;
    }
    /* 3. the optimizer in host memory, on these nodes */
    offload_advice(p, &none);
    /* 4. parameter-efficient fine-tuning */
    if (!advice_halted(p) && p->model.finetune == MESH_FINETUNE_FULL)
        lora_advice(p, &none, n);
    /* 5. the spec's own training in bf16, last: it fits nowhere in fp8 */
    if (n == 0)
        bf16_advice(p, &p->model, &none, MESH_ADVICE_BF16, MESH_ADVICE_BF16_NODES);
}

/* The advice is only the explanation's help: under the controller's
 * budget it may spend no more than its own part of it (mesh_work_t's
 * advice), so that a refusal's search for what would fit, the dearest part
 * of judging a hostile spec, cannot cost the whole budget. */
void mesh_advise(mesh_plan_t *p)
{
    mesh_work_t part, *whole = mesh_work_part(&part, mesh_work_advice());
    advise(p);
    advice_halted(p); /* a search stopped last (min_nodes says 0) is a cut too */
    mesh_work_join(whole, &part);
}

/* When the choice is slower by the model than the fastest layout, say which
 * rule decided: headroom when the fastest was passed over as too tight,
 * else simplicity. */
void mesh_explain_near_tie(mesh_plan_t *p, const search_t *s, double roomy_below)
{
    const mesh_candidate_t *f = mesh_fastest_tie(s);
    if (f->cost.step_seconds >= p->best.cost.step_seconds)
        return;
    mesh_reason_t *r = &p->near_tie;
    p->has_near_tie = 1;
    r->kind = MESH_REASON_NEAR_TIE;
    r->family = mesh_family_of(&f->layout);
    r->candidate = *f;
    r->best_seconds = p->best.cost.step_seconds;
    r->best_bytes = p->best.memory.total;
    r->tie = mesh_used(f) > roomy_below ? MESH_TIE_HEADROOM : MESH_TIE_SIMPLER;
    r->tight_share = r->tie == MESH_TIE_HEADROOM ? roomy_below + MESH_PLAN_HEADROOM : 0;
}
