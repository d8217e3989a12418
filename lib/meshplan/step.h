/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan: the decisions every front end makes about a job step before it
 * plans: the step's shape from Slurm's numbers, the GPUs a TRES string asks
 * for, whether the step's nodes are alike, and the allocation a node plans
 * for (its topology or the policy, with on_topology_error=fallback).
 *
 * srun and slurmstepd (meshplan.so), slurmctld (job_submit/meshplan) and the
 * CLI each read their numbers their own way and hand them here as plain
 * numbers and strings, so that one rule, with one message, decides for all.
 * Nothing here reads a file or knows Slurm's types; every function is
 * thread-safe and writes only what its arguments point to.
 */
#ifndef MESHPLAN_STEP_H
#define MESHPLAN_STEP_H

#include "meshplan/api.h"
#include "meshplan/error.h"
#include "meshplan/layout.h"
#include "meshplan/policy.h"
#include "meshplan/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A job step's shape: the numbers a plan is made for. */
typedef struct mesh_step {
    int nodes;          /* nodes of the step (of the whole job for its batch step) */
    int node;           /* this node's index among them; 0 where no node is meant */
    int tasks_per_node; /* tasks on every node; 0: not known (a job, not a step) */
    int gpus_per_node;  /* GPUs each node plans with; 0: not known here (a topology may tell) */
    double host_memory; /* the job's memory per node in bytes; 0: not known (nothing offloaded) */
} mesh_step_t;

/** How a step's tasks use a node's GPUs. */
typedef enum mesh_launch {
    MESH_LAUNCH_TASKS,    /**< one task per GPU (export=torch or mesh) */
    MESH_LAUNCH_TORCHRUN, /**< one launcher task per node, for all its GPUs (export=torchrun) */
    MESH_LAUNCH_JOB,      /**< the batch or interactive step: one launcher for the whole job */
} mesh_launch_t;

/** What srun or slurmstepd is told of a step, as plain numbers. */
typedef struct mesh_step_counts {
    long nodes;           /* nodes of the step (of the job for MESH_LAUNCH_JOB); 0: not known */
    long node;            /* this node's index in the step; 0 in srun */
    long tasks;           /* tasks of the step over all its nodes */
    long local_tasks;     /* tasks on this node; -1: not known (srun) */
    long gpus_on_node;    /* the step's GPUs on this node (SLURM_GPUS_ON_NODE); 0: not known */
    long ntasks_per_node; /* the job's --ntasks-per-node (SLURM_NTASKS_PER_NODE); 0: not given */
    long mem_per_node;    /* the job's memory per node in MiB (SLURM_MEM_PER_NODE); 0: not given */
} mesh_step_counts_t;

/** What slurmctld is told of a job at submission, as plain numbers and strings. */
typedef struct mesh_job_counts {
    long nodes;          /* --nodes (the minimum); 0: not given */
    long tasks;          /* --ntasks; 0: not given */
    long tasks_per_node; /* --ntasks-per-node; 0: not given */
    /* GPUs asked per node, per job, per task and per socket, as Slurm's TRES
     * strings (mesh_tres_gpus); NULL or "": none */
    const char *tres_per_node, *tres_per_job, *tres_per_task, *tres_per_socket;
    /* --mem in MiB; 0: not given (or given per CPU: that says nothing per node) */
    long mem_per_node;
} mesh_job_counts_t;

/**
 * The number of GPUs in a list of Slurm TRES (s may be NULL), such as
 * "gres/gpu:4", "gres:gpu:h100:2,cpu=4", "gpu=8" or "gres/gpu:h100" (a last
 * field that is not a number is a type, and the count is 1); entries are
 * separated by ',' or ';' and every GPU entry counts.  Returns the count,
 * 0 when s is NULL, empty or names no GPU, or -1 when it cannot be read: a
 * string of 512 bytes or more, or a count (one or the sum) over 2^20.
 */
MESH_API long mesh_tres_gpus(const char *s);

/**
 * The shape of a step as srun (c->local_tasks -1) or a node's slurmstepd
 * sees it, into *s (cleared first; host_memory from c->mem_per_node).
 *
 * Every node must run as many tasks as every other: c->tasks must split
 * evenly over c->nodes and, where known, this node's c->local_tasks must be
 * that share.  MESH_LAUNCH_TASKS plans one GPU per task, and refuses a node
 * where Slurm gives the step a different number of GPUs (c->gpus_on_node,
 * when known).  MESH_LAUNCH_TORCHRUN plans c->gpus_on_node GPUs per node (0
 * when not known: the node's topology tells, mesh_step_alloc) and, where the
 * node's tasks are known, refuses any but one launcher per node.
 * MESH_LAUNCH_JOB is the batch or interactive step: one task on node 0 of
 * the whole job (c->nodes), with c->gpus_on_node GPUs per node, else
 * c->ntasks_per_node; both must be known.
 *
 * Returns 0, or -1 with err set to the message for the user: the step's
 * counts cannot be read (no nodes or no tasks, c->node not among the
 * nodes, counts beyond an int), uneven tasks, a GPU count unlike the task
 * count, a torchrun step with several tasks per node, or a batch step
 * whose nodes or GPUs are not known.
 */
MESH_API int mesh_step_shape(const mesh_step_counts_t *c, mesh_launch_t launch, mesh_step_t *s,
                             mesh_error_t *err);

/**
 * The shape of a job as slurmctld sees it at submission, into *s (cleared
 * first; node 0, host_memory from c->mem_per_node).  Nodes: c->nodes, else
 * c->tasks / c->tasks_per_node, else 1.  Tasks per node: c->tasks_per_node,
 * else c->tasks when it splits evenly over the nodes, else 0 (not known).
 * GPUs per node: per node, else the job's GPUs split evenly over the nodes,
 * else per task times the tasks per node.
 *
 * Returns 0 with *s filled; 1 when the controller cannot tell and the nodes
 * must (the job asks for GPUs per socket only); -1 with err set to the
 * message for the user when a TRES string cannot be read, the job's GPUs
 * do not split evenly over its nodes, a node would have more than 2^20 GPUs,
 * the job asks for no GPU, or its tasks per node are neither its GPUs per
 * node nor one (a torchrun launcher).
 */
MESH_API int mesh_job_shape(const mesh_job_counts_t *c, mesh_step_t *s, mesh_error_t *err);

/**
 * Whether the n nodes of a step are alike enough to share one plan: node i
 * is called hosts[i] and its GPUs are described by gpus[i] (a GPU model as
 * "H100-SXM GPUs", or mesh_topo_signature's line; NULL: not known here, and
 * not compared).  Node 0 is the reference: when gpus[0] is NULL nothing is
 * compared.  hosts and gpus hold n entries (n 0 or more); hosts[i] is not
 * NULL where gpus[i] is not.
 *
 * Returns 0 when every known node's description equals node 0's, or -1 with
 * err naming the first that differs, node 0 and both descriptions.
 */
MESH_API int mesh_nodes_alike(int n, const char *const *hosts, const char *const *gpus,
                              mesh_error_t *err);

/**
 * Whether a node whose topology cannot be read may plan without it: with
 * on_topology_error=fallback and a GPU in the policy (gpu= or gpu_mem=) it
 * may.  err holds why the topology could not be read, and is extended with
 * what follows: returns 1 (plan with t NULL in mesh_step_alloc) and err says
 * what the node plans for instead, for the log; or -1 and err says how an
 * admin can let the node plan without it, for the user.
 */
MESH_API int mesh_step_fallback(const mesh_policy_t *pol, mesh_error_t *err);

/**
 * The allocation a node plans its share of step *s for, into *a: from t,
 * the node's topology (holding the step's GPUs only), where there is one;
 * from the policy's gpu= or gpu_mem= (mesh_policy_alloc) where t is NULL.
 * a->host_memory is s->host_memory: the job's, the same on every node, so
 * that no two nodes plan two layouts.  by_island is bind=gpu's task order
 * (mesh_topo_alloc).
 *
 * With t, one task per GPU: t must have s->tasks_per_node GPUs, except that
 * a torchrun launcher (launcher set, one task per node) or a step of
 * unknown tasks (0) takes t's count, which becomes s->gpus_per_node.  With
 * on_topology_error=fallback and a GPU in the policy, every node plans for
 * the policy's GPU, since a node that cannot read its topology does
 * (mesh_step_fallback): t then only has to show the policy's gpu=, and
 * s->gpus_per_node (t's count if 0) of them are planned for.  Without t,
 * s->gpus_per_node must be known.
 *
 * pol and s must not be NULL.  Returns 0, or -1 with err set: t's GPUs
 * cannot be used (mesh_topo_alloc), are not the policy's gpu= under
 * fallback, are not one per task, or there is neither t nor a GPU count;
 * or the policy names no GPU (mesh_policy_alloc).
 */
MESH_API int mesh_step_alloc(const mesh_policy_t *pol, const mesh_topo_t *t, int launcher,
                             int by_island, mesh_step_t *s, mesh_alloc_t *a, mesh_error_t *err);

/**
 * The positions of a step's GPUs among its node's, from Slurm's list of
 * them (the value of SLURM_STEP_GPUS or SLURM_JOB_GPUS, as "0,1,3" or
 * "0-3,6": Slurm numbers a node's GPUs in PCI order, or by /dev minor under
 * gpu_order=minor, which mesh_step_topology maps), into pos[0..max).  var
 * names the variable in errors.  Returns how many (0 for a NULL list: all
 * of the node's), or -1 with err set: an item that is no index or range of
 * indices below MESH_TOPO_MAX_GPUS, or more than max of them.
 */
MESH_API int mesh_step_gpu_list(const char *list, const char *var, int *pos, int max,
                                mesh_error_t *err);

/**
 * Narrow the node's topology t to the step's GPUs: pos[0..n) as
 * mesh_step_gpu_list read them, taken as /dev minors under the policy's
 * gpu_order=minor, else as positions in PCI order (mesh_topo_select).  n 0,
 * or a topology without GPUs, leaves t as it is.  Returns 0, or -1 with
 * err set (an index the node does not have).
 */
MESH_API int mesh_step_topology(const mesh_policy_t *pol, mesh_topo_t *t, const int *pos, int n,
                                mesh_error_t *err);

/**
 * The file of the policy's topology_xml= for node `host` (its "%n"
 * replaced by the name), into buf[len].  Returns 0, or -1 when it does not
 * fit.
 */
MESH_API int mesh_step_topology_file(const mesh_policy_t *pol, const char *host, char *buf,
                                     size_t len);

#ifdef __cplusplus
}
#endif
#endif
