/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan gpus: the GPU table, as the policy makes it.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

int cmd_gpus(const options_t *o)
{
    /* The GPUs as the policy makes them (mesh_policy_gpu_at): the figures
     * the policy sets marked '*', the GPUs it defines after the table's, then
     * the product names --gpu takes.  Every text line as wide as the header. */
    static const char *const json_keys[] = {"memory", "peak_flops", "hbm_bw",  "link_bw",
                                            "net_bw", "island",     "gemm_eff"};
    const mesh_assumptions_t *as = &o->pol.assume;
    int n = mesh_policy_gpu_count(as), w = 10, width, marks = 0, defined = 0;
    char line[256], list[160] = "";
    mesh_gpu_t g;
    for (int i = 0; i < n && mesh_policy_gpu_at(as, i, &g) >= 0; i++)
        w = (int)strlen(g.name) > w ? (int)strlen(g.name) : w;
    width = snprintf(line, sizeof(line), "%-*s %10s  %12s  %10s  %12s  %10s  %7s  %5s ", w, "GPU",
                     "memory", "dense TF/s", "HBM GB/s", "link GB/s", "net GB/s", "island", "GEMM");
    printf(o->json ? "[" : "%s\n", line);
    for (int i = 0; i < n; i++) {
        int origin = mesh_policy_gpu_at(as, i, &g);
        const mesh_gpu_override_t *ov = NULL; /* the policy's entry: names are the table's */
        for (int k = 0; k < as->n_gpu_overrides; k++)
            ov = strcmp(as->gpu_overrides[k].name, g.name) == 0 ? &as->gpu_overrides[k] : ov;
        int set[] = {ov && ov->memory > 0,  ov && ov->peak_flops > 0, ov && ov->hbm_bw > 0,
                     ov && ov->link_bw > 0, ov && ov->net_bw > 0,     ov && ov->island > 0,
                     ov && ov->gemm_eff > 0};
        char m[7], keys[160] = "", names[256] = "";
        for (int k = 0; k < 7; k++) {
            m[k] = set[k] ? '*' : ' ';
            marks |= set[k];
            if (set[k])
                snprintf(keys + strlen(keys), sizeof(keys) - strlen(keys), "%s\"%s\"",
                         *keys ? "," : "", json_keys[k]);
        }
        if (origin == MESH_GPU_DEFINED)
            snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
                     defined++ ? ", " : "", g.name);
        for (int k = 0; k < mesh_gpu_alias_count(); k++)
            if (strcmp(mesh_gpu_alias_at(k)->name, g.name) == 0)
                snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s\"%s\"",
                         *names ? "," : "", mesh_gpu_alias_at(k)->alias);
        if (o->json)
            printf("%s{\"name\":\"%s\",\"memory\":%.0f,\"peak_flops\":%.6g,\"bf16\":%s,"
                   "\"hbm_bw\":%.6g,\"link_bw\":%.6g,\"net_bw\":%.6g,\"island\":%d,"
                   "\"gemm_eff\":%.3g,\"source\":\"%s\",\"policy_sets\":[%s],\"aliases\":[%s]}",
                   i ? "," : "", g.name, g.memory, g.peak_flops, g.has_bf16 ? "true" : "false",
                   g.hbm_bw, g.link_bw, g.net_bw, g.island, g.gemm_eff,
                   origin == MESH_GPU_DEFINED ? "policy" : "table", keys, names);
        else
            printf("%-*s %6.1f GiB%c %7.0f%s%c %10.0f%c %12.0f%c %10.1f%c %7d%c %4.0f%%%c\n", w,
                   g.name, g.memory / 1073741824.0, m[0], g.peak_flops / 1e12,
                   g.has_bf16 ? " bf16" : " fp16", m[1], g.hbm_bw / 1e9, m[2], g.link_bw / 1e9,
                   m[3], g.net_bw / 1e9, m[4], g.island, m[5], 100 * g.gemm_eff, m[6]);
    }
    if (o->json)
        return printf("]\n"), EXIT_FITS;
    if (marks)
        printf("%-*s\n", width, "  *: the policy's figure (gpu.NAME.FIELD)");
    if (defined) {
        snprintf(line, sizeof(line), "  the policy defines %s (its other figures: H100-SXM's)",
                 list);
        printf("%-*s\n", width, line);
    }
    printf("%-*s\n", width, "  product names --gpu takes (what nvidia-smi, amd-smi, lspci print):");
    for (int k = 0; k < mesh_gpu_alias_count(); k++) {
        snprintf(line, sizeof(line), "    %-30s %s", mesh_gpu_alias_at(k)->alias,
                 mesh_gpu_alias_at(k)->name);
        printf("%-*s\n", width, line);
    }
    return EXIT_FITS;
}
