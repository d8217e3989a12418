/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The memory model: bytes per GPU of a layout, for its worst rank.
 *
 * Model states follow the ZeRO paper (Rajbhandari et al. 2020, section 5):
 * w bytes per weight, g per gradient, k per parameter of optimizer state,
 * with the sharded parts divided over the data-parallel group.  TP splits
 * every matrix of a layer; PP gives each stage its layers, the first stage
 * the input embedding and the last the output layer.
 *
 * Activations follow Korthikanti et al. 2022 ("Reducing Activation
 * Recomputation in Large Transformer Models", section 4 and Table 2), term by
 * term, so that they generalise where the paper's constants do not: grouped-
 * query attention stores smaller K and V, SwiGLU stores a wider MLP,
 * FlashAttention stores no s x s scores, and dropout-free training stores no
 * masks.  With the paper's own assumptions (MHA, GeLU, f = 4h, dropout, no
 * FlashAttention) every Table 2 row comes out exactly.
 */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "meshplan/accounting.h"
#include "meshplan/memory.h"

/* One layer's activations with an MLP of width f (the dense ffn; a MoE
 * layer's shared experts, 0 without them). */
static double layer_act(const mesh_model_t *m, int mb, int tp, int cp, int sp, mesh_recompute_t rc,
                        unsigned modules, double f);

double mesh_activation_layer(const mesh_model_t *m, int mb, int tp, int cp, int sp,
                             mesh_recompute_t rc, unsigned modules)
{
    return layer_act(m, mb, tp, cp, sp, rc, modules, m->ffn);
}

static double layer_act(const mesh_model_t *m, int mb, int tp, int cp, int sp, mesh_recompute_t rc,
                        unsigned modules, double f)
{
    if (!m->has_arch)
        return 0;
    double s = (double)m->seq_len / cp, b = mb, h = m->hidden;
    double sbh = s * b * h;
    double rep_div = sp ? tp : 1; /* SP shards what plain TP replicates */

    if (rc == MESH_RECOMPUTE_FULL) /* only the layer's input is kept */
        return 2 * sbh / rep_div;
    double a = m->heads, q, kv;
    mesh_model_attn_widths(m, &q, &kv);
    if (rc != MESH_RECOMPUTE_SELECTIVE)
        modules = 0;
    else if (modules == 0) /* Megatron's default: recompute_modules = ["core_attn"] */
        modules = MESH_RC_CORE_ATTN;

    int masks = m->dropout > 0;
    /* Under FP8 Transformer Engine saves each linear layer's input in FP8,
     * one byte (linear.py L428-436, L614-621 at d0067d0): the QKV, fc1,
     * projection and fc2 inputs. */
    double lin = m->precision == MESH_PREC_FP8 ? 1 : 2;
    /* replicated under plain TP: two norm inputs (4sbh), the QKV and fc1
     * inputs (the norms' outputs, 2sbh each), and two 1-byte dropout masks.
     * Recomputing "layernorm" saves nothing here: Megatron-LM recomputes
     * only a norm that is a module of its own (transformer_layer.py
     * L475-477, L522-527 at d98e8a6), and its default Transformer Engine
     * layer fuses both norms into the linear layers after them
     * (gpt_layer_specs.py L258-259, L313-336). */
    double replicated = 4 * sbh + 2 * lin * sbh + (masks ? 2 * sbh : 0);
    /* split by TP: Q (2sbh*q), K and V (2sbh*kv each), the attention
     * output that feeds the projection, and the MLP: GeLU keeps its input
     * and output (2sbf each), squared ReLU its ReLU's output (which the
     * square's backward reads too) and the square; fused SwiGLU keeps the
     * 2f-wide fc1 output (4sbf) and its product; recomputing the MLP keeps
     * only its input */
    double mlp = (mesh_style(m)->gated ? 4 : 2) * s * b * f + lin * s * b * f;
    /* the attention output: the projection's input; under FP8 the
     * projection keeps an FP8 copy while the attention core keeps its
     * bf16 output for its own backward, unless the core is recomputed */
    double attn_out = lin == 2 ? 2 : modules & MESH_RC_CORE_ATTN ? 1 : 3;
    /* TP wider than the KV heads gives each rank a whole KV head
     * (mesh_kv_replication) */
    double split = 2 * sbh * q + 4 * sbh * kv * mesh_kv_replication(m, tp) + attn_out * sbh * q +
                   (modules & MESH_RC_MLP ? 0 : mlp);
    double whole = 0; /* kept whole on every TP rank, even under SP */
    if (m->mla.kv_lora_rank) {
        /* MLA: queries and keys heads*(qk + rope) wide (q), values and the
         * attention output heads*v (kv); the compressed queries and
         * keys/values, their norms' inputs (2 bytes) and the up
         * projections' inputs, kept like the layer's input.  Recomputing
         * "mla_up_proj" (MESH_RC_MLA_UP_PROJ) drops the queries, keys and
         * values, and the up projections' inputs too: recomputed, the
         * norms and up projections run without autograd, and the
         * checkpoint keeps only its arguments (random.py L690, L777 at
         * d98e8a6), the compressed tensors and the keys' RoPE part, d_r
         * wide, all-gathered under SP (multi_latent_attention.py L760-762) */
        int up = (modules & MESH_RC_MLA_UP_PROJ) != 0;
        double qkv = up ? 0 : 4 * sbh * q + 2 * sbh * kv;
        split = qkv + attn_out * sbh * kv + (modules & MESH_RC_MLP ? 0 : mlp);
        replicated += (2 + (up ? 0 : lin)) * s * b * (m->mla.q_lora_rank + m->mla.kv_lora_rank);
        whole = up ? 2 * s * b * m->mla.qk_rope_head_dim : 0;
        /* under FP8 the query and key/value down projections, two linear
         * layers, each save their own FP8 copy of the layer's input (in
         * bf16 they share the one tensor) */
        if (lin == 1)
            replicated += sbh;
    }
    /* the attention core: softmax output (2 bytes), and with dropout its
     * mask (1) and output (2), per head, local queries x all keys: 5as^2b in
     * the paper.  FlashAttention keeps only the fp32 log-sum-exp per row.
     * Recomputing the core stores neither. */
    double core = 0;
    if (!(modules & MESH_RC_CORE_ATTN)) {
        if (m->flash_attention)
            core = 4 * a * s * b;
        else
            core = a * s * (s * cp) * b * (2 + (masks ? 3 : 0));
    }
    return replicated / rep_div + whole + (split + core) / tp;
}

/* Micro-batches in flight on a stage under 1F1B (its layers' activations
 * held at once, in micro-batches): stage r of p holds min(p - r, m) of
 * them; interleaved, its warm-up is 2(p-r-1) + (v-1)p chunks of 1/v of
 * its layers (Megatron-LM schedules.py), plus the one in its steady
 * state. */
static double stage_in_flight(const mesh_layout_t *l, long mbs, int stage)
{
    int p = l->pp, v = l->vpp;
    if (v > 1) {
        double chunks = 2.0 * (p - stage - 1) + (double)(v - 1) * p + 1;
        return (chunks < (double)mbs * v ? chunks : (double)mbs * v) / v;
    }
    return p - stage < mbs ? p - stage : mbs;
}

static int groups_of(const mesh_layout_t *l)
{
    int groups = (l->tp > 1) + (l->cp > 1) + (l->dp > 1) + (l->pp > 1) * 2; /* pp: + embedding */
    if (l->ep > 0) /* a MoE layout's expert groups */
        groups += (l->ep > 1) + (l->etp > 1) + (mesh_layout_edp(l) > 1);
    return groups;
}

double mesh_moe_imbalance(const mesh_model_t *m, const mesh_assumptions_t *assume)
{
    if (m->moe_imbalance > 0)
        return m->moe_imbalance;
    return assume && assume->moe_imbalance > 0 ? assume->moe_imbalance : 1;
}

/* One layer's activations for one micro-batch under the layout's
 * recomputation, and without any (what partial and full recomputation
 * still hold for the layers they leave alone or are recomputing); a MoE
 * layer's likewise, and its dispatcher's buffers. */
typedef struct layer_act {
    double chosen, none;
    double moe_chosen, moe_none, dispatch;
    double merged; /* what the expert all-to-all overlap holds besides (0: off) */
} layer_act_t;

/* ---- a MoE layer's activations on the busiest expert rank ----
 *
 * Megatron-LM's alltoall dispatcher with grouped GEMMs
 * (transformer/moe/token_dispatcher.py MoEAlltoAllTokenDispatcher,
 * experts.py TEGroupedMLP, at d98e8a6): each rank routes its T tokens
 * (its sequence-parallel shard) to top_k experts, all-to-alls the copies
 * over EP, all-gathers them over expert TP, and runs its experts on what it
 * received.  The routed copies a rank receives are T*k*etp on average; the
 * busiest rank gets `imbalance` times that under dropless routing, at most
 * the capacity factor's share when tokens are dropped, and never more than
 * every token of its EP group could send it. */

double mesh_moe_received(const mesh_model_t *m, const mesh_layout_t *l, double tokens,
                         double imbalance)
{
    double k = m->moe.top_k, ep = l->ep > 0 ? l->ep : 1, etp = l->etp > 0 ? l->etp : 1;
    double local = m->moe.experts / ep, most = ep * (k < local ? k : local) / k;
    double f = imbalance < most ? imbalance : most;
    if (m->moe.capacity_factor > 0 && m->moe.capacity_factor < f)
        f = m->moe.capacity_factor;
    return tokens * k * etp * (f > 1 ? f : 1);
}

double mesh_moe_tokens(const mesh_model_t *m, const mesh_layout_t *l)
{
    int rep_div = l->sequence_parallel == 1 ? l->tp : 1;
    return (double)m->seq_len / l->cp * l->micro_batch / rep_div;
}

double mesh_activation_moe_layer(const mesh_model_t *m, const mesh_layout_t *l, mesh_recompute_t rc,
                                 unsigned modules, double imbalance)
{
    if (!m->has_arch || !mesh_is_moe(m))
        return 0;
    int sp = l->sequence_parallel == 1;
    if (rc == MESH_RECOMPUTE_FULL)
        return layer_act(m, l->micro_batch, l->tp, l->cp, sp, rc, 0, 0);
    if (rc != MESH_RECOMPUTE_SELECTIVE)
        modules = 0;
    /* "mlp" recomputes a dense layer's MLP only (transformer_layer.py
     * L536-539): the shared experts and the routed ones stay stored */
    double shared = (double)m->moe.shared_experts * m->moe.shared_ffn;
    unsigned left = modules & ~MESH_RC_MLP;
    if (rc == MESH_RECOMPUTE_SELECTIVE && modules && !left) /* not the default core_attn */
        rc = MESH_RECOMPUTE_NONE;
    double base = layer_act(m, l->micro_batch, l->tp, l->cp, sp, rc, left, shared);
    double h = m->hidden, fe = (double)m->moe.ffn / (l->etp > 0 ? l->etp : 1);
    double lin = m->precision == MESH_PREC_FP8 ? 1 : 2, t = mesh_moe_tokens(m, l);
    /* each copy received: the grouped fc1's input, its output (the weighted
     * SwiGLU's input, 2*fe wide; GeLU's fe), the fc2 input, and its fp32
     * routing probability */
    double act = (mesh_style(m)->gated ? 4 : 2) * fe;
    double routed = mesh_moe_received(m, l, t, imbalance) * (lin * h + act + lin * fe + 4);
    /* the router's fp32 logits and scores (router.py), and the int32
     * permutation maps of each local copy, both ways; the aux loss that the
     * exported flags turn on, its own fp32 scores and bool routing map
     * (router.py L804-812, moe_utils.py L960 at d98e8a6); under FP8 the
     * router, no FP8 linear layer, also saves its bf16 input (moe_utils.py
     * L1382) */
    double router = 8 * t * m->moe.experts + 8 * t * m->moe.top_k + 5 * t * m->moe.experts +
                    (lin == 1 ? 2 * t * h : 0);
    return base + routed + router;
}

/* What a MoE layer holds while it runs, beyond what it stores for the
 * backward: once per stage, not per micro-batch in flight, bf16 rows of h
 * (Megatron-LM at d98e8a6):
 * - the permuted copies this rank sends and the all-to-all's output
 *   (before the expert TP gather), both referenced for the whole layer
 *   (moe_layer.py L663, L680-681);
 * - under FP8, the experts' bf16 input, gathered over expert TP and sorted
 *   by local expert, a tensor of its own unless there is one expert and no
 *   expert TP (in bf16 it is the fc1 input the layer stores); and the
 *   experts' output (moe_layer.py L565-569);
 * - with several local experts, the output sorted back for the combine
 *   (token_dispatcher.py L817, moe_utils.py L664);
 * - under FP8, the padded copies of the experts' input and output
 *   (experts.py L899, L1028, L1043).
 * In bf16 with one local expert and no expert TP, the all-to-all's output
 * is itself the experts' input, which the layer stores anyway. */
double mesh_moe_dispatch_buffers(const mesh_model_t *m, const mesh_layout_t *l, double imbalance)
{
    double t = mesh_moe_tokens(m, l), etp = l->etp > 0 ? l->etp : 1;
    double r = mesh_moe_received(m, l, t, imbalance);
    int fp8 = m->precision == MESH_PREC_FP8, several = m->moe.experts > (l->ep > 0 ? l->ep : 1);
    double rows = t * m->moe.top_k + r / etp;
    rows += r * ((fp8 && (several || etp > 1)) + 1 + several + (fp8 ? 3 : 0));
    if (!fp8 && !several && etp == 1)
        rows -= r;
    return 2.0 * m->hidden * rows;
}

/* ---- what the exported overlaps hold (lib/overlap.c) ---- */

/* --delay-wgrad-compute: every Transformer Engine linear layer keeps its
 * output's gradient from its dgrad to its deferred wgrad (Megatron-LM's TE
 * wrappers pass the flag to each: extensions/transformer_engine.py
 * L1170-1174, L1441-1445, L2424-2433 at d98e8a6), and the merged schedule
 * runs the experts' wgrad only after the other micro-batch's dispatch, the
 * attention's after its combine (model_chunk_schedule_plan.py L261-302).
 * bf16: each routed copy's fc2 and fc1 outputs (h, and 2 f_e under SwiGLU
 * or f_e), the QKV output (h(q + 2 kv)/t, KV heads as TP replicates them)
 * and the projection's (h, gathered over SP) for every token of the
 * sequence shard, and the shared experts' fc1 and fc2 outputs.  MLA is
 * priced with its query and value widths, as its activations are. */
static double delayed_wgrad_grads(const mesh_model_t *m, const mesh_layout_t *l, double imbalance)
{
    double h = m->hidden, fe = (double)m->moe.ffn / (l->etp > 0 ? l->etp : 1);
    double fs = (double)m->moe.shared_experts * m->moe.shared_ffn, q, kv;
    double wide = 1 + mesh_style(m)->gated;
    mesh_model_attn_widths(m, &q, &kv);
    double sb = (double)m->seq_len / l->cp * l->micro_batch;
    double experts = mesh_moe_received(m, l, mesh_moe_tokens(m, l), imbalance) * (h + wide * fe);
    double attn = sb * h * ((q + 2 * kv * mesh_kv_replication(m, l->tp)) / l->tp + 1);
    double shared = fs > 0 ? sb * (h + wide * fs / l->tp) : 0;
    return 2 * (experts + attn + shared);
}

/* --overlap-moe-expert-parallel-comm runs one micro-batch's forward layer
 * by layer beside another's backward (combined_1f1b.py L63-66, L103-121;
 * model_chunk_schedule_plan.py L554-574 at d98e8a6).  Each pair of layers
 * builds the forward's before it releases the backward's (release_state
 * after the pair), and interleaving warms up one chunk more
 * (schedules.py L966-970), so wherever a backward meets a forward the
 * stage holds one MoE layer more than 1F1B counts, a second set of the
 * dispatcher's buffers (the two layers run at once), and the delayed
 * weight gradients' inputs. */
static double overlap_held(const mesh_model_t *m, const mesh_layout_t *l, double imbalance,
                           double moe_layer, double dispatch)
{
    return moe_layer + dispatch + delayed_wgrad_grads(m, l, imbalance);
}

double mesh_moe_overlap_held(const mesh_model_t *m, const mesh_layout_t *l, double imbalance)
{
    if (!m->has_arch || !mesh_overlap_on(m, l, MESH_OVERLAP_MOE_A2A))
        return 0;
    unsigned mods = l->recompute_modules > 0 ? (unsigned)l->recompute_modules : 0;
    return overlap_held(m, l, imbalance,
                        mesh_activation_moe_layer(m, l, l->recompute, mods, imbalance),
                        mesh_moe_dispatch_buffers(m, l, imbalance));
}

/* --tp-comm-overlap's Userbuffers, once per GPU whatever its layers.
 * Megatron-LM asks Transformer Engine for them with the layer input's
 * shape, seq x micro-batch / cp rows of h (initialize.py L217-227, L240-246
 * at d98e8a6); initialize_ub registers one buffer of that shape for each
 * GEMM it overlaps, 12 by default: 4 ring-exchange, 2 pipelined, 4 bulk
 * and 2 external (pytorch/module/base.py L336-360, L560-569 at d0067d0;
 * comm_gemm_overlap.cpp L419, L813-820: a ring-exchange all-gather keeps
 * the whole shape).  Under FP8 the 8 all-gather buffers hold one byte an
 * element (base.py L472-476), the 4 reduce-scatter ones bf16. */
double mesh_tp_overlap_buffers(const mesh_model_t *m, const mesh_layout_t *l)
{
    if (!mesh_overlap_on(m, l, MESH_OVERLAP_TP))
        return 0;
    double rows = (double)m->seq_len * l->micro_batch / l->cp;
    double gathered = m->precision == MESH_PREC_FP8 ? 1 : 2;
    return rows * m->hidden * (8 * gathered + 4 * 2);
}

/* DeepEP's buffers, once per GPU: Megatron-LM sizes them with DeepEP's own
 * hints for the tp_ep group's configuration (fused_a2a.py get_buffer at
 * d98e8a6), at 20 SMs (token_dispatcher.py L1287-1292), for bf16 tokens h
 * wide.  deepseek-ai/DeepEP@030cdf0 csrc/config.hpp: per channel (half the
 * SMs) and NVLink peer, the receive tokens' data, 8 bytes of source
 * metadata, 128 top-k indices (8 bytes) and weights (4) and 128 scales
 * (4), and some counters; beyond a node, per channel and node, twice
 * (sending and receiving) as much again with 16 bytes more, and 1 MiB;
 * each rounded up to 128 bytes; and its 32 MiB workspace (csrc/kernels/
 * configs.cuh NUM_WORKSPACE_BYTES, allocated by the Buffer: deep_ep.cpp). */
double mesh_deepep_buffers(const mesh_model_t *m, const mesh_layout_t *l)
{
    if (!mesh_overlap_on(m, l, MESH_OVERLAP_DEEPEP)) /* first: it is asked of every pricing */
        return 0;
    long ranks = mesh_ep_span(l);
    const mesh_deepep_config_t *c = mesh_deepep_config(ranks);
    if (!c) /* the row asks for one: never so, but slurmctld must not crash on it */
        return 0;
    double channels = 20 / 2, hidden = 2.0 * m->hidden, per_token = 8 + 128 * (8 + 4 + 4);
    double nvl_ranks = ranks < 8 ? ranks : 8, rdma_ranks = ranks > 8 ? ranks / 8 : 1;
    double nvl =
        channels * nvl_ranks * ((2 * rdma_ranks + 3) * 4 + c->nvl_recv * (hidden + per_token));
    double rdma = 0;
    if (ranks > 8)
        rdma = channels * rdma_ranks *
                   ((8 * 2 + 2) * 2 * 4 + c->rdma_recv * 2 * (hidden + per_token + 16)) +
               1048576;
    return ceil(nvl / 128) * 128 + ceil(rdma / 128) * 128 + 32.0 * 1024 * 1024;
}

/* The activations of one layer without recomputation, dense and MoE,
 * from *plain where it holds l's (kept there otherwise). */
static void plain_activations(const mesh_model_t *m, const mesh_layout_t *l, double imbalance,
                              mesh_plain_memo_t *plain, double *dense, double *moe)
{
    int sp = l->sequence_parallel == 1;
    mesh_plain_memo_t key = {1, l->micro_batch, l->tp, l->cp, sp, l->ep, l->etp, 0, 0};
    if (plain && plain->valid && plain->mb == key.mb && plain->tp == key.tp &&
        plain->cp == key.cp && plain->sp == key.sp && plain->ep == key.ep &&
        plain->etp == key.etp) {
        *dense = plain->dense;
        *moe = plain->moe;
        return;
    }
    *dense = mesh_activation_layer(m, l->micro_batch, l->tp, l->cp, sp, MESH_RECOMPUTE_NONE, 0);
    *moe = mesh_activation_moe_layer(m, l, MESH_RECOMPUTE_NONE, 0, imbalance);
    if (plain) {
        key.dense = *dense;
        key.moe = *moe;
        *plain = key;
    }
}

static layer_act_t layer_activations(const mesh_model_t *m, const mesh_layout_t *l,
                                     double imbalance, mesh_plain_memo_t *plain)
{
    int sp = l->sequence_parallel == 1;
    unsigned mods = l->recompute_modules > 0 ? (unsigned)l->recompute_modules : 0;
    layer_act_t a;
    plain_activations(m, l, imbalance, plain, &a.none, &a.moe_none);
    /* without recomputation the modules are not read: the plain layer */
    int none = l->recompute == MESH_RECOMPUTE_NONE;
    a.chosen = none
                   ? a.none
                   : mesh_activation_layer(m, l->micro_batch, l->tp, l->cp, sp, l->recompute, mods);
    a.moe_chosen = a.dispatch = a.merged = 0;
    if (mesh_is_moe(m)) {
        a.moe_chosen =
            none ? a.moe_none : mesh_activation_moe_layer(m, l, l->recompute, mods, imbalance);
        a.dispatch = mesh_moe_dispatch_buffers(m, l, imbalance);
        /* mesh_moe_overlap_held, from the layer and buffers just priced */
        if (mesh_overlap_on(m, l, MESH_OVERLAP_MOE_A2A))
            a.merged = overlap_held(m, l, imbalance, a.moe_chosen, a.dispatch);
    }
    return a;
}

/* A stage of a MoE (or MTP) model: la becomes the mean of its dense and
 * MoE layers (a stage holds the model's first layers in order, so which
 * of them a full:N recomputes is priced at the mean), the layer being
 * recomputed the larger kind; returns what comes besides: the
 * dispatcher's buffers, what the expert all-to-all overlap holds where a
 * backward meets a forward (`merging`: the stage does not hold every
 * micro-batch at once), and on the last stage the MTP layers (one
 * micro-batch in flight there), their 2h-wide projection input and their
 * own logits. */
static double stage_moe_mix(const mesh_model_t *m, const mesh_layout_t *l, layer_act_t *la,
                            int stage, int merging, double *rest, double *recomputing)
{
    int dense, moe;
    mesh_stage_mix(m, l, stage, &dense, &moe);
    double extra = moe > 0 ? la->dispatch + (merging ? la->merged : 0) : 0, layers = dense + moe;
    if (stage == l->pp - 1 && m->mtp_layers) {
        double s = (double)m->seq_len / l->cp, b = l->micro_batch, h = m->hidden;
        double rep_div = l->sequence_parallel == 1 ? l->tp : 1;
        double layer = mesh_is_moe(m) ? la->moe_chosen : la->chosen;
        extra += m->mtp_layers * (layer + 4 * s * b * h / rep_div +
                                  6 * s * b * mesh_model_padded_vocab(m, l->tp) / l->tp);
        /* what a MoE layer holds while it runs: once a stage, for one
         * layer runs at a time */
        if (mesh_is_moe(m) && moe == 0)
            extra += la->dispatch;
    }
    if (moe > 0) {
        la->chosen = (dense * la->chosen + moe * la->moe_chosen) / layers;
        *rest = (dense * la->none + moe * la->moe_none) / layers;
        *recomputing = la->moe_none > la->none ? la->moe_none : la->none;
    }
    return extra;
}

/* Activations of one stage, which holds `layers` layers
 * (mesh_pp_stage_layers): its layers' for every micro-batch in flight
 * (recompute full:N stores only the inputs of N of them), the token ids,
 * the logits, and the layer being recomputed. */
static double stage_activations(const mesh_model_t *m, const mesh_layout_t *l, layer_act_t la,
                                long mbs, int stage, int layers)
{
    int sp = l->sequence_parallel == 1;
    double in_flight = stage_in_flight(l, mbs, stage);
    /* what only MoE and MTP layers add; the layers full:N leaves alone, and
     * the one full recomputation is recomputing */
    double extra = 0, rest = la.none, recomputing = la.none;
    if (mesh_is_moe(m) || m->mtp_layers)
        extra = stage_moe_mix(m, l, &la, stage, in_flight < mbs, &rest, &recomputing);
    double per_layer = la.chosen;
    if (l->recompute == MESH_RECOMPUTE_FULL && l->recompute_layers > 0) {
        /* Megatron's block method: the first N layers of the stage */
        int n = l->recompute_layers < layers ? l->recompute_layers : layers;
        per_layer = (n * la.chosen + (layers - n) * rest) / layers;
    }
    double act = in_flight * layers * per_layer;
    double s = (double)m->seq_len / l->cp, b = l->micro_batch, h = m->hidden;
    double rep_div = sp ? l->tp : 1;
    if (stage == 0) { /* int64 token ids (+ embedding dropout mask) per micro-batch in flight */
        double inflight = l->pp < mbs ? l->pp : mbs;
        act += inflight * (8 * s * b + (m->dropout > 0 ? s * b * h / rep_div : 0));
    }
    /* final norm and output-layer inputs, and the logits: the loss makes an
     * fp32 copy (4 bytes) while the 16-bit ones (2) are still held */
    if (stage == l->pp - 1)
        act += 4 * s * b * h / rep_div + 6 * s * b * mesh_model_padded_vocab(m, l->tp) / l->tp;
    if (l->recompute == MESH_RECOMPUTE_FULL) /* the layer being recomputed */
        act += recomputing;
    return act + extra;
}

/* One framework's model-state terms summed per memory part (weights,
 * grads, optimizer, host): per parameter kept whole, per parameter sharded
 * over the dp-cp group, and fixed buffers. */
typedef struct states_sum {
    double whole[4], shard[4], fixed[4];
    /* a MoE model's expert parameters: sharded over the expert data-parallel
     * group (mesh_layout_edp) instead */
    double whole_e[4], shard_e[4];
} states_sum_t;

/* Terms t[0..n) of one framework summed into *out: a stage's states are
 * then whole*psi + shard*psi/d + fixed. */
static void sum_terms(const mesh_term_t *t, int n, const mesh_layout_t *l, states_sum_t *out)
{
    int d = l->dp * l->cp; /* Megatron shards the optimizer over the dp-cp group */
    /* and a MoE model's experts over the expert data-parallel group
     * (distrib_optimizer.py builds the expert parameters' buffers on
     * parallel_state's expert DP group) */
    long edp = mesh_layout_edp(l);
    memset(out, 0, sizeof(*out));
    for (int i = 0; i < n; i++) {
        int k = t[i].host ? 3 : (int)t[i].part;
        if (d > 1 && l->zero >= t[i].shard_from)
            out->shard[k] += t[i].per_param;
        else
            out->whole[k] += t[i].per_param;
        if (edp > 1 && l->zero >= t[i].shard_from)
            out->shard_e[k] += t[i].per_param;
        else
            out->whole_e[k] += t[i].per_param;
        out->fixed[k] += t[i].fixed;
    }
}

void mesh_states_parts(const mesh_model_t *m, const mesh_layout_t *l, const mesh_heavy_t *h,
                       mesh_states_parts_t *out)
{
    double d = (double)l->dp * l->cp, edp = (double)mesh_layout_edp(l);
    states_sum_t sums[3][2];
    out->n = h->n;
    memcpy(out->stage, h->stage, sizeof(out->stage));
    memcpy(out->layers, h->layers, sizeof(out->layers));
    out->nf = mesh_frameworks_priced(m->framework, out->fw);
    /* A framework's terms differ between stages only in the gathered units
     * of ZeRO-2/3, larger where a stage holds the embedding or the output
     * layer: one set for the end stages, one for the middle ones. */
    for (int f = 0; f < out->nf; f++)
        for (int mid = 0; mid < 2; mid++) {
            mesh_term_t t[MESH_TERMS_MAX];
            if (mid && (l->pp <= 2 || l->zero < 2))
                sums[f][1] = sums[f][0];
            else
                sum_terms(t, mesh_state_terms(m, out->fw[f], l, mid, t), l, &sums[f][mid]);
        }
    for (int i = 0; i < out->n; i++) {
        int mid = out->stage[i] != 0 && out->stage[i] != l->pp - 1;
        /* the dense parameters' states, sharded over the dp-cp group, and
         * the experts', over their own */
        double psi = h->psi[i], psi_e = h->psi_e[i];
        double dense = psi - psi_e, experts_d = psi_e > 0 ? psi_e / edp : 0;
        for (int f = 0; f < out->nf; f++) {
            const states_sum_t *c = &sums[f][mid];
            for (int k = 0; k < 4; k++)
                out->part[i][f][k] = c->whole[k] * dense + c->shard[k] * (dense / d) +
                                     c->whole_e[k] * psi_e + c->shard_e[k] * experts_d +
                                     c->fixed[k];
        }
    }
}

void mesh_memory_priced(const mesh_model_t *m, const mesh_layout_t *l, const mesh_alloc_t *a,
                        const mesh_assumptions_t *assume, const mesh_states_parts_t *states,
                        mesh_plain_memo_t *plain, mesh_memory_t *out)
{
    double host = 0; /* the most any stage needs under any framework */
    layer_act_t la = {0};
    long mbs = mesh_layout_micro_batches(l, m->global_batch);
    if (m->has_arch)
        la = layer_activations(m, l, mesh_moe_imbalance(m, assume), plain);
    /* once per GPU, whatever its stage */
    double ub = mesh_tp_overlap_buffers(m, l) + mesh_deepep_buffers(m, l);
    double comm = assume->overhead_comm * groups_of(l);
    for (int i = 0; i < states->n; i++) {
        int stage = states->stage[i];
        double act = m->has_arch ? stage_activations(m, l, la, mbs, stage, states->layers[i]) : 0;
        double overhead = assume->overhead_context + comm + assume->fragmentation * act + ub;
        /* auto: the framework whose accounting needs the most sets the bound */
        for (int f = 0; f < states->nf; f++) {
            const double *part = states->part[i][f];
            double total = part[0] + part[1] + part[2] + act + overhead;
            host = part[3] > host ? part[3] : host;
            if ((i == 0 && f == 0) || total > out->total) {
                memset(out, 0, sizeof(*out));
                out->stage = stage;
                out->framework = states->fw[f];
                out->weights = part[MESH_PART_WEIGHTS];
                out->grads = part[MESH_PART_GRADS];
                out->optimizer = part[MESH_PART_OPTIMIZER];
                out->host = part[3];
                out->activations = act;
                out->overhead = overhead;
                out->total = total;
            }
        }
    }
    out->host = host;
    mesh_calib_scale_memory(out, &a->gpu); /* the site's calibration, if any (lib/calib.c) */
    out->capacity = mesh_policy_usable(assume, &a->gpu);
}

void mesh_memory_estimate(const mesh_model_t *m, const mesh_layout_t *l, const mesh_alloc_t *a,
                          const mesh_assumptions_t *assume, mesh_memory_t *out)
{
    mesh_heavy_t heavy;
    mesh_states_parts_t states;
    mesh_heavy_count(m, l, &heavy);
    mesh_states_parts(m, l, &heavy, &states);
    mesh_memory_priced(m, l, a, assume, &states, NULL, out);
}

/* ---- the parts of mesh_memory_t, for the reports ---- */

/* the name and the JSON key are the field's own, and its offset is taken from it */
#define PART(f, lbl, line)                                                                         \
    {                                                                                              \
        .name = #f, .key = #f, .label = lbl, .offset = offsetof(mesh_memory_t, f), .doc = line     \
    }
static const mesh_memory_part_t parts[MESH_MEMORY_PARTS] = {
    PART(weights, "weights", "training-precision weights (+ ZeRO-3 gathered layers)"),
    PART(grads, "grads", "gradient buffers"),
    PART(optimizer, "optimizer", "fp32 master weights and optimizer moments"),
    PART(activations, "activations", "stored for the backward pass, all micro-batches in flight"),
    PART(overhead, "overhead", "CUDA context, communication buffers, fragmentation"),
};
_Static_assert(MESH_PART_WEIGHTS == 0 && MESH_PART_GRADS == 1 && MESH_PART_OPTIMIZER == 2,
               "the model states' parts lead the table, in mesh_part_t's order");

const mesh_memory_part_t *mesh_memory_part(int i)
{
    return i >= 0 && i < MESH_MEMORY_PARTS ? &parts[i] : NULL;
}

double mesh_memory_part_bytes(const mesh_memory_t *mem, int i)
{
    if (i < 0 || i >= MESH_MEMORY_PARTS)
        return 0;
    const double *v = (const double *)(const void *)((const char *)mem + parts[i].offset);
    return *v;
}
