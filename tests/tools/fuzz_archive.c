/* libFuzzer target for the archive reader (tl_archive_extract: format detection, the
 * pre-check pass, the extraction limits, the secure extraction itself). Each input is
 * written to a file in a private temporary folder and extracted into a subfolder there,
 * under small limits so a bomb costs milliseconds; the folder is removed after every
 * input, so a long run leaves nothing behind. Built only when clang -fsanitize=fuzzer
 * works (tests/tools/CMakeLists.txt). */
#include "tl_archive.h"
#include "tl_err.h"
#include "tl_fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char root[4096];

static void cleanup(void)
{
    if (root[0]) tl_rm_rf(root);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char sink[256];
    tl_err_capture(sink, sizeof sink, 1); /* keep the fuzzer's output quiet */
    if (!root[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(root, sizeof root, "%s/tl-fuzz-archive.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(root)) abort();
        atexit(cleanup);
    }
    char in[4200], out[4200];
    snprintf(in, sizeof in, "%s/in.bin", root);
    snprintf(out, sizeof out, "%s/out", root);
    int fd = open(in, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) abort();
    for (size_t off = 0; off < size;) {
        ssize_t w = write(fd, data + off, size - off);
        if (w <= 0) abort();
        off += (size_t)w;
    }
    close(fd);
    tl_extract_limits lim;
    tl_extract_limits_default(&lim);
    lim.max_total = 8u << 20; /* small: a bomb is refused after a few MiB, not 4 GiB */
    lim.max_entry = 4u << 20;
    (void)tl_archive_extract(in, out, &lim);
    /* whatever happened, nothing may have been written beside out/ (a name that escaped
     * the target folder by one level lands here): a finding, not a quiet pass */
    DIR *d = opendir(root);
    if (!d) abort();
    for (struct dirent *e; (e = readdir(d));) {
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "in.bin") &&
            strcmp(e->d_name, "out")) {
            fprintf(stderr, "fuzz_archive: '%s' written outside the extraction folder\n", e->d_name);
            abort();
        }
    }
    closedir(d);
    tl_rm_rf(out);
    return 0;
}
