/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * job_submit/meshplan against the CLI: for the same model, nodes, GPUs and
 * policy, slurmctld's answer at submission and the CLI's (`meshplan env`,
 * the command that applies the policy's enforce=, and `meshplan plan`'s
 * exit status) are the same verdict in the same words.  Both come from
 * mesh_plan_verdict; this checks that each front end really goes through it
 * with the same allocation, and only adds its own prefix.  And for a
 * partition, `meshplan plan/check --partition` and the controller give the
 * same verdict in the same words over a table of specs, partitions and
 * allocations: both call mesh_submit_judge.
 *
 * The plugin is linked in with what slurmctld would give it: xstrdup and
 * the log functions, stubbed here.
 */
#include <math.h>
#include <pthread.h>
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/spank.h> /* the log functions' prototypes */
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

/* plugin/job_submit/job_submit.c, as slurmctld looks it up */
int init(void);
int fini(void);
int job_submit(job_desc_msg_t *job_desc, uint32_t submit_uid, char **err_msg);
int job_modify(job_desc_msg_t *job_desc, void *job_ptr, uint32_t submit_uid, char **err_msg);

char *slurm_xstrdup(const char *str);
char *slurm_xstrdup(const char *str)
{
    return strdup(str);
}

/* what the plugin logged last, at info or error level; and how many
 * times, and in what words last, it logged reading the policy (each
 * read's line names the meshplan that reads it, no other line does) */
static char logged[2048];
static int policy_reads;
static char policy_read[2048];

static void log_line(const char *fmt, va_list ap)
{
    vsnprintf(logged, sizeof(logged), fmt, ap);
    if (!strncmp(logged, "job_submit/meshplan " MESHPLAN_VERSION_STRING ": ",
                 strlen("job_submit/meshplan " MESHPLAN_VERSION_STRING ": "))) {
        policy_reads++;
        snprintf(policy_read, sizeof(policy_read), "%s", logged);
    }
}

void slurm_info(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_line(fmt, ap);
    va_end(ap);
}

void slurm_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_line(fmt, ap);
    va_end(ap);
}

/* what the plugin logged last at debug level: its judgement's line; and
 * every debug line of the last submission, one after another */
static char debugged[2048], debug_lines[8192];

void slurm_debug(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(debugged, sizeof(debugged), fmt, ap);
    va_end(ap);
    size_t n = strlen(debug_lines);
    snprintf(debug_lines + n, sizeof(debug_lines) - n, "%s\n", debugged);
}

static double monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The debug line of the last judgement, which the hostile-load benchmark
 * reads its times from: the verdict, and the milliseconds it took, within
 * the `within` ms the caller saw it take. */
static void assert_judged(const char *verdict, double within)
{
    double ms = -1;
    char said[16] = "";
    long work = -1;
    if (sscanf(debugged, "job_submit/meshplan: uid 1000 judged in %lf ms: %15[a-z] (%ld work units",
               &ms, said, &work) != 3)
        fail_msg("the judgement's debug line: \"%s\"", debugged);
    assert_string_equal(said, verdict);
    /* judged, so never said to be let through unjudged */
    if (strstr(debug_lines, "not judged"))
        fail_msg("a judged job's debug lines: \"%s\"", debug_lines);
    /* timed on the monotonic clock: never nothing, never more than seen */
    if (ms <= 0 || ms > within)
        fail_msg("judged in %g ms, logged; %g ms seen", ms, within);
    assert_true(work > 0);
}

static char policy_path[] = "/tmp/meshplan-policy-XXXXXX";

/* The policy file's text as an admin writes it, read at the next
 * submission (no init(): slurmctld does not restart for an edit). */
static void edit_policy(const char *text)
{
    FILE *f = fopen(policy_path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* The site's policy, read by both: the controller from MESHPLAN_POLICY,
 * the CLI from --policy; `more` follows the enforce line. */
static void write_policy_with(const char *enforce, const char *more)
{
    FILE *f = fopen(policy_path, "w");
    assert_non_null(f);
    fprintf(f, "gpu: H100-SXM\nenforce: %s\n%s", enforce, more);
    assert_int_equal(fclose(f), 0);
    setenv("MESHPLAN_POLICY", policy_path, 1);
    assert_int_equal(init(), SLURM_SUCCESS); /* reads it afresh */
}

static void write_policy(const char *enforce)
{
    write_policy_with(enforce, "");
}

/* The controller's answer to `sbatch -N NODES --gpus=GPUS --model=MODEL
 * [--mesh=MESH] [-p PARTITION]`: its return code, and the message it hands
 * back (NULL: none). */
/* The job's --mem as slurmctld holds it (pn_min_memory): megabytes per
 * node, or per CPU with MEM_PER_CPU; NO_VAL64 when not given. */
static uint64_t job_mem = NO_VAL64;
/* 1: the job is an update (scontrol update, job_modify), not a submission */
static int modifying;

/* A test's teardown: the next job is a plain submission without --mem,
 * whether the test that set otherwise passed or failed half-way. */
static int plain_job(void **state)
{
    (void)state;
    job_mem = NO_VAL64;
    modifying = 0;
    return 0;
}

/* The request sbatch --model=MODEL [--mesh=MESH] records, into req. */
static const char *encoded(const char *model, const char *mesh, char *req)
{
    mesh_model_t m = test_preset(model);
    mesh_layout_t pins = test_mesh(mesh ? mesh : "auto");
    mesh_error_t err;
    if (mesh_request_encode(&m, &pins, req, MESH_REQUEST_MAX, &err) < 0)
        fail_msg("%s", err.msg);
    return req;
}

/* A job as sbatch sends it: meshplan's request, --mesh-size's goal (NULL:
 * not given), the nodes (lo-hi; 0: not given), tasks per node (0: not
 * given), the GPUs asked per job, node or socket (NULL: not), the
 * partition (NULL: none) and the time limit (minutes, NO_VAL: none; 0 as
 * a job_desc_msg_t left zeroed has it); the memory is job_mem. */
typedef struct job_ask {
    const char *request, *goal;
    int lo, hi, tpn;
    const char *per_job, *per_node, *per_socket, *partition;
    uint32_t time_limit;
} job_ask_t;

/* Job a into *d, submitted (or updated, when `modifying`): the
 * controller's return code; *msg holds what it hands back (NULL: nothing;
 * what another plugin said first where the caller set it), *d the job as
 * the controller leaves it, to be submitted again.  The environment the
 * job carries is the thread's own (threads__*) until its next job. */
static int submit_job(const job_ask_t *a, job_desc_msg_t *d, char **msg)
{
    static _Thread_local char env[MESH_REQUEST_MAX + 64], size[64];
    static _Thread_local char *spank_env[2];
    snprintf(env, sizeof(env), "%s=%s", MESH_REQUEST_ENV, a->request);
    snprintf(size, sizeof(size), "%s=%s", MESH_SIZE_ENV, a->goal ? a->goal : "");
    spank_env[0] = env;
    spank_env[1] = size;
    memset(d, 0, sizeof(*d)); /* what slurm_init_job_desc_msg leaves unset */
    d->min_nodes = a->lo ? (uint32_t)a->lo : NO_VAL;
    d->max_nodes = a->hi ? (uint32_t)a->hi : NO_VAL;
    d->num_tasks = NO_VAL;
    d->ntasks_per_node = a->tpn ? (uint16_t)a->tpn : NO_VAL16;
    d->pn_min_memory = job_mem;
    d->time_limit = a->time_limit;
    d->tres_per_job = (char *)a->per_job;
    d->tres_per_node = (char *)a->per_node;
    d->tres_per_socket = (char *)a->per_socket;
    d->partition = (char *)a->partition;
    d->spank_job_env = spank_env;
    d->spank_job_env_size = a->goal ? 2 : 1;
    debug_lines[0] = '\0';
    return modifying ? job_modify(d, NULL, 1000, msg) : job_submit(d, 1000, msg);
}

/* A job carrying `request` as meshplan's request on `nodes` nodes with
 * `gpus` in tres_per_job, `socket` in tres_per_socket, `tpn` tasks per
 * node (0: not given) and `partition`, submitted (or updated, when
 * `modifying`); *msg holds what another plugin said first (NULL: nothing). */
static int submit_raw(const char *request, int nodes, const char *gpus, const char *socket, int tpn,
                      const char *partition, char **msg)
{
    job_ask_t a = {.request = request,
                   .lo = nodes,
                   .tpn = tpn,
                   .per_job = gpus,
                   .per_socket = socket,
                   .partition = partition};
    job_desc_msg_t d;
    return submit_job(&a, &d, msg);
}

static int controller_in(const char *model, const char *mesh, int nodes, const char *gpus,
                         const char *partition, char **msg)
{
    char req[MESH_REQUEST_MAX];
    *msg = NULL;
    return submit_raw(encoded(model, mesh, req), nodes, gpus, NULL, 0, partition, msg);
}

static int controller(const char *model, int nodes, const char *gpus, char **msg)
{
    return controller_in(model, NULL, nodes, gpus, NULL, msg);
}

/* A shell command line's output into out[len], and its exit status. */
static int shell(const char *line, char *out, size_t len)
{
    FILE *p = popen(line, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, len - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The CLI's output for a command (stderr, or stdout with to_stdout) and
 * its exit status. */
static int cli(const char *cmd, const char *model, int nodes, int gpn, int to_stdout, char *out,
               size_t len)
{
    char line[1024];
    snprintf(line, sizeof(line),
             "'%s' %s --model %s --nodes %d --gpus-per-node %d --gpu H100-SXM --policy '%s' %s",
             getenv("MESHPLAN"), cmd, model, nodes, gpn, policy_path,
             to_stdout ? "2>/dev/null" : "2>&1 >/dev/null");
    return shell(line, out, len);
}

/* The message of a front end, its own prefixes and suffix taken off:
 * lines joined by '\n'. */
static void strip(char *s, const char *const *prefixes, const char *suffix)
{
    char out[8192] = "";
    size_t n = 0;
    if (suffix && strlen(s) >= strlen(suffix) && !strcmp(s + strlen(s) - strlen(suffix), suffix))
        s[strlen(s) - strlen(suffix)] = '\0';
    for (char *save, *l = strtok_r(s, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        for (int i = 0; prefixes[i]; i++)
            if (!strncmp(l, prefixes[i], strlen(prefixes[i]))) {
                l += strlen(prefixes[i]);
                break;
            }
        n += (size_t)snprintf(out + n, sizeof(out) - n, "%s%s", n ? "\n" : "", l);
    }
    strcpy(s, out);
}

/* What the library says of the plan the CLI makes (mesh_policy_alloc with
 * --gpu, mesh_plan_create), under enforce. */
static mesh_verdict_t library(const char *model, int nodes, int gpn, mesh_enforce_t enforce,
                              char *msg, size_t len)
{
    mesh_model_t m = test_preset(model);
    mesh_alloc_t a = test_alloc("H100-SXM", nodes, gpn);
    mesh_layout_t pins;
    mesh_policy_t pol;
    mesh_error_t err;
    mesh_layout_unpin(&pins);
    mesh_policy_init(&pol);
    mesh_plan_t *p = mesh_plan_create(&m, &a, &pins, &pol.assume, &err);
    if (!p)
        fail_msg("%s", err.msg);
    mesh_verdict_t v = mesh_plan_verdict(p, enforce, msg, len);
    mesh_plan_destroy(p);
    return v;
}

static void fits__both_run_it_silently(void **state)
{
    char out[8192], lib[4096];
    char *msg;
    write_policy("reject");
    /* llama3-8b on 2 x 8 H100: --gpus=16 is 8 a node */
    double t0 = monotonic_ms();
    assert_int_equal(controller("llama3-8b", 2, "gres/gpu:16", &msg), SLURM_SUCCESS);
    assert_judged("accepted", monotonic_ms() - t0);
    assert_null(msg);
    assert_int_equal(cli("env", "llama3-8b", 2, 8, 0, out, sizeof(out)), 0);
    assert_string_equal(out, "");
    assert_int_equal(cli("plan", "llama3-8b", 2, 8, 1, out, sizeof(out)), 0);
    assert_int_equal(library("llama3-8b", 2, 8, MESH_ENFORCE_REJECT, lib, sizeof(lib)),
                     MESH_VERDICT_RUN);
}

/* scontrol reconfigure: slurmctld calls fini() and then init() again,
 * which reads where the policy is afresh (MESHPLAN_POLICY, read by init
 * alone); the plugin's state is static, so fini has nothing to free.  The
 * next submission is judged under the policy init found. */
static void reconfigure__fini_then_init_judges_again(void **state)
{
    (void)state;
    char *msg, other[] = "/tmp/meshplan-policy2-XXXXXX";
    write_policy("reject");
    assert_int_equal(controller("llama3.1-405b", 2, "gres/gpu:16", &msg),
                     ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE);
    free(msg);
    int fd = mkstemp(other);
    assert_true(fd >= 0);
    static const char warn[] = "gpu: H100-SXM\nenforce: warn\n";
    assert_int_equal(write(fd, warn, sizeof(warn) - 1), (ssize_t)(sizeof(warn) - 1));
    close(fd);
    assert_int_equal(fini(), SLURM_SUCCESS);
    setenv("MESHPLAN_POLICY", other, 1);
    assert_int_equal(init(), SLURM_SUCCESS);
    /* the other file's enforce=warn: warned, not refused */
    assert_int_equal(controller("llama3.1-405b", 2, "gres/gpu:16", &msg), SLURM_SUCCESS);
    assert_non_null(msg);
    free(msg);
    assert_int_equal(controller("llama3-8b", 2, "gres/gpu:16", &msg), SLURM_SUCCESS);
    assert_null(msg);
    unlink(other);
    write_policy("reject"); /* the suite's own file again */
}

/* One model that does not fit, under enforce=ENFORCE: the controller's
 * message, the CLI's and the library's, stripped, are one. */
static void does_not_fit(const char *enforce, mesh_enforce_t e, int controller_rc,
                         const char *cli_prefix, int cli_rc, mesh_verdict_t verdict)
{
    char out[8192], lib[4096];
    char *msg;
    write_policy(enforce);
    /* llama3.1-405b on 2 x 8 H100 (it needs 14 nodes) */
    double t0 = monotonic_ms();
    assert_int_equal(controller("llama3.1-405b", 2, "gres/gpu:16", &msg), controller_rc);
    assert_judged(controller_rc == SLURM_SUCCESS ? "accepted" : "refused", monotonic_ms() - t0);
    assert_non_null(msg);
    assert_int_equal(cli("env", "llama3.1-405b", 2, 8, 0, out, sizeof(out)), cli_rc);
    assert_int_equal(library("llama3.1-405b", 2, 8, e, lib, sizeof(lib)), verdict);
    const char *head = "meshplan: llama3.1-405b does not fit on 2 x 8 H100-SXM GPUs: ";
    assert_true(!strncmp(msg, head, strlen(head)));
    assert_true(!strncmp(out, cli_prefix, strlen(cli_prefix)));
    strip(msg, (const char *[]){"meshplan: ", NULL}, "\n(enforce=warn: queued anyway)");
    strip(out, (const char *[]){cli_prefix, NULL}, NULL);
    assert_string_equal(msg, out);
    assert_string_equal(msg, lib);
    assert_non_null(strstr(msg, "\nwhat would fit: ")); /* the advice, line by line, in both */
    /* and `meshplan plan` says it does not fit, whatever enforce says */
    assert_int_equal(cli("plan", "llama3.1-405b", 2, 8, 1, out, sizeof(out)), 1);
    free(msg);
}

static void warn__both_run_it_and_say_why(void **state)
{
    does_not_fit("warn", MESH_ENFORCE_WARN, SLURM_SUCCESS, "meshplan: warning: ", 0,
                 MESH_VERDICT_WARN);
}

static void reject__both_refuse_it_and_say_why(void **state)
{
    does_not_fit("reject", MESH_ENFORCE_REJECT, ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE,
                 "meshplan: error: ", 1, MESH_VERDICT_REFUSE);
}

/* An update of a job (scontrol update) that carries meshplan's request is
 * judged as its submission was, in the same words; one without it (a new
 * time limit, a hold) is left alone, unjudged. */
static void modify__judged_as_submitted(void **state)
{
    (void)state;
    char *submitted, *modified;
    write_policy("reject");
    int rc = controller("llama3.1-405b", 2, "gres/gpu:16", &submitted);
    modifying = 1;
    assert_int_equal(controller("llama3.1-405b", 2, "gres/gpu:16", &modified), rc);
    assert_int_equal(rc, ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE);
    assert_non_null(modified);
    assert_string_equal(modified, submitted);
    free(modified);
    assert_int_equal(controller("llama3-8b", 2, "gres/gpu:16", &modified), SLURM_SUCCESS);
    assert_null(modified);
    modifying = 0;
    free(submitted);
    /* no request: untouched, whatever else the update says */
    job_desc_msg_t d;
    memset(&d, 0, sizeof(d));
    d.min_nodes = 2;
    d.time_limit = 60;
    d.tres_per_job = (char *)"gres/gpu:16";
    job_desc_msg_t was = d;
    char *msg = NULL;
    assert_int_equal(job_modify(&d, NULL, 1000, &msg), SLURM_SUCCESS);
    assert_null(msg);
    assert_memory_equal(&d, &was, sizeof(d));
}

/* A job without meshplan's request is not judged: accepted at once, and
 * its debug line says no work was spent on it (the hostile-load benchmark
 * adds these up). */
static void plain__not_judged_and_said_so(void **state)
{
    (void)state;
    write_policy("reject");
    job_desc_msg_t d;
    memset(&d, 0, sizeof(d));
    d.min_nodes = 2;
    d.tres_per_job = (char *)"gres/gpu:16";
    char *msg = NULL;
    debugged[0] = '\0';
    assert_int_equal(job_submit(&d, 1000, &msg), SLURM_SUCCESS);
    assert_null(msg);
    char said[16] = "";
    double ms = -1;
    long work = -1;
    if (sscanf(debugged, "job_submit/meshplan: uid 1000 judged in %lf ms: %15[a-z] (%ld work units",
               &ms, said, &work) != 3)
        fail_msg("the debug line: \"%s\"", debugged);
    assert_string_equal(said, "accepted");
    assert_int_equal(work, 0);
}

/* submit_raw on one node, `request` NULL: llama3-8b's. */
static int submit_request(const char *request, const char *gpus, const char *socket, int tpn,
                          char **msg)
{
    char req[MESH_REQUEST_MAX];
    return submit_raw(request ? request : encoded("llama3-8b", NULL, req), 1, gpus, socket, tpn,
                      NULL, msg);
}

/* What sbatch recorded, read before anything is planned: a request too
 * long, of another meshplan's format, or unreadable; a job shaped unlike
 * meshplan's plans; GPUs only per socket; enforce=off. Each answered in
 * one line that says what to do, none planned, none a crash. */
static void request__read_before_planning(void **state)
{
    (void)state;
    char *msg = NULL, big[MESH_REQUEST_MAX + 8], want[256];
    write_policy("reject");
    /* too long: refused, naming the variable and the way to submit */
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    assert_int_equal(submit_request(big, "gres/gpu:8", NULL, 0, &msg), SLURM_ERROR);
    snprintf(want, sizeof(want),
             "meshplan: %s is larger than %d bytes: submit with meshplan's own sbatch/srun "
             "options",
             MESH_REQUEST_ENV, MESH_REQUEST_MAX);
    assert_string_equal(msg, want);
    free(msg);
    /* another meshplan's format (a rolling upgrade): let through, said so */
    msg = NULL;
    assert_int_equal(submit_request("9;tp=8", "gres/gpu:8", NULL, 0, &msg), SLURM_SUCCESS);
    snprintf(want, sizeof(want),
             "meshplan: this controller reads request format %d, not the job's (9;tp=8): not "
             "judged at submission",
             MESH_REQUEST_VERSION);
    assert_string_equal(msg, want);
    free(msg);
    msg = NULL;
    assert_int_equal(submit_request("", "gres/gpu:8", NULL, 0, &msg), SLURM_SUCCESS);
    assert_non_null(strstr(msg, "not the job's (): not judged"));
    free(msg);
    /* this format, but not a request: refused, saying how to submit */
    char bad[32];
    snprintf(bad, sizeof(bad), "%d;garbage", MESH_REQUEST_VERSION);
    msg = NULL;
    assert_int_equal(submit_request(bad, "gres/gpu:8", NULL, 0, &msg), SLURM_ERROR);
    assert_non_null(msg);
    assert_true(strncmp(msg, "meshplan: ", 10) == 0);
    assert_non_null(strstr(msg, " (submit with meshplan's own --model option)"));
    free(msg);
    /* 4 tasks on 8 GPUs a node: refused under reject, warned under warn */
    msg = NULL;
    assert_int_equal(submit_request(NULL, "gres/gpu:8", NULL, 4, &msg), SLURM_ERROR);
    assert_string_equal(msg, "meshplan: 4 tasks per node but 8 GPUs per node: meshplan plans one "
                             "GPU per task (or one torchrun per node)");
    free(msg);
    /* no GPUs at all */
    msg = NULL;
    assert_int_equal(submit_request(NULL, NULL, NULL, 0, &msg), SLURM_ERROR);
    assert_non_null(strstr(msg, "the job requests no GPUs (give --gpus-per-node=N)"));
    free(msg);
    /* GPUs per socket: left to the nodes, which know their sockets */
    msg = NULL;
    assert_int_equal(submit_request(NULL, NULL, "gres/gpu:4", 0, &msg), SLURM_SUCCESS);
    assert_null(msg);
    write_policy("warn");
    msg = NULL;
    assert_int_equal(submit_request(NULL, "gres/gpu:8", NULL, 4, &msg), SLURM_SUCCESS);
    assert_non_null(strstr(msg, "4 tasks per node but 8 GPUs per node"));
    free(msg);
    /* another plugin spoke first: its message stays, meshplan's is logged */
    char *first = strdup("another plugin's word");
    msg = first;
    assert_int_equal(submit_request(NULL, "gres/gpu:8", NULL, 4, &msg), SLURM_SUCCESS);
    assert_ptr_equal(msg, first);
    assert_string_equal(msg, "another plugin's word");
    free(first);
    assert_non_null(strstr(logged, "job_submit/meshplan: meshplan: 4 tasks per node but 8 GPUs"));
    /* enforce=off: nothing judged, a 405B on one node included */
    write_policy("off");
    msg = NULL;
    assert_int_equal(controller("llama3.1-405b", 1, "gres/gpu:8", &msg), SLURM_SUCCESS);
    assert_null(msg);
    assert_int_equal(submit_request("9;tp=8", "gres/gpu:8", NULL, 0, &msg), SLURM_SUCCESS);
    assert_null(msg);
}

/* Every policy the controller (re)reads is logged with the meshplan that
 * reads it: after an upgrade, slurmctld's log says whether it runs the new
 * one. */
static void init__logs_which_meshplan_reads_the_policy(void **state)
{
    char want[256];
    write_policy("warn");
    snprintf(want, sizeof(want), "job_submit/meshplan %s: policy %s: enforce=warn",
             MESHPLAN_VERSION_STRING, policy_path);
    assert_non_null(strstr(logged, want));
    setenv("MESHPLAN_POLICY", "/nonexistent/meshplan.yaml", 1);
    assert_int_equal(init(), SLURM_SUCCESS);
    snprintf(want, sizeof(want), "job_submit/meshplan %s: no policy at /nonexistent/meshplan.yaml",
             MESHPLAN_VERSION_STRING);
    assert_non_null(strstr(logged, want));
    FILE *f = fopen(policy_path, "w");
    assert_non_null(f);
    fputs("enforce: maybe\n", f);
    assert_int_equal(fclose(f), 0);
    setenv("MESHPLAN_POLICY", policy_path, 1);
    assert_int_equal(init(), SLURM_SUCCESS);
    snprintf(want, sizeof(want), "job_submit/meshplan %s: %s:1: enforce:", MESHPLAN_VERSION_STRING,
             policy_path);
    assert_non_null(strstr(logged, want));
}

/* The policy is read when its file changes, not at every submission: an
 * unchanged one is read (and logged) once, whatever the number of jobs,
 * so that slurmctld's log says when the admin's policy changed rather
 * than repeating it for every job; an edit is read at the next
 * submission, once. */
static void policy_reads__once_per_edit(void **state)
{
    char *msg;
    write_policy("reject"); /* init() reads it */
    policy_reads = 0;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(controller("llama3-8b", 1, "gres/gpu:8", &msg), SLURM_SUCCESS);
        assert_null(msg);
    }
    assert_int_equal(policy_reads, 0);
    /* edited (its size changes too, so even a coarse clock tells) */
    edit_policy("gpu: H100-SXM\nenforce: warn\n");
    for (int i = 0; i < 3; i++) {
        assert_int_equal(controller("llama3.1-405b", 1, "gres/gpu:8", &msg), SLURM_SUCCESS);
        assert_non_null(msg);
        assert_non_null(strstr(msg, "(enforce=warn: queued anyway)"));
        free(msg);
    }
    assert_int_equal(policy_reads, 1);
    char want[2048];
    snprintf(want, sizeof(want), "job_submit/meshplan %s: policy %s: enforce=warn",
             MESHPLAN_VERSION_STRING, policy_path);
    assert_non_null(strstr(policy_read, want));
    /* removed: the defaults, not the last policy read, which know no GPU:
     * let through unjudged (never warned of as under enforce=warn), and
     * said so once */
    assert_int_equal(unlink(policy_path), 0);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(controller("llama3.1-405b", 1, "gres/gpu:8", &msg), SLURM_SUCCESS);
        assert_null(msg);
        assert_non_null(strstr(debug_lines, "the GPU is unknown"));
    }
    assert_int_equal(policy_reads, 2);
    snprintf(want, sizeof(want), "no policy at %s: judging with the defaults", policy_path);
    assert_non_null(strstr(policy_read, want));
}

/* The controller's answer under a broken policy with on_submit_error=reject:
 * refused, saying so, whether the job would fit or not. */
static void refused_as_broken(void)
{
    char *msg;
    for (int i = 0; i < 2; i++) {
        assert_int_equal(controller(i ? "llama3.1-405b" : "llama3-8b", 1, "gres/gpu:8", &msg),
                         SLURM_ERROR);
        assert_non_null(msg);
        assert_non_null(strstr(msg, "the site's meshplan policy is broken (see slurmctld's log)"));
        free(msg);
    }
}

/* Judged: llama3-8b fits one 8-GPU node (passes silently), llama3.1-405b
 * does not (refused). */
static void judged(void)
{
    char *msg;
    assert_int_equal(controller("llama3-8b", 1, "gres/gpu:8", &msg), SLURM_SUCCESS);
    assert_null(msg);
    assert_int_equal(controller("llama3.1-405b", 1, "gres/gpu:8", &msg),
                     ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE);
    free(msg);
}

/* A broken policy (doc/design.md, "on_submit_error"): meshplan jobs pass
 * unjudged, or with on_submit_error=reject, said in the broken file or in
 * the last good one, are refused until it is fixed; an admin's edit is read
 * at the next submission. */
static void policy_errors__follow_on_submit_error(void **state)
{
    char *msg;
    /* broken, nothing said: the job that cannot fit passes, unjudged */
    edit_policy("gpu: H100-SXM\nenforce: maybe\n");
    setenv("MESHPLAN_POLICY", policy_path, 1);
    assert_int_equal(init(), SLURM_SUCCESS);
    assert_non_null(strstr(logged, "let through unjudged"));
    assert_int_equal(controller("llama3.1-405b", 1, "gres/gpu:8", &msg), SLURM_SUCCESS);
    assert_null(msg);
    assert_non_null(strstr(logged, "passes unjudged"));
    /* broken, with on_submit_error=reject before the mistake: refused */
    edit_policy("gpu: H100-SXM\non_submit_error: reject\nenforce: maybe\n");
    refused_as_broken();
    /* a good policy saying reject, judged as usual, then edited into one
     * broken before its on_submit_error line: the last good one's holds */
    edit_policy("gpu: H100-SXM\nenforce: reject\non_submit_error: reject\n");
    judged();
    edit_policy("gpu: H100-SXM\nenforce: rejct\n");
    refused_as_broken();
    /* fixed: judged again */
    edit_policy("gpu: H100-SXM\nenforce: reject\n");
    judged();
}

/* The job's --mem is host memory per node, where optimizer offload keeps
 * the optimizer: llama3-70b fits one node of 8 H100s only with offload and
 * 2 TiB of host memory (as `meshplan plan --host-mem 2TiB` shows), not with
 * 1 TiB; --mem-per-cpu says nothing per node. */
static void memory__mem_per_node_for_offload(void **state)
{
    char *msg, out[8192];
    write_policy("reject");
    job_mem = 2 * 1024 * 1024; /* MB: --mem=2T */
    assert_int_equal(controller("llama3-70b", 1, "gres/gpu:8", &msg), SLURM_SUCCESS);
    assert_null(msg);
    char line[1024];
    snprintf(line, sizeof(line),
             "'%s' plan --model llama3-70b --nodes 1 --gpus-per-node 8 --gpu H100-SXM "
             "--host-mem 2TiB --policy '%s' 2>&1",
             getenv("MESHPLAN"), policy_path);
    assert_int_equal(shell(line, out, sizeof(out)), 0);
    assert_non_null(strstr(out, "offload: the optimizer states"));
    job_mem = 1024 * 1024; /* --mem=1T */
    assert_int_equal(controller("llama3-70b", 1, "gres/gpu:8", &msg),
                     ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE);
    free(msg);
    job_mem = MEM_PER_CPU | 2 * 1024 * 1024; /* --mem-per-cpu=2T: not per node */
    assert_int_equal(controller("llama3-70b", 1, "gres/gpu:8", &msg),
                     ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE);
    free(msg);
    job_mem = NO_VAL64; /* no --mem: nothing known of the host */
    assert_int_equal(controller("llama3-70b", 1, "gres/gpu:8", &msg),
                     ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE);
    free(msg);
}

/* ---- partitions: `meshplan plan/check --partition` and the controller ---- */

/* The partitions of the site's policy: an H100 one of 4 nodes, an A100
 * one, one of small GPUs (the policy's gpu=, 24 GiB of it, islands of 2)
 * and, for every other name and for jobs naming none, H200s. */
static const char partitions_policy[] = "partitions:\n"
                                        "  h100: {gpu: H100-SXM, nodes: 4}\n"
                                        "  a100: {gpu: A100-40GB}\n"
                                        "  small: {gpu_mem: 24GiB, nvlink: 2}\n"
                                        "  default: {gpu: H200}\n";

/* `meshplan plan` (check with a mesh) --partition: its exit status, and
 * its stderr in out. */
static int cli_partition(const char *model, const char *mesh, int nodes, int gpn,
                         const char *partition, char *out, size_t len)
{
    char line[1024];
    snprintf(line, sizeof(line),
             "'%s' %s --model %s --nodes %d --gpus-per-node %d --partition '%s' --policy '%s' "
             "%s%s --json 2>&1 >/dev/null",
             getenv("MESHPLAN"), mesh ? "check" : "plan", model, nodes, gpn, partition, policy_path,
             mesh ? "--mesh " : "", mesh ? mesh : "");
    return shell(line, out, len);
}

/* One request both ways: the same verdict, and once each front end's
 * prefixes are taken off, the same words.  Counts the verdicts seen. */
static void same_verdict(const char *model, const char *mesh, int nodes, const char *partition,
                         int seen[3])
{
    char tres[32], out[8192], *msg;
    snprintf(tres, sizeof(tres), "gres/gpu:%d", 8 * nodes);
    int rc = controller_in(model, mesh, nodes, tres, partition, &msg);
    int st = cli_partition(model, mesh, nodes, 8, partition, out, sizeof(out));
    const char *what = !msg                  ? NULL
                       : rc == SLURM_SUCCESS ? "meshplan: warning: "
                                             : "meshplan: error: ";
    if (rc != SLURM_SUCCESS && rc != ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE)
        fail_msg("%s -N %d -p %s: controller rc %d (%s)", model, nodes, partition, rc, msg);
    /* accepted silently: the CLI says nothing, and the plan fits */
    if (!what) {
        if (st != 0 || out[0])
            fail_msg("%s -N %d -p %s: the controller accepts; the CLI: exit %d, '%s'", model, nodes,
                     partition, st, out);
        seen[0]++;
        return;
    }
    if (st != 1)
        fail_msg("%s -N %d -p %s: the controller says '%s'; the CLI exits %d ('%s')", model, nodes,
                 partition, msg, st, out);
    for (const char *l = out; *l; l += strcspn(l, "\n") + 1)
        if (strncmp(l, what, strlen(what)) != 0)
            fail_msg("%s -N %d -p %s: CLI line '%.*s' is not a '%s' line", model, nodes, partition,
                     (int)strcspn(l, "\n"), l, what);
    strip(msg, (const char *[]){"meshplan: ", NULL}, "\n(enforce=warn: queued anyway)");
    strip(out, (const char *[]){what, NULL}, NULL);
    if (strcmp(msg, out) != 0)
        fail_msg("%s -N %d -p %s:\ncontroller: %s\nCLI:        %s", model, nodes, partition, msg,
                 out);
    seen[rc == SLURM_SUCCESS ? 1 : 2]++;
    free(msg);
}

static void partitions__controller_and_cli_agree(void **state)
{
    static const char *const models[] = {"llama3-8b", "llama3-70b", "llama3.1-405b"};
    /* one partition, the default, lists (refused only when none fits, with
     * the first's reason; names sharing an entry judged once) */
    static const char *const parts[] = {"h100",      "a100",        "small",     "",
                                        "a100,h100", "nosuch,a100", "a100,a100", "small,other"};
    static const int nodes[] = {1, 8}; /* 8: more than h100 has */
    int seen[3] = {0, 0, 0};
    write_policy_with("reject", partitions_policy);
    for (int m = 0; m < 3; m++)
        for (int p = 0; p < 8; p++)
            for (int n = 0; n < 2; n++)
                same_verdict(models[m], NULL, nodes[n], parts[p], seen);
    /* a layout pinned with --mesh, judged as pinned */
    same_verdict("llama3-8b", "tp=1,pp=1,zero=0", 1, "a100", seen);
    same_verdict("llama3-8b", "tp=8", 1, "h100", seen);
    same_verdict("llama3-70b", "tp=8,pp=4", 4, "h100,a100", seen);
    /* under enforce=warn the same words, queued anyway */
    write_policy_with("warn", partitions_policy);
    for (int m = 0; m < 3; m++)
        for (int p = 0; p < 8; p += 3)
            same_verdict(models[m], NULL, 2, parts[p], seen);
    assert_true(seen[0] >= 10 && seen[1] >= 3 && seen[2] >= 10);
}

/* A partition the policy gives no GPU: the controller lets the job through
 * unjudged, and the CLI says it would, and that it cannot plan it. */
static void partitions__unjudged(void **state)
{
    FILE *f = fopen(policy_path, "w");
    assert_non_null(f);
    fputs("enforce: reject\npartitions:\n  cpu: {nodes: 2}\n", f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(init(), SLURM_SUCCESS);
    char *msg, out[8192];
    assert_int_equal(controller_in("llama3.1-405b", NULL, 1, "gres/gpu:8", "cpu", &msg),
                     SLURM_SUCCESS);
    assert_null(msg);
    assert_non_null(strstr(debug_lines, "job_submit/meshplan: uid 1000: partition cpu: "));
    assert_non_null(strstr(debug_lines, ": not judged\n"));
    assert_int_equal(cli_partition("llama3.1-405b", NULL, 1, 8, "cpu", out, sizeof(out)), 2);
    assert_non_null(
        strstr(out, "meshplan: --partition cpu: the controller does not judge this job"));
}

/* ---- sizing (--mesh-size) and time limits (time_limit=) ---- */

/* A job as sbatch sends it for `sbatch -N LO-HI --gpus-per-node=8
 * --ntasks-per-node=8 [-p PARTITION] [--time=LIMIT] --model=MODEL
 * [--mesh-size=GOAL]`, the model trained for `tokens` (0: no budget); the
 * controller's return code, its message (NULL: none), and the job as the
 * controller leaves it in *d. */
static int submit_model(mesh_model_t m, double tokens, int lo, int hi, const char *goal,
                        const char *partition, uint32_t time_limit, job_desc_msg_t *d, char **msg)
{
    char req[MESH_REQUEST_MAX];
    mesh_layout_t pins = test_mesh("auto");
    mesh_error_t err;
    m.tokens = tokens;
    if (mesh_request_encode(&m, &pins, req, sizeof(req), &err) < 0)
        fail_msg("%s", err.msg);
    job_ask_t a = {.request = req,
                   .goal = goal,
                   .lo = lo,
                   .hi = hi,
                   .tpn = 8,
                   .per_node = "gres/gpu:8",
                   .partition = partition,
                   .time_limit = time_limit};
    *msg = NULL;
    return submit_job(&a, d, msg);
}

static int submit(const char *model, double tokens, int lo, int hi, const char *goal,
                  const char *partition, uint32_t time_limit, job_desc_msg_t *d, char **msg)
{
    return submit_model(test_preset(model), tokens, lo, hi, goal, partition, time_limit, d, msg);
}

/* The count `meshplan size` marks as its choice (0: none). */
static int cli_size(const char *model, int lo, int hi, const char *goal, const char *partition)
{
    char line[1024], out[16384];
    snprintf(line, sizeof(line),
             "'%s' size --model %s --nodes %d-%d --gpus-per-node 8 --partition '%s' --goal %s "
             "--policy '%s' 2>/dev/null",
             getenv("MESHPLAN"), model, lo, hi, partition, goal, policy_path);
    shell(line, out, sizeof(out));
    const char *row = strstr(out, "\n* ");
    return row ? atoi(row + 3) : 0;
}

static const char sizing_policy[] = "partitions:\n  gpu: {gpu: H100-SXM, nodes: 16}\n";

/* The controller narrows a ranged job to the count `meshplan size` picks,
 * with the tasks that follow it, and says so; the job's limit is left. */
static void size__narrowed_to_the_cli_choice(void **state)
{
    static const struct {
        const char *model, *goal;
        int lo, hi;
    } cases[] = {{"llama3-70b", "min", 1, 16},    {"llama3-70b", "efficient", 2, 16},
                 {"llama3-70b", "fastest", 1, 8}, {"llama3-8b", "min", 1, 4},
                 {"llama3.1-405b", "min", 4, 64}, {"mixtral-8x7b", "min", 1, 8}};
    write_policy_with("reject", sizing_policy);
    for (int i = 0; i < (int)(sizeof(cases) / sizeof(cases[0])); i++) {
        job_desc_msg_t d;
        char *msg;
        int want = cli_size(cases[i].model, cases[i].lo, cases[i].hi, cases[i].goal, "gpu");
        assert_true(want >= cases[i].lo && want <= 16);
        int rc = submit(cases[i].model, 0, cases[i].lo, cases[i].hi, cases[i].goal, "gpu", NO_VAL,
                        &d, &msg);
        if (rc != SLURM_SUCCESS || (int)d.min_nodes != want || (int)d.max_nodes != want)
            fail_msg("%s -N %d-%d --mesh-size=%s: rc %d, nodes %u-%u, the CLI picks %d (%s)",
                     cases[i].model, cases[i].lo, cases[i].hi, cases[i].goal, rc, d.min_nodes,
                     d.max_nodes, want, msg);
        char head[128];
        snprintf(head, sizeof(head), "meshplan: --mesh-size=%s: the job runs on %d node",
                 cases[i].goal, want);
        assert_non_null(msg);
        assert_true(!strncmp(msg, head, strlen(head)));
        assert_non_null(strstr(msg, "; layout tp="));
        assert_int_equal(d.time_limit, NO_VAL);
        free(msg);
    }
    /* a task count that srun worked out for the low end follows the choice */
    job_desc_msg_t d;
    char *msg;
    write_policy_with("reject", sizing_policy);
    assert_int_equal(submit("llama3-70b", 0, 1, 16, "min", "gpu", NO_VAL, &d, &msg), 0);
    int want = (int)d.min_nodes;
    free(msg);
    d.min_nodes = 1;
    d.max_nodes = 16;
    d.num_tasks = 8;
    msg = NULL;
    assert_int_equal(job_submit(&d, 1000, &msg), SLURM_SUCCESS);
    assert_int_equal(d.num_tasks, 8 * want);
    free(msg);
}

/* What cannot be sized is refused with what to do, whatever enforce says;
 * a range where nothing fits gets enforce's verdict and what would. */
static void size__bad_ranges_refused(void **state)
{
    static const struct {
        const char *goal;
        int lo, hi;
        const char *partition, *says;
        int rc;
    } cases[] = {
        {"min", 0, 0, "gpu", "--mesh-size=min: the job gives no node range: give one, as -N 2-32",
         ESLURM_INVALID_NODE_COUNT},
        {"fastest", 20, 32, "gpu",
         "--mesh-size=fastest: the node range 20-32 is outside partition gpu, which has 16 "
         "nodes: give a range the partition can hold",
         ESLURM_INVALID_NODE_COUNT},
        {"biggest", 1, 4, "gpu",
         "--mesh-size: unknown goal 'biggest' (min, fastest, efficient or by:WHEN)", SLURM_ERROR},
        {"efficient", 1, 4000, "", /* the policy's default entry has no nodes: */
         "--mesh-size=efficient: the node range 1-4000 has 4000 counts; the controller sizes at "
         "most 256 (give a narrower range, as -N 1-256; meshplan size plans any)",
         ESLURM_INVALID_NODE_COUNT},
        {"min", 1, 2, "gpu", "--mesh-size=min: no layout fits on 1-2 nodes; ",
         ESLURM_INVALID_NODE_COUNT},
    };
    write_policy_with("warn", sizing_policy);
    for (int i = 0; i < (int)(sizeof(cases) / sizeof(cases[0])); i++) {
        job_desc_msg_t d;
        char *msg, want[512];
        int rc = submit("llama3.1-405b", 0, cases[i].lo, cases[i].hi, cases[i].goal,
                        cases[i].partition, NO_VAL, &d, &msg);
        snprintf(want, sizeof(want), "meshplan: %s", cases[i].says);
        /* under enforce=warn, nothing fitting is a warning, not a refusal */
        int warned = strstr(cases[i].says, "no layout fits") != NULL;
        if (rc != (warned ? SLURM_SUCCESS : cases[i].rc) || !msg ||
            strncmp(msg, want, strlen(want)) != 0)
            fail_msg("case %d: rc %d, '%s'; want rc %d, '%s'", i, rc, msg, cases[i].rc, want);
        if (warned)
            assert_int_equal(d.min_nodes, 1); /* not narrowed */
        free(msg);
    }
    /* and refused under enforce=reject */
    write_policy_with("reject", sizing_policy);
    job_desc_msg_t d;
    char *msg;
    assert_int_equal(submit("llama3.1-405b", 0, 1, 2, "min", "gpu", NO_VAL, &d, &msg),
                     ESLURM_INVALID_NODE_COUNT);
    assert_non_null(strstr(msg, "no layout fits on 1-2 nodes; 14 nodes would"));
    free(msg);
    /* a total of tasks does not follow the count chosen */
    assert_int_equal(submit("llama3-8b", 0, 1, 4, "min", "gpu", NO_VAL, &d, &msg), 0);
    free(msg);
    d.min_nodes = 1;
    d.max_nodes = 4;
    d.num_tasks = 16;
    d.ntasks_per_node = NO_VAL16;
    msg = NULL;
    assert_int_equal(job_submit(&d, 1000, &msg), SLURM_ERROR);
    assert_non_null(strstr(msg, "give tasks per node (--ntasks-per-node), not a total"));
    free(msg);
    /* nor does a total of GPUs (sbatch --gpus=16: tres_per_job) */
    assert_int_equal(submit("llama3-8b", 0, 1, 4, "min", "gpu", NO_VAL, &d, &msg), 0);
    free(msg);
    d.min_nodes = 1;
    d.max_nodes = 4;
    d.tres_per_job = (char *)"gres/gpu:16";
    msg = NULL;
    assert_int_equal(job_submit(&d, 1000, &msg), SLURM_ERROR);
    assert_non_null(strstr(msg, "give GPUs per node (--gpus-per-node), not a total (--gpus)"));
    free(msg);
    /* a partition whose GPU the policy does not name cannot be sized */
    FILE *f = fopen(policy_path, "w");
    assert_non_null(f);
    fputs("enforce: reject\npartitions:\n  cpu: {nodes: 4}\n", f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(init(), SLURM_SUCCESS);
    assert_int_equal(submit("llama3-8b", 0, 1, 4, "min", "cpu", NO_VAL, &d, &msg),
                     ESLURM_INVALID_NODE_COUNT);
    assert_non_null(strstr(msg, "meshplan: --mesh-size=min: the controller cannot size the job: "));
    free(msg);
}

/* The number after key in the JSON a shell command line prints. */
static double json_number(const char *line, const char *key)
{
    static char out[65536];
    shell(line, out, sizeof(out));
    const char *k = strstr(out, key);
    if (!k)
        fail_msg("no %s in: %s", key, out);
    return strtod(k + strlen(key), NULL);
}

/* A figure of the run of `meshplan plan --json` (its first `key`: the
 * chosen layout's), for the spec with a budget of `tokens`. */
static double cli_run(const char *model, int nodes, double tokens, const char *key)
{
    char line[1024];
    snprintf(line, sizeof(line),
             "'%s' plan --model %s --nodes %d --gpus-per-node 8 --partition gpu --set "
             "train.tokens=%.0f --policy '%s' --json 2>/dev/null",
             getenv("MESHPLAN"), model, nodes, tokens, policy_path);
    return json_number(line, key);
}

/* The limit that covers the run: `meshplan plan --json`'s. */
static long cli_limit(const char *model, int nodes, double tokens)
{
    return (long)cli_run(model, nodes, tokens, "\"time_limit_minutes\":");
}

/* time_limit=: a limit set where none is given, a short one warned about
 * or refused, a far longer one warned about; none of it without a budget. */
static void time_limit__per_policy(void **state)
{
    job_desc_msg_t d;
    char *msg;
    double tokens = 2e10; /* llama3-8b on 2 x 8 H100: about a day */
    write_policy_with("reject", "time_limit: set\npartitions:\n  gpu: {gpu: H100-SXM}\n");
    long need = cli_limit("llama3-8b", 2, tokens);
    assert_true(need > 60);
    assert_int_equal(submit("llama3-8b", tokens, 2, 0, NULL, "gpu", NO_VAL, &d, &msg), 0);
    assert_int_equal(d.time_limit, need);
    assert_non_null(msg);
    assert_non_null(strstr(msg, "meshplan: time limit set to "));
    assert_non_null(strstr(msg, "plus the 15% margin"));
    free(msg);
    /* without a budget: nothing said, nothing set */
    assert_int_equal(submit("llama3-8b", 0, 2, 0, NULL, "gpu", NO_VAL, &d, &msg), 0);
    assert_null(msg);
    assert_int_equal(d.time_limit, NO_VAL);
    /* warn: said, not set */
    write_policy_with("reject", "time_limit: warn\npartitions:\n  gpu: {gpu: H100-SXM}\n");
    assert_int_equal(submit("llama3-8b", tokens, 2, 0, NULL, "gpu", NO_VAL, &d, &msg), 0);
    assert_int_equal(d.time_limit, NO_VAL);
    assert_non_null(strstr(msg, "the job gives no time limit: the run is estimated at "));
    free(msg);
    /* too short: warned about under warn */
    assert_int_equal(submit("llama3-8b", tokens, 2, 0, NULL, "gpu", (uint32_t)(need / 2), &d, &msg),
                     0);
    assert_non_null(strstr(msg, "is shorter than the run's estimate with the 15% margin"));
    free(msg);
    /* far longer: backfill */
    assert_int_equal(submit("llama3-8b", tokens, 2, 0, NULL, "gpu", (uint32_t)(3 * need), &d, &msg),
                     0);
    assert_non_null(strstr(msg, "is more than 2 times the run's estimate"));
    free(msg);
    assert_int_equal(submit("llama3-8b", tokens, 2, 0, NULL, "gpu", INFINITE, &d, &msg), 0);
    assert_non_null(strstr(msg, "--time=UNLIMITED is more than 2 times"));
    free(msg);
    /* about right: nothing to say */
    assert_int_equal(submit("llama3-8b", tokens, 2, 0, NULL, "gpu", (uint32_t)need, &d, &msg), 0);
    assert_null(msg);
    /* reject: shorter than the estimate itself is refused */
    write_policy_with("reject", "time_limit: reject\npartitions:\n  gpu: {gpu: H100-SXM}\n");
    assert_int_equal(submit("llama3-8b", tokens, 2, 0, NULL, "gpu", (uint32_t)(need / 2), &d, &msg),
                     ESLURM_INVALID_TIME_LIMIT);
    assert_non_null(strstr(msg, "the job would be killed before it finishes (time_limit=reject)"));
    free(msg);
    /* the shortest limit Slurm takes, one minute, is a limit like any other */
    assert_int_equal(submit("llama3-8b", tokens, 2, 0, NULL, "gpu", 1, &d, &msg),
                     ESLURM_INVALID_TIME_LIMIT);
    assert_non_null(strstr(msg, "--time=0:01:00 is shorter than the run's estimate"));
    free(msg);
    /* reject refuses only a limit short of the estimate itself: one that
     * covers the estimate (need is it plus 15 %, so need - 1 minute does
     * for a run of a day) but not the margin is queued with a warning */
    assert_int_equal(submit("llama3-8b", tokens, 2, 0, NULL, "gpu", (uint32_t)(need - 1), &d, &msg),
                     0);
    assert_int_equal(d.time_limit, need - 1);
    assert_non_null(msg);
    assert_non_null(strstr(msg, "the job may be killed before it finishes"));
    free(msg);
    /* and, as time_limit=set does, sets the limit of a job that gives none */
    assert_int_equal(submit("llama3-8b", tokens, 2, 0, NULL, "gpu", NO_VAL, &d, &msg), 0);
    assert_int_equal(d.time_limit, need);
    assert_non_null(strstr(msg, "meshplan: time limit set to "));
    free(msg);
    /* off: silent */
    write_policy_with("reject", "time_limit: off\npartitions:\n  gpu: {gpu: H100-SXM}\n");
    assert_int_equal(submit("llama3-8b", tokens, 2, 0, NULL, "gpu", (uint32_t)(need / 2), &d, &msg),
                     0);
    assert_null(msg);
    /* a sized job's limit is its chosen count's */
    write_policy_with("reject",
                      "time_limit: set\npartitions:\n  gpu: {gpu: H100-SXM, nodes: 16}\n");
    assert_int_equal(submit("llama3-8b", tokens, 1, 4, "fastest", "gpu", NO_VAL, &d, &msg), 0);
    assert_int_equal(d.time_limit, cli_limit("llama3-8b", (int)d.min_nodes, tokens));
    assert_non_null(strstr(msg, "\ntime limit set to "));
    free(msg);
}

/* The partition's MaxTime (the policy's max_time:): a run longer than it is
 * a chain of jobs, said with the sbatch line; time_limit=set gives one
 * link's limit, reject refuses no link as shorter than the whole run. */
static void max_time__chained_jobs(void **state)
{
    job_desc_msg_t d;
    char *msg;
    double tokens = 1e11; /* llama3-8b on 2 x 8 H100: about five days */
    write_policy_with("reject", "time_limit: set\npartitions:\n  gpu: {gpu: H100-SXM, max_time: "
                                "2-00:00:00}\n");
    long need = cli_limit("llama3-8b", 2, tokens);
    int jobs = (int)((need + 2879) / 2880);
    assert_true(jobs >= 2);
    assert_int_equal(submit("llama3-8b", tokens, 2, 0, NULL, "gpu", NO_VAL, &d, &msg), 0);
    assert_int_equal(d.time_limit, (need + jobs - 1) / jobs);
    assert_true(d.time_limit <= 2880);
    char says[256], t_est[32];
    /* the run as meshplan plan estimates it, without the margin */
    double seconds = cli_run("llama3-8b", 2, tokens, "\"estimated_seconds\":");
    long steps = (long)cli_run("llama3-8b", 2, tokens, "\"steps\":");
    mesh_size_slurm_time((long)ceil(seconds / 60), t_est, sizeof(t_est));
    snprintf(says, sizeof(says),
             "the run is estimated at %s (%ld steps), more than partition gpu's MaxTime "
             "2-00:00:00 with the 15%% margin: it takes %d chained jobs of --time=",
             t_est, steps, jobs);
    if (!msg || !strstr(msg, says))
        fail_msg("'%s' does not say '%s'", msg, says);
    snprintf(says, sizeof(says),
             "for i in $(seq %d); do sbatch --job-name=NAME "
             "--dependency=singleton --time=",
             jobs);
    assert_non_null(strstr(msg, says));
    assert_non_null(strstr(msg, " -N 2 SCRIPT; done"));
    free(msg);
    /* within the MaxTime, or UNLIMITED: one job, as before */
    write_policy_with("reject", "time_limit: set\npartitions:\n  gpu: {gpu: H100-SXM, max_time: "
                                "UNLIMITED}\n");
    assert_int_equal(submit("llama3-8b", tokens, 2, 0, NULL, "gpu", NO_VAL, &d, &msg), 0);
    assert_int_equal(d.time_limit, need);
    assert_null(strstr(msg, "chained"));
    free(msg);
    /* reject: a link's limit is no limit too short for the run */
    write_policy_with("reject", "time_limit: reject\npartitions:\n  gpu: {gpu: H100-SXM, "
                                "max_time: 2-00:00:00}\n");
    assert_int_equal(submit("llama3-8b", tokens, 2, 0, NULL, "gpu", 2880, &d, &msg), 0);
    assert_non_null(strstr(msg, "chained jobs"));
    assert_int_equal(d.time_limit, 2880);
    free(msg);
    /* a sized job too: its partition's MaxTime chains the run it is sized for */
    write_policy_with("reject", "time_limit: set\npartitions:\n  gpu: {gpu: H100-SXM, nodes: 16, "
                                "max_time: 2-00:00:00}\n");
    assert_int_equal(submit("llama3-8b", tokens, 1, 4, "min", "gpu", NO_VAL, &d, &msg), 0);
    if (!msg || !strstr(msg, "more than partition gpu's MaxTime 2-00:00:00") || d.time_limit > 2880)
        fail_msg("sized: limit %u, '%s'", d.time_limit, msg);
    free(msg);
    /* a bad max_time is the policy's error */
    write_policy_with("reject", "partitions:\n  gpu: {gpu: H100-SXM, max_time: forever}\n");
    assert_non_null(strstr(logged, "max_time: 'forever' is not a time limit"));
}

/* The count `meshplan size --goal GOAL --set train.tokens=TOKENS` picks
 * (its JSON's "chosen"; 0: none). */
static int cli_size_budget(const char *model, int lo, int hi, const char *goal, double tokens)
{
    char line[1024];
    snprintf(line, sizeof(line),
             "'%s' size --model %s --nodes %d-%d --gpus-per-node 8 --partition gpu --goal '%s' "
             "--set train.tokens=%.0f --policy '%s' --json 2>/dev/null",
             getenv("MESHPLAN"), model, lo, hi, goal, tokens, policy_path);
    return (int)json_number(line, "\"chosen\":");
}

/* --mesh-size=by:WHEN: the controller narrows to the CLI's choice, the
 * fewest nodes whose run ends in time; none in time is enforce's. */
static void deadline__narrowed_to_the_cli_choice(void **state)
{
    job_desc_msg_t d;
    char *msg;
    double tokens = 2e11;
    write_policy_with("reject", sizing_policy);
    int want = cli_size_budget("llama3-8b", 1, 16, "by:14d", tokens);
    assert_true(want > 1 && want < 16);
    assert_int_equal(submit("llama3-8b", tokens, 1, 16, "by:14d", "gpu", NO_VAL, &d, &msg), 0);
    assert_int_equal(d.min_nodes, want);
    assert_int_equal(d.max_nodes, want);
    char head[128];
    snprintf(head, sizeof(head),
             "meshplan: --mesh-size=by:14d: the job runs on %d nodes: the "
             "fewest of 1-16 whose run",
             want);
    assert_non_null(msg);
    assert_true(!strncmp(msg, head, strlen(head)));
    free(msg);
    /* one hour: nothing is in time; refused with the fastest count */
    assert_int_equal(submit("llama3-8b", tokens, 1, 16, "by:60m", "gpu", NO_VAL, &d, &msg),
                     ESLURM_INVALID_NODE_COUNT);
    assert_non_null(strstr(msg, "--mesh-size=by:60m: no count of 1-16 nodes ends by:60m"));
    assert_non_null(strstr(msg, "the fastest, "));
    free(msg);
    /* a date in the past, and a goal too long for the controller to read */
    assert_int_equal(submit("llama3-8b", tokens, 1, 16, "by:2001-01-01", "gpu", NO_VAL, &d, &msg),
                     SLURM_ERROR);
    assert_non_null(strstr(msg, "--mesh-size: goal by:2001-01-01: the date is not in the future"));
    free(msg);
    assert_int_equal(submit("llama3-8b", tokens, 1, 16,
                            "by:2026-12-24T18:00:00xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "gpu",
                            NO_VAL, &d, &msg),
                     SLURM_ERROR);
    assert_non_null(strstr(msg, "--mesh-size: use min, fastest, efficient or by:WHEN"));
    free(msg);
}

/* A spec that would hold slurmctld for tens of milliseconds holds it for
 * a part of the work budget only: refused (it fits nowhere), its advice cut
 * at its share with the command that gives it in full,
 * the same words when it comes again; a range too costly to size is let
 * through as it is, and the user told why. */
static void budget__costly_jobs_bounded(void **state)
{
    static const char hostile[] = "name: hostile\n"
                                  "arch: {layers: 100000, hidden: 1024, heads: 1024, vocab: 128}\n"
                                  "train: {seq_len: 16777216, global_batch: 1073741824}\n";
    job_desc_msg_t d;
    char *msg, *again;
    write_policy_with("reject", sizing_policy);
    mesh_submit_cache_clear();
    assert_int_equal(submit_model(test_spec(hostile), 0, 1, 0, NULL, "gpu", NO_VAL, &d, &msg),
                     ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE);
    assert_non_null(strstr(msg, "meshplan: hostile does not fit on 1 x 8 H100-SXM GPUs: "));
    assert_non_null(strstr(msg, "\n(what would fit was searched only as far as the controller's "
                                "budget for it, 26000 work units: meshplan plan --model ... "
                                "--nodes 1 --gpus-per-node 8 --gpu H100-SXM searches it in full)"));
    assert_int_equal(submit_model(test_spec(hostile), 0, 1, 0, NULL, "gpu", NO_VAL, &d, &again),
                     ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE);
    assert_string_equal(msg, again);
    free(msg);
    free(again);
    /* sizing mixtral-8x7b over 1-8 nodes for efficiency: 2.6 budgets' work */
    assert_int_equal(submit("mixtral-8x7b", 0, 1, 8, "efficient", "gpu", NO_VAL, &d, &msg),
                     SLURM_SUCCESS);
    assert_int_equal(d.min_nodes, 1);
    assert_int_equal(d.max_nodes, 8);
    assert_string_equal(msg, "meshplan: --mesh-size=efficient: the controller stopped sizing the "
                             "job at its work budget of 130000 units: not narrowed, and the nodes "
                             "judge it at launch (meshplan size sizes it in full)");
    free(msg);
}

/* One user submitting costly specs in a quick loop holds slurmctld for a
 * whole budget each while the share holds one (20 budgets, refilled at 2 a
 * second, while the loop spends some ten a second), then for the floor's
 * work: its refusal says the judgement was cut short, and names meshplan
 * plan.  The share's clock is slurmctld's, in seconds: read in milliseconds
 * (or finer) it would refill at once, and the loop never be cut. */
static void share__a_quick_loop_of_costly_jobs_gets_the_floor(void **state)
{
    job_desc_msg_t d;
    char *msg = NULL;
    write_policy_with("reject", sizing_policy);
    mesh_submit_cache_clear();
    int i = 0, cut = 0;
    for (; i < 300 && !cut; i++) {
        /* each spec new, so that no verdict is kept for it */
        mesh_model_t m =
            test_specf("name: hostile\narch: {layers: %d, hidden: 1024, heads: 1024, vocab: 128}\n"
                       "train: {seq_len: 16777216, global_batch: 1073741824}\n",
                       100000 - i);
        free(msg);
        assert_int_equal(submit_model(m, 0, 1, 0, NULL, "gpu", NO_VAL, &d, &msg),
                         ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE);
        assert_non_null(strstr(msg, "meshplan: hostile does not fit on 1 x 8 H100-SXM GPUs: "));
        cut = strstr(msg, "your share") != NULL;
    }
    /* whole for at least the 20 budgets the share starts with */
    assert_true(i > 20);
    assert_int_equal(cut, 1);
    assert_non_null(strstr(msg, "\n(your recent submissions have spent your share of the "
                                "controller's work, so this one was judged within 5000 units: "
                                "leave a second between costly submissions, or run meshplan "
                                "plan to judge it in full)"));
    free(msg);
    mesh_submit_cache_clear(); /* a whole share for the tests after */
}

/* Slurm 25.11 runs job_submit under read locks, so that several
 * RPC threads may judge at once: each judges with a whole policy, the one
 * before an edit or the one after, never a mix, and gets a whole answer. */
typedef struct submitter {
    int runs, wrong;
} submitter_t;

static void *submit_many(void *arg)
{
    submitter_t *t = arg;
    for (int i = 0; i < t->runs; i++) {
        char *msg;
        int fits = i % 2 == 0;
        int rc = controller(fits ? "llama3-8b" : "llama3.1-405b", 1, "gpu:8", &msg);
        if (fits)
            t->wrong += rc != SLURM_SUCCESS || msg != NULL;
        else if (rc == SLURM_SUCCESS) /* enforce=warn's answer, whole */
            t->wrong += !msg || !strstr(msg, "does not fit") || !strstr(msg, "queued anyway");
        else /* enforce=reject's */
            t->wrong += rc != ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE || !msg ||
                        !strstr(msg, "does not fit") || strstr(msg, "queued anyway");
        free(msg);
    }
    return NULL;
}

static void threads__judge_at_once_while_the_policy_changes(void **state)
{
    char tmp[sizeof(policy_path) + 8];
    snprintf(tmp, sizeof(tmp), "%s.new", policy_path);
    write_policy("reject");
    submitter_t t[4];
    pthread_t id[4];
    for (int i = 0; i < 4; i++) {
        t[i] = (submitter_t){40, 0};
        assert_int_equal(pthread_create(&id[i], NULL, submit_many, &t[i]), 0);
    }
    for (int k = 0; k < 20; k++) { /* edits, each whole (a rename), as an admin's tool makes them */
        FILE *f = fopen(tmp, "w");
        assert_non_null(f);
        fprintf(f, "gpu: H100-SXM\nenforce: %s\n", k % 2 ? "reject" : "warn");
        assert_int_equal(fclose(f), 0);
        assert_int_equal(rename(tmp, policy_path), 0);
        usleep(2000);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(id[i], NULL);
        assert_int_equal(t[i].wrong, 0);
    }
}

int main(void)
{
    int fd = mkstemp(policy_path);
    if (fd < 0)
        return 1;
    close(fd);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fits__both_run_it_silently),
        cmocka_unit_test(reconfigure__fini_then_init_judges_again),
        cmocka_unit_test(warn__both_run_it_and_say_why),
        cmocka_unit_test(reject__both_refuse_it_and_say_why),
        cmocka_unit_test_teardown(modify__judged_as_submitted, plain_job),
        cmocka_unit_test(plain__not_judged_and_said_so),
        cmocka_unit_test(request__read_before_planning),
        cmocka_unit_test(init__logs_which_meshplan_reads_the_policy),
        cmocka_unit_test(policy_reads__once_per_edit),
        cmocka_unit_test(policy_errors__follow_on_submit_error),
        cmocka_unit_test_teardown(memory__mem_per_node_for_offload, plain_job),
        cmocka_unit_test(partitions__controller_and_cli_agree),
        cmocka_unit_test(partitions__unjudged),
        cmocka_unit_test(size__narrowed_to_the_cli_choice),
        cmocka_unit_test(size__bad_ranges_refused),
        cmocka_unit_test(time_limit__per_policy),
        cmocka_unit_test(max_time__chained_jobs),
        cmocka_unit_test(deadline__narrowed_to_the_cli_choice),
        cmocka_unit_test(budget__costly_jobs_bounded),
        cmocka_unit_test(share__a_quick_loop_of_costly_jobs_gets_the_floor),
        cmocka_unit_test(threads__judge_at_once_while_the_policy_changes),
    };
    int rc = cmocka_run_group_tests_name("job_submit", tests, NULL, NULL);
    unlink(policy_path);
    return rc;
}
