/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The admin's configuration: a policy file (YAML), or, when the input starts
 * with "#!args\n", plugstack.conf arguments separated by white space.  A
 * policy that is accepted must give a usable allocation for every GPU in the
 * table and for the GPUs it adds itself.
 */
#include "fuzz.h"

static void args(mesh_policy_t *p, char *s)
{
    mesh_error_t err;
    for (char *save, *a = strtok_r(s, " \t\n", &save); a; a = strtok_r(NULL, " \t\n", &save))
        if (mesh_policy_set_arg(p, a, &err) < 0)
            return;
    if (mesh_policy_check(p, &err) < 0)
        return;
    mesh_alloc_t a;
    (void)mesh_policy_alloc(&p->assume, p->assume.gpu[0] ? p->assume.gpu : "H100-SXM",
                            p->assume.gpu_mem, 0, 2, 8, &a, &err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mesh_policy_t p;
    mesh_error_t err;
    mesh_policy_init(&p);
    if (size >= 7 && memcmp(data, "#!args\n", 7) == 0) {
        char *s = fuzz_string(data + 7, size - 7);
        if (s)
            args(&p, s);
        free(s);
        return 0;
    }
    if (mesh_policy_parse(&p, (const char *)data, size, "fuzz.yaml", &err) == 0) {
        mesh_alloc_t a;
        (void)mesh_policy_alloc(&p.assume, p.assume.gpu[0] ? p.assume.gpu : "H100-SXM",
                                p.assume.gpu_mem, 0, 2, 8, &a, &err);
    }
    return 0;
}
