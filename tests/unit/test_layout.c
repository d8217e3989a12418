/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lib/layout.c: the --mesh syntax and its one table of keys, the canonical
 * and pinned-fields strings, and the keys' table as every user of it sees
 * it.
 */
#include "internal.h" /* the --mesh key table */
#include "moeutil.h"
#include "testutil.h"

/* the keys, as errors list them */
#define MESH_KEY_LIST "tp pp dp cp ep etp zero vpp mb recompute sp offload moments tp_overlap"

/* Parse s, which must fail with exactly the message want. */
static void mesh_refused(const char *s, const char *want)
{
    mesh_layout_t l;
    mesh_error_t err;
    err.msg[0] = '\0';
    if (mesh_layout_parse(s, &l, &err) != -1)
        fail_msg("--mesh '%s' was accepted", s);
    if (strcmp(err.msg, want) != 0)
        fail_msg("--mesh '%s': '%s', expected '%s'", s, err.msg, want);
}

/* Every field of a layout left free by mesh_layout_unpin. */
static void assert_all_free(const mesh_layout_t *l)
{
    for (int i = 0; i < MESH_LAYOUT_KEYS; i++)
        if (mesh_layout_keys[i].kind != MK_RECOMPUTE)
            assert_int_equal(mesh_layout_value(l, &mesh_layout_keys[i]), MESH_FREE);
    assert_int_equal(l->recompute, MESH_RECOMPUTE_AUTO);
    assert_int_equal(l->recompute_layers, MESH_FREE);
    assert_int_equal(l->recompute_modules, MESH_FREE);
}

/* Each integer key: its smallest and largest value, one past either end
 * and a non-number, with the message naming the key and the range, and
 * "auto"; the other fields stay free. */
static void mesh__integer_keys__bounds_and_messages(void **state)
{
    (void)state;
    static const struct {
        const char *key;
        size_t off;
        long long min, max;
    } keys[] = {
        {"tp", offsetof(mesh_layout_t, tp), 1, 65536},
        {"pp", offsetof(mesh_layout_t, pp), 1, 65536},
        {"dp", offsetof(mesh_layout_t, dp), 1, 16777216},
        {"cp", offsetof(mesh_layout_t, cp), 1, 65536},
        {"zero", offsetof(mesh_layout_t, zero), 0, 3},
        {"vpp", offsetof(mesh_layout_t, vpp), 1, 65536},
        {"mb", offsetof(mesh_layout_t, micro_batch), 1, 65536},
    };
    for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++) {
        const char *k = keys[i].key;
        long long lo = keys[i].min, hi = keys[i].max;
        char s[64], want[160];
        mesh_layout_t l;
        mesh_error_t err;
        const long long ok[] = {lo, hi};
        for (int j = 0; j < 2; j++) {
            snprintf(s, sizeof(s), "%s=%lld", k, ok[j]);
            if (mesh_layout_parse(s, &l, &err) < 0)
                fail_msg("%s: %s", s, err.msg);
            int *f = (int *)((char *)&l + keys[i].off);
            assert_int_equal(*f, ok[j]);
            *f = MESH_FREE; /* nothing else was set */
            assert_all_free(&l);
        }
        const long long bad[] = {lo - 1, hi + 1};
        for (int j = 0; j < 2; j++) {
            snprintf(s, sizeof(s), "%s=%lld", k, bad[j]);
            snprintf(want, sizeof(want), "mesh %s: %lld is out of range (allowed %lld..%lld)", k,
                     bad[j], lo, hi);
            mesh_refused(s, want);
        }
        snprintf(s, sizeof(s), "%s=2x", k);
        snprintf(want, sizeof(want), "mesh %s: '2x' is not an integer (expected %lld..%lld)", k, lo,
                 hi);
        mesh_refused(s, want);
        snprintf(s, sizeof(s), "%s=", k);
        snprintf(want, sizeof(want), "mesh %s: empty value, expected an integer in %lld..%lld", k,
                 lo, hi);
        mesh_refused(s, want);
        snprintf(s, sizeof(s), "%s=AUTO", k);
        assert_int_equal(mesh_layout_parse(s, &l, &err), 0);
        int *f = (int *)((char *)&l + keys[i].off);
        assert_int_equal(*f, MESH_AUTO);
        *f = MESH_FREE;
        assert_all_free(&l);
    }
}

/* The word-valued keys: every value, what it sets, and the refusals. */
static void mesh__word_keys__values_and_messages(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        int recompute, layers, modules;
    } rc[] = {
        {"recompute=none", MESH_RECOMPUTE_NONE, MESH_FREE, MESH_FREE},
        {"recompute=selective", MESH_RECOMPUTE_SELECTIVE, MESH_FREE, 0},
        /* core_attn alone is Megatron's default: plain selective */
        {"recompute=selective:core_attn", MESH_RECOMPUTE_SELECTIVE, MESH_FREE, 0},
        {"recompute=selective:mlp", MESH_RECOMPUTE_SELECTIVE, MESH_FREE, MESH_RC_MLP},
        {"recompute=selective:mlp+layernorm", MESH_RECOMPUTE_SELECTIVE, MESH_FREE,
         MESH_RC_MLP | MESH_RC_LAYERNORM},
        {"recompute=selective:core_attn+layernorm+mlp", MESH_RECOMPUTE_SELECTIVE, MESH_FREE,
         MESH_RC_CORE_ATTN | MESH_RC_LAYERNORM | MESH_RC_MLP},
        {"recompute=selective:mla_up_proj+core_attn+layernorm+mlp", MESH_RECOMPUTE_SELECTIVE,
         MESH_FREE, MESH_RC_ALL},
        {"recompute=full", MESH_RECOMPUTE_FULL, 0, MESH_FREE},
        {"recompute=full:1", MESH_RECOMPUTE_FULL, 1, MESH_FREE},
        {"recompute=full:100000", MESH_RECOMPUTE_FULL, 100000, MESH_FREE},
        {"recompute=auto", MESH_AUTO, MESH_FREE, MESH_FREE},
    };
    mesh_layout_t l;
    mesh_error_t err;
    for (size_t i = 0; i < sizeof(rc) / sizeof(*rc); i++) {
        if (mesh_layout_parse(rc[i].s, &l, &err) < 0)
            fail_msg("%s: %s", rc[i].s, err.msg);
        assert_int_equal(l.recompute, rc[i].recompute);
        assert_int_equal(l.recompute_layers, rc[i].layers);
        assert_int_equal(l.recompute_modules, rc[i].modules);
        assert_int_equal(l.tp, MESH_FREE);
    }
    static const struct {
        const char *s;
        int sp, offload, moments;
    } words[] = {
        {"sp=on", 1, MESH_FREE, MESH_FREE},
        {"sp=false", 0, MESH_FREE, MESH_FREE},
        {"sp=auto", MESH_AUTO, MESH_FREE, MESH_FREE},
        {"offload=optimizer", MESH_FREE, 1, MESH_FREE},
        {"offload=none", MESH_FREE, 0, MESH_FREE},
        {"offload=auto", MESH_FREE, MESH_AUTO, MESH_FREE},
        {"moments=bf16", MESH_FREE, MESH_FREE, MESH_PREC_BF16},
        {"moments=FP16", MESH_FREE, MESH_FREE, MESH_PREC_FP16},
        {"moments=fp32", MESH_FREE, MESH_FREE, MESH_PREC_FP32},
        {"moments=auto", MESH_FREE, MESH_FREE, MESH_AUTO},
    };
    for (size_t i = 0; i < sizeof(words) / sizeof(*words); i++) {
        if (mesh_layout_parse(words[i].s, &l, &err) < 0)
            fail_msg("%s: %s", words[i].s, err.msg);
        assert_int_equal(l.sequence_parallel, words[i].sp);
        assert_int_equal(l.offload, words[i].offload);
        assert_int_equal((int)l.moments, words[i].moments);
        assert_int_equal(l.recompute, MESH_RECOMPUTE_AUTO);
        assert_int_equal(l.tp_overlap_off, MESH_FREE);
    }
    /* tp_overlap is kept as whether it is off */
    assert_int_equal(mesh_layout_parse("tp_overlap=off", &l, &err), 0);
    assert_int_equal(l.tp_overlap_off, 1);
    assert_int_equal(mesh_layout_parse("tp_overlap=on", &l, &err), 0);
    assert_int_equal(l.tp_overlap_off, 0);
    assert_int_equal(mesh_layout_parse("tp_overlap=auto", &l, &err), 0);
    assert_int_equal(l.tp_overlap_off, MESH_AUTO);
    mesh_refused("tp_overlap=maybe",
                 "mesh tp_overlap: 'maybe' is not a boolean (use true or false)");
    mesh_refused("recompute=some",
                 "mesh recompute: 'some' is not one of none selective selective:MODULES full "
                 "full:N auto");
    mesh_refused("recompute=none:2", "mesh recompute: ':N' (layers per stage) goes with full, "
                                     "':MODULES' with selective, as in recompute=full:4");
    mesh_refused("recompute=full:0",
                 "mesh recompute full:N: 0 is out of range (allowed 1..100000)");
    mesh_refused("recompute=full:100001",
                 "mesh recompute full:N: 100001 is out of range (allowed 1..100000)");
    mesh_refused("recompute=selective:mlp+",
                 "mesh recompute: selective:'mlp+' is not modules joined by '+' (core_attn, "
                 "layernorm, mlp, mla_up_proj), as in selective:layernorm+mlp");
    mesh_refused("recompute=selective:attn",
                 "mesh recompute: selective:'attn' is not modules joined by '+' (core_attn, "
                 "layernorm, mlp, mla_up_proj), as in selective:layernorm+mlp");
    mesh_refused("sp=maybe", "mesh sp: 'maybe' is not a boolean (use true or false)");
    mesh_refused("offload=gpu", "mesh offload: 'gpu' is not one of none optimizer auto");
    mesh_refused("moments=fp8", "mesh moments: 'fp8' is not one of fp32 bf16 fp16 auto");
}

static void mesh__syntax__messages(void **state)
{
    (void)state;
    mesh_layout_t l;
    mesh_error_t err;
    mesh_refused("tp", "mesh: 'tp' is not key=value (keys: " MESH_KEY_LIST ")");
    mesh_refused("tp=2,foo=1", "mesh: unknown key 'foo' (keys: " MESH_KEY_LIST ")");
    mesh_refused("TP=2", "mesh: unknown key 'TP' (keys: " MESH_KEY_LIST ")");
    mesh_refused("mb=2,pp=4,mb=2", "mesh: mb given twice");
    mesh_refused("recompute=full,recompute=none", "mesh: recompute given twice");
    mesh_refused("tp=2,,pp=2", "mesh: empty field in 'tp=2,,pp=2'");
    mesh_refused("tp=2,", "mesh: empty field in 'tp=2,'");
    mesh_refused(",tp=2", "mesh: empty field in ',tp=2'");
    /* 383 characters fit the buffer (leading zeros are still a number), 384 do not */
    char s[400];
    memset(s, '0', sizeof(s));
    memcpy(s, "tp=", 3);
    s[382] = '2';
    s[383] = '\0';
    assert_int_equal(mesh_layout_parse(s, &l, &err), 0);
    assert_int_equal(l.tp, 2);
    s[383] = '2';
    s[384] = '\0';
    mesh_refused(s, "mesh: longer than 383 characters");
    /* nothing pinned */
    const char *free_all[] = {"auto", "AUTO", "", NULL};
    for (size_t i = 0; i < sizeof(free_all) / sizeof(*free_all); i++) {
        memset(&l, 0, sizeof(l));
        assert_int_equal(mesh_layout_parse(free_all[i], &l, &err), 0);
        assert_all_free(&l);
    }
    /* any order */
    assert_int_equal(mesh_layout_parse("mb=8,dp=3,tp=2", &l, &err), 0);
    assert_int_equal(l.tp, 2);
    assert_int_equal(l.dp, 3);
    assert_int_equal(l.micro_batch, 8);
    assert_int_equal(l.pp, MESH_FREE);
}

/* The canonical string writes every field, each from its own field: the
 * numbers are all different so that one written from another shows. */
static void mesh__format__every_field(void **state)
{
    (void)state;
    char buf[MESH_LAYOUT_STR_MAX];
    mesh_layout_t l = {.tp = 2,
                       .pp = 3,
                       .dp = 5,
                       .cp = 7,
                       .zero = 1,
                       .vpp = 11,
                       .micro_batch = 13,
                       .recompute = MESH_RECOMPUTE_NONE,
                       .sequence_parallel = 0,
                       .moments = MESH_PREC_FP32};
    assert_string_equal(mesh_layout_format(&l, buf, sizeof(buf)),
                        "tp=2,pp=3,dp=5,cp=7,zero=1,vpp=11,mb=13,recompute=none,sp=off");
    l = (mesh_layout_t){.tp = 8,
                        .pp = 16,
                        .dp = 128,
                        .cp = 4,
                        .zero = 2,
                        .vpp = 6,
                        .micro_batch = 3,
                        .recompute = MESH_RECOMPUTE_FULL,
                        .recompute_layers = 5,
                        .sequence_parallel = 1,
                        .offload = 1,
                        .moments = MESH_PREC_FP32};
    assert_string_equal(mesh_layout_format(&l, buf, sizeof(buf)),
                        "tp=8,pp=16,dp=128,cp=4,zero=2,vpp=6,mb=3,recompute=full:5,sp=on,"
                        "offload=optimizer");
    l = (mesh_layout_t){.tp = 4,
                        .pp = 9,
                        .dp = 1,
                        .cp = 2,
                        .zero = 3,
                        .vpp = 1,
                        .micro_batch = 24,
                        .recompute = MESH_RECOMPUTE_SELECTIVE,
                        .recompute_modules = MESH_RC_LAYERNORM | MESH_RC_MLP,
                        .sequence_parallel = 1,
                        .moments = MESH_PREC_BF16};
    assert_string_equal(mesh_layout_format(&l, buf, sizeof(buf)),
                        "tp=4,pp=9,dp=1,cp=2,zero=3,vpp=1,mb=24,recompute=selective:layernorm+mlp,"
                        "sp=on,moments=bf16");
    /* full of every layer is plain full; selective of core_attn plain selective */
    l.recompute = MESH_RECOMPUTE_FULL;
    l.recompute_layers = 0;
    l.recompute_modules = 0;
    l.moments = MESH_PREC_FP16;
    assert_string_equal(mesh_layout_format(&l, buf, sizeof(buf)),
                        "tp=4,pp=9,dp=1,cp=2,zero=3,vpp=1,mb=24,recompute=full,sp=on,moments=fp16");
    l.recompute = MESH_RECOMPUTE_SELECTIVE;
    l.recompute_modules = MESH_RC_CORE_ATTN;
    l.moments = MESH_PREC_FP32;
    assert_string_equal(mesh_layout_format(&l, buf, sizeof(buf)),
                        "tp=4,pp=9,dp=1,cp=2,zero=3,vpp=1,mb=24,recompute=selective,sp=on");
    /* a buffer too short is cut, not overrun */
    char small[12];
    memset(small, '#', sizeof(small));
    assert_string_equal(mesh_layout_format(&l, small, sizeof(small)), "tp=4,pp=9,d");
}

/* Canonical strings parse to the layout they were written from, which
 * writes the same string again. */
static void mesh__format__parse_round_trip(void **state)
{
    (void)state;
    static const char *const canon[] = {
        "tp=2,pp=3,dp=5,cp=7,zero=1,vpp=11,mb=13,recompute=none,sp=off",
        "tp=8,pp=16,dp=128,cp=4,zero=2,vpp=6,mb=3,recompute=full:5,sp=on,offload=optimizer",
        "tp=4,pp=9,dp=1,cp=2,zero=3,vpp=1,mb=24,recompute=selective:layernorm+mlp,sp=on,"
        "moments=bf16",
        "tp=1,pp=1,dp=16777216,cp=1,zero=0,vpp=1,mb=65536,recompute=full,sp=off",
        "tp=65536,pp=65536,dp=1,cp=65536,zero=3,vpp=65536,mb=1,recompute=selective,sp=on,"
        "moments=fp16",
        /* the longest there is: MESH_LAYOUT_STR_MAX holds it */
        "tp=65536,pp=65536,dp=16777216,cp=65536,ep=65536,etp=65536,zero=3,vpp=65536,mb=65536,"
        "recompute=selective:core_attn+layernorm+mlp+mla_up_proj,sp=off,offload=optimizer,"
        "moments=bf16,tp_overlap=off",
    };
    static const int fields[][7] = {
        {2, 3, 5, 7, 1, 11, 13},
        {8, 16, 128, 4, 2, 6, 3},
        {4, 9, 1, 2, 3, 1, 24},
        {1, 1, 16777216, 1, 0, 1, 65536},
        {65536, 65536, 1, 65536, 3, 65536, 1},
        {65536, 65536, 16777216, 65536, 3, 65536, 65536},
    };
    for (size_t i = 0; i < sizeof(canon) / sizeof(*canon); i++) {
        mesh_layout_t l = test_layout(canon[i]);
        const int got[] = {l.tp, l.pp, l.dp, l.cp, l.zero, l.vpp, l.micro_batch};
        for (int k = 0; k < 7; k++)
            if (got[k] != fields[i][k])
                fail_msg("%s: field %d is %d, not %d", canon[i], k, got[k], fields[i][k]);
        char buf[MESH_LAYOUT_STR_MAX];
        assert_string_equal(mesh_layout_format(&l, buf, sizeof(buf)), canon[i]);
        assert_true(strlen(canon[i]) < MESH_LAYOUT_STR_MAX);
    }
}

/* The pinned fields in --mesh syntax, in the canonical order. */
static void mesh__format_pins__only_the_pinned(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"auto", "auto"},
        {"mb=4,tp=2", "tp=2,mb=4"},
        {"vpp=3,zero=2,cp=4,dp=6,pp=5,tp=7,mb=9", "tp=7,pp=5,dp=6,cp=4,zero=2,vpp=3,mb=9"},
        {"tp=auto,mb=auto,recompute=auto,sp=auto,offload=auto,moments=auto",
         "tp=auto,mb=auto,recompute=auto,sp=auto,offload=auto,moments=auto"},
        {"moments=bf16,offload=none,sp=off,recompute=full:3",
         "recompute=full:3,sp=off,offload=none,moments=bf16"},
        {"recompute=selective:mlp,offload=optimizer", "recompute=selective:mlp,offload=optimizer"},
        {"tp_overlap=off,tp=8", "tp=8,tp_overlap=off"},
        {"tp_overlap=on", "tp_overlap=on"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        char buf[MESH_LAYOUT_STR_MAX];
        mesh_layout_t l = test_mesh(cases[i].in);
        assert_string_equal(mesh_layout_format_pins(&l, buf, sizeof(buf)), cases[i].out);
    }
}

/* Every --mesh key the library lists in its "unknown key" error is
 * documented in meshplan(1). */
static void mesh__keys_in_the_manual(void **state)
{
    mesh_layout_t l;
    mesh_error_t err;
    assert_int_equal(mesh_layout_parse("zz=1", &l, &err), -1);
    const char *list = strstr(err.msg, "(keys: ");
    assert_non_null(list);
    assert_int_equal(test_man_lists("meshplan.1", list + strlen("(keys: "), ')', " "), 14);
}

/* The one table of keys: each checkpoint dimension is one key's, the
 * advice frees keys in an order without ties, the usage names every key in
 * the table's order, and unpinning frees every key's member. */
static void keys__one_table_for_every_use(void **state)
{
    (void)state;
    int seen[64] = {0};
    assert_true(MESH_LAYOUT_KEYS < 64);
    for (int d = 0; d < MESH_DIM_COUNT; d++) {
        const mesh_layout_key_t *k = mesh_layout_key_of_dim(d);
        assert_non_null(k);
        assert_int_equal(k->dim, d);
    }
    assert_null(mesh_layout_key_of_dim(-1));
    const char *u = mesh_layout_keys_usage();
    mesh_layout_t l;
    mesh_layout_unpin(&l);
    for (int i = 0; i < MESH_LAYOUT_KEYS; i++) {
        const mesh_layout_key_t *k = &mesh_layout_keys[i];
        char item[64];
        snprintf(item, sizeof(item), "%s%s=%s", i ? "," : "", k->key, k->value);
        assert_memory_equal(u, item, strlen(item));
        u += strlen(item);
        assert_true(k->relax >= 0 && k->relax <= MESH_LAYOUT_KEYS);
        if (k->relax)
            assert_int_equal(seen[k->relax]++, 0);
        assert_int_equal(mesh_layout_value(&l, k), MESH_FREE);
    }
    assert_string_equal(u, "");
    assert_int_equal(l.recompute_layers, MESH_FREE);
    assert_int_equal(l.recompute_modules, MESH_FREE);
}

/* ---- mixture of experts, MLA and MTP ---- */

static void check_refused(const mesh_model_t *m, int nodes, const char *mesh, const char *want)
{
    mesh_alloc_t a = test_alloc("H100-SXM", nodes, 8);
    mesh_layout_t l = test_layout(mesh);
    mesh_error_t err;
    if (mesh_layout_check(m, &a, &l, &err) == 0)
        fail_msg("%s accepted", mesh);
    if (!strstr(err.msg, want))
        fail_msg("%s: '%s' lacks '%s'", mesh, err.msg, want);
}

/* TP spans trays where NVLink does (GB200 NVL72: 72 GPUs over trays of 4;
 * NVIDIA ran Nemotron-4 340B at TP 8 on them): whole trays dividing the
 * fabric, and nowhere else, each refusal naming its rule. */
static void layout__tp_across_trays_of_one_fabric(void **state)
{
    (void)state;
    mesh_model_t m = test_preset("nemotron4-340b"); /* 96 heads, 8 KV heads */
    const struct {
        const char *gpu;
        int nodes, gpn, island;  /* island: the admin's or --nvlink's; 0: the table's */
        const char *mesh, *want; /* want: NULL where it is valid */
    } cases[] = {
        {"GB200", 8, 4, 0, "tp=8,pp=4,dp=1", NULL},
        {"GB200", 8, 4, 0, "tp=2,pp=4,dp=4", NULL},
        {"GB300", 8, 4, 0, "tp=8,pp=2,dp=2", NULL},
        {"GB200", 8, 4, 0, "tp=16,pp=2,dp=1",
         "tp 16 must divide a tray's 4 GPUs or be whole trays dividing the NVLink fabric of 72"},
        {"GB200", 12, 4, 0, "tp=6,pp=8,dp=1", "tp 6 must divide a tray's 4 GPUs"},
        {"GB200", 8, 4, 2, "tp=8,pp=4,dp=1", "tp 8 must divide the NVLink island of 2 GPUs"},
        {"GB200", 8, 4, 4, "tp=8,pp=4,dp=1", "tp 8 must divide the NVLink island of 4 GPUs"},
        {"GB200", 8, 4, 72, "tp=8,pp=4,dp=1", NULL},
        {"GB200", 8, 4, 8, "tp=8,pp=4,dp=1", NULL},
        {"GB200", 8, 4, 8, "tp=16,pp=2,dp=1", "or be whole trays dividing the NVLink fabric of 8"},
        {"GB200", 16, 2, 0, "tp=4,pp=8,dp=1", "tp 4 must divide the NVLink island of 2 GPUs"},
        {"H100-SXM", 8, 4, 0, "tp=8,pp=4,dp=1", "tp 8 must divide the NVLink island of 4 GPUs"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        mesh_policy_t pol;
        mesh_alloc_t a;
        mesh_error_t err;
        mesh_policy_init(&pol);
        if (mesh_policy_alloc(&pol.assume, cases[i].gpu, 0, cases[i].island, cases[i].nodes,
                              cases[i].gpn, &a, &err) < 0)
            fail_msg("%s", err.msg);
        char mesh[160];
        snprintf(mesh, sizeof(mesh), "%s,cp=1,zero=1,vpp=1,mb=1,recompute=none,sp=on",
                 cases[i].mesh);
        mesh_layout_t l = test_layout(mesh);
        int rc = mesh_layout_check(&m, &a, &l, &err);
        if (!cases[i].want && rc < 0)
            fail_msg("%s on %s x %d: %s", mesh, cases[i].gpu, cases[i].gpn, err.msg);
        if (cases[i].want && (rc == 0 || !strstr(err.msg, cases[i].want)))
            fail_msg("%s on %s x %d: '%s' lacks '%s'", mesh, cases[i].gpu, cases[i].gpn,
                     rc ? err.msg : "accepted", cases[i].want);
    }
}

/* Megatron-LM's interleaved schedule runs micro-batches in groups of pp
 * (schedules.py: "number of microbatches must be a multiple of pipeline
 * parallel size when using interleaved schedule"): llama3-8b, pp 4 x vpp 2
 * on 8 GPUs (dp 2), global batch 12 is 6 micro-batches, refused; 16 is 8. */
static void layout__interleaved_micro_batches_multiple_of_pp(void **state)
{
    (void)state;
    const char *mesh = "tp=1,pp=4,vpp=2,dp=2,cp=1,zero=1,mb=1,recompute=none,sp=off";
    mesh_model_t m = test_spec("preset: llama3-8b\ntrain: {global_batch: 12}\n");
    check_refused(&m, 1, mesh, "vpp 2: the 6 micro-batches must be a multiple of pp 4");
    m.global_batch = 16;
    mesh_alloc_t a = test_alloc("H100-SXM", 1, 8);
    mesh_layout_t l = test_layout(mesh);
    mesh_error_t err;
    if (mesh_layout_check(&m, &a, &l, &err) < 0)
        fail_msg("%s", err.msg);
}

static void layout__ep_etp_parse_format(void **state)
{
    mesh_layout_t l = test_mesh("ep=8,etp=2");
    assert_int_equal(l.ep, 8);
    assert_int_equal(l.etp, 2);
    assert_int_equal(l.tp, MESH_FREE);
    char buf[MESH_LAYOUT_STR_MAX];
    assert_string_equal(mesh_layout_format_pins(&l, buf, sizeof(buf)), "ep=8,etp=2");
    l = test_mesh("ep=auto");
    assert_int_equal(l.ep, MESH_AUTO);
    assert_int_equal(l.etp, MESH_FREE);
    /* a MoE layout's canonical string carries them after cp, a dense one's not */
    l = test_layout("tp=2,pp=4,dp=8,cp=1,ep=4,etp=2,zero=1,vpp=1,mb=1,recompute=none,sp=on");
    assert_string_equal(mesh_layout_format(&l, buf, sizeof(buf)),
                        "tp=2,pp=4,dp=8,cp=1,ep=4,etp=2,zero=1,vpp=1,mb=1,recompute=none,sp=on");
    assert_int_equal(mesh_layout_edp(&l), 2);
    mesh_layout_t back = test_mesh(buf);
    assert_int_equal(back.ep, 4);
    assert_int_equal(back.etp, 2);
    l.ep = l.etp = 0;
    assert_string_equal(mesh_layout_format(&l, buf, sizeof(buf)),
                        "tp=2,pp=4,dp=8,cp=1,zero=1,vpp=1,mb=1,recompute=none,sp=on");
    assert_int_equal(mesh_layout_edp(&l), 16);
    mesh_error_t err;
    assert_int_equal(mesh_layout_parse("ep=0", &l, &err), -1);
    assert_non_null(strstr(err.msg, "mesh ep"));
    assert_int_equal(mesh_layout_parse("etp=2,etp=4", &l, &err), -1);
    assert_non_null(strstr(err.msg, "etp given twice"));
}

static void layout__expert_rules(void **state)
{
    mesh_model_t m = test_preset("mixtral-8x7b"), d = test_preset("llama3-8b");
    mesh_alloc_t a = test_alloc("H100-SXM", 2, 8);
    mesh_layout_t ok = test_layout("tp=2,pp=2,dp=4,cp=1,ep=8,etp=1,zero=1,vpp=1,mb=1,"
                                   "recompute=none,sp=on");
    mesh_error_t err;
    if (mesh_layout_check(&m, &a, &ok, &err) < 0)
        fail_msg("%s", err.msg);
    /* expert TP as wide as the island, the most it may be */
    mesh_layout_t whole = test_layout("tp=8,pp=1,dp=2,cp=1,ep=2,etp=8,zero=1,vpp=1,mb=1,"
                                      "recompute=none,sp=on");
    if (mesh_layout_check(&m, &a, &whole, &err) < 0)
        fail_msg("etp 8 on an island of 8: %s", err.msg);
    const char *rest = ",zero=1,vpp=1,mb=1,recompute=none";
    char mesh[160];
#define MESH(fmt) (snprintf(mesh, sizeof(mesh), fmt "%s", rest), mesh)
    check_refused(&m, 2, MESH("tp=1,pp=2,dp=8,cp=1,ep=3,etp=1,sp=off"), "ep 3 must divide the 8");
    check_refused(&m, 1, MESH("tp=2,pp=2,dp=2,cp=1,ep=8,etp=1,sp=on"),
                  "ep*etp = 8*1 is more than tp*cp*dp = 2*1*2 = 4");
    check_refused(&m, 2, MESH("tp=1,pp=1,dp=16,cp=1,ep=1,etp=16,sp=off"),
                  "etp 16 must divide the NVLink island of 8");
    check_refused(&m, 2, MESH("tp=2,pp=1,dp=8,cp=1,ep=8,etp=1,sp=off"),
                  "needs sequence parallelism");
    mesh_layout_t zero = ok;
    zero.ep = 0;
    assert_int_equal(mesh_layout_check(&m, &a, &zero, &err), -1);
    assert_non_null(strstr(err.msg, "at least 1"));
    check_refused(&d, 2, MESH("tp=1,pp=1,dp=16,cp=1,ep=2,etp=1,sp=off"),
                  "llama3-8b has no experts");
    mesh_model_t odd = test_spec("arch: {layers: 2, hidden: 64, heads: 4, vocab: 100, "
                                 "moe: {experts: 4, ffn: 30}}\n");
    check_refused(&odd, 1, MESH("tp=1,pp=1,dp=8,cp=1,ep=2,etp=4,sp=off"),
                  "etp 4 must divide the experts' ffn 30");
#undef MESH
    /* a dense layout says 0 or 1 */
    mesh_layout_t dl = test_layout("tp=1,pp=1,dp=16,cp=1,zero=1,vpp=1,mb=1,recompute=none,sp=off");
    dl.ep = dl.etp = 0;
    assert_int_equal(mesh_layout_check(&d, &a, &dl, &err), 0);
    dl.ep = dl.etp = 1;
    assert_int_equal(mesh_layout_check(&d, &a, &dl, &err), 0);
}

/* Wider than the KV heads, TP splits the fused QKV projection's keys and
 * values, 2 x kv_heads x head_dim output columns: one KV head of odd width
 * 9 (18 columns) splits over tp 2, not over tp 4, whatever the heads
 * allow. */
static void tp__splits_the_keys_and_values_columns(void **state)
{
    (void)state;
    mesh_model_t m = test_spec("arch: {layers: 4, hidden: 36, heads: 4, kv_heads: 1, head_dim: 9, "
                               "ffn: 96, vocab: 1024}\ntrain: {seq_len: 1024, global_batch: 8}\n");
    mesh_layout_t pins = test_mesh("tp=2");
    mesh_error_t err = {0};
    assert_int_equal(mesh_layout_check_pins(&m, &pins, &err), 0);
    pins = test_mesh("tp=4");
    assert_int_equal(mesh_layout_check_pins(&m, &pins, &err), -1);
    assert_non_null(strstr(err.msg, "tp 4 must divide the 2 keys and values of 9 each"));
}

/* A size pinned "auto" (MESH_AUTO) or left free (MESH_FREE) is the
 * planner's, and stands as 1 in the pins-only check: a model of odd heads,
 * layers, batch and experts takes "auto" for every size. */
static void pins__auto_stands_as_one(void **state)
{
    (void)state;
    mesh_model_t m =
        test_spec("arch: {layers: 5, hidden: 40, heads: 5, ffn: 105, vocab: 1024, moe: {experts: "
                  "5, top_k: 1, ffn: 35}}\ntrain: {seq_len: 1024, global_batch: 5}\n");
    mesh_error_t err = {0};
    static const char *const pins[] = {"tp=auto,pp=auto,cp=auto,dp=auto,mb=auto,ep=auto,etp=auto",
                                       "auto"};
    for (size_t i = 0; i < sizeof(pins) / sizeof(*pins); i++) {
        mesh_layout_t l = test_mesh(pins[i]);
        if (mesh_layout_check_pins(&m, &l, &err) < 0)
            fail_msg("--mesh %s: %s", pins[i], err.msg);
    }
}

/* A sliding window or sinks alone is enough to keep CP out; neither, and
 * CP plans. */
static void pins__window_or_sinks_without_cp(void **state)
{
    (void)state;
    static const struct {
        const char *arch;
        int refused;
    } cases[] = {{"{window: 4096}", 1}, {"{attention_sinks: true}", 1}, {"{qk_norm: true}", 0}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char spec[128];
        snprintf(spec, sizeof(spec), "preset: llama3-8b\narch: %s\n", cases[i].arch);
        mesh_model_t m = test_spec(spec);
        mesh_layout_t pins = test_mesh("cp=2");
        mesh_error_t err = {0};
        assert_int_equal(mesh_layout_check_pins(&m, &pins, &err), cases[i].refused ? -1 : 0);
        pins = test_mesh("cp=1");
        assert_int_equal(mesh_layout_check_pins(&m, &pins, &err), 0);
    }
}

/* Issue 27: sbatch --mesh=tp=3 (or ep=3 on Mixtral) went to the controller
 * where the CLI refuses it.  The pins-only check refuses exactly what no
 * allocation takes, in mesh_layout_check's words: each pin it refuses is
 * refused by planning on every allocation tried, with the same message,
 * and each it accepts plans somewhere. */
static void pins__refused_before_any_allocation(void **state)
{
    (void)state;
    static const struct {
        const char *model, *mesh, *msg; /* msg NULL: accepted */
    } cases[] = {
        {"llama3-8b", "tp=3", "tp 3 must divide heads 32, and divide kv_heads 8 or be a multiple"},
        {"llama3-8b", "tp=8,pp=4", NULL},
        {"llama3-8b", "pp=33", "pp 33 is more than the 32 layers"},
        {"llama3-8b", "cp=3", "cp 3 needs seq_len 8192 divisible by 2*cp"},
        {"llama3-8b", "dp=3", "global_batch 512 is not a multiple of micro_batch 1 * dp 3"},
        {"llama3-8b", "mb=3", "global_batch 512 is not a multiple of micro_batch 3 * dp 1"},
        {"llama3-8b", "ep=2", "ep 2: llama3-8b has no experts"},
        {"llama3-8b", "auto", NULL},
        {"mixtral-8x7b", "ep=3", "ep 3 must divide the 8 experts"},
        {"mixtral-8x7b", "ep=8,etp=1", NULL},
        {"mixtral-8x7b", "etp=3", "etp 3 must divide the experts' ffn 14336"},
        {"mixtral-8x7b", "recompute=selective:mlp+mla_up_proj",
         "mixtral-8x7b has no latent attention (arch.mla), whose up projections it recomputes; "
         "drop mla_up_proj"},
        {"deepseek-v3", "recompute=selective:mlp+mla_up_proj", NULL},
        /* a sliding window and sinks only without CP, experts with biases
         * only at expert TP 1 */
        {"gpt-oss-20b", "cp=2",
         "cp 2: Transformer Engine runs a sliding window or attention sinks under CP only with "
         "the all-to-all exchange, which meshplan does not price: give cp=1"},
        {"gpt-oss-20b", "etp=2",
         "etp 2: Megatron-LM builds the biases of a quick GeGLU model's experts only with etp=1"},
        {"gpt-oss-20b", "tp=2,ep=8,etp=1", NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        mesh_model_t m = test_preset(cases[i].model);
        mesh_layout_t pins = test_mesh(cases[i].mesh);
        mesh_error_t err = {0};
        int rc = mesh_layout_check_pins(&m, &pins, &err);
        if (!cases[i].msg) {
            assert_int_equal(rc, 0);
            continue;
        }
        if (rc != -1 || !strstr(err.msg, cases[i].msg))
            fail_msg("%s --mesh %s: '%s', wanted '%s'", cases[i].model, cases[i].mesh, err.msg,
                     cases[i].msg);
        /* and planning refuses it on allocations of every shape */
        static const int shapes[][2] = {{1, 8}, {2, 8}, {3, 6}, {4, 4}, {16, 8}};
        for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
            mesh_alloc_t a = test_alloc("H100-SXM", shapes[s][0], shapes[s][1]);
            mesh_policy_t pol;
            mesh_error_t e;
            mesh_policy_init(&pol);
            mesh_plan_t *p = mesh_plan_create(&m, &a, &pins, &pol.assume, &e);
            if (p)
                fail_msg("%s --mesh %s planned on %d x %d", cases[i].model, cases[i].mesh,
                         shapes[s][0], shapes[s][1]);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(layout__ep_etp_parse_format),
        cmocka_unit_test(tp__splits_the_keys_and_values_columns),
        cmocka_unit_test(layout__expert_rules),
        cmocka_unit_test(mesh__keys_in_the_manual),
        cmocka_unit_test(mesh__integer_keys__bounds_and_messages),
        cmocka_unit_test(mesh__word_keys__values_and_messages),
        cmocka_unit_test(mesh__syntax__messages),
        cmocka_unit_test(mesh__format__every_field),
        cmocka_unit_test(mesh__format__parse_round_trip),
        cmocka_unit_test(mesh__format_pins__only_the_pinned),
        cmocka_unit_test(keys__one_table_for_every_use),
        cmocka_unit_test(pins__auto_stands_as_one),
        cmocka_unit_test(pins__refused_before_any_allocation),
        cmocka_unit_test(pins__window_or_sinks_without_cp),
        cmocka_unit_test(layout__interleaved_micro_batches_multiple_of_pp),
        cmocka_unit_test(layout__tp_across_trays_of_one_fabric),
    };
    return cmocka_run_group_tests_name("layout", tests, NULL, NULL);
}
