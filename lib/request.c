/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The request job_submit/meshplan reads: "1;PINS;SPEC" (see request.h).
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "meshplan/request.h"

int mesh_request_encode(const mesh_model_t *m, const mesh_layout_t *pins, char *buf, size_t len,
                        mesh_error_t *err)
{
    char p[MESH_LAYOUT_STR_MAX];
    mesh_buf_t b;
    mesh_buf_init(&b);
    /* %.17g: every double reads back to the same bits */
    mesh_buf_printf(&b, "%d;%s;", MESH_REQUEST_VERSION,
                    mesh_layout_format_pins(pins, p, sizeof(p)));
    mesh_spec_write(m, &b); /* every key of the spec table, %.17g for numbers */
    int rc = 0;
    if (b.failed || !b.data)
        rc = mesh_error_set(err, "request: out of memory");
    else if (b.len >= len || b.len >= MESH_REQUEST_MAX)
        rc = mesh_error_set(err, "request: %zu bytes, more than the %d allowed", b.len,
                            MESH_REQUEST_MAX - 1);
    else
        memcpy(buf, b.data, b.len + 1);
    mesh_buf_free(&b);
    return rc;
}

int mesh_request_decode(const char *s, mesh_model_t *m, mesh_layout_t *pins, mesh_error_t *err)
{
    size_t n = strnlen(s, MESH_REQUEST_MAX);
    if (n >= MESH_REQUEST_MAX)
        return mesh_error_set(err, "request: longer than %d bytes", MESH_REQUEST_MAX - 1);
    const char *a = strchr(s, ';'), *b = a ? strchr(a + 1, ';') : NULL;
    if (!a || !b)
        return mesh_error_set(err, "request: not VERSION;PINS;SPEC");
    if (a - s != 1 || s[0] != '0' + MESH_REQUEST_VERSION)
        return mesh_error_set(err,
                              "request: format version '%.*s', this meshplan reads %d (submit "
                              "with the same meshplan as the controller's)",
                              (int)(a - s) < 8 ? (int)(a - s) : 8, s, MESH_REQUEST_VERSION);
    char p[MESH_LAYOUT_STR_MAX];
    if ((size_t)(b - a - 1) >= sizeof(p))
        return mesh_error_set(err, "request: the pins are too long");
    memcpy(p, a + 1, (size_t)(b - a - 1));
    p[b - a - 1] = '\0';
    if (mesh_layout_parse(p, pins, err) < 0)
        return mesh_error_prefix(err, "request");
    /* no preset directories: a request is complete in itself */
    if (mesh_spec_parse(b + 1, n - (size_t)(b + 1 - s), "request", NULL, m, err) < 0)
        return -1;
    return 0;
}
