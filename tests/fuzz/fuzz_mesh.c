/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The --mesh string.  A string that pins every field must print back
 * (mesh_layout_format, the canonical MESH_PLAN form) to a string that parses
 * to the same pins.  The canonical form writes the memory levers (offload,
 * moments, tp_overlap) only when they are used: one left out reads as not
 * used; and a MoE
 * layout's ep and etp where they are set (a dense layout has none).
 */
#include "fuzz.h"

static int complete(const mesh_layout_t *l)
{
    const int v[] = {l->tp,
                     l->pp,
                     l->dp,
                     l->cp,
                     l->zero,
                     l->vpp,
                     l->micro_batch,
                     (int)l->recompute,
                     l->sequence_parallel};
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        if (v[i] < 0) /* MESH_FREE or MESH_AUTO */
            return 0;
    return l->offload != MESH_AUTO && (int)l->moments != MESH_AUTO && l->ep != MESH_AUTO &&
           l->etp != MESH_AUTO && l->tp_overlap_off != MESH_AUTO;
}

/* The levers as the canonical form means them: left out is off. */
static void levers_off(mesh_layout_t *l)
{
    if (l->offload == MESH_FREE)
        l->offload = 0;
    if ((int)l->moments == MESH_FREE)
        l->moments = MESH_PREC_FP32;
    if (l->tp_overlap_off == MESH_FREE) /* left out, TP's overlap is on */
        l->tp_overlap_off = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_string(data, size);
    mesh_layout_t l, again;
    mesh_error_t err;
    char canon[MESH_LAYOUT_STR_MAX];
    if (s && mesh_layout_parse(s, &l, &err) == 0 && complete(&l)) {
        mesh_layout_format(&l, canon, sizeof(canon));
        if (mesh_layout_parse(canon, &again, &err) < 0)
            abort();
        levers_off(&l);
        levers_off(&again);
        if (memcmp(&l, &again, sizeof(l)) != 0)
            abort();
    }
    free(s);
    return 0;
}
