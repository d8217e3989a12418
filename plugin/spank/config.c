/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The plugin's configuration, parsed in one place: plugstack.conf arguments
 * (the admin policy, strictly: an unknown key is an error naming it) and
 * the options users give srun, sbatch and salloc.
 *
 * The plugin is `required` and every srun, sbatch, salloc and slurmstepd
 * of the cluster runs it: a broken configuration must not stop the jobs
 * that do not use meshplan.  It is logged in every one of them and refuses
 * only the jobs that give meshplan's options, unless on_config_error says
 * reject (dispatch.c, client.c, stepd.c act on it).
 *
 * Options are registered with spank_option_register() from
 * slurm_spank_init, because sbatch and salloc never read a static
 * spank_options[] table.  Their callbacks run in the submitting command
 * (remote = 0) and again in slurmstepd (remote = 1), possibly twice with the
 * same value; they only check and store.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plugin.h"

static int version_said; /* this log has said which meshplan runs */

static void say(void (*log)(const char *, ...), const char *fmt, va_list ap)
{
    char msg[4 * MESH_ERROR_MAX + 256];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    if (version_said)
        log("meshplan: %s", msg);
    else
        log("meshplan %s: %s", mesh_version(), msg);
    version_said = 1;
}

void mesh_plugin_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(slurm_error, fmt, ap);
    va_end(ap);
}

void mesh_plugin_info(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(slurm_info, fmt, ap);
    va_end(ap);
}

void mesh_plugin_new_log(void)
{
    version_said = 0;
}

/* Keep what is wrong (where: the plugstack.conf argument's prefix, or ""
 * for a policy file, whose errors name it), and what it does to jobs, read
 * from on_config_error apart from the rest.  Returns -1. */
static int config_failed(int ac, char **av, const char *where, const mesh_error_t *err)
{
    mesh_error_t unread;
    int mode = mesh_policy_on_config_error(ac, av, &unread);
    mesh_plugin.config_reject = mode != 0;
    snprintf(mesh_plugin.config_error, sizeof(mesh_plugin.config_error), "%s%s", where, err->msg);
    if (mode == 0)
        snprintf(mesh_plugin.config_effect, sizeof(mesh_plugin.config_effect),
                 "configuration error (below): until it is fixed in plugstack.conf's meshplan "
                 "line or its policy file, jobs that use meshplan's options are refused and the "
                 "others run as usual (on_config_error=allow)");
    else
        snprintf(mesh_plugin.config_effect, sizeof(mesh_plugin.config_effect),
                 "configuration error (below): until it is fixed in plugstack.conf's meshplan "
                 "line or its policy file, every job is refused (%s%s)",
                 mode > 0 ? "on_config_error=reject" : unread.msg,
                 mode > 0 ? "" : ": taken as reject");
    return -1;
}

void mesh_plugin_config_log(void)
{
    mesh_plugin_new_log(); /* a configuration error says which meshplan read it */
    mesh_plugin_error("%s", mesh_plugin.config_effect);
    mesh_plugin_error("%s", mesh_plugin.config_error);
}

int mesh_plugin_config(int ac, char **av)
{
    mesh_error_t err;
    mesh_plugin.config_error[0] = mesh_plugin.config_effect[0] = '\0';
    mesh_plugin.config_reject = 0;
    mesh_policy_init(&mesh_plugin.policy);
    mesh_layout_unpin(&mesh_plugin.pins);
    for (int i = 0; i < ac; i++)
        if (mesh_policy_set_arg(&mesh_plugin.policy, av[i], &err) < 0)
            return config_failed(ac, av, strncmp(av[i], "policy=", 7) ? "plugstack.conf: " : "",
                                 &err);
    if (mesh_policy_check(&mesh_plugin.policy, &err) < 0)
        return config_failed(ac, av, "plugstack.conf: ", &err);
    return 0;
}

/* A meshplan option the job gives: with a broken configuration, the job
 * is refused for it. */
static void asked(const char *opt)
{
    if (!mesh_plugin.asked)
        mesh_plugin.asked = opt;
}

/* A bad value seen in slurmstepd fails the step from task_init, like every
 * other error there; in srun or sbatch it fails the command at once. */
static int option_error(int remote, const char *opt, const char *msg)
{
    if (remote) {
        snprintf(mesh_plugin.option_error, sizeof(mesh_plugin.option_error), "--%s: %s", opt, msg);
        return 0;
    }
    mesh_plugin_error("--%s: %s", opt, msg);
    return -1;
}

/* An option's spec, path or word into buf[len], as given (checked where it
 * is used), and *have set; `what` says what to give when it is empty or
 * too long. */
static int store(int remote, const char *opt, const char *optarg, char *buf, size_t len, int *have,
                 const char *what)
{
    char msg[160];
    size_t n = optarg ? strlen(optarg) : 0;
    if (n == 0 || n >= len) {
        snprintf(msg, sizeof(msg), "give %s (at most %zu characters)", what, len - 1);
        return option_error(remote, opt, msg);
    }
    for (size_t i = 0; i < n; i++)
        if (iscntrl((unsigned char)optarg[i]))
            return option_error(remote, opt, "control characters are not allowed");
    snprintf(buf, len, "%s", optarg); /* whole: n < len */
    *have = 1;
    return 0;
}

static int cb_model(int val, const char *optarg, int remote)
{
    asked("model");
    return store(remote, "model", optarg, mesh_plugin.model, sizeof(mesh_plugin.model),
                 &mesh_plugin.have_model, "a preset name or a spec file");
}

static int cb_mesh(int val, const char *optarg, int remote)
{
    asked("mesh");
    mesh_error_t err;
    if (mesh_layout_parse(optarg, &mesh_plugin.pins, &err) < 0)
        return option_error(remote, "mesh",
                            strncmp(err.msg, "mesh: ", 6) == 0 ? err.msg + 6 : err.msg);
    return 0;
}

static int cb_export(int val, const char *optarg, int remote)
{
    asked("mesh-export");
    mesh_export_t e;
    if (!optarg || mesh_export_parse(optarg, &e) < 0 || e == MESH_EXPORT_BATCH)
        return option_error(remote, "mesh-export", "use torch, torchrun or mesh");
    mesh_plugin.export_mode = e;
    mesh_plugin.have_export = 1;
    return 0;
}

static int cb_bind(int val, const char *optarg, int remote)
{
    asked("mesh-bind");
    if (!optarg || (strcmp(optarg, "gpu") && strcmp(optarg, "none")))
        return option_error(remote, "mesh-bind", "use gpu or none");
    mesh_plugin.bind = strcmp(optarg, "gpu") == 0;
    mesh_plugin.have_bind = 1;
    return 0;
}

/* Now on the local clock, as seconds since its 1970-01-01T00:00 (what a
 * by:DATE is read against). */
static long long local_now(void)
{
    time_t t = time(NULL);
    struct tm tm;
    return localtime_r(&t, &tm) ? (long long)t + tm.tm_gmtoff : (long long)t;
}

static int cb_size(int val, const char *optarg, int remote)
{
    asked("mesh-size");
    mesh_error_t err;
    mesh_size_aim_t aim;
    /* checked against this machine's clock (on the nodes, where the job
     * may start after its deadline, only its form): the controller reads
     * it again against its own */
    if (!optarg || mesh_size_aim_parse(optarg, remote ? 0 : local_now(), &aim, &err) < 0)
        return option_error(remote, "mesh-size",
                            optarg ? err.msg : "use min, fastest, efficient or by:WHEN");
    snprintf(mesh_plugin.size_goal, sizeof(mesh_plugin.size_goal), "%s", optarg);
    mesh_plugin.have_size = 1;
    return 0;
}

static int cb_headroom(int val, const char *optarg, int remote)
{
    asked("mesh-headroom");
    mesh_error_t err;
    char msg[128];
    snprintf(msg, sizeof(msg),
             "give the fraction of usable GPU memory to leave free, 0 to %g (0.1: a tenth)",
             MESH_HEADROOM_MAX);
    if (!optarg || mesh_parse_double(optarg, "mesh-headroom", 0, MESH_HEADROOM_MAX,
                                     &mesh_plugin.headroom, &err) < 0)
        return option_error(remote, "mesh-headroom", msg);
    mesh_plugin.have_headroom = 1;
    return 0;
}

static int cb_from(int val, const char *optarg, int remote)
{
    asked("mesh-from");
    return store(remote, "mesh-from", optarg, mesh_plugin.from, sizeof(mesh_plugin.from),
                 &mesh_plugin.have_from, "the previous run's saved plan");
}

static int cb_keep(int val, const char *optarg, int remote)
{
    asked("mesh-keep");
    return store(remote, "mesh-keep", optarg, mesh_plugin.keep, sizeof(mesh_plugin.keep),
                 &mesh_plugin.have_keep, "the dimensions to keep, as tp,pp");
}

/* The restart of a job that resubmits itself: the layout its tasks were
 * given (MESH_PLAN, MESH_GLOBAL_BATCH_SIZE), in sbatch's environment. */
static int restart_from_env(mesh_restart_t *r, mesh_error_t *err)
{
    const char *plan = getenv(MESH_ENV_PLAN);
    if (!plan)
        return mesh_error_set(err,
                              "--mesh-keep: give --mesh-from=FILE, the previous run's plan "
                              "(meshplan plan --json, or the %s it exported), or "
                              "submit from the previous run's job, where %s is set",
                              MESH_ENV_PLAN, MESH_ENV_PLAN);
    if (mesh_restart_from_env(plan, getenv(MESH_ENV_GLOBAL_BATCH), r, err) < 0)
        return mesh_error_prefix(err, "--mesh-keep");
    return 0;
}

int mesh_plugin_restart(const char *line, const mesh_model_t *m, mesh_error_t *err)
{
    mesh_restart_t *r = &mesh_plugin.restart;
    const char *opt = mesh_plugin.have_from ? "--mesh-from" : "--mesh-keep";
    if (!mesh_plugin.have_from && !mesh_plugin.have_keep)
        return 0;
    if (line) {
        if (mesh_restart_parse(line, r, err) < 0)
            return mesh_error_prefix(err, "%s", opt);
    } else if (mesh_plugin.have_from) {
        if (mesh_restart_load(mesh_plugin.from, r, err) < 0)
            return mesh_error_prefix(err, "--mesh-from");
    } else if (restart_from_env(r, err) < 0) {
        return -1;
    }
    if (mesh_plugin.have_keep && mesh_restart_keep(r, mesh_plugin.keep, err) < 0)
        return mesh_error_prefix(err, "--mesh-keep");
    if (mesh_restart_pins(r, m, &mesh_plugin.pins, err) < 0) {
        /* --mesh values the kept ones refuse: the --mesh-keep that frees
         * them (a pin in conflict has another value: never the kept one) */
        char freed[64], keep[64], pinned[64];
        if (mesh_restart_frees(r, err->msg, NULL, freed, keep, pinned, sizeof(freed)))
            return mesh_error_prefix(err, "%s (--mesh-keep %s frees %s)", opt, keep, freed);
        return mesh_error_prefix(err, "%s", opt);
    }
    mesh_plugin.have_restart = 1;
    return 0;
}

static int cb_explain(int val, const char *optarg, int remote)
{
    asked("mesh-explain");
    mesh_plugin.explain = 1;
    return 0;
}

static struct spank_option options[] = {
    {"model", "SPEC",
     "[meshplan] plan the job's 3D-parallel layout for this model: a preset name (meshplan "
     "presets), a spec .yaml file or a Hugging Face config.json",
     1, 0, cb_model},
    /* its help is made from the library's table of keys at registration */
    {"mesh", "LAYOUT", NULL, 1, 0, cb_mesh},
    {"mesh-export", "MODE",
     "[meshplan] variables to export: torch (MESH_* + RANK, WORLD_SIZE, MASTER_ADDR, ...; the "
     "default), torchrun (PET_* for one torchrun per node) or mesh (MESH_* only)",
     1, 0, cb_export},
    {"mesh-bind", "gpu|none",
     "[meshplan] gpu: each task sees only its own GPU (CUDA_VISIBLE_DEVICES), chosen so that TP "
     "groups share an NVLink island",
     1, 0, cb_bind},
    {"mesh-explain", NULL, "[meshplan] print the explained plan before the step starts", 0, 0,
     cb_explain},
    {"mesh-size", "min|fastest|efficient|by:WHEN",
     "[meshplan] with a node range (-N LO-HI), let the controller pick the count: the fewest "
     "that fit, the shortest step, the most tokens per GPU-hour, or the fewest whose run ends "
     "by WHEN (a date 2026-12-24[T18:00] or a duration 7-00:00:00, 14d)",
     1, 0, cb_size},
    {"mesh-headroom", "F",
     "[meshplan] leave this fraction of the usable GPU memory free (the spec's train.headroom; "
     "the site's headroom is the least)",
     1, 0, cb_headroom},
    {"mesh-from", "FILE",
     "[meshplan] restart from a previous run's layout (its meshplan plan --json, or the MESH_PLAN "
     "it exported, saved beside its checkpoint): keep what the checkpoint is sharded by, and "
     "export MESH_RESHARD",
     1, 0, cb_from},
    {"mesh-keep", "DIMS",
     "[meshplan] restart keeping these dimensions (default tp,pp,vpp,ep,etp; none: only report "
     "what changed) of --mesh-from's layout, or, without it, of the MESH_PLAN of the job that "
     "resubmits itself",
     1, 0, cb_keep},
    SPANK_OPTIONS_TABLE_END,
};

/* --mesh's help: every key of the library's one table, so that it cannot go
 * stale as keys are added. */
static char *mesh_usage(void)
{
    static char usage[512];
    snprintf(usage, sizeof(usage),
             "[meshplan] pin layout fields, the rest planned: auto or %s (R: none, selective, "
             "full or full:N layers per stage)",
             mesh_layout_keys_usage());
    return usage;
}

int mesh_plugin_register_options(spank_t sp)
{
    for (struct spank_option *o = options; o->name; o++) {
        if (!o->usage)
            o->usage = mesh_usage();
        spank_err_t rc = spank_option_register(sp, o);
        if (rc != ESPANK_SUCCESS) {
            mesh_plugin_error("cannot register --%s: %s", o->name, spank_strerror(rc));
            return -1;
        }
    }
    return 0;
}

int mesh_plugin_bind(void)
{
    return mesh_plugin.have_bind ? mesh_plugin.bind : mesh_plugin.policy.launch.bind_gpu;
}

mesh_export_t mesh_plugin_export_mode(void)
{
    return mesh_plugin.have_export ? mesh_plugin.export_mode
                                   : mesh_plugin.policy.launch.export_mode;
}
