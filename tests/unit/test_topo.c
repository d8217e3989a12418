/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Topology: this project's fixtures (tests/fixtures/topologies); the real
 * machines' exports are test_topo_real's.
 */
#include <sys/stat.h>
#include <unistd.h>

#include <fcntl.h>

#include "testutil.h"
#include "topoutil.h"

static const char *fixtures(void)
{
    static char dir[1024];
    snprintf(dir, sizeof(dir), "%s/topologies", getenv("MESH_FIXTURES"));
    return dir;
}

/* Every fixture against its expected answer, beside it. */
static void fixtures__expected_answers(void **state)
{
    (void)state;
    assert_int_equal(topo_matches_expected(fixtures(), fixtures()), 4);
}

static void fixture__hgx_h100(void **state)
{
    mesh_topo_t *t = load(fixtures(), "hgx-h100-8gpu.xml");
    expect(t, 8, 0x2330, (int[]){0, 0, 0, 0, 1, 1, 1, 1}, (int[]){0, 0, 0, 0, 0, 0, 0, 0},
           "NVLinkBandwidth");
    assert_int_equal(mesh_topo_numa_count(t), 2);
    assert_string_equal(mesh_topo_gpu(t, 0)->busid, "0000:18:00.0");
    assert_string_equal(mesh_topo_gpu(t, 0)->cpus, "0-7,16-23");
    /* NVML's devices carry no CUDA memory figure: none, 0 as topo.h says */
    for (int i = 0; i < 8; i++)
        assert_true(mesh_topo_gpu(t, i)->reported_mem == 0);
    assert_int_equal(alloc_island(t, 0, "H100-SXM"), 8);
    char sig[128];
    assert_string_equal(mesh_topo_signature(t, NULL, sig, sizeof(sig)), "8 x H100-SXM, islands 8");
    /* a step of one GPU: named by its model too, as the nodes compare them */
    mesh_error_t err;
    assert_int_equal(mesh_topo_select(t, (int[]){5}, 1, &err), 0);
    assert_string_equal(mesh_topo_signature(t, NULL, sig, sizeof(sig)), "1 x H100-SXM, islands 1");
    mesh_topo_destroy(t);
}

static void fixture__two_islands(void **state)
{
    mesh_topo_t *t = load(fixtures(), "two-islands-8gpu.xml");
    expect(t, 8, 0x20b2, (int[]){0, 0, 0, 0, 1, 1, 1, 1}, (int[]){0, 0, 0, 0, 1, 1, 1, 1},
           "NVLinkBandwidth");
    assert_int_equal(alloc_island(t, 0, "A100-80GB"), 4);
    mesh_topo_destroy(t);
    /* a step of 4 GPUs of one island; then 2 of each */
    mesh_error_t err;
    t = load(fixtures(), "two-islands-8gpu.xml");
    assert_int_equal(mesh_topo_select(t, (int[]){7, 4, 5, 6}, 4, &err), 0);
    assert_int_equal(mesh_topo_gpu_count(t), 4);
    /* GPU i for 0 <= i < count only (topo.h): the slot one past the last
     * kept GPU, still in the storage, is no GPU of the step */
    assert_null(mesh_topo_gpu(t, 4));
    assert_null(mesh_topo_gpu(t, -1));
    assert_int_equal(mesh_topo_island_count(t), 1);
    assert_string_equal(mesh_topo_gpu(t, 0)->busid, "0000:87:00.0");
    assert_int_equal(alloc_island(t, 0, "A100-80GB"), 4);
    mesh_topo_destroy(t);
    t = load(fixtures(), "two-islands-8gpu.xml");
    assert_int_equal(mesh_topo_select(t, (int[]){2, 3, 4, 5}, 4, &err), 0);
    assert_int_equal(alloc_island(t, 0, "A100-80GB"), 2);
    assert_int_equal(mesh_topo_select(t, (int[]){0, 9}, 2, &err), -1);
    assert_non_null(strstr(err.msg, "GPU index 9"));
    assert_int_equal(mesh_topo_select(t, (int[]){1, 1}, 2, &err), -1);
    mesh_topo_destroy(t);
}

/* A node of n GPUs (3D controllers of NVIDIA's, bus 0x10 on) under one
 * package, written as hwloc's XML into path; swapped: the first two in
 * the other order (bus 0x11 before 0x10), as a tree may list them. */
static void write_node_as(const char *path, int n, int swapped)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    static const char set[] = "cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" "
                              "complete_nodeset=\"0x1\"";
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM "
            "\"hwloc2.dtd\">\n<topology version=\"2.0\">\n<object type=\"Machine\" "
            "os_index=\"0\" %s allowed_cpuset=\"0x1\" allowed_nodeset=\"0x1\" gp_index=\"1\">\n"
            "<object type=\"Package\" os_index=\"0\" %s gp_index=\"2\">\n"
            "<object type=\"NUMANode\" os_index=\"0\" %s gp_index=\"3\" "
            "local_memory=\"1073741824\"/>\n<object type=\"PU\" os_index=\"0\" %s "
            "gp_index=\"4\"/>\n",
            set, set, set, set);
    for (int i = 0; i < n; i++)
        fprintf(f,
                "<object type=\"PCIDev\" gp_index=\"%d\" pci_busid=\"0000:%02x:00.0\" "
                "pci_type=\"0302 [10de:2330] [10de:16c1] a1\" pci_link_speed=\"0.0\"/>\n",
                100 + i, 0x10 + (swapped && i < 2 ? 1 - i : i));
    fprintf(f, "</object>\n</object>\n</topology>\n");
    assert_int_equal(fclose(f), 0);
}

static void write_node(const char *path, int n)
{
    write_node_as(path, n, 0);
}

/* GPUs that the tree lists out of bus order are Slurm's order after
 * loading, the first two as well as the rest (the CUDA and Slurm
 * indices are by bus id). */
static void load__gpus_in_bus_order(void **state)
{
    (void)state;
    char dir[] = "/tmp/meshplan-topo-XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/node.xml", dir);
    write_node_as(path, 4, 1);
    mesh_error_t err;
    mesh_topo_t *t = mesh_topo_load(path, &err);
    assert_non_null(t);
    for (int i = 0; i < 4; i++) {
        char want[16];
        snprintf(want, sizeof(want), "0000:%02x:00.0", 0x10 + i);
        assert_string_equal(mesh_topo_gpu(t, i)->busid, want);
    }
    mesh_topo_destroy(t);
    unlink(path);
    rmdir(dir);
}

/* MESH_TOPO_MAX_GPUS GPUs, the most a node may have: all of them read, and
 * a step of some of them keeps exactly those, a step of all of them all;
 * one more is refused. */
static void select__on_a_node_of_the_most_gpus(void **state)
{
    (void)state;
    char dir[] = "/tmp/meshplan-topo-XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/node.xml", dir);
    write_node(path, MESH_TOPO_MAX_GPUS);
    mesh_error_t err;
    mesh_topo_t *t = mesh_topo_load(path, &err);
    assert_non_null(t);
    assert_int_equal(mesh_topo_gpu_count(t), MESH_TOPO_MAX_GPUS);
    int pick[] = {MESH_TOPO_MAX_GPUS - 1, 0, 9};
    assert_int_equal(mesh_topo_select(t, pick, 3, &err), 0);
    assert_int_equal(mesh_topo_gpu_count(t), 3);
    assert_string_equal(mesh_topo_gpu(t, 0)->busid, "0000:10:00.0");
    assert_string_equal(mesh_topo_gpu(t, 1)->busid, "0000:19:00.0");
    assert_string_equal(mesh_topo_gpu(t, 2)->busid, "0000:4f:00.0");
    mesh_topo_destroy(t);
    /* a step of all of them: slurmstepd's selection keeps every one */
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    int all[MESH_TOPO_MAX_GPUS + 1];
    for (int i = 0; i <= MESH_TOPO_MAX_GPUS; i++)
        all[i] = MESH_TOPO_MAX_GPUS - 1 - i;
    t = mesh_topo_load(path, &err);
    mesh_topo_t *whole = mesh_topo_load(path, &err);
    assert_non_null(t);
    assert_non_null(whole);
    if (mesh_step_topology(&pol, t, all, MESH_TOPO_MAX_GPUS, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(mesh_topo_gpu_count(t), MESH_TOPO_MAX_GPUS);
    for (int i = 0; i < MESH_TOPO_MAX_GPUS; i++)
        assert_string_equal(mesh_topo_gpu(t, i)->busid, mesh_topo_gpu(whole, i)->busid);
    mesh_topo_destroy(whole);
    assert_int_equal(mesh_step_topology(&pol, t, all, MESH_TOPO_MAX_GPUS + 1, &err), -1);
    assert_string_equal(err.msg, "more than 64 GPUs in the step");
    mesh_topo_destroy(t);
    write_node(path, MESH_TOPO_MAX_GPUS + 1);
    assert_null(mesh_topo_load(path, &err));
    assert_non_null(strstr(err.msg, "more than 64 GPUs in one node"));
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
}

/* Each step's islands are its own: on the node of islands 0-3 and 4-7, a
 * step of GPUs 0-3 has one island; then a step of GPUs 2-5, in the same
 * process, has two (2, 3 and 4, 5), numbered 0 and 1 in bus order, with
 * nothing left of the first step's numbering; and a step of GPUs 4-7 one,
 * numbered 0.  The selections run back to back, so that a renumbering not
 * started afresh would meet what the one before left. */
static void select__islands_renumbered_afresh_each_step(void **state)
{
    (void)state;
    mesh_error_t err;
    mesh_topo_t *t[3];
    for (int i = 0; i < 3; i++)
        t[i] = load(fixtures(), "two-islands-8gpu.xml");
    int rc[3]; /* one statement each: in this order */
    rc[0] = mesh_topo_select(t[0], (int[]){0, 1, 2, 3}, 4, &err);
    rc[1] = mesh_topo_select(t[1], (int[]){2, 3, 4, 5}, 4, &err);
    rc[2] = mesh_topo_select(t[2], (int[]){4, 5, 6, 7}, 4, &err);
    const int islands[3] = {1, 2, 1}, ids[3][4] = {{0, 0, 0, 0}, {0, 0, 1, 1}, {0, 0, 0, 0}};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(rc[i], 0);
        assert_int_equal(mesh_topo_gpu_count(t[i]), 4);
        if (mesh_topo_island_count(t[i]) != islands[i])
            fail_msg("step %d: %d islands, not %d", i, mesh_topo_island_count(t[i]), islands[i]);
        for (int g = 0; g < 4; g++)
            if (mesh_topo_gpu(t[i], g)->island != ids[i][g])
                fail_msg("step %d: GPU %d in island %d, not %d", i, g,
                         mesh_topo_gpu(t[i], g)->island, ids[i][g]);
        mesh_topo_destroy(t[i]);
    }
}

static void fixture__interleaved_islands(void **state)
{
    /* islands 0,2,4,6 and 1,3,5,7: in PCI order no two consecutive GPUs
     * share one, so TP needs tasks bound island by island */
    mesh_topo_t *t = load(fixtures(), "interleaved-islands-8gpu.xml");
    expect(t, 8, 0x20b2, (int[]){0, 0, 0, 0, 1, 1, 1, 1}, (int[]){0, 1, 0, 1, 0, 1, 0, 1},
           "NVLinkBandwidth");
    assert_int_equal(alloc_island(t, 0, "A100-80GB"), 1);
    assert_int_equal(alloc_island(t, 1, "A100-80GB"), 4);
    int order[8];
    mesh_topo_task_order(t, 1, order);
    int want[] = {0, 2, 4, 6, 1, 3, 5, 7};
    for (int i = 0; i < 8; i++)
        assert_int_equal(order[i], want[i]);
    mesh_topo_destroy(t);
}

static void fixture__nvswitch_matrix(void **state)
{
    /* the raw NVML form: GPUs link only to 4 NVSwitches (class 0680), which
     * make them one island */
    mesh_topo_t *t = load(fixtures(), "hgx-h100-nvswitch.xml");
    expect(t, 8, 0x2330, (int[]){0, 0, 0, 0, 1, 1, 1, 1}, (int[]){0, 0, 0, 0, 0, 0, 0, 0},
           "NVLinkBandwidth");
    assert_int_equal(alloc_island(t, 0, "H100-SXM"), 8);
    mesh_topo_destroy(t);
}

/* The HGX H100 fixture edited by the sed script `edit`, loaded. */
static mesh_topo_t *load_hgx_edited(const char *edit)
{
    char path[1024], cmd[2200];
    mesh_error_t err;
    snprintf(path, sizeof(path), "/tmp/meshplan-topo-%d.xml", (int)getpid());
    snprintf(cmd, sizeof(cmd), "sed '%s' '%s/hgx-h100-8gpu.xml' > %s", edit, fixtures(), path);
    assert_int_equal(system(cmd), 0);
    mesh_topo_t *t = mesh_topo_load(path, &err);
    unlink(path);
    if (!t)
        fail_msg("%s", err.msg);
    return t;
}

static void fixture__unknown_gpu(void **state)
{
    /* the same node with a PCI id no table knows */
    mesh_error_t err;
    mesh_topo_t *t = load_hgx_edited("s/\\[10de:2330\\]/[10de:9999]/");
    mesh_policy_t pol;
    mesh_alloc_t a;
    mesh_policy_init(&pol);
    assert_int_equal(mesh_topo_alloc(t, &pol.assume, 1, 0, &a, &err), -1);
    assert_non_null(strstr(err.msg, "10de:9999"));
    assert_non_null(strstr(err.msg, "gpu.NAME.pci"));
    /* the admin names it; the allocation is made whole, whatever *out held
     * (its host memory unknown: the plugin plans offload against --mem) */
    assert_int_equal(mesh_policy_set_arg(&pol, "gpu.H100-SXM.pci=10de:9999", &err), 0);
    memset(&a, 0xff, sizeof(a));
    assert_int_equal(mesh_topo_alloc(t, &pol.assume, 1, 0, &a, &err), 0);
    assert_string_equal(a.gpu.name, "H100-SXM");
    assert_true(a.host_memory == 0 && a.nodes == 1 && a.gpus_per_node == 8 && a.island == 8);
    mesh_topo_destroy(t);
    assert_null(mesh_topo_load("/nonexistent.xml", &err));
    assert_non_null(strstr(err.msg, "/nonexistent.xml"));
}

/* One node, one GPU model: the HGX H100 fixture with one GPU an A100 is
 * refused, naming both and where; a node where hwloc sees no GPU is
 * refused with what to give instead. */
static void alloc__mixed_or_no_gpus_refused(void **state)
{
    (void)state;
    char path[1024];
    mesh_error_t err;
    mesh_topo_t *t = load_hgx_edited("0,/\\[10de:2330\\]/s//[10de:20b2]/"); /* the first GPU */
    assert_int_equal(mesh_topo_gpu_count(t), 8);
    mesh_policy_t pol;
    mesh_alloc_t a;
    mesh_policy_init(&pol);
    assert_int_equal(mesh_topo_alloc(t, &pol.assume, 1, 0, &a, &err), -1);
    assert_non_null(strstr(err.msg, "topology: mixed GPUs in one node ("));
    assert_non_null(strstr(err.msg, "H100-SXM at 0000:"));
    assert_non_null(strstr(err.msg, "A100-80GB at 0000:"));
    mesh_topo_destroy(t);
    snprintf(path, sizeof(path), "/tmp/meshplan-topo-none-%d.xml", (int)getpid());
    write_node(path, 0);
    assert_non_null(t = mesh_topo_load(path, &err));
    unlink(path);
    assert_int_equal(mesh_topo_gpu_count(t), 0);
    assert_int_equal(mesh_topo_alloc(t, &pol.assume, 1, 0, &a, &err), -1);
    assert_string_equal(err.msg, "topology: hwloc found no GPU (lstopo shows what it sees); "
                                 "without one, name the GPU (gpu= or --gpu)");
    mesh_topo_destroy(t);
}

/* The HGX H100 fixture with GPU 0's host bridge moved from package 0 to
 * the machine, into dir/gpu-under-machine.xml: its nearest CPU ancestor
 * then spans both NUMA nodes. */
static void write_gpu_under_machine(const char *dir)
{
    char path[1024], line[4096];
    snprintf(path, sizeof(path), "%s/hgx-h100-8gpu.xml", fixtures());
    FILE *in = fopen(path, "r");
    snprintf(path, sizeof(path), "%s/gpu-under-machine.xml", dir);
    FILE *out = fopen(path, "w");
    assert_true(in && out);
    char *block = NULL;
    size_t block_len = 0;
    FILE *b = open_memstream(&block, &block_len);
    int state = 0; /* 0: before the bridge, 1: in it, 2: after it */
    const char *bridge = "      <object type=\"Bridge\""; /* a host bridge, under package 0 */
    while (fgets(line, sizeof(line), in)) {
        if (state == 0 && !strncmp(line, bridge, strlen(bridge)))
            state = 1;
        if (state == 1) {
            fputs(line, b);
            if (!strcmp(line, "      </object>\n"))
                state = 2;
            continue;
        }
        if (state == 2 && !strcmp(line, "  </object>\n")) { /* the machine's end */
            fclose(b);
            fputs(block, out);
            state = 3;
        }
        fputs(line, out);
    }
    assert_int_equal(state, 3);
    free(block);
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

/* A GPU hanging under both NUMA nodes (its nearest CPU ancestor the
 * machine) has no NUMA node of its own, and its task is bound to none:
 * no MESH_NUMA_NODE; the GPUs under a package keep theirs. */
static void numa__gpu_under_both_nodes_has_none(void **state)
{
    (void)state;
    char dir[] = "/tmp/meshplan-numa-XXXXXX", path[1100], vis[16];
    assert_non_null(mkdtemp(dir));
    write_gpu_under_machine(dir);
    mesh_topo_t *t = load(dir, "gpu-under-machine.xml");
    assert_int_equal(mesh_topo_gpu_count(t), 8);
    assert_string_equal(mesh_topo_gpu(t, 0)->busid, "0000:18:00.0");
    assert_int_equal(mesh_topo_gpu(t, 0)->numa, -1);
    assert_int_equal(mesh_topo_gpu(t, 1)->numa, 0);
    assert_int_equal(mesh_topo_gpu(t, 4)->numa, 1);
    mesh_error_t err;
    mesh_task_t task = {.node = 0, .local = 0, .master_addr = "n1", .numa_node = -1};
    assert_int_equal(mesh_env_task_topology(&task, t, 1, NULL, vis, sizeof(vis), &err), 0);
    assert_string_equal(task.gpu_busid, "0000:18:00.0");
    assert_int_equal(task.numa_node, -1);
    task.local = 1;
    assert_int_equal(mesh_env_task_topology(&task, t, 1, NULL, vis, sizeof(vis), &err), 0);
    assert_int_equal(task.numa_node, 0);
    mesh_topo_destroy(t);
    snprintf(path, sizeof(path), "%s/gpu-under-machine.xml", dir);
    unlink(path);
    rmdir(dir);
}

static void tasks__gpu_numa_and_binding(void **state)
{
    mesh_topo_t *t = load(fixtures(), "two-islands-8gpu.xml");
    mesh_model_t m = test_preset("llama3-8b");
    mesh_alloc_t a;
    mesh_error_t err;
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    assert_int_equal(mesh_topo_alloc(t, &pol.assume, 2, 1, &a, &err), 0);
    mesh_plan_t *p = mesh_plan_create(&m, &a, NULL, &pol.assume, &err);
    assert_non_null(p);
    char vis[16];
    mesh_task_t task = {.node = 1, .local = 5, .master_addr = "n1", .numa_node = -1};
    assert_int_equal(
        mesh_env_task_topology(&task, t, 1, "10,11,12,13,14,15,16,17", vis, sizeof(vis), &err), 0);
    assert_string_equal(task.gpu_busid, "0000:90:00.0");
    assert_int_equal(task.numa_node, 1);
    assert_string_equal(task.cuda_visible, "15");
    assert_null(task.rocr_visible);
    mesh_env_t *e = mesh_env_create(p, &task, &err);
    int found = 0;
    for (int i = 0; i < mesh_env_count(e); i++)
        found += strcmp(mesh_env_name(e, i), "MESH_GPU_BUSID") == 0 ||
                 strcmp(mesh_env_name(e, i), "MESH_NUMA_NODE") == 0 ||
                 strcmp(mesh_env_name(e, i), "CUDA_VISIBLE_DEVICES") == 0;
    assert_int_equal(found, 3);
    mesh_env_destroy(e);
    /* filled again without binding: no device left over from before */
    assert_int_equal(mesh_env_task_topology(&task, t, 0, NULL, vis, sizeof(vis), &err), 0);
    assert_null(task.cuda_visible);
    assert_null(task.rocr_visible);
    task.local = 8;
    assert_int_equal(mesh_env_task_topology(&task, t, 1, NULL, vis, sizeof(vis), &err), -1);
    mesh_plan_destroy(p);
    mesh_topo_destroy(t);
}

static void minors__map_to_bus_order(void **state)
{
    /* the driver's minors in reverse bus order: /dev/nvidia0 is the last GPU */
    mesh_topo_t *t = load(fixtures(), "hgx-h100-8gpu.xml");
    char dir[] = "/tmp/meshplan-minors-XXXXXX", path[256];
    assert_non_null(mkdtemp(dir));
    for (int g = 0; g < 8; g++) {
        snprintf(path, sizeof(path), "%s/%s", dir, mesh_topo_gpu(t, g)->busid);
        mkdir(path, 0755);
        strcat(path, "/information");
        FILE *f = fopen(path, "w");
        fprintf(f, "Model: \t\t NVIDIA H100 80GB HBM3\nDevice Minor: \t %d\n", 7 - g);
        fclose(f);
    }
    int idx[] = {0, 1}; /* Slurm's /dev/nvidia0 and /dev/nvidia1 */
    mesh_error_t err;
    assert_int_equal(mesh_topo_minors_to_positions(t, dir, idx, 2, &err), 0);
    assert_int_equal(idx[0], 7);
    assert_int_equal(idx[1], 6);
    int bad[] = {8};
    assert_int_equal(mesh_topo_minors_to_positions(t, dir, bad, 1, &err), -1);
    assert_non_null(strstr(err.msg, "nvidia8"));
    assert_int_equal(mesh_topo_minors_to_positions(t, "/nonexistent", idx, 1, &err), -1);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    mesh_topo_destroy(t);
}

/* MI300X-class GPUs show as processing accelerators (PCI class 1200), not
 * display controllers (03xx; amdgpu's MI300X in lspci: "Processing
 * accelerators [1200]: Advanced Micro Devices ... [1002:74a1]"): the H100
 * fixture with each GPU's class and IDs made an MI300X's has 8 of them. */
static void gpus__processing_accelerators(void **state)
{
    (void)state;
    char path[] = "/tmp/meshplan-topo-XXXXXX", cmd[1024];
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    snprintf(cmd, sizeof(cmd),
             "sed 's/pci_type=\"0302 \\[10de:2330\\]/pci_type=\"1200 [1002:74a1]/' "
             "%s/topologies/hgx-h100-8gpu.xml >%s",
             getenv("MESH_FIXTURES"), path);
    assert_int_equal(system(cmd), 0);
    mesh_topo_t *t = load("/tmp", strrchr(path, '/') + 1);
    assert_int_equal(mesh_topo_gpu_count(t), 8);
    for (int i = 0; i < 8; i++) {
        assert_int_equal(mesh_topo_gpu(t, i)->vendor_id, 0x1002);
        assert_int_equal(mesh_topo_gpu(t, i)->device_id, 0x74a1);
        assert_int_equal(mesh_topo_gpu(t, i)->class_id, 0x1200); /* as topo.h documents it */
    }
    mesh_alloc_t a;
    mesh_error_t err;
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    assert_int_equal(mesh_topo_alloc(t, &pol.assume, 1, 0, &a, &err), 0);
    assert_string_equal(a.gpu.name, "MI300X");
    mesh_topo_destroy(t);
    unlink(path);
}

/* The NVSwitch fixture with its NVLink matrix cut to two objects, `pair`
 * (hwloc's indexes, "OSDev:155 PCIDev:110"), of bandwidths `values`. */
static mesh_topo_t *load_pair_matrix(const char *pair, const char *values, char *path)
{
    char from[1024], xml[65536];
    snprintf(from, sizeof(from), "%s/topologies/hgx-h100-nvswitch.xml", getenv("MESH_FIXTURES"));
    FILE *in = fopen(from, "r");
    assert_non_null(in);
    size_t n = fread(xml, 1, sizeof(xml) - 1, in);
    fclose(in);
    xml[n] = '\0';
    char *start = strstr(xml, "  <distances2hetero"), *end = strstr(xml, "</distances2hetero>");
    assert_true(start && end && n < sizeof(xml) - 1);
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *out = fdopen(fd, "w");
    fprintf(out,
            "%.*s  <distances2hetero nbobjs=\"2\" kind=\"25\" name=\"NVLinkBandwidth\">\n"
            "    <indexes length=\"%zu\">%s </indexes>\n"
            "    <u64values length=\"%zu\">%s </u64values>\n  %s",
            (int)(start - xml), xml, strlen(pair) + 1, pair, strlen(values) + 1, values, end);
    assert_int_equal(fclose(out), 0);
    return load("/tmp", strrchr(path, '/') + 1);
}

/* A matrix is believed as it stands, even one that links GPU 0 alone (to
 * an NVSwitch; NVML reporting the other GPUs' links down): the GPUs it
 * leaves out are each an island of their own, not joined by the H100
 * board's usual rule.  And one whose first object, GPU 0, links to GPU 1:
 * one island, found from either end of the link (the union-find looks at
 * every pair, the first object's included). */
static void islands__matrix_as_it_stands(void **state)
{
    (void)state;
    static const char linked[] = "1000000 125000 125000 1000000";
    static const struct {
        const char *pair, *values;
        int island[8], count;
        const char *links;
    } cases[] = {
        {"OSDev:155 PCIDev:110", linked, {0, 1, 2, 3, 4, 5, 6, 7}, 8, "NVLinkBandwidth"},
        {"OSDev:155 OSDev:156", linked, {0, 0, 1, 2, 3, 4, 5, 6}, 7, "NVLinkBandwidth"},
        /* any bandwidth above 0 is a link, 1 MB/s too */
        {"OSDev:155 OSDev:156", "1 1 1 1", {0, 0, 1, 2, 3, 4, 5, 6}, 7, "NVLinkBandwidth"},
        /* no GPU in it: nothing to believe, the H100 board's rule stands */
        {"PCIDev:110 PCIDev:111", linked, {0, 0, 0, 0, 0, 0, 0, 0}, 1, "rule"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char path[] = "/tmp/meshplan-topo-XXXXXX";
        mesh_topo_t *t = load_pair_matrix(cases[i].pair, cases[i].values, path);
        expect(t, 8, 0x2330, (int[]){0, 0, 0, 0, 1, 1, 1, 1}, cases[i].island, cases[i].links);
        assert_int_equal(mesh_topo_island_count(t), cases[i].count);
        mesh_topo_destroy(t);
        unlink(path);
    }
}

static void live__this_machine(void **state)
{
    /* whatever this machine has (CI machines have no GPU), discovery works */
    mesh_error_t err;
    mesh_topo_t *t = mesh_topo_load(NULL, &err);
    if (!t)
        fail_msg("%s", err.msg);
    assert_true(mesh_topo_numa_count(t) >= 1);
    mesh_topo_destroy(t);
}

/* err may be NULL, as everywhere in the library: a bounded load that fails
 * in time (a file that is not XML) returns NULL without a message. */
static void timeout__null_err(void **state)
{
    char path[] = "/tmp/meshplan-badxml-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "not xml", 7), 7);
    close(fd);
    assert_null(mesh_topo_load_timeout(path, 5, NULL));
    assert_int_equal(mesh_topo_save_timeout("/nonexistent-dir/topo.xml", 5, NULL), -1);
    /* a machine hwloc cannot read (here HWLOC_XMLFILE's file, not XML) is
     * no topology saved: refused, and nothing written */
    char saved[64];
    mesh_error_t err;
    snprintf(saved, sizeof(saved), "%s.saved", path);
    setenv("HWLOC_XMLFILE", path, 1);
    assert_int_equal(mesh_topo_save(saved, &err), -1);
    unsetenv("HWLOC_XMLFILE");
    assert_string_equal(err.msg, "topology: hwloc cannot load this machine");
    assert_int_equal(access(saved, F_OK), -1);
    unlink(path);
}

/* A bounded save writes "this machine" (here HWLOC_XMLFILE's fixture) to
 * the file, which loads back as the same node: every GPU's bus, model,
 * NUMA node, island and CPUs, as meshplan topo lists them. */
static void timeout__bounded_save_writes_the_file(void **state)
{
    char dir[] = "/tmp/meshplan-save-XXXXXX", saved[80], xml[1100];
    mesh_error_t err;
    assert_non_null(mkdtemp(dir));
    snprintf(saved, sizeof(saved), "%s/saved.xml", dir);
    snprintf(xml, sizeof(xml), "%s/hgx-h100-8gpu.xml", fixtures());
    setenv("HWLOC_XMLFILE", xml, 1);
    if (mesh_topo_save_timeout(saved, 5, &err) < 0)
        fail_msg("%s", err.msg);
    /* a target that cannot be written names the file, then why */
    char missing[96], want[160];
    snprintf(missing, sizeof(missing), "%s/missing/saved.xml", dir);
    assert_int_equal(mesh_topo_save_timeout(missing, 5, &err), -1);
    snprintf(want, sizeof(want), "topology: cannot save '%s': ", missing);
    assert_memory_equal(err.msg, want, strlen(want));
    unsetenv("HWLOC_XMLFILE");
    mesh_topo_t *t = mesh_topo_load_timeout(saved, 5, &err), *f = mesh_topo_load(xml, &err);
    if (!t || !f)
        fail_msg("%s", err.msg);
    assert_int_equal(mesh_topo_gpu_count(t), 8);
    mesh_policy_t pol;
    mesh_policy_init(&pol);
    char *as_saved = mesh_listing_topo(t, "x", &pol, 1),
         *as_fixture = mesh_listing_topo(f, "x", &pol, 1);
    assert_string_equal(as_saved, as_fixture);
    free(as_saved);
    free(as_fixture);
    mesh_topo_destroy(f);
    mesh_topo_destroy(t);
    unlink(saved);
    rmdir(dir);
}

/* A FIFO nobody writes to stands for a wedged sysfs or file system: the
 * bounded load gives up in time, and its thread cleans up once unblocked. */
static void timeout__bounded_load(void **state)
{
    char dir[] = "/tmp/meshplan-fifo-XXXXXX", fifo[64];
    mesh_error_t err;
    assert_non_null(mkdtemp(dir));
    snprintf(fifo, sizeof(fifo), "%s/topo.xml", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_null(mesh_topo_load_timeout(fifo, 0.3, &err));
    assert_non_null(strstr(err.msg, "took more than 0.3 s"));
    assert_non_null(strstr(err.msg, "topology_timeout"));
    /* live discovery reads HWLOC_XMLFILE when set: the same, and for saving */
    setenv("HWLOC_XMLFILE", fifo, 1);
    assert_null(mesh_topo_load_timeout(NULL, 0.3, &err));
    assert_non_null(strstr(err.msg, "this machine"));
    char saved[80];
    snprintf(saved, sizeof(saved), "%s/saved.xml", dir);
    assert_int_equal(mesh_topo_save_timeout(saved, 0.3, &err), -1);
    /* Unblock the abandoned loads (each reads garbage and gives up).  A
     * blocking open for writing would wait forever for a loader thread that
     * has not opened the FIFO yet, so open without blocking, which fails
     * (ENXIO) while no reader holds it, for at most 5 s.  HWLOC_XMLFILE
     * stays set until then: a thread that had not read it yet would
     * otherwise discover this machine instead. */
    int unblocked = 0;
    for (int tries = 0; tries < 500 && unblocked < 3; tries++) {
        int fd = open(fifo, O_WRONLY | O_NONBLOCK);
        if (fd < 0) {
            usleep(10000);
            continue;
        }
        ssize_t w = write(fd, "not xml", 7);
        (void)w;
        close(fd);
        unblocked++;
        usleep(10000);
    }
    unsetenv("HWLOC_XMLFILE");
    assert_true(unblocked >= 1);
    usleep(300000);
    /* in time, the same topology as without a bound */
    char path[512];
    snprintf(path, sizeof(path), "%s/topologies/two-islands-8gpu.xml", getenv("MESH_FIXTURES"));
    mesh_topo_t *t = mesh_topo_load_timeout(path, 5, &err);
    assert_non_null(t);
    assert_int_equal(mesh_topo_gpu_count(t), 8);
    assert_int_equal(mesh_topo_island_count(t), 2);
    mesh_topo_destroy(t);
    unlink(fifo);
    rmdir(dir);
}

/* Loading a topology, selecting a step's GPUs, and refusing a file that
 * is not one give back every byte they take (hwloc's with them). */
static void topo_work(void)
{
    mesh_topo_t *t = load(fixtures(), "two-islands-8gpu.xml");
    mesh_error_t err;
    assert_int_equal(mesh_topo_select(t, (int[]){2, 3, 4, 5}, 4, &err), 0);
    mesh_topo_destroy(t);
    char path[1024];
    snprintf(path, sizeof(path), "%s/README.md", fixtures());
    assert_null(mesh_topo_load(path, &err));
}

static void topo__returns_all_its_memory(void **state)
{
    (void)state;
    test_gives_back(topo_work, "loading a topology");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fixtures__expected_answers),
        cmocka_unit_test(fixture__hgx_h100),
        cmocka_unit_test(fixture__two_islands),
        cmocka_unit_test(topo__returns_all_its_memory),
        cmocka_unit_test(select__islands_renumbered_afresh_each_step),
        cmocka_unit_test(select__on_a_node_of_the_most_gpus),
        cmocka_unit_test(load__gpus_in_bus_order),
        cmocka_unit_test(fixture__interleaved_islands),
        cmocka_unit_test(fixture__nvswitch_matrix),
        cmocka_unit_test(fixture__unknown_gpu),
        cmocka_unit_test(alloc__mixed_or_no_gpus_refused),
        cmocka_unit_test(tasks__gpu_numa_and_binding),
        cmocka_unit_test(numa__gpu_under_both_nodes_has_none),
        cmocka_unit_test(minors__map_to_bus_order),
        cmocka_unit_test(gpus__processing_accelerators),
        cmocka_unit_test(islands__matrix_as_it_stands),
        cmocka_unit_test(live__this_machine),
        cmocka_unit_test(timeout__null_err),
        cmocka_unit_test(timeout__bounded_save_writes_the_file),
        cmocka_unit_test(timeout__bounded_load),
    };
    return cmocka_run_group_tests_name("topo", tests, NULL, NULL);
}
