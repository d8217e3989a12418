/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan: sizing, the question asked the other way round.
 *
 * Given a model and a range of node counts, plan every count and pick one
 * by a goal: the fewest nodes that fit, the shortest step, or the most
 * tokens per GPU-hour.  job_submit/meshplan narrows a ranged job (sbatch
 * -N LO-HI) with it before the job is queued, and `meshplan size` prints
 * the same table, so that a user sees the trade-off before submitting.
 * A sizing is a pure function of its inputs, like a plan.
 */
#ifndef MESHPLAN_SIZE_H
#define MESHPLAN_SIZE_H

#include "meshplan/api.h"
#include "meshplan/cost.h"
#include "meshplan/error.h"
#include "meshplan/layout.h"
#include "meshplan/plan.h"
#include "meshplan/policy.h"
#include "meshplan/spec.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MESH_SIZE_ROWS_MAX   4096 /* node counts one sizing may plan */
#define MESH_SIZE_REASON_MAX 256  /* bytes of the choice's reason, with its NUL */
#define MESH_SIZE_WHY_MAX    384  /* bytes of a row's reason, with its NUL */

/* mesh_size_create's flags */
#define MESH_SIZE_TABLE 1 /* price every count that fits, not only what the choice needs */

/** What a sizing picks (doc/design.md, "Sizing"). */
typedef enum mesh_size_goal {
    MESH_SIZE_MIN,       /* the fewest nodes whose best layout fits */
    MESH_SIZE_FASTEST,   /* the shortest step; steps within MESH_PLAN_TIE tie to fewer nodes */
    MESH_SIZE_EFFICIENT, /* the most tokens per GPU-hour; within MESH_PLAN_TIE, fewer nodes */
    MESH_SIZE_DEADLINE   /* the fewest nodes whose run, with the time margin, ends by a deadline */
} mesh_size_goal_t;

#define MESH_SIZE_GOAL_MAX                                                                         \
    48 /* bytes of a goal as written ("by:2026-12-24T18:00"), with its NUL                         \
        */

/** A goal as a user gives it (mesh_size_aim_parse). */
typedef struct mesh_size_aim {
    mesh_size_goal_t goal;
    /* MESH_SIZE_DEADLINE: the seconds from now to the deadline, which the
     * run's estimate with the time margin must not pass; else 0 */
    double within;
    char text[MESH_SIZE_GOAL_MAX]; /* the goal as written, for messages */
} mesh_size_aim_t;

/** One node count of the range. */
typedef struct mesh_size_row {
    int nodes;
    /* 1: some layout fits, and best is the plan's choice on this many
     * nodes (mesh_plan_best); 0: none fits, and best is all zero (the
     * count was not priced: a sizing does not explain what does not fit);
     * -1: not planned, as the choice could not be this count (only
     * without MESH_SIZE_TABLE) */
    int fits;
    mesh_candidate_t best;
    double tokens_per_gpu_hour; /* best.cost.tokens_per_sec * 3600 / GPUs; 0 when it does not fit */
    /* fits 0: 1 when no valid layout exists on this count at all (its
     * GPUs do not split into the model's rules: mesh_plan_fit_status), 0
     * when layouts exist but none fits in memory; -1 (only without
     * MESH_SIZE_TABLE) when the sizing did not ask: none of the layouts
     * mesh_plan_any_fits' first-fit search tries is valid, and the choice
     * needs no reason (where nothing fits, the rows are asked from hi down
     * to the first with layouts, whose plan gives would_fit) */
    int no_layout;
    /* fits 0: why, one line ("no layout: 19 nodes x 8 GPUs = 152 GPUs:
     * ..." or "no layout fits in memory ..."; no_layout -1: that it was
     * not asked); else "" */
    char why[MESH_SIZE_WHY_MAX];
} mesh_size_row_t;

/** A sizing: made by mesh_size_create, freed by mesh_size_destroy. */
typedef struct mesh_size {
    mesh_size_goal_t goal;
    mesh_size_aim_t aim;   /* the goal as asked (aim.goal == goal) */
    double margin;         /* MESH_SIZE_DEADLINE: the time margin the runs were judged with */
    int lo, hi;            /* the node counts planned, lo..hi */
    int n_rows;            /* hi - lo + 1 */
    mesh_size_row_t *rows; /* rows[i].nodes == lo + i; owned by the sizing */
    int chosen;            /* index into rows of the choice; -1 when nothing fits */
    /* the choice and why, one line ("12 nodes: the fewest of 1-64 on which
     * a layout fits"); when nothing fits, why not and what would */
    char reason[MESH_SIZE_REASON_MAX];
    /* nothing fits: the fewest nodes (beyond hi) that would, as
     * mesh_plan_advice's "more nodes" finds them; 0 when none would or
     * something fits */
    int would_fit;
    /* MESH_SIZE_DEADLINE and no count's run ends in time: the row of the
     * shortest run (what would come closest); else -1 */
    int fastest;
    /* the units of planning work the sizing spent, as the controller's work
     * budget counts them (doc/design.md, "Work budget") */
    long work;
} mesh_size_t;

/**
 * Parse a goal's name ("min", "fastest" or "efficient", as the CLI's
 * --goal and the controller's --mesh-size write it) into *out.  Returns 0,
 * or -1 with err set (naming the choices) on anything else.  name and out
 * must not be NULL.
 */
MESH_API int mesh_size_goal_parse(const char *name, mesh_size_goal_t *out, mesh_error_t *err);

/** A goal's name, a static string ("by" for MESH_SIZE_DEADLINE); "?" for
 * a value out of range. */
MESH_API const char *mesh_size_goal_name(mesh_size_goal_t goal);

/**
 * Parse a goal as the CLI's --goal and the controller's --mesh-size write
 * it into *out: a name (mesh_size_goal_parse), or a deadline "by:WHEN",
 * where WHEN is a date (mesh_parse_date: "2026-12-24",
 * "2026-12-24T18:00") or a duration from now (mesh_parse_duration:
 * "7-00:00:00", "14d").  now: the current time on the clock dates are
 * read in (the front ends pass local time as seconds since 1970-01-01T00:00
 * of it, so that the library reads no clock).  A date not after now, text
 * longer than MESH_SIZE_GOAL_MAX - 1 bytes or anything else is an error.
 * Returns 0, or -1 with err set naming the forms.  text, out and err must
 * not be NULL.
 */
MESH_API int mesh_size_aim_parse(const char *text, long long now, mesh_size_aim_t *out,
                                 mesh_error_t *err);

/**
 * Bound the node range *lo..*hi by partition `name`'s `nodes:` in the
 * policy (mesh_policy_partition: that name, or a list's first, else
 * "default"; NULL or "": the job names none).  A range reaching past the
 * partition's nodes is cut to them (the controller cannot give more); the
 * partition's entry without `nodes:`, or no entry, leaves it as it is.
 *
 * Returns 0, or -1 with err set when the range is empty (*lo < 1 or *lo >
 * *hi) or lies wholly outside the partition (*lo beyond its nodes); the
 * message names the range and the partition, not an option (front ends
 * prefix their own).  pol, lo, hi and err must not be NULL.
 */
MESH_API int mesh_size_bound(const mesh_policy_t *pol, const char *name, int *lo, int *hi,
                             mesh_error_t *err);

/**
 * Size model m: plan it on lo..hi nodes of allocation a (a->nodes is
 * ignored; every other field is each count's), with pins and assume as
 * mesh_plan_create takes them, and pick a count by goal.  Counts on which
 * no layout fits are found by mesh_plan_fit_status and not priced, each
 * with its why (no layout at all, or none that fits in memory; without
 * MESH_SIZE_TABLE, where none of the layouts mesh_plan_any_fits tries is
 * valid, not asked: no_layout -1); when no count fits, one more plan on
 * the largest count that has layouts says how many nodes would
 * (mesh_size_t's would_fit).  m, a, pins and assume are not kept.
 *
 * flags: MESH_SIZE_TABLE prices every count that fits (the CLI's table);
 * 0 plans only what the choice needs (the controller's question), with the
 * same choice: MIN stops at the first count that fits; FASTEST and
 * EFFICIENT plan from hi down, each count after the first priced one only
 * for a choice that could be chosen or tie the best so far (a deadline on
 * its step), and FASTEST stops where the step's lower bound (the model's
 * FLOPs at the full peak of the training precision, from the first priced
 * count's MFU) is beyond the shortest step found (doc/design.md,
 * "Sizing").  Rows left out have fits -1.
 *
 * Returns a new sizing, which the caller frees with mesh_size_destroy, or
 * NULL with err set: an empty range (lo < 1, lo > hi), more than
 * MESH_SIZE_ROWS_MAX counts, an unknown goal (MESH_SIZE_DEADLINE, whose
 * time only mesh_size_create_aim takes, included), memory running out, or what
 * mesh_plan_create refuses (the first count's error, prefixed with it).
 * Nothing fitting is no error: chosen is then -1.  Nor is a sizing that
 * the thread's work budget stopped (the controller's, doc/design.md,
 * "Work budget"), wherever it stopped: the count it cut short and those
 * after it are not planned (fits -1, no why), chosen and fastest are -1,
 * would_fit 0, and reason says so.  Deterministic and thread-safe.  m, a
 * and err must not be NULL; pins and assume may be.
 */
MESH_API mesh_size_t *mesh_size_create(const mesh_model_t *m, const mesh_alloc_t *a, int lo, int hi,
                                       const mesh_layout_t *pins, const mesh_assumptions_t *assume,
                                       mesh_size_goal_t goal, unsigned flags, mesh_error_t *err);

/**
 * mesh_size_create for a goal as mesh_size_aim_parse gives it (aim must not
 * be NULL), which may be a deadline: MESH_SIZE_DEADLINE picks the fewest
 * nodes that fit and whose run (mesh_size_estimate of the count's choice)
 * times 1 + the time margin (assume's time_margin; NULL:
 * MESH_TIME_MARGIN_DEFAULT) is at most aim->within seconds.  Its counts
 * are planned from lo up, and without MESH_SIZE_TABLE it stops at the
 * first that is in time.  When none is, nothing is chosen (chosen -1) and
 * fastest and reason name the count of the shortest run and its length.
 * A deadline needs a budget: a spec without train.tokens or train.steps
 * is an error, as is aim->within <= 0.  Otherwise as mesh_size_create.
 */
MESH_API mesh_size_t *mesh_size_create_aim(const mesh_model_t *m, const mesh_alloc_t *a, int lo,
                                           int hi, const mesh_layout_t *pins,
                                           const mesh_assumptions_t *assume,
                                           const mesh_size_aim_t *aim, unsigned flags,
                                           mesh_error_t *err);

/** Free a sizing and its rows.  s may be NULL. */
MESH_API void mesh_size_destroy(mesh_size_t *s);

/*
 * The margin a run-time estimate needs, as a fraction added to it, from
 * the cost model's error on the published runs: on the ten Megatron-LM
 * runs of published_layouts_dev.csv (tests/unit/test_published.c, the
 * published layout priced on its own allocation) predicted over published
 * throughput is 0.95 to 1.10, median 1.035, mean 1.034, standard deviation
 * 0.042: the model is optimistic by 3% typically and by 10.4% at worst,
 * so a run takes up to about 10% longer than estimated.  The default
 * covers the mean plus 2.5 standard deviations (1.138), rounded up to 15%
 * (doc/design.md, "Run-time estimate").  The controller's time_margin=
 * defaults to it.
 */
#define MESH_TIME_MARGIN_DEFAULT 0.15

/** A run's estimated length (mesh_size_estimate). */
typedef struct mesh_estimate {
    long steps; /* optimizer steps: train.steps, or train.tokens over tokens per step, rounded up */
    double tokens;  /* tokens trained: steps * global_batch * seq_len */
    double seconds; /* steps * the step time */
} mesh_estimate_t;

/**
 * Estimate how long model m trains with step cost *c (a candidate's cost,
 * mesh_plan_best(p)->cost): its budget train.steps, or train.tokens
 * divided by global_batch * seq_len tokens per step and rounded up, times
 * c->step_seconds.  Into *out (cleared first).
 *
 * Returns 1, or 0 (with *out all zero) when the spec gives no budget.  m,
 * c and out must not be NULL.
 */
MESH_API int mesh_size_estimate(const mesh_model_t *m, const mesh_cost_t *c, mesh_estimate_t *out);

/**
 * The time limit that covers estimate *e with a margin (a fraction of it,
 * as time_margin= gives it; negative counts as 0): its seconds times
 * 1 + margin, in whole minutes rounded up, at least 1 and at most
 * 999,999,999 (more than Slurm's limits can hold).  e must not be NULL.
 */
MESH_API long mesh_size_limit_minutes(const mesh_estimate_t *e, double margin);

/**
 * minutes (>= 0) as Slurm's --time writes a limit: "H:MM:00", or
 * "D-HH:MM:00" from a day on, into buf[len] (truncated to fit,
 * NUL-terminated when len > 0).  Returns buf.
 */
MESH_API const char *mesh_size_slurm_time(long minutes, char *buf, size_t len);

/**
 * The MaxTime of partition `name` (a list's first; NULL or "": the one
 * marked Default=YES, else the only one) in text, the output of `scontrol
 * show partition`: records that each begin with PartitionName=NAME, fields
 * KEY=VALUE between blanks and newlines (slurm.conf's PartitionName lines
 * read alike).  Into
 * *minutes: mesh_parse_max_time's (0: UNLIMITED).  Returns 0, or -1 with
 * err set: no such partition (or, without a name, none or several and no
 * default), the record gives no MaxTime or one that is no time limit, or
 * the text is no such output (a control byte other than a blank or a
 * newline, a name or MaxTime of MESH_SIZE_GOAL_MAX bytes or more).  text,
 * minutes and err must not be NULL.
 */
MESH_API int mesh_size_max_time_parse(const char *text, const char *name, long *minutes,
                                      mesh_error_t *err);

/** How a run is cut into jobs a partition's time limit allows (mesh_size_chain). */
typedef struct mesh_chain {
    long need;    /* the whole run's limit with the margin, minutes (mesh_size_limit_minutes) */
    int jobs;     /* 1: one job covers it; more: a chain, each after the one before */
    long minutes; /* each job's time limit: need / jobs, rounded up (at most max_minutes) */
} mesh_chain_t;

/**
 * Cut the run *e (with margin, as mesh_size_limit_minutes) into jobs of at
 * most max_minutes each (a partition's MaxTime; 0: no limit, one job):
 * need over max_minutes, rounded up, jobs of equal length.  A chain
 * counts neither the queue's wait between its jobs nor the time a job
 * spends loading the checkpoint the one before saved (doc/design.md,
 * "Run-time estimate").  Into *out (cleared first); returns out->jobs.  e
 * and out must not be NULL.
 */
MESH_API int mesh_size_chain(const mesh_estimate_t *e, double margin, long max_minutes,
                             mesh_chain_t *out);

/**
 * The commands that submit chain *c as Slurm chains jobs: every job of one
 * name with --dependency=singleton runs after the one before it ends
 * (sbatch(1)), as one shell line into buf[len] (truncated to fit):
 * "for i in $(seq N); do sbatch --job-name=NAME --dependency=singleton
 * --time=T -N NODES SCRIPT; done" (N 1: the sbatch alone).  name and
 * script: the front end's placeholders or the job's own.  Returns buf.
 */
MESH_API const char *mesh_size_chain_recipe(const mesh_chain_t *c, int nodes, const char *name,
                                            const char *script, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
