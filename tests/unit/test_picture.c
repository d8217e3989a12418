/*
 * Pictures: the simulated schedule against the bubble formula, and the
 * text and SVG views against the plan they draw.
 */
#include <math.h>
#include <unistd.h>

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
        int work[64] = {0};
        for (int a = 0; a < n; a++) {
            work[ops[a].stage] += ops[a].len;
            for (int b = 0; b < n; b++) { /* the unit it waits for ended before it */
                int ga = ops[a].chunk * pp + ops[a].stage, gb = ops[b].chunk * pp + ops[b].stage;
                if (ops[a].mb != ops[b].mb)
                    continue;
                if ((ops[a].kind == 'F' && ops[b].kind == 'F' && gb == ga - 1) ||
                    (ops[a].kind == 'B' && ops[b].kind == 'B' && gb == ga + 1) ||
                    (ops[a].kind == 'B' && ops[b].kind == 'F' && gb == ga))
                    assert_true(ops[b].start + ops[b].len <= ops[a].start);
            }
        }
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

/* Strip ANSI colour sequences; the width of the longest line. */
static int widest(const char *s, int *escapes)
{
    int w = 0, best = 0;
    *escapes = 0;
    for (; *s; s++) {
        if (*s == '\033') {
            (*escapes)++;
            while (*s && *s != 'm')
                s++;
            continue;
        }
        w = *s == '\n' ? 0 : w + 1;
        best = w > best ? w : best;
    }
    return best;
}

static mesh_plan_t *plan(const char *model, int nodes, const char *mesh)
{
    mesh_model_t m = test_preset(model);
    mesh_alloc_t a = test_alloc("H100-SXM", nodes, 8);
    return test_plan(&m, &a, mesh);
}

static void text__ranks_pipeline_memory(void **state)
{
    /* DESIGN section 6's example: rank 13 (node 1, GPU 5) is stage 3, replica 0, tp 1 */
    mesh_model_t m = test_preset("llama2-7b");
    m.global_batch = 16;
    mesh_alloc_t a = test_alloc("H100-SXM", 2, 8);
    mesh_plan_t *p =
        test_plan(&m, &a, "tp=2,pp=4,dp=2,cp=1,zero=1,vpp=1,mb=2,recompute=none,sp=on");
    mesh_picture_opts_t plain = {.color = 0, .width = 100}, color = {.color = 1, .width = 100};
    char *t = mesh_picture_text(p, &plain);
    int esc;
    assert_non_null(strstr(t, "node 1    2.0.0 2.0.1 2.1.0 2.1.1 3.0.0 3.0.1 3.1.0 3.1.1"));
    assert_non_null(
        strstr(t, "Pipeline: 4 stages, 4 micro-batches, 1F1B; bubble (p-1)/(v*m) = 75.0%"));
    assert_non_null(strstr(t, "stage 3   ...0aa1bb2cc3dd"));
    assert_non_null(strstr(t, "Memory of the worst rank (stage 0)"));
    assert_true(widest(t, &esc) <= 100);
    assert_int_equal(esc, 0);
    free(t);
    t = mesh_picture_text(p, &color);
    assert_true(widest(t, &esc) <= 100);
    assert_true(esc > 50);
    free(t);
    mesh_plan_destroy(p);
}

static void text__big_allocations_summarised(void **state)
{
    mesh_plan_t *p = plan("llama3.1-405b", 2048, "tp=8,pp=16,dp=128,zero=2,vpp=4");
    mesh_picture_opts_t o = {.color = 0, .width = 100};
    char *t = mesh_picture_text(p, &o);
    int lines = 0, esc;
    for (const char *c = t; (c = strchr(c, '\n')); c++)
        lines++;
    assert_true(lines < 60);
    assert_true(widest(t, &esc) <= 100);
    assert_non_null(strstr(t, "node 128  1.0.0")); /* the first node of stage 1 is shown */
    assert_non_null(strstr(t, "node 2047 15.127.0"));
    assert_non_null(strstr(t, "one column is 3 time slots"));
    free(t);
    /* a narrow terminal: still within it */
    o.width = 60;
    t = mesh_picture_text(p, &o);
    assert_true(widest(t, &esc) <= 60 + 10); /* the rank map's node label is fixed */
    free(t);
    mesh_plan_destroy(p);
}

static void text__memory_over_capacity(void **state)
{
    mesh_plan_t *p = plan("llama3.1-405b", 1, "auto");
    mesh_picture_opts_t o = {.color = 0, .width = 100};
    char *t = mesh_picture_memory(p, &o);
    assert_non_null(strstr(t, "DOES NOT FIT"));
    assert_non_null(strchr(strchr(t, '['), '|')); /* capacity marked inside the bar */
    free(t);
    mesh_plan_destroy(p);
}

static void svg__self_contained(void **state)
{
    mesh_plan_t *p = plan("llama3-70b", 4, "tp=4,pp=4,mb=1");
    char *svg = mesh_picture_svg(p);
    assert_true(strncmp(svg, "<?xml", 5) == 0);
    assert_non_null(strstr(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert_non_null(strstr(svg, "</svg>\n"));
    assert_null(strstr(svg, "<script"));
    assert_null(strstr(svg, "href"));
    assert_null(strstr(svg, "@import"));
    /* http appears once: the namespace */
    assert_null(strstr(strstr(svg, "http") + 4, "http"));
    int rects = 0;
    for (const char *c = svg; (c = strstr(c, "<rect")); c++)
        rects++;
    int drawn = 0;
    assert_int_equal(sscanf(strstr(svg, "drawn for "), "drawn for %d", &drawn), 1);
    /* 32 cells, 4 stage backgrounds, 5 memory parts and their keys, every unit drawn */
    assert_int_equal(rects, 1 + 32 + 4 + 2 * 4 * drawn + 10);
    assert_non_null(strstr(svg, "llama3-70b on 4 x 8 H100-SXM"));
    free(svg);
    mesh_plan_destroy(p);
}

/* Not a terminal (a pipe, as under make check): no colour, 100 columns. */
static void opts__no_colour_off_a_terminal(void **state)
{
    (void)state;
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    unsetenv("NO_COLOR");
    mesh_picture_opts_t po = mesh_picture_opts_for(fd[1]);
    assert_int_equal(po.color, 0);
    assert_int_equal(po.width, 100);
    close(fd[0]);
    close(fd[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(schedule__bubble_is_the_formula),
        cmocka_unit_test(opts__no_colour_off_a_terminal),
        cmocka_unit_test(text__ranks_pipeline_memory),
        cmocka_unit_test(text__big_allocations_summarised),
        cmocka_unit_test(text__memory_over_capacity),
        cmocka_unit_test(svg__self_contained),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
