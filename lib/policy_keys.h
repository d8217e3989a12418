/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The policy's key tables, private to libmeshplan (lib/policy_keys.c): the
 * one place a policy key is a row.
 */
#ifndef MESHPLAN_POLICY_KEYS_H
#define MESHPLAN_POLICY_KEYS_H

#include <stddef.h>

#include "internal.h"
#include "meshplan/policy.h"

/* How a key's value is read, and what its member holds. */
enum kind {
    K_WORD,   /* one of `words`; int: its index */
    K_NUM,    /* a number in min..max; double: it times `scale` (0: 1) */
    K_SIZE,   /* bytes in min..max; double */
    K_RATE,   /* bytes per second in min..max, the unit saying bits or bytes; double */
    K_INT,    /* a count in min..max (32, 1k, 2Ki: mesh_parse_count); int */
    K_PATH,   /* an absolute path, or one of `words`; char[MESH_PATH_MAX] */
    K_TEXT,   /* a name, checked with the rest by mesh_policy_check; char[size] */
    K_CUSTOM, /* read(): values of their own shape */
};

/*
 * One key: its name, kind, member (an offset into the table's struct:
 * mesh_policy_t for the top level, an override or a partition for the
 * gpu.NAME. and partition.NAME. fields), range, the words it takes, its
 * default as meshplan-policy(5) writes it (NULL: none, the member is 0 or "") and
 * what it means.  The tables below drive mesh_policy_set, the YAML reader's
 * sections, the lists of allowed keys in errors, the range errors and
 * mesh_policy_init's defaults; tests/unit/test_policy.c checks that
 * meshplan-policy(5) names every key.  Adding a key is a row, its member and its
 * use.
 */
typedef struct policy_key {
    const char *name;
    enum kind kind;
    size_t off, size;
    double min, max, scale;
    const char *const *words; /* NULL-terminated; matched in any case */
    int (*read)(void *base, const char *key, const char *value, mesh_error_t *err);
    size_t to; /* a GPU field: the mesh_gpu_t member a nonzero value replaces; 0: none */
    const char *dflt;
    const char *doc;
    const char *unit; /* K_NUM: what the number counts, after its range in errors */
} policy_key_t;

#define AT(type, member) .off = offsetof(type, member), .size = sizeof(((type *)0)->member)
#define POL(member)      AT(mesh_policy_t, member)

/* The top-level keys, in the order errors list them; gpu.NAME.FIELD; and
 * partition.NAME.FIELD: each with its count. */
extern const policy_key_t mesh_policy_top_keys[];
extern const policy_key_t mesh_policy_gpu_fields[];
extern const policy_key_t mesh_policy_partition_fields[];
extern const int mesh_policy_top_key_count, mesh_policy_gpu_field_count,
    mesh_policy_partition_field_count;

/* A K_WORD key's value into *dst, its word's index; key names it in
 * errors, which list the words.  0, or -1 with err set. */
int mesh_policy_read_word(int *dst, const policy_key_t *k, const char *key, const char *value,
                          mesh_error_t *err);

/* Read value into k's member of base (a policy, an override or a
 * partition); key names it in errors.  0, or -1 with err set. */
int mesh_policy_read_key(void *base, const policy_key_t *k, const char *key, const char *value,
                         mesh_error_t *err);

#endif
