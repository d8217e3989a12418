/*
 * meshplan: pictures of a plan.
 *
 * Three views, for the terminal and as one SVG: the rank map (nodes x GPUs,
 * each cell its pipeline stage, DP replica and TP rank, stages coloured),
 * the pipeline timeline (stages x time under the plan's schedule, 1F1B or
 * interleaved, with its bubble) and the worst rank's memory (weights,
 * gradients, optimizer states, activations and overhead against what is
 * usable).  Large allocations and long pipelines are summarised.
 */
#ifndef MESHPLAN_PICTURE_H
#define MESHPLAN_PICTURE_H

#include "meshplan/api.h"
#include "meshplan/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How the text pictures may be drawn. */
typedef struct mesh_picture_opts {
    int color; /* ANSI colours */
    int width; /* columns available; 0: 100 */
} mesh_picture_opts_t;

/* The options for pictures written to fd: colour only on a terminal and
 * never with NO_COLOR (no-color.org); the terminal's width under 100. */
MESH_API mesh_picture_opts_t mesh_picture_opts_for(int fd);

/* All three text pictures, malloc'd (free() it); NULL only out of memory. */
MESH_API char *mesh_picture_text(const mesh_plan_t *p, const mesh_picture_opts_t *o);

/* One picture each. */
MESH_API char *mesh_picture_ranks(const mesh_plan_t *p, const mesh_picture_opts_t *o);
MESH_API char *mesh_picture_pipeline(const mesh_plan_t *p, const mesh_picture_opts_t *o);
MESH_API char *mesh_picture_memory(const mesh_plan_t *p, const mesh_picture_opts_t *o);

/* The three as one self-contained SVG document (no scripts, no external
 * fonts), malloc'd. */
MESH_API char *mesh_picture_svg(const mesh_plan_t *p);

/* One unit of work of the pipeline schedule: stage `stage` runs the forward
 * (kind 'F') or backward ('B') pass of micro-batch `mb` through its model
 * chunk `chunk`, from time slot `start` for `len` slots. */
typedef struct mesh_pipe_op {
    int stage, chunk, mb, start, len;
    char kind;
} mesh_pipe_op_t;

/* Simulate Megatron's schedule (1F1B; interleaved when vpp > 1, which needs
 * m % pp == 0) for pp stages and m micro-batches, a forward taking one slot
 * and a backward two.  Fills ops (2*pp*vpp*m of them, malloc'd) and returns
 * the slots the whole schedule takes, or -1 on bad arguments. */
MESH_API int mesh_pipe_schedule(int pp, int vpp, int m, mesh_pipe_op_t **ops);

#ifdef __cplusplus
}
#endif
#endif
