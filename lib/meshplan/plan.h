/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan: the planner.
 *
 * Searches every valid (tp, cp, pp, dp, zero, vpp, micro_batch, recompute)
 * for an allocation, keeps the layouts whose worst rank fits the usable GPU
 * memory, and picks the lowest predicted step time; on near-ties (within
 * MESH_PLAN_TIE) it prefers memory headroom over a tight layout, then the
 * simpler layout: DP+ZeRO, then TP, then PP.
 * It explains itself: runners-up, why each simpler layout was refused, and
 * when nothing fits, by how much and what would.  A plan is a pure function
 * of its inputs, so every node of a job computes the same one.
 */
#ifndef MESHPLAN_PLAN_H
#define MESHPLAN_PLAN_H

#include "meshplan/api.h"
#include "meshplan/cost.h"
#include "meshplan/layout.h"
#include "meshplan/memory.h"
#include "meshplan/policy.h"
#include "meshplan/spec.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MESH_PLAN_TIE 0.01 /* step times within 1% are a tie */
/* Near-ties prefer memory headroom: when the simplest needs more than
 * MESH_PLAN_TIGHT of the usable memory, the simplest near-tie needing at
 * least MESH_PLAN_HEADROOM of it less is picked instead (doc/design.md,
 * "Selection"). */
#define MESH_PLAN_TIGHT        0.90
#define MESH_PLAN_HEADROOM     0.10
#define MESH_PLAN_ALTERNATIVES 5 /* runners-up kept at most */
/* A plan needing more than MESH_PLAN_FULL of its usable memory is tight:
 * the memory model is an estimate (the published allocations it is checked
 * against differ by a few per cent), so the report flags it and prices the
 * fastest layout leaving the rest free (mesh_plan_tight). */
#define MESH_PLAN_FULL 0.95
/* The headroom a tight plan's alternative leaves: the part of the usable
 * memory that MESH_PLAN_FULL leaves free, written once for the planner and
 * the report. */
#define MESH_PLAN_ROOM (1 - MESH_PLAN_FULL)

/** A plan, opaque: made by mesh_plan_create, freed by mesh_plan_destroy. */
typedef struct mesh_plan mesh_plan_t;

/** One evaluated layout. */
typedef struct mesh_candidate {
    mesh_layout_t layout; /* complete: no field MESH_FREE */
    long micro_batches;   /* per optimizer step per pipeline */
    mesh_memory_t memory; /* the worst rank's */
    mesh_cost_t cost;     /* predicted step time */
    /* 1: fits the usable GPU memory and, with the optimizer offloaded, 80%
     * of the node's host memory */
    int fits;
} mesh_candidate_t;

/**
 * Plan model m on allocation a.  Fields of pins that are not MESH_FREE are
 * fixed (pins may be NULL); the spec's micro_batch and recompute act as pins
 * unless pins set them (MESH_AUTO: planned anyway).  assume is the policy's
 * assumptions (mesh_policy_t's `assume`: reserve, overheads; the GPU
 * overrides are already in a), NULL for mesh_policy_init's.  m, a, pins
 * and assume are copied: the plan keeps no pointer to them.
 *
 * Returns a new plan, which the caller frees with mesh_plan_destroy, or
 * NULL with err set on bad input: an allocation out of range (nodes
 * 1..2^20, gpus_per_node 1..1024, at most 2^22 GPUs, island >= 1, GPU
 * memory known), a precision the GPU lacks, offload pinned without host
 * memory, pins (or a model) that no valid layout satisfies, or memory
 * running out.  A plan that does not fit is not an error: see
 * mesh_plan_fits.  Deterministic and thread-safe; the search is exhaustive
 * and, when nothing fits, the advice runs further searches.
 */
MESH_API mesh_plan_t *mesh_plan_create(const mesh_model_t *m, const mesh_alloc_t *a,
                                       const mesh_layout_t *pins, const mesh_assumptions_t *assume,
                                       mesh_error_t *err);

/**
 * Free a plan and everything its accessors returned.  p may be NULL.
 * mesh_env_create's environments and the reports' strings are copies and
 * outlive it.
 */
MESH_API void mesh_plan_destroy(mesh_plan_t *p);

/** 1 if the chosen layout fits in usable memory, 0 if none does. */
MESH_API int mesh_plan_fits(const mesh_plan_t *p);

/**
 * 1 if some layout of m fits a, from the same inputs as mesh_plan_create;
 * 0 if none does or an input is bad (mesh_plan_create says why).  It stops
 * at the first fitting layout and prices none: a quick yes for the
 * controller.
 */
MESH_API int mesh_plan_any_fits(const mesh_model_t *m, const mesh_alloc_t *a,
                                const mesh_layout_t *pins, const mesh_assumptions_t *assume);

/**
 * mesh_plan_any_fits, saying which way a count does not fit: 1 if some
 * layout fits; 0 if valid layouts exist but none fits in memory; -1 if no
 * layout is valid at all (the allocation's GPUs do not split into tp, cp,
 * pp and dp by the model's rules), with err set to the reason alone, as mesh_plan_create's error
 * ends ("pp 19 cannot split 80 layers ...").  -2 with err set when an input is bad
 * (mesh_plan_create's error) or memory runs out.  Costs mesh_plan_any_fits, and a search of the
 * invalid layouts only where the first finds no valid one.  err must not be NULL.
 */
MESH_API int mesh_plan_fit_status(const mesh_model_t *m, const mesh_alloc_t *a,
                                  const mesh_layout_t *pins, const mesh_assumptions_t *assume,
                                  mesh_error_t *err);

/**
 * The chosen layout; when nothing fits, the one that needs the least
 * memory, priced all the same.  Never NULL; points into p, valid until
 * mesh_plan_destroy(p).
 */
MESH_API const mesh_candidate_t *mesh_plan_best(const mesh_plan_t *p);

/**
 * Runners-up: the fastest fitting layout of each other (tp, cp, pp) shape,
 * fastest first, at most MESH_PLAN_ALTERNATIVES (none when nothing fits).
 * mesh_plan_alternative returns NULL unless 0 <= i < count; its pointer is
 * into p, valid until mesh_plan_destroy(p).
 */
MESH_API int mesh_plan_alternative_count(const mesh_plan_t *p);
MESH_API const mesh_candidate_t *mesh_plan_alternative(const mesh_plan_t *p, int i);

/**
 * Why simpler layouts were refused, or when nothing fits why (one line
 * each, at most 24 lines of at most 383 characters).  mesh_plan_reason
 * returns NULL unless 0 <= i < count; the string is in p, valid until
 * mesh_plan_destroy(p).  Each line is rendered from a record that
 * mesh_plan_reason_record (explain.h) gives, at the same index.
 */
MESH_API int mesh_plan_reason_count(const mesh_plan_t *p);
MESH_API const char *mesh_plan_reason(const mesh_plan_t *p, int i);

/**
 * What would fit when the chosen layout does not (one line each, at most
 * 24; none when it fits): a pin to drop, more nodes, or LoRA.
 * mesh_plan_advice returns NULL unless 0 <= i < count; the string is in p,
 * valid until mesh_plan_destroy(p).  Each line is rendered from the record
 * mesh_plan_advice_record (explain.h) gives, at the same index.
 */
MESH_API int mesh_plan_advice_count(const mesh_plan_t *p);
MESH_API const char *mesh_plan_advice(const mesh_plan_t *p, int i);

/** Layouts evaluated by the search (for benchmarks and reports). */
MESH_API long mesh_plan_evaluated(const mesh_plan_t *p);

/**
 * The units of planning work the plan cost: the unit of the controller's
 * work budget (one a layout considered, one or more a pricing of its memory
 * or step; doc/design.md, "Work budget"), counted whether a budget limits
 * the plan or not.  What a plan's search costs, for admins sizing that
 * budget and for tests of the search's own work.
 */
MESH_API long mesh_plan_work(const mesh_plan_t *p);

/**
 * Whether the chosen layout is tight: 1 when it fits and needs more than
 * MESH_PLAN_FULL of the usable memory before headroom (mesh_policy_usable
 * with none: a plan leaving the headroom asked is not tight), else 0.  When
 * tight and roomier is not NULL, *roomier is the layout the plan would
 * choose with headroom MESH_PLAN_ROOM (its memory.capacity is the
 * usable memory before headroom, for comparison), or NULL when no layout of
 * the allocation leaves that much.  Valid until mesh_plan_destroy.
 */
MESH_API int mesh_plan_tight(const mesh_plan_t *p, const mesh_candidate_t **roomier);

/**
 * The inputs the plan was made from: the plan's own copies, valid until
 * mesh_plan_destroy(p).  The allocation's island is capped at its GPUs per
 * node, so it may differ from what was passed.
 */
MESH_API const mesh_model_t *mesh_plan_model(const mesh_plan_t *p);
MESH_API const mesh_alloc_t *mesh_plan_alloc(const mesh_plan_t *p);
/** The assumptions the plan was made with (the policy's, or the defaults
 * where none were given), valid until mesh_plan_destroy(p). */
MESH_API const mesh_assumptions_t *mesh_plan_assumptions(const mesh_plan_t *p);

/**
 * A 64-bit FNV-1a digest of everything that determines the plan's result
 * (model digest, allocation and GPU figures, host memory, the assumptions'
 * reserve and overheads, chosen layout), as 16 hex digits: a string in p,
 * valid until mesh_plan_destroy(p).
 */
MESH_API const char *mesh_plan_digest(const mesh_plan_t *p);

#ifdef __cplusplus
}
#endif
#endif
