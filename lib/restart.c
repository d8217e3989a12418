/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Restarts that keep their checkpoints (see restart.h): the saved layout
 * read back from a file or a line, the kept dimensions pinned, and what
 * changed explained (doc/design.md, "Restarts").
 *
 * The files are the user's and may be anything: they are read within
 * their length, JSON strictly (with Jansson), and every error names the
 * file (and the line, where there is one) and says what was expected.
 */
#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "meshplan/explain.h"
#include "meshplan/parse.h"
#include "meshplan/env.h"
#include "meshplan/restart.h"
#include "yamlread.h"

#define GPUS_MAX     (1L << 22)            /* the largest allocation mesh_plan_create plans */
#define PLAN_STR_MAX MESH_LAYOUT_PARSE_MAX /* what mesh_layout_parse reads */

#define EXPECTED                                                                                   \
    "expected meshplan plan --json, the value of $MESH_PLAN, or MESH_PLAN=... lines as meshplan "  \
    "env prints them"

#define EXPERT_DIMS (MESH_DIM_BIT(MESH_DIM_EP) | MESH_DIM_BIT(MESH_DIM_ETP))
#define ALL_DIMS    ((1u << MESH_DIM_COUNT) - 1)

/* The dimensions are the --mesh keys with one (lib/layout.c's table): their
 * key and field. */
static const char *dim_name(int d)
{
    return mesh_layout_key_of_dim(d)->key;
}

static int dim_value(const mesh_layout_t *l, int d)
{
    return mesh_layout_value(l, mesh_layout_key_of_dim(d));
}

static int *dim_field(mesh_layout_t *l, int d)
{
    return mesh_layout_field(l, mesh_layout_key_of_dim(d));
}

/* A dimension's size: ep and etp of a dense layout (0) mean 1. */
static int dim_size(const mesh_layout_t *l, int d)
{
    int v = dim_value(l, d);
    return (d == MESH_DIM_EP || d == MESH_DIM_ETP) && v < 1 ? 1 : v;
}

static int dim_find(const char *name)
{
    for (int d = 0; d < MESH_DIM_COUNT; d++)
        if (strcmp(name, dim_name(d)) == 0)
            return d;
    return -1;
}

/* The names of the dimensions in `bits`, in the table's order, `sep`
 * between them ("" for none). */
static const char *dim_names(unsigned bits, const char *sep, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int d = 0; d < MESH_DIM_COUNT; d++)
        if (bits & MESH_DIM_BIT(d) && n < len)
            n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? sep : "", dim_name(d));
    return buf;
}

/* "tp pp vpp cp dp ep etp zero": what the errors list. */
static const char *dim_list(char *buf, size_t len)
{
    return dim_names(ALL_DIMS, " ", buf, len);
}

/* The names of a keep set, comma-separated, or "none". */
static const char *keep_names(unsigned keep, char *buf, size_t len)
{
    if (!*dim_names(keep, ",", buf, len))
        snprintf(buf, len, "none");
    return buf;
}

/* ---- the saved layout ---- */

/* The levers written only where used: left out, they are off. */
static int levers(mesh_layout_t *l, mesh_error_t *err)
{
    if (l->offload == MESH_AUTO || (int)l->moments == MESH_AUTO || l->ep == MESH_AUTO ||
        l->etp == MESH_AUTO || l->tp_overlap_off == MESH_AUTO)
        return mesh_error_set(err, "'auto' in a saved layout: it is the one that ran, every "
                                   "field set");
    if (l->offload == MESH_FREE)
        l->offload = 0;
    if (l->tp_overlap_off == MESH_FREE)
        l->tp_overlap_off = 0;
    if ((int)l->moments == MESH_FREE)
        l->moments = MESH_PREC_FP32;
    if (l->ep == MESH_FREE && l->etp == MESH_FREE)
        l->ep = l->etp = 0; /* a dense model's layout */
    else if (l->ep == MESH_FREE || l->etp == MESH_FREE)
        *(l->ep == MESH_FREE ? &l->ep : &l->etp) = 1;
    if (l->recompute_layers == MESH_FREE)
        l->recompute_layers = 0;
    if (l->recompute_modules == MESH_FREE)
        l->recompute_modules = 0;
    return 0;
}

/* Parse a saved layout string into a complete layout, of at most GPUS_MAX GPUs. */
static int complete_layout(const char *s, mesh_layout_t *l, mesh_error_t *err)
{
    char missing[96] = "";
    if (mesh_layout_parse(s, l, err) < 0)
        return -1;
    /* the fields MESH_PLAN always writes (mesh_layout_format) */
    for (int i = 0; i < MESH_LAYOUT_KEYS; i++) {
        const mesh_layout_key_t *k = &mesh_layout_keys[i];
        int v = mesh_layout_value(l, k);
        if (!(k->flags & MK_FORMAT_ALWAYS))
            continue;
        if (v == MESH_AUTO)
            return mesh_error_set(err,
                                  "%s=auto in a saved layout: it is the one that ran, every "
                                  "field set",
                                  k->key);
        if (v == MESH_FREE)
            snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing), "%s%s",
                     missing[0] ? "," : "", k->key);
    }
    if (missing[0])
        return mesh_error_set(err,
                              "the layout '%.60s' lacks %s (MESH_PLAN and plan --json's "
                              "layout.mesh write every field)",
                              s, missing);
    if (levers(l, err) < 0)
        return -1;
    long world = 1;
    const int sizes[] = {l->tp, l->pp, l->cp, l->dp};
    for (int i = 0; i < MESH_ARRAY_LEN(sizes); i++) {
        world *= sizes[i]; /* each at most 2^24: no overflow before the cap */
        if (world > GPUS_MAX)
            return mesh_error_set(err,
                                  "tp*pp*cp*dp of '%.60s' is more than the %ld GPUs "
                                  "meshplan plans for",
                                  s, GPUS_MAX);
    }
    return 0;
}

/* ---- the JSON of plan --json and env --json ---- */

/* The string member `key` of obj (NULL: absent), a layout, into out. */
static int json_layout(const char *name, json_t *obj, const char *key, const char *what, char *out,
                       int *found, mesh_error_t *err)
{
    json_t *v = obj ? json_object_get(obj, key) : NULL;
    *found = v != NULL;
    if (!v)
        return 0;
    if (!json_is_string(v))
        return mesh_error_set(err,
                              "%.200s: %s: expected the layout as a string, as MESH_PLAN writes "
                              "it",
                              name, what);
    if (json_string_length(v) >= PLAN_STR_MAX)
        return mesh_error_set(err, "%.200s: %s: longer than %d characters", name, what,
                              PLAN_STR_MAX - 1);
    snprintf(out, PLAN_STR_MAX, "%s", json_string_value(v));
    return 0;
}

/* The whole-number member `key` of obj into *out (0: absent): a JSON
 * integer, or with in_string (env --json's values) a string holding one;
 * lo..2^30. */
static int json_count(const char *name, json_t *obj, const char *key, const char *what,
                      int in_string, long long lo, long *out, mesh_error_t *err)
{
    json_t *v = obj ? json_object_get(obj, key) : NULL;
    char text[32];
    long long n;
    *out = 0;
    if (!v)
        return 0;
    if (in_string ? !json_is_string(v) : !json_is_integer(v))
        return mesh_error_set(err, "%.200s: %s: expected %s", name, what,
                              in_string ? "a number in a string" : "a number");
    if (in_string)
        snprintf(text, sizeof(text), "%s", json_string_value(v));
    else
        snprintf(text, sizeof(text), "%lld", (long long)json_integer_value(v));
    if (mesh_parse_int(text, what, lo, 1 << 30, &n, err) < 0)
        return mesh_error_prefix(err, "%.200s", name);
    *out = (long)n;
    return 0;
}

/* Whether Jansson's error says the text stopped short: "... expected near
 * end of file", or "premature end of input" inside a string. */
static int truncated(const char *jansson_error)
{
    return strstr(jansson_error, "near end of file") != NULL ||
           strstr(jansson_error, "premature end of input") != NULL;
}

/* plan --json's layout.mesh or env --json's MESH_PLAN, with the global
 * batch and the model's shape where they are there.  Read with Jansson as
 * a config.json spec is (lib/hfconfig.c): strictly, a key given twice
 * refused, nesting bounded by Jansson itself. */
static int read_json(const char *text, size_t len, const char *name, mesh_restart_t *r,
                     mesh_error_t *err)
{
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return mesh_error_set(err, "%.200s:%d: not valid JSON: %s%s", name, je.line, je.text,
                              truncated(je.text) ? " (truncated?)" : "");
    json_t *layout = json_object_get(root, "layout"), *model = json_object_get(root, "model");
    layout = json_is_object(layout) ? layout : NULL;
    model = json_is_object(model) ? model : NULL;
    char plan[2][PLAN_STR_MAX];
    int mesh, env;
    long gbs_model, gbs_layout, gbs_env, layers, hidden, heads;
    int rc = -1; /* a params-only model's plan says 0 layers, hidden and heads: lo 0 */
    if (json_layout(name, layout, "mesh", "layout.mesh", plan[0], &mesh, err) == 0 &&
        json_layout(name, root, MESH_ENV_PLAN, MESH_ENV_PLAN, plan[1], &env, err) == 0 &&
        json_count(name, model, "global_batch", "model.global_batch", 0, 1, &gbs_model, err) == 0 &&
        json_count(name, layout, "global_batch", "layout.global_batch", 0, 1, &gbs_layout, err) ==
            0 &&
        json_count(name, root, MESH_ENV_GLOBAL_BATCH, MESH_ENV_GLOBAL_BATCH, 1, 1, &gbs_env, err) ==
            0 &&
        json_count(name, model, "layers", "model.layers", 0, 0, &layers, err) == 0 &&
        json_count(name, model, "hidden", "model.hidden", 0, 0, &hidden, err) == 0 &&
        json_count(name, model, "heads", "model.heads", 0, 0, &heads, err) == 0)
        rc = 0;
    json_decref(root);
    if (rc < 0)
        return -1;
    if (mesh && env)
        return mesh_error_set(err, "%.200s: both layout.mesh and MESH_PLAN: expected one layout",
                              name);
    if (!mesh && !env)
        return mesh_error_set(err,
                              "%.200s: a JSON object without a layout: expected meshplan plan "
                              "--json (its layout.mesh) or meshplan env --json (its MESH_PLAN)",
                              name);
    if (complete_layout(plan[env], &r->from, err) < 0)
        return mesh_error_prefix(err, "%.200s: %s", name, env ? MESH_ENV_PLAN : "layout.mesh");
    if (gbs_model && gbs_layout && gbs_model != gbs_layout)
        return mesh_error_set(err,
                              "%.200s: model.global_batch %ld and layout.global_batch %ld differ",
                              name, gbs_model, gbs_layout);
    r->global_batch = gbs_model ? gbs_model : gbs_layout ? gbs_layout : gbs_env;
    if (layers && hidden && heads) { /* a model with an arch */
        r->layers = (int)layers;
        r->hidden = (int)hidden;
        r->heads = (int)heads;
    }
    return 0;
}

/* ---- MESH_PLAN's value, or NAME=value lines ---- */

/* A value as a shell word: bare, or wholly in single or double quotes,
 * without the characters that would make it another word; into out[cap].
 * Returns 0, -1 where it is no one word, -2 where it is too long for out. */
static int unquote(const char *v, size_t n, char *out, size_t cap)
{
    const char *banned = " \t'\"\\$`";
    if (n >= 2 && (v[0] == '\'' || v[0] == '"') && v[n - 1] == v[0]) {
        banned = v[0] == '\'' ? "'" : "\"\\$`";
        v++;
        n -= 2;
    }
    for (size_t i = 0; i < n; i++)
        if (strchr(banned, v[i]))
            return -1;
    if (n == 0)
        return -1;
    if (n + 1 > cap) /* out holds the n bytes and their end */
        return -2;
    memcpy(out, v, n);
    out[n] = '\0';
    return 0;
}

typedef struct lines {
    const char *name;
    mesh_restart_t *r;
    mesh_error_t *err;
    int plan_line, gbs_line;
} lines_t;

/* A layout, bare or MESH_PLAN's value, on line `line`. */
static int line_layout(lines_t *x, int line, const char *s, const char *what)
{
    if (x->plan_line)
        return mesh_error_set(x->err, "%.200s:%d: a second layout (the first is on line %d): %s",
                              x->name, line, x->plan_line, EXPECTED);
    x->plan_line = line;
    /* a bare line that is no --mesh string at all is said to be no layout */
    if (!what && mesh_layout_parse(s, &x->r->from, x->err) < 0)
        what = "not a layout";
    if (complete_layout(s, &x->r->from, x->err) < 0)
        return what ? mesh_error_prefix(x->err, "%.200s:%d: %s", x->name, line, what)
                    : mesh_error_prefix(x->err, "%.200s:%d", x->name, line);
    return 0;
}

/* The length of NAME in NAME=value (an environment variable's name: no
 * lower-case letter), or 0 where b is no such line. */
static size_t assignment_name(const char *b, size_t n)
{
    size_t k = 0;
    while (k < n && (isupper((unsigned char)b[k]) || isdigit((unsigned char)b[k]) || b[k] == '_'))
        k++;
    return k > 0 && k < n && b[k] == '=' && !isdigit((unsigned char)b[0]) ? k : 0;
}

static int assignment(lines_t *x, int line, const char *b, size_t k, size_t n)
{
    char v[PLAN_STR_MAX];
    const char *value = b + k + 1;
    int plan = k == strlen(MESH_ENV_PLAN) && strncmp(b, MESH_ENV_PLAN, k) == 0,
        gbs = k == strlen(MESH_ENV_GLOBAL_BATCH) && strncmp(b, MESH_ENV_GLOBAL_BATCH, k) == 0;
    if (!plan && !gbs)
        return 0; /* another variable of an environment */
    int word = unquote(value, n - k - 1, v, sizeof(v));
    if (word == -2) /* NAME=value lines have no limit of their own */
        return mesh_error_set(x->err,
                              "%.200s:%d: %.*s's value is too long (%zu characters at most)",
                              x->name, line, (int)k, b, sizeof(v) - 1);
    if (word < 0)
        return mesh_error_set(x->err, "%.200s:%d: %.*s's value is not one word, bare or in quotes",
                              x->name, line, (int)k, b);
    if (plan)
        return line_layout(x, line, v, MESH_ENV_PLAN);
    if (x->gbs_line)
        return mesh_error_set(x->err, "%.200s:%d: %s given twice", x->name, line,
                              MESH_ENV_GLOBAL_BATCH);
    long long g;
    x->gbs_line = line;
    if (mesh_parse_int(v, MESH_ENV_GLOBAL_BATCH, 1, 1 << 30, &g, x->err) < 0)
        return mesh_error_prefix(x->err, "%.200s:%d", x->name, line);
    x->r->global_batch = (long)g;
    return 0;
}

static int read_line(lines_t *x, int line, const char *b, size_t n)
{
    while (n && (b[n - 1] == '\r' || b[n - 1] == ' ' || b[n - 1] == '\t'))
        n--;
    while (n && (*b == ' ' || *b == '\t'))
        b++, n--;
    if (!n || *b == '#')
        return 0;
    /* env --shell's lines for the variables a task is not given */
    if (n > 6 && strncmp(b, "unset", 5) == 0 && (b[5] == ' ' || b[5] == '\t'))
        return 0;
    if (n > 7 && strncmp(b, "export", 6) == 0 && (b[6] == ' ' || b[6] == '\t')) {
        for (b += 7, n -= 7; n && (*b == ' ' || *b == '\t'); b++, n--)
            ;
    }
    size_t k = assignment_name(b, n);
    if (k)
        return assignment(x, line, b, k, n);
    char v[PLAN_STR_MAX];
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)b[i] < 0x20 || (unsigned char)b[i] >= 0x7f)
            return mesh_error_set(x->err, "%.200s:%d: not text (byte 0x%02x): %s", x->name, line,
                                  (unsigned char)b[i], EXPECTED);
    if (n >= sizeof(v))
        return mesh_error_set(x->err, "%.200s:%d: a line of %zu characters is no layout: %s",
                              x->name, line, n, EXPECTED);
    memcpy(v, b, n);
    v[n] = '\0';
    return line_layout(x, line, v, NULL);
}

static int read_lines(const char *text, size_t len, const char *name, mesh_restart_t *r,
                      mesh_error_t *err)
{
    lines_t x = {.name = name, .r = r, .err = err};
    int line = 0;
    for (size_t i = 0; i < len; line++) {
        const char *b = text + i, *nl = memchr(b, '\n', len - i);
        size_t n = nl ? (size_t)(nl - b) : len - i;
        i += n + 1;
        if (read_line(&x, line + 1, b, n) < 0)
            return -1;
    }
    if (!x.plan_line)
        return mesh_error_set(err, "%.200s: no layout in it: %s", name, EXPECTED);
    return 0;
}

int mesh_restart_read(const char *text, size_t len, const char *name, mesh_restart_t *r,
                      mesh_error_t *err)
{
    memset(r, 0, sizeof(*r));
    if (len > MESH_RESTART_FILE_MAX)
        return mesh_error_set(err, "%.200s: larger than the %d-byte limit: %s", name,
                              MESH_RESTART_FILE_MAX, EXPECTED);
    const char *nul = len ? memchr(text, '\0', len) : NULL;
    if (nul)
        return mesh_error_set(err, "%.200s: binary data (a NUL byte at offset %ld): %s", name,
                              (long)(nul - text), EXPECTED);
    const char *p = text;
    if (len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) /* a byte-order mark, as editors write */
        p += 3;
    while (p < text + len && isspace((unsigned char)*p))
        p++;
    if (p == text + len)
        return mesh_error_set(err, "%.200s: empty: %s", name, EXPECTED);
    int rc = *p == '{' ? read_json(text, len, name, r, err) : read_lines(text, len, name, r, err);
    if (rc < 0)
        return -1;
    r->keep = MESH_RESTART_KEEP_DEFAULT & (r->from.ep > 0 ? ALL_DIMS : ~EXPERT_DIMS);
    return 0;
}

int mesh_restart_load(const char *path, mesh_restart_t *r, mesh_error_t *err)
{
    size_t len;
    memset(r, 0, sizeof(*r));
    char *text = mesh_read_regular_file(path, "saved layout", MESH_RESTART_FILE_MAX, &len, err);
    if (!text)
        return -1;
    int rc = mesh_restart_read(text, len, path, r, err);
    free(text);
    return rc;
}

/* ---- what is kept ---- */

/* The error for a word that is no dimension to keep. */
static int not_a_dim(const char *word, mesh_error_t *err)
{
    const char *names[MESH_DIM_COUNT];
    char list[64];
    dim_list(list, sizeof(list));
    for (int i = 0; i < MESH_LAYOUT_KEYS; i++) /* a key that shards no checkpoint */
        if (mesh_layout_keys[i].dim < 0 && strcmp(word, mesh_layout_keys[i].key) == 0)
            return mesh_error_set(err,
                                  "'%s' does not shard a checkpoint: it may change on any "
                                  "restart (dimensions that can be kept: %s)",
                                  word, list);
    if (strcmp(word, "none") == 0)
        return mesh_error_set(err, "'none' keeps nothing: give it alone");
    for (int d = 0; d < MESH_DIM_COUNT; d++)
        names[d] = dim_name(d);
    const char *meant = mesh_closest_name(word, names, MESH_DIM_COUNT);
    return mesh_error_set(err, "'%.20s' is not a dimension that can be kept%s%s%s (%s)", word,
                          meant ? "; did you mean " : "", meant ? meant : "", meant ? "?" : "",
                          list);
}

int mesh_restart_keep(mesh_restart_t *r, const char *names, mesh_error_t *err)
{
    char buf[128], list[64];
    if (!names || !*names)
        return mesh_error_set(err, "no dimension named (%s, or none)",
                              dim_list(list, sizeof(list)));
    if (mesh_strlcpy(buf, names, sizeof(buf)) < 0)
        return mesh_error_set(err, "longer than %d characters", (int)sizeof(buf) - 1);
    if (strcmp(buf, "none") == 0) {
        r->keep = 0;
        return 0;
    }
    size_t n = strlen(buf);
    if (buf[0] == ',' || buf[n - 1] == ',' || strstr(buf, ",,"))
        return mesh_error_set(err, "an empty field in '%s'", buf);
    unsigned keep = 0;
    char *save = NULL;
    for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        int d = dim_find(w);
        if (d < 0)
            return not_a_dim(w, err);
        if (keep & MESH_DIM_BIT(d))
            return mesh_error_set(err, "%s given twice", w);
        if ((MESH_DIM_BIT(d) & EXPERT_DIMS) && r->from.ep <= 0)
            return mesh_error_set(err,
                                  "%s: the saved layout has no experts (a dense model's): there "
                                  "is no %s to keep",
                                  w, w);
        keep |= MESH_DIM_BIT(d);
    }
    r->keep = keep;
    return 0;
}

/* The pins that conflict with r's kept dimensions (another value, or
 * auto), every one at once, so that one change frees them all: "mesh
 * tp=8,pp=auto conflicts with the kept tp=4,pp=4".  0, or -1 with err. */
static int kept_conflicts(const mesh_restart_t *r, const mesh_layout_t *pins, mesh_error_t *err)
{
    char pinned[128] = "", kept[128] = "", names[64], fix[96];
    unsigned autos = 0;
    int values = 0;
    for (int d = 0; d < MESH_DIM_COUNT; d++) {
        int v = dim_value(&r->from, d), pin = dim_value(pins, d);
        if (!(r->keep & MESH_DIM_BIT(d)) || pin == MESH_FREE || pin == v)
            continue;
        if (pin == MESH_AUTO) {
            autos |= MESH_DIM_BIT(d);
            mesh_list_add(pinned, sizeof(pinned), ",", "%s=auto", dim_name(d));
        } else {
            values++;
            mesh_list_add(pinned, sizeof(pinned), ",", "%s=%d", dim_name(d), pin);
        }
        mesh_list_add(kept, sizeof(kept), ",", "%s=%d", dim_name(d), v);
    }
    if (!pinned[0])
        return 0;
    if (!autos)
        snprintf(fix, sizeof(fix), "pin the same value%s", values > 1 ? "s" : "");
    else if (!values)
        snprintf(fix, sizeof(fix), "leave %s out", dim_names(autos, ",", names, sizeof(names)));
    else
        snprintf(fix, sizeof(fix), "pin the kept values");
    return mesh_error_set(err,
                          "mesh %s conflicts with the kept %s (the checkpoint's): %s, or keep less",
                          pinned, kept, fix);
}

int mesh_restart_pins(const mesh_restart_t *r, const mesh_model_t *m, mesh_layout_t *pins,
                      mesh_error_t *err)
{
    const char *expert = r->keep & MESH_DIM_BIT(MESH_DIM_EP) ? "ep" : "etp";
    if ((r->keep & EXPERT_DIMS) && !mesh_is_moe(m))
        return mesh_error_set(err,
                              "%s kept, but %s has no experts: only a MoE model's layout has ep "
                              "and etp",
                              expert, m->name);
    if ((r->keep & EXPERT_DIMS) && r->from.ep <= 0)
        return mesh_error_set(err,
                              "%s kept, but the saved layout has no experts (a dense model's) "
                              "and %s has: is the checkpoint this model's?",
                              expert, m->name);
    if (r->layers && m->has_arch &&
        (r->layers != m->layers || r->hidden != m->hidden || r->heads != m->heads))
        return mesh_error_set(err,
                              "the saved plan's model has %d layers, hidden %d and %d heads, %s "
                              "%d, %d and %d: the checkpoint is another model's",
                              r->layers, r->hidden, r->heads, m->name, m->layers, m->hidden,
                              m->heads);
    if (r->global_batch > 0 && r->global_batch != m->global_batch)
        return mesh_error_set(err,
                              "the saved run's global batch is %ld sequences and the spec's %ld: "
                              "a restart keeps the global batch constant (set "
                              "train.global_batch: %ld)",
                              r->global_batch, m->global_batch, r->global_batch);
    if (kept_conflicts(r, pins, err) < 0)
        return -1;
    for (int d = 0; d < MESH_DIM_COUNT; d++)
        if (r->keep & MESH_DIM_BIT(d))
            *dim_field(pins, d) = dim_value(&r->from, d);
    return 0;
}

/* The dimensions whose sizes differ between the saved layout and `to`. */
static unsigned changed_dims(const mesh_restart_t *r, const mesh_layout_t *to)
{
    unsigned changed = 0;
    for (int d = 0; d < MESH_DIM_COUNT; d++)
        if (dim_size(&r->from, d) != dim_size(to, d))
            changed |= MESH_DIM_BIT(d);
    return changed;
}

const char *mesh_restart_reshard(const mesh_restart_t *r, const mesh_layout_t *to, char *buf,
                                 size_t len)
{
    keep_names(changed_dims(r, to), buf, len);
    /* Megatron-FSDP's checkpoints are fsdp_dtensor, the others' torch_dist
     * (lib/accounting.c, mesh_zero_cause) */
    size_t n = strlen(buf);
    if ((r->from.zero >= 2) != (to->zero >= 2) && n < len)
        snprintf(buf + n, len - n, ",format");
    return buf;
}

const char *mesh_restart_kept(const mesh_restart_t *r, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int d = 0; d < MESH_DIM_COUNT; d++)
        if (r->keep & MESH_DIM_BIT(d) && n < len)
            n += (size_t)snprintf(buf + n, len - n, "%s%s=%d", n ? "," : "", dim_name(d),
                                  dim_value(&r->from, d));
    if (!buf[0])
        snprintf(buf, len, "none");
    return buf;
}

int mesh_restart_frees(const mesh_restart_t *r, const char *msg, const char *mesh, char *freed,
                       char *keep, char *pinned, size_t len)
{
    char text[MESH_LAYOUT_STR_MAX];
    mesh_layout_t named, given;
    mesh_error_t ignored;
    unsigned in_way = 0, pinned_too = 0;
    freed[0] = keep[0] = pinned[0] = '\0';
    if (strncmp(msg, "on ", 3) == 0 && strstr(msg, ": mesh "))
        msg = strstr(msg, ": mesh ") + 2;
    /* the pins the error names are --mesh's syntax: its parser reads them */
    size_t n = strncmp(msg, "mesh ", 5) == 0 ? strcspn(msg + 5, ": ") : sizeof(text);
    if (n >= sizeof(text))
        return 0;
    memcpy(text, msg + 5, n);
    text[n] = '\0';
    if (mesh_layout_parse(text, &named, &ignored) < 0)
        return 0;
    int have_mesh = mesh && mesh_layout_parse(mesh, &given, &ignored) == 0;
    for (int d = 0; d < MESH_DIM_COUNT; d++) {
        if (!(r->keep & MESH_DIM_BIT(d)) || dim_value(&named, d) == MESH_FREE)
            continue;
        in_way |= MESH_DIM_BIT(d);
        if (have_mesh && dim_value(&given, d) == dim_value(&r->from, d))
            pinned_too |= MESH_DIM_BIT(d);
    }
    if (!in_way)
        return 0;
    dim_names(in_way, ",", freed, len);
    keep_names(r->keep & ~in_way, keep, len);
    dim_names(pinned_too, ",", pinned, len);
    return 1;
}

/* ---- the one-line form ---- */

int mesh_restart_format(const mesh_restart_t *r, char *buf, size_t len, mesh_error_t *err)
{
    char keep[64], layout[MESH_LAYOUT_STR_MAX];
    if (len)
        buf[0] = '\0';
    if (r->keep & ~ALL_DIMS)
        return mesh_error_set(err, "restart: keep has bits beyond the %d dimensions",
                              MESH_DIM_COUNT);
    if (r->global_batch < 0 || r->layers < 0 || r->hidden < 0 || r->heads < 0)
        return mesh_error_set(err, "restart: a negative global batch or model size");
    int w = snprintf(buf, len, "keep=%s;batch=%ld;model=%d,%d,%d;%s",
                     keep_names(r->keep, keep, sizeof(keep)), r->global_batch, r->layers, r->hidden,
                     r->heads, mesh_layout_format(&r->from, layout, sizeof(layout)));
    if (w < 0 || (size_t)w >= len) {
        if (len)
            buf[0] = '\0';
        return mesh_error_set(err, "restart: the line needs %d bytes, not %zu", w + 1, len);
    }
    return 0;
}

/* The text of field `key` ("keep=", "batch=") at *s, up to ';', into out[cap]. */
static int field(const char **s, const char *key, char *out, size_t cap, mesh_error_t *err)
{
    size_t k = strlen(key);
    const char *semi = strncmp(*s, key, k) == 0 ? strchr(*s + k, ';') : NULL;
    if (!semi)
        return mesh_error_set(err,
                              "restart: expected %s...; in '%.60s' "
                              "(keep=DIMS;batch=N;model=L,H,A;LAYOUT)",
                              key, *s);
    size_t n = (size_t)(semi - *s) - k;
    if (n >= cap)
        return mesh_error_set(err, "restart: %s longer than %zu characters", key, cap - 1);
    memcpy(out, *s + k, n);
    out[n] = '\0';
    *s = semi + 1;
    return 0;
}

/* model=L,H,A: the saved model's layers, hidden and heads, all 0 or none. */
static int parse_model(char *text, mesh_restart_t *r, mesh_error_t *err)
{
    int *out[] = {&r->layers, &r->hidden, &r->heads}, n = 0;
    char *save = NULL;
    for (char *w = strtok_r(text, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        long long v;
        if (n == 3 || mesh_parse_int(w, "restart model", 0, 1 << 30, &v, err) < 0)
            return n == 3 ? mesh_error_set(err, "restart model: more than 3 numbers") : -1;
        *out[n++] = (int)v;
    }
    if (n != 3 ||
        (!r->layers || !r->hidden || !r->heads) != (!r->layers && !r->hidden && !r->heads))
        return mesh_error_set(err, "restart model: layers,hidden,heads, all 0 or none");
    return 0;
}

int mesh_restart_parse(const char *s, mesh_restart_t *r, mesh_error_t *err)
{
    char keep[128], batch[32], model[48];
    long long g;
    memset(r, 0, sizeof(*r));
    if (!s)
        return mesh_error_set(err, "restart: no line");
    if (strlen(s) >= MESH_RESTART_STR_MAX)
        return mesh_error_set(err, "restart: longer than %d characters", MESH_RESTART_STR_MAX - 1);
    if (field(&s, "keep=", keep, sizeof(keep), err) < 0 ||
        field(&s, "batch=", batch, sizeof(batch), err) < 0 ||
        field(&s, "model=", model, sizeof(model), err) < 0 || parse_model(model, r, err) < 0)
        return -1;
    if (complete_layout(s, &r->from, err) < 0)
        return mesh_error_prefix(err, "restart");
    if (mesh_parse_int(batch, "restart batch", 0, 1 << 30, &g, err) < 0)
        return -1;
    r->global_batch = (long)g;
    if (mesh_restart_keep(r, keep, err) < 0)
        return mesh_error_prefix(err, "restart keep");
    return 0;
}

/* ---- the explanation ---- */

/* What the text and the JSON say, computed once. */
typedef struct account {
    const mesh_model_t *m;
    const mesh_candidate_t *best;
    long gb, mbs_from;
    int fits, nodes_to_fit, gpus_per_node;
    char reshard[MESH_RESHARD_STR_MAX], kept[64];
} account_t;

/* A node count above the plan's on which its pins fit with dp free: the
 * next 16 counts, then steps of a quarter, up to 4 times the plan's nodes;
 * 0 if none does, or dp is kept (more nodes cannot keep it). */
static int nodes_to_fit(const mesh_restart_t *r, const mesh_plan_t *p)
{
    const mesh_alloc_t *a = mesh_plan_alloc(p);
    mesh_layout_t pins = *mesh_plan_pins_of(p);
    mesh_alloc_t on = *a;
    long cap = GPUS_MAX / a->gpus_per_node, top = 4L * a->nodes < cap ? 4L * a->nodes : cap;
    if (r->keep & MESH_DIM_BIT(MESH_DIM_DP))
        return 0;
    pins.dp = MESH_FREE;
    for (long n = a->nodes + 1; n <= top; n = n < a->nodes + 16 ? n + 1 : n + (n + 3) / 4) {
        on.nodes = (int)n;
        if (mesh_plan_any_fits(mesh_plan_model(p), &on, &pins, mesh_plan_assumptions(p)))
            return (int)n;
    }
    return 0;
}

static void account(const mesh_restart_t *r, const mesh_plan_t *p, account_t *x)
{
    memset(x, 0, sizeof(*x));
    x->m = mesh_plan_model(p);
    x->best = mesh_plan_best(p);
    x->gb = x->m->global_batch;
    x->mbs_from = mesh_layout_micro_batches(&r->from, r->global_batch ? r->global_batch : x->gb);
    x->fits = mesh_plan_fits(p);
    x->gpus_per_node = mesh_plan_alloc(p)->gpus_per_node;
    x->nodes_to_fit = x->fits ? 0 : nodes_to_fit(r, p);
    mesh_restart_reshard(r, &x->best->layout, x->reshard, sizeof(x->reshard));
    mesh_restart_kept(r, x->kept, sizeof(x->kept));
}

/* The plan's advice to free a kept dimension: its record, or NULL. */
static const mesh_advice_t *unkeep(const mesh_restart_t *r, const mesh_plan_t *p, int i)
{
    const mesh_advice_t *a = mesh_plan_advice_record(p, i);
    int d = a && a->kind == MESH_ADVICE_UNPIN ? dim_find(a->field) : -1;
    return d >= 0 && (r->keep & MESH_DIM_BIT(d)) ? a : NULL;
}

static void text_changed(const mesh_restart_t *r, const account_t *x, mesh_buf_t *b)
{
    int n = 0;
    unsigned changed = changed_dims(r, &x->best->layout);
    mesh_buf_puts(b, "  changed   ");
    for (int d = 0; d < MESH_DIM_COUNT; d++)
        if (changed & MESH_DIM_BIT(d))
            mesh_buf_printf(b, "%s%s %d -> %d", n++ ? ", " : "", dim_name(d), dim_size(&r->from, d),
                            dim_size(&x->best->layout, d));
    if (n)
        mesh_buf_printf(b, "; MESH_RESHARD=%s tells the training program to reshard %s on load\n",
                        x->reshard, mesh_noun(n, "it", "them"));
    else
        mesh_buf_puts(b, "nothing: MESH_RESHARD=none\n");
}

/* The global batch, kept: micro-batch x data-parallel x micro-batches, from -> to. */
static void text_batch(const mesh_restart_t *r, const account_t *x, mesh_buf_t *b)
{
    const mesh_layout_t *to = &x->best->layout;
    mesh_buf_printf(b,
                    "  global batch %ld %s%s, kept: micro-batch %d x %d data-parallel x %ld "
                    "%s per step (gradient accumulation), was %d x %d x %ld\n",
                    x->gb, mesh_noun(x->gb, "sequence", "sequences"),
                    r->global_batch ? "" : " (the spec's: the saved layout does not say its own)",
                    to->micro_batch, to->dp, x->best->micro_batches,
                    mesh_noun(x->best->micro_batches, "micro-batch", "micro-batches"),
                    r->from.micro_batch, r->from.dp, x->mbs_from);
}

static void text_nofit(const mesh_restart_t *r, const mesh_plan_t *p, const account_t *x,
                       mesh_buf_t *b)
{
    const mesh_memory_t *mem = &x->best->memory;
    mesh_buf_printf(b,
                    "  The %s layout cannot fit this allocation: the closest needs %s GiB per "
                    "GPU, of %s GiB usable.\n",
                    r->keep ? "kept" : "planned", mesh_gib_str(mem->total).s,
                    mesh_gib_str(mem->capacity).s);
    if (!r->keep)
        return; /* nothing kept: the plan's own advice says what would fit */
    if (x->nodes_to_fit)
        mesh_buf_printf(b, "  With %s kept it would fit on %d nodes (%ld GPUs).\n", x->kept,
                        x->nodes_to_fit, (long)x->nodes_to_fit * x->gpus_per_node);
    else if (!(r->keep & MESH_DIM_BIT(MESH_DIM_DP)))
        mesh_buf_printf(b, "  With %s kept it fits on no count up to %d nodes.\n", x->kept,
                        4 * mesh_plan_alloc(p)->nodes);
    for (int i = 0; i < mesh_plan_advice_count(p); i++) {
        const mesh_advice_t *a = unkeep(r, p, i);
        if (a)
            mesh_buf_printf(b,
                            "  Not keeping %s (at %d) would fit here, with %s %d: the "
                            "checkpoint would then be resharded in %s on load.\n",
                            a->field, a->pinned, a->field, a->value, a->field);
    }
}

char *mesh_restart_text(const mesh_restart_t *r, const mesh_plan_t *p)
{
    account_t x;
    mesh_buf_t b;
    char from[MESH_LAYOUT_STR_MAX];
    account(r, p, &x);
    mesh_buf_init(&b);
    mesh_buf_printf(&b, "Restart from %s\n", mesh_layout_format(&r->from, from, sizeof(from)));
    if (r->keep)
        mesh_buf_printf(&b, "  kept      %s (the checkpoint's sharding)\n", x.kept);
    else
        mesh_buf_puts(&b, "  kept      nothing (only what changed is reported)\n");
    text_changed(r, &x, &b);
    text_batch(r, &x, &b);
    if (!x.fits)
        text_nofit(r, p, &x, &b);
    return mesh_buf_take(&b);
}

static void json_from_to(mesh_buf_t *b, const char *key, long from, long to)
{
    mesh_buf_printf(b, ",\"%s\":{\"from\":%ld,\"to\":%ld}", key, from, to);
}

char *mesh_restart_json(const mesh_restart_t *r, const mesh_plan_t *p)
{
    account_t x;
    mesh_buf_t b;
    char from[MESH_LAYOUT_STR_MAX];
    const mesh_layout_t *to;
    int n = 0;
    account(r, p, &x);
    to = &x.best->layout;
    mesh_buf_init(&b);
    mesh_buf_puts(&b, "{\"from\":");
    mesh_buf_json_string(&b, mesh_layout_format(&r->from, from, sizeof(from)));
    mesh_buf_puts(&b, ",\"keep\":[");
    for (int d = 0; d < MESH_DIM_COUNT; d++)
        if (r->keep & MESH_DIM_BIT(d))
            mesh_buf_printf(&b, "%s\"%s\"", n++ ? "," : "", dim_name(d));
    mesh_buf_printf(&b, "],\"kept\":\"%s\",\"reshard\":\"%s\",\"changed\":[", x.kept, x.reshard);
    n = 0;
    for (int d = 0; d < MESH_DIM_COUNT; d++)
        if (changed_dims(r, to) & MESH_DIM_BIT(d))
            mesh_buf_printf(&b, "%s{\"dim\":\"%s\",\"from\":%d,\"to\":%d}", n++ ? "," : "",
                            dim_name(d), dim_size(&r->from, d), dim_size(to, d));
    mesh_buf_printf(&b, "],\"global_batch\":%ld,\"global_batch_saved\":", x.gb);
    mesh_buf_printf(&b, r->global_batch ? "%ld" : "null", r->global_batch);
    json_from_to(&b, "micro_batch", r->from.micro_batch, to->micro_batch);
    json_from_to(&b, "data_parallel", r->from.dp, to->dp);
    json_from_to(&b, "micro_batches", x.mbs_from, x.best->micro_batches);
    mesh_buf_printf(&b, ",\"fits\":%s,\"nodes_to_fit\":", x.fits ? "true" : "false");
    mesh_buf_printf(&b, x.nodes_to_fit ? "%d" : "null", x.nodes_to_fit);
    mesh_buf_puts(&b, ",\"unkeep\":[");
    n = 0;
    for (int i = 0; i < mesh_plan_advice_count(p); i++) {
        const mesh_advice_t *a = unkeep(r, p, i);
        if (a)
            mesh_buf_printf(&b, "%s{\"dim\":\"%s\",\"kept\":%d,\"value\":%d}", n++ ? "," : "",
                            a->field, a->pinned, a->value);
    }
    mesh_buf_puts(&b, "]}");
    return mesh_buf_take(&b);
}

int mesh_restart_from_env(const char *plan, const char *global_batch, mesh_restart_t *r,
                          mesh_error_t *err)
{
    char text[MESH_RESTART_STR_MAX + 64];
    if (!plan)
        return mesh_error_set(err, "no %s: the previous run's layout is not in the environment",
                              MESH_ENV_PLAN);
    int n = snprintf(text, sizeof(text), "%s=%s\n", MESH_ENV_PLAN, plan);
    if (global_batch && n > 0 && (size_t)n < sizeof(text))
        snprintf(text + n, sizeof(text) - (size_t)n, "%s=%s\n", MESH_ENV_GLOBAL_BATCH,
                 global_batch);
    return mesh_restart_read(text, strlen(text), MESH_ENV_PLAN, r, err);
}
