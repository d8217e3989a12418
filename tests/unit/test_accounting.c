/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Model states against the frameworks' own accounting, and the accounting
 * table against the exported flags, both ways.
 *
 * The oracles below are written from the frameworks' documentation and
 * estimators, not from lib/accounting.c:
 *   Megatron-LM @ d98e8a64ddf34856e74b24714e3bedb2f5a39553
 *     docs/user-guide/features/dist_optimizer.md L16-20: bytes per parameter
 *     bf16 params + fp32 grads 18, 6 + 12/d distributed; fp16 20, 4 + 16/d;
 *     fp32 16, 8 + 8/d.  Precision-aware optimizer (optimizer_config.py
 *     L468-480): --main-grads-dtype bf16 makes the grads 2 bytes,
 *     --exp-avg(-sq)-dtype bf16 the moments 2 bytes each.
 *   DeepSpeed @ edaa7221267243c7be7fb49c5d5f5c4fb97b4641
 *     stage_1_and_2.py L3093-3096 estimate_zero2: 2 + 18/d;
 *     stage3.py L3755-3774 estimate_zero3: 4 x largest module + 18/d;
 *     memory.rst L137: ZeRO-1 4 + 16/d; config.py L113, L215: buckets.
 *   Transformer Engine @ d0067d0da6cb01811b8072a7d304f0e00344ce2b
 *     linear.py L479-489, L2068-2071: an FP8 copy of each weight and, on
 *     Hopper, its transpose (quantizer.cpp L375) are cached: 2 bytes.
 */
#include <math.h>

#include "testutil.h"

#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- an independent count of the parameters one GPU holds ---- */

static double padded_vocab(int vocab, int tp)
{
    long unit = 128L * tp;
    return (double)((vocab + unit - 1) / unit * unit);
}

/* Llama-style (SwiGLU, RMSNorm, no biases) layers of stage `stage`:
 * attention q,o (h^2 each) and k,v (h^2*kv/heads each), MLP 3*h*ffn split
 * by TP; two norms (h each) replicated.  Embedding V*h on the first stage,
 * output layer V*h and the final norm on the last (Megatron pads V to a
 * multiple of 128*tp). */
static double llama_stage_params(const mesh_model_t *m, int tp, int pp, int stage, int layers)
{
    double h = m->hidden, f = m->ffn, kv = (double)m->kv_heads / m->heads;
    double split = 2 * h * h + 2 * h * h * kv + 3 * h * f, norms = 2 * h;
    double p = layers * (split / tp + norms), emb = padded_vocab(m->vocab, tp) * h / tp;
    if (stage == 0)
        p += emb;
    if (stage == pp - 1)
        p += emb + h;
    return p;
}

/* GPT-3 (Narayanan et al. 2021): 12h^2 + 13h per layer of which the four
 * LayerNorm weights and biases and two row-parallel biases (6h) are
 * replicated; learned positions s*h on the first stage. */
static double gpt_stage_params(const mesh_model_t *m, int tp, int pp, int stage, int layers)
{
    double h = m->hidden;
    double p = layers * ((12 * h * h + 7 * h) / tp + 6 * h);
    double emb = padded_vocab(m->vocab, tp) * h / tp;
    if (stage == 0)
        p += emb + (double)m->seq_len * h;
    if (stage == pp - 1)
        p += 2 * h + (pp > 1 ? emb : 0); /* tied: the last stage's copy */
    return p;
}

/* ---- the frameworks' bytes per parameter ---- */

typedef struct oracle {
    double unsharded, sharded; /* per parameter: kept whole, divided over d */
} oracle_t;

/* Megatron-LM, dist_optimizer.md's table generalised by its own terms:
 * parameters p, gradient buffer g, fp32 main params 4 (mixed precision),
 * moments 2 x (4 or 2), and an fp32 copy of 16-bit gradients for the step
 * 4: fp16's always, bf16's without the distributed optimizer.  The
 * distributed optimizer (ZeRO-1) shards the last three; Megatron-FSDP's
 * optim_grads (ZeRO-2) the gradients too, optim_grads_params (ZeRO-3)
 * everything. */
static oracle_t megatron(const mesh_model_t *m, int zero, int moments16, int fp8_params)
{
    int fp32 = m->precision == MESH_PREC_FP32, fp16 = m->precision == MESH_PREC_FP16;
    double p = fp32 ? 4 : 2, g = m->grad_accum_dtype == MESH_PREC_FP32 ? 4 : 2;
    double te = m->precision == MESH_PREC_FP8 && !fp8_params ? 2 : 0;
    /* 2-byte main grads are the precision-aware optimizer's, which needs
     * the distributed one (optimizer/__init__.py L1057-1060); Float16Optimizer
     * steps on main_grad.float() (optimizer.py L1092-1100) */
    int copy = g == 2 && (fp16 || zero == 0);
    double opt = (fp32 ? 0 : 4) +
                 (m->optimizer == MESH_OPT_SGD ? 4
                  : moments16                  ? 4
                                               : 8) +
                 (copy ? 4 : 0);
    oracle_t o = {p + g + te, opt};
    if (zero == 0)
        o = (oracle_t){p + g + opt + te, 0};
    if (zero == 2)
        o = (oracle_t){p + te, g + opt};
    if (zero == 3)
        o = (oracle_t){te, p + g + opt};
    return o;
}

/* DeepSpeed: 16-bit parameters and gradients, the fp32 gradient partition
 * of the step, fp32 master and Adam (the estimators' 2 + 18/d at ZeRO-2;
 * 4 + 16/d at ZeRO-1 where gradients stay whole; ZeRO-3 shards all, 20/d,
 * 2/d above its estimator's 18/d, which leaves out the fp32 gradient
 * partition that stage3.py also makes for the step); fp32 training keeps
 * no master and no second gradient copy.  ZeRO-0 in bf16 runs
 * FP16_Optimizer (engine.py L2011-2021): 2 + 2 + 4 + 4 + 8 = 20. */
static oracle_t deepspeed(const mesh_model_t *m, int zero)
{
    int fp32 = m->precision == MESH_PREC_FP32;
    double p = fp32 ? 4 : 2, g = fp32 ? 4 : 2, te = m->precision == MESH_PREC_FP8 ? 2 : 0;
    double opt = (fp32 ? 0 : 8) + (m->optimizer == MESH_OPT_SGD ? 4 : 8);
    if (zero == 0)
        return (oracle_t){p + g + opt + te, 0};
    if (zero == 1)
        return (oracle_t){p + g + te, opt};
    if (zero == 2)
        return (oracle_t){p + te, g + opt};
    return (oracle_t){te, p + g + opt};
}

/* PyTorch: DDP under autocast keeps fp32 parameters, fp32 gradients, Adam
 * and autocast's bf16 copies (18); FSDP2 with MixedPrecisionPolicy(bf16,
 * reduce fp32) shards the fp32 parameters, gradients and Adam (16/d). */
static oracle_t torch_fsdp(const mesh_model_t *m, int zero)
{
    /* ZeRO-2 (reshard_after_forward=False) keeps the unsharded parameters
     * from the forward to the backward: bf16 copies, or the fp32 ones */
    double copies = m->precision == MESH_PREC_FP32 ? 0 : 2;
    if (zero == 0)
        return (oracle_t){4 + 4 + 8 + copies, 0};
    if (zero == 1)
        return (oracle_t){4 + 4 + copies, 8};
    return (oracle_t){zero == 2 ? (copies ? copies : 4) : 0, 16};
}

/* ---- the cases ---- */

typedef struct kase {
    const char *spec; /* YAML */
    const char *gpu;
    int nodes;
    const char *mesh; /* a complete layout */
    mesh_framework_t fw;
    int host;        /* 1: the GPU bytes exclude what offload keeps on the host */
    const char *why; /* where meshplan differs from the framework's own report */
} kase_t;

#define L2_7B "preset: llama2-7b\ntrain: {framework: %s%s}\n"

static const kase_t cases[] = {
    /* Megatron-LM: dist_optimizer.md's three rows, non-distributed and distributed */
    {"preset: llama2-7b\ntrain: {framework: megatron}\n", "H100-SXM", 1,
     "tp=1,pp=1,dp=8,cp=1,zero=0,vpp=1,mb=1,recompute=full,sp=off", MESH_FW_MEGATRON, 0, NULL},
    {"preset: llama2-7b\ntrain: {framework: megatron}\n", "H100-SXM", 1,
     "tp=1,pp=1,dp=8,cp=1,zero=1,vpp=1,mb=1,recompute=full,sp=off", MESH_FW_MEGATRON, 0, NULL},
    {"preset: llama2-7b\ntrain: {framework: megatron, precision: fp16}\n", "H100-SXM", 1,
     "tp=1,pp=1,dp=8,cp=1,zero=0,vpp=1,mb=1,recompute=full,sp=off", MESH_FW_MEGATRON, 0, NULL},
    {"preset: llama2-7b\ntrain: {framework: megatron, precision: fp16}\n", "H100-SXM", 1,
     "tp=1,pp=1,dp=8,cp=1,zero=1,vpp=1,mb=1,recompute=full,sp=off", MESH_FW_MEGATRON, 0, NULL},
    {"preset: llama2-7b\ntrain: {framework: megatron, precision: fp32}\n", "H100-SXM", 1,
     "tp=1,pp=1,dp=8,cp=1,zero=0,vpp=1,mb=1,recompute=full,sp=off", MESH_FW_MEGATRON, 0, NULL},
    {"preset: llama2-7b\ntrain: {framework: megatron, precision: fp32}\n", "H100-SXM", 1,
     "tp=1,pp=1,dp=8,cp=1,zero=1,vpp=1,mb=1,recompute=full,sp=off", MESH_FW_MEGATRON, 0, NULL},
    /* 2-byte gradient buffers: 4 + 12/d (the seed's 16 unsharded); without
     * the distributed optimizer, --grad-reduce-in-bf16 and an fp32 copy for
     * the step: 20 */
    {"preset: llama2-7b\ntrain: {framework: megatron, grad_accum_dtype: bf16}\n", "H100-SXM", 1,
     "tp=1,pp=1,dp=8,cp=1,zero=0,vpp=1,mb=1,recompute=full,sp=off", MESH_FW_MEGATRON, 0, NULL},
    {"preset: llama2-7b\ntrain: {framework: megatron, grad_accum_dtype: bf16}\n", "H100-SXM", 1,
     "tp=1,pp=1,dp=8,cp=1,zero=1,vpp=1,mb=1,recompute=full,sp=off", MESH_FW_MEGATRON, 0, NULL},
    /* fp16 accumulating in fp32: no second gradient copy, 18 / 6 + 12/d */
    {"preset: llama2-7b\ntrain: {framework: megatron, precision: fp16, grad_accum_dtype: fp32}\n",
     "H100-SXM", 1, "tp=1,pp=1,dp=8,cp=1,zero=1,vpp=1,mb=1,recompute=full,sp=off", MESH_FW_MEGATRON,
     0, NULL},
    /* TP and PP */
    {"preset: llama3-8b\ntrain: {framework: megatron}\n", "H100-SXM", 1,
     "tp=2,pp=2,dp=2,cp=1,zero=1,vpp=1,mb=1,recompute=none,sp=on", MESH_FW_MEGATRON, 0,
     "Megatron's report counts the embedding on every stage's most-loaded shard"},
    {"preset: llama3-70b\ntrain: {framework: megatron}\n", "H100-SXM", 16,
     "tp=4,pp=2,dp=8,cp=2,zero=1,vpp=1,mb=1,recompute=full,sp=on", MESH_FW_MEGATRON, 0,
     "theoretical_memory_usage.py divides by dp 8 (args.data_parallel_size excludes CP); the "
     "optimizer really shards over dp x cp = 16"},
    {"preset: llama3-70b\ntrain: {framework: megatron}\n", "H100-SXM", 16,
     "tp=8,pp=4,dp=4,cp=1,zero=1,vpp=5,mb=1,recompute=none,sp=on", MESH_FW_MEGATRON, 0, NULL},
    {"preset: gpt3-175b\ntrain: {framework: megatron}\n", "A100-80GB", 64,
     "tp=8,pp=8,dp=8,cp=1,zero=1,vpp=1,mb=1,recompute=selective,sp=on", MESH_FW_MEGATRON, 0, NULL},
    {"preset: llama2-70b\ntrain: {framework: megatron}\n", "H100-SXM", 8,
     "tp=8,pp=2,dp=4,cp=1,zero=0,vpp=1,mb=1,recompute=full,sp=on", MESH_FW_MEGATRON, 0, NULL},
    /* Megatron-FSDP: ZeRO-2 and ZeRO-3 (their per-layer buffers are added
     * below, beyond the documented per-parameter count) */
    {"preset: llama3.1-405b\ntrain: {framework: megatron}\n", "H100-SXM", 2048,
     "tp=8,pp=16,dp=128,cp=1,zero=2,vpp=1,mb=1,recompute=none,sp=on", MESH_FW_MEGATRON, 0, NULL},
    {"preset: llama3-70b\ntrain: {framework: megatron}\n", "H100-SXM", 16,
     "tp=8,pp=1,dp=16,cp=1,zero=3,vpp=1,mb=1,recompute=full,sp=on", MESH_FW_MEGATRON, 0, NULL},
    /* an fp32 model's parameters, its only copy, sharded from ZeRO-3 on:
     * 4 + 12/d at ZeRO-2, 16/d at ZeRO-3 */
    {"preset: llama2-7b\ntrain: {framework: megatron, precision: fp32}\n", "H100-SXM", 1,
     "tp=1,pp=1,dp=8,cp=1,zero=2,vpp=1,mb=1,recompute=full,sp=off", MESH_FW_MEGATRON, 0, NULL},
    {"preset: llama2-7b\ntrain: {framework: megatron, precision: fp32}\n", "H100-SXM", 1,
     "tp=1,pp=1,dp=8,cp=1,zero=3,vpp=1,mb=1,recompute=full,sp=off", MESH_FW_MEGATRON, 0, NULL},
    /* 16-bit moments and SGD */
    {"preset: llama2-70b\ntrain: {framework: megatron, optimizer_dtype: bf16}\n", "H100-SXM", 8,
     "tp=8,pp=2,dp=4,cp=1,zero=1,vpp=1,mb=1,recompute=full,sp=on,moments=bf16", MESH_FW_MEGATRON, 0,
     NULL},
    {"preset: llama2-7b\ntrain: {framework: megatron, optimizer: sgd}\n", "H100-SXM", 1,
     "tp=1,pp=1,dp=8,cp=1,zero=1,vpp=1,mb=1,recompute=full,sp=off", MESH_FW_MEGATRON, 0, NULL},
    /* FP8: TE's cached copy and transpose, or FP8 parameters under the
     * distributed optimizer (--fp8-param-gather); MXFP8 keeps bf16 */
    {"preset: llama3-8b\ntrain: {framework: megatron, precision: fp8}\n", "H100-SXM", 1,
     "tp=1,pp=1,dp=8,cp=1,zero=0,vpp=1,mb=1,recompute=full,sp=off", MESH_FW_MEGATRON, 0,
     "theoretical_memory_usage.py assumes bf16 and leaves out TE's FP8 weight cache"},
    {"preset: llama3-8b\ntrain: {framework: megatron, precision: fp8}\n", "H100-SXM", 1,
     "tp=1,pp=1,dp=8,cp=1,zero=1,vpp=1,mb=1,recompute=full,sp=off", MESH_FW_MEGATRON, 0, NULL},
    {"preset: llama3-8b\ntrain: {framework: megatron, precision: fp8, fp8_recipe: mxfp8}\n", "B200",
     1, "tp=1,pp=1,dp=8,cp=1,zero=1,vpp=1,mb=1,recompute=full,sp=off", MESH_FW_MEGATRON, 0, NULL},
    /* recomputation changes no model state */
    {"preset: llama3-70b\ntrain: {framework: megatron}\n", "H100-SXM", 8,
     "tp=8,pp=2,dp=4,cp=1,zero=1,vpp=1,mb=1,recompute=none,sp=on", MESH_FW_MEGATRON, 0, NULL},
    {"preset: llama3-70b\ntrain: {framework: megatron}\n", "H100-SXM", 8,
     "tp=8,pp=2,dp=4,cp=1,zero=1,vpp=1,mb=1,recompute=selective,sp=on", MESH_FW_MEGATRON, 0, NULL},
    {"preset: llama3-70b\ntrain: {framework: megatron}\n", "H100-SXM", 8,
     "tp=8,pp=2,dp=4,cp=1,zero=1,vpp=1,mb=1,recompute=full,sp=on", MESH_FW_MEGATRON, 0, NULL},
    {"preset: llama3-70b\ntrain: {framework: megatron}\n", "H100-SXM", 8,
     "tp=8,pp=2,dp=4,cp=1,zero=1,vpp=1,mb=1,recompute=full:7,sp=on", MESH_FW_MEGATRON, 0, NULL},
    /* CPU optimizer offload: master and moments on the host */
    {"preset: llama3-70b\ntrain: {framework: megatron}\n", "H100-SXM", 1,
     "tp=8,pp=1,dp=1,cp=1,zero=1,vpp=1,mb=1,recompute=full,sp=on,offload=optimizer",
     MESH_FW_MEGATRON, 1, NULL},
    /* and over 8 replicas: the host's shard of each, its gradient copy too */
    {"preset: llama3-8b\ntrain: {framework: megatron}\n", "H100-SXM", 1,
     "tp=1,pp=1,dp=8,cp=1,zero=1,vpp=1,mb=1,recompute=full,sp=off,offload=optimizer",
     MESH_FW_MEGATRON, 1, NULL},
    /* DeepSpeed */
    {"preset: llama2-7b\ntrain: {framework: deepspeed}\n", "H100-SXM", 1,
     "tp=1,pp=1,dp=8,cp=1,zero=0,vpp=1,mb=1,recompute=full,sp=off", MESH_FW_DEEPSPEED, 0, NULL},
    {"preset: llama2-7b\ntrain: {framework: deepspeed}\n", "H100-SXM", 1,
     "tp=1,pp=1,dp=8,cp=1,zero=1,vpp=1,mb=1,recompute=full,sp=off", MESH_FW_DEEPSPEED, 0, NULL},
    {"preset: llama2-7b\ntrain: {framework: deepspeed}\n", "H100-SXM", 1,
     "tp=1,pp=1,dp=8,cp=1,zero=2,vpp=1,mb=1,recompute=full,sp=off", MESH_FW_DEEPSPEED, 0, NULL},
    {"preset: llama3-8b\ntrain: {framework: deepspeed}\n", "H100-SXM", 2,
     "tp=1,pp=1,dp=16,cp=1,zero=3,vpp=1,mb=1,recompute=full,sp=off", MESH_FW_DEEPSPEED, 0,
     "the estimator's 18/d leaves out the fp32 gradient partition of the step: 20/d here"},
    {"preset: llama2-13b\ntrain: {framework: deepspeed, precision: fp16}\n", "A100-80GB", 1,
     "tp=1,pp=1,dp=8,cp=1,zero=3,vpp=1,mb=1,recompute=full,sp=off", MESH_FW_DEEPSPEED, 0, NULL},
    {"preset: llama2-7b\ntrain: {framework: deepspeed, precision: fp32}\n", "A100-80GB", 1,
     "tp=1,pp=1,dp=8,cp=1,zero=1,vpp=1,mb=1,recompute=full,sp=off", MESH_FW_DEEPSPEED, 0, NULL},
    /* SGD keeps one fp32 momentum where Adam keeps two moments */
    {"preset: llama2-7b\ntrain: {framework: deepspeed, optimizer: sgd}\n", "H100-SXM", 1,
     "tp=1,pp=1,dp=8,cp=1,zero=1,vpp=1,mb=1,recompute=full,sp=off", MESH_FW_DEEPSPEED, 0, NULL},
    {"preset: llama3-8b\ntrain: {framework: deepspeed}\n", "H100-SXM", 1,
     "tp=2,pp=2,dp=2,cp=1,zero=2,vpp=1,mb=1,recompute=none,sp=on", MESH_FW_DEEPSPEED, 0, NULL},
    {"preset: llama2-7b\ntrain: {framework: deepspeed}\n", "H100-SXM", 1,
     "tp=1,pp=1,dp=8,cp=1,zero=2,vpp=1,mb=1,recompute=full,sp=off,offload=optimizer",
     MESH_FW_DEEPSPEED, 1, NULL},
    /* auto: the larger of the two; PyTorch */
    {"preset: llama2-7b\n", "H100-SXM", 1,
     "tp=1,pp=1,dp=8,cp=1,zero=2,vpp=1,mb=1,recompute=full,sp=off", MESH_FW_DEEPSPEED, 0, NULL},
    {"preset: llama2-7b\ntrain: {framework: torch}\n", "H100-SXM", 1,
     "tp=1,pp=1,dp=8,cp=1,zero=0,vpp=1,mb=1,recompute=full,sp=off", MESH_FW_TORCH, 0, NULL},
    {"preset: llama2-7b\ntrain: {framework: torch}\n", "H100-SXM", 1,
     "tp=1,pp=1,dp=8,cp=1,zero=3,vpp=1,mb=1,recompute=full,sp=off", MESH_FW_TORCH, 0, NULL},
    {"preset: llama2-7b\ntrain: {framework: torch, precision: fp32}\n", "A100-80GB", 1,
     "tp=1,pp=1,dp=8,cp=1,zero=2,vpp=1,mb=1,recompute=full,sp=off", MESH_FW_TORCH, 0, NULL},
    /* a ZeRO stage pinned over one replica is priced as exported */
    {"preset: llama3-8b\ntrain: {framework: deepspeed}\n", "H100-SXM", 1,
     "tp=8,pp=1,dp=1,cp=1,zero=3,vpp=1,mb=1,recompute=full,sp=on", MESH_FW_DEEPSPEED, 0, NULL},
};

/* Buffers beyond the per-parameter count, as each framework sizes them:
 * DeepSpeed's reduce bucket (reduce_bucket_size 5e8 elements of the model
 * dtype; two at ZeRO-3, where overlap_comm is on), ZeRO-3's largest module
 * gathered with its gradients (4 x its parameters in 16 bits) and prefetch
 * bucket (5e7); Megatron-FSDP's one layer of unsharded gradients (ZeRO-2)
 * and gathered plus prefetched layer (ZeRO-3); FSDP2's likewise, with fp32
 * gradients. */
static double buffers(const mesh_model_t *m, const mesh_layout_t *l, int stage)
{
    double w = m->precision == MESH_PREC_FP32 ? 4 : 2, h = m->hidden;
    double emb = padded_vocab(m->vocab, l->tp) * h / l->tp;
    int ends = stage == 0 || stage == l->pp - 1;
    double layer =
        (2 * h * h + 2 * h * h * m->kv_heads / m->heads + 3 * h * m->ffn) / l->tp + 2 * h;
    double unit = ends && emb > layer ? emb : layer;
    /* delayed scaling: per GEMM (4 a layer) and tensor (input, weight,
     * gradient) an fp32 amax history plus scale and inverse; Megatron-LM's
     * history is 1 long (transformer_config.py L621), TE's default 1024 */
    double amax = 0;
    if (m->precision == MESH_PREC_FP8 && m->fp8_recipe == MESH_FP8_DELAYED)
        amax = (m->layers + l->pp - 1) / l->pp * 4 * 3 *
               ((m->framework == MESH_FW_MEGATRON ? 1 : 1024) + 2) * 4.0;
    double widest = h * (m->ffn > h ? m->ffn : h) / l->tp;
    double leaf = ends && emb > widest ? emb : widest;
    switch (m->framework) {
    case MESH_FW_MEGATRON: {
        double g = m->grad_accum_dtype == MESH_PREC_FP32 ? 4 : 2;
        return amax + (l->zero == 2 ? g * unit : l->zero == 3 ? (g + 2 * w) * unit : 0);
    }
    case MESH_FW_TORCH: return l->zero == 3 ? (2 * w + 4) * unit : 0;
    default:
        if (l->zero == 0)
            return amax;
        if (l->zero < 3)
            return amax + w * 5e8;
        return amax + 2 * w * 5e8 + 2 * w * leaf + w * 5e7;
    }
}

static void oracle__model_states(void **state)
{
    (void)state;
    int n = 0;
    for (int i = 0; i < N_OF(cases); i++) {
        const kase_t *k = &cases[i];
        mesh_model_t m = test_spec(k->spec);
        mesh_alloc_t a = test_alloc(k->gpu, k->nodes, 8);
        a.host_memory = 4e12;
        mesh_plan_t *p = test_plan(&m, &a, k->mesh);
        const mesh_candidate_t *c = mesh_plan_best(p);
        const mesh_layout_t *l = &c->layout;
        int stage = c->memory.stage;
        int layers = mesh_stage_layers(m.layers, l->pp, stage);
        double psi = m.mlp == MESH_MLP_SWIGLU ? llama_stage_params(&m, l->tp, l->pp, stage, layers)
                                              : gpt_stage_params(&m, l->tp, l->pp, stage, layers);
        int d = l->dp * l->cp;
        mesh_model_t priced = m;
        priced.framework = k->fw;
        int fp8_params =
            m.precision == MESH_PREC_FP8 && l->zero >= 1 && m.fp8_recipe != MESH_FP8_MXFP8;
        oracle_t o = k->fw == MESH_FW_MEGATRON
                         ? megatron(&m, l->zero, l->moments != MESH_PREC_FP32, fp8_params)
                     : k->fw == MESH_FW_DEEPSPEED ? deepspeed(&m, l->zero)
                                                  : torch_fsdp(&m, l->zero);
        double host = 0;
        if (k->host) {
            /* master and moments move to the host, with an fp32 copy of
             * the gradient shard: Megatron-LM's HybridDeviceOptimizer
             * (hybrid_optimizer.py L108-114) copies it there beside the
             * gradient buffer, DeepSpeed moves its fp32 partition */
            o.sharded -= k->fw == MESH_FW_MEGATRON ? 12 : 16;
            host = 16 * psi / d;
        }
        double expect = o.unsharded * psi + o.sharded * psi / d + buffers(&priced, l, stage);
        double got = c->memory.weights + c->memory.grads + c->memory.optimizer;
        if (fabs(got - expect) > 1e-9 * expect || c->memory.framework != k->fw ||
            fabs(c->memory.host - host) > 1e-9 * (host + 1))
            fail_msg("case %d (%s, %s): model states %.0f, the framework's accounting %.0f "
                     "(%s: %.4g + %.4g/d bytes a parameter, %.0f parameters, d %d); host %.0f "
                     "vs %.0f",
                     i, k->spec, k->mesh, got, expect, mesh_framework_name(k->fw), o.unsharded,
                     o.sharded, psi, d, c->memory.host, host);
        mesh_plan_destroy(p);
        n++;
    }
    assert_true(n >= 30);
}

/* DeepSpeed's own estimators never come out above meshplan (the promise:
 * never below the framework's estimate of its model states). */
static void oracle__never_below_deepspeeds_estimators(void **state)
{
    (void)state;
    const char *meshes[] = {"tp=1,pp=1,dp=16,cp=1,zero=2,vpp=1,mb=1,recompute=full,sp=off",
                            "tp=1,pp=1,dp=16,cp=1,zero=3,vpp=1,mb=1,recompute=full,sp=off"};
    const char *models[] = {"llama3-8b", "llama2-13b", "llama3-70b"};
    for (int i = 0; i < 3; i++)
        for (int z = 0; z < 2; z++) {
            char yaml[128];
            snprintf(yaml, sizeof(yaml), "preset: %s\ntrain: {framework: deepspeed}\n", models[i]);
            mesh_model_t m = test_spec(yaml);
            mesh_alloc_t a = test_alloc("H200", 2, 8);
            mesh_plan_t *p = test_plan(&m, &a, meshes[z]);
            const mesh_memory_t *mem = &mesh_plan_best(p)->memory;
            double psi = m.params, d = 16, h = m.hidden;
            double largest = padded_vocab(m.vocab, 1) * h; /* the output layer */
            double est = z == 0 ? 2 * psi + 18 * psi / d : 4 * largest + 18 * psi / d;
            /* the estimator counts the whole model; one GPU holds it all here */
            assert_true(mem->weights + mem->grads + mem->optimizer >= est);
            mesh_plan_destroy(p);
        }
}

/* ---- the accounting table against the exports, both ways ---- */

typedef struct vocab {
    const char *flag[64];
    int n;
} vocab_t;

static void vocab_add(vocab_t *v, const char *flag)
{
    for (int i = 0; i < v->n; i++)
        if (strcmp(v->flag[i], flag) == 0)
            return;
    if (v->n < 64)
        v->flag[v->n++] = strdup(flag);
}

/* Split a cause into its flags ("--a --b v" -> "--a", "--b v") or, for a
 * DeepSpeed member, take it whole. */
static int split_cause(const mesh_term_t *t, const char *s, char out[8][128])
{
    int n = 0;
    if (t->at != MESH_CAUSE_ARGS) {
        snprintf(out[n++], 128, "%s", s);
        return n;
    }
    while (*s && n < 8) {
        const char *next = strstr(s + 1, " --");
        size_t len = next ? (size_t)(next - s) : strlen(s);
        snprintf(out[n++], 128, "%.*s", (int)len, s);
        s = next ? next + 1 : s + len;
    }
    return n;
}

/* Is flag in text as a whole flag (followed by a space, a comma, a brace or
 * the end), not as the prefix of a longer one? */
static int has(const char *text, const char *flag)
{
    size_t n = strlen(flag);
    for (const char *p = strstr(text, flag); p; p = strstr(p + 1, flag))
        if (p[n] == '\0' || p[n] == ' ' || p[n] == ',' || p[n] == '}')
            return 1;
    return 0;
}

typedef struct grid {
    const char *spec, *mesh;
} grid_t;

static const grid_t grid[] = {
    {"preset: llama2-7b", "zero=0"},
    {"preset: llama2-7b", "zero=1"},
    {"preset: llama2-7b", "zero=2"},
    {"preset: llama2-7b", "zero=3"},
    {"preset: llama2-7b\ntrain: {grad_accum_dtype: bf16}", "zero=0"},
    {"preset: llama2-7b\ntrain: {grad_accum_dtype: bf16}", "zero=1"},
    {"preset: llama2-7b\ntrain: {grad_accum_dtype: bf16}", "zero=3"},
    {"preset: llama2-7b\ntrain: {precision: fp16}", "zero=0"},
    {"preset: llama2-7b\ntrain: {precision: fp16}", "zero=1"},
    {"preset: llama2-7b\ntrain: {precision: fp16, grad_accum_dtype: fp32}", "zero=1"},
    {"preset: llama2-7b\ntrain: {precision: fp32}", "zero=1"},
    {"preset: llama2-7b\ntrain: {precision: fp32}", "zero=0"},
    {"preset: llama3-8b\ntrain: {precision: fp8}", "zero=0"},
    {"preset: llama3-8b\ntrain: {precision: fp8}", "zero=1"},
    {"preset: llama3-8b\ntrain: {precision: fp8}", "zero=1,offload=optimizer"},
    {"preset: llama3-8b\ntrain: {precision: fp8, fp8_recipe: blockwise}",
     "zero=1,offload=optimizer"},
    {"preset: llama2-7b\ntrain: {optimizer: sgd}", "zero=1"},
    {"preset: llama2-7b\ntrain: {optimizer_dtype: bf16}", "zero=1,moments=bf16"},
    {"preset: llama2-7b\ntrain: {optimizer_dtype: fp16}", "zero=2,moments=fp16"},
    {"preset: llama2-7b", "zero=1,offload=optimizer"},
    {"preset: llama2-7b", "zero=2,offload=optimizer"},
    {"preset: llama2-7b", "zero=3,offload=optimizer"},
};

typedef void (*grid_fn)(const mesh_model_t *m, const mesh_plan_t *p, const mesh_env_t *e,
                        void *arg);

static void for_grid(grid_fn fn, void *arg)
{
    for (int i = 0; i < N_OF(grid); i++) {
        mesh_model_t m = test_spec(grid[i].spec);
        mesh_alloc_t a = test_alloc("H100-SXM", 2, 8);
        a.host_memory = 4e12;
        mesh_plan_t *p = test_plan(&m, &a, grid[i].mesh);
        mesh_task_t t = {.node = 0,
                         .local = 0,
                         .master_addr = "n0",
                         .master_port = 29500,
                         .export_mode = MESH_EXPORT_MESH,
                         .numa_node = -1};
        mesh_error_t err;
        mesh_env_t *e = mesh_env_create(p, &t, &err);
        if (!e)
            fail_msg("%s", err.msg);
        fn(&m, p, e, arg);
        mesh_env_destroy(e);
        mesh_plan_destroy(p);
    }
}

static const char *env_get(const mesh_env_t *e, const char *name)
{
    for (int i = 0; i < mesh_env_count(e); i++)
        if (strcmp(mesh_env_name(e, i), name) == 0)
            return mesh_env_value(e, i);
    return NULL;
}

static const mesh_framework_t exported[] = {MESH_FW_MEGATRON, MESH_FW_DEEPSPEED};

static const char *export_of(const mesh_env_t *e, mesh_framework_t fw)
{
    return env_get(e, fw == MESH_FW_MEGATRON ? "MESH_MEGATRON_ARGS" : "MESH_DEEPSPEED_CONFIG");
}

/* Every flag any term can cause, and every ZeRO stage's flag. */
static void collect(const mesh_model_t *m, const mesh_plan_t *p, const mesh_env_t *e, void *arg)
{
    vocab_t *v = arg;
    (void)e;
    for (int f = 0; f < 2; f++) {
        mesh_term_t t[MESH_TERMS_MAX];
        const mesh_layout_t *l = &mesh_plan_best(p)->layout;
        for (int stage = 0; stage < l->pp; stage++) {
            int n = mesh_state_terms(m, exported[f], l, stage, t);
            for (int i = 0; i < n; i++) {
                char flags[8][128];
                int k = t[i].cause ? split_cause(&t[i], t[i].cause, flags) : 0;
                for (int j = 0; j < k; j++)
                    vocab_add(&v[f], flags[j]);
            }
        }
        for (int z = 1; z <= 3; z++) {
            char flags[8][128];
            mesh_term_t arg_term = {.at = MESH_CAUSE_ARGS};
            const char *zc = mesh_zero_cause(exported[f], z);
            int k = f == 0 && zc ? split_cause(&arg_term, zc, flags) : 0;
            for (int j = 0; j < k; j++)
                vocab_add(&v[f], flags[j]);
        }
    }
}

/* The bytes a parameter a term's name gives ("fp32 master weights": 4,
 * "16-bit parameters": 2), or 0 where it names no width. */
static int width_named(const char *what)
{
    static const struct {
        const char *prefix;
        int bytes;
    } widths[] = {{"fp32 ", 4}, {"16-bit ", 2}, {"bf16 ", 2}, {"fp16 ", 2}};
    for (size_t i = 0; i < sizeof(widths) / sizeof(*widths); i++)
        if (strncmp(what, widths[i].prefix, strlen(widths[i].prefix)) == 0)
            return widths[i].bytes;
    return 0;
}

static int defaults_checked; /* terms both_ways saw with an undoing flag */

static void both_ways(const mesh_model_t *m, const mesh_plan_t *p, const mesh_env_t *e, void *arg)
{
    vocab_t *v = arg;
    const mesh_layout_t *l = &mesh_plan_best(p)->layout;
    for (int f = 0; f < 2; f++) {
        const char *text = export_of(e, exported[f]);
        assert_non_null(text);
        mesh_term_t t[MESH_TERMS_MAX];
        int n = mesh_state_terms(m, exported[f], l, 0, t);
        /* a term without its flag: each cause is exported, each default's
         * undoing flag is not */
        for (int i = 0; i < n; i++) {
            char flags[8][128];
            int k = t[i].cause ? split_cause(&t[i], t[i].cause, flags) : 0;
            for (int j = 0; j < k; j++)
                if (!has(text, flags[j]))
                    fail_msg("%s: term '%s' is priced but '%s' is not exported: %s",
                             mesh_framework_name(exported[f]), t[i].what, flags[j], text);
            defaults_checked += !t[i].cause && t[i].unless;
            if (!t[i].cause && t[i].unless && strstr(text, t[i].unless))
                fail_msg("%s: term '%s' is the framework's default, but '%s' is exported: %s",
                         mesh_framework_name(exported[f]), t[i].what, t[i].unless, text);
            assert_non_null(t[i].source);
            /* every term is named, by a name of its own (accounting.h),
             * which says the width it counts where it names one */
            assert_true(t[i].what && t[i].what[0]);
            int says = width_named(t[i].what);
            if (says && t[i].per_param != says)
                fail_msg("%s: term '%s' counts %g bytes a parameter",
                         mesh_framework_name(exported[f]), t[i].what, t[i].per_param);
            for (int j = 0; j < i; j++)
                if (t[j].part == t[i].part && strcmp(t[j].what, t[i].what) == 0)
                    fail_msg("%s: two terms named '%s'", mesh_framework_name(exported[f]),
                             t[i].what);
        }
        /* a flag without its term: every memory flag exported is caused by
         * a term of this layout, or is its ZeRO stage's */
        for (int j = 0; j < v[f].n; j++) {
            if (!has(text, v[f].flag[j]))
                continue;
            int caused = 0;
            for (int i = 0; i < n && !caused; i++) {
                char flags[8][128];
                int k = t[i].cause ? split_cause(&t[i], t[i].cause, flags) : 0;
                for (int q = 0; q < k; q++)
                    caused |= strcmp(flags[q], v[f].flag[j]) == 0;
            }
            const char *zc = mesh_zero_cause(exported[f], l->zero);
            caused |= f == 0 && zc && strstr(zc, v[f].flag[j]) != NULL;
            if (!caused)
                fail_msg("%s: '%s' is exported but no priced term causes it (%s): %s",
                         mesh_framework_name(exported[f]), v[f].flag[j],
                         mesh_layout_format(l, (char[MESH_LAYOUT_STR_MAX]){0}, MESH_LAYOUT_STR_MAX),
                         text);
        }
    }
}

/* Megatron-LM's own assertions on the flags it is given: a 16-bit main
 * gradient or moment, or CPU offload, needs the precision-aware optimizer
 * (optimizer_config.py L468-480, arguments.py L1884), which is Adam's
 * (L433-436); FP8 parameters need a sharded optimizer (arguments.py
 * L1095-1097) and, offloaded, the delayed recipe (L1889-1892). */
static void megatron_asserts(const mesh_model_t *m, const mesh_plan_t *p, const mesh_env_t *e,
                             void *arg)
{
    (void)arg;
    const char *args = export_of(e, MESH_FW_MEGATRON);
    int aware = has(args, "--use-precision-aware-optimizer");
    if ((has(args, "--main-grads-dtype bf16") || strstr(args, "--exp-avg-dtype") ||
         has(args, "--optimizer-cpu-offload")) &&
        !aware)
        fail_msg("Megatron-LM would refuse (needs --use-precision-aware-optimizer): %s", args);
    if (aware && has(args, "--optimizer sgd"))
        fail_msg("the precision-aware optimizer is Adam's: %s", args);
    if (has(args, "--fp8-param-gather") && mesh_plan_best(p)->layout.zero < 1)
        fail_msg("--fp8-param-gather without a sharded optimizer: %s", args);
    if (has(args, "--fp8-param-gather") && has(args, "--optimizer-cpu-offload") &&
        m->fp8_recipe != MESH_FP8_DELAYED)
        fail_msg("--fp8-param-gather with offload needs the delayed recipe: %s", args);
}

static void table__exports_pass_megatrons_own_checks(void **state)
{
    (void)state;
    for_grid(megatron_asserts, NULL);
}

static void table__terms_and_exports_agree_both_ways(void **state)
{
    (void)state;
    vocab_t v[2] = {{{0}, 0}, {{0}, 0}};
    for_grid(collect, v);
    assert_true(v[0].n >= 12); /* the Megatron flags the table knows */
    assert_true(v[1].n >= 5);  /* the DeepSpeed members */
    for_grid(both_ways, v);
    /* and the defaults were checked: Megatron-LM's fp32 main gradients and
     * Adam moments are its defaults, each with the flag that undoes it */
    assert_true(defaults_checked > 0);
    for (int f = 0; f < 2; f++)
        for (int i = 0; i < v[f].n; i++)
            free((void *)v[f].flag[i]);
}

/* The check itself can fail: a layout's flags read against another
 * layout's terms (ZeRO-0's terms, ZeRO-1's exports) is caught. */
static void table__a_flag_without_its_term_is_caught(void **state)
{
    (void)state;
    mesh_model_t m = test_spec("preset: llama2-7b\ntrain: {grad_accum_dtype: bf16}");
    mesh_alloc_t a = test_alloc("H100-SXM", 2, 8);
    mesh_plan_t *p = test_plan(&m, &a, "zero=1");
    mesh_task_t task = {.node = 0,
                        .local = 0,
                        .master_addr = "n0",
                        .master_port = 29500,
                        .export_mode = MESH_EXPORT_MESH,
                        .numa_node = -1};
    mesh_error_t err;
    mesh_env_t *e = mesh_env_create(p, &task, &err);
    assert_non_null(e);
    const char *args = export_of(e, MESH_FW_MEGATRON);
    mesh_layout_t z0 = mesh_plan_best(p)->layout;
    z0.zero = 0;
    mesh_term_t t[MESH_TERMS_MAX];
    int n = mesh_state_terms(&m, MESH_FW_MEGATRON, &z0, 0, t), caused = 0;
    for (int i = 0; i < n; i++)
        caused |= t[i].cause && strstr(t[i].cause, "--use-distributed-optimizer") != NULL;
    assert_true(has(args, "--use-distributed-optimizer"));
    assert_false(caused);
    assert_non_null(mesh_zero_cause(MESH_FW_MEGATRON, 1));
    assert_null(mesh_zero_cause(MESH_FW_MEGATRON, 0));
    /* and the 2-byte gradient buffer's flags are exported as the term says */
    assert_true(has(args, "--main-grads-dtype bf16"));
    assert_true(has(args, "--use-precision-aware-optimizer"));
    mesh_env_destroy(e);
    mesh_plan_destroy(p);
}

/* mesh_term_bytes: a term's bytes on one GPU, per_param*psi divided over
 * the d replicas from its ZeRO stage on (ZeRO paper, section 5), plus its
 * fixed buffer; nothing is divided over one replica. */
static void term_bytes__sharded_from_its_stage(void **state)
{
    mesh_term_t t = {.per_param = 4, .shard_from = 2, .fixed = 1000};
    const double psi = 1e9;
    assert_true(mesh_term_bytes(&t, psi, 8, 1) == 4e9 + 1000);
    assert_true(mesh_term_bytes(&t, psi, 8, 2) == 4e9 / 8 + 1000);
    assert_true(mesh_term_bytes(&t, psi, 8, 3) == 4e9 / 8 + 1000);
    assert_true(mesh_term_bytes(&t, psi, 1, 3) == 4e9 + 1000);
    t.shard_from = MESH_UNSHARDED;
    assert_true(mesh_term_bytes(&t, psi, 8, 3) == 4e9 + 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(term_bytes__sharded_from_its_stage),
        cmocka_unit_test(oracle__model_states),
        cmocka_unit_test(oracle__never_below_deepspeeds_estimators),
        cmocka_unit_test(table__terms_and_exports_agree_both_ways),
        cmocka_unit_test(table__a_flag_without_its_term_is_caught),
        cmocka_unit_test(table__exports_pass_megatrons_own_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
