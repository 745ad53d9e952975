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
#include "tl_opt.h"

#include <stdio.h>
#include <string.h>

static const tl_opt verify_opts[] = {
    { "staging", 0, TL_OPT_PATH, "DIR", 0, 0, "the staging to check against (overrides stagingDir); alone,\n"
      "verify only that staging" },
    { "players-from", 0, TL_OPT_PATH, "DIR", 0, 0, "apply the reuse rule: players in DIR are reusable for the\n"
      "staging DIR only if it verifies, its stagingHash equals every\n"
      "manifest's, and every binary matches" },
    { NULL, 0, 0, NULL, 0, 0, NULL }
};

static const tl_optspec verify_spec = {
    "tandem verify", "PLAYER_DIR [--staging DIR]\n"
    "tandem verify --staging DIR\n"
    "tandem verify --players-from PLAYERS_DIR --staging DIR",
    "Re-hash every file listed by the binary-manifest-*.json in PLAYER_DIR (or, if none,\n"
    "in its immediate subfolders), and the staging each manifest was built from (its\n"
    "recorded stagingDir, or --staging DIR) against its staging.json. Every mismatch is\n"
    "printed (changed, missing, extra, invalid) with the file it concerns. Files in a\n"
    "player folder not listed by any manifest there count as extra.",
    verify_opts, "Exit: 0 clean (or reusable), 1 any mismatch (or not reusable), 2 usage.", 0, 1
};

int td_verb_verify(int argc, char **argv)
{
    tl_optres o;
    int prc = tl_opt_parse(&verify_spec, argc, argv, &o);
    if (prc) { tl_opt_free(&o); return prc == TL_OPT_HELP ? 0 : 2; }
    const char *player = o.npos ? o.pos[0] : NULL, *staging = tl_opt_str(&o, "staging", NULL);
    const char *reuse = tl_opt_str(&o, "players-from", NULL);
    tl_opt_free(&o);
    if (player && !player[0]) {
        fprintf(stderr, "tandem verify: PLAYER_DIR: empty path\n");
        return 2;
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
        fprintf(stderr, "tandem verify: give PLAYER_DIR or --staging DIR (tandem verify --help)\n");
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
