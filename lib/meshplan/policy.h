/*
 * meshplan: admin policy and modelling assumptions.
 *
 * One set of keys, read from plugstack.conf arguments (key=value), from a
 * YAML policy file (policy=/etc/slurm/meshplan.yaml) or from the CLI's
 * --policy.  Unknown keys are errors naming the key.  Defaults are those of
 * mesh_policy_init and are documented in meshplan(8).
 */
#ifndef MESHPLAN_POLICY_H
#define MESHPLAN_POLICY_H

#include "meshplan/api.h"
#include "meshplan/error.h"
#include "meshplan/gpu.h"
#include "meshplan/layout.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MESH_PATH_MAX          256
#define MESH_GPU_OVERRIDES_MAX 16

typedef enum mesh_enforce {
    MESH_ENFORCE_OFF,
    MESH_ENFORCE_WARN,
    MESH_ENFORCE_REJECT
} mesh_enforce_t;
typedef enum mesh_export {
    MESH_EXPORT_TORCH,
    MESH_EXPORT_TORCHRUN,
    MESH_EXPORT_MESH
} mesh_export_t;

/* Which job steps get the variables (steps=). */
enum {
    MESH_STEP_REGULAR = 1 << 0,     /* srun steps */
    MESH_STEP_BATCH = 1 << 1,       /* the batch script itself */
    MESH_STEP_INTERACTIVE = 1 << 2, /* salloc's interactive step */
};

/* A per-model override of the GPU table; zero fields are left as they are. */
typedef struct mesh_gpu_override {
    char name[32];
    double memory, peak_flops, hbm_bw, link_bw, net_bw, gemm_eff;
    int island;
    unsigned pci_vendor, pci_device; /* gpu.NAME.pci: this PCI id is NAME */
} mesh_gpu_override_t;

/* What job_submit/meshplan assumes about a Slurm partition (the controller
 * sees no node's topology); zero fields fall back to the policy's own. */
#define MESH_PARTITIONS_MAX 32
typedef struct mesh_partition {
    char name[64]; /* "default": any partition not listed */
    char gpu[32];
    double gpu_mem;
    int island; /* nvlink= */
    int nodes;  /* how many nodes it has, to explain requests beyond them */
} mesh_partition_t;

typedef struct mesh_policy {
    mesh_enforce_t enforce; /* what to do with a job whose model does not fit */
    double reserve;         /* fraction of GPU memory kept free */
    char gpu[32];           /* GPU model to assume where discovery cannot tell */
    double gpu_mem;         /* GPU memory to assume (bytes); 0 = from the GPU table */
    mesh_export_t export_mode;
    int port_lo, port_hi; /* MASTER_PORT range */
    char models_dir[MESH_PATH_MAX];
    char topology_xml[MESH_PATH_MAX];
    unsigned steps;          /* MESH_STEP_* mask */
    int bind_gpu;            /* bind=gpu: each task sees only its own GPU */
    int gpu_order_minor;     /* gpu_order=minor: Slurm's GPU i is /dev/nvidia<i> */
    double topology_timeout; /* seconds a node may spend reading its topology; 0: no bound */
    int topology_fallback;   /* on_topology_error=fallback: plan from gpu=/gpu_mem= instead */
    double overhead_context; /* CUDA context, cuBLAS workspaces: bytes per GPU */
    double overhead_comm;    /* NCCL buffers: bytes per communicator a rank is in */
    double fragmentation;    /* allocator slack, fraction of activation memory */
    int submit_fail_closed;  /* on_submit_error=reject: job_submit refuses on its own failures */
    int n_partitions;
    mesh_partition_t partitions[MESH_PARTITIONS_MAX];
    int n_gpu_overrides;
    mesh_gpu_override_t gpu_overrides[MESH_GPU_OVERRIDES_MAX];
} mesh_policy_t;

/* Fill in the defaults. */
MESH_API void mesh_policy_init(mesh_policy_t *p);

/* Set one key, as written in plugstack.conf ("reserve", "0.1").  GPU
 * overrides are "gpu.NAME.FIELD" (e.g. gpu.H100-SXM.memory=80GiB). */
MESH_API int mesh_policy_set(mesh_policy_t *p, const char *key, const char *value,
                             mesh_error_t *err);

/* Set one "key=value" argument. */
MESH_API int mesh_policy_set_arg(mesh_policy_t *p, const char *arg, mesh_error_t *err);

/* Read a YAML policy file: a mapping of the same keys; `gpus:` holds a
 * mapping of GPU names to mappings of override fields.  Checks the result
 * with mesh_policy_check. */
MESH_API int mesh_policy_load(mesh_policy_t *p, const char *path, mesh_error_t *err);

/* The same from len bytes of buf (no NUL needed); path only names it in errors. */
MESH_API int mesh_policy_parse(mesh_policy_t *p, const char *buf, size_t len, const char *path,
                               mesh_error_t *err);

/* The settings for partition `name` (NULL: the job named none), or those
 * of the partition called "default"; NULL if neither is in the policy. */
MESH_API const mesh_partition_t *mesh_policy_partition(const mesh_policy_t *p, const char *name);

/* The GPU called `name`: the table's, or one the policy defines in full
 * (gpu.NAME.pci, .memory, .peak_tflops), with the policy's overrides applied. */
MESH_API int mesh_policy_gpu(const mesh_policy_t *p, const char *name, mesh_gpu_t *out,
                             mesh_error_t *err);

/* Check what single keys cannot: a GPU the table does not know must come
 * with its PCI id (gpu.NAME.pci=VVVV:DDDD), memory and peak_tflops. */
MESH_API int mesh_policy_check(const mesh_policy_t *p, mesh_error_t *err);

/* Apply the policy's overrides for gpu->name to *gpu. */
MESH_API void mesh_policy_apply_gpu(const mesh_policy_t *p, mesh_gpu_t *gpu);

/* Describe an allocation: `gpu` names a table entry (NULL: the policy's
 * gpu=, else a generic GPU with the default GPU's speeds); the policy's
 * gpu.NAME.* overrides apply; `gpu_mem` (0: the policy's gpu_mem= for a
 * generic GPU) and `island` (0: the GPU's own) override last. */
MESH_API int mesh_policy_alloc(const mesh_policy_t *p, const char *gpu, double gpu_mem, int island,
                               int nodes, int gpus_per_node, mesh_alloc_t *out, mesh_error_t *err);

/* The installed presets directory ($(datadir)/meshplan/models). */
MESH_API const char *mesh_default_models_dir(void);

/* Memory a layout may use on this GPU: memory * (1 - reserve). */
MESH_API double mesh_policy_usable(const mesh_policy_t *p, const mesh_gpu_t *gpu);

MESH_API const char *mesh_enforce_name(mesh_enforce_t e);
MESH_API const char *mesh_export_name(mesh_export_t e);
MESH_API int mesh_export_parse(const char *s, mesh_export_t *out); /* 0 ok, -1 unknown */

#ifdef __cplusplus
}
#endif
#endif
