/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * job_submit/meshplan: the controller's half of meshplan.
 *
 * sbatch, salloc and srun record the job's resolved model in its control
 * environment (MESHPLAN_REQUEST, lib/meshplan/request.h).  Here slurmctld
 * plans it for the nodes, tasks and GPUs the job asks for, on the GPU the
 * policy gives its partition, and per `enforce` refuses the job before it
 * is queued, warns, or stays silent.  meshplan.so still checks every step on
 * its nodes' real topology: this is the early half, which no client-side
 * setting can skip.
 *
 * slurmctld calls job_submit under its job locks, read locks in Slurm 25.11
 * (src/interfaces/job_submit.c, job_submit_g_submit), so several RPC threads
 * may judge at once: each judges with its own copy of the policy, taken
 * under policy_lock.  This plans in
 * process (a first-fit search for a job that fits, a tenth of a millisecond;
 * the whole plan only to explain a refusal; never more than the library's
 * work budget, MESH_SUBMIT_WORK, and less once the submitting user's share
 * of it is spent, MESH_SUBMIT_SHARE_FLOOR; a repeated submission from the
 * library's verdict cache), never forks or blocks, rereads
 * the policy when its file changes, and never fails in a way that could take
 * slurmctld down.  Built on Slurm's public headers only.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/spank.h> /* slurm_info() and friends, exported by slurmctld */

#include "meshplan.h"

const char plugin_name[] = "meshplan: refuse jobs whose model cannot fit, at submission";
const char plugin_type[] = "job_submit/meshplan";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/* slurmctld frees *err_msg with xfree(): it must come from Slurm's xmalloc */
extern char *slurm_xstrdup(const char *str);

/* What slurmctld looks up (src/slurmctld/job_submit.c). */
int init(void);
int fini(void);
int job_submit(job_desc_msg_t *job_desc, uint32_t submit_uid, char **err_msg);
int job_modify(job_desc_msg_t *job_desc, void *job_ptr, uint32_t submit_uid, char **err_msg);

#ifndef MESH_JOB_SUBMIT_POLICY
#define MESH_JOB_SUBMIT_POLICY "/etc/slurm/meshplan.yaml"
#endif

static mesh_policy_t policy;
static char policy_error[MESH_ERROR_MAX]; /* set when the policy could not be read */
static char policy_path[1024];
/* the file as last read (all 0: none); its size and inode too, since a
 * coarse clock can give two quick edits one mtime */
static struct stat policy_stat;
static int have_policy; /* policy holds a file's contents */
static int fail_closed; /* with policy_error: refuse meshplan jobs */
/* Held to reread the policy and to copy it (current_policy), never while
 * judging. */
static pthread_mutex_t policy_lock = PTHREAD_MUTEX_INITIALIZER;

/* (Re)read the policy; the defaults when there is no file.  What it logs
 * says which meshplan judges: after an upgrade, the admin sees whether
 * slurmctld has loaded the new one. */
static void load_policy(void)
{
    struct stat st;
    mesh_error_t err;
    mesh_policy_t fresh;
    policy_error[0] = '\0';
    memset(&policy_stat, 0, sizeof(policy_stat));
    if (stat(policy_path, &st) < 0) {
        mesh_policy_init(&policy);
        have_policy = 0;
        slurm_info("job_submit/meshplan %s: no policy at %s: judging with the defaults",
                   mesh_version(), policy_path);
        return;
    }
    policy_stat = st;
    mesh_policy_init(&fresh);
    if (mesh_policy_load(&fresh, policy_path, &err) < 0) {
        /* a broken policy must not stop slurmctld, nor open the gates an
         * admin closed: what to do follows on_submit_error, from the last
         * good policy or as far as this one was read */
        snprintf(policy_error, sizeof(policy_error), "%s", err.msg);
        fail_closed = fresh.controller.submit_fail_closed ||
                      (have_policy && policy.controller.submit_fail_closed);
        slurm_error("job_submit/meshplan %s: %s: jobs are %s until it is fixed", mesh_version(),
                    err.msg,
                    fail_closed ? "refused (on_submit_error=reject)" : "let through unjudged");
        return;
    }
    policy = fresh;
    have_policy = 1;
    slurm_info("job_submit/meshplan %s: policy %s: enforce=%s, %d partition(s)", mesh_version(),
               policy_path, mesh_enforce_name(policy.enforce), policy.controller.n_partitions);
}

/* An edited policy takes effect at the next submission: one stat() each. */
static void refresh_policy(void)
{
    struct stat st;
    int exists = stat(policy_path, &st) == 0;
    int had = policy_stat.st_ino != 0;
    if (exists != had ||
        (exists && (st.st_mtim.tv_sec != policy_stat.st_mtim.tv_sec ||
                    st.st_mtim.tv_nsec != policy_stat.st_mtim.tv_nsec ||
                    st.st_size != policy_stat.st_size || st.st_ino != policy_stat.st_ino)))
        load_policy();
}

/* The policy to judge with, reread first if its file changed, into *pol:
 * 0; or -1 with why it is broken in why[len] and *closed set when
 * on_submit_error=reject.  Each submission judges with its own copy, so
 * that a reread in another thread never changes it under the judging. */
static int current_policy(mesh_policy_t *pol, char *why, size_t len, int *closed)
{
    pthread_mutex_lock(&policy_lock);
    refresh_policy();
    int ok = !policy_error[0];
    if (ok)
        *pol = policy;
    else
        snprintf(why, len, "%s", policy_error);
    *closed = fail_closed;
    pthread_mutex_unlock(&policy_lock);
    return ok ? 0 : -1;
}

int init(void)
{
    const char *path = getenv(MESH_POLICY_ENV);
    snprintf(policy_path, sizeof(policy_path), "%s", path ? path : MESH_JOB_SUBMIT_POLICY);
    load_policy();
    return SLURM_SUCCESS;
}

int fini(void)
{
    return SLURM_SUCCESS;
}

/* The value of NAME in the job's control environment, where sbatch,
 * salloc and srun record what meshplan's options ask; NULL when the job has
 * none.  *bad: it is max bytes or longer. */
static const char *find_env(const job_desc_msg_t *d, const char *name, size_t max, int *bad)
{
    size_t n = strlen(name);
    *bad = 0;
    if (!d->spank_job_env)
        return NULL;
    for (uint32_t i = 0; i < d->spank_job_env_size && i < 4096; i++) {
        const char *e = d->spank_job_env[i];
        if (!e || strncmp(e, name, n) != 0 || e[n] != '=')
            continue;
        if (strnlen(e + n + 1, max) >= max)
            *bad = 1;
        return e + n + 1;
    }
    return NULL;
}

/* The request sbatch/salloc/srun recorded; NULL when the job has none. */
static const char *find_request(const job_desc_msg_t *d, int *bad)
{
    return find_env(d, MESH_REQUEST_ENV, MESH_REQUEST_MAX, bad);
}

/* What the job asks for, as the library reads it: Slurm's "not given"
 * values (NO_VAL, 0) become 0, --mem-per-cpu says nothing per node. */
static mesh_job_counts_t job_counts(const job_desc_msg_t *d)
{
    mesh_job_counts_t c = {
        .nodes = d->min_nodes != NO_VAL ? (long)d->min_nodes : 0,
        .tasks = d->num_tasks != NO_VAL ? (long)d->num_tasks : 0,
        .tasks_per_node = d->ntasks_per_node != NO_VAL16 ? (long)d->ntasks_per_node : 0,
        .tres_per_node = d->tres_per_node,
        .tres_per_job = d->tres_per_job,
        .tres_per_task = d->tres_per_task,
        .tres_per_socket = d->tres_per_socket,
        /* --mem (megabytes per node), as the nodes read SLURM_MEM_PER_NODE */
        .mem_per_node = d->pn_min_memory != NO_VAL64 && !(d->pn_min_memory & MEM_PER_CPU)
                            ? (long)d->pn_min_memory
                            : 0,
    };
    return c;
}

/* The answer to the user: rc refuses the job with that Slurm error (the
 * last line sbatch/salloc/srun print), SLURM_SUCCESS lets it through with a
 * warning; the message goes back to the client either way. */
static int answer(int rc, char **err_msg, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int answer(int rc, char **err_msg, const char *fmt, ...)
{
    char msg[4 * MESH_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (err_msg && !*err_msg)
        *err_msg = slurm_xstrdup(msg);
    else /* another job_submit plugin spoke first: its message stays */
        slurm_info("job_submit/meshplan: %s", msg);
    return rc;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Now on slurmctld's local clock, as seconds since its 1970-01-01T00:00:
 * what a --mesh-size=by:DATE is read against (dates are local, as
 * sbatch --begin reads them). */
static long long local_now(void)
{
    time_t t = time(NULL);
    struct tm tm;
    return localtime_r(&t, &tm) ? (long long)t + tm.tm_gmtoff : (long long)t;
}

/* What the job asks of the controller beyond its shape: sizing (--mesh-size,
 * recorded by sbatch/salloc/srun) over its node range, and its time limit.
 * 0, or -1 with err set when it cannot be asked. */
static int what_is_asked(const job_desc_msg_t *d, mesh_submit_ask_t *ask, mesh_error_t *err)
{
    int bad;
    memset(ask, 0, sizeof(*ask));
    ask->nodes_lo = d->min_nodes != NO_VAL && d->min_nodes < (1u << 20) ? (int)d->min_nodes : 0;
    ask->nodes_hi = d->max_nodes != NO_VAL && d->max_nodes < (1u << 20) ? (int)d->max_nodes : 0;
    ask->time_limit = d->time_limit == NO_VAL     ? 0
                      : d->time_limit == INFINITE ? -1
                                                  : (long)d->time_limit;
    const char *goal = find_env(d, MESH_SIZE_ENV, MESH_SIZE_GOAL_MAX, &bad);
    if (!goal)
        return 0;
    if (bad)
        return mesh_error_set(err, "--mesh-size: use min, fastest, efficient or by:WHEN");
    if (mesh_size_aim_parse(goal, local_now(), &ask->aim, err) < 0)
        return mesh_error_prefix(err, "--mesh-size");
    ask->size = 1;
    int range = ask->nodes_hi && ask->nodes_hi != ask->nodes_lo;
    /* a total stays what it is when the count changes: only per-node
     * counts follow the count chosen */
    if (range && d->num_tasks != NO_VAL && d->num_tasks && d->ntasks_per_node == NO_VAL16)
        return mesh_error_set(err, "--mesh-size: give tasks per node (--ntasks-per-node), not "
                                   "a total (--ntasks), so that they follow the node count");
    if (range && d->tres_per_job && strstr(d->tres_per_job, "gpu"))
        return mesh_error_set(err, "--mesh-size: give GPUs per node (--gpus-per-node), not a "
                                   "total (--gpus), so that they follow the node count");
    return 0;
}

/* Carry out an accepted decision: the count sizing chose (and the tasks
 * that follow it), the time limit time_limit=set gives. */
static void apply(job_desc_msg_t *d, const mesh_submit_t *v, uint32_t uid)
{
    if (v->nodes > 0) {
        d->min_nodes = d->max_nodes = (uint32_t)v->nodes;
        if (d->num_tasks != NO_VAL && d->ntasks_per_node != NO_VAL16)
            d->num_tasks = (uint32_t)v->nodes * d->ntasks_per_node;
        slurm_info("job_submit/meshplan: uid %u: sized to %d nodes", uid, v->nodes);
    }
    if (v->time_limit > 0) {
        d->time_limit = (uint32_t)v->time_limit;
        slurm_info("job_submit/meshplan: uid %u: time limit set to %ld min (estimate %.0f s)", uid,
                   v->time_limit, v->estimate);
    }
}

/* Judge one job.  Anything wrong with what the user sent is refused (or
 * warned about) with the reason; meshplan's own failures follow
 * on_submit_error.  *work: the library's work units, *cached whether its
 * verdict was kept from before (left alone when it made none). */
static int judge(job_desc_msg_t *d, uint32_t uid, char **err_msg, long *work, int *cached)
{
    int bad;
    const char *req = find_request(d, &bad);
    if (!req)
        return SLURM_SUCCESS; /* not a meshplan job */
    mesh_policy_t pol;        /* this submission's copy */
    char broken[MESH_ERROR_MAX];
    int closed;
    if (current_policy(&pol, broken, sizeof(broken), &closed) < 0) {
        slurm_error("job_submit/meshplan: job of uid %u %s: %s", uid,
                    closed ? "refused" : "passes unjudged", broken);
        return closed ? answer(SLURM_ERROR, err_msg,
                               "meshplan: the site's meshplan policy is broken "
                               "(see slurmctld's log); ask the admins")
                      : SLURM_SUCCESS;
    }
    int sizing;
    /* enforce=off: nothing is judged, but a job that asks to be sized is */
    if (pol.enforce == MESH_ENFORCE_OFF && !find_env(d, MESH_SIZE_ENV, MESH_SIZE_GOAL_MAX, &sizing))
        return SLURM_SUCCESS;
    int reject = pol.enforce == MESH_ENFORCE_REJECT;
    mesh_model_t m;
    mesh_layout_t pins;
    mesh_error_t err;
    if (bad)
        return answer(SLURM_ERROR, err_msg,
                      "meshplan: %s is larger than %d bytes: submit with meshplan's "
                      "own sbatch/srun options",
                      MESH_REQUEST_ENV, MESH_REQUEST_MAX);
    if (req[0] != '0' + MESH_REQUEST_VERSION || req[1] != ';')
        /* another meshplan's format, as in a rolling upgrade: the nodes judge it */
        return answer(SLURM_SUCCESS, err_msg,
                      "meshplan: this controller reads request format %d, not the job's "
                      "(%.8s): not judged at submission",
                      MESH_REQUEST_VERSION, req);
    if (mesh_request_decode(req, &m, &pins, &err) < 0)
        return answer(SLURM_ERROR, err_msg,
                      "meshplan: %s (submit with meshplan's own --model option)", err.msg);
    mesh_submit_ask_t ask;
    if (what_is_asked(d, &ask, &err) < 0)
        return answer(SLURM_ERROR, err_msg, "meshplan: %s", err.msg);
    /* a ranged job at its low end (-N LO-HI's LO): the shape of each count */
    mesh_job_counts_t counts = job_counts(d);
    mesh_step_t s;
    int shaped = mesh_job_shape(&counts, &s, &err);
    if (shaped < 0)
        return answer(reject ? SLURM_ERROR : SLURM_SUCCESS, err_msg, "meshplan: %s", err.msg);
    if (shaped > 0)
        return SLURM_SUCCESS; /* GPUs per socket: the nodes know their sockets */
    /* the library's decision, which `meshplan plan --partition` shares,
     * within the user's share of the controller's work */
    mesh_submit_t v;
    mesh_submit_decide_for(uid, now_ms() / 1e3, &pol, d->partition, &m, &pins, &s, &ask, &v);
    *work = v.work;
    *cached = v.cached;
    if (v.verdict == MESH_VERDICT_RUN) {
        if (!v.judged)
            slurm_debug("job_submit/meshplan: uid %u: partition %s: %s: not judged", uid,
                        v.entry ? v.entry->name : "(not in the policy)", v.msg);
        apply(d, &v, uid);
        return v.note[0] ? answer(SLURM_SUCCESS, err_msg, "meshplan: %s", v.note) : SLURM_SUCCESS;
    }
    /* Slurm's own error for what was refused: its last line, under ours */
    static const int refusal[] = {[MESH_SUBMIT_FIT] = ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE,
                                  [MESH_SUBMIT_SIZE] = ESLURM_INVALID_NODE_COUNT,
                                  [MESH_SUBMIT_TIME] = ESLURM_INVALID_TIME_LIMIT};
    if (v.verdict == MESH_VERDICT_REFUSE)
        return answer(refusal[v.about], err_msg, "meshplan: %s", v.msg);
    return answer(SLURM_SUCCESS, err_msg, "meshplan: %s\n(enforce=warn: queued anyway)", v.msg);
}

int job_submit(job_desc_msg_t *job_desc, uint32_t submit_uid, char **err_msg)
{
    double t0 = now_ms();
    long work = 0;
    int cached = 0;
    int rc = judge(job_desc, submit_uid, err_msg, &work, &cached);
    slurm_debug("job_submit/meshplan: uid %u judged in %.3f ms: %s (%ld work units%s)", submit_uid,
                now_ms() - t0, rc == SLURM_SUCCESS ? "accepted" : "refused", work,
                cached ? ", kept from before" : "");
    return rc;
}

/* The job record is opaque to a plugin built on public headers: a change is
 * judged from what it carries, which is enough when it carries a new
 * request; other changes are left to meshplan.so at launch. */
int job_modify(job_desc_msg_t *job_desc, void *job_ptr, uint32_t submit_uid, char **err_msg)
{
    int bad;
    (void)job_ptr;
    if (!find_request(job_desc, &bad))
        return SLURM_SUCCESS;
    return job_submit(job_desc, submit_uid, err_msg);
}
