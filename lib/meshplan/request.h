/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan: a job's request, as the submit side records it for the
 * controller.
 *
 * sbatch, salloc and srun put it in the job's control environment
 * (spank_job_control_setenv), where job_submit/meshplan finds it: the
 * controller cannot read the user's spec file, so the request carries the
 * resolved model itself, as a one-line YAML spec (numbers, no preset), with
 * the --mesh pins and a format version:  "1;PINS;SPEC".  Decoding is the
 * spec parser's, so a hand-made request is held to every rule a file is.
 */
#ifndef MESHPLAN_REQUEST_H
#define MESHPLAN_REQUEST_H

#include "meshplan/api.h"
#include <stddef.h>

#include "meshplan/error.h"
#include "meshplan/layout.h"
#include "meshplan/spec.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MESH_REQUEST_ENV     "MESHPLAN_REQUEST"
#define MESH_REQUEST_VERSION 1
#define MESH_REQUEST_MAX     2048 /* bytes, with the terminating NUL */
/* Beside the request in the control environment: the goal of --mesh-size
 * (mesh_size_goal_parse), which asks job_submit/meshplan to narrow the
 * job's node range to one count.  Apart from the request, so that a
 * controller of an older meshplan reads the request as before. */
#define MESH_SIZE_ENV "MESHPLAN_SIZE"

/**
 * Write model m and the pins (not NULL; mesh_layout_format_pins's syntax)
 * as a request into buf[len]: "1;PINS;{name: ..., params: ..., arch: {...},
 * train: {...}}", NUL-terminated; doubles are written so that they read
 * back exactly.  Returns 0, or -1 with err set and buf untouched when the
 * request would not fit in len bytes or in MESH_REQUEST_MAX, or memory
 * runs out.
 */
MESH_API int mesh_request_encode(const mesh_model_t *m, const mesh_layout_t *pins, char *buf,
                                 size_t len, mesh_error_t *err);

/**
 * Read a request (s not NULL, shorter than MESH_REQUEST_MAX) back into *m
 * and *pins, with every check a spec file (mesh_spec_parse, presets
 * refused) and --mesh (mesh_layout_parse) get; errors name the request's
 * part ("request: ..."), and a version other than MESH_REQUEST_VERSION is
 * one.  Returns 0, or -1 with err set; *m is then untouched, but *pins may
 * have been changed (the pins are decoded before the spec).
 */
MESH_API int mesh_request_decode(const char *s, mesh_model_t *m, mesh_layout_t *pins,
                                 mesh_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
