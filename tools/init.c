/*
 * init.c - `tandem init DIR`: a starting project that runs end to end at once.
 *
 * It writes DIR/tandem.json and one subject, bench/NAME/NAME_subject.c, implementing
 * players/include/td_subject.h with every workload NULL and an na_reason: a quick attempt
 * then gives a verdict where every row of the new subject is NA ("not implemented yet"),
 * and each workload the user fills in becomes a row measured on both backends. The
 * library's own folders (src/, include/) are used when they exist; otherwise a one-file
 * placeholder library is written so that the project stages and compiles.
 */
#include "tl_err.h"
#include "tl_fs.h"
#include "tl_opt.h"
#include "tl_project.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const tl_opt init_opts[] = {
    { "name", 0, TL_OPT_STR, "NAME", 0, 0, "the library's subject name, a C identifier (default: DIR's name,\n"
      "made one: other characters become '_')" },
    { NULL, 0, 0, NULL, 0, 0, NULL }
};

static const tl_optspec init_spec = {
    "tandem init", "DIR [--name NAME]",
    "Write a starting project into DIR (created if missing): tandem.json naming the library\n"
    "(src/, include/), its subject bench/NAME/NAME_subject.c, the peers callback (the lower\n"
    "bound) and fcontext from Tandem's tree, and the primary suite. Every workload of the\n"
    "subject is NULL with an na_reason, so `tandem attempt --project DIR --quick` runs at\n"
    "once and gives a verdict whose rows are all NA: rows not yet implemented. Fill in a\n"
    "workload (players/include/td_subject.h says what each computes) and its row is measured\n"
    "on both backends.",
    init_opts,
    "Refuses a DIR that already holds tandem.json or the subject file. Exit: 0 written, 1\n"
    "refused or failed, 2 usage.",
    1, 1
};

/* NAME from the folder's last component: a C identifier of at most 40 characters. */
static void derive_name(const char *dir, char *name, size_t len)
{
    char *abs = tl_abspath(dir);
    const char *base = abs && strrchr(abs, '/') ? strrchr(abs, '/') + 1 : dir;
    size_t k = 0;
    if (isdigit((unsigned char)base[0])) name[k++] = '_';
    for (const char *c = base; *c && k + 1 < len && k < 40; c++)
        name[k++] = isalnum((unsigned char)*c) ? (char)tolower((unsigned char)*c) : '_';
    name[k] = 0;
    if (!k) snprintf(name, len, "mylib");
    free(abs);
}

static int is_ident(const char *s)
{
    if (!s[0] || isdigit((unsigned char)s[0]) || strlen(s) > 40) return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_') return 0;
    return 1;
}

static int write_new(const char *dir, const char *rel, const char *text)
{
    char *p = tl_join(dir, rel);
    int rc = 0;
    if (tl_is_file(p)) { tl_error(p, NULL, "refused: already exists"); rc = 1; }
    else if (tl_mkdirs_parent(p) || tl_write_atomic(p, text, strlen(text), 0644)) {
        tl_error(p, NULL, "cannot write");
        rc = 1;
    }
    free(p);
    return rc;
}

static const char subject_fmt[] =
    "/*\n"
    " * %1$s_subject.c - %1$s's workloads for Tandem's benchmark suites (written by `tandem init`).\n"
    " *\n"
    " * This file implements players/include/td_subject.h (Tandem's tree) for the library in\n"
    " * src/ and include/. Every workload below is NULL for now, so every row of %1$s is NA\n"
    " * with the reason in na_reason: rows not yet implemented. Fill one in, with the idioms\n"
    " * of your library, and its row is timed and validated on both backends (clang AOT and\n"
    " * libtcc JIT) against the peers. For instance the row \"Async method completed\n"
    " * get-result\" (n operations that complete at once; returns how many succeeded):\n"
    " *\n"
    " *     static int64_t %1$s_method_completed_get(uint32_t n)\n"
    " *     {\n"
    " *         int64_t ok = 0;\n"
    " *         for (uint32_t i = 0; i < n; i++) ok += (your library's operation, done) == 1;\n"
    " *         return ok;\n"
    " *     }\n"
    " *     ... and `.method_completed_get = %1$s_method_completed_get,` in the table.\n"
    " * (The rows \"Completed get-result\", \"FromResult<int> get-result\" and the bare NextFrame\n"
    " * rows are report-only against fcontext, which runs lower-bound code there.)\n"
    " *\n"
    " * Frame waits need wait_schedule, frame, wait_pending and wait_get together; gates need\n"
    " * the five gates_* entries; throughput the three loops_* entries; cancellation the four\n"
    " * cancel_* entries (races: race_start and race_get). The whole subject is\n"
    " * compiled into one translation unit with the suites: prefix static names with %1$s_.\n"
    " */\n"
    "#include <stdint.h>\n"
    "\n"
    "#include \"td_subject.h\"\n"
    "/* Your library's headers: include/ is on the include path. */\n"
    "\n"
    "/* Once per process, before any workload: set up the library's preallocated state\n"
    " * (0 when ready). */\n"
    "static int %1$s_subject_init(void)\n"
    "{\n"
    "    return 0;\n"
    "}\n"
    "\n"
    "const td_subject_ops td_subject = {\n"
    "    .name = \"%1$s\",\n"
    "    .kind = \"callbacks\",\n"
    "    .init = %1$s_subject_init,\n"
    "    .na_reason = \"not implemented yet (bench/%1$s/%1$s_subject.c)\",\n"
    "};\n";

static const char header_fmt[] =
    "/* %1$s.h - the library measured by Tandem (a placeholder written by `tandem init`). */\n"
    "#ifndef %1$s_H\n#define %1$s_H\n\n"
    "/* 0 when the library is ready. */\n"
    "int %1$s_init(void);\n\n#endif\n";

static const char source_fmt[] =
    "/* %1$s.c - the library measured by Tandem (a placeholder written by `tandem init`):\n"
    " * replace it with your sources, or point runtime.sources in tandem.json at them. */\n"
    "#include \"%1$s.h\"\n\n"
    "int %1$s_init(void)\n{\n    return 0;\n}\n";

static const char project_fmt[] =
    "{\n"
    "  \"tandemProject\": %2$d,\n"
    "  \"name\": \"%1$s\",\n"
    "  \"runtime\": { \"sources\": \"src\", \"include\": \"include\" },\n"
    "  \"subjects\": {\n"
    "    \"%1$s\": { \"folder\": \"bench/%1$s\" },\n"
    "    \"fcontext\": { \"folder\": \"@tandem/players/subjects/fcontext\", \"link\": [\"boost_context\"] },\n"
    "    \"callback\": { \"folder\": \"@tandem/players/subjects/callback\" }\n"
    "  },\n"
    "  \"suites\": { \"primary\": \"@tandem/players/suites/primary\" },\n"
    "  \"gate\": {\n"
    "    \"subject\": \"%1$s\",\n"
    "    \"peers\": [\"fcontext\"],\n"
    "    \"lowerBound\": \"callback\",\n"
    "    \"gatedSuites\": [\"primary\"]\n"
    "  },\n"
    "  \"attempt\": { \"rounds\": 3, \"samples\": 8, \"backends\": [\"aot\", \"jit\"] }\n"
    "}\n";

int td_verb_init(int argc, char **argv)
{
    tl_optres o;
    int prc = tl_opt_parse(&init_spec, argc, argv, &o);
    if (prc) { tl_opt_free(&o); return prc == TL_OPT_HELP ? 0 : 2; }
    const char *dir = o.pos[0];
    char name[64];
    const char *given = tl_opt_str(&o, "name", NULL);
    if (given) snprintf(name, sizeof name, "%s", given);
    else derive_name(dir, name, sizeof name);
    if (!is_ident(name)) {
        tl_opt_fail(&o, "--name", "'%s' is not a C identifier of at most 40 characters", name);
        tl_opt_free(&o);
        return 2;
    }
    int rc = 1;
    char *pf = tl_join(dir, TL_PROJECT_FILE);
    char *src = tl_join(dir, "src"), *inc = tl_join(dir, "include");
    char *text = NULL, rel[256];
    if (tl_is_file(pf)) { tl_error(pf, NULL, "refused: a project is already there"); goto done; }
    if (tl_mkdirs(dir)) { tl_error(dir, NULL, "cannot create the folder"); goto done; }
    /* an existing library keeps its folders; an empty one gets a placeholder to compile */
    if (!tl_is_dir(src)) {
        snprintf(rel, sizeof rel, "src/%s.c", name);
        if (asprintf(&text, source_fmt, name) < 0 || write_new(dir, rel, text)) goto done;
        free(text);
        text = NULL;
    }
    if (!tl_is_dir(inc)) {
        snprintf(rel, sizeof rel, "include/%s.h", name);
        if (asprintf(&text, header_fmt, name) < 0 || write_new(dir, rel, text)) goto done;
        free(text);
        text = NULL;
    }
    snprintf(rel, sizeof rel, "bench/%s/%s_subject.c", name, name);
    if (asprintf(&text, subject_fmt, name) < 0 || write_new(dir, rel, text)) goto done;
    free(text);
    text = NULL;
    if (asprintf(&text, project_fmt, name, TL_PROJECT_SCHEMA) < 0 || write_new(dir, TL_PROJECT_FILE, text)) goto done;
    printf("tandem init: wrote %s and %s/%s (subject '%s': every row NA until you fill in a workload)\n"
           "next: tandem attempt --project %s --quick\n", pf, dir, rel, name, dir);
    rc = 0;
done:
    free(text);
    free(pf);
    free(src);
    free(inc);
    tl_opt_free(&o);
    return rc;
}
