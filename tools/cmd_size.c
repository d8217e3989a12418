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
        if (o->gpu || o->gpu_mem > 0 || o->nvlink)
            return bad("--partition takes the GPU from the policy's partitions: leave out --gpu, "
                       "--gpu-mem and --nvlink");
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

/* One row of size's table: '*' marks the choice. */
static void size_row_text(const mesh_size_t *sz, int i, const mesh_model_t *m)
{
    const mesh_size_row_t *r = &sz->rows[i];
    char l[MESH_LAYOUT_STR_MAX], run[32] = "";
    mesh_estimate_t est;
    if (r->fits != 1) {
        printf("  %6d  does not fit\n", r->nodes);
        return;
    }
    if (mesh_size_estimate(m, &r->best.cost, &est))
        snprintf(run, sizeof(run), est.seconds >= 2 * 86400 ? "%10.1f d" : "%10.1f h",
                 est.seconds / (est.seconds >= 2 * 86400 ? 86400 : 3600));
    printf("%c %6d  %-60s %9.3g %11.4g %13.4g %6.1f/%.1f%s\n", i == sz->chosen ? '*' : ' ',
           r->nodes, mesh_layout_format(&r->best.layout, l, sizeof(l)), r->best.cost.step_seconds,
           r->best.cost.tokens_per_sec, r->tokens_per_gpu_hour, r->best.memory.total / 1073741824.0,
           r->best.memory.capacity / 1073741824.0, run);
}

static void size_text(const options_t *o, const mesh_size_t *sz, const mesh_model_t *m,
                      const mesh_alloc_t *a)
{
    int budget = m->tokens > 0 || m->steps > 0;
    char kept[64];
    printf("Sizing %s on %d-%d nodes of %d %s, goal %s\n", m->name, sz->lo, sz->hi,
           a->gpus_per_node, a->gpu.name, mesh_size_goal_name(sz->goal));
    if (o->have_restart)
        printf("keeping %s from %s, and the global batch of %ld\n",
               mesh_restart_kept(&o->restart, kept, sizeof(kept)), o->from, m->global_batch);
    putchar('\n');
    printf("  %6s  %-60s %9s %11s %13s %10s%s\n", "nodes", "layout", "step s", "tokens/s",
           "tok/GPU-hour", "GiB/usable", budget ? "   est. run" : "");
    for (int i = 0; i < sz->n_rows; i++)
        size_row_text(sz, i, m);
    printf("\n%s%s\n", sz->chosen >= 0 ? "Choice: " : "Nothing fits: ", sz->reason);
}

/* JSON: the goal, the range, every row and the choice (null: none). */
static char *size_json(const options_t *o, const mesh_size_t *sz, const mesh_model_t *m,
                       const mesh_alloc_t *a)
{
    char *name = mesh_json_string(m->name), *why = mesh_json_string(sz->reason);
    char l[MESH_LAYOUT_STR_MAX], kept[64];
    size_t len = 0;
    char *out = NULL;
    FILE *f = open_memstream(&out, &len);
    if (!f || !name || !why) {
        free(name);
        free(why);
        return f ? fclose(f), free(out), NULL : NULL;
    }
    fprintf(f,
            "{\"model\":%s,\"goal\":\"%s\",\"nodes\":{\"lo\":%d,\"hi\":%d},\"gpus_per_node\":%d,"
            "\"gpu\":\"%s\"",
            name, mesh_size_goal_name(sz->goal), sz->lo, sz->hi, a->gpus_per_node, a->gpu.name);
    if (o->have_restart) /* what the sizing kept (additive: only for a restart) */
        fprintf(f, ",\"kept\":\"%s\"", mesh_restart_kept(&o->restart, kept, sizeof(kept)));
    fputs(",\"rows\":[", f);
    for (int i = 0; i < sz->n_rows; i++) {
        const mesh_size_row_t *r = &sz->rows[i];
        mesh_estimate_t est;
        fprintf(f, "%s{\"nodes\":%d,\"fits\":%s", i ? "," : "", r->nodes,
                r->fits == 1 ? "true" : "false");
        if (r->fits == 1)
            fprintf(f,
                    ",\"layout\":\"%s\",\"step_seconds\":%.6g,\"tokens_per_second\":%.6g,"
                    "\"tokens_per_gpu_hour\":%.6g,\"memory_bytes\":%.0f,\"capacity_bytes\":%.0f",
                    mesh_layout_format(&r->best.layout, l, sizeof(l)), r->best.cost.step_seconds,
                    r->best.cost.tokens_per_sec, r->tokens_per_gpu_hour, r->best.memory.total,
                    r->best.memory.capacity);
        if (r->fits == 1 && mesh_size_estimate(m, &r->best.cost, &est))
            fprintf(f, ",\"steps\":%ld,\"estimated_seconds\":%.6g", est.steps, est.seconds);
        fputs("}", f);
    }
    if (sz->chosen >= 0)
        fprintf(f, "],\"chosen\":%d", sz->rows[sz->chosen].nodes);
    else
        fputs("],\"chosen\":null", f);
    fprintf(f, ",\"reason\":%s,\"would_fit\":", why);
    fprintf(f, sz->would_fit ? "%d}\n" : "null}\n", sz->would_fit);
    free(name);
    free(why);
    return fclose(f) == 0 ? out : (free(out), NULL);
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
    if (o->json)
        rc = print_owned(size_json(o, sz, &model, &alloc));
    else
        size_text(o, sz, &model, &alloc);
    if (rc == 0)
        rc = sz->chosen >= 0 ? EXIT_FITS : EXIT_NOFIT;
    mesh_size_destroy(sz);
    return rc;
}
