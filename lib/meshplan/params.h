/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan: the whole model's parameter counts.
 *
 * From a spec's architecture (spec.h's mesh_model_t): the parameters of a
 * layer, an expert, a MoE layer, the MTP layers, the model and what one
 * token passes through, as Megatron-LM allocates them (doc/design.md,
 * "Parameter counts").  How a layout splits them among GPUs is shard.h's.
 */
#ifndef MESHPLAN_PARAMS_H
#define MESHPLAN_PARAMS_H

#include "meshplan/api.h"
#include "meshplan/spec.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The attention's widths as fractions of hidden: *q = heads * head_dim /
 * hidden (the query and output projections) and *kv = kv_heads * head_dim
 * / hidden (keys and values each), where head_dim is arch.head_dim or else
 * hidden / heads (then *q is 1 and *kv kv_heads / heads).  Under MLA,
 * *q = heads * (qk_head_dim + qk_rope_head_dim) / hidden (queries and keys)
 * and *kv = heads * v_head_dim / hidden (values).  Needs the arch; q and kv
 * must not be NULL.
 */
MESH_API void mesh_model_attn_widths(const mesh_model_t *m, double *q, double *kv);

/**
 * Parameter count from the architecture (doc/design.md, "Parameter counts"):
 * GPT-style (gelu): 12*l*h^2*(1 + 13/(12h) + (V+s)/(12*l*h)), plus V*h if untied;
 * Llama-style (swiglu): l*(2h^2*q + 2h^2*kv + 3*h*ffn + 2h) + V*h*(tied ? 1 : 2) + h,
 * with q and kv the attention's widths (mesh_model_attn_widths; 1 and
 * kv_heads/heads unless arch.head_dim is given).
 * The GPT form is for ffn = 4h and kv_heads = heads: the count itself uses
 * the model's own.  A MoE model counts its dense layers so and its MoE
 * layers as mesh_model_moe_layer_params, MLA its own projections and norms
 * (doc/design.md, "Mixture of experts and MLA"), and MTP layers add
 * mesh_model_mtp_params.  Needs the arch (m->has_arch); m->params is
 * ignored.
 */
MESH_API double mesh_model_params_from_arch(const mesh_model_t *m);

/**
 * 1 if m has mixture-of-experts layers (arch.moe), else 0.
 */
MESH_API int mesh_model_is_moe(const mesh_model_t *m);

/**
 * The layers of m with a MoE MLP: layers - moe.dense_layers, or 0 for a
 * dense model (the MTP layers not counted).
 */
MESH_API int mesh_model_moe_layers(const mesh_model_t *m);

/**
 * Parameters of one routed expert of m: a SwiGLU MLP of width moe.ffn
 * (3*h*ffn), or a GeLU one with its biases (2*h*ffn + ffn + h); 0 for a
 * dense model.  Needs the arch.
 */
MESH_API double mesh_model_expert_params(const mesh_model_t *m);

/**
 * Parameters of one MoE layer of m (attention, norms, router, shared
 * experts and every routed expert); for a dense model, those of a layer
 * (mesh_model_layer_params).  Needs the arch.
 */
MESH_API double mesh_model_moe_layer_params(const mesh_model_t *m);

/**
 * Parameters the multi-token-prediction layers of m add
 * (arch.mtp_layers): each is a transformer layer like the model's last,
 * a 2h x h projection and three norms; its embedding and output layer are
 * the model's own (Megatron-LM's MultiTokenPredictionLayer).  0 without
 * MTP layers.  Needs the arch.
 */
MESH_API double mesh_model_mtp_params(const mesh_model_t *m);

/**
 * Parameters one token passes through, from the arch: the routed experts
 * it is not sent to left out (top_k of moe.experts count), everything else
 * in (embeddings, shared experts, router, MTP layers), as published "active"
 * counts are made.  For a dense model, or without an arch, m->params; a
 * params count given in the spec scales it likewise.
 */
MESH_API double mesh_model_active_params(const mesh_model_t *m);

/**
 * The vocabulary Megatron-LM allocates under tensor parallelism tp (>= 1):
 * m->vocab padded up to a multiple of 128*tp (--make-vocab-size-divisible-by
 * 128).
 */
MESH_API double mesh_model_padded_vocab(const mesh_model_t *m, int tp);

/**
 * Parameters of one transformer layer (weights, biases and norms), from
 * the arch (m->has_arch must be set); for a MoE model, of one of its dense
 * layers (moe.dense_layers), with the dense MLP of arch.ffn.
 */
MESH_API double mesh_model_layer_params(const mesh_model_t *m);

#ifdef __cplusplus
}
#endif
#endif
