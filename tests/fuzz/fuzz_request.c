/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The request job_submit/meshplan decodes inside slurmctld, from a control
 * environment any user can hand-craft.  What decodes is planned (as the
 * controller would), the quick yes/no must agree with the plan, and it must
 * encode back to a request that decodes to the same model.
 */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_string(data, size);
    mesh_model_t m, again;
    mesh_layout_t pins, pins2;
    mesh_error_t err;
    if (!s || mesh_request_decode(s, &m, &pins, &err) < 0) {
        free(s);
        return 0;
    }
    char req[MESH_REQUEST_MAX], d1[17], d2[17];
    if (mesh_request_encode(&m, &pins, req, sizeof(req), &err) < 0 ||
        mesh_request_decode(req, &again, &pins2, &err) < 0 ||
        strcmp(mesh_model_digest(&m, d1), mesh_model_digest(&again, d2)) != 0)
        abort();
    mesh_policy_t pol;
    mesh_alloc_t a;
    mesh_policy_init(&pol);
    if (mesh_policy_alloc(&pol.assume, "H100-SXM", 0, 0, 2, 8, &a, &err) == 0) {
        mesh_plan_t *p = mesh_plan_create(&m, &a, &pins, &pol.assume, &err);
        /* the controller's quick yes must be the plan's own verdict */
        if (mesh_plan_any_fits(&m, &a, &pins, &pol.assume) != (p ? mesh_plan_fits(p) : 0))
            abort();
        if (p && !mesh_plan_fits(p)) {
            char msg[4096];
            mesh_report_nofit(p, msg, sizeof(msg));
        }
        mesh_plan_destroy(p);
    }
    free(s);
    return 0;
}
