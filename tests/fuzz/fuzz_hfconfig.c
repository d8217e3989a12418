/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A Hugging Face config.json on arbitrary bytes, through the path a file
 * takes (mesh_spec_load_with on a file named config.json): Jansson's
 * reading, the translation, and the spec reader after it.  What loads is
 * planned on one node of 8 H100s.  Every error must be one printable line.
 */
#include <stdio.h>
#include <unistd.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    if (!path[0]) {
        char dir[] = "/tmp/meshplan-fuzz-hf-XXXXXX";
        if (!mkdtemp(dir))
            abort();
        snprintf(path, sizeof(path), "%s/config.json", dir);
    }
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        abort();
    mesh_spec_dirs_t dirs = {{getenv("MESH_MODELS_DIR"), NULL, NULL, NULL}};
    mesh_model_t m;
    mesh_error_t err;
    if (mesh_spec_load_with(path, &dirs, NULL, NULL, 0, &m, &err) < 0) {
        for (const char *c = err.msg; *c; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7f)
                abort(); /* an error message must be one printable line */
        if (!err.msg[0])
            abort();
        return 0;
    }
    mesh_policy_t pol;
    mesh_alloc_t a;
    mesh_layout_t pins;
    mesh_policy_init(&pol);
    mesh_layout_unpin(&pins);
    if (mesh_policy_alloc(&pol.assume, "H100-SXM", 0, 0, 1, 8, &a, &err) < 0)
        abort();
    mesh_plan_t *p = mesh_plan_create(&m, &a, &pins, &pol.assume, &err);
    mesh_plan_destroy(p);
    return 0;
}
