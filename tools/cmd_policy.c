/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan policy check: the policy as the plugins would take it, before
 * an admin restarts slurmctld with it.
 */
#include "cli.h"

int cmd_policy(const options_t *o)
{
    int rc = print_owned(mesh_listing_policy(&o->pol, o->policy_path, o->json));
    return rc ? rc : EXIT_FITS;
}
