/*
 * meshplan: reports of a plan for people and for programs.
 *
 * The CLI prints these and the plugin's --mesh-explain shows the same text,
 * so a plan reads the same wherever it is made.  Every function returns a
 * malloc'd NUL-terminated string (free it), or NULL if memory ran out.
 */
#ifndef MESHPLAN_REPORT_H
#define MESHPLAN_REPORT_H

#include "meshplan/api.h"
#include "meshplan/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The explained plan: model and allocation, the chosen layout as a table,
 * its memory breakdown and cost, runners-up, reasons and advice. */
MESH_API char *mesh_report_text(const mesh_plan_t *p);

/* The plan as one JSON object (DESIGN section 9): model, fits, layout,
 * memory (bytes per GPU, worst rank), cost, alternatives, reasons, advice. */
MESH_API char *mesh_report_json(const mesh_plan_t *p);

/* The rank map of the chosen layout: one row per rank with node, local
 * index and coordinates, then the groups of rank 0. */
MESH_API char *mesh_report_ranks_text(const mesh_plan_t *p);
MESH_API char *mesh_report_ranks_json(const mesh_plan_t *p);

/* Why a plan that does not fit falls short, in one line, then one line per
 * "what would fit" advice, into buf[len]: what the plugin and
 * job_submit/meshplan tell the user. */
MESH_API const char *mesh_report_nofit(const mesh_plan_t *p, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
