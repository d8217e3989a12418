/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan(1): plan, check and explain 3D-parallel layouts, and print the
 * rank map and the per-task variables the SPANK plugin exports.
 *
 * One table of options (opts[] below) drives the parsing, each command's
 * --help, the errors and, through --help, the bash completion.  Everything
 * meshplan prints goes to stdout's stream, which main() closes and checks,
 * so that a full disk is an error and not a silent truncation.
 *
 * Exit status: 0 fits (or success), 1 does not fit, 2 bad input.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "meshplan.h"

enum { EXIT_FITS = 0, EXIT_NOFIT = 1, EXIT_BADINPUT = 2 };
#define HELPED (-1) /* parse_args printed the command's help: exit 0 */

#ifndef MESH_SYSTEM_POLICY /* the policy job_submit/meshplan reads (Makefile.am) */
#define MESH_SYSTEM_POLICY "/etc/slurm/meshplan.yaml"
#endif
#define POLICY_ENV "MESHPLAN_POLICY" /* as job_submit/meshplan reads it in slurmctld */

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
};
#define C_REPORT (C_PLAN | C_CHECK | C_RANKS)            /* a report, text or JSON */
#define C_MODEL  (C_REPORT | C_ENV)                      /* they plan a model */
#define C_SIZED  (C_MODEL | C_SIZE)                      /* they read a model's spec */
#define C_POLICY (C_SIZED | C_TOPO | C_GPUS | C_PRESETS) /* they read a policy */
#define C_JSON   (C_POLICY | C_VERSION)                  /* they have a JSON form */
#define C_ALL    (C_POLICY | C_VERSION | C_HELP)

/* Every option, in the order --help lists them. */
typedef enum opt_id {
    O_MODEL,
    O_NODES,
    O_GPN,
    O_GPU,
    O_GPU_MEM,
    O_NVLINK,
    O_HOST_MEM,
    O_TOPOLOGY,
    O_PARTITION,
    O_MESH,
    O_FROM,
    O_KEEP,
    O_GOAL,
    O_POLICY,
    O_SET,
    O_MODELS_DIR,
    O_JSON,
    O_SHELL,
    O_SVG,
    O_NO_PICTURES,
    O_NODE,
    O_LOCAL,
    O_EXPORT,
    O_MASTER,
    O_JOB,
    O_STEP,
    O_BIND,
    O_HELP,
    O_COUNT
} opt_id_t;

/* An option: its name without "--", its argument as --help names it (NULL:
 * none), the commands that take it, and its help (lines joined by '\n'). */
typedef struct opt {
    const char *name, *arg;
    unsigned cmds;
    const char *help;
} opt_t;

static const opt_t opts[O_COUNT] = {
    [O_MODEL] = {"model", "SPEC", C_SIZED,
                 "preset name (meshplan presets), a spec .yaml file, or a Hugging Face "
                 "config.json"},
    [O_NODES] = {"nodes", "N", C_SIZED, "nodes in the allocation (size: a range LO-HI, or N)"},
    [O_GPN] = {"gpus-per-node", "G", C_SIZED, "GPUs (= tasks) per node"},
    [O_GPU] = {"gpu", "NAME", C_SIZED, "GPU model from the table (meshplan gpus)"},
    [O_GPU_MEM] = {"gpu-mem", "SIZE", C_SIZED,
                   "GPU memory (80GB = 80e9, 80GiB = 80*2^30); overrides --gpu's"},
    [O_NVLINK] = {"nvlink", "N", C_SIZED, "GPUs per NVLink island (default: the GPU's)"},
    [O_HOST_MEM] = {"host-mem", "SIZE", C_SIZED,
                    "host memory per node for optimizer offload, as the job's --mem\n"
                    "(default: unknown, no offload)"},
    [O_TOPOLOGY] = {"topology", "FILE.xml", C_MODEL | C_TOPO,
                    "a node's hwloc topology, in place of --gpu, --gpu-mem, --nvlink\n"
                    "(and of --gpus-per-node); 'this' for this machine"},
    [O_PARTITION] = {"partition", "NAME", C_PLAN | C_CHECK | C_SIZE,
                     "judge the job as job_submit/meshplan does when it is submitted\n"
                     "to partition NAME (or A,B,...): on the GPU the policy's\n"
                     "partitions: give it, with the controller's verdict on stderr"},
    [O_GOAL] = {"goal", "GOAL", C_SIZE,
                "min (fewest nodes that fit; default), fastest (shortest step) or\n"
                "efficient (most tokens per GPU-hour)"},
    [O_MESH] = {"mesh", "STRING", C_SIZED,
                "pin fields: tp=T,pp=P,dp=D,cp=C,ep=E,etp=X,zero=Z,vpp=V,mb=B,\n"
                "recompute=R,sp=on|off,offload=none|optimizer,moments=fp32|bf16|fp16\n"
                "(R: none, selective, full or full:N layers per stage; ep, etp: the\n"
                "experts' parallelism, for a MoE model)"},
    [O_FROM] = {"from", "FILE", C_SIZED,
                "restart from the previous run's layout, saved next to its\n"
                "checkpoint (its plan --json, or $MESH_PLAN): keep the\n"
                "dimensions the checkpoint is sharded by, and the global batch"},
    [O_KEEP] = {"keep", "DIMS", C_SIZED,
                "the dimensions --from keeps: tp,pp,vpp,cp,dp,ep,etp,zero or none\n"
                "(default tp,pp,vpp,ep,etp: what a checkpoint is sharded by)"},
    [O_POLICY] = {"policy", "FILE", C_POLICY,
                  "admin policy (YAML), as the plugin reads it; 'none' for the\n"
                  "defaults (default: $" POLICY_ENV ", else " MESH_SYSTEM_POLICY ",\n"
                  "when it exists)"},
    [O_SET] = {"set", "KEY=VALUE", C_POLICY,
               "override a spec key (train.seq_len=32768) or set a policy key\n"
               "(reserve=0.1), on top of --model and --policy"},
    [O_MODELS_DIR] = {"models-dir", "DIR", C_SIZED | C_PRESETS, "look for presets here first"},
    [O_JSON] = {"json", NULL, C_JSON, "machine-readable output"},
    [O_SHELL] = {"shell", NULL, C_ENV,
                 "export NAME='value' lines, for eval \"$(meshplan env --shell ...)\""},
    [O_SVG] = {"svg", "FILE", C_REPORT,
               "also write the rank map, pipeline and memory pictures as SVG;\n"
               "'-': the SVG alone, on standard output, instead of the report"},
    [O_NO_PICTURES] = {"no-pictures", NULL, C_REPORT, "leave the pictures out of the text"},
    [O_NODE] = {"node", "I", C_ENV, "node index within the step (default 0)"},
    [O_LOCAL] = {"local", "L", C_ENV, "task index within the node (default 0)"},
    [O_EXPORT] = {"export", "MODE", C_ENV,
                  "torch | torchrun | mesh (default: the policy's) | batch (a batch script's)"},
    [O_MASTER] = {"master-addr", "HOST", C_ENV, "first host of the step (default localhost)"},
    [O_JOB] = {"job-id", "N", C_ENV, "the job's id, for MASTER_PORT (default 0)"},
    [O_STEP] = {"step-id", "N", C_ENV, "the step's id, for MASTER_PORT (default 0)"},
    [O_BIND] = {"bind", "gpu|none", C_MODEL | C_TOPO,
                "narrow each task to its GPU, island by island (with --topology)"},
    [O_HELP] = {"help", NULL, C_ALL, "describe the command"},
};

#define SETS_MAX 64 /* --set options a command line may hold */

typedef struct command command_t;

typedef struct options {
    const command_t *cmd;
    const char *model, *gpu, *mesh, *policy, *models_dir, *master_addr, *topology, *svg;
    const char *partition;
    const char *from, *keep; /* --from FILE and --keep DIMS: a restart */
    mesh_restart_t restart;  /* read from --from (have_restart) */
    int have_restart;
    double gpu_mem, host_mem;
    long long nodes, gpus_per_node, nvlink, node, local, job_id, step_id;
    int nodes_lo, nodes_hi; /* size's --nodes LO-HI (N: N-N) */
    mesh_size_goal_t goal;
    int json, shell, have_export, no_pictures;
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

static int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A bad-input failure: one line on stderr, exit status 2. */
static int bad(const char *fmt, ...)
{
    va_list ap;
    fputs("meshplan: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return EXIT_BADINPUT;
}

static int cmd_plan(const options_t *o);
static int cmd_check(const options_t *o);
static int cmd_ranks(const options_t *o);
static int cmd_env(const options_t *o);
static int cmd_topo(const options_t *o);
static int cmd_gpus(const options_t *o);
static int cmd_presets(const options_t *o);
static int cmd_version(const options_t *o);
static int cmd_size(const options_t *o);

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
    {"presets", C_PRESETS, cmd_presets, "[options]", "list the model presets", NULL},
    {"version", C_VERSION, cmd_version, "[--json]",
     "print the versions of meshplan and of the libmeshplan it runs with",
     "Print meshplan's version and the version of the libmeshplan it runs with (also\n"
     "meshplan --version)."},
    {"help", C_HELP, NULL, "[COMMAND]", "describe meshplan, or a command",
     "Describe meshplan, or COMMAND as 'meshplan COMMAND --help' does."},
};
#define N_COMMANDS ((int)(sizeof(commands) / sizeof(commands[0])))

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
    for (int i = 0; i < O_COUNT; i++) {
        if (!(opts[i].cmds & c->bit))
            continue;
        char head[48];
        snprintf(head, sizeof(head), "--%s%s%s", opts[i].name, opts[i].arg ? " " : "",
                 opts[i].arg ? opts[i].arg : "");
        if (strlen(head) > 21)
            fprintf(f, "  %s\n%24s", head, "");
        else
            fprintf(f, "  %-21s ", head);
        put_lines(f, opts[i].help, 24);
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
static int unknown_option(const command_t *c, const char *arg, size_t len)
{
    const char *names[O_COUNT], *meant;
    char word[64], others[128] = "";
    int n = 0;
    snprintf(word, sizeof(word), "%.*s", (int)(len < 60 ? len : 60), arg);
    for (int i = 0; i < O_COUNT; i++)
        if (opts[i].cmds & c->bit)
            names[n++] = opts[i].name;
    meant = mesh_closest_name(word, names, n);
    if (meant)
        return bad("--%s: unknown option for %s; did you mean --%s?", word, c->name, meant);
    for (int i = 0; i < O_COUNT; i++)
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
    for (int i = 0; i < O_COUNT; i++)
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

/* Store one option's value. */
static int parse_range(options_t *o, const char *v);

static int set_option(options_t *o, opt_id_t id, const char *v)
{
    mesh_error_t err;
    int rc = 0;
    switch (id) {
    case O_MODEL: o->model = v; break;
    case O_NODES:
        if (o->cmd->bit == C_SIZE)
            return parse_range(o, v);
        rc = mesh_parse_int(v, "--nodes", 1, 1 << 20, &o->nodes, &err);
        break;
    case O_GOAL:
        rc = mesh_size_goal_parse(v, &o->goal, &err) < 0 ? mesh_error_prefix(&err, "--goal") : 0;
        break;
    case O_GPN: rc = mesh_parse_int(v, "--gpus-per-node", 1, 1024, &o->gpus_per_node, &err); break;
    case O_GPU: o->gpu = v; break;
    case O_GPU_MEM: rc = mesh_parse_size(v, "--gpu-mem", 1e8, 1e14, &o->gpu_mem, &err); break;
    case O_NVLINK: rc = mesh_parse_int(v, "--nvlink", 1, 1024, &o->nvlink, &err); break;
    case O_HOST_MEM: rc = mesh_parse_size(v, "--host-mem", 1e8, 1e16, &o->host_mem, &err); break;
    case O_TOPOLOGY: o->topology = v; break;
    case O_PARTITION: o->partition = v; break;
    case O_MESH: o->mesh = v; break;
    case O_FROM: o->from = v; break;
    case O_KEEP: o->keep = v; break;
    case O_POLICY: o->policy = v; break;
    case O_SET:
        /* spec keys go to the spec as it is loaded, policy keys to the policy */
        if (o->n_spec_sets + o->n_policy_sets == SETS_MAX)
            return bad("--set: at most %d times", SETS_MAX);
        if (spec_set(v))
            o->spec_sets[o->n_spec_sets++] = v;
        else
            o->policy_sets[o->n_policy_sets++] = v;
        break;
    case O_MODELS_DIR: o->models_dir = v; break;
    case O_JSON: o->json = 1; break;
    case O_SHELL: o->shell = 1; break;
    case O_SVG: o->svg = v; break;
    case O_NO_PICTURES: o->no_pictures = 1; break;
    case O_NODE: rc = mesh_parse_int(v, "--node", 0, 1 << 20, &o->node, &err); break;
    case O_LOCAL: rc = mesh_parse_int(v, "--local", 0, 1024, &o->local, &err); break;
    case O_EXPORT:
        if (mesh_export_parse(v, &o->export_mode) < 0)
            return bad("--export: use torch, torchrun, mesh or batch");
        o->have_export = 1;
        break;
    case O_MASTER: o->master_addr = v; break;
    case O_JOB: rc = mesh_parse_int(v, "--job-id", 0, UINT_MAX, &o->job_id, &err); break;
    case O_STEP: rc = mesh_parse_int(v, "--step-id", 0, UINT_MAX, &o->step_id, &err); break;
    case O_BIND:
        if (strcmp(v, "gpu") && strcmp(v, "none"))
            return bad("--bind: use gpu or none");
        if (o->n_spec_sets + o->n_policy_sets == SETS_MAX)
            return bad("--set: at most %d times", SETS_MAX);
        o->policy_sets[o->n_policy_sets++] = strcmp(v, "gpu") == 0 ? "bind=gpu" : "bind=none";
        break;
    case O_HELP:
    case O_COUNT: break;
    }
    return rc < 0 ? bad("%s", err.msg) : 0;
}

/* size's --nodes: "LO-HI", or "N" for N-N. */
static int parse_range(options_t *o, const char *v)
{
    mesh_error_t err;
    long long lo, hi;
    char part[32];
    size_t n = strcspn(v, "-");
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

/* Read argv[1..argc) (argv[0] is the command) into *o: "--name VALUE",
 * "--name=VALUE" or "--name", names matched whole (an abbreviation is a
 * typo: --node is not --nodes), each only where the command takes it. */
static int parse_args(int argc, char **argv, options_t *o)
{
    const command_t *c = o->cmd;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout, c);
            return HELPED;
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
        int rc = set_option(o, (opt_id_t)id, v);
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
    const char *path = o->policy, *env = getenv(POLICY_ENV), *whose = NULL;
    if (!path) {
        /* not asked for: say whose it is, so that a surprise has a name */
        whose = env && *env ? "$" POLICY_ENV "'s" : "the system's";
        path = env && *env ? env : MESH_SYSTEM_POLICY;
        if (strcmp(path, "none") == 0 || access(path, F_OK) != 0)
            path = NULL;
    } else if (strcmp(path, "none") == 0) {
        path = NULL;
    }
    if (path && mesh_policy_load(&o->pol, path, &err) < 0)
        return whose ? bad("%s (%s policy; --policy none plans without it)", err.msg, whose)
                     : bad("%s", err.msg);
    if (path && whose)
        fprintf(stderr, "meshplan: policy %s (%s; --policy none plans without it)\n", path, whose);
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

/* Presets: --models-dir, the policy's, $MESH_MODELS_DIR, the source tree when
 * this binary runs from its build tree, then the installed ones. */
static void preset_dirs(const options_t *o, mesh_spec_dirs_t *d)
{
    static char exe[PATH_MAX];
    int n = 0;
    memset(d, 0, sizeof(*d));
    if (o->models_dir)
        d->dirs[n++] = o->models_dir;
    if (o->pol.launch.models_dir[0])
        d->dirs[n++] = o->pol.launch.models_dir;
    const char *env = getenv("MESH_MODELS_DIR");
    if (env && *env && n < 3)
        d->dirs[n++] = env;
    ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (len > 0) {
        exe[len] = '\0';
        size_t b = strlen(MESH_BUILD_DIR);
        if (strncmp(exe, MESH_BUILD_DIR "/", b + 1) == 0 && n < 3)
            d->dirs[n++] = MESH_SOURCE_MODELS_DIR;
    }
    d->dirs[n++] = mesh_default_models_dir();
}

/* --topology FILE.xml, or "this" for this machine; NULL without it. */
static int load_topology(const options_t *o, mesh_topo_t **out)
{
    mesh_error_t err;
    *out = NULL;
    if (!o->topology)
        return 0;
    *out = mesh_topo_load(strcmp(o->topology, "this") == 0 ? NULL : o->topology, &err);
    return *out ? 0 : bad("%s", err.msg);
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

/* The pins of --mesh, with the dimensions --from keeps. */
static int restart_pins(const options_t *o, const mesh_model_t *m, mesh_layout_t *pins,
                        mesh_error_t *err)
{
    if (mesh_layout_parse(o->mesh, pins, err) < 0)
        return -1;
    if (o->have_restart && mesh_restart_pins(&o->restart, m, pins, err) < 0)
        return mesh_error_prefix(err, "--from %.200s", o->from);
    return 0;
}

/* An error planning with the kept dimensions says they were kept. */
static int restart_error(const options_t *o, mesh_error_t *err)
{
    char kept[64];
    if (o->have_restart)
        mesh_error_prefix(err, "keeping %s from %.200s",
                          mesh_restart_kept(&o->restart, kept, sizeof(kept)), o->from);
    return -1;
}

static int need(const options_t *o)
{
    if (!o->model)
        return bad("--model is required (a preset name, a spec .yaml file or a config.json)");
    if (!o->nodes)
        return bad("--nodes is required");
    if (!o->gpus_per_node && !o->topology)
        return bad("--gpus-per-node is required (or --topology)");
    return 0;
}

/* The model, with the spec keys of --set applied as it is loaded.  An
 * unknown spec key that is a policy key is said to be one. */
static int load_model(const options_t *o, mesh_model_t *model, mesh_error_t *err)
{
    mesh_spec_dirs_t dirs;
    preset_dirs(o, &dirs);
    if (mesh_spec_load_with(o->model, &dirs, "--set", o->spec_sets, o->n_spec_sets, model, err) ==
        0)
        return 0;
    for (int i = 0; i < o->n_spec_sets && !strstr(err->msg, "did you mean"); i++) {
        const char *set = o->spec_sets[i];
        size_t k = strcspn(set, "="), dot = strcspn(set, ".");
        if (dot >= k)
            continue;
        const char *leaf = set + dot + 1; /* "reserve=0.1" of "train.reserve=0.1" */
        char quoted[96];
        mesh_policy_t scratch = o->pol;
        snprintf(quoted, sizeof(quoted), "unknown key '%.*s'", (int)(k - dot - 1), leaf);
        if (strstr(err->msg, quoted) && mesh_policy_set_arg(&scratch, leaf, NULL) == 0) {
            size_t n = strlen(err->msg);
            snprintf(err->msg + n, sizeof(err->msg) - n, "; did you mean %.*s (a policy key)?",
                     (int)(k - dot - 1), leaf);
        }
    }
    return -1;
}

/* The allocation of --partition: what job_submit/meshplan plans the job
 * for, and its verdict, from the library's one judgement. */
static int partition_alloc(const options_t *o, const mesh_model_t *model, const mesh_layout_t *pins,
                           mesh_alloc_t *alloc, mesh_submit_t *verdict, mesh_error_t *err)
{
    mesh_step_t s = {
        .nodes = (int)o->nodes, .gpus_per_node = (int)o->gpus_per_node, .host_memory = o->host_mem};
    if (o->topology || o->gpu || o->gpu_mem > 0 || o->nvlink)
        return mesh_error_set(err, "--partition takes the GPU from the policy's partitions: "
                                   "leave out --gpu, --gpu-mem, --nvlink and --topology");
    mesh_submit_judge(&o->pol, o->partition, model, pins, &s, verdict);
    if (!verdict->judged && o->pol.enforce != MESH_ENFORCE_OFF)
        return mesh_error_set(err,
                              "--partition %s: the controller does not judge this job (%s); the "
                              "nodes do, at launch: plan for them with --gpu or --topology",
                              verdict->partition[0] ? verdict->partition : "(none)", verdict->msg);
    if (mesh_partition_alloc(&o->pol, verdict->partition, &s, alloc, err) < 0)
        return mesh_error_prefix(err, "--partition %s",
                                 verdict->partition[0] ? verdict->partition : "(none)");
    return 0;
}

/* Build the plan every plan-based command needs, with the topology it was
 * made for (NULL without --topology) and, with --partition, the
 * controller's verdict (verdict may be NULL without it). */
static int make_plan(const options_t *o, mesh_plan_t **out, mesh_topo_t **topo,
                     mesh_submit_t *verdict)
{
    mesh_error_t err;
    mesh_model_t model;
    mesh_alloc_t alloc;
    mesh_layout_t pins;
    int rc = need(o);
    if (rc || (rc = load_topology(o, topo)))
        return rc;
    if (load_model(o, &model, &err) < 0 || restart_pins(o, &model, &pins, &err) < 0)
        goto fail;
    if (o->partition) {
        if (partition_alloc(o, &model, &pins, &alloc, verdict, &err) < 0)
            goto fail;
    } else if (*topo) {
        if (o->gpu || o->gpu_mem > 0 || o->nvlink) {
            snprintf(err.msg, sizeof(err.msg), "--topology replaces --gpu, --gpu-mem and --nvlink");
            goto fail;
        }
        /* the allocation a node of this topology plans for, as the plugin
         * makes it (on_topology_error=fallback included); tasks not given:
         * one per GPU of the topology */
        mesh_step_t step = {.nodes = (int)o->nodes};
        if (mesh_step_alloc(&o->pol, *topo, 0, o->pol.launch.bind_gpu, &step, &alloc, &err) < 0)
            goto fail;
        if (o->gpus_per_node && o->gpus_per_node != alloc.gpus_per_node) {
            snprintf(err.msg, sizeof(err.msg), "--gpus-per-node %lld, but the topology has %d GPUs",
                     o->gpus_per_node, alloc.gpus_per_node);
            goto fail;
        }
    } else if (mesh_policy_alloc(&o->pol.assume, o->gpu, o->gpu_mem, (int)o->nvlink, (int)o->nodes,
                                 (int)o->gpus_per_node, &alloc, &err) < 0) {
        goto fail;
    }
    if (o->host_mem > 0)
        alloc.host_memory = o->host_mem;
    if ((*out = mesh_plan_create(&model, &alloc, &pins, &o->pol.assume, &err)))
        return 0;
    restart_error(o, &err);
fail:
    mesh_topo_destroy(*topo);
    *topo = NULL;
    return bad("%s", err.msg);
}

static int print_owned(char *s)
{
    if (!s)
        return bad("out of memory");
    fputs(s, stdout);
    free(s);
    return 0;
}

/* A message of lines to stderr, each after "meshplan: " and `what`, as
 * srun prints the plugin's. */
static void say_lines(const char *what, const char *msg)
{
    fflush(stdout); /* after what was printed before it */
    for (const char *l = msg; *l;) {
        size_t n = strcspn(l, "\n");
        fprintf(stderr, "meshplan: %s%.*s\n", what, (int)n, l);
        l += n + (l[n] == '\n');
    }
}

static int cmd_gpus(const options_t *o)
{
    /* The GPUs as the policy makes them (mesh_policy_gpu_at): the figures
     * the policy sets marked '*', the GPUs it defines after the table's, then
     * the product names --gpu takes.  Every text line as wide as the header. */
    static const char *const json_keys[] = {"memory", "peak_flops", "hbm_bw",  "link_bw",
                                            "net_bw", "island",     "gemm_eff"};
    const mesh_assumptions_t *as = &o->pol.assume;
    int n = mesh_policy_gpu_count(as), w = 10, width, marks = 0, defined = 0;
    char line[256], list[160] = "";
    mesh_gpu_t g;
    for (int i = 0; i < n && mesh_policy_gpu_at(as, i, &g) >= 0; i++)
        w = (int)strlen(g.name) > w ? (int)strlen(g.name) : w;
    width = snprintf(line, sizeof(line), "%-*s %10s  %12s  %10s  %12s  %10s  %7s  %5s ", w, "GPU",
                     "memory", "dense TF/s", "HBM GB/s", "link GB/s", "net GB/s", "island", "GEMM");
    printf(o->json ? "[" : "%s\n", line);
    for (int i = 0; i < n; i++) {
        int origin = mesh_policy_gpu_at(as, i, &g);
        const mesh_gpu_override_t *ov = NULL; /* the policy's entry: names are the table's */
        for (int k = 0; k < as->n_gpu_overrides; k++)
            ov = strcmp(as->gpu_overrides[k].name, g.name) == 0 ? &as->gpu_overrides[k] : ov;
        int set[] = {ov && ov->memory > 0,  ov && ov->peak_flops > 0, ov && ov->hbm_bw > 0,
                     ov && ov->link_bw > 0, ov && ov->net_bw > 0,     ov && ov->island > 0,
                     ov && ov->gemm_eff > 0};
        char m[7], keys[160] = "", names[256] = "";
        for (int k = 0; k < 7; k++) {
            m[k] = set[k] ? '*' : ' ';
            marks |= set[k];
            if (set[k])
                snprintf(keys + strlen(keys), sizeof(keys) - strlen(keys), "%s\"%s\"",
                         *keys ? "," : "", json_keys[k]);
        }
        if (origin == MESH_GPU_DEFINED)
            snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
                     defined++ ? ", " : "", g.name);
        for (int k = 0; k < mesh_gpu_alias_count(); k++)
            if (strcmp(mesh_gpu_alias_at(k)->name, g.name) == 0)
                snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s\"%s\"",
                         *names ? "," : "", mesh_gpu_alias_at(k)->alias);
        if (o->json)
            printf("%s{\"name\":\"%s\",\"memory\":%.0f,\"peak_flops\":%.6g,\"bf16\":%s,"
                   "\"hbm_bw\":%.6g,\"link_bw\":%.6g,\"net_bw\":%.6g,\"island\":%d,"
                   "\"gemm_eff\":%.3g,\"source\":\"%s\",\"policy_sets\":[%s],\"aliases\":[%s]}",
                   i ? "," : "", g.name, g.memory, g.peak_flops, g.has_bf16 ? "true" : "false",
                   g.hbm_bw, g.link_bw, g.net_bw, g.island, g.gemm_eff,
                   origin == MESH_GPU_DEFINED ? "policy" : "table", keys, names);
        else
            printf("%-*s %6.1f GiB%c %7.0f%s%c %10.0f%c %12.0f%c %10.1f%c %7d%c %4.0f%%%c\n", w,
                   g.name, g.memory / 1073741824.0, m[0], g.peak_flops / 1e12,
                   g.has_bf16 ? " bf16" : " fp16", m[1], g.hbm_bw / 1e9, m[2], g.link_bw / 1e9,
                   m[3], g.net_bw / 1e9, m[4], g.island, m[5], 100 * g.gemm_eff, m[6]);
    }
    if (o->json)
        return printf("]\n"), EXIT_FITS;
    if (marks)
        printf("%-*s\n", width, "  *: the policy's figure (gpu.NAME.FIELD)");
    if (defined) {
        snprintf(line, sizeof(line), "  the policy defines %s (its other figures: H100-SXM's)",
                 list);
        printf("%-*s\n", width, line);
    }
    printf("%-*s\n", width, "  product names --gpu takes (what nvidia-smi, amd-smi, lspci print):");
    for (int k = 0; k < mesh_gpu_alias_count(); k++) {
        snprintf(line, sizeof(line), "    %-30s %s", mesh_gpu_alias_at(k)->alias,
                 mesh_gpu_alias_at(k)->name);
        printf("%-*s\n", width, line);
    }
    return EXIT_FITS;
}

static int is_preset_file(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    return n > 5 && strcmp(e->d_name + n - 5, ".yaml") == 0 && e->d_name[0] != '.';
}

/* The library's escaper, so that every JSON meshplan writes escapes alike. */
static void json_string(const char *s)
{
    char *q = mesh_json_string(s);
    fputs(q ? q : "null", stdout);
    free(q);
}

/* Whether NAME.yaml is in one of the first n directories (which shadow the rest). */
static int shadowed(const mesh_spec_dirs_t *d, int n, const char *name)
{
    char path[PATH_MAX];
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "%s/%s.yaml", d->dirs[i], name);
        if (access(path, F_OK) == 0)
            return 1;
    }
    return 0;
}

static int cmd_presets(const options_t *o)
{
    mesh_spec_dirs_t d;
    preset_dirs(o, &d);
    int first = 1;
    if (o->json)
        printf("[");
    for (int i = 0; i < 4 && d.dirs[i]; i++) {
        struct dirent **list;
        int n = scandir(d.dirs[i], &list, is_preset_file, alphasort);
        for (int j = 0; j < n; j++) {
            char name[256], path[PATH_MAX];
            snprintf(name, sizeof(name), "%.*s", (int)strlen(list[j]->d_name) - 5, list[j]->d_name);
            snprintf(path, sizeof(path), "%s/%s", d.dirs[i], list[j]->d_name);
            free(list[j]);
            mesh_model_t m;
            mesh_error_t err;
            /* each name once, from the directory that wins the lookup */
            if (!mesh_spec_valid_preset_name(name) || shadowed(&d, i, name) ||
                mesh_spec_load(path, &d, &m, &err) < 0)
                continue;
            if (o->json) {
                printf("%s{\"name\":\"%s\",\"params\":%.0f,\"dir\":", first ? "" : ",", name,
                       m.params);
                json_string(d.dirs[i]);
                printf("}");
            } else {
                printf("%-16s %9.2f B params  %s\n", name, m.params / 1e9, d.dirs[i]);
            }
            first = 0;
        }
        if (n > 0)
            free(list);
    }
    if (o->json)
        printf("]\n");
    return EXIT_FITS;
}

/* meshplan topo: what hwloc shows and what the planner makes of it */
static int cmd_topo(const options_t *o)
{
    mesh_topo_t *t;
    mesh_error_t err;
    mesh_alloc_t a;
    options_t local = *o;
    if (!local.topology)
        local.topology = "this";
    int rc = load_topology(&local, &t);
    if (rc)
        return rc;
    int n = mesh_topo_gpu_count(t),
        usable =
            n > 0 && mesh_topo_alloc(t, &o->pol.assume, 1, o->pol.launch.bind_gpu, &a, &err) == 0;
    const char *src = strcmp(local.topology, "this") == 0 ? "this machine" : local.topology;
    if (o->json) {
        printf("{\"source\":");
        json_string(src);
        printf(",\"gpus\":[");
    } else {
        printf("topology of %s: %d GPU%s, %d NUMA node%s, islands from %s\n", src, n,
               n == 1 ? "" : "s", mesh_topo_numa_count(t), mesh_topo_numa_count(t) == 1 ? "" : "s",
               mesh_topo_links(t));
        if (n)
            printf("  GPU  bus id        PCI id     model            memory     NUMA  island  "
                   "CPUs\n");
    }
    for (int i = 0; i < n; i++) {
        const mesh_topo_gpu_t *g = mesh_topo_gpu(t, i);
        mesh_gpu_t m;
        int known = mesh_topo_gpu_model(t, i, &o->pol.assume, &m, &err) == 0;
        if (o->json) {
            printf("%s{\"index\":%d,\"busid\":\"%s\",\"vendor_id\":%u,\"device_id\":%u,"
                   "\"model\":",
                   i ? "," : "", i, g->busid, g->vendor_id, g->device_id);
            if (known)
                json_string(m.name);
            else
                printf("null");
            printf(",\"memory\":%.0f,\"numa\":%d,\"island\":%d,\"cpus\":\"%s\"}",
                   known ? m.memory : 0.0, g->numa, g->island, g->cpus);
        } else {
            printf("  %3d  %s  %04x:%04x  %-15s  %5.1f GiB  %4d  %6d  %s\n", i, g->busid,
                   g->vendor_id, g->device_id, known ? m.name : "(unknown)",
                   known ? m.memory / 1073741824.0 : 0.0, g->numa, g->island, g->cpus);
        }
    }
    if (o->json) {
        printf("],\"islands\":[");
        for (int isl = 0; isl < mesh_topo_island_count(t); isl++) {
            printf("%s[", isl ? "," : "");
            for (int i = 0, first = 1; i < n; i++)
                if (mesh_topo_gpu(t, i)->island == isl) {
                    printf("%s%d", first ? "" : ",", i);
                    first = 0;
                }
            printf("]");
        }
        printf("],\"numa_nodes\":%d,\"links\":\"%s\",\"assumes\":", mesh_topo_numa_count(t),
               mesh_topo_links(t));
        if (usable)
            printf("{\"gpu\":\"%s\",\"gpus_per_node\":%d,\"memory\":%.0f,\"island\":%d}}\n",
                   a.gpu.name, a.gpus_per_node, a.gpu.memory, a.island);
        else
            printf("null}\n");
    } else if (usable) {
        printf("the planner assumes: %d x %s per node, %.1f GiB each, TP groups of up to %d GPUs "
               "(consecutive tasks sharing an island%s)\n",
               a.gpus_per_node, a.gpu.name, a.gpu.memory / 1073741824.0, a.island,
               o->pol.launch.bind_gpu ? ", tasks bound island by island" : ", tasks in PCI order");
    } else if (n) {
        printf("the planner cannot use these GPUs: %s\n", err.msg);
    } else {
        printf("no GPU found: the plugin falls back to the policy's gpu= or gpu_mem=\n");
    }
    mesh_topo_destroy(t);
    return EXIT_FITS;
}

/* The pictures' options for stdout: the library's (colour only on a
 * terminal, never with NO_COLOR), and no colour either for a terminal that
 * says it has none (TERM unset, empty or "dumb", as Emacs' shell and
 * editors' consoles set it). */
static mesh_picture_opts_t picture_opts(void)
{
    /* colour only on a terminal that has it (TERM set and not dumb), and
     * never with NO_COLOR (no-color.org) */
    const char *no = getenv("NO_COLOR"), *term = getenv("TERM");
    int color = isatty(STDOUT_FILENO) && !(no && *no) && term && *term && strcmp(term, "dumb");
    return mesh_picture_opts_for(STDOUT_FILENO, color);
}

/* The SVG to path ("-": stdout), with the reason when it cannot be written. */
static int write_svg(const char *path, const mesh_plan_t *p)
{
    char *svg = mesh_picture_svg(p);
    if (!svg)
        return bad("--svg: out of memory");
    if (strcmp(path, "-") == 0)
        return print_owned(svg);
    FILE *f = fopen(path, "w");
    int ok = f && fputs(svg, f) >= 0;
    int saved = errno;
    if (f && fclose(f) != 0 && ok) {
        ok = 0;
        saved = errno;
    }
    free(svg);
    return ok ? 0 : bad("--svg: cannot write %s: %s", path, strerror(saved));
}

typedef char *(*report_fn)(const mesh_plan_t *);

/* plan --json with the restart's object added as "restart", last (the
 * report is one object ending in "}\n"). */
static char *json_with_restart(const options_t *o, const mesh_plan_t *p, char *json)
{
    char *restart = json ? mesh_restart_json(&o->restart, p) : NULL, *out = NULL;
    char *end = json ? strrchr(json, '}') : NULL;
    if (restart && end) {
        *end = '\0';
        size_t n = strlen(json) + strlen(restart) + 16;
        if ((out = malloc(n)))
            snprintf(out, n, "%s,\"restart\":%s}\n", json, restart);
    }
    free(json);
    free(restart);
    return out;
}

/* The report asked for; a restart's section follows plan's and check's. */
static int print_report(const options_t *o, const mesh_plan_t *p, report_fn text, report_fn json,
                        int restart)
{
    if (o->json)
        return print_owned(restart ? json_with_restart(o, p, json(p)) : json(p));
    int rc = print_owned(text(p));
    if (rc == 0 && restart) {
        putchar('\n');
        rc = print_owned(mesh_restart_text(&o->restart, p));
    }
    return rc;
}

/* Plan, print one report, exit 0 if the layout fits and 1 if not.  The SVG
 * file is written first, so that one that cannot be written stops the
 * command before it prints anything; `--svg -` prints the SVG alone.  With
 * `explain`, a layout that does not fit is explained on stderr (for
 * reports that do not explain it themselves). */
static int report(const options_t *o, report_fn text, report_fn json, int explain)
{
    mesh_plan_t *p;
    mesh_topo_t *t;
    mesh_submit_t verdict = {.verdict = MESH_VERDICT_RUN};
    int rc = make_plan(o, &p, &t, &verdict), svg_only = o->svg && strcmp(o->svg, "-") == 0;
    if (rc)
        return rc;
    if (o->svg)
        rc = write_svg(o->svg, p);
    if (rc == 0 && !svg_only)
        rc = print_report(o, p, text, json, o->have_restart && text == mesh_report_text);
    if (rc == 0 && !svg_only && !o->json && !o->no_pictures) {
        mesh_picture_opts_t po = picture_opts();
        rc = print_owned(mesh_picture_text(p, &po));
    }
    if (rc == 0 && explain && !mesh_plan_fits(p)) {
        char msg[4096];
        say_lines("", mesh_report_nofit(p, msg, sizeof(msg)));
    }
    /* what the controller would say, as sbatch would show it */
    if (rc == 0 && verdict.verdict != MESH_VERDICT_RUN)
        say_lines(verdict.verdict == MESH_VERDICT_REFUSE ? "error: " : "warning: ", verdict.msg);
    if (rc == 0)
        rc = mesh_plan_fits(p) && verdict.verdict == MESH_VERDICT_RUN ? EXIT_FITS : EXIT_NOFIT;
    mesh_plan_destroy(p);
    mesh_topo_destroy(t);
    return rc;
}

static int cmd_plan(const options_t *o)
{
    return report(o, mesh_report_text, mesh_report_json, 0);
}

static int cmd_check(const options_t *o)
{
    if (!o->mesh && !o->have_restart)
        return bad("check needs --mesh (the layout to judge; fields left out are planned), or "
                   "--from (the layout it keeps)");
    return cmd_plan(o);
}

/* The rank map; when nothing fits, it is the closest layout's, and why
 * follows on stderr, as plan explains it. */
static int cmd_ranks(const options_t *o)
{
    return report(o, mesh_report_ranks_text, mesh_report_ranks_json, 1);
}

/* value as one shell word in single quotes: a ' inside becomes '\'' */
static void shell_quoted(const char *value)
{
    putchar('\'');
    for (const char *c = value; *c; c++)
        if (*c == '\'')
            fputs("'\\''", stdout);
        else
            putchar(*c);
    putchar('\'');
}

/* The variables in the form asked: NAME=value lines (the plugin's bytes),
 * export lines for a shell's eval, or one JSON object of strings. */
static void print_env(const options_t *o, const mesh_env_t *e)
{
    if (o->json)
        putchar('{');
    for (int i = 0; i < mesh_env_count(e); i++) {
        const char *name = mesh_env_name(e, i), *value = mesh_env_value(e, i);
        if (o->json) {
            printf("%s", i ? "," : "");
            json_string(name);
            putchar(':');
            json_string(value);
        } else if (o->shell) {
            printf("export %s=", name);
            shell_quoted(value);
            putchar('\n');
        } else {
            printf("%s=%s\n", name, value);
        }
    }
    if (o->json)
        puts("}");
}

/* What the plugin does with a plan that does not fit, the CLI does too. */
static int cmd_env(const options_t *o)
{
    mesh_plan_t *p;
    mesh_topo_t *t;
    mesh_error_t err;
    char visible[32];
    int rc = make_plan(o, &p, &t, NULL);
    if (rc)
        return rc;
    char msg[4096];
    mesh_verdict_t v = mesh_plan_verdict(p, o->pol.enforce, msg, sizeof(msg));
    if (v != MESH_VERDICT_RUN) {
        /* the plugin's words, line by line, as srun prints them */
        say_lines(v == MESH_VERDICT_REFUSE ? "error: " : "warning: ", msg);
        if (v == MESH_VERDICT_REFUSE) {
            mesh_plan_destroy(p);
            mesh_topo_destroy(t);
            return EXIT_NOFIT;
        }
    }
    mesh_task_t task = {
        .node = (int)o->node,
        .local = (int)o->local,
        .master_addr = o->master_addr ? o->master_addr : "localhost",
        .master_port = mesh_env_master_port((unsigned long)o->job_id, (unsigned long)o->step_id,
                                            o->pol.launch.port_lo, o->pol.launch.port_hi),
        .export_mode = o->export_mode,
        .numa_node = -1,
        .restart = o->have_restart ? &o->restart : NULL,
    };
    mesh_env_t *e = NULL;
    if (!t || mesh_env_task_topology(&task, t, o->pol.launch.bind_gpu, NULL, visible,
                                     sizeof(visible), &err) == 0) {
        e = mesh_env_create(p, &task, &err);
        if (!e)
            mesh_error_prefix(&err, "--node %d --local %d", task.node, task.local);
    }
    mesh_plan_destroy(p);
    mesh_topo_destroy(t);
    if (!e)
        return bad("%s", err.msg);
    print_env(o, e);
    mesh_env_destroy(e);
    return EXIT_FITS;
}

/* This program's release and the library's it runs with: they differ when
 * a libmeshplan of another release is found first. */
/* size's allocation template: the partition's GPU (--partition, the range
 * cut to its nodes), else --gpu or --gpu-mem's; *lo and *hi the range. */
static int size_alloc(const options_t *o, mesh_alloc_t *a, int *lo, int *hi)
{
    mesh_error_t err;
    *lo = o->nodes_lo;
    *hi = o->nodes_hi;
    if (o->partition) {
        mesh_step_t step = {.nodes = *lo, .gpus_per_node = (int)o->gpus_per_node};
        if (o->gpu || o->gpu_mem > 0 || o->nvlink)
            return bad("--partition takes the GPU from the policy's partitions: leave out --gpu, "
                       "--gpu-mem and --nvlink");
        if (mesh_size_bound(&o->pol, o->partition, lo, hi, &err) < 0)
            return bad("--nodes %d-%d: %s", o->nodes_lo, o->nodes_hi, err.msg);
        if (mesh_partition_alloc(&o->pol, o->partition, &step, a, &err) < 0)
            return bad("--partition %s: %s", o->partition, err.msg);
    } else if (mesh_policy_alloc(&o->pol.assume, o->gpu, o->gpu_mem, (int)o->nvlink, *lo,
                                 (int)o->gpus_per_node, a, &err) < 0) {
        return bad("%s", err.msg);
    }
    a->host_memory = o->host_mem;
    return 0;
}

/* One row of size's table: '*' marks the choice. */
static void size_row_text(const mesh_size_t *sz, int i, const mesh_model_t *m)
{
    const mesh_size_row_t *r = &sz->rows[i];
    char l[MESH_LAYOUT_STR_MAX], run[32] = "";
    mesh_estimate_t est;
    if (r->fits != 1) {
        printf("  %6d  does not fit\n", r->nodes);
        return;
    }
    if (mesh_size_estimate(m, &r->best.cost, &est))
        snprintf(run, sizeof(run), est.seconds >= 2 * 86400 ? "%10.1f d" : "%10.1f h",
                 est.seconds / (est.seconds >= 2 * 86400 ? 86400 : 3600));
    printf("%c %6d  %-60s %9.3g %11.4g %13.4g %6.1f/%.1f%s\n", i == sz->chosen ? '*' : ' ',
           r->nodes, mesh_layout_format(&r->best.layout, l, sizeof(l)), r->best.cost.step_seconds,
           r->best.cost.tokens_per_sec, r->tokens_per_gpu_hour, r->best.memory.total / 1073741824.0,
           r->best.memory.capacity / 1073741824.0, run);
}

static void size_text(const options_t *o, const mesh_size_t *sz, const mesh_model_t *m,
                      const mesh_alloc_t *a)
{
    int budget = m->tokens > 0 || m->steps > 0;
    char kept[64];
    printf("Sizing %s on %d-%d nodes of %d %s, goal %s\n", m->name, sz->lo, sz->hi,
           a->gpus_per_node, a->gpu.name, mesh_size_goal_name(sz->goal));
    if (o->have_restart)
        printf("keeping %s from %s, and the global batch of %ld\n",
               mesh_restart_kept(&o->restart, kept, sizeof(kept)), o->from, m->global_batch);
    putchar('\n');
    printf("  %6s  %-60s %9s %11s %13s %10s%s\n", "nodes", "layout", "step s", "tokens/s",
           "tok/GPU-hour", "GiB/usable", budget ? "   est. run" : "");
    for (int i = 0; i < sz->n_rows; i++)
        size_row_text(sz, i, m);
    printf("\n%s%s\n", sz->chosen >= 0 ? "Choice: " : "Nothing fits: ", sz->reason);
}

/* JSON: the goal, the range, every row and the choice (null: none). */
static char *size_json(const options_t *o, const mesh_size_t *sz, const mesh_model_t *m,
                       const mesh_alloc_t *a)
{
    char *name = mesh_json_string(m->name), *why = mesh_json_string(sz->reason);
    char l[MESH_LAYOUT_STR_MAX], kept[64];
    size_t len = 0;
    char *out = NULL;
    FILE *f = open_memstream(&out, &len);
    if (!f || !name || !why) {
        free(name);
        free(why);
        return f ? fclose(f), free(out), NULL : NULL;
    }
    fprintf(f,
            "{\"model\":%s,\"goal\":\"%s\",\"nodes\":{\"lo\":%d,\"hi\":%d},\"gpus_per_node\":%d,"
            "\"gpu\":\"%s\"",
            name, mesh_size_goal_name(sz->goal), sz->lo, sz->hi, a->gpus_per_node, a->gpu.name);
    if (o->have_restart) /* what the sizing kept (additive: only for a restart) */
        fprintf(f, ",\"kept\":\"%s\"", mesh_restart_kept(&o->restart, kept, sizeof(kept)));
    fputs(",\"rows\":[", f);
    for (int i = 0; i < sz->n_rows; i++) {
        const mesh_size_row_t *r = &sz->rows[i];
        mesh_estimate_t est;
        fprintf(f, "%s{\"nodes\":%d,\"fits\":%s", i ? "," : "", r->nodes,
                r->fits == 1 ? "true" : "false");
        if (r->fits == 1)
            fprintf(f,
                    ",\"layout\":\"%s\",\"step_seconds\":%.6g,\"tokens_per_second\":%.6g,"
                    "\"tokens_per_gpu_hour\":%.6g,\"memory_bytes\":%.0f,\"capacity_bytes\":%.0f",
                    mesh_layout_format(&r->best.layout, l, sizeof(l)), r->best.cost.step_seconds,
                    r->best.cost.tokens_per_sec, r->tokens_per_gpu_hour, r->best.memory.total,
                    r->best.memory.capacity);
        if (r->fits == 1 && mesh_size_estimate(m, &r->best.cost, &est))
            fprintf(f, ",\"steps\":%ld,\"estimated_seconds\":%.6g", est.steps, est.seconds);
        fputs("}", f);
    }
    if (sz->chosen >= 0)
        fprintf(f, "],\"chosen\":%d", sz->rows[sz->chosen].nodes);
    else
        fputs("],\"chosen\":null", f);
    fprintf(f, ",\"reason\":%s,\"would_fit\":", why);
    fprintf(f, sz->would_fit ? "%d}\n" : "null}\n", sz->would_fit);
    free(name);
    free(why);
    return fclose(f) == 0 ? out : (free(out), NULL);
}

static int cmd_size(const options_t *o)
{
    mesh_error_t err;
    mesh_model_t model;
    mesh_alloc_t alloc;
    mesh_layout_t pins;
    int lo, hi, rc;
    if (!o->model)
        return bad("--model is required (a preset name, a spec .yaml file or a config.json)");
    if (!o->nodes_lo)
        return bad("--nodes is required (a range LO-HI, or N)");
    if (!o->gpus_per_node)
        return bad("--gpus-per-node is required");
    if ((rc = size_alloc(o, &alloc, &lo, &hi)))
        return rc;
    if (load_model(o, &model, &err) < 0 || restart_pins(o, &model, &pins, &err) < 0)
        return bad("%s", err.msg);
    mesh_size_t *sz = mesh_size_create(&model, &alloc, lo, hi, &pins, &o->pol.assume, o->goal,
                                       MESH_SIZE_TABLE, &err);
    if (!sz)
        return restart_error(o, &err), bad("%s", err.msg);
    if (o->json)
        rc = print_owned(size_json(o, sz, &model, &alloc));
    else
        size_text(o, sz, &model, &alloc);
    if (rc == 0)
        rc = sz->chosen >= 0 ? EXIT_FITS : EXIT_NOFIT;
    mesh_size_destroy(sz);
    return rc;
}

static int cmd_version(const options_t *o)
{
    if (o->json)
        printf("{\"meshplan\":\"%s\",\"libmeshplan\":\"%s\"}\n", MESHPLAN_VERSION_STRING,
               mesh_version());
    else
        printf("meshplan %s (libmeshplan %s)\n", MESHPLAN_VERSION_STRING, mesh_version());
    return EXIT_FITS;
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
    int rc = parse_args(argc - 1, argv + 1, &o);
    if (rc == HELPED)
        return EXIT_FITS;
    if (rc || (c->bit & C_POLICY && (rc = load_policy(&o))) || (rc = load_restart(&o)))
        return rc;
    return c->run(&o);
}

int main(int argc, char **argv)
{
    open_stdout();
    int rc = run(argc, argv);
    int wrc = close_stdout();
    return wrc ? wrc : rc;
}
