/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan topo: what hwloc shows of a node and what the planner makes of it.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* meshplan topo: what hwloc shows and what the planner makes of it */
int cmd_topo(const options_t *o)
{
    mesh_topo_t *t;
    mesh_error_t err;
    mesh_alloc_t a;
    options_t local = *o;
    if (!local.topology)
        local.topology = "this";
    int rc = load_topology(&local, &t);
    if (rc)
        return rc;
    int n = mesh_topo_gpu_count(t),
        usable =
            n > 0 && mesh_topo_alloc(t, &o->pol.assume, 1, o->pol.launch.bind_gpu, &a, &err) == 0;
    const char *src = strcmp(local.topology, "this") == 0 ? "this machine" : local.topology;
    if (o->json) {
        printf("{\"source\":");
        json_string(src);
        printf(",\"gpus\":[");
    } else {
        printf("topology of %s: %d GPU%s, %d NUMA node%s, islands from %s\n", src, n,
               n == 1 ? "" : "s", mesh_topo_numa_count(t), mesh_topo_numa_count(t) == 1 ? "" : "s",
               mesh_topo_links(t));
        if (n)
            printf("  GPU  bus id        PCI id     model            memory     NUMA  island  "
                   "CPUs\n");
    }
    for (int i = 0; i < n; i++) {
        const mesh_topo_gpu_t *g = mesh_topo_gpu(t, i);
        mesh_gpu_t m;
        int known = mesh_topo_gpu_model(t, i, &o->pol.assume, &m, &err) == 0;
        if (o->json) {
            printf("%s{\"index\":%d,\"busid\":\"%s\",\"vendor_id\":%u,\"device_id\":%u,"
                   "\"model\":",
                   i ? "," : "", i, g->busid, g->vendor_id, g->device_id);
            if (known)
                json_string(m.name);
            else
                printf("null");
            printf(",\"memory\":%.0f,\"numa\":%d,\"island\":%d,\"cpus\":\"%s\"}",
                   known ? m.memory : 0.0, g->numa, g->island, g->cpus);
        } else {
            printf("  %3d  %s  %04x:%04x  %-15s  %5.1f GiB  %4d  %6d  %s\n", i, g->busid,
                   g->vendor_id, g->device_id, known ? m.name : "(unknown)",
                   known ? m.memory / 1073741824.0 : 0.0, g->numa, g->island, g->cpus);
        }
    }
    if (o->json) {
        printf("],\"islands\":[");
        for (int isl = 0; isl < mesh_topo_island_count(t); isl++) {
            printf("%s[", isl ? "," : "");
            for (int i = 0, first = 1; i < n; i++)
                if (mesh_topo_gpu(t, i)->island == isl) {
                    printf("%s%d", first ? "" : ",", i);
                    first = 0;
                }
            printf("]");
        }
        printf("],\"numa_nodes\":%d,\"links\":\"%s\",\"assumes\":", mesh_topo_numa_count(t),
               mesh_topo_links(t));
        if (usable)
            printf("{\"gpu\":\"%s\",\"gpus_per_node\":%d,\"memory\":%.0f,\"island\":%d}}\n",
                   a.gpu.name, a.gpus_per_node, a.gpu.memory, a.island);
        else
            printf("null}\n");
    } else if (usable) {
        printf("the planner assumes: %d x %s per node, %.1f GiB each, TP groups of up to %d GPUs "
               "(consecutive tasks sharing an island%s)\n",
               a.gpus_per_node, a.gpu.name, a.gpu.memory / 1073741824.0, a.island,
               o->pol.launch.bind_gpu ? ", tasks bound island by island" : ", tasks in PCI order");
    } else if (n) {
        printf("the planner cannot use these GPUs: %s\n", err.msg);
    } else {
        printf("no GPU found: the plugin falls back to the policy's gpu= or gpu_mem=\n");
    }
    mesh_topo_destroy(t);
    return EXIT_FITS;
}
