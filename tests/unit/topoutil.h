/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Helpers of the topology suites (test_topo, test_topo_real): load an XML
 * export and compare its GPUs with what the test expects.
 */
#ifndef MESH_TOPOUTIL_H
#define MESH_TOPOUTIL_H

#include <dirent.h>

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

/* The expected answers (tests/fixtures/topologies/expected.MACHINE, as
 * mpibind keeps expected.MACHINE): what `meshplan topo` shows of
 * MACHINE.xml, '#' lines aside.  Every MACHINE.xml of xml_dir must have
 * one, and every expected file whose XML is in xml_dir must match; returns
 * how many were compared. */
static inline int topo_matches_expected(const char *xml_dir, const char *expected_dir)
{
    DIR *d = opendir(xml_dir);
    struct dirent *e;
    int n = 0;
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    if (!d)
        fail_msg("%s: cannot list it", xml_dir);
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        char machine[256], path[1024], text[1 << 14] = "", line[1024];
        if (len < 5 || strcmp(e->d_name + len - 4, ".xml") != 0 || len >= sizeof(machine))
            continue;
        snprintf(machine, sizeof(machine), "%.*s", (int)len - 4, e->d_name);
        snprintf(path, sizeof(path), "%s/expected.%s", expected_dir, machine);
        FILE *f = fopen(path, "r");
        if (!f)
            fail_msg("%s has no expected answer: add %s (meshplan topo --topology %s, checked "
                     "by hand)",
                     e->d_name, path, e->d_name);
        while (fgets(line, sizeof(line), f))
            if (line[0] != '#')
                strncat(text, line, sizeof(text) - strlen(text) - 1);
        fclose(f);
        mesh_topo_t *t = load(xml_dir, e->d_name);
        char *got = mesh_listing_topo(t, e->d_name, &pol, 0);
        if (!got || strcmp(got, text) != 0)
            fail_msg("%s: meshplan topo shows\n%s\nexpected (%s)\n%s", e->d_name,
                     got ? got : "(null)", path, text);
        free(got);
        mesh_topo_destroy(t);
        n++;
    }
    closedir(d);
    return n;
}

#endif
