/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan(1)'s own header: the options every command reads, the commands,
 * and the helpers they share.  tools/cli.c holds the tables and the
 * parsing; tools/model.c builds the model, allocation and plan the
 * planning commands share; each tools/cmd_NAME.c is one command.
 *
 * Exit status: 0 fits (or success), 1 does not fit, 2 bad input.
 */
#ifndef MESHPLAN_CLI_H
#define MESHPLAN_CLI_H

#include "meshplan.h"

enum { EXIT_FITS = 0, EXIT_NOFIT = 1, EXIT_BADINPUT = 2 };

/* The commands, as bits of the options' masks. */
enum {
    C_PLAN = 1 << 0,
    C_CHECK = 1 << 1,
    C_RANKS = 1 << 2,
    C_ENV = 1 << 3,
    C_TOPO = 1 << 4,
    C_GPUS = 1 << 5,
    C_PRESETS = 1 << 6,
    C_VERSION = 1 << 7,
    C_HELP = 1 << 8,
    C_SIZE = 1 << 9,
    C_POLICYCHECK = 1 << 10,
    C_CALIBRATE = 1 << 11,
};
#define C_REPORT (C_PLAN | C_CHECK | C_RANKS) /* a report, text or JSON */
#define C_MODEL  (C_REPORT | C_ENV)           /* they plan a model */
#define C_SIZED  (C_MODEL | C_SIZE)           /* they read a model's spec */
#define C_POLICY (C_SIZED | C_TOPO | C_GPUS | C_PRESETS | C_POLICYCHECK) /* they read a policy */
#define C_JSON   (C_POLICY | C_VERSION | C_CALIBRATE)                    /* they have a JSON form */
#define C_ALL    (C_POLICY | C_VERSION | C_HELP | C_CALIBRATE)

/* The entries of a table. */
#define MESH_CLI_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

#define SETS_MAX 64   /* --set options a command line may hold */
#define LOGS_MAX 4096 /* logs one calibrate may read */

typedef struct command command_t;

/* What the command line says, each member set by its row of cli.c's
 * option table. */
typedef struct options {
    const command_t *cmd;
    const char *model, *gpu, *mesh, *policy, *models_dir, *master_addr, *topology, *svg;
    const char *partition;
    const char *policy_path; /* the policy file read (load_policy); NULL: none */
    const char *from, *keep; /* --from FILE and --keep DIMS: a restart */
    mesh_restart_t restart;  /* read from --from (have_restart) */
    int have_restart;
    double gpu_mem, host_mem;
    double headroom; /* --headroom: the spec's train.headroom (have_headroom) */
    int have_headroom;
    long long nodes, gpus_per_node, nvlink, node, local, job_id, step_id;
    int nodes_lo, nodes_hi;     /* size's --nodes LO-HI (N: N-N) */
    const char *goal;           /* size's --goal as given; NULL: min */
    const char *now;            /* size's --now DATE; NULL: the clock */
    const char *partition_info; /* size's --partition-info FILE ('-': stdin) */
    int json, shell, have_export, no_pictures;
    int calib_report;   /* calibrate --report */
    const char *output; /* calibrate -o FILE */
    const char **logs;  /* calibrate's LOG arguments (argv's) */
    int n_logs;
    mesh_export_t export_mode;
    /* --set: spec keys (for mesh_spec_load_with) and policy keys, in order */
    const char *spec_sets[SETS_MAX], *policy_sets[SETS_MAX];
    int n_spec_sets, n_policy_sets;
    mesh_policy_t pol;
} options_t;

struct command {
    const char *name;
    unsigned bit;
    int (*run)(const options_t *);
    const char *synopsis; /* after "usage: meshplan NAME " */
    const char *about;    /* one line in the list of commands */
    const char *more;     /* its --help's paragraph; NULL: about */
};

/* ---- cli.c ---- */

/* A bad-input failure: one line on stderr, exit status 2. */
int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print s and free it; out of memory when s is NULL. */
int print_owned(char *s);
/* A message of lines to stderr, each after "meshplan: " and `what`, as srun
 * prints the plugin's. */
void say_lines(const char *what, const char *msg);
/* s as a JSON string, by the library's one escaper. */
void json_string(const char *s);

/* ---- model.c ---- */

/* The preset directories, in the library's order (mesh_spec_dirs_default). */
void preset_dirs(const options_t *o, mesh_spec_dirs_t *d);
/* --topology FILE.xml, or "this" for this machine; NULL without it. */
int load_topology(const options_t *o, mesh_topo_t **out);
/* The model, with the spec keys of --set applied as it is loaded. */
int load_model(const options_t *o, mesh_model_t *model, mesh_error_t *err);
/* The pins of --mesh, with the dimensions --from keeps. */
int restart_pins(const options_t *o, const mesh_model_t *m, mesh_layout_t *pins, mesh_error_t *err);
/* An error planning with the kept dimensions says they were kept. */
void restart_error(const options_t *o, mesh_error_t *err);
/* Whether --partition can be judged as given: the GPU comes from the
 * policy's partitions (no --gpu, --gpu-mem, --nvlink or --topology beside
 * it), and each partition named is one the policy describes. */
int partition_given(const options_t *o, mesh_error_t *err);
/* The plan a planning command needs, with its topology (NULL without
 * --topology) and, with --partition, the controller's verdict. */
int make_plan(const options_t *o, mesh_plan_t **out, mesh_topo_t **topo, mesh_submit_t *verdict);

/* ---- cmd_plan.c: plan, and the reports check and ranks print ---- */

typedef char *(*report_fn)(const mesh_plan_t *);
/* Plan, print one report, exit 0 if the layout fits and 1 if not. */
int report(const options_t *o, report_fn text, report_fn json, int explain);

/* ---- the commands, one file each ---- */

int cmd_plan(const options_t *o);
int cmd_check(const options_t *o);
int cmd_ranks(const options_t *o);
int cmd_env(const options_t *o);
int cmd_topo(const options_t *o);
int cmd_gpus(const options_t *o);
int cmd_policy(const options_t *o);
int cmd_presets(const options_t *o);
int cmd_version(const options_t *o);
int cmd_size(const options_t *o);
int cmd_calibrate(const options_t *o);

#endif
