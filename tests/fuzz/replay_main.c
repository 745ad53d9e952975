/*
 * replay_main.c - run corpus files (or every file of the directories given) through the same
 * executor as the fuzz target, so the corpus replays on any compiler (tcc included).
 * Exit 0 when every input ran without a mismatch; a mismatch aborts (task_ops.h).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "task_ops.h"

static int replay_file(const char *path)
{
    static uint8_t buf[TF_MAX_OPS * TF_OP_BYTES];
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 1;
    }
    size_t n = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    return tf_run(buf, n, 0) != 0;
}

/* The files of a directory, in name order (a stable report). */
static int replay_dir(const char *dir, int *count)
{
    struct dirent **names;
    int n = scandir(dir, &names, NULL, alphasort);
    if (n < 0) {
        fprintf(stderr, "replay: cannot read %s\n", dir);
        return 1;
    }
    int failed = 0;
    char path[4096];
    for (int i = 0; i < n; i++) {
        if (names[i]->d_name[0] != '.') {
            snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
            failed |= replay_file(path);
            (*count)++;
        }
        free(names[i]);
    }
    free(names);
    return failed;
}

int main(int argc, char **argv)
{
    int failed = 0, count = 0;
    for (int i = 1; i < argc; i++) {
        struct stat sb;
        if (stat(argv[i], &sb) == 0 && S_ISDIR(sb.st_mode)) {
            failed |= replay_dir(argv[i], &count);
        } else {
            failed |= replay_file(argv[i]);
            count++;
        }
    }
    if (count == 0) {
        fprintf(stderr, "replay: no input (usage: %s FILE|DIR...)\n", argv[0]);
        return 2;
    }
    printf("replay: %d input(s), %s\n", count, failed ? "FAILED" : "all passed");
    return failed;
}
