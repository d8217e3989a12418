/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The policy's key tables (lib/policy_keys.h): every key of plugstack.conf,
 * the YAML policy and the CLI's --policy/--set, its kind, member, range,
 * words, default and meaning; how one value is read into its member, and
 * how a member is written back as an admin writes it (policy check).
 * lib/policy.c reads documents and arguments with them.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "policy_keys.h"
#include "meshplan/parse.h"
#include "meshplan/size.h"
#include "meshplan/when.h"

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
/* dispatcher=: the spec's train.dispatcher words less auto, in its order */
static const char *const dispatcher_words[] = {"alltoall", "deepep", NULL};
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
const policy_key_t mesh_policy_top_keys[] = {
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
     .unit = ", a fraction of the usable memory",
     .doc = "fraction of the usable GPU memory every plan leaves free"},
    {"framework", K_CUSTOM, POL(assume.framework), .read = read_framework, .dflt = "auto",
     .doc = "the framework a spec's framework: auto means"},
    {"calibration", K_CUSTOM, POL(assume.calibration), .read = mesh_policy_read_calibration,
     .dflt = "none", .doc = "meshplan calibrate's file: the site's correction factors"},
    {"dispatcher", K_WORD, POL(assume.dispatcher), .words = dispatcher_words, .dflt = "alltoall",
     .doc = "the MoE token dispatcher a spec's dispatcher: auto means (deepep: the site has "
            "DeepEP)"},
};

/* gpu.NAME.FIELD: an override of the GPU table, or a GPU of the admin's. */
#define GPU(member)    AT(mesh_gpu_override_t, member)
#define TO(gpu_member) .to = offsetof(mesh_gpu_t, gpu_member)
const policy_key_t mesh_policy_gpu_fields[] = {
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
    {"fp8", K_CUSTOM, GPU(fp8), .read = mesh_policy_read_fp8,
     .doc = "yes or no: it has FP8 tensor cores (a GPU the policy defines has none unless "
            "said); blockwise or mxfp8: and the block-scaled recipes it runs"},
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
const policy_key_t mesh_policy_partition_fields[] = {
    {"gpu", K_TEXT, PART(gpu), .doc = "its GPU model"},
    {"gpu_mem", K_SIZE, PART(gpu_mem), .min = 1e8, .max = 1e14, .doc = "its GPUs' memory"},
    {"nvlink", K_INT, PART(island), .min = 1, .max = 1 << 20, .doc = "GPUs per NVLink island"},
    {"nodes", K_INT, PART(nodes), .min = 1, .max = 1 << 20, .doc = "how many nodes it has"},
    {"max_time", K_CUSTOM, PART(max_time), .read = read_max_time,
     .doc = "its MaxTime, as slurm.conf writes it (2-00:00:00, UNLIMITED)"},
};

const int mesh_policy_top_key_count = MESH_ARRAY_LEN(mesh_policy_top_keys);
const int mesh_policy_gpu_field_count = MESH_ARRAY_LEN(mesh_policy_gpu_fields);
const int mesh_policy_partition_field_count = MESH_ARRAY_LEN(mesh_policy_partition_fields);

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

int mesh_policy_read_word(int *dst, const policy_key_t *k, const char *key, const char *value,
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
int mesh_policy_read_key(void *base, const policy_key_t *k, const char *key, const char *value,
                         mesh_error_t *err)
{
    void *dst = (char *)base + k->off;
    long long n;
    double v;
    switch (k->kind) {
    case K_WORD: return mesh_policy_read_word(dst, k, key, value, err);
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
    } else if (k->read == mesh_policy_read_calibration) {
        snprintf(buf, len, "%s", p->assume.calibration.n ? p->assume.calibration.path : "none");
    } else if (k->read == mesh_policy_read_gpu_name) {
        snprintf(buf, len, "%s", p->assume.gpu[0] ? p->assume.gpu : "(none)");
    } else {
        mesh_policy_steps_text(p->launch.steps, buf, len);
    }
}

int mesh_policy_key_text(const mesh_policy_t *p, int i, const char **name, char *buf, size_t len)
{
    if (i < 0 || i >= mesh_policy_top_key_count)
        return -1;
    const policy_key_t *k = &mesh_policy_top_keys[i];
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
    case K_PATH:
    case K_TEXT: snprintf(buf, len, "%s", *(const char *)v ? (const char *)v : "(none)"); break;
    case K_CUSTOM: custom_text(p, k, buf, len); break;
    }
    return 0;
}
