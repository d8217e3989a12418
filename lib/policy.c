/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Admin policy: plugstack.conf arguments, YAML policy files and the CLI's
 * --policy and --set, read with the one table of keys (lib/policy_keys.c):
 * typo hints, the gpus: and partitions: families, the document reader and
 * the checks made once everything is read.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "internal.h"
#include "policy_keys.h"
#include "yamlread.h"
#include "meshplan/parse.h"
#include "meshplan/policy.h"
#include "meshplan/size.h"
#include "meshplan/when.h"

#define POLICY_MAX_BYTES (64 * 1024)

/* Dense FP8 tensor throughput over dense bf16: 2 on every GPU of the table
 * that has FP8 (lib/gpu.c: H100, H200, B200, L40S, MI300X, ...), so the FP8
 * peak of a GPU that gpu.NAME.fp8 says has FP8. */
#define FP8_PER_BF16 2.0

static void *gpu_entry(mesh_policy_t *p, const char *key, const char *name, mesh_error_t *err);
static void *partition_entry(mesh_policy_t *p, const char *key, const char *name,
                             mesh_error_t *err);

/* The keys of many entries: PREFIX NAME.FIELD, in YAML `SECTION: {NAME: {FIELD: VALUE}}`. */
static const struct family {
    const char *prefix, *section;
    const char *what;  /* the entries, in errors */
    const char *usage; /* the error for a key without NAME or FIELD */
    size_t name_max;   /* bytes of a name, with its NUL */
    const policy_key_t *fields;
    const int *n_fields; /* how many fields: the table's own count */
    /* entry NAME (found, else added), or NULL with err set */
    void *(*entry)(mesh_policy_t *p, const char *key, const char *name, mesh_error_t *err);
} families[] = {
    {"gpu.", "gpus", "GPU", "GPU overrides are gpu.NAME.FIELD (e.g. gpu.H100-SXM.memory=80GiB)",
     sizeof(((mesh_gpu_override_t *)0)->name), mesh_policy_gpu_fields, &mesh_policy_gpu_field_count,
     gpu_entry},
    {"partition.", "partitions", "partition",
     "partition settings are partition.NAME.FIELD (e.g. partition.gpu.gpu=H100-SXM)",
     sizeof(((mesh_partition_t *)0)->name), mesh_policy_partition_fields,
     &mesh_policy_partition_field_count, partition_entry},
};

void mesh_policy_init(mesh_policy_t *p)
{
    memset(p, 0, sizeof(*p));
    /* the defaults are read as an admin would write them: they cannot fail */
    mesh_error_t err;
    for (int i = 0; i < mesh_policy_top_key_count; i++)
        if (mesh_policy_top_keys[i].dflt)
            mesh_policy_read_key(p, &mesh_policy_top_keys[i], mesh_policy_top_keys[i].name,
                                 mesh_policy_top_keys[i].dflt, &err);
}

/* "a, b, c" (or with sep " "): the names of a table, into buf[len]. */
static const char *list_of(const policy_key_t *keys, int n, const char *sep, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && used < len; i++) {
        int w = snprintf(buf + used, len - used, "%s%s", i ? sep : "", keys[i].name);
        used += w > 0 ? (size_t)w : 0;
    }
    return buf;
}

/* The key of the table a typo of `word` most likely meant, or NULL. */
static const policy_key_t *meant(const policy_key_t *keys, int n, const char *word)
{
    const char *names[32] = {NULL};
    n = n < MESH_ARRAY_LEN(names) ? n : MESH_ARRAY_LEN(names);
    for (int i = 0; i < n; i++)
        names[i] = keys[i].name;
    const char *name = mesh_closest_name(word, names, n);
    for (int i = 0; name && i < n; i++)
        if (names[i] == name)
            return &keys[i];
    return NULL;
}

static const policy_key_t *find_key(const policy_key_t *keys, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(keys[i].name, name) == 0)
            return &keys[i];
    return NULL;
}

/* "; did you mean X?" for a typo of a key of the table; "" else. */
static const char *hint(const policy_key_t *keys, int n, const char *word, char *buf, size_t len)
{
    const policy_key_t *k = meant(keys, n, word);
    snprintf(buf, len, "%s%s%s", k ? "; did you mean " : "", k ? k->name : "", k ? "?" : "");
    return buf;
}

/* "; did you mean X?" for a key meant as another: a typo of a top-level
 * key, or of a family (partitions.p.nodes for partition.p.nodes as an
 * argument, partition for the section partitions in a file); "" else. */
static const char *key_hint(const char *key, int in_file, char *buf, size_t len)
{
    const policy_key_t *k = meant(mesh_policy_top_keys, mesh_policy_top_key_count, key);
    size_t head = strcspn(key, ".");
    buf[0] = '\0';
    if (k)
        return snprintf(buf, len, "; did you mean %s?", k->name), buf;
    for (int i = 0; i < MESH_ARRAY_LEN(families) && !buf[0]; i++) {
        const struct family *f = &families[i];
        char word[64];
        snprintf(word, sizeof(word), "%.*s", (int)head, key);
        if (in_file && mesh_typo_of(word, f->section) < 3)
            snprintf(buf, len, "; did you mean the section %s: (%s: {NAME: {FIELD: VALUE}})?",
                     f->section, f->section);
        else if (!in_file && !key[head] && strlen(word) + 1 == strlen(f->prefix) &&
                 strncmp(word, f->prefix, strlen(word)) == 0)
            snprintf(buf, len, "; %s", f->usage);
        else if (!in_file && key[head] && mesh_typo_of(word, f->section) < 3)
            snprintf(buf, len, "; did you mean %s%.60s?", f->prefix, key + head + 1);
    }
    return buf;
}

/* An unknown key, with the keys allowed where it was written: as arguments
 * gpu.NAME.FIELD and partition.NAME.FIELD, in a file the sections gpus: and
 * partitions: (a file's reader who saw partition.NAME.FIELD would write
 * partition:, which is no section). */
static int unknown_key(const char *key, int in_file, mesh_error_t *err)
{
    char list[MESH_ERROR_MAX * 5 / 8], fams[64] = "", guess[128];
    size_t used = 0;
    for (int i = 0; i < MESH_ARRAY_LEN(families) && used < sizeof(fams); i++) {
        int w = snprintf(fams + used, sizeof(fams) - used, in_file ? "%s: " : "%sNAME.FIELD ",
                         in_file ? families[i].section : families[i].prefix);
        used += w > 0 ? (size_t)w : 0;
    }
    if (in_file && used)
        fams[used - 1] = '\0'; /* a file has no policy: key */
    return mesh_error_set(
        err, "unknown policy key '%.40s' (keys: %s %s%s)%s", key,
        list_of(mesh_policy_top_keys, mesh_policy_top_key_count, " ", list, sizeof(list)), fams,
        in_file ? "" : "policy", key_hint(key, in_file, guess, sizeof(guess)));
}

/* The overrides of a table GPU, by any name mesh_gpu_find takes ("NVIDIA
 * H100 80GB HBM3" are H100-SXM's); a name the table does not know defines a
 * new GPU (mesh_policy_check makes sure it gets a PCI id, a memory, a peak
 * and an island); a short name of several GPUs is refused. */
static void *gpu_entry(mesh_policy_t *p, const char *key, const char *name, mesh_error_t *err)
{
    mesh_assumptions_t *as = &p->assume;
    const mesh_gpu_t *m = mesh_gpu_find(name);
    char entry[64];
    snprintf(entry, sizeof(entry), "gpu.%.40s", name);
    if (!m && mesh_gpu_choices(name) > 1)
        return mesh_gpu_name_error(entry, name, err), NULL;
    name = m ? m->name : name;
    const mesh_gpu_override_t *known = mesh_policy_override_of(as, name);
    if (known)
        return &as->gpu_overrides[known - as->gpu_overrides];
    if (as->n_gpu_overrides == MESH_GPU_OVERRIDES_MAX)
        return mesh_error_set(err, "%s: at most %d GPU models can be overridden", key,
                              MESH_GPU_OVERRIDES_MAX),
               NULL;
    mesh_gpu_override_t *o = &as->gpu_overrides[as->n_gpu_overrides++];
    memset(o, 0, sizeof(*o));
    mesh_strlcpy(o->name, name, sizeof(o->name));
    return o;
}

static void *partition_entry(mesh_policy_t *p, const char *key, const char *name, mesh_error_t *err)
{
    mesh_policy_controller_t *c = &p->controller;
    for (int i = 0; i < c->n_partitions; i++)
        if (strcmp(c->partitions[i].name, name) == 0)
            return &c->partitions[i];
    if (c->n_partitions == MESH_PARTITIONS_MAX)
        return mesh_error_set(err, "%s: at most %d partitions", key, MESH_PARTITIONS_MAX), NULL;
    mesh_partition_t *q = &c->partitions[c->n_partitions++];
    memset(q, 0, sizeof(*q));
    mesh_strlcpy(q->name, name, sizeof(q->name));
    return q;
}

/* PREFIX NAME.FIELD = value: the entry NAME is found or added first. */
static int set_field(mesh_policy_t *p, const struct family *f, const char *key, const char *value,
                     mesh_error_t *err)
{
    const char *name = key + strlen(f->prefix), *dot = strrchr(name, '.');
    char entry_name[64];
    if (!dot || dot == name || (size_t)(dot - name) >= f->name_max)
        return mesh_error_set(err, "%s: %s", key, f->usage);
    snprintf(entry_name, sizeof(entry_name), "%.*s", (int)(dot - name), name);
    void *entry = f->entry(p, key, entry_name, err);
    if (!entry)
        return -1;
    const char *field = dot + 1;
    const policy_key_t *k = find_key(f->fields, *f->n_fields, field);
    if (k)
        return mesh_policy_read_key(entry, k, key, value, err);
    char list[128], guess[64];
    return mesh_error_set(err, "%s: unknown %s field '%.20s' (%s)%s", key, f->what, field,
                          list_of(f->fields, *f->n_fields, ", ", list, sizeof(list)),
                          hint(f->fields, *f->n_fields, field, guess, sizeof(guess)));
}

/* mesh_policy_set, for a key written as an argument or in a file */
static int policy_set(mesh_policy_t *p, const char *key, const char *value, int in_file,
                      mesh_error_t *err)
{
    const policy_key_t *k = find_key(mesh_policy_top_keys, mesh_policy_top_key_count, key);
    if (k)
        return mesh_policy_read_key(p, k, key, value, err);
    for (int i = 0; i < MESH_ARRAY_LEN(families); i++)
        if (strncmp(key, families[i].prefix, strlen(families[i].prefix)) == 0)
            return set_field(p, &families[i], key, value, err);
    return unknown_key(key, in_file, err);
}

int mesh_policy_set(mesh_policy_t *p, const char *key, const char *value, mesh_error_t *err)
{
    return policy_set(p, key, value, 0, err);
}

int mesh_policy_set_arg(mesh_policy_t *p, const char *arg, mesh_error_t *err)
{
    char key[128];
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(key))
        return mesh_error_set(err, "'%.60s' is not key=value", arg);
    memcpy(key, arg, (size_t)(eq - arg));
    key[eq - arg] = '\0';
    if (strcmp(key, "policy") == 0)
        return mesh_policy_load(p, eq + 1, err);
    return mesh_policy_set(p, key, eq + 1, err);
}

#define CONFIG_ERROR_KEY "on_config_error"

/* What arg says of on_config_error, into word[len]: on_config_error=WORD,
 * or the last such line of a policy=FILE; 0 when it says nothing. */
static int config_error_word(const char *arg, char *word, size_t len)
{
    static const char key[] = CONFIG_ERROR_KEY "=", policy[] = "policy=";
    if (strncmp(arg, key, sizeof(key) - 1) == 0)
        return snprintf(word, len, "%s", arg + sizeof(key) - 1), 1;
    if (strncmp(arg, policy, sizeof(policy) - 1) != 0)
        return 0;
    size_t n;
    mesh_error_t unread; /* reading the policy says why */
    char *buf =
        mesh_read_regular_file(arg + sizeof(policy) - 1, "policy", POLICY_MAX_BYTES, &n, &unread);
    int found = 0;
    for (const char *line = buf, *end; buf && line < buf + n; line = end + 1) {
        end = memchr(line, '\n', (size_t)(buf + n - line));
        if (!end)
            end = buf + n;
        found |= mesh_yaml_top_line(line, end, CONFIG_ERROR_KEY, word, len);
    }
    free(buf);
    return found;
}

int mesh_policy_on_config_error(int ac, char *const *av, mesh_error_t *err)
{
    const policy_key_t *k =
        find_key(mesh_policy_top_keys, mesh_policy_top_key_count, CONFIG_ERROR_KEY);
    int reject = 0, unreadable = 0;
    for (int i = 0; i < ac; i++) {
        char word[64];
        int v;
        if (!config_error_word(av[i], word, sizeof(word)))
            continue;
        if (mesh_policy_read_word(&v, k, CONFIG_ERROR_KEY, word, err) < 0)
            unreadable = 1;
        else
            reject = v;
    }
    return unreadable ? -1 : reject;
}

/* The family whose YAML section is `name` (gpus, partitions), or NULL. */
static const struct family *family_of_section(const char *name)
{
    for (int i = 0; i < MESH_ARRAY_LEN(families); i++)
        if (strcmp(name, families[i].section) == 0)
            return &families[i];
    return NULL;
}

/* A policy file being read: the keys whose check waits for the whole
 * policy (gpu=, a partition's gpu, a GPU the policy defines: mesh_policy_check
 * checks them) keep the line they were read at, so that their errors carry
 * it too. */
enum { LINES_MAX = 1 + MESH_GPU_OVERRIDES_MAX + MESH_PARTITIONS_MAX };
typedef struct reader {
    yaml_parser_t *yp;
    const char *origin;
    mesh_policy_t *p;
    int n_lines;
    struct {
        char key[96];
        size_t line;
    } lines[LINES_MAX];
} reader_t;

/* Is key one mesh_policy_check may name: gpu, gpu.NAME, partition.NAME.gpu? */
static int checked_later(const char *key)
{
    size_t n = strlen(key);
    return strcmp(key, "gpu") == 0 || (strncmp(key, "gpu.", 4) == 0 && !strchr(key + 4, '.')) ||
           (strncmp(key, "partition.", 10) == 0 && n > 14 && strcmp(key + n - 4, ".gpu") == 0);
}

/* Whether a and b are one key of the policy: GPUs' names compare as
 * mesh_gpu_find compares them (gpus: {h100-sxm: ..., H100-SXM: ...} gives
 * one GPU twice), the rest exactly (partitions are Slurm's, whose names are
 * case-sensitive). */
static int same_key(const char *a, const char *b)
{
    if (strncmp(a, "gpu.", 4) || strncmp(b, "gpu.", 4))
        return strcmp(a, b) == 0;
    size_t na = strcspn(a + 4, "."), nb = strcspn(b + 4, ".");
    char ea[64], eb[64];
    snprintf(ea, sizeof(ea), "%.*s", (int)na, a + 4);
    snprintf(eb, sizeof(eb), "%.*s", (int)nb, b + 4);
    const mesh_gpu_t *ga = mesh_gpu_find(ea), *gb = mesh_gpu_find(eb);
    return mesh_gpu_same_name(ga ? ga->name : ea, gb ? gb->name : eb) &&
           strcmp(a + 4 + na, b + 4 + nb) == 0;
}

static void note_line(reader_t *r, const char *key, size_t line)
{
    for (int i = 0; i < r->n_lines; i++)
        if (same_key(r->lines[i].key, key))
            return;
    if (r->n_lines < LINES_MAX && checked_later(key)) {
        mesh_strlcpy(r->lines[r->n_lines].key, key, sizeof(r->lines[0].key));
        r->lines[r->n_lines++].line = line;
    }
}

/* The line `key` was read at; 0 if the file did not set it. */
static size_t line_of(const reader_t *r, const char *key)
{
    for (int i = 0; i < r->n_lines; i++)
        if (same_key(r->lines[i].key, key))
            return r->lines[i].line;
    return 0;
}

/* A mapping or list where a key takes one value: partition: and gpu: are
 * likely the sections partitions: and gpus:, anything else an unknown key. */
static int not_a_value(const reader_t *r, const char *key, size_t line, int depth,
                       mesh_error_t *err)
{
    char why[160] = "";
    mesh_error_t unknown;
    for (int i = 0; depth == 0 && i < MESH_ARRAY_LEN(families) && !why[0]; i++)
        if (mesh_typo_of(key, families[i].section) < 3)
            snprintf(why, sizeof(why),
                     "; did you mean the section %s: (%s: {NAME: {FIELD: VALUE}})?",
                     families[i].section, families[i].section);
    if (depth == 0 && !why[0] && !find_key(mesh_policy_top_keys, mesh_policy_top_key_count, key)) {
        unknown_key(key, 1, &unknown);
        return mesh_error_set(err, "%s:%zu: %s: expected a single value; %s", r->origin, line, key,
                              unknown.msg);
    }
    return mesh_error_set(err, "%s:%zu: %s: expected a single value%s", r->origin, line, key, why);
}

static int read_policy_map(reader_t *r, const char *prefix, int depth, mesh_error_t *err);

/* The value of `key` (its line: line) at `depth` of the file: a section's
 * or a GPU's or partition's mapping, or one value. */
static int read_value(reader_t *r, const char *key, size_t line, int depth, mesh_error_t *err)
{
    yaml_event_t v;
    if (mesh_yaml_next(r->yp, &v, r->origin, err) < 0)
        return -1;
    const struct family *section = depth == 0 ? family_of_section(key) : NULL;
    int is_map = v.type == YAML_MAPPING_START_EVENT, is_scalar = v.type == YAML_SCALAR_EVENT;
    char value[MESH_YAML_SCALAR_MAX + 1] = "";
    if (is_scalar)
        mesh_strlcpy(value, (const char *)v.data.scalar.value, sizeof(value));
    yaml_event_delete(&v);
    if (section || depth == 1) {
        char sub[2 * MESH_YAML_SCALAR_MAX + 2];
        if (!is_map)
            return mesh_error_set(err, "%s:%zu: %s: expected a mapping", r->origin, line, key);
        snprintf(sub, sizeof(sub), "%s%s", section ? section->prefix : key, section ? "" : ".");
        note_line(r, key, line);
        return read_policy_map(r, sub, depth + 1, err);
    }
    if (!is_scalar)
        return not_a_value(r, key, line, depth, err);
    if (strcmp(key, "policy") == 0)
        return mesh_error_set(err, "%s:%zu: policy: a policy file cannot include another",
                              r->origin, line);
    note_line(r, key, line);
    if (policy_set(r->p, key, value, 1, err) < 0)
        return mesh_error_prefix(err, "%s:%zu", r->origin, line);
    return 0;
}

/* Read a mapping (its start consumed) of the policy file; prefix is "" at
 * the top, "gpu." inside `gpus:`, "gpu.NAME." inside one GPU. */
static int read_policy_map(reader_t *r, const char *prefix, int depth, mesh_error_t *err)
{
    /* a key given twice is a mistake: the spec refuses it, so does the policy */
    char seen[64][64];
    int n_seen = 0;
    for (;;) {
        yaml_event_t k;
        if (mesh_yaml_next(r->yp, &k, r->origin, err) < 0)
            return -1;
        if (k.type == YAML_MAPPING_END_EVENT) {
            yaml_event_delete(&k);
            return 0;
        }
        size_t line = k.start_mark.line + 1;
        if (k.type != YAML_SCALAR_EVENT) {
            yaml_event_delete(&k);
            return mesh_error_set(err, "%s:%zu: expected a key", r->origin, line);
        }
        char key[2 * MESH_YAML_SCALAR_MAX];
        snprintf(key, sizeof(key), "%s%s", prefix, (const char *)k.data.scalar.value);
        yaml_event_delete(&k);
        for (int i = 0; i < n_seen; i++)
            if (same_key(seen[i], key))
                return mesh_error_set(err, "%s:%zu: %s: given twice", r->origin, line, key);
        if (n_seen == MESH_ARRAY_LEN(seen))
            return mesh_error_set(err, "%s:%zu: more than %d keys in one mapping", r->origin, line,
                                  MESH_ARRAY_LEN(seen));
        mesh_strlcpy(seen[n_seen++], key, sizeof(seen[0]));
        if (read_value(r, key, line, depth, err) < 0)
            return -1;
    }
}

int mesh_policy_load(mesh_policy_t *p, const char *path, mesh_error_t *err)
{
    size_t len;
    char *buf = mesh_read_regular_file(path, "policy", POLICY_MAX_BYTES, &len, err);
    if (!buf)
        return -1;
    int rc = mesh_policy_parse(p, buf, len, path, err);
    free(buf);
    return rc;
}

static int check(const mesh_policy_t *p, char *key, size_t len, mesh_error_t *err);

/* The document of a policy file: one mapping, or nothing. */
static int read_document(reader_t *r, mesh_error_t *err)
{
    int state = 0;
    while (state != 3) {
        size_t line;
        int t = mesh_yaml_next_type(r->yp, r->origin, &line, err);
        if (t < 0)
            return -1;
        if (t == YAML_STREAM_START_EVENT && state == 0)
            state = 1;
        else if (t == YAML_DOCUMENT_START_EVENT && state == 1)
            state = 2;
        else if (t == YAML_STREAM_END_EVENT && state == 1)
            state = 3; /* an empty policy keeps the defaults */
        else if (t == YAML_MAPPING_START_EVENT && state == 2) {
            if (read_policy_map(r, "", 0, err) < 0 ||
                mesh_yaml_end(r->yp, r->origin, "a policy holds one YAML document", err) < 0)
                return -1;
            state = 3;
        } else
            return mesh_error_set(err, "%s:%zu: a policy is one YAML mapping of key: value",
                                  r->origin, line);
    }
    return 0;
}

int mesh_policy_parse(mesh_policy_t *p, const char *buf, size_t len, const char *path,
                      mesh_error_t *err)
{
    if (len > POLICY_MAX_BYTES)
        return mesh_error_set(err, "%s: larger than %d bytes", path, POLICY_MAX_BYTES);
    yaml_parser_t yp;
    if (!yaml_parser_initialize(&yp))
        return mesh_error_set(err, "%s: out of memory", path);
    yaml_parser_set_input_string(&yp, (const unsigned char *)buf, len);
    reader_t *r = calloc(1, sizeof(*r));
    int rc = -1;
    if (!r)
        mesh_error_set(err, "%s: out of memory", path);
    else {
        *r = (reader_t){.yp = &yp, .origin = path, .p = p};
        char key[96];
        rc = read_document(r, err);
        /* the keys checked as a whole: with their line, where this file set them */
        if (rc == 0 && (rc = check(p, key, sizeof(key), err)) < 0 && line_of(r, key))
            mesh_error_prefix(err, "%s:%zu", path, line_of(r, key));
    }
    free(r);
    yaml_parser_delete(&yp);
    return rc;
}

/* The overrides of GPU `name` (a table GPU's, or the admin's own GPU), or
 * NULL; as may be NULL. */
const mesh_gpu_override_t *mesh_policy_override_of(const mesh_assumptions_t *as, const char *name)
{
    for (int i = 0; as && i < as->n_gpu_overrides; i++)
        if (mesh_gpu_same_name(as->gpu_overrides[i].name, name))
            return &as->gpu_overrides[i];
    return NULL;
}

/* A GPU the policy defines needs what no default can stand for: the PCI id
 * its nodes show, its memory and peak, and its NVLink island.  The island
 * has no safe default: 1 keeps TP within a GPU, and the controller refuses
 * jobs that fit with TP 8 on an NVLink board; 8 lets TP cross PCIe, and the
 * controller says "fits" for layouts the nodes of a PCIe box plan otherwise.
 * A name no field defines, or a typo of a table GPU's, is no definition. */
static int check_defined(const mesh_gpu_override_t *o, mesh_error_t *err)
{
    static const char *const why[] = {
        "the PCI id its nodes show, VVVV:DDDD",
        "the bytes the device reports",
        "its dense bf16 TFLOP/s",
        "the GPUs per NVLink island: 1 for PCIe cards, 8 for an 8-GPU NVLink board",
    };
    static const char *const field[] = {"pci", "memory", "peak_tflops", "island"};
    int given[] = {o->pci_vendor != 0, o->memory > 0, o->peak_flops > 0, o->island > 0};
    int missing = -1, any = 0;
    for (int i = 3; i >= 0; i--) {
        missing = given[i] ? missing : i;
        any |= given[i];
    }
    const char *guess = mesh_gpu_guess(o->name);
    if (missing < 0)
        return 0;
    if (!any || guess)
        return mesh_error_set(err,
                              "gpu.%s: not a GPU of the table (%s%s%s); to define one, give "
                              "gpu.%s.pci=VVVV:DDDD, .memory=, .peak_tflops= and .island=",
                              o->name, guess ? "did you mean " : "meshplan gpus lists them",
                              guess ? guess : "", guess ? "?" : "", o->name);
    return mesh_error_set(err,
                          "gpu.%s.%s: missing: a GPU the policy defines needs .pci, .memory, "
                          ".peak_tflops and .island (%s: %s)",
                          o->name, field[missing], field[missing], why[missing]);
}

/* mesh_policy_check; key[len] gets the key its error is about (gpu,
 * partition.NAME.gpu or gpu.NAME), for the line of a file. */
static int check(const mesh_policy_t *p, char *key, size_t len, mesh_error_t *err)
{
    const mesh_assumptions_t *as = &p->assume;
    snprintf(key, len, "gpu");
    if (as->gpu[0] && !mesh_gpu_find(as->gpu) && !mesh_policy_override_of(as, as->gpu))
        return mesh_gpu_name_error(key, as->gpu, err);
    for (int i = 0; i < p->controller.n_partitions; i++) {
        const mesh_partition_t *q = &p->controller.partitions[i];
        snprintf(key, len, "partition.%s.gpu", q->name);
        if (q->gpu[0] && !mesh_gpu_find(q->gpu) && !mesh_policy_override_of(as, q->gpu))
            return mesh_gpu_name_error(key, q->gpu, err);
    }
    for (int i = 0; i < as->n_gpu_overrides; i++) {
        const mesh_gpu_override_t *o = &as->gpu_overrides[i];
        snprintf(key, len, "gpu.%s", o->name);
        if (!mesh_gpu_find(o->name) && check_defined(o, err) < 0)
            return -1;
    }
    return 0;
}

int mesh_policy_check(const mesh_policy_t *p, mesh_error_t *err)
{
    char key[96];
    return check(p, key, sizeof(key), err);
}

void mesh_policy_apply_gpu(const mesh_assumptions_t *assume, mesh_gpu_t *gpu)
{
    const mesh_gpu_override_t *o = mesh_policy_override_of(assume, gpu->name);
    for (int i = 0; o && i < mesh_policy_gpu_field_count; i++) {
        const policy_key_t *k = &mesh_policy_gpu_fields[i];
        const void *from = (const char *)o + k->off;
        void *to = (char *)gpu + k->to;
        if (!k->to)
            continue;
        if (k->kind == K_INT && *(const int *)from > 0)
            *(int *)to = *(const int *)from;
        else if (k->kind != K_INT && *(const double *)from > 0)
            *(double *)to = *(const double *)from;
    }
    if (o && o->fp8 == MESH_GPU_FP8_NO) {
        gpu->peak_fp8 = 0;
        gpu->fp8_blocks = 0;
    } else if (o && o->fp8 > 0) {
        if (gpu->peak_fp8 <= 0)
            gpu->peak_fp8 = FP8_PER_BF16 * gpu->peak_flops;
        if (o->fp8 >= MESH_GPU_FP8_BLOCKWISE)
            gpu->fp8_blocks = o->fp8 - MESH_GPU_FP8_YES;
    }
    mesh_calib_apply_gpu(&assume->calibration, gpu);
}
