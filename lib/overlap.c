/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The communication overlaps meshplan prices, as one table.
 *
 * Each row is one overlap Megatron-LM can run: the flags that turn it on,
 * the condition under which the framework accepts them (validate_args() in
 * megatron/training/arguments.py and TransformerConfig.__post_init__ in
 * megatron/core/transformer/transformer_config.py), what lib/cost.c prices
 * when it is on, what lib/memory.c adds for it, and where the overlap
 * happens.  The exported command line (lib/env.c, mg_overlaps) writes a
 * row's flags exactly when the cost model prices its speed and the memory
 * model its memory (mesh_overlap_on), so the three cannot drift.  Sources,
 * read at:
 *   Megatron-LM        NVIDIA/Megatron-LM@d98e8a64ddf34856e74b24714e3bedb2f5a39553
 *   Transformer Engine NVIDIA/TransformerEngine@d0067d0da6cb01811b8072a7d304f0e00344ce2b
 * Megatron-LM's condition is checked on every exported line by
 * tests/megatron/check-megatron, which runs its own validate_args().
 */
#include "internal.h"
#include "meshplan/layout.h"
#include "meshplan/params.h"

#define MEG "megatron "
#define TE  "transformer_engine "
/* A torch release a row's flags need (a row's `requires`); written this way
 * so that tests/megatron/validate.py tells Megatron-LM the highest any row
 * names, read from this table. */
#define TORCH_AT_LEAST(v) "torch >= " v

/* The dp-cp group of the dense parameters or of the experts has more than
 * one rank: there are gradients to reduce. */
static int has_dp(const mesh_model_t *m, const mesh_layout_t *l)
{
    (void)m;
    return (long)l->dp * l->cp > 1;
}

/* overlap_param_gather needs the distributed optimizer or Megatron-FSDP
 * (ZeRO 1-3 here) and overlap_grad_reduce (arguments.py L1024-1029). */
static int gathers(const mesh_model_t *m, const mesh_layout_t *l)
{
    return has_dp(m, l) && l->zero >= 1;
}

/* tp_comm_overlap needs sequence parallelism (arguments.py L1441-1442). */
static int tp_overlap(const mesh_model_t *m, const mesh_layout_t *l)
{
    return m->has_arch && l->tp > 1 && l->sequence_parallel == 1 && l->tp_overlap_off != 1;
}

static int cp_ring(const mesh_model_t *m, const mesh_layout_t *l)
{
    return m->has_arch && l->cp > 1;
}

/* overlap_moe_expert_parallel_comm (transformer_config.py L3002-3046):
 * expert parallelism, the alltoall or flex dispatcher (both are what
 * meshplan exports), interleaving whenever pp > 1, no full recomputation
 * (meshplan's selective modules never include "moe"), a bf16 or fp16 model
 * (FP8 runs on bf16 parameters; fp32 is refused, L3035-3037), at most one
 * MTP layer; delay_wgrad_compute needs it (L3074-3077) and Transformer
 * Engine (arguments.py L1903-1909; TE >= 2.8 with overlap_grad_reduce).
 * torch >= 2.6 (L3003-3006) is the row's `requires`. */
static int a2a_overlap(const mesh_model_t *m, const mesh_layout_t *l)
{
    return mesh_is_moe(m) && m->ep_overlap != MESH_EP_OVERLAP_OFF && l->ep > 1 &&
           (l->pp == 1 || l->vpp > 1) && l->recompute != MESH_RECOMPUTE_FULL &&
           m->precision != MESH_PREC_FP32 && m->mtp_layers <= 1;
}

/* DeepEP's tuned configurations, which its buffers are sized from
 * (deepseek-ai/DeepEP@04b06f7 deep_ep/buffer.py get_dispatch_config and
 * get_combine_config: a group size not listed is refused there).  The NVLink
 * receive tokens are the same in both; the RDMA receive tokens are each
 * config's 128 aligned up to its send chunk (csrc/config.hpp's Config),
 * the larger of dispatch's and combine's. */
static const mesh_deepep_config_t deepep_configs[] = {
    {2, 256, 0},    {4, 256, 0},    {8, 256, 0},     {16, 288, 140},  {24, 288, 140},
    {32, 288, 140}, {64, 288, 140}, {128, 560, 132}, {144, 720, 132}, {160, 720, 132},
};

const mesh_deepep_config_t *mesh_deepep_config(long ranks)
{
    for (size_t i = 0; i < MESH_ARRAY_LEN(deepep_configs); i++)
        if (deepep_configs[i].ranks == ranks)
            return &deepep_configs[i];
    return NULL;
}

/* The flex dispatcher on DeepEP where the plan runs it (train.dispatcher,
 * or the policy's dispatcher= on an allocation DeepEP runs on: lib/runnable.c)
 * and DeepEP has a configuration for the tp_ep group; it asserts tp x ep > 1
 * (token_dispatcher.py L1835-1836). */
static int deepep(const mesh_model_t *m, const mesh_layout_t *l)
{
    return mesh_is_moe(m) && m->dispatcher == MESH_DISPATCHER_DEEPEP && l->ep > 1 &&
           mesh_deepep_config(mesh_ep_span(l)) != NULL;
}

static const mesh_overlap_t overlaps[MESH_OVERLAP_COUNT] = {
    {MESH_OVERLAP_GRAD_REDUCE, "--overlap-grad-reduce", has_dp, "dp*cp > 1 (any ZeRO stage)", NULL,
     "the gradients' all-reduce or reduce-scatter runs bucket by bucket behind the backward "
     "(exposed(RS, backward)); off, all of it is exposed",
     NULL, /* its buckets are views of the gradient buffer (lib/accounting.c) */
     MEG "megatron/core/distributed/distributed_data_parallel.py (_make_backward_post_hook), "
         "param_and_grad_buffer.py (start_grad_sync)"},
    {MESH_OVERLAP_PARAM_GATHER, "--overlap-param-gather", gathers,
     "dp*cp > 1, ZeRO >= 1 (distributed optimizer or Megatron-FSDP) and --overlap-grad-reduce "
     "(arguments.py L1024-1029)",
     NULL,
     "the updated weights' all-gather runs behind the next forward (exposed(AG, forward)); off, "
     "it is exposed",
     NULL, /* it gathers into the parameter buffer (lib/accounting.c) */
     MEG "megatron/core/distributed/param_and_grad_buffer.py (start_param_sync, forward pre-hook)"},
    {MESH_OVERLAP_TP, "--tp-comm-overlap", tp_overlap,
     "tp > 1 with sequence parallelism (arguments.py L1441-1442)", NULL,
     "TP's all-gathers and reduce-scatters are split into chunks pipelined with the layer's "
     "linear GEMMs (exposed(TP, GEMMs)); off, all of it is exposed",
     "Transformer Engine's Userbuffers, 12 of seq x micro-batch / cp rows of h, once per GPU "
     "(mesh_tp_overlap_buffers, in the overhead)",
     TE "transformer_engine/pytorch/module/base.py (initialize_ub, userbuffers); " MEG
        "megatron/training/initialize.py (_initialize_tp_communicators)"},
    {MESH_OVERLAP_CP_RING, "--cp-comm-type p2p", cp_ring, "cp > 1 (p2p is Megatron-LM's default)",
     NULL,
     "each ring step's K/V exchange runs behind the previous block's attention "
     "(exposed(CP, attention core))",
     NULL, /* p2p is Megatron-LM's default cp_comm_type: the flag allocates nothing new */
     TE "transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py "
        "(AttnFuncWithCPAndKVP2P)"},
    {MESH_OVERLAP_MOE_A2A, "--overlap-moe-expert-parallel-comm --delay-wgrad-compute", a2a_overlap,
     "ep > 1, pp = 1 or vpp > 1, no full recomputation, bf16, fp16 or FP8 (not fp32), at most "
     "one MTP layer (transformer_config.py L3002-3046, L3074-3077), and the spec's "
     "train.ep_overlap not off",
     TORCH_AT_LEAST("2.6.0") " (transformer_config.py L3003-3006: the overlap hangs with an "
                             "older torch)",
     "one micro-batch's dispatch and combine run behind another's forward and backward "
     "(1F1B merged schedule; the weight gradients are delayed to cover the combine's backward): "
     "exposed(EP, the MoE layer's forward and backward); off, all of it is exposed",
     "where a backward meets a forward: one MoE layer more, a second set of the dispatcher's "
     "buffers and the delayed weight gradients' inputs (mesh_moe_overlap_held, in the "
     "activations)",
     MEG "megatron/core/models/gpt/fine_grained_callables.py, "
         "megatron/core/pipeline_parallel/combined_1f1b.py"},
    /* DeepEP takes fp32 routing probabilities: without --moe-router-dtype
     * fp32 Megatron-LM casts them and warns at every dispatch
     * (token_dispatcher.py L1312-1318) */
    {MESH_OVERLAP_DEEPEP,
     "--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend deepep --moe-router-dtype "
     "fp32",
     deepep,
     "ep > 1 with an etp x ep group DeepEP has a configuration for (2, 4, 8, 16, 24, 32, 64, "
     "128, 144 or 160 ranks: deep_ep/buffer.py), Hopper or later GPUs in nodes of 8 on NVLink, "
     "and the spec's train.dispatcher deepep, or the policy's dispatcher=deepep where the spec "
     "leaves it auto, the job is Megatron-LM's and a layout fits with DeepEP's buffers "
     "(transformer_config.py L1743-1762)",
     "DeepEP (deepseek-ai/DeepEP, the V1 Buffer API) installed beside Megatron-LM",
     "each token crosses to another node once for all its experts there, then NVLink takes it "
     "to each (DeepEP's internode dispatch; the combine sums a node's copies before they "
     "cross): the network part of the all-to-all falls to the nodes a token reaches over its "
     "copies there; it dispatches bf16 activations, not FP8 (fused_a2a.py)",
     "DeepEP's NVLink and RDMA buffers at 20 SMs (csrc/config.hpp size hints) and its 32 MiB "
     "workspace (mesh_deepep_buffers, in the overhead)",
     MEG "megatron/core/transformer/moe/token_dispatcher.py (MoEFlexTokenDispatcher), "
         "megatron/core/transformer/moe/fused_a2a.py"},
};

const mesh_overlap_t *mesh_overlap_row(mesh_overlap_id_t id)
{
    return id >= 0 && id < MESH_OVERLAP_COUNT ? &overlaps[id] : NULL;
}

/* Megatron-LM only: DeepSpeed's overlap_comm and the others are not
 * exported, so nothing is priced as hidden for them beyond what their
 * defaults do (DeepSpeed's ZeRO-3 overlaps, lib/accounting.c). */
int mesh_overlap_on(const mesh_model_t *m, const mesh_layout_t *l, mesh_overlap_id_t id)
{
    const mesh_overlap_t *o = mesh_overlap_row(id);
    return o && o->allowed(m, l);
}
