/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The per-task environment: names, values, export modes.
 */
#include "internal.h" /* the overlaps' table */
#include "moeutil.h"
#include "testutil.h"

static const char *get(const mesh_env_t *e, const char *name)
{
    for (int i = 0; i < mesh_env_count(e); i++)
        if (strcmp(mesh_env_name(e, i), name) == 0)
            return mesh_env_value(e, i);
    return NULL;
}

/* Whether e removes variable name from its task. */
static int unset_has(const mesh_env_t *e, const char *name)
{
    for (int i = 0; i < mesh_env_unset_count(e); i++)
        if (strcmp(mesh_env_unset_name(e, i), name) == 0)
            return 1;
    return 0;
}

static mesh_env_t *env_of(const mesh_plan_t *p, int node, int local, mesh_export_t mode)
{
    mesh_task_t t = {.node = node,
                     .local = local,
                     .master_addr = "n1",
                     .master_port = 20042,
                     .export_mode = mode,
                     .gpu_busid = NULL,
                     .numa_node = -1};
    mesh_error_t err;
    mesh_env_t *e = mesh_env_create(p, &t, &err);
    if (!e)
        fail_msg("%s", err.msg);
    return e;
}

static mesh_plan_t *example_plan(void)
{
    /* the example of doc/design.md, "Rank map" on 2 nodes x 8: t 2, p 4, d 2 */
    mesh_model_t m = test_preset("llama2-7b");
    m.global_batch = 16;
    mesh_alloc_t a = test_alloc("H100-SXM", 2, 8);
    return test_plan(&m, &a, "tp=2,pp=4,dp=2,cp=1,zero=1,vpp=1,mb=2,recompute=none,sp=on");
}

static void torch_mode__rank13(void **state)
{
    mesh_plan_t *p = example_plan();
    mesh_env_t *e = env_of(p, 1, 5, MESH_EXPORT_TORCH); /* rank 13 */
    assert_string_equal(get(e, "RANK"), "13");
    assert_string_equal(get(e, "WORLD_SIZE"), "16");
    assert_string_equal(get(e, "LOCAL_RANK"), "5");
    assert_string_equal(get(e, "LOCAL_WORLD_SIZE"), "8");
    assert_string_equal(get(e, "NODE_RANK"), "1");
    assert_string_equal(get(e, "MASTER_ADDR"), "n1");
    assert_string_equal(get(e, "MASTER_PORT"), "20042");
    assert_string_equal(get(e, "MESH_TP_RANK"), "1");
    assert_string_equal(get(e, "MESH_DP_RANK"), "0");
    assert_string_equal(get(e, "MESH_PP_RANK"), "3");
    assert_string_equal(get(e, "MESH_TP_GROUP"), "12,13");
    assert_string_equal(get(e, "MESH_DP_GROUP"), "13,15");
    assert_string_equal(get(e, "MESH_PP_GROUP"), "1,5,9,13");
    assert_string_equal(get(e, "MESH_ORDER"), "tp-cp-dp-pp");
    assert_string_equal(get(e, "MESH_PP_LAYERS"), "8,8,8,8");
    assert_string_equal(get(e, "MESH_NUM_MICRO_BATCHES"), "4");
    assert_string_equal(get(e, "MESH_GLOBAL_BATCH_SIZE"), "16");
    assert_string_equal(get(e, "MESH_ZERO_STAGE"), "1");
    assert_string_equal(get(e, "MESH_SEQUENCE_PARALLEL"), "1");
    assert_string_equal(get(e, "MESH_RECOMPUTE"), "none");
    assert_string_equal(get(e, "MESH_PLAN"),
                        "tp=2,pp=4,dp=2,cp=1,zero=1,vpp=1,mb=2,recompute=none,sp=on");
    assert_string_equal(get(e, "MESH_PLAN_DIGEST"), mesh_plan_digest(p));
    assert_null(get(e, "MESH_GPU_BUSID")); /* no topology in this test */
    assert_null(get(e, "PET_NNODES"));
    /* tp 2 on an H100: what Megatron-LM asks, over the job's own value */
    assert_string_equal(get(e, "CUDA_DEVICE_MAX_CONNECTIONS"), "1");
    /* the torch variables yield to values the task already has */
    for (int i = 0; i < mesh_env_count(e); i++)
        assert_int_equal(mesh_env_keep_existing(e, i),
                         strncmp(mesh_env_name(e, i), "MESH_", 5) != 0 &&
                             strcmp(mesh_env_name(e, i), "CUDA_DEVICE_MAX_CONNECTIONS") != 0);
    mesh_env_destroy(e);
    mesh_plan_destroy(p);
}

/* CUDA_DEVICE_MAX_CONNECTIONS where Megatron-LM's rule turns on the GPU and
 * the framework (arguments.py L1452-1479 at d98e8a6): from compute
 * capability 10 (B200) TP asks nothing, and a spec for DeepSpeed or plain
 * PyTorch is not told Megatron-LM's needs; Megatron-FSDP still refuses 1. */
static void max_connections__blackwell_and_other_frameworks(void **state)
{
    static const struct {
        const char *gpu, *framework, *mesh, *want;
    } cases[] = {
        {"H100-SXM", "auto", "tp=2,pp=1,dp=8,zero=1", "1"},
        {"H100-SXM", "megatron", "tp=1,pp=1,cp=2,dp=8,zero=1", "1"},
        {"H100-SXM", "megatron", "tp=1,pp=2,dp=8,zero=1", NULL},
        {"B200", "megatron", "tp=2,pp=1,dp=8,zero=1", NULL},
        {"B200", "auto", "tp=2,pp=1,dp=8,zero=3", "8"},
        {"A100-80GB", "megatron", "tp=1,pp=1,dp=16,zero=2", "8"},
        {"H100-SXM", "deepspeed", "tp=2,pp=1,dp=8,zero=1", NULL},
        {"H100-SXM", "torch", "tp=1,pp=1,dp=16,zero=2", NULL},
    };
    for (int i = 0; i < (int)(sizeof(cases) / sizeof(cases[0])); i++) {
        char spec[128];
        snprintf(spec, sizeof(spec), "preset: llama2-7b\ntrain: {framework: %s}\n",
                 cases[i].framework);
        mesh_model_t m = test_spec(spec);
        mesh_alloc_t a = test_alloc(cases[i].gpu, 2, 8);
        mesh_plan_t *p = test_plan(&m, &a, cases[i].mesh);
        mesh_env_t *e = env_of(p, 0, 0, MESH_EXPORT_TORCH);
        const char *got = get(e, "CUDA_DEVICE_MAX_CONNECTIONS");
        if (cases[i].want ? !got || strcmp(got, cases[i].want) != 0 : got != NULL)
            fail_msg("%s, %s, %s: CUDA_DEVICE_MAX_CONNECTIONS %s, want %s", cases[i].gpu,
                     cases[i].framework, cases[i].mesh, got ? got : "unset",
                     cases[i].want ? cases[i].want : "unset");
        mesh_env_destroy(e);
        mesh_plan_destroy(p);
    }
    (void)state;
}

/* The batch script's (export mode batch): the plan of the whole job, with
 * the frameworks' settings, and no rank and no launcher variable, which its
 * srun steps would inherit and keep as their own. */
static void batch_mode__layout_only(void **state)
{
    mesh_plan_t *p = example_plan();
    mesh_env_t *e = env_of(p, 0, 0, MESH_EXPORT_BATCH);
    assert_string_equal(get(e, "MESH_PLAN"),
                        "tp=2,pp=4,dp=2,cp=1,zero=1,vpp=1,mb=2,recompute=none,sp=on");
    assert_non_null(strstr(get(e, "MESH_MEGATRON_ARGS"), "--tensor-model-parallel-size 2 "));
    assert_string_equal(get(e, "CUDA_DEVICE_MAX_CONNECTIONS"), "1");
    assert_string_equal(get(e, "MESH_TP_SIZE"), "2");
    static const char *const none[] = {"RANK",         "WORLD_SIZE",    "LOCAL_RANK",
                                       "MASTER_ADDR",  "MASTER_PORT",   "PET_NNODES",
                                       "MESH_TP_RANK", "MESH_TP_GROUP", "MESH_EP_RANK"};
    for (size_t i = 0; i < sizeof(none) / sizeof(*none); i++)
        if (get(e, none[i]))
            fail_msg("the batch script got %s=%s", none[i], get(e, none[i]));
    mesh_env_destroy(e);
    /* one script a job: no second local task */
    mesh_task_t t = {.node = 0,
                     .local = 1,
                     .master_addr = "n1",
                     .export_mode = MESH_EXPORT_BATCH,
                     .numa_node = -1};
    mesh_error_t err;
    assert_null(mesh_env_create(p, &t, &err));
    assert_non_null(strstr(err.msg, "(batch: the script itself)"));
    mesh_plan_destroy(p);
    (void)state;
}

static void torchrun_mode__one_launcher_per_node(void **state)
{
    mesh_plan_t *p = example_plan();
    mesh_env_t *e = env_of(p, 1, 0, MESH_EXPORT_TORCHRUN);
    assert_string_equal(get(e, "PET_NNODES"), "2");
    assert_string_equal(get(e, "PET_NODE_RANK"), "1");
    assert_string_equal(get(e, "PET_NPROC_PER_NODE"), "8");
    assert_string_equal(get(e, "PET_MASTER_ADDR"), "n1");
    assert_string_equal(get(e, "PET_MASTER_PORT"), "20042");
    assert_null(get(e, "RANK"));
    assert_null(get(e, "MESH_TP_RANK")); /* torchrun decides the ranks */
    assert_string_equal(get(e, "MESH_TP_SIZE"), "2");
    mesh_env_destroy(e);
    mesh_task_t t = {.node = 0,
                     .local = 1,
                     .master_addr = "n1",
                     .export_mode = MESH_EXPORT_TORCHRUN,
                     .numa_node = -1};
    mesh_error_t err;
    assert_null(mesh_env_create(p, &t, &err));
    assert_non_null(strstr(err.msg, "torchrun"));
    mesh_plan_destroy(p);
}

static void huge_groups__compact(void **state)
{
    /* 32,768 ranks in one DP group would pass Linux's 128 KiB limit on one
     * variable: such a group is written FIRST:STRIDE:COUNT */
    mesh_model_t m = test_spec("params: 1e6\ntrain: {global_batch: 32768}\n");
    mesh_alloc_t a = test_alloc("H100-SXM", 4096, 8);
    mesh_plan_t *p = test_plan(&m, &a, "auto");
    mesh_env_t *e = env_of(p, 5, 3, MESH_EXPORT_TORCH);
    assert_string_equal(get(e, "MESH_DP_GROUP"), "0:1:32768");
    assert_string_equal(get(e, "MESH_TP_GROUP"), "43");
    for (int i = 0; i < mesh_env_count(e); i++)
        assert_true(strlen(mesh_env_value(e, i)) < 128 * 1024);
    mesh_env_destroy(e);
    mesh_plan_destroy(p);
}

static void huge_groups__4096_still_listed(void **state)
{
    /* up to 4096 ranks a group is listed (about 20 KiB); beyond, compact */
    mesh_model_t m = test_spec("params: 1e6\ntrain: {global_batch: 4096}\n");
    mesh_alloc_t a = test_alloc("H100-SXM", 512, 8);
    mesh_plan_t *p = test_plan(&m, &a, "auto");
    mesh_env_t *e = env_of(p, 1, 2, MESH_EXPORT_TORCH);
    char *want = malloc(6 * 4096);
    size_t n = 0;
    for (int r = 0; r < 4096; r++)
        n += (size_t)sprintf(want + n, "%s%d", r ? "," : "", r);
    assert_string_equal(get(e, "MESH_DP_GROUP"), want);
    free(want);
    mesh_env_destroy(e);
    mesh_plan_destroy(p);
}

static void tasks_outside__refused(void **state)
{
    mesh_plan_t *p = example_plan();
    mesh_error_t err;
    mesh_task_t t = {.node = 2, .local = 0, .master_addr = "n1", .numa_node = -1};
    assert_null(mesh_env_create(p, &t, &err));
    assert_non_null(strstr(err.msg, "node 2"));
    t.node = 0;
    t.local = 8;
    assert_null(mesh_env_create(p, &t, &err));
    t.local = 0;
    t.master_addr = "";
    assert_null(mesh_env_create(p, &t, &err));
    mesh_plan_destroy(p);
}

static void master_port__range_and_spread(void **state)
{
    for (unsigned long job = 1; job < 2000; job += 7)
        for (unsigned long step = 0; step < 4; step++) {
            int port = mesh_env_master_port(job, step, 20000, 20999);
            assert_true(port >= 20000 && port <= 20999);
        }
    assert_int_not_equal(mesh_env_master_port(100, 0, 20000, 29999),
                         mesh_env_master_port(100, 1, 20000, 29999));
    assert_int_not_equal(mesh_env_master_port(100, 0, 20000, 29999),
                         mesh_env_master_port(101, 0, 20000, 29999));
    assert_int_equal(mesh_env_master_port(5, 3, 30000, 30000), 30000);
    assert_int_equal(mesh_env_master_port(5, 3, 30001, 30000), 30001); /* empty range */
    /* the documented formula: lo + (job * 131 + step) mod (hi - lo + 1) */
    assert_int_equal(mesh_env_master_port(100, 0, 20000, 29999), 20000 + 13100 % 10000);
    assert_int_equal(mesh_env_master_port(101, 2, 20000, 29999), 20000 + (13231 + 2) % 10000);
    unsigned long big = 4294967295UL;
    assert_int_equal(mesh_env_master_port(big, big, 20000, 29999),
                     20000 + (int)((big * 131UL + big) % 10000UL));
}

/* ---- independent expectations: every variable of a task ----
 * What a task must get is written here by hand (the layout-wide values,
 * each with where it comes from) or derived here without the library: the
 * rank map by brute force from doc/design.md, "Rank map", the torch variables from
 * the task's place (RANK == SLURM_PROCID, section 6), MASTER_PORT from the
 * documented formula.  The library is asked only for the two values other
 * modules own: the memory model's prediction and the plan digest. */

#define GPN  8    /* every case runs on H100-SXM nodes of 8 GPUs */
#define JOB  4242 /* doc/guide.md's example job */
#define STEP 3

/* doc/guide.md "The per-task variables": MASTER_PORT = lo + (job_id*131 +
 * step_id) mod (hi - lo + 1), in the policy's port_range (default
 * 20000-29999, meshplan-policy(5)). */
static int documented_port(unsigned long job, unsigned long step, int lo, int hi)
{
    unsigned long span = (unsigned long)(hi - lo + 1);
    return lo + (int)((job * 131UL + step) % span);
}

/* doc/design.md, "Rank map": rank = tp + t*(cp + c*(dp + d*pp)), enumerated with
 * nested loops; a group is the ranks that differ in one coordinate only. */
typedef struct bf_map {
    int size[4]; /* t, c, d, p */
    long world;
    int (*co)[4]; /* co[rank] = {tp, cp, dp, pp} */
} bf_map_t;

enum { BF_TP, BF_CP, BF_DP, BF_PP };

static void bf_make(bf_map_t *m, int t, int c, int d, int p)
{
    m->size[BF_TP] = t, m->size[BF_CP] = c, m->size[BF_DP] = d, m->size[BF_PP] = p;
    m->world = (long)t * c * d * p;
    m->co = calloc((size_t)m->world, sizeof(*m->co));
    assert_non_null(m->co);
    for (int pp = 0; pp < p; pp++)
        for (int dp = 0; dp < d; dp++)
            for (int cp = 0; cp < c; cp++)
                for (int tp = 0; tp < t; tp++) {
                    long r = tp + (long)t * (cp + (long)c * (dp + (long)d * pp));
                    m->co[r][BF_TP] = tp, m->co[r][BF_CP] = cp;
                    m->co[r][BF_DP] = dp, m->co[r][BF_PP] = pp;
                }
}

/* The group of r along axis as doc/design.md, "Per-task environment" writes it: comma-separated
 * global ranks, ascending (every group here has far fewer than the 4096
 * members beyond which it is written FIRST:STRIDE:COUNT). */
static void bf_group(const bf_map_t *m, long r, int axis, char *out, size_t len)
{
    size_t at = 0;
    out[0] = '\0';
    for (long q = 0; q < m->world; q++) {
        int same = 1;
        for (int a = 0; a < 4; a++)
            same &= a == axis || m->co[q][a] == m->co[r][a];
        if (same)
            at += (size_t)snprintf(out + at, len - at, "%s%ld", at ? "," : "", q);
        assert_true(at < len);
    }
}

#define WANT_MAX 48

typedef struct want {
    int n;
    const char *name[WANT_MAX];
    char *value[WANT_MAX];
    int keep[WANT_MAX];
} want_t;

static void want_add(want_t *w, const char *name, int keep, const char *fmt, ...)
{
    char buf[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    assert_true(w->n < WANT_MAX);
    w->name[w->n] = name;
    w->value[w->n] = strdup(buf);
    w->keep[w->n] = keep;
    w->n++;
}

static void want_free(want_t *w)
{
    for (int i = 0; i < w->n; i++)
        free(w->value[i]);
    w->n = 0;
}

/* The task's variables are exactly w: each name once with its value and
 * its keep-existing flag, and nothing else. */
static void assert_env_is(const mesh_env_t *e, const want_t *w, const char *what)
{
    for (int i = 0; i < w->n; i++) {
        int at = -1, times = 0;
        for (int j = 0; j < mesh_env_count(e); j++)
            if (strcmp(mesh_env_name(e, j), w->name[i]) == 0)
                at = j, times++;
        if (times != 1)
            fail_msg("%s: %s exported %d times, want once", what, w->name[i], times);
        if (strcmp(mesh_env_value(e, at), w->value[i]) != 0)
            fail_msg("%s: %s is\n  '%s'\nwant\n  '%s'", what, w->name[i], mesh_env_value(e, at),
                     w->value[i]);
        if (mesh_env_keep_existing(e, at) != w->keep[i])
            fail_msg("%s: %s keep-existing %d, want %d", what, w->name[i],
                     mesh_env_keep_existing(e, at), w->keep[i]);
    }
    for (int j = 0; j < mesh_env_count(e); j++) {
        int known = 0;
        for (int i = 0; i < w->n; i++)
            known |= strcmp(mesh_env_name(e, j), w->name[i]) == 0;
        if (!known)
            fail_msg("%s: unexpected variable %s=%s", what, mesh_env_name(e, j),
                     mesh_env_value(e, j));
    }
    assert_int_equal(mesh_env_count(e), w->n);
}

/* One layout, every field pinned, and what its tasks must get. */
typedef struct env_case {
    const char *spec; /* YAML */
    int nodes;        /* of GPN H100-SXM each */
    const char *mesh; /* every field, in the canonical order: MESH_PLAN too */
    int t, c, d, p;   /* the sizes again, for the brute-force rank map */
    int zero, vpp, mb, sp;
    long micro_batches, global_batch;
    const char *recompute, *pp_layers, *megatron, *deepspeed;
} env_case_t;

static mesh_plan_t *case_plan(const env_case_t *k)
{
    mesh_model_t m = test_spec(k->spec);
    mesh_alloc_t a = test_alloc("H100-SXM", k->nodes, GPN);
    return test_plan(&m, &a, k->mesh);
}

/* Everything task t of case k must get (doc/design.md, "Per-task environment", and doc/guide.md
 * "The per-task variables"; the torchrun launcher gets no per-rank variable). */
static void want_task(const env_case_t *k, const mesh_plan_t *p, const bf_map_t *map,
                      const mesh_task_t *t, int port, want_t *w)
{
    long rank = (long)t->node * GPN + t->local; /* node-contiguous: RANK == SLURM_PROCID */
    int per_rank = t->export_mode != MESH_EXPORT_TORCHRUN;
    char g[8192];
    want_add(w, "MESH_TP_SIZE", 0, "%d", k->t);
    want_add(w, "MESH_PP_SIZE", 0, "%d", k->p);
    want_add(w, "MESH_DP_SIZE", 0, "%d", k->d);
    want_add(w, "MESH_CP_SIZE", 0, "%d", k->c);
    if (per_rank) {
        want_add(w, "MESH_TP_RANK", 0, "%d", map->co[rank][BF_TP]);
        want_add(w, "MESH_PP_RANK", 0, "%d", map->co[rank][BF_PP]);
        want_add(w, "MESH_DP_RANK", 0, "%d", map->co[rank][BF_DP]);
        want_add(w, "MESH_CP_RANK", 0, "%d", map->co[rank][BF_CP]);
        static const struct {
            const char *name;
            int axis;
        } groups[] = {{"MESH_TP_GROUP", BF_TP},
                      {"MESH_PP_GROUP", BF_PP},
                      {"MESH_DP_GROUP", BF_DP},
                      {"MESH_CP_GROUP", BF_CP}};
        for (int i = 0; i < 4; i++) {
            bf_group(map, rank, groups[i].axis, g, sizeof(g));
            want_add(w, groups[i].name, 0, "%s", g);
        }
    }
    want_add(w, "MESH_ORDER", 0, "tp-cp-dp-pp");
    want_add(w, "MESH_ZERO_STAGE", 0, "%d", k->zero);
    want_add(w, "MESH_VPP_SIZE", 0, "%d", k->vpp);
    want_add(w, "MESH_MICRO_BATCH_SIZE", 0, "%d", k->mb);
    want_add(w, "MESH_NUM_MICRO_BATCHES", 0, "%ld", k->micro_batches);
    want_add(w, "MESH_GLOBAL_BATCH_SIZE", 0, "%ld", k->global_batch);
    want_add(w, "MESH_RECOMPUTE", 0, "%s", k->recompute);
    want_add(w, "MESH_SEQUENCE_PARALLEL", 0, "%d", k->sp);
    want_add(w, "MESH_PP_LAYERS", 0, "%s", k->pp_layers);
    /* the memory model's and the digest's own values (tested in
     * test_memory and test_plan): here only that they are exported */
    want_add(w, "MESH_PREDICTED_MEM_BYTES", 0, "%.0f", mesh_plan_best(p)->memory.total);
    /* H100 SXM: 81559 MiB, what nvidia-smi reports (lib/gpu.c's table) */
    want_add(w, "MESH_GPU_MEM_BYTES", 0, "%lld", 81559LL * 1048576);
    want_add(w, "MESH_PLAN", 0, "%s", k->mesh);
    want_add(w, "MESH_PLAN_DIGEST", 0, "%s", mesh_plan_digest(p));
    want_add(w, "MESH_MEGATRON_ARGS", 0, "%s", k->megatron);
    want_add(w, "MESH_DEEPSPEED_CONFIG", 0, "%s", k->deepspeed);
    /* Megatron-LM's validate_args() at d98e8a6 on an H100 (compute
     * capability 9): Megatron-FSDP refuses 1 (arguments.py L1166-1167:
     * CUDA's own default, 8, is said over any 1 the job set), TP or CP
     * above 1 needs 1 (L1452-1479); otherwise it asks nothing, and a spec
     * for DeepSpeed is not told Megatron-LM's needs */
    mesh_framework_t fw = mesh_plan_model(p)->framework;
    if (fw != MESH_FW_AUTO && fw != MESH_FW_MEGATRON)
        ;
    else if (k->zero >= 2)
        want_add(w, "CUDA_DEVICE_MAX_CONNECTIONS", 0, "8");
    else if (k->t > 1 || k->c > 1)
        want_add(w, "CUDA_DEVICE_MAX_CONNECTIONS", 0, "1");
    if (per_rank && t->gpu_busid)
        want_add(w, "MESH_GPU_BUSID", 0, "%s", t->gpu_busid);
    if (per_rank && t->numa_node >= 0)
        want_add(w, "MESH_NUMA_NODE", 0, "%d", t->numa_node);
    if (per_rank && t->cuda_visible)
        want_add(w, "CUDA_VISIBLE_DEVICES", 0, "%s", t->cuda_visible);
    if (per_rank && t->rocr_visible)
        want_add(w, "ROCR_VISIBLE_DEVICES", 0, "%s", t->rocr_visible);
    /* the launcher's variables never overwrite the task's own (section 7) */
    if (t->export_mode == MESH_EXPORT_TORCH) {
        want_add(w, "RANK", 1, "%ld", rank);
        want_add(w, "WORLD_SIZE", 1, "%ld", (long)k->nodes * GPN);
        want_add(w, "LOCAL_RANK", 1, "%d", t->local);
        want_add(w, "LOCAL_WORLD_SIZE", 1, "%d", GPN);
        want_add(w, "NODE_RANK", 1, "%d", t->node);
        want_add(w, "MASTER_ADDR", 1, "%s", t->master_addr);
        want_add(w, "MASTER_PORT", 1, "%d", port);
    } else if (t->export_mode == MESH_EXPORT_TORCHRUN) {
        want_add(w, "PET_NNODES", 1, "%d", k->nodes);
        want_add(w, "PET_NODE_RANK", 1, "%d", t->node);
        want_add(w, "PET_NPROC_PER_NODE", 1, "%d", GPN);
        want_add(w, "PET_MASTER_ADDR", 1, "%s", t->master_addr);
        want_add(w, "PET_MASTER_PORT", 1, "%d", port);
    }
}

/* Check tasks of case k in mode: the given global ranks, or all of them
 * (all nodes' launchers under torchrun) when ranks is NULL. */
static void check_case(const env_case_t *k, mesh_export_t mode, const long *ranks, int n)
{
    mesh_plan_t *p = case_plan(k);
    bf_map_t map;
    bf_make(&map, k->t, k->c, k->d, k->p);
    assert_int_equal(map.world, (long)k->nodes * GPN);
    int torchrun = mode == MESH_EXPORT_TORCHRUN;
    if (!ranks)
        n = torchrun ? k->nodes : (int)map.world;
    for (int i = 0; i < n; i++) {
        long rank = ranks ? ranks[i] : torchrun ? (long)i * GPN : i;
        mesh_task_t t = {.node = (int)(rank / GPN),
                         .local = (int)(rank % GPN),
                         .master_addr = "node001",
                         .master_port = mesh_env_master_port(JOB, STEP, 20000, 29999),
                         .export_mode = mode,
                         .numa_node = -1};
        want_t w = {0};
        want_task(k, p, &map, &t, documented_port(JOB, STEP, 20000, 29999), &w);
        mesh_error_t err;
        mesh_env_t *e = mesh_env_create(p, &t, &err);
        if (!e)
            fail_msg("%s: %s", k->mesh, err.msg);
        char what[256];
        snprintf(what, sizeof(what), "%s, rank %ld (node %d local %d)", k->mesh, rank, t.node,
                 t.local);
        assert_env_is(e, &w, what);
        mesh_env_destroy(e);
        want_free(&w);
    }
    free(map.co);
    mesh_plan_destroy(p);
}

/* Megatron-LM's flags (megatron/training/arguments.py) and DeepSpeed's
 * config (deepspeed/runtime/config.py, zero/config.py) written out whole.
 * Their parts, in the order they are written:
 *   the model (below: LLAMA_ARCH);
 *   --tensor-model-parallel-size T --pipeline-model-parallel-size P
 *   --context-parallel-size C --micro-batch-size B --global-batch-size G
 *   --seq-length S, --sequence-parallel with sp on;
 *   the pipeline split: --num-layers-per-virtual-pipeline-stage (vpp > 1),
 *   plus --account-for-embedding-in-pipeline-split when the first stage
 *   holds one layer fewer and --account-for-loss-in-pipeline-split when the
 *   last one does too; or, without vpp, an uneven split as
 *   --decoder-first/last-pipeline-num-layers;
 *   ZeRO: 1 the distributed optimizer (--use-distributed-optimizer), 2 and 3
 *   Megatron-FSDP (--use-megatron-fsdp --data-parallel-sharding-strategy
 *   optim_grads, resp. optim_grads_params: megatron_fsdp.md), which saves
 *   only its own checkpoint format (--ckpt-format fsdp_dtensor:
 *   arguments.py L1169-1170 asserts it);
 *   recompute: selective -> --recompute-granularity selective; full ->
 *   granularity full, method uniform, 1 layer; full:N -> method block, N;
 *   the precision (--bf16, --fp16) and what the gradients are kept in
 *   (Megatron-FSDP told fp32, its own default being the parameters').
 * DeepSpeed: train_batch_size = micro * gradient_accumulation_steps * dp
 * (config.py _batch_assertion); the ZeRO stage; at stage 1 and more the
 * reduce bucket (500M, zero/config.py's default, pinned), at stage 3 the
 * prefetch bucket (50M); the precision block. */
#define LAYOUT(t, p, c, b, g, s)                                                                   \
    "--tensor-model-parallel-size " #t " --pipeline-model-parallel-size " #p                       \
    " --context-parallel-size " #c " --micro-batch-size " #b " --global-batch-size " #g            \
    " --seq-length " #s
/* Before them the model's flags, as the spec states them: the sizes, GQA,
 * the Llama-style SwiGLU, RMSNorm, no biases and rotary positions, the
 * vocabulary padded to 128 x tp (PV_V_T: vocabulary V at tp T), untied
 * output, no dropout, the presets' norm epsilon and rotary base.  MEG is Llama 2 7B's, MEG31 the
 * same with 31 layers, MEG70 Llama 3 70B's, MEG405 Llama 3.1 405B's. */
#define LLAMA_ARCH(l, h, f, a, gqa, s, rope, pv)                                                   \
    "--num-layers " #l " --hidden-size " #h " --ffn-hidden-size " #f                               \
    " --num-attention-heads " #a gqa                                                               \
    " --swiglu --normalization RMSNorm --disable-bias-linear --norm-epsilon 1e-05 "                \
    "--position-embedding-type rope --max-position-embeddings " #s rope " --padded-vocab-size " pv \
    " --untie-embeddings-and-output-weights --attention-dropout 0 --hidden-dropout 0 "
/* the presets' rotary bases and Llama 3.1's scaling (HF config.json's
 * rope_theta and rope_scaling.factor; every Llama's rms_norm_eps is 1e-5) */
#define ROPE_L2     " --rotary-base 10000"
#define ROPE_L3     " --rotary-base 500000"
#define ROPE_L31    " --rotary-base 500000 --use-rope-scaling --rope-scaling-factor 8"
#define PV_32000_1  "32000"
#define PV_32000_2  "32000"
#define PV_32000_4  "32256"
#define PV_128256_4 "128512"
#define PV_128256_8 "129024"
#define GQA8        " --group-query-attention --num-query-groups 8"
#define MEG(t, p, c, b, g, s)                                                                      \
    LLAMA_ARCH(32, 4096, 11008, 32, "", 4096, ROPE_L2, PV_32000_##t) LAYOUT(t, p, c, b, g, s)
#define MEG31(t, p, c, b, g, s)                                                                    \
    LLAMA_ARCH(31, 4096, 11008, 32, "", 4096, ROPE_L2, PV_32000_##t) LAYOUT(t, p, c, b, g, s)
#define MEG70(t, p, c, b, g, s)                                                                    \
    LLAMA_ARCH(80, 8192, 28672, 64, GQA8, 8192, ROPE_L3, PV_128256_##t) LAYOUT(t, p, c, b, g, s)
#define MEG405(t, p, c, b, g, s)                                                                   \
    LLAMA_ARCH(126, 16384, 53248, 128, GQA8, 8192, ROPE_L31, PV_128256_##t) LAYOUT(t, p, c, b, g, s)
#define DS(g, b, acc, zero)                                                                        \
    "{\"train_batch_size\":" #g ",\"train_micro_batch_size_per_gpu\":" #b                          \
    ",\"gradient_accumulation_steps\":" #acc ",\"zero_optimization\":{" zero "}"
#define DS_Z0 "\"stage\":0"
#define DS_Z1 "\"stage\":1,\"reduce_bucket_size\":500000000"
#define DS_Z2 "\"stage\":2,\"reduce_bucket_size\":500000000"
#define DS_Z3                                                                                      \
    "\"stage\":3,\"reduce_bucket_size\":500000000,\"stage3_prefetch_bucket_size\":50000000"
#define DS_BF16 ",\"bf16\":{\"enabled\":true}}"
#define FSDP_Z2                                                                                    \
    " --use-megatron-fsdp --data-parallel-sharding-strategy optim_grads --ckpt-format "            \
    "fsdp_dtensor"
#define FSDP_Z3                                                                                    \
    " --use-megatron-fsdp --data-parallel-sharding-strategy optim_grads_params --ckpt-format "     \
    "fsdp_dtensor"
/* Megatron-FSDP accumulates in the parameters' dtype unless told */
#define FSDP_FP32 " --megatron-fsdp-main-grads-dtype fp32"
/* the overlaps priced and exported (lib/overlap.c), in the table's order */
#define OV_GR     " --overlap-grad-reduce"
#define OV_PG     " --overlap-param-gather"
#define OV_TP     " --tp-comm-overlap"
#define OV_CP     " --cp-comm-type p2p"
#define SPEC_7B16 "preset: llama2-7b\ntrain: {global_batch: 16}\n"

/* the example of doc/design.md, "Rank map", Llama 2 7B (32 layers, seq 4096) */
static const env_case_t design_example = {
    SPEC_7B16,
    2,
    "tp=2,pp=4,dp=2,cp=1,zero=1,vpp=1,mb=2,recompute=none,sp=on",
    2,
    1,
    2,
    4,
    /* zero, vpp, mb, sp */ 1,
    1,
    2,
    1,
    /* 16 / (mb 2 * dp 2) micro-batches, global batch */ 4,
    16,
    "none",
    "8,8,8,8",
    MEG(2, 4, 1, 2, 16,
        4096) " --sequence-parallel --use-distributed-optimizer --bf16" OV_GR OV_PG OV_TP,
    DS(16, 2, 4, DS_Z1) DS_BF16};

static void env__design_example_every_task(void **state)
{
    check_case(&design_example, MESH_EXPORT_TORCH, NULL, 0);
    check_case(&design_example, MESH_EXPORT_TORCHRUN, NULL, 0);
    check_case(&design_example, MESH_EXPORT_MESH, NULL, 0);
}

static void env__context_parallel_every_task(void **state)
{
    /* every axis of size 2: each group differs from the others (CP 0,2;
     * DP 0,4; PP 0,8 for rank 0) */
    static const env_case_t k = {
        SPEC_7B16,
        2,
        "tp=2,pp=2,dp=2,cp=2,zero=0,vpp=1,mb=1,recompute=selective,sp=on",
        2,
        2,
        2,
        2,
        0,
        1,
        1,
        1,
        /* 16 / (1 * 2) */ 8,
        16,
        "selective",
        "16,16",
        MEG(2, 2, 2, 1, 16,
            4096) " --sequence-parallel --recompute-granularity selective --bf16" OV_GR OV_TP OV_CP,
        DS(16, 1, 8, DS_Z0) DS_BF16};
    check_case(&k, MESH_EXPORT_MESH, NULL, 0);
    check_case(&k, MESH_EXPORT_TORCH, NULL, 0);
    /* tp 1, cp 4: CP groups are consecutive ranks */
    static const env_case_t k2 = {
        SPEC_7B16,
        2,
        "tp=1,pp=2,dp=2,cp=4,zero=1,vpp=1,mb=1,recompute=full,sp=off",
        1,
        4,
        2,
        2,
        1,
        1,
        1,
        0,
        8,
        16,
        "full",
        "16,16",
        MEG(1, 2, 4, 1, 16,
            4096) " --use-distributed-optimizer --recompute-granularity full "
                  "--recompute-method uniform --recompute-num-layers 1 --bf16" OV_GR OV_PG OV_CP,
        DS(16, 1, 8, DS_Z1) DS_BF16};
    check_case(&k2, MESH_EXPORT_TORCH, NULL, 0);
}

static void env__zero_stages(void **state)
{
    /* plain DP over 16 GPUs, tp 1 (no sequence parallelism), 64 sequences */
    static const env_case_t z[] = {
        {"preset: llama2-7b\ntrain: {global_batch: 64}\n", 2,
         "tp=1,pp=1,dp=16,cp=1,zero=0,vpp=1,mb=1,recompute=full,sp=off", 1, 1, 16, 1, 0, 1, 1, 0, 4,
         64, "full", "32",
         MEG(1, 1, 1, 1, 64, 4096) " --recompute-granularity full --recompute-method uniform "
                                   "--recompute-num-layers 1 --bf16" OV_GR,
         DS(64, 1, 4, DS_Z0) DS_BF16},
        {"preset: llama2-7b\ntrain: {global_batch: 64}\n", 2,
         "tp=1,pp=1,dp=16,cp=1,zero=1,vpp=1,mb=1,recompute=full,sp=off", 1, 1, 16, 1, 1, 1, 1, 0, 4,
         64, "full", "32",
         MEG(1, 1, 1, 1, 64,
             4096) " --use-distributed-optimizer --recompute-granularity full "
                   "--recompute-method uniform --recompute-num-layers 1 --bf16" OV_GR OV_PG,
         DS(64, 1, 4, DS_Z1) DS_BF16},
        {"preset: llama2-7b\ntrain: {global_batch: 64}\n", 2,
         "tp=1,pp=1,dp=16,cp=1,zero=2,vpp=1,mb=1,recompute=full,sp=off", 1, 1, 16, 1, 2, 1, 1, 0, 4,
         64, "full", "32",
         MEG(1, 1, 1, 1, 64, 4096) FSDP_Z2
         " --recompute-granularity full --recompute-method "
         "uniform --recompute-num-layers 1 --bf16" FSDP_FP32 OV_GR OV_PG,
         DS(64, 1, 4, DS_Z2) DS_BF16},
        {"preset: llama2-7b\ntrain: {global_batch: 64}\n", 2,
         "tp=1,pp=1,dp=16,cp=1,zero=3,vpp=1,mb=1,recompute=full,sp=off", 1, 1, 16, 1, 3, 1, 1, 0, 4,
         64, "full", "32",
         MEG(1, 1, 1, 1, 64, 4096) FSDP_Z3
         " --recompute-granularity full --recompute-method "
         "uniform --recompute-num-layers 1 --bf16" FSDP_FP32 OV_GR OV_PG,
         DS(64, 1, 4, DS_Z3) DS_BF16},
        /* with TP and PP around the sharded optimizer */
        {SPEC_7B16, 2, "tp=2,pp=2,dp=4,cp=1,zero=3,vpp=1,mb=1,recompute=none,sp=on", 2, 1, 4, 2, 3,
         1, 1, 1, 4, 16, "none", "16,16",
         MEG(2, 2, 1, 1, 16, 4096) " --sequence-parallel" FSDP_Z3
                                   " --bf16" FSDP_FP32 OV_GR OV_PG OV_TP,
         DS(16, 1, 4, DS_Z3) DS_BF16},
    };
    for (size_t i = 0; i < sizeof(z) / sizeof(z[0]); i++)
        check_case(&z[i], MESH_EXPORT_TORCH, NULL, 0);
}

static void env__recompute_block(void **state)
{
    /* full:3: the first 3 layers of each stage (Megatron's block method) */
    static const env_case_t k = {
        SPEC_7B16,
        2,
        "tp=4,pp=2,dp=2,cp=1,zero=1,vpp=1,mb=1,recompute=full:3,sp=on",
        4,
        1,
        2,
        2,
        1,
        1,
        1,
        1,
        8,
        16,
        "full:3",
        "16,16",
        MEG(4, 2, 1, 1, 16, 4096) " --sequence-parallel --use-distributed-optimizer "
                                  "--recompute-granularity full --recompute-method block "
                                  "--recompute-num-layers 3 --bf16" OV_GR OV_PG OV_TP,
        DS(16, 1, 8, DS_Z1) DS_BF16};
    check_case(&k, MESH_EXPORT_MESH, NULL, 0);
}

static void env__sequence_parallel_off(void **state)
{
    /* tp 4 with sp=off pinned: no --sequence-parallel, MESH_SEQUENCE_PARALLEL=0 */
    static const env_case_t k = {
        SPEC_7B16,
        2,
        "tp=4,pp=2,dp=2,cp=1,zero=1,vpp=1,mb=1,recompute=full:3,sp=off",
        4,
        1,
        2,
        2,
        1,
        1,
        1,
        0,
        8,
        16,
        "full:3",
        "16,16",
        MEG(4, 2, 1, 1, 16, 4096) " --use-distributed-optimizer "
                                  "--recompute-granularity full --recompute-method block "
                                  "--recompute-num-layers 3 --bf16" OV_GR OV_PG,
        DS(16, 1, 8, DS_Z1) DS_BF16};
    check_case(&k, MESH_EXPORT_MESH, NULL, 0);
}

/* Llama 3.1 405B: 126 layers over 16 stages is 8 per stage with a deficit
 * of 2: the first and the last stage hold 7 (the Llama 3 recipe), and an
 * interleaved split counts the embedding and the loss as one layer each:
 * (126 + 2) / (16 * 4) = 2 layers per virtual stage. */
#define PP16_LAYERS "7,8,8,8,8,8,8,8,8,8,8,8,8,8,8,7"

static void env__uneven_pipelines(void **state)
{
    static const long some[] = {0, 5, 8191, 16383};
    static const env_case_t k405 = {
        "preset: llama3.1-405b\n",
        2048,
        "tp=8,pp=16,dp=128,cp=1,zero=2,vpp=1,mb=1,recompute=none,sp=on",
        8,
        1,
        128,
        16,
        2,
        1,
        1,
        1,
        /* global batch 2048 / dp 128 */ 16,
        2048,
        "none",
        PP16_LAYERS,
        MEG405(8, 16, 1, 1, 2048,
               8192) " --sequence-parallel --decoder-first-pipeline-num-layers 7 "
                     "--decoder-last-pipeline-num-layers 7" FSDP_Z2
                     " --bf16" FSDP_FP32 OV_GR OV_PG OV_TP,
        DS(2048, 1, 16, DS_Z2) DS_BF16};
    check_case(&k405, MESH_EXPORT_TORCH, some, 4);
    /* 31 layers over 4 stages: a deficit of 1, which the first stage takes
     * (7,8,8,8) */
    static const env_case_t k31 = {
        "preset: llama2-7b\narch: {layers: 31}\ntrain: {global_batch: 16}\n",
        1,
        "tp=2,pp=4,dp=1,cp=1,zero=0,vpp=1,mb=1,recompute=none,sp=on",
        2,
        1,
        1,
        4,
        0,
        1,
        1,
        1,
        16,
        16,
        "none",
        "7,8,8,8",
        MEG31(2, 4, 1, 1, 16, 4096) " --sequence-parallel --decoder-first-pipeline-num-layers 7 "
                                    "--decoder-last-pipeline-num-layers 8 --bf16" OV_TP,
        DS(16, 1, 16, DS_Z0) DS_BF16};
    check_case(&k31, MESH_EXPORT_MESH, NULL, 0);
}

static void env__interleaved_pipelines(void **state)
{
    /* Llama 3 70B: 80 layers, 10 per stage of 8, 5 chunks of 2; no deficit,
     * so no account-for flags */
    static const env_case_t k70 = {
        "preset: llama3-70b\n",
        8,
        "tp=4,pp=8,dp=2,cp=1,zero=1,vpp=5,mb=1,recompute=none,sp=on",
        4,
        1,
        2,
        8,
        1,
        5,
        1,
        1,
        /* 512 / (1 * 2) */ 256,
        512,
        "none",
        "10,10,10,10,10,10,10,10",
        MEG70(4, 8, 1, 1, 512, 8192) " --sequence-parallel --num-layers-per-virtual-pipeline-stage "
                                     "2 --use-distributed-optimizer --bf16" OV_GR OV_PG OV_TP,
        DS(512, 1, 256, DS_Z1) DS_BF16};
    check_case(&k70, MESH_EXPORT_TORCH, NULL, 0);
    /* deficit 2: both the embedding and the loss take a layer's slot; the
     * published layout, which ran without --tp-comm-overlap: its
     * Userbuffers would not fit beside it (test_plan's
     * levers__tp_overlap_off_only_where_its_buffers_do_not_fit) */
    static const long some[] = {0, 8191, 16383};
    static const env_case_t k405 = {
        "preset: llama3.1-405b\n",
        2048,
        "tp=8,pp=16,dp=128,cp=1,zero=2,vpp=4,mb=1,recompute=none,sp=on,tp_overlap=off",
        8,
        1,
        128,
        16,
        2,
        4,
        1,
        1,
        16,
        2048,
        "none",
        PP16_LAYERS,
        MEG405(8, 16, 1, 1, 2048,
               8192) " --sequence-parallel --num-layers-per-virtual-pipeline-stage "
                     "2 --account-for-embedding-in-pipeline-split "
                     "--account-for-loss-in-pipeline-split" FSDP_Z2 " --bf16" FSDP_FP32 OV_GR OV_PG,
        DS(2048, 1, 16, DS_Z2) DS_BF16};
    check_case(&k405, MESH_EXPORT_TORCH, some, 3);
    /* deficit 1: only the embedding does, (31 + 1) / (4 * 2) = 4 layers
     * per virtual stage */
    static const env_case_t k31 = {
        "preset: llama2-7b\narch: {layers: 31}\ntrain: {global_batch: 16}\n",
        1,
        "tp=2,pp=4,dp=1,cp=1,zero=0,vpp=2,mb=1,recompute=none,sp=on",
        2,
        1,
        1,
        4,
        0,
        2,
        1,
        1,
        16,
        16,
        "none",
        "7,8,8,8",
        MEG31(2, 4, 1, 1, 16,
              4096) " --sequence-parallel --num-layers-per-virtual-pipeline-stage 4 "
                    "--account-for-embedding-in-pipeline-split --bf16" OV_TP,
        DS(16, 1, 16, DS_Z0) DS_BF16};
    check_case(&k31, MESH_EXPORT_MESH, NULL, 0);
}

static void env__frameworks(void **state)
{
    /* framework: deepspeed with bf16 gradient accumulation: DeepSpeed is
     * told data_types.grad_accum_dtype (engine.py), Megatron-LM the
     * precision-aware optimizer's --main-grads-dtype bf16 */
    static const env_case_t ds = {
        "preset: llama2-7b\ntrain: {global_batch: 16, framework: deepspeed, grad_accum_dtype: "
        "bf16}\n",
        2,
        "tp=2,pp=4,dp=2,cp=1,zero=1,vpp=1,mb=2,recompute=none,sp=on",
        2,
        1,
        2,
        4,
        1,
        1,
        2,
        1,
        4,
        16,
        "none",
        "8,8,8,8",
        MEG(2, 4, 1, 2, 16,
            4096) " --sequence-parallel --use-distributed-optimizer --bf16 "
                  "--use-precision-aware-optimizer --main-grads-dtype bf16" OV_GR OV_PG OV_TP,
        DS(16, 2, 4, DS_Z1) ",\"bf16\":{\"enabled\":true},\"data_types\":{\"grad_accum_dtype\":"
                            "\"bf16\"}}"};
    check_case(&ds, MESH_EXPORT_TORCH, NULL, 0);
    /* framework: megatron in fp16: Megatron-LM keeps fp16 main grads
     * unless told --accumulate-allreduce-grads-in-fp32 (arguments.py sets
     * it itself only under --bf16), which the spec's grad_accum_dtype: fp32
     * asks for.  DeepSpeed accumulates in the model's dtype by default
     * (engine.py); data_types names only a 16-bit accumulation */
    static const env_case_t mg[] = {
        {"preset: llama2-7b\ntrain: {global_batch: 16, framework: megatron, precision: fp16}\n", 2,
         "tp=2,pp=4,dp=2,cp=1,zero=1,vpp=1,mb=2,recompute=none,sp=on", 2, 1, 2, 4, 1, 1, 2, 1, 4,
         16, "none", "8,8,8,8",
         MEG(2, 4, 1, 2, 16,
             4096) " --sequence-parallel --use-distributed-optimizer --fp16" OV_GR OV_PG OV_TP,
         /* said explicitly, as the spec's (default) fp16 accumulation */
         DS(16, 2, 4, DS_Z1) ",\"fp16\":{\"enabled\":true},\"data_types\":{\"grad_accum_"
                             "dtype\":\"fp16\"}}"},
        {"preset: llama2-7b\ntrain: {global_batch: 16, framework: megatron, precision: fp16, "
         "grad_accum_dtype: fp32}\n",
         2, "tp=2,pp=4,dp=2,cp=1,zero=1,vpp=1,mb=2,recompute=none,sp=on", 2, 1, 2, 4, 1, 1, 2, 1, 4,
         16, "none", "8,8,8,8",
         MEG(2, 4, 1, 2, 16, 4096) " --sequence-parallel --use-distributed-optimizer --fp16 "
                                   "--accumulate-allreduce-grads-in-fp32" OV_GR OV_PG OV_TP,
         DS(16, 2, 4, DS_Z1) ",\"fp16\":{\"enabled\":true}}"},
    };
    check_case(&mg[0], MESH_EXPORT_TORCH, NULL, 0);
    check_case(&mg[1], MESH_EXPORT_MESH, NULL, 0);
}

/* MESH_MEGATRON_ARGS of spec on nodes x GPN H100s under the layout mesh,
 * compared whole. */
static void assert_megatron(const char *spec, int nodes, const char *mesh, const char *want)
{
    mesh_model_t m = test_spec(spec);
    mesh_alloc_t a = test_alloc("H100-SXM", nodes, GPN);
    mesh_plan_t *p = test_plan(&m, &a, mesh);
    char *got = test_env_value(p, "MESH_MEGATRON_ARGS");
    assert_string_equal(got, want);
    free(got);
    mesh_plan_destroy(p);
}

/* Before Ampere (V100: no bf16) Transformer Engine does not run:
 * Megatron-LM's local implementation, its experts one after another (no
 * grouped GEMM below compute capability 8), its attention unfused and so
 * priced, no TP overlap (pinned on, refused), and no expert all-to-all
 * overlap, whose delayed weight gradients need Transformer Engine; from
 * Ampere on, none of that. */
static void env__local_implementation_before_ampere(void **state)
{
    (void)state;
    static const struct {
        const char *gpu, *spec;
        int local;
    } runs[] = {
        {"V100-32GB", "preset: mixtral-8x7b\ntrain: {precision: fp16}\n", 1},
        {"V100-32GB", "preset: llama2-7b\ntrain: {precision: fp16}\n", 1},
        /* the expert all-to-all's overlap delays weight gradients, which
         * only Transformer Engine does (arguments.py L1903-1909) */
        {"V100-32GB", "preset: gpt-oss-20b\ntrain: {precision: fp16}\n", 1},
        {"A100-80GB", "preset: mixtral-8x7b\n", 0},
    };
    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
        mesh_model_t m = test_spec(runs[i].spec);
        mesh_alloc_t a = test_alloc(runs[i].gpu, 8, 8);
        mesh_plan_t *p = test_plan(&m, &a, "tp=2");
        char *args = test_env_value(p, "MESH_MEGATRON_ARGS");
        int moe = mesh_model_is_moe(&m);
        assert_int_equal(strstr(args, "--transformer-impl local") != NULL, runs[i].local);
        assert_int_equal(strstr(args, "--attention-backend unfused") != NULL, runs[i].local);
        assert_int_equal(strstr(args, "--tp-comm-overlap") == NULL, runs[i].local);
        assert_int_equal(strstr(args, "--moe-grouped-gemm") != NULL, moe && !runs[i].local);
        assert_int_equal(strstr(args, "--delay-wgrad-compute") != NULL, moe && !runs[i].local);
        assert_int_equal(mesh_plan_model(p)->flash_attention, !runs[i].local);
        char *text = mesh_report_text(p); /* and the plan says why TP is not overlapped */
        char why[128];
        snprintf(why, sizeof(why), "tp_overlap: off: %s runs no Transformer Engine", runs[i].gpu);
        assert_int_equal(strstr(text, why) != NULL, runs[i].local);
        free(text);
        free(args);
        mesh_plan_destroy(p);
    }
    mesh_model_t m = test_spec("preset: llama2-7b\ntrain: {precision: fp16}\n");
    mesh_alloc_t a = test_alloc("V100-32GB", 8, 8);
    mesh_layout_t pins = test_mesh("tp=2,tp_overlap=on");
    mesh_policy_t pol;
    mesh_error_t err;
    mesh_policy_init(&pol);
    assert_null(mesh_plan_create(&m, &a, &pins, &pol.assume, &err));
    assert_string_equal(err.msg, "mesh tp_overlap=on: TP's overlap runs in Transformer Engine, "
                                 "which needs Ampere or later (V100-32GB has no bf16); leave "
                                 "tp_overlap out");
    /* nor context parallelism, which the local attention has not; left
     * free, a long sequence is planned without it */
    pins = test_mesh("cp=2");
    assert_null(mesh_plan_create(&m, &a, &pins, &pol.assume, &err));
    assert_string_equal(err.msg, "mesh cp=2: before Ampere (V100-32GB has no bf16) Megatron-LM "
                                 "runs its local attention, which has no context parallelism; "
                                 "leave cp out");
    /* cp=1, what such a plan holds anyway, is no conflict */
    pins = test_mesh("cp=1");
    mesh_plan_t *one = mesh_plan_create(&m, &a, &pins, &pol.assume, &err);
    assert_non_null(one);
    assert_int_equal(mesh_plan_best(one)->layout.cp, 1);
    mesh_plan_destroy(one);
    m = test_spec("preset: llama2-7b\ntrain: {precision: fp16, seq_len: 32768, global_batch: "
                  "64}\n");
    mesh_plan_t *p = test_plan(&m, &a, "");
    assert_int_equal(mesh_plan_best(p)->layout.cp, 1);
    mesh_plan_destroy(p);
    /* and what would fit, where nothing does, is such a layout too */
    m = test_spec("preset: llama3-70b\ntrain: {precision: fp16, seq_len: 16384}\n");
    a = test_alloc("V100-32GB", 2, 8);
    p = test_plan(&m, &a, "");
    assert_false(mesh_plan_fits(p));
    int advised = 0;
    for (int i = 0; i < mesh_plan_advice_count(p); i++) {
        const mesh_advice_t *r = mesh_plan_advice_record(p, i);
        if (r->kind != MESH_ADVICE_NODES)
            continue;
        advised++;
        assert_int_equal(r->candidate.layout.cp, 1);
        assert_int_equal(r->candidate.layout.tp_overlap_off, 1);
    }
    assert_int_equal(advised, 1);
    mesh_plan_destroy(p);
}

/* Llama 4's attention and router keys reach Megatron-LM's own flags (its
 * TransformerConfig fields qk_l2_norm, no_rope_freq, rotary_interleaved
 * and moe_apply_probs_on_input, made flags by arguments.py's
 * ArgumentGroupFactory at d98e8a6), and a model without them gets none. */
static void env__llama4_flags(void **state)
{
    (void)state;
    static const char *const flags[] = {" --qk-l2-norm ", " --no-rope-freq 4 ",
                                        " --rotary-interleaved ", " --moe-apply-probs-on-input "};
    mesh_model_t m = test_spec("arch: {layers: 8, hidden: 512, heads: 8, kv_heads: 2, ffn: 1024, "
                               "vocab: 1000, mlp: swiglu, qk_l2_norm: true, nope_every: 4, "
                               "rotary_interleaved: true, moe: "
                               "{experts: 4, top_k: 1, ffn: 512, shared_experts: 1, score: "
                               "sigmoid, probs_on_input: true}}\n");
    mesh_model_t plain =
        test_spec("arch: {layers: 8, hidden: 512, heads: 8, kv_heads: 2, ffn: "
                  "1024, vocab: 1000, mlp: swiglu, moe: {experts: 4, top_k: 1}}\n");
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    mesh_plan_t *p = test_plan(&m, &a, "ep=4"), *q = test_plan(&plain, &a, "ep=4");
    char *args = test_env_value(p, "MESH_MEGATRON_ARGS");
    char *none = test_env_value(q, "MESH_MEGATRON_ARGS");
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
        if (!strstr(args, flags[i]) || strstr(none, flags[i]))
            fail_msg("'%s' not in '%s' alone (and not '%s')", flags[i], args, none);
    free(args);
    free(none);
    mesh_plan_destroy(p);
    mesh_plan_destroy(q);
    /* a spec's rotary keys under a later mlp of learned positions (kept,
     * unused, as spec_check.c keeps them): no rotary flag */
    m.mlp = MESH_MLP_GELU;
    m.moe.shared_experts = 0;
    p = test_plan(&m, &a, "ep=4");
    args = test_env_value(p, "MESH_MEGATRON_ARGS");
    if (strstr(args, "rotary") || strstr(args, "rope") || !strstr(args, " --qk-l2-norm "))
        fail_msg("'%s'", args);
    free(args);
    mesh_plan_destroy(p);
}

/* MoE every N layers as --moe-layer-freq's list, on layers N-1, 2N-1, ...
 * (Megatron-LM's int form N would put them on 0, N, ...): Maverick's
 * [0, 1] * 24, and a pattern whose last layers are dense where N does not
 * divide the layers. */
static void env__moe_every_few_layers_as_a_pattern(void **state)
{
    (void)state;
    static const struct {
        const char *spec, *flag;
    } cases[] = {
        {"preset: llama4-maverick\n", " --moe-layer-freq ([0]*1+[1])*24 "},
        {"preset: llama4-maverick\narch:\n  layers: 47\n",
         " --moe-layer-freq ([0]*1+[1])*23+[0]*1 "},
        {"preset: llama4-maverick\narch:\n  moe:\n    every: 3\n",
         " --moe-layer-freq ([0]*2+[1])*16 "},
        {"preset: llama4-maverick\narch:\n  moe:\n    every: 1\n", " --moe-layer-freq 1 "},
    };
    mesh_alloc_t a = test_alloc("H100-SXM", 32, 8);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        mesh_model_t m = test_spec(cases[i].spec);
        mesh_plan_t *p = test_plan(&m, &a, "tp=8,pp=4,ep=8");
        char *args = test_env_value(p, "MESH_MEGATRON_ARGS");
        if (!strstr(args, cases[i].flag))
            fail_msg("%s: '%s' not in '%s'", cases[i].spec, cases[i].flag, args);
        free(args);
        mesh_plan_destroy(p);
    }
}

/* GPT-OSS: its window of 128 as Megatron-LM's (127, 0), every second
 * layer whole, the sinks, the quick GeGLU times (up + 1) clamped at 7,
 * biases kept (and so the unfused bias-dropout its grouped experts need),
 * YaRN with its correction range unrounded; the spec's other rotary
 * scaling, Llama 3.1's, stays as it was, and YaRN under a Llama-style
 * model is the yarn embedding, not --use-rope-scaling. */
static void env__gpt_oss_and_yarn_flags(void **state)
{
    (void)state;
    assert_megatron(
        "preset: gpt-oss-20b\n", 2,
        "tp=1,pp=1,dp=16,cp=1,ep=8,etp=1,zero=1,vpp=1,mb=1,recompute=none",
        "--num-layers 24 --hidden-size 2880 --ffn-hidden-size 2880 --num-attention-heads 64 "
        "--group-query-attention --num-query-groups 8 --kv-channels 64 --window-size 127,0 "
        "--window-attn-skip-freq 2 --softmax-type learnable --quick-geglu --glu-linear-offset 1 "
        "--normalization RMSNorm --norm-epsilon 1e-05 --activation-func-clamp-value 7 "
        "--position-embedding-type yarn --max-position-embeddings 4096 --rotary-base 150000 "
        "--rotary-scaling-factor 32 --no-yarn-correction-range-round-to-int --padded-vocab-size "
        "201088 --untie-embeddings-and-output-weights --attention-dropout 0 --hidden-dropout "
        "0 " LAYOUT(1, 1, 1, 1, 512,
                    4096) " --use-distributed-optimizer --bf16 --num-experts 32 "
                          "--moe-router-topk 4 --moe-ffn-hidden-size 2880 --moe-layer-freq 1 "
                          "--expert-model-parallel-size 8 --expert-tensor-parallel-size 1 "
                          "--moe-token-dispatcher-type alltoall --moe-grouped-gemm "
                          "--no-bias-dropout-fusion "
                          "--moe-aux-loss-coeff 1e-2" OV_GR OV_PG
                          " --overlap-moe-expert-parallel-comm "
                          "--delay-wgrad-compute");
    static const struct {
        const char *arch, *has, *lacks;
    } runs[] = {
        /* every layer windowed: no skip frequency */
        {"{window: 4096}", " --window-size 4095,0 ", "--window-attn-skip-freq"},
        {"{rope_scaling: 4, rope_type: yarn}",
         " --position-embedding-type yarn --max-position-embeddings 8192 --rotary-base 500000 "
         "--rotary-scaling-factor 4 --padded-vocab-size",
         "rope-scaling"},
        {"{rope_scaling: 4, rope_type: yarn, yarn_truncate: true}", " --rotary-scaling-factor 4 ",
         "round-to-int"},
        {"{rope_scaling: 4, rope_type: llama3}", " --use-rope-scaling --rope-scaling-factor 4 ",
         "yarn"},
    };
    /* a preset's YaRN under a later mlp of learned positions: no rotary flag */
    mesh_model_t g = test_spec("preset: gpt-oss-20b\narch: {mlp: gelu}\n");
    mesh_alloc_t a2 = test_alloc("H100-SXM", 2, 8);
    mesh_plan_t *gp = test_plan(&g, &a2, "ep=8");
    char *gargs = test_env_value(gp, "MESH_MEGATRON_ARGS");
    if (!strstr(gargs, "--position-embedding-type learned_absolute") || strstr(gargs, "rotary") ||
        strstr(gargs, "yarn"))
        fail_msg("'%s'", gargs);
    free(gargs);
    mesh_plan_destroy(gp);
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
        char spec[256];
        snprintf(spec, sizeof(spec), "preset: llama3-8b\narch: %s\ntrain: {seq_len: 8192}\n",
                 runs[i].arch);
        mesh_model_t m = test_spec(spec);
        mesh_plan_t *p = test_plan(&m, &a, "tp=1");
        char *args = test_env_value(p, "MESH_MEGATRON_ARGS");
        if (!strstr(args, runs[i].has) || strstr(args, runs[i].lacks))
            fail_msg("%s: '%s' lacks '%s' or has '%s'", runs[i].arch, args, runs[i].has,
                     runs[i].lacks);
        free(args);
        mesh_plan_destroy(p);
    }
}

/* The spec's rope_theta reaches --rotary-base whatever its value (1 is the
 * least the spec takes): left out, Megatron-LM would build the model on its
 * own default base, 10000. */
static void env__rotary_base_from_the_least_theta(void **state)
{
    (void)state;
    static const char *const want[] = {NULL, " --rotary-base 1 ", " --rotary-base 2 "};
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    for (int theta = 1; theta <= 2; theta++) {
        char spec[128];
        snprintf(spec, sizeof(spec), "preset: llama3-8b\narch: {rope_theta: %d}\n", theta);
        mesh_model_t m = test_spec(spec);
        mesh_plan_t *p = test_plan(&m, &a, "auto");
        char *args = test_env_value(p, "MESH_MEGATRON_ARGS");
        if (!strstr(args, want[theta]))
            fail_msg("rope_theta %d: '%s' lacks '%s'", theta, args, want[theta]);
        assert_null(strstr(args, "--rotary-base 500000"));
        free(args);
        mesh_plan_destroy(p);
    }
}

/* The whole Megatron-LM command line, the model's flags included
 * (megatron/training/arguments.py at the fixture's commit): only what the
 * spec states, in Megatron-LM's terms. */
static void env__megatron_model_flags(void **state)
{
    /* Qwen3-32B (HF config Qwen/Qwen3-32B): heads of 128 on a hidden size
     * of 5120, so --kv-channels; the vocabulary 151,936 padded to a
     * multiple of 128 x 8 */
    assert_megatron(
        "name: qwen3-32b\narch: {layers: 64, hidden: 5120, heads: 64, kv_heads: 8, head_dim: "
        "128, ffn: 25600, vocab: 151936, mlp: swiglu, tied_embeddings: false}\n"
        "train: {seq_len: 4096, global_batch: 256}\n",
        8, "tp=8,pp=2,dp=4,cp=1,zero=1,vpp=1,mb=1,recompute=none,sp=on",
        "--num-layers 64 --hidden-size 5120 --ffn-hidden-size 25600 --num-attention-heads 64 "
        "--group-query-attention --num-query-groups 8 --kv-channels 128 --swiglu --normalization "
        "RMSNorm --disable-bias-linear --position-embedding-type rope --max-position-embeddings "
        "4096 --padded-vocab-size 152576 --untie-embeddings-and-output-weights "
        "--attention-dropout 0 --hidden-dropout 0 " LAYOUT(
            8, 2, 1, 1, 256,
            4096) " --sequence-parallel --use-distributed-optimizer --bf16" OV_GR OV_PG OV_TP);
    /* GPT-3 175B: multi-head attention (no GQA flags), GeLU with biases,
     * LayerNorm, learned positions (2,048 of them), tied embeddings, and
     * the spec's dropout 0.1 */
    assert_megatron(
        "preset: gpt3-175b\n", 16,
        "tp=8,pp=8,dp=2,cp=1,zero=1,vpp=1,mb=1,recompute=selective,sp=on",
        "--num-layers 96 --hidden-size 12288 --ffn-hidden-size 49152 --num-attention-heads 96 "
        "--normalization LayerNorm --norm-epsilon 1e-05 --position-embedding-type learned_absolute "
        "--max-position-embeddings 2048 --padded-vocab-size 51200 --attention-dropout 0.1 "
        "--hidden-dropout 0.1 " LAYOUT(8, 8, 1, 1, 1536,
                                       2048) " --sequence-parallel --use-distributed-optimizer "
                                             "--recompute-granularity selective "
                                             "--bf16" OV_GR OV_PG OV_TP);
    /* Nemotron-4 15B: squared ReLU (not gated), LayerNorm kept
     * zero-centred, no biases, rotary positions over half of each head */
    assert_megatron(
        "preset: nemotron4-15b\n", 2, "tp=4,pp=1,dp=4,cp=1,zero=1,vpp=1,mb=4,recompute=none,sp=on",
        "--num-layers 32 --hidden-size 6144 --ffn-hidden-size 24576 --num-attention-heads 48 "
        "--group-query-attention --num-query-groups 8 --squared-relu --normalization LayerNorm "
        "--apply-layernorm-1p --disable-bias-linear --norm-epsilon 1e-05 --position-embedding-type "
        "rope --max-position-embeddings 4096 --rotary-base 10000 --rotary-percent 0.5 "
        "--padded-vocab-size 256000 --untie-embeddings-and-output-weights --attention-dropout 0 "
        "--hidden-dropout 0 " LAYOUT(4, 1, 1, 4, 1152,
                                     4096) " --sequence-parallel --use-distributed-optimizer "
                                           "--bf16" OV_GR OV_PG OV_TP);
    /* head_dim equal to hidden / heads is Megatron-LM's default: no
     * --kv-channels; attention scores stored: the unfused backend, which
     * stores them as priced; fp32: no precision flag */
    assert_megatron(
        "preset: llama2-7b\narch: {head_dim: 128}\n"
        "train: {global_batch: 16, flash_attention: false, precision: fp32}\n",
        2, "tp=2,pp=4,dp=2,cp=1,zero=1,vpp=1,mb=2,recompute=none,sp=on",
        LLAMA_ARCH(
            32, 4096, 11008, 32, "", 4096, ROPE_L2,
            "32000") "--attention-backend unfused " LAYOUT(2, 4, 1, 2, 16,
                                                           4096) " --sequence-parallel "
                                                                 "--use-distributed-optimizer" OV_GR
                                                                     OV_PG OV_TP);
    /* without an arch only the training facts: dropout, the layout */
    assert_megatron("preset: params-only\n", 2,
                    "tp=1,pp=1,dp=16,cp=1,zero=3,vpp=1,mb=1,recompute=none,sp=off",
                    "--attention-dropout 0 --hidden-dropout 0 " LAYOUT(1, 1, 1, 1, 512, 4096)
                        FSDP_Z3 " --bf16" FSDP_FP32 OV_GR OV_PG);
}

static void env__topology_variables(void **state)
{
    /* where the node's topology is known: the task's GPU, its NUMA node and,
     * bound, its one visible device; none of them is a launcher variable */
    mesh_plan_t *p = case_plan(&design_example);
    bf_map_t map;
    bf_make(&map, 2, 1, 2, 4);
    static const struct {
        const char *busid, *cuda, *rocr;
        int numa;
    } tasks[] = {{"0000:19:00.0", NULL, NULL, 0},
                 {"0000:b7:00.0", "6", NULL, 1},
                 {"0000:c1:00.0", NULL, "3", -1}};
    for (int i = 0; i < 3; i++) {
        mesh_task_t t = {.node = 1,
                         .local = 6,
                         .master_addr = "node001",
                         .master_port = 20042,
                         .export_mode = MESH_EXPORT_TORCH,
                         .gpu_busid = tasks[i].busid,
                         .numa_node = tasks[i].numa,
                         .cuda_visible = tasks[i].cuda,
                         .rocr_visible = tasks[i].rocr};
        want_t w = {0};
        want_task(&design_example, p, &map, &t, 20042, &w);
        mesh_error_t err;
        mesh_env_t *e = mesh_env_create(p, &t, &err);
        assert_non_null(e);
        assert_env_is(e, &w, tasks[i].busid);
        mesh_env_destroy(e);
        want_free(&w);
    }
    free(map.co);
    mesh_plan_destroy(p);
}

static void master_port__documented_formula(void **state)
{
    /* doc/guide.md: lo + (job_id*131 + step_id) mod (hi - lo + 1); its
     * own example: job 4242, step 0 -> 25702 */
    assert_int_equal(mesh_env_master_port(4242, 0, 20000, 29999), 25702);
    assert_int_equal(mesh_env_master_port(77, 2, 20000, 29999), 20089); /* 10089 mod 10000 */
    assert_int_equal(mesh_env_master_port(2, 77, 20000, 29999), 20339); /* 262 + 77 */
    static const int ranges[][2] = {{20000, 29999}, {40000, 40999}, {1024, 1030}, {5, 5}};
    for (size_t r = 0; r < sizeof(ranges) / sizeof(ranges[0]); r++)
        for (unsigned long job = 1; job < 3000; job += 37)
            for (unsigned long step = 0; step < 5; step++)
                assert_int_equal(mesh_env_master_port(job, step, ranges[r][0], ranges[r][1]),
                                 documented_port(job, step, ranges[r][0], ranges[r][1]));
}

/* ---- mixture of experts, MLA and MTP ---- */

/* Whether Mixtral in `precision`, train.ep_overlap `ep_overlap`, under
 * `mesh` on 2 x 8 H100s is told to overlap the expert all-to-all
 * (lib/overlap.c). */
static int a2a_overlapped_with(mesh_precision_t precision, const char *ep_overlap, const char *mesh)
{
    char yaml[128];
    snprintf(yaml, sizeof(yaml), "preset: mixtral-8x7b\ntrain: {ep_overlap: %s}\n", ep_overlap);
    mesh_model_t m = test_spec(yaml);
    m.precision = precision;
    mesh_alloc_t a = test_alloc("H100-SXM", 2, 8);
    mesh_plan_t *p = test_plan(&m, &a, mesh);
    char *args = test_env_value(p, "MESH_MEGATRON_ARGS");
    int on = strstr(args, " --overlap-moe-expert-parallel-comm --delay-wgrad-compute") != NULL;
    free(args);
    mesh_plan_destroy(p);
    return on;
}

static int a2a_overlapped(const char *mesh)
{
    return a2a_overlapped_with(MESH_PREC_BF16, "on", mesh);
}

/* Megatron-LM accepts the all-to-all overlap with EP, without full
 * recomputation, with pp > 1 only interleaved, and on a bf16 or fp16 model
 * (FP8 runs on bf16; transformer_config.py L3002-3046): exported, and
 * priced, only then. */
static void env__moe_overlap_where_megatron_allows_it(void **state)
{
    (void)state;
    assert_true(a2a_overlapped("tp=1,pp=1,ep=8,recompute=none"));
    assert_true(a2a_overlapped("tp=1,pp=1,ep=8,recompute=selective"));
    assert_false(a2a_overlapped("tp=1,pp=1,ep=8,recompute=full"));
    assert_false(a2a_overlapped("tp=1,pp=1,ep=1,recompute=none"));
    assert_false(a2a_overlapped("tp=2,pp=4,vpp=1,ep=2,recompute=none"));
    assert_true(a2a_overlapped("tp=2,pp=4,vpp=2,ep=2,recompute=none"));
    assert_true(a2a_overlapped_with(MESH_PREC_FP8, "on", "tp=1,pp=1,ep=8,recompute=none"));
    assert_false(a2a_overlapped_with(MESH_PREC_FP32, "on", "tp=1,pp=1,ep=8,recompute=none"));
    /* the spec turns it off: neither exported nor priced as hidden */
    assert_false(a2a_overlapped_with(MESH_PREC_BF16, "off", "tp=1,pp=1,ep=8,recompute=none"));
    assert_false(a2a_overlapped_with(MESH_PREC_BF16, "off", "tp=2,pp=4,vpp=2,ep=2,recompute=none"));
    mesh_model_t on = test_preset("mixtral-8x7b");
    mesh_model_t off = test_spec("preset: mixtral-8x7b\ntrain: {ep_overlap: off}\n");
    mesh_alloc_t a = test_alloc("H100-SXM", 2, 8);
    mesh_layout_t l = test_layout("tp=1,pp=1,dp=16,cp=1,ep=8,etp=1,zero=1,vpp=1,mb=1,"
                                  "recompute=none,sp=off");
    mesh_cost_t c_on, c_off;
    mesh_cost_estimate(&on, &l, &a, &c_on);
    mesh_cost_estimate(&off, &l, &a, &c_off);
    assert_true(c_off.ep_comm_s > c_on.ep_comm_s);
    assert_true(c_off.compute_s == c_on.compute_s);
}

/* The overlaps' table (lib/overlap.c): each row in its id's place, with
 * the flags exported, the framework's condition, the priced effect and
 * the source that issue 28 asks of it; an id past the table has no row
 * and is on for no layout. */
static void overlap__every_row_in_place_and_sourced(void **state)
{
    (void)state;
    for (int i = 0; i < MESH_OVERLAP_COUNT; i++) {
        const mesh_overlap_t *o = mesh_overlap_row((mesh_overlap_id_t)i);
        assert_non_null(o);
        assert_int_equal(o->id, i);
        assert_true(strncmp(o->flags, "--", 2) == 0);
        assert_true(o->condition[0] && o->effect[0] && o->source[0]);
    }
    assert_null(mesh_overlap_row(MESH_OVERLAP_COUNT));
    assert_null(mesh_overlap_row((mesh_overlap_id_t)-1));
    mesh_model_t m = test_preset("mixtral-8x7b");
    mesh_layout_t l = test_layout("tp=2,pp=1,dp=8,cp=1,ep=8,etp=1,zero=1,vpp=1,mb=1,"
                                  "recompute=none,sp=on");
    assert_true(mesh_overlap_on(&m, &l, MESH_OVERLAP_TP));
    assert_false(mesh_overlap_on(&m, &l, MESH_OVERLAP_COUNT));
}

/* The dispatcher Megatron-LM is told to use for Mixtral (8 experts) on
 * `nodes` x `gpn` `gpu`, under `mesh`, with train.dispatcher `spec` and the
 * policy's dispatcher= `site`: "flex" (on DeepEP), "alltoall", or the
 * plan's error. */
static const char *dispatcher_of(const char *gpu, int nodes, int gpn, const char *spec,
                                 const char *site, const char *mesh, mesh_error_t *err)
{
    char yaml[128];
    snprintf(yaml, sizeof(yaml), "preset: mixtral-8x7b\ntrain: {dispatcher: %s}\n", spec);
    mesh_model_t m = test_spec(yaml);
    mesh_alloc_t a = test_alloc(gpu, nodes, gpn);
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    if (mesh_policy_set(&pol, "dispatcher", site, err) < 0)
        fail_msg("%s", err->msg);
    mesh_layout_t pins = test_mesh(mesh);
    mesh_plan_t *p = mesh_plan_create(&m, &a, &pins, &pol.assume, err);
    if (!p)
        return err->msg;
    char *args = test_env_value(p, "MESH_MEGATRON_ARGS");
    const char *flex = " --moe-token-dispatcher-type flex --moe-flex-dispatcher-backend deepep";
    const char *all = " --moe-token-dispatcher-type alltoall";
    const char *which = strstr(args, flex) && !strstr(args, all)   ? "flex"
                        : strstr(args, all) && !strstr(args, flex) ? "alltoall"
                                                                   : "both or neither";
    /* the report says which, and the text too */
    char *json = mesh_report_json(p), *text = mesh_report_text(p);
    int deep = strcmp(which, "flex") == 0;
    if (!strstr(json, deep ? "\"ep_dispatcher\":\"deepep\"" : "\"ep_dispatcher\":\"alltoall\"") ||
        (strstr(text, "(DeepEP's token dispatch and combine") != NULL) != deep)
        which = "another in the report";
    free(json);
    free(text);
    free(args);
    mesh_plan_destroy(p);
    return which;
}

/* DeepEP (lib/overlap.c): the flex dispatcher is exported where the spec
 * or the site asks for it and DeepEP runs: Hopper or later, nodes of 8 on
 * NVLink, and an expert group DeepEP has a configuration for. */
static void env__deepep_where_asked_and_it_runs(void **state)
{
    (void)state;
    mesh_error_t err;
    /* layouts that fit: the site's DeepEP is only taken where one does */
    const char *ep8 = "tp=1,pp=1,ep=8,recompute=full", *ep4 = "tp=2,pp=1,ep=4,etp=2,recompute=none";
    assert_string_equal(dispatcher_of("H100-SXM", 2, 8, "deepep", "alltoall", ep8, &err), "flex");
    assert_string_equal(dispatcher_of("H100-SXM", 2, 8, "auto", "deepep", ep8, &err), "flex");
    assert_string_equal(dispatcher_of("B200", 2, 8, "auto", "deepep", ep4, &err), "flex");
    /* the site's default, or the spec's own choice, keeps the all-to-all */
    assert_string_equal(dispatcher_of("H100-SXM", 2, 8, "auto", "alltoall", ep8, &err), "alltoall");
    assert_string_equal(dispatcher_of("H100-SXM", 2, 8, "alltoall", "deepep", ep8, &err),
                        "alltoall");
    /* the site's DeepEP where it does not run: the all-to-all, quietly */
    assert_string_equal(dispatcher_of("A100-80GB", 2, 8, "auto", "deepep", ep8, &err), "alltoall");
    assert_string_equal(dispatcher_of("GB200", 4, 4, "auto", "deepep", ep8, &err), "alltoall");
    /* asked for by the spec where it does not run: refused, saying why */
    assert_string_equal(dispatcher_of("A100-80GB", 2, 8, "deepep", "alltoall", ep8, &err),
                        "train.dispatcher: deepep: DeepEP runs on Hopper or later GPUs in nodes "
                        "of 8 on NVLink, and these are 8 A100-80GB a node on NVLink islands of 8; "
                        "use alltoall");
    assert_non_null(strstr(dispatcher_of("GB200", 4, 4, "deepep", "alltoall", ep8, &err),
                           "these are 4 GB200 a node"));
}

static const char *const expert_vars[] = {"MESH_EP_SIZE",  "MESH_EP_RANK",  "MESH_EP_GROUP",
                                          "MESH_ETP_SIZE", "MESH_ETP_RANK", "MESH_ETP_GROUP",
                                          "MESH_EDP_GROUP"};

static void env__expert_groups_for_moe_only(void **state)
{
    mesh_model_t m = test_preset("mixtral-8x7b"), d = test_preset("llama3-8b");
    mesh_alloc_t a = test_alloc("H100-SXM", 2, 8);
    mesh_plan_t *p = test_plan(&m, &a, "tp=2,pp=2,ep=2,etp=2");
    mesh_task_t t = {.node = 1, .local = 5, .master_addr = "n1", .numa_node = -1};
    mesh_error_t err;
    mesh_env_t *e = mesh_env_create(p, &t, &err);
    assert_non_null(e);
    /* rank 13: stage 1 (ranks 8-15), local 5: etp 1, ep 0, edp 1 */
    assert_string_equal(env_get(e, "MESH_EP_SIZE"), "2");
    assert_string_equal(env_get(e, "MESH_ETP_SIZE"), "2");
    assert_string_equal(env_get(e, "MESH_EP_RANK"), "0");
    assert_string_equal(env_get(e, "MESH_ETP_RANK"), "1");
    assert_string_equal(env_get(e, "MESH_ETP_GROUP"), "12,13");
    assert_string_equal(env_get(e, "MESH_EP_GROUP"), "13,15");
    assert_string_equal(env_get(e, "MESH_EDP_GROUP"), "9,13");
    assert_non_null(strstr(env_get(e, "MESH_PLAN"), ",ep=2,etp=2,"));
    const char *args = env_get(e, "MESH_MEGATRON_ARGS");
    assert_non_null(
        strstr(args, " --expert-model-parallel-size 2 --expert-tensor-parallel-size 2"));
    assert_non_null(strstr(args, " --num-experts 8 --moe-router-topk 2 --moe-ffn-hidden-size "
                                 "14336 --moe-layer-freq 1"));
    assert_non_null(strstr(args, " --moe-token-dispatcher-type alltoall --moe-grouped-gemm"));
    /* Mixtral's spec gives no aux loss: the suggested start, not Megatron's
     * 0.0, which balances nothing while the plan prices a balanced router */
    assert_non_null(strstr(args, " --moe-aux-loss-coeff 1e-2"));
    /* nor a routed-experts scale: Megatron's default (None) leaves their
     * output as it is, where a factor would multiply it (0 would zero it) */
    assert_null(strstr(args, "--moe-router-topk-scaling-factor"));
    mesh_env_destroy(e);
    mesh_plan_destroy(p);
    /* under torchrun, no per-rank group */
    p = test_plan(&m, &a, "tp=2,pp=2,ep=2,etp=2");
    t.local = 0;
    t.export_mode = MESH_EXPORT_TORCHRUN;
    e = mesh_env_create(p, &t, &err);
    assert_string_equal(env_get(e, "MESH_EP_SIZE"), "2");
    assert_null(env_get(e, "MESH_EP_GROUP"));
    mesh_env_destroy(e);
    mesh_plan_destroy(p);
    /* a dense model: none of them, and no MoE flag */
    p = test_plan(&d, &a, "auto");
    t.export_mode = MESH_EXPORT_TORCH;
    e = mesh_env_create(p, &t, &err);
    for (size_t i = 0; i < sizeof(expert_vars) / sizeof(*expert_vars); i++)
        assert_null(env_get(e, expert_vars[i]));
    assert_null(strstr(env_get(e, "MESH_MEGATRON_ARGS"), "expert"));
    mesh_env_destroy(e);
    mesh_plan_destroy(p);
    /* DeepSeek-V3: the dense layers as a pattern, MLA and MTP */
    mesh_model_t v3 = test_spec("preset: deepseek-v3\ntrain:\n  precision: bf16\n");
    mesh_alloc_t big = test_alloc("H100-SXM", 64, 8);
    p = test_plan(&v3, &big, "tp=1,pp=16,ep=32,zero=1");
    e = mesh_env_create(p, &t, &err);
    args = env_get(e, "MESH_MEGATRON_ARGS");
    assert_non_null(strstr(args, " --moe-shared-expert-intermediate-size 2048 --moe-layer-freq "
                                 "([0]*3+[1]*58) "));
    /* its router, as the preset states it (the HF config and the paper) */
    assert_non_null(strstr(args, " --moe-router-score-function sigmoid "
                                 "--moe-router-enable-expert-bias --moe-router-num-groups 8 "
                                 "--moe-router-group-topk 4 --moe-router-topk-scaling-factor 2.5 "
                                 "--moe-aux-loss-coeff 0.0001 "));
    assert_non_null(strstr(args, " --multi-latent-attention --qk-layernorm --q-lora-rank 1536 "
                                 "--kv-lora-rank "
                                 "512 --qk-head-dim 128 --qk-pos-emb-head-dim 64 --v-head-dim 128 "
                                 "--mscale-all-dim 1 --mtp-num-layers 1"));
    /* YaRN's factor, as MLA's rotary scaling */
    assert_non_null(strstr(args, " --rotary-base 10000 --rotary-scaling-factor 40 "));
    assert_null(strstr(args, "--use-rope-scaling"));
    mesh_env_destroy(e);
    mesh_plan_destroy(p);
    /* MLA without YaRN: no scaling factor at all (not a factor of 0) */
    mesh_model_t plain = v3;
    plain.rope_scaling = 0;
    p = test_plan(&plain, &big, "tp=1,pp=16,ep=32,zero=1");
    e = mesh_env_create(p, &t, &err);
    args = env_get(e, "MESH_MEGATRON_ARGS");
    assert_non_null(strstr(args, " --multi-latent-attention "));
    assert_null(strstr(args, "rotary-scaling"));
    assert_null(strstr(args, "rope-scaling"));
    mesh_env_destroy(e);
    mesh_plan_destroy(p);
    /* its published TP2 PP8 VPP4 EP64 on 1,024 GPUs: 61 layers, the
     * embedding, the MTP layer and the loss in 32 chunks of two, as
     * Megatron-LM's explicit layout (NVIDIA's recipe: "Et|(tt|)*30mL") */
    mesh_alloc_t h1024 = test_alloc("H100-SXM", 128, 8);
    p = test_plan(&v3, &h1024, "tp=2,pp=8,vpp=4,ep=64");
    e = mesh_env_create(p, &t, &err);
    args = env_get(e, "MESH_MEGATRON_ARGS");
    char want[160] = " --pipeline-model-parallel-layout Et|";
    for (int i = 0; i < 30; i++)
        strcat(want, "tt|");
    strcat(want, "mL ");
    assert_non_null(strstr(args, want));
    assert_null(strstr(args, "--num-layers-per-virtual-pipeline-stage"));
    assert_string_equal(env_get(e, "MESH_PP_LAYERS"), "7,8,8,8,8,8,8,6");
    mesh_env_destroy(e);
    mesh_plan_destroy(p);
}

/* Selective recomputation of several modules: Megatron-LM's
 * --recompute-modules takes them as separate words (nargs +), not as the
 * --mesh pin joins them. */
static void env__recompute_modules_as_words(void **state)
{
    (void)state;
    mesh_model_t m = test_preset("llama3-70b");
    mesh_alloc_t a = test_alloc("H100-SXM", 8, 8);
    mesh_plan_t *p = test_plan(&m, &a, "recompute=selective:layernorm+mlp");
    char *args = test_env_value(p, "MESH_MEGATRON_ARGS");
    if (!strstr(args, " --recompute-granularity selective --recompute-modules layernorm mlp "))
        fail_msg("%s", args);
    free(args);
    mesh_plan_destroy(p);
}

/* A LoRA plan: Megatron-LM has no LoRA, so neither its flags nor the
 * connections it would ask are exported (they would start full training,
 * which the plan does not price), in any mode; DeepSpeed's config and the
 * rank map are, and the same spec trained in full gets both back. */
static void env__lora_withholds_megatron(void **state)
{
    (void)state;
    static const mesh_export_t modes[] = {MESH_EXPORT_MESH, MESH_EXPORT_TORCH, MESH_EXPORT_TORCHRUN,
                                          MESH_EXPORT_BATCH};
    for (int full = 0; full < 2; full++) {
        mesh_model_t m = test_spec(full ? "preset: llama2-7b\ntrain: {finetune: full}\n"
                                        : "preset: llama2-7b\ntrain: {finetune: lora}\n");
        mesh_alloc_t a = test_alloc("H100-SXM", 2, 8);
        /* LoRA data-parallel (DeepSpeed's), at zero=3, where a LoRA plan
         * priced as auto would ask CUDA_DEVICE_MAX_CONNECTIONS=8 */
        mesh_plan_t *p =
            test_plan(&m, &a, full ? "tp=2,pp=1,dp=8,zero=1" : "tp=1,pp=1,dp=16,zero=3");
        for (int i = 0; i < (int)(sizeof(modes) / sizeof(modes[0])); i++) {
            mesh_env_t *e = env_of(p, 0, 0, modes[i]);
            assert_true((get(e, "MESH_MEGATRON_ARGS") != NULL) == full);
            assert_true((get(e, "CUDA_DEVICE_MAX_CONNECTIONS") != NULL) == full);
            /* and removed from the task, as every MESH_* one not given */
            assert_true(unset_has(e, "MESH_MEGATRON_ARGS") == !full);
            assert_true(unset_has(e, "MESH_EP_SIZE") && unset_has(e, "MESH_RESHARD"));
            assert_false(unset_has(e, "CUDA_DEVICE_MAX_CONNECTIONS")); /* the job's own */
            for (int k = 0; k < mesh_env_unset_count(e); k++) {
                assert_int_equal(strncmp(mesh_env_unset_name(e, k), "MESH_", 5), 0);
                assert_null(get(e, mesh_env_unset_name(e, k)));
            }
            assert_null(mesh_env_unset_name(e, mesh_env_unset_count(e)));
            assert_null(mesh_env_unset_name(e, -1));
            assert_non_null(get(e, "MESH_DEEPSPEED_CONFIG"));
            assert_string_equal(get(e, "MESH_TP_SIZE"), full ? "2" : "1");
            mesh_env_destroy(e);
        }
        mesh_plan_destroy(p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(env__moe_overlap_where_megatron_allows_it),
        cmocka_unit_test(overlap__every_row_in_place_and_sourced),
        cmocka_unit_test(env__deepep_where_asked_and_it_runs),
        cmocka_unit_test(env__expert_groups_for_moe_only),
        cmocka_unit_test(env__recompute_modules_as_words),
        cmocka_unit_test(torch_mode__rank13),
        cmocka_unit_test(max_connections__blackwell_and_other_frameworks),
        cmocka_unit_test(env__local_implementation_before_ampere),
        cmocka_unit_test(batch_mode__layout_only),
        cmocka_unit_test(torchrun_mode__one_launcher_per_node),
        cmocka_unit_test(huge_groups__compact),
        cmocka_unit_test(huge_groups__4096_still_listed),
        cmocka_unit_test(tasks_outside__refused),
        cmocka_unit_test(master_port__range_and_spread),
        cmocka_unit_test(env__design_example_every_task),
        cmocka_unit_test(env__context_parallel_every_task),
        cmocka_unit_test(env__zero_stages),
        cmocka_unit_test(env__recompute_block),
        cmocka_unit_test(env__sequence_parallel_off),
        cmocka_unit_test(env__uneven_pipelines),
        cmocka_unit_test(env__interleaved_pipelines),
        cmocka_unit_test(env__frameworks),
        cmocka_unit_test(env__lora_withholds_megatron),
        cmocka_unit_test(env__megatron_model_flags),
        cmocka_unit_test(env__gpt_oss_and_yarn_flags),
        cmocka_unit_test(env__llama4_flags),
        cmocka_unit_test(env__moe_every_few_layers_as_a_pattern),
        cmocka_unit_test(env__rotary_base_from_the_least_theta),
        cmocka_unit_test(env__topology_variables),
        cmocka_unit_test(master_port__documented_formula),
    };
    return cmocka_run_group_tests_name("env", tests, NULL, NULL);
}
