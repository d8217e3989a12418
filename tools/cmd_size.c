/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan size: plan every node count of a range and pick one by a goal.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

#define PARTITION_INFO_MAX (1 << 20) /* bytes of scontrol's text read: a cluster's partitions */

/* Now on the local clock, as seconds since its 1970-01-01T00:00 (what
 * mesh_size_aim_parse compares a date with): --now, else the clock. */
static int local_now(const options_t *o, long long *now)
{
    mesh_error_t err;
    if (o->now)
        return mesh_parse_date(o->now, "--now", now, &err) < 0 ? bad("%s", err.msg) : 0;
    time_t t = time(NULL);
    struct tm tm;
    if (!localtime_r(&t, &tm))
        return bad("--goal by: the clock cannot be read (give --now)");
    *now = (long long)t + tm.tm_gmtoff;
    return 0;
}

/* The partition's MaxTime in minutes (0: none known): from --partition-info
 * (scontrol's text, '-': stdin), else the policy's max_time: for it. */
static int max_time(const options_t *o, long *minutes)
{
    mesh_error_t err;
    *minutes = 0;
    if (!o->partition_info) {
        const mesh_partition_t *q =
            o->partition ? mesh_policy_partition(&o->pol, o->partition) : NULL;
        *minutes = q ? q->max_time : 0;
        return 0;
    }
    int in = strcmp(o->partition_info, "-") == 0;
    FILE *f = in ? stdin : fopen(o->partition_info, "r");
    if (!f)
        return bad("--partition-info %s: cannot be read (%s)", o->partition_info, strerror(errno));
    char *text = malloc(PARTITION_INFO_MAX + 1);
    size_t n = text ? fread(text, 1, PARTITION_INFO_MAX + 1, f) : 0;
    int failed = ferror(f) ? (errno ? errno : EIO) : 0; /* a directory: EISDIR */
    if (!in)
        fclose(f);
    int rc = 0;
    if (!text)
        rc = bad("out of memory");
    else if (failed)
        rc = bad("--partition-info %s: cannot be read (%s)", o->partition_info, strerror(failed));
    else if (n > PARTITION_INFO_MAX)
        rc = bad("--partition-info %s: more than %d bytes: give one partition's "
                 "(scontrol show partition NAME)",
                 o->partition_info, PARTITION_INFO_MAX);
    else if ((text[n] = '\0', strlen(text) != n))
        rc = bad("--partition-info %s: a NUL byte: not scontrol show partition's output",
                 o->partition_info);
    else if (mesh_size_max_time_parse(text, o->partition, minutes, &err) < 0)
        rc = bad("--partition-info %s: %s", o->partition_info, err.msg);
    free(text);
    return rc;
}

/* size's allocation template: the partition's GPU (--partition, the range
 * cut to its nodes), else --gpu or --gpu-mem's; *lo and *hi the range. */
static int size_alloc(const options_t *o, mesh_alloc_t *a, int *lo, int *hi)
{
    mesh_error_t err;
    *lo = o->nodes_lo;
    *hi = o->nodes_hi;
    if (o->partition) {
        mesh_step_t step = {.nodes = *lo, .gpus_per_node = (int)o->gpus_per_node};
        if (partition_given(o, &err) < 0)
            return bad("%s", err.msg);
        if (mesh_size_bound(&o->pol, o->partition, lo, hi, &err) < 0)
            return bad("--nodes %d-%d: %s", o->nodes_lo, o->nodes_hi, err.msg);
        if (mesh_partition_alloc(&o->pol, o->partition, &step, a, &err) < 0)
            return bad("--partition %s: %s", o->partition, err.msg);
    } else if (mesh_policy_alloc(&o->pol.assume, o->gpu, o->gpu_mem, (int)o->nvlink, *lo,
                                 (int)o->gpus_per_node, a, &err) < 0) {
        return bad("%s", err.msg);
    }
    a->host_memory = o->host_mem;
    return 0;
}

int cmd_size(const options_t *o)
{
    mesh_error_t err;
    mesh_model_t model;
    mesh_alloc_t alloc;
    mesh_layout_t pins;
    mesh_size_aim_t aim;
    long long now;
    int lo, hi, rc;
    mesh_size_job_t job = {.partition = o->partition ? o->partition : ""};
    if (!o->model)
        return bad("--model is required (a preset name, a spec .yaml file or a config.json)");
    if (!o->nodes_lo)
        return bad("--nodes is required (a range LO-HI, or N)");
    if (!o->gpus_per_node)
        return bad("--gpus-per-node is required");
    if ((rc = size_alloc(o, &alloc, &lo, &hi)) || (rc = local_now(o, &now)) ||
        (rc = max_time(o, &job.max_minutes)))
        return rc;
    if (mesh_size_aim_parse(o->goal ? o->goal : "min", now, &aim, &err) < 0)
        return mesh_error_prefix(&err, "--goal"), bad("%s", err.msg);
    if (load_model(o, &model, &err) < 0 || restart_pins(o, &model, &pins, &err) < 0)
        return bad("%s", err.msg);
    mesh_size_t *sz = mesh_size_create_aim(&model, &alloc, lo, hi, &pins, &o->pol.assume, &aim,
                                           MESH_SIZE_TABLE, &err);
    if (!sz)
        return restart_error(o, &err), bad("%s", err.msg);
    rc = print_owned(mesh_listing_size(sz, &model, &alloc, o->have_restart ? &o->restart : NULL,
                                       o->from, &job, o->json));
    if (rc == 0)
        rc = sz->chosen >= 0 ? EXIT_FITS : EXIT_NOFIT;
    mesh_size_destroy(sz);
    return rc;
}
