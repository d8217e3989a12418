/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan.so: the SPANK plugin's shared state and its files, one per
 * Slurm context (as pyxis keeps them), with config.c and job.c shared:
 *
 * dispatch.c  SPANK_PLUGIN and the callbacks, sending each context to its file
 * config.c    plugstack.conf arguments and the --model/--mesh/... options
 * client.c    the client side (srun, sbatch, salloc): runs as the user, fails fast
 * stepd.c     the slurmstepd side: plans once per node, sets each task's env
 * job.c       model and plan of a job step (both sides)
 *
 * The controller's half is another plugin, job_submit/meshplan
 * (plugin/job_submit/).
 *
 * All the logic is libmeshplan's; this is glue.  Every message starts with
 * "meshplan: ", the first of a log with "meshplan VERSION: " (mesh_plugin_error).
 */
#ifndef MESHPLAN_PLUGIN_H
#define MESHPLAN_PLUGIN_H

#include <slurm/spank.h>

#include "meshplan.h"

#define MESH_SPEC_ARG_MAX 1024
/* Set at submission to the spec's absolute path, so that a step started in
 * another directory (srun --chdir) reads the same file. */
#define MESH_SPEC_PATH_ENV "MESH_SPEC_PATH"
/* Set at submission to the spec as read then, every key written out (a
 * preset's content too: mesh_request_encode's form), and to the --model
 * value it was read from: every step plans with what was submitted, so
 * that editing or deleting the file afterwards changes nothing and
 * slurmstepd reads no file of the user's.  An srun inside the job that
 * gives the same --model takes it too; another --model is read anew. */
#define MESH_SPEC_ENV       "MESHPLAN_SPEC"
#define MESH_SPEC_MODEL_ENV "MESHPLAN_SPEC_MODEL"
/* Set at submission to the restart --mesh-from read (mesh_restart_format),
 * so that slurmstepd, which must not read a user's file as root, and an
 * srun inside the job, which may run elsewhere, restart from the same. */
#define MESH_RESTART_ENV "MESHPLAN_RESTART"

typedef struct mesh_plugin {
    mesh_policy_t policy;
    /* A broken configuration (plugstack.conf arguments, the policy file):
     * the error, and what it does to jobs (on_config_error); "" when none */
    char config_error[MESH_ERROR_MAX + 32];
    char config_effect[MESH_ERROR_MAX + 160];
    int config_reject; /* on_config_error=reject, or unreadable: every job is refused */
    /* options */
    const char *asked; /* the first meshplan option the job gives ("model", ...); NULL: none */
    char option_error[MESH_ERROR_MAX + 32]; /* slurmstepd: a bad option value, reported late */
    char model[MESH_SPEC_ARG_MAX];
    int have_model;
    mesh_model_t spec; /* submit side: the spec as read in init_post_opt */
    int have_spec;
    mesh_layout_t pins;
    int have_export, explain, have_bind, bind;
    int have_size;     /* --mesh-size: narrow the job's node range, by size_goal */
    int have_headroom; /* --mesh-headroom: the spec's train.headroom, as the job asks it */
    double headroom;
    /* the goal as given (a name or by:WHEN), which the controller reads
     * again against its own clock */
    char size_goal[MESH_SIZE_GOAL_MAX];
    char from[MESH_SPEC_ARG_MAX]; /* --mesh-from FILE, read as the user at submission */
    int have_from;
    char keep[128]; /* --mesh-keep DIMS */
    int have_keep;
    mesh_restart_t restart; /* the restart --mesh-from gives, its kept dimensions in pins */
    int have_restart;
    mesh_export_t export_mode;
    char *explanation;      /* slurmstepd: the plan to print from the step's first task */
    char *record;           /* slurmstepd: its plan record (meshplan calibrate reads it) */
    int acting;             /* slurmstepd: this step wants the variables */
    char submit_digest[32]; /* slurmstepd: the plan srun checked, if it did */
    char spec_digest[32];   /* slurmstepd: the spec as read at submission */
    /* slurmstepd: the per-task table of this node, or the error to report */
    char step_error[4 * MESH_ERROR_MAX]; /* a no-fit message with its advice */
    mesh_env_t **envs;
    int n_envs;
} mesh_plugin_t;

extern mesh_plugin_t mesh_plugin;

/* config.c */
/* Log a message (slurm_error, slurm_info) as "meshplan: MESSAGE", or as
 * "meshplan VERSION: MESSAGE" when it is the first of its log: of the
 * process, or after mesh_plugin_new_log.  So every log says which meshplan
 * ran, where it helps most: beside the first thing it has to say. */
void mesh_plugin_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void mesh_plugin_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The next message starts a log (a task's standard error, which is srun's,
 * or a configuration error): it says the version. */
void mesh_plugin_new_log(void);
/* Read the plugstack.conf arguments into mesh_plugin.policy.  Returns 0,
 * or -1 when the configuration is broken: then config_error,
 * config_effect and config_reject are set (meshplan(8), "CONFIGURATION
 * ERRORS"), for the caller to log where someone should read them. */
int mesh_plugin_config(int ac, char **av);
/* Log a broken configuration: what it does to jobs, then what is wrong. */
void mesh_plugin_config_log(void);
int mesh_plugin_register_options(spank_t sp);
mesh_export_t mesh_plugin_export_mode(void);
int mesh_plugin_bind(void);

/* job.c: the model and the plan of a step (its shape: mesh_step_t, lib/meshplan/step.h) */
int mesh_plugin_load_model(const char *spec, mesh_model_t *m, mesh_error_t *err);
/* The job's memory per node from Slurm's SLURM_MEM_PER_NODE (megabytes), or
 * 0 when not given (then nothing is offloaded to the host). */
long mesh_plugin_mem_per_node(const char *mem_per_node);
/* How the step's tasks use their node's GPUs, per --mesh-export. */
mesh_launch_t mesh_plugin_launch(void);
mesh_plan_t *mesh_plugin_plan(const mesh_model_t *m, const mesh_alloc_t *a, mesh_error_t *err);
/* Set at submission to the digest of the spec as read then (mesh_model_digest);
 * every node refuses a carried spec that reads otherwise (damaged on the
 * way), or, where none was carried (--export=NONE), a file that reads
 * differently at step start, so that no two nodes plan from two versions of
 * a file the user is editing. */
#define MESH_SPEC_DIGEST_ENV "MESHPLAN_SPEC_DIGEST"
/* Set by srun to the digest of the plan it checked; slurmstepd compares it
 * with its own and removes it before the tasks start. */
#define MESH_SUBMIT_PLAN_ENV "MESHPLAN_SUBMIT_PLAN"

/* Apply --mesh-from and --mesh-keep to model m: the restart from `line`
 * (MESH_RESTART_ENV's, carried from submission) or, when line is NULL, from
 * the file, read as the caller; its kept dimensions pinned.  0, or -1 with
 * err set (naming the option). */
int mesh_plugin_restart(const char *line, const mesh_model_t *m, mesh_error_t *err);

/* The spec carried with the job (MESH_SPEC_ENV's text) into *m.  0, or -1
 * with err saying it is damaged. */
int mesh_plugin_carried_spec(const char *text, mesh_model_t *m, mesh_error_t *err);

/* client.c */
int mesh_submit_post_opt(spank_t sp);
int mesh_submit_local_user_init(spank_t sp);

/* stepd.c */
int mesh_stepd_post_opt(spank_t sp);
int mesh_stepd_user_init(spank_t sp);
int mesh_stepd_task_init(spank_t sp);
void mesh_stepd_exit(void);

#endif
