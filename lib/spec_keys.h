/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The spec's own header (not installed): the one table of its keys, shared
 * by its three files, bottom to top:
 *
 *   spec_keys.c   the table, the sections, the enum names, and what is
 *                 written from the table (the controller's request, the
 *                 digest)
 *   spec_check.c  the rules a finished spec must meet, naming the key and
 *                 where it was given
 *   spec.c        reading: YAML documents, presets, --set, config.json
 *
 * Each calls only the ones before it in this list (tests/check-layers).
 */
#ifndef MESH_SPEC_KEYS_H
#define MESH_SPEC_KEYS_H

#include <stddef.h>

#include "internal.h"
#include "meshplan/spec.h"

#define PATH_LEN 1024

#define SCALAR_MAX MESH_YAML_SCALAR_MAX

/* K_INT and K_COUNT: counts as people write them (32k, 4.2M, 32Ki:
 * mesh_parse_count), stored as an int or long, or as a double; K_NUMNONE:
 * a number, or "none" (stored as 0) */
enum kind { K_STR, K_PRESET, K_INT, K_NUM, K_BOOL, K_ENUM, K_NUMNONE, K_COUNT };
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
 * choices (K_ENUM, CH(...) in enum order), the value "auto" stands
 * for (NO_AUTO: none), and when the request carries it.  The table drives
 * reading, the allowed-keys lists of errors, a file's overrides of its
 * preset, the controller's request and the digest; the field ids name a key
 * where its value is checked (mesh_spec_finish()).  Adding a key is a row here, its
 * default in model_defaults() and its use.  The train keys keep the digest's
 * historical order, so that plan digests stay the same.  preset is kept in
 * spec_in_t, not in the model (its member column is unused).
 */
/* A K_ENUM key's choices, in its enum's order: the one place the enum
 * names are spelled (the mesh_*_name functions return them). */
#define CH(...) ((const char *const[]){__VA_ARGS__, NULL})

#define SPEC_KEYS(X)                                                                               \
    X(F_NAME, "", "name", K_STR, name, 0, 0, NULL, NO_AUTO, ALWAYS)                                \
    X(F_PRESET, "", "preset", K_PRESET, name, 0, 0, NULL, NO_AUTO, ALWAYS)                         \
    X(F_PARAMS, "", "params", K_COUNT, params, PARAMS_MIN, PARAMS_MAX, NULL, NO_AUTO, ALWAYS)      \
    X(F_LAYERS, "arch", "layers", K_INT, layers, 1, 100000, NULL, NO_AUTO, ALWAYS)                 \
    X(F_HIDDEN, "arch", "hidden", K_INT, hidden, 1, 1 << 20, NULL, NO_AUTO, ALWAYS)                \
    X(F_HEADS, "arch", "heads", K_INT, heads, 1, 1 << 16, NULL, NO_AUTO, ALWAYS)                   \
    X(F_KV_HEADS, "arch", "kv_heads", K_INT, kv_heads, 1, 1 << 16, NULL, NO_AUTO, ALWAYS)          \
    X(F_HEAD_DIM, "arch", "head_dim", K_INT, head_dim, 1, 1 << 16, NULL, NO_AUTO, WHEN_SET)        \
    X(F_FFN, "arch", "ffn", K_INT, ffn, 1, 1 << 24, NULL, NO_AUTO, ALWAYS)                         \
    X(F_VOCAB, "arch", "vocab", K_INT, vocab, 1, 1 << 24, NULL, NO_AUTO, ALWAYS)                   \
    X(F_MLP, "arch", "mlp", K_ENUM, mlp, 0, 0, CH("gelu", "swiglu", "relu2", "quick_geglu"),       \
      NO_AUTO, ALWAYS)                                                                             \
    X(F_TIED, "arch", "tied_embeddings", K_BOOL, tied_embeddings, 0, 0, NULL, NO_AUTO, ALWAYS)     \
    X(F_MTP, "arch", "mtp_layers", K_INT, mtp_layers, 0, 64, NULL, NO_AUTO, WHEN_SET)              \
    X(F_ROPE_THETA, "arch", "rope_theta", K_INT, rope_theta, 1, 2147483647, NULL, NO_AUTO,         \
      WHEN_SET)                                                                                    \
    X(F_ROPE_SCALING, "arch", "rope_scaling", K_NUMNONE, rope_scaling, 1, 1000, NULL, NO_AUTO,     \
      WHEN_SET)                                                                                    \
    X(F_ROPE_TYPE, "arch", "rope_type", K_ENUM, rope_type, 0, 0, CH("llama3", "yarn"), NO_AUTO,    \
      WHEN_SET)                                                                                    \
    X(F_YARN_TRUNCATE, "arch", "yarn_truncate", K_ENUM, yarn_truncate, 0, 0, CH("true", "false"),  \
      NO_AUTO, WHEN_SET)                                                                           \
    X(F_ROTARY_PCT, "arch", "rotary_percent", K_NUM, rotary_percent, 0.01, 1, NULL, NO_AUTO,       \
      WHEN_SET)                                                                                    \
    X(F_QK_NORM, "arch", "qk_norm", K_BOOL, qk_norm, 0, 0, NULL, NO_AUTO, WHEN_SET)                \
    X(F_QK_L2, "arch", "qk_l2_norm", K_BOOL, qk_l2_norm, 0, 0, NULL, NO_AUTO, WHEN_SET)            \
    X(F_QKV_BIAS, "arch", "qkv_bias", K_BOOL, qkv_bias, 0, 0, NULL, NO_AUTO, WHEN_SET)             \
    X(F_NORM_EPS, "arch", "norm_eps", K_NUM, norm_eps, 1e-12, 0.1, NULL, NO_AUTO, WHEN_SET)        \
    X(F_WINDOW, "arch", "window", K_INT, window, 1, 1 << 24, NULL, NO_AUTO, WHEN_SET)              \
    X(F_FULL_EVERY, "arch", "full_attention_every", K_INT, full_attention_every, 2, 100000, NULL,  \
      NO_AUTO, WHEN_SET)                                                                           \
    X(F_NOPE_EVERY, "arch", "nope_every", K_INT, nope_every, 2, 100000, NULL, NO_AUTO, WHEN_SET)   \
    X(F_ROTARY_IL, "arch", "rotary_interleaved", K_BOOL, rotary_interleaved, 0, 0, NULL, NO_AUTO,  \
      WHEN_SET)                                                                                    \
    X(F_SINKS, "arch", "attention_sinks", K_BOOL, attention_sinks, 0, 0, NULL, NO_AUTO, WHEN_SET)  \
    X(F_ACT_CLAMP, "arch", "activation_clamp", K_NUMNONE, activation_clamp, 1e-3, 1e3, NULL,       \
      NO_AUTO, WHEN_SET)                                                                           \
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
    X(F_MOE_EVERY, "arch.moe", "every", K_INT, moe.every, 1, 64, NULL, NO_AUTO, WHEN_SET)          \
    X(F_MOE_CAPACITY, "arch.moe", "capacity_factor", K_NUMNONE, moe.capacity_factor, 0.01, 1000,   \
      NULL, NO_AUTO, WHEN_SET)                                                                     \
    X(F_MOE_SCORE, "arch.moe", "score", K_ENUM, router.score, 0, 0, CH("softmax", "sigmoid"),      \
      NO_AUTO, WHEN_SET)                                                                           \
    X(F_MOE_BIAS, "arch.moe", "expert_bias", K_BOOL, router.expert_bias, 0, 0, NULL, NO_AUTO,      \
      WHEN_SET)                                                                                    \
    X(F_MOE_GROUPS, "arch.moe", "groups", K_INT, router.groups, 1, 1 << 16, NULL, NO_AUTO,         \
      WHEN_SET)                                                                                    \
    X(F_MOE_GROUP_TOPK, "arch.moe", "group_top_k", K_INT, router.group_top_k, 1, 1 << 16, NULL,    \
      NO_AUTO, WHEN_SET)                                                                           \
    X(F_MOE_SCALING, "arch.moe", "routed_scaling", K_NUM, router.routed_scaling, 1e-6, 1e6, NULL,  \
      NO_AUTO, WHEN_SET)                                                                           \
    X(F_MOE_AUX, "arch.moe", "aux_loss", K_NUM, router.aux_loss, 1e-9, 1, NULL, NO_AUTO, WHEN_SET) \
    X(F_MOE_PROBS_IN, "arch.moe", "probs_on_input", K_BOOL, router.probs_on_input, 0, 0, NULL,     \
      NO_AUTO, WHEN_SET)                                                                           \
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
    X(F_PREC, "train", "precision", K_ENUM, precision, 0, 0, CH("bf16", "fp16", "fp32", "fp8"),    \
      NO_AUTO, ALWAYS)                                                                             \
    X(F_GRAD_DTYPE, "train", "grad_accum_dtype", K_ENUM, grad_accum_dtype, 0, 0,                   \
      CH("bf16", "fp16", "fp32"), NO_AUTO, ALWAYS)                                                 \
    X(F_OPT, "train", "optimizer", K_ENUM, optimizer, 0, 0, CH("adam", "adamw", "sgd"), NO_AUTO,   \
      ALWAYS)                                                                                      \
    X(F_RECOMPUTE, "train", "recompute", K_ENUM, recompute, 0, 0, CH("none", "selective", "full"), \
      MESH_RECOMPUTE_AUTO, ALWAYS)                                                                 \
    X(F_FLASH, "train", "flash_attention", K_BOOL, flash_attention, 0, 0, NULL, NO_AUTO, ALWAYS)   \
    X(F_DROPOUT, "train", "dropout", K_NUM, dropout, 0, 1, NULL, NO_AUTO, ALWAYS)                  \
    X(F_FINETUNE, "train", "finetune", K_ENUM, finetune, 0, 0, CH("full", "lora"), NO_AUTO,        \
      ALWAYS)                                                                                      \
    X(F_FP8_RECIPE, "train", "fp8_recipe", K_ENUM, fp8_recipe, 0, 0,                               \
      CH("delayed", "tensorwise", "blockwise", "mxfp8"), NO_AUTO, WITH_FP8)                        \
    X(F_OPT_DTYPE, "train", "optimizer_dtype", K_ENUM, optimizer_dtype, 0, 0,                      \
      CH("bf16", "fp16", "fp32"), NO_AUTO, ALWAYS)                                                 \
    X(F_FRAMEWORK, "train", "framework", K_ENUM, framework, 0, 0,                                  \
      CH("auto", "megatron", "deepspeed", "torch"), NO_AUTO, ALWAYS)                               \
    X(F_MOE_IMBALANCE, "train", "moe_imbalance", K_NUM, moe_imbalance, 1, 1000, NULL, NO_AUTO,     \
      WHEN_SET)                                                                                    \
    X(F_HEADROOM, "train", "headroom", K_NUM, headroom, 0, MESH_HEADROOM_MAX, NULL, NO_AUTO,       \
      WHEN_SET)                                                                                    \
    X(F_TOKENS, "train", "tokens", K_COUNT, tokens, 1, 1e18, NULL, NO_AUTO, BUDGET)                \
    X(F_STEPS, "train", "steps", K_INT, steps, 1, 1e15, NULL, NO_AUTO, BUDGET)                     \
    X(F_EP_OVERLAP, "train", "ep_overlap", K_ENUM, ep_overlap, 0, 0, CH("on", "off"), NO_AUTO,     \
      WHEN_SET)                                                                                    \
    X(F_DISPATCHER, "train", "dispatcher", K_ENUM, dispatcher, 0, 0,                               \
      CH("auto", "alltoall", "deepep"), NO_AUTO, WHEN_SET)

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

/* One row of the table (SPEC_KEYS). */
struct key {
    const char *section, *name;
    enum kind kind;
    size_t off, size; /* the member of mesh_model_t */
    double min, max;
    const char *const *choices; /* K_ENUM: NULL-terminated; else NULL */
    int auto_value;
    enum when when;
};
extern const struct key mesh_spec_keys[F_COUNT];

/* The sections, each with the one it is nested in ("" the top level):
 * arch.moe and arch.mla are mappings inside arch. */
struct section {
    const char *name, *parent;
};
#define MESH_SPEC_SECTIONS 4
extern const struct section mesh_spec_sections[MESH_SPEC_SECTIONS];

/* "moe" of "arch.moe": a section's key in its parent. */
const char *mesh_spec_section_key(const struct section *s);
/* Whether section sec is top or nested in it. */
int mesh_spec_in_section(const char *sec, const char *top);
/* The i-th of the choices, or "?" outside them. */
const char *mesh_spec_choice(const char *const *choices, int i);
/* The index of s among the choices (any case), or -1. */
int mesh_spec_enum_parse(const char *const *choices, const char *s);
/* The choices joined by spaces, into buf[len], for errors. */
const char *mesh_spec_choices_list(const char *const *choices, char *buf, size_t len);
/* Check and complete a spec: in is the merged spec, user the user's own
 * document (its path and the keys it set); 0, or -1 with err naming the key
 * and where it was given (spec_check.c). */
int mesh_spec_finish(spec_in_t *in, const spec_in_t *user, mesh_error_t *err);

#endif
