/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan calibrate's fit and reports: per GPU model, the correction
 * factors that best turn the plans' predictions into the jobs' measured
 * step times and peaks, refused outside their bounds, and predicted
 * against measured for every job as text, JSON and SVG.  doc/design.md,
 * "Calibration".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "meshplan/calibrate.h"

/* Below these the network factor is not fitted (it stays 1): without jobs
 * whose exposed communication is a visible and varying share of the step,
 * a network error cannot be told from a compute one. */
#define NET_MIN_JOBS   3
#define NET_MIN_SHARE  0.02  /* the largest share of the step a job's communication has */
#define NET_MAX_COLLIN 0.999 /* cos^2 of the angle between the compute and network columns */

static double median(double *v, int n)
{
    for (int i = 1; i < n; i++) /* insertion sort: n is a site's jobs of one GPU */
        for (int k = i; k > 0 && v[k - 1] > v[k]; k--) {
            double t = v[k];
            v[k] = v[k - 1];
            v[k - 1] = t;
        }
    return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The step time job j is predicted at under g's factors (g NULL: none). */
static double predicted(const mesh_calib_job_t *j, const mesh_calib_gpu_t *g)
{
    double fc = g ? g->factor[MESH_CALIB_COMPUTE] : 1, fn = g ? g->factor[MESH_CALIB_NETWORK] : 1;
    return j->compute_s / fc + j->network_s / fn + j->other_s;
}

/* Median |predicted/measured - 1| over the jobs of gpu, under g. */
static double median_error(const mesh_calib_t *c, const char *gpu, const mesh_calib_gpu_t *g,
                           double *tmp)
{
    int n = 0;
    for (int i = 0; i < mesh_calib_job_count(c); i++) {
        const mesh_calib_job_t *j = mesh_calib_job(c, i);
        if (strcasecmp(j->gpu, gpu) == 0)
            tmp[n++] = fabs(predicted(j, g) / j->step_s - 1);
    }
    return median(tmp, n);
}

/* Least squares on the relative error, measured M = C x + N y + O with
 * x = 1/compute, y = 1/network: the normal equations of
 * sum ((C x + N y + O - M) / M)^2. */
static void fit_times(const mesh_calib_t *c, const char *gpu, mesh_calib_gpu_t *g)
{
    double saa = 0, sab = 0, sbb = 0, sac = 0, sbc = 0, share = 0;
    int n = 0;
    for (int i = 0; i < mesh_calib_job_count(c); i++) {
        const mesh_calib_job_t *j = mesh_calib_job(c, i);
        if (strcasecmp(j->gpu, gpu) != 0)
            continue;
        double a = j->compute_s / j->step_s, b = j->network_s / j->step_s;
        double r = (j->step_s - j->other_s) / j->step_s;
        double s = j->network_s / (j->compute_s + j->network_s + j->other_s);
        saa += a * a, sab += a * b, sbb += b * b, sac += a * r, sbc += b * r;
        share = s > share ? s : share;
        n++;
    }
    double x = sac / saa, y = 1;
    if (n >= NET_MIN_JOBS && share >= NET_MIN_SHARE && sab * sab < NET_MAX_COLLIN * saa * sbb) {
        double det = saa * sbb - sab * sab;
        x = (sac * sbb - sbc * sab) / det;
        y = (saa * sbc - sab * sac) / det;
    } else {
        x = (sac - sab) / saa; /* network as predicted: y = 1 */
    }
    g->factor[MESH_CALIB_COMPUTE] = x > 0 ? 1 / x : INFINITY;
    g->factor[MESH_CALIB_NETWORK] = y > 0 ? 1 / y : INFINITY;
    g->jobs = n;
}

static void fit_memory(const mesh_calib_t *c, const char *gpu, mesh_calib_gpu_t *g, double *tmp)
{
    int n = 0;
    for (int i = 0; i < mesh_calib_job_count(c); i++) {
        const mesh_calib_job_t *j = mesh_calib_job(c, i);
        if (strcasecmp(j->gpu, gpu) == 0 && j->peak > 0 && j->memory > 0)
            tmp[n++] = j->peak / j->memory;
    }
    g->factor[MESH_CALIB_MEMORY] = n ? median(tmp, n) : 1;
}

/* A factor outside its bounds: refused, with the evidence. */
static int bounds(const mesh_calib_gpu_t *g, mesh_error_t *err)
{
    for (int f = 0; f < MESH_CALIB_FACTORS; f++) {
        double lo, hi, v = g->factor[f];
        const char *name = mesh_calib_factor_name(f, &lo, &hi);
        if (v >= lo && v <= hi)
            continue;
        return mesh_error_set(err,
                              "%s: the %s factor would be %.3g, outside %g-%g (fitted on %d job%s; "
                              "median step-time error %.0f %%): refused; check that these logs "
                              "ran on %s, or correct the GPU table (the policy's gpu.%s.*)",
                              g->gpu, name, v, lo, hi, g->jobs, g->jobs == 1 ? "" : "s",
                              100 * g->err_before, g->gpu, g->gpu);
    }
    return 0;
}

int mesh_calib_fit(const mesh_calib_t *c, mesh_calibration_t *out, mesh_error_t *err)
{
    memset(out, 0, sizeof(*out));
    int n = mesh_calib_job_count(c);
    if (n == 0)
        return mesh_error_set(err, "no job to calibrate on: %d log%s skipped (%s)",
                              mesh_calib_skip_count(c), mesh_calib_skip_count(c) == 1 ? "" : "s",
                              mesh_calib_skip_count(c) ? mesh_calib_skip(c, 0) : "none given");
    double *tmp = malloc((size_t)n * sizeof(*tmp));
    if (!tmp)
        return mesh_error_set(err, "out of memory");
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        const mesh_calib_job_t *j = mesh_calib_job(c, i);
        if (mesh_calib_find(out, j->gpu))
            continue;
        if (out->n == MESH_CALIB_GPUS_MAX) {
            rc = mesh_error_set(err, "jobs of more than %d GPU models: calibrate each apart",
                                MESH_CALIB_GPUS_MAX);
            break;
        }
        mesh_calib_gpu_t *g = &out->gpus[out->n++];
        snprintf(g->gpu, sizeof(g->gpu), "%s", j->gpu);
        fit_times(c, j->gpu, g);
        fit_memory(c, j->gpu, g, tmp);
        g->err_before = median_error(c, j->gpu, NULL, tmp);
        g->err_after = median_error(c, j->gpu, g, tmp);
        rc = bounds(g, err);
    }
    free(tmp);
    if (rc < 0)
        memset(out, 0, sizeof(*out));
    return rc;
}

/* ---- reports ---- */

static void text_job(mesh_buf_t *b, const mesh_calib_job_t *j, const mesh_calibration_t *cal)
{
    double p = predicted(j, NULL);
    mesh_buf_printf(b, "  %-24s %-10s %-28s %8.3f s %8.3f s %+5.0f %%", j->source, j->gpu, j->mesh,
                    p, j->step_s, 100 * (p / j->step_s - 1));
    const mesh_calib_gpu_t *g = mesh_calib_find(cal, j->gpu);
    if (g) {
        double q = predicted(j, g);
        mesh_buf_printf(b, " %8.3f s %+5.0f %%", q, 100 * (q / j->step_s - 1));
    }
    if (j->peak > 0)
        mesh_buf_printf(b, "  memory %.1f/%.1f GiB", j->memory / 1073741824.0,
                        j->peak / 1073741824.0);
    mesh_buf_puts(b, "\n");
}

static void text_gpu(mesh_buf_t *b, const mesh_calib_gpu_t *g)
{
    char sum[200];
    mesh_buf_printf(b, "%s:", g->gpu);
    for (int f = 0; f < MESH_CALIB_FACTORS; f++)
        mesh_buf_printf(b, " %s %.3f%s", mesh_calib_factor_name(f, NULL, NULL), g->factor[f],
                        f + 1 < MESH_CALIB_FACTORS ? "," : ";");
    mesh_buf_printf(b, " %s\n", mesh_calib_summary(g, NULL, sum, sizeof(sum)));
}

static void text_report(mesh_buf_t *b, const mesh_calib_t *c, const mesh_calibration_t *cal,
                        int jobs)
{
    mesh_buf_printf(b, "%d job%s read, %d log%s skipped\n", mesh_calib_job_count(c),
                    mesh_calib_job_count(c) == 1 ? "" : "s", mesh_calib_skip_count(c),
                    mesh_calib_skip_count(c) == 1 ? "" : "s");
    if (jobs && mesh_calib_job_count(c)) {
        mesh_buf_printf(b, "  %-24s %-10s %-28s %10s %10s %7s", "log", "GPU", "layout", "predicted",
                        "measured", "error");
        mesh_buf_puts(b, cal ? " calibrated   error\n" : "\n");
    }
    for (int i = 0; jobs && i < mesh_calib_job_count(c); i++)
        text_job(b, mesh_calib_job(c, i), cal);
    if (mesh_calib_skip_count(c))
        mesh_buf_puts(b, "skipped:\n");
    for (int i = 0; i < mesh_calib_skip_count(c); i++)
        mesh_buf_printf(b, "  %s\n", mesh_calib_skip(c, i));
    for (int i = 0; cal && i < cal->n; i++)
        text_gpu(b, &cal->gpus[i]);
}

static void json_job(mesh_buf_t *b, const mesh_calib_job_t *j, const mesh_calibration_t *cal)
{
    mesh_buf_puts(b, "{\"log\":");
    mesh_buf_json_string(b, j->source);
    mesh_buf_puts(b, ",\"gpu\":");
    mesh_buf_json_string(b, j->gpu);
    mesh_buf_puts(b, ",\"model\":");
    mesh_buf_json_string(b, j->model);
    mesh_buf_puts(b, ",\"mesh\":");
    mesh_buf_json_string(b, j->mesh);
    mesh_buf_puts(b, ",\"digest\":");
    mesh_buf_json_string(b, j->digest);
    mesh_buf_printf(b,
                    ",\"gpus\":%d,\"iterations\":%d,\"predicted_seconds\":%.6g,"
                    "\"measured_seconds\":%.6g,\"predicted_memory_bytes\":%.0f,\"peak_bytes\":%.0f",
                    j->gpus, j->iterations, predicted(j, NULL), j->step_s, j->memory, j->peak);
    const mesh_calib_gpu_t *g = mesh_calib_find(cal, j->gpu);
    if (g)
        mesh_buf_printf(b, ",\"calibrated_seconds\":%.6g", predicted(j, g));
    mesh_buf_puts(b, "}");
}

static void json_report(mesh_buf_t *b, const mesh_calib_t *c, const mesh_calibration_t *cal)
{
    mesh_buf_puts(b, "{\"jobs\":[");
    for (int i = 0; i < mesh_calib_job_count(c); i++) {
        mesh_buf_puts(b, i ? "," : "");
        json_job(b, mesh_calib_job(c, i), cal);
    }
    mesh_buf_puts(b, "],\"skipped\":[");
    for (int i = 0; i < mesh_calib_skip_count(c); i++) {
        mesh_buf_puts(b, i ? "," : "");
        mesh_buf_json_string(b, mesh_calib_skip(c, i));
    }
    mesh_buf_puts(b, "],\"gpus\":[");
    for (int i = 0; cal && i < cal->n; i++) {
        const mesh_calib_gpu_t *g = &cal->gpus[i];
        mesh_buf_puts(b, i ? ",{\"gpu\":" : "{\"gpu\":");
        mesh_buf_json_string(b, g->gpu);
        for (int f = 0; f < MESH_CALIB_FACTORS; f++)
            mesh_buf_printf(b, ",\"%s\":%.6g", mesh_calib_factor_name(f, NULL, NULL), g->factor[f]);
        mesh_buf_printf(b, ",\"jobs\":%d,\"error_before\":%.6g,\"error_after\":%.6g}", g->jobs,
                        g->err_before, g->err_after);
    }
    mesh_buf_puts(b, "]}\n");
}

char *mesh_calib_report(const mesh_calib_t *c, const mesh_calibration_t *cal, int flags)
{
    mesh_buf_t b;
    mesh_buf_init(&b);
    if (flags & MESH_CALIB_JSON)
        json_report(&b, c, cal);
    else
        text_report(&b, c, cal, flags & MESH_CALIB_JOBS);
    return mesh_buf_take(&b);
}

/* ---- the picture: measured over predicted, log-log, the diagonal exact ---- */

#define SVG_SIZE 480
#define SVG_PAD  56

typedef struct axis {
    double lo, hi; /* log10 of the seconds at the edges */
} axis_t;

static double svg_pos(const axis_t *ax, double s)
{
    return SVG_PAD + (log10(s) - ax->lo) / (ax->hi - ax->lo) * (SVG_SIZE - 2 * SVG_PAD);
}

static void svg_axes(mesh_buf_t *b, const axis_t *ax)
{
    int inner = SVG_SIZE - 2 * SVG_PAD;
    mesh_buf_printf(b,
                    "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
                    "stroke=\"#444\"/>\n<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
                    "stroke=\"#999\" stroke-dasharray=\"4 3\"/>\n",
                    SVG_PAD, SVG_PAD, inner, inner, SVG_PAD, SVG_SIZE - SVG_PAD, SVG_SIZE - SVG_PAD,
                    SVG_PAD);
    for (int e = (int)ceil(ax->lo); e <= (int)floor(ax->hi); e++) {
        double p = svg_pos(ax, pow(10, e));
        mesh_buf_printf(b,
                        "<text x=\"%.1f\" y=\"%d\" font-size=\"12\" "
                        "text-anchor=\"middle\">%g s</text>\n"
                        "<text x=\"%d\" y=\"%.1f\" font-size=\"12\" "
                        "text-anchor=\"end\">%g s</text>\n",
                        p, SVG_SIZE - SVG_PAD + 16, pow(10, e), SVG_PAD - 4, SVG_SIZE - p + 4,
                        pow(10, e));
    }
    mesh_buf_printf(b,
                    "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">predicted "
                    "step time</text>\n<text x=\"%d\" y=\"%d\" font-size=\"12\" "
                    "text-anchor=\"middle\" transform=\"rotate(-90 %d %d)\">measured step "
                    "time</text>\n",
                    SVG_SIZE / 2, SVG_SIZE - 12, 14, SVG_SIZE / 2, 14, SVG_SIZE / 2);
}

char *mesh_calib_svg(const mesh_calib_t *c, const mesh_calibration_t *cal)
{
    axis_t ax = {INFINITY, -INFINITY};
    for (int i = 0; i < mesh_calib_job_count(c); i++) {
        const mesh_calib_job_t *j = mesh_calib_job(c, i);
        double v[] = {predicted(j, NULL), predicted(j, mesh_calib_find(cal, j->gpu)), j->step_s};
        for (int k = 0; k < 3; k++) {
            ax.lo = fmin(ax.lo, floor(log10(v[k])));
            ax.hi = fmax(ax.hi, ceil(log10(v[k])));
        }
    }
    if (!(ax.hi > ax.lo)) /* no job, or all in one decade's edge */
        ax.lo = isfinite(ax.lo) ? ax.lo : -1, ax.hi = ax.lo + 1;
    mesh_buf_t b;
    mesh_buf_init(&b);
    mesh_buf_printf(&b,
                    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                    "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n<rect width=\"100%%\" "
                    "height=\"100%%\" fill=\"white\"/>\n<text x=\"%d\" y=\"24\" font-size=\"14\" "
                    "text-anchor=\"middle\">meshplan calibrate: %d jobs (open: as predicted, "
                    "filled: calibrated)</text>\n",
                    SVG_SIZE, SVG_SIZE, SVG_SIZE, SVG_SIZE, SVG_SIZE / 2, mesh_calib_job_count(c));
    svg_axes(&b, &ax);
    for (int i = 0; i < mesh_calib_job_count(c); i++) {
        const mesh_calib_job_t *j = mesh_calib_job(c, i);
        const mesh_calib_gpu_t *g = mesh_calib_find(cal, j->gpu);
        double y = SVG_SIZE - svg_pos(&ax, j->step_s);
        mesh_buf_printf(&b,
                        "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"none\" "
                        "stroke=\"#c0392b\"/>\n",
                        svg_pos(&ax, predicted(j, NULL)), y);
        if (g)
            mesh_buf_printf(&b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"#2471a3\"/>\n",
                            svg_pos(&ax, predicted(j, g)), y);
    }
    mesh_buf_puts(&b, "</svg>\n");
    return mesh_buf_take(&b);
}
