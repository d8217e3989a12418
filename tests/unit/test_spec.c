/*
 * The model spec: parameter counts, presets, overrides and hostile input.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

static void params__llama_presets__published_counts(void **state)
{
    static const struct {
        const char *name;
        uint64_t params;
    } cases[] = {
        {"llama2-7b", 6738415616ULL},   {"llama2-13b", 13015864320ULL},
        {"llama2-70b", 68976648192ULL}, {"llama3-8b", 8030261248ULL},
        {"llama3-70b", 70553706496ULL}, {"llama3.1-405b", 405853388800ULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        mesh_model_t m = test_preset(cases[i].name);
        assert_int_equal((uint64_t)m.params, cases[i].params);
        assert_true(m.has_arch);
    }
}

static void params__llama_layer__published(void **state)
{
    mesh_model_t m = test_preset("llama3.1-405b");
    assert_int_equal((uint64_t)mesh_model_layer_params(&m), 3187703808ULL);
    m = test_preset("llama2-7b");
    assert_int_equal((uint64_t)mesh_model_layer_params(&m), 202383360ULL);
}

static void params__gpt_formula__narayanan(void **state)
{
    /* GPT-3: 12lh^2(1 + 13/(12h) + (V+s)/(12lh)) = 174.6e9 */
    mesh_model_t m = test_preset("gpt3-175b");
    double l = 96, h = 12288, V = 50257, s = 2048;
    double formula = 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h));
    assert_true(m.params > formula - 1 && m.params < formula + 1);
    assert_true(m.params > 174.55e9 && m.params < 174.65e9);
    /* Megatron's 1T row of Narayanan et al. Table 1: 1008.0e9 */
    mesh_model_t t = test_spec("arch: {layers: 128, hidden: 25600, heads: 160, vocab: 51200, "
                               "mlp: gelu, tied_embeddings: true}\ntrain: {seq_len: 2048}\n");
    assert_true(t.params > 1007.95e9 && t.params < 1008.05e9);
}

static void defaults__filled(void **state)
{
    mesh_model_t m = test_spec("arch:\n  layers: 2\n  hidden: 64\n  heads: 4\n  vocab: 100\n");
    assert_int_equal(m.kv_heads, 4);
    assert_int_equal(m.ffn, 256);
    assert_int_equal(m.micro_batch, 0);
    assert_int_equal(m.recompute, MESH_RECOMPUTE_AUTO);
    assert_int_equal(m.precision, MESH_PREC_BF16);
    /* the frameworks' default: fp32 main gradients under bf16 (Megatron-LM
     * arguments.py L1214-1217), fp16 ones under fp16 */
    assert_int_equal(m.grad_accum_dtype, MESH_PREC_FP32);
    assert_int_equal(m.framework, MESH_FW_AUTO);
    assert_int_equal(m.optimizer_dtype, MESH_PREC_FP32);
    assert_true(m.flash_attention);
    m = test_spec("params: 1e9\ntrain:\n  precision: fp16\n");
    assert_int_equal(m.grad_accum_dtype, MESH_PREC_FP16);
    m = test_spec("params: 1e9\ntrain:\n  precision: fp8\n  fp8_recipe: blockwise\n");
    assert_int_equal(m.precision, MESH_PREC_FP8);
    assert_int_equal(m.fp8_recipe, MESH_FP8_BLOCKWISE);
    assert_int_equal(m.grad_accum_dtype, MESH_PREC_FP32);
    assert_string_equal(m.name, "model");
}

static void preset__override__keeps_rest(void **state)
{
    mesh_model_t m = test_spec("preset: llama3-70b\nname: my-70b\ntrain:\n  seq_len: 4096\n"
                               "  global_batch: 64\n  micro_batch: 2\n  recompute: full\n");
    assert_string_equal(m.name, "my-70b");
    assert_int_equal(m.layers, 80);
    assert_int_equal(m.seq_len, 4096);
    assert_int_equal(m.global_batch, 64);
    assert_int_equal(m.micro_batch, 2);
    assert_int_equal(m.recompute, MESH_RECOMPUTE_FULL);
    assert_int_equal((uint64_t)m.params, 70553706496ULL);
    /* changing the arch recomputes the count */
    m = test_spec("preset: llama3-70b\narch:\n  layers: 40\n");
    assert_true(m.params < 40e9);
}

static void params_only__no_arch(void **state)
{
    mesh_model_t m = test_preset("params-only");
    assert_false(m.has_arch);
    assert_true(m.params == 13e9);
}

/* Expect parsing to fail with every needle in the message. */
static void expect_error(const char *yaml, const char *n1, const char *n2)
{
    mesh_spec_dirs_t d = test_dirs();
    mesh_model_t m;
    mesh_error_t err;
    assert_int_equal(mesh_spec_parse(yaml, strlen(yaml), "bad.yaml", &d, &m, &err), -1);
    if (!strstr(err.msg, n1) || (n2 && !strstr(err.msg, n2)))
        fail_msg("error '%s' lacks '%s'/'%s'", err.msg, n1, n2 ? n2 : "");
}

static void errors__name_key_and_line(void **state)
{
    expect_error("name: x\narch:\n  layres: 3\n", "bad.yaml:3", "layres");
    expect_error("arch:\n  layers: 0\n  hidden: 8\n  heads: 1\n  vocab: 1\n", "bad.yaml:2",
                 "arch.layers");
    expect_error("train:\n  seq_len: -4\n", "bad.yaml:2", "train.seq_len");
    expect_error("train:\n  precision: fp4\n", "train.precision", "bf16 fp16 fp32 fp8");
    expect_error("params: 1e9\ntrain:\n  fp8_recipe: delayed\n", "bad.yaml:3",
                 "only means something with precision: fp8");
    expect_error("params: 1e9\ntrain:\n  precision: fp32\n  grad_accum_dtype: bf16\n",
                 "train.grad_accum_dtype", "fp32");
    expect_error("params: 1e9\ntrain:\n  optimizer: sgd\n  optimizer_dtype: bf16\n",
                 "train.optimizer_dtype", "SGD");
    expect_error("params: 1e9\ntrain:\n  framework: deepspeed\n  optimizer_dtype: bf16\n",
                 "train.optimizer_dtype", "DeepSpeed keeps fp32");
    expect_error("params: 1e9\ntrain:\n  framework: jax\n", "train.framework",
                 "auto megatron deepspeed torch");
    expect_error("train:\n  dropout: 1.5\n", "train.dropout", "out of range");
    expect_error("params: 1e99\n", "params", "out of range");
    expect_error("train:\n  flash_attention: perhaps\n", "flash_attention", NULL);
    expect_error("train:\n  micro_batch: lots\n", "micro_batch", "auto");
    expect_error("params: 7e9\nparams: 8e9\n", "bad.yaml:2", "twice");
    expect_error("arch:\n  layers: 2\n  hidden: 64\n  heads: 5\n  vocab: 10\n", "heads", "64");
    expect_error("arch:\n  layers: 2\n  hidden: 64\n  heads: 4\n  kv_heads: 3\n  vocab: 10\n",
                 "kv_heads", NULL);
    expect_error("arch:\n  layers: 2\n  hidden: 64\n", "arch.heads", "missing");
    expect_error("name: x\n", "arch", "params");
    expect_error("train:\n  global_batch: 10\n  micro_batch: 3\nparams: 1e9\n", "micro_batch",
                 "global_batch");
    expect_error("- a\n- b\n", "mapping", NULL);
    expect_error("", "empty", NULL);
    expect_error("params: 1e9\n---\nparams: 2e9\n", "one YAML document", NULL);
    expect_error("arch: 7\n", "arch", "mapping");
    expect_error("train:\n  seq_len: [1, 2]\n", "train.seq_len", "single value");
    expect_error("name: a: b\n", "syntax error", NULL);
    expect_error("name: \"a\\0b\"\nparams: 1e9\n", "NUL", NULL);
    expect_error("name: ../../etc\nparams: 1e9\n", "name", "not a valid name");
}

static void errors__one_printable_line(void **state)
{
    /* user input quoted in an error cannot add lines or escape codes */
    const char *cases[] = {"\"evil\\nINJECTED\\e[31m\": 1\n",
                           "train:\n  precision: \"bf\\n16 forged\"\n"};
    for (int i = 0; i < 2; i++) {
        mesh_model_t m;
        mesh_error_t err;
        assert_int_equal(mesh_spec_parse(cases[i], strlen(cases[i]), "bad.yaml", NULL, &m, &err),
                         -1);
        for (const char *c = err.msg; *c; c++)
            assert_true((unsigned char)*c >= 0x20 && *c != 0x7f);
    }
    mesh_layout_t l;
    mesh_error_t err;
    assert_int_equal(mesh_layout_parse("x\nforged=1", &l, &err), -1);
    assert_null(strchr(err.msg, '\n'));
}

static void errors__blame_what_the_user_wrote(void **state)
{
    /* the preset's heads are fine; the user's hidden is not */
    expect_error("# a comment\npreset: llama3-8b\narch: {hidden: 4100}\n", "bad.yaml:3",
                 "arch.hidden: 4100");
    expect_error("preset: llama3-8b\narch:\n  heads: 5\n", "bad.yaml:3", "arch.heads: 5");
    expect_error("preset: llama3-8b\narch:\n  kv_heads: 5\n", "bad.yaml:3", "arch.kv_heads: 5");
    expect_error("preset: llama3-8b\narch:\n  heads: 36\n", "bad.yaml:3", "arch.heads");
    expect_error("arch: {layers: 100000, hidden: 1048576, heads: 1, vocab: 10}\n", "bad.yaml",
                 "arch gives 1.76e+18 parameters; meshplan plans models of 1000 to 1e+16");
    /* too small too, as a given params would be (found by fuzz_request: the
     * request made from such a spec, which states params, was refused) */
    expect_error("arch: {layers: 2, hidden: 1, heads: 1, vocab: 2}\n", "bad.yaml",
                 "arch gives 41 parameters");
}

static void errors__hostile_yaml_refused(void **state)
{
    expect_error("base: &a {layers: 2}\n", "anchors", NULL);
    expect_error("params: *a\n", "bad.yaml:1", NULL);
    expect_error("params: !!float 1e9\n", "tags", NULL);
    expect_error("arch:\n  layers:\n    deeper: 1\n", "arch.layers", "single value");
    expect_error("train:\n  train:\n    seq_len: 1\n", "unknown key", "train");
    /* an alias bomb is refused at the first anchor, before any expansion */
    expect_error("a: &a [1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a]\nc: [*b,*b,*b]\n",
                 "anchors", NULL);
    char big[600];
    memset(big, 'x', sizeof(big));
    memcpy(big, "name: ", 6);
    big[sizeof(big) - 2] = '\n';
    big[sizeof(big) - 1] = '\0';
    expect_error(big, "longer than", NULL);
    const char nul[] = "params: 1e9\n\0junk";
    mesh_model_t m;
    mesh_error_t err;
    assert_int_equal(mesh_spec_parse(nul, sizeof(nul) - 1, "bad.yaml", NULL, &m, &err), -1);
    assert_non_null(strstr(err.msg, "NUL"));
}

static void presets__bad_names_and_nesting(void **state)
{
    expect_error("preset: no-such-model\n", "bad.yaml:1", "unknown preset");
    mesh_spec_dirs_t d = test_dirs();
    mesh_model_t m;
    mesh_error_t err;
    assert_int_equal(mesh_spec_load("..hidden", &d, &m, &err), -1);
    assert_non_null(strstr(err.msg, "preset name"));
    assert_int_equal(mesh_spec_load("no-such-model", &d, &m, &err), -1);
    assert_non_null(strstr(err.msg, "unknown preset"));
    assert_int_equal(mesh_spec_load("", &d, &m, &err), -1);
    /* presets are not available to a spec read without preset directories */
    const char *yaml = "preset: llama2-7b\n";
    assert_int_equal(mesh_spec_parse(yaml, strlen(yaml), "x.yaml", NULL, &m, &err), -1);
}

static void files__only_regular_and_small(void **state)
{
    char dir[] = "/tmp/meshplan-spec-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    mesh_spec_dirs_t d = test_dirs();
    mesh_model_t m;
    mesh_error_t err;

    snprintf(path, sizeof(path), "%s/fifo.yaml", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_int_equal(mesh_spec_load(path, &d, &m, &err), -1); /* must not block */
    assert_non_null(strstr(err.msg, "not a regular file"));
    unlink(path);

    assert_int_equal(mesh_spec_load(dir, &d, &m, &err), -1);
    assert_non_null(strstr(err.msg, "not a regular file"));

    snprintf(path, sizeof(path), "%s/big.yaml", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < MESH_SPEC_MAX_BYTES / 10 + 10; i++)
        fputs("# padding\n", f);
    fclose(f);
    assert_int_equal(mesh_spec_load(path, &d, &m, &err), -1);
    assert_non_null(strstr(err.msg, "limit"));
    unlink(path);

    snprintf(path, sizeof(path), "%s/ok.yaml", dir);
    f = fopen(path, "w");
    fputs("preset: llama2-7b\ntrain:\n  global_batch: 256\n", f);
    fclose(f);
    assert_int_equal(mesh_spec_load(path, &d, &m, &err), 0);
    assert_int_equal(m.global_batch, 256);
    assert_string_equal(m.name, "llama2-7b");
    unlink(path);

    snprintf(path, sizeof(path), "%s/missing.yaml", dir);
    assert_int_equal(mesh_spec_load(path, &d, &m, &err), -1);
    assert_non_null(strstr(err.msg, "cannot open"));
    rmdir(dir);
}

static void digest__same_model_same_digest(void **state)
{
    char a[17], b[17], c[17];
    mesh_model_t m1 = test_spec("preset: llama3-8b\ntrain:\n  seq_len: 4096\n");
    mesh_model_t m2 = test_spec("# a comment\ntrain: {seq_len: 4096}\npreset: llama3-8b\n");
    mesh_model_t m3 = test_spec("preset: llama3-8b\ntrain:\n  seq_len: 4096\n  micro_batch: 2\n");
    assert_string_equal(mesh_model_digest(&m1, a), mesh_model_digest(&m2, b));
    assert_string_not_equal(a, mesh_model_digest(&m3, c));
    assert_int_equal(strlen(a), 16);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(params__llama_presets__published_counts),
        cmocka_unit_test(params__llama_layer__published),
        cmocka_unit_test(params__gpt_formula__narayanan),
        cmocka_unit_test(defaults__filled),
        cmocka_unit_test(preset__override__keeps_rest),
        cmocka_unit_test(params_only__no_arch),
        cmocka_unit_test(errors__name_key_and_line),
        cmocka_unit_test(errors__hostile_yaml_refused),
        cmocka_unit_test(errors__one_printable_line),
        cmocka_unit_test(errors__blame_what_the_user_wrote),
        cmocka_unit_test(presets__bad_names_and_nesting),
        cmocka_unit_test(digest__same_model_same_digest),
        cmocka_unit_test(files__only_regular_and_small),
    };
    return cmocka_run_group_tests_name("spec", tests, NULL, NULL);
}
