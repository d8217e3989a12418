/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A Hugging Face config.json as a model spec.
 *
 * The file is read with Jansson, strictly (duplicate keys, NaN, numbers out
 * of range and trailing text are errors), and each architecture meshplan
 * describes is translated field by field into the spec's own keys, written
 * as a YAML document that lib/spec.c then reads like any spec file, with the
 * overrides (--set) and every check a file gets.  Only the architecture is
 * in a config.json: train takes its defaults and overrides.
 *
 * A field that would change the model and that the spec cannot say (a bias
 * the architecture has not, a window on some layers, another RoPE scaling) is an
 * error naming it, and so is any field this file does not know: a config
 * the translation does not understand is never planned as something else.
 * Sources: the architectures' configuration classes in
 * huggingface/transformers (models/<type>/configuration_<type>.py), whose
 * defaults apply where a file leaves a field out.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define HF_FIELDS_MAX MESH_HF_FIELDS_MAX

typedef struct hf {
    json_t *root;
    const char *origin;
    const char *prefix;              /* before a field's name in errors: "text_config." or "" */
    mesh_buf_t *doc;                 /* the spec document being written */
    mesh_error_t *err;               /* set by the first error; later calls do nothing */
    int failed;                      /* an error was set */
    const char *used[HF_FIELDS_MAX]; /* the fields read, known or not */
    int n_used;
    const char *line_field[HF_FIELDS_MAX]; /* the field each line of doc came from */
    int lines;
} hf_t;

static int hf_fail(hf_t *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int hf_fail(hf_t *h, const char *fmt, ...)
{
    if (h->failed)
        return -1;
    h->failed = 1;
    char msg[MESH_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return mesh_error_set(h->err, "%s: %s%s", h->origin, h->prefix, msg);
}

static void use(hf_t *h, const char *field)
{
    for (int i = 0; i < h->n_used; i++)
        if (strcmp(h->used[i], field) == 0)
            return;
    if (h->n_used < HF_FIELDS_MAX)
        h->used[h->n_used++] = field;
}

/* Field `field` of the file, NULL where it is absent or JSON null (the
 * configuration classes' way of saying "the default"; gqa_sizes reads a
 * null num_key_value_heads itself). */
static json_t *field_of(hf_t *h, const char *field)
{
    use(h, field);
    json_t *v = json_object_get(h->root, field);
    return v && !json_is_null(v) ? v : NULL;
}

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "a list";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

/* A whole number: an integer, or a real that is one (500000.0). */
static int whole(hf_t *h, const char *field, const json_t *v, long long *out)
{
    double d = json_is_real(v) ? json_real_value(v) : 0;
    if (json_is_integer(v))
        *out = json_integer_value(v);
    else if (json_is_real(v) && d == floor(d) && fabs(d) < 9e15)
        *out = (long long)d;
    else
        return hf_fail(h, "%s: expected a whole number, not %s", field, type_name(v));
    return 0;
}

/* One line of the spec document, "INDENT KEY: VALUE", from `field`. */
static void emit(hf_t *h, const char *field, const char *indent, const char *key, const char *fmt,
                 ...) __attribute__((format(printf, 5, 6)));
static void emit(hf_t *h, const char *field, const char *indent, const char *key, const char *fmt,
                 ...)
{
    if (h->failed)
        return;
    if (h->lines == HF_FIELDS_MAX) {
        hf_fail(h, "more fields than meshplan reads");
        return;
    }
    h->line_field[h->lines++] = field;
    mesh_buf_printf(h->doc, "%s%s: ", indent, key);
    va_list ap;
    va_start(ap, fmt);
    mesh_buf_vprintf(h->doc, fmt, ap);
    va_end(ap);
    mesh_buf_puts(h->doc, "\n");
}

/* A section heading ("arch:"): the line names no field. */
static void section(hf_t *h, const char *indent, const char *name)
{
    if (h->failed || h->lines == HF_FIELDS_MAX)
        return;
    h->line_field[h->lines++] = NULL;
    mesh_buf_printf(h->doc, "%s%s:\n", indent, name);
}

/* What a field the file leaves out stands for (its architecture's
 * configuration class's default): REQ, none meshplan can rely on, so the
 * field must be there; SAME, the spec key's own default, which is the
 * class's too; else the default written as the spec key's value. */
static const char REQ[] = "required", SAME[] = "the spec's";

static void absent(hf_t *h, const char *field, const char *indent, const char *key,
                   const char *dflt)
{
    if (dflt == REQ)
        hf_fail(h, "%s is missing (meshplan needs it as %s)", field, key);
    else if (dflt != SAME)
        emit(h, field, indent, key, "%s", dflt);
}

/* Field -> spec key, a whole number. */
static void to_int(hf_t *h, const char *field, const char *indent, const char *key,
                   const char *dflt)
{
    json_t *v = field_of(h, field);
    long long n;
    if (!v)
        absent(h, field, indent, key, dflt);
    else if (whole(h, field, v, &n) == 0)
        emit(h, field, indent, key, "%lld", n);
}

static void to_num(hf_t *h, const char *field, const char *indent, const char *key,
                   const char *dflt)
{
    json_t *v = field_of(h, field);
    if (!v)
        absent(h, field, indent, key, dflt);
    else if (!json_is_number(v))
        hf_fail(h, "%s: expected a number, not %s", field, type_name(v));
    else
        emit(h, field, indent, key, "%.17g", json_number_value(v));
}

static void to_bool(hf_t *h, const char *field, const char *indent, const char *key, int dflt)
{
    json_t *v = field_of(h, field);
    if (v && !json_is_boolean(v))
        hf_fail(h, "%s: expected true or false, not %s", field, type_name(v));
    else
        emit(h, field, indent, key, "%s", (v ? json_is_true(v) : dflt) ? "true" : "false");
}

/* A field the spec cannot say unless it has this value (a boolean, or a
 * whole number); absent it has the configuration class's default, dflt. */
static void must_bool(hf_t *h, const char *field, int want, int dflt, const char *why)
{
    json_t *v = field_of(h, field);
    if (v ? !json_is_boolean(v) || json_is_true(v) != want : dflt != want)
        hf_fail(h, "%s: %s%s (meshplan's spec cannot describe it)", field, why,
                v ? "" : ", its default");
}

static void must_int(hf_t *h, const char *field, long long want, const char *why)
{
    json_t *v = field_of(h, field);
    long long n;
    if (v && (whole(h, field, v, &n) < 0 || n != want))
        hf_fail(h, "%s: %s (meshplan's spec cannot describe it)", field, why);
}

/* The activation, the one the architecture's layer style has (absent:
 * its class's default, the same): hf's name, the spec's mlp and its words. */
static void activation(hf_t *h, const char *field, const char *hf, const char *mlp,
                       const char *words)
{
    json_t *v = field_of(h, field);
    if (v && (!json_is_string(v) || strcmp(json_string_value(v), hf) != 0))
        hf_fail(h, "%s: only %s (%s) is described, not %s", field, hf, words,
                json_is_string(v) ? json_string_value(v) : type_name(v));
    emit(h, field, "  ", "mlp", "%s", mlp);
}

/* SiLU-gated (SwiGLU), the Llama family's and DeepSeek's. */
static void silu(hf_t *h, const char *field)
{
    activation(h, field, "silu", "swiglu", "SwiGLU");
}

/* How an architecture's rope_scaling may scale: Llama 3.1's ("llama3"),
 * whose constants Megatron-LM fixes (low 1, high 4, original 8192); YaRN
 * under MLA (DeepSeek-V3), whose constants Megatron-LM's MLA fixes but the
 * attention scale (mscale_all_dim); or YaRN in standard attention
 * (GPT-OSS), whose constants are Megatron-LM's defaults but the rounding
 * of its correction range (truncate: argument_utils.py L384-413 at
 * d98e8a6). */
enum rope { ROPE_LLAMA3, ROPE_MLA_YARN, ROPE_YARN };

static void rope_scaling(hf_t *h, enum rope kind)
{
    json_t *r = field_of(h, "rope_scaling");
    if (!r)
        return;
    if (!json_is_object(r)) {
        hf_fail(h, "rope_scaling: expected an object, not %s", type_name(r));
        return;
    }
    json_t *t = json_object_get(r, "rope_type");
    t = t ? t : json_object_get(r, "type");
    const char *type = json_is_string(t) ? json_string_value(t) : "";
    static const struct {
        const char *type, *key;
        double want;
    } fixed[] = {
        {"llama3", "low_freq_factor", 1},
        {"llama3", "high_freq_factor", 4},
        {"llama3", "original_max_position_embeddings", 8192},
        {"yarn", "original_max_position_embeddings", 4096},
        {"yarn", "beta_fast", 32},
        {"yarn", "beta_slow", 1},
        {"yarn", "mscale", 1},
    };
    static const char *const described[] = {[ROPE_LLAMA3] = "Llama 3.1's llama3 only",
                                            [ROPE_MLA_YARN] = "YaRN under MLA",
                                            [ROPE_YARN] = "YaRN only"};
    if (strcmp(type, kind == ROPE_LLAMA3 ? "llama3" : "yarn") != 0) {
        hf_fail(h, "rope_scaling: type '%s' is not described (%s)", type, described[kind]);
        return;
    }
    const char *k;
    json_t *v;
    json_object_foreach(r, k, v)
    {
        int known = strcmp(k, "rope_type") == 0 || strcmp(k, "type") == 0 ||
                    strcmp(k, "factor") == 0 ||
                    (kind == ROPE_MLA_YARN && strcmp(k, "mscale_all_dim") == 0) ||
                    (kind == ROPE_YARN && strcmp(k, "truncate") == 0);
        for (size_t i = 0; i < MESH_ARRAY_LEN(fixed); i++) {
            if (strcmp(fixed[i].type, type) != 0 || strcmp(fixed[i].key, k) != 0)
                continue;
            known = 1;
            if (!json_is_number(v) || json_number_value(v) != fixed[i].want)
                hf_fail(h, "rope_scaling.%s: Megatron-LM fixes it at %g, so only %g is described",
                        k, fixed[i].want, fixed[i].want);
        }
        if (!known)
            hf_fail(h, "rope_scaling.%s: not described by meshplan's spec", k);
    }
    json_t *f = json_object_get(r, "factor");
    if (!json_is_number(f))
        hf_fail(h, "rope_scaling.factor: expected a number");
    else
        emit(h, "rope_scaling", "  ", "rope_scaling", "%.17g", json_number_value(f));
    if (kind != ROPE_YARN)
        return;
    emit(h, "rope_scaling", "  ", "rope_type", "yarn");
    json_t *tr = json_object_get(r, "truncate"); /* absent: true, Hugging Face's default */
    if (tr && !json_is_boolean(tr))
        hf_fail(h, "rope_scaling.truncate: expected true or false, not %s", type_name(tr));
    else if (tr && json_is_false(tr))
        emit(h, "rope_scaling", "  ", "yarn_truncate", "false");
}

/* What every Llama-family config states: the sizes, the activation, RoPE,
 * the norms, the embeddings, and the biases it must not have. */
/* The Llama family's defaults that differ between its classes (the
 * configuration_<type>.py files): KV heads, head width, RoPE base, norm
 * epsilon, the window an absent sliding_window is, and whether the class
 * windows every layer with it (Mistral's and Mixtral's attention do; Qwen2's
 * and Qwen3's only the layers use_sliding_window and max_window_layers
 * pick, which the spec cannot say). */
typedef struct family {
    const char *kv_heads, *head_dim, *rope_theta, *norm_eps;
    const char *window; /* absent: a window of this (MistralConfig's 4096); NULL: none */
    int windows;        /* 1: a window is every layer's (arch.window) */
} family_t;

/* The sizes of a model of grouped-query attention: absent, the KV heads
 * and the head width are its class's defaults, kv_heads and head_dim.  A
 * null num_key_value_heads is as many as the heads: each class's
 * __post_init__ says so (configuration_llama.py, _mistral, _mixtral,
 * _qwen2, _qwen3 at transformers 008e574); Qwen3-MoE's, which takes no
 * null, is read alike. */
static void gqa_sizes(hf_t *h, const char *kv_heads, const char *head_dim)
{
    json_t *kv = json_object_get(h->root, "num_key_value_heads");
    section(h, "", "arch");
    to_int(h, "num_hidden_layers", "  ", "layers", REQ);
    to_int(h, "hidden_size", "  ", "hidden", REQ);
    to_int(h, "num_attention_heads", "  ", "heads", REQ);
    to_int(h, "num_key_value_heads", "  ", "kv_heads", kv && json_is_null(kv) ? SAME : kv_heads);
    to_int(h, "head_dim", "  ", "head_dim", head_dim);
    to_int(h, "vocab_size", "  ", "vocab", REQ);
}

static void llama_like(hf_t *h, const family_t *f)
{
    gqa_sizes(h, f->kv_heads, f->head_dim);
    silu(h, "hidden_act");
    to_bool(h, "tie_word_embeddings", "  ", "tied_embeddings", 0);
    to_int(h, "rope_theta", "  ", "rope_theta", f->rope_theta);
    to_num(h, "rms_norm_eps", "  ", "norm_eps", f->norm_eps);
    must_bool(h, "mlp_bias", 0, 0, "biases on the MLP");
    must_int(h, "pretraining_tp", 1, "Llama 2's sliced matmuls");
}

/* (a RoPE base of 10000 is Megatron-LM's default too: SAME) */
static const family_t llama = {SAME, SAME, SAME, "1e-06", NULL, 0};
static const family_t mistral = {"8", SAME, SAME, "1e-06", "4096", 1};
static const family_t mixtral = {"8", SAME, "1000000", "1e-05", NULL, 1};
static const family_t qwen2 = {"32", SAME, SAME, "1e-06", NULL, 0};
/* (Qwen3's 32 KV heads and Qwen3-MoE's width of hidden / heads, its class
 * having no head_dim: configuration_qwen3.py and _qwen3_moe.py at
 * transformers 008e574) */
static const family_t qwen3 = {"32", "128", SAME, "1e-06", NULL, 0};
static const family_t qwen3_moe = {"4", SAME, SAME, "1e-06", NULL, 0};

/* sliding_window: null says none, absent is the class's default (a window
 * for Mistral); a window on every layer is arch.window (Mistral 7B v0.1's
 * 4096; v0.3 has none), one on the layers Qwen's use_sliding_window and
 * max_window_layers pick is refused.  layer_types, where given, agree. */
static void sliding_window(hf_t *h, const family_t *f)
{
    json_t *use_sw = field_of(h, "use_sliding_window");
    if (use_sw && json_is_true(use_sw))
        hf_fail(h, "use_sliding_window: a window on the layers max_window_layers picks is not "
                   "described by meshplan's spec");
    json_t *sw = field_of(h, "sliding_window");
    int given = json_object_get(h->root, "sliding_window") != NULL;
    int on = (sw || (!given && f->window)) && !(use_sw && json_is_false(use_sw));
    long long w = 0;
    if (on && !f->windows)
        hf_fail(h, "sliding_window: a window is described for every layer of Mistral's and "
                   "Mixtral's classes only");
    else if (on && !sw)
        emit(h, "sliding_window", "  ", "window", "%s", f->window);
    else if (on && whole(h, "sliding_window", sw, &w) == 0 && w < 1)
        hf_fail(h, "sliding_window: %lld; a window holds 1 token or more", w);
    else if (on)
        emit(h, "sliding_window", "  ", "window", "%lld", w);
    field_of(h, "max_window_layers"); /* read only with use_sliding_window */
    json_t *types = field_of(h, "layer_types"), *t;
    const char *kind = on ? "sliding_attention" : "full_attention";
    size_t i;
    if (types && !json_is_array(types))
        hf_fail(h, "layer_types: expected a list");
    json_array_foreach(types, i, t)
    {
        if (!json_is_string(t) || strcmp(json_string_value(t), kind) != 0) {
            hf_fail(h, "layer_types: layer %zu is not %s, as %s says", i, kind,
                    on ? "sliding_window" : "the absent window");
            break;
        }
    }
}

static void read_llama(hf_t *h, const family_t *f)
{
    llama_like(h, f);
    to_int(h, "intermediate_size", "  ", "ffn", REQ);
    rope_scaling(h, ROPE_LLAMA3);
    must_bool(h, "attention_bias", 0, 0, "biases on the attention projections");
    sliding_window(h, f);
}

static void read_llama_only(hf_t *h)
{
    read_llama(h, &llama);
}

static void read_mistral(hf_t *h)
{
    read_llama(h, &mistral);
}

/* Qwen2: biases on q, k and v (not o), always. */
static void read_qwen2(hf_t *h)
{
    llama_like(h, &qwen2);
    to_int(h, "intermediate_size", "  ", "ffn", REQ);
    emit(h, "model_type", "  ", "qkv_bias", "true");
    rope_scaling(h, ROPE_LLAMA3);
    sliding_window(h, &qwen2);
}

/* Qwen3: heads of head_dim, RMSNorms on each head's queries and keys. */
static void qwen3_like(hf_t *h, const family_t *f)
{
    llama_like(h, f);
    to_int(h, "intermediate_size", "  ", "ffn", REQ);
    emit(h, "model_type", "  ", "qk_norm", "true");
    rope_scaling(h, ROPE_LLAMA3);
    must_bool(h, "attention_bias", 0, 0, "biases on the attention projections");
    sliding_window(h, f);
}

static void read_qwen3(hf_t *h)
{
    qwen3_like(h, &qwen3);
}

/* MixtralConfig's, Qwen3MoeConfig's and GptOssConfig's router_aux_loss_coef,
 * absent (configuration_mixtral.py, _qwen3_moe.py at transformers 008e574;
 * configuration_gpt_oss.py at 02b8f42) */
static const char ROUTER_AUX_LOSS[] = "0.001";

/* Mixtral: every layer's MLP is its experts, of intermediate_size. */
static void read_mixtral(hf_t *h)
{
    llama_like(h, &mixtral);
    to_int(h, "intermediate_size", "  ", "ffn", REQ);
    rope_scaling(h, ROPE_LLAMA3);
    sliding_window(h, &mixtral);
    section(h, "  ", "moe");
    to_int(h, "num_local_experts", "    ", "experts", REQ);
    to_int(h, "num_experts_per_tok", "    ", "top_k", REQ);
    to_int(h, "intermediate_size", "    ", "ffn", REQ);
    to_num(h, "router_aux_loss_coef", "    ", "aux_loss", ROUTER_AUX_LOSS);
    field_of(h, "router_jitter_noise"); /* a training regularizer, no allocation */
    field_of(h, "output_router_logits");
}

/* Qwen3-MoE: every layer sparse (decoder_sparse_step 1, no mlp_only_layers),
 * the top-k probabilities renormalized (Megatron-LM's softmax after the
 * top-k). */
static void read_qwen3_moe(hf_t *h)
{
    qwen3_like(h, &qwen3_moe);
    must_int(h, "decoder_sparse_step", 1, "MoE layers only every few layers");
    json_t *dense = field_of(h, "mlp_only_layers");
    if (dense && (!json_is_array(dense) || json_array_size(dense) > 0))
        hf_fail(h, "mlp_only_layers: dense layers among the MoE ones are not described");
    must_bool(h, "norm_topk_prob", 1, 0, "top-k probabilities left unnormalized");
    section(h, "  ", "moe");
    to_int(h, "num_experts", "    ", "experts", REQ);
    to_int(h, "num_experts_per_tok", "    ", "top_k", REQ);
    to_int(h, "moe_intermediate_size", "    ", "ffn", REQ);
    to_num(h, "router_aux_loss_coef", "    ", "aux_loss", ROUTER_AUX_LOSS);
    field_of(h, "output_router_logits");
}

/* DeepSeek-V3: MLA, the first layers dense, routed and shared experts,
 * group-limited sigmoid routing with a score-correction bias, MTP. */
static void read_deepseek_v3(hf_t *h)
{
    section(h, "", "arch");
    to_int(h, "num_hidden_layers", "  ", "layers", REQ);
    to_int(h, "hidden_size", "  ", "hidden", REQ);
    to_int(h, "num_attention_heads", "  ", "heads", REQ);
    field_of(h, "num_key_value_heads"); /* MLA: every head its own */
    to_int(h, "intermediate_size", "  ", "ffn", REQ);
    to_int(h, "vocab_size", "  ", "vocab", REQ);
    silu(h, "hidden_act");
    to_bool(h, "tie_word_embeddings", "  ", "tied_embeddings", 0);
    to_int(h, "rope_theta", "  ", "rope_theta", SAME);
    to_num(h, "rms_norm_eps", "  ", "norm_eps", "1e-06");
    to_int(h, "num_nextn_predict_layers", "  ", "mtp_layers", REQ);
    rope_scaling(h, ROPE_MLA_YARN);
    must_bool(h, "attention_bias", 0, 0, "biases on the attention projections");
    must_int(h, "moe_layer_freq", 1, "MoE layers only every few layers");
    must_int(h, "ep_size", 1, "an expert-parallel size fixed in the model");
    /* DeepseekV3Config takes it too, and Kimi K2's files write it */
    must_int(h, "pretraining_tp", 1, "matmuls sliced as in Llama 2's pretraining");
    json_t *method = field_of(h, "topk_method");
    json_t *score = field_of(h, "scoring_func");
    section(h, "  ", "moe");
    to_int(h, "n_routed_experts", "    ", "experts", REQ);
    to_int(h, "num_experts_per_tok", "    ", "top_k", REQ);
    to_int(h, "moe_intermediate_size", "    ", "ffn", REQ);
    to_int(h, "n_shared_experts", "    ", "shared_experts", REQ);
    to_int(h, "first_k_dense_replace", "    ", "dense_layers", REQ);
    /* the words the spec takes, never the file's text, into the document */
    const char *sc = json_is_string(score) ? json_string_value(score) : "";
    if (!score)
        hf_fail(h, "scoring_func is missing (meshplan needs it as score)");
    else if (strcmp(sc, "sigmoid") == 0 || strcmp(sc, "softmax") == 0)
        emit(h, "scoring_func", "    ", "score", "%s", sc[1] == 'i' ? "sigmoid" : "softmax");
    else
        hf_fail(h, "scoring_func: only softmax or sigmoid is described");
    const char *tm = json_is_string(method) ? json_string_value(method) : "";
    if (!method)
        hf_fail(h, "topk_method is missing (greedy or noaux_tc)");
    else if (strcmp(tm, "noaux_tc") == 0)
        emit(h, "topk_method", "    ", "expert_bias", "true");
    else if (strcmp(tm, "greedy") != 0)
        hf_fail(h, "topk_method: only greedy or noaux_tc is described");
    to_int(h, "n_group", "    ", "groups", REQ);
    to_int(h, "topk_group", "    ", "group_top_k", REQ);
    to_num(h, "routed_scaling_factor", "    ", "routed_scaling", REQ);
    to_num(h, "aux_loss_alpha", "    ", "aux_loss", SAME);
    field_of(h, "seq_aux"); /* the aux loss per sequence: a training choice */
    must_bool(h, "norm_topk_prob", 1, 1, "top-k probabilities left unnormalized");
    section(h, "  ", "mla");
    /* null: queries not compressed (DeepSeek-V2-Lite); absent: no default */
    if (json_object_get(h->root, "q_lora_rank") && !field_of(h, "q_lora_rank"))
        emit(h, "q_lora_rank", "    ", "q_lora_rank", "0");
    else
        to_int(h, "q_lora_rank", "    ", "q_lora_rank", REQ);
    to_int(h, "kv_lora_rank", "    ", "kv_lora_rank", REQ);
    to_int(h, "qk_nope_head_dim", "    ", "qk_head_dim", REQ);
    to_int(h, "qk_rope_head_dim", "    ", "qk_rope_head_dim", REQ);
    to_int(h, "v_head_dim", "    ", "v_head_dim", REQ);
    json_t *r = field_of(h, "rope_scaling");
    json_t *ms = json_is_object(r) ? json_object_get(r, "mscale_all_dim") : NULL;
    if (ms && (!json_is_number(ms) || json_number_value(ms) < 0))
        hf_fail(h, "rope_scaling.mscale_all_dim: expected a number, 0 or more");
    else if (ms && json_number_value(ms) > 0)
        emit(h, "rope_scaling", "    ", "mscale_all_dim", "%.17g", json_number_value(ms));
}

/* Nemotron-4 (configuration_nemotron.py, modeling_nemotron.py): squared
 * ReLU, LayerNorm1P (zero-centred, with a bias), no biases on the linear
 * layers, rotary positions over partial_rotary_factor of each head (0.5
 * by default); the other defaults are Megatron-LM's own (KV heads = heads,
 * RoPE base 10000, epsilon 1e-5). */
static void read_nemotron(hf_t *h)
{
    gqa_sizes(h, SAME, SAME);
    to_int(h, "intermediate_size", "  ", "ffn", REQ);
    activation(h, "hidden_act", "relu2", "relu2", "squared ReLU");
    to_bool(h, "tie_word_embeddings", "  ", "tied_embeddings", 0);
    to_int(h, "rope_theta", "  ", "rope_theta", SAME);
    to_num(h, "partial_rotary_factor", "  ", "rotary_percent", "0.5");
    to_num(h, "norm_eps", "  ", "norm_eps", SAME);
    rope_scaling(h, ROPE_LLAMA3);
    must_bool(h, "attention_bias", 0, 0, "biases on the attention projections");
    must_bool(h, "mlp_bias", 0, 0, "biases on the MLP");
}

/* GPT-OSS's layer_types as the spec's window keys: the layers whose
 * number (from 1) is a multiple of N attend to the whole sequence, the
 * others to the last sliding_window tokens (GptOssConfig's default is N =
 * 2, sliding first: a model of one layer slides alone); all sliding has
 * no N, all full no window. */
static void window_layers(hf_t *h, long long layers)
{
    json_t *types = field_of(h, "layer_types"), *t;
    json_t *sw = field_of(h, "sliding_window");
    long long every = layers >= 2 ? 2 : 0, full = 0;
    long long n = types ? (long long)json_array_size(types) : layers;
    size_t i;
    if (types && (!json_is_array(types) || n != layers)) {
        hf_fail(h, "layer_types: expected a list of num_hidden_layers (%lld) names", layers);
        return;
    }
    json_array_foreach(types, i, t)
    {
        const char *name = json_is_string(t) ? json_string_value(t) : "";
        int is_full = strcmp(name, "full_attention") == 0;
        if (!is_full && strcmp(name, "sliding_attention") != 0) {
            hf_fail(h,
                    "layer_types: layer %zu is '%.40s', not full_attention or "
                    "sliding_attention",
                    i, name);
            return;
        }
        if (is_full && !full)
            every = (long long)i + 1;
        full += is_full;
        if (full && is_full != ((long long)(i + 1) % every == 0)) {
            hf_fail(h,
                    "layer_types: full_attention every %lld layers does not hold at layer %zu: "
                    "only a regular pattern is described",
                    every, i);
            return;
        }
    }
    if (types && !full)
        every = 0;
    if (types && full == n)
        return; /* no layer slides: no window */
    long long w = 128;
    if (json_object_get(h->root, "sliding_window") && !sw)
        hf_fail(h, "sliding_window: null, but layers are sliding_attention: give the window");
    else if (sw && whole(h, "sliding_window", sw, &w) == 0 && w < 1)
        hf_fail(h, "sliding_window: %lld; a window holds 1 token or more", w);
    emit(h, "sliding_window", "  ", "window", "%lld", w);
    if (every)
        emit(h, "layer_types", "  ", "full_attention_every", "%lld", every);
}

/* GPT-OSS's YaRN: rope_scaling's, or absent (or null) its class's:
 * factor 32, truncate false (configuration_gpt_oss.py). */
static void gpt_oss_rope(hf_t *h)
{
    if (field_of(h, "rope_scaling")) {
        rope_scaling(h, ROPE_YARN);
        return;
    }
    emit(h, "rope_scaling", "  ", "rope_scaling", "32");
    emit(h, "rope_scaling", "  ", "rope_type", "yarn");
    emit(h, "rope_scaling", "  ", "yarn_truncate", "false");
}

/* GPT-OSS's experts: num_experts_per_tok, or the files' older
 * experts_per_token, which must agree where both are; the class's router
 * coefficient where the file has none. */
static void gpt_oss_experts(hf_t *h)
{
    json_t *k = field_of(h, "num_experts_per_tok"), *legacy = field_of(h, "experts_per_token");
    if (k && legacy && !json_equal(k, legacy))
        hf_fail(h, "experts_per_token: differs from num_experts_per_tok");
    section(h, "  ", "moe");
    to_int(h, "num_local_experts", "    ", "experts", "128");
    to_int(h, k || !legacy ? "num_experts_per_tok" : "experts_per_token", "    ", "top_k", "4");
    to_int(h, "intermediate_size", "    ", "ffn", "2880");
    to_num(h, "router_aux_loss_coef", "    ", "aux_loss", ROUTER_AUX_LOSS);
    field_of(h, "output_router_logits");
}

/* GPT-OSS (configuration_gpt_oss.py, modeling_gpt_oss.py): every layer a
 * mixture of experts whose gated quick GeLU (gate * sigmoid(1.702 gate),
 * times up + 1, both clamped at swiglu_limit) is Megatron-LM's quick_gelu
 * (fused_bias_geglu.py L185-187 at d98e8a6), biases everywhere, a sink a
 * head, alternating sliding windows, YaRN.  Absent fields are the class's
 * defaults; a null head_dim is hidden / heads, as the class makes it. */
static void read_gpt_oss(hf_t *h)
{
    json_t *hd = json_object_get(h->root, "head_dim");
    gqa_sizes(h, "8", hd && json_is_null(hd) ? SAME : "64");
    to_int(h, "intermediate_size", "  ", "ffn", "2880");
    activation(h, "hidden_act", "silu", "quick_geglu", "GPT-OSS's gated quick GeLU");
    json_t *alpha = field_of(h, "swiglu_alpha");
    if (alpha && (!json_is_number(alpha) || json_number_value(alpha) != 1.702))
        hf_fail(h, "swiglu_alpha: Megatron-LM's quick GeLU fixes it at 1.702, so only 1.702 is "
                   "described");
    to_num(h, "swiglu_limit", "  ", "activation_clamp", "7");
    to_bool(h, "tie_word_embeddings", "  ", "tied_embeddings", 0);
    to_int(h, "rope_theta", "  ", "rope_theta", "150000");
    to_num(h, "rms_norm_eps", "  ", "norm_eps", "1e-05");
    must_bool(h, "attention_bias", 1, 1, "attention projections without biases");
    emit(h, "model_type", "  ", "attention_sinks", "true");
    gpt_oss_rope(h);
    field_of(h, "initial_context_length"); /* YaRN's original context, rope_scaling's */
    json_t *layers = field_of(h, "num_hidden_layers");
    long long n = 0;
    if (layers && !h->failed && whole(h, "num_hidden_layers", layers, &n) == 0)
        window_layers(h, n);
    gpt_oss_experts(h);
}

/* Llama 4's unrotated layers: no_rope_layers (1 rotary, 0 not), or, where
 * it is absent or empty, every no_rope_layer_interval-th layer (4), as its
 * class fills it in (configuration_llama4.py); only a regular pattern is
 * described, as arch.nope_every.  layer_types, where given, agree: chunked
 * attention on the rotary layers, full on the others. */
static void llama4_nope(hf_t *h, long long layers)
{
    json_t *list = field_of(h, "no_rope_layers"), *iv = field_of(h, "no_rope_layer_interval");
    json_t *v, *types = field_of(h, "layer_types");
    long long every = 4;
    size_t i;
    if (iv && whole(h, "no_rope_layer_interval", iv, &every) == 0 && every < 1)
        hf_fail(h, "no_rope_layer_interval: %lld; give 1 or more", every);
    if (list && (!json_is_array(list) ||
                 (json_array_size(list) && (long long)json_array_size(list) != layers))) {
        hf_fail(h, "no_rope_layers: expected a list of num_hidden_layers (%lld) 0s and 1s", layers);
        return;
    }
    if (list && json_array_size(list))
        every = 0;
    else if (every > layers) /* the interval leaves every layer rotary */
        every = 0;
    json_array_foreach(list, i, v)
    {
        long long k = json_is_integer(v) ? json_integer_value(v) : -1;
        if (k != 0 && k != 1) {
            hf_fail(h, "no_rope_layers: layer %zu is not 0 or 1", i);
            return;
        }
        if (!k && !every)
            every = (long long)i + 1;
        if (every && !k != ((long long)(i + 1) % every == 0)) {
            hf_fail(h,
                    "no_rope_layers: an unrotated layer every %lld does not hold at layer %zu: "
                    "only a regular pattern is described",
                    every, i);
            return;
        }
    }
    if (types && (!json_is_array(types) || (long long)json_array_size(types) != layers))
        hf_fail(h, "layer_types: expected a list of num_hidden_layers (%lld) names", layers);
    json_array_foreach(types, i, v)
    {
        int nope = every && (long long)(i + 1) % every == 0;
        const char *want = nope ? "full_attention" : "chunked_attention";
        if (!json_is_string(v) || strcmp(json_string_value(v), want) != 0) {
            hf_fail(h, "layer_types: layer %zu is not %s, as no_rope_layers says", i, want);
            return;
        }
    }
    if (every)
        emit(h, list && json_array_size(list) ? "no_rope_layers" : "no_rope_layer_interval", "  ",
             "nope_every", "%lld", every);
}

/* Llama 4's text model (transformers' Llama4TextConfig, configuration_
 * llama4.py, and modeling_llama4.py's Llama4TextMoe): MoE on every
 * interleave_moe_layer_step-th layer (Scout's 1: all; Maverick's 2: layers
 * 1, 3, ...), routed experts and one shared expert of intermediate_size,
 * top num_experts_per_tok scored by a sigmoid that scales the expert's
 * input, the other layers' dense MLP intermediate_size_mlp; its QK norm
 * without weights (use_qk_norm), its rotation on adjacent pairs (a complex
 * product), Llama 3.1's RoPE scaling.  attention_chunk_size and the
 * temperature tuning (attn_temperature_tuning, floor_scale, attn_scale) are
 * read and not described: they change nothing in sequences shorter than
 * the chunk and floor_scale (8192), and Megatron-LM builds neither. */
static void read_llama4_text(hf_t *h)
{
    static const family_t llama4 = {"8", "128", "500000", "1e-05", NULL, 0};
    llama_like(h, &llama4);
    to_int(h, "intermediate_size_mlp", "  ", "ffn", "16384");
    rope_scaling(h, ROPE_LLAMA3);
    must_bool(h, "attention_bias", 0, 0, "biases on the attention projections");
    to_bool(h, "use_qk_norm", "  ", "qk_l2_norm", 1);
    emit(h, "model_type", "  ", "rotary_interleaved", "true");
    json_t *layers = field_of(h, "num_hidden_layers"), *moe = field_of(h, "moe_layers"), *v;
    long long n = 0;
    if (layers && !h->failed && whole(h, "num_hidden_layers", layers, &n) == 0)
        llama4_nope(h, n);
    json_t *step = field_of(h, "interleave_moe_layer_step");
    long long every = 1;
    if (step && whole(h, "interleave_moe_layer_step", step, &every) == 0 && every < 1)
        hf_fail(h, "interleave_moe_layer_step: %lld; give 1 or more", every);
    /* moe_layers, where given, is the interleaving's: layers every-1,
     * 2 every-1, ..., as the class fills it in (arch.moe.every) */
    size_t i;
    int regular =
        !moe || (json_is_array(moe) && every >= 1 && (long long)json_array_size(moe) == n / every);
    json_array_foreach(moe, i, v)
    {
        regular &= json_is_integer(v) && json_integer_value(v) == (long long)(i + 1) * every - 1;
    }
    if (!regular && !h->failed)
        hf_fail(h,
                "moe_layers: not the layers interleave_moe_layer_step %lld gives (%lld, %lld, "
                "...): MoE on other layers is not described",
                every, every - 1, 2 * every - 1);
    static const char *const unbuilt[] = {
        "attention_chunk_size", "attn_temperature_tuning", "floor_scale",       "attn_scale",
        "router_jitter_noise",  "output_router_logits",    "for_llm_compressor"};
    for (i = 0; i < MESH_ARRAY_LEN(unbuilt); i++)
        field_of(h, unbuilt[i]);
    section(h, "  ", "moe");
    to_int(h, "num_local_experts", "    ", "experts", "16");
    to_int(h, "num_experts_per_tok", "    ", "top_k", "1");
    to_int(h, "intermediate_size", "    ", "ffn", "8192");
    if (every > 1)
        emit(h, "interleave_moe_layer_step", "    ", "every", "%lld", every);
    emit(h, "model_type", "    ", "shared_experts", "1");
    emit(h, "model_type", "    ", "score", "sigmoid");
    emit(h, "model_type", "    ", "probs_on_input", "true");
    to_num(h, "router_aux_loss_coef", "    ", "aux_loss", ROUTER_AUX_LOSS);
}

static void no_unknown_field(hf_t *h);

/* Llama 4 as Meta published it (Llama4ForConditionalGeneration): its text
 * model in text_config, read as above; the vision encoder (vision_config)
 * and the image tokens are left out, the spec describing a text model. */
static void read_llama4(hf_t *h)
{
    json_t *text = field_of(h, "text_config");
    static const char *const vision[] = {"vision_config", "image_token_index", "boi_token_index",
                                         "eoi_token_index", "tie_word_embeddings"};
    for (size_t i = 0; i < MESH_ARRAY_LEN(vision); i++)
        field_of(h, vision[i]);
    if (!text || !json_is_object(text)) {
        hf_fail(h, "text_config: expected the text model's object, not %s",
                text ? type_name(text) : "nothing");
        return;
    }
    no_unknown_field(h);
    h->root = text;
    h->n_used = 0;
    h->prefix = "text_config.";
    read_llama4_text(h);
}

static const struct architecture {
    const char *name, *model_type;
    void (*read)(hf_t *); /* failures: hf_t.failed */
} architectures[] = {
    {"LlamaForCausalLM", "llama", read_llama_only},
    {"MistralForCausalLM", "mistral", read_mistral},
    {"MixtralForCausalLM", "mixtral", read_mixtral},
    {"Qwen2ForCausalLM", "qwen2", read_qwen2},
    {"Qwen3ForCausalLM", "qwen3", read_qwen3},
    {"Qwen3MoeForCausalLM", "qwen3_moe", read_qwen3_moe},
    {"DeepseekV3ForCausalLM", "deepseek_v3", read_deepseek_v3},
    /* Moonshot's Kimi K2 (moonshotai/Kimi-K2-Base config.json): DeepSeek-V3's
     * class under a type of its own */
    {"DeepseekV3ForCausalLM", "kimi_k2", read_deepseek_v3},
    {"NemotronForCausalLM", "nemotron", read_nemotron},
    {"GptOssForCausalLM", "gpt_oss", read_gpt_oss},
    {"Llama4ForConditionalGeneration", "llama4", read_llama4},
    {"Llama4ForCausalLM", "llama4_text", read_llama4_text},
};

/* Fields every config may hold that change nothing meshplan prices or
 * Megatron-LM builds: token ids, the dtype the weights were saved in,
 * inference settings, the library's bookkeeping. */
static const char *const harmless[] = {
    "architectures",        "model_type",     "_name_or_path",
    "transformers_version", "torch_dtype",    "dtype",
    "bos_token_id",         "eos_token_id",   "pad_token_id",
    "initializer_range",    "use_cache",      "max_position_embeddings",
    "attention_dropout",    "hidden_dropout", "auto_map",
    "quantization_config",  "head_dim",
};

/* For an error, into out[len], comma separated and each once: the
 * architectures meshplan reads (types 0) or their model types (types 1),
 * of every class or of class `of` alone. */
static void names_of(const char *of, int types, char *out, size_t len)
{
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; i < MESH_ARRAY_LEN(architectures); i++) {
        const char *name = types ? architectures[i].model_type : architectures[i].name;
        int skip = of && strcmp(architectures[i].name, of) != 0;
        for (size_t j = 0; j < i && !skip; j++) /* one class under several types */
            skip = strcmp(name, types ? architectures[j].model_type : architectures[j].name) == 0;
        if (!skip && n < len)
            n += (size_t)snprintf(out + n, len - n, "%s%s", n ? ", " : "", name);
    }
}

/* The architecture the file names, in `architectures` and `model_type`. */
static const struct architecture *architecture_of(hf_t *h)
{
    json_t *list = field_of(h, "architectures"), *type = field_of(h, "model_type");
    const char *name = NULL;
    if (list && json_is_array(list) && json_array_size(list) == 1 &&
        json_is_string(json_array_get(list, 0)))
        name = json_string_value(json_array_get(list, 0));
    else if (list)
        return hf_fail(h, "architectures: expected a list of one name"), NULL;
    if (type && !json_is_string(type))
        return hf_fail(h, "model_type: expected a string, not %s", type_name(type)), NULL;
    const char *t = type ? json_string_value(type) : NULL;
    if (!name && !t)
        return hf_fail(h, "architectures and model_type are missing: not a Hugging Face "
                          "config.json of a model"),
               NULL;
    int named = 0; /* the class is one meshplan reads, under some type */
    for (size_t i = 0; i < MESH_ARRAY_LEN(architectures); i++) {
        int same = !name || strcmp(name, architectures[i].name) == 0;
        named |= same && name;
        if (same && (!t || strcmp(t, architectures[i].model_type) == 0))
            return &architectures[i];
    }
    char known[512];
    names_of(named ? name : NULL, !name || named, known, sizeof(known));
    if (named)
        return hf_fail(h,
                       "model_type '%.64s' is not one meshplan reads as %s (%s): give one of "
                       "them, or describe the model in a spec file",
                       t, name, known),
               NULL;
    return hf_fail(h,
                   "%s '%.64s' is not one meshplan reads (%s): describe the model in a spec file",
                   name ? "architectures" : "model_type", name ? name : t, known),
           NULL;
}

/* Every field of the file was read or is harmless. */
static void no_unknown_field(hf_t *h)
{
    const char *k;
    json_t *v;
    json_object_foreach(h->root, k, v)
    {
        int known = 0;
        for (int i = 0; i < h->n_used && !known; i++)
            known = strcmp(h->used[i], k) == 0;
        for (size_t i = 0; i < MESH_ARRAY_LEN(harmless) && !known; i++)
            known = strcmp(harmless[i], k) == 0;
        if (!known) {
            hf_fail(h,
                    "%.64s: not a field meshplan reads for this architecture, so it may change "
                    "the model unseen: remove it, or describe the model in a spec file",
                    k);
            return;
        }
    }
}

int mesh_hf_config_spec(const char *buf, size_t len, const char *origin, const char *name,
                        mesh_buf_t *doc, const char **line_field, int *lines, mesh_error_t *err)
{
    json_error_t jerr;
    json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return mesh_error_set(err, "%s:%d: not valid JSON: %s", origin, jerr.line, jerr.text);
    hf_t h = {.root = root, .origin = origin, .prefix = "", .doc = doc, .err = err};
    if (!json_is_object(root))
        hf_fail(&h, "expected a JSON object (a model's config.json), not %s", type_name(root));
    const struct architecture *a = h.failed ? NULL : architecture_of(&h);
    if (a) {
        emit(&h, NULL, "", "name", "%s", name);
        a->read(&h);
        no_unknown_field(&h);
    }
    json_decref(root);
    if (h.failed)
        return -1;
    if (doc->failed)
        return mesh_error_set(err, "%s: out of memory", origin);
    for (int i = 0; i < h.lines; i++)
        line_field[i] = h.line_field[i];
    *lines = h.lines;
    return 0;
}
