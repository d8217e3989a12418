/*
 * The planner: fit and no-fit, pins, explanations, determinism.
 */
#include "testutil.h"

static int any_line(const mesh_plan_t *p, int advice, const char *needle)
{
    int n = advice ? mesh_plan_advice_count(p) : mesh_plan_reason_count(p);
    for (int i = 0; i < n; i++)
        if (strstr(advice ? mesh_plan_advice(p, i) : mesh_plan_reason(p, i), needle))
            return 1;
    return 0;
}

/* The seed's 16 bytes per parameter are Megatron-LM's with 2-byte
 * gradient buffers (--main-grads-dtype bf16); DeepSpeed keeps an fp32
 * gradient partition beside them (18/d at ZeRO-3), so the seed names it. */
static mesh_model_t seed_7b(void)
{
    return test_spec("name: seed-7b\nparams: 7e9\ntrain:\n  seq_len: 4096\n  global_batch: 64\n"
                     "  grad_accum_dtype: bf16\n  framework: megatron\n");
}

static void seed__plain_dp_80gb__does_not_fit(void **state)
{
    mesh_model_t m = seed_7b();
    mesh_alloc_t a;
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    mesh_error_t err;
    assert_int_equal(mesh_policy_alloc(&pol, NULL, 80e9, 0, 1, 4, &a, &err), 0);
    mesh_plan_t *p = test_plan(&m, &a, "zero=0");
    assert_false(mesh_plan_fits(p));
    assert_true(mesh_plan_best(p)->memory.total > 112e9);
    assert_true(any_line(p, 0, "nothing fits"));
    assert_true(any_line(p, 1, "zero=")); /* freeing the pin fits */
    mesh_plan_destroy(p);
    /* ZeRO-3 over the 4 GPUs: 28e9 bytes of model states, fits */
    p = test_plan(&m, &a, "zero=3");
    assert_true(mesh_plan_fits(p));
    assert_true(mesh_plan_best(p)->memory.optimizer + mesh_plan_best(p)->memory.grads +
                    mesh_plan_best(p)->memory.weights ==
                28e9);
    mesh_plan_destroy(p);
}

static void fits__and_explains_simpler(void **state)
{
    mesh_model_t m = test_preset("llama3-70b");
    mesh_alloc_t a = test_alloc("H100-SXM", 8, 8);
    mesh_plan_t *p = test_plan(&m, &a, "auto");
    const mesh_candidate_t *c = mesh_plan_best(p);
    assert_true(mesh_plan_fits(p));
    assert_true(c->memory.total <= c->memory.capacity);
    assert_int_equal(mesh_layout_world(&c->layout), 64);
    assert_true(any_line(p, 0, "plain DP needs"));
    assert_true(mesh_plan_alternative_count(p) > 0);
    for (int i = 0; i < mesh_plan_alternative_count(p); i++) {
        const mesh_candidate_t *alt = mesh_plan_alternative(p, i);
        assert_true(alt->fits);
        assert_true(alt->cost.step_seconds >= c->cost.step_seconds * (1 - MESH_PLAN_TIE));
    }
    assert_int_equal(mesh_plan_advice_count(p), 0);
    mesh_plan_destroy(p);
}

static void small_model__prefers_data_parallel(void **state)
{
    /* 7B on 8 x 80 GB: DP + ZeRO fits; no TP or PP is needed */
    mesh_model_t m = test_preset("llama2-7b");
    mesh_alloc_t a = test_alloc("A100-80GB", 1, 8);
    mesh_plan_t *p = test_plan(&m, &a, "auto");
    const mesh_layout_t *l = &mesh_plan_best(p)->layout;
    assert_true(mesh_plan_fits(p));
    assert_int_equal(l->tp, 1);
    assert_int_equal(l->pp, 1);
    assert_int_equal(l->dp, 8);
    assert_true(l->zero >= 1);
    mesh_plan_destroy(p);
}

static void pins__respected(void **state)
{
    mesh_model_t m = test_preset("llama3-70b");
    mesh_alloc_t a = test_alloc("H100-SXM", 16, 8);
    mesh_plan_t *p = test_plan(&m, &a, "tp=8,pp=2");
    const mesh_layout_t *l = &mesh_plan_best(p)->layout;
    assert_int_equal(l->tp, 8);
    assert_int_equal(l->pp, 2);
    assert_int_equal(mesh_layout_world(l), 128);
    mesh_plan_destroy(p);
    /* the spec's micro_batch and recompute act as pins */
    m.micro_batch = 1;
    m.recompute = MESH_RECOMPUTE_FULL;
    p = test_plan(&m, &a, "auto");
    assert_int_equal(mesh_plan_best(p)->layout.micro_batch, 1);
    assert_int_equal(mesh_plan_best(p)->layout.recompute, MESH_RECOMPUTE_FULL);
    mesh_plan_destroy(p);
}

static void pins__auto_overrides_the_spec(void **state)
{
    mesh_model_t m = test_preset("llama3-70b");
    m.micro_batch = 4;
    m.recompute = MESH_RECOMPUTE_FULL;
    mesh_alloc_t a = test_alloc("H100-SXM", 16, 8);
    mesh_plan_t *p = test_plan(&m, &a, "mb=auto,recompute=auto");
    const mesh_layout_t *l = &mesh_plan_best(p)->layout;
    assert_true(l->micro_batch != 4 || l->recompute != MESH_RECOMPUTE_FULL);
    mesh_plan_destroy(p);
}

static void sequence_parallel__only_where_it_applies(void **state)
{
    /* seq 4100 is not divisible by 8: TP 8 is still a candidate, without SP */
    mesh_model_t m = test_preset("llama3-70b");
    m.seq_len = 4100;
    mesh_alloc_t a = test_alloc("H100-SXM", 2, 8);
    mesh_plan_t *p = test_plan(&m, &a, "tp=8");
    assert_int_equal(mesh_plan_best(p)->layout.tp, 8);
    assert_int_equal(mesh_plan_best(p)->layout.sequence_parallel, 0);
    mesh_plan_destroy(p);
}

static void pins__invalid__error_names_rule(void **state)
{
    mesh_model_t m = test_preset("llama3-70b");
    mesh_alloc_t a = test_alloc("H100-SXM", 2, 8);
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    mesh_error_t err;
    static const struct {
        const char *mesh, *needle;
    } cases[] = {
        {"tp=3", "tp 3"},
        {"tp=16", "island"},
        {"dp=5", "allocation has 16"},
        {"pp=3", "allocation has 16"},
        {"tp=8,pp=2,vpp=3", "vpp"},
        {"tp=4,pp=4,vpp=3", "vpp 3"},
        {"mb=3", "global_batch"},
        {"cp=3", "cp 3"},
        {"tp=1,sp=on", "sequence parallelism"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        mesh_layout_t pins = test_mesh(cases[i].mesh);
        mesh_plan_t *p = mesh_plan_create(&m, &a, &pins, &pol, &err);
        if (p)
            fail_msg("--mesh %s was accepted", cases[i].mesh);
        if (!strstr(err.msg, cases[i].needle))
            fail_msg("--mesh %s: '%s' lacks '%s'", cases[i].mesh, err.msg, cases[i].needle);
    }
    mesh_layout_t l;
    assert_int_equal(mesh_layout_parse("tp=2,tp=4", &l, &err), -1);
    assert_non_null(strstr(err.msg, "twice"));
    assert_int_equal(mesh_layout_parse("tp=2,foo=1", &l, &err), -1);
    assert_non_null(strstr(err.msg, "foo"));
    assert_int_equal(mesh_layout_parse("tp=two", &l, &err), -1);
    assert_non_null(strstr(err.msg, "mesh tp"));
    assert_int_equal(mesh_layout_parse("zero=4", &l, &err), -1);
    assert_int_equal(mesh_layout_parse("tp=2,,pp=2", &l, &err), -1);
    assert_int_equal(mesh_layout_parse("recompute=some", &l, &err), -1);
}

static void nothing_fits__says_by_how_much_and_what_would(void **state)
{
    mesh_model_t m = test_preset("llama3.1-405b");
    mesh_alloc_t a = test_alloc("A100-80GB", 1, 8);
    mesh_plan_t *p = test_plan(&m, &a, "auto");
    assert_false(mesh_plan_fits(p));
    assert_true(mesh_plan_best(p)->memory.total > mesh_plan_best(p)->memory.capacity);
    assert_true(any_line(p, 0, "short by"));
    assert_true(any_line(p, 1, "nodes"));
    assert_true(any_line(p, 1, "out of reach"));
    assert_true(any_line(p, 1, "lora"));
    mesh_plan_destroy(p);
}

/* Few replicas and very large layers: ZeRO-3's gathered layers cost more
 * than it shards, so only ZeRO-2 fits.  The quick answer and the advice
 * must not assume that the stage sharding the most fits first (found by
 * fuzz_request). */
static double total_with(const mesh_model_t *m, const mesh_alloc_t *a, const char *mesh)
{
    mesh_plan_t *p = test_plan(m, a, mesh);
    double t = mesh_plan_best(p)->memory.total;
    mesh_plan_destroy(p);
    return t;
}

static void zero3_can_need_more_than_zero2(void **state)
{
    (void)state;
    mesh_model_t m = test_spec("name: wide\narch: {layers: 24, hidden: 12288, heads: 96, "
                               "kv_heads: 6, ffn: 60255, vocab: 50255}\n"
                               "train: {grad_accum_dtype: bf16, framework: megatron}\n");
    mesh_alloc_t a = test_alloc("H100-SXM", 2, 8);
    /* three 2.5e9-parameter layers a stage over two replicas: gathering a
     * layer and prefetching the next costs more than sharding saves */
    a.gpu.memory = 1e13;
    double z2 = total_with(&m, &a, "pp=8,recompute=full,zero=2");
    double z3 = total_with(&m, &a, "pp=8,recompute=full,zero=3");
    assert_true(z3 > z2);
    /* a GPU between the two: ZeRO-3 does not fit, a lower stage does */
    mesh_plan_t *p = test_plan(&m, &a, "pp=8,recompute=full");
    double usable_per_byte = mesh_plan_best(p)->memory.capacity / a.gpu.memory;
    mesh_plan_destroy(p);
    a.gpu.memory = (z2 + z3) / 2 / usable_per_byte;
    p = test_plan(&m, &a, "pp=8,recompute=full");
    assert_true(mesh_plan_fits(p));
    assert_true(mesh_plan_best(p)->layout.zero < 3);
    mesh_layout_t pins = test_mesh("pp=8,recompute=full");
    assert_int_equal(mesh_plan_any_fits(&m, &a, &pins, NULL), 1);
    mesh_plan_destroy(p);
    /* on one node: the advice finds the 2 nodes above, not 3 */
    a.nodes = 1;
    p = test_plan(&m, &a, "auto");
    assert_false(mesh_plan_fits(p));
    assert_true(any_line(p, 1, "2 nodes (16 GPUs) would fit"));
    mesh_plan_destroy(p);
}

/* Offload fits only where the node's host memory holds every task's share:
 * 16 bytes a sharded parameter under Megatron-LM (fp32 master, moments and
 * the gradient copy of its HybridDeviceOptimizer) and DeepSpeed alike, the
 * most of any stage and framework.  The plan, the yes/no and the digest
 * agree. */
static void offload__host_checked_under_every_framework(void **state)
{
    (void)state;
    mesh_model_t m = test_preset("llama3-70b");
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    const char *mesh = "tp=4,cp=2,pp=1,zero=3,mb=1,offload=optimizer";
    a.host_memory = 1200e9;
    mesh_plan_t *p = test_plan(&m, &a, mesh);
    const mesh_memory_t *mem = &mesh_plan_best(p)->memory;
    /* 70.55e9 parameters over 8 ranks, 16 bytes each on the host, x 8 tasks */
    assert_true(mem->host * 8 >= 16 * 70.5e9);
    assert_false(mesh_plan_fits(p)); /* about 1130 GB > 0.8 x 1200 GB */
    mesh_layout_t pins = test_mesh(mesh);
    assert_int_equal(mesh_plan_any_fits(&m, &a, &pins, NULL), 0);
    char d1[17];
    snprintf(d1, sizeof(d1), "%s", mesh_plan_digest(p));
    mesh_plan_destroy(p);
    a.host_memory = 2400e9;
    p = test_plan(&m, &a, mesh);
    assert_true(mesh_plan_fits(p));
    assert_int_equal(mesh_plan_any_fits(&m, &a, &pins, NULL), 1);
    assert_string_not_equal(d1, mesh_plan_digest(p)); /* host memory is an input */
    mesh_plan_destroy(p);
    /* no host memory: pinned offload is bad input to both */
    a.host_memory = 0;
    mesh_error_t err;
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    assert_null(mesh_plan_create(&m, &a, &pins, &pol, &err));
    assert_non_null(strstr(err.msg, "host memory is unknown"));
    assert_int_equal(mesh_plan_any_fits(&m, &a, &pins, NULL), 0);
    /* framework torch prices no offload: refused, by both */
    m.framework = MESH_FW_TORCH;
    a.host_memory = 2400e9;
    assert_null(mesh_plan_create(&m, &a, &pins, &pol, &err));
    assert_non_null(strstr(err.msg, "framework: torch"));
    assert_int_equal(mesh_plan_any_fits(&m, &a, &pins, NULL), 0);
}

static void params_only__plans_dp_and_zero(void **state)
{
    mesh_model_t m = test_preset("params-only");
    mesh_alloc_t a = test_alloc("A100-80GB", 2, 8);
    mesh_plan_t *p = test_plan(&m, &a, "auto");
    const mesh_layout_t *l = &mesh_plan_best(p)->layout;
    assert_true(mesh_plan_fits(p));
    assert_int_equal(l->tp * l->pp * l->cp, 1);
    assert_int_equal(mesh_plan_best(p)->memory.activations, 0);
    mesh_plan_destroy(p);
}

static void inputs__refused(void **state)
{
    mesh_model_t m = test_preset("llama2-7b");
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    mesh_error_t err;
    mesh_alloc_t a = test_alloc("V100-32GB", 1, 8);
    assert_null(mesh_plan_create(&m, &a, NULL, &pol, &err)); /* V100 has no bf16 */
    assert_non_null(strstr(err.msg, "fp16"));
    m.precision = MESH_PREC_FP16;
    mesh_plan_t *p = mesh_plan_create(&m, &a, NULL, &pol, &err);
    assert_non_null(p);
    mesh_plan_destroy(p);
    a.nodes = 0;
    assert_null(mesh_plan_create(&m, &a, NULL, &pol, &err));
    assert_non_null(strstr(err.msg, "nodes"));
    assert_int_equal(mesh_policy_alloc(&pol, NULL, 0, 0, 1, 8, &a, &err), -1);
    assert_non_null(strstr(err.msg, "--gpu"));
}

static void deterministic(void **state)
{
    mesh_model_t m = test_preset("llama3-70b");
    mesh_alloc_t a = test_alloc("H100-SXM", 16, 8);
    mesh_plan_t *p1 = test_plan(&m, &a, "auto");
    mesh_plan_t *p2 = test_plan(&m, &a, "auto");
    char *j1 = mesh_report_json(p1), *j2 = mesh_report_json(p2);
    assert_string_equal(j1, j2);
    assert_string_equal(mesh_plan_digest(p1), mesh_plan_digest(p2));
    assert_int_equal(strlen(mesh_plan_digest(p1)), 16);
    free(j1);
    free(j2);
    /* another layout of the same inputs: another digest */
    mesh_plan_t *p3 = test_plan(&m, &a, mesh_plan_best(p1)->layout.tp == 8 ? "tp=4" : "tp=8");
    assert_int_not_equal(mesh_plan_best(p3)->layout.tp, mesh_plan_best(p1)->layout.tp);
    assert_string_not_equal(mesh_plan_digest(p1), mesh_plan_digest(p3));
    mesh_plan_destroy(p1);
    mesh_plan_destroy(p2);
    mesh_plan_destroy(p3);
}

static void near_tie__simplest_wins(void **state)
{
    /* Among layouts within MESH_PLAN_TIE of the fastest, the chosen one is
     * no more complex than any other: check against all runners-up. */
    mesh_model_t m = test_preset("llama2-13b");
    mesh_alloc_t a = test_alloc("H100-SXM", 2, 8);
    mesh_plan_t *p = test_plan(&m, &a, "auto");
    const mesh_candidate_t *b = mesh_plan_best(p);
    for (int i = 0; i < mesh_plan_alternative_count(p); i++) {
        const mesh_candidate_t *c = mesh_plan_alternative(p, i);
        if (c->cost.step_seconds <= b->cost.step_seconds * (1 + MESH_PLAN_TIE))
            assert_true(c->layout.pp > b->layout.pp ||
                        (c->layout.pp == b->layout.pp &&
                         c->layout.tp * c->layout.cp >= b->layout.tp * b->layout.cp));
    }
    mesh_plan_destroy(p);
}

/* The controller's quick answer is the plan's own verdict, over presets,
 * allocations, GPUs and pins (fitting and not, valid and not). */
static void any_fits__agrees_with_the_plan(void **state)
{
    (void)state;
    const char *models[] = {"llama2-7b",  "llama3-8b", "llama2-13b",    "llama2-70b",
                            "llama3-70b", "gpt3-175b", "llama3.1-405b", "params-only"};
    const char *gpus[] = {"A100-40GB", "H100-SXM", "H200", "V100-32GB"};
    const int shapes[][2] = {{1, 1}, {1, 4}, {1, 8}, {2, 8}, {4, 8}, {16, 8}, {64, 8}, {3, 2}};
    const char *meshes[] = {NULL,     "tp=8", "pp=4",  "tp=2,pp=2",
                            "zero=0", "mb=4", "vpp=2", "recompute=none"};
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    int agree = 0, fit = 0;
    for (int mi = 0; mi < (int)(sizeof(models) / sizeof(models[0])); mi++) {
        mesh_model_t m = test_preset(models[mi]);
        for (int gi = 0; gi < (int)(sizeof(gpus) / sizeof(gpus[0])); gi++) {
            if (!m.has_arch && gi) /* a params-only spec plans the same on every GPU */
                continue;
            if (strcmp(gpus[gi], "V100-32GB") == 0)
                m.precision = MESH_PREC_FP16; /* no bf16 there */
            for (int si = 0; si < (int)(sizeof(shapes) / sizeof(shapes[0])); si++)
                for (int pi = 0; pi < (int)(sizeof(meshes) / sizeof(meshes[0])); pi++) {
                    mesh_alloc_t a;
                    mesh_error_t err;
                    mesh_layout_t pins;
                    mesh_layout_unpin(&pins);
                    if (meshes[pi] && mesh_layout_parse(meshes[pi], &pins, &err) < 0)
                        fail_msg("%s", err.msg);
                    if (mesh_policy_alloc(&pol, gpus[gi], 0, 0, shapes[si][0], shapes[si][1], &a,
                                          &err) < 0)
                        fail_msg("%s", err.msg);
                    mesh_plan_t *p = mesh_plan_create(&m, &a, &pins, &pol, &err);
                    int want = p ? mesh_plan_fits(p) : 0;
                    mesh_plan_destroy(p);
                    if (mesh_plan_any_fits(&m, &a, &pins, &pol) != want)
                        fail_msg("%s on %d x %d %s with %s: the plan says %d", models[mi],
                                 shapes[si][0], shapes[si][1], gpus[gi],
                                 meshes[pi] ? meshes[pi] : "no pins", want);
                    agree++;
                    fit += want;
                }
        }
    }
    print_message("%d cases, %d fit\n", agree, fit); /* in the log, for the reader */
    /* the cases must cover both answers */
    assert_true(fit > 50);
    assert_true(agree - fit > 50);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(seed__plain_dp_80gb__does_not_fit),
        cmocka_unit_test(fits__and_explains_simpler),
        cmocka_unit_test(small_model__prefers_data_parallel),
        cmocka_unit_test(pins__respected),
        cmocka_unit_test(pins__auto_overrides_the_spec),
        cmocka_unit_test(sequence_parallel__only_where_it_applies),
        cmocka_unit_test(pins__invalid__error_names_rule),
        cmocka_unit_test(nothing_fits__says_by_how_much_and_what_would),
        cmocka_unit_test(params_only__plans_dp_and_zero),
        cmocka_unit_test(inputs__refused),
        cmocka_unit_test(deterministic),
        cmocka_unit_test(near_tie__simplest_wins),
        cmocka_unit_test(any_fits__agrees_with_the_plan),
        cmocka_unit_test(zero3_can_need_more_than_zero2),
        cmocka_unit_test(offload__host_checked_under_every_framework),
    };
    return cmocka_run_group_tests_name("plan", tests, NULL, NULL);
}
