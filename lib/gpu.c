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
 * gemm_eff: best-shape bf16 GEMM throughput over peak, from public matmul
 *   benchmarks (stas00/ml-engineering "MAMF" tables); figures marked (est.)
 *   had no measurement and are estimates.
 * Sources per figure are listed in the README ("The GPU table").
 */
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "meshplan/gpu.h"

#define MiB 1048576.0
#define TF  1e12
#define GBs 1e9

static const mesh_gpu_t table[] = {
    /* name, vendor, memory, peak, bf16, hbm, link, net, island, gemm_eff */
    {"V100-16GB", 0x10de, 16160 * MiB, 125 * TF, 0, 900 * GBs, 150 * GBs, 6.25 * GBs, 8, 0.80},
    {"V100-32GB", 0x10de, 32510 * MiB, 125 * TF, 0, 900 * GBs, 150 * GBs, 6.25 * GBs, 8, 0.80},
    {"A100-40GB", 0x10de, 40960 * MiB, 312 * TF, 1, 1555 * GBs, 300 * GBs, 25 * GBs, 8, 0.85},
    {"A100-80GB", 0x10de, 81920 * MiB, 312 * TF, 1, 2039 * GBs, 300 * GBs, 25 * GBs, 8, 0.85},
    {"H100-SXM", 0x10de, 81559 * MiB, 989 * TF, 1, 3350 * GBs, 450 * GBs, 50 * GBs, 8, 0.80},
    {"H100-PCIe", 0x10de, 81559 * MiB, 756 * TF, 1, 2000 * GBs, 300 * GBs, 25 * GBs, 2, 0.66},
    {"H100-NVL", 0x10de, 95830 * MiB, 835 * TF, 1, 3900 * GBs, 300 * GBs, 25 * GBs, 2, 0.60},
    {"H800", 0x10de, 81559 * MiB, 989 * TF, 1, 3350 * GBs, 200 * GBs, 50 * GBs, 8, 0.80},
    {"H200", 0x10de, 143771 * MiB, 989 * TF, 1, 4800 * GBs, 450 * GBs, 50 * GBs, 8, 0.80},
    {"GH200", 0x10de, 97871 * MiB, 989 * TF, 1, 4000 * GBs, 150 * GBs, 25 * GBs, 4, 0.83},
    {"B200", 0x10de, 183359 * MiB, 2250 * TF, 1, 8000 * GBs, 900 * GBs, 50 * GBs, 8, 0.75},
    {"L40S", 0x10de, 46068 * MiB, 362 * TF, 1, 864 * GBs, 32 * GBs, 25 * GBs, 1, 0.70},
    {"MI250X", 0x1002, 65520 * MiB, 191.5 * TF, 1, 1600 * GBs, 50 * GBs, 12.5 * GBs, 8, 0.75},
    {"MI300X", 0x1002, 196592 * MiB, 1307 * TF, 1, 5300 * GBs, 448 * GBs, 50 * GBs, 8, 0.55},
    {"MI325X", 0x1002, 262144 * MiB, 1307 * TF, 1, 6000 * GBs, 448 * GBs, 50 * GBs, 8, 0.60},
};

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
    for (int i = 0; i < MESH_ARRAY_LEN(table); i++) {
        if (i)
            strncat(list, " ", sizeof(list) - strlen(list) - 1);
        strncat(list, table[i].name, sizeof(list) - strlen(list) - 1);
    }
    return mesh_error_set(err, "gpu: unknown GPU '%.40s' (known: %s)", name ? name : "", list);
}

const mesh_gpu_t *mesh_gpu_default(void)
{
    return mesh_gpu_find("H100-SXM");
}
