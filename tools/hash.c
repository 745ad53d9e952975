/*
 * hash.c - `tandem hash`: SHA-256 of files in sha256sum's output format, through the
 * tool library (OpenSSL EVP, 1 MiB reads, files in parallel); --bench prints throughput.
 */
#include "tl_hash.h"
#include "tl_safe.h"

#include <errno.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Print one line as GNU sha256sum (coreutils 9) does: a name holding a backslash, a line
 * feed or a carriage return is written with those escaped (backslash-backslash, backslash-n,
 * backslash-r) and the line starts with a backslash, so no name can forge a second line. */
static void print_line(const char *hex, const char *name)
{
    int esc = strpbrk(name, "\\\n\r") != NULL;
    printf("%s%s  ", esc ? "\\" : "", hex);
    for (const char *p = name; *p; p++) {
        if (!esc) { putchar(*p); continue; }
        if (*p == '\\') fputs("\\\\", stdout);
        else if (*p == '\n') fputs("\\n", stdout);
        else if (*p == '\r') fputs("\\r", stdout);
        else putchar(*p);
    }
    putchar('\n');
}

static void usage(FILE *o)
{
    fprintf(o, "usage: tandem hash [--bench] [--threads N] FILE...\n"
               "\n"
               "Print \"<sha256>  <file>\" for each FILE (as sha256sum does). Files are hashed in\n"
               "parallel (--threads, default one per CPU up to 8) with 1 MiB reads.\n"
               "  --bench   also print bytes, seconds and throughput (MB/s) to stderr\n"
               "Exit: 0 all hashed, 1 a file could not be read, 2 usage.\n");
}

int td_verb_hash(int argc, char **argv)
{
    int bench = 0, threads = 0;
    const char **files = calloc((size_t)argc, sizeof *files);
    size_t n = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            free(files);
            return 0;
        } else if (!strcmp(argv[i], "--bench")) {
            bench = 1;
        } else if (!strcmp(argv[i], "--threads")) {
            const char *v = i + 1 < argc ? argv[++i] : "";
            char *end;
            errno = 0;
            long t = strtol(v, &end, 10);
            threads = (int)(t > 0 && t <= 64 ? t : 0);
            if (!v[0] || *end || errno || !threads) {
                fprintf(stderr, "tandem hash: --threads: expected an integer from 1 to 64, got '%s'\n", v);
                free(files);
                return 2;
            }
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "tandem hash: unknown option '%s'\n", argv[i]);
            usage(stderr);
            free(files);
            return 2;
        } else {
            files[n++] = argv[i];
        }
    }
    if (n == 0) {
        usage(stderr);
        free(files);
        return 2;
    }
    tl_hash_result *res = calloc(n, sizeof *res);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    tl_hash_files(files, n, res, threads);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    int rc = 0;
    unsigned long long total = 0;
    for (size_t i = 0; i < n; i++) {
        if (res[i].err) {
            fprintf(stderr, "%s: cannot read: %s\n", files[i], tl_strerror(res[i].err));
            rc = 1;
            continue;
        }
        print_line(res[i].hex, files[i]);
        total += res[i].bytes;
    }
    if (bench) {
        double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
        fprintf(stderr, "hash: %llu bytes in %zu file(s) in %.3f s = %.1f MB/s\n", total, n, s,
                s > 0 ? (double)total / s / 1e6 : 0.0);
    }
    free(res);
    free(files);
    return rc;
}
