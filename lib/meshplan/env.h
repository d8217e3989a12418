/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan: the per-task environment (doc/design.md, "Per-task environment").
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
#include "meshplan/restart.h"
#include "meshplan/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The variables of lib/env.c's table that other code names too (the
 * restart reads them back, the reports show one): spelled here once, and
 * the table spells them with these. */
#define MESH_ENV_PLAN            "MESH_PLAN"              /* the layout, as --mesh */
#define MESH_ENV_GLOBAL_BATCH    "MESH_GLOBAL_BATCH_SIZE" /* sequences per step */
#define MESH_ENV_MAX_CONNECTIONS "CUDA_DEVICE_MAX_CONNECTIONS"

/** One task's variables, opaque: made by mesh_env_create, freed by mesh_env_destroy. */
typedef struct mesh_env mesh_env_t;

/**
 * Where a task sits and what the launcher knows about the step.  The
 * caller's storage; the strings are the caller's too (mesh_env_create
 * copies what it renders).
 */
typedef struct mesh_task {
    int node;                  /* node index within the step, 0-based */
    int local;                 /* task index within the node, 0-based */
    const char *master_addr;   /* first host of the step's node list */
    int master_port;           /* see mesh_env_master_port */
    mesh_export_t export_mode; /* which launcher variables to render */
    const char *gpu_busid;     /* NULL where topology is not known */
    int numa_node;             /* -1 where topology is not known or no node is closest */
    /* bind=gpu: the one device the task may see, in the step's own
     * numbering (NULL: leave what Slurm set) */
    const char *cuda_visible, *rocr_visible;
    /* a restart (mesh_restart_pins made the plan's pins): MESH_RESHARD says
     * which dimensions changed against it; NULL: not a restart, no
     * MESH_RESHARD.  The caller's, read only during mesh_env_create */
    const mesh_restart_t *restart;
} mesh_task_t;

/**
 * Fill the GPU fields of task (whose local index is set) from the node's
 * topology: its GPU's bus id and NUMA node and, with `bind`, the one device
 * it may see: the entry of step_visible (the step's CUDA_VISIBLE_DEVICES or
 * ROCR_VISIBLE_DEVICES; NULL: 0,1,...) at its GPU's position, kept in
 * buf[len] (ROCR for an AMD GPU, CUDA otherwise; the other is set NULL).
 *
 * `bind` also picks the GPU: with it, tasks take the GPUs island by island
 * (mesh_topo_task_order's by_island), without it in PCI order.
 * task->gpu_busid then points into t and task->cuda_visible or
 * rocr_visible to buf: both must outlive the task's use.  Returns 0, or -1
 * with err set if the node has fewer GPUs than the task needs (task
 * untouched) or the step's list has no entry at the GPU's position, or the
 * entry does not fit buf (the bus id and NUMA node are then already set).
 */
MESH_API int mesh_env_task_topology(mesh_task_t *task, const mesh_topo_t *t, int bind,
                                    const char *step_visible, char *buf, size_t len,
                                    mesh_error_t *err);

/**
 * Render the variables of one task of plan p: the MESH_* ones always, and
 * those of task->export_mode (torch: RANK, WORLD_SIZE, MASTER_ADDR, ...;
 * torchrun: PET_*, without the per-rank ones).  MESH_GPU_BUSID,
 * MESH_NUMA_NODE and CUDA_/ROCR_VISIBLE_DEVICES only where task gives
 * them, MESH_RESHARD only for a restart (task->restart).  The chosen
 * layout is rendered whether it fits or not: the caller decides (the plan
 * should fit or be pinned).
 *
 * Returns a new environment, which the caller frees with mesh_env_destroy;
 * it copies what it needs, so p and task may go first.  NULL with err set
 * if the task is outside the allocation (node, or local index; one task
 * per node under torchrun), master_addr is NULL or empty, or memory runs
 * out.  Thread-safe.
 */
MESH_API mesh_env_t *mesh_env_create(const mesh_plan_t *p, const mesh_task_t *task,
                                     mesh_error_t *err);

/** Free an environment and its strings.  e may be NULL. */
MESH_API void mesh_env_destroy(mesh_env_t *e);

/**
 * The environment's variables, 0 <= i < mesh_env_count(e), in a fixed
 * order.  mesh_env_name returns a static string, mesh_env_value one owned
 * by e (valid until mesh_env_destroy(e)); both return NULL for an i out of
 * range.
 */
MESH_API int mesh_env_count(const mesh_env_t *e);
MESH_API const char *mesh_env_name(const mesh_env_t *e, int i);
MESH_API const char *mesh_env_value(const mesh_env_t *e, int i);

/**
 * 1 if variable i must not replace a value the task already has (the
 * launcher variables of the torch and torchrun modes); 0 if it must (the
 * MESH_* ones), or if i is out of range.
 */
MESH_API int mesh_env_keep_existing(const mesh_env_t *e, int i);

/**
 * meshplan's own variables (MESH_*) of the table that this task is not
 * given, 0 <= i < mesh_env_unset_count(e), in the same fixed order: the
 * plugin removes them from the task (and `meshplan env --shell` unsets
 * them), so that a value inherited from the batch step's plan or another
 * step's cannot stand in for one withheld, such as a LoRA plan's
 * MESH_MEGATRON_ARGS.  Static strings; NULL for an i out of range.
 */
MESH_API int mesh_env_unset_count(const mesh_env_t *e);
MESH_API const char *mesh_env_unset_name(const mesh_env_t *e, int i);

/**
 * MASTER_PORT for a job step: lo + (job_id*131 + step_id) mod (hi-lo+1),
 * so concurrent steps of one job get consecutive ports and jobs sharing a
 * node are spread; lo if hi < lo.
 */
MESH_API int mesh_env_master_port(unsigned long job_id, unsigned long step_id, int lo, int hi);

#ifdef __cplusplus
}
#endif
#endif
