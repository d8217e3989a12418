/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The model spec parser on arbitrary file bytes; what parses is planned on
 * one node of 8 H100s, so that absurd but well-formed models (1e30
 * parameters, a billion layers) reach the memory and cost models too.
 * Every error must be one printable line.
 */
#include "fuzz.h"

static void check_error(const mesh_error_t *err)
{
    for (const char *c = err->msg; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            abort(); /* an error message must be one printable line */
    if (!err->msg[0])
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mesh_spec_dirs_t dirs = {{getenv("MESH_MODELS_DIR"), NULL, NULL, NULL}};
    mesh_model_t m;
    mesh_error_t err;
    if (mesh_spec_parse((const char *)data, size, "fuzz.yaml", &dirs, &m, &err) < 0) {
        check_error(&err);
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
    if (!p) {
        check_error(&err);
        return 0;
    }
    char *text = mesh_report_text(p);
    char *json = mesh_report_json(p);
    free(text);
    free(json);
    mesh_plan_destroy(p);
    return 0;
}
