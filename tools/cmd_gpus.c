/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan gpus: the GPU table, as the policy makes it.
 */
#include "cli.h"

int cmd_gpus(const options_t *o)
{
    int rc = print_owned(mesh_listing_gpus(&o->pol.assume, o->json));
    return rc ? rc : EXIT_FITS;
}
