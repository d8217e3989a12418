/*
 * Pictures of a plan, as text for the terminal and as SVG (picture.h).
 *
 * The pipeline picture is not drawn from a formula: it shows the slots
 * mesh_pipe_schedule (schedule.c) fills running Megatron's schedule, so the
 * bubble one sees is the one the schedule makes.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "internal.h"
#include "meshplan/memory.h"
#include "meshplan/picture.h"
#include "meshplan/ranks.h"

#define DEFAULT_WIDTH 100
#define ALL_NODES     16 /* a rank map of more nodes shows a sample: */
#define SHOWN_NODES   8  /* the first two, the first of each stage, the last */

/* ---- text ---- */

static const int stage_bg[] = {44, 42, 43, 45, 46, 41, 104, 102, 103, 105, 106, 101};

static void paint(mesh_buf_t *b, const mesh_picture_opts_t *o, int bg, const char *text)
{
    if (o->color)
        mesh_buf_printf(b, "\033[30;%dm%s\033[0m", bg, text);
    else
        mesh_buf_puts(b, text);
}

mesh_picture_opts_t mesh_picture_opts_for(int fd)
{
    mesh_picture_opts_t po = {.color = 0, .width = DEFAULT_WIDTH};
    const char *no = getenv("NO_COLOR");
    struct winsize ws;
    if (!isatty(fd))
        return po;
    po.color = !(no && *no);
    if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40 && ws.ws_col < DEFAULT_WIDTH)
        po.width = ws.ws_col;
    return po;
}

static int width_of(const mesh_picture_opts_t *o)
{
    if (!o || o->width <= 0)
        return DEFAULT_WIDTH;
    return o->width < 40 ? 40 : o->width; /* narrower, nothing could be drawn */
}

/* A line of prose, wrapped at spaces to the width (continuations indented). */
static void say(mesh_buf_t *b, const mesh_picture_opts_t *o, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void say(mesh_buf_t *b, const mesh_picture_opts_t *o, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    int width = width_of(o), indent = (int)strspn(text, " "), col = indent;
    char *save = NULL, *w = strtok_r(text + indent, " ", &save);
    mesh_buf_printf(b, "%*s", indent, ""); /* keep the indent */
    for (int first = 1; w; w = strtok_r(NULL, " ", &save), first = 0) {
        int len = (int)strlen(w);
        if (!first && col + 1 + len > width) {
            mesh_buf_puts(b, "\n   ");
            col = 3;
        } else if (!first) {
            mesh_buf_puts(b, " ");
            col++;
        }
        mesh_buf_puts(b, w);
        col += len;
    }
    mesh_buf_puts(b, "\n");
}

/* A MoE layout's cells also show the rank's place in its expert layers:
 * "/eN" its EP rank (and ".T" its expert TP rank under etp > 1). */
static void expert_cell(const mesh_layout_t *l, const mesh_coords_t *c, char *buf, size_t len)
{
    size_t n = strlen(buf);
    if (l->ep <= 0 || n >= len)
        return;
    if (l->etp > 1)
        snprintf(buf + n, len - n, "/e%d.%d", c->ep, c->etp);
    else
        snprintf(buf + n, len - n, "/e%d", c->ep);
}

static void cell_text(const mesh_layout_t *l, long rank, char *buf, size_t len)
{
    mesh_coords_t c = mesh_rank_coords(l, rank);
    if (l->cp > 1)
        snprintf(buf, len, "%d.%d.%d.%d", c.pp, c.dp, c.cp, c.tp);
    else
        snprintf(buf, len, "%d.%d.%d", c.pp, c.dp, c.tp);
    expert_cell(l, &c, buf, len);
}

static void node_row(mesh_buf_t *b, const mesh_picture_opts_t *o, const mesh_layout_t *l, long node,
                     int gpus, int shown, int cw)
{
    char cell[48], pad[64];
    mesh_buf_printf(b, "node %-4ld", node);
    for (int g = 0; g < shown; g++) {
        long rank = node * gpus + g;
        cell_text(l, rank, cell, sizeof(cell));
        snprintf(pad, sizeof(pad), "%-*s", cw, cell);
        mesh_buf_puts(b, " ");
        paint(b, o, stage_bg[mesh_rank_coords(l, rank).pp % MESH_ARRAY_LEN(stage_bg)], pad);
    }
    mesh_buf_puts(b, shown < gpus ? " ...\n" : "\n");
}

/* The nodes a picture shows, ascending: all of a small allocation; else
 * the first two, the first node of each pipeline stage, and the last. */
static int sample_nodes(const mesh_layout_t *l, const mesh_alloc_t *a, long out[])
{
    int n = 0;
    if (a->nodes <= ALL_NODES) {
        for (long i = 0; i < a->nodes; i++)
            out[n++] = i;
        return n;
    }
    long per_stage = mesh_layout_world(l) / l->pp / a->gpus_per_node; /* nodes */
    out[n++] = 0;
    out[n++] = 1;
    for (int s = 1; s < l->pp && n < SHOWN_NODES; s++)
        if (per_stage >= 1 && s * per_stage > out[n - 1])
            out[n++] = s * per_stage;
    if (out[n - 1] != a->nodes - 1)
        out[n++] = a->nodes - 1;
    return n;
}

char *mesh_picture_ranks(const mesh_plan_t *p, const mesh_picture_opts_t *o)
{
    const mesh_layout_t *l = &mesh_plan_best(p)->layout;
    const mesh_alloc_t *a = mesh_plan_alloc(p);
    mesh_buf_t b;
    char cell[48];
    mesh_buf_init(&b);
    /* the widest cell is the last rank's */
    cell_text(l, mesh_layout_world(l) - 1, cell, sizeof(cell));
    int gpus = a->gpus_per_node, cw = (int)strlen(cell);
    snprintf(cell, sizeof(cell), "gpu%d", gpus - 1); /* the column heads fit too */
    cw = (int)strlen(cell) > cw ? (int)strlen(cell) : cw;
    int shown = (width_of(o) - 13) / (cw + 1);
    shown = shown < 1 ? 1 : shown > gpus ? gpus : shown;
    say(&b, o, "Rank map: %d node%s x %d GPUs; a cell is %s, coloured by stage", a->nodes,
        a->nodes == 1 ? "" : "s", gpus, l->cp > 1 ? "stage.replica.cp.tp" : "stage.replica.tp");
    if (l->ep > 0)
        say(&b, o,
            "  then /e and the rank's place in the expert layers, which re-partition each stage "
            "into EP %d x expert TP %d x expert DP %ld%s",
            l->ep, l->etp, mesh_layout_edp(l), l->etp > 1 ? " (/eEP.ETP)" : " (/eEP)");
    mesh_buf_printf(&b, "%9s", "");
    for (int g = 0; g < shown; g++) {
        snprintf(cell, sizeof(cell), "gpu%d", g);
        mesh_buf_printf(&b, " %-*s", g + 1 < shown ? cw : 0, cell);
    }
    mesh_buf_puts(&b, "\n");
    long rows[ALL_NODES + 1];
    int n_rows = sample_nodes(l, a, rows);
    for (int i = 0; i < n_rows; i++) {
        if (i > 0 && rows[i] > rows[i - 1] + 1)
            mesh_buf_printf(&b, "  ...     %ld node%s\n", rows[i] - rows[i - 1] - 1,
                            rows[i] - rows[i - 1] - 1 == 1 ? "" : "s");
        node_row(&b, o, l, rows[i], gpus, shown, cw);
    }
    if (n_rows < a->nodes)
        say(&b, o,
            "  (%d of %d nodes shown, the first of each stage among them; node n holds ranks "
            "%dn to %dn+%d)",
            n_rows, a->nodes, gpus, gpus, gpus - 1);
    return mesh_buf_take(&b);
}

/* How many micro-batches to draw: all of them if the picture fits. */
static int drawn_micro_batches(int pp, int vpp, long m, int cols)
{
    long best = 0;
    for (long d = 1; d <= m && d <= 4096; d++) {
        if (vpp > 1 && d % pp)
            continue;
        /* one forward and two backward slots per unit, plus the fill and drain */
        if (3 * (d * vpp + pp - 1) > cols)
            break;
        best = d;
    }
    return (int)best;
}

/* One stage's row: each column is k slots (k > 1 when a long schedule is
 * squeezed: then F or B, whichever fills more of it, or '.'). */
static void pipe_row(mesh_buf_t *b, const mesh_picture_opts_t *o, const mesh_pipe_op_t *ops,
                     int n_ops, int stage, int slots, int k, int *at)
{
    for (int t = 0; t < slots; t++)
        at[t] = -1;
    for (int i = 0; i < n_ops; i++)
        if (ops[i].stage == stage)
            for (int t = ops[i].start; t < ops[i].start + ops[i].len; t++)
                at[t] = i;
    mesh_buf_printf(b, "stage %-3d ", stage);
    for (int t0 = 0; t0 < slots; t0 += k) {
        int f = 0, bw = 0, first = -1;
        for (int t = t0; t < t0 + k && t < slots; t++) {
            if (at[t] < 0)
                continue;
            first = first < 0 ? at[t] : first;
            ops[at[t]].kind == 'F' ? f++ : bw++;
        }
        if (first < 0) {
            mesh_buf_puts(b, o && o->color ? "\033[2m.\033[0m" : ".");
            continue;
        }
        const mesh_pipe_op_t *op = &ops[first];
        char kind = k == 1 ? op->kind : f >= bw ? 'F' : 'B';
        char glyph[2] = {k > 1             ? kind
                         : op->kind == 'F' ? (char)('0' + op->mb % 10)
                                           : (char)('a' + op->mb % 10),
                         0};
        int shade = k == 1 && op->chunk % 2;
        paint(b, o, kind == 'F' ? (shade ? 102 : 42) : (shade ? 104 : 44), glyph);
    }
    mesh_buf_puts(b, "\n");
}

char *mesh_picture_pipeline(const mesh_plan_t *p, const mesh_picture_opts_t *o)
{
    const mesh_candidate_t *c = mesh_plan_best(p);
    const mesh_layout_t *l = &c->layout;
    int pp = l->pp, vpp = l->vpp;
    long m = c->micro_batches;
    mesh_buf_t b;
    mesh_buf_init(&b);
    say(&b, o, "Pipeline: %d stage%s, %ld micro-batches, %s; bubble (p-1)/(v*m) = %.1f%%", pp,
        pp == 1 ? "" : "s", m,
        pp == 1   ? "no pipeline"
        : vpp > 1 ? "interleaved 1F1B"
                  : "1F1B",
        100 * mesh_pipeline_bubble(pp, vpp, m));
    if (pp == 1)
        return mesh_buf_take(&b);
    int cols = width_of(o) - 10, d = drawn_micro_batches(pp, vpp, m, cols), k = 1;
    if (!d) /* even the shortest schedule is too wide: squeeze time */
        d = (int)(m < 2L * pp ? m : 2L * pp);
    mesh_pipe_op_t *ops = NULL;
    int slots = mesh_pipe_schedule(pp, vpp, d, &ops), n_ops = 2 * pp * vpp * d;
    int *at = slots > 0 ? malloc(sizeof(int) * (size_t)slots) : NULL;
    if (!at) {
        free(ops);
        return mesh_buf_take(&b);
    }
    k = (slots + cols - 1) / cols;
    if (d < m)
        say(&b, o, "  drawn for %d micro-batches (bubble %.1f%%); the plan has %ld", d,
            100 * mesh_pipeline_bubble(pp, vpp, d), m);
    /* a long pipeline shows its first stages, some middle ones and the last */
    for (int s = 0; s < pp; s++) {
        if (pp > 16 && s >= 8 && s < pp - 4) {
            if (s == 8)
                mesh_buf_printf(&b, "  ...     stages 8 to %d\n", pp - 5);
            continue;
        }
        pipe_row(&b, o, ops, n_ops, s, slots, k, at);
    }
    if (k == 1)
        say(&b, o,
            "  0-9: forward of micro-batch k (mod 10), a-j: its backward (two slots), .: idle%s",
            vpp > 1 ? "; chunks alternate shades" : "");
    else
        say(&b, o, "  one column is %d time slots: F forward, B backward, . idle", k);
    free(at);
    free(ops);
    return mesh_buf_take(&b);
}

char *mesh_picture_memory(const mesh_plan_t *p, const mesh_picture_opts_t *o)
{
    const mesh_memory_t *mem = &mesh_plan_best(p)->memory;
    /* how each part of the table (memory.h) is drawn */
    static const struct {
        char glyph;
        int bg;
    } part[MESH_MEMORY_PARTS] = {{'W', 44}, {'G', 46}, {'O', 45}, {'A', 43}, {'X', 47}};
    mesh_buf_t b;
    mesh_buf_init(&b);
    int bar = width_of(o) - 4;
    bar = bar > 80 ? 80 : bar;
    /* the larger of total and capacity ends the bar; the capacity is a '|' */
    double scale = (mem->total > mem->capacity ? mem->total : mem->capacity) / (bar - 1);
    int cap = (int)(mem->capacity / scale + 0.5), pos = 0;
    say(&b, o, "Memory of the worst rank (stage %d): %s of %s GiB usable%s", mem->stage,
        mesh_gib_str(mem->total).s, mesh_gib_str(mem->capacity).s,
        mem->total > mem->capacity ? ": DOES NOT FIT" : "");
    mesh_buf_puts(&b, " [");
    double acc = 0;
    for (int i = 0; i < MESH_MEMORY_PARTS; i++) {
        acc += mesh_memory_part_bytes(mem, i);
        int end = (int)(acc / scale + 0.5);
        for (; pos < end; pos++) {
            char g[2] = {pos == cap ? '|' : part[i].glyph, 0};
            paint(&b, o, pos >= cap && mem->total > mem->capacity ? 41 : part[i].bg, g);
        }
    }
    for (; pos < bar; pos++)
        mesh_buf_puts(&b, pos == cap ? "|" : " ");
    mesh_buf_puts(&b, "]\n");
    for (int i = 0, col = 0; i < MESH_MEMORY_PARTS; i++) {
        char key[2] = {part[i].glyph, 0}, entry[64];
        int len = snprintf(entry, sizeof(entry), " %s %s GiB", mesh_memory_part(i)->label,
                           mesh_gib_str(mesh_memory_part_bytes(mem, i)).s);
        if (col > 0 && col + 2 + len > width_of(o)) {
            mesh_buf_puts(&b, "\n");
            col = 0;
        }
        mesh_buf_puts(&b, col ? "  " : " ");
        paint(&b, o, part[i].bg, key);
        mesh_buf_puts(&b, entry);
        col += (col ? 2 : 1) + 1 + len;
    }
    mesh_buf_puts(&b, "\n");
    say(&b, o, " | usable capacity (%.0f%% of the GPU's %s GiB)",
        100 * mem->capacity / mesh_plan_alloc(p)->gpu.memory,
        mesh_gib_str(mesh_plan_alloc(p)->gpu.memory).s);
    return mesh_buf_take(&b);
}

char *mesh_picture_text(const mesh_plan_t *p, const mesh_picture_opts_t *o)
{
    char *parts[3] = {mesh_picture_ranks(p, o), mesh_picture_pipeline(p, o),
                      mesh_picture_memory(p, o)};
    mesh_buf_t b;
    mesh_buf_init(&b);
    for (int i = 0; i < 3; i++) {
        if (parts[i])
            mesh_buf_printf(&b, "%s%s", i ? "\n" : "", parts[i]);
        free(parts[i]);
    }
    return mesh_buf_take(&b);
}

/* ---- SVG ---- */

static const char *const stage_fill[] = {"#4e79a7", "#59a14f", "#edc948", "#b07aa1",
                                         "#76b7b2", "#e15759", "#ff9da7", "#9c755f",
                                         "#bab0ac", "#f28e2b", "#86bcb6", "#d37295"};

static void svg_text(mesh_buf_t *b, double x, double y, int size, const char *anchor,
                     const char *text)
{
    mesh_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" text-anchor=\"%s\">", x, y,
                    size, anchor);
    for (const char *c = text; *c; c++) { /* names are checked, but never trust them in XML */
        char one[2] = {*c, 0};
        mesh_buf_puts(b, *c == '<' ? "&lt;" : *c == '>' ? "&gt;" : *c == '&' ? "&amp;" : one);
    }
    mesh_buf_puts(b, "</text>\n");
}

static double svg_ranks(mesh_buf_t *b, const mesh_plan_t *p, double y)
{
    const mesh_layout_t *l = &mesh_plan_best(p)->layout;
    const mesh_alloc_t *a = mesh_plan_alloc(p);
    int gpus = a->gpus_per_node, shown;
    char line[160], cell[48];
    cell_text(l, mesh_layout_world(l) - 1, cell, sizeof(cell)); /* the widest */
    int cw = 6.5 * (double)strlen(cell) + 12 > 52 ? (int)(6.5 * (double)strlen(cell) + 12) : 52;
    shown = 900 / (cw + 2) < gpus ? 900 / (cw + 2) : gpus;
    snprintf(line, sizeof(line), "Rank map: %d nodes x %d GPUs (cell: %s; colour: stage)", a->nodes,
             gpus, l->cp > 1 ? "stage.replica.cp.tp" : "stage.replica.tp");
    svg_text(b, 20, y, 14, "start", line);
    y += 12;
    long rows[ALL_NODES + 1];
    int n_rows = sample_nodes(l, a, rows);
    for (int i = 0; i < n_rows; i++) {
        long n = rows[i];
        if (i > 0 && n > rows[i - 1] + 1) {
            snprintf(line, sizeof(line), "... %ld nodes", n - rows[i - 1] - 1);
            svg_text(b, 90, y + 14, 11, "start", line);
            y += 20;
        }
        snprintf(line, sizeof(line), "node %ld", n);
        svg_text(b, 20, y + 16, 11, "start", line);
        for (int g = 0; g < shown; g++) {
            long rank = n * gpus + g;
            cell_text(l, rank, cell, sizeof(cell));
            mesh_buf_printf(b,
                            "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"22\" fill=\"%s\" "
                            "stroke=\"#ffffff\"/>\n",
                            90 + (cw + 2) * g, y, cw,
                            stage_fill[mesh_rank_coords(l, rank).pp % MESH_ARRAY_LEN(stage_fill)]);
            svg_text(b, 90 + (cw + 2) * g + cw / 2.0, y + 15, 10, "middle", cell);
        }
        y += 24;
    }
    return y + 16;
}

static double svg_pipeline(mesh_buf_t *b, const mesh_plan_t *p, double y)
{
    const mesh_candidate_t *c = mesh_plan_best(p);
    int pp = c->layout.pp, vpp = c->layout.vpp;
    long m = c->micro_batches;
    char line[200];
    snprintf(line, sizeof(line), "Pipeline: %d stages, %ld micro-batches, %s, bubble %.1f%%", pp, m,
             pp == 1   ? "no pipeline"
             : vpp > 1 ? "interleaved 1F1B"
                       : "1F1B",
             100 * mesh_pipeline_bubble(pp, vpp, m));
    svg_text(b, 20, y, 14, "start", line);
    y += 12;
    if (pp == 1)
        return y + 10;
    int d = drawn_micro_batches(pp, vpp, m, 150); /* at least 6 px a slot */
    if (!d) /* a long pipeline: its shortest schedule, with thinner slots */
        d = (int)(m < pp ? m : pp);
    mesh_pipe_op_t *ops = NULL;
    int slots = d ? mesh_pipe_schedule(pp, vpp, d, &ops) : -1;
    if (slots < 0) {
        svg_text(b, 20, y + 14, 11, "start", "(too long to draw)");
        return y + 30;
    }
    double sw = 900.0 / slots, h = pp > 32 ? 6 : 14;
    if (d < m) {
        snprintf(line, sizeof(line), "drawn for %d micro-batches (bubble %.1f%%)", d,
                 100 * mesh_pipeline_bubble(pp, vpp, d));
        svg_text(b, 20, y + 12, 11, "start", line);
        y += 18;
    }
    for (int s = 0; s < pp; s++) {
        if (h >= 12) {
            snprintf(line, sizeof(line), "stage %d", s);
            svg_text(b, 20, y + s * (h + 2) + h - 3, 10, "start", line);
        }
        mesh_buf_printf(b,
                        "<rect x=\"90\" y=\"%.1f\" width=\"900\" height=\"%.0f\" "
                        "fill=\"#eeeeee\"/>\n",
                        y + s * (h + 2), h);
    }
    for (int i = 0; i < 2 * pp * vpp * d; i++) {
        const mesh_pipe_op_t *op = &ops[i];
        const char *fill = op->kind == 'F' ? (op->chunk % 2 ? "#8cd17d" : "#59a14f")
                                           : (op->chunk % 2 ? "#a0cbe8" : "#4e79a7");
        mesh_buf_printf(b,
                        "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.0f\" fill=\"%s\" "
                        "stroke=\"#ffffff\" stroke-width=\"0.5\"/>\n",
                        90 + op->start * sw, y + op->stage * (h + 2), op->len * sw, h, fill);
        if (sw >= 9 && h >= 12) {
            snprintf(line, sizeof(line), "%d", op->mb);
            svg_text(b, 90 + (op->start + op->len / 2.0) * sw, y + op->stage * (h + 2) + h - 3, 9,
                     "middle", line);
        }
    }
    free(ops);
    y += pp * (h + 2) + 14;
    svg_text(b, 90, y, 10, "start",
             "green: forward, blue: backward (lighter: odd chunks), grey: idle (the bubble)");
    return y + 22;
}

static double svg_memory(mesh_buf_t *b, const mesh_plan_t *p, double y)
{
    const mesh_memory_t *mem = &mesh_plan_best(p)->memory;
    /* the fill of each part of the table (memory.h) */
    static const char *const fill[MESH_MEMORY_PARTS] = {"#4e79a7", "#76b7b2", "#b07aa1", "#edc948",
                                                        "#bab0ac"};
    char line[200];
    snprintf(line, sizeof(line), "Memory of the worst rank (stage %d): %s of %s GiB usable%s",
             mem->stage, mesh_gib_str(mem->total).s, mesh_gib_str(mem->capacity).s,
             mem->total > mem->capacity ? " (does not fit)" : "");
    svg_text(b, 20, y, 14, "start", line);
    y += 12;
    double scale = 900 / (mem->total > mem->capacity ? mem->total : mem->capacity), x = 90;
    for (int i = 0; i < MESH_MEMORY_PARTS; i++) {
        double bytes = mesh_memory_part_bytes(mem, i), w = bytes * scale;
        mesh_buf_printf(b,
                        "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"26\" fill=\"%s\"/>\n",
                        x, y, w, fill[i]);
        snprintf(line, sizeof(line), "%s %s GiB", mesh_memory_part(i)->label,
                 mesh_gib_str(bytes).s);
        mesh_buf_printf(b, "<rect x=\"%d\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\"/>\n",
                        90 + 180 * i, y + 36, fill[i]);
        svg_text(b, 90 + 180 * i + 14, y + 45, 11, "start", line);
        x += w;
    }
    double cx = 90 + mem->capacity * scale;
    mesh_buf_printf(b,
                    "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" stroke=\"#d62728\" "
                    "stroke-width=\"2\" stroke-dasharray=\"4 2\"/>\n",
                    cx, y - 4, cx, y + 30);
    svg_text(b, cx, y - 6, 10, "end", "usable");
    return y + 64;
}

char *mesh_picture_svg(const mesh_plan_t *p)
{
    mesh_buf_t body, b;
    char canon[MESH_LAYOUT_STR_MAX], title[300];
    mesh_buf_init(&body);
    const mesh_alloc_t *a = mesh_plan_alloc(p);
    snprintf(title, sizeof(title), "%s on %d x %d %s: %s", mesh_plan_model(p)->name, a->nodes,
             a->gpus_per_node, a->gpu.name,
             mesh_layout_format(&mesh_plan_best(p)->layout, canon, sizeof(canon)));
    svg_text(&body, 20, 28, 16, "start", title);
    double y = svg_ranks(&body, p, 58);
    y = svg_pipeline(&body, p, y + 10);
    y = svg_memory(&body, p, y + 10);
    mesh_buf_init(&b);
    mesh_buf_printf(&b,
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1010\" height=\"%.0f\" "
                    "viewBox=\"0 0 1010 %.0f\" font-family=\"monospace\">\n"
                    "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
                    y + 10, y + 10);
    mesh_buf_puts(&b, body.data ? body.data : "");
    mesh_buf_puts(&b, "</svg>\n");
    mesh_buf_free(&body);
    return mesh_buf_take(&b);
}
