/*
 * common.c - the TU generator and helpers shared by both backends.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "backend.h"
/* The load check compares a module's header versions with this player's, so the player
 * takes them from the headers themselves (one source of truth). td_bench.h is the suites'
 * harness: its static helpers are unused here, and never emitted. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "td_bench.h"
#pragma GCC diagnostic pop

uint64_t td_backend_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void td_backend_functions_free(td_backend_function *v, size_t n)
{
    for (size_t i = 0; i < n; i++) free(v[i].name);
    free(v);
}

const td_backend *td_backend_find(const char *name)
{
    if (!name) return NULL;
    if (!strcmp(name, "aot")) return &td_backend_aot;
    if (!strcmp(name, "jit")) return &td_backend_jit;
    return NULL;
}

/* One header's version: the module's against this player's. The module's is 0 when its TU
 * never included that header (a suite without the bench harness): nothing to disagree on. */
static int abi_mismatch(const char *path, const char *what, uint32_t module_v, uint32_t player_v,
                        char *err, size_t errlen)
{
    if (module_v == player_v || (module_v == 0 && strcmp(what, "player") != 0)) return 0;
    snprintf(err, errlen,
             "module %s was built against %s ABI %u, this player speaks %s ABI %u "
             "(rebuild it from sources staged with this player's players/include)",
             path, what, module_v, what, player_v);
    return -1;
}

int td_backend_check_entry(const char *path, const td_player_module *m, char *err, size_t errlen)
{
    if (!m) {
        snprintf(err, errlen, "module %s has no '%s' entry table", path, TD_PLAYER_MODULE_SYMBOL);
        return -1;
    }
    /* abi_version is the first field in every version of the table: read it first, and
     * nothing else unless it matches (another version's layout may differ after it). */
    if (abi_mismatch(path, "player", m->abi_version, TD_PLAYER_ABI_VERSION, err, errlen)) return -1;
    if (m->size != sizeof(td_player_module) || !m->run_suite || !m->subject || !m->suites) {
        snprintf(err, errlen, "module %s: entry table is malformed (size %u, expected %zu)", path, m->size,
                 sizeof(td_player_module));
        return -1;
    }
    if (abi_mismatch(path, "td_subject.h", m->subject_abi, TD_SUBJECT_ABI_VERSION, err, errlen) ||
        abi_mismatch(path, "td_bench.h", m->bench_abi, TD_BENCH_ABI_VERSION, err, errlen))
        return -1;
    return 0;
}

int td_backend_include_dirs(const char *root, char **dirs, int max)
{
    static const char *const sub[] = { "", "/runtime/include", "/runtime/port", "/runtime/src",
                                       "/players/include" };
    int n = 0;
    for (size_t i = 0; i < sizeof sub / sizeof sub[0] && n < max; i++) {
        if (asprintf(&dirs[n], "%s%s", root, sub[i]) < 0) break;
        n++;
    }
    return n;
}

int td_backend_subject_libs(const char *root, const char *subject, char **libs, int max, char *err, size_t errlen)
{
    char path[4096], line[1024];
    if (!root || !subject) return 0;
    snprintf(path, sizeof path, "%s/players/subjects/%s/link.libs", root, subject);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        p[strcspn(p, "\r\n")] = 0;
        if (!*p || *p == '#') continue;
        if (n == max) {
            snprintf(err, errlen, "%s: more than %d libraries", path, max);
            for (int i = 0; i < n; i++) free(libs[i]);
            fclose(f);
            return -1;
        }
        if (!(libs[n] = strdup(p))) break;
        n++;
    }
    fclose(f);
    return n;
}

int td_backend_lib_is_name(const char *lib)
{
    return lib[0] != '/';
}

/* ---- the TU generator -------------------------------------------------------------- */

typedef struct td_strv {
    char **v;
    size_t n, cap;
} td_strv;

static int strv_push(td_strv *s, const char *str)
{
    if (s->n + 2 > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        char **v = realloc(s->v, cap * sizeof *v);
        if (!v) return -1;
        s->v = v;
        s->cap = cap;
    }
    if (!(s->v[s->n] = strdup(str))) return -1;
    s->n++;
    s->v[s->n] = NULL;
    return 0;
}

void td_tu_free_list(char **list)
{
    if (!list) return;
    for (char **p = list; *p; p++) free(*p);
    free(list);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int is_ident(const char *s)
{
    if (!s || !*s || (*s >= '0' && *s <= '9')) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return 0;
    return 1;
}

/* Entries of root/rel: want_dirs 1 -> subdirectories, 0 -> regular *.c files. Sorted
 * (byte order). Missing folder: 0 entries when optional, else -1. */
static int list_dir(const char *root, const char *rel, int want_dirs, int optional, td_strv *out,
                    char *err, size_t errlen)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    DIR *d = opendir(path);
    if (!d) {
        if (optional && errno == ENOENT) return 0;
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    td_strv tmp = { 0 };
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char full[4096];
        struct stat st;
        snprintf(full, sizeof full, "%s/%s", path, e->d_name);
        if (stat(full, &st) != 0) continue;
        if (want_dirs) {
            if (!S_ISDIR(st.st_mode)) continue;
        } else {
            size_t l = strlen(e->d_name);
            if (!S_ISREG(st.st_mode) || l < 3 || strcmp(e->d_name + l - 2, ".c") != 0) continue;
        }
        if (strv_push(&tmp, e->d_name)) { rc = -1; break; }
    }
    closedir(d);
    if (tmp.n) qsort(tmp.v, tmp.n, sizeof *tmp.v, cmp_str);
    for (size_t i = 0; rc == 0 && i < tmp.n; i++) {
        char item[4096];
        if (want_dirs) snprintf(item, sizeof item, "%s", tmp.v[i]);
        else snprintf(item, sizeof item, "%s/%s", rel, tmp.v[i]);
        if (strv_push(out, item)) rc = -1;
    }
    td_tu_free_list(tmp.v);
    if (rc) snprintf(err, errlen, "out of memory");
    return rc;
}

typedef struct td_buf {
    char *p;
    size_t n, cap;
    int oom;
} td_buf;

static void buf_printf(td_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void buf_printf(td_buf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        if (b->oom) return;
        va_start(ap, fmt);
        int k = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0) { b->oom = 1; return; }
        if (b->p && b->n + (size_t)k < b->cap) { b->n += (size_t)k; return; }
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + (size_t)k + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) { b->oom = 1; return; }
        b->p = p;
        b->cap = cap;
    }
}

/* ---- which sources use the runtime ---------------------------------------------------
 * A loader that compiles only some suites (TD_PLAYER_SUITES_CHOSEN) compiles the runtime
 * only when the subject or a chosen suite uses it. "Uses" is read from the sources: one of
 * their files includes, directly or through headers found under the root, a file of
 * runtime/include or runtime/src (the port layer, runtime/port, is header-only and every
 * module includes it through tandem_player.h). The scan reads #include lines only and
 * ignores conditionals, so it may see a use the preprocessor would skip (the runtime is then
 * compiled for nothing); an include it cannot resolve under the root (a system header) is no
 * use, one it cannot read (#include MACRO) counts as one. A source that declares runtime
 * functions itself, with no runtime header, is not seen: its JIT load then fails on the
 * undefined symbols. */

typedef struct rt_scan {
    char root[4096];                  /* realpath of the root */
    char *dirs[8];                    /* the include folders (td_backend_include_dirs) */
    int ndirs;
    td_strv seen;                     /* files already scanned (realpaths) */
} rt_scan;

static int path_under(const char *path, const char *root, const char *sub)
{
    size_t lr = strlen(root), ls = strlen(sub);
    return !strncmp(path, root, lr) && path[lr] == '/' && !strncmp(path + lr + 1, sub, ls) &&
           path[lr + 1 + ls] == '/';
}

/* 1: the file at realpath `path` uses the runtime; 0: it does not; -1: out of memory. */
static int rt_scan_file(rt_scan *sc, const char *path)
{
    if (path_under(path, sc->root, "runtime/include") || path_under(path, sc->root, "runtime/src")) return 1;
    for (size_t i = 0; i < sc->seen.n; i++)
        if (!strcmp(sc->seen.v[i], path)) return 0;
    if (strv_push(&sc->seen, path)) return -1;
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[4096], dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = 0;
    int uses = 0;
    while (!uses && fgets(line, sizeof line, f)) {
        const char *p = line + strspn(line, " \t");
        if (*p != '#') continue;
        p += 1 + strspn(p + 1, " \t");
        if (strncmp(p, "include", 7)) continue;
        p += 7 + strspn(p + 7, " \t");
        char close = *p == '"' ? '"' : *p == '<' ? '>' : 0;
        const char *end = close ? strchr(p + 1, close) : NULL;
        if (!end) { uses = 1; break; }      /* #include MACRO: cannot tell */
        char name[1024], cand[8192], real[4096];
        snprintf(name, sizeof name, "%.*s", (int)(end - p - 1), p + 1);
        /* "name": the including file's folder first; then the include folders in order. */
        for (int d = close == '"' ? -1 : 0; d < sc->ndirs; d++) {
            snprintf(cand, sizeof cand, "%s/%s", d < 0 ? dir : sc->dirs[d], name);
            if (!realpath(cand, real)) continue;
            uses = rt_scan_file(sc, real);
            break;
        }
    }
    fclose(f);
    return uses;
}

/* 1 when a file of `list` (root-relative), from index `from` on, uses the runtime. */
static int rt_scan_files(rt_scan *sc, char *const *list, size_t from, size_t to)
{
    char cand[8192], real[4096];
    td_tu_free_list(sc->seen.v);
    memset(&sc->seen, 0, sizeof sc->seen);
    for (size_t i = from; i < to; i++) {
        snprintf(cand, sizeof cand, "%s/%s", sc->root, list[i]);
        if (!realpath(cand, real)) continue;
        int r = rt_scan_file(sc, real);
        if (r) return r;
    }
    return 0;
}

void td_tu_file_name(const char *subject, char *buf, size_t len)
{
    snprintf(buf, len, "tandem-player-%s.c", subject ? subject : "none");
}

/* ---- layouts -------------------------------------------------------------------------
 * Before each source of the unit: TD_LAYOUT_FILE_START(lines, id) (players/include/
 * td_layout.h: 64-byte alignment under tcc, which aligns nothing itself, and a pad of `lines`
 * cache lines on both compilers). The order of the sources is never shuffled: in one unit a
 * source may rely on what an earlier one declared, and a pad moves the code as far without
 * changing what is compiled. */

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

unsigned td_layout_lines(uint64_t seed, unsigned id)
{
    return seed ? (unsigned)(splitmix64(seed + (uint64_t)(id + 1) * 0x9E3779B97F4A7C15ull) % 64) : 0;
}

uint64_t td_layout_unit_seed(uint64_t seed, const char *label)
{
    if (!seed) return 0;
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a of the label */
    for (const unsigned char *c = (const unsigned char *)label; *c; c++) h = (h ^ *c) * 0x100000001b3ull;
    uint64_t s = splitmix64(seed ^ h) & TD_LAYOUT_SEED_MAX;
    return s ? s : 1;
}

uint64_t td_layout_seed_derive(uint64_t attempt_seed, unsigned k)
{
    if (!k) return 0;
    uint64_t s = splitmix64(attempt_seed + k) & TD_LAYOUT_SEED_MAX;
    return s ? s : 1;
}

#define TD_LAYOUT_LINE "TD_LAYOUT_FILE_START("
#define TD_SUBJECT_LINE "\n#define TD_PLAYER_SUBJECT \""

/* The label a generated unit reports (its TD_PLAYER_SUBJECT line) into buf; 0, or -1. */
static int tu_label_of(const char *text, char *buf, size_t len)
{
    const char *p = strstr(text, TD_SUBJECT_LINE), *end;
    if (!p) return -1;
    p += strlen(TD_SUBJECT_LINE);
    end = strchr(p, '"');
    if (!end || end == p || (size_t)(end - p) >= len || memchr(p, '\n', (size_t)(end - p))) return -1;
    memcpy(buf, p, (size_t)(end - p));
    buf[end - p] = 0;
    return 0;
}

int td_tu_relayout(const char *text, uint64_t seed, char **out)
{
    td_buf b = { 0 };
    int seen = 0;
    char label[128];
    *out = NULL;
    if (tu_label_of(text, label, sizeof label)) return -1;
    uint64_t unit_seed = td_layout_unit_seed(seed, label);
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p + 1) : strlen(p);
        unsigned lines, id;
        int end = 0;
        if (!strncmp(p, TD_LAYOUT_LINE, strlen(TD_LAYOUT_LINE)) &&
            sscanf(p, TD_LAYOUT_LINE "%u, %u)%n", &lines, &id, &end) == 2 && end > 0 && (p[end] == '\n' || !p[end])) {
            buf_printf(&b, TD_LAYOUT_LINE "%u, %u)%s", td_layout_lines(unit_seed, id), id, p[end] ? "\n" : "");
            seen++;
        } else {
            buf_printf(&b, "%.*s", (int)len, p);
        }
        p += len;
    }
    if (b.oom || !seen) {
        free(b.p);
        return -1;
    }
    *out = b.p;
    return 0;
}

/* What td_tu_generate collects before it writes the unit: the sources in unit order (the
 * runtime's, files[0 .. nruntime); the subject's, up to nsubject; then each suite's, suite i
 * ending at suite_end[i]) and who needs the runtime. */
typedef struct tu_gen {
    const td_tu_spec *spec;
    const char *label;
    td_strv files, suites, rt_suites;
    size_t *suite_end;          /* files[suite_end[i - 1] .. suite_end[i]): suite i */
    size_t nruntime, nsubject;
    int subject_rt;             /* the subject uses the runtime: always compiled */
    uint64_t unit_seed;         /* the pads' seed: td_layout_unit_seed(spec->layout_seed, label) */
    td_buf b;
} tu_gen;

/* The subject's name and label are C identifiers / plain names (they go into C string
 * literals). 0, or -1 with the reason. */
static int tu_check_names(tu_gen *g, char *err, size_t errlen)
{
    const td_tu_spec *spec = g->spec;
    if (!is_ident(spec->subject)) {
        snprintf(err, errlen, "subject name '%s' is not a C identifier", spec->subject ? spec->subject : "");
        return -1;
    }
    const char *label = spec->label ? spec->label : spec->subject;
    if (!*label || strlen(label) > TD_TU_LABEL_MAX ||
        strspn(label, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@.-") != strlen(label)) {
        snprintf(err, errlen, "subject label '%s' is not 1..%d of [A-Za-z0-9_@.-]", label, TD_TU_LABEL_MAX);
        return -1;
    }
    g->label = label;
    g->unit_seed = td_layout_unit_seed(spec->layout_seed, label);
    return 0;
}

/* The suites: the spec's (sorted, each once) or every folder of players/suites. */
static int tu_list_suites(tu_gen *g, char *err, size_t errlen)
{
    const td_tu_spec *spec = g->spec;
    if (!spec->suites)
        return list_dir(spec->root, "players/suites", 1, 1, &g->suites, err, errlen);
    for (const char *const *s = spec->suites; *s; s++)
        if (strv_push(&g->suites, *s)) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    if (g->suites.n) qsort(g->suites.v, g->suites.n, sizeof *g->suites.v, cmp_str);
    for (size_t i = 1; i < g->suites.n; i++)
        if (!strcmp(g->suites.v[i - 1], g->suites.v[i])) {
            snprintf(err, errlen, "suite '%s' named twice", g->suites.v[i]);
            return -1;
        }
    return 0;
}

/* The sources in unit order: the runtime's (unless spec->no_runtime), the subject's, each
 * suite's (a suite without a .c file is refused). */
static int tu_collect_sources(tu_gen *g, char *err, size_t errlen)
{
    const td_tu_spec *spec = g->spec;
    char rel[4096], p[4096];
    struct stat st;
    if (!spec->no_runtime && list_dir(spec->root, "runtime/src", 0, 0, &g->files, err, errlen)) return -1;
    g->nruntime = g->files.n;
    snprintf(rel, sizeof rel, "players/subjects/%s", spec->subject);
    snprintf(p, sizeof p, "%s/%s", spec->root, rel);
    if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "no subject folder %s", p);
        return -1;
    }
    if (list_dir(spec->root, rel, 0, 0, &g->files, err, errlen)) return -1;
    g->nsubject = g->files.n;
    if (tu_list_suites(g, err, errlen)) return -1;
    if (!(g->suite_end = calloc(g->suites.n + 1, sizeof *g->suite_end))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < g->suites.n; i++) {
        if (!is_ident(g->suites.v[i])) {
            snprintf(err, errlen, "suite name '%s' is not a C identifier", g->suites.v[i]);
            return -1;
        }
        snprintf(rel, sizeof rel, "players/suites/%s", g->suites.v[i]);
        size_t before = g->files.n;
        if (list_dir(spec->root, rel, 0, 0, &g->files, err, errlen)) return -1;
        if (g->files.n == before) {
            snprintf(err, errlen, "suite folder %s/%s has no .c files", spec->root, rel);
            return -1;
        }
        g->suite_end[i] = g->files.n;
    }
    return 0;
}

/* Who needs the runtime: the subject (then always), else the suites that use it (their
 * includes scanned). 0, or -1 out of memory. */
static int tu_runtime_users(tu_gen *g)
{
    if (!g->nruntime) return 0;
    rt_scan sc = { .ndirs = 0 };
    if (!realpath(g->spec->root, sc.root)) snprintf(sc.root, sizeof sc.root, "%s", g->spec->root);
    sc.ndirs = td_backend_include_dirs(sc.root, sc.dirs, 8);
    int r = rt_scan_files(&sc, g->files.v, g->nruntime, g->nsubject);
    g->subject_rt = r != 0;
    for (size_t i = 0; r >= 0 && !g->subject_rt && i < g->suites.n; i++) {
        r = rt_scan_files(&sc, g->files.v, i ? g->suite_end[i - 1] : g->nsubject, g->suite_end[i]);
        if (r > 0 && strv_push(&g->rt_suites, g->suites.v[i])) r = -1;
    }
    td_tu_free_list(sc.seen.v);
    for (int d = 0; d < sc.ndirs; d++) free(sc.dirs[d]);
    return r < 0 ? -1 : 0;
}

/* The unit's opening comment, the subject's defines and the suites chosen by default. */
static void tu_write_header(tu_gen *g)
{
    const td_tu_spec *spec = g->spec;
    td_buf *b = &g->b;
    char tuname[256];
    td_tu_file_name(spec->subject, tuname, sizeof tuname);
    buf_printf(b,
               "/* %s - generated by `tandem build`; do not edit.\n"
               " * ONE translation unit: %s, subject '%s', suites:",
               tuname, spec->no_runtime ? "no runtime" : "the runtime", spec->subject);
    for (size_t i = 0; i < g->suites.n; i++) buf_printf(b, " %s", g->suites.v[i]);
    buf_printf(b, "%s.\n", g->suites.n ? "" : " (none)");
    buf_printf(b,
               " * Both backends compile exactly this file. Includes are relative to the source\n"
               " * root (-I<root>); the module/host ABI is players/include/tandem_player.h.\n"
               " * A loader may compile fewer suites: it defines TD_PLAYER_SUITES_CHOSEN and\n"
               " * TD_PLAYER_SUITE_<suite> for each suite it wants (the JIT player: the one it\n"
               " * runs)%s. */\n"
               "#ifndef _GNU_SOURCE\n#define _GNU_SOURCE\n#endif\n"
               "#define TD_PLAYER_SUBJECT \"%s\"\n#define TD_PLAYER_SUBJECT_%s 1\n",
               !g->nruntime ? "" : g->subject_rt ? "; the runtime is always compiled: the subject uses it"
                                                 : "; the runtime then only with a suite that uses it",
               g->label, spec->subject);
    buf_printf(b, "#include \"td_layout.h\"\n");
    buf_printf(b, "#ifndef TD_PLAYER_SUITES_CHOSEN\n");
    for (size_t i = 0; i < g->suites.n; i++) buf_printf(b, "#define TD_PLAYER_SUITE_%s 1\n", g->suites.v[i]);
    buf_printf(b, "#endif\n\n");
}

/* One source of the unit, its layout line first (td_layout.h; the pad from the seed). */
static void tu_write_source(tu_gen *g, size_t k)
{
    buf_printf(&g->b, TD_LAYOUT_LINE "%u, %zu)\n#include \"%s\"\n",
               td_layout_lines(g->unit_seed, (unsigned)k), k, g->files.v[k]);
}

/* The sources: the runtime's (only with a suite that uses it unless the subject does), the
 * subject's, each suite's under its TD_PLAYER_SUITE_ guard. */
static void tu_write_sources(tu_gen *g)
{
    td_buf *b = &g->b;
    if (g->nruntime && !g->subject_rt) {
        buf_printf(b, "#if !defined(TD_PLAYER_SUITES_CHOSEN)");
        for (size_t i = 0; i < g->rt_suites.n; i++) buf_printf(b, " || defined(TD_PLAYER_SUITE_%s)", g->rt_suites.v[i]);
        buf_printf(b, "\n");
    }
    for (size_t i = 0; i < g->nruntime; i++) tu_write_source(g, i);
    if (g->nruntime && !g->subject_rt) buf_printf(b, "#endif\n");
    for (size_t i = g->nruntime; i < g->nsubject; i++) tu_write_source(g, i);
    for (size_t i = 0; i < g->suites.n; i++) {
        buf_printf(b, "#ifdef TD_PLAYER_SUITE_%s\n", g->suites.v[i]);
        for (size_t k = i ? g->suite_end[i - 1] : g->nsubject; k < g->suite_end[i]; k++) tu_write_source(g, k);
        buf_printf(b, "#endif\n");
    }
}

/* The module's registration: the suites compiled in, their dispatch, the ABI versions the
 * sources included and the exported module record. */
static void tu_write_registration(tu_gen *g)
{
    td_buf *b = &g->b;
    const td_strv *su = &g->suites;
    buf_printf(b,
               "\n/* ---- registration: the suites compiled in ---- */\n"
               "#include \"tandem_player.h\"\n\n");
    for (size_t i = 0; i < su->n; i++)
        buf_printf(b, "#ifdef TD_PLAYER_SUITE_%s\nint td_suite_%s(const td_player_host *host, void *ctx);\n#endif\n",
                   su->v[i], su->v[i]);
    buf_printf(b, "\nstatic const char *const td_player_suite_names[] = {\n");
    for (size_t i = 0; i < su->n; i++)
        buf_printf(b, "#ifdef TD_PLAYER_SUITE_%s\n    \"%s\",\n#endif\n", su->v[i], su->v[i]);
    buf_printf(b, "    NULL\n};\n\n");
    buf_printf(b,
               "static int td_player_run_suite(const char *suite, const td_player_host *host, void *ctx)\n"
               "{\n"
               "    if (!suite || !host || host->abi_version != TD_PLAYER_ABI_VERSION ||\n"
               "        host->size < sizeof(td_player_host))\n"
               "        return TD_PLAYER_E_ABI;\n");
    for (size_t i = 0; i < su->n; i++)
        buf_printf(b,
                   "#ifdef TD_PLAYER_SUITE_%s\n"
                   "    if (td_player_name_is(suite, \"%s\")) return td_suite_%s(host, ctx);\n"
                   "#endif\n",
                   su->v[i], su->v[i], su->v[i]);
    buf_printf(b,
               "    return TD_PLAYER_E_NO_SUITE;\n"
               "}\n\n"
               /* The versions of the ABI headers the sources above included (0: not
                * included), checked by the player at load. */
               "#ifdef TD_SUBJECT_ABI_VERSION\n#define TD_PLAYER_TU_SUBJECT_ABI TD_SUBJECT_ABI_VERSION\n"
               "#else\n#define TD_PLAYER_TU_SUBJECT_ABI 0u\n#endif\n"
               "#ifdef TD_BENCH_ABI_VERSION\n#define TD_PLAYER_TU_BENCH_ABI TD_BENCH_ABI_VERSION\n"
               "#else\n#define TD_PLAYER_TU_BENCH_ABI 0u\n#endif\n\n"
               /* The label in an array of one size whatever its length: tcc puts the
                * unit's zero-initialised data right after its data, so a longer label
                * would move all of it, and the baseline "tandem@rev" would not be laid out
                * like the identical "tandem" (issue 42). */
               "/* One size for every label, so that the data after it does not move. */\n"
               "static const char td_player_label[%d] = \"%s\";\n\n"
               "TD_PLAYER_EXPORT const td_player_module tandem_player_module = {\n"
               "    TD_PLAYER_ABI_VERSION, sizeof(td_player_module), td_player_label, TD_PLAYER_COMPILER,\n"
               "    td_player_suite_names, td_player_run_suite,\n"
               "    TD_PLAYER_TU_SUBJECT_ABI, TD_PLAYER_TU_BENCH_ABI\n"
               "};\n",
               TD_TU_LABEL_MAX + 1, g->label);
}

int td_tu_generate(const td_tu_spec *spec, char **text, char ***included, char *err, size_t errlen)
{
    tu_gen g = { .spec = spec };
    int rc = -1;

    *text = NULL;
    if (included) *included = NULL;
    if (tu_check_names(&g, err, errlen))
        return -1;
    if (tu_collect_sources(&g, err, errlen))
        goto out;
    if (tu_runtime_users(&g))
        goto oom;
    tu_write_header(&g);
    tu_write_sources(&g);
    tu_write_registration(&g);
    if (g.b.oom) goto oom;
    if (strv_push(&g.files, "players/include/tandem_player.h")) goto oom;
    *text = g.b.p;
    g.b.p = NULL;
    if (included) {
        *included = g.files.v;
        g.files.v = NULL;
    }
    rc = 0;
    goto out;
oom:
    snprintf(err, errlen, "out of memory");
out:
    free(g.b.p);
    td_tu_free_list(g.files.v);
    td_tu_free_list(g.suites.v);
    td_tu_free_list(g.rt_suites.v);
    free(g.suite_end);
    return rc;
}

#ifdef TD_ASAN_BUILD
static void *backend_kept[256];
static int backend_nkept;

int td_backend_keep_loaded(void *handle)
{
    if (backend_nkept >= (int)(sizeof backend_kept / sizeof backend_kept[0]))
        return -1;
    backend_kept[backend_nkept++] = handle;
    return 0;
}
#endif
