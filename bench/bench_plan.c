/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Planning time, in process: the median of repeated mesh_plan_create calls
 * for a 7B fine-tune on 8 GPUs and for Llama 3.1 405B on 16,384 H100s, and
 * the worst case meshplan must survive inside slurmstepd: a hostile spec
 * (100,000 layers, 16M-token sequences) that fits nowhere, so the planner
 * also searches for what would.  And the plugin's other per-step cost: loading
 * the node's topology by live discovery and from an XML file.  Run with
 * `make bench`.  Two cases plan Llama 3 70B (8K and 32K tokens) on a single
 * node of 8 H100s with 2 TiB of host memory, where only the memory levers
 * (optimizer offload, partial recomputation) make it fit.
 * Target: at most 1 ms for the 16,384-GPU case, 2 ms for DeepSeek-V3 on
 * 2,048 H100s (a mixture of experts: the expert-parallel sizes are
 * searched as well).  And sizing, a ranged job's node count picked by a
 * goal: Llama 3.1 405B over 1-64 nodes (target: at most 5 ms).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "meshplan.h"

static const char hostile[] = "name: hostile\n"
                              "arch: {layers: 100000, hidden: 1024, heads: 1024, vocab: 128}\n"
                              "train: {seq_len: 16777216, global_batch: 1073741824}\n";

/* Llama 3 70B at 32K tokens: on one node of 8 H100s it fits only with the
 * optimizer offloaded and most layers recomputed. */
static const char long70b[] = "preset: llama3-70b\ntrain: {seq_len: 32768}\n";

/* Median time of planning preset on nodes x gpn GPUs; quick: of the
 * controller's yes/no (mesh_plan_any_fits) instead. */
static int bench_host(const char *preset, const char *gpu, int nodes, int gpn, int runs, int quick,
                      double host_memory)
{
    mesh_spec_dirs_t dirs = {{getenv("MESH_MODELS_DIR"), mesh_default_models_dir(), NULL, NULL}};
    mesh_model_t m;
    mesh_alloc_t a;
    mesh_policy_t pol;
    mesh_error_t err;
    mesh_policy_init(&pol);
    int rc = strcmp(preset, "hostile") == 0
                 ? mesh_spec_parse(hostile, strlen(hostile), "hostile", NULL, &m, &err)
             : strcmp(preset, "llama3-70b-32k") == 0
                 ? mesh_spec_parse(long70b, strlen(long70b), "llama3-70b-32k", &dirs, &m, &err)
                 : mesh_spec_load(preset, &dirs, &m, &err);
    if (rc < 0 || mesh_policy_alloc(&pol.assume, gpu, 0, 0, nodes, gpn, &a, &err) < 0) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return 1;
    }
    a.host_memory = host_memory;
    double *t = malloc(sizeof(double) * (size_t)runs);
    long evaluated = 0;
    char canon[MESH_LAYOUT_STR_MAX] = "";
    for (int i = 0; i < runs; i++) {
        double t0 = now();
        if (quick) {
            int fits = mesh_plan_any_fits(&m, &a, NULL, &pol.assume);
            t[i] = now() - t0;
            snprintf(canon, sizeof(canon), "any fits: %s", fits ? "yes" : "no");
            continue;
        }
        mesh_plan_t *p = mesh_plan_create(&m, &a, NULL, &pol.assume, &err);
        t[i] = now() - t0;
        if (!p) {
            fprintf(stderr, "bench: %s\n", err.msg);
            return 1;
        }
        evaluated = mesh_plan_evaluated(p);
        mesh_layout_format(&mesh_plan_best(p)->layout, canon, sizeof(canon));
        mesh_plan_destroy(p);
    }
    qsort(t, (size_t)runs, sizeof(double), cmp);
    printf("%-14s %s %5d x %d %-9s  median %8.4f ms  min %8.4f ms  max %8.4f ms  (%d runs", preset,
           quick ? "yes/no on" : "on       ", nodes, gpn, gpu, t[runs / 2] * 1e3, t[0] * 1e3,
           t[runs - 1] * 1e3, runs);
    if (!quick)
        printf(", %ld layouts evaluated", evaluated);
    printf(") -> %s\n", canon);
    free(t);
    return 0;
}

static int bench(const char *preset, const char *gpu, int nodes, int gpn, int runs, int quick)
{
    return bench_host(preset, gpu, nodes, gpn, runs, quick, 0);
}

/* Median time of sizing preset over lo..hi nodes of gpn GPUs for goal, as
 * job_submit/meshplan will for a ranged job (target: 5 ms for Llama 3.1
 * 405B on 1-64 nodes of 8 H100s). */
static int bench_size(const char *preset, const char *gpu, int lo, int hi, int gpn, int runs,
                      mesh_size_goal_t goal, unsigned flags)
{
    struct {
        mesh_model_t m;
        mesh_alloc_t a;
        mesh_policy_t pol;
    } in; /* the sizing's inputs: the policy's defaults, as the controller's */
    mesh_model_t *const mp = &in.m;
    mesh_error_t err;
    mesh_spec_dirs_t dirs = {{getenv("MESH_MODELS_DIR"), mesh_default_models_dir(), NULL, NULL}};
    mesh_policy_init(&in.pol);
    if (mesh_spec_load(preset, &dirs, mp, &err) < 0 ||
        mesh_policy_alloc(&in.pol.assume, gpu, 0, 0, lo, gpn, &in.a, &err) < 0) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return 1;
    }
    double *t = malloc(sizeof(double) * (size_t)runs);
    char why[MESH_SIZE_REASON_MAX] = "";
    for (int i = 0; i < runs; i++) {
        double t0 = now();
        mesh_size_t *s =
            mesh_size_create(mp, &in.a, lo, hi, NULL, &in.pol.assume, goal, flags, &err);
        t[i] = now() - t0;
        if (!s) {
            fprintf(stderr, "bench: %s\n", err.msg);
            free(t);
            return 1;
        }
        snprintf(why, sizeof(why), "%s", s->reason);
        mesh_size_destroy(s);
    }
    qsort(t, (size_t)runs, sizeof(double), cmp);
    printf("%-14s size %d-%d x %d %-9s %-9s%s median %8.4f ms  min %8.4f ms  max %8.4f ms  (%d "
           "runs) -> %s\n",
           preset, lo, hi, gpn, gpu, mesh_size_goal_name(goal), flags ? " table" : "",
           t[runs / 2] * 1e3, t[0] * 1e3, t[runs - 1] * 1e3, runs, why);
    free(t);
    return 0;
}

/* Median time of loading a topology: xml NULL is live discovery. */
static int bench_topo(const char *xml, int runs)
{
    double t[64];
    int gpus = 0;
    for (int i = 0; i < runs && i < 64; i++) {
        mesh_error_t err;
        double t0 = now();
        mesh_topo_t *topo = mesh_topo_load(xml, &err);
        t[i] = now() - t0;
        if (!topo) {
            fprintf(stderr, "bench: %s\n", err.msg);
            return 1;
        }
        gpus = mesh_topo_gpu_count(topo);
        mesh_topo_destroy(topo);
    }
    qsort(t, (size_t)runs, sizeof(double), cmp);
    printf("topology %-40s median %7.3f ms  min %7.3f ms  (%d runs, %d GPUs)\n",
           xml ? strrchr(xml, '/') + 1 : "of this machine (live discovery)", t[runs / 2] * 1e3,
           t[0] * 1e3, runs, gpus);
    return 0;
}

int main(void)
{
    int rc = bench("llama2-7b", "A100-80GB", 1, 8, 201, 0);
    rc |= bench("llama3.1-405b", "H100-SXM", 2048, 8, 51, 0);
    /* a mixture of experts: DeepSeek-V3 on 2,048 H100s, expert parallelism
     * searched too (target: at most 2 ms) */
    rc |= bench("deepseek-v3", "H100-SXM", 256, 8, 51, 0);
    rc |= bench("hostile", "H100-SXM", 1, 8, 11, 0);
    /* what job_submit/meshplan does for a job that fits */
    rc |= bench("llama3-8b", "H100-SXM", 2, 8, 201, 0);
    rc |= bench("llama3-8b", "H100-SXM", 2, 8, 201, 1);
    rc |= bench("llama3.1-405b", "H100-SXM", 2048, 8, 51, 1);
    /* what job_submit/meshplan does for a ranged job (sbatch -N 1-64 --mesh-size=...) */
    for (int g = MESH_SIZE_MIN; g <= MESH_SIZE_EFFICIENT; g++)
        rc |= bench_size("llama3.1-405b", "H100-SXM", 1, 64, 8, 21, (mesh_size_goal_t)g, 0);
    /* and `meshplan size`'s whole table */
    rc |= bench_size("llama3.1-405b", "H100-SXM", 1, 64, 8, 21, MESH_SIZE_MIN, MESH_SIZE_TABLE);
    /* the memory levers: offload and partial recomputation */
    rc |= bench_host("llama3-70b", "H100-SXM", 1, 8, 51, 0, 2048.0 * 1073741824);
    rc |= bench_host("llama3-70b-32k", "H100-SXM", 1, 8, 51, 0, 2048.0 * 1073741824);
    rc |= bench_topo(NULL, 21);
    const char *fix = getenv("MESH_FIXTURES");
    if (fix) {
        char xml[1024];
        snprintf(xml, sizeof(xml), "%s/topologies/hgx-h100-8gpu.xml", fix);
        rc |= bench_topo(xml, 21);
    }
    return rc;
}
