/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The spec's key table (lib/spec_keys.h) and what is written from it: the
 * enum names, the keys' dotted names, the controller's request
 * (mesh_spec_write) and the digest.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "spec_keys.h"

const struct key mesh_spec_keys[F_COUNT] = {
#define KEY_ROW(id, sec, nm, kd, member, lo, hi, ch, au, wh)                                       \
    {sec, nm, kd, offsetof(mesh_model_t, member), sizeof(((mesh_model_t *)0)->member), lo, hi,     \
     ch,  au, wh},
    SPEC_KEYS(KEY_ROW)
#undef KEY_ROW
};

/* Integers, booleans and enums are stored as int (or long), numbers as double. */
#define INT_MEMBER(id, sec, nm, kd, member, ...)                                                   \
    _Static_assert(kd == K_NUM || kd == K_NUMNONE || kd == K_COUNT || kd == K_STR ||               \
                       kd == K_PRESET || sizeof(((mesh_model_t *)0)->member) == sizeof(int) ||     \
                       sizeof(((mesh_model_t *)0)->member) == sizeof(long),                        \
                   "spec key " nm ": an int or a long");
SPEC_KEYS(INT_MEMBER)
#undef INT_MEMBER

const struct section mesh_spec_sections[MESH_SPEC_SECTIONS] = {
    {"arch", ""}, {"train", ""}, {"arch.moe", "arch"}, {"arch.mla", "arch"}};

/* "moe" of "arch.moe": a section's key in its parent. */
const char *mesh_spec_section_key(const struct section *s)
{
    return *s->parent ? s->name + strlen(s->parent) + 1 : s->name;
}

/* Whether section `sec` is `top` or one nested in it. */
int mesh_spec_in_section(const char *sec, const char *top)
{
    size_t n = strlen(top);
    return strncmp(sec, top, n) == 0 && (sec[n] == '\0' || sec[n] == '.');
}

const char *mesh_spec_choice(const char *const *choices, int i)
{
    for (int k = 0; choices && choices[k]; k++)
        if (k == i)
            return choices[k];
    return "?";
}

int mesh_spec_enum_parse(const char *const *choices, const char *s)
{
    for (int i = 0; choices && choices[i]; i++)
        if (strcasecmp(choices[i], s) == 0)
            return i;
    return -1;
}

const char *mesh_spec_choices_list(const char *const *choices, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; choices && choices[i] && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? " " : "", choices[i]);
    return buf;
}

/* The name of value v of enum key f, from its choices; `other` outside them. */
static const char *enum_name(int f, int v, const char *other)
{
    const char *n = mesh_spec_choice(mesh_spec_keys[f].choices, v);
    return strcmp(n, "?") == 0 ? other : n;
}

const char *mesh_precision_name(mesh_precision_t p)
{
    return enum_name(F_PREC, (int)p, "?");
}

const char *mesh_fp8_recipe_name(mesh_fp8_recipe_t r)
{
    return enum_name(F_FP8_RECIPE, (int)r, "?");
}

const char *mesh_framework_name(mesh_framework_t f)
{
    return enum_name(F_FRAMEWORK, (int)f, "?");
}

const char *mesh_optimizer_name(mesh_optimizer_t o)
{
    return enum_name(F_OPT, (int)o, "sgd");
}

const char *mesh_recompute_name(mesh_recompute_t r)
{
    return enum_name(F_RECOMPUTE, (int)r, "auto");
}

const char *mesh_mlp_name(mesh_mlp_t m)
{
    return enum_name(F_MLP, (int)m, "swiglu");
}

const char *mesh_finetune_name(mesh_finetune_t f)
{
    return enum_name(F_FINETUNE, (int)f, "full");
}

int mesh_recompute_parse(const char *s, mesh_recompute_t *out)
{
    if (strcasecmp(s, "auto") == 0) {
        *out = MESH_RECOMPUTE_AUTO;
        return 0;
    }
    int i = mesh_spec_enum_parse(mesh_spec_keys[F_RECOMPUTE].choices, s);
    if (i < 0)
        return -1;
    *out = (mesh_recompute_t)i;
    return 0;
}

/* Megatron-LM's names, in the order of their MESH_RC_* bits */
static const char *const rc_modules[] = {"core_attn", "layernorm", "mlp", "mla_up_proj"};

const char *mesh_recompute_modules_name(unsigned modules, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    if (modules == 0)
        modules = MESH_RC_CORE_ATTN;
    for (int i = 0; i < MESH_ARRAY_LEN(rc_modules); i++)
        if (modules & (1u << i)) {
            int n = snprintf(buf + used, len - used, "%s%s", used ? "+" : "", rc_modules[i]);
            if (n > 0 && (size_t)n < len - used)
                used += (size_t)n;
            else
                buf[used] = '\0'; /* snprintf wrote what fitted: the name goes whole */
        }
    return buf;
}

int mesh_recompute_modules_parse(const char *s, unsigned *out)
{
    *out = 0;
    while (*s) {
        size_t n = strcspn(s, "+");
        int found = -1;
        for (int i = 0; i < MESH_ARRAY_LEN(rc_modules); i++)
            if (strlen(rc_modules[i]) == n && strncmp(s, rc_modules[i], n) == 0)
                found = i;
        if (found < 0 || n == 0)
            return -1;
        *out |= 1u << found;
        s += n;
        if (*s == '+' && !*++s)
            return -1;
    }
    return *out ? 0 : -1;
}

int mesh_spec_valid_preset_name(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n >= MESH_NAME_MAX || name[0] == '.' || name[0] == '-')
        return 0;
    return strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

int mesh_spec_preset_file(const char *file, char name[MESH_NAME_MAX])
{
    size_t n = strlen(file);
    char stem[MESH_NAME_MAX];
    if (n <= 5 || n - 5 >= MESH_NAME_MAX || strcmp(file + n - 5, ".yaml") != 0)
        return 0;
    snprintf(stem, sizeof(stem), "%.*s", (int)(n - 5), file);
    if (!mesh_spec_valid_preset_name(stem))
        return 0;
    if (name)
        memcpy(name, stem, n - 4);
    return 1;
}

const char *mesh_spec_key_name(int i)
{
    /* "section.name", or ".name" for a top-level key (shown without its dot) */
#define DOTTED(id, sec, nm, ...) sec "." nm,
    static const char *const dotted[] = {SPEC_KEYS(DOTTED)};
#undef DOTTED
    /* preset is no key of a model: it names where the keys come from */
    int n = 0;
    for (int k = 0; k < F_COUNT; k++)
        if (mesh_spec_keys[k].kind != K_PRESET && n++ == i)
            return dotted[k] + (dotted[k][0] == '.');
    return NULL;
}

/* A key carried only when set, and not set here (0). */
/* An integer, boolean or enum key's value. */
static long long get_int(const mesh_model_t *m, const struct key *k)
{
    const char *p = (const char *)m + k->off;
    if (k->size == sizeof(long))
        return *(const long *)(const void *)p;
    return *(const int *)(const void *)p;
}

static int unset(const mesh_model_t *m, const struct key *k)
{
    if (k->when != WHEN_SET && k->when != BUDGET)
        return 0;
    if (k->kind == K_NUM || k->kind == K_NUMNONE || k->kind == K_COUNT)
        return *(const double *)(const void *)((const char *)m + k->off) == 0;
    return get_int(m, k) == 0;
}

/* Key k's value as the request writes it (enum and "auto" by name), or as
 * the digest hashes it (raw numbers). */
static void put_value(mesh_buf_t *b, const mesh_model_t *m, const struct key *k, int named)
{
    switch (k->kind) {
    case K_STR: mesh_buf_puts(b, (const char *)m + k->off); break;
    case K_PRESET: break;
    case K_NUM:
    case K_NUMNONE:
    case K_COUNT:
        mesh_buf_printf(b, "%.17g", *(const double *)(const void *)((const char *)m + k->off));
        break;
    default: {
        long long v = get_int(m, k);
        if (!named)
            mesh_buf_printf(b, "%lld", v);
        else if (k->auto_value != NO_AUTO && v == k->auto_value)
            mesh_buf_puts(b, "auto");
        else if (k->kind == K_BOOL)
            mesh_buf_puts(b, v ? "true" : "false");
        else if (k->kind == K_ENUM)
            mesh_buf_puts(b, mesh_spec_choice(k->choices, (int)v));
        else
            mesh_buf_printf(b, "%lld", v);
    }
    }
}

/* The depth of a section: 0 the top level, 1 arch, 2 arch.moe. */
static int section_depth(const char *sec)
{
    int d = *sec != '\0';
    for (const char *c = sec; *c; c++)
        d += *c == '.';
    return d;
}

/* The leading parts sections a and b share ("arch.moe" and "arch.mla": 1). */
static int shared_depth(const char *a, const char *b)
{
    int d = 0;
    while (*a && *b) {
        size_t na = strcspn(a, "."), nb = strcspn(b, ".");
        if (na != nb || strncmp(a, b, na) != 0)
            break;
        d++;
        a += na + (a[na] == '.');
        b += nb + (b[nb] == '.');
    }
    return d;
}

/* Write what takes the request's flow mappings from section `from` (NULL:
 * nothing written yet) to section `to`: closing the mappings `to` is not
 * in, then opening its own ("arch" to "arch.moe": ", moe: {"). */
static void spec_write_move(mesh_buf_t *b, const char *from, const char *to)
{
    if (from && strcmp(from, to) == 0) {
        mesh_buf_puts(b, ", ");
        return;
    }
    int shared = from ? shared_depth(from, to) : 0;
    for (int d = from ? section_depth(from) : 0; d > shared; d--)
        mesh_buf_puts(b, "}");
    if (from)
        mesh_buf_puts(b, ", ");
    const char *p = to;
    for (int d = 0; *p; d++) {
        size_t n = strcspn(p, ".");
        if (d >= shared)
            mesh_buf_printf(b, "%.*s: {", (int)n, p);
        p += n + (p[n] == '.');
    }
}

void mesh_spec_write(const mesh_model_t *m, mesh_buf_t *b)
{
    /* every key but preset: a request is complete in itself; the arch
     * section when there is one, fp8_recipe only under fp8 (it is an error
     * otherwise) */
    const char *open = NULL;
    mesh_buf_puts(b, "{");
    for (int i = 0; i < F_COUNT; i++) {
        const struct key *k = &mesh_spec_keys[i];
        if (k->kind == K_PRESET || (!m->has_arch && mesh_spec_in_section(k->section, "arch")) ||
            (k->when == WITH_FP8 && m->precision != MESH_PREC_FP8) || unset(m, k))
            continue;
        spec_write_move(b, open, k->section);
        open = k->section;
        mesh_buf_printf(b, "%s: ", k->name);
        put_value(b, m, k, 1);
    }
    for (int d = section_depth(open ? open : ""); d > 0; d--)
        mesh_buf_puts(b, "}");
    mesh_buf_puts(b, "}");
}

const char *mesh_model_digest(const mesh_model_t *m, char buf[17])
{
    /* every key but preset, in table order, and after the top-level ones
     * whether there is an arch */
    mesh_buf_t b;
    mesh_buf_init(&b);
    mesh_buf_puts(&b, "m2");
    for (int i = 0; i < F_COUNT; i++) {
        if (mesh_spec_keys[i].kind == K_PRESET || mesh_spec_keys[i].when == BUDGET ||
            unset(m, &mesh_spec_keys[i]))
            continue;
        if (i > 0 && !*mesh_spec_keys[i - 1].section && *mesh_spec_keys[i].section)
            mesh_buf_printf(&b, "|%d", m->has_arch);
        mesh_buf_puts(&b, "|");
        put_value(&b, m, &mesh_spec_keys[i], 0);
    }
    /* a digest of nothing rather than of a part, should memory run out */
    snprintf(buf, 17, "%016llx",
             (unsigned long long)mesh_fnv1a64(b.failed || !b.data ? "" : b.data));
    mesh_buf_free(&b);
    return buf;
}
