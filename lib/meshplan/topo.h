/*
 * meshplan: the node's GPUs, their NVLink/XGMI islands and NUMA locality,
 * from hwloc.
 *
 * Debian's hwloc has no NVML or CUDA backend, so a GPU is a PCI device of
 * class 0x03xx or 0x12xx from NVIDIA or AMD; its model, memory and speeds
 * come from the GPU table by PCI id.  Islands come from the NVLinkBandwidth
 * or XGMIBandwidth distance matrix when the topology has one (NVSwitches are
 * traversed, CPUs are not), otherwise from the table's rule (SXM/HGX parts:
 * one island; PCIe parts: none).
 */
#ifndef MESHPLAN_TOPO_H
#define MESHPLAN_TOPO_H

#include "meshplan/api.h"
#include "meshplan/error.h"
#include "meshplan/gpu.h"
#include "meshplan/layout.h"
#include "meshplan/policy.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MESH_TOPO_MAX_GPUS 64

typedef struct mesh_topo mesh_topo_t;

typedef struct mesh_topo_gpu {
    char busid[16]; /* "0000:18:00.0" */
    unsigned vendor_id, device_id, class_id;
    int numa;            /* OS index of its local NUMA node, -1 if none is closer */
    char cpus[128];      /* its local CPUs, as a list ("0-15,32-47") */
    int island;          /* index of its island, 0-based, in bus order of first member */
    double reported_mem; /* bytes from hwloc's CUDAGlobalMemorySize, 0 if absent */
} mesh_topo_gpu_t;

/* Load the topology of this machine (xml NULL) or of an exported XML file,
 * keeping important I/O devices and never running the OpenCL or GL
 * backends.  GPUs are kept in PCI bus order. */
MESH_API mesh_topo_t *mesh_topo_load(const char *xml, mesh_error_t *err);

/* The same, given at most `seconds` (0: no bound).  hwloc cannot be
 * interrupted, so a load that overruns is left to finish on its own thread
 * (and cleans up after itself) while this returns NULL with err set. */
MESH_API mesh_topo_t *mesh_topo_load_timeout(const char *xml, double seconds, mesh_error_t *err);
MESH_API void mesh_topo_destroy(mesh_topo_t *t);

/* Discover this machine as mesh_topo_load(NULL) does and save it as an
 * XML file at `path` (written aside, then renamed into place, mode 0644),
 * so that later loads take a fraction of the time. */
MESH_API int mesh_topo_save(const char *path, mesh_error_t *err);

/* mesh_topo_save, bounded in time like mesh_topo_load_timeout. */
MESH_API int mesh_topo_save_timeout(const char *path, double seconds, mesh_error_t *err);

MESH_API int mesh_topo_gpu_count(const mesh_topo_t *t);
MESH_API const mesh_topo_gpu_t *mesh_topo_gpu(const mesh_topo_t *t, int i);
MESH_API int mesh_topo_numa_count(const mesh_topo_t *t);
MESH_API int mesh_topo_island_count(const mesh_topo_t *t);
/* Where the islands came from: "NVLinkBandwidth", "XGMIBandwidth" or "rule". */
MESH_API const char *mesh_topo_links(const mesh_topo_t *t);

/* Keep only the GPUs at these positions (Slurm's GPU indices in PCI order,
 * e.g. from SLURM_STEP_GPUS); islands and order follow. */
MESH_API int mesh_topo_select(mesh_topo_t *t, const int *pos, int n, mesh_error_t *err);

/* Translate Slurm GPU indices that are NVIDIA device minors (/dev/nvidia<N>,
 * gpu_order=minor) into positions in bus order, reading each GPU's
 * "Device Minor:" from DIR/<bus id>/information (DIR: the driver's
 * /proc/driver/nvidia/gpus when NULL). */
MESH_API int mesh_topo_minors_to_positions(const mesh_topo_t *t, const char *dir, int *idx, int n,
                                           mesh_error_t *err);

/* The table entry of GPU i (policy overrides applied); -1 with an error
 * naming the PCI id if the table and the policy do not know it. */
MESH_API int mesh_topo_gpu_model(const mesh_topo_t *t, int i, const mesh_policy_t *pol,
                                 mesh_gpu_t *out, mesh_error_t *err);

/* The order tasks use the GPUs in: PCI order, or with `by_island` grouped
 * island by island so that consecutive tasks (a TP group) share one. */
MESH_API void mesh_topo_task_order(const mesh_topo_t *t, int by_island, int *order);

/* The GPU local task `local` uses (see mesh_topo_task_order), and its
 * position among the node's GPUs; NULL if there are fewer GPUs. */
MESH_API const mesh_topo_gpu_t *mesh_topo_task_gpu(const mesh_topo_t *t, int by_island, int local,
                                                   int *position);

/* The allocation of `nodes` nodes like this one: one GPU model (mixed
 * models are an error), the smallest memory, and as island the largest
 * group of consecutive GPUs in task order that always shares an island. */
MESH_API int mesh_topo_alloc(const mesh_topo_t *t, const mesh_policy_t *pol, int nodes,
                             int by_island, mesh_alloc_t *out, mesh_error_t *err);

/* What a plan depends on, as one line ("8 x H100-SXM, islands 8"): equal
 * on every node of a homogeneous step. */
MESH_API const char *mesh_topo_signature(const mesh_topo_t *t, const mesh_policy_t *pol, char *buf,
                                         size_t len);

#ifdef __cplusplus
}
#endif
#endif
