/*
 * The slurmstepd side: once per node in user_init (effective uid = the
 * job's), read the spec, plan, and build every local task's variables; in
 * task_init (as the user, just before exec) set them.
 *
 * user_init never fails: an error there drains the node of a batch step
 * and leaves srun at rc 0 with "launch failed".  Errors are kept and
 * returned from task_init, which fails the step cleanly with the message.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <slurm/slurm.h>

#include "plugin.h"

/* Slurm's special step ids (slurm.h, 22.05) */
#define STEP_INTERACTIVE 0xfffffffaU
#define STEP_BATCH       0xfffffffbU
#define STEP_EXTERN      0xfffffffcU

/* Keep an error for task_init; returns -1 so that helpers can say
 * `return defer(...)`. */
static int defer(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int defer(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(mesh_plugin.step_error, sizeof(mesh_plugin.step_error), fmt, ap);
    va_end(ap);
    return -1;
}

static int env_int(spank_t sp, const char *name)
{
    char buf[32];
    if (spank_getenv(sp, name, buf, sizeof(buf)) != ESPANK_SUCCESS)
        return 0;
    char *end;
    long v = strtol(buf, &end, 10);
    return *end == '\0' && v > 0 && v < (1 << 20) ? (int)v : 0;
}

/* The batch (or interactive) step reports no nodes or tasks of its own: it
 * is the launcher, planned as node 0 of the whole job. */
static int launcher_shape(spank_t sp, mesh_step_t *s)
{
    s->nodes = env_int(sp, "SLURM_JOB_NUM_NODES");
    s->tasks_per_node = 1;
    s->gpus_per_node = env_int(sp, "SLURM_GPUS_ON_NODE");
    if (!s->gpus_per_node)
        s->gpus_per_node = env_int(sp, "SLURM_NTASKS_PER_NODE");
    if (!s->nodes || !s->gpus_per_node)
        return defer("the job's nodes and GPUs per node are unknown in this step (give "
                     "--gpus-per-node or --ntasks-per-node)");
    return 0;
}

/* A regular step: the same number of tasks on every node. */
static int step_shape(spank_t sp, uint32_t stepid, mesh_step_t *s)
{
    uint32_t nodes = 0, nodeid = 0, local = 0, total = 0;
    memset(s, 0, sizeof(*s));
    if (stepid == STEP_BATCH || stepid == STEP_INTERACTIVE)
        return launcher_shape(sp, s);
    if (spank_get_item(sp, S_JOB_NNODES, &nodes) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_NODEID, &nodeid) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &local) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &total) != ESPANK_SUCCESS || nodes == 0)
        return defer("cannot read the step's nodes and tasks from Slurm");
    if (total % nodes || local * nodes != total)
        return defer("%u tasks on %u nodes (%u here): a 3D layout needs the same number of "
                     "tasks on every node (use --ntasks-per-node)",
                     total, nodes, local);
    s->nodes = (int)nodes;
    s->node = (int)nodeid;
    s->tasks_per_node = (int)local;
    s->gpus_per_node = (int)local;
    if (mesh_plugin_export_mode() != MESH_EXPORT_TORCHRUN)
        return 0;
    if (local != 1)
        return defer("--mesh-export=torchrun runs one launcher task per node, not %u (use "
                     "--ntasks-per-node=1)",
                     local);
    s->gpus_per_node = env_int(sp, "SLURM_GPUS_ON_NODE");
    if (!s->gpus_per_node)
        return defer("--mesh-export=torchrun needs the node's GPUs (give --gpus-per-node)");
    return 0;
}

/* MASTER_ADDR: the first host of the step's node list. */
static int first_host(spank_t sp, char *buf, size_t len)
{
    char list[8192];
    if (spank_getenv(sp, "SLURM_STEP_NODELIST", list, sizeof(list)) != ESPANK_SUCCESS &&
        spank_getenv(sp, "SLURM_JOB_NODELIST", list, sizeof(list)) != ESPANK_SUCCESS)
        return -1;
    hostlist_t hl = slurm_hostlist_create(list);
    if (!hl)
        return -1;
    char *host = slurm_hostlist_shift(hl);
    int rc = host && strlen(host) < len ? 0 : -1;
    if (rc == 0)
        strcpy(buf, host);
    free(host);
    slurm_hostlist_destroy(hl);
    return rc;
}

static int wanted(uint32_t stepid)
{
    unsigned steps = mesh_plugin.policy.steps;
    if (stepid == STEP_EXTERN)
        return 0; /* runs no tasks */
    if (stepid == STEP_BATCH)
        return (steps & MESH_STEP_BATCH) != 0;
    if (stepid == STEP_INTERACTIVE)
        return (steps & MESH_STEP_INTERACTIVE) != 0;
    return (steps & MESH_STEP_REGULAR) != 0;
}

/* Render every local task's variables. */
static int build_table(spank_t sp, const mesh_plan_t *p, const mesh_step_t *s, uint32_t jobid,
                       uint32_t stepid)
{
    char host[256];
    mesh_error_t err;
    if (first_host(sp, host, sizeof(host)) < 0)
        return defer("cannot read the step's node list (SLURM_STEP_NODELIST)");
    mesh_task_t t = {
        .node = s->node,
        .master_addr = host,
        .master_port = mesh_env_master_port(jobid, stepid, mesh_plugin.policy.port_lo,
                                            mesh_plugin.policy.port_hi),
        /* the batch script is a launcher: it gets the layout, not a rank */
        .export_mode = stepid == STEP_BATCH || stepid == STEP_INTERACTIVE
                           ? MESH_EXPORT_TORCHRUN
                           : mesh_plugin_export_mode(),
        .gpu_busid = NULL,
        .numa_node = -1,
    };
    mesh_plugin.envs = calloc((size_t)s->tasks_per_node, sizeof(*mesh_plugin.envs));
    if (!mesh_plugin.envs)
        return defer("out of memory");
    for (int i = 0; i < s->tasks_per_node; i++) {
        t.local = i;
        if (!(mesh_plugin.envs[i] = mesh_env_create(p, &t, &err)))
            return defer("%s", err.msg);
        mesh_plugin.n_envs = i + 1;
    }
    return 0;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Plan this node's share of the step; on failure the error is deferred. */
static void prepare(spank_t sp, uint32_t jobid, uint32_t stepid)
{
    double t0 = now_ms();
    /* a file spec as resolved at submission, read now with the user's identity */
    char spec[MESH_SPEC_ARG_MAX];
    if (!mesh_spec_is_path(mesh_plugin.model) ||
        spank_getenv(sp, MESH_SPEC_PATH_ENV, spec, sizeof(spec)) != ESPANK_SUCCESS)
        snprintf(spec, sizeof(spec), "%s", mesh_plugin.model);
    mesh_model_t m;
    mesh_step_t s;
    mesh_error_t err;
    if (mesh_plugin_load_model(spec, &m, &err) < 0) {
        defer("--model: %s", err.msg);
        return;
    }
    if (step_shape(sp, stepid, &s) < 0)
        return;
    mesh_plan_t *p = mesh_plugin_plan(&m, &s, &err);
    if (!p) {
        defer("%s", err.msg);
        return;
    }
    if (!mesh_plan_fits(p) && mesh_plugin.policy.enforce == MESH_ENFORCE_REJECT) {
        char msg[sizeof(mesh_plugin.step_error)];
        mesh_plugin_nofit_message(p, msg, sizeof(msg));
        defer("%s", msg);
    } else {
        if (!mesh_plan_fits(p) && mesh_plugin.policy.enforce == MESH_ENFORCE_WARN)
            slurm_info("meshplan: %s does not fit; running it anyway (enforce=warn)", m.name);
        build_table(sp, p, &s, jobid, stepid);
    }
    slurm_debug("meshplan: job %u step %u node %d: spec, plan %s and %d tasks' variables in "
                "%.3f ms",
                jobid, stepid, s.node, mesh_plan_digest(p), mesh_plugin.n_envs, now_ms() - t0);
    mesh_plan_destroy(p);
}

int mesh_stepd_user_init(spank_t sp)
{
    uint32_t jobid = 0, stepid = 0;
    spank_get_item(sp, S_JOB_ID, &jobid);
    spank_get_item(sp, S_JOB_STEPID, &stepid);
    if (!mesh_plugin.have_model || !wanted(stepid))
        return 0;
    if (mesh_plugin.config_error[0])
        defer("%s", mesh_plugin.config_error);
    else
        prepare(sp, jobid, stepid);
    return 0; /* never an error here: see the top of this file */
}

int mesh_stepd_task_init(spank_t sp)
{
    if (mesh_plugin.step_error[0]) {
        char *save = NULL;
        for (char *line = strtok_r(mesh_plugin.step_error, "\n", &save); line;
             line = strtok_r(NULL, "\n", &save))
            slurm_error("meshplan: %s", line);
        return -1;
    }
    if (!mesh_plugin.envs)
        return 0;
    int local = -1;
    if (spank_get_item(sp, S_TASK_ID, &local) != ESPANK_SUCCESS || local < 0 ||
        local >= mesh_plugin.n_envs) {
        slurm_error("meshplan: task %d has no entry in this node's table", local);
        return -1;
    }
    const mesh_env_t *e = mesh_plugin.envs[local];
    for (int i = 0; i < mesh_env_count(e); i++) {
        /* torch/torchrun variables yield to values the task already has */
        spank_err_t rc = spank_setenv(sp, mesh_env_name(e, i), mesh_env_value(e, i),
                                      !mesh_env_keep_existing(e, i));
        if (rc != ESPANK_SUCCESS && rc != ESPANK_ENV_EXISTS) {
            slurm_error("meshplan: cannot set %s: %s", mesh_env_name(e, i), spank_strerror(rc));
            return -1;
        }
    }
    return 0;
}

void mesh_stepd_exit(void)
{
    for (int i = 0; i < mesh_plugin.n_envs; i++)
        mesh_env_destroy(mesh_plugin.envs[i]);
    free(mesh_plugin.envs);
    mesh_plugin.envs = NULL;
    mesh_plugin.n_envs = 0;
}
