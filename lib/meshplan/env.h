/*
 * meshplan: the per-task environment (DESIGN section 7).
 *
 * Renders every variable a task of the job gets, from one table of names,
 * so that the plugin and `meshplan env` emit exactly the same.  Variables of
 * the torch and torchrun export modes never overwrite a value the task
 * already has (mesh_env_keep_existing); the MESH_* ones always win.
 */
#ifndef MESHPLAN_ENV_H
#define MESHPLAN_ENV_H

#include "meshplan/api.h"
#include "meshplan/plan.h"
#include "meshplan/policy.h"
#include "meshplan/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mesh_env mesh_env_t;

/* Where a task sits and what the launcher knows about the step. */
typedef struct mesh_task {
    int node;                /* node index within the step, 0-based */
    int local;               /* task index within the node, 0-based */
    const char *master_addr; /* first host of the step's node list */
    int master_port;
    mesh_export_t export_mode;
    const char *gpu_busid; /* NULL where topology is not known */
    int numa_node;         /* -1 where topology is not known or no node is closest */
    /* bind=gpu: the one device the task may see, in the step's own
     * numbering (NULL: leave what Slurm set) */
    const char *cuda_visible, *rocr_visible;
} mesh_task_t;

/* Fill the GPU fields of task (whose local index is set) from the node's
 * topology: its GPU's bus id and NUMA node and, with `bind`, the one device
 * it may see: the entry of step_visible (the step's CUDA_VISIBLE_DEVICES or
 * ROCR_VISIBLE_DEVICES; NULL: 0,1,...) at its GPU's position, kept in
 * buf[len].  Returns -1 if the node has fewer GPUs than the task needs. */
MESH_API int mesh_env_task_topology(mesh_task_t *task, const mesh_topo_t *t, int bind,
                                    const char *step_visible, char *buf, size_t len,
                                    mesh_error_t *err);

/* Render the variables of one task of plan p (which must fit or be pinned).
 * Returns NULL with err set if the task is outside the allocation. */
MESH_API mesh_env_t *mesh_env_create(const mesh_plan_t *p, const mesh_task_t *task,
                                     mesh_error_t *err);
MESH_API void mesh_env_destroy(mesh_env_t *e);

MESH_API int mesh_env_count(const mesh_env_t *e);
MESH_API const char *mesh_env_name(const mesh_env_t *e, int i);
MESH_API const char *mesh_env_value(const mesh_env_t *e, int i);
/* 1 if the variable must not replace a value the task already has. */
MESH_API int mesh_env_keep_existing(const mesh_env_t *e, int i);

/* MASTER_PORT for a job step: lo + (a mix of job and step id) mod (hi-lo+1),
 * so concurrent steps of one job, and jobs sharing a node, differ. */
MESH_API int mesh_env_master_port(unsigned long job_id, unsigned long step_id, int lo, int hi);

#ifdef __cplusplus
}
#endif
#endif
