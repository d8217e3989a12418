/*
 * meshplan: the planner.
 *
 * Searches every valid (tp, cp, pp, dp, zero, vpp, micro_batch, recompute)
 * for an allocation, keeps the layouts whose worst rank fits the usable GPU
 * memory, and picks the lowest predicted step time; on near-ties (within
 * MESH_PLAN_TIE) it prefers the simpler layout: DP+ZeRO, then TP, then PP.
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

#define MESH_PLAN_TIE          0.01 /* step times within 1% are a tie */
#define MESH_PLAN_ALTERNATIVES 5

typedef struct mesh_plan mesh_plan_t;

/* One evaluated layout. */
typedef struct mesh_candidate {
    mesh_layout_t layout;
    long micro_batches; /* per optimizer step per pipeline */
    mesh_memory_t memory;
    mesh_cost_t cost;
    int fits;
} mesh_candidate_t;

/* Plan model m on allocation a.  Fields of pins that are not MESH_FREE are
 * fixed (pins may be NULL); the spec's micro_batch and recompute act as pins
 * unless pins set them (MESH_AUTO: planned anyway).  pol may be NULL for the
 * default policy.  Returns NULL with err set on bad input (including
 * pins that no valid layout satisfies); a plan that does not fit is not an
 * error: see mesh_plan_fits. */
MESH_API mesh_plan_t *mesh_plan_create(const mesh_model_t *m, const mesh_alloc_t *a,
                                       const mesh_layout_t *pins, const mesh_policy_t *pol,
                                       mesh_error_t *err);
MESH_API void mesh_plan_destroy(mesh_plan_t *p);

/* 1 if the chosen layout fits in usable memory. */
MESH_API int mesh_plan_fits(const mesh_plan_t *p);

/* 1 if some layout of m fits a, from the same inputs as mesh_plan_create;
 * 0 if none does or an input is bad (mesh_plan_create says why).  It stops
 * at the first fitting layout and prices none: a quick yes for the controller. */
MESH_API int mesh_plan_any_fits(const mesh_model_t *m, const mesh_alloc_t *a,
                                const mesh_layout_t *pins, const mesh_policy_t *pol);

/* The chosen layout; when nothing fits, the one that comes closest. */
MESH_API const mesh_candidate_t *mesh_plan_best(const mesh_plan_t *p);

/* Runners-up: the fastest fitting layout of each other (tp, cp, pp) shape. */
MESH_API int mesh_plan_alternative_count(const mesh_plan_t *p);
MESH_API const mesh_candidate_t *mesh_plan_alternative(const mesh_plan_t *p, int i);

/* Why simpler layouts were refused, and why nothing fits (one line each). */
MESH_API int mesh_plan_reason_count(const mesh_plan_t *p);
MESH_API const char *mesh_plan_reason(const mesh_plan_t *p, int i);

/* What would fit when the chosen layout does not (one line each). */
MESH_API int mesh_plan_advice_count(const mesh_plan_t *p);
MESH_API const char *mesh_plan_advice(const mesh_plan_t *p, int i);

/* Layouts evaluated (for benchmarks and reports). */
MESH_API long mesh_plan_evaluated(const mesh_plan_t *p);

/* The inputs the plan was made from. */
MESH_API const mesh_model_t *mesh_plan_model(const mesh_plan_t *p);
MESH_API const mesh_alloc_t *mesh_plan_alloc(const mesh_plan_t *p);

/* A 64-bit FNV-1a digest of everything that determines the plan's result
 * (model numbers, allocation, chosen layout), as 16 hex digits. */
MESH_API const char *mesh_plan_digest(const mesh_plan_t *p);

#ifdef __cplusplus
}
#endif
#endif
