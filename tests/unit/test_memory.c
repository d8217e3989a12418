/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The memory model against the numbers of its sources.
 */
#include <math.h>

#include "internal.h" /* MoE internals */
#include "moeutil.h"
#include "testutil.h"

#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define GiB     1073741824.0

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

/* framework: auto keeps the states of the framework that holds the most
 * (Megatron-LM's on a tie), its three parts together: over every precision,
 * gradient and moment dtype, optimizer and fine-tuning, what auto gives is
 * one framework's (w, g, k) whole, and no other's sum is larger. */
static void state_bytes__auto_keeps_the_larger_whole(void **state)
{
    (void)state;
    const mesh_precision_t precs[] = {MESH_PREC_BF16, MESH_PREC_FP16, MESH_PREC_FP32,
                                      MESH_PREC_FP8};
    const mesh_framework_t fws[] = {MESH_FW_MEGATRON, MESH_FW_DEEPSPEED};
    int differ = 0;
    for (int p = 0; p < 4; p++)
        for (int gr = 0; gr < 4; gr++)
            for (int mo = 0; mo < 3; mo++)
                for (int o = 0; o < 3; o++)
                    for (int ft = 0; ft < 2; ft++) {
                        mesh_model_t m = test_preset("llama2-7b");
                        m.precision = precs[p];
                        m.grad_accum_dtype = precs[gr];
                        m.optimizer_dtype = precs[mo];
                        m.optimizer = (mesh_optimizer_t)o;
                        m.finetune = ft ? MESH_FINETUNE_LORA : MESH_FINETUNE_FULL;
                        double w, g, k, r[2][3];
                        for (int f = 0; f < 2; f++) {
                            m.framework = fws[f];
                            mesh_state_bytes(&m, &r[f][0], &r[f][1], &r[f][2]);
                        }
                        double s0 = r[0][0] + r[0][1] + r[0][2], s1 = r[1][0] + r[1][1] + r[1][2];
                        const double *best = s1 > s0 ? r[1] : r[0];
                        differ += r[0][1] != r[1][1] && r[0][2] != r[1][2];
                        m.framework = MESH_FW_AUTO;
                        mesh_state_bytes(&m, &w, &g, &k);
                        if (w != best[0] || g != best[1] || k != best[2])
                            fail_msg("precision %d, gradients %d, moments %d, optimizer %d, "
                                     "LoRA %d: auto %g+%g+%g, the larger %g+%g+%g",
                                     p, gr, mo, o, ft, w, g, k, best[0], best[1], best[2]);
                    }
    assert_true(differ > 0);
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

/* arch.head_dim widens what the attention keeps.  Hidden 64, seq 4096,
 * micro-batch 1 (sbh = 262144), bf16, FlashAttention, no dropout, SwiGLU
 * ffn 128, no TP: the norms' inputs and the QKV/fc1 inputs 8sbh; Q 2sbh*q,
 * K and V 4sbh*kv, the attention output 2sbh*q; the MLP 6sbf; the
 * log-sum-exp 4*heads*s.  4 heads of 32 and 2 KV heads (q 2, kv 1):
 * 2097152 + 12sbh + 3145728 + 65536 = 8454144; of the default 16 (q 1,
 * kv 0.5): 2097152 + 6sbh + 3145728 + 65536 = 6881280. */
static void activations__head_dim_by_hand(void **state)
{
    mesh_model_t m = test_spec("arch: {layers: 2, hidden: 64, heads: 4, kv_heads: 2, head_dim: 32, "
                               "ffn: 128, vocab: 1000}\n");
    assert_bytes(mesh_activation_layer(&m, 1, 1, 1, 0, MESH_RECOMPUTE_NONE, 0), 8454144ULL);
    m.head_dim = 0;
    assert_bytes(mesh_activation_layer(&m, 1, 1, 1, 0, MESH_RECOMPUTE_NONE, 0), 6881280ULL);
}

/* TP wider than the KV heads (Megatron-LM, attention.py L353-366 and
 * L1851-1868 at d98e8a6): each rank keeps one whole KV head, so 4 KV heads
 * at tp 8 keep what 8 would, not half a head's keys and values. */
static void activations__tp_wider_than_kv_heads(void **state)
{
    mesh_model_t kv4 = test_spec("arch: {layers: 2, hidden: 1024, heads: 16, kv_heads: 4, "
                                 "ffn: 4096, vocab: 1000}\n");
    mesh_model_t kv8 = kv4;
    kv8.kv_heads = 8;
    for (int sp = 0; sp <= 1; sp++)
        assert_bytes(mesh_activation_layer(&kv4, 1, 8, 1, sp, MESH_RECOMPUTE_NONE, 0),
                     mesh_activation_layer(&kv8, 1, 8, 1, sp, MESH_RECOMPUTE_NONE, 0));
    /* at tp 4 each rank holds one of the 4 heads: fewer than 8 would keep */
    assert_true(mesh_activation_layer(&kv4, 1, 4, 1, 0, MESH_RECOMPUTE_NONE, 0) <
                mesh_activation_layer(&kv8, 1, 4, 1, 0, MESH_RECOMPUTE_NONE, 0));
    (void)state;
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

/* Without FlashAttention the core keeps its scores, 5as^2b/t (Korthikanti
 * et al., what selective recomputation saves: 251,658,240 bytes above).
 * Under CP each rank's s/c local queries still meet all s keys (the ring
 * brings every K/V block): 5a(s/c)sb/t, half of it at cp 2, not the
 * quarter of a sequence cut both ways. */
static void activations__scores_under_context_parallelism(void **state)
{
    (void)state;
    mesh_model_t m = gpt3_korthikanti();
    for (int cp = 1; cp <= 4; cp *= 2) {
        double none = mesh_activation_layer(&m, 1, 8, cp, 0, MESH_RECOMPUTE_NONE, 0),
               sel = mesh_activation_layer(&m, 1, 8, cp, 0, MESH_RECOMPUTE_SELECTIVE, 0);
        assert_bytes(none - sel, 5.0 * 96 * (2048 / cp) * 2048 / 8);
    }
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
    mesh_memory_estimate(&m, &l, &a, &pol.assume, &mem);
    assert_int_equal(mem.stage, 0);
    assert_bytes(mem.activations, 10267656192ULL + 8 * (8 * 2048 + 2048 * 12288 / 8));
    /* interleaved, p 8, v 4 (96 layers = 8 stages x 4 chunks x 3 layers):
     * Megatron-LM's schedules.py warms stage 0 up with 2(p-1) + (v-1)p =
     * 38 chunks and holds one more in its steady state, 39 chunks of 3
     * layers = 117 layers, Korthikanti et al. 2022's 96 x (1 + (p-1)/(pv))
     * = 96 x 39/32 (section 4.2.3); 1536 / 8 = 192 micro-batches, no cap */
    l.vpp = 4;
    mesh_memory_estimate(&m, &l, &a, &pol.assume, &mem);
    assert_int_equal(mem.stage, 0);
    assert_bytes(mem.activations,
                 (2 * 7 + 3 * 8 + 1) * 3 * 106954752.0 + 8 * (8 * 2048 + 2048 * 12288 / 8));
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
    mesh_memory_estimate(&m, &l, &a, &pol.assume, &mem);
    assert_int_equal(mem.stage, 1);
    assert_bytes(mem.activations,
                 120 * mesh_activation_layer(&m, 1, 8, 1, 1, MESH_RECOMPUTE_NONE, 0));
    /* the published run (TP 8, PP 16, no recomputation) fits an 80 GB H100,
     * also with its interleaved schedule; it ran without Transformer
     * Engine's Userbuffers, which --tp-comm-overlap, exported here, adds:
     * 12 bf16 buffers of 8192 x 16384 (3 GiB) */
    double ub = 12 * 2 * 8192.0 * 16384;
    assert_bytes(mesh_tp_overlap_buffers(&m, &l), ub);
    assert_true(mem.total <= mem.capacity);
    assert_int_equal(mesh_vpp_chunk_layers(126, 16, 4), 2);
    assert_int_equal(mesh_vpp_chunk_layers(126, 16, 3), 0);
    assert_int_equal(mesh_vpp_chunk_layers(80, 8, 5), 2);
    assert_int_equal(mesh_vpp_chunk_layers(80, 2, 5), 8);
    assert_int_equal(mesh_vpp_chunk_layers(80, 1, 5), 0);
    l.vpp = 4;
    mesh_memory_estimate(&m, &l, &a, &pol.assume, &mem);
    assert_true(mem.total - ub <= mem.capacity);
    assert_true(mem.total > mem.capacity); /* but not with them */
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
    assert_true(mesh_policy_usable(&pol.assume, &g) == g.memory * (1 - 0.03));
    pol.assume.reserve = 0.2;
    assert_true(mesh_policy_usable(&pol.assume, &g) == g.memory * 0.8);
    assert_bytes(g.memory, 81920.0 * 1048576);
}

/* ---- exact values on small hand-made models ----
 *
 * Every expected number below is counted by hand from the sources named
 * beside it, not from the library's helpers: doc/design.md, "Parameter
 * counts" for the parameters, Megatron-LM's dist_optimizer.md and megatron_fsdp.md and
 * DeepSpeed's stage_1_and_2.py / stage3.py (as lib/accounting.c cites them)
 * for the model states, Korthikanti et al. 2022 ("Reducing Activation
 * Recomputation in Large Transformer Models") for the activations, and
 * Megatron-LM's schedules.py for the micro-batches in flight. */

/* Megatron-LM pads the vocabulary to a multiple of 128 x tp
 * (--make-vocab-size-divisible-by 128, _vocab_size_with_padding). */
static double padded(int vocab, int tp)
{
    long unit = 128L * tp;
    return (double)((vocab + unit - 1) / unit * unit);
}

/* A Llama-style model small enough to count by hand: 8 layers, h 128, 8
 * heads of which 4 KV heads (GQA, kv/heads = 1/2), SwiGLU with f 320, seq
 * 64, bf16, FlashAttention, no dropout. */
#define TINY_L   8
#define TINY_H   128.0
#define TINY_A   8.0
#define TINY_KV  0.5
#define TINY_F   320.0
#define TINY_SEQ 64.0

static mesh_model_t tiny(int vocab, int tied, long gbs, const char *framework)
{
    char yaml[512];
    snprintf(yaml, sizeof(yaml),
             "arch: {layers: 8, hidden: 128, heads: 8, kv_heads: 4, ffn: 320, vocab: %d, "
             "mlp: swiglu, tied_embeddings: %s}\n"
             "train: {seq_len: 64, global_batch: %ld, framework: %s}\n",
             vocab, tied ? "true" : "false", gbs, framework);
    return test_spec(yaml);
}

/* doc/design.md, "Parameter counts", Llama-style: per layer 2h^2 + 2h^2 kv/heads + 3hf
 * (q and o, k and v, gate/up/down) split by TP, the two RMSNorms (2h)
 * replicated. */
static double tiny_layer(int tp)
{
    double h = TINY_H, f = TINY_F;
    return (2 * h * h + 2 * h * h * TINY_KV + 3 * h * f) / tp + 2 * h;
}

/* One GPU of stage `stage` of an even split: its layers, the input embedding
 * on the first stage, the output layer (or, tied over pp > 1, the last
 * stage's copy of the embedding) and the final RMSNorm on the last. */
static double tiny_stage(int vocab, int tied, int tp, int pp, int stage)
{
    double emb = padded(vocab, tp) * TINY_H / tp;
    double p = TINY_L / pp * tiny_layer(tp);
    if (stage == 0)
        p += emb;
    if (stage == pp - 1)
        p += TINY_H + (!tied || pp > 1 ? emb : 0);
    return p;
}

/* Korthikanti et al. 2022 section 4.1 term by term for one tiny layer and
 * one micro-batch of mb sequences, no recomputation, bytes: replicated
 * (divided by t only under SP) the two norm inputs 4sbh and the QKV and fc1
 * inputs 4sbh; split by TP: Q 2sbh, K and V 4sbh x kv/heads, the attention
 * output 2sbh, SwiGLU's 2f-wide fc1 output 4sbf and its product 2sbf, and
 * in place of the 5as^2b scores FlashAttention's fp32 log-sum-exp 4asb; no
 * dropout, no masks.  CP divides the sequence. */
static double tiny_act_none(int tp, int cp, int sp, int mb)
{
    double s = TINY_SEQ / cp, sbh = s * mb * TINY_H, sbf = s * mb * TINY_F;
    double rep = sp ? tp : 1;
    return 8 * sbh / rep + (4 * sbh + 4 * sbh * TINY_KV + 6 * sbf + 4 * TINY_A * s * mb) / tp;
}

/* ...what selective recomputation of the attention core keeps (the
 * log-sum-exp goes), of the MLP (its input only: 6sbf goes), and full
 * recomputation: the layer's input 2sbh (2sbh/t under SP). */
static double tiny_act_core(int tp, int cp, int sp, int mb)
{
    return tiny_act_none(tp, cp, sp, mb) - 4 * TINY_A * (TINY_SEQ / cp) * mb / tp;
}

static double tiny_act_mlp(int tp, int cp, int sp, int mb)
{
    return tiny_act_none(tp, cp, sp, mb) - 6 * (TINY_SEQ / cp) * mb * TINY_F / tp;
}

static double tiny_act_full(int tp, int cp, int sp, int mb)
{
    return 2 * (TINY_SEQ / cp) * mb * TINY_H / (sp ? tp : 1);
}

/* The first stage's int64 token ids, 8 bytes a token, one set per
 * micro-batch in flight (Megatron-LM theoretical_memory_usage.py,
 * compute_activation_memory: 8sbp); the last stage's final-norm and
 * output-layer inputs 4sbh (Korthikanti section 4.3: 2sbh/t each under SP)
 * and logits: 16-bit and the loss's fp32 copy, 6 bytes a vocabulary entry,
 * split by TP (vocab-parallel cross entropy). */
static double tiny_ids(int cp, int mb)
{
    return 8 * (TINY_SEQ / cp) * mb;
}

static double tiny_logits(int vocab, int tp, int cp, int sp, int mb)
{
    double s = TINY_SEQ / cp;
    return 4 * s * mb * TINY_H / (sp ? tp : 1) + 6 * s * mb * padded(vocab, tp) / tp;
}

static mesh_memory_t mem_of(const mesh_model_t *m, const mesh_alloc_t *a, const char *mesh)
{
    mesh_layout_t l = test_layout(mesh);
    mesh_error_t err;
    if (mesh_layout_check(m, a, &l, &err) < 0)
        fail_msg("%s: %s", mesh, err.msg);
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    mesh_memory_t mem;
    mesh_memory_estimate(m, &l, a, &pol.assume, &mem);
    return mem;
}

/* Megatron-LM at every ZeRO stage: bf16 parameters (2), fp32 main
 * gradients (4), fp32 master and Adam (12) (dist_optimizer.md: 18, 6 + 12/d
 * distributed); Megatron-FSDP optim_grads (ZeRO-2) shards the gradients and
 * keeps one unit's unsharded fp32 gradients, optim_grads_params (ZeRO-3)
 * shards the parameters too and gathers the current and the prefetched
 * unit, 2 x 2 bytes (docs/user-guide/features/megatron_fsdp.md).  A unit is
 * a layer, or on an end stage the embedding where that is larger; both are
 * per GPU, split by TP.  Two vocabularies put the unit on either side. */
static void states__megatron_every_zero_stage(void **state)
{
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    const int vocabs[] = {200, 4000}; /* layer 86,272 > 16,384; 262,144 > layer */
    for (int v = 0; v < 2; v++) {
        mesh_model_t m = tiny(vocabs[v], 0, 16, "megatron");
        double psi = tiny_stage(vocabs[v], 0, 2, 1, 0), d = 4;
        double emb = padded(vocabs[v], 2) * TINY_H / 2, layer = tiny_layer(2);
        double unit = emb > layer ? emb : layer;
        char mesh[128];
        for (int z = 0; z <= 3; z++) {
            snprintf(mesh, sizeof(mesh),
                     "tp=2,pp=1,dp=4,cp=1,zero=%d,vpp=1,mb=1,recompute=none,sp=on", z);
            mesh_memory_t mem = mem_of(&m, &a, mesh);
            assert_int_equal(mem.stage, 0);
            assert_int_equal(mem.framework, MESH_FW_MEGATRON);
            assert_bytes(mem.weights, z < 3 ? 2 * psi : 2 * psi / d + 2 * 2 * unit);
            assert_bytes(mem.grads, z < 2 ? 4 * psi : 4 * psi / d + 4 * unit);
            assert_bytes(mem.optimizer, z < 1 ? 12 * psi : 12 * psi / d);
            assert_bytes(mem.host, 0);
        }
    }
}

/* DeepSpeed at every ZeRO stage: 16-bit parameters and gradients, the fp32
 * gradient partition for the step, fp32 master and Adam (4 + 4 + 8); ZeRO-1
 * keeps the gradients whole (stage_1_and_2.py L946-953, L1742-1754), ZeRO-2
 * shards them (estimate_zero2: 2 + 18/d, plus the fp32 partition's 2/d);
 * the reduce bucket, 5e8 elements of 2 bytes, two of them at ZeRO-3
 * (config.py L113, overlap_comm); ZeRO-3's largest module gathered with its
 * gradients, 4 x its parameters (stage3.py L3755: a module, so the widest
 * linear h x max(f, h) / t, or the embedding on an end stage), and the
 * prefetch bucket of 5e7 (config.py L215). */
static void states__deepspeed_every_zero_stage(void **state)
{
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    const int vocabs[] = {200, 4000}; /* widest linear 20,480 > 16,384; 262,144 > it */
    for (int v = 0; v < 2; v++) {
        mesh_model_t m = tiny(vocabs[v], 0, 16, "deepspeed");
        double psi = tiny_stage(vocabs[v], 0, 2, 1, 0), d = 4;
        double emb = padded(vocabs[v], 2) * TINY_H / 2, linear = TINY_H * TINY_F / 2;
        double leaf = emb > linear ? emb : linear;
        char mesh[128];
        for (int z = 0; z <= 3; z++) {
            snprintf(mesh, sizeof(mesh),
                     "tp=2,pp=1,dp=4,cp=1,zero=%d,vpp=1,mb=1,recompute=none,sp=on", z);
            mesh_memory_t mem = mem_of(&m, &a, mesh);
            assert_int_equal(mem.stage, 0);
            assert_int_equal(mem.framework, MESH_FW_DEEPSPEED);
            assert_bytes(mem.weights, z < 3 ? 2 * psi : 2 * psi / d + 2 * 2 * leaf + 2 * 5e7);
            double bucket = z == 0 ? 0 : z < 3 ? 2 * 5e8 : 2 * 2 * 5e8;
            assert_bytes(mem.grads, (z < 2 ? 2 * psi : 2 * psi / d) + bucket);
            assert_bytes(mem.optimizer, z < 1 ? 16 * psi : 16 * psi / d);
        }
    }
}

/* PyTorch FSDP2 with MixedPrecisionPolicy(bf16, reduce fp32): fp32
 * parameters, gradients and Adam; DDP under autocast keeps autocast's bf16
 * copies (2) beside them; ZeroRedundancyOptimizer (ZeRO-1) shards Adam;
 * fully_shard shards the fp32 parameters and gradients, keeping the
 * unsharded bf16 parameters to the backward with reshard_after_forward=False
 * (ZeRO-2) and with True (ZeRO-3) the current and prefetched unit (2 x 2)
 * and one unit's fp32 gradients (4) (pytorch.org/docs/2.9
 * distributed.fsdp.fully_shard, MixedPrecisionPolicy). */
static void states__torch_every_zero_stage(void **state)
{
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    mesh_model_t m = tiny(4000, 0, 16, "torch");
    double psi = tiny_stage(4000, 0, 2, 1, 0), d = 4, unit = padded(4000, 2) * TINY_H / 2;
    char mesh[128];
    for (int z = 0; z <= 3; z++) {
        snprintf(mesh, sizeof(mesh), "tp=2,pp=1,dp=4,cp=1,zero=%d,vpp=1,mb=1,recompute=none,sp=on",
                 z);
        mesh_memory_t mem = mem_of(&m, &a, mesh);
        assert_int_equal(mem.framework, MESH_FW_TORCH);
        assert_bytes(mem.weights, z < 2   ? 4 * psi + 2 * psi
                                  : z < 3 ? 4 * psi / d + 2 * psi
                                          : 4 * psi / d + (2 * 2 + 4) * unit);
        assert_bytes(mem.grads, z < 2 ? 4 * psi : 4 * psi / d);
        assert_bytes(mem.optimizer, z < 1 ? 8 * psi : 8 * psi / d);
    }
}

/* PyTorch over one replica has nothing to shard: DDP's autocast copies,
 * whatever ZeRO stage the layout names (lib/accounting.c, torch()). */
static void states__torch_one_replica_unsharded(void **state)
{
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 4);
    mesh_model_t m = tiny(200, 0, 16, "torch");
    mesh_memory_t z0 = mem_of(&m, &a, "tp=4,pp=1,dp=1,cp=1,zero=0,vpp=1,mb=1,recompute=none,sp=on");
    for (int z = 1; z <= 3; z++) {
        char mesh[128];
        snprintf(mesh, sizeof(mesh), "tp=4,pp=1,dp=1,cp=1,zero=%d,vpp=1,mb=1,recompute=none,sp=on",
                 z);
        mesh_memory_t mz = mem_of(&m, &a, mesh);
        assert_bytes(mz.weights, z0.weights);
        assert_bytes(mz.grads, z0.grads);
        assert_bytes(mz.optimizer, z0.optimizer);
    }
}

/* Megatron-FSDP's ZeRO-2 keeps one unit's unsharded gradients: a layer on
 * a middle stage, the embedding on an end stage when it is larger
 * (megatron_fsdp.md).  13 layers over pp 4 split 2,4,4,3: stage 1 holds
 * twice stage 0's layers and more of them in flight, and is the worst rank
 * for an embedding between one and two layers.  Its buffer is one layer. */
static void states__zero2_middle_stage_buffer_is_a_layer(void **state)
{
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    mesh_model_t m = test_spec("arch: {layers: 13, hidden: 128, heads: 8, kv_heads: 4, ffn: 320, "
                               "vocab: 2000, mlp: swiglu}\n"
                               "train: {seq_len: 64, global_batch: 16, framework: megatron}\n");
    mesh_memory_t mem =
        mem_of(&m, &a, "tp=1,pp=4,dp=2,cp=1,zero=2,vpp=1,mb=1,recompute=none,sp=off");
    /* a layer: q, o h^2; k, v h^2/2; gate, up, down h*f; two norms */
    double layer = 2 * 128.0 * 128 + 2 * 128.0 * 128 * 0.5 + 3 * 128.0 * 320 + 2 * 128;
    assert_true(2048 * 128.0 > layer && 2048 * 128.0 < 2 * layer); /* the padded embedding */
    assert_int_equal(mem.stage, 1);
    /* fp32 main grads sharded over dp 2, plus one layer's unsharded */
    assert_bytes(mem.grads, 4 * (4 * layer) / 2 + 4 * layer);
}

/* Megatron-LM's distributed optimizer shards over the data-parallel group
 * with context parallelism, dp x cp ranks (parallel_state.py
 * get_data_parallel_group(with_context_parallel=True)), and so does
 * Megatron-FSDP: with dp 1 and cp 2 the optimizer is still halved.  CP
 * divides the sequence each rank's activations hold. */
static void states__optimizer_shards_over_dp_times_cp(void **state)
{
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    mesh_model_t m = tiny(200, 0, 16, "megatron");
    /* tp 2, cp 2, dp 2: d = 4 */
    mesh_memory_t mem =
        mem_of(&m, &a, "tp=2,pp=1,dp=2,cp=2,zero=1,vpp=1,mb=1,recompute=none,sp=on");
    double psi = tiny_stage(200, 0, 2, 1, 0);
    assert_bytes(mem.weights, 2 * psi);
    assert_bytes(mem.grads, 4 * psi);
    assert_bytes(mem.optimizer, 12 * psi / 4);
    /* pp 1: one micro-batch in flight, every layer, ids and logits */
    double act = TINY_L * tiny_act_none(2, 2, 1, 1) + tiny_ids(2, 1) + tiny_logits(200, 2, 2, 1, 1);
    assert_bytes(mem.activations, act);
    /* overhead (lib/policy.c defaults): 1 GiB of context, 0.25 GiB of NCCL
     * buffers for each of the TP, CP and DP groups, 5% of the activations,
     * and --tp-comm-overlap's 12 bf16 Userbuffers of the layer input's
     * shape, 64 / cp 2 rows of h */
    double ub = 12 * 2 * (TINY_SEQ / 2) * TINY_H;
    double overhead = 1.0 * GiB + 3 * 0.25 * GiB + 0.05 * act + ub;
    assert_true(mem.overhead > overhead * (1 - 1e-12) && mem.overhead < overhead * (1 + 1e-12));
    /* pp 2 adds the pipeline's group and the embedding group (the first and
     * last stages keep the tied or shared embedding in sync): TP, CP and
     * those two, no DP group */
    mem = mem_of(&m, &a, "tp=2,pp=2,dp=1,cp=2,zero=1,vpp=1,mb=1,recompute=none,sp=on");
    overhead = 1.0 * GiB + 4 * 0.25 * GiB + ub;
    assert_true(fabs(mem.overhead - 0.05 * mem.activations - overhead) < 1e-3);
    /* tp 4, cp 2, dp 1: d = 2, though no data parallelism */
    mem = mem_of(&m, &a, "tp=4,pp=1,dp=1,cp=2,zero=1,vpp=1,mb=1,recompute=none,sp=on");
    psi = tiny_stage(200, 0, 4, 1, 0);
    assert_bytes(mem.optimizer, 12 * psi / 2);
    mem = mem_of(&m, &a, "tp=4,pp=1,dp=1,cp=2,zero=3,vpp=1,mb=1,recompute=none,sp=on");
    assert_bytes(mem.weights, 2 * psi / 2 + 2 * 2 * tiny_layer(4));
    assert_bytes(mem.grads, 4 * psi / 2 + 4 * tiny_layer(4));
}

/* One stage (pp 1) under every recomputation mode: all 8 layers of one
 * micro-batch, the token ids and the logits.  Selective recomputation drops
 * what it recomputes (Megatron's default is the attention core); full keeps
 * each layer's input and, while one layer is recomputed, that layer's full
 * activations; full:N (block method) keeps only the input of N layers and
 * everything of the others (Megatron-LM transformer_block.py
 * _checkpointed_forward, recompute_method block). */
static void activations__every_recompute_mode(void **state)
{
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    mesh_model_t m = tiny(200, 0, 16, "megatron");
    const struct {
        const char *mesh;
        double layers; /* the 8 layers' activations */
        double plus;   /* beside them: the layer being recomputed */
    } cases[] = {
        {"tp=2,pp=1,dp=4,cp=1,zero=1,vpp=1,mb=1,recompute=none,sp=off",
         8 * tiny_act_none(2, 1, 0, 1), 0},
        {"tp=2,pp=1,dp=4,cp=1,zero=1,vpp=1,mb=1,recompute=none,sp=on",
         8 * tiny_act_none(2, 1, 1, 1), 0},
        {"tp=2,pp=1,dp=4,cp=1,zero=1,vpp=1,mb=2,recompute=none,sp=on",
         8 * tiny_act_none(2, 1, 1, 2), 0},
        {"tp=2,pp=1,dp=4,cp=1,zero=1,vpp=1,mb=1,recompute=selective,sp=on",
         8 * tiny_act_core(2, 1, 1, 1), 0},
        {"tp=2,pp=1,dp=4,cp=1,zero=1,vpp=1,mb=1,recompute=selective:core_attn,sp=off",
         8 * tiny_act_core(2, 1, 0, 1), 0},
        {"tp=2,pp=1,dp=4,cp=1,zero=1,vpp=1,mb=1,recompute=selective:mlp,sp=on",
         8 * tiny_act_mlp(2, 1, 1, 1), 0},
        {"tp=2,pp=1,dp=4,cp=1,zero=1,vpp=1,mb=1,recompute=selective:core_attn+mlp,sp=on",
         8 * (tiny_act_mlp(2, 1, 1, 1) - 4 * TINY_A * TINY_SEQ / 2), 0},
        {"tp=2,pp=1,dp=4,cp=1,zero=1,vpp=1,mb=1,recompute=full,sp=off",
         8 * tiny_act_full(2, 1, 0, 1), tiny_act_none(2, 1, 0, 1)},
        {"tp=2,pp=1,dp=4,cp=1,zero=1,vpp=1,mb=1,recompute=full,sp=on",
         8 * tiny_act_full(2, 1, 1, 1), tiny_act_none(2, 1, 1, 1)},
        {"tp=2,pp=1,dp=4,cp=1,zero=1,vpp=1,mb=1,recompute=full:3,sp=on",
         3 * tiny_act_full(2, 1, 1, 1) + 5 * tiny_act_none(2, 1, 1, 1), tiny_act_none(2, 1, 1, 1)},
    };
    for (int i = 0; i < N_OF(cases); i++) {
        mesh_memory_t mem = mem_of(&m, &a, cases[i].mesh);
        mesh_layout_t l = test_layout(cases[i].mesh);
        int sp = l.sequence_parallel, mb = l.micro_batch;
        double want =
            cases[i].layers + cases[i].plus + tiny_ids(1, mb) + tiny_logits(200, 2, 1, sp, mb);
        if ((uint64_t)(mem.activations + 0.5) != (uint64_t)(want + 0.5))
            fail_msg("%s: activations %.0f, by hand %.0f", cases[i].mesh, mem.activations, want);
    }
}

/* Korthikanti et al. 2022's closed forms (section 4, Table 2; doc/design.md,
 * "Memory") on a GPT-style layer under their own assumptions (MHA, GeLU,
 * f = 4h, dropout, no FlashAttention), s 128, h 64, a 4: 5as/h = 40.  Per
 * layer: TP sbh(10 + 24/t + 5as/(ht)); TP+SP (sbh/t)(34 + 5as/h); TP +
 * selective sbh(10 + 24/t); TP+SP+selective 34sbh/t; full 2sbh (2sbh/t
 * with SP).  Beside the layers on one stage (pp 1): the token ids 8sb and
 * the embedding's dropout mask sbh (sbh/t with SP) (section 4.3), the final
 * norm and output-layer inputs 4sbh (4sbh/t), the logits 6sV/t. */
static void activations__korthikanti_closed_forms(void **state)
{
    mesh_model_t m = test_spec("arch: {layers: 4, hidden: 64, heads: 4, vocab: 1000, mlp: gelu, "
                               "tied_embeddings: true}\n"
                               "train: {seq_len: 128, global_batch: 8, framework: megatron, "
                               "flash_attention: false, dropout: 0.1}\n");
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    double s = 128, h = 64, sbh = s * h, t = 2, as_h = 5 * 4 * s / h, v = 1024;
    const struct {
        const char *mesh;
        double layer, plus, rep;
    } cases[] = {
        {"tp=2,pp=1,dp=4,cp=1,zero=1,vpp=1,mb=1,recompute=none,sp=off",
         sbh * (10 + 24 / t + as_h / t), 0, 1},
        {"tp=2,pp=1,dp=4,cp=1,zero=1,vpp=1,mb=1,recompute=none,sp=on", sbh / t * (34 + as_h), 0, t},
        {"tp=2,pp=1,dp=4,cp=1,zero=1,vpp=1,mb=1,recompute=selective,sp=off", sbh * (10 + 24 / t), 0,
         1},
        {"tp=2,pp=1,dp=4,cp=1,zero=1,vpp=1,mb=1,recompute=selective,sp=on", 34 * sbh / t, 0, t},
        {"tp=2,pp=1,dp=4,cp=1,zero=1,vpp=1,mb=1,recompute=full,sp=off", 2 * sbh,
         sbh * (10 + 24 / t + as_h / t), 1},
        {"tp=2,pp=1,dp=4,cp=1,zero=1,vpp=1,mb=1,recompute=full,sp=on", 2 * sbh / t,
         sbh / t * (34 + as_h), t},
    };
    for (int i = 0; i < N_OF(cases); i++) {
        mesh_memory_t mem = mem_of(&m, &a, cases[i].mesh);
        double rep = cases[i].rep;
        double want =
            4 * cases[i].layer + cases[i].plus + 8 * s + sbh / rep + 4 * sbh / rep + 6 * s * v / t;
        if ((uint64_t)(mem.activations + 0.5) != (uint64_t)(want + 0.5))
            fail_msg("%s: activations %.0f, Korthikanti %.0f", cases[i].mesh, mem.activations,
                     want);
    }
    /* pp 2: the first stage (2 layers, GPT's learned positions s x h beside
     * the tied embedding) holds 2 micro-batches in flight, each with its
     * ids and mask; 12h^2 + 13h per layer, of which the LayerNorms and the
     * row-parallel biases (6h) are replicated (Narayanan et al. 2021) */
    mesh_memory_t mem =
        mem_of(&m, &a, "tp=2,pp=2,dp=2,cp=1,zero=1,vpp=1,mb=1,recompute=none,sp=on");
    assert_int_equal(mem.stage, 0);
    assert_bytes(mem.activations, 2 * 2 * sbh / t * (34 + as_h) + 2 * (8 * s + sbh / t));
    double psi0 = 2 * ((12 * h * h + 7 * h) / t + 6 * h) + v * h / t + s * h;
    assert_bytes(mem.weights, 2 * psi0);
    assert_bytes(mem.grads, 4 * psi0);
    assert_bytes(mem.optimizer, 12 * psi0 / 2);
}

/* 1F1B: stage r of p holds min(p - r, m) micro-batches (Megatron-LM
 * schedules.py, forward_backward_pipelining_without_interleaving: p - r - 1
 * warm-up micro-batches, capped at m, plus one), so stage 0 of 4 holds 4 x
 * its 2 layers, or all m when there are fewer; ids for each. */
static void activations__1f1b_in_flight(void **state)
{
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    const char *mesh = "tp=1,pp=4,dp=2,cp=1,zero=1,vpp=1,mb=1,recompute=none,sp=off";
    const struct {
        long gbs, in_flight;
    } cases[] = {{16, 4}, {8, 4}, {6, 3}, {4, 2}}; /* m = 8, 4, 3, 2 */
    for (int i = 0; i < N_OF(cases); i++) {
        mesh_model_t m = tiny(200, 0, cases[i].gbs, "megatron");
        mesh_memory_t mem = mem_of(&m, &a, mesh);
        assert_int_equal(mem.stage, 0);
        assert_bytes(mem.activations,
                     cases[i].in_flight * (2 * tiny_act_none(1, 1, 0, 1) + tiny_ids(1, 1)));
        assert_bytes(mem.weights, 2 * tiny_stage(200, 0, 1, 4, 0));
    }
}

/* Interleaved 1F1B (p 4, v 2, one layer a chunk): Megatron-LM's
 * schedules.py (forward_backward_pipelining_with_interleaving) warms stage
 * r up with 2(p - r - 1) + (v - 1)p chunks, at most all m x v of them, and
 * holds one more in its steady state: stage 0 holds 6 + 4 + 1 = 11 chunks
 * with m = 8 (Korthikanti's 8 x (1 + (p-1)/(pv)) = 11 layers), but only
 * the m x v = 8 there are with m = 4. */
static void activations__interleaved_in_flight_and_cap(void **state)
{
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    const char *mesh = "tp=1,pp=4,dp=2,cp=1,zero=1,vpp=2,mb=1,recompute=none,sp=off";
    const struct {
        long gbs, chunks;
    } cases[] = {{16, 11}, {8, 8}};
    for (int i = 0; i < N_OF(cases); i++) {
        mesh_model_t m = tiny(200, 0, cases[i].gbs, "megatron");
        mesh_memory_t mem = mem_of(&m, &a, mesh);
        assert_int_equal(mem.stage, 0);
        /* one layer a chunk; ids for min(p, m) = 4 micro-batches */
        assert_bytes(mem.activations,
                     cases[i].chunks * tiny_act_none(1, 1, 0, 1) + 4 * tiny_ids(1, 1));
    }
}

/* The last stage of pp 2 (a large vocabulary makes it the worst): its 4
 * layers of one micro-batch, the output-layer inputs and logits split by TP,
 * and its parameters: the output layer, or tied the copy of the embedding
 * Megatron-LM keeps there in sync over the embedding group
 * (language_module.py setup_embeddings_and_output_layer); at pp 1 a tied
 * model holds the embedding once. */
static void weights__logits_and_tied_copy_on_the_last_stage(void **state)
{
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    const char *pp2 = "tp=2,pp=2,dp=2,cp=1,zero=1,vpp=1,mb=1,recompute=none,sp=on";
    const char *pp1 = "tp=2,pp=1,dp=4,cp=1,zero=1,vpp=1,mb=1,recompute=none,sp=on";
    /* vocabulary 16,000 -> 16,128 at tp 2 (a multiple of 256) */
    for (int tied = 0; tied <= 1; tied++) {
        mesh_model_t m = tiny(16000, tied, 16, "megatron");
        mesh_memory_t mem = mem_of(&m, &a, pp2);
        assert_int_equal(mem.stage, 1);
        assert_bytes(mem.activations,
                     4 * tiny_act_none(2, 1, 1, 1) + tiny_logits(16000, 2, 1, 1, 1));
        /* 4 layers, the output layer or the tied copy, the final norm */
        double psi = 4 * tiny_layer(2) + 16128 * TINY_H / 2 + TINY_H;
        assert_bytes(mem.weights, 2 * psi);
        assert_bytes(mem.grads, 4 * psi);
        assert_bytes(mem.optimizer, 12 * psi / 2);
        mem = mem_of(&m, &a, pp1);
        psi = 8 * tiny_layer(2) + (tied ? 1 : 2) * 16128 * TINY_H / 2 + TINY_H;
        assert_bytes(mem.weights, 2 * psi);
        assert_bytes(mem.activations, 8 * tiny_act_none(2, 1, 1, 1) + tiny_ids(1, 1) +
                                          tiny_logits(16000, 2, 1, 1, 1));
    }
    /* tp 4: the logits are split four ways */
    mesh_model_t m = tiny(16000, 1, 16, "megatron");
    mesh_memory_t mem =
        mem_of(&m, &a, "tp=4,pp=2,dp=1,cp=1,zero=1,vpp=1,mb=1,recompute=none,sp=on");
    assert_int_equal(mem.stage, 1);
    assert_bytes(mem.activations, 4 * tiny_act_none(4, 1, 1, 1) + 4 * 64 * TINY_H / 4 +
                                      6 * 64 * padded(16000, 4) / 4);
}

/* ---- mixture of experts, MLA and MTP ---- */

/* The activations model m needs beyond model `base` under `mesh` on one
 * node of 8 H100s, with the policy's defaults. */
static double activations_beyond(const mesh_model_t *m, const mesh_model_t *base, const char *mesh)
{
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    mesh_layout_t l = test_layout(mesh);
    mesh_memory_t with, without;
    mesh_memory_estimate(m, &l, &a, &pol.assume, &with);
    mesh_memory_estimate(base, &l, &a, &pol.assume, &without);
    return with.activations - without.activations;
}

/* The MTP layer on a stage with MoE layers adds its own activations, its
 * 2h-wide projection input and its logits, but not a second set of the
 * buffers a MoE layer holds while it runs: one layer runs at a time. */
static void memory__mtp_stage_runs_one_layer_at_a_time(void **state)
{
    char none[1024];
    replaced(none, sizeof(none), moe_small(), "  mtp_layers: 1\n", "");
    mesh_model_t m = test_spec(moe_small()), n = test_spec(none);
    const char *mesh = "tp=1,pp=1,dp=8,cp=1,ep=2,etp=1,zero=1,vpp=1,mb=1,recompute=none,sp=off";
    mesh_layout_t l = test_layout(mesh);
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    double s = m.seq_len, imb = mesh_moe_imbalance(&m, &pol.assume);
    double mtp = mesh_activation_moe_layer(&m, &l, MESH_RECOMPUTE_NONE, 0, imb) + 4 * s * 64 +
                 6 * s * mesh_model_padded_vocab(&m, 1);
    assert_true(mesh_moe_dispatch_buffers(&m, &l, imb) > 0);
    assert_bytes(activations_beyond(&m, &n, mesh), mtp);
}

/* Megatron-LM's distributed optimizer shards the dense parameters' fp32
 * master weights and moments (12 bytes) over dp*cp and the experts' over
 * the expert data-parallel group (distrib_optimizer.py, at d98e8a6); bf16
 * weights (2) and fp32 main gradients (4) stay whole at ZeRO-1.  The small
 * model on 8 GPUs, dp 8, ep 2: edp 4; 105440 dense and 55296 expert
 * parameters: weights 321472, grads 642944, optimizer 12*105440/8 +
 * 12*55296/4 = 158160 + 165888. */
static void memory__experts_sharded_over_edp(void **state)
{
    char yaml[1024];
    snprintf(yaml, sizeof(yaml), "%strain:\n  framework: megatron\n", moe_small());
    mesh_model_t m = test_spec(yaml);
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    mesh_layout_t l = test_layout("tp=1,pp=1,dp=8,cp=1,ep=2,etp=1,zero=1,vpp=1,mb=1,"
                                  "recompute=none,sp=off");
    mesh_memory_t mem;
    mesh_memory_estimate(&m, &l, &a, &pol.assume, &mem);
    assert_bytes(mem.weights, 321472);
    assert_bytes(mem.grads, 642944);
    assert_bytes(mem.optimizer, 158160 + 165888);
    /* ep 1: the experts' states sharded over all 8 like the rest */
    l.ep = 1;
    mesh_memory_estimate(&m, &l, &a, &pol.assume, &mem);
    assert_bytes(mem.optimizer, 12 * (105440 + 2 * 55296) / 8);
}

/* The small MoE model of the by-hand cases below (seq 128 is added with
 * its global batch), and its layout: no TP, EP 4. */
#define SMALL_MOE                                                                                  \
    "arch: {layers: 2, hidden: 64, heads: 4, ffn: 256, vocab: 100, "                               \
    "moe: {experts: 8, top_k: 2, ffn: 32}}\n"
#define SMALL_MOE_MESH "tp=1,pp=1,dp=8,cp=1,ep=4,etp=1,zero=0,vpp=1,mb=1,recompute=none,sp=off"

/* One MoE layer's activations by hand: hidden 64, 4 heads, seq 128, one
 * sequence, 8 experts of 32, top 2, no TP.  Attention and norms as the
 * dense formula counts them without an MLP: 4sbh + 4sbh replicated, 2sbh
 * + 4sbh + 2sbh split, FlashAttention's 4*a*s*b: 133120.  Router: fp32
 * logits and scores 8*128*8, maps 8*128*2, the aux loss's fp32 scores and
 * bool map 5*128*8: 15360.  Routed: 128 tokens * 2
 * * imbalance copies, each 2*64 + 4*32 + 2*32 + 4 = 324 bytes. */
static void memory__moe_layer_activations_by_hand(void **state)
{
    mesh_model_t m = test_spec(SMALL_MOE "train: {seq_len: 128, global_batch: 8}\n");
    mesh_layout_t l = test_layout(SMALL_MOE_MESH);
    const double base = 133120, router = 15360;
    assert_bytes(mesh_activation_moe_layer(&m, &l, MESH_RECOMPUTE_NONE, 0, 1.5),
                 base + router + 384 * 324);
    assert_bytes(mesh_activation_moe_layer(&m, &l, MESH_RECOMPUTE_NONE, 0, 1.0),
                 base + router + 256 * 324);
    /* an EP group of 4 can send a rank at most 4x the mean (2 local experts
     * take both of a token's copies at most) */
    assert_bytes(mesh_activation_moe_layer(&m, &l, MESH_RECOMPUTE_NONE, 0, 10),
                 base + router + 1024 * 324);
    /* "mlp" recomputes dense MLPs only; full keeps the layer's input */
    assert_bytes(mesh_activation_moe_layer(&m, &l, MESH_RECOMPUTE_SELECTIVE, MESH_RC_MLP, 1.5),
                 base + router + 384 * 324);
    assert_bytes(mesh_activation_moe_layer(&m, &l, MESH_RECOMPUTE_FULL, 0, 1.5), 2 * 128 * 64);
    /* expert TP: the copies gathered over 2 ranks, each half as wide:
     * 768 copies of 2*64 + 4*16 + 2*16 + 4 = 228 */
    l.etp = 2;
    assert_bytes(mesh_activation_moe_layer(&m, &l, MESH_RECOMPUTE_NONE, 0, 1.5),
                 base + router + 768 * 228);
    l.etp = 1;
    /* a capacity factor drops what is beyond it */
    m = test_spec("arch: {layers: 2, hidden: 64, heads: 4, ffn: 256, vocab: 100, "
                  "moe: {experts: 8, top_k: 2, ffn: 32, capacity_factor: 1.25}}\n"
                  "train: {seq_len: 128, global_batch: 8}\n");
    assert_bytes(mesh_activation_moe_layer(&m, &l, MESH_RECOMPUTE_NONE, 0, 1.5),
                 base + router + 320 * 324);
    /* the dense layer for comparison: its MLP 4sbf + 2sbf */
    assert_bytes(mesh_activation_layer(&m, 1, 1, 1, 0, MESH_RECOMPUTE_NONE, 0),
                 base + 6 * 128 * 256);
    mesh_model_t d = test_preset("llama3-8b");
    assert_true(mesh_activation_moe_layer(&d, &l, MESH_RECOMPUTE_NONE, 0, 1) == 0);
    /* FP8: the layer as FP8 stores it (replicated 6sbh, split 9sbh: the
     * attention output thrice), the router's bf16 input 2*128*64 beside
     * its fp32 terms, and 384 copies of 64 + 128 + 32 + 4 */
    m = in_fp8("arch: {layers: 2, hidden: 64, heads: 4, ffn: 256, vocab: 100, "
               "moe: {experts: 8, top_k: 2, ffn: 32}}\n"
               "train: {seq_len: 128, global_batch: 8}\n");
    assert_bytes(mesh_activation_moe_layer(&m, &l, MESH_RECOMPUTE_NONE, 0, 1.5),
                 15 * 8192 + 2048 + router + 16384 + 384 * 228);
}

/* What a MoE layer holds while it runs, in rows of 2*64 bytes: 128 tokens
 * of 2 copies sent (256), 384 received at imbalance 1.5 over EP 4, and
 * with 2 local experts the output and the output sorted back (2 * 384);
 * FP8 adds the sorted bf16 input (in bf16 it is the stored fc1 input) and
 * the padded input and output (4 * 384). */
static void memory__moe_dispatch_buffers_by_hand(void **state)
{
    const char *yaml = "arch: {layers: 2, hidden: 64, heads: 4, ffn: 256, vocab: 100, "
                       "moe: {experts: 8, top_k: 2, ffn: 32}}\n"
                       "train: {seq_len: 128, global_batch: 8}\n";
    mesh_model_t m = test_spec(yaml), f = in_fp8(yaml);
    mesh_layout_t l = test_layout("tp=1,pp=1,dp=8,cp=1,ep=4,etp=1,zero=0,vpp=1,mb=1,"
                                  "recompute=none,sp=off");
    assert_bytes(mesh_moe_dispatch_buffers(&m, &l, 1.5), 128 * (256 + 384 + 2 * 384));
    assert_bytes(mesh_moe_dispatch_buffers(&f, &l, 1.5), 128 * (256 + 384 + 6 * 384));
    /* expert TP 2: 768 copies gathered, 384 of them received */
    l.etp = 2;
    assert_bytes(mesh_moe_dispatch_buffers(&m, &l, 1.5), 128 * (256 + 384 + 2 * 768));
    /* one expert a rank, no expert TP, bf16: the received copies are the
     * experts' stored input; their output remains */
    l = test_layout("tp=1,pp=1,dp=8,cp=1,ep=8,etp=1,zero=0,vpp=1,mb=1,recompute=none,sp=off");
    assert_bytes(mesh_moe_dispatch_buffers(&m, &l, 1.5), 128 * (256 + 384));
}

/* The expert all-to-all overlap's memory (lib/overlap.c), on the model of
 * memory__moe_layer_activations_by_hand at imbalance 1.5: one MoE layer
 * more (133120 + 15360 + 384 * 324), a second set of the dispatcher's
 * buffers (128 * (256 + 384 + 2 * 384)), and the delayed weight
 * gradients' inputs in bf16: 384 copies' fc2 and fc1 outputs (64 + 2*32)
 * and 128 tokens' QKV and projection outputs (64 * (1 + 2 + 1)). */
static void memory__moe_overlap_held_by_hand(void **state)
{
    mesh_model_t m = test_spec(SMALL_MOE "train: {seq_len: 128, global_batch: 16}\n");
    mesh_layout_t l = test_layout(SMALL_MOE_MESH);
    double delayed = 2 * (384 * (64 + 2 * 32) + 128 * 64 * 4.0);
    assert_bytes(mesh_moe_overlap_held(&m, &l, 1.5),
                 133120 + 15360 + 384 * 324 + 128 * (256 + 384 + 2 * 384) + delayed);
    /* not where Megatron-LM refuses the overlap: full recomputation */
    l.recompute = MESH_RECOMPUTE_FULL;
    assert_true(mesh_moe_overlap_held(&m, &l, 1.5) == 0);
}

/* The stage holds it where one micro-batch's backward meets another's
 * forward: with 2 micro-batches on the one stage, not with 1 (the
 * combined schedule then runs a forward and a backward alone). */
static void memory__moe_overlap_where_backward_meets_forward(void **state)
{
    mesh_model_t one = test_spec(SMALL_MOE "train: {seq_len: 128, global_batch: 8}\n");
    mesh_model_t two = one;
    two.global_batch = 16;
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    mesh_layout_t l = test_layout(SMALL_MOE_MESH);
    double held = mesh_moe_overlap_held(&two, &l, mesh_moe_imbalance(&two, &pol.assume));
    assert_true(held > 0);
    assert_bytes(activations_beyond(&two, &one, SMALL_MOE_MESH), held);
}

/* --tp-comm-overlap's Userbuffers: 12 buffers of seq x mb / cp rows of h,
 * the 8 all-gather ones one byte under FP8; none without sequence
 * parallelism, where Megatron-LM refuses the overlap. */
static void memory__tp_overlap_buffers(void **state)
{
    const char *yaml = "arch: {layers: 2, hidden: 64, heads: 4, ffn: 256, vocab: 100}\n"
                       "train: {seq_len: 128, global_batch: 8}\n";
    mesh_model_t m = test_spec(yaml), f = in_fp8(yaml);
    mesh_layout_t l = test_layout("tp=2,pp=1,dp=2,cp=2,zero=0,vpp=1,mb=2,recompute=none,sp=on");
    assert_bytes(mesh_tp_overlap_buffers(&m, &l), 128.0 * 2 / 2 * 64 * 12 * 2);
    assert_bytes(mesh_tp_overlap_buffers(&f, &l), 128.0 * 2 / 2 * 64 * (8 + 4 * 2));
    l.sequence_parallel = 0;
    assert_true(mesh_tp_overlap_buffers(&m, &l) == 0);
}

/* DeepEP's buffers, once per GPU, from deepseek-ai/DeepEP@030cdf0
 * csrc/config.hpp's hints at 20 SMs (10 channels) for bf16 tokens of
 * hidden 64 (128 bytes); a token's slot also holds 8 bytes of source
 * metadata and 128 top-k indices (8), weights (4) and scales (4), 2056
 * bytes.  EP 16 over 2 nodes (DeepEP's 16-rank configuration: 288 NVLink
 * and 140 RDMA receive tokens): per channel and NVLink peer (8) the
 * counters (2 x 2 + 3) x 4 and 288 slots, per channel and node (2) the
 * counters (8 x 2 + 2) x 2 x 4 and 140 slots twice with 16 bytes more,
 * and 1 MiB, each rounded up to 128 bytes, and a workspace of 32 MiB.  EP
 * 8 in a node: 256 slots and
 * no RDMA buffer.  None with the all-to-all, or for a group of 12, which
 * DeepEP has no configuration for. */
static void memory__deepep_buffers_by_hand(void **state)
{
    const char *arch = "arch: {layers: 2, hidden: 64, heads: 4, ffn: 256, vocab: 100,\n"
                       "       moe: {experts: 48, top_k: 2, ffn: 128}}\n";
    char yaml[256];
    snprintf(yaml, sizeof(yaml), "%strain: {seq_len: 128, global_batch: 96, dispatcher: deepep}\n",
             arch);
    mesh_model_t m = test_spec(yaml);
    mesh_layout_t l16 = test_layout("tp=1,pp=1,dp=16,cp=1,ep=16,etp=1,zero=1,vpp=1,mb=1,"
                                    "recompute=none,sp=off");
    double nvl = ceil(10.0 * 8 * ((2 * 2 + 3) * 4 + 288 * (128 + 2056)) / 128) * 128;
    double rdma =
        ceil((10.0 * 2 * ((8 * 2 + 2) * 2 * 4 + 140 * 2 * (128 + 2056 + 16)) + 1048576) / 128) *
        128;
    double workspace = 32 * 1048576.0;
    assert_bytes(mesh_deepep_buffers(&m, &l16), nvl + rdma + workspace);
    assert_bytes(nvl + rdma, 50321664.0 + 13371520.0); /* the arithmetic, written out */
    mesh_layout_t l8 = test_layout("tp=1,pp=1,dp=16,cp=1,ep=8,etp=1,zero=1,vpp=1,mb=1,"
                                   "recompute=none,sp=off");
    assert_bytes(mesh_deepep_buffers(&m, &l8),
                 ceil(10.0 * 8 * ((2 * 1 + 3) * 4 + 256 * (128 + 2056)) / 128) * 128 + workspace);
    mesh_layout_t l12 = test_layout("tp=1,pp=1,dp=12,cp=1,ep=12,etp=1,zero=1,vpp=1,mb=1,"
                                    "recompute=none,sp=off");
    assert_true(mesh_deepep_buffers(&m, &l12) == 0);
    assert_false(mesh_overlap_on(&m, &l12, MESH_OVERLAP_DEEPEP)); /* nor exported, nor priced */
    assert_true(mesh_overlap_on(&m, &l16, MESH_OVERLAP_DEEPEP));
    m.dispatcher = MESH_DISPATCHER_ALLTOALL;
    assert_true(mesh_deepep_buffers(&m, &l16) == 0);
    /* and they are in the overhead of the plan's memory */
    mesh_model_t plain = m, deep = m;
    deep.dispatcher = MESH_DISPATCHER_DEEPEP;
    mesh_alloc_t a = test_alloc("H100-SXM", 2, 8);
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    mesh_memory_t with, without;
    mesh_memory_estimate(&deep, &l16, &a, &pol.assume, &with);
    mesh_memory_estimate(&plain, &l16, &a, &pol.assume, &without);
    assert_bytes(with.overhead - without.overhead, nvl + rdma + workspace);
}

/* Where DeepEP runs (lib/runnable.c): Hopper or later, nodes of exactly 8
 * GPUs, all 8 on NVLink.  A spec that asks for it elsewhere is refused; a
 * site's default leaves the all-to-all there. */
static void memory__deepep_runs_on_nodes_of_8(void **state)
{
    mesh_model_t m = test_spec("preset: mixtral-8x7b\ntrain: {dispatcher: deepep}\n");
    mesh_model_t site = test_preset("mixtral-8x7b");
    mesh_alloc_t ok = test_alloc("H100-SXM", 2, 8);
    mesh_error_t err;
    assert_int_equal(mesh_dispatcher_check(&m, &ok, &err), 0);
    mesh_dispatcher_resolve(&ok, 1, &site);
    assert_int_equal(site.dispatcher, MESH_DISPATCHER_DEEPEP);
    mesh_alloc_t bad[4] = {ok, ok, ok, ok};
    bad[0].gpu.fp8_blocks = 0; /* before Hopper */
    bad[1].gpus_per_node = bad[1].island = 16;
    bad[2].island = 4;
    bad[3].gpus_per_node = 16; /* two islands of 8 a node */
    for (int i = 0; i < 4; i++) {
        assert_int_equal(mesh_dispatcher_check(&m, &bad[i], &err), -1);
        site = test_preset("mixtral-8x7b");
        mesh_dispatcher_resolve(&bad[i], 1, &site);
        assert_int_equal(site.dispatcher, MESH_DISPATCHER_AUTO);
    }
    /* the site without DeepEP, a spec's own all-to-all, a dense model: kept */
    site = test_preset("mixtral-8x7b");
    mesh_dispatcher_resolve(&ok, 0, &site);
    assert_int_equal(site.dispatcher, MESH_DISPATCHER_AUTO);
    mesh_model_t own = test_spec("preset: mixtral-8x7b\ntrain: {dispatcher: alltoall}\n");
    mesh_dispatcher_resolve(&ok, 1, &own);
    assert_int_equal(own.dispatcher, MESH_DISPATCHER_ALLTOALL);
    mesh_model_t dense = test_preset("llama3-8b");
    mesh_dispatcher_resolve(&ok, 1, &dense);
    assert_int_equal(dense.dispatcher, MESH_DISPATCHER_AUTO);
    /* nor a DeepSpeed job (only Megatron-LM's flags carry it) */
    mesh_model_t ds = test_spec("preset: mixtral-8x7b\ntrain: {framework: deepspeed}\n");
    mesh_dispatcher_resolve(&ok, 1, &ds);
    assert_int_equal(ds.dispatcher, MESH_DISPATCHER_AUTO);
    ds.framework = MESH_FW_MEGATRON;
    mesh_dispatcher_resolve(&ok, 1, &ds);
    assert_int_equal(ds.dispatcher, MESH_DISPATCHER_DEEPEP);
    /* an island the job says is wider than the node is the node's 8 */
    mesh_alloc_t wide = ok;
    wide.island = 16;
    assert_int_equal(mesh_dispatcher_check(&m, &wide, &err), 0);
}

/* MLA's activations by hand: hidden 64, 4 heads of 8 + 4 (queries, keys)
 * and 8 (values), q_lora 16, kv_lora 8, seq 128, no TP.  Replicated: the
 * norms' inputs 4sbh, the attention and MLP inputs 4sbh, the compressed
 * queries and keys/values with their norms' inputs 4*128*24: 77824.
 * Split: Q and K 4*sbh*0.75, V and the attention output 4*sbh*0.5, the
 * MLP 6*128*256: 237568.  FlashAttention 4*4*128. */
static void memory__mla_activations_by_hand(void **state)
{
    const char *yaml = "arch: {layers: 2, hidden: 64, heads: 4, ffn: 256, vocab: 100, "
                       "mla: {q_lora_rank: 16, kv_lora_rank: 8, qk_head_dim: 8, "
                       "qk_rope_head_dim: 4, v_head_dim: 8}}\n"
                       "train: {seq_len: 128, global_batch: 8}\n";
    mesh_model_t m = test_spec(yaml), f = in_fp8(yaml);
    assert_bytes(mesh_activation_layer(&m, 1, 1, 1, 0, MESH_RECOMPUTE_NONE, 0),
                 77824 + 237568 + 2048);
    /* FP8: the linear layers' inputs in one byte, but the two down
     * projections each keep their own copy of the layer's input: replicated
     * 4sbh + 2sbh + sbh + 3*128*24 = 66560; split: Q and K 4*sbh*0.75, V
     * 2*sbh*0.5, the attention output thrice 3*sbh*0.5, the MLP
     * 5*128*256: 208896 */
    assert_bytes(mesh_activation_layer(&f, 1, 1, 1, 0, MESH_RECOMPUTE_NONE, 0),
                 66560 + 208896 + 2048);
    /* recomputing the up projections drops Q, K (4*sbh*0.75) and V
     * (2*sbh*0.5), in bf16 either way: 32768; and the up projections'
     * inputs, the compressed tensors normed (128*24 of 2 bytes, of 1
     * under FP8), where the checkpoint keeps the keys' RoPE part
     * (2*128*4); the rest, the core's log-sum-exp too, stays */
    unsigned up = MESH_RC_MLA_UP_PROJ;
    assert_bytes(mesh_activation_layer(&m, 1, 1, 1, 0, MESH_RECOMPUTE_SELECTIVE, up),
                 77824 - 6144 + 1024 + 237568 - 32768 + 2048);
    assert_bytes(mesh_activation_layer(&f, 1, 1, 1, 0, MESH_RECOMPUTE_SELECTIVE, up),
                 66560 - 3072 + 1024 + 208896 - 32768 + 2048);
    /* with the MLP (6*128*256 in bf16) */
    assert_bytes(mesh_activation_layer(&m, 1, 1, 1, 0, MESH_RECOMPUTE_SELECTIVE, up | MESH_RC_MLP),
                 77824 - 6144 + 1024 + 237568 - 32768 - 196608 + 2048);
    /* under SP (tp 2) the RoPE part is kept whole, the rest halved */
    assert_bytes(mesh_activation_layer(&m, 1, 2, 1, 1, MESH_RECOMPUTE_SELECTIVE, up),
                 (77824 - 6144) / 2 + 1024 + (237568 - 32768 + 2048) / 2);
}

/* The imbalance: the spec's, else the policy's (1.25 by default). */
static void memory__imbalance_spec_or_policy(void **state)
{
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    assert_true(pol.assume.moe_imbalance == 1.25);
    mesh_model_t m = test_preset("mixtral-8x7b");
    assert_true(mesh_moe_imbalance(&m, &pol.assume) == 1.25);
    assert_true(mesh_moe_imbalance(&m, NULL) == 1);
    mesh_model_t even = test_spec("preset: mixtral-8x7b\ntrain:\n  moe_imbalance: 1\n");
    assert_true(mesh_moe_imbalance(&even, &pol.assume) == 1);
    mesh_model_t given = test_spec("preset: mixtral-8x7b\ntrain:\n  moe_imbalance: 1.25\n");
    mesh_alloc_t a = test_alloc("H100-SXM", 2, 8);
    mesh_layout_t l = test_layout("tp=1,pp=2,dp=8,cp=1,ep=8,etp=1,zero=1,vpp=1,mb=1,"
                                  "recompute=none,sp=off");
    mesh_memory_t m1, m2, m3;
    mesh_memory_estimate(&m, &l, &a, &pol.assume, &m1);
    mesh_memory_estimate(&given, &l, &a, &pol.assume, &m2);
    mesh_memory_estimate(&even, &l, &a, &pol.assume, &m3);
    assert_true(m1.activations == m2.activations);
    assert_true(m3.activations < m1.activations);
    pol.assume.moe_imbalance = 2;
    mesh_memory_estimate(&m, &l, &a, &pol.assume, &m3);
    assert_true(m3.activations > m1.activations);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(memory__mtp_stage_runs_one_layer_at_a_time),
        cmocka_unit_test(memory__experts_sharded_over_edp),
        cmocka_unit_test(memory__moe_layer_activations_by_hand),
        cmocka_unit_test(memory__moe_dispatch_buffers_by_hand),
        cmocka_unit_test(memory__moe_overlap_held_by_hand),
        cmocka_unit_test(memory__moe_overlap_where_backward_meets_forward),
        cmocka_unit_test(memory__tp_overlap_buffers),
        cmocka_unit_test(memory__mla_activations_by_hand),
        cmocka_unit_test(memory__imbalance_spec_or_policy),
        cmocka_unit_test(zero__paper_figure1),
        cmocka_unit_test(activations__head_dim_by_hand),
        cmocka_unit_test(activations__tp_wider_than_kv_heads),
        cmocka_unit_test(zero__seed_7b),
        cmocka_unit_test(state_bytes__precision_optimizer),
        cmocka_unit_test(state_bytes__auto_keeps_the_larger_whole),
        cmocka_unit_test(activations__korthikanti_table2),
        cmocka_unit_test(activations__flash_gqa_swiglu_dropout),
        cmocka_unit_test(activations__scores_under_context_parallelism),
        cmocka_unit_test(activations__first_stage_holds_all_layers),
        cmocka_unit_test(worst_rank__uneven_split),
        cmocka_unit_test(activations__modules_and_fp8),
        cmocka_unit_test(capacity__reserve),
        cmocka_unit_test(states__megatron_every_zero_stage),
        cmocka_unit_test(states__deepspeed_every_zero_stage),
        cmocka_unit_test(states__torch_every_zero_stage),
        cmocka_unit_test(states__optimizer_shards_over_dp_times_cp),
        cmocka_unit_test(states__torch_one_replica_unsharded),
        cmocka_unit_test(states__zero2_middle_stage_buffer_is_a_layer),
        cmocka_unit_test(activations__every_recompute_mode),
        cmocka_unit_test(activations__korthikanti_closed_forms),
        cmocka_unit_test(memory__deepep_buffers_by_hand),
        cmocka_unit_test(memory__deepep_runs_on_nodes_of_8),
        cmocka_unit_test(activations__1f1b_in_flight),
        cmocka_unit_test(activations__interleaved_in_flight_and_cap),
        cmocka_unit_test(weights__logits_and_tied_copy_on_the_last_stage),
    };
    return cmocka_run_group_tests_name("memory", tests, NULL, NULL);
}
