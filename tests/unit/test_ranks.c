/*
 * The rank map: Megatron's order, groups, node contiguity.
 */
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
    /* world 16, t 2, p 4, d 2 (DESIGN section 6; Megatron's docstring) */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(design_example__rank13),
        cmocka_unit_test(context_parallel__order),
        cmocka_unit_test(groups__tile_the_world),
        cmocka_unit_test(tp_groups__inside_a_node),
    };
    return cmocka_run_group_tests_name("ranks", tests, NULL, NULL);
}
