/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan version: this program's release and its library's.
 */
#include <stdio.h>

#include "cli.h"

/* This program's release and the library's it runs with: they differ when
 * a libmeshplan of another release is found first. */
int cmd_version(const options_t *o)
{
    if (o->json)
        printf("{\"meshplan\":\"%s\",\"libmeshplan\":\"%s\"}\n", MESHPLAN_VERSION_STRING,
               mesh_version());
    else
        printf("meshplan %s (libmeshplan %s)\n", MESHPLAN_VERSION_STRING, mesh_version());
    return EXIT_FITS;
}
