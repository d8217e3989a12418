/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The adapters against the real programs' names.  Every flag meshplan puts in
 * MESH_MEGATRON_ARGS must be an argument of Megatron-LM's arguments.py, with a
 * value of the form it parses; MESH_DEEPSPEED_CONFIG must use only keys
 * DeepSpeed's config reads, with values of their kinds, and satisfy
 * DeepSpeed's batch identity.  The name lists in tests/fixtures/adapters/ were
 * transcribed from those programs' sources; their headers name the commits.
 *
 * Checked over every preset, several allocations and every kind of layout
 * (ZeRO 0-3, recomputation, interleaving, uneven splits, CP, fp16/fp32).
 */
#include <errno.h>
#include <math.h>
#include <yaml.h>

#include "testutil.h"

/* ---- the fixture tables: "NAME KIND [RANGE]" lines ---- */

typedef struct {
    char name[96];
    char kind[256];
} entry_t;

typedef struct {
    entry_t *e;
    int n;
} table_t;

static table_t load_table(const char *file)
{
    char path[1024], line[512];
    snprintf(path, sizeof(path), "%s/adapters/%s", getenv("MESH_FIXTURES"), file);
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("cannot open %s", path);
    table_t t = {calloc(2048, sizeof(entry_t)), 0};
    while (fgets(line, sizeof(line), f) && t.n < 2048) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        entry_t *e = &t.e[t.n];
        if (sscanf(line, "%95s %255s", e->name, e->kind) == 2)
            t.n++;
    }
    fclose(f);
    if (t.n < 50)
        fail_msg("%s: only %d entries", path, t.n);
    return t;
}

static const char *kind_of(const table_t *t, const char *name)
{
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->e[i].name, name) == 0)
            return t->e[i].kind;
    return NULL;
}

static int is_int(const char *s)
{
    char *end;
    errno = 0;
    (void)strtol(s, &end, 10);
    return *s && !*end && !errno;
}

static int is_float(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    return *s && !*end && isfinite(v);
}

/* "choice:a|b|c" (a trailing + means several values may follow) */
static int in_choice(const char *kind, const char *v)
{
    char set[256];
    snprintf(set, sizeof(set), "%s", kind + strlen("choice:"));
    set[strcspn(set, "+")] = '\0';
    for (char *save, *c = strtok_r(set, "|", &save); c; c = strtok_r(NULL, "|", &save))
        if (strcmp(c, v) == 0)
            return 1;
    return 0;
}

/* ---- the layouts to render ---- */

static const char *get(const mesh_env_t *e, const char *name)
{
    for (int i = 0; i < mesh_env_count(e); i++)
        if (strcmp(mesh_env_name(e, i), name) == 0)
            return mesh_env_value(e, i);
    return NULL;
}

static mesh_env_t *env_of(const mesh_plan_t *p)
{
    mesh_task_t t = {.master_addr = "n1", .master_port = 20000, .numa_node = -1};
    mesh_error_t err;
    mesh_env_t *e = mesh_env_create(p, &t, &err);
    if (!e)
        fail_msg("%s", err.msg);
    return e;
}

/* Calls check(plan, env) for every (preset or spec) x allocation x pin that
 * is a valid layout; returns how many. */
typedef void (*check_fn)(const mesh_plan_t *p, const mesh_env_t *e, const table_t *t);

/* An allocation of so many nodes of 8 H100s, and the --mesh pins. */
typedef struct {
    int nodes;
    const char *pins;
} layout_case_t;

static int for_each_of(const char *const *specs, size_t n_specs, const layout_case_t *cases,
                       size_t n_cases, check_fn check, const table_t *t);

static int for_each_layout(check_fn check, const table_t *t)
{
    static const char *specs[] = {
        "preset: llama2-7b",
        "preset: llama2-13b",
        "preset: llama2-70b",
        "preset: llama3-8b",
        "preset: llama3-70b",
        "preset: llama3.1-405b",
        "preset: gpt3-175b",
        "preset: params-only",
        /* fp16 (loss scaling) and fp32, and an fp32 gradient accumulation */
        "preset: llama2-7b\ntrain:\n  precision: fp16\n",
        "preset: llama2-7b\ntrain:\n  precision: fp32\n",
        /* 30 layers: uneven splits over 4 and 8 stages */
        "preset: llama2-7b\narch:\n  layers: 30\n",
        /* 2-byte gradient buffers, FP8, 16-bit moments, SGD, one framework */
        "preset: llama2-7b\ntrain:\n  grad_accum_dtype: bf16\n",
        "preset: llama3-8b\ntrain:\n  precision: fp8\n",
        "preset: llama3-8b\ntrain:\n  precision: fp8\n  fp8_recipe: blockwise\n",
        "preset: llama2-7b\ntrain:\n  optimizer_dtype: bf16\n  framework: megatron\n",
        "preset: llama2-7b\ntrain:\n  optimizer: sgd\n",
        "preset: llama2-7b\ntrain:\n  precision: fp16\n  grad_accum_dtype: fp32\n",
        /* the model's flags: --kv-channels, the unfused attention, dropout */
        "preset: llama3-8b\narch:\n  head_dim: 256\n",
        "preset: llama2-7b\ntrain:\n  flash_attention: false\n  dropout: 0.1\n",
    };
    static const layout_case_t cases[] = {
        {1, ""},
        {2, ""},
        {16, ""},
        {128, ""},
        {4, "zero=1"},
        {4, "zero=2"},
        {4, "zero=3,recompute=full"},
        {4, "recompute=selective"},
        {4, "tp=2,pp=4"},
        {8, "tp=8,pp=8,vpp=2"},
        {16, "tp=8,pp=4,vpp=2,zero=1"},
        {8, "tp=4,cp=2,pp=2"},
        {2, "tp=1,pp=1,zero=3,mb=1"},
        /* the memory levers */
        {4, "zero=1,offload=optimizer"},
        {4, "zero=3,offload=optimizer"},
        {4, "zero=2,moments=bf16"},
        {4, "pp=2,recompute=full:3"},
        {4, "recompute=selective:layernorm+mlp"},
        {4, "recompute=selective:core_attn+mlp"},
    };
    return for_each_of(specs, sizeof(specs) / sizeof(*specs), cases, sizeof(cases) / sizeof(*cases),
                       check, t);
}

/* check(plan, env) for every spec x case that is a valid layout; returns how many. */
static int for_each_of(const char *const *specs, size_t n_specs, const layout_case_t *cases,
                       size_t n_cases, check_fn check, const table_t *t)
{
    int n = 0;
    for (size_t s = 0; s < n_specs; s++) {
        mesh_model_t m = test_spec(specs[s]);
        for (size_t c = 0; c < n_cases; c++) {
            mesh_policy_t pol;
            mesh_error_t err;
            mesh_layout_t pins;
            mesh_policy_init(&pol);
            pol.enforce = MESH_ENFORCE_OFF;
            if (mesh_layout_parse(cases[c].pins, &pins, &err) < 0)
                fail_msg("%s", err.msg);
            mesh_alloc_t a = test_alloc("H100-SXM", cases[c].nodes, 8);
            a.host_memory = 2e12;
            mesh_plan_t *p = mesh_plan_create(&m, &a, &pins, &pol.assume, &err);
            if (!p)
                continue; /* not a valid layout for this model (e.g. layers vs stages) */
            mesh_env_t *e = env_of(p);
            check(p, e, t);
            mesh_env_destroy(e);
            mesh_plan_destroy(p);
            n++;
        }
    }
    return n;
}

/* ---- Megatron-LM ---- */

static long layout_int(const mesh_env_t *e, const char *name)
{
    const char *v = get(e, name);
    assert_non_null(v);
    return strtol(v, NULL, 10);
}

static void check_megatron(const mesh_plan_t *p, const mesh_env_t *e, const table_t *t)
{
    const char *args = get(e, "MESH_MEGATRON_ARGS");
    assert_non_null(args);
    char buf[2048], *tok[128];
    int n = 0;
    if (strlen(args) >= sizeof(buf)) /* checked whole, or not at all */
        fail_msg("MESH_MEGATRON_ARGS is longer than the checker reads: %s", args);
    snprintf(buf, sizeof(buf), "%s", args);
    for (char *save, *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        if (n == 128)
            fail_msg("MESH_MEGATRON_ARGS has more words than the checker reads: %s", args);
        tok[n++] = w;
    }
    long tp = 0, pp = 0, cp = 0, mb = 0, gb = 0;
    int first_last = 0, account = 0, vpp = 0;
    for (int i = 0; i < n; i++) {
        const char *flag = tok[i], *kind = kind_of(t, flag);
        if (strncmp(flag, "--", 2) != 0 || !kind)
            fail_msg("MESH_MEGATRON_ARGS: '%s' is not a Megatron-LM argument (in: %s)", flag, args);
        const char *v = i + 1 < n && strncmp(tok[i + 1], "--", 2) != 0 ? tok[++i] : NULL;
        /* nargs '+': every value up to the next flag, each checked */
        size_t kl = strlen(kind);
        while (v && kind[kl - 1] == '+' && i + 1 < n && strncmp(tok[i + 1], "--", 2) != 0) {
            if (strncmp(kind, "choice:", 7) == 0 && !in_choice(kind, tok[i + 1]))
                fail_msg("%s: '%s' is not a valid %s", flag, tok[i + 1], kind);
            i++;
        }
        if (strcmp(kind, "flag") == 0) {
            if (v)
                fail_msg("%s takes no value, got '%s'", flag, v);
        } else {
            if (!v)
                fail_msg("%s (%s) needs a value (in: %s)", flag, kind, args);
            if ((strcmp(kind, "int") == 0 && (!is_int(v) || strtol(v, NULL, 10) < 1)) ||
                (strcmp(kind, "float") == 0 && !is_float(v)) ||
                (strncmp(kind, "choice:", 7) == 0 && !in_choice(kind, v)))
                fail_msg("%s: '%s' is not a valid %s", flag, v, kind);
        }
        long iv = v ? strtol(v, NULL, 10) : 0;
        tp = strcmp(flag, "--tensor-model-parallel-size") == 0 ? iv : tp;
        pp = strcmp(flag, "--pipeline-model-parallel-size") == 0 ? iv : pp;
        cp = strcmp(flag, "--context-parallel-size") == 0 ? iv : cp;
        mb = strcmp(flag, "--micro-batch-size") == 0 ? iv : mb;
        gb = strcmp(flag, "--global-batch-size") == 0 ? iv : gb;
        first_last |= strncmp(flag, "--decoder-", 10) == 0;
        account |= strncmp(flag, "--account-for-", 14) == 0;
        vpp |= strcmp(flag, "--num-layers-per-virtual-pipeline-stage") == 0 ||
               strcmp(flag, "--pipeline-model-parallel-layout") == 0;
    }
    /* the same layout as the MESH_* variables, and what Megatron asserts */
    assert_int_equal(tp, layout_int(e, "MESH_TP_SIZE"));
    assert_int_equal(pp, layout_int(e, "MESH_PP_SIZE"));
    assert_int_equal(cp, layout_int(e, "MESH_CP_SIZE"));
    assert_int_equal(mb, layout_int(e, "MESH_MICRO_BATCH_SIZE"));
    assert_int_equal(gb, layout_int(e, "MESH_GLOBAL_BATCH_SIZE"));
    long dp = layout_int(e, "MESH_DP_SIZE");
    assert_int_equal(gb % (mb * dp), 0); /* Megatron's micro-batch calculator */
    assert_int_equal(vpp, layout_int(e, "MESH_VPP_SIZE") > 1);
    if (first_last && (account || vpp))
        fail_msg("uneven first/last stages combined with interleaving flags: %s", args);
    if (strstr(args, "--sequence-parallel") && tp == 1)
        fail_msg("--sequence-parallel with tp 1: %s", args);
    (void)p;
}

static void megatron__every_flag_is_real(void **state)
{
    table_t t = load_table("megatron-arguments.txt");
    int n = for_each_layout(check_megatron, &t);
    assert_true(n > 100);
    free(t.e);
}

/* The flags of the MoE presets (experts, MLA, MTP) under expert layouts:
 * every one an argument of Megatron-LM's, each layout's sizes the same as
 * the MESH_* variables', and the model's as the spec says. */
static long flag_value(const char *args, const char *flag)
{
    char pat[96];
    snprintf(pat, sizeof(pat), "%s ", flag);
    const char *at = strstr(args, pat);
    return at ? strtol(at + strlen(pat), NULL, 10) : -1;
}

static void check_megatron_moe(const mesh_plan_t *p, const mesh_env_t *e, const table_t *t)
{
    const mesh_model_t *m = mesh_plan_model(p);
    check_megatron(p, e, t);
    const char *args = get(e, "MESH_MEGATRON_ARGS");
    assert_int_equal(flag_value(args, "--expert-model-parallel-size"),
                     layout_int(e, "MESH_EP_SIZE"));
    assert_int_equal(flag_value(args, "--expert-tensor-parallel-size"),
                     layout_int(e, "MESH_ETP_SIZE"));
    assert_int_equal(flag_value(args, "--num-experts"), m->moe.experts);
    assert_int_equal(flag_value(args, "--moe-router-topk"), m->moe.top_k);
    assert_int_equal(flag_value(args, "--moe-ffn-hidden-size"), m->moe.ffn);
    assert_int_equal(flag_value(args, "--kv-lora-rank"),
                     m->mla.kv_lora_rank ? m->mla.kv_lora_rank : -1);
    assert_int_equal(flag_value(args, "--mtp-num-layers"), m->mtp_layers ? m->mtp_layers : -1);
    assert_true((strstr(args, "--moe-expert-capacity-factor") != NULL) ==
                (m->moe.capacity_factor > 0));
}

static void megatron__moe_flags_are_real(void **state)
{
    table_t t = load_table("megatron-arguments.txt");
    static const char *const specs[] = {
        "preset: mixtral-8x7b",
        "preset: mixtral-8x22b",
        "preset: qwen3-30b-a3b",
        "preset: qwen3-235b-a22b",
        "preset: deepseek-v3",
        "preset: deepseek-v3\ntrain:\n  precision: bf16\n",
        "preset: qwen3-30b-a3b\narch:\n  moe:\n    capacity_factor: 1.25\n"};
    static const layout_case_t cases[] = {{8, "ep=8"},         {16, "tp=2,pp=4,ep=8"},
                                          {32, "pp=8,ep=16"},  {16, "tp=2,ep=4,etp=2"},
                                          {64, "pp=16,ep=32"}, {4, "pp=4,ep=4,zero=1"}};
    int n = for_each_of(specs, sizeof(specs) / sizeof(*specs), cases,
                        sizeof(cases) / sizeof(*cases), check_megatron_moe, &t);
    assert_true(n >= 20);
    free(t.e);
}

/* Each table entry that names a real argument is in the fixture, which
 * rules out a fixture that lost its lines. */
static void megatron__fixture_sanity(void **state)
{
    table_t t = load_table("megatron-arguments.txt");
    assert_string_equal(kind_of(&t, "--tensor-model-parallel-size"), "int");
    assert_string_equal(kind_of(&t, "--sequence-parallel"), "flag");
    assert_null(kind_of(&t, "--tensor-parallel-size")); /* DeepSpeed-Megatron's old name */
    free(t.e);
}

/* ---- DeepSpeed: the compact JSON, read with libyaml (JSON is YAML) ---- */

typedef struct {
    char path[256];
    char value[128];
    int quoted, is_map;
} kv_t;

/* Flatten a JSON object into "a.b" paths with their scalar values. */
static int flatten(const char *json, kv_t *out, int max)
{
    yaml_parser_t ps;
    yaml_event_t ev;
    char stack[8][96], leaf[96] = "";
    int depth = 0, n = 0, want_key = 0, done = 0;
    yaml_parser_initialize(&ps);
    yaml_parser_set_input_string(&ps, (const unsigned char *)json, strlen(json));
    while (!done && n < max) {
        if (!yaml_parser_parse(&ps, &ev))
            fail_msg("MESH_DEEPSPEED_CONFIG is not valid JSON: %s", json);
        kv_t *k = &out[n];
        switch (ev.type) {
        case YAML_MAPPING_START_EVENT:
            if (depth >= 8)
                fail_msg("MESH_DEEPSPEED_CONFIG nests too deep: %s", json);
            if (depth > 0) { /* leaf's value is an object */
                snprintf(stack[depth], sizeof(stack[depth]), "%s", leaf);
                k->path[0] = '\0';
                for (int d = 1; d <= depth; d++)
                    snprintf(k->path + strlen(k->path), sizeof(k->path) - strlen(k->path), "%s%s",
                             d > 1 ? "." : "", stack[d]);
                k->is_map = 1;
                n++;
            }
            depth++;
            want_key = 1;
            break;
        case YAML_MAPPING_END_EVENT:
            depth--;
            want_key = 1;
            break;
        case YAML_SCALAR_EVENT:
            if (want_key) {
                snprintf(leaf, sizeof(leaf), "%s", (const char *)ev.data.scalar.value);
                want_key = 0;
                break;
            }
            k->path[0] = '\0';
            for (int d = 1; d < depth; d++)
                snprintf(k->path + strlen(k->path), sizeof(k->path) - strlen(k->path), "%s.",
                         stack[d]);
            snprintf(k->path + strlen(k->path), sizeof(k->path) - strlen(k->path), "%s", leaf);
            snprintf(k->value, sizeof(k->value), "%s", (const char *)ev.data.scalar.value);
            k->quoted = ev.data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
            k->is_map = 0;
            n++;
            want_key = 1;
            break;
        case YAML_SEQUENCE_START_EVENT:
            fail_msg("meshplan writes no lists into the DeepSpeed config: %s", json);
            break;
        case YAML_STREAM_END_EVENT: done = 1; break;
        default: break;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&ps);
    return n;
}

static long ds_int(const kv_t *kv, int n, const char *path)
{
    for (int i = 0; i < n; i++)
        if (strcmp(kv[i].path, path) == 0 && !kv[i].quoted && is_int(kv[i].value))
            return strtol(kv[i].value, NULL, 10);
    fail_msg("MESH_DEEPSPEED_CONFIG has no integer %s", path);
    return -1;
}

static void check_deepspeed(const mesh_plan_t *p, const mesh_env_t *e, const table_t *t)
{
    const char *json = get(e, "MESH_DEEPSPEED_CONFIG");
    assert_non_null(json);
    kv_t kv[64] = {0};
    int n = flatten(json, kv, 64);
    for (int i = 0; i < n; i++) {
        const char *kind = kind_of(t, kv[i].path);
        if (!kind)
            fail_msg("MESH_DEEPSPEED_CONFIG: '%s' is not a DeepSpeed config key (in: %s)",
                     kv[i].path, json);
        int ok = kv[i].is_map                ? strcmp(kind, "object") == 0
                 : strcmp(kind, "int") == 0  ? !kv[i].quoted && is_int(kv[i].value)
                 : strcmp(kind, "bool") == 0 ? !kv[i].quoted && (!strcmp(kv[i].value, "true") ||
                                                                 !strcmp(kv[i].value, "false"))
                 : strncmp(kind, "choice:", 7) == 0 ? kv[i].quoted && in_choice(kind, kv[i].value)
                                                    : 0;
        if (!ok)
            fail_msg("MESH_DEEPSPEED_CONFIG: %s = %s is not a %s", kv[i].path, kv[i].value, kind);
    }
    long train = ds_int(kv, n, "train_batch_size");
    long micro = ds_int(kv, n, "train_micro_batch_size_per_gpu");
    long accum = ds_int(kv, n, "gradient_accumulation_steps");
    long stage = ds_int(kv, n, "zero_optimization.stage");
    /* DeepSpeedConfig._batch_assertion, with the data-parallel world size */
    assert_int_equal(train, micro * accum * layout_int(e, "MESH_DP_SIZE"));
    assert_true(micro > 0 && accum > 0);
    assert_int_equal(stage, layout_int(e, "MESH_ZERO_STAGE"));
    assert_int_equal(accum, layout_int(e, "MESH_NUM_MICRO_BATCHES"));
    (void)p;
}

static void deepspeed__keys_kinds_and_batch_identity(void **state)
{
    table_t t = load_table("deepspeed-config-keys.txt");
    int n = for_each_layout(check_deepspeed, &t);
    assert_true(n > 100);
    free(t.e);
}

/* The checker itself can fail: a key DeepSpeed does not have, and a value of
 * the wrong kind, are both caught by the kinds table. */
static void deepspeed__checker_catches_bad_keys(void **state)
{
    table_t t = load_table("deepspeed-config-keys.txt");
    kv_t kv[16] = {0};
    int n = flatten("{\"train_batch_size\":8,\"zero_optimization\":{\"stage\":\"2\"},"
                    "\"zero_stage\":2}",
                    kv, 16);
    assert_int_equal(n, 4);
    assert_string_equal(kv[2].path, "zero_optimization.stage");
    assert_true(kv[2].quoted); /* "2" is a string: DeepSpeed wants an int */
    assert_null(kind_of(&t, "zero_stage"));
    assert_string_equal(kind_of(&t, "zero_optimization.stage"), "int");
    free(t.e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(megatron__fixture_sanity),
        cmocka_unit_test(megatron__every_flag_is_real),
        cmocka_unit_test(megatron__moe_flags_are_real),
        cmocka_unit_test(deepspeed__checker_catches_bad_keys),
        cmocka_unit_test(deepspeed__keys_kinds_and_batch_identity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
