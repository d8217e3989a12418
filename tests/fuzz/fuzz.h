/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer harnesses for everything meshplan parses from users and admins.
 * Each harness defines LLVMFuzzerTestOneInput; `make fuzz` links it with
 * clang's -fsanitize=fuzzer, and `make check` links it with replay.c, which
 * feeds it every file of its corpus and of the crashes found so far.
 */
#ifndef MESH_FUZZ_H
#define MESH_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "meshplan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An error message must be one printable line, and say something. */
static inline void fuzz_check_error(const mesh_error_t *err)
{
    for (const char *c = err->msg; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            abort();
    if (!err->msg[0])
        abort();
}

/* A model that loaded, planned on one node of 8 H100s and reported, so
 * that absurd but well-formed models reach the memory and cost models. */
static inline void fuzz_plan_one_node(const mesh_model_t *m)
{
    mesh_policy_t pol;
    mesh_alloc_t a;
    mesh_layout_t pins;
    mesh_error_t err;
    mesh_policy_init(&pol);
    mesh_layout_unpin(&pins);
    if (mesh_policy_alloc(&pol.assume, "H100-SXM", 0, 0, 1, 8, &a, &err) < 0)
        abort();
    mesh_plan_t *p = mesh_plan_create(m, &a, &pins, &pol.assume, &err);
    if (!p) {
        fuzz_check_error(&err);
        return;
    }
    free(mesh_report_text(p));
    free(mesh_report_json(p));
    mesh_plan_destroy(p);
}

/* A NUL-terminated copy of the input (parsers of strings see what a shell or
 * a config file would hand them: bytes up to the first NUL). */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (s) {
        memcpy(s, data, size);
        s[size] = '\0';
    }
    return s;
}

#endif
