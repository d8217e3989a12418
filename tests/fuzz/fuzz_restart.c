/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A saved layout, as a user's file (mesh_restart_read: plan --json, env's
 * lines, MESH_PLAN's value) and as the one-line form a front end carries
 * (mesh_restart_parse).  Neither may crash on anything; a restart either
 * reads must print (mesh_restart_format) to a line that parses back to the
 * same restart.
 */
#include "fuzz.h"

static void round_trip(const mesh_restart_t *r)
{
    char line[MESH_RESTART_STR_MAX];
    mesh_restart_t again;
    mesh_error_t err;
    if (mesh_restart_format(r, line, sizeof(line), &err) < 0 ||
        mesh_restart_parse(line, &again, &err) < 0)
        abort();
    if (memcmp(&r->from, &again.from, sizeof(r->from)) != 0 ||
        r->global_batch != again.global_batch || r->keep != again.keep ||
        r->layers != again.layers || r->hidden != again.hidden || r->heads != again.heads)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mesh_restart_t r;
    mesh_error_t err;
    if (mesh_restart_read((const char *)data, size, "fuzz", &r, &err) == 0)
        round_trip(&r);
    char *s = fuzz_string(data, size);
    if (s && mesh_restart_parse(s, &r, &err) == 0)
        round_trip(&r);
    free(s);
    return 0;
}
