/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lib/gpu.c: the GPU table, found by its names, the product names drivers
 * print and PCI ids, and the errors for names it does not know.  Figures
 * from the vendors' datasheets as lib/gpu.c cites them.
 */
#include "internal.h" /* mesh_gpu_choices, mesh_gpu_guess, mesh_gpu_same_name */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(find__names_as_users_write_them),
        cmocka_unit_test(table__aliases_and_ids_resolve),
        cmocka_unit_test(lookup__errors_say_what_would),
    };
    return cmocka_run_group_tests_name("gpu", tests, NULL, NULL);
}
