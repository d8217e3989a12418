/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan(1): plan, check and explain 3D-parallel layouts, and print the
 * rank map and the per-task variables the SPANK plugin exports.
 *
 * Two tables drive it: the commands (commands[], one tools/cmd_NAME.c each)
 * and the options (opts[]), whose rows say which commands take an option,
 * how its value is read and which member of options_t it fills; they drive
 * the parsing, each command's --help, the errors and, through --help, the
 * bash completion.  Adding an option is a row and its member.  Everything
 * meshplan prints goes to stdout's stream, which main() closes and checks,
 * so that a full disk is an error and not a silent truncation.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define HELPED (-1) /* parse_args printed the command's help: exit 0 */

#ifndef MESH_SYSTEM_POLICY /* the policy job_submit/meshplan reads (Makefile.am) */
#define MESH_SYSTEM_POLICY "/etc/slurm/meshplan.yaml"
#endif

/* How an option's value is read into its member of options_t. */
typedef enum opt_kind {
    OPT_FLAG, /* no value; int member set to 1 */
    OPT_TEXT, /* the argument itself; const char * member */
    OPT_INT,  /* an integer in min..max; long long member */
    OPT_SIZE, /* bytes (80GB, 80GiB) in min..max; double member */
    OPT_READ, /* read(): values of their own shape (member unused) */
    OPT_HELP, /* --help: parse_args prints the command's help */
} opt_kind_t;

/* An option: its name without "--", its argument as --help names it (NULL:
 * none), the commands that take it, how it is read and into which member,
 * and its help (lines joined by '\n'). */
typedef struct opt {
    const char *name, *arg;
    unsigned cmds;
    opt_kind_t kind;
    size_t off; /* the member of options_t */
    double min, max;
    int (*read)(options_t *o, const char *v);
    const char *help;
    const char *(*help_of)(void); /* a help made at run time, in place of help */
    char letter;                  /* a short name, as Slurm's (-N N); 0: none */
} opt_t;

static int read_nodes(options_t *o, const char *v);
static int read_goal(options_t *o, const char *v);
static int read_headroom(options_t *o, const char *v);
static int read_set(options_t *o, const char *v);
static int read_export(options_t *o, const char *v);
static int read_bind(options_t *o, const char *v);
static const char *mesh_help(void);

/* The member's offset, refused at compile time unless the member is of the
 * size its kind writes (a row cannot point a long long at an int). */
#define TO(member, type)                                                                           \
    .off = offsetof(options_t, member) +                                                           \
           0 * sizeof(char[sizeof(((options_t *)0)->member) == sizeof(type) ? 1 : -1])
#define FLAG(member)         OPT_FLAG, TO(member, int)
#define TEXT(member)         OPT_TEXT, TO(member, const char *)
#define INT(member, lo, hi)  OPT_INT, TO(member, long long), .min = (lo), .max = (hi)
#define SIZE(member, lo, hi) OPT_SIZE, TO(member, double), .min = (lo), .max = (hi)
#define READ(fn)             OPT_READ, .read = (fn)

/* Every option, in the order --help lists them. */
static const opt_t opts[] = {
    {"model", "SPEC", C_SIZED, TEXT(model),
     .help = "preset name (meshplan presets), a spec .yaml file, or a Hugging Face config.json"},
    {"nodes", "N", C_SIZED, READ(read_nodes),
     .help = "nodes in the allocation (size: a range LO-HI, or N)", .letter = 'N'},
    {"gpus-per-node", "G", C_SIZED, INT(gpus_per_node, 1, 1024), .help = "GPUs (= tasks) per node"},
    {"gpu", "NAME", C_SIZED, TEXT(gpu), .help = "GPU model from the table (meshplan gpus)"},
    {"gpu-mem", "SIZE", C_SIZED, SIZE(gpu_mem, 1e8, 1e14),
     .help = "GPU memory (80GB = 80e9, 80GiB = 80*2^30); overrides --gpu's"},
    {"nvlink", "N", C_SIZED, INT(nvlink, 1, 1024),
     .help = "GPUs per NVLink island (default: the GPU's)"},
    {"host-mem", "SIZE", C_SIZED, SIZE(host_mem, 1e8, 1e16),
     .help = "host memory per node for optimizer offload, as the job's --mem\n"
             "(default: unknown, no offload)"},
    {"topology", "FILE.xml", C_MODEL | C_TOPO, TEXT(topology),
     .help = "a node's hwloc topology, in place of --gpu, --gpu-mem, --nvlink\n"
             "(and of --gpus-per-node); 'this' for this machine"},
    {"partition", "NAME", C_PLAN | C_CHECK | C_SIZE, TEXT(partition),
     .help = "judge the job as job_submit/meshplan does when it is submitted\n"
             "to partition NAME (or A,B,...): on the GPU the policy's\n"
             "partitions: give it, with the controller's verdict on stderr"},
    {"mesh", "STRING", C_SIZED, TEXT(mesh), .help_of = mesh_help},
    {"from", "FILE", C_SIZED, TEXT(from),
     .help = "restart from the previous run's layout, saved next to its\n"
             "checkpoint (its plan --json, or $MESH_PLAN): keep the\n"
             "dimensions the checkpoint is sharded by, and the global batch"},
    {"keep", "DIMS", C_SIZED, TEXT(keep),
     .help = "the dimensions --from keeps: tp,pp,vpp,cp,dp,ep,etp,zero or none\n"
             "(default tp,pp,vpp,ep,etp: what a checkpoint is sharded by)"},
    {"headroom", "F", C_SIZED, READ(read_headroom),
     .help = "leave this fraction of the usable GPU memory free (the spec's\n"
             "train.headroom; the policy's headroom= is the least)"},
    {"goal", "GOAL", C_SIZE, READ(read_goal),
     .help = "min (fewest nodes that fit; default), fastest (shortest step),\n"
             "efficient (most tokens per GPU-hour), or by:WHEN (the fewest nodes\n"
             "whose run ends by WHEN: a date 2026-12-24[T18:00] or a duration\n"
             "7-00:00:00, 14d; needs train.tokens or train.steps)"},
    {"now", "DATE", C_SIZE, TEXT(now), .help = "when by: counts from (default: the clock, local)"},
    {"partition-info", "FILE", C_SIZE, TEXT(partition_info),
     .help = "`scontrol show partition` output ('-': stdin): its MaxTime"},
    {"policy", "FILE", C_POLICY, TEXT(policy),
     .help = "admin policy (YAML), as the plugin reads it; 'none' for the\n"
             "defaults (default: $" MESH_POLICY_ENV ", else " MESH_SYSTEM_POLICY ",\n"
             "when it exists)"},
    {"set", "KEY=VALUE", C_POLICY, READ(read_set),
     .help = "override a spec key (train.seq_len=32768) or set a policy key\n"
             "(reserve=0.1), on top of --model and --policy"},
    {"models-dir", "DIR", C_SIZED | C_PRESETS, TEXT(models_dir),
     .help = "look for presets here first"},
    {"json", NULL, C_JSON, FLAG(json), .help = "machine-readable output"},
    {"shell", NULL, C_ENV, FLAG(shell),
     .help = "export NAME='value' lines, after unset lines for ours not given,\n"
             "for eval \"$(meshplan env --shell ...)\""},
    {"svg", "FILE", C_REPORT | C_CALIBRATE, TEXT(svg),
     .help = "also write the rank map, pipeline and memory pictures as SVG\n"
             "(calibrate: predicted against measured step times);\n"
             "'-': the SVG alone, on standard output, instead of the report"},
    {"report", NULL, C_CALIBRATE, FLAG(calib_report),
     .help = "a row for every job: predicted and measured step time, before\n"
             "and after the calibration, and the peak memory"},
    {"output", "FILE", C_CALIBRATE, TEXT(output),
     .help = "write the calibration file here (the policy's calibration:)", .letter = 'o'},
    {"no-pictures", NULL, C_REPORT, FLAG(no_pictures),
     .help = "leave the pictures out of the text"},
    {"node", "I", C_ENV, INT(node, 0, 1 << 20), .help = "node index within the step (default 0)"},
    {"local", "L", C_ENV, INT(local, 0, 1024), .help = "task index within the node (default 0)"},
    {"export", "MODE", C_ENV, READ(read_export),
     .help = "torch | torchrun | mesh (default: the policy's) | batch (a batch script's)"},
    {"master-addr", "HOST", C_ENV, TEXT(master_addr),
     .help = "first host of the step (default localhost)"},
    {"job-id", "N", C_ENV, INT(job_id, 0, UINT_MAX),
     .help = "the job's id, for MASTER_PORT (default 0)"},
    {"step-id", "N", C_ENV, INT(step_id, 0, UINT_MAX),
     .help = "the step's id, for MASTER_PORT (default 0)"},
    {"bind", "gpu|none", C_MODEL | C_TOPO, READ(read_bind),
     .help = "narrow each task to its GPU, island by island (with --topology)"},
    {"help", NULL, C_ALL, OPT_HELP, .help = "describe the command"},
};
#define N_OPTS MESH_CLI_LEN(opts)

#define ALLOC_SYNOPSIS                                                                             \
    "--model SPEC --nodes N --gpus-per-node G (--gpu NAME | --gpu-mem SIZE) [options]"

static const command_t commands[] = {
    {"plan", C_PLAN, cmd_plan, ALLOC_SYNOPSIS, "pick the fastest layout that fits, and explain it",
     "Search every valid layout, keep those that fit, pick the fastest (simplest on\n"
     "near-ties) and explain why.  With --from, a restart: what is kept, what\n"
     "changed (MESH_RESHARD) and how the global batch stays constant."},
    {"check", C_CHECK, cmd_check, ALLOC_SYNOPSIS " (--mesh STRING | --from FILE)",
     "judge the layout given by --mesh (exit 0 fits, 1 does not)",
     "Judge the layout of --mesh, or the one --from keeps (fields left out are\n"
     "planned): exit 0 if it fits, 1 if not, with what would."},
    {"ranks", C_RANKS, cmd_ranks, ALLOC_SYNOPSIS, "print the rank map of the planned layout",
     "Print every rank's node, local index and (tp, cp, dp, pp) coordinates; when\n"
     "nothing fits, the closest layout's, and why on stderr (exit 1)."},
    {"env", C_ENV, cmd_env, ALLOC_SYNOPSIS,
     "print one task's variables, as the SPANK plugin exports them",
     "Print the variables of task (--node, --local), exactly as the plugin exports\n"
     "them: one NAME=value a line, or export lines (--shell), or one JSON object\n"
     "(--json)."},
    {"topo", C_TOPO, cmd_topo, "[--topology FILE.xml] [options]",
     "show a node's GPUs, islands and NUMA, and what the planner assumes",
     "Show the GPUs hwloc finds (this machine, or an exported XML topology): bus\n"
     "id, model, memory, NUMA node, CPUs, NVLink/XGMI islands, and what the\n"
     "planner will assume."},
    {"size", C_SIZE, cmd_size,
     "--model SPEC --nodes LO-HI --gpus-per-node G (--gpu NAME | --partition NAME) [options]",
     "plan every node count of a range and pick one by a goal",
     "Plan every node count of --nodes LO-HI (cut to the partition's nodes with\n"
     "--partition) and pick one by --goal, as job_submit/meshplan narrows a job\n"
     "submitted with a node range: a table of counts, layouts, step times, tokens\n"
     "per GPU-hour and memory, the choice marked with its reason.  Exit 0 when a\n"
     "count fits, 1 when none does (with how many nodes would)."},
    {"gpus", C_GPUS, cmd_gpus, "[options]", "list the GPU table", NULL},
    {"policy", C_POLICYCHECK, cmd_policy, "check [FILE] [--set KEY=VALUE] [--json]",
     "check an admin policy: its settings, partitions, warnings and verdict",
     "Read the policy the plugins would read (FILE, else --policy, $" MESH_POLICY_ENV
     ", else\n" MESH_SYSTEM_POLICY ") and print every setting as it takes effect (marked\n"
     "where the policy sets it), each partition with the GPU, memory and nodes\n"
     "plans get on it, warnings for what reads but is likely not meant, and OK.\n"
     "A policy that does not read gets its one-line error: exit 2.  The check\n"
     "before a slurmctld restart."},
    {"presets", C_PRESETS, cmd_presets, "[options]", "list the model presets", NULL},
    {"calibrate", C_CALIBRATE, cmd_calibrate, "LOG... [--report] [--json] [--svg FILE] [-o FILE]",
     "fit the cost model to the site's own Megatron-LM jobs",
     "Read jobs' logs (the plan record --mesh-explain writes, and Megatron-LM's\n"
     "elapsed time per iteration and memory report), pair each job's measured\n"
     "step time and peak memory with its plan's prediction, and fit per GPU model\n"
     "a compute, a network and a memory factor within bounds.  -o FILE writes\n"
     "them for the policy's calibration:.  Logs that are not one job's plainly\n"
     "are skipped with the reason.  Exit 0, 1 when a factor would leave its\n"
     "bounds (refused, with the evidence), 2 on bad input."},
    {"version", C_VERSION, cmd_version, "[--json]",
     "print the versions of meshplan and of the libmeshplan it runs with",
     "Print meshplan's version and the version of the libmeshplan it runs with (also\n"
     "meshplan --version)."},
    {"help", C_HELP, NULL, "[COMMAND]", "describe meshplan, or a command",
     "Describe meshplan, or COMMAND as 'meshplan COMMAND --help' does."},
};
#define N_COMMANDS MESH_CLI_LEN(commands)

int bad(const char *fmt, ...)
{
    va_list ap;
    fputs("meshplan: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return EXIT_BADINPUT;
}

int print_owned(char *s)
{
    if (!s)
        return bad("out of memory");
    fputs(s, stdout);
    free(s);
    return 0;
}

/* A message of lines to stderr, each after "meshplan: " and `what`, as
 * srun prints the plugin's. */
void say_lines(const char *what, const char *msg)
{
    fflush(stdout); /* after what was printed before it */
    for (const char *l = msg; *l;) {
        size_t n = strcspn(l, "\n");
        fprintf(stderr, "meshplan: %s%.*s\n", what, (int)n, l);
        l += n + (l[n] == '\n');
    }
}

/* The library's escaper, so that every JSON meshplan writes escapes alike. */
void json_string(const char *s)
{
    char *q = mesh_json_string(s);
    fputs(q ? q : "null", stdout);
    free(q);
}

/* Lines of text, each indented by `indent` spaces after the first. */
static void put_lines(FILE *f, const char *text, int indent)
{
    for (const char *l = text; *l;) {
        size_t n = strcspn(l, "\n");
        fprintf(f, "%.*s\n", (int)n, l);
        l += n + (l[n] == '\n');
        if (*l)
            fprintf(f, "%*s", indent, "");
    }
}

static void usage_all(FILE *f)
{
    fprintf(f, "usage: meshplan COMMAND [OPTIONS]\n\ncommands:\n");
    for (int i = 0; i < N_COMMANDS; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].about);
    fprintf(f, "\n'meshplan COMMAND --help' (or 'meshplan help COMMAND') describes each;\n"
               "'meshplan --version' says which meshplan this is.  Exit status: 0 fits,\n"
               "1 does not fit, 2 bad input.\n");
}

/* A command's --help: its synopsis, what it does, and its options from the table. */
static void usage(FILE *f, const command_t *c)
{
    fprintf(f, "usage: meshplan %s %s\n\n", c->name, c->synopsis);
    put_lines(f, c->more ? c->more : c->about, 0);
    fprintf(f, "\noptions:\n");
    for (int i = 0; i < N_OPTS; i++) {
        if (!(opts[i].cmds & c->bit))
            continue;
        char head[48], letter[16] = "";
        if (opts[i].letter)
            snprintf(letter, sizeof(letter), ", -%c%s%s", opts[i].letter, opts[i].arg ? " " : "",
                     opts[i].arg ? opts[i].arg : "");
        snprintf(head, sizeof(head), "--%s%s%s%s", opts[i].name, opts[i].arg ? " " : "",
                 opts[i].arg ? opts[i].arg : "", letter);
        if (strlen(head) > 21)
            fprintf(f, "  %s\n%24s", head, "");
        else
            fprintf(f, "  %-21s ", head);
        put_lines(f, opts[i].help_of ? opts[i].help_of() : opts[i].help, 24);
    }
}

static const command_t *find_command(const char *name)
{
    for (int i = 0; i < N_COMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

static int unknown_command(const char *name)
{
    const char *names[N_COMMANDS], *meant;
    char list[128] = "";
    for (int i = 0; i < N_COMMANDS; i++) {
        names[i] = commands[i].name;
        snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "", names[i]);
    }
    meant = mesh_closest_name(name, names, N_COMMANDS);
    return bad("unknown command '%.40s'%s%s%s (commands: %s)", name, meant ? "; did you mean " : "",
               meant ? meant : "", meant ? "?" : "", list);
}

/* An option the command does not take: the typo it most likely is, else
 * the commands that take it. */
/* What a Slurm user writes for an option of ours (sbatch's and srun's
 * names): said as ours before any typo is guessed ("--gpus" is no typo of
 * --gpu). */
static int find_option(const char *arg, size_t len);

static const struct {
    const char *slurm, *ours, *how;
} slurm_habits[] = {
    {"gpus", "gpus-per-node", "--nodes N --gpus-per-node G: meshplan plans whole nodes"},
    {"ntasks-per-node", "gpus-per-node", "--gpus-per-node G: one task per GPU"},
    {"gres", "gpus-per-node", "--gpus-per-node G, and --gpu NAME for the model"},
    {"gpus-per-task", "gpus-per-node", "--gpus-per-node G: one GPU per task"},
    {"mem", "host-mem", "--host-mem SIZE (the job's --mem per node)"},
};

static int unknown_option(const command_t *c, const char *arg, size_t len)
{
    const char *names[N_OPTS], *meant;
    char word[64], others[128] = "";
    int n = 0;
    snprintf(word, sizeof(word), "%.*s", (int)(len < 60 ? len : 60), arg);
    for (int i = 0; i < MESH_CLI_LEN(slurm_habits); i++) {
        int k = find_option(slurm_habits[i].ours, strlen(slurm_habits[i].ours));
        if (strcmp(word, slurm_habits[i].slurm) == 0 && k >= 0 && (opts[k].cmds & c->bit))
            return bad("--%s: unknown option for %s (Slurm's); here it is %s", word, c->name,
                       slurm_habits[i].how);
    }
    for (int i = 0; i < N_OPTS; i++)
        if (opts[i].cmds & c->bit)
            names[n++] = opts[i].name;
    meant = mesh_closest_name(word, names, n);
    if (meant)
        return bad("--%s: unknown option for %s; did you mean --%s?", word, c->name, meant);
    for (int i = 0; i < N_OPTS; i++)
        if (strcmp(opts[i].name, word) == 0)
            for (int k = 0; k < N_COMMANDS; k++)
                if (opts[i].cmds & commands[k].bit)
                    snprintf(others + strlen(others), sizeof(others) - strlen(others), "%s%s",
                             others[0] ? ", " : "", commands[k].name);
    if (others[0])
        return bad("--%s: unknown option for %s (an option of %s)", word, c->name, others);
    return bad("--%s: unknown option for %s (see meshplan %s --help)", word, c->name, c->name);
}

/* The option named by arg[0..len), or -1. */
static int find_option(const char *arg, size_t len)
{
    for (int i = 0; i < N_OPTS; i++)
        if (strlen(opts[i].name) == len && strncmp(opts[i].name, arg, len) == 0)
            return i;
    return -1;
}

/* Whether a --set names a spec key rather than a policy one: a key of the
 * spec, or any key of one of its sections ("train.x": the spec refuses it
 * with its own words). */
static int spec_set(const char *set)
{
    size_t k = strcspn(set, "="), dot = strcspn(set, ".");
    for (int i = 0; mesh_spec_key_name(i); i++) {
        const char *name = mesh_spec_key_name(i);
        if ((strlen(name) == k && strncmp(set, name, k) == 0) ||
            (dot < k && strncmp(set, name, dot + 1) == 0))
            return 1;
    }
    return k == 6 && strncmp(set, "preset", 6) == 0;
}

/* --mesh's help: the keys of the library's one table (so that none is left
 * out), wrapped after a comma to the width of the other options' help. */
static const char *mesh_help(void)
{
    static char help[640];
    const char *u = mesh_layout_keys_usage();
    size_t n = (size_t)snprintf(help, sizeof(help), "pin fields: "), col = n;
    while (*u && n + 2 < sizeof(help) / 2) {
        size_t item = strcspn(u, ",");
        item += u[item] == ',';
        if (col + item > 68) {
            help[n++] = '\n';
            col = 0;
        }
        memcpy(help + n, u, item);
        n += item;
        col += item;
        u += item;
    }
    snprintf(help + n, sizeof(help) - n,
             "\n(R: none, selective, full or full:N layers per stage; ep, etp: the\n"
             "experts' parallelism, for a MoE model)");
    return help;
}

/* size's --nodes: "LO-HI", or "N" for N-N; the other commands' a count. */
static int read_nodes(options_t *o, const char *v)
{
    mesh_error_t err;
    long long lo, hi;
    char part[32];
    size_t n = strcspn(v, "-");
    if (o->cmd->bit != C_SIZE)
        return mesh_parse_int(v, "--nodes", 1, 1 << 20, &o->nodes, &err) < 0 ? bad("%s", err.msg)
                                                                             : 0;
    if (n >= sizeof(part) || (v[n] && !v[n + 1]))
        return bad("--nodes: '%.40s' is not a node count or a range LO-HI", v);
    snprintf(part, sizeof(part), "%.*s", (int)n, v);
    if (mesh_parse_int(part, "--nodes", 1, 1 << 20, &lo, &err) < 0 ||
        mesh_parse_int(v[n] ? v + n + 1 : part, "--nodes", 1, 1 << 20, &hi, &err) < 0)
        return bad("%s (a node count or a range LO-HI)", err.msg);
    if (lo > hi)
        return bad("--nodes %.40s: the range is empty (LO must not be above HI)", v);
    o->nodes_lo = (int)lo;
    o->nodes_hi = (int)hi;
    o->nodes = lo;
    return 0;
}

/* --goal: checked here against the clock (by:DATE), read again by size
 * against --now, which may follow it */
static int read_goal(options_t *o, const char *v)
{
    mesh_error_t err;
    mesh_size_aim_t aim;
    if (mesh_size_aim_parse(v, 0, &aim, &err) < 0)
        return mesh_error_prefix(&err, "--goal"), bad("%s", err.msg);
    o->goal = v;
    return 0;
}

static int read_headroom(options_t *o, const char *v)
{
    mesh_error_t err;
    if (mesh_parse_double(v, "--headroom", 0, MESH_HEADROOM_MAX, &o->headroom, &err) < 0)
        return bad("%s (a fraction of the usable GPU memory: 0.1 leaves a tenth free)", err.msg);
    o->have_headroom = 1;
    return 0;
}

/* A key set from the command line: a spec key (to the spec as it is
 * loaded) or a policy key (to the policy, after it is read). */
static int add_set(options_t *o, const char *set, int spec)
{
    if (o->n_spec_sets + o->n_policy_sets == SETS_MAX)
        return bad("--set: at most %d times", SETS_MAX);
    if (spec)
        o->spec_sets[o->n_spec_sets++] = set;
    else
        o->policy_sets[o->n_policy_sets++] = set;
    return 0;
}

static int read_set(options_t *o, const char *v)
{
    return add_set(o, v, spec_set(v));
}

static int read_export(options_t *o, const char *v)
{
    if (mesh_export_parse(v, &o->export_mode) < 0)
        return bad("--export: use torch, torchrun, mesh or batch");
    o->have_export = 1;
    return 0;
}

/* --bind is the policy's bind= for this command */
static int read_bind(options_t *o, const char *v)
{
    if (strcmp(v, "gpu") && strcmp(v, "none"))
        return bad("--bind: use gpu or none");
    return add_set(o, strcmp(v, "gpu") == 0 ? "bind=gpu" : "bind=none", 0);
}

/* Store one option's value where its row says. */
static int set_option(options_t *o, const opt_t *op, const char *v)
{
    mesh_error_t err;
    char label[40];
    void *to = (char *)o + op->off;
    snprintf(label, sizeof(label), "--%s", op->name);
    switch (op->kind) {
    case OPT_FLAG: *(int *)to = 1; return 0;
    case OPT_TEXT: *(const char **)to = v; return 0;
    case OPT_INT:
        if (mesh_parse_int(v, label, (long long)op->min, (long long)op->max, to, &err) < 0)
            return bad("%s", err.msg);
        return 0;
    case OPT_SIZE:
        return mesh_parse_size(v, label, op->min, op->max, to, &err) < 0 ? bad("%s", err.msg) : 0;
    case OPT_READ: return op->read(o, v);
    case OPT_HELP: return 0;
    }
    return 0;
}

/* A short name ("-N") as its option's long one ("--nodes"), into buf;
 * anything else as it is. */
static const char *long_form(const char *arg, char *buf, size_t len)
{
    for (int i = 0; arg[0] == '-' && arg[1] && arg[1] != '-' && !arg[2] && i < N_OPTS; i++)
        if (opts[i].letter == arg[1])
            return snprintf(buf, len, "--%s", opts[i].name), buf;
    return arg;
}

/* Read argv[1..argc) (argv[0] is the command) into *o: "--name VALUE",
 * "--name=VALUE" or "--name", names matched whole (an abbreviation is a
 * typo: --node is not --nodes), each only where the command takes it. */
static int parse_args(int argc, char **argv, options_t *o)
{
    const command_t *c = o->cmd;
    for (int i = 1; i < argc; i++) {
        char full[64];
        const char *a = long_form(argv[i], full, sizeof(full));
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout, c);
            return HELPED;
        }
        if (c->bit & C_CALIBRATE && (a[0] != '-' || !a[1])) { /* a LOG, or '-': stdin */
            if (o->n_logs == LOGS_MAX)
                return bad("more than %d logs: calibrate on fewer at a time", LOGS_MAX);
            o->logs[o->n_logs++] = a;
            continue;
        }
        if (strncmp(a, "--", 2) != 0 || !a[2])
            return bad("unexpected argument '%.60s' (see meshplan %s --help)", a, c->name);
        size_t len = strcspn(a + 2, "=");
        int id = find_option(a + 2, len);
        if (id < 0 || !(opts[id].cmds & c->bit))
            return unknown_option(c, a + 2, len);
        const char *v = a[2 + len] == '=' ? a + 3 + len : NULL;
        if (!opts[id].arg && v)
            return bad("--%s takes no value", opts[id].name);
        if (opts[id].arg && !v) {
            /* "--model --nodes 2" lacks the model, and is no model "--nodes" */
            if (i + 1 == argc || strncmp(argv[i + 1], "--", 2) == 0)
                return bad("--%s needs a value (%s)", opts[id].name, opts[id].arg);
            v = argv[++i];
        }
        int rc = set_option(o, &opts[id], v);
        if (rc)
            return rc;
    }
    if (o->json && o->shell)
        return bad("--json and --shell: choose one");
    if (o->svg && strcmp(o->svg, "-") == 0 && o->json)
        return bad("--svg - and --json both write to standard output: choose one");
    if (o->keep && !o->from)
        return bad("--keep needs --from FILE: the previous run's layout (its meshplan plan "
                   "--json, or $MESH_PLAN, saved next to its checkpoint)");
    if (o->n_spec_sets && !(c->bit & C_SIZED))
        return bad("--set %.60s: a key of the model's spec, which %s does not read",
                   o->spec_sets[0], c->name);
    return 0;
}

/* The policy: --policy FILE, none with --policy none, else the system's
 * (the file job_submit/meshplan reads: $MESHPLAN_POLICY, else
 * MESH_SYSTEM_POLICY) when it exists, said on stderr; then the policy
 * keys of --set. */
static int load_policy(options_t *o)
{
    mesh_error_t err;
    const char *path = o->policy, *env = getenv(MESH_POLICY_ENV), *whose = NULL;
    if (!path) {
        /* not asked for: say whose it is, so that a surprise has a name */
        whose = env && *env ? "$" MESH_POLICY_ENV "'s" : "the system's";
        path = env && *env ? env : MESH_SYSTEM_POLICY;
        /* the system's may be absent (nothing installed); one the user
         * named in the environment and got wrong is no policy to ignore */
        if (env && *env && strcmp(env, "none") != 0 && access(env, F_OK) != 0)
            return bad("$%s names %.200s, which does not exist: fix it, unset it, or set it to "
                       "none to plan without a policy",
                       MESH_POLICY_ENV, env);
        if (strcmp(path, "none") == 0 || access(path, F_OK) != 0)
            path = NULL;
    } else if (strcmp(path, "none") == 0) {
        path = NULL;
    }
    if (path && mesh_policy_load(&o->pol, path, &err) < 0)
        return whose ? bad("%s (%s policy; --policy none plans without it)", err.msg, whose)
                     : bad("%s", err.msg);
    if (path && whose && !(o->cmd->bit & C_POLICYCHECK))
        fprintf(stderr, "meshplan: policy %s (%s; --policy none plans without it)\n", path, whose);
    o->policy_path = path;
    for (int i = 0; i < o->n_policy_sets; i++) {
        if (mesh_policy_set_arg(&o->pol, o->policy_sets[i], &err) == 0)
            continue;
        /* a spec key without its section ("seq_len") is no policy key */
        char key[128];
        snprintf(key, sizeof(key), "%.*s", (int)strcspn(o->policy_sets[i], "="), o->policy_sets[i]);
        const char *meant = strstr(err.msg, "did you mean") ? NULL : mesh_spec_key_closest(key);
        return bad("%s%s%s%s", err.msg, meant ? "; did you mean " : "", meant ? meant : "",
                   meant ? "?" : "");
    }
    if (mesh_policy_check(&o->pol, &err) < 0)
        return bad("%s", err.msg);
    if (!o->have_export)
        o->export_mode = o->pol.launch.export_mode;
    return 0;
}

/* --from FILE, and --keep: the restart that pins the plans (none without --from). */
static int load_restart(options_t *o)
{
    mesh_error_t err;
    if (!o->from)
        return 0;
    if (mesh_restart_load(o->from, &o->restart, &err) < 0)
        return bad("--from: %s", err.msg);
    if (o->keep && mesh_restart_keep(&o->restart, o->keep, &err) < 0)
        return bad("--keep %.60s: %s", o->keep, err.msg);
    o->have_restart = 1;
    return 0;
}

/*
 * Standard output, checked.  Every byte meshplan prints goes through
 * stdout's stream, and that stream writes through out_write: the first
 * write error is kept with its errno (stdio forgets it: a later flush can
 * succeed with the lost bytes discarded), and close_stdout reports it.
 */
static int out_errno;

static ssize_t out_write(void *cookie, const char *buf, size_t n)
{
    (void)cookie;
    for (size_t done = 0; done < n;) {
        ssize_t w = write(STDOUT_FILENO, buf + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (!out_errno)
                out_errno = w < 0 ? errno : EIO;
            return -1;
        }
        done += (size_t)w;
    }
    return (ssize_t)n;
}

/* Make stdout write through out_write (line by line on a terminal, as
 * stdio would); as it was when memory is short. */
static void open_stdout(void)
{
    FILE *f = fopencookie(NULL, "w", (cookie_io_functions_t){.write = out_write});
    if (!f)
        return;
    setvbuf(f, NULL, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, BUFSIZ);
    stdout = f;
}

/* Close stdout and say whether all of it was written (a full disk, a
 * closed pipe): every command's output ends here, so that none can fail
 * silently.  Returns 0, or EXIT_BADINPUT after one line on stderr. */
static int close_stdout(void)
{
    int failed = ferror(stdout);
    if (fflush(stdout) != 0) {
        failed = 1;
        out_errno = out_errno ? out_errno : errno;
    }
    if (fclose(stdout) != 0) {
        failed = 1;
        out_errno = out_errno ? out_errno : errno;
    }
    if (!failed)
        return 0;
    fprintf(stderr, "meshplan: write error: %s\n", strerror(out_errno ? out_errno : EIO));
    return EXIT_BADINPUT;
}

/* `meshplan policy check [FILE]`: the action, and the file as --policy
 * (argv is shifted past them; options follow). */
static int policy_words(int *argc, char **argv, options_t *o)
{
    if (*argc > 2 && (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0))
        return 0;
    if (*argc < 3 || strcmp(argv[2], "check") != 0)
        return bad("policy: say what to do: meshplan policy check [FILE]");
    int used = 1;
    if (*argc > 3 && argv[3][0] != '-') {
        o->policy = argv[3];
        used = 2;
    }
    for (int i = 2; i + used < *argc; i++)
        argv[i] = argv[i + used];
    *argc -= used;
    return 0;
}

/* `meshplan help [COMMAND]` */
static int help(int argc, char **argv)
{
    const command_t *c = argc > 2 ? find_command(argv[2]) : NULL;
    if (argc > 2 && (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0))
        c = find_command("help");
    if (argc > 3)
        return bad("help takes one command (meshplan help COMMAND)");
    if (argc > 2 && !c)
        return unknown_command(argv[2]);
    if (c)
        usage(stdout, c);
    else
        usage_all(stdout);
    return EXIT_FITS;
}

static int run(int argc, char **argv)
{
    if (argc < 2) {
        usage_all(stderr);
        return EXIT_BADINPUT;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0)
        return help(argc, argv);
    if (strcmp(name, "--version") == 0)
        name = "version";
    else if (name[0] == '-')
        return bad("%.40s: an option comes after the command (meshplan --help lists the commands)",
                   name);
    const command_t *c = find_command(name);
    if (!c)
        return unknown_command(name);
    options_t o;
    memset(&o, 0, sizeof(o));
    mesh_policy_init(&o.pol);
    o.cmd = c;
    static const char *logs[LOGS_MAX];
    o.logs = logs;
    int rc = c->bit & C_POLICYCHECK ? policy_words(&argc, argv, &o) : 0;
    if (rc)
        return rc;
    rc = parse_args(argc - 1, argv + 1, &o);
    if (rc == HELPED)
        return EXIT_FITS;
    if (rc || (c->bit & C_POLICY && (rc = load_policy(&o))) || (rc = load_restart(&o)))
        return rc;
    return c->run(&o);
}

int main(int argc, char **argv)
{
    /* a libmeshplan of another interface shares structs of other sizes */
    if (mesh_api_version() != MESHPLAN_API_VERSION)
        return bad("libmeshplan %s has API version %u; this meshplan was built for %u: install "
                   "the libmeshplan of its release",
                   mesh_version(), mesh_api_version(), (unsigned)MESHPLAN_API_VERSION);
    open_stdout();
    int rc = run(argc, argv);
    int wrc = close_stdout();
    return wrc ? wrc : rc;
}
