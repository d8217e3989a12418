/* SPDX-License-Identifier: GPL-2.0-or-later */
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

/** One GPU model: the table's figures, or a copy with the policy's overrides. */
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
    int fp8_blocks;  /* block-scaled FP8: 1 blockwise (Hopper, compute capability 9.0),
                      * 2 MXFP8 too (Blackwell, 10.x); 0 neither (Ada, AMD) */
    int tray;        /* GPUs per node of a product whose island spans nodes (GB200 and
                      * GB300 NVL72: trays of 4 on a 72-GPU fabric); 0: the island is
                      * inside a node */
    /* the site's calibration of this model (the policy's calibration:,
     * lib/meshplan/calibrate.h): compute and exposed communication times
     * are divided by the first two, allocated memory multiplied by the
     * third; 0: not calibrated */
    double cal_compute, cal_network, cal_memory;
} mesh_gpu_t;

/**
 * The built-in table: mesh_gpu_count() entries, mesh_gpu_at(i) the i-th.
 *
 * mesh_gpu_at returns NULL unless 0 <= i < mesh_gpu_count().  Its pointer,
 * like those of mesh_gpu_find, mesh_gpu_find_pci and mesh_gpu_default,
 * points into a static read-only table: valid for the life of the program,
 * never freed, and never modified (the policy's overrides apply to copies:
 * see mesh_policy_gpu).
 */
MESH_API int mesh_gpu_count(void);
MESH_API const mesh_gpu_t *mesh_gpu_at(int i);

/** A product name of a GPU of the table. */
typedef struct mesh_gpu_alias {
    const char *alias;     /* as its vendor's tools print it, e.g. "NVIDIA H100 80GB HBM3" */
    const char *name;      /* the table's name it stands for, e.g. "H100-SXM" */
    unsigned short device; /* the PCI device id its source gives that name */
} mesh_gpu_alias_t;

/**
 * The product names the table knows its GPUs by (what `nvidia-smi
 * --query-gpu=name`, amd-smi or lspci print; sources in lib/gpu.c):
 * mesh_gpu_alias_count() entries, mesh_gpu_alias_at(i) the i-th, NULL unless
 * 0 <= i < mesh_gpu_alias_count().  The pointer, and the strings it holds,
 * are static and read-only: valid for the life of the program, never freed.
 */
MESH_API int mesh_gpu_alias_count(void);
MESH_API const mesh_gpu_alias_t *mesh_gpu_alias_at(int i);

/**
 * Look a GPU up by name: the table's name ("H100-SXM") or a product name of
 * mesh_gpu_alias_at ("NVIDIA H100 80GB HBM3").  Names are compared ignoring
 * case and the vendor words in front (NVIDIA, Tesla, AMD, Instinct), with
 * ' ', '-', '_' and '/' alike: "h100 pcie" and "NVIDIA-H100-PCIe" are
 * H100-PCIe.  A short name that is several GPUs ("H100", "A100") is none of
 * them: the user must say which (mesh_gpu_lookup's error lists them).
 *
 * name may be NULL.  Returns a pointer into the static table, or NULL if no
 * entry has that name.
 */
MESH_API const mesh_gpu_t *mesh_gpu_find(const char *name);

/**
 * Like mesh_gpu_find, but copies the entry into *out (which must not be
 * NULL) and returns 0.  On a name it does not know (or NULL) returns -1,
 * leaves *out alone and fills err: a short name that is several GPUs lists
 * them, with their memory and NVLink ("gpu: 'H100' is 3 GPUs: ..."); any
 * other name is "gpu: unknown GPU 'NAME' (known: ...)", with the table's
 * names and the one a typo most likely meant ("; did you mean H100-SXM?").
 */
MESH_API int mesh_gpu_lookup(const char *name, mesh_gpu_t *out, mesh_error_t *err);

/**
 * Look a GPU up by PCI vendor and device id (e.g. 0x10de, 0x2330).
 * Returns a pointer into the static table, or NULL if unknown.
 */
MESH_API const mesh_gpu_t *mesh_gpu_find_pci(unsigned vendor, unsigned device);

/**
 * The GPU whose speeds are assumed when only a memory size is given (the
 * "generic" GPU, and GPUs the policy defines): the H100-SXM entry.  Never
 * NULL; points into the static table.
 */
MESH_API const mesh_gpu_t *mesh_gpu_default(void);

#ifdef __cplusplus
}
#endif
#endif
