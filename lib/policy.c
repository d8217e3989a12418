/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Admin policy: one table of keys for plugstack.conf arguments, YAML policy
 * files and the CLI's --policy.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "internal.h"
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

/* How a key's value is read, and what its member holds. */
enum kind {
    K_WORD,   /* one of `words`; int: its index */
    K_NUM,    /* a number in min..max; double: it times `scale` (0: 1) */
    K_SIZE,   /* bytes in min..max; double */
    K_RATE,   /* bytes per second in min..max, the unit saying bits or bytes; double */
    K_INT,    /* a count in min..max (32, 1k, 2Ki: mesh_parse_count); int */
    K_YESNO,  /* a boolean; int: 1 yes, -1 no, 0 not said */
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

/* the words' order is the enum's */
_Static_assert(sizeof(mesh_enforce_t) == sizeof(int) && sizeof(mesh_export_t) == sizeof(int),
               "word keys are ints");
static const char *const enforce_names[] = {"off", "warn", "reject", NULL};
/* export=: the tasks' modes; "batch", the batch script's, is named only
 * where a front end shows what a batch script gets (meshplan env) */
static const char *const export_names[] = {"torch", "torchrun", "mesh", NULL};
static const char *const export_all[] = {"torch", "torchrun", "mesh", "batch", NULL};
static const char *const bind_words[] = {"none", "gpu", NULL};
static const char *const gpu_order_words[] = {"pci", "minor", NULL};
static const char *const topology_error_words[] = {"fail", "fallback", NULL};
static const char *const submit_error_words[] = {"allow", "reject", NULL};
static const char *const topology_xml_words[] = {"none", NULL};
static const char *const time_limit_words[] = {"off", "warn", "set", "reject", NULL};
_Static_assert(sizeof(mesh_time_limit_t) == sizeof(int), "word keys are ints");

/* framework=: a name of the spec's train.framework, its one table */
static int read_framework(void *base, const char *key, const char *value, mesh_error_t *err)
{
    int i = mesh_spec_choice_of("train.framework", value);
    if (i < 0) {
        char names[64] = "";
        for (int f = 0; strcmp(mesh_framework_name((mesh_framework_t)f), "?") != 0; f++)
            snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", f ? ", " : "",
                     mesh_framework_name((mesh_framework_t)f));
        return mesh_error_set(err, "%s: '%.20s' is not one of %s", key, value, names);
    }
    ((mesh_policy_t *)base)->assume.framework = (mesh_framework_t)i;
    return 0;
}

/* The top-level keys, in the order errors list them. */
static const policy_key_t top_keys[] = {
    {"enforce", K_WORD, POL(enforce), .words = enforce_names, .dflt = "reject",
     .doc = "what to do with a job whose layout does not fit"},
    {"reserve", K_NUM, POL(assume.reserve), .min = 0, .max = 0.9, .dflt = "0.03",
     .unit = ", a fraction", .doc = "fraction of each GPU's memory no plan may use"},
    {"gpu", K_CUSTOM, POL(assume.gpu), .read = mesh_policy_read_gpu_name,
     .doc = "GPU model assumed where the topology shows none"},
    {"gpu_mem", K_SIZE, POL(assume.gpu_mem), .min = 1e8, .max = 1e14,
     .doc = "GPU memory assumed for a GPU meshplan does not know"},
    {"export", K_WORD, POL(launch.export_mode), .words = export_names, .dflt = "torch",
     .doc = "which launcher's variables the tasks get"},
    {"port_range", K_CUSTOM, POL(launch.port_lo), .read = mesh_policy_read_port_range,
     .dflt = "20000-29999", .doc = "where MASTER_PORT is picked, LO-HI"},
    {"models_dir", K_PATH, POL(launch.models_dir),
     .doc = "presets searched before the installed ones"},
    {"topology_xml", K_PATH, POL(launch.topology_xml), .words = topology_xml_words,
     .doc = "hwloc XML of the node (%n: its name) instead of discovery, or none"},
    /* live discovery takes ~10 ms; a wedged sysfs, forever */
    {"topology_timeout", K_NUM, POL(launch.topology_timeout), .min = 0, .max = 3600, .dflt = "10",
     .unit = " seconds", .doc = "seconds a node may spend reading its topology; 0: no bound"},
    {"on_topology_error", K_WORD, POL(launch.topology_fallback), .words = topology_error_words,
     .dflt = "fail", .doc = "refuse the step, or plan from gpu=/gpu_mem= instead"},
    {"steps", K_CUSTOM, POL(launch.steps), .read = mesh_policy_read_steps, .dflt = "regular,batch",
     .doc = "which job steps get the variables"},
    {"bind", K_WORD, POL(launch.bind_gpu), .words = bind_words, .dflt = "none",
     .doc = "the default of --mesh-bind"},
    {"gpu_order", K_WORD, POL(launch.gpu_order_minor), .words = gpu_order_words, .dflt = "pci",
     .doc = "Slurm's GPU indices in bus order, or /dev/nvidiaN minors"},
    {"overhead", K_SIZE, POL(assume.overhead_context), .min = 0, .max = 1e12, .dflt = "1GiB",
     .doc = "CUDA context and cuBLAS/NCCL workspaces, per GPU"},
    {"comm_buffer", K_SIZE, POL(assume.overhead_comm), .min = 0, .max = 1e11, .dflt = "256MiB",
     .doc = "NCCL channel buffers, per communicator a rank is in"},
    {"fragmentation", K_NUM, POL(assume.fragmentation), .min = 0, .max = 1, .dflt = "0.05",
     .unit = ", a fraction", .doc = "caching-allocator slack, a fraction of activation memory"},
    {"on_submit_error", K_WORD, POL(controller.submit_fail_closed), .words = submit_error_words,
     .dflt = "allow", .doc = "whether job_submit refuses jobs while the policy is broken"},
    /* read first and apart from the rest too: mesh_policy_on_config_error */
    {"on_config_error", K_WORD, POL(launch.config_fail_closed), .words = submit_error_words,
     .dflt = "allow",
     .doc = "whether the plugin refuses every job while its configuration is broken"},
    /* Switch Transformer's capacity factor 1.25 (Fedus et al. 2022, JMLR
     * 23(120), section 2.2 and Table 1): the headroom over an expert's mean
     * load that sparse MoE training is provisioned with */
    {"moe_imbalance", K_NUM, POL(assume.moe_imbalance), .min = 1, .max = 1000, .dflt = "1.25",
     .unit = " times the mean",
     .doc = "a MoE model's busiest expert rank over the mean, where the spec gives none"},
    {"time_limit", K_WORD, POL(controller.time_limit), .words = time_limit_words, .dflt = "warn",
     .doc = "what job_submit does with a time limit against the run's estimate"},
    /* the cost model's error on published runs (lib/meshplan/size.h) */
    {"time_margin", K_NUM, POL(assume.time_margin), .min = 0, .max = 10,
     .dflt = MESH_STR(MESH_TIME_MARGIN_DEFAULT), .unit = ", a fraction of the estimate",
     .doc = "what a run-time estimate is padded with, a fraction of it"},
    {"headroom", K_NUM, POL(assume.headroom), .min = 0, .max = MESH_HEADROOM_MAX, .dflt = "0",
     .unit = ", a fraction of the usable memory", .doc = "fraction of the usable GPU memory every plan leaves free"},
    {"framework", K_CUSTOM, POL(assume.framework), .read = read_framework, .dflt = "auto",
     .doc = "the framework a spec's framework: auto means"},
};

/* gpu.NAME.FIELD: an override of the GPU table, or a GPU of the admin's. */
#define GPU(member)    AT(mesh_gpu_override_t, member)
#define TO(gpu_member) .to = offsetof(mesh_gpu_t, gpu_member)
static const policy_key_t gpu_fields[] = {
    {"pci", K_CUSTOM, GPU(pci_vendor), .read = mesh_policy_read_pci,
     .doc = "VVVV:DDDD, a PCI id that is this GPU"},
    {"memory", K_SIZE, GPU(memory), .min = 1e8, .max = 1e14, TO(memory),
     .doc = "bytes the device reports"},
    {"peak_tflops", K_NUM, GPU(peak_flops), .min = 1, .max = 1e6, .scale = 1e12, TO(peak_flops),
     .unit = " TFLOP/s", .doc = "dense bf16 tensor TFLOP/s"},
    {"hbm_bw", K_RATE, GPU(hbm_bw), .min = 1e9, .max = 1e14, TO(hbm_bw),
     .doc = "memory bandwidth, bytes/s"},
    {"link_bw", K_RATE, GPU(link_bw), .min = 1e8, .max = 1e14, TO(link_bw),
     .doc = "NVLink bandwidth per GPU, one direction, bytes/s"},
    {"net_bw", K_RATE, GPU(net_bw), .min = 1e8, .max = 1e14, TO(net_bw),
     .doc = "network bandwidth per GPU, one direction, bytes/s"},
    {"gemm_eff", K_NUM, GPU(gemm_eff), .min = 0.01, .max = 1, TO(gemm_eff), .unit = ", a fraction",
     .doc = "fraction of the peak large GEMMs reach"},
    {"island", K_INT, GPU(island), .min = 1, .max = 1024, TO(island),
     .doc = "GPUs per NVLink island"},
    {"fp8", K_YESNO, GPU(fp8),
     .doc = "it has FP8 tensor cores (a GPU the policy defines has none unless said)"},
};
/* the figures an override replaces are numbers (double) or island (int) */
_Static_assert(sizeof(((mesh_gpu_t *)0)->island) == sizeof(int), "island is an int");

/* partition.NAME.max_time: Slurm's forms (mesh_parse_max_time), in minutes */
static int read_max_time(void *base, const char *key, const char *value, mesh_error_t *err)
{
    return mesh_parse_max_time(value, key, &((mesh_partition_t *)base)->max_time, err);
}

/* partition.NAME.FIELD: what job_submit/meshplan assumes about a partition. */
#define PART(member) AT(mesh_partition_t, member)
static const policy_key_t partition_fields[] = {
    {"gpu", K_TEXT, PART(gpu), .doc = "its GPU model"},
    {"gpu_mem", K_SIZE, PART(gpu_mem), .min = 1e8, .max = 1e14, .doc = "its GPUs' memory"},
    {"nvlink", K_INT, PART(island), .min = 1, .max = 1 << 20, .doc = "GPUs per NVLink island"},
    {"nodes", K_INT, PART(nodes), .min = 1, .max = 1 << 20, .doc = "how many nodes it has"},
    {"max_time", K_CUSTOM, PART(max_time), .read = read_max_time,
     .doc = "its MaxTime, as slurm.conf writes it (2-00:00:00, UNLIMITED)"},
};

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
    int n_fields;
    /* entry NAME (found, else added), or NULL with err set */
    void *(*entry)(mesh_policy_t *p, const char *key, const char *name, mesh_error_t *err);
} families[] = {
    {"gpu.", "gpus", "GPU", "GPU overrides are gpu.NAME.FIELD (e.g. gpu.H100-SXM.memory=80GiB)",
     sizeof(((mesh_gpu_override_t *)0)->name), gpu_fields, MESH_ARRAY_LEN(gpu_fields), gpu_entry},
    {"partition.", "partitions", "partition",
     "partition settings are partition.NAME.FIELD (e.g. partition.gpu.gpu=H100-SXM)",
     sizeof(((mesh_partition_t *)0)->name), partition_fields, MESH_ARRAY_LEN(partition_fields),
     partition_entry},
};

static int read_key(void *base, const policy_key_t *k, const char *key, const char *value,
                    mesh_error_t *err);

void mesh_policy_init(mesh_policy_t *p)
{
    memset(p, 0, sizeof(*p));
    /* the defaults are read as an admin would write them: they cannot fail */
    mesh_error_t err;
    for (int i = 0; i < MESH_ARRAY_LEN(top_keys); i++)
        if (top_keys[i].dflt)
            read_key(p, &top_keys[i], top_keys[i].name, top_keys[i].dflt, &err);
}

const char *mesh_enforce_name(mesh_enforce_t e)
{
    return (unsigned)e <= MESH_ENFORCE_REJECT ? enforce_names[e] : "reject";
}

const char *mesh_export_name(mesh_export_t e)
{
    return (unsigned)e <= MESH_EXPORT_BATCH ? export_all[e] : "mesh";
}

int mesh_export_parse(const char *s, mesh_export_t *out)
{
    for (int i = 0; export_all[i]; i++)
        if (strcasecmp(s, export_all[i]) == 0) {
            *out = (mesh_export_t)i;
            return 0;
        }
    return -1;
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
    const char *names[32];
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
    const policy_key_t *k = meant(top_keys, MESH_ARRAY_LEN(top_keys), key);
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
    char list[MESH_ERROR_MAX / 2], fams[64] = "", guess[128];
    size_t used = 0;
    for (int i = 0; i < MESH_ARRAY_LEN(families) && used < sizeof(fams); i++) {
        int w = snprintf(fams + used, sizeof(fams) - used, in_file ? "%s: " : "%sNAME.FIELD ",
                         in_file ? families[i].section : families[i].prefix);
        used += w > 0 ? (size_t)w : 0;
    }
    if (in_file && used)
        fams[used - 1] = '\0'; /* a file has no policy: key */
    return mesh_error_set(err, "unknown policy key '%.40s' (keys: %s %s%s)%s", key,
                          list_of(top_keys, MESH_ARRAY_LEN(top_keys), " ", list, sizeof(list)),
                          fams, in_file ? "" : "policy",
                          key_hint(key, in_file, guess, sizeof(guess)));
}

static int read_word(int *dst, const policy_key_t *k, const char *key, const char *value,
                     mesh_error_t *err)
{
    char list[128] = "";
    size_t used = 0;
    for (int i = 0; k->words[i]; i++) {
        if (strcasecmp(value, k->words[i]) == 0) {
            *dst = i;
            return 0;
        }
        int w = snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "", k->words[i]);
        used += w > 0 && (size_t)w < sizeof(list) - used ? (size_t)w : 0;
    }
    return mesh_error_set(err, "%s: '%.20s' is not one of %s", key, value, list);
}

static int read_path(char *dst, const policy_key_t *k, const char *key, const char *value,
                     mesh_error_t *err)
{
    for (int i = 0; k->words && k->words[i]; i++)
        if (strcasecmp(value, k->words[i]) == 0)
            return mesh_strlcpy(dst, k->words[i], k->size), 0;
    if (value[0] != '/')
        return mesh_error_set(err, "%s: '%.60s' must be an absolute path", key, value);
    if (mesh_strlcpy(dst, value, k->size) < 0)
        return mesh_error_set(err, "%s: path longer than %d characters", key, (int)k->size - 1);
    return 0;
}

/* Read value into k's member of base (a policy, an override or a
 * partition); key names it in errors. */
static int read_key(void *base, const policy_key_t *k, const char *key, const char *value,
                    mesh_error_t *err)
{
    void *dst = (char *)base + k->off;
    long long n;
    double v;
    int yes;
    switch (k->kind) {
    case K_WORD: return read_word(dst, k, key, value, err);
    case K_NUM:
        if (mesh_parse_number(value, key, k->min, k->max, k->unit, &v, err) < 0)
            return -1;
        *(double *)dst = k->scale ? v * k->scale : v;
        return 0;
    case K_SIZE: return mesh_parse_size(value, key, k->min, k->max, dst, err);
    case K_RATE: return mesh_parse_bandwidth(value, key, k->min, k->max, dst, err);
    case K_INT:
        if (mesh_parse_count(value, key, (long long)k->min, (long long)k->max, &n, err) < 0)
            return -1;
        *(int *)dst = (int)n;
        return 0;
    case K_YESNO:
        if (mesh_parse_bool(value, key, &yes, err) < 0)
            return -1;
        *(int *)dst = yes ? 1 : -1;
        return 0;
    case K_PATH: return read_path(dst, k, key, value, err);
    case K_TEXT:
        if (mesh_strlcpy(dst, value, k->size) < 0)
            return mesh_error_set(err, "%s: '%.40s' is too long", key, value);
        return 0;
    case K_CUSTOM: return k->read(base, key, value, err);
    }
    return mesh_error_set(err, "%s: no reader", key);
}

/* A custom key's value as an admin writes it. */
static void custom_text(const mesh_policy_t *p, const policy_key_t *k, char *buf, size_t len)
{
    if (k->read == mesh_policy_read_port_range) {
        snprintf(buf, len, "%d-%d", p->launch.port_lo, p->launch.port_hi);
    } else if (k->read == read_framework) {
        snprintf(buf, len, "%s", mesh_framework_name(p->assume.framework));
    } else if (k->read == mesh_policy_read_gpu_name) {
        snprintf(buf, len, "%s", p->assume.gpu[0] ? p->assume.gpu : "(none)");
    } else {
        /* steps=, in mesh_policy_read_steps' words */
        unsigned s = p->launch.steps;
        snprintf(buf, len, "%s%s%s%s%s", s & MESH_STEP_REGULAR ? "regular" : "",
                 s & MESH_STEP_REGULAR && s & ~MESH_STEP_REGULAR ? "," : "",
                 s & MESH_STEP_BATCH ? "batch" : "",
                 s & MESH_STEP_BATCH && s & MESH_STEP_INTERACTIVE ? "," : "",
                 s & MESH_STEP_INTERACTIVE ? "interactive" : "");
    }
}

int mesh_policy_key_text(const mesh_policy_t *p, int i, const char **name, char *buf, size_t len)
{
    if (i < 0 || i >= MESH_ARRAY_LEN(top_keys))
        return -1;
    const policy_key_t *k = &top_keys[i];
    const void *v = (const char *)p + k->off;
    *name = k->name;
    switch (k->kind) {
    case K_WORD: snprintf(buf, len, "%s", k->words[*(const int *)v]); break;
    case K_NUM: snprintf(buf, len, "%g", *(const double *)v / (k->scale ? k->scale : 1)); break;
    case K_SIZE:
        if (!k->dflt && *(const double *)v == 0) /* not set, and no default: none */
            snprintf(buf, len, "(none)");
        else
            mesh_format_bytes(*(const double *)v, buf, len);
        break;
    case K_INT: snprintf(buf, len, "%d", *(const int *)v); break;
    case K_RATE: snprintf(buf, len, "%.6gGB/s", *(const double *)v / 1e9); break;
    case K_YESNO: snprintf(buf, len, "%s", *(const int *)v > 0 ? "yes" : "no"); break;
    case K_PATH:
    case K_TEXT: snprintf(buf, len, "%s", *(const char *)v ? (const char *)v : "(none)"); break;
    case K_CUSTOM: custom_text(p, k, buf, len); break;
    }
    return 0;
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
    const policy_key_t *k = find_key(f->fields, f->n_fields, field);
    if (k)
        return read_key(entry, k, key, value, err);
    char list[128], guess[64];
    return mesh_error_set(err, "%s: unknown %s field '%.20s' (%s)%s", key, f->what, field,
                          list_of(f->fields, f->n_fields, ", ", list, sizeof(list)),
                          hint(f->fields, f->n_fields, field, guess, sizeof(guess)));
}

/* mesh_policy_set, for a key written as an argument or in a file */
static int policy_set(mesh_policy_t *p, const char *key, const char *value, int in_file,
                      mesh_error_t *err)
{
    const policy_key_t *k = find_key(top_keys, MESH_ARRAY_LEN(top_keys), key);
    if (k)
        return read_key(p, k, key, value, err);
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
    const policy_key_t *k = find_key(top_keys, MESH_ARRAY_LEN(top_keys), CONFIG_ERROR_KEY);
    int reject = 0, unreadable = 0;
    for (int i = 0; i < ac; i++) {
        char word[64];
        int v;
        if (!config_error_word(av[i], word, sizeof(word)))
            continue;
        if (read_word(&v, k, CONFIG_ERROR_KEY, word, err) < 0)
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
    if (depth == 0 && !why[0] && !find_key(top_keys, MESH_ARRAY_LEN(top_keys), key)) {
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
        yaml_event_t ev;
        if (mesh_yaml_next(r->yp, &ev, r->origin, err) < 0)
            return -1;
        yaml_event_type_t t = ev.type;
        size_t line = ev.start_mark.line + 1;
        yaml_event_delete(&ev);
        if (t == YAML_STREAM_START_EVENT && state == 0)
            state = 1;
        else if (t == YAML_DOCUMENT_START_EVENT && state == 1)
            state = 2;
        else if (t == YAML_STREAM_END_EVENT && state == 1)
            state = 3; /* an empty policy keeps the defaults */
        else if (t == YAML_MAPPING_START_EVENT && state == 2) {
            if (read_policy_map(r, "", 0, err) < 0)
                return -1;
            state = 4; /* then the document end, then the stream end */
        } else if (t == YAML_DOCUMENT_END_EVENT && state == 4)
            state = 5;
        else if (t == YAML_STREAM_END_EVENT && state == 5)
            state = 3;
        else
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
    for (int i = 0; o && i < MESH_ARRAY_LEN(gpu_fields); i++) {
        const policy_key_t *k = &gpu_fields[i];
        const void *from = (const char *)o + k->off;
        void *to = (char *)gpu + k->to;
        if (!k->to)
            continue;
        if (k->kind == K_INT && *(const int *)from > 0)
            *(int *)to = *(const int *)from;
        else if (k->kind != K_INT && *(const double *)from > 0)
            *(double *)to = *(const double *)from;
    }
    if (o && o->fp8 < 0) {
        gpu->peak_fp8 = 0;
        gpu->fp8_blocks = 0;
    } else if (o && o->fp8 > 0 && gpu->peak_fp8 <= 0) {
        gpu->peak_fp8 = FP8_PER_BF16 * gpu->peak_flops;
    }
}
