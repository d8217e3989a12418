/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan: admin policy and modelling assumptions.
 *
 * One set of keys, read from plugstack.conf arguments (key=value), from a
 * YAML policy file (policy=/etc/slurm/meshplan.yaml) or from the CLI's
 * --policy.  Unknown keys are errors naming the key.  Defaults are those of
 * mesh_policy_init and are documented in meshplan-policy(5).
 *
 * The policy is three parts by who reads them: the assumptions (what a plan
 * depends on: the planner and the memory model take only these), the
 * launch settings (the SPANK plugin's) and the controller's (job_submit's).
 */
#ifndef MESHPLAN_POLICY_H
#define MESHPLAN_POLICY_H

#include "meshplan/api.h"
#include "meshplan/calibrate.h"
#include "meshplan/error.h"
#include "meshplan/gpu.h"
#include "meshplan/layout.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The environment variable naming the policy file that slurmctld's
 * job_submit/meshplan and the CLI read instead of the system's (the plugin
 * reads plugstack.conf's policy=). */
#define MESH_POLICY_ENV "MESHPLAN_POLICY"

#define MESH_PATH_MAX          256 /* bytes of a path setting, with its NUL */
#define MESH_GPU_OVERRIDES_MAX 16  /* GPU models gpu.NAME.* may name */

/** enforce=: what to do with a job whose model does not fit. */
typedef enum mesh_enforce {
    MESH_ENFORCE_OFF,
    MESH_ENFORCE_WARN,
    MESH_ENFORCE_REJECT
} mesh_enforce_t;

/** What job_submit/meshplan does with a job's time limit, given the run
 * time a spec with a budget (train.tokens or train.steps) is estimated at
 * (policy key time_limit; doc/design.md, "Run-time estimate"). */
typedef enum mesh_time_limit {
    MESH_TIME_LIMIT_OFF,  /* nothing */
    MESH_TIME_LIMIT_WARN, /* tell the user a limit shorter than the estimate, far longer, or none */
    MESH_TIME_LIMIT_SET,  /* warn, and set the limit of a job that gives none */
    MESH_TIME_LIMIT_REJECT /* set, and refuse a job whose limit is shorter than the estimate */
} mesh_time_limit_t;
/** export=: which launcher variables the tasks get (see env.h). */
typedef enum mesh_export {
    MESH_EXPORT_TORCH,
    MESH_EXPORT_TORCHRUN,
    MESH_EXPORT_MESH,
    /* the batch script's (and salloc's interactive step's): the layout and
     * the frameworks' settings, no rank and no launcher variable, so that
     * what its srun steps inherit never stands for their own (never a
     * policy's export=) */
    MESH_EXPORT_BATCH
} mesh_export_t;

/** Which job steps get the variables (steps=). */
enum {
    MESH_STEP_REGULAR = 1 << 0,     /* srun steps */
    MESH_STEP_BATCH = 1 << 1,       /* the batch script itself */
    MESH_STEP_INTERACTIVE = 1 << 2, /* salloc's interactive step */
};

/** A per-model override of the GPU table; zero fields are left as they are. */
typedef struct mesh_gpu_override {
    char name[32]; /* the GPU model, matched case-insensitively */
    /* bytes; FLOP/s (gpu.NAME.peak_tflops, in 1e12); bytes/s (hbm_bw,
     * link_bw, net_bw); fraction of peak */
    double memory, peak_flops, hbm_bw, link_bw, net_bw, gemm_eff;
    int island;                      /* GPUs per NVLink island */
    unsigned pci_vendor, pci_device; /* gpu.NAME.pci: this PCI id is NAME */
    int fp8;                         /* gpu.NAME.fp8: a mesh_gpu_fp8_t; 0 not said */
} mesh_gpu_override_t;

/** gpu.NAME.fp8: what an override says of a GPU's FP8 (0: nothing). */
typedef enum mesh_gpu_fp8 {
    MESH_GPU_FP8_NO = -1,       /* no FP8 tensor cores */
    MESH_GPU_FP8_YES = 1,       /* FP8 tensor cores, block-scaled recipes as the table says */
    MESH_GPU_FP8_BLOCKWISE = 2, /* and 128-wide blockwise scaling (fp8_blocks 1) */
    MESH_GPU_FP8_MXFP8 = 3,     /* and MXFP8 too (fp8_blocks 2) */
} mesh_gpu_fp8_t;

/** What job_submit/meshplan assumes about a Slurm partition (the controller
 * sees no node's topology); zero fields fall back to the policy's own. */
#define MESH_PARTITIONS_MAX 32 /* partitions a policy may describe */
typedef struct mesh_partition {
    char name[64];  /* "default": any partition not listed */
    char gpu[32];   /* GPU model name; "": the policy's gpu= */
    double gpu_mem; /* bytes; 0: the policy's */
    int island;     /* nvlink= */
    int nodes;      /* how many nodes it has, to explain requests beyond them */
    long max_time;  /* its MaxTime in minutes, as slurm.conf gives it; 0: none (UNLIMITED) */
} mesh_partition_t;

/**
 * What the policy makes the model assume: every setting that changes a plan
 * (the memory and cost models read these and nothing else of the policy).
 * Plain data, a part of mesh_policy_t; a plan keeps its own copy.
 */
typedef struct mesh_assumptions {
    double reserve;          /* fraction of GPU memory kept free */
    char gpu[32];            /* GPU model to assume where discovery cannot tell */
    double gpu_mem;          /* GPU memory to assume (bytes); 0 = from the GPU table */
    double overhead_context; /* CUDA context, cuBLAS workspaces: bytes per GPU */
    double overhead_comm;    /* NCCL buffers: bytes per communicator a rank is in */
    double fragmentation;    /* allocator slack, fraction of activation memory */
    int n_gpu_overrides;     /* entries used in gpu_overrides[] */
    mesh_gpu_override_t gpu_overrides[MESH_GPU_OVERRIDES_MAX];
    /* tokens at a MoE model's busiest expert-parallel rank over the mean,
     * where the spec gives no train.moe_imbalance (dropless routing) */
    double moe_imbalance;
    /* what a run-time estimate is padded with, a fraction of it
     * (time_margin=; MESH_TIME_MARGIN_DEFAULT, lib/meshplan/size.h) */
    double time_margin;
    /* the fraction of the usable GPU memory every plan leaves free
     * (headroom=); a spec's larger train.headroom wins, so a user can ask
     * for more room, never for less than the site's */
    double headroom;
    /* what a spec's framework: auto means at this site (framework=): auto
     * bounds plans by every framework's allocation; a Megatron-LM-only site
     * says megatron */
    mesh_framework_t framework;
    /* calibration=: the site's correction factors, read from the file it
     * names (n 0: none); applied to every GPU the policy resolves */
    mesh_calibration_t calibration;
    /* the MoE token dispatcher a spec's dispatcher: auto means
     * (dispatcher=): 0 Megatron-LM's alltoall, 1 its flex dispatcher on
     * DeepEP, where the site has installed DeepEP */
    int dispatcher;
} mesh_assumptions_t;

/** What the SPANK plugin does with a plan: its launch settings. */
typedef struct mesh_policy_launch {
    mesh_export_t export_mode;        /* export= */
    int port_lo, port_hi;             /* MASTER_PORT range, inclusive (port_range=) */
    char models_dir[MESH_PATH_MAX];   /* presets searched before the installed ones; "": none */
    char topology_xml[MESH_PATH_MAX]; /* XML path (%n: node name), "none", or "": discover */
    unsigned steps;                   /* MESH_STEP_* mask */
    int bind_gpu;                     /* bind=gpu: each task sees only its own GPU */
    int gpu_order_minor;              /* gpu_order=minor: Slurm's GPU i is /dev/nvidia<i> */
    double topology_timeout; /* seconds a node may spend reading its topology; 0: no bound */
    int topology_fallback;   /* on_topology_error=fallback: plan from gpu=/gpu_mem= instead */
    /* on_config_error=reject: while the configuration is broken the plugin refuses every job, not
     * only those that use meshplan; read apart from the rest (mesh_policy_on_config_error) */
    int config_fail_closed;
} mesh_policy_launch_t;

/** What job_submit/meshplan does at submission: the controller's settings. */
typedef struct mesh_policy_controller {
    int submit_fail_closed; /* on_submit_error=reject: job_submit refuses on its own failures */
    mesh_time_limit_t time_limit; /* time_limit= */
    int n_partitions;             /* entries used in partitions[] */
    mesh_partition_t partitions[MESH_PARTITIONS_MAX];
} mesh_policy_controller_t;

/**
 * The admin policy: mesh_policy_init's defaults, then the keys set.  Plain
 * data, in three parts by who reads them, and `enforce`, which both front
 * ends read: the plugin judges each step's plan with it and job_submit each
 * job's, so it belongs to neither part, and it is no assumption (a plan
 * does not depend on it).
 */
typedef struct mesh_policy {
    mesh_enforce_t enforce;              /* what to do with a job whose model does not fit */
    mesh_assumptions_t assume;           /* the model's inputs */
    mesh_policy_launch_t launch;         /* the SPANK plugin's */
    mesh_policy_controller_t controller; /* job_submit/meshplan's */
} mesh_policy_t;

/**
 * Fill *p (all three parts) with the defaults: enforce=reject, reserve 3%,
 * export=torch, ports 20000-29999, steps=regular, topology_timeout 10 s,
 * overhead 1 GiB, comm_buffer 0.25 GiB, fragmentation 5%, moe_imbalance
 * 1.25, time_limit=warn, time_margin 0.15, headroom 0, framework auto;
 * every other field
 * 0 or "".  Call it before any other policy function.
 */
MESH_API void mesh_policy_init(mesh_policy_t *p);

/**
 * Set one key, as written in plugstack.conf ("reserve", "0.1"); key and
 * value must not be NULL.  GPU overrides are "gpu.NAME.FIELD" (e.g.
 * gpu.H100-SXM.memory=80GiB), partitions "partition.NAME.FIELD".
 *
 * Keys and fields are matched exactly (lower case); words (enforce=,
 * export=, steps=, ...) and booleans in any case; a GPU's NAME as
 * mesh_gpu_find matches names (gpu.h100-sxm.* and gpu.NVIDIA H100 80GB
 * HBM3.* are H100-SXM's), partitions' names exactly.
 *
 * Returns 0, or -1 with err naming the key on an unknown key or field (the
 * list of them follows, then the key a typo most likely meant, or the
 * family: partitions.p.nodes is partition.p.nodes), a value out of range, a
 * short GPU name that is several GPUs (gpu=H100, gpu.A100.*), or more than
 * MESH_GPU_OVERRIDES_MAX GPUs or MESH_PARTITIONS_MAX partitions.  A
 * gpu.NAME.* or partition.NAME.* key adds its NAME entry before its value
 * is checked, so a failed call can leave an empty entry behind.  "policy"
 * is mesh_policy_set_arg's, not a key here.  Names of GPUs the table does
 * not know are accepted here and checked by mesh_policy_check.
 */
MESH_API int mesh_policy_set(mesh_policy_t *p, const char *key, const char *value,
                             mesh_error_t *err);

/**
 * Set one "key=value" argument (key at most 127 characters), as
 * mesh_policy_set does; "policy=PATH" loads a policy file with
 * mesh_policy_load.  Errors as theirs, or "not key=value".
 */
MESH_API int mesh_policy_set_arg(mesh_policy_t *p, const char *arg, mesh_error_t *err);

/**
 * What on_config_error says in plugstack.conf arguments av[0..ac-1] (av may
 * be NULL when ac is 0), read apart from everything else in them, so that it
 * holds however broken the rest is: each on_config_error=WORD argument, and
 * in each policy=FILE the last line that starts with "on_config_error:" (a
 * top-level key; the word may be quoted and followed by a comment), in the
 * arguments' order.  A file that cannot be read says nothing here (reading
 * the policy reports it).  The arguments are not applied: that is
 * mesh_policy_set_arg's.
 *
 * Returns 1 when the last word found is reject, 0 when it is allow or none
 * is found (the default), or -1 with err naming the value when any word
 * found is neither: a choice the admin made but meshplan cannot read, which
 * the plugin takes as reject (meshplan(8), "CONFIGURATION ERRORS").
 */
MESH_API int mesh_policy_on_config_error(int ac, char *const *av, mesh_error_t *err);

/**
 * Read a YAML policy file (a regular file of at most 64 KiB, opened
 * without blocking on a FIFO) and apply it with mesh_policy_parse.
 * Returns 0, or -1 with err set; see mesh_policy_parse for what *p holds
 * then.
 */
MESH_API int mesh_policy_load(mesh_policy_t *p, const char *path, mesh_error_t *err);

/**
 * Apply a YAML policy held in len bytes of buf (no NUL needed; at most 64
 * KiB): a mapping of the same keys, where `gpus:` maps GPU names to
 * mappings of override fields and `partitions:` partition names to
 * mappings of their fields.  path (not NULL) only names it in errors.
 *
 * The keys are set on top of what *p holds (initialise it first); an empty
 * document changes nothing.  The result is then checked with
 * mesh_policy_check.  Returns 0, or -1 with err as "path:line: key: ...",
 * the check's errors too (with the line of the key they are about; without
 * a line when the file did not set it); the keys read before the error stay
 * set.  An unknown key lists the file's keys (gpus: and partitions:, not
 * gpu.NAME.FIELD); a mapping under a key that takes one value says
 * "expected a single value", with the section meant (partition: is
 * partitions:).  A key given twice in one mapping (a GPU by two of its
 * names too), a `policy:` key, and YAML anchors, aliases or tags are errors.
 */
MESH_API int mesh_policy_parse(mesh_policy_t *p, const char *buf, size_t len, const char *path,
                               mesh_error_t *err);

/**
 * The settings for partition `name` (NULL: the job named none), matched
 * exactly, or else those of the partition called "default"; NULL if
 * neither is in the policy.  `name` may be a job's comma-separated list
 * (sbatch -p a,b): its first is matched, the partition the controller
 * sizes such a job on (its fit it judges on each, one name at a time).
 * The pointer is into *p: valid as long as *p.
 */
MESH_API const mesh_partition_t *mesh_policy_partition(const mesh_policy_t *p, const char *name);

/**
 * Whether every partition of `names` ("a100" or "a100,h100", as a job
 * names them; NULL or "": none) has settings in the policy, its own or
 * the catch-all "default", or the policy describes no partitions (its gpu=
 * then stands for every one).  Returns 0, or -1 with err naming the first that
 * has none, the policy's partitions and the one a slip of case or a typo
 * most likely meant ("unknown partition 'A100' (the policy's: a100, h100);
 * did you mean a100?").  For the CLI: the controller plans a partition the
 * policy does not describe for the nodes to judge.
 */
MESH_API int mesh_policy_partitions_known(const mesh_policy_t *p, const char *names,
                                          mesh_error_t *err);

/**
 * Resolve a GPU: the one rule every front end names a GPU by.  By name
 * (name not NULL; vendor and device unused), it is the table's entry of
 * that name (case-insensitively), else a GPU the policy defines in full
 * (gpu.NAME.memory and .peak_tflops; mesh_policy_check wants .pci too).
 * By PCI id (name NULL), it is the table model that a gpu.NAME.pci of this
 * id names, else the table's model of this id, else the GPU that
 * gpu.NAME.pci defines.  A GPU the policy defines is priced like
 * mesh_gpu_default where the policy gives no figure, but has its own PCI
 * id for device list, island 1, and no FP8 unless gpu.NAME.fp8 says so.  The overrides of *assume
 * for the resolved name then apply (mesh_policy_apply_gpu).  assume may be NULL (the table alone).
 *
 * Returns 0 with *out filled, or -1 with err set and *out untouched: by
 * name, err lists the known names (mesh_gpu_lookup's error); by PCI id, it
 * names the id and how to define it in the policy.
 */
MESH_API int mesh_policy_resolve_gpu(const mesh_assumptions_t *assume, const char *name,
                                     unsigned vendor, unsigned device, mesh_gpu_t *out,
                                     mesh_error_t *err);

/**
 * The GPU called `name` (not NULL) into *out, as mesh_policy_resolve_gpu
 * resolves a name under *assume (not NULL).  Returns 0, or -1 with err
 * listing the known names (*out untouched).
 */
MESH_API int mesh_policy_gpu(const mesh_assumptions_t *assume, const char *name, mesh_gpu_t *out,
                             mesh_error_t *err);

/** How a GPU of mesh_policy_gpu_at stands to the table. */
typedef enum mesh_gpu_origin {
    MESH_GPU_TABLE,      /* the table's GPU, as the table has it */
    MESH_GPU_OVERRIDDEN, /* the table's GPU, with figures of the policy (gpu.NAME.FIELD) */
    MESH_GPU_DEFINED,    /* a GPU the policy defines */
} mesh_gpu_origin_t;

/**
 * Every GPU a name can resolve to under the assumptions *assume (NULL: the
 * table alone), each as mesh_policy_resolve_gpu gives it: the table's, in
 * its order, with the policy's overrides, then the GPUs the policy defines,
 * in the order it first names them (a name given fields but no memory or
 * peak defines none, and is not listed).
 *
 * mesh_policy_gpu_count says how many (at least mesh_gpu_count()).
 * mesh_policy_gpu_at copies the i-th into *out (not NULL) and returns its
 * mesh_gpu_origin_t, or -1 with *out untouched unless
 * 0 <= i < mesh_policy_gpu_count(assume).
 */
MESH_API int mesh_policy_gpu_count(const mesh_assumptions_t *assume);
MESH_API int mesh_policy_gpu_at(const mesh_assumptions_t *assume, int i, mesh_gpu_t *out);

/**
 * Check what single keys cannot: gpu= and every partition.NAME.gpu= name a
 * GPU of the table or of the policy, and a GPU the table does not know
 * comes with its PCI id (gpu.NAME.pci=VVVV:DDDD), memory and peak_tflops.
 * Returns 0, or -1 with err naming the key once ("partition.h100.gpu:
 * unknown GPU 'H10' (known: ...); did you mean H100-SXM?"; "gpu.X1.memory:
 * missing: ..."; "gpu.H100-SMX: not a GPU of the table (did you mean
 * H100-SXM?); ...").
 */
MESH_API int mesh_policy_check(const mesh_policy_t *p, mesh_error_t *err);

/**
 * Apply the overrides of the policy's assumptions *assume (not NULL) for
 * gpu->name (matched case-insensitively) to *gpu: every nonzero figure of
 * the override replaces the GPU's; fp8 no takes FP8 away (peak_fp8 and
 * fp8_blocks 0), fp8 yes gives a GPU without FP8 an FP8 peak of twice its
 * bf16 peak and leaves one with FP8 as it is, and fp8 blockwise or mxfp8 do
 * as yes and set the block-scaled recipes it runs (fp8_blocks 1 or 2).
 */
MESH_API void mesh_policy_apply_gpu(const mesh_assumptions_t *assume, mesh_gpu_t *gpu);

/**
 * Describe an allocation into *out (which is cleared first), under the
 * policy's assumptions *assume (not NULL): `gpu` names a GPU (NULL: the
 * policy's gpu=, else a "generic" GPU with the default GPU's speeds, which
 * needs gpu_mem or the policy's gpu_mem=); the policy's gpu.NAME.*
 * overrides apply; `gpu_mem` (bytes, 0: none) and `island` (0: the GPU's
 * own) override last, and the island is capped at gpus_per_node (one
 * smaller than the GPU's is the GPU's too, so it also stops an NVLink
 * fabric across trays: mesh_layout_check).  The policy's gpu_mem= serves the
 * generic GPU only.  nodes and gpus_per_node are copied unchecked (mesh_plan_create checks them);
 * host_memory is left 0.  Returns 0, or -1 with err on an unknown GPU or
 * no memory size at all.
 */
MESH_API int mesh_policy_alloc(const mesh_assumptions_t *assume, const char *gpu, double gpu_mem,
                               int island, int nodes, int gpus_per_node, mesh_alloc_t *out,
                               mesh_error_t *err);

/**
 * Memory a layout may use on this GPU, in bytes, under the policy's
 * assumptions: gpu->memory * (1 - assume->reserve) * (1 - assume->headroom):
 * reserve is what the runtime takes that no model counts, headroom the
 * room a plan must leave on top (a plan passes its own, the larger of the
 * policy's and the spec's train.headroom).
 */
MESH_API double mesh_policy_usable(const mesh_assumptions_t *assume, const mesh_gpu_t *gpu);

/**
 * Names of the enforce= and export= settings ("off", "torchrun", ...):
 * static strings, never NULL; a value outside the enum gives "reject" and
 * "mesh" respectively.
 */
MESH_API const char *mesh_enforce_name(mesh_enforce_t e);
MESH_API const char *mesh_export_name(mesh_export_t e);

/**
 * Parse an export mode (s not NULL): torch, torchrun, mesh or batch (what a
 * batch script gets: for showing it, never a task's), case-insensitively.
 * Returns 0 with *out set, or -1 (*out untouched, no err).
 */
MESH_API int mesh_export_parse(const char *s, mesh_export_t *out);

#ifdef __cplusplus
}
#endif
#endif
