/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The slurmstepd side: once per node in user_init (effective uid = the
 * job's), read the spec, plan, and build every local task's variables; in
 * task_init (as the user, just before exec) set them.
 *
 * user_init never fails: an error there drains the node of a batch step
 * and leaves srun at rc 0 with "launch failed".  Errors are kept and
 * returned from task_init, which fails the step cleanly with the message.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../slurm_compat.h"

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

static int launcher_step(uint32_t stepid)
{
    return stepid == STEP_BATCH || stepid == STEP_INTERACTIVE;
}

/* The step's shape from what Slurm tells this node.  The batch (or
 * interactive) step reports no nodes or tasks of its own: it is the
 * launcher, planned as node 0 of the whole job. */
static int step_shape(spank_t sp, uint32_t stepid, mesh_step_t *s)
{
    uint32_t nodes = 0, nodeid = 0, local = 0, total = 0;
    char mem[32];
    mesh_error_t err;
    mesh_launch_t launch = launcher_step(stepid) ? MESH_LAUNCH_JOB : mesh_plugin_launch();
    if (spank_getenv(sp, "SLURM_MEM_PER_NODE", mem, sizeof(mem)) != ESPANK_SUCCESS)
        mem[0] = '\0';
    mesh_step_counts_t c = {.gpus_on_node = env_int(sp, "SLURM_GPUS_ON_NODE"),
                            .mem_per_node = mesh_plugin_mem_per_node(mem)};
    if (launch == MESH_LAUNCH_JOB) {
        c.nodes = env_int(sp, "SLURM_JOB_NUM_NODES");
        c.ntasks_per_node = env_int(sp, "SLURM_NTASKS_PER_NODE");
    } else if (spank_get_item(sp, S_JOB_NNODES, &nodes) == ESPANK_SUCCESS &&
               spank_get_item(sp, S_JOB_NODEID, &nodeid) == ESPANK_SUCCESS &&
               spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &local) == ESPANK_SUCCESS &&
               spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &total) == ESPANK_SUCCESS) {
        c.nodes = nodes;
        c.node = nodeid;
        c.tasks = total;
        c.local_tasks = local;
    } /* else no nodes: the library says it cannot read them */
    return mesh_step_shape(&c, launch, s, &err) < 0 ? defer("%s", err.msg) : 0;
}

/* Host `nth` (0-based) of the step's node list: MASTER_ADDR is host 0. */
static int step_host(spank_t sp, int nth, char *buf, size_t len)
{
    char list[8192];
    if (spank_getenv(sp, "SLURM_STEP_NODELIST", list, sizeof(list)) != ESPANK_SUCCESS &&
        spank_getenv(sp, "SLURM_JOB_NODELIST", list, sizeof(list)) != ESPANK_SUCCESS)
        return -1;
    mesh_hostlist_t hl = slurm_hostlist_create(list);
    if (!hl)
        return -1;
    char *host = NULL;
    for (int i = 0; i <= nth; i++) {
        free(host);
        host = slurm_hostlist_shift(hl);
    }
    int rc = host && strlen(host) < len ? 0 : -1;
    if (rc == 0)
        strcpy(buf, host);
    free(host);
    slurm_hostlist_destroy(hl);
    return rc;
}

/* Positions of the step's GPUs among the node's, from Slurm's list
 * (mesh_step_gpu_list reads it). */
static int step_gpus(spank_t sp, uint32_t stepid, int *pos, int max)
{
    char list[256];
    mesh_error_t err;
    const char *var = launcher_step(stepid) ? "SLURM_JOB_GPUS" : "SLURM_STEP_GPUS";
    int got = spank_getenv(sp, var, list, sizeof(list)) == ESPANK_SUCCESS;
    int n = mesh_step_gpu_list(got ? list : NULL, var, pos, max, &err);
    return n < 0 ? defer("%s", err.msg) : n;
}

static int wanted(uint32_t stepid)
{
    unsigned steps = mesh_plugin.policy.launch.steps;
    if (stepid == STEP_EXTERN)
        return 0; /* runs no tasks */
    if (stepid == STEP_BATCH)
        return (steps & MESH_STEP_BATCH) != 0;
    if (stepid == STEP_INTERACTIVE)
        return (steps & MESH_STEP_INTERACTIVE) != 0;
    return (steps & MESH_STEP_REGULAR) != 0;
}

/* Live discovery costs about 10 ms a step (and more with several steps
 * starting on one node); loading an XML file 0.4 ms.  So the first step of a
 * boot saves what discovery found, as root, in a root-owned directory, and
 * later steps load that.  /run is emptied at boot; the boot id in the name
 * makes sure of it. */
#ifndef TOPOLOGY_CACHE_DIR /* the plugin's suite builds with its own */
#define TOPOLOGY_CACHE_DIR "/run/meshplan"
#endif

static int cache_path(char *buf, size_t len)
{
    char boot[64] = "";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
    if (!f)
        return -1;
    int ok = fgets(boot, sizeof(boot), f) != NULL;
    fclose(f);
    boot[strcspn(boot, "\n")] = '\0';
    if (!ok || strspn(boot, "0123456789abcdef-") != strlen(boot) || !boot[0])
        return -1;
    return snprintf(buf, len, TOPOLOGY_CACHE_DIR "/topology-%s.xml", boot) < (int)len ? 0 : -1;
}

/* Only a root-owned file in a root-owned directory nobody else may write
 * to is trusted. */
static int trusted(const char *path, int dir)
{
    struct stat st;
    return lstat(path, &st) == 0 && (dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode)) &&
           st.st_uid == 0 && !(st.st_mode & 022);
}

int mesh_stepd_post_opt(spank_t sp)
{
    char path[256];
    mesh_error_t err;
    uint32_t stepid = 0;
    spank_get_item(sp, S_JOB_STEPID, &stepid);
    if (!mesh_plugin.have_model || !wanted(stepid) || mesh_plugin.config_error[0] ||
        mesh_plugin.policy.launch.topology_xml[0] || geteuid() != 0 ||
        cache_path(path, sizeof(path)) < 0 || trusted(path, 0))
        return 0;
    if (mkdir(TOPOLOGY_CACHE_DIR, 0755) < 0 && errno != EEXIST)
        return 0;
    if (trusted(TOPOLOGY_CACHE_DIR, 1) &&
        mesh_topo_save_timeout(path, mesh_plugin.policy.launch.topology_timeout, &err) < 0)
        slurm_debug("meshplan: %s", err.msg);
    return 0; /* without a cache, user_init discovers the node itself */
}

/* topology_xml=/etc/slurm/topo/%n.xml: %n is the node's name. */
static int topology_path(spank_t sp, int node, char *buf, size_t len)
{
    char host[256] = "";
    if (strstr(mesh_plugin.policy.launch.topology_xml, "%n") &&
        step_host(sp, node, host, sizeof(host)) < 0)
        return -1;
    return mesh_step_topology_file(&mesh_plugin.policy, host, buf, len);
}

/* A topology that cannot be read in time fails the step, or if it may fall
 * back, is planned without: *fell_back is then set. */
static mesh_topo_t *topology_error(mesh_error_t *err, int *fell_back)
{
    if (mesh_step_fallback(&mesh_plugin.policy, err) > 0) {
        mesh_plugin_info("%s", err->msg);
        *fell_back = 1;
        return NULL;
    }
    return defer("%s", err->msg), NULL;
}

static mesh_topo_t *load_node_topology(spank_t sp, int node, const int *pos, int npos,
                                       int *fell_back)
{
    char path[MESH_PATH_MAX + 256];
    mesh_error_t err;
    const char *xml = NULL;
    if (mesh_plugin.policy.launch.topology_xml[0]) {
        if (topology_path(sp, node, path, sizeof(path)) < 0)
            return defer("topology_xml: cannot name node %d's file", node), NULL;
        xml = path;
    } else if (cache_path(path, sizeof(path)) == 0 && trusted(TOPOLOGY_CACHE_DIR, 1) &&
               trusted(path, 0)) {
        xml = path; /* what an earlier step discovered on this node */
    }
    mesh_topo_t *t = mesh_topo_load_timeout(xml, mesh_plugin.policy.launch.topology_timeout, &err);
    if (!t)
        return topology_error(&err, fell_back);
    if (mesh_step_topology(&mesh_plugin.policy, t, pos, npos, &err) < 0) {
        mesh_topo_destroy(t);
        return defer("%s", err.msg), NULL;
    }
    return t;
}

/* The node's topology, loaded once per step: from the admin's XML
 * (topology_xml=) or by discovery; NULL where there is none to use
 * (topology_xml=none, no GPU found: the policy's gpu= then decides) or on
 * an error, which is deferred.  With per-node XML files every node also
 * compares itself with the step's first node: one layout is planned for
 * all, so nodes that differ are refused. */
static mesh_topo_t *node_topology(spank_t sp, uint32_t stepid, const mesh_step_t *s, int *failed)
{
    int pos[MESH_TOPO_MAX_GPUS];
    *failed = 1;
    if (strcmp(mesh_plugin.policy.launch.topology_xml, "none") == 0)
        return *failed = 0, NULL;
    int npos = step_gpus(sp, stepid, pos, MESH_TOPO_MAX_GPUS);
    if (npos < 0)
        return NULL;
    int fell_back = 0;
    mesh_topo_t *t = load_node_topology(sp, s->node, pos, npos, &fell_back);
    if (!t)
        return *failed = !fell_back, NULL;
    if (mesh_topo_gpu_count(t) == 0) {
        mesh_topo_destroy(t);
        return *failed = 0, NULL;
    }
    if (s->node > 0 && strstr(mesh_plugin.policy.launch.topology_xml, "%n")) {
        mesh_topo_t *first = load_node_topology(sp, 0, pos, npos, &fell_back);
        char mine[256], theirs[256], host[256] = "", hosts0[256] = "";
        mesh_error_t err;
        if (!first) { /* node 0 cannot read it either: it fails, or falls back too */
            mesh_topo_destroy(t);
            return *failed = !fell_back, NULL;
        }
        const char *hosts[] = {hosts0, host}, *gpus[] = {theirs, mine};
        mesh_topo_signature(t, &mesh_plugin.policy.assume, mine, sizeof(mine));
        mesh_topo_signature(first, &mesh_plugin.policy.assume, theirs, sizeof(theirs));
        mesh_topo_destroy(first);
        step_host(sp, 0, hosts0, sizeof(hosts0));
        step_host(sp, s->node, host, sizeof(host));
        if (mesh_nodes_alike(2, hosts, gpus, &err) < 0) {
            mesh_topo_destroy(t);
            return defer("%s", err.msg), NULL;
        }
    }
    *failed = 0;
    return t;
}

/* Render every local task's variables. */
static int build_table(spank_t sp, const mesh_plan_t *p, const mesh_step_t *s,
                       const mesh_topo_t *topo, uint32_t jobid, uint32_t stepid)
{
    char host[256], visible[64], list[256];
    mesh_error_t err;
    if (step_host(sp, 0, host, sizeof(host)) < 0)
        return defer("cannot read the step's node list (SLURM_STEP_NODELIST)");
    /* bind=gpu narrows the step's own device list: Slurm's numbering */
    const char *step_list = NULL;
    if (topo && (spank_getenv(sp, "CUDA_VISIBLE_DEVICES", list, sizeof(list)) == ESPANK_SUCCESS ||
                 spank_getenv(sp, "ROCR_VISIBLE_DEVICES", list, sizeof(list)) == ESPANK_SUCCESS))
        step_list = list;
    mesh_task_t t = {
        .node = s->node,
        .master_addr = host,
        .master_port = mesh_env_master_port(jobid, stepid, mesh_plugin.policy.launch.port_lo,
                                            mesh_plugin.policy.launch.port_hi),
        /* the batch script is a launcher: it gets the layout, not a rank */
        .export_mode = launcher_step(stepid) ? MESH_EXPORT_BATCH : mesh_plugin_export_mode(),
        .gpu_busid = NULL,
        .numa_node = -1,
        .restart = mesh_plugin.have_restart ? &mesh_plugin.restart : NULL,
    };
    mesh_plugin.envs = calloc((size_t)s->tasks_per_node, sizeof(*mesh_plugin.envs));
    if (!mesh_plugin.envs)
        return defer("out of memory");
    for (int i = 0; i < s->tasks_per_node; i++) {
        t.local = i;
        if (topo && t.export_mode != MESH_EXPORT_TORCHRUN && t.export_mode != MESH_EXPORT_BATCH &&
            mesh_env_task_topology(&t, topo, mesh_plugin_bind(), step_list, visible,
                                   sizeof(visible), &err) < 0)
            return defer("%s", err.msg);
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

/* The allocation the plan is for: the node's topology where there is one,
 * else what the policy declares.  A torchrun step's task, and the batch or
 * interactive step's, launches for all the node's GPUs. */
static int step_alloc(uint32_t stepid, const mesh_topo_t *topo, mesh_step_t *s, mesh_alloc_t *a)
{
    mesh_error_t err;
    int launcher = launcher_step(stepid) || mesh_plugin_launch() == MESH_LAUNCH_TORCHRUN;
    if (mesh_step_alloc(&mesh_plugin.policy, topo, launcher, mesh_plugin_bind(), s, a, &err) < 0)
        return defer("%s", err.msg);
    return 0;
}

/* --mesh-explain: srun printed the plan if it made this same one; else the
 * step's first task prints it.  Under --mesh-explain the first task also
 * prints the plan record, so that the job's log can calibrate the cost
 * model (meshplan calibrate). */
static void keep_explanation(const mesh_plan_t *p, const mesh_step_t *s)
{
    if (mesh_plugin.explain && s->node == 0 && mesh_plan_fits(p))
        free(mesh_plugin.record), mesh_plugin.record = mesh_calib_plan_record(p);
    if (!mesh_plugin.explain || s->node != 0 ||
        strcmp(mesh_plugin.submit_digest, mesh_plan_digest(p)) == 0)
        return;
    /* the task's stderr is srun's, but slurmstepd cannot tell a terminal */
    mesh_picture_opts_t po = {.color = 0, .width = 100};
    mesh_plugin.explanation =
        mesh_report_explained(p, mesh_plugin.have_restart ? &mesh_plugin.restart : NULL, &po);
}

/* Plan this node's share of the step; on failure the error is deferred. */
static void prepare(spank_t sp, uint32_t jobid, uint32_t stepid)
{
    double t0 = now_ms();
    /* the spec carried with the job (MESH_SPEC_ENV); else (--export=NONE
     * leaves it behind) a file spec as resolved at submission, read now
     * with the user's identity */
    char spec[MESH_SPEC_ARG_MAX], carried[MESH_REQUEST_MAX], from[MESH_SPEC_ARG_MAX];
    spank_err_t got = spank_getenv(sp, MESH_SPEC_ENV, carried, sizeof(carried));
    if (got != ESPANK_SUCCESS && got != ESPANK_ENV_NOEXIST) {
        defer("--model: the spec carried with the job (%s) cannot be read (%s): submit the job "
              "again",
              MESH_SPEC_ENV, spank_strerror(got));
        return;
    }
    /* the job's spec for the job's --model only: a step giving another
     * (through an srun that did not carry it) reads its own */
    int have_carried =
        got == ESPANK_SUCCESS &&
        spank_getenv(sp, MESH_SPEC_MODEL_ENV, from, sizeof(from)) == ESPANK_SUCCESS &&
        strcmp(from, mesh_plugin.model) == 0;
    if (!mesh_spec_is_path(mesh_plugin.model) ||
        spank_getenv(sp, MESH_SPEC_PATH_ENV, spec, sizeof(spec)) != ESPANK_SUCCESS)
        snprintf(spec, sizeof(spec), "%s", mesh_plugin.model);
    mesh_model_t m;
    mesh_step_t s;
    mesh_alloc_t a;
    mesh_error_t err;
    int failed;
    char digest[17];
    if (have_carried ? mesh_plugin_carried_spec(carried, &m, &err) < 0
                     : mesh_plugin_load_model(spec, &m, &err) < 0) {
        defer("--model: %s%s", err.msg, have_carried ? ": submit the job again" : "");
        return;
    }
    if (mesh_plugin.spec_digest[0] &&
        strcmp(mesh_plugin.spec_digest, mesh_model_digest(&m, digest))) {
        if (have_carried)
            defer("--model: the spec carried with the job (%s) does not read as it did at "
                  "submission (damaged on the way): submit the job again",
                  MESH_SPEC_ENV);
        else if (mesh_spec_is_path(spec))
            defer("--model: %s changed after it was read at submission, so the nodes could "
                  "plan from different versions of it: keep the file as it is until the step "
                  "starts, or submit again",
                  spec);
        else
            defer("--model: preset %s reads differently on this node than where the job was "
                  "submitted: install the same meshplan (and presets) on both",
                  spec);
        return;
    }
    /* --mesh-from, --mesh-keep: the restart read at submission, never the file here */
    char line[MESH_RESTART_STR_MAX];
    int restart = mesh_plugin.have_from || mesh_plugin.have_keep;
    if (restart && spank_getenv(sp, MESH_RESTART_ENV, line, sizeof(line)) != ESPANK_SUCCESS) {
        defer("--mesh-%s: the restart read at submission did not reach the step (%s is not "
              "in its environment: was it submitted with --export=NONE?)",
              mesh_plugin.have_from ? "from" : "keep", MESH_RESTART_ENV);
        return;
    }
    if (mesh_plugin_restart(restart ? line : NULL, &m, &err) < 0) {
        defer("%s", err.msg);
        return;
    }
    if (step_shape(sp, stepid, &s) < 0)
        return;
    mesh_topo_t *topo = node_topology(sp, stepid, &s, &failed);
    if (failed || step_alloc(stepid, topo, &s, &a) < 0) {
        mesh_topo_destroy(topo);
        return;
    }
    mesh_plan_t *p = mesh_plugin_plan(&m, &a, &err);
    if (!p) {
        defer("%s", err.msg);
        mesh_topo_destroy(topo);
        return;
    }
    char msg[sizeof(mesh_plugin.step_error)];
    mesh_verdict_t v = mesh_plan_verdict(p, mesh_plugin.policy.enforce, msg, sizeof(msg));
    if (v == MESH_VERDICT_REFUSE) {
        defer("%s", msg);
    } else {
        char *save = NULL; /* enforce=warn: srun's warning, line by line, in slurmd's log */
        for (char *l = strtok_r(msg, "\n", &save); v == MESH_VERDICT_WARN && l;
             l = strtok_r(NULL, "\n", &save))
            mesh_plugin_info("warning: %s", l);
        keep_explanation(p, &s);
        build_table(sp, p, &s, topo, jobid, stepid);
    }
    slurm_debug("meshplan: job %u step %u node %d: spec, topology (%s), plan %s and %d tasks' "
                "variables in %.3f ms",
                jobid, stepid, s.node, topo ? mesh_topo_links(topo) : "none", mesh_plan_digest(p),
                mesh_plugin.n_envs, now_ms() - t0);
    mesh_plan_destroy(p);
    mesh_topo_destroy(topo);
}

/* A broken configuration (logged by init) refuses the steps of a job that
 * gives meshplan's options, whichever steps= would have chosen (what steps=
 * says may be what is broken), or with on_config_error=reject every step:
 * from task_init, before the tasks start.  The extern step runs no task. */
static void configuration_broken(uint32_t stepid)
{
    if (stepid == STEP_EXTERN || (!mesh_plugin.config_reject && !mesh_plugin.asked))
        return;
    mesh_plugin.acting = 1;
    defer("%s\n%s", mesh_plugin.config_effect, mesh_plugin.config_error);
}

int mesh_stepd_user_init(spank_t sp)
{
    uint32_t jobid = 0, stepid = 0;
    spank_get_item(sp, S_JOB_ID, &jobid);
    spank_get_item(sp, S_JOB_STEPID, &stepid);
    if (mesh_plugin.config_error[0]) {
        configuration_broken(stepid);
        return 0;
    }
    if (!mesh_plugin.have_model || !wanted(stepid))
        return 0;
    mesh_plugin.acting = 1;
    if (spank_getenv(sp, MESH_SUBMIT_PLAN_ENV, mesh_plugin.submit_digest,
                     sizeof(mesh_plugin.submit_digest)) != ESPANK_SUCCESS)
        mesh_plugin.submit_digest[0] = '\0';
    if (spank_getenv(sp, MESH_SPEC_DIGEST_ENV, mesh_plugin.spec_digest,
                     sizeof(mesh_plugin.spec_digest)) != ESPANK_SUCCESS)
        mesh_plugin.spec_digest[0] = '\0';
    spank_unsetenv(sp, MESH_SUBMIT_PLAN_ENV); /* srun's business, not the tasks' */
    spank_unsetenv(sp, MESH_SPEC_DIGEST_ENV);
    if (mesh_plugin.option_error[0])
        defer("%s", mesh_plugin.option_error);
    else
        prepare(sp, jobid, stepid);
    return 0; /* never an error here: see the top of this file */
}

int mesh_stepd_task_init(spank_t sp)
{
    mesh_plugin_new_log(); /* this task's standard error: srun's, the user's log */
    if (mesh_plugin.step_error[0]) {
        char *save = NULL;
        for (char *line = strtok_r(mesh_plugin.step_error, "\n", &save); line;
             line = strtok_r(NULL, "\n", &save))
            mesh_plugin_error("%s", line);
        return -1;
    }
    if (!mesh_plugin.envs) {
        if (!mesh_plugin.acting)
            return 0; /* not a step for meshplan */
        /* every failure above defers a message; should one not, the task
         * still must not start without its variables */
        mesh_plugin_error("this node could not prepare the step's variables");
        return -1;
    }
    int local = -1;
    if (spank_get_item(sp, S_TASK_ID, &local) != ESPANK_SUCCESS || local < 0 ||
        local >= mesh_plugin.n_envs) {
        mesh_plugin_error("task %d has no entry in this node's table", local);
        return -1;
    }
    if (local == 0 && mesh_plugin.explanation) /* the task's stderr is srun's */
        fprintf(stderr, "meshplan: explained plan (made on the nodes)\n%s",
                mesh_plugin.explanation);
    if (local == 0 && mesh_plugin.record) /* one line, for meshplan calibrate */
        fputs(mesh_plugin.record, stderr);
    const mesh_env_t *e = mesh_plugin.envs[local];
    /* ours that this task is not given: none inherited may stand in */
    for (int i = 0; i < mesh_env_unset_count(e); i++) {
        spank_err_t rc = spank_unsetenv(sp, mesh_env_unset_name(e, i));
        if (rc != ESPANK_SUCCESS) {
            mesh_plugin_error("cannot unset %s: %s", mesh_env_unset_name(e, i), spank_strerror(rc));
            return -1;
        }
    }
    for (int i = 0; i < mesh_env_count(e); i++) {
        /* torch/torchrun variables yield to values the task already has */
        spank_err_t rc = spank_setenv(sp, mesh_env_name(e, i), mesh_env_value(e, i),
                                      !mesh_env_keep_existing(e, i));
        if (rc != ESPANK_SUCCESS && rc != ESPANK_ENV_EXISTS) {
            mesh_plugin_error("cannot set %s: %s", mesh_env_name(e, i), spank_strerror(rc));
            return -1;
        }
    }
    return 0;
}

void mesh_stepd_exit(void)
{
    free(mesh_plugin.explanation);
    mesh_plugin.explanation = NULL;
    free(mesh_plugin.record);
    mesh_plugin.record = NULL;
    for (int i = 0; i < mesh_plugin.n_envs; i++)
        mesh_env_destroy(mesh_plugin.envs[i]);
    free(mesh_plugin.envs);
    mesh_plugin.envs = NULL;
    mesh_plugin.n_envs = 0;
}
