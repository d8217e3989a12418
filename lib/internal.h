/*
 * libmeshplan internals: shared by the library's sources only, never installed.
 */
#ifndef MESHPLAN_INTERNAL_H
#define MESHPLAN_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* A growable string.  Appends after an allocation failure are ignored and
 * mesh_buf_take then returns NULL, so callers check once at the end. */
typedef struct mesh_buf {
    char *data;
    size_t len, cap;
    int failed;
} mesh_buf_t;

void mesh_buf_init(mesh_buf_t *b);
void mesh_buf_printf(mesh_buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void mesh_buf_vprintf(mesh_buf_t *b, const char *fmt, va_list ap);
void mesh_buf_puts(mesh_buf_t *b, const char *s);
/* Append s as a JSON string literal, quotes included. */
void mesh_buf_json_string(mesh_buf_t *b, const char *s);
/* Hand over the string (caller frees); NULL if an append failed. */
char *mesh_buf_take(mesh_buf_t *b);
void mesh_buf_free(mesh_buf_t *b);

/* Copy src into dst[size], always NUL-terminated; -1 if it was truncated. */
int mesh_strlcpy(char *dst, const char *src, size_t size);

/* FNV-1a, 64 bits, of a NUL-terminated string: the digests' hash. */
static inline uint64_t mesh_fnv1a64(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const unsigned char *c = (const unsigned char *)s; *c; c++)
        h = (h ^ *c) * 0x100000001b3ULL;
    return h;
}

/* The pipeline stages that can hold the most, memory or parameters: the
 * first (embedding, most micro-batches in flight), the second (under an
 * uneven split it has more layers than the first and one fewer in flight,
 * and every later middle stage has as many layers and fewer in flight) and
 * the last (output layer, logits).  Fills out[] and returns how many. */
static inline int mesh_heavy_stages(int pp, int out[3])
{
    int n = 0;
    out[n++] = 0;
    if (pp > 2)
        out[n++] = 1;
    if (pp > 1)
        out[n++] = pp - 1;
    return n;
}

#define MESH_GiB          1073741824.0
#define MESH_ARRAY_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

#endif
