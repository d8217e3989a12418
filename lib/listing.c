/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The listings every front end shows the same way, as text or JSON: the
 * GPU table as the policy makes it, the presets of a search path, a node's
 * topology and what the planner makes of it, and a sizing table.  JSON
 * strings go through the one escaper (mesh_buf_json_string).
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "meshplan/parse.h"
#include "meshplan/listing.h"

#define GiB 1073741824.0

/* ---- the GPU table ---- */

/* The figures a policy may set, in the table's columns' order: their
 * names in JSON, and whether the policy's entry o sets each. */
#define GPU_FIGURES 7
static const char *const gpu_figures[GPU_FIGURES] = {"memory", "peak_flops", "hbm_bw",  "link_bw",
                                                     "net_bw", "island",     "gemm_eff"};

static void figures_set(const mesh_gpu_override_t *o, int set[GPU_FIGURES])
{
    int v[GPU_FIGURES] = {o && o->memory > 0,  o && o->peak_flops > 0, o && o->hbm_bw > 0,
                          o && o->link_bw > 0, o && o->net_bw > 0,     o && o->island > 0,
                          o && o->gemm_eff > 0};
    memcpy(set, v, sizeof(v));
}

/* The policy's entry for GPU `name` (names are the table's), or NULL. */
static const mesh_gpu_override_t *entry_of(const mesh_assumptions_t *as, const char *name)
{
    const mesh_gpu_override_t *o = NULL;
    for (int k = 0; k < as->n_gpu_overrides; k++)
        o = strcmp(as->gpu_overrides[k].name, name) == 0 ? &as->gpu_overrides[k] : o;
    return o;
}

static void gpu_json(mesh_buf_t *b, const mesh_gpu_t *g, int origin, const int set[GPU_FIGURES])
{
    mesh_buf_puts(b, "{\"name\":");
    mesh_buf_json_string(b, g->name);
    mesh_buf_printf(b,
                    ",\"memory\":%.0f,\"peak_flops\":%.6g,\"bf16\":%s,\"hbm_bw\":%.6g,"
                    "\"link_bw\":%.6g,\"net_bw\":%.6g,\"island\":%d,\"tray\":%d,"
                    "\"gemm_eff\":%.3g,\"source\":\"%s\",\"policy_sets\":[",
                    g->memory, g->peak_flops, g->has_bf16 ? "true" : "false", g->hbm_bw, g->link_bw,
                    g->net_bw, g->island, g->tray, g->gemm_eff,
                    origin == MESH_GPU_DEFINED ? "policy" : "table");
    for (int k = 0, n = 0; k < GPU_FIGURES; k++)
        if (set[k])
            mesh_buf_printf(b, "%s\"%s\"", n++ ? "," : "", gpu_figures[k]);
    mesh_buf_puts(b, "],\"aliases\":[");
    for (int k = 0, n = 0; k < mesh_gpu_alias_count(); k++)
        if (strcmp(mesh_gpu_alias_at(k)->name, g->name) == 0) {
            mesh_buf_puts(b, n++ ? "," : "");
            mesh_buf_json_string(b, mesh_gpu_alias_at(k)->alias);
        }
    mesh_buf_puts(b, "]}");
}

static void gpu_row(mesh_buf_t *b, const mesh_gpu_t *g, int w, const int set[GPU_FIGURES])
{
    char m[GPU_FIGURES];
    for (int k = 0; k < GPU_FIGURES; k++)
        m[k] = set[k] ? '*' : ' ';
    /* the last mark only where there is one: no line ends in a blank */
    mesh_buf_printf(b, "%-*s %6.1f GiB%c %7.0f%s%c %10.0f%c %12.0f%c %10.1f%c %7d%c %4.0f%%%s\n", w,
                    g->name, g->memory / GiB, m[0], g->peak_flops / 1e12,
                    g->has_bf16 ? " bf16" : " fp16", m[1], g->hbm_bw / 1e9, m[2], g->link_bw / 1e9,
                    m[3], g->net_bw / 1e9, m[4], g->island, m[5], 100 * g->gemm_eff,
                    set[GPU_FIGURES - 1] ? "*" : "");
}

/* The notes under the text table. */
static void gpu_notes(mesh_buf_t *b, int marks, const char *defined)
{
    if (marks)
        mesh_buf_puts(b, "  *: the policy's figure (gpu.NAME.FIELD)\n");
    if (defined[0])
        mesh_buf_printf(b, "  the policy defines %s (its other figures: H100-SXM's)\n", defined);
    mesh_buf_puts(b, "  product names --gpu takes (what nvidia-smi, amd-smi, lspci print):\n");
    for (int k = 0; k < mesh_gpu_alias_count(); k++)
        mesh_buf_printf(b, "    %-30s %s\n", mesh_gpu_alias_at(k)->alias,
                        mesh_gpu_alias_at(k)->name);
}

char *mesh_listing_gpus(const mesh_assumptions_t *as, int json)
{
    mesh_buf_t b;
    int n = mesh_policy_gpu_count(as), w = 10, marks = 0;
    char defined[160] = "";
    mesh_gpu_t g;
    mesh_buf_init(&b);
    for (int i = 0; i < n && mesh_policy_gpu_at(as, i, &g) >= 0; i++)
        w = (int)strlen(g.name) > w ? (int)strlen(g.name) : w;
    if (json)
        mesh_buf_puts(&b, "[");
    else
        mesh_buf_printf(&b, "%-*s %10s  %12s  %10s  %12s  %10s  %7s  %5s\n", w, "GPU", "memory",
                        "dense TF/s", "HBM GB/s", "link GB/s", "net GB/s", "island", "GEMM");
    for (int i = 0; i < n; i++) {
        int origin = mesh_policy_gpu_at(as, i, &g), set[GPU_FIGURES];
        figures_set(entry_of(as, g.name), set);
        for (int k = 0; k < GPU_FIGURES; k++)
            marks |= set[k];
        if (origin == MESH_GPU_DEFINED)
            snprintf(defined + strlen(defined), sizeof(defined) - strlen(defined), "%s%s",
                     defined[0] ? ", " : "", g.name);
        if (json) {
            mesh_buf_puts(&b, i ? "," : "");
            gpu_json(&b, &g, origin, set);
        } else {
            gpu_row(&b, &g, w, set);
        }
    }
    if (json)
        mesh_buf_puts(&b, "]\n");
    else
        gpu_notes(&b, marks, defined);
    return mesh_buf_take(&b);
}

/* ---- the presets ---- */

static int is_preset_file(const struct dirent *e)
{
    return mesh_spec_preset_file(e->d_name, NULL);
}

/* Whether NAME.yaml is in one of the first n directories (which shadow the rest). */
static int shadowed(const mesh_spec_dirs_t *d, int n, const char *name)
{
    char path[PATH_MAX];
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "%s/%s.yaml", d->dirs[i], name);
        if (access(path, F_OK) == 0)
            return 1;
    }
    return 0;
}

/* The presets of directory i of d that win their lookup, as lines or objects. */
static void presets_of(mesh_buf_t *b, const mesh_spec_dirs_t *d, int i, int json, int *first)
{
    struct dirent **list;
    int n = scandir(d->dirs[i], &list, is_preset_file, alphasort);
    for (int j = 0; j < n; j++) {
        char name[MESH_NAME_MAX], path[PATH_MAX];
        mesh_spec_preset_file(list[j]->d_name, name); /* the filter kept presets only */
        snprintf(path, sizeof(path), "%s/%s", d->dirs[i], list[j]->d_name);
        free(list[j]);
        mesh_model_t m;
        mesh_error_t err;
        /* each name once, from the directory that wins the lookup */
        if (shadowed(d, i, name) || mesh_spec_load(path, d, &m, &err) < 0)
            continue;
        /* a MoE model's parameters a token passes through, as the FLOPs
         * count them (params.c); a dense model's are all of them */
        double active = mesh_model_active_params(&m);
        if (json) {
            mesh_buf_printf(b, "%s{\"name\":", *first ? "" : ",");
            mesh_buf_json_string(b, name);
            mesh_buf_printf(b, ",\"params\":%.0f,\"active_params\":%.0f,\"dir\":", m.params,
                            active);
            mesh_buf_json_string(b, d->dirs[i]);
            mesh_buf_puts(b, "}");
        } else {
            char act[32] = "-";
            if (active != m.params)
                snprintf(act, sizeof(act), "%.2f B active", active / 1e9);
            mesh_buf_printf(b, "%-16s %9.2f B total  %15s  %s\n", name, m.params / 1e9, act,
                            d->dirs[i]);
        }
        *first = 0;
    }
    if (n > 0)
        free(list);
}

char *mesh_listing_presets(const mesh_spec_dirs_t *d, int json)
{
    mesh_buf_t b;
    int first = 1;
    mesh_buf_init(&b);
    mesh_buf_puts(&b, json ? "[" : "");
    for (int i = 0; i < MESH_ARRAY_LEN(d->dirs) && d->dirs[i]; i++)
        presets_of(&b, d, i, json, &first);
    mesh_buf_puts(&b, json ? "]\n" : "");
    return mesh_buf_take(&b);
}

/* ---- a node's topology ---- */

static void topo_gpu(mesh_buf_t *b, const mesh_topo_t *t, int i, const mesh_policy_t *pol, int json)
{
    const mesh_topo_gpu_t *g = mesh_topo_gpu(t, i);
    mesh_gpu_t m;
    mesh_error_t err;
    int known = mesh_topo_gpu_model(t, i, &pol->assume, &m, &err) == 0;
    if (!json) {
        mesh_buf_printf(b, "  %3d  %s  %04x:%04x  %-15s  %5.1f GiB  %4d  %6d  %s\n", i, g->busid,
                        g->vendor_id, g->device_id, known ? m.name : "(unknown)",
                        known ? m.memory / GiB : 0.0, g->numa, g->island, g->cpus);
        return;
    }
    mesh_buf_printf(b, "%s{\"index\":%d,\"busid\":", i ? "," : "", i);
    mesh_buf_json_string(b, g->busid);
    mesh_buf_printf(b, ",\"vendor_id\":%u,\"device_id\":%u,\"model\":", g->vendor_id, g->device_id);
    if (known)
        mesh_buf_json_string(b, m.name);
    else
        mesh_buf_puts(b, "null");
    mesh_buf_printf(b,
                    ",\"memory\":%.0f,\"numa\":%d,\"island\":%d,\"cpus\":", known ? m.memory : 0.0,
                    g->numa, g->island);
    mesh_buf_json_string(b, g->cpus);
    mesh_buf_puts(b, "}");
}

/* JSON's tail: the islands' GPUs, the NUMA nodes, and what is assumed. */
static void topo_json_tail(mesh_buf_t *b, const mesh_topo_t *t, const mesh_alloc_t *a)
{
    int n = mesh_topo_gpu_count(t);
    mesh_buf_puts(b, "],\"islands\":[");
    for (int isl = 0; isl < mesh_topo_island_count(t); isl++) {
        mesh_buf_printf(b, "%s[", isl ? "," : "");
        for (int i = 0, first = 1; i < n; i++)
            if (mesh_topo_gpu(t, i)->island == isl) {
                mesh_buf_printf(b, "%s%d", first ? "" : ",", i);
                first = 0;
            }
        mesh_buf_puts(b, "]");
    }
    mesh_buf_printf(b, "],\"numa_nodes\":%d,\"links\":", mesh_topo_numa_count(t));
    mesh_buf_json_string(b, mesh_topo_links(t));
    mesh_buf_puts(b, ",\"assumes\":");
    if (!a) {
        mesh_buf_puts(b, "null}\n");
        return;
    }
    mesh_buf_puts(b, "{\"gpu\":");
    mesh_buf_json_string(b, a->gpu.name);
    mesh_buf_printf(b, ",\"gpus_per_node\":%d,\"memory\":%.0f,\"island\":%d}}\n", a->gpus_per_node,
                    a->gpu.memory, a->island);
}

/* Text's tail: what the planner assumes, or why it cannot use the GPUs. */
static void topo_text_tail(mesh_buf_t *b, int n, const mesh_alloc_t *a, const mesh_policy_t *pol,
                           const char *why)
{
    if (a)
        mesh_buf_printf(b,
                        "the planner assumes: %d x %s per node, %.1f GiB each, TP groups of up to "
                        "%d GPUs (consecutive tasks sharing an island%s)\n",
                        a->gpus_per_node, a->gpu.name, a->gpu.memory / GiB, a->island,
                        pol->launch.bind_gpu ? ", tasks bound island by island"
                                             : ", tasks in PCI order");
    else if (n)
        mesh_buf_printf(b, "the planner cannot use these GPUs: %s\n", why);
    else
        mesh_buf_puts(b, "no GPU found: the plugin falls back to the policy's gpu= or gpu_mem=\n");
}

char *mesh_listing_topo(const mesh_topo_t *t, const char *source, const mesh_policy_t *pol,
                        int json)
{
    mesh_buf_t b;
    mesh_alloc_t a;
    mesh_error_t err;
    int n = mesh_topo_gpu_count(t), numa = mesh_topo_numa_count(t);
    int usable = n > 0 && mesh_topo_alloc(t, &pol->assume, 1, pol->launch.bind_gpu, &a, &err) == 0;
    mesh_buf_init(&b);
    if (json) {
        mesh_buf_puts(&b, "{\"source\":");
        mesh_buf_json_string(&b, source);
        mesh_buf_puts(&b, ",\"gpus\":[");
    } else {
        mesh_buf_printf(&b, "topology of %s: %d GPU%s, %d NUMA node%s, islands from %s\n", source,
                        n, n == 1 ? "" : "s", numa, numa == 1 ? "" : "s", mesh_topo_links(t));
        if (n)
            mesh_buf_puts(&b, "  GPU  bus id        PCI id     model            memory     NUMA  "
                              "island  CPUs\n");
    }
    for (int i = 0; i < n; i++)
        topo_gpu(&b, t, i, pol, json);
    if (json)
        topo_json_tail(&b, t, usable ? &a : NULL);
    else
        topo_text_tail(&b, n, usable ? &a : NULL, pol, err.msg);
    return mesh_buf_take(&b);
}

/* ---- a sizing table ---- */

/* One row of the text table: '*' marks the choice. */
static void size_row_text(mesh_buf_t *b, const mesh_size_t *sz, int i, const mesh_model_t *m)
{
    const mesh_size_row_t *r = &sz->rows[i];
    char l[MESH_LAYOUT_STR_MAX], run[32] = "", rate[16], per_hour[16];
    mesh_estimate_t est;
    if (r->fits != 1) { /* why: a count the table plans; not planned: the controller's */
        mesh_buf_printf(b, "  %6d  %s\n", r->nodes, r->fits == 0 ? r->why : "not planned");
        return;
    }
    if (mesh_size_estimate(m, &r->best.cost, &est))
        snprintf(run, sizeof(run), est.seconds >= 2 * 86400 ? "%10.1f d" : "%10.1f h",
                 est.seconds / (est.seconds >= 2 * 86400 ? 86400 : 3600));
    /* 128.1 k and 3.60 M, not 1.281e+05: read at a glance, right-aligned */
    mesh_buf_printf(b, "%c %6d  %-60s %9.3g %11s %13s %6.1f/%.1f%s\n", i == sz->chosen ? '*' : ' ',
                    r->nodes, mesh_layout_format(&r->best.layout, l, sizeof(l)),
                    r->best.cost.step_seconds,
                    mesh_format_si(r->best.cost.tokens_per_sec, rate, sizeof(rate)),
                    mesh_format_si(r->tokens_per_gpu_hour, per_hour, sizeof(per_hour)),
                    r->best.memory.total / GiB, r->best.memory.capacity / GiB, run);
}

/* The row a run is estimated for: the choice, else (a deadline missed)
 * the fastest; and its estimate.  NULL when neither, or no budget. */
static const mesh_size_row_t *run_row(const mesh_size_t *sz, const mesh_model_t *m,
                                      mesh_estimate_t *est)
{
    int i = sz->chosen >= 0 ? sz->chosen : sz->fastest;
    if (i < 0 || !mesh_size_estimate(m, &sz->rows[i].best.cost, est))
        return NULL;
    return &sz->rows[i];
}

/* The run of the choice against the partition's time limit: one job's
 * --time, or the chain of jobs it takes and the commands that submit it. */
static void size_chain_text(mesh_buf_t *b, const mesh_size_t *sz, const mesh_model_t *m,
                            const mesh_size_job_t *job)
{
    mesh_estimate_t est;
    mesh_chain_t c;
    char t[32], cmd[512];
    const mesh_size_row_t *r = run_row(sz, m, &est);
    if (!r)
        return;
    mesh_size_chain(&est, sz->margin, job->max_minutes, &c);
    mesh_size_slurm_time(c.need, t, sizeof(t));
    /* the run as people read it (a short one was "0.0 d") */
    mesh_buf_printf(b, "Run on %d %s: %s, --time=%s with the %s margin", r->nodes,
                    mesh_noun(r->nodes, "node", "nodes"), mesh_duration_str(est.seconds).s, t,
                    mesh_pct_str(sz->margin).s);
    if (job->max_minutes > 0) {
        char max[32];
        mesh_size_slurm_time(job->max_minutes, max, sizeof(max));
        if (job->partition[0])
            mesh_buf_printf(b, "; partition %.*s's MaxTime is %s", /* a list's first */
                            mesh_first_partition_len(job->partition), job->partition, max);
        else
            mesh_buf_printf(b, "; the partition's MaxTime is %s", max);
    }
    if (c.jobs > 1) {
        mesh_size_slurm_time(c.minutes, t, sizeof(t));
        mesh_buf_printf(b,
                        ": %d chained jobs of --time=%s, each after the one before "
                        "(--dependency=singleton), the checkpoint carrying the run:\n",
                        c.jobs, t);
    } else {
        mesh_buf_puts(b, ":\n");
    }
    mesh_buf_printf(b, "  %s\n",
                    mesh_size_chain_recipe(&c, r->nodes, m->name, "job.sh", cmd, sizeof(cmd)));
}

static void size_text(mesh_buf_t *b, const mesh_size_t *sz, const mesh_model_t *m,
                      const mesh_alloc_t *a, const mesh_restart_t *restart, const char *from,
                      const mesh_size_job_t *job)
{
    int budget = m->tokens > 0 || m->steps > 0;
    char kept[64];
    mesh_buf_printf(b, "Sizing %s on %d-%d nodes of %d %s, goal %s\n", m->name, sz->lo, sz->hi,
                    a->gpus_per_node, a->gpu.name, sz->aim.text);
    if (restart)
        mesh_buf_printf(b, "keeping %s from %s, and the global batch of %ld\n",
                        mesh_restart_kept(restart, kept, sizeof(kept)), from, m->global_batch);
    mesh_buf_printf(b, "\n  %6s  %-60s %9s %11s %13s %10s%s\n", "nodes", "layout", "step s",
                    "tokens/s", "tok/GPU-hour", "GiB/usable", budget ? "   est. run" : "");
    for (int i = 0; i < sz->n_rows; i++)
        size_row_text(b, sz, i, m);
    mesh_buf_printf(b, "\n%s%s\n",
                    sz->fastest >= 0  ? "Too late: "
                    : sz->chosen >= 0 ? "Choice: "
                                      : "Nothing fits: ",
                    sz->reason);
    size_chain_text(b, sz, m, job);
}

static void size_row_json(mesh_buf_t *b, const mesh_size_t *sz, int i, const mesh_model_t *m)
{
    const mesh_size_row_t *r = &sz->rows[i];
    char l[MESH_LAYOUT_STR_MAX];
    mesh_estimate_t est;
    mesh_buf_printf(b, "%s{\"nodes\":%d,\"fits\":%s", i ? "," : "", r->nodes,
                    r->fits == 1 ? "true" : "false");
    if (r->fits == 0) { /* why (additive): no layout at all, or none that fits (null: not asked) */
        mesh_buf_printf(b, ",\"no_layout\":%s,\"reason\":",
                        r->no_layout < 0 ? "null"
                        : r->no_layout   ? "true"
                                         : "false");
        mesh_buf_json_string(b, r->why);
    }
    if (r->fits == 1)
        mesh_buf_printf(b,
                        ",\"layout\":\"%s\",\"step_seconds\":%.6g,\"tokens_per_second\":%.6g,"
                        "\"tokens_per_gpu_hour\":%.6g,\"memory_bytes\":%.0f,\"capacity_bytes\":"
                        "%.0f",
                        mesh_layout_format(&r->best.layout, l, sizeof(l)),
                        r->best.cost.step_seconds, r->best.cost.tokens_per_sec,
                        r->tokens_per_gpu_hour, r->best.memory.total, r->best.memory.capacity);
    if (r->fits == 1 && mesh_size_estimate(m, &r->best.cost, &est))
        mesh_buf_printf(b, ",\"steps\":%ld,\"estimated_seconds\":%.6g", est.steps, est.seconds);
    mesh_buf_puts(b, "}");
}

/* JSON (additive): a deadline's, and the run of the choice (or the
 * fastest) against the partition's time limit. */
static void size_run_json(mesh_buf_t *b, const mesh_size_t *sz, const mesh_model_t *m,
                          const mesh_size_job_t *job)
{
    mesh_estimate_t est;
    mesh_chain_t c;
    char t[32], cmd[512];
    if (sz->goal == MESH_SIZE_DEADLINE) {
        mesh_buf_puts(b, ",\"deadline\":{\"goal\":");
        mesh_buf_json_string(b, sz->aim.text);
        mesh_buf_printf(b, ",\"seconds\":%.6g,\"margin\":%.6g}", sz->aim.within, sz->margin);
    }
    const mesh_size_row_t *r = run_row(sz, m, &est);
    if (!r)
        return;
    mesh_size_chain(&est, sz->margin, job->max_minutes, &c);
    mesh_buf_printf(b, ",\"run\":{\"nodes\":%d,\"estimated_seconds\":%.6g,\"limit_minutes\":%ld,",
                    r->nodes, est.seconds, c.need);
    mesh_buf_printf(
        b, job->max_minutes > 0 ? "\"max_time_minutes\":%ld," : "\"max_time_minutes\":null,",
        job->max_minutes);
    mesh_buf_printf(b, "\"jobs\":%d,\"job_minutes\":%ld,\"time\":\"%s\",\"recipe\":", c.jobs,
                    c.minutes, mesh_size_slurm_time(c.minutes, t, sizeof(t)));
    mesh_buf_json_string(b,
                         mesh_size_chain_recipe(&c, r->nodes, m->name, "job.sh", cmd, sizeof(cmd)));
    mesh_buf_puts(b, "}");
}

/* JSON: the goal, the range, every row and the choice (null: none). */
static void size_json(mesh_buf_t *b, const mesh_size_t *sz, const mesh_model_t *m,
                      const mesh_alloc_t *a, const mesh_restart_t *restart,
                      const mesh_size_job_t *job)
{
    char kept[64];
    mesh_buf_puts(b, "{\"model\":");
    mesh_buf_json_string(b, m->name);
    mesh_buf_printf(b, ",\"goal\":\"%s\",\"nodes\":{\"lo\":%d,\"hi\":%d},\"gpus_per_node\":%d,",
                    mesh_size_goal_name(sz->goal), sz->lo, sz->hi, a->gpus_per_node);
    mesh_buf_puts(b, "\"gpu\":");
    mesh_buf_json_string(b, a->gpu.name);
    if (restart) /* what the sizing kept (additive: only for a restart) */
        mesh_buf_printf(b, ",\"kept\":\"%s\"", mesh_restart_kept(restart, kept, sizeof(kept)));
    mesh_buf_puts(b, ",\"rows\":[");
    for (int i = 0; i < sz->n_rows; i++)
        size_row_json(b, sz, i, m);
    if (sz->chosen >= 0)
        mesh_buf_printf(b, "],\"chosen\":%d", sz->rows[sz->chosen].nodes);
    else
        mesh_buf_puts(b, "],\"chosen\":null");
    mesh_buf_puts(b, ",\"reason\":");
    mesh_buf_json_string(b, sz->reason);
    mesh_buf_puts(b, ",\"would_fit\":");
    mesh_buf_printf(b, sz->would_fit ? "%d" : "null", sz->would_fit);
    mesh_buf_printf(b, ",\"work\":%ld", sz->work);
    size_run_json(b, sz, m, job);
    mesh_buf_puts(b, "}\n");
}

char *mesh_listing_size(const mesh_size_t *sz, const mesh_model_t *m, const mesh_alloc_t *a,
                        const mesh_restart_t *restart, const char *from, const mesh_size_job_t *job,
                        int json)
{
    mesh_buf_t b;
    mesh_size_job_t none = {.partition = ""};
    mesh_buf_init(&b);
    if (!job)
        job = &none;
    if (json)
        size_json(&b, sz, m, a, restart, job);
    else
        size_text(&b, sz, m, a, restart, from ? from : "", job);
    return mesh_buf_take(&b);
}
