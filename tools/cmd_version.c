/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan version: this program's release and its library's.
 */
#include <stdio.h>

#include "cli.h"

/* This program's release and the library's it runs with, and the library's
 * API version: the releases differ when a libmeshplan of another release is
 * found first (main() refuses one of another API). */
int cmd_version(const options_t *o)
{
    if (o->json)
        printf("{\"meshplan\":\"%s\",\"libmeshplan\":\"%s\",\"api_version\":%u}\n",
               MESHPLAN_VERSION_STRING, mesh_version(), mesh_api_version());
    else
        printf("meshplan %s (libmeshplan %s, API %u)\n", MESHPLAN_VERSION_STRING, mesh_version(),
               mesh_api_version());
    return EXIT_FITS;
}
