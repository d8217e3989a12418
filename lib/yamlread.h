/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libmeshplan internals: the hardened libyaml event reader shared by the
 * spec, policy and calibration parsers, and the end of their one document.
 */
#ifndef MESHPLAN_YAMLREAD_H
#define MESHPLAN_YAMLREAD_H

#include <stddef.h>
#include <yaml.h>

#include "meshplan/error.h"

#define MESH_YAML_SCALAR_MAX 256 /* longest key or value either file may hold */

/* Next event, refusing aliases, anchors, tags and oversized scalars with
 * "origin:line: ..." in err.  On success the caller deletes the event. */
int mesh_yaml_next(yaml_parser_t *p, yaml_event_t *ev, const char *origin, mesh_error_t *err);

/* The type of p's next event (mesh_yaml_next, the event deleted), and its
 * line (1-based) in *line; -1 with err set where mesh_yaml_next refuses it. */
int mesh_yaml_next_type(yaml_parser_t *p, const char *origin, size_t *line, mesh_error_t *err);

/* After the top mapping of a file that holds one document: its end, then
 * the stream's.  0 there; -1 with err set: the parser's own error (a
 * syntax error after the mapping is one, not a second document), or
 * "origin:line: one_doc" at anything else (a second document). */
int mesh_yaml_end(yaml_parser_t *p, const char *origin, const char *one_doc, mesh_error_t *err);

/* Read a regular file of at most `cap` bytes, without blocking on a FIFO and
 * checking the opened file (not the path); NUL-terminated, caller frees. */
char *mesh_read_regular_file(const char *path, const char *what, size_t cap, size_t *len,
                             mesh_error_t *err);

/* The value of a top-level key on a YAML line [line, end): "KEY: WORD  #
 * comment" gives WORD (quotes taken off) in word[len] and 1; 0 when the
 * line is not that key's.  A line at column 0 is a top-level key of a block
 * mapping, found so even where the YAML around it does not parse (the
 * policy's on_config_error). */
int mesh_yaml_top_line(const char *line, const char *end, const char *key, char *word, size_t len);

#endif
