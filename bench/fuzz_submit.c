/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A random search for slow judgements: hostile specs and pins, drawn from
 * a seed, each judged afresh by mesh_submit_decide as job_submit/meshplan
 * judges inside slurmctld.  The work budget bounds a judgement only as far
 * as its units count what the judgement does; work they do not count (a
 * walk over a pinned pp·vpp chunks, a price asked of every stage) shows
 * here as a judgement slow for its units.  bench_submit times the known
 * cases; this looks for the unknown ones.
 *
 *     make bench-submit-fuzz [FUZZ_SEED=S] [FUZZ_COUNT=N]
 *
 * prints the slowest judgements with their specs and pins (each one a
 * bench_submit case to add once mended), and how the CPU time per unit
 * spreads.  Its first form, a script, found the 19 s and 17.7 ms
 * judgements doc/benchmarks.md tells of (2026-12-03).  Not part of make
 * check: it measures time.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "meshplan.h"

#define SLOWEST    8     /* judgements printed */
#define TRIES      3     /* each timed as the best of TRIES, against the machine's noise */
#define MANY_UNITS 10000 /* judgements whose time is mostly their units' */

static const char policy[] = "gpu: H100-SXM\nenforce: reject\ntime_limit: set\n"
                             "partitions:\n  gpu: {gpu: H100-SXM, nodes: 65536}\n";

/* xorshift64*: the same draws from the same seed on every machine, each
 * drawn in a statement of its own (the order a call's arguments are
 * evaluated in is the compiler's). */
static uint64_t state;
static uint64_t draw(void)
{
    state ^= state >> 12, state ^= state << 25, state ^= state >> 27;
    return state * 0x2545F4914F6CDD1DULL;
}
static long pick(const long *v, int n)
{
    return v[draw() % (uint64_t)n];
}
#define PICK(...) pick((const long[]){__VA_ARGS__}, sizeof((long[]){__VA_ARGS__}) / sizeof(long))
static int chance(double p)
{
    return (double)(draw() >> 11) * 0x1p-53 < p;
}

typedef struct drawn {
    char spec[512], mesh[96], size[16];
    int nodes, hi;
} drawn_t;

/* What a user may pin, into d->mesh ("" for none). */
static void draw_pins(drawn_t *d)
{
#define VALUES(...) {__VA_ARGS__}, sizeof((long[]){__VA_ARGS__}) / sizeof(long)
    static const struct {
        const char *key;
        double p;
        long v[9];
        size_t n;
    } pins[] = {{"pp", 0.4, VALUES(2, 3, 4, 8, 16, 128, 1000, 1024, 4096)},
                {"vpp", 0.4, VALUES(2, 3, 7, 100, 4999, 33333)},
                {"tp", 0.2, VALUES(1, 2, 8)},
                {"cp", 0.2, VALUES(1, 2, 64)}};
#undef VALUES
    size_t used = 0;
    d->mesh[0] = '\0';
    for (size_t i = 0; i < sizeof(pins) / sizeof(*pins); i++) {
        if (!chance(pins[i].p))
            continue;
        long v = pick(pins[i].v, (int)pins[i].n);
        int w = snprintf(d->mesh + used, sizeof(d->mesh) - used, "%s%s=%ld", used ? "," : "",
                         pins[i].key, v);
        if (w < 0 || (size_t)w >= sizeof(d->mesh) - used)
            break; /* cannot happen: 4 pins are at most 30 characters */
        used += (size_t)w;
    }
}

/* A spec as hostile as the spec's limits allow, and what a user may pin. */
static void draw_case(drawn_t *d)
{
    long layers = PICK(1, 2, 3, 61, 96, 127, 1000, 4096, 65536, 99999, 100000);
    char arch[256], moe[128] = "", mtp[32] = "";
    if (chance(0.5)) {
        long experts = PICK(2, 8, 64, 256, 1024), top = PICK(1, 2, 8);
        long ffn = PICK(64, 2048), dense = (long)(draw() % (uint64_t)layers);
        snprintf(moe, sizeof(moe), ", moe: {experts: %ld, top_k: %ld, ffn: %ld, dense_layers: %ld}",
                 experts, top < experts ? top : experts, ffn, dense);
    }
    if (chance(0.3)) {
        long mtp_layers = PICK(1, 2, 4);
        snprintf(mtp, sizeof(mtp), ", mtp_layers: %ld", mtp_layers);
    }
    long hidden = PICK(64, 1024, 4096, 65536), heads = PICK(1, 8, 64, 1024);
    long vocab = PICK(128, 32000, 262144);
    snprintf(arch, sizeof(arch), "layers: %ld, hidden: %ld, heads: %ld, vocab: %ld%s%s", layers,
             hidden, heads, vocab, moe, mtp);
    long seq = PICK(1024, 8192, 131072, 16777216), batch = PICK(1, 64, 1024, 1048576, 1073741824);
    int tokens = chance(0.5);
    snprintf(d->spec, sizeof(d->spec),
             "name: fuzz\narch: {%s}\ntrain: {seq_len: %ld, global_batch: %ld%s}\n", arch, seq,
             batch, tokens ? ", tokens: 1e15" : "");
    draw_pins(d);
    d->nodes = (int)PICK(1, 2, 16, 64, 512, 2048, 16384);
    d->hi = 0;
    d->size[0] = '\0';
    if (chance(0.2)) {
        long hi = (long)d->nodes * PICK(2, 8, 64);
        d->hi = (int)(hi < 65536 ? hi : 65536);
        static const char *const goals[] = {"min", "fastest", "efficient"};
        snprintf(d->size, sizeof(d->size), "%s", goals[draw() % 3]);
    }
}

typedef struct judged {
    double cpu; /* seconds, the best of TRIES */
    long work;
    mesh_verdict_t verdict;
    drawn_t d;
} judged_t;

/* Judge d afresh, TRIES times: 0, or -1 where its spec or pins do not
 * parse (a refusal before any judgement, not a case). */
static int judge(const drawn_t *d, const mesh_policy_t *pol, judged_t *out)
{
    mesh_model_t m;
    mesh_layout_t pins;
    mesh_step_t s = {0};
    mesh_submit_ask_t ask = {0};
    mesh_error_t err;
    if (mesh_spec_parse(d->spec, strlen(d->spec), "fuzz", NULL, &m, &err) < 0 ||
        mesh_layout_parse(d->mesh[0] ? d->mesh : "auto", &pins, &err) < 0 ||
        (d->size[0] && mesh_size_aim_parse(d->size, 0, &ask.aim, &err) < 0))
        return -1;
    s.nodes = d->nodes, s.gpus_per_node = 8, s.host_memory = 2048.0 * 1073741824;
    ask.size = d->size[0] != '\0', ask.nodes_lo = d->nodes, ask.nodes_hi = d->hi;
    out->d = *d;
    out->cpu = 1e30;
    for (int t = 0; t < TRIES; t++) {
        mesh_submit_t v;
        mesh_submit_cache_clear();
        double c0 = bench_clock(CLOCK_THREAD_CPUTIME_ID);
        mesh_submit_decide(pol, "gpu", &m, &pins, &s, &ask, &v);
        double c = bench_clock(CLOCK_THREAD_CPUTIME_ID) - c0;
        out->cpu = c < out->cpu ? c : out->cpu;
        out->work = v.work, out->verdict = v.verdict;
    }
    return 0;
}

/* One judgement: its time, units and verdict, how to submit it, its spec. */
static void print_case(const judged_t *j)
{
    char hi[48] = "";
    if (j->d.size[0])
        snprintf(hi, sizeof(hi), "-%d --mesh-size=%s", j->d.hi, j->d.size);
    printf("%8.3f ms %7ld units %-6s  -N %d%s --mesh=%s\n    ", j->cpu * 1e3, j->work,
           j->verdict == MESH_VERDICT_RUN    ? "RUN"
           : j->verdict == MESH_VERDICT_WARN ? "WARN"
                                             : "REFUSE",
           j->d.nodes, hi, j->d.mesh[0] ? j->d.mesh : "auto");
    for (const char *c = j->d.spec; *c; c++) /* the spec on one line */
        fputs(*c == '\n' ? (c[1] ? " | " : "\n") : (char[]){*c, 0}, stdout);
}

static int slower(const void *a, const void *b)
{
    return cmp(&((const judged_t *)b)->cpu, &((const judged_t *)a)->cpu);
}

int main(int argc, char **argv)
{
    unsigned long long seed = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;
    int count = argc > 2 ? atoi(argv[2]) : 300;
    mesh_policy_t pol;
    mesh_error_t err;
    mesh_policy_init(&pol);
    if (count < 1 || mesh_policy_parse(&pol, policy, strlen(policy), "fuzz.yaml", &err) < 0) {
        fprintf(stderr, "usage: fuzz_submit [SEED] [COUNT >= 1]\n");
        return 2;
    }
    state = seed * 0x9E3779B97F4A7C15ULL + 1;
    if (!state)
        state = 1; /* xorshift's fixed point */
    judged_t *all = calloc((size_t)count, sizeof(*all));
    double *per_unit = calloc((size_t)count, sizeof(double));
    if (!all || !per_unit) {
        fprintf(stderr, "fuzz_submit: out of memory for %d judgements\n", count);
        return 1;
    }
    int n = 0, n_many = 0, unparsed = 0;
    double most_per_unit = -1;
    judged_t slowest_per_unit = {0};
    for (int i = 0; i < count; i++) {
        drawn_t d;
        draw_case(&d);
        if (judge(&d, &pol, &all[n]) < 0) {
            unparsed++;
            continue;
        }
        /* a judgement's fixed cost (parsing, the policy, the cache) is tens
         * of microseconds: per unit only where units are what it spent */
        if (all[n].work >= MANY_UNITS) {
            double u = all[n].cpu / (double)all[n].work;
            per_unit[n_many++] = u;
            if (u > most_per_unit)
                most_per_unit = u, slowest_per_unit = all[n];
        }
        n++;
    }
    qsort(all, (size_t)n, sizeof(*all), slower);
    qsort(per_unit, (size_t)n_many, sizeof(double), cmp);
    printf("seed %llu: %d judged afresh (%d did not parse), budget %ld units\n", seed, n, unparsed,
           MESH_SUBMIT_WORK);
    if (n_many)
        printf("CPU per unit over the %d of %d units or more: median %.1f ns, 90th percentile "
               "%.1f ns, most %.1f ns\n",
               n_many, MANY_UNITS, per_unit[n_many / 2] * 1e9, per_unit[n_many * 9 / 10] * 1e9,
               per_unit[n_many - 1] * 1e9);
    printf("the %d slowest (CPU, best of %d):\n", n < SLOWEST ? n : SLOWEST, TRIES);
    for (int i = 0; i < n && i < SLOWEST; i++)
        print_case(&all[i]);
    if (n_many) {
        printf("the slowest for its units (%.1f ns a unit):\n", most_per_unit * 1e9);
        print_case(&slowest_per_unit);
    }
    free(all);
    free(per_unit);
    return 0;
}
