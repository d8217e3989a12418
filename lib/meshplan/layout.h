/*
 * meshplan: a 3D-parallel layout, the allocation it runs on, and the
 * --mesh syntax.
 *
 * A layout is (tp, cp, pp, dp) sizes plus how each rank trains: ZeRO stage,
 * virtual pipeline chunks, micro-batch size, activation recomputation and
 * sequence parallelism.  The same struct carries user pins: a field set to
 * MESH_FREE is left to the planner.
 */
#ifndef MESHPLAN_LAYOUT_H
#define MESHPLAN_LAYOUT_H

#include "meshplan/api.h"
#include <stddef.h>

#include "meshplan/error.h"
#include "meshplan/gpu.h"
#include "meshplan/spec.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MESH_FREE           (-1)
#define MESH_AUTO           (-2) /* in --mesh pins: planned even where the spec fixes it */
#define MESH_LAYOUT_STR_MAX 192

typedef struct mesh_layout {
    int tp, pp, dp, cp;
    int zero;        /* 0: none, 1: optimizer states, 2: + grads, 3: + weights */
    int vpp;         /* model chunks per pipeline stage (interleaved 1F1B); 1 = plain 1F1B */
    int micro_batch; /* sequences per micro-batch */
    mesh_recompute_t recompute;
    /* with recompute full: how many layers of each stage are recomputed
     * (Megatron's --recompute-method block); 0: all of them */
    int recompute_layers;
    /* with recompute selective: MESH_RC_* modules; 0: Megatron's default
     * (core_attn) */
    int recompute_modules;
    int sequence_parallel;    /* Megatron sequence parallelism; only with tp > 1 */
    int offload;              /* 1: optimizer states (and master weights) in host memory */
    mesh_precision_t moments; /* Adam moments: fp32, or bf16/fp16 when the spec allows */
} mesh_layout_t;

/* What the job runs on.  gpus_per_node is the number of tasks (one GPU
 * each) per node; island is how many of them share an all-to-all NVLink. */
typedef struct mesh_alloc {
    int nodes;
    int gpus_per_node;
    int island;
    mesh_gpu_t gpu;
    double host_memory; /* bytes of host memory per node; 0: unknown (no optimizer offload) */
} mesh_alloc_t;

/* Make every field of l MESH_FREE (nothing pinned). */
MESH_API void mesh_layout_unpin(mesh_layout_t *l);

/* Parse "auto" or "tp=T,pp=P,dp=D,cp=C,zero=Z,vpp=V,mb=B,recompute=R,sp=on|off,
 * offload=none|optimizer,moments=fp32|bf16|fp16" (any subset, any order;
 * R is none, selective, selective:M+M (M: core_attn, layernorm, mlp), full
 * or full:N); fields not named stay MESH_FREE,
 * fields given as "auto" become MESH_AUTO. */
MESH_API int mesh_layout_parse(const char *s, mesh_layout_t *pins, mesh_error_t *err);

/* Canonical string of a complete layout, in the syntax mesh_layout_parse
 * reads; every field is written, in a fixed order. */
MESH_API const char *mesh_layout_format(const mesh_layout_t *l, char *buf, size_t len);

/* The pinned fields of l in --mesh syntax ("tp=2,zero=1"; "auto" if none). */
MESH_API const char *mesh_layout_format_pins(const mesh_layout_t *l, char *buf, size_t len);

/* The recompute field as --mesh writes it: none, selective,
 * selective:MODULE+MODULE, full or full:N. */
MESH_API const char *mesh_layout_recompute(const mesh_layout_t *l, char *buf, size_t len);

/* tp*cp*pp*dp. */
MESH_API long mesh_layout_world(const mesh_layout_t *l);

/* Micro-batches per optimizer step per pipeline: global_batch / (micro_batch*dp). */
MESH_API long mesh_layout_micro_batches(const mesh_layout_t *l, long global_batch);

/* Pipeline bubble fraction (p-1)/(v*m) (Narayanan et al. 2021, section 2.2). */
MESH_API double mesh_pipeline_bubble(int pp, int vpp, long micro_batches);

/* Layers held by each of pp stages (out[pp]).  Even when pp divides layers;
 * otherwise every stage gets ceil(layers/pp) and the first and last stages,
 * which also carry the embedding and the loss, give up the surplus first
 * (the Llama 3 recipe). */
MESH_API void mesh_layer_split(int layers, int pp, int *out);

/* Layers held by stage `stage` of pp under the split above. */
MESH_API int mesh_stage_layers(int layers, int pp, int stage);

/* Layers per virtual pipeline stage (one interleaved chunk) with vpp chunks
 * per stage, or 0 if the split cannot be interleaved.  An even split needs
 * layers divisible by pp*vpp; when the first (and last) stage hold one layer
 * fewer, the embedding (and loss) count as a layer there, as Megatron's
 * --account-for-embedding-in-pipeline-split (--account-for-loss-...) do. */
MESH_API int mesh_vpp_chunk_layers(int layers, int pp, int vpp);

/* Check that a complete layout is valid for this model and allocation
 * (divisibility, TP inside one NVLink island, batch arithmetic, interleaving
 * rules).  Returns 0, or -1 with a line naming the rule that fails. */
MESH_API int mesh_layout_check(const mesh_model_t *m, const mesh_alloc_t *a, const mesh_layout_t *l,
                               mesh_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
