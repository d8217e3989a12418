/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a work budget costs honest jobs: every shipped preset judged as
 * job_submit/meshplan judges it (mesh_submit_decide), on three GPUs (or
 * the partitions GPUS gives: GPU[:PER_NODE[:NVLINK]], PER_NODE 8 where
 * left out), with and without host memory, on 1 to 256 nodes and sized
 * for each goal over five ranges, once without a budget, once with
 * MESH_SUBMIT_WORK and once with the budget asked about.
 *
 *     make bench-submit-budget [BUDGET=N [GPUS="GB200:4 GB200:4:4"]]
 *
 * prints how many judgements need more work than MESH_SUBMIT_WORK and
 * than BUDGET, and how many verdicts differ between the two budgets, by
 * what the smaller one gives up: a sized job's narrowing or a plain job's
 * judgement (either let through for the nodes to judge), a time limit,
 * the verdict, a refusal's explanation or advice.  `-v` lists each.
 * The budget bounds the controller's time (make bench-submit); this is
 * the other side of that trade.  Not part of make check: it is a survey, not a test.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "meshplan.h"

#define UNBOUNDED   100000000L /* more than any preset's judgement takes */
#define PRESETS_MAX 64

#define GPUS_MAX 8

/* A partition's GPUs: the model, a node's count, and an NVLink island
 * the partition gives (0: the GPU's own). */
typedef struct gpu_arg {
    char name[32];
    int per_node, island;
} gpu_arg_t;
static const gpu_arg_t default_gpus[] = {{"H100-SXM", 8, 0}, {"A100-80GB", 8, 0}, {"H200", 8, 0}};
static const int nodes[] = {1, 2, 4, 8, 16, 64, 256};
static const int ranges[][2] = {{1, 8}, {1, 16}, {1, 64}, {2, 16}, {1, 256}};
static const char *const goals[] = {"min", "fastest", "efficient"};

/* What the smaller of two budgets gives up where their verdicts differ,
 * in the order a difference is put under the first that applies (a sizing
 * the budget stops is let through unjudged, not narrowed). */
enum { NARROWED, JUDGED, ESTIMATED, VERDICT, WORDS, KINDS };
static const char *const kind_names[] = {"a sized job's narrowing (else let through un-narrowed)",
                                         "a plain job's judgement (else let through unjudged)",
                                         "a time limit (the run's estimate)", "the verdict",
                                         "a refusal's explanation or advice"};
_Static_assert(sizeof(kind_names) / sizeof(kind_names[0]) == KINDS, "a name for each kind");

typedef struct job {
    char preset[64];
    const gpu_arg_t *gpu;
    const char *goal; /* goal NULL: not sized */
    int lo, hi, host;
} job_t;

/* A message with the budget's own figures (the budget and its shares,
 * which it names where it stopped: whole numbers only) made '#', so that
 * two budgets' messages compare by what they say of the job. */
static void plain_words(const char *msg, long budget, char *out, size_t len)
{
    char figures[3][24];
    snprintf(figures[0], sizeof(figures[0]), "%ld", budget);
    snprintf(figures[1], sizeof(figures[1]), "%ld", budget / MESH_SUBMIT_EXPLAIN_SHARE);
    snprintf(figures[2], sizeof(figures[2]), "%ld", budget / MESH_SUBMIT_ADVICE_SHARE);
    size_t o = 0;
    for (const char *p = msg; *p && o + 1 < len;) {
        size_t n = 0;
        int starts = p == msg || !isdigit((unsigned char)p[-1]); /* a number's first digit */
        for (int f = 0; f < 3 && starts && n == 0; f++) {
            size_t k = strlen(figures[f]);
            if (!strncmp(p, figures[f], k) && !isdigit((unsigned char)p[k]))
                n = k;
        }
        if (n > 0) {
            out[o++] = '#';
            p += n;
        } else {
            out[o++] = *p++;
        }
    }
    out[o] = '\0';
}

/* Job j's verdict within `budget` units into *v.  0, or -1 said. */
static int judge(const job_t *j, long budget, mesh_submit_t *v)
{
    char spec[128], pol[256], island[32] = "";
    mesh_spec_dirs_t dirs = {{getenv("MESH_MODELS_DIR"), NULL, NULL, NULL}};
    mesh_model_t m;
    mesh_layout_t pins;
    mesh_policy_t p;
    mesh_step_t s = {0};
    mesh_submit_ask_t ask = {0};
    mesh_error_t err;
    snprintf(spec, sizeof(spec), "preset: %s\ntrain: {tokens: 1e12}\n", j->preset);
    if (j->gpu->island)
        snprintf(island, sizeof(island), ", nvlink: %d", j->gpu->island);
    snprintf(pol, sizeof(pol),
             "gpu: %s\nenforce: reject\ntime_limit: set\npartitions:\n"
             "  gpu: {gpu: %s, nodes: 65536%s}\n",
             j->gpu->name, j->gpu->name, island);
    mesh_policy_init(&p);
    if (mesh_policy_parse(&p, pol, strlen(pol), "budget.yaml", &err) < 0 ||
        mesh_spec_parse(spec, strlen(spec), j->preset, &dirs, &m, &err) < 0 ||
        mesh_layout_parse("auto", &pins, &err) < 0 ||
        (j->goal && mesh_size_aim_parse(j->goal, 0, &ask.aim, &err) < 0)) {
        fprintf(stderr, "budget_submit: %s: %s\n", j->preset, err.msg);
        return -1;
    }
    s.nodes = j->lo;
    s.gpus_per_node = j->gpu->per_node;
    s.host_memory = j->host ? 2048.0 * 1073741824 : 0;
    ask.size = j->goal != NULL;
    ask.nodes_lo = j->lo;
    ask.nodes_hi = j->hi;
    mesh_submit_cache_clear(); /* judged afresh, not the verdict kept for this budget */
    mesh_submit_decide_within(budget, &p, "gpu", &m, &pins, &s, &ask, v);
    return 0;
}

/* Which of the kinds tells job j's verdict b (within budget bb) from a
 * (within ba); -1: they say the same. */
static int difference(const job_t *j, const mesh_submit_t *a, long ba, const mesh_submit_t *b,
                      long bb)
{
    if (a->judged != b->judged || a->nodes != b->nodes)
        return j->goal ? NARROWED : JUDGED;
    if ((a->estimate > 0) != (b->estimate > 0) || a->time_limit != b->time_limit)
        return ESTIMATED;
    if (a->verdict != b->verdict)
        return VERDICT;
    char wa[MESH_SUBMIT_MSG_MAX], wb[MESH_SUBMIT_MSG_MAX];
    plain_words(a->verdict == MESH_VERDICT_RUN ? a->note : a->msg, ba, wa, sizeof(wa));
    plain_words(b->verdict == MESH_VERDICT_RUN ? b->note : b->msg, bb, wb, sizeof(wb));
    return strcmp(wa, wb) ? WORDS : -1;
}

static int by_name(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

/* The presets of MESH_MODELS_DIR into names, sorted: how many, -1 said. */
static int presets(char names[PRESETS_MAX][64])
{
    const char *dir = getenv("MESH_MODELS_DIR");
    DIR *d = dir ? opendir(dir) : NULL;
    if (!d) {
        fprintf(stderr, "budget_submit: set MESH_MODELS_DIR to the presets (etc/models)\n");
        return -1;
    }
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL && n < PRESETS_MAX;) {
        size_t len = strlen(e->d_name);
        if (len > 5 && len < 64 && !strcmp(e->d_name + len - 5, ".yaml"))
            snprintf(names[n++], 64, "%.*s", (int)(len - 5), e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof(names[0]), by_name);
    return n;
}

static void say_job(const job_t *j, const char *what)
{
    printf("  %s on %s x %d, %s host memory, ", j->preset, j->gpu->name, j->gpu->per_node,
           j->host ? "2 TiB" : "no");
    if (j->goal)
        printf("sized %s over %d-%d nodes", j->goal, j->lo, j->hi);
    else
        printf("%d node%s", j->lo, j->lo == 1 ? "" : "s");
    printf(": %s\n", what);
}

typedef struct tally {
    long jobs, sized, over_work, over_budget, changed[KINDS];
} tally_t;

/* Job j judged without a budget, within MESH_SUBMIT_WORK and within
 * `budget`, counted into *t.  0, or -1 said. */
static int survey(const job_t *j, long budget, int verbose, tally_t *t)
{
    mesh_submit_t free_, now, asked;
    if (judge(j, UNBOUNDED, &free_) < 0 || judge(j, MESH_SUBMIT_WORK, &now) < 0 ||
        judge(j, budget, &asked) < 0)
        return -1;
    t->jobs++;
    t->sized += j->goal != NULL;
    t->over_work += free_.work > MESH_SUBMIT_WORK;
    t->over_budget += free_.work > budget;
    int k = difference(j, &now, MESH_SUBMIT_WORK, &asked, budget);
    if (k < 0)
        return 0;
    t->changed[k]++;
    if (verbose) {
        char what[128];
        snprintf(what, sizeof(what), "%s (%ld units unbounded)", kind_names[k], free_.work);
        say_job(j, what);
    }
    return 0;
}

/* Every judgement of one preset on one GPU, with host memory or none. */
static int survey_preset(const char *preset, const gpu_arg_t *gpu, int host, long budget,
                         int verbose, tally_t *t)
{
    job_t j = {"", gpu, NULL, 0, 0, host};
    snprintf(j.preset, sizeof(j.preset), "%.63s", preset);
    for (int k = 0; k < MESH_ARRAY_LEN(nodes); k++) {
        j.lo = nodes[k];
        if (survey(&j, budget, verbose, t) < 0)
            return -1;
    }
    for (int k = 0; k < MESH_ARRAY_LEN(goals); k++)
        for (int r = 0; r < MESH_ARRAY_LEN(ranges); r++) {
            job_t sized = j;
            sized.goal = goals[k];
            sized.lo = ranges[r][0];
            sized.hi = ranges[r][1];
            if (survey(&sized, budget, verbose, t) < 0)
                return -1;
        }
    return 0;
}

/* A GPU argument, NAME[:PER_NODE[:NVLINK]] (GB200:4, or GB200:4:4 for a
 * partition that keeps NVLink to the tray), into *g; -1 for a malformed
 * one (the name is checked where the policy reads it). */
static int gpu_arg(const char *arg, gpu_arg_t *g)
{
    size_t n = strcspn(arg, ":");
    long v[2] = {8, 0}; /* per node, island */
    const char *at = arg + n;
    for (int i = 0; i < 2 && *at == ':'; i++) {
        char *end;
        v[i] = strtol(at + 1, &end, 10);
        if (end == at + 1 || v[i] < 1 || v[i] > 1024)
            return -1;
        at = end;
    }
    if (n == 0 || n >= sizeof(g->name) || *at)
        return -1;
    snprintf(g->name, sizeof(g->name), "%.*s", (int)n, arg);
    g->per_node = (int)v[0];
    g->island = (int)v[1];
    return 0;
}

/* The budget argument: a whole number of units, or (none given) three
 * quarters of MESH_SUBMIT_WORK; -1 for anything else. */
static long budget_arg(const char *arg)
{
    if (!arg)
        return MESH_SUBMIT_WORK * 3 / 4;
    char *end;
    long v = strtol(arg, &end, 10);
    return end != arg && *end == '\0' && v > 0 && v <= UNBOUNDED ? v : -1;
}

int main(int argc, char **argv)
{
    int verbose = argc > 1 && !strcmp(argv[1], "-v"), n_gpus = 0;
    long budget = budget_arg(argc > 1 + verbose ? argv[1 + verbose] : NULL);
    char names[PRESETS_MAX][64];
    gpu_arg_t gpus[GPUS_MAX];
    for (int i = 2 + verbose; budget >= 0 && i < argc; i++)
        if (n_gpus == GPUS_MAX || gpu_arg(argv[i], &gpus[n_gpus++]) < 0)
            budget = -1;
    if (budget < 0) {
        fprintf(stderr,
                "usage: budget_submit [-v] [BUDGET [GPU[:PER_NODE[:NVLINK]]...]]: BUDGET "
                "a whole number of work units, 1 to 100000000; at most %d GPUs "
                "(default: H100-SXM:8 A100-80GB:8 H200:8)\n",
                GPUS_MAX);
        return 2;
    }
    if (n_gpus == 0) /* the defaults */
        while (n_gpus < MESH_ARRAY_LEN(default_gpus)) {
            gpus[n_gpus] = default_gpus[n_gpus];
            n_gpus++;
        }
    int n = presets(names);
    if (n < 0)
        return 2;
    tally_t t = {0};
    for (int g = 0; g < n_gpus; g++)
        for (int p = 0; p < n; p++)
            for (int host = 0; host < 2; host++)
                if (survey_preset(names[p], &gpus[g], host, budget, verbose, &t) < 0)
                    return 1;
    long lo = budget < MESH_SUBMIT_WORK ? budget : MESH_SUBMIT_WORK;
    long hi = budget < MESH_SUBMIT_WORK ? MESH_SUBMIT_WORK : budget;
    printf("%ld judgements, %ld plain and %ld sized (%d presets x %d GPUs x host memory or none; "
           "%d node counts, %d goals x %d ranges)\n"
           "need more than MESH_SUBMIT_WORK (%ld units): %ld; more than %ld: %ld\n"
           "what %ld units give up against %ld, where their verdicts differ:\n",
           t.jobs, t.jobs - t.sized, t.sized, n, n_gpus, MESH_ARRAY_LEN(nodes),
           MESH_ARRAY_LEN(goals), MESH_ARRAY_LEN(ranges), MESH_SUBMIT_WORK, t.over_work, budget,
           t.over_budget, lo, hi);
    for (int k = 0; k < KINDS; k++)
        printf("  %-56s %4ld\n", kind_names[k], t.changed[k]);
    return 0;
}
