/*
 * verify.c - `tandem verify`: re-hash players against their binary manifests and the
 * staging they were built from; the reuse rule.
 *
 * Where the staging is: each manifest records the absolute "stagingDir" it was built
 * from; `--staging DIR` overrides it (e.g. after moving a folder, or to test reuse
 * against a new staging).
 */
#include "tl_err.h"
#include "tl_fs.h"
#include "tl_manifest.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *o)
{
    fprintf(o, "usage: tandem verify PLAYER_DIR [--staging DIR]\n"
               "       tandem verify --staging DIR\n"
               "       tandem verify --players-from PLAYERS_DIR --staging DIR\n"
               "\n"
               "Re-hash every file listed by the binary-manifest-*.json in PLAYER_DIR (or, if none,\n"
               "in its immediate subfolders), and the staging each manifest was built from (its\n"
               "recorded stagingDir, or --staging DIR) against its staging.json. Every mismatch is\n"
               "printed (changed, missing, extra, invalid) with the file it concerns. Files in a\n"
               "player folder not listed by any manifest there count as extra.\n"
               "\n"
               "  --staging DIR        the staging to check against (overrides stagingDir); alone,\n"
               "                       verify only that staging\n"
               "  --players-from DIR   apply the reuse rule: players in DIR are reusable for the\n"
               "                       staging DIR only if it verifies, its stagingHash equals every\n"
               "                       manifest's, and every binary matches\n"
               "\n"
               "Exit: 0 clean (or reusable), 1 any mismatch (or not reusable), 2 usage.\n");
}

int td_verb_verify(int argc, char **argv)
{
    const char *player = NULL, *staging = NULL, *reuse = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--staging") || !strcmp(a, "--players-from")) {
            if (i + 1 >= argc || !argv[i + 1][0]) {
                fprintf(stderr, "tandem verify: %s needs a value\n", a);
                usage(stderr);
                return 2;
            }
            if (!strcmp(a, "--staging"))
                staging = argv[++i];
            else
                reuse = argv[++i];
        } else if (a[0] == '-') {
            fprintf(stderr, "tandem verify: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        } else if (!player) {
            player = a;
        } else {
            fprintf(stderr, "tandem verify: one PLAYER_DIR only ('%s')\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (reuse) {
        if (!staging || player) {
            fprintf(stderr, "tandem verify: --players-from needs --staging DIR and no PLAYER_DIR\n");
            return 2;
        }
        char why[2048];
        int ok = tl_players_reusable(reuse, staging, why, sizeof why);
        printf("%s\n", why);
        return ok ? 0 : 1;
    }
    if (!player && !staging) {
        usage(stderr);
        return 2;
    }
    tl_report rep = { stdout, NULL, NULL, 0, 0 };
    int nman = 0;
    if (player) {
        tl_players_verify(player, staging, &rep, &nman);
        printf("verify %s: %d manifest(s), %u mismatch(es)\n", player, nman, rep.count);
    } else {
        tl_staging st;
        memset(&st, 0, sizeof st);
        tl_staging_verify(staging, &st, &rep);
        if (rep.count == 0)
            printf("verify staging %s: %zu files, stagingHash %s, clean\n", staging, st.nfiles, st.staging_hash);
        else
            printf("verify staging %s: %u mismatch(es)\n", staging, rep.count);
        tl_staging_free(&st);
    }
    return rep.count ? 1 : 0;
}
