/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Topology: real machines' hwloc exports, from ../shared/topologies.
 *
 * They are others' data (hwloc's BSD and mpibind's MIT licences), kept
 * beside the project rather than in it, as ../shared/topologies/README.md
 * asks.  Without them this suite reports SKIP (exit 77), never a PASS that
 * ran nothing, and tests/run-all counts that SKIP as a failure, so CI
 * always runs it.  test_topo covers NVLink islands everywhere on this
 * project's own fixtures; the POWER CPU links, XGMI and the rule for nodes
 * without a matrix are tested only here.
 */
#include <unistd.h>

#include "testutil.h"
#include "topoutil.h"

static const char *real_dir;

static void real__nvlink_pairs_power8(void **state)
{
    const char *d = real_dir;
    /* POWER8 Minsky: NVLink joins GPU pairs, and each GPU to its CPU: the
     * CPU links must not merge the pairs */
    mesh_topo_t *t = load(d, "ibm-power8-4xp100-nvlink.xml");
    expect(t, 4, 0x15f9, (int[]){0, 0, 1, 1}, (int[]){0, 0, 1, 1}, "NVLinkBandwidth");
    assert_int_equal(mesh_topo_numa_count(t), 2);
    assert_int_equal(alloc_island(t, 0, "P100-SXM2"), 2);
    mesh_topo_destroy(t);
}

static void real__nvswitch_dgx2(void **state)
{
    const char *d = real_dir;
    /* DGX-2: 16 V100 on two baseboards of 6 NVSwitches each; NVML reports
     * GPU-to-switch links only, none between the baseboards' switches, so
     * the file shows two islands of 8 */
    mesh_topo_t *t = load(d, "nvidia-dgx2.xml");
    int numa[16], island[16];
    for (int i = 0; i < 16; i++)
        numa[i] = island[i] = i / 8;
    expect(t, 16, 0x1db8, numa, island, "NVLinkBandwidth");
    assert_int_equal(mesh_topo_island_count(t), 2);
    assert_int_equal(alloc_island(t, 0, "V100-SXM3-32GB"), 8);
    mesh_topo_destroy(t);
}

static void real__xgmi_mi250x(void **state)
{
    const char *d = real_dir;
    /* Tioga (MI250X): 8 GCDs, all-to-all XGMI; each hangs under an L3 of
     * one NUMA node, not in bus order */
    mesh_topo_t *t = load(d, "llnl-eas-tioga.xml");
    expect(t, 8, 0x7408, (int[]){3, 3, 1, 1, 0, 0, 2, 2}, (int[]){0, 0, 0, 0, 0, 0, 0, 0},
           "XGMIBandwidth");
    assert_int_equal(mesh_topo_numa_count(t), 4);
    assert_int_equal(alloc_island(t, 0, "MI250X"), 8);
    mesh_topo_destroy(t);
}

static void real__rules_without_links(void **state)
{
    const char *d = real_dir;
    /* Lassen (POWER9, V100 SXM2): no matrix in the file; SXM parts form one
     * island by rule */
    mesh_topo_t *t = load(d, "llnl-coral-lassen.xml");
    expect(t, 4, 0x1db1, (int[]){0, 0, 8, 8}, (int[]){0, 0, 0, 0}, "rule");
    assert_int_equal(alloc_island(t, 0, "V100-16GB"), 4);
    mesh_topo_destroy(t);
    /* PCIe-only machines: every GPU is its own island, TP is impossible */
    t = load(d, "llnl-g4dnmetal.xml");
    expect(t, 8, 0x1eb8, (int[]){0, 0, 0, 0, 1, 1, 1, 1}, (int[]){0, 1, 2, 3, 4, 5, 6, 7}, "rule");
    assert_int_equal(alloc_island(t, 0, "T4"), 1);
    assert_true(mesh_topo_gpu(t, 0)->reported_mem == 15472384.0 * 1024); /* CUDA's figure */
    mesh_topo_destroy(t);
    t = load(d, "llnl-cts1-pascal.xml");
    expect(t, 2, 0x15f8, (int[]){0, 0}, (int[]){0, 1}, "rule");
    assert_int_equal(alloc_island(t, 0, "P100-PCIe"), 1);
    mesh_topo_destroy(t);
    t = load(d, "llnl-epyc-corona-p2.xml");
    expect(t, 8, 0x66a1, (int[]){0, 0, 0, 0, 1, 1, 1, 1}, (int[]){0, 1, 2, 3, 4, 5, 6, 7}, "rule");
    assert_int_equal(alloc_island(t, 0, "MI50-32GB"), 1);
    mesh_topo_destroy(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(real__nvlink_pairs_power8),
        cmocka_unit_test(real__nvswitch_dgx2),
        cmocka_unit_test(real__xgmi_mi250x),
        cmocka_unit_test(real__rules_without_links),
    };
    real_dir = getenv("MESH_SHARED_TOPOLOGIES");
    if (!real_dir || access(real_dir, R_OK) != 0) {
        fprintf(stderr, "test_topo_real: %s is absent: the real machines' topologies are skipped\n",
                real_dir ? real_dir : "MESH_SHARED_TOPOLOGIES");
        return 77;
    }
    return cmocka_run_group_tests_name("topo_real", tests, NULL, NULL);
}
