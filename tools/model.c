/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan(1): the model, allocation and plan the planning commands share,
 * from the options: the preset path, --topology, --from/--keep, --set's
 * spec keys, --partition (the controller's own judgement) and the
 * allocation the plugin would make.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* Presets: --models-dir, the policy's, $MESH_MODELS_DIR, the source tree when
 * this binary runs from its build tree, then the installed ones (the
 * library's order: mesh_spec_dirs_make). */
void preset_dirs(const options_t *o, mesh_spec_dirs_t *d)
{
    static char exe[PATH_MAX], build[PATH_MAX];
    const char *first[4] = {o->models_dir, o->pol.launch.models_dir, getenv("MESH_MODELS_DIR"),
                            NULL};
    ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    /* /proc/self/exe has no symbolic link in it; the build directory
     * configure recorded may */
    const char *b = realpath(MESH_BUILD_DIR, build) ? build : MESH_BUILD_DIR;
    size_t blen = strlen(b);
    if (len > 0) {
        exe[len] = '\0';
        if (strncmp(exe, b, blen) == 0 && exe[blen] == '/')
            first[3] = MESH_SOURCE_MODELS_DIR;
    }
    mesh_spec_dirs_make(d, first, 4);
}

/* --topology FILE.xml, or "this" for this machine; NULL without it. */
int load_topology(const options_t *o, mesh_topo_t **out)
{
    mesh_error_t err;
    *out = NULL;
    if (!o->topology)
        return 0;
    *out = mesh_topo_load(strcmp(o->topology, "this") == 0 ? NULL : o->topology, &err);
    return *out ? 0 : bad("%s", err.msg);
}

/* What keeping less frees, where err is a pin's error that names kept
 * dimensions (mesh_restart_frees): "; --keep vpp,zero frees tp,pp", with
 * "(and a --mesh without tp)" where --mesh pins one of them too, into
 * buf[len], else "". */
static const char *freeing(const options_t *o, const mesh_error_t *err, char *buf, size_t len)
{
    char freed[64], keep[64], pinned[64];
    buf[0] = '\0';
    if (mesh_restart_frees(&o->restart, err->msg, o->mesh, freed, keep, pinned, sizeof(freed)))
        snprintf(buf, len, "; --keep %s%s%s%s frees %s", keep,
                 pinned[0] ? " (and a --mesh without " : "", pinned, pinned[0] ? ")" : "", freed);
    return buf;
}

/* The option that keeps the restart's dimensions. */
static const char *keep_option(const options_t *o)
{
    return o->keep ? "--keep" : "--keep's default";
}

/* The pins of --mesh, with the dimensions --from keeps. */
int restart_pins(const options_t *o, const mesh_model_t *m, mesh_layout_t *pins, mesh_error_t *err)
{
    char fix[256];
    if (mesh_layout_parse(o->mesh, pins, err) < 0)
        return -1;
    if (!o->have_restart || mesh_restart_pins(&o->restart, m, pins, err) == 0)
        return 0;
    if (*freeing(o, err, fix, sizeof(fix)))
        return mesh_error_prefix(err, "--from %.200s (%s%s)", o->from, keep_option(o), fix);
    return mesh_error_prefix(err, "--from %.200s", o->from);
}

/* An error planning with the kept dimensions says they were kept, and
 * which option keeps them, and where the error is a kept key's, the
 * --keep that frees it (in the prefix, so that a long message's cut never
 * takes it). */
void restart_error(const options_t *o, mesh_error_t *err)
{
    char kept[64], fix[256];
    if (o->have_restart)
        mesh_error_prefix(err, "keeping %s from %.200s (%s%s)",
                          mesh_restart_kept(&o->restart, kept, sizeof(kept)), o->from,
                          keep_option(o), freeing(o, err, fix, sizeof(fix)));
}

static int need(const options_t *o)
{
    if (!o->model)
        return bad("--model is required (a preset name, a spec .yaml file or a config.json)");
    if (!o->nodes)
        return bad("--nodes is required");
    if (!o->gpus_per_node && !o->topology)
        return bad("--gpus-per-node is required (or --topology)");
    return 0;
}

/* The model, with the spec keys of --set applied as it is loaded.  An
 * unknown spec key that is a policy key is said to be one. */
int load_model(const options_t *o, mesh_model_t *model, mesh_error_t *err)
{
    mesh_spec_dirs_t dirs;
    preset_dirs(o, &dirs);
    if (mesh_spec_load_with(o->model, &dirs, "--set", o->spec_sets, o->n_spec_sets, model, err) ==
        0) {
        if (o->have_headroom) /* as the plugin's --mesh-headroom */
            model->headroom = o->headroom;
        return 0;
    }
    for (int i = 0; i < o->n_spec_sets && !strstr(err->msg, "did you mean"); i++) {
        const char *set = o->spec_sets[i];
        size_t k = strcspn(set, "="), dot = strcspn(set, ".");
        if (dot >= k)
            continue;
        const char *leaf = set + dot + 1; /* "reserve=0.1" of "train.reserve=0.1" */
        char quoted[96];
        mesh_policy_t scratch = o->pol;
        snprintf(quoted, sizeof(quoted), "unknown key '%.*s'", (int)(k - dot - 1), leaf);
        if (strstr(err->msg, quoted) && mesh_policy_set_arg(&scratch, leaf, NULL) == 0) {
            size_t n = strlen(err->msg);
            snprintf(err->msg + n, sizeof(err->msg) - n, "; did you mean %.*s (a policy key)?",
                     (int)(k - dot - 1), leaf);
        }
    }
    return -1;
}

int partition_given(const options_t *o, mesh_error_t *err)
{
    if (o->topology || o->gpu || o->gpu_mem > 0 || o->nvlink)
        return mesh_error_set(err, "--partition takes the GPU from the policy's partitions: "
                                   "leave out --gpu, --gpu-mem, --nvlink and --topology");
    if (mesh_policy_partitions_known(&o->pol, o->partition, err) < 0)
        return mesh_error_prefix(err, "--partition");
    return 0;
}

/* The allocation of --partition: what job_submit/meshplan plans the job
 * for, and its verdict, from the library's one judgement. */
static int partition_alloc(const options_t *o, const mesh_model_t *model, const mesh_layout_t *pins,
                           mesh_alloc_t *alloc, mesh_submit_t *verdict, mesh_error_t *err)
{
    mesh_step_t s = {
        .nodes = (int)o->nodes, .gpus_per_node = (int)o->gpus_per_node, .host_memory = o->host_mem};
    if (partition_given(o, err) < 0)
        return -1;
    mesh_submit_judge(&o->pol, o->partition, model, pins, &s, verdict);
    if (!verdict->judged && o->pol.enforce != MESH_ENFORCE_OFF)
        return mesh_error_set(err,
                              "--partition %s: the controller does not judge this job (%s); the "
                              "nodes do, at launch: plan for them with --gpu or --topology",
                              verdict->partition[0] ? verdict->partition : "(none)", verdict->msg);
    if (mesh_partition_alloc(&o->pol, verdict->partition, &s, alloc, err) < 0)
        return mesh_error_prefix(err, "--partition %s",
                                 verdict->partition[0] ? verdict->partition : "(none)");
    return 0;
}

/* Build the plan every plan-based command needs, with the topology it was
 * made for (NULL without --topology) and, with --partition, the
 * controller's verdict (verdict may be NULL without it). */
int make_plan(const options_t *o, mesh_plan_t **out, mesh_topo_t **topo, mesh_submit_t *verdict)
{
    mesh_error_t err;
    mesh_model_t model;
    mesh_alloc_t alloc;
    mesh_layout_t pins;
    int rc = need(o);
    if (rc || (rc = load_topology(o, topo)))
        return rc;
    if (load_model(o, &model, &err) < 0 || restart_pins(o, &model, &pins, &err) < 0)
        goto fail;
    if (o->partition) {
        if (partition_alloc(o, &model, &pins, &alloc, verdict, &err) < 0)
            goto fail;
    } else if (*topo) {
        if (o->gpu || o->gpu_mem > 0 || o->nvlink) {
            snprintf(err.msg, sizeof(err.msg), "--topology replaces --gpu, --gpu-mem and --nvlink");
            goto fail;
        }
        /* the allocation a node of this topology plans for, as the plugin
         * makes it (on_topology_error=fallback included); tasks not given:
         * one per GPU of the topology */
        mesh_step_t step = {.nodes = (int)o->nodes};
        if (mesh_step_alloc(&o->pol, *topo, 0, o->pol.launch.bind_gpu, &step, &alloc, &err) < 0)
            goto fail;
        if (o->gpus_per_node && o->gpus_per_node != alloc.gpus_per_node) {
            snprintf(err.msg, sizeof(err.msg), "--gpus-per-node %lld, but the topology has %d GPUs",
                     o->gpus_per_node, alloc.gpus_per_node);
            goto fail;
        }
    } else if (mesh_policy_alloc(&o->pol.assume, o->gpu, o->gpu_mem, (int)o->nvlink, (int)o->nodes,
                                 (int)o->gpus_per_node, &alloc, &err) < 0) {
        goto fail;
    }
    if (o->host_mem > 0)
        alloc.host_memory = o->host_mem;
    if ((*out = mesh_plan_create(&model, &alloc, &pins, &o->pol.assume, &err)))
        return 0;
    restart_error(o, &err);
fail:
    mesh_topo_destroy(*topo);
    *topo = NULL;
    return bad("%s", err.msg);
}
