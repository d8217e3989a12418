/* SPDX-License-Identifier: GPL-2.0-or-later */
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
 *   H800, H200, GH200 1979; H100 PCIe 1513; H100 NVL 1671; H20 296; B200 and
 *   B300 4500; GB200 and GB300 5000; L40S 733; RTX 6000 Ada 728.5; L4 242.5; MI300X and
 *   MI325X 2615; MI355X 5000); 0 where the GPU has no FP8 (V100, A100, A10,
 *   A40).  Vendors quote "with sparsity" figures twice as large: halved here.
 * blocks: the block-scaled FP8 recipes Transformer Engine runs
 *   (transformer_engine/pytorch/quantization.py at d0067d0): 128-wide
 *   blockwise scaling from compute capability 9.0 (L178-185: Hopper, H100,
 *   H800, H20, H200, GH200: 1), MXFP8 on 10.x too (L162-168: B200, B300
 *   (10.3), GB200, GB300 (10.3): 2); neither on Ada (8.9: L40S, L4, RTX 6000
 *   Ada) nor on AMD, where ROCm's Transformer Engine refuses both: 0.
 * gemm_eff: best-shape bf16 GEMM throughput over peak, from public matmul
 *   benchmarks (stas00/ml-engineering "MAMF" tables); figures marked (est.)
 *   had no measurement and are estimates.  No table measures H20, B300, GB200, GB300,
 *   MI355X, L4, RTX 6000 Ada, A10 or A40: each has the figure of its
 *   architecture's nearest measured or estimated part (H100 SXM, B200,
 *   MI325X, L40S, A100 PCIe rounded down for GDDR6), an estimate; but GB300,
 *   fitted on published training runs (GB300_GEMM_EFF below).
 * net_bw of the PCIe cards (L4, A10: 100G; A40, RTX 6000 Ada, L40S: 200G per
 *   GPU) is an estimate: no reference system sells them with a fabric.
 * Sources per figure are listed in doc/internals.md ("The GPU table"), and for
 * H20, B300, GB200, GB300, L40S, L4, RTX 6000 Ada, A10, A40 and MI355X next to their
 * rows.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

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
/* GB300's GEMM share: no public GEMM benchmark measures it, and its datasheet
 * gives GB200's dense peaks, yet the published Megatron runs of one release run
 * the same models and layouts 1.2-1.3x faster on it (DeepSeek-V3 on 256 GPUs in
 * NeMo 26.08: 1,575 TFLOP/s a GPU against 1,230; its 1.4 kW against GB200's
 * 1.2 kW, and Blackwell Ultra's doubled softmax rate).  0.94 (GB200's 0.75 x
 * 1.25) is fitted on its 28 rows of tests/fixtures/published_throughput_dev.csv,
 * dense and MoE (tools/fit/published.py --fit BUILD --fit-gpu GB300, 2026-12-04:
 * the search's 0.9375, rounded; 22 within 15% against 9 at 0.75; median 0.93x
 * against 0.82x). */
#ifndef GB300_GEMM_EFF /* tools/fit/published.py --fit-gpu GB300 builds with -D */
#define GB300_GEMM_EFF 0.94
#endif
/* clang-format off */
/* the rows leave the calibration's factors out: 0, none (the policy's
 * calibration: sets them on the copies it resolves) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
static const mesh_gpu_t table[] = {
    /* name, vendor, PCI devices, memory, peak, bf16, hbm, link, net, island, gemm_eff, fp8, blocks,
     * tray (0 where left out) */
    {"V100-16GB",      NV,  {0x1db1},         16160 * MiB,  125 * TF,   0, 900 * GBs,  150 * GBs, 6.25 * GBs, 8,  0.80, 0, 0},
    {"V100-32GB",      NV,  {0x1db5},         32510 * MiB,  125 * TF,   0, 900 * GBs,  150 * GBs, 6.25 * GBs, 8,  0.80, 0, 0},
    {"V100-SXM3-32GB", NV,  {0x1db8},         32510 * MiB,  125 * TF,   0, 900 * GBs,  150 * GBs, 12.5 * GBs, 16, 0.80, 0, 0},
    {"V100-PCIe-16GB", NV,  {0x1db4},         16160 * MiB,  112 * TF,   0, 900 * GBs,  16 * GBs,  6.25 * GBs, 1,  0.80, 0, 0},
    {"V100-PCIe-32GB", NV,  {0x1db6, 0x1df6}, 32510 * MiB,  112 * TF,   0, 900 * GBs,  16 * GBs,  6.25 * GBs, 1,  0.80, 0, 0},
    {"P100-SXM2",      NV,  {0x15f9},         16280 * MiB,  21.2 * TF,  0, 732 * GBs,  80 * GBs,  6.25 * GBs, 4,  0.75, 0, 0},
    {"P100-PCIe",      NV,  {0x15f8},         16280 * MiB,  18.7 * TF,  0, 732 * GBs,  16 * GBs,  6.25 * GBs, 1,  0.75, 0, 0},
    /* 0x15f7 is the 12 GB card (pci.ids: "Tesla P100 PCIe 12GB"; NVIDIA's
     * P100 datasheet: 12 GB of HBM2 at 549 GB/s): priced as the 16 GB one,
     * it would "fit" jobs that run out of memory */
    {"P100-PCIe-12GB", NV,  {0x15f7},         12198 * MiB,  18.7 * TF,  0, 549 * GBs,  16 * GBs,  6.25 * GBs, 1,  0.75, 0, 0},
    {"T4",             NV,  {0x1eb8},         15360 * MiB,  65 * TF,    0, 320 * GBs,  16 * GBs,  12.5 * GBs, 1,  0.70, 0, 0},
    {"A100-40GB",      NV,  {0x20b0},         40960 * MiB,  312 * TF,   1, 1555 * GBs, 300 * GBs, 25 * GBs,   8,  0.85, 0, 0},
    {"A100-80GB",      NV,  {0x20b2},         81920 * MiB,  312 * TF,   1, 2039 * GBs, 300 * GBs, 25 * GBs,   8,  0.85, 0, 0},
    {"A100-PCIe-40GB", NV,  {0x20b1, 0x20f1}, 40960 * MiB,  312 * TF,   1, 1555 * GBs, 32 * GBs,  25 * GBs,   1,  0.81, 0, 0},
    {"A100-PCIe-80GB", NV,  {0x20b5},         81920 * MiB,  312 * TF,   1, 1935 * GBs, 32 * GBs,  25 * GBs,   1,  0.81, 0, 0},
    /* A10 datasheet (https://www.nvidia.com/en-us/data-center/products/a10-gpu/): 24 GB
     * GDDR6 at 600 GB/s, bf16 125 dense (250 with sparsity), no FP8, PCIe Gen4, no NVLink;
     * nvidia-smi reports 23028 MiB */
    {"A10",            NV,  {0x2236},         23028 * MiB,  125 * TF,   1, 600 * GBs,  32 * GBs,  12.5 * GBs, 1,  0.80, 0, 0},
    /* A40 datasheet (https://www.nvidia.com/en-us/data-center/a40/): 48 GB GDDR6 at 696 GB/s,
     * bf16 149.7 dense (299.4 with sparsity), no FP8, PCIe Gen4, an NVLink bridge to one
     * other card at 112.5 GB/s both ways; nvidia-smi reports 46068 MiB */
    {"A40",            NV,  {0x2235},         46068 * MiB,  149.7 * TF, 1, 696 * GBs,  56.25 * GBs, 25 * GBs, 2,  0.80, 0, 0},
    {"H100-SXM",       NV,  {0x2330},         81559 * MiB,  989 * TF,   1, 3350 * GBs, 450 * GBs, 50 * GBs,   8,  0.80, 1979 * TF, 1},
    {"H100-PCIe",      NV,  {0x2331},         81559 * MiB,  756 * TF,   1, 2000 * GBs, 32 * GBs,  25 * GBs,   1,  0.66, 1513 * TF, 1},
    {"H100-NVL",       NV,  {0x2321},         95830 * MiB,  835 * TF,   1, 3900 * GBs, 300 * GBs, 25 * GBs,   2,  0.60, 1671 * TF, 1},
    {"H800",           NV,  {0x2324},         81559 * MiB,  989 * TF,   1, 3350 * GBs, 200 * GBs, 50 * GBs,   8,  0.80, 1979 * TF, 1},
    /* HGX H20 (NVIDIA H20 product brief, https://www.nvidia.com/en-us/data-center/h20/ as
     * reproduced by its resellers): 96 GB HBM3 at 4.0 TB/s, 148 bf16 / 296 fp8 dense, NVLink
     * 900 GB/s both ways; nvidia-smi reports 97871 MiB */
    {"H20",            NV,  {0x2329},         97871 * MiB,  148 * TF,   1, 4000 * GBs, 450 * GBs, 50 * GBs,   8,  0.80, 296 * TF, 1},
    {"H200",           NV,  {0x2335},         143771 * MiB, 989 * TF,   1, 4800 * GBs, 450 * GBs, 50 * GBs,   8,  0.80, 1979 * TF, 1},
    {"GH200",          NV,  {0x2342, 0x2348}, 97871 * MiB,  989 * TF,   1, 4000 * GBs, 150 * GBs, 25 * GBs,   4,  0.83, 1979 * TF, 1},
    {"B200",           NV,  {0x2901},         183359 * MiB, 2250 * TF,  1, 8000 * GBs, 900 * GBs, 50 * GBs,   8,  0.75, 4500 * TF, 2},
    /* HGX B300 (https://www.nvidia.com/en-us/data-center/hgx/: 8 GPUs, bf16 36 and fp8 72
     * PFLOPS with sparsity, so 2250 and 4500 dense each; NVLink 5 1.8 TB/s both ways; 8 TB/s
     * HBM3e); DGX B300: one 800G ConnectX-8 per GPU; nvidia-smi reports 275040 MiB; CC 10.3 */
    {"B300",           NV,  {0x3182},         275040 * MiB, 2250 * TF,  1, 8000 * GBs, 900 * GBs, 100 * GBs,  8,  0.75, 4500 * TF, 2},
    /* GB200 NVL72 (https://www.nvidia.com/en-us/data-center/gb200-nvl72/: 72 GPUs, bf16 360
     * and fp8 720 PFLOPS with sparsity, so 2500 and 5000 dense each; 1.8 TB/s NVLink 5 per
     * GPU across the 72; 8 TB/s HBM3e); a node is a compute tray of 4 GPUs with a 400G
     * ConnectX-7 each; the island of 72 spans trays, so a job on whole trays has NVLink
     * between them (mesh_nvlink_fabric: TP may span trays, and traffic between trays is
     * priced at link_bw); nvidia-smi reports 189471 MiB; CC 10.0 */
    {"GB200",          NV,  {0x2941},         189471 * MiB, 2500 * TF,  1, 8000 * GBs, 900 * GBs, 50 * GBs,   72, 0.75, 5000 * TF, 2, 4},
    /* GB300 NVL72 (https://www.nvidia.com/en-us/data-center/gb300-nvl72/: 72 Blackwell Ultra
     * GPUs, bf16 360 and fp8 720 PFLOPS with sparsity, so 2500 and 5000 dense each; 1.8 TB/s
     * NVLink 5 per GPU across the 72; 8 TB/s HBM3e; one 800G ConnectX-8 per GPU); trays of 4
     * as GB200's; CC 10.3.  Memory: 288 GB marketed, and reports disagree (284208 MiB in one
     * tool's nvidia-smi fixture, 256703 MiB measured on driver 595.71.05): the lesser, so no
     * plan counts memory a node may not have; hwloc's figure, where it has one, wins */
    {"GB300",          NV,  {0x31c2},         256703 * MiB, 2500 * TF,  1, 8000 * GBs, 900 * GBs, 100 * GBs,  72, GB300_GEMM_EFF, 5000 * TF, 2, 4},
    /* L40S datasheet (https://www.nvidia.com/en-us/data-center/l40s/) */
    {"L40S",           NV,  {0x26b9},         46068 * MiB,  362 * TF,   1, 864 * GBs,  32 * GBs,  25 * GBs,   1,  0.70, 733 * TF, 0},
    /* L4 datasheet (https://www.nvidia.com/en-us/data-center/l4/): 24 GB GDDR6 at 300 GB/s,
     * bf16 242 and fp8 485 with sparsity (121 and 242.5 dense), PCIe Gen4 x16, no NVLink;
     * nvidia-smi reports 23034 MiB */
    {"L4",             NV,  {0x27b8},         23034 * MiB,  121 * TF,   1, 300 * GBs,  32 * GBs,  12.5 * GBs, 1,  0.70, 242.5 * TF, 0},
    /* RTX 6000 Ada datasheet (https://www.nvidia.com/en-us/design-visualization/rtx-6000/):
     * 48 GB GDDR6 at 960 GB/s, fp8 1457 with sparsity (728.5 dense), PCIe Gen4 x16, no
     * NVLink; bf16 364.2 dense: 568 tensor cores x 2505 MHz x 256, as the L40S's 362 is
     * 568 x 2520 x 256 less its datasheet's rounding (the datasheet gives fp8 only);
     * nvidia-smi reports 49140 MiB */
    {"RTX-6000-Ada",   NV,  {0x26b1},         49140 * MiB,  364.2 * TF, 1, 960 * GBs,  32 * GBs,  25 * GBs,   1,  0.70, 728.5 * TF, 0},
    {"MI50-32GB",      AMD, {0x66a1},         32768 * MiB,  26.5 * TF,  0, 1024 * GBs, 32 * GBs,  12.5 * GBs, 1,  0.60, 0, 0},
    {"MI250X",         AMD, {0x7408, 0x740c}, 65520 * MiB,  191.5 * TF, 1, 1600 * GBs, 50 * GBs,  12.5 * GBs, 8,  0.75, 0, 0},
    {"MI300X",         AMD, {0x74a1},         196592 * MiB, 1307 * TF,  1, 5300 * GBs, 448 * GBs, 50 * GBs,   8,  0.55, 2615 * TF, 0},
    {"MI325X",         AMD, {0x74a5},         262144 * MiB, 1307 * TF,  1, 6000 * GBs, 448 * GBs, 50 * GBs,   8,  0.60, 2615 * TF, 0},
    /* MI355X datasheet (https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/
     * product-briefs/amd-instinct-mi355x-gpu-brochure.pdf): 288 GB HBM3E at 8 TB/s, bf16 2.5
     * and fp8 5 PFLOPS dense, 7 Infinity Fabric links of 153.6 GB/s both ways (76.8 one way
     * each); MXFP8 in hardware, but Transformer Engine's MXFP8 recipe is for CC 10.x */
    {"MI355X",         AMD, {0x75a3},         294912 * MiB, 2500 * TF,  1, 8000 * GBs, 537.6 * GBs, 50 * GBs, 8,  0.60, 5000 * TF, 0},
};
#pragma GCC diagnostic pop
/* clang-format on */

int mesh_gpu_count(void)
{
    return MESH_ARRAY_LEN(table);
}

const mesh_gpu_t *mesh_gpu_at(int i)
{
    return i >= 0 && i < MESH_ARRAY_LEN(table) ? &table[i] : NULL;
}

/* Product names: what `nvidia-smi --query-gpu=name` prints (the NVIDIA
 * driver's name for the PCI id), what amd-smi and rocminfo print, and what
 * lspci prints (pci.ids), each with the PCI device id its source gives it,
 * so that a name and the id of the same card give the same GPU
 * (tests/unit/test_policy.c checks it).  A product name that is ambiguous
 * here, such as "NVIDIA H100" (0x2339, a variant the table lacks), has no
 * row.  Sources:
 *   drv  NVIDIA/open-gpu-kernel-modules README.md, "Compatible GPUs" (product
 *        name per PCI id; B200 from the 570 releases on)
 *   inst NVIDIA/nvidia-installer misc.c, nvpci_dev_is_vgpu_gsp()'s list
 *        (product names of the Volta, Pascal and Turing ids)
 *   rp   runpod/docs references/gpu-types.mdx (GPU ids: the names
 *        nvidia-smi prints on RunPod's machines)
 *   ray  ray-project/ray python/ray/_private/accelerators/amd_gpu.py
 *        (amd-smi's market names, '-' for ' ')
 *   smi  ROCm/vllm pull request 359 (amdsmi market_name and product_name)
 *   pci  the pci.ids database, as lspci prints it
 *   op   ROCm/gpu-operator DefaultPFDeviceIDs ("75a3", // MI355X) */
/* clang-format off */
static const mesh_gpu_alias_t aliases[] = {
    /* alias,                        table name,       PCI id     source */
    {"Tesla V100-SXM2-16GB",        "V100-16GB",      0x1db1}, /* inst, rp */
    {"Tesla V100-SXM2-32GB",        "V100-32GB",      0x1db5}, /* inst, rp */
    {"Tesla V100-PCIE-16GB",        "V100-PCIe-16GB", 0x1db4}, /* inst, rp */
    {"Tesla V100-PCIE-32GB",        "V100-PCIe-32GB", 0x1db6}, /* inst */
    {"Tesla V100S-PCIE-32GB",       "V100-PCIe-32GB", 0x1df6}, /* inst */
    {"Tesla P100-SXM2-16GB",        "P100-SXM2",      0x15f9}, /* inst */
    {"Tesla P100-PCIE-16GB",        "P100-PCIe",      0x15f8}, /* inst */
    {"Tesla P100-PCIE-12GB",        "P100-PCIe-12GB", 0x15f7}, /* inst */
    {"Tesla T4",                    "T4",             0x1eb8}, /* inst */
    {"NVIDIA A100-SXM4-40GB",       "A100-40GB",      0x20b0}, /* drv */
    {"NVIDIA A100-SXM4-80GB",       "A100-80GB",      0x20b2}, /* drv, rp */
    {"NVIDIA A100-PCIE-40GB",       "A100-PCIe-40GB", 0x20f1}, /* drv */
    {"NVIDIA A100 80GB PCIe",       "A100-PCIe-80GB", 0x20b5}, /* drv, rp */
    {"NVIDIA A10",                  "A10",            0x2236}, /* drv */
    {"NVIDIA A40",                  "A40",            0x2235}, /* drv */
    {"NVIDIA H100 80GB HBM3",       "H100-SXM",       0x2330}, /* drv, rp */
    {"H100 SXM5 80GB",              "H100-SXM",       0x2330}, /* pci */
    {"NVIDIA H100 PCIe",            "H100-PCIe",      0x2331}, /* drv, rp */
    {"NVIDIA H100 NVL",             "H100-NVL",       0x2321}, /* drv, rp */
    {"NVIDIA H800",                 "H800",           0x2324}, /* drv */
    {"NVIDIA H20",                  "H20",            0x2329}, /* drv */
    {"NVIDIA H200",                 "H200",           0x2335}, /* drv, rp */
    {"NVIDIA GH200 480GB",          "GH200",          0x2342}, /* drv */
    {"NVIDIA GH200 120GB",          "GH200",          0x2342}, /* drv */
    {"NVIDIA B200",                 "B200",           0x2901}, /* drv, rp */
    {"NVIDIA B300 SXM6 AC",         "B300",           0x3182}, /* drv, rp */
    {"NVIDIA GB200",                "GB200",          0x2941}, /* drv */
    {"NVIDIA GB300",                "GB300",          0x31c2}, /* drv */
    {"NVIDIA L40S",                 "L40S",           0x26b9}, /* drv, rp */
    {"NVIDIA L4",                   "L4",             0x27b8}, /* drv */
    {"NVIDIA RTX 6000 Ada Generation", "RTX-6000-Ada", 0x26b1}, /* drv, rp */
    {"AMD Instinct MI250X",         "MI250X",         0x7408}, /* ray */
    {"AMD Instinct MI250X / MI250", "MI250X",         0x740c}, /* ray */
    {"AMD Instinct MI300X",         "MI300X",         0x74a1}, /* smi */
    {"AMD Instinct MI300X OAM",     "MI300X",         0x74a1}, /* smi, ray, rp */
    {"AMD Instinct MI325X OAM",     "MI325X",         0x74a5}, /* ray */
    {"AMD Instinct MI355X OAM",     "MI355X",         0x75a3}, /* ray, op */
};
/* clang-format on */

int mesh_gpu_alias_count(void)
{
    return MESH_ARRAY_LEN(aliases);
}

const mesh_gpu_alias_t *mesh_gpu_alias_at(int i)
{
    return i >= 0 && i < MESH_ARRAY_LEN(aliases) ? &aliases[i] : NULL;
}

/* The words a product name may start with ("NVIDIA H200", "Tesla T4", "AMD
 * Instinct MI300X"): a name means the same with them or without. */
static const char *const vendor_words[] = {"nvidia-", "tesla-", "amd-", "instinct-"};

/* A GPU name as names are compared: lower case, each run of ' ', '-', '_'
 * and '/' one '-' (so "H100 PCIe", "h100-pcie" and Kubernetes' label
 * "NVIDIA-H100-PCIe" are one name), without the vendor words in front; into
 * key[KEY_MAX], truncated. */
enum { KEY_MAX = 64 };
static const char *name_key(const char *name, char key[KEY_MAX])
{
    size_t n = 0;
    for (const char *c = name; *c && n + 1 < KEY_MAX; c++) {
        if (!strchr(" -_/", *c))
            key[n++] = (char)tolower((unsigned char)*c);
        else if (n && key[n - 1] != '-')
            key[n++] = '-';
    }
    while (n && key[n - 1] == '-')
        n--;
    key[n] = '\0';
    char *k = key;
    for (int i = 0; i < MESH_ARRAY_LEN(vendor_words); i++)
        if (strncmp(k, vendor_words[i], strlen(vendor_words[i])) == 0) {
            k += strlen(vendor_words[i]);
            i = -1; /* "AMD Instinct": the next word may be one too */
        }
    return k;
}

/* The table's entry called exactly `name` (as the alias table writes it). */
static const mesh_gpu_t *table_entry(const char *name)
{
    for (int i = 0; i < MESH_ARRAY_LEN(table); i++)
        if (strcmp(table[i].name, name) == 0)
            return &table[i];
    return NULL;
}

const mesh_gpu_t *mesh_gpu_find(const char *name)
{
    char want[KEY_MAX], have[KEY_MAX];
    const char *k = name ? name_key(name, want) : "";
    for (int i = 0; *k && i < MESH_ARRAY_LEN(table); i++)
        if (strcmp(name_key(table[i].name, have), k) == 0)
            return &table[i];
    for (int i = 0; *k && i < MESH_ARRAY_LEN(aliases); i++)
        if (strcmp(name_key(aliases[i].alias, have), k) == 0)
            return table_entry(aliases[i].name);
    return NULL;
}

/* "A (80 GiB, NVLink x8)": a GPU as one of several choices. */
static void describe(const mesh_gpu_t *g, char *buf, size_t len)
{
    double gib = g->memory / 1073741824.0;
    if (g->island > 1)
        snprintf(buf, len, "%s (%.0f GiB, NVLink x%d)", g->name, gib, g->island);
    else
        snprintf(buf, len, "%s (%.0f GiB, no NVLink)", g->name, gib);
}

/* The table's GPUs whose names start with the word(s) of `key` (a short
 * name: "H100" starts H100-SXM, H100-PCIe and H100-NVL), into out[]; how
 * many there are. */
static int starting_with(const char *key, const mesh_gpu_t *out[], int max)
{
    char have[KEY_MAX];
    size_t n = strlen(key);
    int found = 0;
    for (int i = 0; n && i < MESH_ARRAY_LEN(table); i++) {
        const char *k = name_key(table[i].name, have);
        if (strncmp(k, key, n) == 0 && k[n] == '-' && found < max)
            out[found++] = &table[i];
    }
    return found;
}

/* The model a name key says: its words up to the first with a digit in it
 * ("h100" of "h100-sxm", "rtx-6000" of "rtx-6000-ada", "mi300x" of
 * "mi300x-oam"), each letter o read as a zero, into out[KEY_MAX]. */
static void model_of(const char *key, char out[KEY_MAX])
{
    size_t n = 0;
    int digit = 0;
    for (const char *c = key; *c && n + 1 < KEY_MAX && !(digit && *c == '-'); c++) {
        digit |= isdigit((unsigned char)*c) != 0;
        out[n++] = *c == 'o' ? '0' : *c;
    }
    out[n] = '\0';
}

/* Whether a typo of `typed` may be offered as `name`, by their keys: how far
 * apart they are (mesh_typo_of), or 3 when they are no typo of each other.
 * Why more than the distance: GPU names one character apart are often two
 * real GPUs of different sizes (H20 and H200, A10 and A100, L4 and L40):
 * offering one for the other would plan for memory the user does not have.
 * So a typo is offered only when it leaves the model alone (the vendor's
 * letters and the number, the words model_of keeps: so the same vendor and
 * generation) and changes the rest, the form factor, memory or variant
 * ("H100-SMX": H100-SXM), a zero typed as a letter O counting as the model
 * ("H10O-SXM": H100-SXM). */
static int typo_key(const char *typed, const char *name)
{
    char a[KEY_MAX], b[KEY_MAX];
    model_of(typed, a);
    model_of(name, b);
    return strcmp(a, b) == 0 ? mesh_typo_of(typed, name) : 3;
}

int mesh_gpu_typo(const char *typed, const char *name)
{
    char ka[KEY_MAX], kb[KEY_MAX];
    return typo_key(name_key(typed, ka), name_key(name, kb));
}

/* The table's GPU a typo of `key` most likely meant, by its name or a
 * product name (mesh_gpu_typo), or NULL. */
static const mesh_gpu_t *typo_of(const char *key)
{
    char have[KEY_MAX];
    const mesh_gpu_t *best = NULL;
    int best_d = 3;
    for (int i = 0; i < MESH_ARRAY_LEN(table) + MESH_ARRAY_LEN(aliases); i++) {
        int is_table = i < MESH_ARRAY_LEN(table);
        const char *name = is_table ? table[i].name : aliases[i - MESH_ARRAY_LEN(table)].alias;
        int d = typo_key(key, name_key(name, have));
        if (d < best_d) {
            best = is_table ? &table[i] : table_entry(aliases[i - MESH_ARRAY_LEN(table)].name);
            best_d = d;
        }
    }
    return best;
}

int mesh_gpu_choices(const char *name)
{
    char want[KEY_MAX];
    const mesh_gpu_t *several[8];
    return starting_with(name_key(name, want), several, MESH_ARRAY_LEN(several));
}

const char *mesh_gpu_guess(const char *name)
{
    char want[KEY_MAX];
    const char *k = name_key(name, want);
    const mesh_gpu_t *several[8], *guess;
    guess = starting_with(k, several, MESH_ARRAY_LEN(several)) == 1 ? several[0] : typo_of(k);
    return guess ? guess->name : NULL;
}

int mesh_gpu_same_name(const char *a, const char *b)
{
    char ka[KEY_MAX], kb[KEY_MAX];
    return strcmp(name_key(a, ka), name_key(b, kb)) == 0;
}

/* The table's names, space-separated, into list[len]: whole names only, and
 * " ..." where the rest does not fit (`meshplan gpus` lists them all), so
 * that the message keeps its end ("did you mean") within MESH_ERROR_MAX. */
static void known_names(char *list, size_t len)
{
    size_t used = 0;
    list[0] = '\0';
    for (int i = 0; i < MESH_ARRAY_LEN(table); i++) {
        size_t w = strlen(table[i].name) + (i ? 1 : 0);
        if (used + w + sizeof(" ...") > len) {
            snprintf(list + used, len - used, " ...");
            return;
        }
        used += (size_t)snprintf(list + used, len - used, "%s%s", i ? " " : "", table[i].name);
    }
}

int mesh_gpu_name_error(const char *key, const char *name, mesh_error_t *err)
{
    char want[KEY_MAX], list[MESH_ERROR_MAX * 5 / 8] = "";
    const mesh_gpu_t *several[8];
    int n = starting_with(name_key(name ? name : "", want), several, MESH_ARRAY_LEN(several));
    size_t used = 0;
    if (n > 1) { /* a short name: any one choice can be wrong, the user knows which */
        for (int i = 0; i < n && used < sizeof(list); i++) {
            char one[80];
            describe(several[i], one, sizeof(one));
            used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "", one);
        }
        return mesh_error_set(err,
                              "%s: '%.40s' is %d GPUs: %s; name one (nvidia-smi "
                              "--query-gpu=name prints yours)",
                              key, name, n, list);
    }
    known_names(list, sizeof(list));
    const char *guess = mesh_gpu_guess(name ? name : "");
    return mesh_error_set(err, "%s: unknown GPU '%.40s' (known: %s)%s%s%s", key, name ? name : "",
                          list, guess ? "; did you mean " : "", guess ? guess : "",
                          guess ? "?" : "");
}

int mesh_gpu_lookup(const char *name, mesh_gpu_t *out, mesh_error_t *err)
{
    const mesh_gpu_t *g = mesh_gpu_find(name);
    if (!g)
        return mesh_gpu_name_error("gpu", name, err);
    *out = *g;
    return 0;
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
