/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The policy's values of their own shape (the K_CUSTOM rows of policy.c's
 * key tables): steps=, port_range=, gpu= and gpu.NAME.pci=.  Each reads one
 * value into its member of base (a mesh_policy_t, or for pci a
 * mesh_gpu_override_t) or returns -1 with err naming the key and the form
 * it takes.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "meshplan/parse.h"
#include "meshplan/policy.h"

/* steps=' words, for reading and for writing back (policy check) */
static const struct {
    const char *name;
    unsigned bit;
} names[] = {{"regular", MESH_STEP_REGULAR},
             {"batch", MESH_STEP_BATCH},
             {"interactive", MESH_STEP_INTERACTIVE},
             {"all", MESH_STEP_REGULAR | MESH_STEP_BATCH | MESH_STEP_INTERACTIVE}};

const char *mesh_policy_steps_text(unsigned mask, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    /* the single steps, not "all": the words an admin reads back one by one */
    for (int i = 0; i < MESH_ARRAY_LEN(names) - 1 && n < len; i++)
        if (mask & names[i].bit)
            n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "," : "", names[i].name);
    return buf;
}

int mesh_policy_read_steps(void *base, const char *key, const char *value, mesh_error_t *err)
{
    char buf[128];
    if (mesh_strlcpy(buf, value, sizeof(buf)) < 0)
        return mesh_error_set(err, "%s: value too long", key);
    unsigned mask = 0;
    char *save = NULL;
    for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        int found = 0;
        for (int i = 0; i < MESH_ARRAY_LEN(names); i++)
            if (strcasecmp(w, names[i].name) == 0) {
                mask |= names[i].bit;
                found = 1;
            }
        if (!found)
            return mesh_error_set(err, "%s: '%.20s' is not one of regular, batch, interactive, all",
                                  key, w);
    }
    if (!mask)
        return mesh_error_set(err, "%s: empty (use regular, batch, interactive or all)", key);
    ((mesh_policy_t *)base)->launch.steps = mask;
    return 0;
}

int mesh_policy_read_port_range(void *base, const char *key, const char *value, mesh_error_t *err)
{
    char lo[16], *dash = strchr(value, '-');
    long long a, b;
    if (!dash || (size_t)(dash - value) >= sizeof(lo))
        return mesh_error_set(err, "%s: '%.30s' is not LO-HI (e.g. 20000-29999)", key, value);
    memcpy(lo, value, (size_t)(dash - value));
    lo[dash - value] = '\0';
    if (mesh_parse_int(lo, "port_range low", 1024, 65535, &a, err) < 0 ||
        mesh_parse_int(dash + 1, "port_range high", 1024, 65535, &b, err) < 0)
        return -1;
    if (b < a)
        return mesh_error_set(err, "%s: %lld-%lld is empty (LO must not exceed HI)", key, a, b);
    mesh_policy_launch_t *l = &((mesh_policy_t *)base)->launch;
    l->port_lo = (int)a;
    l->port_hi = (int)b;
    return 0;
}

/* gpu=: a table name, or one the policy defines (gpu.NAME.*, in any order:
 * mesh_policy_check makes sure it is defined) */
int mesh_policy_read_gpu_name(void *base, const char *key, const char *value, mesh_error_t *err)
{
    mesh_assumptions_t *as = &((mesh_policy_t *)base)->assume;
    const mesh_gpu_t *g = mesh_gpu_find(value);
    if (!g && mesh_gpu_choices(value) > 1)
        return mesh_gpu_name_error(key, value, err);
    if (!g && (strlen(value) >= sizeof(as->gpu) || !*value ||
               strspn(value, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.") !=
                   strlen(value)))
        return mesh_gpu_lookup(value, &(mesh_gpu_t){0}, err);
    return mesh_strlcpy(as->gpu, g ? g->name : value, sizeof(as->gpu)), 0;
}

/* calibration=: an absolute path to meshplan calibrate's file, read now
 * (a policy that names a file it cannot read is refused as it is loaded,
 * not at a job's start); none: no calibration */
int mesh_policy_read_calibration(void *base, const char *key, const char *value, mesh_error_t *err)
{
    mesh_calibration_t *c = &((mesh_policy_t *)base)->assume.calibration;
    if (strcasecmp(value, "none") == 0)
        return memset(c, 0, sizeof(*c)), 0;
    if (value[0] != '/')
        return mesh_error_set(err, "%s: '%.60s' must be an absolute path (meshplan calibrate -o)",
                              key, value);
    return mesh_calib_load(value, c, err) < 0 ? mesh_error_prefix(err, "%s", key) : 0;
}

int mesh_policy_read_fp8(void *base, const char *key, const char *value, mesh_error_t *err)
{
    mesh_gpu_override_t *o = base;
    int yes;
    mesh_error_t ignored;
    if (strcasecmp(value, "blockwise") == 0)
        o->fp8 = MESH_GPU_FP8_BLOCKWISE;
    else if (strcasecmp(value, "mxfp8") == 0)
        o->fp8 = MESH_GPU_FP8_MXFP8;
    else if (mesh_parse_bool(value, key, &yes, &ignored) == 0)
        o->fp8 = yes ? MESH_GPU_FP8_YES : MESH_GPU_FP8_NO;
    else
        return mesh_error_set(err, "%s: '%.20s' is not one of yes, no, blockwise, mxfp8", key,
                              value);
    return 0;
}

int mesh_policy_read_pci(void *base, const char *key, const char *value, mesh_error_t *err)
{
    mesh_gpu_override_t *o = base;
    unsigned pv, pd;
    char end;
    if (sscanf(value, "%4x:%4x%c", &pv, &pd, &end) != 2 || strlen(value) != 9)
        return mesh_error_set(err, "%s: '%.20s' is not a PCI id VVVV:DDDD (e.g. 10de:2330)", key,
                              value);
    o->pci_vendor = pv;
    o->pci_device = pd;
    return 0;
}
