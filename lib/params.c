/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The whole model's parameter counts (doc/design.md, "Parameter counts"),
 * from the spec's architecture: below the spec reader, which fills a spec
 * without a params count from them, and below shard.c, which splits them
 * among a layout's GPUs.
 */
#include "internal.h"
#include "meshplan/params.h"

void mesh_model_attn_widths(const mesh_model_t *m, double *q, double *kv)
{
    if (m->mla.kv_lora_rank) {
        const mesh_mla_t *a = &m->mla;
        *q = (double)m->heads * (a->qk_head_dim + a->qk_rope_head_dim) / m->hidden;
        *kv = (double)m->heads * a->v_head_dim / m->hidden;
        return;
    }
    /* as fractions of hidden, so that the default widths give exactly the
     * numbers the formulas gave before head_dim: 1, and kv_heads / heads
     * (both quotients of the same rational, correctly rounded) */
    double hd = mesh_head_dim(m);
    *q = (double)m->heads * hd / m->hidden;
    *kv = (double)m->kv_heads * hd / m->hidden;
}

/* The layer styles arch.mlp names, in mesh_mlp_t's order:
 * - gelu, GPT's (Brown et al. 2020; Megatron-LM's defaults): LayerNorm,
 *   a bias on every linear layer, learned positions;
 * - swiglu, Llama's (modeling_llama.py, and Mixtral, Qwen, DeepSeek-V3):
 *   RMSNorm, no biases, rotary positions;
 * - relu2, Nemotron-4's (Parmar et al. 2024; transformers'
 *   modeling_nemotron.py: NemotronLayerNorm1P with its bias, mlp_bias and
 *   attention_bias false, partial rotary positions): squared ReLU, not
 *   gated, LayerNorm kept zero-centred, no biases;
 * - quick_geglu, GPT-OSS's (transformers' modeling_gpt_oss.py
 *   GptOssExperts: gate * sigmoid(1.702 gate) * (up + 1); Megatron-Bridge's
 *   GPTOSSProvider: quick_gelu, gated, glu_linear_offset 1, add_bias_linear):
 *   RMSNorm, a bias on every linear layer, rotary positions. */
static const mesh_style_t styles[] = {
    [MESH_MLP_GELU] = {"GeLU", 0, 2, 1, 0, 0},
    [MESH_MLP_SWIGLU] = {"SwiGLU", 1, 1, 0, 1, 0},
    [MESH_MLP_RELU2] = {"squared ReLU", 0, 2, 0, 1, 1},
    [MESH_MLP_QUICK_GEGLU] = {"quick GeGLU", 1, 1, 1, 1, 0},
};

const mesh_style_t *mesh_style(const mesh_model_t *m)
{
    return &styles[m->mlp];
}

/* An MLP of width f: a gated one's gate, up and down (SwiGLU: Llama,
 * Mixtral, Qwen3, DeepSeek-V3, modeling_*.py's MLP and expert classes;
 * GPT-OSS's experts), else fc1 and fc2 (GeLU, squared ReLU); with their
 * biases where the style has them: fc1's, as wide as its output (2f when
 * gated), and fc2's, h. */
static double mlp_params(const mesh_model_t *m, double f)
{
    const mesh_style_t *s = mesh_style(m);
    double h = m->hidden, up = (1 + s->gated) * f;
    return h * up + f * h + (s->linear_bias ? up + h : 0);
}

/* The attention sinks (arch.attention_sinks): one learned logit a head, in
 * each layer (Megatron-LM's softmax_offset, num_attention_heads_per_partition
 * wide, so split by TP: dot_product_attention.py L126-136 at d98e8a6). */
static double sink_params(const mesh_model_t *m)
{
    return m->attention_sinks ? (double)m->heads : 0;
}

double mesh_norm_params(const mesh_model_t *m)
{
    return (double)mesh_style(m)->norm_vectors * m->hidden;
}

/* A layer's two norms. */
static double norm_params(const mesh_model_t *m)
{
    return 2 * mesh_norm_params(m);
}

double mesh_position_params(const mesh_model_t *m)
{
    return mesh_style(m)->rotary ? 0 : (double)m->seq_len * m->hidden;
}

/* What the model holds besides its layers and embeddings: a GPT-style
 * model's learned positions (Narayanan's formula, which the count follows,
 * has no final-LayerNorm term), else the final norm. */
static double tail_params(const mesh_model_t *m)
{
    return mesh_style(m)->rotary ? mesh_norm_params(m) : mesh_position_params(m);
}

/* Multi-head latent attention (DeepSeek-V3's modeling_deepseek.py
 * DeepseekV3Attention; Megatron-LM's MLASelfAttention, multi_latent_attention.py
 * at d98e8a6): q_a_proj h x q_lora and its RMSNorm, q_b_proj q_lora x
 * heads*(qk + rope) (or q_proj h x heads*(qk + rope) without q_lora),
 * kv_a_proj_with_mqa h x (kv_lora + rope) and its RMSNorm, kv_b_proj
 * kv_lora x heads*(qk + v), o_proj heads*v x h.  No biases. */
static double mla_params(const mesh_model_t *m)
{
    const mesh_mla_t *a = &m->mla;
    double h = m->hidden, heads = m->heads, qk = a->qk_head_dim + a->qk_rope_head_dim;
    double q = a->q_lora_rank ? h * a->q_lora_rank + a->q_lora_rank + a->q_lora_rank * heads * qk
                              : h * heads * qk;
    double kv = h * (a->kv_lora_rank + a->qk_rope_head_dim) + a->kv_lora_rank +
                a->kv_lora_rank * heads * (a->qk_head_dim + a->v_head_dim);
    return q + kv + heads * a->v_head_dim * h;
}

/* The QK norms (arch.qk_norm): an RMSNorm over each head's queries and one
 * over its keys, head_dim weights each (Qwen3's q_norm and k_norm;
 * Megatron-LM's q_layernorm and k_layernorm, built with the width
 * kv_channels: gpt_layer_specs.py at d98e8a6).  MLA has latent norms
 * instead (mla_params). */
static double qk_norm_params(const mesh_model_t *m)
{
    if (!m->qk_norm || m->mla.kv_lora_rank)
        return 0;
    return 2.0 * mesh_head_dim(m);
}

double mesh_attn_replicated(const mesh_model_t *m)
{
    /* Megatron-LM builds MLA's down projections as duplicated (not
     * TP-split) linears (multi_latent_attention.py L526-535, L573-582 at
     * d98e8a6), and its norms are replicated like every norm, the QK norms
     * too */
    const mesh_mla_t *a = &m->mla;
    if (!a->kv_lora_rank)
        return qk_norm_params(m);
    double h = m->hidden;
    return (a->q_lora_rank ? h * a->q_lora_rank + a->q_lora_rank : 0) +
           h * (a->kv_lora_rank + a->qk_rope_head_dim) + a->kv_lora_rank;
}

int mesh_model_is_moe(const mesh_model_t *m)
{
    return mesh_is_moe(m);
}

int mesh_model_moe_layers(const mesh_model_t *m)
{
    if (!mesh_is_moe(m))
        return 0;
    return m->moe.every > 1 ? m->layers / m->moe.every : m->layers - m->moe.dense_layers;
}

double mesh_model_expert_params(const mesh_model_t *m)
{
    return mesh_is_moe(m) ? mlp_params(m, m->moe.ffn) : 0;
}

double mesh_model_router_params(const mesh_model_t *m)
{
    return ((double)m->hidden + mesh_style(m)->linear_bias) * m->moe.experts;
}

/* A MoE layer without its routed experts: attention, norms, the router
 * and the shared experts. */
double mesh_moe_layer_base(const mesh_model_t *m)
{
    double attn = mesh_model_layer_params(m) - mlp_params(m, m->ffn) - norm_params(m);
    return attn + norm_params(m) + mesh_model_router_params(m) +
           m->moe.shared_experts * mlp_params(m, m->moe.shared_ffn);
}

double mesh_model_moe_layer_params(const mesh_model_t *m)
{
    if (!mesh_is_moe(m))
        return mesh_model_layer_params(m);
    return mesh_moe_layer_base(m) + m->moe.experts * mesh_model_expert_params(m);
}

/* One MTP layer besides its transformer layer: the 2h x h projection
 * (eh_proj, no bias) and three norms (enorm, hnorm and the final one);
 * Megatron-LM's MultiTokenPredictionLayer (multi_token_prediction.py at
 * d98e8a6), DeepSeek-V3's model.layers.61 less the shared embedding and
 * head. */
double mesh_mtp_extra(const mesh_model_t *m)
{
    double h = m->hidden;
    return 2 * h * h + 1.5 * norm_params(m);
}

double mesh_model_mtp_params(const mesh_model_t *m)
{
    /* the MTP layer is MoE when the model's last layer is */
    return m->mtp_layers * (mesh_model_moe_layer_params(m) + mesh_mtp_extra(m));
}

/* Active parameters from the arch: a MoE layer counts top_k experts. */
static double active_from_arch(const mesh_model_t *m)
{
    double h = m->hidden, v = m->vocab;
    double moe_active = mesh_is_moe(m)
                            ? mesh_moe_layer_base(m) + m->moe.top_k * mesh_model_expert_params(m)
                            : mesh_model_layer_params(m);
    int moe_layers = mesh_model_moe_layers(m), dense = m->layers - moe_layers;
    double emb = v * h * (m->tied_embeddings ? 1 : 2);
    return dense * mesh_model_layer_params(m) + moe_layers * moe_active +
           m->mtp_layers * (moe_active + mesh_mtp_extra(m)) + emb + tail_params(m);
}

double mesh_model_active_params(const mesh_model_t *m)
{
    if (!m->has_arch || (!mesh_is_moe(m) && !m->mtp_layers))
        return m->params;
    double from_arch = mesh_model_params_from_arch(m);
    return active_from_arch(m) * (from_arch > 0 ? m->params / from_arch : 1);
}

double mesh_model_layer_params(const mesh_model_t *m)
{
    double h = m->hidden, f = m->ffn, q, kv;
    if (m->mla.kv_lora_rank)
        return mla_params(m) + norm_params(m) + mlp_params(m, f);
    mesh_model_attn_widths(m, &q, &kv);
    if (!mesh_style(m)->linear_bias) /* Llama: q,o h^2*q each, k,v h^2*kv each, gate/up/down, 2
                                        RMSNorms; Qwen3 the QK norms, Qwen2 the QKV biases too;
                                        Nemotron fc1/fc2 and 2 LayerNorms */
        return 2 * h * h * q + 2 * h * h * kv + mlp_params(m, f) + norm_params(m) +
               qk_norm_params(m) + (m->qkv_bias ? h * q + 2 * h * kv : 0) + sink_params(m);
    /* GPT: QKV + biases, proj + bias, fc1/fc2 + biases, 2 LayerNorms (weight + bias).
     * With f = 4h and MHA this is Narayanan et al.'s 12h^2 + 13h.  GPT-OSS:
     * the same with its gated experts' MLP, RMSNorms and sinks. */
    return (h * h * q + 2 * h * h * kv) + (h * q + 2 * h * kv) + h * h * q + h + mlp_params(m, f) +
           norm_params(m) + sink_params(m);
}

double mesh_model_padded_vocab(const mesh_model_t *m, int tp)
{
    long unit = 128L * tp;
    return (double)((m->vocab + unit - 1) / unit * unit);
}

double mesh_model_params_from_arch(const mesh_model_t *m)
{
    double h = m->hidden, v = m->vocab;
    double emb = v * h * (m->tied_embeddings ? 1 : 2);
    int moe_layers = mesh_model_moe_layers(m);
    return (m->layers - moe_layers) * mesh_model_layer_params(m) +
           moe_layers * mesh_model_moe_layer_params(m) + mesh_model_mtp_params(m) + emb +
           tail_params(m);
}
