/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The planner on mixtures of experts, latent attention and MTP layers; and a plan gives back
 * all its memory.
 */
#include <math.h>

#include "internal.h" /* MoE internals */
#include "planner.h"  /* the search's memo */
#include "moeutil.h"
#include "planutil.h"
#include "testutil.h"

/* ---- mixture of experts, MLA and MTP ---- */

/* The planner's one-line errors for the ep a user pins (issue 14: a wrong
 * ep, not dividing the experts or larger than tp*cp*dp), and for pins that
 * leave nothing to try. */
/* One replica takes the optimizer offload too: the lever needs ZeRO-1,
 * which over one replica shards nothing but is what Megatron-LM's
 * --optimizer-cpu-offload runs under.  Llama 3 70B at tp 8 on one node
 * fits with it (2 TiB of host memory), and without host memory the same
 * pins are refused. */
static void plan__offload_over_one_replica(void **state)
{
    (void)state;
    mesh_model_t m = test_preset("llama3-70b");
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    a.host_memory = 2199023255552.0;
    mesh_plan_t *p = test_plan(&m, &a, "tp=8,offload=optimizer");
    assert_true(mesh_plan_fits(p));
    const mesh_layout_t *l = &mesh_plan_best(p)->layout;
    assert_int_equal(l->dp * l->cp, 1);
    assert_int_equal(l->zero, 1);
    assert_int_equal(l->offload, 1);
    mesh_plan_destroy(p);
    a.host_memory = 0;
    p = test_plan(&m, &a, "tp=8");
    assert_false(mesh_plan_fits(p));
    mesh_plan_destroy(p);
}

/* One replica takes ZeRO-1 for what only Megatron-LM's distributed
 * optimizer gives: the spec's 16-bit Adam moments (fp32 gradients here),
 * 2 + 4 + 4 + 4 = 14 bytes a parameter (7e9: 91.3 GiB) against ZeRO-0's
 * fp32 moments, 18; FP8 parameters without their bf16 copy
 * (--fp8-param-gather, arguments.py L1095-1097), 2 bytes of weights
 * against 4; under fp32 moments and bf16, ZeRO-0, whose 18 is the same. */
static void plan__sole_replica_takes_what_zero1_gives(void **state)
{
    (void)state;
    mesh_model_t m = seed_7b();
    m.grad_accum_dtype = MESH_PREC_FP32;
    m.optimizer_dtype = MESH_PREC_BF16;
    mesh_alloc_t a = alloc_80e9(1, 1);
    mesh_plan_t *p = test_plan(&m, &a, "auto");
    const mesh_candidate_t *c = mesh_plan_best(p);
    assert_int_equal(c->layout.zero, 1);
    assert_int_equal(c->layout.moments, MESH_PREC_BF16);
    assert_true(fabs(c->memory.weights + c->memory.grads + c->memory.optimizer - 14 * 7e9) < 1e6);
    mesh_plan_destroy(p);
    /* 5e9 parameters fit only with it: 14 bytes a parameter, 70e9 of the
     * usable 77.6e9 (ZeRO-0's 18: 90e9) */
    m.params = 5e9;
    p = test_plan(&m, &a, "auto");
    assert_true(mesh_plan_fits(p));
    assert_int_equal(mesh_plan_best(p)->layout.zero, 1);
    mesh_plan_destroy(p);
    m.params = 7e9;
    m.optimizer_dtype = MESH_PREC_FP32;
    m.precision = MESH_PREC_FP8;
    p = test_plan(&m, &a, "auto");
    c = mesh_plan_best(p);
    assert_int_equal(c->layout.zero, 1);
    assert_true(c->memory.weights < 2.1 * 7e9);
    mesh_plan_destroy(p);
    m.precision = MESH_PREC_BF16;
    p = test_plan(&m, &a, "auto");
    c = mesh_plan_best(p);
    assert_int_equal(c->layout.zero, 0);
    assert_true(fabs(c->memory.weights + c->memory.grads + c->memory.optimizer - 18 * 7e9) < 1e6);
    mesh_plan_destroy(p);
}

static void plan__wrong_ep_one_line(void **state)
{
    mesh_model_t m = test_preset("mixtral-8x7b"), d = test_preset("llama3-8b");
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    mesh_policy_t pol;
    mesh_error_t err;
    mesh_policy_init(&pol);
    static const struct {
        const mesh_model_t *m;
        const char *mesh, *want;
    } cases[] = {
        {NULL, "ep=3", "ep 3 must divide the 8 experts"},
        {NULL, "ep=8,tp=2,pp=2", "ep*etp = 8*1 is more than tp*cp*dp = 2*1*2 = 4"},
        {NULL, "ep=2,etp=16", "ep*etp = 2*16 is more than tp*cp*dp = 1*1*8 = 8"},
        /* the ep named, not the first zero the search tried with the moments */
        {NULL, "ep=8,tp=2,pp=2,moments=bf16", "ep*etp = 8*1 is more than tp*cp*dp = 2*1*2 = 4"},
        /* an etp no stage can take: the etp named, on ep 1 where ep is free */
        {NULL, "etp=3", "etp 3 must divide the experts' ffn 14336"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        mesh_layout_t pins = test_mesh(cases[i].mesh);
        mesh_plan_t *p = mesh_plan_create(&m, &a, &pins, &pol.assume, &err);
        if (p)
            fail_msg("%s planned", cases[i].mesh);
        if (!strstr(err.msg, cases[i].want) || strchr(err.msg, '\n'))
            fail_msg("%s: '%s' lacks '%s'", cases[i].mesh, err.msg, cases[i].want);
    }
    const char *dense[] = {"ep=1", "etp=1", "ep=4,etp=2"};
    for (size_t i = 0; i < sizeof(dense) / sizeof(*dense); i++) {
        mesh_layout_t pins = test_mesh(dense[i]);
        assert_null(mesh_plan_create(&d, &a, &pins, &pol.assume, &err));
        assert_non_null(strstr(err.msg, "llama3-8b has no experts"));
        assert_non_null(strstr(err.msg, "arch.moe"));
    }
    /* pins that leave the search nothing to try: explained on the layout
     * they make with neutral values elsewhere (tp, cp and pp 1, the rest
     * of the GPUs to dp where it is free) */
    static const char *const none[][2] = {
        {"dp=3", "tp*cp*pp*dp = 1*1*1*3 = 3, but the allocation has 8 GPUs"},
        {"dp=3,tp=2", "tp*cp*pp*dp = 2*1*1*3 = 6, but the allocation has 8 GPUs"},
        {"dp=16", "tp*cp*pp*dp = 1*1*1*16 = 16, but the allocation has 8 GPUs"},
    };
    for (size_t i = 0; i < sizeof(none) / sizeof(*none); i++) {
        mesh_layout_t pins = test_mesh(none[i][0]);
        assert_null(mesh_plan_create(&d, &a, &pins, &pol.assume, &err));
        if (!strstr(err.msg, none[i][1]))
            fail_msg("%s: '%s' lacks '%s'", none[i][0], err.msg, none[i][1]);
    }
    /* "auto" asks for nothing on a dense model, and plans no experts */
    mesh_plan_t *p = test_plan(&d, &a, "ep=auto");
    assert_int_equal(mesh_plan_best(p)->layout.ep, 0);
    mesh_plan_destroy(p);
}

/* The search: DeepSeek-V3 on 1,024 H100s fits with expert parallelism,
 * and says why that EP (issue 14's first "done when").  Inside a node
 * every shape needs layers recomputed or a pipeline's bubble; across
 * nodes EP 64 fits only with most layers recomputed, so the search tries
 * the largest too, EP 256, which needs none. */
static void plan__deepseek_v3_ep_explained(void **state)
{
    mesh_model_t m = test_preset("deepseek-v3");
    mesh_alloc_t a = test_alloc("H100-SXM", 128, 8);
    mesh_plan_t *p = test_plan(&m, &a, "auto");
    assert_true(mesh_plan_fits(p));
    const mesh_layout_t *l = &mesh_plan_best(p)->layout;
    assert_int_equal(l->ep, 256);
    assert_int_equal(l->recompute, MESH_RECOMPUTE_NONE);
    assert_int_equal(l->etp, 1);
    int chosen = 0, smaller = 0, larger = 0;
    for (int i = 0; i < mesh_plan_reason_count(p); i++) {
        const mesh_reason_t *r = mesh_plan_reason_record(p, i);
        if (r->kind != MESH_REASON_EXPERTS)
            continue;
        const char *line = mesh_plan_reason(p, i);
        if (r->chosen) {
            chosen++;
            assert_int_equal(r->candidate.layout.ep, l->ep);
            assert_true(r->ep_nodes > 1);
            assert_non_null(strstr(line, "all-to-all over the network"));
        } else if (r->candidate.layout.ep < l->ep) {
            smaller++;
            /* each smaller EP needs more than fits, or is slower */
            assert_true(!r->candidate.fits ||
                        r->candidate.cost.step_seconds > r->best_seconds * (1 + MESH_PLAN_TIE));
        } else {
            larger++;
        }
    }
    assert_int_equal(chosen, 1);
    assert_true(smaller >= 2 && larger == 0); /* EP 8 inside a node, EP 128 */
    /* EP 1 holds every expert on every GPU: far over */
    char *json = mesh_report_json(p);
    assert_non_null(strstr(json, "\"kind\":\"experts\""));
    assert_non_null(strstr(json, "\"ep_comm_seconds\":"));
    assert_non_null(strstr(json, "\"ep_dispatcher\":\"alltoall\""));
    assert_non_null(strstr(json, "\"active_params\":"));
    free(json);
    /* FP8: the MFU says which peak it is of, and gives the bf16 one beside it */
    char *text = mesh_report_text(p), want[96];
    const mesh_cost_t *c = &mesh_plan_best(p)->cost;
    snprintf(want, sizeof(want), "MFU %.1f%% of the FP8 peak (%.1f%% of the bf16 one)\n",
             100 * c->mfu, 100 * c->tflops_per_gpu * 1e12 / a.gpu.peak_flops);
    assert_non_null(strstr(text, want));
    /* 682.64 B with its MTP layer, the published 671.03 B without (params__moe_presets) */
    assert_non_null(strstr(text, "; 1 MTP layer (11.61 B of the parameters)\n"));
    assert_true(c->mfu > 0 && c->tflops_per_gpu * 1e12 / a.gpu.peak_flops > 1.9 * c->mfu);
    free(text);
    mesh_plan_destroy(p);
    /* Mixtral on one node: EP inside it */
    mesh_model_t mx = test_preset("mixtral-8x7b");
    mesh_alloc_t one = test_alloc("H100-SXM", 4, 8);
    p = test_plan(&mx, &one, "auto");
    assert_true(mesh_plan_fits(p));
    assert_true(mesh_plan_best(p)->layout.ep >= 2 && mesh_plan_best(p)->layout.ep <= 8);
    mesh_plan_destroy(p);
}

/* Expert counts with odd divisors (60 = 2^2*3*5): an EP that does not
 * divide a stage's ranks is no evidence that the smaller ones cannot fit,
 * so the search still reaches them and never picks worse than a pin. */
static void plan__ep_search_past_non_divisors(void **state)
{
    const char *specs[] = {
        "name: sixty\narch:\n  layers: 24\n  hidden: 2048\n  heads: 16\n  ffn: 5632\n"
        "  vocab: 151936\n  moe:\n    experts: 60\n    top_k: 4\n    ffn: 1408\n"
        "    shared_experts: 4\n    shared_ffn: 1408\ntrain:\n  seq_len: 4096\n"
        "  global_batch: 256\n",
        "name: six\narch:\n  layers: 4\n  hidden: 1024\n  heads: 8\n  ffn: 2816\n"
        "  vocab: 32000\n  moe:\n    experts: 6\n    top_k: 2\n",
    };
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
        mesh_model_t m = test_spec(specs[i]);
        mesh_plan_t *p = test_plan(&m, &a, "auto");
        /* the layout with every expert on every GPU, pinned: it fits */
        mesh_plan_t *pin = test_plan(&m, &a, "tp=1,pp=1,ep=1");
        assert_true(mesh_plan_fits(p) && mesh_plan_fits(pin));
        assert_true(mesh_plan_best(p)->cost.step_seconds <=
                    mesh_plan_best(pin)->cost.step_seconds * (1 + MESH_PLAN_TIE));
        mesh_plan_destroy(pin);
        /* and "tp=1,pp=1" alone leaves EP to the search, which finds it */
        pin = test_plan(&m, &a, "tp=1,pp=1");
        assert_true(mesh_plan_fits(pin));
        mesh_plan_destroy(pin);
        mesh_plan_destroy(p);
    }
}

/* An EP across nodes is explained against the largest EP inside one. */
static void plan__ep_across_nodes_says_why_not_inside(void **state)
{
    mesh_model_t m = test_preset("deepseek-v3");
    mesh_alloc_t a = test_alloc("H100-SXM", 64, 4);
    mesh_plan_t *p = test_plan(&m, &a, "auto");
    assert_true(mesh_plan_fits(p));
    const mesh_layout_t *l = &mesh_plan_best(p)->layout;
    assert_true((long)l->ep * l->etp > 4); /* across nodes */
    int inside = 0;
    for (int i = 0; i < mesh_plan_reason_count(p); i++) {
        const mesh_reason_t *r = mesh_plan_reason_record(p, i);
        if (r->kind == MESH_REASON_EXPERTS && !r->chosen &&
            (long)r->candidate.layout.ep * r->candidate.layout.etp == 4) {
            inside++;
            assert_non_null(strstr(mesh_plan_reason(p, i), "inside one node"));
        }
    }
    assert_int_equal(inside, 1);
    mesh_plan_destroy(p);
}

/* Across nodes the search goes past the smallest EP that fits where that
 * one needs recomputation: DeepSeek-V3 on 32 nodes of 8 H100s took EP 16
 * with every layer recomputed at tp=8,pp=4 (and EP 256 with most at pp=1,
 * 346 s), while EP 64 pinned needed only selective recomputation (312 s),
 * and the plan with 5% of the memory left free was faster than the plan. */
static void plan__ep_across_nodes_eases_recomputation(void **state)
{
    (void)state;
    mesh_model_t m = test_preset("deepseek-v3");
    mesh_alloc_t a = test_alloc("H100-SXM", 32, 8);
    mesh_plan_t *p = test_plan(&m, &a, "auto"), *pinned = test_plan(&m, &a, "ep=64");
    const mesh_candidate_t *best = mesh_plan_best(p), *roomier = NULL;
    assert_true(mesh_plan_fits(p) && mesh_plan_fits(pinned));
    assert_true(best->cost.step_seconds <= mesh_plan_best(pinned)->cost.step_seconds);
    assert_int_not_equal(best->layout.recompute, MESH_RECOMPUTE_FULL);
    if (mesh_plan_tight(p, &roomier) && roomier)
        assert_true(roomier->cost.step_seconds >= best->cost.step_seconds);
    mesh_plan_destroy(pinned);
    mesh_plan_destroy(p);
}

/* Whether a shape fits plainly (mesh_search_fits_plainly) is whether a
 * plan pinned to it fits: at micro-batch 1, without recomputation, levers
 * or TP's overlap turned off, at ZeRO-1 or none (DeepSeek-V3 on 32 H100
 * nodes: at tp=8,pp=1 EP 128 fits only with layers recomputed or ZeRO
 * beyond 1, EP 256 without). */
static void search__fits_plainly_as_pinned_plans_say(void **state)
{
    (void)state;
    mesh_model_t m = test_preset("deepseek-v3");
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    const struct {
        int nodes;
        const char *shape;
    } shapes[] = {{32, "tp=8,pp=1,dp=32,ep=128"},   {32, "tp=8,pp=1,dp=32,ep=256"},
                  {32, "tp=8,pp=4,dp=8,ep=16"},     {32, "tp=8,pp=4,dp=8,ep=64"},
                  {32, "tp=4,pp=1,dp=64,ep=64"},    {32, "tp=4,pp=4,dp=16,ep=64"},
                  {128, "tp=8,pp=1,dp=128,ep=128"}, {128, "tp=8,pp=1,dp=128,ep=256"},
                  {128, "tp=4,pp=1,dp=256,ep=64"},  {128, "tp=4,pp=1,dp=256,ep=256"}};
    int plain = 0, not_plain = 0;
    for (size_t i = 0; i < sizeof(shapes) / sizeof(*shapes); i++) {
        mesh_alloc_t a = test_alloc("H100-SXM", shapes[i].nodes, 8);
        char mesh[160];
        int want = 0;
        for (int z = 0; z <= 1 && !want; z++) {
            snprintf(
                mesh, sizeof(mesh),
                "%s,cp=1,etp=1,zero=%d,vpp=1,mb=1,recompute=none,sp=on,offload=none,moments=fp32,"
                "tp_overlap=on",
                shapes[i].shape, z);
            mesh_layout_t pins = test_mesh(mesh);
            mesh_error_t err;
            mesh_plan_t *p = mesh_plan_create(&m, &a, &pins, &pol.assume, &err);
            want = p && mesh_plan_fits(p);
            mesh_plan_destroy(p);
        }
        mesh_layout_t pins = test_mesh("auto"), shape = test_layout(mesh);
        search_t s;
        mesh_search_init(&s, &pol.assume, &m, &a, &pins, 0);
        if (mesh_search_fits_plainly(&s, &shape) != want)
            fail_msg("%s: fits plainly %d, pinned plans %d", shapes[i].shape, !want, want);
        plain += want;
        not_plain += !want;
    }
    assert_true(plain >= 1 && not_plain >= 1);
}

/* Which EPs across nodes the explanation says the search tried, as
 * search_experts tries them: DeepSeek-V3 on 32 H200 nodes at the plan's
 * tp=4,pp=1,dp=64, EP 16 is tried and fits nothing at expert TP 1, EP 32
 * is the smallest that fits and only with 59 layers recomputed, so EP 256
 * too; EP 64 and 128 between are passed over, and EP 8 is inside a node. */
static void explain__the_eps_tried_across_nodes(void **state)
{
    (void)state;
    mesh_model_t m = test_preset("deepseek-v3");
    mesh_alloc_t a = test_alloc("H200", 32, 8);
    mesh_plan_t *p = test_plan(&m, &a, "auto");
    const mesh_layout_t *l = &mesh_plan_best(p)->layout;
    assert_true(l->tp == 4 && l->pp == 1 && l->ep == 256);
    const struct {
        int ep, tried;
    } want[] = {{8, 0}, {16, 1}, {32, 1}, {64, 0}, {128, 0}, {256, 1}};
    for (size_t i = 0; i < sizeof(want) / sizeof(*want); i++)
        if (mesh_ep_tried_across(p, want[i].ep, 8) != want[i].tried)
            fail_msg("EP %d: tried %d, not %d", want[i].ep, !want[i].tried, want[i].tried);
    mesh_plan_destroy(p);
}

/* Expert TP only where EP alone fits nothing, and a pinned EP plans the
 * rest around it. */
/* TP splits the shared experts' width (their count times their ffn) as it
 * splits the dense ffn: two of 1409 are 2818 wide, which tp 2 divides and
 * tp 4 does not. */
static void layout_check__tp_divides_shared_experts_width(void **state)
{
    (void)state;
    mesh_model_t m = test_spec("name: shared\narch:\n  layers: 4\n  hidden: 1024\n  heads: 8\n"
                               "  ffn: 2816\n  vocab: 32000\n  moe:\n    experts: 8\n    top_k: 2\n"
                               "    ffn: 1408\n    shared_experts: 2\n    shared_ffn: 1409\n"
                               "train: {seq_len: 4096, global_batch: 64}\n");
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    mesh_error_t err;
    mesh_layout_t l =
        test_layout("tp=2,pp=1,dp=4,cp=1,zero=1,vpp=1,mb=1,recompute=none,sp=on,ep=4,etp=1");
    if (mesh_layout_check(&m, &a, &l, &err) != 0)
        fail_msg("tp 2 refused: %s", err.msg);
    l = test_layout("tp=4,pp=1,dp=2,cp=1,zero=1,vpp=1,mb=1,recompute=none,sp=on,ep=2,etp=1");
    assert_int_equal(mesh_layout_check(&m, &a, &l, &err), -1);
    assert_string_equal(err.msg, "tp 4 must divide the shared experts' width 2818");
}

static void plan__pinned_ep_and_etp(void **state)
{
    mesh_model_t m = test_preset("mixtral-8x7b");
    mesh_alloc_t a = test_alloc("H100-SXM", 4, 8);
    mesh_plan_t *p = test_plan(&m, &a, "ep=4");
    assert_int_equal(mesh_plan_best(p)->layout.ep, 4);
    mesh_plan_destroy(p);
    p = test_plan(&m, &a, "tp=2,ep=4,etp=2");
    assert_int_equal(mesh_plan_best(p)->layout.etp, 2);
    assert_int_equal(mesh_plan_best(p)->layout.ep, 4);
    mesh_plan_destroy(p);
    /* the yes/no of job_submit agrees with the plan */
    assert_true(mesh_plan_any_fits(&m, &a, NULL, NULL));
}

/* A plan that fits, with its environment, one that does not, and a
 * sizing over four counts give back every byte they take. */
static void plan_work(void)
{
    mesh_model_t m = test_preset("llama3-70b"), big = test_preset("llama3.1-405b");
    mesh_alloc_t a = test_alloc("H100-SXM", 8, 8), one = test_alloc("H100-SXM", 1, 8);
    mesh_plan_t *p = test_plan(&m, &a, "auto");
    assert_true(mesh_plan_fits(p));
    free(test_env_value(p, "MESH_MEGATRON_ARGS"));
    mesh_plan_destroy(p);
    p = test_plan(&big, &one, "auto");
    assert_false(mesh_plan_fits(p));
    mesh_plan_destroy(p);
    mesh_error_t err;
    mesh_size_t *s = mesh_size_create(&m, &one, 1, 4, NULL, NULL, MESH_SIZE_MIN, 0, &err);
    assert_non_null(s);
    mesh_size_destroy(s);
}

static void plan__returns_all_its_memory(void **state)
{
    (void)state;
    test_gives_back(plan_work, "planning");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plan__wrong_ep_one_line),
        cmocka_unit_test(plan__offload_over_one_replica),
        cmocka_unit_test(plan__sole_replica_takes_what_zero1_gives),
        cmocka_unit_test(plan__returns_all_its_memory),
        cmocka_unit_test(plan__deepseek_v3_ep_explained),
        cmocka_unit_test(plan__ep_search_past_non_divisors),
        cmocka_unit_test(plan__ep_across_nodes_says_why_not_inside),
        cmocka_unit_test(plan__ep_across_nodes_eases_recomputation),
        cmocka_unit_test(explain__the_eps_tried_across_nodes),
        cmocka_unit_test(search__fits_plainly_as_pinned_plans_say),
        cmocka_unit_test(plan__pinned_ep_and_etp),
        cmocka_unit_test(layout_check__tp_divides_shared_experts_width),
    };
    return cmocka_run_group_tests_name("plan_moe", tests, NULL, NULL);
}
