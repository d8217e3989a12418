/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The planner's small counts and its floors: the divisors and micro-batch
 * sizes the search walks, the recomputation it tries, and what a search
 * for the choice alone leaves unpriced (below).
 */
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "planner.h"

/* A memo block kept for the next memo (below) is poisoned for
 * AddressSanitizer, so that a use after its memo ended is still caught. */
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#else
#define ASAN_POISON_MEMORY_REGION(p, n)   ((void)(p), (void)(n))
#define ASAN_UNPOISON_MEMORY_REGION(p, n) ((void)(p), (void)(n))
#endif

/* The layers of l's fullest stage a full:N recomputation can cover. */
int mesh_most_layers(const search_t *s, const mesh_layout_t *l)
{
    return mesh_pp_fullest_layers(s->m, l);
}

/* The fewest layers per stage a planned full:N recomputation of l (of at
 * most `most`) is searched from: those needed at the micro-batch before,
 * without levers. */
int mesh_fewest_layers(const search_t *s, const mesh_layout_t *l, int most)
{
    int plain = !l->offload && l->moments == MESH_PREC_FP32;
    return plain && s->full_lo > 1 && s->full_lo <= most ? s->full_lo : 1;
}

/* recompute selective with its modules planned: the first set that fits,
 * in the order of what they cost to recompute (module_sets, each holding
 * the one before).  FlashAttention keeps no scores, so in bf16 the
 * attention core is worth recomputing only without it; under FP8 its bf16
 * output, kept beside the projection's FP8 copy of it, goes too (see
 * mesh_activation_layer), so there it is the last set's.  Prices the
 * layout chosen into *c. */
const int *mesh_module_sets(const mesh_model_t *m, int *n)
{
    /* "layernorm" saves nothing under Megatron's default layers (see
     * mesh_activation_layer), so it is never chosen */
    static const int flash[] = {MESH_RC_MLP};
    static const int flash_fp8[] = {MESH_RC_MLP, MESH_RC_CORE_ATTN | MESH_RC_MLP};
    static const int scores[] = {MESH_RC_CORE_ATTN, MESH_RC_CORE_ATTN | MESH_RC_MLP};
    /* latent attention's up projections ("mla_up_proj", what
     * Megatron-Bridge's DeepSeek-V3 recipes recompute) after the first set,
     * in chains: each set holds the one before, so the order is the time
     * order, the first recomputes the least (the floors price it:
     * least_recompute) and the last saves the most.  Under FP8 {core_attn,
     * mlp} is left out: the up projections save more than the core (the
     * queries, keys and values against the core's bf16 output), so it
     * never fits where {mla_up_proj, mlp} does not */
    enum { UP = MESH_RC_MLA_UP_PROJ, CA = MESH_RC_CORE_ATTN, MLP = MESH_RC_MLP };
    static const int mla_flash[] = {MLP, UP | MLP};
    static const int mla_flash_fp8[] = {MLP, UP | MLP, CA | UP | MLP};
    static const int mla_scores[] = {CA, CA | UP, CA | UP | MLP};
    int mla = m->mla.kv_lora_rank > 0;
    if (!m->flash_attention)
        return mla ? (*n = MESH_ARRAY_LEN(mla_scores), mla_scores)
                   : (*n = MESH_ARRAY_LEN(scores), scores);
    if (m->precision == MESH_PREC_FP8)
        return mla ? (*n = MESH_ARRAY_LEN(mla_flash_fp8), mla_flash_fp8)
                   : (*n = MESH_ARRAY_LEN(flash_fp8), flash_fp8);
    return mla ? (*n = MESH_ARRAY_LEN(mla_flash), mla_flash) : (*n = MESH_ARRAY_LEN(flash), flash);
}

/* The divisors of n up to hi, ascending, in out.  Trial division up to
 * sqrt(n), not a walk over every count: the search for what would fit asks
 * this of up to MAX_GPUS GPUs and 100,000 layers, many times over. */
#define DIVISORS_MAX 1024 /* numbers below 2^22 have at most a few hundred */
int mesh_divisors(long n, long hi, int *out)
{
    int k = 0, n_large = 0, large[DIVISORS_MAX / 2];
    for (long d = 1; d * d <= n && k < DIVISORS_MAX / 2 && n_large < DIVISORS_MAX / 2; d++) {
        if (n % d)
            continue;
        if (d <= hi)
            out[k++] = (int)d;
        if (n / d != d && n / d <= hi)
            large[n_large++] = (int)(n / d);
    }
    while (n_large > 0)
        out[k++] = large[--n_large];
    return k;
}

const mesh_step_bytes_t *mesh_search_step_bytes(search_t *s, const mesh_layout_t *l)
{
    int key = mesh_lever_key(l);
    if (!(s->step_known >> key & 1)) {
        s->step_bytes[key] = mesh_step_bytes(s->m, l);
        s->step_known |= 1ULL << key;
    }
    return &s->step_bytes[key];
}

void mesh_search_cost(search_t *s, const mesh_layout_t *l, mesh_cost_t *out)
{
    mesh_cost_priced(s->m, l, s->a, s->heavy.psi[s->most], s->heavy.psi_e[s->most],
                     s->flops_per_token, mesh_search_step_bytes(s, l), out);
    mesh_spend_pricing(s, WORK_COST);
}

/* The micro-batch sizes of l's data-parallel size (s->batch_sizes):
 * how many, 0 when the replicas cannot share the global batch evenly. */
int mesh_batch_list(search_t *s, const mesh_layout_t *l)
{
    if (s->batch_dp != l->dp) {
        long per_replica = s->m->global_batch % l->dp ? 0 : s->m->global_batch / l->dp;
        s->n_batch_sizes = 0;
        if (per_replica <= (long)MB_MAX * MB_MAX) /* trial division to its root */
            s->n_batch_sizes = mesh_divisors(per_replica, MB_MAX, s->batch_sizes);
        else
            for (int mb = 1; mb <= MB_MAX; mb++)
                if (per_replica % mb == 0)
                    s->batch_sizes[s->n_batch_sizes++] = mb;
        s->batch_dp = l->dp;
    }
    return s->n_batch_sizes;
}

/* ---- leaving unpriced what cannot be chosen (choice_only) ----
 *
 * A search for the choice alone prices a layout only if it can be a
 * near-tie of the fastest layout found so far (add_fit drops the others)
 * and of one that meets the deadline: a floor under its step time says
 * which cannot.  Left unpriced, a layout neither stops its micro-batch
 * sweep nor tells the sweeps after it whether it fit; that changes
 * nothing that can be chosen: memory grows with the micro-batch (what the
 * sweep's stop assumes already), and the recomputing layouts at its size
 * that it would have spared are no faster than it, so they are left
 * unpriced too.  The floors rest on the cost model only adding time for
 * recomputing more, and on a micro-batch's slot time (cost.c's parts that
 * scale with the pipeline's slots) growing with it, less than in
 * proportion: tests/unit/test_size.c checks both over many layouts. */

/* The slowest step a layout may take to be wanted: MESH_PLAN_TIE above
 * the fastest so far or the deadline, the shorter; 0 while any is (no
 * fit and no deadline yet, or the expert search still counting). */
static double wanted_limit(const search_t *s)
{
    if (!s->choice_only || s->fitting <= s->guard || (s->n_fits == 0 && s->deadline <= 0))
        return 0;
    double limit = s->n_fits == 0                                ? s->deadline
                   : s->deadline > 0 && s->deadline < s->fastest ? s->deadline
                                                                 : s->fastest;
    return limit * (1 + MESH_PLAN_TIE);
}

/* l with the least recomputation the planner can give it: a planned
 * full:N of `layers` (where its search starts), a planned selective with
 * the first module set (module_sets). */
static mesh_layout_t least_recompute(const search_t *s, const mesh_layout_t *l, int layers)
{
    mesh_layout_t b = *l;
    int n_sets;
    if (b.recompute == MESH_RECOMPUTE_FULL && b.recompute_layers == MESH_FREE)
        b.recompute_layers = layers;
    if (b.recompute == MESH_RECOMPUTE_SELECTIVE && b.recompute_modules == MESH_FREE)
        b.recompute_modules = mesh_module_sets(s->m, &n_sets)[0];
    return b;
}

/* The time per pipeline slot (a micro-batch's compute, TP, CP and expert
 * traffic on the slowest stage) of cost c of layout l: cost.c's parts
 * that scale with the slots, over them. */
static double slot_time(const mesh_model_t *m, const mesh_layout_t *l, const mesh_cost_t *c)
{
    double slots =
        (double)mesh_layout_micro_batches(l, m->global_batch) + (double)(l->pp - 1) / l->vpp;
    return (c->compute_s + c->tp_comm_s + c->cp_comm_s + c->ep_comm_s) / slots;
}

/* What slot_time_at gives: a slot's time, or a sample's (its micro-batch's
 * share), each with a memo of its own. */
typedef enum { PER_SLOT, PER_SAMPLE } slot_unit_t;

/* The slot time of l (its recomputation the least, see least_recompute)
 * at the sweep's micro-batch i, per sample when unit says; counted once
 * per recomputation and full:N of a shape, for the sweep's first and last
 * micro-batches, and per interleaving where the stages' layers depend on
 * it (a MoE model's, or one with MTP layers; a dense model's full
 * recomputation covers every layer interleaved and N of them without: two
 * memos). */
static double slot_time_at(search_t *s, const mesh_layout_t *l, int i, slot_unit_t unit)
{
    slot_memo_t none = {0, 0, -1};
    int vi = mesh_is_moe(s->m) || s->m->mtp_layers ? s->vpp_index : s->vpp_index > 0;
    slot_memo_t *e = vi < MEMO_VPPS ? &s->memo->slot[vi][(int)l->recompute][unit] : &none;
    int layers = l->recompute == MESH_RECOMPUTE_FULL ? l->recompute_layers : 0;
    if (e->shape != s->shapes_searched || e->layers != layers) {
        mesh_layout_t b = *l;
        b.micro_batch = s->batch_sizes[i];
        mesh_cost_t c;
        mesh_search_cost(s, &b, &c);
        e->seconds = slot_time(s->m, &b, &c) / (unit == PER_SAMPLE ? b.micro_batch : 1);
        e->layers = layers;
        e->shape = s->shapes_searched;
    }
    return e->seconds;
}

/* A floor under the step of every layout of l's sweep from a micro-batch
 * whose slot time is `first` on: the replica's samples at the least slot
 * time per sample (the sweep's last micro-batch's), the bubble's slots at
 * `first` at least, and `fixed` (the same for all).  l's recomputation
 * the least. */
static double sweep_floor(search_t *s, const mesh_layout_t *l, double first, double fixed)
{
    double per_replica = (double)(s->m->global_batch / l->dp);
    double per_sample = slot_time_at(s, l, s->n_batch_sizes - 1, PER_SAMPLE);
    return (per_replica * per_sample + (double)(l->pp - 1) / l->vpp * first + fixed) *
           (1 - 1e-9); /* the divisions' rounding */
}

/* A floor under the step of every layout of shape l, whatever its
 * interleaving (one of vpps[0..nv-1]), ZeRO stage, recomputation and
 * micro-batch: its sweeps' without recomputation at the most
 * interleaving.  A dense model's slot time does not depend on the
 * interleaving; a MoE model's stages can hold other layers under each.
 * 0 where there is none (no micro-batch divides, or one is pinned). */
static double shape_floor(search_t *s, const mesh_layout_t *l, const int *vpps, int nv)
{
    if (!mesh_batch_list(s, l) || s->pins->micro_batch != MESH_FREE)
        return 0;
    mesh_layout_t b = *l;
    b.recompute = MESH_RECOMPUTE_NONE;
    b.recompute_layers = b.recompute_modules = 0;
    b.zero = 0; /* not set yet; the slot time does not depend on it */
    double floor = 0;
    int each = mesh_is_moe(s->m) || s->m->mtp_layers, vmax = 1;
    for (int i = 0; i < nv; i++) {
        vmax = vpps[i] > vmax ? vpps[i] : vmax;
        b.vpp = vpps[i];
        s->vpp_index = i;
        double f = each ? sweep_floor(s, &b, slot_time_at(s, &b, 0, PER_SLOT), 0) : 0;
        floor = i == 0 || f < floor ? f : floor;
    }
    if (!each) { /* the slot times of the first, the bubble of the most */
        b.vpp = vpps[0];
        s->vpp_index = 0;
        double first = slot_time_at(s, &b, 0, PER_SLOT);
        slot_time_at(s, &b, s->n_batch_sizes - 1, PER_SAMPLE);
        b.vpp = vmax;
        floor = sweep_floor(s, &b, first, 0);
    }
    return floor;
}

/* Whether no layout of shape l is wanted (see shape_floor). */
int mesh_shape_unwanted(search_t *s, mesh_layout_t *l, const int *vpps, int nv)
{
    double limit = wanted_limit(s);
    if (limit <= 0 || shape_floor(s, l, vpps, nv) <= limit)
        return 0;
    s->skipped++;
    return 1;
}

/* Whether a valid layout whose lever tries are tries[0..n-1] is wanted: a
 * floor under whatever evaluate prices for it is the cost of tries[0]
 * with the least recomputation and, where levers are tried, without the
 * optimizer step, the one part of the cost they change.  0: price it; 1:
 * do not; 2: nor any layout after it in its sweep. */
int mesh_unwanted(search_t *s, const mesh_layout_t *tries, int n)
{
    double limit = wanted_limit(s);
    if (limit <= 0)
        return 0;
    int layers = n > 1 ? 1 : mesh_fewest_layers(s, &tries[0], mesh_most_layers(s, &tries[0]));
    mesh_layout_t l = least_recompute(s, &tries[0], layers);
    /* the same layout under an earlier ZeRO stage: the stage changes only
     * the data-parallel traffic and the optimizer step (test_size checks
     * it), so its floor without them floors this one */
    stage_memo_t *z = s->vpp_index < MEMO_VPPS && s->size_index >= 0 && s->size_index < MEMO_SIZES
                          ? &s->memo->stage[s->vpp_index][(int)l.recompute][s->size_index]
                          : NULL;
    s->stage_entry = NULL;
    if (z && z->shape == s->shapes_searched && z->layers == layers) {
        if (z->part > limit)
            return sweep_floor(s, &l, z->slot, 0) > limit ? 2 : 1;
        /* too large under the last stage: most likely under this one too,
         * so pricing it, which says so, spares the floor (a guess: the
         * choice does not depend on it) */
        s->stage_entry = z;
        if (z->too_big)
            return 0;
    }
    mesh_cost_t c;
    mesh_search_cost(s, &l, &c);
    s->floor_layout = l;
    s->floor_cost = c;
    s->has_floor = 1;
    if (z) { /* cost.c's sum, in its order, without the stage's parts */
        z->part = c.compute_s + c.tp_comm_s + c.cp_comm_s + c.pp_comm_s + 0.0 + 0.0 + c.ep_comm_s;
        z->slot = slot_time(s->m, &l, &c);
        z->layers = layers;
        z->shape = s->shapes_searched;
        z->too_big = 0;
        s->stage_entry = z;
    }
    /* and without the optimizer step where levers are tried */
    double floor = n == 1 ? c.step_seconds
                          : c.compute_s + c.tp_comm_s + c.cp_comm_s + c.pp_comm_s + c.dp_comm_s +
                                0.0 + c.ep_comm_s;
    if (floor <= limit)
        return 0;
    if (s->size_index < 0) /* no sweep */
        return 1;
    double fixed = n == 1 ? c.optimizer_s : 0;
    return sweep_floor(s, &l, slot_time(s->m, &l, &c), fixed) > limit ? 2 : 1;
}

/* ---- what a search found, for a search with less memory ----
 *
 * A tight plan searches again for its roomier alternative, with less
 * memory (plan.c, tight): the same inputs but a larger headroom.  The
 * memory a layout needs and its cost do not depend on the capacity they
 * are held against, and evaluate tries the levers in one order, each
 * fitting with less memory only if it fits with more (partial
 * recomputation and selective modules search from their strongest
 * setting, memory falling as they grow).  So a layout that no lever made
 * fit then fits in none of the second search's tries; and the one it came
 * to, where it fits the second's memory too, is what the second comes to.
 * A shape none of whose layouts fit then fits none now.  The first search
 * records all three (of the fits, only those within the second's memory,
 * and only what recall needs); the second prices the rest, and a fit it
 * recalls it prices again only where it can be chosen.  DeepSeek-V3 on 2,048 H100s:
 * the second search took 7.8 M instructions, 1.3 M with it.  The plans of
 * the 13 presets on 1-256 nodes of five GPUs under 24 pin and headroom
 * sets (24,960 plans, 2,534 of them tight) are byte-identical with and
 * without it, and tests/unit/test_plan.c checks the alternative against
 * a search afresh. */

/* FNV-1a over the layout's fields, 64 bits at a time (it is 16 ints). */
static uint64_t layout_hash(const mesh_layout_t *l)
{
    uint64_t w[sizeof(*l) / sizeof(uint64_t)], h = 1469598103934665603ULL;
    _Static_assert(sizeof(*l) % sizeof(uint64_t) == 0, "mesh_layout_t is whole 64-bit words");
    memcpy(w, l, sizeof(w));
    for (size_t i = 0; i < MESH_ARRAY_LEN(w); i++)
        h = (h ^ w[i]) * 1099511628211ULL;
    return h ^ (h >> 32);
}

/* Item k of blocks whose items are `each` bytes (k below what was
 * added). */
static void *item(const memo_blocks_t *b, size_t k, size_t each)
{
    return (char *)b->block[k / MEMO_BLOCK] + k % MEMO_BLOCK * each;
}

static layout_memo_entry_t *entry(const layout_memo_t *memo, size_t k)
{
    return item(&memo->entries, k, sizeof(layout_memo_entry_t));
}

/* Blocks of ended memos, kept for the next memos' (block_take,
 * block_give).  A search of a hostile spec records thousands of layouts,
 * a quarter of a megabyte of blocks.  Handed back to the C library at each
 * plan's end, part of that memory left the process (glibc gives the top
 * of its heap back to the kernel), and the next plan faulted those pages in
 * again: 33 for bench-submit's "hostile 64 nodes", at 10 us a page on a
 * virtual machine, a fifth of a judgement that slurmctld makes with its
 * job locks held.  MEMO_SPARES blocks (1.1 MB) at most are kept while the
 * library is loaded, the last one kept taken first (the likeliest to be
 * in the caches still).  The entries' blocks and the fits' are one size,
 * so that either array takes any spare. */
#define MEMO_BLOCK_BYTES (MEMO_BLOCK * sizeof(layout_memo_entry_t))
_Static_assert(sizeof(memo_fit_t) <= sizeof(layout_memo_entry_t), "a memo's blocks are one size");

static struct {
    pthread_mutex_t lock;
    void *block[MEMO_SPARES];
    int n;
} spare = {PTHREAD_MUTEX_INITIALIZER, {NULL}, 0};

static void *block_take(void)
{
    void *b = NULL;
    pthread_mutex_lock(&spare.lock);
    if (spare.n > 0) {
        b = spare.block[--spare.n];
        ASAN_UNPOISON_MEMORY_REGION(b, MEMO_BLOCK_BYTES);
    }
    pthread_mutex_unlock(&spare.lock);
    return b ? b : malloc(MEMO_BLOCK_BYTES);
}

static void block_give(void *b)
{
    pthread_mutex_lock(&spare.lock);
    if (spare.n < MEMO_SPARES) {
        ASAN_POISON_MEMORY_REGION(b, MEMO_BLOCK_BYTES);
        spare.block[spare.n++] = b;
        b = NULL;
    }
    pthread_mutex_unlock(&spare.lock);
    free(b);
}

/* The spares handed back to the C library when this library leaves the
 * process: at its exit, or when slurmctld unloads job_submit/meshplan,
 * which links it in (where a reconfiguration changes JobSubmitPlugins).
 * A lock another thread holds (a child forked while it did) leaves them:
 * memory left at exit is harmless, a deadlock is not. */
__attribute__((destructor)) static void spares_free(void)
{
    if (pthread_mutex_trylock(&spare.lock) != 0)
        return;
    for (; spare.n > 0; spare.n--) {
        ASAN_UNPOISON_MEMORY_REGION(spare.block[spare.n - 1], MEMO_BLOCK_BYTES);
        free(spare.block[spare.n - 1]);
    }
    pthread_mutex_unlock(&spare.lock);
}

/* Room in b for item k, the next one: a block more where it starts one;
 * -1 when out of memory. */
static int room_for(memo_blocks_t *b, size_t k)
{
    if (k % MEMO_BLOCK || k / MEMO_BLOCK < b->n)
        return 0;
    void **v = mesh_grow(b->block, &b->cap, b->n, sizeof(*v), 16);
    if (!v)
        return -1;
    b->block = v;
    if (!(b->block[b->n] = block_take()))
        return -1;
    b->n++;
    return 0;
}

static void free_blocks(memo_blocks_t *b)
{
    for (size_t i = 0; i < b->n; i++)
        block_give(b->block[i]);
    free(b->block);
}

/* The slot of layout l: the one holding it, or the free one where it
 * would go. */
static size_t slot_of(const layout_memo_t *memo, const mesh_layout_t *l)
{
    size_t i = (size_t)layout_hash(l) & (memo->cap - 1);
    for (uint32_t e; (e = memo->slots[i]) != 0; i = (i + 1) & (memo->cap - 1))
        if (!memcmp(&entry(memo, e - 1)->key, l, sizeof(*l)))
            break;
    return i;
}

int mesh_memo_add(layout_memo_t *memo, const mesh_layout_t *l, const mesh_candidate_t *fit)
{
    if (memo->broken)
        return -1;
    if (memo->n >= INT_MAX || /* its slots' and fits' indices */
        room_for(&memo->entries, memo->n) < 0 || (fit && room_for(&memo->fits, memo->n_fits) < 0)) {
        memo->broken = 1;
        return -1;
    }
    int at = -1;
    if (fit) {
        const mesh_layout_t *c = &fit->layout;
        *(memo_fit_t *)item(&memo->fits, memo->n_fits, sizeof(memo_fit_t)) = (memo_fit_t){
            fit->memory.total,    fit->memory.host, fit->cost.step_seconds, c->recompute_layers,
            c->recompute_modules, c->offload,       c->tp_overlap_off,      c->moments};
        at = (int)memo->n_fits++;
    }
    *entry(memo, memo->n++) = (layout_memo_entry_t){*l, at};
    return 0;
}

mesh_layout_t mesh_memo_shape(const mesh_layout_t *l)
{
    return (mesh_layout_t){
        .tp = l->tp, .cp = l->cp, .pp = l->pp, .dp = l->dp, .ep = l->ep, .etp = l->etp};
}

int mesh_memo_index(layout_memo_t *memo)
{
    size_t cap = 512;
    while (cap < 2 * memo->n)
        cap *= 2;
    free(memo->slots);
    memo->slots = memo->broken ? NULL : calloc(cap, sizeof(*memo->slots));
    if (!memo->slots) {
        memo->broken = 1;
        return -1;
    }
    memo->cap = cap;
    for (size_t k = 0; k < memo->n; k++) {
        size_t i = slot_of(memo, &entry(memo, k)->key);
        if (!memo->slots[i]) /* evaluated twice: the first */
            memo->slots[i] = (uint32_t)(k + 1);
    }
    return 0;
}

int mesh_memo_find(const layout_memo_t *memo, const mesh_layout_t *l, const memo_fit_t **fit,
                   mesh_layout_t *as)
{
    if (!memo || memo->broken || !memo->slots)
        return 0;
    uint32_t e = memo->slots[slot_of(memo, l)];
    if (e == 0)
        return 0;
    int at = entry(memo, e - 1)->fit;
    const memo_fit_t *f = at >= 0 ? item(&memo->fits, (size_t)at, sizeof(memo_fit_t)) : NULL;
    *fit = f;
    *as = *l;
    if (f) {
        as->recompute_layers = f->recompute_layers;
        as->recompute_modules = f->recompute_modules;
        as->offload = f->offload;
        as->tp_overlap_off = f->tp_overlap_off;
        as->moments = f->moments;
    }
    return 1;
}

void mesh_memo_free(layout_memo_t *memo)
{
    free(memo->slots);
    free_blocks(&memo->entries);
    free_blocks(&memo->fits);
    memset(memo, 0, sizeof(*memo));
}
