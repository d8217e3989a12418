/*
 * meshplan: error reporting.
 *
 * Every fallible function takes a mesh_error_t * and returns 0 on success,
 * -1 on failure with one line in err->msg that names the offending field and
 * says what is allowed.  Nothing in libmeshplan prints: the caller decides
 * where the line goes (stderr, slurm_error, JSON).
 */
#ifndef MESHPLAN_ERROR_H
#define MESHPLAN_ERROR_H

#include "meshplan/api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MESH_ERROR_MAX 512

typedef struct mesh_error {
    char msg[MESH_ERROR_MAX];
} mesh_error_t;

/* Format a message into err (if err is not NULL) and return -1, so that
 * callers can write `return mesh_error_set(err, "...")`. */
MESH_API int mesh_error_set(mesh_error_t *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prefix an existing message with "<prefix>: ", keeping it one line. */
MESH_API int mesh_error_prefix(mesh_error_t *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#ifdef __cplusplus
}
#endif
#endif
