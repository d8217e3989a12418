/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan: the controller's judgement of a job at submission.
 *
 * job_submit/meshplan (slurmctld) sees no node: it plans a job for the GPU
 * the policy gives the job's partition (its `partitions:`), and per
 * `enforce` lets it through, warns or refuses it before it is queued.  The
 * CLI's `--partition` asks the same question of the same function, so that
 * an admin or a user can reproduce what the controller decided, in its
 * words.  Nothing here reads a file or knows Slurm's types.
 */
#ifndef MESHPLAN_SUBMIT_H
#define MESHPLAN_SUBMIT_H

#include "meshplan/api.h"
#include "meshplan/error.h"
#include "meshplan/layout.h"
#include "meshplan/policy.h"
#include "meshplan/report.h"
#include "meshplan/spec.h"
#include "meshplan/step.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MESH_SUBMIT_MSG_MAX (4 * MESH_ERROR_MAX) /* bytes of a verdict's message, with its NUL */

/** What the controller decides about a job (mesh_submit_judge). */
typedef struct mesh_submit {
    /** RUN: accept it silently; WARN: accept it and tell the user msg;
     * REFUSE: refuse it with msg. */
    mesh_verdict_t verdict;
    /** 1 when a plan (or the partition's node count) decided; 0 when the
     * job passed unjudged: enforce=off, or the policy gives the deciding
     * partition no GPU (msg then says why, for the log: the nodes judge the
     * job at launch). */
    int judged;
    /** The partition that decided: the first of the list that accepts the
     * job, else the first; its index in the list, its name as the job
     * wrote it ("" when the job names none) and its policy entry (NULL:
     * none, the policy's own gpu= applies), a pointer into the policy that
     * was judged with. */
    int index;
    char partition[64];
    const mesh_partition_t *entry;
    /** WARN and REFUSE: the message for the user, lines joined by '\n',
     * without a front end's prefix ("meshplan: ", "error: "); unjudged:
     * why; else "". */
    char msg[MESH_SUBMIT_MSG_MAX];
} mesh_submit_t;

/**
 * The allocation the controller plans a job of shape *s for in partition
 * `name` (NULL or "": the job names none), into *a: the GPU, memory and
 * NVLink island of the policy's entry for it (mesh_policy_partition: that
 * name, else "default"), each falling back to the policy's own (gpu=,
 * gpu_mem=), as mesh_policy_alloc describes it, for s->nodes nodes of
 * s->gpus_per_node GPUs and s->host_memory.  pol, s and a must not be NULL.
 *
 * Returns 0, or -1 with err set when the policy names no GPU for the
 * partition (the controller then leaves the job to the nodes) or names an
 * unknown one.
 */
MESH_API int mesh_partition_alloc(const mesh_policy_t *pol, const char *name, const mesh_step_t *s,
                                  mesh_alloc_t *a, mesh_error_t *err);

/**
 * Judge a job at submission, as job_submit/meshplan does: model *m with the
 * fields *pins pins, of shape *s (mesh_job_shape), submitted to
 * `partitions` (Slurm's comma-separated list; NULL or "": none), under the
 * policy *pol.  Into *out (cleared first).
 *
 * enforce=off accepts the job unjudged.  Otherwise each partition of the
 * list is judged in turn (names sharing a policy entry once): a partition
 * whose entry gives no GPU (nor does the policy) accepts the job unjudged;
 * one with fewer `nodes` than the job asks for does not fit it; otherwise
 * the job fits if any layout fits the partition's allocation
 * (mesh_partition_alloc), and if none does the message is
 * mesh_plan_verdict's.  The first partition that accepts decides (RUN);
 * when none does, the verdict is WARN (enforce=warn) or REFUSE
 * (enforce=reject) with the first partition's reason, which, for a list of
 * several, starts "in partition NAME: " and ends with a line saying it
 * fits none of the N partitions the job names.
 *
 * pol, m, pins, s and out must not be NULL; nothing is kept.  Returns
 * out->verdict.
 */
MESH_API mesh_verdict_t mesh_submit_judge(const mesh_policy_t *pol, const char *partitions,
                                          const mesh_model_t *m, const mesh_layout_t *pins,
                                          const mesh_step_t *s, mesh_submit_t *out);

#ifdef __cplusplus
}
#endif
#endif
