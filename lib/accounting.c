/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Model states as each framework allocates them under meshplan's exports.
 *
 * Every term below is one allocation the framework makes, with the exported
 * flag or config member that causes it and the file (at the commit named
 * here) where the allocation happens.  Sources, read at:
 *   Megatron-LM        NVIDIA/Megatron-LM@d98e8a64ddf34856e74b24714e3bedb2f5a39553
 *   DeepSpeed          deepspeedai/DeepSpeed@edaa7221267243c7be7fb49c5d5f5c4fb97b4641
 *   Transformer Engine NVIDIA/TransformerEngine@d0067d0da6cb01811b8072a7d304f0e00344ce2b
 * Megatron-LM's docs/user-guide/features/dist_optimizer.md sums them as
 * 18 bytes per parameter for bf16 (6 + 12/d distributed), 20 for fp16
 * (4 + 16/d) and 16 for fp32 (8 + 8/d); DeepSpeed's estimators
 * (stage_1_and_2.py estimate_zero2_model_states_mem_needs, stage3.py
 * estimate_zero3_model_states_mem_needs) as 2 + 18/d for ZeRO-2 and
 * 4 x the largest module + 18/d for ZeRO-3.  The unit tests check these sums.
 */
#include <string.h>

#include "internal.h"
#include "meshplan/accounting.h"
#include "meshplan/shard.h"

#define MEG "megatron "
#define DS  "deepspeed "
#define TE  "transformer_engine "

/* DeepSpeed's defaults (deepspeed/runtime/zero/config.py L113, L215),
 * exported explicitly so that a site's config cannot change what was priced. */
#define DS_REDUCE_BUCKET   500000000.0
#define DS_PREFETCH_BUCKET 50000000.0

typedef struct terms {
    mesh_term_t *t;
    int n;
    const mesh_model_t *m;
} terms_t;

static mesh_term_t *add(terms_t *ts, const char *what, mesh_part_t part, double per_param,
                        int shard_from, const char *cause, const char *unless, const char *source)
{
    if (ts->n >= MESH_TERMS_MAX)
        return NULL; /* cannot happen: no framework has that many */
    mesh_term_t *t = &ts->t[ts->n++];
    memset(t, 0, sizeof(*t));
    t->what = what;
    t->part = part;
    /* LoRA: the frozen base weights have no gradients and no optimizer
     * states, only the adapters do */
    t->per_param = per_param * (ts->m->finetune == MESH_FINETUNE_LORA && part != MESH_PART_WEIGHTS
                                    ? MESH_LORA_ADAPTER_FRACTION
                                    : 1);
    t->shard_from = shard_from;
    t->cause = cause;
    t->unless = unless;
    t->source = source;
    return t;
}

static mesh_term_t *add_buffer(terms_t *ts, const char *what, mesh_part_t part, double bytes,
                               mesh_cause_at_t at, const char *cause, const char *source)
{
    mesh_term_t *t = add(ts, what, part, 0, MESH_UNSHARDED, cause, NULL, source);
    if (t) {
        t->fixed = bytes;
        t->at = at;
    }
    return t;
}

/* The largest unit ZeRO-3 gathers at once on this stage, in parameters per
 * GPU: a transformer layer (Megatron-FSDP and FSDP2 wrap each layer), or
 * the embedding or output layer where the stage holds one. */
static double largest_unit(const mesh_model_t *m, const mesh_layout_t *l, int stage, int leaf)
{
    if (!m->has_arch)
        return 0;
    double h = m->hidden, emb = mesh_model_padded_vocab(m, l->tp) * h / l->tp;
    /* DeepSpeed gathers module by module (parameters(recurse=False)): the
     * largest leaf of a layer is its widest linear; FSDP units are layers */
    double f = m->ffn > m->hidden ? m->ffn : m->hidden;
    double unit = leaf ? h * f / l->tp : mesh_layer_params_per_gpu(m, l->tp);
    if (mesh_is_moe(m)) {
        /* a MoE layer with the rank's experts, or its grouped experts'
         * weight (one module holds all the rank's experts) */
        double moe = leaf ? h * m->moe.ffn / (l->etp > 0 ? l->etp : 1) *
                                (m->moe.experts / (l->ep > 0 ? l->ep : 1))
                          : mesh_moe_layer_params_per_gpu(m, l);
        unit = moe > unit ? moe : unit;
    }
    int ends = stage == 0 || stage == l->pp - 1;
    return ends && emb > unit ? emb : unit;
}

static int mixed(const mesh_model_t *m)
{
    return m->precision != MESH_PREC_FP32;
}

/* The training-precision flag and the TE FP8 weight copies, shared by
 * Megatron-LM and DeepSpeed (TE runs inside the model either way). */
static const char *fp8_copy_what = "FP8 weight copy and transpose (Transformer Engine cache)";
static const char *fp8_copy_src =
    TE "transformer_engine/pytorch/module/linear.py L479-489, L2068-2071 (weight workspace "
       "cached across micro-batches); csrc/quantizer.cpp L375 (transpose on Hopper)";

/* Delayed scaling keeps, for each of a layer's four GEMMs, an amax history
 * and a scale and its inverse for its input, weight and gradient (fp32):
 * Megatron-LM's history is 1 long (transformer_config.py L621 at d98e8a6),
 * Transformer Engine's own default 1024 (common/recipe/__init__.py L255 at
 * d0067d0).  Small, and priced all the same. */
static void amax_histories(terms_t *ts, const mesh_layout_t *l, double history, mesh_cause_at_t at)
{
    const mesh_model_t *m = ts->m;
    if (m->precision != MESH_PREC_FP8 || m->fp8_recipe != MESH_FP8_DELAYED || !m->has_arch)
        return;
    double layers = (m->layers + l->pp - 1) / l->pp;
    add_buffer(ts, "FP8 amax histories and scales", MESH_PART_WEIGHTS,
               layers * 4 * 3 * (history + 2) * 4, at, NULL,
               TE "transformer_engine/common/recipe/__init__.py L253-256 (DelayedScaling)");
}

/* The gradient buffer Megatron-LM allocates under meshplan's exports, which
 * is also what its data-parallel sync reduces: param_and_grad_buffer.py
 * L924, grad_dtype = fp32 if grad_reduce_in_fp32 else the parameter's. */
typedef struct grads {
    const char *what, *cause, *unless;
    double bytes;
    int step_copy; /* 16-bit gradients the optimizer copies to fp32 for the step */
} grads_t;

static grads_t megatron_grads(const mesh_model_t *m, const mesh_layout_t *l)
{
    int fp16 = m->precision == MESH_PREC_FP16, fsdp = l->zero >= 2;
    if (!mixed(m))
        return (grads_t){"fp32 gradients", NULL, NULL, 4, 0};
    /* Megatron-FSDP's main gradients take the parameters' dtype unless
     * told (megatron_fsdp/param_and_grad_buffer.py L2313-2322; arguments.py
     * L3691 default auto): fp32 accumulation is asked for there */
    if (m->grad_accum_dtype == MESH_PREC_FP32 && fsdp)
        return (grads_t){"fp32 main gradients",
                         fp16 ? "--accumulate-allreduce-grads-in-fp32 "
                                "--megatron-fsdp-main-grads-dtype fp32"
                              : "--megatron-fsdp-main-grads-dtype fp32",
                         NULL, 4, 0};
    if (m->grad_accum_dtype == MESH_PREC_FP32)
        return fp16
                   ? (grads_t){"fp32 gradients", "--accumulate-allreduce-grads-in-fp32", NULL, 4, 0}
                   /* arguments.py L1214-1217 */
                   : (grads_t){"fp32 main gradients", NULL, "--main-grads-dtype bf16", 4, 0};
    /* fp16 gradients are copied to fp32 for the step (optimizer.py
     * L1092-1100; distrib_optimizer.py L2790-2792 for the shard) */
    if (fp16)
        return (grads_t){"fp16 gradients", "--fp16", "--accumulate-allreduce-grads-in-fp32", 2, 1};
    /* 2-byte main gradients need the precision-aware optimizer, which needs
     * the distributed one (optimizer/__init__.py L1057-1060); without it
     * --grad-reduce-in-bf16 keeps the buffer in bf16 (arguments.py L1213)
     * and the optimizer steps on an fp32 copy (optimizer.py L1092-1100) */
    if (l->zero < 1)
        return (grads_t){"bf16 gradients", "--grad-reduce-in-bf16", NULL, 2, 1};
    return (grads_t){"bf16 main gradients",
                     fsdp ? "--megatron-fsdp-main-grads-dtype bf16"
                          : "--use-precision-aware-optimizer --main-grads-dtype bf16",
                     NULL, 2, 0};
}

/* The bytes a gradient takes in each framework's gradient buffer, which is
 * what its data-parallel sync reduces: Megatron-LM's as above, DeepSpeed
 * the model's 16-bit dtype (it accumulates in the model's dtype unless
 * data_types says otherwise, engine.py L1492-1495, and meshplan never
 * exports fp32 there), PyTorch fp32 (DDP's fp32 parameters, FSDP2's
 * reduce_dtype). */
static double grad_bytes(mesh_framework_t fw, const mesh_model_t *m, const mesh_layout_t *l)
{
    if (fw == MESH_FW_DEEPSPEED)
        return mixed(m) ? 2 : 4;
    if (fw == MESH_FW_TORCH)
        return 4;
    return megatron_grads(m, l).bytes;
}

/* Whether Megatron-LM keeps the GEMM weights in FP8 (data and transpose)
 * with no bf16 copy under meshplan's exports: --fp8-param-gather, which
 * needs the distributed optimizer (arguments.py L1095-1097) and, with
 * optimizer offload, the delayed recipe (L1889); not under MXFP8. */
static int megatron_fp8_params(const mesh_model_t *m, const mesh_layout_t *l)
{
    return m->precision == MESH_PREC_FP8 && l->zero >= 1 && m->fp8_recipe != MESH_FP8_MXFP8 &&
           (!l->offload || m->fp8_recipe == MESH_FP8_DELAYED);
}

/* The bytes a weight moves in each framework's data-parallel parameter
 * all-gather, and the step writes: its parameter buffer's dtype.
 * Megatron-LM gathers FP8 data under --fp8-param-gather (arguments.py
 * L1093-1094: "perform the param all-gather in fp8"; the transpose is made
 * after it); the others the 16-bit training dtype (DeepSpeed's
 * params_16bit, FSDP2's param_dtype), or fp32. */
static double param_bytes(mesh_framework_t fw, const mesh_model_t *m, const mesh_layout_t *l)
{
    if (!mixed(m))
        return 4;
    return fw == MESH_FW_MEGATRON && megatron_fp8_params(m, l) ? 1 : 2;
}

static void megatron(terms_t *ts, const mesh_layout_t *l, int stage)
{
    const mesh_model_t *m = ts->m;
    int fp8 = m->precision == MESH_PREC_FP8;
    int fp16 = m->precision == MESH_PREC_FP16;
    const char *prec = fp16 ? "--fp16" : "--bf16"; /* FP8 runs on bf16 parameters */
    int fp8_params = megatron_fp8_params(m, l);

    if (!mixed(m))
        add(ts, "fp32 parameters", MESH_PART_WEIGHTS, 4, 3, NULL, "--bf16",
            MEG "megatron/core/distributed/param_and_grad_buffer.py L921-924");
    else if (fp8_params)
        add(ts, "FP8 parameters and their transposes", MESH_PART_WEIGHTS, 2, 3,
            "--fp8-format hybrid --fp8-param-gather", NULL,
            MEG "megatron/core/transformer/transformer_config.py L602-607 (fp8_param); " TE
                "pytorch/module/base.py L1838-1865 (rowwise and columnwise)");
    else
        add(ts, fp16 ? "fp16 parameters" : "bf16 parameters", MESH_PART_WEIGHTS, 2, 3, prec, NULL,
            MEG "megatron/training/arguments.py L1205-1217 (params_dtype)");
    if (fp8 && !fp8_params)
        add(ts, fp8_copy_what, MESH_PART_WEIGHTS, 2, MESH_UNSHARDED, "--fp8-format hybrid", NULL,
            fp8_copy_src);
    amax_histories(ts, l, 1, MESH_CAUSE_ARGS);

    const grads_t gr = megatron_grads(m, l);
    add(ts, gr.what, MESH_PART_GRADS, gr.bytes, 2, gr.cause, gr.unless,
        MEG "megatron/core/distributed/param_and_grad_buffer.py L924, L1180-1192");
    if (gr.step_copy)
        add(ts, "fp32 copy of the gradients for the step", MESH_PART_OPTIMIZER, 4, 1, gr.cause,
            NULL,
            l->zero >= 1 ? MEG "megatron/core/optimizer/distrib_optimizer.py L2790-2792"
                         : MEG "megatron/core/optimizer/optimizer.py L1092-1100");

    mesh_term_t *t;
    if (mixed(m)) {
        t = add(ts, "fp32 master weights", MESH_PART_OPTIMIZER, 4, 1, prec, NULL,
                MEG "megatron/core/optimizer/distrib_optimizer.py L445; optimizer.py L1012");
        if (t)
            t->host = l->offload;
    }
    if (m->optimizer == MESH_OPT_SGD) {
        add(ts, "SGD momentum", MESH_PART_OPTIMIZER, 4, 1, "--optimizer sgd", NULL,
            MEG "megatron/core/optimizer/__init__.py (torch.optim.SGD)");
    } else if (l->moments == MESH_PREC_FP32) {
        t = add(ts, "Adam moments (fp32)", MESH_PART_OPTIMIZER, 8, 1, NULL, "--exp-avg-dtype",
                MEG "megatron/training/arguments.py L3675-3680 (exp-avg dtypes default fp32)");
        if (t)
            t->host = l->offload;
    } else {
        t = add(ts, "Adam moments (16-bit)", MESH_PART_OPTIMIZER, 4, 1,
                l->moments == MESH_PREC_BF16 ? "--use-precision-aware-optimizer --exp-avg-dtype "
                                               "bf16 --exp-avg-sq-dtype bf16"
                                             : "--use-precision-aware-optimizer --exp-avg-dtype "
                                               "fp16 --exp-avg-sq-dtype fp16",
                NULL, MEG "megatron/core/optimizer/optimizer_config.py L468-480");
        if (t)
            t->host = l->offload;
    }
    if (l->offload) { /* arguments.py L1884: offload needs the precision-aware optimizer */
        /* HybridDeviceOptimizer keeps a pinned fp32 copy of the shard's
         * gradients on the host for its CPU AdamW (hybrid_optimizer.py
         * L108-114; optimizer/__init__.py L517-544) */
        t = add(ts, "fp32 gradients copied to the host", MESH_PART_OPTIMIZER, 4, 1,
                "--optimizer-cpu-offload --optimizer-offload-fraction 1.0 "
                "--use-precision-aware-optimizer",
                NULL, MEG "megatron/core/optimizer/cpu_offloading/hybrid_optimizer.py L108-114");
        if (t)
            t->host = 1;
    }

    /* Megatron-FSDP: ZeRO-2 keeps one layer's unsharded gradients before
     * their reduce-scatter; ZeRO-3 also gathers the current and the
     * prefetched layer's weights (docs/user-guide/features/megatron_fsdp.md);
     * the other stages hold no unit, and need not count one */
    double unit = l->zero >= 2 ? largest_unit(m, l, stage, 0) : 0;
    double w = mixed(m) ? 2 : 4; /* FP8 parameters: data and transpose, 2 bytes too */
    if (l->zero >= 2 && unit > 0)
        add_buffer(ts, "one layer's unsharded gradients (Megatron-FSDP)", MESH_PART_GRADS,
                   gr.bytes * unit, MESH_CAUSE_ARGS, "--use-megatron-fsdp",
                   MEG "docs/user-guide/features/megatron_fsdp.md");
    if (l->zero == 3 && unit > 0)
        add_buffer(ts, "gathered layer and prefetched layer (Megatron-FSDP)", MESH_PART_WEIGHTS,
                   2 * w * unit, MESH_CAUSE_ARGS,
                   "--data-parallel-sharding-strategy optim_grads_params",
                   MEG "docs/user-guide/features/megatron_fsdp.md");
}

static void deepspeed(terms_t *ts, const mesh_layout_t *l, int stage)
{
    const mesh_model_t *m = ts->m;
    int fp16 = m->precision == MESH_PREC_FP16;
    const char *prec = !mixed(m) ? NULL
                       : fp16    ? "\"fp16\":{\"enabled\":true}"
                                 : "\"bf16\":{\"enabled\":true}";
    mesh_term_t *t;
    int z = l->zero; /* as exported, even over one replica: its buffers come all the same */

    t = add(ts, !mixed(m) ? "fp32 parameters" : "16-bit parameters", MESH_PART_WEIGHTS,
            mixed(m) ? 2 : 4, 3, prec, NULL,
            DS "deepspeed/runtime/zero/stage_1_and_2.py L3093-3096 (params_16bit)");
    if (t)
        t->at = MESH_CAUSE_DS_TOP;
    if (m->precision == MESH_PREC_FP8)
        add(ts, fp8_copy_what, MESH_PART_WEIGHTS, 2, MESH_UNSHARDED, NULL, NULL, fp8_copy_src);
    amax_histories(ts, l, 1024, MESH_CAUSE_DS_TOP);
    /* fp32 accumulation, never exported (grad_bytes), ZeRO-0 refuses
     * (engine.py L2021) and it switches ZeRO-1 to BF16_Optimizer's full
     * fp32 buffer (engine.py L1994-1996) */
    t = add(ts, mixed(m) ? "16-bit gradients" : "fp32 gradients", MESH_PART_GRADS,
            grad_bytes(MESH_FW_DEEPSPEED, m, l), 2, prec, NULL,
            DS "deepspeed/runtime/zero/stage_1_and_2.py L946-953, L1742-1754 (ZeRO-1 keeps "
               "them whole)");
    if (t)
        t->at = MESH_CAUSE_DS_TOP;
    if (mixed(m)) {
        /* the gradient partition converted to fp32 for the step
         * (stage_1_and_2.py L2361; fused_optimizer.py L286-294 at ZeRO-0) */
        t = add(ts, "fp32 gradient partition for the step", MESH_PART_OPTIMIZER, 4, 1, NULL, NULL,
                DS "deepspeed/runtime/zero/stage_1_and_2.py L2361-2367, L840-844 (on the host "
                   "when offloaded)");
        if (t)
            t->host = l->offload;
        t = add(ts, "fp32 master weights", MESH_PART_OPTIMIZER, 4, 1, NULL, NULL,
                DS "deepspeed/runtime/zero/stage_1_and_2.py L492-497");
        if (t)
            t->host = l->offload;
    }
    t = add(ts, m->optimizer == MESH_OPT_SGD ? "SGD momentum" : "Adam moments (fp32)",
            MESH_PART_OPTIMIZER, m->optimizer == MESH_OPT_SGD ? 4 : 8, 1, NULL, NULL,
            DS "deepspeed/runtime/zero/stage_1_and_2.py L3093-3096 (8_optimizer_states_32bit)");
    if (t)
        t->host = l->offload;
    if (l->offload)
        add_buffer(ts, "optimizer offload (host)", MESH_PART_OPTIMIZER, 0, MESH_CAUSE_DS_ZERO,
                   "\"offload_optimizer\":{\"device\":\"cpu\",\"pin_memory\":true}",
                   DS "deepspeed/runtime/zero/offload_config.py L55-106");

    double w16 = mixed(m) ? 2 : 4;
    if (z >= 1) {
        /* the reduce bucket: one (ZeRO-1/2, overlap_comm off) or two
         * (ZeRO-3, overlap_comm on) buffers of reduce_bucket_size elements
         * (stage_1_and_2.py L2497-2514; config.py L383-385) */
        add_buffer(ts, z == 3 ? "reduce buckets (two, overlap_comm)" : "reduce bucket",
                   MESH_PART_GRADS, (z == 3 ? 2 : 1) * w16 * DS_REDUCE_BUCKET, MESH_CAUSE_DS_ZERO,
                   "\"reduce_bucket_size\":500000000",
                   DS "deepspeed/runtime/zero/stage_1_and_2.py L2497-2514; config.py L113");
    }
    if (z == 3) {
        /* the largest module's gathered weights and its gradients
         * (stage3.py L3755: 4 x largest_layer_params), plus the prefetch */
        double unit = largest_unit(m, l, stage, 1);
        if (unit > 0)
            add_buffer(ts, "largest module gathered, with its gradients", MESH_PART_WEIGHTS,
                       2 * w16 * unit, MESH_CAUSE_DS_ZERO, NULL,
                       DS "deepspeed/runtime/zero/stage3.py L3755, L3783-3793");
        add_buffer(ts, "prefetch bucket", MESH_PART_WEIGHTS, w16 * DS_PREFETCH_BUCKET,
                   MESH_CAUSE_DS_ZERO, "\"stage3_prefetch_bucket_size\":50000000",
                   DS "deepspeed/runtime/zero/config.py L215");
    }
}

/* PyTorch: DDP under autocast (ZeRO-0), with ZeroRedundancyOptimizer
 * (ZeRO-1), FSDP2 fully_shard with MixedPrecisionPolicy(param_dtype=bf16,
 * reduce_dtype=fp32) (ZeRO-2: reshard_after_forward=False; ZeRO-3: True).
 * The training program applies them from MESH_ZERO_STAGE, so their cause
 * is the launcher's (docs: pytorch.org/docs/2.9 distributed.fsdp.fully_shard). */
static void torch(terms_t *ts, const mesh_layout_t *l, int stage)
{
    const mesh_model_t *m = ts->m;
    const char *src = "torch torch/distributed/fsdp/_fully_shard (FSDP2), torch/amp (autocast)";
    int z = l->dp * l->cp > 1 ? l->zero : 0;
    mesh_term_t *t[5];
    /* fp32 parameters are the master copy: sharded by FSDP2 (ZeRO-2/3) */
    t[0] = add(ts, "fp32 parameters", MESH_PART_WEIGHTS, 4, 2, NULL, NULL, src);
    t[1] = add(ts, "fp32 gradients", MESH_PART_GRADS, grad_bytes(MESH_FW_TORCH, m, l), 2, NULL,
               NULL, src);
    t[2] = add(ts, m->optimizer == MESH_OPT_SGD ? "SGD momentum" : "Adam moments (fp32)",
               MESH_PART_OPTIMIZER, m->optimizer == MESH_OPT_SGD ? 4 : 8, 1, NULL, NULL, src);
    for (int i = 0; i < 3; i++)
        if (t[i])
            t[i]->at = MESH_CAUSE_LAUNCHER;
    if (mixed(m) && z <= 2) /* autocast's cached bf16 casts, or FSDP2's unsharded bf16 */
        add(ts, "16-bit copies of the weights", MESH_PART_WEIGHTS, 2, MESH_UNSHARDED, NULL, NULL,
            src);
    else if (z == 2) /* fp32: FSDP2 keeps the unsharded fp32 parameters to the backward */
        add(ts, "unsharded fp32 parameters", MESH_PART_WEIGHTS, 4, MESH_UNSHARDED, NULL, NULL, src);
    double unit = z == 3 ? largest_unit(m, l, stage, 0) : 0;
    if (z == 3 && unit > 0) /* current and prefetched unit, one unit's fp32 gradients */
        add_buffer(ts, "gathered unit and prefetched unit (FSDP2)", MESH_PART_WEIGHTS,
                   (2 * (mixed(m) ? 2 : 4) + 4) * unit, MESH_CAUSE_LAUNCHER, NULL, src);
}

int mesh_state_terms(const mesh_model_t *m, mesh_framework_t fw, const mesh_layout_t *l, int stage,
                     mesh_term_t *out)
{
    terms_t ts = {.t = out, .n = 0, .m = m};
    switch (fw) {
    case MESH_FW_DEEPSPEED: deepspeed(&ts, l, stage); break;
    case MESH_FW_TORCH: torch(&ts, l, stage); break;
    default: megatron(&ts, l, stage); break;
    }
    return ts.n;
}

double mesh_term_bytes(const mesh_term_t *t, double psi, int d, int zero)
{
    double b = t->per_param * psi;
    if (d > 1 && zero >= t->shard_from)
        b /= d;
    return b + t->fixed;
}

/* The bytes per parameter framework fw holds of each part of the model
 * states (weights, gradients, optimizer) over one replica at ZeRO stage
 * `zero` with Adam moments in `moments`: nothing sharded, the terms'
 * per-parameter bytes, buffers aside. */
static void one_replica_parts(const mesh_model_t *m, mesh_framework_t fw, int zero,
                              mesh_precision_t moments, double part[3])
{
    mesh_layout_t l = {.tp = 1,
                       .pp = 1,
                       .dp = 1,
                       .cp = 1,
                       .zero = zero,
                       .vpp = 1,
                       .micro_batch = 1,
                       .moments = moments};
    mesh_term_t t[MESH_TERMS_MAX];
    int n = mesh_state_terms(m, fw, &l, 0, t);
    part[0] = part[1] = part[2] = 0;
    for (int i = 0; i < n; i++)
        part[t[i].part] += t[i].per_param;
}

void mesh_state_bytes(const mesh_model_t *m, double *w, double *g, double *k)
{
    /* the largest of the frameworks the model is priced under, unsharded */
    mesh_framework_t fws[3];
    int nf = mesh_frameworks_priced(m->framework, fws);
    *w = *g = *k = 0;
    for (int f = 0; f < nf; f++) {
        /* zero 1 over one replica shards nothing, and lets Megatron-LM keep
         * 2-byte main gradients where the spec asks for them */
        double part[3];
        one_replica_parts(m, fws[f], 1, m->optimizer_dtype, part);
        if (part[0] + part[1] + part[2] > *w + *g + *k) {
            *w = part[MESH_PART_WEIGHTS];
            *g = part[MESH_PART_GRADS];
            *k = part[MESH_PART_OPTIMIZER];
        }
    }
}

/* The ZeRO paper's three states as terms, so that the sharding rule is
 * mesh_term_bytes' alone: stage 1 shards the optimizer, 2 the gradients
 * too, 3 the weights too. */
double mesh_model_states(double psi, int d, int zero, double w, double g, double k)
{
    const mesh_term_t t[3] = {{.per_param = w, .shard_from = 3},
                              {.per_param = g, .shard_from = 2},
                              {.per_param = k, .shard_from = 1}};
    int z = zero >= 0 && zero <= 2 ? zero : 3;
    return mesh_term_bytes(&t[0], psi, d, z) + mesh_term_bytes(&t[1], psi, d, z) +
           mesh_term_bytes(&t[2], psi, d, z);
}

mesh_step_bytes_t mesh_step_bytes(const mesh_model_t *m, const mesh_layout_t *l)
{
    mesh_framework_t fws[3];
    int nf = mesh_frameworks_priced(m->framework, fws);
    mesh_step_bytes_t most = {0, 0, 0};
    for (int f = 0; f < nf; f++) {
        mesh_term_t t[MESH_TERMS_MAX];
        int n = mesh_state_terms(m, fws[f], l, 0, t);
        double states = 0, w = param_bytes(fws[f], m, l), g = grad_bytes(fws[f], m, l);
        for (int i = 0; i < n; i++)
            if (t[i].part == MESH_PART_OPTIMIZER && !t[i].host)
                states += t[i].per_param;
        /* PyTorch's fp32 parameters are its master weights (torch() above) */
        if (fws[f] == MESH_FW_TORCH && mixed(m))
            states += 4 * (m->finetune == MESH_FINETUNE_LORA ? MESH_LORA_ADAPTER_FRACTION : 1);
        most.w = w > most.w ? w : most.w;
        most.g = g > most.g ? g : most.g;
        most.k = states > most.k ? states : most.k;
    }
    if (m->finetune == MESH_FINETUNE_LORA) /* only the adapters' gradients (k is theirs already) */
        most.g *= MESH_LORA_ADAPTER_FRACTION;
    return most;
}

/* The bytes per parameter framework fw holds of model states over one
 * replica (one_replica_parts, summed). */
static double one_replica_states(const mesh_model_t *m, mesh_framework_t fw, int zero,
                                 mesh_precision_t moments)
{
    double part[3];
    one_replica_parts(m, fw, zero, moments, part);
    return part[0] + part[1] + part[2];
}

int mesh_sole_replica_zero_saves(const mesh_model_t *m)
{
    mesh_framework_t fws[3];
    int nf = mesh_frameworks_priced(m->framework, fws);
    for (int f = 0; f < nf; f++)
        if (one_replica_states(m, fws[f], 1, m->optimizer_dtype) <
            one_replica_states(m, fws[f], 0, MESH_PREC_FP32))
            return 1;
    return 0;
}

int mesh_frameworks_priced(mesh_framework_t fw, mesh_framework_t out[3])
{
    if (fw != MESH_FW_AUTO) {
        out[0] = fw;
        return 1;
    }
    out[0] = MESH_FW_MEGATRON;
    out[1] = MESH_FW_DEEPSPEED;
    return 2;
}

/* Megatron-FSDP saves and loads only its own checkpoint format, and
 * validate_args() refuses it with any other (megatron/training/
 * arguments.py L1169-1170 at d98e8a6): the format goes with the switch. */
const char *mesh_zero_cause(mesh_framework_t fw, int zero)
{
    static const char *const megatron_z[] = {
        NULL, "--use-distributed-optimizer",
        "--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads --ckpt-format "
        "fsdp_dtensor",
        "--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads_params --ckpt-format "
        "fsdp_dtensor"};
    static const char *const ds_z[] = {"\"stage\":0", "\"stage\":1", "\"stage\":2", "\"stage\":3"};
    if (zero < 0 || zero > 3)
        return NULL;
    if (fw == MESH_FW_DEEPSPEED)
        return ds_z[zero];
    if (fw == MESH_FW_TORCH)
        return NULL;
    return megatron_z[zero];
}
