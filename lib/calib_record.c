/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The plan record: one line the plugin writes on a step's first task's
 * stderr under --mesh-explain, from which meshplan calibrate pairs a
 * job's Megatron-LM log with what its plan predicted (lib/calib_log.c
 * reads it).  The prediction is written as the model made it, before any
 * calibration, so that calibrating again on calibrated jobs fits the
 * model and not the last calibration.  doc/design.md, "Calibration".
 */
#include <string.h>

#include "internal.h"
#include "meshplan/calibrate.h"
#include "meshplan/plan.h"
#include "meshplan/report.h"

/* a factor the GPU carries, or 1 (none) */
static double undo(double factor)
{
    return factor > 0 ? factor : 1;
}

char *mesh_calib_plan_record(const mesh_plan_t *p)
{
    const mesh_candidate_t *c = mesh_plan_best(p);
    const mesh_alloc_t *a = mesh_plan_alloc(p);
    const mesh_model_t *m = mesh_plan_model(p);
    const mesh_cost_t *k = &c->cost;
    const mesh_memory_t *mem = &c->memory;
    char mesh[160];
    mesh_layout_format(&c->layout, mesh, sizeof(mesh));
    double compute = k->compute_s * undo(a->gpu.cal_compute);
    double network = (k->tp_comm_s + k->cp_comm_s + k->pp_comm_s + k->dp_comm_s + k->ep_comm_s) *
                     undo(a->gpu.cal_network);
    double other = k->optimizer_s;
    double allocated =
        (mem->weights + mem->grads + mem->optimizer + mem->activations) / undo(a->gpu.cal_memory);
    mesh_buf_t b;
    mesh_buf_init(&b);
    mesh_buf_puts(&b, MESH_CALIB_RECORD "{\"version\":1,\"digest\":");
    mesh_buf_json_string(&b, mesh_plan_digest(p));
    mesh_buf_puts(&b, ",\"model\":");
    mesh_buf_json_string(&b, m->name);
    mesh_buf_puts(&b, ",\"gpu\":");
    mesh_buf_json_string(&b, a->gpu.name);
    mesh_buf_puts(&b, ",\"mesh\":");
    mesh_buf_json_string(&b, mesh);
    mesh_buf_printf(&b,
                    ",\"gpus\":%ld,\"global_batch\":%ld,\"step_seconds\":%.9g,"
                    "\"compute_seconds\":%.9g,\"network_seconds\":%.9g,\"other_seconds\":%.9g,"
                    "\"memory_bytes\":%.0f,\"calibrated\":%s}\n",
                    mesh_world(a), m->global_batch, compute + network + other, compute, network,
                    other, allocated, a->gpu.cal_compute > 0 ? "true" : "false");
    return mesh_buf_take(&b);
}
