/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan: calibration from the site's own jobs (meshplan calibrate).
 *
 * A job run through the plugin with --mesh-explain leaves, on its first
 * task's stderr, one plan record ("meshplan-plan: {...}", made by
 * mesh_calib_plan_record): the layout, GPU, plan digest and the predicted
 * step time in parts, and the predicted allocated memory.  Megatron-LM's
 * own log adds what happened: "elapsed time per iteration (ms)" on each
 * logged iteration (training_log, megatron/training/training.py) and
 * "max allocated" of its memory report (report_memory,
 * megatron/training/utils/common_utils.py).  The library pairs the two per
 * log, fits per GPU model three correction factors within bounds, and
 * writes them as a calibration file that the policy names (calibration:
 * PATH); plans made with it apply them and say so.  doc/design.md,
 * "Calibration".
 */
#ifndef MESHPLAN_CALIBRATE_H
#define MESHPLAN_CALIBRATE_H

#include <stddef.h>

#include "meshplan/api.h"
#include "meshplan/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MESH_CALIB_GPUS_MAX 8   /* GPU models one calibration file may hold */
#define MESH_CALIB_PATH_MAX 256 /* bytes of its path, with the NUL */
/** The prefix of the plan record line; the JSON object follows it. */
#define MESH_CALIB_RECORD "meshplan-plan: "

/** The factors, one row each of lib/calib.c's table (name, bounds, doc). */
typedef enum mesh_calib_factor {
    MESH_CALIB_COMPUTE, /* the model's compute time is divided by it */
    MESH_CALIB_NETWORK, /* its exposed communication time is divided by it */
    MESH_CALIB_MEMORY,  /* its allocated memory is multiplied by it */
    MESH_CALIB_FACTORS
} mesh_calib_factor_t;

/** One GPU model's calibration. */
typedef struct mesh_calib_gpu {
    char gpu[32];                      /* the GPU table's name */
    double factor[MESH_CALIB_FACTORS]; /* 1: as the model predicts */
    int jobs;                          /* jobs it was fitted on */
    double err_before, err_after;      /* median |predicted/measured - 1| of their step times */
} mesh_calib_gpu_t;

/** A calibration file, read. */
typedef struct mesh_calibration {
    char path[MESH_CALIB_PATH_MAX]; /* where it was read from; "": none */
    int n;                          /* entries used in gpus[] */
    mesh_calib_gpu_t gpus[MESH_CALIB_GPUS_MAX];
} mesh_calibration_t;

/**
 * Factor f's name as the calibration file and the reports write it
 * ("compute", "network", "memory") and its bounds: a fit outside
 * [lo, hi] is refused.  NULL for an f out of range.
 */
MESH_API const char *mesh_calib_factor_name(int f, double *lo, double *hi);

/**
 * The entry for GPU model `gpu` (case-insensitive), or NULL; c may be NULL.
 */
MESH_API const mesh_calib_gpu_t *mesh_calib_find(const mesh_calibration_t *c, const char *gpu);

/**
 * Read the calibration file at path (YAML, as mesh_calib_yaml writes it)
 * into *out.  Every factor is checked against its bounds.  0, or -1 with
 * err naming the file, line and field.
 */
MESH_API int mesh_calib_load(const char *path, mesh_calibration_t *out, mesh_error_t *err);

/** The calibration as a YAML file's text; the caller frees; NULL when out of memory. */
MESH_API char *mesh_calib_yaml(const mesh_calibration_t *c);

/** One job: what its plan record predicted and what its log measured. */
typedef struct mesh_calib_job {
    char source[64]; /* the log's name, as the caller gave it (its end when longer) */
    char digest[24]; /* the plan's digest */
    char gpu[32];    /* GPU model */
    char model[64];  /* the model's name */
    char mesh[160];  /* the layout, as MESH_PLAN writes it */
    int gpus;        /* GPUs of the job */
    long global_batch;
    /* predicted, before any calibration: seconds of one step in parts
     * (compute with the bubble; exposed TP, CP, PP, DP and EP
     * communication; the rest, the optimizer step), and bytes allocated
     * (weights, gradients, optimizer states, activations) */
    double compute_s, network_s, other_s, memory;
    double step_s;  /* measured: median seconds per iteration, the first logged left out */
    double peak;    /* measured: largest "max allocated", bytes; 0: no memory report */
    int iterations; /* logged iteration lines used */
} mesh_calib_job_t;

/** Jobs read, and the logs skipped with their reasons. */
typedef struct mesh_calib mesh_calib_t;

/** An empty set; NULL when out of memory.  Free with mesh_calib_destroy. */
MESH_API mesh_calib_t *mesh_calib_create(void);
MESH_API void mesh_calib_destroy(mesh_calib_t *c);

/**
 * Read one log, buf[0..len) (any bytes: NULs, control characters,
 * truncation), named `name` in reports.  Lines of other programs are
 * passed over; a log is skipped, with one reason, when it has no plan
 * record, records of two plans (mixed jobs), iteration lines of another
 * global batch, too few iterations (truncated), or values out of reason.
 * 1 added, 0 skipped, -1 out of memory.
 */
MESH_API int mesh_calib_add_log(mesh_calib_t *c, const char *name, const char *buf, size_t len);

/** The jobs read, job i of them (NULL past the count).  A NULL set (one
 * mesh_calib_create could not make) holds no jobs and no skipped logs. */
MESH_API int mesh_calib_job_count(const mesh_calib_t *c);
MESH_API const mesh_calib_job_t *mesh_calib_job(const mesh_calib_t *c, int i);
/** Skipped logs: "NAME: reason", one each. */
MESH_API int mesh_calib_skip_count(const mesh_calib_t *c);
MESH_API const char *mesh_calib_skip(const mesh_calib_t *c, int i);

/**
 * Fit each GPU model's factors on its jobs into *out (cleared first; its
 * path left ""), by least squares on the relative step-time error:
 * measured = compute_s / compute + network_s / network + other_s, and
 * memory the median of peak / memory.  The network factor is fitted only
 * where the jobs' communication shares differ enough to tell it from
 * compute; it stays 1 otherwise.  0, or -1 when there is no job, or when
 * a factor would leave its bounds: err says which, by how much, and on
 * which evidence.
 */
MESH_API int mesh_calib_fit(const mesh_calib_t *c, mesh_calibration_t *out, mesh_error_t *err);

/**
 * Predicted against measured for every job, before and after cal (NULL:
 * before only), the skipped logs, and each GPU's factors: text, or one
 * JSON object when json.  The caller frees; NULL when out of memory.
 */
#define MESH_CALIB_JSON 1 /* one JSON object (every job in it) */
#define MESH_CALIB_JOBS 2 /* text: a row for every job */
MESH_API char *mesh_calib_report(const mesh_calib_t *c, const mesh_calibration_t *cal, int flags);

/** The same as an SVG scatter plot, measured over predicted step time. */
MESH_API char *mesh_calib_svg(const mesh_calib_t *c, const mesh_calibration_t *cal);

/** The one-line summary a calibrated plan shows: "calibrated on 37 jobs
 * (FILE), median step-time error before 18 %, after 4 %", in buf. */
MESH_API const char *mesh_calib_summary(const mesh_calib_gpu_t *g, const char *path, char *buf,
                                        size_t len);

#ifdef __cplusplus
}
#endif
#endif
