/*
 * The meshplan CLI, run as a user runs it: exit codes, one-line errors,
 * valid JSON, and `meshplan env` equal to what the library renders.
 */
#include <ctype.h>
#include <sys/wait.h>
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

/* Run meshplan with a NULL-terminated argument list. */
static result_t *run(const char *arg0, ...)
{
    const char *argv[64];
    int argc = 0;
    argv[argc++] = getenv("MESHPLAN");
    va_list ap;
    va_start(ap, arg0);
    for (const char *a = arg0; a && argc < 63; a = va_arg(ap, const char *))
        argv[argc++] = a;
    va_end(ap);
    argv[argc] = NULL;
    char errpath[] = "/tmp/meshplan-cli-XXXXXX";
    int errfd = mkstemp(errpath);
    int out[2];
    assert_int_equal(pipe(out), 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out[1], 1);
        dup2(errfd, 2);
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
    return &res;
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
    const char *cmds[] = {"plan", "check", "ranks", "env", "topo", "gpus", "presets"};
    for (int i = 0; i < 7; i++) {
        result_t *r = run(cmds[i], "--help", NULL);
        assert_int_equal(r->status, 0);
        assert_non_null(strstr(r->out, cmds[i]));
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
    /* README: MASTER_PORT = lo + (job*131 + step) mod (hi - lo + 1) in the
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
         * layers, GQA with 8 groups, SwiGLU, RMSNorm, no biases, rotary
         * positions, 128,256 tokens padded to 128 x tp 4, untied, no
         * dropout), the sizes, sequence parallelism, ZeRO-1 as the
         * distributed optimizer, selective recomputation, bf16 */
        "MESH_MEGATRON_ARGS=--num-layers 80 --hidden-size 8192 --ffn-hidden-size 28672 "
        "--num-attention-heads 64 --group-query-attention --num-query-groups 8 --swiglu "
        "--normalization RMSNorm --disable-bias-linear --position-embedding-type rope "
        "--max-position-embeddings 8192 --padded-vocab-size 128512 "
        "--untie-embeddings-and-output-weights --attention-dropout 0 --hidden-dropout 0 "
        "--tensor-model-parallel-size 4 --pipeline-model-parallel-size 4 "
        "--context-parallel-size 2 --micro-batch-size 1 --global-batch-size 512 --seq-length 8192 "
        "--sequence-parallel --use-distributed-optimizer --recompute-granularity selective --bf16",
        /* DeepSpeed: train = micro * accumulation * dp = 1 * 256 * 2 */
        "MESH_DEEPSPEED_CONFIG={\"train_batch_size\":512,\"train_micro_batch_size_per_gpu\":1,"
        "\"gradient_accumulation_steps\":256,\"zero_optimization\":{\"stage\":1,"
        "\"reduce_bucket_size\":500000000},\"bf16\":{\"enabled\":true}}",
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
    r = run("gpus", NULL); /* a table: every row as wide as the header */
    assert_int_equal(r->status, 0);
    size_t width = strcspn(r->out, "\n");
    for (const char *p = r->out; *p; p += strcspn(p, "\n") + 1)
        assert_int_equal(strcspn(p, "\n"), width);
    r = run("presets", NULL);
    assert_non_null(strstr(r->out, "llama3.1-405b"));
    r = run("presets", "--json", NULL);
    assert_json(r->out);
}

/* `gpus --policy` lists the GPUs as the policy makes them: the table's with
 * the policy's figures marked, the GPUs it defines, and the product names
 * --gpu takes, which plan then takes. */
static void gpus__as_the_policy_makes_them(void **state)
{
    char path[] = "/tmp/meshplan-cli-policy-XXXXXX";
    const char *yaml = "gpus:\n  NVIDIA H100 80GB HBM3: {memory: 70GiB, net_bw: 25GB}\n"
                       "  X1: {pci: \"10de:9998\", memory: 64GiB, peak_tflops: 500, island: 4}\n";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, yaml, strlen(yaml)), (ssize_t)strlen(yaml));
    close(fd);
    result_t *r = run("gpus", "--policy", path, NULL);
    assert_int_equal(r->status, 0);
    size_t width = strcspn(r->out, "\n");
    for (const char *p = r->out; *p; p += strcspn(p, "\n") + 1)
        assert_int_equal(strcspn(p, "\n"), width);
    assert_non_null(strstr(r->out, "\nH100-SXM         70.0 GiB*     989 bf16        3350      "
                                   "     450        25.0*       8    80% \n"));
    assert_non_null(strstr(r->out, "\nX1               64.0 GiB*     500 bf16*       3350      "
                                   "     450        50.0        4*   80% \n"));
    assert_non_null(strstr(r->out, "\n  the policy defines X1 (its other figures: H100-SXM's) "));
    assert_non_null(strstr(r->out, "\n    NVIDIA H100 80GB HBM3          H100-SXM "));
    r = run("gpus", "--policy", path, "--json", NULL);
    assert_int_equal(r->status, 0);
    assert_json(r->out);
    assert_non_null(strstr(r->out, "\"net_bw\":2.5e+10,\"island\":8,\"gemm_eff\":0.8,\"source\":"
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(help__every_command),
        cmocka_unit_test(plan__text_and_json),
        cmocka_unit_test(check__exit_codes),
        cmocka_unit_test(bad_input__exit_2_one_line),
        cmocka_unit_test(nothing_fits__exit_1_with_advice),
        cmocka_unit_test(env__equals_library),
        cmocka_unit_test(ranks_gpus_presets),
        cmocka_unit_test(gpus__as_the_policy_makes_them),
        cmocka_unit_test(topo__shows_and_plans),
        cmocka_unit_test(topology__planned_as_the_node_plans),
    };
    return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
