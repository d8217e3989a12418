/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Layouts: the --mesh syntax, batch arithmetic, the layer split and the
 * validity rules (Megatron-LM's, which the exported flags must satisfy).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "meshplan/layout.h"
#include "meshplan/parse.h"

/*
 * Every --mesh key, in its canonical order (internal.h says what a row
 * holds).  The table drives parsing, "given twice", the key lists of errors
 * and the usage, unpinning, the canonical string and the pinned-fields
 * string (mesh_layout_format, mesh_layout_format_pins: the controller's
 * request), the planner's pins and its advice (explain.c), the restart's
 * checkpoint dimensions and free keys (restart.c) and the reports' JSON
 * (report_json.c).  Adding a key is a row here, its member of mesh_layout_t, its
 * parsing if it is a new kind, and its use.
 */
#define AT(member) .off = offsetof(mesh_layout_t, member)
#define ALWAYS     (MK_FORMAT_ALWAYS | MK_JSON_ALWAYS)
const mesh_layout_key_t mesh_layout_keys[] = {
    {"tp", AT(tp), MK_INT, 1, 1 << 16, "T", "tp", MESH_DIM_TP, 4, ALWAYS},
    {"pp", AT(pp), MK_INT, 1, 1 << 16, "P", "pp", MESH_DIM_PP, 5, ALWAYS},
    {"dp", AT(dp), MK_INT, 1, 1 << 24, "D", "dp", MESH_DIM_DP, 8, ALWAYS},
    {"cp", AT(cp), MK_INT, 1, 1 << 16, "C", "cp", MESH_DIM_CP, 6, ALWAYS},
    {"ep", AT(ep), MK_INT, 1, 1 << 16, "E", "ep", MESH_DIM_EP, 9, 0},
    {"etp", AT(etp), MK_INT, 1, 1 << 16, "X", "etp", MESH_DIM_ETP, 10, 0},
    {"zero", AT(zero), MK_INT, 0, 3, "Z", "zero", MESH_DIM_ZERO, 1, ALWAYS},
    {"vpp", AT(vpp), MK_INT, 1, 1 << 16, "V", "vpp", MESH_DIM_VPP, 7, ALWAYS},
    {"mb", AT(micro_batch), MK_INT, 1, 1 << 16, "B", "micro_batch", -1, 3, ALWAYS},
    {"recompute", AT(recompute), MK_RECOMPUTE, 0, 0, "R", "recompute", -1, 2, ALWAYS},
    {"sp", AT(sequence_parallel), MK_SP, 0, 0, "on|off", "sequence_parallel", -1, 0, ALWAYS},
    {"offload", AT(offload), MK_OFFLOAD, 0, 0, "none|optimizer", "offload", -1, 0, MK_JSON_ALWAYS},
    {"moments", AT(moments), MK_MOMENTS, 0, 0, "fp32|bf16|fp16", "moments", -1, 0, MK_JSON_ALWAYS},
    /* shown only when off, so that every other layout reads as it did */
    {"tp_overlap", AT(tp_overlap_off), MK_OVERLAP, 0, 0, "on|off", "tp_overlap", -1, 0, 0},
};
#undef AT
#undef ALWAYS
const int mesh_layout_key_count = MESH_ARRAY_LEN(mesh_layout_keys);
/* the enums among them are pinned as ints, like the rest */
_Static_assert(sizeof(mesh_recompute_t) == sizeof(int) && sizeof(mesh_precision_t) == sizeof(int),
               "--mesh members are ints");

void mesh_layout_unpin(mesh_layout_t *l)
{
    /* MESH_RECOMPUTE_AUTO is MESH_FREE: every key's member alike */
    for (int i = 0; i < MESH_LAYOUT_KEYS; i++)
        *mesh_layout_field(l, &mesh_layout_keys[i]) = MESH_FREE;
    l->recompute_layers = MESH_FREE;
    l->recompute_modules = MESH_FREE;
}

const mesh_layout_key_t *mesh_layout_key_of_dim(int d)
{
    for (int i = 0; i < MESH_LAYOUT_KEYS; i++)
        if (mesh_layout_keys[i].dim == d && d >= 0)
            return &mesh_layout_keys[i];
    return NULL;
}

const char *mesh_layout_keys_usage(void)
{
    static char usage[256];
    if (!usage[0]) { /* the same bytes each time: two threads may both write them */
        char u[sizeof(usage)];
        size_t n = 0;
        for (int i = 0; i < MESH_LAYOUT_KEYS && n < sizeof(u); i++)
            n += (size_t)snprintf(u + n, sizeof(u) - n, "%s%s=%s", i ? "," : "",
                                  mesh_layout_keys[i].key, mesh_layout_keys[i].value);
        memcpy(usage, u, sizeof(usage));
    }
    return usage;
}

/* "tp pp dp ...": what errors list as the allowed keys. */
static const char *mesh_key_list(char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < MESH_LAYOUT_KEYS && n < len; i++) {
        int w = snprintf(buf + n, len - n, "%s%s", i ? " " : "", mesh_layout_keys[i].key);
        n += w > 0 ? (size_t)w : 0;
    }
    return buf;
}

/* none, selective, selective:M+M, full, full:N (N layers per stage, the
 * block method) or auto */
static int parse_recompute(mesh_layout_t *l, const char *val, mesh_error_t *err)
{
    char name[16];
    const char *colon = strchr(val, ':');
    size_t n = colon ? (size_t)(colon - val) : strlen(val);
    snprintf(name, sizeof(name), "%.*s", (int)(n < sizeof(name) ? n : sizeof(name) - 1), val);
    if (n >= sizeof(name) || mesh_recompute_parse(name, &l->recompute) < 0)
        return mesh_error_set(err,
                              "mesh recompute: '%.30s' is not one of none selective "
                              "selective:MODULES full full:N auto",
                              val);
    l->recompute_layers = l->recompute == MESH_RECOMPUTE_FULL ? 0 : MESH_FREE;
    l->recompute_modules = l->recompute == MESH_RECOMPUTE_SELECTIVE ? 0 : MESH_FREE;
    if (!colon)
        return 0;
    if (l->recompute == MESH_RECOMPUTE_SELECTIVE) {
        unsigned mods;
        if (mesh_recompute_modules_parse(colon + 1, &mods) < 0)
            return mesh_error_set(
                err,
                "mesh recompute: selective:'%.30s' is not modules joined by '+' "
                "(core_attn, layernorm, mlp, mla_up_proj), as in selective:layernorm+mlp",
                colon + 1);
        /* core_attn alone is Megatron's default: plain selective */
        l->recompute_modules = mods == MESH_RC_CORE_ATTN ? 0 : (int)mods;
        return 0;
    }
    if (l->recompute != MESH_RECOMPUTE_FULL)
        return mesh_error_set(err, "mesh recompute: ':N' (layers per stage) goes with full, "
                                   "':MODULES' with selective, as in recompute=full:4");
    long long layers;
    if (mesh_parse_int(colon + 1, "mesh recompute full:N", 1, 100000, &layers, err) < 0)
        return -1;
    l->recompute_layers = (int)layers;
    return 0;
}

static int parse_field(mesh_layout_t *l, char *item, unsigned *seen, mesh_error_t *err)
{
    char *eq = strchr(item, '='), keys[128];
    if (!eq)
        return mesh_error_set(err, "mesh: '%.40s' is not key=value (keys: %s)", item,
                              mesh_key_list(keys, sizeof(keys)));
    *eq = '\0';
    const char *key = item, *val = eq + 1;
    const mesh_layout_key_t *k = NULL;
    for (int i = 0; i < MESH_LAYOUT_KEYS && !k; i++)
        if (strcmp(key, mesh_layout_keys[i].key) == 0)
            k = &mesh_layout_keys[i];
    if (!k)
        return mesh_error_set(err, "mesh: unknown key '%.20s' (keys: %s)", key,
                              mesh_key_list(keys, sizeof(keys)));
    unsigned bit = 1u << (k - mesh_layout_keys);
    if (*seen & bit)
        return mesh_error_set(err, "mesh: %s given twice", key);
    *seen |= bit;
    if (strcasecmp(val, "auto") == 0) { /* explicitly planned, whatever the spec says */
        *mesh_layout_field(l, k) = MESH_AUTO;
        return 0;
    }
    char what[32];
    snprintf(what, sizeof(what), "mesh %s", key);
    switch (k->kind) {
    case MK_RECOMPUTE: return parse_recompute(l, val, err);
    case MK_SP: return mesh_parse_bool(val, what, &l->sequence_parallel, err);
    case MK_OFFLOAD:
        if (strcasecmp(val, "none") && strcasecmp(val, "optimizer"))
            return mesh_error_set(err, "mesh offload: '%.20s' is not one of none optimizer auto",
                                  val);
        l->offload = strcasecmp(val, "optimizer") == 0;
        return 0;
    case MK_OVERLAP: { /* kept as whether it is off: 0 is Megatron-LM's way where it applies */
        int on;
        if (mesh_parse_bool(val, what, &on, err) < 0)
            return -1;
        l->tp_overlap_off = !on;
        return 0;
    }
    case MK_MOMENTS: { /* the spec's optimizer_dtype's names: its enum's order */
        int i = mesh_spec_choice_of("train.optimizer_dtype", val);
        if (i < 0)
            return mesh_error_set(err, "mesh moments: '%.20s' is not one of fp32 bf16 fp16 auto",
                                  val);
        l->moments = (mesh_precision_t)i;
        return 0;
    }
    case MK_INT: break;
    }
    long long v;
    if (mesh_parse_int(val, what, k->min, k->max, &v, err) < 0)
        return -1;
    *mesh_layout_field(l, k) = (int)v;
    return 0;
}

int mesh_layout_parse(const char *s, mesh_layout_t *pins, mesh_error_t *err)
{
    mesh_layout_unpin(pins);
    if (!s)
        return 0;
    char buf[MESH_LAYOUT_PARSE_MAX];
    if (mesh_strlcpy(buf, s, sizeof(buf)) < 0)
        return mesh_error_set(err, "mesh: longer than %d characters", (int)sizeof(buf) - 1);
    if (strcasecmp(buf, "auto") == 0 || buf[0] == '\0')
        return 0;
    unsigned seen = 0;
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save))
        if (parse_field(pins, item, &seen, err) < 0)
            return -1;
    size_t n = strlen(s);
    if (s[0] == ',' || s[n - 1] == ',' || strstr(s, ",,"))
        return mesh_error_set(err, "mesh: empty field in '%.60s'", s);
    return 0;
}

const char *mesh_layout_recompute(const mesh_layout_t *l, char *buf, size_t len)
{
    char mods[48];
    if (l->recompute == MESH_RECOMPUTE_FULL && l->recompute_layers > 0)
        snprintf(buf, len, "full:%d", l->recompute_layers);
    else if (l->recompute == MESH_RECOMPUTE_SELECTIVE && l->recompute_modules > 0 &&
             l->recompute_modules != MESH_RC_CORE_ATTN)
        snprintf(buf, len, "selective:%s",
                 mesh_recompute_modules_name((unsigned)l->recompute_modules, mods, sizeof(mods)));
    else
        snprintf(buf, len, "%s", mesh_recompute_name(l->recompute));
    return buf;
}

int mesh_layout_key_shown(const mesh_layout_t *l, const mesh_layout_key_t *k)
{
    int v = mesh_layout_value(l, k);
    if (k->flags & MK_FORMAT_ALWAYS)
        return 1;
    /* the memory levers only when used, so that the strings of layouts
     * without them read as they always did; a dense layout's experts not */
    switch (k->kind) {
    case MK_OFFLOAD: return v == 1;
    case MK_OVERLAP: return v == 1;
    case MK_MOMENTS: return v >= 0 && v != MESH_PREC_FP32;
    default: return v > 0;
    }
}

const char *mesh_layout_key_text(const mesh_layout_t *l, const mesh_layout_key_t *k, char *buf,
                                 size_t len)
{
    int v = mesh_layout_value(l, k);
    switch (k->kind) {
    case MK_RECOMPUTE: return mesh_layout_recompute(l, buf, len);
    case MK_SP: snprintf(buf, len, "%s", v ? "on" : "off"); break;
    case MK_OFFLOAD: snprintf(buf, len, "%s", v ? "optimizer" : "none"); break;
    case MK_OVERLAP: snprintf(buf, len, "%s", v ? "off" : "on"); break;
    case MK_MOMENTS: snprintf(buf, len, "%s", mesh_precision_name((mesh_precision_t)v)); break;
    case MK_INT: snprintf(buf, len, "%d", v); break;
    }
    return buf;
}

const char *mesh_layout_format(const mesh_layout_t *l, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < MESH_LAYOUT_KEYS; i++) {
        const mesh_layout_key_t *k = &mesh_layout_keys[i];
        char v[48];
        if (!mesh_layout_key_shown(l, k))
            continue;
        int w = snprintf(buf + n, len - n, "%s%s=%s", n ? "," : "", k->key,
                         mesh_layout_key_text(l, k, v, sizeof(v)));
        if (w < 0 || (size_t)w >= len - n)
            break; /* truncated, as snprintf leaves it */
        n += (size_t)w;
    }
    return buf;
}

long mesh_layout_world(const mesh_layout_t *l)
{
    return (long)l->tp * l->cp * l->pp * l->dp;
}

long mesh_layout_edp(const mesh_layout_t *l)
{
    long stage = (long)l->tp * l->cp * l->dp;
    long experts = (long)(l->ep > 0 ? l->ep : 1) * (l->etp > 0 ? l->etp : 1);
    return stage % experts ? 0 : stage / experts;
}

long mesh_layout_micro_batches(const mesh_layout_t *l, long global_batch)
{
    long per = (long)l->micro_batch * l->dp;
    return per > 0 ? global_batch / per : 0;
}

double mesh_pipeline_bubble(int pp, int vpp, long micro_batches)
{
    if (pp <= 1 || micro_batches <= 0)
        return 0;
    return (double)(pp - 1) / ((double)vpp * (double)micro_batches);
}

int mesh_stage_layers(int layers, int pp, int stage)
{
    int q = (layers + pp - 1) / pp, deficit = q * pp - layers;
    if (stage == 0) /* pp == 1 too: q is every layer and nothing is short */
        return q - (deficit + 1) / 2;
    if (stage == pp - 1)
        return q - deficit / 2;
    return q;
}

int mesh_vpp_chunk_layers(int layers, int pp, int vpp)
{
    int q = (layers + pp - 1) / pp, deficit = q * pp - layers;
    if (pp < 2 || vpp < 2 || deficit > 2 || q % vpp)
        return 0;
    return q / vpp; /* every stage spans q slots: its layers, plus embedding or loss */
}

int mesh_pp_explicit(const mesh_model_t *m, const mesh_layout_t *l)
{
    return m->has_arch && l->vpp > 1 && !mesh_vpp_chunk_layers(m->layers, l->pp, l->vpp);
}

/* How l's interleaved chunks hold m's layers: chunk j of pp*vpp holds
 * `base` layers, one more for j in 1..extra, less `first_short` in chunk 0
 * (the embedding's place) and `last_short` in the last (the loss's, and
 * the MTP layers').  Evenly (mesh_vpp_chunk_layers's chunks, the end ones
 * a layer short where the end stages are), or the explicit layout's:
 * the embedding, the layers, the MTP layers and the loss, in that order,
 * as `units` spread over the chunks, the first ones after chunk 0 one
 * more while the remainder lasts. */
typedef struct chunking {
    long long chunks, base, extra; /* pp*vpp may pass 2^31 in a layout the check refuses */
    int first_short, last_short;
} chunking_t;

static chunking_t chunking(const mesh_model_t *m, const mesh_layout_t *l)
{
    chunking_t c = {.chunks = (long long)l->pp * l->vpp};
    if (mesh_pp_explicit(m, l)) {
        long long units = m->layers + 2 + m->mtp_layers;
        c.base = units / c.chunks;
        c.extra = units % c.chunks;
        c.first_short = 1;
        c.last_short = 1 + m->mtp_layers;
    } else {
        int deficit = (m->layers + l->pp - 1) / l->pp * l->pp - m->layers;
        c.base = mesh_vpp_chunk_layers(m->layers, l->pp, l->vpp);
        c.first_short = deficit >= 1;
        c.last_short = deficit == 2;
    }
    return c;
}

/* Layers in chunks 0..j-1 (0 <= j <= chunks): what comes before chunk j. */
static long long chunks_before(const chunking_t *c, long long j)
{
    long long more = j - 1 < c->extra ? j - 1 : c->extra; /* chunks 1..j-1 within 1..extra */
    return j * c->base + (more > 0 ? more : 0) - (j > 0 ? c->first_short : 0) -
           (j == c->chunks ? c->last_short : 0);
}

/* Layers in the first k chunks stage s holds (chunks s, s + pp, ...,
 * s + (k-1)pp), counted at once: a pricing asks it of every heavy stage,
 * and a user's vpp may be in the tens of thousands. */
static long long stage_chunks(const chunking_t *c, int pp, int s, int k)
{
    if (k <= 0)
        return 0;
    /* those of them within 1..extra, which hold one more */
    long long lo = s == 0, hi = c->extra >= s ? (c->extra - s) / pp : -1;
    long long more = (hi < k - 1 ? hi : k - 1) - lo + 1;
    return k * c->base + (more > 0 ? more : 0) - (s == 0 ? c->first_short : 0) -
           (s + (long long)(k - 1) * pp == c->chunks - 1 ? c->last_short : 0);
}

int mesh_chunk_layers(const mesh_model_t *m, const mesh_layout_t *l, int chunk)
{
    long long chunks = (long long)l->pp * l->vpp;
    if (l->vpp <= 1 || chunk < 0 || chunk >= chunks || !m->has_arch)
        return -1;
    chunking_t c = chunking(m, l);
    return (int)(chunks_before(&c, chunk + 1) - chunks_before(&c, chunk));
}

int mesh_pp_stage_layers(const mesh_model_t *m, const mesh_layout_t *l, int stage)
{
    if (!m->has_arch)
        return 1;
    /* (most layouts do not interleave: asked for each one priced) */
    if (l->vpp <= 1 || !mesh_pp_explicit(m, l))
        return mesh_stage_layers(m->layers, l->pp, stage);
    chunking_t c = chunking(m, l);
    return (int)stage_chunks(&c, l->pp, stage, l->vpp);
}

int mesh_pp_fullest_layers(const mesh_model_t *m, const mesh_layout_t *l)
{
    /* the middle stages hold as many layers (mesh_stage_layers), or under
     * an explicit layout fewer extra chunks from stage 1 on (stage_chunks):
     * the fullest is stage 1 or an end one */
    int most = 0, ask[3] = {0, 1, l->pp - 1};
    for (int i = 0; i < 3; i++)
        if (ask[i] < l->pp && mesh_pp_stage_layers(m, l, ask[i]) > most)
            most = mesh_pp_stage_layers(m, l, ask[i]);
    return most;
}

int mesh_stage_first_layers(const mesh_model_t *m, const mesh_layout_t *l, int stage, int n)
{
    chunking_t c = chunking(m, l);
    /* the stage's chunks hold the first n layers whole up to some k-th,
     * that one in part, none after it (chunks hold the layers in order):
     * the first chunk of the stage not whole within them, by bisection */
    int lo = 0, hi = l->vpp;
    while (lo < hi) {
        int k = lo + (hi - lo) / 2;
        if (chunks_before(&c, stage + (long long)k * l->pp + 1) > n)
            hi = k;
        else
            lo = k + 1;
    }
    long long whole = stage_chunks(&c, l->pp, stage, lo), part = 0;
    if (lo < l->vpp) {
        long long j = stage + (long long)lo * l->pp;
        long long before = chunks_before(&c, j), len = chunks_before(&c, j + 1) - before;
        part = n - before < 0 ? 0 : n - before > len ? len : n - before;
    }
    return (int)(whole + part);
}

/* The sum of floor((a k + b) / n) over k = 0 .. count-1, for a, b >= 0
 * and n >= 1, in O(log) rounds: the whole multiples of n in a and b come
 * out in closed form, and what is left counts the lattice points under a
 * line of slope a/n < 1, which counted by rows instead is the same sum
 * with a and n swapped (Euclid's algorithm on the slope; Graham, Knuth and
 * Patashnik, Concrete Mathematics, 2nd ed., section 3.5). */
static long long floor_sum(long long count, long long n, long long a, long long b)
{
    long long sum = 0;
    while (count > 0) {
        sum += a / n * (count * (count - 1) / 2) + b / n * count;
        a %= n;
        b %= n;
        long long top = a * count + b; /* the line's height at k = count */
        if (top < n)
            break;
        count = top / n;
        b = top % n;
        long long swap = n;
        n = a;
        a = swap;
    }
    return sum;
}

/* The sum over stage s's chunks j = s + k pp + t (k = 0 .. vpp-1, t 0 for
 * their starts, 1 for their ends) of floor(B(j) / every), B being
 * chunks_before: the layers i < B(j) with (i + 1) % every == 0.  B is
 * linear in j on 1..extra+1 (the chunks one longer) and on
 * extra+1..chunks-1, so each piece is one floor_sum; B(0) = 0, and
 * B(chunks), the model's end, is a term of its own. */
static long long every_before(const chunking_t *c, int pp, int vpp, int s, int t, int every)
{
    long long j0 = s + t, k = j0 == 0, sum = 0; /* B(0) = 0 adds nothing */
    /* each piece's last j, the model's end apart */
    const long long last[2] = {c->extra + 1 < c->chunks - 1 ? c->extra + 1 : c->chunks - 1,
                               c->chunks - 1};
    const long long slope[2] = {c->base + 1, c->base};
    const long long off[2] = {-1 - c->first_short, c->extra - c->first_short};
    for (int p = 0; p < 2; p++) {
        long long end = last[p];
        long long upto = end < j0 ? 0 : (end - j0) / pp + 1; /* k < upto lie in the piece */
        upto = upto < vpp ? upto : vpp;
        if (upto > k) {
            sum += floor_sum(upto - k, every, slope[p] * pp, slope[p] * (j0 + k * pp) + off[p]);
            k = upto;
        }
    }
    if (k < vpp && j0 + k * pp == c->chunks)
        sum += chunks_before(c, c->chunks) / every;
    return sum;
}

int mesh_stage_every_layers(const mesh_model_t *m, const mesh_layout_t *l, int stage, int every)
{
    if (l->vpp <= 1) {
        int q = (m->layers + l->pp - 1) / l->pp, deficit = q * l->pp - m->layers;
        long start = stage == 0 ? 0 : (long)stage * q - (deficit + 1) / 2;
        long end = start + mesh_stage_layers(m->layers, l->pp, stage);
        return (int)(end / every - start / every);
    }
    chunking_t c = chunking(m, l);
    return (int)(every_before(&c, l->pp, l->vpp, stage, 1, every) -
                 every_before(&c, l->pp, l->vpp, stage, 0, every));
}

/* Units of work (internal.h, mesh_work_t) a stage asked costs: four
 * floor_sums of a few rounds each */
#define WORK_EVERY_STAGE 8

int mesh_stage_most_every(const mesh_model_t *m, const mesh_layout_t *l, int every)
{
    /* A middle stage's chunks all lie where B is linear (every_before),
     * and moving to stage s + every moves each of them by a multiple of
     * every: the count repeats with period every, within each run of
     * stages holding as many of the longer chunks (chunks 1..extra of an
     * explicit layout: stages 1..extra % pp hold one more of them than
     * the rest; an even split has none).  So the first `every` stages of
     * each run are all there is to ask; pp may be in the thousands. */
    int split = l->vpp > 1 ? (int)(chunking(m, l).extra % l->pp) : 0;
    int runs[2][2] = {{1, split < l->pp - 2 ? split : l->pp - 2}, {split + 1, l->pp - 2}};
    int best = 1, most = -1;
    for (int r = 0; r < 2; r++) {
        int hi = runs[r][1] < runs[r][0] + every - 1 ? runs[r][1] : runs[r][0] + every - 1;
        for (int s = runs[r][0]; s <= hi; s++) {
            int n = mesh_stage_every_layers(m, l, s, every);
            mesh_work_spend(WORK_EVERY_STAGE);
            if (n > most) {
                most = n;
                best = s;
            }
        }
    }
    return best;
}

void mesh_layer_split(int layers, int pp, int *out)
{
    for (int i = 0; i < pp; i++)
        out[i] = mesh_stage_layers(layers, pp, i);
}

/* An interleaved layout, explicit (mesh_pp_explicit) or even, has room for
 * every unit: at least one a chunk, so that chunk 0 holds the embedding and
 * every middle chunk a layer, and the last chunk its MTP layers and the
 * loss (an even split always has: its end chunks are a layer short of a
 * chunk of at least one, test_plan_rules checks every split).  Only the
 * end chunks can come out short (chunking: a middle one holds as many
 * units as chunk 0 or one more, all of them layers), so only they are
 * asked: a user's vpp may be in the tens of thousands, and every layout
 * searched is checked. */
static int explicit_ok(const mesh_model_t *m, const mesh_layout_t *l)
{
    chunking_t c = chunking(m, l); /* as mesh_chunk_layers, counted once for both */
    return chunks_before(&c, 1) - chunks_before(&c, 0) >= 0 &&
           chunks_before(&c, c.chunks) - chunks_before(&c, c.chunks - 1) >= 0;
}

/* The expert layers' rules: Megatron-Core's expert rank generator
 * re-partitions each stage's tp*cp*dp ranks into etp*ep*edp
 * (megatron/core/parallel_state.py, initialize_model_parallel, at
 * 00caa53), training/arguments.py asserts that ep divides the experts
 * (L1655-1658 at d98e8a6), and a MoE layer refuses TP without sequence
 * parallelism (transformer/moe/moe_layer.py L636-640). */
/* What the model alone asks of a layout's (tp, cp, pp): the rules no
 * allocation can satisfy when they fail, so that the submitting side
 * refuses such pins before anything is queued (mesh_layout_check_pins). */
static int model_shape(const mesh_model_t *m, const mesh_layout_t *l, mesh_error_t *err)
{
    if (!m->has_arch && (l->tp > 1 || l->pp > 1 || l->cp > 1))
        return mesh_error_set(err, "tp, pp and cp need the model's arch (layers, heads, ...); a "
                                   "params-only spec plans DP and ZeRO only");
    if (m->has_arch && (m->heads % l->tp || (m->kv_heads % l->tp && l->tp % m->kv_heads)))
        return mesh_error_set(err,
                              "tp %d must divide heads %d, and divide kv_heads %d or be a "
                              "multiple of it",
                              l->tp, m->heads, m->kv_heads);
    /* wider than the KV heads, TP splits the fused QKV output columns */
    long head = mesh_head_dim(m);
    if (m->has_arch && !m->mla.kv_lora_rank && (2L * m->kv_heads * head) % l->tp)
        return mesh_error_set(err, "tp %d must divide the %d keys and values of %ld each", l->tp,
                              2 * m->kv_heads, head);
    if (m->has_arch && m->ffn % l->tp)
        return mesh_error_set(err, "tp %d must divide ffn %d", l->tp, m->ffn);
    if (l->cp > 1 && m->seq_len % (2 * l->cp))
        return mesh_error_set(err, "cp %d needs seq_len %d divisible by 2*cp", l->cp, m->seq_len);
    /* Transformer Engine splits a sliding window or sinks across CP ranks
     * only with the all-to-all exchange (its CP tests skip them under p2p:
     * tests/pytorch/attention/test_attention_with_cp.py), which the cost
     * model does not price (it prices the ring, lib/cost.c) */
    if (l->cp > 1 && (m->window || m->attention_sinks))
        return mesh_error_set(err,
                              "cp %d: Transformer Engine runs a sliding window or attention "
                              "sinks under CP only with the all-to-all exchange, which meshplan "
                              "does not price: give cp=1",
                              l->cp);
    if (m->has_arch && l->pp > m->layers)
        return mesh_error_set(err, "pp %d is more than the %d layers", l->pp, m->layers);
    if (m->has_arch && mesh_stage_layers(m->layers, l->pp, 0) < 1) {
        int q = (m->layers + l->pp - 1) / l->pp, below = l->pp - 1;
        while (mesh_stage_layers(m->layers, below, 0) < 1) /* pp 1 always splits */
            below--;
        return mesh_error_set(err,
                              "pp %d cannot split %d layers: %d middle stages of %d (%d/%d "
                              "rounded up) take %d, more than the %d left after one each for the "
                              "first and last; pp %d, the largest below, splits them",
                              l->pp, m->layers, l->pp - 2, q, m->layers, l->pp, q * (l->pp - 2),
                              m->layers - 2, below);
    }
    return 0;
}

/* The replicas share the global batch in whole micro-batches. */
static int batch_rule(const mesh_model_t *m, const mesh_layout_t *l, mesh_error_t *err)
{
    if (m->global_batch % ((long)l->micro_batch * l->dp))
        return mesh_error_set(err, "global_batch %ld is not a multiple of micro_batch %d * dp %d",
                              m->global_batch, l->micro_batch, l->dp);
    return 0;
}

/* What a MoE model's experts ask of ep and etp, whatever the allocation. */
static int expert_rules(const mesh_model_t *m, const mesh_layout_t *l, mesh_error_t *err)
{
    if (m->moe.experts % l->ep)
        return mesh_error_set(err, "ep %d must divide the %d experts", l->ep, m->moe.experts);
    if (m->moe.ffn % l->etp)
        return mesh_error_set(err, "etp %d must divide the experts' ffn %d", l->etp, m->moe.ffn);
    /* a GeLU model keeps its linear layers' biases (no --disable-bias-linear),
     * and Megatron-LM builds a MoE layer's only at expert TP 1
     * (transformer_config.py L2612-2615 at d98e8a6) */
    if (mesh_style(m)->linear_bias && l->etp > 1)
        return mesh_error_set(err,
                              "etp %d: Megatron-LM builds the biases of a %s model's experts "
                              "only with etp=1 (give etp=1)",
                              l->etp, mesh_style(m)->label);
    return 0;
}

/* A product whose NVLink spans nodes (the GPU table's tray: GB200 and
 * GB300 NVL72, 18 trays of 4 GPUs on one NVLink switch fabric) gives a job
 * on whole trays NVLink between them, as NVIDIA's own runs use it (TP 8 on
 * trays of 4: Nemotron-4 340B in tests/fixtures/published_throughput_dev.csv);
 * an island no larger than the tray (the policy's gpu.GB200.island=4,
 * or --nvlink 4: mesh_policy_alloc) keeps it to the node.  Trays pair in
 * rank order, so a group of whole trays dividing the fabric stays in one
 * rack when the job's nodes come in whole racks or in multiples of the
 * group (Slurm's topology/block, --segment). */
long mesh_nvlink_fabric(const mesh_alloc_t *a)
{
    const mesh_gpu_t *g = &a->gpu;
    if (g->tray > 0 && a->gpus_per_node == g->tray && a->island == a->gpus_per_node &&
        g->island > a->gpus_per_node)
        return (long)g->island / a->gpus_per_node * a->gpus_per_node;
    return a->gpus_per_node;
}

long mesh_fabric_across_trays(const mesh_alloc_t *a)
{
    long fabric = mesh_nvlink_fabric(a);
    return fabric > a->gpus_per_node ? fabric : 0;
}

/* A TP (or expert TP) group of tp consecutive ranks is on NVLink: inside
 * the island and the node as everywhere, or whole trays of the fabric,
 * aligned so that no group straddles two racks of it. */
int mesh_tp_on_nvlink(const mesh_alloc_t *a, long tp)
{
    long fabric = mesh_fabric_across_trays(a), node = a->gpus_per_node;
    if (tp < 1)
        return 0;
    if (tp <= a->island && a->island % tp == 0 && node % tp == 0)
        return 1;
    return fabric && tp % node == 0 && fabric % tp == 0;
}

/* The search's bound for tp: the fabric where TP may span trays. */
long mesh_tp_reach(const mesh_alloc_t *a)
{
    long fabric = mesh_fabric_across_trays(a);
    return fabric ? fabric : a->island;
}

/* The ranks one expert-parallel group of l spans: ep ranks at stride etp,
 * etp*ep consecutive ranks in all. */
long mesh_ep_span(const mesh_layout_t *l)
{
    return (long)(l->ep > 0 ? l->ep : 1) * (l->etp > 0 ? l->etp : 1);
}

/* The GPUs an expert-parallel all-to-all reaches over NVLink: the fabric
 * across trays, but not for DeepEP, whose kernels take each node of 8 for
 * an island (deepep: its row of lib/overlap.c is on). */
long mesh_ep_reach(const mesh_alloc_t *a, int deepep)
{
    return deepep ? a->island : mesh_tp_reach(a);
}

/* mesh_tp_on_nvlink's refusal of a group `name` of v ranks, naming the
 * rule it breaks and why the group needs NVLink. */
static int nvlink_rule(const mesh_alloc_t *a, const char *name, long v, const char *why,
                       mesh_error_t *err)
{
    if (mesh_tp_on_nvlink(a, v))
        return 0;
    if (mesh_fabric_across_trays(a))
        return mesh_error_set(err,
                              "%s %ld must divide a tray's %d GPUs or be whole trays dividing "
                              "the NVLink fabric of %ld GPUs (%s)",
                              name, v, a->gpus_per_node, mesh_fabric_across_trays(a), why);
    if (v > a->island || a->island % v)
        return mesh_error_set(err, "%s %ld must divide the NVLink island of %d GPUs (%s)", name, v,
                              a->island, why);
    return mesh_error_set(err, "%s %ld must divide the %d GPUs per node", name, v,
                          a->gpus_per_node);
}

static int check_experts(const mesh_model_t *m, const mesh_alloc_t *a, const mesh_layout_t *l,
                         mesh_error_t *err)
{
    if (!mesh_is_moe(m)) {
        if (l->ep > 1 || l->etp > 1)
            return mesh_error_set(err,
                                  "ep %d, etp %d: %s has no experts; expert parallelism needs "
                                  "arch.moe",
                                  l->ep, l->etp, m->name);
        return 0;
    }
    if (l->ep < 1 || l->etp < 1)
        return mesh_error_set(err, "ep and etp must be at least 1 for a MoE model");
    if (expert_rules(m, l, err) < 0)
        return -1;
    long stage = (long)l->tp * l->cp * l->dp, experts = mesh_ep_span(l);
    if (stage % experts)
        return mesh_error_set(err,
                              "ep*etp = %d*%d %s tp*cp*dp = %d*%d*%d = %ld (the expert layers "
                              "re-partition each stage's ranks)",
                              l->ep, l->etp, experts > stage ? "is more than" : "must divide",
                              l->tp, l->cp, l->dp, stage);
    if (nvlink_rule(a, "etp", l->etp, "expert TP gathers tokens in every MoE layer", err) < 0)
        return -1;
    if (m->moe.shared_experts && ((long)m->moe.shared_experts * m->moe.shared_ffn) % l->tp)
        return mesh_error_set(err, "tp %d must divide the shared experts' width %ld", l->tp,
                              (long)m->moe.shared_experts * m->moe.shared_ffn);
    if (l->tp > 1 && !l->sequence_parallel)
        return mesh_error_set(err,
                              "tp %d on a MoE model needs sequence parallelism (sp=on: "
                              "Megatron-LM's MoE layers refuse TP without it)",
                              l->tp);
    return 0;
}

/* The interleaved schedule's rules, on a layout whose shape holds. */
static int schedule_rules(const mesh_model_t *m, const mesh_layout_t *l, mesh_error_t *err)
{
    if (l->vpp <= 1)
        return 0;
    /* Megatron-LM asks pp > 2 only with --no-overlap-p2p-communication,
     * which meshplan never exports (megatron/training/arguments.py at
     * d98e8a6, lines 1000-1008) */
    if (!m->has_arch || l->pp < 2)
        return mesh_error_set(err, "vpp %d (interleaved schedule) needs pp > 1", l->vpp);
    if (!explicit_ok(m, l)) /* the even split's end chunks hold a layer less: ok too */
        return mesh_error_set(err,
                              "vpp %d: layers %d (+1 for the embedding, +1 for the loss, +%d "
                              "MTP) do not fill the pp*vpp = %ld chunks (use fewer chunks)",
                              l->vpp, m->layers, m->mtp_layers, (long)l->pp * l->vpp);
    long mbs = mesh_layout_micro_batches(l, m->global_batch);
    if (mbs % l->pp)
        return mesh_error_set(err, "vpp %d: the %ld micro-batches must be a multiple of pp %d",
                              l->vpp, mbs, l->pp);
    return 0;
}

/* The optimizer's levers (offload, 16-bit moments), checked last: the
 * search sweeps them on every shape, so a shape that breaks a rule is
 * named before the lever its first try happened to take.  What the model
 * refuses whatever the layout (SGD, framework torch) comes before what a
 * larger zero would mend. */
static int optimizer_rules(const mesh_model_t *m, const mesh_layout_t *l, mesh_error_t *err)
{
    if ((int)l->moments < 0 || l->moments == MESH_PREC_FP8)
        return mesh_error_set(err, "moments: fp32, bf16 or fp16");
    int half = l->moments != MESH_PREC_FP32;
    if (l->offload && m->optimizer == MESH_OPT_SGD)
        return mesh_error_set(err,
                              "offload=optimizer runs Adam on the CPU: it needs optimizer adam "
                              "or adamw");
    if (half && m->optimizer == MESH_OPT_SGD)
        return mesh_error_set(err, "moments=%s: SGD has no Adam moments",
                              mesh_precision_name(l->moments));
    if ((l->offload || half) && m->framework == MESH_FW_TORCH)
        return mesh_error_set(err, "offload and 16-bit moments are Megatron-LM's and DeepSpeed's "
                                   "levers: not with framework: torch");
    if (half && m->framework == MESH_FW_DEEPSPEED) /* every LoRA plan's but torch's */
        return mesh_error_set(err,
                              "moments=%s: DeepSpeed keeps fp32 Adam moments: use moments=fp32",
                              mesh_precision_name(l->moments));
    if (l->offload && half)
        return mesh_error_set(err, "offload=optimizer keeps fp32 moments (the CPU optimizer is "
                                   "torch's AdamW): use moments=fp32");
    if (l->offload && l->zero < 1)
        return mesh_error_set(err,
                              "offload=optimizer needs zero 1 or more (Megatron-LM offloads the "
                              "distributed optimizer's shard)");
    if (half && l->zero < 1)
        return mesh_error_set(err,
                              "moments=%s needs zero 1 or more (Megatron-LM's precision-aware "
                              "optimizer needs the distributed one)",
                              mesh_precision_name(l->moments));
    return 0;
}

/* The recomputed modules the model has: "mla_up_proj" recomputes latent
 * attention's up projections (Megatron-LM refuses it without them,
 * transformer_config.py L1969-1973 at d98e8a6). */
static int modules_rule(const mesh_model_t *m, const mesh_layout_t *l, mesh_error_t *err)
{
    if (l->recompute_modules > 0 && (l->recompute_modules & MESH_RC_MLA_UP_PROJ) &&
        !m->mla.kv_lora_rank)
        return mesh_error_set(err,
                              "recompute selective:...mla_up_proj: %s has no latent attention "
                              "(arch.mla), whose up projections it recomputes; drop mla_up_proj",
                              m->name);
    return 0;
}

int mesh_layout_check(const mesh_model_t *m, const mesh_alloc_t *a, const mesh_layout_t *l,
                      mesh_error_t *err)
{
    if (l->tp < 1 || l->pp < 1 || l->dp < 1 || l->cp < 1 || l->vpp < 1 || l->micro_batch < 1)
        return mesh_error_set(err, "every size must be at least 1");
    /* each dimension on its own first, so that a bad pin is named as such */
    if (nvlink_rule(a, "tp", l->tp, "TP exchanges activations in every layer and needs NVLink",
                    err) < 0)
        return -1;
    if (model_shape(m, l, err) < 0)
        return -1;
    long world = mesh_world(a), span = (long)l->tp * l->cp * l->pp;
    if (world % span) /* dp cannot make up the rest, given or not */
        return mesh_error_set(err,
                              "tp*cp*pp = %d*%d*%d = %ld %s the allocation's %ld GPUs; dp takes "
                              "the rest, so their product must divide it",
                              l->tp, l->cp, l->pp, span,
                              span > world ? "is more than" : "does not divide", world);
    if (mesh_layout_world(l) != world)
        return mesh_error_set(err,
                              "tp*cp*pp*dp = %d*%d*%d*%d = %ld, but the allocation has %ld "
                              "GPUs",
                              l->tp, l->cp, l->pp, l->dp, mesh_layout_world(l), world);
    if (l->sequence_parallel && l->tp == 1)
        return mesh_error_set(err, "sequence parallelism needs tp > 1");
    if (l->sequence_parallel && m->seq_len % l->tp)
        return mesh_error_set(err, "sequence parallelism needs seq_len %d divisible by tp %d",
                              m->seq_len, l->tp);
    if (l->zero < 0 || l->zero > 3)
        return mesh_error_set(err, "zero %d: the stages are 0, 1, 2 and 3", l->zero);
    if (batch_rule(m, l, err) < 0)
        return -1;
    if (l->recompute_layers < 0 || (l->recompute_layers > 0 && l->recompute != MESH_RECOMPUTE_FULL))
        return mesh_error_set(err, "recompute full:%d: layers per stage go with full only",
                              l->recompute_layers);
    if (l->recompute_layers > 0 && l->vpp > 1)
        return mesh_error_set(err,
                              "recompute full:%d: partial recomputation is priced per stage, "
                              "without interleaving (vpp 1)",
                              l->recompute_layers);
    int most = l->recompute_layers > 0 && m->has_arch ? mesh_pp_fullest_layers(m, l) : 0;
    if (most && l->recompute_layers > most)
        return mesh_error_set(err,
                              "recompute full:%d: a stage of pp %d holds at most %d layers; use "
                              "full:%d or fewer (full recomputes them all)",
                              l->recompute_layers, l->pp, most, most);
    if (l->recompute_modules < 0 || l->recompute_modules > MESH_RC_ALL ||
        (l->recompute_modules > 0 && l->recompute != MESH_RECOMPUTE_SELECTIVE))
        return mesh_error_set(err, "recompute modules go with selective only");
    if (modules_rule(m, l, err) < 0 || check_experts(m, a, l, err) < 0 ||
        schedule_rules(m, l, err) < 0)
        return -1;
    return optimizer_rules(m, l, err);
}

int mesh_layout_check_pins(const mesh_model_t *m, const mesh_layout_t *pins, mesh_error_t *err)
{
    /* a field left free or "auto" stands as 1, which every model rule
     * accepts: only what was pinned can be refused */
    mesh_layout_t l = *pins;
    int *sizes[] = {&l.tp, &l.pp, &l.cp, &l.dp, &l.micro_batch, &l.ep, &l.etp};
    for (int i = 0; i < MESH_ARRAY_LEN(sizes); i++)
        if (*sizes[i] < 1)
            *sizes[i] = 1;
    if (!mesh_is_moe(m) && (l.ep > 1 || l.etp > 1))
        return mesh_error_set(err, "%s %d: %s has no experts; expert parallelism needs arch.moe",
                              l.ep > 1 ? "ep" : "etp", l.ep > 1 ? l.ep : l.etp, m->name);
    if (model_shape(m, &l, err) < 0 || batch_rule(m, &l, err) < 0 || modules_rule(m, &l, err) < 0)
        return -1;
    return mesh_is_moe(m) ? expert_rules(m, &l, err) : 0;
}

const char *mesh_layout_format_pins(const mesh_layout_t *l, char *buf, size_t len)
{
    mesh_buf_t b;
    char v[48];
    mesh_buf_init(&b);
    for (int i = 0; i < MESH_LAYOUT_KEYS; i++) {
        const mesh_layout_key_t *k = &mesh_layout_keys[i];
        int pin = mesh_layout_value(l, k);
        if (pin == MESH_FREE)
            continue;
        mesh_buf_printf(&b, "%s%s=%s", b.len ? "," : "", k->key,
                        pin == MESH_AUTO ? "auto" : mesh_layout_key_text(l, k, v, sizeof(v)));
    }
    snprintf(buf, len, "%s", b.len && !b.failed ? b.data : "auto");
    mesh_buf_free(&b);
    return buf;
}
