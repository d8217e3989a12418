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
