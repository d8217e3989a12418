/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan calibrate's log reader (lib/calib_log.c) and fit on any bytes:
 * a log is added or skipped with one reason, never a crash; a job it
 * keeps has finite values within the reader's bounds, and a fit that
 * succeeds has every factor within its own.
 */
#include <math.h>

#include "fuzz.h"

static void check_job(const mesh_calib_job_t *j)
{
    if (!(j->step_s > 0 && isfinite(j->step_s) && j->compute_s > 0 && j->network_s >= 0 &&
          j->other_s >= 0 && isfinite(j->peak) && j->peak >= 0 && j->iterations >= 2))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mesh_calib_t *c = mesh_calib_create();
    if (!c)
        return 0;
    /* the bytes as one log, and again cut in two as two logs */
    int rc = mesh_calib_add_log(c, "fuzz", (const char *)data, size);
    mesh_calib_add_log(c, "fuzz-half", (const char *)data, size / 2);
    if (rc == 1 && mesh_calib_job_count(c) < 1)
        abort();
    for (int i = 0; i < mesh_calib_job_count(c); i++)
        check_job(mesh_calib_job(c, i));
    if (mesh_calib_job_count(c) + mesh_calib_skip_count(c) != 2)
        abort();
    mesh_calibration_t cal;
    mesh_error_t err;
    if (mesh_calib_fit(c, &cal, &err) == 0)
        for (int g = 0; g < cal.n; g++)
            for (int f = 0; f < MESH_CALIB_FACTORS; f++) {
                double lo, hi;
                mesh_calib_factor_name(f, &lo, &hi);
                if (!(cal.gpus[g].factor[f] >= lo && cal.gpus[g].factor[f] <= hi))
                    abort();
            }
    free(mesh_calib_report(c, NULL, MESH_CALIB_JOBS));
    free(mesh_calib_report(c, NULL, MESH_CALIB_JSON));
    free(mesh_calib_svg(c, NULL));
    mesh_calib_destroy(c);
    return 0;
}
