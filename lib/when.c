/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The times users type (see when.h): strict readers that take the whole
 * text or nothing, as the number parsers do (lib/util.c).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "meshplan/when.h"

#define DURATION_FORMS "M, M:S, H:M:S, D-H, D-H:M, D-H:M:S, or a count with d, h or m (14d)"

/* Up to 9 digits at *p into *v, advancing *p; 0 when there are none (or
 * more: no field of a time is that long). */
static int digits(const char **p, long long *v)
{
    int n = 0;
    *v = 0;
    for (; **p >= '0' && **p <= '9'; (*p)++, n++)
        if (n < 9)
            *v = *v * 10 + (**p - '0');
    return n >= 1 && n <= 9;
}

/* The fields of p, "a", "a:b" or "a:b:c", into f[] and their count into
 * *n; 0 on anything else (the caller checks their ranges). */
static int fields(const char *p, long long *f, int *n)
{
    *n = 0;
    do {
        if (*n == 3 || !digits(&p, &f[(*n)++]))
            return 0;
    } while (*p == ':' && p++);
    return *p == '\0';
}

/* "14d", "36h", "90m": seconds, or -1 when s is not one. */
static long long with_unit(const char *s)
{
    static const struct {
        char unit;
        long long seconds;
    } units[] = {{'d', 86400}, {'h', 3600}, {'m', 60}};
    const char *p = s;
    long long v;
    if (!digits(&p, &v) || !p[0] || p[1])
        return -1;
    for (int i = 0; i < MESH_ARRAY_LEN(units); i++)
        if (*p == units[i].unit)
            return v * units[i].seconds;
    return -1;
}

/* The seconds of Slurm's forms, or -1 when s is none of them.  Slurm
 * reads "M", "M:S", "H:M:S" without a day, "D-H", "D-H:M", "D-H:M:S"
 * with one (src/common/parse_time.c, time_str2secs). */
static long long slurm_form(const char *s)
{
    long long day = 0, f[3];
    int n;
    const char *dash = strchr(s, '-'), *p = s;
    if (dash) {
        if (!digits(&p, &day) || p != dash)
            return -1;
        p++;
    }
    if (!fields(p, f, &n))
        return -1;
    for (int i = 1; i < n; i++)
        if (f[i] > 59)
            return -1;
    if (dash) { /* D-H[:M[:S]] */
        if (f[0] > 23)
            return -1;
        return day * 86400 + f[0] * 3600 + (n > 1 ? f[1] * 60 : 0) + (n > 2 ? f[2] : 0);
    }
    if (n == 1)
        return f[0] * 60;
    return n == 2 ? f[0] * 60 + f[1] : f[0] * 3600 + f[1] * 60 + f[2];
}

int mesh_parse_duration(const char *s, const char *what, long long *seconds, mesh_error_t *err)
{
    long long v = with_unit(s);
    if (v < 0)
        v = slurm_form(s);
    if (v < 0)
        return mesh_error_set(err, "%s: '%.40s' is not a duration (%s)", what, s, DURATION_FORMS);
    if (v == 0 || v > MESH_DURATION_MAX)
        return mesh_error_set(err, "%s: '%.40s' must be more than 0 and at most %lld days", what, s,
                              MESH_DURATION_MAX / 86400);
    *seconds = v;
    return 0;
}

/* Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar (H.
 * Hinnant's days_from_civil, chrono-Compatible Low-Level Date Algorithms). */
static long long days_from_civil(long long y, long long m, long long d)
{
    y -= m <= 2;
    long long era = y / 400, yoe = y - era * 400;
    long long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int month_days(long long y, long long m)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return days[m - 1] + (m == 2 && leap);
}

/* The next field of a date: exactly `width` digits after separator sep
 * (0: none), in lo..hi.  0 when it is not there. */
static int date_field(const char **p, char sep, int width, long long lo, long long hi, long long *v)
{
    if (sep && *(*p)++ != sep)
        return 0;
    const char *start = *p;
    return digits(p, v) && *p - start == width && *v >= lo && *v <= hi;
}

int mesh_parse_date(const char *s, const char *what, long long *seconds, mesh_error_t *err)
{
    long long y, mo, d, h = 0, mi = 0, sec = 0;
    const char *p = s;
    int ok = date_field(&p, 0, 4, 1970, 9999, &y) && date_field(&p, '-', 2, 1, 12, &mo) &&
             date_field(&p, '-', 2, 1, 31, &d);
    if (ok && *p == 'T')
        ok = date_field(&p, 'T', 2, 0, 23, &h) && date_field(&p, ':', 2, 0, 59, &mi) &&
             (*p != ':' || date_field(&p, ':', 2, 0, 59, &sec));
    if (!ok || *p)
        return mesh_error_set(err,
                              "%s: '%.40s' is not a date (YYYY-MM-DD, YYYY-MM-DDTHH:MM or "
                              "YYYY-MM-DDTHH:MM:SS, from 1970)",
                              what, s);
    if (d > month_days(y, mo))
        return mesh_error_set(err, "%s: '%.40s': %04lld-%02lld has %d days", what, s, y, mo,
                              month_days(y, mo));
    *seconds = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
    return 0;
}

int mesh_parse_max_time(const char *s, const char *what, long *minutes, mesh_error_t *err)
{
    static const char *const none[] = {"UNLIMITED", "INFINITE", "NONE"};
    long long sec;
    for (int i = 0; i < MESH_ARRAY_LEN(none); i++)
        if (strcasecmp(s, none[i]) == 0)
            return *minutes = 0, 0;
    if (with_unit(s) < 0 && slurm_form(s) < 0)
        return mesh_error_set(err, "%s: '%.40s' is not a time limit (%s; or UNLIMITED)", what, s,
                              DURATION_FORMS);
    if (mesh_parse_duration(s, what, &sec, err) < 0)
        return -1;
    *minutes = (long)((sec + 59) / 60); /* Slurm's limits are whole minutes */
    return 0;
}
