/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The model spec parser on arbitrary file bytes; what parses is planned on
 * one node of 8 H100s, so that absurd but well-formed models (1e30
 * parameters, a billion layers) reach the memory and cost models too.
 * Every error must be one printable line.
 */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mesh_spec_dirs_t dirs = {{getenv("MESH_MODELS_DIR"), NULL, NULL, NULL}};
    mesh_model_t m;
    mesh_error_t err;
    if (mesh_spec_parse((const char *)data, size, "fuzz.yaml", &dirs, &m, &err) < 0)
        fuzz_check_error(&err);
    else
        fuzz_plan_one_node(&m);
    return 0;
}
