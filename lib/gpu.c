/*
 * The built-in GPU table.
 *
 * memory: the total the device reports (nvidia-smi "MiB" total, rocm-smi
 *   bytes), not the marketed size: "80 GB" H100 reports 81559 MiB.
 * peak_flops: dense (no sparsity) bf16 tensor-core FLOP/s from the vendor's
 *   datasheet (fp16 for V100, which has no bf16).
 * link_bw: NVLink / Infinity Fabric per GPU, one direction (half the
 *   bidirectional figure vendors quote).
 * net_bw: per-GPU share of the inter-node fabric of the reference system
 *   (DGX-1 4x100G EDR per 8 GPUs; DGX A100 one 200G HDR per GPU; DGX H100,
 *   H200 and B200 one 400G NDR per GPU; Frontier 4x200G per 8 MI250X GCDs).
 * peak_fp8: dense FP8 tensor-core FLOP/s from the same datasheets (H100 SXM,
 *   H800, H200, GH200 1979; H100 PCIe 1513; H100 NVL 1671; B200 4500; L40S
 *   733; MI300X and MI325X 2615); 0 where the GPU has no FP8 (V100, A100).
 *   mxfp8: Transformer Engine runs MXFP8 on compute capability 10.x only
 *   (transformer_engine/pytorch/quantization.py L162-168 at d0067d0).
 * gemm_eff: best-shape bf16 GEMM throughput over peak, from public matmul
 *   benchmarks (stas00/ml-engineering "MAMF" tables); figures marked (est.)
 *   had no measurement and are estimates.
 * Sources per figure are listed in the README ("The GPU table").
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "meshplan/gpu.h"

#define MiB 1048576.0
#define TF  1e12
#define GBs 1e9

#define NV  0x10de
#define AMD 0x1002

/* PCI device ids from the pci.ids database (pciutils, 2026).  "island" is
 * the rule where hwloc shows no link matrix: SXM/HGX/OAM parts form one
 * all-to-all island per node, PCIe parts have no NVLink (1), products sold
 * as bridged pairs (H100 NVL) 2. */
/* clang-format off */
static const mesh_gpu_t table[] = {
    /* name, vendor, PCI devices, memory, peak, bf16, hbm, link, net, island, gemm_eff, fp8, mxfp8 */
    {"V100-16GB",      NV,  {0x1db1},         16160 * MiB,  125 * TF,   0, 900 * GBs,  150 * GBs, 6.25 * GBs, 8,  0.80, 0, 0},
    {"V100-32GB",      NV,  {0x1db5},         32510 * MiB,  125 * TF,   0, 900 * GBs,  150 * GBs, 6.25 * GBs, 8,  0.80, 0, 0},
    {"V100-SXM3-32GB", NV,  {0x1db8},         32510 * MiB,  125 * TF,   0, 900 * GBs,  150 * GBs, 12.5 * GBs, 16, 0.80, 0, 0},
    {"V100-PCIe-16GB", NV,  {0x1db4},         16160 * MiB,  112 * TF,   0, 900 * GBs,  16 * GBs,  6.25 * GBs, 1,  0.80, 0, 0},
    {"V100-PCIe-32GB", NV,  {0x1db6, 0x1df6}, 32510 * MiB,  112 * TF,   0, 900 * GBs,  16 * GBs,  6.25 * GBs, 1,  0.80, 0, 0},
    {"P100-SXM2",      NV,  {0x15f9},         16280 * MiB,  21.2 * TF,  0, 732 * GBs,  80 * GBs,  6.25 * GBs, 4,  0.75, 0, 0},
    {"P100-PCIe",      NV,  {0x15f8, 0x15f7}, 16280 * MiB,  18.7 * TF,  0, 732 * GBs,  16 * GBs,  6.25 * GBs, 1,  0.75, 0, 0},
    {"T4",             NV,  {0x1eb8},         15360 * MiB,  65 * TF,    0, 320 * GBs,  16 * GBs,  12.5 * GBs, 1,  0.70, 0, 0},
    {"A100-40GB",      NV,  {0x20b0},         40960 * MiB,  312 * TF,   1, 1555 * GBs, 300 * GBs, 25 * GBs,   8,  0.85, 0, 0},
    {"A100-80GB",      NV,  {0x20b2},         81920 * MiB,  312 * TF,   1, 2039 * GBs, 300 * GBs, 25 * GBs,   8,  0.85, 0, 0},
    {"A100-PCIe-40GB", NV,  {0x20b1, 0x20f1}, 40960 * MiB,  312 * TF,   1, 1555 * GBs, 32 * GBs,  25 * GBs,   1,  0.81, 0, 0},
    {"A100-PCIe-80GB", NV,  {0x20b5},         81920 * MiB,  312 * TF,   1, 1935 * GBs, 32 * GBs,  25 * GBs,   1,  0.81, 0, 0},
    {"H100-SXM",       NV,  {0x2330},         81559 * MiB,  989 * TF,   1, 3350 * GBs, 450 * GBs, 50 * GBs,   8,  0.80, 1979 * TF, 0},
    {"H100-PCIe",      NV,  {0x2331},         81559 * MiB,  756 * TF,   1, 2000 * GBs, 32 * GBs,  25 * GBs,   1,  0.66, 1513 * TF, 0},
    {"H100-NVL",       NV,  {0x2321},         95830 * MiB,  835 * TF,   1, 3900 * GBs, 300 * GBs, 25 * GBs,   2,  0.60, 1671 * TF, 0},
    {"H800",           NV,  {0x2324},         81559 * MiB,  989 * TF,   1, 3350 * GBs, 200 * GBs, 50 * GBs,   8,  0.80, 1979 * TF, 0},
    {"H200",           NV,  {0x2335},         143771 * MiB, 989 * TF,   1, 4800 * GBs, 450 * GBs, 50 * GBs,   8,  0.80, 1979 * TF, 0},
    {"GH200",          NV,  {0x2342, 0x2348}, 97871 * MiB,  989 * TF,   1, 4000 * GBs, 150 * GBs, 25 * GBs,   4,  0.83, 1979 * TF, 0},
    {"B200",           NV,  {0x2901},         183359 * MiB, 2250 * TF,  1, 8000 * GBs, 900 * GBs, 50 * GBs,   8,  0.75, 4500 * TF, 1},
    {"L40S",           NV,  {0x26b9},         46068 * MiB,  362 * TF,   1, 864 * GBs,  32 * GBs,  25 * GBs,   1,  0.70, 733 * TF, 0},
    {"MI50-32GB",      AMD, {0x66a1},         32768 * MiB,  26.5 * TF,  0, 1024 * GBs, 32 * GBs,  12.5 * GBs, 1,  0.60, 0, 0},
    {"MI250X",         AMD, {0x7408, 0x740c}, 65520 * MiB,  191.5 * TF, 1, 1600 * GBs, 50 * GBs,  12.5 * GBs, 8,  0.75, 0, 0},
    {"MI300X",         AMD, {0x74a1},         196592 * MiB, 1307 * TF,  1, 5300 * GBs, 448 * GBs, 50 * GBs,   8,  0.55, 2615 * TF, 0},
    {"MI325X",         AMD, {0x74a5},         262144 * MiB, 1307 * TF,  1, 6000 * GBs, 448 * GBs, 50 * GBs,   8,  0.60, 2615 * TF, 0},
};
/* clang-format on */

int mesh_gpu_count(void)
{
    return MESH_ARRAY_LEN(table);
}

const mesh_gpu_t *mesh_gpu_at(int i)
{
    return i >= 0 && i < MESH_ARRAY_LEN(table) ? &table[i] : NULL;
}

const mesh_gpu_t *mesh_gpu_find(const char *name)
{
    for (int i = 0; name && i < MESH_ARRAY_LEN(table); i++)
        if (strcasecmp(table[i].name, name) == 0)
            return &table[i];
    return NULL;
}

int mesh_gpu_lookup(const char *name, mesh_gpu_t *out, mesh_error_t *err)
{
    const mesh_gpu_t *g = mesh_gpu_find(name);
    if (g) {
        *out = *g;
        return 0;
    }
    char list[MESH_ERROR_MAX / 2] = "";
    size_t used = 0;
    for (int i = 0; i < MESH_ARRAY_LEN(table) && used < sizeof(list); i++) {
        int n = snprintf(list + used, sizeof(list) - used, "%s%s", i ? " " : "", table[i].name);
        used += n > 0 ? (size_t)n : 0;
    }
    return mesh_error_set(err, "gpu: unknown GPU '%.40s' (known: %s)", name ? name : "", list);
}

const mesh_gpu_t *mesh_gpu_find_pci(unsigned vendor, unsigned device)
{
    for (int i = 0; i < MESH_ARRAY_LEN(table); i++) {
        const mesh_gpu_t *g = &table[i];
        for (int j = 0; g->vendor_id == vendor && j < MESH_ARRAY_LEN(g->devices) && g->devices[j];
             j++)
            if (g->devices[j] == device)
                return g;
    }
    return NULL;
}

const mesh_gpu_t *mesh_gpu_default(void)
{
    return mesh_gpu_find("H100-SXM");
}
