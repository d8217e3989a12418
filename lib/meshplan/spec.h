/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan: the model spec (meshplan-spec(5)).
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

/** arch.mlp: the MLP's activation, and with it the layer's style (lib/params.c,
 * mesh_style()): GPT's, Llama's, Nemotron-4's squared ReLU, or GPT-OSS's
 * gated quick GeLU. */
typedef enum mesh_mlp {
    MESH_MLP_GELU,
    MESH_MLP_SWIGLU,
    MESH_MLP_RELU2,
    MESH_MLP_QUICK_GEGLU,
} mesh_mlp_t;
/** Training precision.  fp8 runs the GEMMs in FP8 through Transformer Engine
 * and keeps bf16 parameters and an fp32 master copy (mixed precision). */
typedef enum mesh_precision {
    MESH_PREC_BF16,
    MESH_PREC_FP16,
    MESH_PREC_FP32,
    MESH_PREC_FP8,
} mesh_precision_t;
/** Transformer Engine's FP8 scaling recipes (transformer_engine/common/recipe). */
typedef enum mesh_fp8_recipe {
    MESH_FP8_DELAYED,    /* DelayedScaling: per-tensor, amax history (Hopper) */
    MESH_FP8_TENSORWISE, /* Float8CurrentScaling: per-tensor, current amax (Hopper) */
    MESH_FP8_BLOCKWISE,  /* Float8BlockScaling: 128-wide blocks (Hopper, Blackwell) */
    MESH_FP8_MXFP8,      /* MXFP8BlockScaling: 32-wide blocks, needs Blackwell */
} mesh_fp8_recipe_t;
/** Whose accounting "fits" means: the framework that will run the job.  auto:
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
/** What selective recomputation recomputes (Megatron-LM's --recompute-modules,
 * transformer_config.py L560-581 at d98e8a6); 0 is its default, core_attn. */
enum {
    MESH_RC_CORE_ATTN = 1, /* the attention core: QK^T, softmax, AV */
    MESH_RC_LAYERNORM = 2, /* the norms' outputs, discarded and recomputed */
    MESH_RC_MLP = 4,       /* the whole MLP, from its input */
    /* latent attention's up projections and RoPE: their outputs, the
     * queries, keys and values, dropped once the attention core has run
     * and recomputed from the compressed latents for its backward
     * (multi_latent_attention.py L983-986, L455-458 at d98e8a6); only
     * with latent attention (arch.mla) */
    MESH_RC_MLA_UP_PROJ = 8,
    MESH_RC_ALL = 15,
};
/**
 * Write a MESH_RC_* module set as its names joined by '+', in the order
 * core_attn, layernorm, mlp, mla_up_proj ("core_attn+layernorm+mlp"), into
 * buf[len] (len > 0; 36 bytes hold every set).  0 is written as "core_attn", what
 * it means; bits above MESH_RC_ALL are ignored.  A name that does not fit
 * is left out whole rather than cut.  Returns buf.
 */
MESH_API const char *mesh_recompute_modules_name(unsigned modules, char *buf, size_t len);

/**
 * Parse module names joined by '+' ("layernorm+mlp"; case-sensitive, no
 * spaces) into a MESH_RC_* set in *out.  Returns 0, or -1 on an unknown or
 * empty name, a stray '+' or an empty string; no err, and *out may have
 * been changed even on -1.
 */
MESH_API int mesh_recompute_modules_parse(const char *s, unsigned *out);

/**
 * A mixture-of-experts MLP (arch.moe): in every layer but the first
 * dense_layers (or, with every N, in every Nth layer only: layers N-1,
 * 2N-1, ...), a router sends each token to top_k of `experts` routed
 * experts, and shared_experts more see every token.  experts 0: a dense
 * model (every other field 0).
 */
typedef struct mesh_moe {
    int experts;            /* routed experts per MoE layer; 0: no MoE */
    int top_k;              /* routed experts per token (default 2, Megatron-LM's) */
    int ffn;                /* each routed expert's intermediate size (default arch.ffn) */
    int shared_experts;     /* always-active experts per MoE layer (default 0) */
    int shared_ffn;         /* each shared expert's intermediate size (default moe.ffn) */
    int dense_layers;       /* the first N layers keep the dense MLP of arch.ffn (default 0) */
    double capacity_factor; /* 0 (none): dropless; else an expert drops tokens beyond it */
    int every;              /* > 1: MoE on layers i with (i+1) % every == 0 only (default 0: all) */
} mesh_moe_t;

/** How a MoE router scores the experts (arch.moe.score). */
typedef enum mesh_router_score {
    MESH_SCORE_SOFTMAX, /* Mixtral, Qwen3 (Megatron-LM's default) */
    MESH_SCORE_SIGMOID, /* DeepSeek-V3 */
} mesh_router_score_t;

/**
 * How a MoE model was trained to route (arch.moe's router keys): what
 * Megatron-LM must be told to build that router.  No parameter count
 * depends on them (the expert bias is a buffer, not a parameter).  0: the
 * framework's default.
 */
typedef struct mesh_router {
    mesh_router_score_t score; /* default softmax */
    int expert_bias;           /* 1: aux-loss-free balancing by a per-expert bias (DeepSeek-V3) */
    int groups;                /* group-limited routing: the experts fall in this many groups */
    int group_top_k;           /* ... and a token goes to experts of this many of them */
    double routed_scaling;     /* the routed experts' output scale; 0: none (1) */
    double aux_loss;           /* load-balancing loss coefficient; 0: meshplan's 1e-2 */
    int probs_on_input;        /* 1: the router's score scales the expert's input, not its
                                  output (Llama 4; top_k 1 only) */
} mesh_router_t;

/**
 * Multi-head latent attention (arch.mla, DeepSeek-V2/V3): queries (unless
 * q_lora_rank is 0) and keys/values pass through low-rank compressions;
 * each head has a non-rotary and a rotary part.  kv_lora_rank 0: standard
 * attention (every field 0).
 */
typedef struct mesh_mla {
    int q_lora_rank;      /* 0: queries not compressed */
    int kv_lora_rank;     /* the compressed key/value width; 0: no MLA */
    int qk_head_dim;      /* non-rotary part of each query/key head (default 128) */
    int qk_rope_head_dim; /* rotary part (default 64) */
    int v_head_dim;       /* width of each value head (default 128) */
    /* YaRN's attention-scale exponent over all dimensions under
     * arch.rope_scaling (DeepSeek-V3: 1); 0: Megatron-LM's default, 0 */
    double mscale_all_dim;
} mesh_mla_t;

/**
 * A model and its training setup, with every default filled in, as
 * mesh_spec_load and mesh_spec_parse make it.  Plain data: copy it freely.
 */
typedef struct mesh_model {
    char name[MESH_NAME_MAX]; /* the spec's name, else its preset's, else "model" */
    int has_arch;             /* 0: only `params` is known, so activations are not modelled */
    /* arch (all 0 without one): transformer layers, hidden size, attention
     * heads, key/value heads (GQA; default heads), MLP width (default
     * 4*hidden) and vocabulary size */
    int layers, hidden, heads, kv_heads, ffn, vocab;
    int head_dim; /* width of each attention head; 0: hidden / heads (Qwen3 and GPT-OSS differ) */
    /* gelu: GPT-style (biases, LayerNorm, learned positions); swiglu:
     * Llama-style (no biases, RMSNorm, rotary); relu2: Nemotron-style (no
     * biases, zero-centred LayerNorm, rotary); quick_geglu: GPT-OSS-style
     * (biases, RMSNorm, rotary) */
    mesh_mlp_t mlp;
    int tied_embeddings; /* 1: the output layer shares the input embedding's weights */
    double params;       /* parameter count: given, or computed from arch */
    /* train */
    int seq_len;                  /* tokens per sequence (default 4096) */
    long global_batch;            /* sequences per optimizer step (default 512) */
    int micro_batch;              /* 0 = auto (planned) */
    mesh_precision_t precision;   /* default bf16 */
    mesh_fp8_recipe_t fp8_recipe; /* with precision fp8 (default delayed) */
    /* gradient buffers: fp32 by default under bf16 and fp32 (Megatron's main
     * grads, DeepSpeed's fp32 accumulation), fp16 under fp16 (Megatron then
     * copies them to fp32 for the optimizer); bf16 = 2-byte buffers */
    mesh_precision_t grad_accum_dtype;
    mesh_optimizer_t optimizer; /* default adamw */
    /* the narrowest Adam moments the planner may choose: fp32 (the default)
     * or 16-bit, which changes numerics and so is only taken when given */
    mesh_precision_t optimizer_dtype;
    mesh_framework_t framework; /* default auto */
    mesh_recompute_t recompute; /* default auto (planned) */
    int flash_attention;        /* no s x s attention scores are stored (default 1) */
    double dropout;             /* probability, 0..1; 0: no dropout masks are stored */
    mesh_finetune_t finetune;   /* default full */
    /* arch.moe, arch.mla and arch.mtp_layers (multi-token-prediction layers,
     * placed after the last stage's layers as Megatron-LM does): all 0 for a
     * dense model with standard attention */
    mesh_moe_t moe;
    mesh_mla_t mla;
    int mtp_layers;
    /* train.moe_imbalance: tokens at the busiest expert-parallel rank over
     * the mean under dropless routing; 0: not given (the policy's
     * moe_imbalance, which a plan writes here) */
    double moe_imbalance;
    /* train.ep_overlap: MESH_EP_OVERLAP_ON (the default) overlaps the expert
     * all-to-all with another micro-batch's compute wherever Megatron-LM
     * accepts it (lib/overlap.c), OFF never: priced exposed and not
     * exported, as Megatron-LM runs without the flag */
    int ep_overlap;
#define MESH_EP_OVERLAP_ON  0
#define MESH_EP_OVERLAP_OFF 1
    /* train.dispatcher: the MoE token dispatcher.  AUTO: the policy's
     * dispatcher= (a plan writes DEEPEP here where the site has DeepEP and
     * the allocation runs it, else leaves AUTO: the all-to-all);
     * ALLTOALL: Megatron-LM's alltoall; DEEPEP: its flex dispatcher on
     * DeepEP's kernels (lib/overlap.c) */
    int dispatcher;
#define MESH_DISPATCHER_AUTO     0
#define MESH_DISPATCHER_ALLTOALL 1
#define MESH_DISPATCHER_DEEPEP   2
    /* train.headroom: the fraction of the usable GPU memory a plan must
     * leave free, for what no model counts (allocator growth, a longer
     * batch, a library upgrade); 0: none asked.  A plan keeps the larger of
     * this and the policy's headroom= (mesh_assumptions_t). */
    double headroom;
#define MESH_HEADROOM_MAX 0.9 /* a plan keeps at least a tenth of the memory to use */
    /* the training budget, for the run-time estimate (mesh_size_estimate):
     * train.tokens, tokens in all, or train.steps, optimizer steps; 0: not
     * given (at most one is).  Neither changes the plan nor its digest. */
    double tokens;
    long steps;
    /* what Megatron-LM must be told to build the published model where no
     * parameter count depends on it; 0: not given (the framework's default) */
    int rope_theta;        /* arch.rope_theta: the rotary base (Megatron-LM's default 10000) */
    double rope_scaling;   /* arch.rope_scaling: Llama 3.1's RoPE scaling factor, or MLA's YaRN
                              factor; 0: none */
    double norm_eps;       /* arch.norm_eps: the norms' epsilon (Megatron-LM's default 1e-5) */
    double rotary_percent; /* arch.rotary_percent: the share of each head's width that is
                              rotated (Nemotron-4: 0.5); 0: all of it */
    mesh_router_t router;  /* arch.moe's router keys */
    /* arch.qk_norm: 1 when each head's queries and keys pass an RMSNorm of
     * head_dim weights before attention (Qwen3: q_norm, k_norm); counted in
     * the parameters, whole on every TP rank */
    int qk_norm;
    /* arch.qk_l2_norm: 1 when each head's queries and keys are scaled to
     * unit RMS by a norm without weights (Llama 4's use_qk_norm); no
     * parameter */
    int qk_l2_norm;
    /* arch.qkv_bias: 1 when the query, key and value projections have
     * biases and the rest none (Qwen2); counted in the parameters, split by
     * TP like the projections */
    int qkv_bias;
    /* arch.window: sliding-window attention, each query seeing the last
     * `window` tokens, itself included (Hugging Face's sliding_window);
     * 0: every layer attends to the whole
     * sequence.  arch.full_attention_every: with a window, every N-th layer
     * (counted from 1) attends to the whole sequence all the same (GPT-OSS:
     * 2, alternating); 0: every layer windowed.  No parameter depends on
     * them; the attention core's work does (mesh_attention_share). */
    int window;
    int full_attention_every;
    /* arch.nope_every: every N-th layer (counted from 1) has no rotary
     * embedding (Llama 4: 4, its NoPE layers); 0: every layer rotary */
    int nope_every;
    /* arch.rotary_interleaved: 1 when the rotary embedding turns adjacent
     * pairs of a head's dimensions (Llama 4's checkpoints), not its two
     * halves (Llama 2 and 3 as Hugging Face converted them); no parameter */
    int rotary_interleaved;
    /* arch.attention_sinks: 1 when each head has a learned logit that joins
     * its softmax and takes a share of the attention (GPT-OSS's sinks;
     * Megatron-LM's softmax_type learnable): one parameter a head a layer */
    int attention_sinks;
    /* arch.activation_clamp: the gated MLP's activation clamps its inputs
     * to this bound (GPT-OSS's swiglu_limit, 7); 0: no clamp */
    double activation_clamp;
    /* arch.rope_type: how arch.rope_scaling scales the rotary frequencies
     * of standard attention: MESH_ROPE_LLAMA3 (Llama 3.1's, the default) or
     * MESH_ROPE_YARN (GPT-OSS's); MLA's is always YaRN */
    int rope_type;
#define MESH_ROPE_LLAMA3 0
#define MESH_ROPE_YARN   1
    /* arch.yarn_truncate: MESH_YARN_TRUNCATE (the default) rounds YaRN's
     * correction range to whole dimensions, as Hugging Face's truncate and
     * Megatron-LM's yarn_correction_range_round_to_int do by default;
     * MESH_YARN_EXACT keeps it fractional (GPT-OSS's truncate: false) */
    int yarn_truncate;
#define MESH_YARN_TRUNCATE 0
#define MESH_YARN_EXACT    1
} mesh_model_t;

/** Where presets are searched, in order; a NULL entry ends the list early. */
typedef struct mesh_spec_dirs {
    const char *dirs[4]; /* directories holding NAME.yaml files; the caller's strings */
} mesh_spec_dirs_t;

/**
 * The installed presets directory ($(datadir)/meshplan/models), fixed at
 * build time: a static string, never NULL, never freed.
 */
MESH_API const char *mesh_default_models_dir(void);

/**
 * The preset search path every front end uses: the non-empty directories of
 * first[0..n-1], in order (the caller's: --models-dir, the policy's
 * models_dir, $MESH_MODELS_DIR, ...; at most 3 are kept), then the installed
 * presets (mesh_default_models_dir), into *d.  The strings are the caller's
 * and must outlive d.  first may be NULL when n is 0.
 */
MESH_API void mesh_spec_dirs_make(mesh_spec_dirs_t *d, const char *const *first, int n);

/**
 * Load a spec: `spec` is a file path if mesh_spec_is_path says so,
 * otherwise a preset name looked up as DIR/NAME.yaml in `dirs` (the first
 * directory where the effective uid can read it wins).
 *
 * dirs may be NULL (no presets: a preset name is then an error).  A file
 * may name a preset (`preset:`), looked up in dirs; a preset may not.
 * Files are read with mesh_spec_read_file.  On success fills *out with
 * defaults applied and params computed and returns 0; on failure returns
 * -1, leaves *out alone and sets err, naming the file and, where there
 * is one, the line and key ("llama.yaml:7: arch.heads: ...").  Nothing of
 * dirs or spec is kept.
 */
MESH_API int mesh_spec_load(const char *spec, const mesh_spec_dirs_t *dirs, mesh_model_t *out,
                            mesh_error_t *err);

/**
 * Load a spec as mesh_spec_load does, with n overrides of its keys applied
 * on top of the file (and of the preset it names) before the model is
 * checked: "what if the sequence were 32K" without copying the spec.
 *
 * sets[i] is "KEY=VALUE": KEY a spec key as mesh_spec_key_name spells it
 * (dotted: "train.seq_len", "arch.layers", "name"), VALUE as a YAML scalar
 * would hold it.  Each is read with the checks the same key gets in a file,
 * and the whole model is then checked as a file's is; errors have the
 * file's words, with `origin` (e.g. "--set"; NULL: "override") where a file
 * has "FILE:LINE" ("--set: train.seq_len: ..."), an unknown key's error
 * lists its section's keys and the one a typo most likely meant, and when
 * two keys disagree the override is blamed before the file.  An override
 * of an arch key that does not also set params makes params computed from
 * the new arch.  A key given twice among the overrides, "preset", a string
 * without '=', an empty value or one over 256 characters are errors.
 *
 * sets may be NULL when n is 0; sets, origin and spec are not kept.
 * Returns 0 with *out filled, or -1 with err set and *out untouched.
 */
MESH_API int mesh_spec_load_with(const char *spec, const mesh_spec_dirs_t *dirs, const char *origin,
                                 const char *const *sets, int n, mesh_model_t *out,
                                 mesh_error_t *err);

/**
 * The keys an override may set (every key a spec holds but "preset"), for
 * 0 <= i: the i-th as mesh_spec_load_with's KEY spells it ("name",
 * "params", "arch.layers", ..., "train.seq_len", ...), a static string; NULL
 * past the last.  For listing the keys and for "did you mean" hints.
 */
MESH_API const char *mesh_spec_key_name(int i);

/**
 * The key (as mesh_spec_key_name spells it) a mistyped key most likely
 * meant, for a "did you mean" hint: a key of the same last part in another
 * section ("arch.seq_len" means train.seq_len, "arch.v_head_dim"
 * arch.mla.v_head_dim), else by the whole dotted name, else by its last
 * part ("seqlen" means train.seq_len), as mesh_closest_name judges a typo;
 * NULL when none is near, or key is NULL.  A static string.
 */
MESH_API const char *mesh_spec_key_closest(const char *key);

/**
 * Parse a spec held in memory: len bytes of buf (no NUL needed; a NUL byte
 * inside is an error; no size limit here, unlike mesh_spec_read_file).
 * `origin` (not NULL) names it in errors, e.g. the path.  A `preset:` key
 * is resolved through dirs; dirs NULL forbids it.  Returns 0 with *out
 * filled as by mesh_spec_load, or -1 with err set and *out untouched.
 */
MESH_API int mesh_spec_parse(const char *buf, size_t len, const char *origin,
                             const mesh_spec_dirs_t *dirs, mesh_model_t *out, mesh_error_t *err);

/**
 * Read a spec file the way the plugin must read a user's file: open without
 * blocking on a FIFO, check that what was opened is a regular file, cap its
 * size at MESH_SPEC_MAX_BYTES.  Returns a malloc'd buffer, NUL-terminated,
 * that the caller frees with free(), and its length in *len (len may be
 * NULL); NULL with err set when the file cannot be opened or read, is not
 * a regular file, is too large, or memory runs out.
 */
MESH_API char *mesh_spec_read_file(const char *path, size_t *len, mesh_error_t *err);

/**
 * True if `spec` (not NULL) names a file rather than a preset: it contains
 * '/' or ends in ".yaml" or ".yml" after at least one more character.
 */
MESH_API int mesh_spec_is_path(const char *spec);

/**
 * True if `name` (not NULL) is a well-formed preset or model name: 1 to
 * MESH_NAME_MAX - 1 characters of [A-Za-z0-9._-], not starting with '.' or
 * '-' (so no path can be made of it).
 */
MESH_API int mesh_spec_valid_preset_name(const char *name);

/**
 * A 16-hex-digit digest (FNV-1a 64) of every field of m, the name
 * included, written into buf[17] (NUL-terminated).  Equal digests mean the
 * same model and training setup, whatever the file's comments or key
 * order.  Returns buf.
 */
MESH_API const char *mesh_model_digest(const mesh_model_t *m, char buf[17]);

/**
 * Names of the enums, as written in specs ("bf16", "megatron", ...): static
 * strings, never NULL, never freed.  A value outside its enum gives "?" for
 * precision, FP8 recipe and framework; the others fall back to one of
 * their names (optimizer "sgd", recompute "auto", mlp "swiglu", finetune
 * "full").
 */
MESH_API const char *mesh_precision_name(mesh_precision_t p);
MESH_API const char *mesh_fp8_recipe_name(mesh_fp8_recipe_t r);
MESH_API const char *mesh_framework_name(mesh_framework_t f);
MESH_API const char *mesh_optimizer_name(mesh_optimizer_t o);
MESH_API const char *mesh_recompute_name(mesh_recompute_t r);
MESH_API const char *mesh_mlp_name(mesh_mlp_t m);
MESH_API const char *mesh_finetune_name(mesh_finetune_t f);

/**
 * Parse a recomputation name (s not NULL): auto, none, selective or full,
 * case-insensitively.  Returns 0 with *out set, or -1 on an unknown name
 * (*out untouched, no err).
 */
MESH_API int mesh_recompute_parse(const char *s, mesh_recompute_t *out);

#ifdef __cplusplus
}
#endif
#endif
