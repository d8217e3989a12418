/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan: the controller's judgement of a job at submission.
 *
 * job_submit/meshplan (slurmctld) sees no node: it plans a job for the GPU
 * the policy gives the job's partition (its `partitions:`), and per
 * `enforce` lets it through, warns or refuses it before it is queued.  The
 * CLI's `--partition` asks the same question of the same function, so that
 * an admin or a user can reproduce what the controller decided, in its
 * words.  Nothing here reads a file or knows Slurm's types.
 */
#ifndef MESHPLAN_CONTROLLER_H
#define MESHPLAN_CONTROLLER_H

#include "meshplan/api.h"
#include "meshplan/error.h"
#include "meshplan/layout.h"
#include "meshplan/policy.h"
#include "meshplan/report.h"
#include "meshplan/size.h"
#include "meshplan/spec.h"
#include "meshplan/step.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MESH_SUBMIT_MSG_MAX (4 * MESH_ERROR_MAX) /* bytes of a verdict's message, with its NUL */

/** What a WARN or REFUSE verdict is about (mesh_submit_t's about). */
typedef enum mesh_submit_about {
    MESH_SUBMIT_FIT,  /* the model does not fit (or the request is bad) */
    MESH_SUBMIT_SIZE, /* the node range cannot be sized (--mesh-size) */
    MESH_SUBMIT_TIME  /* the time limit is shorter than the estimate (time_limit=reject) */
} mesh_submit_about_t;

/** What the controller decides about a job (mesh_submit_judge). */
typedef struct mesh_submit {
    /** RUN: accept it silently; WARN: accept it and tell the user msg;
     * REFUSE: refuse it with msg. */
    mesh_verdict_t verdict;
    /** 1 when a plan (or the partition's node count) decided; 0 when the
     * job passed unjudged: enforce=off, or the policy gives the deciding
     * partition no GPU (msg then says why, for the log: the nodes judge the
     * job at launch). */
    int judged;
    /** The partition that decided: the first of the list that accepts the
     * job, else the first; its index in the list, its name as the job
     * wrote it ("" when the job names none) and its policy entry (NULL:
     * none, the policy's own gpu= applies), a pointer into the policy that
     * was judged with. */
    int index;
    char partition[64];
    const mesh_partition_t *entry;
    /** WARN and REFUSE: the message for the user, lines joined by '\n',
     * without a front end's prefix ("meshplan: ", "error: "); unjudged:
     * why; else "". */
    char msg[MESH_SUBMIT_MSG_MAX];
    /** mesh_submit_decide only (0 or "" from mesh_submit_judge): */
    /** What a WARN or REFUSE is about, so that a front end can answer with
     * the right error (Slurm's invalid node count, invalid time limit). */
    mesh_submit_about_t about;
    /** Sized: the node count chosen, which the controller narrows the job
     * to; 0: not sized (not asked, or nothing fits). */
    int nodes;
    /** Minutes to set the job's time limit to (time_limit=set or reject,
     * and the job gives none); 0: leave it. */
    long time_limit;
    /** The run's estimated seconds, without the margin; 0: the spec gives
     * no budget, time_limit=off, or the job was not judged. */
    double estimate;
    /** What to tell the user of a job that is accepted (the sizing and
     * why, the time limit set, a limit far from the estimate), lines
     * joined by '\n', without a front end's prefix; "" when nothing. */
    char note[MESH_SUBMIT_MSG_MAX];
    /** The work units the judgement took (MESH_SUBMIT_WORK, and the step
     * that reached it, at most), for the log and mesh_submit_json: one per
     * layout considered and one per pricing of a layout's memory or cost.
     * mesh_submit_judge sets it too (it leaves `about` to `note` alone).
     * A verdict from the cache keeps the count it was first judged with. */
    long work;
    /** 1: the verdict was kept from an earlier judgement of the same
     * submission under the same policy (mesh_submit_decide); 0: judged now. */
    int cached;
} mesh_submit_t;

/** What a job asks of the controller beyond its shape (mesh_submit_decide). */
typedef struct mesh_submit_ask {
    int size;            /* 1: narrow the node range to one count by aim (--mesh-size) */
    mesh_size_aim_t aim; /* with size: the goal, as mesh_size_aim_parse read it */
    long max_time;       /* the partition's MaxTime in minutes where the front end reads it; 0:
                          * the policy's max_time: for the partition (none: no limit) */
    int nodes_lo;        /* the job's nodes (-N LO or the low end of -N LO-HI); 0: not given */
    int nodes_hi;        /* the high end of -N LO-HI; 0: no range */
    long time_limit;     /* the job's limit in minutes; 0: none given, -1: unlimited */
} mesh_submit_ask_t;

/* The most node counts the controller sizes for one job: each is a plan
 * made under slurmctld's locks (up to about a millisecond for Llama 3.1
 * 405B), so a range of thousands would stall the controller for every
 * user; a wider range is refused with this bound. */
#define MESH_SUBMIT_SIZE_MAX 256

/* The work the controller may do to judge one submission, in units of
 * about 10 ns of a core (a layout considered, a pricing of its memory or
 * cost, weighed by their time: lib/planner.h; 11-14 ns on the 2-core
 * machine of doc/benchmarks.md), so about 1.3-1.8 ms, under the 2 ms a
 * submission may hold slurmctld: sizing, fit, explanation, advice and
 * estimate together.  A count, not a clock, so that the same submission
 * always gets the same verdict.  Most jobs take far less (Llama 3.1 405B
 * on 16,384 GPUs with its estimate: 7,600; sized over 1-64 nodes for min:
 * 31,000, for fastest: 62,000); a spec that would take more (100,000
 * layers, 16M-token sequences) stops there, and the verdict says so
 * (mesh_submit_decide, doc/design.md "Work budget"). */
#define MESH_SUBMIT_WORK 130000L

/* A job that fits nowhere is refused as soon as the first-fit search says
 * so; what follows only explains it, and may spend a part of the budget:
 * the explanation (the whole plan's search, for the closest layout and
 * each family's reason) at most 1/MESH_SUBMIT_EXPLAIN_SHARE of it (65,000
 * units), and within that its advice (what would fit: more nodes, offload,
 * LoRA, each searched at many node counts) at most
 * 1/MESH_SUBMIT_ADVICE_SHARE (26,000 units, about 0.3 ms).  A hostile spec
 * would spend the whole budget on counts where nothing fits.  Common dense
 * refusals' advice takes less (Llama 3.1 405B on one node of 8 H100:
 * 17,000 units; Llama 3 70B: 25,000); a MoE model's, or one with host
 * memory to offload to, may be cut (Mixtral 8x7B on one node: 66,000), and
 * the refusal then gives the `meshplan plan` command that searches it in
 * full. */
#define MESH_SUBMIT_EXPLAIN_SHARE 2
#define MESH_SUBMIT_ADVICE_SHARE  5

/* The verdicts the controller keeps (mesh_submit_decide), the oldest
 * replaced first: a job array or a resubmission is answered from them. */
#define MESH_SUBMIT_CACHE_MAX 64

/* Each user's share of the controller's work (mesh_submit_decide_for), a
 * token bucket as Slurm's own per-user RPC rate limit (slurm.conf
 * SlurmctldParameters=rl_enable, rl_bucket_size, rl_refill_rate, whose
 * defaults are 30 and 2 a second): a user holds at most
 * MESH_SUBMIT_SHARE_BURST units (20 whole judgements, about 30 ms of a
 * core) and gets back MESH_SUBMIT_SHARE_RATE a second (two whole
 * judgements: at most about 3 ms of a core a second, however many
 * submissions).  A submission is judged within MESH_SUBMIT_WORK while its
 * user holds that much, and within MESH_SUBMIT_SHARE_FLOOR (about 0.1 ms:
 * enough to judge most dense jobs whole, or to refuse a hostile spec
 * without its explanation; a costlier job may be let through unjudged,
 * for the nodes to judge at launch) once the user's recent submissions have
 * spent it; so a user submitting costly specs in a loop holds the
 * controller for a tenth of a millisecond each, and other users keep their
 * whole shares.  MESH_SUBMIT_SHARE_USERS users are kept, the one seen
 * longest ago replaced (with a whole share, as a user not seen). */
#define MESH_SUBMIT_SHARE_BURST (20 * MESH_SUBMIT_WORK)
#define MESH_SUBMIT_SHARE_RATE  (2 * MESH_SUBMIT_WORK)
#define MESH_SUBMIT_SHARE_FLOOR 5000L
#define MESH_SUBMIT_SHARE_USERS 64

/* A time limit is "far longer" than the estimate beyond this factor of the
 * estimate with its margin: backfill then cannot start the job in the
 * holes its real length would fit (doc/design.md, "Run-time estimate"). */
#define MESH_TIME_LIMIT_LONG 2.0

/**
 * The allocation the controller plans a job of shape *s for in partition
 * `name` (NULL or "": the job names none), into *a: the GPU, memory and
 * NVLink island of the policy's entry for it (mesh_policy_partition: that
 * name, else "default"), each falling back to the policy's own (gpu=,
 * gpu_mem=), as mesh_policy_alloc describes it, for s->nodes nodes of
 * s->gpus_per_node GPUs and s->host_memory.  pol, s and a must not be NULL.
 *
 * Returns 0, or -1 with err set when the policy names no GPU for the
 * partition (the controller then leaves the job to the nodes) or names an
 * unknown one.
 */
MESH_API int mesh_partition_alloc(const mesh_policy_t *pol, const char *name, const mesh_step_t *s,
                                  mesh_alloc_t *a, mesh_error_t *err);

/**
 * Judge a job at submission, as job_submit/meshplan does: model *m with the
 * fields *pins pins, of shape *s (mesh_job_shape), submitted to
 * `partitions` (Slurm's comma-separated list; NULL or "": none), under the
 * policy *pol.  Into *out (cleared first).
 *
 * Its work is bounded as mesh_submit_decide's is (MESH_SUBMIT_WORK); no
 * verdict is kept.
 *
 * enforce=off accepts the job unjudged.  Otherwise each partition of the
 * list is judged in turn (names sharing a policy entry once): a partition
 * whose entry gives no GPU (nor does the policy) accepts the job unjudged;
 * one with fewer `nodes` than the job asks for does not fit it; otherwise
 * the job fits if any layout fits the partition's allocation
 * (mesh_partition_alloc), and if none does the message is
 * mesh_plan_verdict's.  The first partition that accepts decides (RUN);
 * when none does, the verdict is WARN (enforce=warn) or REFUSE
 * (enforce=reject) with the first partition's reason, which, for a list of
 * several, starts "in partition NAME: " and ends with a line saying it
 * fits none of the N partitions the job names.
 *
 * pol, m, pins, s and out must not be NULL; nothing is kept.  Returns
 * out->verdict.
 */
MESH_API mesh_verdict_t mesh_submit_judge(const mesh_policy_t *pol, const char *partitions,
                                          const mesh_model_t *m, const mesh_layout_t *pins,
                                          const mesh_step_t *s, mesh_submit_t *out);

/**
 * A judgement as one JSON object, for a front end's --json (`meshplan plan
 * --partition --json` adds it as "controller"): {"verdict": "run", "warn"
 * or "refuse", "judged": true or false, "partition": the deciding partition
 * as the job wrote it (null: none named), "message": msg (null when empty),
 * "work": the work units it took}.  Returns a string to free(), or NULL
 * when out of memory.  v must not be NULL.
 */
MESH_API char *mesh_submit_json(const mesh_submit_t *v);

/**
 * Everything job_submit/meshplan decides about a job at submission: its
 * node count when it asks to be sized, whether it fits, and its time limit.
 * The same inputs as mesh_submit_judge, plus *ask; into *out (cleared
 * first).
 *
 * Sizing (ask->size): the range ask->nodes_lo..nodes_hi (hi 0: lo alone) is
 * cut to the first partition's `nodes:` (mesh_size_bound) and sized for it
 * with ask->goal (mesh_size_create; s->nodes is ignored); out->nodes is
 * the choice and out->note says it and why.  A range that is empty,
 * outside the partition or (once cut) of more than MESH_SUBMIT_SIZE_MAX
 * counts, a job that gives no nodes, or a partition the
 * policy gives no GPU is REFUSE, whatever enforce says (the user asked for
 * something the controller cannot do); a range where nothing fits is
 * enforce's verdict (off: RUN, not narrowed) with the sizing's reason.
 * Without sizing, the verdict is mesh_submit_judge's.  A deadline
 * (ask->aim by:WHEN) sizes for the fewest nodes whose run ends by it
 * (mesh_size_create_aim); none in time is enforce's verdict too, with the
 * count that comes closest.
 *
 * Time limit, for a job that fits and a spec with a budget (train.tokens
 * or train.steps), per the policy's time_limit: the estimate (out->estimate)
 * and the limit that covers it with time_margin
 * (mesh_size_limit_minutes).  warn: a note when the job gives no limit, a
 * limit shorter than that, or one longer than MESH_TIME_LIMIT_LONG times
 * it; set: also out->time_limit for a job that gives none; reject: also
 * REFUSE a job whose limit is shorter than the estimate itself.  A run
 * longer than the partition's MaxTime (ask->max_time, else the policy's
 * max_time:) cannot be one job: the note says how many chained jobs of
 * what limit it takes and the sbatch line that submits them
 * (mesh_size_chain, mesh_size_chain_recipe), set gives the job one link's
 * limit, and reject refuses no limit as shorter than the estimate.  The
 * estimate of a job not sized costs a whole plan on the partition's
 * allocation (only then).
 *
 * Work: at most MESH_SUBMIT_WORK units, shared by everything above
 * (mesh_submit_judge has the same budget).  Where it runs out the verdict
 * says so and is never a guess: a fit not yet found lets the job through
 * unjudged (judged 0; msg and note say the nodes judge it); a job that fits
 * nowhere is still WARN or REFUSE, its explanation or advice cut short with a
 * line saying so; sizing stopped is RUN unjudged, not narrowed, with a note;
 * an estimate stopped sets and judges no limit, with a note.
 *
 * The verdict is kept (MESH_SUBMIT_CACHE_MAX of them, the oldest replaced)
 * for the same inputs and the same policy bytes, and the same submission
 * is answered from it (out->cached 1).  Safe to call from several threads.
 *
 * pol, m, pins, s, ask and out must not be NULL.  Returns out->verdict.
 */
MESH_API mesh_verdict_t mesh_submit_decide(const mesh_policy_t *pol, const char *partitions,
                                           const mesh_model_t *m, const mesh_layout_t *pins,
                                           const mesh_step_t *s, const mesh_submit_ask_t *ask,
                                           mesh_submit_t *out);

/**
 * mesh_submit_decide for a submission of user `uid` at `now` (seconds on a
 * clock that does not go back, such as CLOCK_MONOTONIC's), within that
 * user's share of the controller's work (MESH_SUBMIT_SHARE_BURST): with
 * MESH_SUBMIT_WORK units while the share holds that many, else with
 * MESH_SUBMIT_SHARE_FLOOR; the share then loses what the judgement took
 * (never below 0) and refills at MESH_SUBMIT_SHARE_RATE units a second.
 * A judgement the floor cut short says so in out->note for a job let
 * through (RUN, judged or not) and in out->msg for a refusal or warning,
 * and names `meshplan plan`, which judges it in full; one the floor
 * sufficed for is mesh_submit_decide's, to the word.  A repeated
 * submission is answered from the kept verdicts (that of a whole judgement
 * first, then that of the same budget) and costs its share nothing.  A
 * `now` that is not finite counts as 0.  Safe to call from several threads.
 *
 * Arguments and result as mesh_submit_decide's.
 */
MESH_API mesh_verdict_t mesh_submit_decide_for(unsigned uid, double now, const mesh_policy_t *pol,
                                               const char *partitions, const mesh_model_t *m,
                                               const mesh_layout_t *pins, const mesh_step_t *s,
                                               const mesh_submit_ask_t *ask, mesh_submit_t *out);

/**
 * Forget what the controller keeps between submissions: the verdicts
 * mesh_submit_decide keeps and the users' shares (mesh_submit_decide_for).
 * Not needed for correctness (a verdict is kept for the same inputs and
 * the same policy bytes only); for a caller that wants every verdict
 * judged afresh and every share whole (a benchmark, a test).
 */
MESH_API void mesh_submit_cache_clear(void);

#ifdef __cplusplus
}
#endif
#endif
