/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lib/gpu.c: the GPU table, found by its names, the product names drivers
 * print and PCI ids, and the errors for names it does not know.  Figures
 * from the vendors' datasheets as lib/gpu.c cites them.
 */
#include "internal.h" /* mesh_gpu_choices, mesh_gpu_guess, mesh_gpu_same_name */
#include <ctype.h>

#include "testutil.h"

/* Names compare without case, vendor words or separators. */
static void find__names_as_users_write_them(void **state)
{
    (void)state;
    const mesh_gpu_t *h = mesh_gpu_find("H100-SXM");
    assert_non_null(h);
    assert_ptr_equal(mesh_gpu_find("h100 sxm"), h);
    assert_ptr_equal(mesh_gpu_find("NVIDIA_H100/SXM"), h);
    assert_ptr_equal(mesh_gpu_find("NVIDIA H100 80GB HBM3"), h); /* nvidia-smi's */
    assert_ptr_equal(mesh_gpu_find_pci(0x10de, 0x2330), h);
    assert_true(h->memory > 79 * 1073741824.0 && h->memory < 80 * 1073741824.0);
    assert_int_equal(h->island, 8);
    assert_null(mesh_gpu_find(NULL));
    assert_null(mesh_gpu_find("H100")); /* several GPUs: the user must say which */
    assert_null(mesh_gpu_find_pci(0x10de, 0xffff));
    assert_ptr_equal(mesh_gpu_default(), h);
    assert_true(mesh_gpu_same_name("nvidia h100-sxm", "H100_SXM"));
    assert_false(mesh_gpu_same_name("H100-SXM", "H100-PCIe"));
}

/* Every product name resolves to a GPU of the table, and every table GPU
 * is found by its own name and PCI ids. */
static void table__aliases_and_ids_resolve(void **state)
{
    (void)state;
    for (int i = 0; i < mesh_gpu_alias_count(); i++) {
        const mesh_gpu_alias_t *a = mesh_gpu_alias_at(i);
        const mesh_gpu_t *g = mesh_gpu_find(a->alias);
        if (!g)
            fail_msg("alias '%s' finds no GPU", a->alias);
        assert_string_equal(g->name, a->name);
    }
    assert_null(mesh_gpu_alias_at(mesh_gpu_alias_count()));
    for (int i = 0; i < mesh_gpu_count(); i++) {
        const mesh_gpu_t *g = mesh_gpu_at(i);
        assert_ptr_equal(mesh_gpu_find(g->name), g);
        if (g->devices[0])
            assert_ptr_equal(mesh_gpu_find_pci(g->vendor_id, g->devices[0]), g);
    }
    assert_null(mesh_gpu_at(-1));
    assert_null(mesh_gpu_at(mesh_gpu_count()));
}

/* A short name lists its GPUs; a typo gets the name it most likely meant. */
static void lookup__errors_say_what_would(void **state)
{
    (void)state;
    mesh_gpu_t g = {0};
    mesh_error_t err;
    assert_int_equal(mesh_gpu_choices("H100"), 3);
    assert_int_equal(mesh_gpu_lookup("H100", &g, &err), -1);
    assert_non_null(strstr(err.msg, "gpu: 'H100' is 3 GPUs: "));
    assert_non_null(strstr(err.msg, "H100-SXM"));
    assert_int_equal(mesh_gpu_lookup("H10O-SXM", &g, &err), -1);
    assert_non_null(strstr(err.msg, "gpu: unknown GPU 'H10O-SXM' (known: "));
    assert_non_null(strstr(err.msg, "; did you mean H100-SXM?"));
    assert_string_equal(mesh_gpu_guess("H10O-SXM"), "H100-SXM");
    assert_null(mesh_gpu_guess("frobnicator"));
    assert_int_equal(mesh_gpu_lookup("B200", &g, &err), 0);
    assert_string_equal(g.name, "B200");
}

/* The entries added for issue 27: each found by the name nvidia-smi (or
 * amd-smi) prints and by its PCI id, with its datasheet's dense figures (the
 * sources in lib/gpu.c), and each plans a small model that fits. */
static void table__datacenter_gpus_resolve_and_plan(void **state)
{
    (void)state;
    static const struct {
        const char *smi, *name;
        unsigned vendor, pci;
        double mib, bf16, fp8; /* MiB reported, dense TFLOP/s */
        int island, blocks;    /* block-scaled FP8: 1 blockwise, 2 MXFP8 too */
        const char *model;
        int nodes;
    } g[] = {
        {"NVIDIA H20", "H20", 0x10de, 0x2329, 97871, 148, 296, 8, 1, "llama3-8b", 1},
        {"NVIDIA L4", "L4", 0x10de, 0x27b8, 23034, 121, 242.5, 1, 0, "llama2-7b", 1},
        {"NVIDIA L40S", "L40S", 0x10de, 0x26b9, 46068, 362, 733, 1, 0, "llama3-8b", 1},
        {"NVIDIA A10", "A10", 0x10de, 0x2236, 23028, 125, 0, 1, 0, "llama2-7b", 1},
        {"NVIDIA A40", "A40", 0x10de, 0x2235, 46068, 149.7, 0, 2, 0, "llama3-8b", 1},
        {"NVIDIA RTX 6000 Ada Generation", "RTX-6000-Ada", 0x10de, 0x26b1, 49140, 364.2, 728.5, 1,
         0, "llama3-8b", 1},
        {"NVIDIA B300 SXM6 AC", "B300", 0x10de, 0x3182, 275040, 2250, 4500, 8, 2, "llama3-8b", 1},
        {"NVIDIA GB200", "GB200", 0x10de, 0x2941, 189471, 2500, 5000, 72, 2, "llama3-8b", 1},
        {"NVIDIA GB300", "GB300", 0x10de, 0x31c2, 256703, 2500, 5000, 72, 2, "llama3-8b", 1},
        {"AMD Instinct MI325X OAM", "MI325X", 0x1002, 0x74a5, 262144, 1307, 2615, 8, 0, "llama3-8b",
         1},
        {"AMD Instinct MI355X OAM", "MI355X", 0x1002, 0x75a3, 294912, 2500, 5000, 8, 0, "llama3-8b",
         1},
    };
    for (size_t i = 0; i < sizeof(g) / sizeof(g[0]); i++) {
        const mesh_gpu_t *t = mesh_gpu_find(g[i].smi);
        if (!t || strcmp(t->name, g[i].name) != 0)
            fail_msg("'%s' is %s, not %s", g[i].smi, t ? t->name : "unknown", g[i].name);
        assert_ptr_equal(mesh_gpu_find(g[i].name), t);
        assert_ptr_equal(mesh_gpu_find_pci(g[i].vendor, g[i].pci), t);
        assert_true(t->memory == g[i].mib * 1048576.0);
        assert_true(t->peak_flops == g[i].bf16 * 1e12 && t->has_bf16);
        assert_true(t->peak_fp8 == g[i].fp8 * 1e12);
        assert_int_equal(t->island, g[i].island);
        assert_int_equal(t->fp8_blocks, g[i].blocks);
        mesh_model_t m = test_preset(g[i].model);
        mesh_alloc_t a = test_alloc(g[i].smi, g[i].nodes, 8);
        mesh_plan_t *p = test_plan(&m, &a, "");
        if (!mesh_plan_fits(p))
            fail_msg("%s on %d x 8 %s does not fit", g[i].model, g[i].nodes, g[i].name);
        mesh_plan_destroy(p);
    }
}

/* NVLink per GPU, one direction: half the bidirectional figure of each
 * vendor datasheet (V100 300 GB/s, A100 600, H100 SXM, H200 and H20 900,
 * B200 1800): a figure counted both ways would price TP and EP traffic
 * inside a node at half its time. */
static void table__nvlink_one_direction(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        double both_ways; /* GB/s, the datasheet's */
    } g[] = {{"V100-32GB", 300}, {"A100-80GB", 600}, {"H100-SXM", 900},
             {"H200", 900},      {"H20", 900},       {"B200", 1800}};
    for (size_t i = 0; i < sizeof(g) / sizeof(g[0]); i++) {
        const mesh_gpu_t *t = mesh_gpu_find(g[i].name);
        assert_non_null(t);
        if (t->link_bw != g[i].both_ways / 2 * 1e9)
            fail_msg("%s: NVLink %.0f GB/s one way, not %.0f", g[i].name, t->link_bw / 1e9,
                     g[i].both_ways / 2);
    }
}

/* fp8_recipe: mxfp8 needs Transformer Engine's MXFP8, compute capability
 * 10.x (Blackwell) only: refused on Hopper with the recipes that run
 * there, planned on B200. */
static void mxfp8__blackwell_only(void **state)
{
    (void)state;
    mesh_model_t m = test_spec("preset: llama3-8b\ntrain: {precision: fp8, fp8_recipe: mxfp8}\n");
    mesh_error_t err;
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    for (int i = 0; i < 2; i++) {
        mesh_alloc_t a = test_alloc(i ? "H200" : "H100-SXM", 1, 8);
        mesh_layout_t pins = test_mesh("auto");
        mesh_plan_t *p = mesh_plan_create(&m, &a, &pins, &pol.assume, &err);
        assert_null(p);
        assert_non_null(strstr(err.msg, "train.fp8_recipe: mxfp8 needs Blackwell"));
    }
    mesh_alloc_t a = test_alloc("B200", 1, 8);
    mesh_plan_t *p = test_plan(&m, &a, "");
    assert_true(mesh_plan_fits(p));
    mesh_plan_destroy(p);
}

/* fp8_recipe: blockwise needs Transformer Engine's block-scaled GEMMs,
 * compute capability 9.0 and up: refused on Ada (8.9) and AMD, whose
 * Transformer Engine refuses it, with the recipes that run there; planned
 * on Hopper and Blackwell. */
static void blockwise__hopper_and_blackwell(void **state)
{
    (void)state;
    mesh_model_t m =
        test_spec("preset: llama3-8b\ntrain: {precision: fp8, fp8_recipe: blockwise}\n");
    mesh_error_t err;
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    const char *refused[] = {"L40S", "RTX-6000-Ada", "MI300X"};
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        mesh_alloc_t a = test_alloc(refused[i], 2, 8);
        mesh_layout_t pins = test_mesh("auto");
        mesh_plan_t *p = mesh_plan_create(&m, &a, &pins, &pol.assume, &err);
        assert_null(p);
        char want[200];
        snprintf(want, sizeof(want),
                 "train.fp8_recipe: blockwise needs Hopper or Blackwell (Transformer Engine's "
                 "block-scaled GEMMs need compute capability 9.0); %s runs delayed or tensorwise",
                 refused[i]);
        assert_string_equal(err.msg, want);
    }
    const char *planned[] = {"H100-SXM", "H20", "B200"};
    for (size_t i = 0; i < sizeof(planned) / sizeof(planned[0]); i++) {
        mesh_alloc_t a = test_alloc(planned[i], 1, 8);
        mesh_plan_t *p = test_plan(&m, &a, "");
        assert_true(mesh_plan_fits(p));
        mesh_plan_destroy(p);
    }
    /* mxfp8 on Ada names the recipes Ada runs, not blockwise */
    m = test_spec("preset: llama3-8b\ntrain: {precision: fp8, fp8_recipe: mxfp8}\n");
    mesh_alloc_t a = test_alloc("L40S", 2, 8);
    mesh_layout_t pins = test_mesh("auto");
    assert_null(mesh_plan_create(&m, &a, &pins, &pol.assume, &err));
    assert_string_equal(err.msg, "train.fp8_recipe: mxfp8 needs Blackwell (compute capability 10); "
                                 "L40S runs delayed or tensorwise");
}

/* A typo is offered only for a GPU of the same model: close names of other
 * GPUs (H20 and H200, A10 and A100, L4 and L40) are not offered for each
 * other, whichever was typed. */
static void typo__close_and_alike_only(void **state)
{
    (void)state;
    static const struct {
        const char *typed, *name;
        int offered;
    } t[] = {
        {"H100-SMX", "H100-SXM", 1},   /* the form factor's letters swapped */
        {"H10O-SXM", "H100-SXM", 1},   /* a letter O for a zero */
        {"A100-80G", "A100-80GB", 1},  /* the memory's unit cut short */
        {"h100 pcie", "H100-PCIe", 1}, /* separators and case: no typo at all */
        {"NVIDIA H100 80GB HBM2", "NVIDIA H100 80GB HBM3", 1},
        {"H20", "H200", 0}, /* 96 GB and 141 GB */
        {"H200", "H20", 0},
        {"A10", "A100", 0}, /* 24 GB and 40 or 80 GB */
        {"A100", "A10", 0},
        {"L4", "L40", 0}, /* 24 GB and 48 GB */
        {"L40", "L4", 0},
        {"L40", "L40S", 0}, /* another GPU, twice as fast */
        {"MI300", "MI300X", 0},
        {"RTX 5000 Ada", "RTX-6000-Ada", 0}, /* 32 GB and 48 GB */
        {"B200", "B300", 0},
        {"H100-SXM", "frobnicator", 0},
        /* how far is judged against the table's name, not what was typed:
         * two characters more than B200's four is too far (what was typed
         * has six, against which two would pass) */
        {"B200-X", "B200", 0},
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        if ((mesh_gpu_typo(t[i].typed, t[i].name) < 3) != t[i].offered)
            fail_msg("'%s' as a typo of %s: %d apart", t[i].typed, t[i].name,
                     mesh_gpu_typo(t[i].typed, t[i].name));
    /* so the errors: a typo names its GPU, a near miss of another GPU none */
    assert_string_equal(mesh_gpu_guess("H100-SMX"), "H100-SXM");
    assert_string_equal(mesh_gpu_guess("NVIDIA H100 80GB HBM2"), "H100-SXM");
    assert_null(mesh_gpu_guess("H20X"));
    assert_null(mesh_gpu_guess("L40"));
    assert_null(mesh_gpu_guess("MI300"));
    assert_null(mesh_gpu_guess("NVIDIA H20-3e")); /* the 141 GB H20: not the table's */
    /* two letters are a typo of a six-letter name, not of a four-letter
     * one: the distance is weighed against the name offered */
    assert_string_equal(mesh_gpu_guess("MI300X-A"), "MI300X");
    assert_null(mesh_gpu_guess("H200-X"));
    mesh_gpu_t g;
    mesh_error_t err;
    assert_int_equal(mesh_gpu_lookup("L40", &g, &err), -1);
    assert_null(strstr(err.msg, "did you mean"));
    /* the known names are all there, whole: the last one too */
    assert_non_null(strstr(err.msg, " MI355X)"));
}

/* Every product name the vendors' tools print (the alias table's, the
 * first too), mistyped by two letters swapped after the model's number
 * ("Tesla V100-SXM2-16BG"), is guessed as its GPU. */
static void typo__every_product_name_mistyped(void **state)
{
    (void)state;
    char typed[64];
    int tried = 0;
    for (int i = 0; i < mesh_gpu_alias_count(); i++) {
        const mesh_gpu_alias_t *al = mesh_gpu_alias_at(i);
        snprintf(typed, sizeof(typed), "%s", al->alias);
        char *at = NULL;
        for (char *c = typed + strcspn(typed, "0123456789"); *c && c[1]; c++)
            if (isalpha((unsigned char)c[0]) && isalpha((unsigned char)c[1]) && c[0] != c[1])
                at = c;
        if (!at)
            continue; /* no two letters after the number: "Tesla T4" */
        char t = at[0];
        at[0] = at[1];
        at[1] = t;
        const char *guess = mesh_gpu_guess(typed);
        if (!guess || strcmp(guess, al->name) != 0)
            fail_msg("'%s' (%s mistyped): %s, not %s", typed, al->alias, guess ? guess : "no guess",
                     al->name);
        tried++;
    }
    assert_true(tried > mesh_gpu_alias_count() / 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(find__names_as_users_write_them),
        cmocka_unit_test(table__aliases_and_ids_resolve),
        cmocka_unit_test(lookup__errors_say_what_would),
        cmocka_unit_test(table__datacenter_gpus_resolve_and_plan),
        cmocka_unit_test(typo__close_and_alike_only),
        cmocka_unit_test(typo__every_product_name_mistyped),
        cmocka_unit_test(table__nvlink_one_direction),
        cmocka_unit_test(mxfp8__blackwell_only),
        cmocka_unit_test(blockwise__hopper_and_blackwell),
    };
    return cmocka_run_group_tests_name("gpu", tests, NULL, NULL);
}
