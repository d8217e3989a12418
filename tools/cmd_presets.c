/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan presets: the model presets of the search path, each name once.
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static int is_preset_file(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    return n > 5 && strcmp(e->d_name + n - 5, ".yaml") == 0 && e->d_name[0] != '.';
}

/* Whether NAME.yaml is in one of the first n directories (which shadow the rest). */
static int shadowed(const mesh_spec_dirs_t *d, int n, const char *name)
{
    char path[PATH_MAX];
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "%s/%s.yaml", d->dirs[i], name);
        if (access(path, F_OK) == 0)
            return 1;
    }
    return 0;
}

int cmd_presets(const options_t *o)
{
    mesh_spec_dirs_t d;
    preset_dirs(o, &d);
    int first = 1;
    if (o->json)
        printf("[");
    for (int i = 0; i < 4 && d.dirs[i]; i++) {
        struct dirent **list;
        int n = scandir(d.dirs[i], &list, is_preset_file, alphasort);
        for (int j = 0; j < n; j++) {
            char name[256], path[PATH_MAX];
            snprintf(name, sizeof(name), "%.*s", (int)strlen(list[j]->d_name) - 5, list[j]->d_name);
            snprintf(path, sizeof(path), "%s/%s", d.dirs[i], list[j]->d_name);
            free(list[j]);
            mesh_model_t m;
            mesh_error_t err;
            /* each name once, from the directory that wins the lookup */
            if (!mesh_spec_valid_preset_name(name) || shadowed(&d, i, name) ||
                mesh_spec_load(path, &d, &m, &err) < 0)
                continue;
            if (o->json) {
                printf("%s{\"name\":\"%s\",\"params\":%.0f,\"dir\":", first ? "" : ",", name,
                       m.params);
                json_string(d.dirs[i]);
                printf("}");
            } else {
                printf("%-16s %9.2f B params  %s\n", name, m.params / 1e9, d.dirs[i]);
            }
            first = 0;
        }
        if (n > 0)
            free(list);
    }
    if (o->json)
        printf("]\n");
    return EXIT_FITS;
}
