/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sizing (lib/size.c) and the run-time estimate: the table, each goal's
 * choice, the choice the controller's pruned search makes agreeing with
 * the whole table's, the partition bound, and the budget keys.
 */
#include <math.h>

#include "testutil.h"

static mesh_size_t *size_of(const char *preset, int lo, int hi, mesh_size_goal_t goal,
                            unsigned flags)
{
    mesh_model_t m = test_preset(preset);
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    mesh_error_t err;
    mesh_size_t *s = mesh_size_create(&m, &a, lo, hi, NULL, NULL, goal, flags, &err);
    if (!s)
        fail_msg("%s", err.msg);
    return s;
}

/* Every row of the table is the plan of its own count. */
static void size__rows_are_the_plans_of_their_counts(void **state)
{
    (void)state;
    mesh_size_t *s = size_of("llama3-70b", 1, 6, MESH_SIZE_MIN, MESH_SIZE_TABLE);
    assert_int_equal(s->n_rows, 6);
    mesh_model_t m = test_preset("llama3-70b");
    for (int i = 0; i < s->n_rows; i++) {
        const mesh_size_row_t *r = &s->rows[i];
        assert_int_equal(r->nodes, 1 + i);
        mesh_alloc_t a = test_alloc("H100-SXM", r->nodes, 8);
        mesh_plan_t *p = test_plan(&m, &a, "auto");
        assert_int_equal(r->fits, mesh_plan_fits(p));
        if (r->fits) {
            char x[MESH_LAYOUT_STR_MAX], y[MESH_LAYOUT_STR_MAX];
            assert_string_equal(mesh_layout_format(&r->best.layout, x, sizeof(x)),
                                mesh_layout_format(&mesh_plan_best(p)->layout, y, sizeof(y)));
            assert_true(r->best.cost.step_seconds == mesh_plan_best(p)->cost.step_seconds);
            assert_true(fabs(r->tokens_per_gpu_hour -
                             r->best.cost.tokens_per_sec * 3600 / (8.0 * r->nodes)) < 1e-6);
        }
        mesh_plan_destroy(p);
    }
    mesh_size_destroy(s);
}

/* The choice of each goal, by the definition, over the whole table. */
static int expected(const mesh_size_t *s)
{
    int best = -1;
    for (int i = 0; i < s->n_rows; i++) {
        const mesh_size_row_t *r = &s->rows[i];
        if (r->fits != 1)
            continue;
        if (s->goal == MESH_SIZE_MIN)
            return i;
        double v =
            s->goal == MESH_SIZE_FASTEST ? 1 / r->best.cost.step_seconds : r->tokens_per_gpu_hour;
        double b = best < 0                       ? 0
                   : s->goal == MESH_SIZE_FASTEST ? 1 / s->rows[best].best.cost.step_seconds
                                                  : s->rows[best].tokens_per_gpu_hour;
        if (v > b)
            best = i;
    }
    if (best < 0)
        return -1;
    /* ties (within MESH_PLAN_TIE of the best) go to the fewest nodes */
    for (int i = 0; i < best; i++) {
        const mesh_size_row_t *r = &s->rows[i], *b = &s->rows[best];
        if (r->fits == 1 &&
            (s->goal == MESH_SIZE_FASTEST
                 ? r->best.cost.step_seconds <= b->best.cost.step_seconds * (1 + MESH_PLAN_TIE)
                 : r->tokens_per_gpu_hour >= b->tokens_per_gpu_hour * (1 - MESH_PLAN_TIE)))
            return i;
    }
    return best;
}

static void size__each_goal_picks_by_its_definition(void **state)
{
    (void)state;
    const char *presets[] = {"llama3-8b", "llama3-70b", "llama3.1-405b"};
    for (int p = 0; p < 3; p++)
        for (int g = MESH_SIZE_MIN; g <= MESH_SIZE_EFFICIENT; g++) {
            mesh_size_t *s = size_of(presets[p], 1, 24, (mesh_size_goal_t)g, MESH_SIZE_TABLE);
            assert_int_equal(s->goal, g);
            assert_int_equal(s->chosen, expected(s));
            assert_true(s->chosen >= 0);
            char nodes[16];
            snprintf(nodes, sizeof(nodes), "%d node", s->rows[s->chosen].nodes);
            assert_non_null(strstr(s->reason, nodes));
            mesh_size_destroy(s);
        }
}

/* The goals differ where they should: 405B on 1-64 nodes. */
static void size__goals_disagree_on_405b(void **state)
{
    (void)state;
    int chosen[3];
    for (int g = MESH_SIZE_MIN; g <= MESH_SIZE_EFFICIENT; g++) {
        mesh_size_t *s = size_of("llama3.1-405b", 1, 64, (mesh_size_goal_t)g, 0);
        chosen[g] = s->rows[s->chosen].nodes;
        mesh_size_destroy(s);
    }
    /* 405B's states need more than one node; the fewest that fit is not
     * the fastest */
    assert_true(chosen[MESH_SIZE_MIN] > 1);
    assert_true(chosen[MESH_SIZE_MIN] < chosen[MESH_SIZE_FASTEST]);
    assert_true(chosen[MESH_SIZE_EFFICIENT] >= chosen[MESH_SIZE_MIN]);
}

/* The controller's search (flags 0) plans less but chooses the same. */
static void size__pruned_search_chooses_as_the_table(void **state)
{
    (void)state;
    const char *presets[] = {"llama3-8b", "llama3-70b", "llama3.1-405b", "llama2-7b"};
    const int his[] = {64, 27, 23}; /* 70B on 1-27: the fastest is not the last */
    for (int p = 0; p < 4 * 3; p++)
        for (int g = MESH_SIZE_MIN; g <= MESH_SIZE_EFFICIENT; g++) {
            mesh_size_goal_t goal = (mesh_size_goal_t)g;
            mesh_size_t *t = size_of(presets[p % 4], 1, his[p / 4], goal, MESH_SIZE_TABLE);
            mesh_size_t *s = size_of(presets[p % 4], 1, his[p / 4], goal, 0);
            assert_int_equal(s->chosen, t->chosen);
            assert_string_equal(s->reason, t->reason);
            int skipped = 0;
            for (int i = 0; i < s->n_rows; i++) {
                assert_true(t->rows[i].fits >= 0);
                if (s->rows[i].fits < 0)
                    skipped++;
                else
                    assert_int_equal(s->rows[i].fits, t->rows[i].fits);
            }
            if (g == MESH_SIZE_MIN) /* everything past the first fit */
                assert_int_equal(skipped, s->n_rows - 1 - s->chosen);
            mesh_size_destroy(s);
            mesh_size_destroy(t);
        }
}

/* Within MESH_PLAN_TIE, fewer nodes: Llama 2 7B is 0.2% more efficient on
 * 6 nodes than on 5 (and 70B 0.7% faster on 24 than on 26). */
static void size__ties_go_to_fewer_nodes(void **state)
{
    (void)state;
    mesh_size_t *s = size_of("llama2-7b", 5, 6, MESH_SIZE_EFFICIENT, MESH_SIZE_TABLE);
    assert_true(s->rows[1].tokens_per_gpu_hour > s->rows[0].tokens_per_gpu_hour);
    assert_true(s->rows[0].tokens_per_gpu_hour >
                s->rows[1].tokens_per_gpu_hour * (1 - MESH_PLAN_TIE));
    assert_int_equal(s->rows[s->chosen].nodes, 5);
    mesh_size_destroy(s);
    s = size_of("llama3-70b", 24, 26, MESH_SIZE_FASTEST, MESH_SIZE_TABLE);
    assert_int_equal(s->rows[s->chosen].nodes, 24);
    mesh_size_destroy(s);
}

/* Nothing fits: no choice, and how many nodes would. */
static void size__nothing_fits_says_what_would(void **state)
{
    (void)state;
    mesh_size_t *s = size_of("llama3.1-405b", 1, 4, MESH_SIZE_MIN, MESH_SIZE_TABLE);
    assert_int_equal(s->chosen, -1);
    for (int i = 0; i < s->n_rows; i++)
        assert_int_equal(s->rows[i].fits, 0);
    assert_true(s->would_fit > 4);
    char would[32];
    snprintf(would, sizeof(would), "%d nodes would", s->would_fit);
    assert_non_null(strstr(s->reason, would));
    /* and that many do fit */
    mesh_size_t *t = size_of("llama3.1-405b", s->would_fit, s->would_fit, MESH_SIZE_MIN, 0);
    assert_int_equal(t->chosen, 0);
    mesh_size_destroy(t);
    mesh_size_destroy(s);
}

static void size__bad_input(void **state)
{
    mesh_error_t err;
    mesh_model_t m = test_preset("llama3-8b");
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    (void)state;
    assert_null(mesh_size_create(&m, &a, 4, 2, NULL, NULL, MESH_SIZE_MIN, 0, &err));
    assert_non_null(strstr(err.msg, "4-2 is empty"));
    assert_null(mesh_size_create(&m, &a, 0, 2, NULL, NULL, MESH_SIZE_MIN, 0, &err));
    assert_null(
        mesh_size_create(&m, &a, 1, MESH_SIZE_ROWS_MAX + 1, NULL, NULL, MESH_SIZE_MIN, 0, &err));
    assert_null(mesh_size_create(&m, &a, 1, 2, NULL, NULL, (mesh_size_goal_t)7, 0, &err));
    mesh_size_goal_t g;
    assert_int_equal(mesh_size_goal_parse("fastest", &g, &err), 0);
    assert_int_equal(g, MESH_SIZE_FASTEST);
    assert_int_equal(mesh_size_goal_parse("efficient", &g, &err), 0);
    assert_int_equal(g, MESH_SIZE_EFFICIENT);
    assert_int_equal(mesh_size_goal_parse("min", &g, &err), 0);
    assert_int_equal(g, MESH_SIZE_MIN);
    assert_int_equal(mesh_size_goal_parse("max", &g, &err), -1);
    assert_non_null(strstr(err.msg, "min, fastest or efficient"));
    assert_string_equal(mesh_size_goal_name(MESH_SIZE_EFFICIENT), "efficient");
    assert_string_equal(mesh_size_goal_name((mesh_size_goal_t)9), "?");
    mesh_size_destroy(NULL);
}

/* A partition's nodes: cut a range reaching past them, refuse one beyond. */
static void size__partition_bounds_the_range(void **state)
{
    (void)state;
    mesh_policy_t pol;
    mesh_error_t err;
    static const char yaml[] = "gpu: H100-SXM\npartitions:\n  gpu: {nodes: 16}\n";
    mesh_policy_init(&pol);
    if (mesh_policy_parse(&pol, yaml, strlen(yaml), "test.yaml", &err) < 0)
        fail_msg("%s", err.msg);
    int lo = 2, hi = 32;
    assert_int_equal(mesh_size_bound(&pol, "gpu", &lo, &hi, &err), 0);
    assert_int_equal(lo, 2);
    assert_int_equal(hi, 16);
    lo = 20, hi = 32;
    assert_int_equal(mesh_size_bound(&pol, "gpu", &lo, &hi, &err), -1);
    assert_non_null(strstr(err.msg, "outside partition gpu, which has 16 nodes"));
    lo = 3, hi = 2;
    assert_int_equal(mesh_size_bound(&pol, "gpu", &lo, &hi, &err), -1);
    assert_non_null(strstr(err.msg, "empty"));
    /* a partition without an entry (and no default): as given */
    lo = 20, hi = 64;
    assert_int_equal(mesh_size_bound(&pol, "other", &lo, &hi, &err), 0);
    assert_int_equal(hi, 64);
    assert_int_equal(mesh_size_bound(&pol, NULL, &lo, &hi, &err), 0);
}

/* train.tokens and train.steps: the estimate, and no change to the plan. */
static void estimate__steps_times_step_seconds(void **state)
{
    (void)state;
    mesh_model_t plain = test_preset("llama3-8b");
    mesh_model_t tok = test_spec("preset: llama3-8b\ntrain: {tokens: 1e12}\n");
    mesh_model_t steps = test_spec("preset: llama3-8b\ntrain: {steps: 1000}\n");
    mesh_alloc_t a = test_alloc("H100-SXM", 2, 8);
    mesh_plan_t *p = test_plan(&plain, &a, "auto"), *q = test_plan(&tok, &a, "auto");
    const mesh_cost_t *c = &mesh_plan_best(q)->cost;
    char d1[17], d2[17];
    assert_string_equal(mesh_plan_digest(p), mesh_plan_digest(q)); /* no layout changes */
    assert_string_equal(mesh_model_digest(&plain, d1), mesh_model_digest(&tok, d2));
    mesh_estimate_t e;
    assert_int_equal(mesh_size_estimate(&plain, c, &e), 0);
    assert_int_equal(e.steps, 0);
    assert_true(e.seconds == 0);
    assert_int_equal(mesh_size_estimate(&tok, c, &e), 1);
    double per_step = (double)tok.global_batch * tok.seq_len; /* 512 * 8192 */
    assert_int_equal(e.steps, (long)ceil(1e12 / per_step));
    assert_true(e.tokens >= 1e12 && e.tokens < 1e12 + per_step);
    assert_true(fabs(e.seconds - e.steps * c->step_seconds) < 1e-6 * e.seconds);
    assert_int_equal(mesh_size_estimate(&steps, c, &e), 1);
    assert_int_equal(e.steps, 1000);
    assert_true(fabs(e.seconds - 1000 * c->step_seconds) < 1e-9 * e.seconds);
    /* MESH_ESTIMATED_SECONDS only with a budget, in whole seconds up */
    char *v = test_env_value(q, "MESH_ESTIMATED_SECONDS");
    mesh_size_estimate(&tok, c, &e);
    assert_int_equal(atol(v), (long)ceil(e.seconds));
    free(v);
    mesh_task_t t = {.master_addr = "n1", .master_port = 20000, .numa_node = -1};
    mesh_error_t err;
    mesh_env_t *env = mesh_env_create(p, &t, &err);
    for (int i = 0; i < mesh_env_count(env); i++)
        assert_string_not_equal(mesh_env_name(env, i), "MESH_ESTIMATED_SECONDS");
    mesh_env_destroy(env);
    /* the JSON and the text say it; without a budget, neither does */
    char *json = mesh_report_json(q), *text = mesh_report_text(q),
         *plain_json = mesh_report_json(p);
    const char *said[][2] = {
        {json, "\"estimated_seconds\":"}, {json, "\"steps\":"}, {text, "Estimated run "}};
    for (size_t i = 0; i < sizeof(said) / sizeof(said[0]); i++)
        assert_non_null(strstr(said[i][0], said[i][1]));
    assert_null(strstr(plain_json, "estimated_seconds"));
    char *owned[] = {json, text, plain_json};
    for (int i = 0; i < 3; i++)
        free(owned[i]);
    mesh_plan_destroy(p);
    mesh_plan_destroy(q);
}

static void estimate__budget_keys_checked(void **state)
{
    (void)state;
    mesh_spec_dirs_t d = test_dirs();
    mesh_model_t m;
    mesh_error_t err;
    static const char both[] = "preset: llama3-8b\ntrain: {tokens: 1e12, steps: 10}\n";
    assert_int_equal(mesh_spec_parse(both, strlen(both), "t.yaml", &d, &m, &err), -1);
    assert_non_null(strstr(err.msg, "train.steps"));
    static const char zero[] = "preset: llama3-8b\ntrain: {steps: 0}\n";
    assert_int_equal(mesh_spec_parse(zero, strlen(zero), "t.yaml", &d, &m, &err), -1);
    static const char neg[] = "preset: llama3-8b\ntrain: {tokens: -5}\n";
    assert_int_equal(mesh_spec_parse(neg, strlen(neg), "t.yaml", &d, &m, &err), -1);
    /* the controller's request carries the budget to the nodes */
    mesh_model_t tok = test_spec("preset: llama3-8b\ntrain: {tokens: 15e12}\n");
    mesh_layout_t pins = test_mesh("auto"), back_pins;
    char req[MESH_REQUEST_MAX];
    assert_int_equal(mesh_request_encode(&tok, &pins, req, sizeof(req), &err), 0);
    assert_non_null(strstr(req, "tokens: 15000000000000"));
    mesh_model_t back;
    assert_int_equal(mesh_request_decode(req, &back, &back_pins, &err), 0);
    assert_true(back.tokens == 15e12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(size__rows_are_the_plans_of_their_counts),
        cmocka_unit_test(size__each_goal_picks_by_its_definition),
        cmocka_unit_test(size__goals_disagree_on_405b),
        cmocka_unit_test(size__pruned_search_chooses_as_the_table),
        cmocka_unit_test(size__ties_go_to_fewer_nodes),
        cmocka_unit_test(size__nothing_fits_says_what_would),
        cmocka_unit_test(size__bad_input),
        cmocka_unit_test(size__partition_bounds_the_range),
        cmocka_unit_test(estimate__steps_times_step_seconds),
        cmocka_unit_test(estimate__budget_keys_checked),
    };
    return cmocka_run_group_tests_name("size", tests, NULL, NULL);
}
