/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan: model states as each framework allocates them.
 *
 * "Fits" means fits under the flags and config that meshplan exports, by
 * the framework's own accounting.  This header is the one table that ties
 * each memory term (bytes per parameter, or a buffer) to the exported flag
 * or config entry that makes the framework allocate it, with the source
 * file and commit of the framework where that allocation happens.  The
 * memory model sums these terms; MESH_MEGATRON_ARGS and
 * MESH_DEEPSPEED_CONFIG print their causes; a unit test checks both ways.
 */
#ifndef MESHPLAN_ACCOUNTING_H
#define MESHPLAN_ACCOUNTING_H

#include "meshplan/api.h"
#include "meshplan/layout.h"
#include "meshplan/spec.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The memory part a term belongs to (mesh_memory_t's fields). */
typedef enum mesh_part {
    MESH_PART_WEIGHTS,
    MESH_PART_GRADS,
    MESH_PART_OPTIMIZER,
} mesh_part_t;

#define MESH_UNSHARDED 4  /* shard_from of a term no ZeRO stage divides */
#define MESH_TERMS_MAX 16 /* terms of one GPU at most: the room mesh_state_terms needs */

/** Where a term's cause is written. */
typedef enum mesh_cause_at {
    MESH_CAUSE_ARGS,     /* a Megatron-LM command-line flag sequence */
    MESH_CAUSE_DS_TOP,   /* a member of the DeepSpeed config's top object */
    MESH_CAUSE_DS_ZERO,  /* a member of its "zero_optimization" object */
    MESH_CAUSE_LAUNCHER, /* what the training program does with MESH_ZERO_STAGE (torch) */
} mesh_cause_at_t;

/**
 * One memory term of one GPU.  A term is either per parameter
 * (per_param bytes for each parameter the GPU holds before ZeRO shards
 * them, divided over the dp*cp group from ZeRO stage shard_from on) or a
 * buffer of fixed bytes.  Every string is static: valid for the life of
 * the program, never freed.
 */
typedef struct mesh_term {
    const char *what;   /* "fp32 main gradients" */
    mesh_part_t part;   /* which of mesh_memory_t's parts it adds to */
    double per_param;   /* bytes per parameter; 0 for a buffer */
    int shard_from;     /* 1..3, or MESH_UNSHARDED */
    double fixed;       /* bytes of a buffer (gathered modules, buckets) */
    int host;           /* kept in host memory (offload=optimizer), not on the GPU */
    mesh_cause_at_t at; /* where cause is written */
    /* The exported flags or JSON member that make the framework allocate
     * this term, exactly as rendered; NULL when the framework does it by
     * default, and then `unless` is the export that would remove it. */
    const char *cause, *unless;
    const char *source; /* the framework's file@commit that allocates it */
} mesh_term_t;

/**
 * The model-state terms of one GPU of pipeline stage `stage` of layout l
 * for model m under framework fw, written to out (room for MESH_TERMS_MAX
 * entries); returns how many.  fw should be a framework, not MESH_FW_AUTO:
 * any value other than MESH_FW_DEEPSPEED and MESH_FW_TORCH is priced as
 * Megatron-LM.  The per-parameter terms apply to mesh_stage_params(m, l,
 * stage) parameters; of the stage, only whether it is the first or last
 * matters (the gathered units of ZeRO-2/3).  Never fails.
 */
MESH_API int mesh_state_terms(const mesh_model_t *m, mesh_framework_t fw, const mesh_layout_t *l,
                              int stage, mesh_term_t *out);

/**
 * Bytes one GPU keeps of term t for psi parameters over d data-parallel
 * ranks (d = dp*cp, the group the optimizer shards over) under ZeRO stage
 * zero: per_param*psi, divided by d when d > 1 and zero >= shard_from,
 * plus fixed.
 */
MESH_API double mesh_term_bytes(const mesh_term_t *t, double psi, int d, int zero);

/**
 * The frameworks a plan must fit under: fw itself, or for MESH_FW_AUTO every
 * framework meshplan exports a configuration for (Megatron-LM and
 * DeepSpeed).  Fills out[] and returns how many (1 or 2).
 */
MESH_API int mesh_frameworks_priced(mesh_framework_t fw, mesh_framework_t out[3]);

/**
 * What ZeRO stage `zero` is exported as for framework fw: Megatron-LM's
 * flags (NULL for stage 0), DeepSpeed's "\"stage\":Z" member (for every
 * stage, 0 included), and NULL for PyTorch, whose training program reads
 * MESH_ZERO_STAGE; NULL for a stage outside 0..3.  A static string, never
 * freed.
 */
MESH_API const char *mesh_zero_cause(mesh_framework_t fw, int zero);

/**
 * Model states per GPU, in bytes, of psi parameters under ZeRO stage `zero`
 * over `d` (>= 1) data-parallel ranks (Rajbhandari et al. 2020): w bytes
 * per weight, g per gradient, k per parameter of optimizer state.
 * Mixed-precision Adam is w=2, g=2, k=12: 16*psi at stage 0, 16*psi/d at
 * stage 3.  A zero outside 0..2 counts as 3.
 */
MESH_API double mesh_model_states(double psi, int d, int zero, double w, double g, double k);

/**
 * Bytes per parameter (weights *w, gradients *g, optimizer states *k; none
 * NULL) of the model's precision and optimizer, unsharded, under the
 * framework that needs the most (lib/accounting.c); under LoRA g and k
 * are scaled to the adapters' share.
 */
MESH_API void mesh_state_bytes(const mesh_model_t *m, double *w, double *g, double *k);

#ifdef __cplusplus
}
#endif
#endif
