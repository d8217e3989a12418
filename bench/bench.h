/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the in-process benchmarks share (bench_plan.c, bench_submit.c):
 * their clocks and the order their samples are sorted in.
 */
#ifndef MESH_BENCH_H
#define MESH_BENCH_H

#include <time.h>

/* Seconds on clock c: CLOCK_MONOTONIC for what a caller waits, and
 * CLOCK_THREAD_CPUTIME_ID for what the thread itself ran, which a loaded
 * machine's other work does not stretch. */
static inline double bench_clock(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline double now(void)
{
    return bench_clock(CLOCK_MONOTONIC);
}

/* qsort's order for doubles, ascending. */
static inline int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif
