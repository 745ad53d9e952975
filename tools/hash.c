/*
 * hash.c - `tandem hash`: SHA-256 of files in sha256sum's output format, through the
 * tool library (OpenSSL EVP, 1 MiB reads, files in parallel); --bench prints throughput.
 */
#include "tl_hash.h"
#include "tl_opt.h"
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

static const tl_opt hash_opts[] = {
    { "bench", 0, TL_OPT_FLAG, NULL, 0, 0, "also print bytes, seconds and throughput (MB/s) to stderr" },
    { "threads", 0, TL_OPT_INT, "N", 1, 64, "hashing threads (default one per CPU up to 8)" },
    { NULL, 0, 0, NULL, 0, 0, NULL }
};

static const tl_optspec hash_spec = {
    "tandem hash", "[--bench] [--threads N] FILE...",
    "Print \"<sha256>  <file>\" for each FILE (as sha256sum does). Files are hashed in\n"
    "parallel with 1 MiB reads.",
    hash_opts, "Exit: 0 all hashed, 1 a file could not be read, 2 usage.", 1, -1
};

int td_verb_hash(int argc, char **argv)
{
    tl_optres o;
    int prc = tl_opt_parse(&hash_spec, argc, argv, &o);
    if (prc) { tl_opt_free(&o); return prc == TL_OPT_HELP ? 0 : 2; }
    int bench = tl_opt_given(&o, "bench") > 0, threads = (int)tl_opt_int(&o, "threads", 0);
    size_t n = (size_t)o.npos;
    const char **files = calloc(n + 1, sizeof *files);
    for (size_t i = 0; i < n; i++) files[i] = o.pos[i];
    tl_opt_free(&o);
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
