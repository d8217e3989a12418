/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the planner's suites (test_plan*.c) share.
 */
#ifndef MESH_TEST_PLANUTIL_H
#define MESH_TEST_PLANUTIL_H

#include "testutil.h"

/* The seed's 16 bytes per parameter are Megatron-LM's with 2-byte
 * gradient buffers (--main-grads-dtype bf16); DeepSpeed keeps an fp32
 * gradient partition beside them (18/d at ZeRO-3), so the seed names it. */
static inline mesh_model_t seed_7b(void)
{
    return test_spec("name: seed-7b\nparams: 7e9\ntrain:\n  seq_len: 4096\n  global_batch: 64\n"
                     "  grad_accum_dtype: bf16\n  framework: megatron\n");
}

/* The memory the plan of m on a with the pins mesh needs. */
static inline double total_with(const mesh_model_t *m, const mesh_alloc_t *a, const char *mesh)
{
    mesh_plan_t *p = test_plan(m, a, mesh);
    double t = mesh_plan_best(p)->memory.total;
    mesh_plan_destroy(p);
    return t;
}

/* Seed 7B on 4 GPUs of 80e9 bytes (usable 0.97 of it: 77.6e9, 72.3 GiB).
 * Plain DP keeps fp32 main gradients (Megatron-LM's 2-byte ones need the
 * distributed optimizer, doc/design.md, "Memory"): 2 + 4 + 12 = 18 bytes a
 * parameter, 126e9 bytes (weights 13.0, grads 26.1, optimizer 78.2 GiB),
 * plus 1.25 GiB overhead: 118.6 GiB.  ZeRO-1 fits: 2 + 2 + 12/4 bytes. */
static inline mesh_alloc_t alloc_80e9(int nodes, int gpus)
{
    return test_alloc_mem(NULL, 80e9, nodes, gpus);
}

#endif
