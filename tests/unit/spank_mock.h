/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A fake SPANK host for the plugin's unit tests: the job's items, its
 * environment and what the plugin logged, all inspectable.
 */
#ifndef MESH_SPANK_MOCK_H
#define MESH_SPANK_MOCK_H

#include <slurm/spank.h>

#define MOCK_VARS 128

typedef struct mock_job {
    spank_context_t ctx;
    uint32_t job_id, step_id, nnodes, nodeid, local_tasks, total_tasks;
    int task_id;
    int n_env;
    char *env_name[MOCK_VARS], *env_value[MOCK_VARS];
    int n_options;
    struct spank_option options[16];
    char last_error[2048];
    char error_log[8192]; /* every slurm_error line, each ending in a newline */
    char info[4096];      /* every slurm_info line, each ending in a newline */
    int errors;
    const char *fail_env; /* spank_setenv and spank_unsetenv of this name fail */
} mock_job_t;

extern mock_job_t mock;

/* Forget everything, then describe a job step of nodes x tasks. */
void mock_reset(spank_context_t ctx);
void mock_step(uint32_t step_id, uint32_t nnodes, uint32_t nodeid, uint32_t tasks_per_node);
void mock_setenv(const char *name, const char *value);
const char *mock_getenv(const char *name);
/* Call the callback of a registered option, as Slurm would. */
int mesh_test_option(const char *name, const char *arg, int remote);

#endif
