/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the GPU and the framework let a plan run, beyond Megatron-LM's
 * validity rules (layout.c): a GPU before Ampere (no Transformer Engine),
 * LoRA under DeepSpeed (data-parallel with ZeRO only) and DeepEP's
 * dispatcher (Hopper nodes of 8 on NVLink).  Each is a check of the pins,
 * with the fix in its error, and a pinning of the free keys (or the
 * model's setting) that the plan and its advice both keep to.
 */
#include "internal.h"
#include "meshplan/layout.h"

/* Before Ampere (no bf16) Transformer Engine does not run (README.rst's
 * hardware at d0067d0), so Megatron-LM runs its local implementation
 * (lib/env.c, whatever the framework: MESH_MEGATRON_ARGS is exported but
 * for LoRA): its attention stores the scores and has no context
 * parallelism (dot_product_attention.py L57-59 at d98e8a6), TP's
 * communication has no Userbuffers to overlap with, and the expert
 * all-to-all's overlap, whose delayed weight gradients need Transformer
 * Engine (arguments.py L1903-1909), does not run.  Here, below the plan
 * and its advice, which both keep to it: pins that ask otherwise are
 * refused, free ones pinned so. */
int mesh_before_ampere_check(const mesh_alloc_t *a, const mesh_layout_t *pins, mesh_error_t *err)
{
    if (a->gpu.has_bf16 || !pins)
        return 0;
    if (pins->tp_overlap_off == 0)
        return mesh_error_set(err,
                              "mesh tp_overlap=on: TP's overlap runs in Transformer Engine, which "
                              "needs Ampere or later (%s has no bf16); leave tp_overlap out",
                              a->gpu.name);
    if (pins->cp > 1)
        return mesh_error_set(err,
                              "mesh cp=%d: before Ampere (%s has no bf16) Megatron-LM runs its "
                              "local attention, which has no context parallelism; leave cp out",
                              pins->cp, a->gpu.name);
    return 0;
}

void mesh_before_ampere(const mesh_alloc_t *a, mesh_model_t *model, mesh_layout_t *pin)
{
    if (a->gpu.has_bf16)
        return;
    if (model) { /* (ep_overlap on is the spec's default: no pin to refuse) */
        model->flash_attention = 0;
        model->ep_overlap = MESH_EP_OVERLAP_OFF;
    }
    if (pin->tp_overlap_off == MESH_FREE)
        pin->tp_overlap_off = 1;
    if (pin->cp == MESH_FREE)
        pin->cp = 1;
}

/* LoRA trains under DeepSpeed with Hugging Face PEFT (Megatron-LM has
 * none: lib/env.c, mesh_megatron_withheld) on the model as Transformers
 * builds it, whole on every rank: the DeepSpeed config meshplan exports
 * (MESH_DEEPSPEED_CONFIG, lib/env.c) shards it with ZeRO across the
 * data-parallel ranks and has no tensor, pipeline, context or expert
 * parallelism.  So a LoRA plan under auto or deepspeed is data-parallel
 * with ZeRO; under framework: torch the training program applies the
 * layout itself (MESH_*_GROUP), as it does for full training. */
static int lora_data_parallel(const mesh_model_t *m, int framework)
{
    return m->finetune == MESH_FINETUNE_LORA && framework == MESH_FW_DEEPSPEED;
}

/* The keys a data-parallel LoRA plan holds, into *l (the rest left). */
static void lora_keys(const mesh_model_t *m, mesh_layout_t *l)
{
    l->tp = l->pp = l->cp = l->vpp = 1; /* so no SP, nor TP's overlap */
    if (mesh_is_moe(m))
        l->ep = l->etp = 1;
}

int mesh_lora_check(const mesh_model_t *m, int framework, const mesh_layout_t *pins,
                    mesh_error_t *err)
{
    if (!pins || !lora_data_parallel(m, framework))
        return 0;
    mesh_layout_t want;
    mesh_layout_unpin(&want);
    lora_keys(m, &want);
    /* every pin in the way, so that one change frees them all: "tp=2,pp=2"
     * and "tp, pp" */
    char pinned[160] = "", keys[96] = "";
    for (int i = 0; i < MESH_LAYOUT_KEYS; i++) {
        const mesh_layout_key_t *k = &mesh_layout_keys[i];
        int w = mesh_layout_value(&want, k), v = mesh_layout_value(pins, k);
        char text[32];
        if (w == MESH_FREE || v == MESH_FREE || v == MESH_AUTO || v == w)
            continue;
        mesh_list_add(pinned, sizeof(pinned), ",", "%s=%s", k->key,
                      mesh_layout_key_text(pins, k, text, sizeof(text)));
        mesh_list_add(keys, sizeof(keys), ", ", "%s", k->key);
    }
    if (!pinned[0])
        return 0;
    return mesh_error_set(err,
                          "mesh %s: LoRA trains under DeepSpeed with Hugging Face PEFT, "
                          "data-parallel with ZeRO only (MESH_DEEPSPEED_CONFIG has no tensor, "
                          "pipeline, context or expert parallelism); leave %s out, or set "
                          "framework: torch if your program applies the layout itself",
                          pinned, keys);
}

void mesh_lora_layout(const mesh_model_t *m, mesh_layout_t *pin)
{
    if (!lora_data_parallel(m, m->framework))
        return;
    mesh_layout_t want = *pin;
    lora_keys(m, &want);
    for (int i = 0; i < MESH_LAYOUT_KEYS; i++) {
        const mesh_layout_key_t *k = &mesh_layout_keys[i];
        if (mesh_layout_value(pin, k) == MESH_FREE)
            *mesh_layout_field(pin, k) = mesh_layout_value(&want, k);
    }
}

/* Megatron-LM's flex dispatcher on DeepEP (lib/overlap.c) runs DeepEP's
 * V1 kernels (moe/fused_a2a.py at d98e8a6): Hopper or later NVIDIA GPUs
 * (DeepEP's README, "Requirements"; fp8_blocks records compute capability
 * 9.0 and later, and ROCm has neither) in nodes of NUM_MAX_NVL_PEERS = 8
 * GPUs all on NVLink: beyond a node each GPU exchanges with the GPU of the
 * same index on every other node (deepseek-ai/DeepEP@030cdf0
 * csrc/config.hpp: ranks of a group beyond 8 come in whole nodes of 8). */
static int node_island(const mesh_alloc_t *a)
{
    return a->island < a->gpus_per_node ? a->island : a->gpus_per_node;
}

/* (an island wider than the node, as --nvlink may say, is the node's 8
 * to DeepEP, as it is once the plan has clamped it) */
static int deepep_runs(const mesh_alloc_t *a)
{
    return a->gpu.fp8_blocks >= 1 && a->gpus_per_node == 8 && node_island(a) == 8;
}

int mesh_dispatcher_check(const mesh_model_t *m, const mesh_alloc_t *a, mesh_error_t *err)
{
    if (!mesh_is_moe(m) || m->dispatcher != MESH_DISPATCHER_DEEPEP || deepep_runs(a))
        return 0;
    return mesh_error_set(err,
                          "train.dispatcher: deepep: DeepEP runs on Hopper or later GPUs in nodes "
                          "of 8 on NVLink, and these are %d %s a node on NVLink islands of %d; "
                          "use alltoall",
                          a->gpus_per_node, a->gpu.name, node_island(a));
}

/* Megatron-LM's flags carry it: a DeepSpeed or PyTorch job does not get it
 * from the site (framework already resolved: plan_inputs) */
void mesh_dispatcher_resolve(const mesh_alloc_t *a, int site, mesh_model_t *model)
{
    if (mesh_is_moe(model) && model->dispatcher == MESH_DISPATCHER_AUTO && site == 1 &&
        (model->framework == MESH_FW_AUTO || model->framework == MESH_FW_MEGATRON) &&
        deepep_runs(a))
        model->dispatcher = MESH_DISPATCHER_DEEPEP;
}
