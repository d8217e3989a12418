/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The rank map: Megatron's order, groups, node contiguity.
 */
#include "moeutil.h"
#include "testutil.h"

static mesh_layout_t layout(int tp, int cp, int dp, int pp)
{
    mesh_layout_t l = {.tp = tp,
                       .cp = cp,
                       .dp = dp,
                       .pp = pp,
                       .zero = 0,
                       .vpp = 1,
                       .micro_batch = 1,
                       .recompute = MESH_RECOMPUTE_NONE};
    return l;
}

static void assert_group(const mesh_layout_t *l, long rank, mesh_axis_t axis, const long *want)
{
    long got[64];
    int n = mesh_axis_size(l, axis);
    mesh_rank_group(l, rank, axis, got);
    for (int i = 0; i < n; i++)
        if (got[i] != want[i])
            fail_msg("rank %ld %s group member %d: %ld, want %ld", rank, mesh_axis_name(axis), i,
                     got[i], want[i]);
}

static void design_example__rank13(void **state)
{
    /* world 16, t 2, p 4, d 2 (doc/design.md, "Rank map"; Megatron's docstring) */
    mesh_layout_t l = layout(2, 1, 2, 4);
    mesh_coords_t c = mesh_rank_coords(&l, 13);
    assert_int_equal(c.tp, 1);
    assert_int_equal(c.dp, 0);
    assert_int_equal(c.pp, 3);
    assert_int_equal(c.cp, 0);
    assert_int_equal(mesh_rank_of(&l, &c), 13);
    assert_group(&l, 13, MESH_AXIS_TP, (long[]){12, 13});
    assert_group(&l, 13, MESH_AXIS_DP, (long[]){13, 15});
    assert_group(&l, 13, MESH_AXIS_PP, (long[]){1, 5, 9, 13});
    assert_group(&l, 2, MESH_AXIS_PP, (long[]){2, 6, 10, 14});
    assert_group(&l, 13, MESH_AXIS_CP, (long[]){13});
    /* a dense layout (ep, etp 0): one expert rank of one, the stage its
     * expert-data group (ranks.h), rank 13 the stage's fourth */
    assert_int_equal(mesh_axis_size(&l, MESH_AXIS_EP), 1);
    assert_int_equal(mesh_axis_size(&l, MESH_AXIS_ETP), 1);
    assert_int_equal(mesh_axis_size(&l, MESH_AXIS_EDP), 4);
    assert_int_equal(c.ep, 0);
    assert_int_equal(c.etp, 0);
    assert_int_equal(c.edp, 1);
    assert_group(&l, 13, MESH_AXIS_EDP, (long[]){12, 13, 14, 15});
}

static void context_parallel__order(void **state)
{
    /* world 16, t 2, c 2, d 2, p 2: CP [0,2], DP [0,4], PP [0,8] */
    mesh_layout_t l = layout(2, 2, 2, 2);
    assert_group(&l, 0, MESH_AXIS_CP, (long[]){0, 2});
    assert_group(&l, 1, MESH_AXIS_CP, (long[]){1, 3});
    assert_group(&l, 0, MESH_AXIS_DP, (long[]){0, 4});
    assert_group(&l, 7, MESH_AXIS_PP, (long[]){7, 15});
}

static void groups__tile_the_world(void **state)
{
    static const int shapes[][4] = {
        {2, 1, 2, 4}, {8, 1, 4, 2}, {4, 2, 2, 2}, {1, 1, 16, 1}, {2, 2, 1, 4}};
    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        mesh_layout_t l = layout(shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3]);
        long world = mesh_layout_world(&l);
        for (int axis = MESH_AXIS_TP; axis <= MESH_AXIS_PP; axis++) {
            int seen[64] = {0};
            long g[64];
            for (long r = 0; r < world; r++) {
                mesh_rank_group(&l, r, (mesh_axis_t)axis, g);
                int n = mesh_axis_size(&l, (mesh_axis_t)axis), mine = 0;
                for (int i = 0; i < n; i++) {
                    assert_true(g[i] >= 0 && g[i] < world);
                    if (i)
                        assert_true(g[i] > g[i - 1]);
                    mine += g[i] == r;
                    /* members differ from r in this coordinate only */
                    mesh_coords_t a = mesh_rank_coords(&l, r), b = mesh_rank_coords(&l, g[i]);
                    int same = (a.tp == b.tp) + (a.cp == b.cp) + (a.dp == b.dp) + (a.pp == b.pp);
                    assert_true(same >= 3);
                }
                assert_int_equal(mine, 1);
                if (g[0] == r)
                    for (int i = 0; i < n; i++)
                        seen[g[i]]++;
            }
            for (long r = 0; r < world; r++)
                assert_int_equal(seen[r], 1); /* every rank in exactly one group */
        }
    }
}

static void tp_groups__inside_a_node(void **state)
{
    /* tp divides the GPUs per node and ranks are node-contiguous */
    mesh_layout_t l = layout(4, 1, 4, 4);
    long g[4];
    for (long r = 0; r < 64; r++) {
        mesh_rank_group(&l, r, MESH_AXIS_TP, g);
        assert_int_equal(g[0] / 8, g[3] / 8);
    }
}

/* ---- independent expectations: the rank map by brute force ----
 * doc/design.md, "Rank map": rank = tp + t*(cp + c*(dp + d*pp)) (Megatron's order,
 * TP fastest); a group is the ranks that differ from a rank in one
 * coordinate only.  The test enumerates every coordinate tuple with nested
 * loops, and finds each group by scanning the whole world: nothing below
 * calls the library to know what to expect. */

#define BF_WORLD_MAX 128

typedef struct bf_map {
    int size[4]; /* t, c, d, p: axes in the order of mesh_axis_t */
    long world;
    int co[BF_WORLD_MAX][4]; /* co[rank][axis] */
} bf_map_t;

static void bf_make(bf_map_t *m, int t, int c, int d, int p)
{
    memset(m, 0, sizeof(*m));
    m->size[0] = t, m->size[1] = c, m->size[2] = d, m->size[3] = p;
    m->world = (long)t * c * d * p;
    assert_true(m->world <= BF_WORLD_MAX);
    int hits[BF_WORLD_MAX] = {0};
    for (int pp = 0; pp < p; pp++)
        for (int dp = 0; dp < d; dp++)
            for (int cp = 0; cp < c; cp++)
                for (int tp = 0; tp < t; tp++) {
                    long r = tp + (long)t * (cp + (long)c * (dp + (long)d * pp));
                    assert_true(r >= 0 && r < m->world);
                    hits[r]++;
                    m->co[r][0] = tp, m->co[r][1] = cp, m->co[r][2] = dp, m->co[r][3] = pp;
                }
    for (long r = 0; r < m->world; r++)
        assert_int_equal(hits[r], 1); /* the formula is a bijection onto 0..world-1 */
}

/* The group of r along axis: every rank equal to r in the other three
 * coordinates, ascending (the scan goes up); returns its size. */
static int bf_group(const bf_map_t *m, long r, int axis, long *out)
{
    int n = 0;
    for (long q = 0; q < m->world; q++) {
        int same = 1;
        for (int a = 0; a < 4; a++)
            if (a != axis && m->co[q][a] != m->co[r][a])
                same = 0;
        if (same)
            out[n++] = q;
    }
    return n;
}

static void coords_and_groups__brute_force(void **state)
{
    /* {t, c, d, p, vpp}: the doc's example, cp>1, tp=1, each axis alone,
     * a non-power-of-two cp, a 64-rank mix, interleaving (vpp does not move
     * ranks: Megatron's virtual stages live inside one rank) */
    static const int shapes[][5] = {
        {2, 1, 2, 4, 1},  {2, 2, 2, 2, 1}, {1, 2, 4, 2, 1}, {4, 1, 1, 1, 1}, {1, 1, 1, 8, 1},
        {1, 1, 16, 1, 1}, {1, 4, 1, 1, 1}, {2, 3, 2, 2, 1}, {8, 1, 4, 2, 1}, {2, 1, 2, 4, 4},
        {4, 2, 2, 2, 2},  {1, 4, 2, 4, 1}, {2, 2, 1, 4, 2}, {1, 1, 1, 1, 1}};
    static const mesh_axis_t axes[4] = {MESH_AXIS_TP, MESH_AXIS_CP, MESH_AXIS_DP, MESH_AXIS_PP};
    static bf_map_t m;
    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        const int *k = shapes[s];
        bf_make(&m, k[0], k[1], k[2], k[3]);
        mesh_layout_t l = layout(k[0], k[1], k[2], k[3]);
        l.vpp = k[4];
        assert_int_equal(mesh_layout_world(&l), m.world);
        for (long r = 0; r < m.world; r++) {
            mesh_coords_t c = mesh_rank_coords(&l, r);
            int got[4] = {c.tp, c.cp, c.dp, c.pp};
            for (int a = 0; a < 4; a++)
                if (got[a] != m.co[r][a])
                    fail_msg("t%d c%d d%d p%d: rank %ld %s coordinate %d, want %d", k[0], k[1],
                             k[2], k[3], r, mesh_axis_name(axes[a]), got[a], m.co[r][a]);
            /* a dense layout: the expert axes left 0, as mesh_rank_of reads them */
            mesh_coords_t want = {
                .tp = m.co[r][0], .cp = m.co[r][1], .dp = m.co[r][2], .pp = m.co[r][3]};
            assert_int_equal(mesh_rank_of(&l, &want), r);
            for (int a = 0; a < 4; a++) {
                long bf[BF_WORLD_MAX] = {0}, lib[BF_WORLD_MAX] = {0};
                int n = bf_group(&m, r, a, bf);
                assert_int_equal(n, k[a]); /* a group spans its whole axis */
                assert_int_equal(mesh_axis_size(&l, axes[a]), n);
                mesh_rank_group(&l, r, axes[a], lib);
                for (int i = 0; i < n; i++)
                    if (lib[i] != bf[i])
                        fail_msg("t%d c%d d%d p%d: rank %ld %s group member %d: %ld, want %ld",
                                 k[0], k[1], k[2], k[3], r, mesh_axis_name(axes[a]), i, lib[i],
                                 bf[i]);
                long first, stride;
                mesh_rank_group_span(&l, r, axes[a], &first, &stride);
                assert_int_equal(first, bf[0]);
                if (n > 1) /* an arithmetic progression: the stride is any gap */
                    assert_int_equal(stride, bf[1] - bf[0]);
            }
        }
    }
}

static void axis_names__design_order(void **state)
{
    /* MESH_ORDER=tp-cp-dp-pp (doc/design.md, "Rank map"), fastest first */
    assert_string_equal(MESH_ORDER, "tp-cp-dp-pp");
    assert_string_equal(mesh_axis_name(MESH_AXIS_TP), "tp");
    assert_string_equal(mesh_axis_name(MESH_AXIS_CP), "cp");
    assert_string_equal(mesh_axis_name(MESH_AXIS_DP), "dp");
    assert_string_equal(mesh_axis_name(MESH_AXIS_PP), "pp");
}

/* ---- mixture of experts, MLA and MTP ---- */

/* Megatron-Core's generate_masked_orthogonal_rank_groups
 * (megatron/core/parallel_state.py at 00caa53), ported independently of
 * lib/ranks.c: sizes in order (fastest first), a mask of the axes a group
 * spans; the group holding `rank` goes to out, ascending. */
static int megatron_group(const int *sizes, const int *mask, int n, long rank, long *out)
{
    long stride[8], coord[8];
    stride[0] = 1;
    for (int i = 1; i <= n; i++)
        stride[i] = stride[i - 1] * sizes[i - 1];
    for (int i = 0; i < n; i++)
        coord[i] = rank / stride[i] % sizes[i];
    /* vary the masked coordinates, hold the others: rank_in_group decomposes
     * over the masked sizes, fastest first */
    long group = 1, base = 0;
    for (int i = 0; i < n; i++)
        if (mask[i])
            group *= sizes[i];
        else
            base += coord[i] * stride[i];
    for (long g = 0; g < group; g++) {
        long r = base, rest = g;
        for (int i = 0; i < n; i++)
            if (mask[i]) {
                r += rest % sizes[i] * stride[i];
                rest /= sizes[i];
            }
        out[g] = r;
    }
    /* ascending (the generator's order is ascending for one-axis groups) */
    for (long i = 1; i < group; i++)
        for (long j = i; j > 0 && out[j] < out[j - 1]; j--) {
            long t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return (int)group;
}

static void ranks__expert_groups_are_megatrons(void **state)
{
    static const char *layouts[] = {
        "tp=2,pp=2,dp=4,cp=1,ep=4,etp=1", "tp=2,pp=2,dp=4,cp=1,ep=2,etp=2",
        "tp=1,pp=4,dp=4,cp=1,ep=4,etp=1", "tp=2,pp=1,dp=4,cp=2,ep=4,etp=2",
        "tp=4,pp=2,dp=2,cp=1,ep=8,etp=1", "tp=1,pp=1,dp=16,cp=1,ep=2,etp=4",
    };
    for (size_t i = 0; i < sizeof(layouts) / sizeof(*layouts); i++) {
        mesh_layout_t l = test_mesh(layouts[i]);
        long world = mesh_layout_world(&l), edp = mesh_layout_edp(&l);
        /* the expert generator: (tp=etp, ep, dp=edp, pp), order tp-cp-ep-dp-pp */
        int sizes[] = {l.etp, l.ep, (int)edp, l.pp};
        static const int masks[3][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}};
        static const mesh_axis_t axes[3] = {MESH_AXIS_ETP, MESH_AXIS_EP, MESH_AXIS_EDP};
        for (long r = 0; r < world; r++) {
            mesh_coords_t c = mesh_rank_coords(&l, r);
            assert_int_equal(r % ((long)l.tp * l.cp * l.dp),
                             c.etp + (long)l.etp * (c.ep + (long)l.ep * c.edp));
            for (int k = 0; k < 3; k++) {
                long want[64], got[64];
                int n = megatron_group(sizes, masks[k], 4, r, want);
                assert_int_equal(mesh_axis_size(&l, axes[k]), n);
                mesh_rank_group(&l, r, axes[k], got);
                for (int j = 0; j < n; j++)
                    if (got[j] != want[j])
                        fail_msg("%s rank %ld %s group member %d: %ld, Megatron-Core %ld",
                                 layouts[i], r, mesh_axis_name(axes[k]), j, got[j], want[j]);
            }
            /* the PP groups of both generators agree (Megatron asserts it) */
            long pp_want[16], pp_got[16];
            int order[] = {l.tp, l.cp, l.dp, l.pp}, ppmask[] = {0, 0, 0, 1};
            int n = megatron_group(order, ppmask, 4, r, pp_want);
            megatron_group(sizes, ppmask, 4, r, pp_got);
            for (int j = 0; j < n; j++)
                assert_int_equal(pp_want[j], pp_got[j]);
        }
    }
    /* the worked example of doc/design.md, section 8 */
    mesh_layout_t l = test_mesh("tp=2,pp=2,dp=4,cp=1,ep=4,etp=1");
    long g[8];
    mesh_rank_group(&l, 5, MESH_AXIS_EP, g);
    assert_true(g[0] == 4 && g[1] == 5 && g[2] == 6 && g[3] == 7);
    mesh_rank_group(&l, 5, MESH_AXIS_EDP, g);
    assert_true(g[0] == 1 && g[1] == 5);
    assert_string_equal(mesh_axis_name(MESH_AXIS_EDP), "edp");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ranks__expert_groups_are_megatrons),
        cmocka_unit_test(design_example__rank13),
        cmocka_unit_test(context_parallel__order),
        cmocka_unit_test(groups__tile_the_world),
        cmocka_unit_test(tp_groups__inside_a_node),
        cmocka_unit_test(coords_and_groups__brute_force),
        cmocka_unit_test(axis_names__design_order),
    };
    return cmocka_run_group_tests_name("ranks", tests, NULL, NULL);
}
