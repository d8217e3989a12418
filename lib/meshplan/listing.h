/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan: the listings every front end shows alike, as text or JSON.
 *
 * Each returns a malloc'd string the caller frees with free(), or NULL when
 * memory runs out; json non-zero gives one JSON value ending in a newline,
 * its strings escaped as every JSON meshplan writes (mesh_json_string).
 * What `meshplan gpus`, `presets`, `topo` and `size` print.
 */
#ifndef MESHPLAN_LISTING_H
#define MESHPLAN_LISTING_H

#include "meshplan/api.h"
#include "meshplan/policy.h"
#include "meshplan/restart.h"
#include "meshplan/size.h"
#include "meshplan/spec.h"
#include "meshplan/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The GPU table as the policy's assumptions `as` make it
 * (mesh_policy_gpu_at): each GPU's figures, the ones the policy sets marked
 * '*' (JSON: "policy_sets"), the GPUs it defines after the table's, and the
 * product names --gpu takes.  as must not be NULL.
 */
MESH_API char *mesh_listing_gpus(const mesh_assumptions_t *as, int json);

/**
 * An admin's check of policy p, read from `path` (NULL: none, the
 * defaults): every top-level setting as it takes effect, marked where the
 * policy changes the default; the partitions with the GPU, memory, usable
 * memory, island and nodes plans get on each; warnings for what reads but
 * is most likely not meant (enforce=off, reserve and headroom leaving less
 * than half of each GPU, a partition without nodes); then "OK".  A policy
 * that does not read is mesh_policy_load's error, never this.  p must not
 * be NULL.
 */
MESH_API char *mesh_listing_policy(const mesh_policy_t *p, const char *path, int json);

/**
 * The presets of the search path d, each name once, from the directory that
 * wins its lookup (as mesh_spec_load finds it): name, parameters and
 * directory.  Files that do not load are left out.  d must not be NULL.
 */
MESH_API char *mesh_listing_presets(const mesh_spec_dirs_t *d, int json);

/**
 * A node's topology t as hwloc shows it (source names it: "this machine"
 * or the XML file): each GPU's bus id, PCI id, model, memory, NUMA node,
 * island and CPUs, and what the planner assumes of the node under policy
 * pol, or why it cannot use its GPUs.  t, source and pol must not be NULL.
 */
MESH_API char *mesh_listing_topo(const mesh_topo_t *t, const char *source, const mesh_policy_t *pol,
                                 int json);

/** The job a sizing is for, beyond its shape (mesh_listing_size). */
typedef struct mesh_size_job {
    const char *partition; /* its name, for messages; not NULL */
    long max_minutes;      /* the partition's MaxTime in minutes; 0: none known */
} mesh_size_job_t;

/**
 * A sizing sz of model m on allocations like a: every node count's layout,
 * step time, throughput and memory (a count without one: why), the choice
 * marked with its reason; with restart (not NULL), what it keeps of the
 * run saved in file `from`.  With a budget (train.tokens or train.steps),
 * the run of the choice (or, a deadline missed, of the fastest count) and
 * the time limit it needs with the margin, against job->max_minutes
 * (mesh_size_chain): one job's sbatch, or the chain of jobs and the shell
 * line that submits it (mesh_size_chain_recipe).  job may be NULL (no
 * time limit known).  sz, m and a must not be NULL.
 */
MESH_API char *mesh_listing_size(const mesh_size_t *sz, const mesh_model_t *m,
                                 const mesh_alloc_t *a, const mesh_restart_t *restart,
                                 const char *from, const mesh_size_job_t *job, int json);

#ifdef __cplusplus
}
#endif
#endif
