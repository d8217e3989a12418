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
    mesh_buf_printf(&b, "%d;%s;{name: %s, params: %.17g", MESH_REQUEST_VERSION,
                    mesh_layout_format_pins(pins, p, sizeof(p)), m->name, m->params);
    if (m->has_arch)
        mesh_buf_printf(&b,
                        ", arch: {layers: %d, hidden: %d, heads: %d, kv_heads: %d, ffn: %d, "
                        "vocab: %d, mlp: %s, tied_embeddings: %s}",
                        m->layers, m->hidden, m->heads, m->kv_heads, m->ffn, m->vocab,
                        mesh_mlp_name(m->mlp), m->tied_embeddings ? "true" : "false");
    mesh_buf_printf(&b, ", train: {seq_len: %d, global_batch: %ld, micro_batch: ", m->seq_len,
                    m->global_batch);
    if (m->micro_batch > 0)
        mesh_buf_printf(&b, "%d", m->micro_batch);
    else
        mesh_buf_puts(&b, "auto");
    mesh_buf_printf(
        &b,
        ", precision: %s, grad_accum_dtype: %s, optimizer: %s, optimizer_dtype: %s, "
        "framework: %s, recompute: %s, flash_attention: %s, dropout: %.17g, finetune: %s",
        mesh_precision_name(m->precision), mesh_precision_name(m->grad_accum_dtype),
        mesh_optimizer_name(m->optimizer), mesh_precision_name(m->optimizer_dtype),
        mesh_framework_name(m->framework),
        m->recompute == MESH_RECOMPUTE_AUTO ? "auto" : mesh_recompute_name(m->recompute),
        m->flash_attention ? "true" : "false", m->dropout, mesh_finetune_name(m->finetune));
    if (m->precision == MESH_PREC_FP8) /* the recipe is an error without fp8 */
        mesh_buf_printf(&b, ", fp8_recipe: %s", mesh_fp8_recipe_name(m->fp8_recipe));
    mesh_buf_puts(&b, "}}");
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
