/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lib/params.c: the whole model's parameter counts, against the published ones and by hand.
 */
#include "internal.h" /* mesh_stage_mix, mesh_heavy_stages_of */
#include "moeutil.h"

/* ---- mixture of experts, MLA and MTP ---- */

/* The presets against their published counts.  Exact where the model card
 * gives the count to the digit it prints (Mixtral-8x7B 46.70 B / 12.88 B;
 * Qwen3-30B-A3B 30.53 B / 3.35 B), to the published rounding otherwise:
 * Mixtral-8x22B "141B parameters, 39B active" (Mistral AI release notes,
 * 2024-04-17); Qwen3-235B-A22B "235B in total and 22B activated", "234B"
 * without the embeddings (model card); DeepSeek-V3 "671B total parameters
 * with 37B activated for each token" (arXiv 2412.19437, abstract), whose MTP
 * module the paper counts apart. */
static void params__moe_presets__published_counts(void **state)
{
    static const struct {
        const char *name;
        uint64_t params, active;
    } exact[] = {
        {"mixtral-8x7b", 46702792704ULL, 12879925248ULL},
        {"mixtral-8x22b", 140630071296ULL, 39161468928ULL},
        /* with the QK norms, 2 x 128 weights in each of 48 and 94 layers */
        {"qwen3-30b-a3b", 30532110336ULL + 48 * 256, 3353020416ULL + 48 * 256},
        {"qwen3-235b-a22b", 235093610496ULL + 94 * 256, 22190739456ULL + 94 * 256},
        /* Kimi K2: its weights' 1.026T, summed from its config (each layer's
         * MLA 101,124,096 and norms 14,336; the dense MLP 396,361,728; a MoE
         * layer's 385 experts and router 16,958,226,432; both embeddings) */
        {"kimi-k2", 1026408209408ULL, 32861477888ULL},
    };
    for (size_t i = 0; i < sizeof(exact) / sizeof(*exact); i++) {
        mesh_model_t m = test_preset(exact[i].name);
        assert_true(mesh_model_is_moe(&m));
        assert_int_equal((uint64_t)m.params, exact[i].params);
        assert_int_equal((uint64_t)mesh_model_active_params(&m), exact[i].active);
    }
    /* as the publishers print them */
    mesh_model_t m = test_preset("mixtral-8x7b");
    assert_true(m.params > 46.695e9 && m.params < 46.705e9);
    assert_true(mesh_model_active_params(&m) > 12.875e9 && mesh_model_active_params(&m) < 12.885e9);
    m = test_preset("qwen3-30b-a3b");
    assert_true(m.params > 30.525e9 && m.params < 30.535e9);
    assert_true(mesh_model_active_params(&m) > 3.345e9 && mesh_model_active_params(&m) < 3.355e9);
    m = test_preset("mixtral-8x22b");
    assert_true(m.params > 140.5e9 && m.params < 141.5e9);
    assert_true(mesh_model_active_params(&m) > 38.5e9 && mesh_model_active_params(&m) < 39.5e9);
    m = test_preset("qwen3-235b-a22b");
    double emb = 2.0 * 151936 * 4096;
    assert_true(m.params > 234.5e9 && m.params < 235.5e9);
    assert_true(m.params - emb > 233.5e9 && m.params - emb < 234.5e9);
    assert_true(mesh_model_active_params(&m) > 21.5e9 && mesh_model_active_params(&m) < 22.5e9);
    /* DeepSeek-V3: the main model, and its one MTP layer beside it */
    m = test_preset("deepseek-v3");
    assert_int_equal(m.mtp_layers, 1);
    double mtp = mesh_model_mtp_params(&m);
    assert_int_equal((uint64_t)(m.params - mtp), 671026404352ULL);
    assert_int_equal((uint64_t)mtp, 11610067968ULL);
    mesh_model_t main = test_spec("preset: deepseek-v3\narch:\n  mtp_layers: 0\n");
    assert_int_equal((uint64_t)main.params, 671026404352ULL);
    assert_true(main.params > 670.5e9 && main.params < 671.5e9);
    /* "37B activated": 37.55 B, both embedding matrices counted as the
     * Mixtral and Qwen3 counts above do */
    assert_int_equal((uint64_t)mesh_model_active_params(&main), 37552282624ULL);
    assert_true(mesh_model_active_params(&main) >= 37e9 && mesh_model_active_params(&main) < 38e9);
}

/* a GPT-OSS-style MoE of two layers, with or without its sinks */
#define SMALL_OSS(sinks)                                                                           \
    "arch: {layers: 2, hidden: 64, heads: 4, kv_heads: 2, head_dim: 16, ffn: 32, vocab: 100, "     \
    "mlp: quick_geglu, attention_sinks: " sinks ", moe: {experts: 4, top_k: 2}}\n"

/* GPT-OSS against its model card ("116.83B" and "20.91B" parameters,
 * "5.13B" and "3.61B" active, which leaves the input embedding out), and
 * a small quick-GeGLU MoE by hand: q 64x64 + 64, k and v 64x32 + 32 each,
 * o 64x64 + 64 (12,480), 4 sinks, two RMSNorms (128), the router 64x4 + 4
 * (260), each expert gate and up 64x64 + 64, down 32x64 + 64 (6,272). */
static void params__gpt_oss__published_and_by_hand(void **state)
{
    (void)state;
    mesh_model_t big = test_preset("gpt-oss-120b"), small = test_preset("gpt-oss-20b");
    double emb = 201088.0 * 2880;
    assert_int_equal((uint64_t)big.params, 116829156672ULL);
    assert_int_equal((uint64_t)mesh_model_active_params(&big), 5711982912ULL);
    assert_int_equal((uint64_t)(mesh_model_active_params(&big) - emb), 5132849472ULL);
    assert_int_equal((uint64_t)small.params, 20914757184ULL);
    assert_int_equal((uint64_t)(mesh_model_active_params(&small) - emb), 3608307264ULL);
    mesh_model_t m = test_spec(SMALL_OSS("true"));
    assert_int_equal((uint64_t)mesh_model_expert_params(&m), 6272);
    assert_int_equal((uint64_t)mesh_model_router_params(&m), 260);
    assert_int_equal((uint64_t)mesh_model_layer_params(&m), 12480 + 4 + 128 + 6272);
    assert_int_equal((uint64_t)mesh_model_moe_layer_params(&m), 12480 + 4 + 128 + 260 + 4 * 6272);
    assert_int_equal((uint64_t)m.params, 2 * 37960 + 2 * 6400 + 64);
    assert_int_equal((uint64_t)mesh_model_active_params(&m), 2 * (12872 + 2 * 6272) + 12800 + 64);
    mesh_model_t no_sinks = test_spec(SMALL_OSS("false")); /* a sink a head a layer */
    assert_int_equal((uint64_t)(m.params - no_sinks.params), 8);
}

/* Grok-1 ("314B parameters"; xai-org/grok-1 run.py and model.py) by hand:
 * each layer q and o 6144x6144, k and v 6144x1024, 8 experts of gate, up
 * and down 6144x32768, the router 6144x8, two RMSNorms; the 131072-token
 * embedding tied to the output; the final RMSNorm.  Active: 2 of the 8. */
static void params__grok1__by_hand(void **state)
{
    (void)state;
    mesh_model_t m = test_preset("grok-1");
    double h = 6144, attn = 2 * h * h + 2 * h * 1024, expert = 3 * h * 32768;
    double rest = h * 8 + 2 * h, emb = 131072 * h;
    assert_int_equal((uint64_t)m.params, (uint64_t)(64 * (attn + 8 * expert + rest) + emb + h));
    assert_int_equal((uint64_t)m.params, 315684034560ULL);
    assert_int_equal((uint64_t)mesh_model_active_params(&m),
                     (uint64_t)(64 * (attn + 2 * expert + rest) + emb + h));
    mesh_model_t untied = test_spec("preset: grok-1\narch:\n  tied_embeddings: false\n");
    assert_int_equal((uint64_t)(untied.params - m.params), (uint64_t)emb);
}

/* Llama 4 Scout (meta-llama/Llama-4-Scout-17B-16E's text model) by hand:
 * each layer q and o 5120x5120, k and v 5120x1024, 16 experts and one
 * shared expert of gate, up and down 5120x8192, the router 5120x16, two
 * RMSNorms (its QK norm has no weights); the 202048-token embedding and the
 * output apart; the final RMSNorm.  Active: one routed expert and the
 * shared one. */
static void params__llama4_scout__by_hand(void **state)
{
    (void)state;
    mesh_model_t m = test_preset("llama4-scout");
    double h = 5120, attn = 2 * h * h + 2 * h * 1024, expert = 3 * h * 8192;
    double rest = h * 16 + 2 * h, emb = 202048 * h;
    assert_int_equal((uint64_t)m.params,
                     (uint64_t)(48 * (attn + 17 * expert + rest) + 2 * emb + h));
    assert_int_equal((uint64_t)m.params, 107769861120ULL);
    assert_int_equal((uint64_t)mesh_model_active_params(&m),
                     (uint64_t)(48 * (attn + 2 * expert + rest) + 2 * emb + h));
    /* none of the Llama 4 keys adds a parameter */
    mesh_model_t plain = test_spec("preset: llama4-scout\narch:\n  qk_l2_norm: false\n  "
                                   "nope_every: 2\n  rotary_interleaved: false\n");
    assert_int_equal((uint64_t)plain.params, (uint64_t)m.params);
}

/* Llama 4 Maverick (meta-llama/Llama-4-Maverick-17B-128E's text model) by
 * hand: Scout's attention and norms on every layer; on the odd layers
 * (interleave_moe_layer_step 2) 128 experts and a shared one of 5120x8192
 * each (gate, up, down) with the router 5120x128, on the even ones a dense
 * SwiGLU MLP of 16384.  400.71B as Meta's "400B"; active, one routed
 * expert and the shared one on the MoE layers, Meta's "17B". */
static void params__llama4_maverick__by_hand(void **state)
{
    (void)state;
    mesh_model_t m = test_preset("llama4-maverick");
    double h = 5120, attn = 2 * h * h + 2 * h * 1024, expert = 3 * h * 8192;
    double dense = 3 * h * 16384, router = h * 128, norms = 2 * h, emb = 202048 * h;
    assert_int_equal(mesh_model_moe_layers(&m), 24);
    assert_int_equal((uint64_t)m.params,
                     (uint64_t)(24 * (attn + norms + dense) +
                                24 * (attn + norms + 129 * expert + router) + 2 * emb + h));
    assert_int_equal((uint64_t)m.params, 400711848960ULL);
    assert_int_equal((uint64_t)mesh_model_active_params(&m),
                     (uint64_t)(24 * (attn + norms + dense) +
                                24 * (attn + norms + 2 * expert + router) + 2 * emb + h));
    /* MoE on every layer: Scout's count with 128 experts, the dense MLP gone */
    mesh_model_t all = test_spec("preset: llama4-maverick\narch:\n  moe:\n    every: 1\n");
    assert_int_equal(mesh_model_moe_layers(&all), 48);
    assert_int_equal((uint64_t)all.params,
                     (uint64_t)(48 * (attn + norms + 129 * expert + router) + 2 * emb + h));
}

static void params__moe_mla_mtp__by_hand(void **state)
{
    mesh_model_t m = test_spec(moe_small());
    assert_int_equal((uint64_t)mesh_model_layer_params(&m), 54424);
    assert_int_equal((uint64_t)mesh_model_moe_layer_params(&m), 45592);
    assert_int_equal((uint64_t)mesh_model_expert_params(&m), 6144);
    assert_int_equal((uint64_t)mesh_model_mtp_params(&m), 53976);
    assert_int_equal(mesh_model_moe_layers(&m), 2);
    assert_int_equal((uint64_t)m.params, 212448);
    assert_int_equal((uint64_t)mesh_model_active_params(&m), 138720);
    /* without q compression: q_proj 64 x 4*12 = 3072 replaces 1808 */
    mesh_model_t nq =
        test_spec("arch: {layers: 2, hidden: 64, heads: 4, ffn: 256, vocab: 100, mla: "
                  "{kv_lora_rank: 8, qk_head_dim: 8, qk_rope_head_dim: 4, v_head_dim: 8}}\n");
    assert_int_equal((uint64_t)mesh_model_layer_params(&nq), 54424 - 1808 + 3072);
    /* MLA's widths: queries and keys 4*(8+4)/64, values 4*8/64 */
    double q, kv;
    mesh_model_attn_widths(&m, &q, &kv);
    assert_true(q == 0.75 && kv == 0.5);
    /* one routed expert (a Switch-style ablation) is still a MoE layer:
     * the dense layer's attention and norms, the router's 64 x 1 weights
     * and the expert's MLP, of the dense ffn here */
    mesh_model_t one = test_spec("arch: {layers: 2, hidden: 64, heads: 4, ffn: 256, vocab: 100, "
                                 "moe: {experts: 1}}\n");
    assert_true(mesh_model_is_moe(&one));
    assert_true(mesh_model_moe_layer_params(&one) == mesh_model_layer_params(&one) + 64);
    /* a dense model: active is all of it */
    mesh_model_t d = test_preset("llama3-8b");
    assert_false(mesh_model_is_moe(&d));
    assert_true(mesh_model_active_params(&d) == d.params);
    assert_int_equal(mesh_model_moe_layers(&d), 0);
    assert_true(mesh_model_moe_layer_params(&d) == mesh_model_layer_params(&d));
    /* a params count given with the arch scales the active count alike */
    char yaml[1024];
    snprintf(yaml, sizeof(yaml), "%sparams: 424896\n", moe_small());
    mesh_model_t twice = test_spec(yaml);
    assert_int_equal((uint64_t)mesh_model_active_params(&twice), 2 * 138720);
}

/* A GPT-style MoE (GeLU MLP, LayerNorm, learned positions), counted by
 * hand: hidden 64, 4 heads (MHA), vocab 100 untied, seq 32, 2 layers,
 * both MoE with 4 experts of ffn 32, top 2:
 *   attention: QKV 3*64*64 + 3*64 biases, proj 64*64 + 64 = 16640
 *   two LayerNorms 4*64 = 256, router 64*4 + its 4 biases = 260
 *   expert: fc1 64*32 + 32, fc2 32*64 + 64 = 4192; 4 of them 16768
 *   MoE layer 16640 + 256 + 260 + 16768 = 33924
 *   total 2*33924 + embeddings 2*100*64 + positions 32*64 = 82696
 *   active (2 experts): 2*(17156 + 2*4192) + 12800 + 2048 = 65928 */
static void params__gelu_moe__by_hand(void **state)
{
    mesh_model_t m =
        test_spec("arch: {layers: 2, hidden: 64, heads: 4, ffn: 256, vocab: 100, mlp: gelu, "
                  "moe: {experts: 4, top_k: 2, ffn: 32}}\ntrain: {seq_len: 32}\n");
    assert_int_equal((uint64_t)mesh_model_moe_layer_params(&m), 33924);
    assert_int_equal((uint64_t)m.params, 82696);
    assert_int_equal((uint64_t)mesh_model_active_params(&m), 65928);
}

/* Nemotron-style layers (mlp: relu2: squared ReLU, LayerNorm with its
 * bias, no linear biases, rotary positions), by hand:
 * - Nemotron-4 15B (hidden 6144, 48 heads, 8 KV heads of 128, ffn 24576,
 *   vocab 256000 untied, 32 layers): Q and O 2*6144^2 = 75497472, K and V
 *   2*6144*1024 = 12582912, fc1 and fc2 2*6144*24576 = 301989888, two
 *   LayerNorms 4*6144 = 24576: 390094848 a layer; 32 of them, the two
 *   embedding matrices 2*256000*6144 and the final LayerNorm 2*6144:
 *   15,628,775,424 ("15.6B", the report's 3.2B embedding and 12.5B other);
 * - Nemotron-4 340B (hidden 18432, 96 heads, ffn 73728, 96 layers):
 *   341,029,195,776 ("341B");
 * - a small one with MoE (hidden 64, 4 heads, ffn 128, vocab 100 tied, seq
 *   32, 2 layers of 4 experts of ffn 32, one shared of 32): attention
 *   4*64*64 = 16384, LayerNorms 256, router 64*4 = 256 (no bias), each
 *   expert 2*64*32 = 4096: a MoE layer 16384 + 256 + 256 + 5*4096 = 37376;
 *   total 2*37376 + 6400 + 128 = 81280; active (2 routed and the shared)
 *   2*(16896 + 3*4096) + 6528 = 64896.  No positions: the GeLU model's
 *   seq_len*h is not there. */
static void params__nemotron_style__by_hand(void **state)
{
    mesh_model_t m = test_preset("nemotron4-15b");
    assert_int_equal(m.mlp, MESH_MLP_RELU2);
    assert_int_equal((uint64_t)mesh_model_layer_params(&m), 390094848ULL);
    assert_int_equal((uint64_t)m.params, 15628775424ULL);
    m = test_preset("nemotron4-340b");
    assert_int_equal((uint64_t)m.params, 341029195776ULL);
    m = test_spec(
        "arch: {layers: 2, hidden: 64, heads: 4, ffn: 128, vocab: 100, mlp: relu2, "
        "tied_embeddings: true, moe: {experts: 4, top_k: 2, ffn: 32, shared_experts: 1}}\n"
        "train: {seq_len: 32}\n");
    assert_int_equal((uint64_t)mesh_model_moe_layer_params(&m), 37376);
    assert_int_equal((uint64_t)m.params, 81280);
    assert_int_equal((uint64_t)mesh_model_active_params(&m), 64896);
    (void)state;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(params__moe_presets__published_counts),
        cmocka_unit_test(params__grok1__by_hand),
        cmocka_unit_test(params__llama4_scout__by_hand),
        cmocka_unit_test(params__llama4_maverick__by_hand),
        cmocka_unit_test(params__moe_mla_mtp__by_hand),
        cmocka_unit_test(params__gpt_oss__published_and_by_hand),
        cmocka_unit_test(params__gelu_moe__by_hand),
        cmocka_unit_test(params__nemotron_style__by_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
