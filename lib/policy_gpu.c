/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The policy's GPUs and allocations: a GPU of the table as the policy's
 * gpu.NAME. overrides price it, or one the admin defines; found by name or
 * by the PCI id a node shows; listed for `meshplan gpus`; and the
 * allocation a front end plans on (mesh_policy_alloc), with the usable
 * memory and the partition's entry.  Above the policy reader (policy.c),
 * whose key table says what an override replaces.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "meshplan/policy.h"

/* The overrides whose gpu.NAME.pci is this PCI id, or NULL; as may be NULL. */
static const mesh_gpu_override_t *override_of_pci(const mesh_assumptions_t *as, unsigned vendor,
                                                  unsigned device)
{
    for (int i = 0; as && i < as->n_gpu_overrides; i++)
        if (as->gpu_overrides[i].pci_vendor == vendor && as->gpu_overrides[i].pci_device == device)
            return &as->gpu_overrides[i];
    return NULL;
}

/* A GPU the admin defines (gpu.NAME.memory and .peak_tflops; mesh_policy_check
 * wants .pci and .island too), priced like the default GPU where the policy
 * says nothing.  What the default GPU is, not what it is priced at, stays
 * out: its PCI ids, its NVLink (island 1 in a policy nobody checked, else
 * gpu.NAME.island) and its FP8, which a plan would otherwise use on a GPU
 * that has none (gpu.NAME.fp8 gives it back). */
static void defined_gpu(const mesh_gpu_override_t *o, mesh_gpu_t *out)
{
    *out = *mesh_gpu_default();
    mesh_strlcpy(out->name, o->name, sizeof(out->name));
    out->vendor_id = o->pci_vendor;
    memset(out->devices, 0, sizeof(out->devices));
    out->devices[0] = (unsigned short)o->pci_device;
    out->island = 1;
    out->peak_fp8 = 0;
    out->fp8_blocks = 0;
}

int mesh_policy_resolve_gpu(const mesh_assumptions_t *assume, const char *name, unsigned vendor,
                            unsigned device, mesh_gpu_t *out, mesh_error_t *err)
{
    /* the admin's entry: by name, or the one whose gpu.NAME.pci is this id */
    const mesh_gpu_override_t *o =
        name ? mesh_policy_override_of(assume, name) : override_of_pci(assume, vendor, device);
    /* the table's model: by name; by PCI id, the one the admin's entry
     * names, else the table's own for the id */
    const mesh_gpu_t *m = mesh_gpu_find(name ? name : o ? o->name : NULL);
    if (!m && !name)
        m = mesh_gpu_find_pci(vendor, device);
    if (m)
        *out = *m;
    else if (o && o->memory > 0 && o->peak_flops > 0)
        defined_gpu(o, out);
    else if (name)
        return mesh_gpu_lookup(name, out, err);
    else
        return mesh_error_set(err,
                              "PCI %04x:%04x is not in the GPU table: name it in the policy "
                              "(gpu.NAME.pci=%04x:%04x with memory= and peak_tflops=, or the "
                              "name of a known model)",
                              vendor, device, vendor, device);
    if (assume)
        mesh_policy_apply_gpu(assume, out);
    return 0;
}

/* The i-th GPU the policy defines (a name the table does not know, with a
 * memory and a peak), or NULL; as may be NULL. */
static const mesh_gpu_override_t *defined_at(const mesh_assumptions_t *as, int i)
{
    for (int k = 0; as && k < as->n_gpu_overrides; k++) {
        const mesh_gpu_override_t *o = &as->gpu_overrides[k];
        if (!mesh_gpu_find(o->name) && o->memory > 0 && o->peak_flops > 0 && i-- == 0)
            return o;
    }
    return NULL;
}

int mesh_policy_gpu_count(const mesh_assumptions_t *assume)
{
    int n = mesh_gpu_count();
    while (defined_at(assume, n - mesh_gpu_count()))
        n++;
    return n;
}

int mesh_policy_gpu_at(const mesh_assumptions_t *assume, int i, mesh_gpu_t *out)
{
    const mesh_gpu_t *t = mesh_gpu_at(i);
    const mesh_gpu_override_t *o = t || i < 0 ? NULL : defined_at(assume, i - mesh_gpu_count());
    mesh_gpu_t g;
    if (t)
        g = *t;
    else if (o)
        defined_gpu(o, &g);
    else
        return -1;
    if (assume)
        mesh_policy_apply_gpu(assume, &g);
    *out = g;
    return o ? MESH_GPU_DEFINED : memcmp(&g, t, sizeof(g)) ? MESH_GPU_OVERRIDDEN : MESH_GPU_TABLE;
}

int mesh_policy_gpu(const mesh_assumptions_t *assume, const char *name, mesh_gpu_t *out,
                    mesh_error_t *err)
{
    return mesh_policy_resolve_gpu(assume, name, 0, 0, out, err);
}

double mesh_policy_usable(const mesh_assumptions_t *assume, const mesh_gpu_t *gpu)
{
    return gpu->memory * (1 - assume->reserve) * (1 - assume->headroom);
}

int mesh_policy_alloc(const mesh_assumptions_t *assume, const char *gpu, double gpu_mem, int island,
                      int nodes, int gpus_per_node, mesh_alloc_t *out, mesh_error_t *err)
{
    memset(out, 0, sizeof(*out));
    if (!gpu && assume->gpu[0])
        gpu = assume->gpu;
    if (gpu) {
        if (mesh_policy_gpu(assume, gpu, &out->gpu, err) < 0)
            return -1;
    } else {
        /* memory alone: a generic GPU priced like the default one */
        out->gpu = *mesh_gpu_default();
        mesh_strlcpy(out->gpu.name, MESH_GPU_GENERIC, sizeof(out->gpu.name));
        if (gpu_mem <= 0)
            gpu_mem = assume->gpu_mem;
        if (gpu_mem <= 0)
            return mesh_error_set(err, "the GPU is unknown: give --gpu NAME or --gpu-mem SIZE "
                                       "(admins: gpu= or gpu_mem= in the policy)");
        mesh_policy_apply_gpu(assume, &out->gpu);
    }
    if (gpu_mem > 0)
        out->gpu.memory = gpu_mem;
    out->nodes = nodes;
    out->gpus_per_node = gpus_per_node;
    out->island = island > 0 ? island : out->gpu.island;
    /* an island given smaller than the GPU's is where its NVLink stops:
     * --nvlink 4 on GB200 keeps TP to the tray (mesh_nvlink_fabric) */
    if (island > 0 && island < out->gpu.island)
        out->gpu.island = island;
    if (out->island > gpus_per_node)
        out->island = gpus_per_node;
    return 0;
}

const mesh_partition_t *mesh_policy_partition(const mesh_policy_t *p, const char *name)
{
    const mesh_policy_controller_t *c = &p->controller;
    /* a job's list names its first: the partition the controller sizes
     * such a job on (it judges the fit on each, passing one name) */
    size_t k = (size_t)mesh_first_partition_len(name);
    for (int i = 0; name && i < c->n_partitions; i++)
        if (strncmp(c->partitions[i].name, name, k) == 0 && c->partitions[i].name[k] == '\0')
            return &c->partitions[i];
    for (int i = 0; i < c->n_partitions; i++) /* the admin's catch-all */
        if (strcmp(c->partitions[i].name, "default") == 0)
            return &c->partitions[i];
    return NULL;
}

/* Whether the policy has an entry for `name`, a catch-all, or no
 * partitions at all (the site's gpu= then stands for every one); else the
 * error, with the entry a slip of case or a typo most likely meant. */
static int partition_known(const mesh_policy_t *p, const char *name, mesh_error_t *err)
{
    const mesh_policy_controller_t *c = &p->controller;
    const char *names[MESH_PARTITIONS_MAX];
    char list[256] = "";
    if (mesh_policy_partition(p, name))
        return 0;
    for (int i = 0; i < c->n_partitions; i++) {
        names[i] = c->partitions[i].name;
        snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "", names[i]);
    }
    if (c->n_partitions == 0) /* one GPU for the whole site (gpu=): any name is planned on it */
        return 0;
    const char *meant = mesh_closest_name(name, names, c->n_partitions);
    return mesh_error_set(err, "unknown partition '%.40s' (the policy's: %s)%s%s%s", name, list,
                          meant ? "; did you mean " : "", meant ? meant : "", meant ? "?" : "");
}

int mesh_policy_partitions_known(const mesh_policy_t *p, const char *names, mesh_error_t *err)
{
    char buf[1024]; /* a job's partition list, as Slurm takes it */
    if (!names || !*names)
        return 0;
    if (mesh_strlcpy(buf, names, sizeof(buf)) < 0)
        return mesh_error_set(err, "partition list longer than %d characters",
                              (int)sizeof(buf) - 1);
    char *save = NULL;
    for (char *n = strtok_r(buf, ",", &save); n; n = strtok_r(NULL, ",", &save))
        if (partition_known(p, n, err) < 0)
            return -1;
    return 0;
}
