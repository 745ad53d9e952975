/*
 * tl_out.c - --quiet and --json (see tl_out.h).
 */
#include "tl_out.h"

#include "tl_err.h"
#include "tl_fs.h"
#include "tl_json.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static cJSON *summary;
static int real_stdout = -1;   /* --json: the descriptor the summary goes to */

int tl_out_begin(const char *prog, int quiet, int json)
{
    if (quiet && json) {
        fprintf(stderr, "%s: --quiet and --json: give one (--json already keeps stdout to the summary)\n", prog);
        return 1;
    }
    fflush(stdout);
    if (json) {
        real_stdout = dup(1);
        summary = cJSON_CreateObject();
        const char *sp = strchr(prog, ' ');
        cJSON_AddStringToObject(summary, "verb", sp ? sp + 1 : prog);
        if (real_stdout < 0 || dup2(2, 1) < 0) { fprintf(stderr, "%s: --json: cannot redirect stdout\n", prog); return 1; }
    } else if (quiet) {
        int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (null < 0 || dup2(null, 1) < 0) { fprintf(stderr, "%s: --quiet: cannot redirect stdout\n", prog); return 1; }
        close(null);
    }
    return 0;
}

cJSON *tl_out_summary(void) { return summary; }

void tl_out_pick(const char *as, const char *path, const char *const *keys)
{
    cJSON *d = NULL;
    if (!summary || !tl_is_file(path) || tl_json_load(path, &d)) return;
    char *abs = tl_abspath(path);
    cJSON_AddStringToObject(summary, as, abs ? abs : path);
    free(abs);
    for (const char *const *k = keys; k && *k; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(d, *k);
        if (v && !cJSON_GetObjectItemCaseSensitive(summary, *k)) cJSON_AddItemToObject(summary, *k, cJSON_Duplicate(v, 1));
    }
    cJSON_Delete(d);
}

int tl_out_end(int rc)
{
    if (!summary) return rc;
    fflush(stdout);
    cJSON_AddNumberToObject(summary, "exitCode", rc);
    char *text = cJSON_PrintUnformatted(summary);
    if (text) {
        dprintf(real_stdout, "%s\n", text);
        free(text);
    }
    cJSON_Delete(summary);
    summary = NULL;
    close(real_stdout);
    real_stdout = -1;
    return rc;
}
