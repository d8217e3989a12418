/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Mixture of experts, multi-head latent attention and multi-token
 * prediction: the spec's keys (arch.moe, arch.mla, arch.mtp_layers,
 * train.moe_imbalance), their rules, and the parameter counts against the
 * published ones.
 */
#include "testutil.h"
#include "internal.h" /* mesh_stage_mix, mesh_heavy_stages_of, mesh_moe_imbalance */

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
        /* with the QK norms, 2 x 128 weights in each of 48 and 94 layers */
        {"qwen3-30b-a3b", 30532110336ULL + 48 * 256, 3353020416ULL + 48 * 256},
        {"qwen3-235b-a22b", 235093610496ULL + 94 * 256, 22190739456ULL + 94 * 256},
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
                 "capacity_factor, score, expert_bias, groups, group_top_k, routed_scaling, "
                 "aux_loss)");
    /* the router as Megatron-LM's TransformerConfig checks it
     * (transformer_config.py L2617-2625, L2671-2690 at d98e8a6) */
    expect_error(ARCH "  moe:\n    experts: 8\n    expert_bias: true\n", "arch.moe.expert_bias",
                 "score: sigmoid");
    expect_error(ARCH "  moe:\n    experts: 8\n    groups: 4\n", "arch.moe.groups",
                 "both groups and group_top_k");
    expect_error(ARCH "  moe:\n    experts: 8\n    group_top_k: 2\n", "arch.moe.group_top_k",
                 "both groups and group_top_k");
    expect_error(ARCH "  moe:\n    experts: 8\n    groups: 3\n    group_top_k: 1\n",
                 "arch.moe.groups", "does not divide the 8 experts");
    expect_error(ARCH "  moe:\n    experts: 8\n    groups: 4\n    group_top_k: 5\n",
                 "arch.moe.group_top_k", "more than the 4 groups");
    expect_error(ARCH "  moe:\n    experts: 8\n    top_k: 4\n    groups: 4\n    group_top_k: 1\n",
                 "arch.moe.group_top_k", "fewer than top_k 4");
    expect_error(ARCH "  moe:\n    experts: 8\n    score: cosine\n", "arch.moe.score", "sigmoid");
    expect_error(ARCH "  mlp: gelu\n  rope_theta: 10000\n", "arch.rope_theta", "mlp: swiglu");
    expect_error(ARCH "  mlp: gelu\n  qk_norm: true\n", "arch.qk_norm", "mlp: swiglu only");
    expect_error(ARCH "  qk_norm: true\n  mla:\n    kv_lora_rank: 8\n", "arch.qk_norm",
                 "latent norms");
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
    expect_error(ARCH "  colour: 4\n", "unknown key 'colour' in arch",
                 "mtp_layers, rope_theta, rope_scaling, qk_norm, qkv_bias, norm_eps, moe, mla)");
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

/* ---- layout: --mesh ep/etp, the rules, the rank map, the environment ---- */

static void layout__ep_etp_parse_format(void **state)
{
    mesh_layout_t l = test_mesh("ep=8,etp=2");
    assert_int_equal(l.ep, 8);
    assert_int_equal(l.etp, 2);
    assert_int_equal(l.tp, MESH_FREE);
    char buf[MESH_LAYOUT_STR_MAX];
    assert_string_equal(mesh_layout_format_pins(&l, buf, sizeof(buf)), "ep=8,etp=2");
    l = test_mesh("ep=auto");
    assert_int_equal(l.ep, MESH_AUTO);
    assert_int_equal(l.etp, MESH_FREE);
    /* a MoE layout's canonical string carries them after cp, a dense one's not */
    l = test_layout("tp=2,pp=4,dp=8,cp=1,ep=4,etp=2,zero=1,vpp=1,mb=1,recompute=none,sp=on");
    assert_string_equal(mesh_layout_format(&l, buf, sizeof(buf)),
                        "tp=2,pp=4,dp=8,cp=1,ep=4,etp=2,zero=1,vpp=1,mb=1,recompute=none,sp=on");
    assert_int_equal(mesh_layout_edp(&l), 2);
    mesh_layout_t back = test_mesh(buf);
    assert_int_equal(back.ep, 4);
    assert_int_equal(back.etp, 2);
    l.ep = l.etp = 0;
    assert_string_equal(mesh_layout_format(&l, buf, sizeof(buf)),
                        "tp=2,pp=4,dp=8,cp=1,zero=1,vpp=1,mb=1,recompute=none,sp=on");
    assert_int_equal(mesh_layout_edp(&l), 16);
    mesh_error_t err;
    assert_int_equal(mesh_layout_parse("ep=0", &l, &err), -1);
    assert_non_null(strstr(err.msg, "mesh ep"));
    assert_int_equal(mesh_layout_parse("etp=2,etp=4", &l, &err), -1);
    assert_non_null(strstr(err.msg, "etp given twice"));
}

static void check_refused(const mesh_model_t *m, int nodes, const char *mesh, const char *want)
{
    mesh_alloc_t a = test_alloc("H100-SXM", nodes, 8);
    mesh_layout_t l = test_layout(mesh);
    mesh_error_t err;
    if (mesh_layout_check(m, &a, &l, &err) == 0)
        fail_msg("%s accepted", mesh);
    if (!strstr(err.msg, want))
        fail_msg("%s: '%s' lacks '%s'", mesh, err.msg, want);
}

static void layout__expert_rules(void **state)
{
    mesh_model_t m = test_preset("mixtral-8x7b"), d = test_preset("llama3-8b");
    mesh_alloc_t a = test_alloc("H100-SXM", 2, 8);
    mesh_layout_t ok = test_layout("tp=2,pp=2,dp=4,cp=1,ep=8,etp=1,zero=1,vpp=1,mb=1,"
                                   "recompute=none,sp=on");
    mesh_error_t err;
    if (mesh_layout_check(&m, &a, &ok, &err) < 0)
        fail_msg("%s", err.msg);
    const char *rest = ",zero=1,vpp=1,mb=1,recompute=none";
    char mesh[160];
#define MESH(fmt) (snprintf(mesh, sizeof(mesh), fmt "%s", rest), mesh)
    check_refused(&m, 2, MESH("tp=1,pp=2,dp=8,cp=1,ep=3,etp=1,sp=off"), "ep 3 must divide the 8");
    check_refused(&m, 1, MESH("tp=2,pp=2,dp=2,cp=1,ep=8,etp=1,sp=on"),
                  "ep*etp = 8*1 is more than tp*cp*dp = 2*1*2 = 4");
    check_refused(&m, 2, MESH("tp=1,pp=1,dp=16,cp=1,ep=1,etp=16,sp=off"),
                  "etp 16 must divide the NVLink island of 8");
    check_refused(&m, 2, MESH("tp=2,pp=1,dp=8,cp=1,ep=8,etp=1,sp=off"),
                  "needs sequence parallelism");
    mesh_layout_t zero = ok;
    zero.ep = 0;
    assert_int_equal(mesh_layout_check(&m, &a, &zero, &err), -1);
    assert_non_null(strstr(err.msg, "at least 1"));
    check_refused(&d, 2, MESH("tp=1,pp=1,dp=16,cp=1,ep=2,etp=1,sp=off"),
                  "llama3-8b has no experts");
    mesh_model_t odd = test_spec("arch: {layers: 2, hidden: 64, heads: 4, vocab: 100, "
                                 "moe: {experts: 4, ffn: 30}}\n");
    check_refused(&odd, 1, MESH("tp=1,pp=1,dp=8,cp=1,ep=2,etp=4,sp=off"),
                  "etp 4 must divide the experts' ffn 30");
#undef MESH
    /* a dense layout says 0 or 1 */
    mesh_layout_t dl = test_layout("tp=1,pp=1,dp=16,cp=1,zero=1,vpp=1,mb=1,recompute=none,sp=off");
    dl.ep = dl.etp = 0;
    assert_int_equal(mesh_layout_check(&d, &a, &dl, &err), 0);
    dl.ep = dl.etp = 1;
    assert_int_equal(mesh_layout_check(&d, &a, &dl, &err), 0);
}

/* The planner's one-line errors for the ep a user pins (issue 14: a wrong
 * ep, not dividing the experts or larger than tp*cp*dp). */
static void plan__wrong_ep_one_line(void **state)
{
    mesh_model_t m = test_preset("mixtral-8x7b"), d = test_preset("llama3-8b");
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    mesh_policy_t pol;
    mesh_error_t err;
    mesh_policy_init(&pol);
    static const struct {
        const mesh_model_t *m;
        const char *mesh, *want;
    } cases[] = {
        {NULL, "ep=3", "ep 3 must divide the 8 experts"},
        {NULL, "ep=8,tp=2,pp=2", "ep*etp = 8*1 is more than tp*cp*dp = 2*1*2 = 4"},
        {NULL, "ep=2,etp=16", "ep*etp = 2*16 is more than tp*cp*dp = 1*1*8 = 8"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        mesh_layout_t pins = test_mesh(cases[i].mesh);
        mesh_plan_t *p = mesh_plan_create(&m, &a, &pins, &pol.assume, &err);
        if (p)
            fail_msg("%s planned", cases[i].mesh);
        if (!strstr(err.msg, cases[i].want) || strchr(err.msg, '\n'))
            fail_msg("%s: '%s' lacks '%s'", cases[i].mesh, err.msg, cases[i].want);
    }
    const char *dense[] = {"ep=1", "etp=1", "ep=4,etp=2"};
    for (size_t i = 0; i < sizeof(dense) / sizeof(*dense); i++) {
        mesh_layout_t pins = test_mesh(dense[i]);
        assert_null(mesh_plan_create(&d, &a, &pins, &pol.assume, &err));
        assert_non_null(strstr(err.msg, "llama3-8b has no experts"));
        assert_non_null(strstr(err.msg, "arch.moe"));
    }
    /* "auto" asks for nothing on a dense model, and plans no experts */
    mesh_plan_t *p = test_plan(&d, &a, "ep=auto");
    assert_int_equal(mesh_plan_best(p)->layout.ep, 0);
    mesh_plan_destroy(p);
}

/* Megatron-Core's generate_masked_orthogonal_rank_groups
 * (megatron/core/parallel_state.py at 00caa53), ported independently of
 * lib/ranks.c: sizes in order (fastest first), a mask of the axes a group
 * spans; the group holding `rank` goes to out, ascending. */
static int megatron_group(const int *sizes, const int *mask, int n, long rank, long *out)
{
    long stride[8], coord[8];
    stride[0] = 1;
    for (int i = 1; i <= n; i++)
        stride[i] = stride[i - 1] * sizes[i - 1];
    for (int i = 0; i < n; i++)
        coord[i] = rank / stride[i] % sizes[i];
    /* vary the masked coordinates, hold the others: rank_in_group decomposes
     * over the masked sizes, fastest first */
    long group = 1, base = 0;
    for (int i = 0; i < n; i++)
        if (mask[i])
            group *= sizes[i];
        else
            base += coord[i] * stride[i];
    for (long g = 0; g < group; g++) {
        long r = base, rest = g;
        for (int i = 0; i < n; i++)
            if (mask[i]) {
                r += rest % sizes[i] * stride[i];
                rest /= sizes[i];
            }
        out[g] = r;
    }
    /* ascending (the generator's order is ascending for one-axis groups) */
    for (long i = 1; i < group; i++)
        for (long j = i; j > 0 && out[j] < out[j - 1]; j--) {
            long t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return (int)group;
}

static void ranks__expert_groups_are_megatrons(void **state)
{
    static const char *layouts[] = {
        "tp=2,pp=2,dp=4,cp=1,ep=4,etp=1", "tp=2,pp=2,dp=4,cp=1,ep=2,etp=2",
        "tp=1,pp=4,dp=4,cp=1,ep=4,etp=1", "tp=2,pp=1,dp=4,cp=2,ep=4,etp=2",
        "tp=4,pp=2,dp=2,cp=1,ep=8,etp=1", "tp=1,pp=1,dp=16,cp=1,ep=2,etp=4",
    };
    for (size_t i = 0; i < sizeof(layouts) / sizeof(*layouts); i++) {
        mesh_layout_t l = test_mesh(layouts[i]);
        long world = mesh_layout_world(&l), edp = mesh_layout_edp(&l);
        /* the expert generator: (tp=etp, ep, dp=edp, pp), order tp-cp-ep-dp-pp */
        int sizes[] = {l.etp, l.ep, (int)edp, l.pp};
        static const int masks[3][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}};
        static const mesh_axis_t axes[3] = {MESH_AXIS_ETP, MESH_AXIS_EP, MESH_AXIS_EDP};
        for (long r = 0; r < world; r++) {
            mesh_coords_t c = mesh_rank_coords(&l, r);
            assert_int_equal(r % ((long)l.tp * l.cp * l.dp),
                             c.etp + (long)l.etp * (c.ep + (long)l.ep * c.edp));
            for (int k = 0; k < 3; k++) {
                long want[64], got[64];
                int n = megatron_group(sizes, masks[k], 4, r, want);
                assert_int_equal(mesh_axis_size(&l, axes[k]), n);
                mesh_rank_group(&l, r, axes[k], got);
                for (int j = 0; j < n; j++)
                    if (got[j] != want[j])
                        fail_msg("%s rank %ld %s group member %d: %ld, Megatron-Core %ld",
                                 layouts[i], r, mesh_axis_name(axes[k]), j, got[j], want[j]);
            }
            /* the PP groups of both generators agree (Megatron asserts it) */
            long pp_want[16], pp_got[16];
            int order[] = {l.tp, l.cp, l.dp, l.pp}, ppmask[] = {0, 0, 0, 1};
            int n = megatron_group(order, ppmask, 4, r, pp_want);
            megatron_group(sizes, ppmask, 4, r, pp_got);
            for (int j = 0; j < n; j++)
                assert_int_equal(pp_want[j], pp_got[j]);
        }
    }
    /* the worked example of doc/design.md, section 8 */
    mesh_layout_t l = test_mesh("tp=2,pp=2,dp=4,cp=1,ep=4,etp=1");
    long g[8];
    mesh_rank_group(&l, 5, MESH_AXIS_EP, g);
    assert_true(g[0] == 4 && g[1] == 5 && g[2] == 6 && g[3] == 7);
    mesh_rank_group(&l, 5, MESH_AXIS_EDP, g);
    assert_true(g[0] == 1 && g[1] == 5);
    assert_string_equal(mesh_axis_name(MESH_AXIS_EDP), "edp");
}

static const char *env_get(const mesh_env_t *e, const char *name)
{
    for (int i = 0; i < mesh_env_count(e); i++)
        if (strcmp(mesh_env_name(e, i), name) == 0)
            return mesh_env_value(e, i);
    return NULL;
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

/* ---- memory ---- */

/* Parameters one GPU holds, by hand, for the small model above (1 dense
 * layer, 2 MoE, 1 MTP; vocab 100 padded to 128*tp):
 * tp 1, ep 2: dense 54424, MoE 8728 + 3 experts * 6144 = 27160, MTP 27160
 *   + 8384; embedding and output 2 * 128*64, final norm 64: 160736, of
 *   which experts (2 + 1) * 18432 = 55296.
 * tp 2, ep 2, etp 2: the norms (128), router (384) and MLA's down
 *   projections and norms (1816) whole, the rest halved: dense 28184, MoE
 *   5528 + 3 * 3072 = 14744, MTP 14744 + 8192/2 + 192 = 19032; embeddings
 *   2 * 256*64/2, norm 64: 93152, of which experts 3 * 9216 = 27648. */
static void memory__stage_params_by_hand(void **state)
{
    mesh_model_t m = test_spec(small);
    mesh_layout_t l = test_layout("tp=1,pp=1,dp=8,cp=1,ep=2,etp=1,zero=1,vpp=1,mb=1,"
                                  "recompute=none,sp=off");
    assert_int_equal((uint64_t)mesh_stage_params(&m, &l, 0), 160736);
    assert_int_equal((uint64_t)mesh_stage_expert_params(&m, &l, 0), 55296);
    assert_int_equal((uint64_t)mesh_moe_layer_params_per_gpu(&m, &l), 27160);
    l = test_layout("tp=2,pp=1,dp=4,cp=1,ep=2,etp=2,zero=1,vpp=1,mb=1,recompute=none,sp=on");
    assert_int_equal((uint64_t)mesh_layer_params_per_gpu(&m, 2), 28184);
    assert_int_equal((uint64_t)mesh_moe_layer_params_per_gpu(&m, &l), 14744);
    assert_int_equal((uint64_t)mesh_stage_params(&m, &l, 0), 93152);
    assert_int_equal((uint64_t)mesh_stage_expert_params(&m, &l, 0), 27648);
    /* a dense model has no expert share */
    mesh_model_t d = test_preset("llama3-8b");
    assert_true(mesh_stage_expert_params(&d, &l, 0) == 0);
}

/* Qwen3's QK norms (arch.qk_norm), by hand, for a dense layer of hidden 64,
 * 4 query and 2 KV heads of 32, ffn 128: q and o 64 x 128 each, k and v
 * 64 x 64 each, the MLP 3 x 64 x 128, two norms of 64 and the QK norms of
 * 2 x 32: 49344.  At tp 2 every rank holds the norms whole, as Megatron-LM
 * replicates its q_layernorm and k_layernorm: (49344 - 192) / 2 + 192 =
 * 24768.  Megatron-LM is told --qk-layernorm, and Qwen3's preset says it. */
static void memory__qk_norms_whole_on_every_tp_rank(void **state)
{
    mesh_model_t m = test_spec("arch: {layers: 2, hidden: 64, heads: 4, kv_heads: 2, head_dim: 32, "
                               "ffn: 128, vocab: 100, qk_norm: true}\n");
    assert_int_equal((uint64_t)mesh_model_layer_params(&m), 49344);
    assert_int_equal((uint64_t)mesh_layer_params_per_gpu(&m, 2), 24768);
    mesh_model_t q = test_preset("qwen3-30b-a3b");
    mesh_alloc_t a = test_alloc("H100-SXM", 2, 8);
    mesh_plan_t *p = test_plan(&q, &a, "auto");
    mesh_task_t t = {.master_addr = "n1", .numa_node = -1};
    mesh_error_t err;
    mesh_env_t *e = mesh_env_create(p, &t, &err);
    assert_non_null(e);
    assert_non_null(strstr(env_get(e, "MESH_MEGATRON_ARGS"), " --kv-channels 128 --qk-layernorm "));
    mesh_env_destroy(e);
    mesh_plan_destroy(p);
    (void)state;
}

/* src with its first `old` replaced by `new`, in dst. */
static void replaced(char *dst, size_t len, const char *src, const char *old, const char *new)
{
    const char *at = strstr(src, old);
    assert_non_null(at);
    snprintf(dst, len, "%.*s%s%s", (int)(at - src), src, new, at + strlen(old));
}

/* The model of a flow-style spec, trained in FP8. */
static mesh_model_t in_fp8(const char *yaml)
{
    char fp8[1024];
    replaced(fp8, sizeof(fp8), yaml, "train: {", "train: {precision: fp8, ");
    return test_spec(fp8);
}

/* A pipeline's last stage builds the MTP layers' own embedding beside the
 * output layer, whose weight it allocates tied or not (Megatron-LM's
 * gpt_model.py L173-181, L289-290 at d98e8a6). */
static void memory__mtp_stage_embeds_its_own(void **state)
{
    char none[1024], tied[1024], tied_none[1024];
    replaced(none, sizeof(none), small, "  mtp_layers: 1\n", "");
    replaced(tied, sizeof(tied), small, "  vocab: 100\n",
             "  vocab: 100\n  tied_embeddings: true\n");
    replaced(tied_none, sizeof(tied_none), tied, "  mtp_layers: 1\n", "");
    mesh_model_t m = test_spec(small), n = test_spec(none), t = test_spec(tied),
                 tn = test_spec(tied_none);
    mesh_layout_t l = test_layout("tp=1,pp=2,dp=4,cp=1,ep=2,etp=1,zero=1,vpp=1,mb=1,"
                                  "recompute=none,sp=off");
    /* the MTP layer 27160 + 8384 (memory__stage_params_by_hand), its embedding 128*64 */
    assert_int_equal((uint64_t)(mesh_stage_params(&m, &l, 1) - mesh_stage_params(&n, &l, 1)),
                     35544 + 8192);
    assert_int_equal((uint64_t)(mesh_stage_params(&t, &l, 1) - mesh_stage_params(&tn, &l, 1)),
                     35544 + 8192);
    assert_true(mesh_stage_params(&m, &l, 0) == mesh_stage_params(&n, &l, 0));
    /* one stage: the embedding is the first stage's, and serves them all */
    l.pp = 1;
    assert_int_equal((uint64_t)(mesh_stage_params(&m, &l, 0) - mesh_stage_params(&n, &l, 0)),
                     35544);
}

/* The MTP layer on a stage with MoE layers adds its own activations, its
 * 2h-wide projection input and its logits, but not a second set of the
 * buffers a MoE layer holds while it runs: one layer runs at a time. */
static void memory__mtp_stage_runs_one_layer_at_a_time(void **state)
{
    char none[1024];
    replaced(none, sizeof(none), small, "  mtp_layers: 1\n", "");
    mesh_model_t m = test_spec(small), n = test_spec(none);
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    mesh_layout_t l = test_layout("tp=1,pp=1,dp=8,cp=1,ep=2,etp=1,zero=1,vpp=1,mb=1,"
                                  "recompute=none,sp=off");
    mesh_memory_t with, without;
    mesh_memory_estimate(&m, &l, &a, &pol.assume, &with);
    mesh_memory_estimate(&n, &l, &a, &pol.assume, &without);
    double s = m.seq_len, imb = mesh_moe_imbalance(&m, &pol.assume);
    double mtp = mesh_activation_moe_layer(&m, &l, MESH_RECOMPUTE_NONE, 0, imb) + 4 * s * 64 +
                 6 * s * mesh_model_padded_vocab(&m, 1);
    assert_true(mesh_moe_dispatch_buffers(&m, &l, imb) > 0);
    assert_bytes(with.activations - without.activations, mtp);
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
    snprintf(yaml, sizeof(yaml), "%strain:\n  framework: megatron\n", small);
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

/* One MoE layer's activations by hand: hidden 64, 4 heads, seq 128, one
 * sequence, 8 experts of 32, top 2, no TP.  Attention and norms as the
 * dense formula counts them without an MLP: 4sbh + 4sbh replicated, 2sbh
 * + 4sbh + 2sbh split, FlashAttention's 4*a*s*b: 133120.  Router: fp32
 * logits and scores 8*128*8, maps 8*128*2, the aux loss's fp32 scores and
 * bool map 5*128*8: 15360.  Routed: 128 tokens * 2
 * * imbalance copies, each 2*64 + 4*32 + 2*32 + 4 = 324 bytes. */
static void memory__moe_layer_activations_by_hand(void **state)
{
    mesh_model_t m = test_spec("arch: {layers: 2, hidden: 64, heads: 4, ffn: 256, vocab: 100, "
                               "moe: {experts: 8, top_k: 2, ffn: 32}}\n"
                               "train: {seq_len: 128, global_batch: 8}\n");
    mesh_layout_t l = test_layout("tp=1,pp=1,dp=8,cp=1,ep=4,etp=1,zero=0,vpp=1,mb=1,"
                                  "recompute=none,sp=off");
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
}

/* DeepSeek-V3 on 16 stages: 2 dense layers on stage 0, 1 dense and 3 MoE
 * on stage 1, 4 MoE on stage 2 (the first with no dense layer: priced
 * too), 3 on the last; interleaved, the dense layers follow the chunks. */
static void memory__stage_mix_and_heavy_stages(void **state)
{
    mesh_model_t m = test_preset("deepseek-v3");
    mesh_layout_t l = test_layout("tp=1,pp=16,dp=8,cp=1,ep=8,etp=1,zero=1,vpp=1,mb=1,"
                                  "recompute=none,sp=off");
    int dense, moe, stages[4];
    const int want[][3] = {{0, 2, 0}, {1, 1, 3}, {2, 0, 4}, {15, 0, 3}};
    for (int i = 0; i < 4; i++) {
        mesh_stage_mix(&m, &l, want[i][0], &dense, &moe);
        assert_int_equal(dense, want[i][1]);
        assert_int_equal(moe, want[i][2]);
    }
    assert_int_equal(mesh_heavy_stages_of(&m, &l, stages), 4);
    assert_true(stages[0] == 0 && stages[1] == 1 && stages[2] == 2 && stages[3] == 15);
    assert_true(mesh_stage_params(&m, &l, 2) > mesh_stage_params(&m, &l, 1));
    /* 14 layers on 4 stages of 2 chunks: chunks of 1, 2, ..., 2, 1 slots;
     * the 3 dense layers in chunk 0 (stage 0) and chunk 1 (stage 1) */
    mesh_model_t s = test_spec("arch: {layers: 14, hidden: 64, heads: 4, vocab: 100, "
                               "moe: {experts: 4, dense_layers: 3}}\n");
    l = test_layout("tp=1,pp=4,dp=2,cp=1,ep=2,etp=1,zero=1,vpp=2,mb=1,recompute=none,sp=off");
    const int vwant[][3] = {{0, 1, 2}, {1, 2, 2}, {2, 0, 4}, {3, 0, 3}};
    for (int i = 0; i < 4; i++) {
        mesh_stage_mix(&s, &l, vwant[i][0], &dense, &moe);
        assert_int_equal(dense, vwant[i][1]);
        assert_int_equal(moe, vwant[i][2]);
    }
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

/* ---- cost and search ---- */

/* Model FLOPs of a token, as Megatron-LM counts them: 6 per active matmul
 * weight (the input embedding is a lookup) plus the causal attention core.
 * Mixtral-8x7B: 6 * (12,879,925,248 - 32000*4096) + 6*32*4096*4096.
 * DeepSeek-V3 with its MTP layer: 6 * 38,240,382,976 active (its MTP
 * logits pass the output layer again, as many weights as the embedding
 * lookup leaves out), plus MLA's core 3*4096*128*(192 + 128) in each of
 * its 61 + 1 layers. */
static void cost__flops_per_token_active(void **state)
{
    mesh_model_t m = test_preset("mixtral-8x7b");
    assert_int_equal((uint64_t)mesh_flops_per_token(&m),
                     6ULL * (12879925248ULL - 32000ULL * 4096) + 6ULL * 32 * 4096 * 4096);
    mesh_model_t v3 = test_preset("deepseek-v3");
    assert_int_equal((uint64_t)mesh_flops_per_token(&v3),
                     6ULL * 38240382976ULL + 62ULL * 3 * 4096 * 128 * (192 + 128));
    /* a dense model's count is as it was */
    mesh_model_t d = test_preset("llama3-8b");
    assert_int_equal((uint64_t)mesh_flops_per_token(&d),
                     6ULL * (8030261248ULL - 128256ULL * 4096) + 6ULL * 32 * 8192 * 4096);
}

static mesh_cost_t cost_of(const mesh_model_t *m, int nodes, const char *mesh)
{
    mesh_alloc_t a = test_alloc("H100-SXM", nodes, 8);
    mesh_layout_t l = test_layout(mesh);
    mesh_cost_t c;
    mesh_error_t err;
    if (mesh_layout_check(m, &a, &l, &err) < 0)
        fail_msg("%s: %s", mesh, err.msg);
    mesh_cost_estimate(m, &l, &a, &c);
    return c;
}

/* The token dispatch: two all-to-alls forward and two backward per MoE
 * layer, over NVLink inside an island and the network across nodes; the
 * busiest rank's load sets the experts' time. */
static void cost__dispatch_inside_and_across_nodes(void **state)
{
    mesh_model_t m = test_preset("qwen3-30b-a3b");
    const char *rest = ",zero=1,vpp=1,mb=1,recompute=none,sp=off";
    char near[160], far[160], none[160];
    snprintf(near, sizeof(near), "tp=1,pp=1,dp=16,cp=1,ep=8,etp=1%s", rest);
    snprintf(far, sizeof(far), "tp=1,pp=1,dp=16,cp=1,ep=16,etp=1%s", rest);
    snprintf(none, sizeof(none), "tp=1,pp=1,dp=16,cp=1,ep=1,etp=1%s", rest);
    mesh_cost_t c8 = cost_of(&m, 2, near), c16 = cost_of(&m, 2, far), c1 = cost_of(&m, 2, none);
    assert_true(c1.ep_comm_s == 0);
    assert_true(c8.ep_comm_s > 0);
    /* half of EP 16's peers are on the other node, behind a NIC of a
     * ninth of NVLink's bandwidth */
    assert_true(c16.ep_comm_s > 3 * c8.ep_comm_s);
    assert_true(c16.step_seconds > c8.step_seconds);
    assert_true(c8.step_seconds == c8.compute_s + c8.tp_comm_s + c8.cp_comm_s + c8.pp_comm_s +
                                       c8.dp_comm_s + c8.optimizer_s + c8.ep_comm_s);
    /* the busiest rank under a skewed routing computes longer */
    mesh_model_t even = test_spec("preset: qwen3-30b-a3b\ntrain:\n  moe_imbalance: 1\n");
    mesh_model_t skew = test_spec("preset: qwen3-30b-a3b\ntrain:\n  moe_imbalance: 2\n");
    mesh_cost_t ce = cost_of(&even, 2, near), cs = cost_of(&skew, 2, near);
    assert_true(cs.compute_s > 1.3 * ce.compute_s);
    assert_true(cs.ep_comm_s > 1.5 * ce.ep_comm_s);
    /* under FP8 the dispatch travels in one byte, the combine in two: three
     * quarters of bf16's volume (EP 16 across the nodes, bandwidth-bound) */
    mesh_model_t fp8 = test_spec("preset: qwen3-30b-a3b\ntrain:\n  precision: fp8\n");
    double r8 = cost_of(&fp8, 2, far).ep_comm_s / c16.ep_comm_s;
    assert_true(r8 > 0.74 && r8 < 0.77);
    /* a dense layout has no dispatch */
    mesh_model_t d = test_preset("llama3-8b");
    snprintf(none, sizeof(none), "tp=1,pp=1,dp=16,cp=1%s", rest);
    assert_true(cost_of(&d, 2, none).ep_comm_s == 0);
}

/* Grouped GEMMs lose to dense ones when each expert gets few tokens
 * (M/(M + 128) of the dense rate, M tokens per expert): two models alike
 * but for their experts, 8 or 64 of the same width, 2 per token: the same
 * expert FLOPs, 512 or 64 tokens per expert (80% or 33% of the rate).
 * Memory traffic made free, the second computes its experts 2.4 times
 * longer (token-dropping both, so that dropless routing adds nothing). */
static void cost__grouped_gemm_efficiency(void **state)
{
    const char *fmt = "name: m\narch: {layers: 4, hidden: 2048, heads: 16, vocab: 1000, "
                      "moe: {experts: %d, top_k: 2, ffn: 1024, capacity_factor: 4}}\n"
                      "train: {seq_len: 2048, global_batch: 64, moe_imbalance: 1}\n";
    char yaml[512];
    snprintf(yaml, sizeof(yaml), fmt, 8);
    mesh_model_t few = test_spec(yaml);
    snprintf(yaml, sizeof(yaml), fmt, 64);
    mesh_model_t many = test_spec(yaml);
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    a.gpu.hbm_bw = 1e30;
    mesh_layout_t l =
        test_layout("tp=1,pp=1,dp=8,cp=1,ep=1,etp=1,zero=1,vpp=1,mb=1,recompute=none,sp=off");
    mesh_cost_t cf, cm;
    mesh_cost_estimate(&few, &l, &a, &cf);
    mesh_cost_estimate(&many, &l, &a, &cm);
    assert_true(cm.compute_s > 1.3 * cf.compute_s);
}

/* The experts' gradients are synchronised over the expert data-parallel
 * group, not dp*cp: Qwen3-30B-A3B on 2 nodes with EP 16 over the whole
 * dp 16 (edp 1) synchronises its dense parameters alone (ZeRO-1: a
 * reduce-scatter of the fp32 gradients and an all-gather of the bf16
 * weights over 16 ranks across nodes, in 40M-parameter buckets); with
 * EP 8 (edp 2) each rank's experts travel too.  The network made slow
 * (1 MB/s), compute hides next to none of it. */
static void cost__expert_grads_over_edp(void **state)
{
    mesh_model_t m = test_preset("qwen3-30b-a3b");
    mesh_alloc_t a = test_alloc("H100-SXM", 2, 8);
    a.gpu.net_bw = 1e6;
    mesh_layout_t l16 =
        test_layout("tp=1,pp=1,dp=16,cp=1,ep=16,etp=1,zero=1,vpp=1,mb=1,recompute=none,sp=off");
    mesh_layout_t l8 =
        test_layout("tp=1,pp=1,dp=16,cp=1,ep=8,etp=1,zero=1,vpp=1,mb=1,recompute=none,sp=off");
    mesh_cost_t c16, c8;
    mesh_cost_estimate(&m, &l16, &a, &c16);
    mesh_cost_estimate(&m, &l8, &a, &c8);
    double dense = mesh_stage_params(&m, &l16, 0) - mesh_stage_expert_params(&m, &l16, 0);
    assert_true(dense == mesh_stage_params(&m, &l8, 0) - mesh_stage_expert_params(&m, &l8, 0));
    assert_true(mesh_stage_expert_params(&m, &l16, 0) > dense);
    double g = m.grad_accum_dtype == MESH_PREC_FP32 ? 4 : 2, buckets = (long)(dense / 40e6) + 1;
    double rs = 15.0 / 16 * g * dense / a.gpu.net_bw + buckets * 15 * 6e-6;
    double ag = 15.0 / 16 * 2 * dense / a.gpu.net_bw + buckets * 15 * 6e-6;
    assert_true(c16.dp_comm_s <= (rs + ag) * (1 + 1e-9));
    assert_true(c16.dp_comm_s >= 0.99 * (rs + ag));
    assert_true(c8.dp_comm_s > 1.5 * c16.dp_comm_s);
}

/* The search: DeepSeek-V3 on 1,024 H100s fits with expert parallelism
 * inside a node, and says why that EP (issue 14's first "done when"). */
static void plan__deepseek_v3_ep_explained(void **state)
{
    mesh_model_t m = test_preset("deepseek-v3");
    mesh_alloc_t a = test_alloc("H100-SXM", 128, 8);
    mesh_plan_t *p = test_plan(&m, &a, "auto");
    assert_true(mesh_plan_fits(p));
    const mesh_layout_t *l = &mesh_plan_best(p)->layout;
    assert_true(l->ep > 1);
    assert_true((long)l->ep * l->etp <= 8); /* inside a node */
    int chosen = 0, smaller = 0, larger = 0;
    for (int i = 0; i < mesh_plan_reason_count(p); i++) {
        const mesh_reason_t *r = mesh_plan_reason_record(p, i);
        if (r->kind != MESH_REASON_EXPERTS)
            continue;
        const char *line = mesh_plan_reason(p, i);
        if (r->chosen) {
            chosen++;
            assert_int_equal(r->candidate.layout.ep, l->ep);
            assert_int_equal(r->ep_nodes, 1);
            assert_non_null(strstr(line, "inside one node"));
        } else if (r->candidate.layout.ep < l->ep) {
            smaller++;
            /* each smaller EP needs more than fits, or is slower */
            assert_true(!r->candidate.fits ||
                        r->candidate.cost.step_seconds > r->best_seconds * (1 + MESH_PLAN_TIE));
        } else {
            larger++;
            assert_true(r->ep_nodes > 1);
            assert_non_null(strstr(line, "all-to-all over the network"));
        }
    }
    assert_int_equal(chosen, 1);
    assert_true(smaller >= 1 && larger == 1);
    /* EP 1 holds every expert on every GPU: far over */
    char *json = mesh_report_json(p);
    assert_non_null(strstr(json, "\"kind\":\"experts\""));
    assert_non_null(strstr(json, "\"ep_comm_seconds\":"));
    assert_non_null(strstr(json, "\"active_params\":"));
    free(json);
    /* FP8: the MFU says which peak it is of, and gives the bf16 one beside it */
    char *text = mesh_report_text(p), want[96];
    const mesh_cost_t *c = &mesh_plan_best(p)->cost;
    snprintf(want, sizeof(want), "MFU %.1f%% of the FP8 peak (%.1f%% of the bf16 one)\n",
             100 * c->mfu, 100 * c->tflops_per_gpu * 1e12 / a.gpu.peak_flops);
    assert_non_null(strstr(text, want));
    /* 682.64 B with its MTP layer, the published 671.03 B without (params__moe_presets) */
    assert_non_null(strstr(text, "; 1 MTP layer (11.61 B of the parameters)\n"));
    assert_true(c->mfu > 0 && c->tflops_per_gpu * 1e12 / a.gpu.peak_flops > 1.9 * c->mfu);
    free(text);
    mesh_plan_destroy(p);
    /* Mixtral on one node: EP inside it */
    mesh_model_t mx = test_preset("mixtral-8x7b");
    mesh_alloc_t one = test_alloc("H100-SXM", 4, 8);
    p = test_plan(&mx, &one, "auto");
    assert_true(mesh_plan_fits(p));
    assert_true(mesh_plan_best(p)->layout.ep >= 2 && mesh_plan_best(p)->layout.ep <= 8);
    mesh_plan_destroy(p);
}

/* Expert counts with odd divisors (60 = 2^2*3*5): an EP that does not
 * divide a stage's ranks is no evidence that the smaller ones cannot fit,
 * so the search still reaches them and never picks worse than a pin. */
static void plan__ep_search_past_non_divisors(void **state)
{
    const char *specs[] = {
        "name: sixty\narch:\n  layers: 24\n  hidden: 2048\n  heads: 16\n  ffn: 5632\n"
        "  vocab: 151936\n  moe:\n    experts: 60\n    top_k: 4\n    ffn: 1408\n"
        "    shared_experts: 4\n    shared_ffn: 1408\ntrain:\n  seq_len: 4096\n"
        "  global_batch: 256\n",
        "name: six\narch:\n  layers: 4\n  hidden: 1024\n  heads: 8\n  ffn: 2816\n"
        "  vocab: 32000\n  moe:\n    experts: 6\n    top_k: 2\n",
    };
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
        mesh_model_t m = test_spec(specs[i]);
        mesh_plan_t *p = test_plan(&m, &a, "auto");
        /* the layout with every expert on every GPU, pinned: it fits */
        mesh_plan_t *pin = test_plan(&m, &a, "tp=1,pp=1,ep=1");
        assert_true(mesh_plan_fits(p) && mesh_plan_fits(pin));
        assert_true(mesh_plan_best(p)->cost.step_seconds <=
                    mesh_plan_best(pin)->cost.step_seconds * (1 + MESH_PLAN_TIE));
        mesh_plan_destroy(pin);
        /* and "tp=1,pp=1" alone leaves EP to the search, which finds it */
        pin = test_plan(&m, &a, "tp=1,pp=1");
        assert_true(mesh_plan_fits(pin));
        mesh_plan_destroy(pin);
        mesh_plan_destroy(p);
    }
}

/* An EP across nodes is explained against the largest EP inside one. */
static void plan__ep_across_nodes_says_why_not_inside(void **state)
{
    mesh_model_t m = test_preset("deepseek-v3");
    mesh_alloc_t a = test_alloc("H100-SXM", 64, 4);
    mesh_plan_t *p = test_plan(&m, &a, "auto");
    assert_true(mesh_plan_fits(p));
    const mesh_layout_t *l = &mesh_plan_best(p)->layout;
    assert_true((long)l->ep * l->etp > 4); /* across nodes */
    int inside = 0;
    for (int i = 0; i < mesh_plan_reason_count(p); i++) {
        const mesh_reason_t *r = mesh_plan_reason_record(p, i);
        if (r->kind == MESH_REASON_EXPERTS && !r->chosen &&
            (long)r->candidate.layout.ep * r->candidate.layout.etp == 4) {
            inside++;
            assert_non_null(strstr(mesh_plan_reason(p, i), "inside one node"));
        }
    }
    assert_int_equal(inside, 1);
    mesh_plan_destroy(p);
}

/* Expert TP only where EP alone fits nothing, and a pinned EP plans the
 * rest around it. */
static void plan__pinned_ep_and_etp(void **state)
{
    mesh_model_t m = test_preset("mixtral-8x7b");
    mesh_alloc_t a = test_alloc("H100-SXM", 4, 8);
    mesh_plan_t *p = test_plan(&m, &a, "ep=4");
    assert_int_equal(mesh_plan_best(p)->layout.ep, 4);
    mesh_plan_destroy(p);
    p = test_plan(&m, &a, "tp=2,ep=4,etp=2");
    assert_int_equal(mesh_plan_best(p)->layout.etp, 2);
    assert_int_equal(mesh_plan_best(p)->layout.ep, 4);
    mesh_plan_destroy(p);
    /* the yes/no of job_submit agrees with the plan */
    assert_true(mesh_plan_any_fits(&m, &a, NULL, NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(params__moe_presets__published_counts),
        cmocka_unit_test(params__moe_mla_mtp__by_hand),
        cmocka_unit_test(spec__moe_mla_defaults),
        cmocka_unit_test(spec__moe_mla_errors),
        cmocka_unit_test(spec__moe_request_roundtrip),
        cmocka_unit_test(layout__ep_etp_parse_format),
        cmocka_unit_test(layout__expert_rules),
        cmocka_unit_test(plan__wrong_ep_one_line),
        cmocka_unit_test(ranks__expert_groups_are_megatrons),
        cmocka_unit_test(env__expert_groups_for_moe_only),
        cmocka_unit_test(memory__stage_params_by_hand),
        cmocka_unit_test(memory__qk_norms_whole_on_every_tp_rank),
        cmocka_unit_test(memory__mtp_stage_embeds_its_own),
        cmocka_unit_test(memory__mtp_stage_runs_one_layer_at_a_time),
        cmocka_unit_test(memory__experts_sharded_over_edp),
        cmocka_unit_test(memory__moe_layer_activations_by_hand),
        cmocka_unit_test(memory__moe_dispatch_buffers_by_hand),
        cmocka_unit_test(memory__mla_activations_by_hand),
        cmocka_unit_test(memory__stage_mix_and_heavy_stages),
        cmocka_unit_test(memory__imbalance_spec_or_policy),
        cmocka_unit_test(cost__flops_per_token_active),
        cmocka_unit_test(cost__dispatch_inside_and_across_nodes),
        cmocka_unit_test(cost__grouped_gemm_efficiency),
        cmocka_unit_test(cost__expert_grads_over_edp),
        cmocka_unit_test(plan__deepseek_v3_ep_explained),
        cmocka_unit_test(plan__pinned_ep_and_etp),
        cmocka_unit_test(plan__ep_search_past_non_divisors),
        cmocka_unit_test(plan__ep_across_nodes_says_why_not_inside),
    };
    return cmocka_run_group_tests_name("moe", tests, NULL, NULL);
}
