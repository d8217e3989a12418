/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lib/schedule.c: the pipeline schedule Megatron-LM runs (1F1B and
 * interleaved), simulated slot by slot, against the bubble formula and
 * orders written by hand.
 */
#include <math.h>

#include "testutil.h"

/* The schedule Megatron runs, slot by slot: every unit once, every
 * dependency respected, and each stage idle exactly (p-1)/(v*m) of its
 * work, the bubble of Narayanan et al. (2021), for 1F1B and interleaved. */
static void schedule__bubble_is_the_formula(void **state)
{
    static const int cases[][3] = {{2, 1, 1}, {4, 1, 8},  {4, 1, 3},   {8, 1, 64},
                                   {4, 2, 8}, {4, 4, 16}, {16, 4, 32}, {3, 2, 3}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        int pp = cases[i][0], vpp = cases[i][1], m = cases[i][2], n = 2 * pp * vpp * m;
        mesh_pipe_op_t *ops;
        int slots = mesh_pipe_schedule(pp, vpp, m, &ops);
        if (slots < 0)
            fail_msg("pp %d vpp %d m %d: no schedule", pp, vpp, m);
        /* one forward slot and two backward slots per unit, plus the fill */
        assert_int_equal(slots, 3 * (m * vpp + pp - 1));
        int work[64] = {0}, deps = 0;
        for (int a = 0; a < n; a++) {
            work[ops[a].stage] += ops[a].len;
            for (int b = 0; b < n; b++) { /* the unit it waits for ended before it */
                int ga = ops[a].chunk * pp + ops[a].stage, gb = ops[b].chunk * pp + ops[b].stage;
                if (ops[a].mb != ops[b].mb)
                    continue;
                if ((ops[a].kind == 'F' && ops[b].kind == 'F' && gb == ga - 1) ||
                    (ops[a].kind == 'B' && ops[b].kind == 'B' && gb == ga + 1) ||
                    (ops[a].kind == 'B' && ops[b].kind == 'F' && gb == ga)) {
                    assert_true(ops[b].start + ops[b].len <= ops[a].start);
                    deps++;
                }
            }
        }
        /* every forward but the first virtual stage's, every backward but
         * the last's, and every backward after its own forward: all checked */
        assert_int_equal(deps, (3 * pp * vpp - 2) * m);
        for (int s = 0; s < pp; s++) {
            assert_int_equal(work[s], 3 * m * vpp);
            double idle = (double)(slots - work[s]) / work[s];
            assert_true(fabs(idle - mesh_pipeline_bubble(pp, vpp, m)) < 1e-12);
        }
        free(ops);
    }
    mesh_pipe_op_t *ops;
    assert_int_equal(mesh_pipe_schedule(4, 2, 6, &ops), -1); /* interleaving needs m % p == 0 */
    assert_null(ops);
    assert_int_equal(mesh_pipe_schedule(0, 1, 4, &ops), -1);
}

/* Each stage's timeline, two characters a slot: the kind ('F' forward, 'B'
 * backward, in lower case for model chunk 1) and the micro-batch; ".." idle. */
static void timeline(const mesh_pipe_op_t *ops, int n, int stage, int slots, char *out)
{
    memset(out, '.', 2 * (size_t)slots);
    out[2 * slots] = '\0';
    for (int i = 0; i < n; i++) {
        if (ops[i].stage != stage)
            continue;
        for (int t = ops[i].start; t < ops[i].start + ops[i].len; t++) {
            if (t < 0 || t >= slots || out[2 * t] != '.')
                fail_msg("stage %d: slot %d is used twice or out of the schedule", stage, t);
            out[2 * t] = ops[i].chunk ? (char)(ops[i].kind - 'A' + 'a') : ops[i].kind;
            out[2 * t + 1] = (char)('0' + ops[i].mb);
        }
    }
}

/* Megatron's schedules written out by hand.  1F1B: stage s runs
 * min(p-s-1, m) forwards, then one forward and one backward in turn, then
 * the remaining backwards.  Interleaved (v chunks): forwards go in groups
 * of p micro-batches through chunk 0, then chunk 1, ...; backwards the
 * other way round; stage s warms up with (p-s-1)*2 + (v-1)*p forwards, or
 * all of them when m == p.  Each unit starts as soon as its stage is free
 * and its input is there: the previous virtual stage's forward, the next
 * one's backward (the last one's own forward).  A forward takes one slot,
 * a backward two. */
static void schedule__hand_written_orders(void **state)
{
    (void)state;
    static const struct {
        int pp, vpp, m;
        const char *rows[4];
    } cases[] = {
        {1, 1, 2, {"F0B0B0F1B1B1"}},
        {2, 1, 2, {"F0F1....B0B0..B1B1", "..F0B0B0F1B1B1...."}},
        {2, 1, 3, {"F0F1....B0B0F2B1B1..B2B2", "..F0B0B0F1B1B1F2B2B2...."}},
        {3,
         1,
         4,
         {"F0F1F2........B0B0F3B1B1..B2B2..B3B3", "..F0F1....B0B0F2B1B1F3B2B2..B3B3....",
          "....F0B0B0F1B1B1F2B2B2F3B3B3........"}},
        {4,
         1,
         4,
         {"F0F1F2F3............B0B0..B1B1..B2B2..B3B3",
          "..F0F1F2........B0B0F3B1B1..B2B2..B3B3....",
          "....F0F1....B0B0F2B1B1F3B2B2..B3B3........",
          "......F0B0B0F1B1B1F2B2B2F3B3B3............"}},
        /* fewer micro-batches than stages: the warm-up is cut short */
        {4,
         1,
         2,
         {"F0F1................B0B0..B1B1", "..F0F1..........B0B0..B1B1....",
          "....F0F1....B0B0..B1B1........", "......F0B0B0F1B1B1............"}},
        {2,
         2,
         4,
         {"F0F1f0f1F2..b0b0F3b1b1f2B0B0f3B1B1..b2b2..b3b3B2B2B3B3",
          "..F0F1f0b0b0f1b1b1F2B0B0F3B1B1f2b2b2f3b3b3B2B2B3B3...."}},
        /* m == p: every forward first */
        {3,
         2,
         3,
         {"F0F1F2f0f1f2............b0b0b1b1b2b2B0B0B1B1B2B2",
          "..F0F1F2f0f1f2......b0b0b1b1b2b2B0B0B1B1B2B2....",
          "....F0F1F2f0f1f2b0b0b1b1b2b2B0B0B1B1B2B2........"}},
        {3,
         2,
         6,
         {"F0F1F2f0f1f2F3F4....b0b0F5b1b1f3b2b2f4B0B0f5B1B1..B2B2..b3b3..b4b4..b5b5B3B3B4B4B5B5",
          "..F0F1F2f0f1f2..b0b0F3b1b1F4b2b2F5B0B0f3B1B1f4B2B2f5b3b3..b4b4..b5b5B3B3B4B4B5B5....",
          "....F0F1F2f0b0b0f1b1b1f2b2b2F3B0B0F4B1B1F5B2B2f3b3b3f4b4b4f5b5b5B3B3B4B4B5B5........"}},
        {4,
         2,
         8,
         {"F0F1F2F3f0f1f2f3F4F5F6......b0b0F7b1b1..f4b2b2f5b3b3f6B0B0f7B1B1B2B2..B3B3..b4b4..b5b5.."
          "b6b6..b7b7B4B4B5B5B6B6B7B7",
          "..F0F1F2F3f0f1f2f3F4....b0b0F5b1b1F6b2b2F7b3b3f4B0B0f5B1B1f6B2B2f7B3B3..b4b4..b5b5..b6b6"
          "..b7b7B4B4B5B5B6B6B7B7....",
          "....F0F1F2F3f0f1f2..b0b0f3b1b1F4b2b2F5b3b3F6B0B0F7B1B1f4B2B2f5B3B3f6b4b4f7b5b5..b6b6..b7"
          "b7B4B4B5B5B6B6B7B7........",
          "......F0F1F2F3f0b0b0f1b1b1f2b2b2f3b3b3F4B0B0F5B1B1F6B2B2F7B3B3f4b4b4f5b5b5f6b6b6f7b7b7B4"
          "B4B5B5B6B6B7B7............"}},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        int pp = cases[i].pp, vpp = cases[i].vpp, m = cases[i].m, n = 2 * pp * vpp * m;
        mesh_pipe_op_t *ops;
        int slots = mesh_pipe_schedule(pp, vpp, m, &ops);
        assert_int_equal(slots, (int)strlen(cases[i].rows[0]) / 2);
        char row[256];
        for (int s = 0; s < pp; s++) {
            timeline(ops, n, s, slots, row);
            if (strcmp(row, cases[i].rows[s]) != 0)
                fail_msg("pp %d vpp %d m %d, stage %d:\n  got  %s\n  want %s", pp, vpp, m, s, row,
                         cases[i].rows[s]);
        }
        free(ops);
    }
}

/* No unit waits longer than it must: each starts when both its stage is
 * free (its previous unit ended) and its input is ready. */
static void schedule__every_unit_as_soon_as_it_can(void **state)
{
    (void)state;
    static const int cases[][3] = {{2, 1, 5}, {4, 1, 8},  {8, 1, 3},
                                   {4, 2, 8}, {4, 4, 12}, {5, 3, 10}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        int pp = cases[i][0], vpp = cases[i][1], m = cases[i][2], n = 2 * pp * vpp * m;
        int last = pp * vpp - 1, checked = 0;
        mesh_pipe_op_t *ops;
        assert_true(mesh_pipe_schedule(pp, vpp, m, &ops) > 0);
        for (int a = 0; a < n; a++) {
            int g = ops[a].chunk * pp + ops[a].stage, ready = 0, free_at = 0;
            for (int b = 0; b < n; b++) {
                int gb = ops[b].chunk * pp + ops[b].stage, end = ops[b].start + ops[b].len;
                if (ops[b].stage == ops[a].stage && end <= ops[a].start && end > free_at)
                    free_at = end;
                if (ops[b].mb != ops[a].mb)
                    continue;
                if ((ops[a].kind == 'F' && ops[b].kind == 'F' && gb == g - 1) ||
                    (ops[a].kind == 'B' && g == last && ops[b].kind == 'F' && gb == g) ||
                    (ops[a].kind == 'B' && g < last && ops[b].kind == 'B' && gb == g + 1))
                    ready = end;
            }
            assert_int_equal(ops[a].start, ready > free_at ? ready : free_at);
            assert_int_equal(ops[a].len, ops[a].kind == 'F' ? 1 : 2);
            checked++;
        }
        assert_int_equal(checked, n);
        free(ops);
    }
}

static void schedule__bad_arguments(void **state)
{
    (void)state;
    mesh_pipe_op_t *ops = (mesh_pipe_op_t *)&ops;
    /* no stage, chunk or micro-batch; interleaving with m % p != 0; more
     * than 2^20 stage-chunk-micro-batches */
    const int bad[][3] = {{0, 1, 4},       {4, 0, 4},       {4, 1, 0}, {4, 2, 6},
                          {1024, 1024, 2}, {1, 1, 1048577}, {-1, 1, 1}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        ops = (mesh_pipe_op_t *)&ops;
        assert_int_equal(mesh_pipe_schedule(bad[i][0], bad[i][1], bad[i][2], &ops), -1);
        assert_null(ops);
    }
    /* the smallest: one forward, then its backward */
    assert_int_equal(mesh_pipe_schedule(1, 1, 1, &ops), 3);
    assert_int_equal(ops[0].kind, 'F');
    assert_int_equal(ops[1].kind, 'B');
    assert_int_equal(ops[1].start, 1);
    free(ops);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(schedule__bubble_is_the_formula),
        cmocka_unit_test(schedule__hand_written_orders),
        cmocka_unit_test(schedule__every_unit_as_soon_as_it_can),
        cmocka_unit_test(schedule__bad_arguments),
    };
    return cmocka_run_group_tests_name("schedule", tests, NULL, NULL);
}
