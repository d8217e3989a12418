/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Pictures: the simulated schedule against the bubble formula, and the
 * text and SVG views against the plan they draw.
 */
#include <ctype.h>
#include <fcntl.h>
#include <stdlib.h>
#include <math.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "testutil.h"

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

/* The worked example of doc/design.md, "Rank map": 2 nodes of 8, t 2, p 4, d 2. */
static mesh_plan_t *design_example(void)
{
    mesh_model_t m = test_preset("llama2-7b");
    m.global_batch = 16;
    mesh_alloc_t a = test_alloc("H100-SXM", 2, 8);
    return test_plan(&m, &a, "tp=2,pp=4,dp=2,cp=1,zero=1,vpp=1,mb=2,recompute=none,sp=on");
}

static void text__ranks_pipeline_memory(void **state)
{
    /* doc/design.md, "Rank map", example: rank 13 (node 1, GPU 5) is tp 1, dp 0, pp 3 */
    mesh_plan_t *p = design_example();
    mesh_picture_opts_t plain = {.color = 0, .width = 100}, color = {.color = 1, .width = 100};
    char *t = mesh_picture_text(p, &plain);
    int esc;
    assert_non_null(strstr(
        t, "1    8:0.0.2  9:1.0.2  10:0.1.2 11:1.1.2 12:0.0.3 13:1.0.3 14:0.1.3 15:1.1.3\n"));
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

/* In colour, the pipeline's slots are painted by what they hold: forward
 * green (42), backward blue (44), the odd model chunks' of an interleaved
 * schedule in the light ones (102, 104); black glyphs on each.  Checked on
 * every painted glyph of a plain schedule, an interleaved one of four
 * chunks (the third painted as the first), and one squeezed to F and B
 * columns. */
static void text__pipeline_painted_by_kind(void **state)
{
    (void)state;
    mesh_plan_t *plans[] = {design_example(),
                            plan("llama3-70b", 4, "tp=8,pp=4,dp=1,vpp=4,mb=1,recompute=full"),
                            plan("llama3.1-405b", 2048, "tp=8,pp=16,dp=128,zero=2,vpp=4")};
    int seen[128] = {0};
    for (int i = 0; i < 3; i++) {
        mesh_picture_opts_t o = {.color = 1, .width = i == 2 ? 60 : 200};
        char *t = mesh_picture_pipeline(plans[i], &o);
        int bg, squeezed = strstr(t, "one column is") != NULL;
        assert_int_equal(squeezed, i == 2);
        char glyph;
        for (const char *at = t; (at = strstr(at, "\033[30;")); at++) {
            assert_int_equal(sscanf(at, "\033[30;%dm%c", &bg, &glyph), 2);
            int want = squeezed                       ? (glyph == 'F'   ? 42
                                                         : glyph == 'B' ? 44
                                                                        : -1)
                       : glyph >= '0' && glyph <= '9' ? 42
                       : glyph >= 'a' && glyph <= 'j' ? 44
                       : glyph >= 'A' && glyph <= 'J' ? 102
                       : glyph >= 'K' && glyph <= 'T' ? 104
                                                      : -1;
            if (bg != want)
                fail_msg("plan %d: '%c' painted %d, not %d", i, glyph, bg, want);
            seen[bg < 128 ? bg : 0]++;
        }
        free(t);
        mesh_plan_destroy(plans[i]);
    }
    assert_true(seen[42] > 0 && seen[44] > 0 && seen[102] > 0 && seen[104] > 0);
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
    assert_non_null(strstr(t, "\n0    0:0.0.0 ")); /* the first two nodes */
    assert_non_null(strstr(t, "\n1    8:0.1.0 "));
    assert_non_null(strstr(t, "\n128  1024:0.0.1 ")); /* the first node of stage 1 is shown */
    assert_non_null(strstr(t, "\n2047 16376:0.127.15 "));
    assert_non_null(strstr(t, "one column is 3 time slots"));
    free(t);
    /* a narrow terminal: still within it */
    o.width = 60;
    t = mesh_picture_text(p, &o);
    assert_true(widest(t, &esc) <= 60 + 10); /* the rank map's node label is fixed */
    free(t);
    mesh_plan_destroy(p);
}

/* A rank map wider than the terminal is cut to as many GPU columns as
 * leave room for " ..." and no fewer: on 2048 nodes of 8 with cells of
 * 14 ("16376:0.127.15"), each cut row is within the width and one more
 * cell would not be. */
static void text__rank_rows_cut_at_the_width(void **state)
{
    (void)state;
    mesh_plan_t *p = plan("llama3.1-405b", 2048, "tp=8,pp=16,dp=128,zero=2,vpp=4");
    int cut = 0;
    for (int width = 40; width <= 140; width++) {
        mesh_picture_opts_t o = {.color = 0, .width = width};
        char *t = mesh_picture_ranks(p, &o);
        for (const char *l = t; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0)) {
            int n = (int)strcspn(l, "\n");
            if (n < 4 || strncmp(l + n - 4, " ...", 4) != 0 || !isdigit((unsigned char)*l))
                continue;
            cut++;
            /* node column of 4, cells of 14 and a space before each */
            if (n > width || n + 15 <= width)
                fail_msg("width %d: a cut row of %d: %.*s", width, n, n, l);
        }
        free(t);
    }
    assert_true(cut > 100);
    mesh_plan_destroy(p);
}

/* A sampled rank map says which nodes it shows: on 32 nodes of 8, pp 2
 * puts stage 1 on nodes 16-31, so nodes 0, 1, 16 and 31 are shown, one
 * stage besides the first; pp 4 adds nodes 8 and 24, stages 1 to 3. */
static void text__sampled_nodes_named(void **state)
{
    (void)state;
    static const struct {
        const char *mesh, *note;
    } cases[] = {
        {"tp=8,pp=2,dp=16", "(4 of 32 nodes shown: the first two, the first of stage 1, the last)"},
        {"tp=8,pp=4,dp=8",
         "(6 of 32 nodes shown: the first two, the first of stages 1 to 3, the last)"},
    };
    mesh_picture_opts_t o = {.color = 0, .width = 100};
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        mesh_plan_t *p = plan("llama2-7b", 32, cases[i].mesh);
        char *t = mesh_picture_text(p, &o);
        if (!strstr(t, cases[i].note))
            fail_msg("%s: no '%s' in\n%s", cases[i].mesh, cases[i].note, t);
        free(t);
        mesh_plan_destroy(p);
    }
    /* 16 nodes, the most a rank map shows whole: all, with no note; 17 are
     * sampled */
    mesh_model_t m = test_preset("llama2-7b");
    m.global_batch = 16 * 17;
    for (int nodes = 16; nodes <= 17; nodes++) {
        mesh_alloc_t a = test_alloc("H100-SXM", nodes, 8);
        mesh_plan_t *p = test_plan(&m, &a, "tp=8,pp=1");
        char *t = mesh_picture_text(p, &o), note[32], last[32];
        snprintf(note, sizeof(note), "of %d nodes shown", nodes);
        snprintf(last, sizeof(last), "\n%d ", nodes - 1);
        if ((strstr(t, note) != NULL) != (nodes == 17) || !strstr(t, last))
            fail_msg("%d nodes:\n%s", nodes, t);
        free(t);
        mesh_plan_destroy(p);
    }
}

static void text__memory_over_capacity(void **state)
{
    mesh_plan_t *p = plan("llama3.1-405b", 1, "auto");
    mesh_picture_opts_t o = {.color = 0, .width = 100};
    char *t = mesh_picture_memory(p, &o);
    assert_non_null(strstr(t, "DOES NOT FIT"));
    assert_non_null(strchr(strchr(t, '['), '|')); /* capacity marked inside the bar */
    free(t);
    /* a terminal narrower than the 84 columns of the 80-column bar's line:
     * the bar 4 columns narrower than it, its line (" [", the bar, "]")
     * within it */
    for (int width = 40; width <= 84; width += 4) {
        o.width = width;
        t = mesh_picture_memory(p, &o);
        const char *open = strchr(t, '['), *close = open ? strchr(open, ']') : NULL;
        assert_non_null(close);
        assert_int_equal(close - open - 1, width - 4);
        free(t);
    }
    /* a caller's width under 40 (1 included) is the narrowest drawn, 40;
     * only none (0 or less) means the default, whose bar is 80 */
    for (int width = -1; width < 40; width++) {
        o.width = width;
        t = mesh_picture_memory(p, &o);
        const char *open = strchr(t, '['), *close = open ? strchr(open, ']') : NULL;
        assert_non_null(close);
        if (close - open - 1 != (width <= 0 ? 80 : 36))
            fail_msg("width %d: a bar of %d", width, (int)(close - open - 1));
        free(t);
    }
    /* and every line of it within the width, the legend's too (its key
     * letter counted: at 44 a line of 45 once) */
    for (int width = 40; width <= 100; width++) {
        o.width = width;
        t = mesh_picture_memory(p, &o);
        for (const char *line = t; *line;) {
            size_t n = strcspn(line, "\n");
            if ((int)n > width)
                fail_msg("width %d: a line of %zu: %.*s", width, n, (int)n, line);
            line += n + (line[n] == '\n');
        }
        free(t);
    }
    mesh_plan_destroy(p);
}

/* The SVG rank map draws a node's every GPU when their cells fit the
 * width, however tightly: 12 cells of "11:0.11.0" (75 px with the gap
 * between them, 900 px across) fill it exactly, and none is cut for "...";
 * 13 do not, and the row ends in "..." after the 11 that leave it room. */
static void svg__rank_map_row_filled_exactly_shows_every_gpu(void **state)
{
    (void)state;
    mesh_model_t m = test_preset("llama3-8b");
    m.global_batch = 12 * 13; /* data parallel over either node */
    for (int gpus = 12; gpus <= 13; gpus++) {
        char mesh[64];
        snprintf(mesh, sizeof(mesh), "tp=1,pp=1,dp=%d,zero=1", gpus);
        mesh_alloc_t a = test_alloc("H100-SXM", 1, gpus);
        mesh_plan_t *p = test_plan(&m, &a, mesh);
        char *svg = mesh_picture_svg(p), last[32];
        snprintf(last, sizeof(last), ">%d:0.%d.0</text>", gpus - 1, gpus - 1);
        int cells = 0;
        for (const char *c = svg; (c = strstr(c, "height=\"22\"")); c++)
            cells++;
        assert_int_equal(cells, gpus == 12 ? 12 : 11);
        if (gpus == 12) {
            assert_non_null(strstr(svg, last));
            assert_null(strstr(svg, ">...</text>"));
        } else {
            assert_null(strstr(svg, last));
            assert_non_null(strstr(svg, ">...</text>"));
        }
        free(svg);
        mesh_plan_destroy(p);
    }
}

/* How many times needle occurs in text. */
static int count_of(const char *text, const char *needle)
{
    int n = 0;
    for (const char *c = text; (c = strstr(c, needle)); c++)
        n++;
    return n;
}

/* The SVG rank map says how many nodes it leaves out, and only between
 * the rows it draws: none on 2 nodes (both drawn); on 64 at pp 1 (nodes
 * 0, 1 and 63 drawn) one line, "... 61 nodes", after node 1's row; on 32
 * at pp 16 (two nodes a stage: nodes 0, 1, 2, 4, ..., 12 and 31 drawn)
 * "... 1 node" five times and "... 18 nodes" once. */
static void svg__rank_map_skips_only_between_rows(void **state)
{
    (void)state;
    static const struct {
        int nodes;
        const char *mesh, *skip;
        int skips, times;
    } cases[] = {
        {2, "tp=1,pp=1,cp=1,zero=1", ">... 61 nodes</text>", 0, 0},
        {64, "tp=1,pp=1,cp=1,zero=1", ">... 61 nodes</text>", 1, 1},
        {32, "tp=1,pp=16,cp=1,vpp=1,zero=1", ">... 1 node</text>", 6, 5},
    };
    mesh_model_t m = test_preset("llama3-8b");
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        mesh_alloc_t a = test_alloc("H100-SXM", cases[i].nodes, 8);
        m.global_batch = 8L * cases[i].nodes;
        mesh_plan_t *p = test_plan(&m, &a, cases[i].mesh);
        char *svg = mesh_picture_svg(p);
        const char *gap = strstr(svg, ">... "), *node1 = strstr(svg, ">8:0.8.0</text>");
        if (count_of(svg, ">... ") != cases[i].skips ||
            count_of(svg, cases[i].skip) != cases[i].times || (gap && (!node1 || gap < node1)))
            fail_msg("%d nodes: %d lines of nodes left out, %d of '%s'", cases[i].nodes,
                     count_of(svg, ">... "), count_of(svg, cases[i].skip), cases[i].skip);
        free(svg);
        mesh_plan_destroy(p);
    }
}

/* The SVG pipeline draws every time slot when each keeps the narrowest
 * width, 5 px, however tightly: 21 stages of 40 micro-batches take
 * 3 x (40 + 20) = 180 slots, 900 px across, and all are drawn; 41 take
 * 183, and the picture shows the fill and the drain with "..." between. */
static void svg__pipeline_filled_exactly_shows_every_slot(void **state)
{
    (void)state;
    mesh_model_t m = test_preset("llama3.1-405b");
    mesh_alloc_t a = test_alloc("H100-SXM", 21, 8);
    for (int mbs = 40; mbs <= 41; mbs++) {
        m.global_batch = mbs;
        mesh_plan_t *p = test_plan(&m, &a, "tp=8,pp=21,dp=1,vpp=1,mb=1");
        char *svg = mesh_picture_svg(p);
        const char *shown = strstr(svg, "shown: the first");
        if (mbs == 40)
            assert_null(shown);
        else
            assert_non_null(strstr(svg, "of its 183 time slots"));
        free(svg);
        mesh_plan_destroy(p);
    }
}

/* A pipeline's rows are 16 px high up to 32 stages, where a stage's name
 * and its units' numbers fit, and 6 px beyond, so that hundreds of stages
 * still make a picture one can scroll. */
static void svg__pipeline_rows_thin_past_32_stages(void **state)
{
    (void)state;
    mesh_model_t m = test_preset("llama3.1-405b");
    for (int pp = 32; pp <= 33; pp++) {
        mesh_alloc_t a = test_alloc("H100-SXM", pp, 8);
        char pins[64];
        snprintf(pins, sizeof(pins), "tp=8,pp=%d,dp=1,vpp=1,mb=1", pp);
        mesh_plan_t *p = test_plan(&m, &a, pins);
        char *svg = mesh_picture_svg(p);
        int rows16 = 0, rows6 = 0;
        for (const char *s = svg; (s = strstr(s, "height=\"")); s++) {
            rows16 += strncmp(s, "height=\"16\"", 11) == 0;
            rows6 += strncmp(s, "height=\"6\"", 10) == 0;
        }
        if (pp == 32 ? rows16 < 32 || rows6 : rows6 < 33 || rows16)
            fail_msg("pp %d: %d rows of 16 px, %d of 6", pp, rows16, rows6);
        free(svg);
        mesh_plan_destroy(p);
    }
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
    mesh_picture_opts_t po = mesh_picture_opts_for(fd[1], 0);
    assert_int_equal(po.color, 0);
    assert_int_equal(po.width, 100);
    close(fd[0]);
    close(fd[1]);
}

/* The one colour rule: a terminal, NO_COLOR unset or empty, TERM set, not
 * empty and not dumb (a pseudo-terminal stands for the user's). */
static void colour__one_rule_for_every_front_end(void **state)
{
    (void)state;
    int pipefd[2], master = posix_openpt(O_RDWR | O_NOCTTY), tty = -1;
    assert_int_equal(pipe(pipefd), 0);
    if (master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0)
        tty = open(ptsname(master), O_RDWR | O_NOCTTY);
    if (tty < 0)
        skip(); /* no pseudo-terminal here */
    assert_true(mesh_picture_color(tty, NULL, "xterm-256color"));
    assert_true(mesh_picture_color(tty, "", "xterm"));          /* NO_COLOR empty: unset */
    assert_false(mesh_picture_color(tty, "1", "xterm"));        /* no-color.org */
    assert_false(mesh_picture_color(tty, NULL, NULL));          /* TERM unset: cron, ssh -T */
    assert_false(mesh_picture_color(tty, NULL, ""));            /* empty */
    assert_false(mesh_picture_color(tty, NULL, "dumb"));        /* Emacs' shell */
    assert_false(mesh_picture_color(pipefd[1], NULL, "xterm")); /* not a terminal */
    close(tty);
    close(master);
    close(pipefd[0]);
    close(pipefd[1]);
}

/* The explained plan every front end shows: the report, the restart's
 * section, the pictures, each after a blank line, each only when asked. */
static void explained__report_restart_pictures(void **state)
{
    (void)state;
    mesh_model_t m = test_preset("llama3-8b");
    mesh_alloc_t a = test_alloc("H100-SXM", 2, 8);
    mesh_plan_t *p = test_plan(&m, &a, "auto");
    mesh_picture_opts_t po = {.color = 0, .width = 100};
    char *text = mesh_report_text(p), *pics = mesh_picture_text(p, &po);
    char *alone = mesh_report_explained(p, NULL, NULL), *both = mesh_report_explained(p, NULL, &po);
    assert_string_equal(alone, text);
    assert_int_equal(strlen(both), strlen(text) + 1 + strlen(pics));
    assert_memory_equal(both, text, strlen(text));
    assert_int_equal(both[strlen(text)], '\n');
    assert_string_equal(both + strlen(text) + 1, pics);
    mesh_restart_t r;
    mesh_error_t err;
    char line[MESH_LAYOUT_STR_MAX];
    assert_int_equal(
        mesh_restart_from_env(mesh_layout_format(&mesh_plan_best(p)->layout, line, sizeof(line)),
                              "512", &r, &err),
        0);
    char *rs = mesh_restart_text(&r, p), *all = mesh_report_explained(p, &r, &po);
    assert_non_null(strstr(all, rs));
    assert_true(strstr(all, rs) == all + strlen(text) + 1);
    assert_string_equal(all + strlen(text) + 1 + strlen(rs) + 1, pics);
    free(text);
    free(pics);
    free(alone);
    free(both);
    free(rs);
    free(all);
    mesh_plan_destroy(p);
}

/* The pipeline picture of small plans, line for line. */
static void text__pipeline_exact(void **state)
{
    (void)state;
    mesh_picture_opts_t o = {.color = 0, .width = 100};
    mesh_model_t m = test_spec("name: six\narch: {layers: 6, hidden: 1024, heads: 16, "
                               "kv_heads: 16, ffn: 4096, vocab: 32000}\n"
                               "train: {seq_len: 2048, global_batch: 3}\n");
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 2);
    mesh_plan_t *p =
        test_plan(&m, &a, "tp=1,pp=2,dp=1,cp=1,zero=0,vpp=1,mb=1,recompute=full,sp=off");
    char *t = mesh_picture_pipeline(p, &o);
    assert_string_equal(t, "Pipeline: 2 stages, 3 micro-batches, 1F1B; bubble (p-1)/(v*m) = 33.3%\n"
                           "stage 0   01..aa2bb.cc\n"
                           "stage 1   .0aa1bb2cc..\n"
                           "  0-9: forward of micro-batch k (mod 10), a-j: its backward (two "
                           "slots), .: idle\n");
    free(t);
    mesh_plan_destroy(p);
    /* interleaved: 6 layers over 3 stages in 2 chunks of one layer */
    m.global_batch = 6;
    a = test_alloc("H100-SXM", 1, 3);
    p = test_plan(&m, &a, "tp=1,pp=3,dp=1,cp=1,zero=0,vpp=2,mb=1,recompute=full,sp=off");
    t = mesh_picture_pipeline(p, &o);
    assert_string_equal(t, "Pipeline: 3 stages, 6 micro-batches, interleaved 1F1B; bubble "
                           "(p-1)/(v*m) = 16.7%\n"
                           /* schedule__hand_written_orders' rows, chunk 1 in capitals */
                           "stage 0   012ABC34..KK5LLDMMEaaFbb.cc.NN.OO.PPddeeff\n"
                           "stage 1   .012ABC.KK3LL4MM5aaDbbEccFNN.OO.PPddeeff..\n"
                           "stage 2   ..012AKKBLLCMM3aa4bb5ccDNNEOOFPPddeeff....\n"
                           "  micro-batch k (mod 10): forward 0-9, backward a-j (two slots), .: "
                           "idle; the odd model chunks in\n   capitals: forward A-J, backward "
                           "K-T\n");
    free(t);
    /* its 42 slots fit a width of 52 (the stage's name takes 10) a slot
     * a column, and one less squeezes them two a column */
    o.width = 52;
    t = mesh_picture_pipeline(p, &o);
    assert_non_null(strstr(t, "\nstage 0   012ABC34..KK5LLDMMEaaFbb.cc.NN.OO.PPddeeff\n"));
    free(t);
    o.width = 51;
    t = mesh_picture_pipeline(p, &o);
    const char *row = strstr(t, "\nstage 0   ");
    assert_non_null(row);
    assert_int_equal(strcspn(row + 11, "\n"), 21);
    free(t);
    o.width = 100;
    mesh_plan_destroy(p);
    /* no pipeline: one line */
    a = test_alloc("H100-SXM", 1, 1);
    p = test_plan(&m, &a, "tp=1,pp=1,dp=1,cp=1,zero=0,vpp=1,mb=1,recompute=full,sp=off");
    t = mesh_picture_pipeline(p, &o);
    assert_string_equal(t, "Pipeline: 1 stage, 6 micro-batches, no pipeline; bubble (p-1)/(v*m) "
                           "= 0.0%\n");
    free(t);
    mesh_plan_destroy(p);
}

/* The memory picture of a plan whose breakdown is known by hand: seed 7B
 * under ZeRO-3 over 4 GPUs of 80e9 bytes (3.5e9 weights, 3.5e9 grads, 21e9
 * optimizer, 1.25 GiB overhead; 77.6e9 usable).  The bar is 80 columns for
 * the larger of need and capacity, the capacity in its last column:
 * 77.6e9/79 bytes a column, so the parts end at columns 4, 7, 29, 29 and 30. */
static void text__memory_exact(void **state)
{
    (void)state;
    mesh_model_t m =
        test_spec("name: seed-7b\nparams: 7e9\ntrain:\n  seq_len: 4096\n  global_batch: 64\n"
                  "  grad_accum_dtype: bf16\n  framework: megatron\n");
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    mesh_alloc_t a;
    mesh_error_t err;
    assert_int_equal(mesh_policy_alloc(&pol.assume, NULL, 80e9, 0, 1, 4, &a, &err), 0);
    mesh_plan_t *p = test_plan(&m, &a, "zero=3");
    mesh_picture_opts_t o = {.color = 0, .width = 100};
    char *t = mesh_picture_memory(p, &o);
    char bar[128];
    snprintf(bar, sizeof(bar), " [WWWWGGG%.22s%c%49s|]\n", "OOOOOOOOOOOOOOOOOOOOOOOOOO", 'X', "");
    char want[1024];
    snprintf(want, sizeof(want),
             "Memory of the worst rank (stage 0): 27.3 of 72.3 GiB usable\n%s"
             " W weights 3.3 GiB  G grads 3.3 GiB  O optimizer 19.6 GiB  A activations 0.0 GiB  "
             "X overhead 1.2 GiB\n"
             " | usable capacity (97%% of the GPU's 74.5 GiB)\n",
             bar);
    assert_string_equal(t, want);
    free(t);
    mesh_plan_destroy(p);
}

/* The rank map with context parallelism: rank = tp + t*(cp + c*(dp + d*pp))
 * (doc/design.md, "Rank map"), a cell rank:tp.cp.dp.pp, the columns of
 * `meshplan ranks` and the values of the MESH_*_RANK variables, said under it. */
static void text__ranks_with_cp_exact(void **state)
{
    (void)state;
    mesh_model_t m =
        test_spec("name: cp\narch: {layers: 4, hidden: 1024, heads: 16, kv_heads: 16, "
                  "ffn: 4096, vocab: 32000}\ntrain: {seq_len: 8192, global_batch: 8}\n");
    mesh_alloc_t a = test_alloc("H100-SXM", 2, 8);
    mesh_plan_t *p =
        test_plan(&m, &a, "tp=2,pp=2,dp=2,cp=2,zero=1,vpp=1,mb=1,recompute=full,sp=on");
    mesh_picture_opts_t o = {.color = 0, .width = 100};
    char *t = mesh_picture_ranks(p, &o);
    assert_string_equal(
        t,
        "Rank map: 2 nodes x 8 GPUs\n"
        "node gpu0       gpu1       gpu2       gpu3       gpu4       gpu5       gpu6       gpu7\n"
        "0    0:0.0.0.0  1:1.0.0.0  2:0.1.0.0  3:1.1.0.0  4:0.0.1.0  5:1.0.1.0  6:0.1.1.0  "
        "7:1.1.1.0\n"
        "1    8:0.0.0.1  9:1.0.0.1  10:0.1.0.1 11:1.1.0.1 12:0.0.1.1 13:1.0.1.1 14:0.1.1.1 "
        "15:1.1.1.1\n"
        "  cell: rank:tp.cp.dp.pp = RANK:MESH_TP_RANK.MESH_CP_RANK.MESH_DP_RANK.MESH_PP_RANK "
        "(pp: stage)\n");
    free(t);
    mesh_plan_destroy(p);
}

/* The worked example's rank map, whole: rank 13 is 13:1.0.3 (tp 1, dp 0,
 * pp 3), as `meshplan ranks` and the variables have it; the legend names
 * them. */
static void text__ranks_exact(void **state)
{
    (void)state;
    mesh_plan_t *p = design_example();
    mesh_picture_opts_t o = {.color = 0, .width = 100};
    char *t = mesh_picture_ranks(p, &o);
    assert_string_equal(
        t, "Rank map: 2 nodes x 8 GPUs\n"
           "node gpu0     gpu1     gpu2     gpu3     gpu4     gpu5     gpu6     gpu7\n"
           "0    0:0.0.0  1:1.0.0  2:0.1.0  3:1.1.0  4:0.0.1  5:1.0.1  6:0.1.1  7:1.1.1\n"
           "1    8:0.0.2  9:1.0.2  10:0.1.2 11:1.1.2 12:0.0.3 13:1.0.3 14:0.1.3 15:1.1.3\n"
           "  cell: rank:tp.dp.pp = RANK:MESH_TP_RANK.MESH_DP_RANK.MESH_PP_RANK (pp: stage; no "
           "CP)\n");
    free(t);
    /* every cell is what the rank map of the library says of that rank */
    for (long r = 0; r < 16; r++) {
        mesh_coords_t c = mesh_rank_coords(&mesh_plan_best(p)->layout, r);
        assert_int_equal(c.tp, r % 2);
        assert_int_equal(c.dp, r / 2 % 2);
        assert_int_equal(c.pp, r / 4);
    }
    mesh_plan_destroy(p);
}

/* A small model (16 heads of 64) of `layers` layers and `kv` KV heads,
 * global batch `batch`, planned on one node of `gpus` GPUs under `mesh`. */
static mesh_plan_t *small_plan(int layers, int kv, int batch, int gpus, const char *mesh)
{
    char yaml[256];
    snprintf(yaml, sizeof(yaml),
             "name: small\narch: {layers: %d, hidden: 1024, heads: 16, kv_heads: %d, ffn: 4096, "
             "vocab: 32000}\ntrain: {seq_len: 2048, global_batch: %d}\n",
             layers, kv, batch);
    mesh_model_t m = test_spec(yaml);
    mesh_alloc_t a = test_alloc("H100-SXM", 1, gpus);
    return test_plan(&m, &a, mesh);
}

/* One node of one GPU, one stage, one micro-batch: every count agrees with
 * its noun, in the text pictures, the SVG and the report. */
static void plural__one_of_each(void **state)
{
    (void)state;
    mesh_plan_t *p = small_plan(2, 1, 1, 1, "tp=1,pp=1,dp=1,mb=1,recompute=full:1");
    mesh_picture_opts_t o = {.color = 0, .width = 100};
    char *parts[] = {mesh_picture_text(p, &o), mesh_picture_svg(p), mesh_report_text(p)};
    for (int i = 0; i < 3; i++) {
        const char *t = parts[i];
        assert_non_null(t);
        if (i < 2) {
            assert_non_null(strstr(t, "Rank map: 1 node x 1 GPU"));
            assert_non_null(strstr(t, "Pipeline: 1 stage, 1 micro-batch, no pipeline"));
        } else {
            assert_non_null(strstr(t, "1 node x 1 H100-SXM GPU (1 in all)"));
            assert_non_null(strstr(t, "(2 layers, hidden 1024, 16 heads, 1 KV head,"));
            assert_non_null(strstr(t, "the first 1 layer of each stage"));
        }
        const char *wrong[] = {"1 nodes",         "1 GPUs",     "1 stages",
                               "1 micro-batches", "1 KV heads", "1 layers"};
        for (size_t w = 0; w < sizeof(wrong) / sizeof(*wrong); w++)
            if (strstr(t, wrong[w]))
                fail_msg("%s says \"%s\"",
                         i == 0   ? "the text"
                         : i == 1 ? "the SVG"
                                  : "the report",
                         wrong[w]);
    }
    for (int i = 0; i < 3; i++)
        free(parts[i]);
    mesh_plan_destroy(p);
}

/* The value of attribute `name` in the element at s ("" when absent). */
static void attr(const char *s, const char *name, char *out, size_t len)
{
    char key[32];
    snprintf(key, sizeof(key), " %s=\"", name);
    const char *end = strchr(s, '>'), *v = strstr(s, key);
    out[0] = '\0';
    if (!v || (end && v > end))
        return;
    v += strlen(key);
    size_t n = strcspn(v, "\"");
    snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), v);
}

/* The y of the first <text> element whose content starts with `text`. */
static double text_y(const char *svg, const char *text)
{
    char key[128], y[32];
    snprintf(key, sizeof(key), ">%s", text);
    const char *at = strstr(svg, key);
    if (!at)
        fail_msg("no text \"%s\" in the SVG", text);
    while (at > svg && strncmp(at, "<text", 5) != 0)
        at--;
    attr(at, "y", y, sizeof(y));
    return atof(y);
}

/* When the model does not fit, the capacity line stands inside the bar and
 * its "usable" label below the heading, not on it. */
static void svg__usable_label_clear_of_heading(void **state)
{
    (void)state;
    mesh_plan_t *p = plan("llama3.1-405b", 1, "auto");
    assert_false(mesh_plan_fits(p));
    char *svg = mesh_picture_svg(p);
    double heading = text_y(svg, "Memory of the worst rank"), usable = text_y(svg, "usable");
    /* the heading is 14 px, its descenders 4 below its baseline; the label
     * is 10 px, its ascenders 8 above */
    if (usable - 8 < heading + 4)
        fail_msg("\"usable\" at y %.1f overlaps the heading at y %.1f", usable, heading);
    free(svg);
    mesh_plan_destroy(p);
}

/* The fills of the <rect> elements of one kind: those with `marker` in them. */
static int fills(const char *svg, const char *marker, char out[][16], int max)
{
    int n = 0;
    for (const char *r = svg; (r = strstr(r, "<rect")); r++) {
        const char *end = strchr(r, '>');
        const char *m = strstr(r, marker);
        if (!m || m > end)
            continue;
        char f[16];
        attr(r, "fill", f, sizeof(f));
        int seen = 0;
        for (int i = 0; i < n; i++)
            seen |= strcmp(out[i], f) == 0;
        if (!seen && n < max)
            strcpy(out[n++], f);
    }
    return n;
}

/* The stages, the pipeline's units and the memory parts are coloured from
 * three palettes that share no colour: a backward pass does not look like
 * stage 0, nor a stage like a memory part. */
static void svg__palettes_distinct(void **state)
{
    (void)state;
    /* 12 stages (every stage colour), interleaved (every unit colour) */
    mesh_plan_t *p =
        small_plan(24, 16, 12, 12, "tp=1,pp=12,dp=1,cp=1,zero=0,vpp=2,mb=1,recompute=full");
    char *svg = mesh_picture_svg(p);
    char stage[32][16], unit[32][16], part[32][16];
    int ns = fills(svg, "height=\"22\"", stage, 32),
        nu = fills(svg, "stroke-width=\"0.5\"", unit, 32),
        np = fills(svg, "height=\"26\"", part, 32);
    assert_int_equal(ns, 12);
    assert_int_equal(nu, 4); /* forward and backward, even and odd chunks */
    assert_int_equal(np, MESH_MEMORY_PARTS);
    for (int i = 0; i < ns; i++)
        for (int j = 0; j < nu + np; j++)
            if (strcmp(stage[i], j < nu ? unit[j] : part[j - nu]) == 0)
                fail_msg("stage %d and a %s are both %s", i, j < nu ? "unit" : "memory part",
                         stage[i]);
    for (int i = 0; i < nu; i++)
        for (int j = 0; j < np; j++)
            if (strcmp(unit[i], part[j]) == 0)
                fail_msg("a unit and a memory part are both %s", unit[i]);
    free(svg);
    mesh_plan_destroy(p);
}

/* "lighter: odd chunks" only where there are odd chunks. */
static void svg__odd_chunks_only_when_interleaved(void **state)
{
    (void)state;
    mesh_plan_t *p = plan("llama3-70b", 4, "tp=4,pp=4,mb=1,vpp=1");
    char *svg = mesh_picture_svg(p);
    assert_non_null(strstr(svg, "forward"));
    assert_null(strstr(svg, "odd"));
    free(svg);
    mesh_plan_destroy(p);
    p = plan("llama3-70b", 4, "tp=4,pp=4,mb=1,vpp=2");
    svg = mesh_picture_svg(p);
    assert_non_null(strstr(svg, "(lighter: odd model chunks)"));
    free(svg);
    mesh_plan_destroy(p);
}

/* The rects the SVG draws of a schedule of d micro-batches: one a unit,
 * or, where the SVG cuts the schedule to its first `left` and last `right`
 * slots (it says so), one for each end a unit reaches into. */
static int units_drawn(const char *svg, int pp, int vpp, int d)
{
    mesh_pipe_op_t *ops = NULL;
    int slots = mesh_pipe_schedule(pp, vpp, d, &ops), left = slots, right = 0, all = 0, n = 0;
    const char *cut = strstr(svg, "shown: the first ");
    assert_true(slots > 0);
    if (cut)
        assert_int_equal(
            sscanf(cut, "shown: the first %d and the last %d of its %d", &left, &right, &all), 3);
    if (cut)
        assert_int_equal(all, slots);
    for (int i = 0; i < 2 * pp * vpp * d; i++)
        n += (ops[i].start < left) + (right > 0 && ops[i].start + ops[i].len > slots - right);
    free(ops);
    return n;
}

/* The terminal and the SVG draw the same micro-batches of the same plan,
 * whether the plan has more than fit (1F1B, interleaved) or a long pipeline
 * is squeezed (cut, in the SVG); a narrower terminal squeezes rather than
 * draws fewer. */
static void svg__same_micro_batches_as_text(void **state)
{
    (void)state;
    const char *meshes[][2] = {{"llama3-70b", "tp=4,pp=4,mb=1"},
                               {"llama3-70b", "tp=4,pp=4,mb=1,vpp=2"},
                               {"llama3.1-405b", "tp=8,pp=16,dp=128,zero=2,vpp=4"}};
    for (size_t i = 0; i < sizeof(meshes) / sizeof(*meshes); i++) {
        mesh_plan_t *p = plan(meshes[i][0], i < 2 ? 4 : 2048, meshes[i][1]);
        const mesh_candidate_t *c = mesh_plan_best(p);
        int units = 0;
        char *svg = mesh_picture_svg(p);
        for (const char *r = svg; (r = strstr(r, "stroke-width=\"0.5\"")); r++)
            units++;
        for (int width = 100; width >= 60; width -= 40) {
            mesh_picture_opts_t o = {.color = 0, .width = width};
            char *t = mesh_picture_pipeline(p, &o);
            const char *d = strstr(t, "drawn for ");
            long drawn = d ? atol(d + 10) : c->micro_batches;
            /* each micro-batch: a forward and a backward per stage and chunk */
            if (units != units_drawn(svg, c->layout.pp, c->layout.vpp, (int)drawn))
                fail_msg("%s %s at %d columns: the text draws %ld micro-batches, the SVG %d units",
                         meshes[i][0], meshes[i][1], width, drawn, units);
            if (d) {
                char line[128];
                snprintf(line, sizeof(line), "%.*s", (int)strcspn(d, "\n"), d);
                if (!strstr(svg, line))
                    fail_msg("the SVG does not say \"%s\"", line);
            }
            free(t);
        }
        free(svg);
        mesh_plan_destroy(p);
    }
}

/* A pipeline of more than 16 stages shows its first eight, a line for the
 * middle ones it leaves out, and its last four (seed 120716's
 * picture.c:363: the last three shown, stage 14 neither drawn nor named). */
static void pipeline__long_shows_its_ends(void **state)
{
    (void)state;
    mesh_plan_t *p = plan("llama3.1-405b", 288, "tp=8,pp=18,dp=16,mb=1");
    mesh_picture_opts_t o = {.color = 0, .width = 100};
    char *t = mesh_picture_pipeline(p, &o);
    for (int s = 0; s < 18; s++) {
        char row[32];
        snprintf(row, sizeof(row), "\nstage %-3d ", s);
        if ((strstr(t, row) != NULL) != (s < 8 || s >= 14))
            fail_msg("stage %d %s:\n%s", s, s < 8 || s >= 14 ? "not drawn" : "drawn", t);
    }
    assert_non_null(strstr(t, "  ...     stages 8 to 13\n"));
    free(t);
    mesh_plan_destroy(p);
}

/* ---- what the SVG looks like: sizes, extents, captions ---- */

/* The plans of issue 27's pictures: dense on one node, 70B on four, 405B
 * interleaved on 128, DeepSeek-V3 on 64, Mixtral on 8, one that does not fit. */
static const struct {
    const char *model, *mesh;
    int nodes;
} shown[] = {{"llama3-8b", "auto", 1},       {"llama3-70b", "auto", 4},
             {"llama3.1-405b", "auto", 128}, {"deepseek-v3", "auto", 64},
             {"mixtral-8x22b", "auto", 8},   {"llama3.1-405b", "auto", 1}};

/* A glyph's advance in em of the monospace fonts an SVG viewer picks
 * (DejaVu Sans Mono 0.602, Liberation Mono and Courier 0.600). */
#define ADVANCE 0.602

typedef struct {
    int text; /* 1 a <text>, 0 a <rect> */
    double x, y, w, h, size;
    char anchor[8], fill[16], body[160];
} element_t;

/* The <text> and <rect> elements of svg, in order, into out (at most max). */
static int elements(const char *svg, element_t *out, int max)
{
    int n = 0;
    for (const char *e = strchr(svg, '<'); e && n < max; e = strchr(e + 1, '<')) {
        int text = strncmp(e, "<text ", 6) == 0;
        if (!text && strncmp(e, "<rect ", 6) != 0)
            continue;
        element_t *el = &out[n++];
        char v[32];
        memset(el, 0, sizeof(*el));
        el->text = text;
        attr(e, "x", v, sizeof(v)), el->x = atof(v);
        attr(e, "y", v, sizeof(v)), el->y = atof(v);
        attr(e, "width", v, sizeof(v)),
            el->w = strchr(v, '%') ? -1 : atof(v); /* 100%: the canvas */
        attr(e, "height", v, sizeof(v)), el->h = atof(v);
        attr(e, "font-size", v, sizeof(v)), el->size = atof(v);
        attr(e, "text-anchor", el->anchor, sizeof(el->anchor));
        attr(e, "fill", el->fill, sizeof(el->fill));
        if (text) { /* its characters, each escape one */
            const char *c = strchr(e, '>') + 1;
            size_t k = 0;
            for (; *c && *c != '<' && k + 1 < sizeof(el->body); c++) {
                el->body[k++] = *c;
                if (*c == '&')
                    c += strcspn(c, ";");
            }
            el->body[k] = '\0';
        }
    }
    return n;
}

/* The left and right of a text element as a viewer draws it. */
static void text_extent(const element_t *t, double *left, double *right)
{
    double w = ADVANCE * t->size * (double)strlen(t->body);
    *left = strcmp(t->anchor, "middle") == 0 ? t->x - w / 2
            : strcmp(t->anchor, "end") == 0  ? t->x - w
                                             : t->x;
    *right = *left + w;
}

#define MAX_ELEMENTS 20000

/* No two texts of els[0..n-1] drawn over each other: a line's box is its
 * extent across and, down, an em above its baseline to a fifth below
 * (a hair's overlap allowed for the rounding). `what` names the picture. */
static void assert_texts_apart(const element_t *els, int n, const char *what)
{
    for (int i = 0; i < n; i++) {
        if (!els[i].text || !els[i].body[0])
            continue;
        double l1, r1;
        text_extent(&els[i], &l1, &r1);
        for (int k = i + 1; k < n; k++) {
            if (!els[k].text || !els[k].body[0])
                continue;
            double l2, r2;
            text_extent(&els[k], &l2, &r2);
            double across = (r1 < r2 ? r1 : r2) - (l1 > l2 ? l1 : l2);
            double top1 = els[i].y - els[i].size, top2 = els[k].y - els[k].size;
            double bottom1 = els[i].y + els[i].size / 5, bottom2 = els[k].y + els[k].size / 5;
            double down = (bottom1 < bottom2 ? bottom1 : bottom2) - (top1 > top2 ? top1 : top2);
            if (across > 0.5 && down > 0.5)
                fail_msg("%s: \"%s\" at (%.0f, %.0f) is drawn over \"%s\" at (%.0f, %.0f)", what,
                         els[i].body, els[i].x, els[i].y, els[k].body, els[k].x, els[k].y);
        }
    }
}

/* The SVG of shown[i], its size, and its elements (malloc'd). */
static char *svg_of(int i, double *width, double *height, element_t **els, int *n)
{
    mesh_plan_t *p = plan(shown[i].model, shown[i].nodes, shown[i].mesh);
    char *svg = mesh_picture_svg(p), v[32];
    mesh_plan_destroy(p);
    const char *root = strstr(svg, "<svg ");
    attr(root, "width", v, sizeof(v)), *width = atof(v);
    attr(root, "height", v, sizeof(v)), *height = atof(v);
    *els = malloc(sizeof(element_t) * MAX_ELEMENTS);
    assert_non_null(*els);
    *n = elements(svg, *els, MAX_ELEMENTS);
    assert_true(*n < MAX_ELEMENTS);
    return svg;
}

/* No text under 11 px, none past the canvas (a long title is wrapped) or
 * drawn over another, no line of wrapped text beginning or ending with the
 * blank it broke at, and the canvas of a sane size. */
static void svg__text_legible_and_inside(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(shown) / sizeof(*shown); i++) {
        double width, height, left, right;
        element_t *els;
        int n, texts = 0;
        char *svg = svg_of((int)i, &width, &height, &els, &n);
        assert_true(width >= 600 && width <= 1600);
        assert_true(height >= 150 && height <= 2000);
        for (int k = 0; k < n; k++) {
            const element_t *t = &els[k];
            if (!t->text)
                continue;
            texts++;
            size_t len = strlen(t->body);
            if (len > 0 && (t->body[0] == ' ' || t->body[len - 1] == ' '))
                fail_msg("%s on %d: \"%s\" has a blank at an end", shown[i].model, shown[i].nodes,
                         t->body);
            if (t->size < 11)
                fail_msg("%s on %d: \"%s\" is %.0f px", shown[i].model, shown[i].nodes, t->body,
                         t->size);
            text_extent(t, &left, &right);
            if (left < 0 || right > width || t->y - t->size < 0 || t->y > height)
                fail_msg("%s on %d: \"%s\" spans x %.0f to %.0f at y %.0f, past the %.0fx%.0f "
                         "canvas",
                         shown[i].model, shown[i].nodes, t->body, left, right, t->y, width, height);
        }
        assert_true(texts > 10);
        char what[96];
        snprintf(what, sizeof(what), "%s on %d", shown[i].model, shown[i].nodes);
        assert_texts_apart(els, n, what);
        free(els);
        free(svg);
    }
}

/* The SVG of plan p draws the title `title` wrapped at its blanks and
 * commas, never inside a word or a layout's field: its lines, read in
 * order, are the title, each ending before a blank or after a comma.
 * Returns how many lines end after a comma whose rest has a blank. */
static int assert_title_wrapped(mesh_plan_t *p, const char *title)
{
    char *svg = mesh_picture_svg(p);
    element_t *els = malloc(sizeof(element_t) * MAX_ELEMENTS);
    int n = elements(svg, els, MAX_ELEMENTS), lines = 0, first = 0, comma_breaks = 0;
    size_t at = 0;
    while (first < n && !els[first].text) /* the background */
        first++;
    for (int k = first; k < n && els[k].text && els[k].size == els[first].size; k++, lines++) {
        const char *line = els[k].body;
        size_t len = strlen(line);
        if (strncmp(title + at, line, len) != 0)
            fail_msg("line %d \"%s\" is not the title's \"%.40s\"", k, line, title + at);
        at += len;
        if (title[at] && title[at] != ' ' && line[len - 1] != ',')
            fail_msg("line %d \"%s\" breaks inside \"%.20s\"", k, line, title + at - 5);
        comma_breaks += title[at] && title[at] != ' ' && strchr(title + at, ' ') != NULL;
        at += strspn(title + at, " ");
    }
    assert_true(lines >= 2);
    assert_int_equal(at, strlen(title));
    free(els);
    free(svg);
    return comma_breaks;
}

#define LONG_NAME "an-unusually-long-model-name-a-site-gave-its-fine-tune-of-it"

static void svg__long_title_wrapped_between_words(void **state)
{
    (void)state;
    char title[512];
    mesh_model_t m = test_spec("name: " LONG_NAME "\npreset: llama3-8b\n");
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    mesh_plan_t *p = test_plan(&m, &a, "auto");
    char layout[MESH_LAYOUT_STR_MAX];
    mesh_layout_format(&mesh_plan_best(p)->layout, layout, sizeof(layout));
    snprintf(title, sizeof(title), LONG_NAME " on 1 x 8 H100-SXM: %s", layout);
    assert_title_wrapped(p, title);
    mesh_plan_destroy(p);
}

/* A GPU the policy defines may have a comma in its name (the policy takes
 * any name): a title broken after that comma goes on with the rest of the
 * name, not a character of it lost with the blank a line after a blank
 * skips.  Without the comma, the line breaks at the blank before the name,
 * and the next begins with the name, not that blank. */
static void svg__title_broken_at_a_comma_or_a_blank_keeps_every_character(void **state)
{
    (void)state;
    /* 31 characters, the most a GPU name has */
    const char *gpus[] = {"Acme,Accel-X1000-PCIe-96GB-rev2", "Acme-Accel-X1000-PCIe-96GB-rev2"};
    const char *sets[] = {"pci=1234:5678", "memory=96GiB", "peak_tflops=800", "island=8"};
    for (int g = 0; g < 2; g++) {
        const char *gpu = gpus[g];
        mesh_policy_t pol;
        mesh_error_t err;
        char arg[96], title[512], layout[MESH_LAYOUT_STR_MAX];
        mesh_policy_init(&pol);
        for (size_t i = 0; i < sizeof(sets) / sizeof(*sets); i++) {
            snprintf(arg, sizeof(arg), "gpu.%s.%s", gpu, sets[i]);
            if (mesh_policy_set_arg(&pol, arg, &err) < 0)
                fail_msg("%s", err.msg);
        }
        mesh_alloc_t a;
        if (mesh_policy_check(&pol, &err) < 0 ||
            mesh_policy_alloc(&pol.assume, gpu, 0, 0, 1, 8, &a, &err) < 0)
            fail_msg("%s", err.msg);
        assert_string_equal(a.gpu.name, gpu);
        mesh_model_t m = test_spec("name: " LONG_NAME "\npreset: llama3-8b\n");
        mesh_plan_t *p = test_plan(&m, &a, "auto");
        mesh_layout_format(&mesh_plan_best(p)->layout, layout, sizeof(layout));
        snprintf(title, sizeof(title), LONG_NAME " on 1 x 8 %s: %s", gpu, layout);
        /* the title's one blank or comma near its 99th character (the room
         * of a 16 px line) is the GPU's comma: the line breaks there */
        assert_int_equal(assert_title_wrapped(p, title), g == 0);
        mesh_plan_destroy(p);
    }
}

/* How many texts of svg label a unit of the timeline (a rect 16 high);
 * fails the test where a text overflows the rect it labels (the narrowest
 * under its middle, the canvas' background aside). */
static int labels_inside(const char *svg, const char *what)
{
    element_t *els = malloc(sizeof(element_t) * MAX_ELEMENTS);
    int n = elements(svg, els, MAX_ELEMENTS), numbered = 0;
    for (int k = 0; k < n; k++) {
        const element_t *t = &els[k], *in = NULL;
        double left, right;
        if (!t->text)
            continue;
        text_extent(t, &left, &right);
        for (int r = 0; r < n; r++) {
            const element_t *e = &els[r];
            if (!e->text && e->w > 0 && t->x >= e->x && t->x <= e->x + e->w && t->y - 4 >= e->y &&
                t->y - 4 <= e->y + e->h && (!in || e->w < in->w))
                in = e;
        }
        if (!in)
            continue;
        if (left < in->x || right > in->x + in->w)
            fail_msg("%s: \"%s\" (x %.1f to %.1f) overflows its cell (x %.1f to %.1f)", what,
                     t->body, left, right, in->x, in->x + in->w);
        numbered += in->h == 16;
    }
    free(els);
    return numbered;
}

/* A unit's micro-batch number, and a rank map cell's text, within its rect;
 * the units of a short pipeline are numbered (two digits where it has ten
 * micro-batches or more), those too narrow for their numbers none. */
static void svg__numbers_fit_their_cells(void **state)
{
    (void)state;
    int numbered = 0;
    for (size_t i = 0; i < sizeof(shown) / sizeof(*shown); i++) {
        double width, height;
        element_t *els;
        int n;
        char *svg = svg_of((int)i, &width, &height, &els, &n);
        numbered += labels_inside(svg, shown[i].model);
        free(els);
        free(svg);
    }
    assert_true(numbered > 0);
    /* 12 micro-batches on 2 stages: numbered, 10 and 11 in their cells;
     * 27 on 4 stages, all drawn, 10 px a slot: too narrow for "26" */
    const int batch[] = {12, 27}, stages[] = {2, 4}, want[] = {2 * 2 * 12, 0};
    for (int i = 0; i < 2; i++) {
        char mesh[96];
        snprintf(mesh, sizeof(mesh), "tp=1,pp=%d,dp=1,cp=1,zero=0,vpp=1,mb=1", stages[i]);
        mesh_plan_t *p = small_plan(8, 16, batch[i], stages[i], mesh);
        char *svg = mesh_picture_svg(p);
        assert_null(strstr(svg, "drawn for"));
        assert_int_equal(labels_inside(svg, mesh), want[i]);
        free(svg);
        mesh_plan_destroy(p);
    }
}

/* A long schedule is drawn for a sample that does what the whole does:
 * two micro-batches per stage (never fewer than the stages: DeepSeek-V3's
 * 16 stages were drawn for 15, all fill and drain); the caption gives the
 * plan's bubble, the cost model's (p-1)/(v*m), not the sample's. */
static void svg__sample_and_the_plans_bubble(void **state)
{
    (void)state;
    const struct {
        const char *model;
        int nodes;
        const char *mesh; /* DeepSeek-V3's own plan there has no pipeline */
    } long_ones[] = {
        {"deepseek-v3", 64, "pp=16"}, {"llama3.1-405b", 128, "auto"}, {"llama3-70b", 4, "auto"}};
    for (size_t i = 0; i < sizeof(long_ones) / sizeof(*long_ones); i++) {
        mesh_plan_t *p = plan(long_ones[i].model, long_ones[i].nodes, long_ones[i].mesh);
        const mesh_candidate_t *c = mesh_plan_best(p);
        int pp = c->layout.pp, drawn = 0;
        long m = 0;
        double bubble = -1;
        assert_true(pp > 1 && c->micro_batches > 2 * pp);
        mesh_picture_opts_t o = {.color = 0, .width = 100};
        char *svg = mesh_picture_svg(p), *t = mesh_picture_pipeline(p, &o);
        for (char *nl = t; (nl = strstr(nl, "\n   ")); nl++) /* the text's line unwrapped */
            memmove(nl, nl + 3, strlen(nl + 3) + 1), *nl = ' ';
        for (int k = 0; k < 2; k++) {
            const char *at = strstr(k ? t : svg, "drawn for ");
            assert_non_null(at);
            assert_int_equal(sscanf(at, "drawn for %d of the %ld micro-batches", &drawn, &m), 2);
            at = strstr(at, "the plan's bubble is ");
            assert_non_null(at);
            bubble = atof(at + strlen("the plan's bubble is "));
            assert_int_equal(drawn, 2 * pp);
            assert_int_equal(m, c->micro_batches);
            char want[16], got[16];
            snprintf(want, sizeof(want), "%.1f", 100 * c->cost.bubble);
            snprintf(got, sizeof(got), "%.1f", bubble);
            if (strcmp(want, got) != 0)
                fail_msg("%s: the caption's bubble %s%%, the plan's %s%%", long_ones[i].model, got,
                         want);
        }
        assert_true(fabs(c->cost.bubble - mesh_pipeline_bubble(pp, c->layout.vpp, m)) < 1e-12);
        free(svg);
        free(t);
        mesh_plan_destroy(p);
    }
}

/* A timeline too long for 5 px a slot is cut to its two ends, "..." in
 * the gap between them, rather than drawn as thousands of slivers. */
static void svg__long_timeline_cut_not_slivers(void **state)
{
    (void)state;
    /* interleaved, pinned: 16 stages, 4 chunks, 512 micro-batches */
    mesh_plan_t *p = plan("llama3.1-405b", 128, "pp=16,vpp=4");
    assert_true(mesh_plan_best(p)->layout.vpp > 1);
    char *svg = mesh_picture_svg(p);
    element_t *els = malloc(sizeof(element_t) * MAX_ELEMENTS);
    int n = elements(svg, els, MAX_ELEMENTS), units = 0, narrow = 0, dots = 0;
    for (int k = 0; k < n; k++) {
        units += !els[k].text && els[k].h == 16 && strcmp(els[k].fill, "#eeeeee") != 0;
        narrow += !els[k].text && els[k].h == 16 && els[k].w < 5 - 1e-9 &&
                  strcmp(els[k].fill, "#eeeeee") != 0;
        dots += els[k].text && strcmp(els[k].body, "...") == 0;
    }
    assert_non_null(strstr(svg, "shown: the first "));
    assert_texts_apart(els, n, "llama3.1-405b pp=16,vpp=4 on 128"); /* the note too */
    assert_int_equal(dots, mesh_plan_best(p)->layout.pp);
    /* no unit reaches into the gap its "..." stands in, 36 px wide */
    double gap = -1;
    for (int k = 0; k < n && gap < 0; k++)
        if (els[k].text && strcmp(els[k].body, "...") == 0)
            gap = els[k].x;
    for (int k = 0; k < n; k++)
        if (!els[k].text && els[k].h == 16 && els[k].x < gap + 18 - 1e-6 &&
            els[k].x + els[k].w > gap - 18 + 1e-6)
            fail_msg("a unit at x %.2f to %.2f reaches into the gap at %.1f +- 18", els[k].x,
                     els[k].x + els[k].w, gap);
    /* and it stands between the two grey rows it parts, 36 px apart */
    int left_row = 0, right_row = 0;
    for (int k = 0; k < n; k++)
        if (!els[k].text && strcmp(els[k].fill, "#eeeeee") == 0) {
            left_row += fabs(els[k].x - 90) < 1e-6 && fabs(els[k].x + els[k].w - (gap - 18)) < 0.01;
            right_row += fabs(els[k].x - (gap + 18)) < 0.01;
        }
    assert_int_equal(left_row, mesh_plan_best(p)->layout.pp);
    assert_int_equal(right_row, mesh_plan_best(p)->layout.pp);
    assert_true(units > 100 && units < 2500); /* 4096 units when drawn whole */
    /* only where a unit reaches over an end of what is shown */
    assert_true(narrow <= 2 * mesh_plan_best(p)->layout.pp);
    free(els);
    free(svg);
    mesh_plan_destroy(p);
}

/* The legend says what every part of a cell is: a MoE layout's "/eEP" (and
 * "/eEP.ETP" under expert TP) as the text does. */
static void svg__legend_has_the_expert_ranks(void **state)
{
    (void)state;
    const char *meshes[][2] = {{"mixtral-8x22b", "auto"},
                               {"mixtral-8x7b", "tp=2,pp=1,ep=4,etp=2,zero=3,recompute=full"},
                               {"llama3-70b", "auto"}};
    const char *want[] = {"then /eEP = MESH_EP_RANK: expert layers are EP ",
                          "then /eEP.ETP = MESH_EP_RANK.MESH_ETP_RANK: expert layers are EP 4 x "
                          "expert TP 2",
                          NULL};
    for (int i = 0; i < 3; i++) {
        mesh_plan_t *p = plan(meshes[i][0], i == 2 ? 4 : 8, meshes[i][1]);
        mesh_picture_opts_t o = {.color = 0, .width = 100};
        char *svg = mesh_picture_svg(p), *t = mesh_picture_ranks(p, &o);
        if (want[i]) {
            assert_non_null(strstr(svg, want[i]));
            assert_non_null(strstr(t, want[i]));
            assert_non_null(strstr(svg, i ? "/e3.1</text>" : "/e7</text>"));
        } else {
            assert_null(strstr(svg, "MESH_EP_RANK"));
        }
        free(svg);
        free(t);
        mesh_plan_destroy(p);
    }
}

/* Colour is the caller's decision, taken as given, on a terminal or not;
 * the width is the terminal's. */
static void opts__colour_is_the_callers(void **state)
{
    (void)state;
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0) {
        if (master >= 0)
            close(master);
        skip(); /* no pseudo-terminal here */
    }
    int tty = open(ptsname(master), O_RDWR | O_NOCTTY);
    assert_true(tty >= 0);
    struct winsize ws = {.ws_row = 24, .ws_col = 60};
    assert_int_equal(ioctl(tty, TIOCSWINSZ, &ws), 0);
    unsetenv("NO_COLOR");
    mesh_picture_opts_t po = mesh_picture_opts_for(tty, 0); /* e.g. TERM=dumb */
    assert_int_equal(po.color, 0);
    assert_int_equal(po.width, 60);
    assert_int_equal(mesh_picture_opts_for(tty, 1).color, 1);
    close(tty);
    close(master);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(opts__no_colour_off_a_terminal),
        cmocka_unit_test(colour__one_rule_for_every_front_end),
        cmocka_unit_test(explained__report_restart_pictures),
        cmocka_unit_test(text__ranks_pipeline_memory),
        cmocka_unit_test(text__pipeline_painted_by_kind),
        cmocka_unit_test(text__big_allocations_summarised),
        cmocka_unit_test(text__rank_rows_cut_at_the_width),
        cmocka_unit_test(text__sampled_nodes_named),
        cmocka_unit_test(text__memory_over_capacity),
        cmocka_unit_test(svg__self_contained),
        cmocka_unit_test(svg__rank_map_row_filled_exactly_shows_every_gpu),
        cmocka_unit_test(svg__rank_map_skips_only_between_rows),
        cmocka_unit_test(svg__pipeline_filled_exactly_shows_every_slot),
        cmocka_unit_test(svg__pipeline_rows_thin_past_32_stages),
        cmocka_unit_test(text__pipeline_exact),
        cmocka_unit_test(text__memory_exact),
        cmocka_unit_test(text__ranks_with_cp_exact),
        cmocka_unit_test(text__ranks_exact),
        cmocka_unit_test(plural__one_of_each),
        cmocka_unit_test(svg__usable_label_clear_of_heading),
        cmocka_unit_test(svg__palettes_distinct),
        cmocka_unit_test(svg__odd_chunks_only_when_interleaved),
        cmocka_unit_test(svg__same_micro_batches_as_text),
        cmocka_unit_test(pipeline__long_shows_its_ends),
        cmocka_unit_test(svg__text_legible_and_inside),
        cmocka_unit_test(svg__long_title_wrapped_between_words),
        cmocka_unit_test(svg__title_broken_at_a_comma_or_a_blank_keeps_every_character),
        cmocka_unit_test(svg__numbers_fit_their_cells),
        cmocka_unit_test(svg__sample_and_the_plans_bubble),
        cmocka_unit_test(svg__long_timeline_cut_not_slivers),
        cmocka_unit_test(svg__legend_has_the_expert_ranks),
        cmocka_unit_test(opts__colour_is_the_callers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
