/*
 * Admin policy: key=value arguments and YAML files, strictly.
 */
#include <unistd.h>

#include "testutil.h"

static void defaults(void **state)
{
    mesh_policy_t p;
    mesh_policy_init(&p);
    assert_int_equal(p.enforce, MESH_ENFORCE_REJECT);
    assert_int_equal(p.export_mode, MESH_EXPORT_TORCH);
    assert_int_equal(p.steps, MESH_STEP_REGULAR);
    assert_true(p.reserve > 0 && p.reserve < 0.1);
    assert_true(p.port_lo < p.port_hi);
}

static void args__every_key(void **state)
{
    mesh_policy_t p;
    mesh_error_t err;
    mesh_policy_init(&p);
    const char *args[] = {"enforce=warn",
                          "reserve=0.1",
                          "gpu=h100-sxm",
                          "gpu_mem=80GB",
                          "export=torchrun",
                          "port_range=30000-30999",
                          "models_dir=/opt/models",
                          "topology_xml=/etc/slurm/topo.xml",
                          "steps=regular,batch",
                          "overhead=2GiB",
                          "comm_buffer=128MiB",
                          "fragmentation=0.1",
                          "gpu.A100-80GB.memory=79GiB",
                          "gpu.a100-80gb.net_bw=50GB",
                          "gpu.H100-SXM.island=4",
                          "gpu.H100-SXM.peak_tflops=900",
                          "gpu.H100-SXM.gemm_eff=0.7"};
    for (size_t i = 0; i < sizeof(args) / sizeof(args[0]); i++)
        if (mesh_policy_set_arg(&p, args[i], &err) < 0)
            fail_msg("%s: %s", args[i], err.msg);
    assert_int_equal(p.enforce, MESH_ENFORCE_WARN);
    assert_true(p.reserve == 0.1);
    assert_string_equal(p.gpu, "H100-SXM");
    assert_true(p.gpu_mem == 80e9);
    assert_int_equal(p.export_mode, MESH_EXPORT_TORCHRUN);
    assert_int_equal(p.port_lo, 30000);
    assert_int_equal(p.port_hi, 30999);
    assert_string_equal(p.models_dir, "/opt/models");
    assert_int_equal(p.steps, MESH_STEP_REGULAR | MESH_STEP_BATCH);
    assert_true(p.overhead_context == 2.0 * 1073741824);
    assert_int_equal(p.n_gpu_overrides, 2);
    mesh_gpu_t g = *mesh_gpu_find("A100-80GB");
    mesh_policy_apply_gpu(&p, &g);
    assert_true(g.memory == 79.0 * 1073741824);
    assert_true(g.net_bw == 50e9);
    mesh_alloc_t a;
    assert_int_equal(mesh_policy_alloc(&p, NULL, 0, 0, 2, 8, &a, &err), 0);
    assert_string_equal(a.gpu.name, "H100-SXM"); /* the policy's gpu= */
    assert_int_equal(a.island, 4);
    assert_true(a.gpu.peak_flops == 900e12);
    /* gpu_mem= is for GPUs nobody named */
    mesh_policy_t q;
    mesh_policy_init(&q);
    mesh_policy_set_arg(&q, "gpu_mem=40GB", &err);
    assert_int_equal(mesh_policy_alloc(&q, NULL, 0, 0, 1, 4, &a, &err), 0);
    assert_string_equal(a.gpu.name, "generic");
    assert_true(a.gpu.memory == 40e9);
    assert_int_equal(mesh_policy_alloc(&q, NULL, 90e9, 2, 1, 4, &a, &err), 0);
    assert_true(a.gpu.memory == 90e9);
    assert_int_equal(a.island, 2);
}

static void args__errors_name_the_key(void **state)
{
    static const struct {
        const char *arg, *needle;
    } cases[] = {
        {"enforce=maybe", "enforce"},
        {"reserve=1.5", "reserve"},
        {"gpu_mem=80G", "ambiguous"},
        {"export=slurm", "export"},
        {"port_range=3000", "port_range"},
        {"port_range=40000-30000", "empty"},
        {"port_range=80-90", "1024"},
        {"models_dir=relative", "absolute"},
        {"steps=sometimes", "steps"},
        {"colour=blue", "unknown policy key 'colour'"},
        {"novalue", "key=value"},
        {"=x", "key=value"},
        {"gpu.H100-SXM.pci=10de", "PCI id"},
        {"gpu.A100-80GB.speed=1", "unknown GPU field"},
        {"gpu.memory=1GB", "gpu.NAME.FIELD"},
        {"policy=/nonexistent/meshplan.yaml", "cannot open"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        mesh_policy_t p;
        mesh_error_t err;
        mesh_policy_init(&p);
        if (mesh_policy_set_arg(&p, cases[i].arg, &err) == 0)
            fail_msg("'%s' was accepted", cases[i].arg);
        if (!strstr(err.msg, cases[i].needle))
            fail_msg("'%s': '%s' lacks '%s'", cases[i].arg, err.msg, cases[i].needle);
    }
}

static void gpus__defined_by_pci_id(void **state)
{
    mesh_policy_t p;
    mesh_error_t err;
    mesh_policy_init(&p);
    /* a name the table does not know needs its PCI id, memory and peak */
    assert_int_equal(mesh_policy_set_arg(&p, "gpu.H1000.memory=1GB", &err), 0);
    assert_int_equal(mesh_policy_check(&p, &err), -1);
    assert_non_null(strstr(err.msg, "gpu.H1000"));
    assert_non_null(strstr(err.msg, "pci"));
    assert_int_equal(mesh_policy_set_arg(&p, "gpu.H1000.pci=10de:9999", &err), 0);
    assert_int_equal(mesh_policy_set_arg(&p, "gpu.H1000.peak_tflops=1500", &err), 0);
    assert_int_equal(mesh_policy_check(&p, &err), 0);
    /* gpu= may name it, before or after its definition */
    mesh_alloc_t a;
    assert_int_equal(mesh_policy_set_arg(&p, "gpu=h1000", &err), 0);
    assert_int_equal(mesh_policy_check(&p, &err), 0);
    assert_int_equal(mesh_policy_alloc(&p, NULL, 0, 0, 1, 8, &a, &err), 0);
    assert_string_equal(a.gpu.name, "H1000");
    assert_true(a.gpu.memory == 1e9 && a.gpu.peak_flops == 1500e12);
    assert_int_equal(mesh_policy_set_arg(&p, "gpu=H2000", &err), 0);
    assert_int_equal(mesh_policy_check(&p, &err), -1); /* named, never defined */
    assert_non_null(strstr(err.msg, "unknown GPU 'H2000'"));
    assert_int_equal(mesh_policy_set_arg(&p, "gpu=H1000", &err), 0);
    assert_int_equal(p.gpu_overrides[0].pci_vendor, 0x10de);
    assert_int_equal(p.gpu_overrides[0].pci_device, 0x9999);
    assert_int_equal(mesh_policy_set_arg(&p, "bind=gpu", &err), 0);
    assert_true(p.bind_gpu);
    assert_int_equal(mesh_policy_set_arg(&p, "bind=tight", &err), -1);
    assert_int_equal(mesh_policy_set_arg(&p, "gpu_order=minor", &err), 0);
    assert_true(p.gpu_order_minor);
    assert_int_equal(mesh_policy_set_arg(&p, "topology_xml=none", &err), 0);
    assert_string_equal(p.topology_xml, "none");
}

static char *write_tmp(const char *text)
{
    static char path[64];
    strcpy(path, "/tmp/meshplan-policy-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static void yaml__file(void **state)
{
    mesh_policy_t p;
    mesh_error_t err;
    mesh_policy_init(&p);
    char *path =
        write_tmp("# cluster policy\nenforce: warn\nreserve: 0.08\nport_range: 40000-40100\n"
                  "gpus:\n  H100-SXM:\n    memory: 80GiB\n    net_bw: 25GB\n");
    assert_int_equal(mesh_policy_load(&p, path, &err), 0);
    unlink(path);
    assert_int_equal(p.enforce, MESH_ENFORCE_WARN);
    assert_true(p.reserve == 0.08);
    assert_int_equal(p.port_lo, 40000);
    mesh_gpu_t g = *mesh_gpu_find("H100-SXM");
    mesh_policy_apply_gpu(&p, &g);
    assert_true(g.memory == 80.0 * 1073741824);
    assert_true(g.net_bw == 25e9);
    /* via the plugstack argument too */
    path = write_tmp("export: mesh\n");
    char arg[128];
    snprintf(arg, sizeof(arg), "policy=%s", path);
    assert_int_equal(mesh_policy_set_arg(&p, arg, &err), 0);
    unlink(path);
    assert_int_equal(p.export_mode, MESH_EXPORT_MESH);
}

static void yaml__errors_with_line(void **state)
{
    static const struct {
        const char *text, *needle;
    } cases[] = {
        {"enforce: warn\nreserve: lots\n", ":2: reserve"},
        {"enforce: warn\ncolour: blue\n", ":2: unknown policy key 'colour'"},
        {"gpus:\n  H100-SXM:\n    memory: 80G\n", ":3: gpu.H100-SXM.memory"},
        {"gpus: 7\n", "gpus: expected a mapping"},
        {"a: &x 1\n", "anchors"},
        {"policy: /etc/other.yaml\n", "cannot include"},
        {"- enforce\n", "one YAML mapping"},
        {"enforce: [warn]\n", "single value"},
        {"enforce: warn\n---\nenforce: off\n", "one YAML mapping"},
        {"enforce: warn\nreserve: 0.1\nenforce: off\n", ":3: enforce: given twice"},
        {"gpus:\n  H100-SXM: {memory: 80GB, memory: 90GB}\n", "gpu.H100-SXM.memory: given twice"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        mesh_policy_t p;
        mesh_error_t err;
        mesh_policy_init(&p);
        char *path = write_tmp(cases[i].text);
        int rc = mesh_policy_load(&p, path, &err);
        unlink(path);
        if (rc == 0)
            fail_msg("policy %d was accepted", (int)i);
        if (!strstr(err.msg, cases[i].needle))
            fail_msg("policy %d: '%s' lacks '%s'", (int)i, err.msg, cases[i].needle);
    }
    mesh_policy_t p;
    mesh_error_t err;
    mesh_policy_init(&p);
    char *path = write_tmp(""); /* an empty policy keeps the defaults */
    assert_int_equal(mesh_policy_load(&p, path, &err), 0);
    unlink(path);
}

static void partitions__for_the_controller(void **state)
{
    mesh_policy_t p;
    mesh_error_t err;
    mesh_policy_init(&p);
    const char *yaml = "gpu: A100-80GB\non_submit_error: reject\npartitions:\n  h100:\n"
                       "    gpu: H100-SXM\n    nodes: 4\n  default:\n    gpu_mem: 40GB\n"
                       "    nvlink: 4\n";
    assert_int_equal(mesh_policy_parse(&p, yaml, strlen(yaml), "p.yaml", &err), 0);
    assert_true(p.submit_fail_closed);
    const mesh_partition_t *q = mesh_policy_partition(&p, "h100");
    assert_non_null(q);
    assert_string_equal(q->gpu, "H100-SXM");
    assert_int_equal(q->nodes, 4);
    q = mesh_policy_partition(&p, "other"); /* unlisted: the catch-all */
    assert_string_equal(q->name, "default");
    assert_true(q->gpu_mem == 40e9 && q->island == 4);
    assert_string_equal(mesh_policy_partition(&p, NULL)->name, "default");
    /* errors name the key */
    mesh_policy_init(&p);
    assert_int_equal(mesh_policy_set_arg(&p, "partition.h100.colour=red", &err), -1);
    assert_non_null(strstr(err.msg, "unknown partition field 'colour'"));
    assert_int_equal(mesh_policy_set_arg(&p, "partition.h100.nodes=0", &err), -1);
    assert_int_equal(mesh_policy_set_arg(&p, "partition.h100.gpu=Z9", &err), 0);
    assert_int_equal(mesh_policy_check(&p, &err), -1);
    assert_non_null(strstr(err.msg, "partition.h100.gpu"));
    assert_int_equal(mesh_policy_set_arg(&p, "on_submit_error=maybe", &err), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults),
        cmocka_unit_test(args__every_key),
        cmocka_unit_test(args__errors_name_the_key),
        cmocka_unit_test(gpus__defined_by_pci_id),
        cmocka_unit_test(partitions__for_the_controller),
        cmocka_unit_test(yaml__file),
        cmocka_unit_test(yaml__errors_with_line),
    };
    return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}
