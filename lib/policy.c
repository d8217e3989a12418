/*
 * Admin policy: one table of keys for plugstack.conf arguments, YAML policy
 * files and the CLI's --policy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "internal.h"
#include "yamlread.h"
#include "meshplan/parse.h"
#include "meshplan/policy.h"

#define POLICY_MAX_BYTES (64 * 1024)

void mesh_policy_init(mesh_policy_t *p)
{
    memset(p, 0, sizeof(*p));
    p->enforce = MESH_ENFORCE_REJECT;
    p->reserve = 0.03;
    p->export_mode = MESH_EXPORT_TORCH;
    p->port_lo = 20000;
    p->port_hi = 29999;
    p->steps = MESH_STEP_REGULAR;
    p->topology_timeout = 10;             /* live discovery takes ~10 ms; a wedged sysfs, forever */
    p->overhead_context = 1.0 * MESH_GiB; /* CUDA context + cuBLAS/NCCL workspaces */
    p->overhead_comm = 0.25 * MESH_GiB;   /* NCCL channel buffers per communicator */
    p->fragmentation = 0.05;              /* caching-allocator slack on activations */
}

const char *mesh_enforce_name(mesh_enforce_t e)
{
    return e == MESH_ENFORCE_OFF ? "off" : e == MESH_ENFORCE_WARN ? "warn" : "reject";
}

const char *mesh_export_name(mesh_export_t e)
{
    return e == MESH_EXPORT_TORCH ? "torch" : e == MESH_EXPORT_TORCHRUN ? "torchrun" : "mesh";
}

int mesh_export_parse(const char *s, mesh_export_t *out)
{
    for (int i = MESH_EXPORT_TORCH; i <= MESH_EXPORT_MESH; i++)
        if (strcasecmp(s, mesh_export_name((mesh_export_t)i)) == 0) {
            *out = (mesh_export_t)i;
            return 0;
        }
    return -1;
}

static int set_steps(mesh_policy_t *p, const char *value, mesh_error_t *err)
{
    static const struct {
        const char *name;
        unsigned bit;
    } names[] = {{"regular", MESH_STEP_REGULAR},
                 {"batch", MESH_STEP_BATCH},
                 {"interactive", MESH_STEP_INTERACTIVE},
                 {"all", MESH_STEP_REGULAR | MESH_STEP_BATCH | MESH_STEP_INTERACTIVE}};
    char buf[128];
    if (mesh_strlcpy(buf, value, sizeof(buf)) < 0)
        return mesh_error_set(err, "steps: value too long");
    unsigned mask = 0;
    char *save = NULL;
    for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        int found = 0;
        for (int i = 0; i < MESH_ARRAY_LEN(names); i++)
            if (strcmp(w, names[i].name) == 0) {
                mask |= names[i].bit;
                found = 1;
            }
        if (!found)
            return mesh_error_set(
                err, "steps: '%.20s' is not one of regular, batch, interactive, all", w);
    }
    if (!mask)
        return mesh_error_set(err, "steps: empty (use regular, batch, interactive or all)");
    p->steps = mask;
    return 0;
}

static int set_port_range(mesh_policy_t *p, const char *value, mesh_error_t *err)
{
    char lo[16], *dash = strchr(value, '-');
    long long a, b;
    if (!dash || (size_t)(dash - value) >= sizeof(lo))
        return mesh_error_set(err, "port_range: '%.30s' is not LO-HI (e.g. 20000-29999)", value);
    memcpy(lo, value, (size_t)(dash - value));
    lo[dash - value] = '\0';
    if (mesh_parse_int(lo, "port_range low", 1024, 65535, &a, err) < 0 ||
        mesh_parse_int(dash + 1, "port_range high", 1024, 65535, &b, err) < 0)
        return -1;
    if (b < a)
        return mesh_error_set(err, "port_range: %lld-%lld is empty (LO must not exceed HI)", a, b);
    p->port_lo = (int)a;
    p->port_hi = (int)b;
    return 0;
}

static int set_path(char *dst, const char *key, const char *value, mesh_error_t *err)
{
    if (value[0] != '/')
        return mesh_error_set(err, "%s: '%.60s' must be an absolute path", key, value);
    if (mesh_strlcpy(dst, value, MESH_PATH_MAX) < 0)
        return mesh_error_set(err, "%s: path longer than %d characters", key, MESH_PATH_MAX - 1);
    return 0;
}

/* gpu.NAME.FIELD=value */
static int set_gpu_override(mesh_policy_t *p, const char *key, const char *value, mesh_error_t *err)
{
    const char *name = key + 4, *dot = strrchr(name, '.');
    char gname[32];
    if (!dot || dot == name || (size_t)(dot - name) >= sizeof(gname))
        return mesh_error_set(err,
                              "%s: GPU overrides are gpu.NAME.FIELD (e.g. "
                              "gpu.H100-SXM.memory=80GiB)",
                              key);
    memcpy(gname, name, (size_t)(dot - name));
    gname[dot - name] = '\0';
    /* a name the table does not know defines a new GPU: mesh_policy_check
     * makes sure it gets a PCI id, a memory and a peak */
    const char *field = dot + 1;
    mesh_gpu_override_t *o = NULL;
    for (int i = 0; i < p->n_gpu_overrides; i++)
        if (strcasecmp(p->gpu_overrides[i].name, gname) == 0)
            o = &p->gpu_overrides[i];
    if (!o) {
        if (p->n_gpu_overrides == MESH_GPU_OVERRIDES_MAX)
            return mesh_error_set(err, "%s: at most %d GPU models can be overridden", key,
                                  MESH_GPU_OVERRIDES_MAX);
        o = &p->gpu_overrides[p->n_gpu_overrides++];
        memset(o, 0, sizeof(*o));
        mesh_strlcpy(o->name, gname, sizeof(o->name));
    }
    double v;
    long long iv;
    if (strcmp(field, "memory") == 0)
        return mesh_parse_size(value, key, 1e8, 1e14, &o->memory, err);
    if (strcmp(field, "peak_tflops") == 0) {
        if (mesh_parse_double(value, key, 1, 1e6, &v, err) < 0)
            return -1;
        o->peak_flops = v * 1e12;
        return 0;
    }
    if (strcmp(field, "hbm_bw") == 0)
        return mesh_parse_size(value, key, 1e9, 1e14, &o->hbm_bw, err);
    if (strcmp(field, "link_bw") == 0)
        return mesh_parse_size(value, key, 1e8, 1e14, &o->link_bw, err);
    if (strcmp(field, "net_bw") == 0)
        return mesh_parse_size(value, key, 1e8, 1e14, &o->net_bw, err);
    if (strcmp(field, "gemm_eff") == 0)
        return mesh_parse_double(value, key, 0.01, 1, &o->gemm_eff, err);
    if (strcmp(field, "pci") == 0) {
        unsigned pv, pd;
        char end;
        if (sscanf(value, "%4x:%4x%c", &pv, &pd, &end) != 2 || strlen(value) != 9)
            return mesh_error_set(err, "%s: '%.20s' is not a PCI id VVVV:DDDD (e.g. 10de:2330)",
                                  key, value);
        o->pci_vendor = pv;
        o->pci_device = pd;
        return 0;
    }
    if (strcmp(field, "island") == 0) {
        if (mesh_parse_int(value, key, 1, 1024, &iv, err) < 0)
            return -1;
        o->island = (int)iv;
        return 0;
    }
    return mesh_error_set(err,
                          "%s: unknown GPU field '%.20s' (pci, memory, peak_tflops, hbm_bw, "
                          "link_bw, net_bw, gemm_eff, island)",
                          key, field);
}

/* A setting of two words: *out is 0 for the first (off), 1 for the second. */
static int set_either(const char *key, const char *value, const char *off, const char *on, int *out,
                      mesh_error_t *err)
{
    if (strcmp(value, off) && strcmp(value, on))
        return mesh_error_set(err, "%s: '%.20s' is not one of %s, %s", key, value, off, on);
    *out = strcmp(value, on) == 0;
    return 0;
}

/* partition.NAME.FIELD: what job_submit/meshplan assumes about a partition. */
static int set_partition(mesh_policy_t *p, const char *key, const char *value, mesh_error_t *err)
{
    const char *name = key + 10, *dot = strrchr(name, '.');
    mesh_partition_t *q = NULL;
    if (!dot || dot == name || (size_t)(dot - name) >= sizeof(q->name))
        return mesh_error_set(err,
                              "%s: partition settings are partition.NAME.FIELD (e.g. "
                              "partition.gpu.gpu=H100-SXM)",
                              key);
    for (int i = 0; i < p->n_partitions; i++)
        if (strncmp(p->partitions[i].name, name, (size_t)(dot - name)) == 0 &&
            !p->partitions[i].name[dot - name])
            q = &p->partitions[i];
    if (!q) {
        if (p->n_partitions == MESH_PARTITIONS_MAX)
            return mesh_error_set(err, "%s: at most %d partitions", key, MESH_PARTITIONS_MAX);
        q = &p->partitions[p->n_partitions++];
        memset(q, 0, sizeof(*q));
        memcpy(q->name, name, (size_t)(dot - name));
    }
    const char *field = dot + 1;
    long long v;
    if (strcmp(field, "gpu") == 0) /* checked with the rest in mesh_policy_check */
        return mesh_strlcpy(q->gpu, value, sizeof(q->gpu)) < 0
                   ? mesh_error_set(err, "%s: '%.40s' is too long", key, value)
                   : 0;
    if (strcmp(field, "gpu_mem") == 0)
        return mesh_parse_size(value, key, 1e8, 1e14, &q->gpu_mem, err);
    int *count = strcmp(field, "nvlink") == 0  ? &q->island
                 : strcmp(field, "nodes") == 0 ? &q->nodes
                                               : NULL;
    if (count) {
        if (mesh_parse_int(value, key, 1, 1 << 20, &v, err) < 0)
            return -1;
        *count = (int)v;
        return 0;
    }
    return mesh_error_set(err, "%s: unknown partition field '%.20s' (gpu, gpu_mem, nvlink, nodes)",
                          key, field);
}

int mesh_policy_set(mesh_policy_t *p, const char *key, const char *value, mesh_error_t *err)
{
    if (strcmp(key, "enforce") == 0) {
        for (int i = MESH_ENFORCE_OFF; i <= MESH_ENFORCE_REJECT; i++)
            if (strcmp(value, mesh_enforce_name((mesh_enforce_t)i)) == 0) {
                p->enforce = (mesh_enforce_t)i;
                return 0;
            }
        return mesh_error_set(err, "enforce: '%.20s' is not one of off, warn, reject", value);
    }
    if (strcmp(key, "reserve") == 0)
        return mesh_parse_double(value, "reserve", 0, 0.9, &p->reserve, err);
    if (strcmp(key, "gpu") == 0) {
        /* a table name, or one the policy defines (gpu.NAME.*, in any order:
         * mesh_policy_check makes sure it is defined) */
        const mesh_gpu_t *g = mesh_gpu_find(value);
        if (!g &&
            (strlen(value) >= sizeof(p->gpu) || !*value ||
             strspn(value, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.") !=
                 strlen(value)))
            return mesh_gpu_lookup(value, &(mesh_gpu_t){0}, err);
        return mesh_strlcpy(p->gpu, g ? g->name : value, sizeof(p->gpu)), 0;
    }
    if (strcmp(key, "gpu_mem") == 0)
        return mesh_parse_size(value, "gpu_mem", 1e8, 1e14, &p->gpu_mem, err);
    if (strcmp(key, "export") == 0) {
        if (mesh_export_parse(value, &p->export_mode) < 0)
            return mesh_error_set(err, "export: '%.20s' is not one of torch, torchrun, mesh",
                                  value);
        return 0;
    }
    if (strcmp(key, "port_range") == 0)
        return set_port_range(p, value, err);
    if (strcmp(key, "models_dir") == 0)
        return set_path(p->models_dir, key, value, err);
    if (strcmp(key, "topology_xml") == 0) { /* a path (%n: the node's name), or none */
        if (strcmp(value, "none") == 0)
            return mesh_strlcpy(p->topology_xml, value, MESH_PATH_MAX), 0;
        return set_path(p->topology_xml, key, value, err);
    }
    if (strcmp(key, "steps") == 0)
        return set_steps(p, value, err);
    if (strcmp(key, "bind") == 0)
        return set_either(key, value, "none", "gpu", &p->bind_gpu, err);
    if (strcmp(key, "gpu_order") == 0)
        return set_either(key, value, "pci", "minor", &p->gpu_order_minor, err);
    if (strcmp(key, "topology_timeout") == 0)
        return mesh_parse_double(value, key, 0, 3600, &p->topology_timeout, err);
    if (strcmp(key, "on_topology_error") == 0)
        return set_either(key, value, "fail", "fallback", &p->topology_fallback, err);
    if (strcmp(key, "overhead") == 0)
        return mesh_parse_size(value, key, 0, 1e12, &p->overhead_context, err);
    if (strcmp(key, "comm_buffer") == 0)
        return mesh_parse_size(value, key, 0, 1e11, &p->overhead_comm, err);
    if (strcmp(key, "fragmentation") == 0)
        return mesh_parse_double(value, key, 0, 1, &p->fragmentation, err);
    if (strcmp(key, "on_submit_error") == 0)
        return set_either(key, value, "allow", "reject", &p->submit_fail_closed, err);
    if (strncmp(key, "gpu.", 4) == 0)
        return set_gpu_override(p, key, value, err);
    if (strncmp(key, "partition.", 10) == 0)
        return set_partition(p, key, value, err);
    return mesh_error_set(err,
                          "unknown policy key '%.40s' (keys: enforce reserve gpu gpu_mem "
                          "export port_range models_dir topology_xml topology_timeout "
                          "on_topology_error steps bind gpu_order overhead comm_buffer "
                          "fragmentation on_submit_error gpu.NAME.FIELD partition.NAME.FIELD "
                          "policy)",
                          key);
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

/* Read `mapping` (its start consumed) of the policy file; prefix is "" at the
 * top, "gpu." inside `gpus:`, "gpu.NAME." inside one GPU. */
static int read_policy_map(yaml_parser_t *yp, const char *origin, mesh_policy_t *p,
                           const char *prefix, int depth, mesh_error_t *err)
{
    /* a key given twice is a mistake: the spec refuses it, so does the policy */
    char seen[64][64];
    int n_seen = 0;
    for (;;) {
        yaml_event_t k, v;
        if (mesh_yaml_next(yp, &k, origin, err) < 0)
            return -1;
        if (k.type == YAML_MAPPING_END_EVENT) {
            yaml_event_delete(&k);
            return 0;
        }
        size_t line = k.start_mark.line + 1;
        if (k.type != YAML_SCALAR_EVENT) {
            yaml_event_delete(&k);
            return mesh_error_set(err, "%s:%zu: expected a key", origin, line);
        }
        char key[2 * MESH_YAML_SCALAR_MAX];
        snprintf(key, sizeof(key), "%s%s", prefix, (const char *)k.data.scalar.value);
        yaml_event_delete(&k);
        for (int i = 0; i < n_seen; i++)
            if (strcmp(seen[i], key) == 0)
                return mesh_error_set(err, "%s:%zu: %s: given twice", origin, line, key);
        if (n_seen == MESH_ARRAY_LEN(seen))
            return mesh_error_set(err, "%s:%zu: more than %d keys in one mapping", origin, line,
                                  MESH_ARRAY_LEN(seen));
        mesh_strlcpy(seen[n_seen++], key, sizeof(seen[0]));
        if (mesh_yaml_next(yp, &v, origin, err) < 0)
            return -1;
        int nested = (depth == 0 && (strcmp(key, "gpus") == 0 || strcmp(key, "partitions") == 0)) ||
                     (depth == 1);
        if (nested) {
            int is_map = v.type == YAML_MAPPING_START_EVENT;
            yaml_event_delete(&v);
            if (!is_map)
                return mesh_error_set(err, "%s:%zu: %s: expected a mapping", origin, line, key);
            char sub[2 * MESH_YAML_SCALAR_MAX + 2];
            if (depth == 0)
                snprintf(sub, sizeof(sub), "%s.", strcmp(key, "gpus") == 0 ? "gpu" : "partition");
            else
                snprintf(sub, sizeof(sub), "%s.", key);
            if (read_policy_map(yp, origin, p, sub, depth + 1, err) < 0)
                return -1;
            continue;
        }
        if (v.type != YAML_SCALAR_EVENT) {
            yaml_event_delete(&v);
            return mesh_error_set(err, "%s:%zu: %s: expected a single value", origin, line, key);
        }
        char value[MESH_YAML_SCALAR_MAX + 1];
        mesh_strlcpy(value, (const char *)v.data.scalar.value, sizeof(value));
        yaml_event_delete(&v);
        if (strcmp(key, "policy") == 0)
            return mesh_error_set(err, "%s:%zu: policy: a policy file cannot include another",
                                  origin, line);
        if (mesh_policy_set(p, key, value, err) < 0)
            return mesh_error_prefix(err, "%s:%zu", origin, line);
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

int mesh_policy_parse(mesh_policy_t *p, const char *buf, size_t len, const char *path,
                      mesh_error_t *err)
{
    if (len > POLICY_MAX_BYTES)
        return mesh_error_set(err, "%s: larger than %d bytes", path, POLICY_MAX_BYTES);
    yaml_parser_t yp;
    if (!yaml_parser_initialize(&yp))
        return mesh_error_set(err, "%s: out of memory", path);
    yaml_parser_set_input_string(&yp, (const unsigned char *)buf, len);
    int rc = -1, state = 0;
    while (state != 3) {
        yaml_event_t ev;
        if (mesh_yaml_next(&yp, &ev, path, err) < 0)
            goto out;
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
            if (read_policy_map(&yp, path, p, "", 0, err) < 0)
                goto out;
            state = 4; /* then the document end, then the stream end */
        } else if (t == YAML_DOCUMENT_END_EVENT && state == 4) {
            state = 5;
        } else if (t == YAML_STREAM_END_EVENT && state == 5) {
            state = 3;
        } else {
            mesh_error_set(err, "%s:%zu: a policy is one YAML mapping of key: value", path, line);
            goto out;
        }
    }
    if ((rc = mesh_policy_check(p, err)) < 0)
        mesh_error_prefix(err, "%s", path);
out:
    yaml_parser_delete(&yp);
    return rc;
}

/* The admin's own definition of a GPU the table does not know. */
static const mesh_gpu_override_t *defined_gpu(const mesh_policy_t *p, const char *name)
{
    for (int i = 0; i < p->n_gpu_overrides; i++)
        if (strcasecmp(p->gpu_overrides[i].name, name) == 0)
            return &p->gpu_overrides[i];
    return NULL;
}

int mesh_policy_gpu(const mesh_policy_t *p, const char *name, mesh_gpu_t *out, mesh_error_t *err)
{
    const mesh_gpu_override_t *o = mesh_gpu_find(name) ? NULL : defined_gpu(p, name);
    if (o && o->memory > 0 && o->peak_flops > 0) {
        *out = *mesh_gpu_default(); /* priced like the default GPU where not said */
        mesh_strlcpy(out->name, o->name, sizeof(out->name));
        out->vendor_id = o->pci_vendor;
        out->island = 1;
    } else if (mesh_gpu_lookup(name, out, err) < 0) {
        return -1;
    }
    mesh_policy_apply_gpu(p, out);
    return 0;
}

int mesh_policy_check(const mesh_policy_t *p, mesh_error_t *err)
{
    mesh_gpu_t g;
    if (p->gpu[0] && !mesh_gpu_find(p->gpu) && !defined_gpu(p, p->gpu))
        return mesh_gpu_lookup(p->gpu, &g, err);
    for (int i = 0; i < p->n_partitions; i++) {
        const mesh_partition_t *q = &p->partitions[i];
        if (q->gpu[0] && !mesh_gpu_find(q->gpu) && !defined_gpu(p, q->gpu)) {
            mesh_gpu_lookup(q->gpu, &g, err);
            return mesh_error_prefix(err, "partition.%s.gpu", q->name);
        }
    }
    for (int i = 0; i < p->n_gpu_overrides; i++) {
        const mesh_gpu_override_t *o = &p->gpu_overrides[i];
        if (mesh_gpu_find(o->name))
            continue;
        if (!o->pci_vendor || o->memory <= 0 || o->peak_flops <= 0)
            return mesh_error_set(err,
                                  "gpu.%s: not a GPU of the table (meshplan gpus); to define "
                                  "one, give gpu.%s.pci=VVVV:DDDD, .memory= and .peak_tflops=",
                                  o->name, o->name);
    }
    return 0;
}

void mesh_policy_apply_gpu(const mesh_policy_t *p, mesh_gpu_t *gpu)
{
    for (int i = 0; i < p->n_gpu_overrides; i++) {
        const mesh_gpu_override_t *o = &p->gpu_overrides[i];
        if (strcasecmp(o->name, gpu->name) != 0)
            continue;
        if (o->memory > 0)
            gpu->memory = o->memory;
        if (o->peak_flops > 0)
            gpu->peak_flops = o->peak_flops;
        if (o->hbm_bw > 0)
            gpu->hbm_bw = o->hbm_bw;
        if (o->link_bw > 0)
            gpu->link_bw = o->link_bw;
        if (o->net_bw > 0)
            gpu->net_bw = o->net_bw;
        if (o->gemm_eff > 0)
            gpu->gemm_eff = o->gemm_eff;
        if (o->island > 0)
            gpu->island = o->island;
    }
}

double mesh_policy_usable(const mesh_policy_t *p, const mesh_gpu_t *gpu)
{
    return gpu->memory * (1 - p->reserve);
}

int mesh_policy_alloc(const mesh_policy_t *p, const char *gpu, double gpu_mem, int island,
                      int nodes, int gpus_per_node, mesh_alloc_t *out, mesh_error_t *err)
{
    memset(out, 0, sizeof(*out));
    if (!gpu && p->gpu[0])
        gpu = p->gpu;
    if (gpu) {
        if (mesh_policy_gpu(p, gpu, &out->gpu, err) < 0)
            return -1;
    } else {
        /* memory alone: a generic GPU priced like the default one */
        out->gpu = *mesh_gpu_default();
        mesh_strlcpy(out->gpu.name, "generic", sizeof(out->gpu.name));
        if (gpu_mem <= 0)
            gpu_mem = p->gpu_mem;
        if (gpu_mem <= 0)
            return mesh_error_set(err, "the GPU is unknown: give --gpu NAME or --gpu-mem SIZE "
                                       "(admins: gpu= or gpu_mem= in the policy)");
        mesh_policy_apply_gpu(p, &out->gpu);
    }
    if (gpu_mem > 0)
        out->gpu.memory = gpu_mem;
    out->nodes = nodes;
    out->gpus_per_node = gpus_per_node;
    out->island = island > 0 ? island : out->gpu.island;
    if (out->island > gpus_per_node)
        out->island = gpus_per_node;
    return 0;
}

const char *mesh_default_models_dir(void)
{
    return MESH_INSTALLED_MODELS_DIR;
}

const mesh_partition_t *mesh_policy_partition(const mesh_policy_t *p, const char *name)
{
    for (int i = 0; name && i < p->n_partitions; i++)
        if (strcmp(p->partitions[i].name, name) == 0)
            return &p->partitions[i];
    for (int i = 0; i < p->n_partitions; i++) /* the admin's catch-all */
        if (strcmp(p->partitions[i].name, "default") == 0)
            return &p->partitions[i];
    return NULL;
}
