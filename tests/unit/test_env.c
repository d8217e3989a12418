/*
 * The per-task environment: names, values, export modes.
 */
#include "testutil.h"

static const char *get(const mesh_env_t *e, const char *name)
{
    for (int i = 0; i < mesh_env_count(e); i++)
        if (strcmp(mesh_env_name(e, i), name) == 0)
            return mesh_env_value(e, i);
    return NULL;
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
    /* DESIGN section 6's example on 2 nodes x 8: t 2, p 4, d 2 */
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
    /* the torch variables yield to values the task already has */
    for (int i = 0; i < mesh_env_count(e); i++)
        assert_int_equal(mesh_env_keep_existing(e, i),
                         strncmp(mesh_env_name(e, i), "MESH_", 5) != 0);
    mesh_env_destroy(e);
    mesh_plan_destroy(p);
}

static void framework_args(void **state)
{
    mesh_plan_t *p = example_plan();
    mesh_env_t *e = env_of(p, 0, 0, MESH_EXPORT_MESH);
    const char *mg = get(e, "MESH_MEGATRON_ARGS");
    assert_non_null(strstr(mg, "--tensor-model-parallel-size 2 "));
    assert_non_null(strstr(mg, "--pipeline-model-parallel-size 4 "));
    assert_non_null(strstr(mg, "--micro-batch-size 2 "));
    assert_non_null(strstr(mg, "--global-batch-size 16 "));
    assert_non_null(strstr(mg, "--sequence-parallel"));
    assert_non_null(strstr(mg, "--use-distributed-optimizer"));
    assert_non_null(strstr(mg, "--bf16"));
    assert_null(strstr(mg, "virtual"));
    assert_string_equal(get(e, "MESH_DEEPSPEED_CONFIG"),
                        "{\"train_batch_size\":16,\"train_micro_batch_size_per_gpu\":2,"
                        "\"gradient_accumulation_steps\":4,\"zero_optimization\":{\"stage\":1,"
                        "\"reduce_bucket_size\":500000000},\"bf16\":{\"enabled\":true}}");
    assert_null(get(e, "RANK"));
    mesh_env_destroy(e);
    mesh_plan_destroy(p);

    /* uneven stages and interleaving are spelt as Megatron wants them */
    mesh_model_t m = test_preset("llama3.1-405b");
    mesh_alloc_t a = test_alloc("H100-SXM", 2048, 8);
    p = test_plan(&m, &a, "tp=8,pp=16,cp=1,zero=2,mb=1,vpp=1,recompute=none");
    e = env_of(p, 0, 0, MESH_EXPORT_MESH);
    mg = get(e, "MESH_MEGATRON_ARGS");
    assert_non_null(strstr(mg, "--decoder-first-pipeline-num-layers 7 "));
    assert_non_null(strstr(mg, "--decoder-last-pipeline-num-layers 7"));
    assert_non_null(strstr(mg, "--data-parallel-sharding-strategy optim_grads"));
    assert_null(strstr(mg, "account-for"));
    assert_string_equal(get(e, "MESH_PP_LAYERS"), "7,8,8,8,8,8,8,8,8,8,8,8,8,8,8,7");
    mesh_env_destroy(e);
    mesh_plan_destroy(p);
    /* interleaved, the embedding and the loss take the missing layers' slots:
     * (126 + 2) / (16 * 4) = 2 layers per virtual stage */
    p = test_plan(&m, &a, "tp=8,pp=16,cp=1,zero=2,mb=1,vpp=4,recompute=none");
    e = env_of(p, 0, 0, MESH_EXPORT_MESH);
    mg = get(e, "MESH_MEGATRON_ARGS");
    assert_non_null(strstr(mg, "--num-layers-per-virtual-pipeline-stage 2 "
                               "--account-for-embedding-in-pipeline-split "
                               "--account-for-loss-in-pipeline-split"));
    assert_null(strstr(mg, "decoder-first"));
    mesh_env_destroy(e);
    mesh_plan_destroy(p);
    m = test_preset("llama3-70b");
    a = test_alloc("H100-SXM", 8, 8);
    p = test_plan(&m, &a, "tp=4,pp=8,vpp=5,cp=1,mb=1");
    e = env_of(p, 0, 0, MESH_EXPORT_MESH);
    assert_non_null(
        strstr(get(e, "MESH_MEGATRON_ARGS"), "--num-layers-per-virtual-pipeline-stage 2"));
    mesh_env_destroy(e);
    mesh_plan_destroy(p);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(torch_mode__rank13),
        cmocka_unit_test(framework_args),
        cmocka_unit_test(torchrun_mode__one_launcher_per_node),
        cmocka_unit_test(huge_groups__compact),
        cmocka_unit_test(tasks_outside__refused),
        cmocka_unit_test(master_port__range_and_spread),
    };
    return cmocka_run_group_tests_name("env", tests, NULL, NULL);
}
