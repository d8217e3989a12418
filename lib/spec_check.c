/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The rules a finished spec must meet (mesh_spec_finish): the keys every
 * arch needs, what a MoE router, MLA and MTP need, and which of two keys
 * that disagree wins; each error names the key and the file and line it was
 * given at.
 */
#include <stdio.h>
#include <string.h>

#include "spec_keys.h"

/* Where key f was given, as an error names it: "FILE:LINE", or an
 * override's origin alone (line 0). */
static const char *where(const spec_in_t *in, int f, const char *origin, char *buf, size_t len)
{
    if (in->file[f] && in->line[f] == 0)
        return in->file[f];
    snprintf(buf, len, "%s:%d", in->file[f] ? in->file[f] : origin, in->line[f]);
    return buf;
}

/* Who gave key f, the later the closer to the user: 0 a preset (or
 * nobody), 1 the user's own document, 2 an override. */
static int given_by(const spec_in_t *in, const spec_in_t *user, int f)
{
    if (in->file[f] && in->line[f] == 0)
        return 2;
    return in->file[f] == user->path;
}

/* How many keys of section sec (arch.moe, ...) the spec gives. */
static int any_set(const spec_in_t *in, const char *sec)
{
    int n = 0;
    for (int i = 0; i < F_COUNT; i++)
        n += in->set[i] && strcmp(mesh_spec_keys[i].section, sec) == 0;
    return n;
}

/* Where key f was given (file:line), for a message: the spec's path when
 * an override gave it.  Used by every check below, with loc in scope. */
#define AT(f) where(in, f, user->path, loc, sizeof(loc))
/* Whether key a was given later than key b (given_by): the later wins. */
#define LATER(a, b) (given_by(in, user, a) > given_by(in, user, b))

/* Whether the spec gives key f's section (arch.moe, arch.mla): 1, or 0;
 * -1 with err when it gives the section without f, which it requires. */
static int given_with(const spec_in_t *in, const spec_in_t *user, int f, const char *why,
                      mesh_error_t *err)
{
    if (!any_set(in, mesh_spec_keys[f].section))
        return 0;
    if (!in->set[f])
        return mesh_error_set(err, "%s: %s.%s is missing (%s)", user->path,
                              mesh_spec_keys[f].section, mesh_spec_keys[f].name, why);
    return 1;
}

/* arch.moe's router as Megatron-LM's TransformerConfig checks it
 * (transformer_config.py L2617-2625 and L2671-2690 at d98e8a6): the expert
 * bias only with sigmoid scores; group-limited routing with both groups and
 * group_top_k, the groups dividing the experts, and the chosen groups
 * holding at least top_k experts; the score on the input with top_k 1
 * (experts.py L918-921), a preset's going with a later top_k. */
static int finish_router(spec_in_t *in, const spec_in_t *user, mesh_error_t *err)
{
    char loc[PATH_LEN + 16];
    mesh_router_t *r = &in->m.router;
    const mesh_moe_t *moe = &in->m.moe;
    if (in->set[F_MOE_GROUPS] != in->set[F_MOE_GROUP_TOPK])
        return mesh_error_set(err,
                              "%s: arch.moe.%s: group-limited routing needs both groups and "
                              "group_top_k (give the other, or neither)",
                              AT(in->set[F_MOE_GROUPS] ? F_MOE_GROUPS : F_MOE_GROUP_TOPK),
                              in->set[F_MOE_GROUPS] ? "groups" : "group_top_k");
    if (r->probs_on_input && moe->top_k != 1 && LATER(F_MOE_TOPK, F_MOE_PROBS_IN))
        r->probs_on_input = 0; /* a preset's, under a later top_k: on the output again */
    if (r->probs_on_input && moe->top_k != 1)
        return mesh_error_set(err,
                              "%s: arch.moe.probs_on_input: Megatron-LM scales an expert's input "
                              "by its score only with top_k: 1 (experts.py L918-921), and top_k "
                              "is %d: give top_k: 1, or leave it out",
                              AT(F_MOE_PROBS_IN), moe->top_k);
    if (r->expert_bias && r->score != MESH_SCORE_SIGMOID)
        return mesh_error_set(err,
                              "%s: arch.moe.expert_bias: aux-loss-free balancing needs score: "
                              "sigmoid (Megatron-LM refuses it with softmax)",
                              AT(F_MOE_BIAS));
    if (!r->groups)
        return 0;
    if (moe->experts % r->groups)
        return mesh_error_set(err, "%s: arch.moe.groups: %d does not divide the %d experts",
                              AT(F_MOE_GROUPS), r->groups, moe->experts);
    if (r->group_top_k > r->groups)
        return mesh_error_set(err, "%s: arch.moe.group_top_k: %d is more than the %d groups",
                              AT(F_MOE_GROUP_TOPK), r->group_top_k, r->groups);
    if ((long)r->group_top_k * (moe->experts / r->groups) < moe->top_k)
        return mesh_error_set(err,
                              "%s: arch.moe.group_top_k: %d groups of %d experts hold fewer than "
                              "top_k %d",
                              AT(F_MOE_GROUP_TOPK), r->group_top_k, moe->experts / r->groups,
                              moe->top_k);
    return 0;
}

/* arch.moe: its defaults (top_k Megatron-LM's 2, transformer_config.py L760
 * at d98e8a6; ffn the dense one; shared_ffn ffn) and its rules. */
static int finish_moe(spec_in_t *in, const spec_in_t *user, mesh_error_t *err)
{
    char loc[PATH_LEN + 16];
    mesh_moe_t *moe = &in->m.moe;
    int given =
        given_with(in, user, F_MOE_EXPERTS, "a MoE layer needs its number of routed experts", err);
    if (given <= 0)
        return given;
    if (!in->set[F_MOE_TOPK])
        moe->top_k = moe->experts < 2 ? moe->experts : 2;
    if (!in->set[F_MOE_FFN])
        moe->ffn = in->m.ffn;
    if (in->set[F_MOE_SHARED_FFN] && !moe->shared_experts)
        return mesh_error_set(err,
                              "%s: arch.moe.shared_ffn: only means something with "
                              "shared_experts (give arch.moe.shared_experts, or leave it out)",
                              AT(F_MOE_SHARED_FFN));
    if (moe->shared_experts && !in->set[F_MOE_SHARED_FFN])
        moe->shared_ffn = moe->ffn;
    /* a GeLU or GPT-OSS model keeps its linear layers' biases, which
     * Megatron-LM's shared experts refuse (shared_experts.py L124-125 at
     * d98e8a6) */
    if (moe->shared_experts && mesh_style(&in->m)->linear_bias)
        return mesh_error_set(err,
                              "%s: arch.moe.shared_experts: Megatron-LM builds shared experts "
                              "without biases, and a %s model keeps its biases (use mlp: "
                              "swiglu or relu2, or no shared experts)",
                              AT(F_MOE_SHARED), mesh_style(&in->m)->label);
    if (moe->top_k > moe->experts)
        return mesh_error_set(err, "%s: arch.moe.top_k: %d is more than the %d experts",
                              AT(F_MOE_TOPK), moe->top_k, moe->experts);
    if (moe->dense_layers >= in->m.layers)
        return mesh_error_set(err,
                              "%s: arch.moe.dense_layers: %d leaves no MoE layer of the %d "
                              "layers (at most %d)",
                              AT(F_MOE_DENSE), moe->dense_layers, in->m.layers, in->m.layers - 1);
    /* every 0 (unset) and 1 alike: every layer MoE.  Megatron-LM takes
     * one --moe-layer-freq pattern; meshplan writes either leading dense
     * layers or an interleaving, not both at once */
    if (moe->every > 1 && moe->dense_layers && LATER(F_MOE_DENSE, F_MOE_EVERY))
        return mesh_error_set(err, /* named where the user gave it, beside a preset's every */
                              "%s: arch.moe.dense_layers: %d and every %d together are not "
                              "described (give one of them)",
                              AT(F_MOE_DENSE), moe->dense_layers, moe->every);
    if (moe->every > 1 && moe->dense_layers)
        return mesh_error_set(err,
                              "%s: arch.moe.every: %d and dense_layers %d together are not "
                              "described (give one of them)",
                              AT(F_MOE_EVERY), moe->every, moe->dense_layers);
    if (moe->every > in->m.layers)
        return mesh_error_set(err,
                              "%s: arch.moe.every: %d leaves no MoE layer of the %d layers (at "
                              "most %d)",
                              AT(F_MOE_EVERY), moe->every, in->m.layers, in->m.layers);
    return finish_router(in, user, err);
}

/* arch.mla: its defaults (Megatron-LM's MLATransformerConfig,
 * transformer_config.py L3294-3300 at d98e8a6, which are DeepSeek-V2/V3's)
 * and what it excludes. */
static int finish_mla(spec_in_t *in, const spec_in_t *user, mesh_error_t *err)
{
    char loc[PATH_LEN + 16];
    mesh_model_t *m = &in->m;
    int given = given_with(in, user, F_MLA_KV,
                           "multi-head latent attention needs its compressed key/value width", err);
    if (given <= 0)
        return given;
    if (!in->set[F_MLA_QK])
        m->mla.qk_head_dim = 128;
    if (!in->set[F_MLA_ROPE])
        m->mla.qk_rope_head_dim = 64;
    if (!in->set[F_MLA_V])
        m->mla.v_head_dim = 128;
    if (m->mlp != MESH_MLP_SWIGLU)
        return mesh_error_set(err,
                              "%s: arch.mlp: multi-head latent attention is priced in "
                              "Llama-style layers (RMSNorm, no biases): use mlp: swiglu",
                              AT(F_MLP));
    if (in->set[F_HEAD_DIM])
        return mesh_error_set(err,
                              "%s: arch.head_dim: MLA sizes its heads with arch.mla's "
                              "qk_head_dim, qk_rope_head_dim and v_head_dim; leave head_dim out",
                              AT(F_HEAD_DIM));
    if (m->kv_heads != m->heads)
        return mesh_error_set(err,
                              "%s: arch.kv_heads: multi-head latent attention has no grouped "
                              "key/value heads; leave kv_heads out (or equal to heads %d)",
                              AT(F_KV_HEADS), m->heads);
    return 0;
}

/* The attention's window and sinks as Megatron-LM's training builds them,
 * through Transformer Engine's attention (transformer_engine.py
 * L2163-2189 at d98e8a6); meshplan describes them for standard attention
 * only, as no published MLA model has them.  The activation's clamp only
 * in gated MLPs, a SwiGLU's only in experts (transformer_config.py
 * L2471-2495).  A preset's clamp goes with a later mlp it does not fit,
 * and its full_attention_every with a later layers it exceeds. */
static int finish_window_clamp(spec_in_t *in, const spec_in_t *user, mesh_error_t *err)
{
    char loc[PATH_LEN + 16];
    mesh_model_t *m = &in->m;
    if (m->full_attention_every && !m->window)
        return mesh_error_set(err,
                              "%s: arch.full_attention_every: only means something with a "
                              "sliding window (give arch.window, or leave it out)",
                              AT(F_FULL_EVERY));
    if (m->full_attention_every > m->layers && LATER(F_LAYERS, F_FULL_EVERY))
        m->full_attention_every = 0; /* no layer is whole: every layer windowed */
    if (m->full_attention_every > m->layers)
        return mesh_error_set(err,
                              "%s: arch.full_attention_every: %d is more than the %d layers, so "
                              "no layer would see the whole sequence; leave it out for every "
                              "layer windowed",
                              AT(F_FULL_EVERY), m->full_attention_every, m->layers);
    int f = m->window ? F_WINDOW : F_SINKS;
    if ((m->window || m->attention_sinks) && in->set[F_MLA_KV])
        return mesh_error_set(err,
                              "%s: arch.%s: described for standard attention only, not for "
                              "arch.mla: leave it out",
                              AT(f), mesh_spec_keys[f].name);
    if (m->activation_clamp > 0 && !mesh_style(m)->gated && LATER(F_MLP, F_ACT_CLAMP))
        m->activation_clamp = 0;
    if (m->activation_clamp > 0 && !mesh_style(m)->gated)
        return mesh_error_set(err,
                              "%s: arch.activation_clamp: clamps a gated MLP's inputs; mlp: %s "
                              "is not gated (use swiglu or quick_geglu, or leave it out)",
                              AT(F_ACT_CLAMP), mesh_mlp_name(m->mlp));
    if (m->activation_clamp > 0 && m->mlp == MESH_MLP_SWIGLU && !mesh_is_moe(m))
        return mesh_error_set(err,
                              "%s: arch.activation_clamp: Megatron-LM clamps a SwiGLU only in "
                              "experts (arch.moe); leave it out for a dense model",
                              AT(F_ACT_CLAMP));
    return 0;
}

/* How Llama 4's queries and keys are normed and turned, as Megatron-LM
 * builds them (d98e8a6): the weightless QK norm, which takes the place of
 * qk_layernorm's (attention.py L1709-1716) and which MLA refuses
 * (gpt_layer_specs.py L105); the rotary embedding on adjacent pairs, which
 * MLA refuses (transformer_config.py L2526-2527); unrotated layers every
 * nope_every-th, a count that must divide the layers (L3138-3151), in
 * standard attention (MLA rotates its own part).  The rotary keys of a
 * preset stay, unused, under a later mlp of learned positions, as
 * rope_theta's do; its nope_every goes with later layers it does not
 * divide. */
static int finish_qk_rotary(spec_in_t *in, const spec_in_t *user, mesh_error_t *err)
{
    char loc[PATH_LEN + 16];
    mesh_model_t *m = &in->m;
    if (m->qk_l2_norm && m->qk_norm)
        return mesh_error_set(err,
                              "%s: arch.%s: qk_norm and qk_l2_norm are two norms of the same "
                              "queries and keys: leave one out",
                              AT(LATER(F_QK_NORM, F_QK_L2) ? F_QK_NORM : F_QK_L2),
                              LATER(F_QK_NORM, F_QK_L2) ? "qk_norm" : "qk_l2_norm");
    if (m->qk_l2_norm && in->set[F_MLA_KV])
        return mesh_error_set(err,
                              "%s: arch.qk_l2_norm: Megatron-LM builds no L2 QK norm with "
                              "arch.mla: leave it out",
                              AT(F_QK_L2));
    if (m->rotary_interleaved && in->set[F_MLA_KV])
        return mesh_error_set(err,
                              "%s: arch.rotary_interleaved: Megatron-LM refuses it with "
                              "arch.mla: leave it out",
                              AT(F_ROTARY_IL));
    if (m->rotary_interleaved && !mesh_style(m)->rotary && !LATER(F_MLP, F_ROTARY_IL))
        return mesh_error_set(err,
                              "%s: arch.rotary_interleaved: mlp: %s learns its positions: leave "
                              "it out, or use mlp: swiglu",
                              AT(F_ROTARY_IL), mesh_mlp_name(m->mlp));
    if (!m->nope_every)
        return 0;
    if (in->set[F_MLA_KV])
        return mesh_error_set(err,
                              "%s: arch.nope_every: described for standard attention only, not "
                              "for arch.mla: leave it out",
                              AT(F_NOPE_EVERY));
    if (!mesh_style(m)->rotary && !LATER(F_MLP, F_NOPE_EVERY))
        return mesh_error_set(err,
                              "%s: arch.nope_every: leaves every N-th layer unrotated, and mlp: "
                              "%s learns its positions: leave it out, or use mlp: swiglu",
                              AT(F_NOPE_EVERY), mesh_mlp_name(m->mlp));
    if (m->layers % m->nope_every && LATER(F_LAYERS, F_NOPE_EVERY))
        m->nope_every = 0;
    else if (m->layers % m->nope_every)
        return mesh_error_set(err,
                              "%s: arch.nope_every: %d does not divide the %d layers, as "
                              "Megatron-LM's --no-rope-freq must",
                              AT(F_NOPE_EVERY), m->nope_every, m->layers);
    return 0;
}

/* How rope_scaling scales: MLA's is YaRN, with the rounding Megatron-LM's
 * MLA fixes; standard attention's YaRN takes the rounding as a flag
 * (argument_utils.py L384-413); MTP needs plain rotary positions
 * (arguments.py L883: rope or none, so neither YaRN nor GPT's learned
 * ones).  A
 * key that a later one leaves meaning nothing goes with it (a preset's
 * YaRN, then --set arch.rope_scaling=none or arch.rope_type=llama3). */
static int finish_rope(spec_in_t *in, const spec_in_t *user, mesh_error_t *err)
{
    char loc[PATH_LEN + 16];
    mesh_model_t *m = &in->m;
    if (!m->rope_scaling && in->set[F_ROPE_TYPE] && LATER(F_ROPE_SCALING, F_ROPE_TYPE))
        m->rope_type = MESH_ROPE_LLAMA3;
    int truncate = in->set[F_YARN_TRUNCATE];
    if ((m->rope_type != MESH_ROPE_YARN || !m->rope_scaling) && truncate &&
        (LATER(F_ROPE_TYPE, F_YARN_TRUNCATE) || LATER(F_ROPE_SCALING, F_YARN_TRUNCATE))) {
        m->yarn_truncate = MESH_YARN_TRUNCATE;
        truncate = 0;
    }
    if (in->set[F_ROPE_TYPE] && !m->rope_scaling && !LATER(F_ROPE_SCALING, F_ROPE_TYPE))
        return mesh_error_set(err,
                              "%s: arch.rope_type: says how arch.rope_scaling scales the rotary "
                              "frequencies: give rope_scaling, or leave it out",
                              AT(F_ROPE_TYPE));
    if (in->set[F_ROPE_TYPE] && m->rope_type != MESH_ROPE_YARN && in->set[F_MLA_KV])
        return mesh_error_set(err, "%s: arch.rope_type: MLA's rotary scaling is YaRN: give yarn",
                              AT(F_ROPE_TYPE));
    if (truncate && (m->rope_type != MESH_ROPE_YARN || !m->rope_scaling || in->set[F_MLA_KV]))
        return mesh_error_set(err,
                              "%s: arch.yarn_truncate: only means something with YaRN in standard "
                              "attention (rope_type: yarn and rope_scaling): leave it out",
                              AT(F_YARN_TRUNCATE));
    if (m->rope_type == MESH_ROPE_YARN && m->rope_scaling && !in->set[F_MLA_KV] && m->mtp_layers)
        return mesh_error_set(err,
                              "%s: arch.mtp_layers: Megatron-LM builds no MTP layers with YaRN "
                              "in standard attention (rope_type: yarn): leave mtp_layers out",
                              AT(F_MTP));
    if (!mesh_style(m)->rotary && m->mtp_layers)
        return mesh_error_set(err,
                              "%s: arch.mtp_layers: Megatron-LM builds MTP layers only with "
                              "rotary positions, and mlp: %s learns its positions: leave "
                              "mtp_layers out",
                              AT(F_MTP), mesh_mlp_name(m->mlp));
    return 0;
}

/* Megatron-LM has no LoRA (lib/env.c, mesh_megatron_withheld): what auto
 * or megatron would run, DeepSpeed with Hugging Face PEFT runs, data-parallel
 * (lib/runnable.c, mesh_lora_layout), and it is priced as DeepSpeed alone
 * allocates it, not bounded by a Megatron-LM allocation that never runs
 * (Megatron-FSDP's buffers made Llama 3.1 405B on 64 GPUs 81.7 GiB where
 * DeepSpeed's ZeRO-3 needs under 77 GiB). */
int mesh_lora_framework(int finetune, int fw)
{
    return finetune == MESH_FINETUNE_LORA && (fw == MESH_FW_MEGATRON || fw == MESH_FW_AUTO)
               ? MESH_FW_DEEPSPEED
               : fw;
}

/* Fill what the spec left out and check the whole model.  `user` is the
 * user's own document: when two keys disagree, the one given last (an
 * override, else the user's document, else the preset) is blamed, with
 * where it was given. */
int mesh_spec_finish(spec_in_t *in, const spec_in_t *user, mesh_error_t *err)
{
    const char *origin = user->path;
    char loc[PATH_LEN + 16];
    mesh_model_t *m = &in->m;
    int arch_keys = in->set[F_LAYERS] + in->set[F_HIDDEN] + in->set[F_HEADS] + in->set[F_VOCAB];
    /* the other arch keys mean nothing without these four: a spec giving
     * them alone has forgotten the rest (found by fuzzing the request) */
    int arch_extras = in->set[F_KV_HEADS] + in->set[F_FFN] + in->set[F_MLP] + in->set[F_TIED] +
                      in->set[F_MTP] + in->set[F_ROPE_THETA] + in->set[F_ROPE_SCALING] +
                      in->set[F_ROTARY_PCT] + in->set[F_NORM_EPS] + in->set[F_QK_NORM] +
                      in->set[F_QKV_BIAS] + in->set[F_WINDOW] + in->set[F_FULL_EVERY] +
                      in->set[F_SINKS] + in->set[F_ACT_CLAMP] + in->set[F_ROPE_TYPE] +
                      in->set[F_QK_L2] + in->set[F_NOPE_EVERY] + in->set[F_ROTARY_IL] +
                      in->set[F_YARN_TRUNCATE] + any_set(in, "arch.moe") + any_set(in, "arch.mla");
    if ((arch_keys > 0 || arch_extras > 0) && arch_keys < 4) {
        const char *missing = !in->set[F_LAYERS]   ? "arch.layers"
                              : !in->set[F_HIDDEN] ? "arch.hidden"
                              : !in->set[F_HEADS]  ? "arch.heads"
                                                   : "arch.vocab";
        return mesh_error_set(err,
                              "%s: %s is missing (an arch needs layers, hidden, heads and "
                              "vocab)",
                              origin, missing);
    }
    m->has_arch = arch_keys == 4;
    /* QK norms are counted as RMSNorms of Llama-style heads; MLA has its
     * latent norms instead, always */
    if (m->qk_norm && (m->mlp != MESH_MLP_SWIGLU || in->set[F_MLA_KV]))
        return mesh_error_set(err, "%s: arch.qk_norm: %s: leave it out", AT(F_QK_NORM),
                              in->set[F_MLA_KV] ? "MLA has its latent norms instead"
                                                : "QK norms are described for mlp: swiglu only");
    /* GPT- and GPT-OSS-style layers have every bias already; MLA's
     * projections none */
    if (m->qkv_bias && in->set[F_MLA_KV])
        return mesh_error_set(err,
                              "%s: arch.qkv_bias: MLA's projections have no biases here: leave "
                              "it out",
                              AT(F_QKV_BIAS));
    if (m->qkv_bias && mesh_style(m)->linear_bias)
        return mesh_error_set(err,
                              "%s: arch.qkv_bias: mlp: %s has every bias already: leave it out",
                              AT(F_QKV_BIAS), mesh_mlp_name(m->mlp));
    if (in->set[F_MLA_MSCALE] && !m->rope_scaling)
        return mesh_error_set(err,
                              "%s: arch.mla.mscale_all_dim: only means something with YaRN "
                              "(give arch.rope_scaling, or leave it out)",
                              AT(F_MLA_MSCALE));
    /* rotary positions are the Llama- and Nemotron-style models' (mlp
     * swiglu, relu2); GPT-style learns its positions.  (A preset's rotary
     * keys stay, unused, under a file's mlp: gelu.) */
    int rope = in->set[F_ROPE_THETA]     ? F_ROPE_THETA
               : in->set[F_ROPE_SCALING] ? F_ROPE_SCALING
                                         : F_ROTARY_PCT;
    if (!mesh_style(m)->rotary && in->set[rope] && !LATER(F_MLP, rope))
        return mesh_error_set(err,
                              "%s: arch.%s: rotary positions are mlp: swiglu's, relu2's and "
                              "quick_geglu's (mlp: gelu learns its positions): leave it out, or "
                              "use mlp: swiglu",
                              AT(rope), mesh_spec_keys[rope].name);
    /* MLA rotates its own qk_rope_head_dim */
    if (in->set[F_ROTARY_PCT] && in->set[F_MLA_KV])
        return mesh_error_set(err,
                              "%s: arch.rotary_percent: MLA rotates arch.mla.qk_rope_head_dim of "
                              "each head: leave rotary_percent out",
                              AT(F_ROTARY_PCT));
    if (!m->has_arch && !in->set[F_PARAMS])
        return mesh_error_set(err, "%s: give arch (layers, hidden, heads, vocab) or params",
                              origin);
    if (m->has_arch) {
        if (!in->set[F_KV_HEADS])
            m->kv_heads = m->heads;
        if (!in->set[F_FFN])
            m->ffn = 4 * m->hidden;
        if (finish_moe(in, user, err) < 0 || finish_mla(in, user, err) < 0 ||
            finish_window_clamp(in, user, err) < 0 || finish_rope(in, user, err) < 0 ||
            finish_qk_rotary(in, user, err) < 0)
            return -1;
        /* heads of hidden / heads each, unless head_dim (or MLA) says otherwise */
        if (m->mla.kv_lora_rank) {
            /* MLA's heads are sized by its own keys */
        } else if (m->hidden % m->heads && !m->head_dim && LATER(F_HIDDEN, F_HEADS))
            return mesh_error_set(err, "%s: arch.hidden: %d is not a multiple of heads %d",
                                  AT(F_HIDDEN), m->hidden, m->heads);
        else if (m->hidden % m->heads && !m->head_dim)
            return mesh_error_set(err, "%s: arch.heads: %d does not divide hidden %d", AT(F_HEADS),
                                  m->heads, m->hidden);
        if ((m->kv_heads > m->heads || m->heads % m->kv_heads) && in->set[F_KV_HEADS] &&
            !LATER(F_HEADS, F_KV_HEADS))
            return mesh_error_set(err, "%s: arch.kv_heads: %d must divide heads %d", AT(F_KV_HEADS),
                                  m->kv_heads, m->heads);
        if (m->kv_heads > m->heads || m->heads % m->kv_heads)
            return mesh_error_set(err, "%s: arch.heads: %d is not a multiple of kv_heads %d",
                                  AT(F_HEADS), m->heads, m->kv_heads);
        if (!in->set[F_PARAMS])
            m->params = mesh_model_params_from_arch(m);
        /* the same range as a given params, so that a spec and the request
         * made from it (which states params) are accepted alike */
        if (m->params < PARAMS_MIN || m->params > PARAMS_MAX)
            return mesh_error_set(err,
                                  "%s: arch gives %.3g parameters; meshplan plans models of %g "
                                  "to %g (check arch.layers, hidden and vocab)",
                                  origin, m->params, PARAMS_MIN, PARAMS_MAX);
    }
    /* the frameworks' defaults: Megatron-LM accumulates and reduces bf16
     * gradients in fp32 main grads (arguments.py sets
     * accumulate_allreduce_grads_in_fp32 under --bf16), fp16 ones in fp16
     * with an fp32 copy for the optimizer; DeepSpeed likewise */
    if (!in->set[F_GRAD_DTYPE])
        m->grad_accum_dtype = m->precision == MESH_PREC_FP16 ? MESH_PREC_FP16 : MESH_PREC_FP32;
    if (m->precision == MESH_PREC_FP32 && m->grad_accum_dtype != MESH_PREC_FP32)
        return mesh_error_set(err,
                              "%s: train.grad_accum_dtype: %s gradients under precision fp32 "
                              "would lose what fp32 training keeps; use fp32 or leave it out",
                              AT(F_GRAD_DTYPE), mesh_precision_name(m->grad_accum_dtype));
    /* a 16-bit gradient buffer is the parameters' dtype (Megatron-LM's
     * param_and_grad_buffer.py L924 at d98e8a6; FP8 runs on bf16 ones):
     * no framework accumulates bf16 gradients of fp16 parameters */
    mesh_precision_t half = m->precision == MESH_PREC_FP16 ? MESH_PREC_FP16 : MESH_PREC_BF16;
    if (m->grad_accum_dtype != MESH_PREC_FP32 && m->grad_accum_dtype != half)
        return mesh_error_set(err,
                              "%s: train.grad_accum_dtype: %s gradients under precision %s; the "
                              "frameworks keep them in the parameters' %s or in fp32: use one of "
                              "those",
                              AT(F_GRAD_DTYPE), mesh_precision_name(m->grad_accum_dtype),
                              mesh_precision_name(m->precision), mesh_precision_name(half));
    /* a recipe goes with the fp8 it was given with: a file that trains its
     * preset, or an override that trains the spec, in another precision
     * drops it (a key cannot be unset: --model deepseek-v3 --set
     * train.precision=bf16, as the bf16 advice asks, is that preset in bf16) */
    if (in->set[F_FP8_RECIPE] && m->precision != MESH_PREC_FP8 && LATER(F_PREC, F_FP8_RECIPE)) {
        in->set[F_FP8_RECIPE] = 0;
        m->fp8_recipe = MESH_FP8_DELAYED;
    }
    if (in->set[F_FP8_RECIPE] && m->precision != MESH_PREC_FP8)
        return mesh_error_set(err,
                              "%s: train.fp8_recipe: only means something with precision: fp8 "
                              "(precision is %s)",
                              AT(F_FP8_RECIPE), mesh_precision_name(m->precision));
    if (m->optimizer_dtype != MESH_PREC_FP32 && m->optimizer == MESH_OPT_SGD)
        return mesh_error_set(err,
                              "%s: train.optimizer_dtype: 16-bit moments are Adam's "
                              "(--exp-avg-dtype); SGD keeps fp32 momentum",
                              AT(F_OPT_DTYPE));
    /* Megatron-LM has no LoRA (lib/env.c, mesh_megatron_withheld): the
     * key given last is blamed */
    if (m->finetune == MESH_FINETUNE_LORA && m->framework == MESH_FW_MEGATRON)
        return mesh_error_set(err,
                              "%s: train.finetune: lora under framework: megatron: Megatron-LM "
                              "has no LoRA; use framework: deepspeed or torch (with Hugging Face "
                              "PEFT), or finetune: full",
                              AT(LATER(F_FRAMEWORK, F_FINETUNE) ? F_FRAMEWORK : F_FINETUNE));
    /* so a LoRA spec's framework is other than it names only under auto:
     * DeepSpeed's (mesh_lora_framework), and held to what DeepSpeed runs */
    int lora_ds = mesh_lora_framework(m->finetune, m->framework) != (int)m->framework;
    if (m->optimizer_dtype != MESH_PREC_FP32 && (m->framework == MESH_FW_DEEPSPEED || lora_ds))
        return mesh_error_set(err, "%s: train.optimizer_dtype: DeepSpeed keeps fp32 Adam moments%s",
                              AT(F_OPT_DTYPE),
                              lora_ds ? ", and LoRA trains under it; use fp32"
                                      : "; use fp32, or framework: megatron");
    if (in->set[F_EP_OVERLAP] && !mesh_is_moe(m))
        return mesh_error_set(err,
                              "%s: train.ep_overlap: only means something for a MoE model "
                              "(give arch.moe, or leave it out)",
                              AT(F_EP_OVERLAP));
    if (in->set[F_DISPATCHER] && !mesh_is_moe(m))
        return mesh_error_set(err,
                              "%s: train.dispatcher: only means something for a MoE model "
                              "(give arch.moe, or leave it out)",
                              AT(F_DISPATCHER));
    if (m->dispatcher == MESH_DISPATCHER_DEEPEP && lora_ds)
        return mesh_error_set(err,
                              "%s: train.dispatcher: deepep is Megatron-LM's flex dispatcher, and "
                              "LoRA trains under DeepSpeed (leave the dispatcher out)",
                              AT(F_DISPATCHER));
    if (m->dispatcher == MESH_DISPATCHER_DEEPEP &&
        (m->framework == MESH_FW_DEEPSPEED || m->framework == MESH_FW_TORCH))
        return mesh_error_set(err,
                              "%s: train.dispatcher: deepep is Megatron-LM's flex dispatcher, and "
                              "the framework is %s (use framework: megatron, or leave the "
                              "dispatcher out)",
                              AT(F_DISPATCHER), mesh_framework_name(m->framework));
    if (in->set[F_MOE_IMBALANCE] && !mesh_is_moe(m))
        return mesh_error_set(err,
                              "%s: train.moe_imbalance: only means something for a MoE model "
                              "(give arch.moe, or leave it out)",
                              AT(F_MOE_IMBALANCE));
    if (in->set[F_TOKENS] && in->set[F_STEPS])
        return mesh_error_set(err,
                              "%s: train.steps: the budget is given twice, with train.tokens "
                              "too (give one of them)",
                              AT(F_STEPS));
    if (!m->name[0])
        mesh_strlcpy(m->name, in->preset[0] ? in->preset : "model", sizeof(m->name));
    if (m->micro_batch > 0 && m->global_batch % m->micro_batch)
        return mesh_error_set(err, "%s: train.micro_batch: %d does not divide global_batch %ld",
                              AT(F_MB), m->micro_batch, m->global_batch);
    return 0;
#undef AT
#undef LATER
}
