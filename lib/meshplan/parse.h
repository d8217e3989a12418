/*
 * meshplan: strict parsers for the numbers users type.
 *
 * Shared by the spec reader, the admin policy, the --mesh string and the
 * CLI, so that "80GB" means the same thing everywhere.  Each parser accepts
 * the whole string or nothing, names `what` in its error, and states the
 * allowed range.
 */
#ifndef MESHPLAN_PARSE_H
#define MESHPLAN_PARSE_H

#include "meshplan/api.h"
#include <stddef.h>
#include <stdint.h>

#include "meshplan/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parse a decimal integer in [min, max]. */
MESH_API int mesh_parse_int(const char *s, const char *what, long long min, long long max,
                            long long *out, mesh_error_t *err);

/* Parse a finite decimal number (e.g. "70.55e9", "0.05") in [min, max]. */
MESH_API int mesh_parse_double(const char *s, const char *what, double min, double max, double *out,
                               mesh_error_t *err);

/* Parse a size: a plain byte count or a number with a unit; KB MB GB TB are
 * powers of 1000, KiB MiB GiB TiB powers of 1024 (case-insensitive).  A bare
 * "G" or "M" is refused as ambiguous.  The result must be in [min, max]. */
MESH_API int mesh_parse_size(const char *s, const char *what, double min, double max, double *out,
                             mesh_error_t *err);

/* Parse true/false (also yes/no, on/off, 1/0). */
MESH_API int mesh_parse_bool(const char *s, const char *what, int *out, mesh_error_t *err);

/* Format bytes as a short human string ("74.5 GiB") into buf. */
MESH_API const char *mesh_format_bytes(double bytes, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
