/*
 * The cost model: batch arithmetic and bubbles from the sources, and the
 * physical orderings the planner relies on.
 */
#include "testutil.h"

static void bubble__llama3_70b_on_64(void **state)
{
    /* Llama 3 70B, 64 GPUs, TP 4, PP 8, VPP 5, GBS 128, MBS 1 */
    mesh_model_t m = test_preset("llama3-70b");
    m.global_batch = 128;
    mesh_alloc_t a = test_alloc("H100-SXM", 8, 8);
    mesh_plan_t *p = test_plan(&m, &a, "tp=4,pp=8,vpp=5,mb=1,cp=1");
    const mesh_candidate_t *c = mesh_plan_best(p);
    assert_int_equal(c->layout.dp, 2);
    assert_int_equal(c->micro_batches, 64);
    assert_true(c->cost.bubble == 0.021875);
    assert_true(mesh_pipeline_bubble(8, 1, 64) == 0.109375);
    assert_true(mesh_pipeline_bubble(8, 5, 64) == 0.021875);
    assert_int_equal(mesh_stage_layers(80, 8, 3), 10);
    assert_int_equal(mesh_vpp_chunk_layers(80, 8, 5), 2); /* layers per virtual stage */
    mesh_plan_destroy(p);
}

static void flops__per_token(void **state)
{
    /* 6 per matmul weight (the input embedding is a lookup) + causal
     * attention 6*L*s*h */
    mesh_model_t m = test_preset("llama3-8b");
    double matmul = m.params - 128256.0 * 4096;
    assert_true(mesh_flops_per_token(&m) == 6 * matmul + 6.0 * 32 * 8192 * 4096);
    m.finetune = MESH_FINETUNE_LORA;
    assert_true(mesh_flops_per_token(&m) == 4 * matmul + 6.0 * 32 * 8192 * 4096);
    mesh_model_t p = test_preset("params-only");
    assert_true(mesh_flops_per_token(&p) == 6 * 13e9);
}

static mesh_cost_t cost_of(const mesh_model_t *m, const mesh_alloc_t *a, const char *mesh)
{
    mesh_layout_t l = test_layout(mesh);
    mesh_error_t err;
    if (mesh_layout_check(m, a, &l, &err) < 0)
        fail_msg("%s", err.msg);
    mesh_cost_t c;
    mesh_cost_estimate(m, &l, a, &c);
    return c;
}

static void cost__parts_and_limits(void **state)
{
    mesh_model_t m = test_preset("llama2-7b");
    mesh_alloc_t a = test_alloc("A100-80GB", 1, 8);
    const char *dp8 = "tp=1,pp=1,dp=8,cp=1,zero=1,vpp=1,mb=1,recompute=none,sp=off";
    mesh_cost_t c = cost_of(&m, &a, dp8);
    assert_true(c.tp_comm_s == 0 && c.pp_comm_s == 0 && c.bubble == 0);
    assert_true(c.mfu > 0.2 && c.mfu < a.gpu.gemm_eff);
    double sum =
        c.compute_s + c.tp_comm_s + c.cp_comm_s + c.pp_comm_s + c.dp_comm_s + c.optimizer_s;
    assert_true(c.step_seconds == sum);
    assert_true(c.tokens_per_sec * c.step_seconds > 1024.0 * 4096 * 0.999);
    /* TP costs NVLink time on the critical path; full recomputation a forward */
    mesh_cost_t tp = cost_of(&m, &a, "tp=8,pp=1,dp=1,cp=1,zero=0,vpp=1,mb=1,recompute=none,sp=on");
    assert_true(tp.tp_comm_s > 0);
    mesh_cost_t full =
        cost_of(&m, &a, "tp=1,pp=1,dp=8,cp=1,zero=1,vpp=1,mb=1,recompute=full,sp=off");
    assert_true(full.compute_s > 1.25 * c.compute_s);
    assert_true(full.mfu < c.mfu);
}

static void cost__zero3_latency_at_scale(void **state)
{
    /* ZeRO-3 over thousands of ranks is bound by ring latency, a gather per
     * layer per pass (Ultra-Scale Playbook); DP's all-reduce runs as a tree
     * over bucketed gradients and hides behind the backward pass */
    mesh_model_t m = test_preset("llama3-8b");
    m.global_batch = 16384;
    mesh_alloc_t a = test_alloc("H100-SXM", 2048, 8);
    mesh_cost_t z0 =
        cost_of(&m, &a, "tp=1,pp=1,dp=16384,cp=1,zero=0,vpp=1,mb=1,recompute=none,sp=off");
    mesh_cost_t z3 =
        cost_of(&m, &a, "tp=1,pp=1,dp=16384,cp=1,zero=3,vpp=1,mb=1,recompute=none,sp=off");
    assert_true(z3.dp_comm_s > 10 * z0.dp_comm_s);
    assert_true(z3.step_seconds > z0.step_seconds);
}

static void cost__bubble_shrinks_with_micro_batches(void **state)
{
    mesh_model_t m = test_preset("llama2-70b");
    mesh_alloc_t a = test_alloc("H100-SXM", 4, 8);
    m.global_batch = 32;
    mesh_cost_t few = cost_of(&m, &a, "tp=8,pp=4,dp=1,cp=1,zero=0,vpp=1,mb=1,recompute=full,sp=on");
    m.global_batch = 512;
    mesh_cost_t many =
        cost_of(&m, &a, "tp=8,pp=4,dp=1,cp=1,zero=0,vpp=1,mb=1,recompute=full,sp=on");
    assert_true(few.bubble == 3.0 / 32);
    assert_true(many.bubble == 3.0 / 512);
    assert_true(many.mfu > few.mfu);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bubble__llama3_70b_on_64),
        cmocka_unit_test(flops__per_token),
        cmocka_unit_test(cost__parts_and_limits),
        cmocka_unit_test(cost__zero3_latency_at_scale),
        cmocka_unit_test(cost__bubble_shrinks_with_micro_batches),
    };
    return cmocka_run_group_tests_name("cost", tests, NULL, NULL);
}
