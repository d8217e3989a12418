/*
 * meshplan: the model spec (meshplan.yaml(5)).
 *
 * A spec describes the model's architecture and how it is trained.  It comes
 * from a YAML file or from a shipped preset (etc/models/NAME.yaml); a file
 * may start from a preset ("preset: llama3-70b") and override any key.
 * The parser uses libyaml's event API and refuses anything it does not
 * understand: unknown keys, anchors and aliases, deep nesting, oversized
 * files and out-of-range numbers are errors naming the key and the line.
 */
#ifndef MESHPLAN_SPEC_H
#define MESHPLAN_SPEC_H

#include "meshplan/api.h"
#include <stddef.h>

#include "meshplan/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MESH_NAME_MAX       64
#define MESH_SPEC_MAX_BYTES (64 * 1024) /* larger spec files are refused */

typedef enum mesh_mlp { MESH_MLP_GELU, MESH_MLP_SWIGLU } mesh_mlp_t;
/* Training precision.  fp8 runs the GEMMs in FP8 through Transformer Engine
 * and keeps bf16 parameters and an fp32 master copy (mixed precision). */
typedef enum mesh_precision {
    MESH_PREC_BF16,
    MESH_PREC_FP16,
    MESH_PREC_FP32,
    MESH_PREC_FP8,
} mesh_precision_t;
/* Transformer Engine's FP8 scaling recipes (transformer_engine/common/recipe). */
typedef enum mesh_fp8_recipe {
    MESH_FP8_DELAYED,    /* DelayedScaling: per-tensor, amax history (Hopper) */
    MESH_FP8_TENSORWISE, /* Float8CurrentScaling: per-tensor, current amax (Hopper) */
    MESH_FP8_BLOCKWISE,  /* Float8BlockScaling: 128-wide blocks (Hopper) */
    MESH_FP8_MXFP8,      /* MXFP8BlockScaling: 32-wide blocks, needs Blackwell */
} mesh_fp8_recipe_t;
/* Whose accounting "fits" means: the framework that will run the job.  auto:
 * every framework meshplan exports flags or a config for (Megatron-LM and
 * DeepSpeed), priced each and the largest kept. */
typedef enum mesh_framework {
    MESH_FW_AUTO,
    MESH_FW_MEGATRON,
    MESH_FW_DEEPSPEED,
    MESH_FW_TORCH, /* PyTorch FSDP2 / DDP */
} mesh_framework_t;
typedef enum mesh_optimizer { MESH_OPT_ADAM, MESH_OPT_ADAMW, MESH_OPT_SGD } mesh_optimizer_t;
typedef enum mesh_finetune {
    MESH_FINETUNE_FULL, /* every weight trains */
    MESH_FINETUNE_LORA, /* frozen base weights, low-rank adapters */
} mesh_finetune_t;
typedef enum mesh_recompute {
    MESH_RECOMPUTE_AUTO = -1, /* let the planner choose */
    MESH_RECOMPUTE_NONE = 0,
    MESH_RECOMPUTE_SELECTIVE = 1,
    MESH_RECOMPUTE_FULL = 2,
} mesh_recompute_t;
/* What selective recomputation recomputes (Megatron-LM's --recompute-modules,
 * transformer_config.py L560-581 at d98e8a6); 0 is its default, core_attn. */
enum {
    MESH_RC_CORE_ATTN = 1, /* the attention core: QK^T, softmax, AV */
    MESH_RC_LAYERNORM = 2, /* the norms' outputs, discarded and recomputed */
    MESH_RC_MLP = 4,       /* the whole MLP, from its input */
    MESH_RC_ALL = 7,
};
/* "core_attn+layernorm+mlp" for a module set (0: core_attn); -1 on an
 * unknown name. */
MESH_API const char *mesh_recompute_modules_name(unsigned modules, char *buf, size_t len);
MESH_API int mesh_recompute_modules_parse(const char *s, unsigned *out);

/* A model and its training setup, with every default filled in. */
typedef struct mesh_model {
    char name[MESH_NAME_MAX];
    int has_arch; /* 0: only `params` is known, so activations are not modelled */
    /* arch */
    int layers, hidden, heads, kv_heads, ffn, vocab;
    mesh_mlp_t
        mlp; /* gelu: GPT-style (biases, LayerNorm, learned positions); swiglu: Llama-style */
    int tied_embeddings;
    double params; /* parameter count: given, or computed from arch */
    /* train */
    int seq_len;
    long global_batch; /* sequences per optimizer step */
    int micro_batch;   /* 0 = auto (planned) */
    mesh_precision_t precision;
    mesh_fp8_recipe_t fp8_recipe; /* with precision fp8 */
    /* gradient buffers: fp32 by default under bf16 and fp32 (Megatron's main
     * grads, DeepSpeed's fp32 accumulation), fp16 under fp16 (Megatron then
     * copies them to fp32 for the optimizer); bf16 = 2-byte buffers */
    mesh_precision_t grad_accum_dtype;
    mesh_optimizer_t optimizer;
    /* the narrowest Adam moments the planner may choose: fp32 (the default)
     * or 16-bit, which changes numerics and so is only taken when given */
    mesh_precision_t optimizer_dtype;
    mesh_framework_t framework;
    mesh_recompute_t recompute;
    int flash_attention; /* no s x s attention scores are stored */
    double dropout;      /* 0: no dropout masks are stored */
    mesh_finetune_t finetune;
} mesh_model_t;

/* Where presets are searched, in order; NULL entries end the list early. */
typedef struct mesh_spec_dirs {
    const char *dirs[4];
} mesh_spec_dirs_t;

/* Load a spec: `spec` is a file path if it contains '/' or ends in .yaml/.yml,
 * otherwise a preset name looked up in `dirs`.  Fills *out with defaults
 * applied and params computed; returns 0, or -1 with err naming the key. */
MESH_API int mesh_spec_load(const char *spec, const mesh_spec_dirs_t *dirs, mesh_model_t *out,
                            mesh_error_t *err);

/* Parse a spec held in memory; `origin` names it in errors (e.g. the path).
 * A `preset:` key is resolved through dirs (which may be NULL to forbid it). */
MESH_API int mesh_spec_parse(const char *buf, size_t len, const char *origin,
                             const mesh_spec_dirs_t *dirs, mesh_model_t *out, mesh_error_t *err);

/* Read a spec file the way the plugin must read a user's file: open without
 * following a FIFO's block, check it is a regular file after opening, cap
 * its size at MESH_SPEC_MAX_BYTES.  Returns a malloc'd NUL-terminated buffer. */
MESH_API char *mesh_spec_read_file(const char *path, size_t *len, mesh_error_t *err);

/* True if `spec` names a file (contains '/' or ends in .yaml or .yml)
 * rather than a preset. */
MESH_API int mesh_spec_is_path(const char *spec);

/* True if `name` is a well-formed preset name ([A-Za-z0-9._-], no leading dot). */
MESH_API int mesh_spec_valid_preset_name(const char *name);

/* A 16-hex-digit digest (FNV-1a 64) of every field of m, written into
 * buf[17]: equal digests mean the same model and training setup, whatever
 * the file's comments or key order. */
MESH_API const char *mesh_model_digest(const mesh_model_t *m, char buf[17]);

/* Parameter count from the architecture (DESIGN section 4):
 * GPT-style (gelu): 12*l*h^2*(1 + 13/(12h) + (V+s)/(12*l*h)), plus V*h if untied;
 * Llama-style (swiglu): l*(2h^2 + 2h^2*kv/heads + 3*h*ffn + 2h) + V*h*(tied ? 1 : 2) + h. */
MESH_API double mesh_model_params_from_arch(const mesh_model_t *m);

/* The vocabulary Megatron-LM allocates under tensor parallelism: padded
 * up to a multiple of 128*tp (--make-vocab-size-divisible-by 128). */
MESH_API double mesh_model_padded_vocab(const mesh_model_t *m, int tp);

/* Parameters of one transformer layer (weights, biases and norms). */
MESH_API double mesh_model_layer_params(const mesh_model_t *m);

/* Names for the enums, as written in specs. */
MESH_API const char *mesh_precision_name(mesh_precision_t p);
MESH_API const char *mesh_fp8_recipe_name(mesh_fp8_recipe_t r);
MESH_API const char *mesh_framework_name(mesh_framework_t f);
MESH_API const char *mesh_optimizer_name(mesh_optimizer_t o);
MESH_API const char *mesh_recompute_name(mesh_recompute_t r);
MESH_API const char *mesh_mlp_name(mesh_mlp_t m);
MESH_API const char *mesh_finetune_name(mesh_finetune_t f);
MESH_API int mesh_recompute_parse(const char *s, mesh_recompute_t *out); /* 0 ok, -1 unknown */

#ifdef __cplusplus
}
#endif
#endif
