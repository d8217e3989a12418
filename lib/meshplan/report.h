/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan: reports of a plan for people and for programs.
 *
 * The CLI prints these and the plugin's --mesh-explain shows the same text,
 * so a plan reads the same wherever it is made.  Every function but
 * mesh_report_nofit returns a malloc'd NUL-terminated string ending in a
 * newline, which the caller frees with free() and which outlives the plan,
 * or NULL if memory ran out.  p must not be NULL.  Thread-safe.
 */
#ifndef MESHPLAN_REPORT_H
#define MESHPLAN_REPORT_H

#include "meshplan/api.h"
#include "meshplan/explain.h"
#include "meshplan/plan.h"
#include "meshplan/restart.h"
#include "meshplan/picture.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The explained plan: model and allocation, the chosen layout as a table,
 * its memory breakdown and cost, runners-up, reasons and advice.
 */
MESH_API char *mesh_report_text(const mesh_plan_t *p);

/**
 * The explained plan as every front end shows it (meshplan plan, srun's and
 * the first task's --mesh-explain): mesh_report_text, then after a blank
 * line the restart's section when restart is not NULL (mesh_restart_text),
 * then after a blank line the pictures drawn with po when po is not NULL
 * (mesh_picture_text).  A malloc'd string the caller frees, or NULL when
 * memory runs out.
 */
MESH_API char *mesh_report_explained(const mesh_plan_t *p, const mesh_restart_t *restart,
                                     const mesh_picture_opts_t *po);

/**
 * The plan as one JSON object (doc/design.md, "CLI and JSON"): model,
 * allocation, fits, layout, memory (bytes per GPU, worst rank), cost
 * (seconds), pp_layers, alternatives, reasons, advice, digest, evaluated,
 * reason_records and advice_records (the records of explain.h behind
 * reasons and advice, one for one).
 */
MESH_API char *mesh_report_json(const mesh_plan_t *p);

/**
 * The plan record of p: one line, MESH_CALIB_RECORD and a JSON object
 * (digest, model, gpu, mesh, gpus, global_batch, step_seconds and its
 * parts compute_seconds, network_seconds and other_seconds, memory_bytes
 * allocated, calibrated), the prediction as the model made it before any
 * calibration; what meshplan calibrate pairs a job's log with
 * (lib/meshplan/calibrate.h).  The caller frees; NULL when out of memory.
 */
MESH_API char *mesh_calib_plan_record(const mesh_plan_t *p);

/**
 * The rank map of the chosen layout: one row (text) or object (JSON) per
 * rank of the whole allocation, with its node, local index and
 * coordinates; large allocations make long strings.
 */
MESH_API char *mesh_report_ranks_text(const mesh_plan_t *p);
MESH_API char *mesh_report_ranks_json(const mesh_plan_t *p);

/**
 * Why a plan that does not fit falls short, in one line, then one line per
 * "what would fit" advice, into buf[len] (len > 0; truncated to fit; no
 * final newline): what the plugin and job_submit/meshplan tell the user.
 * It says "does not fit" whatever mesh_plan_fits says: call it only for a
 * plan that does not.  Returns buf.
 */
MESH_API const char *mesh_report_nofit(const mesh_plan_t *p, char *buf, size_t len);

/** What the policy makes of a plan (mesh_plan_verdict). */
typedef enum mesh_verdict {
    MESH_VERDICT_RUN,    /**< it fits, or enforce=off: run it, say nothing */
    MESH_VERDICT_WARN,   /**< it does not fit and enforce=warn: run it, print the message */
    MESH_VERDICT_REFUSE, /**< it does not fit and enforce=reject: refuse it with the message */
} mesh_verdict_t;

/**
 * The one decision every front end makes with a plan (srun, slurmstepd,
 * job_submit/meshplan and `meshplan env` all call this): run, warn or
 * refuse, under the policy's `enforce`.  For WARN and REFUSE, msg[len]
 * (len > 0) receives mesh_report_nofit's lines, what the user is told
 * wherever the plan was made; for RUN it is left empty.  p must not be
 * NULL.  Returns the verdict.
 */
MESH_API mesh_verdict_t mesh_plan_verdict(const mesh_plan_t *p, mesh_enforce_t enforce, char *msg,
                                          size_t len);

/**
 * s as a JSON string literal, quotes included, escaped as every JSON the
 * library writes is: '"' and '\\' with a backslash, a newline as \n, other
 * control characters and DEL as \u00XX; other bytes as they are.  Returns a
 * malloc'd string the caller frees, or NULL when memory runs out.  The CLI
 * writes the JSON of its own commands with it, so there is one escaper.
 */
MESH_API char *mesh_json_string(const char *s);

#ifdef __cplusplus
}
#endif
#endif
