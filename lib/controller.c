/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The controller's judgement of a job at submission (see submit.h): moved
 * here from job_submit/meshplan so that the CLI's --partition asks the
 * same function, and gets the same verdict in the same words.
 */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
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

/* The CLI's options for allocation a's GPU, into buf[len]: --gpu NAME, or
 * --gpu-mem for one a partition gives by memory alone (MESH_GPU_GENERIC),
 * and --gpu-mem and --nvlink where the partition gives other than the
 * GPU's own (an island it gives below the GPU's lowers the GPU's too:
 * nvlink: 4 on GB200 keeps TP to the tray, where the table's 4 a node
 * does not, so the island the GPU was given is the one said). */
static void gpu_words(const mesh_alloc_t *a, char *buf, size_t len)
{
    int generic = strcmp(a->gpu.name, MESH_GPU_GENERIC) == 0;
    const mesh_gpu_t *own = generic ? mesh_gpu_default() : mesh_gpu_find(a->gpu.name);
    int n = generic ? 0 : snprintf(buf, len, "--gpu %s", a->gpu.name);
    if (n >= 0 && (size_t)n < len && (generic || (own && own->memory != a->gpu.memory)))
        n += snprintf(buf + n, len - (size_t)n, "%s--gpu-mem %gGiB", n ? " " : "",
                      a->gpu.memory / MESH_GiB);
    int island = own && own->island < a->gpus_per_node ? own->island : a->gpus_per_node;
    int lowered = own && a->gpu.island != own->island;
    if (n >= 0 && (size_t)n < len && own && (lowered || a->island != island))
        snprintf(buf + n, len - (size_t)n, " --nvlink %d", lowered ? a->gpu.island : a->island);
}

/* The line a refusal ends with when the budget cut its advice short: the
 * command that searches it in full on the login node, with the job's
 * allocation as the controller planned it (the model as the user gave it:
 * the controller sees only the spec, not where it came from), into
 * buf[len]. */
static void advice_cut(const mesh_alloc_t *a, const mesh_layout_t *pins, char *buf, size_t len)
{
    char p[MESH_LAYOUT_STR_MAX], mem[64] = "", gpu[128];
    mesh_layout_format_pins(pins, p, sizeof(p));
    if (a->host_memory > 0)
        snprintf(mem, sizeof(mem), " --host-mem %.0fGiB", a->host_memory / MESH_GiB);
    gpu_words(a, gpu, sizeof(gpu));
    snprintf(buf, len,
             "\n(what would fit was searched only as far as the controller's budget for it, %ld "
             "work units: meshplan plan --model ... --nodes %d --gpus-per-node %d %s%s%s%s "
             "searches it in full)",
             mesh_work_advice(), a->nodes, a->gpus_per_node, gpu,
             strcmp(p, "auto") ? " --mesh " : "", strcmp(p, "auto") ? p : "", mem);
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
     * layout; only a refusal needs the whole plan, for its explanation.
     * A fit found is a fit, however little budget was left; no fit found
     * before the budget ran out is no verdict: the nodes judge the job */
    if (mesh_plan_any_fits(m, &a, pins, &pol->assume))
        return MESH_VERDICT_RUN;
    if (mesh_work_stopped()) {
        *judged = 0;
        snprintf(why, len,
                 "the controller stopped judging the job at its work budget of %ld units before "
                 "finding a layout that fits: the nodes judge it at launch (meshplan plan "
                 "judges it in full)",
                 mesh_work_limit());
        return MESH_VERDICT_RUN;
    }
    /* it does not fit: the budget can only shorten the explanation, which
     * may spend a part of it, the verdict being known */
    long cap = mesh_work_limit() / MESH_SUBMIT_EXPLAIN_SHARE;
    mesh_work_t part, *whole = mesh_work_part(&part, cap);
    mesh_plan_t *p = mesh_plan_create(m, &a, pins, &pol->assume, &err);
    int cut = mesh_work_stopped();
    mesh_work_join(whole, &part);
    if (!p && cut)
        return snprintf(why, len,
                        "%s does not fit on %d x %d %s GPUs: no layout fits (the controller "
                        "stopped explaining at the %ld work units it gives an explanation; "
                        "meshplan plan explains it and says what would fit)",
                        m->name, a.nodes, a.gpus_per_node, a.gpu.name, cap),
               nofit;
    if (!p)
        return snprintf(why, len, "%s", err.msg), nofit;
    mesh_verdict_t v = mesh_plan_verdict(p, pol->enforce, why, len);
    if (mesh_plan_halted(p))
        advice_cut(&a, pins, why + strlen(why), len - strlen(why));
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

/* The first of the job's partitions (list, "" for none) into out, with
 * its policy entry (none named: the policy's default). */
static void first_partition(const mesh_policy_t *pol, const char *list, mesh_submit_t *out)
{
    part_name(list, (size_t)mesh_first_partition_len(list), out->partition, sizeof(out->partition));
    out->entry = mesh_policy_partition(pol, out->partition[0] ? out->partition : NULL);
}

char *mesh_submit_json(const mesh_submit_t *v)
{
    const char *verdict = v->verdict == MESH_VERDICT_RUN    ? "run"
                          : v->verdict == MESH_VERDICT_WARN ? "warn"
                                                            : "refuse";
    mesh_buf_t b;
    mesh_buf_init(&b);
    mesh_buf_printf(&b, "{\"verdict\":\"%s\",\"judged\":%s,\"partition\":", verdict,
                    v->judged ? "true" : "false");
    if (v->partition[0])
        mesh_buf_json_string(&b, v->partition);
    else
        mesh_buf_puts(&b, "null");
    mesh_buf_puts(&b, ",\"message\":");
    if (v->msg[0])
        mesh_buf_json_string(&b, v->msg);
    else
        mesh_buf_puts(&b, "null");
    mesh_buf_printf(&b, ",\"work\":%ld}", v->work);
    return mesh_buf_take(&b);
}

/* mesh_submit_judge, under the work budget in use. */
static mesh_verdict_t judge_fit(const mesh_policy_t *pol, const char *partitions,
                                const mesh_model_t *m, const mesh_layout_t *pins,
                                const mesh_step_t *s, mesh_submit_t *out)
{
    memset(out, 0, sizeof(*out));
    if (!partitions)
        partitions = "";
    first_partition(pol, partitions, out);
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
                if (!was_judged && mesh_work_stopped()) /* the user is told too */
                    mesh_strlcpy(out->note, reason, sizeof(out->note));
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
                        mesh_first_partition_len(partitions), partitions, why, n);
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
    if (mesh_work_stopped()) { /* what it found is partial: neither a choice nor a refusal */
        mesh_size_destroy(sz);
        add_note(out,
                 "--mesh-size=%s: the controller stopped sizing the job at its work budget of %ld "
                 "units: not narrowed, and the nodes judge it at launch (meshplan size sizes it "
                 "in full)",
                 goal, mesh_work_limit());
        return out->verdict = MESH_VERDICT_RUN; /* judged 0 */
    }
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
 * estimate: 1 with *best set, or 0 (no plan could be made, none fits, or
 * the work budget stopped the search: a note then says so).  The search
 * for the choice alone: the plan's choice, without its explanation. */
static int plan_best(const mesh_policy_t *pol, const mesh_model_t *m, const mesh_layout_t *pins,
                     const mesh_step_t *s, mesh_submit_t *out, mesh_candidate_t *best)
{
    mesh_alloc_t a;
    mesh_error_t err;
    if (entry_alloc(pol, out->entry, s, &a, &err) < 0)
        return 0;
    int rc = mesh_plan_choose(m, &a, pins, &pol->assume, 0, best, NULL);
    if (mesh_work_stopped()) {
        add_note(out,
                 "the run's time was not estimated: the controller stopped at its work budget "
                 "of %ld units (meshplan plan estimates it)",
                 mesh_work_limit());
        return 0;
    }
    return rc == MESH_CHOICE_FITS;
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
             "with the %s margin: it takes %d chained jobs of --time=%s, each resuming from "
             "the checkpoint of the one before:\n  %s",
             out->time_limit ? "time limit set to one link's: " : "", t_est, est->steps,
             out->partition[0] ? out->partition : "(default)", t_max,
             mesh_pct_str(pol->assume.time_margin).s, c.jobs, t_job,
             mesh_size_chain_recipe(&c, nodes, "NAME", "SCRIPT", cmd, sizeof(cmd)));
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
    if (asked == 0) {
        if (mode >= MESH_TIME_LIMIT_SET) {
            out->time_limit = need;
            add_note(out,
                     "time limit set to %s: the run is estimated at %s (%ld steps), plus the "
                     "%s margin",
                     t_need, t_est, est.steps, mesh_pct_str(margin).s);
        } else {
            add_note(out,
                     "the job gives no time limit: the run is estimated at %s (%ld steps); "
                     "--time=%s covers it with the %s margin",
                     t_est, est.steps, t_need, mesh_pct_str(margin).s);
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
                      "--time=%s (the estimate plus the %s margin), or train fewer tokens",
                      t_asked, t_est, est.steps, t_need, mesh_pct_str(margin).s);
    if (asked > 0 && asked < need)
        add_note(out,
                 "--time=%s is shorter than the run's estimate with the %s margin, %s "
                 "(estimate %s, %ld steps): the job may be killed before it finishes",
                 t_asked, mesh_pct_str(margin).s, t_need, t_est, est.steps);
    else if (asked < 0 || (double)asked > MESH_TIME_LIMIT_LONG * (double)need)
        add_note(out,
                 "--time=%s is more than %g times the run's estimate with the %s margin, "
                 "%s: a limit near it lets backfill start the job sooner",
                 t_asked, MESH_TIME_LIMIT_LONG, mesh_pct_str(margin).s, t_need);
    return out->verdict;
}

/* mesh_submit_decide, under the work budget in use. */
static mesh_verdict_t decide(const mesh_policy_t *pol, const char *partitions,
                             const mesh_model_t *m, const mesh_layout_t *pins, const mesh_step_t *s,
                             const mesh_submit_ask_t *ask, mesh_submit_t *out)
{
    mesh_candidate_t best;
    int have_best = 0;
    int sized = ask->size && !(ask->nodes_hi == 0 || ask->nodes_hi == ask->nodes_lo);
    if (ask->size && !sized && ask->nodes_lo > 0) {
        /* one count: nothing to choose, judged as it is (the range
         * offered reaches the count asked, or 2 for one node) */
        judge_fit(pol, partitions, m, pins, s, out);
        add_note(out,
                 "--mesh-size=%s: the job asks for %d node%s, so there is nothing to size "
                 "(give a range, as -N 1-%d)",
                 ask->aim.text, ask->nodes_lo, ask->nodes_lo == 1 ? "" : "s",
                 ask->nodes_lo > 1 ? ask->nodes_lo : 2);
    } else if (ask->size) {
        memset(out, 0, sizeof(*out));
        if (!partitions)
            partitions = "";
        first_partition(pol, partitions, out);
        if (size_job(pol, m, pins, s, ask, out, &best) != MESH_VERDICT_RUN)
            return out->verdict;
        have_best = out->nodes > 0;
    } else {
        judge_fit(pol, partitions, m, pins, s, out);
    }
    if (out->verdict != MESH_VERDICT_RUN || !out->judged ||
        pol->controller.time_limit == MESH_TIME_LIMIT_OFF || (m->tokens <= 0 && m->steps <= 0))
        return out->verdict;
    if (!have_best && !plan_best(pol, m, pins, s, out, &best))
        return out->verdict;
    return judge_time(pol, m, &best, ask, out->nodes ? out->nodes : s->nodes, out);
}

/* ---- the work budget and the verdict cache ---- */

/* A verdict, kept for the same submission under the same policy: the
 * model, pins, shape, what is asked and the partitions, each the same to
 * the byte (nothing else is read; the model's own bytes rather than its
 * digest, which formats every key and took 5 of a hit's 12 us), and a hash
 * of the policy's bytes, so that an edited policy misses. */
typedef struct cache_key {
    uint64_t policy;
    mesh_model_t model;
    mesh_layout_t pins;
    mesh_step_t shape;
    mesh_submit_ask_t ask;
    char partitions[256]; /* a longer list is not kept */
    long work;            /* the budget judged under */
    int shared;           /* 1: the floor of a user's share (mesh_submit_decide_for) */
} cache_key_t;

typedef struct cache_slot {
    int used;
    uint64_t hash;
    cache_key_t key;
    mesh_submit_t verdict;
    int entry; /* verdict.entry's index in the policy's partitions; -1: NULL */
} cache_slot_t;

/* slurmctld runs job_submit under its own lock, but the library promises
 * callers on several threads the same: one lock, held only to copy. */
static struct {
    pthread_mutex_t lock;
    unsigned next; /* the slot the next verdict replaces: the oldest */
    cache_slot_t slot[MESH_SUBMIT_CACHE_MAX];
} cache = {PTHREAD_MUTEX_INITIALIZER, 0, {{0}}};

/* A hash of n bytes of p, from h: FNV-1a's step taken over 8 bytes at a
 * time, each then folded down, and the tail byte by byte.  Byte by byte,
 * the policy's 7 KB took about 7 of a cache hit's 12 us; a word at a time
 * takes under 1.  It only picks the slots to compare in full (and stands
 * for the policy, which no user writes). */
static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = (h ^ w) * MESH_FNV_PRIME;
        h ^= h >> 32;
    }
    for (; i < n; i++)
        h = (h ^ b[i]) * MESH_FNV_PRIME;
    return h;
}

/* The key of a submission into *k (0), or -1 when it is not kept. */
static int cache_key(const mesh_policy_t *pol, const char *partitions, const mesh_model_t *m,
                     const mesh_layout_t *pins, const mesh_step_t *s, const mesh_submit_ask_t *ask,
                     cache_key_t *k)
{
    memset(k, 0, sizeof(*k));
    if (partitions && mesh_strlcpy(k->partitions, partitions, sizeof(k->partitions)) < 0)
        return -1;
    k->policy = hash_bytes(MESH_FNV_OFFSET, pol, sizeof(*pol));
    memcpy(&k->model, m, sizeof(*m));
    memcpy(&k->pins, pins, sizeof(*pins));
    memcpy(&k->shape, s, sizeof(*s));
    memcpy(&k->ask, ask, sizeof(*ask));
    return 0;
}

/* The verdict kept for key k into *out (1), or 0. */
static int cache_find(const mesh_policy_t *pol, const cache_key_t *k, uint64_t hash,
                      mesh_submit_t *out)
{
    int hit = 0;
    pthread_mutex_lock(&cache.lock);
    for (int i = 0; i < MESH_SUBMIT_CACHE_MAX && !hit; i++) {
        const cache_slot_t *c = &cache.slot[i];
        if (c->used && c->hash == hash && memcmp(&c->key, k, sizeof(*k)) == 0) {
            *out = c->verdict;
            /* the same policy's bytes, perhaps at another address */
            out->entry = c->entry < 0 ? NULL : &pol->controller.partitions[c->entry];
            out->cached = hit = 1;
        }
    }
    pthread_mutex_unlock(&cache.lock);
    return hit;
}

/* Keep verdict v for key k, in place of the oldest. */
static void cache_keep(const mesh_policy_t *pol, const cache_key_t *k, uint64_t hash,
                       const mesh_submit_t *v)
{
    pthread_mutex_lock(&cache.lock);
    cache_slot_t *c = &cache.slot[cache.next];
    cache.next = (cache.next + 1) % MESH_SUBMIT_CACHE_MAX;
    c->used = 1;
    c->hash = hash;
    c->key = *k;
    c->verdict = *v;
    c->entry = v->entry ? (int)(v->entry - pol->controller.partitions) : -1;
    pthread_mutex_unlock(&cache.lock);
}

/* A submission's budget of `work` units, its advice's share within it. */
static mesh_work_t budget_of(long work)
{
    return (mesh_work_t){work, 0, 0, work / MESH_SUBMIT_ADVICE_SHARE, 0};
}

mesh_verdict_t mesh_submit_judge(const mesh_policy_t *pol, const char *partitions,
                                 const mesh_model_t *m, const mesh_layout_t *pins,
                                 const mesh_step_t *s, mesh_submit_t *out)
{
    mesh_work_t w = budget_of(MESH_SUBMIT_WORK);
    mesh_work_t *was = mesh_work_use(&w);
    judge_fit(pol, partitions, m, pins, s, out);
    mesh_work_use(was);
    out->work = w.spent;
    return out->verdict;
}

/* What a judgement that its user's spent share cut short adds: to the
 * note of a job let through (all a front end shows of it), else to the
 * message of the refusal or warning. */
static void share_spent(mesh_submit_t *out, long work)
{
    char line[256];
    snprintf(line, sizeof(line),
             "(your recent submissions have spent your share of the controller's work, so this "
             "one was judged within %ld units: leave a second between costly submissions, or "
             "run meshplan plan to judge it in full)",
             work);
    if (out->verdict == MESH_VERDICT_RUN) {
        add_note(out, "%s", line);
        return;
    }
    size_t n = strlen(out->msg);
    snprintf(out->msg + n, sizeof(out->msg) - n, "%s%s", n ? "\n" : "", line);
}

/* The kept verdict of the same submission under budget `work` (`shared`:
 * the floor of a user's share) into *out, and 1; 0 if none (*k and *hash
 * then its key, *keep whether it may be kept). */
static int kept(long work, int shared, const mesh_policy_t *pol, const char *partitions,
                const mesh_model_t *m, const mesh_layout_t *pins, const mesh_step_t *s,
                const mesh_submit_ask_t *ask, cache_key_t *k, uint64_t *hash, int *keep,
                mesh_submit_t *out)
{
    *hash = 0;
    *keep = cache_key(pol, partitions, m, pins, s, ask, k) == 0;
    if (!*keep)
        return 0;
    k->work = work;
    k->shared = shared;
    *hash = hash_bytes(MESH_FNV_OFFSET, k, sizeof(*k));
    return cache_find(pol, k, *hash, out);
}

/* mesh_submit_decide_within; `shared`: its budget is the floor of a user's
 * share, which a judgement cut short says, and a verdict kept from a whole
 * judgement answers before it. */
static int decide_within(long work, int shared, const mesh_policy_t *pol, const char *partitions,
                         const mesh_model_t *m, const mesh_layout_t *pins, const mesh_step_t *s,
                         const mesh_submit_ask_t *ask, mesh_submit_t *out)
{
    cache_key_t k;
    uint64_t hash;
    int keep;
    if (shared &&
        kept(MESH_SUBMIT_WORK, 0, pol, partitions, m, pins, s, ask, &k, &hash, &keep, out))
        return out->verdict;
    if (kept(work, shared, pol, partitions, m, pins, s, ask, &k, &hash, &keep, out))
        return out->verdict;
    mesh_work_t w = budget_of(work);
    mesh_work_t *was = mesh_work_use(&w);
    decide(pol, partitions, m, pins, s, ask, out);
    mesh_work_use(was);
    out->work = w.spent;
    if (shared && (w.stopped || w.cut))
        share_spent(out, work);
    if (keep)
        cache_keep(pol, &k, hash, out);
    return out->verdict;
}

int mesh_submit_decide_within(long work, const mesh_policy_t *pol, const char *partitions,
                              const mesh_model_t *m, const mesh_layout_t *pins,
                              const mesh_step_t *s, const mesh_submit_ask_t *ask,
                              mesh_submit_t *out)
{
    return decide_within(work, 0, pol, partitions, m, pins, s, ask, out);
}

mesh_verdict_t mesh_submit_decide(const mesh_policy_t *pol, const char *partitions,
                                  const mesh_model_t *m, const mesh_layout_t *pins,
                                  const mesh_step_t *s, const mesh_submit_ask_t *ask,
                                  mesh_submit_t *out)
{
    return (mesh_verdict_t)decide_within(MESH_SUBMIT_WORK, 0, pol, partitions, m, pins, s, ask,
                                         out);
}

/* ---- each user's share of the controller's work ---- */

typedef struct share {
    int used;
    unsigned uid;
    double units; /* what the user holds, as of `at` */
    double at;    /* when units was last brought up to date (seconds) */
} share_t;

static struct {
    pthread_mutex_t lock;
    share_t user[MESH_SUBMIT_SHARE_USERS];
} shares = {PTHREAD_MUTEX_INITIALIZER, {{0}}};

/* uid's share, refilled up to `now`; a user not kept takes the place of the
 * one seen longest ago, with a whole share.  Under shares.lock. */
static share_t *share_of(unsigned uid, double now)
{
    share_t *u = NULL, *old = &shares.user[0];
    for (int i = 0; i < MESH_SUBMIT_SHARE_USERS && !u; i++) {
        share_t *e = &shares.user[i];
        if (e->used && e->uid == uid)
            u = e;
        else if (old->used && (!e->used || e->at < old->at))
            old = e;
    }
    if (!u) {
        u = old;
        *u = (share_t){1, uid, MESH_SUBMIT_SHARE_BURST, now};
    }
    double since = now - u->at; /* a clock gone back, or not a number: no refill */
    if (since > 0) {
        u->units += since * MESH_SUBMIT_SHARE_RATE;
        if (u->units > MESH_SUBMIT_SHARE_BURST)
            u->units = MESH_SUBMIT_SHARE_BURST;
        u->at = now;
    }
    return u;
}

mesh_verdict_t mesh_submit_decide_for(unsigned uid, double now, const mesh_policy_t *pol,
                                      const char *partitions, const mesh_model_t *m,
                                      const mesh_layout_t *pins, const mesh_step_t *s,
                                      const mesh_submit_ask_t *ask, mesh_submit_t *out)
{
    /* (not held while judging: the same user's submissions judged at once
     * on several threads, as 25.11 may, each see the share before the
     * others are charged, one whole budget more at most per thread) */
    if (!isfinite(now)) /* from a caller's broken clock: no refill, and a time to order by */
        now = 0;
    pthread_mutex_lock(&shares.lock);
    int whole = share_of(uid, now)->units >= MESH_SUBMIT_WORK;
    pthread_mutex_unlock(&shares.lock);
    long work = whole ? MESH_SUBMIT_WORK : MESH_SUBMIT_SHARE_FLOOR;
    decide_within(work, !whole, pol, partitions, m, pins, s, ask, out);
    if (!out->cached) {
        pthread_mutex_lock(&shares.lock);
        share_t *u = share_of(uid, now);
        u->units = u->units > out->work ? u->units - (double)out->work : 0;
        pthread_mutex_unlock(&shares.lock);
    }
    return out->verdict;
}

void mesh_submit_cache_clear(void)
{
    pthread_mutex_lock(&cache.lock);
    for (int i = 0; i < MESH_SUBMIT_CACHE_MAX; i++)
        cache.slot[i].used = 0;
    cache.next = 0;
    pthread_mutex_unlock(&cache.lock);
    pthread_mutex_lock(&shares.lock);
    memset(shares.user, 0, sizeof(shares.user));
    pthread_mutex_unlock(&shares.lock);
}
