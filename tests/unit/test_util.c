/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lib/util.c: the strict number, size and boolean parsers shared by specs,
 * policies and the CLI, errors that quote user input, the JSON escaper and
 * the typo rule of "did you mean".
 */
#include <limits.h>
#include <stdatomic.h>
#include <time.h>

#include "internal.h" /* mesh_buf_t */
#include "testutil.h"

static void size__units__exact_bytes(void **state)
{
    double v;
    mesh_error_t err;
    assert_int_equal(mesh_parse_size("80GB", "x", 0, 1e15, &v, &err), 0);
    assert_bytes(v, 80000000000ULL);
    assert_int_equal(mesh_parse_size("80GiB", "x", 0, 1e15, &v, &err), 0);
    assert_bytes(v, 85899345920ULL);
    assert_int_equal(mesh_parse_size("1.5 TiB", "x", 0, 1e15, &v, &err), 0);
    assert_bytes(v, 1649267441664ULL);
    assert_int_equal(mesh_parse_size("512mib", "x", 0, 1e15, &v, &err), 0);
    assert_bytes(v, 536870912ULL);
    assert_int_equal(mesh_parse_size("4096", "x", 0, 1e15, &v, &err), 0);
    assert_bytes(v, 4096);
    assert_int_equal(mesh_parse_size("1e9B", "x", 0, 1e15, &v, &err), 0);
    assert_bytes(v, 1000000000ULL);
}

static void size__ambiguous_or_bad__named_error(void **state)
{
    double v;
    mesh_error_t err;
    assert_int_equal(mesh_parse_size("80G", "gpu_mem", 0, 1e15, &v, &err), -1);
    assert_non_null(strstr(err.msg, "gpu_mem"));
    assert_non_null(strstr(err.msg, "ambiguous"));
    /* every bare prefix, any case, is told apart from an unknown unit */
    static const char *const bare[] = {"2T", "80g", "512M", "64k"};
    for (int i = 0; i < MESH_ARRAY_LEN(bare); i++) {
        assert_int_equal(mesh_parse_size(bare[i], "gpu_mem", 0, 1e15, &v, &err), -1);
        assert_non_null(strstr(err.msg, "is ambiguous: write"));
    }
    assert_int_equal(mesh_parse_size("eighty", "gpu_mem", 0, 1e15, &v, &err), -1);
    assert_non_null(strstr(err.msg, "gpu_mem"));
    assert_int_equal(mesh_parse_size("-5GB", "gpu_mem", 0, 1e15, &v, &err), -1);
    assert_int_equal(mesh_parse_size("80XB", "gpu_mem", 0, 1e15, &v, &err), -1);
    assert_non_null(strstr(err.msg, "unknown unit"));
    /* an 'e' with no digit after it is the unit's, not an exponent's:
     * the number is 80 and the unit unknown, not "80e" a bad number */
    assert_int_equal(mesh_parse_size("80eGB", "gpu_mem", 0, 1e15, &v, &err), -1);
    assert_non_null(strstr(err.msg, "unknown unit in '80eGB'"));
    assert_int_equal(mesh_parse_size("8E", "gpu_mem", 0, 1e15, &v, &err), -1);
    assert_non_null(strstr(err.msg, "unknown unit in '8E'"));
    assert_int_equal(mesh_parse_size("", "gpu_mem", 0, 1e15, &v, &err), -1);
    assert_int_equal(mesh_parse_size("1e400GB", "gpu_mem", 0, 1e15, &v, &err), -1);
    assert_int_equal(mesh_parse_size("2TB", "gpu_mem", 0, 1e12, &v, &err), -1);
    assert_non_null(strstr(err.msg, "out of range"));
}

static void int__strict(void **state)
{
    long long v;
    mesh_error_t err;
    assert_int_equal(mesh_parse_int("42", "n", 1, 100, &v, &err), 0);
    assert_int_equal(v, 42);
    assert_int_equal(mesh_parse_int("42x", "n", 1, 100, &v, &err), -1);
    assert_non_null(strstr(err.msg, "not an integer"));
    assert_int_equal(mesh_parse_int(" 42", "n", 1, 100, &v, &err), -1);
    assert_int_equal(mesh_parse_int("0", "n", 1, 100, &v, &err), -1);
    assert_non_null(strstr(err.msg, "1..100"));
    assert_int_equal(mesh_parse_int("99999999999999999999999", "n", 1, 100, &v, &err), -1);
    assert_int_equal(mesh_parse_int("", "n", 1, 100, &v, &err), -1);
    assert_int_equal(mesh_parse_int(NULL, "n", 1, 100, &v, &err), -1);
}

static void double__refuses_nan_inf_hex(void **state)
{
    double v;
    mesh_error_t err;
    assert_int_equal(mesh_parse_double("70.55e9", "params", 0, 1e16, &v, &err), 0);
    assert_true(v == 70.55e9);
    assert_int_equal(mesh_parse_double("nan", "x", 0, 1, &v, &err), -1);
    assert_int_equal(mesh_parse_double("inf", "x", 0, 1, &v, &err), -1);
    assert_int_equal(mesh_parse_double("0x1p3", "x", 0, 100, &v, &err), -1);
    assert_int_equal(mesh_parse_double("1.5", "x", 0, 1, &v, &err), -1);
}

static void bool__words(void **state)
{
    int b;
    mesh_error_t err;
    assert_int_equal(mesh_parse_bool("true", "x", &b, &err), 0);
    assert_int_equal(b, 1);
    assert_int_equal(mesh_parse_bool("Off", "x", &b, &err), 0);
    assert_int_equal(b, 0);
    assert_int_equal(mesh_parse_bool("maybe", "flash", &b, &err), -1);
    assert_non_null(strstr(err.msg, "flash"));
}

static void error__long_user_input_is_cut(void **state)
{
    char big[4096];
    memset(big, 'A', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    long long v;
    mesh_error_t err;
    assert_int_equal(mesh_parse_int(big, "n", 1, 2, &v, &err), -1);
    assert_true(strlen(err.msg) < 200);
    mesh_error_prefix(&err, "%s", big); /* stays one bounded line */
    assert_true(strlen(err.msg) < MESH_ERROR_MAX);
}

/* A prefix goes before the message with ": ", the whole cut to a
 * message's length (the message's end first, then the prefix's) and kept
 * to one line. */
static void error__prefix_before_the_message_cut_at_its_end(void **state)
{
    (void)state;
    char big[600], want[MESH_ERROR_MAX];
    mesh_error_t err;
    mesh_error_set(&err, "bad value");
    assert_int_equal(mesh_error_prefix(&err, "t.yaml:%d", 3), -1);
    assert_string_equal(err.msg, "t.yaml:3: bad value");
    memset(big, 'p', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    for (size_t len = MESH_ERROR_MAX - 14; len <= sizeof(big) - 1; len += 3) {
        mesh_error_set(&err, "bad value");
        mesh_error_prefix(&err, "%.*s", (int)len, big);
        snprintf(want, sizeof(want), "%.*s: bad value", (int)len, big);
        assert_string_equal(err.msg, want);
        assert_int_equal(strlen(err.msg),
                         len + 11 < MESH_ERROR_MAX ? len + 11 : MESH_ERROR_MAX - 1);
    }
    mesh_error_prefix(NULL, "x"); /* no error wanted: nothing written */
    /* a prefix of the user's (a file's name) stays on the message's line,
     * its controls shown as '?' as the message's own are */
    mesh_error_set(&err, "no such file");
    mesh_error_prefix(&err, "--from %s", "a\nb\x1b[31m\xc2\x85.json");
    assert_string_equal(err.msg, "--from a?b?[31m??.json: no such file");
}

/* A value of more than 40 characters is quoted as its first 40 and "...",
 * the rest of the message right after it; one of exactly 40 whole. */
static void error__quoted_value_cut_after_40_with_dots(void **state)
{
    (void)state;
    char v41[42], v40[41], want[160];
    memset(v41, '7', sizeof(v41) - 1);
    v41[sizeof(v41) - 1] = '\0';
    memcpy(v40, v41, 40);
    v40[40] = '\0';
    long long v;
    mesh_error_t err;
    assert_int_equal(mesh_parse_int(v41, "n", 1, 2, &v, &err), -1);
    snprintf(want, sizeof(want), "n: %s... is out of range (allowed 1..2)", v40);
    assert_string_equal(err.msg, want);
    assert_int_equal(mesh_parse_int(v40, "n", 1, 2, &v, &err), -1);
    snprintf(want, sizeof(want), "n: %s is out of range (allowed 1..2)", v40);
    assert_string_equal(err.msg, want);
}

/* Counts as people write them: SI suffixes are powers of 1000 (32k is
 * 32000, not 32768), Ki..Ti powers of 1024, computed exactly. */
static void count__suffixes__exact_values(void **state)
{
    static const struct {
        const char *s;
        long long v;
    } ok[] = {
        {"32768", 32768},
        {"32k", 32000},
        {"32K", 32000},
        {"32Ki", 32768},
        {"4.2M", 4200000},
        {"1.5k", 1500},
        {"8B", 8000000000LL},
        {"8G", 8000000000LL},
        {"1T", 1000000000000LL},
        {"15T", 15000000000000LL},
        {"2Mi", 2097152},
        {"1Gi", 1073741824LL},
        {"1Ti", 1099511627776LL},
        {"0.5Ki", 512},
        {"0.25Ki", 256},
        {"70.55e9", 70550000000LL},
        {"1e12", 1000000000000LL},
        {"1.000000000000000000000000k", 1000},
        {"0.000001M", 1},
        {"5e-1k", 500},
        {"25e-3M", 25000},
        {"+7", 7},
        {"9223372036854775807", LLONG_MAX},
        {"-9223372036854775808", LLONG_MIN},
        {"-2k", -2000},
        {"0", 0},
        /* twenty digits, 2^64 - 6 (the most 64 bits hold that ends in a
         * zero), then the exponent brings it into range: read exactly */
        {"18446744073709551610e-1", 1844674407370955161LL},
    };
    mesh_error_t err;
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        long long v = -42;
        if (mesh_parse_count(ok[i].s, "n", LLONG_MIN, LLONG_MAX, &v, &err) < 0)
            fail_msg("%s: %s", ok[i].s, err.msg);
        if (v != ok[i].v)
            fail_msg("%s read as %lld, not %lld", ok[i].s, v, ok[i].v);
    }
}

static void count__not_whole_overflow_negative__refused(void **state)
{
    long long v = 42;
    mesh_error_t err;
    assert_int_equal(mesh_parse_count("1.2345k", "train.tokens", 1, 1000000, &v, &err), -1);
    assert_string_equal(err.msg, "train.tokens: '1.2345k' is not a whole number (expected an "
                                 "integer in 1..1000000)");
    assert_int_equal(mesh_parse_count("0.3Ki", "n", 0, 1000000, &v, &err), -1); /* 307.2 */
    assert_non_null(strstr(err.msg, "not a whole number"));
    assert_int_equal(mesh_parse_count("1.5", "n", 0, 10, &v, &err), -1);
    assert_int_equal(mesh_parse_count("32kb", "train.seq_len", 1, 1 << 24, &v, &err), -1);
    assert_string_equal(err.msg, "train.seq_len: '32kb' is not an integer (expected 1..16777216: "
                                 "digits, or a number with k, M, G or B, T (powers of 1000) or "
                                 "Ki, Mi, Gi, Ti (powers of 1024): 32k is 32000, 32Ki 32768)");
    const char *bad[] = {"32m", "32 k", " 32", "k", "1kk", "0x10", "inf", "nan", "1e", "", ".",
                         "32ki",
                         /* a sign is an exponent's only after its 'e' */
                         "1+2", "3+3k", "1-2"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (mesh_parse_count(bad[i], "n", 0, LLONG_MAX, &v, &err) == 0)
            fail_msg("'%s' was read as %lld", bad[i], v);
    assert_int_equal(mesh_parse_count(NULL, "n", 0, 1, &v, &err), -1);
    /* overflow: past long long, past 2^64 on the way, and by the exponent */
    const char *big[] = {"9223372036854775808", "-9223372036854775809", "99999999999999999999",
                         "10000000Ti", "1e30", "1e99999", "18446744073709551616k",
                         /* the last factor 10 past 2^64 (1.9e18 x 10): not wrapped */
                         "19e18", "2e19"};
    for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
        assert_int_equal(mesh_parse_count(big[i], "n", LLONG_MIN, LLONG_MAX, &v, &err), -1);
        if (!strstr(err.msg, "out of range"))
            fail_msg("%s: %s", big[i], err.msg);
    }
    assert_int_equal(mesh_parse_count("-1k", "train.steps", 1, 1000, &v, &err), -1);
    assert_string_equal(err.msg, "train.steps: -1k is out of range (allowed 1..1000)");
    assert_int_equal(mesh_parse_count("1.001k", "n", 1, 1000, &v, &err), -1);
    assert_string_equal(err.msg, "n: 1.001k is out of range (allowed 1..1000)");
    assert_int_equal(v, 42);
}

/* Bandwidths: the unit says bits or bytes, and per second. */
static void bandwidth__units__exact_bytes_per_second(void **state)
{
    static const struct {
        const char *s;
        double v;
    } ok[] = {
        {"50GB/s", 50e9},      {"400Gb/s", 50e9},
        {"400Gbit/s", 50e9},   {"50GByte/s", 50e9},
        {"3.35TB/s", 3.35e12}, {"1.6Tb/s", 200e9},
        {"800Mb/s", 100e6},    {"100MB/s", 100e6},
        {"25 GB/s", 25e9},     {"25GiB/s", 25.0 * 1073741824.0},
        {"200gbit/s", 25e9},   {"1e9B/s", 1e9},
        {"8b/s", 1},           {"0.5GB/s", 0.5e9}, /* a number under 1 before its unit */
    };
    mesh_error_t err;
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        double v = -1;
        if (mesh_parse_bandwidth(ok[i].s, "bw", 0, 1e15, &v, &err) < 0)
            fail_msg("%s: %s", ok[i].s, err.msg);
        if (v != ok[i].v)
            fail_msg("%s read as %.17g, not %.17g", ok[i].s, v, ok[i].v);
    }
}

/* A number as long as the parsers' copy of it (64 bytes with its NUL): 63
 * characters are read, 64 and more refused as no number, and nothing is
 * written past the copy (the sanitizer build sees a byte written there). */
static void bandwidth_and_size__numbers_at_the_copy_length(void **state)
{
    char s[96];
    mesh_error_t err;
    for (int digits = 62; digits <= 66; digits++) {
        memset(s, '0', (size_t)digits);
        s[digits - 1] = '5'; /* 0...05: five, however many zeros before it */
        snprintf(s + digits, sizeof(s) - (size_t)digits, "GB/s");
        double v = 42;
        int r = mesh_parse_bandwidth(s, "net_bw", 1, 1e11, &v, &err);
        if (digits <= 63 ? r != 0 || v != 5e9 : r == 0 || v != 42 || !strstr(err.msg, "not a"))
            fail_msg("%d digits: %d, %g, %s", digits, r, v, r ? err.msg : "");
        snprintf(s + digits, sizeof(s) - (size_t)digits, "GB");
        v = 42;
        r = mesh_parse_size(s, "memory", 1, 1e15, &v, &err);
        if (digits <= 63 ? r != 0 || v != 5e9 : r == 0 || v != 42 || !strstr(err.msg, "not a"))
            fail_msg("size, %d digits: %d, %g, %s", digits, r, v, r ? err.msg : "");
    }
}

static void bandwidth__ambiguous__both_readings(void **state)
{
    static const struct {
        const char *s, *msg;
    } bad[] = {
        {"400Gb", "net_bw: '400Gb' is ambiguous: write 400Gb/s (50.0 GB/s, bits) or 400GB/s "
                  "(bytes)"},
        {"400GB", "net_bw: '400GB' is ambiguous: write 400Gb/s (50.0 GB/s, bits) or 400GB/s "
                  "(bytes)"},
        {"400G", "net_bw: '400G' is ambiguous: write 400Gb/s (50.0 GB/s, bits) or 400GB/s "
                 "(bytes)"},
        {"80G/s", "net_bw: '80G/s' is ambiguous: write 80Gb/s (10.0 GB/s, bits) or 80GB/s "
                  "(bytes)"},
        {"400", "net_bw: '400' has no unit: write 400GB/s (bytes per second) or 400Gb/s (bits), "
                "or the like"},
        {"400Gbit", "net_bw: '400Gbit' is no bandwidth: write 400Gbit/s"},
        {"25GiB", "net_bw: '25GiB' is no bandwidth: write 25GiB/s"},
        {"50gB/s", NULL}, /* the prefix any case, the quantum as written: this one is */
        {"50XB/s", "net_bw: unknown unit in '50XB/s' (write GB/s or Gb/s (bytes or bits per "
                   "second; also MB/s TB/s Mb/s Tb/s Gbit/s GByte/s GiB/s))"},
        /* an 'e' with no digit after it is the unit's, as in sizes */
        {"50eGB/s", "net_bw: unknown unit in '50eGB/s' (write GB/s or Gb/s (bytes or bits per "
                    "second; also MB/s TB/s Mb/s Tb/s Gbit/s GByte/s GiB/s))"},
        {"fast", "net_bw: 'fast' is not a bandwidth (write e.g. GB/s or Gb/s (bytes or bits per "
                 "second; also MB/s TB/s Mb/s Tb/s Gbit/s GByte/s GiB/s))"},
        {"-5GB/s", NULL},
        {"1e400GB/s", NULL},
        {"", "net_bw: empty bandwidth (write GB/s or Gb/s (bytes or bits per second; also MB/s "
             "TB/s Mb/s Tb/s Gbit/s GByte/s GiB/s))"},
        {"1Tb/s", "net_bw: 1Tb/s is out of range (allowed 100.0 MB/s..100.0 GB/s)"},
    };
    mesh_error_t err;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        double v = 42;
        int r = mesh_parse_bandwidth(bad[i].s, "net_bw", 1e8, 1e11, &v, &err);
        if (!bad[i].msg && r == 0 && strcmp(bad[i].s, "50gB/s") == 0 && v == 50e9)
            continue;
        if (r == 0)
            fail_msg("'%s' was read as %g", bad[i].s, v);
        if (bad[i].msg && strcmp(err.msg, bad[i].msg) != 0)
            fail_msg("'%s': '%s', wanted '%s'", bad[i].s, err.msg, bad[i].msg);
        assert_true(v == 42);
    }
}

/* Numbers for people: three significant digits at least, an SI prefix. */
static void format_si__three_digits(void **state)
{
    static const struct {
        double v;
        const char *s;
    } cases[] = {
        {1.281e5, "128.1 k"}, {3.602e6, "3.60 M"}, {12345, "12.3 k"},
        {999.4, "999"},       {999.6, "1.00 k"},   {950, "950"},
        {12.5, "12.5"},       {5, "5.00"},         {0, "0"},
        {0.25, "0.25"},       {1e9, "1.00 G"},     {2.5e13, "25.0 T"},
        {-4.2e6, "-4.20 M"},  {9.996, "10.0"},     {99.96, "100"},
        {1e21, "1000.0 E"},   {999949, "999.9 k"}, {999960, "1.00 M"},
        {9.996e6, "10.0 M"},  {50e9, "50.0 G"},
    };
    char buf[16];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (strcmp(mesh_format_si(cases[i].v, buf, sizeof(buf)), cases[i].s) != 0)
            fail_msg("%g: '%s', wanted '%s'", cases[i].v, buf, cases[i].s);
    char tiny[4];
    assert_string_equal(mesh_format_si(3.602e6, tiny, sizeof(tiny)), "3.6");
}

/* mesh_grow: the same array while there is room, then twice the room
 * (first: `first` items), the items kept; an array too large for a size_t
 * to count refused, and left as it was. */
static void grow__doubles_when_full(void **state)
{
    (void)state;
    size_t cap = 0;
    long *a = NULL;
    for (size_t n = 0; n < 100; n++) {
        size_t was = cap;
        long *g = mesh_grow(a, &cap, n, sizeof(*a), 16);
        assert_non_null(g);
        if (n < was) {
            assert_ptr_equal(g, a);
            assert_int_equal(cap, was);
        } else {
            assert_int_equal(cap, was ? 2 * was : 16);
        }
        a = g;
        a[n] = (long)n * 7;
    }
    assert_int_equal(cap, 128); /* 16, 32, 64, 128 */
    for (size_t n = 0; n < 100; n++)
        assert_int_equal(a[n], (long)n * 7);
    free(a);
    /* counts whose doubling, or its bytes, wrap to a small size: refused,
     * not a few bytes allocated for them */
    char *big = malloc(1);
    assert_non_null(big);
    *big = 'x';
    size_t huge = SIZE_MAX / 2 + 2; /* twice is 2 */
    assert_null(mesh_grow(big, &huge, huge, 1, 16));
    assert_int_equal(huge, SIZE_MAX / 2 + 2);
    size_t many = SIZE_MAX / 128 + 2; /* twice, times 64 bytes, is 128 bytes */
    assert_null(mesh_grow(big, &many, many, 64, 16));
    assert_int_equal(many, SIZE_MAX / 128 + 2);
    assert_int_equal(*big, 'x');
    free(big);
}

/* The growable string: taken or freed, it is empty again, so that an
 * error path may free it twice or build another string in it. */

static void buf__empty_after_take_or_free(void **state)
{
    (void)state;
    mesh_buf_t b;
    mesh_buf_init(&b);
    mesh_buf_puts(&b, "first");
    mesh_buf_free(&b);
    mesh_buf_free(&b); /* twice: nothing left to free */
    mesh_buf_printf(&b, "%s-%d", "second", 2);
    char *s = mesh_buf_take(&b);
    assert_string_equal(s, "second-2");
    free(s);
    s = mesh_buf_take(&b);
    assert_string_equal(s, "");
    free(s);
}

/* Each unit from its first whole second: a run of exactly one day is
 * "1 d 0 h", not "24 h 0 min"; under an hour minutes round up, beyond it
 * the smaller unit is cut (3,659 s is "1 h 0 min"); a fraction of a second
 * rounds up. */
static void duration_str__units_at_their_edges(void **state)
{
    (void)state;
    static const struct {
        double seconds;
        const char *want;
    } cases[] = {
        {0, "0 s"},
        {0.2, "1 s"},
        {59, "59 s"},
        {59.5, "1 min"},
        {60, "1 min"},
        {61, "2 min"},
        {3599, "60 min"},
        {3600, "1 h 0 min"},
        {3659, "1 h 0 min"},
        {86399, "23 h 59 min"},
        {86400, "1 d 0 h"},
        {86400 + 7 * 3600 + 1, "1 d 7 h"},
        {400 * 86400.0, "400 d 0 h"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++)
        if (strcmp(mesh_duration_str(cases[i].seconds).s, cases[i].want))
            fail_msg("%g s: \"%s\", want \"%s\"", cases[i].seconds,
                     mesh_duration_str(cases[i].seconds).s, cases[i].want);
}

/* A fraction someone gave is shown as given, to three digits. */
static void pct_str__as_given(void **state)
{
    (void)state;
    assert_string_equal(mesh_pct_str(0.125).s, "12.5%");
    assert_string_equal(mesh_pct_str(0.05).s, "5%");
    assert_string_equal(mesh_pct_str(0.07).s, "7%"); /* not 7.000000000000001 */
    assert_string_equal(mesh_pct_str(0.3333).s, "33.3%");
    assert_string_equal(mesh_pct_str(1.5).s, "150%");
    assert_string_equal(mesh_pct_str(0).s, "0%");
}

/* Bytes as policy check shows them: whole bytes under 1 KiB, else one
 * decimal of the largest binary unit, up to PiB. */
static void format_bytes__units(void **state)
{
    (void)state;
    static const struct {
        double bytes;
        const char *text;
    } cases[] = {
        {0, "0 B"},          {1023, "1023 B"},           {1024, "1.0 KiB"},
        {2048, "2.0 KiB"},   {1.5 * 1048576, "1.5 MiB"}, {80 * 1073741824.0, "80.0 GiB"},
        {-2048, "-2.0 KiB"}, {1e18, "888.2 PiB"},
    };
    char buf[32];
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++)
        assert_string_equal(mesh_format_bytes(cases[i].bytes, buf, sizeof(buf)), cases[i].text);
}

/* A copy that does not fit is cut, ended inside the buffer, and says so;
 * nothing past the buffer is written.  The buffer is filled first, so
 * that an end left unwritten shows. */
static void strlcpy__cut_inside_the_buffer(void **state)
{
    (void)state;
    struct {
        char dst[4];
        char after;
    } t;
    memset(&t, 'x', sizeof(t));
    assert_int_equal(mesh_strlcpy(t.dst, "abcdef", sizeof(t.dst)), -1);
    assert_memory_equal(t.dst, "abc", 4);
    assert_int_equal(t.after, 'x');
    assert_int_equal(mesh_strlcpy(t.dst, "abc", sizeof(t.dst)), 0);
    assert_memory_equal(t.dst, "abc", 4);
    assert_int_equal(mesh_strlcpy(t.dst, "abc", 0), -1);
}

/* A list's items joined by the separator, the first without; an item
 * that does not fit cut inside the buffer, and nothing written once it is
 * full. */
static void list_add__joins_and_cuts(void **state)
{
    (void)state;
    struct {
        char list[10];
        char after;
    } t;
    memset(&t, 'x', sizeof(t));
    t.list[0] = '\0';
    mesh_list_add(t.list, sizeof(t.list), ",", "%s=%d", "tp", 2);
    assert_string_equal(t.list, "tp=2");
    mesh_list_add(t.list, sizeof(t.list), ", ", "pp");
    assert_string_equal(t.list, "tp=2, pp");
    mesh_list_add(t.list, sizeof(t.list), ",", "%s", "ep");
    assert_string_equal(t.list, "tp=2, pp,");
    mesh_list_add(t.list, sizeof(t.list), ",", "%s", "etp");
    assert_string_equal(t.list, "tp=2, pp,");
    assert_int_equal(t.after, 'x');
}

/* The one JSON escaper (RFC 8259 section 7): quote and backslash escaped,
 * newline as \n, other controls and DEL as \u00XX, UTF-8 bytes kept. */
static void json_string__escapes(void **state)
{
    char *q = mesh_json_string("a\"b\\c\nd\001e\177f \303\251");
    assert_string_equal(q, "\"a\\\"b\\\\c\\nd\\u0001e\\u007ff \303\251\"");
    free(q);
    q = mesh_json_string("");
    assert_string_equal(q, "\"\"");
    free(q);
}

/* "Did you mean": the nearest name within two edits and a third of its
 * length, case ignored; nothing for a word that is no typo of any. */
static void closest_name__typos_only(void **state)
{
    const char *opts[] = {"nodes", "node", "gpus-per-node", "gpu", "gpu-mem", "no-pictures"};
    assert_string_equal(mesh_closest_name("ndes", opts, 6), "nodes");
    assert_string_equal(mesh_closest_name("gpus-per-nod", opts, 6), "gpus-per-node");
    assert_string_equal(mesh_closest_name("GPU-MEM", opts, 6), "gpu-mem");
    assert_string_equal(mesh_closest_name("node", opts, 6), "node"); /* itself */
    assert_string_equal(mesh_closest_name("nod", opts, 6), "node");  /* the nearer of two */
    assert_null(mesh_closest_name("model", opts, 6));
    assert_null(mesh_closest_name("", opts, 6));
    /* a third of the name: one letter off a two-letter name is another word */
    const char *mesh[] = {"tp", "pp", "dp"};
    assert_null(mesh_closest_name("cp", mesh, 3));
    /* ties go to the first; NULL entries and arguments are no names */
    const char *ties[] = {NULL, "abcd", "abce"};
    assert_string_equal(mesh_closest_name("abcf", ties, 3), "abcd");
    assert_null(mesh_closest_name(NULL, ties, 3));
    assert_null(mesh_closest_name("abcd", NULL, 3));
    /* more than 32 characters, or 3 apart in length: not compared */
    const char *longs[] = {"abcdefghijklmnopqrstuvwxyzabcdefgh"};
    assert_null(mesh_closest_name("abcdefghijklmnopqrstuvwxyzabcdefgh", longs, 1));
    assert_null(mesh_closest_name("gpus-per-node-x-y", opts, 6));
}

/* mesh_typo_distance: one edit each for a letter dropped, added, changed
 * or swapped with its neighbour, case ignored; 3 for anything further
 * (what "did you mean" compares, with its thresholds on top). */
static void typo_distance__each_edit_one(void **state)
{
    (void)state;
    static const struct {
        const char *a, *b;
        int want;
    } cases[] = {
        {"nodes", "nodes", 0},   {"NODES", "nodes", 0},   {"nodess", "nodes", 1}, /* dropped */
        {"ab", "a", 1},          {"ndes", "nodes", 1},                            /* added */
        {"nodez", "nodes", 1},   {"ndoes", "nodes", 1}, /* changed, swapped */
        {"nodesxx", "nodes", 2}, {"xnodesx", "nodes", 2}, {"nodesxxx", "nodes", 3},
        {"abc", "xyz", 3},       {"", "ab", 2},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        int got = mesh_typo_distance(cases[i].a, cases[i].b);
        if (got != cases[i].want)
            fail_msg("'%s' to '%s': %d edits, want %d", cases[i].a, cases[i].b, got, cases[i].want);
    }
}

/* mesh_run_bounded: 0 when the work finished in time (its argument the
 * caller's again), -1 when it did not, the work then finishing on its own
 * thread and handing its argument to drop. */
static atomic_int bounded_state; /* 1: ran, 2: dropped */

static void bounded_work(void *arg)
{
    const struct timespec *pause = arg;
    if (pause)
        nanosleep(pause, NULL);
    atomic_store(&bounded_state, 1);
}

static void bounded_drop(void *arg)
{
    (void)arg;
    atomic_store(&bounded_state, 2);
}

static void bounded__in_time_zero_late_minus_one(void **state)
{
    (void)state;
    atomic_store(&bounded_state, 0);
    assert_int_equal(mesh_run_bounded(bounded_work, bounded_drop, NULL, 10), 0);
    assert_int_equal(atomic_load(&bounded_state), 1); /* ran, not dropped */
    static const struct timespec slow = {0, 300000000};
    atomic_store(&bounded_state, 0);
    assert_int_equal(mesh_run_bounded(bounded_work, bounded_drop, (void *)&slow, 0.02), -1);
    for (int i = 0; i < 500 && atomic_load(&bounded_state) != 2; i++)
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    assert_int_equal(atomic_load(&bounded_state), 2); /* it finished, then gave arg away */
    /* no bound: in this thread */
    atomic_store(&bounded_state, 0);
    assert_int_equal(mesh_run_bounded(bounded_work, bounded_drop, NULL, 0), 0);
    assert_int_equal(atomic_load(&bounded_state), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(grow__doubles_when_full),
        cmocka_unit_test(buf__empty_after_take_or_free),
        cmocka_unit_test(json_string__escapes),
        cmocka_unit_test(strlcpy__cut_inside_the_buffer),
        cmocka_unit_test(list_add__joins_and_cuts),
        cmocka_unit_test(duration_str__units_at_their_edges),
        cmocka_unit_test(pct_str__as_given),
        cmocka_unit_test(format_bytes__units),
        cmocka_unit_test(closest_name__typos_only),
        cmocka_unit_test(typo_distance__each_edit_one),
        cmocka_unit_test(size__units__exact_bytes),
        cmocka_unit_test(size__ambiguous_or_bad__named_error),
        cmocka_unit_test(bounded__in_time_zero_late_minus_one),
        cmocka_unit_test(int__strict),
        cmocka_unit_test(count__suffixes__exact_values),
        cmocka_unit_test(count__not_whole_overflow_negative__refused),
        cmocka_unit_test(bandwidth__units__exact_bytes_per_second),
        cmocka_unit_test(bandwidth__ambiguous__both_readings),
        cmocka_unit_test(bandwidth_and_size__numbers_at_the_copy_length),
        cmocka_unit_test(format_si__three_digits),
        cmocka_unit_test(double__refuses_nan_inf_hex),
        cmocka_unit_test(bool__words),
        cmocka_unit_test(error__long_user_input_is_cut),
        cmocka_unit_test(error__prefix_before_the_message_cut_at_its_end),
        cmocka_unit_test(error__quoted_value_cut_after_40_with_dots),
    };
    return cmocka_run_group_tests_name("util", tests, NULL, NULL);
}
