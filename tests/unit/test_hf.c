/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A Hugging Face config.json as a model spec (lib/hfconfig.c): each
 * architecture's published config.json, written here field for field from
 * the model's repository, gives the parameters and the plan its preset
 * gives (with the preset's training keys set), or the published parameter
 * count where meshplan has no preset; what the spec cannot say is refused
 * naming the field; hostile JSON is refused, never read as something else.
 */
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

static char dir[] = "/tmp/meshplan-hf-XXXXXX";

/* config.json of model `name`, holding `json`, in a folder of that name. */
static const char *write_config(const char *name, const char *json)
{
    static char path[512];
    char folder[400];
    snprintf(folder, sizeof(folder), "%s/%s", dir, name);
    mkdir(folder, 0700);
    snprintf(path, sizeof(path), "%s/config.json", folder);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(json, f);
    fclose(f);
    return path;
}

static int load(const char *path, const char *const *sets, int n, mesh_model_t *m,
                mesh_error_t *err)
{
    mesh_spec_dirs_t d = test_dirs();
    return mesh_spec_load_with(path, &d, "--set", sets, n, m, err);
}

/* The published configs, as their repositories hold them. */
static const char llama2_7b[] =
    "{\"architectures\": [\"LlamaForCausalLM\"], \"bos_token_id\": 1, \"eos_token_id\": 2,"
    " \"hidden_act\": \"silu\", \"hidden_size\": 4096, \"initializer_range\": 0.02,"
    " \"intermediate_size\": 11008, \"max_position_embeddings\": 4096, \"model_type\": \"llama\","
    " \"num_attention_heads\": 32, \"num_hidden_layers\": 32, \"num_key_value_heads\": 32,"
    " \"pretraining_tp\": 1, \"rms_norm_eps\": 1e-05, \"rope_scaling\": null,"
    " \"tie_word_embeddings\": false, \"torch_dtype\": \"float16\","
    " \"transformers_version\": \"4.31.0.dev0\", \"use_cache\": true, \"vocab_size\": 32000}";
static const char llama3_8b[] =
    "{\"architectures\": [\"LlamaForCausalLM\"], \"attention_bias\": false,"
    " \"attention_dropout\": 0.0, \"bos_token_id\": 128000, \"eos_token_id\": 128001,"
    " \"hidden_act\": \"silu\", \"hidden_size\": 4096, \"initializer_range\": 0.02,"
    " \"intermediate_size\": 14336, \"max_position_embeddings\": 8192, \"model_type\": \"llama\","
    " \"num_attention_heads\": 32, \"num_hidden_layers\": 32, \"num_key_value_heads\": 8,"
    " \"pretraining_tp\": 1, \"rms_norm_eps\": 1e-05, \"rope_scaling\": null,"
    " \"rope_theta\": 500000.0, \"tie_word_embeddings\": false, \"torch_dtype\": \"bfloat16\","
    " \"transformers_version\": \"4.40.0.dev0\", \"use_cache\": true, \"vocab_size\": 128256}";
static const char llama31_405b[] =
    "{\"architectures\": [\"LlamaForCausalLM\"], \"attention_bias\": false,"
    " \"attention_dropout\": 0.0, \"bos_token_id\": 128000, \"eos_token_id\": 128001,"
    " \"hidden_act\": \"silu\", \"hidden_size\": 16384, \"initializer_range\": 0.02,"
    " \"intermediate_size\": 53248, \"max_position_embeddings\": 131072, \"mlp_bias\": false,"
    " \"model_type\": \"llama\", \"num_attention_heads\": 128, \"num_hidden_layers\": 126,"
    " \"num_key_value_heads\": 8, \"pretraining_tp\": 1, \"rms_norm_eps\": 1e-05,"
    " \"rope_scaling\": {\"factor\": 8.0, \"low_freq_factor\": 1.0, \"high_freq_factor\": 4.0,"
    " \"original_max_position_embeddings\": 8192, \"rope_type\": \"llama3\"},"
    " \"rope_theta\": 500000.0, \"tie_word_embeddings\": false, \"torch_dtype\": \"bfloat16\","
    " \"transformers_version\": \"4.42.3\", \"use_cache\": true, \"vocab_size\": 128256}";
static const char mixtral_8x7b[] =
    "{\"architectures\": [\"MixtralForCausalLM\"], \"attention_dropout\": 0.0,"
    " \"bos_token_id\": 1, \"eos_token_id\": 2, \"hidden_act\": \"silu\", \"hidden_size\": 4096,"
    " \"initializer_range\": 0.02, \"intermediate_size\": 14336,"
    " \"max_position_embeddings\": 32768, \"model_type\": \"mixtral\","
    " \"num_attention_heads\": 32, \"num_experts_per_tok\": 2, \"num_hidden_layers\": 32,"
    " \"num_key_value_heads\": 8, \"num_local_experts\": 8, \"output_router_logits\": false,"
    " \"rms_norm_eps\": 1e-05, \"rope_theta\": 1000000.0, \"router_aux_loss_coef\": 0.02,"
    " \"sliding_window\": null, \"tie_word_embeddings\": false, \"torch_dtype\": \"bfloat16\","
    " \"transformers_version\": \"4.36.0.dev0\", \"use_cache\": true, \"vocab_size\": 32000}";
#define QWEN3_MOE(layers, hidden, heads, ffn, moe_ffn)                                             \
    "{\"architectures\": [\"Qwen3MoeForCausalLM\"], \"attention_bias\": false,"                    \
    " \"attention_dropout\": 0.0, \"bos_token_id\": 151643, \"decoder_sparse_step\": 1,"           \
    " \"eos_token_id\": 151645, \"head_dim\": 128, \"hidden_act\": \"silu\", "                     \
    "\"hidden_size\": " #hidden ", \"initializer_range\": 0.02, \"intermediate_size\": " #ffn      \
    ", \"max_position_embeddings\": 40960, \"max_window_layers\": " #layers                        \
    ", \"mlp_only_layers\": [], \"model_type\": \"qwen3_moe\", "                                   \
    "\"moe_intermediate_size\": " #moe_ffn                                                         \
    ", \"norm_topk_prob\": true, \"num_attention_heads\": " #heads                                 \
    ", \"num_experts\": 128, \"num_experts_per_tok\": 8, \"num_hidden_layers\": " #layers          \
    ", \"num_key_value_heads\": 4, \"output_router_logits\": false, \"rms_norm_eps\": 1e-06,"      \
    " \"rope_scaling\": null, \"rope_theta\": 1000000.0, \"router_aux_loss_coef\": 0.001,"         \
    " \"sliding_window\": null, \"tie_word_embeddings\": false, \"torch_dtype\": \"bfloat16\","    \
    " \"transformers_version\": \"4.51.0\", \"use_cache\": true, \"use_sliding_window\": false,"   \
    " \"vocab_size\": 151936}"
static const char deepseek_v3[] =
    "{\"architectures\": [\"DeepseekV3ForCausalLM\"], \"attention_bias\": false,"
    " \"attention_dropout\": 0.0, \"aux_loss_alpha\": 0.001, \"bos_token_id\": 0,"
    " \"eos_token_id\": 1, \"ep_size\": 1, \"first_k_dense_replace\": 3, \"hidden_act\": \"silu\","
    " \"hidden_size\": 7168, \"initializer_range\": 0.02, \"intermediate_size\": 18432,"
    " \"kv_lora_rank\": 512, \"max_position_embeddings\": 163840, \"model_type\": \"deepseek_v3\","
    " \"moe_intermediate_size\": 2048, \"moe_layer_freq\": 1, \"n_group\": 8,"
    " \"n_routed_experts\": 256, \"n_shared_experts\": 1, \"norm_topk_prob\": true,"
    " \"num_attention_heads\": 128, \"num_experts_per_tok\": 8, \"num_hidden_layers\": 61,"
    " \"num_key_value_heads\": 128, \"num_nextn_predict_layers\": 1, \"q_lora_rank\": 1536,"
    " \"qk_nope_head_dim\": 128, \"qk_rope_head_dim\": 64, \"quantization_config\":"
    " {\"activation_scheme\": \"dynamic\", \"fmt\": \"e4m3\", \"quant_method\": \"fp8\","
    " \"weight_block_size\": [128, 128]}, \"rms_norm_eps\": 1e-06, \"rope_scaling\":"
    " {\"beta_fast\": 32, \"beta_slow\": 1, \"factor\": 40, \"mscale\": 1.0,"
    " \"mscale_all_dim\": 1.0, \"original_max_position_embeddings\": 4096, \"type\": \"yarn\"},"
    " \"rope_theta\": 10000, \"routed_scaling_factor\": 2.5, \"scoring_func\": \"sigmoid\","
    " \"seq_aux\": true, \"tie_word_embeddings\": false, \"topk_group\": 4,"
    " \"topk_method\": \"noaux_tc\", \"torch_dtype\": \"bfloat16\","
    " \"transformers_version\": \"4.33.1\", \"use_cache\": true, \"v_head_dim\": 128,"
    " \"vocab_size\": 129280}";

/* Kimi K2 (moonshotai/Kimi-K2-Base): DeepSeek-V3's class under its own
 * model_type, ROPE its rope_scaling (the published file's YaRN, or none, as
 * it was pretrained). */
#define KIMI_K2(ROPE)                                                                              \
    "{\"architectures\": [\"DeepseekV3ForCausalLM\"], \"attention_bias\": false,"                  \
    " \"attention_dropout\": 0.0, \"auto_map\": {\"AutoConfig\":"                                  \
    " \"configuration_deepseek.DeepseekV3Config\"}, \"aux_loss_alpha\": 0.001,"                    \
    " \"bos_token_id\": 163584, \"eos_token_id\": 163585, \"ep_size\": 1,"                         \
    " \"first_k_dense_replace\": 1, \"hidden_act\": \"silu\", \"hidden_size\": 7168,"              \
    " \"initializer_range\": 0.02, \"intermediate_size\": 18432, \"kv_lora_rank\": 512,"           \
    " \"max_position_embeddings\": 131072, \"model_type\": \"kimi_k2\","                           \
    " \"moe_intermediate_size\": 2048, \"moe_layer_freq\": 1, \"n_group\": 1,"                     \
    " \"n_routed_experts\": 384, \"n_shared_experts\": 1, \"norm_topk_prob\": true,"               \
    " \"num_attention_heads\": 64, \"num_experts_per_tok\": 8, \"num_hidden_layers\": 61,"         \
    " \"num_key_value_heads\": 64, \"num_nextn_predict_layers\": 0, \"pretraining_tp\": 1,"        \
    " \"q_lora_rank\": 1536, \"qk_nope_head_dim\": 128, \"qk_rope_head_dim\": 64,"                 \
    " \"rms_norm_eps\": 1e-06, " ROPE " \"rope_theta\": 50000.0,"                                  \
    " \"routed_scaling_factor\": 2.827, \"scoring_func\": \"sigmoid\", \"seq_aux\": true,"         \
    " \"tie_word_embeddings\": false, \"topk_group\": 1, \"topk_method\": \"noaux_tc\","           \
    " \"torch_dtype\": \"bfloat16\", \"transformers_version\": \"4.48.3\", \"use_cache\": true,"   \
    " \"v_head_dim\": 128, \"vocab_size\": 163840}"
#define KIMI_K2_YARN                                                                               \
    "\"rope_scaling\": {\"beta_fast\": 1.0, \"beta_slow\": 1.0, \"factor\": 32.0,"                 \
    " \"mscale\": 1.0, \"mscale_all_dim\": 1.0, \"original_max_position_embeddings\": 4096,"       \
    " \"type\": \"yarn\"},"

/* Nemotron-4 15B in Hugging Face's terms (NemotronConfig, as the
 * family's config.json files write it: nvidia/Minitron-8B-Base's fields). */
static const char nemotron4_15b[] =
    "{\"architectures\": [\"NemotronForCausalLM\"], \"attention_bias\": false,"
    " \"attention_dropout\": 0.0, \"bos_token_id\": 2, \"eos_token_id\": 3, \"head_dim\": 128,"
    " \"hidden_act\": \"relu2\", \"hidden_size\": 6144, \"initializer_range\": 0.0134,"
    " \"intermediate_size\": 24576, \"max_position_embeddings\": 4096, \"mlp_bias\": false,"
    " \"model_type\": \"nemotron\", \"norm_eps\": 1e-05, \"num_attention_heads\": 48,"
    " \"num_hidden_layers\": 32, \"num_key_value_heads\": 8, \"partial_rotary_factor\": 0.5,"
    " \"rope_scaling\": null, \"rope_theta\": 10000, \"tie_word_embeddings\": false,"
    " \"torch_dtype\": \"bfloat16\", \"transformers_version\": \"4.44.0\", \"use_cache\": true,"
    " \"vocab_size\": 256000}";

/* openai/gpt-oss-120b and -20b: the layer kinds alternate, sliding first */
#define OSS_PAIR   "\"sliding_attention\", \"full_attention\""
#define OSS_PAIRS3 OSS_PAIR ", " OSS_PAIR ", " OSS_PAIR
#define OSS_PAIRS9 OSS_PAIRS3 ", " OSS_PAIRS3 ", " OSS_PAIRS3
#define GPT_OSS(layers, experts, types)                                                            \
    "{\"architectures\": [\"GptOssForCausalLM\"], \"attention_bias\": true,"                       \
    " \"attention_dropout\": 0.0, \"eos_token_id\": 200002, \"experts_per_token\": 4,"             \
    " \"head_dim\": 64, \"hidden_act\": \"silu\", \"hidden_size\": 2880,"                          \
    " \"initial_context_length\": 4096, \"initializer_range\": 0.02, \"intermediate_size\": 2880," \
    " \"layer_types\": [" types "], \"max_position_embeddings\": 131072,"                          \
    " \"model_type\": \"gpt_oss\", \"num_attention_heads\": 64, \"num_experts_per_tok\": 4,"       \
    " \"num_hidden_layers\": " #layers ", \"num_key_value_heads\": 8,"                             \
    " \"num_local_experts\": " #experts ", \"output_router_logits\": false,"                       \
    " \"pad_token_id\": 199999, \"quantization_config\": {\"modules_to_not_convert\":"             \
    " [\"model.layers.*.self_attn\", \"model.layers.*.mlp.router\", \"model.embed_tokens\","       \
    " \"lm_head\"], \"quant_method\": \"mxfp4\"}, \"rms_norm_eps\": 1e-05,"                        \
    " \"rope_scaling\": {\"beta_fast\": 32.0, \"beta_slow\": 1.0, \"factor\": 32.0,"               \
    " \"original_max_position_embeddings\": 4096, \"rope_type\": \"yarn\", \"truncate\": false},"  \
    " \"rope_theta\": 150000, \"router_aux_loss_coef\": 0.9, \"sliding_window\": 128,"             \
    " \"swiglu_limit\": 7.0, \"tie_word_embeddings\": false,"                                      \
    " \"transformers_version\": \"4.55.0.dev0\", \"use_cache\": true, \"vocab_size\": 201088}"

/* meta-llama/Llama-4-Scout-17B-16E: its text model in text_config, every
 * 4th layer unrotated (no_rope_layers), the vision encoder beside it; its
 * fields but for those Maverick's differ in (L4_SCOUT) */
#define NOPE4  "1, 1, 1, 0"
#define NOPE16 NOPE4 ", " NOPE4 ", " NOPE4 ", " NOPE4
#define L4_TEXT(own, more)                                                                         \
    "{\"attention_bias\": false, \"attention_chunk_size\": 8192, \"attention_dropout\": 0.0,"      \
    " \"attn_scale\": 0.1, \"attn_temperature_tuning\": 4, \"bos_token_id\": 200000,"              \
    " \"eos_token_id\": [200001, 200007, 200008], \"floor_scale\": 8192,"                          \
    " \"for_llm_compressor\": false, \"head_dim\": 128, \"hidden_act\": \"silu\","                 \
    " \"hidden_size\": 5120, \"initializer_range\": 0.02, " own ","                                \
    " \"intermediate_size\": 8192, \"intermediate_size_mlp\": 16384, \"model_type\": "             \
    "\"llama4_text\","                                                                             \
    " \"no_rope_layers\": [" NOPE16 ", " NOPE16 ", " NOPE16 "], \"num_attention_heads\": 40,"      \
    " \"num_experts_per_tok\": 1, \"num_hidden_layers\": 48, \"num_key_value_heads\": 8,"          \
    " \"output_router_logits\": false, \"pad_token_id\": 200018, \"rms_norm_eps\": 1e-05,"         \
    " \"rope_theta\": 500000.0, \"router_aux_loss_coef\": 0.001, \"router_jitter_noise\": 0.0,"    \
    " \"torch_dtype\": \"bfloat16\", \"use_cache\": true, \"vocab_size\": 202048" more "}"
#define L4_SCOUT                                                                                   \
    "\"interleave_moe_layer_step\": 1, \"max_position_embeddings\": 10485760,"                     \
    " \"num_local_experts\": 16, \"rope_scaling\": {\"factor\": 8.0, \"high_freq_factor\": 4.0,"   \
    " \"low_freq_factor\": 1.0, \"original_max_position_embeddings\": 8192,"                       \
    " \"rope_type\": \"llama3\"}, \"use_qk_norm\": true"
/* meta-llama/Llama-4-Maverick-17B-128E's: 128 experts on the odd layers
 * (moe_layers as its class fills them in), no QK norm, no rope scaling */
#define L4_ODD4 "1, 3, 5, 7"
#define L4_ODD48                                                                                   \
    L4_ODD4 ", 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31, 33, 35, 37, 39, 41, 43, 45, 47"
#define L4_MAVERICK                                                                                \
    "\"interleave_moe_layer_step\": 2, \"max_position_embeddings\": 1048576,"                      \
    " \"moe_layers\": [" L4_ODD48 "], \"num_local_experts\": 128, \"rope_scaling\": null,"         \
    " \"use_qk_norm\": false"
#define LLAMA4_AS(own, more)                                                                       \
    "{\"architectures\": [\"Llama4ForConditionalGeneration\"], \"boi_token_index\": 200080,"       \
    " \"eoi_token_index\": 200081, \"image_token_index\": 200092, \"model_type\": \"llama4\","     \
    " \"text_config\": " L4_TEXT(                                                                  \
        own, more) ", \"tie_word_embeddings\": false,"                                             \
                   " \"torch_dtype\": \"bfloat16\", \"transformers_version\": \"4.51.0.dev0\","    \
                   " \"vision_config\": {\"hidden_size\": 1408, \"model_type\": "                  \
                   "\"llama4_vision_model\"}}"
#define LLAMA4_SCOUT(more) LLAMA4_AS(L4_SCOUT, more)

/* Each config.json plans as its preset: the same parameters (and active
 * ones), the same layout on the allocation, the same Megatron-LM model. */
static void config__plans_as_its_preset(void **state)
{
    static const struct {
        const char *preset, *json;
        int nodes;
    } cases[] = {
        {"llama2-7b", llama2_7b, 1},
        {"llama3-8b", llama3_8b, 2},
        {"llama3.1-405b", llama31_405b, 64},
        {"mixtral-8x7b", mixtral_8x7b, 4},
        {"qwen3-30b-a3b", QWEN3_MOE(48, 2048, 32, 6144, 768), 4},
        {"qwen3-235b-a22b", QWEN3_MOE(94, 4096, 64, 12288, 1536), 32},
        {"deepseek-v3", deepseek_v3, 128},
        {"kimi-k2", KIMI_K2(""), 64},
        {"nemotron4-15b", nemotron4_15b, 2},
        {"gpt-oss-120b", GPT_OSS(36, 128, OSS_PAIRS9 ", " OSS_PAIRS9), 8},
        {"gpt-oss-20b", GPT_OSS(24, 32, OSS_PAIRS9 ", " OSS_PAIRS3), 2},
        {"llama4-scout", LLAMA4_SCOUT(""), 4},
        {"llama4-maverick", LLAMA4_AS(L4_MAVERICK, ""), 16},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        mesh_model_t p = test_preset(cases[i].preset), m;
        mesh_error_t err;
        /* train: the preset's, since a config.json has none */
        char seq[64], gbs[64], prec[64], recipe[64];
        snprintf(seq, sizeof(seq), "train.seq_len=%d", p.seq_len);
        snprintf(gbs, sizeof(gbs), "train.global_batch=%ld", p.global_batch);
        snprintf(prec, sizeof(prec), "train.precision=%s", mesh_precision_name(p.precision));
        snprintf(recipe, sizeof(recipe), "train.fp8_recipe=%s", mesh_fp8_recipe_name(p.fp8_recipe));
        const char *sets[] = {seq, gbs, prec, recipe};
        const char *path = write_config(cases[i].preset, cases[i].json);
        if (load(path, sets, p.precision == MESH_PREC_FP8 ? 4 : 3, &m, &err) < 0)
            fail_msg("%s: %s", cases[i].preset, err.msg);
        assert_string_equal(m.name, cases[i].preset); /* its folder's name */
        if (m.params != p.params || mesh_model_active_params(&m) != mesh_model_active_params(&p))
            fail_msg("%s: %.0f parameters (%.0f active), the preset %.0f (%.0f)", cases[i].preset,
                     m.params, mesh_model_active_params(&m), p.params,
                     mesh_model_active_params(&p));
        mesh_alloc_t a = test_alloc("H100-SXM", cases[i].nodes, 8);
        mesh_plan_t *x = test_plan(&m, &a, "auto"), *y = test_plan(&p, &a, "auto");
        char lx[MESH_LAYOUT_STR_MAX], ly[MESH_LAYOUT_STR_MAX];
        mesh_layout_format(&mesh_plan_best(x)->layout, lx, sizeof(lx));
        mesh_layout_format(&mesh_plan_best(y)->layout, ly, sizeof(ly));
        if (strcmp(lx, ly) != 0)
            fail_msg("%s: the config plans %s, the preset %s", cases[i].preset, lx, ly);
        /* the model Megatron-LM is told: the same flags but for the router's
         * aux-loss coefficient where the config and the preset's source differ */
        assert_int_equal(m.rope_theta ? m.rope_theta : 10000, p.rope_theta);
        assert_true(m.rope_scaling == p.rope_scaling && m.norm_eps == p.norm_eps);
        assert_int_equal(m.qk_norm, p.qk_norm);
        assert_int_equal(m.mlp, p.mlp);
        assert_true(m.rotary_percent == p.rotary_percent);
        assert_int_equal(m.router.score, p.router.score);
        assert_int_equal(m.router.expert_bias, p.router.expert_bias);
        assert_int_equal(m.router.groups, p.router.groups);
        assert_true(m.mla.mscale_all_dim == p.mla.mscale_all_dim);
        assert_int_equal(m.rope_type, p.rope_type);
        assert_int_equal(m.yarn_truncate, p.yarn_truncate);
        assert_int_equal(m.window, p.window);
        assert_int_equal(m.full_attention_every, p.full_attention_every);
        assert_int_equal(m.attention_sinks, p.attention_sinks);
        assert_true(m.activation_clamp == p.activation_clamp);
        assert_true(m.qk_l2_norm == p.qk_l2_norm && m.nope_every == p.nope_every);
        assert_int_equal(m.rotary_interleaved, p.rotary_interleaved);
        assert_int_equal(m.ffn, p.ffn); /* --ffn-hidden-size, even where no layer is dense */
        assert_int_equal(m.router.probs_on_input, p.router.probs_on_input);
        mesh_plan_destroy(x);
        mesh_plan_destroy(y);
    }
    (void)state;
}

/* The model is named after its folder whatever the path's length (a folder
 * nested past 1,024 characters too), where the folder's name is a preset
 * name (at most 63 characters, of the preset names' letters); else
 * "hf-model". */
static void config__named_after_its_folder(void **state)
{
    (void)state;
    char deep[1400], path[1500], name63[64], name64[65];
    int n = snprintf(deep, sizeof(deep), "%s", dir);
    while (n < 1100) { /* folders of 200 characters, 1,100 and more in all */
        n += snprintf(deep + n, sizeof(deep) - (size_t)n, "/%0200d", 0);
        assert_int_equal(mkdir(deep, 0700), 0);
    }
    memset(name63, 'a', 63);
    name63[63] = '\0';
    memset(name64, 'b', 64);
    name64[64] = '\0';
    static const char *const want[] = {"Llama-3-8B", NULL, "hf-model", "hf-model"};
    const char *folders[] = {"Llama-3-8B", name63, name64, "bad name"};
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof(path), "%s/%s", deep, folders[i]);
        assert_int_equal(mkdir(path, 0700), 0);
        snprintf(path, sizeof(path), "%s/%s/config.json", deep, folders[i]);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(llama3_8b, f);
        assert_int_equal(fclose(f), 0);
        mesh_model_t m;
        mesh_error_t err;
        if (load(path, NULL, 0, &m, &err) < 0)
            fail_msg("%s: %s", folders[i], err.msg);
        assert_string_equal(m.name, want[i] ? want[i] : name63);
    }
    /* a path relative to the working directory, as a user types it */
    char cwd[PATH_MAX];
    assert_non_null(getcwd(cwd, sizeof(cwd)));
    assert_int_equal(chdir(deep), 0);
    mesh_model_t m;
    mesh_error_t err;
    int rc = load("Llama-3-8B/config.json", NULL, 0, &m, &err);
    assert_int_equal(chdir(cwd), 0);
    if (rc < 0)
        fail_msg("%s", err.msg);
    assert_string_equal(m.name, "Llama-3-8B");
}

/* Fields that change nothing meshplan prices are passed over, not refused
 * as unknown: Mixtral's router_jitter_noise (a training regularizer, which
 * MixtralConfig writes with its default 0.0). */
static void config__regularizer_passed_over(void **state)
{
    (void)state;
    char json[sizeof(mixtral_8x7b) + 64];
    snprintf(json, sizeof(json), "{\"router_jitter_noise\": 0.0,%s", mixtral_8x7b + 1);
    mesh_model_t m, p = test_preset("mixtral-8x7b");
    mesh_error_t err;
    if (load(write_config("mixtral-8x7b", json), NULL, 0, &m, &err) < 0)
        fail_msg("%s", err.msg);
    assert_true(m.params == p.params && m.moe.experts == p.moe.experts);
}

/* DeepSeek-V3's config.json with its text `from` made `to`, loaded. */
static mesh_model_t deepseek_v3_with(const char *from, const char *to)
{
    static char json[sizeof(deepseek_v3) + 64];
    const char *at = strstr(deepseek_v3, from);
    assert_non_null(at);
    snprintf(json, sizeof(json), "%.*s%s%s", (int)(at - deepseek_v3), deepseek_v3, to,
             at + strlen(from));
    mesh_model_t m;
    mesh_error_t err;
    if (load(write_config("deepseek-v3", json), NULL, 0, &m, &err) < 0)
        fail_msg("%s", err.msg);
    return m;
}

/* Model m planned on `nodes` H100 nodes under `mesh`: Megatron-LM's
 * arguments hold `has` and not `lacks`. */
static void megatron_args(const mesh_model_t *m, int nodes, const char *mesh, const char *has,
                          const char *lacks)
{
    mesh_alloc_t a = test_alloc("H100-SXM", nodes, 8);
    mesh_plan_t *p = test_plan(m, &a, mesh);
    char *args = test_env_value(p, "MESH_MEGATRON_ARGS");
    if (!strstr(args, has) || strstr(args, lacks))
        fail_msg("'%s' lacks '%s' or has '%s'", args, has, lacks);
    free(args);
    mesh_plan_destroy(p);
}

/* YaRN's mscale_all_dim of 0 (no scale over all dimensions) is a config's
 * to give, though a spec's arch.mla.mscale_all_dim must be more than 0:
 * it is read as the key left out, and Megatron-LM is told no
 * --mscale-all-dim (its default 0.0: arguments.py L3562 at d98e8a6). */
static void config__yarn_without_mscale_all_dim(void **state)
{
    (void)state;
    mesh_model_t m = deepseek_v3_with("\"mscale_all_dim\": 1.0,", "\"mscale_all_dim\": 0,");
    assert_true(m.rope_scaling > 0 && m.mla.mscale_all_dim == 0);
    megatron_args(&m, 128, "auto", " --rotary-scaling-factor 40 ", "--mscale-all-dim");
}

/* q_lora_rank null: queries not compressed (DeepSeek-V2-Lite's MLA), said
 * in a spec as arch.mla.q_lora_rank 0: the model the preset is told so. */
static void config__queries_not_compressed(void **state)
{
    (void)state;
    mesh_model_t m = deepseek_v3_with("\"q_lora_rank\": 1536", "\"q_lora_rank\": null");
    mesh_model_t p = test_spec("preset: deepseek-v3\narch: {mla: {q_lora_rank: 0}}\n");
    assert_int_equal(m.mla.q_lora_rank, 0);
    assert_true(m.mla.kv_lora_rank == 512 && m.params == p.params);
    assert_true(m.params > test_preset("deepseek-v3").params); /* a whole query projection */
}

/* Kimi K2's published file extends its context with a YaRN whose
 * beta_fast (1) Megatron-LM's flags cannot give MLA (MLATransformerConfig's
 * beta_fast, 32, has no flag at d98e8a6: --yarn-beta-fast sets the other
 * attentions' only, argument_utils.py L409): refused naming the field,
 * where the class alone would read as its preset (above). */
static void config__kimi_k2_yarn_refused(void **state)
{
    (void)state;
    mesh_model_t m;
    mesh_error_t err;
    assert_int_equal(load(write_config("kimi-k2", KIMI_K2(KIMI_K2_YARN)), NULL, 0, &m, &err), -1);
    assert_non_null(strstr(err.msg, "rope_scaling.beta_fast: Megatron-LM fixes it at 32"));
}

/* Architectures without a preset: the published parameter counts
 * (the repositories' safetensors totals). */
static void config__published_counts(void **state)
{
    static const struct {
        const char *name, *json;
        double params;
    } cases[] = {
        /* Qwen/Qwen2-7B: biases on q, k and v */
        {"Qwen2-7B",
         "{\"architectures\": [\"Qwen2ForCausalLM\"], \"attention_dropout\": 0.0,"
         " \"bos_token_id\": 151643, \"eos_token_id\": 151643, \"hidden_act\": \"silu\","
         " \"hidden_size\": 3584, \"initializer_range\": 0.02, \"intermediate_size\": 18944,"
         " \"max_position_embeddings\": 131072, \"max_window_layers\": 28, \"model_type\": "
         "\"qwen2\","
         " \"num_attention_heads\": 28, \"num_hidden_layers\": 28, \"num_key_value_heads\": 4,"
         " \"rms_norm_eps\": 1e-06, \"rope_theta\": 1000000.0, \"sliding_window\": 131072,"
         " \"tie_word_embeddings\": false, \"torch_dtype\": \"bfloat16\","
         " \"transformers_version\": \"4.37.2\", \"use_cache\": true,"
         " \"use_sliding_window\": false, \"vocab_size\": 152064}",
         7615616512.0},
        /* Qwen/Qwen3-8B: heads of 128, QK norms */
        {"Qwen3-8B",
         "{\"architectures\": [\"Qwen3ForCausalLM\"], \"attention_bias\": false,"
         " \"attention_dropout\": 0.0, \"bos_token_id\": 151643, \"eos_token_id\": 151645,"
         " \"head_dim\": 128, \"hidden_act\": \"silu\", \"hidden_size\": 4096,"
         " \"initializer_range\": 0.02, \"intermediate_size\": 12288,"
         " \"max_position_embeddings\": 40960, \"max_window_layers\": 36, \"model_type\": "
         "\"qwen3\","
         " \"num_attention_heads\": 32, \"num_hidden_layers\": 36, \"num_key_value_heads\": 8,"
         " \"rms_norm_eps\": 1e-06, \"rope_scaling\": null, \"rope_theta\": 1000000,"
         " \"sliding_window\": null, \"tie_word_embeddings\": false, \"torch_dtype\": \"bfloat16\","
         " \"transformers_version\": \"4.51.0\", \"use_cache\": true,"
         " \"use_sliding_window\": false, \"vocab_size\": 151936}",
         8190735360.0},
        /* mistralai/Mistral-7B-v0.3: no sliding window */
        {"Mistral-7B-v0.3",
         "{\"architectures\": [\"MistralForCausalLM\"], \"attention_dropout\": 0.0,"
         " \"bos_token_id\": 1, \"eos_token_id\": 2, \"head_dim\": 128, \"hidden_act\": \"silu\","
         " \"hidden_size\": 4096, \"initializer_range\": 0.02, \"intermediate_size\": 14336,"
         " \"max_position_embeddings\": 32768, \"model_type\": \"mistral\","
         " \"num_attention_heads\": 32, \"num_hidden_layers\": 32, \"num_key_value_heads\": 8,"
         " \"rms_norm_eps\": 1e-05, \"rope_theta\": 1000000.0, \"sliding_window\": null,"
         " \"tie_word_embeddings\": false, \"torch_dtype\": \"bfloat16\","
         " \"transformers_version\": \"4.42.0.dev0\", \"use_cache\": true, \"vocab_size\": 32768}",
         7248023552.0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        mesh_model_t m;
        mesh_error_t err;
        if (load(write_config(cases[i].name, cases[i].json), NULL, 0, &m, &err) < 0)
            fail_msg("%s: %s", cases[i].name, err.msg);
        if (m.params != cases[i].params)
            fail_msg("%s: %.0f parameters, published %.0f", cases[i].name, m.params,
                     cases[i].params);
    }
    (void)state;
}

/* A Nemotron config's left-out fields are NemotronConfig's defaults: half
 * of each head rotated, as many KV heads as heads, untied embeddings. */
static void config__nemotron_defaults(void **state)
{
    mesh_model_t m;
    mesh_error_t err;
    const char *path = write_config(
        "nemo", "{\"model_type\": \"nemotron\", \"num_hidden_layers\": 2, \"hidden_size\": 64, "
                "\"num_attention_heads\": 4, \"vocab_size\": 100, \"intermediate_size\": 128}");
    if (load(path, NULL, 0, &m, &err) < 0)
        fail_msg("%s", err.msg);
    assert_int_equal(m.mlp, MESH_MLP_RELU2);
    assert_true(m.rotary_percent == 0.5);
    assert_int_equal(m.kv_heads, 4);
    assert_int_equal(m.tied_embeddings, 0);
    assert_int_equal(m.rope_theta, 0); /* Megatron-LM's 10000 */
    (void)state;
}

/* Left-out and null fields are their transformers classes' defaults:
 * Qwen3's 32 KV heads (not its checkpoints' 8), a null
 * num_key_value_heads as many as the heads, Qwen3-MoE's head width of
 * hidden / heads (its class has no head_dim) and the MoE classes' router
 * coefficient of 0.001 (not Megatron-LM's suggested 1e-2). */
static void config__class_defaults(void **state)
{
    mesh_model_t m;
    mesh_error_t err;
#define SIZES                                                                                      \
    "\"num_hidden_layers\": 2, \"hidden_size\": 2048, \"num_attention_heads\": 32, "               \
    "\"vocab_size\": 1000, \"intermediate_size\": 4096"
    if (load(write_config("q3", "{\"model_type\": \"qwen3\", " SIZES "}"), NULL, 0, &m, &err) < 0)
        fail_msg("%s", err.msg);
    assert_int_equal(m.kv_heads, 32);
    assert_int_equal(m.head_dim, 128);
    if (load(write_config("mi", "{\"model_type\": \"mistral\", \"num_key_value_heads\": null, "
                                "\"sliding_window\": null, " SIZES "}"),
             NULL, 0, &m, &err) < 0)
        fail_msg("%s", err.msg);
    assert_int_equal(m.kv_heads, 32);
    if (load(write_config("q3m", "{\"model_type\": \"qwen3_moe\", \"num_experts\": 8, "
                                 "\"num_experts_per_tok\": 2, \"moe_intermediate_size\": 256, "
                                 "\"norm_topk_prob\": true, " SIZES "}"),
             NULL, 0, &m, &err) < 0)
        fail_msg("%s", err.msg);
    assert_int_equal(m.kv_heads, 4);
    assert_int_equal(m.head_dim, 0); /* the spec's default: hidden / heads */
    assert_true(m.router.aux_loss == 0.001);
#undef SIZES
    (void)state;
}

/* a Llama of two layers, its fields to the MLP's width */
#define HF_LLAMA                                                                                   \
    "{\"architectures\": [\"LlamaForCausalLM\"], \"num_hidden_layers\": 2, "                       \
    "\"hidden_size\": 64, \"num_attention_heads\": 4, \"vocab_size\": 100, "                       \
    "\"intermediate_size\": 128, "
/* a Qwen3-MoE of two layers, its top-k normalized */
#define HF_QWEN3_MOE                                                                               \
    "{\"architectures\": [\"Qwen3MoeForCausalLM\"], \"num_hidden_layers\": 2, "                    \
    "\"hidden_size\": 128, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "               \
    "\"head_dim\": 32, \"intermediate_size\": 256, \"moe_intermediate_size\": 64, "                \
    "\"num_experts\": 8, \"num_experts_per_tok\": 2, \"vocab_size\": 1000, "                       \
    "\"norm_topk_prob\": true, "
/* a DeepSeek-V3 of four layers, MLA and MTP, before its router's fields */
#define HF_DEEPSEEK_V3                                                                             \
    "{\"architectures\": [\"DeepseekV3ForCausalLM\"], \"num_hidden_layers\": 4, "                  \
    "\"hidden_size\": 256, \"num_attention_heads\": 4, \"intermediate_size\": 512, "               \
    "\"vocab_size\": 1000, \"kv_lora_rank\": 32, \"qk_nope_head_dim\": 16, "                       \
    "\"qk_rope_head_dim\": 8, \"v_head_dim\": 16, \"q_lora_rank\": null, "                         \
    "\"n_routed_experts\": 8, \"num_experts_per_tok\": 2, \"moe_intermediate_size\": 64, "         \
    "\"n_shared_experts\": 1, \"first_k_dense_replace\": 1, \"n_group\": 4, "                      \
    "\"topk_group\": 2, \"routed_scaling_factor\": 2.5, \"num_nextn_predict_layers\": 1, "

/* Llama 4's text model of four layers, its class's defaults beside */
#define HF_LLAMA4                                                                                  \
    "{\"architectures\": [\"Llama4ForCausalLM\"], \"num_hidden_layers\": 4, "                      \
    "\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "                \
    "\"head_dim\": 16, \"vocab_size\": 100, "

/* a GPT-OSS of four layers, up to its attention's fields */
#define HF_GPT_OSS                                                                                 \
    "{\"architectures\": [\"GptOssForCausalLM\"], \"num_hidden_layers\": 4, "                      \
    "\"hidden_size\": 128, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "               \
    "\"head_dim\": 32, \"intermediate_size\": 64, \"num_local_experts\": 8, "                      \
    "\"num_experts_per_tok\": 2, \"vocab_size\": 1000, "

/* GPT-OSS's class defaults where its fields are left out (GptOssConfig:
 * sliding layers of 128 first, then full, alternating; the clamp at 7;
 * YaRN 32, unrounded), and the layer kinds read as the spec's window keys:
 * all full, no window; all sliding, no whole layer; every fourth whole. */
static void config__gpt_oss_defaults_and_layer_kinds(void **state)
{
    static const struct {
        const char *fields;
        int window, every;
    } cases[] = {
        {"\"model_type\": \"gpt_oss\"}", 128, 2},
        {"\"rope_scaling\": null}", 128, 2}, /* null: the class's YaRN */
        {"\"layer_types\": [\"full_attention\", \"full_attention\", \"full_attention\", "
         "\"full_attention\"]}",
         0, 0},
        {"\"sliding_window\": 64, \"layer_types\": [\"sliding_attention\", "
         "\"sliding_attention\", \"sliding_attention\", \"sliding_attention\"]}",
         64, 0},
        {"\"layer_types\": [\"sliding_attention\", \"sliding_attention\", \"sliding_attention\", "
         "\"full_attention\"]}",
         128, 4},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        char json[1024];
        snprintf(json, sizeof(json), "%s%s", HF_GPT_OSS, cases[i].fields);
        mesh_model_t m;
        mesh_error_t err;
        if (load(write_config("oss", json), NULL, 0, &m, &err) < 0)
            fail_msg("%s: %s", cases[i].fields, err.msg);
        assert_int_equal(m.window, cases[i].window);
        assert_int_equal(m.full_attention_every, cases[i].every);
        assert_int_equal(m.mlp, MESH_MLP_QUICK_GEGLU);
        assert_true(m.attention_sinks && m.activation_clamp == 7 && m.rope_scaling == 32);
        assert_int_equal(m.rope_type, MESH_ROPE_YARN);
        assert_int_equal(m.yarn_truncate, MESH_YARN_EXACT);
        assert_true(m.norm_eps == 1e-5 && m.rope_theta == 150000 && !m.tied_embeddings);
        assert_true(m.moe.experts == 8 && m.moe.top_k == 2 && m.moe.ffn == 64);
        assert_true(m.router.aux_loss == 0.001); /* GptOssConfig's, absent */
    }
    /* one layer: it slides, as the class's default pattern begins */
    mesh_model_t one;
    mesh_error_t err;
    const char *path = write_config(
        "oss1", "{\"architectures\": [\"GptOssForCausalLM\"], \"num_hidden_layers\": 1, "
                "\"hidden_size\": 128, \"num_attention_heads\": 8, \"vocab_size\": 1000}");
    if (load(path, NULL, 0, &one, &err) < 0)
        fail_msg("%s", err.msg);
    assert_true(one.window == 128 && one.full_attention_every == 0);
    /* a null head_dim is hidden / heads (the class's __post_init__), not 64 */
    path = write_config("oss-hd", "{\"architectures\": [\"GptOssForCausalLM\"], "
                                  "\"num_hidden_layers\": 2, \"hidden_size\": 128, "
                                  "\"num_attention_heads\": 8, \"head_dim\": null, "
                                  "\"vocab_size\": 1000}");
    if (load(path, NULL, 0, &one, &err) < 0)
        fail_msg("%s", err.msg);
    assert_int_equal(one.head_dim, 0); /* the spec's default: hidden / heads */
    (void)state;
}

/* Llama 4's class defaults where its text model's fields are left out
 * (Llama4TextConfig: 16 experts of 8192 and a shared one, top 1, the dense
 * MLP 16384, the QK norm on, every 4th layer unrotated, the router's
 * aux-loss 0.001), and the unrotated layers as the interval or the list
 * gives them: none where the interval passes the layers or the list has
 * no 0. */
static void config__llama4_class_defaults(void **state)
{
    (void)state;
    mesh_model_t m;
    mesh_error_t err;
    if (load(write_config("l4", HF_LLAMA4 "\"hidden_act\": \"silu\"}"), NULL, 0, &m, &err) < 0)
        fail_msg("%s", err.msg);
    assert_true(m.moe.experts == 16 && m.moe.top_k == 1 && m.moe.ffn == 8192);
    assert_true(m.moe.shared_experts == 1 && m.moe.shared_ffn == 8192 && m.ffn == 16384);
    assert_true(m.router.score == MESH_SCORE_SIGMOID && m.router.probs_on_input);
    assert_true(m.router.aux_loss == 0.001 && m.rope_theta == 500000 && m.norm_eps == 1e-5);
    assert_true(m.qk_l2_norm && m.rotary_interleaved && m.nope_every == 4 && !m.tied_embeddings);
    static const struct {
        const char *more;
        int nope_every;
    } cases[] = {
        {"\"no_rope_layer_interval\": 2}", 2},
        {"\"no_rope_layer_interval\": 5}", 0},
        {"\"no_rope_layers\": [1, 1, 1, 1]}", 0},
        {"\"no_rope_layers\": []}", 4},
        {"\"no_rope_layers\": [1, 0, 1, 0], \"layer_types\": [\"chunked_attention\", "
         "\"full_attention\", \"chunked_attention\", \"full_attention\"]}",
         2},
        {"\"moe_layers\": [0, 1, 2, 3]}", 4}, /* every layer's, as its class fills it in */
        {"\"use_qk_norm\": false, \"num_experts_per_tok\": 1}", 4},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        char json[512];
        snprintf(json, sizeof(json), HF_LLAMA4 "%s", cases[i].more);
        if (load(write_config("l4", json), NULL, 0, &m, &err) < 0)
            fail_msg("%s: %s", cases[i].more, err.msg);
        if (m.nope_every != cases[i].nope_every)
            fail_msg("%s: nope_every %d, not %d", cases[i].more, m.nope_every, cases[i].nope_every);
    }
    assert_int_equal(m.qk_l2_norm, 0); /* the last case's use_qk_norm: false */
    /* MoE on every other layer, moe_layers left to the class or as it
     * fills them in; every layer's where the step is 1 */
    static const char *const steps[] = {"\"interleave_moe_layer_step\": 2}",
                                        "\"interleave_moe_layer_step\": 2, \"moe_layers\": [1, 3]}",
                                        "\"interleave_moe_layer_step\": 3, \"moe_layers\": [2]}",
                                        "\"interleave_moe_layer_step\": 1}"};
    static const int every[] = {2, 2, 3, 0}, moe_layers[] = {2, 2, 1, 4}; /* 0: every layer */
    for (size_t i = 0; i < sizeof(steps) / sizeof(*steps); i++) {
        char json[512];
        snprintf(json, sizeof(json), HF_LLAMA4 "%s", steps[i]);
        if (load(write_config("l4", json), NULL, 0, &m, &err) < 0)
            fail_msg("%s: %s", steps[i], err.msg);
        if (m.moe.every != every[i] || mesh_model_moe_layers(&m) != moe_layers[i])
            fail_msg("%s: every %d, %d MoE layers", steps[i], m.moe.every,
                     mesh_model_moe_layers(&m));
    }
}

/* mistralai/Mistral-7B-v0.1's config.json: every layer windowed over 4,096
 * tokens (arch.window, --window-size 4095,0); its class's window where
 * the field is left out, none where it is null (v0.3); Mixtral's class
 * windows every layer alike. */
static void config__mistral_window_on_every_layer(void **state)
{
    static const char mistral_7b_v01[] =
        "{\"architectures\": [\"MistralForCausalLM\"], \"bos_token_id\": 1, \"eos_token_id\": 2,"
        " \"hidden_act\": \"silu\", \"hidden_size\": 4096, \"initializer_range\": 0.02,"
        " \"intermediate_size\": 14336, \"max_position_embeddings\": 32768,"
        " \"model_type\": \"mistral\", \"num_attention_heads\": 32, \"num_hidden_layers\": 32,"
        " \"num_key_value_heads\": 8, \"rms_norm_eps\": 1e-05, \"rope_theta\": 10000.0,"
        " \"sliding_window\": 4096, \"tie_word_embeddings\": false, \"torch_dtype\": \"bfloat16\","
        " \"transformers_version\": \"4.34.0.dev0\", \"use_cache\": true, \"vocab_size\": 32000}";
    mesh_model_t m;
    mesh_error_t err;
    const char *seq[] = {"train.seq_len=8192"};
    if (load(write_config("mistral-7b", mistral_7b_v01), seq, 1, &m, &err) < 0)
        fail_msg("%s", err.msg);
    assert_int_equal((uint64_t)m.params, 7241732096ULL); /* the model's 7.24 B */
    assert_true(m.window == 4096 && m.full_attention_every == 0);
    megatron_args(&m, 1, "tp=1", " --window-size 4095,0 ", "--window-attn-skip-freq");
#define MW_SIZES                                                                                   \
    "\"num_hidden_layers\": 2, \"hidden_size\": 256, \"num_attention_heads\": 8, "                 \
    "\"vocab_size\": 1000, \"intermediate_size\": 512"
    static const struct {
        const char *json;
        int window;
    } cases[] = {
        {"{\"model_type\": \"mistral\", " MW_SIZES "}", 4096},
        {"{\"model_type\": \"mistral\", \"sliding_window\": null, " MW_SIZES "}", 0},
        {"{\"model_type\": \"mixtral\", \"sliding_window\": 2048, \"num_local_experts\": 8, "
         "\"num_experts_per_tok\": 2, " MW_SIZES "}",
         2048},
        {"{\"model_type\": \"mixtral\", \"num_local_experts\": 8, \"num_experts_per_tok\": "
         "2, " MW_SIZES "}",
         0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        if (load(write_config("mw", cases[i].json), NULL, 0, &m, &err) < 0)
            fail_msg("%s: %s", cases[i].json, err.msg);
        assert_int_equal(m.window, cases[i].window);
    }
#undef MW_SIZES
    (void)state;
}

/* What the spec cannot say, and JSON that is not a config, refused in one
 * line naming the field. */
static void config__refused_naming_the_field(void **state)
{
    static const struct {
        const char *json, *needle;
    } cases[] = {
        {"{\"architectures\": [\"GptOssForCausalLM\"], \"model_type\": \"gpt_oss\"}",
         "num_hidden_layers is missing"},
        /* GPT-OSS: its layer kinds a regular pattern of the two kinds, as
         * many as its layers; what Megatron-LM fixes or the spec cannot say */
        {HF_GPT_OSS "\"layer_types\": [\"sliding_attention\", \"full_attention\", "
                    "\"full_attention\", \"sliding_attention\"]}",
         "layer_types: full_attention every 2 layers does not hold at layer 2"},
        {HF_GPT_OSS "\"layer_types\": [\"sliding_attention\", \"chunked_attention\", "
                    "\"sliding_attention\", \"full_attention\"]}",
         "layer_types: layer 1 is 'chunked_attention', not full_attention or sliding_attention"},
        {HF_GPT_OSS "\"layer_types\": [\"sliding_attention\", \"full_attention\"]}",
         "layer_types: expected a list of num_hidden_layers (4) names"},
        {HF_GPT_OSS "\"swiglu_alpha\": 1.5}", "swiglu_alpha: Megatron-LM's quick GeLU fixes it"},
        {HF_GPT_OSS "\"attention_bias\": false}", "attention_bias: attention projections without"},
        {HF_GPT_OSS "\"hidden_act\": \"gelu\"}", "hidden_act: only silu"},
        {HF_GPT_OSS "\"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8}}",
         "rope_scaling: type 'llama3' is not described (YaRN only)"},
        {HF_GPT_OSS "\"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 8, "
                    "\"truncate\": \"no\"}}",
         "rope_scaling.truncate: expected true or false, not a string"},
        {HF_GPT_OSS "\"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 8, "
                    "\"beta_fast\": 16}}",
         "rope_scaling.beta_fast: Megatron-LM fixes it at 32"},
        {HF_GPT_OSS "\"sliding_window\": null}", "sliding_window: null, but layers are sliding"},
        {HF_GPT_OSS "\"sliding_window\": 0}", "sliding_window: 0; a window holds 1 token or more"},
        {HF_GPT_OSS "\"experts_per_token\": 4}", "experts_per_token: differs from"},
        /* Llama 4: its text model only, every layer MoE, a regular pattern
         * of unrotated layers, Llama 3.1's RoPE constants */
        {"{\"architectures\": [\"Llama4ForConditionalGeneration\"], \"model_type\": \"llama4\"}",
         "text_config: expected the text model's object, not nothing"},
        {HF_LLAMA4 "\"interleave_moe_layer_step\": 0}",
         "interleave_moe_layer_step: 0; give 1 or more"},
        {HF_LLAMA4 "\"interleave_moe_layer_step\": 65}",
         "interleave_moe_layer_step: arch.moe.every: 65 is out of range (allowed 1..64)"},
        {HF_LLAMA4 "\"interleave_moe_layer_step\": 5}",
         "interleave_moe_layer_step: arch.moe.every: 5 leaves no MoE layer of the 4 layers"},
        {LLAMA4_SCOUT(", \"moe_layers\": [1, 3]"),
         "text_config.moe_layers: not the layers interleave_moe_layer_step 1 gives (0, 1, ...)"},
        {HF_LLAMA4 "\"interleave_moe_layer_step\": 2, \"moe_layers\": [0, 2]}",
         "moe_layers: not the layers interleave_moe_layer_step 2 gives (1, 3, ...): MoE on"},
        {HF_LLAMA4 "\"interleave_moe_layer_step\": 2, \"moe_layers\": [1]}",
         "moe_layers: not the layers interleave_moe_layer_step 2 gives"},
        {HF_LLAMA4 "\"rope_scaling\": {\"factor\": 16.0, \"high_freq_factor\": 1.0, "
                   "\"low_freq_factor\": 1.0, \"original_max_position_embeddings\": 8192, "
                   "\"rope_type\": \"llama3\"}}",
         "rope_scaling.high_freq_factor: Megatron-LM fixes it at 4"},
        {HF_LLAMA4 "\"attention_bias\": true}", "attention_bias: biases on"},
        {LLAMA4_SCOUT(", \"colour\": 1"), "text_config.colour: not a field meshplan reads"},
        /* the top level's fields are not the text model's */
        {LLAMA4_SCOUT(", \"image_token_index\": 5"),
         "text_config.image_token_index: not a field meshplan reads"},
        {HF_LLAMA4 "\"no_rope_layers\": [1, 0, 0, 1]}",
         "no_rope_layers: an unrotated layer every 2 does not hold at layer 2: only a regular"},
        {HF_LLAMA4 "\"no_rope_layers\": [1, 2, 1, 0]}", "no_rope_layers: layer 1 is not 0 or 1"},
        {HF_LLAMA4 "\"layer_types\": [\"chunked_attention\", \"chunked_attention\", "
                   "\"chunked_attention\", \"chunked_attention\"]}",
         "layer_types: layer 3 is not full_attention, as no_rope_layers says"},
        {"{\"architectures\": [\"FalconForCausalLM\"]}", "architectures 'FalconForCausalLM'"},
        {"{\"model_type\": \"falcon\"}",
         "model_type 'falcon' is not one meshplan reads (llama, mistral, mixtral, qwen2, qwen3, "
         "qwen3_moe, deepseek_v3, kimi_k2, nemotron, gpt_oss, llama4, llama4_text): describe the "
         "model in a spec file"},
        {"{\"architectures\": [\"LlamaForCausalLM\"], \"model_type\": 7}",
         "model_type: expected a string, not an integer"},
        /* a class meshplan reads, under a type it does not: the types it reads */
        {"{\"architectures\": [\"DeepseekV3ForCausalLM\"], \"model_type\": \"deepseek_v2\"}",
         "model_type 'deepseek_v2' is not one meshplan reads as DeepseekV3ForCausalLM "
         "(deepseek_v3, kimi_k2): give one of them, or describe the model in a spec file"},
        {"{\"hidden_size\": 64}", "architectures and model_type are missing"},
        {"[1, 2]", "expected a JSON object"},
        {HF_LLAMA "\"attention_bias\": true}",
         "attention_bias: biases on the attention projections"},
        {HF_LLAMA "\"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8,"
                  " \"low_freq_factor\": 2}}",
         "rope_scaling.low_freq_factor: Megatron-LM fixes it at 1"},
        /* Qwen2.5's long-context YaRN (its model card's rope_scaling): YaRN is
         * described under MLA only, so a Qwen2 config is held to llama3's */
        {"{\"architectures\": [\"Qwen2ForCausalLM\"], \"num_hidden_layers\": 2, "
         "\"hidden_size\": 64, \"num_attention_heads\": 4, \"vocab_size\": 100, "
         "\"intermediate_size\": 128, \"rope_scaling\": {\"factor\": 4.0, "
         "\"original_max_position_embeddings\": 32768, \"type\": \"yarn\"}}",
         "rope_scaling: type 'yarn' is not described (Llama 3.1's llama3 only)"},
        {HF_LLAMA "\"sliding_window\": 4096}",
         "sliding_window: a window is described for every layer of Mistral's and Mixtral's "
         "classes only"},
        {"{\"architectures\": [\"MistralForCausalLM\"], \"num_hidden_layers\": 2, "
         "\"hidden_size\": 64, \"num_attention_heads\": 4, \"vocab_size\": 100, "
         "\"intermediate_size\": 128, \"sliding_window\": 4096, \"layer_types\": "
         "[\"sliding_attention\", \"full_attention\"]}",
         "layer_types: layer 1 is not sliding_attention, as sliding_window says"},
        {"{\"architectures\": [\"MistralForCausalLM\"], \"num_hidden_layers\": 2, "
         "\"hidden_size\": 64, \"num_attention_heads\": 4, \"vocab_size\": 100, "
         "\"intermediate_size\": 128, \"sliding_window\": 0}",
         "sliding_window: 0; a window holds 1 token or more"},
        {HF_LLAMA "\"parallel_attn\": true}", "parallel_attn: not a field meshplan reads"},
        /* transformers' per-layer attention kinds: a list, every one full */
        {HF_LLAMA "\"layer_types\": \"full_attention\"}", "layer_types: expected a list"},
        {"{\"architectures\": [\"LlamaForCausalLM\"], \"num_hidden_layers\": 2, "
         "\"hidden_size\": 64, \"num_attention_heads\": 0, \"vocab_size\": 100, "
         "\"intermediate_size\": 128}",
         "config.json: num_attention_heads: arch.heads: 0 is out of range"},
        {"{\"architectures\": [\"LlamaForCausalLM\"], \"num_hidden_layers\": \"two\"}",
         "num_hidden_layers: expected a whole number, not a string"},
        /* a real is a whole number below 9e15 (exactly one in a double) */
        {"{\"architectures\": [\"LlamaForCausalLM\"], \"num_hidden_layers\": 9e15}",
         "num_hidden_layers: expected a whole number, not a number"},
        {"{\"architectures\": [\"LlamaForCausalLM\"], \"num_hidden_layers\": 8.9e15}",
         "hidden_size is missing"}, /* read: the next field is what lacks */
        {"{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 64}",
         "num_hidden_layers is missing"},
        /* what a field left out means is its class's default, or nothing */
        {"{\"architectures\": [\"Qwen3MoeForCausalLM\"], \"num_hidden_layers\": 2, "
         "\"hidden_size\": 128, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "
         "\"head_dim\": 32, \"intermediate_size\": 256, \"moe_intermediate_size\": 64, "
         "\"num_experts\": 8, \"num_experts_per_tok\": 2, \"vocab_size\": 1000}",
         "norm_topk_prob: top-k probabilities left unnormalized, its default"},
        {"{\"architectures\": [\"DeepseekV3ForCausalLM\"], \"num_hidden_layers\": 4, "
         "\"hidden_size\": 256, \"num_attention_heads\": 4, \"intermediate_size\": 512, "
         "\"vocab_size\": 1000, \"kv_lora_rank\": 32, \"qk_nope_head_dim\": 16, "
         "\"qk_rope_head_dim\": 8, \"v_head_dim\": 16, \"n_routed_experts\": 8, "
         "\"num_experts_per_tok\": 2, \"moe_intermediate_size\": 64, \"n_shared_experts\": 1, "
         "\"first_k_dense_replace\": 1, \"n_group\": 4, \"topk_group\": 2, "
         "\"routed_scaling_factor\": 2.5, \"scoring_func\": \"sigmoid\", "
         "\"topk_method\": \"noaux_tc\", \"num_nextn_predict_layers\": 1}",
         "q_lora_rank is missing"},
        /* a string reaches the spec only as one of its own words */
        {HF_DEEPSEEK_V3
         ""
         "\"scoring_func\": \"sigmoid\\n    capacity_factor: 1.5\", \"topk_method\": \"greedy\"}",
         "scoring_func: only softmax or sigmoid is described"},
        /* Nemotron: its squared ReLU only, no biases, a share of each head */
        {"{\"architectures\": [\"NemotronForCausalLM\"], \"num_hidden_layers\": 2, "
         "\"hidden_size\": 64, \"num_attention_heads\": 4, \"vocab_size\": 100, "
         "\"intermediate_size\": 128, \"hidden_act\": \"gelu\"}",
         "hidden_act: only relu2 (squared ReLU) is described, not gelu"},
        {"{\"architectures\": [\"NemotronForCausalLM\"], \"num_hidden_layers\": 2, "
         "\"hidden_size\": 64, \"num_attention_heads\": 4, \"vocab_size\": 100, "
         "\"intermediate_size\": 128, \"mlp_bias\": true}",
         "mlp_bias: biases on the MLP"},
        {"{\"architectures\": [\"NemotronForCausalLM\"], \"num_hidden_layers\": 2, "
         "\"hidden_size\": 64, \"num_attention_heads\": 4, \"vocab_size\": 100, "
         "\"intermediate_size\": 128, \"partial_rotary_factor\": 0}",
         "partial_rotary_factor: arch.rotary_percent: 0 is out of range"},
        /* each field's type, and each value the spec cannot say, by name */
        {HF_LLAMA "\"rms_norm_eps\": \"1e-5\"}", "rms_norm_eps: expected a number, not a string"},
        {HF_LLAMA "\"tie_word_embeddings\": 1}",
         "tie_word_embeddings: expected true or false, not an integer"},
        {HF_LLAMA "\"pretraining_tp\": 2}",
         "pretraining_tp: Llama 2's sliced matmuls (meshplan's spec cannot describe it)"},
        {HF_LLAMA "\"rope_scaling\": 8}", "rope_scaling: expected an object, not an integer"},
        {HF_LLAMA "\"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": "
                  "8, \"beta\": 1}}",
         "rope_scaling.beta: not described by meshplan's spec"},
        {HF_LLAMA "\"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": "
                  "\"8\"}}",
         "rope_scaling.factor: expected a number"},
        {HF_LLAMA "\"use_sliding_window\": true}",
         "use_sliding_window: a window on the layers max_window_layers picks"},
        {HF_LLAMA "\"layer_types\": [\"full_attention\", "
                  "\"sliding_attention\"]}",
         "layer_types: layer 1 is not full_attention"},
        {"{\"architectures\": [\"LlamaForCausalLM\", \"MistralForCausalLM\"]}",
         "architectures: expected a list of one name"},
        {HF_QWEN3_MOE "\"mlp_only_layers\": [0]}",
         "mlp_only_layers: dense layers among the MoE ones are not described"},
        {HF_QWEN3_MOE "\"decoder_sparse_step\": 2}",
         "decoder_sparse_step: MoE layers only every few layers"},
        {HF_DEEPSEEK_V3 ""
                        "\"topk_method\": \"noaux_tc\"}",
         "scoring_func is missing"},
        {HF_DEEPSEEK_V3 ""
                        "\"scoring_func\": \"sigmoid\"}",
         "topk_method is missing"},
        {HF_DEEPSEEK_V3 ""
                        "\"scoring_func\": \"sigmoid\", \"topk_method\": \"group_limited_greedy\"}",
         "topk_method: only greedy or noaux_tc is described"},
        {HF_DEEPSEEK_V3 ""
                        "\"scoring_func\": \"sigmoid\", \"topk_method\": \"noaux_tc\", "
                        "\"rope_scaling\": {\"type\": \"yarn\", \"factor\": 40, "
                        "\"original_max_position_embeddings\": 4096, \"mscale_all_dim\": -1}}",
         "rope_scaling.mscale_all_dim: expected a number, 0 or more"},
        {"{\"a\": 1, \"a\": 2}", "duplicate object key"},
        {"{\"vocab_size\": NaN}", "not valid JSON"},
        {"{\"vocab_size\": 1e999}", "real number overflow"},
        {"{\"vocab_size\": 123456789012345678901234567890}", "too big integer"},
        {"{\"vocab_size\": 1} trailing", "not valid JSON"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        mesh_model_t m;
        mesh_error_t err;
        if (load(write_config("bad", cases[i].json), NULL, 0, &m, &err) == 0)
            fail_msg("%s: accepted", cases[i].json);
        if (!strstr(err.msg, cases[i].needle) || strchr(err.msg, '\n'))
            fail_msg("%s: '%s' lacks '%s'", cases[i].json, err.msg, cases[i].needle);
    }
    /* without an error to fill (err NULL), a refusal is still one */
    mesh_model_t quiet;
    mesh_spec_dirs_t d = test_dirs();
    assert_int_equal(
        mesh_spec_load(write_config("quiet", "{\"architectures\": [\"LlamaForCausalLM\"], "
                                             "\"num_hidden_layers\": 0, \"hidden_size\": 64, "
                                             "\"num_attention_heads\": 4, \"vocab_size\": 100, "
                                             "\"intermediate_size\": 128}"),
                       &d, &quiet, NULL),
        -1);
    /* nested 10,000 deep, and a file past the 64 KiB a spec may be */
    size_t n = 20000;
    char *deep = malloc(n + 1);
    assert_non_null(deep);
    memset(deep, '[', n / 2);
    memset(deep + n / 2, ']', n / 2);
    deep[n] = '\0';
    mesh_model_t m;
    mesh_error_t err;
    assert_int_equal(load(write_config("deep", deep), NULL, 0, &m, &err), -1);
    assert_non_null(strstr(err.msg, "maximum parsing depth"));
    free(deep);
    char *big = malloc(10 << 20);
    assert_non_null(big);
    memset(big, ' ', (10 << 20) - 1);
    big[0] = '{';
    big[(10 << 20) - 3] = '}';
    big[(10 << 20) - 1] = '\0';
    assert_int_equal(load(write_config("big", big), NULL, 0, &m, &err), -1);
    assert_non_null(strstr(err.msg, "larger than"));
    free(big);
    (void)state;
}
#undef HF_LLAMA
#undef HF_QWEN3_MOE
#undef HF_DEEPSEEK_V3

/* Reading a config.json, a MoE one with MLA included, and one refused,
 * gives back every byte it takes (jansson's objects with it). */
static void hf_work(void)
{
    mesh_model_t m;
    mesh_error_t err;
    assert_int_equal(load(write_config("dsv3", deepseek_v3), NULL, 0, &m, &err), 0);
    assert_int_equal(load(write_config("llama", llama3_8b), NULL, 0, &m, &err), 0);
    assert_int_equal(load(write_config("broken", "{\"hidden_size\": [1, 2"), NULL, 0, &m, &err),
                     -1);
}

static void config__returns_all_its_memory(void **state)
{
    (void)state;
    test_gives_back(hf_work, "reading config.json");
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    (void)state;
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(config__plans_as_its_preset),
        cmocka_unit_test(config__returns_all_its_memory),
        cmocka_unit_test(config__named_after_its_folder),
        cmocka_unit_test(config__regularizer_passed_over),
        cmocka_unit_test(config__yarn_without_mscale_all_dim),
        cmocka_unit_test(config__queries_not_compressed),
        cmocka_unit_test(config__kimi_k2_yarn_refused),
        cmocka_unit_test(config__llama4_class_defaults),
        cmocka_unit_test(config__published_counts),
        cmocka_unit_test(config__refused_naming_the_field),
        cmocka_unit_test(config__nemotron_defaults),
        cmocka_unit_test(config__class_defaults),
        cmocka_unit_test(config__gpt_oss_defaults_and_layer_kinds),
        cmocka_unit_test(config__mistral_window_on_every_layer),
    };
    return cmocka_run_group_tests_name("hf", tests, setup, teardown);
}
