/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The planner's API (plan.h): a plan's inputs checked and completed, its
 * search run (search.c), its choice and runners-up, its explanation
 * (explain.c), its digest, and the accessors.  lib/planner.h says how the
 * planner's files divide the work.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner.h"

/* The plan's choice (the near-tie rule, mesh_near_tie_choice) and its
 * runners-up. */
static void choose(mesh_plan_t *p, search_t *s, double *roomy_below)
{
    const mesh_candidate_t *best = mesh_near_tie_choice(s, roomy_below);
    p->best = *best;
    p->fits = 1;
    p->n_alts = mesh_runners_up(s, &p->best.layout, p->alts);
}

/* Everything the plan depends on, so that ranks comparing digests catch a
 * node that planned from different inputs, not only a different layout. */
static void digest(mesh_plan_t *p)
{
    char text[1024], canon[MESH_LAYOUT_STR_MAX], model[17];
    const mesh_gpu_t *g = &p->alloc.gpu;
    const mesh_assumptions_t *as = &p->assume;
    snprintf(text, sizeof(text),
             "v3|%s|%d|%d|%d|%s|%.17g|%.17g|%.17g|%.17g|%.17g|%.17g|%.17g|%.17g|%.17g|%.17g|%.17g|"
             "%.17g|%s",
             mesh_model_digest(&p->model, model), p->alloc.nodes, p->alloc.gpus_per_node,
             p->alloc.island, g->name, g->memory, g->peak_flops, g->peak_fp8, g->hbm_bw, g->link_bw,
             g->net_bw, g->gemm_eff, p->alloc.host_memory, as->reserve, as->overhead_context,
             as->overhead_comm, as->fragmentation,
             mesh_layout_format(&p->best.layout, canon, sizeof(canon)));
    /* headroom was added later: a plan without any keeps its digest */
    if (as->headroom > 0)
        snprintf(text + strlen(text), sizeof(text) - strlen(text), "|h%.17g", as->headroom);
    snprintf(p->digest, sizeof(p->digest), "%016llx", (unsigned long long)mesh_fnv1a64(text));
}

/* *assume into *out, or mesh_policy_init's when it is NULL. */
static void default_assumptions(const mesh_assumptions_t *assume, mesh_assumptions_t *out)
{
    mesh_policy_t defaults;
    if (!assume) {
        mesh_policy_init(&defaults);
        assume = &defaults.assume;
    }
    *out = *assume;
}

/* The framework a plan of m runs under: the spec's, else the site's (as),
 * where LoRA is never Megatron-LM's (mesh_lora_framework; a spec's
 * framework: megatron with it is refused, a library caller's is not). */
static int framework_of(const mesh_model_t *m, const mesh_assumptions_t *as)
{
    int fw = m->framework == MESH_FW_AUTO ? (int)as->framework : (int)m->framework;
    return mesh_lora_framework(m->finetune, fw);
}

/* Whether a plan can be made of these inputs (as: the assumptions, the
 * defaults already in place of none): 0, or -1 with err. */
static int check_inputs(const mesh_model_t *m, const mesh_alloc_t *a, const mesh_layout_t *pins,
                        const mesh_assumptions_t *as, mesh_error_t *err)
{
    if (pins && !mesh_is_moe(m) && (pins->ep >= 0 || pins->etp >= 0))
        return mesh_error_set(err,
                              "mesh %s: %s has no experts; expert parallelism needs a MoE model "
                              "(arch.moe)",
                              pins->ep >= 0 ? "ep" : "etp", m->name);
    if (mesh_before_ampere_check(a, pins, err) < 0)
        return -1;
    if (mesh_lora_check(m, framework_of(m, as), pins, err) < 0)
        return -1;
    if (mesh_dispatcher_check(m, a, err) < 0)
        return -1;
    if (pins && pins->offload == 1 && a->host_memory <= 0)
        return mesh_error_set(err, "offload=optimizer: the nodes' host memory is unknown (give the "
                                   "job --mem, or meshplan --host-mem SIZE)");
    if (a->nodes < 1 || a->nodes > 1 << 20)
        return mesh_error_set(err, "nodes: %d is out of range (1..%d)", a->nodes, 1 << 20);
    if (a->gpus_per_node < 1 || a->gpus_per_node > 1024)
        return mesh_error_set(err, "gpus-per-node: %d is out of range (1..1024)", a->gpus_per_node);
    if (mesh_world(a) > MAX_GPUS)
        return mesh_error_set(err, "%d nodes x %d GPUs is more than %ld GPUs", a->nodes,
                              a->gpus_per_node, MAX_GPUS);
    if (a->island < 1)
        return mesh_error_set(err, "nvlink: island size must be at least 1");
    if (a->gpu.memory <= 0)
        return mesh_error_set(err, "gpu memory unknown: give --gpu NAME or --gpu-mem SIZE");
    /* FP8 first: a GPU without bf16 has no FP8 either, and says so */
    if (m->precision == MESH_PREC_FP8 && a->gpu.peak_fp8 <= 0)
        return mesh_error_set(err,
                              "train.precision: %s has no FP8 tensor cores (Hopper, Ada, Blackwell "
                              "and MI300 do); use precision: %s",
                              a->gpu.name, a->gpu.has_bf16 ? "bf16" : "fp16");
    if ((m->precision == MESH_PREC_BF16 || m->precision == MESH_PREC_FP8) && !a->gpu.has_bf16)
        return mesh_error_set(err, "train.precision: %s has no bf16; use precision: fp16",
                              a->gpu.name);
    if (m->precision == MESH_PREC_FP8 && m->fp8_recipe == MESH_FP8_MXFP8 && a->gpu.fp8_blocks < 2)
        return mesh_error_set(err,
                              "train.fp8_recipe: mxfp8 needs Blackwell (compute capability 10); "
                              "%s runs %s",
                              a->gpu.name,
                              a->gpu.fp8_blocks ? "delayed, tensorwise or blockwise"
                                                : "delayed or tensorwise");
    if (m->precision == MESH_PREC_FP8 && m->fp8_recipe == MESH_FP8_BLOCKWISE &&
        a->gpu.fp8_blocks < 1)
        return mesh_error_set(err,
                              "train.fp8_recipe: blockwise needs Hopper or Blackwell (Transformer "
                              "Engine's block-scaled GEMMs need compute capability 9.0); %s runs "
                              "delayed or tensorwise",
                              a->gpu.name);
    return 0;
}

/* What the search runs on: the allocation with its island no larger than a
 * node, and the pins with the spec's own choices added (they act as pins
 * unless --mesh overrides them, with a value or with "auto"). */
static void search_inputs(const mesh_model_t *m, const mesh_alloc_t *a, const mesh_layout_t *pins,
                          mesh_alloc_t *alloc, mesh_layout_t *pin)
{
    *alloc = *a;
    if (alloc->island > alloc->gpus_per_node)
        alloc->island = alloc->gpus_per_node;
    if (pins)
        *pin = *pins;
    else
        mesh_layout_unpin(pin);
    if (pin->micro_batch == MESH_FREE && m->micro_batch > 0)
        pin->micro_batch = m->micro_batch;
    if (pin->recompute == MESH_RECOMPUTE_AUTO) {
        pin->recompute = m->recompute;
        if (m->recompute == MESH_RECOMPUTE_FULL) /* the spec's full is every layer */
            pin->recompute_layers = 0;
        if (m->recompute == MESH_RECOMPUTE_SELECTIVE) /* and its selective Megatron's */
            pin->recompute_modules = 0;
    }
    /* "auto" is planned like a field left out (MESH_RECOMPUTE_AUTO is
     * MESH_FREE: recompute alike) */
    for (int i = 0; i < MESH_LAYOUT_KEYS; i++)
        if (mesh_layout_value(pin, &mesh_layout_keys[i]) == MESH_AUTO)
            *mesh_layout_field(pin, &mesh_layout_keys[i]) = MESH_FREE;
    /* recompute: full from the spec or --mesh means all layers; a planned
     * full recomputation may cover fewer */
    if (pin->recompute == MESH_RECOMPUTE_AUTO)
        pin->recompute_layers = pin->recompute_modules = MESH_FREE;
}

/* The site's DeepEP (its dispatcher=, the spec's auto) only where some
 * layout fits with its buffers: elsewhere the all-to-all, which needs none
 * (as TP's overlap is turned off where its Userbuffers are what does not
 * fit).  1 when the first-fit search found a layout that fits with it. */
static int site_deepep_fits(const mesh_model_t *m, const mesh_alloc_t *alloc,
                            const mesh_layout_t *pin, const mesh_assumptions_t *as,
                            mesh_model_t *model)
{
    if (model->dispatcher != MESH_DISPATCHER_DEEPEP || m->dispatcher != MESH_DISPATCHER_AUTO)
        return 0;
    search_t s;
    mesh_search_init(&s, as, model, alloc, pin, 1);
    mesh_search_run(&s);
    if (!s.found)
        model->dispatcher = MESH_DISPATCHER_AUTO;
    return s.found;
}

/* A plan's inputs as its search runs on them: search_inputs', the policy's
 * assumptions (*as, with the defaults in place of none: given the spec's
 * headroom where it asks for more), and the model with the imbalance a MoE
 * model is priced at (the spec's, else the policy's), so that memory, cost,
 * the digest and the report agree.  1 when a layout is already known to fit
 * them (the site's DeepEP was tried: the first-fit search need not run
 * again). */
static int plan_inputs(const mesh_model_t *m, const mesh_alloc_t *a, const mesh_layout_t *pins,
                       mesh_model_t *model, mesh_alloc_t *alloc, mesh_layout_t *pin,
                       mesh_assumptions_t *as)
{
    *model = *m;
    search_inputs(m, a, pins, alloc, pin);
    if (mesh_is_moe(m) && m->moe_imbalance <= 0)
        model->moe_imbalance = mesh_moe_imbalance(m, as);
    /* a user may ask for more room than the site, never for less */
    if (m->headroom > as->headroom)
        as->headroom = m->headroom;
    /* a site that runs Megatron-LM alone still prices LoRA as auto does */
    model->framework = (mesh_framework_t)framework_of(m, as);
    mesh_dispatcher_resolve(a, as->dispatcher, model);
    mesh_before_ampere(a, model, pin);
    mesh_lora_layout(model, pin);
    return site_deepep_fits(m, alloc, pin, as, model);
}

/* A search's inputs, as plan_inputs makes them, and whether a layout is
 * known to fit them. */
typedef struct plan_in {
    mesh_model_t model;
    mesh_alloc_t alloc;
    mesh_layout_t pin;
    mesh_assumptions_t as;
    int fits;
} plan_in_t;

/* The inputs checked (check_inputs), then made into *in.  0, or -1 with err. */
static int checked_inputs(const mesh_model_t *m, const mesh_alloc_t *a, const mesh_layout_t *pins,
                          const mesh_assumptions_t *assume, plan_in_t *in, mesh_error_t *err)
{
    default_assumptions(assume, &in->as);
    if (check_inputs(m, a, pins, &in->as, err) < 0)
        return -1;
    in->fits = plan_inputs(m, a, pins, &in->model, &in->alloc, &in->pin, &in->as);
    return 0;
}

/* Why search s found no valid layout on allocation a, into *e.  Its first
 * invalid layout names the rule it breaks; where that is only a dp the
 * global batch cannot take (tp, cp and pp 1 leave every GPU to dp), the
 * first layout with a dp it can take names the rule that really stands in
 * the way (a stage count the layers cannot fill, a tp beyond the node). */
static void why_none_valid(const search_t *s, const mesh_alloc_t *a, mesh_error_t *e)
{
    long world = mesh_world(a);
    mesh_layout_t l = s->has_invalid ? s->invalid : mesh_representative(s->pins, world);
    int batch =
        s->has_invalid && s->has_telling && s->m->global_batch % ((long)l.micro_batch * l.dp) != 0;
    if (batch)
        l = s->telling;
    if (mesh_layout_check(s->m, s->a, &l, e) == 0) {
        snprintf(e->msg, sizeof(e->msg), "the pinned fields exclude every layout");
        return;
    }
    if (batch)
        mesh_error_prefix(e,
                          "every split of the %ld GPUs whose dp divides global_batch %ld breaks "
                          "another rule, as tp=%d,cp=%d,pp=%d,dp=%d",
                          world, s->m->global_batch, l.tp, l.cp, l.pp, l.dp);
}

/* The error of a search s that found no valid layout, for model m on
 * allocation a (what the caller gave), with the inputs it ran on.  -1. */
static int no_valid_layout(const search_t *s, const mesh_model_t *m, const mesh_alloc_t *a,
                           mesh_error_t *err)
{
    mesh_error_t e;
    why_none_valid(s, a, &e);
    return mesh_error_set(err, "no valid layout for %s on %d x %d GPUs: %s", m->name, a->nodes,
                          a->gpus_per_node, e.msg);
}

static int choose_known(const mesh_model_t *m, const mesh_alloc_t *a, const mesh_layout_t *pins,
                        const mesh_assumptions_t *assume, double deadline,
                        const layout_memo_t *found, mesh_candidate_t *out, mesh_error_t *err);

/* The assumptions of a tight plan's alternative: the plan's, with
 * MESH_PLAN_ROOM of the usable memory left free as headroom. */
static mesh_assumptions_t with_room(const mesh_assumptions_t *plan)
{
    mesh_assumptions_t room = *plan;
    room.headroom = MESH_PLAN_ROOM;
    return room;
}

/* A tight plan's alternative: the choice with MESH_PLAN_ROOM of the
 * plan's usable memory left free (more headroom), from the caller's inputs
 * m, a and pins, so that it is the plan a user asking for that headroom
 * gets.  found: what the plan's search found of the layouts it evaluated,
 * which holds with less memory where it is too large or still fits. */
static void tight(mesh_plan_t *p, const mesh_model_t *m, const mesh_alloc_t *a,
                  const mesh_layout_t *pins, layout_memo_t *found)
{
    /* against the memory before any headroom: a plan that leaves what was
     * asked is not tight, however close it comes to that */
    double usable = p->best.memory.capacity / (1 - p->assume.headroom);
    if (p->best.memory.total <= MESH_PLAN_FULL * usable)
        return;
    p->tight = 1;
    mesh_assumptions_t room = with_room(&p->assume);
    /* the plan had less headroom (it would not be tight with as much), so
     * what its search found holds with this one's less memory */
    if (mesh_memo_index(found) < 0)
        found = NULL;
    if (choose_known(m, a, pins, &room, 0, found, &p->roomier, NULL) == MESH_CHOICE_FITS) {
        p->has_roomier = 1;
        p->roomier.memory.capacity = usable;
    }
}

static mesh_plan_t *plan_create(const mesh_model_t *m, const mesh_alloc_t *a,
                                const mesh_layout_t *pins, const mesh_assumptions_t *assume,
                                mesh_error_t *err)
{
    mesh_assumptions_t as;
    default_assumptions(assume, &as);
    if (check_inputs(m, a, pins, &as, err) < 0)
        return NULL;
    mesh_plan_t *p = calloc(1, sizeof(*p));
    if (!p)
        return mesh_error_set(err, "out of memory"), NULL;
    p->assume = as;
    (void)plan_inputs(m, a, pins, &p->model, &p->alloc, &p->pins, &p->assume);

    search_t s;
    layout_memo_t found = {0};
    mesh_search_init(&s, &p->assume, &p->model, &p->alloc, &p->pins, 0);
    s.record = &found;
    mesh_assumptions_t room = with_room(&p->assume); /* what tight() searches with */
    s.record_below = mesh_policy_usable(&room, &p->alloc.gpu);
    mesh_search_run(&s);
    p->evaluated = s.evaluated;
    if (s.oom || s.valid == 0 || s.halted) {
        if (s.oom)
            mesh_error_set(err, "out of memory while planning");
        else if (s.halted) /* its choice and its records are partial */
            mesh_error_set(err, "planning stopped at its work budget of %ld units", s.work->limit);
        else
            no_valid_layout(&s, m, a, err);
        free(s.fits);
        mesh_memo_free(&found);
        free(p);
        return NULL;
    }
    if (s.n_fits > 0) {
        double roomy_below;
        choose(p, &s, &roomy_below);
        for (int f = 0; f < (int)mesh_family_of(&p->best.layout); f++)
            mesh_explain_family(p, (mesh_family_t)f, &s.fam[f]);
        mesh_explain_near_tie(p, &s, roomy_below);
        if (p->best.layout.ep > 0)
            mesh_explain_experts(p);
        tight(p, m, a, pins, &found);
    } else {
        p->best = s.closest;
        mesh_cost_estimate(&p->model, &p->best.layout, &p->alloc, &p->best.cost);
        mesh_reason_t *r = mesh_add_reason(p, MESH_REASON_NO_FIT, mesh_family_of(&p->best.layout));
        if (r) /* the first reason: always */
            r->candidate = p->best;
        for (int f = 0; f < MESH_FAMILY_COUNT; f++)
            if (s.fam[f].valid > 0)
                mesh_explain_family(p, (mesh_family_t)f, &s.fam[f]);
        mesh_advise(p);
    }
    free(s.fits);
    mesh_memo_free(&found);
    mesh_render_lines(p);
    digest(p);
    return p;
}

/* The plan, and the work units it cost, counted as the controller's budget
 * counts them whether a budget limits them or not (plan --json shows them). */
mesh_plan_t *mesh_plan_create(const mesh_model_t *m, const mesh_alloc_t *a,
                              const mesh_layout_t *pins, const mesh_assumptions_t *assume,
                              mesh_error_t *err)
{
    mesh_work_t counter, *w = mesh_work_counted(&counter);
    long before = w->spent;
    mesh_plan_t *p = plan_create(m, a, pins, assume, err);
    if (p)
        p->work = w->spent - before;
    mesh_work_uncount(&counter);
    return p;
}

int mesh_plan_choose(const mesh_model_t *m, const mesh_alloc_t *a, const mesh_layout_t *pins,
                     const mesh_assumptions_t *assume, double deadline, mesh_candidate_t *out,
                     mesh_error_t *err)
{
    return choose_known(m, a, pins, assume, deadline, NULL, out, err);
}

/* mesh_plan_choose, taking from found (NULL: none), what a search of the
 * same inputs with at least this one's memory found, the layouts it
 * need not price again (prune.c). */
static int choose_known(const mesh_model_t *m, const mesh_alloc_t *a, const mesh_layout_t *pins,
                        const mesh_assumptions_t *assume, double deadline,
                        const layout_memo_t *found, mesh_candidate_t *out, mesh_error_t *err)
{
    plan_in_t in;
    if (checked_inputs(m, a, pins, assume, &in, err) < 0)
        return -1;
    search_t s;
    mesh_search_init(&s, &in.as, &in.model, &in.alloc, &in.pin, 0);
    s.known = found;
    s.choice_only = 1;
    s.deadline = deadline > 0 ? deadline : 0;
    s.memo = calloc(1, sizeof(*s.memo));
    if (s.memo)
        mesh_search_run(&s);
    int rc = s.deadline <= 0 ? MESH_CHOICE_NONE : s.fitting ? MESH_CHOICE_LATE : MESH_CHOICE_SLOWER;
    double roomy_below;
    if (s.oom || !s.memo) {
        rc = mesh_error_set(err, "out of memory while planning");
    } else if (s.valid == 0 && s.skipped == 0) {
        /* no layout is valid: mesh_plan_create's error, as it words it
         * (err NULL: not wanted) */
        if (err)
            mesh_plan_destroy(mesh_plan_create(m, a, pins, assume, err));
        rc = -1;
    } else if (s.n_fits > 0 && (s.deadline <= 0 || s.fastest <= s.deadline)) {
        *out = *mesh_near_tie_choice(&s, &roomy_below);
        rc = MESH_CHOICE_FITS;
    }
    free(s.fits);
    free(s.memo);
    return rc;
}

/* The first-fit search of in (mesh_plan_any_fits): 1 if some layout
 * fits; 0 if a layout it tries is valid, but none fits; MESH_FIT_UNTOLD if
 * none it tries is valid (it counts only what it tries: whether any layout
 * is valid, mesh_plan_fit_status's second search says: any_valid). */
static int first_fit(const plan_in_t *in)
{
    if (in->fits)
        return 1;
    search_t s;
    mesh_search_init(&s, &in->as, &in->model, &in->alloc, &in->pin, 1);
    mesh_search_run(&s);
    return s.found || s.valid > 0 ? s.found : MESH_FIT_UNTOLD;
}

int mesh_plan_any_fits(const mesh_model_t *m, const mesh_alloc_t *a, const mesh_layout_t *pins,
                       const mesh_assumptions_t *assume)
{
    /* the plan's own inputs (its framework, headroom, dispatcher and what
     * the GPU rules out), so that a yes here is the plan's yes; the
     * first-fit search leaves out only layouts that need more memory than
     * one it tries (larger micro-batches, interleaving, no recomputation
     * and the weaker recomputations), so its answer is the plan's */
    plan_in_t in;
    mesh_error_t err;
    return checked_inputs(m, a, pins, assume, &in, &err) == 0 && first_fit(&in) == 1;
}

int mesh_plan_fit_first(const mesh_model_t *m, const mesh_alloc_t *a, const mesh_layout_t *pins,
                        const mesh_assumptions_t *assume, mesh_error_t *err)
{
    plan_in_t in;
    return checked_inputs(m, a, pins, assume, &in, err) < 0 ? -2 : first_fit(&in);
}

/* The search of in that keeps the invalid layouts: 0 if one is valid; -1
 * with err set to why none is; -2 with err set when memory runs out. */
static int any_valid(const plan_in_t *in, const mesh_alloc_t *a, mesh_error_t *err)
{
    search_t s;
    mesh_search_init(&s, &in->as, &in->model, &in->alloc, &in->pin, 0);
    mesh_search_run(&s);
    free(s.fits);
    if (s.oom)
        return mesh_error_set(err, "out of memory while planning"), -2;
    if (s.valid > 0)
        return 0;
    why_none_valid(&s, a, err);
    return -1;
}

int mesh_plan_any_valid(const mesh_model_t *m, const mesh_alloc_t *a, const mesh_layout_t *pins,
                        const mesh_assumptions_t *assume, mesh_error_t *err)
{
    plan_in_t in;
    return checked_inputs(m, a, pins, assume, &in, err) < 0 ? -2 : any_valid(&in, a, err);
}

int mesh_plan_fit_status(const mesh_model_t *m, const mesh_alloc_t *a, const mesh_layout_t *pins,
                         const mesh_assumptions_t *assume, mesh_error_t *err)
{
    plan_in_t in;
    if (checked_inputs(m, a, pins, assume, &in, err) < 0)
        return -2;
    int rc = first_fit(&in);
    return rc == MESH_FIT_UNTOLD ? any_valid(&in, a, err) : rc;
}

void mesh_plan_destroy(mesh_plan_t *p)
{
    free(p);
}

int mesh_plan_fits(const mesh_plan_t *p)
{
    return p->fits;
}

const mesh_candidate_t *mesh_plan_best(const mesh_plan_t *p)
{
    return &p->best;
}

int mesh_plan_alternative_count(const mesh_plan_t *p)
{
    return p->n_alts;
}

const mesh_candidate_t *mesh_plan_alternative(const mesh_plan_t *p, int i)
{
    return i >= 0 && i < p->n_alts ? &p->alts[i] : NULL;
}

int mesh_plan_reason_count(const mesh_plan_t *p)
{
    return p->n_reasons;
}

const char *mesh_plan_reason(const mesh_plan_t *p, int i)
{
    return i >= 0 && i < p->n_reasons ? p->reason_lines[i] : NULL;
}

const mesh_reason_t *mesh_plan_reason_record(const mesh_plan_t *p, int i)
{
    return i >= 0 && i < p->n_reasons ? &p->reasons[i] : NULL;
}

int mesh_plan_tight(const mesh_plan_t *p, const mesh_candidate_t **roomier)
{
    if (roomier)
        *roomier = p->tight && p->has_roomier ? &p->roomier : NULL;
    return p->tight;
}

const mesh_reason_t *mesh_plan_near_tie(const mesh_plan_t *p)
{
    return p->has_near_tie ? &p->near_tie : NULL;
}

long mesh_plan_work(const mesh_plan_t *p)
{
    return p->work;
}

int mesh_plan_advice_count(const mesh_plan_t *p)
{
    return p->n_advice;
}

const char *mesh_plan_advice(const mesh_plan_t *p, int i)
{
    return i >= 0 && i < p->n_advice ? p->advice_lines[i] : NULL;
}

const mesh_advice_t *mesh_plan_advice_record(const mesh_plan_t *p, int i)
{
    return i >= 0 && i < p->n_advice ? &p->advice[i] : NULL;
}

int mesh_plan_halted(const mesh_plan_t *p)
{
    return p->halted;
}

long mesh_plan_evaluated(const mesh_plan_t *p)
{
    return p->evaluated;
}

const mesh_model_t *mesh_plan_model(const mesh_plan_t *p)
{
    return &p->model;
}

const mesh_alloc_t *mesh_plan_alloc(const mesh_plan_t *p)
{
    return &p->alloc;
}

const mesh_layout_t *mesh_plan_pins_of(const mesh_plan_t *p)
{
    return &p->pins;
}

const mesh_assumptions_t *mesh_plan_assumptions(const mesh_plan_t *p)
{
    return &p->assume;
}

const char *mesh_plan_near_tie_line(const mesh_plan_t *p)
{
    return p->has_near_tie ? p->near_tie_line : NULL;
}

const mesh_calib_gpu_t *mesh_plan_calibration(const mesh_plan_t *p)
{
    return p->alloc.gpu.cal_compute > 0 ? mesh_calib_find(&p->assume.calibration, p->alloc.gpu.name)
                                        : NULL;
}

const char *mesh_plan_digest(const mesh_plan_t *p)
{
    return p->digest;
}
