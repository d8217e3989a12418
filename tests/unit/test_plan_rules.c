/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The planner's rules: the fit check (need <= usable), TP's and CP's divisibility, the layer
 * split and the layout check, and the exact reasons and advice that name them.
 */
#include <math.h>

#include "internal.h" /* MoE internals */
#include "planner.h"  /* the search's memo */
#include "moeutil.h"
#include "planutil.h"
#include "testutil.h"

/* ---- the fit check: need <= usable ---- */

/* A layout that needs exactly the usable memory fits; one byte less usable
 * and nothing does.  Seed 7B under ZeRO-3 over 4 GPUs needs 16 * 7e9 / 4 =
 * 28e9 bytes of model states plus 1 GiB of context and 0.25 GiB for its one
 * communicator (the DP group): 29,342,177,280 bytes.  With a reserve of
 * one half, a GPU of twice that leaves exactly that usable (both are exact
 * in binary).  ZeRO-2 (2 + 14/4 bytes a parameter, 38.5e9) does not fit. */
static void fit__need_equal_to_usable__fits(void **state)
{
    (void)state;
    mesh_model_t m = seed_7b();
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    pol.assume.reserve = 0.5;
    mesh_error_t err;
    mesh_alloc_t a;
    const double need = 29342177280.0;
    assert_int_equal(mesh_policy_alloc(&pol.assume, NULL, 2 * need, 0, 1, 4, &a, &err), 0);
    mesh_plan_t *p = mesh_plan_create(&m, &a, NULL, &pol.assume, &err);
    assert_non_null(p);
    const mesh_candidate_t *c = mesh_plan_best(p);
    assert_bytes(c->memory.capacity, 29342177280ULL);
    assert_bytes(c->memory.total, 29342177280ULL);
    assert_true(c->memory.total == c->memory.capacity);
    assert_true(mesh_plan_fits(p));
    assert_true(c->fits);
    assert_int_equal(c->layout.zero, 3);
    assert_int_equal(c->layout.dp, 4);
    assert_int_equal(mesh_plan_any_fits(&m, &a, NULL, &pol.assume), 1);
    mesh_plan_destroy(p);
    /* one byte short */
    assert_int_equal(mesh_policy_alloc(&pol.assume, NULL, 2 * need - 2, 0, 1, 4, &a, &err), 0);
    p = mesh_plan_create(&m, &a, NULL, &pol.assume, &err);
    assert_non_null(p);
    assert_false(mesh_plan_fits(p));
    assert_bytes(mesh_plan_best(p)->memory.total, 29342177280ULL);
    assert_bytes(mesh_plan_best(p)->memory.capacity, 29342177279ULL);
    assert_int_equal(mesh_plan_any_fits(&m, &a, NULL, &pol.assume), 0);
    mesh_plan_destroy(p);
}

/* The same boundary for a model with an arch (activations, fragmentation
 * slack): the GPU is given exactly what the layout's breakdown says it
 * needs, with no reserve, so usable == need. */
static void fit__arch_model_at_exactly_its_need__fits(void **state)
{
    (void)state;
    mesh_model_t m = test_spec("name: small\narch: {layers: 8, hidden: 2048, heads: 16, "
                               "kv_heads: 4, ffn: 5632, vocab: 32000, mlp: swiglu}\n"
                               "train: {seq_len: 4096, global_batch: 16}\n");
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 4);
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    pol.assume.reserve = 0;
    mesh_error_t err;
    mesh_layout_t pins =
        test_mesh("tp=2,pp=2,dp=1,cp=1,zero=0,vpp=1,mb=2,recompute=none,sp=on,tp_overlap=on");
    mesh_plan_t *p = mesh_plan_create(&m, &a, &pins, &pol.assume, &err);
    assert_non_null(p);
    double need = mesh_plan_best(p)->memory.total;
    assert_true(need > 1e9 && need < a.gpu.memory);
    mesh_plan_destroy(p);
    a.gpu.memory = need;
    p = mesh_plan_create(&m, &a, &pins, &pol.assume, &err);
    assert_non_null(p);
    assert_true(mesh_plan_best(p)->memory.capacity == need);
    assert_true(mesh_plan_best(p)->memory.total == need);
    assert_true(mesh_plan_fits(p));
    assert_int_equal(mesh_plan_any_fits(&m, &a, &pins, &pol.assume), 1);
    mesh_plan_destroy(p);
    a.gpu.memory = need - 1; /* a byte short */
    p = mesh_plan_create(&m, &a, &pins, &pol.assume, &err);
    assert_non_null(p);
    assert_false(mesh_plan_fits(p));
    assert_int_equal(mesh_plan_any_fits(&m, &a, &pins, &pol.assume), 0);
    mesh_plan_destroy(p);
    /* with TP's overlap left to the planner, it is turned off: its
     * Userbuffers are more than the byte */
    pins.tp_overlap_off = MESH_FREE;
    p = mesh_plan_create(&m, &a, &pins, &pol.assume, &err);
    assert_non_null(p);
    assert_true(mesh_plan_fits(p));
    assert_int_equal(mesh_plan_best(p)->layout.tp_overlap_off, 1);
    assert_int_equal(mesh_plan_any_fits(&m, &a, &pins, &pol.assume), 1);
    mesh_plan_destroy(p);
}

/* ---- tensor-parallel divisibility: heads, kv_heads and ffn ---- */

static void tp__must_divide_ffn_and_heads_not_hidden(void **state)
{
    (void)state;
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    mesh_error_t err;
    /* hidden 1024 divides by 4, ffn 2730 = 2 * 1365 only by 2 */
    mesh_model_t m = test_spec("name: ffn-odd\narch: {layers: 4, hidden: 1024, heads: 16, "
                               "kv_heads: 16, ffn: 2730, vocab: 32000, mlp: swiglu}\n"
                               "train: {seq_len: 4096, global_batch: 8}\n");
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 4);
    mesh_layout_t l = test_layout("tp=4,pp=1,dp=1,cp=1,zero=0,vpp=1,mb=1,recompute=full,sp=on");
    assert_int_equal(mesh_layout_check(&m, &a, &l, &err), -1);
    assert_string_equal(err.msg, "tp 4 must divide ffn 2730");
    l = test_layout("tp=2,pp=1,dp=2,cp=1,zero=0,vpp=1,mb=1,recompute=full,sp=on");
    assert_int_equal(mesh_layout_check(&m, &a, &l, &err), 0);
    const char *refused[] = {"tp=4", "pp=1,cp=1,dp=1"}; /* pinned, and the only one left */
    for (size_t i = 0; i < sizeof(refused) / sizeof(*refused); i++) {
        mesh_layout_t pins = test_mesh(refused[i]);
        assert_null(mesh_plan_create(&m, &a, &pins, &pol.assume, &err));
        assert_string_equal(err.msg,
                            "no valid layout for ffn-odd on 1 x 4 GPUs: tp 4 must divide ffn 2730");
    }
    mesh_plan_t *p = test_plan(&m, &a, "pp=1,cp=1,dp=2");
    assert_int_equal(mesh_plan_best(p)->layout.tp, 2);
    mesh_plan_destroy(p);

    /* heads 12 do not divide by 8 though hidden 768 and ffn 3072 do */
    m = test_spec("name: heads-12\narch: {layers: 4, hidden: 768, heads: 12, kv_heads: 12, "
                  "ffn: 3072, vocab: 32000}\ntrain: {seq_len: 4096, global_batch: 8}\n");
    a = test_alloc("H100-SXM", 1, 8);
    l = test_layout("tp=8,pp=1,dp=1,cp=1,zero=0,vpp=1,mb=1,recompute=full,sp=on");
    assert_int_equal(mesh_layout_check(&m, &a, &l, &err), -1);
    assert_string_equal(err.msg,
                        "tp 8 must divide heads 12, and divide kv_heads 12 or be a multiple of it");
    l = test_layout("tp=4,pp=1,dp=2,cp=1,zero=0,vpp=1,mb=1,recompute=full,sp=on");
    assert_int_equal(mesh_layout_check(&m, &a, &l, &err), 0);
    p = test_plan(&m, &a, "pp=1,cp=1,dp=2");
    assert_int_equal(mesh_plan_best(p)->layout.tp, 4);
    mesh_plan_destroy(p);
    /* tp 4 over kv_heads 2: Megatron-LM takes num_query_groups as a divisor
     * of TP too, each KV head on two ranks (transformer_config.py L1461-1466) */
    m = test_spec("name: gqa-2\narch: {layers: 4, hidden: 1024, heads: 16, kv_heads: 2, "
                  "ffn: 4096, vocab: 32000}\ntrain: {seq_len: 4096, global_batch: 8}\n");
    l = test_layout("tp=4,pp=1,dp=2,cp=1,zero=0,vpp=1,mb=1,recompute=full,sp=on");
    assert_int_equal(mesh_layout_check(&m, &a, &l, &err), 0);
    /* kv_heads 3 neither divide by 2 nor divide it */
    m = test_spec("name: gqa-3\narch: {layers: 4, hidden: 768, heads: 12, kv_heads: 3, "
                  "ffn: 3072, vocab: 32000}\ntrain: {seq_len: 4096, global_batch: 8}\n");
    l = test_layout("tp=2,pp=1,dp=4,cp=1,zero=0,vpp=1,mb=1,recompute=full,sp=on");
    assert_int_equal(mesh_layout_check(&m, &a, &l, &err), -1);
    assert_string_equal(err.msg,
                        "tp 2 must divide heads 12, and divide kv_heads 3 or be a multiple of it");
}

/* ---- context parallelism: planned from 8,192 tokens ---- */

static mesh_model_t seq_model(int seq)
{
    char yaml[256];
    snprintf(yaml, sizeof(yaml),
             "name: seq-%d\narch: {layers: 4, hidden: 1024, heads: 16, kv_heads: 16, ffn: 4096, "
             "vocab: 32000}\ntrain: {seq_len: %d, global_batch: 8}\n",
             seq, seq);
    return test_spec(yaml);
}

/* With tp, pp and dp pinned to 1, the rest of the GPUs can only be CP:
 * the planner plans CP for sequences of 8,192 tokens or more, as many
 * ranks as there are 4,096-token chunks, in powers of two. */
static void cp__planned_from_8192_tokens(void **state)
{
    (void)state;
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    mesh_error_t err;
    mesh_layout_t pins = test_mesh("tp=1,pp=1,dp=1");
    static const struct {
        int seq, gpus, cp; /* cp 0: none planned */
    } cases[] = {
        {8192, 2, 2},  /* the threshold itself */
        {8188, 2, 0},  /* 4 * 2047: splittable in two, but short */
        {16384, 4, 4}, /* four chunks */
        {12288, 4, 0}, /* three chunks: cp 4 is more */
        {12288, 3, 0}, /* and cp 3 is no power of two */
        {32768, 2, 2}, /* no more ranks than there are */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        mesh_model_t m = seq_model(cases[i].seq);
        mesh_alloc_t a = test_alloc("H100-SXM", 1, cases[i].gpus);
        mesh_plan_t *p = mesh_plan_create(&m, &a, &pins, &pol.assume, &err);
        if (cases[i].cp == 0) {
            if (p)
                fail_msg("seq %d on %d GPUs: cp %d was planned", cases[i].seq, cases[i].gpus,
                         mesh_plan_best(p)->layout.cp);
            char want[200];
            snprintf(want, sizeof(want),
                     "no valid layout for seq-%d on 1 x %d GPUs: tp*cp*pp*dp = 1*1*1*1 = 1, but "
                     "the allocation has %d GPUs",
                     cases[i].seq, cases[i].gpus, cases[i].gpus);
            assert_string_equal(err.msg, want);
            continue;
        }
        if (!p)
            fail_msg("seq %d on %d GPUs: %s", cases[i].seq, cases[i].gpus, err.msg);
        assert_int_equal(mesh_plan_best(p)->layout.cp, cases[i].cp);
        assert_int_equal(mesh_layout_world(&mesh_plan_best(p)->layout), cases[i].gpus);
        mesh_plan_destroy(p);
    }
    /* below the threshold CP is not planned, but a pinned one is taken */
    mesh_model_t m = seq_model(8188);
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 2);
    mesh_plan_t *p = test_plan(&m, &a, "tp=1,pp=1,dp=1,cp=2");
    assert_int_equal(mesh_plan_best(p)->layout.cp, 2);
    mesh_plan_destroy(p);
}

/* The optimizer is sharded over the data- and context-parallel ranks
 * together (Megatron's dp-cp group): with CP 2 and no DP, ZeRO still
 * halves the optimizer states, and the planner must try it.  The GPU is
 * sized between the least any ZeRO-0 layout needs and the least a ZeRO-1
 * one does (micro-batch 1, the best recomputation), from their breakdowns. */
static void zero__planned_over_the_cp_group(void **state)
{
    (void)state;
    mesh_model_t m = seq_model(8192);
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 2);
    const char *rcs[] = {"none", "selective", "full"};
    double least[2] = {0, 0};
    for (int z = 0; z < 2; z++)
        for (int r = 0; r < 3; r++) {
            char mesh[128];
            snprintf(mesh, sizeof(mesh), "tp=1,pp=1,dp=1,cp=2,zero=%d,mb=1,recompute=%s", z,
                     rcs[r]);
            double t = total_with(&m, &a, mesh);
            least[z] = r == 0 || t < least[z] ? t : least[z];
        }
    assert_true(least[1] < least[0]);
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    a.gpu.memory = (least[0] + least[1]) / 2 / (1 - pol.assume.reserve);
    mesh_plan_t *p = test_plan(&m, &a, "tp=1,pp=1,dp=1");
    assert_true(mesh_plan_fits(p));
    assert_int_equal(mesh_plan_best(p)->layout.cp, 2);
    assert_true(mesh_plan_best(p)->layout.zero >= 1);
    mesh_plan_destroy(p);
}

/* ---- the layer split and the layout rules ---- */

/* ceil(layers/pp) a stage; the end stages give up the surplus, the first
 * (which also holds the most micro-batches in flight) the larger half. */
static void layer_split__every_stage_exact(void **state)
{
    (void)state;
    static const struct {
        int layers, pp, split[16];
    } cases[] = {
        {80, 8, {10, 10, 10, 10, 10, 10, 10, 10}},
        {126, 16, {7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7}},
        {125, 16, {6, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7}}, /* deficit 3 */
        {127, 16, {7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8}}, /* deficit 1 */
        {11, 4, {2, 3, 3, 3}},
        {10, 4, {2, 3, 3, 2}},
        {9, 4, {1, 3, 3, 2}},
        {13, 4, {2, 4, 4, 3}},
        {7, 4, {1, 2, 2, 2}},
        {5, 2, {2, 3}},
        {7, 3, {2, 3, 2}},
        {8, 3, {2, 3, 3}},
        {3, 1, {3}},
        {1, 1, {1}},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        int layers = cases[i].layers, pp = cases[i].pp, out[16], sum = 0;
        memset(out, -1, sizeof(out));
        mesh_layer_split(layers, pp, out);
        for (int s = 0; s < pp; s++) {
            if (out[s] != cases[i].split[s])
                fail_msg("%d layers over %d stages: stage %d holds %d, not %d", layers, pp, s,
                         out[s], cases[i].split[s]);
            assert_int_equal(mesh_stage_layers(layers, pp, s), cases[i].split[s]);
            sum += out[s];
        }
        assert_int_equal(sum, layers);
        if (pp < 16)
            assert_int_equal(out[pp], -1); /* nothing written past pp */
    }
}

/* Interleaving Megatron-LM cannot split evenly, as an explicit layout
 * (--pipeline-model-parallel-layout): the embedding, the layers, the MTP
 * layers and the loss as units, spread evenly, the surplus to the first
 * chunks after chunk 0.  DeepSeek-V3's 61 layers and 1 MTP layer over pp 8
 * x vpp 4: 64 units, 2 a chunk, "Et|tt|...|tt|mL" as NVIDIA's recipe
 * writes it ("Et|(tt|)*30mL"), stages 7,8,...,8,6.  16 layers over pp 4 x
 * vpp 3: 18 units, 1 a chunk and 1 more for chunks 1-6: 0,2,2,2,2,2,2,1,1,1,
 * 1,0, stages 3,5,5,3.  9 layers and 1 MTP over 12 chunks: the last chunk
 * has no room for the MTP layer and the loss. */
static void split__explicit_layout__megatron_units(void **state)
{
    (void)state;
    mesh_model_t v3 = test_preset("deepseek-v3");
    mesh_layout_t l = test_layout("tp=2,pp=8,dp=64,cp=1,ep=64,etp=1,zero=1,vpp=4,mb=1,"
                                  "recompute=full,sp=on");
    assert_true(mesh_pp_explicit(&v3, &l));
    for (int j = 0; j < 32; j++)
        assert_int_equal(mesh_chunk_layers(&v3, &l, j), j == 0 ? 1 : j == 31 ? 0 : 2);
    static const int v3_stages[] = {7, 8, 8, 8, 8, 8, 8, 6};
    for (int s = 0; s < 8; s++)
        assert_int_equal(mesh_pp_stage_layers(&v3, &l, s), v3_stages[s]);
    mesh_model_t m = test_spec("arch: {layers: 16, hidden: 1024, heads: 16, ffn: 4096, "
                               "vocab: 32000}\ntrain: {global_batch: 64}\n");
    l = test_layout("tp=2,pp=4,dp=1,cp=1,zero=0,vpp=3,mb=1,recompute=none,sp=on");
    static const int chunks[] = {0, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 0}, stages[] = {3, 5, 5, 3};
    for (int j = 0; j < 12; j++)
        assert_int_equal(mesh_chunk_layers(&m, &l, j), chunks[j]);
    for (int s = 0; s < 4; s++)
        assert_int_equal(mesh_pp_stage_layers(&m, &l, s), stages[s]);
    assert_int_equal(mesh_chunk_layers(&m, &l, 12), -1);
    /* an even split stays Megatron-LM's own: 24 layers over pp 4 x vpp 2 */
    m.layers = 24;
    l.vpp = 2;
    assert_false(mesh_pp_explicit(&m, &l));
    assert_int_equal(mesh_chunk_layers(&m, &l, 0), 3);
    assert_int_equal(mesh_pp_stage_layers(&m, &l, 0), 6);
    mesh_model_t mtp = test_spec("arch: {layers: 9, hidden: 256, heads: 4, vocab: 1000, "
                                 "mtp_layers: 1}\ntrain: {global_batch: 64}\n");
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    l = test_layout("tp=2,pp=4,dp=1,cp=1,zero=0,vpp=3,mb=1,recompute=none,sp=on");
    mesh_error_t err;
    assert_int_equal(mesh_layout_check(&mtp, &a, &l, &err), -1);
    assert_string_equal(err.msg, "vpp 3: layers 9 (+1 for the embedding, +1 for the loss, +1 MTP) "
                                 "do not fill the pp*vpp = 12 chunks (use fewer chunks)");
}

/* A MoE model with dense first layers, a dense model and one with MoE
 * every other layer, under a pinned interleaving: the search prices the
 * plan's layout with the parameters of that interleaving, as
 * mesh_memory_estimate prices it alone (the dense and MoE layers follow
 * the chunks, and an explicit layout spreads the layers unevenly; the
 * search once kept those of vpp 1 for a pinned vpp: 27.84 GB against
 * 28.35 at pp=8,vpp=3 for the first, and for the second, 80 layers at
 * pp=8,vpp=3, 42.49 GB against 42.82; for the third it would be 25.40 GB against
 * 25.15), even and explicit. */
static void memory__pinned_interleaving_priced_as_estimated(void **state)
{
    (void)state;
    static const char *pins[] = {"pp=8,vpp=3", "pp=4,vpp=2", "pp=4", "pp=4,vpp=3"};
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    mesh_model_t moe = test_spec("arch: {layers: 30, hidden: 1024, heads: 16, ffn: 4096, "
                                 "vocab: 32000, moe: {experts: 8, top_k: 2, ffn: 1024, "
                                 "dense_layers: 9}}\ntrain: {global_batch: 64}\n");
    mesh_model_t dense = test_spec("arch: {layers: 80, hidden: 1024, heads: 16, ffn: 4096, "
                                   "vocab: 32000}\ntrain: {global_batch: 64}\n");
    /* MoE on every other layer: at pp=8,vpp=3 each chunk one layer, the
     * odd stages holding 3 MoE layers, where at vpp 1 a stage holds 2 */
    mesh_model_t odd = test_spec("arch: {layers: 24, hidden: 1024, heads: 16, ffn: 4096, "
                                 "vocab: 32000, moe: {experts: 8, top_k: 2, ffn: 1024, "
                                 "every: 2}}\ntrain: {global_batch: 64}\n");
    for (size_t i = 0; i < 3 * sizeof(pins) / sizeof(*pins); i++) {
        mesh_model_t m = i % 3 == 2 ? odd : i % 3 ? dense : moe;
        mesh_plan_t *p = test_plan(&m, &a, pins[i / 3]);
        const mesh_candidate_t *c = mesh_plan_best(p);
        mesh_memory_t alone;
        mesh_memory_estimate(&m, &c->layout, &a, &pol.assume, &alone);
        if (c->memory.total != alone.total)
            fail_msg("%s: the plan prices %.0f bytes, its layout alone %.0f", pins[i / 3],
                     c->memory.total, alone.total);
        mesh_plan_destroy(p);
    }
}

/* Walking stage s's chunks: the layers they hold, and of those how many
 * are among the model's first n (the chunks hold the layers in order). */
static void walk_stage(const mesh_model_t *m, const mesh_layout_t *l, int s, int n, int *held,
                       int *first)
{
    *held = *first = 0;
    for (int j = 0, start = 0; j < l->pp * l->vpp; j++) {
        int len = mesh_chunk_layers(m, l, j);
        if (j % l->pp == s) {
            *held += len;
            *first += n - start < 0 ? 0 : n - start > len ? len : n - start;
        }
        start += len;
    }
}

/* A stage of an interleaved layout, even or explicit, holds what its
 * chunks hold, and of the first n layers (a MoE model's dense ones) what
 * its chunks hold of them, whatever the layers, MTP layers, pp and vpp:
 * mesh_pp_stage_layers and mesh_stage_first_layers count them at once,
 * not chunk by chunk, and mesh_pp_fullest_layers finds the fullest stage
 * without asking them all; every split the check accepts. */
static void split__interleaved_stages_are_their_chunks(void **state)
{
    (void)state;
    mesh_model_t m = test_spec("arch: {layers: 9, hidden: 256, heads: 4, vocab: 1000}\n"
                               "train: {global_batch: 64}\n");
    mesh_layout_t l = test_layout("tp=1,pp=2,dp=1,cp=1,zero=0,vpp=2,mb=1,recompute=none");
    int checked[2] = {0, 0};
    for (m.mtp_layers = 0; m.mtp_layers <= 2; m.mtp_layers++)
        for (m.layers = 1; m.layers <= 60; m.layers++)
            for (l.pp = 2; l.pp <= 8; l.pp++)
                for (l.vpp = 2; l.vpp <= 8; l.vpp++) {
                    if (mesh_pp_explicit(&m, &l) &&
                        (mesh_chunk_layers(&m, &l, 0) < 0 ||
                         mesh_chunk_layers(&m, &l, l.pp * l.vpp - 1) < 0))
                        continue;
                    checked[mesh_pp_explicit(&m, &l)]++;
                    /* the even split's end chunks have room too: the
                     * check asks only that of either split */
                    if (!mesh_pp_explicit(&m, &l) &&
                        (mesh_chunk_layers(&m, &l, 0) < 0 ||
                         mesh_chunk_layers(&m, &l, l.pp * l.vpp - 1) < 0))
                        fail_msg("%d layers + %d MTP, pp %d, vpp %d: an even split's end chunk "
                                 "without room",
                                 m.layers, m.mtp_layers, l.pp, l.vpp);
                    int most = 0;
                    for (int s = 0; s < l.pp; s++)
                        most = mesh_pp_stage_layers(&m, &l, s) > most
                                   ? mesh_pp_stage_layers(&m, &l, s)
                                   : most;
                    if (mesh_pp_fullest_layers(&m, &l) != most)
                        fail_msg("%d layers + %d MTP, pp %d, vpp %d: the fullest stage holds %d "
                                 "layers, not %d",
                                 m.layers, m.mtp_layers, l.pp, l.vpp, most,
                                 mesh_pp_fullest_layers(&m, &l));
                    for (int s = 0; s < l.pp; s++)
                        for (int n = 0; n <= m.layers + 1; n++) {
                            int held, first;
                            walk_stage(&m, &l, s, n, &held, &first);
                            if (mesh_pp_stage_layers(&m, &l, s) != held ||
                                mesh_stage_first_layers(&m, &l, s, n) != first)
                                fail_msg("%d layers + %d MTP, pp %d, vpp %d%s: stage %d holds %d "
                                         "layers, %d of the first %d; its chunks %d, %d",
                                         m.layers, m.mtp_layers, l.pp, l.vpp,
                                         mesh_pp_explicit(&m, &l) ? " (explicit)" : "", s,
                                         mesh_pp_stage_layers(&m, &l, s),
                                         mesh_stage_first_layers(&m, &l, s, n), n, held, first);
                        }
                }
    assert_true(checked[0] > 100 && checked[1] > 1000);
    /* and as large as a hostile spec pins them (the bench's cases) */
    static const int big[][4] = {{100000, 2, 24999, 0}, {65536, 7, 1000, 2}, {99999, 64, 97, 1}};
    static const int firsts[] = {0, 1, 3980, 40000, 65535, 99999};
    for (size_t i = 0; i < sizeof(big) / sizeof(*big); i++) {
        m.layers = big[i][0];
        m.mtp_layers = big[i][3];
        l.pp = big[i][1];
        l.vpp = big[i][2];
        assert_true(mesh_pp_explicit(&m, &l) && mesh_chunk_layers(&m, &l, 0) >= 0);
        for (int s = 0; s < l.pp; s++)
            for (size_t f = 0; f < sizeof(firsts) / sizeof(*firsts); f++) {
                int held, first;
                walk_stage(&m, &l, s, firsts[f], &held, &first);
                assert_int_equal(mesh_pp_stage_layers(&m, &l, s), held);
                assert_int_equal(mesh_stage_first_layers(&m, &l, s, firsts[f]), first);
            }
    }
    /* pp*vpp past 2^31: no room, refused by the explicit layout's rule
     * (the stages split the layers), counted in 64 bits (the sanitizer
     * build fails on an overflow) */
    m.layers = 100000;
    m.mtp_layers = 0;
    l = test_layout("tp=1,pp=50000,dp=1,cp=1,zero=0,vpp=65536,mb=1,recompute=none,sp=off");
    assert_int_equal(mesh_chunk_layers(&m, &l, 0), -1);
    mesh_alloc_t a = test_alloc("H100-SXM", 6250, 8);
    mesh_error_t err;
    assert_int_equal(mesh_layout_check(&m, &a, &l, &err), -1);
    assert_string_equal(err.msg, "vpp 65536: layers 100000 (+1 for the embedding, +1 for the loss, "
                                 "+0 MTP) do not fill the pp*vpp = 3276800000 chunks (use fewer "
                                 "chunks)");
}

/* Interleaving: layers per chunk, the end stages counting the embedding
 * and the loss as a layer where they hold one fewer. */
static void vpp_chunk_layers__exact(void **state)
{
    (void)state;
    static const int cases[][4] = {
        /* layers, pp, vpp, layers per chunk (0: cannot interleave) */
        {12, 4, 3, 1},   {11, 4, 3, 1},   {10, 4, 3, 1}, {9, 4, 3, 0},  /* deficit 3 */
        {24, 4, 2, 3},   {23, 4, 2, 3},   {22, 4, 2, 3}, {12, 4, 2, 0}, /* 3 a stage */
        {12, 2, 2, 3},   {48, 2, 12, 2},  {12, 1, 2, 0},                /* pp 2, pp 1 */
        {12, 4, 1, 0},                                                  /* no interleaving */
        {126, 16, 4, 2}, {128, 16, 8, 1}, {80, 8, 5, 2},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++)
        if (mesh_vpp_chunk_layers(cases[i][0], cases[i][1], cases[i][2]) != cases[i][3])
            fail_msg("%d layers, pp %d, vpp %d: %d layers a chunk, not %d", cases[i][0],
                     cases[i][1], cases[i][2],
                     mesh_vpp_chunk_layers(cases[i][0], cases[i][1], cases[i][2]), cases[i][3]);
}

static void layout__world_batches_bubble(void **state)
{
    (void)state;
    mesh_layout_t l = test_layout("tp=2,pp=3,dp=5,cp=7,zero=1,vpp=1,mb=4,recompute=none,sp=on");
    assert_int_equal(mesh_layout_world(&l), 210);
    assert_int_equal(mesh_layout_micro_batches(&l, 1000), 50);
    assert_int_equal(mesh_layout_micro_batches(&l, 60), 3);
    l.micro_batch = 0;
    assert_int_equal(mesh_layout_micro_batches(&l, 60), 0);
    assert_true(mesh_pipeline_bubble(4, 1, 8) == 3.0 / 8);
    assert_true(mesh_pipeline_bubble(4, 2, 8) == 3.0 / 16);
    assert_true(mesh_pipeline_bubble(16, 4, 32) == 15.0 / 128);
    assert_true(mesh_pipeline_bubble(1, 1, 8) == 0);
    assert_true(mesh_pipeline_bubble(4, 1, 0) == 0);
}

/* Each rule of mesh_layout_check, with the message that names it. */
static void layout_check__each_rule__exact_message(void **state)
{
    (void)state;
    mesh_model_t m = test_spec("name: rules\narch: {layers: 16, hidden: 1024, heads: 16, "
                               "kv_heads: 4, ffn: 4096, vocab: 32000}\n"
                               "train: {seq_len: 4096, global_batch: 64}\n");
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    static const struct {
        const char *mesh, *msg; /* msg NULL: valid */
    } cases[] = {
        {"tp=2,pp=2,dp=2,cp=1,zero=1,vpp=1,mb=1,recompute=none,sp=on", NULL},
        {"tp=2,pp=4,dp=1,cp=1,zero=0,vpp=2,mb=1,recompute=full,sp=on", NULL},
        {"tp=16,pp=1,dp=1,cp=1,zero=0,vpp=1,mb=1,recompute=none,sp=on",
         "tp 16 must divide the NVLink island of 8 GPUs (TP exchanges activations in every layer "
         "and needs NVLink)"},
        {"tp=3,pp=1,dp=1,cp=1,zero=0,vpp=1,mb=1,recompute=none,sp=on",
         "tp 3 must divide the NVLink island of 8 GPUs (TP exchanges activations in every layer "
         "and needs NVLink)"},
        /* TP wider than the 4 KV heads: each on two ranks */
        {"tp=8,pp=1,dp=1,cp=1,zero=0,vpp=1,mb=1,recompute=none,sp=on", NULL},
        {"tp=1,pp=1,dp=1,cp=3,zero=0,vpp=1,mb=1,recompute=none,sp=off",
         "cp 3 needs seq_len 4096 divisible by 2*cp"},
        {"tp=1,pp=32,dp=1,cp=1,zero=0,vpp=1,mb=1,recompute=none,sp=off",
         "pp 32 is more than the 16 layers"},
        {"tp=2,pp=2,dp=1,cp=1,zero=0,vpp=1,mb=1,recompute=none,sp=on",
         "tp*cp*pp*dp = 2*1*2*1 = 4, but the allocation has 8 GPUs"},
        {"tp=1,pp=1,dp=8,cp=1,zero=0,vpp=1,mb=1,recompute=none,sp=on",
         "sequence parallelism needs tp > 1"},
        {"tp=1,pp=1,dp=8,cp=1,zero=0,vpp=1,mb=3,recompute=none,sp=off",
         "global_batch 64 is not a multiple of micro_batch 3 * dp 8"},
        {"tp=2,pp=2,dp=2,cp=1,zero=1,vpp=1,mb=1,recompute=full:9,sp=on",
         "recompute full:9: a stage of pp 2 holds at most 8 layers; use full:8 or fewer (full "
         "recomputes them all)"},
        /* a stage's every layer, by count */
        {"tp=2,pp=2,dp=2,cp=1,zero=1,vpp=1,mb=1,recompute=full:8,sp=on", NULL},
        {"tp=2,pp=4,dp=1,cp=1,zero=0,vpp=2,mb=1,recompute=full:2,sp=on",
         "recompute full:2: partial recomputation is priced per stage, without interleaving (vpp "
         "1)"},
        {"tp=2,pp=2,dp=2,cp=1,zero=0,vpp=1,mb=1,recompute=none,sp=on,offload=optimizer",
         "offload=optimizer needs zero 1 or more (Megatron-LM offloads the distributed "
         "optimizer's shard)"},
        {"tp=2,pp=2,dp=2,cp=1,zero=1,vpp=1,mb=1,recompute=none,sp=on,offload=optimizer,"
         "moments=bf16",
         "offload=optimizer keeps fp32 moments (the CPU optimizer is torch's AdamW): use "
         "moments=fp32"},
        {"tp=2,pp=2,dp=2,cp=1,zero=0,vpp=1,mb=1,recompute=none,sp=on,moments=fp16",
         "moments=fp16 needs zero 1 or more (Megatron-LM's precision-aware optimizer needs the "
         "distributed one)"},
        {"tp=2,pp=1,dp=4,cp=1,zero=1,vpp=2,mb=1,recompute=none,sp=on",
         "vpp 2 (interleaved schedule) needs pp > 1"},
        /* Megatron-LM interleaves two stages with its default p2p overlap */
        {"tp=2,pp=2,dp=2,cp=1,zero=1,vpp=2,mb=1,recompute=none,sp=on", NULL},
        /* 18 units over 12 chunks: Megatron-LM's explicit layout */
        {"tp=2,pp=4,dp=1,cp=1,zero=0,vpp=3,mb=1,recompute=none,sp=on", NULL},
        {"tp=2,pp=4,dp=1,cp=1,zero=0,vpp=8,mb=1,recompute=none,sp=on",
         "vpp 8: layers 16 (+1 for the embedding, +1 for the loss, +0 MTP) do not fill the "
         "pp*vpp = 32 chunks (use fewer chunks)"},
        {"tp=2,pp=4,dp=1,cp=1,zero=0,vpp=2,mb=32,recompute=none,sp=on",
         "vpp 2: the 2 micro-batches must be a multiple of pp 4"},
    };
    mesh_error_t err;
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        mesh_layout_t l = test_layout(cases[i].mesh);
        err.msg[0] = '\0';
        int rc = mesh_layout_check(&m, &a, &l, &err);
        if (!cases[i].msg && rc != 0)
            fail_msg("%s refused: %s", cases[i].mesh, err.msg);
        if (cases[i].msg && (rc != -1 || strcmp(err.msg, cases[i].msg) != 0))
            fail_msg("%s: %d '%s', expected '%s'", cases[i].mesh, rc, err.msg, cases[i].msg);
    }
    /* what --mesh cannot even say */
    mesh_layout_t base = test_layout("tp=2,pp=2,dp=2,cp=1,zero=1,vpp=1,mb=1,recompute=none,sp=on");
    mesh_layout_t l = base;
    l.vpp = 0;
    assert_int_equal(mesh_layout_check(&m, &a, &l, &err), -1);
    assert_string_equal(err.msg, "every size must be at least 1");
    l = base;
    l.zero = 4;
    assert_int_equal(mesh_layout_check(&m, &a, &l, &err), -1);
    assert_string_equal(err.msg, "zero 4: the stages are 0, 1, 2 and 3");
    l = base;
    l.recompute = MESH_RECOMPUTE_SELECTIVE;
    l.recompute_layers = 2;
    assert_int_equal(mesh_layout_check(&m, &a, &l, &err), -1);
    assert_string_equal(err.msg, "recompute full:2: layers per stage go with full only");
    l = base;
    l.recompute = MESH_RECOMPUTE_FULL;
    l.recompute_modules = MESH_RC_MLP;
    assert_int_equal(mesh_layout_check(&m, &a, &l, &err), -1);
    assert_string_equal(err.msg, "recompute modules go with selective only");
    l = base;
    l.moments = MESH_PREC_FP8;
    assert_int_equal(mesh_layout_check(&m, &a, &l, &err), -1);
    assert_string_equal(err.msg, "moments: fp32, bf16 or fp16");
    /* the model's side */
    mesh_model_t sgd = m;
    sgd.optimizer = MESH_OPT_SGD;
    l = base;
    l.offload = 1;
    assert_int_equal(mesh_layout_check(&sgd, &a, &l, &err), -1);
    assert_string_equal(err.msg, "offload=optimizer runs Adam on the CPU: it needs optimizer adam "
                                 "or adamw");
    l = base;
    l.moments = MESH_PREC_BF16;
    assert_int_equal(mesh_layout_check(&sgd, &a, &l, &err), -1);
    assert_string_equal(err.msg, "moments=bf16: SGD has no Adam moments");
    mesh_model_t torch = m;
    torch.framework = MESH_FW_TORCH;
    assert_int_equal(mesh_layout_check(&torch, &a, &l, &err), -1);
    assert_string_equal(err.msg, "offload and 16-bit moments are Megatron-LM's and DeepSpeed's "
                                 "levers: not with framework: torch");
    /* what no zero mends is named before what a larger one would */
    l.zero = 0;
    assert_int_equal(mesh_layout_check(&sgd, &a, &l, &err), -1);
    assert_string_equal(err.msg, "moments=bf16: SGD has no Adam moments");
    assert_int_equal(mesh_layout_check(&torch, &a, &l, &err), -1);
    assert_string_equal(err.msg, "offload and 16-bit moments are Megatron-LM's and DeepSpeed's "
                                 "levers: not with framework: torch");
    l.offload = 1;
    l.moments = MESH_PREC_FP32;
    assert_int_equal(mesh_layout_check(&sgd, &a, &l, &err), -1);
    assert_string_equal(err.msg, "offload=optimizer runs Adam on the CPU: it needs optimizer adam "
                                 "or adamw");
    /* a shape's rule before the levers the search tries on every shape */
    l = test_layout("tp=2,pp=1,dp=4,cp=1,zero=0,vpp=2,mb=1,recompute=none,sp=on,moments=bf16");
    assert_int_equal(mesh_layout_check(&m, &a, &l, &err), -1);
    assert_string_equal(err.msg, "vpp 2 (interleaved schedule) needs pp > 1");
    mesh_model_t odd = m;
    odd.seq_len = 4097;
    l = test_layout("tp=2,pp=1,dp=4,cp=1,zero=1,vpp=1,mb=1,recompute=none,sp=on");
    assert_int_equal(mesh_layout_check(&odd, &a, &l, &err), -1);
    assert_string_equal(err.msg, "sequence parallelism needs seq_len 4097 divisible by tp 2");
    l.sequence_parallel = 0;
    assert_int_equal(mesh_layout_check(&odd, &a, &l, &err), 0);
    /* CP's load balancing splits the sequence in 2*cp chunks */
    odd.seq_len = 4098;
    l = test_layout("tp=1,pp=1,dp=4,cp=2,zero=1,vpp=1,mb=1,recompute=none,sp=off");
    assert_int_equal(mesh_layout_check(&odd, &a, &l, &err), -1);
    assert_string_equal(err.msg, "cp 2 needs seq_len 4098 divisible by 2*cp");
    odd.seq_len = 4100;
    assert_int_equal(mesh_layout_check(&odd, &a, &l, &err), 0);
    mesh_model_t five = m;
    five.layers = 5;
    l = test_layout("tp=2,pp=4,dp=1,cp=1,zero=0,vpp=1,mb=1,recompute=none,sp=on");
    assert_int_equal(mesh_layout_check(&five, &a, &l, &err), -1);
    assert_string_equal(err.msg, "pp 4 cannot split 5 layers: 2 middle stages of 2 (5/4 rounded "
                                 "up) take 4, more than the 3 left after one each for the first "
                                 "and last; pp 3, the largest below, splits them");
    five.layers = 7; /* 1,2,2,2 */
    assert_int_equal(mesh_layout_check(&five, &a, &l, &err), 0);
    /* the allocation's side: tp must divide a node as well as its island */
    mesh_alloc_t six = a;
    six.gpus_per_node = 6;
    six.island = 4;
    l = test_layout("tp=4,pp=1,dp=1,cp=1,zero=0,vpp=1,mb=1,recompute=none,sp=on");
    assert_int_equal(mesh_layout_check(&m, &six, &l, &err), -1);
    assert_string_equal(err.msg, "tp 4 must divide the 6 GPUs per node");
    mesh_model_t params = test_preset("params-only");
    l = test_layout("tp=2,pp=1,dp=4,cp=1,zero=1,vpp=1,mb=1,recompute=none,sp=on");
    assert_int_equal(mesh_layout_check(&params, &a, &l, &err), -1);
    assert_string_equal(err.msg, "tp, pp and cp need the model's arch (layers, heads, ...); a "
                                 "params-only spec plans DP and ZeRO only");
}

/* ---- explanations: exact reasons and advice ---- */

#define PLAIN_DP_4                                                                                 \
    "plain DP needs 131.6 GiB per GPU > 72.3 GiB usable (weights 13.0, grads 13.0, optimizer "     \
    "104.3, activations 0.0, overhead 1.2 GiB at "                                                 \
    "tp=1,pp=1,dp=4,cp=1,zero=0,vpp=1,mb=1,recompute=none,sp=off)"

static void reasons__simpler_family_refused_with_numbers(void **state)
{
    (void)state;
    mesh_model_t m = seed_7b();
    mesh_alloc_t a = alloc_80e9(1, 4);
    mesh_plan_t *p = test_plan(&m, &a, "auto");
    const mesh_candidate_t *c = mesh_plan_best(p);
    assert_true(mesh_plan_fits(p));
    assert_int_equal(c->layout.zero, 1);
    assert_int_equal(c->layout.dp, 4);
    assert_bytes(c->memory.weights, 14000000000ULL);
    assert_bytes(c->memory.grads, 14000000000ULL);
    assert_bytes(c->memory.optimizer, 21000000000ULL);
    assert_bytes(c->memory.total, 50342177280ULL); /* 49e9 + 1.25 GiB */
    assert_int_equal(mesh_plan_reason_count(p), 1);
    assert_string_equal(mesh_plan_reason(p, 0), PLAIN_DP_4);
    assert_null(mesh_plan_reason(p, 1));
    assert_null(mesh_plan_reason(p, -1));
    assert_int_equal(mesh_plan_advice_count(p), 0);
    assert_null(mesh_plan_advice(p, 0));
    mesh_plan_destroy(p);
    /* zero pinned: the simpler families are excluded, not refused */
    p = test_plan(&m, &a, "zero=3");
    assert_int_equal(mesh_plan_reason_count(p), 3);
    assert_string_equal(mesh_plan_reason(p, 0), "plain DP is excluded by the pinned layout fields");
    assert_string_equal(mesh_plan_reason(p, 1),
                        "DP + ZeRO-1 is excluded by the pinned layout fields");
    assert_string_equal(mesh_plan_reason(p, 2),
                        "DP + ZeRO-2 is excluded by the pinned layout fields");
    mesh_plan_destroy(p);
}

/* The pinned zero=0 is in the way: the advice names the field, what fits
 * instead (the first-fit search tries the most sharded stage first) and its
 * need, 28e9 + 1.25 GiB = 27.3 GiB. */
static void advice__pinned_field_in_the_way(void **state)
{
    (void)state;
    mesh_model_t m = seed_7b();
    mesh_alloc_t a = alloc_80e9(1, 4);
    mesh_plan_t *p = test_plan(&m, &a, "zero=0");
    assert_false(mesh_plan_fits(p));
    assert_int_equal(mesh_plan_reason_count(p), 2);
    assert_string_equal(mesh_plan_reason(p, 0),
                        "nothing fits: the closest layout "
                        "(tp=1,pp=1,dp=4,cp=1,zero=0,vpp=1,mb=1,recompute=none,sp=off) needs 131.6 "
                        "GiB per GPU > 72.3 GiB usable, short by 59.4 GiB");
    assert_string_equal(mesh_plan_reason(p, 1), PLAIN_DP_4);
    assert_int_equal(mesh_plan_advice_count(p), 1);
    assert_string_equal(mesh_plan_advice(p, 0),
                        "zero=3 instead of the pinned zero=0 fits: "
                        "tp=1,pp=1,dp=4,cp=1,zero=3,vpp=1,mb=1,recompute=none,sp=off (27.3 GiB)");
    mesh_plan_destroy(p);
}

/* One GPU: 16 bytes a parameter + 1 GiB = 105.3 GiB, 33.0 short (ZeRO-1
 * over the one replica: 2-byte main gradients, no fp32 copy of them).  Two
 * nodes fit under ZeRO-3 (16/2 bytes a parameter + 1.25 GiB = 53.4 GiB);
 * LoRA fits here: the base weights (13.0 GiB) and the context at least. */
static void nothing_fits__exact_reasons_and_advice(void **state)
{
    (void)state;
    mesh_model_t m = seed_7b();
    mesh_alloc_t a = alloc_80e9(1, 1);
    mesh_plan_t *p = test_plan(&m, &a, "auto");
    assert_false(mesh_plan_fits(p));
    assert_false(mesh_plan_best(p)->fits);
    assert_bytes(mesh_plan_best(p)->memory.total, 113073741824ULL);
    const char *closest = "tp=1,pp=1,dp=1,cp=1,zero=1,vpp=1,mb=1,recompute=none,sp=off";
    char want[1024];
    assert_int_equal(mesh_plan_reason_count(p), 2);
    snprintf(want, sizeof(want),
             "nothing fits: the closest layout (%s) needs 105.3 GiB per GPU > 72.3 GiB usable, "
             "short by 33.0 GiB",
             closest);
    assert_string_equal(mesh_plan_reason(p, 0), want);
    snprintf(want, sizeof(want),
             "plain DP needs 105.3 GiB per GPU > 72.3 GiB usable (weights 13.0, grads 13.0, "
             "optimizer 78.2, activations 0.0, overhead 1.0 GiB at %s)",
             closest);
    assert_string_equal(mesh_plan_reason(p, 1), want);
    assert_int_equal(mesh_plan_advice_count(p), 3);
    const char *nodes = "2 nodes (2 GPUs) would fit full training: "
                        "tp=1,pp=1,dp=2,cp=1,zero=3,vpp=1,mb=1,recompute=none,sp=off (53.4 GiB "
                        "per GPU)";
    assert_string_equal(mesh_plan_advice(p, 0), nodes);
    /* the optimizer offloaded (fp32 master and moments, 12 bytes, on the
     * host; 7e9 x 12 = 78.2 GiB, 131 GiB given the host's share) */
    const char *offload =
        "offloading the optimizer to host memory fits on these nodes with 131 GiB of it per node "
        "(give the job --mem=131G, Slurm's G being GiB; meshplan --host-mem 131GiB): "
        "tp=1,pp=1,dp=1,cp=1,zero=1,vpp=1,mb=1,recompute=none,sp=off,offload=optimizer, 27.1 GiB "
        "per GPU";
    assert_string_equal(mesh_plan_advice(p, 1), offload);
    const char *lora = "parameter-efficient fine-tuning fits on this allocation (set "
                       "train.finetune: lora, and train the adapters under DeepSpeed: "
                       "Megatron-LM has no LoRA): "
                       "tp=1,pp=1,dp=1,cp=1,zero=0,vpp=1,mb=1,recompute=none,sp=off, ";
    const char *adv = mesh_plan_advice(p, 2);
    assert_int_equal(strncmp(adv, lora, strlen(lora)), 0);
    double gib = 0;
    assert_int_equal(sscanf(adv + strlen(lora), "%lf GiB per GPU", &gib), 1);
    assert_true(gib >= 14.0 && gib <= 72.3);
    /* the line the plugin and job_submit print */
    char buf[2048];
    snprintf(
        want, sizeof(want),
        "seed-7b does not fit on 1 x 1 generic GPUs: the closest layout (%s) needs 105.3 GiB "
        "per GPU > 72.3 GiB usable\nwhat would fit: %s\nwhat would fit: %s\nwhat would fit: %s",
        closest, nodes, offload, adv);
    assert_string_equal(mesh_report_nofit(p, buf, sizeof(buf)), want);
    /* cut to the buffer, never past it */
    memset(buf, '#', sizeof(buf));
    assert_int_equal(strlen(mesh_report_nofit(p, buf, 40)), 39);
    assert_int_equal(strncmp(buf, want, 39), 0);
    assert_int_equal(buf[40], '#');
    mesh_plan_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fit__need_equal_to_usable__fits),
        cmocka_unit_test(fit__arch_model_at_exactly_its_need__fits),
        cmocka_unit_test(tp__must_divide_ffn_and_heads_not_hidden),
        cmocka_unit_test(cp__planned_from_8192_tokens),
        cmocka_unit_test(layer_split__every_stage_exact),
        cmocka_unit_test(vpp_chunk_layers__exact),
        cmocka_unit_test(split__explicit_layout__megatron_units),
        cmocka_unit_test(split__interleaved_stages_are_their_chunks),
        cmocka_unit_test(memory__pinned_interleaving_priced_as_estimated),
        cmocka_unit_test(layout__world_batches_bubble),
        cmocka_unit_test(layout_check__each_rule__exact_message),
        cmocka_unit_test(reasons__simpler_family_refused_with_numbers),
        cmocka_unit_test(advice__pinned_field_in_the_way),
        cmocka_unit_test(nothing_fits__exact_reasons_and_advice),
        cmocka_unit_test(zero__planned_over_the_cp_group),
    };
    return cmocka_run_group_tests_name("plan_rules", tests, NULL, NULL);
}
