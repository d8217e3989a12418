/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the suites that test mixture of experts, MLA and MTP share: a small
 * model counted by hand, and spec edits.
 */
#ifndef MESH_MOEUTIL_H
#define MESH_MOEUTIL_H

#include "testutil.h"

/* A small MoE with MLA and an MTP layer, counted by hand.  hidden 64, 4
 * heads, vocab 100 untied, 3 layers, the first dense (ffn 256);
 * MLA q_lora 16, kv_lora 8, qk 8 + rope 4, v 8:
 *   q_a 64*16 = 1024, its norm 16, q_b 16*4*12 = 768,
 *   kv_a 64*(8+4) = 768, its norm 8, kv_b 8*4*(8+8) = 512, o 4*8*64 = 2048:
 *   attention 5144; norms 128
 *   dense MLP 3*64*256 = 49152: dense layer 54424
 *   MoE: 6 experts of 32 (3*64*32 = 6144 each: 36864), router 64*6 = 384,
 *   1 shared of 16 (3072): MoE layer 5144 + 128 + 384 + 3072 + 36864 = 45592
 *   MTP: a MoE layer + 2*64*64 + 3*64 = 45592 + 8384 = 53976
 *   total 54424 + 2*45592 + 53976 + 2*6400 + 64 = 212448
 *   active (top 2): MoE layer 45592 - 4*6144 = 21016;
 *   54424 + 2*21016 + (21016 + 8384) + 12800 + 64 = 138720 */
static inline const char *moe_small(void)
{
    return "name: small-moe\n"
           "arch:\n  layers: 3\n  hidden: 64\n  heads: 4\n  ffn: 256\n"
           "  vocab: 100\n  mtp_layers: 1\n"
           "  moe:\n    experts: 6\n    top_k: 2\n    ffn: 32\n"
           "    shared_experts: 1\n    shared_ffn: 16\n    dense_layers: 1\n"
           "  mla:\n    q_lora_rank: 16\n    kv_lora_rank: 8\n"
           "    qk_head_dim: 8\n    qk_rope_head_dim: 4\n    v_head_dim: 8\n";
}

/* src with its first `old` replaced by `new`, in dst. */
static inline void replaced(char *dst, size_t len, const char *src, const char *old,
                            const char *new)
{
    const char *at = strstr(src, old);
    assert_non_null(at);
    snprintf(dst, len, "%.*s%s%s", (int)(at - src), src, new, at + strlen(old));
}

/* The model of a flow-style spec, trained in FP8. */
static inline mesh_model_t in_fp8(const char *yaml)
{
    char fp8[1024];
    replaced(fp8, sizeof(fp8), yaml, "train: {", "train: {precision: fp8, ");
    return test_spec(fp8);
}

/* The value of variable `name` in e, or NULL. */
static inline const char *env_get(const mesh_env_t *e, const char *name)
{
    for (int i = 0; i < mesh_env_count(e); i++)
        if (strcmp(mesh_env_name(e, i), name) == 0)
            return mesh_env_value(e, i);
    return NULL;
}

#endif
