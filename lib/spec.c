/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The model spec: a strict libyaml event-API reader of meshplan-spec(5).
 *
 * Why the event API: it sees every anchor, alias, tag and nesting level as
 * it comes, so hostile input (alias bombs, deep nesting, huge scalars) is
 * refused before anything is built, and every error has its line.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <fcntl.h>
#include <unistd.h>
#include <yaml.h>

#include "internal.h"
#include "yamlread.h"
#include "meshplan/parse.h"
#include "meshplan/spec.h"

#define PATH_LEN 1024

#define SCALAR_MAX MESH_YAML_SCALAR_MAX

/* K_NUMNONE: a number, or "none" (stored as 0) */
enum kind { K_STR, K_PRESET, K_INT, K_NUM, K_BOOL, K_ENUM, K_NUMNONE };
/* When the controller's request carries a key (see mesh_spec_write) and
 * the digest hashes it: always, only under fp8, or only when set (nonzero):
 * a key added later leaves the digest of every spec without it as it was. */
enum when { ALWAYS, WITH_FP8, WHEN_SET, BUDGET };
/* BUDGET: carried when set, never hashed: a training budget changes no
 * layout, so a plan's digest is the same with or without one. */
#define NO_AUTO 0x7fffffff

/* The models meshplan plans, whether params is given or comes from arch. */
#define PARAMS_MIN 1e3
#define PARAMS_MAX 1e16

/*
 * Every key a spec may hold, in one table: field id, section ("" the top
 * level), name, kind, member of mesh_model_t, range (K_INT, K_NUM) or
 * choices (K_ENUM, space-separated in enum order), the value "auto" stands
 * for (NO_AUTO: none), and when the request carries it.  The table drives
 * reading, the allowed-keys lists of errors, a file's overrides of its
 * preset, the controller's request and the digest; the field ids name a key
 * where its value is checked (finish()).  Adding a key is a row here, its
 * default in model_defaults() and its use.  The train keys keep the digest's
 * historical order, so that plan digests stay the same.  preset is kept in
 * spec_in_t, not in the model (its member column is unused).
 */
#define SPEC_KEYS(X)                                                                               \
    X(F_NAME, "", "name", K_STR, name, 0, 0, NULL, NO_AUTO, ALWAYS)                                \
    X(F_PRESET, "", "preset", K_PRESET, name, 0, 0, NULL, NO_AUTO, ALWAYS)                         \
    X(F_PARAMS, "", "params", K_NUM, params, PARAMS_MIN, PARAMS_MAX, NULL, NO_AUTO, ALWAYS)        \
    X(F_LAYERS, "arch", "layers", K_INT, layers, 1, 100000, NULL, NO_AUTO, ALWAYS)                 \
    X(F_HIDDEN, "arch", "hidden", K_INT, hidden, 1, 1 << 20, NULL, NO_AUTO, ALWAYS)                \
    X(F_HEADS, "arch", "heads", K_INT, heads, 1, 1 << 16, NULL, NO_AUTO, ALWAYS)                   \
    X(F_KV_HEADS, "arch", "kv_heads", K_INT, kv_heads, 1, 1 << 16, NULL, NO_AUTO, ALWAYS)          \
    X(F_HEAD_DIM, "arch", "head_dim", K_INT, head_dim, 1, 1 << 16, NULL, NO_AUTO, WHEN_SET)        \
    X(F_FFN, "arch", "ffn", K_INT, ffn, 1, 1 << 24, NULL, NO_AUTO, ALWAYS)                         \
    X(F_VOCAB, "arch", "vocab", K_INT, vocab, 1, 1 << 24, NULL, NO_AUTO, ALWAYS)                   \
    X(F_MLP, "arch", "mlp", K_ENUM, mlp, 0, 0, "gelu swiglu", NO_AUTO, ALWAYS)                     \
    X(F_TIED, "arch", "tied_embeddings", K_BOOL, tied_embeddings, 0, 0, NULL, NO_AUTO, ALWAYS)     \
    X(F_MTP, "arch", "mtp_layers", K_INT, mtp_layers, 0, 64, NULL, NO_AUTO, WHEN_SET)              \
    X(F_ROPE_THETA, "arch", "rope_theta", K_INT, rope_theta, 1, 2147483647, NULL, NO_AUTO,         \
      WHEN_SET)                                                                                    \
    X(F_ROPE_SCALING, "arch", "rope_scaling", K_NUMNONE, rope_scaling, 1, 1000, NULL, NO_AUTO,     \
      WHEN_SET)                                                                                    \
    X(F_QK_NORM, "arch", "qk_norm", K_BOOL, qk_norm, 0, 0, NULL, NO_AUTO, WHEN_SET)                \
    X(F_QKV_BIAS, "arch", "qkv_bias", K_BOOL, qkv_bias, 0, 0, NULL, NO_AUTO, WHEN_SET)             \
    X(F_NORM_EPS, "arch", "norm_eps", K_NUM, norm_eps, 1e-12, 0.1, NULL, NO_AUTO, WHEN_SET)        \
    X(F_MOE_EXPERTS, "arch.moe", "experts", K_INT, moe.experts, 1, 1 << 16, NULL, NO_AUTO,         \
      WHEN_SET)                                                                                    \
    X(F_MOE_TOPK, "arch.moe", "top_k", K_INT, moe.top_k, 1, 1 << 16, NULL, NO_AUTO, WHEN_SET)      \
    X(F_MOE_FFN, "arch.moe", "ffn", K_INT, moe.ffn, 1, 1 << 24, NULL, NO_AUTO, WHEN_SET)           \
    X(F_MOE_SHARED, "arch.moe", "shared_experts", K_INT, moe.shared_experts, 0, 1 << 10, NULL,     \
      NO_AUTO, WHEN_SET)                                                                           \
    X(F_MOE_SHARED_FFN, "arch.moe", "shared_ffn", K_INT, moe.shared_ffn, 1, 1 << 24, NULL,         \
      NO_AUTO, WHEN_SET)                                                                           \
    X(F_MOE_DENSE, "arch.moe", "dense_layers", K_INT, moe.dense_layers, 0, 100000, NULL, NO_AUTO,  \
      WHEN_SET)                                                                                    \
    X(F_MOE_CAPACITY, "arch.moe", "capacity_factor", K_NUMNONE, moe.capacity_factor, 0.01, 1000,   \
      NULL, NO_AUTO, WHEN_SET)                                                                     \
    X(F_MOE_SCORE, "arch.moe", "score", K_ENUM, router.score, 0, 0, "softmax sigmoid", NO_AUTO,    \
      WHEN_SET)                                                                                    \
    X(F_MOE_BIAS, "arch.moe", "expert_bias", K_BOOL, router.expert_bias, 0, 0, NULL, NO_AUTO,      \
      WHEN_SET)                                                                                    \
    X(F_MOE_GROUPS, "arch.moe", "groups", K_INT, router.groups, 1, 1 << 16, NULL, NO_AUTO,         \
      WHEN_SET)                                                                                    \
    X(F_MOE_GROUP_TOPK, "arch.moe", "group_top_k", K_INT, router.group_top_k, 1, 1 << 16, NULL,    \
      NO_AUTO, WHEN_SET)                                                                           \
    X(F_MOE_SCALING, "arch.moe", "routed_scaling", K_NUM, router.routed_scaling, 1e-6, 1e6, NULL,  \
      NO_AUTO, WHEN_SET)                                                                           \
    X(F_MOE_AUX, "arch.moe", "aux_loss", K_NUM, router.aux_loss, 1e-9, 1, NULL, NO_AUTO, WHEN_SET) \
    X(F_MLA_Q, "arch.mla", "q_lora_rank", K_INT, mla.q_lora_rank, 0, 1 << 20, NULL, NO_AUTO,       \
      WHEN_SET)                                                                                    \
    X(F_MLA_KV, "arch.mla", "kv_lora_rank", K_INT, mla.kv_lora_rank, 1, 1 << 20, NULL, NO_AUTO,    \
      WHEN_SET)                                                                                    \
    X(F_MLA_QK, "arch.mla", "qk_head_dim", K_INT, mla.qk_head_dim, 1, 1 << 16, NULL, NO_AUTO,      \
      WHEN_SET)                                                                                    \
    X(F_MLA_ROPE, "arch.mla", "qk_rope_head_dim", K_INT, mla.qk_rope_head_dim, 1, 1 << 16, NULL,   \
      NO_AUTO, WHEN_SET)                                                                           \
    X(F_MLA_V, "arch.mla", "v_head_dim", K_INT, mla.v_head_dim, 1, 1 << 16, NULL, NO_AUTO,         \
      WHEN_SET)                                                                                    \
    X(F_MLA_MSCALE, "arch.mla", "mscale_all_dim", K_NUM, mla.mscale_all_dim, 1e-6, 100, NULL,      \
      NO_AUTO, WHEN_SET)                                                                           \
    X(F_SEQ, "train", "seq_len", K_INT, seq_len, 1, 1 << 24, NULL, NO_AUTO, ALWAYS)                \
    X(F_GBS, "train", "global_batch", K_INT, global_batch, 1, 1 << 30, NULL, NO_AUTO, ALWAYS)      \
    X(F_MB, "train", "micro_batch", K_INT, micro_batch, 1, 1 << 16, NULL, 0, ALWAYS)               \
    X(F_PREC, "train", "precision", K_ENUM, precision, 0, 0, "bf16 fp16 fp32 fp8", NO_AUTO,        \
      ALWAYS)                                                                                      \
    X(F_GRAD_DTYPE, "train", "grad_accum_dtype", K_ENUM, grad_accum_dtype, 0, 0, "bf16 fp16 fp32", \
      NO_AUTO, ALWAYS)                                                                             \
    X(F_OPT, "train", "optimizer", K_ENUM, optimizer, 0, 0, "adam adamw sgd", NO_AUTO, ALWAYS)     \
    X(F_RECOMPUTE, "train", "recompute", K_ENUM, recompute, 0, 0, "none selective full",           \
      MESH_RECOMPUTE_AUTO, ALWAYS)                                                                 \
    X(F_FLASH, "train", "flash_attention", K_BOOL, flash_attention, 0, 0, NULL, NO_AUTO, ALWAYS)   \
    X(F_DROPOUT, "train", "dropout", K_NUM, dropout, 0, 1, NULL, NO_AUTO, ALWAYS)                  \
    X(F_FINETUNE, "train", "finetune", K_ENUM, finetune, 0, 0, "full lora", NO_AUTO, ALWAYS)       \
    X(F_FP8_RECIPE, "train", "fp8_recipe", K_ENUM, fp8_recipe, 0, 0,                               \
      "delayed tensorwise blockwise mxfp8", NO_AUTO, WITH_FP8)                                     \
    X(F_OPT_DTYPE, "train", "optimizer_dtype", K_ENUM, optimizer_dtype, 0, 0, "bf16 fp16 fp32",    \
      NO_AUTO, ALWAYS)                                                                             \
    X(F_FRAMEWORK, "train", "framework", K_ENUM, framework, 0, 0, "auto megatron deepspeed torch", \
      NO_AUTO, ALWAYS)                                                                             \
    X(F_MOE_IMBALANCE, "train", "moe_imbalance", K_NUM, moe_imbalance, 1, 1000, NULL, NO_AUTO,     \
      WHEN_SET)                                                                                    \
    X(F_TOKENS, "train", "tokens", K_NUM, tokens, 1, 1e18, NULL, NO_AUTO, BUDGET)                  \
    X(F_STEPS, "train", "steps", K_INT, steps, 1, 1e15, NULL, NO_AUTO, BUDGET)

/* The field ids: a key's index in the table. */
#define FIELD_ID(id, ...) id,
enum field { SPEC_KEYS(FIELD_ID) F_COUNT };
#undef FIELD_ID

typedef struct spec_in {
    mesh_model_t m;
    char preset[MESH_NAME_MAX];
    char path[PATH_LEN]; /* the document's name in errors */
    unsigned char set[F_COUNT];
    /* where each key was, for validation errors: a preset's keys point
     * into the preset, the overrides into the user's file */
    const char *file[F_COUNT];
    int line[F_COUNT];
} spec_in_t;

static const struct key {
    const char *section, *name;
    enum kind kind;
    size_t off, size; /* the member of mesh_model_t */
    double min, max;
    const char *choices;
    int auto_value;
    enum when when;
} keys[] = {
#define KEY_ROW(id, sec, nm, kd, member, lo, hi, ch, au, wh)                                       \
    {sec, nm, kd, offsetof(mesh_model_t, member), sizeof(((mesh_model_t *)0)->member), lo, hi,     \
     ch,  au, wh},
    SPEC_KEYS(KEY_ROW)
#undef KEY_ROW
};

/* Integers, booleans and enums are stored as int (or long), numbers as double. */
#define INT_MEMBER(id, sec, nm, kd, member, ...)                                                   \
    _Static_assert(kd == K_NUM || kd == K_NUMNONE || kd == K_STR || kd == K_PRESET ||              \
                       sizeof(((mesh_model_t *)0)->member) == sizeof(int) ||                       \
                       sizeof(((mesh_model_t *)0)->member) == sizeof(long),                        \
                   "spec key " nm ": an int or a long");
SPEC_KEYS(INT_MEMBER)
#undef INT_MEMBER

/* The sections, each with the one it is nested in ("" the top level):
 * arch.moe and arch.mla are mappings inside arch. */
static const struct section {
    const char *name, *parent;
} sections[] = {{"arch", ""}, {"train", ""}, {"arch.moe", "arch"}, {"arch.mla", "arch"}};

/* "moe" of "arch.moe": a section's key in its parent. */
static const char *section_key(const struct section *s)
{
    return *s->parent ? s->name + strlen(s->parent) + 1 : s->name;
}

/* Whether section `sec` is `top` or one nested in it. */
static int in_section(const char *sec, const char *top)
{
    size_t n = strlen(top);
    return strncmp(sec, top, n) == 0 && (sec[n] == '\0' || sec[n] == '.');
}

static const char *enum_names(const char *choices, int i, char *buf, size_t len)
{
    const char *p = choices;
    for (int k = 0; k < i && p; k++) {
        p = strchr(p, ' ');
        if (p)
            p++;
    }
    if (!p)
        return "?";
    size_t n = strcspn(p, " ");
    if (n >= len)
        n = len - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return buf;
}

static int enum_parse(const char *choices, const char *s)
{
    char name[32];
    for (int i = 0;; i++) {
        const char *n = enum_names(choices, i, name, sizeof(name));
        if (strcmp(n, "?") == 0)
            return -1;
        if (strcasecmp(n, s) == 0)
            return i;
    }
}

const char *mesh_precision_name(mesh_precision_t p)
{
    static const char *const names[] = {"bf16", "fp16", "fp32", "fp8"};
    return (unsigned)p < MESH_ARRAY_LEN(names) ? names[p] : "?";
}

const char *mesh_fp8_recipe_name(mesh_fp8_recipe_t r)
{
    static const char *const names[] = {"delayed", "tensorwise", "blockwise", "mxfp8"};
    return (unsigned)r < MESH_ARRAY_LEN(names) ? names[r] : "?";
}

const char *mesh_framework_name(mesh_framework_t f)
{
    static const char *const names[] = {"auto", "megatron", "deepspeed", "torch"};
    return (unsigned)f < MESH_ARRAY_LEN(names) ? names[f] : "?";
}

const char *mesh_optimizer_name(mesh_optimizer_t o)
{
    return o == MESH_OPT_ADAM ? "adam" : o == MESH_OPT_ADAMW ? "adamw" : "sgd";
}

const char *mesh_recompute_name(mesh_recompute_t r)
{
    switch (r) {
    case MESH_RECOMPUTE_NONE: return "none";
    case MESH_RECOMPUTE_SELECTIVE: return "selective";
    case MESH_RECOMPUTE_FULL: return "full";
    default: return "auto";
    }
}

const char *mesh_mlp_name(mesh_mlp_t m)
{
    return m == MESH_MLP_GELU ? "gelu" : "swiglu";
}

const char *mesh_finetune_name(mesh_finetune_t f)
{
    return f == MESH_FINETUNE_LORA ? "lora" : "full";
}

int mesh_recompute_parse(const char *s, mesh_recompute_t *out)
{
    if (strcasecmp(s, "auto") == 0) {
        *out = MESH_RECOMPUTE_AUTO;
        return 0;
    }
    int i = enum_parse("none selective full", s);
    if (i < 0)
        return -1;
    *out = (mesh_recompute_t)i;
    return 0;
}

static const char *const rc_modules[] = {"core_attn", "layernorm", "mlp"};

const char *mesh_recompute_modules_name(unsigned modules, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    if (modules == 0)
        modules = MESH_RC_CORE_ATTN;
    for (int i = 0; i < MESH_ARRAY_LEN(rc_modules); i++)
        if (modules & (1u << i)) {
            int n = snprintf(buf + used, len - used, "%s%s", used ? "+" : "", rc_modules[i]);
            used += n > 0 && (size_t)n < len - used ? (size_t)n : 0;
        }
    return buf;
}

int mesh_recompute_modules_parse(const char *s, unsigned *out)
{
    *out = 0;
    while (*s) {
        size_t n = strcspn(s, "+");
        int found = -1;
        for (int i = 0; i < MESH_ARRAY_LEN(rc_modules); i++)
            if (strlen(rc_modules[i]) == n && strncmp(s, rc_modules[i], n) == 0)
                found = i;
        if (found < 0 || n == 0)
            return -1;
        *out |= 1u << found;
        s += n;
        if (*s == '+' && !*++s)
            return -1;
    }
    return *out ? 0 : -1;
}

int mesh_spec_valid_preset_name(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n >= MESH_NAME_MAX || name[0] == '.' || name[0] == '-')
        return 0;
    return strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

/* ---- parameter counts (doc/design.md, "Parameter counts") ---- */

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

/* An MLP of width f: SwiGLU's gate, up and down (Llama, Mixtral, Qwen3,
 * DeepSeek-V3: modeling_*.py's MLP and expert classes, no biases); GeLU's
 * fc1 and fc2 with their biases. */
static double mlp_params(const mesh_model_t *m, double f)
{
    double h = m->hidden;
    return m->mlp == MESH_MLP_SWIGLU ? 3 * h * f : 2 * h * f + f + h;
}

/* A layer's two norms: RMSNorm a weight, LayerNorm a weight and a bias. */
static double norm_params(const mesh_model_t *m)
{
    return m->mlp == MESH_MLP_SWIGLU ? 2.0 * m->hidden : 4.0 * m->hidden;
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
    return m->moe.experts > 0;
}

int mesh_model_moe_layers(const mesh_model_t *m)
{
    return m->moe.experts > 0 ? m->layers - m->moe.dense_layers : 0;
}

double mesh_model_expert_params(const mesh_model_t *m)
{
    return m->moe.experts > 0 ? mlp_params(m, m->moe.ffn) : 0;
}

/* A MoE layer without its routed experts: attention, norms, the router (a
 * bias-free h x experts linear: Mixtral's and Qwen3-MoE's `gate`,
 * DeepSeek-V3's MoEGate weight; Megatron-LM's TopKRouter) and the shared
 * experts. */
double mesh_moe_layer_base(const mesh_model_t *m)
{
    double attn = mesh_model_layer_params(m) - mlp_params(m, m->ffn) - norm_params(m);
    return attn + norm_params(m) + (double)m->hidden * m->moe.experts +
           m->moe.shared_experts * mlp_params(m, m->moe.shared_ffn);
}

double mesh_model_moe_layer_params(const mesh_model_t *m)
{
    if (m->moe.experts <= 0)
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
    double moe_active = m->moe.experts > 0
                            ? mesh_moe_layer_base(m) + m->moe.top_k * mesh_model_expert_params(m)
                            : mesh_model_layer_params(m);
    int moe_layers = mesh_model_moe_layers(m), dense = m->layers - moe_layers;
    double emb = v * h * (m->tied_embeddings ? 1 : 2);
    double tail = m->mlp == MESH_MLP_SWIGLU ? h : (double)m->seq_len * h;
    return dense * mesh_model_layer_params(m) + moe_layers * moe_active +
           m->mtp_layers * (moe_active + mesh_mtp_extra(m)) + emb + tail;
}

double mesh_model_active_params(const mesh_model_t *m)
{
    if (!m->has_arch || (m->moe.experts <= 0 && !m->mtp_layers))
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
    if (m->mlp == MESH_MLP_SWIGLU) /* Llama: q,o h^2*q each, k,v h^2*kv each, gate/up/down, 2
                                      RMSNorms; Qwen3 the QK norms, Qwen2 the QKV biases too */
        return 2 * h * h * q + 2 * h * h * kv + 3 * h * f + 2 * h + qk_norm_params(m) +
               (m->qkv_bias ? h * q + 2 * h * kv : 0);
    /* GPT: QKV + biases, proj + bias, fc1/fc2 + biases, 2 LayerNorms (weight + bias).
     * With f = 4h and MHA this is Narayanan et al.'s 12h^2 + 13h. */
    return (h * h * q + 2 * h * h * kv) + (h * q + 2 * h * kv) + h * h * q + h + 2 * h * f + f + h +
           4 * h;
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
    if (m->moe.experts > 0 || m->mtp_layers) {
        int moe_layers = mesh_model_moe_layers(m);
        double tail = m->mlp == MESH_MLP_SWIGLU ? h : (double)m->seq_len * h;
        return (m->layers - moe_layers) * mesh_model_layer_params(m) +
               moe_layers * mesh_model_moe_layer_params(m) + mesh_model_mtp_params(m) + emb + tail;
    }
    if (m->mlp == MESH_MLP_SWIGLU) /* + final RMSNorm */
        return m->layers * mesh_model_layer_params(m) + emb + h;
    /* + learned positions (s*h); Narayanan's formula has no final-LayerNorm term */
    return m->layers * mesh_model_layer_params(m) + emb + (double)m->seq_len * h;
}

/* ---- reading ---- */

char *mesh_spec_read_file(const char *path, size_t *len, mesh_error_t *err)
{
    return mesh_read_regular_file(path, "spec", MESH_SPEC_MAX_BYTES, len, err);
}

static void model_defaults(mesh_model_t *m)
{
    memset(m, 0, sizeof(*m));
    m->mlp = MESH_MLP_SWIGLU;
    m->seq_len = 4096;
    m->global_batch = 512;
    m->micro_batch = 0;
    m->precision = MESH_PREC_BF16;
    m->fp8_recipe = MESH_FP8_DELAYED;
    m->grad_accum_dtype = MESH_PREC_FP32; /* finish() sets the precision's default */
    m->optimizer = MESH_OPT_ADAMW;
    m->optimizer_dtype = MESH_PREC_FP32;
    m->framework = MESH_FW_AUTO;
    m->recompute = MESH_RECOMPUTE_AUTO;
    m->flash_attention = 1;
    m->dropout = 0.0;
}

/* The parser state of one document, or of a list of overrides. */
typedef struct reader {
    yaml_parser_t parser;
    const char *origin;
    spec_in_t *in;
    mesh_error_t *err;
    const char *given; /* where the keys it sets were given: in->path, or the overrides' origin */
} reader_t;

/* The line of a key that no file holds (an override): errors name its
 * origin alone, and in->line says 0. */
#define NO_LINE ((size_t)-1)

static int fail(reader_t *r, size_t line0, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(reader_t *r, size_t line0, const char *fmt, ...)
{
    char msg[MESH_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (line0 == NO_LINE)
        return mesh_error_set(r->err, "%s: %s", r->origin, msg);
    return mesh_error_set(r->err, "%s:%zu: %s", r->origin, line0 + 1, msg);
}

static int next_event(reader_t *r, yaml_event_t *ev)
{
    return mesh_yaml_next(&r->parser, ev, r->origin, r->err);
}

static const struct key *find_key(const char *section, const char *name)
{
    for (int i = 0; i < MESH_ARRAY_LEN(keys); i++)
        if (strcmp(keys[i].section, section) == 0 && strcmp(keys[i].name, name) == 0)
            return &keys[i];
    return NULL;
}

static const char *key_list(const char *section, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int i = 0; i < MESH_ARRAY_LEN(keys); i++) {
        if (strcmp(keys[i].section, section) != 0)
            continue;
        if (buf[0])
            strncat(buf, ", ", len - strlen(buf) - 1);
        strncat(buf, keys[i].name, len - strlen(buf) - 1);
    }
    for (int i = 0; i < MESH_ARRAY_LEN(sections); i++)
        if (strcmp(sections[i].parent, section) == 0) {
            strncat(buf, ", ", len - strlen(buf) - 1);
            strncat(buf, section_key(&sections[i]), len - strlen(buf) - 1);
        }
    return buf;
}

/* A key's member of the model. */
static void *member_of(mesh_model_t *m, const struct key *k)
{
    return (char *)m + k->off;
}

static long long get_int(const mesh_model_t *m, const struct key *k)
{
    const char *p = (const char *)m + k->off;
    if (k->size == sizeof(long))
        return *(const long *)(const void *)p;
    return *(const int *)(const void *)p;
}

static void put_int(mesh_model_t *m, const struct key *k, long long v)
{
    if (k->size == sizeof(long))
        *(long *)member_of(m, k) = (long)v;
    else
        *(int *)member_of(m, k) = (int)v;
}

/* Store one scalar value into the member of key k. */
static int set_value(reader_t *r, const struct key *k, const char *dotted, const char *v,
                     size_t line)
{
    spec_in_t *in = r->in;
    mesh_model_t *m = &in->m;
    mesh_error_t e;
    long long iv = 0;
    double dv = 0;
    int bv = 0, id = (int)(k - keys);

    if (k->auto_value != NO_AUTO && strcasecmp(v, "auto") == 0) {
        put_int(m, k, k->auto_value);
        goto done;
    }
    const char *or_auto = k->auto_value != NO_AUTO ? " or auto" : "";
    switch (k->kind) {
    case K_STR:
    case K_PRESET:
        if (!mesh_spec_valid_preset_name(v))
            return fail(r, line,
                        "%s: '%.40s' is not a valid name (letters, digits, '.', '_', "
                        "'-'; at most %d characters)",
                        dotted, v, MESH_NAME_MAX - 1);
        if (k->kind == K_PRESET)
            mesh_strlcpy(in->preset, v, sizeof(in->preset));
        else
            mesh_strlcpy(member_of(m, k), v, k->size);
        break;
    case K_INT:
        if (mesh_parse_int(v, dotted, (long long)k->min, (long long)k->max, &iv, &e) < 0)
            return fail(r, line, "%s%s", e.msg, or_auto);
        put_int(m, k, iv);
        break;
    case K_NUM:
    case K_NUMNONE:
        if (k->kind == K_NUMNONE && strcasecmp(v, "none") == 0)
            dv = 0;
        else if (mesh_parse_double(v, dotted, k->min, k->max, &dv, &e) < 0)
            return fail(r, line, "%s%s", e.msg, k->kind == K_NUMNONE ? " or none" : "");
        *(double *)member_of(m, k) = dv;
        break;
    case K_BOOL:
        if (mesh_parse_bool(v, dotted, &bv, &e) < 0)
            return fail(r, line, "%s", e.msg);
        put_int(m, k, bv);
        break;
    case K_ENUM:
        if ((iv = enum_parse(k->choices, v)) < 0)
            return fail(r, line, "%s: '%.40s' is not one of: %s%s", dotted, v, k->choices,
                        k->auto_value != NO_AUTO ? " auto" : "");
        put_int(m, k, iv);
        break;
    }
done:
    in->set[id] = 1;
    in->file[id] = r->given;
    in->line[id] = (int)line + 1; /* 0 for NO_LINE */
    return 0;
}

/* The section a dotted name is a key of ("train" of "train.seq_len",
 * "arch.moe" of "arch.moe.experts": the longest that prefixes it), or NULL. */
static const char *section_of(const char *dotted)
{
    const char *best = NULL;
    for (int i = 0; i < MESH_ARRAY_LEN(sections); i++) {
        size_t n = strlen(sections[i].name);
        if (strncmp(dotted, sections[i].name, n) == 0 && dotted[n] == '.' &&
            (!best || n > strlen(best)))
            best = sections[i].name;
    }
    return best;
}

/* The key a dotted name ("train.seq_len", "params") names, or NULL. */
static const struct key *find_dotted(const char *dotted)
{
    const char *section = section_of(dotted);
    if (!strchr(dotted, '.'))
        return find_key("", dotted);
    return section ? find_key(section, dotted + strlen(section) + 1) : NULL;
}

/* By the whole dotted name, else by its last part ("arch.seq_len" is
 * train.seq_len). */
const char *mesh_spec_key_closest(const char *dotted)
{
    if (!dotted)
        return NULL;
    const char *names[F_COUNT], *leaves[F_COUNT], *dot = strrchr(dotted, '.');
    int n = 0;
    for (const char *k; n < F_COUNT && (k = mesh_spec_key_name(n)); n++) {
        names[n] = k;
        leaves[n] = strrchr(k, '.') ? strrchr(k, '.') + 1 : k;
    }
    const char *meant = mesh_closest_name(dotted, names, n);
    const char *leaf = meant ? NULL : mesh_closest_name(dot ? dot + 1 : dotted, leaves, n);
    for (int i = 0; leaf && i < n; i++)
        if (leaves[i] == leaf)
            meant = names[i];
    return meant;
}

/* The error for a key the spec does not have, in a file or an override:
 * the keys its section allows, and the one a typo most likely meant. */
static int unknown_key(reader_t *r, size_t line, const char *name, const char *section)
{
    char list[512], dotted[2 * SCALAR_MAX + 2];
    snprintf(dotted, sizeof(dotted), "%s%s%s", section, *section ? "." : "", name);
    const char *meant = mesh_spec_key_closest(dotted);
    return fail(r, line, "unknown key '%.64s'%s%s (allowed: %s)%s%s%s", name,
                *section ? " in " : "", section, key_list(section, list, sizeof(list)),
                meant ? "; did you mean " : "", meant ? meant : "", meant ? "?" : "");
}

/* Read a mapping whose MAPPING_START was consumed; section "" is the top. */
static int read_mapping(reader_t *r, const char *section, int depth)
{
    unsigned char seen_section[MESH_ARRAY_LEN(sections)] = {0};
    for (;;) {
        yaml_event_t key, val;
        if (next_event(r, &key) < 0)
            return -1;
        if (key.type == YAML_MAPPING_END_EVENT) {
            yaml_event_delete(&key);
            return 0;
        }
        size_t line = key.start_mark.line;
        if (key.type != YAML_SCALAR_EVENT) {
            yaml_event_delete(&key);
            return fail(r, line, "expected a key%s%s", *section ? " in " : "", section);
        }
        char name[SCALAR_MAX + 1], dotted[2 * SCALAR_MAX + 2];
        mesh_strlcpy(name, (const char *)key.data.scalar.value, sizeof(name));
        yaml_event_delete(&key);
        snprintf(dotted, sizeof(dotted), "%s%s%s", section, *section ? "." : "", name);

        if (next_event(r, &val) < 0)
            return -1;
        int sec = -1;
        for (int i = 0; i < MESH_ARRAY_LEN(sections); i++)
            if (strcmp(sections[i].parent, section) == 0 &&
                strcmp(name, section_key(&sections[i])) == 0)
                sec = i;
        if (sec >= 0) {
            int is_map = val.type == YAML_MAPPING_START_EVENT;
            yaml_event_delete(&val);
            if (!is_map)
                return fail(r, line, "%s: expected a mapping of keys", dotted);
            if (seen_section[sec]++)
                return fail(r, line, "%s: given twice", dotted);
            if (depth >= 3)
                return fail(r, line, "%s: nested too deeply", dotted);
            if (read_mapping(r, sections[sec].name, depth + 1) < 0)
                return -1;
            continue;
        }
        const struct key *k = find_key(section, name);
        if (!k) {
            yaml_event_delete(&val);
            return unknown_key(r, line, name, section);
        }
        if (val.type != YAML_SCALAR_EVENT) {
            yaml_event_delete(&val);
            return fail(r, line, "%s: expected a single value", dotted);
        }
        if (r->in->set[k - keys]) {
            yaml_event_delete(&val);
            return fail(r, line, "%s: given twice", dotted);
        }
        char value[SCALAR_MAX + 1];
        mesh_strlcpy(value, (const char *)val.data.scalar.value, sizeof(value));
        yaml_event_delete(&val);
        if (value[0] == '\0')
            return fail(r, line, "%s: empty value", dotted);
        if (set_value(r, k, dotted, value, line) < 0)
            return -1;
    }
}

/* Parse one document into *in (fields not given keep their values). */
static int read_document(const char *buf, size_t len, const char *origin, spec_in_t *in,
                         mesh_error_t *err)
{
    reader_t r = {.origin = origin, .in = in, .err = err, .given = in->path};
    mesh_strlcpy(in->path, origin, sizeof(in->path));
    if (memchr(buf, '\0', len))
        return mesh_error_set(err, "%s: not a text file (contains NUL bytes)", origin);
    if (!yaml_parser_initialize(&r.parser))
        return mesh_error_set(err, "%s: out of memory", origin);
    yaml_parser_set_input_string(&r.parser, (const unsigned char *)buf, len);
    int rc = -1, state = 0; /* 0 stream start, 1 doc start, 2 top mapping, 3 doc end, 4 done */
    while (state < 4) {
        yaml_event_t ev;
        if (next_event(&r, &ev) < 0)
            goto out;
        size_t line = ev.start_mark.line;
        yaml_event_type_t t = ev.type;
        yaml_event_delete(&ev);
        if (state == 0 && t == YAML_STREAM_START_EVENT)
            state = 1;
        else if (state == 1 && t == YAML_DOCUMENT_START_EVENT)
            state = 2;
        else if (state == 1 && t == YAML_STREAM_END_EVENT) {
            mesh_error_set(err, "%s: the spec is empty", origin);
            goto out;
        } else if (state == 2 && t == YAML_MAPPING_START_EVENT) {
            if (read_mapping(&r, "", 1) < 0)
                goto out;
            state = 3;
        } else if (state == 3 && t == YAML_DOCUMENT_END_EVENT) {
            yaml_event_t end;
            if (next_event(&r, &end) < 0)
                goto out;
            yaml_event_type_t et = end.type;
            line = end.start_mark.line;
            yaml_event_delete(&end);
            if (et != YAML_STREAM_END_EVENT) {
                fail(&r, line, "a spec holds one YAML document");
                goto out;
            }
            state = 4;
        } else {
            fail(&r, line, "a spec is a mapping of keys (name, preset, arch, params, train)");
            goto out;
        }
    }
    rc = 0;
out:
    yaml_parser_delete(&r.parser);
    return rc;
}

/* Find a preset file for `name` in dirs; 0 and the path, or -1. */
static int preset_path(const char *name, const mesh_spec_dirs_t *dirs, char *path, size_t len,
                       mesh_error_t *err)
{
    if (!mesh_spec_valid_preset_name(name))
        return mesh_error_set(err,
                              "'%.64s' is not a preset name (letters, digits, '.', '_', '-') "
                              "nor a path to a .yaml file",
                              name);
    char tried[MESH_ERROR_MAX] = "";
    for (int i = 0; dirs && i < MESH_ARRAY_LEN(dirs->dirs) && dirs->dirs[i]; i++) {
        snprintf(path, len, "%s/%s.yaml", dirs->dirs[i], name);
        /* the effective uid decides: in slurmstepd the real one is root */
        if (faccessat(AT_FDCWD, path, R_OK, AT_EACCESS) == 0)
            return 0;
        if (tried[0])
            strncat(tried, ", ", sizeof(tried) - strlen(tried) - 1);
        strncat(tried, dirs->dirs[i], sizeof(tried) - strlen(tried) - 1);
    }
    return mesh_error_set(err, "unknown preset '%s' (looked in: %s; `meshplan presets` lists them)",
                          name, tried[0] ? tried : "no preset directory");
}

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
        n += in->set[i] && strcmp(keys[i].section, sec) == 0;
    return n;
}

#define AT(f) where(in, f, user->path, loc, sizeof(loc))

/* Whether the spec gives key f's section (arch.moe, arch.mla): 1, or 0;
 * -1 with err when it gives the section without f, which it requires. */
static int given_with(const spec_in_t *in, const spec_in_t *user, int f, const char *why,
                      mesh_error_t *err)
{
    if (!any_set(in, keys[f].section))
        return 0;
    if (!in->set[f])
        return mesh_error_set(err, "%s: %s.%s is missing (%s)", user->path, keys[f].section,
                              keys[f].name, why);
    return 1;
}

/* arch.moe's router as Megatron-LM's TransformerConfig checks it
 * (transformer_config.py L2617-2625 and L2671-2690 at d98e8a6): the expert
 * bias only with sigmoid scores; group-limited routing with both groups and
 * group_top_k, the groups dividing the experts, and the chosen groups
 * holding at least top_k experts. */
static int finish_router(spec_in_t *in, const spec_in_t *user, mesh_error_t *err)
{
    char loc[PATH_LEN + 16];
    const mesh_router_t *r = &in->m.router;
    const mesh_moe_t *moe = &in->m.moe;
    if (in->set[F_MOE_GROUPS] != in->set[F_MOE_GROUP_TOPK])
        return mesh_error_set(err,
                              "%s: arch.moe.%s: group-limited routing needs both groups and "
                              "group_top_k (give the other, or neither)",
                              AT(in->set[F_MOE_GROUPS] ? F_MOE_GROUPS : F_MOE_GROUP_TOPK),
                              in->set[F_MOE_GROUPS] ? "groups" : "group_top_k");
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
    if (moe->top_k > moe->experts)
        return mesh_error_set(err, "%s: arch.moe.top_k: %d is more than the %d experts",
                              AT(F_MOE_TOPK), moe->top_k, moe->experts);
    if (moe->dense_layers >= in->m.layers)
        return mesh_error_set(err,
                              "%s: arch.moe.dense_layers: %d leaves no MoE layer of the %d "
                              "layers (at most %d)",
                              AT(F_MOE_DENSE), moe->dense_layers, in->m.layers, in->m.layers - 1);
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
#undef AT

/* Fill what the spec left out and check the whole model.  `user` is the
 * user's own document: when two keys disagree, the one given last (an
 * override, else the user's document, else the preset) is blamed, with
 * where it was given. */
static int finish(spec_in_t *in, const spec_in_t *user, mesh_error_t *err)
{
    const char *origin = user->path;
    char loc[PATH_LEN + 16];
#define AT(f)       where(in, f, origin, loc, sizeof(loc))
#define LATER(a, b) (given_by(in, user, a) > given_by(in, user, b))
    mesh_model_t *m = &in->m;
    int arch_keys = in->set[F_LAYERS] + in->set[F_HIDDEN] + in->set[F_HEADS] + in->set[F_VOCAB];
    /* the other arch keys mean nothing without these four: a spec giving
     * them alone has forgotten the rest (found by fuzzing the request) */
    int arch_extras = in->set[F_KV_HEADS] + in->set[F_FFN] + in->set[F_MLP] + in->set[F_TIED] +
                      in->set[F_MTP] + in->set[F_ROPE_THETA] + in->set[F_ROPE_SCALING] +
                      in->set[F_NORM_EPS] + in->set[F_QK_NORM] + in->set[F_QKV_BIAS] +
                      any_set(in, "arch.moe") + any_set(in, "arch.mla");
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
    /* rotary positions are the Llama-style model's (mlp swiglu); GPT-style
     * learns its positions */
    /* QK norms are counted as RMSNorms of Llama-style heads; MLA has its
     * latent norms instead, always */
    if (m->qk_norm && (m->mlp != MESH_MLP_SWIGLU || in->set[F_MLA_KV]))
        return mesh_error_set(err, "%s: arch.qk_norm: %s: leave it out", AT(F_QK_NORM),
                              in->set[F_MLA_KV] ? "MLA has its latent norms instead"
                                                : "QK norms are described for mlp: swiglu only");
    /* GPT-style layers have every bias already; MLA's projections none */
    if (m->qkv_bias && (m->mlp != MESH_MLP_SWIGLU || in->set[F_MLA_KV]))
        return mesh_error_set(err, "%s: arch.qkv_bias: %s: leave it out", AT(F_QKV_BIAS),
                              in->set[F_MLA_KV] ? "MLA's projections have no biases here"
                                                : "mlp: gelu has every bias already");
    if (in->set[F_MLA_MSCALE] && !m->rope_scaling)
        return mesh_error_set(err,
                              "%s: arch.mla.mscale_all_dim: only means something with YaRN "
                              "(give arch.rope_scaling, or leave it out)",
                              AT(F_MLA_MSCALE));
    int rope = in->set[F_ROPE_THETA] ? F_ROPE_THETA : F_ROPE_SCALING;
    /* (a preset's rotary base stays, unused, under a file's mlp: gelu) */
    if (m->mlp != MESH_MLP_SWIGLU && in->set[rope] && !LATER(F_MLP, rope))
        return mesh_error_set(err,
                              "%s: arch.%s: rotary positions are mlp: swiglu's (mlp: gelu learns "
                              "its positions): leave it out, or use mlp: swiglu",
                              AT(rope), keys[rope].name);
    if (!m->has_arch && !in->set[F_PARAMS])
        return mesh_error_set(err, "%s: give arch (layers, hidden, heads, vocab) or params",
                              origin);
    if (m->has_arch) {
        if (!in->set[F_KV_HEADS])
            m->kv_heads = m->heads;
        if (!in->set[F_FFN])
            m->ffn = 4 * m->hidden;
        if (finish_moe(in, user, err) < 0 || finish_mla(in, user, err) < 0)
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
    /* a preset's recipe goes with the preset's fp8: a file that trains the
     * preset in another precision drops it (a key cannot be unset) */
    if (in->set[F_FP8_RECIPE] && m->precision != MESH_PREC_FP8 &&
        given_by(in, user, F_FP8_RECIPE) == 0 && LATER(F_PREC, F_FP8_RECIPE)) {
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
    if (m->optimizer_dtype != MESH_PREC_FP32 && m->framework == MESH_FW_DEEPSPEED)
        return mesh_error_set(err,
                              "%s: train.optimizer_dtype: DeepSpeed keeps fp32 Adam moments; "
                              "use fp32, or framework: megatron",
                              AT(F_OPT_DTYPE));
    if (in->set[F_MOE_IMBALANCE] && !m->moe.experts)
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

/* Whether keys set (a document's or the overrides') change the arch, so
 * that a parameter count given with the old one no longer holds. */
static int changes_arch(const unsigned char set[F_COUNT])
{
    for (int i = 0; i < F_COUNT; i++)
        if (set[i] &&
            (strcmp(keys[i].section, "arch.moe") == 0 || strcmp(keys[i].section, "arch.mla") == 0))
            return 1;
    return set[F_LAYERS] || set[F_HIDDEN] || set[F_HEADS] || set[F_KV_HEADS] || set[F_FFN] ||
           set[F_VOCAB] || set[F_MLP] || set[F_TIED] || set[F_MTP];
}

/* Apply overrides ("KEY=VALUE", KEY dotted) to *in, each read as the same
 * key of a file is; a key given twice among them is an error, as in a file. */
static int apply_sets(spec_in_t *in, const char *origin, const char *const *sets, int n,
                      mesh_error_t *err)
{
    reader_t r = {.origin = origin, .in = in, .err = err, .given = origin};
    unsigned char seen[F_COUNT] = {0};
    for (int i = 0; i < n; i++) {
        const char *eq = strchr(sets[i], '=');
        char dotted[2 * SCALAR_MAX + 2];
        if (!eq || eq == sets[i] || (size_t)(eq - sets[i]) >= sizeof(dotted))
            return fail(&r, NO_LINE, "'%.64s' is not KEY=VALUE", sets[i]);
        snprintf(dotted, sizeof(dotted), "%.*s", (int)(eq - sets[i]), sets[i]);
        const struct key *k = find_dotted(dotted);
        if (!k) {
            const char *section = section_of(dotted);
            return unknown_key(&r, NO_LINE, section ? dotted + strlen(section) + 1 : dotted,
                               section ? section : "");
        }
        if (k->kind == K_PRESET)
            return fail(&r, NO_LINE,
                        "preset: an override cannot change the preset (load it "
                        "as the spec, or name it in a file)");
        if (seen[k - keys]++)
            return fail(&r, NO_LINE, "%s: given twice", dotted);
        if (!eq[1])
            return fail(&r, NO_LINE, "%s: empty value", dotted);
        if (strlen(eq + 1) > SCALAR_MAX)
            return fail(&r, NO_LINE, "%s: a value is longer than %d characters", dotted,
                        SCALAR_MAX);
        if (set_value(&r, k, dotted, eq + 1, NO_LINE) < 0)
            return -1;
    }
    /* a parameter count no longer holds when an override changed the arch */
    if (!seen[F_PARAMS] && changes_arch(seen))
        in->set[F_PARAMS] = 0;
    return 0;
}

/* Copy into base the keys `over` set (its preset is the base itself). */
static void apply_overrides(spec_in_t *base, const spec_in_t *over)
{
    for (int i = 0; i < F_COUNT; i++) {
        if (!over->set[i] || keys[i].kind == K_PRESET)
            continue;
        memcpy(member_of(&base->m, &keys[i]), (const char *)&over->m + keys[i].off, keys[i].size);
        base->set[i] = 1;
        base->file[i] = over->file[i];
        base->line[i] = over->line[i];
    }
}

static int load_preset(const char *name, const mesh_spec_dirs_t *dirs, spec_in_t *out,
                       mesh_error_t *err)
{
    char path[PATH_LEN];
    if (preset_path(name, dirs, path, sizeof(path), err) < 0)
        return -1;
    size_t len;
    char *buf = mesh_spec_read_file(path, &len, err);
    if (!buf)
        return -1;
    memset(out, 0, sizeof(*out));
    model_defaults(&out->m);
    int rc = read_document(buf, len, path, out, err);
    free(buf);
    if (rc == 0 && out->preset[0])
        rc = mesh_error_set(err, "%s: a preset cannot itself name a preset", path);
    if (rc == 0 && !out->set[F_NAME])
        mesh_strlcpy(out->m.name, name, sizeof(out->m.name));
    return rc;
}

/* Overrides to apply on top of a spec: origin names them in errors. */
typedef struct overrides {
    const char *origin;
    const char *const *sets;
    int n;
} overrides_t;

/* mesh_spec_parse, with overrides applied before the model is checked. */
static int parse_with(const char *buf, size_t len, const char *origin, const mesh_spec_dirs_t *dirs,
                      const overrides_t *ov, mesh_model_t *out, mesh_error_t *err)
{
    spec_in_t *in = calloc(2, sizeof(spec_in_t));
    if (!in)
        return mesh_error_set(err, "%s: out of memory", origin);
    spec_in_t *file = &in[0], *base = &in[1], *user = file;
    model_defaults(&file->m);
    int rc = read_document(buf, len, origin, file, err);
    if (rc == 0 && file->preset[0]) {
        if (!dirs) {
            rc = mesh_error_set(err, "%s:%d: preset: presets are not available here", origin,
                                file->line[F_PRESET]);
        } else if (load_preset(file->preset, dirs, base, err) < 0) {
            rc = mesh_error_prefix(err, "%s:%d: preset", origin, file->line[F_PRESET]);
        } else {
            apply_overrides(base, file);
            mesh_strlcpy(base->preset, file->preset, sizeof(base->preset));
            /* a count the preset gave no longer holds if the file changed the arch */
            if (!file->set[F_PARAMS] && changes_arch(file->set))
                base->set[F_PARAMS] = 0;
            file = base;
        }
    }
    if (rc == 0 && ov && ov->n > 0)
        rc = apply_sets(file, ov->origin, ov->sets, ov->n, err);
    if (rc == 0)
        rc = finish(file, user, err);
    if (rc == 0)
        *out = file->m;
    free(in);
    return rc;
}

int mesh_spec_parse(const char *buf, size_t len, const char *origin, const mesh_spec_dirs_t *dirs,
                    mesh_model_t *out, mesh_error_t *err)
{
    return parse_with(buf, len, origin, dirs, NULL, out, err);
}

/* A Hugging Face config.json, by its name. */
static int is_json(const char *spec)
{
    size_t n = strlen(spec);
    return n > 5 && strcmp(spec + n - 5, ".json") == 0;
}

int mesh_spec_is_path(const char *spec)
{
    size_t n = strlen(spec);
    return strchr(spec, '/') || (n > 5 && strcmp(spec + n - 5, ".yaml") == 0) ||
           (n > 4 && strcmp(spec + n - 4, ".yml") == 0) || is_json(spec);
}

/* A Hugging Face config.json at `path`, translated (lib/hfconfig.c) and read
 * as a spec document with the overrides; named after its folder
 * (".../Meta-Llama-3-8B/config.json"), else "hf-model".  An error in the
 * translated document names the config's field it came from. */
static int parse_hf(const char *buf, size_t len, const char *path, const overrides_t *ov,
                    mesh_model_t *out, mesh_error_t *err)
{
    char name[MESH_NAME_MAX] = "hf-model", dir[PATH_LEN];
    const char *slash = strrchr(path, '/');
    if (slash && (size_t)(slash - path) < sizeof(dir)) {
        memcpy(dir, path, (size_t)(slash - path));
        dir[slash - path] = '\0';
        const char *base = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
        if (mesh_spec_valid_preset_name(base))
            mesh_strlcpy(name, base, sizeof(name));
    }
    const char *fields[MESH_HF_FIELDS_MAX];
    int lines = 0;
    mesh_buf_t doc;
    mesh_buf_init(&doc);
    if (mesh_hf_config_spec(buf, len, path, name, &doc, fields, &lines, err) < 0) {
        mesh_buf_free(&doc);
        return -1;
    }
    int rc = parse_with(doc.data, doc.len, path, NULL, ov, out, err);
    mesh_buf_free(&doc);
    /* "PATH:LINE: key: ..." of the translated document: the field instead */
    size_t n = strlen(path);
    int line = 0, at = 0;
    if (rc < 0 && err && strncmp(err->msg, path, n) == 0 &&
        sscanf(err->msg + n, ":%d: %n", &line, &at) == 1 && at > 0 && line >= 1 && line <= lines &&
        fields[line - 1]) {
        char rest[MESH_ERROR_MAX];
        mesh_strlcpy(rest, err->msg + n + (size_t)at, sizeof(rest));
        mesh_error_set(err, "%s: %s: %s", path, fields[line - 1], rest);
    }
    return rc;
}

int mesh_spec_load_with(const char *spec, const mesh_spec_dirs_t *dirs, const char *origin,
                        const char *const *sets, int n, mesh_model_t *out, mesh_error_t *err)
{
    overrides_t ov = {.origin = origin ? origin : "override", .sets = sets, .n = sets ? n : 0};
    if (!spec || !*spec)
        return mesh_error_set(err, "model: empty spec (give a preset name or a .yaml file)");
    char path[PATH_LEN];
    int preset = !mesh_spec_is_path(spec);
    if (preset) {
        if (preset_path(spec, dirs, path, sizeof(path), err) < 0)
            return -1;
        spec = path;
    }
    size_t len;
    char *buf = mesh_spec_read_file(spec, &len, err);
    if (!buf)
        return -1;
    /* a preset may not name another: it is read without the directories */
    int rc = !preset && is_json(spec)
                 ? parse_hf(buf, len, spec, &ov, out, err)
                 : parse_with(buf, len, spec, preset ? NULL : dirs, &ov, out, err);
    free(buf);
    return rc;
}

int mesh_spec_load(const char *spec, const mesh_spec_dirs_t *dirs, mesh_model_t *out,
                   mesh_error_t *err)
{
    return mesh_spec_load_with(spec, dirs, NULL, NULL, 0, out, err);
}

const char *mesh_spec_key_name(int i)
{
    /* "section.name", or ".name" for a top-level key (shown without its dot) */
#define DOTTED(id, sec, nm, ...) sec "." nm,
    static const char *const dotted[] = {SPEC_KEYS(DOTTED)};
#undef DOTTED
    /* preset is no key of a model: it names where the keys come from */
    int n = 0;
    for (int k = 0; k < F_COUNT; k++)
        if (keys[k].kind != K_PRESET && n++ == i)
            return dotted[k] + (dotted[k][0] == '.');
    return NULL;
}

/* A key carried only when set, and not set here (0). */
static int unset(const mesh_model_t *m, const struct key *k)
{
    if (k->when != WHEN_SET && k->when != BUDGET)
        return 0;
    if (k->kind == K_NUM || k->kind == K_NUMNONE)
        return *(const double *)(const void *)((const char *)m + k->off) == 0;
    return get_int(m, k) == 0;
}

/* Key k's value as the request writes it (enum and "auto" by name), or as
 * the digest hashes it (raw numbers). */
static void put_value(mesh_buf_t *b, const mesh_model_t *m, const struct key *k, int named)
{
    char name[32];
    switch (k->kind) {
    case K_STR: mesh_buf_puts(b, (const char *)m + k->off); break;
    case K_PRESET: break;
    case K_NUM:
    case K_NUMNONE:
        mesh_buf_printf(b, "%.17g", *(const double *)(const void *)((const char *)m + k->off));
        break;
    default: {
        long long v = get_int(m, k);
        if (!named)
            mesh_buf_printf(b, "%lld", v);
        else if (k->auto_value != NO_AUTO && v == k->auto_value)
            mesh_buf_puts(b, "auto");
        else if (k->kind == K_BOOL)
            mesh_buf_puts(b, v ? "true" : "false");
        else if (k->kind == K_ENUM)
            mesh_buf_puts(b, enum_names(k->choices, (int)v, name, sizeof(name)));
        else
            mesh_buf_printf(b, "%lld", v);
    }
    }
}

/* The depth of a section: 0 the top level, 1 arch, 2 arch.moe. */
static int section_depth(const char *sec)
{
    int d = *sec != '\0';
    for (const char *c = sec; *c; c++)
        d += *c == '.';
    return d;
}

/* The leading parts sections a and b share ("arch.moe" and "arch.mla": 1). */
static int shared_depth(const char *a, const char *b)
{
    int d = 0;
    while (*a && *b) {
        size_t na = strcspn(a, "."), nb = strcspn(b, ".");
        if (na != nb || strncmp(a, b, na) != 0)
            break;
        d++;
        a += na + (a[na] == '.');
        b += nb + (b[nb] == '.');
    }
    return d;
}

/* Write what takes the request's flow mappings from section `from` (NULL:
 * nothing written yet) to section `to`: closing the mappings `to` is not
 * in, then opening its own ("arch" to "arch.moe": ", moe: {"). */
static void spec_write_move(mesh_buf_t *b, const char *from, const char *to)
{
    if (from && strcmp(from, to) == 0) {
        mesh_buf_puts(b, ", ");
        return;
    }
    int shared = from ? shared_depth(from, to) : 0;
    for (int d = from ? section_depth(from) : 0; d > shared; d--)
        mesh_buf_puts(b, "}");
    if (from)
        mesh_buf_puts(b, ", ");
    const char *p = to;
    for (int d = 0; *p; d++) {
        size_t n = strcspn(p, ".");
        if (d >= shared)
            mesh_buf_printf(b, "%.*s: {", (int)n, p);
        p += n + (p[n] == '.');
    }
}

void mesh_spec_write(const mesh_model_t *m, mesh_buf_t *b)
{
    /* every key but preset: a request is complete in itself; the arch
     * section when there is one, fp8_recipe only under fp8 (it is an error
     * otherwise) */
    const char *open = NULL;
    mesh_buf_puts(b, "{");
    for (int i = 0; i < F_COUNT; i++) {
        const struct key *k = &keys[i];
        if (k->kind == K_PRESET || (!m->has_arch && in_section(k->section, "arch")) ||
            (k->when == WITH_FP8 && m->precision != MESH_PREC_FP8) || unset(m, k))
            continue;
        spec_write_move(b, open, k->section);
        open = k->section;
        mesh_buf_printf(b, "%s: ", k->name);
        put_value(b, m, k, 1);
    }
    for (int d = section_depth(open ? open : ""); d > 0; d--)
        mesh_buf_puts(b, "}");
    mesh_buf_puts(b, "}");
}

const char *mesh_model_digest(const mesh_model_t *m, char buf[17])
{
    /* every key but preset, in table order, and after the top-level ones
     * whether there is an arch */
    mesh_buf_t b;
    mesh_buf_init(&b);
    mesh_buf_puts(&b, "m2");
    for (int i = 0; i < F_COUNT; i++) {
        if (keys[i].kind == K_PRESET || keys[i].when == BUDGET || unset(m, &keys[i]))
            continue;
        if (i > 0 && !*keys[i - 1].section && *keys[i].section)
            mesh_buf_printf(&b, "|%d", m->has_arch);
        mesh_buf_puts(&b, "|");
        put_value(&b, m, &keys[i], 0);
    }
    /* a digest of nothing rather than of a part, should memory run out */
    snprintf(buf, 17, "%016llx",
             (unsigned long long)mesh_fnv1a64(b.failed || !b.data ? "" : b.data));
    mesh_buf_free(&b);
    return buf;
}
