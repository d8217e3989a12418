/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lib/shard.c: the parameters one GPU of a pipeline stage holds under a layout, by hand.
 */
#include "internal.h" /* mesh_stage_mix, mesh_heavy_stages_of, mesh_heavy_count */
#include "moeutil.h"

/* ---- mixture of experts, MLA and MTP ---- */

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
    mesh_model_t m = test_spec(moe_small());
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

/* A parameter count the spec gives wins over its arch's: every stage's
 * parameters, and of them the experts', scale by the same factor, and the
 * heavy stages the planner counts at once (mesh_heavy_count) are those
 * stages', layers and all, with the count given or not. */
static void memory__a_given_count_scales_every_stage(void **state)
{
    (void)state;
    mesh_model_t m = test_spec(moe_small());
    mesh_model_t t = test_specf("%sparams: %.17g\n", moe_small(), 2 * m.params);
    mesh_layout_t l = test_layout("tp=1,pp=3,dp=2,cp=1,ep=2,etp=1,zero=1,vpp=1,mb=1,"
                                  "recompute=none,sp=off");
    for (int stage = 0; stage < 3; stage++) {
        assert_true(mesh_stage_params(&t, &l, stage) == 2 * mesh_stage_params(&m, &l, stage));
        assert_true(mesh_stage_expert_params(&t, &l, stage) ==
                    2 * mesh_stage_expert_params(&m, &l, stage));
    }
    const mesh_model_t *both[] = {&m, &t};
    for (int k = 0; k < 2; k++) {
        mesh_heavy_t h;
        mesh_heavy_count(both[k], &l, &h);
        assert_int_equal(h.n, 3);
        for (int i = 0; i < h.n; i++) {
            assert_int_equal(h.layers[i], mesh_pp_stage_layers(both[k], &l, h.stage[i]));
            assert_true(h.psi[i] == mesh_stage_params(both[k], &l, h.stage[i]));
            assert_true(h.psi_e[i] == mesh_stage_expert_params(both[k], &l, h.stage[i]));
            assert_true(h.psi_e[i] > 0 || h.stage[i] == 0); /* stage 0: the dense layer */
        }
    }
}

/* A GeLU MoE keeps its biases, as Megatron-LM builds them (no
 * --disable-bias-linear), by hand for hidden 64, 4 heads and 4 experts of
 * width 32: attention 3*64*64 + 192 (QKV) + 64*64 + 64 (proj) = 16640;
 * LayerNorms 4*64 = 256; the router's weight and bias (64 + 1)*4 = 260
 * (router.py L67-72 at d98e8a6); each expert 2*64*32 + 32 + 64 = 4192.
 * At tp 2, ep 2: the norms, the router and the projection's row-parallel
 * bias whole, 580, the rest halved, (17156 - 580) / 2; two experts: 8868
 * + 8384.  Megatron-LM refuses expert TP (transformer_config.py
 * L2612-2615) and shared experts (shared_experts.py L124-125) with those
 * biases, and takes them in its grouped experts only without the fused
 * bias-dropout (experts.py L205-207). */
static void memory__gelu_moe_biases_by_hand(void **state)
{
#define GELU_MOE(more)                                                                             \
    "arch: {layers: 2, hidden: 64, heads: 4, ffn: 256, vocab: 100, mlp: gelu, "                    \
    "moe: {experts: 4, top_k: 2, ffn: 32" more "}}\n"
    mesh_model_t m = test_spec(GELU_MOE(""));
    assert_int_equal((uint64_t)mesh_model_expert_params(&m), 4192);
    assert_int_equal((uint64_t)mesh_moe_layer_base(&m), 17156);
    mesh_layout_t l = test_layout("tp=1,pp=1,dp=4,cp=1,ep=2,etp=1,zero=1,vpp=1,mb=1,"
                                  "recompute=none,sp=off");
    assert_int_equal((uint64_t)mesh_moe_layer_params_per_gpu(&m, &l), 17156 + 8384);
    l = test_layout("tp=2,pp=1,dp=2,cp=1,ep=2,etp=1,zero=1,vpp=1,mb=1,recompute=none,sp=on");
    assert_int_equal((uint64_t)mesh_moe_layer_params_per_gpu(&m, &l), 8868 + 8384);
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 4);
    mesh_error_t err;
    assert_int_equal(mesh_layout_check(&m, &a, &l, &err), 0);
    l.etp = 2;
    l.ep = 1;
    assert_int_equal(mesh_layout_check(&m, &a, &l, &err), -1);
    assert_non_null(strstr(err.msg, "etp 2: Megatron-LM builds the biases of a GeLU model's "
                                    "experts only with etp=1"));
    mesh_plan_t *p = test_plan(&m, &a, "auto");
    char *args = test_env_value(p, "MESH_MEGATRON_ARGS");
    assert_non_null(strstr(args, " --no-bias-dropout-fusion"));
    free(args);
    mesh_plan_destroy(p);
    static const char shared[] = GELU_MOE(", shared_experts: 1");
    assert_int_equal(mesh_spec_parse(shared, sizeof(shared) - 1, "gelu.yaml", NULL, &m, &err), -1);
    assert_non_null(strstr(err.msg, "gelu.yaml:1: arch.moe.shared_experts: Megatron-LM builds "
                                    "shared experts without biases"));
    (void)state;
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

/* A pipeline's last stage builds the MTP layers' own embedding beside the
 * output layer, whose weight it allocates tied or not (Megatron-LM's
 * gpt_model.py L173-181, L289-290 at d98e8a6). */
static void memory__mtp_stage_embeds_its_own(void **state)
{
    char none[1024], tied[1024], tied_none[1024];
    replaced(none, sizeof(none), moe_small(), "  mtp_layers: 1\n", "");
    replaced(tied, sizeof(tied), moe_small(), "  vocab: 100\n",
             "  vocab: 100\n  tied_embeddings: true\n");
    replaced(tied_none, sizeof(tied_none), tied, "  mtp_layers: 1\n", "");
    mesh_model_t m = test_spec(moe_small()), n = test_spec(none), t = test_spec(tied),
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

/* DeepSeek-V3 on 16 stages: 2 dense layers on stage 0, 1 dense and 3 MoE
 * on stage 1, 4 MoE on stage 2 (the first with no dense layer: priced
 * too), 3 on the last; interleaved, the dense layers follow the chunks;
 * a dense model's stages all dense. */
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
    /* a dense model: every layer of a stage dense (set over -1s) */
    mesh_model_t d = test_preset("llama3-8b");
    l = test_layout("tp=1,pp=4,dp=2,cp=1,zero=1,vpp=1,mb=1,recompute=none,sp=off");
    for (int i = 0; i < 4; i++) {
        dense = moe = -1;
        mesh_stage_mix(&d, &l, i, &dense, &moe);
        assert_int_equal(dense, 8);
        assert_int_equal(moe, 0);
    }
}

/* What the walks below start from: a 40-layer model of 4 experts (and the
 * moe keys given) on 4 stages at ep 2. */
static void walk_start(const char *moe, mesh_model_t *m, mesh_layout_t *l)
{
    char spec[160];
    snprintf(spec, sizeof(spec),
             "arch: {layers: 40, hidden: 64, heads: 4, vocab: 100, moe: {experts: 4, %s}}\n", moe);
    *m = test_spec(spec);
    *l = test_layout("tp=1,pp=4,dp=2,cp=1,ep=2,etp=1,zero=1,vpp=1,mb=1,recompute=none,sp=off");
}

/* The heavy stages of a MoE model with dense first layers list the first
 * middle stage without a dense layer, as a walk over the stages finds it
 * (mesh_heavy_stages_of bisects them): every split of up to 40 layers and
 * 1 MTP layer, 0 to all of them dense, over up to 12 stages, plain and
 * interleaved. */
static void memory__heavy_stages_as_the_walk_finds_them(void **state)
{
    (void)state;
    mesh_model_t m;
    mesh_layout_t l;
    walk_start("dense_layers: 3", &m, &l);
    int checked = 0, moved = 0;
    for (int mtp = 0; mtp <= 1; mtp++)
        for (m.layers = 4, m.mtp_layers = mtp; m.layers <= 40; m.layers++)
            for (m.moe.dense_layers = 1; m.moe.dense_layers < m.layers; m.moe.dense_layers++)
                for (l.pp = 4; l.pp <= 12 && l.pp <= m.layers; l.pp++)
                    for (l.vpp = 1; l.vpp <= 3; l.vpp++) {
                        if (mesh_stage_layers(m.layers, l.pp, 0) < 1 ||
                            mesh_stage_layers(m.layers, l.pp, l.pp - 1) < 1 ||
                            (l.vpp > 1 && !mesh_vpp_chunk_layers(m.layers, l.pp, l.vpp) &&
                             (mesh_chunk_layers(&m, &l, 0) < 0 ||
                              mesh_chunk_layers(&m, &l, l.pp * l.vpp - 1) < 0)))
                            continue;
                        int walk = 0, dense, moe, stages[4];
                        for (int s = 1; s < l.pp - 1 && !walk; s++) {
                            mesh_stage_mix(&m, &l, s, &dense, &moe);
                            walk = dense == 0 ? s : 0;
                        }
                        /* 0, 1, the walk's stage (beyond stage 1), pp-1 */
                        int n = mesh_heavy_stages_of(&m, &l, stages);
                        if (walk > 1 ? n != 4 || stages[2] != walk || stages[3] != l.pp - 1
                                     : n != 3)
                            fail_msg("%d layers (%d dense, %d MTP), pp %d, vpp %d: the walk finds "
                                     "stage %d, %d heavy stages listed",
                                     m.layers, m.moe.dense_layers, m.mtp_layers, l.pp, l.vpp, walk,
                                     n);
                        checked++;
                        moved += walk > 1;
                    }
    assert_true(checked > 10000 && moved > 2000);
}

/* Nemotron-style layers (mlp: relu2) on one GPU, by hand: the two
 * LayerNorms (weight and bias, 4h) whole on every TP rank, no row-parallel
 * bias to keep whole, the rest split.  Nemotron-4 15B at tp 4:
 * (390094848 - 24576) / 4 + 24576 = 97542144.  The small MoE of
 * test_params (hidden 64, 4 experts of 32 and a shared one, tied vocab 100)
 * at tp 2, ep 2: LayerNorms 256 and the router 256 whole, attention 16384
 * and the shared expert 4096 halved: 10752, and 2 experts of 4096: 18944 a
 * layer; the stage: 2 layers, the embedding 256*64/2 (100 padded to 256),
 * no positions, the final LayerNorm 128: 46208. */
/* The MoE layers of a stage with MoE every N layers (layers N-1, 2N-1,
 * ...), against a walk over its layers: every split of 4 to 40 layers and
 * 0 or 1 MTP layer over 1 to 9 stages, plain, evenly interleaved and
 * explicit (vpp 1 to 4), N from 2 to 6.  Each stage's count is the walk's,
 * they add up to the model's, and the heavy stages list a middle stage
 * holding as many as the most any does. */
static int walk_every(const mesh_model_t *m, const mesh_layout_t *l, int stage, int every)
{
    int n = 0, at = 0;
    if (l->vpp <= 1) {
        for (int s = 0; s < stage; s++)
            at += mesh_pp_stage_layers(m, l, s);
        for (int i = at; i < at + mesh_pp_stage_layers(m, l, stage); i++)
            n += (i + 1) % every == 0;
        return n;
    }
    for (int j = 0; j < l->pp * l->vpp; at += mesh_chunk_layers(m, l, j), j++)
        for (int i = at; j % l->pp == stage && i < at + mesh_chunk_layers(m, l, j); i++)
            n += (i + 1) % every == 0;
    return n;
}

static void memory__moe_every_few_layers_as_a_walk_counts(void **state)
{
    (void)state;
    mesh_model_t m;
    mesh_layout_t l;
    walk_start("every: 2", &m, &l);
    int checked = 0, explicit = 0, uneven = 0;
    for (int mtp = 0; mtp <= 1; mtp++)
        for (m.layers = 4, m.mtp_layers = mtp; m.layers <= 40; m.layers++)
            for (m.moe.every = 2; m.moe.every <= 6 && m.moe.every <= m.layers; m.moe.every++)
                for (l.pp = 1; l.pp <= 9 && l.pp <= m.layers; l.pp++)
                    for (l.vpp = 1; l.vpp <= 4; l.vpp++) {
                        if (mesh_stage_layers(m.layers, l.pp, 0) < 1 ||
                            mesh_stage_layers(m.layers, l.pp, l.pp - 1) < 1 ||
                            (l.vpp > 1 && (l.pp < 2 || mesh_chunk_layers(&m, &l, 0) < 0 ||
                                           mesh_chunk_layers(&m, &l, l.pp * l.vpp - 1) < 0)))
                            continue;
                        int total = 0, most = 0, dense, moe, stages[4];
                        for (int s = 0; s < l.pp; s++) {
                            int want = walk_every(&m, &l, s, m.moe.every);
                            mesh_stage_mix(&m, &l, s, &dense, &moe);
                            if (moe != want || dense + moe != mesh_pp_stage_layers(&m, &l, s))
                                fail_msg("%d layers (%d MTP), every %d, pp %d, vpp %d: stage %d "
                                         "holds %d MoE layers of %d, the walk %d",
                                         m.layers, mtp, m.moe.every, l.pp, l.vpp, s, moe,
                                         dense + moe, want);
                            total += moe;
                            if (s > 0 && s < l.pp - 1 && moe > most)
                                most = moe;
                        }
                        assert_int_equal(total, mesh_model_moe_layers(&m));
                        int n = mesh_heavy_stages_of(&m, &l, stages), listed = 0;
                        for (int i = 0; i < n; i++)
                            if (stages[i] > 0 && stages[i] < l.pp - 1) {
                                mesh_stage_mix(&m, &l, stages[i], &dense, &moe);
                                listed = moe > listed ? moe : listed;
                            }
                        if (listed != most)
                            fail_msg("%d layers (%d MTP), every %d, pp %d, vpp %d: the heavy "
                                     "stages' middle one holds %d MoE layers, stages hold %d",
                                     m.layers, mtp, m.moe.every, l.pp, l.vpp, listed, most);
                        checked++;
                        explicit += mesh_pp_explicit(&m, &l);
                        uneven += n == 4;
                    }
    assert_true(checked > 8000 && explicit > 3000 && uneven > 1500);
}

/* Llama 4 Maverick's MoE on every other layer, on 4 stages: 12 layers a
 * stage, 6 of them MoE; interleaved in chunks of 2 (vpp 6), one of each;
 * on 16 stages of 3, stage 0 (layers 0-2) holds one and stage 1 (3-5) two,
 * which the heavy stages list. */
static void memory__maverick_stages_by_hand(void **state)
{
    (void)state;
    mesh_model_t m = test_preset("llama4-maverick");
    mesh_layout_t l = test_layout("tp=1,pp=4,dp=2,cp=1,ep=2,etp=1,zero=1,vpp=1,mb=1,"
                                  "recompute=none,sp=off");
    int dense, moe, stages[4];
    mesh_stage_mix(&m, &l, 2, &dense, &moe);
    assert_true(dense == 6 && moe == 6);
    l.vpp = 6;
    mesh_stage_mix(&m, &l, 0, &dense, &moe);
    assert_true(dense == 6 && moe == 6);
    l.pp = 16;
    l.vpp = 1;
    mesh_stage_mix(&m, &l, 0, &dense, &moe);
    assert_true(dense == 2 && moe == 1);
    mesh_stage_mix(&m, &l, 1, &dense, &moe);
    assert_true(dense == 1 && moe == 2);
    assert_int_equal(mesh_heavy_stages_of(&m, &l, stages), 3);
    assert_true(stages[0] == 0 && stages[1] == 1 && stages[2] == 15);
    /* the stage of two MoE layers weighs more than the one of one */
    assert_true(mesh_stage_params(&m, &l, 1) > mesh_stage_params(&m, &l, 2));
}

static void memory__nemotron_style_by_hand(void **state)
{
    mesh_model_t m = test_preset("nemotron4-15b");
    assert_int_equal((uint64_t)mesh_layer_params_per_gpu(&m, 4), 97542144ULL);
    m = test_spec(
        "arch: {layers: 2, hidden: 64, heads: 4, ffn: 128, vocab: 100, mlp: relu2, "
        "tied_embeddings: true, moe: {experts: 4, top_k: 2, ffn: 32, shared_experts: 1}}\n"
        "train: {seq_len: 32}\n");
    mesh_layout_t l = test_layout("tp=2,pp=1,dp=4,cp=1,ep=2,etp=1,zero=1,vpp=1,mb=1,"
                                  "recompute=none,sp=on");
    assert_int_equal((uint64_t)mesh_moe_layer_params_per_gpu(&m, &l), 18944);
    assert_int_equal((uint64_t)mesh_stage_params(&m, &l, 0), 46208);
    /* without biases its experts split over expert TP as Llama's do, and
     * the fused bias-dropout stays on */
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 4);
    mesh_error_t err;
    l = test_layout("tp=2,pp=1,dp=2,cp=1,ep=2,etp=2,zero=1,vpp=1,mb=1,recompute=none,sp=on");
    if (mesh_layout_check(&m, &a, &l, &err) < 0)
        fail_msg("etp 2 refused: %s", err.msg);
    mesh_plan_t *p = test_plan(&m, &a, "auto");
    char *args = test_env_value(p, "MESH_MEGATRON_ARGS");
    assert_null(strstr(args, "--no-bias-dropout-fusion"));
    free(args);
    mesh_plan_destroy(p);
    (void)state;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(memory__stage_params_by_hand),
        cmocka_unit_test(memory__a_given_count_scales_every_stage),
        cmocka_unit_test(memory__qk_norms_whole_on_every_tp_rank),
        cmocka_unit_test(memory__gelu_moe_biases_by_hand),
        cmocka_unit_test(memory__nemotron_style_by_hand),
        cmocka_unit_test(memory__mtp_stage_embeds_its_own),
        cmocka_unit_test(memory__stage_mix_and_heavy_stages),
        cmocka_unit_test(memory__heavy_stages_as_the_walk_finds_them),
        cmocka_unit_test(memory__moe_every_few_layers_as_a_walk_counts),
        cmocka_unit_test(memory__maverick_stages_by_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
