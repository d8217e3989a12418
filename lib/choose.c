/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The order of the layouts a search keeps, and the choice among them: the
 * near-tie rule over its fits, the fastest near-tie the explanation
 * compares with, and the runners-up, the fastest layout of each shape,
 * which the search keeps as it goes (mesh_keep_shape).
 */
#include <stddef.h>

#include "planner.h"

/* The first of n keys that differ decides: negative if x's is smaller. */
static int compare_keys(const int *x, const int *y, int n)
{
    for (int i = 0; i < n; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}

static int compare_doubles(double x, double y)
{
    return x < y ? -1 : x > y;
}

/* Lexicographic simplicity: negative if a is simpler than b.  The
 * families' order (plain DP, ZeRO-1 to 3, TP/CP without PP, PP:
 * mesh_family_of) needs no key of its own: two layouts of one allocation
 * have the same dp once pp, tp and cp are equal, so pp, tp, cp and then
 * zero order them so already.  The order is total: two layouts equal in
 * every key that makes one simpler go to the faster, then by the rest of
 * the layout, so that no choice depends on the order the search found
 * its fits in (0 only for the same layout). */
static int simpler(const mesh_candidate_t *a, const mesh_candidate_t *b)
{
    const mesh_layout_t *x = &a->layout, *y = &b->layout;
    int kx[] = {x->pp, x->tp, x->cp, x->vpp, x->zero, (int)x->recompute};
    int ky[] = {y->pp, y->tp, y->cp, y->vpp, y->zero, (int)y->recompute};
    int rx[] = {x->micro_batch, x->sequence_parallel};
    int ry[] = {y->micro_batch, y->sequence_parallel};
    int tx[] = {x->ep,      x->etp,          x->recompute_layers, x->recompute_modules,
                x->offload, (int)x->moments, x->tp_overlap_off,   x->dp};
    int ty[] = {y->ep,      y->etp,          y->recompute_layers, y->recompute_modules,
                y->offload, (int)y->moments, y->tp_overlap_off,   y->dp};
    int c = compare_keys(kx, ky, MESH_ARRAY_LEN(kx));
    if (!c)
        c = compare_doubles(a->memory.total, b->memory.total);
    if (!c)
        c = compare_keys(rx, ry, MESH_ARRAY_LEN(rx));
    if (!c)
        c = compare_doubles(a->cost.step_seconds, b->cost.step_seconds);
    return c ? c : compare_keys(tx, ty, MESH_ARRAY_LEN(tx));
}

/* Negative if a is faster than b, or as fast and simpler: the order the
 * fastest layouts and the runners-up are kept and shown in. */
int mesh_faster(const mesh_candidate_t *a, const mesh_candidate_t *b)
{
    int c = compare_doubles(a->cost.step_seconds, b->cost.step_seconds);
    return c ? c : simpler(a, b);
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
        if (!f || mesh_faster(c, f) < 0)
            f = c;
    }
    return f;
}

int mesh_same_shape(const mesh_layout_t *a, const mesh_layout_t *b)
{
    return a->tp == b->tp && a->cp == b->cp && a->pp == b->pp && a->ep == b->ep && a->etp == b->etp;
}

/* Keep c if it is the fastest of its (tp, cp, pp, ep, etp) shape so far
 * and its shape among the fastest MESH_ARRAY_LEN(s->shapes). */
void mesh_keep_shape(search_t *s, const mesh_candidate_t *c)
{
    int worst = 0;
    for (int j = 0; j < s->n_shapes; j++) {
        if (mesh_same_shape(&s->shapes[j].layout, &c->layout)) {
            if (mesh_faster(c, &s->shapes[j]) < 0)
                s->shapes[j] = *c;
            return;
        }
        if (mesh_faster(&s->shapes[j], &s->shapes[worst]) > 0)
            worst = j;
    }
    if (s->n_shapes < MESH_ARRAY_LEN(s->shapes))
        s->shapes[s->n_shapes++] = *c;
    else if (mesh_faster(c, &s->shapes[worst]) < 0)
        s->shapes[worst] = *c; /* a shape it displaces can only come back ahead of it */
}

/* The runners-up of a plan whose choice is of best's shape: the fastest of
 * each other shape s kept, fastest first (mesh_faster; an insertion sort,
 * of a handful), into out; returns how many (at most
 * MESH_PLAN_ALTERNATIVES). */
int mesh_runners_up(const search_t *s, const mesh_layout_t *best,
                    mesh_candidate_t out[MESH_PLAN_ALTERNATIVES])
{
    int n = 0;
    for (int i = 0; i < s->n_shapes && n < MESH_PLAN_ALTERNATIVES; i++)
        if (!mesh_same_shape(&s->shapes[i].layout, best))
            out[n++] = s->shapes[i];
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && mesh_faster(&out[j], &out[j - 1]) < 0; j--) {
            mesh_candidate_t t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return n;
}
