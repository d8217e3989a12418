/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan: restarts that keep their checkpoints.
 *
 * A long run's layout, saved next to its checkpoint (`meshplan plan
 * --json`, or the MESH_PLAN every task was given), is read back when the
 * job is resubmitted on another node count.  The dimensions the checkpoint
 * was sharded with are kept (pinned for the planner), the planner chooses
 * the rest, and the training program is told which dimensions changed
 * (MESH_RESHARD), so that only what its checkpoint format can reshard on
 * load changes.  The global batch is kept constant: micro-batch size and
 * micro-batches per step (gradient accumulation) absorb the change of the
 * data-parallel size.  doc/design.md, "Restarts".
 *
 * The flow: mesh_restart_load (or mesh_restart_read, or mesh_restart_parse
 * of the one-line form a front end carried), optionally mesh_restart_keep,
 * then mesh_restart_pins before mesh_plan_create, and after it
 * mesh_restart_reshard, mesh_restart_text or mesh_restart_json.
 */
#ifndef MESHPLAN_RESTART_H
#define MESHPLAN_RESTART_H

#include "meshplan/api.h"
#include <stddef.h>

#include "meshplan/error.h"
#include "meshplan/layout.h"
#include "meshplan/plan.h"
#include "meshplan/spec.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * What a checkpoint sharded by model parallelism cannot change on load,
 * kept when only a file is given: tp, pp, vpp, ep and etp (ep and etp only
 * where the saved layout has experts).  Megatron-LM's legacy checkpoint
 * (megatron/training/checkpointing.py at d98e8a6) names its files by the
 * tensor, pipeline and expert ranks (get_checkpoint_name, L230-276),
 * refuses another tp or pp on load (check_checkpoint_args, L218-221,
 * skipped only for distributed checkpoints) and holds one state dict per
 * virtual pipeline chunk (model0, model1, ...: L2942-2951); its distributed
 * optimizer's default sharding, dp_reshardable, "allows checkpoint
 * resharding only in DP dimension" (megatron/core/optimizer/
 * distrib_optimizer.py L1474-1478).  The distributed checkpoint format
 * (torch_dist, megatron/core/dist_checkpointing) reshards tp and pp too: a
 * user of it keeps less, with mesh_restart_keep.  And zero: the ZeRO stage
 * is the checkpoint's format and sharding (stage 1 the distributed
 * optimizer's dp_reshardable state above; stages 2 and 3 Megatron-FSDP,
 * whose only format is fsdp_dtensor: megatron/training/arguments.py
 * L1169-1170), which no plain reshard on load converts.
 */
#define MESH_RESTART_KEEP_DEFAULT                                                                  \
    (MESH_DIM_BIT(MESH_DIM_TP) | MESH_DIM_BIT(MESH_DIM_PP) | MESH_DIM_BIT(MESH_DIM_VPP) |          \
     MESH_DIM_BIT(MESH_DIM_EP) | MESH_DIM_BIT(MESH_DIM_ETP) | MESH_DIM_BIT(MESH_DIM_ZERO))

#define MESH_RESTART_FILE_MAX (1 << 20) /* bytes of a file mesh_restart_load reads */
#define MESH_RESTART_STR_MAX  320       /* a buffer that holds any mesh_restart_format line */
#define MESH_RESHARD_STR_MAX  48        /* a buffer that holds any mesh_restart_reshard list */

/**
 * A restart: the previous run's layout, its global batch, and which of its
 * dimensions to keep.  Plain data: copy it freely.  Made by
 * mesh_restart_read, mesh_restart_load or mesh_restart_parse, which check
 * it; a hand-filled one must hold a complete layout (as mesh_layout_format
 * writes one: no field MESH_FREE or MESH_AUTO; ep and etp 0 for a dense
 * model's).
 */
typedef struct mesh_restart {
    mesh_layout_t from; /* the previous run's layout, complete */
    long global_batch;  /* its global batch in sequences; 0 when the source does not say */
    unsigned keep;      /* the dimensions kept: MESH_DIM_BIT(MESH_DIM_*) bits */
    /* the saved model's shape, which a checkpoint must match (Megatron-LM's
     * check_checkpoint_args compares them, checkpointing.py L201-203 at
     * d98e8a6): plan --json's model.layers, hidden and heads; all 0 when
     * the source does not say (MESH_PLAN, env's lines) */
    int layers, hidden, heads;
} mesh_restart_t;

/**
 * Read a restart from the contents of a file saved next to a checkpoint,
 * text[0..len) (a NUL byte in it is an error, not its end), into *r, which
 * is cleared first; `name` (the file's name, not NULL) prefixes every
 * error.  Three forms are read:
 *  - `meshplan plan --json` (its "layout" object's "mesh", and
 *    "model"."global_batch", else "layout"."global_batch", and "model"'s
 *    "layers", "hidden" and "heads"; "fits" is not read), or `meshplan env --json` (its "MESH_PLAN"
 * and "MESH_GLOBAL_BATCH_SIZE"): a JSON object, read strictly;
 *  - the value of MESH_PLAN alone, on a line of its own;
 *  - lines NAME=value, or `export NAME='value'` as `meshplan env --shell`
 *    prints them (values bare, in single or in double quotes), blank lines
 *    and # comments: MESH_PLAN is read, MESH_GLOBAL_BATCH_SIZE too where
 *    it is there, every other variable is skipped.
 * The layout must be complete, as MESH_PLAN writes it (tp, pp, dp, cp,
 * zero, vpp, mb, recompute and sp; offload, moments, ep and etp where
 * used; no "auto"), of at most 2^22 GPUs.  global_batch is 0 when the
 * file does not say.  keep becomes MESH_RESTART_KEEP_DEFAULT, without ep
 * and etp when the layout has no experts (a dense model's).  layers,
 * hidden and heads are 0 unless the file is a plan --json of a model with
 * an arch.
 *
 * Returns 0, or -1 with err saying what was expected ("NAME:LINE: ..."
 * where a line is known) on: an empty or binary file, more than
 * MESH_RESTART_FILE_MAX bytes, malformed or truncated JSON (nested deeper
 * than 32), a JSON object without a layout, no layout line or two of
 * them, a value given twice, a layout mesh_layout_parse refuses or that is
 * incomplete.  *r is then partly filled.  text may be NULL only with len
 * 0.  Thread-safe; reads at most len bytes.
 */
MESH_API int mesh_restart_read(const char *text, size_t len, const char *name, mesh_restart_t *r,
                               mesh_error_t *err);

/**
 * The restart of a job that resubmits itself: the layout its tasks were
 * given, from the values of MESH_PLAN (plan, NULL when unset) and of
 * MESH_GLOBAL_BATCH_SIZE (global_batch, may be NULL), read as
 * mesh_restart_read reads them.  The front end reads the environment; the
 * library decides what it means.  Returns 0, or -1 with err set.
 */
MESH_API int mesh_restart_from_env(const char *plan, const char *global_batch, mesh_restart_t *r,
                                   mesh_error_t *err);

/**
 * mesh_restart_read of the file at `path`, which must be a regular file of
 * at most MESH_RESTART_FILE_MAX bytes (a FIFO or a directory is refused,
 * without blocking; the file opened is the file checked), named by path in
 * errors.  Run it with the identity of the user whose file it is.
 * Returns 0, or -1 with err set, also when the file cannot be opened or
 * read.
 */
MESH_API int mesh_restart_load(const char *path, mesh_restart_t *r, mesh_error_t *err);

/**
 * Replace r->keep by the dimensions named in `dims`, comma-separated
 * ("tp,pp,ep"), each once, in any order; "none" keeps none (the restart
 * then only reports what changed).  r->from must be set (by
 * mesh_restart_read or the like).
 *
 * Returns 0, or -1 with a one-line err (r->keep unchanged) naming the
 * word: a layout key that does not shard a checkpoint (mb, recompute, sp,
 * offload, moments: they may change on any restart), an unknown word (with
 * the dimension it most likely meant, mesh_closest_name), a word given
 * twice, an empty field, "none" beside others, more than 127 characters,
 * or ep or etp where r->from has no experts.  The errors list the
 * dimensions that can be kept; they do not name an option (front ends
 * prefix their own).  dims NULL or "" is an error too.
 */
MESH_API int mesh_restart_keep(mesh_restart_t *r, const char *dims, mesh_error_t *err);

/**
 * Add the kept dimensions of r to the planner's pins *pins (as
 * mesh_layout_parse made them from --mesh; fields already pinned to the
 * kept value stay so), for model m.  dp kept pins dp, and with it the node
 * count.
 *
 * Returns 0, or -1 with err set (*pins then unchanged) when kept
 * dimensions are pinned to other values or to auto (the message names
 * every one, with both values), ep or etp is kept for a model without
 * experts (or the saved layout has none and m has), the saved model's
 * shape is known and is not m's (layers, hidden or heads differ: the
 * checkpoint is another model's), or r->global_batch is known and differs
 * from m's (a restart keeps the global batch constant: the message says to
 * set train.global_batch).  r, m and pins must not be NULL.
 */
MESH_API int mesh_restart_pins(const mesh_restart_t *r, const mesh_model_t *m, mesh_layout_t *pins,
                               mesh_error_t *err);

/**
 * The dimensions whose sizes differ between r->from and the complete
 * layout `to` (the plan's, mesh_plan_best(p)->layout), comma-separated in
 * the order of mesh_dim_t ("dp", "dp,zero"), or "none": what MESH_RESHARD
 * holds.  ep and etp of 0 count as 1.  Where zero moves between the
 * distributed optimizer (0, 1) and Megatron-FSDP (2, 3), ",format" follows:
 * the checkpoint must be converted between Megatron-LM's torch_dist and
 * fsdp_dtensor formats before it loads.  Into buf[len]
 * (MESH_RESHARD_STR_MAX bytes suffice; truncated to fit).  Returns buf.
 */
MESH_API const char *mesh_restart_reshard(const mesh_restart_t *r, const mesh_layout_t *to,
                                          char *buf, size_t len);

/**
 * The kept dimensions with their values, in --mesh syntax and mesh_dim_t's
 * order ("tp=4,pp=4,vpp=1"), or "none", into buf[len] (64 bytes suffice;
 * truncated to fit): what front ends say they keep.  Returns buf.
 */
MESH_API const char *mesh_restart_kept(const mesh_restart_t *r, char *buf, size_t len);

/**
 * What keeping less would free, where msg is the error of pins that name
 * their keys first ("mesh tp=2,pp=2: ...", as mesh_restart_pins and the
 * planner's pin checks word them; a sizing's error after its count, "on 2
 * nodes: mesh ..."): a fix such as "leave tp out" or "keep less" means, for
 * a dimension r keeps, keeping it no more.  Into freed[len] the kept
 * dimensions the pins name ("tp,pp"), into keep[len] r's other kept
 * dimensions (what to keep instead: "vpp,zero", or "none"), and into
 * pinned[len] those of freed that `mesh` (the --mesh text the pins came
 * from, or NULL) pins to their kept value too, so that the pin is in the
 * way as well and must go ("" if none).  A front end words them with its
 * own option names (--keep, --mesh-keep).
 *
 * Returns 1 when the pins name a kept dimension, else 0 (the three then
 * ""; so too for a message of another form).  r, msg, freed, keep and
 * pinned must not be NULL, len at least 1; each list is cut to fit (64
 * bytes suffice).
 */
MESH_API int mesh_restart_frees(const mesh_restart_t *r, const char *msg, const char *mesh,
                                char *freed, char *keep, char *pinned, size_t len);

/**
 * The restart as one line, "keep=tp,pp,vpp;batch=1024;model=80,8192,64;
 * LAYOUT" (keep=none when nothing is kept, batch=0 when the global batch
 * is not known, model= the saved layers, hidden and heads, 0,0,0 when not
 * known, LAYOUT as mesh_layout_format writes it), into buf[len]: what a front end
 * carries from submission to launch (the plugin, in the job's
 * environment), read back by mesh_restart_parse to the same restart.
 * Returns 0, or -1 with err set when it does not fit in len bytes
 * (MESH_RESTART_STR_MAX suffice), r->keep has bits beyond MESH_DIM_COUNT
 * or a number is negative; buf then holds "" (len > 0), never a cut
 * line.
 */
MESH_API int mesh_restart_format(const mesh_restart_t *r, char *buf, size_t len, mesh_error_t *err);

/**
 * Read mesh_restart_format's line back into *r (cleared first), with every
 * check of mesh_restart_read and mesh_restart_keep: the line is the user's
 * to change where it travels.  The four fields in that order, each once;
 * batch and the model's three numbers 0..2^30, the three all 0 or none.  Returns 0, or -1 with err
 * set ("restart: ...") when s is NULL, longer than MESH_RESTART_STR_MAX - 1 or malformed; *r is
 * then partly filled.
 */
MESH_API int mesh_restart_parse(const char *s, mesh_restart_t *r, mesh_error_t *err);

/**
 * The restart explained, for plan p (made with mesh_restart_pins' pins for
 * r): lines saying the layout restarted from, what is kept, what changed
 * (from -> to, and MESH_RESHARD), and how the global batch stays constant
 * (micro-batch size x data-parallel size x micro-batches per step, i.e.
 * gradient accumulation, from -> to).  When p does not fit, it says
 * plainly that the kept layout cannot fit this allocation, on how many
 * nodes it would (a search with the plan's pins, dp free, up to 4 times
 * the plan's nodes), and which kept dimension, freed, would fit here (the
 * plan's advice).  Returns a malloc'd string ending in a newline, which
 * the caller frees, or NULL if memory runs out.  Thread-safe.
 */
MESH_API char *mesh_restart_text(const mesh_restart_t *r, const mesh_plan_t *p);

/**
 * The same as one JSON object, without a final newline (the CLI adds it
 * to `plan --json` as "restart"): {"from": layout string, "keep": [names],
 * "kept": mesh_restart_kept's string, "reshard": MESH_RESHARD's value,
 * "changed": [{"dim", "from", "to"}], "global_batch": the plan's,
 * "global_batch_saved": the file's or null, "micro_batch",
 * "data_parallel", "micro_batches": each {"from", "to"}, "fits",
 * "nodes_to_fit": null or the count found, "unkeep": [{"dim", "kept",
 * "value"}] (kept dimensions that, freed, would fit)}.  Returns a malloc'd
 * string the caller frees, or NULL if memory runs out.
 */
MESH_API char *mesh_restart_json(const mesh_restart_t *r, const mesh_plan_t *p);

#ifdef __cplusplus
}
#endif
#endif
