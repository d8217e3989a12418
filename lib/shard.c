/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Parameters per GPU: how a layout's TP, EP and PP split the model's
 * parameters (lib/params.c counts them whole) among its GPUs and pipeline
 * stages.  Below both the memory accounting (which prices bytes per
 * parameter) and the memory model (which sums them), so that neither calls
 * the other for counts.
 *
 * Megatron-LM's allocation is the reference: norms, the router and MLA's
 * down projections are replicated across TP; the first stage holds the
 * input embedding, the last the output layer (or a tied copy) and the MTP
 * layers (gpt_model.py at d98e8a6).
 */
#include "internal.h"
#include "meshplan/shard.h"

double mesh_layer_params_per_gpu(const mesh_model_t *m, int tp)
{
    /* norms (and GPT's row-parallel biases) are replicated, matrices split;
     * so are MLA's down projections and the QK norms (mesh_attn_replicated) */
    double replicated =
        2 * mesh_norm_params(m) + (mesh_style(m)->linear_bias ? 2.0 : 0) * m->hidden;
    replicated += mesh_attn_replicated(m);
    return (mesh_model_layer_params(m) - replicated) / tp + replicated;
}

/* The part of a MoE layer one GPU holds besides its experts: attention and
 * shared experts split by TP; norms, the router (replicated across TP) and
 * MLA's down projections whole, and so is a GeLU model's one row-parallel
 * bias there, the attention projection's (its MLP's is the experts' own;
 * it has no shared experts: spec_check.c). */
static double moe_base_per_gpu(const mesh_model_t *m, int tp)
{
    double replicated =
        2 * mesh_norm_params(m) + (mesh_style(m)->linear_bias ? 1.0 : 0) * m->hidden;
    replicated += mesh_model_router_params(m) + mesh_attn_replicated(m);
    return (mesh_moe_layer_base(m) - replicated) / tp + replicated;
}

/* The routed experts of one MoE layer on one GPU: experts/ep of them, each
 * split etp ways. */
static double experts_per_gpu(const mesh_model_t *m, const mesh_layout_t *l)
{
    int ep = l->ep > 0 ? l->ep : 1, etp = l->etp > 0 ? l->etp : 1;
    return (double)(m->moe.experts / ep) * mesh_model_expert_params(m) / etp;
}

double mesh_moe_layer_params_per_gpu(const mesh_model_t *m, const mesh_layout_t *l)
{
    if (!mesh_is_moe(m))
        return mesh_layer_params_per_gpu(m, l->tp);
    return moe_base_per_gpu(m, l->tp) + experts_per_gpu(m, l);
}

void mesh_stage_mix(const mesh_model_t *m, const mesh_layout_t *l, int stage, int *dense, int *moe)
{
    int layers = mesh_pp_stage_layers(m, l, stage);
    int nd = m->moe.dense_layers, d = 0;
    if (!mesh_is_moe(m)) {
        *dense = layers;
        *moe = 0;
        return;
    }
    if (m->moe.every > 1) {
        *moe = mesh_stage_every_layers(m, l, stage, m->moe.every);
        *dense = layers - *moe;
        return;
    }
    int q = (m->layers + l->pp - 1) / l->pp, deficit = q * l->pp - m->layers;
    if (l->vpp <= 1) {
        /* stage s starts after stage 0's layers and s-1 middle stages' */
        int start = stage == 0 ? 0 : stage * q - (deficit + 1) / 2;
        d = nd - start;
    } else {
        /* chunk j of the interleaved split sits on stage j mod pp
         * (mesh_chunk_layers) */
        d = mesh_stage_first_layers(m, l, stage, nd);
    }
    d = d < 0 ? 0 : d > layers ? layers : d;
    *dense = d;
    *moe = layers - d;
}

/* Parameters of the MTP layers on the last stage, per GPU: their layer
 * (MoE like the last) and projection split, their norms whole. */
static double mtp_per_gpu(const mesh_model_t *m, const mesh_layout_t *l)
{
    double norms = 3 * mesh_norm_params(m);
    return m->mtp_layers *
           (mesh_moe_layer_params_per_gpu(m, l) + (mesh_mtp_extra(m) - norms) / l->tp + norms);
}

/* What the arch's counts are multiplied by: a count given in the spec
 * wins over the arch's (1 where the arch counts none).  Counting the arch
 * is most of a stage's count: asked once for all the heavy stages. */
static double spec_scale(const mesh_model_t *m)
{
    double from_arch = mesh_model_params_from_arch(m);
    return from_arch > 0 ? m->params / from_arch : 1;
}

/* Whether m has routed experts to count (the arch describes them). */
static int has_experts(const mesh_model_t *m)
{
    return m->has_arch && mesh_is_moe(m);
}

/* mesh_stage_expert_params of a model with experts, the arch's counts
 * multiplied by scale. */
static double stage_expert_params(const mesh_model_t *m, const mesh_layout_t *l, int stage,
                                  double scale)
{
    int dense, moe;
    mesh_stage_mix(m, l, stage, &dense, &moe);
    return (moe + (stage == l->pp - 1 ? m->mtp_layers : 0)) * experts_per_gpu(m, l) * scale;
}

double mesh_stage_expert_params(const mesh_model_t *m, const mesh_layout_t *l, int stage)
{
    /* no experts: the arch is not counted */
    return has_experts(m) ? stage_expert_params(m, l, stage, spec_scale(m)) : 0;
}

/* The stage's layers per GPU: as many dense ones, or for a model with
 * experts, MLA or MTP layers its dense and MoE ones (and on the last stage
 * the MTP layers). */
static double stage_layer_params(const mesh_model_t *m, const mesh_layout_t *l, int stage)
{
    if (!mesh_is_moe(m) && !m->mla.kv_lora_rank && !m->mtp_layers)
        return mesh_pp_stage_layers(m, l, stage) * mesh_layer_params_per_gpu(m, l->tp);
    int dense, moe;
    mesh_stage_mix(m, l, stage, &dense, &moe);
    return dense * mesh_layer_params_per_gpu(m, l->tp) + moe * mesh_moe_layer_params_per_gpu(m, l) +
           (stage == l->pp - 1 ? mtp_per_gpu(m, l) : 0);
}

/* mesh_stage_params, the arch's counts multiplied by scale. */
static double stage_params(const mesh_model_t *m, const mesh_layout_t *l, int stage, double scale)
{
    if (!m->has_arch)
        return m->params;
    double t = l->tp, h = m->hidden;
    double emb = mesh_model_padded_vocab(m, l->tp) * h / t;

    double p = stage_layer_params(m, l, stage);
    if (stage == 0)
        p += emb + mesh_position_params(m);
    if (stage == l->pp - 1) {
        p += mesh_norm_params(m); /* final norm */
        /* untied: the output layer; tied across stages: the last stage keeps
         * its own copy of the embedding, kept in sync by the embedding group */
        if (!m->tied_embeddings || l->pp > 1)
            p += emb;
        /* MTP layers embed their own tokens: the last stage builds a whole
         * embedding of its own beside the output layer, whose weight it
         * allocates even when tied (only the first stage skips it:
         * gpt_model.py L173-181, L289-290 at d98e8a6) */
        if (m->mtp_layers && l->pp > 1)
            p += emb;
    }
    return p * scale;
}

double mesh_stage_params(const mesh_model_t *m, const mesh_layout_t *l, int stage)
{
    return stage_params(m, l, stage, m->has_arch ? spec_scale(m) : 1);
}

/* The first middle stage without a dense layer of a model whose first
 * layers are dense, by bisection: the stages hold the layers in order
 * (each of their chunks a middle layer at least), so once a stage holds
 * none of the first dense layers no later one does; pp may be in the
 * thousands, and every layout priced asks this. */
static int first_experts_only(const mesh_model_t *m, const mesh_layout_t *l)
{
    int lo = 1, hi = l->pp - 1;
    while (lo < hi) {
        int s = lo + (hi - lo) / 2, dense, moe;
        mesh_stage_mix(m, l, s, &dense, &moe);
        if (dense == 0)
            hi = s;
        else
            lo = s + 1;
    }
    return lo;
}

int mesh_heavy_stages_of(const mesh_model_t *m, const mesh_layout_t *l, int out[4])
{
    int n = mesh_heavy_stages(l->pp, out);
    if (!mesh_is_moe(m) || (!m->moe.dense_layers && m->moe.every <= 1) || l->pp <= 3)
        return n;
    /* MoE every few layers: the middle stage holding the most of them */
    int s = m->moe.every > 1 ? mesh_stage_most_every(m, l, m->moe.every) : first_experts_only(m, l);
    if (s > 1 && s < l->pp - 1) { /* stage 1 is listed already */
        out[n] = out[n - 1];
        out[n - 1] = s;
        n++;
    }
    return n;
}

void mesh_heavy_count(const mesh_model_t *m, const mesh_layout_t *l, mesh_heavy_t *out)
{
    double scale = m->has_arch ? spec_scale(m) : 1;
    int experts = has_experts(m);
    out->n = mesh_heavy_stages_of(m, l, out->stage);
    for (int i = 0; i < out->n; i++) {
        out->layers[i] = mesh_pp_stage_layers(m, l, out->stage[i]);
        out->psi[i] = stage_params(m, l, out->stage[i], scale);
        out->psi_e[i] = experts ? stage_expert_params(m, l, out->stage[i], scale) : 0;
    }
}

int mesh_heavy_most(const mesh_heavy_t *h)
{
    int most = 0;
    for (int i = 1; i < h->n; i++)
        if (h->psi[i] > h->psi[most])
            most = i;
    return most;
}
