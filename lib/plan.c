/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The planner: exhaustive search with pruning, then explanation.
 *
 * The space is every (tp, cp, pp, dp, zero, vpp, recompute, micro_batch)
 * that the allocation and the model allow.  Memory grows with the
 * micro-batch, so each micro-batch sweep stops at the first size that does
 * not fit; everything else is priced.  Selection is transitive and so
 * independent of search order: the fastest step time T, then among the
 * layouts within MESH_PLAN_TIE of T (the near-ties) the simplest (DP+ZeRO,
 * then TP, then PP; then fewer stages, smaller tp, ...), unless it is tight
 * on memory: see choose().  A search for the choice alone (sizing's,
 * mesh_plan_choose) prices only the layouts that can be near-ties: see
 * "leaving unpriced what cannot be chosen" below.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "meshplan/explain.h"
#include "meshplan/plan.h"
#include "meshplan/report.h"

#define MB_MAX    256 /* largest micro-batch tried */
#define VPPS_MAX  64  /* interleavings tried per split */
#define LINES_MAX 24  /* reasons or advice lines kept */
#define LINE_LEN  384
#define MAX_GPUS  (1L << 22) /* the largest allocation planned (mesh_plan_create's limit) */

typedef struct family_stat {
    long valid;
    int has_fit, has_min, has_invalid;
    mesh_candidate_t fit; /* fastest that fits */
    mesh_candidate_t min; /* least memory */
    mesh_layout_t invalid;
} family_stat_t;

#define MEMO_VPPS  16 /* interleavings of a shape whose slot times and floors are kept */
#define MEMO_SIZES 16 /* micro-batch sizes of a sweep whose floors are kept */

/* A layout's floor without its ZeRO stage's parts (the data-parallel
 * traffic and the optimizer step), kept for the same layout under the
 * next stages (unwanted). */
typedef struct stage_memo {
    double part; /* cost.c's sum without those parts */
    double slot; /* its slot time */
    int layers;  /* the full:N it was counted at */
    int too_big; /* priced under the last stage, it did not fit */
    long shape;  /* the shape (search_t's shapes_searched) it is of */
} stage_memo_t;

typedef struct slot_memo {
    double seconds;
    int layers; /* the full:N it was counted at */
    long shape; /* the shape (search_t's shapes_searched) it is of */
} slot_memo_t;

typedef struct search {
    const mesh_model_t *m;
    const mesh_alloc_t *a;
    const mesh_assumptions_t *assume;
    const mesh_layout_t *pins;
    int first_fit_only; /* stop at the first layout that fits, price nothing */
    /* only the choice is wanted (mesh_plan_choose), not its explanation:
     * a layout that cannot be a near-tie of the fastest is not priced
     * (see wanted_limit), and no family, shape or closest layout is kept */
    int choice_only;
    /* choice_only: no choice slower than this many seconds a step is
     * wanted (0: any) */
    double deadline;
    /* choice_only: layouts are left unpriced only once `fitting` is above
     * this, so that the expert search's decisions, which compare the count
     * with the one before an expert size, are those of the whole search */
    long guard;
    int vpp_index;  /* the interleaving searched, in interleavings' list */
    int size_index; /* the micro-batch size searched, in batch_sizes (-1: a pin's) */
    long shapes_searched;
    /* choice_only: the floor unwanted counted for the layout evaluated,
     * and its cost (has_floor: whether it did) */
    mesh_layout_t floor_layout;
    mesh_cost_t floor_cost;
    int has_floor;
    struct stage_memo *stage_entry; /* the memo of the layout evaluated, if any */
    /* the largest micro-batch at which the layout being searched fit with
     * no recomputation and no lever: recomputing at that size or below
     * only costs time, so it is not evaluated */
    int plain_mb;
    /* parameters of the heavy stages of the (tp, pp, ep, etp) searched, and
     * of them the experts' */
    double psi[4], psi_e[4], psi_max, psi_e_max;
    /* in a micro-batch sweep, the fewest layers full recomputation needed
     * at the last size without levers: a larger micro-batch needs at least
     * as many */
    int full_lo;
    /* the micro-batch sizes tried at data-parallel size batch_dp: the
     * divisors of the replica's share of the global batch up to MB_MAX,
     * ascending (batch_dp 0: none yet).  The same for every option of
     * every shape with that dp, so counted once, not per sweep */
    int n_batch_sizes, batch_dp, batch_sizes[MB_MAX];
    /* the shape searched leaves a pipeline stage without a layer */
    int split_invalid;
    /* the states' sums of the shape searched, for one ZeRO stage and lever
     * setting (memo_key: zero, offload, moments; -1: none yet) */
    mesh_states_sum_t sums[3][2];
    int memo_key;
    long evaluated, valid, fitting;
    long skipped; /* choice_only: sweeps left out, none of their layouts wanted */
    /* choice_only: whether the sweep of each recomputation at the least
     * interleaving of the ZeRO stage searched found its first micro-batch
     * too large (priced, no lever fits); priced_oom: the last layout
     * evaluate priced did not fit */
    int oom_first[3], priced_oom;
    int found, oom;
    mesh_candidate_t first; /* first_fit_only: the layout found */
    /* the fitting layouts within MESH_PLAN_TIE of the fastest so far (only
     * those can be chosen: the fastest can only get faster), and the
     * fastest layout of each of the fastest (tp, cp, pp) shapes, one more
     * than the runners-up shown, since the chosen one's is left out */
    mesh_candidate_t *fits;
    size_t n_fits, cap_fits;
    double fastest;
    mesh_candidate_t shapes[MESH_PLAN_ALTERNATIVES + 1];
    int n_shapes;
    int has_closest, has_invalid;
    mesh_candidate_t closest; /* least memory over capacity */
    mesh_layout_t invalid;    /* some invalid layout, to explain "none valid" */
    family_stat_t fam[MESH_FAMILY_COUNT];
    struct choice_memo *memo; /* choice_only: what the floors keep */
} search_t;

/* What a search for the choice alone keeps of the shape it searches (on
 * the heap: the other searches, some of them nested, need none of it). */
typedef struct choice_memo {
    /* per interleaving (vpp_index) and recomputation, the slot times of
     * its sweeps' first micro-batch and per sample of their last
     * (slot_time_at) */
    slot_memo_t slot[MEMO_VPPS][3][2];
    /* per interleaving, recomputation and micro-batch (the sweep's
     * size_index), floors (unwanted) */
    stage_memo_t stage[MEMO_VPPS][3][MEMO_SIZES];
} choice_memo_t;

struct mesh_plan {
    mesh_model_t model;
    mesh_alloc_t alloc;
    mesh_assumptions_t assume; /* the policy's: the plan keeps no other part */
    mesh_layout_t pins;
    int fits;
    mesh_candidate_t best;
    mesh_candidate_t alts[MESH_PLAN_ALTERNATIVES];
    int n_alts;
    /* the explanation: records, and the lines report.c renders from them */
    mesh_reason_t reasons[LINES_MAX];
    int n_reasons;
    mesh_advice_t advice[LINES_MAX];
    int n_advice;
    char reason_lines[LINES_MAX][LINE_LEN];
    /* why the fastest near-tie was not chosen, when it was not */
    mesh_reason_t near_tie;
    int has_near_tie;
    char advice_lines[LINES_MAX][LINE_LEN];
    long evaluated;
    char digest[17];
};

static mesh_family_t family_of(const mesh_layout_t *l)
{
    if (l->pp > 1)
        return MESH_FAMILY_PP;
    if (l->tp > 1 || l->cp > 1)
        return MESH_FAMILY_TP;
    return l->dp > 1 ? (mesh_family_t)(MESH_FAMILY_DP + l->zero) : MESH_FAMILY_DP;
}

/* Lexicographic simplicity: negative if a is simpler than b. */
static int simpler(const mesh_candidate_t *a, const mesh_candidate_t *b)
{
    const mesh_layout_t *x = &a->layout, *y = &b->layout;
    int kx[] = {family_of(x), x->pp, x->tp, x->cp, x->vpp, x->zero, (int)x->recompute};
    int ky[] = {family_of(y), y->pp, y->tp, y->cp, y->vpp, y->zero, (int)y->recompute};
    for (int i = 0; i < MESH_ARRAY_LEN(kx); i++)
        if (kx[i] != ky[i])
            return kx[i] < ky[i] ? -1 : 1;
    if (a->memory.total != b->memory.total)
        return a->memory.total < b->memory.total ? -1 : 1;
    if (x->micro_batch != y->micro_batch)
        return x->micro_batch < y->micro_batch ? -1 : 1;
    return x->sequence_parallel - y->sequence_parallel;
}

static int same_shape(const mesh_layout_t *a, const mesh_layout_t *b)
{
    return a->tp == b->tp && a->cp == b->cp && a->pp == b->pp && a->ep == b->ep && a->etp == b->etp;
}

static void keep_shape(search_t *s, const mesh_candidate_t *c)
{
    int worst = 0;
    for (int j = 0; j < s->n_shapes; j++) {
        if (same_shape(&s->shapes[j].layout, &c->layout)) {
            if (c->cost.step_seconds < s->shapes[j].cost.step_seconds)
                s->shapes[j] = *c;
            return;
        }
        if (s->shapes[j].cost.step_seconds > s->shapes[worst].cost.step_seconds)
            worst = j;
    }
    if (s->n_shapes < MESH_ARRAY_LEN(s->shapes))
        s->shapes[s->n_shapes++] = *c;
    else if (c->cost.step_seconds < s->shapes[worst].cost.step_seconds)
        s->shapes[worst] = *c; /* a shape it displaces can only come back faster */
}

/* Keep a fitting layout if it can still be chosen.  The list stays a few
 * entries long: a long one would cost more in the allocator's page faults
 * than the whole search does. */
static void add_fit(search_t *s, const mesh_candidate_t *c)
{
    if (!s->choice_only)
        keep_shape(s, c);
    double t = c->cost.step_seconds;
    if (s->n_fits == 0 || t < s->fastest) {
        s->fastest = t;
        size_t k = 0;
        for (size_t i = 0; i < s->n_fits; i++)
            if (s->fits[i].cost.step_seconds <= t * (1 + MESH_PLAN_TIE))
                s->fits[k++] = s->fits[i];
        s->n_fits = k;
    } else if (t > s->fastest * (1 + MESH_PLAN_TIE)) {
        return;
    }
    if (s->n_fits == s->cap_fits) {
        size_t cap = s->cap_fits ? 2 * s->cap_fits : 64;
        mesh_candidate_t *f = realloc(s->fits, cap * sizeof(*f));
        if (!f) {
            s->oom = 1;
            return;
        }
        s->fits = f;
        s->cap_fits = cap;
    }
    s->fits[s->n_fits++] = *c;
}

static void note_family(search_t *s, const mesh_candidate_t *c)
{
    family_stat_t *f = &s->fam[family_of(&c->layout)];
    f->valid++;
    if (!f->has_min || c->memory.total < f->min.memory.total) {
        f->min = *c;
        f->has_min = 1;
    }
    if (c->fits && (!f->has_fit || c->cost.step_seconds < f->fit.cost.step_seconds)) {
        f->fit = *c;
        f->has_fit = 1;
    }
}

/* What a node's host memory may give the optimizer states offloaded to
 * it: the rest is for the OS, data loaders and pinned staging buffers. */
#define HOST_USABLE 0.8

/* Price layout l into c: its memory, and whether it fits the GPU (and,
 * with the optimizer offloaded, the host memory of its node, shared by the
 * node's tasks). */
static void price(search_t *s, const mesh_layout_t *l, mesh_candidate_t *c)
{
    memset(c, 0, sizeof(*c));
    c->layout = *l;
    c->micro_batches = mesh_layout_micro_batches(l, s->m->global_batch);
    int key = (l->zero * 2 + (l->offload == 1)) * 8 + (int)l->moments;
    if (key != s->memo_key) {
        mesh_states_sums(s->m, l, s->sums);
        s->memo_key = key;
    }
    mesh_memory_priced(s->m, l, s->a, s->assume, s->psi, s->psi_e, s->sums, &c->memory);
    c->fits = c->memory.total <= c->memory.capacity &&
              (c->memory.host <= 0 ||
               c->memory.host * s->a->gpus_per_node <= HOST_USABLE * s->a->host_memory);
}

/* The layers of l's fullest stage a full:N recomputation can cover. */
static int most_layers(const search_t *s, const mesh_layout_t *l)
{
    return mesh_pp_stage_layers(s->m, l, 1 % l->pp);
}

/* The fewest layers per stage a planned full:N recomputation of l (of at
 * most `most`) is searched from: those needed at the micro-batch before,
 * without levers. */
static int fewest_layers(const search_t *s, const mesh_layout_t *l, int most)
{
    int plain = !l->offload && l->moments == MESH_PREC_FP32;
    return plain && s->full_lo > 1 && s->full_lo <= most ? s->full_lo : 1;
}

/* recompute full:N with N planned: the fewest layers per stage whose
 * recomputation fits (memory falls as N grows, time rises), found by
 * bisection; all of them (0) when even that does not fit.  Prices the
 * layout chosen into *c. */
static void partial_recompute(search_t *s, mesh_layout_t *l, mesh_candidate_t *c)
{
    int most = most_layers(s, l), plain = !l->offload && l->moments == MESH_PREC_FP32;
    int lo = fewest_layers(s, l, most), hi = most;
    /* N = most recomputes every layer of every stage: full itself */
    l->recompute_layers = most;
    price(s, l, c);
    if (!c->fits || most <= 1) {
        l->recompute_layers = c->layout.recompute_layers = 0;
        return;
    }
    while (lo < hi) {
        mesh_candidate_t t;
        l->recompute_layers = lo + (hi - lo) / 2;
        price(s, l, &t);
        if (t.fits) {
            hi = l->recompute_layers;
            *c = t;
        } else {
            lo = l->recompute_layers + 1;
        }
    }
    if (plain)
        s->full_lo = lo;
    l->recompute_layers = c->layout.recompute_layers = lo == most ? 0 : lo;
}

/* recompute selective with its modules planned: the first set that fits,
 * in the order of what they cost to recompute (module_sets, each holding
 * the one before).  FlashAttention keeps no scores, so the attention core
 * is worth recomputing only without it.  Prices the layout chosen into *c. */
static const int *module_sets(const mesh_model_t *m, int *n)
{
    /* "layernorm" saves nothing under Megatron's default layers (see
     * mesh_activation_layer), so it is never chosen */
    static const int flash[] = {MESH_RC_MLP};
    static const int scores[] = {MESH_RC_CORE_ATTN, MESH_RC_CORE_ATTN | MESH_RC_MLP};
    *n = m->flash_attention ? MESH_ARRAY_LEN(flash) : MESH_ARRAY_LEN(scores);
    return m->flash_attention ? flash : scores;
}

static void selective_modules(search_t *s, mesh_layout_t *l, mesh_candidate_t *c)
{
    int n;
    const int *sets = module_sets(s->m, &n);
    /* the last set saves the most: if it does not fit, none does */
    l->recompute_modules = sets[n - 1];
    price(s, l, c);
    for (int i = 0; c->fits && i < n - 1; i++) {
        mesh_candidate_t t;
        l->recompute_modules = sets[i];
        price(s, l, &t);
        if (t.fits) {
            *c = t;
            break;
        }
        l->recompute_modules = sets[n - 1];
    }
    if (l->recompute_modules == MESH_RC_CORE_ATTN) /* Megatron's default: plain selective */
        l->recompute_modules = c->layout.recompute_modules = 0;
}

/* The memory levers, tried in this order on a layout that does not fit as
 * it is: 16-bit Adam moments (only where the spec allows them, since they
 * change numerics), optimizer offload (only where the node's host memory is
 * known), then both.  A pinned lever is the only value tried. */
static int levers(const search_t *s, const mesh_layout_t *l, mesh_layout_t out[4])
{
    const mesh_layout_t *p = s->pins;
    int pin_m = (int)p->moments != MESH_FREE, pin_o = p->offload != MESH_FREE;
    int n = 0;
    for (int i = 0; i < 4; i++) {
        int use16 = i & 1, off = i >> 1;
        if (use16 && (pin_m || s->m->optimizer_dtype == MESH_PREC_FP32))
            continue;
        if (off && (pin_o || s->a->host_memory <= 0 || l->zero < 1))
            continue;
        out[n] = *l;
        out[n].moments = pin_m ? p->moments : use16 ? s->m->optimizer_dtype : MESH_PREC_FP32;
        out[n].offload = pin_o ? p->offload : off;
        n++;
    }
    return n;
}

/* l with the recomputation it leaves to the planner (layers of full,
 * modules of selective) at their defaults, to check its other fields. */
static mesh_layout_t checkable(const mesh_layout_t *l)
{
    mesh_layout_t c = *l;
    if (c.recompute_layers == MESH_FREE)
        c.recompute_layers = 0;
    if (c.recompute_modules == MESH_FREE)
        c.recompute_modules = 0;
    return c;
}

/* Whether the search keeps the records its plan is explained from (the
 * layouts it evaluated, the invalid ones, the families): not when it
 * answers whether anything fits, nor for the choice alone. */
static int keeps_records(const search_t *s)
{
    return !s->first_fit_only && !s->choice_only;
}

/* Whether layout l breaks a rule of mesh_layout_check's that no lever or
 * recomputation can mend: the global batch not split evenly over
 * micro-batches and replicas, a stage without a layer, or interleaving
 * with micro-batches that are no multiple of the stages (lib/layout.c).
 * A cheap sufficient test, not the check: most of the layouts of an
 * allocation whose GPU count shares few factors with the batch, and most
 * interleaved ones, fail it, and only the first of each family is
 * explained. */
static int surely_invalid(const search_t *s, const mesh_layout_t *l)
{
    const mesh_model_t *m = s->m;
    if (l->micro_batch < 1 || l->dp < 1 || l->pp < 1)
        return 0;
    long per = (long)l->micro_batch * l->dp;
    return m->global_batch % per != 0 || s->split_invalid ||
           (l->vpp > 1 && (m->global_batch / per) % l->pp != 0);
}

static int divisors(long n, long hi, int *out);

/* The micro-batch sizes of l's data-parallel size (s->batch_sizes):
 * how many, 0 when the replicas cannot share the global batch evenly. */
static int batch_list(search_t *s, const mesh_layout_t *l)
{
    if (s->batch_dp != l->dp) {
        long per_replica = s->m->global_batch % l->dp ? 0 : s->m->global_batch / l->dp;
        s->n_batch_sizes = 0;
        if (per_replica <= (long)MB_MAX * MB_MAX) /* trial division to its root */
            s->n_batch_sizes = divisors(per_replica, MB_MAX, s->batch_sizes);
        else
            for (int mb = 1; mb <= MB_MAX; mb++)
                if (per_replica % mb == 0)
                    s->batch_sizes[s->n_batch_sizes++] = mb;
        s->batch_dp = l->dp;
    }
    return s->n_batch_sizes;
}

/* ---- leaving unpriced what cannot be chosen (choice_only) ----
 *
 * A search for the choice alone prices a layout only if it can be a
 * near-tie of the fastest layout found so far (add_fit drops the others)
 * and of one that meets the deadline: a floor under its step time says
 * which cannot.  Left unpriced, a layout neither stops its micro-batch
 * sweep nor tells the sweeps after it whether it fit; that changes
 * nothing that can be chosen: memory grows with the micro-batch (what the
 * sweep's stop assumes already), and the recomputing layouts at its size
 * that it would have spared are no faster than it, so they are left
 * unpriced too.  The floors rest on the cost model only adding time for
 * recomputing more, and on a micro-batch's slot time (cost.c's parts that
 * scale with the pipeline's slots) growing with it, less than in
 * proportion: tests/unit/test_size.c checks both over many layouts. */

/* The slowest step a layout may take to be wanted: MESH_PLAN_TIE above
 * the fastest so far or the deadline, the shorter; 0 while any is (no
 * fit and no deadline yet, or the expert search still counting). */
static double wanted_limit(const search_t *s)
{
    if (!s->choice_only || s->fitting <= s->guard || (s->n_fits == 0 && s->deadline <= 0))
        return 0;
    double limit = s->n_fits == 0                                ? s->deadline
                   : s->deadline > 0 && s->deadline < s->fastest ? s->deadline
                                                                 : s->fastest;
    return limit * (1 + MESH_PLAN_TIE);
}

/* l with the least recomputation the planner can give it: a planned
 * full:N of `layers` (where its search starts), a planned selective with
 * the first module set (module_sets). */
static mesh_layout_t least_recompute(const search_t *s, const mesh_layout_t *l, int layers)
{
    mesh_layout_t b = *l;
    int n_sets;
    if (b.recompute == MESH_RECOMPUTE_FULL && b.recompute_layers == MESH_FREE)
        b.recompute_layers = layers;
    if (b.recompute == MESH_RECOMPUTE_SELECTIVE && b.recompute_modules == MESH_FREE)
        b.recompute_modules = module_sets(s->m, &n_sets)[0];
    return b;
}

/* The time per pipeline slot (a micro-batch's compute, TP, CP and expert
 * traffic on the slowest stage) of cost c of layout l: cost.c's parts
 * that scale with the slots, over them. */
static double slot_time(const mesh_model_t *m, const mesh_layout_t *l, const mesh_cost_t *c)
{
    double slots =
        (double)mesh_layout_micro_batches(l, m->global_batch) + (double)(l->pp - 1) / l->vpp;
    return (c->compute_s + c->tp_comm_s + c->cp_comm_s + c->ep_comm_s) / slots;
}

/* The slot time of l (its recomputation the least, see least_recompute)
 * at the sweep's micro-batch i, per sample when per_sample; counted once
 * per recomputation and full:N of a shape, for the sweep's first and last
 * micro-batches, and per interleaving where the stages' layers depend on
 * it (a MoE model's, or one with MTP layers; a dense model's full
 * recomputation covers every layer interleaved and N of them without: two
 * memos). */
static double slot_time_at(search_t *s, const mesh_layout_t *l, int i, int per_sample)
{
    slot_memo_t none = {0, 0, -1};
    int vi = mesh_model_is_moe(s->m) || s->m->mtp_layers ? s->vpp_index : s->vpp_index > 0;
    slot_memo_t *e = vi < MEMO_VPPS ? &s->memo->slot[vi][(int)l->recompute][per_sample] : &none;
    int layers = l->recompute == MESH_RECOMPUTE_FULL ? l->recompute_layers : 0;
    if (e->shape != s->shapes_searched || e->layers != layers) {
        mesh_layout_t b = *l;
        b.micro_batch = s->batch_sizes[i];
        mesh_cost_t c;
        mesh_cost_priced(s->m, &b, s->a, s->psi_max, s->psi_e_max, &c);
        e->seconds = slot_time(s->m, &b, &c) / (per_sample ? b.micro_batch : 1);
        e->layers = layers;
        e->shape = s->shapes_searched;
    }
    return e->seconds;
}

/* A floor under the step of every layout of l's sweep from a micro-batch
 * whose slot time is `first` on: the replica's samples at the least slot
 * time per sample (the sweep's last micro-batch's), the bubble's slots at
 * `first` at least, and `fixed` (the same for all).  l's recomputation
 * the least. */
static double sweep_floor(search_t *s, const mesh_layout_t *l, double first, double fixed)
{
    double per_replica = (double)(s->m->global_batch / l->dp);
    double per_sample = slot_time_at(s, l, s->n_batch_sizes - 1, 1);
    return (per_replica * per_sample + (double)(l->pp - 1) / l->vpp * first + fixed) *
           (1 - 1e-9); /* the divisions' rounding */
}

/* A floor under the step of every layout of shape l, whatever its
 * interleaving (one of vpps[0..nv-1]), ZeRO stage, recomputation and
 * micro-batch: its sweeps' without recomputation at the most
 * interleaving.  A dense model's slot time does not depend on the
 * interleaving; a MoE model's stages can hold other layers under each.
 * 0 where there is none (no micro-batch divides, or one is pinned). */
static double shape_floor(search_t *s, const mesh_layout_t *l, const int *vpps, int nv)
{
    if (!batch_list(s, l) || s->pins->micro_batch != MESH_FREE)
        return 0;
    mesh_layout_t b = *l;
    b.recompute = MESH_RECOMPUTE_NONE;
    b.recompute_layers = b.recompute_modules = 0;
    b.zero = 0; /* not set yet; the slot time does not depend on it */
    double floor = 0;
    int each = mesh_model_is_moe(s->m) || s->m->mtp_layers, vmax = 1;
    for (int i = 0; i < nv; i++) {
        vmax = vpps[i] > vmax ? vpps[i] : vmax;
        b.vpp = vpps[i];
        s->vpp_index = i;
        double f = each ? sweep_floor(s, &b, slot_time_at(s, &b, 0, 0), 0) : 0;
        floor = i == 0 || f < floor ? f : floor;
    }
    if (!each) { /* the slot times of the first, the bubble of the most */
        b.vpp = vpps[0];
        s->vpp_index = 0;
        double first = slot_time_at(s, &b, 0, 0);
        slot_time_at(s, &b, s->n_batch_sizes - 1, 1);
        b.vpp = vmax;
        floor = sweep_floor(s, &b, first, 0);
    }
    return floor;
}

/* Whether no layout of shape l is wanted (see shape_floor). */
static int shape_unwanted(search_t *s, mesh_layout_t *l, const int *vpps, int nv)
{
    double limit = wanted_limit(s);
    if (limit <= 0 || shape_floor(s, l, vpps, nv) <= limit)
        return 0;
    s->skipped++;
    return 1;
}

/* Whether a valid layout whose lever tries are tries[0..n-1] is wanted: a
 * floor under whatever evaluate prices for it is the cost of tries[0]
 * with the least recomputation and, where levers are tried, without the
 * optimizer step, the one part of the cost they change.  0: price it; 1:
 * do not; 2: nor any layout after it in its sweep. */
static int unwanted(search_t *s, const mesh_layout_t *tries, int n)
{
    double limit = wanted_limit(s);
    if (limit <= 0)
        return 0;
    int layers = n > 1 ? 1 : fewest_layers(s, &tries[0], most_layers(s, &tries[0]));
    mesh_layout_t l = least_recompute(s, &tries[0], layers);
    /* the same layout under an earlier ZeRO stage: the stage changes only
     * the data-parallel traffic and the optimizer step (test_size checks
     * it), so its floor without them floors this one */
    stage_memo_t *z = s->vpp_index < MEMO_VPPS && s->size_index >= 0 && s->size_index < MEMO_SIZES
                          ? &s->memo->stage[s->vpp_index][(int)l.recompute][s->size_index]
                          : NULL;
    s->stage_entry = NULL;
    if (z && z->shape == s->shapes_searched && z->layers == layers) {
        if (z->part > limit)
            return sweep_floor(s, &l, z->slot, 0) > limit ? 2 : 1;
        /* too large under the last stage: most likely under this one too,
         * so pricing it, which says so, spares the floor (a guess: the
         * choice does not depend on it) */
        s->stage_entry = z;
        if (z->too_big)
            return 0;
    }
    mesh_cost_t c;
    mesh_cost_priced(s->m, &l, s->a, s->psi_max, s->psi_e_max, &c);
    s->floor_layout = l;
    s->floor_cost = c;
    s->has_floor = 1;
    if (z) { /* cost.c's sum, in its order, without the stage's parts */
        z->part = c.compute_s + c.tp_comm_s + c.cp_comm_s + c.pp_comm_s + 0.0 + 0.0 + c.ep_comm_s;
        z->slot = slot_time(s->m, &l, &c);
        z->layers = layers;
        z->shape = s->shapes_searched;
        z->too_big = 0;
        s->stage_entry = z;
    }
    /* and without the optimizer step where levers are tried */
    double floor = n == 1 ? c.step_seconds
                          : c.compute_s + c.tp_comm_s + c.cp_comm_s + c.pp_comm_s + c.dp_comm_s +
                                0.0 + c.ep_comm_s;
    if (floor <= limit)
        return 0;
    if (s->size_index < 0) /* no sweep */
        return 1;
    double fixed = n == 1 ? c.optimizer_s : 0;
    return sweep_floor(s, &l, slot_time(s->m, &l, &c), fixed) > limit ? 2 : 1;
}

/* Evaluate one layout; returns 1 if it was valid but did not fit (so a
 * larger micro-batch will not fit either) or nothing after it in its
 * sweep is wanted (unwanted), 0 otherwise. */
static int evaluate(search_t *s, const mesh_layout_t *l0)
{
    mesh_layout_t tries[4], base = *l0;
    int n = levers(s, l0, tries);
    s->evaluated++;
    if (n)
        base = checkable(&tries[0]);
    if (n == 0 || mesh_layout_check(s->m, s->a, &base, NULL) < 0) {
        const mesh_layout_t *l = &base;
        if (!s->has_invalid) {
            s->invalid = *l;
            s->has_invalid = 1;
        }
        family_stat_t *f = &s->fam[family_of(l)];
        if (!f->has_invalid) {
            f->invalid = *l;
            f->has_invalid = 1;
        }
        return 0;
    }
    s->valid++;
    s->has_floor = 0;
    s->stage_entry = NULL;
    int skip = s->choice_only ? unwanted(s, tries, n) : 0;
    if (skip)
        return skip == 2;
    mesh_candidate_t c;
    for (int i = 0; i < n; i++) {
        mesh_layout_t chk = checkable(&tries[i]);
        if (i > 0 && mesh_layout_check(s->m, s->a, &chk, NULL) < 0)
            continue;
        mesh_candidate_t t;
        if (tries[i].recompute == MESH_RECOMPUTE_FULL && tries[i].recompute_layers == MESH_FREE)
            partial_recompute(s, &tries[i], &t);
        else if (tries[i].recompute == MESH_RECOMPUTE_SELECTIVE &&
                 tries[i].recompute_modules == MESH_FREE)
            selective_modules(s, &tries[i], &t);
        else
            price(s, &tries[i], &t);
        if (i == 0 || t.fits || (!c.fits && t.memory.total < c.memory.total))
            c = t;
        if (c.fits)
            break;
    }
    if (c.fits && s->first_fit_only) {
        s->first = c;
        s->found = 1;
        return 0;
    }
    if (c.fits && c.layout.recompute == MESH_RECOMPUTE_NONE && !c.layout.offload &&
        c.layout.moments == MESH_PREC_FP32 && c.layout.micro_batch > s->plain_mb)
        s->plain_mb = c.layout.micro_batch;
    s->priced_oom = !c.fits;
    if (s->choice_only && s->stage_entry)
        s->stage_entry->too_big = !c.fits;
    if (c.fits) {
        s->fitting++;
        if (s->has_floor && !memcmp(&s->floor_layout, &c.layout, sizeof(c.layout)))
            c.cost = s->floor_cost; /* the floor was its own cost */
        else
            mesh_cost_priced(s->m, &c.layout, s->a, s->psi_max, s->psi_e_max, &c.cost);
        add_fit(s, &c);
    } else if (!s->has_closest || c.memory.total < s->closest.memory.total) {
        s->closest = c;
        s->has_closest = 1;
    }
    if (!s->choice_only)
        note_family(s, &c);
    return !c.fits;
}

/* evaluate(), except that a layout surely invalid only counts once the
 * search and its family keep the invalid layout they explain (evaluate
 * keeps no other), or at once in a search that keeps no records. */
static int consider(search_t *s, const mesh_layout_t *l)
{
    if ((!keeps_records(s) || (s->has_invalid && s->fam[family_of(l)].has_invalid)) &&
        surely_invalid(s, l)) {
        s->evaluated++;
        return 0;
    }
    return evaluate(s, l);
}

/* The values a dimension takes: the pin alone (checked later, so that a bad
 * pin is explained), or every value in lo..hi that `ok` accepts. */
typedef struct range {
    int pin, v, hi;
} range_t;

static int range_first(range_t *r, int pin, int lo, int hi)
{
    r->pin = pin;
    r->hi = hi;
    r->v = pin != MESH_FREE ? pin : lo;
    return pin != MESH_FREE || lo <= hi;
}

static int range_next(range_t *r)
{
    if (r->pin != MESH_FREE || r->v >= r->hi)
        return 0;
    r->v++;
    return 1;
}

#define FOR_RANGE(r, pin, lo, hi)                                                                  \
    for (int more_##r = range_first(&(r), pin, lo, hi); more_##r; more_##r = range_next(&(r)))

/* The divisors of n up to hi, ascending, in out.  Trial division up to
 * sqrt(n), not a walk over every count: the search for what would fit asks
 * this of up to MAX_GPUS GPUs and 100,000 layers, many times over. */
#define DIVISORS_MAX 1024 /* numbers below 2^22 have at most a few hundred */
static int divisors(long n, long hi, int *out)
{
    int k = 0, n_large = 0, large[DIVISORS_MAX / 2];
    for (long d = 1; d * d <= n && k < DIVISORS_MAX / 2 && n_large < DIVISORS_MAX / 2; d++) {
        if (n % d)
            continue;
        if (d <= hi)
            out[k++] = (int)d;
        if (n / d != d && n / d <= hi)
            large[n_large++] = (int)(n / d);
    }
    while (n_large > 0)
        out[k++] = large[--n_large];
    return k;
}

/* Whether the first layout of l's sweep is too large for memory, known
 * without pricing it: interleaving keeps each stage's layers and holds at
 * least as many micro-batches in flight (lib/memory.c), so where the same
 * sweep without it found its first micro-batch too large, so is this
 * sweep's, and the sweep stops there.  Not where the interleaving moves a
 * MoE model's dense layers between stages, nor where the sweep starts
 * later (past the sizes its sweep without recomputation fit at) or its
 * first layout breaks the interleaving's rule. */
static int too_large(search_t *s, mesh_layout_t *l)
{
    if (s->vpp_index == 0 || s->m->moe.dense_layers || !s->oom_first[l->recompute] ||
        (l->recompute != MESH_RECOMPUTE_NONE && s->plain_mb > 0))
        return 0;
    l->micro_batch = s->batch_sizes[0];
    if (surely_invalid(s, l))
        return 0;
    s->skipped++;
    return 1;
}

/* The inner loops: micro-batch sizes smallest first. */
static void search_batches(search_t *s, mesh_layout_t *l)
{
    const mesh_layout_t *p = s->pins;
    s->full_lo = 1;
    if (p->micro_batch != MESH_FREE || s->first_fit_only) {
        /* answering "does anything fit?", the smallest micro-batch decides:
         * memory grows with it (the loop below stops likewise) */
        l->micro_batch = p->micro_batch != MESH_FREE ? p->micro_batch : 1;
        s->size_index = -1;
        consider(s, l);
        return;
    }
    if (batch_list(s, l) == 0) { /* no micro-batch divides: record why */
        l->micro_batch = 1;
        s->size_index = -1;
        consider(s, l);
        return;
    }
    if (s->choice_only && too_large(s, l))
        return;
    if (s->vpp_index == 0) /* until this sweep's first size says otherwise */
        s->oom_first[l->recompute] = 0;
    for (int i = 0; i < s->n_batch_sizes && !s->found; i++) {
        int mb = s->batch_sizes[i];
        if (l->recompute != MESH_RECOMPUTE_NONE && mb <= s->plain_mb)
            continue;
        l->micro_batch = mb;
        s->priced_oom = 0;
        s->size_index = i;
        int stop = consider(s, l);
        if (i == 0 && s->vpp_index == 0)
            s->oom_first[l->recompute] = s->priced_oom;
        if (stop)
            break; /* memory grows with the micro-batch */
    }
}

static void shape_params(search_t *s, const mesh_layout_t *l);

/* Whether some micro-batch size of shape l (batch_list) gives a
 * micro-batch count that is a multiple of its stages, as interleaving
 * needs (surely_invalid). */
static int interleavable(search_t *s, const mesh_layout_t *l)
{
    long per_replica = s->m->global_batch / l->dp;
    for (int i = 0, n = batch_list(s, l); i < n; i++)
        if ((per_replica / s->batch_sizes[i]) % l->pp == 0)
            return 1;
    return 0;
}

/* The interleavings split l allows, into vpps (1 first); how many: chunk
 * counts dividing its stages (none when only asking whether anything
 * fits: interleaving keeps each stage's layers and holds at least as many
 * in flight, so it never needs less memory, and it only adds rules; nor,
 * in a search that keeps no records, where no micro-batch count is a
 * multiple of the stages, as interleaving needs). */
static int interleavings(search_t *s, const mesh_layout_t *l, int vpps[VPPS_MAX])
{
    const mesh_model_t *m = s->m;
    int nv = 0;
    if (s->pins->vpp != MESH_FREE) {
        vpps[nv++] = s->pins->vpp;
        return nv;
    }
    vpps[nv++] = 1;
    if (s->first_fit_only || (!keeps_records(s) && !interleavable(s, l)))
        return nv;
    int q = m->has_arch ? (m->layers + l->pp - 1) / l->pp : 1, d[DIVISORS_MAX];
    int nd = divisors(q, q, d);
    for (int i = 0; i < nd && nv < VPPS_MAX; i++)
        if (d[i] >= 2 && mesh_vpp_chunk_layers(m->layers, l->pp, d[i]))
            vpps[nv++] = d[i];
    return nv;
}

static void search_stage_options(search_t *s, mesh_layout_t *l)
{
    const mesh_layout_t *p = s->pins;
    const mesh_model_t *m = s->m;
    int vpps[VPPS_MAX], nv = interleavings(s, l, vpps);
    if (s->choice_only && shape_unwanted(s, l, vpps, nv))
        return;
    /* ZeRO shards nothing over one replica.  Asking only whether anything
     * fits, every stage is tried, most sharded first: the frameworks'
     * buffers break the order in which the stages save memory (ZeRO-3
     * gathers whole layers, Megatron-FSDP's ZeRO-2 holds one layer's
     * unsharded gradients, DeepSpeed's ZeRO-1 a reduce bucket), so no stage
     * can stand for the others.  It stops at the first that fits. */
    int zmax = (long)l->dp * l->cp > 1 ? 3 : 0, zeros[4], nz = 0;
    if (p->zero != MESH_FREE) {
        zeros[nz++] = p->zero;
    } else if (s->first_fit_only) {
        for (int z = zmax; z >= 0; z--)
            zeros[nz++] = z;
    } else {
        for (int z = 0; z <= zmax; z++)
            zeros[nz++] = z;
    }
    range_t rc;
    for (int iz = 0; iz < nz; iz++) {
        l->zero = zeros[iz];
        for (int i = 0; i < nv; i++) {
            l->vpp = vpps[i];
            s->vpp_index = i;
            if (m->moe.dense_layers && nv > 1)
                shape_params(s, l); /* the dense layers follow the chunks */
            s->plain_mb = 0;
            FOR_RANGE (rc, (int)p->recompute, MESH_RECOMPUTE_NONE, MESH_RECOMPUTE_FULL) {
                /* without an arch there is nothing to recompute */
                if (rc.pin == MESH_FREE && rc.v != MESH_RECOMPUTE_NONE && !m->has_arch)
                    continue;
                /* Asking only whether anything fits, the least memory of
                 * each kind decides: every module set of selective
                 * recomputation stores less than none does, so none is not
                 * asked, and selective and full are asked at their
                 * strongest (full keeps one whole layer besides, so with
                 * few layers a stage it can need more than selective). */
                if (s->first_fit_only && rc.pin == MESH_FREE && m->has_arch &&
                    rc.v == MESH_RECOMPUTE_NONE)
                    continue;
                l->recompute = (mesh_recompute_t)rc.v;
                /* full recomputation: of N layers per stage, planned (the
                 * fewest that fit) unless pinned; interleaved, of all */
                l->recompute_layers = rc.v != MESH_RECOMPUTE_FULL ? 0
                                      : l->vpp > 1 && p->recompute_layers == MESH_FREE
                                          ? 0
                                          : p->recompute_layers;
                /* selective: which modules, planned (the cheapest set that
                 * fits) unless pinned */
                l->recompute_modules = rc.v != MESH_RECOMPUTE_SELECTIVE ? 0 : p->recompute_modules;
                if (s->first_fit_only && l->recompute_layers == MESH_FREE)
                    l->recompute_layers = 0;
                if (s->first_fit_only && l->recompute_modules == MESH_FREE)
                    l->recompute_modules =
                        m->flash_attention ? MESH_RC_MLP : MESH_RC_CORE_ATTN | MESH_RC_MLP;
                search_batches(s, l);
                if (s->found)
                    return;
            }
        }
    }
}

static long min_l(long a, long b)
{
    return a < b ? a : b;
}

/* The parameters of the heavy stages of the shape l (its tp, cp, pp, dp,
 * ep, etp and, for a MoE model with dense layers, vpp: interleaving moves
 * those between stages). */
static void shape_params(search_t *s, const mesh_layout_t *l)
{
    int stages[4], n = mesh_heavy_stages_of(s->m, l, stages);
    s->psi_max = s->psi_e_max = 0;
    for (int k = 0; k < n; k++) {
        s->psi[k] = mesh_stage_params(s->m, l, stages[k]);
        s->psi_e[k] = mesh_stage_expert_params(s->m, l, stages[k]);
        if (s->psi[k] > s->psi_max) {
            s->psi_max = s->psi[k];
            s->psi_e_max = s->psi_e[k];
        }
    }
    s->memo_key = -1;
}

/* One (tp, cp, pp, dp, ep, etp) shape: its heavy stages' parameters, then
 * every option of its stages. */
static void search_shape(search_t *s, mesh_layout_t *l)
{
    const mesh_model_t *m = s->m;
    l->vpp = 1; /* until search_stage_options sets it */
    s->split_invalid = m->has_arch && l->pp >= 1 &&
                       (l->pp > m->layers || mesh_stage_layers(m->layers, l->pp, 0) < 1);
    /* no layout of a shape that leaves a stage empty or cannot split the
     * batch over its replicas is valid: a search that keeps no record of
     * them need not count them */
    if (!keeps_records(s) && (s->split_invalid || m->global_batch % l->dp))
        return;
    shape_params(s, l);
    s->shapes_searched++;
    search_stage_options(s, l);
}

/* The expert layers' sizes of a (tp, cp, pp, dp) shape.  None in a dense
 * model.  In a MoE model: expert TP of 1, and tp (Megatron-LM's default
 * --expert-tensor-parallel-size) only where 1 fits nothing, since EP beats
 * TP for experts (larger GEMMs, less traffic: Megatron-LM's MoE guide,
 * transformer/moe/README.md "Guideline 4", at d98e8a6); and every EP that
 * divides the experts and the stage's ranks, those inside an NVLink island
 * first, from the largest down until one fits nothing (smaller ones hold
 * more experts per GPU), then those across nodes only where none inside
 * fits ("Guideline 2": keep EP x TP within NVLink).  Pinned values as they
 * are (the check explains them). */
static void search_experts(search_t *s, mesh_layout_t *l)
{
    const mesh_layout_t *p = s->pins;
    const mesh_model_t *m = s->m;
    if (!mesh_model_is_moe(m)) {
        l->ep = p->ep != MESH_FREE ? p->ep : 0;
        l->etp = p->etp != MESH_FREE ? p->etp : 0;
        s->guard = -1; /* nothing below counts the fitting layouts */
        search_shape(s, l);
        return;
    }
    /* the decisions below compare s->fitting with these counts (see guard) */
    long stage = (long)l->tp * l->cp * l->dp, fitting = s->guard = s->fitting;
    int etps[2], n_etp = 0, eps[DIVISORS_MAX];
    if (p->etp != MESH_FREE) {
        etps[n_etp++] = p->etp;
    } else {
        etps[n_etp++] = 1;
        if (l->tp > 1 && m->moe.ffn % l->tp == 0)
            etps[n_etp++] = l->tp;
    }
    for (int i = 0; i < n_etp && !s->found && s->fitting == fitting; i++) {
        l->etp = etps[i];
        if (p->ep != MESH_FREE || stage % l->etp) {
            l->ep = p->ep != MESH_FREE ? p->ep : 1; /* let the check explain */
            search_shape(s, l);
            continue;
        }
        int n = divisors(m->moe.experts, min_l(m->moe.experts, stage / l->etp), eps), near = 0;
        while (near < n && (long)eps[near] * l->etp <= s->a->island)
            near++;
        /* inside an island, the largest EP first */
        for (int j = near - 1, tried = 0; j >= 0 && !s->found; j--) {
            long before = s->guard = s->fitting;
            l->ep = eps[j];
            if ((stage / l->etp) % l->ep)
                continue; /* no shape of this EP: it says nothing of smaller ones */
            search_shape(s, l);
            /* a smaller EP holds more experts per GPU: where this one fit
             * nothing, no smaller one will (the largest may fail on other grounds) */
            if (s->fitting == before && tried++)
                break;
        }
        s->guard = fitting;
        /* across nodes only where no EP inside one fits this shape */
        for (int j = near; j < n && !s->found && s->fitting == fitting; j++) {
            l->ep = eps[j];
            if ((stage / l->etp) % l->ep == 0)
                search_shape(s, l);
        }
    }
}

static void search_run(search_t *s)
{
    const mesh_layout_t *p = s->pins;
    const mesh_model_t *m = s->m;
    const mesh_alloc_t *a = s->a;
    long world = (long)a->nodes * a->gpus_per_node;
    mesh_layout_t l;
    range_t tp, cp;
    int pps[DIVISORS_MAX];
    FOR_RANGE (tp, p->tp, 1, m->has_arch ? a->island : 1) {
        if (tp.pin == MESH_FREE && (a->gpus_per_node % tp.v || a->island % tp.v ||
                                    m->heads % tp.v || (m->kv_heads % tp.v && tp.v % m->kv_heads)))
            continue;
        /* context parallelism for long sequences only: 4K tokens or more per
         * rank, powers of two, no more ranks than there are */
        long cmax = m->has_arch && m->seq_len >= 8192 ? min_l(m->seq_len / 4096, world / tp.v) : 1;
        FOR_RANGE (cp, p->cp, 1, (int)cmax) {
            if (cp.pin == MESH_FREE && (cp.v & (cp.v - 1)))
                continue;
            long rest = world / ((long)tp.v * cp.v);
            /* stages must divide what TP and CP leave of the world */
            int npp = 1;
            if (p->pp != MESH_FREE)
                pps[0] = p->pp;
            else
                npp = divisors(rest, min_l(m->has_arch ? m->layers : 1, rest), pps);
            for (int i = 0; i < npp; i++) {
                int pp = pps[i];
                long mp = (long)tp.v * cp.v * pp;
                int all_pinned = tp.pin != MESH_FREE && cp.pin != MESH_FREE && p->pp != MESH_FREE;
                if (world % mp && !all_pinned)
                    continue;
                long dp = world / mp;
                if (p->dp != MESH_FREE && p->dp != dp) {
                    if (!all_pinned)
                        continue;
                    dp = p->dp; /* fully pinned: let the check explain */
                }
                l.tp = tp.v;
                l.cp = cp.v;
                l.pp = pp;
                l.dp = (int)(dp > 0 && dp < (1L << 30) ? dp : 1);
                /* sequence parallelism whenever it applies: it only saves memory */
                l.sequence_parallel = p->sequence_parallel != MESH_FREE
                                          ? p->sequence_parallel
                                          : tp.v > 1 && m->seq_len % tp.v == 0;
                l.offload = 0; /* the levers are tried in evaluate() */
                l.moments = MESH_PREC_FP32;
                search_experts(s, &l);
                if (s->found)
                    return;
            }
        }
    }
}

/* Complete a pinned layout with neutral values, to explain why it is invalid. */
static mesh_layout_t representative(const mesh_layout_t *p, long world)
{
    mesh_layout_t l;
    l.tp = p->tp != MESH_FREE ? p->tp : 1;
    l.cp = p->cp != MESH_FREE ? p->cp : 1;
    l.pp = p->pp != MESH_FREE ? p->pp : 1;
    l.dp = p->dp != MESH_FREE ? p->dp : (int)(world / ((long)l.tp * l.cp * l.pp));
    if (l.dp < 1)
        l.dp = 1;
    l.zero = p->zero != MESH_FREE ? p->zero : 0;
    l.vpp = p->vpp != MESH_FREE ? p->vpp : 1;
    l.micro_batch = p->micro_batch != MESH_FREE ? p->micro_batch : 1;
    l.recompute = p->recompute != MESH_RECOMPUTE_AUTO ? p->recompute : MESH_RECOMPUTE_NONE;
    l.sequence_parallel = p->sequence_parallel != MESH_FREE ? p->sequence_parallel : l.tp > 1;
    l.recompute_layers = p->recompute_layers > 0 ? p->recompute_layers : 0;
    l.recompute_modules = p->recompute_modules > 0 ? p->recompute_modules : 0;
    l.offload = p->offload == 1;
    l.moments = (int)p->moments >= 0 ? p->moments : MESH_PREC_FP32;
    l.ep = p->ep != MESH_FREE ? p->ep : 1;
    l.etp = p->etp != MESH_FREE ? p->etp : 1;
    return l;
}

static void search_init(search_t *s, const mesh_assumptions_t *assume, const mesh_model_t *m,
                        const mesh_alloc_t *a, const mesh_layout_t *pins, int first_fit_only)
{
    memset(s, 0, sizeof(*s));
    s->m = m;
    s->a = a;
    s->assume = assume;
    s->pins = pins;
    s->first_fit_only = first_fit_only;
    s->memo_key = -1;
}

/* ---- explanation ---- */

/* A new reason record of this kind, or NULL when LINES_MAX are kept. */
static mesh_reason_t *add_reason(mesh_plan_t *p, mesh_reason_kind_t kind, mesh_family_t f)
{
    if (p->n_reasons >= LINES_MAX)
        return NULL;
    mesh_reason_t *r = &p->reasons[p->n_reasons++];
    memset(r, 0, sizeof(*r));
    r->kind = kind;
    r->family = f;
    return r;
}

/* Why family f, simpler than the choice (or any, when nothing fits), was
 * not chosen: its best fit, its least memory, a rule, or the pins. */
static void explain_family(mesh_plan_t *p, mesh_family_t f, const family_stat_t *st)
{
    mesh_reason_kind_t kind = st->has_fit       ? MESH_REASON_SLOWER
                              : st->has_min     ? MESH_REASON_MEMORY
                              : st->has_invalid ? MESH_REASON_RULE
                                                : MESH_REASON_PINNED;
    mesh_reason_t *r = add_reason(p, kind, f);
    if (!r)
        return;
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

/* The nodes one expert-parallel group of l spans: ep ranks at stride etp,
 * etp*ep consecutive ranks in all. */
static int ep_nodes(const mesh_layout_t *l, const mesh_alloc_t *a)
{
    long span = (long)l->ep * (l->etp > 0 ? l->etp : 1);
    return span <= a->gpus_per_node ? 1 : (int)((span + a->gpus_per_node - 1) / a->gpus_per_node);
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
    search_init(&s, &p->assume, &p->model, &p->alloc, &pins, 0);
    search_run(&s);
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
        out->layout = s.has_invalid ? s.invalid : representative(&pins, mesh_layout_world(b));
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
static void explain_experts(mesh_plan_t *p)
{
    const mesh_layout_t *b = &p->best.layout;
    if (p->pins.ep != MESH_FREE && p->pins.ep != MESH_AUTO)
        return; /* pinned: nothing was chosen */
    mesh_reason_t *r = add_reason(p, MESH_REASON_EXPERTS, family_of(b));
    if (!r)
        return;
    r->chosen = 1;
    r->candidate = p->best;
    r->best_seconds = p->best.cost.step_seconds;
    r->ep_nodes = ep_nodes(b, &p->alloc);
    long stage = (long)b->tp * b->cp * b->dp / b->etp;
    int eps[DIVISORS_MAX], n = divisors(p->model.moe.experts, stage, eps), pick[4], np = 0;
    int smaller = 0, larger = 0, inside = 0;
    for (int i = 0; i < n; i++) {
        if (stage % eps[i] || eps[i] == b->ep)
            continue;
        if (eps[i] < b->ep)
            smaller = eps[i]; /* the largest below */
        else if (!larger)
            larger = eps[i]; /* the smallest above */
        if (eps[i] < b->ep && (long)eps[i] * b->etp <= p->alloc.island)
            inside = eps[i]; /* the largest below that stays on NVLink */
    }
    if (b->ep > 1)
        pick[np++] = 1;
    /* an EP across nodes answers "why not inside one?" with the largest that is */
    if (inside > 1 && inside != smaller && (long)b->ep * b->etp > p->alloc.island)
        pick[np++] = inside;
    if (smaller > 1)
        pick[np++] = smaller;
    if (larger)
        pick[np++] = larger;
    for (int i = 0; i < np; i++) {
        mesh_candidate_t c;
        char rule[MESH_ERROR_MAX] = "";
        best_at_ep(p, pick[i], &c, rule, sizeof(rule));
        if (!(r = add_reason(p, MESH_REASON_EXPERTS, family_of(&c.layout))))
            return;
        r->candidate = c;
        r->best_seconds = p->best.cost.step_seconds;
        r->ep_nodes = ep_nodes(&c.layout, &p->alloc);
        mesh_strlcpy(r->rule, rule, sizeof(r->rule));
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

/* The lines of the records, rendered once, so that mesh_plan_reason and
 * mesh_plan_advice hand out strings that live as long as the plan. */
static void render_lines(mesh_plan_t *p)
{
    for (int i = 0; i < p->n_reasons; i++)
        mesh_report_reason(&p->reasons[i], p->reason_lines[i], LINE_LEN);
    for (int i = 0; i < p->n_advice; i++)
        mesh_report_advice(&p->advice[i], p->advice_lines[i], LINE_LEN);
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
    search_init(&s, &p->assume, m, &a, pins, 1);
    search_run(&s);
    if (s.found)
        *out = s.first;
    return s.found;
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
    long fail = lo - 1, n = lo;
    for (int i = 0; n <= cap; i++) {
        if (fits_on(p, m, &free_dp, n, out))
            break;
        fail = n;
        n = i < 8 ? n + 1 : 2 * n;
        if (n > cap && fail < cap)
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

static void advise(mesh_plan_t *p)
{
    mesh_candidate_t c;
    mesh_advice_t *a;
    const mesh_layout_t *pins = &p->pins;
    /* 1. a pinned field that is in the way */
    static const struct {
        const char *key;
        size_t off;
    } fields[] = {
        {"zero", offsetof(mesh_layout_t, zero)},
        {"recompute", offsetof(mesh_layout_t, recompute)},
        {"mb", offsetof(mesh_layout_t, micro_batch)},
        {"tp", offsetof(mesh_layout_t, tp)},
        {"pp", offsetof(mesh_layout_t, pp)},
        {"cp", offsetof(mesh_layout_t, cp)},
        {"vpp", offsetof(mesh_layout_t, vpp)},
        {"dp", offsetof(mesh_layout_t, dp)},
        {"ep", offsetof(mesh_layout_t, ep)},
        {"etp", offsetof(mesh_layout_t, etp)},
    };
    for (int i = 0; i < MESH_ARRAY_LEN(fields); i++) {
        mesh_layout_t relaxed = *pins;
        int *f = (int *)((char *)&relaxed + fields[i].off);
        if (*f == MESH_FREE)
            continue;
        int was = *f;
        *f = MESH_FREE;
        if (fits_on(p, &p->model, &relaxed, 0, &c) && (a = add_advice(p, MESH_ADVICE_UNPIN, &c))) {
            a->field = fields[i].key;
            a->pinned = was;
            a->value = *(const int *)((const char *)&c.layout + fields[i].off);
        }
    }
    mesh_layout_t none;
    mesh_layout_unpin(&none);
    if (fits_on(p, &p->model, &none, 0, &c)) {
        if (p->n_advice == 0)
            add_advice(p, MESH_ADVICE_UNPIN_ALL, &c);
        return; /* the allocation is big enough: the pins were in the way */
    }
    /* 2. more nodes */
    int n = min_nodes(p, &p->model, &none, &c);
    if (n > 0 && (a = add_advice(p, MESH_ADVICE_NODES, &c))) {
        a->nodes = n;
        a->gpus = n * p->alloc.gpus_per_node;
    }
    /* 3. parameter-efficient fine-tuning */
    if (p->model.finetune != MESH_FINETUNE_FULL)
        return;
    mesh_model_t lora = p->model;
    lora.finetune = MESH_FINETUNE_LORA;
    double w, g, k,
        total = (double)p->alloc.nodes * p->alloc.gpus_per_node *
                mesh_policy_usable(&p->assume, &p->alloc.gpu);
    mesh_state_bytes(&p->model, &w, &g, &k);
    if ((n == 0 || n > 4 * p->alloc.nodes) && (a = add_advice(p, MESH_ADVICE_OUT_OF_REACH, NULL))) {
        a->bytes_per_param = w + g + k;
        a->states = (w + g + k) * p->model.params;
        a->usable = total;
    }
    if (fits_on(p, &lora, &none, 0, &c)) {
        add_advice(p, MESH_ADVICE_LORA, &c);
    } else if ((n = min_nodes(p, &lora, &none, &c)) > 0 &&
               (a = add_advice(p, MESH_ADVICE_LORA_NODES, &c))) {
        a->nodes = n;
        a->gpus = n * p->alloc.gpus_per_node;
    }
}

/* Memory used, as a fraction of the usable memory it is held against. */
static double used(const mesh_candidate_t *c)
{
    return c->memory.total / c->memory.capacity;
}

/* The simplest near-tie, among those needing at most `limit` of the usable
 * memory; NULL if none does. */
static const mesh_candidate_t *simplest_tie(const search_t *s, double limit)
{
    const mesh_candidate_t *best = NULL;
    for (size_t i = 0; i < s->n_fits; i++) {
        const mesh_candidate_t *c = &s->fits[i];
        if (c->cost.step_seconds > s->fastest * (1 + MESH_PLAN_TIE) || used(c) > limit)
            continue;
        if (!best || simpler(c, best) < 0)
            best = c;
    }
    return best;
}

/* The near-tie rule (doc/design.md, "Selection"), stated once: among the
 * layouts within MESH_PLAN_TIE of the fastest, the simplest, unless it
 * needs more than MESH_PLAN_TIGHT of the usable memory; then the simplest
 * of those needing at least MESH_PLAN_HEADROOM of it less, if any.  A
 * prediction is an estimate: 1% of step time is not worth running at the
 * edge of memory when a layout as fast leaves a tenth of it free.  Both
 * steps are minima over the same set, so the choice is independent of
 * search order.  *roomy_below: the limit the second step used (1 when it
 * did not run or found nothing), for the explanation. */
static const mesh_candidate_t *near_tie_choice(const search_t *s, double *roomy_below)
{
    const mesh_candidate_t *simplest = simplest_tie(s, 1), *roomy = NULL;
    *roomy_below = 1;
    if (used(simplest) > MESH_PLAN_TIGHT)
        roomy = simplest_tie(s, used(simplest) - MESH_PLAN_HEADROOM);
    if (!roomy)
        return simplest;
    *roomy_below = used(simplest) - MESH_PLAN_HEADROOM;
    return roomy;
}

/* The fastest near-tie (the simplest of equals). */
static const mesh_candidate_t *fastest_tie(const search_t *s)
{
    const mesh_candidate_t *f = NULL;
    for (size_t i = 0; i < s->n_fits; i++) {
        const mesh_candidate_t *c = &s->fits[i];
        if (!f || c->cost.step_seconds < f->cost.step_seconds ||
            (c->cost.step_seconds == f->cost.step_seconds && simpler(c, f) < 0))
            f = c;
    }
    return f;
}

/* When the choice is slower by the model than the fastest layout, say which
 * rule decided: headroom when the fastest was passed over as too tight,
 * else simplicity. */
static void explain_near_tie(mesh_plan_t *p, const search_t *s, double roomy_below)
{
    const mesh_candidate_t *f = fastest_tie(s);
    if (f->cost.step_seconds >= p->best.cost.step_seconds)
        return;
    mesh_reason_t *r = &p->near_tie;
    p->has_near_tie = 1;
    r->kind = MESH_REASON_NEAR_TIE;
    r->family = family_of(&f->layout);
    r->candidate = *f;
    r->best_seconds = p->best.cost.step_seconds;
    r->best_bytes = p->best.memory.total;
    r->tie = used(f) > roomy_below ? MESH_TIE_HEADROOM : MESH_TIE_SIMPLER;
}

static void choose(mesh_plan_t *p, search_t *s, double *roomy_below)
{
    const mesh_candidate_t *best = near_tie_choice(s, roomy_below);
    p->best = *best;
    p->fits = 1;
    /* runners-up: the fastest of each other (tp, cp, pp) shape, fastest
     * first (insertion sort: at most a handful) */
    for (int i = 0; i < s->n_shapes && p->n_alts < MESH_PLAN_ALTERNATIVES; i++)
        if (!same_shape(&s->shapes[i].layout, &p->best.layout))
            p->alts[p->n_alts++] = s->shapes[i];
    for (int i = 1; i < p->n_alts; i++)
        for (int j = i; j > 0 && p->alts[j].cost.step_seconds < p->alts[j - 1].cost.step_seconds;
             j--) {
            mesh_candidate_t t = p->alts[j];
            p->alts[j] = p->alts[j - 1];
            p->alts[j - 1] = t;
        }
}

/* Everything the plan depends on, so that ranks comparing digests catch a
 * node that planned from different inputs, not only a different layout. */
static void digest(mesh_plan_t *p)
{
    char text[1024], canon[MESH_LAYOUT_STR_MAX], model[17];
    const mesh_gpu_t *g = &p->alloc.gpu;
    const mesh_assumptions_t *as = &p->assume;
    snprintf(text, sizeof(text),
             "v3|%s|%d|%d|%d|%s|%.17g|%.17g|%.17g|%.17g|%.17g|%.17g|%.17g|%.17g|%.17g|%.17g|%.17g|"
             "%.17g|%s",
             mesh_model_digest(&p->model, model), p->alloc.nodes, p->alloc.gpus_per_node,
             p->alloc.island, g->name, g->memory, g->peak_flops, g->peak_fp8, g->hbm_bw, g->link_bw,
             g->net_bw, g->gemm_eff, p->alloc.host_memory, as->reserve, as->overhead_context,
             as->overhead_comm, as->fragmentation,
             mesh_layout_format(&p->best.layout, canon, sizeof(canon)));
    snprintf(p->digest, sizeof(p->digest), "%016llx", (unsigned long long)mesh_fnv1a64(text));
}

static int check_inputs(const mesh_model_t *m, const mesh_alloc_t *a, const mesh_layout_t *pins,
                        mesh_error_t *err)
{
    if (pins && !mesh_model_is_moe(m) && (pins->ep >= 0 || pins->etp >= 0))
        return mesh_error_set(err,
                              "mesh %s: %s has no experts; expert parallelism needs a MoE model "
                              "(arch.moe)",
                              pins->ep >= 0 ? "ep" : "etp", m->name);
    if (pins && pins->offload == 1 && a->host_memory <= 0)
        return mesh_error_set(err, "offload=optimizer: the nodes' host memory is unknown (give the "
                                   "job --mem, or meshplan --host-mem SIZE)");
    if (a->nodes < 1 || a->nodes > 1 << 20)
        return mesh_error_set(err, "nodes: %d is out of range (1..%d)", a->nodes, 1 << 20);
    if (a->gpus_per_node < 1 || a->gpus_per_node > 1024)
        return mesh_error_set(err, "gpus-per-node: %d is out of range (1..1024)", a->gpus_per_node);
    if ((long)a->nodes * a->gpus_per_node > MAX_GPUS)
        return mesh_error_set(err, "%d nodes x %d GPUs is more than %ld GPUs", a->nodes,
                              a->gpus_per_node, MAX_GPUS);
    if (a->island < 1)
        return mesh_error_set(err, "nvlink: island size must be at least 1");
    if (a->gpu.memory <= 0)
        return mesh_error_set(err, "gpu memory unknown: give --gpu NAME or --gpu-mem SIZE");
    if ((m->precision == MESH_PREC_BF16 || m->precision == MESH_PREC_FP8) && !a->gpu.has_bf16)
        return mesh_error_set(err, "train.precision: %s has no bf16; use precision: fp16",
                              a->gpu.name);
    if (m->precision == MESH_PREC_FP8 && a->gpu.peak_fp8 <= 0)
        return mesh_error_set(err,
                              "train.precision: %s has no FP8 tensor cores (Hopper, Ada, Blackwell "
                              "and MI300 do); use precision: bf16",
                              a->gpu.name);
    if (m->precision == MESH_PREC_FP8 && m->fp8_recipe == MESH_FP8_MXFP8 && !a->gpu.fp8_blocks)
        return mesh_error_set(err,
                              "train.fp8_recipe: mxfp8 needs Blackwell (compute capability 10); "
                              "%s runs delayed, tensorwise or blockwise",
                              a->gpu.name);
    return 0;
}

/* What the search runs on: the allocation with its island no larger than a
 * node, and the pins with the spec's own choices added (they act as pins
 * unless --mesh overrides them, with a value or with "auto"). */
static void search_inputs(const mesh_model_t *m, const mesh_alloc_t *a, const mesh_layout_t *pins,
                          mesh_alloc_t *alloc, mesh_layout_t *pin)
{
    *alloc = *a;
    if (alloc->island > alloc->gpus_per_node)
        alloc->island = alloc->gpus_per_node;
    if (pins)
        *pin = *pins;
    else
        mesh_layout_unpin(pin);
    if (pin->micro_batch == MESH_FREE && m->micro_batch > 0)
        pin->micro_batch = m->micro_batch;
    if (pin->recompute == MESH_RECOMPUTE_AUTO) {
        pin->recompute = m->recompute;
        if (m->recompute == MESH_RECOMPUTE_FULL) /* the spec's full is every layer */
            pin->recompute_layers = 0;
        if (m->recompute == MESH_RECOMPUTE_SELECTIVE) /* and its selective Megatron's */
            pin->recompute_modules = 0;
    }
    int *fields[] = {&pin->tp,          &pin->pp,
                     &pin->dp,          &pin->cp,
                     &pin->zero,        &pin->vpp,
                     &pin->micro_batch, &pin->sequence_parallel,
                     &pin->offload,     (int *)&pin->moments,
                     &pin->ep,          &pin->etp};
    for (int i = 0; i < MESH_ARRAY_LEN(fields); i++)
        if (*fields[i] == MESH_AUTO)
            *fields[i] = MESH_FREE;
    if ((int)pin->recompute == MESH_AUTO)
        pin->recompute = MESH_RECOMPUTE_AUTO;
    /* recompute: full from the spec or --mesh means all layers; a planned
     * full recomputation may cover fewer */
    if (pin->recompute == MESH_RECOMPUTE_AUTO)
        pin->recompute_layers = pin->recompute_modules = MESH_FREE;
}

/* *assume into *out, or mesh_policy_init's when it is NULL. */
static void default_assumptions(const mesh_assumptions_t *assume, mesh_assumptions_t *out)
{
    mesh_policy_t defaults;
    if (!assume) {
        mesh_policy_init(&defaults);
        assume = &defaults.assume;
    }
    *out = *assume;
}

/* A plan's inputs as its search runs on them: search_inputs', the policy's
 * assumptions, and the model with the imbalance a MoE model is priced at
 * (the spec's, else the policy's), so that memory, cost, the digest and
 * the report agree. */
static void plan_inputs(const mesh_model_t *m, const mesh_alloc_t *a, const mesh_layout_t *pins,
                        const mesh_assumptions_t *assume, mesh_model_t *model, mesh_alloc_t *alloc,
                        mesh_layout_t *pin, mesh_assumptions_t *as)
{
    *model = *m;
    search_inputs(m, a, pins, alloc, pin);
    default_assumptions(assume, as);
    if (mesh_model_is_moe(m) && m->moe_imbalance <= 0)
        model->moe_imbalance = mesh_moe_imbalance(m, as);
}

/* The error of a search s that found no valid layout, for model m on
 * allocation a (what the caller gave), with the inputs it ran on.  -1. */
static int no_valid_layout(const search_t *s, const mesh_model_t *m, const mesh_alloc_t *a,
                           mesh_error_t *err)
{
    mesh_layout_t l =
        s->has_invalid ? s->invalid : representative(s->pins, (long)a->nodes * a->gpus_per_node);
    mesh_error_t e;
    if (mesh_layout_check(s->m, s->a, &l, &e) == 0)
        snprintf(e.msg, sizeof(e.msg), "the pinned fields exclude every layout");
    return mesh_error_set(err, "no valid layout for %s on %d x %d GPUs: %s", m->name, a->nodes,
                          a->gpus_per_node, e.msg);
}

mesh_plan_t *mesh_plan_create(const mesh_model_t *m, const mesh_alloc_t *a,
                              const mesh_layout_t *pins, const mesh_assumptions_t *assume,
                              mesh_error_t *err)
{
    if (check_inputs(m, a, pins, err) < 0)
        return NULL;
    mesh_plan_t *p = calloc(1, sizeof(*p));
    if (!p)
        return mesh_error_set(err, "out of memory"), NULL;
    plan_inputs(m, a, pins, assume, &p->model, &p->alloc, &p->pins, &p->assume);

    search_t s;
    search_init(&s, &p->assume, &p->model, &p->alloc, &p->pins, 0);
    search_run(&s);
    p->evaluated = s.evaluated;
    if (s.oom || s.valid == 0) {
        if (s.oom)
            mesh_error_set(err, "out of memory while planning");
        else
            no_valid_layout(&s, m, a, err);
        free(s.fits);
        free(p);
        return NULL;
    }
    if (s.n_fits > 0) {
        double roomy_below;
        choose(p, &s, &roomy_below);
        for (int f = 0; f < (int)family_of(&p->best.layout); f++)
            explain_family(p, (mesh_family_t)f, &s.fam[f]);
        explain_near_tie(p, &s, roomy_below);
        if (p->best.layout.ep > 0)
            explain_experts(p);
    } else {
        p->best = s.closest;
        mesh_cost_estimate(&p->model, &p->best.layout, &p->alloc, &p->best.cost);
        mesh_reason_t *r = add_reason(p, MESH_REASON_NO_FIT, family_of(&p->best.layout));
        if (r) /* the first reason: always */
            r->candidate = p->best;
        for (int f = 0; f < MESH_FAMILY_COUNT; f++)
            if (s.fam[f].valid > 0)
                explain_family(p, (mesh_family_t)f, &s.fam[f]);
        advise(p);
    }
    free(s.fits);
    render_lines(p);
    digest(p);
    return p;
}

int mesh_plan_choose(const mesh_model_t *m, const mesh_alloc_t *a, const mesh_layout_t *pins,
                     const mesh_assumptions_t *assume, double deadline, mesh_candidate_t *out,
                     mesh_error_t *err)
{
    if (check_inputs(m, a, pins, err) < 0)
        return -1;
    mesh_model_t model;
    mesh_alloc_t alloc;
    mesh_layout_t pin;
    mesh_assumptions_t as;
    plan_inputs(m, a, pins, assume, &model, &alloc, &pin, &as);
    search_t s;
    search_init(&s, &as, &model, &alloc, &pin, 0);
    s.choice_only = 1;
    s.deadline = deadline > 0 ? deadline : 0;
    s.memo = calloc(1, sizeof(*s.memo));
    if (s.memo)
        search_run(&s);
    int rc = s.deadline <= 0 ? MESH_CHOICE_NONE : s.fitting ? MESH_CHOICE_LATE : MESH_CHOICE_SLOWER;
    double roomy_below;
    if (s.oom || !s.memo) {
        rc = mesh_error_set(err, "out of memory while planning");
    } else if (s.valid == 0 && s.skipped == 0) {
        /* no layout is valid: mesh_plan_create's error, as it words it
         * (err NULL: not wanted) */
        if (err)
            mesh_plan_destroy(mesh_plan_create(m, a, pins, assume, err));
        rc = -1;
    } else if (s.n_fits > 0 && (s.deadline <= 0 || s.fastest <= s.deadline)) {
        *out = *near_tie_choice(&s, &roomy_below);
        rc = MESH_CHOICE_FITS;
    }
    free(s.fits);
    free(s.memo);
    return rc;
}

int mesh_plan_any_fits(const mesh_model_t *m, const mesh_alloc_t *a, const mesh_layout_t *pins,
                       const mesh_assumptions_t *assume)
{
    mesh_assumptions_t as;
    mesh_error_t err;
    if (check_inputs(m, a, pins, &err) < 0)
        return 0;
    /* the first-fit search leaves out only layouts that need more memory
     * than one it tries (larger micro-batches, interleaving, no
     * recomputation and the weaker recomputations), so its answer is the
     * plan's */
    mesh_alloc_t alloc;
    mesh_layout_t pin;
    search_inputs(m, a, pins, &alloc, &pin);
    search_t s;
    default_assumptions(assume, &as);
    search_init(&s, &as, m, &alloc, &pin, 1);
    search_run(&s);
    return s.found;
}

void mesh_plan_destroy(mesh_plan_t *p)
{
    free(p);
}

int mesh_plan_fits(const mesh_plan_t *p)
{
    return p->fits;
}

const mesh_candidate_t *mesh_plan_best(const mesh_plan_t *p)
{
    return &p->best;
}

int mesh_plan_alternative_count(const mesh_plan_t *p)
{
    return p->n_alts;
}

const mesh_candidate_t *mesh_plan_alternative(const mesh_plan_t *p, int i)
{
    return i >= 0 && i < p->n_alts ? &p->alts[i] : NULL;
}

int mesh_plan_reason_count(const mesh_plan_t *p)
{
    return p->n_reasons;
}

const char *mesh_plan_reason(const mesh_plan_t *p, int i)
{
    return i >= 0 && i < p->n_reasons ? p->reason_lines[i] : NULL;
}

const mesh_reason_t *mesh_plan_reason_record(const mesh_plan_t *p, int i)
{
    return i >= 0 && i < p->n_reasons ? &p->reasons[i] : NULL;
}

const mesh_reason_t *mesh_plan_near_tie(const mesh_plan_t *p)
{
    return p->has_near_tie ? &p->near_tie : NULL;
}

int mesh_plan_advice_count(const mesh_plan_t *p)
{
    return p->n_advice;
}

const char *mesh_plan_advice(const mesh_plan_t *p, int i)
{
    return i >= 0 && i < p->n_advice ? p->advice_lines[i] : NULL;
}

const mesh_advice_t *mesh_plan_advice_record(const mesh_plan_t *p, int i)
{
    return i >= 0 && i < p->n_advice ? &p->advice[i] : NULL;
}

long mesh_plan_evaluated(const mesh_plan_t *p)
{
    return p->evaluated;
}

const mesh_model_t *mesh_plan_model(const mesh_plan_t *p)
{
    return &p->model;
}

const mesh_alloc_t *mesh_plan_alloc(const mesh_plan_t *p)
{
    return &p->alloc;
}

const mesh_layout_t *mesh_plan_pins_of(const mesh_plan_t *p)
{
    return &p->pins;
}

const mesh_assumptions_t *mesh_plan_assumptions(const mesh_plan_t *p)
{
    return &p->assume;
}

const char *mesh_plan_digest(const mesh_plan_t *p)
{
    return p->digest;
}
