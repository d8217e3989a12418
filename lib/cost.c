/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cost model: predicted time of one optimizer step.
 *
 * Compute.  Each GEMM runs at gemm_eff of the GPU's dense peak (the table's
 * best-shape matmul fraction) plus the time to move its operands through
 * HBM, so narrow TP shards and small micro-batches cost more per FLOP; each
 * layer also pays elementwise traffic (its stored activations, written and
 * read) and kernel launch gaps.  Backward is twice forward; full
 * recomputation adds a forward, selective the attention core.
 *
 * Pipeline.  One step is (m + (p-1)/v) times the slowest stage's micro-batch
 * time: the bubble is (p-1)/(v*m) (Narayanan et al. 2021, section 2.2).
 *
 * Communication, with ring collectives moving 2(n-1)/n of the buffer for an
 * all-reduce and (n-1)/n for a reduce-scatter or all-gather:
 * - TP: 2 all-reduces (or all-gather + reduce-scatter under SP) of b*s*h
 *   per layer forward and 2 backward (Shoeybi et al. 2019), on NVLink, not
 *   overlapped (on the critical path); full recomputation repeats the forward two.
 * - CP: the ring passes K and V (cp-1) times forward and K, V and their
 *   gradients backward, hidden behind the attention core where it can be.
 * - PP: b*s*h activations per micro-batch per stage boundary each way (v
 *   times under interleaving), not overlapped.
 * - DP and ZeRO (Rajbhandari et al. 2020, section 7): stage 0 all-reduces
 *   the gradients once per step, hidden behind the last micro-batch's
 *   backward; stage 1 reduce-scatters them (hidden the same way) and
 *   all-gathers the updated weights behind the next step's first forward;
 *   stage 2 reduce-scatters after every micro-batch's backward; stage 3
 *   also all-gathers the weights in every forward and backward: 1.5x the
 *   volume of DP, and m times over.  Only what compute cannot hide counts.
 *   Across nodes a ring moves as many NICs' worth as its group has GPUs
 *   in a node (ring_bw).
 * - The optimizer step streams its states through HBM once.
 */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "meshplan/cost.h"
#include "meshplan/memory.h"

#define KERNELS_PER_LAYER 20   /* forward kernels of a fused transformer layer */
#define KERNEL_GAP_S      3e-6 /* launch and tail time per kernel */
#define STEP_LAT_LINK     2e-6 /* one step of a collective over NVLink */
#define STEP_LAT_NET      6e-6 /* one step of a collective across nodes */
#define ACT_BYTES         2.0  /* bf16/fp16 activations on the wire */
/* The attention core (QK^T, softmax, AV) runs well below GEMM speed:
 * FlashAttention-2 reaches 50-73% of A100 peak forward and less backward
 * (Dao 2023); unfused batched GEMMs plus softmax do no better. */
#define ATTN_EFF 0.6
/* Whole training steps sustain less than a GEMM microbenchmark: clocks drop
 * under sustained load and norms, rotary embeddings, residuals, the loss
 * and the framework itself take time we do not price one by one.  0.8 of
 * the benchmark rate reproduces published end-to-end throughput: Megatron-LM
 * on A100 (Narayanan et al. 2021, Table 1: 135-163 TFLOP/s) and Llama-class
 * models on A100 and H100 (about 50-55% MFU without FP8). */
#define SUSTAINED 0.8
/* Communication hidden behind compute still takes SMs and memory bandwidth
 * from it: each hidden second costs this much compute time. */
#define OVERLAP_TAX 0.1
/* Optimizer offload: host<->GPU copies at PCIe Gen4 x16's practical 25 GB/s
 * a GPU, and a node's CPU Adam updating about 2e9 parameters a second
 * (ZeRO-Offload, Ren et al. 2021, section 5: the vectorised CPU-Adam updates
 * 1B parameters in under 0.5 s on one node's cores). */
#define PCIE_BW               25e9
#define CPU_ADAM_PARAMS_PER_S 2e9

double mesh_attention_share(const mesh_model_t *m)
{
    /* keys a query sees, summed over the sequence: causal attention s(s+1)/2;
     * a window of w tokens, the query's own included, w(w+1)/2 over the
     * first w queries and w over the others, w(s - (w-1)/2) (Megatron-Bridge's
     * flop_utils.py counts the same).  Megatron-LM's window_attn_skip_freq N:
     * a layer is windowed unless its number (from 1) is a multiple of N
     * (transformer/utils.py L532-546 at d98e8a6). */
    double s = m->seq_len, w = m->window;
    if (w <= 0 || w >= s || m->layers <= 0)
        return 1;
    double windowed = w * (2 * s - w + 1) / (s * (s + 1));
    int full = m->full_attention_every > 0 ? m->layers / m->full_attention_every : 0;
    return (full + (m->layers - full) * windowed) / m->layers;
}

/* Model FLOPs of one token of a model with experts, MLA or MTP layers
 * (Megatron-LM's num_floating_point_operations, training.py L1009-1290 at
 * d98e8a6): every matmul weight a token passes through (the active
 * parameters, less the input embedding's lookup; each MTP layer runs the
 * output layer again), and the causal attention core: QK^T over
 * heads*(qk + rope) and AV over heads*v under MLA, half counted, and only
 * the keys a sliding window sees (mesh_attention_share), as
 * Megatron-Bridge's flop_utils.py counts them (Megatron-LM's count has no
 * window term). */
static double flops_per_token_moe(const mesh_model_t *m, double per_weight)
{
    double h = m->hidden, v = m->vocab, q, kv;
    mesh_model_attn_widths(m, &q, &kv);
    double matmul = mesh_model_active_params(m) - (m->tied_embeddings ? 0 : v * h) -
                    mesh_position_params(m) + m->mtp_layers * v * h;
    double core = m->mla.kv_lora_rank ? 3.0 * m->seq_len * h * (q + kv)
                                      : 6.0 * m->seq_len * h * q * mesh_attention_share(m);
    return per_weight * matmul + (double)(m->layers + m->mtp_layers) * core;
}

double mesh_flops_per_token(const mesh_model_t *m)
{
    /* forward 2 per weight, backward 2 for input and 2 for weight gradients;
     * LoRA's frozen weights skip the weight gradients */
    double per_weight = m->finetune == MESH_FINETUNE_LORA ? 4 : 6;
    if (!m->has_arch)
        return per_weight * m->params;
    if (mesh_is_moe(m) || m->mla.kv_lora_rank || m->mtp_layers)
        return flops_per_token_moe(m, per_weight);
    double h = m->hidden, v = m->vocab;
    /* The input embedding (and GPT's positions) are lookups, not matmuls;
     * the output layer is a matmul whether tied or not. */
    double matmul = m->params - (m->tied_embeddings ? 0 : v * h) - mesh_position_params(m);
    double q, kv;
    mesh_model_attn_widths(m, &q, &kv); /* QK^T and AV are heads*head_dim wide */
    return per_weight * matmul + 6.0 * m->layers * m->seq_len * h * q * mesh_attention_share(m);
}

/* Precision scales the tensor-core rate: TF32 runs at half of bf16 (A100
 * onwards); V100 has no TF32 and its fp32 is an eighth of its fp16.  FP8
 * runs the linear layers' GEMMs at the FP8 rate (Transformer Engine); the
 * attention core stays in bf16 (attn_peak). */
static int runs_fp8(const mesh_model_t *m, const mesh_gpu_t *g)
{
    return m->precision == MESH_PREC_FP8 && g->peak_fp8 > 0;
}

static double peak_of(const mesh_model_t *m, const mesh_gpu_t *g)
{
    if (m->precision == MESH_PREC_FP32)
        return g->peak_flops * (g->has_bf16 ? 0.5 : 0.125);
    if (runs_fp8(m, g))
        return g->peak_fp8;
    return g->peak_flops;
}

static double attn_peak(const mesh_model_t *m, const mesh_gpu_t *g)
{
    return m->precision == MESH_PREC_FP8 ? g->peak_flops : peak_of(m, g);
}

/* Seconds of one forward GEMM pass over one layer (or the params-only
 * model) for one micro-batch on one GPU. */
typedef struct layer_time {
    double fwd;      /* forward compute of one layer */
    double attn_fwd; /* of which the attention core */
    double mlp_fwd;  /* of which the MLP's GEMMs */
    double up_fwd;   /* of which latent attention's up projections */
    double norm_fwd; /* the two norms */
    double tp_comm;  /* TP collectives of one layer, forward, that compute does not hide */
    double cp_comm;  /* CP K/V ring of one layer, forward */
} layer_time_t;

/* Seconds selective recomputation of the MESH_RC_* set mods repeats in a
 * layer of times lt (a MoE layer's mlp_fwd is 0: "mlp" recomputes a dense
 * MLP only). */
static double selective_s(const layer_time_t *lt, unsigned mods)
{
    return (mods & MESH_RC_CORE_ATTN ? lt->attn_fwd : 0) + (mods & MESH_RC_MLP ? lt->mlp_fwd : 0) +
           (mods & MESH_RC_LAYERNORM ? lt->norm_fwd : 0) +
           (mods & MESH_RC_MLA_UP_PROJ ? lt->up_fwd : 0);
}

static int ceil_log2(int n)
{
    int k = 0;
    while ((1 << k) < n && k < 30)
        k++;
    return k;
}

/* Seconds of `count` collectives moving `bytes` in all over n ranks.  A ring
 * reduce-scatter or all-gather moves (n-1)/n of its buffer in n-1 steps; an
 * all-reduce moves twice that, in 2(n-1) ring steps or 2*log2(n) tree steps,
 * whichever NCCL finds shorter.  The per-step latency is what makes ZeRO-3
 * over thousands of ranks slow. */
static double collective(double bytes, int n, double bw, double step_lat, int allreduce,
                         double count)
{
    if (n <= 1)
        return 0;
    double vol = (double)(n - 1) / n * bytes, steps = n - 1;
    if (allreduce) {
        vol *= 2;
        steps = 2 * (n - 1) < 2 * ceil_log2(n) ? 2 * (n - 1) : 2 * ceil_log2(n);
    }
    return vol / bw + count * steps * step_lat;
}

/* Time communication of `comm` seconds adds when `window` seconds of compute
 * can hide it: the part that does not fit, plus the tax on the part that does. */
static double exposed(double comm, double window)
{
    double hidden = comm < window ? comm : window;
    return comm - hidden + OVERLAP_TAX * hidden;
}

/* Whether a group of `span` consecutive ranks, groups aligned on multiples
 * of span (a TP-CP block, a stage's dp-cp group, the whole pipeline), has
 * one straddling two nodes.  Ranks fill the nodes in order, so one does
 * when there is more than one node and the span is larger than a node or
 * does not divide it (a stage of 6 on nodes of 8: ranks 6-11); a node is
 * the NVLink fabric where that spans nodes (mesh_nvlink_fabric). */
static int crosses_nodes(long span, const mesh_alloc_t *a)
{
    long fabric = mesh_nvlink_fabric(a);
    return mesh_world(a) > fabric && (span > fabric || fabric % span != 0);
}

/* What a ring collective moves a second per rank over a group of ranks
 * `stride` apart in a block of `span` consecutive ranks: NVLink's rate
 * inside a node (or fabric); across nodes NCCL gives the ring a channel
 * on each member's NIC, so the node's members send at once, as many
 * NICs' worth as the group has GPUs in a node (an all-reduce over whole
 * H100 nodes: 8 x 50 GB/s, the ~370-400 GB/s bus bandwidth nccl-tests
 * report there), at most NVLink's.  The tp groups of a node share its
 * NICs, one each for a tp of the node's size. */
static double ring_bw(long span, long stride, const mesh_alloc_t *a)
{
    if (!crosses_nodes(span, a))
        return a->gpu.link_bw;
    double nics = stride < a->gpus_per_node ? (double)(a->gpus_per_node / stride) : 1;
    double bw = nics * a->gpu.net_bw;
    return bw < a->gpu.link_bw ? bw : a->gpu.link_bw;
}

/* FP8 GEMMs with per-tensor scaling (every GPU without MXFP8: Hopper, Ada,
 * AMD) sustain less of their peak than BF16 ones (their scaling's casts,
 * transposes and amax reductions run beside them); Blackwell's
 * block-scaled tensor cores are priced at the BF16 share.  0.85 is fitted
 * on the 73 dense FP8 runs of H100 in the published Megatron runs
 * (tools/fit/published.py --fit BUILD --fit-fp8, with ring_bw's wire:
 * 70 within 15% and all within 25%, against 51 and 70 at 1). */
#ifndef FP8_GEMM_EFF /* tools/fit/published.py --fit builds with -D */
#define FP8_GEMM_EFF 0.85
#endif
/* FLOP/s a training step sustains in GEMMs. */
static double gemm_rate(const mesh_model_t *m, const mesh_gpu_t *g)
{
    return peak_of(m, g) * g->gemm_eff * SUSTAINED *
           (runs_fp8(m, g) && g->fp8_blocks < 2 ? FP8_GEMM_EFF : 1);
}

/* A GEMM of a layer on one GPU: [tokens*tok x k] @ [k x n]; up: one of
 * latent attention's up projections, which "mla_up_proj" recomputes. */
typedef struct gemm {
    double k, n, tok;
    int up;
} gemm_t;

/* MLA's attention GEMMs into g (room for 5), returning how many: the down
 * projections duplicated on every TP rank, over its sequence-parallel
 * share of the tokens (Megatron-LM's MLASelfAttention, TELinear
 * parallel_mode "duplicated"); the up projections and the output
 * projection split by TP. */
static int mla_gemms(const mesh_model_t *m, const mesh_layout_t *l, gemm_t *g)
{
    const mesh_mla_t *a = &m->mla;
    double h = m->hidden, t = l->tp, heads = m->heads, qk = a->qk_head_dim + a->qk_rope_head_dim;
    double dup = l->sequence_parallel == 1 ? 1.0 / t : 1;
    int n = 0;
    if (a->q_lora_rank) {
        g[n++] = (gemm_t){h, a->q_lora_rank, dup, 0};
        g[n++] = (gemm_t){a->q_lora_rank, heads * qk / t, 1, 1};
    } else {
        g[n++] = (gemm_t){h, heads * qk / t, 1, 1}; /* recomputed with the up projections */
    }
    g[n++] = (gemm_t){h, a->kv_lora_rank + a->qk_rope_head_dim, dup, 0};
    g[n++] = (gemm_t){a->kv_lora_rank, heads * (a->qk_head_dim + a->v_head_dim) / t, 1, 1};
    g[n++] = (gemm_t){heads * a->v_head_dim / t, h, 1, 0};
    return n;
}

static void layer_forward(const mesh_model_t *m, const mesh_layout_t *l, const mesh_alloc_t *a,
                          layer_time_t *lt)
{
    const mesh_gpu_t *g = &a->gpu;
    double peak = gemm_rate(m, g), hbm = g->hbm_bw;
    double b = l->micro_batch, t = l->tp;
    memset(lt, 0, sizeof(*lt));
    if (!m->has_arch) { /* params only: one block of 2*params FLOPs per token */
        double tokens = b * m->seq_len;
        lt->fwd = 2 * m->params * tokens / peak + m->params * 2 / hbm;
        return;
    }
    double s = (double)m->seq_len / l->cp, h = m->hidden, f = m->ffn;
    double q, kv, tokens = b * s;
    mesh_model_attn_widths(m, &q, &kv);
    double w = m->precision == MESH_PREC_FP32 ? 4 : 2;
    /* per-GPU GEMMs: [tokens*tok x k] @ [k x n]: FLOPs 2*tokens*tok*k*n, bytes
     * w*(tokens*tok*k + k*n + tokens*tok*n) */
    gemm_t gemm[8] = {
        {h, (h * q + 2 * h * kv) / t, 1, 0}, /* QKV */
        {h * q / t, h, 1, 0},                /* output projection */
    };
    int n = m->mla.kv_lora_rank ? mla_gemms(m, l, gemm) : 2, mlp = n;
    gemm[n++] = (gemm_t){h, (1 + mesh_style(m)->gated) * f / t, 1, 0}; /* fc1 (gate+up) */
    gemm[n++] = (gemm_t){f / t, h, 1, 0};                              /* fc2 */
    double flops = 0, bytes = 0;
    for (int i = 0; i < n; i++) {
        double fl = 2 * tokens * gemm[i].tok * gemm[i].k * gemm[i].n;
        double by = w * (tokens * gemm[i].tok * gemm[i].k + gemm[i].k * gemm[i].n +
                         tokens * gemm[i].tok * gemm[i].n);
        flops += fl;
        bytes += by;
        if (i >= mlp) /* what recomputing the MLP repeats */
            lt->mlp_fwd += fl / peak + by / hbm;
        if (gemm[i].up) /* and the up projections ("mla_up_proj") */
            lt->up_fwd += fl / peak + by / hbm;
    }
    /* recomputing the norms repeats two elementwise passes over b*s*h */
    lt->norm_fwd = 2 * 2 * w * tokens * h / hbm + 2 * KERNEL_GAP_S;
    /* causal attention: QK^T and AV, half the s x s products, over all s
     * keys for the local s/cp queries (load-balanced CP); a sliding window
     * computes only the keys it sees (mesh_attention_share, averaged over
     * the model's layers, whatever a stage holds), in a fused kernel: the
     * unfused one computes every score and masks the window's (its
     * get_sliding_window_causal_mask, transformer/utils.py L43-49) */
    double share = m->flash_attention ? mesh_attention_share(m) : 1;
    double attn = 2 * b * s * (double)m->seq_len * h * q / t * share;
    if (m->mla.kv_lora_rank) /* QK^T over heads*(qk + rope), AV over heads*v */
        attn = b * s * (double)m->seq_len * h * (q + kv) / t;
    lt->attn_fwd = attn / (attn_peak(m, g) * g->gemm_eff * SUSTAINED * ATTN_EFF);
    int sp = l->sequence_parallel == 1;
    double elem =
        2 * mesh_activation_layer(m, l->micro_batch, l->tp, l->cp, sp, MESH_RECOMPUTE_NONE, 0);
    lt->fwd = flops / peak + lt->attn_fwd + (bytes + elem) / hbm + KERNELS_PER_LAYER * KERNEL_GAP_S;
    /* TP: two all-reduces (or all-gather + reduce-scatter) of the b*s*h
     * activations per layer forward */
    lt->tp_comm = collective(2 * ACT_BYTES * tokens * h, l->tp, g->link_bw, STEP_LAT_LINK, 1, 2);
    /* TP wider than the KV heads all-gathers the QKV output (and
     * reduce-scatters its gradient): mesh_kv_replication */
    double rep = mesh_kv_replication(m, l->tp);
    if (rep > 1)
        lt->tp_comm += collective(ACT_BYTES * tokens * h * (q + 2 * kv), l->tp, g->link_bw,
                                  STEP_LAT_LINK, 0, 1);
    /* --tp-comm-overlap (lib/overlap.c) pipelines them with the linear
     * GEMMs: only what those cannot cover is exposed */
    if (mesh_overlap_on(m, l, MESH_OVERLAP_TP))
        lt->tp_comm = exposed(lt->tp_comm, lt->fwd - lt->attn_fwd);
    /* CP: cp-1 steps, each passing this rank's K and V block */
    if (l->cp > 1) {
        int cross = crosses_nodes((long)l->tp * l->cp, a);
        double blk = 2 * ACT_BYTES * tokens * h * kv * rep / t;
        if (m->mla.kv_lora_rank) /* keys heads*(qk + rope), values heads*v wide */
            blk = ACT_BYTES * tokens * h * (q + kv) / t;
        lt->cp_comm = (l->cp - 1) * blk / (cross ? g->net_bw : g->link_bw);
    }
}

/* Extra forward time of the output layer (logits) on the last stage. */
static double logits_forward(const mesh_model_t *m, const mesh_layout_t *l, const mesh_gpu_t *g)
{
    if (!m->has_arch)
        return 0;
    double tokens = (double)l->micro_batch * m->seq_len / l->cp;
    double vpad = mesh_model_padded_vocab(m, l->tp);
    return 2 * tokens * m->hidden * vpad / l->tp / gemm_rate(m, g) +
           4 * tokens * vpad / l->tp / g->hbm_bw;
}

/* Parameters of the rank with the most (for DP volume and the optimizer),
 * and of them the experts' in *experts. */
static double max_stage_params(const mesh_model_t *m, const mesh_layout_t *l, double *experts)
{
    mesh_heavy_t h;
    mesh_heavy_count(m, l, &h);
    int most = mesh_heavy_most(&h);
    *experts = h.psi_e[most];
    return h.psi[most];
}

/* The data-parallel collectives of psi parameters over a group of d ranks
 * (a DP/ZeRO stage's gradient and weight traffic) that compute cannot
 * hide, per step. */
static double sync_exposed(const mesh_model_t *m, const mesh_layout_t *l, long mbs, int d,
                           double psi, double g, double w, double bw, double lat, double fwd_mb,
                           double bwd_mb)
{
    /* Gradients travel in buckets of max(40M, 1M * dp) parameters (Megatron's
     * DDP, sized so that latency stays amortised at scale); ZeRO-3 gathers
     * each layer's weights, one collective per layer. */
    double bucket = 1e6 * d > 40e6 ? 1e6 * d : 40e6;
    double buckets = (double)(long)(psi / bucket) + 1;
    double layers = m->has_arch ? (m->layers + l->pp - 1) / l->pp : 1;
    double n = l->zero == 3 ? layers : buckets;
    double ar = collective(g * psi, d, bw, lat, 1, n); /* all-reduce of the gradients */
    double rs = collective(g * psi, d, bw, lat, 0, n); /* reduce-scatter of the gradients */
    double ag = collective(w * psi, d, bw, lat, 0, n); /* all-gather of the weights */
    /* what hides them is what the exported flags overlap (lib/overlap.c) */
    if (!mesh_overlap_on(m, l, MESH_OVERLAP_GRAD_REDUCE))
        bwd_mb = 0;
    if (!mesh_overlap_on(m, l, MESH_OVERLAP_PARAM_GATHER))
        fwd_mb = 0;
    switch (d > 1 ? l->zero : -1) {
    case 0: return exposed(ar, bwd_mb);
    case 1: return exposed(rs, bwd_mb) + exposed(ag, fwd_mb);
    case 2: return mbs * exposed(rs, bwd_mb) + exposed(ag, fwd_mb);
    case 3: return mbs * (exposed(ag, fwd_mb) + exposed(ag + rs, bwd_mb));
    default: return 0;
    }
}

/* psi parameters, of which psi_e are a MoE model's experts: the dense ones
 * synchronised and sharded over dp*cp, the experts' over the expert
 * data-parallel group (which spans the same stage block). */
static void dp_cost(const mesh_model_t *m, const mesh_layout_t *l, const mesh_alloc_t *a, long mbs,
                    double psi, double psi_e, double fwd_mb, double bwd_mb,
                    const mesh_step_bytes_t *step, mesh_cost_t *c)
{
    int d = l->dp * l->cp, edp = (int)mesh_layout_edp(l);
    /* bytes a weight and a gradient move, and optimizer bytes a parameter
     * the step streams, as lib/accounting.c holds them */
    double w = step->w, g = step->g, k = step->k;
    /* the dp-cp group spans tp*cp*dp consecutive ranks over a stride of
     * tp, the expert data-parallel group the same block over etp*ep */
    long span = (long)l->tp * l->cp * l->dp;
    int cross = crosses_nodes(span, a);
    double bw = ring_bw(span, l->tp, a);
    double ebw = ring_bw(span, (long)(l->etp > 0 ? l->etp : 1) * (l->ep > 0 ? l->ep : 1), a);
    double lat = cross ? STEP_LAT_NET : STEP_LAT_LINK;
    double owned;
    if (psi_e <= 0) {
        c->dp_comm_s = sync_exposed(m, l, mbs, d, psi, g, w, bw, lat, fwd_mb, bwd_mb);
        owned = l->zero >= 1 && d > 1 ? psi / d : psi;
    } else {
        double dense = psi - psi_e;
        c->dp_comm_s = sync_exposed(m, l, mbs, d, dense, g, w, bw, lat, fwd_mb, bwd_mb) +
                       sync_exposed(m, l, mbs, edp, psi_e, g, w, ebw, lat, fwd_mb, bwd_mb);
        owned = (l->zero >= 1 && d > 1 ? dense / d : dense) +
                (l->zero >= 1 && edp > 1 ? psi_e / edp : psi_e);
    }
    /* Adam reads and writes fp32 master weights and two moments, reads the
     * gradient and writes the training-precision weight */
    double touched = (k > 0 ? 2 * k : 0) + g + w;
    c->optimizer_s = owned * touched / a->gpu.hbm_bw;
    if (l->offload) {
        /* the shard's gradients go to the host and its updated weights come
         * back over PCIe, and the host's cores run Adam on it (not hidden:
         * the step waits for both) */
        c->optimizer_s =
            owned * (g + w) / PCIE_BW + owned * a->gpus_per_node / CPU_ADAM_PARAMS_PER_S;
    }
}

/* ---- mixture of experts ----
 *
 * A MoE layer runs the dense layer's attention, then the router, the shared
 * experts and the routed experts as grouped GEMMs on the copies the busiest
 * expert rank receives (lib/memory.c: top_k of its tokens, gathered over
 * etp, times the imbalance): every rank waits for it at the combine.
 * Grouped GEMMs run below a dense GEMM's rate when each expert gets few
 * tokens: at M/(M + 1024) of it, M the tokens per local expert.  The
 * kernels alone lose less (DeepGEMM's H800 table, deepseek-ai/DeepGEMM
 * README at a6d97a1: 256 tokens per expert 63-72% of the dense kernels'
 * TFLOPS, 1024 90-95%, 4096 and more 99-107%, which M0 = 128 fits); 1024
 * is fitted on the published MoE runs of the cited commit's release
 * (tools/fit/published.py --fit BUILD --fit-current: the 12 describable
 * rows of NeMo 26.06-26.08 and Megatron-Core 2026-05 on H100, B300 and
 * GB200, priced as they ran: routing forced balanced, the all-to-all not
 * overlapped; 9 within 15% against 8 at 128, and 1.08x at most against
 * 1.55x), so it also carries what a layer's router, permutations and
 * per-expert launches cost beyond the GEMMs.  The older releases' dropless
 * premium (the host learning the token counts
 * before it launches the dispatch: Qwen3-30B-A3B on 16 H100 ran 5275
 * tokens/s a GPU dropless in 25.11 against 10494 token-dropping in 25.09)
 * is not priced: the same layouts run 1.3-1.6x faster dropless from 26.06
 * on (Qwen3-30B-A3B on 8 GB200: 26,112 tokens/s a GPU in 26.04, 40,706 in
 * 26.06), and fitted on those rows the premium comes out at 0; a site on
 * an older release calibrates (meshplan calibrate).  The alltoall
 * dispatcher (Megatron-LM's default for EP, token_dispatcher.py) sends each
 * copy to its expert's rank and back: two all-to-alls forward (dispatch,
 * combine) and two backward, exposed unless the EP overlap row of
 * lib/overlap.c is on, over NVLink between ranks of one island and the
 * network between nodes; expert TP adds an all-gather and a reduce-scatter
 * of the copies. */
#ifndef GROUPED_GEMM_M0 /* tools/fit/published.py --fit builds with -D */
#define GROUPED_GEMM_M0 1024.0
#endif
/* A GEMM with a short reduction dimension K runs at K/(K + 680) of its
 * long-K rate: DeepGEMM's dense table at M = 4096 (same README) gives K =
 * 512 43% of the best shape, 1536 73%, 2048 75%, 7168 96%, 16384 100%.
 * Experts' GEMMs are where K is short (fc2's K is the expert width); the
 * fit above keeps 680 (85-340 fit as many rows, 0.97x at the median
 * against 0.91x: not enough to leave the kernels' own table). */
#ifndef GEMM_K0
#define GEMM_K0 680.0
#endif

/* The share of the copies bound for other nodes that DeepEP sends over
 * the network (lib/overlap.c): a token crosses to a node once for all its
 * copies there.  k copies spread evenly over g nodes reach g(1 - (1 -
 * 1/g)^k) of them, against k copies sent one by one; group-limited routing
 * whose groups each lie on one node (arch.moe.groups a multiple of the
 * nodes: DeepSeek-V3's node-limited routing) keeps a token to group_top_k
 * of them (DeepSeek-V3 technical report, arXiv:2412.19437, 2.1.2 and 3.2.2). */
static double deepep_share(const mesh_model_t *m, double nodes)
{
    double g = nodes, k = m->moe.top_k;
    const mesh_router_t *r = &m->router;
    if (r->groups > 0 && r->group_top_k > 0 && r->group_top_k < g && r->groups % (int)g == 0)
        g = r->group_top_k;
    return g * (1 - pow(1 - 1 / g, k)) / k;
}

/* Seconds of one all-to-all in which the busiest rank receives `bytes`
 * (and sends as much): the part from its EP peers on its NVLink island
 * and the part from other nodes move at once, each at its link's rate.
 * DeepEP (deepep: its row of lib/overlap.c is on) sends fewer copies
 * across nodes and forwards them on over NVLink to the island's other GPUs
 * (its nodes are islands of 8: lib/layout.c). */
static double all_to_all(double bytes, const mesh_model_t *m, const mesh_layout_t *l,
                         const mesh_alloc_t *a, int deepep)
{
    if (l->ep <= 1)
        return 0;
    long span = mesh_ep_span(l);
    long island = mesh_ep_reach(a, deepep);
    double near = span <= island ? l->ep : (double)island / l->etp;
    near = near < 1 ? 1 : near;
    double on = bytes * (near - 1) / l->ep, off = bytes * (l->ep - near) / l->ep;
    if (deepep && off > 0) {
        on += off * (near - 1) / near;
        off *= deepep_share(m, l->ep / near);
    }
    double t_on = on / a->gpu.link_bw, t_off = off / a->gpu.net_bw;
    return (t_on > t_off ? t_on : t_off) + (off > 0 ? STEP_LAT_NET : STEP_LAT_LINK);
}

/* A MoE layer's forward on the busiest rank into *moe, from the dense
 * layer's *dense (their attention is the same); *comm gets its dispatch
 * traffic forward. */
static void moe_forward(const mesh_model_t *m, const mesh_layout_t *l, const mesh_alloc_t *a,
                        const layer_time_t *dense, layer_time_t *moe, double *comm)
{
    const mesh_gpu_t *g = &a->gpu;
    double peak = gemm_rate(m, g), hbm = g->hbm_bw, h = m->hidden, t = l->tp;
    double w = m->precision == MESH_PREC_FP32 ? 4 : 2, swiglu = mesh_style(m)->gated;
    double tokens = (double)l->micro_batch * m->seq_len / l->cp; /* the shared experts' */
    double own = mesh_moe_tokens(m, l), r = mesh_moe_received(m, l, own, m->moe_imbalance);
    double shared = (double)m->moe.shared_experts * m->moe.shared_ffn;
    double fe = (double)m->moe.ffn / l->etp, local = m->moe.experts / l->ep;
    /* the shared experts (TP-split like a dense MLP) and the router */
    double flops = 2 * tokens * h * (swiglu ? 3 : 2) * shared / t;
    double bytes = w * (tokens * h * 2 + h * (swiglu ? 3 : 2) * shared / t +
                        tokens * (swiglu ? 3 : 2) * shared / t);
    flops += 2 * own * h * m->moe.experts;
    bytes += w * (own * h + h * m->moe.experts) + 4.0 * own * m->moe.experts;
    double shared_s = flops / peak + bytes / hbm;
    /* the routed experts: grouped fc1 and fc2 over the rank's local
     * experts' weights, and the permutations reading and writing the
     * copies */
    double per_expert = r / local, eff = per_expert / (per_expert + GROUPED_GEMM_M0);
    double fc1 = 2 * r * h * (swiglu ? 2 : 1) * fe, fc2 = 2 * r * fe * h;
    double expert_bytes =
        w * (local * h * (swiglu ? 3 : 2) * fe + r * (2 * h + 3 * fe)) + 4 * w * r * h;
    double experts_s =
        (fc1 * (1 + GEMM_K0 / h) + fc2 * (1 + GEMM_K0 / fe)) / (peak * eff) + expert_bytes / hbm;
    *moe = *dense;
    moe->fwd =
        dense->fwd - dense->mlp_fwd + shared_s + experts_s + KERNELS_PER_LAYER / 2 * KERNEL_GAP_S;
    moe->mlp_fwd = 0; /* "mlp" recomputes no MoE layer */
    /* dispatch and combine: the copies before the expert TP gather, h wide;
     * under FP8 the all-to-all dispatch sends them in FP8 (Megatron-LM's MoE
     * guide, "FP8 Training": half the dispatch volume), DeepEP's in bf16
     * (fused_a2a.py hands it the layer's bf16 input), the combine in bf16 */
    double copies = h * r / l->etp, lin = m->precision == MESH_PREC_FP8 ? 1 : ACT_BYTES;
    int deepep = mesh_overlap_on(m, l, MESH_OVERLAP_DEEPEP);
    if (deepep)
        lin = ACT_BYTES;
    *comm = all_to_all(lin * copies, m, l, a, deepep) +
            all_to_all(ACT_BYTES * copies, m, l, a, deepep) +
            2 * collective(ACT_BYTES * h * r, l->etp, g->link_bw, STEP_LAT_LINK, 0, 1);
}

/* The pace of a model with experts or MTP layers: the slowest of its heavy
 * stages, each its dense and MoE layers (forward, backward, recomputation;
 * TP and dispatch traffic), the last the logits and the MTP layers with
 * their projection and own logits.  Per micro-batch: *compute, *tp, *ep,
 * and *fwd the stage's forward (what hides the DP traffic). */
static void moe_stages(const mesh_model_t *m, const mesh_layout_t *l, const mesh_alloc_t *a,
                       const layer_time_t *lt, double passes, double full, unsigned mods,
                       double *compute, double *tp, double *ep, double *fwd)
{
    layer_time_t moe = *lt;
    double comm = 0;
    if (mesh_is_moe(m))
        moe_forward(m, l, a, lt, &moe, &comm);
    double rc = l->recompute == MESH_RECOMPUTE_FULL ? full : 0;
    double sel = l->recompute == MESH_RECOMPUTE_SELECTIVE;
    double dense_rc = rc * lt->fwd + sel * selective_s(lt, mods);
    double moe_rc = rc * moe.fwd + sel * selective_s(&moe, mods);
    double tp_layer = lt->tp_comm * (2 + rc); /* full recomputation repeats the forward's */
    /* the MTP layers: a layer like the last, the 2h x h projection and the logits */
    const layer_time_t *mtp_layer = mesh_is_moe(m) ? &moe : lt;
    double proj = 2.0 * l->micro_batch * m->seq_len / l->cp * 2 * m->hidden * m->hidden / l->tp /
                  gemm_rate(m, &a->gpu);
    double logits = logits_forward(m, l, &a->gpu);
    int stages[4], n = mesh_heavy_stages_of(m, l, stages);
    double pace = -1;
    for (int i = 0; i < n; i++) {
        int dense, moes, mtp = stages[i] == l->pp - 1 ? m->mtp_layers : 0;
        mesh_stage_mix(m, l, stages[i], &dense, &moes);
        int moe_like = moes + (mesh_is_moe(m) ? mtp : 0);
        double c = dense * (passes * lt->fwd + dense_rc) + moes * (passes * moe.fwd + moe_rc);
        double f = dense * lt->fwd + moes * moe.fwd;
        if (stages[i] == l->pp - 1) {
            c += passes * logits + mtp * (passes * (mtp_layer->fwd + proj + logits) +
                                          (mesh_is_moe(m) ? moe_rc : dense_rc));
            f += logits + mtp * (mtp_layer->fwd + proj + logits);
        }
        double t = (dense + moes + mtp) * tp_layer;
        /* --overlap-moe-expert-parallel-comm (lib/overlap.c): another
         * micro-batch's forward and backward of the layer hide it */
        double e = moe_like * comm * (2 + rc);
        if (mesh_overlap_on(m, l, MESH_OVERLAP_MOE_A2A))
            e = moe_like * exposed(comm * (2 + rc), passes * moe.fwd);
        if (c + t + e > pace) {
            pace = c + t + e;
            *compute = c;
            *tp = t;
            *ep = e;
            *fwd = f;
        }
    }
}

void mesh_cost_estimate(const mesh_model_t *m, const mesh_layout_t *l, const mesh_alloc_t *a,
                        mesh_cost_t *out)
{
    double psi_e;
    double psi = max_stage_params(m, l, &psi_e);
    mesh_cost_priced(m, l, a, psi, psi_e, mesh_flops_per_token(m), NULL, out);
}

void mesh_cost_priced(const mesh_model_t *m, const mesh_layout_t *l, const mesh_alloc_t *a,
                      double psi, double psi_e, double flops_per_token,
                      const mesh_step_bytes_t *step, mesh_cost_t *out)
{
    memset(out, 0, sizeof(*out));
    layer_time_t lt;
    layer_forward(m, l, a, &lt);
    long mbs = mesh_layout_micro_batches(l, m->global_batch);
    /* layers of the fullest stage: a middle one, or under an explicit
     * layout whichever holds most */
    int q = m->has_arch ? (m->layers + l->pp - 1) / l->pp : 1;
    if (mesh_pp_explicit(m, l))
        q = mesh_pp_fullest_layers(m, l);

    /* per micro-batch on the fullest stage: forward, backward (2x), recompute */
    /* full:N recomputes N of the stage's q layers */
    double full = l->recompute == MESH_RECOMPUTE_FULL && l->recompute_layers > 0
                      ? (double)(l->recompute_layers < q ? l->recompute_layers : q) / q
                      : 1;
    unsigned mods = l->recompute_modules > 0 ? (unsigned)l->recompute_modules : MESH_RC_CORE_ATTN;
    double recompute = l->recompute == MESH_RECOMPUTE_FULL        ? full * lt.fwd
                       : l->recompute == MESH_RECOMPUTE_SELECTIVE ? selective_s(&lt, mods)
                                                                  : 0;
    /* backward computes input and weight gradients (2x forward); LoRA's
     * frozen weights need only the input gradients */
    double passes = m->finetune == MESH_FINETUNE_LORA ? 2 : 3;
    double compute = q * (passes * lt.fwd + recompute);
    /* the last stage adds the logits; only counts if it is the slowest */
    double last = mesh_pp_stage_layers(m, l, l->pp - 1) * (passes * lt.fwd + recompute) +
                  passes * logits_forward(m, l, &a->gpu);
    if (last > compute)
        compute = last;
    double tp = q * lt.tp_comm * (l->recompute == MESH_RECOMPUTE_FULL ? 2 + full : 2);
    double ep = 0, fwd = q * lt.fwd;
    if (mesh_is_moe(m) || m->mtp_layers)
        moe_stages(m, l, a, &lt, passes, full, mods, &compute, &tp, &ep, &fwd);
    double cp_win = mesh_overlap_on(m, l, MESH_OVERLAP_CP_RING) ? lt.attn_fwd : 0;
    double cp = q * (exposed(lt.cp_comm, cp_win) + exposed(2 * lt.cp_comm, 2 * cp_win));
    double pp = 0;
    if (l->pp > 1 && m->has_arch) {
        int sp = l->sequence_parallel == 1;
        double act =
            ACT_BYTES * l->micro_batch * (double)m->seq_len / l->cp * m->hidden / (sp ? l->tp : 1);
        /* the slowest stage boundary sets the pace: one crosses nodes
         * whenever the pipeline spans more than one */
        int cross = crosses_nodes(mesh_layout_world(l), a);
        double bw = cross ? a->gpu.net_bw : a->gpu.link_bw;
        pp = 2.0 * l->vpp * (act / bw + (cross ? STEP_LAT_NET : STEP_LAT_LINK));
    }
    double slots = (double)mbs + (double)(l->pp - 1) / l->vpp; /* m micro-batches + the bubble */
    out->bubble = mesh_pipeline_bubble(l->pp, l->vpp, mbs);
    out->compute_s = slots * compute;
    out->tp_comm_s = slots * tp;
    out->cp_comm_s = slots * cp;
    out->pp_comm_s = slots * pp;
    out->ep_comm_s = slots * ep;
    mesh_step_bytes_t own = step ? *step : mesh_step_bytes(m, l);
    dp_cost(m, l, a, mbs, psi, psi_e, fwd, 2 * fwd, &own, out);
    mesh_calib_scale_cost(out, &a->gpu); /* the site's calibration, if any (lib/calib.c) */
    out->step_seconds = out->compute_s + out->tp_comm_s + out->cp_comm_s + out->pp_comm_s +
                        out->dp_comm_s + out->optimizer_s + out->ep_comm_s;

    double tokens = (double)m->global_batch * m->seq_len;
    double gpus = (double)mesh_world(a);
    out->tokens_per_sec = tokens / out->step_seconds;
    out->tflops_per_gpu = flops_per_token * tokens / out->step_seconds / gpus / 1e12;
    out->mfu = out->tflops_per_gpu * 1e12 / peak_of(m, &a->gpu);
}
