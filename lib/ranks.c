/*
 * The rank map: Megatron-LM's order tp-cp-dp-pp, TP fastest
 * (megatron/core/parallel_state.py, RankGenerator: strides are the prefix
 * products of the sizes in order).
 */
#include "meshplan/ranks.h"

static const char *const axis_names[] = {"tp", "cp", "dp", "pp"};

const char *mesh_axis_name(mesh_axis_t axis)
{
    return axis >= MESH_AXIS_TP && axis <= MESH_AXIS_PP ? axis_names[axis] : "?";
}

mesh_coords_t mesh_rank_coords(const mesh_layout_t *l, long rank)
{
    mesh_coords_t c;
    c.tp = (int)(rank % l->tp);
    c.cp = (int)(rank / l->tp % l->cp);
    c.dp = (int)(rank / ((long)l->tp * l->cp) % l->dp);
    c.pp = (int)(rank / ((long)l->tp * l->cp * l->dp));
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
    default: return l->pp;
    }
}

static long axis_stride(const mesh_layout_t *l, mesh_axis_t axis)
{
    long stride = 1;
    for (int a = MESH_AXIS_TP; a < (int)axis; a++)
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
