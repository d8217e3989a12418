/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The listings (lib/listing.c): the GPU table as a policy makes it, the
 * presets of a search path, a node's topology and a sizing, as text and as
 * JSON that Jansson reads back.  Expectations from the fixtures and the
 * policies written here.
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

static json_t *parsed(char *text)
{
    json_error_t e;
    assert_non_null(text);
    json_t *j = json_loads(text, 0, &e);
    if (!j)
        fail_msg("not JSON (%s): %.120s", e.text, text);
    free(text);
    return j;
}

static json_t *gpu_named(json_t *list, const char *name)
{
    size_t i;
    json_t *g;
    json_array_foreach(
        list, i, g) if (strcmp(json_string_value(json_object_get(g, "name")), name) == 0) return g;
    fail_msg("no GPU %s", name);
    return NULL;
}

/* The policy's figures are marked, and a GPU it defines follows the table's. */
static void gpus__policy_marks_and_defines(void **state)
{
    (void)state;
    mesh_policy_t pol;
    mesh_error_t err;
    mesh_policy_init(&pol);
    const char *sets[] = {"gpu.H100-SXM.memory=70GiB", "gpu.MyGPU.pci=1234:5678",
                          "gpu.MyGPU.memory=48GiB", "gpu.MyGPU.peak_tflops=300",
                          "gpu.MyGPU.island=4"};
    for (int i = 0; i < 5; i++)
        assert_int_equal(mesh_policy_set_arg(&pol, sets[i], &err), 0);
    json_t *j = parsed(mesh_listing_gpus(&pol.assume, 1));
    json_t *h = gpu_named(j, "H100-SXM"), *mine = gpu_named(j, "MyGPU");
    assert_true(json_integer_value(json_object_get(h, "memory")) == 70LL << 30 ||
                json_real_value(json_object_get(h, "memory")) == 70.0 * (1LL << 30));
    assert_string_equal(json_string_value(json_array_get(json_object_get(h, "policy_sets"), 0)),
                        "memory");
    assert_string_equal(json_string_value(json_object_get(mine, "source")), "policy");
    assert_int_equal(json_array_size(json_object_get(mine, "policy_sets")), 3);
    json_decref(j);
    char *text = mesh_listing_gpus(&pol.assume, 0);
    assert_non_null(strstr(text, "  *: the policy's figure (gpu.NAME.FIELD)"));
    assert_non_null(strstr(text, "the policy defines MyGPU (its other figures: H100-SXM's)"));
    /* no line ends in a blank, and none is wider than the header */
    size_t width = strcspn(text, "\n");
    for (const char *l = text; *l; l += strcspn(l, "\n") + 1) {
        size_t n = strcspn(l, "\n");
        assert_true(n <= width);
        assert_true(n > 0 && l[n - 1] != ' ');
    }
    assert_non_null(strstr(text, "  GEMM\n"));
    free(text);
    /* two it defines, the first of a one-letter name: both named, apart */
    mesh_policy_init(&pol);
    const char *two[] = {"gpu.X.pci=1234:5679",    "gpu.X.memory=24GiB",   "gpu.X.peak_tflops=100",
                         "gpu.X.island=1",         "gpu.Y2.pci=1234:567a", "gpu.Y2.memory=24GiB",
                         "gpu.Y2.peak_tflops=100", "gpu.Y2.island=1"};
    for (int i = 0; i < 8; i++)
        assert_int_equal(mesh_policy_set_arg(&pol, two[i], &err), 0);
    text = mesh_listing_gpus(&pol.assume, 0);
    if (!strstr(text, "the policy defines X, Y2 ("))
        fail_msg("%s", text);
    free(text);
    /* any one figure the policy sets, alone, is marked and the mark told */
    const char *one[] = {"memory=70GiB",  "peak_tflops=900", "hbm_bw=3TB/s", "link_bw=400GB/s",
                         "net_bw=50GB/s", "island=4",        "gemm_eff=0.7"};
    for (int i = 0; i < 7; i++) {
        char arg[64];
        mesh_policy_init(&pol);
        snprintf(arg, sizeof(arg), "gpu.H100-SXM.%s", one[i]);
        if (mesh_policy_set_arg(&pol, arg, &err) < 0)
            fail_msg("%s: %s", arg, err.msg);
        text = mesh_listing_gpus(&pol.assume, 0);
        const char *row = strstr(text, "\nH100-SXM ");
        assert_non_null(row);
        if (!memchr(row + 1, '*', strcspn(row + 1, "\n")))
            fail_msg("%s: the H100-SXM row has no mark", arg);
        if (!strstr(text, "  *: the policy's figure (gpu.NAME.FIELD)\n"))
            fail_msg("%s: the mark is not told", arg);
        free(text);
    }
    mesh_policy_init(&pol);
    text = mesh_listing_gpus(&pol.assume, 0);
    assert_null(strstr(text, "the policy's figure"));
    free(text);
}

/* A preset of the first directory shadows the same name further on. */
static void presets__each_name_once(void **state)
{
    (void)state;
    char dir[] = "/tmp/meshplan-listing.XXXXXX", path[256];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/llama3-8b.yaml", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("name: llama3-8b\nparams: 1e9\ntrain: {seq_len: 1024, global_batch: 8}\n", f);
    fclose(f);
    /* what is no preset: another suffix, a hidden file, a bad name */
    const char *others[] = {"notes.yml", ".hidden.yaml", "-dash.yaml"};
    char other[256];
    for (int k = 0; k < 3; k++) {
        snprintf(other, sizeof(other), "%s/%s", dir, others[k]);
        f = fopen(other, "w");
        assert_non_null(f);
        fputs("name: x\nparams: 1e9\ntrain: {seq_len: 1024, global_batch: 8}\n", f);
        fclose(f);
    }
    const char *first[] = {dir, getenv("MESH_MODELS_DIR")};
    mesh_spec_dirs_t d;
    mesh_spec_dirs_make(&d, first, 2);
    json_t *j = parsed(mesh_listing_presets(&d, 1));
    size_t i, n8 = 0;
    json_t *p;
    json_array_foreach(
        j, i, p) if (strcmp(json_string_value(json_object_get(p, "name")), "llama3-8b") == 0)
    {
        n8++;
        assert_string_equal(json_string_value(json_object_get(p, "dir")), dir);
        assert_true(json_number_value(json_object_get(p, "params")) == 1e9);
    }
    assert_int_equal(n8, 1);
    assert_true(json_array_size(j) >= 13);
    size_t mine = 0; /* of the temporary directory, the preset alone */
    json_array_foreach(j, i, p) mine +=
        strcmp(json_string_value(json_object_get(p, "dir")), dir) == 0;
    assert_int_equal(mine, 1);
    json_decref(j);
    for (int k = 0; k < 3; k++) {
        snprintf(other, sizeof(other), "%s/%s", dir, others[k]);
        unlink(other);
    }
    unlink(path);
    rmdir(dir);
}

/* MoE presets list the parameters a token passes through next to the
 * total, as the library counts them (mesh_model_active_params), against the
 * published figures:
 *   DeepSeek-V3 37B of 671B (DeepSeek-AI 2024, arXiv 2412.19437, abstract);
 *     the preset counts the MTP layer too (682.6B; 0.7B of it active), 3.4%
 *   Mixtral-8x7B 12.9B of 46.7B (Mistral AI, "Mixtral of experts", 2023-12-11)
 *   Qwen3-235B-A22B 22B of 235B (Qwen team 2025, arXiv 2505.09388, table 2)
 * within 5%, the published figures' own rounding plus the MTP layer.  A
 * dense model's active parameters are its total, a dash in the text. */
static void presets__active_parameters(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        double total, active;
    } moe[] = {
        {"deepseek-v3", 671e9, 37e9},
        {"mixtral-8x7b", 46.7e9, 12.9e9},
        {"qwen3-235b-a22b", 235e9, 22e9},
        {"llama3-8b", 8.03e9, 8.03e9},
    };
    const char *dirs[] = {getenv("MESH_MODELS_DIR")};
    mesh_spec_dirs_t d;
    mesh_spec_dirs_make(&d, dirs, 1);
    json_t *j = parsed(mesh_listing_presets(&d, 1));
    for (size_t k = 0; k < sizeof(moe) / sizeof(moe[0]); k++) {
        size_t i;
        json_t *p, *found = NULL;
        json_array_foreach(j, i, p) if (strcmp(json_string_value(json_object_get(p, "name")),
                                               moe[k].name) == 0) found = p;
        if (!found)
            fail_msg("no preset %s", moe[k].name);
        double total = json_number_value(json_object_get(found, "params"));
        double active = json_number_value(json_object_get(found, "active_params"));
        mesh_model_t m = test_preset(moe[k].name);
        assert_true(active == mesh_model_active_params(&m));
        if (total < moe[k].total * 0.95 || total > moe[k].total * 1.05 ||
            active < moe[k].active * 0.95 || active > moe[k].active * 1.05)
            fail_msg("%s: %.2f B total, %.2f B active; published %.1f and %.1f", moe[k].name,
                     total / 1e9, active / 1e9, moe[k].total / 1e9, moe[k].active / 1e9);
    }
    json_decref(j);
    char *text = mesh_listing_presets(&d, 0);
    const char *ds = strstr(text, "deepseek-v3 "), *l8 = strstr(text, "llama3-8b ");
    assert_non_null(ds);
    assert_non_null(l8);
    assert_true(strncmp(strstr(ds, "B total"), "B total   38.24 B active  ", 26) == 0);
    assert_true(strncmp(strstr(l8, "B total"), "B total                -  ", 26) == 0);
    free(text);
}

/* An 8-GPU HGX node: one island of 8, two NUMA nodes, H100s assumed. */
static void topo__fixture_as_json(void **state)
{
    (void)state;
    char path[512];
    mesh_error_t err;
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    snprintf(path, sizeof(path), "%s/topologies/hgx-h100-8gpu.xml", getenv("MESH_FIXTURES"));
    mesh_topo_t *t = mesh_topo_load(path, &err);
    assert_non_null(t);
    json_t *j = parsed(mesh_listing_topo(t, "a \"node\"", &pol, 1));
    assert_string_equal(json_string_value(json_object_get(j, "source")), "a \"node\"");
    assert_int_equal(json_array_size(json_object_get(j, "gpus")), 8);
    assert_int_equal(json_array_size(json_array_get(json_object_get(j, "islands"), 0)), 8);
    assert_int_equal(json_integer_value(json_object_get(j, "numa_nodes")), 2);
    json_t *as = json_object_get(j, "assumes");
    assert_string_equal(json_string_value(json_object_get(as, "gpu")), "H100-SXM");
    assert_int_equal(json_integer_value(json_object_get(as, "island")), 8);
    json_decref(j);
    char *text = mesh_listing_topo(t, "x.xml", &pol, 0);
    assert_non_null(strstr(text, "topology of x.xml: 8 GPUs, 2 NUMA nodes"));
    assert_non_null(strstr(text, "the planner assumes: 8 x H100-SXM per node"));
    free(text);
    mesh_topo_destroy(t);
}

/* Sizing a model that fits on no count: no choice, and how many nodes would. */
static void size__none_fits_says_what_would(void **state)
{
    (void)state;
    mesh_model_t m = test_preset("llama3-70b");
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    mesh_policy_t pol;
    mesh_error_t err;
    mesh_layout_t pins;
    mesh_policy_init(&pol);
    mesh_layout_unpin(&pins);
    mesh_size_t *sz =
        mesh_size_create(&m, &a, 1, 2, &pins, &pol.assume, MESH_SIZE_MIN, MESH_SIZE_TABLE, &err);
    assert_non_null(sz);
    json_t *j = parsed(mesh_listing_size(sz, &m, &a, NULL, NULL, NULL, 1));
    assert_true(json_is_null(json_object_get(j, "chosen")));
    assert_true(json_integer_value(json_object_get(j, "would_fit")) > 2);
    assert_int_equal(json_array_size(json_object_get(j, "rows")), 2);
    assert_true(
        json_is_false(json_object_get(json_array_get(json_object_get(j, "rows"), 0), "fits")));
    json_decref(j);
    char *text = mesh_listing_size(sz, &m, &a, NULL, NULL, NULL, 0);
    assert_non_null(strstr(text, "Sizing llama3-70b on 1-2 nodes of 8 H100-SXM, goal min\n"));
    assert_non_null(strstr(text, "\nNothing fits: "));
    free(text);
    mesh_size_destroy(sz);
}

/* A sizing for a deadline, as JSON: the goal as written, its seconds and
 * the time margin, in an object of their own (scripts read them back). */
static void size__deadline_as_json(void **state)
{
    (void)state;
    mesh_model_t m = test_preset("llama3-70b");
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    mesh_size_aim_t aim = {.goal = MESH_SIZE_DEADLINE, .within = 1e12, .text = "by:test"};
    mesh_error_t err;
    m.tokens = 1e11;
    mesh_size_t *sz = mesh_size_create_aim(&m, &a, 1, 4, NULL, NULL, &aim, MESH_SIZE_TABLE, &err);
    assert_non_null(sz);
    mesh_size_job_t job = {"batch", 24 * 60}; /* MaxTime 1-00:00:00 */
    json_t *j = parsed(mesh_listing_size(sz, &m, &a, NULL, NULL, &job, 1));
    json_t *d = json_object_get(j, "deadline");
    assert_string_equal(json_string_value(json_object_get(d, "goal")), "by:test");
    assert_true(json_number_value(json_object_get(d, "seconds")) == 1e12);
    assert_true(fabs(json_number_value(json_object_get(d, "margin")) - sz->margin) < 1e-6);
    assert_int_equal(json_object_size(d), 3);
    /* and the shell line that submits the run, named for the model */
    const char *recipe = json_string_value(json_object_get(json_object_get(j, "run"), "recipe"));
    assert_non_null(recipe);
    assert_non_null(strstr(recipe, "sbatch --job-name=llama3-70b "));
    assert_non_null(strstr(recipe, " job.sh"));
    json_decref(j);
    mesh_size_destroy(sz);
}

/* A sizing without its table (the controller's) leaves untold whether a
 * count it passed over has any valid layout: its JSON says null there, not
 * true or false; the table's says which. */
static void size__untold_rows_as_json(void **state)
{
    (void)state;
    mesh_model_t m = test_preset("llama3.1-405b");
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    mesh_error_t err;
    int nulls[2] = {0, 0};
    for (unsigned flags = 0; flags <= MESH_SIZE_TABLE; flags += MESH_SIZE_TABLE) {
        mesh_size_t *sz =
            mesh_size_create(&m, &a, 1, 64, NULL, NULL, MESH_SIZE_FASTEST, flags, &err);
        assert_non_null(sz);
        json_t *j = parsed(mesh_listing_size(sz, &m, &a, NULL, NULL, NULL, 1));
        json_t *rows = json_object_get(j, "rows");
        assert_int_equal(json_array_size(rows), 64);
        for (int i = 0; i < 64; i++) {
            json_t *nl = json_object_get(json_array_get(rows, (size_t)i), "no_layout");
            assert_int_equal(nl != NULL, sz->rows[i].fits == 0);
            if (json_is_null(nl))
                nulls[flags]++;
            else if (nl)
                assert_int_equal(json_is_true(nl), sz->rows[i].no_layout);
        }
        json_decref(j);
        mesh_size_destroy(sz);
    }
    assert_true(nulls[0] > 0);
    assert_int_equal(nulls[MESH_SIZE_TABLE], 0);
}

/* A partition whose MaxTime is a single minute (as a debug partition may
 * have): the run's line names that limit, and the run is cut into as many
 * chained one-minute jobs as the minutes it needs. */
static void size__a_one_minute_max_time(void **state)
{
    (void)state;
    mesh_model_t m = test_preset("llama3-8b");
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    mesh_error_t err;
    m.tokens = 1e9;
    mesh_size_t *sz =
        mesh_size_create(&m, &a, 1, 2, NULL, NULL, MESH_SIZE_MIN, MESH_SIZE_TABLE, &err);
    assert_non_null(sz);
    mesh_estimate_t est;
    int i = sz->chosen >= 0 ? sz->chosen : sz->fastest;
    assert_true(i >= 0 && mesh_size_estimate(&m, &sz->rows[i].best.cost, &est));
    long need = mesh_size_limit_minutes(&est, sz->margin);
    assert_true(need > 1);
    char want[128];
    snprintf(want, sizeof(want),
             "; partition debug's MaxTime is 0:01:00: %ld chained jobs of "
             "--time=0:01:00, each after the one before",
             need);
    mesh_size_job_t job = {"debug", 1};
    char *text = mesh_listing_size(sz, &m, &a, NULL, NULL, &job, 0);
    assert_non_null(strstr(text, want));
    free(text);
    mesh_size_job_t unnamed = {"", 1};
    text = mesh_listing_size(sz, &m, &a, NULL, NULL, &unnamed, 0);
    assert_non_null(strstr(text, "; the partition's MaxTime is 0:01:00: "));
    free(text);
    mesh_size_destroy(sz);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gpus__policy_marks_and_defines),
        cmocka_unit_test(presets__each_name_once),
        cmocka_unit_test(presets__active_parameters),
        cmocka_unit_test(topo__fixture_as_json),
        cmocka_unit_test(size__none_fits_says_what_would),
        cmocka_unit_test(size__deadline_as_json),
        cmocka_unit_test(size__untold_rows_as_json),
        cmocka_unit_test(size__a_one_minute_max_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
