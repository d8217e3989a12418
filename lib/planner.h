/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The planner's own header (not installed): the search's state and the
 * plan's, shared by its six files, bottom to top:
 *
 *   prune.c    the search space's small counts (divisors, micro-batch sizes,
 *              recomputation's module sets and layers), the floors that
 *              leave unpriced what cannot be chosen, and the memo of what a
 *              search found, for a search with less memory
 *   choose.c   the order of the candidates a search keeps, the near-tie
 *              rule that chooses among them, and the runners-up
 *   search.c   the search itself: every layout priced or pruned, and the
 *              candidates it keeps
 *   explain_lines.c  the records' lines (mesh_report_reason and
 *              mesh_report_advice), and the families' names
 *   explain.c  the explanation: reason and advice records (explain.h), and
 *              the advice's searches
 *   plan.c     the API (plan.h): inputs, choice, digest, accessors
 *
 * Each calls only the ones before it in this list (tests/check-layers).
 */
#ifndef MESH_PLANNER_H
#define MESH_PLANNER_H

#include <stdint.h>

#include "internal.h"
#include "meshplan/explain.h"
#include "meshplan/plan.h"

#define MB_MAX       256 /* largest micro-batch tried */
#define VPPS_MAX     64  /* interleavings tried per split */
#define LINES_MAX    24  /* reasons or advice lines kept */
#define LINE_LEN     384
#define NEAR_TIE_LEN 512 /* a canonical layout and the near-tie rule's numbers: under 400 bytes */
#define MAX_GPUS     (1L << 22) /* the largest allocation planned (mesh_plan_create's limit) */

typedef struct family_stat {
    long valid;
    int has_fit, has_min, has_invalid;
    mesh_candidate_t fit; /* fastest that fits */
    mesh_candidate_t min; /* least memory */
    mesh_layout_t invalid;
} family_stat_t;

#define MEMO_VPPS  16 /* interleavings of a shape whose slot times and floors are kept */
#define MEMO_SIZES 16 /* micro-batch sizes of a sweep whose floors are kept */

/* A layout's floor without its ZeRO stage's parts (the data-parallel
 * traffic and the optimizer step), kept for the same layout under the
 * next stages (unwanted). */
typedef struct stage_memo {
    double part; /* cost.c's sum without those parts */
    double slot; /* its slot time */
    int layers;  /* the full:N it was counted at */
    int too_big; /* priced under the last stage, it did not fit */
    long shape;  /* the shape (search_t's shapes_searched) it is of */
} stage_memo_t;

typedef struct slot_memo {
    double seconds;
    int layers; /* the full:N it was counted at */
    long shape; /* the shape (search_t's shapes_searched) it is of */
} slot_memo_t;

/* What a search found of each valid layout it evaluated (prune.c): too
 * large whatever lever it tried, or the candidate it came to, kept as
 * little as its recall needs (search.c, recall): the memory it needs, its
 * step time, and what its levers and recomputation set.  In the order
 * found; a hash table (open addressing) of their indices is built only for
 * a search that asks (mesh_memo_index). */
typedef struct memo_fit {
    double total, host, step_seconds;
    int recompute_layers, recompute_modules, offload, tp_overlap_off;
    mesh_precision_t moments;
} memo_fit_t;

typedef struct layout_memo_entry {
    mesh_layout_t key;
    int fit; /* the candidate's index in fits; -1: too large */
} layout_memo_entry_t;

/* An array that grows in blocks of MEMO_BLOCK items, never moved: a
 * realloc's copies cost the plans that turn out not tight more than the
 * memo spares the tight ones. */
#define MEMO_BLOCK  256
#define MEMO_SPARES 64 /* blocks of ended memos kept for the next ones (prune.c) */
typedef struct memo_blocks {
    void **block;
    size_t n, cap; /* blocks */
} memo_blocks_t;

typedef struct layout_memo {
    memo_blocks_t entries; /* layout_memo_entry_t */
    memo_blocks_t fits;    /* memo_fit_t */
    size_t n, n_fits;
    uint32_t *slots; /* 1 + the entry's index; 0: free.  NULL: not indexed */
    size_t cap;      /* slots: a power of two, at least twice n */
    int broken;      /* out of memory: it answers nothing */
} layout_memo_t;

typedef struct search {
    const mesh_model_t *m;
    const mesh_alloc_t *a;
    const mesh_assumptions_t *assume;
    const mesh_layout_t *pins;
    int first_fit_only; /* stop at the first layout that fits, price nothing */
    /* only the choice is wanted (mesh_plan_choose), not its explanation:
     * a layout that cannot be a near-tie of the fastest is not priced
     * (see wanted_limit), and no family, shape or closest layout is kept */
    int choice_only;
    /* choice_only: no choice slower than this many seconds a step is
     * wanted (0: any) */
    double deadline;
    /* choice_only: layouts are left unpriced only once `fitting` is above
     * this, so that the expert search's decisions, which compare the count
     * with the one before an expert size, are those of the whole search */
    long guard;
    int vpp_index;  /* the interleaving searched, in interleavings' list */
    int size_index; /* the micro-batch size searched, in batch_sizes (-1: a pin's) */
    long shapes_searched;
    /* choice_only: the floor unwanted counted for the layout evaluated,
     * and its cost (has_floor: whether it did) */
    mesh_layout_t floor_layout;
    mesh_cost_t floor_cost;
    int has_floor;
    struct stage_memo *stage_entry; /* the memo of the layout evaluated, if any */
    /* the largest micro-batch at which the layout being searched fit with
     * no recomputation and no lever: recomputing at that size or below
     * only costs time, so it is not evaluated */
    int plain_mb;
    /* the heavy stages of the shape searched at psi_vpp, and the index in
     * heavy's arrays (not a stage number) of the one with the most
     * parameters, whose rank the cost prices (mesh_heavy_most) */
    mesh_heavy_t heavy;
    int most;
    int psi_vpp;            /* the interleaving heavy was counted at (params_vpp) */
    double flops_per_token; /* the model's (mesh_flops_per_token) */
    /* in a micro-batch sweep, the fewest layers full recomputation needed
     * at the last size without levers: a larger micro-batch needs at least
     * as many */
    int full_lo;
    /* the micro-batch sizes tried at data-parallel size batch_dp: the
     * divisors of the replica's share of the global batch up to MB_MAX,
     * ascending (batch_dp 0: none yet).  The same for every option of
     * every shape with that dp, so counted once, not per sweep */
    int n_batch_sizes, batch_dp, batch_sizes[MB_MAX];
    /* the shape searched leaves a pipeline stage without a layer */
    int split_invalid;
    /* the states' parts of the shape searched, for one ZeRO stage per
     * lever setting (slot: offload, 16-bit moments), and the key they are
     * of (zero, offload, moments; -1: none yet): a layout that needs the
     * levers tries them in turn, and counting the frameworks' terms again
     * at each turn was a fifth of the controller's sizing; every
     * micro-batch and recomputation of a sweep prices the same parts */
    mesh_states_parts_t states[4];
    int memo_key[4];
    /* mesh_step_bytes of each ZeRO stage, offload and moments (the key
     * price() gives them), known where its bit of step_known is set */
    mesh_step_bytes_t step_bytes[64];
    unsigned long long step_known;
    /* the plain activations of the micro-batch last priced, which its
     * recomputations and levers share */
    mesh_plain_memo_t plain;
    long evaluated, valid, fitting;
    long skipped; /* choice_only: sweeps left out, none of their layouts wanted */
    /* choice_only: whether the sweep of each recomputation at the least
     * interleaving of the ZeRO stage searched found its first micro-batch
     * too large (priced, no lever fits); priced_oom: the last layout
     * evaluate priced did not fit */
    int oom_first[3], priced_oom;
    int found, oom;
    /* the work budget the search counts against (NULL: none), and whether
     * it stopped the search there (its results are then partial) */
    mesh_work_t *work;
    int halted;
    mesh_candidate_t first; /* first_fit_only: the layout found */
    /* the fitting layouts within MESH_PLAN_TIE of the fastest so far (only
     * those can be chosen: the fastest can only get faster), and the
     * fastest layout of each of the fastest (tp, cp, pp) shapes, one more
     * than the runners-up shown, since the chosen one's is left out */
    mesh_candidate_t *fits;
    size_t n_fits, cap_fits;
    double fastest;
    mesh_candidate_t shapes[MESH_PLAN_ALTERNATIVES + 1];
    int n_shapes;
    int has_closest, has_invalid;
    mesh_candidate_t closest; /* least memory over capacity */
    mesh_layout_t invalid;    /* some invalid layout, to explain "none valid" */
    /* the first invalid layout whose dp splits the global batch evenly:
     * the one that explains an allocation without a valid layout when the
     * first invalid one only shows a dp the batch cannot take */
    int has_telling;
    mesh_layout_t telling;
    family_stat_t fam[MESH_FAMILY_COUNT];
    struct choice_memo *memo; /* choice_only: what the floors keep */
    /* where the search records what it found of each valid layout (NULL:
     * it does not); and what a search of the same inputs with at least
     * this search's memory found, which this one takes instead of pricing
     * a layout again where it holds here too (NULL: none) */
    layout_memo_t *record;
    const layout_memo_t *known;
    double record_below; /* record: the fits needing at most this memory */
} search_t;

/* What a search for the choice alone keeps of the shape it searches (on
 * the heap: the other searches, some of them nested, need none of it). */
typedef struct choice_memo {
    /* per interleaving (vpp_index) and recomputation, the slot times of
     * its sweeps' first micro-batch and per sample of their last
     * (slot_time_at) */
    slot_memo_t slot[MEMO_VPPS][3][2];
    /* per interleaving, recomputation and micro-batch (the sweep's
     * size_index), floors (unwanted) */
    stage_memo_t stage[MEMO_VPPS][3][MEMO_SIZES];
} choice_memo_t;

struct mesh_plan {
    mesh_model_t model;
    mesh_alloc_t alloc;
    mesh_assumptions_t assume; /* the policy's: the plan keeps no other part */
    mesh_layout_t pins;
    int fits;
    mesh_candidate_t best;
    mesh_candidate_t alts[MESH_PLAN_ALTERNATIVES];
    int n_alts;
    /* the explanation: records, and the lines explain_lines.c renders from them */
    mesh_reason_t reasons[LINES_MAX];
    int n_reasons;
    mesh_advice_t advice[LINES_MAX];
    int n_advice;
    char reason_lines[LINES_MAX][LINE_LEN];
    /* why the fastest near-tie was not chosen, when it was not */
    mesh_reason_t near_tie;
    int has_near_tie;
    char near_tie_line[NEAR_TIE_LEN];
    /* above MESH_PLAN_FULL of usable memory, and the choice that leaves the
     * rest free, if any (mesh_plan_tight) */
    int tight, has_roomier;
    mesh_candidate_t roomier;
    char advice_lines[LINES_MAX][LINE_LEN];
    long evaluated;
    long work; /* the work units its searches spent (internal.h, mesh_work_t) */
    /* the work budget stopped its search (1) or its advice (2); 0: neither */
    int halted;
    char digest[17];
};

/* The work units (internal.h, mesh_work_t) of the search's steps, each
 * about its time: one unit is about 10 ns of a 2 GHz core (measured with
 * `make bench-submit`'s cases, 2026-12-01: 10-11 ns for dense models).  A
 * layout found invalid without its check (surely_invalid), a layout
 * checked, its memory priced, the states' parts that pricing recounts when
 * the ZeRO stage or a lever changes, a cost priced (evaluate's or a floor's),
 * a shape's parameters.  A mixture of experts' pricing counts three times (its
 * expert terms: 12-17 ns a unit at twice), and its shape's parameters four
 * (WORK_SHAPE_MOE). */
enum {
    WORK_INVALID = 1, /* consider(): a cheap test */
    WORK_CHECK = 5,   /* evaluate(): levers and mesh_layout_check */
    WORK_MEMORY = 6,  /* price() */
    WORK_STATES = 20, /* mesh_states_parts: every framework's terms, twice */
    WORK_COST = 15,   /* mesh_cost_priced */
    WORK_SHAPE = 10,  /* shape_params(): the heavy stages' parameters */
    /* a mixture of experts' shape: its stages' dense and MoE layers, the
     * experts' share and the first stage of experts only (callgrind:
     * DeepSeek-V3's shapes 7,000 instructions each, a hostile spec's with
     * 1,024 experts 8,000-10,000, a dense model's 2,000); at 10 such a
     * spec's search on 2,048 nodes held the controller 26 ms.  Counted
     * again wherever the interleaving changes, with dense first layers */
    WORK_SHAPE_MOE = 40,
    /* a search's first step, the divisors of its world by trial division
     * up to the square root: a unit per WORK_DIVISIONS of them (a world of
     * 2^22 GPUs, 2,048 divisions, 64 units).  Uncounted, a spec whose
     * advice searched allocations of millions of GPUs spent 3 ms on 45,000
     * units (make bench-submit-fuzz, seed 2) */
    WORK_DIVISIONS = 32,
};

/* Count n units of the search's work against its budget, if it has one:
 * at the limit the search halts (internal.h, mesh_work_t). */
static inline void mesh_spend(search_t *s, long n)
{
    if (s->work && (s->work->spent += n) >= s->work->limit)
        s->halted = s->work->stopped = 1;
}

/* mesh_spend for a pricing of n units: three times as many for a MoE model. */
static inline void mesh_spend_pricing(search_t *s, long n)
{
    mesh_spend(s, mesh_is_moe(s->m) ? 3 * n : n);
}

/* Whether the search is over before its end: it found the layout it
 * looks for, or its budget stopped it. */
static inline int mesh_search_done(const search_t *s)
{
    return s->found || s->halted;
}

/* ---- prune.c ---- */

/* The layers of l's fullest stage a full:N recomputation can cover. */
int mesh_most_layers(const search_t *s, const mesh_layout_t *l);
/* The fewest layers per stage a planned full:N recomputation of l (of at
 * most `most`) is searched from. */
int mesh_fewest_layers(const search_t *s, const mesh_layout_t *l, int most);
/* The module sets a planned selective recomputation tries, cheapest first;
 * *n of them. */
const int *mesh_module_sets(const mesh_model_t *m, int *n);
#define DIVISORS_MAX 1024 /* numbers below 2^22 have at most a few hundred */
/* The divisors of n up to hi, ascending, in out (DIVISORS_MAX room). */
int mesh_divisors(long n, long hi, int *out);
/* The micro-batch sizes of l's data-parallel size into s->batch_sizes: how
 * many, 0 when the replicas cannot share the global batch evenly. */
int mesh_batch_list(search_t *s, const mesh_layout_t *l);
/* The key of l's ZeRO stage, offload and moments, below 64 (stages 0-3,
 * offload 0-1, four dtypes): what the states' parts and the step's bytes
 * depend on, so what their memos are kept by. */
static inline int mesh_lever_key(const mesh_layout_t *l)
{
    return (l->zero * 2 + (l->offload == 1)) * 8 + (int)l->moments;
}
/* prune.c: l's mesh_step_bytes, counted once per search for each ZeRO stage,
 * offload and moments. */
const mesh_step_bytes_t *mesh_search_step_bytes(search_t *s, const mesh_layout_t *l);
/* prune.c: l's step priced with the search's model, allocation and step
 * bytes, and charged to its budget (WORK_COST): every pricing of a step in
 * a search is this call. */
void mesh_search_cost(search_t *s, const mesh_layout_t *l, mesh_cost_t *out);
/* Whether no layout of shape l is wanted by a search for the choice alone. */
int mesh_shape_unwanted(search_t *s, mesh_layout_t *l, const int *vpps, int nv);
/* Whether a valid layout whose lever tries are tries[0..n-1] is wanted:
 * 0 price it, 1 do not, 2 nor any layout after it in its sweep. */
int mesh_unwanted(search_t *s, const mesh_layout_t *tries, int n);
/* Record in memo that layout l came to candidate fit (NULL: too large
 * with every lever); -1 (and the memo broken) when out of memory. */
int mesh_memo_add(layout_memo_t *memo, const mesh_layout_t *l, const mesh_candidate_t *fit);
/* The key under which a memo holds that no layout of l's (tp, cp, pp, dp,
 * ep, etp) shape fit: those fields alone, the others 0 (a layout's
 * micro-batch is at least 1). */
mesh_layout_t mesh_memo_shape(const mesh_layout_t *l);
/* Index memo's layouts for mesh_memo_find; -1 (and the memo broken) when
 * out of memory. */
int mesh_memo_index(layout_memo_t *memo);
/* Whether memo (NULL: none, or not indexed: nothing) holds layout l; *fit
 * then what its candidate was, NULL when it was too large, and *as the
 * candidate's layout (l's, with its levers and recomputation). */
int mesh_memo_find(const layout_memo_t *memo, const mesh_layout_t *l, const memo_fit_t **fit,
                   mesh_layout_t *as);
void mesh_memo_free(layout_memo_t *memo);

/* ---- choose.c (the order of the candidates, the near-tie rule) and search.c ---- */

/* The family of layout l (DP, DP + ZeRO-N, TP, PP). */
mesh_family_t mesh_family_of(const mesh_layout_t *l);
/* Whether a and b have the same (tp, cp, pp, ep, etp). */
int mesh_same_shape(const mesh_layout_t *a, const mesh_layout_t *b);
/* A search of model m on allocation a with these pins (none NULL), of the
 * first layout that fits alone when first_fit_only. */
void mesh_search_init(search_t *s, const mesh_assumptions_t *assume, const mesh_model_t *m,
                      const mesh_alloc_t *a, const mesh_layout_t *pins, int first_fit_only);
/* Run it: s->fits, s->shapes, s->fam, s->closest...; the caller frees s->fits. */
void mesh_search_run(search_t *s);
/* The largest free tp the search tries on m and a. */
long mesh_search_tp_max(const mesh_model_t *m, const mesh_alloc_t *a);
/* Whether the search tries a free tp on m and a: within NVLink's reach
 * (mesh_tp_on_nvlink), dividing the heads, and the KV heads or a multiple
 * of them. */
int mesh_search_tries_tp(const mesh_model_t *m, const mesh_alloc_t *a, int tp);
/* Whether shape (its tp, cp, pp, dp, ep, etp) fits at its smallest
 * micro-batch without recomputation, levers or ZeRO beyond 1, or as pinned
 * (s's pins): where the smallest EP across nodes that fits does not, the
 * search tries the largest too. */
int mesh_search_fits_plainly(search_t *s, const mesh_layout_t *shape);
/* Tries shape l at its EP for mesh_search_eps_across: 1 when some layout
 * fits. */
typedef int (*mesh_ep_try_t)(void *ctx, mesh_layout_t *l);
/* The EP rule beyond NVLink's reach (GPUs) at shape l (its tp, cp, pp, dp
 * and etp), which the search follows where no EP within it fits, and its
 * explanation replays: of the EPs that divide the experts and the stage's
 * ranks, each from the smallest until one fits (try_ep), and where that one
 * does not fit plainly (mesh_search_fits_plainly, asked of s), the largest
 * too.  Sets l->ep. */
void mesh_search_eps_across(search_t *s, mesh_layout_t *l, long reach, mesh_ep_try_t try_ep,
                            void *ctx);
/* The shortest sequence the search tries context parallelism for. */
#define MESH_CP_MIN_SEQ 8192
/* The largest free cp the search tries on m with `ranks` left to it after
 * TP (1: none). */
long mesh_search_cp_max(const mesh_model_t *m, long ranks);
/* A pinned layout completed with neutral values, to explain why it is invalid. */
mesh_layout_t mesh_representative(const mesh_layout_t *p, long world);
/* Memory used, as a fraction of the usable memory it is held against. */
double mesh_used(const mesh_candidate_t *c);
/* The near-tie rule's choice among s's fits (at least one); *roomy_below
 * the memory limit its second step used (1: none). */
const mesh_candidate_t *mesh_near_tie_choice(const search_t *s, double *roomy_below);
/* The fastest near-tie (the simplest of equals). */
const mesh_candidate_t *mesh_fastest_tie(const search_t *s);
/* Negative if a is faster than b, or as fast and simpler (a total order:
 * 0 only for the same layout). */
int mesh_faster(const mesh_candidate_t *a, const mesh_candidate_t *b);
/* Keep c among s's runners-up if it is the fastest of its shape so far,
 * and its shape among the fastest (s->shapes). */
void mesh_keep_shape(search_t *s, const mesh_candidate_t *c);
/* The fastest layout of each shape s kept other than best's, fastest
 * first, into out; returns how many. */
int mesh_runners_up(const search_t *s, const mesh_layout_t *best,
                    mesh_candidate_t out[MESH_PLAN_ALTERNATIVES]);

/* ---- explain.c ---- */

/* A new reason record of this kind, or NULL when LINES_MAX are kept. */
mesh_reason_t *mesh_add_reason(mesh_plan_t *p, mesh_reason_kind_t kind, mesh_family_t f);
/* Why family f was not chosen: its best fit, its least memory, a rule, or the pins. */
void mesh_explain_family(mesh_plan_t *p, mesh_family_t f, const family_stat_t *st);
/* Why this EP: the plan's own record, and other EPs' at its shape. */
void mesh_explain_experts(mesh_plan_t *p);
/* Why the plan, whose own EP record is `own`, did not take the faster EP of
 * record r, reach being the GPUs the EP search counts as on NVLink, and
 * tried whether the search tried r's EP at the plan's shape where both are
 * beyond the reach (one of the two it tries there). */
mesh_ep_untaken_t mesh_ep_why_untaken(const mesh_reason_t *own, const mesh_reason_t *r, long reach,
                                      int tried);
/* Whether the search tried EP ep beyond reach (GPUs on NVLink) at plan p's
 * shape: mesh_search_eps_across's rule replayed. */
int mesh_ep_tried_across(const mesh_plan_t *p, int ep, long reach);
/* When the choice is slower by the model than the fastest, which rule decided. */
void mesh_explain_near_tie(mesh_plan_t *p, const search_t *s, double roomy_below);
/* What would fit, for a plan where nothing does. */
void mesh_advise(mesh_plan_t *p);

/* ---- explain_lines.c ---- */

/* The lines of the records, rendered once into the plan. */
void mesh_render_lines(mesh_plan_t *p);

#endif
