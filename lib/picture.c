/* SPDX-License-Identifier: GPL-2.0-or-later */
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
/* The slots a timeline draws one to a column: a 100-column picture's */
#define TIMELINE_SLOTS (DEFAULT_WIDTH - 10)

/* ---- text ---- */

static const int stage_bg[] = {44, 42, 43, 45, 46, 41, 104, 102, 103, 105, 106, 101};

static void paint(mesh_buf_t *b, const mesh_picture_opts_t *o, int bg, const char *text)
{
    if (o->color)
        mesh_buf_printf(b, "\033[30;%dm%s\033[0m", bg, text);
    else
        mesh_buf_puts(b, text);
}

int mesh_picture_color(int fd, const char *no_color, const char *term)
{
    /* NO_COLOR set to anything (no-color.org); TERM unset, empty or "dumb"
     * (Emacs' shell, editors' consoles, cron) says the terminal has none */
    return isatty(fd) && !(no_color && *no_color) && term && *term && strcmp(term, "dumb") != 0;
}

mesh_picture_opts_t mesh_picture_opts_for(int fd, int color)
{
    /* the environment is the caller's to read (mesh_picture_color decides
     * from what it read) */
    mesh_picture_opts_t po = {.color = color ? 1 : 0, .width = DEFAULT_WIDTH};
    struct winsize ws;
    if (isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40 &&
        ws.ws_col < DEFAULT_WIDTH)
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

/* A cell: the global rank, then its coordinates in MESH_ORDER, the order
 * of `meshplan ranks`' columns (tp cp dp pp), each the value its task gets
 * in MESH_*_RANK; cp only where there is CP.  The last rank's is the widest. */
static void cell_text(const mesh_layout_t *l, long rank, char *buf, size_t len)
{
    mesh_coords_t c = mesh_rank_coords(l, rank);
    if (l->cp > 1)
        snprintf(buf, len, "%ld:%d.%d.%d.%d", rank, c.tp, c.cp, c.dp, c.pp);
    else
        snprintf(buf, len, "%ld:%d.%d.%d", rank, c.tp, c.dp, c.pp);
    expert_cell(l, &c, buf, len);
}

/* What a cell says, under the map (text and SVG alike). */
static const char *cell_legend(const mesh_layout_t *l)
{
    return l->cp > 1 ? "cell: rank:tp.cp.dp.pp = RANK:MESH_TP_RANK.MESH_CP_RANK.MESH_DP_RANK."
                       "MESH_PP_RANK (pp: stage)"
                     : "cell: rank:tp.dp.pp = RANK:MESH_TP_RANK.MESH_DP_RANK.MESH_PP_RANK "
                       "(pp: stage; no CP)";
}

/* What a MoE layout's "/eN" (or "/eN.T") adds to a cell, under the map
 * (text and SVG alike); "" when the layout has no expert layers. */
static void expert_legend(const mesh_layout_t *l, char *buf, size_t len)
{
    buf[0] = '\0';
    if (l->ep > 0) /* the expert layers re-partition each stage */
        snprintf(buf, len,
                 "then %s = MESH_EP_RANK%s: expert layers are EP %d x expert TP %d x expert DP %ld",
                 l->etp > 1 ? "/eEP.ETP" : "/eEP", l->etp > 1 ? ".MESH_ETP_RANK" : "", l->ep,
                 l->etp, mesh_layout_edp(l));
}

/* The rank map's heading (text and SVG alike). */
static void ranks_title(const mesh_alloc_t *a, int coloured, char *buf, size_t len)
{
    snprintf(buf, len, "Rank map: %d %s x %d %s%s", a->nodes, mesh_noun(a->nodes, "node", "nodes"),
             a->gpus_per_node, mesh_noun(a->gpus_per_node, "GPU", "GPUs"),
             coloured ? ", coloured by stage" : "");
}

/* One node's row: its number under "node" (lw columns), then its cells,
 * cw wide but for the last one of plain text (no trailing blanks). */
static void node_row(mesh_buf_t *b, const mesh_picture_opts_t *o, const mesh_layout_t *l, long node,
                     int gpus, int shown, int cw, int lw)
{
    char cell[48], pad[64];
    mesh_buf_printf(b, "%-*ld", lw, node);
    for (int g = 0; g < shown; g++) {
        long rank = node * gpus + g;
        cell_text(l, rank, cell, sizeof(cell));
        snprintf(pad, sizeof(pad), "%-*s", o->color || g + 1 < gpus ? cw : 0, cell);
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

/* Which nodes a sampled map shows, as sample_nodes chose them. */
static void sample_note(mesh_buf_t *b, const mesh_picture_opts_t *o, const mesh_layout_t *l,
                        const long rows[], int n_rows, const mesh_alloc_t *a)
{
    int last = mesh_rank_coords(l, rows[n_rows - 2] * a->gpus_per_node).pp; /* its stage */
    if (n_rows == 3) /* no stage starts on a node of its own */
        say(b, o, "  (%d of %d nodes shown: the first two and the last)", n_rows, a->nodes);
    else if (last == 1)
        say(b, o, "  (%d of %d nodes shown: the first two, the first of stage 1, the last)", n_rows,
            a->nodes);
    else
        say(b, o, "  (%d of %d nodes shown: the first two, the first of stages 1 to %d, the last)",
            n_rows, a->nodes, last);
}

char *mesh_picture_ranks(const mesh_plan_t *p, const mesh_picture_opts_t *o)
{
    const mesh_layout_t *l = &mesh_plan_best(p)->layout;
    const mesh_alloc_t *a = mesh_plan_alloc(p);
    mesh_buf_t b;
    char cell[48], line[160];
    mesh_buf_init(&b);
    cell_text(l, mesh_layout_world(l) - 1, cell, sizeof(cell));
    int gpus = a->gpus_per_node, cw = (int)strlen(cell), width = width_of(o);
    snprintf(cell, sizeof(cell), "gpu%d", gpus - 1); /* the column heads fit too */
    cw = (int)strlen(cell) > cw ? (int)strlen(cell) : cw;
    /* the node column: "node" or the last node's number, the wider */
    int lw = snprintf(cell, sizeof(cell), "%d", a->nodes - 1), shown = gpus;
    lw = lw < 4 ? 4 : lw;
    if (lw + gpus * (cw + 1) > width) /* room for " ..." too */
        shown = (width - lw - 4) / (cw + 1);
    shown = shown < 1 ? 1 : shown;
    ranks_title(a, o->color, line, sizeof(line));
    say(&b, o, "%s", line);
    mesh_buf_printf(&b, "%-*s", lw, "node");
    for (int g = 0; g < shown; g++) {
        snprintf(cell, sizeof(cell), "gpu%d", g);
        mesh_buf_printf(&b, " %-*s", g + 1 < shown ? cw : 0, cell);
    }
    mesh_buf_puts(&b, "\n");
    long rows[ALL_NODES + 1];
    int n_rows = sample_nodes(l, a, rows);
    for (int i = 0; i < n_rows; i++) {
        long skipped = i > 0 ? rows[i] - rows[i - 1] - 1 : 0;
        if (skipped > 0)
            mesh_buf_printf(&b, "%-*s %ld %s\n", lw, "...", skipped,
                            mesh_noun(skipped, "node", "nodes"));
        node_row(&b, o, l, rows[i], gpus, shown, cw, lw);
    }
    say(&b, o, "  %s", cell_legend(l));
    expert_legend(l, line, sizeof(line));
    if (*line)
        say(&b, o, "  %s", line);
    if (n_rows < a->nodes)
        sample_note(&b, o, l, rows, n_rows, a);
    return mesh_buf_take(&b);
}

/* The slots a schedule of d micro-batches takes at least: one forward and
 * two backward slots per unit, plus the fill and the drain. */
static long schedule_slots(int pp, int vpp, long d)
{
    return 3 * (d * vpp + pp - 1);
}

/* How many micro-batches a timeline shows, the text's and the SVG's alike
 * (so both draw the same schedule): all of them when their schedule has
 * room in TIMELINE_SLOTS; else a sample that does what the whole does, the
 * fill, the steady 1F1B and the drain: two per stage (a multiple of the
 * stages, as Megatron's interleaving wants).  Fewer would not do: with one
 * per stage an interleaved stage 0 runs out of forwards before its first
 * backward, an idle the plan does not have; a 15 of 16 stages' timeline is
 * all fill and drain. */
static int timeline_micro_batches(int pp, int vpp, long m)
{
    if (schedule_slots(pp, vpp, m) <= TIMELINE_SLOTS)
        return (int)m;
    return (int)(m < 2L * pp ? m : 2L * pp);
}

/* The pipeline's heading (text and SVG alike). */
static void pipeline_title(const mesh_candidate_t *c, char *buf, size_t len)
{
    int pp = c->layout.pp, vpp = c->layout.vpp;
    long m = c->micro_batches;
    snprintf(buf, len, "Pipeline: %d %s, %ld %s, %s; bubble (p-1)/(v*m) = %.1f%%", pp,
             mesh_noun(pp, "stage", "stages"), m, mesh_noun(m, "micro-batch", "micro-batches"),
             pp == 1   ? "no pipeline"
             : vpp > 1 ? "interleaved 1F1B"
                       : "1F1B",
             100 * mesh_pipeline_bubble(pp, vpp, m));
}

/* The line saying that fewer micro-batches than the plan's are drawn: the
 * bubble it gives is the plan's (the cost model's (p-1)/(v*m)), not that of
 * the shorter schedule drawn, whose fill and drain weigh more. */
static void drawn_note(const mesh_candidate_t *c, int d, char *buf, size_t len)
{
    snprintf(buf, len,
             "drawn for %d of the %ld micro-batches (the middle shortened: ...); the plan's "
             "bubble is %.1f%%",
             d, c->micro_batches, 100 * c->cost.bubble);
}

/* A slot of a unit drawn one slot a column: its micro-batch (mod 10) as
 * 0-9 forward and a-j backward, in capitals for an odd model chunk (A-J
 * forward, K-T backward), so that interleaved chunks read without colour. */
static char slot_glyph(const mesh_pipe_op_t *op)
{
    int mb = op->mb % 10, odd = op->chunk % 2;
    if (op->kind == 'F')
        return (char)(odd ? 'A' + mb : '0' + mb);
    return (char)(odd ? 'K' + mb : 'a' + mb);
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
        char glyph[2] = {k > 1 ? kind : slot_glyph(op), 0};
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
    char line[200];
    mesh_buf_t b;
    mesh_buf_init(&b);
    pipeline_title(c, line, sizeof(line));
    say(&b, o, "%s", line);
    if (pp == 1)
        return mesh_buf_take(&b);
    int cols = width_of(o) - 10, d = timeline_micro_batches(pp, vpp, m);
    mesh_pipe_op_t *ops = NULL;
    int slots = mesh_pipe_schedule(pp, vpp, d, &ops), n_ops = 2 * pp * vpp * d;
    int *at = slots > 0 ? malloc(sizeof(int) * (size_t)slots) : NULL;
    if (!at) {
        free(ops);
        return mesh_buf_take(&b);
    }
    int k = (slots + cols - 1) / cols; /* > 1: squeezed into the width */
    if (d < m) {
        drawn_note(c, d, line, sizeof(line));
        say(&b, o, "  %s", line);
    }
    /* a long pipeline shows its first stages, some middle ones and the last */
    for (int s = 0; s < pp; s++) {
        if (pp > 16 && s >= 8 && s < pp - 4) {
            if (s == 8)
                mesh_buf_printf(&b, "  ...     stages 8 to %d\n", pp - 5);
            continue;
        }
        pipe_row(&b, o, ops, n_ops, s, slots, k, at);
    }
    if (k > 1)
        say(&b, o, "  one column is %d time slots: F forward, B backward, . idle", k);
    else if (vpp > 1)
        say(&b, o,
            "  micro-batch k (mod 10): forward 0-9, backward a-j (two slots), .: idle; the odd "
            "model chunks in capitals: forward A-J, backward K-T");
    else
        say(&b, o,
            "  0-9: forward of micro-batch k (mod 10), a-j: its backward (two slots), .: idle");
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
        if (col > 0 && col + 2 + 1 + len > width_of(o)) { /* the gap, the key, the entry */
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

/* Three palettes, none sharing a colour with another so that no block of
 * one picture reads as a key of the next: the stages light (the rank map's
 * black labels stay legible; no orange or purple), the pipeline's forward
 * orange and backward purple (lighter for odd model chunks), the memory
 * parts' in the order of the table (memory.h). */
static const char *const stage_fill[] = {"#a6cee3", "#b2df8a", "#fb9a99", "#ffff99",
                                         "#8dd3c7", "#d9d9d9", "#fccde5", "#ccebc5",
                                         "#80b1d3", "#e5d8bd", "#b3de69", "#ffed6f"};
static const char *const unit_fill[2][2] = {{"#e6550d", "#fdae6b"},  /* forward: even, odd */
                                            {"#756bb1", "#bcbddc"}}; /* backward */
static const char *const part_fill[MESH_MEMORY_PARTS] = {"#4e79a7", "#76b7b2", "#b07aa1", "#edc948",
                                                         "#bab0ac"};

/* The SVG's text: no size under SVG_FONT_MIN (9 or 10 px monospace blurs
 * at 100% zoom), the headings' and the title's larger.  A monospace
 * glyph's advance is SVG_ADVANCE em (DejaVu Sans Mono 0.602, Liberation
 * Mono and Courier 0.600; rounded up, so an estimate is never short), and
 * every line ends by SVG_RIGHT, 20 px inside the canvas of SVG_WIDTH. */
#define SVG_FONT_MIN   11
#define SVG_FONT_HEAD  14
#define SVG_FONT_TITLE 16
#define SVG_ADVANCE    0.61
#define SVG_WIDTH      1010
#define SVG_RIGHT      (SVG_WIDTH - 20)
#define SVG_LINE(size) ((size) + 5) /* from a baseline to the next */

/* How wide text of this size is drawn (ASCII: names are checked). */
static double svg_text_width(int size, const char *text)
{
    return SVG_ADVANCE * size * (double)strlen(text);
}

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

/* Text from x, wrapped to end by SVG_RIGHT: each line breaks after a comma
 * or at a blank, where it can (a layout string at its commas).  Returns the
 * baseline of its last line. */
static double svg_lines(mesh_buf_t *b, double x, double y, int size, const char *text)
{
    int room = (int)((SVG_RIGHT - x) / (SVG_ADVANCE * size)); /* characters a line */
    char line[512];
    room = room < 8 ? 8 : room;
    for (int first = 1; *text; first = 0, y += SVG_LINE(size)) {
        if (!first)
            text += strspn(text, " ");
        int n = (int)strlen(text);
        if (n > room) { /* the last break that leaves the line within room */
            n = room;
            for (int k = room; k > room / 2; k--)
                if (text[k] == ' ' || text[k - 1] == ',') {
                    n = k;
                    break;
                }
        }
        snprintf(line, sizeof(line), "%.*s", n < (int)sizeof(line) - 1 ? n : 510, text);
        svg_text(b, x, y, size, "start", line);
        text += strlen(line);
        if (!*text)
            return y;
    }
    return y - SVG_LINE(size);
}

/* One node's row of the rank map from y: its cells, and "..." where the
 * width shows fewer GPUs than the node has. */
static void svg_node_row(mesh_buf_t *b, const mesh_layout_t *l, long n, int gpus, int shown, int cw,
                         double y)
{
    char cell[48];
    snprintf(cell, sizeof(cell), "node %ld", n);
    svg_text(b, 20, y + 16, SVG_FONT_MIN, "start", cell);
    for (int g = 0; g < shown; g++) {
        long rank = n * gpus + g;
        cell_text(l, rank, cell, sizeof(cell));
        mesh_buf_printf(b,
                        "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"22\" fill=\"%s\" "
                        "stroke=\"#ffffff\"/>\n",
                        90 + (cw + 2) * g, y, cw,
                        stage_fill[mesh_rank_coords(l, rank).pp % MESH_ARRAY_LEN(stage_fill)]);
        svg_text(b, 90 + (cw + 2) * g + cw / 2.0, y + 15, SVG_FONT_MIN, "middle", cell);
    }
    if (shown < gpus)
        svg_text(b, 90 + (cw + 2) * shown + 2, y + 15, SVG_FONT_MIN, "start", "...");
}

static double svg_ranks(mesh_buf_t *b, const mesh_plan_t *p, double y)
{
    const mesh_layout_t *l = &mesh_plan_best(p)->layout;
    const mesh_alloc_t *a = mesh_plan_alloc(p);
    int gpus = a->gpus_per_node, shown;
    char line[160], cell[48];
    cell_text(l, mesh_layout_world(l) - 1, cell, sizeof(cell)); /* the widest */
    /* a cell fits its text with 6 px to spare each side; room for "..." */
    int cw = (int)(svg_text_width(SVG_FONT_MIN, cell) + 13);
    cw = cw < 52 ? 52 : cw;
    shown = (SVG_RIGHT - 90) / (cw + 2) < gpus ? (SVG_RIGHT - 90 - 20) / (cw + 2) : gpus;
    shown = shown < 1 ? 1 : shown;
    ranks_title(a, 1, line, sizeof(line));
    y = svg_lines(b, 20, y, SVG_FONT_HEAD, line) + 12;
    long rows[ALL_NODES + 1];
    int n_rows = sample_nodes(l, a, rows);
    for (int i = 0; i < n_rows; i++) {
        long skipped = i > 0 ? rows[i] - rows[i - 1] - 1 : 0;
        if (skipped > 0) {
            snprintf(line, sizeof(line), "... %ld %s", skipped,
                     mesh_noun(skipped, "node", "nodes"));
            svg_text(b, 90, y + 14, SVG_FONT_MIN, "start", line);
            y += 20;
        }
        svg_node_row(b, l, rows[i], gpus, shown, cw, y);
        y += 24;
    }
    y = svg_lines(b, 90, y + 12, SVG_FONT_MIN, cell_legend(l));
    expert_legend(l, line, sizeof(line));
    if (*line)
        y = svg_lines(b, 90, y + SVG_LINE(SVG_FONT_MIN), SVG_FONT_MIN, line);
    return y + 18;
}

/* A timeline's time axis: sw px a slot, from x 90.  A schedule too long
 * for SVG_SLOT_MIN px a slot (narrower, its units blur into a moire of
 * slivers) is cut: its first `left` and last `right` slots, SVG_GAP px
 * apart, the steady middle between them left out ("..."). */
#define SVG_SLOT_MIN 5
#define SVG_GAP      36
typedef struct {
    double sw;
    int slots, left, right;
} svg_axis_t;

static svg_axis_t svg_axis(int slots)
{
    svg_axis_t ax = {.sw = (SVG_RIGHT - 90.0) / slots, .slots = slots, .left = slots};
    if (ax.sw < SVG_SLOT_MIN) {
        int shown = (SVG_RIGHT - 90 - SVG_GAP) / SVG_SLOT_MIN;
        ax.left = shown / 2;
        ax.right = shown - ax.left;
        ax.sw = (SVG_RIGHT - 90.0 - SVG_GAP) / shown;
    }
    return ax;
}

/* The x of time t, which is shown (t <= left, or t >= slots - right). */
static double svg_x(const svg_axis_t *ax, double t)
{
    if (t <= ax->left)
        return 90 + t * ax->sw;
    return 90 + ax->left * ax->sw + SVG_GAP + (t - (ax->slots - ax->right)) * ax->sw;
}

/* Whether every unit of a timeline of d micro-batches, sw px a slot and h
 * high, has room for its micro-batch's number: the narrowest, a forward,
 * is one slot; else none is numbered (the colours still tell the passes). */
static int svg_units_numbered(double sw, double h, int d)
{
    char widest[16];
    snprintf(widest, sizeof(widest), "%d", d - 1);
    return h >= SVG_FONT_MIN + 3 && sw >= svg_text_width(SVG_FONT_MIN, widest) + 2;
}

/* The part [t0, t1) of a unit, from y, each h high. */
static void svg_unit(mesh_buf_t *b, const svg_axis_t *ax, const mesh_pipe_op_t *op, int t0, int t1,
                     double h, double y)
{
    mesh_buf_printf(b,
                    "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.0f\" fill=\"%s\" "
                    "stroke=\"#ffffff\" stroke-width=\"0.5\"/>\n",
                    svg_x(ax, t0), y + op->stage * (h + 2), (t1 - t0) * ax->sw, h,
                    unit_fill[op->kind != 'F'][op->chunk % 2]);
}

/* The units of the schedule, from y, each h high: on a cut axis, what of
 * each falls in the two ends shown; numbered when every number fits. */
static void svg_units(mesh_buf_t *b, const svg_axis_t *ax, const mesh_pipe_op_t *ops, int n_ops,
                      int d, double h, double y)
{
    int numbered = ax->right == 0 && svg_units_numbered(ax->sw, h, d), tail = ax->slots - ax->right;
    char num[16];
    for (int i = 0; i < n_ops; i++) {
        const mesh_pipe_op_t *op = &ops[i];
        int end = op->start + op->len;
        if (op->start < ax->left)
            svg_unit(b, ax, op, op->start, end < ax->left ? end : ax->left, h, y);
        if (ax->right > 0 && end > tail)
            svg_unit(b, ax, op, op->start > tail ? op->start : tail, end, h, y);
        if (numbered) {
            snprintf(num, sizeof(num), "%d", op->mb);
            svg_text(b, svg_x(ax, op->start + op->len / 2.0), y + op->stage * (h + 2) + h - 4,
                     SVG_FONT_MIN, "middle", num);
        }
    }
}

/* Each stage's row from y, h high: its name, where there is room, and its
 * grey (the idle time the units leave); "..." where a cut axis leaves out
 * the middle. */
static void svg_stage_rows(mesh_buf_t *b, const svg_axis_t *ax, int pp, double h, double y)
{
    char line[32];
    for (int s = 0; s < pp; s++) {
        double top = y + s * (h + 2);
        if (h >= SVG_FONT_MIN + 3) {
            snprintf(line, sizeof(line), "stage %d", s);
            svg_text(b, 20, top + h - 4, SVG_FONT_MIN, "start", line);
        }
        mesh_buf_printf(b,
                        "<rect x=\"90\" y=\"%.1f\" width=\"%.2f\" height=\"%.0f\" "
                        "fill=\"#eeeeee\"/>\n",
                        top, ax->left * ax->sw, h);
        if (ax->right == 0)
            continue;
        mesh_buf_printf(b,
                        "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.0f\" "
                        "fill=\"#eeeeee\"/>\n",
                        svg_x(ax, ax->slots - ax->right), top, ax->right * ax->sw, h);
        if (h >= SVG_FONT_MIN + 3 || s == pp / 2)
            svg_text(b, svg_x(ax, ax->left) + SVG_GAP / 2.0, top + h - 4, SVG_FONT_MIN, "middle",
                     "...");
    }
}

static double svg_pipeline(mesh_buf_t *b, const mesh_plan_t *p, double y)
{
    const mesh_candidate_t *c = mesh_plan_best(p);
    int pp = c->layout.pp, vpp = c->layout.vpp;
    long m = c->micro_batches;
    char line[200];
    pipeline_title(c, line, sizeof(line));
    y = svg_lines(b, 20, y, SVG_FONT_HEAD, line) + 12;
    if (pp == 1)
        return y + 10;
    int d = timeline_micro_batches(pp, vpp, m);
    mesh_pipe_op_t *ops = NULL;
    int slots = mesh_pipe_schedule(pp, vpp, d, &ops);
    if (slots < 0) {
        svg_text(b, 20, y + 14, SVG_FONT_MIN, "start", "(too long to draw)");
        return y + 30;
    }
    /* a row of 16 px holds a stage's name and its units' numbers */
    double h = pp > 32 ? 6 : 16;
    svg_axis_t ax = svg_axis(slots);
    if (d < m) {
        drawn_note(c, d, line, sizeof(line));
        y = svg_lines(b, 20, y + 12, SVG_FONT_MIN, line);
    }
    if (ax.right > 0) {
        snprintf(line, sizeof(line),
                 "shown: the first %d and the last %d of its %d time slots, with the fill and "
                 "the drain; ... the middle",
                 ax.left, ax.right, slots);
        y = svg_lines(b, 20, y + SVG_LINE(SVG_FONT_MIN), SVG_FONT_MIN, line);
    }
    y += d < m || ax.right > 0 ? 6 : 0;
    svg_stage_rows(b, &ax, pp, h, y);
    svg_units(b, &ax, ops, 2 * pp * vpp * d, d, h, y);
    free(ops);
    y += pp * (h + 2) + 14;
    y = svg_lines(b, 90, y, SVG_FONT_MIN,
                  vpp > 1 ? "orange: forward, purple: backward (lighter: odd model chunks), grey: "
                            "idle (the bubble)"
                          : "orange: forward, purple: backward, grey: idle (the bubble)");
    return y + 22;
}

static double svg_memory(mesh_buf_t *b, const mesh_plan_t *p, double y)
{
    const mesh_memory_t *mem = &mesh_plan_best(p)->memory;
    char line[200];
    snprintf(line, sizeof(line), "Memory of the worst rank (stage %d): %s of %s GiB usable%s",
             mem->stage, mesh_gib_str(mem->total).s, mesh_gib_str(mem->capacity).s,
             mem->total > mem->capacity ? " (does not fit)" : "");
    y = svg_lines(b, 20, y, SVG_FONT_HEAD, line);
    y += 22; /* room for the "usable" label between the heading and the bar */
    double scale = (SVG_RIGHT - 90) / (mem->total > mem->capacity ? mem->total : mem->capacity),
           x = 90;
    for (int i = 0; i < MESH_MEMORY_PARTS; i++) {
        double bytes = mesh_memory_part_bytes(mem, i), w = bytes * scale;
        mesh_buf_printf(b,
                        "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"26\" fill=\"%s\"/>\n",
                        x, y, w, part_fill[i]);
        snprintf(line, sizeof(line), "%s %s GiB", mesh_memory_part(i)->label,
                 mesh_gib_str(bytes).s);
        mesh_buf_printf(b, "<rect x=\"%d\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\"/>\n",
                        90 + 180 * i, y + 36, part_fill[i]);
        svg_text(b, 90 + 180 * i + 14, y + 45, SVG_FONT_MIN, "start", line);
        x += w;
    }
    double cx = 90 + mem->capacity * scale;
    mesh_buf_printf(b,
                    "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" stroke=\"#d62728\" "
                    "stroke-width=\"2\" stroke-dasharray=\"4 2\"/>\n",
                    cx, y - 4, cx, y + 30);
    svg_text(b, cx, y - 6, SVG_FONT_MIN, "end", "usable");
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
    double y = svg_lines(&body, 20, 28, SVG_FONT_TITLE, title);
    y = svg_ranks(&body, p, y + 30);
    y = svg_pipeline(&body, p, y + 10);
    y = svg_memory(&body, p, y + 10);
    mesh_buf_init(&b);
    mesh_buf_printf(&b,
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" "
                    "viewBox=\"0 0 %d %.0f\" font-family=\"monospace\">\n"
                    "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
                    SVG_WIDTH, y + 10, SVG_WIDTH, y + 10);
    mesh_buf_puts(&b, body.data ? body.data : "");
    mesh_buf_puts(&b, "</svg>\n");
    mesh_buf_free(&body);
    return mesh_buf_take(&b);
}
