/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan.so's glue, against a fake SPANK host: every context, the options,
 * the deferred errors of slurmstepd, and the variables a task gets.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../plugin/spank/plugin.h"
#include "spank_mock.h"

static char models_arg[512];

/* The plugstack.conf arguments every test starts from, and extra ones
 * (space-separated, as plugstack.conf separates them). */
static int init(spank_context_t ctx, const char *extra)
{
    char *av[8], words[1024] = "", *save = NULL;
    int ac = 0;
    snprintf(models_arg, sizeof(models_arg), "models_dir=%s", getenv("MESH_MODELS_DIR"));
    av[ac++] = "gpu=H100-SXM";
    av[ac++] = models_arg;
    snprintf(words, sizeof(words), "%s", extra ? extra : "");
    for (char *w = strtok_r(words, " ", &save); w && ac < 8; w = strtok_r(NULL, " ", &save))
        av[ac++] = w;
    mock_reset(ctx);
    mesh_stepd_exit();
    memset(&mesh_plugin, 0, sizeof(mesh_plugin));
    return slurm_spank_init(NULL, ac, av);
}

static void slurmd__does_nothing(void **state)
{
    assert_int_equal(init(S_CTX_SLURMD, "colour=blue"), 0);
    assert_int_equal(mock.n_options, 0);
    assert_int_equal(mock.errors, 0);
}

static void options__registered_and_checked(void **state)
{
    assert_int_equal(init(S_CTX_ALLOCATOR, NULL), 0);
    assert_int_equal(mock.n_options, 9);
    /* --mesh's help names every key of the library's table, and only them */
    const char *usage = NULL;
    for (int i = 0; i < mock.n_options; i++)
        if (strcmp(mock.options[i].name, "mesh") == 0)
            usage = mock.options[i].usage;
    assert_non_null(usage);
    assert_non_null(strstr(usage, mesh_layout_keys_usage()));
    assert_non_null(strstr(usage, ",ep=E,etp=X,"));
    assert_non_null(strstr(usage, ",offload=none|optimizer,moments=fp32|bf16|fp16"));
    assert_int_equal(mesh_test_option("mesh", "tp=2,pp=4", 0), 0);
    assert_int_equal(mesh_plugin.pins.tp, 2);
    assert_int_equal(mesh_test_option("mesh", "tp=2,pp=4", 0), 0); /* twice is fine */
    assert_int_equal(mesh_test_option("mesh", "warp=9", 0), -1);
    assert_non_null(strstr(mock.last_error, "warp"));
    assert_int_equal(mesh_test_option("mesh-export", "slurm", 0), -1);
    assert_non_null(strstr(mock.last_error, "--mesh-export"));
    assert_int_equal(mesh_test_option("model", "", 0), -1);
    assert_int_equal(mesh_test_option("model", "bad\nname", 0), -1);
    /* a terminal's escape first or a tab last: each character is looked at */
    assert_int_equal(mesh_test_option("model", "\033[2Jllama3-8b", 0), -1);
    assert_non_null(strstr(mock.last_error, "--model: control characters are not allowed"));
    assert_int_equal(mesh_test_option("model", "llama3-8b\t", 0), -1);
    /* a path of the most characters the option keeps is kept whole; one
     * more is refused, saying how many */
    char path[MESH_SPEC_ARG_MAX + 1];
    memset(path, 'a', sizeof(path));
    path[0] = '/', path[MESH_SPEC_ARG_MAX - 1] = '\0';
    assert_int_equal(mesh_test_option("model", path, 0), 0);
    assert_string_equal(mesh_plugin.model, path);
    path[MESH_SPEC_ARG_MAX - 1] = 'a', path[MESH_SPEC_ARG_MAX] = '\0';
    assert_int_equal(mesh_test_option("model", path, 0), -1);
    assert_non_null(strstr(mock.last_error, "--model: give "));
    char most[48];
    snprintf(most, sizeof(most), "(at most %d characters)", MESH_SPEC_ARG_MAX - 1);
    assert_non_null(strstr(mock.last_error, most));
    assert_int_equal(mesh_test_option("model", "llama3-8b", 0), 0);
    assert_int_equal(mesh_test_option("mesh-export", "mesh", 0), 0);
    assert_int_equal(mesh_plugin_export_mode(), MESH_EXPORT_MESH);
    /* --mesh-bind: gpu or none, over the policy's launch.bind_gpu */
    int policy_bind = mesh_plugin_bind();
    assert_int_equal(mesh_test_option("mesh-bind", policy_bind ? "none" : "gpu", 0), 0);
    assert_int_equal(mesh_plugin_bind(), !policy_bind);
    assert_int_equal(mesh_test_option("mesh-bind", policy_bind ? "gpu" : "none", 0), 0);
    assert_int_equal(mesh_plugin_bind(), policy_bind);
    assert_int_equal(mesh_test_option("mesh-bind", "cores", 0), -1);
    assert_non_null(strstr(mock.last_error, "--mesh-bind"));
    assert_non_null(strstr(mock.last_error, "use gpu or none"));
    assert_int_equal(mesh_test_option("mesh-bind", NULL, 0), -1);
}

/* A date is read on the user's clock, ahead of UTC or behind it: on a
 * clock 12 hours behind, an hour from now is in the future and an hour
 * ago is not (the clock's offset added, not taken away). */
static void deadline_on_the_local_clock(void)
{
    char *tz = getenv("TZ") ? strdup(getenv("TZ")) : NULL;
    setenv("TZ", "UTC+12", 1);
    tzset();
    for (int ahead = 1; ahead >= -1; ahead -= 2) {
        time_t t = time(NULL) + ahead * 3600;
        struct tm tm;
        char goal[40];
        assert_non_null(localtime_r(&t, &tm));
        strftime(goal, sizeof(goal), "by:%Y-%m-%dT%H:%M", &tm);
        assert_int_equal(init(S_CTX_ALLOCATOR, NULL), 0);
        mesh_test_option("model", "llama3-8b", 0);
        if (mesh_test_option("mesh-size", goal, 0) != (ahead > 0 ? 0 : -1))
            fail_msg("%s on a clock 12 hours behind UTC: %s", goal,
                     ahead > 0 ? mock.last_error : "accepted");
    }
    if (tz)
        setenv("TZ", tz, 1);
    else
        unsetenv("TZ");
    free(tz);
    tzset();
}

static void submit__bad_config_or_spec_fails_at_once(void **state)
{
    /* (every command stops for it only with on_config_error=reject: config__*) */
    assert_int_equal(init(S_CTX_LOCAL, "colour=blue on_config_error=reject"), -1);
    assert_non_null(strstr(mock.last_error, "unknown policy key 'colour'"));
    assert_int_equal(init(S_CTX_ALLOCATOR, NULL), 0);
    mesh_test_option("model", "no-such-model", 0);
    assert_int_equal(slurm_spank_init_post_opt(NULL, 0, NULL), -1);
    assert_non_null(strstr(mock.last_error, "unknown preset"));
    assert_int_equal(init(S_CTX_ALLOCATOR, NULL), 0);
    mesh_test_option("model", "/nonexistent/spec.yaml", 0);
    assert_int_equal(slurm_spank_init_post_opt(NULL, 0, NULL), -1);
    assert_non_null(strstr(mock.last_error, "cannot open"));
    /* a good spec is recorded for job_submit/meshplan, resolved */
    assert_int_equal(init(S_CTX_ALLOCATOR, NULL), 0);
    mesh_test_option("model", "llama3-8b", 0);
    mesh_test_option("mesh", "tp=2", 0);
    assert_int_equal(slurm_spank_init_post_opt(NULL, 0, NULL), 0);
    const char *req = mock_getenv("CONTROL:MESHPLAN_REQUEST");
    assert_non_null(req);
    assert_true(
        strncmp(req, "1;tp=2;{name: llama3-8b, params: 8030261248, arch: {layers: 32", 60) == 0);
    assert_null(mock_getenv("CONTROL:MESHPLAN_SIZE")); /* not sized unless asked */
    /* --mesh-size: the goal recorded beside the request; a bad one, or one
     * without a model to size for, stops sbatch at once */
    assert_int_equal(init(S_CTX_ALLOCATOR, NULL), 0);
    mesh_test_option("model", "llama3-8b", 0);
    assert_int_equal(mesh_test_option("mesh-size", "efficient", 0), 0);
    assert_int_equal(slurm_spank_init_post_opt(NULL, 0, NULL), 0);
    assert_string_equal(mock_getenv("CONTROL:MESHPLAN_SIZE"), "efficient");
    assert_int_equal(init(S_CTX_ALLOCATOR, NULL), 0);
    assert_int_equal(mesh_test_option("mesh-size", "largest", 0), -1);
    assert_non_null(
        strstr(mock.last_error,
               "--mesh-size: unknown goal 'largest' (min, fastest, efficient or by:WHEN)"));
    /* a deadline goes to the controller as written, to be read against its
     * clock; sbatch refuses one in the past (the nodes: deadline__nodes) */
    assert_int_equal(init(S_CTX_ALLOCATOR, NULL), 0);
    mesh_test_option("model", "llama3-8b", 0);
    assert_int_equal(mesh_test_option("mesh-size", "by:14d", 0), 0);
    assert_int_equal(slurm_spank_init_post_opt(NULL, 0, NULL), 0);
    assert_string_equal(mock_getenv("CONTROL:MESHPLAN_SIZE"), "by:14d");
    assert_int_equal(init(S_CTX_ALLOCATOR, NULL), 0);
    assert_int_equal(mesh_test_option("mesh-size", "by:2001-01-01", 0), -1);
    assert_non_null(
        strstr(mock.last_error, "--mesh-size: goal by:2001-01-01: the date is not in the future"));
    deadline_on_the_local_clock();
    assert_int_equal(init(S_CTX_ALLOCATOR, NULL), 0);
    assert_int_equal(mesh_test_option("mesh-size", "min", 0), 0);
    assert_int_equal(slurm_spank_init_post_opt(NULL, 0, NULL), -1);
    assert_non_null(strstr(mock.last_error, "--mesh-size: give the model to size the job for"));
    /* --mesh-headroom: the spec's train.headroom, carried to the controller
     * and the nodes with the spec (its digest says so); a bad one stops
     * sbatch naming the option and the range */
    assert_int_equal(init(S_CTX_ALLOCATOR, NULL), 0);
    mesh_test_option("model", "llama3-8b", 0);
    assert_int_equal(mesh_test_option("mesh-headroom", "0.1", 0), 0);
    assert_int_equal(slurm_spank_init_post_opt(NULL, 0, NULL), 0);
    req = mock_getenv("CONTROL:MESHPLAN_REQUEST");
    assert_non_null(req);
    assert_non_null(strstr(req, ", headroom: 0.10000000000000001"));
    assert_non_null(strstr(getenv("MESHPLAN_SPEC"), ", headroom: 0.10000000000000001"));
    assert_int_equal(init(S_CTX_ALLOCATOR, NULL), 0);
    assert_int_equal(mesh_test_option("mesh-headroom", "0.95", 0), -1);
    assert_non_null(strstr(mock.last_error, "--mesh-headroom: give the fraction of usable GPU "
                                            "memory to leave free, 0 to 0.9"));
    assert_int_equal(init(S_CTX_ALLOCATOR, NULL), 0);
    assert_int_equal(mesh_test_option("mesh-headroom", "lots", 0), -1);
    /* pins no allocation takes stop sbatch at once, in the CLI's words */
    assert_int_equal(init(S_CTX_ALLOCATOR, NULL), 0);
    mesh_test_option("model", "llama3-8b", 0);
    mesh_test_option("mesh", "tp=3", 0);
    assert_int_equal(slurm_spank_init_post_opt(NULL, 0, NULL), -1);
    assert_non_null(strstr(mock.last_error, "--mesh: tp 3 must divide heads 32, and divide "
                                            "kv_heads 8 or be a multiple of it (on any "
                                            "allocation of llama3-8b)"));
    assert_null(mock_getenv("CONTROL:MESHPLAN_REQUEST"));
    assert_int_equal(init(S_CTX_ALLOCATOR, NULL), 0);
    mesh_test_option("model", "mixtral-8x7b", 0);
    mesh_test_option("mesh", "ep=3", 0);
    assert_int_equal(slurm_spank_init_post_opt(NULL, 0, NULL), -1);
    assert_non_null(strstr(mock.last_error, "--mesh: ep 3 must divide the 8 experts"));
    /* no --model: the plugin stays out of the way */
    assert_int_equal(init(S_CTX_LOCAL, NULL), 0);
    assert_int_equal(slurm_spank_init_post_opt(NULL, 0, NULL), 0);
    assert_int_equal(slurm_spank_local_user_init(NULL, 0, NULL), 0);
}

/* --mesh-from and --mesh-keep at submission: the saved layout, read as the
 * user, pins what it keeps in the controller's request, and travels to the
 * nodes as one line; a job that resubmits itself keeps its MESH_PLAN's. */
/* sbatch (or, in_job, the job's srun) --model=llama3-8b with --mesh-from
 * FROM and --mesh-keep KEEP (NULL: not given): post_opt's return. */
static int restart_submit(int in_job, const char *from, const char *keep)
{
    assert_int_equal(init(in_job ? S_CTX_LOCAL : S_CTX_ALLOCATOR, NULL), 0);
    mesh_test_option("model", "llama3-8b", 0);
    if (from)
        assert_int_equal(mesh_test_option("mesh-from", from, 0), 0);
    if (keep)
        assert_int_equal(mesh_test_option("mesh-keep", keep, 0), 0);
    if (in_job)
        setenv("SLURM_JOB_ID", "7", 1);
    int rc = slurm_spank_init_post_opt(NULL, 0, NULL);
    unsetenv("SLURM_JOB_ID");
    return rc;
}

static void submit__restart_pins_and_travels(void **state)
{
    char from[512];
    snprintf(from, sizeof(from), "%s/../hostile/restarts/llama3-8b-2x8.env",
             getenv("MESH_FIXTURES"));
    unsetenv("MESHPLAN_RESTART");
    unsetenv("MESH_PLAN");
    unsetenv("MESH_GLOBAL_BATCH_SIZE");
    assert_int_equal(restart_submit(0, from, "tp,cp"), 0);
    const char *req = mock_getenv("CONTROL:MESHPLAN_REQUEST");
    assert_non_null(req);
    assert_true(strncmp(req, "1;tp=1,cp=2;{", 13) == 0);
    const char *line = getenv("MESHPLAN_RESTART");
    assert_non_null(line);
    assert_true(strncmp(line, "keep=tp,cp;batch=512;", 21) == 0);
    /* the job's srun takes the line, not the file (it may not see it) */
    assert_int_equal(restart_submit(1, "/nonexistent/plan.json", NULL), 0);
    assert_int_equal(mesh_plugin.pins.cp, 2);
    /* a new job reads its own file, whatever the environment carries */
    assert_int_equal(restart_submit(0, "/nonexistent/plan.json", NULL), -1);
    assert_non_null(strstr(mock.last_error, "--mesh-from: "));
    assert_non_null(strstr(mock.last_error, "/nonexistent/plan.json"));
    /* a --mesh value the kept one refuses, with the --mesh-keep that frees it */
    assert_int_equal(init(S_CTX_ALLOCATOR, NULL), 0);
    mesh_test_option("model", "llama3-8b", 0);
    assert_int_equal(mesh_test_option("mesh", "cp=4", 0), 0);
    assert_int_equal(mesh_test_option("mesh-from", from, 0), 0);
    assert_int_equal(mesh_test_option("mesh-keep", "tp,cp", 0), 0);
    assert_int_equal(slurm_spank_init_post_opt(NULL, 0, NULL), -1);
    assert_non_null(strstr(mock.last_error, "--mesh-from (--mesh-keep tp frees cp): mesh cp=4 "
                                            "conflicts with the kept cp=2"));
    /* what cannot be kept is refused at once */
    assert_int_equal(restart_submit(0, from, "tp,mb"), -1);
    assert_non_null(strstr(mock.last_error, "--mesh-keep: "));
    assert_non_null(strstr(mock.last_error, "'mb' does not shard a checkpoint"));
    /* --mesh-keep alone: the MESH_PLAN of the job resubmitting itself */
    unsetenv("MESHPLAN_RESTART");
    assert_int_equal(restart_submit(0, NULL, "tp,pp"), -1);
    assert_non_null(strstr(mock.last_error, "--mesh-keep: give --mesh-from=FILE"));
    setenv("MESH_PLAN", "tp=2,pp=1,dp=4,cp=1,zero=1,vpp=1,mb=1,recompute=none,sp=on", 1);
    assert_int_equal(restart_submit(0, NULL, "tp,pp"), 0);
    assert_true(strncmp(mock_getenv("CONTROL:MESHPLAN_REQUEST"), "1;tp=2,pp=1;{", 13) == 0);
    /* ... damaged there (a script's own export cut it short): refused, not guessed */
    setenv("MESH_PLAN", "tp=2,pp=1", 1);
    assert_int_equal(restart_submit(0, NULL, "tp,pp"), -1);
    assert_non_null(strstr(mock.last_error, "--mesh-keep: MESH_PLAN:1: MESH_PLAN: the layout "
                                            "'tp=2,pp=1' lacks dp,cp,zero"));
    unsetenv("MESH_PLAN");
    /* the job's srun given a restart line that does not read */
    setenv("MESHPLAN_RESTART", "keep=tp;batch=x", 1);
    assert_int_equal(restart_submit(1, "/nonexistent/plan.json", NULL), -1);
    assert_non_null(strstr(mock.last_error, "--mesh-from: restart: expected batch=...; in "
                                            "'batch=x'"));
    unsetenv("MESHPLAN_RESTART");
    /* a new job from inside a restarted one, not itself a restart: the
     * line the environment carries is not passed on to its nodes */
    assert_int_equal(restart_submit(0, from, "tp,cp"), 0);
    assert_non_null(getenv("MESHPLAN_RESTART"));
    assert_int_equal(restart_submit(0, NULL, NULL), 0);
    assert_null(getenv("MESHPLAN_RESTART"));
    assert_true(strncmp(mock_getenv("CONTROL:MESHPLAN_REQUEST"), "1;auto;{", 8) == 0);
    unsetenv("MESHPLAN_RESTART");
}

/* srun's local context for `model` under the policy's `extra` words, its
 * options read: one step of `tasks` tasks over `nodes` nodes to judge. */
static void srun_step(const char *model, const char *extra, int nodes, int tasks)
{
    assert_int_equal(init(S_CTX_LOCAL, extra), 0);
    mesh_test_option("model", model, 0);
    assert_int_equal(slurm_spank_init_post_opt(NULL, 0, NULL), 0);
    mock.nnodes = nodes;
    mock.total_tasks = tasks;
}

static void submit__srun_refuses_what_does_not_fit(void **state)
{
    srun_step("llama3.1-405b", NULL, 1, 8);
    assert_int_equal(slurm_spank_local_user_init(NULL, 0, NULL), -1);
    assert_non_null(strstr(mock.last_error, "what would fit"));
    /* uneven tasks per node */
    mock.nnodes = 2;
    mock.total_tasks = 15;
    assert_int_equal(slurm_spank_local_user_init(NULL, 0, NULL), -1);
    assert_non_null(strstr(mock.last_error, "same number of tasks"));
    /* enforce=warn lets it through */
    srun_step("llama3.1-405b", "enforce=warn", 1, 8);
    mock.errors = 0;
    assert_int_equal(slurm_spank_local_user_init(NULL, 0, NULL), 0);
    assert_int_equal(mock.errors, 0);
}

/* A policy that declares no GPU (no gpu=, no gpu_mem=): srun knows no
 * node's GPUs, so it leaves the judgement to slurmstepd, which sees them:
 * even a model that fits no 8-GPU node of any GPU the table knows is let
 * through by srun, unplanned. */
static void submit__srun_without_a_policy_gpu_leaves_it_to_the_nodes(void **state)
{
    assert_int_equal(init(S_CTX_LOCAL, NULL), 0); /* models_arg */
    char *av[] = {models_arg};
    mock_reset(S_CTX_LOCAL);
    memset(&mesh_plugin, 0, sizeof(mesh_plugin));
    assert_int_equal(slurm_spank_init(NULL, 1, av), 0);
    mesh_test_option("model", "llama3.1-405b", 0);
    assert_int_equal(slurm_spank_init_post_opt(NULL, 0, NULL), 0);
    mock.nnodes = 1;
    mock.total_tasks = 8;
    unsetenv("MESHPLAN_SUBMIT_PLAN");
    assert_int_equal(slurm_spank_local_user_init(NULL, 0, NULL), 0);
    assert_int_equal(mock.errors, 0);
    assert_null(getenv("MESHPLAN_SUBMIT_PLAN"));
}

/* `srun -n 4` inside an 8-GPU allocation: srun's SLURM_GPUS_ON_NODE is the
 * allocation's 8, the step has 4 tasks with a GPU each (Slurm gives each
 * task its own): srun plans 4 GPUs and lets it start.  Only a torchrun
 * launcher takes the node's GPUs. */
static void submit__srun_step_smaller_than_the_allocation(void **state)
{
    setenv("SLURM_GPUS_ON_NODE", "8", 1);
    srun_step("llama3-8b", NULL, 1, 4);
    assert_int_equal(slurm_spank_local_user_init(NULL, 0, NULL), 0);
    assert_int_equal(mock.errors, 0);
    unsetenv("SLURM_GPUS_ON_NODE");
}

/* A torchrun launcher (one task a node) whose srun has no
 * SLURM_GPUS_ON_NODE: srun cannot tell how many GPUs the launcher gets, so
 * it leaves the judgement to slurmstepd, even of a model that fits no
 * node; given the node's 8 GPUs, it judges, and refuses what does not fit. */
static void submit__srun_torchrun_without_gpus_leaves_it_to_the_nodes(void **state)
{
    unsetenv("SLURM_GPUS_ON_NODE");
    srun_step("llama3.1-405b", "export=torchrun", 1, 1);
    unsetenv("MESHPLAN_SUBMIT_PLAN");
    assert_int_equal(slurm_spank_local_user_init(NULL, 0, NULL), 0);
    assert_int_equal(mock.errors, 0);
    assert_null(getenv("MESHPLAN_SUBMIT_PLAN"));
    setenv("SLURM_GPUS_ON_NODE", "8", 1);
    srun_step("llama3.1-405b", "export=torchrun", 1, 1);
    assert_int_equal(slurm_spank_local_user_init(NULL, 0, NULL), -1);
    assert_non_null(strstr(mock.last_error, "what would fit"));
    unsetenv("SLURM_GPUS_ON_NODE");
}

/* slurmstepd: user_init then task_init for local task `task`. */
static int run_step(int task)
{
    assert_int_equal(slurm_spank_user_init(NULL, 0, NULL), 0); /* never fails */
    mock.task_id = task;
    return slurm_spank_task_init(NULL, 0, NULL);
}

/* --mesh-size=by:DATE on the nodes, where the job may start after its
 * deadline: only a bad form fails the step (the controller sized it). */
static void deadline__nodes_check_only_the_form(void **state)
{
    (void)state;
    assert_int_equal(init(S_CTX_REMOTE, NULL), 0);
    mesh_test_option("model", "llama3-8b", 1);
    assert_int_equal(mesh_test_option("mesh-size", "by:2001-01-01", 1), 0);
    mock_step(0, 1, 0, 8);
    assert_int_equal(run_step(0), 0);
    assert_int_equal(init(S_CTX_REMOTE, NULL), 0);
    mesh_test_option("model", "llama3-8b", 1);
    assert_int_equal(mesh_test_option("mesh-size", "by:2001-02-30", 1), 0);
    mock_step(0, 1, 0, 8);
    assert_int_equal(run_step(0), -1);
    assert_non_null(strstr(mock.error_log, "--mesh-size: goal by:DATE: '2001-02-30': 2001-02"));
}

/* A log's first message says which meshplan runs: srun's, and each task's
 * standard error in slurmstepd (srun's too, the user's); the others do not
 * repeat it. */
static void log__first_message_says_the_version(void **state)
{
    char want[64];
    snprintf(want, sizeof(want), "meshplan %s: ", MESHPLAN_VERSION_STRING);
    assert_int_equal(init(S_CTX_LOCAL, NULL), 0);
    mesh_plugin_new_log(); /* as a new srun process starts */
    assert_int_equal(mesh_test_option("mesh", "warp=9", 0), -1);
    assert_int_equal(mesh_test_option("mesh-export", "slurm", 0), -1);
    assert_true(strncmp(mock.error_log, want, strlen(want)) == 0);
    assert_true(strncmp(strchr(mock.error_log, '\n') + 1, "meshplan: --mesh-export: ", 25) == 0);
    assert_int_equal(init(S_CTX_REMOTE, NULL), 0);
    mesh_test_option("model", "llama3.1-405b", 1);
    mock_step(0, 1, 0, 8);
    assert_int_equal(run_step(0), -1);
    assert_true(strncmp(mock.error_log, want, strlen(want)) == 0);
    assert_non_null(strstr(mock.error_log, "\nmeshplan: what would fit"));
    mock.error_log[0] = '\0';
    mock.task_id = 1; /* another task: its own standard error */
    assert_int_equal(slurm_spank_task_init(NULL, 0, NULL), -1);
    assert_true(strncmp(mock.error_log, want, strlen(want)) == 0);
}

/* A directory of per-node topology files, node i+1 getting fixture names[i]
 * (NULL-terminated); its "topology_xml=DIR/%n.xml" plugstack argument in arg. */
static void topo_dir(char *dir, char *arg, size_t len, const char *const *names)
{
    char cmd[1024];
    assert_non_null(mkdtemp(dir));
    for (int i = 0; names[i]; i++) {
        snprintf(cmd, sizeof(cmd), "cp %s/topologies/%s.xml %s/n%d.xml", getenv("MESH_FIXTURES"),
                 names[i], dir, i + 1);
        assert_int_equal(system(cmd), 0);
    }
    snprintf(arg, len, "topology_xml=%s/%%n.xml", dir);
}

/* A step that fits only with the optimizer offloaded to the host (Llama 3
 * 70B on one node of 8 H100s): where srun knows the job's memory
 * (SLURM_MEM_PER_NODE) it judges, refusing 64 GiB and running 2 TiB;
 * where it does not, the job's memory is the nodes' to see, and srun
 * lets the step start. */
static void submit__srun_leaves_an_offload_to_the_nodes(void **state)
{
    srun_step("llama3-70b", NULL, 1, 8);
    unsetenv("SLURM_MEM_PER_NODE");
    assert_int_equal(slurm_spank_local_user_init(NULL, 0, NULL), 0);
    assert_int_equal(mock.errors, 0);
    setenv("SLURM_MEM_PER_NODE", "65536", 1);
    assert_int_equal(slurm_spank_local_user_init(NULL, 0, NULL), -1);
    assert_non_null(strstr(mock.last_error, "what would fit"));
    mock.errors = 0;
    setenv("SLURM_MEM_PER_NODE", "2097152", 1);
    assert_int_equal(slurm_spank_local_user_init(NULL, 0, NULL), 0);
    assert_int_equal(mock.errors, 0);
    unsetenv("SLURM_MEM_PER_NODE");
}

static void rm_dir(const char *dir)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static void submit__srun_refuses_mixed_nodes(void **state)
{
    /* per-node files: n1 has H100s, n2 A100s; srun sees both before any task starts */
    char dir[] = "/tmp/meshplan-topo-XXXXXX", arg[300], cmd[1200];
    topo_dir(dir, arg, sizeof(arg), (const char *[]){"hgx-h100-8gpu", "two-islands-8gpu", NULL});
    assert_int_equal(init(S_CTX_LOCAL, arg), 0);
    mesh_test_option("model", "llama3-8b", 0);
    assert_int_equal(slurm_spank_init_post_opt(NULL, 0, NULL), 0);
    mock.nnodes = 2;
    mock.total_tasks = 16;
    setenv("SLURM_NODELIST", "n[1-2]", 1);
    assert_int_equal(slurm_spank_local_user_init(NULL, 0, NULL), -1);
    assert_non_null(strstr(mock.last_error, "node n2 has A100-80GB GPUs but the step's first node "
                                            "n1 has H100-SXM"));
    /* nodes alike, or a node whose file srun cannot read: left to the nodes */
    mock.errors = 0;
    setenv("SLURM_NODELIST", "n1", 1);
    mock.nnodes = 1;
    mock.total_tasks = 8;
    assert_int_equal(slurm_spank_local_user_init(NULL, 0, NULL), 0);
    setenv("SLURM_NODELIST", "n[1-3]", 1);
    snprintf(cmd, sizeof(cmd), "cp %s/n1.xml %s/n2.xml", dir, dir);
    assert_int_equal(system(cmd), 0);
    mock.nnodes = 3;
    mock.total_tasks = 24;
    assert_int_equal(slurm_spank_local_user_init(NULL, 0, NULL), 0);
    assert_int_equal(mock.errors, 0);
    unsetenv("SLURM_NODELIST");
    rm_dir(dir);
}

/* slurmstepd's task_init for local task `task` (user_init ran before). */
static int slurm_task_init(int task)
{
    mock.task_id = task;
    return slurm_spank_task_init(NULL, 0, NULL);
}

static void stepd__task_gets_its_variables(void **state)
{
    assert_int_equal(init(S_CTX_REMOTE, NULL), 0);
    mesh_test_option("model", "llama3-8b", 1);
    mesh_test_option("mesh", "tp=2,pp=2", 1);
    mock_step(0, 2, 1, 8);
    mock_setenv("MASTER_PORT", "12345"); /* the user's own: kept */
    /* ours from elsewhere (a MoE batch step's, a restart's) that this
     * dense step's plan does not give: removed, not left to stand in */
    mock_setenv("MESH_EP_SIZE", "8");
    mock_setenv("MESH_RESHARD", "dp");
    assert_int_equal(run_step(3), 0);
    assert_null(mock_getenv("MESH_EP_SIZE"));
    assert_null(mock_getenv("MESH_RESHARD"));
    assert_string_equal(mock_getenv("RANK"), "11");
    assert_string_equal(mock_getenv("LOCAL_RANK"), "3");
    assert_string_equal(mock_getenv("WORLD_SIZE"), "16");
    assert_string_equal(mock_getenv("MASTER_ADDR"), "n1");
    assert_string_equal(mock_getenv("MASTER_PORT"), "12345");
    assert_string_equal(mock_getenv("MESH_TP_GROUP"), "10,11");
    assert_string_equal(mock_getenv("MESH_TP_SIZE"), "2");
    assert_int_equal(mock.errors, 0);
}

/* What fn(arg) writes on standard error, the plugin's channel to the user
 * (srun's terminal, the job's log); the caller frees it.  fn asserts
 * nothing: a failed assertion inside would leave stderr redirected. */
static char *stderr_of(int (*fn)(int), int arg, int *rc)
{
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    assert_true(saved >= 0 && dup2(fileno(tmp), STDERR_FILENO) >= 0);
    *rc = fn(arg);
    fflush(stderr);
    assert_true(dup2(saved, STDERR_FILENO) >= 0);
    close(saved);
    assert_int_equal(fseek(tmp, 0, SEEK_END), 0);
    long n = ftell(tmp);
    char *text = calloc(1, (size_t)(n > 0 ? n : 0) + 1);
    assert_non_null(text);
    rewind(tmp);
    assert_int_equal(fread(text, 1, (size_t)(n > 0 ? n : 0), tmp), (size_t)(n > 0 ? n : 0));
    fclose(tmp);
    return text;
}

static int local_user_init(int unused)
{
    (void)unused;
    return slurm_spank_local_user_init(NULL, 0, NULL);
}

/* --mesh-explain: srun prints the explained plan; the step's first task
 * prints it only when the nodes made another plan than srun's, and always
 * the one-line record `meshplan calibrate` reads, with the plan's digest;
 * no other task prints anything, and nothing is printed without it. */
static void explain__srun_then_the_first_task(void **state)
{
    int rc;
    srun_step("llama3-8b", NULL, 1, 8);
    assert_int_equal(mesh_test_option("mesh-explain", NULL, 0), 0);
    unsetenv(MESH_SUBMIT_PLAN_ENV);
    char *out = stderr_of(local_user_init, 0, &rc);
    assert_int_equal(rc, 0);
    assert_true(strncmp(out, "meshplan: explained plan\n", 25) == 0);
    assert_non_null(strstr(out, "Layout (fits)"));
    free(out);
    char digest[64], record[128];
    assert_non_null(getenv(MESH_SUBMIT_PLAN_ENV));
    snprintf(digest, sizeof(digest), "%s", getenv(MESH_SUBMIT_PLAN_ENV));
    unsetenv(MESH_SUBMIT_PLAN_ENV);
    snprintf(record, sizeof(record), "%s{\"version\":1,\"digest\":\"%s\",", MESH_CALIB_RECORD,
             digest);
    for (int same = 0; same <= 2; same++) {
        assert_int_equal(init(S_CTX_REMOTE, NULL), 0);
        mesh_test_option("model", "llama3-8b", 1);
        if (same < 2)
            assert_int_equal(mesh_test_option("mesh-explain", NULL, 1), 0);
        mock_step(0, 1, 0, 8);
        if (same)
            mock_setenv(MESH_SUBMIT_PLAN_ENV, digest);             /* what srun exported */
        assert_int_equal(slurm_spank_user_init(NULL, 0, NULL), 0); /* never fails */
        out = stderr_of(slurm_task_init, 0, &rc);
        assert_int_equal(rc, 0);
        assert_int_equal(mock.errors, 0);
        if (same == 2) { /* no --mesh-explain */
            assert_string_equal(out, "");
        } else {
            const char *rec = strstr(out, MESH_CALIB_RECORD);
            if (!rec || strncmp(rec, record, strlen(record)) != 0)
                fail_msg("task 0's record: \"%s\", wanted \"%s...\"", out, record);
            assert_non_null(strchr(rec, '\n'));
            assert_string_equal(strchr(rec, '\n'), "\n"); /* one line, the last */
            if (same)                                     /* srun printed this plan: not again */
                assert_ptr_equal(rec, out);
            else
                assert_true(strncmp(out, "meshplan: explained plan (made on the nodes)\n", 45) ==
                                0 &&
                            strstr(out, "Layout (fits)") && strstr(out, "Layout (fits)") < rec);
        }
        free(out);
        out = stderr_of(slurm_task_init, 1, &rc); /* the step's other tasks print nothing */
        assert_int_equal(rc, 0);
        assert_string_equal(out, "");
        free(out);
    }
}

/* A restart on the nodes: the line sbatch carried pins what it keeps, and
 * every task learns what changed (MESH_RESHARD); without the line the step
 * is refused, not planned without its pins. */
static void stepd__restart_says_what_changed(void **state)
{
    assert_int_equal(init(S_CTX_REMOTE, NULL), 0);
    mesh_test_option("model", "llama3-8b", 1);
    mesh_test_option("mesh-from", "/the/users/plan.json", 1); /* never read here */
    mesh_test_option("mesh-keep", "tp,pp", 1);
    mock_step(0, 2, 1, 8);
    mock_setenv("MESHPLAN_RESTART",
                "keep=tp,pp;batch=512;model=32,4096,32;tp=2,pp=2,dp=8,cp=1,zero=1,vpp=1,mb=1,"
                "recompute=none,sp=on");
    assert_int_equal(run_step(3), 0);
    assert_string_equal(mock_getenv("MESH_TP_SIZE"), "2");
    assert_string_equal(mock_getenv("MESH_PP_SIZE"), "2");
    assert_string_equal(mock_getenv("MESH_DP_SIZE"), "4");
    /* dp 8 -> 4, perhaps the ZeRO stage: never what was kept */
    const char *reshard = mock_getenv("MESH_RESHARD");
    assert_non_null(reshard);
    assert_true(!strcmp(reshard, "dp") || !strcmp(reshard, "dp,zero"));
    assert_int_equal(mock.errors, 0);
    /* no line: refused with the reason, before any task starts */
    assert_int_equal(init(S_CTX_REMOTE, NULL), 0);
    mesh_test_option("model", "llama3-8b", 1);
    mesh_test_option("mesh-from", "/the/users/plan.json", 1);
    mock_step(0, 2, 1, 8);
    assert_int_equal(run_step(0), -1);
    assert_non_null(strstr(mock.last_error, "--mesh-from: the restart read at submission did not "
                                            "reach the step"));
    /* not a restart: no MESH_RESHARD */
    assert_int_equal(init(S_CTX_REMOTE, NULL), 0);
    mesh_test_option("model", "llama3-8b", 1);
    mock_step(0, 2, 1, 8);
    assert_int_equal(run_step(3), 0);
    assert_null(mock_getenv("MESH_RESHARD"));
}

static void stepd__spec_changed_since_submit(void **state)
{
    /* srun read the spec and exported its digest; a node reading something
     * else refuses, and the internal variable never reaches the task */
    char path[] = "/tmp/meshplan-spec-XXXXXX", digest[17];
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "preset: llama3-8b\n", 18), 18);
    close(fd);
    for (int changed = 0; changed <= 1; changed++) {
        mesh_model_t m;
        mesh_error_t err;
        assert_int_equal(init(S_CTX_REMOTE, NULL), 0);
        assert_int_equal(mesh_plugin_load_model(path, &m, &err), 0);
        mesh_test_option("model", path, 1);
        mock_step(0, 1, 0, 8);
        mock_setenv("MESH_SPEC_PATH", path);
        m.global_batch += changed; /* what srun read was not quite this */
        mock_setenv("MESHPLAN_SPEC_DIGEST", mesh_model_digest(&m, digest));
        assert_int_equal(run_step(0), changed ? -1 : 0);
        assert_null(mock_getenv("MESHPLAN_SPEC_DIGEST"));
        if (changed)
            assert_non_null(strstr(mock.last_error, "changed after it was read at submission"));
        else
            assert_string_equal(mock_getenv("RANK"), "0");
    }
    unlink(path);
}

/* The global batch that the job's srun (SLURM_JOB_ID set) plans with
 * --model path. */
static long job_srun_global_batch(const char *path)
{
    assert_int_equal(init(S_CTX_LOCAL, NULL), 0);
    mesh_test_option("model", path, 0);
    setenv("SLURM_JOB_ID", "7", 1);
    assert_int_equal(slurm_spank_init_post_opt(NULL, 0, NULL), 0);
    return (long)mesh_plugin.spec.global_batch;
}

/* The spec travels with the job: sbatch carries what it read, a file
 * deleted (or edited) before the step starts changes nothing, the job's
 * srun with the same --model plans with it too, a carried spec that does
 * not read as submitted is refused, and a step of another --model is not
 * handed the job's file. */
static void spec__carried_with_the_job(void **state)
{
    char path[] = "/tmp/meshplan-spec-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "preset: llama3-8b\ntrain: {global_batch: 64}\n", 44), 44);
    close(fd);
    unsetenv("MESHPLAN_SPEC");
    unsetenv("MESHPLAN_SPEC_MODEL");
    assert_int_equal(init(S_CTX_ALLOCATOR, NULL), 0); /* sbatch */
    mesh_test_option("model", path, 0);
    assert_int_equal(slurm_spank_init_post_opt(NULL, 0, NULL), 0);
    char carried[MESH_REQUEST_MAX], digest[17];
    snprintf(carried, sizeof(carried), "%s", getenv("MESHPLAN_SPEC"));
    snprintf(digest, sizeof(digest), "%s", getenv("MESHPLAN_SPEC_DIGEST"));
    assert_string_equal(getenv("MESHPLAN_SPEC_MODEL"), path);
    /* the user edits the file: the job's srun still plans the submitted one */
    fd = open(path, O_WRONLY | O_TRUNC);
    assert_int_equal(write(fd, "preset: llama3-8b\ntrain: {global_batch: 32}\n", 44), 44);
    close(fd);
    assert_int_equal(job_srun_global_batch(path), 64);
    char abs[PATH_MAX];
    assert_non_null(realpath(path, abs));
    assert_string_equal(getenv("MESH_SPEC_PATH"), abs); /* sbatch's, for its steps */
    /* with a --mesh-headroom of its own: that, over the submitted spec */
    assert_int_equal(init(S_CTX_LOCAL, NULL), 0);
    mesh_test_option("model", path, 0);
    assert_int_equal(mesh_test_option("mesh-headroom", "0.2", 0), 0);
    assert_int_equal(slurm_spank_init_post_opt(NULL, 0, NULL), 0);
    assert_true(mesh_plugin.spec.global_batch == 64 && mesh_plugin.spec.headroom == 0.2);
    /* a link to what the user cannot read: the job's srun reads nothing */
    unsetenv("SLURM_JOB_ID");
    unlink(path);
    assert_int_equal(symlink("/root/meshplan-nonexistent/secret.yaml", path), 0);
    assert_int_equal(job_srun_global_batch(path), 64);
    /* a new job reads the file as it is now */
    unsetenv("SLURM_JOB_ID");
    unlink(path);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "preset: llama3-8b\ntrain: {global_batch: 32}\n", 44), 44);
    close(fd);
    assert_int_equal(init(S_CTX_ALLOCATOR, NULL), 0);
    mesh_test_option("model", path, 0);
    assert_int_equal(slurm_spank_init_post_opt(NULL, 0, NULL), 0);
    assert_int_equal(mesh_plugin.spec.global_batch, 32);
    unlink(path); /* gone before the step starts: nothing is read */
    static const struct {
        const char *what, *error; /* error NULL: it plans */
    } cases[] = {
        {"as carried", NULL},
        {"tampered", "does not read as it did at submission"},
        {"truncated", "the spec carried with the job (MESHPLAN_SPEC) is damaged"},
        /* carried for another --model: this step reads its own, gone */
        {"another model's", "No such file"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        char text[MESH_REQUEST_MAX];
        snprintf(text, sizeof(text), "%s", carried);
        if (i == 1) /* another global batch, same length */
            memcpy(strstr(text, "global_batch: 64"), "global_batch: 32", 16);
        if (i == 2)
            text[strlen(text) / 2] = '\0';
        assert_int_equal(init(S_CTX_REMOTE, NULL), 0);
        mesh_test_option("model", path, 1);
        mock_step(0, 1, 0, 8);
        mock_setenv("MESH_SPEC_PATH", path);
        mock_setenv("MESHPLAN_SPEC", text);
        mock_setenv("MESHPLAN_SPEC_MODEL", i == 3 ? "llama3-70b" : path);
        mock_setenv("MESHPLAN_SPEC_DIGEST", digest);
        assert_int_equal(run_step(0), cases[i].error ? -1 : 0);
        if (cases[i].error)
            assert_non_null(strstr(mock.last_error, cases[i].error));
        else
            assert_string_equal(mock_getenv("MESH_GLOBAL_BATCH_SIZE"), "64");
    }
    /* a step of a preset in the job: its tasks are not handed the job's
     * file as their spec */
    assert_non_null(getenv("MESH_SPEC_PATH"));
    assert_int_equal(init(S_CTX_LOCAL, NULL), 0);
    mesh_test_option("model", "llama3-70b", 0);
    setenv("SLURM_JOB_ID", "7", 1);
    assert_int_equal(slurm_spank_init_post_opt(NULL, 0, NULL), 0);
    assert_null(getenv("MESH_SPEC_PATH"));
    unsetenv("SLURM_JOB_ID");
    unsetenv("MESHPLAN_SPEC");
    unsetenv("MESHPLAN_SPEC_MODEL");
    unsetenv("MESHPLAN_SPEC_DIGEST");
    (void)state;
}

static void stepd__faults_refuse_the_step(void **state)
{
    /* no node list: Slurm always sets it, but a task must not start blind */
    assert_int_equal(init(S_CTX_REMOTE, NULL), 0);
    mesh_test_option("model", "llama3-8b", 1);
    mock_step(0, 2, 1, 8);
    spank_unsetenv(NULL, "SLURM_STEP_NODELIST");
    assert_int_equal(run_step(0), -1);
    assert_non_null(strstr(mock.last_error, "SLURM_STEP_NODELIST"));
    assert_null(mock_getenv("RANK"));
    /* a topology that never finishes loading (a FIFO nobody writes) */
    char dir[] = "/tmp/meshplan-fifo-XXXXXX", arg[300], fifo[64];
    assert_non_null(mkdtemp(dir));
    snprintf(fifo, sizeof(fifo), "%s/n1.xml", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    snprintf(arg, sizeof(arg), "topology_xml=%s/%%n.xml", dir);
    for (int fallback = 0; fallback <= 1; fallback++) {
        assert_int_equal(init(S_CTX_REMOTE, arg), 0);
        mesh_plugin.policy.launch.topology_timeout = 0.2;
        mesh_plugin.policy.launch.topology_fallback = fallback;
        mesh_test_option("model", "llama3-8b", 1);
        mock_step(0, 1, 0, 8);
        mock_setenv("SLURM_STEP_NODELIST", "n1");
        assert_int_equal(run_step(0), fallback ? 0 : -1);
        if (fallback) { /* planned for the policy's gpu=H100-SXM */
            assert_string_equal(mock_getenv("MESH_GPU_MEM_BYTES"), "85520809984");
        } else {
            assert_non_null(strstr(mock.last_error, "took more than 0.2 s"));
            assert_non_null(strstr(mock.last_error, "on_topology_error=fallback"));
        }
        FILE *f = fopen(fifo, "w"); /* let the abandoned load finish */
        assert_non_null(f);
        fclose(f);
    }
    usleep(300000);
    unlink(fifo);
    rm_dir(dir);
    /* fallback plans every node for the policy's GPU: a node showing another is refused */
    char dir2[] = "/tmp/meshplan-topo-XXXXXX", arg2[300];
    topo_dir(dir2, arg2, sizeof(arg2), (const char *[]){"two-islands-8gpu", NULL});
    assert_int_equal(init(S_CTX_REMOTE, arg2), 0); /* gpu=H100-SXM; the node has A100s */
    mesh_plugin.policy.launch.topology_fallback = 1;
    mesh_test_option("model", "llama3-8b", 1);
    mock_step(0, 1, 0, 8);
    mock_setenv("SLURM_STEP_NODELIST", "n1");
    assert_int_equal(run_step(0), -1);
    assert_non_null(
        strstr(mock.last_error, "has A100-80GB GPUs but the policy plans for H100-SXM"));
    rm_dir(dir2);
}

/* A task starts with all its variables or not at all: a variable
 * slurmstepd cannot set, one of ours it cannot remove, or a task the
 * node's table has no entry for fails the task, naming which (a task
 * started half-configured would join the wrong groups). */
static void stepd__task_never_starts_half_configured(void **state)
{
    (void)state;
    for (int unset = 0; unset <= 1; unset++) {
        assert_int_equal(init(S_CTX_REMOTE, NULL), 0);
        mesh_test_option("model", "llama3-8b", 1);
        mesh_test_option("mesh", "tp=2,pp=2", 1);
        mock_step(0, 2, 1, 8);
        mock_setenv("MESH_EP_SIZE", "8"); /* a MoE batch step's: this dense plan removes it */
        mock.fail_env = unset ? "MESH_EP_SIZE" : "MESH_TP_SIZE";
        assert_int_equal(run_step(3), -1);
        assert_non_null(strstr(mock.last_error,
                               unset ? "cannot unset MESH_EP_SIZE" : "cannot set MESH_TP_SIZE"));
        mock.fail_env = NULL;
    }
    /* task 8 of a node's 8 (0-7), and a task slurmstepd gives no number */
    static const int tasks[] = {8, -1};
    for (size_t i = 0; i < sizeof(tasks) / sizeof(*tasks); i++) {
        char want[64];
        assert_int_equal(init(S_CTX_REMOTE, NULL), 0);
        mesh_test_option("model", "llama3-8b", 1);
        mock_step(0, 2, 1, 8);
        assert_int_equal(run_step(tasks[i]), -1);
        snprintf(want, sizeof(want), "task %d has no entry in this node's table", tasks[i]);
        assert_non_null(strstr(mock.last_error, want));
        assert_null(mock_getenv("RANK"));
    }
}

/* The interactive step (salloc's shell, with Slurm's use_interactive_step)
 * gets the job's layout only where steps= names it, and then, as the batch
 * script, no rank of its own. */
static void stepd__interactive_step_only_when_asked(void **state)
{
    (void)state;
    for (int asked = 0; asked <= 1; asked++) {
        assert_int_equal(init(S_CTX_REMOTE, asked ? "steps=regular,interactive" : NULL), 0);
        mesh_test_option("model", "llama3-8b", 1);
        mock_step(0xfffffffa, 0, 0, 0);
        mock_setenv("SLURM_JOB_NUM_NODES", "2");
        mock_setenv("SLURM_GPUS_ON_NODE", "8");
        assert_int_equal(run_step(0), 0);
        if (asked)
            assert_non_null(strstr(mock_getenv("MESH_MEGATRON_ARGS"), "--num-layers 32 "));
        else
            assert_null(mock_getenv("MESH_PLAN"));
        assert_null(mock_getenv("RANK"));
    }
}

/* What reached the step that it cannot use: a carried spec longer than
 * slurmstepd hands over, or a preset that reads here otherwise than where
 * the job was submitted (another meshplan installed). */
static void stepd__spec_unreadable_or_another_preset(void **state)
{
    (void)state;
    char big[MESH_REQUEST_MAX + 16];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    assert_int_equal(init(S_CTX_REMOTE, NULL), 0);
    mesh_test_option("model", "llama3-8b", 1);
    mock_step(0, 1, 0, 8);
    mock_setenv("MESHPLAN_SPEC", big);
    mock_setenv("MESHPLAN_SPEC_MODEL", "llama3-8b");
    assert_int_equal(run_step(0), -1);
    assert_non_null(strstr(mock.last_error, "--model: the spec carried with the job "
                                            "(MESHPLAN_SPEC) cannot be read"));
    assert_non_null(strstr(mock.last_error, "submit the job again"));
    assert_null(mock_getenv("RANK"));
    assert_int_equal(init(S_CTX_REMOTE, NULL), 0);
    mesh_test_option("model", "llama3-8b", 1);
    mock_step(0, 1, 0, 8);
    mock_setenv("MESHPLAN_SPEC_DIGEST", "0123456789abcdef");
    assert_int_equal(run_step(0), -1);
    assert_non_null(strstr(mock.last_error, "--model: preset llama3-8b reads differently on "
                                            "this node than where the job was submitted"));
    assert_null(mock_getenv("RANK"));
}

static void stepd__errors_wait_for_task_init(void **state)
{
    /* a bad plugstack.conf line: slurmstepd's init must not fail */
    assert_int_equal(init(S_CTX_REMOTE, "colour=blue"), 0);
    mesh_test_option("model", "llama3-8b", 1);
    mock_step(0, 1, 0, 8);
    assert_int_equal(run_step(0), -1);
    assert_non_null(strstr(mock.last_error, "colour"));
    /* a spec that cannot be read */
    assert_int_equal(init(S_CTX_REMOTE, NULL), 0);
    mesh_test_option("model", "/nonexistent/spec.yaml", 1);
    mock_step(0, 1, 0, 8);
    assert_int_equal(run_step(0), -1);
    assert_non_null(strstr(mock.last_error, "cannot open spec"));
    /* a layout that does not fit */
    assert_int_equal(init(S_CTX_REMOTE, NULL), 0);
    mesh_test_option("model", "llama3.1-405b", 1);
    mock_step(0, 1, 0, 8);
    assert_int_equal(run_step(0), -1);
    assert_non_null(strstr(mock.last_error, "what would fit"));
    assert_null(mock_getenv("RANK"));
    /* uneven tasks */
    assert_int_equal(init(S_CTX_REMOTE, NULL), 0);
    mesh_test_option("model", "llama3-8b", 1);
    mock_step(0, 2, 0, 8);
    mock.total_tasks = 15;
    assert_int_equal(run_step(0), -1);
    assert_non_null(strstr(mock.last_error, "same number of tasks"));
    /* a bad option value met only in slurmstepd */
    assert_int_equal(init(S_CTX_REMOTE, NULL), 0);
    assert_int_equal(mesh_test_option("mesh", "tp=two", 1), 0);
    mesh_test_option("model", "llama3-8b", 1);
    mock_step(0, 1, 0, 8);
    assert_int_equal(run_step(0), -1);
    assert_non_null(strstr(mock.last_error, "--mesh"));
}

static void stepd__warns_in_srun_words(void **state)
{
    /* enforce=warn: the tasks start, and slurmd's log has the reason and the
     * advice, line by line, as srun prints its warning */
    char want[4096], lines[4096];
    assert_int_equal(init(S_CTX_REMOTE, "enforce=warn"), 0);
    mesh_test_option("model", "llama3.1-405b", 1);
    mock_step(0, 1, 0, 8);
    assert_int_equal(run_step(0), 0);
    assert_non_null(mock_getenv("RANK"));
    mesh_model_t m;
    mesh_error_t err;
    assert_int_equal(mesh_plugin_load_model("llama3.1-405b", &m, &err), 0);
    mesh_alloc_t a;
    assert_int_equal(mesh_policy_alloc(&mesh_plugin.policy.assume, NULL, 0, 0, 1, 8, &a, &err), 0);
    mesh_plan_t *p = mesh_plan_create(&m, &a, &mesh_plugin.pins, &mesh_plugin.policy.assume, &err);
    assert_non_null(p);
    assert_int_equal(mesh_plan_verdict(p, MESH_ENFORCE_WARN, lines, sizeof(lines)),
                     MESH_VERDICT_WARN);
    mesh_plan_destroy(p);
    size_t n = 0;
    for (char *save = NULL, *l = strtok_r(lines, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
        n += (size_t)snprintf(want + n, sizeof(want) - n, "meshplan: warning: %s\n", l);
    assert_non_null(strstr(mock.info, want));
    assert_non_null(strstr(mock.info, "meshplan: warning: what would fit: 14 nodes"));
}

static void stepd__skips_batch_extern_and_plain_jobs(void **state)
{
    assert_int_equal(init(S_CTX_REMOTE, "steps=regular"), 0);
    mesh_test_option("model", "llama3.1-405b", 1); /* would not fit, but is not asked */
    mock_step(0xfffffffb, 0, 0, 0);                /* the batch script */
    assert_int_equal(run_step(0), 0);
    assert_null(mock_getenv("MESH_PLAN"));
    mock_step(0xfffffffc, 1, 0, 0); /* extern */
    assert_int_equal(run_step(0), 0);
    assert_int_equal(init(S_CTX_REMOTE, NULL), 0); /* no --model */
    mock_step(0, 1, 0, 8);
    assert_int_equal(run_step(0), 0);
    assert_null(mock_getenv("MESH_PLAN"));
    /* by default (steps=regular,batch) the batch script gets the plan of the
     * whole job: the layout and Megatron-LM's flags and environment, so
     * that `srun ... $MESH_MEGATRON_ARGS` in it expands; no rank and no
     * launcher variable, which its srun steps would inherit as their own */
    assert_int_equal(init(S_CTX_REMOTE, NULL), 0);
    mesh_test_option("model", "llama3-8b", 1);
    mock_step(0xfffffffb, 0, 0, 0);
    mock_setenv("SLURM_JOB_NUM_NODES", "2");
    mock_setenv("SLURM_GPUS_ON_NODE", "8");
    assert_int_equal(run_step(0), 0);
    assert_non_null(mock_getenv("MESH_PLAN"));
    assert_non_null(strstr(mock_getenv("MESH_MEGATRON_ARGS"), "--num-layers 32 "));
    static const char *const none[] = {"RANK",         "WORLD_SIZE",   "MASTER_ADDR",
                                       "MASTER_PORT",  "PET_NNODES",   "PET_NODE_RANK",
                                       "MESH_TP_RANK", "MESH_DP_GROUP"};
    for (size_t i = 0; i < sizeof(none) / sizeof(*none); i++)
        if (mock_getenv(none[i]))
            fail_msg("the batch script got %s=%s", none[i], mock_getenv(none[i]));
    /* ... with the node's topology read (8 GPUs) under the default export:
     * its one task launches for all of them, as under export=torchrun */
    char dir[] = "/tmp/meshplan-batch-XXXXXX", arg[300];
    const char *names[] = {"hgx-h100-8gpu", NULL};
    topo_dir(dir, arg, sizeof(arg), names);
    assert_int_equal(init(S_CTX_REMOTE, arg), 0);
    mesh_plugin.policy.launch.steps = MESH_STEP_REGULAR | MESH_STEP_BATCH | MESH_STEP_INTERACTIVE;
    mesh_test_option("model", "llama3-8b", 1);
    mock_step(0xfffffffb, 0, 0, 0);
    mock_setenv("SLURM_JOB_NUM_NODES", "2");
    mock_setenv("SLURM_GPUS_ON_NODE", "8");
    assert_int_equal(run_step(0), 0);
    assert_non_null(mock_getenv("MESH_PLAN"));
    assert_null(mock_getenv("MESH_GPU_BUSID")); /* the script has no GPU of its own */
    assert_null(mock_getenv("PET_NNODES"));
    rm_dir(dir);
}

/* Every variable a task gets from slurmstepd is the one `meshplan env` prints
 * for that task (its manual: "exactly as the plugin exports them"), and no
 * other: the whole set compared, for steps of each export mode. */
typedef struct env_case {
    const char *plugstack, *model, *mesh, *cli;
    uint32_t step, nnodes, node, tasks;
    int task;
    uint32_t gpus; /* per node, where the tasks are not one a GPU (torchrun's launchers) */
} env_case_t;

static void assert_env_is_the_clis(const env_case_t *c)
{
    char cmd[2048], line[8192];
    snprintf(cmd, sizeof(cmd),
             "'%s' env --model %s --nodes %u --gpus-per-node %u --gpu H100-SXM --mesh %s "
             "--node %u --local %d --job-id 4242 --step-id %u --master-addr n1 %s",
             getenv("MESHPLAN"), c->model, c->nnodes, c->gpus ? c->gpus : c->tasks, c->mesh,
             c->node, c->task, c->step, c->cli);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    int n = 0;
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        char *eq = strchr(line, '=');
        assert_non_null(eq);
        *eq = '\0';
        const char *got = mock_getenv(line);
        if (!got || strcmp(got, eq + 1) != 0)
            fail_msg("%s: the task got %s=%s, meshplan env prints %s", c->mesh, line,
                     got ? got : "(nothing)", eq + 1);
        n++;
    }
    assert_int_equal(pclose(f), 0);
    /* and nothing else: the step's own variables (mock_step's) aside */
    int own = 0;
    for (int i = 0; i < mock.n_env; i++)
        own += strncmp(mock.env_name[i], "SLURM_", 6) == 0;
    if (mock.n_env - own != n)
        fail_msg("%s: the task has %d variables beyond Slurm's, meshplan env prints %d", c->mesh,
                 mock.n_env - own, n);
}

static void stepd__every_variable_as_meshplan_env(void **state)
{
    (void)state;
    const env_case_t cases[] = {
        {NULL, "llama3-70b", "tp=4,pp=4,vpp=2", "", 3, 4, 2, 8, 5},
        {"export=mesh", "mixtral-8x7b", "tp=2,pp=2,ep=4", "--export mesh", 0, 2, 1, 8, 7},
        {"port_range=21000-21999", "llama3-8b", "tp=2,cp=2", "--set port_range=21000-21999", 7, 2,
         1, 8, 2},
        {"export=torchrun", "llama3-8b", "tp=8", "--export torchrun", 1, 2, 1, 1, 0, 8},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const env_case_t *c = &cases[i];
        assert_int_equal(init(S_CTX_REMOTE, c->plugstack), 0);
        mesh_test_option("model", c->model, 1);
        mesh_test_option("mesh", c->mesh, 1);
        mock_step(c->step, c->nnodes, c->node, c->tasks);
        if (c->gpus)
            mock_setenv("SLURM_GPUS_ON_NODE", "8");
        assert_int_equal(run_step(c->task), 0);
        assert_env_is_the_clis(c);
    }
}

static void stepd__torchrun_one_launcher_per_node(void **state)
{
    assert_int_equal(init(S_CTX_REMOTE, "export=torchrun"), 0);
    mesh_test_option("model", "llama3-8b", 1);
    mock_step(0, 2, 1, 1);
    mock_setenv("SLURM_GPUS_ON_NODE", "8");
    assert_int_equal(run_step(0), 0);
    assert_string_equal(mock_getenv("PET_NNODES"), "2");
    assert_string_equal(mock_getenv("PET_NODE_RANK"), "1");
    assert_string_equal(mock_getenv("PET_NPROC_PER_NODE"), "8");
    assert_null(mock_getenv("MESH_TP_RANK"));
    /* eight tasks per node is not a torchrun launch */
    assert_int_equal(init(S_CTX_REMOTE, "export=torchrun"), 0);
    mesh_test_option("model", "llama3-8b", 1);
    mock_step(0, 2, 1, 8);
    assert_int_equal(run_step(0), -1);
    assert_non_null(strstr(mock.last_error, "--ntasks-per-node=1"));
}

/* The first step of a boot saves what discovery found of the node, as root,
 * in a root-owned directory no one else may write to, for later steps to
 * load; a directory others may write to is neither written nor read, nor
 * a file another user owns (a file a user could have put there is never
 * read as root).  Root's path: skipped elsewhere. */
static void stepd__topology_cache_only_where_trusted(void **state)
{
    (void)state;
    char cached[512], boot[64] = "";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (geteuid() != 0 || !f || !fgets(boot, sizeof(boot), f)) {
        if (f)
            fclose(f);
        skip(); /* root's path, on Linux */
    }
    fclose(f);
    boot[strcspn(boot, "\n")] = '\0';
    snprintf(cached, sizeof(cached), "%s/topology-%s.xml", TOPOLOGY_CACHE_DIR, boot);
    unlink(cached);
    rmdir(TOPOLOGY_CACHE_DIR);
    struct stat st;
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "cp %s/topologies/hgx-h100-8gpu.xml %s", getenv("MESH_FIXTURES"),
             cached);
    for (int open_dir = 0; open_dir < 2; open_dir++) {
        assert_int_equal(init(S_CTX_REMOTE, NULL), 0);
        mesh_test_option("model", "llama3-8b", 1);
        mock_step(0, 2, 1, 8);
        assert_int_equal(slurm_spank_init_post_opt(NULL, 0, NULL), 0);
        if (!open_dir) {
            assert_int_equal(lstat(cached, &st), 0);
            assert_true(S_ISREG(st.st_mode));
            assert_int_equal(st.st_uid, 0);
            assert_int_equal(st.st_mode & 022, 0);
        } else { /* a directory anyone may write to: nothing saved there */
            assert_int_equal(lstat(cached, &st), -1);
        }
        /* a step loads the file there (an HGX H100's, in place of this
         * machine's): only from the directory no one else may write */
        assert_int_equal(system(cmd), 0);
        mock_setenv("SLURM_STEP_GPUS", "0,1,2,3,4,5,6,7");
        run_step(5);
        const char *busid = mock_getenv("MESH_GPU_BUSID");
        assert_int_equal(busid && strcmp(busid, "0000:ab:00.0") == 0, !open_dir);
        if (!open_dir) { /* nor a file that another user owns: another step */
            assert_int_equal(chown(cached, 65534, 65534), 0);
            assert_int_equal(init(S_CTX_REMOTE, NULL), 0);
            mesh_test_option("model", "llama3-8b", 1);
            mock_step(0, 2, 1, 8);
            mock_setenv("SLURM_STEP_GPUS", "0,1,2,3,4,5,6,7");
            run_step(5);
            busid = mock_getenv("MESH_GPU_BUSID");
            assert_false(busid && strcmp(busid, "0000:ab:00.0") == 0);
        }
        assert_int_equal(unlink(cached), 0);
        assert_int_equal(chmod(TOPOLOGY_CACHE_DIR, 0777), 0);
    }
    rmdir(TOPOLOGY_CACHE_DIR);
}

static void stepd__topology_per_node(void **state)
{
    /* every node reads its own XML: n1, n2 HGX H100; n3 two A100 islands */
    char dir[] = "/tmp/meshplan-topo-XXXXXX", arg[300];
    topo_dir(dir, arg, sizeof(arg),
             (const char *[]){"hgx-h100-8gpu", "hgx-h100-8gpu", "two-islands-8gpu", NULL});
    /* node 1 of n[1-2]: H100s, its local task 5 on GPU 0000:ab:00.0, NUMA 1 */
    assert_int_equal(init(S_CTX_REMOTE, arg), 0);
    mesh_test_option("model", "llama3-8b", 1);
    mock_step(0, 2, 1, 8);
    mock_setenv("SLURM_STEP_NODELIST", "n[1-2]");
    mock_setenv("SLURM_STEP_GPUS", "0,1,2,3,4,5,6,7");
    assert_int_equal(run_step(5), 0);
    assert_string_equal(mock_getenv("MESH_GPU_BUSID"), "0000:ab:00.0");
    assert_string_equal(mock_getenv("MESH_NUMA_NODE"), "1");
    assert_string_equal(mock_getenv("MESH_GPU_MEM_BYTES"), "85520809984");
    /* n3 in a step whose first node is n2: refused, naming both */
    assert_int_equal(init(S_CTX_REMOTE, arg), 0);
    mesh_test_option("model", "llama3-8b", 1);
    mock_step(0, 2, 1, 8);
    mock_setenv("SLURM_STEP_NODELIST", "n[2-3]");
    assert_int_equal(run_step(0), -1);
    assert_non_null(strstr(mock.last_error, "node n3 has 8 x A100-80GB, islands 4+4"));
    assert_non_null(strstr(mock.last_error, "8 x H100-SXM, islands 8"));
    /* a step with 4 of n3's GPUs, bound: task 1 sees its own GPU only */
    assert_int_equal(init(S_CTX_REMOTE, arg), 0);
    mesh_test_option("model", "llama3-8b", 1);
    mesh_test_option("mesh-bind", "gpu", 1);
    mock_step(0, 1, 0, 4);
    mock_setenv("SLURM_STEP_NODELIST", "n3");
    mock_setenv("SLURM_STEP_GPUS", "4-7");
    mock_setenv("CUDA_VISIBLE_DEVICES", "4,5,6,7");
    assert_int_equal(run_step(1), 0);
    assert_string_equal(mock_getenv("CUDA_VISIBLE_DEVICES"), "5");
    assert_string_equal(mock_getenv("MESH_GPU_BUSID"), "0000:90:00.0");
    /* more tasks than the step's GPUs */
    assert_int_equal(init(S_CTX_REMOTE, arg), 0);
    mesh_test_option("model", "llama3-8b", 1);
    mock_step(0, 1, 0, 8);
    mock_setenv("SLURM_STEP_NODELIST", "n3");
    mock_setenv("SLURM_STEP_GPUS", "0-3");
    assert_int_equal(run_step(0), -1);
    assert_non_null(strstr(mock.last_error, "8 tasks per node but 4 GPUs"));
    rm_dir(dir);
}

/* The two mistakes of issue 16, each with what its message must name. */
static const struct {
    const char *args, *names;
} broken_configs[] = {
    {"resrve=0.05", "plugstack.conf: unknown policy key 'resrve'"},
    /* every key good alone, the whole wrong: a GPU the table does not know
     * defined without its PCI id (mesh_policy_check) */
    {"gpu.H1000.memory=1GB", "plugstack.conf: gpu.H1000.pci: missing: a GPU the policy defines "
                             "needs .pci"},
    {"policy=/nonexistent/meshplan.yaml",
     "cannot open policy '/nonexistent/meshplan.yaml': No such file or directory"},
};

/* Does the log's first line say the version and what the mistake does,
 * and a later one the mistake? */
static void assert_logged(const char *log, const char *effect, const char *names)
{
    char head[256];
    snprintf(head, sizeof(head),
             "meshplan %s: configuration error (below): until it is fixed in plugstack.conf's "
             "meshplan line or its policy file, ",
             MESHPLAN_VERSION_STRING);
    if (strncmp(log, head, strlen(head)) != 0 || !strstr(log, effect) || !strstr(log, names))
        fail_msg("logged '%s', wanted '%s...%s' and '%s'", log, head, effect, names);
}

#define ALLOW "jobs that use meshplan's options are refused and the others run as usual"

/* meshplan's options other than --model, each with a value it takes */
static const struct {
    const char *name, *value;
} alone[] = {{"mesh", "tp=2"},     {"mesh-export", "mesh"},  {"mesh-bind", "none"},
             {"mesh-size", "min"}, {"mesh-headroom", "0.1"}, {"mesh-from", "plan.json"},
             {"mesh-keep", "tp"},  {"mesh-explain", NULL}};

static void config__broken_refuses_only_meshplan_jobs(void **state)
{
    for (size_t i = 0; i < sizeof(broken_configs) / sizeof(broken_configs[0]); i++) {
        const char *args = broken_configs[i].args, *names = broken_configs[i].names;
        /* slurmd: nothing, as ever (a failure would stop it) */
        assert_int_equal(init(S_CTX_SLURMD, args), 0);
        assert_int_equal(mock.errors, 0);
        assert_int_equal(init(S_CTX_JOB_SCRIPT, args), 0);
        assert_int_equal(mock.errors, 0);
        for (int ctx = 0; ctx < 2; ctx++) { /* srun, then sbatch and salloc */
            spank_context_t c = ctx ? S_CTX_ALLOCATOR : S_CTX_LOCAL;
            /* a job without meshplan's options runs, and its user hears
             * nothing of a plugin they do not use */
            assert_int_equal(init(c, args), 0);
            assert_int_equal(mock.n_options, 9);
            assert_int_equal(slurm_spank_init_post_opt(NULL, 0, NULL), 0);
            assert_int_equal(slurm_spank_local_user_init(NULL, 0, NULL), 0);
            assert_int_equal(mock.errors, 0);
            /* one with --model is refused before anything is queued, with the error */
            assert_int_equal(init(c, args), 0);
            assert_int_equal(mesh_test_option("model", "llama3-8b", 0), 0);
            assert_int_equal(slurm_spank_init_post_opt(NULL, 0, NULL), -1);
            assert_logged(mock.error_log, ALLOW, names);
            assert_non_null(strstr(mock.last_error, "--model: refused while meshplan's "
                                                    "configuration is broken"));
            assert_null(mock_getenv("CONTROL:MESHPLAN_REQUEST"));
            /* so is one with any other of meshplan's options alone, down
             * to one that asks only how its tasks are bound */
            for (size_t o = 0; o < sizeof(alone) / sizeof(alone[0]); o++) {
                char want[64];
                assert_int_equal(init(c, args), 0);
                assert_int_equal(mesh_test_option(alone[o].name, alone[o].value, 0), 0);
                assert_int_equal(slurm_spank_init_post_opt(NULL, 0, NULL), -1);
                snprintf(want, sizeof(want), "--%s: refused", alone[o].name);
                if (!strstr(mock.last_error, want))
                    fail_msg("--%s alone: '%s'", alone[o].name, mock.last_error);
            }
        }
        /* slurmstepd: init never fails (no node drained), and says it in slurmd's log */
        assert_int_equal(init(S_CTX_REMOTE, args), 0);
        assert_logged(mock.error_log, ALLOW, names);
        mock_step(0, 1, 0, 8);
        assert_int_equal(run_step(0), 0); /* no --model: the task runs untouched */
        assert_null(mock_getenv("RANK"));
        assert_int_equal(mock.errors, 2);
        /* --model (forwarded from sbatch): the step fails from task_init, the
         * batch script's too whatever steps= says, with the error on the
         * task's standard error; the extern step runs no task */
        static const uint32_t steps[] = {0, 0xfffffffb, 0xfffffffa};
        for (size_t j = 0; j < sizeof(steps) / sizeof(steps[0]); j++) {
            assert_int_equal(init(S_CTX_REMOTE, args), 0);
            mesh_test_option("model", "llama3-8b", 1);
            mock_step(steps[j], 1, 0, 8);
            mock.error_log[0] = '\0';
            assert_int_equal(run_step(0), -1);
            assert_logged(mock.error_log, ALLOW, names);
            assert_null(mock_getenv("RANK"));
        }
        assert_int_equal(init(S_CTX_REMOTE, args), 0);
        mesh_test_option("model", "llama3-8b", 1);
        mock_step(0xfffffffc, 1, 0, 0);
        assert_int_equal(run_step(0), 0);
    }
}

static void config__reject_stops_every_job(void **state)
{
    char path[] = "/tmp/meshplan-policy-XXXXXX", arg[64];
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    /* in the file, after the line that breaks it: read apart from the rest */
    const char *yaml = "enforce: maybe\non_config_error: reject\n";
    assert_int_equal(write(fd, yaml, strlen(yaml)), (ssize_t)strlen(yaml));
    close(fd);
    snprintf(arg, sizeof(arg), "policy=%s", path);
    const char *cases[][2] = {
        {"resrve=0.05 on_config_error=reject", "(on_config_error=reject)"},
        {arg, "(on_config_error=reject)"},
        /* a policy file that is not there: no file to say reject in, so the argument does */
        {"policy=/nonexistent/meshplan.yaml on_config_error=reject", "(on_config_error=reject)"},
        /* a word that is neither is taken as reject, and said so */
        {"on_config_error=rejct",
         "(on_config_error: 'rejct' is not one of allow, reject: taken as reject)"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(init(S_CTX_SLURMD, cases[i][0]), 0);
        assert_int_equal(init(S_CTX_LOCAL, cases[i][0]), -1);
        assert_logged(mock.error_log, cases[i][1], "");
        assert_non_null(strstr(mock.error_log, "every job is refused"));
        assert_int_equal(init(S_CTX_ALLOCATOR, cases[i][0]), -1);
        assert_logged(mock.error_log, cases[i][1], "");
        /* slurmstepd: a step without meshplan's options fails from task_init */
        assert_int_equal(init(S_CTX_REMOTE, cases[i][0]), 0);
        mock_step(0, 1, 0, 8);
        mock.error_log[0] = '\0';
        assert_int_equal(run_step(0), -1);
        assert_logged(mock.error_log, cases[i][1], "");
        assert_int_equal(init(S_CTX_REMOTE, cases[i][0]), 0);
        mock_step(0xfffffffc, 1, 0, 0); /* but not the extern step */
        assert_int_equal(run_step(0), 0);
    }
    unlink(path);
    /* a sound configuration that says reject: nothing to refuse */
    assert_int_equal(init(S_CTX_LOCAL, "on_config_error=reject"), 0);
    assert_int_equal(slurm_spank_init_post_opt(NULL, 0, NULL), 0);
    assert_int_equal(mock.errors, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(slurmd__does_nothing),
        cmocka_unit_test(options__registered_and_checked),
        cmocka_unit_test(log__first_message_says_the_version),
        cmocka_unit_test(submit__bad_config_or_spec_fails_at_once),
        cmocka_unit_test(submit__restart_pins_and_travels),
        cmocka_unit_test(submit__srun_refuses_what_does_not_fit),
        cmocka_unit_test(submit__srun_without_a_policy_gpu_leaves_it_to_the_nodes),
        cmocka_unit_test(submit__srun_refuses_mixed_nodes),
        cmocka_unit_test(submit__srun_step_smaller_than_the_allocation),
        cmocka_unit_test(submit__srun_torchrun_without_gpus_leaves_it_to_the_nodes),
        cmocka_unit_test(submit__srun_leaves_an_offload_to_the_nodes),
        cmocka_unit_test(stepd__task_gets_its_variables),
        cmocka_unit_test(explain__srun_then_the_first_task),
        cmocka_unit_test(stepd__restart_says_what_changed),
        cmocka_unit_test(stepd__spec_changed_since_submit),
        cmocka_unit_test(spec__carried_with_the_job),
        cmocka_unit_test(stepd__faults_refuse_the_step),
        cmocka_unit_test(stepd__errors_wait_for_task_init),
        cmocka_unit_test(stepd__task_never_starts_half_configured),
        cmocka_unit_test(stepd__interactive_step_only_when_asked),
        cmocka_unit_test(stepd__spec_unreadable_or_another_preset),
        cmocka_unit_test(deadline__nodes_check_only_the_form),
        cmocka_unit_test(stepd__warns_in_srun_words),
        cmocka_unit_test(stepd__skips_batch_extern_and_plain_jobs),
        cmocka_unit_test(stepd__torchrun_one_launcher_per_node),
        cmocka_unit_test(stepd__every_variable_as_meshplan_env),
        cmocka_unit_test(stepd__topology_cache_only_where_trusted),
        cmocka_unit_test(stepd__topology_per_node),
        cmocka_unit_test(config__broken_refuses_only_meshplan_jobs),
        cmocka_unit_test(config__reject_stops_every_job),
    };
    int rc = cmocka_run_group_tests_name("plugin", tests, NULL, NULL);
    mesh_stepd_exit();
    mock_reset(S_CTX_ERROR);
    return rc;
}
