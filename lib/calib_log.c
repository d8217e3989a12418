/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading the site's job logs for meshplan calibrate: the plan record the
 * plugin writes (MESH_CALIB_RECORD, lib/calib_record.c) and Megatron-LM's
 * own lines, at the commit the project cites (d98e8a6):
 *
 *   training_log, megatron/training/training.py, print_rank_last:
 *    " [2026-08-22 10:00:00.000000] iteration       20/    1000 | consumed samples: ...
 *     | elapsed time per iteration (ms): 1234.5 | throughput per GPU (TFLOP/s/GPU):
 *     412.3 | ... | global batch size:   512 | ..."
 *   report_memory, megatron/training/utils/common_utils.py, on each
 *   model-parallel rank of DP rank 0:
 *    "[Rank 3] (after 20 iterations) memory (MB) | allocated: ... | max allocated:
 *     61234.56 | reserved: ... | max reserved: ..."
 *
 * Every byte is suspect: lines are searched, never assumed to start where
 * Megatron's do (srun --label prefixes "0: "), numbers are parsed strictly
 * within bounds, and a log that does not describe one job plainly is
 * skipped with its reason.  doc/design.md, "Calibration".
 */
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "meshplan/calibrate.h"
#include "meshplan/parse.h"

#define LINE_MAX_BYTES (64 * 1024) /* Megatron's longest line, with MoE metrics, is under 4 KiB */
#define MIN_ITER_LINES 3           /* the first logged interval is warm-up: two more at least */
#define ITER_MAX_LINES 100000      /* lines a log may give; past them the rest is not read */
#define RATIO_MAX      20.0        /* measured/predicted beyond 1/20..20 is not this plan's run */

struct mesh_calib {
    mesh_calib_job_t *jobs;
    int n_jobs, n_skips;
    size_t cap_jobs, cap_skips; /* mesh_grow's */
    char **skips;
};

/* What one log has given so far. */
typedef struct log_state {
    mesh_calib_job_t job;
    int have_record;
    long train_iters; /* the "/N" of its iteration lines; 0: none yet */
    long last_iter;
    int warm;   /* the next iteration line is a warm-up interval */
    double *ms; /* elapsed ms of the lines used */
    int n_ms;
    size_t cap_ms;
    char reason[200]; /* why it is skipped; "": not (yet) */
} log_state_t;

mesh_calib_t *mesh_calib_create(void)
{
    return calloc(1, sizeof(mesh_calib_t));
}

void mesh_calib_destroy(mesh_calib_t *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->n_skips; i++)
        free(c->skips[i]);
    free(c->skips);
    free(c->jobs);
    free(c);
}

int mesh_calib_job_count(const mesh_calib_t *c)
{
    return c ? c->n_jobs : 0;
}

const mesh_calib_job_t *mesh_calib_job(const mesh_calib_t *c, int i)
{
    return c && i >= 0 && i < c->n_jobs ? &c->jobs[i] : NULL;
}

int mesh_calib_skip_count(const mesh_calib_t *c)
{
    return c ? c->n_skips : 0;
}

const char *mesh_calib_skip(const mesh_calib_t *c, int i)
{
    return c && i >= 0 && i < c->n_skips ? c->skips[i] : NULL;
}

/* s, printable: control characters and bytes past ASCII become '?', cut to len - 1 */
static void printable(char *out, size_t len, const char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k + 1 < len; i++)
        out[k++] = (unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f ? '?' : s[i];
    out[k] = 0;
}

/* The first occurrence of needle in [s, s+n), or NULL; NULs in s are bytes like any other. */
static const char *find(const char *s, size_t n, const char *needle)
{
    size_t m = strlen(needle);
    for (size_t i = 0; m <= n && i <= n - m; i++)
        if (s[i] == needle[0] && memcmp(s + i, needle, m) == 0)
            return s + i;
    return NULL;
}

/* Whether c ends a number on a Megatron-LM log line. */
static int ends_number(char c)
{
    return c == ' ' || c == '|' || c == '/';
}

/* The number just after `key` on the line, strictly parsed in [lo, hi]:
 * 1 found and good, 0 the key is not there, -1 there but not a number in
 * bounds (an absurd value). */
static int number_after(const char *line, size_t n, const char *key, double lo, double hi,
                        double *out)
{
    const char *p = find(line, n, key);
    if (!p)
        return 0;
    p += strlen(key);
    const char *end = line + n;
    while (p < end && *p == ' ')
        p++;
    char tok[40];
    size_t k = 0;
    while (p < end && !ends_number(*p) && k + 1 < sizeof(tok))
        tok[k++] = *p++;
    tok[k] = 0;
    if (p < end && !ends_number(*p))
        return -1; /* longer than any number: its start alone is another number */
    mesh_error_t err;
    return mesh_parse_double(tok, "value", lo, hi, out, &err) == 0 ? 1 : -1;
}

static int skip(log_state_t *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int skip(log_state_t *s, const char *fmt, ...)
{
    if (s->reason[0])
        return -1; /* the first reason stands */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->reason, sizeof(s->reason), fmt, ap);
    va_end(ap);
    return -1;
}

/* ---- the plan record ---- */

static int record_string(log_state_t *s, json_t *o, const char *key, char *out, size_t len)
{
    const char *v = json_string_value(json_object_get(o, key));
    if (!v || !*v || strlen(v) >= len)
        return skip(s, "plan record: \"%s\" missing, empty or longer than %zu bytes", key, len - 1);
    for (const unsigned char *q = (const unsigned char *)v; *q; q++)
        if (*q < 0x20 || *q == 0x7f)
            return skip(s, "plan record: \"%s\" has control characters", key);
    snprintf(out, len, "%s", v);
    return 0;
}

static int record_number(log_state_t *s, json_t *o, const char *key, double lo, double hi,
                         double *out)
{
    json_t *v = json_object_get(o, key);
    double x = json_is_number(v) ? json_number_value(v) : NAN;
    if (!isfinite(x) || x < lo || x > hi)
        return skip(s, "plan record: \"%s\" missing or outside %g..%g", key, lo, hi);
    *out = x;
    return 0;
}

/* The record's fields into a job; -1 (with the reason) on a bad one. */
static int record_job(log_state_t *s, json_t *o, mesh_calib_job_t *j)
{
    double gpus, gb, step;
    if (!json_is_object(o))
        return skip(s, "plan record: not one JSON object");
    if (record_string(s, o, "digest", j->digest, sizeof(j->digest)) < 0 ||
        record_string(s, o, "gpu", j->gpu, sizeof(j->gpu)) < 0 ||
        record_string(s, o, "model", j->model, sizeof(j->model)) < 0 ||
        record_string(s, o, "mesh", j->mesh, sizeof(j->mesh)) < 0 ||
        record_number(s, o, "gpus", 1, 1e7, &gpus) < 0 ||
        record_number(s, o, "global_batch", 1, 1e9, &gb) < 0 ||
        record_number(s, o, "step_seconds", 1e-6, 1e6, &step) < 0 ||
        record_number(s, o, "compute_seconds", 1e-6, 1e6, &j->compute_s) < 0 ||
        record_number(s, o, "network_seconds", 0, 1e6, &j->network_s) < 0 ||
        record_number(s, o, "other_seconds", 0, 1e6, &j->other_s) < 0 ||
        record_number(s, o, "memory_bytes", 0, 1e15, &j->memory) < 0)
        return -1;
    j->gpus = (int)gpus;
    j->global_batch = (long)gb;
    /* the parts are what the fit scales: they must be the whole step */
    if (fabs(j->compute_s + j->network_s + j->other_s - step) > 1e-3 * step)
        return skip(s, "plan record: its parts (%.4g s) are not its step_seconds (%.4g s)",
                    j->compute_s + j->network_s + j->other_s, step);
    return 0;
}

static int read_record(log_state_t *s, const char *json, size_t n, long line)
{
    json_error_t je;
    json_t *o = json_loadb(json, n, JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL, &je);
    if (!o)
        return skip(s, "line %ld: plan record is not JSON (%.60s)", line, je.text);
    mesh_calib_job_t j = {0};
    int rc = record_job(s, o, &j);
    json_decref(o);
    if (rc < 0)
        return -1;
    if (s->have_record && strcmp(j.digest, s->job.digest) != 0)
        return skip(s, "mixed jobs: plan records of two plans (%s, then %s at line %ld)",
                    s->job.digest, j.digest, line);
    memcpy(j.source, s->job.source, sizeof(j.source));
    s->job = j;
    s->have_record = 1;
    return 0;
}

/* ---- Megatron-LM's lines ---- */

static int read_iteration(log_state_t *s, const char *l, size_t n, long line)
{
    double ms, it, total, gb;
    int r = number_after(l, n, "elapsed time per iteration (ms):", 1e-3, 1e9, &ms);
    if (r <= 0)
        return r == 0 ? 0 : skip(s, "line %ld: elapsed time per iteration out of reason", line);
    const char *at = find(l, n, " iteration ");
    size_t rest = at ? n - (size_t)(at - l) : 0;
    if (!at || number_after(at, rest, " iteration ", 0, 1e12, &it) <= 0 ||
        number_after(at, rest, "/", 1, 1e12, &total) <= 0)
        return skip(s, "line %ld: an iteration line without its iteration N/M", line);
    if (s->train_iters && (long)total != s->train_iters)
        return skip(s, "mixed jobs: iteration lines of --train-iters %ld and %.0f (line %ld)",
                    s->train_iters, total, line);
    s->train_iters = (long)total;
    if (it <= s->last_iter) /* a restart from a checkpoint: warm-up again */
        s->warm = 0;
    s->last_iter = (long)it;
    if (number_after(l, n, "global batch size:", 1, 1e12, &gb) == 1 && s->have_record &&
        (long)gb != s->job.global_batch)
        return 0; /* a batch-size ramp: not the plan's step */
    if (!s->warm) {
        s->warm = 1;
        return 0;
    }
    if (s->n_ms == ITER_MAX_LINES)
        return 0;
    double *m = mesh_grow(s->ms, &s->cap_ms, (size_t)s->n_ms, sizeof(*m), 64);
    if (!m)
        return skip(s, "out of memory");
    s->ms = m;
    s->ms[s->n_ms++] = ms / 1000;
    return 0;
}

static int read_memory(log_state_t *s, const char *l, size_t n, long line)
{
    double mb;
    if (!find(l, n, "memory (MB) |"))
        return 0;
    int r = number_after(l, n, "| max allocated:", 0, 1e8, &mb);
    if (r < 0)
        return skip(s, "line %ld: max allocated out of reason", line);
    if (r > 0 && mb * 1048576.0 > s->job.peak)
        s->job.peak = mb * 1048576.0; /* Megatron's MB is 2^20 bytes (mega_bytes) */
    return 0;
}

static int read_line(log_state_t *s, const char *l, size_t n, long line)
{
    if (n > 0 && l[n - 1] == '\r')
        n--;
    const char *rec = find(l, n, MESH_CALIB_RECORD);
    if (rec) {
        size_t at = (size_t)(rec - l) + strlen(MESH_CALIB_RECORD);
        return read_record(s, l + at, n - at, line);
    }
    if (read_iteration(s, l, n, line) < 0)
        return -1;
    return read_memory(s, l, n, line);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* After the last line: the measured values, or why not. */
static int finish(log_state_t *s)
{
    mesh_calib_job_t *j = &s->job;
    if (!s->have_record)
        return skip(s, "no plan record (" MESH_CALIB_RECORD "...): run the job with "
                       "--mesh-explain, which writes it on the first task's stderr");
    if (s->n_ms + 1 < MIN_ITER_LINES)
        return skip(s,
                    "truncated: %d iteration line%s after the first, %d needed (Megatron-LM's "
                    "elapsed time per iteration, --log-interval)",
                    s->n_ms, s->n_ms == 1 ? "" : "s", MIN_ITER_LINES - 1);
    qsort(s->ms, (size_t)s->n_ms, sizeof(double), cmp_double);
    j->step_s =
        s->n_ms % 2 ? s->ms[s->n_ms / 2] : (s->ms[s->n_ms / 2 - 1] + s->ms[s->n_ms / 2]) / 2;
    j->iterations = s->n_ms;
    double pred = j->compute_s + j->network_s + j->other_s;
    if (j->step_s > RATIO_MAX * pred || j->step_s * RATIO_MAX < pred)
        return skip(s, "absurd: measured %.4g s a step against %.4g s predicted (over %.0fx apart)",
                    j->step_s, pred, RATIO_MAX);
    if (j->peak > 0 && j->memory > 0 &&
        (j->peak > RATIO_MAX * j->memory || j->peak * RATIO_MAX < j->memory))
        return skip(s, "absurd: peak %.4g GiB allocated against %.4g GiB predicted",
                    j->peak / 1073741824.0, j->memory / 1073741824.0);
    return 0;
}

static int add_skip(mesh_calib_t *c, const char *name, const char *reason)
{
    char **s = mesh_grow(c->skips, &c->cap_skips, (size_t)c->n_skips, sizeof(*s), 16);
    if (!s)
        return -1;
    c->skips = s;
    size_t len = strlen(name) + strlen(reason) + 3;
    char *line = malloc(len);
    if (!line)
        return -1;
    snprintf(line, len, "%s: %s", name, reason);
    c->skips[c->n_skips++] = line;
    return 0;
}

static int add_job(mesh_calib_t *c, const mesh_calib_job_t *j)
{
    mesh_calib_job_t *n = mesh_grow(c->jobs, &c->cap_jobs, (size_t)c->n_jobs, sizeof(*n), 16);
    if (!n)
        return -1;
    c->jobs = n;
    c->jobs[c->n_jobs++] = *j;
    return 1;
}

/* A log's name as reports show it, into out[len]: its end when it is too
 * long ("...logs/job-1234.out"), since a path's last part names the log. */
static void shown_name(char *out, size_t len, const char *name)
{
    size_t n = strlen(name);
    if (n < len) {
        printable(out, len, name, n);
        return;
    }
    memcpy(out, "...", 3);
    printable(out + 3, len - 3, name + n - (len - 4), len - 4);
}

int mesh_calib_add_log(mesh_calib_t *c, const char *name, const char *buf, size_t len)
{
    if (!c || (!buf && len))
        return -1;
    log_state_t s;
    memset(&s, 0, sizeof(s));
    /* the skip's line names the log whole (up to a path's length) */
    char whole[1024];
    shown_name(whole, sizeof(whole), name ? name : "-");
    shown_name(s.job.source, sizeof(s.job.source), name ? name : "-");
    long line = 0;
    /* a last line without its newline was cut as it was written: not read */
    for (size_t at = 0; at < len && !s.reason[0];) {
        const char *nl = memchr(buf + at, '\n', len - at);
        if (!nl)
            break;
        size_t n = (size_t)(nl - (buf + at));
        line++;
        if (n <= LINE_MAX_BYTES)
            read_line(&s, buf + at, n, line);
        at += n + 1;
    }
    if (!s.reason[0])
        finish(&s);
    free(s.ms);
    if (s.reason[0])
        return add_skip(c, whole, s.reason) < 0 ? -1 : 0;
    return add_job(c, &s.job);
}
