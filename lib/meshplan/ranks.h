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

typedef enum mesh_axis { MESH_AXIS_TP, MESH_AXIS_CP, MESH_AXIS_DP, MESH_AXIS_PP } mesh_axis_t;

typedef struct mesh_coords {
    int tp, cp, dp, pp;
} mesh_coords_t;

/* Coordinates of a global rank (0 <= rank < world). */
MESH_API mesh_coords_t mesh_rank_coords(const mesh_layout_t *l, long rank);

/* Global rank of coordinates. */
MESH_API long mesh_rank_of(const mesh_layout_t *l, const mesh_coords_t *c);

/* Size of the group along `axis`. */
MESH_API int mesh_axis_size(const mesh_layout_t *l, mesh_axis_t axis);

/* The group of `rank` along `axis` is first, first + stride, ... (size
 * members): an arithmetic progression in this order. */
MESH_API void mesh_rank_group_span(const mesh_layout_t *l, long rank, mesh_axis_t axis, long *first,
                                   long *stride);

/* The group of `rank` along `axis`, ascending, into out[mesh_axis_size()]. */
MESH_API void mesh_rank_group(const mesh_layout_t *l, long rank, mesh_axis_t axis, long *out);

MESH_API const char *mesh_axis_name(mesh_axis_t axis);

#ifdef __cplusplus
}
#endif
#endif
