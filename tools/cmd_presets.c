/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan presets: the model presets of the search path, each name once.
 */
#include "cli.h"

int cmd_presets(const options_t *o)
{
    mesh_spec_dirs_t d;
    preset_dirs(o, &d);
    int rc = print_owned(mesh_listing_presets(&d, o->json));
    return rc ? rc : EXIT_FITS;
}
