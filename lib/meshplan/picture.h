/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan: pictures of a plan.
 *
 * Three views, for the terminal and as one SVG: the rank map (nodes x GPUs,
 * each cell a global rank and its MESH_*_RANK coordinates tp.cp.dp.pp, in
 * MESH_ORDER; stages coloured), the pipeline timeline (stages x time under
 * the plan's schedule, 1F1B or interleaved, with its bubble; forward and
 * backward, even and odd model chunks told apart by their glyphs, not only
 * by colour) and the worst rank's memory (weights, gradients, optimizer
 * states, activations and overhead against what is usable).  Large
 * allocations and long pipelines are summarised.  The terminal's timeline
 * and the SVG's draw the same micro-batches.
 */
#ifndef MESHPLAN_PICTURE_H
#define MESHPLAN_PICTURE_H

#include "meshplan/api.h"
#include "meshplan/plan.h"
#include "meshplan/schedule.h" /* what the pipeline picture draws */

#ifdef __cplusplus
extern "C" {
#endif

/** How the text pictures may be drawn. */
typedef struct mesh_picture_opts {
    int color; /* 1: ANSI colours */
    int width; /* columns available; 0: 100; below 40 drawn as 40 */
} mesh_picture_opts_t;

/**
 * Whether pictures written to fd are drawn in colour, the one rule every
 * front end follows: fd is a terminal, no_color (the value of $NO_COLOR,
 * NULL when unset) is unset or empty, and term (the value of $TERM) is set,
 * not empty and not "dumb".  The caller reads the environment and passes
 * the values; the library reads none.
 */
MESH_API int mesh_picture_color(int fd, const char *no_color, const char *term);

/**
 * The options for pictures written to fd: colour as the caller decides
 * (color non-zero: ANSI colours), and the width of fd's terminal when it
 * is one of 40 to 99 columns, else 100.
 *
 * color is mesh_picture_color's answer, or the caller's where it knows
 * better (slurmstepd cannot tell a terminal).  Reads no environment; fd is
 * only queried (isatty, TIOCGWINSZ), and may be any descriptor, open or
 * not.
 *
 * @param fd     where the pictures will be written
 * @param color  non-zero for ANSI colours, 0 for plain text
 * @return the options, by value (nothing to free); never fails
 */
MESH_API mesh_picture_opts_t mesh_picture_opts_for(int fd, int color);

/**
 * All three text pictures, one after the other: a malloc'd string the
 * caller frees with free(), or NULL when memory runs out (a picture that
 * ran out alone is left out).  p and o must not be NULL.
 */
MESH_API char *mesh_picture_text(const mesh_plan_t *p, const mesh_picture_opts_t *o);

/**
 * One picture each, as mesh_picture_text (malloc'd, free() it; NULL only
 * out of memory; p and o not NULL).  The pipeline picture draws the
 * micro-batches whose schedule has room in 90 slots (all of them when
 * they do, else as many as do, else two per stage), the same as
 * mesh_picture_svg; a column is one slot, or several where the width is
 * short of the slots.  It shows only its title line when the schedule
 * cannot be simulated.
 */
MESH_API char *mesh_picture_ranks(const mesh_plan_t *p, const mesh_picture_opts_t *o);
MESH_API char *mesh_picture_pipeline(const mesh_plan_t *p, const mesh_picture_opts_t *o);
MESH_API char *mesh_picture_memory(const mesh_plan_t *p, const mesh_picture_opts_t *o);

/**
 * The three as one self-contained SVG document (no scripts, no external
 * fonts): a malloc'd string the caller frees with free(), NULL when memory
 * runs out.  p must not be NULL.
 */
MESH_API char *mesh_picture_svg(const mesh_plan_t *p);

#ifdef __cplusplus
}
#endif
#endif
