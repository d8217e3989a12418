/* SPDX-License-Identifier: GPL-2.0-or-later */
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

#define MESH_TOPO_MAX_GPUS 64 /* GPUs of one node; more is an error */

/** A node's GPUs, opaque: made by mesh_topo_load, freed by mesh_topo_destroy. */
typedef struct mesh_topo mesh_topo_t;

/** One GPU of a node, in the topology's storage. */
typedef struct mesh_topo_gpu {
    char busid[16];                          /* "0000:18:00.0" */
    unsigned vendor_id, device_id, class_id; /* PCI ids, class as 0xCCSS (e.g. 0x0302) */
    int numa;            /* OS index of its local NUMA node, -1 if none is closer */
    char cpus[128];      /* its local CPUs, as a list ("0-15,32-47") */
    int island;          /* index of its island, 0-based, in bus order of first member */
    double reported_mem; /* bytes from hwloc's CUDAGlobalMemorySize, 0 if absent */
} mesh_topo_gpu_t;

/**
 * Load the topology of this machine (xml NULL) or of an exported hwloc XML
 * file, keeping important I/O devices and never running the OpenCL, GL or
 * libpciaccess backends.  GPUs are kept in PCI bus order.
 *
 * Returns a new topology, which the caller frees with mesh_topo_destroy
 * (hwloc's own is released before returning), or NULL with err set when
 * hwloc cannot start, read the XML or load, the node has more than
 * MESH_TOPO_MAX_GPUS GPUs, or memory runs out.  A node without GPUs is not
 * an error (mesh_topo_gpu_count is 0).  Thread-safe.
 */
MESH_API mesh_topo_t *mesh_topo_load(const char *xml, mesh_error_t *err);

/**
 * The same, given at most `seconds`; 0, a negative value, NaN or more than
 * a day mean no bound (the load then runs in the calling thread, as it
 * does when no thread can be started).  The load runs on a detached thread
 * of its own; hwloc cannot be interrupted, so a load that overruns is left
 * to finish on that thread, which then frees what it made, while this
 * returns NULL with err set ("took more than N s").
 */
MESH_API mesh_topo_t *mesh_topo_load_timeout(const char *xml, double seconds, mesh_error_t *err);

/**
 * Free a topology and everything of it handed out (mesh_topo_gpu,
 * mesh_topo_links, mesh_topo_task_gpu, mesh_task.gpu_busid).  t may be NULL.
 */
MESH_API void mesh_topo_destroy(mesh_topo_t *t);

/**
 * Discover this machine as mesh_topo_load(NULL) does and save it as an
 * hwloc XML file at `path` (written to "PATH.PID.tmp", then renamed into
 * place, mode 0644), so that later loads take a fraction of the time.
 * Returns 0, or -1 with err set (the path is too long, hwloc fails, the
 * file cannot be written or renamed; the temporary file is removed).  Two
 * threads of one process saving to the same path share the temporary name.
 */
MESH_API int mesh_topo_save(const char *path, mesh_error_t *err);

/**
 * mesh_topo_save, bounded in time like mesh_topo_load_timeout.  After a timeout the abandoned
 * thread goes on and may still create the file later.
 */
MESH_API int mesh_topo_save_timeout(const char *path, double seconds, mesh_error_t *err);

/**
 * Accessors of a loaded topology (t not NULL): the number of GPUs (after
 * mesh_topo_select, those kept), GPU i (0 <= i < count, else NULL), the
 * NUMA nodes of the machine, and the number of islands.  mesh_topo_gpu
 * points into t: valid until mesh_topo_destroy, and mesh_topo_select
 * rewrites the entries in place.
 */
MESH_API int mesh_topo_gpu_count(const mesh_topo_t *t);
MESH_API const mesh_topo_gpu_t *mesh_topo_gpu(const mesh_topo_t *t, int i);
MESH_API int mesh_topo_numa_count(const mesh_topo_t *t);
MESH_API int mesh_topo_island_count(const mesh_topo_t *t);

/**
 * Where the islands came from: "NVLinkBandwidth", "XGMIBandwidth" or
 * "rule".  Points into t: valid until mesh_topo_destroy.
 */
MESH_API const char *mesh_topo_links(const mesh_topo_t *t);

/**
 * Keep only the GPUs at these positions (Slurm's GPU indices in PCI order,
 * e.g. from SLURM_STEP_GPUS): pos[n], 1 <= n <= count, each in 0..count-1
 * and given once, in any order.  The kept GPUs stay in bus order and the
 * islands are renumbered densely.  Returns 0, or -1 with err set and t
 * unchanged.
 */
MESH_API int mesh_topo_select(mesh_topo_t *t, const int *pos, int n, mesh_error_t *err);

/**
 * Translate Slurm GPU indices that are NVIDIA device minors (/dev/nvidia<N>,
 * gpu_order=minor) into positions in bus order, in place in idx[n],
 * reading each GPU's "Device Minor:" from DIR/<bus id>/information (DIR:
 * the driver's /proc/driver/nvidia/gpus when NULL).  Every GPU of t needs
 * its file, not only those named.  Returns 0, or -1 with err set when a
 * GPU has no minor or an index is no GPU of the node; idx may then be
 * partly translated.
 */
MESH_API int mesh_topo_minors_to_positions(const mesh_topo_t *t, const char *dir, int *idx, int n,
                                           mesh_error_t *err);

/**
 * The model of GPU i (0 <= i < count: not checked) into *out: its PCI id
 * resolved by mesh_policy_resolve_gpu under the policy's assumptions
 * *assume (NULL: the table alone), then the memory hwloc reported
 * (CUDAGlobalMemorySize) in place of the memory, even an override's.
 * Returns 0, or -1 with err naming the GPU's bus id and PCI id when
 * neither the table nor the policy knows it.
 */
MESH_API int mesh_topo_gpu_model(const mesh_topo_t *t, int i, const mesh_assumptions_t *assume,
                                 mesh_gpu_t *out, mesh_error_t *err);

/**
 * The order tasks use the GPUs in, as positions into order[count]: PCI
 * order, or with `by_island` grouped island by island (islands in index
 * order, bus order within one) so that consecutive tasks (a TP group)
 * share one.
 */
MESH_API void mesh_topo_task_order(const mesh_topo_t *t, int by_island, int *order);

/**
 * The GPU local task `local` uses (see mesh_topo_task_order), and its
 * position among the node's GPUs in *position (which may be NULL); NULL if
 * local is not in 0..count-1.  The pointer is into t, as mesh_topo_gpu's.
 */
MESH_API const mesh_topo_gpu_t *mesh_topo_task_gpu(const mesh_topo_t *t, int by_island, int local,
                                                   int *position);

/**
 * The allocation of `nodes` nodes like this one into *out: one GPU model
 * (as mesh_topo_gpu_model gives it; assume may be NULL), the smallest
 * memory, one task per GPU, host_memory 0 (unknown), and as island the
 * largest group of consecutive GPUs in task order, dividing the count, that
 * always shares an island.  Returns 0, or -1 with err set when the node has no
 * GPU, a GPU's model is unknown, or models are mixed (*out may then be
 * partly filled).
 */
MESH_API int mesh_topo_alloc(const mesh_topo_t *t, const mesh_assumptions_t *assume, int nodes,
                             int by_island, mesh_alloc_t *out, mesh_error_t *err);

/**
 * What a plan depends on, as one line ("8 x H100-SXM, islands 8", island
 * sizes joined by '+'; "?" for an unknown model) into buf[len], truncated
 * to fit: equal on every node of a homogeneous step.  The model is named
 * as mesh_topo_gpu_model names it under *assume (which may be NULL); the
 * GPU memory is not part of it.  Returns buf.
 */
MESH_API const char *mesh_topo_signature(const mesh_topo_t *t, const mesh_assumptions_t *assume,
                                         char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
