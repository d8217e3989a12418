/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The rank map: Megatron-LM's order tp-cp-dp-pp, TP fastest
 * (megatron/core/parallel_state.py, RankGenerator: strides are the prefix
 * products of the sizes in order).  The expert layers' groups come from
 * its second generator, (etp, ep, edp, pp) in the same order string: PP
 * stays outermost, so they re-partition each stage's ranks.
 */
#include "meshplan/ranks.h"

static const char *const axis_names[] = {"tp", "cp", "dp", "pp", "ep", "etp", "edp"};

const char *mesh_axis_name(mesh_axis_t axis)
{
    return axis >= MESH_AXIS_TP && axis <= MESH_AXIS_EDP ? axis_names[axis] : "?";
}

static int ep_of(const mesh_layout_t *l)
{
    return l->ep > 0 ? l->ep : 1;
}

static int etp_of(const mesh_layout_t *l)
{
    return l->etp > 0 ? l->etp : 1;
}

mesh_coords_t mesh_rank_coords(const mesh_layout_t *l, long rank)
{
    mesh_coords_t c;
    long stage = (long)l->tp * l->cp * l->dp, local = rank % stage;
    c.tp = (int)(rank % l->tp);
    c.cp = (int)(rank / l->tp % l->cp);
    c.dp = (int)(rank / ((long)l->tp * l->cp) % l->dp);
    c.pp = (int)(rank / stage);
    c.etp = (int)(local % etp_of(l));
    c.ep = (int)(local / etp_of(l) % ep_of(l));
    c.edp = (int)(local / ((long)etp_of(l) * ep_of(l)));
    return c;
}

long mesh_rank_of(const mesh_layout_t *l, const mesh_coords_t *c)
{
    return c->tp + (long)l->tp * (c->cp + (long)l->cp * (c->dp + (long)l->dp * c->pp));
}

int mesh_axis_size(const mesh_layout_t *l, mesh_axis_t axis)
{
    switch (axis) {
    case MESH_AXIS_TP: return l->tp;
    case MESH_AXIS_CP: return l->cp;
    case MESH_AXIS_DP: return l->dp;
    case MESH_AXIS_EP: return ep_of(l);
    case MESH_AXIS_ETP: return etp_of(l);
    case MESH_AXIS_EDP: return (int)mesh_layout_edp(l);
    default: return l->pp;
    }
}

static long axis_stride(const mesh_layout_t *l, mesh_axis_t axis)
{
    /* the expert axes count within a stage, expert TP fastest */
    if (axis == MESH_AXIS_ETP)
        return 1;
    if (axis == MESH_AXIS_EP)
        return etp_of(l);
    if (axis == MESH_AXIS_EDP)
        return (long)etp_of(l) * ep_of(l);
    long stride = 1;
    for (int a = MESH_AXIS_TP; a < (int)axis && a <= MESH_AXIS_PP; a++)
        stride *= mesh_axis_size(l, (mesh_axis_t)a);
    return stride;
}

void mesh_rank_group_span(const mesh_layout_t *l, long rank, mesh_axis_t axis, long *first,
                          long *stride)
{
    /* vary one coordinate, hold the others: the rank minus its own offset
     * along the axis, then each offset in turn (ascending) */
    *stride = axis_stride(l, axis);
    *first = rank - (rank / *stride % mesh_axis_size(l, axis)) * *stride;
}

void mesh_rank_group(const mesh_layout_t *l, long rank, mesh_axis_t axis, long *out)
{
    long first, stride;
    mesh_rank_group_span(l, rank, axis, &first, &stride);
    for (int i = 0; i < mesh_axis_size(l, axis); i++)
        out[i] = first + i * stride;
}
