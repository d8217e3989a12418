/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What both sides of the plugin need: the job's model, and the plan for a
 * step of a given shape.  A pure function of the spec, the step's shape and
 * the admin policy, so srun and every slurmstepd reach the same plan.
 */
#include <stdio.h>
#include <string.h>

#include "plugin.h"

/* The job's options that are spec keys, onto the spec read: every side
 * applies them alike, so that the digests agree. */
static void options_onto(mesh_model_t *m)
{
    if (mesh_plugin.have_headroom)
        m->headroom = mesh_plugin.headroom;
}

int mesh_plugin_load_model(const char *spec, mesh_model_t *m, mesh_error_t *err)
{
    const char *first = mesh_plugin.policy.launch.models_dir;
    mesh_spec_dirs_t dirs;
    mesh_spec_dirs_make(&dirs, &first, 1);
    if (mesh_spec_load(spec, &dirs, m, err) < 0)
        return -1;
    options_onto(m);
    return 0;
}

int mesh_plugin_carried_spec(const char *text, mesh_model_t *m, mesh_error_t *err)
{
    mesh_layout_t pins; /* carried unpinned: the job's --mesh is its own option */
    if (mesh_request_decode(text, m, &pins, err) < 0)
        return mesh_error_prefix(err, "the spec carried with the job (%s) is damaged",
                                 MESH_SPEC_ENV);
    options_onto(m);
    return 0;
}

long mesh_plugin_mem_per_node(const char *mem_per_node)
{
    long long mb;
    mesh_error_t err;
    if (!mem_per_node ||
        mesh_parse_int(mem_per_node, "SLURM_MEM_PER_NODE", 1, 1LL << 40, &mb, &err) < 0)
        return 0;
    return (long)mb;
}

mesh_launch_t mesh_plugin_launch(void)
{
    return mesh_plugin_export_mode() == MESH_EXPORT_TORCHRUN ? MESH_LAUNCH_TORCHRUN
                                                             : MESH_LAUNCH_TASKS;
}

/* The allocation carries the job's memory per node (mesh_step_alloc): the
 * same on every node, so that every node plans the same layout. */
mesh_plan_t *mesh_plugin_plan(const mesh_model_t *m, const mesh_alloc_t *a, mesh_error_t *err)
{
    return mesh_plan_create(m, a, &mesh_plugin.pins, &mesh_plugin.policy.assume, err);
}
