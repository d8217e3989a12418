/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan: error reporting.
 *
 * Every fallible function takes a mesh_error_t * and returns 0 on success,
 * -1 on failure with one line in err->msg that names the offending field and
 * says what is allowed (functions that return a pointer return NULL instead
 * of -1).  Nothing in libmeshplan prints: the caller decides where the line
 * goes (stderr, slurm_error, JSON).  err may be NULL wherever a function
 * takes one, to ignore the message.  libmeshplan keeps no mutable global state: calls from several
 * threads are safe as long as they do not share an object being modified
 * (exceptions are noted where they apply).
 */
#ifndef MESHPLAN_ERROR_H
#define MESHPLAN_ERROR_H

#include "meshplan/api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MESH_ERROR_MAX 512 /* bytes of a message, with its NUL */

/** An error message: the caller's own storage, one per call in flight. */
typedef struct mesh_error {
    /* one printable line (control characters become '?'), NUL-terminated,
     * truncated to MESH_ERROR_MAX - 1 bytes */
    char msg[MESH_ERROR_MAX];
} mesh_error_t;

/**
 * Format a message into err->msg, printf-style, and return -1, so that
 * callers can write `return mesh_error_set(err, "...")`.
 *
 * err may be NULL (then nothing is written).  The message is truncated to
 * MESH_ERROR_MAX - 1 bytes and every control character in it becomes '?',
 * so that quoted user input cannot forge log lines.  Always returns -1.
 */
MESH_API int mesh_error_set(mesh_error_t *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/**
 * Prefix the message already in err->msg with "<prefix>: ", keeping it one
 * line, and return -1.
 *
 * err may be NULL; otherwise err->msg must already hold a message (it is
 * read).  The result is truncated to MESH_ERROR_MAX - 1 bytes, the end of
 * the old message going first.  Always returns -1.
 */
MESH_API int mesh_error_prefix(mesh_error_t *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/**
 * The name a mistyped `word` most likely meant, for an error's "did you
 * mean" hint: of names[0..n-1], the nearest to word by edit distance
 * (inserting, deleting or replacing a character, or swapping two
 * neighbours: restricted Damerau-Levenshtein; case ignored) when that
 * distance is at most 2 (0: the same name but for case) and at most a
 * third of the name's length (one edit from a name of 3 characters or
 * more, two from one of 6 or more: "tp" is no typo of "pp"), the first of
 * the nearest on a tie; NULL when none is that near, or word or names is
 * NULL.  An entry of names may be NULL (skipped).
 *
 * Returns a pointer from names (the caller's string), never a copy.
 * Thread-safe.
 */
MESH_API const char *mesh_closest_name(const char *word, const char *const *names, int n);

#ifdef __cplusplus
}
#endif
#endif
