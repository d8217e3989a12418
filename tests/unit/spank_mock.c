/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The SPANK and libslurm functions meshplan.so calls, faked for its tests.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../plugin/slurm_compat.h"

#include "spank_mock.h"

mock_job_t mock;

void mock_reset(spank_context_t ctx)
{
    for (int i = 0; i < mock.n_env; i++) {
        free(mock.env_name[i]);
        free(mock.env_value[i]);
    }
    memset(&mock, 0, sizeof(mock));
    mock.ctx = ctx;
    mock.task_id = -1;
}

void mock_step(uint32_t step_id, uint32_t nnodes, uint32_t nodeid, uint32_t tasks_per_node)
{
    mock.job_id = 4242;
    mock.step_id = step_id;
    mock.nnodes = nnodes;
    mock.nodeid = nodeid;
    mock.local_tasks = tasks_per_node;
    mock.total_tasks = nnodes * tasks_per_node;
    mock_setenv("SLURM_STEP_NODELIST", "n[1-4]");
}

static int find(const char *name)
{
    for (int i = 0; i < mock.n_env; i++)
        if (strcmp(mock.env_name[i], name) == 0)
            return i;
    return -1;
}

void mock_setenv(const char *name, const char *value)
{
    int i = find(name);
    if (i < 0) {
        i = mock.n_env++;
        mock.env_name[i] = strdup(name);
    } else {
        free(mock.env_value[i]);
    }
    mock.env_value[i] = strdup(value);
}

const char *mock_getenv(const char *name)
{
    int i = find(name);
    return i < 0 ? NULL : mock.env_value[i];
}

spank_context_t spank_context(void)
{
    return mock.ctx;
}

int spank_remote(spank_t sp)
{
    return mock.ctx == S_CTX_REMOTE;
}

spank_err_t spank_option_register(spank_t sp, struct spank_option *opt)
{
    if (mock.n_options == (int)(sizeof(mock.options) / sizeof(mock.options[0])))
        return ESPANK_ERROR;
    mock.options[mock.n_options++] = *opt;
    return ESPANK_SUCCESS;
}

int mesh_test_option(const char *name, const char *arg, int remote)
{
    for (int i = 0; i < mock.n_options; i++)
        if (strcmp(mock.options[i].name, name) == 0)
            return mock.options[i].cb(mock.options[i].val, arg, remote);
    return -99;
}

spank_err_t spank_get_item(spank_t sp, spank_item_t item, ...)
{
    va_list ap;
    va_start(ap, item);
    spank_err_t rc = ESPANK_SUCCESS;
    if (mock.ctx != S_CTX_REMOTE && item != S_JOB_NNODES && item != S_JOB_TOTAL_TASK_COUNT)
        rc = ESPANK_NOT_REMOTE;
    else
        switch (item) {
        case S_JOB_ID: *va_arg(ap, uint32_t *) = mock.job_id; break;
        case S_JOB_STEPID: *va_arg(ap, uint32_t *) = mock.step_id; break;
        case S_JOB_NNODES: *va_arg(ap, uint32_t *) = mock.nnodes; break;
        case S_JOB_NODEID: *va_arg(ap, uint32_t *) = mock.nodeid; break;
        case S_JOB_LOCAL_TASK_COUNT: *va_arg(ap, uint32_t *) = mock.local_tasks; break;
        case S_JOB_TOTAL_TASK_COUNT: *va_arg(ap, uint32_t *) = mock.total_tasks; break;
        case S_TASK_ID:
            if (mock.task_id < 0)
                rc = ESPANK_NOT_TASK;
            else
                *va_arg(ap, int *) = mock.task_id;
            break;
        default: rc = ESPANK_BAD_ARG;
        }
    va_end(ap);
    return rc;
}

spank_err_t spank_getenv(spank_t sp, const char *var, char *buf, int len)
{
    const char *v = mock_getenv(var);
    if (!v)
        return ESPANK_ENV_NOEXIST;
    if ((int)strlen(v) >= len)
        return ESPANK_NOSPACE;
    strcpy(buf, v);
    return ESPANK_SUCCESS;
}

/* spank_setenv and spank_unsetenv return errors the plugin must heed;
 * mock.fail_env makes them fail for one name */
static int fails(const char *var)
{
    return mock.fail_env && strcmp(var, mock.fail_env) == 0;
}

spank_err_t spank_setenv(spank_t sp, const char *var, const char *val, int overwrite)
{
    if (fails(var))
        return ESPANK_ERROR;
    if (!overwrite && mock_getenv(var))
        return ESPANK_ENV_EXISTS;
    mock_setenv(var, val);
    return ESPANK_SUCCESS;
}

/* The job's control environment, kept beside the task's as "CONTROL:NAME". */
spank_err_t spank_job_control_setenv(spank_t sp, const char *var, const char *val, int overwrite)
{
    char name[256];
    snprintf(name, sizeof(name), "CONTROL:%s", var);
    if (!overwrite && mock_getenv(name))
        return ESPANK_ENV_EXISTS;
    mock_setenv(name, val);
    return ESPANK_SUCCESS;
}

const char *spank_strerror(spank_err_t err)
{
    return "mock error";
}

/* Add a line to log[size], with its newline. */
static void append(char *log, size_t size, const char *line)
{
    size_t n = strlen(log);
    snprintf(log + n, size - n, "%s\n", line);
}

void slurm_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(mock.last_error, sizeof(mock.last_error), fmt, ap);
    va_end(ap);
    append(mock.error_log, sizeof(mock.error_log), mock.last_error);
    mock.errors++;
}

void slurm_info(const char *fmt, ...)
{
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    append(mock.info, sizeof(mock.info), line);
}

void slurm_debug(const char *fmt, ...)
{
}

void slurm_spank_log(const char *fmt, ...)
{
}

/* Hostlists: only "prefixN" and "prefix[a-b]" are needed. */
struct hostlist {
    char prefix[64];
    int next, last, ranged;
};

mesh_hostlist_t slurm_hostlist_create(const char *s)
{
    struct hostlist *h = calloc(1, sizeof(*h));
    size_t n = strcspn(s, "[");
    snprintf(h->prefix, sizeof(h->prefix), "%.*s", (int)n, s);
    if (s[n] == '[') {
        h->ranged = 1;
        if (sscanf(s + n + 1, "%d-%d", &h->next, &h->last) != 2)
            h->last = h->next;
    }
    return h;
}

char *slurm_hostlist_shift(mesh_hostlist_t h)
{
    char host[96];
    if (!h->ranged)
        return strdup(h->prefix);
    if (h->next > h->last)
        return NULL;
    snprintf(host, sizeof(host), "%s%d", h->prefix, h->next++);
    return strdup(host);
}

void slurm_hostlist_destroy(mesh_hostlist_t h)
{
    free(h);
}

spank_err_t spank_unsetenv(spank_t sp, const char *var)
{
    if (fails(var))
        return ESPANK_ERROR;
    int i = find(var);
    if (i >= 0) {
        free(mock.env_name[i]);
        free(mock.env_value[i]);
        mock.n_env--;
        mock.env_name[i] = mock.env_name[mock.n_env];
        mock.env_value[i] = mock.env_value[mock.n_env];
    }
    return ESPANK_SUCCESS;
}
