/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan: the cost model.
 *
 * Predicted time of one optimizer step of a layout: compute from the GPU
 * table's peak and GEMM efficiency, plus the pipeline bubble, plus the
 * parts of TP, CP, PP and DP/ZeRO communication that compute cannot hide.
 * The overlap assumptions are stated in lib/cost.c and in doc/internals.md.
 */
#ifndef MESHPLAN_COST_H
#define MESHPLAN_COST_H

#include "meshplan/api.h"
#include "meshplan/layout.h"
#include "meshplan/spec.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Predicted time of one step.  Times are in seconds. */
typedef struct mesh_cost {
    double step_seconds;   /* one optimizer step */
    double tokens_per_sec; /* whole job, tokens per second */
    double tflops_per_gpu; /* model FLOPs (no recompute) per second per GPU, in 1e12 */
    /* model FLOPs utilisation, a fraction: tflops_per_gpu over the peak of
     * the training precision (FP8's under fp8; under fp32 half of
     * peak_flops, an eighth without bf16) */
    double mfu;
    double bubble; /* pipeline bubble fraction (p-1)/(v*m) */
    /* the parts of step_seconds */
    double compute_s;   /* forward + backward (+ recompute) incl. bubble */
    double tp_comm_s;   /* TP all-reduces / all-gathers, on the critical path */
    double cp_comm_s;   /* context-parallel K/V exchange not hidden by attention */
    double pp_comm_s;   /* stage-to-stage sends */
    double dp_comm_s;   /* DP / ZeRO collectives not hidden behind compute */
    double optimizer_s; /* the optimizer step itself */
    /* a MoE model's token dispatch: the all-to-alls (and expert-TP gathers)
     * of every MoE layer, forward and backward, on the critical path */
    double ep_comm_s;
} mesh_cost_t;

/**
 * Model FLOPs of one token, forward and backward, no recomputation:
 * 6 * (matmul parameters) + 6*layers*seq*hidden for causal attention
 * (Megatron-LM's convention: QK^T and AV count half under the causal mask);
 * 4 per matmul parameter under LoRA, whose frozen weights get no gradients.
 * A model with experts, MLA or MTP layers counts the parameters a token
 * passes through (mesh_model_active_params, the MTP layers' logits
 * included) and the attention core over its heads' widths (MLA:
 * 3*seq*heads*(qk + rope + v) per layer), as Megatron-LM's
 * num_floating_point_operations does.  Without an arch: 6 (LoRA: 4) *
 * m->params.
 */
MESH_API double mesh_flops_per_token(const mesh_model_t *m);

/**
 * Estimate the step time of layout l on allocation a into *out (cleared
 * first).  No pointer may be NULL; l must be complete and should pass
 * mesh_layout_check (nothing is checked here, and whether it fits memory
 * does not matter).
 */
MESH_API void mesh_cost_estimate(const mesh_model_t *m, const mesh_layout_t *l,
                                 const mesh_alloc_t *a, mesh_cost_t *out);

#ifdef __cplusplus
}
#endif
#endif
