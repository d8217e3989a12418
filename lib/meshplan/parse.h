/* SPDX-License-Identifier: GPL-2.0-or-later */
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

/*
 * Common to the parsers: s is the whole text (NULL or "" is an error);
 * `what` (not NULL) names the value in the error ("reserve", "mesh tp");
 * on success the value goes to *out and 0 is returned; on failure *out is
 * left alone and -1 is returned with err saying what is allowed.  Leading
 * spaces and trailing text are errors (mesh_parse_size alone skips spaces
 * before its unit).
 */

/**
 * Parse a decimal integer in [min, max]: optional sign, digits only (no
 * hex, no spaces, no trailing text).  Errors: not an integer, or out of
 * range (overflow included).
 */
MESH_API int mesh_parse_int(const char *s, const char *what, long long min, long long max,
                            long long *out, mesh_error_t *err);

/**
 * Parse a finite decimal number (e.g. "70.55e9", "0.05") in [min, max].
 * "inf", "nan" and hex floats are refused as not a number.
 */
MESH_API int mesh_parse_double(const char *s, const char *what, double min, double max, double *out,
                               mesh_error_t *err);

/**
 * Parse a count as people write it, in [min, max]: digits ("32768"), a
 * decimal with an exponent ("1e12"), or a number with a suffix: k or K,
 * M, G or B, T (powers of 1000: "32k" is 32000, "4.2M" 4200000, "1T"), or
 * Ki, Mi, Gi, Ti (powers of 1024: "32Ki" is 32768), case as written here.
 * The value must be whole ("1.5k" is, "1.2345k" is not) and is computed
 * exactly; past the range of long long it is out of range.
 */
MESH_API int mesh_parse_count(const char *s, const char *what, long long min, long long max,
                              long long *out, mesh_error_t *err);

/**
 * Parse a size in bytes: a plain byte count or a non-negative number with
 * a unit, spaces allowed between them ("80GB", "80 GiB"); B, KB MB GB TB
 * are powers of 1000, KiB MiB GiB TiB powers of 1024 (units
 * case-insensitive).  A bare "K", "M", "G" or "T" is refused as ambiguous.
 * The result, in bytes, must be in [min, max].
 */
MESH_API int mesh_parse_size(const char *s, const char *what, double min, double max, double *out,
                             mesh_error_t *err);

/**
 * Parse a bandwidth into bytes per second, in [min, max]: a non-negative
 * number, spaces allowed, and a unit PREFIX QUANTUM/s: PREFIX one of k M G
 * T (powers of 1000) or Ki Mi Gi Ti (powers of 1024), QUANTUM B or Byte
 * (bytes) or b or bit (bits, an eighth of a byte); B and b as written, the
 * rest in any case ("50GB/s", "400Gb/s", "400Gbit/s", "25GiB/s").  A unit
 * that leaves bits or bytes open ("400Gb", "400GB", "400G", "400") is
 * refused, and the error gives both readings.
 */
MESH_API int mesh_parse_bandwidth(const char *s, const char *what, double min, double max,
                                  double *out, mesh_error_t *err);

/**
 * Parse a boolean: true/yes/on/1 (*out = 1) or false/no/off/0 (*out = 0),
 * case-insensitively.  s may be NULL (an error).
 */
MESH_API int mesh_parse_bool(const char *s, const char *what, int *out, mesh_error_t *err);

/**
 * Format bytes as a short human string in powers of 1024 ("74.5 GiB",
 * "512 B", up to PiB) into buf[len] (len > 0; truncated to fit; 32 bytes
 * suffice below 1e21 bytes).  Returns buf; thread-safe.
 */
MESH_API const char *mesh_format_bytes(double bytes, char *buf, size_t len);

/**
 * Format v for people, with three significant digits at least and an SI
 * prefix after a space ("3.60 M", "12.5 M", "128.1 k", "1.00 G", "950";
 * up to E; a prefixed value has one or two decimals), into buf[len] (len >
 * 0; truncated to fit; 16 bytes suffice).  No exponent is written but
 * below 1e-4.  Returns buf; thread-safe.
 */
MESH_API const char *mesh_format_si(double v, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
