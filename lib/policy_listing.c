/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An admin's check of a policy (meshplan policy check): every setting as
 * it takes effect, the partitions with the GPU each stands for, what looks
 * like a mistake though it reads, and the verdict.  A policy that does not
 * read never gets here: its error is the check's answer.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "meshplan/listing.h"

#define GiB 1073741824.0

/* What is legal but most likely not meant: one line each into b (text:
 * "  - LINE\n"; JSON: strings).  Returns how many. */
static int warnings(mesh_buf_t *b, const mesh_policy_t *p, int json)
{
    char w[4][200];
    int n = 0;
    if (p->enforce == MESH_ENFORCE_OFF)
        snprintf(w[n++], sizeof(w[0]),
                 "enforce=off: a job whose layout does not fit is queued, and fails on its nodes");
    /* what reserve and headroom leave of each GPU for the plans */
    double left = (1 - p->assume.reserve) * (1 - p->assume.headroom);
    if (left < 0.5)
        snprintf(w[n++], sizeof(w[0]),
                 "reserve=%g and headroom=%g leave plans %.0f%% of each GPU's memory",
                 p->assume.reserve, p->assume.headroom, 100 * left);
    for (int i = 0; i < p->controller.n_partitions && n < 4; i++)
        if (!p->controller.partitions[i].nodes) {
            snprintf(w[n++], sizeof(w[0]),
                     "partition %s gives no nodes: a sized job's range is not cut to it",
                     p->controller.partitions[i].name);
            break;
        }
    for (int i = 0; i < n; i++) {
        if (json) {
            mesh_buf_puts(b, i ? "," : "");
            mesh_buf_json_string(b, w[i]);
        } else {
            mesh_buf_printf(b, "  - %s\n", w[i]);
        }
    }
    return n;
}

/* Partition q's GPU as plans on it get it, by the allocation the
 * controller makes for it (mesh_partition_alloc's): the partition's GPU
 * (else the policy's gpu=) with the policy's overrides, or memory alone (its
 * gpu_mem:, else the policy's gpu_mem=) on a generic GPU; the partition's
 * memory and island.  0, or -1 when it gives neither GPU nor memory. */
static int partition_gpu(const mesh_policy_t *p, const mesh_partition_t *q, mesh_gpu_t *g)
{
    mesh_alloc_t a;
    mesh_error_t err;
    /* one node of as many GPUs as an island may have: the island uncut */
    if (mesh_policy_alloc(&p->assume, q->gpu[0] ? q->gpu : NULL, q->gpu_mem, q->island, 1, 1 << 20,
                          &a, &err) < 0)
        return -1;
    *g = a.gpu;
    g->island = a.island;
    return 0;
}

static void partitions(mesh_buf_t *b, const mesh_policy_t *p, int json)
{
    if (!json)
        mesh_buf_printf(b, "\npartitions%s\n",
                        p->controller.n_partitions ? "" : ": none (every job plans on gpu=)");
    for (int i = 0; i < p->controller.n_partitions; i++) {
        const mesh_partition_t *q = &p->controller.partitions[i];
        mesh_gpu_t g;
        int known = partition_gpu(p, q, &g) == 0;
        if (json) {
            mesh_buf_puts(b, i ? ",{\"name\":" : "{\"name\":");
            mesh_buf_json_string(b, q->name);
            mesh_buf_puts(b, ",\"gpu\":");
            if (known)
                mesh_buf_json_string(b, g.name);
            else
                mesh_buf_puts(b, "null");
            mesh_buf_printf(b, ",\"memory\":%.0f,\"usable\":%.0f,\"island\":%d,\"nodes\":%d}",
                            known ? g.memory : 0, known ? mesh_policy_usable(&p->assume, &g) : 0,
                            known ? g.island : 0, q->nodes);
        } else if (known) {
            mesh_buf_printf(
                b, "  %-16s %-12s %6.1f GiB (%.1f usable), NVLink island %d, %s%d nodes\n", q->name,
                g.name, g.memory / GiB, mesh_policy_usable(&p->assume, &g) / GiB, g.island,
                q->nodes ? "" : "? ", q->nodes);
        } else {
            mesh_buf_printf(
                b, "  %-16s no GPU (give it gpu: or gpu_mem:, or the policy gpu= or gpu_mem=)\n",
                q->name);
        }
    }
}

char *mesh_listing_policy(const mesh_policy_t *p, const char *path, int json)
{
    mesh_policy_t dflt;
    mesh_policy_init(&dflt);
    mesh_buf_t b;
    mesh_buf_init(&b);
    if (json) {
        mesh_buf_puts(&b, "{\"path\":");
        if (path)
            mesh_buf_json_string(&b, path);
        else
            mesh_buf_puts(&b, "null");
        mesh_buf_puts(&b, ",\"settings\":{");
    } else {
        mesh_buf_printf(&b, "policy %s\n\nsettings (* where the policy changes the default)\n",
                        path ? path : "(none: the defaults)");
    }
    const char *name, *same;
    char v[MESH_PATH_MAX + 32], d[MESH_PATH_MAX + 32];
    for (int i = 0; mesh_policy_key_text(p, i, &name, v, sizeof(v)) == 0; i++) {
        mesh_policy_key_text(&dflt, i, &same, d, sizeof(d));
        if (json) {
            mesh_buf_printf(&b, "%s\"%s\":", i ? "," : "", name);
            mesh_buf_json_string(&b, v);
        } else {
            mesh_buf_printf(&b, "  %c %-18s %s\n", strcmp(v, d) ? '*' : ' ', name, v);
        }
    }
    if (json)
        mesh_buf_printf(&b, "},\"gpu_entries\":%d,\"partitions\":[", p->assume.n_gpu_overrides);
    else if (p->assume.n_gpu_overrides)
        mesh_buf_printf(&b, "\ngpus: %d entries (meshplan gpus shows the table they make)\n",
                        p->assume.n_gpu_overrides);
    partitions(&b, p, json);
    mesh_buf_puts(&b, json ? "],\"warnings\":[" : "");
    mesh_buf_t w;
    mesh_buf_init(&w);
    int n = warnings(&w, p, json);
    if (!json && n)
        mesh_buf_puts(&b, "\nwarnings\n");
    mesh_buf_puts(&b, w.data ? w.data : "");
    mesh_buf_free(&w);
    if (json)
        mesh_buf_puts(&b, "],\"ok\":true}\n");
    else
        mesh_buf_printf(&b, "\nOK%s\n", n ? " (with the warnings above)" : "");
    return mesh_buf_take(&b);
}
