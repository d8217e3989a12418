/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Errors, the growable string and the strict number parsers.
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "meshplan/error.h"
#include "meshplan/version.h"
#include "meshplan/parse.h"

/* Messages quote user input; they must stay one printable line, so that a
 * spec cannot forge log lines or send escape codes to a terminal: C0
 * controls and DEL, and the C1 controls U+0080..U+009F (UTF-8 0xC2
 * 0x80..0x9F), which terminals obey too (U+009B is CSI, as ESC [ is). */
static void one_line(char *s)
{
    for (unsigned char *c = (unsigned char *)s; *c; c++)
        if (c[0] == 0xc2 && c[1] >= 0x80 && c[1] <= 0x9f)
            c[0] = c[1] = '?';
        else if (*c < 0x20 || *c == 0x7f)
            *c = '?';
}

const char *mesh_version(void)
{
    return MESHPLAN_VERSION_STRING;
}

unsigned mesh_api_version(void)
{
    return MESHPLAN_API_VERSION;
}

int mesh_error_set(mesh_error_t *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        va_end(ap);
        one_line(err->msg);
    }
    return -1;
}

int mesh_error_prefix(mesh_error_t *err, const char *fmt, ...)
{
    if (err) {
        char line[2 * MESH_ERROR_MAX + 2];
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(line, MESH_ERROR_MAX, fmt, ap);
        va_end(ap);
        if (n < 0)
            n = 0;
        if (n >= MESH_ERROR_MAX)
            n = MESH_ERROR_MAX - 1;
        memcpy(line + n, ": ", 2);
        memcpy(line + n + 2, err->msg, MESH_ERROR_MAX);
        line[n + 2 + MESH_ERROR_MAX - 1] = '\0';
        mesh_strlcpy(err->msg, line, sizeof(err->msg));
        one_line(err->msg);
    }
    return -1;
}

/* Dynamic programming over the edit matrix, keeping the two rows before the
 * current one so that swapping two neighbours ("plna" for "plan") costs
 * one edit, the commonest typo of all (restricted Damerau-Levenshtein).
 * Lengths beyond 32, or differing by more than 2, are no typo. */
int mesh_typo_distance(const char *a, const char *b)
{
    enum { MAX = 32 };
    size_t la = strlen(a), lb = strlen(b);
    int rows[3][MAX + 1];
    if (la > MAX || lb > MAX || (la > lb ? la - lb : lb - la) > 2)
        return 3;
    for (size_t j = 0; j <= lb; j++)
        rows[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int *row = rows[i % 3], *up = rows[(i - 1) % 3], *up2 = rows[(i + 1) % 3];
        int ca = tolower((unsigned char)a[i - 1]);
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int cb = tolower((unsigned char)b[j - 1]);
            int best = up[j - 1] + (ca != cb);
            if (up[j] + 1 < best)
                best = up[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
                cb == tolower((unsigned char)a[i - 2]) && up2[j - 2] + 1 < best)
                best = up2[j - 2] + 1;
            row[j] = best;
        }
    }
    return rows[la % 3][lb] < 3 ? rows[la % 3][lb] : 3;
}

const char *mesh_closest_name(const char *word, const char *const *names, int n)
{
    const char *best = NULL;
    int best_d = 3;
    for (int i = 0; word && names && i < n; i++) {
        /* a third of the name at most: "tp" is no typo of "pp" */
        int d = names[i] ? mesh_typo_of(word, names[i]) : 3;
        if (d < best_d) {
            best = names[i];
            best_d = d;
        }
    }
    return best;
}

int mesh_strlcpy(char *dst, const char *src, size_t size)
{
    size_t n = strlen(src);
    if (size == 0)
        return -1;
    if (n >= size) {
        memcpy(dst, src, size - 1);
        dst[size - 1] = '\0';
        return -1;
    }
    memcpy(dst, src, n + 1);
    return 0;
}

int mesh_typo_of(const char *word, const char *name)
{
    int d = mesh_typo_distance(word, name);
    return (size_t)d * 3 < strlen(name) + 1 ? d : 3;
}

void mesh_buf_init(mesh_buf_t *b)
{
    memset(b, 0, sizeof(*b));
}

static int buf_reserve(mesh_buf_t *b, size_t extra)
{
    if (b->failed)
        return -1;
    if (b->len + extra + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *d = realloc(b->data, cap);
    if (!d) {
        b->failed = 1;
        return -1;
    }
    b->data = d;
    b->cap = cap;
    return 0;
}

void mesh_buf_vprintf(mesh_buf_t *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) {
        b->failed = 1;
        return;
    }
    if (buf_reserve(b, (size_t)n) < 0)
        return;
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void mesh_buf_printf(mesh_buf_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mesh_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

void mesh_buf_puts(mesh_buf_t *b, const char *s)
{
    size_t n = strlen(s);
    if (buf_reserve(b, n) < 0)
        return;
    memcpy(b->data + b->len, s, n + 1);
    b->len += n;
}

void mesh_buf_json_string(mesh_buf_t *b, const char *s)
{
    mesh_buf_puts(b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            mesh_buf_printf(b, "\\%c", *p);
        else if (*p == '\n')
            mesh_buf_puts(b, "\\n");
        else if (*p < 0x20 || *p == 0x7f)
            mesh_buf_printf(b, "\\u%04x", *p);
        else
            mesh_buf_printf(b, "%c", *p);
    }
    mesh_buf_puts(b, "\"");
}

char *mesh_buf_take(mesh_buf_t *b)
{
    if (b->failed || buf_reserve(b, 0) < 0) {
        mesh_buf_free(b);
        return NULL;
    }
    char *d = b->data;
    d[b->len] = '\0'; /* an empty buffer too is a string */
    mesh_buf_init(b);
    return d;
}

void mesh_buf_free(mesh_buf_t *b)
{
    free(b->data);
    mesh_buf_init(b);
}

/* Strings in errors are user input: show at most 40 printable characters. */
static const char *shown(const char *s, char *buf, size_t len)
{
    size_t i = 0;
    for (; s[i] && i < 40 && i + 4 < len; i++)
        buf[i] = isprint((unsigned char)s[i]) ? s[i] : '?';
    if (s[i] && i + 4 < len) {
        memcpy(buf + i, "...", 3);
        i += 3;
    }
    buf[i] = '\0';
    return buf;
}

int mesh_parse_int(const char *s, const char *what, long long min, long long max, long long *out,
                   mesh_error_t *err)
{
    char show[48];
    if (!s || !*s)
        return mesh_error_set(err, "%s: empty value, expected an integer in %lld..%lld", what, min,
                              max);
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (*end || isspace((unsigned char)*s))
        return mesh_error_set(err, "%s: '%s' is not an integer (expected %lld..%lld)", what,
                              shown(s, show, sizeof(show)), min, max);
    if (errno == ERANGE || v < min || v > max)
        return mesh_error_set(err, "%s: %s is out of range (allowed %lld..%lld)", what,
                              shown(s, show, sizeof(show)), min, max);
    *out = v;
    return 0;
}

int mesh_parse_double(const char *s, const char *what, double min, double max, double *out,
                      mesh_error_t *err)
{
    char show[48];
    if (!s || !*s)
        return mesh_error_set(err, "%s: empty value, expected a number in %g..%g", what, min, max);
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    /* strtod also takes "inf", "nan" and hex floats; none is a sane input */
    int plain = strspn(s, "0123456789.eE+-") == strlen(s);
    if (*end || !plain || isspace((unsigned char)*s))
        return mesh_error_set(err, "%s: '%s' is not a number (expected %g..%g)", what,
                              shown(s, show, sizeof(show)), min, max);
    if (errno == ERANGE || !isfinite(v) || v < min || v > max)
        return mesh_error_set(err, "%s: %s is out of range (allowed %g..%g)", what,
                              shown(s, show, sizeof(show)), min, max);
    *out = v;
    return 0;
}

static const struct {
    const char *unit;
    double scale;
} size_units[] = {
    {"", 1},      {"B", 1},        {"KB", 1e3},        {"MB", 1e6},       {"GB", 1e9},
    {"TB", 1e12}, {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", MESH_GiB}, {"TiB", 1099511627776.0},
};

int mesh_parse_size(const char *s, const char *what, double min, double max, double *out,
                    mesh_error_t *err)
{
    char show[48], num[64];
    if (!s || !*s)
        return mesh_error_set(err, "%s: empty size (write e.g. 80GB or 80GiB)", what);
    size_t n = strspn(s, "0123456789.eE+");
    /* "80e" + "GB"? The exponent marker belongs to the number only if a digit follows. */
    while (n > 0 && (s[n - 1] == 'e' || s[n - 1] == 'E'))
        n--;
    if (n == 0 || n >= sizeof(num))
        return mesh_error_set(err, "%s: '%s' is not a size (write e.g. 80GB or 80GiB)", what,
                              shown(s, show, sizeof(show)));
    memcpy(num, s, n);
    num[n] = '\0';
    const char *unit = s + n;
    while (*unit == ' ')
        unit++;
    double scale = 0;
    for (int i = 0; i < MESH_ARRAY_LEN(size_units); i++)
        if (strcasecmp(unit, size_units[i].unit) == 0)
            scale = size_units[i].scale;
    if (scale == 0) {
        if (strcasecmp(unit, "G") == 0 || strcasecmp(unit, "M") == 0 ||
            strcasecmp(unit, "K") == 0 || strcasecmp(unit, "T") == 0)
            return mesh_error_set(err,
                                  "%s: unit '%s' is ambiguous: write %sB (powers of 1000) or "
                                  "%siB (powers of 1024)",
                                  what, unit, unit, unit);
        return mesh_error_set(err,
                              "%s: unknown unit in '%s' (use B, KB, MB, GB, TB, KiB, MiB, "
                              "GiB or TiB)",
                              what, shown(s, show, sizeof(show)));
    }
    double v;
    mesh_error_t e2;
    if (mesh_parse_double(num, what, 0, 1e30, &v, &e2) < 0)
        return mesh_error_set(err, "%s: '%s' is not a size (write e.g. 80GB or 80GiB)", what,
                              shown(s, show, sizeof(show)));
    v *= scale;
    if (v < min || v > max) {
        char a[32], b[32];
        return mesh_error_set(err, "%s: %s is out of range (allowed %s..%s)", what,
                              shown(s, show, sizeof(show)), mesh_format_bytes(min, a, sizeof(a)),
                              mesh_format_bytes(max, b, sizeof(b)));
    }
    *out = v;
    return 0;
}

int mesh_parse_bool(const char *s, const char *what, int *out, mesh_error_t *err)
{
    static const char *yes[] = {"true", "yes", "on", "1"};
    static const char *no[] = {"false", "no", "off", "0"};
    char show[48];
    for (int i = 0; i < 4; i++) {
        if (s && strcasecmp(s, yes[i]) == 0) {
            *out = 1;
            return 0;
        }
        if (s && strcasecmp(s, no[i]) == 0) {
            *out = 0;
            return 0;
        }
    }
    return mesh_error_set(err, "%s: '%s' is not a boolean (use true or false)", what,
                          s ? shown(s, show, sizeof(show)) : "");
}

const char *mesh_format_bytes(double bytes, char *buf, size_t len)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    double v = bytes;
    while ((v >= 1024 || v <= -1024) && u < 5) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%.0f B", v);
    else
        snprintf(buf, len, "%.1f %s", v, units[u]);
    return buf;
}

mesh_gib_str_t mesh_gib_str(double bytes)
{
    mesh_gib_str_t t;
    snprintf(t.s, sizeof(t.s), "%.1f", mesh_gib(bytes));
    return t;
}

/* ---- work bounded in time ---- */

/* What the caller and the thread share until both are done with it:
 * whichever of them finishes last frees it. */
typedef struct bounded {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done, abandoned;
    void (*fn)(void *), (*drop)(void *);
    void *arg;
} bounded_t;

static void bounded_free(bounded_t *b)
{
    pthread_mutex_destroy(&b->mu);
    pthread_cond_destroy(&b->cv);
    free(b);
}

static void *bounded_thread(void *p)
{
    bounded_t *b = p;
    b->fn(b->arg);
    pthread_mutex_lock(&b->mu);
    b->done = 1;
    int abandoned = b->abandoned;
    pthread_cond_signal(&b->cv);
    pthread_mutex_unlock(&b->mu);
    if (abandoned) {
        b->drop(b->arg);
        bounded_free(b);
    }
    return NULL;
}

int mesh_run_bounded(void (*fn)(void *), void (*drop)(void *), void *arg, double seconds)
{
    bounded_t *b = NULL;
    if (!(seconds > 0 && seconds <= 86400) || !(b = calloc(1, sizeof(*b)))) {
        fn(arg);
        return 0;
    }
    b->fn = fn, b->drop = drop, b->arg = arg;
    pthread_condattr_t ca;
    pthread_attr_t ta;
    pthread_t th;
    pthread_mutex_init(&b->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&b->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_attr_init(&ta);
    pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED);
    int started = pthread_create(&th, &ta, bounded_thread, b) == 0;
    pthread_attr_destroy(&ta);
    if (!started) { /* no thread to spare: in this one, unbounded */
        bounded_free(b);
        fn(arg);
        return 0;
    }
    struct timespec end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += (time_t)seconds;
    end.tv_nsec += (long)((seconds - (double)(time_t)seconds) * 1e9);
    if (end.tv_nsec >= 1000000000L) {
        end.tv_sec++;
        end.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&b->mu);
    while (!b->done && pthread_cond_timedwait(&b->cv, &b->mu, &end) != ETIMEDOUT)
        ;
    int late = !b->done;
    b->abandoned = late;
    pthread_mutex_unlock(&b->mu);
    if (!late)
        bounded_free(b);
    return late ? -1 : 0;
}
