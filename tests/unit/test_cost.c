/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cost model: batch arithmetic and bubbles from the sources, and the
 * physical orderings the planner relies on.
 */
#include <math.h>

#include "internal.h" /* MoE internals */
#include "moeutil.h"
#include "testutil.h"

#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

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
    /* a sliding window counts the keys it sees (mesh_attention_share), in
     * a dense model and in one with experts (GPT-OSS: its 64 heads of 64
     * are 4096 wide, q = 4096/2880 of hidden) */
    m.finetune = MESH_FINETUNE_FULL;
    m.window = 1024;
    m.full_attention_every = 2; /* 16 layers whole, 16 windowed */
    double windowed = 1024.0 * (2 * 8192 - 1024 + 1) / (8192.0 * 8193);
    assert_double_near(mesh_flops_per_token(&m),
                       6 * matmul + 6.0 * 32 * 8192 * 4096 * (16 + 16 * windowed) / 32, 1e-3);
    mesh_model_t oss = test_preset("gpt-oss-120b"), whole = oss;
    whole.window = 0;
    double core = 6.0 * 36 * 4096 * 4096;
    double oss_windowed = 128.0 * (2 * 4096 - 128 + 1) / (4096.0 * 4097);
    assert_double_near(mesh_flops_per_token(&whole) - mesh_flops_per_token(&oss),
                       core * (1 - (18 + 18 * oss_windowed) / 36), 1e-3);
    /* heads of head_dim wider than hidden / heads: QK^T and AV as wide as
     * the heads (Qwen3-32B's 64 heads of 128 on 5120) */
    mesh_model_t wide = test_spec("arch: {layers: 2, hidden: 5120, heads: 64, kv_heads: 8, "
                                  "head_dim: 128, ffn: 25600, vocab: 1000}\n");
    double wide_matmul = wide.params - 1000.0 * 5120;
    assert_double_near(mesh_flops_per_token(&wide), 6 * wide_matmul + 6.0 * 2 * 4096 * 64 * 128,
                       1e-3);
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

/* The share of causal attention a sliding window computes: w(2s - w + 1) /
 * (s(s + 1)) for a windowed layer, 1 for a whole one, averaged over the
 * layers; GPT-OSS's 18 windowed layers of 36 at 4,096 tokens by hand. */
static void cost__window_share(void **state)
{
    (void)state;
    mesh_model_t m = test_preset("gpt-oss-120b");
    double windowed = 128.0 * (2 * 4096 - 128 + 1) / (4096.0 * 4097);
    assert_double_near(mesh_attention_share(&m), (18 + 18 * windowed) / 36, 1e-15);
    m.full_attention_every = 0; /* every layer windowed */
    assert_double_near(mesh_attention_share(&m), windowed, 1e-15);
    m.full_attention_every = 4; /* 9 whole layers of 36 */
    assert_double_near(mesh_attention_share(&m), (9 + 27 * windowed) / 36, 1e-15);
    m.layers = 3, m.full_attention_every = 2; /* layer 2 whole, 1 and 3 windowed */
    assert_double_near(mesh_attention_share(&m), (1 + 2 * windowed) / 3, 1e-15);
    m.window = 1; /* each query sees itself alone: 2/(s+1) */
    assert_double_near(mesh_attention_share(&m), (1 + 2 * (2.0 / 4097)) / 3, 1e-15);
    m.window = 4096; /* a window as long as the sequence is no window */
    assert_double_near(mesh_attention_share(&m), 1, 0);
    m.window = 4095;
    assert_true(mesh_attention_share(&m) < 1);
    m.window = 0;
    assert_double_near(mesh_attention_share(&m), 1, 0);
}

/* A windowed layer's attention core takes the time of the keys it sees:
 * less compute than attending to the whole sequence, the same where the
 * window holds the sequence or the attention is unfused. */
static void cost__window_attention_priced_shorter(void **state)
{
    (void)state;
    mesh_model_t m = test_spec("preset: llama3-8b\ntrain: {seq_len: 16384, global_batch: 64}\n");
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    const char *mesh = "tp=8,pp=1,dp=1,cp=1,zero=0,vpp=1,mb=1,recompute=none,sp=on";
    mesh_model_t w = m, long_w = m;
    w.window = 1024;
    long_w.window = 16384;
    double full = cost_of(&m, &a, mesh).compute_s, windowed = cost_of(&w, &a, mesh).compute_s;
    assert_true(windowed < 0.9 * full);
    assert_true(cost_of(&long_w, &a, mesh).compute_s == full);
    /* the unfused attention computes every score and masks the window's */
    mesh_model_t unfused = m, unfused_w = w;
    unfused.flash_attention = unfused_w.flash_attention = 0;
    assert_true(cost_of(&unfused_w, &a, mesh).compute_s == cost_of(&unfused, &a, mesh).compute_s);
}

/* An explicit pipeline layout is paced by its fullest stage: 16 layers over
 * pp 4 x vpp 3 hold 3,5,5,3 (test_plan), so a slot takes 5 layers' time
 * where the even split over pp 4 x vpp 2 takes 4 (and the logits, small
 * here against a 4096-wide layer). */
static void cost__explicit_layout_fullest_stage(void **state)
{
    mesh_model_t m = test_spec("arch: {layers: 16, hidden: 4096, heads: 32, ffn: 16384, "
                               "vocab: 1000}\ntrain: {global_batch: 64}\n");
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    mesh_cost_t c3 = cost_of(&m, &a, "tp=2,pp=4,dp=1,cp=1,zero=0,vpp=3,mb=1,recompute=none,sp=on");
    mesh_cost_t c2 = cost_of(&m, &a, "tp=2,pp=4,dp=1,cp=1,zero=0,vpp=2,mb=1,recompute=none,sp=on");
    double slot3 = c3.compute_s / (64 + 3.0 / 3), slot2 = c2.compute_s / (64 + 3.0 / 2);
    assert_true(slot3 > 1.2 * slot2 && slot3 < 1.3 * slot2);
    (void)state;
}

/* TP wider than the KV heads all-gathers each layer's QKV output (and
 * reduce-scatters its gradient): more TP traffic than the same model with
 * a KV head per rank. */
static void cost__tp_wider_than_kv_heads_gathers_qkv(void **state)
{
    mesh_model_t kv4 = test_spec("arch: {layers: 8, hidden: 4096, heads: 32, kv_heads: 4, "
                                 "ffn: 16384, vocab: 32000}\ntrain: {global_batch: 64}\n");
    mesh_model_t kv8 = kv4;
    kv8.kv_heads = 8;
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    const char *mesh = "tp=8,pp=1,dp=1,cp=1,zero=0,vpp=1,mb=1,recompute=none,sp=on";
    assert_true(cost_of(&kv4, &a, mesh).tp_comm_s > 1.1 * cost_of(&kv8, &a, mesh).tp_comm_s);
    (void)state;
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

/* ---- exact values on a small hand-made model ----
 *
 * Each term of the step time counted by hand from the formulas lib/cost.c's
 * header states and their sources: the bubble from Narayanan et al. 2021
 * section 2.2 (m + (p-1)/v micro-batch slots a step), the TP all-reduces
 * from Shoeybi et al. 2019 (two forward, two backward per layer, each of
 * b*s*h elements; doc/design.md, "Step time": 16bsh(t-1)/t bytes a layer and
 * micro-batch), ring collectives moving 2(n-1)/n (all-reduce) or (n-1)/n
 * (reduce-scatter, all-gather) of the buffer, and ZeRO's collectives from
 * Rajbhandari et al. 2020 section 7.  The calibration constants are
 * lib/cost.c's own, restated: */
#define KERNELS_PER_LAYER 20   /* forward kernels of a fused layer */
#define KERNEL_GAP_S      3e-6 /* each kernel's launch and tail */
#define STEP_LAT_LINK     2e-6 /* one step of a collective over NVLink */
#define STEP_LAT_NET      6e-6 /* ... across nodes */
#define SUSTAINED         0.8  /* of the GEMM benchmark rate, sustained */
#define ATTN_EFF          0.6  /* the attention core's share of that (Dao 2023) */
#define OVERLAP_TAX       0.1  /* compute lost per second of hidden communication */

/* Relative 1e-9: the hand formula and the library sum in other orders. */
#define assert_near(got, want)                                                                     \
    do {                                                                                           \
        double g_ = (got), w_ = (want), e_ = g_ - w_;                                              \
        if (!((e_ < 0 ? -e_ : e_) <= 1e-9 * (w_ < 0 ? -w_ : w_)))                                  \
            fail_msg("%s = %.17g, by hand %.17g", #got, g_, w_);                                   \
    } while (0)

/* The tiny Llama-style model of test_memory.c: 8 layers, h 128, 8 heads of
 * which 4 KV heads, SwiGLU f 320, vocabulary 200 (256 padded to 128 x tp
 * for tp up to 2, 512 at tp 4), seq 64, bf16, FlashAttention, no dropout. */
#define H   128.0
#define A   8.0
#define KV  0.5
#define F   320.0
#define SEQ 64.0

static mesh_model_t tiny(long gbs)
{
    char yaml[512];
    snprintf(yaml, sizeof(yaml),
             "arch: {layers: 8, hidden: 128, heads: 8, kv_heads: 4, ffn: 320, vocab: 200, "
             "mlp: swiglu, tied_embeddings: false}\n"
             "train: {seq_len: 64, global_batch: %ld, framework: megatron}\n",
             gbs);
    return test_spec(yaml);
}

static double padded(int tp)
{
    return tp <= 2 ? 256 : 128.0 * tp;
}

/* Parameters of the fullest GPU, the last stage of an even split: its
 * layers (doc/design.md, "Parameter counts": 2h^2 + 2h^2 kv/heads + 3hf split, 2h
 * replicated), the output layer, the final norm, and at pp 1 the input
 * embedding too. */
static double psi_max(int tp, int pp)
{
    double layer = (2 * H * H + 2 * H * H * KV + 3 * H * F) / tp + 2 * H;
    double emb = padded(tp) * H / tp;
    return 8 / pp * layer + emb + H + (pp == 1 ? emb : 0);
}

static int ceil_log2(int n)
{
    int k = 0;
    while ((1 << k) < n)
        k++;
    return k;
}

/* Ring steps of a collective over n ranks: n - 1 for a reduce-scatter or
 * all-gather; an all-reduce 2(n-1) as a ring or 2 log2 n as a tree,
 * whichever NCCL finds shorter. */
static double steps(int n, int allreduce)
{
    if (!allreduce)
        return n - 1;
    return 2 * (n - 1) < 2 * ceil_log2(n) ? 2 * (n - 1) : 2 * ceil_log2(n);
}

/* Communication hidden behind `window` seconds of compute costs only its
 * tax; what does not fit is exposed. */
static double exposed(double comm, double window)
{
    double hidden = comm < window ? comm : window;
    return comm - hidden + OVERLAP_TAX * hidden;
}

/* One layer's forward for one micro-batch of mb sequences on one GPU. */
typedef struct hand {
    double fwd;    /* the whole layer */
    double attn;   /* of which the attention core */
    double mlp;    /* of which fc1 and fc2 */
    double logits; /* the output layer's forward, last stage */
    double tp;     /* TP collectives, forward */
} hand_t;

static hand_t by_hand(const mesh_alloc_t *a, int tp, int cp, int sp, int mb)
{
    const mesh_gpu_t *g = &a->gpu;
    double rate = g->peak_flops * g->gemm_eff * SUSTAINED, hbm = g->hbm_bw;
    double s = SEQ / cp, T = mb * s, t = tp;
    hand_t x;
    /* Megatron's column- and row-parallel GEMMs [T x k] @ [k x n]: QKV,
     * output projection, fc1 (gate and up, 2f wide), fc2; 2Tkn FLOPs and
     * 2(Tk + kn + Tn) bytes of bf16 operands through HBM each */
    double k[4] = {H, H / t, H, F / t}, n[4] = {(H + 2 * H * KV) / t, H, 2 * F / t, H};
    double flops = 0, bytes = 0;
    x.mlp = 0;
    for (int i = 0; i < 4; i++) {
        double fl = 2 * T * k[i] * n[i], by = 2 * (T * k[i] + k[i] * n[i] + T * n[i]);
        flops += fl;
        bytes += by;
        if (i >= 2)
            x.mlp += fl / rate + by / hbm;
    }
    /* causal attention: QK^T and AV over half the s x S products for the
     * local s queries and all S keys, 2 * 2bsSh/2 / t FLOPs */
    x.attn = 2 * mb * s * SEQ * H / t / (rate * ATTN_EFF);
    /* elementwise traffic: the layer's stored activations (Korthikanti
     * et al. 2022, as test_memory.c counts them), written and read */
    double sbh = T * H, rep = sp ? t : 1;
    double act = 8 * sbh / rep + (4 * sbh + 4 * sbh * KV + 6 * T * F + 4 * A * T) / t;
    x.fwd = flops / rate + x.attn + (bytes + 2 * act) / hbm + KERNELS_PER_LAYER * KERNEL_GAP_S;
    /* logits: [T x h] @ [h x V/t], and their 4-byte write and read */
    double v = padded(tp);
    x.logits = 2 * T * H * v / t / rate + 4 * T * v / t / hbm;
    /* TP: half of the 16bsh(t-1)/t bytes of doc/design.md, "Step time", forward, two all-reduces
     * of latency */
    x.tp = tp > 1 ? 8 * T * H * (t - 1) / t / g->link_bw + 2 * steps(tp, 1) * STEP_LAT_LINK : 0;
    /* under SP, --tp-comm-overlap hides them behind the linear GEMMs
     * (lib/overlap.c): what is left exposed */
    if (sp && tp > 1)
        x.tp = exposed(x.tp, x.fwd - x.attn);
    return x;
}

static mesh_cost_t cost_exact(const mesh_model_t *m, const mesh_alloc_t *a, const char *mesh)
{
    mesh_cost_t c = cost_of(m, a, mesh);
    assert_near(c.step_seconds, c.compute_s + c.tp_comm_s + c.cp_comm_s + c.pp_comm_s +
                                    c.dp_comm_s + c.optimizer_s);
    return c;
}

/* Adam's step streams the fp32 master (4) and moments (8), read and
 * written, reads the fp32 gradient (4) and writes the bf16 weight (2): 30
 * bytes a parameter the rank owns, psi/d from ZeRO-1 on. */
static double optimizer_by_hand(const mesh_alloc_t *a, double owned)
{
    return owned * (2 * (4 + 8) + 4 + 2) / a->gpu.hbm_bw;
}

/* The pipeline, tp 2, pp 4 on one node of 8, m = 8: one step is m + (p-1)/v
 * slots of the slowest stage's micro-batch (Narayanan et al. 2021, section
 * 2.2: the bubble (p-1)/(vm) of m); the last stage's 2 layers, forward and
 * backward (2x), and its logits; per slot 2 TP collectives per layer
 * forward and 2 backward, and a send and receive of the b*s*h/t
 * activations (SP) per model chunk, v of them, over NVLink (the 2 x 1 x 1
 * ranks of a stage share a node). */
static void cost__bubble_with_and_without_interleaving(void **state)
{
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    mesh_model_t m = tiny(8);
    hand_t x = by_hand(&a, 2, 1, 1, 1);
    double mbs = 8, p = 4, per_mb = 2 * 3 * x.fwd + 3 * x.logits;
    mesh_cost_t c1 = {0};
    for (int v = 1; v <= 2; v++) {
        char mesh[128];
        snprintf(mesh, sizeof(mesh), "tp=2,pp=4,dp=1,cp=1,zero=0,vpp=%d,mb=1,recompute=none,sp=on",
                 v);
        mesh_cost_t c = cost_exact(&m, &a, mesh);
        double slots = mbs + (p - 1) / v;
        assert_true(c.bubble == (p - 1) / (v * mbs));
        assert_near(c.compute_s, slots * per_mb);
        assert_near(c.tp_comm_s, slots * 2 * 2 * x.tp);
        assert_near(c.pp_comm_s, slots * 2 * v * (2 * SEQ * H / 2 / a.gpu.link_bw + STEP_LAT_LINK));
        assert_true(c.cp_comm_s == 0 && c.dp_comm_s == 0);
        assert_near(c.optimizer_s, optimizer_by_hand(&a, psi_max(2, 4)));
        if (v == 1)
            c1 = c;
        else /* interleaving shrinks the bubble from 3 slots to 1.5 */
            assert_near(c.compute_s / c1.compute_s, (8 + 1.5) / (8 + 3));
    }
}

/* TP's collectives on the critical path (tp 4, pp 1, m 4): 2 forward and
 * 2 backward per layer, and full recomputation repeats the forward two
 * (of N of the q layers under full:N); compute adds the forward again, the
 * attention core (selective's default, Korthikanti et al. section 5), or
 * the MLP's GEMMs. */
static void cost__tp_comm_and_recomputation(void **state)
{
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    mesh_model_t m = tiny(8);
    hand_t x = by_hand(&a, 4, 1, 1, 1);
    /* one layer's forward: 8bsh(t-1)/t bytes over NVLink, two all-reduces
     * of 4 ranks, each a tree's 2 log2 4 = 4 steps (a ring's would be 6) */
    double tp_fwd = 8 * 64 * H * 3 / 4 / a.gpu.link_bw + 2 * 4 * STEP_LAT_LINK;
    const struct {
        const char *rc;
        double recompute, tp_passes;
    } cases[] = {
        {"none", 0, 2},
        {"selective", x.attn, 2},
        {"selective:mlp", x.mlp, 2},
        {"full", x.fwd, 3},
        {"full:3", 3.0 / 8 * x.fwd, 2 + 3.0 / 8},
    };
    for (int i = 0; i < N_OF(cases); i++) {
        char mesh[128];
        snprintf(mesh, sizeof(mesh), "tp=4,pp=1,dp=2,cp=1,zero=1,vpp=1,mb=1,recompute=%s,sp=on",
                 cases[i].rc);
        mesh_cost_t c = cost_exact(&m, &a, mesh);
        double mbs = 4; /* 8 / (1 x 2); pp 1: no bubble */
        assert_near(c.compute_s, mbs * (8 * (3 * x.fwd + cases[i].recompute) + 3 * x.logits));
        /* sp on: --tp-comm-overlap leaves exposed what the GEMMs cannot hide */
        assert_near(c.tp_comm_s, mbs * 8 * cases[i].tp_passes * exposed(tp_fwd, x.fwd - x.attn));
        assert_true(c.pp_comm_s == 0 && c.cp_comm_s == 0 && c.bubble == 0);
    }
}

/* Stage-to-stage sends cross nodes once a stage's tp x cp x dp ranks fill
 * a node (Megatron's order tp-cp-dp-pp puts the next stage on the next
 * node): tp 4, pp 2, dp 2 on 2 nodes of 8, over the network, its bandwidth
 * and latency. */
static void cost__pp_comm_across_nodes(void **state)
{
    mesh_alloc_t a = test_alloc("H100-SXM", 2, 8);
    mesh_model_t m = tiny(8);
    mesh_cost_t c =
        cost_exact(&m, &a, "tp=4,pp=2,dp=2,cp=1,zero=0,vpp=1,mb=1,recompute=none,sp=on");
    double mbs = 4, slots = mbs + 1;
    assert_near(c.pp_comm_s, slots * 2 * (2 * SEQ * H / 4 / a.gpu.net_bw + STEP_LAT_NET));
    assert_true(c.bubble == 1 / mbs);
    /* stages of 4 ranks, half a node: stage 1 (ranks 4-7, node 0) sends to
     * stage 2 (ranks 8-11, node 1) over the network all the same */
    c = cost_exact(&m, &a, "tp=2,pp=4,dp=2,cp=1,zero=0,vpp=1,mb=1,recompute=none,sp=on");
    slots = 4 + 3;
    assert_near(c.pp_comm_s, slots * 2 * (2 * SEQ * H / 2 / a.gpu.net_bw + STEP_LAT_NET));
}

/* DP's gradient all-reduce (ZeRO-0: 2(d-1)/d of the fp32 gradients, one
 * bucket, hidden behind the backward, 2q layer forwards) stays on NVLink
 * while the dp group's tp x cp x dp consecutive ranks fit a node, up to
 * and including a full node, and crosses the network beyond, on as many
 * NICs at once as the group has GPUs in a node (8/tp: NCCL's rings leave
 * the node on each), at most NVLink's rate. */
static void cost__dp_comm_inside_and_across_nodes(void **state)
{
    const struct {
        int nodes;
        const char *mesh;
        int tp, pp, d, cross, nics;
        double net; /* the network per GPU, GB/s; 0: the table's */
    } cases[] = {
        /* 8 ranks of a node of 8: NVLink */
        {1, "tp=1,pp=1,dp=8,cp=1,zero=0,vpp=1,mb=1,recompute=none,sp=off", 1, 1, 8, 0, 0, 0},
        /* tp 2 x dp 4 = 8 ranks of each stage's node: NVLink */
        {2, "tp=2,pp=2,dp=4,cp=1,zero=0,vpp=1,mb=1,recompute=none,sp=on", 2, 2, 4, 0, 0, 0},
        /* 16 ranks over 2 nodes: the network, 8 NICs a node at once */
        {2, "tp=1,pp=1,dp=16,cp=1,zero=0,vpp=1,mb=1,recompute=none,sp=off", 1, 1, 16, 1, 8, 0},
        /* stages of 6 ranks on nodes of 8: stage 1 (ranks 6-11) spans two;
         * its group, every second rank, 4 a node */
        {3, "tp=2,pp=4,dp=3,cp=1,zero=0,vpp=1,mb=1,recompute=none,sp=on", 2, 4, 3, 1, 4, 0},
        /* tp 8: one rank of each group a node, one NIC */
        {2, "tp=8,pp=1,dp=2,cp=1,zero=0,vpp=1,mb=1,recompute=none,sp=on", 8, 1, 2, 1, 1, 0},
        /* 8 NICs of 100 GB/s: 800, more than NVLink's 450, which it stays at */
        {2, "tp=1,pp=1,dp=16,cp=1,zero=0,vpp=1,mb=1,recompute=none,sp=off", 1, 1, 16, 1, 8, 100},
    };
    for (int i = 0; i < N_OF(cases); i++) {
        mesh_alloc_t a = test_alloc("H100-SXM", cases[i].nodes, 8);
        if (cases[i].net > 0)
            a.gpu.net_bw = cases[i].net * 1e9;
        mesh_model_t m = tiny(48);
        mesh_cost_t c = cost_exact(&m, &a, cases[i].mesh);
        int d = cases[i].d, q = 8 / cases[i].pp;
        double psi = psi_max(cases[i].tp, cases[i].pp);
        hand_t x = by_hand(&a, cases[i].tp, 1, cases[i].tp > 1, 1);
        double wire = cases[i].nics * a.gpu.net_bw;
        double bw = !cases[i].cross ? a.gpu.link_bw : wire < a.gpu.link_bw ? wire : a.gpu.link_bw;
        double lat = cases[i].cross ? STEP_LAT_NET : STEP_LAT_LINK;
        double ar = 2.0 * (d - 1) / d * 4 * psi / bw + steps(d, 1) * lat;
        assert_near(c.dp_comm_s, exposed(ar, 2 * q * x.fwd));
        assert_near(c.optimizer_s, optimizer_by_hand(&a, psi));
    }
}

/* NVLink spans nodes only on a product that says so (the GPU table's tray:
 * GB200 and GB300 NVL72), for a job on its whole trays with no smaller
 * island given: 8 H100 ranks over 2 nodes of 4 reduce over the network
 * (the table's island of 8 is one HGX node, not two half ones), 8 GB200
 * ranks over 2 trays over NVLink, and the pipeline's sends between them. */
static void cost__nvlink_fabric_spans_trays_only_on_nvl72(void **state)
{
    (void)state;
    mesh_model_t m = tiny(48);
    const char *dp8 = "tp=1,pp=1,dp=8,cp=1,zero=0,vpp=1,mb=1,recompute=none,sp=off";
    mesh_alloc_t one = test_alloc("H100-SXM", 1, 8), halves = test_alloc("H100-SXM", 2, 4);
    double inside = cost_exact(&m, &one, dp8).dp_comm_s;
    assert_true(cost_exact(&m, &halves, dp8).dp_comm_s > 2 * inside);
    mesh_alloc_t trays = test_alloc("GB200", 2, 4), kept = trays;
    kept.island = 2; /* the admin's island: NVLink stops inside the tray */
    double fabric = cost_exact(&m, &trays, dp8).dp_comm_s;
    assert_true(cost_exact(&m, &kept, dp8).dp_comm_s > 2 * fabric);
    /* the pipeline's sends between the trays too, where the fabric spans them */
    const char *pp2 = "tp=2,pp=2,dp=2,cp=1,zero=0,vpp=1,mb=1,recompute=none,sp=on";
    double sends = cost_exact(&m, &trays, pp2).pp_comm_s;
    assert_true(sends > 0 && cost_exact(&m, &kept, pp2).pp_comm_s > 2 * sends);
}

/* ZeRO's collectives over dp 8 on NVLink, m = 4 micro-batches (ZeRO
 * section 7; doc/design.md, "Step time"): ZeRO-1 reduce-scatters the fp32
 * gradients once a step behind the backward and all-gathers the bf16
 * weights behind the next forward; ZeRO-2 reduce-scatters after every
 * micro-batch; ZeRO-3 all-gathers the weights in every forward and again
 * in every backward beside the reduce-scatter, layer by layer (8
 * collectives each).  The optimizer steps over psi/d from ZeRO-1 on. */
static void cost__zero_stages_dp_comm(void **state)
{
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    mesh_model_t m = tiny(32);
    hand_t x = by_hand(&a, 1, 1, 0, 1);
    double psi = psi_max(1, 1), d = 8, bw = a.gpu.link_bw, lat = STEP_LAT_LINK, mbs = 4;
    double fwd = 8 * x.fwd, bwd = 2 * 8 * x.fwd;
    for (int z = 0; z <= 3; z++) {
        char mesh[128];
        snprintf(mesh, sizeof(mesh), "tp=1,pp=1,dp=8,cp=1,zero=%d,vpp=1,mb=1,recompute=none,sp=off",
                 z);
        mesh_cost_t c = cost_exact(&m, &a, mesh);
        double n = z == 3 ? 8 : 1; /* collectives: one bucket, or one a layer */
        double ar = 2 * (d - 1) / d * 4 * psi / bw + n * steps(8, 1) * lat;
        double rs = (d - 1) / d * 4 * psi / bw + n * steps(8, 0) * lat;
        double ag = (d - 1) / d * 2 * psi / bw + n * steps(8, 0) * lat;
        double want = z == 0   ? exposed(ar, bwd)
                      : z == 1 ? exposed(rs, bwd) + exposed(ag, fwd)
                      : z == 2 ? mbs * exposed(rs, bwd) + exposed(ag, fwd)
                               : mbs * (exposed(ag, fwd) + exposed(ag + rs, bwd));
        assert_near(c.dp_comm_s, want);
        assert_near(c.optimizer_s, optimizer_by_hand(&a, z ? psi / d : psi));
    }
}

/* DP reduces what each framework's gradient buffer holds (lib/accounting.c):
 * Megatron-LM the dtype the spec accumulates in (bf16 at ZeRO-0 by
 * --grad-reduce-in-bf16), DeepSpeed the model's bf16 whatever the spec says
 * (meshplan never exports fp32 accumulation to it), PyTorch fp32 (DDP's
 * fp32 parameters, FSDP2's reduce_dtype); both frameworks planned for
 * (auto): the slower.  The ZeRO-0 all-reduce over dp 8 on NVLink. */
static void cost__dp_reduces_the_gradient_buffers_bytes(void **state)
{
    const struct {
        const char *framework, *grads;
        double bytes;
    } cases[] = {
        {"megatron", "fp32", 4},  {"megatron", "bf16", 2}, {"deepspeed", "fp32", 2},
        {"deepspeed", "bf16", 2}, {"torch", "fp32", 4},    {"torch", "bf16", 4},
        {"auto", "fp32", 4},      {"auto", "bf16", 2},
    };
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    hand_t x = by_hand(&a, 1, 1, 0, 1);
    double psi = psi_max(1, 1), d = 8;
    for (int i = 0; i < N_OF(cases); i++) {
        char yaml[512];
        snprintf(yaml, sizeof(yaml),
                 "arch: {layers: 8, hidden: 128, heads: 8, kv_heads: 4, ffn: 320, vocab: 200, "
                 "mlp: swiglu, tied_embeddings: false}\n"
                 "train: {seq_len: 64, global_batch: 32, framework: %s, grad_accum_dtype: %s}\n",
                 cases[i].framework, cases[i].grads);
        mesh_model_t m = test_spec(yaml);
        mesh_cost_t c =
            cost_exact(&m, &a, "tp=1,pp=1,dp=8,cp=1,zero=0,vpp=1,mb=1,recompute=none,sp=off");
        double ar =
            2 * (d - 1) / d * cases[i].bytes * psi / a.gpu.link_bw + steps(8, 1) * STEP_LAT_LINK;
        if (fabs(c.dp_comm_s - exposed(ar, 2 * 8 * x.fwd)) > 1e-9 * ar)
            fail_msg("%s with %s gradients: dp %.9g s, want %.9g (%g bytes a gradient)",
                     cases[i].framework, cases[i].grads, c.dp_comm_s, exposed(ar, 2 * 8 * x.fwd),
                     cases[i].bytes);
    }
}

/* The optimizer step streams what lib/accounting.c holds: Adam reads and
 * writes the optimizer states on the GPU (k bytes a parameter), reads the
 * gradient (g, its buffer's dtype) and writes the weight (w, the dtype the
 * parameter all-gather moves), owned x (2k + g + w) over HBM's bandwidth:
 * Megatron-LM's fp32 master and moments (12), with an fp32 copy of 16-bit
 * gradients at ZeRO-0 (16), 16-bit moments (8), SGD's momentum (8), FP8
 * parameters gathered in FP8 under the distributed optimizer (1 byte);
 * DeepSpeed's fp32 gradient partition besides (16), which framework: auto
 * prices as the larger; PyTorch's fp32 parameters, its master (12); under
 * LoRA, the adapters' alone (Megatron-LM has none: mesh_megatron_withheld). */
static void cost__optimizer_streams_the_accountings_states(void **state)
{
    const struct {
        const char *train, *zero;
        double k, g, w;
    } cases[] = {
        {"framework: megatron", "zero=1", 12, 4, 2},
        {"framework: auto", "zero=1", 16, 4, 2},
        {"framework: deepspeed", "zero=1", 16, 2, 2},
        {"framework: torch", "zero=1", 12, 4, 2},
        {"framework: megatron, grad_accum_dtype: bf16", "zero=1", 12, 2, 2},
        {"framework: megatron, grad_accum_dtype: bf16", "zero=0", 16, 2, 2},
        {"framework: megatron, optimizer_dtype: bf16", "zero=1,moments=bf16", 8, 4, 2},
        {"framework: megatron, optimizer: sgd", "zero=1", 8, 4, 2},
        {"framework: megatron, precision: fp8", "zero=1", 12, 4, 1},
        {"framework: megatron, precision: fp8", "zero=0", 12, 4, 2},
        {"framework: auto, precision: fp8", "zero=1", 16, 4, 2},
        {"framework: megatron, precision: fp32", "zero=1", 8, 4, 4},
        /* LoRA: the adapters' gradients and states, 1 % of the parameters */
        {"framework: deepspeed, finetune: lora", "zero=1", 0.16, 0.02, 2},
        {"framework: torch, finetune: lora", "zero=1", 0.12, 0.04, 2},
    };
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    for (int i = 0; i < N_OF(cases); i++) {
        char yaml[512], mesh[128];
        snprintf(yaml, sizeof(yaml),
                 "arch: {layers: 8, hidden: 128, heads: 8, kv_heads: 4, ffn: 320, vocab: 200, "
                 "mlp: swiglu, tied_embeddings: false}\n"
                 "train: {seq_len: 64, global_batch: 32, %s}\n",
                 cases[i].train);
        snprintf(mesh, sizeof(mesh), "tp=1,pp=1,dp=8,cp=1,%s,vpp=1,mb=1,recompute=none,sp=off",
                 cases[i].zero);
        mesh_model_t m = test_spec(yaml);
        mesh_cost_t c = cost_exact(&m, &a, mesh);
        double owned = psi_max(1, 1) / (strcmp(cases[i].zero, "zero=0") == 0 ? 1 : 8);
        double want = owned * (2 * cases[i].k + cases[i].g + cases[i].w) / a.gpu.hbm_bw;
        if (fabs(c.optimizer_s - want) > 1e-9 * want)
            fail_msg("%s at %s: optimizer %.9g s, want %.9g (k %g, g %g, w %g)", cases[i].train,
                     cases[i].zero, c.optimizer_s, want, cases[i].k, cases[i].g, cases[i].w);
    }
}

/* Context parallelism: the K/V ring of cp - 1 passes per layer forward and
 * twice that backward, hidden behind the attention core where it fits, on
 * NVLink while tp x cp fits a node; the data-parallel group is dp x cp
 * (Megatron shards the optimizer over it). */
static void cost__cp_ring_inside_and_across_nodes(void **state)
{
    const struct {
        int nodes;
        const char *mesh;
        int tp, cp, dp, cross;
        double mbs;
    } cases[] = {
        {1, "tp=2,pp=1,dp=2,cp=2,zero=1,vpp=1,mb=1,recompute=none,sp=on", 2, 2, 2, 0, 4},
        {2, "tp=4,pp=1,dp=1,cp=4,zero=1,vpp=1,mb=1,recompute=none,sp=on", 4, 4, 1, 1, 8},
    };
    for (int i = 0; i < N_OF(cases); i++) {
        mesh_alloc_t a = test_alloc("H100-SXM", cases[i].nodes, 8);
        mesh_model_t m = tiny(8);
        mesh_cost_t c = cost_exact(&m, &a, cases[i].mesh);
        int tp = cases[i].tp, cp = cases[i].cp, d = cases[i].dp * cp;
        hand_t x = by_hand(&a, tp, cp, 1, 1);
        double bw = cases[i].cross ? a.gpu.net_bw : a.gpu.link_bw;
        double lat = cases[i].cross ? STEP_LAT_NET : STEP_LAT_LINK;
        /* cp - 1 passes of this rank's K and V blocks of s/cp tokens, bf16,
         * rank to rank: one NIC */
        double ring = (cp - 1) * 2 * 2 * (SEQ / cp) * H * KV / tp / bw;
        assert_near(c.cp_comm_s,
                    cases[i].mbs * 8 * (exposed(ring, x.attn) + exposed(2 * ring, 2 * x.attn)));
        double psi = psi_max(tp, 1);
        /* the dp-cp group's 8/tp ranks a node send on as many NICs */
        double dbw = cases[i].cross ? 8 / tp * a.gpu.net_bw : bw;
        double rs = (d - 1.0) / d * 4 * psi / dbw + steps(d, 0) * lat;
        double ag = (d - 1.0) / d * 2 * psi / dbw + steps(d, 0) * lat;
        assert_near(c.dp_comm_s, exposed(rs, 2 * 8 * x.fwd) + exposed(ag, 8 * x.fwd));
        assert_near(c.optimizer_s, optimizer_by_hand(&a, psi / d));
        assert_near(c.compute_s, cases[i].mbs * (8 * 3 * x.fwd + 3 * x.logits));
    }
}

/* LoRA's frozen weights need no weight gradients: the backward is one
 * forward, not two, so a step computes 2 passes where full training does 3
 * (lib/cost.c; Hu et al. 2021).  Without recomputation the compute time is
 * exactly two thirds. */
static void cost__lora_two_passes(void **state)
{
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    mesh_model_t full = tiny(8), lora = tiny(8);
    lora.finetune = MESH_FINETUNE_LORA;
    const char *mesh = "tp=2,pp=2,dp=2,cp=1,zero=1,vpp=1,mb=1,recompute=none,sp=on";
    mesh_cost_t cf = cost_exact(&full, &a, mesh), cl = cost_exact(&lora, &a, mesh);
    assert_near(cl.compute_s, cf.compute_s * 2 / 3);
}

/* A params-only model on V100 in fp32: V100 has no TF32, so fp32 GEMMs run
 * at an eighth of its fp16 tensor-core peak (NVIDIA V100 datasheet: 15.7
 * vs 125 TFLOP/s).  One block of 2*params FLOPs a token forward, its 2-byte
 * weights streamed once; backward twice that (lib/cost.c). */
static void cost__v100_fp32_rate(void **state)
{
    mesh_alloc_t a = test_alloc("V100-32GB", 1, 8);
    mesh_model_t m = test_spec("params: 1e9\ntrain: {seq_len: 1024, global_batch: 8, "
                               "precision: fp32}\n");
    mesh_cost_t c =
        cost_exact(&m, &a, "tp=1,pp=1,dp=8,cp=1,zero=0,vpp=1,mb=1,recompute=none,sp=off");
    double rate = 125e12 / 8 * a.gpu.gemm_eff * SUSTAINED;
    double fwd = 2 * 1e9 * 1024 / rate + 1e9 * 2 / a.gpu.hbm_bw;
    assert_near(c.compute_s, 1 * 3 * fwd);
}

/* FP8 runs the linear layers' GEMMs at the FP8 rate; the attention core
 * (QK^T, softmax, AV) stays in bf16 (Transformer Engine's DotProductAttention
 * takes bf16 inputs).  At the same tokens per step the linear layers cost
 * the same whatever the sequence length, and the causal core grows with it:
 * doubling seq_len (halving the batch) adds the core's time once more (less
 * the launch gaps of the micro-batches it halves), and that extra is the same under fp8 as under
 * bf16, half of it under the bug that prices the core at H100's FP8 rate (1979 against 989
 * TFLOP/s). */
static void cost__fp8_attention_core_in_bf16(void **state)
{
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    const char *mesh = "tp=8,pp=1,dp=1,cp=1,zero=0,vpp=1,mb=1,recompute=none,sp=on";
    double extra[2];
    for (int fp8 = 0; fp8 <= 1; fp8++) {
        char y[2][256];
        for (int k = 0; k < 2; k++)
            snprintf(y[k], sizeof(y[k]),
                     "preset: llama3-8b\ntrain: {seq_len: %d, global_batch: %d, precision: %s}\n",
                     4096 << k, 64 >> k, fp8 ? "fp8" : "bf16");
        mesh_model_t m0 = test_spec(y[0]), m1 = test_spec(y[1]);
        extra[fp8] = cost_of(&m1, &a, mesh).compute_s - cost_of(&m0, &a, mesh).compute_s;
        assert_true(extra[fp8] > 0);
    }
    assert_true(fabs(extra[1] / extra[0] - 1) < 0.02);
}

/* Optimizer offload (ZeRO-Offload, Ren et al. 2021): the shard's fp32
 * gradients go to the host and its 2-byte weights come back over PCIe at
 * 25 GB/s a GPU, and the node's CPUs update 2e9 parameters a second for all
 * its GPUs: owned*(4 + 2)/25e9 + owned*gpus/2e9, owned = psi/d. */
static void cost__offload_time(void **state)
{
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    mesh_model_t m = tiny(16);
    mesh_cost_t c = cost_exact(
        &m, &a, "tp=1,pp=1,dp=8,cp=1,zero=1,vpp=1,mb=1,recompute=none,sp=off,offload=optimizer");
    double owned = psi_max(1, 1) / 8;
    assert_near(c.optimizer_s, owned * (4 + 2) / 25e9 + owned * 8 / 2e9);
}

/* ---- mixture of experts, MLA and MTP ---- */

static mesh_cost_t moe_cost_of(const mesh_model_t *m, int nodes, const char *mesh)
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
    mesh_cost_t c8 = moe_cost_of(&m, 2, near), c16 = moe_cost_of(&m, 2, far),
                c1 = moe_cost_of(&m, 2, none);
    assert_true(c1.ep_comm_s == 0);
    assert_true(c8.ep_comm_s > 0);
    /* half of EP 16's peers are on the other node, behind a NIC of a
     * ninth of NVLink's bandwidth */
    assert_true(c16.ep_comm_s > 3 * c8.ep_comm_s);
    /* exposed (train.ep_overlap: off, as Megatron-LM runs by default), the
     * network's all-to-all outweighs EP 16's fuller grouped GEMMs */
    mesh_model_t off = test_spec("preset: qwen3-30b-a3b\ntrain:\n  ep_overlap: off\n");
    assert_true(moe_cost_of(&off, 2, far).step_seconds > moe_cost_of(&off, 2, near).step_seconds);
    assert_true(moe_cost_of(&off, 2, far).ep_comm_s > c16.ep_comm_s);
    assert_true(c8.step_seconds == c8.compute_s + c8.tp_comm_s + c8.cp_comm_s + c8.pp_comm_s +
                                       c8.dp_comm_s + c8.optimizer_s + c8.ep_comm_s);
    /* the busiest rank under a skewed routing computes longer */
    mesh_model_t even = test_spec("preset: qwen3-30b-a3b\ntrain:\n  moe_imbalance: 1\n");
    mesh_model_t skew = test_spec("preset: qwen3-30b-a3b\ntrain:\n  moe_imbalance: 2\n");
    mesh_cost_t ce = moe_cost_of(&even, 2, near), cs = moe_cost_of(&skew, 2, near);
    assert_true(cs.compute_s > 1.3 * ce.compute_s);
    assert_true(cs.ep_comm_s > 1.5 * ce.ep_comm_s);
    /* under FP8 the dispatch travels in one byte, the combine in two: three
     * quarters of bf16's volume (EP 16 across the nodes, bandwidth-bound) */
    mesh_model_t fp8 = test_spec("preset: qwen3-30b-a3b\ntrain:\n  precision: fp8\n");
    double r8 = moe_cost_of(&fp8, 2, far).ep_comm_s / c16.ep_comm_s;
    assert_true(r8 > 0.74 && r8 < 0.77);
    /* a dense layout has no dispatch */
    mesh_model_t d = test_preset("llama3-8b");
    snprintf(none, sizeof(none), "tp=1,pp=1,dp=16,cp=1%s", rest);
    assert_true(moe_cost_of(&d, 2, none).ep_comm_s == 0);
}

/* DeepEP (train.dispatcher: deepep) sends a token across to a node once
 * for all its copies there, and NVLink takes them on.  Qwen3-30B-A3B's 8
 * copies over EP 16 on 2 nodes reach 2(1 - 1/2^8) = 1.992 nodes, against 8
 * copies sent one by one: the network part falls to 0.249 of the
 * all-to-all's, and still sets its time (NVLink carries 7/16 + 7/16 of
 * the copies at 9 times the rate).  DeepSeek-V3's node-limited routing
 * (8 groups, 4 per token) over EP 64 on 8 nodes keeps a token to 4:
 * 4(1 - (3/4)^8)/8 = 0.450, and DeepEP dispatches bf16 where the
 * all-to-all sends FP8: 0.450 x 4/3 of its time.  Inside a node nothing
 * changes. */
static void cost__deepep_one_copy_a_node(void **state)
{
    const char *rest = ",zero=1,vpp=1,mb=1,recompute=none,sp=off";
    char far[160], near[160];
    snprintf(far, sizeof(far), "tp=1,pp=1,dp=16,cp=1,ep=16,etp=1%s", rest);
    snprintf(near, sizeof(near), "tp=1,pp=1,dp=16,cp=1,ep=8,etp=1%s", rest);
    mesh_model_t a2a = test_spec("preset: qwen3-30b-a3b\ntrain: {ep_overlap: off}\n");
    mesh_model_t dep =
        test_spec("preset: qwen3-30b-a3b\ntrain: {ep_overlap: off, dispatcher: deepep}\n");
    double r = moe_cost_of(&dep, 2, far).ep_comm_s / moe_cost_of(&a2a, 2, far).ep_comm_s;
    assert_true(r > 0.245 && r < 0.255);
    assert_true(moe_cost_of(&dep, 2, near).ep_comm_s == moe_cost_of(&a2a, 2, near).ep_comm_s);
    assert_true(moe_cost_of(&dep, 2, far).compute_s == moe_cost_of(&a2a, 2, far).compute_s);
    mesh_model_t v3 = test_spec("preset: deepseek-v3\ntrain: {ep_overlap: off}\n");
    mesh_model_t v3d =
        test_spec("preset: deepseek-v3\ntrain: {ep_overlap: off, dispatcher: deepep}\n");
    snprintf(far, sizeof(far), "tp=1,pp=1,dp=64,cp=1,ep=64,etp=1%s", rest);
    r = moe_cost_of(&v3d, 8, far).ep_comm_s / moe_cost_of(&v3, 8, far).ep_comm_s;
    double want = 4 * (1 - pow(0.75, 8)) / 8 * 4 / 3;
    assert_true(r > 0.98 * want && r < 1.02 * want);
    /* what crosses once is forwarded over NVLink: with a network as fast
     * as NVLink, Qwen3's busiest rank moves 7/16 + 8/16 x 7/8 of the copies
     * over NVLink with DeepEP, against the 8/16 the network's part takes
     * with the all-to-all: 1.75 times as long */
    mesh_alloc_t a = test_alloc("H100-SXM", 2, 8);
    a.gpu.net_bw = a.gpu.link_bw;
    mesh_layout_t l = test_layout("tp=1,pp=1,dp=16,cp=1,ep=16,etp=1,zero=1,vpp=1,mb=1,"
                                  "recompute=none,sp=off");
    mesh_cost_t cd, ca;
    mesh_cost_estimate(&dep, &l, &a, &cd);
    mesh_cost_estimate(&a2a, &l, &a, &ca);
    r = cd.ep_comm_s / ca.ep_comm_s;
    assert_true(r > 1.7 && r < 1.8);
}

/* Grouped GEMMs lose to dense ones when each expert gets few tokens
 * (M/(M + 1024) of the dense rate, M tokens per expert): two models alike
 * but for their experts, 8 or 64 of the same width, 2 per token: the same
 * expert FLOPs, 512 or 64 tokens per expert (33% or 6% of the rate).
 * Memory traffic made free, the second computes its experts 5.7 times
 * longer, and the whole layer more than 1.3 times. */
static void cost__grouped_gemm_efficiency(void **state)
{
#define EXPERTS_OF                                                                                 \
    "name: m\narch: {layers: 4, hidden: 2048, heads: 16, vocab: 1000, "                            \
    "moe: {experts: %d, top_k: 2, ffn: 1024, capacity_factor: 4}}\n"                               \
    "train: {seq_len: 2048, global_batch: 64, moe_imbalance: 1}\n"
    char yaml[512];
    snprintf(yaml, sizeof(yaml), EXPERTS_OF, 8);
    mesh_model_t few = test_spec(yaml);
    snprintf(yaml, sizeof(yaml), EXPERTS_OF, 64);
    mesh_model_t many = test_spec(yaml);
#undef EXPERTS_OF
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
 * weights over 16 ranks across nodes, in 40M-parameter buckets, on the 8
 * NICs of each node); with EP 8 (edp 2) each rank's experts travel too,
 * over a group of one rank a node.  The network made slow (1 MB/s),
 * compute hides next to none of it. */
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
    double rs = 15.0 / 16 * g * dense / (8 * a.gpu.net_bw) + buckets * 15 * 6e-6;
    double ag = 15.0 / 16 * 2 * dense / (8 * a.gpu.net_bw) + buckets * 15 * 6e-6;
    assert_true(c16.dp_comm_s <= (rs + ag) * (1 + 1e-9));
    assert_true(c16.dp_comm_s >= 0.99 * (rs + ag));
    assert_true(c8.dp_comm_s > 1.5 * c16.dp_comm_s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cost__flops_per_token_active),
        cmocka_unit_test(cost__window_attention_priced_shorter),
        cmocka_unit_test(cost__window_share),
        cmocka_unit_test(cost__dispatch_inside_and_across_nodes),
        cmocka_unit_test(cost__deepep_one_copy_a_node),
        cmocka_unit_test(cost__grouped_gemm_efficiency),
        cmocka_unit_test(cost__fp8_attention_core_in_bf16),
        cmocka_unit_test(cost__expert_grads_over_edp),
        cmocka_unit_test(cost__explicit_layout_fullest_stage),
        cmocka_unit_test(cost__tp_wider_than_kv_heads_gathers_qkv),
        cmocka_unit_test(cost__lora_two_passes),
        cmocka_unit_test(cost__v100_fp32_rate),
        cmocka_unit_test(cost__offload_time),
        cmocka_unit_test(bubble__llama3_70b_on_64),
        cmocka_unit_test(flops__per_token),
        cmocka_unit_test(cost__parts_and_limits),
        cmocka_unit_test(cost__zero3_latency_at_scale),
        cmocka_unit_test(cost__bubble_shrinks_with_micro_batches),
        cmocka_unit_test(cost__bubble_with_and_without_interleaving),
        cmocka_unit_test(cost__tp_comm_and_recomputation),
        cmocka_unit_test(cost__pp_comm_across_nodes),
        cmocka_unit_test(cost__dp_comm_inside_and_across_nodes),
        cmocka_unit_test(cost__nvlink_fabric_spans_trays_only_on_nvl72),
        cmocka_unit_test(cost__zero_stages_dp_comm),
        cmocka_unit_test(cost__dp_reduces_the_gradient_buffers_bytes),
        cmocka_unit_test(cost__optimizer_streams_the_accountings_states),
        cmocka_unit_test(cost__cp_ring_inside_and_across_nodes),
    };
    return cmocka_run_group_tests_name("cost", tests, NULL, NULL);
}
