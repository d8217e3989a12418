/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan topo: what hwloc shows of a node and what the planner makes of it.
 */
#include <string.h>

#include "cli.h"

int cmd_topo(const options_t *o)
{
    mesh_topo_t *t;
    options_t local = *o;
    if (!local.topology)
        local.topology = "this";
    int rc = load_topology(&local, &t);
    if (rc)
        return rc;
    const char *src = strcmp(local.topology, "this") == 0 ? "this machine" : local.topology;
    rc = print_owned(mesh_listing_topo(t, src, &o->pol, o->json));
    mesh_topo_destroy(t);
    return rc ? rc : EXIT_FITS;
}
