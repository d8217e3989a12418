/* SPDX-License-Identifier: GPL-2.0-or-later */
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
    assert_int_equal(p.launch.export_mode, MESH_EXPORT_TORCH);
    assert_int_equal(p.launch.steps, MESH_STEP_REGULAR | MESH_STEP_BATCH);
    assert_true(p.assume.reserve > 0 && p.assume.reserve < 0.1);
    assert_true(p.launch.port_lo < p.launch.port_hi);
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
                          "gpu.a100-80gb.net_bw=400Gb/s",
                          "gpu.H100-SXM.island=4",
                          "gpu.H100-SXM.peak_tflops=900",
                          "gpu.H100-SXM.gemm_eff=0.7"};
    for (size_t i = 0; i < sizeof(args) / sizeof(args[0]); i++)
        if (mesh_policy_set_arg(&p, args[i], &err) < 0)
            fail_msg("%s: %s", args[i], err.msg);
    assert_int_equal(p.enforce, MESH_ENFORCE_WARN);
    assert_true(p.assume.reserve == 0.1);
    assert_string_equal(p.assume.gpu, "H100-SXM");
    assert_true(p.assume.gpu_mem == 80e9);
    assert_int_equal(p.launch.export_mode, MESH_EXPORT_TORCHRUN);
    assert_int_equal(p.launch.port_lo, 30000);
    assert_int_equal(p.launch.port_hi, 30999);
    assert_string_equal(p.launch.models_dir, "/opt/models");
    assert_int_equal(p.launch.steps, MESH_STEP_REGULAR | MESH_STEP_BATCH);
    assert_true(p.assume.overhead_context == 2.0 * 1073741824);
    assert_int_equal(p.assume.n_gpu_overrides, 2);
    mesh_gpu_t g = *mesh_gpu_find("A100-80GB");
    mesh_policy_apply_gpu(&p.assume, &g);
    assert_true(g.memory == 79.0 * 1073741824);
    assert_true(g.net_bw == 50e9);
    mesh_alloc_t a;
    assert_int_equal(mesh_policy_alloc(&p.assume, NULL, 0, 0, 2, 8, &a, &err), 0);
    assert_string_equal(a.gpu.name, "H100-SXM"); /* the policy's gpu= */
    assert_int_equal(a.island, 4);
    assert_true(a.gpu.peak_flops == 900e12);
    /* gpu_mem= is for GPUs nobody named */
    mesh_policy_t q;
    mesh_policy_init(&q);
    mesh_policy_set_arg(&q, "gpu_mem=40GB", &err);
    assert_int_equal(mesh_policy_alloc(&q.assume, NULL, 0, 0, 1, 4, &a, &err), 0);
    assert_string_equal(a.gpu.name, "generic");
    assert_true(a.gpu.memory == 40e9);
    assert_int_equal(mesh_policy_alloc(&q.assume, NULL, 90e9, 2, 1, 4, &a, &err), 0);
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
    /* a family's key without NAME or FIELD: the key first, then how to write it */
    mesh_policy_t p;
    mesh_error_t err;
    mesh_policy_init(&p);
    assert_int_equal(mesh_policy_set_arg(&p, "partition.nodes=4", &err), -1);
    assert_string_equal(err.msg, "partition.nodes: partition settings are partition.NAME.FIELD "
                                 "(e.g. partition.gpu.gpu=H100-SXM)");
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
    assert_int_equal(mesh_policy_set_arg(&p, "gpu.H1000.island=1", &err), 0);
    assert_int_equal(mesh_policy_check(&p, &err), 0);
    /* gpu= may name it, before or after its definition */
    mesh_alloc_t a;
    assert_int_equal(mesh_policy_set_arg(&p, "gpu=h1000", &err), 0);
    assert_int_equal(mesh_policy_check(&p, &err), 0);
    assert_int_equal(mesh_policy_alloc(&p.assume, NULL, 0, 0, 1, 8, &a, &err), 0);
    assert_string_equal(a.gpu.name, "H1000");
    assert_true(a.gpu.memory == 1e9 && a.gpu.peak_flops == 1500e12);
    assert_int_equal(mesh_policy_set_arg(&p, "gpu=H2000", &err), 0);
    assert_int_equal(mesh_policy_check(&p, &err), -1); /* named, never defined */
    assert_non_null(strstr(err.msg, "unknown GPU 'H2000'"));
    /* a name that gpu= cannot hold whole is refused, not cut: 31
     * characters are kept, 32 are not */
    char gpu_arg[64], name[33];
    memset(name, 'X', 32);
    name[32] = '\0';
    snprintf(gpu_arg, sizeof(gpu_arg), "gpu=%s", name);
    assert_int_equal(mesh_policy_set_arg(&p, gpu_arg, &err), -1);
    assert_non_null(strstr(err.msg, "unknown GPU"));
    gpu_arg[strlen(gpu_arg) - 1] = '\0';
    assert_int_equal(mesh_policy_set_arg(&p, gpu_arg, &err), 0);
    assert_string_equal(p.assume.gpu, gpu_arg + 4);
    /* a table's name that begins others is that GPU (A10, L4), a prefix of
     * several names none: gpu= names the choices, as partitions' gpu: does */
    assert_int_equal(mesh_policy_set_arg(&p, "gpu=a10", &err), 0);
    assert_string_equal(p.assume.gpu, "A10");
    assert_int_equal(mesh_policy_set_arg(&p, "gpu=L4", &err), 0);
    assert_string_equal(p.assume.gpu, "L4");
    assert_int_equal(mesh_policy_set_arg(&p, "gpu=H100", &err), -1);
    assert_string_equal(err.msg, "gpu: 'H100' is 3 GPUs: H100-SXM (80 GiB, NVLink x8), H100-PCIe "
                                 "(80 GiB, no NVLink), H100-NVL (94 GiB, NVLink x2); name one "
                                 "(nvidia-smi --query-gpu=name prints yours)");
    assert_string_equal(p.assume.gpu, "L4");
    assert_int_equal(mesh_policy_set_arg(&p, "gpu=H1000", &err), 0);
    assert_int_equal(p.assume.gpu_overrides[0].pci_vendor, 0x10de);
    assert_int_equal(p.assume.gpu_overrides[0].pci_device, 0x9999);
    /* a key of 127 characters is read (and unknown), one of 128 is not a
     * key at all: no buffer of the reader holds it */
    char long_arg[160];
    memset(long_arg, 'k', 128);
    snprintf(long_arg + 128, sizeof(long_arg) - 128, "=1");
    assert_int_equal(mesh_policy_set_arg(&p, long_arg, &err), -1);
    assert_non_null(strstr(err.msg, "is not key=value"));
    memmove(long_arg + 127, long_arg + 128, 3);
    assert_int_equal(mesh_policy_set_arg(&p, long_arg, &err), -1);
    assert_null(strstr(err.msg, "is not key=value"));
    assert_int_equal(mesh_policy_set_arg(&p, "bind=gpu", &err), 0);
    assert_true(p.launch.bind_gpu);
    assert_int_equal(mesh_policy_set_arg(&p, "bind=tight", &err), -1);
    assert_int_equal(mesh_policy_set_arg(&p, "gpu_order=minor", &err), 0);
    assert_true(p.launch.gpu_order_minor);
    assert_int_equal(mesh_policy_set_arg(&p, "topology_xml=none", &err), 0);
    assert_string_equal(p.launch.topology_xml, "none");
}

/* One rule names a GPU, by name (gpu=, --gpu, partitions) or by PCI id (the
 * node's topology): both ways give the same GPU. */
static void gpus__resolved_by_name_or_pci_id(void **state)
{
    mesh_policy_t p;
    mesh_error_t err;
    mesh_gpu_t by_name, by_pci;
    mesh_policy_init(&p);
    /* the table alone */
    assert_int_equal(mesh_policy_resolve_gpu(NULL, NULL, 0x10de, 0x2330, &by_pci, &err), 0);
    assert_string_equal(by_pci.name, "H100-SXM");
    assert_int_equal(mesh_policy_resolve_gpu(NULL, NULL, 0x10de, 0x9999, &by_pci, &err), -1);
    assert_non_null(strstr(err.msg, "10de:9999"));
    assert_non_null(strstr(err.msg, "gpu.NAME.pci=10de:9999"));
    assert_int_equal(mesh_policy_resolve_gpu(NULL, "H1000", 0, 0, &by_name, &err), -1);
    assert_non_null(strstr(err.msg, "unknown GPU 'H1000'"));
    /* a PCI id the admin gives a table model, with an override */
    const char *args[] = {"gpu.A100-80GB.pci=10de:9999", "gpu.a100-80gb.island=4",
                          "gpu.H1000.pci=10de:9998",     "gpu.H1000.memory=90GB",
                          "gpu.H1000.peak_tflops=1200",  "gpu.H1000.link_bw=300GB/s",
                          "gpu.H1000.island=1"};
    for (size_t i = 0; i < sizeof(args) / sizeof(args[0]); i++)
        assert_int_equal(mesh_policy_set_arg(&p, args[i], &err), 0);
    assert_int_equal(mesh_policy_check(&p, &err), 0);
    assert_int_equal(mesh_policy_resolve_gpu(&p.assume, NULL, 0x10de, 0x9999, &by_pci, &err), 0);
    assert_int_equal(mesh_policy_resolve_gpu(&p.assume, "A100-80GB", 0, 0, &by_name, &err), 0);
    assert_string_equal(by_pci.name, "A100-80GB");
    assert_int_equal(by_pci.island, 4);
    assert_memory_equal(&by_pci, &by_name, sizeof(by_pci));
    /* a GPU the admin defines */
    assert_int_equal(mesh_policy_resolve_gpu(&p.assume, NULL, 0x10de, 0x9998, &by_pci, &err), 0);
    assert_int_equal(mesh_policy_gpu(&p.assume, "h1000", &by_name, &err), 0);
    assert_string_equal(by_pci.name, "H1000");
    assert_true(by_pci.memory == 90e9 && by_pci.peak_flops == 1200e12);
    assert_true(by_pci.link_bw == 300e9);
    assert_int_equal(by_pci.island, 1);
    assert_int_equal(by_pci.vendor_id, 0x10de);
    assert_memory_equal(&by_pci, &by_name, sizeof(by_pci));
}

/* The names users and admins write: the table's, the product names the
 * vendors' tools print (nvidia-smi --query-gpu=name, amd-smi, lspci), in any
 * case and spacing; a short name that is several GPUs names them all. */
static void gpus__names_users_write(void **state)
{
    static const struct {
        const char *name, *gpu;
    } names[] = {
        {"NVIDIA H100 80GB HBM3", "H100-SXM"},
        {"NVIDIA A100-SXM4-80GB", "A100-80GB"},
        {"NVIDIA H100 PCIe", "H100-PCIe"},
        {"NVIDIA H200", "H200"},
        {"NVIDIA A100-SXM4-40GB", "A100-40GB"},
        {"Tesla V100-SXM2-32GB", "V100-32GB"},
        {"NVIDIA B200", "B200"},
        {"Instinct MI300X", "MI300X"},
        {"AMD Instinct MI250X", "MI250X"},
        {"AMD Instinct MI300X OAM", "MI300X"},
        {"NVIDIA A100 80GB PCIe", "A100-PCIe-80GB"},
        {"h100-sxm", "H100-SXM"},              /* any case */
        {"H100 PCIe", "H100-PCIe"},            /* ' ' and '-' alike */
        {"NVIDIA-H100-80GB-HBM3", "H100-SXM"}, /* Kubernetes' gpu.product label */
        {"nvidia h200", "H200"},
        {"AMD-Instinct-MI250X-MI250", "MI250X"}, /* "MI250X / MI250" */
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        const mesh_gpu_t *g = mesh_gpu_find(names[i].name);
        if (!g || strcmp(g->name, names[i].gpu) != 0)
            fail_msg("'%s' is %s, not %s", names[i].name, g ? g->name : "unknown", names[i].gpu);
    }
    /* every product name is the GPU the same card's PCI id is */
    assert_true(mesh_gpu_alias_count() >= 20);
    assert_null(mesh_gpu_alias_at(mesh_gpu_alias_count()));
    assert_null(mesh_gpu_alias_at(-1));
    for (int i = 0; i < mesh_gpu_alias_count(); i++) {
        const mesh_gpu_alias_t *a = mesh_gpu_alias_at(i);
        const mesh_gpu_t *g = mesh_gpu_find(a->alias), *table = NULL;
        for (int j = 0; j < mesh_gpu_count(); j++)
            if (strcmp(mesh_gpu_at(j)->name, a->name) == 0)
                table = mesh_gpu_at(j);
        if (!g || g != table || g != mesh_gpu_find_pci(g->vendor_id, a->device))
            fail_msg("'%s' (PCI %04x) is not the table's %s", a->alias, a->device, a->name);
    }
    /* the 12 GB P100 is not priced as the 16 GB one (a false "fits") */
    const mesh_gpu_t *p12 = mesh_gpu_find_pci(0x10de, 0x15f7);
    assert_non_null(p12);
    assert_string_equal(p12->name, "P100-PCIe-12GB");
    assert_true(p12->memory < 12.5 * 1073741824.0);
    /* a short name that is several GPUs: the user says which */
    mesh_gpu_t g;
    mesh_error_t err;
    assert_null(mesh_gpu_find("H100"));
    assert_int_equal(mesh_gpu_lookup("H100", &g, &err), -1);
    assert_string_equal(err.msg, "gpu: 'H100' is 3 GPUs: H100-SXM (80 GiB, NVLink x8), "
                                 "H100-PCIe (80 GiB, no NVLink), H100-NVL (94 GiB, NVLink x2); "
                                 "name one (nvidia-smi --query-gpu=name prints yours)");
    assert_int_equal(mesh_gpu_lookup("a100", &g, &err), -1);
    assert_non_null(strstr(err.msg, "gpu: 'a100' is 4 GPUs: A100-40GB (40 GiB, NVLink x8), "
                                    "A100-80GB (80 GiB, NVLink x8), A100-PCIe-40GB"));
    /* an unknown name: the closest one */
    assert_int_equal(mesh_gpu_lookup("H100-SMX", &g, &err), -1);
    assert_non_null(strstr(err.msg, "gpu: unknown GPU 'H100-SMX' (known: V100-16GB "));
    assert_non_null(strstr(err.msg, "); did you mean H100-SXM?"));
    assert_int_equal(mesh_gpu_lookup("NVIDIA H100 80GB HMB3", &g, &err), -1);
    assert_non_null(strstr(err.msg, "); did you mean H100-SXM?"));
    assert_int_equal(mesh_gpu_lookup("MI50", &g, &err), -1); /* the 16 GB one too? */
    assert_non_null(strstr(err.msg, "); did you mean MI50-32GB?"));
    assert_int_equal(mesh_gpu_lookup("Z80", &g, &err), -1);
    assert_null(strstr(err.msg, "did you mean"));
    assert_null(mesh_gpu_find("NVIDIA")); /* a vendor is no GPU */
    assert_null(mesh_gpu_find(""));
    /* every front end names GPUs through the policy: the same names there */
    mesh_policy_t p;
    mesh_alloc_t a;
    mesh_policy_init(&p);
    assert_int_equal(mesh_policy_set_arg(&p, "gpu.H100-SXM.memory=70GiB", &err), 0);
    assert_int_equal(mesh_policy_alloc(&p.assume, "NVIDIA H100 80GB HBM3", 0, 0, 1, 8, &a, &err),
                     0);
    assert_string_equal(a.gpu.name, "H100-SXM");
    assert_true(a.gpu.memory == 70.0 * 1073741824);
    assert_int_equal(mesh_policy_alloc(&p.assume, "H100", 0, 0, 1, 8, &a, &err), -1);
    assert_non_null(strstr(err.msg, "'H100' is 3 GPUs"));
}

/* A GPU the admin defines is priced like the default GPU (H100-SXM) where
 * the policy gives no figure, but it must not claim the H100's FP8: a plan
 * would then train in FP8 on a GPU that has none. */
static void gpus__defined_without_fp8(void **state)
{
    mesh_policy_t p;
    mesh_error_t err;
    mesh_gpu_t g;
    mesh_alloc_t a;
    mesh_policy_init(&p);
    const char *args[] = {"gpu.X1.pci=10de:9998", "gpu.X1.memory=80GB", "gpu.X1.peak_tflops=500",
                          "gpu.X1.island=1"};
    for (size_t i = 0; i < sizeof(args) / sizeof(args[0]); i++)
        assert_int_equal(mesh_policy_set_arg(&p, args[i], &err), 0);
    assert_int_equal(mesh_policy_check(&p, &err), 0);
    assert_int_equal(mesh_policy_gpu(&p.assume, "X1", &g, &err), 0);
    assert_true(g.peak_fp8 == 0);
    assert_int_equal(g.fp8_blocks, 0);
    assert_int_equal(mesh_policy_resolve_gpu(&p.assume, NULL, 0x10de, 0x9998, &g, &err), 0);
    assert_true(g.peak_fp8 == 0);
    assert_int_equal(g.fp8_blocks, 0);
    /* nor another GPU's PCI ids: its own, of its own vendor (an MI300X-class
     * card the table lacks is AMD's, 1002) */
    assert_int_equal(g.vendor_id, 0x10de);
    assert_int_equal(g.devices[0], 0x9998);
    assert_int_equal(g.devices[1], 0);
    const char *amd[] = {"gpu.M1.pci=1002:7fff", "gpu.M1.memory=192GB", "gpu.M1.peak_tflops=1300",
                         "gpu.M1.island=8"};
    for (size_t i = 0; i < sizeof(amd) / sizeof(amd[0]); i++)
        assert_int_equal(mesh_policy_set_arg(&p, amd[i], &err), 0);
    assert_int_equal(mesh_policy_resolve_gpu(&p.assume, NULL, 0x1002, 0x7fff, &g, &err), 0);
    assert_string_equal(g.name, "M1");
    assert_int_equal(g.vendor_id, 0x1002);
    assert_int_equal(g.devices[0], 0x7fff);
    /* so FP8 training on it is refused */
    mesh_model_t m = test_preset("llama3-8b");
    m.precision = MESH_PREC_FP8;
    assert_int_equal(mesh_policy_alloc(&p.assume, "X1", 0, 0, 1, 8, &a, &err), 0);
    assert_null(mesh_plan_create(&m, &a, NULL, &p.assume, &err));
    assert_non_null(strstr(err.msg, "X1 has no FP8 tensor cores"));
    /* unless the policy says it has: twice its bf16 peak, no MXFP8 */
    assert_int_equal(mesh_policy_set_arg(&p, "gpu.X1.fp8=yes", &err), 0);
    assert_int_equal(mesh_policy_gpu(&p.assume, "X1", &g, &err), 0);
    assert_true(g.peak_fp8 == 1000e12);
    assert_int_equal(g.fp8_blocks, 0);
    assert_int_equal(mesh_policy_alloc(&p.assume, "X1", 0, 0, 1, 8, &a, &err), 0);
    mesh_plan_t *plan = mesh_plan_create(&m, &a, NULL, &p.assume, &err);
    assert_non_null(plan);
    mesh_plan_destroy(plan);
    /* a table GPU keeps its own FP8 peak, or loses it */
    assert_int_equal(mesh_policy_set_arg(&p, "gpu.H100-SXM.fp8=yes", &err), 0);
    assert_int_equal(mesh_policy_gpu(&p.assume, "H100-SXM", &g, &err), 0);
    assert_true(g.peak_fp8 == mesh_gpu_find("H100-SXM")->peak_fp8);
    assert_int_equal(mesh_policy_set_arg(&p, "gpu.B200.fp8=no", &err), 0);
    assert_int_equal(mesh_policy_gpu(&p.assume, "B200", &g, &err), 0);
    assert_true(g.peak_fp8 == 0);
    assert_int_equal(g.fp8_blocks, 0);
    /* the block-scaled recipes a GPU the table lacks runs are the policy's
     * to say: blockwise, then MXFP8 too, each planned once said */
    static const struct {
        const char *fp8, *recipe;
        int blocks;
    } said[] = {{"blockwise", "blockwise", 1}, {"mxfp8", "mxfp8", 2}};
    for (size_t i = 0; i < sizeof(said) / sizeof(said[0]); i++) {
        mesh_model_t r = test_specf("preset: llama3-8b\ntrain: {precision: fp8, fp8_recipe: %s}\n",
                                    said[i].recipe);
        assert_int_equal(mesh_policy_set_arg(&p, "gpu.X1.fp8=yes", &err), 0);
        assert_int_equal(mesh_policy_alloc(&p.assume, "X1", 0, 0, 1, 8, &a, &err), 0);
        assert_null(mesh_plan_create(&r, &a, NULL, &p.assume, &err));
        char arg[40];
        snprintf(arg, sizeof(arg), "gpu.X1.fp8=%s", said[i].fp8);
        assert_int_equal(mesh_policy_set_arg(&p, arg, &err), 0);
        assert_int_equal(mesh_policy_gpu(&p.assume, "X1", &g, &err), 0);
        assert_true(g.peak_fp8 == 1000e12);
        assert_int_equal(g.fp8_blocks, said[i].blocks);
        assert_int_equal(mesh_policy_alloc(&p.assume, "X1", 0, 0, 1, 8, &a, &err), 0);
        plan = mesh_plan_create(&r, &a, NULL, &p.assume, &err);
        assert_non_null(plan);
        mesh_plan_destroy(plan);
    }
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
                  "gpus:\n  H100-SXM:\n    memory: 80GiB\n    net_bw: 25GB/s\n");
    assert_int_equal(mesh_policy_load(&p, path, &err), 0);
    unlink(path);
    assert_int_equal(p.enforce, MESH_ENFORCE_WARN);
    assert_true(p.assume.reserve == 0.08);
    assert_int_equal(p.launch.port_lo, 40000);
    mesh_gpu_t g = *mesh_gpu_find("H100-SXM");
    mesh_policy_apply_gpu(&p.assume, &g);
    assert_true(g.memory == 80.0 * 1073741824);
    assert_true(g.net_bw == 25e9);
    /* via the plugstack argument too */
    path = write_tmp("export: mesh\n");
    char arg[128];
    snprintf(arg, sizeof(arg), "policy=%s", path);
    assert_int_equal(mesh_policy_set_arg(&p, arg, &err), 0);
    unlink(path);
    assert_int_equal(p.launch.export_mode, MESH_EXPORT_MESH);
    /* at most 64 KiB: a policy of exactly that (comments pad it) is read,
     * one byte more is refused, naming the limit */
    static char big[64 * 1024 + 1];
    memset(big, '#', sizeof(big));
    memcpy(big, "enforce: off\n", 13);
    big[sizeof(big) - 2] = '\n';
    assert_int_equal(mesh_policy_parse(&p, big, sizeof(big) - 1, "big.yaml", &err), 0);
    assert_int_equal(p.enforce, MESH_ENFORCE_OFF);
    assert_int_equal(mesh_policy_parse(&p, big, sizeof(big), "big.yaml", &err), -1);
    assert_string_equal(err.msg, "big.yaml: larger than 65536 bytes");
    /* err is written only on failure: a policy read whole leaves a message
     * kept there before as it was, whichever key was checked last */
    static const char *const good[] = {
        "gpu: H100-SXM\n",
        "partitions:\n  gpu: {gpu: H100-SXM}\n",
        "gpus:\n  X9: {pci: \"10de:9998\", memory: 80GB, peak_tflops: 500, island: 8}\ngpu: X9\n",
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        mesh_policy_init(&p);
        mesh_error_set(&err, "kept");
        assert_int_equal(mesh_policy_parse(&p, good[i], strlen(good[i]), "p.yaml", &err), 0);
        assert_string_equal(err.msg, "kept");
    }
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
        {"enforce: warn\n---\nenforce: off\n", ":2: a policy holds one YAML document"},
        /* a flow mapping ends its document before the stray '}': the parser's
         * error after it, not a second document */
        {"{enforce: warn}\n}\n", ":2: YAML syntax error"},
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

/* mesh_policy_on_config_error over the plugstack arguments args[0..n-1],
 * "policy=@" naming path. */
static int on_config_error(const char *const *args, int n, const char *path, mesh_error_t *err)
{
    char buf[8][300];
    char *av[8];
    assert_true(n <= 8);
    for (int i = 0; i < n; i++) {
        if (strcmp(args[i], "policy=@") == 0)
            snprintf(buf[i], sizeof(buf[i]), "policy=%s", path);
        else
            snprintf(buf[i], sizeof(buf[i]), "%s", args[i]);
        av[i] = buf[i];
    }
    return mesh_policy_on_config_error(n, av, err);
}

static void on_config_error__read_apart_from_the_rest(void **state)
{
    mesh_error_t err;
    /* nothing said: allow, however broken the rest; the arguments are not applied */
    assert_int_equal(mesh_policy_on_config_error(0, NULL, &err), 0);
    assert_int_equal(on_config_error((const char *[]){"resrve=0.05", "enforce=maybe"}, 2, "", &err),
                     0);
    assert_int_equal(
        on_config_error((const char *[]){"resrve=0.05", "on_config_error=reject"}, 2, "", &err), 1);
    /* in the file, after a line that does not parse, and a key that only starts so */
    char *path = write_tmp("enforce: maybe\ngpus: [\non_config_errors: allow\n"
                           "on_config_error:  \"reject\"  # stop the cluster\n");
    mesh_policy_t p;
    mesh_policy_init(&p);
    assert_int_equal(mesh_policy_load(&p, path, &err), -1); /* the file is broken */
    assert_int_equal(on_config_error((const char *[]){"policy=@"}, 1, path, &err), 1);
    /* the arguments' order decides: the last one said */
    assert_int_equal(
        on_config_error((const char *[]){"policy=@", "on_config_error=allow"}, 2, path, &err), 0);
    assert_int_equal(
        on_config_error((const char *[]){"on_config_error=allow", "policy=@"}, 2, path, &err), 1);
    unlink(path);
    /* a missing file says nothing; an indented line is not the top-level key */
    assert_int_equal(on_config_error((const char *[]){"on_config_error=reject", "policy=@"}, 2,
                                     "/nonexistent/meshplan.yaml", &err),
                     1);
    path = write_tmp("gpus:\n  on_config_error: reject\nenforce: warn # on_config_error: x\n");
    assert_int_equal(on_config_error((const char *[]){"policy=@"}, 1, path, &err), 0);
    unlink(path);
    /* a word that is neither: -1, naming it, whatever else is said */
    assert_int_equal(
        on_config_error((const char *[]){"on_config_error=rejct", "on_config_error=allow"}, 2, "",
                        &err),
        -1);
    assert_string_equal(err.msg, "on_config_error: 'rejct' is not one of allow, reject");
    path = write_tmp("on_config_error: # nothing\n");
    assert_int_equal(on_config_error((const char *[]){"policy=@"}, 1, path, &err), -1);
    assert_string_equal(err.msg, "on_config_error: '' is not one of allow, reject");
    unlink(path);
    /* as a key it is set as every other (the CLI and job_submit read the same file) */
    mesh_policy_init(&p);
    assert_int_equal(mesh_policy_set_arg(&p, "on_config_error=reject", &err), 0);
    assert_true(p.launch.config_fail_closed);
}

/* The policy's error for a file: exactly `want`. */
static void pol_file_error(const char *text, const char *want)
{
    mesh_policy_t p;
    mesh_error_t err;
    mesh_policy_init(&p);
    if (mesh_policy_parse(&p, text, strlen(text), "p.yaml", &err) == 0)
        fail_msg("accepted:\n%s", text);
    if (strcmp(err.msg, want) != 0)
        fail_msg("policy:\n%s\nerror '%s'\nwanted '%s'", text, err.msg, want);
}

/* Errors lead to the right key: every error of a file has its line and one
 * prefix, a section written as a key names the section, a typo of a family
 * names the family. */
static void errors__lead_to_the_key(void **state)
{
    /* partition: (as partition.NAME.FIELD reads) is the section partitions: */
    pol_file_error("reserve: 0.1\npartition:\n  h100: {gpu: H100-SXM}\n",
                   "p.yaml:2: partition: expected a single value; did you mean the section "
                   "partitions: (partitions: {NAME: {FIELD: VALUE}})?");
    pol_file_error("gpu:\n  H100-SXM: {memory: 80GB}\n",
                   "p.yaml:1: gpu: expected a single value; did you mean the section gpus: "
                   "(gpus: {NAME: {FIELD: VALUE}})?");
    /* a file's unknown key lists the file's sections, not the arguments' families */
    mesh_policy_t p;
    mesh_error_t err;
    mesh_policy_init(&p);
    const char *typo = "partitons: 3\n";
    assert_int_equal(mesh_policy_parse(&p, typo, strlen(typo), "p.yaml", &err), -1);
    assert_non_null(strstr(err.msg, "p.yaml:1: unknown policy key 'partitons' (keys: enforce "));
    assert_non_null(
        strstr(err.msg, " on_config_error moe_imbalance time_limit time_margin headroom framework "
                        "calibration dispatcher "
                        "gpus: "
                        "partitions:); did you mean the "
                        "section partitions: (partitions: {NAME: {FIELD: VALUE}})?"));
    assert_null(strstr(err.msg, "NAME.FIELD"));
    /* and the arguments' list theirs, with the family a typo meant */
    static const struct {
        const char *arg, *hint;
    } args[] = {
        {"partitions.p.nodes=4", "policy); did you mean partition.p.nodes?"},
        {"gpus.H100-SXM.memory=80GB", "policy); did you mean gpu.H100-SXM.memory?"},
        {"partition=4", "policy); partition settings are partition.NAME.FIELD (e.g. "
                        "partition.gpu.gpu=H100-SXM)"},
        {"Reserve=0.1", "policy); did you mean reserve?"}, /* keys are lower case */
        /* the first key of each table is meant like any other */
        {"enforse=warn", "policy); did you mean enforce?"},
        {"gpu.H100-SXM.pcci=10de:2330", "did you mean pci?"},
    };
    for (size_t i = 0; i < sizeof(args) / sizeof(args[0]); i++) {
        mesh_policy_init(&p);
        assert_int_equal(mesh_policy_set_arg(&p, args[i].arg, &err), -1);
        size_t n = strlen(err.msg), h = strlen(args[i].hint);
        if (n < h || strcmp(err.msg + n - h, args[i].hint) != 0)
            fail_msg("%s: '%s' does not end '%s'", args[i].arg, err.msg, args[i].hint);
    }
    /* a GPU name in a partition: its line, one prefix */
    pol_file_error(
        "enforce: warn\npartitions:\n  h100:\n    nodes: 4\n    gpu: H100-SMX\n",
        "p.yaml:5: partition.h100.gpu: unknown GPU 'H100-SMX' (known: V100-16GB "
        "V100-32GB V100-SXM3-32GB V100-PCIe-16GB V100-PCIe-32GB P100-SXM2 P100-PCIe "
        "P100-PCIe-12GB T4 "
        "A100-40GB A100-80GB A100-PCIe-40GB A100-PCIe-80GB A10 A40 H100-SXM H100-PCIe "
        "H100-NVL H800 H20 H200 GH200 B200 B300 GB200 GB300 L40S L4 RTX-6000-Ada MI50-32GB "
        "MI250X MI300X MI325X MI355X); did you mean H100-SXM?");
    pol_file_error("partitions:\n  h100: {gpu: H100}\n",
                   "p.yaml:2: partition.h100.gpu: 'H100' is 3 GPUs: H100-SXM (80 GiB, NVLink x8), "
                   "H100-PCIe (80 GiB, no NVLink), H100-NVL (94 GiB, NVLink x2); name one "
                   "(nvidia-smi --query-gpu=name prints yours)");
    /* so in gpu=, named before the GPU it names is defined */
    pol_file_error(
        "enforce: warn\ngpu: X9\ngpus:\n  X1: {pci: \"10de:9998\", memory: 80GB, "
        "peak_tflops: 500, island: 8}\n",
        "p.yaml:2: gpu: unknown GPU 'X9' (known: V100-16GB V100-32GB V100-SXM3-32GB "
        "V100-PCIe-16GB V100-PCIe-32GB P100-SXM2 P100-PCIe P100-PCIe-12GB T4 A100-40GB A100-80GB "
        "A100-PCIe-40GB A100-PCIe-80GB A10 A40 H100-SXM H100-PCIe H100-NVL H800 H20 H200 GH200 "
        "B200 B300 GB200 GB300 L40S L4 RTX-6000-Ada MI50-32GB MI250X MI300X MI325X MI355X)");
    /* and in a GPU's own entry: the entry's line */
    pol_file_error("reserve: 0.1\ngpus:\n  H100-SXM: {net_bw: 25GB/s}\n  H100-SMX:\n    memory: "
                   "70GiB\n",
                   "p.yaml:4: gpu.H100-SMX: not a GPU of the table (did you mean H100-SXM?); to "
                   "define one, give gpu.H100-SMX.pci=VVVV:DDDD, .memory=, .peak_tflops= and "
                   ".island=");
    /* a key the file did not set (an argument before policy=) has no line of the file */
    mesh_policy_init(&p);
    assert_int_equal(mesh_policy_set_arg(&p, "gpu=X9", &err), 0);
    const char *none = "enforce: warn\n";
    assert_int_equal(mesh_policy_parse(&p, none, strlen(none), "p.yaml", &err), -1);
    assert_true(strncmp(err.msg, "gpu: unknown GPU 'X9' (known: ", 30) == 0);
}

/* A GPU the policy defines says how many GPUs share an NVLink island: no
 * default is safe (1 refuses jobs that fit with TP over NVLink, 8 plans TP
 * over PCIe), so it is required, by name. */
static void gpus__defined_with_their_island(void **state)
{
    static const char *const args[] = {"gpu.X1.pci=10de:9998", "gpu.X1.memory=80GB",
                                       "gpu.X1.peak_tflops=500"};
    mesh_policy_t p;
    mesh_error_t err;
    mesh_alloc_t a;
    mesh_policy_init(&p);
    for (size_t i = 0; i < sizeof(args) / sizeof(args[0]); i++)
        assert_int_equal(mesh_policy_set_arg(&p, args[i], &err), 0);
    assert_int_equal(mesh_policy_check(&p, &err), -1);
    assert_string_equal(err.msg, "gpu.X1.island: missing: a GPU the policy defines needs .pci, "
                                 ".memory, .peak_tflops and .island (island: the GPUs per NVLink "
                                 "island: 1 for PCIe cards, 8 for an 8-GPU NVLink board)");
    pol_file_error("gpus:\n  X1:\n    pci: \"10de:9998\"\n    memory: 80GB\n    peak_tflops: 500\n",
                   "p.yaml:2: gpu.X1.island: missing: a GPU the policy defines needs .pci, "
                   ".memory, .peak_tflops and .island (island: the GPUs per NVLink island: 1 for "
                   "PCIe cards, 8 for an 8-GPU NVLink board)");
    /* each field it lacks, by name */
    mesh_policy_init(&p);
    assert_int_equal(mesh_policy_set_arg(&p, "gpu.X1.island=4", &err), 0);
    assert_int_equal(mesh_policy_check(&p, &err), -1);
    assert_true(strncmp(err.msg, "gpu.X1.pci: missing: ", 21) == 0);
    assert_int_equal(mesh_policy_set_arg(&p, "gpu.X1.pci=10de:9998", &err), 0);
    assert_int_equal(mesh_policy_check(&p, &err), -1);
    assert_true(strncmp(err.msg, "gpu.X1.memory: missing: ", 24) == 0);
    assert_int_equal(mesh_policy_set_arg(&p, "gpu.X1.memory=80GB", &err), 0);
    assert_int_equal(mesh_policy_check(&p, &err), -1);
    assert_true(strncmp(err.msg, "gpu.X1.peak_tflops: missing: ", 29) == 0);
    assert_int_equal(mesh_policy_set_arg(&p, "gpu.X1.peak_tflops=500", &err), 0);
    assert_int_equal(mesh_policy_check(&p, &err), 0);
    /* and then TP spans the island it gave */
    assert_int_equal(mesh_policy_alloc(&p.assume, "X1", 0, 0, 1, 8, &a, &err), 0);
    assert_int_equal(a.island, 4);
    assert_int_equal(a.gpu.island, 4);
}

/* Every GPU a name can resolve to under a policy, as it resolves: the
 * table's with the overrides, then the GPUs the policy defines. */
static void gpus__listed_as_the_policy_makes_them(void **state)
{
    mesh_policy_t p;
    mesh_error_t err;
    mesh_gpu_t g, want;
    mesh_policy_init(&p);
    int n = mesh_gpu_count();
    assert_int_equal(mesh_policy_gpu_count(NULL), n);
    assert_int_equal(mesh_policy_gpu_count(&p.assume), n);
    assert_int_equal(mesh_policy_gpu_at(NULL, 0, &g), MESH_GPU_TABLE);
    assert_memory_equal(&g, mesh_gpu_at(0), sizeof(g));
    static const char *const args[] = {"gpu.h100-sxm.memory=70GiB", "gpu.Y2.memory=1GB",
                                       "gpu.X1.pci=10de:9998",      "gpu.X1.memory=64GiB",
                                       "gpu.X1.peak_tflops=500",    "gpu.X1.island=4",
                                       "gpu.B200.fp8=yes"};
    for (size_t i = 0; i < sizeof(args) / sizeof(args[0]); i++)
        assert_int_equal(mesh_policy_set_arg(&p, args[i], &err), 0);
    /* Y2 has no peak: it defines nothing, and is not listed */
    assert_int_equal(mesh_policy_gpu_count(&p.assume), n + 1);
    for (int i = 0; i < n + 1; i++) {
        int origin = mesh_policy_gpu_at(&p.assume, i, &g);
        assert_int_equal(mesh_policy_gpu(&p.assume, g.name, &want, &err), 0);
        assert_memory_equal(&g, &want, sizeof(g));
        assert_int_equal(origin, strcmp(g.name, "X1") == 0         ? MESH_GPU_DEFINED
                                 : strcmp(g.name, "H100-SXM") == 0 ? MESH_GPU_OVERRIDDEN
                                                                   : MESH_GPU_TABLE);
    }
    assert_int_equal(mesh_policy_gpu_at(&p.assume, n + 1, &g), -1);
    assert_int_equal(mesh_policy_gpu_at(&p.assume, -1, &g), -1);
    /* as many as a policy may define: each listed once, none past them.
     * The fields after the table are set so that, read as one more entry,
     * they would define a GPU (moe_imbalance 1.3 gives it a name that no
     * table GPU has, the calibration's path a positive memory and peak):
     * a look one past the table counts it */
    mesh_policy_init(&p);
    assert_int_equal(mesh_policy_set_arg(&p, "moe_imbalance=1.3", &err), 0);
    snprintf(p.assume.calibration.path, sizeof(p.assume.calibration.path), "/site/calibration");
    char arg[64];
    for (int i = 0; i < MESH_GPU_OVERRIDES_MAX; i++) {
        const char *const key[] = {"pci", "memory", "peak_tflops", "island"};
        char value[4][32];
        snprintf(value[0], sizeof(value[0]), "10de:a0%02x", i + 1);
        snprintf(value[1], sizeof(value[1]), "%dGB", i + 1);
        snprintf(value[2], sizeof(value[2]), "1%02d", i + 1);
        snprintf(value[3], sizeof(value[3]), "8");
        for (int f = 0; f < 4; f++) {
            snprintf(arg, sizeof(arg), "gpu.site-%d.%s=%s", i, key[f], value[f]);
            assert_int_equal(mesh_policy_set_arg(&p, arg, &err), 0);
        }
    }
    assert_int_equal(mesh_policy_gpu_count(&p.assume), n + MESH_GPU_OVERRIDES_MAX);
    assert_int_equal(mesh_policy_gpu_at(&p.assume, n + MESH_GPU_OVERRIDES_MAX - 1, &g),
                     MESH_GPU_DEFINED);
    snprintf(arg, sizeof(arg), "site-%d", MESH_GPU_OVERRIDES_MAX - 1);
    assert_string_equal(g.name, arg);
    assert_int_equal(mesh_policy_gpu_at(&p.assume, n + MESH_GPU_OVERRIDES_MAX, &g), -1);
}

/* Keys are lower case (a typo is told its key); words, GPU names and the
 * GPUs' entries may be written in any case; partitions are Slurm's, whose
 * names are case-sensitive. */
static void names__case_where_users_expect(void **state)
{
    mesh_policy_t p;
    mesh_error_t err;
    mesh_policy_init(&p);
    static const char *const args[] = {"enforce=Warn",
                                       "export=TorchRun",
                                       "bind=GPU",
                                       "gpu_order=Minor",
                                       "steps=Batch,REGULAR",
                                       "topology_xml=NONE",
                                       "on_submit_error=REJECT",
                                       "on_topology_error=Fallback",
                                       "gpu=h100-SXM",
                                       "gpu.b200.fp8=NO"};
    for (size_t i = 0; i < sizeof(args) / sizeof(args[0]); i++)
        if (mesh_policy_set_arg(&p, args[i], &err) < 0)
            fail_msg("%s: %s", args[i], err.msg);
    assert_int_equal(p.enforce, MESH_ENFORCE_WARN);
    assert_int_equal(p.launch.export_mode, MESH_EXPORT_TORCHRUN);
    assert_true(p.launch.bind_gpu && p.launch.gpu_order_minor && p.launch.topology_fallback);
    assert_int_equal(p.launch.steps, MESH_STEP_BATCH | MESH_STEP_REGULAR);
    assert_string_equal(p.launch.topology_xml, "none");
    assert_true(p.controller.submit_fail_closed);
    assert_string_equal(p.assume.gpu, "H100-SXM");
    assert_string_equal(p.assume.gpu_overrides[0].name, "B200");
    /* one GPU by any of its names is one entry, and given twice an error */
    pol_file_error("gpus:\n  h100-sxm: {memory: 70GiB}\n  H100-SXM: {net_bw: 25GB/s}\n",
                   "p.yaml:3: gpu.H100-SXM: given twice");
    pol_file_error(
        "gpus:\n  H100-SXM: {memory: 70GiB}\n  NVIDIA H100 80GB HBM3: {net_bw: 25GB/s}\n",
        "p.yaml:3: gpu.NVIDIA H100 80GB HBM3: given twice");
    mesh_policy_init(&p);
    const char *yaml = "gpus:\n  NVIDIA H100 80GB HBM3: {memory: 70GiB}\n  x1: {pci: "
                       "\"10de:9998\", memory: 80GB, peak_tflops: 500, island: 2}\n"
                       "gpu: X1\npartitions:\n  a: {nodes: 1}\n  A: {nodes: 2}\n";
    assert_int_equal(mesh_policy_parse(&p, yaml, strlen(yaml), "p.yaml", &err), 0);
    mesh_gpu_t g;
    assert_int_equal(mesh_policy_gpu(&p.assume, "h100-sxm", &g, &err), 0);
    assert_true(g.memory == 70.0 * 1073741824);
    assert_int_equal(mesh_policy_gpu(&p.assume, "X1", &g, &err), 0);
    assert_int_equal(g.island, 2);
    assert_int_equal(p.assume.n_gpu_overrides, 2);
    assert_int_equal(mesh_policy_partition(&p, "a")->nodes, 1);
    assert_int_equal(mesh_policy_partition(&p, "A")->nodes, 2);
    assert_null(mesh_policy_partition(&p, "b"));
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
    assert_true(p.controller.submit_fail_closed);
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

/* Bandwidths say bits or bytes, and per second: each form with its value
 * in bytes per second; a unit that leaves it open is refused with both
 * readings (400Gb read as 400 GB/s was eight times too fast). */
static void bandwidth__units_exact__ambiguous_refused(void **state)
{
    static const struct {
        const char *value;
        double bytes;
    } ok[] = {
        {"50GB/s", 50e9},      {"400Gb/s", 50e9},  {"400Gbit/s", 50e9},
        {"50GByte/s", 50e9},   {"800Mb/s", 100e6}, {"200MB/s", 200e6},
        {"1.6Tb/s", 200e9},    {"1TB/s", 1e12},    {"25GiB/s", 25 * 1073741824.0},
        {"3.2 Tbit/s", 400e9},
    };
    mesh_error_t err;
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        mesh_policy_t p;
        char arg[64];
        mesh_policy_init(&p);
        snprintf(arg, sizeof(arg), "gpu.H100-SXM.net_bw=%s", ok[i].value);
        if (mesh_policy_set_arg(&p, arg, &err) < 0)
            fail_msg("%s: %s", arg, err.msg);
        if (p.assume.gpu_overrides[0].net_bw != ok[i].bytes)
            fail_msg("%s read as %.17g B/s, not %.17g", arg, p.assume.gpu_overrides[0].net_bw,
                     ok[i].bytes);
    }
    /* the value, and its error */
    static const char *const bad[][2] = {
        {"400Gb", "gpu.H100-SXM.net_bw: '400Gb' is ambiguous: write 400Gb/s (50.0 GB/s, bits) or "
                  "400GB/s (bytes)"},
        {"50GB", "gpu.H100-SXM.net_bw: '50GB' is ambiguous: write 50Gb/s (6.25 GB/s, bits) or "
                 "50GB/s (bytes)"},
        {"80G", "gpu.H100-SXM.net_bw: '80G' is ambiguous: write 80Gb/s (10.0 GB/s, bits) or "
                "80GB/s (bytes)"},
        {"200Mb", "gpu.H100-SXM.net_bw: '200Mb' is ambiguous: write 200Mb/s (25.0 MB/s, bits) or "
                  "200MB/s (bytes)"},
        {"50000000000", "gpu.H100-SXM.net_bw: '50000000000' has no unit: write 50000000000GB/s "
                        "(bytes per second) or 50000000000Gb/s (bits), or the like"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        mesh_policy_t p;
        char arg[64];
        mesh_policy_init(&p);
        snprintf(arg, sizeof(arg), "gpu.H100-SXM.net_bw=%s", bad[i][0]);
        assert_int_equal(mesh_policy_set_arg(&p, arg, &err), -1);
        assert_string_equal(err.msg, bad[i][1]);
    }
    /* in a file as in an argument, with the line */
    mesh_policy_t p;
    mesh_policy_init(&p);
    const char *yaml = "gpus:\n  H100-SXM:\n    net_bw: 400Gb\n";
    assert_int_equal(mesh_policy_parse(&p, yaml, strlen(yaml), "p.yaml", &err), -1);
    assert_string_equal(err.msg, "p.yaml:3: gpu.H100-SXM.net_bw: '400Gb' is ambiguous: write "
                                 "400Gb/s (50.0 GB/s, bits) or 400GB/s (bytes)");
    /* and counts as the spec takes them */
    mesh_policy_init(&p);
    assert_int_equal(mesh_policy_set_arg(&p, "partition.p.nodes=2k", &err), 0);
    assert_int_equal(p.controller.partitions[0].nodes, 2000);
    assert_int_equal(mesh_policy_set_arg(&p, "partition.p.nodes=1Ki", &err), 0);
    assert_int_equal(p.controller.partitions[0].nodes, 1024);
}

/* ---- every key, as meshplan-policy(5) documents it ----
 *
 * Written from meshplan-policy(5) (KEYS, GPUS and PARTITIONS) and doc/guide.md, not from
 * lib/policy.c.  The man page states no numeric bounds but reserve's being a
 * fraction; the others are the ones the errors state to admins. */

typedef struct pol_key {
    const char *key;  /* as plugstack.conf writes it; gpu.NAME.* and partition.NAME.* in YAML
                         go under gpus: and partitions: */
    const char *dflt; /* the documented default as written; NULL: unset by default */
    const char *lo, *below, *hi, *above; /* the bounds (accepted) and one past them (refused) */
    const char *below_msg, *above_msg;   /* their errors: {} is the value; "..." ends a prefix */
    const char *good;                    /* other values accepted, space-separated */
    const char *bad, *bad_msg;           /* a value refused, and the error */
    int at_check; /* bad is refused by mesh_policy_check, once the policy is read (in a file,
                     with the line of the key as any other error) */
} pol_key_t;

/* what a count may be written as (mesh_parse_count) */
#define COUNTS                                                                                     \
    ": digits, or a number with k, M, G or B, T (powers of 1000) or Ki, Mi, Gi, Ti (powers of "    \
    "1024): 32k is 32000, 32Ki 32768)"
/* a bandwidth out of range: the bounds in bytes per second */
#define RATE_OOR(key, lo) key ": {} is out of range (allowed " lo "B/s..100.0 TB/s)"
/* a bandwidth in bits or bytes: both readings (bits: in GB/s) */
#define AMBIGUOUS(key, g, bits)                                                                    \
    key ": '{}' is ambiguous: write " g "b/s (" bits " GB/s, bits) or " g "B/s (bytes)"
#define SIZE_OOR(key) key ": {} is out of range (allowed ..."

static const pol_key_t pol_keys[] = {
    {"enforce", "reject", NULL, NULL, NULL, NULL, NULL, NULL, "off warn reject", "maybe",
     "enforce: '{}' is not one of off, warn, reject", 0},
    {"reserve", "0.03", "0", "-0.01", "0.9", "0.91",
     "reserve: {} is out of range (allowed 0..0.9, a fraction)",
     "reserve: {} is out of range (allowed 0..0.9, a fraction)", "0.1 0.5", "lots",
     "reserve: '{}' is not a number (expected 0..0.9, a fraction)", 0},
    {"gpu", NULL, NULL, NULL, NULL, NULL, NULL, NULL, "H100-SXM h200 A100-80GB", "bad name!",
     "gpu: unknown GPU 'bad name!' (known: ...", 0},
    {"gpu_mem", NULL, "100MB", "99999999", "100TB", "100000000000001", SIZE_OOR("gpu_mem"),
     SIZE_OOR("gpu_mem"), "80GB 80GiB", "80G",
     "gpu_mem: unit 'G' is ambiguous: write GB (powers of 1000) or GiB (powers of 1024)", 0},
    {"export", "torch", NULL, NULL, NULL, NULL, NULL, NULL, "torch torchrun mesh", "slurm",
     "export: '{}' is not one of torch, torchrun, mesh", 0},
    {"port_range", "20000-29999", "1024-29999", "1023-29999", "20000-65535", "20000-65536",
     "port_range low: 1023 is out of range (allowed 1024..65535)",
     "port_range high: 65536 is out of range (allowed 1024..65535)",
     "30000-30999 40000-40000 1024-65535", "40000-30000",
     "port_range: {} is empty (LO must not exceed HI)", 0},
    {"port_range", "20000-29999", NULL, NULL, NULL, NULL, NULL, NULL, NULL, "3000",
     "port_range: '{}' is not LO-HI (e.g. 20000-29999)", 0},
    {"models_dir", NULL, NULL, NULL, "@255", "@256", NULL,
     "models_dir: path longer than 255 characters", "/opt/models /etc/slurm/meshplan-models",
     "relative", "models_dir: '{}' must be an absolute path", 0},
    {"topology_xml", NULL, NULL, NULL, "@255", "@256", NULL,
     "topology_xml: path longer than 255 characters", "none /etc/slurm/topo-%n.xml", "topo.xml",
     "topology_xml: '{}' must be an absolute path", 0},
    {"topology_timeout", "10", "0", "-1", "3600", "3601",
     "topology_timeout: {} is out of range (allowed 0..3600 seconds)",
     "topology_timeout: {} is out of range (allowed 0..3600 seconds)", "2.5 60", "soon",
     "topology_timeout: '{}' is not a number (expected 0..3600 seconds)", 0},
    {"on_topology_error", "fail", NULL, NULL, NULL, NULL, NULL, NULL, "fail fallback", "retry",
     "on_topology_error: '{}' is not one of fail, fallback", 0},
    {"bind", "none", NULL, NULL, NULL, NULL, NULL, NULL, "none gpu", "tight",
     "bind: '{}' is not one of none, gpu", 0},
    {"gpu_order", "pci", NULL, NULL, NULL, NULL, NULL, NULL, "pci minor", "bus",
     "gpu_order: '{}' is not one of pci, minor", 0},
    {"steps", "regular,batch", NULL, NULL, NULL, NULL, NULL, NULL,
     "regular batch interactive all regular,batch batch,interactive", "sometimes",
     "steps: '{}' is not one of regular, batch, interactive, all", 0},
    {"steps", "regular,batch", NULL, NULL, NULL, NULL, NULL, NULL, NULL, ",",
     "steps: empty (use regular, batch, interactive or all)", 0},
    {"overhead", "1GiB", "0", NULL, "1TB", "1000000000001", NULL, SIZE_OOR("overhead"),
     "2GiB 512MB", "lots", "overhead: '{}' is not a size (write e.g. 80GB or 80GiB)", 0},
    {"comm_buffer", "256MiB", "0", NULL, "100GB", "100000000001", NULL, SIZE_OOR("comm_buffer"),
     "128MiB 1GB", "1Q",
     "comm_buffer: unknown unit in '{}' (use B, KB, MB, GB, TB, KiB, MiB, "
     "GiB or TiB)",
     0},
    {"fragmentation", "0.05", "0", "-0.01", "1", "1.01",
     "fragmentation: {} is out of range (allowed 0..1, a fraction)",
     "fragmentation: {} is out of range (allowed 0..1, a fraction)", "0.1 0.5", "5%",
     "fragmentation: '{}' is not a number (expected 0..1, a fraction)", 0},
    {"moe_imbalance", "1.25", "1", "0.99", "1000", "1001",
     "moe_imbalance: {} is out of range (allowed 1..1000 times the mean)",
     "moe_imbalance: {} is out of range (allowed 1..1000 times the mean)", "1 2.5", "even",
     "moe_imbalance: '{}' is not a number (expected 1..1000 times the mean)", 0},
    {"time_limit", "warn", NULL, NULL, NULL, NULL, NULL, NULL, "off warn set reject", "always",
     "time_limit: '{}' is not one of off, warn, set, reject", 0},
    {"time_margin", "0.15", "0", "-0.01", "10", "10.01",
     "time_margin: {} is out of range (allowed 0..10, a fraction of the estimate)",
     "time_margin: {} is out of range (allowed 0..10, a fraction of the estimate)", "0.1 1", "15%",
     "time_margin: '{}' is not a number (expected 0..10, a fraction of the estimate)", 0},
    {"headroom", "0", "0", "-0.01", "0.9", "0.91",
     "headroom: {} is out of range (allowed 0..0.9, a fraction of the usable memory)",
     "headroom: {} is out of range (allowed 0..0.9, a fraction of the usable memory)", "0.05 0.25",
     "some", "headroom: '{}' is not a number (expected 0..0.9, a fraction of the usable memory)",
     0},
    {"framework", "auto", NULL, NULL, NULL, NULL, NULL, NULL, "auto megatron deepspeed torch",
     "nemo", "framework: '{}' is not one of auto, megatron, deepspeed, torch", 0},
    {"dispatcher", "alltoall", NULL, NULL, NULL, NULL, NULL, NULL, "alltoall deepep", "flex",
     "dispatcher: '{}' is not one of alltoall, deepep", 0},
    /* a file is read as the key is: tests/unit/test_calibrate reads one */
    {"calibration", "none", NULL, NULL, NULL, NULL, NULL, NULL, "none", "cal.yaml",
     "calibration: 'cal.yaml' must be an absolute path (meshplan calibrate -o)", 0},
    {"on_submit_error", "allow", NULL, NULL, NULL, NULL, NULL, NULL, "allow reject", "maybe",
     "on_submit_error: '{}' is not one of allow, reject", 0},
    {"on_config_error", "allow", NULL, NULL, NULL, NULL, NULL, NULL, "allow reject", "rejct",
     "on_config_error: '{}' is not one of allow, reject", 0},
    /* gpu.NAME.FIELD */
    {"gpu.H100-SXM.pci", NULL, NULL, NULL, NULL, NULL, NULL, NULL, "10de:2330 10de:2331", "10de",
     "gpu.H100-SXM.pci: '{}' is not a PCI id VVVV:DDDD (e.g. 10de:2330)", 0},
    {"gpu.H100-SXM.memory", NULL, "100MB", "99999999", "100TB", "100000000000001",
     SIZE_OOR("gpu.H100-SXM.memory"), SIZE_OOR("gpu.H100-SXM.memory"), "80GB 94GiB", "80G",
     "gpu.H100-SXM.memory: unit 'G' is ambiguous: write GB (powers of 1000) or GiB (powers of "
     "1024)",
     0},
    {"gpu.H100-SXM.peak_tflops", NULL, "1", "0.99", "1e6", "1000001",
     "gpu.H100-SXM.peak_tflops: {} is out of range (allowed 1..1000000 TFLOP/s)",
     "gpu.H100-SXM.peak_tflops: {} is out of range (allowed 1..1000000 TFLOP/s)", "989 1979.5",
     "fast", "gpu.H100-SXM.peak_tflops: '{}' is not a number (expected 1..1000000 TFLOP/s)", 0},
    {"gpu.H100-SXM.hbm_bw", NULL, "1GB/s", "999999999B/s", "100TB/s", "100000000000001B/s",
     RATE_OOR("gpu.H100-SXM.hbm_bw", "1.00 G"), RATE_OOR("gpu.H100-SXM.hbm_bw", "1.00 G"),
     "3350GB/s 4.8TB/s 20Tbit/s", "3350GB", AMBIGUOUS("gpu.H100-SXM.hbm_bw", "3350G", "418.8"), 0},
    {"gpu.H100-SXM.link_bw", NULL, "100MB/s", "99999999B/s", "100TB/s", "100000000000001B/s",
     RATE_OOR("gpu.H100-SXM.link_bw", "100.0 M"), RATE_OOR("gpu.H100-SXM.link_bw", "100.0 M"),
     "450GB/s 900GB/s 1.6Tb/s", "450G", AMBIGUOUS("gpu.H100-SXM.link_bw", "450G", "56.2"), 0},
    {"gpu.H100-SXM.net_bw", NULL, "100MB/s", "99999999B/s", "100TB/s", "100000000000001B/s",
     RATE_OOR("gpu.H100-SXM.net_bw", "100.0 M"), RATE_OOR("gpu.H100-SXM.net_bw", "100.0 M"),
     "25GB/s 60GByte/s 400Gb/s 100Gbit/s 800Mb/s", "400Gb",
     AMBIGUOUS("gpu.H100-SXM.net_bw", "400G", "50.0"), 0},
    {"gpu.H100-SXM.gemm_eff", NULL, "0.01", "0.009", "1", "1.01",
     "gpu.H100-SXM.gemm_eff: {} is out of range (allowed 0.01..1, a fraction)",
     "gpu.H100-SXM.gemm_eff: {} is out of range (allowed 0.01..1, a fraction)", "0.7 0.85", "high",
     "gpu.H100-SXM.gemm_eff: '{}' is not a number (expected 0.01..1, a fraction)", 0},
    {"gpu.H100-SXM.fp8", NULL, NULL, NULL, NULL, NULL, NULL, NULL, "yes no blockwise MXFP8",
     "maybe", "gpu.H100-SXM.fp8: 'maybe' is not one of yes, no, blockwise, mxfp8", 0},
    {"gpu.H100-SXM.island", NULL, "1", "0", "1024", "1025",
     "gpu.H100-SXM.island: {} is out of range (allowed 1..1024)",
     "gpu.H100-SXM.island: {} is out of range (allowed 1..1024)", "4 8", "all",
     "gpu.H100-SXM.island: '{}' is not an integer (expected 1..1024" COUNTS, 0},
    /* partition.NAME.FIELD (the controller's) */
    {"partition.p.gpu", NULL, NULL, NULL, NULL, NULL, NULL, NULL, "H100-SXM A100-80GB", "Z9",
     "partition.p.gpu: unknown GPU 'Z9' (known: ...", 1},
    {"partition.p.gpu_mem", NULL, "100MB", "99999999", "100TB", "100000000000001",
     SIZE_OOR("partition.p.gpu_mem"), SIZE_OOR("partition.p.gpu_mem"), "40GB 80GiB", "40G",
     "partition.p.gpu_mem: unit 'G' is ambiguous: write GB (powers of 1000) or GiB (powers of "
     "1024)",
     0},
    {"partition.p.nvlink", NULL, "1", "0", "1048576", "1048577",
     "partition.p.nvlink: {} is out of range (allowed 1..1048576)",
     "partition.p.nvlink: {} is out of range (allowed 1..1048576)", "4 8", "all",
     "partition.p.nvlink: '{}' is not an integer (expected 1..1048576" COUNTS, 0},
    {"partition.p.nodes", NULL, "1", "0", "1048576", "1048577",
     "partition.p.nodes: {} is out of range (allowed 1..1048576)",
     "partition.p.nodes: {} is out of range (allowed 1..1048576)", "4 1000 2k 1Ki", "many",
     "partition.p.nodes: '{}' is not an integer (expected 1..1048576" COUNTS, 0},
    {"partition.p.max_time", NULL, NULL, NULL, NULL, NULL, NULL, NULL,
     "2-00:00:00 90 2:30:00 14d UNLIMITED", "forever",
     "partition.p.max_time: 'forever' is not a time limit (...", 0},
    /* policy=FILE: plugstack.conf only (a file cannot include another) */
    {"policy", NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "/nonexistent/meshplan.yaml",
     "cannot open policy '{}': ...", 0},
};

#define POL_KEYS (sizeof(pol_keys) / sizeof(pol_keys[0]))

/* "@N": an absolute path of N characters; anything else as it is. */
static const char *pol_value(const char *v, char *buf, size_t len)
{
    if (!v || v[0] != '@')
        return v;
    size_t n = strtoul(v + 1, NULL, 10);
    assert_true(n < len);
    memset(buf, 'd', n);
    buf[0] = '/';
    buf[n] = '\0';
    return buf;
}

/* The key's family: "" (top level), "gpu" or "partition". */
static const char *pol_family(const char *key)
{
    return strncmp(key, "gpu.", 4) == 0          ? "gpu"
           : strncmp(key, "partition.", 10) == 0 ? "partition"
                                                 : "";
}

/* The field of a gpu.NAME.FIELD or partition.NAME.FIELD key; the key else. */
static const char *pol_field(const char *key)
{
    return *pol_family(key) ? strrchr(key, '.') + 1 : key;
}

/* The YAML for key = value; returns the value's line. */
static int pol_yaml(const char *key, const char *value, char *buf, size_t len)
{
    const char *fam = pol_family(key);
    if (!*fam) {
        snprintf(buf, len, "%s: \"%s\"\n", key, value);
        return 1;
    }
    const char *name = strchr(key, '.') + 1, *dot = strrchr(key, '.');
    snprintf(buf, len, "%ss:\n  %.*s:\n    %s: \"%s\"\n", fam, (int)(dot - name), name, dot + 1,
             value);
    return 3;
}

/* Set key = value as plugstack.conf would (and check the policy as a whole). */
static int pol_arg(mesh_policy_t *p, const char *key, const char *value, mesh_error_t *err)
{
    char arg[512];
    snprintf(arg, sizeof(arg), "%s=%s", key, value);
    return mesh_policy_set_arg(p, arg, err) < 0 ? -1 : mesh_policy_check(p, err);
}

static int pol_file(mesh_policy_t *p, const char *key, const char *value, mesh_error_t *err,
                    int *line)
{
    char yaml[512];
    *line = pol_yaml(key, value, yaml, sizeof(yaml));
    return mesh_policy_parse(p, yaml, strlen(yaml), "p.yaml", err);
}

/* Does msg read prefix + tmpl, {} replaced by value ("..." at the end: only
 * begin so)?  want gets what it should read. */
static int pol_is(const char *msg, const char *prefix, const char *tmpl, const char *value,
                  char *want, size_t len)
{
    size_t n = (size_t)snprintf(want, len, "%s", prefix);
    for (const char *t = tmpl; *t && n + 1 < len; t++)
        if (strncmp(t, "{}", 2) == 0) {
            n += (size_t)snprintf(want + n, len - n, "%s", value);
            t++;
        } else {
            want[n++] = *t;
            want[n] = '\0';
        }
    if (n > 3 && strcmp(want + n - 3, "...") == 0)
        return strncmp(msg, want, n - 3) == 0;
    return strcmp(msg, want) == 0;
}

/* key = value is accepted both ways, and gives the same policy. */
static mesh_policy_t pol_accept(const char *key, const char *value)
{
    mesh_policy_t a, y;
    mesh_error_t err;
    int line;
    mesh_policy_init(&a);
    mesh_policy_init(&y);
    if (pol_arg(&a, key, value, &err) < 0)
        fail_msg("%s=%s: %s", key, value, err.msg);
    if (strcmp(key, "policy") != 0) {
        if (pol_file(&y, key, value, &err, &line) < 0)
            fail_msg("%s: %s in YAML: %s", key, value, err.msg);
        if (memcmp(&a, &y, sizeof(a)) != 0)
            fail_msg("%s: %s reads otherwise in YAML than in plugstack.conf", key, value);
    }
    return a;
}

/* key = value is refused both ways with the error tmpl (and its line in YAML). */
static void pol_refuse(const pol_key_t *k, const char *value, const char *tmpl)
{
    mesh_policy_t p;
    mesh_error_t err;
    int line;
    char prefix[32], want[MESH_ERROR_MAX + 64];
    mesh_policy_init(&p);
    if (pol_arg(&p, k->key, value, &err) == 0)
        fail_msg("%s=%s was accepted", k->key, value);
    if (!pol_is(err.msg, "", tmpl, value, want, sizeof(want)))
        fail_msg("%s=%s: error '%s', wanted '%s'", k->key, value, err.msg, want);
    if (strcmp(k->key, "policy") == 0)
        return;
    mesh_policy_init(&p);
    if (pol_file(&p, k->key, value, &err, &line) == 0)
        fail_msg("%s: %s was accepted in YAML", k->key, value);
    snprintf(prefix, sizeof(prefix), "p.yaml:%d: ", line);
    if (!pol_is(err.msg, prefix, tmpl, value, want, sizeof(want)))
        fail_msg("%s: %s in YAML: error '%s', wanted '%s'", k->key, value, err.msg, want);
}

static void keys__documented_defaults(void **state)
{
    mesh_policy_t init, p;
    mesh_policy_init(&init);
    int checked = 0;
    /* writing the documented default changes nothing */
    for (size_t i = 0; i < POL_KEYS; i++) {
        if (!pol_keys[i].dflt)
            continue;
        p = pol_accept(pol_keys[i].key, pol_keys[i].dflt);
        if (memcmp(&p, &init, sizeof(p)) != 0)
            fail_msg("%s: the default is not the documented %s", pol_keys[i].key, pol_keys[i].dflt);
        checked++;
    }
    assert_int_equal(checked,
                     23); /* with headroom's, framework's, calibration's and dispatcher's rows */
    /* and the values meshplan-policy(5) gives */
    assert_int_equal(init.enforce, MESH_ENFORCE_REJECT);
    assert_true(init.assume.reserve == 0.03);
    assert_int_equal(init.launch.export_mode, MESH_EXPORT_TORCH);
    assert_int_equal(init.launch.port_lo, 20000);
    assert_int_equal(init.launch.port_hi, 29999);
    assert_true(init.launch.topology_timeout == 10);
    assert_false(init.launch.topology_fallback);
    assert_false(init.launch.bind_gpu);
    assert_false(init.launch.gpu_order_minor);
    assert_int_equal(init.launch.steps, MESH_STEP_REGULAR | MESH_STEP_BATCH);
    assert_true(init.assume.overhead_context == 1073741824.0);
    assert_true(init.assume.overhead_comm == 268435456.0);
    assert_true(init.assume.fragmentation == 0.05);
    assert_false(init.controller.submit_fail_closed);
    assert_false(init.launch.config_fail_closed);
    /* the keys without a default are unset */
    assert_string_equal(init.assume.gpu, "");
    assert_true(init.assume.gpu_mem == 0);
    assert_string_equal(init.launch.models_dir, "");
    assert_string_equal(init.launch.topology_xml, "");
    assert_int_equal(init.assume.n_gpu_overrides, 0);
    assert_int_equal(init.controller.n_partitions, 0);
}

static void keys__bounds_accepted_one_past_refused(void **state)
{
    char v[300];
    int checked = 0;
    for (size_t i = 0; i < POL_KEYS; i++) {
        const pol_key_t *k = &pol_keys[i];
        const char *at[] = {k->lo, k->hi}, *past[] = {k->below, k->above},
                   *msg[] = {k->below_msg, k->above_msg};
        for (int j = 0; j < 2; j++) {
            if (at[j]) {
                mesh_policy_t init, p = pol_accept(k->key, pol_value(at[j], v, sizeof(v)));
                mesh_policy_init(&init);
                if (!k->dflt || strcmp(at[j], k->dflt) != 0)
                    assert_memory_not_equal(&p, &init, sizeof(p));
                checked++;
            }
            if (past[j]) {
                pol_refuse(k, pol_value(past[j], v, sizeof(v)), msg[j]);
                checked++;
            }
        }
    }
    assert_true(checked >= 50);
    /* the values at the bounds are the ones kept */
    mesh_policy_t p = pol_accept("port_range", "1024-65535");
    assert_int_equal(p.launch.port_lo, 1024);
    assert_int_equal(p.launch.port_hi, 65535);
    p = pol_accept("reserve", "0.9");
    assert_true(p.assume.reserve == 0.9);
    p = pol_accept("gpu_mem", "100TB");
    assert_true(p.assume.gpu_mem == 1e14);
    p = pol_accept("partition.p.nodes", "1048576");
    assert_int_equal(p.controller.partitions[0].nodes, 1048576);
    p = pol_accept("gpu.H100-SXM.island", "1024");
    assert_int_equal(p.assume.gpu_overrides[0].island, 1024);
}

static void keys__values_accepted_and_refused(void **state)
{
    for (size_t i = 0; i < POL_KEYS; i++) {
        const pol_key_t *k = &pol_keys[i];
        char good[128];
        mesh_policy_t seen[8];
        int n = 0;
        snprintf(good, sizeof(good), "%s", k->good ? k->good : "");
        char *save = NULL;
        for (char *v = strtok_r(good, " ", &save); v; v = strtok_r(NULL, " ", &save)) {
            assert_true(n < 8);
            seen[n] = pol_accept(k->key, v);
            /* every value means something else */
            for (int j = 0; j < n; j++)
                if (memcmp(&seen[j], &seen[n], sizeof(seen[n])) == 0)
                    fail_msg("%s: two of '%s' give the same policy", k->key, k->good);
            n++;
        }
        if (k->bad)
            pol_refuse(k, k->bad, k->bad_msg);
    }
}

/* The list an unknown-key error gives, split at separators, must be the
 * table's keys of that family (top-level keys, GPU fields, partition fields). */
static void pol_check_list(const char *msg, const char *open, const char *seps, const char *fam)
{
    const char *list = strstr(msg, open);
    if (!list)
        fail_msg("'%s' does not list the keys", msg);
    list += strlen(open);
    const char *close = strchr(list, ')');
    assert_non_null(close);
    int listed = 0, documented = 0;
    while (list < close) {
        char stops[8];
        snprintf(stops, sizeof(stops), "%s)", seps);
        size_t n = strcspn(list, stops);
        int found = 0;
        if (!*fam && ((n == 14 && strncmp(list, "gpu.NAME.FIELD", n) == 0) ||
                      (n == 20 && strncmp(list, "partition.NAME.FIELD", n) == 0)))
            found = 1;
        for (size_t i = 0; !found && i < POL_KEYS; i++)
            found = strcmp(pol_family(pol_keys[i].key), fam) == 0 &&
                    strlen(pol_field(pol_keys[i].key)) == n &&
                    strncmp(pol_field(pol_keys[i].key), list, n) == 0;
        if (!found)
            fail_msg("'%s' names '%.*s', which meshplan-policy(5) does not document", msg, (int)n,
                     list);
        listed++;
        list += n;
        list += strspn(list, seps);
    }
    for (size_t i = 0; i < POL_KEYS; i++) {
        int dup = 0;
        for (size_t j = 0; j < i; j++)
            dup |= strcmp(pol_keys[i].key, pol_keys[j].key) == 0;
        documented += !dup && strcmp(pol_family(pol_keys[i].key), fam) == 0;
    }
    if (listed != documented + (*fam ? 0 : 2))
        fail_msg("'%s' names %d keys, meshplan-policy(5) documents %d", msg, listed,
                 documented + (*fam ? 0 : 2));
}

/* export=: every mode a user or an admin writes is read, in any case, and
 * named back as written in lower case (what meshplan policy and the
 * plugin's messages show); an unknown one is refused, and a value outside
 * the enum is named "mesh", as policy.h says. */
static void export__modes_named_back(void **state)
{
    const char *modes[] = {"torch", "torchrun", "mesh", "batch"};
    for (int i = 0; i < 4; i++) {
        mesh_export_t e = (mesh_export_t)-1;
        assert_int_equal(mesh_export_parse(modes[i], &e), 0);
        assert_int_equal((int)e, i);
        assert_string_equal(mesh_export_name(e), modes[i]);
    }
    mesh_export_t e = MESH_EXPORT_TORCH;
    assert_int_equal(mesh_export_parse("TorchRun", &e), 0);
    assert_string_equal(mesh_export_name(e), "torchrun");
    assert_int_equal(mesh_export_parse("srun", &e), -1);
    assert_string_equal(mesh_export_name((mesh_export_t)42), "mesh");
}
/* Is field a key of the family? */
static int pol_in(const char *fam, const char *field)
{
    for (size_t i = 0; i < POL_KEYS; i++)
        if (strcmp(pol_family(pol_keys[i].key), fam) == 0 &&
            strcmp(pol_field(pol_keys[i].key), field) == 0)
            return 1;
    return 0;
}

static void keys__only_in_their_section(void **state)
{
    static const char *const fams[] = {"", "gpu", "partition"};
    int checked = 0;
    char v[300];
    for (size_t i = 0; i < POL_KEYS; i++) {
        const pol_key_t *k = &pol_keys[i];
        const char *field = pol_field(k->key);
        const char *val = k->dflt ? k->dflt : k->lo ? k->lo : k->good ? k->good : k->bad;
        char first[300];
        snprintf(first, sizeof(first), "%s", pol_value(val, v, sizeof(v)));
        first[strcspn(first, " ")] = '\0';
        for (int f = 0; f < 3; f++) {
            if (pol_in(fams[f], field))
                continue; /* gpu and gpu_mem are partition fields too */
            char key[128];
            snprintf(key, sizeof(key), "%s%s%s", fams[f],
                     !*fams[f]                     ? ""
                     : strcmp(fams[f], "gpu") == 0 ? ".H100-SXM."
                                                   : ".p.",
                     field);
            mesh_policy_t p;
            mesh_error_t err;
            int line;
            mesh_policy_init(&p);
            if (pol_arg(&p, key, first, &err) == 0)
                fail_msg("%s=%s was accepted", key, first);
            mesh_policy_t y;
            mesh_error_t yerr;
            mesh_policy_init(&y);
            if (pol_file(&y, key, first, &yerr, &line) == 0)
                fail_msg("%s: %s was accepted in YAML", key, first);
            char want[200];
            if (!*fams[f]) {
                snprintf(want, sizeof(want), "unknown policy key '%s' (keys: ", key);
                pol_check_list(err.msg, "(keys: ", " ", "");
            } else {
                snprintf(want, sizeof(want), "%s: unknown %s field '%s' (", key,
                         strcmp(fams[f], "gpu") == 0 ? "GPU" : "partition", field);
                pol_check_list(err.msg, "' (", ", ", fams[f]);
            }
            if (strncmp(err.msg, want, strlen(want)) != 0)
                fail_msg("%s=%s: error '%s', wanted '%s...'", key, first, err.msg, want);
            char ywant[300];
            snprintf(ywant, sizeof(ywant), "p.yaml:%d: %s", line, want);
            if (strncmp(yerr.msg, ywant, strlen(ywant)) != 0)
                fail_msg("%s: %s in YAML: error '%s', wanted '%s...'", key, first, yerr.msg, ywant);
            checked++;
        }
    }
    assert_true(checked >= 40);
    /* the YAML sections are gpus: and partitions:, the argument prefixes gpu. and partition. */
    static const struct {
        const char *text, *needle;
    } cases[] = {
        {"gpu: {H100-SXM: {memory: 80GB}}\n", "p.yaml:1: gpu: expected a single value"},
        {"partition: {p: {nodes: 4}}\n", "p.yaml:1: partition: expected a single value"},
        {"gpus: {memory: 80GB}\n", "p.yaml:1: gpu.memory: expected a mapping"},
        {"model: {seq_len: 4096}\n", "p.yaml:1: model: expected a single value"},
        {"reserve: 0.1\nseq_len: 4096\n", "p.yaml:2: unknown policy key 'seq_len' (keys: "},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        mesh_policy_t p;
        mesh_error_t err;
        mesh_policy_init(&p);
        assert_int_equal(
            mesh_policy_parse(&p, cases[i].text, strlen(cases[i].text), "p.yaml", &err), -1);
        if (strncmp(err.msg, cases[i].needle, strlen(cases[i].needle)) != 0)
            fail_msg("'%s': error '%s', wanted '%s'", cases[i].text, err.msg, cases[i].needle);
    }
    static const char *const args[] = {"gpus.H100-SXM.memory=80GB", "partitions.p.nodes=4",
                                       "Reserve=0.1", "nodes=4", "memory=80GB"};
    for (size_t i = 0; i < sizeof(args) / sizeof(*args); i++) {
        mesh_policy_t p;
        mesh_error_t err;
        mesh_policy_init(&p);
        assert_int_equal(mesh_policy_set_arg(&p, args[i], &err), -1);
        assert_non_null(strstr(err.msg, "unknown policy key '"));
        pol_check_list(err.msg, "(keys: ", " ", "");
    }
}

/* Every policy key the library lists in its "unknown key" error is
 * documented in meshplan-policy(5). */
static void keys__table_in_the_manual(void **state)
{
    mesh_policy_t p;
    mesh_error_t err;
    mesh_policy_init(&p);
    assert_int_equal(mesh_policy_set(&p, "zz", "1", &err), -1);
    const char *list = strstr(err.msg, "(keys: ");
    assert_non_null(list);
    assert_true(test_man_lists("meshplan-policy.5", list + strlen("(keys: "), ')', " ") >= 19);
}

/* So is every field of gpu.NAME. and partition.NAME.: the "unknown field"
 * errors list lib/policy.c's field tables. */
static void keys__fields_in_the_manual(void **state)
{
    static const struct {
        const char *key;
        int fields;
    } fams[] = {{"gpu.H100-SXM.zz", 9}, {"partition.p.zz", 5}};
    for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++) {
        mesh_policy_t p;
        mesh_error_t err;
        mesh_policy_init(&p);
        assert_int_equal(mesh_policy_set(&p, fams[i].key, "1", &err), -1);
        const char *list = strstr(err.msg, "field 'zz' (");
        assert_non_null(list);
        assert_int_equal(
            test_man_lists("meshplan-policy.5", list + strlen("field 'zz' ("), ')', ", "),
            fams[i].fields);
    }
}

/* The policy the package installs changes nothing: every key commented
 * out (at its default), and read as it is, the defaults. */
static void shipped__every_key_commented_out(void **state)
{
    (void)state;
    char path[1024], line[512];
    snprintf(path, sizeof(path), "%s/../meshplan.yaml", getenv("MESH_MODELS_DIR"));
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    for (int n = 1; fgets(line, sizeof(line), f); n++)
        if (line[0] != '#' && line[0] != '\n')
            fail_msg("%s:%d is a live setting: %s", path, n, line);
    fclose(f);
    mesh_policy_t shipped, defaults;
    mesh_error_t err;
    mesh_policy_init(&defaults);
    mesh_policy_init(&shipped);
    assert_int_equal(mesh_policy_load(&shipped, path, &err), 0);
    assert_true(shipped.assume.moe_imbalance == defaults.assume.moe_imbalance);
    assert_true(shipped.enforce == defaults.enforce);
}

/* A job's partitions, each described by the policy, its catch-all, or a
 * policy of no partitions at all. */
static void partitions__known_or_meant(void **state)
{
    (void)state;
    mesh_policy_t p;
    mesh_error_t err;
    mesh_policy_init(&p);
    assert_int_equal(mesh_policy_partitions_known(&p, "anything", &err), 0); /* none described */
    assert_int_equal(mesh_policy_set_arg(&p, "partition.a100.gpu=A100-80GB", &err), 0);
    assert_int_equal(mesh_policy_set_arg(&p, "partition.h100.gpu=H100-SXM", &err), 0);
    assert_int_equal(mesh_policy_partitions_known(&p, NULL, &err), 0);
    assert_int_equal(mesh_policy_partitions_known(&p, "a100,h100", &err), 0);
    assert_int_equal(mesh_policy_partitions_known(&p, "h100,A100", &err), -1);
    assert_string_equal(err.msg,
                        "unknown partition 'A100' (the policy's: a100, h100); did you mean a100?");
    assert_int_equal(mesh_policy_partitions_known(&p, "debug", &err), -1);
    assert_string_equal(err.msg, "unknown partition 'debug' (the policy's: a100, h100)");
    assert_int_equal(mesh_policy_set_arg(&p, "partition.default.gpu=H100-SXM", &err), 0);
    assert_int_equal(mesh_policy_partitions_known(&p, "debug", &err), 0); /* the catch-all */
}

/* A policy one past its limits, where every key mesh_policy_check checks
 * keeps its line (gpu=, 16 GPUs, 32 partitions' gpu, then a 33rd): refused
 * at the partition too many, in one line that names it, and the lines kept
 * never more than there is room for (the ASan build runs this too). */
static void partitions__one_past_the_limit_refused(void **state)
{
    (void)state;
    static char text[8192];
    size_t n = (size_t)snprintf(text, sizeof(text), "gpu: H100-SXM\ngpus:\n");
    for (int i = 1; i <= MESH_GPU_OVERRIDES_MAX; i++)
        n += (size_t)snprintf(text + n, sizeof(text) - n, "  site-gpu-%d: {memory: 80GB}\n", i);
    n += (size_t)snprintf(text + n, sizeof(text) - n, "partitions:\n");
    for (int i = 1; i <= MESH_PARTITIONS_MAX + 1; i++)
        n += (size_t)snprintf(text + n, sizeof(text) - n, "  p%d: {gpu: H100-SXM}\n", i);
    assert_true(n < sizeof(text));
    char want[128];
    snprintf(want, sizeof(want), "p.yaml:%d: partition.p%d.gpu: at most %d partitions",
             3 + MESH_GPU_OVERRIDES_MAX + MESH_PARTITIONS_MAX + 1, MESH_PARTITIONS_MAX + 1,
             MESH_PARTITIONS_MAX);
    pol_file_error(text, want);
}

/* A policy at its limit of partitions, none of them the catch-all: each
 * found by its name, an unlisted one by none, and nothing read past the
 * last.  The policy is on the heap and its partitions are its last member,
 * so the ASan build sees a read one entry past them. */
static void partitions__at_the_limit_each_found_none_read_past(void **state)
{
    (void)state;
    char text[2048];
    size_t n = (size_t)snprintf(text, sizeof(text), "gpu: H100-SXM\npartitions:\n");
    for (int i = 1; i <= MESH_PARTITIONS_MAX; i++)
        n += (size_t)snprintf(text + n, sizeof(text) - n, "  p%d: {nodes: %d}\n", i, i);
    assert_true(n < sizeof(text));
    mesh_policy_t *p = malloc(sizeof(*p));
    mesh_error_t err;
    assert_non_null(p);
    mesh_policy_init(p);
    if (mesh_policy_parse(p, text, n, "p.yaml", &err) < 0)
        fail_msg("%s", err.msg);
    assert_int_equal(p->controller.n_partitions, MESH_PARTITIONS_MAX);
    for (int i = 1; i <= MESH_PARTITIONS_MAX; i++) {
        char name[16];
        snprintf(name, sizeof(name), "p%d", i);
        assert_int_equal(mesh_policy_partition(p, name)->nodes, i);
    }
    assert_null(mesh_policy_partition(p, "p33"));
    assert_null(mesh_policy_partition(p, NULL));
    /* a job's list (sbatch -p p3,p1) names its first; a prefix is no match */
    assert_int_equal(mesh_policy_partition(p, "p3,p1")->nodes, 3);
    assert_null(mesh_policy_partition(p, "p,p1"));
    assert_int_equal(mesh_policy_partition(p, "p32,")->nodes, 32);
    free(p);
}

/* Reading a policy with its GPUs and partitions, and refusing a bad one,
 * gives back every byte it takes. */
static void policy_work(void)
{
    static const char good[] = "enforce: reject\nreserve: 0.08\ngpus:\n  H100-SXM:\n"
                               "    memory: 80GiB\n    net_bw: 25GB/s\npartitions:\n"
                               "  gpu: {gpu: H100-SXM, nodes: 16, max_time: 2-00:00:00}\n";
    static const char bad[] = "enforce: reject\npartitions:\n  gpu: {gpu: [\n";
    mesh_policy_t p;
    mesh_error_t err;
    mesh_policy_init(&p);
    if (mesh_policy_parse(&p, good, sizeof(good) - 1, "site.yaml", &err) < 0)
        fail_msg("%s", err.msg);
    mesh_policy_init(&p);
    assert_int_equal(mesh_policy_parse(&p, bad, sizeof(bad) - 1, "site.yaml", &err), -1);
}

static void policy__returns_all_its_memory(void **state)
{
    (void)state;
    test_gives_back(policy_work, "reading a policy");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bandwidth__units_exact__ambiguous_refused),
        cmocka_unit_test(keys__table_in_the_manual),
        cmocka_unit_test(partitions__known_or_meant),
        cmocka_unit_test(policy__returns_all_its_memory),
        cmocka_unit_test(partitions__one_past_the_limit_refused),
        cmocka_unit_test(partitions__at_the_limit_each_found_none_read_past),
        cmocka_unit_test(shipped__every_key_commented_out),
        cmocka_unit_test(keys__fields_in_the_manual),
        cmocka_unit_test(defaults),
        cmocka_unit_test(args__every_key),
        cmocka_unit_test(args__errors_name_the_key),
        cmocka_unit_test(gpus__defined_by_pci_id),
        cmocka_unit_test(gpus__resolved_by_name_or_pci_id),
        cmocka_unit_test(gpus__names_users_write),
        cmocka_unit_test(gpus__defined_without_fp8),
        cmocka_unit_test(partitions__for_the_controller),
        cmocka_unit_test(errors__lead_to_the_key),
        cmocka_unit_test(gpus__defined_with_their_island),
        cmocka_unit_test(names__case_where_users_expect),
        cmocka_unit_test(gpus__listed_as_the_policy_makes_them),
        cmocka_unit_test(yaml__file),
        cmocka_unit_test(yaml__errors_with_line),
        cmocka_unit_test(on_config_error__read_apart_from_the_rest),
        cmocka_unit_test(keys__documented_defaults),
        cmocka_unit_test(keys__bounds_accepted_one_past_refused),
        cmocka_unit_test(keys__values_accepted_and_refused),
        cmocka_unit_test(keys__only_in_their_section),
        cmocka_unit_test(export__modes_named_back),
    };
    return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}
