/*
 * The submit side: srun, sbatch and salloc, running as the user.
 *
 * It fails fast: a spec that does not parse stops the command before
 * anything is queued, and in srun, where the step's shape is known, a
 * layout that does not fit stops the step before any task starts (when
 * the policy says reject).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

int mesh_submit_post_opt(spank_t sp)
{
    if (!mesh_plugin.have_model)
        return 0;
    mesh_error_t err;
    if (mesh_plugin_load_model(mesh_plugin.model, &mesh_plugin.spec, &err) < 0) {
        slurm_error("meshplan: --model: %s", err.msg);
        return -1;
    }
    mesh_plugin.have_spec = 1; /* srun plans with it in local_user_init */
    /* The step may start elsewhere (srun --chdir, sbatch --chdir): hand it
     * the absolute path.  Read as the user there too, so nothing is gained
     * by forging it. */
    if (mesh_spec_is_path(mesh_plugin.model)) {
        char abs[PATH_MAX];
        if (!realpath(mesh_plugin.model, abs)) {
            slurm_error("meshplan: --model: %s: %s", mesh_plugin.model, strerror(errno));
            return -1;
        }
        setenv(MESH_SPEC_PATH_ENV, abs, 1);
    } else {
        unsetenv(MESH_SPEC_PATH_ENV);
    }
    return 0;
}

/* The shape srun is about to launch: the same number of tasks on every node. */
static int step_shape(spank_t sp, mesh_step_t *s)
{
    uint32_t nodes = 0, tasks = 0;
    if (spank_get_item(sp, S_JOB_NNODES, &nodes) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &tasks) != ESPANK_SUCCESS || nodes == 0)
        return 0; /* unknown here: slurmstepd checks */
    if (tasks % nodes) {
        slurm_error("meshplan: %u tasks on %u nodes: a 3D layout needs the same number of tasks "
                    "on every node (use --ntasks-per-node)",
                    tasks, nodes);
        return -1;
    }
    memset(s, 0, sizeof(*s));
    s->nodes = (int)nodes;
    s->tasks_per_node = (int)(tasks / nodes);
    s->gpus_per_node = s->tasks_per_node;
    if (mesh_plugin_export_mode() == MESH_EXPORT_TORCHRUN) {
        /* one launcher per node; its GPUs are what the node was given */
        const char *g = getenv("SLURM_GPUS_ON_NODE");
        s->gpus_per_node = g ? atoi(g) : 0;
        if (s->gpus_per_node <= 0)
            return 0; /* slurmstepd knows; it checks */
    }
    return 1;
}

int mesh_submit_local_user_init(spank_t sp)
{
    if (!mesh_plugin.have_spec)
        return 0;
    mesh_step_t s;
    int rc = step_shape(sp, &s);
    if (rc <= 0)
        return rc;
    /* srun knows no node's GPUs: it checks early only with what the policy
     * declares (gpu= or gpu_mem=); slurmstepd, which sees the topology, decides */
    const mesh_policy_t *pol = &mesh_plugin.policy;
    if (!pol->gpu[0] && pol->gpu_mem <= 0)
        return 0;
    mesh_error_t err;
    mesh_alloc_t a;
    mesh_plan_t *p = NULL;
    if (mesh_plugin_policy_alloc(&s, &a, &err) == 0)
        p = mesh_plugin_plan(&mesh_plugin.spec, &a, &err);
    if (!p) {
        slurm_error("meshplan: %s", err.msg);
        return -1;
    }
    setenv(MESH_SUBMIT_PLAN_ENV, mesh_plan_digest(p), 1);
    if (mesh_plugin.explain) {
        char *text = mesh_report_text(p);
        if (text)
            fprintf(stderr, "meshplan: explained plan\n%s", text);
        free(text);
    }
    rc = 0;
    if (!mesh_plan_fits(p) && mesh_plugin.policy.enforce != MESH_ENFORCE_OFF) {
        char msg[4096];
        mesh_plugin_nofit_message(p, msg, sizeof(msg));
        int reject = mesh_plugin.policy.enforce == MESH_ENFORCE_REJECT;
        for (char *line = strtok(msg, "\n"); line; line = strtok(NULL, "\n")) {
            if (reject)
                slurm_error("meshplan: %s", line);
            else
                fprintf(stderr, "meshplan: warning: %s\n", line);
        }
        rc = reject ? -1 : 0;
    }
    mesh_plan_destroy(p);
    return rc;
}
