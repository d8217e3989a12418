/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The per-task environment, rendered from one table of names.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "meshplan/accounting.h"
#include "meshplan/env.h"
#include "meshplan/ranks.h"
#include "meshplan/size.h"

/* Which export modes get a variable. */
enum { M_MESH = 1, M_TORCH = 2, M_TORCHRUN = 4, M_ALL = 7 };
/* Per-rank variables make no sense for a torchrun launcher task, nor for a
 * batch script. */
enum {
    PER_RANK = 1,
    KEEP_EXISTING = 2,
    NEEDS_TOPO = 4,
    NEEDS_NUMA = 8,
    BIND_CUDA = 16,
    BIND_ROCR = 32,
    NEEDS_MOE = 64,          /* the expert groups: a MoE model's layout only */
    NEEDS_BUDGET = 128,      /* a spec with train.tokens or train.steps only */
    NEEDS_RESTART = 256,     /* a restart's only (mesh_task_t's restart) */
    NEEDS_CONNECTIONS = 512, /* where Megatron-LM asks a value of it */
    NEEDS_MEGATRON = 1024    /* where Megatron-LM trains what the plan prices */
};

typedef struct ctx {
    const mesh_plan_t *plan;
    const mesh_layout_t *l;
    const mesh_model_t *m;
    const mesh_alloc_t *a;
    const mesh_task_t *task;
    long rank, world;
    mesh_coords_t c;
} ctx_t;

typedef void (*render_fn)(const ctx_t *, mesh_buf_t *);

/* A group is its ranks, comma-separated and ascending.  Linux refuses one
 * variable of more than 128 KiB (MAX_ARG_STRLEN), which a list of tens of
 * thousands of ranks would pass: a larger group, always evenly spaced, is
 * written FIRST:STRIDE:COUNT instead. */
#define GROUP_LIST_MAX 4096

static void r_group(const ctx_t *x, mesh_buf_t *b, mesh_axis_t axis)
{
    int n = mesh_axis_size(x->l, axis);
    if (n > GROUP_LIST_MAX) {
        long first, stride;
        mesh_rank_group_span(x->l, x->rank, axis, &first, &stride);
        mesh_buf_printf(b, "%ld:%ld:%d", first, stride, n);
        return;
    }
    long *g = malloc(sizeof(long) * (size_t)n);
    if (!g) {
        b->failed = 1;
        return;
    }
    mesh_rank_group(x->l, x->rank, axis, g);
    for (int i = 0; i < n; i++)
        mesh_buf_printf(b, "%s%ld", i ? "," : "", g[i]);
    free(g);
}

#define INT_RENDER(fn, expr)                                                                       \
    static void fn(const ctx_t *x, mesh_buf_t *b)                                                  \
    {                                                                                              \
        mesh_buf_printf(b, "%ld", (long)(expr));                                                   \
    }
INT_RENDER(r_tp_size, x->l->tp)
INT_RENDER(r_pp_size, x->l->pp)
INT_RENDER(r_dp_size, x->l->dp)
INT_RENDER(r_cp_size, x->l->cp)
INT_RENDER(r_tp_rank, x->c.tp)
INT_RENDER(r_pp_rank, x->c.pp)
INT_RENDER(r_dp_rank, x->c.dp)
INT_RENDER(r_cp_rank, x->c.cp)
INT_RENDER(r_zero, x->l->zero)
INT_RENDER(r_vpp, x->l->vpp)
INT_RENDER(r_mb, x->l->micro_batch)
INT_RENDER(r_mbs, mesh_plan_best(x->plan)->micro_batches)
INT_RENDER(r_gbs, x->m->global_batch)
INT_RENDER(r_sp, x->l->sequence_parallel == 1)
INT_RENDER(r_rank, x->rank)
INT_RENDER(r_world, x->world)
INT_RENDER(r_local, x->task->local)
INT_RENDER(r_local_world, x->a->gpus_per_node)
INT_RENDER(r_node, x->task->node)
INT_RENDER(r_nodes, x->a->nodes)
INT_RENDER(r_port, x->task->master_port)
INT_RENDER(r_numa, x->task->numa_node)
INT_RENDER(r_ep_size, x->l->ep)
INT_RENDER(r_etp_size, x->l->etp)
INT_RENDER(r_ep_rank, x->c.ep)
INT_RENDER(r_etp_rank, x->c.etp)
#undef INT_RENDER

static void r_order(const ctx_t *x, mesh_buf_t *b)
{
    mesh_buf_puts(b, MESH_ORDER);
}

static void r_tp_group(const ctx_t *x, mesh_buf_t *b)
{
    r_group(x, b, MESH_AXIS_TP);
}

static void r_cp_group(const ctx_t *x, mesh_buf_t *b)
{
    r_group(x, b, MESH_AXIS_CP);
}

static void r_dp_group(const ctx_t *x, mesh_buf_t *b)
{
    r_group(x, b, MESH_AXIS_DP);
}

static void r_pp_group(const ctx_t *x, mesh_buf_t *b)
{
    r_group(x, b, MESH_AXIS_PP);
}

/* the expert layers' groups */
#define GROUP_RENDER(fn, axis)                                                                     \
    static void fn(const ctx_t *x, mesh_buf_t *b)                                                  \
    {                                                                                              \
        r_group(x, b, axis);                                                                       \
    }
GROUP_RENDER(r_ep_group, MESH_AXIS_EP)
GROUP_RENDER(r_etp_group, MESH_AXIS_ETP)
GROUP_RENDER(r_edp_group, MESH_AXIS_EDP)
#undef GROUP_RENDER

static void r_recompute(const ctx_t *x, mesh_buf_t *b)
{
    char rc[48]; /* none, selective, selective:MODULES, full or full:N */
    mesh_buf_puts(b, mesh_layout_recompute(x->l, rc, sizeof(rc)));
}

static void r_pp_layers(const ctx_t *x, mesh_buf_t *b)
{
    for (int i = 0; i < x->l->pp; i++)
        mesh_buf_printf(b, "%s%d", i ? "," : "", mesh_pp_stage_layers(x->m, x->l, i));
}

static void r_mem(const ctx_t *x, mesh_buf_t *b)
{
    mesh_buf_printf(b, "%.0f", mesh_plan_best(x->plan)->memory.total);
}

/* Whole seconds, rounded up: a time limit set from it is never short. */
static void r_estimate(const ctx_t *x, mesh_buf_t *b)
{
    mesh_estimate_t est;
    mesh_size_estimate(x->m, &mesh_plan_best(x->plan)->cost, &est);
    mesh_buf_printf(b, "%ld", mesh_ceil_long(est.seconds));
}

static void r_gpu_mem(const ctx_t *x, mesh_buf_t *b)
{
    mesh_buf_printf(b, "%.0f", x->a->gpu.memory);
}

static void r_plan(const ctx_t *x, mesh_buf_t *b)
{
    char canon[MESH_LAYOUT_STR_MAX];
    mesh_buf_puts(b, mesh_layout_format(x->l, canon, sizeof(canon)));
}

static void r_digest(const ctx_t *x, mesh_buf_t *b)
{
    mesh_buf_puts(b, mesh_plan_digest(x->plan));
}

/* The dimensions changed against the restart's saved layout, or "none". */
static void r_reshard(const ctx_t *x, mesh_buf_t *b)
{
    char changed[MESH_RESHARD_STR_MAX];
    mesh_buf_puts(b, mesh_restart_reshard(x->task->restart, x->l, changed, sizeof(changed)));
}

/* Append one flag (and its value) to a command line, space-separated. */
static void flag(mesh_buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void flag(mesh_buf_t *b, const char *fmt, ...)
{
    va_list ap;
    if (b->len > 0)
        mesh_buf_puts(b, " ");
    va_start(ap, fmt);
    mesh_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

/* Append the causes of the model-state terms written at `at`, each flag
 * once: the exports and the memory model come from the same table
 * (lib/accounting.c), so what is priced is what the framework is told. */
static void causes(const mesh_model_t *m, const mesh_layout_t *l, mesh_framework_t fw,
                   mesh_cause_at_t at, mesh_buf_t *b)
{
    mesh_term_t t[MESH_TERMS_MAX];
    int n = mesh_state_terms(m, fw, l, 0, t);
    for (int i = 0; i < n; i++) {
        if (!t[i].cause || t[i].at != at)
            continue;
        /* a cause is one or more flags ("--a --b v"); skip those written */
        const char *c = t[i].cause;
        while (*c) {
            const char *next = strstr(c + 1, " --");
            size_t len = next ? (size_t)(next - c) : strlen(c);
            char one[128];
            if (len >= sizeof(one)) { /* no cause is near that long */
                b->failed = 1;
                return;
            }
            snprintf(one, sizeof(one), "%.*s", (int)len, c);
            int seen = 0;
            for (const char *p = b->data ? strstr(b->data, one) : NULL; p && !seen;
                 p = strstr(p + 1, one))
                seen = (p == b->data || p[-1] == ' ' || p[-1] == ',' || p[-1] == '{') &&
                       (p[len] == '\0' || p[len] == ' ' || p[len] == ',' || p[len] == '}');
            if (!seen && at == MESH_CAUSE_ARGS)
                flag(b, "%s", one);
            else if (!seen)
                mesh_buf_printf(b, ",%s", one);
            c = next ? next + 1 : c + len;
        }
    }
}

/* ---- Megatron-LM's command line (megatron/training/arguments.py) ----
 * One small function per group of flags, written in the order of the
 * table below; each reads only the model and the layout. */
typedef void (*megatron_group_fn)(const mesh_model_t *, const mesh_layout_t *, mesh_buf_t *);

/* The model, as the spec states it and as the memory model priced it
 * (doc/design.md, "Parameter counts"): its layer style (mesh_style: mlp
 * gelu GPT's, swiglu Llama's, relu2 Nemotron-4's) says the activation,
 * norms, biases and positions.  Only stated facts: what a spec cannot say
 * (the tokenizer, biases beyond Qwen2's) is left to the user. */
static void mg_network(const mesh_model_t *m, const mesh_layout_t *l, mesh_buf_t *b)
{
    if (!m->has_arch)
        return;
    flag(b, "--num-layers %d --hidden-size %d --ffn-hidden-size %d --num-attention-heads %d",
         m->layers, m->hidden, m->ffn, m->heads);
    (void)l;
}

static void mg_attention(const mesh_model_t *m, const mesh_layout_t *l, mesh_buf_t *b)
{
    if (!m->has_arch)
        return;
    if (m->kv_heads < m->heads) /* num_query_groups is ignored without the switch */
        flag(b, "--group-query-attention --num-query-groups %d", m->kv_heads);
    /* kv_channels defaults to hidden // heads (arguments.py L839-841) */
    if (m->head_dim > 0 && (long)m->head_dim * m->heads != m->hidden)
        flag(b, "--kv-channels %d", m->head_dim);
    if (m->qk_norm) /* (MLA says it with its latent norms, mg_experts) */
        flag(b, "--qk-layernorm");
    if (m->qk_l2_norm) /* Llama 4's, without weights: L2Norm (attention.py L1709-1711) */
        flag(b, "--qk-l2-norm");
    if (m->qkv_bias) /* beside --disable-bias-linear: only q, k and v */
        flag(b, "--add-qkv-bias");
    /* a window of w tokens, the query's own among them: Megatron-LM's (w-1,
     * 0) keeps keys i-(w-1) to i (transformer/utils.py L43-47 at d98e8a6;
     * Megatron-Bridge's gpt_oss_bridge.py maps HF's sliding_window so), and
     * every N-th layer whole (window_attn_skip_freq: utils.py L532-546) */
    if (m->window > 0)
        flag(b, "--window-size %d,0", m->window - 1);
    if (m->window > 0 && m->full_attention_every > 0)
        flag(b, "--window-attn-skip-freq %d", m->full_attention_every);
    if (m->attention_sinks) /* the learned softmax offset a head */
        flag(b, "--softmax-type learnable");
    (void)l;
}

static void mg_mlp_norm(const mesh_model_t *m, const mesh_layout_t *l, mesh_buf_t *b)
{
    if (!m->has_arch)
        return;
    /* GeLU is Megatron-LM's default activation; squared ReLU is refused
     * with the bias-GeLU fusion, which no biases turn off (arguments.py
     * L1605-1606, argument_utils.py L314-322 at d98e8a6) */
    /* GPT-OSS's quick GeGLU multiplies by up + 1 (glu_linear_offset:
     * Megatron-Bridge's GPTOSSProvider) */
    static const char *const activation[] = {
        [MESH_MLP_GELU] = "",
        [MESH_MLP_SWIGLU] = "--swiglu ",
        [MESH_MLP_RELU2] = "--squared-relu ",
        [MESH_MLP_QUICK_GEGLU] = "--quick-geglu --glu-linear-offset 1 ",
    };
    const mesh_style_t *s = mesh_style(m);
    flag(b, "%s--normalization %s%s", activation[m->mlp],
         s->norm_vectors == 1 ? "RMSNorm" : "LayerNorm",
         s->zero_centered ? " --apply-layernorm-1p" : "");
    if (!s->linear_bias) /* biases are on by default (add_bias_linear) */
        flag(b, "--disable-bias-linear");
    if (m->norm_eps > 0)
        flag(b, "--norm-epsilon %g", m->norm_eps);
    if (m->activation_clamp > 0)
        flag(b, "--activation-func-clamp-value %g", m->activation_clamp);
    (void)l;
}

/* Positions, the padded vocabulary and the output layer.  The vocabulary
 * is given padded, as meshplan priced it (128 x tp, Megatron-LM's own
 * padding, tokenizer.py L111-112): --vocab-size means the size before EOD
 * and only some tokenizers read it. */
static void mg_embedding(const mesh_model_t *m, const mesh_layout_t *l, mesh_buf_t *b)
{
    if (!m->has_arch)
        return;
    /* required (arguments.py L822-826): the learned table has seq_len rows */
    const mesh_style_t *s = mesh_style(m);
    int yarn =
        m->rope_scaling > 0 && m->rope_type == MESH_ROPE_YARN && !m->mla.kv_lora_rank && s->rotary;
    flag(b, "--position-embedding-type %s --max-position-embeddings %d",
         !s->rotary ? "learned_absolute"
         : yarn     ? "yarn"
                    : "rope",
         m->seq_len);
    /* the rotary base and its scaling: Llama 3.1's, whose other constants
     * Megatron-LM fixes (low 1, high 4, original 8192: rotary_pos_embedding.py
     * _apply_scaling at d98e8a6), or YaRN: under MLA its own rotary type
     * (MLATransformerConfig's rope_type, original context 4096), else the
     * yarn position embedding, whose constants default to the same
     * (argument_utils.py L384-413) but the rounding of its correction range */
    if (m->rope_theta > 0 && s->rotary)
        flag(b, "--rotary-base %d", m->rope_theta);
    if (m->rotary_percent > 0 && s->rotary) /* Nemotron-4 rotates half of each head */
        flag(b, "--rotary-percent %g", m->rotary_percent);
    if (m->rope_scaling > 0 && (m->mla.kv_lora_rank || yarn))
        flag(b, "--rotary-scaling-factor %g", m->rope_scaling);
    else if (m->rope_scaling > 0 && s->rotary)
        flag(b, "--use-rope-scaling --rope-scaling-factor %g", m->rope_scaling);
    if (yarn && m->yarn_truncate == MESH_YARN_EXACT)
        flag(b, "--no-yarn-correction-range-round-to-int");
    /* layer i (from 1) unrotated where N divides it: no_rope_freq N is the
     * pattern [0]*(N-1)+[1] over the layers (transformer_config.py
     * L3138-3151, attention.py L1320-1324) */
    if (m->nope_every > 0 && s->rotary)
        flag(b, "--no-rope-freq %d", m->nope_every);
    if (m->rotary_interleaved && s->rotary) /* the pairs a checkpoint's weights turn */
        flag(b, "--rotary-interleaved");
    flag(b, "--padded-vocab-size %.0f", mesh_model_padded_vocab(m, l->tp));
    if (!m->tied_embeddings)
        flag(b, "--untie-embeddings-and-output-weights");
}

/* Dropout (Megatron-LM's defaults are 0.1, the spec's 0) and whether the
 * attention scores are stored: the activations priced depend on both. */
static void mg_regularization(const mesh_model_t *m, const mesh_layout_t *l, mesh_buf_t *b)
{
    flag(b, "--attention-dropout %g --hidden-dropout %g", m->dropout, m->dropout);
    if (!m->flash_attention) /* auto picks a fused kernel, which stores no scores */
        flag(b, "--attention-backend unfused");
    (void)l;
}

/* The parallel sizes, the batch and the sequence. */
static void mg_parallel(const mesh_model_t *m, const mesh_layout_t *l, mesh_buf_t *b)
{
    flag(b,
         "--tensor-model-parallel-size %d --pipeline-model-parallel-size %d "
         "--context-parallel-size %d --micro-batch-size %d --global-batch-size %ld "
         "--seq-length %d",
         l->tp, l->pp, l->cp, l->micro_batch, m->global_batch, m->seq_len);
    if (l->sequence_parallel == 1)
        flag(b, "--sequence-parallel");
}

/* An explicit layout (mesh_pp_explicit) as Megatron-LM reads it
 * (PipelineParallelLayerLayout.parse_str_to_list, pipeline_parallel_layer_
 * layout.py at d98e8a6): chunks in order, '|' between them, E the
 * embedding, t a layer, m an MTP layer, L the loss.  Written out, without
 * its "t*N" shorthand: '*' would be a glob in the task's unquoted
 * $MESH_MEGATRON_ARGS. */
static void mg_layout_string(const mesh_model_t *m, const mesh_layout_t *l, mesh_buf_t *b)
{
    int chunks = l->pp * l->vpp;
    flag(b, "--pipeline-model-parallel-layout ");
    for (int j = 0; j < chunks; j++) {
        mesh_buf_puts(b, j ? "|" : "E");
        for (int i = mesh_chunk_layers(m, l, j); i > 0; i--)
            mesh_buf_puts(b, "t");
    }
    for (int i = 0; i < m->mtp_layers; i++)
        mesh_buf_puts(b, "m");
    mesh_buf_puts(b, "L");
}

/* How the layers are split over the stages (doc/design.md, "Layouts and
 * their rules"): interleaved chunks, evenly or as an explicit layout, or
 * uneven end stages. */
static void mg_pipeline_split(const mesh_model_t *m, const mesh_layout_t *l, mesh_buf_t *b)
{
    int deficit = m->has_arch ? (m->layers + l->pp - 1) / l->pp * l->pp - m->layers : 0;
    if (mesh_pp_explicit(m, l)) {
        mg_layout_string(m, l, b);
    } else if (l->vpp > 1) {
        flag(b, "--num-layers-per-virtual-pipeline-stage %d",
             mesh_vpp_chunk_layers(m->layers, l->pp, l->vpp));
        if (deficit >= 1)
            flag(b, "--account-for-embedding-in-pipeline-split");
        if (deficit == 2)
            flag(b, "--account-for-loss-in-pipeline-split");
    } else if (deficit > 0)
        flag(b, "--decoder-first-pipeline-num-layers %d --decoder-last-pipeline-num-layers %d",
             mesh_stage_layers(m->layers, l->pp, 0),
             mesh_stage_layers(m->layers, l->pp, l->pp - 1));
}

static void mg_zero(const mesh_model_t *m, const mesh_layout_t *l, mesh_buf_t *b)
{
    const char *zero = mesh_zero_cause(MESH_FW_MEGATRON, l->zero);
    if (zero)
        flag(b, "%s", zero);
    (void)m;
}

static void mg_recompute(const mesh_model_t *m, const mesh_layout_t *l, mesh_buf_t *b)
{
    char mods[48];
    if (l->recompute == MESH_RECOMPUTE_SELECTIVE && l->recompute_modules > 0 &&
        l->recompute_modules != MESH_RC_CORE_ATTN) {
        /* --recompute-modules takes the names, space-separated (nargs +) */
        mesh_recompute_modules_name((unsigned)l->recompute_modules, mods, sizeof(mods));
        for (char *c = mods; *c; c++)
            *c = *c == '+' ? ' ' : *c;
        flag(b, "--recompute-granularity selective --recompute-modules %s", mods);
    } else if (l->recompute == MESH_RECOMPUTE_SELECTIVE)
        flag(b, "--recompute-granularity selective");
    else if (l->recompute == MESH_RECOMPUTE_FULL && l->recompute_layers > 0)
        /* the first N layers of each stage (transformer_config.py L543-551) */
        flag(b, "--recompute-granularity full --recompute-method block --recompute-num-layers %d",
             l->recompute_layers);
    else if (l->recompute == MESH_RECOMPUTE_FULL)
        flag(b, "--recompute-granularity full --recompute-method uniform --recompute-num-layers 1");
    (void)m;
}

/* The causes of the priced model states: precision, gradient and
 * optimizer buffers, offload (lib/accounting.c). */
static void mg_states(const mesh_model_t *m, const mesh_layout_t *l, mesh_buf_t *b)
{
    causes(m, l, MESH_FW_MEGATRON, MESH_CAUSE_ARGS, b);
}

static void mg_fp8(const mesh_model_t *m, const mesh_layout_t *l, mesh_buf_t *b)
{
    if (m->precision == MESH_PREC_FP8) /* the recipe changes no allocation we price */
        flag(b, "--fp8-recipe %s", mesh_fp8_recipe_name(m->fp8_recipe));
    (void)l;
}

/* The router as the model was trained (arch.moe's router keys), as
 * Megatron-LM's TransformerConfig names it at d98e8a6. */
static void mg_router(const mesh_router_t *r, mesh_buf_t *b)
{
    if (r->score == MESH_SCORE_SIGMOID)
        flag(b, "--moe-router-score-function sigmoid");
    if (r->expert_bias)
        flag(b, "--moe-router-enable-expert-bias");
    if (r->groups)
        flag(b, "--moe-router-num-groups %d --moe-router-group-topk %d", r->groups, r->group_top_k);
    if (r->routed_scaling > 0)
        flag(b, "--moe-router-topk-scaling-factor %g", r->routed_scaling);
    if (r->probs_on_input) /* the score scales the expert's input (experts.py L918-921) */
        flag(b, "--moe-apply-probs-on-input");
    /* the busiest expert rank is priced for a balanced router
     * (moe_imbalance), and Megatron-LM balances nothing by default
     * (moe_aux_loss_coeff 0.0): the spec's coefficient, else its suggested
     * start, as the help says */
    if (r->aux_loss > 0)
        flag(b, "--moe-aux-loss-coeff %g", r->aux_loss);
    else
        flag(b, "--moe-aux-loss-coeff 1e-2");
}

/* The flags of a MoE model's experts and layout, MLA and MTP
 * (megatron/training/arguments.py and the MoE and MLA configs of
 * transformer_config.py, at d98e8a6): nothing for a dense model.  The
 * all-to-all dispatcher (or the flex one on DeepEP, where the plan runs
 * it) and grouped GEMM are what the cost model prices
 * (lib/cost.c); the first dense layers, or MoE every N layers (on layers
 * N-1, 2N-1, ..., as transformers' Llama 4 has them; Megatron-LM's int
 * form N would put them on 0, N, ...: gpt_layer_specs.py L647-650), are a
 * --moe-layer-freq pattern (moe_freq_type, arguments.py L327-350).
 * Grouped GEMMs only from Ampere on (arguments.py L1378-1380 asks compute
 * capability 8): before it Megatron-LM runs the experts one after
 * another, which the cost model still prices as grouped. */
static void mg_experts(const mesh_model_t *m, const mesh_layout_t *l, const mesh_gpu_t *gpu,
                       mesh_buf_t *b)
{
    const mesh_moe_t *e = &m->moe;
    if (mesh_is_moe(m) && l->ep > 0) {
        flag(b, "--num-experts %d --moe-router-topk %d --moe-ffn-hidden-size %d", e->experts,
             e->top_k, e->ffn);
        if (e->shared_experts) /* the shared experts' total width */
            flag(b, "--moe-shared-expert-intermediate-size %ld",
                 (long)e->shared_experts * e->shared_ffn);
        if (e->dense_layers)
            flag(b, "--moe-layer-freq ([0]*%d+[1]*%d)", e->dense_layers, mesh_model_moe_layers(m));
        else if (e->every > 1 && m->layers % e->every) /* the int form N puts MoE on i % N */
            flag(b, "--moe-layer-freq ([0]*%d+[1])*%d+[0]*%d", e->every - 1, m->layers / e->every,
                 m->layers % e->every);
        else if (e->every > 1)
            flag(b, "--moe-layer-freq ([0]*%d+[1])*%d", e->every - 1, m->layers / e->every);
        else
            flag(b, "--moe-layer-freq 1");
        flag(b, "--expert-model-parallel-size %d --expert-tensor-parallel-size %d%s%s", l->ep,
             l->etp,
             /* the flex dispatcher's flags are its row's (lib/overlap.c) */
             mesh_overlap_on(m, l, MESH_OVERLAP_DEEPEP) ? ""
                                                        : " --moe-token-dispatcher-type alltoall",
             gpu->has_bf16 ? " --moe-grouped-gemm" : "");
        /* a GeLU or GPT-OSS model's experts keep their biases, which Megatron-LM's
         * grouped experts (TEGroupedMLP) take only without the fused
         * bias-dropout (experts.py L205-207 at d98e8a6) */
        if (mesh_style(m)->linear_bias)
            flag(b, "--no-bias-dropout-fusion");
        if (e->capacity_factor > 0)
            flag(b, "--moe-expert-capacity-factor %g", e->capacity_factor);
        mg_router(&m->router, b);
    }
    const mesh_mla_t *a = &m->mla;
    if (a->kv_lora_rank) {
        /* the latent norms the parameter count and the activations include
         * (DeepSeek's q_a_layernorm, kv_a_layernorm): without --qk-layernorm
         * Megatron-LM builds MLA without them (gpt_layer_specs.py L246-255) */
        flag(b, "--multi-latent-attention --qk-layernorm");
        if (a->q_lora_rank)
            flag(b, "--q-lora-rank %d", a->q_lora_rank);
        flag(b, "--kv-lora-rank %d --qk-head-dim %d --qk-pos-emb-head-dim %d --v-head-dim %d",
             a->kv_lora_rank, a->qk_head_dim, a->qk_rope_head_dim, a->v_head_dim);
        if (a->mscale_all_dim > 0)
            flag(b, "--mscale-all-dim %g", a->mscale_all_dim);
    }
    if (m->mtp_layers)
        flag(b, "--mtp-num-layers %d", m->mtp_layers);
}

/* The overlaps the cost model prices for this layout, from the same table
 * (lib/overlap.c): what is priced as hidden is what Megatron-LM is told to
 * hide. */
static void mg_overlaps(const mesh_model_t *m, const mesh_layout_t *l, mesh_buf_t *b)
{
    for (int i = 0; i < MESH_OVERLAP_COUNT; i++)
        if (mesh_overlap_on(m, l, (mesh_overlap_id_t)i))
            flag(b, "%s", mesh_overlap_row((mesh_overlap_id_t)i)->flags);
}

static const megatron_group_fn megatron_groups[] = {
    mg_network,  mg_attention,      mg_mlp_norm, mg_embedding, mg_regularization,
    mg_parallel, mg_pipeline_split, mg_zero,     mg_recompute, mg_states,
    mg_fp8,
};

/* Megatron-LM at d98e8a6 trains every weight: it has no LoRA (no PEFT or
 * adapter flag in megatron/training/arguments.py; megatron/core keeps only
 * a hook for NeMo's adapter, tensor_parallel/layers.py L977).  Its flags
 * for a LoRA plan would start full training, whose gradients and optimizer
 * the plan priced at a hundredth (lib/accounting.c), so they are withheld
 * rather than exported to run out of memory.  DeepSpeed's config names no
 * adapters either, but Hugging Face PEFT adds them to a DeepSpeed job,
 * which framework: auto prices (PyTorch's fp32 weights only when named). */
const char *mesh_megatron_withheld(const mesh_model_t *m)
{
    if (m->finetune == MESH_FINETUNE_LORA)
        return "Megatron-LM has no LoRA (at d98e8a6): its flags would train every weight; train "
               "the adapters with Hugging Face PEFT under DeepSpeed (MESH_DEEPSPEED_CONFIG), or "
               "set framework: torch to plan them under PyTorch";
    return NULL;
}

/* Transformer Engine, Megatron-LM's default implementation of a layer, runs
 * on Ampere and later (README.rst's hardware at d0067d0): the GPUs with
 * bf16.  Before them the local implementation (the plan prices its
 * attention unfused and TP's communication exposed: mesh_plan_create). */
void mesh_megatron_args(const mesh_model_t *m, const mesh_layout_t *l, const mesh_gpu_t *gpu,
                        mesh_buf_t *b)
{
    if (!gpu->has_bf16)
        flag(b, "--transformer-impl local");
    for (int i = 0; i < MESH_ARRAY_LEN(megatron_groups); i++)
        megatron_groups[i](m, l, b);
    mg_experts(m, l, gpu, b); /* after the table, in its order: the one that asks the GPU */
    mg_overlaps(m, l, b);
}

static void r_megatron(const ctx_t *x, mesh_buf_t *b)
{
    mesh_megatron_args(x->m, x->l, &x->a->gpu, b);
}

/* CUDA_DEVICE_MAX_CONNECTIONS as Megatron-LM's validate_args() asks it
 * (megatron/training/arguments.py L1166-1167 and L1452-1479 at d98e8a6):
 * Megatron-FSDP (zero 2 and 3, mesh_zero_cause) refuses 1, so it gets
 * CUDA's own default, 8, over any 1 the job script set; TP or CP above 1
 * needs 1 before Blackwell, so that TP's communication kernels are queued
 * ahead of the GEMMs they overlap.  A GPU with MXFP8 (fp8_blocks 2) has
 * compute capability 10 or more (lib/gpu.c); any other, an unknown one
 * included, is taken as older, and 1 is allowed on Blackwell too.  0:
 * Megatron-LM asks nothing (or the plan is another framework's, as every
 * LoRA plan is: lib/spec_check.c, mesh_lora_framework), and the job's own
 * value stays. */
int mesh_megatron_max_connections(const mesh_model_t *m, const mesh_layout_t *l,
                                  const mesh_gpu_t *gpu)
{
    if (m->framework != MESH_FW_AUTO && m->framework != MESH_FW_MEGATRON)
        return 0;
    if (l->zero >= 2)
        return 8;
    if ((l->tp > 1 || l->cp > 1) && gpu->fp8_blocks < 2)
        return 1;
    return 0;
}

static void r_max_connections(const ctx_t *x, mesh_buf_t *b)
{
    mesh_buf_printf(b, "%d", mesh_megatron_max_connections(x->m, x->l, &x->a->gpu));
}

/* DeepSpeed's batch triple must satisfy train = micro * accumulation * dp;
 * the memory-relevant members come from the accounting table. */
static void r_deepspeed(const ctx_t *x, mesh_buf_t *b)
{
    const mesh_model_t *m = x->m;
    mesh_buf_printf(b,
                    "{\"train_batch_size\":%ld,\"train_micro_batch_size_per_gpu\":%d,"
                    "\"gradient_accumulation_steps\":%ld,\"zero_optimization\":{%s",
                    m->global_batch, x->l->micro_batch, mesh_plan_best(x->plan)->micro_batches,
                    mesh_zero_cause(MESH_FW_DEEPSPEED, x->l->zero));
    causes(x->m, x->l, MESH_FW_DEEPSPEED, MESH_CAUSE_DS_ZERO, b);
    mesh_buf_puts(b, "}");
    causes(x->m, x->l, MESH_FW_DEEPSPEED, MESH_CAUSE_DS_TOP, b);
    /* DeepSpeed accumulates in the model's dtype by default (engine.py
     * L1492-1495); bf16 is said explicitly when the spec asks for it */
    if (m->grad_accum_dtype != MESH_PREC_FP32 && m->precision != MESH_PREC_FP32)
        mesh_buf_printf(b, ",\"data_types\":{\"grad_accum_dtype\":\"%s\"}",
                        mesh_precision_name(m->grad_accum_dtype));
    mesh_buf_puts(b, "}");
}

static void r_master_addr(const ctx_t *x, mesh_buf_t *b)
{
    mesh_buf_puts(b, x->task->master_addr);
}

static void r_busid(const ctx_t *x, mesh_buf_t *b)
{
    mesh_buf_puts(b, x->task->gpu_busid);
}

static void r_cuda_visible(const ctx_t *x, mesh_buf_t *b)
{
    mesh_buf_puts(b, x->task->cuda_visible);
}

static void r_rocr_visible(const ctx_t *x, mesh_buf_t *b)
{
    mesh_buf_puts(b, x->task->rocr_visible);
}

static const struct var {
    const char *name;
    unsigned modes, flags;
    render_fn render;
} vars[] = {
    {"MESH_TP_SIZE", M_ALL, 0, r_tp_size},
    {"MESH_PP_SIZE", M_ALL, 0, r_pp_size},
    {"MESH_DP_SIZE", M_ALL, 0, r_dp_size},
    {"MESH_CP_SIZE", M_ALL, 0, r_cp_size},
    {"MESH_TP_RANK", M_ALL, PER_RANK, r_tp_rank},
    {"MESH_PP_RANK", M_ALL, PER_RANK, r_pp_rank},
    {"MESH_DP_RANK", M_ALL, PER_RANK, r_dp_rank},
    {"MESH_CP_RANK", M_ALL, PER_RANK, r_cp_rank},
    {"MESH_ORDER", M_ALL, 0, r_order},
    {"MESH_TP_GROUP", M_ALL, PER_RANK, r_tp_group},
    {"MESH_PP_GROUP", M_ALL, PER_RANK, r_pp_group},
    {"MESH_DP_GROUP", M_ALL, PER_RANK, r_dp_group},
    {"MESH_CP_GROUP", M_ALL, PER_RANK, r_cp_group},
    {"MESH_EP_SIZE", M_ALL, NEEDS_MOE, r_ep_size},
    {"MESH_EP_RANK", M_ALL, PER_RANK | NEEDS_MOE, r_ep_rank},
    {"MESH_EP_GROUP", M_ALL, PER_RANK | NEEDS_MOE, r_ep_group},
    {"MESH_ETP_SIZE", M_ALL, NEEDS_MOE, r_etp_size},
    {"MESH_ETP_RANK", M_ALL, PER_RANK | NEEDS_MOE, r_etp_rank},
    {"MESH_ETP_GROUP", M_ALL, PER_RANK | NEEDS_MOE, r_etp_group},
    {"MESH_EDP_GROUP", M_ALL, PER_RANK | NEEDS_MOE, r_edp_group},
    {"MESH_ZERO_STAGE", M_ALL, 0, r_zero},
    {"MESH_VPP_SIZE", M_ALL, 0, r_vpp},
    {"MESH_MICRO_BATCH_SIZE", M_ALL, 0, r_mb},
    {"MESH_NUM_MICRO_BATCHES", M_ALL, 0, r_mbs},
    {MESH_ENV_GLOBAL_BATCH, M_ALL, 0, r_gbs},
    {"MESH_RECOMPUTE", M_ALL, 0, r_recompute},
    {"MESH_SEQUENCE_PARALLEL", M_ALL, 0, r_sp},
    {"MESH_PP_LAYERS", M_ALL, 0, r_pp_layers},
    {"MESH_PREDICTED_MEM_BYTES", M_ALL, 0, r_mem},
    {"MESH_GPU_MEM_BYTES", M_ALL, 0, r_gpu_mem},
    {"MESH_ESTIMATED_SECONDS", M_ALL, NEEDS_BUDGET, r_estimate},
    {MESH_ENV_PLAN, M_ALL, 0, r_plan},
    {"MESH_PLAN_DIGEST", M_ALL, 0, r_digest},
    {"MESH_RESHARD", M_ALL, NEEDS_RESTART, r_reshard},
    {"MESH_MEGATRON_ARGS", M_ALL, NEEDS_MEGATRON, r_megatron},
    {MESH_ENV_MAX_CONNECTIONS, M_ALL, NEEDS_CONNECTIONS, r_max_connections},
    {"MESH_DEEPSPEED_CONFIG", M_ALL, 0, r_deepspeed},
    {"MESH_GPU_BUSID", M_ALL, PER_RANK | NEEDS_TOPO, r_busid},
    {"MESH_NUMA_NODE", M_ALL, PER_RANK | NEEDS_NUMA, r_numa},
    {"CUDA_VISIBLE_DEVICES", M_ALL, PER_RANK | BIND_CUDA, r_cuda_visible},
    {"ROCR_VISIBLE_DEVICES", M_ALL, PER_RANK | BIND_ROCR, r_rocr_visible},
    {"RANK", M_TORCH, PER_RANK | KEEP_EXISTING, r_rank},
    {"WORLD_SIZE", M_TORCH, KEEP_EXISTING, r_world},
    {"LOCAL_RANK", M_TORCH, PER_RANK | KEEP_EXISTING, r_local},
    {"LOCAL_WORLD_SIZE", M_TORCH, KEEP_EXISTING, r_local_world},
    {"NODE_RANK", M_TORCH, KEEP_EXISTING, r_node},
    {"MASTER_ADDR", M_TORCH, KEEP_EXISTING, r_master_addr},
    {"MASTER_PORT", M_TORCH, KEEP_EXISTING, r_port},
    {"PET_NNODES", M_TORCHRUN, KEEP_EXISTING, r_nodes},
    {"PET_NODE_RANK", M_TORCHRUN, KEEP_EXISTING, r_node},
    {"PET_NPROC_PER_NODE", M_TORCHRUN, KEEP_EXISTING, r_local_world},
    {"PET_MASTER_ADDR", M_TORCHRUN, KEEP_EXISTING, r_master_addr},
    {"PET_MASTER_PORT", M_TORCHRUN, KEEP_EXISTING, r_port},
};

#define NVARS MESH_ARRAY_LEN(vars)

struct mesh_env {
    int n, n_unset;
    const char *names[NVARS];
    char *values[NVARS];
    int keep[NVARS];
    const char *unset[NVARS]; /* meshplan's own the task must not keep */
};

mesh_env_t *mesh_env_create(const mesh_plan_t *p, const mesh_task_t *task, mesh_error_t *err)
{
    const mesh_alloc_t *a = mesh_plan_alloc(p);
    ctx_t x = {
        .plan = p, .l = &mesh_plan_best(p)->layout, .m = mesh_plan_model(p), .a = a, .task = task};
    if (task->node < 0 || task->node >= a->nodes)
        return mesh_error_set(err, "node %d is outside the %d nodes of the step", task->node,
                              a->nodes),
               NULL;
    int torchrun = task->export_mode == MESH_EXPORT_TORCHRUN;
    int launcher = torchrun || task->export_mode == MESH_EXPORT_BATCH;
    int tasks = launcher ? 1 : a->gpus_per_node;
    if (task->local < 0 || task->local >= tasks)
        return mesh_error_set(err, "local task %d is outside the %d task%s per node%s", task->local,
                              tasks, tasks == 1 ? "" : "s",
                              torchrun   ? " (torchrun: one launcher per node)"
                              : launcher ? " (batch: the script itself)"
                                         : ""),
               NULL;
    if (!task->master_addr || !*task->master_addr)
        return mesh_error_set(err, "the step's first host (MASTER_ADDR) is unknown"), NULL;
    x.world = mesh_world(a);
    x.rank = (long)task->node * a->gpus_per_node + task->local;
    x.c = mesh_rank_coords(x.l, x.rank);

    unsigned mode = task->export_mode == MESH_EXPORT_TORCH      ? M_TORCH
                    : task->export_mode == MESH_EXPORT_TORCHRUN ? M_TORCHRUN
                                                                : M_MESH;
    int topo = task->gpu_busid != NULL;
    mesh_env_t *e = calloc(1, sizeof(*e));
    if (!e)
        return mesh_error_set(err, "out of memory"), NULL;
    for (int i = 0; i < NVARS; i++) {
        const struct var *v = &vars[i];
        if (!(v->modes & mode) || (launcher && (v->flags & PER_RANK)) ||
            ((v->flags & NEEDS_TOPO) && !topo) ||
            ((v->flags & NEEDS_NUMA) && task->numa_node < 0) ||
            ((v->flags & BIND_CUDA) && !task->cuda_visible) ||
            ((v->flags & BIND_ROCR) && !task->rocr_visible) ||
            ((v->flags & NEEDS_MOE) && x.l->ep <= 0) ||
            ((v->flags & NEEDS_BUDGET) && !x.m->tokens && !x.m->steps) ||
            ((v->flags & NEEDS_RESTART) && !task->restart) ||
            ((v->flags & NEEDS_CONNECTIONS) && !mesh_megatron_max_connections(x.m, x.l, &a->gpu)) ||
            ((v->flags & NEEDS_MEGATRON) && mesh_megatron_withheld(x.m))) {
            /* a value of ours from elsewhere (the batch step's, another
             * plan's) must not stand in for one this task is not given */
            if (strncmp(v->name, "MESH_", 5) == 0)
                e->unset[e->n_unset++] = v->name;
            continue;
        }
        mesh_buf_t b;
        mesh_buf_init(&b);
        v->render(&x, &b);
        char *val = mesh_buf_take(&b);
        if (!val) {
            mesh_env_destroy(e);
            return mesh_error_set(err, "out of memory rendering %s", v->name), NULL;
        }
        e->names[e->n] = v->name;
        e->values[e->n] = val;
        e->keep[e->n] = (v->flags & KEEP_EXISTING) != 0;
        e->n++;
    }
    return e;
}

void mesh_env_destroy(mesh_env_t *e)
{
    if (!e)
        return;
    for (int i = 0; i < e->n; i++)
        free(e->values[i]);
    free(e);
}

int mesh_env_count(const mesh_env_t *e)
{
    return e->n;
}

const char *mesh_env_name(const mesh_env_t *e, int i)
{
    return i >= 0 && i < e->n ? e->names[i] : NULL;
}

const char *mesh_env_value(const mesh_env_t *e, int i)
{
    return i >= 0 && i < e->n ? e->values[i] : NULL;
}

int mesh_env_keep_existing(const mesh_env_t *e, int i)
{
    return i >= 0 && i < e->n ? e->keep[i] : 0;
}

int mesh_env_unset_count(const mesh_env_t *e)
{
    return e->n_unset;
}

const char *mesh_env_unset_name(const mesh_env_t *e, int i)
{
    return i >= 0 && i < e->n_unset ? e->unset[i] : NULL;
}

int mesh_env_task_topology(mesh_task_t *task, const mesh_topo_t *t, int bind,
                           const char *step_visible, char *buf, size_t len, mesh_error_t *err)
{
    int pos;
    const mesh_topo_gpu_t *g = mesh_topo_task_gpu(t, bind, task->local, &pos);
    if (!g)
        return mesh_error_set(err, "local task %d has no GPU: the node has %d", task->local,
                              mesh_topo_gpu_count(t));
    task->gpu_busid = g->busid;
    task->numa_node = g->numa;
    task->cuda_visible = task->rocr_visible = NULL;
    if (!bind)
        return 0;
    /* the pos-th entry of the step's list: Slurm numbers the step's GPUs in
     * the same (PCI) order as the topology */
    if (!step_visible) {
        snprintf(buf, len, "%d", pos);
    } else {
        const char *p = step_visible;
        for (int i = 0; i < pos && p; i++)
            if ((p = strchr(p, ',')))
                p++;
        size_t n = p ? strcspn(p, ",") : 0;
        if (!p || n == 0 || n >= len)
            return mesh_error_set(err, "bind=gpu: GPU %d is not in the step's list '%.40s'", pos,
                                  step_visible);
        memcpy(buf, p, n);
        buf[n] = '\0';
    }
    if (g->vendor_id == 0x1002)
        task->rocr_visible = buf;
    else
        task->cuda_visible = buf;
    return 0;
}

int mesh_env_master_port(unsigned long job_id, unsigned long step_id, int lo, int hi)
{
    if (hi < lo)
        return lo;
    unsigned long span = (unsigned long)(hi - lo + 1);
    /* steps of one job get consecutive ports; jobs are spread by a prime */
    return lo + (int)((job_id * 131UL + step_id) % span);
}
