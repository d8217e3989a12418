/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan: the plan's explanation as data.
 *
 * The planner records why it refused the layouts simpler than the one it
 * chose, why it passed over a faster near-tie (mesh_plan_near_tie), and
 * when nothing fits, what would: one record per line of
 * mesh_plan_reason and mesh_plan_advice, at the same index, holding the
 * numbers the line is written from (the layout, its memory, the limit it
 * hit).  The lines themselves are rendered from these records by
 * mesh_report_reason and mesh_report_advice (below), so a front end can
 * show the same facts its own way.  doc/design.md, "Explanation and
 * advice".
 */
#ifndef MESHPLAN_EXPLAIN_H
#define MESHPLAN_EXPLAIN_H

#include "meshplan/api.h"
#include "meshplan/error.h"
#include "meshplan/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The families of layouts, simplest first: the planner prefers a simpler
 * family on near-ties and explains each family simpler than its choice.
 */
typedef enum mesh_family {
    MESH_FAMILY_DP,    /**< plain data parallelism, no ZeRO */
    MESH_FAMILY_ZERO1, /**< DP + ZeRO-1 */
    MESH_FAMILY_ZERO2, /**< DP + ZeRO-2 */
    MESH_FAMILY_ZERO3, /**< DP + ZeRO-3 */
    MESH_FAMILY_TP,    /**< TP and/or CP without PP (+ DP/ZeRO) */
    MESH_FAMILY_PP,    /**< PP (+ TP, CP, DP/ZeRO) */
    MESH_FAMILY_COUNT
} mesh_family_t;

/** What refused a family, or that nothing fits. */
typedef enum mesh_reason_kind {
    /** it fits, but its fastest layout is slower than the plan's */
    MESH_REASON_SLOWER,
    /** its layout needing the least memory needs more than is usable */
    MESH_REASON_MEMORY,
    /** none of its layouts is valid here: `rule` says which rule refused one */
    MESH_REASON_RULE,
    /** the pinned layout fields exclude every layout of it */
    MESH_REASON_PINNED,
    /** nothing fits: the closest layout (the plan's best) and its need */
    MESH_REASON_NO_FIT,
    /** not in the reasons: mesh_plan_near_tie's record, why the fastest
     * near-tie (within MESH_PLAN_TIE) was passed over for a layout slower
     * by the model; `tie` says which rule decided (doc/design.md,
     * "Selection") */
    MESH_REASON_NEAR_TIE,
    /** a MoE model's expert parallelism: with `chosen` the plan's own EP
     * and why; otherwise another EP of the plan's shape, with the same
     * outcomes as SLOWER (candidate fits), MEMORY (it does not) or RULE
     * (rule set) */
    MESH_REASON_EXPERTS,
    /** the search's own bounds leave out every layout of it on this
     * allocation, no tp or cp above 1 being pinned (the search takes a
     * pinned one as given): `rule` says which (TP without NVLink or whose
     * heads no TP NVLink allows divides, CP for short sequences) */
    MESH_REASON_UNTRIED,
} mesh_reason_kind_t;

/** Which near-tie rule decided (MESH_REASON_NEAR_TIE). */
typedef enum mesh_tie_rule {
    /** the chosen layout is simpler than the fastest */
    MESH_TIE_SIMPLER,
    /** the fastest needed too much of the usable memory: the chosen one
     * leaves at least MESH_PLAN_HEADROOM of it more free than the simplest
     * near-tie, which needed more than MESH_PLAN_TIGHT */
    MESH_TIE_HEADROOM,
} mesh_tie_rule_t;

/** Why the plan did not take another EP whose best step is faster
 * (MESH_REASON_EXPERTS, a record that fits and is faster), judged by the
 * EP search's own bound for NVLink: a node's island, or the fabric across
 * GB200/GB300 trays. */
typedef enum mesh_ep_untaken {
    /** not faster, or no reason known (an EP the search would have taken) */
    MESH_EP_UNTAKEN_NONE,
    /** within MESH_PLAN_TIE of the chosen layout: the near-tie rule chose */
    MESH_EP_UNTAKEN_NEAR_TIE,
    /** beyond NVLink's reach, where the plan's EP is within it: the search
     * tries EP beyond it only where none within it fits the shape */
    MESH_EP_UNTAKEN_NVLINK_FIRST,
    /** beyond NVLink's reach, as the plan's is: the search tries there
     * the smallest EP that fits and, where that one needs recomputation
     * or a lever, the largest; r's is neither */
    MESH_EP_UNTAKEN_SMALLEST_ACROSS,
} mesh_ep_untaken_t;

/** One reason, the record behind mesh_plan_reason's line of the same index. */
typedef struct mesh_reason {
    mesh_reason_kind_t kind;
    /* the family refused; NO_FIT: the closest layout's; NEAR_TIE: the
     * fastest layout's */
    mesh_family_t family;
    /* SLOWER: the family's fastest fitting layout, priced (memory and
     * cost); MEMORY: its layout needing the least memory (memory priced,
     * cost not: zero); NO_FIT: the closest layout, mesh_plan_best's copy;
     * RULE: only .layout, the layout refused, and .micro_batches; PINNED
     * and UNTRIED: all zero; NEAR_TIE: the fastest near-tie, priced.  Where
     * priced, memory.total is the need and memory.capacity the usable
     * memory it is held against (bytes per GPU). */
    mesh_candidate_t candidate;
    double best_seconds; /* SLOWER, NEAR_TIE, EXPERTS: the chosen layout's step time */
    /* RULE, EXPERTS: mesh_layout_check's message for candidate.layout;
     * UNTRIED: the search's bounds that leave the family out */
    char rule[MESH_ERROR_MAX];
    double best_bytes;   /* NEAR_TIE: the chosen layout's memory.total */
    mesh_tie_rule_t tie; /* NEAR_TIE: the rule that decided */
    /* NEAR_TIE decided by MESH_TIE_HEADROOM: the share of its usable memory
     * the simplest near-tie needed (above MESH_PLAN_TIGHT), which the
     * chosen layout's is at least MESH_PLAN_HEADROOM under; 0 otherwise */
    double tight_share;
    /* EXPERTS: 1 for the plan's own EP (candidate: the plan's layout), and
     * the nodes one expert-parallel group of candidate.layout spans, and
     * 1 where those nodes are trays of one NVLink fabric (GB200 NVL72),
     * its all-to-all on NVLink; ep_nvlink: 1 where the group is within
     * NVLink's reach, its all-to-all priced on NVLink, 0 otherwise (across
     * the network, or inside a node beyond a smaller island: PCIe GPUs,
     * H100 NVL's pairs, --nvlink 4); EP 1 has no all-to-all and reads 1 */
    int chosen, ep_nodes, ep_fabric, ep_nvlink;
    /* EXPERTS, another EP that fits and is faster: why the plan did not take it */
    mesh_ep_untaken_t untaken;
} mesh_reason_t;

/** What would fit, when the plan does not. */
typedef enum mesh_advice_kind {
    /** one pinned field is in the way: freeing `field` alone fits */
    MESH_ADVICE_UNPIN,
    /** no single pin is in the way, but planning every field fits */
    MESH_ADVICE_UNPIN_ALL,
    /** more nodes: `nodes` of them (`gpus` GPUs) fit the spec's training
     * (`finetune`: full, or LoRA where the spec asks for it) */
    MESH_ADVICE_NODES,
    /** full fine-tuning is out of reach: its model states against the
     * usable memory of the whole allocation */
    MESH_ADVICE_OUT_OF_REACH,
    /** parameter-efficient fine-tuning (LoRA) fits on this allocation */
    MESH_ADVICE_LORA,
    /** LoRA would fit on `nodes` nodes (`gpus` GPUs) */
    MESH_ADVICE_LORA_NODES,
    /** the optimizer offloaded to host memory fits on this allocation
     * with `host_memory` bytes of it per node */
    MESH_ADVICE_OFFLOAD,
    /** the spec's training (`finetune`), which fits nowhere in fp8, fits
     * on this allocation in bf16: ZeRO does not shard Transformer Engine's
     * FP8 weight copies (under DeepSpeed, which trains every LoRA
     * data-parallel, or Megatron-LM where it gathers no FP8 parameters) */
    MESH_ADVICE_BF16,
    /** the same on `nodes` nodes (`gpus` GPUs), the fewest that fit */
    MESH_ADVICE_BF16_NODES,
} mesh_advice_kind_t;

/** One piece of advice, the record behind mesh_plan_advice's line of the same index. */
typedef struct mesh_advice {
    mesh_advice_kind_t kind;
    /* the layout that would fit, as a first-fit search found it: memory
     * priced (on NODES and LORA_NODES, on that many nodes), cost not
     * estimated (zero); OUT_OF_REACH: all zero */
    mesh_candidate_t candidate;
    /* UNPIN: the --mesh key freed ("zero", "recompute", "mb", "tp", "pp",
     * "cp", "vpp", "dp", "ep" or "etp"; static storage, never freed), its pinned value
     * and the value that fits (recompute: mesh_recompute_t values) */
    const char *field;
    int pinned, value;
    int nodes, gpus;    /* NODES, LORA_NODES, BF16_NODES: the allocation that fits */
    double host_memory; /* OFFLOAD: host memory per node the layout needs, bytes */
    /* OUT_OF_REACH: model-state bytes per parameter (weights, gradients
     * and optimizer, unsharded), their bytes for the whole model, and the
     * usable bytes of the whole allocation */
    double bytes_per_param, states, usable;
    mesh_finetune_t finetune; /* NODES, BF16, BF16_NODES: the training that fits, the spec's */
    /* 1 where the layout was priced in bf16 instead of the spec's fp8,
     * which fits nowhere: BF16, BF16_NODES, and LORA or LORA_NODES where
     * LoRA fits only so; 0 on the other records */
    int bf16;
} mesh_advice_t;

/**
 * The record behind mesh_plan_reason(p, i) (mesh_plan_reason_count(p) of
 * them), or NULL unless 0 <= i < count.  p must not be NULL.  Points into
 * p (the caller frees nothing), valid until mesh_plan_destroy(p).  The
 * runners-up need no record: mesh_plan_alternative gives them whole.
 */
MESH_API const mesh_reason_t *mesh_plan_reason_record(const mesh_plan_t *p, int i);

/**
 * The record behind mesh_plan_advice(p, i) (mesh_plan_advice_count(p) of
 * them), or NULL unless 0 <= i < count.  p must not be NULL.  Points into
 * p (the caller frees nothing), valid until mesh_plan_destroy(p); its
 * field string is static and outlives p.
 */
MESH_API const mesh_advice_t *mesh_plan_advice_record(const mesh_plan_t *p, int i);

/**
 * Why the plan's layout is not the fastest it found: a record of kind
 * MESH_REASON_NEAR_TIE, whose candidate is the fastest layout within
 * MESH_PLAN_TIE of it (priced), best_seconds and best_bytes the chosen
 * layout's step time and memory, and tie the rule that decided; or NULL
 * when the plan's layout is the fastest, or nothing fits.  p must not be
 * NULL.  Points into p (the caller frees nothing), valid until
 * mesh_plan_destroy(p).  mesh_report_reason renders it as a line.
 */
MESH_API const mesh_reason_t *mesh_plan_near_tie(const mesh_plan_t *p);

/**
 * A family's short name, as the JSON report writes it: "dp", "zero1",
 * "zero2", "zero3", "tp" or "pp"; NULL for a value out of range.  A static
 * string.
 */
MESH_API const char *mesh_family_name(mesh_family_t f);

/**
 * The line of one reason record, as mesh_plan_reason gives it (at most
 * 383 characters there), into buf[len] (len > 0; truncated to fit; no
 * newline).  r must not be NULL; a kind out of range gives "".  Returns
 * buf; thread-safe.
 */
MESH_API const char *mesh_report_reason(const mesh_reason_t *r, char *buf, size_t len);

/**
 * The line of one advice record, as mesh_plan_advice gives it, into
 * buf[len] as mesh_report_reason does.  a must not be NULL, nor a->field
 * on MESH_ADVICE_UNPIN.  Returns buf; thread-safe.
 */
MESH_API const char *mesh_report_advice(const mesh_advice_t *a, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
