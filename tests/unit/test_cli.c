/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The meshplan CLI, run as a user runs it: exit codes, one-line errors,
 * valid JSON, and `meshplan env` equal to what the library renders.
 */
#include <ctype.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

typedef struct result {
    int status;
    char out[1 << 20], err[8192];
} result_t;

static result_t res;

static void slurp(int fd, char *buf, size_t cap)
{
    size_t n = 0;
    ssize_t r;
    while ((r = read(fd, buf + n, cap - 1 - n)) > 0)
        n += (size_t)r;
    buf[n] = '\0';
}

/* What the next run() changes for meshplan: environment entries
 * ("NAME=VALUE" set, "NAME" removed) and where its stdout goes (NULL: the
 * pipe res.out reads) and comes from, and whether stderr goes there too.
 * run() resets them. */
static const char *run_env[8];
static const char *run_stdin; /* a file for its stdin (NULL: the test's own) */
static const char *run_stdout;
static int run_merged; /* stderr into stdout's pipe, as `2>&1 | less` */

/* Run meshplan with an argument list (NULL-terminated). */
static result_t *runv(const char *const *args)
{
    const char *argv[160];
    int argc = 0;
    argv[argc++] = getenv("MESHPLAN");
    for (int i = 0; args[i] && argc < 159; i++)
        argv[argc++] = args[i];
    argv[argc] = NULL;
    char errpath[] = "/tmp/meshplan-cli-XXXXXX";
    int errfd = mkstemp(errpath);
    int out[2];
    assert_int_equal(pipe(out), 0);
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; i < 8 && run_env[i]; i++)
            if (strchr(run_env[i], '='))
                putenv((char *)run_env[i]);
            else
                unsetenv(run_env[i]);
        if (run_stdin)
            dup2(open(run_stdin, O_RDONLY), 0);
        int fd = run_stdout ? open(run_stdout, O_WRONLY) : out[1];
        dup2(fd, 1);
        dup2(run_merged ? fd : errfd, 2);
        close(out[0]);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(out[1]);
    slurp(out[0], res.out, sizeof(res.out));
    close(out[0]);
    int st;
    waitpid(pid, &st, 0);
    lseek(errfd, 0, SEEK_SET);
    slurp(errfd, res.err, sizeof(res.err));
    close(errfd);
    unlink(errpath);
    res.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    memset(run_env, 0, sizeof(run_env));
    run_stdin = run_stdout = NULL;
    run_merged = 0;
    return &res;
}

static result_t *run(const char *arg0, ...)
{
    const char *args[64];
    int n = 0;
    va_list ap;
    va_start(ap, arg0);
    for (const char *a = arg0; a && n < 63; a = va_arg(ap, const char *))
        args[n++] = a;
    va_end(ap);
    args[n] = NULL;
    return runv(args);
}

/* ---- a strict JSON syntax check ---- */
static const char *json_value(const char *p);

static const char *ws(const char *p)
{
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
        p++;
    return p;
}

static const char *json_string(const char *p)
{
    if (*p++ != '"')
        return NULL;
    while (*p && *p != '"') {
        if ((unsigned char)*p < 0x20)
            return NULL;
        if (*p == '\\') {
            p++;
            if (*p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!isxdigit((unsigned char)p[i]))
                        return NULL;
                p += 4;
            } else if (!strchr("\"\\/bfnrt", *p))
                return NULL;
        }
        p++;
    }
    return *p == '"' ? p + 1 : NULL;
}

static const char *json_seq(const char *p, char close, int object)
{
    p = ws(p + 1);
    if (*p == close)
        return p + 1;
    for (;;) {
        if (object) {
            if (!(p = json_string(ws(p))))
                return NULL;
            p = ws(p);
            if (*p++ != ':')
                return NULL;
        }
        if (!(p = json_value(p)))
            return NULL;
        p = ws(p);
        if (*p == close)
            return p + 1;
        if (*p++ != ',')
            return NULL;
    }
}

static const char *json_value(const char *p)
{
    p = ws(p);
    if (*p == '{')
        return json_seq(p, '}', 1);
    if (*p == '[')
        return json_seq(p, ']', 0);
    if (*p == '"')
        return json_string(p);
    for (const char *lit = "true\0false\0null\0"; *lit; lit += strlen(lit) + 1)
        if (strncmp(p, lit, strlen(lit)) == 0)
            return p + strlen(lit);
    char *end;
    strtod(p, &end);
    return end > p && (isdigit((unsigned char)*p) || *p == '-') ? end : NULL;
}

static void assert_json(const char *s)
{
    const char *end = json_value(s);
    if (!end || *ws(end))
        fail_msg("invalid JSON near: %.80s", end ? end : s);
}

/* A bad-input failure: status 2, one line on stderr naming `needle`. */
static void assert_bad(const result_t *r, const char *needle)
{
    assert_int_equal(r->status, 2);
    if (!strstr(r->err, needle))
        fail_msg("stderr '%s' lacks '%s'", r->err, needle);
    assert_non_null(strchr(r->err, '\n'));
    assert_int_equal(strchr(r->err, '\n')[1], '\0');
    assert_int_equal(strncmp(r->err, "meshplan: ", 10), 0);
    assert_string_equal(r->out, "");
}

#define ALLOC "--nodes", "8", "--gpus-per-node", "8", "--gpu", "H100-SXM"

static void help__every_command(void **state)
{
    const char *cmds[] = {"plan", "check", "ranks", "env", "topo", "gpus", "presets", "size"};
    for (int i = 0; i < 8; i++) {
        result_t *r = run(cmds[i], "--help", NULL);
        assert_int_equal(r->status, 0);
        assert_non_null(strstr(r->out, cmds[i]));
        char *help = strdup(r->out);
        r = run(cmds[i], "-h", NULL); /* the short form: the same page */
        assert_int_equal(r->status, 0);
        assert_string_equal(r->out, help);
        free(help);
    }
    assert_int_equal(run("--help", NULL)->status, 0);
    assert_int_equal(run(NULL)->status, 2);
}

static void plan__text_and_json(void **state)
{
    result_t *r = run("plan", "--model", "llama3-70b", ALLOC, NULL);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "Layout (fits)"));
    assert_non_null(strstr(r->out, "Memory per GPU"));
    assert_non_null(strstr(r->out, "Runners-up"));
    assert_non_null(strstr(r->out, "Why not simpler"));
    r = run("plan", "--model", "llama3-70b", ALLOC, "--json", NULL);
    assert_int_equal(r->status, 0);
    assert_json(r->out);
    const char *keys[] = {"\"model\":{\"name\":\"llama3-70b\",\"params\":70553706496,",
                          "\"fits\":true",
                          "\"layout\":{\"tp\":",
                          "\"micro_batches\":",
                          "\"sequence_parallel\":",
                          "\"memory\":{\"weights\":",
                          "\"capacity\":",
                          "\"cost\":{\"step_seconds\":",
                          "\"mfu\":",
                          "\"alternatives\":[{",
                          "\"reasons\":[",
                          "\"advice\":[]"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (!strstr(r->out, keys[i]))
            fail_msg("JSON lacks %s", keys[i]);
}

/* The printed Megatron-LM line pastes into a shell: a word a shell would
 * read otherwise (DeepSeek-V3's layer pattern: '(' is syntax) is quoted,
 * while the exported variable, split without re-parsing, is not. */
static void plan__megatron_line_pastes_into_a_shell(void **state)
{
    result_t *r = run("plan", "--model", "deepseek-v3", "--nodes", "128", "--gpus-per-node", "8",
                      "--gpu", "H100-SXM", "--no-pictures", NULL);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, " --moe-layer-freq '([0]*3+[1]*58)' "));
    assert_non_null(strstr(r->out, " --num-experts 256 "));
    r = run("env", "--model", "deepseek-v3", "--nodes", "128", "--gpus-per-node", "8", "--gpu",
            "H100-SXM", NULL);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, " --moe-layer-freq ([0]*3+[1]*58) "));
}

static void check__exit_codes(void **state)
{
    result_t *r = run("check", "--model", "llama3-70b", ALLOC, "--mesh", "tp=8,pp=2", NULL);
    assert_int_equal(r->status, 0);
    r = run("check", "--model", "llama3-70b", ALLOC, "--mesh", "tp=1,pp=1,zero=0", "--json", NULL);
    assert_int_equal(r->status, 1);
    assert_json(r->out);
    assert_non_null(strstr(r->out, "\"fits\":false"));
    assert_non_null(strstr(r->out, "short by"));
    /* the seed's impossible case: 7B, plain DP, 80 GB */
    r = run("check", "--model", "llama2-7b", "--nodes", "1", "--gpus-per-node", "4", "--gpu-mem",
            "80GB", "--mesh", "zero=0,tp=1,pp=1", NULL);
    assert_int_equal(r->status, 1);
    assert_non_null(strstr(r->out, "DOES NOT FIT"));
    assert_bad(run("check", "--model", "llama3-70b", ALLOC, NULL), "--mesh");
}

static void bad_input__exit_2_one_line(void **state)
{
    assert_bad(run("plan", ALLOC, NULL), "--model");
    assert_bad(
        run("plan", "--model", "llama3-70b", "--gpus-per-node", "8", "--gpu", "H100-SXM", NULL),
        "--nodes");
    assert_bad(run("plan", "--model", "no-such", ALLOC, NULL), "unknown preset");
    assert_bad(run("plan", "--model", "llama3-70b", ALLOC, "--gpu-mem", "80G", NULL), "ambiguous");
    assert_bad(run("plan", "--model", "llama3-70b", "--nodes", "0", "--gpus-per-node", "8", "--gpu",
                   "H100-SXM", NULL),
               "--nodes");
    assert_bad(run("plan", "--model", "llama3-70b", "--nodes", "8", "--gpus-per-node", "8", NULL),
               "--gpu");
    assert_bad(run("plan", "--model", "llama3-70b", "--nodes", "8", "--gpus-per-node", "8", "--gpu",
                   "Z80", NULL),
               "unknown GPU");
    assert_bad(run("plan", "--model", "llama3-70b", ALLOC, "--mesh", "tp=3", NULL), "tp 3");
    assert_bad(run("plan", "--model", "llama3-70b", ALLOC, "--mesh", "warp=9", NULL), "warp");
    assert_bad(run("plan", "--model", "llama3-70b", ALLOC, "--bogus", NULL), "--bogus");
    assert_bad(run("plan", "--model", "llama3-70b", ALLOC, "extra", NULL), "extra");
    assert_bad(run("plan", "--model", "/nonexistent/spec.yaml", ALLOC, NULL), "cannot open");
    assert_bad(run("plan", "--model", "llama3-70b", ALLOC, "--set", "reserve=2", NULL), "reserve");
    assert_bad(run("plan", "--model", "llama3-70b", ALLOC, "--policy", "/nonexistent", NULL),
               "cannot open");
    assert_bad(run("env", "--model", "llama3-70b", ALLOC, "--node", "8", NULL), "node 8");
    assert_bad(run("env", "--model", "llama3-70b", ALLOC, "--export", "slurm", NULL), "--export");
    assert_bad(run("frobnicate", NULL), "unknown command");
}

static void nothing_fits__exit_1_with_advice(void **state)
{
    result_t *r = run("plan", "--model", "llama3.1-405b", "--nodes", "1", "--gpus-per-node", "8",
                      "--gpu", "A100-80GB", NULL);
    assert_int_equal(r->status, 1);
    assert_non_null(strstr(r->out, "What would fit"));
    assert_non_null(strstr(r->out, "lora"));
}

/* Text of NAME=value lines equal to want as a set: every line of want
 * exactly once, and no other line. */
static void assert_same_lines(const char *got, const char *const *want, int n, const char *who)
{
    int lines = 0;
    for (const char *p = got; *p; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] == '\n'))
        lines++;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(want[i]), name = strcspn(want[i], "=") + 1;
        int times = 0;
        const char *same_name = "";
        for (const char *p = got; *p; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] == '\n')) {
            times += strcspn(p, "\n") == len && strncmp(p, want[i], len) == 0;
            if (strncmp(p, want[i], name) == 0)
                same_name = p;
        }
        if (times != 1)
            fail_msg("%s: '%s' found %d times; the line of that name: '%.*s'", who, want[i], times,
                     (int)strcspn(same_name, "\n"), same_name);
    }
    if (lines != n)
        fail_msg("%s: %d lines, want %d:\n%s", who, lines, n, got);
}

/* The library's variables as `meshplan env` prints them. */
static void env_text(const mesh_env_t *e, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < mesh_env_count(e); i++) {
        at += (size_t)snprintf(buf + at, len - at, "%s=%s\n", mesh_env_name(e, i),
                               mesh_env_value(e, i));
        assert_true(at < len);
    }
}

static void env__equals_library(void **state)
{
    /* Llama 3 70B on 8 x 8 H100, every field pinned; task 5 of node 3 is
     * rank 3 * 8 + 5 = 29 (doc/design.md, "Rank map": node-contiguous ranks) */
    const char *mesh = "tp=4,pp=4,dp=2,cp=2,zero=1,vpp=1,mb=1,recompute=selective,sp=on";
    result_t *r =
        run("env", "--model", "llama3-70b", ALLOC, "--mesh", mesh, "--node", "3", "--local", "5",
            "--master-addr", "node001", "--job-id", "77", "--step-id", "2", NULL);
    assert_int_equal(r->status, 0);
    mesh_model_t m = test_preset("llama3-70b");
    mesh_alloc_t a = test_alloc("H100-SXM", 8, 8);
    mesh_plan_t *p = test_plan(&m, &a, mesh);
    /* What rank 29 must get, by hand.  doc/design.md, "Rank map":
     * rank = tp + 4*(cp + 2*(dp + 2*pp)), so 29 = 1 + 4*(1 + 2*(1 + 2*1)):
     * tp 1, cp 1, dp 1, pp 1; its groups vary one coordinate: TP 28..31,
     * CP 29-4 and 29, DP 29-8 and 29, PP 29-16, 29, 29+16, 29+32. */
    char mem[64], digest[64], port[64];
    /* the memory model's and the digest's own numbers (test_memory,
     * test_plan); here only that they are what is exported */
    snprintf(mem, sizeof(mem), "MESH_PREDICTED_MEM_BYTES=%.0f", mesh_plan_best(p)->memory.total);
    snprintf(digest, sizeof(digest), "MESH_PLAN_DIGEST=%s", mesh_plan_digest(p));
    /* doc/guide.md: MASTER_PORT = lo + (job*131 + step) mod (hi - lo + 1) in the
     * default port_range 20000-29999 */
    snprintf(port, sizeof(port), "MASTER_PORT=%d", 20000 + (77 * 131 + 2) % 10000);
    assert_string_equal(port, "MASTER_PORT=20089");
    const char *want[] = {
        "MESH_TP_SIZE=4",
        "MESH_PP_SIZE=4",
        "MESH_DP_SIZE=2",
        "MESH_CP_SIZE=2",
        "MESH_TP_RANK=1",
        "MESH_PP_RANK=1",
        "MESH_DP_RANK=1",
        "MESH_CP_RANK=1",
        "MESH_ORDER=tp-cp-dp-pp",
        "MESH_TP_GROUP=28,29,30,31",
        "MESH_PP_GROUP=13,29,45,61",
        "MESH_DP_GROUP=21,29",
        "MESH_CP_GROUP=25,29",
        "MESH_ZERO_STAGE=1",
        "MESH_VPP_SIZE=1",
        "MESH_MICRO_BATCH_SIZE=1",
        "MESH_NUM_MICRO_BATCHES=256", /* global 512 / (mb 1 * dp 2) */
        "MESH_GLOBAL_BATCH_SIZE=512", /* the preset's */
        "MESH_RECOMPUTE=selective",
        "MESH_SEQUENCE_PARALLEL=1",
        "MESH_PP_LAYERS=20,20,20,20", /* 80 layers over 4 stages */
        mem,
        "MESH_GPU_MEM_BYTES=85520809984", /* H100 SXM: 81559 MiB */
        "MESH_PLAN=tp=4,pp=4,dp=2,cp=2,zero=1,vpp=1,mb=1,recompute=selective,sp=on",
        digest,
        /* Megatron-LM's flags (arguments.py), whole: the model (80
         * layers, GQA with 8 groups, SwiGLU, RMSNorm of epsilon 1e-5, no
         * biases, rotary positions of base 500,000, 128,256 tokens padded to 128 x tp 4, untied, no
         * dropout), the sizes, sequence parallelism, ZeRO-1 as the
         * distributed optimizer, selective recomputation, bf16, and the
         * overlaps priced (lib/overlap.c): DP's, TP's and CP's */
        "MESH_MEGATRON_ARGS=--num-layers 80 --hidden-size 8192 --ffn-hidden-size 28672 "
        "--num-attention-heads 64 --group-query-attention --num-query-groups 8 --swiglu "
        "--normalization RMSNorm --disable-bias-linear --norm-epsilon 1e-05 "
        "--position-embedding-type rope --max-position-embeddings 8192 --rotary-base 500000 "
        "--padded-vocab-size 128512 "
        "--untie-embeddings-and-output-weights --attention-dropout 0 --hidden-dropout 0 "
        "--tensor-model-parallel-size 4 --pipeline-model-parallel-size 4 "
        "--context-parallel-size 2 --micro-batch-size 1 --global-batch-size 512 --seq-length 8192 "
        "--sequence-parallel --use-distributed-optimizer --recompute-granularity selective --bf16 "
        "--overlap-grad-reduce --overlap-param-gather --tp-comm-overlap --cp-comm-type p2p",
        /* DeepSpeed: train = micro * accumulation * dp = 1 * 256 * 2 */
        "MESH_DEEPSPEED_CONFIG={\"train_batch_size\":512,\"train_micro_batch_size_per_gpu\":1,"
        "\"gradient_accumulation_steps\":256,\"zero_optimization\":{\"stage\":1,"
        "\"reduce_bucket_size\":500000000},\"bf16\":{\"enabled\":true}}",
        /* TP 4 on an H100, distributed optimizer: Megatron-LM's
         * validate_args() asks 1 (arguments.py L1452-1479 at d98e8a6) */
        "CUDA_DEVICE_MAX_CONNECTIONS=1",
        "RANK=29",
        "WORLD_SIZE=64",
        "LOCAL_RANK=5",
        "LOCAL_WORLD_SIZE=8",
        "NODE_RANK=3",
        "MASTER_ADDR=node001",
        port,
    };
    int n = (int)(sizeof(want) / sizeof(want[0]));
    assert_same_lines(r->out, want, n, "meshplan env");
    /* the library, which the plugin calls, renders the same */
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    mesh_task_t t = {.node = 3,
                     .local = 5,
                     .master_addr = "node001",
                     .master_port =
                         mesh_env_master_port(77, 2, pol.launch.port_lo, pol.launch.port_hi),
                     .export_mode = MESH_EXPORT_TORCH,
                     .numa_node = -1};
    mesh_error_t err;
    mesh_env_t *e = mesh_env_create(p, &t, &err);
    assert_non_null(e);
    static char lib[1 << 16];
    env_text(e, lib, sizeof(lib));
    assert_same_lines(lib, want, n, "mesh_env_create");
    assert_string_equal(r->out, lib); /* and in the same order */
    mesh_env_destroy(e);
    mesh_plan_destroy(p);

    /* a planned layout: the CLI prints what the library renders, and the
     * task's place is the same whatever was planned */
    r = run("env", "--model", "llama3-70b", ALLOC, "--node", "3", "--local", "5", "--master-addr",
            "node001", "--job-id", "77", "--step-id", "2", NULL);
    assert_int_equal(r->status, 0);
    p = test_plan(&m, &a, "auto");
    e = mesh_env_create(p, &t, &err);
    assert_non_null(e);
    env_text(e, lib, sizeof(lib));
    assert_string_equal(r->out, lib);
    const char *place[] = {"RANK=29",     "WORLD_SIZE=64",       "LOCAL_RANK=5",
                           "NODE_RANK=3", "MASTER_ADDR=node001", "MASTER_PORT=20089"};
    for (int i = 0; i < 6; i++) {
        char line[64];
        snprintf(line, sizeof(line), "\n%s\n", place[i]);
        if (!strstr(r->out, line))
            fail_msg("meshplan env (planned) lacks %s", place[i]);
    }
    mesh_env_destroy(e);
    mesh_plan_destroy(p);
    r = run("env", "--model", "llama3-70b", ALLOC, "--export", "mesh", NULL);
    assert_null(strstr(r->out, "\nRANK="));
    /* enforce=reject (the default) refuses to render a layout that does not fit */
    r = run("env", "--model", "llama3-70b", ALLOC, "--mesh", "tp=1,pp=1,zero=0", NULL);
    assert_int_equal(r->status, 1);
    assert_string_equal(r->out, "");
    assert_non_null(strstr(r->err, "does not fit"));
    r = run("env", "--model", "llama3-70b", ALLOC, "--mesh", "tp=1,pp=1,zero=0", "--set",
            "enforce=warn", NULL);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->err, "warning"));
    assert_non_null(strstr(r->out, "MESH_ZERO_STAGE=0\n"));
}

static void ranks_gpus_presets(void **state)
{
    result_t *r =
        run("ranks", "--model", "llama3-70b", ALLOC, "--mesh", "tp=8,pp=2", "--no-pictures", NULL);
    assert_int_equal(r->status, 0);
    int lines = 0;
    for (const char *p = r->out; (p = strchr(p, '\n')); p++)
        lines++;
    assert_int_equal(lines, 64 + 2);
    r = run("ranks", "--model", "llama3-70b", ALLOC, "--mesh", "tp=8,pp=2", NULL);
    assert_non_null(strstr(r->out, "Rank map: 8 nodes x 8 GPUs"));
    assert_null(strchr(r->out, '\033')); /* piped: no colour */
    r = run("ranks", "--model", "llama3-70b", ALLOC, "--json", NULL);
    assert_json(r->out);
    r = run("gpus", "--json", NULL);
    assert_int_equal(r->status, 0);
    assert_json(r->out);
    assert_non_null(strstr(r->out, "\"MI300X\""));
    r = run("gpus", NULL); /* a table: no row wider than the header, none ending in a blank */
    assert_int_equal(r->status, 0);
    size_t width = strcspn(r->out, "\n");
    for (const char *p = r->out; *p; p += strcspn(p, "\n") + 1) {
        assert_true(strcspn(p, "\n") <= width);
        assert_int_not_equal(p[strcspn(p, "\n") - 1], ' ');
    }
    r = run("presets", NULL);
    assert_non_null(strstr(r->out, "llama3.1-405b"));
    r = run("presets", "--json", NULL);
    assert_json(r->out);
}

/* Run from its build tree with no MESH_MODELS_DIR (a developer's
 * tools/meshplan), meshplan finds the presets of the source tree it was
 * built from, ahead of any installed ones: `presets` says they come from
 * there, and plan takes one.  make check's MESH_MODELS_DIR is that very
 * directory (abs_top_srcdir/etc/models, in CI a separate build dir's
 * source).  The CLI knows its build tree by /proc/self/exe, a path with no
 * symbolic link, so a build dir configured under a path with one is not
 * recognised (it then plans with the installed presets): skipped there. */
static void presets__from_the_source_tree_without_models_dir(void **state)
{
    const char *src = getenv("MESH_MODELS_DIR");
    char build[PATH_MAX], *real;
    snprintf(build, sizeof(build), "%s", getenv("MESHPLAN"));
    *strrchr(build, '/') = '\0'; /* abs_top_builddir/tools */
    if (!src || !(real = realpath(build, NULL)))
        skip();
    int canonical = strcmp(real, build) == 0;
    free(real);
    if (!canonical)
        skip(); /* the build dir's path goes through a symbolic link */
    run_env[0] = "MESH_MODELS_DIR";
    result_t *r = run("presets", NULL);
    assert_int_equal(r->status, 0);
    const char *line = strstr(r->out, "llama3-8b ");
    assert_true(line == r->out || (line && line[-1] == '\n'));
    char want[PATH_MAX + 2];
    snprintf(want, sizeof(want), "  %s\n", src);
    size_t len = strcspn(line, "\n") + 1;
    if (len < strlen(want) || strncmp(line + len - strlen(want), want, strlen(want)) != 0)
        fail_msg("llama3-8b not from %s: %.*s", src, (int)len, line);
    run_env[0] = "MESH_MODELS_DIR";
    r = run("plan", "--model", "llama3-8b", "--gpu", "H100-SXM", "--nodes", "1", "--gpus-per-node",
            "8", "--no-pictures", NULL);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "llama3-8b"));
}

/* yaml in a new file whose name mkstemp makes of path (ending XXXXXX). */
static void write_temp(char *path, const char *yaml)
{
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, yaml, strlen(yaml)), (ssize_t)strlen(yaml));
    close(fd);
}

/* `gpus --policy` lists the GPUs as the policy makes them: the table's with
 * the policy's figures marked, the GPUs it defines, and the product names
 * --gpu takes, which plan then takes. */
static void gpus__as_the_policy_makes_them(void **state)
{
    char path[] = "/tmp/meshplan-cli-policy-XXXXXX";
    const char *yaml = "gpus:\n  NVIDIA H100 80GB HBM3: {memory: 70GiB, net_bw: 25GB/s}\n"
                       "  X1: {pci: \"10de:9998\", memory: 64GiB, peak_tflops: 500, island: 4}\n";
    write_temp(path, yaml);
    result_t *r = run("gpus", "--policy", path, NULL);
    assert_int_equal(r->status, 0);
    size_t width = strcspn(r->out, "\n");
    for (const char *p = r->out; *p; p += strcspn(p, "\n") + 1)
        assert_true(strcspn(p, "\n") <= width);
    assert_non_null(strstr(r->out, "\nH100-SXM         70.0 GiB*     989 bf16        3350      "
                                   "     450        25.0*       8    80%\n"));
    assert_non_null(strstr(r->out, "\nX1               64.0 GiB*     500 bf16*       3350      "
                                   "     450        50.0        4*   80%\n"));
    assert_non_null(strstr(r->out, "\n  the policy defines X1 (its other figures: H100-SXM's)\n"));
    assert_non_null(strstr(r->out, "\n    NVIDIA H100 80GB HBM3          H100-SXM\n"));
    r = run("gpus", "--policy", path, "--json", NULL);
    assert_int_equal(r->status, 0);
    assert_json(r->out);
    assert_non_null(strstr(r->out,
                           "\"net_bw\":2.5e+10,\"island\":8,\"tray\":0,\"gemm_eff\":0.8,\"source\":"
                           "\"table\",\"policy_sets\":[\"memory\",\"net_bw\"],\"aliases\":"
                           "[\"NVIDIA H100 80GB HBM3\",\"H100 SXM5 80GB\"]}"));
    assert_non_null(strstr(r->out, "{\"name\":\"X1\",\"memory\":68719476736,"));
    assert_non_null(strstr(r->out, "\"source\":\"policy\",\"policy_sets\":[\"memory\","
                                   "\"peak_flops\",\"island\"],\"aliases\":[]}]"));
    /* without a policy, nothing is the policy's */
    r = run("gpus", NULL);
    assert_null(strchr(r->out, '*'));
    assert_null(strstr(r->out, "the policy defines"));
    /* the names listed are names plan takes */
    r = run("plan", "--model", "llama3-8b", "--nodes", "1", "--gpus-per-node", "8", "--gpu",
            "NVIDIA A100-SXM4-80GB", "--policy", path, "--json", NULL);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "\"gpu\":\"A100-80GB\""));
    r = run("plan", "--model", "llama3-8b", "--nodes", "1", "--gpus-per-node", "8", "--gpu", "x1",
            "--policy", path, "--json", NULL);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "\"gpu\":\"X1\",\"gpu_memory\":68719476736,\"island\":4"));
    unlink(path);
}

static void topo__shows_and_plans(void **state)
{
    char xml[512];
    snprintf(xml, sizeof(xml), "%s/topologies/two-islands-8gpu.xml", getenv("MESH_FIXTURES"));
    result_t *r = run("topo", "--topology", xml, NULL);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "0000:bd:00.0"));
    assert_non_null(strstr(r->out, "TP groups of up to 4 GPUs"));
    r = run("topo", "--topology", xml, "--json", NULL);
    assert_json(r->out);
    assert_non_null(strstr(r->out, "\"islands\":[[0,1,2,3],[4,5,6,7]]"));
    assert_non_null(strstr(r->out, "\"numa_nodes\":2"));
    assert_non_null(strstr(r->out, "\"model\":\"A100-80GB\""));
    /* the PCI ids the model was found by: NVIDIA's 0x10de, A100 80GB's 0x20b2 */
    assert_non_null(
        strstr(r->out, "\"vendor_id\":4318,\"device_id\":8370,\"model\":\"A100-80GB\""));
    r = run("plan", "--model", "llama3-70b", "--nodes", "4", "--topology", xml, "--json", NULL);
    assert_int_equal(r->status, 0);
    assert_non_null(
        strstr(r->out, "\"gpu\":\"A100-80GB\",\"gpu_memory\":85899345920,\"island\":4"));
    r = run("env", "--model", "llama3-8b", "--nodes", "2", "--topology", xml, "--node", "1",
            "--local", "6", "--bind", "gpu", NULL);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "MESH_GPU_BUSID=0000:b7:00.0\n"));
    assert_non_null(strstr(r->out, "MESH_NUMA_NODE=1\n"));
    assert_non_null(strstr(r->out, "CUDA_VISIBLE_DEVICES=6\n"));
    assert_bad(run("plan", "--model", "llama3-70b", "--nodes", "4", "--topology", xml, "--gpu",
                   "H100-SXM", NULL),
               "--topology replaces");
    assert_bad(run("plan", "--model", "llama3-70b", "--nodes", "4", "--topology", xml,
                   "--gpus-per-node", "4", NULL),
               "topology has 8 GPUs");
    assert_bad(run("topo", "--topology", "/nonexistent.xml", NULL), "/nonexistent.xml");
    r = run("topo", NULL); /* this machine, whatever it has */
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "topology of this machine"));
}

/* With a topology the CLI plans what a node of it plans, the policy's
 * on_topology_error=fallback included: every node then plans for the
 * policy's GPU (lib/step.c, mesh_step_alloc), not for the topology's. */
static void topology__planned_as_the_node_plans(void **state)
{
    char xml[512];
    snprintf(xml, sizeof(xml), "%s/topologies/two-islands-8gpu.xml", getenv("MESH_FIXTURES"));
    result_t *r = run("plan", "--model", "llama3-8b", "--nodes", "1", "--topology", xml, "--set",
                      "on_topology_error=fallback", "--set", "gpu_mem=40GiB", "--json", NULL);
    assert_int_equal(r->status, 0);
    /* 40 GiB = 42949672960 bytes; the generic GPU's island of 8, not the A100s' 4 */
    assert_non_null(strstr(r->out, "\"gpu\":\"generic\",\"gpu_memory\":42949672960,\"island\":8"));
    assert_bad(run("plan", "--model", "llama3-8b", "--nodes", "1", "--topology", xml, "--set",
                   "on_topology_error=fallback", "--set", "gpu=H100-SXM", NULL),
               "this node has A100-80GB GPUs but the policy plans for H100-SXM");
}

/* ---- the option table: each command its own options ---- */

static void options__each_command_its_own(void **state)
{
    /* a typo of an option of the command: the option it most likely meant */
    result_t *r = run("plan", "--model", "llama3-70b", "--node", "2", "--gpus-per-node", "8",
                      "--gpu", "H100-SXM", NULL);
    assert_bad(r, "--node");
    assert_string_equal(r->err,
                        "meshplan: --node: unknown option for plan; did you mean --nodes?\n");
    /* another command's option: whose it is */
    assert_bad(run("plan", "--model", "llama3-70b", ALLOC, "--export", "torch", NULL),
               "--export: unknown option for plan (an option of env)");
    assert_bad(run("env", "--model", "llama3-70b", ALLOC, "--svg", "x.svg", NULL),
               "--svg: unknown option for env (an option of plan, check, ranks, calibrate)");
    /* the first option of the table too (whose it is: every planning
     * command's) */
    assert_bad(run("gpus", "--model", "llama3-70b", NULL),
               "--model: unknown option for gpus (an option of plan, check, ranks, env, size)");
    assert_bad(run("topo", "--shell", NULL), "--shell: unknown option for topo (an option of env)");
    /* no abbreviations: --gpus is no --gpus-per-node */
    assert_bad(run("plan", "--model", "llama3-70b", "--nodes", "8", "--gpus", "8", "--gpu",
                   "H100-SXM", NULL),
               "--gpus: unknown option for plan");
    /* a value is one word, or after '=' */
    r = run("plan", "--model=llama3-70b", "--nodes=8", "--gpus-per-node=8", "--gpu=H100-SXM",
            "--json", NULL);
    assert_int_equal(r->status, 0);
    assert_json(r->out);
    assert_bad(run("plan", "--model", "--nodes", "8", NULL), "--model needs a value (SPEC)");
    assert_bad(run("plan", "--model", "llama3-70b", ALLOC, "--nodes", NULL),
               "--nodes needs a value (N)");
    assert_bad(run("plan", "--model", "llama3-70b", ALLOC, "--json=yes", NULL),
               "--json takes no value");
    assert_bad(run("plan", "-x", NULL), "unexpected argument '-x'");
    /* a long option typed with one dash is not read as another option */
    assert_bad(run("plan", "-nodes=2", NULL), "unexpected argument '-nodes=2'");
    /* calibrate takes its logs as bare words and '-': "-x" is neither */
    assert_bad(run("calibrate", "-x", "/dev/null", NULL), "unexpected argument '-x'");
    assert_bad(run("--nodes", "2", NULL), "--nodes: an option comes after the command");
}

/* Each '-' as troff writes it, "\\-", in place. */
static void troff_dashes(char *s, size_t len)
{
    char out[8192] = "";
    size_t n = 0;
    for (const char *c = s; *c && n + 3 < sizeof(out); c++) {
        if (*c == '-')
            out[n++] = '\\';
        out[n++] = *c;
    }
    out[n] = '\0';
    assert_true(n < len);
    memcpy(s, out, n + 1);
}

/* Every option a command's --help lists (the completion offers those) is
 * in meshplan(1). */
static void options__help_lists_them_and_the_manual_too(void **state)
{
    const char *cmds[] = {"plan", "check", "ranks", "env", "topo", "gpus", "presets", "version"};
    int checked = 0;
    for (int i = 0; i < 8; i++) {
        result_t *r = run(cmds[i], "--help", NULL);
        assert_int_equal(r->status, 0);
        char list[8192] = "";
        for (const char *l = r->out; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] == '\n'))
            if (strncmp(l, "  --", 4) == 0)
                snprintf(list + strlen(list), sizeof(list) - strlen(list), "%.*s ",
                         (int)strcspn(l + 2, " \n"), l + 2);
        assert_non_null(strstr(list, "--help "));
        troff_dashes(list, sizeof(list));
        strcat(list, "|");
        checked += test_man_lists("meshplan.1", list, '|', " ");
    }
    assert_true(checked >= 60);
    /* each command's own: env has --shell, plan has --partition, neither the other's */
    assert_non_null(strstr(run("env", "--help", NULL)->out, "\n  --shell "));
    assert_null(strstr(run("plan", "--help", NULL)->out, "\n  --shell "));
    assert_non_null(strstr(run("check", "--help", NULL)->out, "\n  --partition NAME "));
    assert_null(strstr(run("env", "--help", NULL)->out, "--partition"));
}

static void help__command_and_unknown(void **state)
{
    static char plan_help[sizeof(res.out)], all[sizeof(res.out)];
    result_t *r = run("plan", "--help", NULL);
    assert_int_equal(r->status, 0);
    strcpy(plan_help, r->out);
    r = run("help", "plan", NULL);
    assert_int_equal(r->status, 0);
    assert_string_equal(r->out, plan_help);
    assert_int_equal(strncmp(plan_help, "usage: meshplan plan ", 21), 0);
    r = run("--help", NULL);
    strcpy(all, r->out);
    r = run("help", NULL);
    assert_int_equal(r->status, 0);
    assert_string_equal(r->out, all);
    assert_non_null(strstr(all, "\n  version  "));
    r = run("help", "pln", NULL);
    assert_bad(r, "unknown command 'pln'; did you mean plan? (commands: plan, check, ranks, env, "
                  "topo, size, gpus, policy, presets, calibrate, version, help)");
    assert_bad(run("chek", NULL), "unknown command 'chek'; did you mean check?");
    /* two neighbours swapped, the commonest slip, is one edit */
    assert_bad(run("plna", NULL), "unknown command 'plna'; did you mean plan?");
    assert_bad(run("nev", NULL), "unknown command 'nev'; did you mean env?");
    assert_bad(run("frobnicate", NULL), "unknown command 'frobnicate' (commands: ");
    /* Slurm's names for ours, said as ours, not guessed as typos (--gpus is
     * no --gpu); and Slurm's -N */
    assert_bad(run("plan", "--model", "llama3-8b", "--gpus", "8", NULL),
               "--gpus: unknown option for plan (Slurm's); here it is --nodes N --gpus-per-node "
               "G: meshplan plans whole nodes");
    assert_bad(run("size", "--model", "llama3-8b", "--mem", "500G", NULL),
               "--mem: unknown option for size (Slurm's); here it is --host-mem SIZE");
    assert_bad(run("gpus", "--gpus", "3", NULL), "--gpus: unknown option for gpus (see meshplan");
    result_t *n = run("plan", "--model", "llama3-8b", "-N", "2", "--gpus-per-node", "8", "--gpu",
                      "H100-SXM", "--policy", "none", "--json", NULL);
    assert_int_equal(n->status, 0);
    assert_non_null(strstr(n->out, "\"nodes\":2,"));
    assert_bad(run("help", "plan", "env", NULL), "help takes one command");
}

/* Issue 27: the documented check of a policy printed the GPU table; now
 * `policy check FILE` shows every setting as it takes effect, the
 * partitions with their GPUs, warnings and OK, or the file's one error. */
static void policy__check(void **state)
{
    char file[4096], path[4096 + 16];
    snprintf(file, sizeof(file), "%s/../hostile/policies/four-nodes.yaml", getenv("MESH_FIXTURES"));
    result_t *r = run("policy", "check", file, NULL);
    assert_int_equal(r->status, 0);
    snprintf(path, sizeof(path), "policy %s\n", file);
    assert_int_equal(strncmp(r->out, path, strlen(path)), 0);
    assert_non_null(strstr(r->out, "\n    enforce            reject\n"));
    assert_non_null(strstr(r->out, "\n    headroom           0\n"));
    assert_non_null(strstr(r->out, "\n    gpu_mem            (none)\n"));
    assert_non_null(strstr(r->out, "\n    overhead           1.0 GiB\n"));
    assert_non_null(strstr(r->out, "\npartitions\n  gpu              H100-SXM       79.6 GiB "
                                   "(77.3 usable), NVLink island 8, 4 nodes\n"));
    assert_non_null(strstr(r->out, "\nOK\n"));
    /* --set on top, marked as the policy's; a warning for what reads but is
     * not meant; JSON alike */
    r = run("policy", "check", file, "--set", "enforce=off", "--set", "reserve=0.5", NULL);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "\n  * enforce            off\n"));
    assert_non_null(strstr(r->out, "\nwarnings\n  - enforce=off: a job whose layout does not "
                                   "fit is queued"));
    assert_null(strstr(r->out, "reserve=0.5 and headroom")); /* half is left: no warning */
    assert_non_null(strstr(r->out, "\nOK (with the warnings above)\n"));
    r = run("policy", "check", file, "--json", "--set", "headroom=0.6", NULL);
    assert_int_equal(r->status, 0);
    assert_non_null(json_value(r->out));
    assert_non_null(strstr(r->out, "\"headroom\":\"0.6\""));
    assert_non_null(
        strstr(r->out, "\"warnings\":[\"reserve=0.03 and headroom=0.6 leave plans 39%"));
    assert_non_null(strstr(r->out, ",\"nodes\":4}],"));
    /* the partition's GPU in bytes: H100-SXM's 81559 MiB, usable 0.97 of it
     * (reserve=0.03) and 0.4 of that (headroom=0.6), its island and nodes */
    assert_non_null(strstr(r->out, "\"partitions\":[{\"name\":\"gpu\",\"gpu\":\"H100-SXM\","
                                   "\"memory\":85520809984,\"usable\":33182074274,"
                                   "\"island\":8,\"nodes\":4}]"));
    /* a partition without a GPU: no GPU, no memory, not some placeholder */
    r = run("policy", "check", file, "--json", "--set", "partition.cpu.nodes=2", NULL);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "{\"name\":\"cpu\",\"gpu\":null,\"memory\":0,\"usable\":0,"
                                   "\"island\":0,\"nodes\":2}]"));
    /* a partition of memory alone: the generic GPU of that memory the
     * controller plans its jobs on (24 GiB, usable 0.97 of it: 24996709663
     * bytes, 23.3 GiB), not "no GPU" */
    const char *mem_only[] = {"--set", "partition.small.gpu_mem=24GiB",
                              "--set", "partition.small.nvlink=2",
                              "--set", "partition.small.nodes=2"};
    r = run("policy", "check", file, "--json", mem_only[0], mem_only[1], mem_only[2], mem_only[3],
            mem_only[4], mem_only[5], NULL);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "{\"name\":\"small\",\"gpu\":\"generic\",\"memory\":25769803776,"
                                   "\"usable\":24996709663,\"island\":2,\"nodes\":2}]"));
    r = run("policy", "check", file, mem_only[0], mem_only[1], mem_only[2], mem_only[3],
            mem_only[4], mem_only[5], NULL);
    assert_non_null(strstr(r->out, "\n  small            generic        24.0 GiB (23.3 usable), "
                                   "NVLink island 2, 2 nodes\n"));
    r = run("plan", "--model", "llama3-8b", "--nodes", "2", "--gpus-per-node", "8", "--policy",
            file, "--partition", "small", "--no-pictures", mem_only[0], mem_only[1], mem_only[2],
            mem_only[3], mem_only[4], mem_only[5], NULL);
    assert_non_null(strstr(r->out, "x 8 generic GPUs (16 in all), 24.0 GiB each, 23.3 GiB usable, "
                                   "NVLink island 2\n"));
    /* a broken policy: its error, exit 2; a missing file; no action */
    snprintf(file, sizeof(file), "%s/../hostile/policies/enforce-bad.yaml",
             getenv("MESH_FIXTURES"));
    assert_bad(run("policy", "check", file, NULL), "enforce-bad.yaml:");
    assert_bad(run("policy", "check", "/nonexistent.yaml", NULL),
               "cannot open policy '/nonexistent.yaml'");
    assert_bad(run("policy", NULL), "policy: say what to do: meshplan policy check [FILE]");
    assert_bad(run("policy", "show", NULL), "policy: say what to do");
    /* none at all: the defaults, said as such */
    run_env[0] = "MESHPLAN_POLICY=none";
    r = run("policy", "check", NULL);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "policy (none: the defaults)\n"));
}

static void version__cli_and_library(void **state)
{
    char want[128];
    /* this suite links the library's code: the release it was built from */
    snprintf(want, sizeof(want), "meshplan %s (libmeshplan %s, API %d)\n", MESHPLAN_VERSION_STRING,
             mesh_version(), MESHPLAN_API_VERSION);
    result_t *r = run("--version", NULL);
    assert_int_equal(r->status, 0);
    assert_string_equal(r->out, want);
    r = run("version", NULL);
    assert_string_equal(r->out, want);
    r = run("version", "--json", NULL);
    assert_int_equal(r->status, 0);
    assert_json(r->out);
    snprintf(want, sizeof(want),
             "{\"meshplan\":\"%s\",\"libmeshplan\":\"%s\",\"api_version\":%d}\n",
             MESHPLAN_VERSION_STRING, mesh_version(), MESHPLAN_API_VERSION);
    assert_string_equal(r->out, want);
    assert_bad(run("version", "--model", "x", NULL), "--model: unknown option for version");
}

/* ---- env: the plugin's bytes, shell-safe export lines, or JSON ---- */

#define ODD_ADDR "it's a \"host\" $HOME `x` \\ ;"

static void env__shell_lines_survive_eval(void **state)
{
    static char plain[sizeof(res.out)];
    result_t *r = run("env", "--model", "llama3-70b", ALLOC, "--node", "3", "--local", "5",
                      "--master-addr", ODD_ADDR, NULL);
    assert_int_equal(r->status, 0);
    strcpy(plain, r->out);
    /* a value with spaces and one with a quote, both exported */
    assert_non_null(strstr(plain, "\nMESH_MEGATRON_ARGS=--num-layers 80 "));
    assert_non_null(strstr(plain, "\nMASTER_ADDR=" ODD_ADDR "\n"));
    /* eval in sh, then every variable as the plain form has it */
    char script[1024];
    snprintf(script, sizeof(script),
             "eval \"$('%s' env --model llama3-70b --nodes 8 --gpus-per-node 8 --gpu H100-SXM "
             "--node 3 --local 5 --master-addr \"$ODD\" --shell)\" || exit 9; env",
             getenv("MESHPLAN"));
    run_env[0] = "ODD=" ODD_ADDR;
    run_env[1] = "RANK"; /* the plugin keeps a RANK that is set: none here */
    /* ours that the task is not given (dense, no restart): unset, as the
     * plugin removes them, so a stale one cannot stand in */
    run_env[2] = "MESH_EP_SIZE=8";
    run_env[3] = "MESH_RESHARD=dp";
    const char *sh[] = {"-c", script, NULL};
    const char *save = getenv("MESHPLAN");
    setenv("MESHPLAN", "/bin/sh", 1);
    r = runv(sh);
    setenv("MESHPLAN", save, 1);
    assert_int_equal(r->status, 0);
    assert_null(strstr(r->out, "\nMESH_EP_SIZE="));
    assert_null(strstr(r->out, "\nMESH_RESHARD="));
    int n = 0;
    for (const char *l = plain; *l; l += strcspn(l, "\n") + 1, n++) {
        char line[4096];
        snprintf(line, sizeof(line), "\n%.*s\n", (int)strcspn(l, "\n"), l);
        if (!strstr(r->out, line))
            fail_msg("after eval, the environment lacks %s", line + 1);
    }
    assert_true(n > 30);
    /* every line an unset of one of ours, then an export of one
     * single-quoted word */
    r = run("env", "--model", "llama3-70b", ALLOC, "--master-addr", ODD_ADDR, "--shell", NULL);
    assert_non_null(strstr(r->out, "\nexport MASTER_ADDR='it'\\''s a \"host\" $HOME `x` \\ ;'\n"));
    int exports = 0;
    for (const char *l = r->out; *l; l += strcspn(l, "\n") + 1) {
        if (strncmp(l, "unset MESH_", 11) == 0)
            assert_int_equal(exports, 0);
        else
            assert_int_equal(strncmp(l, "export ", 7), 0), exports++;
    }
    assert_true(exports > 30);
}

static void env__json_object(void **state)
{
    static char plain[sizeof(res.out)];
    result_t *r = run("env", "--model", "llama3-70b", ALLOC, "--master-addr", ODD_ADDR, NULL);
    strcpy(plain, r->out);
    r = run("env", "--model", "llama3-70b", ALLOC, "--master-addr", ODD_ADDR, "--json", NULL);
    assert_int_equal(r->status, 0);
    assert_json(r->out);
    assert_int_equal(r->out[0], '{');
    /* the same variables, in the same order, as strings */
    const char *at = r->out;
    for (const char *l = plain; *l; l += strcspn(l, "\n") + 1) {
        size_t name = strcspn(l, "="), len = strcspn(l, "\n");
        char *v = strndup(l + name + 1, len - name - 1), want[4096];
        char *q = mesh_json_string(v);
        snprintf(want, sizeof(want), "\"%.*s\":%s", (int)name, l, q);
        const char *found = strstr(at, want);
        if (!found)
            fail_msg("--json lacks (after the previous variable) %s", want);
        at = found + strlen(want);
        free(q);
        free(v);
    }
    assert_string_equal(at, "}\n");
    assert_bad(run("env", "--model", "llama3-70b", ALLOC, "--json", "--shell", NULL),
               "--json and --shell: choose one");
}

/* `calibrate LOG -o FILE` writes the calibration, says where, exits 0, and
 * a plan told calibration=FILE reads it back and says it is calibrated. */
static void calibrate__output_file_read_back(void **state)
{
    (void)state;
    char log[4096], path[] = "/tmp/meshplan-cal-out-XXXXXX", set[64];
    snprintf(log, sizeof(log), "%s/../hostile/logs/megatron-job.out", getenv("MESH_FIXTURES"));
    close(mkstemp(path));
    result_t *r = run("calibrate", log, "-o", path, NULL);
    if (r->status != 0 || !strstr(r->err, "calibration written to "))
        fail_msg("calibrate -o: status %d, stderr '%s'", r->status, r->err);
    snprintf(set, sizeof(set), "calibration=%s", path);
    r = run("plan", "--model", "llama3-8b", "--nodes", "1", "--gpus-per-node", "8", "--gpu",
            "H100-SXM", "--set", set, "--no-pictures", NULL);
    unlink(path);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "calibrated on 1 job"));
}

/* A job's log is read whole however long (a real one is megabytes: the
 * job's lines here come after 200 KiB of other output and before more),
 * from stdin as '-', and what is not a readable regular file is refused
 * with its name. */
static void calibrate__logs_read_whole_from_anywhere(void **state)
{
    (void)state;
    char log[4096], big[] = "/tmp/meshplan-cal-big-XXXXXX", want[4096];
    snprintf(log, sizeof(log), "%s/../hostile/logs/megatron-job.out", getenv("MESH_FIXTURES"));
    result_t *r = run("calibrate", log, NULL);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "calibrated on 1 job"));
    snprintf(want, sizeof(want), "%s", r->out);
    FILE *in = fopen(log, "r"), *out = fdopen(mkstemp(big), "w");
    assert_true(in && out);
    for (int i = 0; i < 4000; i++) /* 4,000 lines of 53 bytes */
        fprintf(out, "INFO:megatron.core.datasets: building indices %06d\n", i);
    for (int c; (c = getc(in)) != EOF;)
        putc(c, out);
    for (int i = 0; i < 2000; i++)
        fprintf(out, "INFO:megatron.core.datasets: building indices %06d\n", i);
    fclose(in);
    assert_int_equal(fclose(out), 0);
    r = run("calibrate", big, NULL);
    assert_int_equal(r->status, 0);
    assert_string_equal(r->out, want);
    run_stdin = big;
    r = run("calibrate", "-", NULL);
    assert_int_equal(r->status, 0);
    assert_string_equal(r->out, want);
    unlink(big);
    assert_bad(run("calibrate", big, NULL), "meshplan: /tmp/meshplan-cal-big-");
    assert_bad(run("calibrate", big, NULL), ": No such file or directory");
    assert_bad(run("calibrate", "/tmp", NULL), "/tmp: not a regular file (a job's log)");
}

/* A time margin is said as the policy gives it: 12.5%, not rounded to 12;
 * and one node is one node. */
static void size__margin_as_given(void **state)
{
    (void)state;
    result_t *r =
        run("size", "--model", "llama3-8b", "--nodes", "1-4", "--gpus-per-node", "8", "--gpu",
            "H100-SXM", "--set", "train.tokens=1e10", "--set", "time_margin=0.125", NULL);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "\nRun on 1 node: 1 d 12 h, --time=1-16:47:00 with the 12.5% "
                                   "margin"));
    r = run("plan", "--model", "llama3-8b", "--nodes", "1", "--gpus-per-node", "8", "--gpu",
            "H100-SXM", "--set", "train.tokens=1e10", "--set", "time_margin=0.125", "--no-pictures",
            NULL);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "; with the 12.5% margin (time_margin): --time=1-16:47:00\n"));
}

/* ---- output: checked, and --svg ---- */

static void output__write_errors_fail(void **state)
{
    const char *cmds[][12] = {
        {"env", "--model", "llama3-70b", ALLOC, NULL},
        {"plan", "--model", "llama3-70b", ALLOC, NULL},
        {"ranks", "--model", "llama3-70b", "--nodes", "64", "--gpus-per-node", "8", "--gpu",
         "H100-SXM", NULL},
        {"gpus", NULL},
        {"version", NULL},
    };
    for (int i = 0; i < 5; i++) {
        run_stdout = "/dev/full";
        result_t *r = runv(cmds[i]);
        if (r->status != 2 ||
            strcmp(r->err, "meshplan: write error: No space left on device\n") != 0)
            fail_msg("meshplan %s > /dev/full: status %d, stderr '%s'", cmds[i][0], r->status,
                     r->err);
    }
}

/* Preload C source `code`, compiled here as check-abi compiles its own,
 * into the next run()'s meshplan (run_env[0] and [1]; under ASan its
 * runtime need not come first for a shim that uses none).  dir[] is a
 * mkdtemp template; remove it after the run (rm_shim). */
static void preload_shim(const char *code, char *dir)
{
    static char preload[96], asan[256];
    char path[128], cmd[512];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/shim.c", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(code, f);
    fclose(f);
    snprintf(cmd, sizeof(cmd), "%s -shared -fPIC -o %s/shim.so %s",
             getenv("MESHPLAN_CC") ? getenv("MESHPLAN_CC") : "cc", dir, path);
    if (system(cmd) != 0)
        fail_msg("cannot compile the shim: %s", cmd);
    snprintf(preload, sizeof(preload), "LD_PRELOAD=%s/shim.so", dir);
    snprintf(asan, sizeof(asan), "ASAN_OPTIONS=%s%sverify_asan_link_order=0",
             getenv("ASAN_OPTIONS") ? getenv("ASAN_OPTIONS") : "",
             getenv("ASAN_OPTIONS") ? ":" : "");
    run_env[0] = preload;
    run_env[1] = asan;
}

/* Remove preload_shim's directory (a failed compile leaves it: it is the
 * evidence). */
static void rm_shim(const char *dir)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* Where stdout's checked stream cannot be made (fopencookie fails: memory
 * short), meshplan writes through stdio's own stream; a short output, held
 * in its buffer until the end, still fails at the last flush with the
 * reason (ENOSPC), not a vague "Input/output error".  fopencookie is made
 * to fail by a preloaded shim. */
static void output__write_error_named_without_the_checked_stream(void **state)
{
    (void)state;
    char dir[] = "/tmp/meshplan-shim-XXXXXX";
    preload_shim("#define _GNU_SOURCE\n#include <errno.h>\n#include <stdio.h>\n"
                 "FILE *fopencookie(void *c, const char *m, cookie_io_functions_t f)"
                 " { (void)c, (void)m, (void)f; errno = ENOMEM; return NULL; }\n",
                 dir);
    run_stdout = "/dev/full";
    result_t *r = run("version", NULL);
    rm_shim(dir);
    if (r->status != 2 || strcmp(r->err, "meshplan: write error: No space left on device\n") != 0)
        fail_msg("meshplan version > /dev/full, unchecked stream: status %d, stderr '%s'",
                 r->status, r->err);
}

/* A write that takes only part of what it is given (a pipe's, when a
 * signal comes: Ctrl-Z, then fg) is continued where it stopped: the
 * output comes whole and in order.  A preloaded shim cuts each write to
 * stdout to 1,000 bytes. */
static void output__short_writes_continued(void **state)
{
    (void)state;
    const char *ranks[] = {"ranks",           "--model", "llama3-70b", "--nodes",  "64",
                           "--gpus-per-node", "8",       "--gpu",      "H100-SXM", NULL};
    result_t *r = runv(ranks);
    assert_int_equal(r->status, 0);
    size_t n = strlen(r->out);
    assert_true(n > 8192); /* more than stdout's buffer: several writes */
    char *want = strdup(r->out);
    char dir[] = "/tmp/meshplan-shim-XXXXXX";
    preload_shim("#define _GNU_SOURCE\n#include <sys/syscall.h>\n#include <unistd.h>\n"
                 "ssize_t write(int fd, const void *b, size_t n)"
                 " { return syscall(SYS_write, fd, b, fd == 1 && n > 1000 ? 1000 : n); }\n",
                 dir);
    r = runv(ranks);
    rm_shim(dir);
    assert_int_equal(r->status, 0);
    assert_string_equal(r->out, want);
    free(want);
}

/* A write that takes nothing and says nothing (0 for a count of at least
 * one: a device that accepts no more) is an error, named as the kernel
 * gives none, not retried: errno still holds what an earlier call left
 * there (EINTR, here), and retrying would spin for ever.  A preloaded shim
 * makes every write to stdout take nothing, and aborts at its hundredth. */
static void output__write_of_nothing_is_an_error(void **state)
{
    (void)state;
    char dir[] = "/tmp/meshplan-shim-XXXXXX";
    preload_shim("#define _GNU_SOURCE\n#include <errno.h>\n#include <stdlib.h>\n"
                 "#include <sys/syscall.h>\n#include <unistd.h>\n"
                 "static int calls;\n"
                 "ssize_t write(int fd, const void *b, size_t n) {\n"
                 "  if (fd != 1) return syscall(SYS_write, fd, b, n);\n"
                 "  if (++calls == 100) abort();\n"
                 "  errno = EINTR; return 0; }\n",
                 dir);
    result_t *r = run("version", NULL);
    rm_shim(dir);
    if (r->status != 2 || strcmp(r->err, "meshplan: write error: Input/output error\n") != 0)
        fail_msg("meshplan version, writes taking nothing: status %d, stderr '%s'", r->status,
                 r->err);
}

static void output__svg_stdout_and_early_failure(void **state)
{
    result_t *r = run("plan", "--model", "llama3-70b", ALLOC, "--svg", "-", NULL);
    assert_int_equal(r->status, 0);
    assert_int_equal(strncmp(r->out, "<?xml", 5), 0);
    assert_null(strstr(r->out, "Layout (fits)")); /* the SVG alone */
    assert_non_null(strstr(r->out, "</svg>\n"));
    assert_string_equal(r->err, "");
    assert_bad(run("plan", "--model", "llama3-70b", ALLOC, "--svg", "-", "--json", NULL),
               "--svg - and --json both write to standard output");
    /* a file that cannot be written: the reason, and no report */
    r = run("plan", "--model", "llama3-70b", ALLOC, "--svg", "/nonexistent/x.svg", NULL);
    assert_bad(r, "--svg: cannot write /nonexistent/x.svg: No such file or directory");
    r = run("plan", "--model", "llama3-70b", ALLOC, "--svg", "/dev/full", NULL);
    assert_bad(r, "--svg: cannot write /dev/full: No space left on device");
    /* a file, and the report as without it */
    char path[] = "/tmp/meshplan-svg-XXXXXX";
    close(mkstemp(path));
    static char plain[sizeof(res.out)];
    r = run("check", "--model", "llama3-70b", ALLOC, "--mesh", "tp=8,pp=2", NULL);
    strcpy(plain, r->out);
    r = run("check", "--model", "llama3-70b", ALLOC, "--mesh", "tp=8,pp=2", "--svg", path, NULL);
    assert_int_equal(r->status, 0);
    assert_string_equal(r->out, plain);
    FILE *f = fopen(path, "r");
    char head[6] = "";
    assert_non_null(f);
    assert_int_equal(fread(head, 1, 5, f), 5);
    fclose(f);
    unlink(path);
    assert_string_equal(head, "<?xml");
}

/* ---- the system's policy ---- */

static void policy__system_by_default(void **state)
{
    char path[] = "/tmp/meshplan-policy-XXXXXX", env[64], note[128],
         broken[] = "/tmp/meshplan-policy-XXXXXX";
    int fd = mkstemp(path);
    assert_int_equal(write(fd, "reserve: 0.5\n", 13), 13);
    close(fd);
    snprintf(env, sizeof(env), "MESHPLAN_POLICY=%s", path);
    snprintf(note, sizeof(note),
             "meshplan: policy %s ($MESHPLAN_POLICY's; --policy none plans without it)\n", path);
    /* read, and said on stderr; the JSON stays JSON */
    run_env[0] = env;
    result_t *r = run("plan", "--model", "llama3-8b", ALLOC, "--json", NULL);
    assert_int_equal(r->status, 0);
    assert_json(r->out);
    assert_string_equal(r->err, note);
    /* half of 85520809984 bytes kept free */
    assert_non_null(strstr(r->out, "\"capacity\":42760404992"));
    /* --policy FILE and --policy none replace it, silently */
    run_env[0] = env;
    r = run("plan", "--model", "llama3-8b", ALLOC, "--json", "--policy", "none", NULL);
    assert_string_equal(r->err, "");
    assert_null(strstr(r->out, "\"capacity\":42760404992"));
    /* --set on top of it */
    run_env[0] = env;
    r = run("plan", "--model", "llama3-8b", ALLOC, "--json", "--set", "reserve=0.25", NULL);
    assert_non_null(strstr(r->out, "\"capacity\":64140607488"));
    /* the env command too, and the lists */
    run_env[0] = env;
    assert_string_equal(run("gpus", NULL)->err, note);
    /* one the environment names but that does not exist: an error, not
     * silently no policy (a typo of the path would plan without the site's) */
    run_env[0] = "MESHPLAN_POLICY=/nonexistent/meshplan.yaml";
    r = run("plan", "--model", "llama3-8b", ALLOC, "--json", NULL);
    assert_bad(r, "$MESHPLAN_POLICY names /nonexistent/meshplan.yaml, which does not exist: fix "
                  "it, unset it, or set it to none to plan without a policy");
    assert_string_equal(r->out, "");
    run_env[0] = "MESHPLAN_POLICY=/nonexistent/meshplan.yaml";
    r = run("plan", "--model", "llama3-8b", ALLOC, "--json", "--policy", "none", NULL);
    assert_int_equal(r->status, 0); /* --policy decides over the environment */
    /* a broken one: the error, and how to do without it */
    fd = mkstemp(broken);
    assert_int_equal(write(fd, "resrve: 0.5\n", 12), 12);
    close(fd);
    snprintf(env, sizeof(env), "MESHPLAN_POLICY=%s", broken);
    run_env[0] = env;
    r = run("plan", "--model", "llama3-8b", ALLOC, NULL);
    assert_bad(r, "($MESHPLAN_POLICY's policy; --policy none plans without it)");
    assert_non_null(strstr(r->err, "resrve"));
    unlink(path);
    unlink(broken);
}

/* ---- --set: spec keys and policy keys ---- */

static void set__spec_and_policy_keys(void **state)
{
    static char by_set[sizeof(res.out)];
    result_t *r =
        run("plan", "--model", "llama3-70b", ALLOC, "--json", "--set", "train.seq_len=32768", NULL);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "\"seq_len\":32768,"));
    strcpy(by_set, r->out);
    /* the same plan as a copied spec with that key */
    char path[] = "/tmp/meshplan-spec-XXXXXX.yaml";
    int fd = mkstemps(path, 5);
    const char *spec = "preset: llama3-70b\ntrain:\n  seq_len: 32768\n";
    assert_int_equal(write(fd, spec, strlen(spec)), (ssize_t)strlen(spec));
    close(fd);
    r = run("plan", "--model", path, ALLOC, "--json", NULL);
    assert_string_equal(r->out, by_set);
    /* over the file's own value, with the file's validation */
    r = run("plan", "--model", path, ALLOC, "--json", "--set", "train.seq_len=8192", NULL);
    assert_non_null(strstr(r->out, "\"seq_len\":8192,"));
    assert_bad(run("plan", "--model", path, ALLOC, "--set", "train.micro_batch=3", NULL),
               "--set: train.micro_batch: 3 does not divide global_batch 512");
    unlink(path);
    /* counts as people write them: 32Ki is 32768, the plan of train.seq_len=32768 */
    r = run("plan", "--model", "llama3-70b", ALLOC, "--json", "--set", "train.seq_len=32Ki", NULL);
    assert_string_equal(r->out, by_set);
    r = run("plan", "--model", "llama3-70b", ALLOC, "--json", "--set", "train.seq_len=32k", NULL);
    assert_non_null(strstr(r->out, "\"seq_len\":32000,"));
    assert_bad(run("plan", "--model", "llama3-70b", ALLOC, "--set", "train.seq_len=4kb", NULL),
               "--set: train.seq_len: '4kb' is not an integer (expected 1..16777216: digits, or a "
               "number with k, M, G or B, T (powers of 1000) or Ki, Mi, Gi, Ti (powers of 1024): "
               "32k is 32000, 32Ki 32768)");
    assert_bad(run("plan", "--model", "llama3-70b", ALLOC, "--set", "train.tokens=1.2345k", NULL),
               "--set: train.tokens: '1.2345k' is not a whole number");
    /* name, the spec's first key and no section's, is the spec's too */
    r = run("plan", "--model", "llama3-70b", ALLOC, "--json", "--set", "name=my-run", NULL);
    assert_int_equal(r->status, 0);
    const char *named = "{\"model\":{\"name\":\"my-run\",";
    assert_int_equal(strncmp(r->out, named, strlen(named)), 0);
    /* policy keys as before */
    r = run("plan", "--model", "llama3-8b", ALLOC, "--json", "--set", "reserve=0.5", NULL);
    assert_non_null(strstr(r->out, "\"capacity\":42760404992"));
    /* unknown keys: the likeliest of either set */
    assert_bad(run("plan", "--model", "llama3-70b", ALLOC, "--set", "seq_len=4096", NULL),
               "unknown policy key 'seq_len'");
    assert_non_null(strstr(res.err, "; did you mean train.seq_len?\n"));
    assert_bad(run("plan", "--model", "llama3-70b", ALLOC, "--set", "resrve=0.1", NULL),
               "; did you mean reserve?");
    assert_bad(run("plan", "--model", "llama3-70b", ALLOC, "--set", "train.reserve=0.1", NULL),
               "--set: unknown key 'reserve' in train");
    assert_non_null(strstr(res.err, "; did you mean reserve (a policy key)?\n"));
    /* only for the key the error is about: not for another error */
    assert_bad(run("plan", "--model", "llama3-70b", ALLOC, "--set", "train.seq_len=4kb", "--set",
                   "train.reserve=0.1", NULL),
               "--set: train.seq_len: '4kb' is not an integer");
    assert_null(strstr(res.err, "did you mean"));
    assert_bad(run("plan", "--model", "llama3-70b", ALLOC, "--set", "arch.seq_len=4096", NULL),
               "; did you mean train.seq_len?");
    assert_bad(run("gpus", "--set", "train.seq_len=4096", NULL),
               "--set train.seq_len=4096: a key of the model's spec, which gpus does not read");
}

/* --set holds 64 keys, of the spec and of the policy together: one more
 * of either kind is refused, naming the limit.  (The same key is given
 * many times here: that is refused too, but after all the options are
 * read, so the limit speaks first when it is passed.) */
static void set__at_most_64_of_both_kinds(void **state)
{
    (void)state;
    const char *args[160] = {"plan", "--model", "llama3-8b", ALLOC, "--set=reserve=0.1"};
    int n = 0, first;
    while (args[n])
        n++;
    for (first = n; n < first + 63; n++)
        args[n] = "--set=train.seq_len=4096";
    assert_bad(runv(args), "--set: train.seq_len: given twice"); /* 1 + 63: read */
    args[n++] = "--set=train.seq_len=4096";
    assert_bad(runv(args), "--set: at most 64 times");
    args[n - 1] = "--set=reserve=0.1";
    assert_bad(runv(args), "--set: at most 64 times");
}

/* ---- --partition: the controller's judgement (tests/unit/test_job_submit
 * compares it with the controller's own) ---- */

static void partition__errors(void **state)
{
    assert_bad(run("plan", "--model", "llama3-8b", ALLOC, "--partition", "gpu", NULL),
               "--partition takes the GPU from the policy's partitions");
    assert_bad(run("plan", "--model", "llama3-8b", "--nodes", "1", "--gpus-per-node", "8",
                   "--partition", "gpu", NULL),
               "--partition gpu: the controller does not judge this job");
    /* a one-letter name is named as given, not as "(none)" */
    assert_bad(run("plan", "--model", "llama3-8b", "--nodes", "1", "--gpus-per-node", "8",
                   "--partition", "g", NULL),
               "--partition g: the controller does not judge this job");
    assert_bad(run("env", "--model", "llama3-8b", ALLOC, "--partition", "gpu", NULL),
               "--partition: unknown option for env (an option of plan, check, size)");
    /* a partition the policy does not describe, where it describes some:
     * named, with the one meant, not "the GPU is unknown" */
    char path[] = "/tmp/meshplan-cli-parts-XXXXXX";
    const char *yaml = "partitions:\n  a100: {gpu: A100-80GB, nodes: 16}\n"
                       "  h100: {gpu: H100-SXM, nodes: 8}\n";
    write_temp(path, yaml);
    assert_bad(run("plan", "--model", "llama3-8b", "--nodes", "2", "--gpus-per-node", "8",
                   "--policy", path, "--partition", "A100", NULL),
               "meshplan: --partition: unknown partition 'A100' (the policy's: a100, h100); did "
               "you mean a100?");
    assert_bad(run("size", "--model", "llama3-8b", "--nodes", "1-4", "--gpus-per-node", "8",
                   "--policy", path, "--partition", "a100,h10", NULL),
               "unknown partition 'h10' (the policy's: a100, h100); did you mean h100?");
    assert_int_equal(run("plan", "--model", "llama3-8b", "--nodes", "2", "--gpus-per-node", "8",
                         "--policy", path, "--partition", "a100", "--json", NULL)
                         ->status,
                     0);
    unlink(path);
}

/* ---- size: every count of a range, one chosen by a goal ---- */

#define SIZE_ALLOC "--gpus-per-node", "8", "--gpu", "H100-SXM", "--policy", "none"

/* The seconds left before `date` that size's JSON reports (deadline.seconds)
 * with TZ set to tz; -1 when there are none. */
static long size_seconds_left(const char *tz, const char *date)
{
    char goal[64];
    snprintf(goal, sizeof(goal), "by:%s", date);
    run_env[0] = tz;
    result_t *r = run("size", "--model", "llama3-8b", "--nodes", "1-2", SIZE_ALLOC, "--goal", goal,
                      "--set", "train.tokens=1e10", "--json", NULL);
    const char *at = r->status == 0 ? strstr(r->out, "\"seconds\":") : NULL;
    return at ? strtol(at + strlen("\"seconds\":"), NULL, 10) : -1;
}

/* A date in --goal by: is the user's local date: without --now, the clock
 * is read in the local zone, so 14 hours east of UTC the same date is 14
 * hours nearer (50,400 s, give or take the seconds between the runs). */
static void size__deadline_on_the_local_clock(void **state)
{
    (void)state;
    char date[16];
    time_t later = time(NULL) + 3 * 86400;
    struct tm tm;
    assert_non_null(gmtime_r(&later, &tm));
    strftime(date, sizeof(date), "%Y-%m-%d", &tm);
    /* POSIX zone strings: no tzdata needed (UTC0, and 14 hours east) */
    long utc = size_seconds_left("TZ=UTC0", date), east = size_seconds_left("TZ=EAST-14", date);
    if (utc < 0 || east < 0)
        fail_msg("no deadline seconds (UTC %ld, UTC+14 %ld)", utc, east);
    if (labs(utc - east - 14 * 3600) > 60)
        fail_msg("UTC %ld s left, UTC+14 %ld: %ld apart, not 50400", utc, east, utc - east);
}

/* The table's row of `nodes` in size's text ("" when there is none). */
static const char *size_row_of(const char *out, int nodes)
{
    static char line[256];
    char key[16];
    snprintf(key, sizeof(key), " %6d  ", nodes);
    const char *p = strstr(out, key);
    line[0] = '\0';
    if (p) {
        while (p > out && p[-1] != '\n')
            p--;
        snprintf(line, sizeof(line), "%.*s", (int)strcspn(p, "\n"), p);
    }
    return line;
}

/* A fitting row's tokens/s and tokens per GPU-hour, as people read them
 * (128.1 k, 3.60 M: mesh_format_si), each ending where its header does. */
static void size_row_rates(const char *out, const char *row, const mesh_size_row_t *sr)
{
    char rate[16], hour[16];
    const char *head = strstr(out, "tokens/s"), *line = head;
    assert_non_null(head);
    while (line > out && line[-1] != '\n')
        line--;
    const char *cols[] = {"tokens/s", "tok/GPU-hour"};
    const char *vals[] = {mesh_format_si(sr->best.cost.tokens_per_sec, rate, sizeof(rate)),
                          mesh_format_si(sr->tokens_per_gpu_hour, hour, sizeof(hour))};
    for (int c = 0; c < 2; c++) {
        size_t end = (size_t)(strstr(line, cols[c]) - line) + strlen(cols[c]);
        size_t n = strlen(vals[c]);
        if (strncmp(row + end - n, vals[c], n) != 0 || row[end - n - 1] != ' ')
            fail_msg("%s: '%s' does not end under its header in '%.120s'", cols[c], vals[c], row);
    }
}

static void size__table_marks_the_library_choice(void **state)
{
    const char *goals[] = {"min", "fastest", "efficient"};
    for (int g = 0; g < 3; g++) {
        result_t *r = run("size", "--model", "llama3-70b", "--nodes", "2-8", SIZE_ALLOC, "--goal",
                          goals[g], NULL);
        assert_int_equal(r->status, 0);
        /* the library's choice, marked '*' on its row, and its reason */
        mesh_model_t m = test_preset("llama3-70b");
        mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
        mesh_error_t err;
        mesh_size_t *sz =
            mesh_size_create(&m, &a, 2, 8, NULL, NULL, (mesh_size_goal_t)g, MESH_SIZE_TABLE, &err);
        assert_non_null(sz);
        char l[MESH_LAYOUT_STR_MAX], choice[300];
        for (int i = 0; i < sz->n_rows; i++) {
            const char *row = size_row_of(r->out, sz->rows[i].nodes);
            assert_int_equal(row[0], i == sz->chosen ? '*' : ' ');
            if (sz->rows[i].fits)
                assert_non_null(
                    strstr(row, mesh_layout_format(&sz->rows[i].best.layout, l, sizeof(l))));
            else
                assert_non_null(strstr(row, sz->rows[i].why));
            if (sz->rows[i].fits == 1)
                size_row_rates(r->out, row, &sz->rows[i]);
        }
        snprintf(choice, sizeof(choice), "\nChoice: %s\n", sz->reason);
        assert_null(strstr(r->out, "e+"));
        assert_non_null(strstr(r->out, choice));
        mesh_size_destroy(sz);
    }
    /* JSON: every row, the choice and why */
    result_t *r = run("size", "--model", "llama3-70b", "--nodes", "2-4", SIZE_ALLOC, "--json",
                      "--set", "train.tokens=1e12", NULL);
    assert_int_equal(r->status, 0);
    assert_json(r->out);
    /* in order: the goal and range, the rows, then the choice */
    const char *at = r->out, *want[] = {"\"goal\":\"min\"",
                                        "\"nodes\":{\"lo\":2,\"hi\":4}",
                                        "{\"nodes\":2,\"fits\":false,\"no_layout\":false,"
                                        "\"reason\":\"layouts exist, but none fits",
                                        "{\"nodes\":3,\"fits\":true,\"layout\":\"tp=",
                                        "\"tokens_per_gpu_hour\":",
                                        "\"estimated_seconds\":",
                                        "\"chosen\":3,",
                                        "\"would_fit\":null,",
                                        "\"run\":{\"nodes\":3,\"estimated_seconds\":",
                                        "\"max_time_minutes\":null,\"jobs\":1,",
                                        NULL};
    for (const char *const *w = want; *w; w++)
        if (!(at = strstr(at, *w)))
            fail_msg("size's JSON lacks %s where expected: %s", *w, r->out);
    /* a budget adds the estimated run to the text too */
    r = run("size", "--model", "llama3-70b", "--nodes", "3", SIZE_ALLOC, "--set",
            "train.steps=1000", NULL);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "est. run"));
}

/* --partition-info - reads sinfo's lines from stdin, as from a file. */
static void size__partition_info_from_stdin(void **state)
{
    (void)state;
    char file[1024], from_file[sizeof(res.out)];
    snprintf(file, sizeof(file), "%s/../golden/inputs/partition-2d.txt", getenv("MESH_FIXTURES"));
    run("size", "--model", "llama3-8b", "--nodes", "1-2", "--gpus-per-node", "8", "--gpu",
        "H100-SXM", "--partition-info", file, "--set", "train.tokens=1e12", NULL);
    assert_int_equal(res.status, 0);
    assert_non_null(strstr(res.out, "chained"));
    snprintf(from_file, sizeof(from_file), "%s", res.out);
    run_stdin = file;
    run("size", "--model", "llama3-8b", "--nodes", "1-2", "--gpus-per-node", "8", "--gpu",
        "H100-SXM", "--partition-info", "-", "--set", "train.tokens=1e12", NULL);
    assert_int_equal(res.status, 0);
    assert_string_equal(res.out, from_file);
}
/* meshplan size's bad inputs, each refused in one line naming the option:
 * scontrol's text unreadable, too long, with a NUL byte or without a
 * partition; --model or --gpus-per-node left out. */
static void size__bad_inputs_named(void **state)
{
    (void)state;
    char file[] = "/tmp/meshplan-partinfo-XXXXXX";
    FILE *f = fdopen(mkstemp(file), "w");
    assert_non_null(f);
    for (int i = 0; i < (1 << 20) / 32 + 1; i++) /* 33 bytes each: past the 1 MiB read */
        fputs("PartitionName=gpu MaxTime=1-00:0\n", f);
    assert_int_equal(fclose(f), 0);
    assert_bad(run("size", "--model", "llama3-8b", "--nodes", "1-2", SIZE_ALLOC, "--partition-info",
                   file, NULL),
               "--partition-info /tmp/meshplan-partinfo-");
    assert_non_null(strstr(res.err, ": more than 1048576 bytes: give one partition's "
                                    "(scontrol show partition NAME)"));
    f = fopen(file, "w");
    assert_non_null(f);
    fputs("PartitionName=gpu\n", f);
    fputc('\0', f);
    fputs(" MaxTime=1-00:00:00\n", f);
    assert_int_equal(fclose(f), 0);
    assert_bad(run("size", "--model", "llama3-8b", "--nodes", "1-2", SIZE_ALLOC, "--partition-info",
                   file, NULL),
               ": a NUL byte: not scontrol show partition's output");
    f = fopen(file, "w");
    assert_non_null(f);
    fputs("hello world\n", f);
    assert_int_equal(fclose(f), 0);
    assert_bad(run("size", "--model", "llama3-8b", "--nodes", "1-2", SIZE_ALLOC, "--partition-info",
                   file, NULL),
               ": no PartitionName= record: give scontrol show partition's output");
    unlink(file);
    assert_bad(run("size", "--model", "llama3-8b", "--nodes", "1-2", SIZE_ALLOC, "--partition-info",
                   file, NULL),
               ": cannot be read (No such file or directory)");
    assert_bad(run("size", "--model", "llama3-8b", "--nodes", "1-2", SIZE_ALLOC, "--partition-info",
                   "/tmp", NULL),
               "--partition-info /tmp: cannot be read (Is a directory)");
    assert_bad(run("size", "--nodes", "1-2", SIZE_ALLOC, NULL),
               "--model is required (a preset name, a spec .yaml file or a config.json)");
    assert_bad(run("size", "--model", "llama3-8b", "--nodes", "1-2", "--gpu", "H100-SXM", NULL),
               "--gpus-per-node is required");
}

static void size__nothing_fits_exit_1(void **state)
{
    result_t *r = run("size", "--model", "llama3.1-405b", "--nodes", "1-4", SIZE_ALLOC, NULL);
    assert_int_equal(r->status, 1);
    assert_non_null(strstr(r->out, "Nothing fits: no layout fits on 1-4 nodes; "));
    assert_non_null(strstr(r->out, " nodes would\n"));
    r = run("size", "--model", "llama3.1-405b", "--nodes", "1-4", SIZE_ALLOC, "--json", NULL);
    assert_int_equal(r->status, 1);
    assert_json(r->out);
    assert_non_null(strstr(r->out, "\"chosen\":null"));
    assert_null(strstr(r->out, "\"would_fit\":null"));
}

static void size__bad_input_names_the_option(void **state)
{
    assert_bad(run("size", "--model", "llama3-8b", "--nodes", "5-2", SIZE_ALLOC, NULL),
               "--nodes 5-2: the range is empty");
    assert_bad(run("size", "--model", "llama3-8b", "--nodes", "0-2", SIZE_ALLOC, NULL), "--nodes");
    assert_bad(run("size", "--model", "llama3-8b", "--nodes", "2-", SIZE_ALLOC, NULL),
               "--nodes: '2-' is not a node count or a range LO-HI");
    assert_bad(run("size", "--model", "llama3-8b", "--nodes", "a-b", SIZE_ALLOC, NULL), "--nodes");
    assert_bad(run("size", "--model", "llama3-8b", SIZE_ALLOC, NULL), "--nodes is required");
    assert_bad(
        run("size", "--model", "llama3-8b", "--nodes", "1-2", SIZE_ALLOC, "--goal", "max", NULL),
        "--goal: unknown goal 'max' (min, fastest, efficient or by:WHEN)");
    assert_bad(run("plan", "--model", "llama3-8b", ALLOC, "--goal", "min", NULL),
               "--goal: unknown option for plan (an option of size)");
    assert_bad(
        run("size", "--model", "llama3-8b", "--nodes", "1-2", SIZE_ALLOC, "--svg", "x.svg", NULL),
        "--svg: unknown option for size");
    /* a partition: the range cut to its nodes, or refused beyond them */
    char path[] = "/tmp/meshplan-policy-XXXXXX", pol[64];
    int fd = mkstemp(path);
    static const char yaml[] = "gpu: H100-SXM\npartitions:\n  gpu: {nodes: 4}\n"
                               "  big: {gpu: H200, nodes: 2, max_time: 2-00:00:00}\n";
    assert_int_equal(write(fd, yaml, sizeof(yaml) - 1), (ssize_t)sizeof(yaml) - 1);
    close(fd);
    snprintf(pol, sizeof(pol), "%s", path);
    assert_bad(run("size", "--model", "llama3-8b", "--nodes", "6-8", "--gpus-per-node", "8",
                   "--partition", "gpu", "--policy", pol, NULL),
               "--nodes 6-8: the node range 6-8 is outside partition gpu, which has 4 nodes");
    assert_bad(run("size", "--model", "llama3-8b", "--nodes", "1-8", "--gpus-per-node", "8",
                   "--partition", "gpu", "--gpu", "H100-SXM", "--policy", pol, NULL),
               "--partition takes the GPU from the policy's partitions");
    result_t *r = run("size", "--model", "llama3-8b", "--nodes", "1-8", "--gpus-per-node", "8",
                      "--partition", "gpu", "--policy", pol, NULL);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "Sizing llama3-8b on 1-4 nodes of 8 H100-SXM, goal min\n"));
    assert_string_equal(size_row_of(r->out, 5), "");
    /* a list (sbatch -p big,gpu): sized as the controller sizes it, on its
     * first, not on the policy's default GPU over the whole range */
    r = run("size", "--model", "llama3-8b", "--nodes", "1-8", "--gpus-per-node", "8", "--partition",
            "big,gpu", "--policy", pol, "--set", "train.tokens=1e9", NULL);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "Sizing llama3-8b on 1-2 nodes of 8 H200, goal min\n"));
    assert_non_null(strstr(r->out, " margin; partition big's MaxTime is 2-00:00:00"));
    assert_bad(run("size", "--model", "llama3-8b", "--nodes", "3-8", "--gpus-per-node", "8",
                   "--partition", "big,gpu", "--policy", pol, NULL),
               "--nodes 3-8: the node range 3-8 is outside partition big, which has 2 nodes");
    unlink(path);
}

/* ---- restarts: --from and --keep ---- */

#define R768 "--set", "train.global_batch=768"

/* The first run's saved layout: `meshplan env --shell` on 16 nodes, as a
 * job script writes it next to its checkpoint, into path (mkstemp's). */
static void save_first_run(char *path)
{
    /* tp and pp pinned: what the restart keeps, whatever the cost model picks */
    result_t *r = run("env", "--model", "llama3-70b", R768, "--nodes", "16", "--gpus-per-node", "8",
                      "--gpu", "H100-SXM", "--mesh", "tp=4,pp=4", "--shell", NULL);
    assert_int_equal(r->status, 0);
    int fd = mkstemp(path);
    assert_int_equal(write(fd, r->out, strlen(r->out)), (ssize_t)strlen(r->out));
    close(fd);
}

/* The restart on 12 nodes, as the library makes it. */
static mesh_plan_t *restart_plan(const char *path, mesh_restart_t *rs)
{
    mesh_model_t m = test_spec("preset: llama3-70b\ntrain: {global_batch: 768}\n");
    mesh_alloc_t a = test_alloc("H100-SXM", 12, 8);
    mesh_layout_t pins = test_mesh("auto");
    mesh_error_t err;
    if (mesh_restart_load(path, rs, &err) < 0 || mesh_restart_pins(rs, &m, &pins, &err) < 0)
        fail_msg("%s", err.msg);
    mesh_plan_t *p = mesh_plan_create(&m, &a, &pins, NULL, &err);
    assert_non_null(p);
    return p;
}

static void restart__plan_env_and_size(void **state)
{
    char path[] = "/tmp/meshplan-restart-XXXXXX";
    save_first_run(path);
    mesh_restart_t rs;
    mesh_plan_t *p = restart_plan(path, &rs);
    /* plan: the report, then the library's restart lines */
    result_t *r = run("plan", "--model", "llama3-70b", R768, "--nodes", "12", "--gpus-per-node",
                      "8", "--gpu", "H100-SXM", "--no-pictures", "--from", path, NULL);
    assert_int_equal(r->status, 0);
    char *report = mesh_report_text(p), *text = mesh_restart_text(&rs, p), *json;
    static char want[1 << 16];
    snprintf(want, sizeof(want), "%s\n%s", report, text);
    assert_string_equal(r->out, want);
    assert_non_null(
        strstr(text, "  kept      tp=4,pp=4,vpp=1,zero=1 (the checkpoint's sharding)\n"));
    free(report);
    free(text);
    /* --json: the plan's object with "restart" added last */
    r = run("plan", "--model", "llama3-70b", R768, "--nodes", "12", "--gpus-per-node", "8", "--gpu",
            "H100-SXM", "--json", "--from", path, NULL);
    assert_int_equal(r->status, 0);
    assert_json(r->out);
    report = mesh_report_json(p);
    json = mesh_restart_json(&rs, p);
    report[strlen(report) - 2] = '\0'; /* its "}\n" */
    snprintf(want, sizeof(want), "%s,\"restart\":%s}\n", report, json);
    assert_string_equal(r->out, want);
    free(report);
    free(json);
    /* check judges the kept layout without --mesh */
    r = run("check", "--model", "llama3-70b", R768, "--nodes", "12", "--gpus-per-node", "8",
            "--gpu", "H100-SXM", "--no-pictures", "--from", path, "--keep", "tp,pp", NULL);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "  kept      tp=4,pp=4 (the checkpoint's sharding)\n"));
    /* env: MESH_RESHARD for a restart only */
    char line[64], changed[MESH_RESHARD_STR_MAX];
    snprintf(line, sizeof(line), "\nMESH_RESHARD=%s\n",
             mesh_restart_reshard(&rs, &mesh_plan_best(p)->layout, changed, sizeof(changed)));
    r = run("env", "--model", "llama3-70b", R768, "--nodes", "12", "--gpus-per-node", "8", "--gpu",
            "H100-SXM", "--from", path, NULL);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, line));
    assert_non_null(strstr(r->out, "\nMESH_RESHARD=dp\n"));
    r = run("env", "--model", "llama3-70b", R768, "--nodes", "12", "--gpus-per-node", "8", "--gpu",
            "H100-SXM", NULL);
    assert_null(strstr(r->out, "MESH_RESHARD"));
    /* size: every count planned with tp and pp kept */
    r = run("size", "--model", "llama3-70b", R768, "--nodes", "8-16", SIZE_ALLOC, "--from", path,
            NULL);
    assert_int_equal(r->status, 0);
    snprintf(want, sizeof(want),
             "goal min\nkeeping tp=4,pp=4,vpp=1,zero=1 from %s, and the global batch "
             "of 768\n\n",
             path);
    assert_non_null(strstr(r->out, want));
    for (int n = 8; n <= 16; n++) {
        const char *row = size_row_of(r->out, n);
        assert_true(strstr(row, "no layout") || strstr(row, "none fits") ||
                    strstr(row, "tp=4,pp=4,"));
    }
    r = run("size", "--model", "llama3-70b", R768, "--nodes", "8-16", SIZE_ALLOC, "--from", path,
            "--json", NULL);
    assert_json(r->out);
    assert_non_null(
        strstr(r->out, "\"gpu\":\"H100-SXM\",\"kept\":\"tp=4,pp=4,vpp=1,zero=1\",\"rows\":["));
    mesh_plan_destroy(p);
    unlink(path);
}

static void restart__bad_input_one_line(void **state)
{
    char path[] = "/tmp/meshplan-restart-XXXXXX";
    save_first_run(path);
    assert_bad(run("plan", "--model", "llama3-70b", ALLOC, "--keep", "tp", NULL),
               "--keep needs --from FILE");
    assert_bad(
        run("plan", "--model", "llama3-70b", R768, ALLOC, "--from", path, "--keep", "mb", NULL),
        "--keep mb: 'mb' does not shard a checkpoint");
    assert_bad(
        run("plan", "--model", "llama3-70b", R768, ALLOC, "--from", path, "--mesh", "tp=8", NULL),
        "--from /tmp/meshplan-restart-");
    /* the --keep that frees a kept key a pin conflicts with */
    assert_bad(
        run("plan", "--model", "llama3-70b", R768, ALLOC, "--from", path, "--mesh", "tp=8", NULL),
        " (--keep's default; --keep pp,vpp,zero frees tp): mesh tp=8 conflicts with the kept tp=4");
    assert_bad(run("plan", "--model", "llama3-70b", R768, ALLOC, "--from", path, "--keep", "pp",
                   "--mesh", "pp=auto", NULL),
               " (--keep; --keep none frees pp): mesh pp=auto conflicts with the kept pp=4");
    /* the preset's 512, not the saved 768 */
    assert_bad(run("plan", "--model", "llama3-70b", ALLOC, "--from", path, NULL),
               "(set train.global_batch: 768)");
    /* kept sizes the allocation's GPUs cannot hold: what was kept, and why */
    assert_bad(run("plan", "--model", "llama3-70b", R768, "--nodes", "7", "--gpus-per-node", "8",
                   "--gpu", "H100-SXM", "--from", path, NULL),
               "meshplan: keeping tp=4,pp=4,vpp=1,zero=1 from /tmp/meshplan-restart-");
    /* LoRA trains data-parallel: the kept tp and pp are what to drop, at
     * once, with the --keep that does */
    assert_bad(run("plan", "--model", "llama3-70b", R768, "--set", "train.finetune=lora", ALLOC,
                   "--from", path, NULL),
               " (--keep's default; --keep vpp,zero frees tp,pp): mesh tp=4,pp=4: LoRA trains "
               "under DeepSpeed");
    assert_bad(run("plan", "--model", "llama3-70b", R768, "--set", "train.finetune=lora", ALLOC,
                   "--from", path, "--keep", "tp", NULL),
               " (--keep; --keep none frees tp): mesh tp=4: LoRA trains under DeepSpeed");
    /* a kept key pinned to its kept value: the pin is in the way too */
    assert_bad(run("plan", "--model", "llama3-70b", R768, "--set", "train.finetune=lora", ALLOC,
                   "--from", path, "--mesh", "tp=4", NULL),
               " (--keep's default; --keep vpp,zero (and a --mesh without tp) frees tp,pp): mesh "
               "tp=4,pp=4: LoRA");
    /* a sizing's error names its count first */
    assert_bad(
        run("size", "--model", "llama3-70b", R768, "--set", "train.finetune=lora", "--nodes", "8-9",
            "--gpus-per-node", "8", "--gpu", "H100-SXM", "--from", path, NULL),
        " (--keep's default; --keep vpp,zero frees tp,pp): on 8 nodes: mesh tp=4,pp=4: LoRA");
    /* two conflicting pins, one --keep */
    assert_bad(run("plan", "--model", "llama3-70b", R768, ALLOC, "--from", path, "--mesh",
                   "tp=8,pp=2", NULL),
               " (--keep's default; --keep vpp,zero frees tp,pp): mesh tp=8,pp=2 conflicts with "
               "the kept tp=4,pp=4");
    /* a mixture of experts' kept ep and etp told apart from tp */
    char moe[] = "/tmp/meshplan-restart-moe-XXXXXX";
    int fd = mkstemp(moe);
    assert_true(fd >= 0);
    const char *saved =
        "MESH_PLAN=tp=2,pp=2,dp=4,cp=1,ep=8,etp=1,zero=2,vpp=1,mb=1,recompute=none,sp=on\n";
    assert_int_equal(write(fd, saved, strlen(saved)), (ssize_t)strlen(saved));
    close(fd);
    assert_bad(run("plan", "--model", "mixtral-8x7b", "--set", "train.finetune=lora", "--nodes",
                   "2", "--gpus-per-node", "8", "--gpu", "H100-SXM", "--from", moe, NULL),
               " (--keep's default; --keep vpp,etp,zero frees tp,pp,ep): mesh tp=2,pp=2,ep=8: "
               "LoRA");
    unlink(moe);
    /* a pin that is not kept: nothing for --keep to free */
    assert_bad(run("plan", "--model", "llama3-70b", R768, "--set", "train.finetune=lora", ALLOC,
                   "--from", path, "--keep", "zero", "--mesh", "cp=2", NULL),
               " (--keep): mesh cp=2: LoRA trains under DeepSpeed");
    /* and that --keep plans (planned: 70B's LoRA data-parallel does not
     * fit these GPUs, status 1, not a bad input's 2) */
    assert_int_equal(run("plan", "--model", "llama3-70b", R768, "--set", "train.finetune=lora",
                         ALLOC, "--from", path, "--keep", "vpp,zero", NULL)
                         ->status,
                     1);
    assert_bad(run("env", "--model", "llama3-70b", ALLOC, "--from", "/nonexistent/layout", NULL),
               "--from: cannot open saved layout '/nonexistent/layout'");
    assert_bad(run("topo", "--from", path, NULL), "--from: unknown option for topo");
    unlink(path);
}

/* ---- colour: a terminal that can show it, and no other ---- */

/* Run meshplan on a pseudo-terminal with TERM and NO_COLOR as given (NULL:
 * unset); whether its output has an escape sequence.  The parent holds the
 * slave open too: Linux answers EIO on the master while no slave is open,
 * which happens both before the child opens it and after it exits, and
 * would lose the output either way. */
static int coloured(const char *term, const char *no_color)
{
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    assert_true(m >= 0);
    assert_int_equal(grantpt(m), 0);
    assert_int_equal(unlockpt(m), 0);
    const char *slave = ptsname(m);
    int keep = open(slave, O_RDWR | O_NOCTTY);
    assert_true(keep >= 0);
    pid_t pid = fork();
    if (pid == 0) {
        setsid();
        int s = open(slave, O_RDWR);
        dup2(s, 1);
        dup2(s, 2);
        close(keep);
        term ? setenv("TERM", term, 1) : unsetenv("TERM");
        no_color ? setenv("NO_COLOR", no_color, 1) : unsetenv("NO_COLOR");
        execl(getenv("MESHPLAN"), "meshplan", "ranks", "--model", "llama3-8b", "--nodes", "1",
              "--gpus-per-node", "8", "--gpu", "H100-SXM", (char *)NULL);
        _exit(127);
    }
    static char out[1 << 18];
    size_t n = 0;
    int st, exited = 0;
    /* Read while the child runs (it blocks once the pty buffer is full),
     * then drain what it left: the kernel moves a pty's data to the master
     * asynchronously, so done means nothing more within 200 ms. */
    for (;;) {
        struct pollfd p = {.fd = m, .events = POLLIN};
        int ready = poll(&p, 1, exited ? 200 : 100);
        if (ready > 0 && n < sizeof(out) - 1) {
            ssize_t r = read(m, out + n, sizeof(out) - 1 - n);
            if (r > 0) {
                n += (size_t)r;
                continue;
            }
        }
        if (exited)
            break;
        exited = waitpid(pid, &st, WNOHANG) == pid;
    }
    out[n] = '\0';
    close(keep);
    close(m);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_non_null(strstr(out, "Rank map"));
    return strchr(out, '\033') != NULL;
}

static void colour__only_where_it_shows(void **state)
{
    assert_true(coloured("xterm-256color", NULL));
    assert_false(coloured("dumb", NULL));
    assert_false(coloured(NULL, NULL));
    assert_false(coloured("", NULL));
    assert_false(coloured("xterm-256color", "1"));
    assert_true(coloured("xterm-256color", "")); /* no-color.org: set and not empty */
}

/* ranks of a model that does not fit: the closest layout's map, and why */
static void ranks__nofit_explained(void **state)
{
    result_t *r = run("ranks", "--model", "llama3.1-405b", "--nodes", "1", "--gpus-per-node", "8",
                      "--gpu", "H100-SXM", "--no-pictures", NULL);
    assert_int_equal(r->status, 1);
    assert_non_null(strstr(r->out, "rank map of "));
    const char *head = "meshplan: llama3.1-405b does not fit on 1 x 8 H100-SXM GPUs: ";
    assert_int_equal(strncmp(r->err, head, strlen(head)), 0);
    assert_non_null(strstr(r->err, "\nmeshplan: what would fit: "));
    /* into one pipe (2>&1 | less): the map first, then why it does not fit */
    run_merged = 1;
    r = run("ranks", "--model", "llama3.1-405b", "--nodes", "1", "--gpus-per-node", "8", "--gpu",
            "H100-SXM", "--no-pictures", NULL);
    assert_int_equal(strncmp(r->out, "rank map of ", 12), 0);
    assert_non_null(strstr(r->out, "\nmeshplan: llama3.1-405b does not fit"));
    r = run("ranks", "--model", "llama3.1-405b", "--nodes", "1", "--gpus-per-node", "8", "--gpu",
            "H100-SXM", "--json", NULL);
    assert_int_equal(r->status, 1);
    assert_json(r->out);
    assert_non_null(strstr(r->err, "does not fit"));
    r = run("ranks", "--model", "llama3-70b", ALLOC, "--no-pictures", NULL);
    assert_int_equal(r->status, 0);
    assert_string_equal(r->err, "");
}

int main(void)
{
    /* the tests say which policy they want; this machine's system policy
     * (/etc/slurm/meshplan.yaml) must not change what they see */
    setenv("MESHPLAN_POLICY", "none", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(help__every_command),
        cmocka_unit_test(plan__text_and_json),
        cmocka_unit_test(plan__megatron_line_pastes_into_a_shell),
        cmocka_unit_test(check__exit_codes),
        cmocka_unit_test(bad_input__exit_2_one_line),
        cmocka_unit_test(nothing_fits__exit_1_with_advice),
        cmocka_unit_test(env__equals_library),
        cmocka_unit_test(ranks_gpus_presets),
        cmocka_unit_test(presets__from_the_source_tree_without_models_dir),
        cmocka_unit_test(gpus__as_the_policy_makes_them),
        cmocka_unit_test(topo__shows_and_plans),
        cmocka_unit_test(topology__planned_as_the_node_plans),
        cmocka_unit_test(options__each_command_its_own),
        cmocka_unit_test(options__help_lists_them_and_the_manual_too),
        cmocka_unit_test(help__command_and_unknown),
        cmocka_unit_test(policy__check),
        cmocka_unit_test(version__cli_and_library),
        cmocka_unit_test(env__shell_lines_survive_eval),
        cmocka_unit_test(env__json_object),
        cmocka_unit_test(calibrate__output_file_read_back),
        cmocka_unit_test(calibrate__logs_read_whole_from_anywhere),
        cmocka_unit_test(size__margin_as_given),
        cmocka_unit_test(output__write_errors_fail),
        cmocka_unit_test(output__write_error_named_without_the_checked_stream),
        cmocka_unit_test(output__short_writes_continued),
        cmocka_unit_test(output__write_of_nothing_is_an_error),
        cmocka_unit_test(output__svg_stdout_and_early_failure),
        cmocka_unit_test(policy__system_by_default),
        cmocka_unit_test(set__spec_and_policy_keys),
        cmocka_unit_test(set__at_most_64_of_both_kinds),
        cmocka_unit_test(partition__errors),
        cmocka_unit_test(size__table_marks_the_library_choice),
        cmocka_unit_test(size__nothing_fits_exit_1),
        cmocka_unit_test(size__partition_info_from_stdin),
        cmocka_unit_test(size__bad_inputs_named),
        cmocka_unit_test(size__bad_input_names_the_option),
        cmocka_unit_test(size__deadline_on_the_local_clock),
        cmocka_unit_test(restart__plan_env_and_size),
        cmocka_unit_test(restart__bad_input_one_line),
        cmocka_unit_test(colour__only_where_it_shows),
        cmocka_unit_test(ranks__nofit_explained),
    };
    return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
