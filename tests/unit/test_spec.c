/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The model spec: parameter counts, presets, overrides and hostile input.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "moeutil.h"
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

/* arch.head_dim: heads that are not hidden / heads wide.  A small arch by
 * hand: hidden 64, 4 heads of 32 (q and o 64 x 128 each), 2 KV heads (k and
 * v 64 x 64 each), SwiGLU ffn 128, two RMSNorms: 16384 + 8192 + 24576 + 128
 * = 49280 a layer; 2 layers, untied vocab 1000, final norm: 226624. */
static void params__head_dim__by_hand_and_qwen3(void **state)
{
    mesh_model_t m = test_spec("arch: {layers: 2, hidden: 64, heads: 4, kv_heads: 2, head_dim: 32, "
                               "ffn: 128, vocab: 1000}\n");
    assert_int_equal(m.head_dim, 32);
    assert_int_equal((uint64_t)mesh_model_layer_params(&m), 49280);
    assert_int_equal((uint64_t)m.params, 226624);
    double q, kv;
    mesh_model_attn_widths(&m, &q, &kv);
    assert_true(q == 2 && kv == 1);
    /* heads need not divide hidden when head_dim is given */
    m = test_spec("arch: {layers: 2, hidden: 96, heads: 64, head_dim: 8, vocab: 100}\n");
    assert_int_equal(m.heads, 64);
    expect_error("arch:\n  layers: 2\n  hidden: 96\n  heads: 64\n  vocab: 100\n", "arch.heads",
                 "does not divide hidden 96");
    /* Qwen3-32B (Qwen/Qwen3-32B model card: 64 layers, 64 Q and 8 KV heads,
     * 32.8B parameters, 31.2B without the embeddings; config: hidden 5120,
     * head_dim 128, intermediate 25600, vocab 151936, untied).  Without
     * head_dim the heads would be 80 wide and the count 28.9B. */
#define QWEN3_32B                                                                                  \
    "arch: {layers: 64, hidden: 5120, heads: 64, kv_heads: 8, ffn: 25600, vocab: 151936%s}\n"
    char yaml[256];
    snprintf(yaml, sizeof(yaml), QWEN3_32B, ", head_dim: 128");
    m = test_spec(yaml);
    double embedding = 2.0 * 151936 * 5120 + 5120;
    assert_true(m.params > 32.75e9 && m.params < 32.85e9);
    assert_true(m.params - embedding > 31.15e9 && m.params - embedding < 31.25e9);
    snprintf(yaml, sizeof(yaml), QWEN3_32B, "");
#undef QWEN3_32B
    m = test_spec(yaml);
    assert_true(m.params - embedding > 28.85e9 && m.params - embedding < 28.95e9);
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
    expect_error("params: 1e9\ntrain:\n  precision: fp16\n  grad_accum_dtype: bf16\n",
                 "bad.yaml:4: train.grad_accum_dtype: bf16 gradients under precision fp16; the "
                 "frameworks keep them in the parameters' fp16 or in fp32: use one of those",
                 "fp16 or in fp32");
    expect_error("params: 1e9\ntrain:\n  precision: fp8\n  grad_accum_dtype: fp16\n",
                 "train.grad_accum_dtype: fp16 gradients under precision fp8", "bf16 or in fp32");
    expect_error("params: 1e9\ntrain:\n  optimizer: sgd\n  optimizer_dtype: bf16\n",
                 "train.optimizer_dtype", "SGD");
    expect_error("params: 1e9\ntrain:\n  framework: deepspeed\n  optimizer_dtype: bf16\n",
                 "train.optimizer_dtype", "DeepSpeed keeps fp32");
    /* LoRA under auto is DeepSpeed's, and held to what it runs; under
     * torch the layout rules speak (and a full spec's bf16 moments stand) */
    expect_error("params: 1e9\ntrain:\n  finetune: lora\n  optimizer_dtype: bf16\n",
                 "bad.yaml:4: train.optimizer_dtype: DeepSpeed keeps fp32 Adam moments, and LoRA "
                 "trains under it; use fp32",
                 NULL);
    expect_error("arch: {layers: 2, hidden: 64, heads: 4, vocab: 100, moe: {experts: 4}}\n"
                 "train:\n  finetune: lora\n  dispatcher: deepep\n",
                 "bad.yaml:4: train.dispatcher: deepep is Megatron-LM's flex dispatcher, and LoRA "
                 "trains under DeepSpeed (leave the dispatcher out)",
                 NULL);
    {
        static const char *const fine[] = {
            "params: 1e9\ntrain:\n  optimizer_dtype: bf16\n",
            "params: 1e9\ntrain:\n  finetune: lora\n  framework: torch\n  optimizer_dtype: fp32\n",
            "arch: {layers: 2, hidden: 64, heads: 4, vocab: 100, moe: {experts: 4}}\n"
            "train:\n  dispatcher: deepep\n",
        };
        mesh_spec_dirs_t d = test_dirs();
        mesh_model_t m;
        mesh_error_t err;
        for (size_t i = 0; i < sizeof(fine) / sizeof(fine[0]); i++)
            if (mesh_spec_parse(fine[i], strlen(fine[i]), "ok.yaml", &d, &m, &err) < 0)
                fail_msg("%s: %s", fine[i], err.msg);
    }
    expect_error("params: 1e9\ntrain:\n  framework: jax\n", "train.framework",
                 "auto megatron deepspeed torch");
    /* Megatron-LM has no LoRA: the key given last is blamed, here the
     * second of the file's two (line 4) */
    expect_error("params: 1e9\ntrain:\n  framework: megatron\n  finetune: lora\n",
                 "bad.yaml:4: train.finetune: lora under framework: megatron: Megatron-LM has no "
                 "LoRA; use framework: deepspeed or torch (with Hugging Face PEFT), or finetune: "
                 "full",
                 NULL);
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
    expect_error("params: 1e9\n---\nparams: 2e9\n", "bad.yaml:2", "one YAML document");
    /* after the mapping, the parser's error, not a second document */
    expect_error("{params: 1e9}\n}\n", "bad.yaml:2", "YAML syntax error");
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
                           "train:\n  precision: \"bf\\n16 forged\"\n",
                           /* U+009B, CSI as one C1 character */
                           "\"evil\\u009b31m\": 1\n",
                           "name: \"a\xc2\x85"
                           "b\"\nparams: x\n"};
    for (int i = 0; i < (int)(sizeof(cases) / sizeof(cases[0])); i++) {
        mesh_model_t m;
        mesh_error_t err;
        assert_int_equal(mesh_spec_parse(cases[i], strlen(cases[i]), "bad.yaml", NULL, &m, &err),
                         -1);
        for (const char *c = err.msg; *c; c++)
            assert_true((unsigned char)*c >= 0x20 && *c != 0x7f);
        assert_null(strstr(err.msg, "\xc2\x9b"));
        assert_null(strstr(err.msg, "\xc2\x85"));
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
    assert_null(strstr(err.msg, "did you mean"));
    /* a typo of a preset's name gets it, as every other name does */
    assert_int_equal(mesh_spec_load("llama3-07b", &d, &m, &err), -1);
    assert_non_null(strstr(err.msg, "`meshplan presets` lists them); did you mean llama3-70b?"));
    assert_int_equal(mesh_spec_load("Mixtral-8x7B", &d, &m, &err), -1); /* names are exact */
    assert_non_null(strstr(err.msg, "; did you mean mixtral-8x7b?"));
    assert_int_equal(mesh_spec_load("", &d, &m, &err), -1);
    /* presets are not available to a spec read without preset directories */
    const char *yaml = "preset: llama2-7b\n";
    assert_int_equal(mesh_spec_parse(yaml, strlen(yaml), "x.yaml", NULL, &m, &err), -1);
}

/* A spec is a file where its name says so (a '/', or .yaml, .yml or .json
 * after at least one character), else a preset: `--model mine.yaml` in the
 * working directory reads that file, not a preset of that name. */
static void presets__a_file_by_its_name(void **state)
{
    (void)state;
    static const char *const files[] = {"m.yaml",      "my-model.yaml", "m.yml",
                                        "config.json", "dir/llama3-8b", "./llama3-8b"};
    static const char *const presets[] = {"llama3-8b", ".yaml",      ".yml",
                                          ".json",     "m.yaml.bak", "myaml"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
        if (!mesh_spec_is_path(files[i]))
            fail_msg("%s read as a preset's name", files[i]);
    for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++)
        if (mesh_spec_is_path(presets[i]))
            fail_msg("%s read as a file's path", presets[i]);
    char dir[] = "/tmp/meshplan-cwd-XXXXXX", was[4096];
    assert_non_null(mkdtemp(dir));
    assert_non_null(getcwd(was, sizeof(was)));
    assert_int_equal(chdir(dir), 0);
    FILE *f = fopen("mine.yaml", "w");
    assert_non_null(f);
    fputs("preset: llama3-8b\nname: mine\n", f);
    fclose(f);
    mesh_spec_dirs_t d = test_dirs();
    mesh_model_t m;
    mesh_error_t err;
    int rc = mesh_spec_load("mine.yaml", &d, &m, &err);
    unlink("mine.yaml");
    assert_int_equal(chdir(was), 0);
    rmdir(dir);
    if (rc < 0)
        fail_msg("%s", err.msg);
    assert_string_equal(m.name, "mine");
}

/* A site's preset NAME.yaml of `text` in a new directory made from the
 * mkdtemp template dir[]; its path into path[len]. */
static void write_preset(char *dir, const char *name, const char *text, char *path, size_t len)
{
    assert_non_null(mkdtemp(dir));
    snprintf(path, len, "%s/%s.yaml", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
}

/* A preset whose file gives no name: is its preset's name however it is
 * named (meshplan-spec(5), name: "default: the preset's, else model"): by
 * --model NAME as by a spec's preset: NAME; a name given still wins. */
static void presets__nameless_named_after_the_preset(void **state)
{
    char dir[] = "/tmp/meshplan-spec-XXXXXX", path[256];
    write_preset(dir, "tiny-noname",
                 "arch:\n  layers: 4\n  hidden: 1024\n  heads: 8\n  ffn: 4096\n  vocab: 32000\n",
                 path, sizeof(path));
    mesh_spec_dirs_t d = {{dir, NULL, NULL, NULL}};
    mesh_model_t m;
    mesh_error_t err;
    assert_int_equal(mesh_spec_load("tiny-noname", &d, &m, &err), 0);
    assert_string_equal(m.name, "tiny-noname");
    const char *yaml = "preset: tiny-noname\ntrain:\n  global_batch: 64\n";
    assert_int_equal(mesh_spec_parse(yaml, strlen(yaml), "x.yaml", &d, &m, &err), 0);
    assert_string_equal(m.name, "tiny-noname");
    const char *sets[] = {"name=mine"};
    assert_int_equal(mesh_spec_load_with("tiny-noname", &d, "--set", sets, 1, &m, &err), 0);
    assert_string_equal(m.name, "mine");
    /* a file read by its path is no preset: the default */
    assert_int_equal(mesh_spec_load(path, &d, &m, &err), 0);
    assert_string_equal(m.name, "model");
    unlink(path);
    rmdir(dir);
}

/* Two directories of 200 presets each, more than a typo's suggestion
 * reads (256 names in all): the name is still refused in one line, what
 * was read is never written past, and the first directory's names, read
 * whole, are suggested. */
static void presets__more_than_the_suggestion_reads(void **state)
{
    (void)state;
    char dirs[2][32] = {"/tmp/meshplan-spec-XXXXXX", "/tmp/meshplan-spec-XXXXXX"}, path[256];
    for (int k = 0; k < 2; k++) {
        assert_non_null(mkdtemp(dirs[k]));
        for (int i = 0; i < 200; i++) {
            snprintf(path, sizeof(path), "%s/site-%c-%03d.yaml", dirs[k], 'a' + k, i);
            int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
            assert_true(fd >= 0);
            close(fd);
        }
    }
    mesh_spec_dirs_t d = {{dirs[0], dirs[1], NULL, NULL}};
    mesh_model_t m;
    mesh_error_t err;
    assert_int_equal(mesh_spec_load("llama3-07b", &d, &m, &err), -1);
    assert_non_null(strstr(err.msg, "unknown preset 'llama3-07b'"));
    assert_null(strchr(err.msg, '\n'));
    assert_int_equal(mesh_spec_load("site-a-0xy", &d, &m, &err), -1);
    assert_non_null(strstr(err.msg, "; did you mean site-a-0"));
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < 200; i++) {
            snprintf(path, sizeof(path), "%s/site-%c-%03d.yaml", dirs[k], 'a' + k, i);
            unlink(path);
        }
        rmdir(dirs[k]);
    }
}

/* All four directories of the list given (none NULL to end it early):
 * a preset in the last is found, a typo of it suggested, and a name in
 * none refused naming all four; nothing past the list is read (it is
 * allocated alone, so that AddressSanitizer sees a read past it). */
static void presets__all_four_directories(void **state)
{
    (void)state;
    char dirs[4][32], path[256];
    for (int k = 0; k < 4; k++) {
        snprintf(dirs[k], sizeof(dirs[k]), "/tmp/meshplan-spec-XXXXXX");
        assert_non_null(mkdtemp(dirs[k]));
    }
    snprintf(path, sizeof(path), "%s/tiny-fourth.yaml", dirs[3]);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("arch:\n  layers: 4\n  hidden: 1024\n  heads: 8\n  ffn: 4096\n  vocab: 32000\n", f);
    assert_int_equal(fclose(f), 0);
    mesh_spec_dirs_t *d = malloc(sizeof(*d));
    assert_non_null(d);
    for (int k = 0; k < 4; k++)
        d->dirs[k] = dirs[k];
    mesh_model_t m;
    mesh_error_t err;
    assert_int_equal(mesh_spec_load("tiny-fourth", d, &m, &err), 0);
    assert_int_equal(m.layers, 4);
    assert_int_equal(mesh_spec_load("tiny-forth", d, &m, &err), -1);
    assert_non_null(strstr(err.msg, "did you mean tiny-fourth?"));
    for (int k = 0; k < 4; k++)
        assert_non_null(strstr(err.msg, dirs[k]));
    free(d);
    unlink(path);
    for (int k = 0; k < 4; k++)
        rmdir(dirs[k]);
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

/* ---- every key, as meshplan-spec(5) documents it ----
 *
 * One row per key (and per context where a key's meaning depends on another,
 * as grad_accum_dtype's default does on precision), written from the man page
 * and doc/guide.md's spec, not from lib/spec.c's own table.  Where the man page
 * states no upper bound (the integer keys), the bound is the one the error
 * message states to users. */

enum ftype { T_NONE, T_INT, T_LONG, T_DBL, T_ENUM, T_NAME };

_Static_assert(sizeof(mesh_precision_t) == sizeof(int), "enums are read as int");

typedef struct doc_key {
    const char *section; /* "" (top level), "arch" or "train" */
    const char *key;
    const char *ctx;    /* what the values need: "section.key: value" items, ", "-separated */
    const char *dflt;   /* the documented default as a spec writes it; NULL: none */
    const char *absent; /* NULL, or the whole error when the key is left out */
    const char *lo, *below, *hi, *above; /* the bounds (accepted) and one past them (refused) */
    const char *oor;  /* the error past a bound: {} is the value, {40} its first 40 characters */
    const char *good; /* other values accepted, space-separated */
    const char *bad, *bad_msg; /* a value refused, and the error ("..." at the end: a prefix) */
    size_t off;                /* where the value lands in mesh_model_t */
    enum ftype type;
} doc_key_t;

#define AT(member, t) offsetof(mesh_model_t, member), t
#define PARAMS        "params: 1e9"
#define ARCH          "arch.layers: 2, arch.hidden: 64, arch.heads: 4, arch.vocab: 100"
#define NAME_RULE     "is not a valid name (letters, digits, '.', '_', '-'; at most 63 characters)"
/* what a count may be written as (mesh_parse_count) */
#define COUNTS                                                                                     \
    ": digits, or a number with k, M, G or B, T (powers of 1000) or Ki, Mi, Gi, Ti (powers of "    \
    "1024): 32k is 32000, 32Ki 32768)"
#define ARCH_NEEDS "is missing (an arch needs layers, hidden, heads and vocab)"

static const doc_key_t doc_keys[] = {
    /* top level */
    {"", "name", PARAMS, "model", NULL, NULL, NULL, "@63", "@64", "name: '{40}' " NAME_RULE,
     "my-70b x.y_z-1 Llama3", "../etc", "name: '{}' " NAME_RULE, AT(name, T_NAME)},
    {"", "preset", "", NULL, NULL, NULL, NULL, NULL, NULL, NULL, "llama3-8b gpt3-175b params-only",
     "no-such-model", "preset: unknown preset '{}' (looked in: ...", 0, T_NONE},
    {"", "params", "", NULL, NULL, "1000", "999", "1e16", "1.001e16",
     "params: {} is out of range (allowed 1000..10000000000000000)", "70.55e9 13e9 8B 1.5T", "lots",
     "params: '{}' is not an integer (expected 1000..10000000000000000" COUNTS, AT(params, T_DBL)},
    /* given with an arch, it replaces the computed count */
    {"", "params", ARCH, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "5e9 1000", "1e17",
     "params: {} is out of range (allowed 1000..10000000000000000)", AT(params, T_DBL)},
    /* arch: layers, hidden, heads and vocab are required together */
    {"arch", "layers", "arch.hidden: 64, arch.heads: 4, arch.vocab: 100", NULL,
     "t.yaml: arch.layers " ARCH_NEEDS, "1", "0", "100000", "100001",
     "arch.layers: {} is out of range (allowed 1..100000)", "80", "2.5",
     "arch.layers: '{}' is not a whole number (expected an integer in 1..100000)",
     AT(layers, T_INT)},
    {"arch", "hidden", "arch.layers: 2, arch.heads: 1, arch.vocab: 1000", NULL,
     "t.yaml: arch.hidden " ARCH_NEEDS, "1", "0", "1048576", "1048577",
     "arch.hidden: {} is out of range (allowed 1..1048576)", "4096 1e3 2Ki", "64x",
     "arch.hidden: '{}' is not an integer (expected 1..1048576" COUNTS, AT(hidden, T_INT)},
    {"arch", "heads", "arch.layers: 1, arch.hidden: 65536, arch.vocab: 100", NULL,
     "t.yaml: arch.heads " ARCH_NEEDS, "1", "0", "65536", "65537",
     "arch.heads: {} is out of range (allowed 1..65536)", "64", "many",
     "arch.heads: '{}' is not an integer (expected 1..65536" COUNTS, AT(heads, T_INT)},
    /* heads must divide hidden */
    {"arch", "heads", "arch.layers: 2, arch.hidden: 64, arch.vocab: 100", NULL, NULL, NULL, NULL,
     NULL, NULL, NULL, "4 16 64", "5", "arch.heads: {} does not divide hidden 64",
     AT(heads, T_INT)},
    /* default: heads; must divide heads */
    {"arch", "kv_heads", "arch.layers: 1, arch.hidden: 65536, arch.heads: 65536, arch.vocab: 100",
     "65536", NULL, "1", "0", "65536", "65537",
     "arch.kv_heads: {} is out of range (allowed 1..65536)", "8", "3",
     "arch.kv_heads: {} must divide heads 65536", AT(kv_heads, T_INT)},
    /* default: hidden / heads (0 in the model: not given) */
    {"arch", "head_dim", ARCH, NULL, NULL, "1", "0", "65536", "65537",
     "arch.head_dim: {} is out of range (allowed 1..65536)", "16 128", "wide",
     "arch.head_dim: '{}' is not an integer (expected 1..65536" COUNTS, AT(head_dim, T_INT)},
    /* default: 4 * hidden */
    {"arch", "ffn", ARCH, "256", NULL, "1", "0", "16777216", "16777217",
     "arch.ffn: {} is out of range (allowed 1..16777216)", "11008", "0x10",
     "arch.ffn: '{}' is not an integer (expected 1..16777216" COUNTS, AT(ffn, T_INT)},
    {"arch", "vocab", "arch.layers: 2, arch.hidden: 64, arch.heads: 4", NULL,
     "t.yaml: arch.vocab " ARCH_NEEDS, "1", "0", "16777216", "16777217",
     "arch.vocab: {} is out of range (allowed 1..16777216)", "128256", "big",
     "arch.vocab: '{}' is not an integer (expected 1..16777216" COUNTS, AT(vocab, T_INT)},
    {"arch", "mlp", ARCH, "swiglu", NULL, NULL, NULL, NULL, NULL, NULL,
     "gelu swiglu relu2 quick_geglu", "relu",
     "arch.mlp: '{}' is not one of: gelu swiglu relu2 quick_geglu", AT(mlp, T_ENUM)},
    {"arch", "tied_embeddings", ARCH, "false", NULL, NULL, NULL, NULL, NULL, NULL, "true false",
     "sometimes", "arch.tied_embeddings: '{}' is not a boolean (use true or false)",
     AT(tied_embeddings, T_INT)},
    /* train */
    {"train", "seq_len", PARAMS, "4096", NULL, "1", "0", "16777216", "16777217",
     "train.seq_len: {} is out of range (allowed 1..16777216)", "8192 32k 32Ki 4Mi", "4kb",
     "train.seq_len: '{}' is not an integer (expected 1..16777216" COUNTS, AT(seq_len, T_INT)},
    {"train", "global_batch", PARAMS, "512", NULL, "1", "0", "1073741824", "1073741825",
     "train.global_batch: {} is out of range (allowed 1..1073741824)", "1024", "1,024",
     "train.global_batch: '{}' is not an integer (expected 1..1073741824" COUNTS,
     AT(global_batch, T_LONG)},
    {"train", "micro_batch", PARAMS ", train.global_batch: 1073741824", "auto", NULL, "1", "0",
     "65536", "65537", "train.micro_batch: {} is out of range (allowed 1..65536) or auto", "2 auto",
     "lots", "train.micro_batch: '{}' is not an integer (expected 1..65536" COUNTS " or auto",
     AT(micro_batch, T_INT)},
    /* it must divide global_batch */
    {"train", "micro_batch", PARAMS ", train.global_batch: 10", "auto", NULL, NULL, NULL, NULL,
     NULL, NULL, "1 2 5 10", "3", "train.micro_batch: {} does not divide global_batch 10",
     AT(micro_batch, T_INT)},
    {"train", "precision", PARAMS, "bf16", NULL, NULL, NULL, NULL, NULL, NULL, "bf16 fp16 fp32 fp8",
     "fp4", "train.precision: '{}' is not one of: bf16 fp16 fp32 fp8", AT(precision, T_ENUM)},
    {"train", "fp8_recipe", PARAMS ", train.precision: fp8", "delayed", NULL, NULL, NULL, NULL,
     NULL, NULL, "delayed tensorwise blockwise mxfp8", "hybrid",
     "train.fp8_recipe: '{}' is not one of: delayed tensorwise blockwise mxfp8",
     AT(fp8_recipe, T_ENUM)},
    /* only with precision: fp8 */
    {"train", "fp8_recipe", PARAMS, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "", "delayed",
     "train.fp8_recipe: only means something with precision: fp8 (precision is bf16)",
     AT(fp8_recipe, T_ENUM)},
    /* default: fp32 under bf16 and fp8, fp16 under fp16; the other
     * 16-bit type is not the parameters' */
    {"train", "grad_accum_dtype", PARAMS, "fp32", NULL, NULL, NULL, NULL, NULL, NULL, "bf16 fp32",
     "fp8", "train.grad_accum_dtype: '{}' is not one of: bf16 fp16 fp32",
     AT(grad_accum_dtype, T_ENUM)},
    {"train", "grad_accum_dtype", PARAMS, "fp32", NULL, NULL, NULL, NULL, NULL, NULL, "", "fp16",
     "train.grad_accum_dtype: {} gradients under precision bf16; the frameworks keep them in the "
     "parameters' bf16 or in fp32: use one of those",
     AT(grad_accum_dtype, T_ENUM)},
    {"train", "grad_accum_dtype", PARAMS ", train.precision: fp16", "fp16", NULL, NULL, NULL, NULL,
     NULL, NULL, "fp16 fp32", "int8", "train.grad_accum_dtype: '{}' is not one of: bf16 fp16 fp32",
     AT(grad_accum_dtype, T_ENUM)},
    {"train", "grad_accum_dtype", PARAMS ", train.precision: fp16", "fp16", NULL, NULL, NULL, NULL,
     NULL, NULL, "", "bf16",
     "train.grad_accum_dtype: {} gradients under precision fp16; the frameworks keep them in the "
     "parameters' fp16 or in fp32: use one of those",
     AT(grad_accum_dtype, T_ENUM)},
    {"train", "grad_accum_dtype", PARAMS ", train.precision: fp8", "fp32", NULL, NULL, NULL, NULL,
     NULL, NULL, "bf16 fp32", "fp8", "train.grad_accum_dtype: '{}' is not one of: bf16 fp16 fp32",
     AT(grad_accum_dtype, T_ENUM)},
    {"train", "grad_accum_dtype", PARAMS ", train.precision: fp32", "fp32", NULL, NULL, NULL, NULL,
     NULL, NULL, "fp32", "bf16",
     "train.grad_accum_dtype: {} gradients under precision fp32 would lose what fp32 training "
     "keeps; use fp32 or leave it out",
     AT(grad_accum_dtype, T_ENUM)},
    {"train", "optimizer", PARAMS, "adamw", NULL, NULL, NULL, NULL, NULL, NULL, "adam adamw sgd",
     "lion", "train.optimizer: '{}' is not one of: adam adamw sgd", AT(optimizer, T_ENUM)},
    {"train", "optimizer_dtype", PARAMS, "fp32", NULL, NULL, NULL, NULL, NULL, NULL,
     "fp32 bf16 fp16", "fp8", "train.optimizer_dtype: '{}' is not one of: bf16 fp16 fp32",
     AT(optimizer_dtype, T_ENUM)},
    /* 16-bit moments are Adam's, and not DeepSpeed's */
    {"train", "optimizer_dtype", PARAMS ", train.optimizer: sgd", "fp32", NULL, NULL, NULL, NULL,
     NULL, NULL, "fp32", "bf16",
     "train.optimizer_dtype: 16-bit moments are Adam's (--exp-avg-dtype); SGD keeps fp32 "
     "momentum",
     AT(optimizer_dtype, T_ENUM)},
    {"train", "optimizer_dtype", PARAMS ", train.framework: deepspeed", "fp32", NULL, NULL, NULL,
     NULL, NULL, NULL, "fp32", "fp16",
     "train.optimizer_dtype: DeepSpeed keeps fp32 Adam moments; use fp32, or framework: megatron",
     AT(optimizer_dtype, T_ENUM)},
    {"train", "framework", PARAMS, "auto", NULL, NULL, NULL, NULL, NULL, NULL,
     "auto megatron deepspeed torch", "jax",
     "train.framework: '{}' is not one of: auto megatron deepspeed torch", AT(framework, T_ENUM)},
    {"train", "recompute", PARAMS, "auto", NULL, NULL, NULL, NULL, NULL, NULL,
     "auto none selective full", "sometimes",
     "train.recompute: '{}' is not one of: none selective full auto", AT(recompute, T_ENUM)},
    {"train", "flash_attention", PARAMS, "true", NULL, NULL, NULL, NULL, NULL, NULL, "true false",
     "perhaps", "train.flash_attention: '{}' is not a boolean (use true or false)",
     AT(flash_attention, T_INT)},
    {"train", "dropout", PARAMS, "0.0", NULL, "0", "-0.001", "1", "1.001",
     "train.dropout: {} is out of range (allowed 0..1)", "0.1", "10%",
     "train.dropout: '{}' is not a number (expected 0..1)", AT(dropout, T_DBL)},
    {"train", "finetune", PARAMS, "full", NULL, NULL, NULL, NULL, NULL, NULL, "full lora", "qlora",
     "train.finetune: '{}' is not one of: full lora", AT(finetune, T_ENUM)},
    /* multi-token prediction, and the imbalance a MoE model is priced at
     * (default: the policy's, so none here) */
    /* what Megatron-LM is told so that it builds the published model */
    {"arch", "rope_theta", ARCH, NULL, NULL, "1", "0", "2147483647", "2147483648",
     "arch.rope_theta: {} is out of range (allowed 1..2147483647)", "10000 500000", "ten",
     "arch.rope_theta: '{}' is not an integer (expected 1..2147483647" COUNTS,
     AT(rope_theta, T_INT)},
    {"arch", "rope_scaling", ARCH, "none", NULL, "1", "0.999", "1000", "1000.5",
     "arch.rope_scaling: {} is out of range (allowed 1..1000) or none", "8", "big",
     "arch.rope_scaling: '{}' is not a number (expected 1..1000) or none", AT(rope_scaling, T_DBL)},
    {"arch", "rotary_percent", ARCH, NULL, NULL, "0.01", "0.009", "1", "1.01",
     "arch.rotary_percent: {} is out of range (allowed 0.01..1)", "0.5 0.25", "half",
     "arch.rotary_percent: '{}' is not a number (expected 0.01..1)", AT(rotary_percent, T_DBL)},
    {"arch", "qk_norm", ARCH, "false", NULL, NULL, NULL, NULL, NULL, NULL, "true false", "maybe",
     "arch.qk_norm: '{}' is not a boolean (use true or false)", AT(qk_norm, T_INT)},
    {"arch", "qk_l2_norm", ARCH, "false", NULL, NULL, NULL, NULL, NULL, NULL, "true false", "maybe",
     "arch.qk_l2_norm: '{}' is not a boolean (use true or false)", AT(qk_l2_norm, T_INT)},
    {"arch", "qk_l2_norm", ARCH ", arch.qk_norm: true", NULL, NULL, NULL, NULL, NULL, NULL, NULL,
     "false", "true",
     "arch.qk_l2_norm: qk_norm and qk_l2_norm are two norms of the same queries and keys: leave "
     "one out",
     AT(qk_l2_norm, T_INT)},
    {"arch", "qkv_bias", ARCH, "false", NULL, NULL, NULL, NULL, NULL, NULL, "true false", "some",
     "arch.qkv_bias: '{}' is not a boolean (use true or false)", AT(qkv_bias, T_INT)},
    /* the attention's sliding window (the query's own token among them),
     * every N-th layer whole, its sinks; the gated activation's clamp */
    {"arch", "window", ARCH, NULL, NULL, "1", "0", "16777216", "16777217",
     "arch.window: {} is out of range (allowed 1..16777216)", "128 4096", "wide",
     "arch.window: '{}' is not an integer (expected 1..16777216" COUNTS, AT(window, T_INT)},
    {"arch", "full_attention_every",
     "arch.layers: 100000, arch.hidden: 64, arch.heads: 4, arch.vocab: 100, arch.window: 128", NULL,
     NULL, "2", "1", "100000", "100001",
     "arch.full_attention_every: {} is out of range (allowed 2..100000)", "4 6", "half",
     "arch.full_attention_every: '{}' is not an integer (expected 2..100000" COUNTS,
     AT(full_attention_every, T_INT)},
    {"arch", "full_attention_every", ARCH ", arch.window: 128", NULL, NULL, NULL, NULL, NULL, NULL,
     NULL, "2", "3",
     "arch.full_attention_every: {} is more than the 2 layers, so no layer would see the whole "
     "sequence; leave it out for every layer windowed",
     AT(full_attention_every, T_INT)},
    {"arch", "full_attention_every", ARCH, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "", "2",
     "arch.full_attention_every: only means something with a sliding window (give arch.window, "
     "or leave it out)",
     AT(full_attention_every, T_INT)},
    /* every N-th layer unrotated (Llama 4's NoPE layers), N dividing the
     * layers as Megatron-LM's --no-rope-freq must */
    {"arch", "nope_every", "arch.layers: 100000, arch.hidden: 64, arch.heads: 4, arch.vocab: 100",
     NULL, NULL, "2", "1", "100000", "100001",
     "arch.nope_every: {} is out of range (allowed 2..100000)", "4 10", "fourth",
     "arch.nope_every: '{}' is not an integer (expected 2..100000" COUNTS, AT(nope_every, T_INT)},
    {"arch", "nope_every", "arch.layers: 48, arch.hidden: 64, arch.heads: 4, arch.vocab: 100", NULL,
     NULL, NULL, NULL, NULL, NULL, NULL, "4 48", "5",
     "arch.nope_every: 5 does not divide the 48 layers, as Megatron-LM's --no-rope-freq must",
     AT(nope_every, T_INT)},
    {"arch", "nope_every", ARCH ", arch.mlp: gelu", NULL, NULL, NULL, NULL, NULL, NULL, NULL, "",
     "2",
     "arch.nope_every: leaves every N-th layer unrotated, and mlp: gelu learns its positions: "
     "leave it out, or use mlp: swiglu",
     AT(nope_every, T_INT)},
    /* the rotary embedding on adjacent pairs (Llama 4's checkpoints) */
    {"arch", "rotary_interleaved", ARCH, "false", NULL, NULL, NULL, NULL, NULL, NULL, "true false",
     "pairs", "arch.rotary_interleaved: '{}' is not a boolean (use true or false)",
     AT(rotary_interleaved, T_INT)},
    {"arch", "rotary_interleaved", ARCH ", arch.mlp: gelu", NULL, NULL, NULL, NULL, NULL, NULL,
     NULL, "false", "true",
     "arch.rotary_interleaved: mlp: gelu learns its positions: leave it out, or use mlp: swiglu",
     AT(rotary_interleaved, T_INT)},
    {"arch", "attention_sinks", ARCH, "false", NULL, NULL, NULL, NULL, NULL, NULL, "true false",
     "some", "arch.attention_sinks: '{}' is not a boolean (use true or false)",
     AT(attention_sinks, T_INT)},
    {"arch", "activation_clamp", ARCH ", arch.mlp: quick_geglu", "none", NULL, "0.001", "0.0009",
     "1000", "1001", "arch.activation_clamp: {} is out of range (allowed 0.001..1000) or none",
     "7 10.5 none", "high",
     "arch.activation_clamp: '{}' is not a number (expected 0.001..1000) or none",
     AT(activation_clamp, T_DBL)},
    {"arch", "activation_clamp", ARCH ", arch.mlp: gelu", NULL, NULL, NULL, NULL, NULL, NULL, NULL,
     "", "7",
     "arch.activation_clamp: clamps a gated MLP's inputs; mlp: gelu is not gated (use swiglu or "
     "quick_geglu, or leave it out)",
     AT(activation_clamp, T_DBL)},
    {"arch", "activation_clamp", ARCH, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "", "7",
     "arch.activation_clamp: Megatron-LM clamps a SwiGLU only in experts (arch.moe); leave it "
     "out for a dense model",
     AT(activation_clamp, T_DBL)},
    {"arch", "activation_clamp", ARCH ", arch.moe: {experts: 4}", NULL, NULL, NULL, NULL, NULL,
     NULL, NULL, "7", "-1",
     "arch.activation_clamp: -1 is out of range (allowed 0.001..1000) or none",
     AT(activation_clamp, T_DBL)},
    /* how rope_scaling scales: Llama 3.1's, or YaRN; YaRN's rounding */
    {"arch", "rope_type", ARCH ", arch.rope_scaling: 8", "llama3", NULL, NULL, NULL, NULL, NULL,
     NULL, "llama3 yarn", "ntk", "arch.rope_type: '{}' is not one of: llama3 yarn",
     AT(rope_type, T_ENUM)},
    {"arch", "rope_type", ARCH, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "", "yarn",
     "arch.rope_type: says how arch.rope_scaling scales the rotary frequencies: give "
     "rope_scaling, or leave it out",
     AT(rope_type, T_ENUM)},
    {"arch", "yarn_truncate", ARCH ", arch.rope_scaling: 32, arch.rope_type: yarn", "true", NULL,
     NULL, NULL, NULL, NULL, NULL, "true false", "maybe",
     "arch.yarn_truncate: '{}' is not one of: true false", AT(yarn_truncate, T_ENUM)},
    {"arch", "yarn_truncate", ARCH ", arch.rope_scaling: 8", NULL, NULL, NULL, NULL, NULL, NULL,
     NULL, "", "false",
     "arch.yarn_truncate: only means something with YaRN in standard attention (rope_type: yarn "
     "and rope_scaling): leave it out",
     AT(yarn_truncate, T_ENUM)},
    {"arch", "norm_eps", ARCH, NULL, NULL, "1e-12", "1e-13", "0.1", "0.2",
     "arch.norm_eps: {} is out of range (allowed 1e-12..0.1)", "1e-5 1e-6", "tiny",
     "arch.norm_eps: '{}' is not a number (expected 1e-12..0.1)", AT(norm_eps, T_DBL)},
    {"arch", "mtp_layers", ARCH, "0", NULL, "0", "-1", "64", "65",
     "arch.mtp_layers: {} is out of range (allowed 0..64)", "1 2", "one",
     "arch.mtp_layers: '{}' is not an integer (expected 0..64" COUNTS, AT(mtp_layers, T_INT)},
    {"train", "moe_imbalance", ARCH ", arch.moe: {experts: 4}", NULL, NULL, "1", "0.999", "1000",
     "1000.5", "train.moe_imbalance: {} is out of range (allowed 1..1000)", "1.25 2", "even",
     "train.moe_imbalance: '{}' is not a number (expected 1..1000)", AT(moe_imbalance, T_DBL)},
    {"train", "ep_overlap", ARCH ", arch.moe: {experts: 4}", "on", NULL, NULL, NULL, NULL, NULL,
     NULL, "on off", "maybe", "train.ep_overlap: '{}' is not one of: on off",
     AT(ep_overlap, T_ENUM)},
    {"train", "ep_overlap", ARCH, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "", "off",
     "train.ep_overlap: only means something for a MoE model (give arch.moe, or leave it out)",
     AT(ep_overlap, T_ENUM)},
    {"train", "dispatcher", ARCH ", arch.moe: {experts: 4}", "auto", NULL, NULL, NULL, NULL, NULL,
     NULL, "alltoall deepep", "nccl", "train.dispatcher: '{}' is not one of: auto alltoall deepep",
     AT(dispatcher, T_ENUM)},
    {"train", "dispatcher", ARCH, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "", "deepep",
     "train.dispatcher: only means something for a MoE model (give arch.moe, or leave it out)",
     AT(dispatcher, T_ENUM)},
    {"train", "headroom", PARAMS, "0", NULL, "0", "-0.01", "0.9", "0.91",
     "train.headroom: {} is out of range (allowed 0..0.9)", "0.05 0.5", "lots",
     "train.headroom: '{}' is not a number (expected 0..0.9)", AT(headroom, T_DBL)},
    /* the training budget, for the run-time estimate: absent, none; one good
     * value each, as the budget is not in the digest the test tells models by */
    {"train", "tokens", PARAMS, NULL, NULL, "1", "0", "1e18", "1.1e18",
     "train.tokens: {} is out of range (allowed 1..1000000000000000000)", "15e12", "1.5",
     "train.tokens: '{}' is not a whole number (expected an integer in 1..1000000000000000000)",
     AT(tokens, T_DBL)},
    {"train", "steps", PARAMS, NULL, NULL, "1", "0", "1000000000000000", "1000000000000001",
     "train.steps: {} is out of range (allowed 1..1000000000000000)", "250000", "1e4s",
     "train.steps: '{}' is not an integer (expected 1..1000000000000000" COUNTS, AT(steps, T_LONG)},
};

/* The mappings nested in a section (meshplan.yaml(5) documents their keys
 * in their own lists; tests/unit/test_spec.c checks them). */
static const char *const doc_subsections[] = {"arch.moe", "arch.mla"};

#define DOC_KEYS (sizeof(doc_keys) / sizeof(doc_keys[0]))

static const char *const doc_sections[] = {"", "arch", "train"};

/* "@N": N letters (a name of that length); anything else as it is. */
static const char *doc_value(const char *v, char *buf, size_t len)
{
    if (v[0] != '@')
        return v;
    size_t n = strtoul(v + 1, NULL, 10);
    assert_true(n < len);
    memset(buf, 'n', n);
    buf[n] = '\0';
    return buf;
}

/* The template with {} replaced by the value ({40}: its first 40 characters). */
static void doc_subst(const char *tmpl, const char *value, char *out, size_t len)
{
    size_t n = strlen(out);
    for (const char *t = tmpl; *t && n + 1 < len; t++) {
        if (strncmp(t, "{}", 2) == 0 || strncmp(t, "{40}", 4) == 0) {
            int w = t[1] == '}' ? (int)strlen(value) : 40;
            n += (size_t)snprintf(out + n, len - n, "%.*s", w, value);
            t += t[1] == '}' ? 1 : 3;
        } else {
            out[n++] = *t;
            out[n] = '\0';
        }
    }
    assert_true(n + 1 < len);
}

static void doc_append(char *buf, size_t len, const char *text, size_t tlen)
{
    size_t n = strlen(buf);
    assert_true(n + tlen + 1 < len);
    memcpy(buf + n, text, tlen);
    buf[n + tlen] = '\0';
}

/* Append the row's context items of section sec (indented inside one). */
static void doc_ctx(const doc_key_t *k, const char *sec, char *buf, size_t len, int *header)
{
    for (const char *item = k->ctx; item && *item;) {
        size_t n = strcspn(item, ",");
        const char *colon = memchr(item, ':', n), *dot = memchr(item, '.', n);
        size_t slen = dot && dot < colon ? (size_t)(dot - item) : 0;
        if (strlen(sec) == slen && strncmp(item, sec, slen) == 0) {
            if (*header) {
                doc_append(buf, len, sec, strlen(sec));
                doc_append(buf, len, ":\n", 2);
                *header = 0;
            }
            if (*sec)
                doc_append(buf, len, "  ", 2);
            const char *rest = slen ? item + slen + 1 : item;
            doc_append(buf, len, rest, n - (size_t)(rest - item));
            doc_append(buf, len, "\n", 1);
        }
        item += n;
        item += strspn(item, ", ");
    }
}

/* The spec of row k with its key set to value (NULL: left out) in section
 * sec (k's own, or a wrong one); the key is the last line.  Returns its line. */
static int doc_spec(const doc_key_t *k, const char *sec, const char *value, char *buf, size_t len)
{
    buf[0] = '\0';
    int header = 0;
    doc_ctx(k, "", buf, len, &header);
    for (int i = 1; i < 3; i++)
        if (strcmp(doc_sections[i], sec) != 0) {
            header = 1;
            doc_ctx(k, doc_sections[i], buf, len, &header);
        }
    header = *sec != '\0';
    if (*sec)
        doc_ctx(k, sec, buf, len, &header);
    if (!value)
        return 0;
    if (header) {
        doc_append(buf, len, sec, strlen(sec));
        doc_append(buf, len, ":\n", 2);
    }
    char line[600];
    snprintf(line, sizeof(line), "%s%s: %s\n", *sec ? "  " : "", k->key, value);
    doc_append(buf, len, line, strlen(line));
    int lines = 0;
    for (const char *c = buf; *c; c++)
        lines += *c == '\n';
    return lines;
}

static int doc_parse(const char *text, mesh_model_t *m, mesh_error_t *err)
{
    mesh_spec_dirs_t d = test_dirs();
    return mesh_spec_parse(text, strlen(text), "t.yaml", &d, m, err);
}

static mesh_model_t doc_accept(const char *text)
{
    mesh_model_t m;
    mesh_error_t err;
    if (doc_parse(text, &m, &err) < 0)
        fail_msg("refused: %s\n--- spec:\n%s", err.msg, text);
    return m;
}

/* The spec must be refused with "t.yaml:LINE: " and the template (line 0:
 * the template is the whole message). */
static void doc_refuse(const char *text, int line, const char *tmpl, const char *value)
{
    mesh_model_t m;
    mesh_error_t err;
    char want[MESH_ERROR_MAX + 64] = "";
    if (doc_parse(text, &m, &err) == 0)
        fail_msg("accepted, wanted the error '%s'\n--- spec:\n%s", tmpl, text);
    if (line)
        snprintf(want, sizeof(want), "t.yaml:%d: ", line);
    doc_subst(tmpl, value, want, sizeof(want));
    size_t n = strlen(want);
    int prefix = n > 3 && strcmp(want + n - 3, "...") == 0;
    if (prefix ? strncmp(err.msg, want, n - 3) != 0 : strcmp(err.msg, want) != 0)
        fail_msg("error '%s'\n wanted '%s'\n--- spec:\n%s", err.msg, want, text);
}

/* The value as the model holds it, for the numeric kinds. */
static double doc_field(const mesh_model_t *m, const doc_key_t *k)
{
    const char *p = (const char *)m + k->off;
    int i;
    long l;
    double d;
    switch (k->type) {
    case T_INT:
    case T_ENUM: memcpy(&i, p, sizeof(i)); return i;
    case T_LONG: memcpy(&l, p, sizeof(l)); return (double)l;
    case T_DBL: memcpy(&d, p, sizeof(d)); return d;
    default: return 0;
    }
}

/* The model holds value for k's key (numbers and names; the enums are
 * checked by the digests differing). */
static void doc_check_value(const mesh_model_t *m, const doc_key_t *k, const char *value)
{
    char *end;
    double want = strtod(value, &end);
    if (k->type == T_NONE && strcmp(k->key, "preset") == 0) {
        /* the preset itself, as loaded by name */
        char d1[17], d2[17];
        mesh_model_t p = test_preset(value);
        if (strcmp(mesh_model_digest(m, d1), mesh_model_digest(&p, d2)) != 0)
            fail_msg("preset: %s is not the preset loaded by its name", value);
    } else if (k->type == T_NAME) {
        if (strcmp(m->name, value) != 0)
            fail_msg("%s: '%s' read back as name '%s'", k->key, value, m->name);
    } else if (k->type != T_ENUM && k->type != T_NONE && *end == '\0' && end != value) {
        if (doc_field(m, k) != want)
            fail_msg("%s.%s: '%s' read back as %.17g", k->section, k->key, value, doc_field(m, k));
    } else if (k->type == T_INT && strcmp(value, "true") == 0) {
        assert_int_equal((int)doc_field(m, k), 1);
    } else if (k->type == T_INT && (strcmp(value, "false") == 0 || strcmp(value, "auto") == 0)) {
        assert_int_equal((int)doc_field(m, k), 0);
    }
}

static void keys__documented_defaults(void **state)
{
    char text[1024], with[1024], d1[17], d2[17];
    int checked = 0;
    for (size_t i = 0; i < DOC_KEYS; i++) {
        const doc_key_t *k = &doc_keys[i];
        doc_spec(k, k->section, NULL, text, sizeof(text));
        if (k->absent)
            doc_refuse(text, 0, k->absent, "");
        if (!k->dflt)
            continue;
        /* leaving the key out is writing its documented default */
        mesh_model_t left_out = doc_accept(text);
        doc_spec(k, k->section, k->dflt, with, sizeof(with));
        mesh_model_t given = doc_accept(with);
        doc_check_value(&left_out, k, k->dflt);
        if (strcmp(mesh_model_digest(&left_out, d1), mesh_model_digest(&given, d2)) != 0)
            fail_msg("%s%s%s: the default is not the documented '%s' (context: %s)", k->section,
                     *k->section ? "." : "", k->key, k->dflt, k->ctx);
        checked++;
    }
    assert_true(checked >= 20);
}

static void keys__bounds_accepted_one_past_refused(void **state)
{
    char text[1024], v[80];
    int checked = 0;
    for (size_t i = 0; i < DOC_KEYS; i++) {
        const doc_key_t *k = &doc_keys[i];
        const char *at[] = {k->lo, k->hi}, *past[] = {k->below, k->above};
        for (int j = 0; j < 2; j++) {
            if (at[j]) {
                const char *val = doc_value(at[j], v, sizeof(v));
                doc_spec(k, k->section, val, text, sizeof(text));
                mesh_model_t m = doc_accept(text);
                doc_check_value(&m, k, val);
                checked++;
            }
            if (past[j]) {
                const char *val = doc_value(past[j], v, sizeof(v));
                int line = doc_spec(k, k->section, val, text, sizeof(text));
                doc_refuse(text, line, k->oor, val);
                checked++;
            }
        }
    }
    assert_true(checked >= 40);
}

static void keys__values_accepted_and_refused(void **state)
{
    char text[1024];
    for (size_t i = 0; i < DOC_KEYS; i++) {
        const doc_key_t *k = &doc_keys[i];
        char digests[8][17];
        int n = 0;
        char good[128];
        snprintf(good, sizeof(good), "%s", k->good ? k->good : "");
        char *save = NULL;
        for (char *v = strtok_r(good, " ", &save); v; v = strtok_r(NULL, " ", &save)) {
            doc_spec(k, k->section, v, text, sizeof(text));
            mesh_model_t m = doc_accept(text);
            doc_check_value(&m, k, v);
            /* every value means something else */
            assert_true(n < 8);
            mesh_model_digest(&m, digests[n]);
            for (int j = 0; j < n; j++)
                if (strcmp(digests[j], digests[n]) == 0)
                    fail_msg("%s: two of '%s' read as the same model", k->key, k->good);
            n++;
        }
        if (k->bad) {
            int line = doc_spec(k, k->section, k->bad, text, sizeof(text));
            doc_refuse(text, line, k->bad_msg, k->bad);
        }
    }
}

/* The keys "(allowed: a, b, c)" lists must be those of the table's section. */
static void doc_check_allowed(const char *msg, const char *sec)
{
    const char *list = strstr(msg, "(allowed: ");
    if (!list)
        fail_msg("'%s' does not list the allowed keys", msg);
    list += strlen("(allowed: ");
    const char *close = strchr(list, ')');
    assert_non_null(close);
    int listed = 0;
    while (list < close) {
        size_t n = strcspn(list, ",)");
        int found = !*sec && ((n == 4 && strncmp(list, "arch", 4) == 0) ||
                              (n == 5 && strncmp(list, "train", 5) == 0));
        for (size_t i = 0; !found && i < sizeof(doc_subsections) / sizeof(*doc_subsections); i++)
            found = strncmp(doc_subsections[i], sec, strlen(sec)) == 0 && *sec &&
                    doc_subsections[i][strlen(sec)] == '.' &&
                    strlen(doc_subsections[i] + strlen(sec) + 1) == n &&
                    strncmp(doc_subsections[i] + strlen(sec) + 1, list, n) == 0;
        for (size_t i = 0; !found && i < DOC_KEYS; i++)
            found = strcmp(doc_keys[i].section, sec) == 0 && strlen(doc_keys[i].key) == n &&
                    strncmp(doc_keys[i].key, list, n) == 0;
        if (!found)
            fail_msg("'%s' allows '%.*s', which meshplan-spec(5) does not document in '%s'", msg,
                     (int)n, list, sec);
        listed++;
        list += n;
        list += strspn(list, ", ");
    }
    /* and every documented key is listed */
    int documented = *sec ? 0 : 2;
    for (size_t i = 0; *sec && i < sizeof(doc_subsections) / sizeof(*doc_subsections); i++)
        documented += strncmp(doc_subsections[i], sec, strlen(sec)) == 0 &&
                      doc_subsections[i][strlen(sec)] == '.';
    for (size_t i = 0; i < DOC_KEYS; i++) {
        int dup = 0;
        for (size_t j = 0; j < i; j++)
            dup |= strcmp(doc_keys[j].section, doc_keys[i].section) == 0 &&
                   strcmp(doc_keys[j].key, doc_keys[i].key) == 0;
        documented += !dup && strcmp(doc_keys[i].section, sec) == 0;
    }
    if (listed != documented)
        fail_msg("'%s' lists %d keys; meshplan-spec(5) documents %d in '%s'", msg, listed,
                 documented, sec);
}

static void doc_refuse_unknown(const char *text, int line, const char *key, const char *sec)
{
    mesh_model_t m;
    mesh_error_t err;
    char want[256];
    if (doc_parse(text, &m, &err) == 0)
        fail_msg("'%s' accepted in '%s'\n--- spec:\n%s", key, sec, text);
    snprintf(want, sizeof(want), "t.yaml:%d: unknown key '%s'%s%s (allowed: ", line, key,
             *sec ? " in " : "", sec);
    if (strncmp(err.msg, want, strlen(want)) != 0)
        fail_msg("error '%s'\n wanted '%s...'\n--- spec:\n%s", err.msg, want, text);
    doc_check_allowed(err.msg, sec);
}

static void keys__only_in_their_section(void **state)
{
    char text[1024], v[80];
    int checked = 0;
    for (size_t i = 0; i < DOC_KEYS; i++) {
        const doc_key_t *k = &doc_keys[i];
        const char *val = k->dflt ? k->dflt : k->lo ? k->lo : k->good;
        char first[80];
        snprintf(first, sizeof(first), "%s", doc_value(val, v, sizeof(v)));
        first[strcspn(first, " ")] = '\0';
        for (int s = 0; s < 3; s++) {
            if (strcmp(doc_sections[s], k->section) == 0)
                continue;
            int line = doc_spec(k, doc_sections[s], first, text, sizeof(text));
            doc_refuse_unknown(text, line, k->key, doc_sections[s]);
            checked++;
        }
    }
    assert_true(checked >= 60);
    /* no section but arch and train, and no dotted keys */
    doc_refuse_unknown("params: 1e9\nmodel:\n  seq_len: 4096\n", 2, "model", "");
    doc_refuse_unknown("params: 1e9\ntrain.seq_len: 4096\n", 2, "train.seq_len", "");
    doc_refuse_unknown("params: 1e9\ntrain:\n  train.seq_len: 4096\n", 3, "train.seq_len", "train");
    doc_refuse_unknown("params: 1e9\narch:\n  train:\n    seq_len: 1\n", 3, "train", "arch");
}

static void keys__unknown_refused_with_allowed_list(void **state)
{
    doc_refuse_unknown("params: 1e9\ncolour: blue\n", 2, "colour", "");
    doc_refuse_unknown("params: 1e9\narch:\n  colour: blue\n", 3, "colour", "arch");
    doc_refuse_unknown("params: 1e9\ntrain:\n  colour: blue\n", 3, "colour", "train");
    /* keys are case-sensitive */
    doc_refuse_unknown("params: 1e9\ntrain:\n  Seq_Len: 4096\n", 3, "Seq_Len", "train");
}

/* A spec that gives one architecture key alone, without the other three
 * of layers, hidden, heads and vocab, is refused naming the first missing
 * one: planning it from the key and the parameter count would be a guess. */
static void arch__one_key_alone_refused(void **state)
{
    mesh_model_t m;
    mesh_error_t err;
    const char *yaml = "params: 7e9\narch: {layers: 32}\n";
    assert_int_equal(mesh_spec_parse(yaml, strlen(yaml), "one.yaml", NULL, &m, &err), -1);
    assert_non_null(strstr(err.msg, "arch.hidden"));
}

/* Any arch key without the four an arch needs is an arch begun and not
 * finished: refused, naming the first missing, whichever key it is. */
static void arch__any_key_alone_needs_the_four(void **state)
{
    (void)state;
    static const char *const alone[] = {
        "kv_heads: 8",        "ffn: 11008",         "mlp: swiglu",       "tied_embeddings: true",
        "mtp_layers: 1",      "rope_theta: 500000", "rope_scaling: 8",   "norm_eps: 1e-5",
        "qk_norm: true",      "qkv_bias: true",     "moe: {experts: 8}", "mla: {kv_lora_rank: 512}",
        "rotary_percent: 0.5"};
    char yaml[256];
    for (size_t i = 0; i < sizeof(alone) / sizeof(*alone); i++) {
        snprintf(yaml, sizeof(yaml), "params: 7e9\narch: {%s}\n", alone[i]);
        expect_error(yaml, "arch.layers is missing (an arch needs", NULL);
        /* and with all but one of the four */
        snprintf(yaml, sizeof(yaml), "params: 7e9\narch: {layers: 2, hidden: 64, heads: 4, %s}\n",
                 alone[i]);
        expect_error(yaml, "arch.vocab is missing (an arch needs", NULL);
    }
}

/* The MLP a spec names is the one the reports and exports name back
 * (mesh_mlp_name): gelu stays gelu, the default swiglu; a value outside
 * the enum falls back to swiglu, as spec.h says. */
static void names__mlp_as_the_spec_spells_it(void **state)
{
    const char *names[] = {"gelu", "swiglu"};
    for (int i = 0; i < 2; i++) {
        char yaml[128];
        snprintf(yaml, sizeof(yaml), "preset: llama3-8b\narch: {mlp: %s}\n", names[i]);
        mesh_model_t m = test_spec(yaml);
        assert_string_equal(mesh_mlp_name(m.mlp), names[i]);
    }
    assert_string_equal(mesh_mlp_name(test_spec("preset: llama3-8b\n").mlp), "swiglu");
    assert_string_equal(mesh_mlp_name((mesh_mlp_t)7), "swiglu");
}

/* A file overrides its preset key by key, whatever the key's kind (string,
 * integer, number, boolean, choice), and keeps the preset's other keys. */
static void preset__every_kind_overridden(void **state)
{
    mesh_model_t m = test_spec("preset: llama3-8b\nname: mine\n"
                               "arch: {tied_embeddings: true, mlp: gelu}\n"
                               "train: {flash_attention: false, dropout: 0.25, optimizer: sgd, "
                               "seq_len: 2048, micro_batch: 2, recompute: full}\n");
    assert_string_equal(m.name, "mine");
    assert_int_equal(m.tied_embeddings, 1);
    assert_int_equal(m.mlp, MESH_MLP_GELU);
    assert_int_equal(m.flash_attention, 0);
    assert_true(m.dropout == 0.25);
    assert_int_equal(m.optimizer, MESH_OPT_SGD);
    assert_int_equal(m.seq_len, 2048);
    assert_int_equal(m.micro_batch, 2);
    assert_int_equal(m.recompute, MESH_RECOMPUTE_FULL);
    /* the preset's own (etc/models/llama3-8b.yaml) */
    assert_int_equal(m.layers, 32);
    assert_int_equal(m.hidden, 4096);
    assert_int_equal(m.kv_heads, 8);
    assert_int_equal(m.vocab, 128256);
}

/* Every key of the library's table, as its "unknown key" errors list them,
 * is documented in meshplan-spec(5). */
static void keys__table_in_the_manual(void **state)
{
    const char *docs[] = {"{params: 1e9, zz: 1}", "{arch: {zz: 1}}", "{train: {zz: 1}}"};
    int checked = 0;
    for (int i = 0; i < 3; i++) {
        mesh_spec_dirs_t d = test_dirs();
        mesh_model_t m;
        mesh_error_t err;
        assert_int_equal(mesh_spec_parse(docs[i], strlen(docs[i]), "t.yaml", &d, &m, &err), -1);
        const char *list = strstr(err.msg, "(allowed: ");
        assert_non_null(list);
        checked += test_man_lists("meshplan-spec.5", list + strlen("(allowed: "), ')', ", ");
    }
    assert_true(checked >= 25); /* 3 top-level keys and 2 sections, 8 arch, 13 train */
}

/* ---- overrides (mesh_spec_load_with): a key set on the command line is
 * read as the same key of a file is ---- */

/* text in a new file, whose path goes to path[32] */
static void temp_spec(const char *text, char *path)
{
    strcpy(path, "/tmp/meshplan-spec-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

/* The context of row k as a spec file; returns its path (static). */
static const char *doc_file(const doc_key_t *k)
{
    static char path[32];
    char text[1024];
    doc_spec(k, k->section, NULL, text, sizeof(text));
    /* an empty context is an empty mapping, not an empty file */
    temp_spec(text[0] ? text : "{}\n", path);
    return path;
}

static int load_set(const char *spec, const char *set, mesh_model_t *m, mesh_error_t *err)
{
    mesh_spec_dirs_t d = test_dirs();
    const char *sets[] = {set};
    return mesh_spec_load_with(spec, &d, "--set", sets, 1, m, err);
}

/* Row k's key set to value by an override: refused with "--set: " and the
 * file's message (want NULL: accepted, as the file with the key is). */
static void override_like_file(const doc_key_t *k, const char *value, const char *want)
{
    char set[256], msg[MESH_ERROR_MAX + 64] = "--set: ", text[1024], d1[17], d2[17];
    snprintf(set, sizeof(set), "%s%s%s=%s", k->section, *k->section ? "." : "", k->key, value);
    const char *path = doc_file(k);
    mesh_model_t m;
    mesh_error_t err;
    int rc = load_set(path, set, &m, &err);
    unlink(path);
    if (!want) {
        if (rc < 0)
            fail_msg("--set %s refused: %s", set, err.msg);
        doc_spec(k, k->section, value, text, sizeof(text));
        mesh_model_t file = doc_accept(text);
        if (strcmp(mesh_model_digest(&m, d1), mesh_model_digest(&file, d2)) != 0)
            fail_msg("--set %s is not the file with that key", set);
        return;
    }
    doc_subst(want, value, msg, sizeof(msg));
    size_t n = strlen(msg);
    int prefix = n > 3 && strcmp(msg + n - 3, "...") == 0;
    if (rc == 0)
        fail_msg("--set %s accepted, wanted '%s'", set, msg);
    if (prefix ? strncmp(err.msg, msg, n - 3) != 0 : strcmp(err.msg, msg) != 0)
        fail_msg("--set %s: error '%s'\n wanted '%s'", set, err.msg, msg);
}

static void overrides__every_key_checked_as_in_a_file(void **state)
{
    char v[80];
    int checked = 0;
    for (size_t i = 0; i < DOC_KEYS; i++) {
        const doc_key_t *k = &doc_keys[i];
        if (strcmp(k->key, "preset") == 0)
            continue; /* no key of the model: refused, below */
        if (k->bad) {
            override_like_file(k, k->bad, k->bad_msg);
            checked++;
        }
        const char *past[] = {k->below, k->above}, *at[] = {k->lo, k->hi};
        for (int j = 0; j < 2; j++) {
            if (past[j]) {
                override_like_file(k, doc_value(past[j], v, sizeof(v)), k->oor);
                checked++;
            }
            if (at[j]) {
                override_like_file(k, doc_value(at[j], v, sizeof(v)), NULL);
                checked++;
            }
        }
        char good[128], *save = NULL;
        snprintf(good, sizeof(good), "%s", k->good ? k->good : "");
        for (char *g = strtok_r(good, " ", &save); g; g = strtok_r(NULL, " ", &save)) {
            override_like_file(k, g, NULL);
            checked++;
        }
    }
    assert_true(checked >= 120);
}

/* A site's preset that gives a published count with its arch keeps it
 * while its arch does; a spec that changes the arch (here its KV heads)
 * counts again from the arch; one that gives a count too keeps its own. */
static void presets__count_follows_a_changed_arch(void **state)
{
    (void)state;
    char dir[] = "/tmp/meshplan-spec-XXXXXX", path[256], moe_path[256];
    write_preset(dir, "counted",
                 "params: 1.234e9\narch:\n  layers: 4\n  hidden: 1024\n  heads: 8\n"
                 "  ffn: 4096\n  vocab: 32000\n",
                 path, sizeof(path));
    mesh_spec_dirs_t d = {{dir, NULL, NULL, NULL}};
    static const struct {
        const char *yaml;
        double params; /* 0: the arch's count */
    } cases[] = {
        {"preset: counted\ntrain: {seq_len: 4096}\n", 1.234e9},
        {"preset: counted\narch: {kv_heads: 4}\n", 0},
        {"preset: counted\nparams: 5e9\narch: {kv_heads: 4}\n", 5e9},
        /* a key of arch.moe changes the arch too */
        {"preset: counted-moe\ntrain: {seq_len: 4096}\n", 2.345e9},
        {"preset: counted-moe\narch: {moe: {experts: 16}}\n", 0},
        {"preset: counted-moe\narch: {moe: {top_k: 1}}\n", 0},
    };
    static const char moe[] = "params: 2.345e9\narch:\n  layers: 4\n  hidden: 1024\n  heads: 8\n"
                              "  ffn: 4096\n  vocab: 32000\n  moe: {experts: 8, top_k: 2, ffn: "
                              "1024}\n";
    snprintf(moe_path, sizeof(moe_path), "%s/counted-moe.yaml", dir);
    FILE *f = fopen(moe_path, "w");
    assert_non_null(f);
    fputs(moe, f);
    assert_int_equal(fclose(f), 0);
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        mesh_model_t m;
        mesh_error_t err;
        if (mesh_spec_parse(cases[i].yaml, strlen(cases[i].yaml), "x.yaml", &d, &m, &err) < 0)
            fail_msg("%s", err.msg);
        double want = cases[i].params ? cases[i].params : mesh_model_params_from_arch(&m);
        if (m.params != want || (!cases[i].params && (m.params == 1.234e9 || m.params == 2.345e9)))
            fail_msg("%s: %.6g parameters, want %.6g", cases[i].yaml, m.params, want);
    }
    unlink(moe_path);
    unlink(path);
    rmdir(dir);
}

static void overrides__on_a_preset_and_a_file(void **state)
{
    mesh_model_t m, file, preset = test_preset("llama3-70b");
    mesh_error_t err;
    char d1[17], d2[17];
    /* "what if the sequence were 32K": the preset with one key changed */
    assert_int_equal(load_set("llama3-70b", "train.seq_len=32768", &m, &err), 0);
    file = test_spec("preset: llama3-70b\ntrain: {seq_len: 32768}\n");
    assert_string_equal(mesh_model_digest(&m, d1), mesh_model_digest(&file, d2));
    assert_int_equal(m.seq_len, 32768);
    assert_int_equal(m.layers, 80);
    assert_string_equal(m.name, "llama3-70b");
    assert_true(m.params == preset.params);
    /* an arch override makes the count follow the arch */
    assert_int_equal(load_set("llama3-70b", "arch.layers=40", &m, &err), 0);
    assert_true(m.params == mesh_model_params_from_arch(&m));
    assert_true(m.params < preset.params);
    /* and, with params given too, the count given */
    mesh_spec_dirs_t d = test_dirs();
    const char *both[] = {"arch.layers=40", "params=5e10"};
    assert_int_equal(mesh_spec_load_with("llama3-70b", &d, "--set", both, 2, &m, &err), 0);
    assert_true(m.params == 5e10);
    /* a count a file gives with its arch no longer holds either */
    char given[32], path[32];
    temp_spec("arch: {layers: 2, hidden: 64, heads: 4, vocab: 100}\nparams: 5e9\n", given);
    assert_int_equal(load_set(given, "train.seq_len=64", &m, &err), 0);
    assert_true(m.params == 5e9);
    assert_int_equal(load_set(given, "arch.layers=4", &m, &err), 0);
    assert_true(m.params == mesh_model_params_from_arch(&m));
    /* so does one of kv_heads: 4 -> 2 heads of 64 / 4 = 16 halves the K
     * and V projections, 2 x 64 x 32 fewer weights a layer, 8192 over 2 */
    mesh_model_t same;
    assert_int_equal(load_set(given, "arch.layers=2", &same, &err), 0);
    assert_true(same.params != 5e9);
    assert_int_equal(load_set(given, "arch.kv_heads=2", &m, &err), 0);
    assert_true(m.params == same.params - 8192);
    unlink(given);
    /* over a file's own value; the file's other keys stay */
    temp_spec("preset: llama3-8b\nname: mine\ntrain: {seq_len: 2048, global_batch: 64}\n", path);
    assert_int_equal(load_set(path, "train.seq_len=1024", &m, &err), 0);
    assert_int_equal(m.seq_len, 1024);
    assert_int_equal(m.global_batch, 64);
    assert_string_equal(m.name, "mine");
    /* the override is blamed before the file and the preset */
    assert_int_equal(load_set(path, "train.micro_batch=3", &m, &err), -1);
    assert_string_equal(err.msg, "--set: train.micro_batch: 3 does not divide global_batch 64");
    assert_int_equal(load_set(path, "arch.hidden=4100", &m, &err), -1);
    assert_string_equal(err.msg, "--set: arch.hidden: 4100 is not a multiple of heads 32");
    assert_int_equal(load_set(path, "arch.heads=5", &m, &err), -1);
    assert_string_equal(err.msg, "--set: arch.heads: 5 does not divide hidden 4096");
    unlink(path);
    /* auto over a file's value leaves the choice to the search again */
    temp_spec("preset: llama3-8b\ntrain: {micro_batch: 2, recompute: full}\n", path);
    assert_int_equal(load_set(path, "train.micro_batch=auto", &m, &err), 0);
    assert_int_equal(m.micro_batch, 0);
    assert_int_equal(m.recompute, MESH_RECOMPUTE_FULL);
    assert_int_equal(load_set(path, "train.recompute=auto", &m, &err), 0);
    assert_int_equal(m.recompute, MESH_RECOMPUTE_AUTO);
    assert_int_equal(m.micro_batch, 2);
    unlink(path);
    /* LoRA under Megatron-LM refused whichever key the override gives (the
     * other from the file); any other framework takes it */
    temp_spec("preset: llama3-8b\ntrain: {finetune: lora}\n", path);
    assert_int_equal(load_set(path, "train.framework=megatron", &m, &err), -1);
    assert_non_null(strstr(err.msg, "--set: train.finetune: lora under framework: megatron"));
    assert_int_equal(load_set(path, "train.framework=deepspeed", &m, &err), 0);
    assert_int_equal(m.finetune, MESH_FINETUNE_LORA);
    unlink(path);
    temp_spec("preset: llama3-8b\ntrain: {framework: megatron}\n", path);
    assert_int_equal(load_set(path, "train.finetune=lora", &m, &err), -1);
    assert_non_null(strstr(err.msg, "--set: train.finetune: lora under"));
    assert_int_equal(load_set(path, "train.finetune=full", &m, &err), 0);
    unlink(path);
    /* a recipe goes with the fp8 it came with: an override that trains the
     * preset, or a file, in bf16 drops it; given with bf16 it is refused */
    assert_int_equal(load_set("deepseek-v3", "train.precision=bf16", &m, &err), 0);
    assert_int_equal(m.precision, MESH_PREC_BF16);
    assert_int_equal(m.fp8_recipe, MESH_FP8_DELAYED);
    file = test_spec("preset: deepseek-v3\ntrain: {precision: bf16}\n");
    assert_string_equal(mesh_model_digest(&m, d1), mesh_model_digest(&file, d2));
    temp_spec("params: 1e9\ntrain: {precision: fp8, fp8_recipe: blockwise}\n", path);
    assert_int_equal(load_set(path, "train.precision=bf16", &m, &err), 0);
    assert_int_equal(m.fp8_recipe, MESH_FP8_DELAYED);
    assert_int_equal(load_set(path, "train.precision=fp8", &m, &err), 0);
    assert_int_equal(m.fp8_recipe, MESH_FP8_BLOCKWISE);
    unlink(path);
    temp_spec("params: 1e9\ntrain: {precision: bf16}\n", path);
    assert_int_equal(load_set(path, "train.fp8_recipe=mxfp8", &m, &err), -1);
    assert_non_null(strstr(err.msg, "--set: train.fp8_recipe: only means something with"));
    unlink(path);
    /* no override: mesh_spec_load's model */
    assert_int_equal(mesh_spec_load_with("llama3-70b", &d, NULL, NULL, 0, &m, &err), 0);
    assert_string_equal(mesh_model_digest(&m, d1), mesh_model_digest(&preset, d2));
}

static void overrides__refused_with_the_key(void **state)
{
    static const struct {
        const char *set, *msg;
    } cases[] = {
        {"arch.seq_len=1",
         "--set: unknown key 'seq_len' in arch (allowed: layers, hidden, heads, "
         "kv_heads, head_dim, ffn, vocab, mlp, tied_embeddings, mtp_layers, "
         "rope_theta, rope_scaling, rope_type, yarn_truncate, rotary_percent, qk_norm, "
         "qk_l2_norm, qkv_bias, norm_eps, window, full_attention_every, nope_every, "
         "rotary_interleaved, attention_sinks, activation_clamp, moe, mla); "
         "did "
         "you mean "
         "train.seq_len?"},
        {"seqlen=1", "--set: unknown key 'seqlen' (allowed: name, preset, params, arch, train); "
                     "did you mean train.seq_len?"},
        {"train.seq_lne=1", "--set: unknown key 'seq_lne' in train (allowed: ..."},
        /* the leaf names two keys: the nearer whole name, not the last */
        {"arh.ffn=1", "--set: unknown key 'arh.ffn' (allowed: name, preset, params, arch, train); "
                      "did you mean arch.ffn?"},
        {"colour.seq_len=1", "--set: unknown key 'colour.seq_len' (allowed: name, preset, params, "
                             "arch, train); did you mean train.seq_len?"},
        {"train.colour=blue", "--set: unknown key 'colour' in train (allowed: ..."},
        {"preset=llama3-8b", "--set: preset: an override cannot change the preset (..."},
        {"train.seq_len", "--set: 'train.seq_len' is not KEY=VALUE"},
        {"=4", "--set: '=4' is not KEY=VALUE"},
        {"train.seq_len=", "--set: train.seq_len: empty value"},
        {"train.seq_len=4kb",
         "--set: train.seq_len: '4kb' is not an integer (expected 1..16777216" COUNTS},
        {"train.seq_len=1.2345k",
         "--set: train.seq_len: '1.2345k' is not a whole number (expected an integer in "
         "1..16777216)"},
        {"train.tokens=-1T",
         "--set: train.tokens: -1T is out of range (allowed 1..1000000000000000000)"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        mesh_model_t m;
        mesh_error_t err;
        size_t n = strlen(cases[i].msg);
        int prefix = strcmp(cases[i].msg + n - 3, "...") == 0;
        if (load_set("llama3-8b", cases[i].set, &m, &err) == 0)
            fail_msg("--set %s accepted", cases[i].set);
        if (prefix ? strncmp(err.msg, cases[i].msg, n - 3) : strcmp(err.msg, cases[i].msg))
            fail_msg("--set %s: '%s'\n wanted '%s'", cases[i].set, err.msg, cases[i].msg);
    }
    mesh_model_t m;
    mesh_error_t err;
    mesh_spec_dirs_t d = test_dirs();
    const char *twice[] = {"train.seq_len=1024", "train.seq_len=2048"};
    assert_int_equal(mesh_spec_load_with("llama3-8b", &d, "--set", twice, 2, &m, &err), -1);
    assert_string_equal(err.msg, "--set: train.seq_len: given twice");
    /* the file's unknown keys get the same hint */
    expect_error("params: 1e9\ntrain:\n  seq_lne: 4096\n", "bad.yaml:3",
                 "unknown key 'seq_lne' in train");
    expect_error("params: 1e9\ntrain:\n  seq_lne: 4096\n", "did you mean train.seq_len?", NULL);
    expect_error("params: 1e9\nseq_len: 4096\n", "did you mean train.seq_len?", NULL);
}

/* Every key an override may set, by its dotted name: the table's keys but
 * preset, each accepted. */
/* Counts as people write them, in a file and in --set alike: 32k is
 * 32000 and 32Ki 32768 (meshplan-spec(5)), B a billion. */
static void counts__suffixes_in_files_and_overrides(void **state)
{
    mesh_model_t m;
    mesh_error_t err;
    assert_int_equal(load_set("llama3-8b", "train.seq_len=32k", &m, &err), 0);
    assert_int_equal(m.seq_len, 32000);
    assert_int_equal(load_set("llama3-8b", "train.seq_len=32Ki", &m, &err), 0);
    assert_int_equal(m.seq_len, 32768);
    assert_int_equal(load_set("llama3-8b", "train.tokens=1T", &m, &err), 0);
    assert_true(m.tokens == 1e12);
    assert_int_equal(load_set("llama3-8b", "train.tokens=4.2M", &m, &err), 0);
    assert_true(m.tokens == 4200000);
    assert_int_equal(load_set("llama3-8b", "train.global_batch=2Ki", &m, &err), 0);
    assert_int_equal(m.global_batch, 2048);
    m = doc_accept("params: 8B\ntrain:\n  seq_len: 8Ki\n  steps: 1.5k\n");
    assert_true(m.params == 8e9);
    assert_int_equal(m.seq_len, 8192);
    assert_int_equal(m.steps, 1500);
    doc_refuse("params: 8b\n", 1,
               "params: '8b' is not an integer (expected 1000..10000000000000000" COUNTS, "");
    doc_refuse("params: 1e9\ntrain:\n  seq_len: 1.2345k\n", 3,
               "train.seq_len: '1.2345k' is not a whole number (expected an integer in "
               "1..16777216)",
               "");
}

static void overrides__key_names(void **state)
{
    int n = 0, seq = 0;
    for (const char *k; (k = mesh_spec_key_name(n)); n++) {
        assert_string_not_equal(k, "preset");
        seq += strcmp(k, "train.seq_len") == 0;
    }
    assert_string_equal(mesh_spec_key_name(0), "name");
    assert_string_equal(mesh_spec_key_name(1), "params");
    assert_string_equal(mesh_spec_key_name(2), "arch.layers");
    assert_null(mesh_spec_key_name(-1));
    assert_int_equal(seq, 1);
    /* 3 top-level keys less preset, 25 arch, 15 arch.moe, 6 arch.mla, 19 train */
    assert_int_equal(n, 67);
    /* the key a typo meant: by the dotted name, else by its last part */
    assert_string_equal(mesh_spec_key_closest("train.seqlen"), "train.seq_len");
    assert_string_equal(mesh_spec_key_closest("arch.seq_len"), "train.seq_len");
    assert_string_equal(mesh_spec_key_closest("seq_len"), "train.seq_len");
    assert_string_equal(mesh_spec_key_closest("layres"), "arch.layers");
    assert_string_equal(mesh_spec_key_closest("parms"), "params");
    /* a key in the wrong section is that key, not a near one of this
     * section, and by its whole last part: kv_lora_rank is not
     * q_lora_rank's v_lora_rank */
    assert_string_equal(mesh_spec_key_closest("arch.v_head_dim"), "arch.mla.v_head_dim");
    assert_string_equal(mesh_spec_key_closest("model.kv_lora_rank"), "arch.mla.kv_lora_rank");
    assert_string_equal(mesh_spec_key_closest("train.layers"), "arch.layers");
    /* a typo in a last part two sections share (ffn): by the whole dotted
     * name, the key of its own section (seed 120608's spec.c:236) */
    assert_string_equal(mesh_spec_key_closest("arch.moe.fn"), "arch.moe.ffn");
    assert_string_equal(mesh_spec_key_closest("arch.moe.ffm"), "arch.moe.ffn");
    assert_string_equal(mesh_spec_key_closest("arch.fnn"), "arch.ffn");
    assert_null(mesh_spec_key_closest("reserve"));
    assert_null(mesh_spec_key_closest(NULL));
}

/* A key's choice asked by its dotted name, as the policy's framework= and
 * a pin's moments= ask it: the spec's own table answers, and a key the
 * table does not hold, one without choices, or a word not among its
 * choices is -1. */
static void choices__asked_by_dotted_name(void **state)
{
    assert_int_equal(mesh_spec_choice_of("train.framework", "deepspeed"), MESH_FW_DEEPSPEED);
    assert_int_equal(mesh_spec_choice_of("train.framework", "Megatron"), MESH_FW_MEGATRON);
    assert_int_equal(mesh_spec_choice_of("train.optimizer_dtype", "bf16"), MESH_PREC_BF16);
    assert_int_equal(mesh_spec_choice_of("train.framework", "jax"), -1);
    assert_int_equal(mesh_spec_choice_of("train.nosuch", "megatron"), -1);
    assert_int_equal(mesh_spec_choice_of("train", "megatron"), -1);
    assert_int_equal(mesh_spec_choice_of("train.seq_len", "4096"), -1); /* no choices */
    assert_int_equal(mesh_spec_choice_of("framework", "megatron"), -1);
    assert_int_equal(mesh_spec_choice_of("", ""), -1);
}

/* A recomputed module set's name, and how it is cut: every set whole in
 * 36 bytes; in fewer, the names that fit, each whole (spec.h), never the
 * first letters of the next. */
static void recompute_modules__named_whole_or_left_out(void **state)
{
    (void)state;
    static const char *const names[] = {"core_attn", "layernorm", "mlp", "mla_up_proj"};
    char buf[48], want[48];
    assert_string_equal(mesh_recompute_modules_name(0, buf, sizeof(buf)), "core_attn");
    assert_string_equal(mesh_recompute_modules_name(MESH_RC_ALL, buf, 36),
                        "core_attn+layernorm+mlp+mla_up_proj");
    for (unsigned set = 1; set <= MESH_RC_ALL; set++)
        for (size_t len = 1; len <= 36; len++) {
            /* the names of set in order, each one joined while it fits */
            size_t used = 0;
            want[0] = '\0';
            for (int i = 0; i < 4; i++) {
                size_t n = strlen(names[i]) + (used > 0);
                if ((set & (1u << i)) && used + n < len)
                    used += (size_t)snprintf(want + used, sizeof(want) - used, "%s%s",
                                             used ? "+" : "", names[i]);
            }
            const char *got = mesh_recompute_modules_name(set, buf, len);
            if (strcmp(got, want) != 0)
                fail_msg("set %u in %zu bytes: \"%s\", not \"%s\"", set, len, got, want);
        }
    unsigned parsed;
    assert_int_equal(mesh_recompute_modules_parse("core_attn+mlp", &parsed), 0);
    assert_string_equal(mesh_recompute_modules_name(parsed, buf, sizeof(buf)), "core_attn+mlp");
    assert_int_equal(mesh_recompute_modules_parse("mla_up_proj+mlp", &parsed), 0);
    assert_int_equal(parsed, MESH_RC_MLA_UP_PROJ | MESH_RC_MLP);
    assert_string_equal(mesh_recompute_modules_name(parsed, buf, sizeof(buf)), "mlp+mla_up_proj");
}

/* The preset path every front end uses: the caller's non-empty
 * directories in order, at most three, then the installed presets. */
static void dirs__callers_first_then_installed(void **state)
{
    mesh_spec_dirs_t d;
    const char *first[] = {"/a", "", NULL, "/b", "/c", "/d"};
    mesh_spec_dirs_make(&d, first, 6);
    assert_string_equal(d.dirs[0], "/a");
    assert_string_equal(d.dirs[1], "/b");
    assert_string_equal(d.dirs[2], "/c");
    assert_string_equal(d.dirs[3], mesh_default_models_dir());
    mesh_spec_dirs_make(&d, NULL, 0);
    assert_string_equal(d.dirs[0], mesh_default_models_dir());
    assert_null(d.dirs[1]);
}

/* An unknown preset's error lists the directories looked in, cut to a
 * message's length however long they are (three of 300 characters). */
static void dirs__long_ones_listed_within_the_message(void **state)
{
    (void)state;
    char dir[3][301];
    for (int i = 0; i < 3; i++) {
        memset(dir[i], 'a' + i, 300);
        dir[i][0] = '/';
        dir[i][300] = '\0';
    }
    mesh_spec_dirs_t d = {{dir[0], dir[1], dir[2], NULL}};
    mesh_model_t m;
    mesh_error_t err;
    assert_int_equal(mesh_spec_load("no-such-model", &d, &m, &err), -1);
    assert_true(strlen(err.msg) < MESH_ERROR_MAX);
    const char *at = strstr(err.msg, "(looked in: /");
    assert_non_null(at);
    assert_true(strncmp(at + strlen("(looked in: "), dir[0], 100) == 0);
    /* a directory of one character is one looked in all the same */
    mesh_spec_dirs_t here = {{"/", NULL}};
    assert_int_equal(mesh_spec_load("no-such-model", &here, &m, &err), -1);
    assert_non_null(strstr(err.msg, "(looked in: /;"));
}

/* ---- mixture of experts, MLA and MTP ---- */

#define MOE_ARCH "arch:\n  layers: 4\n  hidden: 64\n  heads: 4\n  vocab: 100\n"

static void moe_error(const char *yaml, const char *n1, const char *n2)
{
    mesh_spec_dirs_t d = test_dirs();
    mesh_model_t m;
    mesh_error_t err;
    if (mesh_spec_parse(yaml, strlen(yaml), "moe.yaml", &d, &m, &err) == 0)
        fail_msg("accepted:\n%s", yaml);
    if (!strstr(err.msg, n1) || (n2 && !strstr(err.msg, n2)))
        fail_msg("error '%s' lacks '%s'/'%s'", err.msg, n1, n2 ? n2 : "");
    if (strchr(err.msg, '\n'))
        fail_msg("error '%s' is more than one line", err.msg);
}

/* The defaults: top_k Megatron-LM's 2, moe.ffn the dense one, shared_ffn
 * moe.ffn, MLA's head widths DeepSeek's (Megatron-LM's MLATransformerConfig). */
static void spec__moe_mla_defaults(void **state)
{
    mesh_model_t m = test_spec("arch: {layers: 4, hidden: 64, heads: 4, ffn: 96, vocab: 100, "
                               "moe: {experts: 4, shared_experts: 2}, mla: {kv_lora_rank: 32}}\n");
    assert_int_equal(m.moe.top_k, 2);
    assert_int_equal(m.moe.ffn, 96);
    assert_int_equal(m.moe.shared_ffn, 96);
    assert_int_equal(m.moe.dense_layers, 0);
    assert_true(m.moe.capacity_factor == 0);
    assert_int_equal(m.mla.q_lora_rank, 0);
    assert_int_equal(m.mla.qk_head_dim, 128);
    assert_int_equal(m.mla.qk_rope_head_dim, 64);
    assert_int_equal(m.mla.v_head_dim, 128);
    assert_true(m.moe_imbalance == 0);
    /* "none" is the default capacity; a number drops tokens beyond it */
    mesh_model_t none = test_spec("arch: {layers: 2, hidden: 64, heads: 4, vocab: 100, "
                                  "moe: {experts: 4, capacity_factor: none}}\n");
    assert_true(none.moe.capacity_factor == 0);
    mesh_model_t cf = test_spec("arch: {layers: 2, hidden: 64, heads: 4, vocab: 100, "
                                "moe: {experts: 4, capacity_factor: 1.25}}\ntrain:\n"
                                "  moe_imbalance: 1.5\n");
    assert_true(cf.moe.capacity_factor == 1.25);
    assert_true(cf.moe_imbalance == 1.5);
    char d1[17], d2[17], d3[17];
    mesh_model_t plain = test_spec("arch: {layers: 2, hidden: 64, heads: 4, vocab: 100, "
                                   "moe: {experts: 4}}\n");
    assert_string_equal(mesh_model_digest(&none, d1), mesh_model_digest(&plain, d2));
    assert_string_not_equal(d1, mesh_model_digest(&cf, d3));
    /* a preset's experts, overridden key by key */
    mesh_model_t o = test_spec("preset: mixtral-8x7b\narch:\n  moe:\n    top_k: 1\n");
    assert_int_equal(o.moe.experts, 8);
    assert_int_equal(o.moe.top_k, 1);
    assert_true(o.params == test_preset("mixtral-8x7b").params);
    assert_true(mesh_model_active_params(&o) < 12e9);
}

/* A window, sinks and YaRN's rounding are standard attention's: refused
 * under MLA, whose rotary scaling is YaRN (and accepted so); YaRN in
 * standard attention has no MTP in Megatron-LM; a SwiGLU's clamp is its
 * experts'. */
static void spec__window_sinks_yarn_rules(void **state)
{
    (void)state;
#define MLA_ARCH MOE_ARCH "  mla:\n    kv_lora_rank: 8\n"
    moe_error(MLA_ARCH "  window: 64\n", "moe.yaml:8: arch.window", "standard attention only");
    moe_error(MLA_ARCH "  attention_sinks: true\n", "moe.yaml:8: arch.attention_sinks",
              "standard attention only");
    moe_error(MLA_ARCH "  rope_scaling: 40\n  rope_type: llama3\n", "moe.yaml:9: arch.rope_type",
              "MLA's rotary scaling is YaRN: give yarn");
    moe_error(MLA_ARCH "  rope_scaling: 40\n  rope_type: yarn\n  yarn_truncate: false\n",
              "moe.yaml:10: arch.yarn_truncate", "only means something with YaRN in standard");
    moe_error(MOE_ARCH "  rope_scaling: none\n  rope_type: yarn\n", "moe.yaml:7: arch.rope_type",
              "give rope_scaling, or leave it out");
    moe_error(MOE_ARCH "  rope_scaling: 32\n  rope_type: yarn\n  mtp_layers: 1\n",
              "moe.yaml:8: arch.mtp_layers", "no MTP layers with YaRN in standard attention");
    mesh_model_t m = test_spec(MLA_ARCH "  rope_scaling: 40\n  rope_type: yarn\n  mtp_layers: 1\n");
    assert_int_equal(m.rope_type, MESH_ROPE_YARN);
    /* a preset's YaRN keys go with a later override that leaves them
     * meaning nothing, rather than blame the preset's lines */
    mesh_error_t err;
    assert_int_equal(load_set("gpt-oss-120b", "arch.rope_scaling=none", &m, &err), 0);
    assert_true(m.rope_scaling == 0 && m.rope_type == MESH_ROPE_LLAMA3);
    assert_int_equal(m.yarn_truncate, MESH_YARN_TRUNCATE);
    assert_int_equal(load_set("gpt-oss-120b", "arch.rope_type=llama3", &m, &err), 0);
    assert_true(m.rope_scaling == 32 && m.rope_type == MESH_ROPE_LLAMA3);
    assert_int_equal(m.yarn_truncate, MESH_YARN_TRUNCATE);
    assert_int_equal(load_set("gpt-oss-120b", "arch.yarn_truncate=true", &m, &err), 0);
    assert_true(m.rope_type == MESH_ROPE_YARN && m.yarn_truncate == MESH_YARN_TRUNCATE);
    /* and so do its clamp after a later mlp that is not gated, its
     * full_attention_every after fewer layers, its clamp by none */
    assert_int_equal(load_set("gpt-oss-120b", "arch.mlp=gelu", &m, &err), 0);
    assert_true(m.activation_clamp == 0 && m.mlp == MESH_MLP_GELU);
    assert_int_equal(load_set("gpt-oss-20b", "arch.layers=1", &m, &err), 0);
    assert_true(m.full_attention_every == 0 && m.window == 128);
    assert_int_equal(load_set("gpt-oss-20b", "arch.activation_clamp=none", &m, &err), 0);
    assert_true(m.activation_clamp == 0);
    /* Llama 4 Scout's unrotated layers after layers they do not divide,
     * its score on the input after a top_k above 1 */
    assert_int_equal(load_set("llama4-scout", "arch.layers=50", &m, &err), 0);
    assert_true(m.nope_every == 0 && m.rotary_interleaved && m.qk_l2_norm);
    assert_int_equal(load_set("llama4-scout", "arch.layers=24", &m, &err), 0);
    assert_true(m.nope_every == 4);
    assert_int_equal(load_set("llama4-scout", "arch.moe.top_k=2", &m, &err), 0);
    assert_true(m.router.probs_on_input == 0 && m.moe.top_k == 2);
    assert_int_equal(load_set("llama4-scout", "arch.qk_norm=true", &m, &err), -1);
    assert_non_null(strstr(err.msg, "--set: arch.qk_norm: qk_norm and qk_l2_norm"));
    /* given in the same file, they are refused naming them */
    moe_error(MOE_ARCH "  mlp: gelu\n  activation_clamp: 7\n", "moe.yaml:7: arch.activation_clamp",
              "mlp: gelu is not gated");
    moe_error(MOE_ARCH "  window: 8\n  full_attention_every: 5\n",
              "moe.yaml:7: arch.full_attention_every", "more than the 4 layers");
    /* MTP only with rotary positions (rope or none: arguments.py L883) */
    moe_error(MOE_ARCH "  mlp: gelu\n  mtp_layers: 1\n", "moe.yaml:7: arch.mtp_layers",
              "only with rotary positions, and mlp: gelu learns its positions");
    /* yarn_truncate: true (the default) says nothing without YaRN, and is
     * refused so */
    moe_error(MOE_ARCH "  rope_scaling: 8\n  yarn_truncate: true\n",
              "moe.yaml:7: arch.yarn_truncate", "only means something with YaRN");
    m = test_spec(MOE_ARCH "  activation_clamp: 7\n  moe:\n    experts: 4\n");
    assert_true(m.activation_clamp == 7);
    m = test_spec(MOE_ARCH "  window: 64\n  full_attention_every: 4\n  attention_sinks: true\n");
    assert_true(m.window == 64 && m.full_attention_every == 4 && m.attention_sinks);
#undef MLA_ARCH
}

/* Every rule names its key, the line, and the fix, in one line. */
static void spec__moe_mla_errors(void **state)
{
    moe_error(MOE_ARCH "  moe:\n    top_k: 2\n", "arch.moe.experts is missing", NULL);
    moe_error(MOE_ARCH "  moe:\n    experts: 4\n    top_k: 5\n", "moe.yaml:8: arch.moe.top_k",
              "more than the 4 experts");
    moe_error(MOE_ARCH "  moe:\n    experts: 4\n    dense_layers: 4\n",
              "moe.yaml:8: arch.moe.dense_layers", "at most 3");
    moe_error(MOE_ARCH "  moe:\n    experts: 4\n    every: 5\n", "moe.yaml:8: arch.moe.every",
              "5 leaves no MoE layer of the 4 layers (at most 4)");
    moe_error(MOE_ARCH "  moe:\n    experts: 4\n    every: 65\n", "moe.yaml:8: arch.moe.every",
              "out of range (allowed 1..64)");
    moe_error(MOE_ARCH "  moe:\n    experts: 4\n    every: 2\n    dense_layers: 1\n",
              "moe.yaml:8: arch.moe.every", "2 and dense_layers 1 together are not described");
    moe_error(MOE_ARCH "  moe:\n    experts: 4\n    shared_ffn: 64\n", "arch.moe.shared_ffn",
              "shared_experts");
    moe_error(MOE_ARCH "  moe:\n    experts: 0\n", "arch.moe.experts", "out of range");
    moe_error(MOE_ARCH "  moe:\n    experts: 4\n    capacity_factor: lots\n",
              "arch.moe.capacity_factor", "or none");
    moe_error(MOE_ARCH "  moe:\n    experts: 4\n    capacity_factor: 0\n",
              "arch.moe.capacity_factor", "out of range");
    moe_error(MOE_ARCH "  moe:\n    experts: 4\n    expert: 2\n",
              "unknown key 'expert' in arch.moe",
              "(allowed: experts, top_k, ffn, shared_experts, shared_ffn, dense_layers, every, "
              "capacity_factor, score, expert_bias, groups, group_top_k, routed_scaling, "
              "aux_loss, probs_on_input)");
    /* the router as Megatron-LM's TransformerConfig checks it
     * (transformer_config.py L2617-2625, L2671-2690 at d98e8a6) */
    moe_error(MOE_ARCH "  moe:\n    experts: 8\n    expert_bias: true\n", "arch.moe.expert_bias",
              "score: sigmoid");
    moe_error(MOE_ARCH "  moe:\n    experts: 8\n    groups: 4\n", "arch.moe.groups",
              "both groups and group_top_k");
    moe_error(MOE_ARCH "  moe:\n    experts: 8\n    group_top_k: 2\n", "arch.moe.group_top_k",
              "both groups and group_top_k");
    moe_error(MOE_ARCH "  moe:\n    experts: 8\n    groups: 3\n    group_top_k: 1\n",
              "arch.moe.groups", "does not divide the 8 experts");
    moe_error(MOE_ARCH "  moe:\n    experts: 8\n    groups: 4\n    group_top_k: 5\n",
              "arch.moe.group_top_k", "more than the 4 groups");
    moe_error(MOE_ARCH "  moe:\n    experts: 8\n    top_k: 4\n    groups: 4\n    group_top_k: 1\n",
              "arch.moe.group_top_k", "fewer than top_k 4");
    moe_error(MOE_ARCH "  moe:\n    experts: 8\n    score: cosine\n", "arch.moe.score", "sigmoid");
    /* the score on the expert's input: top_k 1 only (experts.py L918-921) */
    moe_error(MOE_ARCH "  moe:\n    experts: 8\n    probs_on_input: true\n",
              "moe.yaml:8: arch.moe.probs_on_input",
              "only with top_k: 1 (experts.py L918-921), "
              "and top_k is 2: give top_k: 1, or leave it out");
    moe_error(MOE_ARCH "  moe:\n    experts: 8\n    top_k: 1\n    probs_on_input: maybe\n",
              "arch.moe.probs_on_input", "not a boolean");
    /* Llama 4's attention keys in standard attention only */
    moe_error(MOE_ARCH "  qk_l2_norm: true\n  mla:\n    kv_lora_rank: 8\n",
              "moe.yaml:6: arch.qk_l2_norm", "no L2 QK norm with arch.mla: leave it out");
    moe_error(MOE_ARCH "  nope_every: 2\n  mla:\n    kv_lora_rank: 8\n",
              "moe.yaml:6: arch.nope_every", "standard attention only, not for arch.mla");
    moe_error(MOE_ARCH "  rotary_interleaved: true\n  mla:\n    kv_lora_rank: 8\n",
              "moe.yaml:6: arch.rotary_interleaved", "refuses it with arch.mla");
    moe_error(MOE_ARCH "  mlp: gelu\n  rope_theta: 10000\n", "arch.rope_theta", "mlp: swiglu");
    moe_error(MOE_ARCH "  mlp: gelu\n  qk_norm: true\n", "arch.qk_norm", "mlp: swiglu only");
    /* a share of each head rotated: only where positions are rotary, and
     * not under MLA, which rotates qk_rope_head_dim */
    moe_error(MOE_ARCH "  mlp: gelu\n  rotary_percent: 0.5\n", "arch.rotary_percent",
              "swiglu's, relu2's and quick_geglu's");
    moe_error(MOE_ARCH "  rotary_percent: 0.5\n  mla:\n    kv_lora_rank: 8\n",
              "arch.rotary_percent", "qk_rope_head_dim");
    moe_error(MOE_ARCH "  mlp: relu2\n  qk_norm: true\n", "arch.qk_norm", "mlp: swiglu only");
    moe_error(MOE_ARCH "  mlp: relu2\n  mla:\n    kv_lora_rank: 8\n", "arch.mlp", "swiglu");
    moe_error(MOE_ARCH "  qk_norm: true\n  mla:\n    kv_lora_rank: 8\n", "arch.qk_norm",
              "latent norms");
    moe_error(MOE_ARCH "  moe: 4\n", "arch.moe", "expected a mapping");
    moe_error(MOE_ARCH "  moe:\n    experts: 4\n  moe:\n    experts: 8\n", "arch.moe",
              "given twice");
    moe_error(MOE_ARCH "  moe:\n    experts: 4\n    mla:\n      kv_lora_rank: 8\n",
              "unknown key 'mla' in arch.moe", NULL);
    moe_error("moe:\n  experts: 4\nparams: 1e9\n", "unknown key 'moe'", "arch, train");
    moe_error("params: 1e9\narch:\n  moe:\n    experts: 4\n", "arch.layers is missing", NULL);
    /* Llama 4's keys alone are an arch that forgot the rest */
    moe_error("params: 1e9\narch:\n  qk_l2_norm: true\n", "arch.layers is missing", NULL);
    moe_error("params: 1e9\narch:\n  nope_every: 4\n", "arch.layers is missing", NULL);
    moe_error("params: 1e9\narch:\n  rotary_interleaved: true\n", "arch.layers is missing", NULL);
    moe_error("params: 1e9\ntrain:\n  moe_imbalance: 1.2\n", "train.moe_imbalance", "MoE model");
    moe_error(MOE_ARCH "  moe:\n    experts: 4\ntrain:\n  moe_imbalance: 0.9\n",
              "train.moe_imbalance", "out of range");
    moe_error(MOE_ARCH "  colour: 4\n", "unknown key 'colour' in arch",
              "rope_theta, rope_scaling, rope_type, yarn_truncate, rotary_percent, qk_norm, "
              "qk_l2_norm, qkv_bias, norm_eps, window, full_attention_every, nope_every, "
              "rotary_interleaved, attention_sinks, activation_clamp, moe, mla)");
    moe_error(MOE_ARCH "  mla:\n    q_lora_rank: 8\n", "arch.mla.kv_lora_rank is missing", NULL);
    moe_error(MOE_ARCH "  mlp: gelu\n  mla:\n    kv_lora_rank: 8\n", "moe.yaml:6: arch.mlp",
              "swiglu");
    moe_error(MOE_ARCH "  head_dim: 32\n  mla:\n    kv_lora_rank: 8\n", "arch.head_dim",
              "leave head_dim out");
    moe_error(MOE_ARCH "  kv_heads: 2\n  mla:\n    kv_lora_rank: 8\n", "arch.kv_heads",
              "no grouped");
    moe_error(MOE_ARCH "  mtp_layers: 65\n", "arch.mtp_layers", "out of range");
    moe_error(MOE_ARCH "  mtp_layers: -1\n", "arch.mtp_layers", "out of range");
    /* MLA sizes its own heads: heads need not divide hidden */
    mesh_model_t m = test_spec("arch: {layers: 2, hidden: 96, heads: 64, vocab: 100, mla: "
                               "{kv_lora_rank: 8}}\n");
    assert_int_equal(m.heads, 64);
}

/* Loading specs, presets and YAML, and refusing a bad one, gives back
 * every byte it takes (libyaml's parser with it). */
static void spec_work(void)
{
    test_preset("deepseek-v3");
    test_spec("preset: llama3-70b\ntrain: {global_batch: 768, seq_len: 8192}\n");
    static const char bad[] = "arch:\n  layers: 2\n  hidden: [64\n";
    mesh_model_t m;
    mesh_error_t err;
    assert_int_equal(mesh_spec_parse(bad, sizeof(bad) - 1, "bad.yaml", NULL, &m, &err), -1);
}

static void spec__returns_all_its_memory(void **state)
{
    (void)state;
    test_gives_back(spec_work, "reading a spec");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(spec__moe_mla_defaults),
        cmocka_unit_test(spec__returns_all_its_memory),
        cmocka_unit_test(spec__moe_mla_errors),
        cmocka_unit_test(spec__window_sinks_yarn_rules),
        cmocka_unit_test(keys__table_in_the_manual),
        cmocka_unit_test(dirs__callers_first_then_installed),
        cmocka_unit_test(dirs__long_ones_listed_within_the_message),
        cmocka_unit_test(preset__every_kind_overridden),
        cmocka_unit_test(names__mlp_as_the_spec_spells_it),
        cmocka_unit_test(arch__one_key_alone_refused),
        cmocka_unit_test(arch__any_key_alone_needs_the_four),
        cmocka_unit_test(params__llama_presets__published_counts),
        cmocka_unit_test(params__llama_layer__published),
        cmocka_unit_test(params__gpt_formula__narayanan),
        cmocka_unit_test(params__head_dim__by_hand_and_qwen3),
        cmocka_unit_test(defaults__filled),
        cmocka_unit_test(preset__override__keeps_rest),
        cmocka_unit_test(params_only__no_arch),
        cmocka_unit_test(errors__name_key_and_line),
        cmocka_unit_test(errors__hostile_yaml_refused),
        cmocka_unit_test(errors__one_printable_line),
        cmocka_unit_test(errors__blame_what_the_user_wrote),
        cmocka_unit_test(presets__bad_names_and_nesting),
        cmocka_unit_test(presets__a_file_by_its_name),
        cmocka_unit_test(presets__nameless_named_after_the_preset),
        cmocka_unit_test(presets__count_follows_a_changed_arch),
        cmocka_unit_test(presets__more_than_the_suggestion_reads),
        cmocka_unit_test(presets__all_four_directories),
        cmocka_unit_test(digest__same_model_same_digest),
        cmocka_unit_test(files__only_regular_and_small),
        cmocka_unit_test(keys__documented_defaults),
        cmocka_unit_test(keys__bounds_accepted_one_past_refused),
        cmocka_unit_test(keys__values_accepted_and_refused),
        cmocka_unit_test(keys__only_in_their_section),
        cmocka_unit_test(keys__unknown_refused_with_allowed_list),
        cmocka_unit_test(overrides__every_key_checked_as_in_a_file),
        cmocka_unit_test(overrides__on_a_preset_and_a_file),
        cmocka_unit_test(overrides__refused_with_the_key),
        cmocka_unit_test(overrides__key_names),
        cmocka_unit_test(choices__asked_by_dotted_name),
        cmocka_unit_test(recompute_modules__named_whole_or_left_out),
        cmocka_unit_test(counts__suffixes_in_files_and_overrides),
    };
    return cmocka_run_group_tests_name("spec", tests, NULL, NULL);
}
