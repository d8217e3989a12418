/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lib/util.c: the strict number, size and boolean parsers shared by specs,
 * policies and the CLI, errors that quote user input, the JSON escaper and
 * the typo rule of "did you mean".
 */
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
    assert_int_equal(mesh_parse_size("eighty", "gpu_mem", 0, 1e15, &v, &err), -1);
    assert_non_null(strstr(err.msg, "gpu_mem"));
    assert_int_equal(mesh_parse_size("-5GB", "gpu_mem", 0, 1e15, &v, &err), -1);
    assert_int_equal(mesh_parse_size("80XB", "gpu_mem", 0, 1e15, &v, &err), -1);
    assert_non_null(strstr(err.msg, "unknown unit"));
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(json_string__escapes),
        cmocka_unit_test(closest_name__typos_only),
        cmocka_unit_test(size__units__exact_bytes),
        cmocka_unit_test(size__ambiguous_or_bad__named_error),
        cmocka_unit_test(int__strict),
        cmocka_unit_test(double__refuses_nan_inf_hex),
        cmocka_unit_test(bool__words),
        cmocka_unit_test(error__long_user_input_is_cut),
    };
    return cmocka_run_group_tests_name("util", tests, NULL, NULL);
}
