/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pipeline schedule, simulated slot by slot (schedule.h): Megatron-LM's
 * 1F1B and interleaved orders (megatron/core/pipeline_parallel/schedules.py),
 * each unit starting as soon as its stage is free and its input is ready.
 * The pictures draw it; the bubble it leaves is the (p-1)/(v*m) the cost
 * model prices.
 */
#include <stdlib.h>

#include "meshplan/schedule.h"

/* Micro-batch and chunk of the k-th forward (or backward) unit of a stage:
 * Megatron's interleaved order, groups of pp micro-batches per chunk. */
static void unit(int pp, int vpp, int k, int forward, int *chunk, int *mb)
{
    if (vpp == 1) {
        *chunk = 0;
        *mb = k;
        return;
    }
    int group = k / (pp * vpp), r = k % (pp * vpp), c = r / pp;
    *chunk = forward ? c : vpp - 1 - c;
    *mb = group * pp + r % pp;
}

/* Forward units run before the first backward on stage s (Megatron's
 * warm-up), the rest alternate one forward, one backward. */
static int warmup(int pp, int vpp, int m, int s)
{
    int total = m * vpp;
    if (vpp == 1)
        return pp - s - 1 < total ? pp - s - 1 : total;
    if (m == pp)
        return total;
    int w = (pp - s - 1) * 2 + (vpp - 1) * pp;
    return w < total ? w : total;
}

/* The n-th unit stage s runs: its kind and index among units of that kind. */
static void nth_unit(int pp, int vpp, int m, int s, int n, char *kind, int *k)
{
    int total = m * vpp, w = warmup(pp, vpp, m, s);
    if (n < w) {
        *kind = 'F', *k = n;
    } else if (n < w + 2 * (total - w)) {
        int i = (n - w) / 2;
        *kind = (n - w) % 2 ? 'B' : 'F';
        *k = *kind == 'F' ? w + i : i;
    } else {
        *kind = 'B', *k = n - w - (total - w);
    }
}

int mesh_pipe_schedule(int pp, int vpp, int m, mesh_pipe_op_t **out)
{
    *out = NULL;
    if (pp < 1 || vpp < 1 || m < 1 || (vpp > 1 && m % pp) || (long)pp * vpp * m > (1L << 20))
        return -1;
    int total = m * vpp, n = 2 * pp * total, virt = pp * vpp;
    mesh_pipe_op_t *ops = calloc((size_t)n, sizeof(*ops));
    int *fend = malloc(sizeof(int) * (size_t)virt * (size_t)m);
    int *bend = malloc(sizeof(int) * (size_t)virt * (size_t)m);
    int *next = calloc((size_t)pp, sizeof(int)), *free_at = calloc((size_t)pp, sizeof(int));
    int done = 0, slots = 0;
    if (!ops || !fend || !bend || !next || !free_at)
        goto fail;
    for (int i = 0; i < virt * m; i++)
        fend[i] = bend[i] = -1;
    while (done < n) {
        int progress = 0;
        for (int s = 0; s < pp; s++) {
            while (next[s] < 2 * total) {
                char kind;
                int k, c, mb;
                nth_unit(pp, vpp, m, s, next[s], &kind, &k);
                unit(pp, vpp, k, kind == 'F', &c, &mb);
                int g = c * pp + s; /* virtual stage: chunk c of stage s */
                int dep = kind == 'F'     ? (g == 0 ? 0 : fend[(g - 1) * m + mb])
                          : g == virt - 1 ? fend[g * m + mb]
                                          : bend[(g + 1) * m + mb];
                if (dep < 0)
                    break; /* waits for another stage */
                mesh_pipe_op_t *op = &ops[done++];
                op->stage = s, op->chunk = c, op->mb = mb, op->kind = kind;
                op->start = dep > free_at[s] ? dep : free_at[s];
                op->len = kind == 'F' ? 1 : 2; /* a backward costs about two forwards */
                free_at[s] = op->start + op->len;
                (kind == 'F' ? fend : bend)[g * m + mb] = free_at[s];
                slots = free_at[s] > slots ? free_at[s] : slots;
                next[s]++;
                progress = 1;
            }
        }
        if (!progress)
            goto fail; /* cannot happen with Megatron's orders; never loop forever */
    }
    free(fend), free(bend), free(next), free(free_at);
    *out = ops;
    return slots;
fail:
    free(ops), free(fend), free(bend), free(next), free(free_at);
    return -1;
}
