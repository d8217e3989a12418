/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan size: plan every node count of a range and pick one by a goal.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

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
    int lo, hi, rc;
    if (!o->model)
        return bad("--model is required (a preset name, a spec .yaml file or a config.json)");
    if (!o->nodes_lo)
        return bad("--nodes is required (a range LO-HI, or N)");
    if (!o->gpus_per_node)
        return bad("--gpus-per-node is required");
    if ((rc = size_alloc(o, &alloc, &lo, &hi)))
        return rc;
    if (load_model(o, &model, &err) < 0 || restart_pins(o, &model, &pins, &err) < 0)
        return bad("%s", err.msg);
    mesh_size_t *sz = mesh_size_create(&model, &alloc, lo, hi, &pins, &o->pol.assume, o->goal,
                                       MESH_SIZE_TABLE, &err);
    if (!sz)
        return restart_error(o, &err), bad("%s", err.msg);
    rc = print_owned(mesh_listing_size(sz, &model, &alloc, o->have_restart ? &o->restart : NULL,
                                       o->from, o->json));
    if (rc == 0)
        rc = sz->chosen >= 0 ? EXIT_FITS : EXIT_NOFIT;
    mesh_size_destroy(sz);
    return rc;
}
