/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lib/controller.c: the controller's judgement of a job in the partitions
 * it names, on the GPU the policy gives each, in the words every front end
 * shows (job_submit/meshplan and meshplan plan --partition).
 */
#include <limits.h>
#include <pthread.h>

#include "internal.h" /* mesh_submit_decide_within */
#include "planner.h"  /* the work units' table */
#include "testutil.h"

static mesh_policy_t parsed_policy(const char *text)
{
    mesh_policy_t pol;
    mesh_error_t err;
    mesh_policy_init(&pol);
    if (mesh_policy_parse(&pol, text, strlen(text), "site.yaml", &err) < 0)
        fail_msg("%s", err.msg);
    return pol;
}

static mesh_policy_t site_policy(const char *enforce)
{
    char text[512];
    snprintf(text, sizeof(text),
             "gpu: H100-SXM\nenforce: %s\npartitions:\n"
             "  h100: {gpu: H100-SXM, nodes: 4}\n"
             "  a100: {gpu: A100-40GB}\n"
             "  small: {gpu_mem: 24GiB, nvlink: 2}\n"
             "  default: {gpu: H200}\n",
             enforce);
    return parsed_policy(text);
}

static mesh_verdict_t judge(const mesh_policy_t *pol, const char *model, int nodes,
                            const char *partitions, mesh_submit_t *out)
{
    mesh_model_t m = test_preset(model);
    mesh_layout_t pins = test_mesh("auto");
    mesh_step_t s = {.nodes = nodes, .gpus_per_node = 8};
    return mesh_submit_judge(pol, partitions, &m, &pins, &s, out);
}

/* A partition's GPU is its own, whatever its name's length: one the
 * policy defines as "X", of 8 GB, refuses llama3-8b, which the site's
 * H100-SXM would hold. */
static void submit__partition_gpu_of_one_letter(void **state)
{
    (void)state;
    mesh_policy_t pol =
        parsed_policy("gpu: H100-SXM\nenforce: reject\ngpus:\n"
                      "  X: {memory: 8GB, peak_tflops: 100, pci: 10de:ffff, island: 8}\n"
                      "partitions:\n  tiny: {gpu: X}\n");
    mesh_submit_t v;
    assert_int_equal(judge(&pol, "llama3-8b", 1, "tiny", &v), MESH_VERDICT_REFUSE);
    assert_non_null(strstr(v.msg, "llama3-8b does not fit on 1 x 8 X GPUs"));
    assert_int_equal(judge(&pol, "llama3-8b", 1, NULL, &v), MESH_VERDICT_RUN);
}

static void submit__partition_allocations(void **state)
{
    mesh_policy_t pol = site_policy("reject");
    mesh_step_t s = {.nodes = 2, .gpus_per_node = 8, .host_memory = 1e12};
    mesh_alloc_t a;
    mesh_error_t err;
    assert_int_equal(mesh_partition_alloc(&pol, "a100", &s, &a, &err), 0);
    assert_string_equal(a.gpu.name, "A100-40GB");
    assert_int_equal(a.nodes, 2);
    assert_true(a.host_memory == 1e12);
    /* the policy's gpu=, with the partition's memory and island */
    assert_int_equal(mesh_partition_alloc(&pol, "small", &s, &a, &err), 0);
    assert_string_equal(a.gpu.name, "H100-SXM");
    assert_true(a.gpu.memory == 24.0 * 1073741824);
    assert_int_equal(a.island, 2);
    /* any other name, and none: `default` */
    assert_int_equal(mesh_partition_alloc(&pol, "gpu", &s, &a, &err), 0);
    assert_string_equal(a.gpu.name, "H200");
    assert_int_equal(mesh_partition_alloc(&pol, NULL, &s, &a, &err), 0);
    assert_string_equal(a.gpu.name, "H200");
    /* no GPU anywhere: an error */
    mesh_policy_init(&pol);
    assert_int_equal(mesh_partition_alloc(&pol, "cpu", &s, &a, &err), -1);
}

/* A partition named with one letter is that partition, not the policy's
 * default: "a" of A100-40GB refuses llama3-70b on one node, which the
 * default's H200 would be asked about instead. */
static void submit__partition_of_one_letter(void **state)
{
    (void)state;
    mesh_policy_t pol = parsed_policy("gpu: H200\nenforce: reject\npartitions:\n"
                                      "  a: {gpu: A100-40GB}\n");
    mesh_submit_t v;
    assert_int_equal(judge(&pol, "llama3-70b", 1, "a", &v), MESH_VERDICT_REFUSE);
    assert_string_equal(v.partition, "a");
    assert_non_null(strstr(v.msg, "on 1 x 8 A100-40GB GPUs"));
}

/* A partition name one character longer than a policy entry's can be is
 * no entry's, not the entry named by all but its last character. */
static void submit__partition_name_longer_than_any_entry_is_default(void **state)
{
    char name[64], text[256];
    memset(name, 'p', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0'; /* 63: the longest an entry's name can be */
    snprintf(text, sizeof(text),
             "gpu: H100-SXM\nenforce: reject\npartitions:\n  %s: {gpu: A100-40GB}\n"
             "  default: {gpu: H200}\n",
             name);
    mesh_policy_t pol = parsed_policy(text);
    mesh_submit_t v;
    assert_int_equal(judge(&pol, "llama3-8b", 1, name, &v), MESH_VERDICT_RUN);
    assert_string_equal(v.entry->name, name);
    char longer[sizeof(name) + 1];
    snprintf(longer, sizeof(longer), "%sq", name);
    assert_int_equal(judge(&pol, "llama3-8b", 1, longer, &v), MESH_VERDICT_RUN);
    assert_string_equal(v.partition, "");
    assert_string_equal(v.entry->name, "default");
}

static void submit__verdicts_and_words(void **state)
{
    mesh_policy_t pol = site_policy("reject");
    mesh_submit_t v;
    /* fits */
    assert_int_equal(judge(&pol, "llama3-8b", 1, "h100", &v), MESH_VERDICT_RUN);
    assert_int_equal(v.judged, 1);
    assert_string_equal(v.partition, "h100");
    assert_string_equal(v.msg, "");
    /* the partition's nodes: exactly its count is fine, one more is not */
    assert_int_equal(judge(&pol, "llama3-8b", 4, "h100", &v), MESH_VERDICT_RUN);
    assert_int_equal(judge(&pol, "llama3-8b", 5, "h100", &v), MESH_VERDICT_REFUSE);
    assert_string_equal(v.msg, "the job asks for 5 nodes but partition h100 has 4: plan for at "
                               "most 4 (meshplan plan --model ... --nodes 4 shows what fits)");
    /* the plan's own words, as mesh_plan_verdict gives them */
    assert_int_equal(judge(&pol, "llama3.1-405b", 1, "a100", &v), MESH_VERDICT_REFUSE);
    const char *head = "llama3.1-405b does not fit on 1 x 8 A100-40GB GPUs: the closest layout";
    assert_int_equal(strncmp(v.msg, head, strlen(head)), 0);
    assert_non_null(strstr(v.msg, "\nwhat would fit: "));
    /* several: the first that accepts decides, and is the one named */
    assert_int_equal(judge(&pol, "llama3-70b", 2, "a100,other", &v), MESH_VERDICT_RUN);
    assert_int_equal(v.index, 1);
    assert_string_equal(v.partition, "other");
    assert_string_equal(v.entry->name, "default");
    /* none accepts: the first's reason, and how many were tried */
    assert_int_equal(judge(&pol, "llama3.1-405b", 1, "a100,h100,a100", &v), MESH_VERDICT_REFUSE);
    assert_int_equal(v.index, 0);
    assert_string_equal(v.partition, "a100");
    head = "in partition a100: llama3.1-405b does not fit on 1 x 8 A100-40GB GPUs: ";
    assert_int_equal(strncmp(v.msg, head, strlen(head)), 0);
    const char *tail = "\n(it fits none of the 3 partitions the job names)";
    assert_string_equal(v.msg + strlen(v.msg) - strlen(tail), tail);
    /* enforce=warn: the same words, queued; off: not judged */
    pol = site_policy("warn");
    assert_int_equal(judge(&pol, "llama3.1-405b", 1, "a100", &v), MESH_VERDICT_WARN);
    head = "llama3.1-405b does not fit on 1 x 8 A100-40GB GPUs: ";
    assert_int_equal(strncmp(v.msg, head, strlen(head)), 0);
    pol = site_policy("off");
    assert_int_equal(judge(&pol, "llama3.1-405b", 1, "a100", &v), MESH_VERDICT_RUN);
    assert_int_equal(v.judged, 0);
    /* a partition the policy gives no GPU: let through, unjudged, and why */
    mesh_policy_init(&pol);
    assert_int_equal(judge(&pol, "llama3.1-405b", 1, "cpu", &v), MESH_VERDICT_RUN);
    assert_int_equal(v.judged, 0);
    assert_null(v.entry);
    assert_non_null(strstr(v.msg, "gpu"));
}

/* ---- the work budget (MESH_SUBMIT_WORK) and the verdict cache ---- */

/* Valid, and costly beyond any budget: 100,000 layers, 16M-token sequences. */
static const char hostile[] = "name: hostile\n"
                              "arch: {layers: 100000, hidden: 1024, heads: 1024, vocab: 128}\n"
                              "train: {seq_len: 16777216, global_batch: 1073741824}\n";

/* mesh_submit_decide's verdict on model m, nodes lo (-N lo-hi, sized for
 * goal when it is not NULL), in partitions, under `work` units (LONG_MAX:
 * unbounded), judged afresh unless `keep`. */
static mesh_verdict_t decide_with(const mesh_policy_t *pol, const mesh_model_t *m, int lo, int hi,
                                  const char *goal, const char *partitions, long work, int keep,
                                  mesh_submit_t *out)
{
    mesh_layout_t pins = test_mesh("auto");
    mesh_step_t s = {.nodes = lo, .gpus_per_node = 8};
    mesh_submit_ask_t ask;
    mesh_error_t err;
    memset(&ask, 0, sizeof(ask));
    ask.nodes_lo = lo;
    ask.nodes_hi = hi;
    if (goal) {
        ask.size = 1;
        if (mesh_size_aim_parse(goal, 0, &ask.aim, &err) < 0)
            fail_msg("%s", err.msg);
    }
    if (!keep)
        mesh_submit_cache_clear();
    return (mesh_verdict_t)mesh_submit_decide_within(work, pol, partitions, m, &pins, &s, &ask,
                                                     out);
}

/* Sizing in a partition of a one-letter name sizes on its GPU and holds
 * the run to its MaxTime: "a" and "ab", both A100-40GB, give llama3-70b
 * the same node count (min over 1-8), where the policy's default H200
 * would need fewer, and a's hour chains the run. */
static void size__partition_of_one_letter(void **state)
{
    (void)state;
    mesh_policy_t pol =
        parsed_policy("gpu: H200\nenforce: reject\ntime_limit: set\npartitions:\n"
                      "  a: {gpu: A100-40GB, max_time: 1:00:00}\n  ab: {gpu: A100-40GB}\n");
    mesh_model_t m = test_preset("llama3-70b");
    m.tokens = 1e11;
    mesh_submit_t one, two, dflt;
    assert_int_equal(decide_with(&pol, &m, 1, 8, "min", "a", LONG_MAX, 0, &one), MESH_VERDICT_RUN);
    assert_int_equal(decide_with(&pol, &m, 1, 8, "min", "ab", LONG_MAX, 0, &two), MESH_VERDICT_RUN);
    assert_int_equal(decide_with(&pol, &m, 1, 8, "min", "", LONG_MAX, 0, &dflt), MESH_VERDICT_RUN);
    assert_int_equal(one.nodes, two.nodes);
    assert_true(dflt.nodes < one.nodes);
    assert_non_null(strstr(one.note, "more than partition a's MaxTime 1:00:00"));
    assert_null(strstr(two.note, "MaxTime"));
    /* a range too wide to size is refused, and judged: the job is not let
     * through as one the controller did not look at */
    assert_int_equal(
        decide_with(&pol, &m, 1, MESH_SUBMIT_SIZE_MAX + 1, "min", "ab", LONG_MAX, 0, &two),
        MESH_VERDICT_REFUSE);
    assert_int_equal(two.judged, 1);
    assert_int_equal(two.about, MESH_SUBMIT_SIZE);
}

/* --mesh-size with one count (-N 2, as Slurm gives it with or without a
 * maximum) has nothing to size: judged as it is, and told so. */
static void size__one_count_judged_as_it_is(void **state)
{
    (void)state;
    mesh_policy_t pol = site_policy("reject");
    mesh_model_t m = test_preset("llama3-8b");
    static const struct {
        int lo, hi;
        const char *note;
    } cases[] = {
        {2, 0, "the job asks for 2 nodes, so there is nothing to size (give a range, as -N 1-2)"},
        {2, 2, "the job asks for 2 nodes, so there is nothing to size (give a range, as -N 1-2)"},
        /* one node: one, and a range that is one (not "-N 1-1") */
        {1, 1, "the job asks for 1 node, so there is nothing to size (give a range, as -N 1-2)"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        mesh_submit_t v;
        assert_int_equal(
            decide_with(&pol, &m, cases[i].lo, cases[i].hi, "min", "h100", LONG_MAX, 0, &v),
            MESH_VERDICT_RUN);
        assert_int_equal(v.judged, 1);
        assert_int_equal(v.nodes, 0); /* not narrowed */
        if (!strstr(v.note, "--mesh-size=min: ") || !strstr(v.note, cases[i].note))
            fail_msg("-N %d-%d: '%s'", cases[i].lo, cases[i].hi, v.note);
    }
}

/* Where the budget suffices, the verdict is the unbounded one, to the word,
 * and took the same work. */
static void budget__same_verdict_where_it_suffices(void **state)
{
    mesh_policy_t pol = site_policy("reject");
    mesh_model_t m8 = test_preset("llama3-8b"), m405 = test_preset("llama3.1-405b");
    mesh_model_t m70 = test_preset("llama3-70b");
    m8.tokens = 1e12; /* a run-time estimate too */
    static const struct {
        int model, lo, hi;
        const char *goal, *partitions;
        mesh_verdict_t want;
    } cases[] = {{0, 1, 0, NULL, "h100", MESH_VERDICT_RUN},
                 {1, 1, 0, NULL, "h100", MESH_VERDICT_REFUSE}, /* its advice within its share */
                 {2, 4, 0, NULL, "a100,h100", MESH_VERDICT_RUN},
                 {2, 1, 4, "min", "h100", MESH_VERDICT_RUN},
                 {0, 1, 4, "fastest", "h100", MESH_VERDICT_RUN}};
    const mesh_model_t *models[] = {&m8, &m405, &m70};
    for (int i = 0; i < (int)(sizeof(cases) / sizeof(cases[0])); i++) {
        mesh_submit_t a, b;
        decide_with(&pol, models[cases[i].model], cases[i].lo, cases[i].hi, cases[i].goal,
                    cases[i].partitions, MESH_SUBMIT_WORK, 0, &a);
        decide_with(&pol, models[cases[i].model], cases[i].lo, cases[i].hi, cases[i].goal,
                    cases[i].partitions, LONG_MAX, 0, &b);
        if (a.verdict != cases[i].want)
            fail_msg("case %d: %d %s", i, a.verdict, a.msg);
        assert_int_equal(a.verdict, b.verdict);
        assert_int_equal(a.judged, 1);
        assert_int_equal(a.judged, b.judged);
        assert_string_equal(a.msg, b.msg);
        assert_string_equal(a.note, b.note);
        assert_int_equal(a.nodes, b.nodes);
        assert_int_equal(a.time_limit, b.time_limit);
        assert_true(a.work > 0 && a.work < MESH_SUBMIT_WORK);
        /* the same work, but where a partition refused before another
         * accepted: its advice, never shown, is cut to its share */
        if (strchr(cases[i].partitions, ',') ? a.work > b.work : a.work != b.work)
            fail_msg("case %d: %ld units, %ld unbounded", i, a.work, b.work);
        assert_null(strstr(a.msg, "work budget"));
        assert_null(strstr(a.note, "work budget"));
    }
    /* the estimate was made, and sizing narrowed */
    mesh_submit_t v;
    decide_with(&pol, &m8, 1, 0, NULL, "h100", MESH_SUBMIT_WORK, 0, &v);
    assert_true(v.estimate > 0);
    decide_with(&pol, &m70, 1, 4, "min", "h100", MESH_SUBMIT_WORK, 0, &v);
    assert_true(v.nodes >= 1 && v.nodes <= 4);
}

/* The units are those of lib/planner.h's table: a job whose first layout
 * fits costs the first-fit search one shape's parameters (10; a mixture of
 * experts' 40), one check (5) and one pricing of its memory (6) with the
 * states' sums (20). */
static void budget__units_counted(void **state)
{
    mesh_policy_t pol = site_policy("reject");
    mesh_model_t m = test_preset("llama3-8b");
    mesh_layout_t pins = test_mesh("auto");
    mesh_step_t s = {.nodes = 1, .gpus_per_node = 8};
    mesh_submit_t v;
    assert_int_equal(mesh_submit_judge(&pol, "h100", &m, &pins, &s, &v), MESH_VERDICT_RUN);
    assert_int_equal(v.work, 10 + 5 + 6 + 20);
    /* a MoE model's pricings count three times, its shapes four */
    m = test_preset("mixtral-8x7b");
    s.nodes = 4;
    assert_int_equal(mesh_submit_judge(&pol, "h100", &m, &pins, &s, &v), MESH_VERDICT_RUN);
    assert_int_equal(v.work, 40 + 5 + 3 * (6 + 20));
}

/* A whole plan prices the step of each layout that fits (the first-fit
 * search above does not): one pinned layout of Llama 3 8B that fits costs
 * its shape, check and memory with the states' sums, and its pricing.  A
 * plan and a sizing count their own work, the same without a budget in use
 * (plan --json's "work"), with a fresh one and with one partly spent, and
 * leave no counter of theirs in use. */
static void budget__plan_prices_what_fits(void **state)
{
    (void)state;
    mesh_policy_t pol = site_policy("reject");
    mesh_model_t m = test_preset("llama3-8b");
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    mesh_layout_t pins = test_mesh("tp=8,pp=1,dp=1,cp=1,mb=1,zero=1,recompute=none,vpp=1");
    mesh_error_t err;
    long own = WORK_SHAPE + WORK_CHECK + WORK_MEMORY + WORK_STATES + WORK_COST;
    static const long before[] = {-1, 0, 1000}; /* -1: no budget in use */
    for (size_t i = 0; i < sizeof(before) / sizeof(before[0]); i++) {
        mesh_work_t w = {.limit = 1000000000, .spent = before[i] > 0 ? before[i] : 0};
        mesh_work_t *in_use = before[i] < 0 ? NULL : &w, *was = mesh_work_use(in_use);
        mesh_plan_t *p = mesh_plan_create(&m, &a, &pins, &pol.assume, &err);
        assert_non_null(p);
        assert_true(mesh_plan_best(p)->fits);
        assert_int_equal(mesh_plan_work(p), own);
        mesh_plan_destroy(p);
        if (in_use)
            assert_int_equal(w.spent, before[i] + own);
        mesh_size_t *sz =
            mesh_size_create(&m, &a, 1, 2, &pins, &pol.assume, MESH_SIZE_MIN, 0, &err);
        assert_non_null(sz);
        assert_true(sz->work >= own);
        assert_ptr_equal(mesh_work_current(), in_use);
        if (in_use)
            assert_int_equal(w.spent, before[i] + own + sz->work);
        mesh_size_destroy(sz);
        mesh_work_use(was);
    }
}

/* A budget spent to its last unit by the searches before stops the next
 * one before its first unit; one unit left lets it start (and stop past
 * the limit, as every search stops).  On 1,024 GPUs too, where the
 * search's first step (the world's divisors) costs a unit: spent, it is
 * not taken. */
static void budget__spent_to_the_unit_searches_nothing(void **state)
{
    (void)state;
    mesh_policy_t pol = site_policy("reject");
    mesh_model_t m = test_preset("llama3-8b");
    mesh_error_t err;
    for (int i = 0; i < 4; i++) {
        mesh_alloc_t a = test_alloc("H100-SXM", i < 2 ? 1 : 128, 8); /* 8 GPUs, then 1,024 */
        long one = i % 2;                                            /* a unit left */
        mesh_work_t w = {.limit = 1000, .spent = 1000 - one};
        mesh_work_t *was = mesh_work_use(&w);
        mesh_plan_t *p = mesh_plan_create(&m, &a, NULL, &pol.assume, &err);
        mesh_work_use(was);
        assert_int_equal(w.stopped, 1);
        if (one)
            assert_true(w.spent > 1000);
        else
            assert_int_equal(w.spent, 1000);
        if (p) {
            assert_int_equal(mesh_plan_work(p), w.spent - (1000 - one));
            mesh_plan_destroy(p);
        }
    }
}

/* A part of the budget holds at most its cap, down to a cap of one unit;
 * a cap of none leaves the whole budget in use. */
static void budget__parts_capped(void **state)
{
    (void)state;
    mesh_work_t w = {.limit = 100, .spent = 10}, part;
    mesh_work_t *was = mesh_work_use(&w);
    static const long caps[][2] = {{1, 1}, {50, 50}, {500, 90}};
    for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
        mesh_work_t *whole = mesh_work_part(&part, caps[i][0]);
        assert_ptr_equal(whole, &w);
        assert_ptr_equal(mesh_work_current(), &part);
        assert_int_equal(part.limit, caps[i][1]);
        mesh_work_join(whole, &part);
        assert_ptr_equal(mesh_work_current(), &w);
    }
    assert_ptr_equal(mesh_work_part(&part, 0), &w);
    assert_ptr_equal(mesh_work_current(), &w);
    mesh_work_use(was);
}

/* A search's divisions of its world are work too: a model without an
 * arch searches one stage count, so with pp free it spends what it spends
 * with pp pinned to 1 and the divisions of its 524,288 GPUs on top: the
 * power of two at or above their square root (724), 1,024, a unit per
 * WORK_DIVISIONS. */
static void budget__divisions_counted(void **state)
{
    (void)state;
    mesh_policy_t pol = site_policy("reject");
    mesh_model_t m = test_spec("name: po\nparams: 1e9\ntrain: {global_batch: 524288}\n");
    mesh_alloc_t a = test_alloc("H100-SXM", 65536, 8);
    long spent[2];
    const char *meshes[] = {"auto", "pp=1"};
    for (int i = 0; i < 2; i++) {
        mesh_work_t w = {.limit = 1000000000};
        mesh_work_t *was = mesh_work_use(&w);
        mesh_layout_t pins = test_mesh(meshes[i]);
        mesh_error_t err;
        mesh_plan_t *p = mesh_plan_create(&m, &a, &pins, &pol.assume, &err);
        mesh_work_use(was);
        assert_non_null(p);
        assert_int_equal(mesh_plan_best(p)->layout.dp, 524288);
        mesh_plan_destroy(p);
        spent[i] = w.spent;
    }
    assert_int_equal(spent[0] - spent[1], 1024 / WORK_DIVISIONS);
}

/* A job naming one policy entry many times (a100 again and again, names
 * the policy does not know, all `default`) is planned once per entry: the
 * same work as naming each once, and the same refusal of them all. */
static void budget__an_entry_named_again_planned_once(void **state)
{
    (void)state;
    mesh_policy_t pol = site_policy("reject");
    mesh_submit_t one, many;
    assert_int_equal(judge(&pol, "llama3.1-405b", 1, "a100,zz", &one), MESH_VERDICT_REFUSE);
    assert_int_equal(judge(&pol, "llama3.1-405b", 1, "a100,zz,a100,yy,a100,xx,zz", &many),
                     MESH_VERDICT_REFUSE);
    assert_true(one.work > 0);
    assert_int_equal(many.work, one.work);
    assert_int_equal(many.judged, 1);
    const char *tail = "\n(it fits none of the 7 partitions the job names)";
    assert_string_equal(many.msg + strlen(many.msg) - strlen(tail), tail);
}

/* A hostile spec: the same verdict (it fits nowhere, which the first-fit
 * search, within the budget, says), and the explanation says where its
 * share of the budget cut the advice, with the command that searches it in
 * full; without the budget it costs many times as much. */
static void budget__hostile_stops_and_says_so(void **state)
{
    mesh_policy_t pol = site_policy("reject");
    mesh_model_t m = test_spec(hostile);
    mesh_submit_t v, full;
    assert_int_equal(decide_with(&pol, &m, 1, 0, NULL, "h100", MESH_SUBMIT_WORK, 0, &v),
                     MESH_VERDICT_REFUSE);
    assert_int_equal(v.judged, 1);
    /* the verdict's search, the explanation's, and the advice's share */
    assert_true(v.work > MESH_SUBMIT_WORK / MESH_SUBMIT_ADVICE_SHARE &&
                v.work < MESH_SUBMIT_WORK / MESH_SUBMIT_EXPLAIN_SHARE);
    assert_non_null(strstr(v.msg, "hostile does not fit on 1 x 8 H100-SXM GPUs: the closest "));
    assert_non_null(strstr(v.msg, "\n(what would fit was searched only as far as the "
                                  "controller's budget for it, 26000 work units: meshplan plan "
                                  "--model ... --nodes 1 --gpus-per-node 8 --gpu H100-SXM "
                                  "searches it in full)"));
    assert_int_equal(decide_with(&pol, &m, 1, 0, NULL, "h100", LONG_MAX, 0, &full),
                     MESH_VERDICT_REFUSE);
    assert_true(full.work > 4 * MESH_SUBMIT_WORK);
    assert_null(strstr(full.msg, "budget"));
    /* the same first line: only the advice was cut */
    assert_memory_equal(v.msg, full.msg, strcspn(full.msg, "\n") + 1);
    /* the same submission, the same words: the count is deterministic */
    mesh_submit_t again;
    decide_with(&pol, &m, 1, 0, NULL, "h100", MESH_SUBMIT_WORK, 0, &again);
    assert_string_equal(v.msg, again.msg);
    assert_int_equal(v.work, again.work);
    /* enforce=warn: warned in the same words */
    pol = site_policy("warn");
    assert_int_equal(decide_with(&pol, &m, 1, 0, NULL, "h100", MESH_SUBMIT_WORK, 0, &again),
                     MESH_VERDICT_WARN);
    assert_string_equal(v.msg, again.msg);
}

/* An honest refusal whose advice costs more than its share (Mixtral 8x7B on
 * one node: about 66,000 units) keeps what the share found, in the
 * unbounded advice's words, and names the command with the job's pins and
 * memory; a dense one's (Llama 3.1 405B: about 17,000) is whole. */
static void budget__advice_share(void **state)
{
    mesh_policy_t pol = site_policy("reject");
    mesh_model_t m = test_preset("mixtral-8x7b");
    mesh_layout_t pins = test_mesh("zero=3");
    mesh_step_t s = {.nodes = 1, .gpus_per_node = 8, .host_memory = 512 * 1073741824.0};
    mesh_submit_ask_t ask = {.nodes_lo = 1};
    mesh_submit_t v, full;
    mesh_submit_cache_clear();
    assert_int_equal(
        mesh_submit_decide_within(MESH_SUBMIT_WORK, &pol, "h100", &m, &pins, &s, &ask, &v),
        MESH_VERDICT_REFUSE);
    assert_int_equal(mesh_submit_decide_within(LONG_MAX, &pol, "h100", &m, &pins, &s, &ask, &full),
                     MESH_VERDICT_REFUSE);
    const char *cut = strstr(v.msg, "\n(what would fit was searched only as far as the "
                                    "controller's budget for it, 26000 work units: meshplan plan "
                                    "--model ... --nodes 1 --gpus-per-node 8 --gpu H100-SXM "
                                    "--mesh zero=3 --host-mem 512GiB searches it in full)");
    assert_non_null(cut);
    assert_null(strstr(full.msg, "budget"));
    /* what was found is the full advice's beginning, to the word */
    assert_true(cut - v.msg < (long)strlen(full.msg));
    assert_memory_equal(v.msg, full.msg, (size_t)(cut - v.msg));
    assert_true(v.work < MESH_SUBMIT_WORK / MESH_SUBMIT_EXPLAIN_SHARE + 20000);
    /* Llama 3.1 405B on one node of A100-40GB: its share runs out in the
     * last search, for the nodes LoRA would take, which says none (as the
     * whole search does: data-parallel, as DeepSpeed runs LoRA, its
     * activations alone are more than 40 GB): cut all the same, and said */
    m = test_preset("llama3.1-405b");
    s.host_memory = 0;
    mesh_submit_decide_within(MESH_SUBMIT_WORK, &pol, "a100", &m, &pins, &s, &ask, &v);
    mesh_submit_decide_within(LONG_MAX, &pol, "a100", &m, &pins, &s, &ask, &full);
    assert_int_equal(v.verdict, MESH_VERDICT_REFUSE);
    assert_non_null(cut = strstr(v.msg, "\n(what would fit was searched only as far as"));
    assert_int_equal(cut - v.msg, (long)strlen(full.msg));
    assert_null(strstr(full.msg, "parameter-efficient"));
    assert_memory_equal(v.msg, full.msg, (size_t)(cut - v.msg));
    /* a partition that gives its GPU's memory and island, or memory
     * alone: the command says so (not the name "generic", which --gpu
     * does not know) */
    m = test_preset("mixtral-8x7b");
    pins = test_mesh("zero=3");
    s.host_memory = 512 * 1073741824.0;
    mesh_submit_decide_within(MESH_SUBMIT_WORK, &pol, "small", &m, &pins, &s, &ask, &v);
    assert_non_null(strstr(v.msg, "--gpus-per-node 8 --gpu H100-SXM --gpu-mem 24GiB --nvlink 2 "
                                  "--mesh zero=3"));
    mesh_policy_t bare;
    mesh_error_t err;
    static const char by_mem[] = "enforce: reject\npartitions:\n  lab: {gpu_mem: 24GiB}\n";
    mesh_policy_init(&bare);
    assert_int_equal(mesh_policy_parse(&bare, by_mem, strlen(by_mem), "lab.yaml", &err), 0);
    mesh_submit_decide_within(MESH_SUBMIT_WORK, &bare, "lab", &m, &pins, &s, &ask, &v);
    assert_non_null(strstr(v.msg, "--gpus-per-node 8 --gpu-mem 24GiB --mesh zero=3"));
    /* a GB200 partition keeping TP to the tray (nvlink: 4, the tray's own
     * size, which the table's island of 72 would span): said, so the
     * login node's search keeps it there too */
    static const char trays[] = "enforce: reject\npartitions:\n  nvl: {gpu: GB200, nvlink: 4}\n";
    mesh_policy_t gb;
    mesh_policy_init(&gb);
    assert_int_equal(mesh_policy_parse(&gb, trays, strlen(trays), "nvl.yaml", &err), 0);
    mesh_step_t tray = {.nodes = 1, .gpus_per_node = 4};
    m = test_preset("deepseek-v3");
    pins = test_mesh("auto");
    mesh_submit_decide_within(MESH_SUBMIT_WORK, &gb, "nvl", &m, &pins, &tray, &ask, &v);
    if (!strstr(v.msg, "--gpus-per-node 4 --gpu GB200 --nvlink 4 "))
        fail_msg("%s", v.msg);
    /* a dense refusal's advice is within its share: whole */
    m = test_preset("llama3.1-405b");
    pins = test_mesh("auto");
    s.host_memory = 0; /* (offload's advice, searched at many sizes, is not) */
    mesh_submit_decide_within(MESH_SUBMIT_WORK, &pol, "h100", &m, &pins, &s, &ask, &v);
    mesh_submit_decide_within(LONG_MAX, &pol, "h100", &m, &pins, &s, &ask, &full);
    assert_int_equal(v.verdict, MESH_VERDICT_REFUSE);
    assert_string_equal(v.msg, full.msg);
}

/* Each judgement the budget stops before it knows: a fit not yet found is
 * let through unjudged, and the user is told; an explanation cut short
 * still refuses (the first-fit search said no); sizing stopped does not
 * narrow; an estimate stopped sets no limit. */
static void budget__stopped_judgements_say_so(void **state)
{
    mesh_policy_t pol = site_policy("reject");
    mesh_model_t m8 = test_preset("llama3-8b"), m405 = test_preset("llama3.1-405b");
    mesh_submit_t v;
    /* (a fit found is a fit, however little budget is left: the first
     * layout llama3-8b's first-fit search prices fits) */
    assert_int_equal(decide_with(&pol, &m8, 1, 0, NULL, "h100", 3, 0, &v), MESH_VERDICT_RUN);
    assert_int_equal(v.judged, 1);
    assert_int_equal(decide_with(&pol, &m405, 1, 0, NULL, "h100", 3, 0, &v), MESH_VERDICT_RUN);
    assert_int_equal(v.judged, 0);
    const char *why = "the controller stopped judging the job at its work budget of 3 units "
                      "before finding a layout that fits: the nodes judge it at launch "
                      "(meshplan plan judges it in full)";
    assert_string_equal(v.msg, why);
    assert_string_equal(v.note, why);
    /* the fit search done, the explanation not: refused, in short */
    mesh_submit_t fit;
    mesh_step_t s = {.nodes = 1, .gpus_per_node = 8};
    mesh_layout_t pins = test_mesh("auto");
    mesh_submit_judge(&pol, "a100", &m405, &pins, &s, &fit); /* its work: the fit search's */
    assert_int_equal(fit.verdict, MESH_VERDICT_REFUSE);
    long fit_work = 0;
    for (long w = 1; w < fit.work && !fit_work; w *= 2)
        if (decide_with(&pol, &m405, 1, 0, NULL, "a100", w, 0, &v) == MESH_VERDICT_REFUSE)
            fit_work = w;
    assert_true(fit_work > 0);
    assert_int_equal(v.judged, 1);
    char want[512];
    snprintf(want, sizeof(want),
             "llama3.1-405b does not fit on 1 x 8 A100-40GB GPUs: no layout fits (the controller "
             "stopped explaining at the %ld work units it gives an explanation; meshplan plan "
             "explains it and says what would fit)",
             fit_work / MESH_SUBMIT_EXPLAIN_SHARE);
    assert_string_equal(v.msg, want);
    /* sizing stopped: not narrowed, unjudged, and said */
    mesh_model_t m70 = test_preset("llama3-70b");
    assert_int_equal(decide_with(&pol, &m70, 1, 4, "min", "h100", 50, 0, &v), MESH_VERDICT_RUN);
    assert_int_equal(v.judged, 0);
    assert_int_equal(v.nodes, 0);
    assert_string_equal(v.note, "--mesh-size=min: the controller stopped sizing the job at its "
                                "work budget of 50 units: not narrowed, and the nodes judge it at "
                                "launch (meshplan size sizes it in full)");
    /* the fit found, the estimate stopped: no limit set, and said */
    pol.controller.time_limit = MESH_TIME_LIMIT_SET;
    m8.tokens = 1e12;
    mesh_submit_judge(&pol, "h100", &m8, &pins, &s, &fit);
    assert_int_equal(decide_with(&pol, &m8, 1, 0, NULL, "h100", fit.work + 1, 0, &v),
                     MESH_VERDICT_RUN);
    assert_int_equal(v.judged, 1);
    assert_int_equal(v.time_limit, 0);
    assert_true(v.estimate == 0);
    snprintf(want, sizeof(want),
             "the run's time was not estimated: the controller stopped at its work budget of "
             "%ld units (meshplan plan estimates it)",
             fit.work + 1);
    assert_string_equal(v.note, want);
    /* with the whole budget it is */
    decide_with(&pol, &m8, 1, 0, NULL, "h100", MESH_SUBMIT_WORK, 0, &v);
    assert_true(v.time_limit > 0);
    /* a plan the budget stops is no plan, and its error says why */
    mesh_work_t w = {.limit = 3};
    mesh_work_t *was = mesh_work_use(&w);
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    mesh_error_t err = {.msg = ""};
    mesh_plan_t *p = mesh_plan_create(&m405, &a, &pins, &pol.assume, &err);
    mesh_work_use(was);
    assert_null(p);
    assert_int_equal(w.stopped, 1);
    assert_string_equal(err.msg, "planning stopped at its work budget of 3 units");
    /* one begun with its budget spent does nothing, and says so rather
     * than what it would have found (tp=3 splits none of the heads: no
     * layout, and no work counted before it knows) */
    w = (mesh_work_t){.limit = 3, .spent = 3};
    was = mesh_work_use(&w);
    mesh_layout_t tp3 = test_mesh("tp=3");
    p = mesh_plan_create(&m405, &a, &tp3, &pol.assume, &err);
    mesh_work_use(was);
    assert_null(p);
    assert_int_equal(w.stopped, 1);
    assert_string_equal(err.msg, "planning stopped at its work budget of 3 units");
    /* a part that spends what the whole had left, to the unit, stops the
     * whole; one unit less leaves it going */
    for (long less = 0; less <= 1; less++) {
        w = (mesh_work_t){.limit = 10, .spent = 4};
        was = mesh_work_use(&w);
        mesh_work_t part;
        mesh_work_t *whole = mesh_work_part(&part, 100);
        assert_int_equal(part.limit, 6);
        part.spent = part.limit - less;
        mesh_work_join(whole, &part);
        assert_int_equal(mesh_work_stopped(), less == 0);
        mesh_work_use(was);
    }
}

/* A sizing that finds no count, let run by enforce=off and not narrowed,
 * leaves the job judged as it asked: the time limit of the same job on
 * its first count without --mesh-size (under enforce=warn, which judges
 * it). */
static void budget__nothing_sized_judged_as_asked(void **state)
{
    (void)state;
    mesh_policy_t off = site_policy("off"), warn = site_policy("warn");
    off.controller.time_limit = warn.controller.time_limit = MESH_TIME_LIMIT_SET;
    mesh_model_t m = test_preset("llama3-8b");
    m.tokens = 1e12;
    mesh_submit_t sized, plain;
    assert_int_equal(decide_with(&off, &m, 1, 2, "by:1h", "h100", MESH_SUBMIT_WORK, 0, &sized),
                     MESH_VERDICT_RUN);
    assert_int_equal(sized.nodes, 0);
    assert_non_null(strstr(sized.note, "(enforce=off: not narrowed)"));
    decide_with(&warn, &m, 1, 0, NULL, "h100", MESH_SUBMIT_WORK, 0, &plain);
    assert_true(plain.time_limit > 0);
    assert_int_equal(sized.time_limit, plain.time_limit);
}

/* A repeated submission is answered from the cache, with the same verdict;
 * another policy, allocation, partition or model is judged afresh. */
static void cache__hits_and_misses(void **state)
{
    mesh_policy_t pol = site_policy("reject");
    mesh_model_t m = test_preset("llama3.1-405b");
    mesh_submit_t a, b;
    decide_with(&pol, &m, 1, 0, NULL, "a100", MESH_SUBMIT_WORK, 0, &a);
    assert_int_equal(a.cached, 0);
    decide_with(&pol, &m, 1, 0, NULL, "a100", MESH_SUBMIT_WORK, 1, &b);
    assert_int_equal(b.cached, 1);
    b.cached = 0;
    assert_memory_equal(&a, &b, sizeof(a));
    /* the policy's entry, in the caller's policy, wherever it lies */
    mesh_policy_t copy = pol;
    decide_with(&copy, &m, 1, 0, NULL, "a100", MESH_SUBMIT_WORK, 1, &b);
    assert_int_equal(b.cached, 1);
    assert_ptr_equal(b.entry, mesh_policy_partition(&copy, "a100"));
    /* the policy's first entry (h100) too, kept as itself, not as none */
    decide_with(&pol, &m, 1, 0, NULL, "h100", MESH_SUBMIT_WORK, 0, &a);
    decide_with(&copy, &m, 1, 0, NULL, "h100", MESH_SUBMIT_WORK, 1, &b);
    assert_int_equal(b.cached, 1);
    assert_ptr_equal(a.entry, mesh_policy_partition(&pol, "h100"));
    assert_ptr_equal(b.entry, mesh_policy_partition(&copy, "h100"));
    /* an edited policy (in place, as job_submit/meshplan rereads it) */
    pol.enforce = MESH_ENFORCE_WARN;
    assert_int_equal(decide_with(&pol, &m, 1, 0, NULL, "a100", MESH_SUBMIT_WORK, 1, &b),
                     MESH_VERDICT_WARN);
    assert_int_equal(b.cached, 0);
    pol.enforce = MESH_ENFORCE_REJECT;
    pol.assume.reserve += 0.01; /* any byte of it */
    decide_with(&pol, &m, 1, 0, NULL, "a100", MESH_SUBMIT_WORK, 1, &b);
    assert_int_equal(b.cached, 0);
    /* another allocation, partition list, model or budget */
    decide_with(&pol, &m, 2, 0, NULL, "a100", MESH_SUBMIT_WORK, 1, &b);
    assert_int_equal(b.cached, 0);
    decide_with(&pol, &m, 1, 0, NULL, "a100,h100", MESH_SUBMIT_WORK, 1, &b);
    assert_int_equal(b.cached, 0);
    m.tokens = 1e12; /* the model's digest leaves the budget out: the key does not */
    decide_with(&pol, &m, 1, 0, NULL, "a100", MESH_SUBMIT_WORK, 1, &b);
    assert_int_equal(b.cached, 0);
    decide_with(&pol, &m, 1, 0, NULL, "a100", 1000, 1, &b);
    assert_int_equal(b.cached, 0);
    decide_with(&pol, &m, 1, 0, NULL, "a100", 1000, 1, &b);
    assert_int_equal(b.cached, 1);
}

/* A job the policy has no entry for (it names no partition, or one the
 * policy does not list, and there is no `default`) is judged with no entry
 * (NULL: the policy's own gpu= applies, or, with none, it passes unjudged
 * and slurmctld's log says its partition is not in the policy); repeated,
 * it is answered from the cache with no entry either, not with the
 * policy's first partition's. */
static void cache__no_entry_kept_as_none(void **state)
{
    static const char *const policies[] = {
        "gpu: H100-SXM\nenforce: reject\npartitions:\n  a100: {gpu: A100-40GB, nodes: 2}\n",
        "enforce: reject\npartitions:\n  a100: {gpu: A100-40GB, nodes: 2}\n", /* no gpu= */
    };
    static const char *const models[] = {"llama3-8b", "llama3.1-405b"};
    static const char *const parts[] = {NULL, "gpu"};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            for (int k = 0; k < 2; k++) {
                mesh_policy_t pol = parsed_policy(policies[i]);
                mesh_model_t m = test_preset(models[j]);
                mesh_submit_t a, b;
                decide_with(&pol, &m, 1, 0, NULL, parts[k], MESH_SUBMIT_WORK, 0, &a);
                assert_int_equal(a.cached, 0);
                assert_null(a.entry);
                /* on the policy's H100-SXM, never the entry's A100-40GB */
                if (i == 0 && j == 1)
                    assert_non_null(strstr(a.msg, "1 x 8 H100-SXM GPUs"));
                if (i == 1)
                    assert_int_equal(a.judged, 0);
                decide_with(&pol, &m, 1, 0, NULL, parts[k], MESH_SUBMIT_WORK, 1, &b);
                assert_int_equal(b.cached, 1);
                assert_null(b.entry);
                b.cached = 0;
                assert_memory_equal(&a, &b, sizeof(a));
            }
}

/* The key holds the model's bytes: the same request, decoded afresh for
 * each submission as job_submit/meshplan does, into memory that held
 * anything before, is the same key; a field the planner reads changed is
 * not. */
static void cache__same_request_same_key(void **state)
{
    mesh_policy_t pol = site_policy("reject");
    mesh_model_t m = test_preset("llama3.1-405b"), a, b;
    mesh_layout_t pins = test_mesh("tp=8"), pa, pb;
    mesh_error_t err;
    char req[MESH_REQUEST_MAX];
    assert_int_equal(mesh_request_encode(&m, &pins, req, sizeof(req), &err), 0);
    memset(&a, 0x5a, sizeof(a));
    memset(&b, 0xa5, sizeof(b));
    assert_int_equal(mesh_request_decode(req, &a, &pa, &err), 0);
    assert_int_equal(mesh_request_decode(req, &b, &pb, &err), 0);
    mesh_step_t s = {.nodes = 2, .gpus_per_node = 8};
    mesh_submit_ask_t ask = {.nodes_lo = 2};
    mesh_submit_t v;
    mesh_submit_cache_clear();
    mesh_submit_decide(&pol, "h100", &a, &pa, &s, &ask, &v);
    assert_int_equal(v.cached, 0);
    mesh_submit_decide(&pol, "h100", &b, &pb, &s, &ask, &v);
    assert_int_equal(v.cached, 1);
    b.seq_len *= 2;
    mesh_submit_decide(&pol, "h100", &b, &pb, &s, &ask, &v);
    assert_int_equal(v.cached, 0);
}

/* The cache holds MESH_SUBMIT_CACHE_MAX verdicts, the oldest replaced. */
static void cache__bounded(void **state)
{
    mesh_policy_t pol = site_policy("reject");
    mesh_model_t m = test_preset("llama3-8b");
    mesh_submit_t v;
    mesh_submit_cache_clear();
    for (int n = 1; n <= MESH_SUBMIT_CACHE_MAX + 1; n++)
        decide_with(&pol, &m, n, 0, NULL, "gpu", MESH_SUBMIT_WORK, 1, &v);
    decide_with(&pol, &m, MESH_SUBMIT_CACHE_MAX + 1, 0, NULL, "gpu", MESH_SUBMIT_WORK, 1, &v);
    assert_int_equal(v.cached, 1);
    decide_with(&pol, &m, 2, 0, NULL, "gpu", MESH_SUBMIT_WORK, 1, &v);
    assert_int_equal(v.cached, 1);
    decide_with(&pol, &m, 1, 0, NULL, "gpu", MESH_SUBMIT_WORK, 1, &v); /* the oldest: gone */
    assert_int_equal(v.cached, 0);
    decide_with(&pol, &m, 3, 0, NULL, "gpu", MESH_SUBMIT_WORK, 1, &v); /* kept, until: */
    assert_int_equal(v.cached, 1);
    mesh_submit_cache_clear();
    decide_with(&pol, &m, 3, 0, NULL, "gpu", MESH_SUBMIT_WORK, 1, &v);
    assert_int_equal(v.cached, 0);
}

/* Several threads judging at once (slurmctld's, or a library caller's):
 * each gets the verdict judged alone, whether kept or not. */
typedef struct judge_thread {
    const mesh_policy_t *pol;
    const mesh_model_t *m;
    int nodes, runs;
    const mesh_submit_t *want;
    int wrong;
} judge_thread_t;

static void *judge_many(void *arg)
{
    judge_thread_t *t = arg;
    for (int i = 0; i < t->runs; i++) {
        mesh_submit_t v;
        decide_with(t->pol, t->m, t->nodes, 0, NULL, "a100", i % 3 ? MESH_SUBMIT_WORK : 2000, 1,
                    &v);
        const mesh_submit_t *w = &t->want[i % 3 ? 0 : 1];
        t->wrong += v.verdict != w->verdict || strcmp(v.msg, w->msg) != 0 || v.work != w->work;
    }
    return NULL;
}

static void cache__threads(void **state)
{
    mesh_policy_t pol = site_policy("reject");
    mesh_model_t m = test_preset("llama3.1-405b");
    mesh_submit_t want[4][2];
    judge_thread_t t[4];
    pthread_t id[4];
    for (int i = 0; i < 4; i++) {
        decide_with(&pol, &m, i + 1, 0, NULL, "a100", MESH_SUBMIT_WORK, 0, &want[i][0]);
        decide_with(&pol, &m, i + 1, 0, NULL, "a100", 2000, 0, &want[i][1]);
        assert_true(strcmp(want[i][0].msg, want[i][1].msg) != 0 || i > 0);
        t[i] = (judge_thread_t){&pol, &m, i + 1, 30, want[i], 0};
    }
    mesh_submit_cache_clear();
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&id[i], NULL, judge_many, &t[i]), 0);
    for (int i = 0; i < 4; i++) {
        pthread_join(id[i], NULL);
        assert_int_equal(t[i].wrong, 0);
    }
}

/* ---- each user's share of the controller's work ---- */

/* A hostile spec of `layers` layers: each count a different submission. */
static mesh_model_t hostile_of(int layers)
{
    return test_specf("name: hostile\narch: {layers: %d, hidden: 1024, heads: 1024, vocab: 128}\n"
                      "train: {seq_len: 16777216, global_batch: 1073741824}\n",
                      layers);
}

/* user uid's verdict on m, on one node of h100, at `now` */
static mesh_verdict_t decide_as(unsigned uid, double now, const mesh_policy_t *pol,
                                const mesh_model_t *m, mesh_submit_t *out)
{
    mesh_layout_t pins = test_mesh("auto");
    mesh_step_t s = {.nodes = 1, .gpus_per_node = 8};
    mesh_submit_ask_t ask = {.nodes_lo = 1};
    return mesh_submit_decide_for(uid, now, pol, "h100", m, &pins, &s, &ask, out);
}

/* Drain user uid's share at `now` with hostile specs of layers, layers - 1,
 * ...: how many it took before one was judged within the floor (200: none). */
static int drain(unsigned uid, double now, const mesh_policy_t *pol, int layers)
{
    mesh_submit_t v;
    for (int i = 0; i < 200; i++) {
        mesh_model_t m = hostile_of(layers - i);
        if (decide_as(uid, now, pol, &m, &v), v.work <= MESH_SUBMIT_SHARE_FLOOR + 100)
            return i;
    }
    return 200;
}

static const char spent[] = "(your recent submissions have spent your share of the controller's "
                            "work, so this one was judged within 5000 units: leave a second "
                            "between costly submissions, or run meshplan plan to judge it in "
                            "full)";

/* A user submitting costly specs in a loop is judged whole until the
 * share is spent, then within the floor: still refused, and told why;
 * another user keeps a whole share; an ordinary job within the floor is
 * judged as ever; the share comes back with time. */
static void share__a_loop_of_costly_specs_gets_the_floor(void **state)
{
    mesh_policy_t pol = site_policy("reject");
    mesh_submit_t v, full, whole_v;
    mesh_submit_cache_clear();
    /* whole while the share holds a whole budget, and not once more */
    long before = 0, last = 0;
    int i = 0;
    for (; i < 200; i++) {
        mesh_model_t m = hostile_of(100000 - i);
        assert_int_equal(decide_as(7, 100.0, &pol, &m, &v), MESH_VERDICT_REFUSE);
        if (v.work <= MESH_SUBMIT_SHARE_FLOOR + 100)
            break;
        assert_null(strstr(v.msg, "your share"));
        before += last;
        last = v.work;
    }
    assert_true(i > 20 && i < 200);
    assert_true(before <= MESH_SUBMIT_SHARE_BURST - MESH_SUBMIT_WORK);
    assert_true(before + last > MESH_SUBMIT_SHARE_BURST - MESH_SUBMIT_WORK);
    /* the floor's refusal: refused all the same, and told why it is short */
    assert_non_null(strstr(v.msg, "hostile does not fit on 1 x 8 H100-SXM GPUs: "));
    assert_non_null(strstr(v.msg, spent));
    /* the same again: the kept verdict, which costs the share nothing */
    mesh_model_t m = hostile_of(100000 - i);
    assert_int_equal(decide_as(7, 100.0, &pol, &m, &v), MESH_VERDICT_REFUSE);
    assert_int_equal(v.cached, 1);
    /* a repeat of a job judged whole (kept, as mesh_submit_decide keeps
     * it): that verdict, free, where the floor would let it through */
    mesh_model_t big = test_preset("llama3.1-405b");
    mesh_layout_t auto_pins = test_mesh("auto");
    mesh_step_t four = {.nodes = 4, .gpus_per_node = 8};
    mesh_submit_ask_t ask4 = {.nodes_lo = 4};
    assert_int_equal(mesh_submit_decide(&pol, "h100", &big, &auto_pins, &four, &ask4, &whole_v),
                     MESH_VERDICT_REFUSE);
    assert_int_equal(
        mesh_submit_decide_for(7, 100.0, &pol, "h100", &big, &auto_pins, &four, &ask4, &v),
        MESH_VERDICT_REFUSE);
    assert_int_equal(v.cached, 1);
    assert_string_equal(v.msg, whole_v.msg);
    /* a costlier job the floor cannot judge: let through, and the note
     * (what the user sees of it) says why */
    mesh_model_t v3 = test_preset("deepseek-v3");
    assert_int_equal(
        mesh_submit_decide_for(7, 100.0, &pol, "h100", &v3, &auto_pins, &four, &ask4, &v),
        MESH_VERDICT_RUN);
    assert_int_equal(v.judged, 0);
    assert_non_null(strstr(v.note, spent));
    /* another user: whole */
    m = hostile_of(1000);
    assert_int_equal(decide_as(8, 100.0, &pol, &m, &v), MESH_VERDICT_REFUSE);
    assert_true(v.work > MESH_SUBMIT_SHARE_FLOOR + 100);
    assert_null(strstr(v.msg, "your share"));
    /* an ordinary job of the drained user: judged whole within the floor,
     * in mesh_submit_decide's words */
    mesh_model_t plain = test_preset("llama3-70b");
    mesh_layout_t pins = test_mesh("auto");
    mesh_step_t s = {.nodes = 4, .gpus_per_node = 8};
    mesh_submit_ask_t ask = {.nodes_lo = 4};
    assert_int_equal(mesh_submit_decide_for(7, 100.0, &pol, "h100", &plain, &pins, &s, &ask, &v),
                     MESH_VERDICT_RUN);
    assert_int_equal(v.judged, 1);
    assert_true(v.work < MESH_SUBMIT_SHARE_FLOOR);
    mesh_submit_decide(&pol, "h100", &plain, &pins, &s, &ask, &full);
    assert_int_equal(full.cached, 0); /* a whole budget's key */
    assert_string_equal(v.msg, full.msg);
    assert_string_equal(v.note, full.note);
    /* emptied by floors' judgements (each charged, down to 0), a whole
     * budget is back WORK / RATE seconds later, not before */
    for (i = 0; i < MESH_SUBMIT_WORK / MESH_SUBMIT_SHARE_FLOOR + 1; i++) {
        m = hostile_of(85000 - i);
        decide_as(7, 100.0, &pol, &m, &v);
        assert_true(v.work <= MESH_SUBMIT_SHARE_FLOOR + 100);
    }
    m = hostile_of(80000);
    double back = (double)MESH_SUBMIT_WORK / MESH_SUBMIT_SHARE_RATE;
    decide_as(7, 100.0 + 0.9 * back, &pol, &m, &v);
    assert_true(v.work <= MESH_SUBMIT_SHARE_FLOOR + 100);
    m = hostile_of(80001);
    decide_as(7, 100.0 + 2.1 * back, &pol, &m, &v);
    assert_true(v.work > MESH_SUBMIT_SHARE_FLOOR + 100);
}

/* A share refilled to exactly a whole budget is whole: drained to 0 by
 * floors' judgements, WORK / RATE seconds later (0.5 s, exact in binary)
 * a costly job is judged whole again. */
static void share__exactly_a_whole_budget_is_whole(void **state)
{
    mesh_policy_t pol = site_policy("reject");
    mesh_submit_t v;
    mesh_submit_cache_clear();
    assert_true(drain(11, 100.0, &pol, 20000) < 200);
    for (int i = 0; i < MESH_SUBMIT_WORK / MESH_SUBMIT_SHARE_FLOOR + 1; i++) {
        mesh_model_t m = hostile_of(19000 - i);
        decide_as(11, 100.0, &pol, &m, &v);
        assert_true(v.work <= MESH_SUBMIT_SHARE_FLOOR + 100);
    }
    mesh_model_t m = hostile_of(18000);
    decide_as(11, 100.0 + (double)MESH_SUBMIT_WORK / MESH_SUBMIT_SHARE_RATE, &pol, &m, &v);
    assert_true(v.work > MESH_SUBMIT_SHARE_FLOOR + 100);
}

/* More users than the table keeps: each new one whole, the one seen
 * longest ago forgotten (and whole again); a clock that goes back or is
 * not a number refills nothing and breaks nothing. */
static void share__users_beyond_the_table(void **state)
{
    mesh_policy_t pol = site_policy("reject");
    mesh_submit_t v;
    mesh_submit_cache_clear();
    /* a free slot is taken before a kept user's, whatever the clock says */
    int i = 0;
    for (; i < 200; i++) {
        mesh_model_t m = hostile_of(75000 - i);
        if (decide_as(1, -10.0, &pol, &m, &v), v.work <= MESH_SUBMIT_SHARE_FLOOR + 100)
            break;
    }
    mesh_model_t other = hostile_of(74000);
    decide_as(2, -10.0, &pol, &other, &v);
    other = hostile_of(74001);
    decide_as(1, -10.0, &pol, &other, &v); /* still drained */
    assert_true(v.work <= MESH_SUBMIT_SHARE_FLOOR + 100);
    mesh_submit_cache_clear();
    /* drain user 1 */
    i = 0;
    for (; i < 200; i++) {
        mesh_model_t m = hostile_of(70000 - i);
        if (decide_as(1, 10.0, &pol, &m, &v), v.work <= MESH_SUBMIT_SHARE_FLOOR + 100)
            break;
    }
    assert_true(i < 200);
    mesh_model_t m = hostile_of(60000);
    decide_as(1, 10.0 - 5, &pol, &m, &v); /* back in time: nothing back */
    assert_true(v.work <= MESH_SUBMIT_SHARE_FLOOR + 100);
    m = hostile_of(60001);
    decide_as(1, 0.0 / 0.0, &pol, &m, &v); /* not a number: the same */
    assert_true(v.work <= MESH_SUBMIT_SHARE_FLOOR + 100);
    /* also for a user drained at time 0, which a broken clock reads as */
    assert_true(drain(3, 0.0, &pol, 30000) < 200);
    m = hostile_of(29000);
    decide_as(3, 0.0 / 0.0, &pol, &m, &v);
    assert_true(v.work <= MESH_SUBMIT_SHARE_FLOOR + 100);
    /* a user first seen at a time that is not a number is refilled by a
     * later one */
    for (i = 0; i < 200; i++) {
        m = hostile_of(65000 - i);
        if (decide_as(90, 1.0 / 0.0, &pol, &m, &v), v.work <= MESH_SUBMIT_SHARE_FLOOR + 100)
            break;
    }
    assert_true(i < 200);
    m = hostile_of(64000);
    decide_as(90, 1e6, &pol, &m, &v);
    assert_true(v.work > MESH_SUBMIT_SHARE_FLOOR + 100);
    /* MESH_SUBMIT_SHARE_USERS others, each seen later: user 1 is forgotten */
    for (unsigned u = 2; u < 2 + MESH_SUBMIT_SHARE_USERS; u++) {
        m = hostile_of(50000 + (int)u);
        decide_as(u, 11.0 + u, &pol, &m, &v);
        assert_true(v.work > MESH_SUBMIT_SHARE_FLOOR + 100);
    }
    m = hostile_of(40000);
    decide_as(1, 11.0, &pol, &m, &v);
    assert_true(v.work > MESH_SUBMIT_SHARE_FLOOR + 100);
    /* a share idle for long holds MESH_SUBMIT_SHARE_BURST, no more */
    long sum = 0;
    for (i = 0; i < 200; i++) {
        m = hostile_of(30000 - i);
        if (decide_as(40, 1e6, &pol, &m, &v), v.work <= MESH_SUBMIT_SHARE_FLOOR + 100)
            break;
        sum += v.work;
    }
    assert_true(sum < MESH_SUBMIT_SHARE_BURST + MESH_SUBMIT_WORK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(submit__partition_allocations),
        cmocka_unit_test(submit__partition_gpu_of_one_letter),
        cmocka_unit_test(submit__partition_of_one_letter),
        cmocka_unit_test(size__partition_of_one_letter),
        cmocka_unit_test(submit__verdicts_and_words),
        cmocka_unit_test(submit__partition_name_longer_than_any_entry_is_default),
        cmocka_unit_test(budget__units_counted),
        cmocka_unit_test(budget__divisions_counted),
        cmocka_unit_test(budget__plan_prices_what_fits),
        cmocka_unit_test(size__one_count_judged_as_it_is),
        cmocka_unit_test(budget__spent_to_the_unit_searches_nothing),
        cmocka_unit_test(budget__parts_capped),
        cmocka_unit_test(budget__an_entry_named_again_planned_once),
        cmocka_unit_test(budget__same_verdict_where_it_suffices),
        cmocka_unit_test(budget__hostile_stops_and_says_so),
        cmocka_unit_test(budget__advice_share),
        cmocka_unit_test(budget__stopped_judgements_say_so),
        cmocka_unit_test(budget__nothing_sized_judged_as_asked),
        cmocka_unit_test(cache__hits_and_misses),
        cmocka_unit_test(cache__same_request_same_key),
        cmocka_unit_test(cache__no_entry_kept_as_none),
        cmocka_unit_test(cache__bounded),
        cmocka_unit_test(cache__threads),
        cmocka_unit_test(share__a_loop_of_costly_specs_gets_the_floor),
        cmocka_unit_test(share__users_beyond_the_table),
        cmocka_unit_test(share__exactly_a_whole_budget_is_whole),
    };
    return cmocka_run_group_tests_name("controller", tests, NULL, NULL);
}
