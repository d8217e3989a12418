/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The number parsers behind every option, spec value and policy key: what
 * they accept must lie in the range they were given.
 */
#include <math.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_string(data, size);
    if (!s)
        return 0;
    mesh_error_t err;
    long long i;
    double d;
    int b;
    if (mesh_parse_int(s, "n", -5, 1LL << 40, &i, &err) == 0 && (i < -5 || i > 1LL << 40))
        abort();
    if (mesh_parse_double(s, "x", 0.0, 1e30, &d, &err) == 0 && !(d >= 0.0 && d <= 1e30))
        abort();
    if (mesh_parse_size(s, "size", 1.0, 1e18, &d, &err) == 0 && !(d >= 1.0 && d <= 1e18))
        abort();
    if (mesh_parse_bool(s, "flag", &b, &err) == 0 && b != 0 && b != 1)
        abort();
    char buf[32];
    if (mesh_parse_double(s, "x", -1e300, 1e300, &d, &err) == 0)
        mesh_format_bytes(d, buf, sizeof(buf));
    /* the times (lib/when.c) and a deadline goal: in range, or refused */
    long long t;
    long minutes;
    mesh_size_aim_t aim;
    if (mesh_parse_duration(s, "t", &t, &err) == 0 && (t < 1 || t > MESH_DURATION_MAX))
        abort();
    if (mesh_parse_date(s, "d", &t, &err) == 0 && (t < 0 || t >= 253402300800LL)) /* 10000-01-01 */
        abort();
    if (mesh_parse_max_time(s, "m", &minutes, &err) == 0 &&
        (minutes < 0 || minutes > MESH_DURATION_MAX / 60))
        abort();
    if (mesh_size_aim_parse(s, 1796083200LL, &aim, &err) == 0 &&
        ((aim.goal == MESH_SIZE_DEADLINE) != (aim.within > 0) || strlen(aim.text) != strlen(s)))
        abort();
    if (mesh_size_max_time_parse(s, NULL, &minutes, &err) == 0 && minutes < 0)
        abort();
    free(s);
    return 0;
}
