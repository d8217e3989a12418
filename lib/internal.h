/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libmeshplan internals: shared by the library's sources only, never installed.
 */
#ifndef MESHPLAN_INTERNAL_H
#define MESHPLAN_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A growable string.  Appends after an allocation failure are ignored and
 * mesh_buf_take then returns NULL, so callers check once at the end. */
typedef struct mesh_buf {
    char *data;
    size_t len, cap;
    int failed;
} mesh_buf_t;

void mesh_buf_init(mesh_buf_t *b);
void mesh_buf_printf(mesh_buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void mesh_buf_vprintf(mesh_buf_t *b, const char *fmt, va_list ap);
void mesh_buf_puts(mesh_buf_t *b, const char *s);
/* Append s as a JSON string literal, quotes included. */
void mesh_buf_json_string(mesh_buf_t *b, const char *s);
/* Hand over the string (caller frees); NULL if an append failed.  Both
 * leave b empty, as mesh_buf_init does: it may be freed again, or used. */
char *mesh_buf_take(mesh_buf_t *b);
void mesh_buf_free(mesh_buf_t *b);

/* The array `items` (room for *cap items of `size` bytes, n of them in use)
 * with room for one more: itself while n < *cap, else reallocated to twice
 * *cap items (`first` when it has none) and *cap updated.  NULL when out of
 * memory, the array and *cap left as they were (the caller still frees it).
 * size and first are more than 0. */
void *mesh_grow(void *items, size_t *cap, size_t n, size_t size, size_t first);

/* The noun that agrees with a count: one for exactly 1, many for any other
 * count ("1 node", "0 nodes", "2 micro-batches"), in every report and picture. */
static inline const char *mesh_noun(long n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

/* Copy src into dst[size], always NUL-terminated; -1 if it was truncated. */
int mesh_strlcpy(char *dst, const char *src, size_t size);
/* Append fmt's text to the list buf[len] holds (a string), after sep
 * where the list is not empty: "tp=2" then "tp=2,pp=2".  Cut to fit. */
void mesh_list_add(char *buf, size_t len, const char *sep, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Edit distance between a and b (insert, delete or replace one character,
 * or swap two neighbours; case ignored), capped at 3: enough to tell a
 * typo.  Strings longer than 32 bytes, or whose lengths differ by more than
 * 2, are 3 apart. */
int mesh_typo_distance(const char *a, const char *b);
/* How far `word` is from `name` as a typo of it: mesh_typo_distance, or 3
 * when more than a third of name's characters would change (then it is no
 * typo: "gpu" is not a typo of "bind"). */
int mesh_typo_of(const char *word, const char *name);

/* A budget of planning work (lib/search.c): the controller's judgement of
 * one submission runs under one (lib/controller.c), so that no spec, however
 * hostile, holds slurmctld for long.  Counted in work units, not time, so
 * that the same inputs always stop at the same point (the verdict is
 * deterministic): one unit per layout a search considers and one per
 * pricing of a layout's memory or cost, on any search of the thread that
 * runs under it.  Once spent reaches limit every search stops where it is
 * (stopped set) and every later one stops at once, until the budget is no
 * longer in use. */
typedef struct mesh_work {
    long limit;  /* units allowed */
    long spent;  /* units counted */
    int stopped; /* a search reached the limit: its results, and all after, are partial */
    /* the most units the advice of a refusal (what would fit) may spend of
     * it, within limit; 0: as many as are left (mesh_advise) */
    long advice;
    int cut; /* a part of it (mesh_work_part) reached its own limit: something was cut short */
} mesh_work_t;

/* The budget this thread's searches count against (NULL: none; inside a
 * plan or sizing made without a budget, mesh_work_counted's counter). */
mesh_work_t *mesh_work_current(void);
/* Count the searches this thread runs against w from now on (NULL: none);
 * returns the budget in use before, to be put back with another call. */
mesh_work_t *mesh_work_use(mesh_work_t *w);
/* Count what follows against a part of this thread's budget, *part, of at
 * most cap units (fewer if fewer are left; it inherits the advice cap);
 * returns the budget in use, to be given to mesh_work_join.  With no budget
 * in use, or cap <= 0, nothing changes (part is unused). */
mesh_work_t *mesh_work_part(mesh_work_t *part, long cap);
/* End the part begun by mesh_work_part: its units count against the whole
 * budget (stopped there too at its limit), which is in use again.  A part
 * stopped at its own cap leaves the whole one going. */
void mesh_work_join(mesh_work_t *whole, const mesh_work_t *part);
/* The budget whose spent counts what this thread does next: the one in use,
 * or, with none, *counter, made a budget that no search reaches (so the
 * CLI's plans count their work as the controller's judgements do, and show
 * it).  The counter has no advice cap, so that mesh_advise takes no part of
 * it (mesh_work_part with cap 0), and a limit of LONG_MAX / 2, which its
 * spent cannot overflow on its way to: a 32-bit long reaches it after
 * about 20 s of planning, which then stops as at any budget.  The caller
 * reads spent before and after, then calls mesh_work_uncount(counter). */
mesh_work_t *mesh_work_counted(mesh_work_t *counter);
/* Ends mesh_work_counted: *counter is no longer in use, if it was. */
void mesh_work_uncount(const mesh_work_t *counter);
/* Count n units of work done outside a search (trial divisions, say)
 * against this thread's budget, if one is in use: stopped at its limit. */
void mesh_work_spend(long n);
/* Whether this thread's budget has stopped a search (0 with none in use). */
int mesh_work_stopped(void);
/* The limit of this thread's budget (0: none in use; LONG_MAX / 2 inside a
 * plan or sizing made without one), for messages. */
long mesh_work_limit(void);
/* Its advice cap (mesh_work_t's advice; 0: none, or none in use). */
long mesh_work_advice(void);
struct mesh_plan;
/* plan.c: 2 when the work budget stopped the advice of plan p (what would
 * fit) before its end, so that it is partial; else 0.  (A plan whose search
 * it stopped is not made.) */
int mesh_plan_halted(const struct mesh_plan *p);

struct mesh_policy;
struct mesh_model;
struct mesh_layout;
struct mesh_step;
struct mesh_submit_ask;
struct mesh_submit;
/* controller.c: mesh_submit_decide with a work budget of `work` units in
 * place of MESH_SUBMIT_WORK (the tests compare a verdict with the one an
 * unbounded budget gives); a verdict kept for one budget is not another's. */
int mesh_submit_decide_within(long work, const struct mesh_policy *pol, const char *partitions,
                              const struct mesh_model *m, const struct mesh_layout *pins,
                              const struct mesh_step *s, const struct mesh_submit_ask *ask,
                              struct mesh_submit *out);

/* accounting.c: the bytes per parameter of the model that the
 * data-parallel sync and the optimizer step move, as the buffers the
 * frameworks allocate under meshplan's exports hold them, each the most of
 * the frameworks m is priced under (so lib/cost.c prices the wire and the
 * step as lib/accounting.c prices the memory): w, a weight in the
 * parameter all-gather (and the step's write); g, a gradient in the
 * reduce; k, the optimizer states the step reads and writes on the GPU
 * (the optimizer terms not held on the host: master weights, moments, an
 * fp32 copy of the gradients).  They depend on the layout's ZeRO stage,
 * offload and moments alone (as the planner's memo of the states' sums
 * does). */
typedef struct mesh_step_bytes {
    double w, g, k;
} mesh_step_bytes_t;
mesh_step_bytes_t mesh_step_bytes(const struct mesh_model *m, const struct mesh_layout *l);
/* accounting.c: whether ZeRO-1 over one replica holds fewer bytes of
 * model states than ZeRO-0 under some framework m is priced under: it
 * shards nothing there, but Megatron-LM gives the spec's 16-bit main
 * gradients and Adam moments only with its distributed optimizer
 * (optimizer/__init__.py L1057-1060 at d98e8a6), the moments at the
 * lever's 16 bits. */
int mesh_sole_replica_zero_saves(const struct mesh_model *m);

struct mesh_error;
/* mesh_parse_double, whose errors give the value's unit after its range:
 * unit is appended as written (" seconds", ", a fraction"; NULL: none). */
int mesh_parse_number(const char *s, const char *what, double min, double max, const char *unit,
                      double *out, struct mesh_error *err);

/* The error for a GPU name mesh_gpu_find does not know, as "KEY: ...": a
 * short name that is several GPUs of the table lists them (with memory and
 * NVLink); any other name is unknown, with the table's names and the one a
 * typo most likely meant.  Returns -1. */
int mesh_gpu_name_error(const char *key, const char *name, struct mesh_error *err);
/* How many GPUs of the table `name` (not NULL) is a short name of ("H100":
 * H100-SXM, H100-PCIe and H100-NVL), as mesh_gpu_find compares names. */
int mesh_gpu_choices(const char *name);
/* The table's name a name mesh_gpu_find does not know most likely meant: the
 * one GPU a short name starts, or the closest by a typo; NULL if none. */
const char *mesh_gpu_guess(const char *name);
/* How far a typed GPU name is from a name of the table (or a product name)
 * as a typo that may be offered for it: mesh_typo_of's distance when both
 * say the same model (vendor letters and number: "H100-SMX" and H100-SXM),
 * else 3, never offered (H20 for H200, A10 for A100: other GPUs). */
int mesh_gpu_typo(const char *typed, const char *name);
/* Whether a and b are one name as mesh_gpu_find compares names (case,
 * vendor words, ' ', '-', '_' and '/'), without resolving product names. */
int mesh_gpu_same_name(const char *a, const char *b);

/* FNV-1a, 64 bits (Fowler, Noll, Vo): its offset basis and prime, for
 * the digests' hash below and the controller's cache (lib/controller.c). */
#define MESH_FNV_OFFSET 0xcbf29ce484222325ULL
#define MESH_FNV_PRIME  0x100000001b3ULL

/* FNV-1a, 64 bits, of a NUL-terminated string: the digests' hash. */
static inline uint64_t mesh_fnv1a64(const char *s)
{
    uint64_t h = MESH_FNV_OFFSET;
    for (const unsigned char *c = (const unsigned char *)s; *c; c++)
        h = (h ^ *c) * MESH_FNV_PRIME;
    return h;
}

/* The pipeline stages that can hold the most, memory or parameters: the
 * first (embedding, most micro-batches in flight), the second (under an
 * uneven split it has more layers than the first and one fewer in flight,
 * and every later middle stage has as many layers and fewer in flight) and
 * the last (output layer, logits).  Fills out[] and returns how many. */
static inline int mesh_heavy_stages(int pp, int out[3])
{
    int n = 0;
    out[n++] = 0;
    if (pp > 2)
        out[n++] = 1;
    if (pp > 1)
        out[n++] = pp - 1;
    return n;
}

/* Run fn(arg), waiting at most `seconds` (NaN, 0 or more than a day: no
 * bound, in this thread).  0 when it finished in time: arg is the caller's
 * again.  -1 when it did not: fn goes on, on a detached thread that owns arg
 * from then on and calls drop(arg) when fn returns.  Work that cannot be
 * interrupted (hwloc reading a wedged sysfs) is bounded this way.  Without a
 * thread to spare, fn runs in this thread, unbounded. */
int mesh_run_bounded(void (*fn)(void *), void (*drop)(void *), void *arg, double seconds);

struct mesh_model;
struct mesh_layout;
struct mesh_gpu;
struct mesh_alloc;

/* A Hugging Face config.json (len bytes of buf, named `origin` in errors)
 * as a spec document for lib/spec.c, named `name`, into doc (lib/hfconfig.c):
 * line i of it comes from the file's field line_field[i] (NULL: none), at
 * most MESH_HF_FIELDS_MAX lines.  0, or -1 with err naming the field. */
#define MESH_HF_FIELDS_MAX 64
int mesh_hf_config_spec(const char *buf, size_t len, const char *origin, const char *name,
                        mesh_buf_t *doc, const char **line_field, int *lines,
                        struct mesh_error *err);

/* Append the spec m as one YAML flow mapping that mesh_spec_parse reads
 * back to the same model (every key of lib/spec.c's table but preset):
 * the controller's request carries it. */
void mesh_spec_write(const struct mesh_model *m, mesh_buf_t *b);

/* GPUs on one NVLink fabric (lib/layout.c): a node's, or the GPU's whole
 * island where it spans nodes and the job holds whole trays of it with no
 * smaller island given (GB200 NVL72: 72 over trays of 4). */
long mesh_nvlink_fabric(const struct mesh_alloc *a);
/* That fabric where it spans trays (GB200 NVL72: 72), 0 where NVLink stays
 * inside a node (lib/layout.c). */
long mesh_fabric_across_trays(const struct mesh_alloc *a);
/* Whether a TP group of tp ranks is on NVLink (lib/layout.c): tp divides
 * the island and the node, or is whole trays dividing the fabric. */
int mesh_tp_on_nvlink(const struct mesh_alloc *a, long tp);
/* The largest tp mesh_tp_on_nvlink may accept on a. */
long mesh_tp_reach(const struct mesh_alloc *a);
/* The consecutive ranks one EP group of l spans (lib/layout.c): etp*ep. */
long mesh_ep_span(const struct mesh_layout *l);
/* The GPUs an EP all-to-all reaches over NVLink (lib/layout.c): the fabric
 * across trays, or the island (always the island under DeepEP: deepep). */
long mesh_ep_reach(const struct mesh_alloc *a, int deepep);

/* What a plan on allocation a holds before Ampere (lib/runnable.c): model
 * (unless NULL) priced without FlashAttention, TP's overlap and cp pinned
 * off where pin leaves them free; nothing from Ampere on.  The check
 * refuses pins (NULL: none) that ask for either: 0, or -1 with err. */
void mesh_before_ampere(const struct mesh_alloc *a, struct mesh_model *model,
                        struct mesh_layout *pin);
int mesh_before_ampere_check(const struct mesh_alloc *a, const struct mesh_layout *pins,
                             struct mesh_error *err);
/* What a LoRA plan of model m holds (lib/runnable.c): under auto or
 * deepspeed, which run it with Hugging Face PEFT, data parallelism and ZeRO
 * alone, so tp, pp, cp, vpp (and a MoE model's ep, etp) pinned to 1 where
 * pin leaves them free; nothing for full training or under framework:
 * torch.  m's framework is the one the plan resolved (lib/plan.c,
 * plan_inputs: a LoRA plan is never Megatron-LM's).  The check, given that
 * framework, refuses pins (NULL: none) that ask otherwise: 0, or -1 with
 * err naming the key. */
void mesh_lora_layout(const struct mesh_model *m, struct mesh_layout *pin);
int mesh_lora_check(const struct mesh_model *m, int framework, const struct mesh_layout *pins,
                    struct mesh_error *err);
/* The MoE token dispatcher a plan on allocation a runs (lib/runnable.c):
 * the check refuses a model that asks for DeepEP (train.dispatcher) where
 * its kernels do not run (0, or -1 with err); resolve makes a dispatcher
 * left to the site (auto) DeepEP where site (the policy's dispatcher=) is
 * 1 and they run, and leaves it otherwise. */
int mesh_dispatcher_check(const struct mesh_model *m, const struct mesh_alloc *a,
                          struct mesh_error *err);
void mesh_dispatcher_resolve(const struct mesh_alloc *a, int site, struct mesh_model *model);
/* Why Megatron-LM's flags are not given for model m (lib/env.c): a
 * sentence, or NULL where Megatron-LM trains what the plan prices. */
const char *mesh_megatron_withheld(const struct mesh_model *m);
/* The framework a model of that finetune is priced under when fw would
 * be (lib/spec_check.c): fw, but DeepSpeed for LoRA under auto or
 * Megatron-LM, which has none: its adapters train under DeepSpeed. */
int mesh_lora_framework(int finetune, int fw);
/* Append Megatron-LM's command-line flags for model m under layout l on
 * that GPU to b (lib/env.c): MESH_MEGATRON_ARGS, and the plan report's
 * Megatron-LM line; its callers give none where mesh_megatron_withheld
 * says why. */
void mesh_megatron_args(const struct mesh_model *m, const struct mesh_layout *l,
                        const struct mesh_gpu *gpu, mesh_buf_t *b);
/* The CUDA_DEVICE_MAX_CONNECTIONS Megatron-LM needs for model m under
 * layout l on that GPU (lib/env.c), or 0 where it asks none: exported
 * beside MESH_MEGATRON_ARGS and printed with the plan's Megatron-LM line. */
int mesh_megatron_max_connections(const struct mesh_model *m, const struct mesh_layout *l,
                                  const struct mesh_gpu *gpu);
/* Parts of a model's layers (lib/spec.c) the per-GPU counts split apart:
 * a MoE layer without its routed experts (attention, norms, router, shared
 * experts); one MTP layer's projection and norms; the attention parameters
 * every TP rank holds whole (MLA's down projections and their norms; 0
 * for standard attention). */
double mesh_moe_layer_base(const struct mesh_model *m);
/* A MoE layer's router: Megatron-LM's TopKRouter weight, experts x h, and
 * with a GeLU model's biases its bias of one per expert (router.py L67-72
 * at d98e8a6); Mixtral's and Qwen3-MoE's gate and DeepSeek-V3's MoEGate
 * have none (SwiGLU models: --disable-bias-linear). */
double mesh_model_router_params(const struct mesh_model *m);
/* Bytes a MoE layer holds while it runs beyond what it stores (the
 * dispatcher's copies, the experts' input and output; lib/memory.c). */
double mesh_moe_dispatch_buffers(const struct mesh_model *m, const struct mesh_layout *l,
                                 double imbalance);
/* What the exported overlaps hold (lib/memory.c, lib/overlap.c), 0 where
 * the layout does not run them: the expert all-to-all overlap, on a stage
 * with MoE layers where one micro-batch's backward meets another's
 * forward; TP's Userbuffers and DeepEP's buffers, once per GPU. */
double mesh_moe_overlap_held(const struct mesh_model *m, const struct mesh_layout *l,
                             double imbalance);
double mesh_tp_overlap_buffers(const struct mesh_model *m, const struct mesh_layout *l);
double mesh_deepep_buffers(const struct mesh_model *m, const struct mesh_layout *l);
/* What arch.mlp says of the whole layer besides its activation, one row a
 * style (lib/params.c, doc/design.md "Parameter counts"): every count,
 * memory term, cost and exported flag that differs between GPT-, Llama-
 * and Nemotron-style layers asks this, never the mlp value itself. */
typedef struct mesh_style {
    const char *label; /* the text report's word: "GeLU", "SwiGLU", "squared ReLU" */
    int gated;         /* the MLP's first matrix is two, gate and up (2f wide) */
    int norm_vectors;  /* a norm's vectors of hidden: RMSNorm 1 (weight), LayerNorm 2 (+ bias) */
    int linear_bias;   /* every linear layer has a bias (Megatron-LM's add_bias_linear) */
    int rotary;        /* rotary positions; else a learned table of seq_len rows */
    int zero_centered; /* LayerNorm's weight kept as an offset from 1 (--apply-layernorm-1p) */
} mesh_style_t;
const mesh_style_t *mesh_style(const struct mesh_model *m);
/* A layer's two norms, and the final norm's: norm_vectors x hidden each. */
double mesh_norm_params(const struct mesh_model *m);
/* A GPT-style model's learned position table, seq_len x hidden (a lookup,
 * on the first stage); 0 with rotary positions. */
double mesh_position_params(const struct mesh_model *m);
double mesh_mtp_extra(const struct mesh_model *m);
double mesh_attn_replicated(const struct mesh_model *m);
/* How many TP ranks share each KV head: tp / kv_heads where TP is wider
 * than the KV heads, else 1.  Megatron-LM takes num_query_groups as a
 * multiple or a divisor of TP (transformer_config.py L1461-1466 at
 * d98e8a6).  Wider than the KV heads, TP splits the fused QKV weight evenly
 * all the same, all-gathers its output and gives each rank one KV head and
 * its share of the query heads (attention.py L353-366, L1851-1868).  MLA
 * has no shared KV heads.  Inline: the memory and cost models ask it for
 * every layout they price. */
#include "meshplan/params.h"
#include "meshplan/spec.h"
/* The width of one attention head, Megatron-LM's kv_channels: arch.head_dim,
 * else hidden / heads (arguments.py L839-841 at d98e8a6); 0 without heads. */
static inline int mesh_head_dim(const mesh_model_t *m)
{
    return m->head_dim ? m->head_dim : m->heads ? m->hidden / m->heads : 0;
}
static inline double mesh_kv_replication(const mesh_model_t *m, int tp)
{
    if (!m->has_arch || m->mla.kv_lora_rank || m->kv_heads <= 0 || m->kv_heads >= tp)
        return 1;
    return (double)tp / m->kv_heads;
}
/* Whether m is a mixture of experts, which the API's mesh_model_is_moe
 * returns.  Inline: the memory and cost models ask it tens of thousands of
 * times a plan, a tenth of a million instructions as a call (DeepSeek-V3 on
 * 2,048 GPUs). */
static inline int mesh_is_moe(const mesh_model_t *m)
{
    return m->moe.experts > 0;
}

/* The communication overlaps meshplan prices (lib/overlap.c): each row's
 * flags are exported exactly when lib/cost.c prices the overlap. */
typedef enum mesh_overlap_id {
    MESH_OVERLAP_GRAD_REDUCE,  /* DP gradients behind the backward */
    MESH_OVERLAP_PARAM_GATHER, /* ZeRO's weight all-gather behind the forward */
    MESH_OVERLAP_TP,           /* TP collectives pipelined with the GEMMs */
    MESH_OVERLAP_CP_RING,      /* CP's K/V ring behind the attention core */
    MESH_OVERLAP_MOE_A2A,      /* EP dispatch and combine behind other micro-batches */
    MESH_OVERLAP_DEEPEP,       /* the flex dispatcher on DeepEP: one copy a node */
    MESH_OVERLAP_COUNT
} mesh_overlap_id_t;
typedef struct mesh_overlap {
    mesh_overlap_id_t id;
    const char *flags; /* Megatron-LM's, space-separated */
    int (*allowed)(const mesh_model_t *, const struct mesh_layout *);
    const char *condition; /* the framework's, in words, with where it is checked */
    /* what the framework needs of the site's software stack besides the
     * layout (NULL: nothing), which no plan can check: stated here, where
     * the row's other conditions are, for the site to meet */
    const char *requires;
    const char *effect; /* what lib/cost.c prices when it is on */
    const char *memory; /* what lib/memory.c adds when it is on (NULL: nothing) */
    const char *source; /* where the overlap happens, file at the cited commit */
} mesh_overlap_t;
/* The row of `id`, or NULL. */
const mesh_overlap_t *mesh_overlap_row(mesh_overlap_id_t id);
/* Whether layout l of model m runs (and exports, and is priced with) the
 * overlap `id`. */
int mesh_overlap_on(const mesh_model_t *m, const struct mesh_layout *l, mesh_overlap_id_t id);
/* DeepEP's tuned configuration for a group of `ranks` (the tp_ep group,
 * etp x ep), as its buffers are sized: NULL where DeepEP has none. */
typedef struct mesh_deepep_config {
    int ranks;
    int nvl_recv;  /* num_max_nvl_chunked_recv_tokens, dispatch and combine alike */
    int rdma_recv; /* num_max_rdma_chunked_recv_tokens, aligned, the larger; 0: one node */
} mesh_deepep_config_t;
const mesh_deepep_config_t *mesh_deepep_config(long ranks);

struct mesh_alloc;
struct mesh_assumptions;
struct mesh_memory;
/* The heavy stages of a layout (mesh_heavy_stages_of) with what its
 * memory and cost read of each: its layers, its parameters psi and of
 * them a MoE model's experts' psi_e.  They depend on the layout's shape
 * and, where its chunks move layers between stages, its interleaving; not
 * on its levers, micro-batch or recomputation, so the planner counts them
 * once per shape and interleaving that moves layers. */
typedef struct mesh_heavy {
    int n;
    int stage[4], layers[4];
    double psi[4], psi_e[4];
} mesh_heavy_t;
/* shard.c: the heavy stages of model m under layout l. */
void mesh_heavy_count(const struct mesh_model *m, const struct mesh_layout *l, mesh_heavy_t *out);
/* shard.c: which of h's stages has the most parameters (the first of
 * equals; h lists stage 0 at least): the rank whose DP traffic and
 * optimizer step a step waits for. */
int mesh_heavy_most(const mesh_heavy_t *h);

/* The model states of the heavy stages under each framework priced
 * (mesh_frameworks_priced): bytes per GPU of each memory part, weights,
 * grads, optimizer and host (the optimizer offloaded), in
 * part[stage][framework][part], with each stage's place and layers.  They
 * depend on the layout's shape, ZeRO stage and levers and, through its
 * heavy stages, its interleaving; not on its micro-batch or
 * recomputation. */
typedef struct mesh_states_parts {
    int n, nf;
    int stage[4], layers[4];
    mesh_framework_t fw[3];
    double part[4][3][4];
} mesh_states_parts_t;

/* The states' parts of layout l of model m, whose heavy stages are h. */
void mesh_states_parts(const struct mesh_model *m, const struct mesh_layout *l,
                       const mesh_heavy_t *h, mesh_states_parts_t *out);

/* One layer's activations without recomputation, a dense and a MoE
 * layer's, which every recomputation and lever of a micro-batch share:
 * kept for the micro-batch, TP, CP, SP, EP and expert TP last priced
 * (valid 0: none yet).  A planner's, for one model and one set of
 * assumptions. */
typedef struct mesh_plain_memo {
    int valid, mb, tp, cp, sp, ep, etp;
    double dense, moe;
} mesh_plain_memo_t;

/* mesh_memory_estimate from the states' parts already counted
 * (mesh_states_parts).  The planner counts them once per shape, ZeRO stage
 * and levers instead of once per layout it prices, and keeps the plain
 * activations in *plain (NULL: none kept). */
void mesh_memory_priced(const struct mesh_model *m, const struct mesh_layout *l,
                        const struct mesh_alloc *a, const struct mesh_assumptions *assume,
                        const mesh_states_parts_t *states, mesh_plain_memo_t *plain,
                        struct mesh_memory *out);

/* The heavy stages of model m under layout l: mesh_heavy_stages', and for
 * a MoE model whose first layers are dense, the first middle stage of MoE
 * layers only (more expert weights than stage 1, fewer in flight); for one
 * with MoE every few layers, the middle stage with the most of them.
 * Fills out[] and returns how many (up to 4). */
int mesh_heavy_stages_of(const struct mesh_model *m, const struct mesh_layout *l, int out[4]);

/* The dense and MoE layers of a stage (the model's first moe.dense_layers
 * are dense, or with moe.every N all but layers N-1, 2N-1, ...), under the
 * layout's split and interleaving. */
void mesh_stage_mix(const struct mesh_model *m, const struct mesh_layout *l, int stage, int *dense,
                    int *moe);

/* A MoE model's imbalance: train.moe_imbalance, else the policy's (assume
 * may be NULL: then 1, balanced). */
double mesh_moe_imbalance(const struct mesh_model *m, const struct mesh_assumptions *assume);

/* Whether directory entry `file` is a preset, NAME.yaml with NAME a preset
 * name (mesh_spec_valid_preset_name); NAME into name when not NULL
 * (lib/spec_keys.c).  What every scan of the preset directories keeps. */
int mesh_spec_preset_file(const char *file, char name[MESH_NAME_MAX]);

/* The index of word among the choices of the spec's enum key `dotted`
 * ("train.optimizer_dtype"), any case, or -1: the spec's key table spells
 * every enum's names once (lib/spec_keys.c), and the spec reader finds a
 * key by its dotted name (lib/spec.c). */
int mesh_spec_choice_of(const char *dotted, const char *word);

/* The layers of l's fullest stage (mesh_pp_stage_layers's most), found
 * without asking every stage, which a user's pp may make thousands
 * (lib/layout.c). */
int mesh_pp_fullest_layers(const struct mesh_model *m, const struct mesh_layout *l);

/* How many of m's first n layers stage `stage` holds under l's interleaved
 * chunks (vpp > 1; chunk j on stage j mod pp), counted without walking the
 * chunks, which a user's vpp may make tens of thousands (lib/layout.c). */
int mesh_stage_first_layers(const struct mesh_model *m, const struct mesh_layout *l, int stage,
                            int n);

/* How many of stage `stage`'s layers under l are layers i with (i + 1) %
 * every == 0 (arch.moe.every's MoE layers), counted without walking the
 * chunks (lib/layout.c). */
int mesh_stage_every_layers(const struct mesh_model *m, const struct mesh_layout *l, int stage,
                            int every);

/* The middle stage (1..pp-2; pp > 2) with the most such layers, the first
 * of them where several hold as many: what mesh_heavy_stages_of lists for
 * a model with MoE every few layers.  Asks at most 2 * every stages,
 * counting their work against this thread's budget. */
int mesh_stage_most_every(const struct mesh_model *m, const struct mesh_layout *l, int every);

/* The longest --mesh text mesh_layout_parse reads, plus its NUL: twice the
 * canonical string's 192 of API version 8, kept when that grew */
#define MESH_LAYOUT_PARSE_MAX 384

/* ---- the --mesh keys (lib/layout.c), the one table of a layout's fields ----
 *
 * Each row: the key, the int member of mesh_layout_t it pins, how its value
 * is read and written, its range (integers), its value in the usage, the
 * checkpoint dimension it is (MESH_DIM_*, or -1: it shards no checkpoint
 * and may change on any restart), the order in which the advice offers to
 * free it when pinned (1 first; 0 never), and where the canonical string
 * (mesh_layout_format) and the JSON write it always (else only when set:
 * a dense layout's experts, the levers when used). */
enum mesh_key_kind { MK_INT, MK_RECOMPUTE, MK_SP, MK_OFFLOAD, MK_MOMENTS, MK_OVERLAP };
#define MK_FORMAT_ALWAYS 1u /* mesh_layout_format writes it whatever its value */
#define MK_JSON_ALWAYS   2u /* the reports' JSON writes it whatever its value */
typedef struct mesh_layout_key {
    const char *key;
    size_t off;
    enum mesh_key_kind kind;
    long long min, max;
    const char *value; /* "T", "on|off": the usage's */
    const char *json;  /* its name in the reports' JSON layout */
    int dim;           /* MESH_DIM_*, or -1 */
    int relax;         /* 1..: the advice's order; 0: never offered */
    unsigned flags;    /* MK_* */
} mesh_layout_key_t;
extern const mesh_layout_key_t mesh_layout_keys[];
extern const int mesh_layout_key_count; /* the table's rows */
#define MESH_LAYOUT_KEYS mesh_layout_key_count

/* Key k's member of l. */
static inline int *mesh_layout_field(struct mesh_layout *l, const mesh_layout_key_t *k)
{
    return (int *)(void *)((char *)l + k->off);
}
static inline int mesh_layout_value(const struct mesh_layout *l, const mesh_layout_key_t *k)
{
    return *(const int *)(const void *)((const char *)l + k->off);
}
/* The key of checkpoint dimension d (MESH_DIM_*), or NULL. */
const mesh_layout_key_t *mesh_layout_key_of_dim(int d);
/* Whether a complete layout's string shows key k (MK_FORMAT_ALWAYS, or set). */
int mesh_layout_key_shown(const struct mesh_layout *l, const mesh_layout_key_t *k);
/* Key k's value of l as --mesh writes it ("4", "full:2", "on", "optimizer",
 * "bf16"), into buf[len]. */
const char *mesh_layout_key_text(const struct mesh_layout *l, const mesh_layout_key_t *k, char *buf,
                                 size_t len);

/* The policy's values of their own shape (lib/policy_values.c): base is a
 * mesh_policy_t, or for pci and fp8 a mesh_gpu_override_t. */
int mesh_policy_read_steps(void *base, const char *key, const char *value, mesh_error_t *err);
/* A steps= mask as the policy writes it ("regular,batch"), into buf[len]. */
const char *mesh_policy_steps_text(unsigned mask, char *buf, size_t len);
int mesh_policy_read_port_range(void *base, const char *key, const char *value, mesh_error_t *err);
int mesh_policy_read_gpu_name(void *base, const char *key, const char *value, mesh_error_t *err);
int mesh_policy_read_pci(void *base, const char *key, const char *value, mesh_error_t *err);
/* gpu.NAME.fp8: yes or no, or the block-scaled recipes it runs (blockwise,
 * mxfp8), into the override's fp8 (mesh_gpu_override_t) */
int mesh_policy_read_fp8(void *base, const char *key, const char *value, mesh_error_t *err);
int mesh_policy_read_calibration(void *base, const char *key, const char *value, mesh_error_t *err);

/* The calibration's hooks (lib/calib.c): a resolved GPU takes its model's
 * factors (or none); the cost and memory models apply them to their
 * parts. */
struct mesh_calibration;
struct mesh_cost;
void mesh_calib_apply_gpu(const struct mesh_calibration *c, struct mesh_gpu *gpu);
void mesh_calib_scale_cost(struct mesh_cost *c, const struct mesh_gpu *gpu);
void mesh_calib_scale_memory(struct mesh_memory *m, const struct mesh_gpu *gpu);

struct mesh_policy;
/* The policy's top-level key i (0 up: -1 past the last) as an admin writes
 * it: *name its key, buf its value in p (lib/policy.c). */
int mesh_policy_key_text(const struct mesh_policy *p, int i, const char **name, char *buf,
                         size_t len);

/* The policy's gpu.NAME. entry for GPU `name` (a table GPU's overrides, or
 * a GPU the admin defines), or NULL; as may be NULL (lib/policy.c). */
const struct mesh_gpu_override *mesh_policy_override_of(const struct mesh_assumptions *as,
                                                        const char *name);

/* The attention core's work per layer, averaged over the layers, as a
 * share of causal attention over the whole sequence (lib/cost.c): 1
 * without a window (arch.window), less where layers see only the window. */
double mesh_attention_share(const struct mesh_model *m);

/* The tokens one rank routes per micro-batch (its sequence-parallel shard),
 * and the routed copies the busiest expert rank receives for `tokens` of
 * them (gathered over etp; lib/memory.c says how the imbalance is capped). */
double mesh_moe_tokens(const struct mesh_model *m, const struct mesh_layout *l);
double mesh_moe_received(const struct mesh_model *m, const struct mesh_layout *l, double tokens,
                         double imbalance);

struct mesh_plan;
/* The plan's own pins (as the search read them: the spec's micro_batch and
 * recompute applied, auto made free), valid until mesh_plan_destroy: for
 * explanations that search further (lib/restart.c; its assumptions are
 * mesh_plan_assumptions'). */
const struct mesh_layout *mesh_plan_pins_of(const struct mesh_plan *p);
/* The line of mesh_plan_near_tie's record (lib/explain_lines.c renders it
 * with the others, for the text and the JSON reports alike), or NULL. */
const char *mesh_plan_near_tie_line(const struct mesh_plan *p);
struct mesh_calib_gpu;
/* The calibration the plan's GPU was priced with (the policy's
 * calibration:), or NULL. */
const struct mesh_calib_gpu *mesh_plan_calibration(const struct mesh_plan *p);

struct mesh_candidate;
#define MESH_CHOICE_NONE   0 /* no layout fits */
#define MESH_CHOICE_FITS   1 /* *out is the choice */
#define MESH_CHOICE_SLOWER 2 /* no choice meets the deadline; whether any fits is not known */
#define MESH_CHOICE_LATE   3 /* some layout fits, but no choice meets the deadline */
/* The choice alone of the plan mesh_plan_create would make on the same
 * inputs: its mesh_plan_best into *out (MESH_CHOICE_FITS) when its
 * mesh_plan_fits, else MESH_CHOICE_NONE; no explanation, alternatives or
 * advice.  Sizing needs no more of each count.  The search leaves
 * unpriced the layouts that cannot be near-ties of the fastest (see
 * lib/plan.c, unwanted).  deadline > 0: only a choice whose fastest
 * fitting layout takes at most that many seconds a step is wanted, and
 * the search prices nothing that cannot be a near-tie of one;
 * MESH_CHOICE_LATE or MESH_CHOICE_SLOWER when there is no such choice
 * (LATE: a layout it priced fits).  -1 with err set (err may be NULL)
 * on what mesh_plan_create refuses. */
int mesh_plan_choose(const struct mesh_model *m, const struct mesh_alloc *a,
                     const struct mesh_layout *pins, const struct mesh_assumptions *assume,
                     double deadline, struct mesh_candidate *out, struct mesh_error *err);

/* mesh_plan_fit_status in its two searches, for a caller that needs no
 * reason where nothing fits (the controller's sizing).  fit_first: 1, 0
 * and -2 as mesh_plan_fit_status says; MESH_FIT_UNTOLD where none of the
 * layouts its first search tries is valid, which leaves untold whether any
 * layout is.  any_valid, asked then: 0 if one is, -1 (err: why none is)
 * or -2 as mesh_plan_fit_status says.  It searches every layout, so it
 * costs more than the first search by far (doc/design.md, "Sizing"). */
#define MESH_FIT_UNTOLD 2
int mesh_plan_fit_first(const struct mesh_model *m, const struct mesh_alloc *a,
                        const struct mesh_layout *pins, const struct mesh_assumptions *assume,
                        struct mesh_error *err);
int mesh_plan_any_valid(const struct mesh_model *m, const struct mesh_alloc *a,
                        const struct mesh_layout *pins, const struct mesh_assumptions *assume,
                        struct mesh_error *err);

struct mesh_cost;
/* mesh_cost_estimate with the parameters of the rank holding the most
 * already counted, and of them the experts' (the planner's, once per
 * shape), the model's mesh_flops_per_token (once per search) and l's
 * mesh_step_bytes (once per ZeRO stage and lever). */
void mesh_cost_priced(const struct mesh_model *m, const struct mesh_layout *l,
                      const struct mesh_alloc *a, double psi_max, double psi_e_max,
                      double flops_per_token, const mesh_step_bytes_t *step, struct mesh_cost *out);

/* LoRA trains adapters on every linear layer, well under 1% of a model's
 * parameters (rank 16 on a 70B model: about 0.1%): priced as 1% with full
 * gradients and optimizer states. */
#define MESH_LORA_ADAPTER_FRACTION 0.01

#define MESH_GiB 1073741824.0

/* The name of the GPU an allocation given by memory alone gets
 * (mesh_policy_alloc), which --gpu does not know. */
#define MESH_GPU_GENERIC "generic"

/* What a node's host memory may give the optimizer states offloaded to
 * it: the rest is for the OS, data loaders and pinned staging buffers. */
#define MESH_HOST_USABLE 0.8

/* Bytes in GiB, the one unit every report prints memory in. */
static inline double mesh_gib(double bytes)
{
    return bytes / MESH_GiB;
}

/* A memory size as every report prints it: bytes in GiB with one decimal,
 * without the unit ("72.3").  A struct, so that calls serve as printf
 * arguments, several in one call: mesh_gib_str(x).s lives until the end
 * of the full expression (C11 6.2.4).  Sizes beyond 1e29 GiB are cut. */
typedef struct mesh_gib_str {
    char s[32];
} mesh_gib_str_t;
mesh_gib_str_t mesh_gib_str(double bytes);
/* A fraction someone gave (a headroom, a time margin) as a percentage,
 * shown as given: 0.125 is "12.5%", not a rounded "12%" (three
 * significant digits).  Served as mesh_gib_str is. */
typedef struct mesh_pct_str {
    char s[16]; /* "-1.23e+308%" at most */
} mesh_pct_str_t;
mesh_pct_str_t mesh_pct_str(double fraction);
/* A duration as people read it, whole seconds rounded up: "4 d 7 h",
 * "3 h 12 min" (the smaller unit cut), "45 min" (under an hour, minutes
 * rounded up), "12 s".  Served as mesh_gib_str is; seconds from 0 below
 * 2^62. */
typedef struct mesh_duration_str {
    char s[48];
} mesh_duration_str_t;
mesh_duration_str_t mesh_duration_str(double seconds);

#include "meshplan/layout.h"
/* The GPUs (ranks, one a task) of allocation a: nodes x GPUs per node,
 * in a long, which two ints' product cannot overflow on LP64. */
static inline long mesh_world(const mesh_alloc_t *a)
{
    return (long)a->nodes * a->gpus_per_node;
}

/* The length of the first name of a job's partition list (0 for NULL):
 * Slurm runs a job that names "big,gpu" in whichever starts it first, and
 * meshplan sizes it on the first, whose policy entry, MaxTime and name in
 * messages are the ones a list gives (lib/controller.c). */
static inline int mesh_first_partition_len(const char *list)
{
    return list ? (int)strcspn(list, ",") : 0;
}

#define MESH_ARRAY_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))
/* a macro's value as a string literal (MESH_STR(0.15) is "0.15") */
#define MESH_STR_(x) #x
#define MESH_STR(x)  MESH_STR_(x)

/* x rounded up to a whole number, for x >= 0 below 2^62: ceil() without
 * libm, which the static core library's users need not link. */
static inline long mesh_ceil_long(double x)
{
    long n = (long)x;
    return n + (n < x);
}

#endif
