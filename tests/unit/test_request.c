/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The request the submit side records for job_submit/meshplan.
 */
#include "moeutil.h"
#include "testutil.h"

static void roundtrip__every_preset(void **state)
{
    static const char *presets[] = {"llama2-7b",  "llama2-13b",    "llama2-70b", "llama3-8b",
                                    "llama3-70b", "llama3.1-405b", "gpt3-175b",  "params-only"};
    for (size_t i = 0; i < sizeof(presets) / sizeof(*presets); i++) {
        mesh_model_t m = test_preset(presets[i]), back;
        mesh_layout_t pins = test_mesh("tp=8,zero=1,mb=auto,recompute=selective,sp=off"), pback;
        mesh_error_t err;
        char req[MESH_REQUEST_MAX], d1[17], d2[17], p1[128], p2[128];
        if (mesh_request_encode(&m, &pins, req, sizeof(req), &err) < 0)
            fail_msg("%s: %s", presets[i], err.msg);
        if (mesh_request_decode(req, &back, &pback, &err) < 0)
            fail_msg("%s: %s (%s)", presets[i], err.msg, req);
        assert_string_equal(mesh_model_digest(&m, d1), mesh_model_digest(&back, d2));
        assert_string_equal(mesh_layout_format_pins(&pins, p1, sizeof(p1)),
                            mesh_layout_format_pins(&pback, p2, sizeof(p2)));
        assert_true(strlen(req) < 600);
    }
}

static void pins__format(void **state)
{
    char buf[128];
    mesh_layout_t l = test_mesh("");
    assert_string_equal(mesh_layout_format_pins(&l, buf, sizeof(buf)), "auto");
    l = test_mesh("sp=on,pp=2,tp=4");
    assert_string_equal(mesh_layout_format_pins(&l, buf, sizeof(buf)), "tp=4,pp=2,sp=on");
}

static void decode__hostile_requests_refused(void **state)
{
    static const struct {
        const char *req, *needle;
    } cases[] = {
        {"", "VERSION;PINS;SPEC"},
        {"1;auto", "VERSION;PINS;SPEC"},
        {"2;auto;{name: x, params: 1e9}", "format version '2'"},
        {"11;auto;{name: x, params: 1e9}", "format version '11'"},
        {"1;tp=2;rm -rf /;{name: x, params: 1e9}", "unknown key"},
        {"1;colour=blue;{name: x, params: 1e9}", "request: mesh: unknown key"},
        {"1;auto;{name: x, params: 1e30}", "params"},
        {"1;auto;{preset: llama3-8b}", "preset"},
        {"1;auto;{name: x, params: 1e9, evil: 1}", "unknown key 'evil'"},
        {"1;auto;{name: x, params: 1e9", "YAML"},
        {"1;auto;{name: x, arch: {layers: 2, hidden: 30, heads: 4, vocab: 10}}", "heads"},
        {"1;auto;[1, 2]", "mapping"},
        {"1;auto;{name: &a x, params: *a}", "anchors"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        mesh_model_t m;
        mesh_layout_t pins;
        mesh_error_t err;
        if (mesh_request_decode(cases[i].req, &m, &pins, &err) == 0)
            fail_msg("'%s' was accepted", cases[i].req);
        if (!strstr(err.msg, cases[i].needle))
            fail_msg("'%s': '%s' lacks '%s'", cases[i].req, err.msg, cases[i].needle);
    }
    /* empty pins are no pins (as --mesh '' is): the spec after them is read */
    {
        mesh_model_t m;
        mesh_layout_t pins, none = test_mesh("auto");
        mesh_error_t err;
        if (mesh_request_decode("1;;{name: x, params: 1e9}", &m, &pins, &err) < 0)
            fail_msg("%s", err.msg);
        assert_memory_equal(&pins, &none, sizeof(pins));
        assert_string_equal(m.name, "x");
    }
    /* oversized: refused without reading past the limit */
    char *big = malloc(3 * MESH_REQUEST_MAX);
    memset(big, 'a', 3 * MESH_REQUEST_MAX - 1);
    big[3 * MESH_REQUEST_MAX - 1] = '\0';
    memcpy(big, "1;auto;", 7);
    mesh_model_t m;
    mesh_layout_t pins;
    mesh_error_t err;
    assert_int_equal(mesh_request_decode(big, &m, &pins, &err), -1);
    assert_non_null(strstr(err.msg, "longer than"));
    /* the limit is the request's own (request.h: shorter than
     * MESH_REQUEST_MAX, its NUL included), not whether what fits in it
     * parses: a good request padded with blanks is read up to 2047 bytes
     * and refused from 2048 on, whatever follows */
    static const char good[] = "1;auto;{name: x, params: 1e9}";
    for (size_t len = MESH_REQUEST_MAX - 1; len <= MESH_REQUEST_MAX + 1; len++) {
        memset(big, ' ', len);
        memcpy(big, good, strlen(good));
        big[len] = '\0';
        int rc = mesh_request_decode(big, &m, &pins, &err);
        if (len < MESH_REQUEST_MAX) {
            assert_int_equal(rc, 0);
            assert_true(m.params == 1e9);
        } else {
            assert_int_equal(rc, -1);
            assert_string_equal(err.msg, "request: longer than 2047 bytes");
        }
    }
    free(big);
}

/* Names of the fields of a and b that differ, space-separated, into out
 * (empty: the same model).  Every member of mesh_model_t, by hand. */
static const char *model_diff(const mesh_model_t *a, const mesh_model_t *b, char *out, size_t len)
{
    out[0] = '\0';
#define DIFF(cond, field)                                                                          \
    do {                                                                                           \
        if (cond)                                                                                  \
            snprintf(out + strlen(out), len - strlen(out), "%s%s", out[0] ? " " : "", field);      \
    } while (0)
#define SAME(member) DIFF(a->member != b->member, #member)
    DIFF(strcmp(a->name, b->name) != 0, "name");
    SAME(has_arch);
    SAME(layers);
    SAME(hidden);
    SAME(heads);
    SAME(kv_heads);
    SAME(head_dim);
    SAME(ffn);
    SAME(vocab);
    SAME(mlp);
    SAME(tied_embeddings);
    DIFF(memcmp(&a->params, &b->params, sizeof(double)) != 0, "params");
    SAME(seq_len);
    SAME(global_batch);
    SAME(micro_batch);
    SAME(precision);
    SAME(fp8_recipe);
    SAME(grad_accum_dtype);
    SAME(optimizer);
    SAME(optimizer_dtype);
    SAME(framework);
    SAME(recompute);
    SAME(flash_attention);
    DIFF(memcmp(&a->dropout, &b->dropout, sizeof(double)) != 0, "dropout");
    SAME(finetune);
    DIFF(memcmp(&a->moe, &b->moe, sizeof(a->moe)) != 0, "moe");
    DIFF(memcmp(&a->mla, &b->mla, sizeof(a->mla)) != 0, "mla");
    SAME(mtp_layers);
    DIFF(memcmp(&a->moe_imbalance, &b->moe_imbalance, sizeof(double)) != 0, "moe_imbalance");
#undef SAME
#undef DIFF
    return out;
}

static int parse_spec(const char *yaml, mesh_model_t *m, mesh_error_t *err)
{
    mesh_spec_dirs_t d = test_dirs();
    return mesh_spec_parse(yaml, strlen(yaml), "gen.yaml", &d, m, err);
}

/* What the controller decodes is what the submit side encoded: every field
 * and the digest the nodes compare. */
static void roundtrip(const mesh_model_t *m, const char *mesh, const char *what)
{
    mesh_layout_t pins = test_mesh(mesh), pback;
    mesh_model_t back;
    mesh_error_t err;
    char req[MESH_REQUEST_MAX], d1[17], d2[17], p1[128], p2[128], diff[256];
    if (mesh_request_encode(m, &pins, req, sizeof(req), &err) < 0)
        fail_msg("%s: %s", what, err.msg);
    if (mesh_request_decode(req, &back, &pback, &err) < 0)
        fail_msg("%s: %s\n  request: %s", what, err.msg, req);
    if (model_diff(m, &back, diff, sizeof(diff))[0])
        fail_msg("%s: the request lost %s\n  request: %s", what, diff, req);
    if (strcmp(mesh_model_digest(m, d1), mesh_model_digest(&back, d2)) != 0)
        fail_msg("%s: digest %s came back as %s\n  request: %s", what, d1, d2, req);
    assert_string_equal(mesh_layout_format_pins(&pins, p1, sizeof(p1)),
                        mesh_layout_format_pins(&pback, p2, sizeof(p2)));
}

/* Every key of meshplan-spec(5) at values other than its default: the spec
 * is the template with @ replaced by each value, and dflt (NULL: none) its
 * documented default, which must give another model. */
static const struct {
    const char *key, *tmpl, *dflt, *values;
} nondefault[] = {
    {"name", "{name: @, params: 1e9}", "model", "x my-70b.v2_x Z"},
    {"preset", "{preset: @}", NULL, "llama3-8b gpt3-175b params-only llama3.1-405b"},
    {"params", "{params: @}", NULL, "1000 1e16 7.123456789e9 13e9 0.1e4"},
    {"params", "{arch: {layers: 2, hidden: 64, heads: 4, vocab: 100}, params: @}", NULL,
     "5e9 1000 123457 4.2M"},
    {"arch.layers", "{arch: {layers: @, hidden: 64, heads: 4, vocab: 100}}", NULL, "1 100000 33"},
    {"arch.hidden", "{arch: {layers: 2, hidden: @, heads: 1, vocab: 1000}}", NULL,
     "1 1048576 4096"},
    {"arch.heads", "{arch: {layers: 1, hidden: 65536, heads: @, vocab: 100}}", NULL, "1 65536 64"},
    {"arch.kv_heads", "{arch: {layers: 1, hidden: 65536, heads: 65536, kv_heads: @, vocab: 100}}",
     "65536", "1 8 32768"},
    {"arch.head_dim", "{arch: {layers: 2, hidden: 64, heads: 4, vocab: 100, head_dim: @}}", NULL,
     "1 16 128 65536"},
    {"arch.ffn", "{arch: {layers: 2, hidden: 64, heads: 4, ffn: @, vocab: 100}}", "256",
     "1 16777216 11008"},
    {"arch.vocab", "{arch: {layers: 2, hidden: 64, heads: 4, vocab: @}}", NULL,
     "1 16777216 128256"},
    {"arch.mlp", "{arch: {layers: 2, hidden: 64, heads: 4, vocab: 100, mlp: @}}", "swiglu", "gelu"},
    {"arch.tied_embeddings",
     "{arch: {layers: 2, hidden: 64, heads: 4, vocab: 100, tied_embeddings: @}}", "false", "true"},
    {"train.seq_len", "{params: 1e9, train: {seq_len: @}}", "4096", "1 16777216 8192"},
    {"train.global_batch", "{params: 1e9, train: {global_batch: @}}", "512", "1 1073741824 1000"},
    {"train.micro_batch", "{params: 1e9, train: {global_batch: 1073741824, micro_batch: @}}",
     "auto", "1 65536 8"},
    {"train.precision", "{params: 1e9, train: {precision: @}}", "bf16", "fp16 fp32 fp8"},
    {"train.fp8_recipe", "{params: 1e9, train: {precision: fp8, fp8_recipe: @}}", "delayed",
     "tensorwise blockwise mxfp8"},
    /* the parameters' 16-bit type or fp32 (lib/spec_check.c) */
    {"train.grad_accum_dtype", "{params: 1e9, train: {grad_accum_dtype: @}}", "fp32", "bf16"},
    {"train.grad_accum_dtype", "{params: 1e9, train: {precision: fp16, grad_accum_dtype: @}}",
     "fp16", "fp32"},
    {"train.grad_accum_dtype", "{params: 1e9, train: {precision: fp8, grad_accum_dtype: @}}",
     "fp32", "bf16"},
    {"train.optimizer", "{params: 1e9, train: {optimizer: @}}", "adamw", "adam sgd"},
    {"train.optimizer_dtype", "{params: 1e9, train: {optimizer_dtype: @}}", "fp32", "bf16 fp16"},
    {"train.optimizer_dtype", "{params: 1e9, train: {framework: torch, optimizer_dtype: @}}",
     "fp32", "bf16"},
    {"train.framework", "{params: 1e9, train: {framework: @}}", "auto", "megatron deepspeed torch"},
    {"train.recompute", "{params: 1e9, train: {recompute: @}}", "auto", "none selective full"},
    {"train.flash_attention", "{params: 1e9, train: {flash_attention: @}}", "true", "false"},
    {"train.dropout", "{params: 1e9, train: {dropout: @}}", "0.0", "1 0.1 0.123456789012345"},
    {"train.finetune", "{params: 1e9, train: {finetune: @}}", "full", "lora"},
#define MOE_ARCH "{arch: {layers: 3, hidden: 64, heads: 4, vocab: 100, "
    {"arch.mtp_layers", MOE_ARCH "mtp_layers: @}}", "0", "1 64"},
    {"arch.moe.experts", MOE_ARCH "moe: {experts: @}}}", NULL, "1 8 65536"},
    {"arch.moe.top_k", MOE_ARCH "moe: {experts: 65536, top_k: @}}}", "2", "1 8 65536"},
    {"arch.moe.ffn", MOE_ARCH "moe: {experts: 4, ffn: @}}}", "256", "1 16777216 768"},
    {"arch.moe.shared_experts", MOE_ARCH "moe: {experts: 4, shared_experts: @}}}", "0", "1 1024"},
    {"arch.moe.shared_ffn", MOE_ARCH "moe: {experts: 4, shared_experts: 1, shared_ffn: @}}}", "256",
     "1 16777216"},
    {"arch.moe.dense_layers", MOE_ARCH "moe: {experts: 4, dense_layers: @}}}", "0", "1 2"},
    {"arch.moe.every", MOE_ARCH "moe: {experts: 4, every: @}}}", "1", "2 3"},
    {"arch.moe.capacity_factor", MOE_ARCH "moe: {experts: 4, capacity_factor: @}}}", "none",
     "0.01 1 1.25 1000"},
    {"arch.mla.q_lora_rank", MOE_ARCH "mla: {kv_lora_rank: 8, q_lora_rank: @}}}", "0",
     "1 1536 1048576"},
    {"arch.mla.kv_lora_rank", MOE_ARCH "mla: {kv_lora_rank: @}}}", NULL, "1 512 1048576"},
    {"arch.mla.qk_head_dim", MOE_ARCH "mla: {kv_lora_rank: 8, qk_head_dim: @}}}", "128",
     "1 64 65536"},
    {"arch.mla.qk_rope_head_dim", MOE_ARCH "mla: {kv_lora_rank: 8, qk_rope_head_dim: @}}}", "64",
     "1 32 65536"},
    {"arch.mla.v_head_dim", MOE_ARCH "mla: {kv_lora_rank: 8, v_head_dim: @}}}", "128", "1 65536"},
    {"train.moe_imbalance", MOE_ARCH "moe: {experts: 4}}, train: {moe_imbalance: @}}", NULL,
     "1 1.5 1000"},
    /* Llama 4's */
    {"arch.qk_l2_norm", MOE_ARCH "qk_l2_norm: @}}", "false", "true"},
    {"arch.nope_every", MOE_ARCH "nope_every: @}}", NULL, "3"},
    {"arch.rotary_interleaved", MOE_ARCH "rotary_interleaved: @}}", "false", "true"},
    {"arch.moe.probs_on_input", MOE_ARCH "moe: {experts: 4, top_k: 1, probs_on_input: @}}}",
     "false", "true"},
#undef MOE_ARCH
};

static void fill(const char *tmpl, const char *value, char *out, size_t len)
{
    const char *at = strchr(tmpl, '@');
    assert_non_null(at);
    int n = snprintf(out, len, "%.*s%s%s", (int)(at - tmpl), tmpl, value, at + 1);
    assert_true(n > 0 && (size_t)n < len);
}

static void roundtrip__every_key_non_default(void **state)
{
    int checked = 0;
    for (size_t i = 0; i < sizeof(nondefault) / sizeof(*nondefault); i++) {
        char values[128], yaml[256], what[300], d1[17], d2[17];
        mesh_model_t base, m;
        mesh_error_t err;
        if (nondefault[i].dflt) {
            fill(nondefault[i].tmpl, nondefault[i].dflt, yaml, sizeof(yaml));
            if (parse_spec(yaml, &base, &err) < 0)
                fail_msg("%s: %s", yaml, err.msg);
        }
        snprintf(values, sizeof(values), "%s", nondefault[i].values);
        char *save = NULL;
        for (char *v = strtok_r(values, " ", &save); v; v = strtok_r(NULL, " ", &save)) {
            fill(nondefault[i].tmpl, v, yaml, sizeof(yaml));
            if (parse_spec(yaml, &m, &err) < 0)
                fail_msg("%s: %s", yaml, err.msg);
            /* the value is not the default: the model is another */
            if (nondefault[i].dflt)
                assert_string_not_equal(mesh_model_digest(&m, d1), mesh_model_digest(&base, d2));
            snprintf(what, sizeof(what), "%s: %s (%s)", nondefault[i].key, v, yaml);
            roundtrip(&m, "auto", what);
            checked++;
        }
    }
    assert_true(checked >= 60);
}

static void roundtrip__all_keys_non_default_at_once(void **state)
{
    const char *all =
        "name: all-changed\nparams: 5.5e9\n"
        "arch:\n  layers: 3\n  hidden: 96\n  heads: 6\n  kv_heads: 2\n  head_dim: 24\n"
        "  ffn: 300\n"
        "  vocab: 1000\n  mlp: gelu\n  tied_embeddings: true\n"
        "train:\n  seq_len: 8192\n  global_batch: 96\n  micro_batch: 4\n"
        "  precision: fp8\n  fp8_recipe: mxfp8\n  grad_accum_dtype: bf16\n"
        "  optimizer: adam\n  optimizer_dtype: fp16\n  framework: torch\n"
        "  recompute: full\n  flash_attention: false\n  dropout: 0.25\n"
        "  finetune: lora\n";
    const char *defaults = "arch: {layers: 2, hidden: 64, heads: 4, vocab: 100}\n";
    mesh_model_t m = test_spec(all), d = test_spec(defaults);
    char diff[512];
    /* every field but has_arch differs from the defaults */
    assert_string_equal(model_diff(&m, &d, diff, sizeof(diff)),
                        "name layers hidden heads kv_heads head_dim ffn vocab mlp tied_embeddings "
                        "params "
                        "seq_len global_batch micro_batch precision fp8_recipe grad_accum_dtype "
                        "optimizer optimizer_dtype framework recompute flash_attention dropout "
                        "finetune");
    roundtrip(&m, "auto", "every key non-default");
    roundtrip(&m, "tp=2,pp=3,dp=4,zero=1,mb=4,recompute=full,sp=on", "every key, with pins");
}

#define MOE_SPEC "arch:\n  layers: 4\n  hidden: 64\n  heads: 4\n  vocab: 100\n"
/* The controller's request carries the new keys only when set, nested as
 * the spec nests them, and reads back the same model. */
static void roundtrip__moe_and_attention_keys(void **state)
{
    const char *specs[] = {moe_small(),
                           "preset: deepseek-v3",
                           "preset: qwen3-30b-a3b",
                           MOE_SPEC "  moe:\n    experts: 4\n    capacity_factor: 1.5\n"
                                    "train:\n  moe_imbalance: 2.25\n",
                           MOE_SPEC "  mtp_layers: 2\n",
                           "preset: gpt-oss-120b",
                           "preset: llama4-scout"};
    for (size_t i = 0; i < sizeof(specs) / sizeof(*specs); i++) {
        mesh_model_t m = test_spec(specs[i]), back;
        mesh_layout_t pins, pback;
        mesh_error_t err;
        char req[MESH_REQUEST_MAX], d1[17], d2[17];
        mesh_layout_unpin(&pins);
        if (mesh_request_encode(&m, &pins, req, sizeof(req), &err) < 0)
            fail_msg("%s", err.msg);
        if (mesh_request_decode(req, &back, &pback, &err) < 0)
            fail_msg("%s\n  request: %s", err.msg, req);
        assert_int_equal(memcmp(&m.moe, &back.moe, sizeof(m.moe)), 0);
        assert_int_equal(memcmp(&m.mla, &back.mla, sizeof(m.mla)), 0);
        assert_int_equal(m.mtp_layers, back.mtp_layers);
        assert_true(m.moe_imbalance == back.moe_imbalance);
        /* GPT-OSS's attention, activation and rotary keys travel too */
        assert_true(m.window == back.window && m.full_attention_every == back.full_attention_every);
        assert_true(m.attention_sinks == back.attention_sinks && m.mlp == back.mlp);
        assert_true(m.activation_clamp == back.activation_clamp);
        assert_true(m.rope_type == back.rope_type && m.yarn_truncate == back.yarn_truncate);
        /* and Llama 4's (the router's in m.router) */
        assert_true(m.qk_l2_norm == back.qk_l2_norm && m.nope_every == back.nope_every);
        assert_true(m.rotary_interleaved == back.rotary_interleaved);
        assert_int_equal(memcmp(&m.router, &back.router, sizeof(m.router)), 0);
        assert_string_equal(mesh_model_digest(&m, d1), mesh_model_digest(&back, d2));
    }
    /* a dense model's request says nothing of them */
    mesh_model_t d = test_preset("llama3-70b");
    mesh_layout_t pins;
    mesh_error_t err;
    char req[MESH_REQUEST_MAX];
    mesh_layout_unpin(&pins);
    assert_int_equal(mesh_request_encode(&d, &pins, req, sizeof(req), &err), 0);
    assert_null(strstr(req, "moe"));
    assert_null(strstr(req, "mla"));
    assert_null(strstr(req, "mtp"));
}
#undef MOE_SPEC

/* A request longer than the caller's buffer is refused with the limit a
 * request has (MESH_REQUEST_MAX less its NUL), not written in part. */
static void encode__too_long_refused_with_the_limit(void **state)
{
    (void)state;
    mesh_model_t m = test_preset("llama3-70b");
    mesh_layout_t pins;
    mesh_error_t err;
    char req[16] = "untouched";
    mesh_layout_unpin(&pins);
    assert_int_equal(mesh_request_encode(&m, &pins, req, sizeof(req), &err), -1);
    char want[64];
    snprintf(want, sizeof(want), "more than the %d allowed", MESH_REQUEST_MAX - 1);
    if (!strstr(err.msg, want))
        fail_msg("'%s' lacks '%s'", err.msg, want);
    assert_string_equal(req, "untouched");
}

/* Specs made of random values of every key (a fixed seed, so a failure
 * repeats): each the parser accepts comes back from the request unchanged. */
static void roundtrip__generated_specs(void **state)
{
    static const char *const archs[] = {
        "",
        "arch: {layers: 2, hidden: 64, heads: 4, vocab: 100}, ",
        "arch: {layers: 2, hidden: 64, heads: 4, kv_heads: 2, head_dim: 32, vocab: 100}, ",
        "arch: {layers: 80, hidden: 8192, heads: 64, kv_heads: 8, ffn: 28672, vocab: 128256}, ",
        "arch: {layers: 3, hidden: 96, heads: 6, kv_heads: 3, vocab: 50257, mlp: gelu, "
        "tied_embeddings: true}, ",
        "arch: {layers: 1, hidden: 65536, heads: 65536, kv_heads: 1, vocab: 1, ffn: 1}, ",
    };
    static const struct {
        const char *key, *values; /* "-": left out */
    } train[] = {
        {"seq_len", "- 1 2048 16777216"},
        {"global_batch", "- 1 96 1073741824"},
        {"micro_batch", "- auto 1 2 3 32"},
        {"precision", "- bf16 fp16 fp32 fp8 fp8"},
        {"fp8_recipe", "- - - delayed tensorwise blockwise mxfp8"},
        {"grad_accum_dtype", "- bf16 fp16 fp32 fp32"},
        {"optimizer", "- adam adamw sgd"},
        {"optimizer_dtype", "- - fp32 bf16 fp16"},
        {"framework", "- auto megatron deepspeed torch"},
        {"recompute", "- auto none selective full"},
        {"flash_attention", "- true false"},
        {"dropout", "- 0 0.1 1 0.3333333333333333"},
        {"finetune", "- full lora"},
    };
    static const char *const names[] = {"-", "g", "gen-1.x_y"};
    static const char *const params[] = {"-", "1000", "7e9", "1e16"};
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    int accepted = 0, tries = 400;
    for (int t = 0; t < tries; t++) {
        char yaml[1024], pick[32], what[1100];
        size_t n = 0;
#define RAND() (seed = seed * 6364136223846793005ULL + 1442695040888963407ULL, seed >> 33)
        const char *name = names[RAND() % 3], *p = params[RAND() % 4];
        const char *arch = archs[RAND() % 5];
        n += (size_t)snprintf(yaml + n, sizeof(yaml) - n, "{%s", arch);
        if (strcmp(name, "-") != 0)
            n += (size_t)snprintf(yaml + n, sizeof(yaml) - n, "name: %s, ", name);
        if (strcmp(p, "-") != 0 || !*arch)
            n += (size_t)snprintf(yaml + n, sizeof(yaml) - n, "params: %s, ",
                                  strcmp(p, "-") != 0 ? p : "1e9");
        n += (size_t)snprintf(yaml + n, sizeof(yaml) - n, "train: {");
        int given = 0;
        for (size_t k = 0; k < sizeof(train) / sizeof(*train); k++) {
            int count = 1;
            for (const char *c = train[k].values; *c; c++)
                count += *c == ' ';
            const char *v = train[k].values;
            for (int skip = (int)(RAND() % (uint64_t)count); skip > 0; skip--)
                v = strchr(v, ' ') + 1;
            snprintf(pick, sizeof(pick), "%.*s", (int)strcspn(v, " "), v);
            if (strcmp(pick, "-") != 0)
                n += (size_t)snprintf(yaml + n, sizeof(yaml) - n, "%s%s: %s", given++ ? ", " : "",
                                      train[k].key, pick);
        }
#undef RAND
        n += (size_t)snprintf(yaml + n, sizeof(yaml) - n, "}}");
        assert_true(n < sizeof(yaml));
        mesh_model_t m;
        mesh_error_t err;
        if (parse_spec(yaml, &m, &err) < 0)
            continue; /* keys that disagree (e.g. fp8_recipe without fp8) */
        snprintf(what, sizeof(what), "generated spec %d: %s", t, yaml);
        roundtrip(&m, t % 2 ? "auto" : "tp=2,zero=1", what);
        accepted++;
    }
    /* most combinations are valid ones */
    assert_true(accepted >= tries / 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(roundtrip__every_preset),
        cmocka_unit_test(pins__format),
        cmocka_unit_test(encode__too_long_refused_with_the_limit),
        cmocka_unit_test(decode__hostile_requests_refused),
        cmocka_unit_test(roundtrip__every_key_non_default),
        cmocka_unit_test(roundtrip__all_keys_non_default_at_once),
        cmocka_unit_test(roundtrip__generated_specs),
        cmocka_unit_test(roundtrip__moe_and_attention_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
