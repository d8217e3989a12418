/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The controller's judgement of a job at submission (see submit.h): moved
 * here from job_submit/meshplan so that the CLI's --partition asks the
 * same function, and gets the same verdict in the same words.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "meshplan/plan.h"
#include "meshplan/controller.h"

/* The allocation of policy entry q (NULL: none, the policy's own). */
static int entry_alloc(const mesh_policy_t *pol, const mesh_partition_t *q, const mesh_step_t *s,
                       mesh_alloc_t *a, mesh_error_t *err)
{
    if (mesh_policy_alloc(&pol->assume, q && q->gpu[0] ? q->gpu : NULL, q ? q->gpu_mem : 0,
                          q ? q->island : 0, s->nodes, s->gpus_per_node, a, err) < 0)
        return -1;
    a->host_memory = s->host_memory;
    return 0;
}

int mesh_partition_alloc(const mesh_policy_t *pol, const char *name, const mesh_step_t *s,
                         mesh_alloc_t *a, mesh_error_t *err)
{
    return entry_alloc(pol, mesh_policy_partition(pol, name && *name ? name : NULL), s, a, err);
}

/* Whether the job fits the partition the policy describes as q: RUN if it
 * does, or, unjudged (*judged 0, why in why), if the policy gives it no
 * GPU; else the verdict enforce gives, with the reason in why. */
static mesh_verdict_t judge_entry(const mesh_policy_t *pol, const mesh_partition_t *q,
                                  const mesh_model_t *m, const mesh_layout_t *pins,
                                  const mesh_step_t *s, int *judged, char *why, size_t len)
{
    mesh_alloc_t a;
    mesh_error_t err;
    mesh_verdict_t nofit =
        pol->enforce == MESH_ENFORCE_REJECT ? MESH_VERDICT_REFUSE : MESH_VERDICT_WARN;
    *judged = 1;
    why[0] = '\0';
    if (entry_alloc(pol, q, s, &a, &err) < 0) {
        *judged = 0; /* the nodes will judge it at launch */
        snprintf(why, len, "%s", err.msg);
        return MESH_VERDICT_RUN;
    }
    if (q && q->nodes && s->nodes > q->nodes)
        return snprintf(why, len,
                        "the job asks for %d nodes but partition %s has %d: plan for at most %d "
                        "(meshplan plan --model ... --nodes %d shows what fits)",
                        s->nodes, q->name, q->nodes, q->nodes, q->nodes),
               nofit;
    /* most jobs fit: a first-fit search says so without pricing every
     * layout; only a refusal needs the whole plan, for its explanation */
    if (mesh_plan_any_fits(m, &a, pins, &pol->assume))
        return MESH_VERDICT_RUN;
    mesh_plan_t *p = mesh_plan_create(m, &a, pins, &pol->assume, &err);
    if (!p)
        return snprintf(why, len, "%s", err.msg), nofit;
    mesh_verdict_t v = mesh_plan_verdict(p, pol->enforce, why, len);
    mesh_plan_destroy(p);
    return v;
}

/* The job's name for the partition at list[0..k) into out; "" when it is
 * longer than any policy entry's name could be. */
static void part_name(const char *list, size_t k, char *out, size_t len)
{
    out[0] = '\0';
    if (k < len)
        snprintf(out, len, "%.*s", (int)k, list);
}

mesh_verdict_t mesh_submit_judge(const mesh_policy_t *pol, const char *partitions,
                                 const mesh_model_t *m, const mesh_layout_t *pins,
                                 const mesh_step_t *s, mesh_submit_t *out)
{
    memset(out, 0, sizeof(*out));
    if (!partitions)
        partitions = "";
    part_name(partitions, strcspn(partitions, ","), out->partition, sizeof(out->partition));
    out->entry = mesh_policy_partition(pol, out->partition[0] ? out->partition : NULL);
    if (pol->enforce == MESH_ENFORCE_OFF)
        return out->verdict = MESH_VERDICT_RUN;
    /* A job naming several partitions runs in whichever starts it first, so
     * it is refused only when it fits none of them, with the first's reason.
     * Names share policy entries (all unknown ones share `default`): each
     * entry is planned once, so a long list costs string compares only. */
    char why[MESH_SUBMIT_MSG_MAX], other[MESH_SUBMIT_MSG_MAX];
    const mesh_partition_t *judged[MESH_PARTITIONS_MAX + 1];
    int n = 0, n_judged = 0;
    mesh_verdict_t first = MESH_VERDICT_RUN;
    for (const char *list = partitions;; list++) {
        size_t k = strcspn(list, ",");
        char part[sizeof(out->partition)];
        part_name(list, k, part, sizeof(part));
        const mesh_partition_t *q = mesh_policy_partition(pol, k ? part : NULL);
        int seen = 0, was_judged;
        for (int i = 0; i < n_judged; i++)
            seen |= judged[i] == q;
        if (!seen && n_judged < MESH_ARRAY_LEN(judged)) {
            char *reason = n_judged ? other : why;
            mesh_verdict_t v = judge_entry(pol, q, m, pins, s, &was_judged, reason, sizeof(why));
            if (v == MESH_VERDICT_RUN) {
                out->judged = was_judged;
                out->index = n;
                mesh_strlcpy(out->partition, part, sizeof(out->partition));
                out->entry = q;
                if (!was_judged)
                    mesh_strlcpy(out->msg, reason, sizeof(out->msg));
                return out->verdict = MESH_VERDICT_RUN;
            }
            if (!n_judged)
                first = v;
            judged[n_judged++] = q;
        }
        n++;
        list += k;
        if (*list != ',')
            break;
    }
    out->judged = 1;
    char *msg = NULL;
    if (n > 1) {
        mesh_buf_t b;
        mesh_buf_init(&b);
        mesh_buf_printf(&b,
                        "in partition %.*s: %s\n(it fits none of the %d partitions the job names)",
                        (int)strcspn(partitions, ","), partitions, why, n);
        msg = mesh_buf_take(&b); /* NULL: out of memory, and the reason alone */
    }
    mesh_strlcpy(out->msg, msg ? msg : why, sizeof(out->msg));
    free(msg);
    return out->verdict = first;
}

/* Add a line to out->note (what the user of an accepted job is told). */
static void add_note(mesh_submit_t *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void add_note(mesh_submit_t *out, const char *fmt, ...)
{
    size_t n = strlen(out->note);
    if (n && n + 1 < sizeof(out->note))
        out->note[n++] = '\n';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->note + n, sizeof(out->note) - n, fmt, ap);
    va_end(ap);
}

/* Refuse: the user asked for something the controller cannot do. */
static mesh_verdict_t refuse(mesh_submit_t *out, mesh_submit_about_t about, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static mesh_verdict_t refuse(mesh_submit_t *out, mesh_submit_about_t about, const char *fmt, ...)
{
    out->about = about;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->msg, sizeof(out->msg), fmt, ap);
    va_end(ap);
    out->judged = 1;
    return out->verdict = MESH_VERDICT_REFUSE;
}

/* Size the job over its node range in its first partition: RUN with
 * out->nodes and *best set, or the verdict that stops it. */
static mesh_verdict_t size_job(const mesh_policy_t *pol, const mesh_model_t *m,
                               const mesh_layout_t *pins, const mesh_step_t *s,
                               const mesh_submit_ask_t *ask, mesh_submit_t *out,
                               mesh_candidate_t *best)
{
    const char *goal = ask->aim.text;
    int lo = ask->nodes_lo, hi = ask->nodes_hi ? ask->nodes_hi : ask->nodes_lo;
    mesh_error_t err;
    mesh_alloc_t a;
    if (lo < 1)
        return refuse(out, MESH_SUBMIT_SIZE,
                      "--mesh-size=%s: the job gives no node range: give one, as -N 2-32", goal);
    if (mesh_size_bound(pol, out->partition, &lo, &hi, &err) < 0)
        return refuse(out, MESH_SUBMIT_SIZE,
                      "--mesh-size=%s: %s: give a range the partition can hold", goal, err.msg);
    if (hi - lo + 1 > MESH_SUBMIT_SIZE_MAX)
        return refuse(out, MESH_SUBMIT_SIZE,
                      "--mesh-size=%s: the node range %d-%d has %d counts; the controller sizes at "
                      "most %d (give a narrower range, as -N %d-%d; meshplan size plans any)",
                      goal, lo, hi, hi - lo + 1, MESH_SUBMIT_SIZE_MAX, lo,
                      lo + MESH_SUBMIT_SIZE_MAX - 1);
    if (mesh_partition_alloc(pol, out->partition, s, &a, &err) < 0)
        return refuse(out, MESH_SUBMIT_SIZE,
                      "--mesh-size=%s: the controller cannot size the job: %s (the site's "
                      "policy must name the partition's GPU; or give -N with one count)",
                      goal, err.msg);
    mesh_size_t *sz = mesh_size_create_aim(m, &a, lo, hi, pins, &pol->assume, &ask->aim, 0, &err);
    if (!sz)
        return refuse(out, MESH_SUBMIT_SIZE, "--mesh-size=%s: %s", goal, err.msg);
    mesh_verdict_t v = MESH_VERDICT_RUN;
    if (sz->chosen >= 0) {
        const mesh_size_row_t *r = &sz->rows[sz->chosen];
        char l[MESH_LAYOUT_STR_MAX];
        out->nodes = r->nodes;
        *best = r->best;
        add_note(out, "--mesh-size=%s: the job runs on %s; layout %s", goal, sz->reason,
                 mesh_layout_format(&r->best.layout, l, sizeof(l)));
    } else if (pol->enforce == MESH_ENFORCE_OFF) {
        add_note(out, "--mesh-size=%s: %s (enforce=off: not narrowed)", goal, sz->reason);
    } else {
        v = pol->enforce == MESH_ENFORCE_REJECT ? MESH_VERDICT_REFUSE : MESH_VERDICT_WARN;
        out->about = MESH_SUBMIT_SIZE;
        snprintf(out->msg, sizeof(out->msg), "--mesh-size=%s: %s", goal, sz->reason);
    }
    out->judged = 1;
    mesh_size_destroy(sz);
    return out->verdict = v;
}

/* The chosen layout of a job that was judged and not sized, for its time
 * estimate: 1 with *best set, or 0 (no plan could be made, or none fits). */
static int plan_best(const mesh_policy_t *pol, const mesh_model_t *m, const mesh_layout_t *pins,
                     const mesh_step_t *s, const mesh_submit_t *out, mesh_candidate_t *best)
{
    mesh_alloc_t a;
    mesh_error_t err;
    if (entry_alloc(pol, out->entry, s, &a, &err) < 0)
        return 0;
    mesh_plan_t *p = mesh_plan_create(m, &a, pins, &pol->assume, &err);
    int ok = p && mesh_plan_fits(p);
    if (ok)
        *best = *mesh_plan_best(p);
    mesh_plan_destroy(p);
    return ok;
}

/* A run longer than the partition's MaxTime, max minutes: the chain of
 * jobs it takes, in a note, and (time_limit=set, no limit given) one
 * link's limit.  Returns 1, or 0 when one job covers the run. */
static int judge_chain(const mesh_policy_t *pol, const mesh_estimate_t *est, long max, long asked,
                       int nodes, mesh_submit_t *out)
{
    mesh_chain_t c;
    char t_max[32], t_job[32], t_est[32], cmd[512];
    if (mesh_size_chain(est, pol->assume.time_margin, max, &c) <= 1)
        return 0;
    mesh_size_slurm_time(max, t_max, sizeof(t_max));
    mesh_size_slurm_time(c.minutes, t_job, sizeof(t_job));
    mesh_size_slurm_time(mesh_size_limit_minutes(est, 0), t_est, sizeof(t_est));
    if (asked == 0 && pol->controller.time_limit >= MESH_TIME_LIMIT_SET)
        out->time_limit = c.minutes;
    add_note(out,
             "%sthe run is estimated at %s (%ld steps), more than partition %s's MaxTime %s "
             "with the %.0f%% margin: it takes %d chained jobs of --time=%s, each resuming from "
             "the checkpoint of the one before:\n  %s",
             out->time_limit ? "time limit set to one link's: " : "", t_est, est->steps,
             out->partition[0] ? out->partition : "(default)", t_max, 100 * pol->assume.time_margin,
             c.jobs, t_job, mesh_size_chain_recipe(&c, nodes, "NAME", "SCRIPT", cmd, sizeof(cmd)));
    return 1;
}

/* The time limit against the estimate of layout *best, per time_limit=. */
static mesh_verdict_t judge_time(const mesh_policy_t *pol, const mesh_model_t *m,
                                 const mesh_candidate_t *best, const mesh_submit_ask_t *ask,
                                 int nodes, mesh_submit_t *out)
{
    mesh_estimate_t est;
    long asked = ask->time_limit;
    long max = ask->max_time > 0 ? ask->max_time : out->entry ? out->entry->max_time : 0;
    if (!mesh_size_estimate(m, &best->cost, &est))
        return out->verdict;
    out->estimate = est.seconds;
    if (judge_chain(pol, &est, max, asked, nodes, out))
        return out->verdict;
    double margin = pol->assume.time_margin;
    long need = mesh_size_limit_minutes(&est, margin);
    long bare_min = mesh_size_limit_minutes(&est, 0);
    char t_need[32], t_asked[32], t_est[32];
    mesh_size_slurm_time(need, t_need, sizeof(t_need));
    mesh_size_slurm_time(bare_min, t_est, sizeof(t_est));
    mesh_time_limit_t mode = pol->controller.time_limit;
    out->estimate = est.seconds;
    if (asked == 0) {
        if (mode >= MESH_TIME_LIMIT_SET) {
            out->time_limit = need;
            add_note(out,
                     "time limit set to %s: the run is estimated at %s (%ld steps), plus the "
                     "%.0f%% margin",
                     t_need, t_est, est.steps, 100 * margin);
        } else {
            add_note(out,
                     "the job gives no time limit: the run is estimated at %s (%ld steps); "
                     "--time=%s covers it with the %.0f%% margin",
                     t_est, est.steps, t_need, 100 * margin);
        }
        return out->verdict;
    }
    if (asked > 0)
        mesh_size_slurm_time(asked, t_asked, sizeof(t_asked));
    else
        snprintf(t_asked, sizeof(t_asked), "UNLIMITED");
    if (asked > 0 && asked < bare_min && mode == MESH_TIME_LIMIT_REJECT)
        return refuse(out, MESH_SUBMIT_TIME,
                      "--time=%s is shorter than the run's estimate, %s (%ld steps): the job "
                      "would be killed before it finishes (time_limit=reject); ask for "
                      "--time=%s (the estimate plus the %.0f%% margin), or train fewer tokens",
                      t_asked, t_est, est.steps, t_need, 100 * margin);
    if (asked > 0 && asked < need)
        add_note(out,
                 "--time=%s is shorter than the run's estimate with the %.0f%% margin, %s "
                 "(estimate %s, %ld steps): the job may be killed before it finishes",
                 t_asked, 100 * margin, t_need, t_est, est.steps);
    else if (asked < 0 || (double)asked > MESH_TIME_LIMIT_LONG * (double)need)
        add_note(out,
                 "--time=%s is more than %g times the run's estimate with the %.0f%% margin, "
                 "%s: a limit near it lets backfill start the job sooner",
                 t_asked, MESH_TIME_LIMIT_LONG, 100 * margin, t_need);
    return out->verdict;
}

mesh_verdict_t mesh_submit_decide(const mesh_policy_t *pol, const char *partitions,
                                  const mesh_model_t *m, const mesh_layout_t *pins,
                                  const mesh_step_t *s, const mesh_submit_ask_t *ask,
                                  mesh_submit_t *out)
{
    mesh_candidate_t best;
    int have_best = 0;
    int sized = ask->size && !(ask->nodes_hi == 0 || ask->nodes_hi == ask->nodes_lo);
    if (ask->size && !sized && ask->nodes_lo > 0) {
        /* one count: nothing to choose, judged as it is */
        mesh_submit_judge(pol, partitions, m, pins, s, out);
        add_note(out,
                 "--mesh-size=%s: the job asks for %d node%s, so there is nothing to size "
                 "(give a range, as -N 1-%d)",
                 ask->aim.text, ask->nodes_lo, ask->nodes_lo == 1 ? "" : "s", ask->nodes_lo);
    } else if (ask->size) {
        memset(out, 0, sizeof(*out));
        if (!partitions)
            partitions = "";
        part_name(partitions, strcspn(partitions, ","), out->partition, sizeof(out->partition));
        out->entry = mesh_policy_partition(pol, out->partition[0] ? out->partition : NULL);
        if (size_job(pol, m, pins, s, ask, out, &best) != MESH_VERDICT_RUN)
            return out->verdict;
        have_best = out->nodes > 0;
    } else {
        mesh_submit_judge(pol, partitions, m, pins, s, out);
    }
    if (out->verdict != MESH_VERDICT_RUN || !out->judged ||
        pol->controller.time_limit == MESH_TIME_LIMIT_OFF || (m->tokens <= 0 && m->steps <= 0))
        return out->verdict;
    if (!have_best && !plan_best(pol, m, pins, s, out, &best))
        return out->verdict;
    return judge_time(pol, m, &best, ask, out->nodes ? out->nodes : s->nodes, out);
}
