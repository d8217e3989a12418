/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan: the memory model.
 *
 * Bytes per GPU of a layout for its worst rank.  Pipeline stages differ: the
 * first holds the input embedding and the most micro-batches in flight, the
 * last the output layer and the logits, so the stages that can hold the
 * most (the first, the second and the last) are priced and the largest is
 * reported.  Formulas and their sources are in lib/memory.c and in
 * doc/internals.md.
 */
#ifndef MESHPLAN_MEMORY_H
#define MESHPLAN_MEMORY_H

#include <stddef.h>

#include "meshplan/accounting.h"
#include "meshplan/api.h"
#include "meshplan/layout.h"
#include "meshplan/policy.h"
#include "meshplan/shard.h"
#include "meshplan/spec.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Memory of one GPU, in bytes. */
typedef struct mesh_memory {
    double weights;     /* training-precision weights (+ ZeRO-3 gathered layers) */
    double grads;       /* gradient buffers */
    double optimizer;   /* fp32 master weights and optimizer moments */
    double activations; /* stored for the backward pass, all micro-batches in flight */
    double overhead;    /* CUDA context, communication buffers, fragmentation */
    double total;       /* weights + grads + optimizer + activations + overhead */
    double capacity;    /* usable: GPU memory * (1 - reserve) */
    int stage;          /* the pipeline stage these figures are for */
    /* the framework whose accounting these are (with train.framework auto,
     * the one that needs the most: it set the bound) */
    mesh_framework_t framework;
    double host; /* bytes one task keeps in host memory (optimizer offload): the most of any
                    stage under any framework priced */
} mesh_memory_t;

/**
 * The parts that add up to mesh_memory_t's total, one row each of a table
 * that every report lists them from (text, JSON, pictures, reasons), in
 * its order: weights, grads, optimizer, activations, overhead (the first
 * three are mesh_part_t's, in its order).  Every string is static.
 */
#define MESH_MEMORY_PARTS 5
typedef struct mesh_memory_part {
    const char *name;  /* its field of mesh_memory_t: "weights" */
    const char *key;   /* its key in the JSON report's "memory" objects */
    const char *label; /* what the text report and the pictures call it */
    size_t offset;     /* of its double in mesh_memory_t */
    const char *doc;   /* one line on what it holds */
} mesh_memory_part_t;

/**
 * Part i of the table, or NULL unless 0 <= i < MESH_MEMORY_PARTS.  Points
 * to static storage, valid for the life of the program.
 */
MESH_API const mesh_memory_part_t *mesh_memory_part(int i);

/**
 * The bytes of part i (0 <= i < MESH_MEMORY_PARTS) in *mem, which must not
 * be NULL; 0 for an i out of range.
 */
MESH_API double mesh_memory_part_bytes(const mesh_memory_t *mem, int i);

/**
 * Memory of the worst rank of layout l into *out, under the framework(s)
 * m->framework prices (mesh_frameworks_priced) and the policy's
 * assumptions *assume (its reserve, overheads and fragmentation).  None of
 * the pointers may be NULL (assume included).  l must be complete and
 * should pass mesh_layout_check: nothing is checked here.  out->host is the most any
 * priced stage and framework keeps in host memory, not only the worst
 * rank's.
 */
MESH_API void mesh_memory_estimate(const mesh_model_t *m, const mesh_layout_t *l,
                                   const mesh_alloc_t *a, const mesh_assumptions_t *assume,
                                   mesh_memory_t *out);

/**
 * Activation bytes one transformer layer stores for one micro-batch of
 * micro_batch sequences on one GPU (Korthikanti et al. 2022, Table 2,
 * generalised for GQA, SwiGLU, flash attention, dropout-free training and
 * FP8's one-byte linear inputs); 0 without an arch.  tp and cp are >= 1;
 * sp nonzero means sequence parallelism.  `modules` (MESH_RC_*) says what
 * selective recomputation recomputes, and counts only when rc is
 * selective; 0 is Megatron's default, the attention core.  rc auto counts
 * as none.
 */
MESH_API double mesh_activation_layer(const mesh_model_t *m, int micro_batch, int tp, int cp,
                                      int sp, mesh_recompute_t rc, unsigned modules);

/**
 * Activation bytes one MoE layer stores for one micro-batch on the busiest
 * expert rank of layout l (its micro_batch, tp, cp, sequence_parallel, ep
 * and etp): the attention and shared experts as mesh_activation_layer
 * counts them, the router's fp32 logits and scores, and for every routed
 * copy the rank receives (top_k of its sequence-parallel tokens, gathered
 * over etp, times `imbalance` under dropless routing, at most the capacity
 * factor's share, never more than its EP group could send it) the grouped
 * MLP's inputs and outputs.  rc and modules as mesh_activation_layer
 * takes them, except that "mlp" recomputes no MoE layer (Megatron-LM's).
 * 0 without an arch or for a dense model.
 */
MESH_API double mesh_activation_moe_layer(const mesh_model_t *m, const mesh_layout_t *l,
                                          mesh_recompute_t rc, unsigned modules, double imbalance);

#ifdef __cplusplus
}
#endif
#endif
