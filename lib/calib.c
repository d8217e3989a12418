/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The calibration file: its factors' table (names, bounds), reading and
 * writing it, and applying a GPU's factors to the cost model's parts
 * (doc/design.md, "Calibration").  Below the policy, which reads the file
 * its calibration: key names and applies it to every GPU it resolves.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "meshplan/calibrate.h"
#include "meshplan/cost.h"
#include "meshplan/parse.h"
#include "meshplan/memory.h"
#include "yamlread.h"

#define CALIB_MAX_BYTES (64 * 1024) /* a calibration file of 8 GPUs is under 2 KiB */

/* The factors.  Bounds: what a site's machine can plausibly differ from
 * the GPU table by before the table, not the calibration, is wrong.
 * Compute: published Megatron-LM runs on one GPU model reach 0.6-1.3x the
 * model's TFLOP/s (../shared/data/published_throughput_dev.csv, issue 28);
 * network: a site may run at a quarter of the table's NIC rate (one rail of
 * four) up to twice it (NVLink-SHARP, rail-optimised fabrics); memory:
 * PyTorch's allocator rounds every block up to 512 bytes and 2 MiB
 * segments (c10/cuda/CUDACachingAllocator.cpp), so a peak 0.8-1.5x the
 * accounted bytes is the range of accounting error, not of the machine. */
static const struct {
    const char *name;
    double lo, hi;
} factors[MESH_CALIB_FACTORS] = {
    [MESH_CALIB_COMPUTE] = {"compute", 0.5, 1.5},
    [MESH_CALIB_NETWORK] = {"network", 0.25, 2.0},
    [MESH_CALIB_MEMORY] = {"memory", 0.8, 1.5},
};

const char *mesh_calib_factor_name(int f, double *lo, double *hi)
{
    if (f < 0 || f >= MESH_CALIB_FACTORS)
        return NULL;
    if (lo)
        *lo = factors[f].lo;
    if (hi)
        *hi = factors[f].hi;
    return factors[f].name;
}

const mesh_calib_gpu_t *mesh_calib_find(const mesh_calibration_t *c, const char *gpu)
{
    for (int i = 0; c && gpu && i < c->n && i < MESH_CALIB_GPUS_MAX; i++)
        if (strcasecmp(c->gpus[i].gpu, gpu) == 0)
            return &c->gpus[i];
    return NULL;
}

/* A GPU resolved under a calibration carries its factors (0: none), so
 * that the cost and memory models need nothing but the GPU. */
void mesh_calib_apply_gpu(const mesh_calibration_t *c, mesh_gpu_t *gpu)
{
    const mesh_calib_gpu_t *g = mesh_calib_find(c, gpu->name);
    gpu->cal_compute = g ? g->factor[MESH_CALIB_COMPUTE] : 0;
    gpu->cal_network = g ? g->factor[MESH_CALIB_NETWORK] : 0;
    gpu->cal_memory = g ? g->factor[MESH_CALIB_MEMORY] : 0;
}

/* The hook of the cost model: compute over the compute factor, every
 * exposed communication over the network one; the optimizer step (HBM
 * bound) as predicted.  The same split mesh_calib_fit fits. */
void mesh_calib_scale_cost(mesh_cost_t *c, const mesh_gpu_t *gpu)
{
    if (gpu->cal_compute > 0)
        c->compute_s /= gpu->cal_compute;
    if (gpu->cal_network > 0) {
        c->tp_comm_s /= gpu->cal_network;
        c->cp_comm_s /= gpu->cal_network;
        c->pp_comm_s /= gpu->cal_network;
        c->dp_comm_s /= gpu->cal_network;
        c->ep_comm_s /= gpu->cal_network;
    }
}

/* The memory hook: the allocated parts (what torch.cuda.max_memory_allocated
 * counts) times the memory factor; the overhead (context, NCCL buffers,
 * allocator slack) is not allocated by PyTorch and stays. */
void mesh_calib_scale_memory(mesh_memory_t *m, const mesh_gpu_t *gpu)
{
    if (!(gpu->cal_memory > 0))
        return;
    m->weights *= gpu->cal_memory;
    m->grads *= gpu->cal_memory;
    m->optimizer *= gpu->cal_memory;
    m->activations *= gpu->cal_memory;
    m->total = m->weights + m->grads + m->optimizer + m->activations + m->overhead;
}

const char *mesh_calib_summary(const mesh_calib_gpu_t *g, const char *path, char *buf, size_t len)
{
    snprintf(buf, len,
             "calibrated on %d job%s%s%s%s, median step-time error before %.0f %%, after %.0f %%",
             g->jobs, g->jobs == 1 ? "" : "s", path && *path ? " (" : "", path ? path : "",
             path && *path ? ")" : "", 100 * g->err_before, 100 * g->err_after);
    return buf;
}

char *mesh_calib_yaml(const mesh_calibration_t *c)
{
    mesh_buf_t b;
    mesh_buf_init(&b);
    mesh_buf_puts(&b, "# meshplan calibration: written by meshplan calibrate; name it in the\n"
                      "# policy (calibration: PATH).  Times are divided by compute and network,\n"
                      "# allocated memory multiplied by memory (meshplan-policy(5)).\n"
                      "gpus:\n");
    for (int i = 0; i < c->n && i < MESH_CALIB_GPUS_MAX; i++) {
        const mesh_calib_gpu_t *g = &c->gpus[i];
        mesh_buf_printf(&b, "  \"%s\":\n", g->gpu);
        for (int f = 0; f < MESH_CALIB_FACTORS; f++)
            mesh_buf_printf(&b, "    %s: %.6g\n", factors[f].name, g->factor[f]);
        mesh_buf_printf(&b, "    jobs: %d\n    error_before: %.6g\n    error_after: %.6g\n",
                        g->jobs, g->err_before, g->err_after);
    }
    return mesh_buf_take(&b);
}

/* ---- reading ---- */

typedef struct reader {
    yaml_parser_t yp;
    const char *origin;
    mesh_calibration_t *out;
} reader_t;

/* The next event's type and line, its scalar copied into s[MESH_YAML_SCALAR_MAX]. */
static int next(reader_t *r, char *s, size_t *line, mesh_error_t *err)
{
    yaml_event_t ev;
    if (mesh_yaml_next(&r->yp, &ev, r->origin, err) < 0)
        return -1;
    int t = ev.type;
    *line = ev.start_mark.line + 1;
    s[0] = 0;
    if (t == YAML_SCALAR_EVENT)
        snprintf(s, MESH_YAML_SCALAR_MAX, "%s", (const char *)ev.data.scalar.value);
    yaml_event_delete(&ev);
    return t;
}

static int set_field(reader_t *r, mesh_calib_gpu_t *g, const char *key, const char *v, size_t line,
                     mesh_error_t *err)
{
    char what[MESH_CALIB_PATH_MAX + 128];
    snprintf(what, sizeof(what), "%s:%zu: gpus.%s.%s", r->origin, line, g->gpu, key);
    for (int f = 0; f < MESH_CALIB_FACTORS; f++)
        if (strcmp(key, factors[f].name) == 0)
            return mesh_parse_double(v, what, factors[f].lo, factors[f].hi, &g->factor[f], err);
    if (strcmp(key, "jobs") == 0) {
        long long n;
        if (mesh_parse_int(v, what, 1, 1000000000, &n, err) < 0)
            return -1;
        g->jobs = (int)n;
        return 0;
    }
    if (strcmp(key, "error_before") == 0)
        return mesh_parse_double(v, what, 0, 1000, &g->err_before, err);
    if (strcmp(key, "error_after") == 0)
        return mesh_parse_double(v, what, 0, 1000, &g->err_after, err);
    return mesh_error_set(err,
                          "%s: no such field (compute, network, memory, jobs, error_before, "
                          "error_after)",
                          what);
}

/* gpus.NAME: a mapping of field: value */
static int read_gpu(reader_t *r, const char *name, mesh_error_t *err)
{
    char k[MESH_YAML_SCALAR_MAX], v[MESH_YAML_SCALAR_MAX];
    size_t line;
    mesh_calibration_t *c = r->out;
    if (c->n >= MESH_CALIB_GPUS_MAX)
        return mesh_error_set(err, "%s: more than %d GPU models", r->origin, MESH_CALIB_GPUS_MAX);
    if (mesh_calib_find(c, name))
        return mesh_error_set(err, "%s: gpus.%.40s twice", r->origin, name);
    mesh_calib_gpu_t *g = &c->gpus[c->n++];
    memset(g, 0, sizeof(*g));
    snprintf(g->gpu, sizeof(g->gpu), "%s", name);
    for (int f = 0; f < MESH_CALIB_FACTORS; f++)
        g->factor[f] = 1;
    for (;;) {
        int t = next(r, k, &line, err);
        if (t == YAML_MAPPING_END_EVENT)
            return 0;
        if (t != YAML_SCALAR_EVENT || next(r, v, &line, err) != YAML_SCALAR_EVENT)
            return t < 0 ? -1
                         : mesh_error_set(err, "%s:%zu: gpus.%s: expected field: number", r->origin,
                                          line, g->gpu);
        if (set_field(r, g, k, v, line, err) < 0)
            return -1;
    }
}

/* the top mapping: gpus: {NAME: {...}, ...} */
static int read_top(reader_t *r, mesh_error_t *err)
{
    char s[MESH_YAML_SCALAR_MAX];
    size_t line;
    int t;
    while ((t = next(r, s, &line, err)) == YAML_SCALAR_EVENT) {
        if (strcmp(s, "gpus") != 0)
            return mesh_error_set(err, "%s:%zu: %.40s: no such key (a calibration has gpus:)",
                                  r->origin, line, s);
        if (next(r, s, &line, err) != YAML_MAPPING_START_EVENT)
            return mesh_error_set(err, "%s:%zu: gpus: expected a mapping of GPU models", r->origin,
                                  line);
        while ((t = next(r, s, &line, err)) == YAML_SCALAR_EVENT) {
            char name[MESH_YAML_SCALAR_MAX];
            snprintf(name, sizeof(name), "%s", s);
            if (strlen(name) >= sizeof(r->out->gpus[0].gpu) ||
                next(r, s, &line, err) != YAML_MAPPING_START_EVENT)
                return mesh_error_set(err, "%s:%zu: gpus.%.40s: expected a GPU model's mapping",
                                      r->origin, line, name);
            if (read_gpu(r, name, err) < 0)
                return -1;
        }
        if (t != YAML_MAPPING_END_EVENT)
            return t < 0 ? -1 : mesh_error_set(err, "%s:%zu: gpus: not a mapping", r->origin, line);
    }
    return t == YAML_MAPPING_END_EVENT ? 0
           : t < 0                     ? -1
                   : mesh_error_set(err, "%s:%zu: a calibration is one mapping", r->origin, line);
}

static int read_doc(reader_t *r, mesh_error_t *err)
{
    char s[MESH_YAML_SCALAR_MAX];
    size_t line = 0;
    int want[] = {YAML_STREAM_START_EVENT, YAML_DOCUMENT_START_EVENT, YAML_MAPPING_START_EVENT};
    for (int i = 0; i < 3; i++) {
        int t = next(r, s, &line, err);
        if (t != want[i])
            return t < 0 ? -1
                         : mesh_error_set(err, "%s:%zu: a calibration is one YAML mapping (gpus:)",
                                          r->origin, line);
    }
    if (read_top(r, err) < 0)
        return -1;
    return mesh_yaml_end(&r->yp, r->origin, "one document only", err);
}

int mesh_calib_load(const char *path, mesh_calibration_t *out, mesh_error_t *err)
{
    memset(out, 0, sizeof(*out));
    if (strlen(path) >= sizeof(out->path))
        return mesh_error_set(err, "calibration: path longer than %d bytes",
                              MESH_CALIB_PATH_MAX - 1);
    size_t len;
    char *buf = mesh_read_regular_file(path, "calibration", CALIB_MAX_BYTES, &len, err);
    if (!buf)
        return -1;
    reader_t r = {.origin = path, .out = out};
    int rc = -1;
    if (!yaml_parser_initialize(&r.yp)) {
        mesh_error_set(err, "out of memory");
    } else {
        yaml_parser_set_input_string(&r.yp, (const unsigned char *)buf, len);
        rc = read_doc(&r, err);
        yaml_parser_delete(&r.yp);
    }
    free(buf);
    if (rc == 0 && out->n == 0)
        rc = mesh_error_set(err, "%s: no GPU model (gpus: is empty): run meshplan calibrate", path);
    if (rc < 0)
        memset(out, 0, sizeof(*out));
    else
        snprintf(out->path, sizeof(out->path), "%s", path);
    return rc;
}
