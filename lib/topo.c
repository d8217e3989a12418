/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The node's GPUs, islands and NUMA locality, from hwloc 2.x.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hwloc.h>

#include "internal.h"
#include "meshplan/topo.h"

struct mesh_topo {
    int n;
    mesh_topo_gpu_t gpu[MESH_TOPO_MAX_GPUS];
    int n_islands, numa;
    char links[32];
};

static int is_gpu(hwloc_obj_t o)
{
    if (o->type != HWLOC_OBJ_PCI_DEVICE)
        return 0;
    unsigned cls = o->attr->pcidev.class_id, vendor = o->attr->pcidev.vendor_id;
    /* display controllers (VGA 0300, 3D 0302, other 0380) and processing
     * accelerators (12xx) from the GPU vendors; NVSwitches are bridges (0680) */
    return (vendor == 0x10de || vendor == 0x1002) && ((cls >> 8) == 0x03 || (cls >> 8) == 0x12);
}

/* The PCI device an object of a distance matrix stands for (OS devices
 * such as "nvml0" or "rsmi0" hang under theirs); NULL for CPU-side objects. */
static hwloc_obj_t pci_of(hwloc_obj_t o)
{
    while (o && o->type == HWLOC_OBJ_OS_DEVICE)
        o = o->parent;
    return o && o->type == HWLOC_OBJ_PCI_DEVICE ? o : NULL;
}

static int index_of(const mesh_topo_t *t, hwloc_obj_t pci)
{
    char busid[16];
    if (!pci)
        return -1;
    snprintf(busid, sizeof(busid), "%04x:%02x:%02x.%01x", pci->attr->pcidev.domain,
             pci->attr->pcidev.bus, pci->attr->pcidev.dev, pci->attr->pcidev.func);
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->gpu[i].busid, busid) == 0)
            return i;
    return -1;
}

static void locality(hwloc_topology_t topo, hwloc_obj_t pci, mesh_topo_gpu_t *g)
{
    hwloc_obj_t cpu = hwloc_get_non_io_ancestor_obj(topo, pci);
    g->numa = -1;
    g->cpus[0] = '\0';
    if (!cpu)
        return;
    hwloc_bitmap_list_snprintf(g->cpus, sizeof(g->cpus), cpu->cpuset);
    /* its NUMA node: the one node whose CPUs include those the GPU hangs
     * under (a package, or an L3 on AMD); none when it hangs under several */
    hwloc_obj_t nodes[8];
    unsigned nr = MESH_ARRAY_LEN(nodes);
    struct hwloc_location loc = {.type = HWLOC_LOCATION_TYPE_OBJECT, .location.object = cpu};
    if (hwloc_get_local_numanode_objs(topo, &loc, &nr, nodes,
                                      HWLOC_LOCAL_NUMANODE_FLAG_LARGER_LOCALITY) == 0 &&
        nr == 1)
        g->numa = (int)nodes[0]->os_index;
}

/* hwloc's CUDA backend reports the memory in KiB on the GPU's OS device. */
static double reported_memory(hwloc_obj_t pci)
{
    for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling) {
        const char *kib = hwloc_obj_get_info_by_name(c, "CUDAGlobalMemorySize");
        if (kib)
            return strtod(kib, NULL) * 1024;
    }
    return 0;
}

/* Islands from a bandwidth matrix: GPUs linked directly, or through
 * NVSwitches (non-GPU PCI objects), are one island; links through CPUs
 * (POWER's NVLink to the host) do not join islands. */
static int islands_from(hwloc_topology_t topo, mesh_topo_t *t, const char *name)
{
    struct hwloc_distances_s *d;
    unsigned nr = 1;
    if (hwloc_distances_get_by_name(topo, name, &nr, &d, 0) < 0 || nr == 0)
        return 0;
    unsigned n = d->nbobjs;
    int *comp = malloc(sizeof(int) * n), *gpu = malloc(sizeof(int) * n);
    int *fabric = malloc(sizeof(int) * n), found = 0;
    if (!comp || !gpu || !fabric)
        goto out;
    for (unsigned i = 0; i < n; i++) {
        hwloc_obj_t pci = pci_of(d->objs[i]);
        gpu[i] = index_of(t, pci);
        fabric[i] = pci != NULL; /* GPUs and switches carry links; CPUs do not */
        comp[i] = (int)i;
        if (gpu[i] >= 0)
            found = 1;
    }
    /* union-find over the links, to a fixed point (n is small) */
    for (int changed = 1; changed;) {
        changed = 0;
        for (unsigned i = 0; i < n; i++)
            for (unsigned j = 0; j < n; j++)
                if (i != j && fabric[i] && fabric[j] && d->values[i * n + j] > 0 &&
                    comp[j] < comp[i]) {
                    comp[i] = comp[j];
                    changed = 1;
                }
    }
    if (found) {
        /* number islands in the bus order of their first GPU */
        for (int g = 0; g < t->n; g++)
            t->gpu[g].island = -1;
        t->n_islands = 0;
        for (int g = 0; g < t->n; g++) {
            if (t->gpu[g].island >= 0)
                continue;
            int c = -1;
            for (unsigned i = 0; i < n; i++)
                if (gpu[i] == g)
                    c = comp[i];
            int id = t->n_islands++;
            for (unsigned i = 0; c >= 0 && i < n; i++)
                if (gpu[i] >= 0 && comp[i] == c)
                    t->gpu[gpu[i]].island = id;
            t->gpu[g].island = id; /* a GPU absent from the matrix is alone */
        }
        mesh_strlcpy(t->links, name, sizeof(t->links));
    }
out:
    free(comp);
    free(gpu);
    free(fabric);
    hwloc_distances_release(topo, d);
    return found;
}

/* Without a matrix, the table's rule: parts whose usual node is one
 * all-to-all island are one island here too, the others have none. */
static void islands_by_rule(mesh_topo_t *t)
{
    t->n_islands = 0;
    int shared = -1;
    for (int g = 0; g < t->n; g++) {
        const mesh_gpu_t *m = mesh_gpu_find_pci(t->gpu[g].vendor_id, t->gpu[g].device_id);
        if (m && m->island > 1) {
            if (shared < 0)
                shared = t->n_islands++;
            t->gpu[g].island = shared;
        } else {
            t->gpu[g].island = t->n_islands++;
        }
    }
    mesh_strlcpy(t->links, "rule", sizeof(t->links));
}

static int read_gpus(hwloc_topology_t topo, mesh_topo_t *t, mesh_error_t *err)
{
    for (hwloc_obj_t o = NULL; (o = hwloc_get_next_pcidev(topo, o));) {
        if (!is_gpu(o))
            continue;
        if (t->n == MESH_TOPO_MAX_GPUS)
            return mesh_error_set(err, "topology: more than %d GPUs in one node",
                                  MESH_TOPO_MAX_GPUS);
        mesh_topo_gpu_t *g = &t->gpu[t->n++];
        memset(g, 0, sizeof(*g));
        snprintf(g->busid, sizeof(g->busid), "%04x:%02x:%02x.%01x", o->attr->pcidev.domain,
                 o->attr->pcidev.bus, o->attr->pcidev.dev, o->attr->pcidev.func);
        g->vendor_id = o->attr->pcidev.vendor_id;
        g->device_id = o->attr->pcidev.device_id;
        g->class_id = o->attr->pcidev.class_id;
        g->reported_mem = reported_memory(o);
        locality(topo, o, g);
    }
    /* hwloc lists PCI devices in its tree order: sort by bus id, Slurm's order */
    for (int i = 1; i < t->n; i++)
        for (int j = i; j > 0 && strcmp(t->gpu[j - 1].busid, t->gpu[j].busid) > 0; j--) {
            mesh_topo_gpu_t tmp = t->gpu[j];
            t->gpu[j] = t->gpu[j - 1];
            t->gpu[j - 1] = tmp;
        }
    t->numa = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    if (!islands_from(topo, t, "NVLinkBandwidth") && !islands_from(topo, t, "XGMIBandwidth"))
        islands_by_rule(t);
    return 0;
}

/* An hwloc topology set up the one way meshplan reads nodes. */
static int open_topology(hwloc_topology_t *topo, const char *xml, mesh_error_t *err)
{
    if (hwloc_topology_init(topo) < 0)
        return mesh_error_set(err, "topology: hwloc cannot start");
    /* PCI devices are I/O objects: without this an XML shows none; OpenCL
     * and GL would start drivers inside slurmstepd: never */
    hwloc_topology_set_io_types_filter(*topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    hwloc_topology_set_components(*topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "opencl");
    hwloc_topology_set_components(*topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "gl");
    /* Linux's sysfs already lists PCI devices; libpciaccess only adds time */
    hwloc_topology_set_components(*topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "pci");
    if (xml && hwloc_topology_set_xml(*topo, xml) < 0) {
        hwloc_topology_destroy(*topo);
        return mesh_error_set(err, "topology: cannot read '%s' as an hwloc XML file", xml);
    }
    if (hwloc_topology_load(*topo) < 0) {
        hwloc_topology_destroy(*topo);
        return mesh_error_set(err, "topology: hwloc cannot load %s", xml ? xml : "this machine");
    }
    return 0;
}

mesh_topo_t *mesh_topo_load(const char *xml, mesh_error_t *err)
{
    hwloc_topology_t topo;
    mesh_topo_t *t = calloc(1, sizeof(*t));
    if (!t)
        return mesh_error_set(err, "topology: out of memory"), NULL;
    if (open_topology(&topo, xml, err) < 0) {
        free(t);
        return NULL;
    }
    int rc = read_gpus(topo, t, err);
    hwloc_topology_destroy(topo);
    if (rc < 0) {
        free(t);
        return NULL;
    }
    return t;
}

int mesh_topo_save(const char *path, mesh_error_t *err)
{
    hwloc_topology_t topo;
    char tmp[1024];
    if (snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid()) >= (int)sizeof(tmp))
        return mesh_error_set(err, "topology: path too long");
    if (open_topology(&topo, NULL, err) < 0)
        return -1;
    int rc = hwloc_topology_export_xml(topo, tmp, 0);
    hwloc_topology_destroy(topo);
    if (rc < 0 || chmod(tmp, 0644) < 0 || rename(tmp, path) < 0) {
        int why = errno; /* before unlink's own, of a file never written */
        unlink(tmp);
        return mesh_error_set(err, "topology: cannot save '%s': %s", path, strerror(why));
    }
    return 0;
}

/* A load or save that may run on a thread of its own (mesh_run_bounded):
 * its input and, once it has run, its result. */
typedef struct topo_job {
    char *path; /* load: the XML file (NULL: this machine); save: the target */
    int save, rc;
    mesh_topo_t *t;
    mesh_error_t err;
} topo_job_t;

static void job_free(void *arg)
{
    topo_job_t *j = arg;
    mesh_topo_destroy(j->t);
    free(j->path);
    free(j);
}

static void job_run(void *arg)
{
    topo_job_t *j = arg;
    j->rc = j->save ? mesh_topo_save(j->path, &j->err)
                    : ((j->t = mesh_topo_load(j->path, &j->err)) ? 0 : -1);
}

/* Load (save = 0, into *t) or save, waiting at most `seconds`; returns what
 * mesh_topo_load or mesh_topo_save would.  hwloc cannot be interrupted: a
 * job that overruns is left to its thread, which frees it when done. */
static int bounded(const char *path, int save, double seconds, mesh_topo_t **t, mesh_error_t *err)
{
    topo_job_t *j = calloc(1, sizeof(*j));
    if (j && path && !(j->path = strdup(path))) {
        free(j);
        j = NULL;
    }
    if (!j)
        return mesh_error_set(err, "topology: out of memory");
    j->save = save;
    if (mesh_run_bounded(job_run, job_free, j, seconds) < 0)
        return mesh_error_set(err,
                              "topology: hwloc took more than %g s to read %s (topology_timeout=)",
                              seconds, save || !path ? "this machine" : path);
    int rc = j->rc;
    if (rc < 0 && err) /* err may be NULL, as everywhere in the library */
        *err = j->err;
    if (!save) {
        *t = j->t;
        j->t = NULL;
    }
    job_free(j);
    return rc;
}

mesh_topo_t *mesh_topo_load_timeout(const char *xml, double seconds, mesh_error_t *err)
{
    mesh_topo_t *t = NULL;
    bounded(xml, 0, seconds, &t, err);
    return t;
}

int mesh_topo_save_timeout(const char *path, double seconds, mesh_error_t *err)
{
    return bounded(path, 1, seconds, NULL, err);
}

void mesh_topo_destroy(mesh_topo_t *t)
{
    free(t);
}

int mesh_topo_gpu_count(const mesh_topo_t *t)
{
    return t->n;
}

const mesh_topo_gpu_t *mesh_topo_gpu(const mesh_topo_t *t, int i)
{
    return i >= 0 && i < t->n ? &t->gpu[i] : NULL;
}

int mesh_topo_numa_count(const mesh_topo_t *t)
{
    return t->numa;
}

int mesh_topo_island_count(const mesh_topo_t *t)
{
    return t->n_islands;
}

const char *mesh_topo_links(const mesh_topo_t *t)
{
    return t->links;
}

int mesh_topo_select(mesh_topo_t *t, const int *pos, int n, mesh_error_t *err)
{
    int keep[MESH_TOPO_MAX_GPUS] = {0}, map[MESH_TOPO_MAX_GPUS];
    if (n < 1 || n > t->n)
        return mesh_error_set(err, "topology: the step has %d GPUs, the node %d", n, t->n);
    for (int i = 0; i < n; i++) {
        if (pos[i] < 0 || pos[i] >= t->n)
            return mesh_error_set(err, "topology: GPU index %d is not one of the node's %d GPUs",
                                  pos[i], t->n);
        if (keep[pos[i]]++)
            return mesh_error_set(err, "topology: GPU index %d given twice", pos[i]);
    }
    /* the GPUs are in bus order already: keep that, renumber islands densely */
    for (int i = 0; i < MESH_TOPO_MAX_GPUS; i++)
        map[i] = -1;
    int k = 0, islands = 0;
    for (int i = 0; i < t->n; i++) {
        if (!keep[i])
            continue;
        mesh_topo_gpu_t g = t->gpu[i];
        if (map[g.island] < 0)
            map[g.island] = islands++;
        g.island = map[g.island];
        t->gpu[k++] = g;
    }
    t->n = k;
    t->n_islands = islands;
    return 0;
}

static int read_minor(const char *dir, const char *busid)
{
    char path[1024], line[256];
    snprintf(path, sizeof(path), "%s/%s/information", dir, busid);
    FILE *f = fopen(path, "re");
    int minor = -1;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "Device Minor: %d", &minor) == 1)
            break;
    if (f)
        fclose(f);
    return minor;
}

int mesh_topo_minors_to_positions(const mesh_topo_t *t, const char *dir, int *idx, int n,
                                  mesh_error_t *err)
{
    int minor[MESH_TOPO_MAX_GPUS];
    if (!dir)
        dir = "/proc/driver/nvidia/gpus";
    for (int g = 0; g < t->n; g++)
        if ((minor[g] = read_minor(dir, t->gpu[g].busid)) < 0)
            return mesh_error_set(err, "gpu_order=minor: no Device Minor for %s in %s",
                                  t->gpu[g].busid, dir);
    for (int i = 0; i < n; i++) {
        int pos = -1;
        for (int g = 0; g < t->n; g++)
            if (minor[g] == idx[i])
                pos = g;
        if (pos < 0)
            return mesh_error_set(err, "gpu_order=minor: no GPU of this node is /dev/nvidia%d",
                                  idx[i]);
        idx[i] = pos;
    }
    return 0;
}

int mesh_topo_gpu_model(const mesh_topo_t *t, int i, const mesh_assumptions_t *assume,
                        mesh_gpu_t *out, mesh_error_t *err)
{
    const mesh_topo_gpu_t *g = &t->gpu[i];
    if (mesh_policy_resolve_gpu(assume, NULL, g->vendor_id, g->device_id, out, err) < 0)
        return mesh_error_prefix(err, "topology: GPU %s", g->busid);
    if (g->reported_mem > 0) /* what the driver says beats the table */
        out->memory = g->reported_mem;
    return 0;
}

void mesh_topo_task_order(const mesh_topo_t *t, int by_island, int *order)
{
    int k = 0;
    if (!by_island) {
        for (int i = 0; i < t->n; i++)
            order[i] = i;
        return;
    }
    for (int isl = 0; isl < t->n_islands; isl++)
        for (int i = 0; i < t->n; i++)
            if (t->gpu[i].island == isl)
                order[k++] = i;
}

const mesh_topo_gpu_t *mesh_topo_task_gpu(const mesh_topo_t *t, int by_island, int local,
                                          int *position)
{
    int order[MESH_TOPO_MAX_GPUS];
    if (local < 0 || local >= t->n)
        return NULL;
    mesh_topo_task_order(t, by_island, order);
    if (position)
        *position = order[local];
    return &t->gpu[order[local]];
}

int mesh_topo_alloc(const mesh_topo_t *t, const mesh_assumptions_t *assume, int nodes,
                    int by_island, mesh_alloc_t *out, mesh_error_t *err)
{
    if (t->n == 0)
        return mesh_error_set(err, "topology: hwloc found no GPU (lstopo shows what it sees); "
                                   "without one, name the GPU (gpu= or --gpu)");
    memset(out, 0, sizeof(*out));
    for (int i = 0; i < t->n; i++) {
        mesh_gpu_t m;
        if (mesh_topo_gpu_model(t, i, assume, &m, err) < 0)
            return -1;
        if (i == 0)
            out->gpu = m;
        else if (strcmp(m.name, out->gpu.name) != 0)
            return mesh_error_set(err, "topology: mixed GPUs in one node (%s at %s, %s at %s)",
                                  out->gpu.name, t->gpu[0].busid, m.name, t->gpu[i].busid);
        else if (m.memory < out->gpu.memory)
            out->gpu.memory = m.memory;
    }
    out->nodes = nodes;
    out->gpus_per_node = t->n;
    /* host_memory stays unknown (0): the plugin plans offload against the
     * job's --mem, the same on every node, never a node's own total */
    /* TP groups are runs of consecutive tasks: the island is the largest run
     * length dividing the node whose every aligned run shares one island */
    int order[MESH_TOPO_MAX_GPUS];
    mesh_topo_task_order(t, by_island, order);
    out->island = 1;
    for (int k = 2; k <= t->n; k++) {
        if (t->n % k)
            continue;
        int ok = 1;
        for (int i = 0; i < t->n && ok; i++)
            ok = t->gpu[order[i]].island == t->gpu[order[i - i % k]].island;
        if (ok)
            out->island = k;
    }
    return 0;
}

const char *mesh_topo_signature(const mesh_topo_t *t, const mesh_assumptions_t *assume, char *buf,
                                size_t len)
{
    mesh_gpu_t m;
    mesh_error_t err;
    int n = snprintf(buf, len, "%d x %s, islands", t->n,
                     t->n && mesh_topo_gpu_model(t, 0, assume, &m, &err) == 0 ? m.name : "?");
    for (int isl = 0; isl < t->n_islands && n > 0 && (size_t)n < len; isl++) {
        int size = 0;
        for (int i = 0; i < t->n; i++)
            size += t->gpu[i].island == isl;
        n += snprintf(buf + n, len - (size_t)n, "%s%d", isl ? "+" : " ", size);
    }
    return buf;
}
