/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The plan's reports: the JSON and the text, at their units, LoRA's plans, and the controller's
 * verdict as the CLI shows it.
 */
#include <math.h>

#include "internal.h" /* MoE internals */
#include "planner.h"  /* the search's memo */
#include "moeutil.h"
#include "planutil.h"
#include "testutil.h"

/* ---- the JSON report ---- */

static double json_number(const char *json, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof(pat), "\"%s\":", key);
    const char *at = strstr(json, pat);
    if (!at)
        fail_msg("no %s in %s", key, json);
    return strtod(at + strlen(pat), NULL);
}

static void assert_close(double got, double want)
{
    double d = got > want ? got - want : want - got;
    if (!(d <= 1e-5 * (want > 0 ? want : -want)))
        fail_msg("%.9g is not %.9g", got, want);
}

/* Everything of one small plan that the design fixes, by hand: seed 7B on
 * 4 GPUs under ZeRO-3 with micro-batches of 2 (64 / (2 * 4) = 8 of them),
 * its model states a quarter of 2 + 2 + 12 bytes a parameter.  The cost is
 * the model's estimate; its derived figures follow from the step time:
 * 64 * 4096 tokens a step, 6 * 7e9 FLOPs a token, over 4 GPUs. */
static void report__json__small_plan_exact(void **state)
{
    (void)state;
    mesh_model_t m = seed_7b();
    mesh_alloc_t a = alloc_80e9(1, 4);
    mesh_plan_t *p = test_plan(&m, &a, "zero=3,mb=2");
    char *j = mesh_report_json(p);
    const char *head =
        "{\"model\":{\"name\":\"seed-7b\",\"params\":7000000000,\"layers\":0,\"hidden\":0,"
        "\"heads\":0,\"kv_heads\":0,\"ffn\":0,\"vocab\":0,\"seq_len\":4096,\"global_batch\":64,"
        "\"precision\":\"bf16\",\"fp8_recipe\":\"none\",\"grad_accum_dtype\":\"bf16\","
        "\"optimizer_dtype\":\"fp32\",\"framework\":\"megatron\",\"finetune\":\"full\"},"
        "\"allocation\":{\"nodes\":1,\"gpus_per_node\":4,\"gpus\":4,\"gpu\":\"generic\","
        "\"gpu_memory\":80000000000,\"island\":4,\"nvlink_fabric\":null,\"host_memory\":0},"
        "\"fits\":true,"
        "\"layout\":{\"tp\":1,\"pp\":1,\"dp\":4,\"cp\":1,\"zero\":3,\"vpp\":1,\"micro_batch\":2,"
        "\"micro_batches\":8,\"global_batch\":64,\"recompute\":\"none\",\"recompute_layers\":0,"
        "\"sequence_parallel\":false,\"offload\":\"none\",\"moments\":\"fp32\","
        "\"mesh\":\"tp=1,pp=1,dp=4,cp=1,zero=3,vpp=1,mb=2,recompute=none,sp=off\"},"
        "\"memory\":{\"weights\":3500000000,\"grads\":3500000000,\"optimizer\":21000000000,"
        "\"activations\":0,\"overhead\":1342177280,\"total\":29342177280,"
        "\"capacity\":77600000000,\"stage\":0,\"host\":0,\"framework\":\"megatron\"},"
        "\"cost\":{\"step_seconds\":";
    if (strncmp(j, head, strlen(head)) != 0)
        fail_msg("JSON differs from the expected head:\n%s\n%s", j, head);
    const char *cost = j + strlen(head) - strlen("\"step_seconds\":");
    double step = json_number(cost, "step_seconds");
    assert_true(step > 0);
    assert_non_null(strstr(cost, ",\"bubble\":0,"));
    assert_non_null(strstr(cost, ",\"tp_comm_seconds\":0,\"cp_comm_seconds\":0,"
                                 "\"pp_comm_seconds\":0,"));
    assert_close(json_number(cost, "tokens_per_second"), 64.0 * 4096 / step);
    double tflops = 6 * 7e9 * 64 * 4096 / step / 4 / 1e12;
    assert_close(json_number(cost, "tflops_per_gpu"), tflops);
    assert_close(json_number(cost, "mfu"), tflops * 1e12 / a.gpu.peak_flops);
    assert_close(step, mesh_plan_best(p)->cost.step_seconds);
    char tail[256];
    snprintf(tail, sizeof(tail),
             "},\"pp_layers\":[1],\"alternatives\":[],\"reasons\":[\"plain DP is excluded by the "
             "pinned layout fields\",\"DP + ZeRO-1 is excluded by the pinned layout fields\",\"DP "
             "+ ZeRO-2 is excluded by the pinned layout fields\"],\"advice\":[],\"digest\":\"%s\","
             "\"evaluated\":",
             mesh_plan_digest(p));
    const char *at = strstr(j, "},\"pp_layers\"");
    assert_non_null(at);
    assert_int_equal(strncmp(at, tail, strlen(tail)), 0);
    assert_true(json_number(at, "evaluated") >= 1);
    assert_string_equal(j + strlen(j) - 2, "}\n");
    free(j);
    mesh_plan_destroy(p);
}

/* A plan with an arch: the model's computed size (doc/design.md, "Parameter counts":
 * 11 * (2h^2 + 2h^2 kv/heads + 3 h ffn + 2h) + 2 V h + h = 189,553,664), the
 * layout as pinned, the layers of each stage (11 over 4: 2,3,3,3) and the
 * bubble 3/16, in the JSON and the text. */
static void report__json_and_text__pipeline_plan(void **state)
{
    (void)state;
    mesh_model_t m = test_spec("name: tiny\narch: {layers: 11, hidden: 1024, heads: 16, "
                               "kv_heads: 4, ffn: 2816, vocab: 32000, mlp: swiglu}\n"
                               "train: {seq_len: 2048, global_batch: 32}\n");
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    mesh_plan_t *p = test_plan(&m, &a, "tp=2,pp=4,dp=1,cp=1,zero=0,vpp=1,mb=2,recompute=selective");
    char *j = mesh_report_json(p);
    assert_non_null(strstr(j, "{\"model\":{\"name\":\"tiny\",\"params\":189553664,\"layers\":11,"
                              "\"hidden\":1024,\"heads\":16,\"kv_heads\":4,\"ffn\":2816,"
                              "\"vocab\":32000,\"seq_len\":2048,\"global_batch\":32,"));
    assert_non_null(strstr(j, "\"layout\":{\"tp\":2,\"pp\":4,\"dp\":1,\"cp\":1,\"zero\":0,"
                              "\"vpp\":1,\"micro_batch\":2,\"micro_batches\":16,"
                              "\"global_batch\":32,\"recompute\":\"selective\","
                              "\"recompute_layers\":0,\"sequence_parallel\":true,"
                              "\"offload\":\"none\",\"moments\":\"fp32\",\"mesh\":\"tp=2,pp=4,"
                              "dp=1,cp=1,zero=0,vpp=1,mb=2,recompute=selective,sp=on\"}"));
    assert_non_null(strstr(j, ",\"bubble\":0.1875,"));
    assert_non_null(strstr(j, "\"pp_layers\":[2,3,3,3],"));
    const mesh_memory_t *mem = &mesh_plan_best(p)->memory;
    assert_true(mem->total ==
                mem->weights + mem->grads + mem->optimizer + mem->activations + mem->overhead);
    assert_close(json_number(j, "total"), mem->total);
    free(j);
    char *t = mesh_report_text(p);
    assert_non_null(strstr(t, "  layers per stage: 2,3,3,3\n"));
    assert_non_null(
        strstr(t, "  --mesh tp=2,pp=4,dp=1,cp=1,zero=0,vpp=1,mb=2,recompute=selective,sp=on\n"));
    assert_non_null(strstr(t, "   2   1   4    1     0    1            2             16  "
                              "selective  on\n"));
    free(t);
    mesh_plan_destroy(p);
}

/* The text report of the same plan: the allocation, the layout table and
 * the memory breakdown in GiB (2^30 bytes), 29342177280 of 77.6e9 = 38%. */
static void report__text__small_plan_exact(void **state)
{
    (void)state;
    mesh_model_t m = seed_7b();
    mesh_alloc_t a = alloc_80e9(1, 4);
    mesh_plan_t *p = test_plan(&m, &a, "zero=3,mb=2");
    char *t = mesh_report_text(p);
    static const char *const lines[] = {
        "model    seed-7b: 7.00 B parameters (no arch: model states only, no activations)\n"
        "training seq 4096, global batch 64 sequences (262.1 k tokens), bf16, bf16 gradients, "
        "adamw",
        "\non       1 node x 4 generic GPUs (4 in all), 74.5 GiB each, 72.3 GiB usable, NVLink "
        "island 4\n",
        "\nLayout (fits)\n"
        "  TP  CP  PP   DP  ZeRO  VPP  micro-batch  micro-batches  recompute  SP\n"
        "   1   1   1    4     3    1            2              8       none  off\n"
        "  --mesh tp=1,pp=1,dp=4,cp=1,zero=3,vpp=1,mb=2,recompute=none,sp=off\n",
        "\nMemory per GPU (worst rank: pipeline stage 0 of 1, as Megatron-LM allocates it)\n"
        "  weights           3.3 GiB\n"
        "  grads             3.3 GiB\n"
        "  optimizer        19.6 GiB\n"
        "  activations       0.0 GiB\n"
        "  overhead          1.2 GiB\n"
        "  total            27.3 GiB of 72.3 GiB usable (38%)\n",
        "\nWhy not simpler\n"
        "  - plain DP is excluded by the pinned layout fields\n"
        "  - DP + ZeRO-1 is excluded by the pinned layout fields\n"
        "  - DP + ZeRO-2 is excluded by the pinned layout fields\n",
    };
    for (size_t i = 0; i < sizeof(lines) / sizeof(*lines); i++)
        if (!strstr(t, lines[i]))
            fail_msg("the report lacks\n%s\n--- report:\n%s", lines[i], t);
    assert_null(strstr(t, "Runners-up"));
    assert_null(strstr(t, "What would fit"));
    assert_null(strstr(t, "layers per stage"));
    free(t);
    mesh_plan_destroy(p);
    /* one GPU that holds the model plainly: no reasons, and no heading for them */
    mesh_model_t small = test_preset("llama3-8b");
    a = test_alloc("B300", 1, 1);
    p = test_plan(&small, &a, "auto");
    assert_true(mesh_plan_fits(p));
    assert_int_equal(mesh_plan_reason_count(p), 0);
    t = mesh_report_text(p);
    assert_null(strstr(t, "Why "));
    free(t);
    mesh_plan_destroy(p);
}

/* Optimizer offload reaches the JSON, the canonical string and the text. */
/* Counts in the report's words take their unit from its first power: a
 * 1e9-parameter model is "1.00 B", a batch of 1e6 tokens "1.00 M", of 1e3
 * "1.0 k". */
static void report__counts_at_their_units(void **state)
{
    (void)state;
    mesh_model_t m = test_spec("preset: llama3-8b\nparams: 1000000000\n"
                               "train: {global_batch: 250, seq_len: 4000}\n");
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    mesh_plan_t *p = test_plan(&m, &a, "auto");
    char *t = mesh_report_text(p);
    assert_non_null(strstr(t, "model    llama3-8b: 1.00 B parameters ("));
    assert_non_null(strstr(t, ", global batch 250 sequences (1.00 M tokens), "));
    free(t);
    mesh_plan_destroy(p);
    /* and 1,000 tokens are "1.0 k" */
    m = test_spec("preset: llama3-8b\ntrain: {global_batch: 8, seq_len: 125}\n");
    p = test_plan(&m, &a, "auto");
    t = mesh_report_text(p);
    assert_non_null(strstr(t, ", global batch 8 sequences (1.0 k tokens), "));
    free(t);
    mesh_plan_destroy(p);
}

/* Whether the text report of m on a with layout fields `mesh` pinned holds
 * `want`. */
static int text_holds(const mesh_model_t *m, const mesh_alloc_t *a, const char *mesh,
                      const char *want)
{
    mesh_plan_t *p = test_plan(m, a, mesh);
    char *t = mesh_report_text(p);
    int holds = strstr(t, want) != NULL;
    free(t);
    mesh_plan_destroy(p);
    return holds;
}

/* 16-bit moments said to come from where they came from: the spec's
 * train.optimizer_dtype, or a pin the spec does not allow (the manual:
 * taken only when given there); and a MoE stage of one rank in the
 * singular. */
static void report__moments_source_and_one_rank(void **state)
{
    (void)state;
    mesh_model_t m = test_preset("llama3-8b");
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    assert_true(text_holds(&m, &a, "moments=bf16",
                           "  moments: Adam's two moments in bf16 (the pinned moments field)\n"));
    m.optimizer_dtype = MESH_PREC_BF16;
    assert_true(
        text_holds(&m, &a, "moments=bf16",
                   "  moments: Adam's two moments in bf16 (train.optimizer_dtype allows it)\n"));
    mesh_model_t moe = test_preset("qwen3-30b-a3b");
    mesh_alloc_t three = test_alloc("H200", 1, 3);
    assert_true(
        text_holds(&moe, &three, "tp=1,cp=1,dp=1,pp=3", "(each stage's 1 rank re-partitioned)"));
}

static void report__offload_reported(void **state)
{
    (void)state;
    mesh_model_t m = seed_7b();
    mesh_alloc_t a = alloc_80e9(1, 4);
    a.host_memory = 1e12;
    mesh_plan_t *p = test_plan(&m, &a, "zero=1,mb=1,offload=optimizer");
    assert_true(mesh_plan_fits(p));
    char *j = mesh_report_json(p);
    assert_non_null(strstr(j, "\"offload\":\"optimizer\",\"moments\":\"fp32\",\"mesh\":\"tp=1,pp=1,"
                              "dp=4,cp=1,zero=1,vpp=1,mb=1,recompute=none,sp=off,"
                              "offload=optimizer\"}"));
    assert_non_null(strstr(j, "\"host_memory\":1000000000000}"));
    free(j);
    char *t = mesh_report_text(p);
    assert_non_null(strstr(t, "  offload: the optimizer states and master weights live in host "
                              "memory, updated by the CPU\n"));
    /* 1e12 bytes, of which the search lets the optimizer have 80% */
    assert_non_null(strstr(t, " GiB per node of 745.1 GiB usable (80% of 931.3 GiB)\n"));
    free(t);
    mesh_plan_destroy(p);
}

/* The report's Megatron-LM line is what the plugin exports: in the JSON as
 * "megatron_args" (for the closest layout too), in the text, for a layout
 * that fits, wrapped for a shell at 100 columns between flags. */
static void report__megatron_line_is_the_exported_one(void **state)
{
    (void)state;
    mesh_model_t m = test_preset("llama3-70b");
    mesh_alloc_t a = test_alloc("H100-SXM", 16, 8);
    for (int fits = 1; fits >= 0; fits--) {
        if (!fits)
            a.nodes = 1;
        mesh_plan_t *p = test_plan(&m, &a, "auto");
        assert_int_equal(mesh_plan_fits(p), fits);
        char *want = test_env_value(p, "MESH_MEGATRON_ARGS"), *j = mesh_report_json(p),
             *t = mesh_report_text(p);
        assert_non_null(strstr(want, "--num-layers 80 ")); /* the whole line */
        const char *at = strstr(j, ",\"megatron_args\":\"");
        assert_non_null(at);
        at += strlen(",\"megatron_args\":\"");
        assert_int_equal(strncmp(at, want, strlen(want)), 0);
        assert_int_equal(at[strlen(want)], '"');
        const char *head = "\nMegatron-LM (MESH_MEGATRON_ARGS; data, tokenizer and schedule are "
                           "yours)\n  ";
        const char *sec = strstr(t, head);
        if (!fits) {
            assert_null(sec);
        } else {
            /* joined back: the same line; each line at most 100 columns */
            assert_non_null(sec);
            char joined[4096] = "";
            size_t n = 0;
            for (const char *c = sec + strlen(head) - 2; *c && *c != '\n' && n < 4000;) {
                const char *eol = strchr(c, '\n');
                size_t len = (size_t)(eol - c);
                assert_true(len <= 100);
                int more = len >= 2 && c[len - 1] == '\\';
                assert_int_equal(strncmp(c, "  ", 2), 0);
                n += (size_t)snprintf(joined + n, sizeof(joined) - n, "%s%.*s", n ? " " : "",
                                      (int)(len - 2 - (more ? 2 : 0)), c + 2);
                c = more ? eol + 1 : eol;
            }
            assert_string_equal(joined, want);
        }
        free(want);
        free(j);
        free(t);
        mesh_plan_destroy(p);
    }
}

/* Preset `name` with train.finetune: lora. */
static mesh_model_t lora_preset(const char *name)
{
    mesh_model_t m = test_preset(name);
    m.finetune = MESH_FINETUNE_LORA;
    return m;
}

/* A LoRA plan's report says why Megatron-LM gets no flags, as the plugin
 * exports none: the text in the Megatron-LM line's place (a plan that fits),
 * the JSON as "megatron_args": null with "megatron_withheld" (the closest
 * layout too), and "megatron_env" empty. */
static void report__lora_withholds_megatron(void **state)
{
    (void)state;
    mesh_model_t m = lora_preset("llama3-70b");
    mesh_alloc_t a = test_alloc("H100-SXM", 2, 8);
    const char *why = "Megatron-LM has no LoRA (at d98e8a6): its flags would train every weight; "
                      "train the adapters with Hugging Face PEFT under DeepSpeed "
                      "(MESH_DEEPSPEED_CONFIG), or set framework: torch to plan them under "
                      "PyTorch";
    char want[512];
    for (int fits = 1; fits >= 0; fits--) {
        mesh_plan_t *p = test_plan(&m, &a, fits ? "zero=3" : "tp=1,pp=1,zero=0");
        assert_int_equal(mesh_plan_fits(p), fits);
        char *j = mesh_report_json(p), *t = mesh_report_text(p);
        snprintf(want, sizeof(want), ",\"megatron_args\":null,\"megatron_withheld\":\"%s\",", why);
        assert_non_null(strstr(j, want));
        assert_non_null(strstr(j, ",\"megatron_env\":{},"));
        snprintf(want, sizeof(want), "\nMegatron-LM: MESH_MEGATRON_ARGS is not exported: %s\n",
                 why);
        assert_true((strstr(t, want) != NULL) == fits);
        assert_null(strstr(t, "--num-layers"));
        free(j);
        free(t);
        mesh_plan_destroy(p);
    }
}

/* m on a that does not fit under pins mesh: its one line of advice is want. */
static void sole_advice(const mesh_model_t *m, const mesh_alloc_t *a, const char *mesh,
                        const char *want)
{
    mesh_plan_t *p = test_plan(m, a, mesh);
    assert_true(!mesh_plan_fits(p) && mesh_plan_advice_count(p) == 1);
    assert_string_equal(mesh_plan_advice(p, 0), want);
    mesh_plan_destroy(p);
}

/* LoRA runs under DeepSpeed with Hugging Face PEFT, whose exported config
 * has ZeRO and data parallelism only: a LoRA plan under auto is
 * data-parallel (Llama 3 70B on 8 H100s: tp=1 and ZeRO-3, where TP was
 * chosen before), pins of another dimension are refused naming the key,
 * pins of 1 kept, and the advice for a full-training spec offers a
 * data-parallel layout; under framework: torch the program runs TP. */
static void lora__data_parallel_unless_torch(void **state)
{
    (void)state;
    mesh_model_t m = lora_preset("llama3-70b");
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    mesh_plan_t *p = test_plan(&m, &a, NULL);
    const mesh_layout_t *b = &mesh_plan_best(p)->layout;
    assert_true(mesh_plan_fits(p));
    assert_true(b->tp == 1 && b->pp == 1 && b->cp == 1 && b->vpp == 1 && b->dp == 8);
    assert_int_equal(b->zero, 3);
    assert_int_equal(mesh_plan_best(p)->memory.framework, MESH_FW_DEEPSPEED);
    mesh_plan_destroy(p);
    p = test_plan(&m, &a, "tp=1,pp=1,cp=1,vpp=1"); /* what it holds anyway */
    assert_int_equal(mesh_plan_best(p)->layout.dp, 8);
    mesh_plan_destroy(p);
    static const char *const refused[][2] = {
        {"tp=2", "tp=2"}, {"pp=2", "pp=2"}, {"cp=2", "cp=2"}, {"pp=1,vpp=2", "vpp=2"}};
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    mesh_error_t err;
    char want[160];
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        mesh_layout_t pins = test_mesh(refused[i][0]);
        assert_null(mesh_plan_create(&m, &a, &pins, &pol.assume, &err));
        snprintf(want, sizeof(want),
                 "mesh %s: LoRA trains under DeepSpeed with Hugging Face PEFT, ", refused[i][1]);
        if (strncmp(err.msg, want, strlen(want)) != 0)
            fail_msg("%s: %s", refused[i][0], err.msg);
        assert_non_null(strstr(err.msg, "; leave "));
        assert_non_null(strstr(err.msg, " out, or set framework: torch if your program applies the "
                                        "layout itself"));
    }
    /* every pin in the way at once, so that one change frees them all */
    mesh_layout_t both = test_mesh("tp=2,pp=2,dp=2");
    assert_null(mesh_plan_create(&m, &a, &both, &pol.assume, &err));
    assert_int_equal(strncmp(err.msg, "mesh tp=2,pp=2: LoRA", 20), 0);
    assert_non_null(strstr(err.msg, "; leave tp, pp out, or set framework: torch"));
    /* a MoE model's experts too */
    mesh_model_t moe = lora_preset("mixtral-8x7b");
    mesh_layout_t pins = test_mesh("ep=8");
    assert_null(mesh_plan_create(&moe, &a, &pins, &pol.assume, &err));
    assert_int_equal(strncmp(err.msg, "mesh ep=8: LoRA", 15), 0);
    p = test_plan(&moe, &a, NULL);
    assert_int_equal(mesh_plan_best(p)->layout.ep, 1);
    mesh_plan_destroy(p);
    /* under framework: torch the search is the full one */
    m.framework = MESH_FW_TORCH;
    p = test_plan(&m, &a, "tp=2");
    assert_int_equal(mesh_plan_best(p)->layout.tp, 2);
    mesh_plan_destroy(p);
    p = test_plan(&m, &a, NULL);
    assert_true(mesh_plan_best(p)->layout.tp > 1);
    mesh_plan_destroy(p);
    /* a LoRA spec that does not fit: more nodes for it, data-parallel, and
     * never a pin it holds (tp=1, pp=1) offered to give up (tp=8 or pp=8
     * would fit here) */
    m.framework = MESH_FW_AUTO;
    a = test_alloc("A100-40GB", 1, 8);
    sole_advice(&m, &a, "zero=2",
                "2 nodes (16 GPUs) would fit its LoRA adapters' training: "
                "tp=1,pp=1,dp=16,cp=1,zero=3,vpp=1,mb=1,recompute=full,sp=off (35.2 GiB per GPU)");
    /* DeepSpeed keeps fp32 moments: a LoRA plan's pin of bf16 ones is refused */
    a = test_alloc("H100-SXM", 1, 8);
    mesh_layout_t bf16 = test_mesh("moments=bf16");
    assert_null(mesh_plan_create(&m, &a, &bf16, &pol.assume, &err));
    assert_non_null(strstr(err.msg, "moments=bf16: DeepSpeed keeps fp32 Adam moments: use "
                                    "moments=fp32"));
    /* a library caller's LoRA under framework megatron (a spec's is refused) is DeepSpeed's too */
    m.framework = MESH_FW_MEGATRON;
    p = test_plan(&m, &a, NULL);
    assert_int_equal(mesh_plan_model(p)->framework, MESH_FW_DEEPSPEED);
    assert_int_equal(mesh_plan_best(p)->layout.tp, 1);
    mesh_plan_destroy(p);
    /* a batch with an odd factor (Nemotron-4 340B's 2,304): only counts whose
     * GPUs divide it, so 36 nodes, where powers of two (64: 512 GPUs) never
     * do and 32 does not fit */
    mesh_model_t nem = lora_preset("nemotron4-340b");
    mesh_alloc_t a47 = test_alloc_mem("A100-40GB", 47.4 * 1073741824.0, 1, 8);
    sole_advice(&nem, &a47, NULL,
                "36 nodes (288 GPUs) would fit its LoRA adapters' training: "
                "tp=1,pp=1,dp=288,cp=1,zero=3,vpp=1,mb=1,recompute=full,sp=off (45.9 GiB per GPU)");
    /* the advice of a full-training spec that does not fit */
    m = test_preset("llama3.1-405b");
    p = test_plan(&m, &a, NULL);
    assert_false(mesh_plan_fits(p));
    int found = 0;
    for (int i = 0; mesh_plan_advice(p, i); i++)
        if (strstr(mesh_plan_advice(p, i), "parameter-efficient")) {
            found = 1;
            assert_non_null(strstr(mesh_plan_advice(p, i), "tp=1,pp=1,dp=64,cp=1,zero=3,"));
        }
    assert_true(found);
    mesh_plan_destroy(p);
    /* and under framework: torch, whose search keeps TP: named so */
    m.framework = MESH_FW_TORCH;
    p = test_plan(&m, &a, NULL);
    const char *torch = NULL;
    for (int i = 0; mesh_plan_advice(p, i); i++)
        if (strstr(mesh_plan_advice(p, i), "parameter-efficient"))
            torch = mesh_plan_advice(p, i);
    assert_non_null(torch);
    assert_non_null(strstr(torch, "(train.finetune: lora, under PyTorch with Hugging Face PEFT) "
                                  "would fit on"));
    mesh_plan_destroy(p);
}

/* The report's MoE line counts the dense layers that lead: "the first
 * layer" of Kimi K2's kind, "the first 3 layers" of DeepSeek-V3, and those
 * between MoE layers every few (Llama 4 Maverick's kind). */
static void report__moe_line_counts_the_leading_dense_layers(void **state)
{
    (void)state;
    const char *want[] = {", 2 per token, the first layer dense, dropless\n",
                          ", 2 per token, the first 3 layers dense, dropless\n"};
    for (int dense = 1; dense <= 3; dense += 2) {
        mesh_model_t m = test_specf("name: few-dense\narch: {layers: 8, hidden: 256, heads: 4, "
                                    "vocab: 1000, moe: {experts: 8, top_k: 2, ffn: 128, "
                                    "dense_layers: %d}}\n",
                                    dense);
        mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
        mesh_plan_t *p = test_plan(&m, &a, "auto");
        char *t = mesh_report_text(p);
        assert_non_null(strstr(t, want[dense / 2]));
        free(t);
        mesh_plan_destroy(p);
    }
    /* MoE every few layers: how many of the layers, the others dense */
    mesh_model_t odd = test_spec("name: odd-moe\narch: {layers: 9, hidden: 256, heads: 4, vocab: "
                                 "1000, moe: {experts: 8, top_k: 2, ffn: 128, every: 2}}\n");
    mesh_alloc_t one = test_alloc("H100-SXM", 1, 8);
    mesh_plan_t *q = test_plan(&odd, &one, "auto");
    char *u = mesh_report_text(q);
    if (!strstr(u, ", 2 per token, on one layer in 2 (4 of 9), the others dense, dropless\n"))
        fail_msg("%s", u);
    free(u);
    mesh_plan_destroy(q);
    /* and on that line, the latent attention and the MTP layers after the
     * experts, each after a "; " (DeepSeek-V3's) */
    mesh_model_t m = test_preset("deepseek-v3");
    mesh_alloc_t a = test_alloc("H100-SXM", 128, 8);
    mesh_plan_t *p = test_plan(&m, &a, "auto");
    char *t = mesh_report_text(p);
    const char *line = strstr(t, "\n         MoE: 256 experts");
    assert_non_null(line);
    assert_non_null(strstr(line, ", dropless; latent attention (q rank 1536, kv rank 512); 1 MTP "
                                 "layer ("));
    free(t);
    mesh_plan_destroy(p);
    /* a dense model's: the line opens with the latent attention, and the
     * MTP layers follow it after a "; " too (seed 120527's report.c:68) */
    m = test_spec("name: mla-mtp\narch: {layers: 8, hidden: 256, heads: 4, vocab: 1000, "
                  "mtp_layers: 1, mla: {q_lora_rank: 64, kv_lora_rank: 32, qk_head_dim: 32, "
                  "qk_rope_head_dim: 16, v_head_dim: 32}}\n");
    a = test_alloc("H100-SXM", 1, 8);
    p = test_plan(&m, &a, "auto");
    t = mesh_report_text(p);
    assert_non_null(
        strstr(t, ")\n         latent attention (q rank 64, kv rank 32); 1 MTP layer ("));
    free(t);
    mesh_plan_destroy(p);
}

/* The columns of the first flag on a wrapped line at c: after its two
 * spaces, up to the next " --" or the line's end (its " \" left out);
 * *last: it is the section's last flag, which no " \" follows. */
static size_t first_flag_width(const char *c, int *last)
{
    size_t line = strcspn(c, "\n");
    int continued = line >= 2 && c[line - 1] == '\\';
    line -= continued ? 2 : 0;
    const char *next = strstr(c + 2, " --");
    int more = next && (size_t)(next - c) < line;
    *last = !continued && !more;
    return (more ? (size_t)(next - c) : line) - 2;
}

/* The report's Megatron-LM lines are filled: a flag starts the next line
 * only when it and the " \" that would follow it (none after the last)
 * would pass 100 columns, on the first line too (128 layers, hidden 16384,
 * 128 heads and ffn 131072 make it 100 wide, ended by --swiglu); a quoted
 * value counts its quotes (the small MoE's --moe-layer-freq, 32 columns
 * with them, would make a line of 101); the last flag needs no room for
 * a " \" (Llama 3 70B's --tp-comm-overlap ends a line of 99). */
static void report__megatron_lines_filled_to_100_columns(void **state)
{
    (void)state;
    const struct {
        mesh_model_t m;
        int nodes;
    } cases[] = {
        {test_spec("name: wide\narch: {layers: 128, hidden: 16384, heads: 128, ffn: 131072, "
                   "vocab: 32000}\ntrain: {seq_len: 2048, global_batch: 512}\n"),
         64},
        {test_spec("name: q\narch: {layers: 8, hidden: 2048, heads: 32, kv_heads: 8, vocab: 32000, "
                   "moe: {experts: 128, top_k: 2, ffn: 1024, dense_layers: 1}}\n"
                   "train: {seq_len: 4096, global_batch: 256}\n"),
         1},
        {test_preset("deepseek-v3"), 64},
        {test_preset("llama3-70b"), 16}};
    size_t widest = 0;
    for (int i = 0; i < MESH_ARRAY_LEN(cases); i++) {
        mesh_alloc_t a = test_alloc("H100-SXM", cases[i].nodes, 8);
        mesh_plan_t *p = test_plan(&cases[i].m, &a, "auto");
        char *t = mesh_report_text(p), *c = strstr(t, "are yours)\n");
        assert_non_null(c);
        c = strchr(c, '\n') + 1;
        for (int more = 1; more;) {
            char *eol = strchr(c, '\n');
            size_t w = (size_t)(eol - c);
            more = w >= 2 && strncmp(eol - 2, " \\", 2) == 0;
            assert_true(w <= 100);
            widest = i == 0 && w > widest ? w : widest;
            int last;
            size_t f = more ? first_flag_width(eol + 1, &last) : 0;
            if (more && w - 2 + 1 + f + (last ? 0 : 2) <= 100)
                fail_msg("plan %d: the flag after '%.*s' would have fit it", i, (int)w, c);
            if (!more && i == 3 && (w != 99 || strncmp(eol - 17, "--tp-comm-overlap", 17)))
                fail_msg("Llama 3 70B's last line: '%.*s'", (int)w, c);
            c = eol + 1;
        }
        free(t);
        mesh_plan_destroy(p);
    }
    assert_int_equal(widest, 100);
}

/* The rank map of the example in doc/design.md, "Rank map" (world 16, t 2, p 4, d 2):
 * rank 13 is node 1, GPU 5, tp 1, dp 0, pp 3; rank 6 dp 1, pp 1. */
static void report__ranks_design_example(void **state)
{
    (void)state;
    mesh_model_t m = test_preset("llama2-7b");
    m.global_batch = 16;
    mesh_alloc_t a = test_alloc("H100-SXM", 2, 8);
    mesh_plan_t *p =
        test_plan(&m, &a, "tp=2,pp=4,dp=2,cp=1,zero=1,vpp=1,mb=2,recompute=none,sp=on");
    char *j = mesh_report_ranks_json(p);
    assert_non_null(strstr(j, "{\"order\":\"tp-cp-dp-pp\",\"mesh\":\"tp=2,pp=4,dp=2,cp=1,zero=1,"
                              "vpp=1,mb=2,recompute=none,sp=on\",\"ranks\":[{\"rank\":0,"
                              "\"node\":0,\"local\":0,\"tp\":0,\"cp\":0,\"dp\":0,\"pp\":0},"));
    assert_non_null(strstr(j, ",{\"rank\":6,\"node\":0,\"local\":6,\"tp\":0,\"cp\":0,\"dp\":1,"
                              "\"pp\":1},"));
    assert_non_null(strstr(j, ",{\"rank\":13,\"node\":1,\"local\":5,\"tp\":1,\"cp\":0,\"dp\":0,"
                              "\"pp\":3},"));
    assert_non_null(strstr(j, ",{\"rank\":15,\"node\":1,\"local\":7,\"tp\":1,\"cp\":0,\"dp\":1,"
                              "\"pp\":3}]}\n"));
    free(j);
    char *t = mesh_report_ranks_text(p);
    assert_non_null(strstr(t, "rank map of tp=2,pp=4,dp=2,cp=1,zero=1,vpp=1,mb=2,recompute=none,"
                              "sp=on, order tp-cp-dp-pp (rank = tp + t*(cp + c*(dp + d*pp)))\n"
                              "   rank  node  local    tp   cp    dp    pp\n"
                              "      0     0      0     0    0     0     0\n"));
    assert_non_null(strstr(t, "\n     13     1      5     1    0     0     3\n"));
    int rows = 0;
    for (const char *c = t; (c = strchr(c, '\n')); c++)
        rows++;
    assert_int_equal(rows, 2 + 16);
    free(t);
    mesh_plan_destroy(p);
    /* with CP, its column before DP's: rank = tp + 2*(cp + 2*dp), so rank 2
     * is cp 1, dp 0 and rank 4 cp 0, dp 1 */
    a = test_alloc("H100-SXM", 1, 8);
    p = test_plan(&m, &a, "tp=2,pp=1,dp=2,cp=2,zero=1,vpp=1,mb=1,recompute=full,sp=on");
    t = mesh_report_ranks_text(p);
    assert_non_null(strstr(t, "\n      2     0      2     0    1     0     0\n"));
    assert_non_null(strstr(t, "\n      4     0      4     0    0     1     0\n"));
    free(t);
    mesh_plan_destroy(p);
}

/* The verdict every front end takes from the library: run, warn or refuse
 * by the policy's enforce, with mesh_report_nofit's words. */
static void verdict__by_enforce(void **state)
{
    mesh_policy_t pol;
    mesh_layout_t pins;
    mesh_error_t err;
    char msg[4096], nofit[4096];
    mesh_policy_init(&pol);
    mesh_layout_unpin(&pins);
    mesh_model_t big = test_preset("llama3.1-405b"), small = test_preset("llama3-8b");
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    mesh_plan_t *p = mesh_plan_create(&big, &a, &pins, &pol.assume, &err);
    assert_non_null(p);
    assert_false(mesh_plan_fits(p));
    mesh_report_nofit(p, nofit, sizeof(nofit));
    assert_int_equal(strncmp(nofit, "llama3.1-405b does not fit on 1 x 8 H100-SXM GPUs: ", 51), 0);
    assert_int_equal(mesh_plan_verdict(p, MESH_ENFORCE_REJECT, msg, sizeof(msg)),
                     MESH_VERDICT_REFUSE);
    assert_string_equal(msg, nofit);
    strcpy(msg, "stale");
    assert_int_equal(mesh_plan_verdict(p, MESH_ENFORCE_WARN, msg, sizeof(msg)), MESH_VERDICT_WARN);
    assert_string_equal(msg, nofit);
    assert_int_equal(mesh_plan_verdict(p, MESH_ENFORCE_OFF, msg, sizeof(msg)), MESH_VERDICT_RUN);
    assert_string_equal(msg, "");
    mesh_plan_destroy(p);
    p = mesh_plan_create(&small, &a, &pins, &pol.assume, &err);
    assert_non_null(p);
    strcpy(msg, "stale");
    assert_int_equal(mesh_plan_verdict(p, MESH_ENFORCE_REJECT, msg, sizeof(msg)), MESH_VERDICT_RUN);
    assert_string_equal(msg, "");
    mesh_plan_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(verdict__by_enforce),
        cmocka_unit_test(report__json__small_plan_exact),
        cmocka_unit_test(report__json_and_text__pipeline_plan),
        cmocka_unit_test(report__text__small_plan_exact),
        cmocka_unit_test(report__offload_reported),
        cmocka_unit_test(report__moments_source_and_one_rank),
        cmocka_unit_test(report__counts_at_their_units),
        cmocka_unit_test(report__megatron_line_is_the_exported_one),
        cmocka_unit_test(report__lora_withholds_megatron),
        cmocka_unit_test(lora__data_parallel_unless_torch),
        cmocka_unit_test(report__megatron_lines_filled_to_100_columns),
        cmocka_unit_test(report__moe_line_counts_the_leading_dense_layers),
        cmocka_unit_test(report__ranks_design_example),
    };
    return cmocka_run_group_tests_name("plan_report", tests, NULL, NULL);
}
