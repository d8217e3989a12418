/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Helpers of the topology suites (test_topo, test_topo_real): load an XML
 * export and compare its GPUs with what the test expects.
 */
#ifndef MESH_TOPOUTIL_H
#define MESH_TOPOUTIL_H

#include "testutil.h"

static inline mesh_topo_t *load(const char *dir, const char *file)
{
    char path[1024];
    mesh_error_t err;
    if (snprintf(path, sizeof(path), "%s/%s", dir, file) >= (int)sizeof(path))
        fail_msg("path too long: %s/%s", dir, file);
    mesh_topo_t *t = mesh_topo_load(path, &err);
    if (!t)
        fail_msg("%s", err.msg);
    return t;
}

/* Expected: PCI device of every GPU, each GPU's NUMA node and island. */
static inline void expect(const mesh_topo_t *t, int n, unsigned device, const int *numa,
                          const int *island, const char *links)
{
    assert_int_equal(mesh_topo_gpu_count(t), n);
    assert_string_equal(mesh_topo_links(t), links);
    for (int i = 0; i < n; i++) {
        const mesh_topo_gpu_t *g = mesh_topo_gpu(t, i);
        assert_int_equal(g->device_id, device);
        if (g->numa != numa[i] || g->island != island[i])
            fail_msg("GPU %d (%s): NUMA %d island %d, want NUMA %d island %d", i, g->busid, g->numa,
                     g->island, numa[i], island[i]);
        if (i)
            assert_true(strcmp(mesh_topo_gpu(t, i - 1)->busid, g->busid) < 0);
    }
}

static inline int alloc_island(const mesh_topo_t *t, int by_island, const char *model)
{
    mesh_alloc_t a;
    mesh_error_t err;
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    if (mesh_topo_alloc(t, &pol.assume, 2, by_island, &a, &err) < 0)
        fail_msg("%s", err.msg);
    assert_string_equal(a.gpu.name, model);
    assert_int_equal(a.gpus_per_node, mesh_topo_gpu_count(t));
    return a.island;
}

#endif
