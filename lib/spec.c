/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The model spec: a strict libyaml event-API reader of meshplan-spec(5).
 *
 * Why the event API: it sees every anchor, alias, tag and nesting level as
 * it comes, so hostile input (alias bombs, deep nesting, huge scalars) is
 * refused before anything is built, and every error has its line.
 */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>
#include <yaml.h>

#include "internal.h"
#include "yamlread.h"
#include "meshplan/parse.h"
#include "meshplan/spec.h"
#include "spec_keys.h"

/* ---- reading ---- */

char *mesh_spec_read_file(const char *path, size_t *len, mesh_error_t *err)
{
    return mesh_read_regular_file(path, "spec", MESH_SPEC_MAX_BYTES, len, err);
}

static void model_defaults(mesh_model_t *m)
{
    memset(m, 0, sizeof(*m));
    m->mlp = MESH_MLP_SWIGLU;
    m->seq_len = 4096;
    m->global_batch = 512;
    m->micro_batch = 0;
    m->precision = MESH_PREC_BF16;
    m->fp8_recipe = MESH_FP8_DELAYED;
    m->grad_accum_dtype = MESH_PREC_FP32; /* mesh_spec_finish() sets the precision's default */
    m->optimizer = MESH_OPT_ADAMW;
    m->optimizer_dtype = MESH_PREC_FP32;
    m->framework = MESH_FW_AUTO;
    m->recompute = MESH_RECOMPUTE_AUTO;
    m->flash_attention = 1;
    m->dropout = 0.0;
}

/* The parser state of one document, or of a list of overrides. */
typedef struct reader {
    yaml_parser_t parser;
    const char *origin;
    spec_in_t *in;
    mesh_error_t *err;
    const char *given; /* where the keys it sets were given: in->path, or the overrides' origin */
} reader_t;

/* The line of a key that no file holds (an override): errors name its
 * origin alone, and in->line says 0. */
#define NO_LINE ((size_t)-1)

static int fail(reader_t *r, size_t line0, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(reader_t *r, size_t line0, const char *fmt, ...)
{
    char msg[MESH_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (line0 == NO_LINE)
        return mesh_error_set(r->err, "%s: %s", r->origin, msg);
    return mesh_error_set(r->err, "%s:%zu: %s", r->origin, line0 + 1, msg);
}

static int next_event(reader_t *r, yaml_event_t *ev)
{
    return mesh_yaml_next(&r->parser, ev, r->origin, r->err);
}

static const struct key *find_key(const char *section, const char *name)
{
    for (int i = 0; i < F_COUNT; i++)
        if (strcmp(mesh_spec_keys[i].section, section) == 0 &&
            strcmp(mesh_spec_keys[i].name, name) == 0)
            return &mesh_spec_keys[i];
    return NULL;
}

static const char *key_list(const char *section, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int i = 0; i < F_COUNT; i++) {
        if (strcmp(mesh_spec_keys[i].section, section) != 0)
            continue;
        if (buf[0])
            strncat(buf, ", ", len - strlen(buf) - 1);
        strncat(buf, mesh_spec_keys[i].name, len - strlen(buf) - 1);
    }
    for (int i = 0; i < MESH_SPEC_SECTIONS; i++)
        if (strcmp(mesh_spec_sections[i].parent, section) == 0) {
            strncat(buf, ", ", len - strlen(buf) - 1);
            strncat(buf, mesh_spec_section_key(&mesh_spec_sections[i]), len - strlen(buf) - 1);
        }
    return buf;
}

/* A key's member of the model. */
static void *member_of(mesh_model_t *m, const struct key *k)
{
    return (char *)m + k->off;
}

static void put_int(mesh_model_t *m, const struct key *k, long long v)
{
    if (k->size == sizeof(long))
        *(long *)member_of(m, k) = (long)v;
    else
        *(int *)member_of(m, k) = (int)v;
}

/* Store one scalar value into the member of key k. */
static int set_value(reader_t *r, const struct key *k, const char *dotted, const char *v,
                     size_t line)
{
    spec_in_t *in = r->in;
    mesh_model_t *m = &in->m;
    mesh_error_t e;
    long long iv = 0;
    double dv = 0;
    int bv = 0, id = (int)(k - mesh_spec_keys);
    char list[128];

    if (k->auto_value != NO_AUTO && strcasecmp(v, "auto") == 0) {
        put_int(m, k, k->auto_value);
        goto done;
    }
    const char *or_auto = k->auto_value != NO_AUTO ? " or auto" : "";
    switch (k->kind) {
    case K_STR:
    case K_PRESET:
        if (!mesh_spec_valid_preset_name(v))
            return fail(r, line,
                        "%s: '%.40s' is not a valid name (letters, digits, '.', '_', "
                        "'-'; at most %d characters)",
                        dotted, v, MESH_NAME_MAX - 1);
        if (k->kind == K_PRESET)
            mesh_strlcpy(in->preset, v, sizeof(in->preset));
        else
            mesh_strlcpy(member_of(m, k), v, k->size);
        break;
    case K_INT:
    case K_COUNT:
        if (mesh_parse_count(v, dotted, (long long)k->min, (long long)k->max, &iv, &e) < 0)
            return fail(r, line, "%s%s", e.msg, or_auto);
        if (k->kind == K_COUNT)
            *(double *)member_of(m, k) = (double)iv;
        else
            put_int(m, k, iv);
        break;
    case K_NUM:
    case K_NUMNONE:
        if (k->kind == K_NUMNONE && strcasecmp(v, "none") == 0)
            dv = 0;
        else if (mesh_parse_double(v, dotted, k->min, k->max, &dv, &e) < 0)
            return fail(r, line, "%s%s", e.msg, k->kind == K_NUMNONE ? " or none" : "");
        *(double *)member_of(m, k) = dv;
        break;
    case K_BOOL:
        if (mesh_parse_bool(v, dotted, &bv, &e) < 0)
            return fail(r, line, "%s", e.msg);
        put_int(m, k, bv);
        break;
    case K_ENUM:
        if ((iv = mesh_spec_enum_parse(k->choices, v)) < 0)
            return fail(r, line, "%s: '%.40s' is not one of: %s%s", dotted, v,
                        mesh_spec_choices_list(k->choices, list, sizeof(list)),
                        k->auto_value != NO_AUTO ? " auto" : "");
        put_int(m, k, iv);
        break;
    }
done:
    in->set[id] = 1;
    in->file[id] = r->given;
    in->line[id] = (int)line + 1; /* 0 for NO_LINE */
    return 0;
}

/* The section a dotted name is a key of ("train" of "train.seq_len",
 * "arch.moe" of "arch.moe.experts": the longest that prefixes it), or NULL. */
static const char *section_of(const char *dotted)
{
    const char *best = NULL;
    for (int i = 0; i < MESH_SPEC_SECTIONS; i++) {
        size_t n = strlen(mesh_spec_sections[i].name);
        if (strncmp(dotted, mesh_spec_sections[i].name, n) == 0 && dotted[n] == '.' &&
            (!best || n > strlen(best)))
            best = mesh_spec_sections[i].name;
    }
    return best;
}

/* The key a dotted name ("train.seq_len", "params") names, or NULL. */
static const struct key *find_dotted(const char *dotted)
{
    const char *section = section_of(dotted);
    if (!strchr(dotted, '.'))
        return find_key("", dotted);
    return section ? find_key(section, dotted + strlen(section) + 1) : NULL;
}

int mesh_spec_choice_of(const char *dotted, const char *word)
{
    const struct key *k = find_dotted(dotted); /* a key of no choices has none */
    return k ? mesh_spec_enum_parse(k->choices, word) : -1;
}

/* A key in the wrong section first ("arch.v_head_dim" is
 * arch.mla.v_head_dim, not a typo of arch.head_dim): the keys whose last
 * part is the word's, the nearest whole (the table's first of a tie);
 * else by the whole dotted name, else by its last part ("arch.seqlen" is
 * train.seq_len). */
const char *mesh_spec_key_closest(const char *dotted)
{
    if (!dotted)
        return NULL;
    const char *names[F_COUNT], *leaves[F_COUNT], *dot = strrchr(dotted, '.');
    const char *typed = dot ? dot + 1 : dotted, *meant = NULL;
    int n = 0, best = INT_MAX;
    for (const char *k; n < F_COUNT && (k = mesh_spec_key_name(n)); n++) {
        names[n] = k;
        leaves[n] = strrchr(k, '.') ? strrchr(k, '.') + 1 : k;
        int d = strcmp(leaves[n], typed) == 0 ? mesh_typo_distance(dotted, k) : INT_MAX;
        if (d < best) {
            meant = k;
            best = d;
        }
    }
    meant = meant ? meant : mesh_closest_name(dotted, names, n);
    const char *leaf = meant ? NULL : mesh_closest_name(typed, leaves, n);
    for (int i = 0; leaf && i < n; i++)
        if (leaves[i] == leaf)
            meant = names[i];
    return meant;
}

/* The error for a key the spec does not have, in a file or an override:
 * the keys its section allows, and the one a typo most likely meant. */
static int unknown_key(reader_t *r, size_t line, const char *name, const char *section)
{
    char list[512], dotted[2 * SCALAR_MAX + 2];
    snprintf(dotted, sizeof(dotted), "%s%s%s", section, *section ? "." : "", name);
    const char *meant = mesh_spec_key_closest(dotted);
    return fail(r, line, "unknown key '%.64s'%s%s (allowed: %s)%s%s%s", name,
                *section ? " in " : "", section, key_list(section, list, sizeof(list)),
                meant ? "; did you mean " : "", meant ? meant : "", meant ? "?" : "");
}

/* Read a mapping whose MAPPING_START was consumed; section "" is the top. */
static int read_mapping(reader_t *r, const char *section, int depth)
{
    unsigned char seen_section[MESH_SPEC_SECTIONS] = {0};
    for (;;) {
        yaml_event_t key, val;
        if (next_event(r, &key) < 0)
            return -1;
        if (key.type == YAML_MAPPING_END_EVENT) {
            yaml_event_delete(&key);
            return 0;
        }
        size_t line = key.start_mark.line;
        if (key.type != YAML_SCALAR_EVENT) {
            yaml_event_delete(&key);
            return fail(r, line, "expected a key%s%s", *section ? " in " : "", section);
        }
        char name[SCALAR_MAX + 1], dotted[2 * SCALAR_MAX + 2];
        mesh_strlcpy(name, (const char *)key.data.scalar.value, sizeof(name));
        yaml_event_delete(&key);
        snprintf(dotted, sizeof(dotted), "%s%s%s", section, *section ? "." : "", name);

        if (next_event(r, &val) < 0)
            return -1;
        int sec = -1;
        for (int i = 0; i < MESH_SPEC_SECTIONS; i++)
            if (strcmp(mesh_spec_sections[i].parent, section) == 0 &&
                strcmp(name, mesh_spec_section_key(&mesh_spec_sections[i])) == 0)
                sec = i;
        if (sec >= 0) {
            int is_map = val.type == YAML_MAPPING_START_EVENT;
            yaml_event_delete(&val);
            if (!is_map)
                return fail(r, line, "%s: expected a mapping of keys", dotted);
            if (seen_section[sec]++)
                return fail(r, line, "%s: given twice", dotted);
            if (depth >= 3)
                return fail(r, line, "%s: nested too deeply", dotted);
            if (read_mapping(r, mesh_spec_sections[sec].name, depth + 1) < 0)
                return -1;
            continue;
        }
        const struct key *k = find_key(section, name);
        if (!k) {
            yaml_event_delete(&val);
            return unknown_key(r, line, name, section);
        }
        if (val.type != YAML_SCALAR_EVENT) {
            yaml_event_delete(&val);
            return fail(r, line, "%s: expected a single value", dotted);
        }
        if (r->in->set[k - mesh_spec_keys]) {
            yaml_event_delete(&val);
            return fail(r, line, "%s: given twice", dotted);
        }
        char value[SCALAR_MAX + 1];
        mesh_strlcpy(value, (const char *)val.data.scalar.value, sizeof(value));
        yaml_event_delete(&val);
        if (value[0] == '\0')
            return fail(r, line, "%s: empty value", dotted);
        if (set_value(r, k, dotted, value, line) < 0)
            return -1;
    }
}

/* Parse one document into *in (fields not given keep their values). */
static int read_document(const char *buf, size_t len, const char *origin, spec_in_t *in,
                         mesh_error_t *err)
{
    reader_t r = {.origin = origin, .in = in, .err = err, .given = in->path};
    mesh_strlcpy(in->path, origin, sizeof(in->path));
    if (memchr(buf, '\0', len))
        return mesh_error_set(err, "%s: not a text file (contains NUL bytes)", origin);
    if (!yaml_parser_initialize(&r.parser))
        return mesh_error_set(err, "%s: out of memory", origin);
    yaml_parser_set_input_string(&r.parser, (const unsigned char *)buf, len);
    int rc = -1, state = 0; /* 0 stream start, 1 doc start, 2 top mapping, 3 done */
    while (state < 3) {
        size_t line;
        int t = mesh_yaml_next_type(&r.parser, origin, &line, err);
        if (t < 0)
            goto out;
        if (state == 0 && t == YAML_STREAM_START_EVENT)
            state = 1;
        else if (state == 1 && t == YAML_DOCUMENT_START_EVENT)
            state = 2;
        else if (state == 1 && t == YAML_STREAM_END_EVENT) {
            mesh_error_set(err, "%s: the spec is empty", origin);
            goto out;
        } else if (state == 2 && t == YAML_MAPPING_START_EVENT) {
            if (read_mapping(&r, "", 1) < 0 ||
                mesh_yaml_end(&r.parser, origin, "a spec holds one YAML document", err) < 0)
                goto out;
            state = 3;
        } else {
            /* fail() takes libyaml's 0-based line, the helper gives 1-based */
            fail(&r, line - 1, "a spec is a mapping of keys (name, preset, arch, params, train)");
            goto out;
        }
    }
    rc = 0;
out:
    yaml_parser_delete(&r.parser);
    return rc;
}

/* The preset of dirs a mistyped `name` most likely meant ("llama3-07b":
 * llama3-70b), into meant[len]: 1, or 0 when none is that near.  Only the
 * names of the directories' NAME.yaml files are read: at most 256 entries
 * of each directory, and 256 names in all (bounded work on a crowded
 * share). */
static int closest_preset(const mesh_spec_dirs_t *dirs, const char *name, char *meant, size_t len)
{
    enum { NAMES = 256 };
    char found[NAMES][MESH_NAME_MAX];
    const char *names[NAMES];
    int n = 0;
    for (int i = 0; dirs && i < MESH_ARRAY_LEN(dirs->dirs) && dirs->dirs[i]; i++) {
        DIR *d = opendir(dirs->dirs[i]);
        struct dirent *e;
        for (int k = 0; d && k < NAMES && (e = readdir(d)) && n < NAMES; k++)
            if (mesh_spec_preset_file(e->d_name, found[n])) {
                names[n] = found[n];
                n++;
            }
        if (d)
            closedir(d);
    }
    const char *best = mesh_closest_name(name, names, n);
    return best ? (snprintf(meant, len, "%s", best), 1) : 0;
}

/* Find a preset file for `name` in dirs; 0 and the path, or -1. */
static int preset_path(const char *name, const mesh_spec_dirs_t *dirs, char *path, size_t len,
                       mesh_error_t *err)
{
    if (!mesh_spec_valid_preset_name(name))
        return mesh_error_set(err,
                              "'%.64s' is not a preset name (letters, digits, '.', '_', '-') "
                              "nor a path to a .yaml file",
                              name);
    char tried[MESH_ERROR_MAX] = "";
    for (int i = 0; dirs && i < MESH_ARRAY_LEN(dirs->dirs) && dirs->dirs[i]; i++) {
        snprintf(path, len, "%s/%s.yaml", dirs->dirs[i], name);
        /* the effective uid decides: in slurmstepd the real one is root */
        if (faccessat(AT_FDCWD, path, R_OK, AT_EACCESS) == 0)
            return 0;
        if (tried[0])
            strncat(tried, ", ", sizeof(tried) - strlen(tried) - 1);
        strncat(tried, dirs->dirs[i], sizeof(tried) - strlen(tried) - 1);
    }
    char meant[MESH_NAME_MAX];
    int close = closest_preset(dirs, name, meant, sizeof(meant));
    return mesh_error_set(
        err, "unknown preset '%s' (looked in: %s; `meshplan presets` lists them)%s%s%s", name,
        tried[0] ? tried : "no preset directory", close ? "; did you mean " : "",
        close ? meant : "", close ? "?" : "");
}

/* Whether keys set (a document's or the overrides') change the arch, so
 * that a parameter count given with the old one no longer holds. */
static int changes_arch(const unsigned char set[F_COUNT])
{
    for (int i = 0; i < F_COUNT; i++)
        if (set[i] && (strcmp(mesh_spec_keys[i].section, "arch.moe") == 0 ||
                       strcmp(mesh_spec_keys[i].section, "arch.mla") == 0))
            return 1;
    return set[F_LAYERS] || set[F_HIDDEN] || set[F_HEADS] || set[F_KV_HEADS] || set[F_FFN] ||
           set[F_VOCAB] || set[F_MLP] || set[F_TIED] || set[F_MTP];
}

/* Apply overrides ("KEY=VALUE", KEY dotted) to *in, each read as the same
 * key of a file is; a key given twice among them is an error, as in a file. */
static int apply_sets(spec_in_t *in, const char *origin, const char *const *sets, int n,
                      mesh_error_t *err)
{
    reader_t r = {.origin = origin, .in = in, .err = err, .given = origin};
    unsigned char seen[F_COUNT] = {0};
    for (int i = 0; i < n; i++) {
        const char *eq = strchr(sets[i], '=');
        char dotted[2 * SCALAR_MAX + 2];
        if (!eq || eq == sets[i] || (size_t)(eq - sets[i]) >= sizeof(dotted))
            return fail(&r, NO_LINE, "'%.64s' is not KEY=VALUE", sets[i]);
        snprintf(dotted, sizeof(dotted), "%.*s", (int)(eq - sets[i]), sets[i]);
        const struct key *k = find_dotted(dotted);
        if (!k) {
            const char *section = section_of(dotted);
            return unknown_key(&r, NO_LINE, section ? dotted + strlen(section) + 1 : dotted,
                               section ? section : "");
        }
        if (k->kind == K_PRESET)
            return fail(&r, NO_LINE,
                        "preset: an override cannot change the preset (load it "
                        "as the spec, or name it in a file)");
        if (seen[k - mesh_spec_keys]++)
            return fail(&r, NO_LINE, "%s: given twice", dotted);
        if (!eq[1])
            return fail(&r, NO_LINE, "%s: empty value", dotted);
        if (strlen(eq + 1) > SCALAR_MAX)
            return fail(&r, NO_LINE, "%s: a value is longer than %d characters", dotted,
                        SCALAR_MAX);
        if (set_value(&r, k, dotted, eq + 1, NO_LINE) < 0)
            return -1;
    }
    /* a parameter count no longer holds when an override changed the arch */
    if (!seen[F_PARAMS] && changes_arch(seen))
        in->set[F_PARAMS] = 0;
    return 0;
}

/* Copy into base the keys `over` set (its preset is the base itself). */
static void apply_overrides(spec_in_t *base, const spec_in_t *over)
{
    for (int i = 0; i < F_COUNT; i++) {
        if (!over->set[i] || mesh_spec_keys[i].kind == K_PRESET)
            continue;
        memcpy(member_of(&base->m, &mesh_spec_keys[i]),
               (const char *)&over->m + mesh_spec_keys[i].off, mesh_spec_keys[i].size);
        base->set[i] = 1;
        base->file[i] = over->file[i];
        base->line[i] = over->line[i];
    }
}

static int load_preset(const char *name, const mesh_spec_dirs_t *dirs, spec_in_t *out,
                       mesh_error_t *err)
{
    char path[PATH_LEN];
    if (preset_path(name, dirs, path, sizeof(path), err) < 0)
        return -1;
    size_t len;
    char *buf = mesh_spec_read_file(path, &len, err);
    if (!buf)
        return -1;
    memset(out, 0, sizeof(*out));
    model_defaults(&out->m);
    int rc = read_document(buf, len, path, out, err);
    free(buf);
    if (rc == 0 && out->preset[0])
        rc = mesh_error_set(err, "%s: a preset cannot itself name a preset", path);
    if (rc == 0 && !out->set[F_NAME])
        mesh_strlcpy(out->m.name, name, sizeof(out->m.name));
    return rc;
}

/* Overrides to apply on top of a spec: origin names them in errors. */
typedef struct overrides {
    const char *origin;
    const char *const *sets;
    int n;
} overrides_t;

/* mesh_spec_parse, with overrides applied before the model is checked;
 * a document that gives no name: takes `name` (a preset's file, its
 * preset's name, as load_preset gives it), else the default. */
static int parse_with(const char *buf, size_t len, const char *origin, const char *name,
                      const mesh_spec_dirs_t *dirs, const overrides_t *ov, mesh_model_t *out,
                      mesh_error_t *err)
{
    spec_in_t *in = calloc(2, sizeof(spec_in_t));
    if (!in)
        return mesh_error_set(err, "%s: out of memory", origin);
    spec_in_t *file = &in[0], *base = &in[1], *user = file;
    model_defaults(&file->m);
    int rc = read_document(buf, len, origin, file, err);
    if (rc == 0 && name && !file->set[F_NAME])
        mesh_strlcpy(file->m.name, name, sizeof(file->m.name));
    if (rc == 0 && file->preset[0]) {
        if (!dirs) {
            rc = mesh_error_set(err, "%s:%d: preset: presets are not available here", origin,
                                file->line[F_PRESET]);
        } else if (load_preset(file->preset, dirs, base, err) < 0) {
            rc = mesh_error_prefix(err, "%s:%d: preset", origin, file->line[F_PRESET]);
        } else {
            apply_overrides(base, file);
            mesh_strlcpy(base->preset, file->preset, sizeof(base->preset));
            /* a count the preset gave no longer holds if the file changed the arch */
            if (!file->set[F_PARAMS] && changes_arch(file->set))
                base->set[F_PARAMS] = 0;
            file = base;
        }
    }
    if (rc == 0 && ov && ov->n > 0)
        rc = apply_sets(file, ov->origin, ov->sets, ov->n, err);
    if (rc == 0)
        rc = mesh_spec_finish(file, user, err);
    if (rc == 0)
        *out = file->m;
    free(in);
    return rc;
}

int mesh_spec_parse(const char *buf, size_t len, const char *origin, const mesh_spec_dirs_t *dirs,
                    mesh_model_t *out, mesh_error_t *err)
{
    return parse_with(buf, len, origin, NULL, dirs, NULL, out, err);
}

/* A Hugging Face config.json, by its name. */
static int is_json(const char *spec)
{
    size_t n = strlen(spec);
    return n > 5 && strcmp(spec + n - 5, ".json") == 0;
}

int mesh_spec_is_path(const char *spec)
{
    size_t n = strlen(spec);
    return strchr(spec, '/') || (n > 5 && strcmp(spec + n - 5, ".yaml") == 0) ||
           (n > 4 && strcmp(spec + n - 4, ".yml") == 0) || is_json(spec);
}

/* Into name, the name of the folder `path` is in (".../Meta-Llama-3-8B/
 * config.json"), where it is a valid preset name; else name is left as it
 * is.  Only the folder's own name is read, whatever the path's length. */
static void folder_name(const char *path, char name[MESH_NAME_MAX])
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return;
    const char *base = slash;
    while (base > path && base[-1] != '/')
        base--;
    /* a byte more than a name may have: a longer folder's is cut to a
     * length mesh_spec_valid_preset_name refuses */
    char folder[MESH_NAME_MAX + 1];
    snprintf(folder, sizeof(folder), "%.*s", (int)(slash - base), base);
    if (mesh_spec_valid_preset_name(folder))
        mesh_strlcpy(name, folder, MESH_NAME_MAX);
}

/* A Hugging Face config.json at `path`, translated (lib/hfconfig.c) and read
 * as a spec document with the overrides; named after its folder, else
 * "hf-model".  An error in the translated document names the config's
 * field it came from. */
static int parse_hf(const char *buf, size_t len, const char *path, const overrides_t *ov,
                    mesh_model_t *out, mesh_error_t *err)
{
    char name[MESH_NAME_MAX] = "hf-model";
    folder_name(path, name);
    const char *fields[MESH_HF_FIELDS_MAX];
    int lines = 0;
    mesh_buf_t doc;
    mesh_buf_init(&doc);
    if (mesh_hf_config_spec(buf, len, path, name, &doc, fields, &lines, err) < 0) {
        mesh_buf_free(&doc);
        return -1;
    }
    int rc = parse_with(doc.data, doc.len, path, NULL, NULL, ov, out, err);
    mesh_buf_free(&doc);
    /* "PATH:LINE: key: ..." of the translated document: the field instead */
    size_t n = strlen(path);
    int line = 0, at = 0;
    if (rc < 0 && err && strncmp(err->msg, path, n) == 0 &&
        sscanf(err->msg + n, ":%d: %n", &line, &at) == 1 && at > 0 && line >= 1 && line <= lines &&
        fields[line - 1]) {
        char rest[MESH_ERROR_MAX];
        mesh_strlcpy(rest, err->msg + n + (size_t)at, sizeof(rest));
        mesh_error_set(err, "%s: %s: %s", path, fields[line - 1], rest);
    }
    return rc;
}

int mesh_spec_load_with(const char *spec, const mesh_spec_dirs_t *dirs, const char *origin,
                        const char *const *sets, int n, mesh_model_t *out, mesh_error_t *err)
{
    overrides_t ov = {.origin = origin ? origin : "override", .sets = sets, .n = sets ? n : 0};
    if (!spec || !*spec)
        return mesh_error_set(err, "model: empty spec (give a preset name or a .yaml file)");
    char path[PATH_LEN];
    const char *name = spec; /* the preset's name: spec becomes its path */
    int preset = !mesh_spec_is_path(spec);
    if (preset) {
        if (preset_path(spec, dirs, path, sizeof(path), err) < 0)
            return -1;
        spec = path;
    }
    size_t len;
    char *buf = mesh_spec_read_file(spec, &len, err);
    if (!buf)
        return -1;
    /* a preset may not name another: it is read without the directories */
    int rc = !preset && is_json(spec) ? parse_hf(buf, len, spec, &ov, out, err)
                                      : parse_with(buf, len, spec, preset ? name : NULL,
                                                   preset ? NULL : dirs, &ov, out, err);
    free(buf);
    return rc;
}

int mesh_spec_load(const char *spec, const mesh_spec_dirs_t *dirs, mesh_model_t *out,
                   mesh_error_t *err)
{
    return mesh_spec_load_with(spec, dirs, NULL, NULL, 0, out, err);
}

const char *mesh_default_models_dir(void)
{
    return MESH_INSTALLED_MODELS_DIR;
}

void mesh_spec_dirs_make(mesh_spec_dirs_t *d, const char *const *first, int n)
{
    int k = 0;
    memset(d, 0, sizeof(*d));
    for (int i = 0; i < n && k < MESH_ARRAY_LEN(d->dirs) - 1; i++)
        if (first[i] && *first[i])
            d->dirs[k++] = first[i];
    d->dirs[k] = mesh_default_models_dir();
}
