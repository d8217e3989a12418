/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sizing against time (lib/size.c, lib/when.c): the durations and dates a
 * user types, a deadline goal read against an injected "now", the chain
 * of jobs a partition's MaxTime cuts a run into, the MaxTime read from
 * scontrol's text, and the counts on which no layout exists told apart
 * from those on which none fits.
 */
#include "internal.h" /* MESH_ARRAY_LEN */
#include "testutil.h"

/* ---- durations, dates and MaxTime (lib/when.c) ---- */

static void when__durations_in_slurm_forms(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        long long seconds;
    } good[] = {
        {"90", 5400},      {"1:30", 90},          {"2:00:00", 7200},         {"7-00:00:00", 604800},
        {"1-12", 129600},  {"1-12:30", 131400},   {"14d", 1209600},          {"36h", 129600},
        {"90m", 5400},     {"0-0:0:1", 1},        {"100000d", 8640000000LL}, {"59:59", 3599},
        {"1:59:59", 7199}, {"1-23:59:59", 172799}}; /* 59: the last minute and second taken */
    /* none of the forms, or a field out of its range (bad); a duration, but 0
     * or over the most (range) */
    static const char *const bad[] = {
        "",     "-5",   "5:",      "1:60",   "1-24",     "abc",       "14x",  "1-2:3:4:5",
        "14 d", " 14d", "1e3",     "1.5d",   "d",        "1-",        "-1-2", "1:2:3:4",
        "1--2", "١٤d",  "1:00:60", "1-0:60", "1-0:0:60", "1234567890"};
    static const char *const range[] = {"0", "0d", "100001d"};
    mesh_error_t err;
    for (int i = 0; i < (int)(sizeof(good) / sizeof(good[0])); i++) {
        long long s = -1;
        if (mesh_parse_duration(good[i].text, "t", &s, &err) < 0)
            fail_msg("'%s': %s", good[i].text, err.msg);
        if (s != good[i].seconds)
            fail_msg("'%s' is %lld s, not %lld", good[i].text, s, good[i].seconds);
    }
    for (int i = 0; i < MESH_ARRAY_LEN(bad) + MESH_ARRAY_LEN(range); i++) {
        int is_bad = i < MESH_ARRAY_LEN(bad);
        const char *text = is_bad ? bad[i] : range[i - MESH_ARRAY_LEN(bad)];
        long long s = 42;
        if (mesh_parse_duration(text, "--x", &s, &err) == 0)
            fail_msg("'%s' read as %lld s", text, s);
        assert_int_equal(s, 42); /* left alone */
        if (!strstr(err.msg,
                    is_bad ? "' is not a duration (" : "' must be more than 0 and at most "))
            fail_msg("'%s': %s", text, err.msg);
        assert_int_equal(strncmp(err.msg, "--x: '", 6), 0);
    }
}

static void when__dates(void **state)
{
    (void)state;
    mesh_error_t err;
    long long s;
    assert_int_equal(mesh_parse_date("2026-12-24", "d", &s, &err), 0);
    assert_int_equal(s, 1798070400LL);
    assert_int_equal(mesh_parse_date("2026-12-24T18:00", "d", &s, &err), 0);
    assert_int_equal(s, 1798070400LL + 18 * 3600);
    assert_int_equal(mesh_parse_date("2026-12-24T18:00:30", "d", &s, &err), 0);
    assert_int_equal(s, 1798070400LL + 18 * 3600 + 30);
    assert_int_equal(mesh_parse_date("2024-02-29", "d", &s, &err), 0);
    assert_int_equal(s, 1709164800LL);
    assert_int_equal(mesh_parse_date("1970-01-01", "d", &s, &err), 0);
    assert_int_equal(s, 0);
    /* past the century years the calendar skips a leap day in (2100,
     * 2200: no 29 February) and the one it keeps (2000) */
    static const struct {
        const char *date;
        long long seconds;
    } far[] = {{"2100-02-28", 4107456000LL},
               {"2100-03-01", 4107542400LL},
               {"2200-03-01", 7263216000LL},
               {"2204-02-29", 7389360000LL},
               {"2000-03-01", 951868800LL}};
    for (int i = 0; i < (int)(sizeof(far) / sizeof(far[0])); i++) {
        assert_int_equal(mesh_parse_date(far[i].date, "d", &s, &err), 0);
        if (s != far[i].seconds)
            fail_msg("%s: %lld, not %lld", far[i].date, s, far[i].seconds);
    }
    static const char *const bad[] = {
        "2026-02-29",        "2026-13-01",       "2026-12-32",           "2026-12-24T24:00",
        "2026-1-05",         "2026-12-24T18",    "2026-12-24 18:00",     "1969-12-31",
        "2026-12-24T18:00Z", "2026-12-24T18:60", "2026-04-31",           "",
        "20261224",          "2026-12-24T",      "2026-12-24T18:00:00:", "12026-01-01",
        "2100-02-29"};
    for (int i = 0; i < (int)(sizeof(bad) / sizeof(bad[0])); i++) {
        s = 7;
        if (mesh_parse_date(bad[i], "--now", &s, &err) == 0)
            fail_msg("'%s' read as %lld", bad[i], s);
        assert_int_equal(s, 7);
        assert_non_null(strstr(err.msg, "--now: "));
    }
}

static void when__max_time(void **state)
{
    (void)state;
    mesh_error_t err;
    long m = -1;
    assert_int_equal(mesh_parse_max_time("UNLIMITED", "t", &m, &err), 0);
    assert_int_equal(m, 0);
    assert_int_equal(mesh_parse_max_time("infinite", "t", &m, &err), 0);
    assert_int_equal(m, 0);
    assert_int_equal(mesh_parse_max_time("2-00:00:00", "t", &m, &err), 0);
    assert_int_equal(m, 2880);
    assert_int_equal(mesh_parse_max_time("1:30", "t", &m, &err), 0); /* M:S: a part minute counts */
    assert_int_equal(m, 2);
    assert_int_equal(mesh_parse_max_time("forever", "max_time", &m, &err), -1);
    assert_non_null(strstr(err.msg, "max_time: 'forever' is not a time limit"));
    assert_int_equal(mesh_parse_max_time("0", "max_time", &m, &err), -1);
}

/* ---- a deadline goal ---- */

/* 2026-12-01T00:00 on the local clock: the "now" the tests inject */
#define NOW 1796083200LL

static void aim__parsed_against_now(void **state)
{
    (void)state;
    mesh_size_aim_t a;
    mesh_error_t err;
    assert_int_equal(mesh_size_aim_parse("by:2026-12-24", NOW, &a, &err), 0);
    assert_int_equal(a.goal, MESH_SIZE_DEADLINE);
    assert_true(a.within == 23 * 86400.0);
    assert_string_equal(a.text, "by:2026-12-24");
    assert_int_equal(mesh_size_aim_parse("by:2026-12-24T18:00", NOW, &a, &err), 0);
    assert_true(a.within == 23 * 86400.0 + 18 * 3600);
    /* a duration does not depend on now */
    assert_int_equal(mesh_size_aim_parse("by:14d", 0, &a, &err), 0);
    assert_true(a.within == 14 * 86400.0);
    assert_int_equal(mesh_size_aim_parse("by:7-00:00:00", NOW, &a, &err), 0);
    assert_true(a.within == 7 * 86400.0);
    assert_int_equal(mesh_size_aim_parse("fastest", NOW, &a, &err), 0);
    assert_int_equal(a.goal, MESH_SIZE_FASTEST);
    assert_true(a.within == 0);
    /* the past, now itself, and bad text */
    assert_int_equal(mesh_size_aim_parse("by:2026-11-30", NOW, &a, &err), -1);
    assert_non_null(strstr(err.msg, "not in the future"));
    assert_int_equal(mesh_size_aim_parse("by:2026-12-01", NOW, &a, &err), -1);
    static const char *const bad[] = {"by:",     "by",         "by:-1d",      "by:2026-02-30",
                                      "by:soon", "BY:14d",     "by:14d ",     "deadline",
                                      "by:0",    "by:1-24:00", "min,fastest", ""};
    for (int i = 0; i < (int)(sizeof(bad) / sizeof(bad[0])); i++)
        if (mesh_size_aim_parse(bad[i], NOW, &a, &err) == 0)
            fail_msg("goal '%s' accepted", bad[i]);
    char longer[200];
    memset(longer, '9', sizeof(longer) - 1);
    longer[sizeof(longer) - 1] = '\0';
    memcpy(longer, "by:", 3);
    assert_int_equal(mesh_size_aim_parse(longer, NOW, &a, &err), -1);
    assert_non_null(strstr(err.msg, "longer than"));
}

/* llama3-70b on 1..8 nodes of 8 H100s, trained for 1e11 tokens, sized for
 * a deadline `within` seconds from now. */
static mesh_size_t *deadline_sizing(double within, unsigned flags, mesh_error_t *err)
{
    mesh_model_t m = test_preset("llama3-70b");
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    mesh_size_aim_t aim = {.goal = MESH_SIZE_DEADLINE, .within = within, .text = "by:test"};
    m.tokens = 1e11;
    return mesh_size_create_aim(&m, &a, 1, 8, NULL, NULL, &aim, flags, err);
}

/* The run of row r with the default margin. */
static double run_of(const mesh_size_row_t *r)
{
    mesh_model_t m = test_preset("llama3-70b");
    mesh_estimate_t e;
    m.tokens = 1e11;
    assert_int_equal(mesh_size_estimate(&m, &r->best.cost, &e), 1);
    return e.seconds * (1 + MESH_TIME_MARGIN_DEFAULT);
}

/* The fewest nodes in time, for a deadline between each count's run and
 * the next: table and controller alike. */
static void deadline__fewest_nodes_in_time(void **state)
{
    (void)state;
    mesh_error_t err;
    mesh_size_t *t = deadline_sizing(1e12, MESH_SIZE_TABLE, &err);
    assert_non_null(t);
    int checked = 0;
    for (int k = 1; k < t->n_rows; k++) {
        const mesh_size_row_t *r = &t->rows[k], *before = NULL;
        for (int j = k - 1; j >= 0 && !before; j--)
            before = t->rows[j].fits == 1 ? &t->rows[j] : NULL;
        if (r->fits != 1 || !before || run_of(r) >= run_of(before))
            continue;
        double within = (run_of(r) + run_of(before)) / 2; /* k in time, the count before not */
        for (unsigned flags = 0; flags <= MESH_SIZE_TABLE; flags += MESH_SIZE_TABLE) {
            mesh_size_t *s = deadline_sizing(within, flags, &err);
            assert_non_null(s);
            assert_int_equal(s->rows[s->chosen].nodes, r->nodes);
            assert_int_equal(s->fastest, -1);
            assert_non_null(strstr(s->reason, "the fewest of 1-8 whose run"));
            if (!flags) /* the controller stops at the choice */
                for (int j = s->chosen + 1; j < s->n_rows; j++)
                    assert_int_equal(s->rows[j].fits, -1);
            mesh_size_destroy(s);
        }
        checked++;
    }
    assert_true(checked >= 3);
    mesh_size_destroy(t);
}

/* No count in time: nothing chosen, and the fastest named with its run. */
static void deadline__none_in_time_names_the_fastest(void **state)
{
    (void)state;
    mesh_error_t err;
    mesh_size_t *s = deadline_sizing(86400, 0, &err);
    assert_non_null(s);
    assert_int_equal(s->chosen, -1);
    assert_int_equal(s->rows[s->fastest].nodes, 8);
    for (int i = 0; i < s->n_rows; i++)
        assert_true(s->rows[i].fits != 1 || run_of(&s->rows[i]) >= run_of(&s->rows[s->fastest]));
    char want[128];
    snprintf(want, sizeof(want), "the fastest, 8 nodes, runs %.1f d",
             run_of(&s->rows[s->fastest]) / 86400);
    if (!strstr(s->reason, want))
        fail_msg("'%s' does not say '%s'", s->reason, want);
    assert_non_null(strstr(s->reason, "no count of 1-8 nodes ends by:test (24.0 h from now)"));
    mesh_size_destroy(s);
    /* no budget, no deadline */
    mesh_model_t m = test_preset("llama3-70b");
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    mesh_size_aim_t aim = {.goal = MESH_SIZE_DEADLINE, .within = 1e6, .text = "by:x"};
    m.tokens = 0;
    m.steps = 0;
    assert_null(mesh_size_create_aim(&m, &a, 1, 2, NULL, NULL, &aim, 0, &err));
    assert_non_null(strstr(err.msg, "train.tokens or train.steps"));
    m.tokens = 1e11;
    aim.within = 0;
    assert_null(mesh_size_create_aim(&m, &a, 1, 2, NULL, NULL, &aim, 0, &err));
    assert_null(mesh_size_create(&m, &a, 1, 2, NULL, NULL, MESH_SIZE_DEADLINE, 0, &err));
}

/* ---- MaxTime: chained jobs ---- */

static void chain__max_time_cuts_the_run(void **state)
{
    (void)state;
    mesh_estimate_t e = {.steps = 1000, .seconds = 100 * 3600.0};
    mesh_chain_t c;
    char buf[512];
    /* 100 h + 15% = 6900 min; 2 days a job: 3 jobs of 2300 min */
    assert_int_equal(mesh_size_chain(&e, 0.15, 2880, &c), 3);
    assert_int_equal(c.need, 6900);
    assert_int_equal(c.minutes, 2300);
    mesh_size_chain_recipe(&c, 4, "run", "job.sh", buf, sizeof(buf));
    assert_string_equal(buf, "for i in $(seq 3); do sbatch --job-name=run --dependency=singleton "
                             "--time=1-14:20:00 -N 4 job.sh; done");
    /* exactly the limit: one job; no limit: one job */
    assert_int_equal(mesh_size_chain(&e, 0.15, 6900, &c), 1);
    assert_int_equal(c.minutes, 6900);
    assert_int_equal(mesh_size_chain(&e, 0.15, 0, &c), 1);
    mesh_size_chain_recipe(&c, 4, "run", "job.sh", buf, sizeof(buf));
    assert_string_equal(buf, "sbatch --job-name=run --time=4-19:00:00 -N 4 job.sh");
    assert_int_equal(mesh_size_chain(&e, 0.15, 6899, &c), 2);
    assert_int_equal(c.minutes, 3450);
    assert_true(c.minutes * c.jobs >= c.need && c.minutes <= 6899);
}

static const char scontrol[] =
    "PartitionName=gpu\n"
    "   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL\n"
    "   Default=YES QoS=N/A DefaultTime=NONE MaxNodes=UNLIMITED MaxTime=2-00:00:00 MinNodes=0\n"
    "   Nodes=gpu[001-016] State=UP TotalCPUs=1024 TotalNodes=16\n"
    "\n"
    "PartitionName=long\n"
    "   Default=NO MaxTime=UNLIMITED\n"
    "PartitionName=short MaxTime=30\n";

static void partition_info__max_time_of_the_named(void **state)
{
    (void)state;
    mesh_error_t err;
    long m = -1;
    assert_int_equal(mesh_size_max_time_parse(scontrol, "gpu", &m, &err), 0);
    assert_int_equal(m, 2880);
    assert_int_equal(mesh_size_max_time_parse(scontrol, "long", &m, &err), 0);
    assert_int_equal(m, 0);
    assert_int_equal(mesh_size_max_time_parse(scontrol, "short", &m, &err), 0);
    assert_int_equal(m, 30);
    assert_int_equal(mesh_size_max_time_parse(scontrol, "short,gpu", &m, &err), 0); /* its first */
    assert_int_equal(m, 30);
    assert_int_equal(mesh_size_max_time_parse(scontrol, NULL, &m, &err), 0); /* Default=YES */
    assert_int_equal(m, 2880);
    assert_int_equal(mesh_size_max_time_parse("PartitionName=x MaxTime=1-00:00:00", "", &m, &err),
                     0); /* the only one */
    assert_int_equal(m, 1440);
    static const struct {
        const char *text, *name, *says;
    } bad[] = {
        {scontrol, "nope", "partition nope is not in it (3 partitions)"},
        {scontrol, "gp,gpu", "partition gp is not in it (3 partitions)"}, /* no prefix */
        {"PartitionName=a MaxTime=1\nPartitionName=b MaxTime=2\n", NULL, "no single default"},
        {"PartitionName=a Default=YES\nPartitionName=b Default=YES\n", NULL, "no single default"},
        {"PartitionName=a State=UP\n", "a", "partition a gives no MaxTime="},
        {"PartitionName=a MaxTime=soon\n", "a", "partition a MaxTime: 'soon' is not a time limit"},
        {"PartitionName=a MaxTime=\n", "a", "is not a time limit"},
        {"PartitionName=a MaxTime=1\x1b[2J\n", "a", "control character"},
        {"PartitionName=a\x01 MaxTime=1\n", "a", "control character"},
        {"MaxTime=1\n", NULL, "no PartitionName= record"},
        {"", "a", "no PartitionName= record"},
        {"PartitionName= MaxTime=1\n", NULL, "PartitionName= is empty"},
        {"PartitionName=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
         NULL, "longer than"},
        {"PartitionName=a MaxTime=11111111111111111111111111111111111111111111111111111\n", "a",
         "longer than"},
    };
    for (int i = 0; i < (int)(sizeof(bad) / sizeof(bad[0])); i++) {
        m = 99;
        assert_int_equal(mesh_size_max_time_parse(bad[i].text, bad[i].name, &m, &err), -1);
        if (!strstr(err.msg, bad[i].says))
            fail_msg("case %d: '%s' does not say '%s'", i, err.msg, bad[i].says);
        assert_int_equal(m, 99);
    }
}

/* ---- counts without a layout ---- */

/* 19, 23 and 25 nodes of 8 GPUs have no layout of llama3-70b (80 layers,
 * global batch 512): their prime factor goes to pp, which leaves a stage
 * empty; 1 and 2 nodes have layouts, none of which fits.  The table says
 * why; the controller's sizing (no table), whose choice needs no reason,
 * does not ask. */
static void no_layout__rows_say_why(void **state)
{
    (void)state;
    mesh_model_t m = test_preset("llama3-70b");
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    mesh_error_t err;
    for (unsigned flags = 0; flags <= MESH_SIZE_TABLE; flags += MESH_SIZE_TABLE) {
        mesh_size_t *s =
            mesh_size_create(&m, &a, 16, 26, NULL, NULL, MESH_SIZE_FASTEST, flags, &err);
        assert_non_null(s);
        for (int i = 0; i < s->n_rows; i++) {
            const mesh_size_row_t *r = &s->rows[i];
            int prime = r->nodes == 19 || r->nodes == 23 || r->nodes == 25;
            if (!flags && r->fits < 0)
                continue;
            assert_int_equal(r->fits == 0, prime);
            assert_int_equal(r->no_layout, prime && !flags ? -1 : prime);
            if (!prime) {
                assert_string_equal(r->why, "");
                continue;
            }
            if (!flags) {
                assert_non_null(strstr(r->why, "not asked whether any layout is"));
                continue;
            }
            char want[512];
            int q = (80 + r->nodes - 1) / r->nodes; /* each middle stage's layers */
            snprintf(want, sizeof(want),
                     "no layout: %d nodes x 8 GPUs = %d GPUs: every split of the %d GPUs whose dp "
                     "divides global_batch 512 breaks another rule, as tp=1,cp=1,pp=%d,dp=8: pp "
                     "%d cannot split 80 layers: %d middle stages of %d (80/%d rounded up) "
                     "take %d, more than the 78 left after one each for the first and last; pp "
                     "%d, the largest below, splits them",
                     r->nodes, 8 * r->nodes, 8 * r->nodes, r->nodes, r->nodes, r->nodes - 2, q,
                     r->nodes, q * (r->nodes - 2), r->nodes == 19 ? 17 : 21);
            assert_string_equal(r->why, want);
        }
        mesh_size_destroy(s);
    }
    /* a prime batch, which no micro-batch the search tries splits but one
     * of a single sample: the rule named is still the one in the way, not
     * the batch */
    mesh_model_t odd = m;
    odd.global_batch = 1009;
    mesh_size_t *s = mesh_size_create(&odd, &a, 19, 19, NULL, NULL, MESH_SIZE_MIN, 0, &err);
    assert_non_null(s);
    assert_string_equal(s->rows[0].why,
                        "no layout: 19 nodes x 8 GPUs = 152 GPUs: every split of the 152 GPUs "
                        "whose dp divides global_batch 1009 breaks another rule, as "
                        "tp=1,cp=2,pp=76,dp=1: pp 76 cannot split 80 layers: 74 middle stages "
                        "of 2 (80/76 rounded up) take 148, more than the 78 left after one each "
                        "for the first and last; pp 41, the largest below, splits them");
    mesh_size_destroy(s);
    s = mesh_size_create(&m, &a, 1, 3, NULL, NULL, MESH_SIZE_MIN, MESH_SIZE_TABLE, &err);
    assert_non_null(s);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(s->rows[i].fits, 0);
        assert_int_equal(s->rows[i].no_layout, 0);
        assert_non_null(strstr(s->rows[i].why, "layouts exist, but none fits in memory"));
    }
    mesh_size_destroy(s);
    /* only counts without a layout: said so, no error */
    s = mesh_size_create(&m, &a, 19, 19, NULL, NULL, MESH_SIZE_MIN, 0, &err);
    assert_non_null(s);
    assert_int_equal(s->chosen, -1);
    assert_string_equal(s->reason,
                        "no count of 19-19 nodes has a valid layout (each count says why)");
    mesh_size_destroy(s);
    /* the plan's error names the same rule, not a dp of every GPU */
    mesh_alloc_t on = test_alloc("H100-SXM", 19, 8);
    assert_null(mesh_plan_create(&m, &on, NULL, NULL, &err));
    assert_non_null(strstr(err.msg, "pp 19 cannot split 80 layers"));
    assert_null(strstr(err.msg, "dp 152"));
    assert_int_equal(mesh_plan_fit_status(&m, &on, NULL, NULL, &err), -1);
    on.nodes = 1;
    assert_int_equal(mesh_plan_fit_status(&m, &on, NULL, NULL, &err), 0);
    on.nodes = 16;
    assert_int_equal(mesh_plan_fit_status(&m, &on, NULL, NULL, &err), 1);
    on.nodes = 0;
    assert_int_equal(mesh_plan_fit_status(&m, &on, NULL, NULL, &err), -2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(when__durations_in_slurm_forms),
        cmocka_unit_test(when__dates),
        cmocka_unit_test(when__max_time),
        cmocka_unit_test(aim__parsed_against_now),
        cmocka_unit_test(deadline__fewest_nodes_in_time),
        cmocka_unit_test(deadline__none_in_time_names_the_fastest),
        cmocka_unit_test(chain__max_time_cuts_the_run),
        cmocka_unit_test(partition_info__max_time_of_the_named),
        cmocka_unit_test(no_layout__rows_say_why),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
