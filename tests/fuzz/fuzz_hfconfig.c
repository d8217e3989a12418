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
    if (mesh_spec_load_with(path, &dirs, NULL, NULL, 0, &m, &err) < 0)
        fuzz_check_error(&err);
    else
        fuzz_plan_one_node(&m);
    return 0;
}
