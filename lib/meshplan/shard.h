/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan: parameters per GPU.
 *
 * How a layout's TP, EP and PP split the model's parameters among its GPUs
 * and pipeline stages (the whole model's counts are spec.h's
 * mesh_model_params_from_arch and friends).  The memory accounting prices
 * bytes per parameter of these counts; the memory model sums them.
 */
#ifndef MESHPLAN_SHARD_H
#define MESHPLAN_SHARD_H

#include "meshplan/api.h"
#include "meshplan/layout.h"
#include "meshplan/spec.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Parameters one GPU of pipeline stage `stage` (0..l->pp-1) holds: its
 * layers split by TP (norms replicated), the input embedding on the first
 * stage, the output layer (or a tied copy) and the final norm on the last.
 * A params count given in the spec scales the result; without an arch it
 * is m->params, whatever the layout.
 */
MESH_API double mesh_stage_params(const mesh_model_t *m, const mesh_layout_t *l, int stage);

/**
 * Parameters one GPU holds of one transformer layer under tensor
 * parallelism tp (>= 1): the matrices split, the norms replicated (and
 * MLA's down projections, which Megatron-LM duplicates).  For a MoE model,
 * of one of its dense layers.  Needs the arch.
 */
MESH_API double mesh_layer_params_per_gpu(const mesh_model_t *m, int tp);

/**
 * Parameters one GPU holds of one MoE layer under layout l: attention and
 * shared experts split by l->tp, norms and router whole, and
 * moe.experts/ep routed experts split etp ways (l->ep and l->etp, 0
 * counting as 1).  For a dense model, mesh_layer_params_per_gpu(m,
 * l->tp).  Needs the arch.
 */
MESH_API double mesh_moe_layer_params_per_gpu(const mesh_model_t *m, const mesh_layout_t *l);

/**
 * Of mesh_stage_params(m, l, stage), the routed experts' parameters: those
 * of the stage's MoE layers (and the last stage's MTP layers), which the
 * optimizer shards over the expert data-parallel group
 * (mesh_layout_edp) instead of dp*cp.  0 for a dense model or without an
 * arch; a params count given in the spec scales it as it does the stage's.
 */
MESH_API double mesh_stage_expert_params(const mesh_model_t *m, const mesh_layout_t *l, int stage);

#ifdef __cplusplus
}
#endif
#endif
