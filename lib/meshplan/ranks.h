/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan: the rank map.
 *
 * Megatron-LM's order, TP fastest: rank = tp + t*(cp + c*(dp + d*pp))
 * (MESH_ORDER=tp-cp-dp-pp).  A group is the set of ranks that differ in one
 * coordinate only.  Ranks are numbered node by node (Slurm's block
 * distribution: RANK == SLURM_PROCID), so a TP group never leaves a node
 * when tp divides the GPUs per node.
 */
#ifndef MESHPLAN_RANKS_H
#define MESHPLAN_RANKS_H

#include "meshplan/api.h"
#include "meshplan/layout.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MESH_ORDER "tp-cp-dp-pp"

/**
 * The axes: the layout's four, then the expert layers' three, which
 * re-partition each stage's tp*cp*dp ranks in Megatron-Core's expert rank
 * generator order, expert TP fastest: stage rank (rank mod tp*cp*dp) =
 * etp + etp_size*(ep + ep_size*edp) (megatron/core/parallel_state.py,
 * initialize_model_parallel: RankGenerator(tp=etp, ep=ep, dp=edp, pp, cp=1,
 * order "tp-cp-ep-dp-pp"), at 00caa53).  In a dense layout (ep 0) the
 * expert axes have size 1, and edp spans the stage.
 */
typedef enum mesh_axis {
    MESH_AXIS_TP,
    MESH_AXIS_CP,
    MESH_AXIS_DP,
    MESH_AXIS_PP,
    MESH_AXIS_EP,  /* expert parallel: ranks holding different experts */
    MESH_AXIS_ETP, /* expert tensor parallel: ranks splitting the same experts */
    MESH_AXIS_EDP, /* expert data parallel: ranks holding the same expert shard */
} mesh_axis_t;

/** A rank's position along each axis, 0-based (0 <= tp < l->tp, ...). */
typedef struct mesh_coords {
    int tp, cp, dp, pp;
    int ep, etp, edp; /* along the expert axes; 0, 0 and the stage rank in a dense layout */
} mesh_coords_t;

/*
 * The layout l must be complete (every size >= 1); none of these checks
 * its arguments or allocates.
 */

/**
 * Coordinates of a global rank, 0 <= rank < mesh_layout_world(l) (not
 * checked: a larger rank gives a pp coordinate past the last stage).
 */
MESH_API mesh_coords_t mesh_rank_coords(const mesh_layout_t *l, long rank);

/** Global rank of coordinates c, the inverse of mesh_rank_coords. */
MESH_API long mesh_rank_of(const mesh_layout_t *l, const mesh_coords_t *c);

/**
 * Size of the group along `axis` (l->tp, ...; l->ep and l->etp, 1 where
 * they are 0; mesh_layout_edp; any other axis value gives l->pp).
 */
MESH_API int mesh_axis_size(const mesh_layout_t *l, mesh_axis_t axis);

/**
 * The group of `rank` along `axis` is first, first + stride, ... (size
 * members): an arithmetic progression in this order.  Writes *first and
 * *stride.
 */
MESH_API void mesh_rank_group_span(const mesh_layout_t *l, long rank, mesh_axis_t axis, long *first,
                                   long *stride);

/**
 * The group of `rank` along `axis`, ascending, into out, which the caller
 * sizes for mesh_axis_size(l, axis) entries.
 */
MESH_API void mesh_rank_group(const mesh_layout_t *l, long rank, mesh_axis_t axis, long *out);

/** "tp", "cp", "dp", "pp", "ep", "etp" or "edp" ("?" for another value): a static string. */
MESH_API const char *mesh_axis_name(mesh_axis_t axis);

#ifdef __cplusplus
}
#endif
#endif
