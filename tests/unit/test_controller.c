/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lib/controller.c: the controller's judgement of a job in the partitions
 * it names, on the GPU the policy gives each, in the words every front end
 * shows (job_submit/meshplan and meshplan plan --partition).
 */
#include "testutil.h"

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
    mesh_policy_t pol;
    mesh_error_t err;
    mesh_policy_init(&pol);
    if (mesh_policy_parse(&pol, text, strlen(text), "site.yaml", &err) < 0)
        fail_msg("%s", err.msg);
    return pol;
}

static mesh_verdict_t judge(const mesh_policy_t *pol, const char *model, int nodes,
                            const char *partitions, mesh_submit_t *out)
{
    mesh_model_t m = test_preset(model);
    mesh_layout_t pins = test_mesh("auto");
    mesh_step_t s = {.nodes = nodes, .gpus_per_node = 8};
    return mesh_submit_judge(pol, partitions, &m, &pins, &s, out);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(submit__partition_allocations),
        cmocka_unit_test(submit__verdicts_and_words),
    };
    return cmocka_run_group_tests_name("controller", tests, NULL, NULL);
}
