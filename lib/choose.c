/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The choice among the near-ties a search kept (search.c's fits): the
 * near-tie rule, and the fastest near-tie the explanation compares with.
 */
#include <stddef.h>

#include "planner.h"

/* Lexicographic simplicity: negative if a is simpler than b.  The
 * families' order (plain DP, ZeRO-1 to 3, TP/CP without PP, PP:
 * mesh_family_of) needs no key of its own: two layouts of one allocation
 * have the same dp once pp, tp and cp are equal, so pp, tp, cp and then
 * zero order them so already. */
static int simpler(const mesh_candidate_t *a, const mesh_candidate_t *b)
{
    const mesh_layout_t *x = &a->layout, *y = &b->layout;
    int kx[] = {x->pp, x->tp, x->cp, x->vpp, x->zero, (int)x->recompute};
    int ky[] = {y->pp, y->tp, y->cp, y->vpp, y->zero, (int)y->recompute};
    for (int i = 0; i < MESH_ARRAY_LEN(kx); i++)
        if (kx[i] != ky[i])
            return kx[i] < ky[i] ? -1 : 1;
    if (a->memory.total != b->memory.total)
        return a->memory.total < b->memory.total ? -1 : 1;
    if (x->micro_batch != y->micro_batch)
        return x->micro_batch < y->micro_batch ? -1 : 1;
    return x->sequence_parallel - y->sequence_parallel;
}

/* Memory used, as a fraction of the usable memory it is held against. */
double mesh_used(const mesh_candidate_t *c)
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
        if (c->cost.step_seconds > s->fastest * (1 + MESH_PLAN_TIE) || mesh_used(c) > limit)
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
const mesh_candidate_t *mesh_near_tie_choice(const search_t *s, double *roomy_below)
{
    const mesh_candidate_t *simplest = simplest_tie(s, 1), *roomy = NULL;
    *roomy_below = 1;
    if (mesh_used(simplest) > MESH_PLAN_TIGHT)
        roomy = simplest_tie(s, mesh_used(simplest) - MESH_PLAN_HEADROOM);
    if (!roomy)
        return simplest;
    *roomy_below = mesh_used(simplest) - MESH_PLAN_HEADROOM;
    return roomy;
}

/* The fastest near-tie (the simplest of equals). */
const mesh_candidate_t *mesh_fastest_tie(const search_t *s)
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
