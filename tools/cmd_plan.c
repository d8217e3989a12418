/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan plan: pick the fastest layout that fits and explain it; and
 * report(), the plan, its pictures and the controller's verdict, which check
 * and ranks print too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* The pictures' options for stdout, colour by the library's one rule. */
static mesh_picture_opts_t picture_opts(void)
{
    int color = mesh_picture_color(STDOUT_FILENO, getenv("NO_COLOR"), getenv("TERM"));
    return mesh_picture_opts_for(STDOUT_FILENO, color);
}

/* The SVG to path ("-": stdout), with the reason when it cannot be written. */
static int write_svg(const char *path, const mesh_plan_t *p)
{
    char *svg = mesh_picture_svg(p);
    if (!svg)
        return bad("--svg: out of memory");
    if (strcmp(path, "-") == 0)
        return print_owned(svg);
    FILE *f = fopen(path, "w");
    int ok = f && fputs(svg, f) >= 0;
    int saved = errno;
    if (f && fclose(f) != 0 && ok) {
        ok = 0;
        saved = errno;
    }
    free(svg);
    return ok ? 0 : bad("--svg: cannot write %s: %s", path, strerror(saved));
}

/* A --json report with the object value added as key, last (the report is
 * one object ending in "}\n"); both are freed, NULL when either is. */
static char *json_with(char *json, const char *key, char *value)
{
    char *out = NULL, *end = json ? strrchr(json, '}') : NULL;
    if (value && end) {
        *end = '\0';
        size_t n = strlen(json) + strlen(key) + strlen(value) + 16;
        if ((out = malloc(n)))
            snprintf(out, n, "%s,\"%s\":%s}\n", json, key, value);
    }
    free(json);
    free(value);
    return out;
}

/* The report asked for: plan's and check's the explained plan (with the
 * restart's section and the pictures, as the plugin shows it), ranks' the
 * rank map with the pictures; or JSON (a restart's object added as
 * "restart", the controller's judgement of --partition as "controller"). */
static int print_report(const options_t *o, const mesh_plan_t *p, const mesh_submit_t *verdict,
                        report_fn text, report_fn json)
{
    const mesh_restart_t *restart = o->have_restart ? &o->restart : NULL;
    mesh_picture_opts_t po = picture_opts();
    if (o->json) {
        char *out = json(p);
        if (out && restart && text == mesh_report_text)
            out = json_with(out, "restart", mesh_restart_json(restart, p));
        if (out && o->partition)
            out = json_with(out, "controller", mesh_submit_json(verdict));
        return print_owned(out);
    }
    if (text == mesh_report_text)
        return print_owned(mesh_report_explained(p, restart, o->no_pictures ? NULL : &po));
    int rc = print_owned(text(p));
    if (rc == 0 && !o->no_pictures)
        rc = print_owned(mesh_picture_text(p, &po));
    return rc;
}

/* Plan, print one report, exit 0 if the layout fits and 1 if not.  The SVG
 * file is written first, so that one that cannot be written stops the
 * command before it prints anything; `--svg -` prints the SVG alone.  With
 * `explain`, a layout that does not fit is explained on stderr (for
 * reports that do not explain it themselves). */
int report(const options_t *o, report_fn text, report_fn json, int explain)
{
    mesh_plan_t *p;
    mesh_topo_t *t;
    mesh_submit_t verdict = {.verdict = MESH_VERDICT_RUN};
    int rc = make_plan(o, &p, &t, &verdict), svg_only = o->svg && strcmp(o->svg, "-") == 0;
    if (rc)
        return rc;
    if (o->svg)
        rc = write_svg(o->svg, p);
    if (rc == 0 && !svg_only)
        rc = print_report(o, p, &verdict, text, json);
    if (rc == 0 && explain && !mesh_plan_fits(p)) {
        char msg[4096];
        say_lines("", mesh_report_nofit(p, msg, sizeof(msg)));
    }
    /* what the controller would say, as sbatch would show it */
    if (rc == 0 && verdict.verdict != MESH_VERDICT_RUN)
        say_lines(verdict.verdict == MESH_VERDICT_REFUSE ? "error: " : "warning: ", verdict.msg);
    if (rc == 0)
        rc = mesh_plan_fits(p) && verdict.verdict == MESH_VERDICT_RUN ? EXIT_FITS : EXIT_NOFIT;
    mesh_plan_destroy(p);
    mesh_topo_destroy(t);
    return rc;
}

int cmd_plan(const options_t *o)
{
    return report(o, mesh_report_text, mesh_report_json, 0);
}
