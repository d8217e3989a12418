/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Topology: real machines' hwloc exports, from ../shared/topologies, each
 * against its expected answer in tests/fixtures/topologies/expected.MACHINE
 * (what `meshplan topo` shows of it; the file says why it matters).
 *
 * They are others' data (hwloc's BSD and mpibind's MIT licences), kept
 * beside the project rather than in it, as ../shared/topologies/README.md
 * asks; the expected answers are ours.  Adding a machine is adding its XML
 * there and its expected file here.  Without them this suite reports SKIP
 * (exit 77), never a PASS that ran nothing, and tests/run-all counts that
 * SKIP as a failure, so CI always runs it.  test_topo covers NVLink islands
 * on this project's own fixtures; the POWER CPU links, XGMI and the rule
 * for nodes without a matrix are tested only here.
 */
#include <unistd.h>

#include "testutil.h"
#include "topoutil.h"

static const char *real_dir;

static void real__expected_answers(void **state)
{
    (void)state;
    char expected[1024];
    snprintf(expected, sizeof(expected), "%s/topologies", getenv("MESH_FIXTURES"));
    assert_int_equal(topo_matches_expected(real_dir, expected), 7);
}

/* What the listing does not show: the T4's memory is CUDA's figure from
 * the file, to the byte. */
static void real__reported_memory(void **state)
{
    (void)state;
    mesh_topo_t *t = load(real_dir, "llnl-g4dnmetal.xml");
    assert_true(mesh_topo_gpu(t, 0)->reported_mem == 15472384.0 * 1024);
    mesh_topo_destroy(t);
}

/* Islands by the GPU table's rule (no NVLink matrix): PCIe T4s are each
 * their own, eight islands of one, none empty, in the JSON too. */
static void real__islands_by_rule(void **state)
{
    (void)state;
    mesh_topo_t *t = load(real_dir, "llnl-g4dnmetal.xml");
    assert_string_equal(mesh_topo_links(t), "rule");
    assert_int_equal(mesh_topo_island_count(t), 8);
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    char *json = mesh_listing_topo(t, "x", &pol, 1);
    assert_non_null(strstr(json, "\"islands\":[[0],[1],[2],[3],[4],[5],[6],[7]],"));
    free(json);
    mesh_topo_destroy(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(real__expected_answers),
        cmocka_unit_test(real__reported_memory),
        cmocka_unit_test(real__islands_by_rule),
    };
    real_dir = getenv("MESH_SHARED_TOPOLOGIES");
    if (!real_dir || access(real_dir, R_OK) != 0) {
        fprintf(stderr, "test_topo_real: %s is absent: the real machines' topologies are skipped\n",
                real_dir ? real_dir : "MESH_SHARED_TOPOLOGIES");
        return 77;
    }
    return cmocka_run_group_tests_name("topo_real", tests, NULL, NULL);
}
