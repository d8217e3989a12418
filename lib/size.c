/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sizing (see size.h): every node count of a range planned, one picked by a
 * goal.  The counts are independent plans, each the choice alone
 * (mesh_plan_choose, no explanation); the cost is in the counts that fit,
 * so those that do not are told apart by a first-fit search, which stops
 * at the first fitting layout and prices none (mesh_plan_fit_first; where
 * none of its layouts is valid, whether any is takes a search of every
 * layout, which only a table or the reason of a sizing where nothing fits
 * asks: tell_row), and a count that cannot be chosen is searched only
 * until that shows (a deadline on its step; doc/design.md, "Sizing").  A deadline
 * goal, the chain of jobs a partition's MaxTime cuts a run into and
 * scontrol's MaxTime are here too: they are the sizing's questions of time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "meshplan/explain.h"
#include "meshplan/parse.h"
#include "meshplan/size.h"
#include "meshplan/when.h"

/* the goals' names, in mesh_size_goal_t's order; the last, a deadline's,
 * is no name but the prefix of "by:WHEN" (mesh_size_aim_parse) */
static const char *const goal_names[] = {"min", "fastest", "efficient", "by"};
#define NAMED_GOALS MESH_SIZE_DEADLINE

int mesh_size_goal_parse(const char *name, mesh_size_goal_t *out, mesh_error_t *err)
{
    for (int g = 0; g < NAMED_GOALS; g++)
        if (strcmp(name, goal_names[g]) == 0)
            return *out = (mesh_size_goal_t)g, 0;
    return mesh_error_set(err, "unknown goal '%.40s' (min, fastest, efficient or by:WHEN)", name);
}

int mesh_size_aim_parse(const char *text, long long now, mesh_size_aim_t *out, mesh_error_t *err)
{
    mesh_size_aim_t aim = {.goal = MESH_SIZE_MIN};
    long long when;
    if (strlen(text) >= sizeof(aim.text))
        return mesh_error_set(err, "goal '%.20s...' is longer than %d bytes", text,
                              (int)sizeof(aim.text) - 1);
    mesh_strlcpy(aim.text, text, sizeof(aim.text));
    if (strncmp(text, "by:", 3) != 0) {
        if (mesh_size_goal_parse(text, &aim.goal, err) < 0)
            return -1;
        return *out = aim, 0;
    }
    const char *w = text + 3;
    aim.goal = MESH_SIZE_DEADLINE;
    /* a date is YYYY-MM-DD...: four digits and a dash, which no duration
     * starts with but a day count of 1000 or more, which a date is read as */
    if (strlen(w) >= 5 && w[4] == '-' && strspn(w, "0123456789") == 4) {
        if (mesh_parse_date(w, "goal by:DATE", &when, err) < 0)
            return -1;
        if (when <= now)
            return mesh_error_set(err, "goal %s: the date is not in the future", text);
        aim.within = (double)(when - now);
    } else {
        if (mesh_parse_duration(w, "goal by:DURATION", &when, err) < 0)
            return -1;
        aim.within = (double)when;
    }
    *out = aim;
    return 0;
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
        return mesh_error_set(
            err, "the node range %d-%d is outside partition %.*s, which has %d nodes", *lo, *hi,
            name && *name ? mesh_first_partition_len(name) : MESH_NAME_MAX,
            name && *name ? name : q->name, q->nodes);
    if (*hi > q->nodes)
        *hi = q->nodes;
    return 0;
}

/* What every count of a sizing is planned from: the model, the
 * allocation (each row's with its own node count: on_row), the pins and
 * the planner's assumptions. */
typedef struct sizing_in {
    const mesh_model_t *m;
    const mesh_alloc_t *a;
    const mesh_layout_t *pins;
    const mesh_assumptions_t *assume;
} sizing_in_t;

/* The allocation of row r's count. */
static mesh_alloc_t on_row(const sizing_in_t *in, const mesh_size_row_t *r)
{
    mesh_alloc_t on = *in->a;
    on.nodes = r->nodes;
    return on;
}

/* A search's error on row r's count, as the sizing's: *why (NULL: err
 * holds it already) prefixed with the count.  -1. */
static int row_error(const mesh_size_row_t *r, const mesh_error_t *why, mesh_error_t *err)
{
    if (err && why)
        *err = *why;
    return mesh_error_prefix(err, "on %d node%s", r->nodes, r->nodes == 1 ? "" : "s");
}

/* Why nothing fits row r's count, allocation *on: no_layout (the reason
 * the planner gives) or, NULL, layouts that exist but do not fit. */
static void say_no_fit(mesh_size_row_t *r, const mesh_alloc_t *on, const char *no_layout)
{
    r->fits = 0;
    r->no_layout = no_layout != NULL;
    if (no_layout)
        snprintf(r->why, sizeof(r->why), "no layout: %d nodes x %d GPUs = %ld GPUs: %.300s",
                 on->nodes, on->gpus_per_node, mesh_world(on), no_layout);
    else
        snprintf(r->why, sizeof(r->why),
                 "layouts exist, but none fits in memory (meshplan plan --nodes %d says why)",
                 on->nodes);
}

/* Row r, where nothing the first-fit search tries is valid, left untold:
 * whether any layout is valid was not asked (tell_row asks). */
static void say_untold(mesh_size_row_t *r)
{
    r->fits = 0;
    r->no_layout = -1;
    snprintf(r->why, sizeof(r->why),
             "none of the layouts the first-fit search tries is valid; not asked whether any "
             "layout is (meshplan size says)");
}

/* Row r, where nothing fits and the sizing did not ask why (no_layout -1),
 * told: whether any layout is valid, and the reason.  0, or -1 with err. */
static int tell_row(mesh_size_row_t *r, const sizing_in_t *in, mesh_error_t *err)
{
    mesh_alloc_t on = on_row(in, r);
    mesh_error_t why;
    int status = mesh_plan_any_valid(in->m, &on, in->pins, in->assume, &why);
    if (status == -2)
        return row_error(r, &why, err);
    return say_no_fit(r, &on, status < 0 ? why.msg : NULL), 0;
}

/* Plan row r's count: whether a layout fits and, if one does, the plan's
 * choice.  deadline > 0: only a choice whose step is at most that many
 * seconds is wanted; fits -1 when there is none.  search_first: run the
 * search before asking whether anything fits (mesh_plan_any_fits), which
 * it spares where the deadline leaves the count out, at the cost of a
 * longer search where nothing fits (the caller's guess: something fit on
 * the count before).  Either way a count is planned only where something
 * fits by mesh_plan_any_fits.  tell: say why nothing fits (else, where no
 * layout the first-fit search tries is valid, no_layout -1: tell_row).
 * *fit: whether something is known to fit.  0, or -1 with err set when
 * the plan cannot be made. */
static int plan_row(mesh_size_row_t *r, const sizing_in_t *in, double deadline, int search_first,
                    int tell, int *fit, mesh_error_t *err)
{
    mesh_alloc_t on = on_row(in, r);
    int rc = search_first && deadline > 0
                 ? mesh_plan_choose(in->m, &on, in->pins, in->assume, deadline, &r->best, NULL)
                 : -1;
    if (rc == MESH_CHOICE_SLOWER || rc == MESH_CHOICE_LATE) {
        r->fits = -1;
        *fit = rc == MESH_CHOICE_LATE;
        return 0;
    }
    mesh_error_t why;
    int status = mesh_plan_fit_first(in->m, &on, in->pins, in->assume, &why);
    if (status == -2)
        return row_error(r, &why, err);
    *fit = status == 1;
    if (status == MESH_FIT_UNTOLD)
        return tell ? tell_row(r, in, err) : (say_untold(r), 0);
    if (!*fit) /* not priced: nothing on this count would be chosen */
        return say_no_fit(r, &on, NULL), 0;
    /* not searched yet, or failed: with the error wanted */
    if (rc < 0)
        rc = mesh_plan_choose(in->m, &on, in->pins, in->assume, deadline, &r->best, err);
    if (rc < 0)
        return row_error(r, NULL, err);
    r->fits = rc == MESH_CHOICE_FITS ? 1 : rc == MESH_CHOICE_NONE ? 0 : -1;
    if (r->fits == 1)
        r->tokens_per_gpu_hour = r->best.cost.tokens_per_sec * 3600.0 / (double)mesh_world(&on);
    return 0;
}

/* plan_row, within the work budget.  Once the budget has stopped the
 * sizing, what it found is partial (the controller lets the job through
 * un-narrowed): no more counts are planned, and the count whose searches
 * it stopped is not planned either (fits -1, no why), whatever they said
 * (nothing valid, nothing fitting, or the plan's error that planning
 * stopped). */
static int size_row(mesh_size_row_t *r, const sizing_in_t *in, double deadline, int search_first,
                    int tell, int *fit, mesh_error_t *err)
{
    int rc = mesh_work_stopped() ? 0 : plan_row(r, in, deadline, search_first, tell, fit, err);
    if (!mesh_work_stopped())
        return rc;
    r->fits = -1;
    r->why[0] = '\0';
    return 0;
}

/* The step row r's choice must take at most to be chosen or to tie the
 * best row so far (`best`: its merit, 0 while none): within MESH_PLAN_TIE
 * of the shortest step (FASTEST), or of the most tokens per GPU-hour
 * (EFFICIENT), which a step of T seconds on N GPUs gives as tokens per
 * step * 3600 / (T * N).  0 (none) while nothing is priced.  A count
 * whose fastest layout is slower can be neither: the plan's choice is no
 * faster than its fastest layout, and the best only gets better. */
static double deadline(const mesh_size_t *s, const mesh_size_row_t *r, const sizing_in_t *in,
                       double best)
{
    if (best <= 0)
        return 0;
    double tokens = (double)in->m->global_batch * in->m->seq_len,
           gpus = (double)r->nodes * in->a->gpus_per_node;
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
static int rank_rows(mesh_size_t *s, const sizing_in_t *in, mesh_error_t *err)
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
        if (size_row(r, in, deadline(s, r, in, best), fit, 0, &fit, err) < 0)
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

/* The run's seconds on row r's choice with the sizing's margin; 0 when the
 * spec gives no budget (mesh_size_create_aim refuses a deadline then). */
static double run_seconds(const mesh_size_t *s, const mesh_size_row_t *r, const mesh_model_t *m)
{
    mesh_estimate_t est;
    if (r->fits != 1 || !mesh_size_estimate(m, &r->best.cost, &est))
        return 0;
    return est.seconds * (1 + s->margin);
}

/* Whether row r fits and its run, with the margin, ends by the deadline. */
static int in_time(const mesh_size_t *s, const mesh_size_row_t *r, const mesh_model_t *m)
{
    return r->fits == 1 && run_seconds(s, r, m) <= s->aim.within;
}

/* MESH_SIZE_DEADLINE's rows, from lo up: with MESH_SIZE_TABLE all of them,
 * else up to the first in time (the choice), the rest fits -1.  0, or -1
 * with err set. */
static int deadline_rows(mesh_size_t *s, const sizing_in_t *in, unsigned flags, mesh_error_t *err)
{
    for (int k = 0; k < s->n_rows; k++) {
        int fit;
        if (size_row(&s->rows[k], in, 0, 0, flags & MESH_SIZE_TABLE, &fit, err) < 0)
            return -1;
        if (!(flags & MESH_SIZE_TABLE) && in_time(s, &s->rows[k], in->m)) {
            for (int j = k + 1; j < s->n_rows; j++)
                s->rows[j].fits = -1;
            return 0;
        }
    }
    return 0;
}

/* Plan the rows the sizing needs (see mesh_size_create's flags); the rows
 * it leaves out get fits -1.  0, or -1 with err set. */
static int plan_rows(mesh_size_t *s, const sizing_in_t *in, unsigned flags, mesh_error_t *err)
{
    if (s->goal == MESH_SIZE_DEADLINE)
        return deadline_rows(s, in, flags, err);
    if (!(flags & MESH_SIZE_TABLE) && s->goal != MESH_SIZE_MIN)
        return rank_rows(s, in, err);
    for (int k = 0; k < s->n_rows; k++) {
        int fit;
        if (size_row(&s->rows[k], in, 0, 0, flags & MESH_SIZE_TABLE, &fit, err) < 0)
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

/* DEADLINE's choice: the first row in time, else -1 with s->fastest the
 * row of the shortest run (-1: none fits). */
static int choose_in_time(mesh_size_t *s, const mesh_model_t *m)
{
    for (int i = 0; i < s->n_rows; i++)
        if (in_time(s, &s->rows[i], m))
            return i;
    for (int i = 0; i < s->n_rows; i++)
        if (s->rows[i].fits == 1 && (s->fastest < 0 || run_seconds(s, &s->rows[i], m) <
                                                           run_seconds(s, &s->rows[s->fastest], m)))
            s->fastest = i;
    return -1;
}

/* The choice: the fewest nodes among the fitting rows within MESH_PLAN_TIE
 * of the best for the goal (MIN: the fewest that fit; DEADLINE: the fewest
 * in time).  -1 when none fits. */
static int choose(mesh_size_t *s, const mesh_model_t *m)
{
    int best = -1, n_fit = 0;
    if (s->goal == MESH_SIZE_DEADLINE)
        return choose_in_time(s, m);
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

/* seconds as a short span: days from two on, else hours. */
static const char *span(double seconds, char *buf, size_t len)
{
    if (seconds >= 2 * 86400)
        snprintf(buf, len, "%.1f d", seconds / 86400);
    else
        snprintf(buf, len, "%.1f h", seconds / 3600);
    return buf;
}

/* The choice's reason, one line. */
static void say_why(mesh_size_t *s, const mesh_model_t *m)
{
    char run[32], within[32];
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
    case MESH_SIZE_DEADLINE:
        snprintf(s->reason, sizeof(s->reason),
                 "%d %s: the fewest of %d-%d whose run, %s with the %s margin, ends %s (%s "
                 "from now)",
                 r->nodes, nodes, s->lo, s->hi, span(run_seconds(s, r, m), run, sizeof(run)),
                 mesh_pct_str(s->margin).s, s->aim.text,
                 span(s->aim.within, within, sizeof(within)));
        break;
    }
}

/* DEADLINE, and no count in time: which comes closest. */
static void say_late(mesh_size_t *s, const mesh_model_t *m)
{
    char run[32], within[32];
    const mesh_size_row_t *r = &s->rows[s->fastest];
    snprintf(s->reason, sizeof(s->reason),
             "no count of %d-%d nodes ends %s (%s from now) with the %s margin: the fastest, "
             "%d nodes, runs %s",
             s->lo, s->hi, s->aim.text, span(s->aim.within, within, sizeof(within)),
             mesh_pct_str(s->margin).s, r->nodes, span(run_seconds(s, r, m), run, sizeof(run)));
}

/* Nothing fits: how many nodes would, from the advice of a plan on hi
 * nodes (which also says whether the inputs are bad).  0, or -1 with err. */
static int say_why_not(mesh_size_t *s, const sizing_in_t *in, mesh_error_t *err)
{
    int k = s->n_rows - 1;
    for (; k >= 0; k--) { /* the advice needs layouts: the largest count that has some */
        if (s->rows[k].no_layout < 0 && tell_row(&s->rows[k], in, err) < 0)
            return -1;
        if (!s->rows[k].no_layout)
            break;
    }
    if (k < 0) {
        snprintf(s->reason, sizeof(s->reason),
                 "no count of %d-%d nodes has a valid layout (each count says why)", s->lo, s->hi);
        return 0;
    }
    mesh_alloc_t on = on_row(in, &s->rows[k]);
    mesh_plan_t *p = mesh_plan_create(in->m, &on, in->pins, in->assume, err);
    if (!p)
        return row_error(&s->rows[k], NULL, err);
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
                 s->lo, s->hi, on.nodes);
    return 0;
}

mesh_size_t *mesh_size_create(const mesh_model_t *m, const mesh_alloc_t *a, int lo, int hi,
                              const mesh_layout_t *pins, const mesh_assumptions_t *assume,
                              mesh_size_goal_t goal, unsigned flags, mesh_error_t *err)
{
    mesh_size_aim_t aim = {.goal = goal};
    if (goal == MESH_SIZE_DEADLINE)
        return mesh_error_set(err, "a deadline goal needs its time: mesh_size_create_aim"), NULL;
    mesh_strlcpy(aim.text, mesh_size_goal_name(goal), sizeof(aim.text));
    return mesh_size_create_aim(m, a, lo, hi, pins, assume, &aim, flags, err);
}

/* A deadline's inputs: a budget to estimate the run from, a time to end
 * by.  0, or -1 with err set. */
static int check_deadline(const mesh_model_t *m, const mesh_size_aim_t *aim, mesh_error_t *err)
{
    if (!(aim->within > 0))
        return mesh_error_set(err, "goal %s: the deadline is not in the future", aim->text);
    if (m->tokens <= 0 && m->steps <= 0)
        return mesh_error_set(err,
                              "goal %s: %s gives no budget to estimate the run from: set "
                              "train.tokens or train.steps (--set train.tokens=1e12)",
                              aim->text, m->name);
    return 0;
}

/* A sizing the work budget stopped: partial, so neither a choice nor why
 * none fits (nor what would, nor the count of the shortest run). */
static void stopped(mesh_size_t *s)
{
    s->chosen = s->fastest = -1;
    s->would_fit = 0;
    snprintf(s->reason, sizeof(s->reason),
             "the sizing stopped at its work budget of %ld units before it had planned every "
             "count it needs: none is chosen",
             mesh_work_limit());
}

static mesh_size_t *size_create(const mesh_model_t *m, const mesh_alloc_t *a, int lo, int hi,
                                const mesh_layout_t *pins, const mesh_assumptions_t *assume,
                                const mesh_size_aim_t *aim, unsigned flags, mesh_error_t *err)
{
    mesh_size_goal_t goal = aim->goal;
    if (lo < 1 || lo > hi)
        return mesh_error_set(err, "the node range %d-%d is empty", lo, hi), NULL;
    if ((long)hi - lo + 1 > MESH_SIZE_ROWS_MAX)
        return mesh_error_set(err,
                              "the node range %d-%d has more than %d counts: narrow it to %d "
                              "counts at most (%d-%d)",
                              lo, hi, MESH_SIZE_ROWS_MAX, MESH_SIZE_ROWS_MAX, lo,
                              lo + MESH_SIZE_ROWS_MAX - 1),
               NULL;
    if ((int)goal < 0 || (int)goal >= MESH_ARRAY_LEN(goal_names))
        return mesh_error_set(err, "unknown sizing goal %d", (int)goal), NULL;
    if (goal == MESH_SIZE_DEADLINE && check_deadline(m, aim, err) < 0)
        return NULL;
    mesh_size_t *s = calloc(1, sizeof(*s));
    if (s)
        s->rows = calloc((size_t)(hi - lo + 1), sizeof(*s->rows));
    if (!s || !s->rows)
        return mesh_size_destroy(s), mesh_error_set(err, "out of memory"), NULL;
    s->goal = goal;
    s->aim = *aim;
    s->margin = assume ? assume->time_margin : MESH_TIME_MARGIN_DEFAULT;
    if (s->margin < 0)
        s->margin = 0;
    s->fastest = -1;
    s->lo = lo;
    s->hi = hi;
    s->n_rows = hi - lo + 1;
    for (int i = 0; i < s->n_rows; i++)
        s->rows[i].nodes = lo + i;
    const sizing_in_t in = {m, a, pins, assume};
    int rc = plan_rows(s, &in, flags, err);
    if (rc == 0 && !mesh_work_stopped()) {
        s->chosen = choose(s, m);
        if (s->chosen >= 0)
            say_why(s, m);
        else if (s->fastest >= 0)
            say_late(s, m);
        else
            rc = say_why_not(s, &in, err); /* its plan's searches may stop too */
    }
    if (mesh_work_stopped())
        return stopped(s), s;
    if (rc < 0)
        return mesh_size_destroy(s), NULL;
    return s;
}

/* The sizing, and the work units it cost (as mesh_plan_create counts a plan's). */
mesh_size_t *mesh_size_create_aim(const mesh_model_t *m, const mesh_alloc_t *a, int lo, int hi,
                                  const mesh_layout_t *pins, const mesh_assumptions_t *assume,
                                  const mesh_size_aim_t *aim, unsigned flags, mesh_error_t *err)
{
    mesh_work_t counter, *w = mesh_work_counted(&counter);
    long before = w->spent;
    mesh_size_t *s = size_create(m, a, lo, hi, pins, assume, aim, flags, err);
    if (s)
        s->work = w->spent - before;
    mesh_work_uncount(&counter);
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

int mesh_size_chain(const mesh_estimate_t *e, double margin, long max_minutes, mesh_chain_t *out)
{
    memset(out, 0, sizeof(*out));
    out->need = mesh_size_limit_minutes(e, margin);
    out->jobs = 1;
    if (max_minutes > 0 && out->need > max_minutes)
        out->jobs = (int)((out->need + max_minutes - 1) / max_minutes);
    out->minutes = (out->need + out->jobs - 1) / out->jobs; /* equal parts, none past the limit */
    return out->jobs;
}

const char *mesh_size_chain_recipe(const mesh_chain_t *c, int nodes, const char *name,
                                   const char *script, char *buf, size_t len)
{
    char t[32];
    mesh_size_slurm_time(c->minutes, t, sizeof(t));
    if (c->jobs <= 1)
        snprintf(buf, len, "sbatch --job-name=%s --time=%s -N %d %s", name, t, nodes, script);
    else
        snprintf(buf, len,
                 "for i in $(seq %d); do sbatch --job-name=%s --dependency=singleton --time=%s "
                 "-N %d %s; done",
                 c->jobs, name, t, nodes, script);
    return buf;
}

/* The partition records of scontrol's text as mesh_size_max_time_parse
 * reads them: the wanted one's MaxTime, and how many records and defaults
 * there were. */
typedef struct part_scan {
    const char *want; /* its first want_len bytes; NULL: the default or the only one */
    size_t want_len;
    int records, defaults, found;
    char name[MESH_SIZE_GOAL_MAX], max_time[MESH_SIZE_GOAL_MAX], cur[MESH_SIZE_GOAL_MAX];
    int cur_default, cur_has_max, has_max;
    char cur_max[MESH_SIZE_GOAL_MAX];
} part_scan_t;

/* The record that just ended is the wanted one: keep its MaxTime. */
static void end_record(part_scan_t *p)
{
    if (!p->records)
        return;
    p->defaults += p->cur_default;
    /* no name: the default, else the first (taken if it is the only one) */
    int wanted = p->want ? strncmp(p->cur, p->want, p->want_len) == 0 && !p->cur[p->want_len]
                         : p->cur_default || p->records == 1;
    if (wanted && (!p->found || (!p->want && p->cur_default))) {
        p->found = 1;
        p->has_max = p->cur_has_max;
        mesh_strlcpy(p->name, p->cur, sizeof(p->name));
        mesh_strlcpy(p->max_time, p->cur_max, sizeof(p->max_time));
    }
}

/* One KEY=VALUE field of k bytes at f.  0, or -1 with err set. */
static int scan_field(part_scan_t *p, const char *f, size_t k, mesh_error_t *err)
{
    static const char part_key[] = "PartitionName=", max_key[] = "MaxTime=", dflt[] = "Default=YES";
    size_t np = sizeof(part_key) - 1, nm = sizeof(max_key) - 1;
    if (k >= np && strncmp(f, part_key, np) == 0) {
        end_record(p);
        if (k - np >= sizeof(p->cur) || k == np)
            return mesh_error_set(err, "PartitionName= is empty or longer than %d bytes",
                                  (int)sizeof(p->cur) - 1);
        p->records++;
        snprintf(p->cur, sizeof(p->cur), "%.*s", (int)(k - np), f + np);
        p->cur_default = p->cur_has_max = 0;
    } else if (p->records && k >= nm && strncmp(f, max_key, nm) == 0) {
        if (k - nm >= sizeof(p->cur_max))
            return mesh_error_set(err, "partition %s: MaxTime= is longer than %d bytes", p->cur,
                                  (int)sizeof(p->cur_max) - 1);
        snprintf(p->cur_max, sizeof(p->cur_max), "%.*s", (int)(k - nm), f + nm);
        p->cur_has_max = 1;
    } else if (p->records && k == sizeof(dflt) - 1 && strncmp(f, dflt, k) == 0) {
        p->cur_default = 1;
    }
    return 0;
}

int mesh_size_max_time_parse(const char *text, const char *name, long *minutes, mesh_error_t *err)
{
    /* a job's list names its first, as mesh_policy_partition reads it */
    size_t first = (size_t)mesh_first_partition_len(name);
    part_scan_t p = {.want = first ? name : NULL, .want_len = first};
    for (const char *t = text; *t;) {
        size_t k = strcspn(t, " \t\r\n");
        for (size_t i = 0; i < k; i++)
            if ((unsigned char)t[i] < 0x20 || t[i] == 0x7f)
                return mesh_error_set(err,
                                      "byte %ld is a control character: not scontrol show "
                                      "partition's output",
                                      (long)(t - text + (long)i + 1));
        if (k && scan_field(&p, t, k, err) < 0)
            return -1;
        t += k;
        t += strspn(t, " \t\r\n");
    }
    end_record(&p);
    if (!p.records)
        return mesh_error_set(err, "no PartitionName= record: give scontrol show partition's "
                                   "output");
    if (!p.found && p.want)
        return mesh_error_set(err, "partition %.*s is not in it (%d partitions)", (int)p.want_len,
                              p.want, p.records);
    if (!p.found || (!p.want && (p.defaults > 1 || (p.defaults == 0 && p.records > 1))))
        return mesh_error_set(err, "%d partitions and no single default: name one (--partition)",
                              p.records);
    if (!p.has_max)
        return mesh_error_set(err, "partition %s gives no MaxTime=", p.name);
    char what[MESH_SIZE_GOAL_MAX + 24];
    snprintf(what, sizeof(what), "partition %s MaxTime", p.name);
    return mesh_parse_max_time(p.max_time, what, minutes, err);
}
