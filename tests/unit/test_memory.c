/*
 * The memory model against the numbers of its sources.
 */
#include "testutil.h"

static void zero__paper_figure1(void **state)
{
    /* ZeRO paper, Figure 1: 7.5B parameters, 64-way DP, mixed-precision Adam */
    double psi = 7.5e9;
    assert_bytes(mesh_model_states(psi, 64, 0, 2, 2, 12), 120000000000ULL);
    assert_bytes(mesh_model_states(psi, 64, 1, 2, 2, 12), 31406250000ULL);
    assert_bytes(mesh_model_states(psi, 64, 2, 2, 2, 12), 16640625000ULL);
    assert_bytes(mesh_model_states(psi, 64, 3, 2, 2, 12), 1875000000ULL);
}

static void zero__seed_7b(void **state)
{
    assert_bytes(mesh_model_states(7e9, 64, 0, 2, 2, 12), 112000000000ULL);
    assert_bytes(mesh_model_states(7e9, 4, 3, 2, 2, 12), 28000000000ULL);
    /* the largest model ZeRO-3 fits on 4 x 80e9 bytes of model states: 20e9 */
    assert_bytes(4 * 80e9 / mesh_model_states(1, 1, 0, 2, 2, 12), 20000000000ULL);
}

static void state_bytes__precision_optimizer(void **state)
{
    mesh_model_t m = test_preset("llama2-7b");
    double w, g, k;
    /* auto prices Megatron-LM and DeepSpeed and keeps the larger: at ZeRO-0
     * DeepSpeed's FP16_Optimizer in bf16 mode holds 16-bit gradients and
     * their fp32 copy for the step beside the master and Adam (engine.py
     * L2011-2021, fused_optimizer.py L286-294): 2 + 2 + 4 + 4 + 8 = 20 */
    mesh_state_bytes(&m, &w, &g, &k);
    assert_true(w == 2 && g == 2 && k == 16);
    /* Megatron-LM, dist_optimizer.md: bf16 parameters, fp32 main grads:
     * 18 bytes, 6 + 12/d distributed; d = 8 gives 7.5 */
    m.framework = MESH_FW_MEGATRON;
    mesh_state_bytes(&m, &w, &g, &k);
    assert_true(w == 2 && g == 4 && k == 12);
    assert_true(mesh_model_states(1, 8, 1, w, g, k) == 7.5);
    assert_true(mesh_model_states(1, 1, 0, w, g, k) == 18);
    /* fp16 parameters, fp16 gradients: 20, 4 + 16/d (the fp32 copy of the
     * gradients is sharded with the optimizer) */
    m.precision = MESH_PREC_FP16;
    m.grad_accum_dtype = MESH_PREC_FP16;
    mesh_state_bytes(&m, &w, &g, &k);
    assert_true(w == 2 && g == 2 && k == 16);
    assert_true(mesh_model_states(1, 8, 1, w, g, k) == 4 + 16.0 / 8);
    /* 2-byte gradient buffers (--main-grads-dtype bf16): the seed's 16 */
    m.precision = MESH_PREC_BF16;
    m.grad_accum_dtype = MESH_PREC_BF16;
    mesh_state_bytes(&m, &w, &g, &k);
    assert_true(w == 2 && g == 2 && k == 12);
    /* fp32: 16, 8 + 8/d */
    m.precision = MESH_PREC_FP32;
    m.grad_accum_dtype = MESH_PREC_FP32;
    mesh_state_bytes(&m, &w, &g, &k);
    assert_true(w == 4 && g == 4 && k == 8);
    assert_true(mesh_model_states(1, 8, 1, w, g, k) == 8 + 8.0 / 8);
    m.optimizer = MESH_OPT_SGD;
    mesh_state_bytes(&m, &w, &g, &k);
    assert_true(w + g + k == 12);
    m = test_preset("llama2-7b");
    m.finetune = MESH_FINETUNE_LORA;
    mesh_state_bytes(&m, &w, &g, &k);
    assert_true(w == 2 && g < 0.1 && k < 0.2);
}

/* GPT-3 175B at s 2048, b 1, h 12288, a 96, t 8, as Korthikanti et al.
 * assume it: MHA, GeLU, f = 4h, dropout, no FlashAttention. */
static mesh_model_t gpt3_korthikanti(void)
{
    mesh_model_t m = test_preset("gpt3-175b");
    m.flash_attention = 0;
    m.dropout = 0.1;
    return m;
}

static void activations__korthikanti_table2(void **state)
{
    mesh_model_t m = gpt3_korthikanti();
    assert_bytes(mesh_activation_layer(&m, 1, 1, 1, 0, MESH_RECOMPUTE_NONE, 0), 2868903936ULL);
    assert_bytes(mesh_activation_layer(&m, 1, 8, 1, 0, MESH_RECOMPUTE_NONE, 0), 578813952ULL);
    assert_bytes(mesh_activation_layer(&m, 1, 8, 1, 1, MESH_RECOMPUTE_NONE, 0), 358612992ULL);
    assert_bytes(mesh_activation_layer(&m, 1, 8, 1, 0, MESH_RECOMPUTE_SELECTIVE, 0), 327155712ULL);
    assert_bytes(mesh_activation_layer(&m, 1, 8, 1, 1, MESH_RECOMPUTE_SELECTIVE, 0), 106954752ULL);
    assert_bytes(mesh_activation_layer(&m, 1, 8, 1, 0, MESH_RECOMPUTE_FULL, 0), 50331648ULL);
}

static void activations__flash_gqa_swiglu_dropout(void **state)
{
    mesh_model_t m = gpt3_korthikanti();
    double masks = mesh_activation_layer(&m, 1, 8, 1, 1, MESH_RECOMPUTE_SELECTIVE, 0);
    m.dropout = 0;
    /* no dropout: the two sbh masks go (34 -> 32 sbh/t) */
    assert_bytes(mesh_activation_layer(&m, 1, 8, 1, 1, MESH_RECOMPUTE_SELECTIVE, 0),
                 masks * 32 / 34);
    /* FlashAttention keeps no scores: "none" costs what selective does, plus
     * the fp32 log-sum-exp, 4*a*s*b/t */
    m.flash_attention = 1;
    double flash = mesh_activation_layer(&m, 1, 8, 1, 1, MESH_RECOMPUTE_NONE, 0);
    assert_bytes(flash, masks * 32 / 34 + 4.0 * 96 * 2048 / 8);
    /* micro-batch scales linearly; CP divides the sequence */
    assert_bytes(mesh_activation_layer(&m, 4, 8, 1, 1, MESH_RECOMPUTE_NONE, 0), 4 * flash);
    assert_bytes(mesh_activation_layer(&m, 1, 8, 2, 1, MESH_RECOMPUTE_NONE, 0), flash / 2);
    /* Llama 3 405B, GQA (8 of 128 heads) and SwiGLU (f = 3.25h): per layer
     * (12 + 4*8/128 + 6*3.25) sbh/t = 31.75 sbh/t, plus the log-sum-exp */
    mesh_model_t l = test_preset("llama3.1-405b");
    double sbh = 8192.0 * 16384;
    assert_bytes(mesh_activation_layer(&l, 1, 8, 1, 1, MESH_RECOMPUTE_NONE, 0),
                 31.75 * sbh / 8 + 4.0 * 128 * 8192 / 8);
}

static void activations__first_stage_holds_all_layers(void **state)
{
    /* 1F1B: stage 0 of p holds p micro-batches of L/p layers = L layers,
     * whatever p: 96 x 106,954,752 = 10,267,656,192 bytes, plus its int64
     * token ids (8 bytes a token, 8 micro-batches in flight) */
    mesh_model_t m = gpt3_korthikanti();
    mesh_alloc_t a = test_alloc("A100-80GB", 64, 8);
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    mesh_layout_t l = {.tp = 8,
                       .pp = 8,
                       .dp = 8,
                       .cp = 1,
                       .zero = 1,
                       .vpp = 1,
                       .micro_batch = 1,
                       .recompute = MESH_RECOMPUTE_SELECTIVE,
                       .sequence_parallel = 1,
                       .moments = MESH_PREC_FP32};
    mesh_memory_t mem;
    mesh_memory_estimate(&m, &l, &a, &pol, &mem);
    assert_int_equal(mem.stage, 0);
    assert_bytes(mem.activations, 10267656192ULL + 8 * (8 * 2048 + 2048 * 12288 / 8));
    /* interleaving (p 8, v 3) multiplies stage 0's layers by 1 + 7/24 */
    assert_true(mesh_interleave_factor(8, 3) == 1.0 + 7.0 / 24);
    l.vpp = 4; /* 96 layers = 8 stages x 4 chunks x 3 layers */
    mesh_memory_estimate(&m, &l, &a, &pol, &mem);
    double layers = 96 * mesh_interleave_factor(8, 4);
    assert_bytes(mem.activations, layers * 106954752.0 + 8 * (8 * 2048 + 2048 * 12288 / 8));
}

static void worst_rank__uneven_split(void **state)
{
    /* Llama 3 405B on PP 16: 126 layers as 7,8,...,8,7; stage 1 holds 8
     * layers x 15 in flight = 120 layer-micro-batches, stage 0 only 7 x 16.
     * Its data parallelism was FSDP keeping the weights gathered between
     * forward and backward, i.e. ZeRO-2 (Dubey et al. 2024, 3.3.2). */
    mesh_model_t m = test_preset("llama3.1-405b");
    mesh_alloc_t a = test_alloc("H100-SXM", 2048, 8);
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    int split[16];
    mesh_layer_split(126, 16, split);
    assert_int_equal(split[0], 7);
    assert_int_equal(split[1], 8);
    assert_int_equal(split[14], 8);
    assert_int_equal(split[15], 7);
    mesh_layout_t l = {.tp = 8,
                       .pp = 16,
                       .dp = 128,
                       .cp = 1,
                       .zero = 2,
                       .vpp = 1,
                       .micro_batch = 1,
                       .recompute = MESH_RECOMPUTE_NONE,
                       .sequence_parallel = 1,
                       .moments = MESH_PREC_FP32};
    mesh_memory_t mem;
    mesh_memory_estimate(&m, &l, &a, &pol, &mem);
    assert_int_equal(mem.stage, 1);
    assert_bytes(mem.activations,
                 120 * mesh_activation_layer(&m, 1, 8, 1, 1, MESH_RECOMPUTE_NONE, 0));
    /* the published run (TP 8, PP 16, no recomputation) fits an 80 GB H100,
     * also with its interleaved schedule */
    assert_true(mem.total <= mem.capacity);
    assert_int_equal(mesh_vpp_chunk_layers(126, 16, 4), 2);
    assert_int_equal(mesh_vpp_chunk_layers(126, 16, 3), 0);
    assert_int_equal(mesh_vpp_chunk_layers(80, 8, 5), 2);
    assert_int_equal(mesh_vpp_chunk_layers(80, 2, 5), 0);
    l.vpp = 4;
    mesh_memory_estimate(&m, &l, &a, &pol, &mem);
    assert_true(mem.total <= mem.capacity);
}

/* Selective recomputation's modules, and FP8's one-byte linear inputs,
 * term by term (Llama 3 8B, s 8192, b 1, t 1, FlashAttention: sbh = 8192 *
 * 4096, sbf = 8192 * 14336, KV heads 8 of 32). */
static void activations__modules_and_fp8(void **state)
{
    mesh_model_t m = test_preset("llama3-8b");
    double sbh = 8192.0 * 4096, sbf = 8192.0 * 14336, lse = 4.0 * 32 * 8192;
    double none = mesh_activation_layer(&m, 1, 1, 1, 0, MESH_RECOMPUTE_NONE, 0);
    /* norm inputs 4, QKV and fc1 inputs 2+2, Q 2, K and V 4*8/32, attention
     * output 2 (sbh); SwiGLU fc1 output 4 and product 2 (sbf) */
    assert_bytes(none, (4 + 4 + 2 + 1 + 2) * sbh + 6 * sbf + lse);
    /* layernorm saves nothing: Megatron's default layers fuse the norms */
    assert_bytes(mesh_activation_layer(&m, 1, 1, 1, 0, MESH_RECOMPUTE_SELECTIVE,
                                       MESH_RC_LAYERNORM | MESH_RC_CORE_ATTN),
                 none - lse);
    /* mlp keeps only its input */
    assert_bytes(mesh_activation_layer(&m, 1, 1, 1, 0, MESH_RECOMPUTE_SELECTIVE, MESH_RC_MLP),
                 none - 6 * sbf);
    /* FP8: the four linear inputs in one byte (QKV and fc1 2 -> 1, fc2's
     * 2sbf -> sbf), the attention output 2 + 1 (the core's bf16 and the
     * projection's FP8 copy), 1 when the core is recomputed */
    m.precision = MESH_PREC_FP8;
    double fp8 = (4 + 2 + 2 + 1 + 3) * sbh + 5 * sbf + lse;
    assert_bytes(mesh_activation_layer(&m, 1, 1, 1, 0, MESH_RECOMPUTE_NONE, 0), fp8);
    assert_bytes(mesh_activation_layer(&m, 1, 1, 1, 0, MESH_RECOMPUTE_SELECTIVE, 0),
                 fp8 - 2 * sbh - lse);
}

static void capacity__reserve(void **state)
{
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    mesh_gpu_t g = *mesh_gpu_find("a100-80gb");
    assert_true(mesh_policy_usable(&pol, &g) == g.memory * (1 - 0.03));
    pol.reserve = 0.2;
    assert_true(mesh_policy_usable(&pol, &g) == g.memory * 0.8);
    assert_bytes(g.memory, 81920.0 * 1048576);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(zero__paper_figure1),
        cmocka_unit_test(zero__seed_7b),
        cmocka_unit_test(state_bytes__precision_optimizer),
        cmocka_unit_test(activations__korthikanti_table2),
        cmocka_unit_test(activations__flash_gqa_swiglu_dropout),
        cmocka_unit_test(activations__first_stage_holds_all_layers),
        cmocka_unit_test(worst_rank__uneven_split),
        cmocka_unit_test(activations__modules_and_fp8),
        cmocka_unit_test(capacity__reserve),
    };
    return cmocka_run_group_tests_name("memory", tests, NULL, NULL);
}
