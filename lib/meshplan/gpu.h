/*
 * meshplan: the GPU table.
 *
 * What the memory and cost models need to know about an accelerator.  The
 * built-in figures are vendor datasheet values (sources in lib/gpu.c); an
 * admin overrides any of them per model in the policy, and --gpu-mem or
 * gpu_mem= overrides the memory where discovery cannot tell.
 */
#ifndef MESHPLAN_GPU_H
#define MESHPLAN_GPU_H

#include "meshplan/api.h"
#include "meshplan/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mesh_gpu {
    char name[32];             /* table name, e.g. "H100-SXM" */
    unsigned vendor_id;        /* PCI vendor id (0x10de NVIDIA, 0x1002 AMD) */
    unsigned short devices[6]; /* PCI device ids of this model, 0-terminated */
    double memory;             /* bytes the device reports as its total memory */
    double peak_flops;         /* dense bf16 (fp16 where bf16 is absent) tensor FLOP/s */
    int has_bf16;              /* 0: bf16 training is refused (V100) */
    double hbm_bw;             /* device memory bandwidth, bytes/s */
    double link_bw;  /* NVLink/Infinity Fabric bandwidth per GPU, one direction, bytes/s */
    double net_bw;   /* inter-node network bandwidth per GPU, one direction, bytes/s */
    int island;      /* GPUs per all-to-all NVLink/XGMI domain in the usual node */
    double gemm_eff; /* fraction of peak_flops large GEMMs reach (cuBLAS/hipBLASLt) */
    double peak_fp8; /* dense FP8 tensor FLOP/s; 0: no FP8 (precision fp8 is refused) */
    int fp8_blocks;  /* 1: MXFP8 block scaling too (Blackwell, sm_100) */
} mesh_gpu_t;

/* Number of entries in the built-in table and the i-th entry. */
MESH_API int mesh_gpu_count(void);
MESH_API const mesh_gpu_t *mesh_gpu_at(int i);

/* Look a GPU up by table name, case-insensitively; NULL if unknown. */
MESH_API const mesh_gpu_t *mesh_gpu_find(const char *name);

/* Like mesh_gpu_find, but fills err with the list of known names. */
MESH_API int mesh_gpu_lookup(const char *name, mesh_gpu_t *out, mesh_error_t *err);

/* Look a GPU up by PCI vendor:device id; NULL if unknown. */
MESH_API const mesh_gpu_t *mesh_gpu_find_pci(unsigned vendor, unsigned device);

/* The GPU assumed for speeds when only a memory size is given. */
MESH_API const mesh_gpu_t *mesh_gpu_default(void);

#ifdef __cplusplus
}
#endif
#endif
