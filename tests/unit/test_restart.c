/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Restarts that keep their checkpoints (lib/restart.c): the saved layout
 * read from each form a user saves, hostile files, the keep set and its
 * errors, the pins, MESH_RESHARD, the one-line form, and the explanation
 * of a real restart (Llama 3 70B from 16 to 12 nodes of 8 H100).
 */
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define TP_PP_VPP                                                                                  \
    (MESH_DIM_BIT(MESH_DIM_TP) | MESH_DIM_BIT(MESH_DIM_PP) | MESH_DIM_BIT(MESH_DIM_VPP))
/* what a dense layout's restart keeps by default: its sharding and its
 * ZeRO stage, the checkpoint's format (restart.h) */
#define KEPT_DENSE (TP_PP_VPP | MESH_DIM_BIT(MESH_DIM_ZERO))

/* Llama 3 70B with a global batch that 12 nodes' dp (3, with tp 4, pp 4,
 * cp 2) divides: 512, the preset's, does not, and the kept layout then has
 * no valid layout on 12 nodes at all. */
#define LLAMA_768 "preset: llama3-70b\ntrain: {global_batch: 768}\n"

static mesh_restart_t read_ok(const char *text)
{
    mesh_restart_t r;
    mesh_error_t err;
    if (mesh_restart_read(text, strlen(text), "saved", &r, &err) < 0)
        fail_msg("%s", err.msg);
    return r;
}

/* The error reading text as file "saved.json": fails the test if it reads. */
static const char *read_error(const char *text, size_t len)
{
    static mesh_error_t err;
    mesh_restart_t r;
    if (mesh_restart_read(text, len, "saved.json", &r, &err) == 0)
        fail_msg("'%.80s' was read", text);
    if (strncmp(err.msg, "saved.json", 10) != 0)
        fail_msg("the error does not name the file: %s", err.msg);
    return err.msg;
}

static void assert_error_has(const char *msg, const char *needle)
{
    if (!strstr(msg, needle))
        fail_msg("'%s' lacks '%s'", msg, needle);
}

/* Two restarts are the same (field by field: a struct's padding is not). */
static void assert_same(const mesh_restart_t *a, const mesh_restart_t *b)
{
    assert_memory_equal(&a->from, &b->from, sizeof(a->from));
    assert_int_equal(a->global_batch, b->global_batch);
    assert_int_equal(a->keep, b->keep);
    assert_int_equal(a->layers, b->layers);
    assert_int_equal(a->hidden, b->hidden);
    assert_int_equal(a->heads, b->heads);
}

/* json as jq pretty-prints it: a newline and spaces after each '{', '[',
 * ',' and ':' outside strings.  malloc'd. */
static char *pretty(const char *json)
{
    char *out = calloc(1, strlen(json) * 4 + 1), *d = out;
    int in_string = 0;
    for (const char *s = json; *s; s++) {
        *d++ = *s;
        if (in_string && *s == '\\')
            *d++ = *++s;
        else if (*s == '"')
            in_string = !in_string;
        else if (!in_string && strchr("{[,:", *s))
            d += sprintf(d, "\n   ");
    }
    return out;
}

static const char *fmt(const mesh_layout_t *l)
{
    static char buf[4][MESH_LAYOUT_STR_MAX];
    static int i;
    i = (i + 1) % 4;
    return mesh_layout_format(l, buf[i], sizeof(buf[i]));
}

static mesh_plan_t *plan_on(const mesh_model_t *m, int nodes, const mesh_restart_t *r)
{
    mesh_alloc_t a = test_alloc("H100-SXM", nodes, 8);
    mesh_layout_t pins;
    mesh_error_t err;
    mesh_layout_unpin(&pins);
    if (r && mesh_restart_pins(r, m, &pins, &err) < 0)
        fail_msg("%s", err.msg);
    mesh_plan_t *p = mesh_plan_create(m, &a, &pins, NULL, &err);
    if (!p)
        fail_msg("%s", err.msg);
    return p;
}

/* The restart of the brief: Llama 3 70B planned on 16 nodes, its plan
 * --json read back, and planned again on 12 nodes keeping what it keeps. */
typedef struct restart_case {
    mesh_model_t m;
    mesh_plan_t *before, *after;
    mesh_restart_t r;
} restart_case_t;

static void restart_16_to_12(restart_case_t *c)
{
    c->m = test_spec(LLAMA_768);
    c->before = plan_on(&c->m, 16, NULL);
    char *json = mesh_report_json(c->before);
    c->r = read_ok(json);
    free(json);
    c->after = plan_on(&c->m, 12, &c->r);
}

static void restart_case_free(restart_case_t *c)
{
    mesh_plan_destroy(c->before);
    mesh_plan_destroy(c->after);
}

/* Every variable of task 0 of plan p, as `meshplan env` (shell: 0) or
 * `meshplan env --shell` (1) prints them, malloc'd. */
static char *env_text(const mesh_plan_t *p, int shell)
{
    mesh_task_t t = {.master_addr = "n1", .master_port = 20000, .numa_node = -1};
    mesh_error_t err;
    mesh_env_t *e = mesh_env_create(p, &t, &err);
    size_t cap = 1 << 16, n = 0;
    char *out = calloc(1, cap);
    assert_non_null(e);
    for (int i = 0; i < mesh_env_count(e); i++)
        n += (size_t)snprintf(out + n, cap - n, shell ? "export %s='%s'\n" : "%s=%s\n",
                              mesh_env_name(e, i), mesh_env_value(e, i));
    mesh_env_destroy(e);
    return out;
}

/* ---- reading ---- */

static void read__plan_json(void **state)
{
    (void)state;
    mesh_model_t m = test_spec(LLAMA_768);
    mesh_plan_t *p = plan_on(&m, 16, NULL);
    char *json = mesh_report_json(p);
    mesh_restart_t r = read_ok(json);
    assert_string_equal(fmt(&r.from), fmt(&mesh_plan_best(p)->layout));
    assert_int_equal(r.global_batch, 768);
    /* a dense layout: tp, pp, vpp and zero kept, no ep or etp */
    assert_int_equal(r.keep, KEPT_DENSE);
    assert_int_equal(r.from.ep, 0);
    /* as jq pretty-prints it too, and after blank lines */
    char *spaced = pretty(json);
    mesh_restart_t again = read_ok(spaced);
    assert_same(&again, &r);
    free(spaced);
    size_t n = strlen(json);
    char *after = malloc(n + 5);
    memcpy(after, "\r\n\t\n", 4);
    memcpy(after + 4, json, n + 1);
    again = read_ok(after);
    assert_same(&again, &r);
    free(after);
    free(json);
    mesh_plan_destroy(p);
}

/* MESH_PLAN's value alone, env's lines, env --shell's and env --json's */
static void read__env_forms(void **state)
{
    (void)state;
    mesh_model_t m = test_spec(LLAMA_768);
    mesh_plan_t *p = plan_on(&m, 16, NULL);
    const char *want = fmt(&mesh_plan_best(p)->layout);
    char line[512];
    snprintf(line, sizeof(line), "%s\n", want);
    mesh_restart_t r = read_ok(line);
    assert_string_equal(fmt(&r.from), want);
    assert_int_equal(r.global_batch, 0); /* MESH_PLAN alone does not say */
    for (int shell = 0; shell < 2; shell++) {
        char *text = env_text(p, shell);
        r = read_ok(text);
        assert_string_equal(fmt(&r.from), want);
        assert_int_equal(r.global_batch, 768);
        free(text);
    }
    /* a line a user wrote: a comment, blanks, double quotes, CRLF */
    snprintf(line, sizeof(line), "# saved at step 1000\r\n\n  MESH_PLAN=\"%s\"  \r\n", want);
    r = read_ok(line);
    assert_string_equal(fmt(&r.from), want);
    snprintf(line, sizeof(line), "{\"MESH_PLAN\":\"%s\",\"MESH_GLOBAL_BATCH_SIZE\":\"768\"}", want);
    r = read_ok(line);
    assert_string_equal(fmt(&r.from), want);
    assert_int_equal(r.global_batch, 768);
    /* a global batch of one sequence is one (the least there is) */
    snprintf(line, sizeof(line), "{\"MESH_PLAN\":\"%s\",\"MESH_GLOBAL_BATCH_SIZE\":\"1\"}", want);
    r = read_ok(line);
    assert_int_equal(r.global_batch, 1);
    mesh_plan_destroy(p);
}

/* A job that resubmits itself: the restart from its tasks' MESH_PLAN and
 * MESH_GLOBAL_BATCH_SIZE, as the plugin finds them in sbatch's environment. */
static void from_env__plan_and_batch(void **state)
{
    (void)state;
    mesh_model_t m = test_spec(LLAMA_768);
    mesh_plan_t *p = plan_on(&m, 16, NULL);
    const char *want = fmt(&mesh_plan_best(p)->layout);
    mesh_restart_t r;
    mesh_error_t err;
    assert_int_equal(mesh_restart_from_env(want, "768", &r, &err), 0);
    assert_string_equal(fmt(&r.from), want);
    assert_int_equal(r.global_batch, 768);
    assert_int_equal(r.keep, MESH_RESTART_KEEP_DEFAULT &
                                 ~(MESH_DIM_BIT(MESH_DIM_EP) | MESH_DIM_BIT(MESH_DIM_ETP)));
    assert_int_equal(mesh_restart_from_env(want, NULL, &r, &err), 0);
    assert_int_equal(r.global_batch, 0); /* MESH_PLAN alone does not say */
    assert_int_equal(mesh_restart_from_env(NULL, "768", &r, &err), -1);
    assert_error_has(err.msg, "no MESH_PLAN");
    assert_int_equal(mesh_restart_from_env(want, "x12", &r, &err), -1);
    assert_error_has(err.msg, "MESH_GLOBAL_BATCH_SIZE");
    assert_int_equal(mesh_restart_from_env("tp=2\nMESH_PLAN=tp=4", NULL, &r, &err), -1);
    mesh_plan_destroy(p);
}

/* A MoE layout keeps its experts' dimensions too, by default. */
static void read__moe_keeps_ep_and_etp(void **state)
{
    (void)state;
    mesh_restart_t r = read_ok("tp=2,pp=1,dp=4,cp=1,ep=8,etp=1,zero=1,vpp=1,mb=1,recompute=none,"
                               "sp=on\n");
    assert_int_equal(r.keep, MESH_RESTART_KEEP_DEFAULT);
    assert_int_equal(r.from.ep, 8);
    assert_int_equal(r.from.etp, 1);
    /* the levers left out are off */
    assert_int_equal(r.from.offload, 0);
    assert_int_equal(r.from.moments, MESH_PREC_FP32);
    /* every expert on each rank (ep 1) is still a MoE layout: ep kept */
    mesh_error_t err;
    r = read_ok("tp=2,pp=1,dp=4,cp=1,ep=1,etp=1,zero=1,vpp=1,mb=1,recompute=none,sp=on\n");
    assert_int_equal(mesh_restart_keep(&r, "tp,ep,etp", &err), 0);
    assert_true(r.keep & MESH_DIM_BIT(MESH_DIM_EP));
}

/* A saved layout says recompute=none, selective (its modules or not) or full
 * (all layers, or full:N): only full:N writes layers per stage, only
 * selective:M modules.  Each is read back as it says, a layout valid on the
 * model and GPUs it ran on, the same as --mesh reads it with the levers it
 * leaves out off (and ep, etp 0: a dense model's). */
static void read__recompute_as_saved(void **state)
{
    (void)state;
    static const char *const recompute[] = {"none", "selective", "selective:mlp", "full", "full:2"};
    mesh_model_t m = test_preset("llama3-8b");
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    for (size_t i = 0; i < sizeof(recompute) / sizeof(recompute[0]); i++) {
        char saved[MESH_LAYOUT_STR_MAX];
        mesh_error_t err;
        snprintf(saved, sizeof(saved), "tp=2,pp=2,dp=2,cp=1,zero=1,vpp=1,mb=1,recompute=%s,sp=on",
                 recompute[i]);
        mesh_restart_t r = read_ok(saved);
        if (mesh_layout_check(&m, &a, &r.from, &err) < 0)
            fail_msg("%s read back as an invalid layout: %s", saved, err.msg);
        mesh_layout_t as_said = test_layout(saved);
        as_said.ep = as_said.etp = 0; /* a dense model's, as a restart completes it */
        assert_memory_equal(&r.from, &as_said, sizeof(as_said));
        assert_string_equal(fmt(&r.from), saved);
    }
}

static void read__hostile_files(void **state)
{
    (void)state;
    static char big[MESH_RESTART_FILE_MAX + 2];
    const char *layout = "tp=4,pp=4,dp=4,cp=2,zero=1,vpp=1,mb=1,recompute=none,sp=on";
    char text[1024];
    const char bin[] = "\x7f"
                       "ELF\x02\x01\x01\x00\x00";
    assert_error_has(read_error(bin, sizeof(bin) - 1), "binary data");
    assert_error_has(read_error("\xff\xfe\x01\x02 garbage", 12), "not text (byte 0xff)");
    /* a terminal's escape before a layout: its first byte is looked at too */
    const char *esc = "\033tp=4,pp=4,dp=4,cp=2,zero=1,vpp=1,mb=1,recompute=none,sp=on";
    assert_error_has(read_error(esc, strlen(esc)), "saved.json:1: not text (byte 0x1b)");
    memset(big, ' ', sizeof(big) - 1);
    assert_error_has(read_error(big, sizeof(big) - 1), "larger than");
    assert_error_has(read_error("", 0), "empty");
    assert_error_has(read_error(" \n\t\n", 4), "saved.json: empty: expected meshplan plan --json");
    /* a byte-order mark alone, or before blanks, is as empty */
    assert_error_has(read_error("\xEF\xBB\xBF", 3), "saved.json: empty: ");
    assert_error_has(read_error("\xEF\xBB\xBF\n", 4), "saved.json: empty: ");
    assert_error_has(read_error("# only a comment\n", 17), "no layout");
    /* the layout itself: tp=0, auto, incomplete, too many GPUs */
    const char *bad[][2] = {
        {"tp=0,pp=4,dp=4,cp=2,zero=1,vpp=1,mb=1,recompute=none,sp=on", "mesh tp"},
        {"tp=auto,pp=4,dp=4,cp=2,zero=1,vpp=1,mb=1,recompute=none,sp=on", "tp=auto"},
        {"tp=4,pp=4", "lacks dp,cp,zero,vpp,mb,recompute,sp"},
        {"tp=65536,pp=65536,dp=4,cp=2,zero=1,vpp=1,mb=1,recompute=none,sp=on", "GPUs"},
        {"hello world", "saved.json:1: not a layout: mesh:"},
    };
    for (int i = 0; i < N_OF(bad); i++)
        assert_error_has(read_error(bad[i][0], strlen(bad[i][0])), bad[i][1]);
    snprintf(text, sizeof(text), "%s\n%s\n", layout, layout);
    assert_error_has(read_error(text, strlen(text)), "saved.json:2: a second layout");
    /* a bare line as long as the layout buffer (384 bytes, its end
     * included: what --mesh may be) is refused for its length, not copied
     * in whole */
    enum { PARSE_MAX = 384 };
    memset(text, 'x', PARSE_MAX);
    text[PARSE_MAX] = '\0';
    assert_error_has(read_error(text, strlen(text)), "saved.json:1: a line of 384 characters");
    text[PARSE_MAX - 1] = '\0';
    assert_error_has(read_error(text, strlen(text)), "saved.json:1: not a layout");
    /* so is a MESH_PLAN value as long (lines of NAME=value have no limit) */
    memcpy(text, "MESH_PLAN=", 10);
    memset(text + 10, 'x', PARSE_MAX);
    text[10 + PARSE_MAX] = '\0';
    assert_error_has(read_error(text, strlen(text)),
                     "saved.json:1: MESH_PLAN's value is too long (383 characters at most)");
    memcpy(text, "MESH_GLOBAL_BATCH_SIZE=", 23);
    memset(text + 23, '7', PARSE_MAX);
    text[23 + PARSE_MAX] = '\0';
    assert_error_has(read_error(text, strlen(text)),
                     "saved.json:1: MESH_GLOBAL_BATCH_SIZE's value is too long (383 characters");
    memcpy(text, "MESH_PLAN=", 10);
    memset(text + 10, 'x', PARSE_MAX);
    text[10 + PARSE_MAX - 1] = '\0';
    assert_error_has(read_error(text, strlen(text)), "saved.json:1: MESH_PLAN: mesh: 'xxxx");
    snprintf(text, sizeof(text), "MESH_PLAN='%s\n", layout);
    assert_error_has(read_error(text, strlen(text)), "not one word");
    /* quotes as a shell reads them: in single ones only a quote ends the
     * word ($ is a dollar), in double ones $, ` and \ would expand */
    const char *words[][2] = {
        {"MESH_GLOBAL_BATCH_SIZE='76'8'\n",
         "saved.json:1: MESH_GLOBAL_BATCH_SIZE's value is not one word"},
        {"MESH_GLOBAL_BATCH_SIZE='7$68'\n", "saved.json:1: MESH_GLOBAL_BATCH_SIZE: '7$68' is not"},
        {"MESH_GLOBAL_BATCH_SIZE=\"7$68\"\n", "MESH_GLOBAL_BATCH_SIZE's value is not one word"},
        {"MESH_GLOBAL_BATCH_SIZE=\"7'68\"\n",
         "saved.json:1: MESH_GLOBAL_BATCH_SIZE: '7'68' is not"},
        {"MESH_GLOBAL_BATCH_SIZE=$768\n", "MESH_GLOBAL_BATCH_SIZE's value is not one word"},
    };
    for (int i = 0; i < N_OF(words); i++)
        assert_error_has(read_error(words[i][0], strlen(words[i][0])), words[i][1]);
    snprintf(text, sizeof(text), "MESH_PLAN=%s\nMESH_GLOBAL_BATCH_SIZE=0\n", layout);
    assert_error_has(read_error(text, strlen(text)), "saved.json:2: MESH_GLOBAL_BATCH_SIZE");
    /* an environment that says the global batch twice: which one ran? */
    snprintf(text, sizeof(text),
             "MESH_GLOBAL_BATCH_SIZE=512\nMESH_PLAN=%s\nMESH_GLOBAL_BATCH_SIZE=768\n", layout);
    assert_error_has(read_error(text, strlen(text)),
                     "saved.json:3: MESH_GLOBAL_BATCH_SIZE given twice");
    /* JSON: not a plan, wrong types, twice, disagreeing, malformed */
    const char *json[][2] = {
        {"{\"rows\":[{\"layout\":\"tp=1\"}]}", "without a layout"},
        {"{\"layout\":{\"mesh\":4}}", "layout.mesh: expected the layout as a string"},
        {"{\"layout\":{\"mesh\":\"x\",\n\"mesh\":\"y\"}}",
         "saved.json:2: not valid JSON: duplicate object key"},
        {"{\"model\":{\"global_batch\":\"512\"}}", "model.global_batch: expected a number"},
        {"{\"layout\":{\"mesh\":\"tp=0\"}}", "layout.mesh: mesh tp"},
        {"{\"a\":1}{", "end of file expected"},
        {"{\"a\":01}", "invalid token"},
        {"{\"a\":1,}", "string or '}' expected"},
        {"{\"a\":\"x\ty\"}", "control character"},
        {"{\"a\":\"\\q\"}", "invalid escape"},
        {"{\"a\":\"\\u12\"}", "invalid escape near '\"\\u12"},
        {"{\"a\":tru}", "invalid token near 'tru'"},
        {"{\"a\":-}", "invalid token near '-'"},
        {"{\"a\":1.}", "invalid token near '1.'"},
        {"{\"a\":1e}", "invalid token near '1e'"},
        {"{a:1}", "string or '}' expected near 'a'"},
        {"{\"a\" 1}", "':' expected"},
    };
    for (int i = 0; i < N_OF(json); i++)
        assert_error_has(read_error(json[i][0], strlen(json[i][0])), json[i][1]);
    snprintf(
        text, sizeof(text),
        "{\"model\":{\"global_batch\":512},\"layout\":{\"mesh\":\"%s\",\"global_batch\":1024}}",
        layout);
    assert_error_has(read_error(text, strlen(text)), "differ");
    /* a layout longer than mesh_layout_parse reads is refused, not cut */
    snprintf(text, sizeof(text), "{\"layout\":{\"mesh\":\"%s%0400d\"}}", layout, 0);
    assert_error_has(read_error(text, strlen(text)), "layout.mesh: longer than");
    /* nested deeper than the reader goes, and cut short */
    char deep[2100 * 2] = "{\"a\":";
    for (int i = 0; i < 2100; i++)
        strcat(deep, "[");
    assert_error_has(read_error(deep, strlen(deep)), "maximum parsing depth");
    assert_error_has(read_error(deep, 10), "saved.json:1: not valid JSON: ']' expected near end of "
                                           "file (truncated?)");
}

/* Every prefix of a real plan --json is refused (truncated), none crashes. */
static void read__truncated_json(void **state)
{
    (void)state;
    mesh_model_t m = test_preset("mixtral-8x7b");
    mesh_plan_t *p = plan_on(&m, 2, NULL);
    char *json = mesh_report_json(p);
    size_t n = strlen(json);
    while (n && (json[n - 1] == '\n' || json[n - 1] == '}'))
        n--;
    for (size_t len = 1; len < n; len++)
        read_error(json, len);
    mesh_restart_t r = read_ok(json); /* whole, it reads, with the experts kept */
    assert_int_equal(r.keep, MESH_RESTART_KEEP_DEFAULT);
    assert_true(r.from.ep >= 1);
    free(json);
    mesh_plan_destroy(p);
}

static void load__regular_files_only(void **state)
{
    (void)state;
    char dir[] = "/tmp/meshplan-restart-XXXXXX", path[128];
    mesh_restart_t r;
    mesh_error_t err;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/plan.txt", dir);
    FILE *f = fopen(path, "w");
    fputs("export MESH_PLAN='tp=2,pp=1,dp=4,cp=1,zero=1,vpp=1,mb=1,recompute=none,sp=on'\n", f);
    fclose(f);
    assert_int_equal(mesh_restart_load(path, &r, &err), 0);
    assert_int_equal(r.from.tp, 2);
    unlink(path);
    assert_int_equal(mesh_restart_load(path, &r, &err), -1);
    assert_error_has(err.msg, "cannot open");
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_int_equal(mesh_restart_load(path, &r, &err), -1); /* without blocking */
    assert_error_has(err.msg, "not a regular file");
    unlink(path);
    assert_int_equal(mesh_restart_load(dir, &r, &err), -1);
    assert_error_has(err.msg, "not a regular file");
    rmdir(dir);
}

/* ---- what is kept ---- */

static void keep__names_and_errors(void **state)
{
    (void)state;
    mesh_restart_t r = read_ok("tp=4,pp=4,dp=4,cp=2,zero=1,vpp=1,mb=1,recompute=none,sp=on");
    mesh_error_t err;
    assert_int_equal(mesh_restart_keep(&r, "zero,tp,dp", &err), 0);
    assert_int_equal(r.keep, MESH_DIM_BIT(MESH_DIM_TP) | MESH_DIM_BIT(MESH_DIM_DP) |
                                 MESH_DIM_BIT(MESH_DIM_ZERO));
    assert_int_equal(mesh_restart_keep(&r, "none", &err), 0);
    assert_int_equal(r.keep, 0);
    const char *bad[][2] = {
        {"mb", "'mb' does not shard a checkpoint"},
        {"tp,recompute", "'recompute' does not shard a checkpoint"},
        {"zer", "did you mean zero?"},
        {"xyz", "'xyz' is not a dimension that can be kept (tp pp vpp cp dp ep etp zero)"},
        {"tp,tp", "tp given twice"},
        {"tp,,pp", "an empty field"},
        {",tp", "an empty field"},
        {"tp,", "an empty field"}, /* strtok_r would read it as "tp" */
        {"", "no dimension named"},
        {"none,tp", "'none' keeps nothing"},
        {"ep", "ep: the saved layout has no experts"},
    };
    r.keep = TP_PP_VPP;
    for (int i = 0; i < N_OF(bad); i++) {
        assert_int_equal(mesh_restart_keep(&r, bad[i][0], &err), -1);
        assert_error_has(err.msg, bad[i][1]);
        assert_int_equal(r.keep, TP_PP_VPP); /* unchanged */
    }
    char lots[300];
    memset(lots, 't', sizeof(lots) - 1);
    lots[sizeof(lots) - 1] = '\0';
    assert_int_equal(mesh_restart_keep(&r, lots, &err), -1);
    assert_error_has(err.msg, "longer than 127 characters"); /* the most it takes */
    assert_int_equal(mesh_restart_keep(&r, NULL, &err), -1);
}

/* What keeping less frees, read from a pin's error: the kept dimensions it
 * names, the keep without them, and those --mesh pins to the kept value. */
static void frees__the_kept_dimensions_a_pin_names(void **state)
{
    (void)state;
    mesh_restart_t r = read_ok("MESH_PLAN=tp=4,pp=4,dp=4,cp=2,zero=1,vpp=1,mb=1,recompute=none,"
                               "sp=on\nMESH_GLOBAL_BATCH_SIZE=768\n");
    char freed[64], keep[64], pinned[64];
    static const struct {
        const char *msg, *mesh, *freed, *keep, *pinned;
        int rc;
    } cases[] = {
        {"mesh tp=4,pp=4: LoRA trains ...", "tp=4", "tp,pp", "vpp,zero", "tp", 1},
        {"mesh tp=8 conflicts with the kept tp=4", "tp=8", "tp", "pp,vpp,zero", "", 1},
        {"on 2 nodes: mesh pp=4,cp=2: LoRA ...", NULL, "pp", "tp,vpp,zero", "", 1},
        {"mesh cp=2: LoRA ...", NULL, "", "", "", 0},        /* cp is not kept */
        {"no valid layout: mesh tp=4", NULL, "", "", "", 0}, /* not a pin's error */
        {"mesh tp=4,pp=4,vpp=1,zero=1: x", "", "tp,pp,vpp,zero", "none", "", 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int rc =
            mesh_restart_frees(&r, cases[i].msg, cases[i].mesh, freed, keep, pinned, sizeof(freed));
        if (rc != cases[i].rc || strcmp(freed, cases[i].freed) || strcmp(keep, cases[i].keep) ||
            strcmp(pinned, cases[i].pinned))
            fail_msg("%s: %d '%s' '%s' '%s'", cases[i].msg, rc, freed, keep, pinned);
    }
}

static void pins__kept_values_and_conflicts(void **state)
{
    (void)state;
    mesh_model_t m = test_spec(LLAMA_768), moe = test_preset("mixtral-8x7b");
    mesh_restart_t r = read_ok("MESH_PLAN=tp=4,pp=4,dp=4,cp=2,zero=1,vpp=1,mb=1,recompute=none,"
                               "sp=on\nMESH_GLOBAL_BATCH_SIZE=768\n");
    mesh_layout_t pins = test_mesh("tp=4,sp=on");
    mesh_error_t err;
    assert_int_equal(mesh_restart_pins(&r, &m, &pins, &err), 0);
    assert_int_equal(pins.tp, 4);
    assert_int_equal(pins.pp, 4);
    assert_int_equal(pins.vpp, 1);
    assert_int_equal(pins.zero, 1);              /* the checkpoint's format */
    assert_int_equal(pins.sequence_parallel, 1); /* not kept: --mesh's */
    assert_int_equal(pins.dp, MESH_FREE);
    /* the ZeRO stage is the format: Megatron-FSDP's reads no other; and
     * every conflict at once, so that one change frees them all, the pins
     * left as they were */
    static const char *const conflicts[][2] = {
        {"zero=2", "mesh zero=2 conflicts with the kept zero=1"},
        {"tp=8", "mesh tp=8 conflicts with the kept tp=4 (the checkpoint's): pin the same value, "
                 "or keep less"},
        {"pp=auto", "mesh pp=auto conflicts with the kept pp=4 (the checkpoint's): leave pp out, "
                    "or keep less"},
        {"tp=8,pp=2", "mesh tp=8,pp=2 conflicts with the kept tp=4,pp=4 (the checkpoint's): pin "
                      "the same values, or keep less"},
        {"tp=auto,pp=auto,zero=1", "mesh tp=auto,pp=auto conflicts with the kept tp=4,pp=4 (the "
                                   "checkpoint's): leave tp,pp out, or keep less"},
        {"tp=8,pp=auto", "mesh tp=8,pp=auto conflicts with the kept tp=4,pp=4 (the checkpoint's): "
                         "pin the kept values, or keep less"},
    };
    for (size_t i = 0; i < sizeof(conflicts) / sizeof(conflicts[0]); i++) {
        pins = test_mesh(conflicts[i][0]);
        assert_int_equal(mesh_restart_pins(&r, &m, &pins, &err), -1);
        assert_error_has(err.msg, conflicts[i][1]);
        assert_int_equal(pins.vpp, MESH_FREE);
    }
    /* a restart keeps the global batch: the spec must say the saved one */
    mesh_model_t m512 = test_preset("llama3-70b");
    pins = test_mesh("auto");
    assert_int_equal(mesh_restart_pins(&r, &m512, &pins, &err), -1);
    assert_error_has(err.msg, "global batch is 768 sequences and the spec's 512");
    assert_error_has(err.msg, "train.global_batch: 768");
    r.global_batch = 0; /* unknown: the spec's is taken */
    assert_int_equal(mesh_restart_pins(&r, &m512, &pins, &err), 0);
    /* experts: a MoE layout's ep kept for a dense model, a dense one's for a MoE */
    mesh_restart_t e = read_ok("tp=2,pp=1,dp=4,cp=1,ep=8,etp=1,zero=1,vpp=1,mb=1,recompute=none,"
                               "sp=on");
    pins = test_mesh("auto");
    assert_int_equal(mesh_restart_pins(&e, &m, &pins, &err), -1);
    assert_error_has(err.msg, "ep kept, but llama3-70b has no experts");
    r.keep |= MESH_DIM_BIT(MESH_DIM_ETP); /* as a hand-made one-line form could */
    pins = test_mesh("auto");
    assert_int_equal(mesh_restart_pins(&r, &moe, &pins, &err), -1);
    assert_error_has(err.msg, "etp kept, but the saved layout has no experts");
    pins = test_mesh("auto");
    assert_int_equal(mesh_restart_pins(&e, &moe, &pins, &err), 0);
    assert_int_equal(pins.ep, 8);
    assert_int_equal(pins.etp, 1);
}

/* plan --json says the saved model's shape: another model's is refused,
 * the same model under another spec (a longer sequence) is not. */
static void pins__another_models_checkpoint(void **state)
{
    (void)state;
    mesh_model_t small = test_preset("llama3-8b"), big = test_spec(LLAMA_768);
    mesh_plan_t *p = plan_on(&small, 2, NULL);
    char *json = mesh_report_json(p);
    mesh_restart_t r = read_ok(json);
    mesh_layout_t pins = test_mesh("auto");
    mesh_error_t err;
    assert_int_equal(r.layers, 32);
    assert_int_equal(r.hidden, 4096);
    assert_int_equal(r.heads, 32);
    assert_int_equal(mesh_restart_pins(&r, &big, &pins, &err), -1);
    assert_error_has(err.msg, "the saved plan's model has 32 layers, hidden 4096 and 32 heads, "
                              "llama3-70b 80, 8192 and 64: the checkpoint is another model's");
    /* one that differs in its heads alone is another model's too: its
     * attention weights are cut another way */
    mesh_model_t heads = test_spec("preset: llama3-8b\narch: {heads: 64}\n");
    pins = test_mesh("auto");
    assert_int_equal(mesh_restart_pins(&r, &heads, &pins, &err), -1);
    assert_error_has(err.msg, "and 32 heads, llama3-8b 32, 4096 and 64: the checkpoint is "
                              "another model's");
    mesh_model_t longer = test_spec("preset: llama3-8b\ntrain: {seq_len: 16384}\n");
    pins = test_mesh("auto");
    assert_int_equal(mesh_restart_pins(&r, &longer, &pins, &err), 0);
    /* a params-only model's plan has no shape to compare */
    mesh_model_t po = test_preset("params-only");
    mesh_plan_t *q = plan_on(&po, 1, NULL);
    char *pj = mesh_report_json(q);
    mesh_restart_t rp = read_ok(pj);
    assert_int_equal(rp.layers + rp.hidden + rp.heads, 0);
    free(pj);
    mesh_plan_destroy(q);
    free(json);
    mesh_plan_destroy(p);
}

static void reshard__changed_dimensions_in_order(void **state)
{
    (void)state;
    mesh_restart_t r = read_ok("tp=4,pp=4,dp=4,cp=2,zero=1,vpp=1,mb=1,recompute=none,sp=on");
    char buf[MESH_RESHARD_STR_MAX];
    const char *cases[][2] = {
        {"tp=4,pp=4,dp=4,cp=2,zero=1,vpp=1,mb=4,recompute=full,sp=off", "none"},
        {"tp=4,pp=4,dp=3,cp=2,zero=1,vpp=1,mb=1,recompute=none,sp=on", "dp"},
        /* from the distributed optimizer to Megatron-FSDP: another format */
        {"tp=4,pp=4,dp=6,cp=2,zero=3,vpp=1,mb=1,recompute=none,sp=on", "dp,zero,format"},
        {"tp=8,pp=2,dp=4,cp=1,zero=0,vpp=2,mb=1,recompute=none,sp=on", "tp,pp,vpp,cp,zero"},
        /* a dense layout's ep and etp (0) are 1 */
        {"tp=4,pp=4,dp=4,cp=2,ep=1,etp=1,zero=1,vpp=1,mb=1,recompute=none,sp=on", "none"},
        {"tp=4,pp=4,dp=4,cp=2,ep=4,etp=2,zero=1,vpp=1,mb=1,recompute=none,sp=on", "ep,etp"},
    };
    for (int i = 0; i < N_OF(cases); i++) {
        mesh_layout_t to = test_layout(cases[i][0]);
        assert_string_equal(mesh_restart_reshard(&r, &to, buf, sizeof(buf)), cases[i][1]);
    }
    mesh_layout_t all = test_layout("tp=2,pp=2,dp=2,cp=4,ep=2,etp=2,zero=0,vpp=2,mb=1,"
                                    "recompute=none,sp=on");
    r.from.ep = r.from.etp = 4;
    assert_string_equal(mesh_restart_reshard(&r, &all, buf, sizeof(buf)),
                        "tp,pp,vpp,cp,dp,ep,etp,zero");
    assert_int_equal(strlen(buf) + 1 <= MESH_RESHARD_STR_MAX, 1);
    assert_string_equal(mesh_restart_kept(&r, buf, sizeof(buf)), "tp=4,pp=4,vpp=1,zero=1");
    /* within Megatron-FSDP the format stays */
    mesh_restart_t fsdp = read_ok("tp=4,pp=4,dp=4,cp=2,zero=2,vpp=1,mb=1,recompute=none,sp=on");
    mesh_layout_t z3 = test_layout("tp=4,pp=4,dp=4,cp=2,zero=3,vpp=1,mb=1,recompute=none,sp=on");
    assert_string_equal(mesh_restart_reshard(&fsdp, &z3, buf, sizeof(buf)), "zero");
    mesh_layout_t z1 = test_layout("tp=8,pp=2,dp=4,cp=1,ep=4,etp=2,zero=1,vpp=2,mb=1,"
                                   "recompute=none,sp=on");
    fsdp.from.ep = fsdp.from.etp = 8;
    assert_string_equal(mesh_restart_reshard(&fsdp, &z1, buf, sizeof(buf)),
                        "tp,pp,vpp,cp,ep,etp,zero,format");
    r.keep = 0;
    assert_string_equal(mesh_restart_kept(&r, buf, sizeof(buf)), "none");
}

/* ---- the one-line form the plugin carries ---- */

static void line__round_trip_and_checks(void **state)
{
    (void)state;
    /* env --shell's output, its unset lines first (skipped) */
    mesh_restart_t r = read_ok("unset MESH_RESHARD\nunset\tMESH_GPU_BUSID\n"
                               "export MESH_PLAN='tp=2,pp=4,dp=16,cp=2,ep=8,etp=2,zero=1,vpp=3,"
                               "mb=2,recompute=full:2,sp=on,offload=optimizer'\n"
                               "export MESH_GLOBAL_BATCH_SIZE='1024'\n");
    char line[MESH_RESTART_STR_MAX], small[40];
    mesh_restart_t back;
    mesh_error_t err;
    assert_int_equal(mesh_restart_keep(&r, "tp,pp,ep", &err), 0);
    assert_int_equal(mesh_restart_format(&r, line, sizeof(line), &err), 0);
    assert_string_equal(line, "keep=tp,pp,ep;batch=1024;model=0,0,0;tp=2,pp=4,dp=16,cp=2,ep=8,"
                              "etp=2,zero=1,vpp=3,mb=2,recompute=full:2,sp=on,offload=optimizer");
    assert_int_equal(mesh_restart_parse(line, &back, &err), 0);
    assert_same(&back, &r);
    r.keep = 0;
    r.global_batch = 0;
    r.layers = 80;
    r.hidden = 8192;
    r.heads = 64;
    assert_int_equal(mesh_restart_format(&r, line, sizeof(line), &err), 0);
    assert_int_equal(strncmp(line, "keep=none;batch=0;model=80,8192,64;tp=2,", 40), 0);
    assert_int_equal(mesh_restart_parse(line, &back, &err), 0);
    assert_same(&back, &r);
    /* never a cut line */
    assert_int_equal(mesh_restart_format(&r, small, sizeof(small), &err), -1);
    assert_string_equal(small, "");
    r.keep = 1u << MESH_DIM_COUNT;
    assert_int_equal(mesh_restart_format(&r, line, sizeof(line), &err), -1);
    /* the user can change it where it travels: every check again */
    const char *lay = "tp=2,pp=4,dp=16,cp=2,zero=1,vpp=3,mb=2,recompute=none,sp=on";
    const char *bad[][2] = {
        {"keep=mb;batch=0;model=0,0,0;%s", "does not shard"},
        {"keep=tp;batch=-1;model=0,0,0;%s", "restart batch"},
        {"keep=tp;batch=2000000000;model=0,0,0;%s", "restart batch"},
        {"batch=0;keep=tp;model=0,0,0;%s", "keep="},
        {"keep=tp;batch=0;model=0,0,0;tp=2,pp=4", "lacks"},
        {"keep=tp;batch=0;model=0,0,0;%s;x=1", "mesh"},
        {"keep=tp;model=0,0,0;%s", "expected batch="},
        {"keep=tp;batch=0;%s", "expected model="},
        {"keep=tp;batch=0;model=80,0,64;%s", "all 0 or none"},
        {"keep=tp;batch=0;model=80,8192;%s", "all 0 or none"},
        {"keep=tp;batch=0;model=1,2,3,4;%s", "more than 3"},
        {"keep=tp;batch=0;model=-1,2,3;%s", "restart model"},
        {"keep=ep;batch=0;model=0,0,0;%s", "no experts"},
    };
    for (int i = 0; i < N_OF(bad); i++) {
        char text[400]; /* the pattern with its %s made the layout */
        const char *at = strstr(bad[i][0], "%s");
        snprintf(text, sizeof(text), "%.*s%s%s",
                 at ? (int)(at - bad[i][0]) : (int)strlen(bad[i][0]), bad[i][0], at ? lay : "",
                 at ? at + 2 : "");
        assert_int_equal(mesh_restart_parse(text, &back, &err), -1);
        assert_error_has(err.msg, bad[i][1]);
        assert_int_equal(strncmp(err.msg, "restart", 7), 0);
    }
    /* the most GPUs meshplan plans for, 2^22 = 8 x 64 x 8192, and one
     * replica more */
    assert_int_equal(mesh_restart_parse("keep=tp;batch=0;model=0,0,0;tp=8,pp=64,dp=8192,cp=1,"
                                        "zero=1,vpp=1,mb=1,recompute=none,sp=on",
                                        &back, &err),
                     0);
    assert_int_equal(mesh_restart_parse("keep=tp;batch=0;model=0,0,0;tp=8,pp=64,dp=8193,cp=1,"
                                        "zero=1,vpp=1,mb=1,recompute=none,sp=on",
                                        &back, &err),
                     -1);
    assert_error_has(err.msg, "is more than the 4194304 GPUs meshplan plans for");
    char longer[MESH_RESTART_STR_MAX + 8];
    memset(longer, 'k', sizeof(longer) - 1);
    longer[sizeof(longer) - 1] = '\0';
    assert_int_equal(mesh_restart_parse(longer, &back, &err), -1);
    assert_error_has(err.msg, "longer than");
    /* exactly MESH_RESTART_STR_MAX characters: one more than the line holds */
    longer[MESH_RESTART_STR_MAX] = '\0';
    assert_int_equal(mesh_restart_parse(longer, &back, &err), -1);
    assert_error_has(err.msg, "longer than");
    assert_int_equal(mesh_restart_parse(NULL, &back, &err), -1);
    /* a field as long as its buffer is refused as such, one shorter read */
    char line32[200];
    snprintf(line32, sizeof(line32), "keep=tp;batch=%032d;model=0,0,0;%s", 1024, lay);
    assert_int_equal(mesh_restart_parse(line32, &back, &err), -1);
    assert_string_equal(err.msg, "restart: batch= longer than 31 characters");
    snprintf(line32, sizeof(line32), "keep=tp;batch=%031d;model=0,0,0;%s", 1024, lay);
    assert_int_equal(mesh_restart_parse(line32, &back, &err), 0);
    assert_int_equal(back.global_batch, 1024);
}

/* ---- the environment ---- */

static void env__reshard_only_for_a_restart(void **state)
{
    (void)state;
    restart_case_t c;
    restart_16_to_12(&c);
    const mesh_plan_t *p = c.after;
    mesh_task_t t = {.master_addr = "n1", .master_port = 20000, .numa_node = -1};
    mesh_error_t err;
    char changed[MESH_RESHARD_STR_MAX];
    mesh_restart_reshard(&c.r, &mesh_plan_best(p)->layout, changed, sizeof(changed));
    assert_string_equal(changed, "dp"); /* tp and pp kept, cp 2 on both */
    mesh_env_t *plain = mesh_env_create(p, &t, &err);
    t.restart = &c.r;
    mesh_env_t *restart = mesh_env_create(p, &t, &err);
    assert_non_null(plain);
    assert_non_null(restart);
    /* the same variables, and MESH_RESHARD after MESH_PLAN_DIGEST */
    assert_int_equal(mesh_env_count(restart), mesh_env_count(plain) + 1);
    for (int i = 0, k = 0; i < mesh_env_count(restart); i++) {
        if (strcmp(mesh_env_name(restart, i), "MESH_RESHARD") == 0) {
            assert_string_equal(mesh_env_name(restart, i - 1), "MESH_PLAN_DIGEST");
            assert_string_equal(mesh_env_value(restart, i), changed);
            continue;
        }
        assert_string_equal(mesh_env_name(restart, i), mesh_env_name(plain, k));
        assert_string_equal(mesh_env_value(restart, i), mesh_env_value(plain, k));
        k++;
    }
    for (int i = 0; i < mesh_env_count(plain); i++)
        assert_string_not_equal(mesh_env_name(plain, i), "MESH_RESHARD");
    mesh_env_destroy(plain);
    mesh_env_destroy(restart);
    restart_case_free(&c);
}

/* ---- the explanation ---- */

/* Llama 3 70B, its 16-node plan saved, restarted on 12 nodes of 8 H100:
 * tp and pp kept, dp changes, and the global batch stays 768 with more
 * micro-batches per step. */
static void text__llama3_70b_from_16_to_12_nodes(void **state)
{
    (void)state;
    restart_case_t c;
    restart_16_to_12(&c);
    const mesh_plan_t *p16 = c.before, *p = c.after;
    const mesh_restart_t r = c.r;
    const mesh_layout_t *from = &mesh_plan_best(p16)->layout, *to = &mesh_plan_best(p)->layout;
    long mbs_from = mesh_plan_best(p16)->micro_batches, mbs_to = mesh_plan_best(p)->micro_batches;
    assert_true(mesh_plan_fits(p));
    assert_int_equal(to->tp, from->tp);
    assert_int_equal(to->pp, from->pp);
    assert_int_equal(to->vpp, from->vpp);
    assert_int_not_equal(to->dp, from->dp);
    /* the batch identity on both sides */
    assert_int_equal((long)from->micro_batch * from->dp * mbs_from, 768);
    assert_int_equal((long)to->micro_batch * to->dp * mbs_to, 768);
    assert_int_not_equal(mbs_to, mbs_from);
    char *text = mesh_restart_text(&r, p), want[512], changed[MESH_RESHARD_STR_MAX];
    assert_non_null(text);
    snprintf(want, sizeof(want),
             "Restart from %s\n  kept      tp=%d,pp=%d,vpp=%d,zero=%d (the checkpoint's", fmt(from),
             from->tp, from->pp, from->vpp, from->zero);
    assert_int_equal(strncmp(text, want, strlen(want)), 0);
    mesh_restart_reshard(&r, to, changed, sizeof(changed));
    assert_non_null(strstr(changed, "dp"));
    snprintf(want, sizeof(want), "MESH_RESHARD=%s tells the training program to reshard", changed);
    assert_error_has(text, want);
    snprintf(want, sizeof(want), "dp %d -> %d", from->dp, to->dp);
    assert_error_has(text, want);
    snprintf(want, sizeof(want),
             "  global batch 768 sequences, kept: micro-batch %d x %d data-parallel x %ld "
             "micro-batches per step (gradient accumulation), was %d x %d x %ld\n",
             to->micro_batch, to->dp, mbs_to, from->micro_batch, from->dp, mbs_from);
    assert_error_has(text, want);
    assert_null(strstr(text, "cannot fit"));
    /* the JSON says the same */
    char *j = mesh_restart_json(&r, p);
    snprintf(want, sizeof(want), "\"reshard\":\"%s\",\"changed\":[", changed);
    assert_error_has(j, want);
    snprintf(want, sizeof(want),
             "\"global_batch\":768,\"global_batch_saved\":768,\"micro_batch\":{\"from\":%d,"
             "\"to\":%d},\"data_parallel\":{\"from\":%d,\"to\":%d},\"micro_batches\":{\"from\":%ld,"
             "\"to\":%ld},\"fits\":true,\"nodes_to_fit\":null,\"unkeep\":[]}",
             from->micro_batch, to->micro_batch, from->dp, to->dp, mbs_from, mbs_to);
    assert_error_has(j, want);
    assert_error_has(j, "\"keep\":[\"tp\",\"pp\",\"vpp\",\"zero\"]");
    free(j);
    free(text);
    restart_case_free(&c);
}

/* The kept layout that cannot fit is said so plainly, with how many nodes
 * would fit it and which kept dimension, freed, would fit here. */
static void text__kept_layout_that_cannot_fit(void **state)
{
    (void)state;
    mesh_model_t m = test_preset("llama3-8b");
    mesh_restart_t r = read_ok("tp=1,pp=1,dp=8,cp=1,zero=3,vpp=1,mb=1,recompute=none,sp=off");
    /* 25 GB: room for what freeing tp brings, --tp-comm-overlap's
     * Userbuffers among it (lib/memory.c) */
    mesh_alloc_t a = test_alloc_mem(NULL, 25e9, 1, 8);
    mesh_layout_t pins;
    mesh_error_t err;
    assert_int_equal(mesh_restart_keep(&r, "tp,pp,vpp", &err), 0); /* a torch_dist user's */
    mesh_layout_unpin(&pins);
    assert_int_equal(mesh_restart_pins(&r, &m, &pins, &err), 0);
    mesh_plan_t *p = mesh_plan_create(&m, &a, &pins, NULL, &err);
    assert_non_null(p);
    assert_false(mesh_plan_fits(p));
    /* the fewest nodes that fit it, found here by hand */
    int n = 0;
    for (int k = 2; k <= 4 && !n; k++) {
        mesh_alloc_t on = a;
        on.nodes = k;
        n = mesh_plan_any_fits(&m, &on, &pins, NULL) ? k : 0;
    }
    assert_true(n > 1);
    char *text = mesh_restart_text(&r, p), want[256];
    assert_error_has(text, "  The kept layout cannot fit this allocation: the closest needs ");
    snprintf(want, sizeof(want), "  With tp=1,pp=1,vpp=1 kept it would fit on %d nodes (%d GPUs).",
             n, 8 * n);
    assert_error_has(text, want);
    int unkept = 0;
    for (int i = 0; i < mesh_plan_advice_count(p); i++) {
        const mesh_advice_t *ad = mesh_plan_advice_record(p, i);
        if (ad->kind != MESH_ADVICE_UNPIN || strcmp(ad->field, "tp"))
            continue;
        snprintf(want, sizeof(want),
                 "  Not keeping tp (at 1) would fit here, with tp %d: the checkpoint would then "
                 "be resharded in tp on load.",
                 ad->value);
        assert_error_has(text, want);
        unkept++;
    }
    assert_int_equal(unkept, 1);
    char *j = mesh_restart_json(&r, p);
    snprintf(want, sizeof(want), "\"fits\":false,\"nodes_to_fit\":%d,\"unkeep\":[{\"dim\":\"tp\"",
             n);
    assert_error_has(j, want);
    free(j);
    free(text);
    /* nothing kept: the plan's own advice, no search of the kept layout */
    r.keep = 0;
    text = mesh_restart_text(&r, p);
    assert_error_has(text, "  kept      nothing");
    assert_error_has(text, "The planned layout cannot fit");
    assert_null(strstr(text, "would fit on"));
    free(text);
    mesh_plan_destroy(p);
    /* tp pinned by the user (--mesh tp=1), not kept: the plan may advise
     * freeing it, the restart never offers "not keeping" it */
    assert_int_equal(mesh_restart_keep(&r, "pp,vpp", &err), 0);
    mesh_layout_unpin(&pins);
    pins.tp = 1;
    assert_int_equal(mesh_restart_pins(&r, &m, &pins, &err), 0);
    p = mesh_plan_create(&m, &a, &pins, NULL, &err);
    assert_non_null(p);
    int advised = 0;
    for (int i = 0; i < mesh_plan_advice_count(p); i++) {
        const mesh_advice_t *ad = mesh_plan_advice_record(p, i);
        advised |= ad->kind == MESH_ADVICE_UNPIN && !strcmp(ad->field, "tp");
    }
    assert_true(advised);
    text = mesh_restart_text(&r, p);
    assert_null(strstr(text, "Not keeping tp"));
    j = mesh_restart_json(&r, p);
    assert_null(strstr(j, "{\"dim\":\"tp\""));
    free(j);
    free(text);
    mesh_plan_destroy(p);
}

/* The restart of the brief, the plan JSON's report and reading included,
 * and a file that cannot be read, give back every byte they take. */
static void restart_work(void)
{
    restart_case_t c;
    restart_16_to_12(&c);
    free(env_text(c.after, 1));
    restart_case_free(&c);
    static const char bad[] = "{\"version\": 1, \"mesh\": 7}";
    assert_non_null(strstr(read_error(bad, sizeof(bad) - 1), "mesh"));
}

static void restart__returns_all_its_memory(void **state)
{
    (void)state;
    test_gives_back(restart_work, "a restart");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(read__plan_json),
        cmocka_unit_test(restart__returns_all_its_memory),
        cmocka_unit_test(read__env_forms),
        cmocka_unit_test(from_env__plan_and_batch),
        cmocka_unit_test(read__moe_keeps_ep_and_etp),
        cmocka_unit_test(read__recompute_as_saved),
        cmocka_unit_test(read__hostile_files),
        cmocka_unit_test(read__truncated_json),
        cmocka_unit_test(load__regular_files_only),
        cmocka_unit_test(keep__names_and_errors),
        cmocka_unit_test(pins__kept_values_and_conflicts),
        cmocka_unit_test(frees__the_kept_dimensions_a_pin_names),
        cmocka_unit_test(pins__another_models_checkpoint),
        cmocka_unit_test(reshard__changed_dimensions_in_order),
        cmocka_unit_test(line__round_trip_and_checks),
        cmocka_unit_test(env__reshard_only_for_a_restart),
        cmocka_unit_test(text__llama3_70b_from_16_to_12_nodes),
        cmocka_unit_test(text__kept_layout_that_cannot_fit),
    };
    return cmocka_run_group_tests_name("restart", tests, NULL, NULL);
}
