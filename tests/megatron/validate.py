#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Megatron-LM's own argument validation on every plan meshplan exports.

For each case (a preset, an allocation, pins) this asks `meshplan env
--json --export torch` for the environment of the job's first and last
task, exactly as the plugin exports it, and runs Megatron-LM's real
megatron.training.arguments.parse_args() and validate_args() on that task's
MESH_MEGATRON_ARGS with os.environ set to that environment and nothing else.
Megatron-LM is the copy in ../shared/megatron, at the commit meshplan cites
(d98e8a6); nothing of it is changed.

Usage: validate.py --meshplan BIN --megatron DIR --policy FILE [--models-dir DIR]
Prints CMocka-style result lines (tests/cmocka.sh's format) that run-all adds
up; exits non-zero when a case fails.

What stands in for the machine (Debian 12's python3-torch is torch 1.13 on
Python 3.11, CPU only; Megatron-LM targets torch 2.x and Python 3.12):
- STUB_MODULES: modules of torch 2.x, triton and numpy 2 that Megatron-LM
  imports at module level for training, checkpointing or kernels but that
  the argument code never calls.  torch 1.13's torch.distributed._shard is
  among them: it exists but fails to import on Python 3.11 (a dataclass with
  a mutable default).  Each is an empty module whose attributes are inert
  placeholder classes.
- STUB_ATTRS: names of torch 2.x used at import time as types or dtypes in
  annotations and tables (placeholder classes), and three decorators made
  the identity (torch.compile and typing.override are absent; torch.jit.script
  of 1.13 cannot compile Megatron's norm methods): the functions stay plain
  Python, and validation calls none of them.
- torch's version, asked by is_torch_min_version(): answered as the
  highest that a row of lib/overlap.c requires (TORCH_AT_LEAST, 2.6 for
  the expert all-to-all overlap): the site's stack must meet the table.
- Transformer Engine: TransformerConfig, built for the published-model
  check, asks TE's version (FP8 MoE and grouped GEMM need a recent one) and
  whether TE's fused RoPE kernel exists: answered as a TE 2.8 install has
  them (TE_VERSION); no TE code runs.
- The device: validate_args() asks the GPU for its architecture
  (get_device_arch_version() reads get_device_properties().major, and the
  FP8/FP4 checks get_device_capability()); both answer with the target GPU's
  compute capability (V100 7.0, A100 8.0, H100 9.0, B200 10.0).
"""
import argparse
import contextlib
import importlib
import importlib.abc
import importlib.machinery
import io
import json
import os
import re
import shlex
import subprocess
import sys
import traceback
import types

STUB_MODULES = [
    "torch.distributed.checkpoint",  # torch 2.x distributed checkpointing
    "torch.distributed._shard",  # fails to import on Python 3.11 (above)
    "torch.distributed.tensor",  # DTensor, torch >= 2.4 (Megatron-FSDP)
    "torch.distributed._tensor",  # DTensor's old name
    "torch.distributed.device_mesh",  # torch >= 2.2 (Megatron-FSDP)
    "torch.distributed._symmetric_memory",  # torch >= 2.5 (FSDP buffers)
    "triton",  # GPU kernels (MoE paged stash, Mamba); __version__ is asked
    "numpy.dtypes",  # numpy >= 1.25 (checkpoint safe globals)
]
STUB_ATTRS = [
    "torch.float8_e8m0fnu",  # a dtype of torch >= 2.7 (MXFP8 scales table)
    "torch.distributed.DeviceMesh",  # torch >= 2.2 (annotations)
    "torch.distributed._coalescing_manager",  # torch >= 2.0 (grad buffers)
    "torch.cuda.memory.CUDAPluggableAllocator",  # torch >= 2.0 (inference)
    "torch.cuda.MemPool",  # torch >= 2.5 (annotations)
    "torch.optim.optimizer.ParamsT",  # torch >= 2.2 (annotations)
]
IDENTITY_DECORATORS = ["torch.compile", "torch.jit.script", "typing.override"]
TE_VERSION = "2.8.0"  # the Transformer Engine version TransformerConfig is told
OVERLAPS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib", "overlap.c")


def torch_required(path=OVERLAPS):
    """The torch version Megatron-LM's is_torch_min_version() is told: the
    highest that a row of the overlap table requires (its `requires`,
    written TORCH_AT_LEAST("X.Y.Z")), so that the table stays the one place
    that says it; Debian's torch is 1.13."""
    with open(path, encoding="utf-8") as f:
        found = re.findall(r'TORCH_AT_LEAST\("([0-9.]+)"\)', f.read())
    if not found:
        sys.exit(f"validate.py: no TORCH_AT_LEAST(\"X.Y.Z\") requirement in {path}")
    return max(found, key=lambda v: tuple(int(x) for x in v.split(".")))


# compute capability (major, minor) of each GPU the cases use
ARCH = {"V100-32GB": (7, 0), "A100-80GB": (8, 0), "H100-SXM": (9, 0), "B200": (10, 0)}


class Placeholder:
    """Inert: any call, attribute or subclass works and does nothing."""

    def __init__(self, *a, **k):
        pass

    def __call__(self, *a, **k):
        return Placeholder()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Placeholder()


def placeholder_class(name):
    return type(name, (Placeholder,), {})


class StubModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return placeholder_class(name)


class StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if any(name == s or name.startswith(s + ".") for s in STUB_MODULES):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        return StubModule(spec.name)

    def exec_module(self, module):
        module.__path__ = []
        module.__version__ = "3.0.0"


def install_stubs(arch):
    sys.meta_path.insert(0, StubFinder())
    for dotted in STUB_ATTRS + IDENTITY_DECORATORS:
        owner, _, name = dotted.rpartition(".")
        mod = importlib.import_module(owner)
        if dotted in IDENTITY_DECORATORS:
            setattr(mod, name, lambda f=None, *a, **k: f if f is not None else (lambda g: g))
        elif not hasattr(mod, name):
            setattr(mod, name, placeholder_class(name))
    import torch

    torch.cuda.get_device_capability = lambda *a, **k: arch["cc"]
    torch.cuda.get_device_properties = lambda *a, **k: types.SimpleNamespace(
        major=arch["cc"][0], minor=arch["cc"][1], name=arch["gpu"])


# ---- the cases --------------------------------------------------------------
# Per preset: node counts around its natural size (8 GPUs a node).  Every case
# is tried on H100 and the variants below; A100, B200 and (in fp16) V100 on
# the middle count.
PRESETS = {
    "llama2-7b": [1, 2, 4],
    "llama2-13b": [1, 4],
    "llama2-70b": [4, 16],
    "llama3-8b": [1, 2, 8],
    "llama3-70b": [4, 8, 16],
    "llama3.1-405b": [16, 64, 256],
    "gpt3-175b": [16, 64],
    "mixtral-8x7b": [1, 4],
    "mixtral-8x22b": [8, 32],
    "qwen3-30b-a3b": [1, 4],
    "qwen3-235b-a22b": [16, 32],
    "deepseek-v3": [64, 128, 256],
    "kimi-k2": [64],  # DeepSeek-V3 covers MLA and the router at three counts
    "nemotron4-15b": [2, 8],
    "nemotron4-340b": [32, 64],
    "gpt-oss-20b": [1, 2],
    "gpt-oss-120b": [8],
    "grok-1": [32, 64],
    "llama4-scout": [4, 16],
    "llama4-maverick": [16],  # Scout covers the Llama 4 keys at two counts
}
# Specs of this directory no preset stands for, checked like the presets:
# their TransformerConfig is built on every plan (no published model to
# compare it with).
SPECS = {
    "gelu-moe": os.path.join(os.path.dirname(os.path.abspath(__file__)), "gelu-moe.yaml"),
}
SPEC_NODES = [1, 2]
# the params-only preset has no architecture: Megatron-LM cannot build it
# (meshplan plans it as DP/ZeRO only and exports no model flags)
NOT_MEGATRON = {"params-only": "a parameter count only: no --num-layers for Megatron-LM"}

VARIANTS = [
    ("auto", []),
    ("megatron", ["--set", "train.framework=megatron"]),
    ("fp8", ["--set", "train.precision=fp8"]),
    ("zero0", ["--mesh", "zero=0"]),
    ("zero2", ["--mesh", "zero=2"]),
    ("zero3", ["--mesh", "zero=3"]),
    ("zero3-megatron", ["--mesh", "zero=3", "--set", "train.framework=megatron"]),
    ("vpp2", ["--mesh", "vpp=2"]),
    ("cp2", ["--mesh", "cp=2"]),
    ("selective", ["--mesh", "recompute=selective"]),
    # what the planner chooses under FP8 where the MLP alone does not fit
    ("fp8-core-mlp", ["--set", "train.precision=fp8", "--mesh", "recompute=selective:core_attn+mlp"]),
    ("full", ["--mesh", "recompute=full"]),
    ("offload", ["--mesh", "offload=optimizer", "--host-mem", "2TiB"]),
    ("bf16-moments", ["--mesh", "moments=bf16"]),
    # 2-byte gradients: the precision-aware optimizer's main grads from
    # ZeRO-1 on, --grad-reduce-in-bf16 without it
    ("bf16-grads", ["--set", "train.grad_accum_dtype=bf16"]),
    ("bf16-grads-zero0", ["--set", "train.grad_accum_dtype=bf16", "--mesh", "zero=0"]),
]
MOE_VARIANTS = [
    ("ep-fit", ["--mesh", "etp=1"]),
    ("etp2", ["--mesh", "etp=2"]),
    # the flex dispatcher on DeepEP (lib/overlap.c), where the plan runs it
    ("deepep", ["--set", "train.dispatcher=deepep"]),
    ("deepep-etp2", ["--set", "train.dispatcher=deepep", "--mesh", "etp=2"]),
]

# latent attention's up projections recomputed (a model with MLA: the
# planner's choice for DeepSeek-V3 where the MLP alone does not fit, and
# what NVIDIA's recipes for it recompute)
MLA_VARIANTS = [
    ("mla-up-mlp", ["--mesh", "recompute=selective:mla_up_proj+mlp"]),
    ("fp8-core-mlp-mla-up", ["--set", "train.precision=fp8",
                             "--mesh", "recompute=selective:core_attn+mlp+mla_up_proj"]),
]


# ---- the models as published ----------------------------------------------
# Each preset's architecture as its authors published it (the Hugging Face
# config.json of meta-llama/Llama-2-*-hf, Meta-Llama-3-*, Llama-3.1-405B,
# mistralai/Mixtral-8x7B-v0.1 and 8x22B-v0.1, Qwen/Qwen3-30B-A3B and
# 235B-A22B, deepseek-ai/DeepSeek-V3, moonshotai/Kimi-K2-Base; GPT-3 from Brown et al. 2020, Table 2.1,
# with GPT-2's vocabulary and LayerNorm epsilon), written in Megatron-Core's
# TransformerConfig terms (or the parsed arguments' where the config has no
# such field).  Nemotron-4 (Parmar et al. 2024; the 340B report; transformers'
# NemotronConfig defaults: relu2, partial_rotary_factor 0.5, LayerNorm1P, no
# biases) as NeMo's own Nemotron-4 configuration builds it in Megatron-Core.  The check builds Megatron-LM's own TransformerConfig from
# each preset's exported arguments and compares every field.
LLAMA = dict(normalization="RMSNorm", gated_linear_unit=True, add_bias_linear=False,
             position_embedding_type="rope", untie_embeddings_and_output_weights=True,
             qk_layernorm=False, use_rope_scaling=False, num_moe_experts=None,
             qk_l2_norm=False, rotary_interleaved=False, no_rope_freq=None)


def llama(layers, hidden, ffn, heads, kv, vocab, theta, eps=1e-5, **more):
    return dict(LLAMA, num_layers=layers, hidden_size=hidden, ffn_hidden_size=ffn,
                num_attention_heads=heads, num_query_groups=kv, kv_channels=hidden // heads,
                vocab=vocab, rotary_base=theta, layernorm_epsilon=eps, **more)


def moe(experts, top_k, ffn, **more):
    return dict(num_moe_experts=experts, moe_router_topk=top_k, moe_ffn_hidden_size=ffn,
                moe_router_score_function="softmax", moe_router_enable_expert_bias=False,
                moe_router_num_groups=None, moe_router_group_topk=None,
                moe_shared_expert_intermediate_size=None, moe_apply_probs_on_input=False,
                **more)


def nemotron4(layers, hidden, ffn, heads):
    return dict(num_layers=layers, hidden_size=hidden, ffn_hidden_size=ffn,
                num_attention_heads=heads, num_query_groups=8, kv_channels=hidden // heads,
                normalization="LayerNorm", layernorm_zero_centered_gamma=True,
                layernorm_epsilon=1e-5, gated_linear_unit=False, add_bias_linear=False,
                activation_func="squared_relu", bias_activation_fusion=False,
                position_embedding_type="rope", rotary_percent=0.5, rotary_base=10000,
                untie_embeddings_and_output_weights=True, vocab=256000, num_moe_experts=None)


# openai/gpt-oss-*: quick GeGLU times (up + 1), clamped at swiglu_limit 7; a
# sink a head; sliding_window 128 (HF's window counts the query: Megatron-LM's
# (127, 0)) on the odd layers (layer_types starts sliding); biases on every
# linear layer and the router; YaRN, rope_scaling {factor 32,
# original_max_position_embeddings 4096, beta_fast 32, beta_slow 1, truncate
# false}, whose attention scale with no mscale given is Megatron-LM's default
# (mscale 1, mscale_all_dim 0)
def gpt_oss(layers, experts):
    return dict(num_layers=layers, hidden_size=2880, num_attention_heads=64, num_query_groups=8,
                kv_channels=64, normalization="RMSNorm", layernorm_epsilon=1e-5,
                gated_linear_unit=True, add_bias_linear=True, activation_func="quick_gelu",
                glu_linear_offset=1.0, activation_func_clamp_value=7.0, softmax_type="learnable",
                window_size=(127, 0), window_attn_skip_freq=2, position_embedding_type="yarn",
                rotary_base=150000, yarn_rotary_scaling_factor=32.0,
                yarn_original_max_position_embeddings=4096, yarn_beta_fast=32.0,
                yarn_beta_slow=1.0, yarn_mscale=1.0, yarn_mscale_all_dim=0.0,
                yarn_correction_range_round_to_int=False, qk_layernorm=False,
                untie_embeddings_and_output_weights=True, vocab=201088,
                **moe(experts, 4, 2880, moe_layer_freq=[1] * layers))


PUBLISHED = {
    "llama2-7b": llama(32, 4096, 11008, 32, 32, 32000, 10000),
    "llama2-13b": llama(40, 5120, 13824, 40, 40, 32000, 10000),
    "llama2-70b": llama(80, 8192, 28672, 64, 8, 32000, 10000),
    "llama3-8b": llama(32, 4096, 14336, 32, 8, 128256, 500000),
    "llama3-70b": llama(80, 8192, 28672, 64, 8, 128256, 500000),
    # rope_scaling {factor 8, low_freq_factor 1, high_freq_factor 4,
    # original_max_position_embeddings 8192}: Megatron-LM fixes the last three
    "llama3.1-405b": llama(126, 16384, 53248, 128, 8, 128256, 500000, use_rope_scaling=True,
                           rope_scaling_factor=8.0),
    "gpt3-175b": dict(num_layers=96, hidden_size=12288, ffn_hidden_size=49152,
                      num_attention_heads=96, num_query_groups=96, kv_channels=128,
                      normalization="LayerNorm", layernorm_epsilon=1e-5, gated_linear_unit=False,
                      add_bias_linear=True, position_embedding_type="learned_absolute",
                      untie_embeddings_and_output_weights=False, vocab=50257,
                      num_moe_experts=None),
    "mixtral-8x7b": llama(32, 4096, 14336, 32, 8, 32000, 1000000,
                          **moe(8, 2, 14336, moe_layer_freq=[1] * 32)),
    "mixtral-8x22b": llama(56, 6144, 16384, 48, 8, 32768, 1000000,
                           **moe(8, 2, 16384, moe_layer_freq=[1] * 56)),
    "qwen3-30b-a3b": dict(llama(48, 2048, None, 32, 4, 151936, 1000000, eps=1e-6,
                                **moe(128, 8, 768, moe_layer_freq=[1] * 48)),
                          kv_channels=128, qk_layernorm=True),
    "qwen3-235b-a22b": dict(llama(94, 4096, None, 64, 4, 151936, 1000000, eps=1e-6,
                                  **moe(128, 8, 1536, moe_layer_freq=[1] * 94)),
                            kv_channels=128, qk_layernorm=True),
    # multi-head latent attention with YaRN (rope_scaling {type yarn, factor 40,
    # original_max_position_embeddings 4096, beta_fast 32, beta_slow 1, mscale
    # 1.0, mscale_all_dim 1.0}), its norms as Megatron-LM's qk_layernorm;
    # routing: scoring_func sigmoid, topk_method noaux_tc (the expert bias),
    # n_group 8, topk_group 4, routed_scaling_factor 2.5; first_k_dense_replace
    # 3; num_nextn_predict_layers 1
    "deepseek-v3": dict(
        llama(61, 7168, 18432, 128, 128, 129280, 10000, eps=1e-6,
              **moe(256, 8, 2048, moe_layer_freq=[0] * 3 + [1] * 58)),
        kv_channels=None, qk_layernorm=True, multi_latent_attention=True, q_lora_rank=1536,
        kv_lora_rank=512, qk_head_dim=128, qk_pos_emb_head_dim=64, v_head_dim=128,
        rope_type="yarn", rotary_scaling_factor=40.0, original_max_position_embeddings=4096,
        beta_fast=32, beta_slow=1, mscale=1.0, mscale_all_dim=1.0,
        moe_shared_expert_intermediate_size=2048, moe_router_score_function="sigmoid",
        moe_router_enable_expert_bias=True, moe_router_num_groups=8, moe_router_group_topk=4,
        moe_router_topk_scaling_factor=2.5, mtp_num_layers=1),
    # moonshotai/Kimi-K2-Base: DeepSeek-V3's class with 64 heads, 384 experts,
    # one dense layer, one routing group, no MTP, as pretrained (its YaRN
    # extends the context afterwards, with a beta_fast of 1 no flag sets):
    # MLA's default rope_type yarn at factor 1 is RoPE (no mscale, the same
    # frequencies: yarn_rotary_pos_embedding.py _yarn_get_mscale at d98e8a6),
    # so YaRN's other constants (beta_fast, beta_slow, mscale, the original
    # context) change nothing and are not compared
    "kimi-k2": dict(
        llama(61, 7168, 18432, 64, 64, 163840, 50000, eps=1e-6,
              **moe(384, 8, 2048, moe_layer_freq=[0] + [1] * 60)),
        kv_channels=None, qk_layernorm=True, multi_latent_attention=True, q_lora_rank=1536,
        kv_lora_rank=512, qk_head_dim=128, qk_pos_emb_head_dim=64, v_head_dim=128,
        rope_type="yarn", rotary_scaling_factor=1.0,
        moe_shared_expert_intermediate_size=2048, moe_router_score_function="sigmoid",
        moe_router_enable_expert_bias=True, moe_router_num_groups=1, moe_router_group_topk=1,
        moe_router_topk_scaling_factor=2.827, mtp_num_layers=None),
    "nemotron4-15b": nemotron4(32, 6144, 24576, 48),
    "nemotron4-340b": nemotron4(96, 18432, 73728, 96),
    "gpt-oss-20b": gpt_oss(24, 32),
    "gpt-oss-120b": gpt_oss(36, 128),
    # xai-org/grok-1 run.py and model.py at 7050ed2: every layer MoE, 8
    # experts of 32768, 2 per token, embeddings tied (the output is
    # embeddings.T), rotary base 10000, RMSNorm eps 1e-5; its GeGLU as
    # SwiGLU (etc/models/grok-1.yaml says why)
    "grok-1": dict(llama(64, 6144, 32768, 48, 8, 131072, 10000,
                         **moe(8, 2, 32768, moe_layer_freq=[1] * 64)),
                   untie_embeddings_and_output_weights=False),
    # meta-llama/Llama-4-Scout-17B-16E's text_config (transformers'
    # Llama4TextConfig): every layer MoE (interleave_moe_layer_step 1), 16
    # experts of 8192 and a shared one, top 1 on a sigmoid that scales the
    # expert's input; use_qk_norm (weightless); no_rope_layers every 4th;
    # rotary on adjacent pairs (its complex rotation; Megatron-Bridge's
    # rotary_interleaved); rope_scaling {factor 8, low 1, high 4, original
    # 8192}, the first release's, which Megatron-LM fixes but the factor
    "llama4-scout": dict(
        llama(48, 5120, 16384, 40, 8, 202048, 500000, use_rope_scaling=True,
              rope_scaling_factor=8.0, **moe(16, 1, 8192, moe_layer_freq=[1] * 48)),
        moe_router_score_function="sigmoid", moe_shared_expert_intermediate_size=8192,
        moe_apply_probs_on_input=True, qk_l2_norm=True, rotary_interleaved=True,
        no_rope_freq=[0, 0, 0, 1] * 12),
    # meta-llama/Llama-4-Maverick-17B-128E's text_config: Scout's attention
    # and router with 128 experts on the odd layers only
    # (interleave_moe_layer_step 2; Megatron-Bridge's
    # Llama4Experts128ModelProvider's moe_layer_freq [0, 1] * 24), the dense
    # MLP of intermediate_size_mlp 16384 on the others; no QK norm, no rope
    # scaling
    "llama4-maverick": dict(
        llama(48, 5120, 16384, 40, 8, 202048, 500000,
              **moe(128, 1, 8192, moe_layer_freq=[0, 1] * 24)),
        moe_router_score_function="sigmoid", moe_shared_expert_intermediate_size=8192,
        moe_apply_probs_on_input=True, rotary_interleaved=True, no_rope_freq=[0, 0, 0, 1] * 12),
}


def config_mismatches(arguments, args, want, tp):
    """Megatron-LM's own TransformerConfig from the parsed arguments,
    against the published values: a list of 'field: got X, published Y'."""
    cfg = arguments.core_transformer_config_from_args(args)
    out = []
    for field, value in want.items():
        if value is None and field in ("ffn_hidden_size", "kv_channels"):
            continue  # unused: every layer is MoE / MLA sizes its heads itself
        if field == "vocab":  # the padded table holds it, padded for tp only
            got = args.padded_vocab_size
            if not value <= got < value + 128 * tp:
                out.append(f"vocabulary: padded {got} for {value} at tp {tp}")
            continue
        got = getattr(cfg, field) if hasattr(cfg, field) else getattr(args, field)
        if field == "activation_func":  # a function: compare its name
            got = getattr(got, "__name__", got)
        if field == "moe_layer_freq" and isinstance(got, int):
            got = [1 if i % got == 0 else 0 for i in range(cfg.num_layers)]
        if got != value and not (isinstance(value, float) and isinstance(got, (int, float))
                                 and abs(got - value) <= 1e-12 * abs(value)):
            out.append(f"{field}: {got!r}, published {value!r}")
    return out


# Published production layouts, pinned: DeepSeek-V3's (61 layers do not
# split evenly into 32 or 16 chunks: an explicit layout), and TP wider than
# Qwen3-235B's 4 KV heads.
PINNED = [
    ("deepseek-v3", 128, "tp=2,pp=8,vpp=4,ep=64"),
    ("deepseek-v3", 128, "tp=2,pp=16,vpp=2,ep=64"),
    ("deepseek-v3", 128, "tp=2,pp=16,ep=64"),
    ("qwen3-235b-a22b", 32, "tp=2,pp=8,vpp=4,ep=32"),
    ("qwen3-235b-a22b", 32, "tp=8"),
    ("qwen3-30b-a3b", 2, "tp=8,ep=8"),
]


def cases():
    for preset, nodes, mesh in PINNED:
        yield f"{preset}/{nodes}xH100/{mesh}", preset, nodes, "H100-SXM", ["--mesh", mesh]
    for preset, counts in PRESETS.items():
        moe = preset.startswith(("mixtral", "qwen3-30b", "qwen3-235b", "deepseek", "kimi",
                                 "gpt-oss", "llama4-maverick"))
        mla = preset.startswith(("deepseek", "kimi"))
        for n in counts:
            for vname, extra in VARIANTS + (MOE_VARIANTS if moe else []) + \
                    (MLA_VARIANTS if mla else []):
                yield f"{preset}/{n}xH100/{vname}", preset, n, "H100-SXM", extra
        mid = counts[len(counts) // 2]
        for gpu in ("A100-80GB", "B200"):
            for vname, extra in VARIANTS[:3] + VARIANTS[4:5] + VARIANTS[7:9]:
                if gpu.startswith("A100") and vname == "fp8":
                    continue  # no FP8 on Ampere: meshplan refuses it
                yield f"{preset}/{mid}x{gpu}/{vname}", preset, mid, gpu, extra
        # before Ampere, in fp16 (no bf16): Megatron-LM's local implementation
        for vname, extra in (("fp16", []), ("fp16-megatron", VARIANTS[1][1]),
                             ("fp16-zero2", VARIANTS[4][1]), ("fp16-tp2", ["--mesh", "tp=2"])):
            yield (f"{preset}/{mid}xV100/{vname}", preset, mid, "V100-32GB",
                   ["--set", "train.precision=fp16"] + extra)
    for name, path in SPECS.items():
        for n in SPEC_NODES:
            for vname, extra in VARIANTS + MOE_VARIANTS:
                yield f"{name}/{n}xH100/{vname}", path, n, "H100-SXM", extra


def exported_env(o, preset, nodes, gpu, extra, node, local):
    cmd = [o.meshplan, "env", "--model", preset, "--nodes", str(nodes), "--gpus-per-node", "8",
           "--gpu", gpu, "--export", "torch", "--json", "--node", str(node), "--local",
           str(local), "--master-addr", "node0", "--policy", o.policy] + extra
    if o.models_dir:
        cmd += ["--models-dir", o.models_dir]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode in (1, 2):  # does not fit, or a pin this allocation cannot take
        return None, (r.stdout.strip().splitlines() + r.stderr.strip().splitlines())[:1]
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()}")
    return json.loads(r.stdout), None


def validate(arguments, env, drop=None):
    """Megatron-LM's parse_args() + validate_args() on the task's exports.
    drop: a variable or flag to remove first (the test of the test)."""
    env = dict(env)
    argv = shlex.split(env.get("MESH_MEGATRON_ARGS", ""))
    if drop and drop.startswith("--"):
        i = argv.index(drop)
        n = 1
        while i + n < len(argv) and not argv[i + n].startswith("--"):
            n += 1
        del argv[i:i + n]
    elif drop:
        env.pop(drop, None)
    saved_env, saved_argv = dict(os.environ), sys.argv
    os.environ.clear()
    os.environ.update(env)
    sys.argv = ["pretrain_gpt.py"] + argv
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            args = arguments.parse_args()
            arguments.validate_args(args)
        return args, None
    except (AssertionError, ValueError, TypeError, KeyError, RuntimeError, SystemExit) as e:
        tb = traceback.extract_tb(e.__traceback__)
        where = next((f"{os.path.basename(f.filename)}:{f.lineno}" for f in reversed(tb)
                      if "megatron" in f.filename), "?")
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        if isinstance(e, SystemExit):
            msg = "argparse: " + " ".join(out.getvalue().strip().splitlines()[-1:])
        return None, f"{where}: {msg}"
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        sys.argv = saved_argv


def reduced_dtype(args):
    """The dtype of the gradient buffer Megatron-LM builds from the parsed
    arguments, which its data-parallel sync reduces: Megatron-FSDP's main
    grads (the parameters' when not given: megatron_fsdp/
    param_and_grad_buffer.py L2313-2322), else fp32 when
    accumulate_allreduce_grads_in_fp32 (grad_reduce_in_fp32, training.py
    L2635), else the parameters' (param_and_grad_buffer.py L924)."""
    import torch
    if args.use_megatron_fsdp:
        return args.megatron_fsdp_main_grads_dtype or args.params_dtype
    return torch.float32 if args.accumulate_allreduce_grads_in_fp32 else args.params_dtype


def config_refusal(arguments, args):
    """None when Megatron-LM builds its TransformerConfig from the parsed
    arguments, else where and why it refuses: the expert all-to-all
    overlap's conditions (torch's version among them) are checked there,
    not in validate_args()."""
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            arguments.core_transformer_config_from_args(args)
        return None
    except (AssertionError, ValueError, TypeError, RuntimeError) as e:
        tb = traceback.extract_tb(e.__traceback__)
        where = next((f"{os.path.basename(f.filename)}:{f.lineno}" for f in reversed(tb)
                      if "megatron" in f.filename), "?")
        return f"{where}: {str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__}"


class Results:
    def __init__(self):
        self.passed, self.failed = 0, []

    def check(self, name, ok, why=""):
        if ok:
            self.passed += 1
            print(f"[       OK ] {name}")
        else:
            self.failed.append(name)
            print(f"[  FAILED  ] {name}: {why}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--meshplan", required=True)
    ap.add_argument("--megatron", required=True, help="the unpacked Megatron-LM tree")
    ap.add_argument("--models-dir")
    ap.add_argument("--policy", required=True, help="the shipped policy: every key at its default")
    ap.add_argument("--min-plans", type=int, default=150)
    o = ap.parse_args()

    arch = {"cc": (9, 0), "gpu": "H100-SXM"}
    install_stubs(arch)
    # TransformerConfig asks Transformer Engine's version (FP8 MoE needs
    # >= 1.7, FP8 grouped GEMM >= 1.11): answered as a current TE's, 2.8
    sys.path.insert(0, o.megatron)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        import megatron.training.arguments as arguments
        import megatron.core.utils as core_utils
        import megatron.core.models.common.embeddings.rope_utils as rope_utils
    from packaging.version import Version
    core_utils._te_version = Version(TE_VERSION)
    core_utils._torch_version = Version(torch_required())
    if rope_utils.fused_apply_rotary_pos_emb is None:  # TE's fused RoPE kernel, present with TE
        rope_utils.fused_apply_rotary_pos_emb = placeholder_class("fused_apply_rotary_pos_emb")

    res = Results()
    planned, refused, compared, refused_names = 0, [], set(), set()
    validated = set()  # the variants (and pinned layouts) that planned somewhere
    kept = {}  # one plan per condition, for the test of the test below
    for name, preset, nodes, gpu, extra in cases():
        arch.update(cc=ARCH[gpu], gpu=gpu)
        for node, local in ((0, 0), (nodes - 1, 7)):
            env, why = exported_env(o, preset, nodes, gpu, extra, node, local)
            if env is None:
                refused.append(f"{name}: {' '.join(why)}")
                refused_names.add(name)
                break
            args, err = validate(arguments, env)
            task = f"{name}/rank{node * 8 + local}"
            res.check(task, args is not None, err or "")
            if args is None:
                continue
            if node == 0:
                planned += 1
                validated.add(name.rsplit("/", 1)[-1])
            if node == 0 and preset not in compared and preset in PUBLISHED:
                compared.add(preset)
                with contextlib.redirect_stdout(io.StringIO()), \
                        contextlib.redirect_stderr(io.StringIO()):
                    bad = config_mismatches(arguments, args, PUBLISHED[preset],
                                            args.tensor_model_parallel_size)
                res.check(f"{preset}: Megatron-LM's TransformerConfig is the published model",
                          not bad, "; ".join(bad))
            a = args
            if a.bf16:  # what meshplan prices the DP sync at: the spec's dtype
                import torch
                want = torch.bfloat16 if "train.grad_accum_dtype=bf16" in extra else torch.float32
                got = reduced_dtype(a)
                res.check(f"{task}: gradients reduced in {str(want)[6:]}", got == want,
                          f"Megatron-LM reduces {got}")
                if want == torch.bfloat16 and a.grad_reduce_in_bf16:
                    kept.setdefault("--grad-reduce-in-bf16", (env, arch.copy()))
            if a.overlap_moe_expert_parallel_comm:  # its conditions are TransformerConfig's
                why = config_refusal(arguments, a)
                res.check(f"{task}: TransformerConfig with the expert all-to-all overlap",
                          why is None, why or "")
                kept.setdefault("torch", (a, arch.copy()))
            elif preset in SPECS.values():
                why = config_refusal(arguments, a)
                res.check(f"{task}: TransformerConfig", why is None, why or "")
            if preset in SPECS.values() and a.expert_model_parallel_size % 2 == 0:
                kept.setdefault("etp", (env, arch.copy()))
            # Megatron-LM asks for it only where neither FSDP nor the expert
            # all-to-all overlap wants more connections (arguments.py
            # L1453-1475): since the planner recomputes latent attention's
            # up projections, DeepSeek-V3's TP plans keep that overlap
            if (a.tensor_model_parallel_size > 1 or a.context_parallel_size > 1) and \
                    ARCH[gpu][0] < 10 and not a.use_megatron_fsdp and \
                    not a.overlap_moe_expert_parallel_comm:
                kept.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", (env, arch.copy()))
            if a.use_megatron_fsdp:
                kept.setdefault("--ckpt-format", (env, arch.copy()))
            if a.moe_token_dispatcher_type == "flex":  # DeepEP's checks are TransformerConfig's
                why = config_refusal(arguments, a)
                res.check(f"{task}: TransformerConfig with the flex dispatcher on DeepEP",
                          why is None and a.moe_flex_dispatcher_backend == "deepep",
                          why or a.moe_flex_dispatcher_backend)
                kept.setdefault("flex", (env, arch.copy()))

    # Every plan above passed with its exports; removing one requirement must
    # make Megatron-LM refuse it, or the check above proves nothing.
    for name, *_ in ((f"{p}/{n}xH100/{mesh}",) for p, n, mesh in PINNED):
        res.check(f"published layout {name} planned", name not in refused_names,
                  "meshplan refused it")
    for drop in ("CUDA_DEVICE_MAX_CONNECTIONS", "--ckpt-format"):
        if drop not in kept:
            res.check(f"without {drop}", False, "no plan above needs it")
            continue
        env, a = kept[drop]
        arch.update(a)
        args, err = validate(arguments, env, drop=drop)
        res.check(f"without {drop}: Megatron-LM refuses ({err})", args is None,
                  f"{env['MESH_PLAN']} still passes without {drop}")
    # and the gradient check can fail: without --grad-reduce-in-bf16 the
    # ZeRO-0 plan's buffer is fp32 again, not the bf16 meshplan priced
    if "--grad-reduce-in-bf16" not in kept:
        res.check("a plan with --grad-reduce-in-bf16", False, "no plan above exports it")
    else:
        env, a = kept["--grad-reduce-in-bf16"]
        arch.update(a)
        args, err = validate(arguments, env, drop="--grad-reduce-in-bf16")
        got = reduced_dtype(args) if args is not None else None
        res.check(f"without --grad-reduce-in-bf16: Megatron-LM reduces in {got}",
                  args is not None and str(got) == "torch.float32", err or "still bf16")

    # where a spec asks for DeepEP and it runs, some plan exports it (each one's
    # flags were validated above, and the flex dispatcher priced alike)
    res.check("a plan with the flex dispatcher on DeepEP", "flex" in kept,
              "no plan above exports it")

    # the overlap table's torch requirement is Megatron-LM's: told a torch one
    # release older, it refuses the plan that exports the overlap
    if "torch" not in kept:
        res.check("a plan with the expert all-to-all overlap", False, "no plan above exports it")
    else:
        args, a = kept["torch"]
        arch.update(a)
        need = Version(torch_required())
        core_utils._torch_version = Version(f"{need.major}.{need.minor - 1}.0")
        why = config_refusal(arguments, args)
        core_utils._torch_version = need
        res.check(f"torch older than lib/overlap.c requires: Megatron-LM refuses ({why})",
                  why is not None and "torch" in why, "still accepted")
    # the GeLU MoE's expert TP 1 is Megatron-LM's rule: at 2 it refuses
    if "etp" not in kept:
        res.check("a plan of a GeLU MoE", False, "no plan above is one")
    else:
        env, a = kept["etp"]
        arch.update(a)
        argv = env["MESH_MEGATRON_ARGS"]
        ep = int(re.search(r"--expert-model-parallel-size (\d+)", argv).group(1))
        argv = re.sub(r"--expert-model-parallel-size \d+ --expert-tensor-parallel-size 1",
                      f"--expert-model-parallel-size {ep // 2} --expert-tensor-parallel-size 2",
                      argv)
        args, err = validate(arguments, dict(env, MESH_MEGATRON_ARGS=argv))
        why = config_refusal(arguments, args) if args is not None else None
        res.check(f"a GeLU MoE at expert TP 2: Megatron-LM refuses ({why})",
                  why is not None and "ETP==1" in why, err or "still accepted")
    res.check(f"at least {o.min_plans} plans validated ({planned})", planned >= o.min_plans,
              f"only {planned}")
    # a variant meshplan refused everywhere would pass unseen: each must plan
    for vname, _ in VARIANTS + MOE_VARIANTS + MLA_VARIANTS:
        res.check(f"variant {vname} planned and validated somewhere", vname in validated,
                  "meshplan refused it on every preset and allocation")
    res.check("every preset compared with its published configuration",
              compared == set(PUBLISHED), f"not compared: {set(PUBLISHED) - compared}")
    for p, why in NOT_MEGATRON.items():
        print(f"# not run: {p}: {why}")
    for r in refused:
        print(f"# no plan (meshplan refuses it, as it says): {r}")
    total = res.passed + len(res.failed)
    print(f"[==========] {total} test(s) run.")
    print(f"[  PASSED  ] {res.passed} test(s).")
    if res.failed:
        print(f"[  FAILED  ] {len(res.failed)} test(s), listed below:")
        for f in res.failed:
            print(f"[  FAILED  ] {f}")
    return 1 if res.failed else 0


if __name__ == "__main__":
    sys.exit(main())
