/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The planner's search: exhaustive with pruning.
 *
 * The space is every (tp, cp, pp, dp, zero, vpp, recompute, micro_batch,
 * ep, etp, levers) that the allocation and the model allow.  Memory grows
 * with the micro-batch, so each micro-batch sweep stops at the first size
 * that does not fit; everything else is priced.  Selection is transitive
 * and so independent of search order: the fastest step time T, then among
 * the layouts within MESH_PLAN_TIE of T (the near-ties) the simplest
 * (DP+ZeRO, then TP, then PP; then fewer stages, smaller tp, ...), unless
 * it is tight on memory: see mesh_near_tie_choice (choose.c).  A search for the
 * choice alone (sizing's, mesh_plan_choose) prices only the layouts that
 * can be near-ties (prune.c).
 */
#include <stdlib.h>
#include <string.h>

#include "planner.h"

mesh_family_t mesh_family_of(const mesh_layout_t *l)
{
    if (l->pp > 1)
        return MESH_FAMILY_PP;
    if (l->tp > 1 || l->cp > 1)
        return MESH_FAMILY_TP;
    return l->dp > 1 ? (mesh_family_t)(MESH_FAMILY_DP + l->zero) : MESH_FAMILY_DP;
}

/* Whether add_fit keeps a layout of step time t among the near-ties. */
static int keeps_fit(const search_t *s, double t)
{
    return s->n_fits == 0 || t <= s->fastest * (1 + MESH_PLAN_TIE);
}

/* Keep a fitting layout if it can still be chosen.  The list stays a few
 * entries long: a long one would cost more in the allocator's page faults
 * than the whole search does. */
static void add_fit(search_t *s, const mesh_candidate_t *c)
{
    if (!s->choice_only)
        mesh_keep_shape(s, c);
    double t = c->cost.step_seconds;
    if (s->n_fits == 0 || t < s->fastest) {
        s->fastest = t;
        size_t k = 0;
        for (size_t i = 0; i < s->n_fits; i++)
            if (s->fits[i].cost.step_seconds <= t * (1 + MESH_PLAN_TIE))
                s->fits[k++] = s->fits[i];
        s->n_fits = k;
    } else if (!keeps_fit(s, t)) {
        return;
    }
    mesh_candidate_t *f = mesh_grow(s->fits, &s->cap_fits, s->n_fits, sizeof(*f), 64);
    if (!f) {
        s->oom = 1;
        return;
    }
    s->fits = f;
    s->fits[s->n_fits++] = *c;
}

static void note_family(search_t *s, const mesh_candidate_t *c)
{
    family_stat_t *f = &s->fam[mesh_family_of(&c->layout)];
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

/* Forget the states' parts price() keeps: they are one shape's, at one
 * interleaving that moves layers (params_vpp). */
static void forget_states(search_t *s)
{
    for (int i = 0; i < MESH_ARRAY_LEN(s->memo_key); i++)
        s->memo_key[i] = -1;
}

/* Whether `total` bytes per GPU fit mem's capacity, and (with the optimizer
 * offloaded) mem's host bytes the node's host memory, which its tasks
 * share. */
static int fits_in(const search_t *s, double total, const mesh_memory_t *mem)
{
    double node_host = mem->host * s->a->gpus_per_node;
    return total <= mem->capacity &&
           (mem->host <= 0 || node_host <= MESH_HOST_USABLE * s->a->host_memory);
}

/* Price layout l into c: its memory, and whether it fits (fits_in). */
static void price(search_t *s, const mesh_layout_t *l, mesh_candidate_t *c)
{
    memset(c, 0, sizeof(*c));
    c->layout = *l;
    c->micro_batches = mesh_layout_micro_batches(l, s->m->global_batch);
    int key = mesh_lever_key(l);
    int slot = (l->offload == 1) * 2 + (l->moments != MESH_PREC_FP32);
    mesh_spend_pricing(s, WORK_MEMORY);
    if (key != s->memo_key[slot]) {
        mesh_states_parts(s->m, l, &s->heavy, &s->states[slot]);
        mesh_spend_pricing(s, WORK_STATES);
        s->memo_key[slot] = key;
    }
    mesh_memory_priced(s->m, l, s->a, s->assume, &s->states[slot], &s->plain, &c->memory);
    c->fits = fits_in(s, c->memory.total, &c->memory);
}

/* recompute full:N with N planned: the fewest layers per stage whose
 * recomputation fits (memory falls as N grows, time rises), found by
 * bisection; all of them (0) when even that does not fit.  Prices the
 * layout chosen into *c. */
static void partial_recompute(search_t *s, mesh_layout_t *l, mesh_candidate_t *c)
{
    int most = mesh_most_layers(s, l), plain = !l->offload && l->moments == MESH_PREC_FP32;
    int lo = mesh_fewest_layers(s, l, most), hi = most;
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

static void selective_modules(search_t *s, mesh_layout_t *l, mesh_candidate_t *c)
{
    int n;
    const int *sets = mesh_module_sets(s->m, &n);
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
 * known), then both; and before each, TP's communication overlap turned
 * off where it would be on: its Userbuffers go (lib/memory.c), its
 * collectives are exposed (lib/cost.c), and nothing else changes, so it
 * comes first.  The overlap is given up only by a layout that cannot keep
 * it at any micro-batch: at its sweep's first (memory grows with the
 * micro-batch, so the sweep then stops at the next), or a pinned one.  It
 * is what Megatron-LM's recipes run, and exposed TP traffic costs more than
 * a larger micro-batch gains; searching every micro-batch without it
 * priced a fifth more layouts for Llama 3.1 405B on 16,384 GPUs.  A pinned
 * lever is the only value tried. */
#define LEVERS_MAX 8
static int levers(const search_t *s, const mesh_layout_t *l, mesh_layout_t out[LEVERS_MAX])
{
    const mesh_layout_t *p = s->pins;
    int pin_m = (int)p->moments != MESH_FREE, pin_o = p->offload != MESH_FREE;
    int pin_t = p->tp_overlap_off != MESH_FREE, n = 0;
    for (int i = 0; i < 4; i++) {
        int use16 = i & 1, off = i >> 1;
        if (use16 && (pin_m || s->m->optimizer_dtype == MESH_PREC_FP32))
            continue;
        if (off && (pin_o || s->a->host_memory <= 0 || l->zero < 1))
            continue;
        out[n] = *l;
        out[n].moments = pin_m ? p->moments : use16 ? s->m->optimizer_dtype : MESH_PREC_FP32;
        out[n].offload = pin_o ? p->offload : off;
        out[n].tp_overlap_off = pin_t ? p->tp_overlap_off : 0;
        n++;
        if (!pin_t && s->size_index <= 0 && mesh_overlap_on(s->m, &out[n - 1], MESH_OVERLAP_TP)) {
            out[n] = out[n - 1];
            out[n++].tp_overlap_off = 1;
        }
    }
    return n;
}

/* Whether c, priced with TP's communication overlap on and not fitting,
 * would not fit without it either: its Userbuffers, all it gives back
 * (they are in every stage's overhead, never scaled by a calibration), are
 * less than what it is short of (a hair's margin for the rounding). */
static int short_beyond_buffers(const search_t *s, const mesh_candidate_t *c)
{
    double ub = mesh_tp_overlap_buffers(s->m, &c->layout);
    return ub <= 0 || !fits_in(s, c->memory.total - ub - 1e-12 * c->memory.capacity, &c->memory);
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

/* Whether l's replicas split the global batch evenly (l may be invalid). */
static int splits_batch(const search_t *s, const mesh_layout_t *l)
{
    return l->micro_batch >= 1 && l->dp >= 1 &&
           s->m->global_batch % ((long)l->micro_batch * l->dp) == 0;
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

/* Note that c, which fits, needs no recomputation and no lever at its
 * micro-batch (plain_mb); TP's overlap pinned off (as before Ampere) is no
 * lever, since every layout has it. */
static void note_plain(search_t *s, const mesh_candidate_t *c)
{
    if (c->layout.recompute == MESH_RECOMPUTE_NONE && !c->layout.offload &&
        c->layout.moments == MESH_PREC_FP32 &&
        (!c->layout.tp_overlap_off || s->pins->tp_overlap_off == 1) &&
        c->layout.micro_batch > s->plain_mb)
        s->plain_mb = c->layout.micro_batch;
}

/* Evaluate layout l0 from what a search with more memory found of it
 * (s->known, prune.c), where that holds here: too large then, or a
 * candidate that fits here too, priced again only where add_fit keeps it
 * (and taken only if its memory comes out the same).  Returns evaluate's
 * answer, or -1 where l0 must be evaluated. */
static int recall(search_t *s, const mesh_layout_t *l0)
{
    const memo_fit_t *was;
    mesh_candidate_t c = {0};
    mesh_layout_t l;
    if (!mesh_memo_find(s->known, l0, &was, &l))
        return -1;
    if (was) { /* was->total is judged here; price() fills c where it is kept */
        c.memory.host = was->host;
        c.memory.capacity = mesh_policy_usable(s->assume, &s->a->gpu);
        if (!fits_in(s, was->total, &c.memory))
            return -1; /* a stronger lever may fit, or none */
        c.layout = l;
        c.cost.step_seconds = was->step_seconds;
        if (keeps_fit(s, was->step_seconds)) {
            price(s, &l, &c);
            if (!c.fits || c.memory.total != was->total)
                return -1;
            mesh_search_cost(s, &c.layout, &c.cost);
        }
    }
    s->evaluated++;
    s->valid++;
    s->has_floor = 0;
    s->stage_entry = NULL;
    mesh_spend(s, WORK_INVALID);
    s->priced_oom = !was;
    if (!was)
        return 1;
    note_plain(s, &c);
    s->fitting++;
    if (keeps_fit(s, c.cost.step_seconds))
        add_fit(s, &c);
    return 0;
}

/* Evaluate one layout; returns 1 if it was valid but did not fit (so a
 * larger micro-batch will not fit either) or nothing after it in its
 * sweep is wanted (unwanted), 0 otherwise. */
static int evaluate(search_t *s, const mesh_layout_t *l0)
{
    mesh_layout_t tries[LEVERS_MAX], base = *l0;
    int known = s->known ? recall(s, l0) : -1;
    if (known >= 0)
        return known;
    int n = levers(s, l0, tries);
    s->evaluated++;
    mesh_spend(s, WORK_CHECK);
    if (n)
        base = checkable(&tries[0]);
    if (n == 0 || mesh_layout_check(s->m, s->a, &base, NULL) < 0) {
        const mesh_layout_t *l = &base;
        if (!s->has_invalid) {
            s->invalid = *l;
            s->has_invalid = 1;
        }
        if (!s->has_telling && splits_batch(s, l)) {
            s->telling = *l;
            s->has_telling = 1;
        }
        family_stat_t *f = &s->fam[mesh_family_of(l)];
        if (!f->has_invalid) {
            f->invalid = *l;
            f->has_invalid = 1;
        }
        return 0;
    }
    s->valid++;
    s->has_floor = 0;
    s->stage_entry = NULL;
    int skip = s->choice_only ? mesh_unwanted(s, tries, n) : 0;
    if (skip)
        return skip == 2;
    mesh_candidate_t c, t;
    for (int i = 0; i < n; i++) {
        /* the overlap turned off only where its buffers can make it fit
         * (t: the same lever with it on, priced just before); asked
         * first, as it costs less than the check */
        if (i > 0 && tries[i].tp_overlap_off && !tries[i - 1].tp_overlap_off &&
            short_beyond_buffers(s, &t))
            continue;
        mesh_layout_t chk = checkable(&tries[i]);
        if (i > 0 && mesh_layout_check(s->m, s->a, &chk, NULL) < 0)
            continue;
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
    if (c.fits)
        note_plain(s, &c);
    s->priced_oom = !c.fits;
    if (s->choice_only && s->stage_entry)
        s->stage_entry->too_big = !c.fits;
    if (c.fits) {
        s->fitting++;
        if (s->has_floor && !memcmp(&s->floor_layout, &c.layout, sizeof(c.layout)))
            c.cost = s->floor_cost; /* the floor was its own cost */
        else
            mesh_search_cost(s, &c.layout, &c.cost);
        add_fit(s, &c);
    }
    /* what a search with less memory can take: too large, or fits it too */
    if (s->record && (!c.fits || c.memory.total <= s->record_below))
        mesh_memo_add(s->record, l0, c.fits ? &c : NULL);
    if (!c.fits) {
        if (!s->has_closest || c.memory.total < s->closest.memory.total) {
            s->closest = c;
            s->has_closest = 1;
        }
    }
    if (!s->choice_only)
        note_family(s, &c);
    return !c.fits;
}

/* evaluate(), except that a layout surely invalid only counts once the
 * search and its family keep the invalid layout they explain (evaluate
 * keeps no other; and, for one that splits the batch, the telling one),
 * or at once in a search that keeps no records. */
static int consider(search_t *s, const mesh_layout_t *l)
{
    int kept = s->has_invalid && s->fam[mesh_family_of(l)].has_invalid &&
               (s->has_telling || !splits_batch(s, l));
    if ((!keeps_records(s) || kept) && surely_invalid(s, l)) {
        s->evaluated++;
        mesh_spend(s, WORK_INVALID);
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

/* Whether the first layout of l's sweep is too large for memory, known
 * without pricing it: interleaving keeps each stage's layers and holds at
 * least as many micro-batches in flight (lib/memory.c), so where the same
 * sweep without it found its first micro-batch too large, so is this
 * sweep's, and the sweep stops there.  Not where the interleaving moves a
 * MoE model's dense layers between stages (its first ones, or those
 * between MoE layers every few), nor where the sweep starts
 * later (past the sizes its sweep without recomputation fit at) or its
 * first layout breaks the interleaving's rule. */
static int too_large(search_t *s, mesh_layout_t *l)
{
    if (s->vpp_index == 0 || s->m->moe.dense_layers || s->m->moe.every > 1 ||
        !s->oom_first[l->recompute] || (l->recompute != MESH_RECOMPUTE_NONE && s->plain_mb > 0))
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
    /* One micro-batch, no sweep: the pinned one; answering "does anything
     * fit?", the smallest, which decides (memory grows with it: the loop
     * below stops likewise); and where the replicas cannot share the global
     * batch evenly (no sizes), 1, to record why. */
    if (p->micro_batch != MESH_FREE || s->first_fit_only || mesh_batch_list(s, l) == 0) {
        l->micro_batch = p->micro_batch != MESH_FREE ? p->micro_batch : 1;
        s->size_index = -1;
        consider(s, l);
        return;
    }
    if (s->choice_only && too_large(s, l))
        return;
    if (s->vpp_index == 0) /* until this sweep's first size says otherwise */
        s->oom_first[l->recompute] = 0;
    for (int i = 0; i < s->n_batch_sizes && !mesh_search_done(s); i++) {
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

/* The interleaving the heavy stages' parameters depend on: l's where its
 * chunks move layers between stages (an explicit layout, spread unevenly;
 * a MoE model's dense first layers, or its MoE layers every few, which
 * follow the chunks), else none
 * (1: every even interleaving gives each stage the layers of vpp 1). */
static int params_vpp(const mesh_model_t *m, const mesh_layout_t *l)
{
    return m->moe.dense_layers || m->moe.every > 1 || mesh_pp_explicit(m, l) ? l->vpp : 1;
}

/* Whether some micro-batch size of shape l (batch_list) gives a
 * micro-batch count that is a multiple of its stages, as interleaving
 * needs (surely_invalid). */
static int interleavable(search_t *s, const mesh_layout_t *l)
{
    long per_replica = s->m->global_batch / l->dp;
    for (int i = 0, n = mesh_batch_list(s, l); i < n; i++)
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
    /* Two stages interleave when pinned (a published layout, a user's
     * --mesh), but are not searched: their bubble is already one stage's
     * 1/m, and every interleaving tried is a search of its own, which the
     * controller's work budget pays for (llama3-70b sized over 2-16 nodes
     * crossed it) */
    if (s->first_fit_only || l->pp < 3 || (!keeps_records(s) && !interleavable(s, l)))
        return nv;
    int q = m->has_arch ? (m->layers + l->pp - 1) / l->pp : 1, d[DIVISORS_MAX];
    int nd = mesh_divisors(q, q, d);
    for (int i = 0; i < nd && nv < VPPS_MAX; i++)
        if (d[i] >= 2 && mesh_vpp_chunk_layers(m->layers, l->pp, d[i]))
            vpps[nv++] = d[i];
    return nv;
}

/* The ZeRO stages one replica tries: 1 where it can give what only a
 * sharded optimizer gives, else 0: fewer bytes of model states
 * (lib/accounting.c), or the optimizer offloaded where the host memory is
 * known (the lever needs ZeRO >= 1). */
static int sole_replica_zero(const search_t *s)
{
    return s->a->host_memory > 0 || mesh_sole_replica_zero_saves(s->m);
}

static void search_stage_options(search_t *s, mesh_layout_t *l)
{
    const mesh_layout_t *p = s->pins;
    const mesh_model_t *m = s->m;
    int vpps[VPPS_MAX], nv = interleavings(s, l, vpps);
    if (s->choice_only && mesh_shape_unwanted(s, l, vpps, nv))
        return;
    /* ZeRO shards nothing over one replica (sole_replica_zero says when
     * ZeRO-1 is tried there all the same).  Asking only whether anything
     * fits, every stage is tried, most sharded first: the frameworks'
     * buffers break the order in which the stages save memory (ZeRO-3
     * gathers whole layers, Megatron-FSDP's ZeRO-2 holds one layer's
     * unsharded gradients, DeepSpeed's ZeRO-1 a reduce bucket), so no stage
     * can stand for the others.  It stops at the first that fits. */
    int zmax = (long)l->dp * l->cp > 1 ? 3 : sole_replica_zero(s), zeros[4], nz = 0;
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
            /* the heavy stages' parameters are those of this
             * interleaving, searched or pinned (search_shape counted them
             * at vpp 1) */
            if (params_vpp(m, l) != s->psi_vpp)
                shape_params(s, l);
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
                if (s->first_fit_only && l->recompute_modules == MESH_FREE) {
                    int n; /* the set that saves the most */
                    l->recompute_modules = mesh_module_sets(m, &n)[n - 1];
                }
                search_batches(s, l);
                if (mesh_search_done(s))
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
 * ep, etp and the interleaving they depend on, params_vpp). */
static void shape_params(search_t *s, const mesh_layout_t *l)
{
    mesh_spend(s, mesh_is_moe(s->m) ? WORK_SHAPE_MOE : WORK_SHAPE);
    mesh_heavy_count(s->m, l, &s->heavy);
    s->psi_vpp = params_vpp(s->m, l);
    s->most = mesh_heavy_most(&s->heavy);
    forget_states(s);
}

/* Whether the search keeps the invalid layouts that explain those of
 * shape l, whatever their ZeRO stage (consider's test, for the shape). */
static int explains_shape(const search_t *s, const mesh_layout_t *l)
{
    mesh_layout_t z = *l;
    for (z.zero = 0; z.zero <= 3; z.zero++)
        if (!s->fam[mesh_family_of(&z)].has_invalid)
            return 0;
    return s->has_invalid && (s->has_telling || s->m->global_batch % l->dp);
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
     * them, or keeps those that explain them already, need not count
     * them (DeepSeek-V3's 61 layers over pp 32, at each of its EPs across
     * nodes: 240-312 layouts a shape, 9% of planning it on 256 nodes) */
    if ((s->split_invalid || m->global_batch % l->dp) &&
        (!keeps_records(s) || explains_shape(s, l)))
        return;
    /* a shape none of whose layouts fit with more memory (prune.c): each
     * of its sweeps would stop at its first, too large */
    mesh_layout_t key = mesh_memo_shape(l);
    const memo_fit_t *none;
    mesh_layout_t same;
    if (s->known && mesh_memo_find(s->known, &key, &none, &same)) {
        s->skipped++;
        return;
    }
    long fitting = s->fitting;
    shape_params(s, l);
    s->shapes_searched++;
    search_stage_options(s, l);
    if (s->record && s->fitting == fitting && !mesh_search_done(s))
        mesh_memo_add(s->record, &key, NULL);
}

/* Whether shape l, at its expert size, fits plainly: at its smallest
 * micro-batch, with no recomputation, no lever and ZeRO-1 at most (ZeRO-2
 * and 3 move gradients and weights each micro-batch), or as pinned.  An
 * expert size across nodes that does not leaves memory binding, which the
 * largest eases most: fewer experts a GPU, for less recomputation and
 * sharding (DeepSeek-V3 on 32 nodes of 8 H100s at tp=8,pp=4: EP 16 needs
 * every layer recomputed, EP 64 only the dense MLPs and latent attention's
 * up projections, 10% faster) at the price of more of the tokens sent
 * across nodes, which the search weighs.  One that does has nothing left
 * to ease that the pins leave free. */
int mesh_search_fits_plainly(search_t *s, const mesh_layout_t *shape)
{
    const mesh_layout_t *p = s->pins;
    mesh_layout_t l = *shape;
    l.vpp = p->vpp != MESH_FREE ? p->vpp : 1;
    l.recompute = p->recompute != MESH_RECOMPUTE_AUTO ? p->recompute : MESH_RECOMPUTE_NONE;
    l.recompute_layers = p->recompute_layers != MESH_FREE ? p->recompute_layers : 0;
    l.recompute_modules = p->recompute_modules != MESH_FREE ? p->recompute_modules : 0;
    l.offload = p->offload != MESH_FREE ? p->offload : 0;
    l.moments = (int)p->moments != MESH_FREE ? p->moments : MESH_PREC_FP32;
    l.tp_overlap_off = p->tp_overlap_off == 1;
    if (p->micro_batch != MESH_FREE)
        l.micro_batch = p->micro_batch;
    else if (mesh_batch_list(s, &l) > 0)
        l.micro_batch = s->batch_sizes[0];
    else
        return 0; /* no micro-batch splits the batch: no size helps */
    /* the shape's parameters: search_experts asks right after searching
     * it, which counted them at its last interleaving's (psi_vpp); a fresh
     * search has counted none (psi_vpp 0) */
    if (params_vpp(s->m, &l) != s->psi_vpp)
        shape_params(s, &l);
    int most = p->zero != MESH_FREE ? p->zero : (long)l.dp * l.cp > 1 ? 1 : sole_replica_zero(s);
    for (l.zero = most; l.zero >= (p->zero != MESH_FREE ? p->zero : 0); l.zero--) {
        mesh_candidate_t c;
        if (mesh_layout_check(s->m, s->a, &l, NULL) < 0)
            continue;
        price(s, &l, &c);
        if (c.fits)
            return 1;
    }
    return 0;
}

/* One rule, which the explanation replays through its own try: written
 * twice, the two had to be kept in step by hand. */
void mesh_search_eps_across(search_t *s, mesh_layout_t *l, long reach, mesh_ep_try_t try_ep,
                            void *ctx)
{
    long experts = s->m->moe.experts, ranks = (long)l->tp * l->cp * l->dp / l->etp;
    int eps[DIVISORS_MAX], n = mesh_divisors(experts, min_l(experts, ranks), eps), k = 0;
    for (int i = 0; i < n; i++) /* those beyond the reach that have a shape */
        if ((long)eps[i] * l->etp > reach && ranks % eps[i] == 0)
            eps[k++] = eps[i];
    for (int i = 0; i < k && !mesh_search_done(s); i++) {
        l->ep = eps[i];
        if (!try_ep(ctx, l))
            continue;
        if (i < k - 1 && !mesh_search_done(s) && !mesh_search_fits_plainly(s, l)) {
            l->ep = eps[k - 1];
            try_ep(ctx, l);
        }
        return;
    }
}

/* mesh_search_eps_across's try in the search itself: shape l searched. */
static int try_in_search(void *ctx, mesh_layout_t *l)
{
    search_t *s = ctx;
    long before = s->fitting;
    search_shape(s, l);
    return s->fitting != before;
}

/* The expert layers' sizes of a (tp, cp, pp, dp) shape.  None in a dense
 * model.  In a MoE model: expert TP of 1, and tp (Megatron-LM's default
 * --expert-tensor-parallel-size) only where 1 fits nothing, since EP beats
 * TP for experts (larger GEMMs, less traffic: Megatron-LM's MoE guide,
 * transformer/moe/README.md "Guideline 4", at d98e8a6); and every EP that
 * divides the experts and the stage's ranks, those inside an NVLink island
 * first, from the largest down until one fits nothing (smaller ones hold
 * more experts per GPU), then across nodes only where none inside fits
 * ("Guideline 2": keep EP x TP within NVLink) the smallest that fits and,
 * where that one does not fit plainly, the largest (mesh_search_eps_across).
 * Pinned values as they are (the check explains them). */
static void search_experts(search_t *s, mesh_layout_t *l)
{
    const mesh_layout_t *p = s->pins;
    const mesh_model_t *m = s->m;
    if (!mesh_is_moe(m)) {
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
    for (int i = 0; i < n_etp && !mesh_search_done(s) && s->fitting == fitting; i++) {
        l->etp = etps[i];
        if (p->ep != MESH_FREE || stage % l->etp) {
            l->ep = p->ep != MESH_FREE ? p->ep : 1; /* let the check explain */
            search_shape(s, l);
            continue;
        }
        int n = mesh_divisors(m->moe.experts, min_l(m->moe.experts, stage / l->etp), eps), near = 0;
        /* NVLink's reach: a GB200 fabric's trays too (DeepEP, which keeps
         * it to the node, runs only on nodes of 8, never on trays) */
        long reach = mesh_ep_reach(s->a, 0);
        while (near < n && (long)eps[near] * l->etp <= reach)
            near++;
        /* inside an island, the largest EP first */
        for (int j = near - 1, tried = 0; j >= 0 && !mesh_search_done(s); j--) {
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
        /* across nodes only where no EP inside one fits this shape (the
         * sizes between the two it tries trade less traffic for more
         * recomputation, as those do).  Whether one fit is known alike to a
         * search for the choice alone, which prices nothing unwanted only
         * after one (guard), and mesh_search_fits_plainly prices alike in
         * both. */
        if (s->fitting == fitting)
            mesh_search_eps_across(s, l, reach, try_in_search, s);
    }
}

/* The divisors of n up to hi, ascending, into out: those of the nd
 * divisors d of a multiple of n that divide n (all of them: a world of at
 * most MAX_GPUS, 2^22, has a few hundred, under mesh_divisors' bound). */
static int divisors_of(long n, long hi, const int *d, int nd, int *out)
{
    int k = 0;
    for (int i = 0; i < nd && d[i] <= hi; i++)
        if (n % d[i] == 0)
            out[k++] = d[i];
    return k;
}

long mesh_search_tp_max(const mesh_model_t *m, const mesh_alloc_t *a)
{
    /* a model of parameters alone has no layers to split */
    return m->has_arch ? mesh_tp_reach(a) : 1;
}

int mesh_search_tries_tp(const mesh_model_t *m, const mesh_alloc_t *a, int tp)
{
    return mesh_tp_on_nvlink(a, tp) && m->heads % tp == 0 &&
           (m->kv_heads % tp == 0 || tp % m->kv_heads == 0);
}

long mesh_search_cp_max(const mesh_model_t *m, long ranks)
{
    /* context parallelism for long sequences only: 4K tokens or more per
     * rank, no more ranks than there are */
    return m->has_arch && m->seq_len >= MESH_CP_MIN_SEQ ? min_l(m->seq_len / 4096, ranks) : 1;
}

void mesh_search_run(search_t *s)
{
    const mesh_layout_t *p = s->pins;
    const mesh_model_t *m = s->m;
    const mesh_alloc_t *a = s->a;
    long world = mesh_world(a);
    mesh_layout_t l;
    range_t tp, cp;
    int pps[DIVISORS_MAX], wd[DIVISORS_MAX];
    if (s->halted)
        return;
    /* the stage counts of every (tp, cp) divide the world: its divisors,
     * found once, not by trial division for each pair (a search of what
     * would fit runs this on allocations of up to millions of GPUs) */
    int nwd = 0;
    if (p->pp == MESH_FREE) {
        long root = 1; /* within twice the square root: what the divisions cost */
        while (root * root < world)
            root *= 2;
        mesh_spend(s, root / WORK_DIVISIONS);
        nwd = mesh_divisors(world, world, wd);
    }
    FOR_RANGE (tp, p->tp, 1, (int)mesh_search_tp_max(m, a)) {
        if (tp.pin == MESH_FREE && !mesh_search_tries_tp(m, a, tp.v))
            continue;
        FOR_RANGE (cp, p->cp, 1, (int)mesh_search_cp_max(m, world / tp.v)) {
            /* powers of two */
            if (cp.pin == MESH_FREE && (cp.v & (cp.v - 1)))
                continue;
            long rest = world / ((long)tp.v * cp.v);
            /* stages must divide what TP and CP leave of the world */
            int npp = 1;
            if (p->pp != MESH_FREE)
                pps[0] = p->pp;
            else
                npp = divisors_of(rest, min_l(m->has_arch ? m->layers : 1, rest), wd, nwd, pps);
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
                l.tp_overlap_off = 0;
                search_experts(s, &l);
                if (mesh_search_done(s))
                    return;
            }
        }
    }
}

/* Complete a pinned layout with neutral values, to explain why it is
 * invalid: every field the pins leave free, and those no pin sets (the TP
 * overlap's switch), at their neutral value. */
mesh_layout_t mesh_representative(const mesh_layout_t *p, long world)
{
    mesh_layout_t l = {0};
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

void mesh_search_init(search_t *s, const mesh_assumptions_t *assume, const mesh_model_t *m,
                      const mesh_alloc_t *a, const mesh_layout_t *pins, int first_fit_only)
{
    memset(s, 0, sizeof(*s));
    s->m = m;
    s->a = a;
    s->assume = assume;
    s->pins = pins;
    s->first_fit_only = first_fit_only;
    s->flops_per_token = mesh_flops_per_token(m);
    forget_states(s);
    s->work = mesh_work_current();
    if (s->work && s->work->spent >= s->work->limit)
        s->halted = s->work->stopped = 1; /* spent by the searches before */
}
