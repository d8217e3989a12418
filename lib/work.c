/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The work budget (internal.h, mesh_work_t): the one this thread's
 * searches count against, and the parts a judgement cuts it into.
 */
#include <limits.h>
#include <stddef.h>

#include "internal.h"

/* One per thread, so that slurmctld's threads, should they judge at once,
 * each count their own submission's work. */
static _Thread_local mesh_work_t *work_in_use;

mesh_work_t *mesh_work_current(void)
{
    return work_in_use;
}

mesh_work_t *mesh_work_use(mesh_work_t *w)
{
    mesh_work_t *was = work_in_use;
    work_in_use = w;
    return was;
}

mesh_work_t *mesh_work_part(mesh_work_t *part, long cap)
{
    mesh_work_t *whole = work_in_use;
    if (!whole || cap <= 0)
        return whole;
    long left = whole->limit - whole->spent;
    *part = (mesh_work_t){cap < left ? cap : left, 0, whole->stopped, whole->advice, 0};
    work_in_use = part;
    return whole;
}

void mesh_work_join(mesh_work_t *whole, const mesh_work_t *part)
{
    if (!whole || work_in_use != part)
        return; /* no part was begun */
    whole->spent += part->spent;
    whole->cut |= part->stopped | part->cut;
    if (whole->spent >= whole->limit)
        whole->stopped = 1;
    work_in_use = whole;
}

mesh_work_t *mesh_work_counted(mesh_work_t *counter)
{
    if (work_in_use)
        return work_in_use;
    *counter =
        (mesh_work_t){LONG_MAX / 2, 0, 0, 0, 0}; /* no advice cap: mesh_advise takes no part */
    return work_in_use = counter;
}

void mesh_work_uncount(const mesh_work_t *counter)
{
    if (work_in_use == counter)
        work_in_use = NULL;
}

void mesh_work_spend(long n)
{
    if (work_in_use && (work_in_use->spent += n) >= work_in_use->limit)
        work_in_use->stopped = 1;
}

int mesh_work_stopped(void)
{
    return work_in_use && work_in_use->stopped;
}

long mesh_work_limit(void)
{
    return work_in_use ? work_in_use->limit : 0;
}

long mesh_work_advice(void)
{
    return work_in_use ? work_in_use->advice : 0;
}
