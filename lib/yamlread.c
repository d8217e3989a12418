/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Hardened reading of the files meshplan parses.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "yamlread.h"

int mesh_yaml_next(yaml_parser_t *p, yaml_event_t *ev, const char *origin, mesh_error_t *err)
{
    if (!yaml_parser_parse(p, ev))
        return mesh_error_set(err, "%s:%zu: YAML syntax error: %s", origin,
                              p->problem_mark.line + 1, p->problem ? p->problem : "unknown");
    /* Anchors and aliases let a tiny file expand into a huge one; tags
     * change what a scalar means.  Neither file has a use for any of them. */
    const char *what = NULL;
    const yaml_char_t *anchor = NULL, *tag = NULL;
    if (ev->type == YAML_SCALAR_EVENT) {
        anchor = ev->data.scalar.anchor;
        tag = ev->data.scalar.tag;
    } else if (ev->type == YAML_MAPPING_START_EVENT) {
        anchor = ev->data.mapping_start.anchor;
        tag = ev->data.mapping_start.tag;
    } else if (ev->type == YAML_SEQUENCE_START_EVENT) {
        anchor = ev->data.sequence_start.anchor;
        tag = ev->data.sequence_start.tag;
    }
    if (ev->type == YAML_ALIAS_EVENT)
        what = "aliases (*name) are not allowed";
    else if (anchor)
        what = "anchors (&name) are not allowed";
    else if (tag)
        what = "tags (!name) are not allowed";
    else if (ev->type == YAML_SCALAR_EVENT && ev->data.scalar.length > MESH_YAML_SCALAR_MAX)
        what = "a value is longer than "
               "256"
               " characters";
    else if (ev->type == YAML_SCALAR_EVENT &&
             strlen((const char *)ev->data.scalar.value) != ev->data.scalar.length)
        what = "a value contains a NUL character";
    if (what) {
        size_t line = ev->start_mark.line + 1;
        yaml_event_delete(ev);
        return mesh_error_set(err, "%s:%zu: %s", origin, line, what);
    }
    return 0;
}

char *mesh_read_regular_file(const char *path, const char *what, size_t cap, size_t *len,
                             mesh_error_t *err)
{
    /* O_NONBLOCK: opening a FIFO must not hang slurmstepd; fstat after open,
     * not stat before it, so the file checked is the file read. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return mesh_error_set(err, "cannot open %s '%s': %s", what, path, strerror(errno)), NULL;
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return mesh_error_set(err, "%s '%s' is not a regular file", what, path), NULL;
    }
    char *buf = malloc(cap + 2);
    if (!buf) {
        close(fd);
        return mesh_error_set(err, "out of memory reading %s '%s'", what, path), NULL;
    }
    size_t n = 0;
    for (;;) { /* the file may change under us: read at most cap + 1 bytes */
        ssize_t r = read(fd, buf + n, cap + 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            mesh_error_set(err, "cannot read %s '%s': %s", what, path, strerror(errno));
            close(fd);
            free(buf);
            return NULL;
        }
        n += (size_t)r;
        if (r == 0 || n > cap)
            break;
    }
    close(fd);
    if (n > cap) {
        free(buf);
        return mesh_error_set(err, "%s '%s' is larger than the %zu-byte limit", what, path, cap),
               NULL;
    }
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

int mesh_yaml_top_line(const char *line, const char *end, const char *key, char *word, size_t len)
{
    size_t k = strlen(key);
    if ((size_t)(end - line) <= k || strncmp(line, key, k) != 0)
        return 0;
    const char *p = line + k;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (p == end || *p++ != ':')
        return 0; /* another key that starts so, or not a key */
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    const char *q = p;
    /* p follows a blank or the colon: q[-1] is in the line */
    while (q < end && *q != '\r' && !(*q == '#' && (q[-1] == ' ' || q[-1] == '\t')))
        q++;
    while (q > p && (q[-1] == ' ' || q[-1] == '\t'))
        q--;
    if (q - p >= 2 && (*p == '"' || *p == '\'') && q[-1] == *p) {
        p++;
        q--;
    }
    snprintf(word, len, "%.*s", (int)(q - p), p);
    return 1;
}

int mesh_yaml_next_type(yaml_parser_t *p, const char *origin, size_t *line, mesh_error_t *err)
{
    yaml_event_t ev;
    if (mesh_yaml_next(p, &ev, origin, err) < 0)
        return -1;
    int t = (int)ev.type;
    *line = ev.start_mark.line + 1;
    yaml_event_delete(&ev);
    return t;
}

int mesh_yaml_end(yaml_parser_t *p, const char *origin, const char *one_doc, mesh_error_t *err)
{
    size_t line = 0;
    int t = mesh_yaml_next_type(p, origin, &line, err);
    if (t == YAML_DOCUMENT_END_EVENT)
        t = mesh_yaml_next_type(p, origin, &line, err);
    if (t == YAML_STREAM_END_EVENT)
        return 0;
    return t < 0 ? -1 : mesh_error_set(err, "%s:%zu: %s", origin, line, one_doc);
}
