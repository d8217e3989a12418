/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The client side: srun, sbatch and salloc, running as the user.
 *
 * It fails fast: a spec that does not parse stops the command before
 * anything is queued, and in srun, where the step's shape is known, a
 * layout that does not fit stops the step before any task starts (when
 * the policy says reject).  While the configuration is broken, a job that
 * gives meshplan's options is refused here with it.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../slurm_compat.h"

#include "plugin.h"

int mesh_submit_post_opt(spank_t sp)
{
    if (mesh_plugin.config_error[0] && mesh_plugin.asked) {
        mesh_plugin_config_log();
        mesh_plugin_error("--%s: refused while meshplan's configuration is broken (the error "
                          "above): the cluster's admins must fix it",
                          mesh_plugin.asked);
        return -1;
    }
    if (mesh_plugin.have_size && !mesh_plugin.have_model) {
        mesh_plugin_error("--mesh-size: give the model to size the job for (--model)");
        return -1;
    }
    if (!mesh_plugin.have_model)
        return 0;
    mesh_error_t err;
    /* an srun inside the job giving the job's --model plans with what was
     * submitted (MESH_SPEC_ENV); anything else reads its spec now */
    const char *spec = getenv(MESH_SPEC_ENV), *from = getenv(MESH_SPEC_MODEL_ENV);
    int inherited = spank_context() == S_CTX_LOCAL && getenv("SLURM_JOB_ID") && spec && from &&
                    strcmp(from, mesh_plugin.model) == 0;
    if (inherited ? mesh_plugin_carried_spec(spec, &mesh_plugin.spec, &err) < 0
                  : mesh_plugin_load_model(mesh_plugin.model, &mesh_plugin.spec, &err) < 0) {
        mesh_plugin_error("--model: %s", err.msg);
        return -1;
    }
    /* a restart pins what its checkpoint keeps before anything plans: the
     * controller's request carries the pins, the nodes the line.  An srun
     * inside the job (a step: its options are sbatch's) takes the line
     * sbatch carried, not the file again, which it may not see from where
     * it runs; a new job (sbatch, salloc, srun outside an allocation, even
     * from inside another job) reads its file */
    const char *carried = getenv(MESH_RESTART_ENV);
    int step = spank_context() == S_CTX_LOCAL && getenv("SLURM_JOB_ID") && carried;
    if (mesh_plugin_restart(step ? carried : NULL, &mesh_plugin.spec, &err) < 0) {
        mesh_plugin_error("%s", err.msg);
        return -1;
    }
    if (mesh_plugin.have_restart) {
        char line[MESH_RESTART_STR_MAX];
        if (mesh_restart_format(&mesh_plugin.restart, line, sizeof(line), &err) < 0) {
            mesh_plugin_error("--mesh-from: %s", err.msg);
            return -1;
        }
        setenv(MESH_RESTART_ENV, line, 1);
    } else {
        unsetenv(MESH_RESTART_ENV);
    }
    /* pins no allocation could take stop the command here, in the CLI's
     * words, rather than at the controller or on the nodes */
    if (mesh_layout_check_pins(&mesh_plugin.spec, &mesh_plugin.pins, &err) < 0) {
        mesh_plugin_error("--mesh: %s (on any allocation of %s)", err.msg, mesh_plugin.spec.name);
        return -1;
    }
    mesh_plugin.have_spec = 1; /* srun plans with it in local_user_init */
    char digest[17], request[MESH_REQUEST_MAX];
    setenv(MESH_SPEC_DIGEST_ENV, mesh_model_digest(&mesh_plugin.spec, digest), 1);
    /* the spec itself goes with the job, for every step to plan with */
    mesh_layout_t unpinned;
    mesh_layout_unpin(&unpinned);
    if (mesh_request_encode(&mesh_plugin.spec, &unpinned, request, sizeof(request), &err) < 0) {
        mesh_plugin_error("--model: %s", err.msg);
        return -1;
    }
    setenv(MESH_SPEC_ENV, request, 1);
    setenv(MESH_SPEC_MODEL_ENV, mesh_plugin.model, 1);
    /* for job_submit/meshplan, which cannot read the user's file: a new
     * job's control environment (srun inside an allocation has none) */
    if (mesh_request_encode(&mesh_plugin.spec, &mesh_plugin.pins, request, sizeof(request), &err) <
        0) {
        mesh_plugin_error("--model: %s", err.msg);
        return -1;
    }
    spank_job_control_setenv(sp, MESH_REQUEST_ENV, request, 1);
    if (mesh_plugin.have_size)
        spank_job_control_setenv(sp, MESH_SIZE_ENV, mesh_plugin.size_goal, 1);
    /* The step may start elsewhere (srun --chdir, sbatch --chdir): hand it
     * the absolute path.  Read as the user there too, so nothing is gained
     * by forging it.  The job's srun read no file: the submission's stays. */
    if (inherited)
        return 0;
    if (mesh_spec_is_path(mesh_plugin.model)) {
        char abs[PATH_MAX];
        if (!realpath(mesh_plugin.model, abs)) {
            mesh_plugin_error("--model: %s: %s", mesh_plugin.model, strerror(errno));
            return -1;
        }
        setenv(MESH_SPEC_PATH_ENV, abs, 1);
    } else {
        unsetenv(MESH_SPEC_PATH_ENV);
    }
    return 0;
}

/* The shape srun is about to launch: 1, or 0 when srun cannot tell (then
 * slurmstepd checks), or -1 after saying why it cannot run. */
static int step_shape(spank_t sp, mesh_step_t *s)
{
    uint32_t nodes = 0, tasks = 0;
    mesh_error_t err;
    if (spank_get_item(sp, S_JOB_NNODES, &nodes) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &tasks) != ESPANK_SUCCESS || nodes == 0)
        return 0; /* unknown here: slurmstepd checks */
    mesh_launch_t launch = mesh_plugin_launch();
    /* srun's SLURM_GPUS_ON_NODE is the allocation's, not the step's: it
     * says only what a torchrun launcher gets, all of the node's */
    const char *g = getenv("SLURM_GPUS_ON_NODE");
    mesh_step_counts_t c = {
        .nodes = nodes,
        .tasks = tasks,
        .local_tasks = -1, /* srun runs on no node of the step */
        .gpus_on_node = launch == MESH_LAUNCH_TORCHRUN && g ? atoi(g) : 0,
        /* srun sees the job's memory only inside an allocation */
        .mem_per_node = mesh_plugin_mem_per_node(getenv("SLURM_MEM_PER_NODE")),
    };
    if (mesh_step_shape(&c, launch, s, &err) < 0) {
        mesh_plugin_error("%s", err.msg);
        return -1;
    }
    return s->gpus_per_node > 0; /* a launcher's GPUs: slurmstepd knows; it checks */
}

/* srun compares the first this many nodes and leaves the rest to the
 * nodes themselves: a file costs about 0.4 ms to load. */
#define MESH_SUBMIT_MAX_NODE_FILES 256

typedef struct node_gpus {
    char host[256], gpus[64];
} node_gpus_t;

/* The GPUs in n's topology file ("H100-SXM GPUs"); NULL when srun cannot
 * tell (no such file here, no GPU in it), which leaves the question to the
 * node. */
static const char *node_gpus(node_gpus_t *n)
{
    char path[MESH_PATH_MAX + 256];
    mesh_error_t err;
    mesh_gpu_t g;
    if (mesh_step_topology_file(&mesh_plugin.policy, n->host, path, sizeof(path)) < 0)
        return NULL;
    mesh_topo_t *t = mesh_topo_load(path, &err);
    int ok = t && mesh_topo_gpu_count(t) > 0 &&
             mesh_topo_gpu_model(t, 0, &mesh_plugin.policy.assume, &g, &err) == 0;
    if (ok)
        snprintf(n->gpus, sizeof(n->gpus), "%s GPUs", g.name);
    mesh_topo_destroy(t);
    return ok ? n->gpus : NULL;
}

/* With one topology file per node (topology_xml=.../%n.xml) srun sees every
 * node of the step before any task starts.  A node whose GPUs differ from
 * the first node's would refuse only its own tasks, after the other nodes'
 * had started; so srun refuses the whole step here.  Islands are left to
 * the nodes: they depend on which of a node's GPUs the step gets. */
static int nodes_alike(void)
{
    const char *list = getenv("SLURM_NODELIST"); /* srun sets the step's */
    if (!strstr(mesh_plugin.policy.launch.topology_xml, "%n") || !list)
        return 0;
    mesh_hostlist_t hl = slurm_hostlist_create(list);
    node_gpus_t *node = calloc(MESH_SUBMIT_MAX_NODE_FILES, sizeof(*node));
    const char *hosts[MESH_SUBMIT_MAX_NODE_FILES], *gpus[MESH_SUBMIT_MAX_NODE_FILES];
    mesh_error_t err;
    char *host;
    int n = 0, rc = 0;
    while (hl && node && n < MESH_SUBMIT_MAX_NODE_FILES && (host = slurm_hostlist_shift(hl))) {
        snprintf(node[n].host, sizeof(node[n].host), "%s", host);
        free(host);
        hosts[n] = node[n].host;
        /* when the first node's GPUs are unknown, nothing is compared */
        gpus[n] = n == 0 || gpus[0] ? node_gpus(&node[n]) : NULL;
        n++;
    }
    if (mesh_nodes_alike(n, hosts, gpus, &err) < 0) {
        mesh_plugin_error("%s", err.msg);
        rc = -1;
    }
    free(node);
    if (hl)
        slurm_hostlist_destroy(hl);
    return rc;
}

int mesh_submit_local_user_init(spank_t sp)
{
    if (!mesh_plugin.have_spec)
        return 0;
    mesh_step_t s;
    int rc = step_shape(sp, &s);
    if (rc <= 0)
        return rc;
    if (nodes_alike() < 0)
        return -1;
    /* srun knows no node's GPUs: it checks early only with what the policy
     * declares (gpu= or gpu_mem=); slurmstepd, which sees the topology, decides */
    const mesh_policy_t *pol = &mesh_plugin.policy;
    if (!pol->assume.gpu[0] && pol->assume.gpu_mem <= 0)
        return 0;
    mesh_error_t err;
    mesh_alloc_t a;
    mesh_plan_t *p = NULL;
    if (mesh_step_alloc(pol, NULL, mesh_plugin_launch() == MESH_LAUNCH_TORCHRUN, mesh_plugin_bind(),
                        &s, &a, &err) == 0)
        p = mesh_plugin_plan(&mesh_plugin.spec, &a, &err);
    if (!p) {
        mesh_plugin_error("%s", err.msg);
        return -1;
    }
    setenv(MESH_SUBMIT_PLAN_ENV, mesh_plan_digest(p), 1);
    if (mesh_plugin.explain) {
        int color = mesh_picture_color(STDERR_FILENO, getenv("NO_COLOR"), getenv("TERM"));
        mesh_picture_opts_t po = mesh_picture_opts_for(STDERR_FILENO, color);
        char *text =
            mesh_report_explained(p, mesh_plugin.have_restart ? &mesh_plugin.restart : NULL, &po);
        if (text)
            fprintf(stderr, "meshplan: explained plan\n%s", text);
        free(text);
    }
    rc = 0;
    /* A step that would fit with the optimizer offloaded, where srun cannot
     * see the job's memory, is left to the nodes, which can */
    mesh_alloc_t ample = a;
    ample.host_memory = 1e18;
    if (!mesh_plan_fits(p) && s.host_memory <= 0 &&
        mesh_plan_any_fits(&mesh_plugin.spec, &ample, &mesh_plugin.pins,
                           &mesh_plugin.policy.assume)) {
        mesh_plan_destroy(p);
        return 0;
    }
    char msg[4096];
    mesh_verdict_t v = mesh_plan_verdict(p, mesh_plugin.policy.enforce, msg, sizeof(msg));
    if (v != MESH_VERDICT_RUN) {
        int reject = v == MESH_VERDICT_REFUSE;
        for (char *line = strtok(msg, "\n"); line; line = strtok(NULL, "\n")) {
            if (reject)
                mesh_plugin_error("%s", line);
            else
                fprintf(stderr, "meshplan: warning: %s\n", line);
        }
        rc = reject ? -1 : 0;
    }
    mesh_plan_destroy(p);
    return rc;
}
