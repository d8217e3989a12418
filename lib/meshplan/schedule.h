/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan: the pipeline schedule, simulated.
 *
 * Which stage runs which micro-batch's forward or backward, slot by slot,
 * under Megatron-LM's 1F1B and interleaved schedules: what the pipeline
 * picture draws, and where the bubble comes from.
 */
#ifndef MESHPLAN_SCHEDULE_H
#define MESHPLAN_SCHEDULE_H

#include "meshplan/api.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One unit of work of the pipeline schedule: stage `stage` runs the forward
 * (kind 'F') or backward ('B') pass of micro-batch `mb` through its model
 * chunk `chunk`, from time slot `start` for `len` slots. */
typedef struct mesh_pipe_op {
    int stage, chunk, mb, start, len;
    char kind;
} mesh_pipe_op_t;

/**
 * Simulate Megatron's schedule (1F1B; interleaved when vpp > 1) for pp
 * stages and m micro-batches, a forward taking one slot and a backward
 * two.  On success sets *ops (ops not NULL) to a malloc'd array of
 * 2*pp*vpp*m operations, in the order they were scheduled, which the
 * caller frees with free(), and returns the slots the whole schedule
 * takes.  Returns -1 with *ops NULL on bad arguments (pp, vpp or m below 1,
 * vpp > 1 with m not a multiple of pp, pp*vpp*m above 2^20) or when memory
 * runs out.
 */
MESH_API int mesh_pipe_schedule(int pp, int vpp, int m, mesh_pipe_op_t **ops);

#ifdef __cplusplus
}
#endif
#endif
