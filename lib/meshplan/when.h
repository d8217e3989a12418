/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan: the times users type, strictly read: a duration as Slurm's
 * --time and MaxTime write one, and a calendar date.  Pure: "now" is the
 * caller's, so that a deadline is the same answer in a test as on a
 * cluster (doc/design.md, "Sizing").
 */
#ifndef MESHPLAN_WHEN_H
#define MESHPLAN_WHEN_H

#include "meshplan/api.h"
#include "meshplan/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The longest duration read: 100,000 days (Slurm's own limits are minutes
 * in 32 bits, about 8,000 years, but no run is planned that far). */
#define MESH_DURATION_MAX (100000LL * 86400)

/**
 * Parse a duration into *seconds, in Slurm's --time forms: "M" (minutes),
 * "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S" (every field after the first
 * at most 59, hours after a day at most 23), or a count with a unit:
 * "14d", "36h", "90m".  Digits only: no sign, no space, no fraction.
 * Errors name `what` and the forms; a duration of 0 or beyond
 * MESH_DURATION_MAX is refused.  s, what, seconds and err must not be
 * NULL.  Returns 0, or -1 with err set and *seconds left alone.
 */
MESH_API int mesh_parse_duration(const char *s, const char *what, long long *seconds,
                                 mesh_error_t *err);

/**
 * Parse a calendar date "YYYY-MM-DD", "YYYY-MM-DDTHH:MM" or
 * "YYYY-MM-DDTHH:MM:SS" (years 1970 to 9999, a real day of the month) into
 * *seconds since 1970-01-01T00:00 on the same clock: no time zone is read
 * or applied, so the caller compares it with a "now" on the clock the user
 * means (the front ends: local time).  Returns 0, or -1 with err set
 * naming `what`.  s, what, seconds and err must not be NULL.
 */
MESH_API int mesh_parse_date(const char *s, const char *what, long long *seconds,
                             mesh_error_t *err);

/**
 * Parse a partition's time limit as Slurm writes MaxTime (scontrol show
 * partition, slurm.conf): a duration (mesh_parse_duration's forms) into
 * whole minutes, rounded up, or "UNLIMITED", "INFINITE" or "NONE" (any
 * case), which are no limit: *minutes 0.  Returns 0, or -1 with err set
 * naming `what`.
 */
MESH_API int mesh_parse_max_time(const char *s, const char *what, long *minutes, mesh_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
