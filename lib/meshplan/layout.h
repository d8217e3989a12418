/* SPDX-License-Identifier: GPL-2.0-or-later */
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

#define MESH_FREE           (-1) /* in pins: left to the planner (== MESH_RECOMPUTE_AUTO) */
#define MESH_AUTO           (-2) /* in --mesh pins: planned even where the spec fixes it */
#define MESH_LAYOUT_STR_MAX 224  /* a buffer that holds any layout string */

/**
 * A layout, or as pins a partial one (fields MESH_FREE or MESH_AUTO).
 * Plain data: copy it freely.
 */
typedef struct mesh_layout {
    /* tensor, pipeline, data and context parallel sizes (>= 1 when complete) */
    int tp, pp, dp, cp;
    int zero;        /* 0: none, 1: optimizer states, 2: + grads, 3: + weights */
    int vpp;         /* model chunks per pipeline stage (interleaved 1F1B); 1 = plain 1F1B */
    int micro_batch; /* sequences per micro-batch */
    mesh_recompute_t recompute; /* activation recomputation: none, selective or full */
    /* with recompute full: how many layers of each stage are recomputed
     * (Megatron's --recompute-method block); 0: all of them */
    int recompute_layers;
    /* with recompute selective: MESH_RC_* modules; 0: Megatron's default
     * (core_attn) */
    int recompute_modules;
    int sequence_parallel;    /* Megatron sequence parallelism; only with tp > 1 */
    int offload;              /* 1: optimizer states (and master weights) in host memory */
    mesh_precision_t moments; /* Adam moments: fp32, or bf16/fp16 when the spec allows */
    /* expert parallel and expert tensor parallel sizes of a MoE model's
     * expert layers, which re-partition each stage's tp*cp*dp ranks into
     * etp*ep*edp (Megatron-Core's expert rank generator; edp, the expert
     * data-parallel size, is tp*cp*dp / (etp*ep)); 0 in a dense model's
     * layout, where 0 and 1 mean the same */
    int ep, etp;
    /* 1: TP's communication overlap (--tp-comm-overlap) turned off, where
     * its Userbuffers are what keeps the layout from fitting (or pinned
     * off); 0: on wherever Megatron-LM allows it (lib/overlap.c) */
    int tp_overlap_off;
} mesh_layout_t;

/**
 * The dimensions of a layout a checkpoint can be sharded by, in the fixed
 * order every list of them is written in (MESH_RESHARD, the keep set).
 */
typedef enum mesh_dim {
    MESH_DIM_TP,   /**< tensor parallel size */
    MESH_DIM_PP,   /**< pipeline parallel size */
    MESH_DIM_VPP,  /**< model chunks per pipeline stage (interleaving) */
    MESH_DIM_CP,   /**< context parallel size */
    MESH_DIM_DP,   /**< data parallel size */
    MESH_DIM_EP,   /**< expert parallel size (a MoE model's) */
    MESH_DIM_ETP,  /**< expert tensor parallel size (a MoE model's) */
    MESH_DIM_ZERO, /**< ZeRO stage (how the optimizer states are sharded) */
    MESH_DIM_COUNT
} mesh_dim_t;

/** The bit of dimension d in a keep set. */
#define MESH_DIM_BIT(d) (1u << (d))

/**
 * What the job runs on.  gpus_per_node is the number of tasks (one GPU
 * each) per node; island is how many of them share an all-to-all NVLink.
 * Made by mesh_policy_alloc or mesh_topo_alloc, or filled by hand.
 */
typedef struct mesh_alloc {
    int nodes;          /* nodes of the job, >= 1 */
    int gpus_per_node;  /* tasks (GPUs) per node, >= 1 */
    int island;         /* GPUs per NVLink island, 1..gpus_per_node */
    mesh_gpu_t gpu;     /* the GPU model, with the policy's overrides */
    double host_memory; /* bytes of host memory per node; 0: unknown (no optimizer offload) */
} mesh_alloc_t;

/**
 * Make every field of l MESH_FREE (nothing pinned): recompute becomes
 * MESH_RECOMPUTE_AUTO, which is the same value.
 */
MESH_API void mesh_layout_unpin(mesh_layout_t *l);

/**
 * The --mesh keys and their values, as the help texts of the CLI and of the
 * plugin write them ("tp=T,pp=P,...,moments=fp32|bf16|fp16"), made from
 * the one table of keys (lib/layout.c), so that no help can leave a key
 * out.  A static string, never freed.
 */
MESH_API const char *mesh_layout_keys_usage(void);

/**
 * Parse a --mesh string into pins: "auto" or "tp=T,pp=P,dp=D,cp=C,ep=E,
 * etp=T,zero=Z,vpp=V,mb=B,recompute=R,sp=on|off,offload=none|optimizer,
 * moments=fp32|bf16|fp16" (any subset, any order, each key once; R is none,
 * selective, selective:M+M (M: core_attn, layernorm, mlp, mla_up_proj), full or full:N).
 *
 * *pins is first unpinned: fields not named stay MESH_FREE, fields given
 * as "auto" become MESH_AUTO.  s may be NULL or "" (nothing pinned).
 * Ranges: zero 0..3, dp 1..2^24, the other sizes and mb 1..65536, full:N
 * 1..100000; sp takes any mesh_parse_bool word.  Returns 0, or -1 with err
 * naming the key ("mesh tp: ...") on an unknown key, a repeated key, a bad
 * value, an empty field or more than 383 characters; *pins is then partly
 * filled.  Whether ep and etp suit the model is mesh_layout_check's.
 */
MESH_API int mesh_layout_parse(const char *s, mesh_layout_t *pins, mesh_error_t *err);

/**
 * Canonical string of a complete layout, in the syntax mesh_layout_parse
 * reads, into buf[len] (MESH_LAYOUT_STR_MAX bytes suffice; truncated to
 * fit).  tp, pp, dp, cp, zero, vpp, mb, recompute and sp are always
 * written, in that order, with ep and etp after cp in a MoE model's layout
 * (ep > 0); offload and moments only when they differ from none and fp32.
 * Returns buf.
 */
MESH_API const char *mesh_layout_format(const mesh_layout_t *l, char *buf, size_t len);

/**
 * The pinned fields of l in --mesh syntax ("tp=2,zero=1"; MESH_AUTO fields
 * as "auto"; "auto" if none is pinned), into buf[len] (MESH_LAYOUT_STR_MAX
 * bytes suffice; truncated to fit).  Returns buf.  Allocates internally:
 * if memory runs out, "auto" is written.
 */
MESH_API const char *mesh_layout_format_pins(const mesh_layout_t *l, char *buf, size_t len);

/**
 * The recompute field of l as --mesh writes it: none, selective,
 * selective:MODULE+MODULE, full or full:N (auto for MESH_RECOMPUTE_AUTO
 * and MESH_AUTO), into buf[len] (48 bytes suffice).  Returns buf.
 */
MESH_API const char *mesh_layout_recompute(const mesh_layout_t *l, char *buf, size_t len);

/** tp*cp*pp*dp, the number of ranks (a complete layout). */
MESH_API long mesh_layout_world(const mesh_layout_t *l);

/**
 * The expert data-parallel size of a complete layout: tp*cp*dp / (etp*ep),
 * the ranks of a stage holding the same experts (ep and etp 0 count as 1,
 * so a dense layout's is tp*cp*dp); 0 when etp*ep does not divide
 * tp*cp*dp (mesh_layout_check refuses it).
 */
MESH_API long mesh_layout_edp(const mesh_layout_t *l);

/**
 * Micro-batches per optimizer step per pipeline: global_batch /
 * (micro_batch*dp), rounded down (divisibility is mesh_layout_check's);
 * 0 if micro_batch*dp is not positive.
 */
MESH_API long mesh_layout_micro_batches(const mesh_layout_t *l, long global_batch);

/**
 * Pipeline bubble fraction (p-1)/(v*m) (Narayanan et al. 2021, section
 * 2.2): 0 when pp <= 1 or micro_batches <= 0; vpp must be >= 1.
 */
MESH_API double mesh_pipeline_bubble(int pp, int vpp, long micro_batches);

/**
 * Layers held by each of pp (>= 1) stages, into out[pp].  Even when pp
 * divides layers; otherwise every stage gets ceil(layers/pp) and the first
 * and last stages, which also carry the embedding and the loss, give up
 * the surplus first (the Llama 3 recipe; the first gives up the odd one).
 * The counts always sum to layers, but with a large surplus an end stage
 * can get 0 or fewer (5 layers on 4 stages: 0,2,2,1): mesh_layout_check
 * refuses such splits.
 */
MESH_API void mesh_layer_split(int layers, int pp, int *out);

/**
 * Layers held by stage `stage` (0..pp-1; any other value gets a middle
 * stage's count) under the split above; pp >= 1.
 */
MESH_API int mesh_stage_layers(int layers, int pp, int stage);

/**
 * Layers per virtual pipeline stage (one interleaved chunk) with vpp chunks
 * per stage, or 0 if the split cannot be interleaved (always for pp < 2 or
 * vpp < 2).  An even split needs layers divisible by pp*vpp; when the first
 * (and last) stage hold one layer fewer, the embedding (and loss) count as
 * a layer there, as Megatron's --account-for-embedding-in-pipeline-split
 * (--account-for-loss-...) do; a larger surplus cannot be interleaved.
 */
MESH_API int mesh_vpp_chunk_layers(int layers, int pp, int vpp);

/**
 * 1 when l interleaves m's layers in a way mesh_vpp_chunk_layers cannot
 * (vpp > 1 and it gives 0), so that Megatron-LM is given the layout
 * itself (--pipeline-model-parallel-layout, as NVIDIA's DeepSeek-V3 recipe
 * does): the embedding, every layer, the MTP layers and the loss are units
 * spread over the pp*vpp chunks in order, floor(units / chunks) each and
 * one more for the first chunks after chunk 0 while the remainder lasts;
 * the embedding opens chunk 0, the MTP layers and the loss close the last.
 * Such a layout is planned only where vpp is pinned.
 */
MESH_API int mesh_pp_explicit(const mesh_model_t *m, const mesh_layout_t *l);

/**
 * Transformer layers in model chunk `chunk` (0..pp*vpp-1; chunk j runs on
 * stage j mod pp) of m under l with vpp > 1: mesh_vpp_chunk_layers's even
 * chunks, the first (and last) one less where the embedding (and loss)
 * take a layer's place, or the explicit layout's.  -1 outside the chunks
 * or for vpp <= 1.  Middle chunks of an explicit layout hold at least one
 * layer where mesh_layout_check accepts it.
 */
MESH_API int mesh_chunk_layers(const mesh_model_t *m, const mesh_layout_t *l, int chunk);

/**
 * Layers held by stage `stage` (0..pp-1) of m under l, as Megatron-LM
 * places them: mesh_stage_layers's split, or under an explicit layout the
 * sum of the stage's chunks.  1 for a model without an arch.
 */
MESH_API int mesh_pp_stage_layers(const mesh_model_t *m, const mesh_layout_t *l, int stage);

/**
 * Check that a complete layout (no MESH_FREE or MESH_AUTO field) is valid
 * for this model and allocation: divisibility, TP inside one NVLink island
 * and one node (or whole trays of a fabric that spans nodes: GB200 NVL72),
 * batch arithmetic, interleaving rules, and which levers go
 * together; for a MoE model, ep and etp of at least 1, ep*etp dividing
 * tp*cp*dp, ep the experts, etp the experts' width and the island, and
 * sequence parallelism under TP; for a dense one, ep and etp 0 or 1.
 * Returns 0, or -1 with a line in err naming the rule that fails.  offload
 * and sequence_parallel are read as booleans (any nonzero is on), and
 * recompute itself is not range-checked.
 */
MESH_API int mesh_layout_check(const mesh_model_t *m, const mesh_alloc_t *a, const mesh_layout_t *l,
                               mesh_error_t *err);

/**
 * Check pins (--mesh, MESH_FREE or MESH_AUTO where not pinned) against
 * model m alone, before any allocation is known: the rules of
 * mesh_layout_check that no allocation can satisfy when they fail (tp
 * against the heads, KV heads and ffn; cp against seq_len; pp against the
 * layers; mb and dp against global_batch; ep and etp against the experts),
 * with its words.  So sbatch and salloc refuse at once what the controller
 * or the step would refuse on every allocation.  Returns 0, or -1 with err
 * set.  m, pins and err must not be NULL.
 */
MESH_API int mesh_layout_check_pins(const mesh_model_t *m, const mesh_layout_t *pins,
                                    mesh_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
