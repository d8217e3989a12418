/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan calibrate LOG...: reads each log (the front end's I/O), gives
 * it to the library to pair and fit (lib/calib_log.c, lib/calib_fit.c),
 * and prints or writes what the library made.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#define LOG_MAX_BYTES ((size_t)1 << 30) /* a month of a job's log at one line a second */

/* The whole of a log ('-': stdin) into *buf[*len]; -1 after saying why.
 * Only a regular file: a FIFO would block, /dev/zero never end. */
static int read_log(const char *path, char **buf, size_t *len)
{
    int fd = strcmp(path, "-") == 0 ? dup(STDIN_FILENO)
                                    : open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    struct stat st;
    if (fd < 0)
        return bad("%.200s: %s", path, strerror(errno)), -1;
    if (strcmp(path, "-") != 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        return bad("%.200s: not a regular file (a job's log)", path), -1;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        return bad("out of memory"), -1;
    }
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    while (b) {
        if (n == cap) {
            char *more = cap < LOG_MAX_BYTES ? realloc(b, cap * 2) : NULL;
            if (!more) {
                free(b);
                b = NULL;
                break;
            }
            b = more;
            cap *= 2;
        }
        size_t got = fread(b + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    int failed = !b || ferror(f);
    fclose(f);
    if (failed) {
        free(b);
        return bad("%.200s: %s", path, b ? "read error" : "too large, or out of memory"), -1;
    }
    *buf = b;
    *len = n;
    return 0;
}

/* text into the file at path; -1 after saying why */
static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return bad("%.200s: %s", path, strerror(errno)), -1;
    int ok = fputs(text, f) >= 0;
    ok = fclose(f) == 0 && ok;
    return ok ? 0 : (bad("%.200s: write error", path), -1);
}

static int read_logs(const options_t *o, mesh_calib_t *c)
{
    for (int i = 0; i < o->n_logs; i++) {
        char *buf;
        size_t len;
        if (read_log(o->logs[i], &buf, &len) < 0)
            return -1;
        int rc = mesh_calib_add_log(c, o->logs[i], buf, len);
        free(buf);
        if (rc < 0)
            return bad("out of memory"), -1;
    }
    return 0;
}

/* The calibration file of -o, written before anything is printed (so
 * that a failure is the one line of a bad input). */
static int write_calibration(const options_t *o, const mesh_calibration_t *cal)
{
    if (!cal || !o->output)
        return 0;
    char *yaml = mesh_calib_yaml(cal);
    int rc = !yaml ? bad("out of memory") : write_file(o->output, yaml) < 0 ? EXIT_BADINPUT : 0;
    free(yaml);
    return rc;
}

/* What the command prints and writes, once the fit is made (cal NULL: refused). */
static int outputs(const options_t *o, const mesh_calib_t *c, const mesh_calibration_t *cal)
{
    if (write_calibration(o, cal))
        return EXIT_BADINPUT;
    if (o->svg) {
        char *svg = mesh_calib_svg(c, cal);
        int rc = !svg                       ? bad("out of memory")
                 : strcmp(o->svg, "-") == 0 ? (fputs(svg, stdout), 0)
                                            : write_file(o->svg, svg) < 0;
        free(svg);
        if (rc || strcmp(o->svg, "-") == 0)
            return rc ? EXIT_BADINPUT : 0;
    }
    int flags = (o->json ? MESH_CALIB_JSON : 0) | (o->calib_report ? MESH_CALIB_JOBS : 0);
    if (print_owned(mesh_calib_report(c, cal, flags)))
        return EXIT_BADINPUT;
    if (cal && o->output)
        fprintf(stderr,
                "meshplan: calibration written to %s; the policy names it with "
                "calibration: PATH (an absolute path)\n",
                o->output);
    return 0;
}

int cmd_calibrate(const options_t *o)
{
    if (o->n_logs == 0)
        return bad("calibrate: name the jobs' logs (meshplan calibrate LOG...)");
    mesh_calib_t *c = mesh_calib_create();
    if (!c)
        return bad("out of memory");
    mesh_calibration_t cal;
    mesh_error_t err;
    int rc = read_logs(o, c) < 0 ? EXIT_BADINPUT : 0;
    int fitted = rc == 0 && mesh_calib_fit(c, &cal, &err) == 0;
    if (rc == 0 && !fitted && mesh_calib_job_count(c) == 0)
        rc = bad("%s", err.msg); /* nothing to report: the one line */
    else if (rc == 0)
        rc = outputs(o, c, fitted ? &cal : NULL);
    if (rc == 0 && !fitted) {
        fflush(stdout);
        fprintf(stderr, "meshplan: %s\n", err.msg);
        rc = EXIT_NOFIT;
    }
    mesh_calib_destroy(c);
    return rc;
}
