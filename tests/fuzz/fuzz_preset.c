/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Preset names as a user types them after --model: anything that is not a
 * path must be refused or resolved inside the models directory.
 */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *name = fuzz_string(data, size);
    if (!name || mesh_spec_is_path(name)) {
        free(name); /* paths are files: fuzz_spec covers their contents */
        return 0;
    }
    mesh_spec_dirs_t dirs = {{getenv("MESH_MODELS_DIR"), NULL, NULL, NULL}};
    mesh_model_t m;
    mesh_error_t err;
    int rc = mesh_spec_load(name, &dirs, &m, &err);
    /* only the shipped, well-formed names may resolve */
    if (rc == 0 && !mesh_spec_valid_preset_name(name))
        abort();
    free(name);
    return 0;
}
