/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Errors, the growable string and the strict number parsers.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
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
        char was[MESH_ERROR_MAX];
        va_list ap;
        mesh_strlcpy(was, err->msg, sizeof(was));
        va_start(ap, fmt);
        if (vsnprintf(err->msg, sizeof(err->msg), fmt, ap) < 0) /* cut where it must be */
            err->msg[0] = '\0'; /* a format that failed: the message alone */
        va_end(ap);
        size_t at = strlen(err->msg);
        snprintf(err->msg + at, sizeof(err->msg) - at, ": %s", was);
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

void mesh_list_add(char *buf, size_t len, const char *sep, const char *fmt, ...)
{
    size_t n = strlen(buf);
    if (n + 1 >= len)
        return;
    if (n)
        n += (size_t)snprintf(buf + n, len - n, "%s", sep);
    if (n + 1 >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, len - n, fmt, ap);
    va_end(ap);
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

void *mesh_grow(void *items, size_t *cap, size_t n, size_t size, size_t first)
{
    if (n < *cap)
        return items;
    size_t want = *cap ? 2 * *cap : first;
    if (want < *cap || want > SIZE_MAX / size) /* doubling past what a size_t counts */
        return NULL;
    void *grown = realloc(items, want * size);
    if (grown)
        *cap = want;
    return grown;
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

/* A range's bound as people write it: 1000000, not 1e+06 (but 1e-12). */
static const char *bound(double x, char *buf, size_t len)
{
    snprintf(buf, len, "%.15g", x);
    return buf;
}

int mesh_parse_number(const char *s, const char *what, double min, double max, const char *unit,
                      double *out, mesh_error_t *err)
{
    char show[48], lo[32], hi[32];
    const char *u = unit ? unit : "";
    bound(min, lo, sizeof(lo));
    bound(max, hi, sizeof(hi));
    if (!s || !*s)
        return mesh_error_set(err, "%s: empty value, expected a number in %s..%s%s", what, lo, hi,
                              u);
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    /* strtod also takes "inf", "nan" and hex floats; none is a sane input */
    int plain = strspn(s, "0123456789.eE+-") == strlen(s);
    if (*end || !plain || isspace((unsigned char)*s))
        return mesh_error_set(err, "%s: '%s' is not a number (expected %s..%s%s)", what,
                              shown(s, show, sizeof(show)), lo, hi, u);
    if (errno == ERANGE || !isfinite(v) || v < min || v > max)
        return mesh_error_set(err, "%s: %s is out of range (allowed %s..%s%s)", what,
                              shown(s, show, sizeof(show)), lo, hi, u);
    *out = v;
    return 0;
}

int mesh_parse_double(const char *s, const char *what, double min, double max, double *out,
                      mesh_error_t *err)
{
    return mesh_parse_number(s, what, min, max, NULL, out, err);
}

/* ---- counts as people write them: 32k, 4.2M, 1T, 32Ki ---- */

/* A count's suffixes: SI powers of 1000 (B, a billion, as in "8B
 * parameters"), and binary powers of 1024; case matters ("m" would be
 * milli, "b" bits). */
static const struct {
    const char *suffix;
    int exp10, exp2;
} count_suffixes[] = {
    {"", 0, 0},   {"k", 3, 0},   {"K", 3, 0},   {"M", 6, 0},   {"G", 9, 0},   {"B", 9, 0},
    {"T", 12, 0}, {"Ki", 0, 10}, {"Mi", 0, 20}, {"Gi", 0, 30}, {"Ti", 0, 40},
};

#define COUNT_FORMS                                                                                \
    "digits, or a number with k, M, G or B, T (powers of 1000) or Ki, Mi, Gi, Ti (powers of "      \
    "1024): 32k is 32000, 32Ki 32768"

/* m = 10 m + d; 0, or -1 past 2^64. */
static int push_digit(unsigned long long *m, int d)
{
    if (*m > (ULLONG_MAX - (unsigned)d) / 10)
        return -1;
    *m = *m * 10 + (unsigned)d;
    return 0;
}

/* The decimal "12.50e3" at s into m x 10^e10 exactly (trailing zeros of
 * the fraction dropped, so that they cannot overflow m; *big set if m
 * would pass 2^64); the end of the number, or NULL if it has no digit. */
static const char *decimal_of(const char *s, unsigned long long *m, int *e10, int *big)
{
    const char *p = s, *frac_end;
    *m = 0;
    *e10 = *big = 0;
    for (; isdigit((unsigned char)*p); p++)
        *big |= push_digit(m, *p - '0') < 0;
    const char *f = p + (*p == '.');
    for (frac_end = f; isdigit((unsigned char)*frac_end);)
        frac_end++;
    if (frac_end == s || (frac_end == s + 1 && *s == '.'))
        return NULL;
    for (p = frac_end; frac_end > f && frac_end[-1] == '0';)
        frac_end--;
    for (; f < frac_end; f++, (*e10)--)
        *big |= push_digit(m, *f - '0') < 0;
    const char *x = p + (*p == 'e' || *p == 'E');
    x += x > p && (*x == '+' || *x == '-');
    if (x > p && isdigit((unsigned char)*x)) {
        int neg = x[-1] == '-', e = 0;
        for (p = x; isdigit((unsigned char)*p); p++)
            e = e < 10000 ? e * 10 + (*p - '0') : e; /* beyond any count: overflow or not whole */
        *e10 += neg ? -e : e;
    }
    return p;
}

/* m x 10^e10 x 2^e2 into *m, exactly: 0, 1 if it is not whole, 2 if it
 * passes 2^64.  A power of ten below 1 takes a factor 10 of m, or a 5 of m
 * and a 2 of 2^e2 ("0.5Ki" is 512); none left: not whole. */
static int scale_exactly(unsigned long long *m, int e10, int e2)
{
    for (; e10 < 0; e10++) {
        if (*m % 10 == 0)
            *m /= 10;
        else if (e2 > 0 && *m % 5 == 0)
            *m /= 5, e2--;
        else
            return 1;
    }
    for (; e10 > 0 && *m; e10--)
        if (*m > ULLONG_MAX / 10)
            return 2;
        else
            *m *= 10;
    for (; e2 > 0 && *m; e2--)
        if (*m > ULLONG_MAX / 2)
            return 2;
        else
            *m *= 2;
    return 0;
}

int mesh_parse_count(const char *s, const char *what, long long min, long long max, long long *out,
                     mesh_error_t *err)
{
    char show[48];
    if (!s || !*s)
        return mesh_error_set(
            err, "%s: empty value, expected an integer in %lld..%lld (" COUNT_FORMS ")", what, min,
            max);
    int neg = *s == '-', e10, e2 = -1, big;
    unsigned long long m;
    const char *end = decimal_of(s + (*s == '-' || *s == '+'), &m, &e10, &big);
    for (int i = 0; end && i < MESH_ARRAY_LEN(count_suffixes); i++)
        if (strcmp(end, count_suffixes[i].suffix) == 0) {
            e10 += count_suffixes[i].exp10;
            e2 = count_suffixes[i].exp2;
        }
    if (e2 < 0)
        return mesh_error_set(err,
                              "%s: '%s' is not an integer (expected %lld..%lld: " COUNT_FORMS ")",
                              what, shown(s, show, sizeof(show)), min, max);
    int r = big ? 2 : scale_exactly(&m, e10, e2);
    if (r == 1)
        return mesh_error_set(err,
                              "%s: '%s' is not a whole number (expected an integer in "
                              "%lld..%lld)",
                              what, shown(s, show, sizeof(show)), min, max);
    /* -2^63 has no positive counterpart: negate m - 1 */
    int fits = r == 0 && m <= (unsigned long long)LLONG_MAX + (unsigned)neg;
    long long v = !fits ? 0 : !neg ? (long long)m : m ? -(long long)(m - 1) - 1 : 0;
    if (!fits || v < min || v > max)
        return mesh_error_set(err, "%s: %s is out of range (allowed %lld..%lld)", what,
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

/* The bytes of s that are its number, before a unit: "80e" + "GB"?  The
 * exponent marker belongs to the number only if a digit follows. */
static size_t number_span(const char *s)
{
    size_t n = strspn(s, "0123456789.eE+");
    while (n > 0 && (s[n - 1] == 'e' || s[n - 1] == 'E'))
        n--;
    return n;
}

int mesh_parse_size(const char *s, const char *what, double min, double max, double *out,
                    mesh_error_t *err)
{
    char show[48], num[64];
    if (!s || !*s)
        return mesh_error_set(err, "%s: empty size (write e.g. 80GB or 80GiB)", what);
    size_t n = number_span(s);
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

/* ---- bandwidths: the unit says bits or bytes, and per second ---- */

/* A bandwidth's unit is PREFIX QUANTUM "/s": "400Gb/s", "50GB/s",
 * "400Gbit/s", "3.35TByte/s", "25GiB/s".  B and b are case-sensitive, as
 * the bytes and bits they are; the words any case. */
static const struct {
    const char *prefix;
    double scale;
} rate_prefixes[] = {
    {"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", MESH_GiB}, {"Ti", 1099511627776.0},
    {"k", 1e3},     {"M", 1e6},        {"G", 1e9},       {"T", 1e12},
    {"", 1},
};
static const struct {
    const char *quantum;
    double bytes;
} rate_quanta[] = {{"B", 1}, {"b", 0.125}, {"Byte", 1}, {"bit", 0.125}};

#define RATE_FORMS                                                                                 \
    "GB/s or Gb/s (bytes or bits per second; also MB/s TB/s Mb/s Tb/s Gbit/s GByte/s GiB/s)"

/* What a bandwidth's unit u says: its prefix (the first np characters,
 * worth scale; binary or not), its quantum (an index of rate_quanta; -1:
 * none; -2: none, u is a prefix alone as in "G" or "G/s") and whether it
 * ends in "/s". */
typedef struct rate_unit {
    size_t np;
    double scale;
    int binary, quantum, per_s;
} rate_unit_t;

static rate_unit_t rate_unit(const char *u)
{
    rate_unit_t r = {.scale = 1, .quantum = -1};
    size_t n = strlen(u);
    r.per_s = n >= 2 && strcmp(u + n - 2, "/s") == 0;
    n -= r.per_s ? 2 : 0;
    for (int i = 0; i < MESH_ARRAY_LEN(rate_prefixes) && r.quantum == -1; i++) {
        size_t np = strlen(rate_prefixes[i].prefix);
        if (np > n || strncasecmp(u, rate_prefixes[i].prefix, np) != 0)
            continue;
        r = (rate_unit_t){np, rate_prefixes[i].scale, np == 2, np == n ? -2 : -1, r.per_s};
        for (int q = 0; q < MESH_ARRAY_LEN(rate_quanta) && r.quantum == -1; q++) {
            const char *w = rate_quanta[q].quantum;
            if (strlen(w) == n - np &&
                (w[1] ? strncasecmp(u + np, w, n - np) : strncmp(u + np, w, n - np)) == 0)
                r.quantum = q;
        }
    }
    return r;
}

int mesh_parse_bandwidth(const char *s, const char *what, double min, double max, double *out,
                         mesh_error_t *err)
{
    char show[48], num[64], bits[32];
    if (!s || !*s)
        return mesh_error_set(err, "%s: empty bandwidth (write " RATE_FORMS ")", what);
    size_t n = number_span(s);
    double v;
    mesh_error_t e2;
    if (n > 0 && n < sizeof(num))
        memcpy(num, s, n);
    num[n < sizeof(num) ? n : 0] = '\0';
    if (n == 0 || n >= sizeof(num) || mesh_parse_double(num, what, 0, 1e30, &v, &e2) < 0)
        return mesh_error_set(err, "%s: '%s' is not a bandwidth (write e.g. " RATE_FORMS ")", what,
                              shown(s, show, sizeof(show)));
    const char *unit = s + n;
    while (*unit == ' ')
        unit++;
    rate_unit_t u = rate_unit(unit);
    if (!*unit)
        return mesh_error_set(err,
                              "%s: '%s' has no unit: write %sGB/s (bytes per second) or %sGb/s "
                              "(bits), or the like",
                              what, shown(s, show, sizeof(show)), num, num);
    /* "400Gb", "400GB", "400G", "400G/s": 400 Gbit/s (a NIC's rating) and
     * 400 GB/s (eight times more) are both read */
    if (u.quantum == -2 || (!u.per_s && !u.binary && (u.quantum == 0 || u.quantum == 1)))
        return mesh_error_set(err,
                              "%s: '%s' is ambiguous: write %s%.*sb/s (%sB/s, bits) or %s%.*sB/s "
                              "(bytes)",
                              what, shown(s, show, sizeof(show)), num, (int)u.np, unit,
                              mesh_format_si(v * u.scale / 8, bits, sizeof(bits)), num, (int)u.np,
                              unit);
    if (u.quantum < 0)
        return mesh_error_set(err, "%s: unknown unit in '%s' (write " RATE_FORMS ")", what,
                              shown(s, show, sizeof(show)));
    if (!u.per_s)
        return mesh_error_set(err, "%s: '%s' is no bandwidth: write %.40s/s", what,
                              shown(s, show, sizeof(show)), s);
    double bytes = v * u.scale * rate_quanta[u.quantum].bytes;
    char lo[32], hi[32];
    if (bytes < min || bytes > max)
        return mesh_error_set(err, "%s: %s is out of range (allowed %sB/s..%sB/s)", what,
                              shown(s, show, sizeof(show)), mesh_format_si(min, lo, sizeof(lo)),
                              mesh_format_si(max, hi, sizeof(hi)));
    *out = bytes;
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

const char *mesh_format_si(double v, char *buf, size_t len)
{
    static const char *const prefixes[] = {"", " k", " M", " G", " T", " P", " E"};
    double x = fabs(v);
    int p = 0;
    /* as rounded: 999.96 k is 1.00 M, not 1000.0 k */
    while (x >= (p ? 999.95 : 999.5) && p + 1 < MESH_ARRAY_LEN(prefixes)) {
        x /= 1000;
        p++;
    }
    /* three significant digits at least: 3.60 M, 12.5 M, 128.1 k; 950 */
    int decimals = x < 9.995 ? 2 : x < 99.95 || p ? 1 : 0;
    if (x < 1 && p == 0)
        snprintf(buf, len, "%.3g", v);
    else
        snprintf(buf, len, "%s%.*f%s", v < 0 ? "-" : "", decimals, x, prefixes[p]);
    return buf;
}

mesh_gib_str_t mesh_gib_str(double bytes)
{
    mesh_gib_str_t t;
    snprintf(t.s, sizeof(t.s), "%.1f", mesh_gib(bytes));
    return t;
}

mesh_pct_str_t mesh_pct_str(double fraction)
{
    mesh_pct_str_t t;
    snprintf(t.s, sizeof(t.s), "%.3g%%", 100 * fraction);
    return t;
}

mesh_duration_str_t mesh_duration_str(double seconds)
{
    mesh_duration_str_t t;
    long s = mesh_ceil_long(seconds);
    if (s >= 86400)
        snprintf(t.s, sizeof(t.s), "%ld d %ld h", s / 86400, s % 86400 / 3600);
    else if (s >= 3600)
        snprintf(t.s, sizeof(t.s), "%ld h %ld min", s / 3600, s % 3600 / 60);
    else if (s >= 60)
        snprintf(t.s, sizeof(t.s), "%ld min", (s + 59) / 60);
    else
        snprintf(t.s, sizeof(t.s), "%ld s", s);
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
