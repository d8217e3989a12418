/*
 * meshplan(1): plan, check and explain 3D-parallel layouts, and print the
 * rank map and the per-task variables the SPANK plugin exports.
 *
 * Exit status: 0 fits (or success), 1 does not fit, 2 bad input.
 */
#include <dirent.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "meshplan.h"

enum { EXIT_FITS = 0, EXIT_NOFIT = 1, EXIT_BADINPUT = 2 };

typedef struct options {
    const char *cmd;
    const char *model, *gpu, *mesh, *policy, *models_dir, *master_addr, *topology, *svg;
    double gpu_mem, host_mem;
    long long nodes, gpus_per_node, nvlink, node, local, job_id, step_id;
    int json, have_export, no_pictures;
    mesh_export_t export_mode;
    mesh_policy_t pol;
} options_t;

static const char *const usage_common =
    "  --model SPEC          preset name (meshplan presets) or a spec .yaml file\n"
    "  --nodes N             nodes in the allocation\n"
    "  --gpus-per-node G     GPUs (= tasks) per node\n"
    "  --gpu NAME            GPU model from the table (meshplan gpus)\n"
    "  --gpu-mem SIZE        GPU memory (80GB = 80e9, 80GiB = 80*2^30); overrides --gpu's\n"
    "  --nvlink N            GPUs per NVLink island (default: the GPU's)\n"
    "  --host-mem SIZE       host memory per node for optimizer offload, as the job's --mem\n"
    "                        (default: unknown, no offload)\n"
    "  --topology FILE.xml   a node's hwloc topology, in place of --gpu, --gpu-mem, --nvlink\n"
    "                        (and of --gpus-per-node); 'this' for this machine\n"
    "  --mesh STRING         pin fields: "
    "tp=T,pp=P,dp=D,cp=C,zero=Z,vpp=V,mb=B,recompute=R,sp=on|off,\n"
    "                        offload=none|optimizer,moments=fp32|bf16|fp16 (R: none,\n"
    "                        selective, full or full:N layers per stage)\n"
    "  --policy FILE         admin policy (YAML), as the plugin reads it\n"
    "  --set KEY=VALUE       set one policy key (e.g. reserve=0.1), after --policy\n"
    "  --models-dir DIR      look for presets here first\n"
    "  --json                machine-readable output\n";

static void usage(FILE *f, const char *cmd)
{
    if (!cmd) {
        fprintf(f, "usage: meshplan COMMAND [OPTIONS]\n\n"
                   "commands:\n"
                   "  plan     pick the fastest layout that fits, and explain it\n"
                   "  check    judge the layout given by --mesh (exit 0 fits, 1 does not)\n"
                   "  ranks    print the rank map of the planned layout\n"
                   "  env      print one task's variables, as the SPANK plugin exports them\n"
                   "  topo     show a node's GPUs, islands and NUMA, and what the planner assumes\n"
                   "  gpus     list the GPU table\n"
                   "  presets  list the shipped model presets\n\n"
                   "'meshplan COMMAND --help' describes each; exit status 0 fits, 1 does not "
                   "fit, 2 bad input.\n");
        return;
    }
    if (strcmp(cmd, "topo") == 0) {
        fprintf(f, "usage: meshplan topo [--topology FILE.xml] [--policy FILE] [--json]\n\n"
                   "Show the GPUs hwloc finds (this machine, or an exported XML topology): bus "
                   "id, model, memory,\nNUMA node, CPUs, NVLink/XGMI islands, and what the "
                   "planner will assume.\n");
        return;
    }
    if (strcmp(cmd, "gpus") == 0 || strcmp(cmd, "presets") == 0) {
        fprintf(f, "usage: meshplan %s [--json]%s\n", cmd,
                strcmp(cmd, "presets") == 0 ? " [--models-dir DIR]" : " [--policy FILE]");
        return;
    }
    fprintf(f,
            "usage: meshplan %s --model SPEC --nodes N --gpus-per-node G (--gpu NAME | --gpu-mem "
            "SIZE) [options]\n\n",
            cmd);
    if (strcmp(cmd, "plan") == 0)
        fprintf(f, "Search every valid layout, keep those that fit, pick the fastest (simplest on "
                   "near-ties) and explain why.\n\n");
    else if (strcmp(cmd, "check") == 0)
        fprintf(f, "Judge the layout of --mesh (fields left out are planned): exit 0 if it fits, "
                   "1 if not, with what would.\n\n");
    else if (strcmp(cmd, "ranks") == 0)
        fprintf(f, "Print every rank's node, local index and (tp, cp, dp, pp) coordinates.\n\n");
    else if (strcmp(cmd, "env") == 0)
        fprintf(f, "Print the variables of task (--node, --local), one NAME=value a line, exactly "
                   "as the plugin exports them.\n\n");
    fputs(usage_common, f);
    if (strcmp(cmd, "env") != 0)
        fprintf(f, "  --svg FILE            also write the rank map, pipeline and memory pictures "
                   "as SVG\n"
                   "  --no-pictures         leave the pictures out of the text\n");
    if (strcmp(cmd, "env") == 0)
        fprintf(f, "  --node I              node index within the step (default 0)\n"
                   "  --local L             task index within the node (default 0)\n"
                   "  --export MODE         torch | torchrun | mesh (default: the policy's)\n"
                   "  --master-addr HOST    first host of the step (default localhost)\n"
                   "  --job-id N --step-id N  for MASTER_PORT (default 0 and 0)\n"
                   "  --bind gpu|none       narrow each task to its GPU (with --topology)\n");
}

static int bad(const char *msg)
{
    fprintf(stderr, "meshplan: %s\n", msg);
    return EXIT_BADINPUT;
}

static int parse_options(int argc, char **argv, options_t *o)
{
    enum {
        O_MODEL = 256,
        O_NODES,
        O_GPN,
        O_GPU,
        O_GPU_MEM,
        O_NVLINK,
        O_MESH,
        O_POLICY,
        O_SET,
        O_MODELS_DIR,
        O_JSON,
        O_NODE,
        O_LOCAL,
        O_EXPORT,
        O_MASTER,
        O_JOB,
        O_STEP,
        O_TOPOLOGY,
        O_BIND,
        O_SVG,
        O_NO_PICTURES,
        O_HOST_MEM,
        O_HELP
    };
    static const struct option longopts[] = {
        {"model", required_argument, NULL, O_MODEL},
        {"nodes", required_argument, NULL, O_NODES},
        {"gpus-per-node", required_argument, NULL, O_GPN},
        {"gpu", required_argument, NULL, O_GPU},
        {"gpu-mem", required_argument, NULL, O_GPU_MEM},
        {"nvlink", required_argument, NULL, O_NVLINK},
        {"host-mem", required_argument, NULL, O_HOST_MEM},
        {"mesh", required_argument, NULL, O_MESH},
        {"policy", required_argument, NULL, O_POLICY},
        {"set", required_argument, NULL, O_SET},
        {"models-dir", required_argument, NULL, O_MODELS_DIR},
        {"json", no_argument, NULL, O_JSON},
        {"node", required_argument, NULL, O_NODE},
        {"local", required_argument, NULL, O_LOCAL},
        {"export", required_argument, NULL, O_EXPORT},
        {"master-addr", required_argument, NULL, O_MASTER},
        {"job-id", required_argument, NULL, O_JOB},
        {"step-id", required_argument, NULL, O_STEP},
        {"topology", required_argument, NULL, O_TOPOLOGY},
        {"bind", required_argument, NULL, O_BIND},
        {"svg", required_argument, NULL, O_SVG},
        {"no-pictures", no_argument, NULL, O_NO_PICTURES},
        {"help", no_argument, NULL, O_HELP},
        {NULL, 0, NULL, 0},
    };
    mesh_error_t err;
    /* --set applies after --policy whatever their order: collect first */
    const char *sets[64];
    int nsets = 0, c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        int rc = 0;
        switch (c) {
        case O_MODEL: o->model = optarg; break;
        case O_NODES: rc = mesh_parse_int(optarg, "--nodes", 1, 1 << 20, &o->nodes, &err); break;
        case O_GPN:
            rc = mesh_parse_int(optarg, "--gpus-per-node", 1, 1024, &o->gpus_per_node, &err);
            break;
        case O_GPU: o->gpu = optarg; break;
        case O_GPU_MEM:
            rc = mesh_parse_size(optarg, "--gpu-mem", 1e8, 1e14, &o->gpu_mem, &err);
            break;
        case O_NVLINK: rc = mesh_parse_int(optarg, "--nvlink", 1, 1024, &o->nvlink, &err); break;
        case O_HOST_MEM:
            rc = mesh_parse_size(optarg, "--host-mem", 1e8, 1e16, &o->host_mem, &err);
            break;
        case O_MESH: o->mesh = optarg; break;
        case O_POLICY: o->policy = optarg; break;
        case O_SET:
            if (nsets == 64)
                return bad("--set: at most 64 times");
            sets[nsets++] = optarg;
            break;
        case O_MODELS_DIR: o->models_dir = optarg; break;
        case O_JSON: o->json = 1; break;
        case O_NODE: rc = mesh_parse_int(optarg, "--node", 0, 1 << 20, &o->node, &err); break;
        case O_LOCAL: rc = mesh_parse_int(optarg, "--local", 0, 1024, &o->local, &err); break;
        case O_EXPORT:
            if (mesh_export_parse(optarg, &o->export_mode) < 0)
                return bad("--export: use torch, torchrun or mesh");
            o->have_export = 1;
            break;
        case O_MASTER: o->master_addr = optarg; break;
        case O_JOB: rc = mesh_parse_int(optarg, "--job-id", 0, UINT_MAX, &o->job_id, &err); break;
        case O_STEP:
            rc = mesh_parse_int(optarg, "--step-id", 0, UINT_MAX, &o->step_id, &err);
            break;
        case O_TOPOLOGY: o->topology = optarg; break;
        case O_SVG: o->svg = optarg; break;
        case O_NO_PICTURES: o->no_pictures = 1; break;
        case O_BIND:
            if (strcmp(optarg, "gpu") && strcmp(optarg, "none"))
                return bad("--bind: use gpu or none");
            if (nsets == 64)
                return bad("--set: at most 64 times");
            sets[nsets++] = strcmp(optarg, "gpu") == 0 ? "bind=gpu" : "bind=none";
            break;
        case 'h':
        case O_HELP: usage(stdout, o->cmd); exit(EXIT_FITS);
        default: {
            char msg[160];
            snprintf(msg, sizeof(msg), "%s: unknown or incomplete option (see meshplan %s --help)",
                     argv[optind - 1], o->cmd);
            return bad(msg);
        }
        }
        if (rc < 0)
            return bad(err.msg);
    }
    if (optind < argc) {
        char msg[160];
        snprintf(msg, sizeof(msg), "unexpected argument '%.60s' (see meshplan %s --help)",
                 argv[optind], o->cmd);
        return bad(msg);
    }
    if (o->policy && mesh_policy_load(&o->pol, o->policy, &err) < 0)
        return bad(err.msg);
    for (int i = 0; i < nsets; i++)
        if (mesh_policy_set_arg(&o->pol, sets[i], &err) < 0)
            return bad(err.msg);
    if (mesh_policy_check(&o->pol, &err) < 0)
        return bad(err.msg);
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

static int need(const options_t *o)
{
    if (!o->model)
        return bad("--model is required (a preset name or a spec .yaml file)");
    if (!o->nodes)
        return bad("--nodes is required");
    if (!o->gpus_per_node && !o->topology)
        return bad("--gpus-per-node is required (or --topology)");
    return 0;
}

/* --topology FILE.xml, or "this" for this machine; NULL without it. */
static int load_topology(const options_t *o, mesh_topo_t **out)
{
    mesh_error_t err;
    *out = NULL;
    if (!o->topology)
        return 0;
    *out = mesh_topo_load(strcmp(o->topology, "this") == 0 ? NULL : o->topology, &err);
    return *out ? 0 : bad(err.msg);
}

/* Build the plan every plan-based command needs, with the topology it was
 * made for (NULL without --topology). */
static int make_plan(const options_t *o, mesh_plan_t **out, mesh_topo_t **topo)
{
    mesh_error_t err;
    mesh_spec_dirs_t dirs;
    mesh_model_t model;
    mesh_alloc_t alloc;
    mesh_layout_t pins;
    int rc = need(o);
    if (rc || (rc = load_topology(o, topo)))
        return rc;
    preset_dirs(o, &dirs);
    if (mesh_spec_load(o->model, &dirs, &model, &err) < 0 ||
        mesh_layout_parse(o->mesh, &pins, &err) < 0)
        goto fail;
    if (*topo) {
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
fail:
    mesh_topo_destroy(*topo);
    *topo = NULL;
    return bad(err.msg);
}

static int print_owned(char *s)
{
    if (!s)
        return bad("out of memory");
    fputs(s, stdout);
    free(s);
    return 0;
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

static int write_svg(const char *path, const mesh_plan_t *p)
{
    char *svg = mesh_picture_svg(p);
    FILE *f = svg ? fopen(path, "w") : NULL;
    int ok = f && fputs(svg, f) >= 0;
    if (f && fclose(f) != 0)
        ok = 0;
    free(svg);
    if (!ok) {
        fprintf(stderr, "meshplan: --svg: cannot write %s\n", path);
        return EXIT_BADINPUT;
    }
    return 0;
}

typedef char *(*report_fn)(const mesh_plan_t *);

/* Plan, print one report, exit 0 if the layout fits and 1 if not. */
static int report(const options_t *o, report_fn text, report_fn json)
{
    mesh_plan_t *p;
    mesh_topo_t *t;
    int rc = make_plan(o, &p, &t);
    if (rc)
        return rc;
    rc = print_owned(o->json ? json(p) : text(p));
    if (rc == 0 && !o->json && !o->no_pictures) {
        /* colour only on a terminal that has it, and never with NO_COLOR */
        const char *no = getenv("NO_COLOR"), *term = getenv("TERM");
        int color = isatty(STDOUT_FILENO) && !(no && *no) && !(term && !strcmp(term, "dumb"));
        mesh_picture_opts_t po = mesh_picture_opts_for(STDOUT_FILENO, color);
        rc = print_owned(mesh_picture_text(p, &po));
    }
    if (rc == 0 && o->svg)
        rc = write_svg(o->svg, p);
    if (rc == 0)
        rc = mesh_plan_fits(p) ? EXIT_FITS : EXIT_NOFIT;
    mesh_plan_destroy(p);
    mesh_topo_destroy(t);
    return rc;
}

static int cmd_plan(const options_t *o)
{
    return report(o, mesh_report_text, mesh_report_json);
}

static int cmd_check(const options_t *o)
{
    if (!o->mesh)
        return bad("check needs --mesh (the layout to judge; fields left out are planned)");
    return cmd_plan(o);
}

static int cmd_ranks(const options_t *o)
{
    return report(o, mesh_report_ranks_text, mesh_report_ranks_json);
}

/* What the plugin does with a plan that does not fit, the CLI does too. */
static int cmd_env(const options_t *o)
{
    mesh_plan_t *p;
    mesh_topo_t *t;
    mesh_error_t err;
    char visible[32];
    int rc = make_plan(o, &p, &t);
    if (rc)
        return rc;
    char msg[4096];
    mesh_verdict_t v = mesh_plan_verdict(p, o->pol.enforce, msg, sizeof(msg));
    if (v != MESH_VERDICT_RUN) {
        /* the plugin's words, line by line, as srun prints them */
        for (char *line = strtok(msg, "\n"); line; line = strtok(NULL, "\n"))
            fprintf(stderr, "meshplan: %s: %s\n", v == MESH_VERDICT_REFUSE ? "error" : "warning",
                    line);
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
        return bad(err.msg);
    for (int i = 0; i < mesh_env_count(e); i++)
        printf("%s=%s\n", mesh_env_name(e, i), mesh_env_value(e, i));
    mesh_env_destroy(e);
    return EXIT_FITS;
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*run)(const options_t *);
    } cmds[] = {{"plan", cmd_plan}, {"check", cmd_check}, {"ranks", cmd_ranks},
                {"env", cmd_env},   {"gpus", cmd_gpus},   {"presets", cmd_presets},
                {"topo", cmd_topo}};
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(argc < 2 ? stderr : stdout, NULL);
        return argc < 2 ? EXIT_BADINPUT : EXIT_FITS;
    }
    options_t o;
    memset(&o, 0, sizeof(o));
    mesh_policy_init(&o.pol);
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
        if (strcmp(argv[1], cmds[i].name) != 0)
            continue;
        o.cmd = cmds[i].name;
        int rc = parse_options(argc - 1, argv + 1, &o);
        if (rc)
            return rc;
        return cmds[i].run(&o);
    }
    fprintf(stderr,
            "meshplan: unknown command '%.40s' (plan, check, ranks, env, topo, gpus, presets)\n",
            argv[1]);
    return EXIT_BADINPUT;
}
