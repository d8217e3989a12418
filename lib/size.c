/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sizing (see size.h): every node count of a range planned, one picked by a
 * goal.  The counts are independent plans, each the choice alone
 * (mesh_plan_choose, no explanation); the cost is in the counts that fit,
 * so those that do not are told apart by mesh_plan_any_fits, which stops at
 * the first fitting layout and prices none, and a count that cannot be
 * chosen is searched only until that shows (a deadline on its step;
 * doc/design.md, "Sizing").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "meshplan/explain.h"
#include "meshplan/parse.h"
#include "meshplan/size.h"

static const char *const goal_names[] = {"min", "fastest", "efficient"};

int mesh_size_goal_parse(const char *name, mesh_size_goal_t *out, mesh_error_t *err)
{
    for (int g = 0; g < MESH_ARRAY_LEN(goal_names); g++)
        if (strcmp(name, goal_names[g]) == 0)
            return *out = (mesh_size_goal_t)g, 0;
    return mesh_error_set(err, "unknown goal '%s' (min, fastest or efficient)", name);
}

const char *mesh_size_goal_name(mesh_size_goal_t goal)
{
    return (int)goal >= 0 && (int)goal < MESH_ARRAY_LEN(goal_names) ? goal_names[goal] : "?";
}

int mesh_size_bound(const mesh_policy_t *pol, const char *name, int *lo, int *hi, mesh_error_t *err)
{
    if (*lo < 1 || *lo > *hi)
        return mesh_error_set(err, "the node range %d-%d is empty", *lo, *hi);
    const mesh_partition_t *q = mesh_policy_partition(pol, name && *name ? name : NULL);
    if (!q || !q->nodes)
        return 0;
    if (*lo > q->nodes)
        return mesh_error_set(err,
                              "the node range %d-%d is outside partition %s, which has %d nodes",
                              *lo, *hi, name && *name ? name : q->name, q->nodes);
    if (*hi > q->nodes)
        *hi = q->nodes;
    return 0;
}

/* Plan row r's count: whether a layout fits and, if one does, the plan's
 * choice.  deadline > 0: only a choice whose step is at most that many
 * seconds is wanted; fits -1 when there is none.  search_first: run the
 * search before asking whether anything fits (mesh_plan_any_fits), which
 * it spares where the deadline leaves the count out, at the cost of a
 * longer search where nothing fits (the caller's guess: something fit on
 * the count before).  Either way a count is planned only where something
 * fits by mesh_plan_any_fits.  *fit: whether something is known to fit.
 * 0, or -1 with err set when the plan cannot be made. */
static int size_row(mesh_size_row_t *r, const mesh_model_t *m, const mesh_alloc_t *a,
                    const mesh_layout_t *pins, const mesh_assumptions_t *assume, double deadline,
                    int search_first, int *fit, mesh_error_t *err)
{
    mesh_alloc_t on = *a;
    on.nodes = r->nodes;
    int rc = search_first && deadline > 0
                 ? mesh_plan_choose(m, &on, pins, assume, deadline, &r->best, NULL)
                 : -1;
    if (rc == MESH_CHOICE_SLOWER || rc == MESH_CHOICE_LATE) {
        r->fits = -1;
        *fit = rc == MESH_CHOICE_LATE;
        return 0;
    }
    *fit = mesh_plan_any_fits(m, &on, pins, assume);
    if (!*fit)
        return 0; /* not priced: nothing on this count would be chosen */
    /* not searched yet, or failed: with the error wanted */
    if (rc < 0)
        rc = mesh_plan_choose(m, &on, pins, assume, deadline, &r->best, err);
    if (rc < 0)
        return mesh_error_prefix(err, "on %d nodes", r->nodes);
    r->fits = rc == MESH_CHOICE_FITS ? 1 : rc == MESH_CHOICE_NONE ? 0 : -1;
    if (r->fits == 1)
        r->tokens_per_gpu_hour =
            r->best.cost.tokens_per_sec * 3600.0 / ((double)on.nodes * on.gpus_per_node);
    return 0;
}

/* The step row r's choice must take at most to be chosen or to tie the
 * best row so far (`best`: its merit, 0 while none): within MESH_PLAN_TIE
 * of the shortest step (FASTEST), or of the most tokens per GPU-hour
 * (EFFICIENT), which a step of T seconds on N GPUs gives as tokens per
 * step * 3600 / (T * N).  0 (none) while nothing is priced.  A count
 * whose fastest layout is slower can be neither: the plan's choice is no
 * faster than its fastest layout, and the best only gets better. */
static double deadline(const mesh_size_t *s, const mesh_size_row_t *r, const mesh_model_t *m,
                       const mesh_alloc_t *a, double best)
{
    if (best <= 0)
        return 0;
    double tokens = (double)m->global_batch * m->seq_len,
           gpus = (double)r->nodes * a->gpus_per_node;
    double limit = s->goal == MESH_SIZE_FASTEST
                       ? best + best * MESH_PLAN_TIE
                       : tokens * 3600.0 / (gpus * (best - best * MESH_PLAN_TIE));
    return limit * (1 + 1e-9); /* rounding never drops a count that ties */
}

/* The rows of a goal that ranks the counts (FASTEST, EFFICIENT), largest
 * count first, each planned only for a choice that could be chosen or tie
 * the best so far (deadline); the others get fits -1.  FASTEST: no
 * count's step is shorter than its FLOPs at the full peak, work / nodes,
 * where work is the first priced count's step * MFU * nodes (the same
 * FLOPs per step and peak on every count); below the count where that
 * bound passes the shortest step (and its tie), no count can be chosen,
 * and none is planned.  0, or -1 with err set. */
static int rank_rows(mesh_size_t *s, const mesh_model_t *m, const mesh_alloc_t *a,
                     const mesh_layout_t *pins, const mesh_assumptions_t *assume, mesh_error_t *err)
{
    int fastest = s->goal == MESH_SIZE_FASTEST, fit = 0;
    double work = 0, shortest = 0, best = 0;
    for (int k = s->n_rows - 1; k >= 0; k--) {
        mesh_size_row_t *r = &s->rows[k];
        if (fastest && work > 0 && work / r->nodes > shortest * (1 + MESH_PLAN_TIE)) {
            for (; k >= 0; k--)
                s->rows[k].fits = -1;
            return 0;
        }
        if (size_row(r, m, a, pins, assume, deadline(s, r, m, a, best), fit, &fit, err) < 0)
            return -1;
        if (r->fits != 1)
            continue;
        double step = r->best.cost.step_seconds, x = fastest ? step : r->tokens_per_gpu_hour;
        if (best == 0 || (fastest ? x < best : x > best))
            best = x;
        if (fastest && r->best.cost.mfu > 0 && r->best.cost.mfu <= 1) {
            if (work == 0)
                work = step * r->best.cost.mfu * r->nodes;
            if (shortest == 0 || step < shortest)
                shortest = step;
        }
    }
    return 0;
}

/* Plan the rows the sizing needs (see mesh_size_create's flags); the rows
 * it leaves out get fits -1.  0, or -1 with err set. */
static int plan_rows(mesh_size_t *s, const mesh_model_t *m, const mesh_alloc_t *a,
                     const mesh_layout_t *pins, const mesh_assumptions_t *assume, unsigned flags,
                     mesh_error_t *err)
{
    if (!(flags & MESH_SIZE_TABLE) && s->goal != MESH_SIZE_MIN)
        return rank_rows(s, m, a, pins, assume, err);
    for (int k = 0; k < s->n_rows; k++) {
        int fit;
        if (size_row(&s->rows[k], m, a, pins, assume, 0, 0, &fit, err) < 0)
            return -1;
        if (s->rows[k].fits && !(flags & MESH_SIZE_TABLE)) { /* MIN: the first that fits */
            for (int j = k + 1; j < s->n_rows; j++)
                s->rows[j].fits = -1;
            return 0;
        }
    }
    return 0;
}

/* How good row r is for the goal: larger is better (shorter steps are
 * negated).  MIN ranks nothing: the first fitting row wins. */
static double merit(const mesh_size_row_t *r, mesh_size_goal_t goal)
{
    return goal == MESH_SIZE_FASTEST ? -r->best.cost.step_seconds : r->tokens_per_gpu_hour;
}

/* Whether x is within MESH_PLAN_TIE of the best merit (both signs). */
static int ties(double x, double best)
{
    return x >= best - (best < 0 ? -best : best) * MESH_PLAN_TIE;
}

/* The choice: the fewest nodes among the fitting rows within MESH_PLAN_TIE
 * of the best for the goal (MIN: the fewest that fit).  -1 when none fits. */
static int choose(const mesh_size_t *s)
{
    int best = -1, n_fit = 0;
    for (int i = 0; i < s->n_rows; i++) {
        if (s->rows[i].fits != 1)
            continue;
        n_fit++;
        if (best < 0 || merit(&s->rows[i], s->goal) > merit(&s->rows[best], s->goal))
            best = i;
    }
    if (best < 0 || s->goal == MESH_SIZE_MIN)
        for (int i = 0; i < s->n_rows; i++)
            if (s->rows[i].fits == 1)
                return i;
    for (int i = 0; i < best; i++)
        if (s->rows[i].fits == 1 &&
            ties(merit(&s->rows[i], s->goal), merit(&s->rows[best], s->goal)))
            return i;
    return n_fit ? best : -1;
}

/* The choice's reason, one line. */
static void say_why(mesh_size_t *s)
{
    const mesh_size_row_t *r = &s->rows[s->chosen];
    const char *nodes = r->nodes == 1 ? "node" : "nodes";
    char per_hour[16];
    switch (s->goal) {
    case MESH_SIZE_MIN:
        snprintf(s->reason, sizeof(s->reason), "%d %s: the fewest of %d-%d on which a layout fits",
                 r->nodes, nodes, s->lo, s->hi);
        break;
    case MESH_SIZE_FASTEST:
        snprintf(s->reason, sizeof(s->reason),
                 "%d %s: the shortest step of %d-%d nodes, %.3g s (steps within %g%% tie to "
                 "fewer nodes)",
                 r->nodes, nodes, s->lo, s->hi, r->best.cost.step_seconds, MESH_PLAN_TIE * 100);
        break;
    case MESH_SIZE_EFFICIENT:
        snprintf(s->reason, sizeof(s->reason),
                 "%d %s: the most tokens per GPU-hour of %d-%d nodes, %s (within %g%% ties "
                 "go to fewer nodes)",
                 r->nodes, nodes, s->lo, s->hi,
                 mesh_format_si(r->tokens_per_gpu_hour, per_hour, sizeof(per_hour)),
                 MESH_PLAN_TIE * 100);
        break;
    }
}

/* Nothing fits: how many nodes would, from the advice of a plan on hi
 * nodes (which also says whether the inputs are bad).  0, or -1 with err. */
static int say_why_not(mesh_size_t *s, const mesh_model_t *m, const mesh_alloc_t *a,
                       const mesh_layout_t *pins, const mesh_assumptions_t *assume,
                       mesh_error_t *err)
{
    mesh_alloc_t on = *a;
    on.nodes = s->hi;
    mesh_plan_t *p = mesh_plan_create(m, &on, pins, assume, err);
    if (!p)
        return mesh_error_prefix(err, "on %d nodes", s->hi);
    for (int i = 0; i < mesh_plan_advice_count(p); i++) {
        const mesh_advice_t *adv = mesh_plan_advice_record(p, i);
        if (adv->kind == MESH_ADVICE_NODES)
            s->would_fit = adv->nodes;
    }
    mesh_plan_destroy(p);
    if (s->would_fit)
        snprintf(s->reason, sizeof(s->reason), "no layout fits on %d-%d nodes; %d nodes would",
                 s->lo, s->hi, s->would_fit);
    else
        snprintf(s->reason, sizeof(s->reason),
                 "no layout fits on %d-%d nodes, and more nodes would not help (see meshplan "
                 "plan --nodes %d)",
                 s->lo, s->hi, s->hi);
    return 0;
}

mesh_size_t *mesh_size_create(const mesh_model_t *m, const mesh_alloc_t *a, int lo, int hi,
                              const mesh_layout_t *pins, const mesh_assumptions_t *assume,
                              mesh_size_goal_t goal, unsigned flags, mesh_error_t *err)
{
    if (lo < 1 || lo > hi)
        return mesh_error_set(err, "the node range %d-%d is empty", lo, hi), NULL;
    if ((long)hi - lo + 1 > MESH_SIZE_ROWS_MAX)
        return mesh_error_set(err, "the node range %d-%d has more than %d counts", lo, hi,
                              MESH_SIZE_ROWS_MAX),
               NULL;
    if ((int)goal < 0 || (int)goal >= MESH_ARRAY_LEN(goal_names))
        return mesh_error_set(err, "unknown sizing goal %d", (int)goal), NULL;
    mesh_size_t *s = calloc(1, sizeof(*s));
    if (s)
        s->rows = calloc((size_t)(hi - lo + 1), sizeof(*s->rows));
    if (!s || !s->rows)
        return mesh_size_destroy(s), mesh_error_set(err, "out of memory"), NULL;
    s->goal = goal;
    s->lo = lo;
    s->hi = hi;
    s->n_rows = hi - lo + 1;
    for (int i = 0; i < s->n_rows; i++)
        s->rows[i].nodes = lo + i;
    if (plan_rows(s, m, a, pins, assume, flags, err) < 0)
        return mesh_size_destroy(s), NULL;
    s->chosen = choose(s);
    if (s->chosen >= 0)
        say_why(s);
    else if (say_why_not(s, m, a, pins, assume, err) < 0)
        return mesh_size_destroy(s), NULL;
    return s;
}

void mesh_size_destroy(mesh_size_t *s)
{
    if (!s)
        return;
    free(s->rows);
    free(s);
}

int mesh_size_estimate(const mesh_model_t *m, const mesh_cost_t *c, mesh_estimate_t *out)
{
    memset(out, 0, sizeof(*out));
    double per_step = (double)m->global_batch * m->seq_len;
    if (m->steps > 0)
        out->steps = m->steps;
    else if (m->tokens > 0 && per_step > 0)
        out->steps = mesh_ceil_long(m->tokens / per_step); /* a part step is a whole one */
    else
        return 0;
    out->tokens = out->steps * per_step;
    out->seconds = out->steps * c->step_seconds;
    return 1;
}

long mesh_size_limit_minutes(const mesh_estimate_t *e, double margin)
{
    double minutes = e->seconds * (1 + (margin > 0 ? margin : 0)) / 60;
    if (!(minutes < 1e9)) /* beyond Slurm's INFINITE, or NaN: Slurm's limit can say no more */
        return 999999999;
    long m = mesh_ceil_long(minutes);
    return m > 0 ? m : 1;
}

const char *mesh_size_slurm_time(long minutes, char *buf, size_t len)
{
    long d = minutes / 1440, h = minutes % 1440 / 60, m = minutes % 60;
    if (d)
        snprintf(buf, len, "%ld-%02ld:%02ld:00", d, h, m);
    else
        snprintf(buf, len, "%ld:%02ld:00", h, m);
    return buf;
}
