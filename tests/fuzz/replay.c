/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Runs a harness without libFuzzer: feeds LLVMFuzzerTestOneInput each file
 * named on the command line, and each file in each directory named, so that
 * `make check` replays the seed corpus and every crash ever found.
 */
#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>

#include "fuzz.h"

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return -1;
    }
    size_t cap = 1 << 16, len = 0, n;
    uint8_t *buf = malloc(cap), *more;
    while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
        if ((len += n) < cap)
            continue;
        if (!(more = realloc(buf, cap *= 2)))
            free(buf);
        buf = more;
    }
    fclose(f);
    if (!buf)
        return -1;
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    int files = 0, bad = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            DIR *d = opendir(argv[i]);
            struct dirent *e;
            while (d && (e = readdir(d))) {
                char path[4096];
                if (e->d_name[0] == '.')
                    continue;
                snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
                bad += replay_file(path) < 0;
                files++;
            }
            if (d)
                closedir(d);
        } else {
            bad += replay_file(argv[i]) < 0;
            files++;
        }
    }
    printf("replay: %d inputs, %d unreadable\n", files, bad);
    return bad ? 1 : 0;
}
