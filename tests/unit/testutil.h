/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Helpers shared by the unit tests.
 */
#ifndef MESH_TESTUTIL_H
#define MESH_TESTUTIL_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#ifdef HAVE_CONFIG_H
#include "config.h" /* HAVE_MALLINFO2 */
#endif
#ifdef HAVE_MALLINFO2
#include <malloc.h>
#endif

#include "meshplan.h"

/* Presets straight from the source tree (make check exports MESH_MODELS_DIR). */
static inline mesh_spec_dirs_t test_dirs(void)
{
    mesh_spec_dirs_t d = {{getenv("MESH_MODELS_DIR"), NULL, NULL, NULL}};
    return d;
}

static inline mesh_model_t test_preset(const char *name)
{
    mesh_spec_dirs_t d = test_dirs();
    mesh_model_t m;
    mesh_error_t err;
    if (mesh_spec_load(name, &d, &m, &err) < 0)
        fail_msg("%s", err.msg);
    return m;
}

static inline mesh_model_t test_spec(const char *yaml)
{
    mesh_spec_dirs_t d = test_dirs();
    mesh_model_t m;
    mesh_error_t err;
    if (mesh_spec_parse(yaml, strlen(yaml), "test.yaml", &d, &m, &err) < 0)
        fail_msg("%s", err.msg);
    return m;
}

/* test_spec of the YAML that fmt and what follows print (at most 1 KiB). */
static inline mesh_model_t test_specf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline mesh_model_t test_specf(const char *fmt, ...)
{
    char yaml[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(yaml, sizeof(yaml), fmt, ap);
    va_end(ap);
    if (n < 0 || n >= (int)sizeof(yaml))
        fail_msg("test_specf: the spec is longer than %zu bytes", sizeof(yaml));
    return test_spec(yaml);
}

/* An allocation of GPUs by name, or (gpu NULL) of gpu_mem bytes each. */
static inline mesh_alloc_t test_alloc_mem(const char *gpu, double gpu_mem, int nodes, int gpn)
{
    mesh_policy_t pol;
    mesh_alloc_t a;
    mesh_error_t err;
    mesh_policy_init(&pol);
    if (mesh_policy_alloc(&pol.assume, gpu, gpu_mem, 0, nodes, gpn, &a, &err) < 0)
        fail_msg("%s", err.msg);
    return a;
}

static inline mesh_alloc_t test_alloc(const char *gpu, int nodes, int gpn)
{
    return test_alloc_mem(gpu, 0, nodes, gpn);
}

static inline mesh_layout_t test_mesh(const char *s)
{
    mesh_layout_t l;
    mesh_error_t err;
    if (mesh_layout_parse(s, &l, &err) < 0)
        fail_msg("%s", err.msg);
    return l;
}

/* A complete layout from a --mesh string: the memory levers it leaves out
 * (written only when used) are off. */
static inline mesh_layout_t test_layout(const char *s)
{
    mesh_layout_t l = test_mesh(s);
    if (l.offload == MESH_FREE)
        l.offload = 0;
    if (l.tp_overlap_off == MESH_FREE)
        l.tp_overlap_off = 0;
    if ((int)l.moments == MESH_FREE)
        l.moments = MESH_PREC_FP32;
    if (l.recompute_layers == MESH_FREE)
        l.recompute_layers = 0;
    if (l.recompute_modules == MESH_FREE)
        l.recompute_modules = 0;
    return l;
}

/* within tol, in double precision (cmocka's assert_float_equal rounds to float) */
#define assert_double_near(got, want, tol) assert_true(fabs((got) - (want)) <= (tol))

/* Plan with the default policy; fails the test on an error. */
static inline mesh_plan_t *test_plan(const mesh_model_t *m, const mesh_alloc_t *a, const char *mesh)
{
    mesh_policy_t pol;
    mesh_error_t err;
    mesh_policy_init(&pol);
    mesh_layout_t pins = test_mesh(mesh);
    mesh_plan_t *p = mesh_plan_create(m, a, &pins, &pol.assume, &err);
    if (!p)
        fail_msg("%s", err.msg);
    return p;
}

/* Variable `name` as the first task of plan p gets it (node 0, local 0),
 * malloc'd; fails the test when the environment cannot be made or lacks it. */
static inline char *test_env_value(const mesh_plan_t *p, const char *name)
{
    mesh_task_t t = {.master_addr = "n1", .master_port = 20000, .numa_node = -1};
    mesh_error_t err;
    mesh_env_t *e = mesh_env_create(p, &t, &err);
    if (!e)
        fail_msg("%s", err.msg);
    char *v = NULL;
    for (int i = 0; i < mesh_env_count(e) && !v; i++)
        if (strcmp(mesh_env_name(e, i), name) == 0)
            v = strdup(mesh_env_value(e, i));
    mesh_env_destroy(e);
    if (!v)
        fail_msg("the environment has no %s", name);
    return v;
}

#if defined(HAVE_MALLINFO2) && !defined(__SANITIZE_ADDRESS__)
/* glibc's bytes in use: its chunks and its mapped blocks. */
static inline size_t test_heap_in_use(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}
#endif

/* slurmctld, slurmstepd and the CLI's sizing call the library again and
 * again in one process, so what a call takes it must give back.  work()
 * is run twice (what stays loaded, loaded), then five times more: a leak
 * leaves more bytes in use after each of the five; a library that grows a
 * buffer of its own now and then does not.  The bytes are glibc's count
 * (mallinfo2: chunks and mapped blocks), which holds the chunks of its
 * per-thread cache as in use: exact only with that cache off, so make
 * check and the mutants' runner add glibc.malloc.tcache_count=0 to
 * GLIBC_TUNABLES.  Skipped without it, without mallinfo2, and under
 * AddressSanitizer, whose allocator glibc does not see (LeakSanitizer
 * reports leaks there at exit). */
static inline void test_gives_back(void (*work)(void), const char *what)
{
#if defined(HAVE_MALLINFO2) && !defined(__SANITIZE_ADDRESS__)
    const char *tunables = getenv("GLIBC_TUNABLES");
    if (!tunables || !strstr(tunables, "glibc.malloc.tcache_count=0")) {
        fprintf(stderr, "%s: skipped: run with GLIBC_TUNABLES=glibc.malloc.tcache_count=0\n", what);
        skip();
    }
    work();
    work();
    size_t at = test_heap_in_use();
    int grew = 0;
    for (int i = 0; i < 5; i++) {
        work();
        size_t now = test_heap_in_use();
        grew += now > at;
        at = now;
    }
    if (grew == 5)
        fail_msg("%s: more bytes in use after each of five runs", what);
#else
    (void)work;
    fprintf(stderr, "%s: skipped: no mallinfo2, or a sanitizer's allocator\n", what);
    skip();
#endif
}

#define assert_bytes(actual, expected)                                                             \
    assert_int_equal((uint64_t)((actual) + 0.5), (uint64_t)(expected))

/* The documentation cannot fall behind the tables: every key that an
 * error's list of allowed keys names (the list comes from the library's own
 * table) is mentioned in the manual page `page` (man/PAGE.in, beside the presets),
 * as a word of its own.  `list` runs from the first key to `end`; keys are
 * separated by `sep` characters; a dotted key (gpu.NAME.FIELD) is checked by
 * its first part.  Returns how many keys were checked. */
static inline int test_man_lists(const char *page, const char *list, char end, const char *sep)
{
    char path[1024], *text;
    snprintf(path, sizeof(path), "%s/../../man/%s.in", getenv("MESH_MODELS_DIR"), page);
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("cannot read %s", path);
    text = calloc(1, 1 << 20);
    size_t n = fread(text, 1, (1 << 20) - 1, f);
    fclose(f);
    text[n] = '\0';
    int checked = 0;
    char stop[16];
    snprintf(stop, sizeof(stop), "%s%c", sep, end);
    while (*list && *list != end) {
        size_t len = strcspn(list, stop), word = strcspn(list, ".");
        char key[64];
        snprintf(key, sizeof(key), "%.*s", (int)(word < len ? word : len), list);
        int found = 0;
        /* a word: no lower-case letter, digit or '_' either side (troff's
         * \fB and \fR are upper case) */
        for (const char *p = strstr(text, key); p && !found; p = strstr(p + 1, key)) {
            char before = p > text ? p[-1] : ' ', after = p[strlen(key)];
            found = !strchr("abcdefghijklmnopqrstuvwxyz0123456789_", before) &&
                    (!after || !strchr("abcdefghijklmnopqrstuvwxyz0123456789_", after));
        }
        if (!found)
            fail_msg("%s does not document '%s'", page, key);
        checked++;
        list += len;
        list += strspn(list, sep);
    }
    free(text);
    return checked;
}

#endif
