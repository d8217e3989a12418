/*
 * Mixture of experts, multi-head latent attention and multi-token
 * prediction: the spec's keys (arch.moe, arch.mla, arch.mtp_layers,
 * train.moe_imbalance), their rules, and the parameter counts against the
 * published ones.
 */
#include "testutil.h"

/* ---- parameter counts ---- */

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
        {"qwen3-30b-a3b", 30532110336ULL, 3353020416ULL},
        {"qwen3-235b-a22b", 235093610496ULL, 22190739456ULL},
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

/* A small MoE with MLA and an MTP layer, counted by hand.  hidden 64, 4
 * heads, vocab 100 untied, 3 layers, the first dense (ffn 256);
 * MLA q_lora 16, kv_lora 8, qk 8 + rope 4, v 8:
 *   q_a 64*16 = 1024, its norm 16, q_b 16*4*12 = 768,
 *   kv_a 64*(8+4) = 768, its norm 8, kv_b 8*4*(8+8) = 512, o 4*8*64 = 2048:
 *   attention 5144; norms 128
 *   dense MLP 3*64*256 = 49152: dense layer 54424
 *   MoE: 6 experts of 32 (3*64*32 = 6144 each: 36864), router 64*6 = 384,
 *   1 shared of 16 (3072): MoE layer 5144 + 128 + 384 + 3072 + 36864 = 45592
 *   MTP: a MoE layer + 2*64*64 + 3*64 = 45592 + 8384 = 53976
 *   total 54424 + 2*45592 + 53976 + 2*6400 + 64 = 212448
 *   active (top 2): MoE layer 45592 - 4*6144 = 21016;
 *   54424 + 2*21016 + (21016 + 8384) + 12800 + 64 = 138720 */
static const char *small = "name: small-moe\n"
                           "arch:\n  layers: 3\n  hidden: 64\n  heads: 4\n  ffn: 256\n"
                           "  vocab: 100\n  mtp_layers: 1\n"
                           "  moe:\n    experts: 6\n    top_k: 2\n    ffn: 32\n"
                           "    shared_experts: 1\n    shared_ffn: 16\n    dense_layers: 1\n"
                           "  mla:\n    q_lora_rank: 16\n    kv_lora_rank: 8\n"
                           "    qk_head_dim: 8\n    qk_rope_head_dim: 4\n    v_head_dim: 8\n";

static void params__moe_mla_mtp__by_hand(void **state)
{
    mesh_model_t m = test_spec(small);
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
    /* a dense model: active is all of it */
    mesh_model_t d = test_preset("llama3-8b");
    assert_false(mesh_model_is_moe(&d));
    assert_true(mesh_model_active_params(&d) == d.params);
    assert_int_equal(mesh_model_moe_layers(&d), 0);
    assert_true(mesh_model_moe_layer_params(&d) == mesh_model_layer_params(&d));
    /* a params count given with the arch scales the active count alike */
    char yaml[1024];
    snprintf(yaml, sizeof(yaml), "%sparams: 424896\n", small);
    mesh_model_t twice = test_spec(yaml);
    assert_int_equal((uint64_t)mesh_model_active_params(&twice), 2 * 138720);
}

/* The defaults: top_k Megatron-LM's 2, moe.ffn the dense one, shared_ffn
 * moe.ffn, MLA's head widths DeepSeek's (Megatron-LM's MLATransformerConfig). */
static void spec__moe_mla_defaults(void **state)
{
    mesh_model_t m = test_spec("arch: {layers: 4, hidden: 64, heads: 4, ffn: 96, vocab: 100, "
                               "moe: {experts: 4, shared_experts: 2}, mla: {kv_lora_rank: 32}}\n");
    assert_int_equal(m.moe.top_k, 2);
    assert_int_equal(m.moe.ffn, 96);
    assert_int_equal(m.moe.shared_ffn, 96);
    assert_int_equal(m.moe.dense_layers, 0);
    assert_true(m.moe.capacity_factor == 0);
    assert_int_equal(m.mla.q_lora_rank, 0);
    assert_int_equal(m.mla.qk_head_dim, 128);
    assert_int_equal(m.mla.qk_rope_head_dim, 64);
    assert_int_equal(m.mla.v_head_dim, 128);
    assert_true(m.moe_imbalance == 0);
    /* "none" is the default capacity; a number drops tokens beyond it */
    mesh_model_t none = test_spec("arch: {layers: 2, hidden: 64, heads: 4, vocab: 100, "
                                  "moe: {experts: 4, capacity_factor: none}}\n");
    assert_true(none.moe.capacity_factor == 0);
    mesh_model_t cf = test_spec("arch: {layers: 2, hidden: 64, heads: 4, vocab: 100, "
                                "moe: {experts: 4, capacity_factor: 1.25}}\ntrain:\n"
                                "  moe_imbalance: 1.5\n");
    assert_true(cf.moe.capacity_factor == 1.25);
    assert_true(cf.moe_imbalance == 1.5);
    char d1[17], d2[17], d3[17];
    mesh_model_t plain = test_spec("arch: {layers: 2, hidden: 64, heads: 4, vocab: 100, "
                                   "moe: {experts: 4}}\n");
    assert_string_equal(mesh_model_digest(&none, d1), mesh_model_digest(&plain, d2));
    assert_string_not_equal(d1, mesh_model_digest(&cf, d3));
    /* a preset's experts, overridden key by key */
    mesh_model_t o = test_spec("preset: mixtral-8x7b\narch:\n  moe:\n    top_k: 1\n");
    assert_int_equal(o.moe.experts, 8);
    assert_int_equal(o.moe.top_k, 1);
    assert_true(o.params == test_preset("mixtral-8x7b").params);
    assert_true(mesh_model_active_params(&o) < 12e9);
}

static void expect_error(const char *yaml, const char *n1, const char *n2)
{
    mesh_spec_dirs_t d = test_dirs();
    mesh_model_t m;
    mesh_error_t err;
    if (mesh_spec_parse(yaml, strlen(yaml), "moe.yaml", &d, &m, &err) == 0)
        fail_msg("accepted:\n%s", yaml);
    if (!strstr(err.msg, n1) || (n2 && !strstr(err.msg, n2)))
        fail_msg("error '%s' lacks '%s'/'%s'", err.msg, n1, n2 ? n2 : "");
    if (strchr(err.msg, '\n'))
        fail_msg("error '%s' is more than one line", err.msg);
}

#define ARCH "arch:\n  layers: 4\n  hidden: 64\n  heads: 4\n  vocab: 100\n"

/* Every rule names its key, the line, and the fix, in one line. */
static void spec__moe_mla_errors(void **state)
{
    expect_error(ARCH "  moe:\n    top_k: 2\n", "arch.moe.experts is missing", NULL);
    expect_error(ARCH "  moe:\n    experts: 4\n    top_k: 5\n", "moe.yaml:8: arch.moe.top_k",
                 "more than the 4 experts");
    expect_error(ARCH "  moe:\n    experts: 4\n    dense_layers: 4\n",
                 "moe.yaml:8: arch.moe.dense_layers", "at most 3");
    expect_error(ARCH "  moe:\n    experts: 4\n    shared_ffn: 64\n", "arch.moe.shared_ffn",
                 "shared_experts");
    expect_error(ARCH "  moe:\n    experts: 0\n", "arch.moe.experts", "out of range");
    expect_error(ARCH "  moe:\n    experts: 4\n    capacity_factor: lots\n",
                 "arch.moe.capacity_factor", "or none");
    expect_error(ARCH "  moe:\n    experts: 4\n    capacity_factor: 0\n",
                 "arch.moe.capacity_factor", "out of range");
    expect_error(ARCH "  moe:\n    experts: 4\n    expert: 2\n", "unknown key 'expert' in arch.moe",
                 "(allowed: experts, top_k, ffn, shared_experts, shared_ffn, dense_layers, "
                 "capacity_factor)");
    expect_error(ARCH "  moe: 4\n", "arch.moe", "expected a mapping");
    expect_error(ARCH "  moe:\n    experts: 4\n  moe:\n    experts: 8\n", "arch.moe",
                 "given twice");
    expect_error(ARCH "  moe:\n    experts: 4\n    mla:\n      kv_lora_rank: 8\n",
                 "unknown key 'mla' in arch.moe", NULL);
    expect_error("moe:\n  experts: 4\nparams: 1e9\n", "unknown key 'moe'", "arch, train");
    expect_error("params: 1e9\narch:\n  moe:\n    experts: 4\n", "arch.layers is missing", NULL);
    expect_error("params: 1e9\ntrain:\n  moe_imbalance: 1.2\n", "train.moe_imbalance", "MoE model");
    expect_error(ARCH "  moe:\n    experts: 4\ntrain:\n  moe_imbalance: 0.9\n",
                 "train.moe_imbalance", "out of range");
    expect_error(ARCH "  colour: 4\n", "unknown key 'colour' in arch", "mtp_layers, moe, mla)");
    expect_error(ARCH "  mla:\n    q_lora_rank: 8\n", "arch.mla.kv_lora_rank is missing", NULL);
    expect_error(ARCH "  mlp: gelu\n  mla:\n    kv_lora_rank: 8\n", "moe.yaml:6: arch.mlp",
                 "swiglu");
    expect_error(ARCH "  head_dim: 32\n  mla:\n    kv_lora_rank: 8\n", "arch.head_dim",
                 "leave head_dim out");
    expect_error(ARCH "  kv_heads: 2\n  mla:\n    kv_lora_rank: 8\n", "arch.kv_heads",
                 "no grouped");
    expect_error(ARCH "  mtp_layers: 65\n", "arch.mtp_layers", "out of range");
    expect_error(ARCH "  mtp_layers: -1\n", "arch.mtp_layers", "out of range");
    /* MLA sizes its own heads: heads need not divide hidden */
    mesh_model_t m = test_spec("arch: {layers: 2, hidden: 96, heads: 64, vocab: 100, mla: "
                               "{kv_lora_rank: 8}}\n");
    assert_int_equal(m.heads, 64);
}

/* The controller's request carries the new keys only when set, nested as
 * the spec nests them, and reads back the same model. */
static void spec__moe_request_roundtrip(void **state)
{
    const char *specs[] = {small, "preset: deepseek-v3", "preset: qwen3-30b-a3b",
                           ARCH "  moe:\n    experts: 4\n    capacity_factor: 1.5\n"
                                "train:\n  moe_imbalance: 2.25\n",
                           ARCH "  mtp_layers: 2\n"};
    for (size_t i = 0; i < sizeof(specs) / sizeof(*specs); i++) {
        mesh_model_t m = test_spec(specs[i]), back;
        mesh_layout_t pins, pback;
        mesh_error_t err;
        char req[MESH_REQUEST_MAX], d1[17], d2[17];
        mesh_layout_unpin(&pins);
        if (mesh_request_encode(&m, &pins, req, sizeof(req), &err) < 0)
            fail_msg("%s", err.msg);
        if (mesh_request_decode(req, &back, &pback, &err) < 0)
            fail_msg("%s\n  request: %s", err.msg, req);
        assert_int_equal(memcmp(&m.moe, &back.moe, sizeof(m.moe)), 0);
        assert_int_equal(memcmp(&m.mla, &back.mla, sizeof(m.mla)), 0);
        assert_int_equal(m.mtp_layers, back.mtp_layers);
        assert_true(m.moe_imbalance == back.moe_imbalance);
        assert_string_equal(mesh_model_digest(&m, d1), mesh_model_digest(&back, d2));
    }
    /* a dense model's request says nothing of them */
    mesh_model_t d = test_preset("llama3-70b");
    mesh_layout_t pins;
    mesh_error_t err;
    char req[MESH_REQUEST_MAX];
    mesh_layout_unpin(&pins);
    assert_int_equal(mesh_request_encode(&d, &pins, req, sizeof(req), &err), 0);
    assert_null(strstr(req, "moe"));
    assert_null(strstr(req, "mla"));
    assert_null(strstr(req, "mtp"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(params__moe_presets__published_counts),
        cmocka_unit_test(params__moe_mla_mtp__by_hand),
        cmocka_unit_test(spec__moe_mla_defaults),
        cmocka_unit_test(spec__moe_mla_errors),
        cmocka_unit_test(spec__moe_request_roundtrip),
    };
    return cmocka_run_group_tests_name("moe", tests, NULL, NULL);
}
