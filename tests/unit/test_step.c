/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The decisions about a step that srun, slurmstepd, slurmctld and the CLI
 * share (lib/step.c): shapes from Slurm's numbers, TRES strings, nodes'
 * likeness, the topology fallback and the node's allocation.  Every
 * expectation is worked out by hand from the numbers given; messages are
 * the ones users meet, in full.
 */
#include <limits.h>
#include <unistd.h>

#include "testutil.h"
#include "topoutil.h"

#define MIB 1048576.0

static const char *fixtures(void)
{
    static char dir[1024];
    snprintf(dir, sizeof(dir), "%s/topologies", getenv("MESH_FIXTURES"));
    return dir;
}

static void tres__counts(void **state)
{
    static const struct {
        const char *tres;
        long gpus;
    } cases[] = {
        {NULL, 0},
        {"", 0},
        {"cpu=4", 0},
        {"gres/gpus:3", 0}, /* not "gpu" */
        {"gresxgpu:4", 0},  /* "gres" without its ':' or '/': another name, not gres' gpu */
        {"gres/gpu:4", 4},
        {"gres:gpu:8", 8},
        {"gpu:2", 2},
        {"gpu=8", 8},
        {"gres/gpu:h100:2", 2},
        {"gres/gpu:h100", 1}, /* a type, no count: one */
        {"gres/gpu", 1},
        {"gres/gpu:2x", 1}, /* not a number: a type */
        {"cpu=4;gres/gpu:2", 2},
        {"gres/gpu:2,gres/gpu:a100:3", 5}, /* every GPU entry counts */
        {"gres/gpu:-1", -1},
        {"gres/gpu:1048576", 1048576},
        {"gres/gpu:1048577", -1},
        {"gres/gpu:1048576,gres/gpu:1", -1}, /* the sum, too */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++)
        if (mesh_tres_gpus(cases[i].tres) != cases[i].gpus)
            fail_msg("'%s': %ld GPUs, want %ld", cases[i].tres ? cases[i].tres : "(null)",
                     mesh_tres_gpus(cases[i].tres), cases[i].gpus);
    /* a string that fills the 512-byte buffer is not read; one byte less is */
    char s[600];
    memset(s, 'x', sizeof(s));
    memcpy(s, "gres/gpu:2,", 11);
    s[511] = '\0';
    assert_int_equal(mesh_tres_gpus(s), 2);
    s[511] = 'x';
    s[512] = '\0';
    assert_int_equal(mesh_tres_gpus(s), -1);
}

static mesh_step_t shape_ok(mesh_step_counts_t c, mesh_launch_t launch)
{
    mesh_step_t s;
    mesh_error_t err;
    if (mesh_step_shape(&c, launch, &s, &err) < 0)
        fail_msg("%s", err.msg);
    return s;
}

static const char *shape_error(mesh_step_counts_t c, mesh_launch_t launch)
{
    static mesh_error_t err;
    mesh_step_t s;
    assert_int_equal(mesh_step_shape(&c, launch, &s, &err), -1);
    return err.msg;
}

static void step_shape__srun_and_slurmstepd(void **state)
{
    /* srun: 16 tasks on 2 nodes, its own node unknown: 8 a node, one GPU each */
    mesh_step_t s = shape_ok(
        (mesh_step_counts_t){.nodes = 2, .tasks = 16, .local_tasks = -1, .mem_per_node = 1024},
        MESH_LAUNCH_TASKS);
    assert_int_equal(s.nodes, 2);
    assert_int_equal(s.node, 0);
    assert_int_equal(s.tasks_per_node, 8);
    assert_int_equal(s.gpus_per_node, 8);
    assert_true(s.host_memory == 1024 * MIB); /* 1024 MiB = 1 GiB */
    /* slurmstepd on node 1 of 2, 8 tasks here, Slurm's 8 GPUs */
    s = shape_ok(
        (mesh_step_counts_t){
            .nodes = 2, .node = 1, .tasks = 16, .local_tasks = 8, .gpus_on_node = 8},
        MESH_LAUNCH_TASKS);
    assert_int_equal(s.node, 1);
    assert_int_equal(s.tasks_per_node, 8);
    assert_int_equal(s.gpus_per_node, 8);
    assert_true(s.host_memory == 0); /* no --mem: nothing offloaded */
    /* uneven: as srun and as a node say it */
    assert_string_equal(
        shape_error((mesh_step_counts_t){.nodes = 2, .tasks = 15, .local_tasks = -1},
                    MESH_LAUNCH_TASKS),
        "15 tasks on 2 nodes: a 3D layout needs the same number of tasks on every node (use "
        "--ntasks-per-node)");
    assert_string_equal(
        shape_error((mesh_step_counts_t){.nodes = 2, .tasks = 15, .local_tasks = 8},
                    MESH_LAUNCH_TASKS),
        "15 tasks on 2 nodes (8 here): a 3D layout needs the same number of tasks on every node "
        "(use --ntasks-per-node)");
    /* even in all, but not here: 16 on 2 nodes, 6 on this one */
    assert_string_equal(
        shape_error((mesh_step_counts_t){.nodes = 2, .tasks = 16, .local_tasks = 6},
                    MESH_LAUNCH_TASKS),
        "16 tasks on 2 nodes (6 here): a 3D layout needs the same number of tasks on every node "
        "(use --ntasks-per-node)");
    /* Slurm gave the step 4 GPUs here for 8 tasks */
    assert_string_equal(
        shape_error(
            (mesh_step_counts_t){.nodes = 1, .tasks = 8, .local_tasks = 8, .gpus_on_node = 4},
            MESH_LAUNCH_TASKS),
        "8 tasks per node but 4 GPUs in the step on this node: meshplan plans one GPU per task "
        "(use --gpus-per-node=8, or --ntasks-per-node=4)");
    /* counts that cannot be Slurm's */
    const char *unread = "cannot read the step's nodes and tasks from Slurm";
    assert_string_equal(
        shape_error((mesh_step_counts_t){.tasks = 8, .local_tasks = 8}, MESH_LAUNCH_TASKS), unread);
    assert_string_equal(
        shape_error((mesh_step_counts_t){.nodes = 1, .local_tasks = -1}, MESH_LAUNCH_TASKS),
        unread);
    assert_string_equal(
        shape_error((mesh_step_counts_t){.nodes = 2, .node = 2, .tasks = 16, .local_tasks = 8},
                    MESH_LAUNCH_TASKS),
        unread);
    assert_string_equal(
        shape_error((mesh_step_counts_t){.nodes = 1, .tasks = 1L << 32, .local_tasks = -1},
                    MESH_LAUNCH_TASKS),
        unread);
    assert_string_equal(
        shape_error((mesh_step_counts_t){.nodes = 1, .tasks = 8, .local_tasks = (long)INT_MAX + 1},
                    MESH_LAUNCH_TASKS),
        unread);
    /* the most an int holds is read as it is (what plans with it judges it) */
    mesh_step_t most =
        shape_ok((mesh_step_counts_t){.nodes = 1, .tasks = INT_MAX, .local_tasks = INT_MAX},
                 MESH_LAUNCH_TASKS);
    assert_int_equal(most.tasks_per_node, INT_MAX);
}

static void step_shape__launchers(void **state)
{
    /* torchrun on a node: one launcher, Slurm's 8 GPUs */
    mesh_step_t s = shape_ok(
        (mesh_step_counts_t){
            .nodes = 2, .node = 1, .tasks = 2, .local_tasks = 1, .gpus_on_node = 8},
        MESH_LAUNCH_TORCHRUN);
    assert_int_equal(s.tasks_per_node, 1);
    assert_int_equal(s.gpus_per_node, 8);
    /* GPUs not known (no --gpus-per-node): 0, for the topology to tell */
    s = shape_ok((mesh_step_counts_t){.nodes = 2, .tasks = 2, .local_tasks = 1},
                 MESH_LAUNCH_TORCHRUN);
    assert_int_equal(s.gpus_per_node, 0);
    /* eight tasks a node is not a torchrun launch, where a node sees them */
    assert_string_equal(
        shape_error(
            (mesh_step_counts_t){.nodes = 2, .tasks = 16, .local_tasks = 8, .gpus_on_node = 8},
            MESH_LAUNCH_TORCHRUN),
        "--mesh-export=torchrun runs one launcher task per node, not 8 (use "
        "--ntasks-per-node=1)");
    /* srun does not know its node's tasks: it plans 8 a node, 4 GPUs given */
    s = shape_ok(
        (mesh_step_counts_t){.nodes = 2, .tasks = 16, .local_tasks = -1, .gpus_on_node = 4},
        MESH_LAUNCH_TORCHRUN);
    assert_int_equal(s.tasks_per_node, 8);
    assert_int_equal(s.gpus_per_node, 4);
    /* the batch step: one task on node 0 of the job's 2 nodes */
    s = shape_ok(
        (mesh_step_counts_t){
            .nodes = 2, .gpus_on_node = 8, .ntasks_per_node = 4, .mem_per_node = 2048},
        MESH_LAUNCH_JOB);
    assert_int_equal(s.nodes, 2);
    assert_int_equal(s.node, 0);
    assert_int_equal(s.tasks_per_node, 1);
    assert_int_equal(s.gpus_per_node, 8); /* the GPUs win over --ntasks-per-node */
    assert_true(s.host_memory == 2048 * MIB);
    s = shape_ok((mesh_step_counts_t){.nodes = 2, .ntasks_per_node = 4}, MESH_LAUNCH_JOB);
    assert_int_equal(s.gpus_per_node, 4);
    const char *unknown = "the job's nodes and GPUs per node are unknown in this step (give "
                          "--gpus-per-node or --ntasks-per-node)";
    assert_string_equal(shape_error((mesh_step_counts_t){.gpus_on_node = 8}, MESH_LAUNCH_JOB),
                        unknown);
    assert_string_equal(shape_error((mesh_step_counts_t){.nodes = 2}, MESH_LAUNCH_JOB), unknown);
}

static mesh_step_t job_ok(mesh_job_counts_t c)
{
    mesh_step_t s;
    mesh_error_t err;
    int rc = mesh_job_shape(&c, &s, &err);
    if (rc != 0)
        fail_msg("rc %d: %s", rc, rc < 0 ? err.msg : "");
    return s;
}

static const char *job_error(mesh_job_counts_t c)
{
    static mesh_error_t err;
    mesh_step_t s;
    assert_int_equal(mesh_job_shape(&c, &s, &err), -1);
    return err.msg;
}

static void job_shape__what_the_controller_reads(void **state)
{
    /* sbatch -N2 --gpus-per-node=8 --mem=2048 */
    mesh_step_t s = job_ok(
        (mesh_job_counts_t){.nodes = 2, .tres_per_node = "gres/gpu:8", .mem_per_node = 2048});
    assert_int_equal(s.nodes, 2);
    assert_int_equal(s.tasks_per_node, 0); /* not known */
    assert_int_equal(s.gpus_per_node, 8);
    assert_true(s.host_memory == 2048 * MIB);
    /* -n16 --ntasks-per-node=8 --gpus-per-task=1: 2 nodes of 8 */
    s = job_ok(
        (mesh_job_counts_t){.tasks = 16, .tasks_per_node = 8, .tres_per_task = "gres/gpu:1"});
    assert_int_equal(s.nodes, 2);
    assert_int_equal(s.tasks_per_node, 8);
    assert_int_equal(s.gpus_per_node, 8);
    /* -N2 -n16 --gpus-per-task=1: 16 split over 2 nodes */
    s = job_ok((mesh_job_counts_t){.nodes = 2, .tasks = 16, .tres_per_task = "gres/gpu:1"});
    assert_int_equal(s.tasks_per_node, 8);
    assert_int_equal(s.gpus_per_node, 8);
    /* -N2 --gpus=16: 8 a node */
    s = job_ok((mesh_job_counts_t){.nodes = 2, .tres_per_job = "gres/gpu:16"});
    assert_int_equal(s.gpus_per_node, 8);
    /* --gpus=8 alone: one node */
    s = job_ok((mesh_job_counts_t){.tres_per_job = "gres/gpu:8"});
    assert_int_equal(s.nodes, 1);
    assert_int_equal(s.gpus_per_node, 8);
    /* --gpus=1: a one-GPU job is a job (a fine-tune, a test) */
    s = job_ok((mesh_job_counts_t){.tres_per_job = "gres/gpu:1"});
    assert_int_equal(s.nodes, 1);
    assert_int_equal(s.gpus_per_node, 1);
    /* -n4 --ntasks-per-node=8: fewer tasks than a node holds, one node */
    s = job_ok((mesh_job_counts_t){.tasks = 4, .tasks_per_node = 8, .tres_per_node = "gpu:8"});
    assert_int_equal(s.nodes, 1);
    assert_int_equal(s.tasks_per_node, 8);
    /* -N2 -n15: uneven, tasks per node unknown, not an error here */
    s = job_ok((mesh_job_counts_t){.nodes = 2, .tasks = 15, .tres_per_node = "gres/gpu:8"});
    assert_int_equal(s.tasks_per_node, 0);
    /* one torchrun per node: 1 task, 8 GPUs */
    s = job_ok((mesh_job_counts_t){.nodes = 2, .tasks_per_node = 1, .tres_per_node = "gpu:8"});
    assert_int_equal(s.tasks_per_node, 1);
    assert_int_equal(s.gpus_per_node, 8);
    /* the per-node count wins over the others */
    s = job_ok((mesh_job_counts_t){.nodes = 2, .tres_per_node = "gpu:4", .tres_per_job = "gpu:16"});
    assert_int_equal(s.gpus_per_node, 4);
}

static void job_shape__refusals(void **state)
{
    assert_string_equal(job_error((mesh_job_counts_t){.nodes = 3, .tres_per_job = "gres/gpu:16"}),
                        "--gpus=16 does not split evenly over 3 nodes: give --gpus-per-node");
    assert_string_equal(job_error((mesh_job_counts_t){.nodes = 2, .tres_per_job = "gres/gpu:1"}),
                        "--gpus=1 does not split evenly over 2 nodes: give --gpus-per-node");
    assert_string_equal(job_error((mesh_job_counts_t){.tres_per_node = "gres/gpu:-1"}),
                        "cannot read the job's GPU request");
    assert_string_equal(job_error((mesh_job_counts_t){.tres_per_task = "gres/gpu:99999999"}),
                        "cannot read the job's GPU request");
    /* 2^20 GPUs a task, 2 tasks a node: 2097152 a node */
    assert_string_equal(
        job_error((mesh_job_counts_t){.tasks_per_node = 2, .tres_per_task = "gres/gpu:1048576"}),
        "2097152 GPUs per node is not a request meshplan can plan");
    const char *none = "--model asks for a layout, but the job requests no GPUs (give "
                       "--gpus-per-node=N)";
    assert_string_equal(job_error((mesh_job_counts_t){.nodes = 2}), none);
    /* GPUs per task without tasks per node: no count per node */
    assert_string_equal(job_error((mesh_job_counts_t){.tres_per_task = "gpu:1"}), none);
    assert_string_equal(job_error((mesh_job_counts_t){.tres_per_socket = "cpu=4"}), none);
    assert_string_equal(
        job_error((mesh_job_counts_t){.nodes = 1, .tasks_per_node = 4, .tres_per_node = "gpu:8"}),
        "4 tasks per node but 8 GPUs per node: meshplan plans one GPU per task (or one torchrun "
        "per node)");
    /* GPUs per socket only: the nodes know their sockets, the controller does not */
    mesh_job_counts_t c = {.nodes = 2, .tres_per_socket = "gres/gpu:4"};
    mesh_step_t s;
    mesh_error_t err;
    assert_int_equal(mesh_job_shape(&c, &s, &err), 1);
}

static void nodes_alike__first_node_decides(void **state)
{
    const char *hosts[] = {"n1", "n2", "n3", "n4"};
    const char *same[] = {"H100-SXM GPUs", "H100-SXM GPUs", NULL, "H100-SXM GPUs"};
    const char *mixed[] = {"H100-SXM GPUs", NULL, "A100-80GB GPUs", "H200 GPUs"};
    const char *first_unknown[] = {NULL, "H100-SXM GPUs", "A100-80GB GPUs", NULL};
    mesh_error_t err;
    assert_int_equal(mesh_nodes_alike(0, hosts, same, &err), 0);
    assert_int_equal(mesh_nodes_alike(4, hosts, same, &err), 0); /* n3 unknown: skipped */
    assert_int_equal(mesh_nodes_alike(2, hosts, mixed, &err), 0);
    assert_int_equal(mesh_nodes_alike(4, hosts, first_unknown, &err), 0);
    assert_int_equal(mesh_nodes_alike(4, hosts, mixed, &err), -1);
    assert_string_equal(err.msg, "node n3 has A100-80GB GPUs but the step's first node n1 has "
                                 "H100-SXM GPUs: one layout is planned for all nodes, so they "
                                 "must be alike (choose nodes with -w, --constraint or a "
                                 "partition)");
    /* slurmstepd compares whole signatures */
    const char *sig[] = {"8 x H100-SXM, islands 8", "8 x A100-80GB, islands 4+4"};
    assert_int_equal(mesh_nodes_alike(2, (const char *[]){"n2", "n3"}, sig, &err), -1);
    const char *want = "node n3 has 8 x A100-80GB, islands 4+4 but the step's first node n2 has "
                       "8 x H100-SXM, islands 8: one layout";
    assert_true(strncmp(err.msg, want, strlen(want)) == 0);
}

static mesh_policy_t policy(const char *const *args)
{
    mesh_policy_t pol;
    mesh_error_t err;
    mesh_policy_init(&pol);
    for (; args && *args; args++)
        if (mesh_policy_set_arg(&pol, *args, &err) < 0)
            fail_msg("%s", err.msg);
    return pol;
}

static void fallback__only_with_a_gpu_to_fall_back_on(void **state)
{
    mesh_error_t err;
    mesh_policy_t pol =
        policy((const char *[]){"on_topology_error=fallback", "gpu=H100-SXM", NULL});
    snprintf(err.msg, sizeof(err.msg), "topology: took more than 0.2 s");
    assert_int_equal(mesh_step_fallback(&pol, &err), 1);
    assert_string_equal(err.msg, "topology: took more than 0.2 s; planning for the policy's "
                                 "H100-SXM instead (on_topology_error=fallback)");
    /* a GPU of the site's own, of one letter, named as such */
    static const char site[] = "on_topology_error: fallback\ngpu: X\ngpus:\n"
                               "  X: {memory: 8GB, peak_tflops: 100, pci: 10de:ffff, island: 8}\n";
    mesh_policy_init(&pol);
    if (mesh_policy_parse(&pol, site, strlen(site), "site.yaml", &err) < 0)
        fail_msg("%s", err.msg);
    snprintf(err.msg, sizeof(err.msg), "topology: x");
    assert_int_equal(mesh_step_fallback(&pol, &err), 1);
    assert_string_equal(
        err.msg, "topology: x; planning for the policy's X instead (on_topology_error=fallback)");
    pol = policy((const char *[]){"on_topology_error=fallback", "gpu_mem=80GiB", NULL});
    snprintf(err.msg, sizeof(err.msg), "topology: x");
    assert_int_equal(mesh_step_fallback(&pol, &err), 1);
    assert_string_equal(err.msg, "topology: x; planning for the policy's gpu_mem instead "
                                 "(on_topology_error=fallback)");
    /* fallback with nothing to fall back on, or a GPU without fallback: fail */
    const char *refused = "topology: x (an admin can set on_topology_error=fallback, with gpu=, "
                          "to plan without it)";
    pol = policy((const char *[]){"on_topology_error=fallback", NULL});
    snprintf(err.msg, sizeof(err.msg), "topology: x");
    assert_int_equal(mesh_step_fallback(&pol, &err), -1);
    assert_string_equal(err.msg, refused);
    pol = policy((const char *[]){"gpu=H100-SXM", NULL});
    snprintf(err.msg, sizeof(err.msg), "topology: x");
    assert_int_equal(mesh_step_fallback(&pol, &err), -1);
    assert_string_equal(err.msg, refused);
}

/* The allocation's GPU, shape and host memory, as worked out by hand. */
static void expect_alloc(const mesh_alloc_t *a, const char *gpu, int nodes, int gpn, int island,
                         double host)
{
    assert_string_equal(a->gpu.name, gpu);
    assert_int_equal(a->nodes, nodes);
    assert_int_equal(a->gpus_per_node, gpn);
    assert_int_equal(a->island, island);
    assert_true(a->host_memory == host);
}

static void step_alloc__from_the_policy(void **state)
{
    mesh_policy_t pol = policy((const char *[]){"gpu=H100-SXM", NULL});
    mesh_step_t s = {.nodes = 2, .tasks_per_node = 8, .gpus_per_node = 8, .host_memory = 1e12};
    mesh_alloc_t a;
    mesh_error_t err;
    assert_int_equal(mesh_step_alloc(&pol, NULL, 0, 0, &s, &a, &err), 0);
    expect_alloc(&a, "H100-SXM", 2, 8, 8, 1e12); /* the job's host memory, not the node's */
    assert_true(a.gpu.memory == 81559 * MIB);    /* the table's H100-SXM */
    /* a torchrun launcher whose GPUs nobody knows */
    s.gpus_per_node = 0;
    assert_int_equal(mesh_step_alloc(&pol, NULL, 1, 0, &s, &a, &err), -1);
    assert_string_equal(err.msg,
                        "--mesh-export=torchrun needs the node's GPUs (give --gpus-per-node)");
    /* no topology and no GPU in the policy */
    pol = policy(NULL);
    s.gpus_per_node = 8;
    assert_int_equal(mesh_step_alloc(&pol, NULL, 0, 0, &s, &a, &err), -1);
    assert_non_null(strstr(err.msg, "the GPU is unknown"));
}

static void step_alloc__from_the_topology(void **state)
{
    mesh_policy_t pol = policy((const char *[]){"gpu=A100-80GB", NULL}); /* not used: a topology */
    mesh_topo_t *t = load(fixtures(), "hgx-h100-8gpu.xml");
    mesh_step_t s = {.nodes = 4, .tasks_per_node = 8, .gpus_per_node = 8, .host_memory = 5e11};
    mesh_alloc_t a;
    mesh_error_t err;
    assert_int_equal(mesh_step_alloc(&pol, t, 0, 0, &s, &a, &err), 0);
    expect_alloc(&a, "H100-SXM", 4, 8, 8, 5e11);
    /* 4 tasks on the 8 GPUs of the step on this node */
    s.tasks_per_node = s.gpus_per_node = 4;
    assert_int_equal(mesh_step_alloc(&pol, t, 0, 0, &s, &a, &err), -1);
    assert_string_equal(err.msg, "4 tasks per node but 8 GPUs in the step on this node: meshplan "
                                 "plans one GPU per task (use --gpus-per-node=4, or "
                                 "--ntasks-per-node=8)");
    /* one torchrun launcher takes all 8; two launchers are two tasks */
    s.tasks_per_node = 1;
    s.gpus_per_node = 0;
    assert_int_equal(mesh_step_alloc(&pol, t, 1, 0, &s, &a, &err), 0);
    assert_int_equal(s.gpus_per_node, 8);
    assert_int_equal(a.gpus_per_node, 8);
    s.tasks_per_node = 1;
    assert_int_equal(mesh_step_alloc(&pol, t, 0, 0, &s, &a, &err), -1); /* not a launcher */
    s.tasks_per_node = 2;
    assert_int_equal(mesh_step_alloc(&pol, t, 1, 0, &s, &a, &err), -1);
    assert_non_null(strstr(err.msg, "2 tasks per node but 8 GPUs"));
    /* tasks not known (the CLI): the topology's GPUs, one task each */
    s.tasks_per_node = 0;
    s.gpus_per_node = 0;
    assert_int_equal(mesh_step_alloc(&pol, t, 0, 0, &s, &a, &err), 0);
    assert_int_equal(s.gpus_per_node, 8);
    mesh_topo_destroy(t);
    /* the task order: islands interleaved in PCI order make TP 1, unless bound */
    t = load(fixtures(), "interleaved-islands-8gpu.xml");
    s = (mesh_step_t){.nodes = 1, .tasks_per_node = 8, .gpus_per_node = 8};
    assert_int_equal(mesh_step_alloc(&pol, t, 0, 0, &s, &a, &err), 0);
    assert_int_equal(a.island, 1);
    assert_int_equal(mesh_step_alloc(&pol, t, 0, 1, &s, &a, &err), 0);
    assert_int_equal(a.island, 4);
    mesh_topo_destroy(t);
}

/* Slurm's GPU list of a step, as SLURM_STEP_GPUS gives it. */
static void gpu_list__indices_and_ranges(void **state)
{
    (void)state;
    int pos[8];
    mesh_error_t err;
    assert_int_equal(mesh_step_gpu_list(NULL, "SLURM_STEP_GPUS", pos, 8, &err), 0);
    assert_int_equal(mesh_step_gpu_list("0,1,3", "SLURM_STEP_GPUS", pos, 8, &err), 3);
    assert_int_equal(pos[2], 3);
    assert_int_equal(mesh_step_gpu_list("4-6,0", "SLURM_JOB_GPUS", pos, 8, &err), 4);
    assert_int_equal(pos[0], 4);
    assert_int_equal(pos[2], 6);
    assert_int_equal(pos[3], 0);
    const char *bad[] = {"-", "0-", "a", "1-0", "+1", "3x", "-2"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(mesh_step_gpu_list(bad[i], "SLURM_STEP_GPUS", pos, 8, &err), -1);
        assert_non_null(strstr(err.msg, "SLURM_STEP_GPUS: cannot read"));
    }
    assert_int_equal(mesh_step_gpu_list("0-8", "SLURM_STEP_GPUS", pos, 8, &err), -1);
    assert_string_equal(err.msg, "SLURM_STEP_GPUS: more than 8 GPUs");
}

/* The step's GPUs of the node's topology: PCI positions, or /dev minors
 * under gpu_order=minor; and the admin's file for a node. */
static void step_topology__select_and_file(void **state)
{
    (void)state;
    mesh_policy_t pol = policy((const char *[]){NULL});
    mesh_topo_t *t = load(fixtures(), "hgx-h100-8gpu.xml");
    mesh_error_t err;
    int pos[] = {6, 7};
    assert_int_equal(mesh_step_topology(&pol, t, pos, 2, &err), 0);
    assert_int_equal(mesh_topo_gpu_count(t), 2);
    assert_string_equal(mesh_topo_gpu(t, 0)->busid, "0000:ba:00.0");
    int none = 9;
    assert_int_equal(mesh_step_topology(&pol, t, &none, 1, &err), -1);
    /* down to one GPU, where a position past it is refused as anywhere */
    int second = 1;
    assert_int_equal(mesh_step_topology(&pol, t, &second, 1, &err), 0);
    assert_int_equal(mesh_topo_gpu_count(t), 1);
    assert_string_equal(mesh_topo_gpu(t, 0)->busid, "0000:db:00.0"); /* position 7's */
    assert_int_equal(mesh_step_topology(&pol, t, &second, 1, &err), -1);
    assert_int_equal(mesh_topo_gpu_count(t), 1);
    mesh_topo_destroy(t);
    /* gpu_order=minor: Slurm's indices are /dev minors, which the NVIDIA
     * driver maps to bus ids; without the driver (this machine) refused */
    pol = policy((const char *[]){"gpu_order=minor", NULL});
    t = load(fixtures(), "hgx-h100-8gpu.xml");
    if (access("/proc/driver/nvidia/gpus", F_OK) != 0) {
        assert_int_equal(mesh_step_topology(&pol, t, pos, 2, &err), -1);
        assert_int_equal(mesh_topo_gpu_count(t), 8);
    }
    mesh_topo_destroy(t);
    char path[64];
    pol = policy((const char *[]){"topology_xml=/etc/slurm/topo/%n.xml", NULL});
    assert_int_equal(mesh_step_topology_file(&pol, "gpu017", path, sizeof(path)), 0);
    assert_string_equal(path, "/etc/slurm/topo/gpu017.xml");
    assert_int_equal(mesh_step_topology_file(&pol, "gpu017", path, 20), -1);
}

static void step_alloc__fallback_plans_the_policy_gpu(void **state)
{
    mesh_policy_t pol =
        policy((const char *[]){"on_topology_error=fallback", "gpu=H100-SXM", NULL});
    mesh_topo_t *t = load(fixtures(), "two-islands-8gpu.xml"); /* A100s, islands of 4 */
    mesh_step_t s = {.nodes = 2, .tasks_per_node = 8, .gpus_per_node = 8};
    mesh_alloc_t a;
    mesh_error_t err;
    assert_int_equal(mesh_step_alloc(&pol, t, 0, 0, &s, &a, &err), -1);
    assert_string_equal(err.msg,
                        "this node has A100-80GB GPUs but the policy plans for H100-SXM "
                        "(on_topology_error=fallback plans every node for gpu=): fix gpu=");
    mesh_topo_destroy(t);
    /* a node showing the policy's GPU plans for it, as a node that cannot
     * read its topology would: the table's island 8, not the topology's */
    t = load(fixtures(), "hgx-h100-8gpu.xml");
    s = (mesh_step_t){.nodes = 2, .tasks_per_node = 4, .gpus_per_node = 4, .host_memory = 7e11};
    assert_int_equal(mesh_step_alloc(&pol, t, 0, 0, &s, &a, &err), 0);
    /* the step's 4 GPUs, unchecked against the node's 8; the table's island
     * of 8, capped at 4 a node */
    expect_alloc(&a, "H100-SXM", 2, 4, 4, 7e11);
    s.tasks_per_node = 1;
    s.gpus_per_node = 0; /* not known: the topology's 8 */
    assert_int_equal(mesh_step_alloc(&pol, t, 1, 0, &s, &a, &err), 0);
    assert_int_equal(a.gpus_per_node, 8);
    mesh_topo_destroy(t);
    /* gpu_mem= alone: any GPU model will do, planned as a generic one */
    pol = policy((const char *[]){"on_topology_error=fallback", "gpu_mem=40GiB", NULL});
    t = load(fixtures(), "two-islands-8gpu.xml");
    s = (mesh_step_t){.nodes = 1, .tasks_per_node = 8, .gpus_per_node = 8};
    assert_int_equal(mesh_step_alloc(&pol, t, 0, 0, &s, &a, &err), 0);
    assert_string_equal(a.gpu.name, "generic");
    assert_true(a.gpu.memory == 40 * 1024 * MIB);
    mesh_topo_destroy(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tres__counts),
        cmocka_unit_test(step_shape__srun_and_slurmstepd),
        cmocka_unit_test(step_shape__launchers),
        cmocka_unit_test(job_shape__what_the_controller_reads),
        cmocka_unit_test(job_shape__refusals),
        cmocka_unit_test(nodes_alike__first_node_decides),
        cmocka_unit_test(fallback__only_with_a_gpu_to_fall_back_on),
        cmocka_unit_test(step_alloc__from_the_policy),
        cmocka_unit_test(step_alloc__from_the_topology),
        cmocka_unit_test(gpu_list__indices_and_ranges),
        cmocka_unit_test(step_topology__select_and_file),
        cmocka_unit_test(step_alloc__fallback_plans_the_policy_gpu),
    };
    return cmocka_run_group_tests_name("step", tests, NULL, NULL);
}
